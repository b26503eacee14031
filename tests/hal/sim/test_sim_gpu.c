// SPDX-License-Identifier: MIT
/*
 * The software GPUs (hal/sim/gpu.c) through the hal's GPU wrappers: devices and
 * contexts, allocations rounded to the granularity, the allocation around an address,
 * what CUDA refuses (double frees, handle types the memory was not made for, fabric
 * handles without the attribute, host ranges registered twice, copies outside device
 * memory), memory shared with another process through an FD handle passed over a UNIX
 * socket and through IPC and fabric handles (the other process writes, this one sees
 * it), dma-bufs of device memory registered with a software NIC (closing the
 * descriptor keeps the registration; freeing the memory under it is refused), streams,
 * copies and atomics, and the live counts.
 */
#include <errno.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../lib/dvx_test.h"

#include <dvx/hal.h>
#include <dvx/hal/sim.h>

struct fab {
	void *mem;
	struct dvx_sim_fabric *f;
	const struct dvx_hal *hal;
};

/* a fabric with @ngpus default GPUs (0, 1, ...) and one NIC */
static void fab_up(struct fab *t, unsigned ngpus, int fabric)
{
	struct dvx_sim_fabric_cfg fc;
	struct dvx_sim_gpu_cfg gc;
	struct dvx_sim_nic_cfg nc;
	unsigned i;

	dvx_sim_fabric_cfg_default(&fc);
	t->mem = calloc(1, dvx_sim_fabric_mem_size(&fc));
	assert_non_null(t->mem);
	assert_int_equal(dvx_sim_fabric_init(t->mem, dvx_sim_fabric_mem_size(&fc), &fc, &t->f), 0);
	assert_int_equal(dvx_sim_set_reorder(t->f, 0, 0), 0);	/* the in-order model's counts */
	for (i = 0; i < ngpus; i++) {
		dvx_sim_gpu_cfg_default(&gc, i);
		gc.attr.fabric = (uint8_t)fabric;
		assert_int_equal(dvx_sim_add_gpu(t->f, &gc), (int)i);
	}
	dvx_sim_nic_cfg_default(&nc, 0);
	assert_int_equal(dvx_sim_add_nic(t->f, &nc), 0);
	t->hal = dvx_sim_hal(t->f);
}

static void fab_down(struct fab *t)
{
	struct dvx_sim_stats st;
	unsigned i;

	assert_int_equal(dvx_sim_get_stats(t->f, &st), 0);
	for (i = 0; i < DVX_ARRAY_SIZE(st.live); i++)
		assert_int_equal(st.live[i], 0);
	assert_int_equal(dvx_sim_fini(t->f), 0);
	free(t->mem);
}

static void gpu_up(const struct fab *t, struct dvx_hal_gpu *g, int ordinal)
{
	memset(g, 0, sizeof(*g));
	assert_int_equal(dvx_hal_gpu_init(t->hal, g), 0);
	assert_int_equal(dvx_hal_gpu_get(g, ordinal, NULL), 0);
	assert_int_equal(dvx_hal_gpu_ctx_retain(g), 0);
	assert_int_equal(dvx_hal_gpu_ctx_set_current(g), 0);
}

static void mem_new(struct dvx_hal_gpu *g, uint64_t len, uint32_t flags, struct dvx_hal_gpu_mem *m)
{
	struct dvx_hal_gpu_mem_req r = { .len = len, .flags = flags };

	assert_int_equal(dvx_hal_gpu_mem_alloc(g, &r, m), 0);
}

