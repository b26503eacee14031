// SPDX-License-Identifier: MIT
/*
 * tests/lib/sim_trace.c - print the sim's trace with the mlx5 decoder.
 */
#include <errno.h>
#include <string.h>

#include <dvx/mlx5/cqe.h>
#include <dvx/mlx5/decode.h>

#include "sim_trace.h"

void dvx_test_sim_trace_print(void *arg, uint32_t nic, uint32_t qpn, int is_cqe,
			      const void *bytes, size_t len)
{
	struct dvx_test_sim_trace *t = arg;
	static struct dvx_mlx5_wqe_desc d;	/* large; the trace runs under the sim's lock */
	static uint8_t ring[1024];	/* holds the largest WQE (ds 63 = 1008 B) */
	char buf[2048];
	int rc;

	if (is_cqe) {
		struct dvx_mlx5_cqe_info info;
		int err;

		t->cqes++;
		if (!t->out || len < sizeof(struct dvx_mlx5_cqe64))
			return;
		err = dvx_mlx5_cqe_parse((const struct dvx_mlx5_cqe64 *)bytes, &info);
		dvx_mlx5_cqe_format(&info, err, buf, sizeof(buf));
		fprintf(t->out, "sim%u qp 0x%x CQE\n%s\n", nic, qpn, buf);
		return;
	}
	t->wqes++;
	/* the decoder wants a ring: a power-of-two multiple of 64 bytes */
	memset(ring, 0, sizeof(ring));
	memcpy(ring, bytes, len < 1024 ? len : 1024);
	rc = dvx_mlx5_wqe_decode(ring, 1024, 0, &d);
	if (rc == -EBADMSG)
		t->bad++;
	if (!t->out)
		return;
	dvx_mlx5_wqe_format(&d, buf, sizeof(buf));
	fprintf(t->out, "sim%u qp 0x%x WQE (%zu bytes)\n%s\n", nic, qpn, len, buf);
}
