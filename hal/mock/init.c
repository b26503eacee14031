// SPDX-License-Identifier: MIT
/*
 * hal/mock/init.c - a mock instance put together: its three tables (nic.c, host.c,
 * gpu.c) over the state, call log and fault injection of mock.c. The top of the
 * folder's stack: nothing here is called by the files below it.
 */
#include <unistd.h>

#include "priv.h"

int dvx_mock_init(struct dvx_mock *m)
{
	if (!m)
		return -EINVAL;
	memset(m, 0, sizeof(*m));
	m->hal.nic = &dvx_mock_nic_ops;
	m->hal.host = &dvx_mock_host_ops;
	m->hal.gpu = &dvx_mock_gpu_ops;
	m->hal.ctx = m;
	m->hal.name = "mock";
	m->limits.memlock_cur = UINT64_MAX;
	m->limits.memlock_max = UINT64_MAX;
	m->limits.page_size = 4096;
	m->next_id = 0x100;
	dvx_mockp_copy_str(m->ident.hostname, sizeof(m->ident.hostname), "mock");
	memset(m->ident.boot_id, 0x6d, sizeof(m->ident.boot_id));
	m->ident.pid = (int32_t)getpid();
	m->ident.uid = (uint32_t)geteuid();
	return 0;
}