static void test_devices(void **state)
{
	struct dvx_sim_gpu_cfg gc;
	struct dvx_hal_gpu_attr a;
	struct dvx_hal_gpu g;
	struct dvx_hal_pci_dev pci[8];
	struct fab t;
	unsigned n;
	int cnt, can;

	(void)state;
	fab_up(&t, 2, 0);
	memset(&g, 0, sizeof(g));
	assert_int_equal(dvx_hal_gpu_init(t.hal, &g), 0);
	assert_int_equal(dvx_hal_gpu_count(&g, &cnt), 0);
	assert_int_equal(cnt, 2);
	assert_int_equal(dvx_hal_gpu_get(&g, -1, "19:00.0"), 0);
	assert_int_equal(g.ordinal, 1);
	assert_int_equal(dvx_hal_gpu_query(&g, &a), 0);
	assert_string_equal(a.name, "sim GPU 1");
	assert_int_equal(a.ordinal, 1);
	assert_int_equal(a.uuid[0], 1);
	assert_int_equal(a.granularity, 2u << 20);
	assert_int_equal(dvx_hal_gpu_get(&g, 2, NULL), -ENODEV);
	assert_int_equal(dvx_hal_gpu_get(&g, 0, NULL), 0);
	assert_int_equal(dvx_hal_gpu_peer_access(&g, 1, &can), 0);
	assert_int_equal(can, 1);
	/* the same PCI address or UUID twice; no device code */
	dvx_sim_gpu_cfg_default(&gc, 1);
	assert_int_equal(dvx_sim_add_gpu(t.f, &gc), -EEXIST);
	snprintf(gc.attr.pci, sizeof(gc.attr.pci), "0000:77:00.0");
	assert_int_equal(dvx_sim_add_gpu(t.f, &gc), -EEXIST);
	gc.attr.uuid[5] ^= 1;
	gc.peers = 0;
	assert_int_equal(dvx_sim_add_gpu(t.f, &gc), 2);
	assert_int_equal(dvx_hal_gpu_get(&g, 2, NULL), 0);
	assert_int_equal(dvx_hal_gpu_peer_access(&g, 0, &can), 0);
	assert_int_equal(can, 0);
	assert_int_equal(dvx_hal_gpu_ctx_release(&g), -EINVAL);	/* none retained */
	assert_int_equal(dvx_hal_gpu_ctx_retain(&g), 0);
	{
		struct dvx_hal_gpu_module mod;

		assert_int_equal(dvx_hal_gpu_module_load(&g, "x", &mod), -ENOSYS);
	}
	assert_int_equal(dvx_hal_gpu_ctx_release(&g), 0);
	/* the GPUs are PCI functions of the host the sim models */
	assert_int_equal(dvx_hal_pci_list(t.hal, 0xffff00, 0x030200, pci, 8, &n), 0);
	assert_int_equal(n, 3);
	assert_string_equal(pci[0].pci, "0000:18:00.0");
	fab_down(&t);
}

static void test_memory(void **state)
{
	struct dvx_hal_gpu_mem m, l, found, leg;
	struct dvx_hal_gpu_handle h;
	struct dvx_hal_gpu g;
	struct dvx_hal_gpu_mem_req r;
	uint64_t d, host[16];
	struct fab t;
	int x = 0;

	(void)state;
	fab_up(&t, 1, 0);
	gpu_up(&t, &g, 0);
	mem_new(&g, 100, DVX_HAL_GPU_MEM_RDMA | DVX_HAL_GPU_MEM_EXPORT, &m);
	assert_int_equal(m.len, 2u << 20);
	assert_int_equal(m.flags, DVX_HAL_GPU_MEM_RDMA | DVX_HAL_GPU_MEM_EXPORT);
	mem_new(&g, 100, DVX_HAL_GPU_MEM_LEGACY, &leg);
	assert_int_equal(leg.len, 4096);
	/* what the GPU cannot make */
	memset(&r, 0, sizeof(r));
	r.len = 1;
	r.flags = DVX_HAL_GPU_MEM_FABRIC;
	assert_int_equal(dvx_hal_gpu_mem_alloc(&g, &r, &l), -EOPNOTSUPP);
	assert_int_equal(g.diag.src, DVX_DIAG_CUDA);

	/* the allocation around an address; host memory is not device memory */
	assert_int_equal(dvx_hal_gpu_mem_lookup(&g, m.dptr + m.len - 1, &found), 0);
	assert_int_equal(found.dptr, m.dptr);
	assert_int_equal(found.len, m.len);
	assert_int_equal(found.flags, m.flags | DVX_HAL_GPU_MEM_FOREIGN);
	assert_int_equal(dvx_hal_gpu_mem_lookup(&g, m.dptr + m.len, &found), -ENOENT);
	assert_int_equal(dvx_hal_gpu_mem_lookup(&g, (uint64_t)(uintptr_t)&x, &found), -ENOENT);
	assert_int_equal(dvx_hal_gpu_mem_free(&g, &found), -EINVAL);

	/* handle types the memory was not made for */
	assert_int_equal(dvx_hal_gpu_mem_export(&g, &m, DVX_HAL_GPU_HANDLE_IPC, &h), -EINVAL);
	assert_int_equal(dvx_hal_gpu_mem_export(&g, &m, DVX_HAL_GPU_HANDLE_FABRIC, &h), -EINVAL);
	assert_int_equal(dvx_hal_gpu_mem_export(&g, &leg, DVX_HAL_GPU_HANDLE_FD, &h), -EINVAL);
	/* IPC in the exporting process itself is refused, as CUDA refuses it */
	assert_int_equal(dvx_hal_gpu_mem_export(&g, &leg, DVX_HAL_GPU_HANDLE_IPC, &h), 0);
	assert_int_equal(dvx_hal_gpu_mem_import(&g, &h, &l), -EINVAL);
	/* an FD import in this process maps the same memory a second time */
	assert_int_equal(dvx_hal_gpu_mem_export(&g, &m, DVX_HAL_GPU_HANDLE_FD, &h), 0);
	assert_true(h.fd >= 0);
	assert_int_equal(dvx_hal_gpu_mem_import(&g, &h, &l), 0);
	assert_int_equal(dvx_hal_fd_close(t.hal, h.fd), 0);
	assert_int_equal(l.flags, DVX_HAL_GPU_MEM_IMPORTED | DVX_HAL_GPU_MEM_EXPORT);
	assert_true(l.dptr != m.dptr);
	((volatile uint64_t *)(uintptr_t)m.dptr)[3] = 0x1234;
	assert_int_equal(((volatile uint64_t *)(uintptr_t)l.dptr)[3], 0x1234);
	/* imported memory is not exported again */
	assert_int_equal(dvx_hal_gpu_mem_export(&g, &l, DVX_HAL_GPU_HANDLE_FD, &h), -EINVAL);
	h.len = 8u << 20;	/* longer than the memory behind the descriptor */
	h.fd = 0;
	assert_int_equal(dvx_hal_gpu_mem_import(&g, &h, &found), -EINVAL);

	/* copies: htod/dtoh inside device memory only; async anywhere */
	for (x = 0; x < 16; x++)
		host[x] = (uint64_t)x * 3;
	assert_int_equal(dvx_hal_gpu_memcpy_htod(&g, m.dptr + 64, host, sizeof(host)), 0);
	assert_int_equal(dvx_hal_gpu_memcpy_htod(&g, m.dptr + m.len - 8, host, 16), -EINVAL);
	assert_int_equal(dvx_hal_gpu_memcpy_dtoh(&g, host, (uint64_t)(uintptr_t)host, 8), -EINVAL);
	memset(host, 0, sizeof(host));
	assert_int_equal(dvx_hal_gpu_memcpy_async(&g, (uint64_t)(uintptr_t)host, l.dptr + 64,
						  sizeof(host), NULL), 0);
	assert_int_equal(host[15], 45);
	d = m.dptr + 8;
	assert_int_equal(dvx_hal_gpu_stream_atomic(&g, NULL, d, DVX_HAL_GPU_ATOMIC_ADD, 5), 0);
	assert_int_equal(dvx_hal_gpu_stream_atomic(&g, NULL, d, DVX_HAL_GPU_ATOMIC_ADD, 5), 0);
	assert_int_equal(((volatile uint64_t *)(uintptr_t)l.dptr)[1], 10);
	assert_int_equal(dvx_hal_gpu_stream_atomic(&g, NULL, d, DVX_HAL_GPU_ATOMIC_SET, 1), 0);
	assert_int_equal(((volatile uint64_t *)(uintptr_t)l.dptr)[1], 1);
	{
		void *s1, *s2;

		assert_int_equal(dvx_hal_gpu_stream_create(&g, &s1), 0);
		assert_int_equal(dvx_hal_gpu_stream_create(&g, &s2), 0);
		assert_true(s1 != s2);
		assert_int_equal(dvx_hal_gpu_memcpy_async(&g, m.dptr, m.dptr + 64, 8, s1), 0);
		assert_int_equal(dvx_hal_gpu_stream_query(&g, s1), 0);
		assert_int_equal(dvx_hal_gpu_stream_destroy(&g, s1), 0);
		assert_int_equal(dvx_hal_gpu_stream_destroy(&g, s1), -EBADF);
		assert_int_equal(dvx_hal_gpu_stream_atomic(&g, s1, d, DVX_HAL_GPU_ATOMIC_SET, 1),
				 -EBADF);
		assert_int_equal(dvx_hal_gpu_stream_destroy(&g, s2), 0);
	}

	/* host registration: identity addresses, twice refused */
	assert_int_equal(dvx_hal_gpu_host_register(&g, host, sizeof(host), 0, &d), 0);
	assert_int_equal(d, (uint64_t)(uintptr_t)host);
	assert_int_equal(dvx_hal_gpu_host_register(&g, host + 1, 8, 0, &d), -EEXIST);
	assert_int_equal(dvx_hal_gpu_memcpy_dtoh(&g, &x, (uint64_t)(uintptr_t)host, 4), 0);
	assert_int_equal(dvx_hal_gpu_host_unregister(&g, host), 0);
	assert_int_equal(dvx_hal_gpu_host_unregister(&g, host), -ENOENT);

	assert_int_equal(dvx_hal_gpu_mem_free(&g, &l), 0);
	assert_int_equal(dvx_hal_gpu_mem_free(&g, &leg), 0);
	found = m;
	assert_int_equal(dvx_hal_gpu_mem_free(&g, &m), 0);
	assert_int_equal(dvx_hal_gpu_mem_free(&g, &found), -EINVAL);	/* twice */
	assert_int_equal(dvx_hal_gpu_ctx_release(&g), 0);
	fab_down(&t);
}

/* The child process: its own fabric with the same GPU 0 (same UUID); map what the
 * parent exports (an FD handle over @sock, then IPC and fabric handles as bytes) and
 * write a pattern into each. Exit status: 0, or the step that failed. */
static int child(int sock)
{
	struct dvx_hal_gpu_handle h;
	struct dvx_hal_gpu_mem m;
	struct dvx_hal_gpu g;
	struct fab t;
	size_t got;
	unsigned n, k;
	int fd;

	fab_up(&t, 1, 1);
	gpu_up(&t, &g, 0);
	for (k = 0; k < 3; k++) {
		struct dvx_hal_pollfd p = { .fd = sock, .events = DVX_HAL_POLL_IN };

		if (dvx_hal_sock_poll(t.hal, &p, 1, 5000000000ull) != 1)
			return 10 + k;
		if (dvx_hal_sock_recv_fds(t.hal, sock, &h, sizeof(h), &got, &fd, 1, &n) ||
		    got != sizeof(h))
			return 20 + k;
		if (n == 1)
			h.fd = fd;
		if (dvx_hal_gpu_mem_import(&g, &h, &m))
			return 30 + k;
		((volatile uint64_t *)(uintptr_t)m.dptr)[k] = 0xc0de0000u + k;
		if (n == 1 && dvx_hal_fd_close(t.hal, fd))
			return 40 + k;
		if (dvx_hal_gpu_mem_free(&g, &m))
			return 50 + k;
	}
	dvx_hal_gpu_ctx_release(&g);
	dvx_sim_fini(t.f);
	return 0;
}

static void send_handle(const struct dvx_hal *hal, int sock, const struct dvx_hal_gpu_handle *h)
{
	struct dvx_hal_iov iov = { h, sizeof(*h) };
	size_t n;

	if (h->type == DVX_HAL_GPU_HANDLE_FD)
		assert_int_equal(dvx_hal_sock_send_fds(hal, sock, h, sizeof(*h), &h->fd, 1, &n), 0);
	else
		assert_int_equal(dvx_hal_sock_send(hal, sock, &iov, 1, &n), 0);
	assert_int_equal(n, sizeof(*h));
}

static void test_processes(void **state)
{
	struct dvx_hal_gpu_handle h;
	struct dvx_hal_gpu_mem m[3];
	struct dvx_hal_gpu g;
	struct fab t;
	int sv[2], st;
	pid_t pid;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(sv[0]);
		_exit(child(sv[1]));
	}
	close(sv[1]);
	fab_up(&t, 1, 1);
	gpu_up(&t, &g, 0);
	mem_new(&g, 4096, DVX_HAL_GPU_MEM_EXPORT, &m[0]);
	mem_new(&g, 4096, DVX_HAL_GPU_MEM_LEGACY, &m[1]);
	mem_new(&g, 4096, DVX_HAL_GPU_MEM_FABRIC, &m[2]);
	assert_int_equal(dvx_hal_gpu_mem_export(&g, &m[0], DVX_HAL_GPU_HANDLE_FD, &h), 0);
	send_handle(t.hal, sv[0], &h);
	assert_int_equal(dvx_hal_fd_close(t.hal, h.fd), 0);
	assert_int_equal(dvx_hal_gpu_mem_export(&g, &m[1], DVX_HAL_GPU_HANDLE_IPC, &h), 0);
	send_handle(t.hal, sv[0], &h);
	assert_int_equal(dvx_hal_gpu_mem_export(&g, &m[2], DVX_HAL_GPU_HANDLE_FABRIC, &h), 0);
	send_handle(t.hal, sv[0], &h);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	/* the other process's writes are in this process's memory */
	assert_int_equal(((volatile uint64_t *)(uintptr_t)m[0].dptr)[0], 0xc0de0000u);
	assert_int_equal(((volatile uint64_t *)(uintptr_t)m[1].dptr)[1], 0xc0de0001u);
	assert_int_equal(((volatile uint64_t *)(uintptr_t)m[2].dptr)[2], 0xc0de0002u);
	close(sv[0]);
	assert_int_equal(dvx_hal_gpu_mem_free(&g, &m[0]), 0);
	assert_int_equal(dvx_hal_gpu_mem_free(&g, &m[1]), 0);
	assert_int_equal(dvx_hal_gpu_mem_free(&g, &m[2]), 0);
	assert_int_equal(dvx_hal_gpu_ctx_release(&g), 0);
	fab_down(&t);
}

static void test_dmabuf(void **state)
{
	struct dvx_hal_gpu_mem m;
	struct dvx_hal_gpu g;
	struct dvx_hal_nic nic;
	struct dvx_hal_pd pd;
	struct dvx_hal_mr mr, mr2;
	struct dvx_hal_mr_req r;
	struct fab t;
	int fd;

	(void)state;
	fab_up(&t, 1, 0);
	gpu_up(&t, &g, 0);
	mem_new(&g, 1u << 20, DVX_HAL_GPU_MEM_RDMA, &m);
	assert_int_equal(dvx_hal_gpu_dmabuf_fd(&g, m.dptr + 100, 4096, 0, &fd), -EINVAL);
	assert_int_equal(dvx_hal_gpu_dmabuf_fd(&g, m.dptr, m.len + 4096, 0, &fd), -EINVAL);
	assert_int_equal(dvx_hal_gpu_dmabuf_fd(&g, m.dptr, m.len, 0, &fd), 0);
	memset(&nic, 0, sizeof(nic));
	assert_int_equal(dvx_hal_nic_open(t.hal, "sim_0", &nic), 0);
	assert_int_equal(dvx_hal_pd_alloc(&nic, &pd), 0);
	memset(&r, 0, sizeof(r));
	r.len = m.len;
	r.iova = m.dptr;
	r.access = DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_WRITE;
	r.flags = DVX_MR_DMABUF;
	r.dmabuf_fd = fd;
	assert_int_equal(dvx_hal_mr_reg(&nic, &pd, &r, &mr), 0);
	/* the descriptor goes, the registration stays; a closed number is no dma-buf */
	assert_int_equal(dvx_hal_fd_close(t.hal, fd), 0);
	assert_int_equal(dvx_hal_mr_reg(&nic, &pd, &r, &mr2), -EBADF);
	/* memory under a registration is not freed */
	assert_int_equal(dvx_hal_gpu_mem_free(&g, &m), -EBUSY);
	assert_int_equal(dvx_hal_mr_dereg(&nic, &mr), 0);
	assert_int_equal(dvx_hal_pd_free(&nic, &pd), 0);
	assert_int_equal(dvx_hal_nic_close(&nic), 0);
	assert_int_equal(dvx_hal_gpu_mem_free(&g, &m), 0);
	assert_int_equal(dvx_hal_gpu_ctx_release(&g), 0);
	fab_down(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_devices),
		cmocka_unit_test(test_memory),
		cmocka_unit_test(test_processes),
		cmocka_unit_test(test_dmabuf),
	};

	return cmocka_run_group_tests_name("sim-gpu", tests, NULL, NULL);
}
