// SPDX-License-Identifier: MIT
/*
 * gpu/ host side against the mock hal: device selection, every init path made to
 * fail in turn (nothing held after), device memory, dma-buf and export fds, host
 * registration, streams with timeouts, the embedded device library and its launches,
 * sharing memory (FD, fabric and legacy IPC handles exported and imported, the
 * allocation around an address), peer access, stream-ordered copies and atomics, the
 * hal wrappers' argument checks and the CUresult translation.
 */
#include <errno.h>

#include "../lib/dvx_test.h"

#include <dvx/gpu/gpu.h>
#include <dvx/gpu/queue.h>
#include <dvx/testing/mock.h>

static struct dvx_mock M;

static int setup(void **state)
{
	struct dvx_hal_gpu_attr a;

	(void)state;
	dvx_mock_init(&M);
	dvx_mock_gpu_attr_h100(&a, "0000:19:00.0");
	assert_int_equal(dvx_mock_add_gpu(&M, &a), 0);
	dvx_mock_gpu_attr_h100(&a, "0000:3b:00.0");
	a.vmm_rdma = 0;
	a.dmabuf = 0;
	a.cc_major = 8;
	assert_int_equal(dvx_mock_add_gpu(&M, &a), 1);
	return 0;
}

static void test_open_close(void **state)
{
	const struct dvx_hal *hal = dvx_mock_hal(&M);
	struct dvx_gpu g;
	unsigned n = 99;

	(void)state;
	assert_int_equal(dvx_gpu_count(hal, &n), 0);
	assert_int_equal(n, 2);
	memset(&g, 0, sizeof(g));
	assert_int_equal(dvx_gpu_open(&g, hal, 0, NULL), 0);
	assert_int_equal(g.attr.sm_count, 132);
	assert_int_equal(g.attr.ordinal, 0);
	assert_int_equal(g.page_size, 4096);
	assert_int_equal(dvx_mock_live(&M, DVX_MOCK_RES_GPU_CTX), 1);
	assert_int_equal(dvx_mock_count(&M, DVX_MOCK_OP_GPU_CTX_SET_CURRENT), 1);
	/* open into an open GPU: -EBUSY, nothing retained twice, the GPU still usable */
	assert_int_equal(dvx_gpu_open(&g, hal, 1, NULL), -EBUSY);
	assert_int_equal(g.open, DVX_LIVE);
	assert_int_equal(g.attr.ordinal, 0);
	assert_int_equal(dvx_mock_live(&M, DVX_MOCK_RES_GPU_CTX), 1);
	assert_int_equal(dvx_gpu_make_current(&g), 0);
	assert_int_equal(dvx_gpu_close(&g), 0);
	assert_int_equal(dvx_gpu_close(&g), -EINVAL);
	assert_int_equal(dvx_mock_live_total(&M), 0);

	/* by PCI address, full or short */
	assert_int_equal(dvx_gpu_open(&g, hal, -1, "0000:3b:00.0"), 0);
	assert_int_equal(g.attr.ordinal, 1);
	assert_int_equal(g.attr.cc_major, 8);
	assert_int_equal(dvx_gpu_close(&g), 0);
	assert_int_equal(dvx_gpu_open(&g, hal, 7, "3b:00.0"), 0);
	assert_int_equal(g.hg.ordinal, 1);
	assert_int_equal(dvx_gpu_close(&g), 0);

	/* unknown device, bad arguments: nothing held, diag says so */
	assert_int_equal(dvx_gpu_open(&g, hal, -1, "0000:99:00.0"), -ENODEV);
	assert_string_equal(g.hg.diag.op, "gpu_get");
	assert_int_equal(dvx_gpu_open(&g, hal, 5, NULL), -ENODEV);
	assert_int_equal(dvx_gpu_open(&g, hal, -1, NULL), -EINVAL);
	assert_int_equal(g.hg.diag.src, DVX_DIAG_ARG);
	assert_int_equal(dvx_gpu_open(&g, NULL, 0, NULL), -EINVAL);
	assert_int_equal(dvx_gpu_open(NULL, hal, 0, NULL), -EINVAL);
	assert_int_equal(dvx_mock_live_total(&M), 0);
}

static void test_no_driver(void **state)
{
	const struct dvx_hal *hal = dvx_mock_hal(&M);
	struct dvx_gpu g;
	unsigned n = 99;

	(void)state;
	M.gpu_init_err = -ENODEV;
	assert_int_equal(dvx_gpu_count(hal, &n), 0);
	assert_int_equal(n, 0);
	memset(&g, 0, sizeof(g));
	assert_int_equal(dvx_gpu_open(&g, hal, 0, NULL), -ENODEV);
	assert_string_equal(g.hg.diag.op, "gpu_init");
	assert_non_null(strstr(g.hg.diag.msg, "no driver"));

	/* a driver with no device */
	M.gpu_init_err = 0;
	M.ngpus = 0;
	assert_int_equal(dvx_gpu_count(hal, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(dvx_gpu_open(&g, hal, 0, NULL), -ENODEV);
	assert_int_equal(g.hg.diag.src, DVX_DIAG_STATE);
	assert_int_equal(dvx_mock_live_total(&M), 0);
}

/* Fail every call of dvx_gpu_open in turn: an error (or a tolerated one), nothing held. */
static void test_open_fault_injection(void **state)
{
	const struct dvx_hal *hal = dvx_mock_hal(&M);
	struct dvx_gpu g;
	uint32_t k, calls;
	int err, failed = 0;

	(void)state;
	for (k = 1;; k++) {
		dvx_mock_reset_log(&M);
		dvx_mock_fail_at(&M, k, -EIO);
		memset(&g, 0, sizeof(g));
		err = dvx_gpu_open(&g, hal, 0, NULL);
		calls = dvx_mock_calls(&M);
		dvx_mock_clear_faults(&M);
		if (calls < k) {	/* the injection was past the last call */
			assert_int_equal(err, 0);
			assert_int_equal(dvx_gpu_close(&g), 0);
			break;
		}
		if (dvx_mock_call_at(&M, k)->op == DVX_MOCK_OP_LIMITS) {
			assert_int_equal(err, 0);	/* the page size falls back to 4096 */
			assert_int_equal(g.page_size, 4096);
			assert_int_equal(dvx_gpu_close(&g), 0);
		} else {
			assert_int_equal(err, -EIO);
			assert_int_equal(g.hg.diag.err, -EIO);
			assert_string_equal(g.hg.diag.op, dvx_mock_op_name(dvx_mock_call_at(&M, k)->op));
			failed++;
		}
		assert_int_equal(dvx_mock_live_total(&M), 0);
	}
	assert_int_equal(failed, 6);	/* init, count, get, query, retain, set_current */
}

static void open_gpu(struct dvx_gpu *g, int ordinal)
{
	memset(g, 0, sizeof(*g));
	assert_int_equal(dvx_gpu_open(g, dvx_mock_hal(&M), ordinal, NULL), 0);
}

static void test_mem(void **state)
{
	const struct dvx_mock_call *c;
	struct dvx_gpu g, g1;
	struct dvx_gpu_mem mem;
	int fd = -1;

	(void)state;
	open_gpu(&g, 0);
	assert_int_equal(dvx_gpu_mem_alloc(&g, 4096, DVX_GPU_MEM_RDMA | DVX_GPU_MEM_EXPORT, &mem), 0);
	assert_int_equal(mem.len, 2u << 20);
	assert_true(mem.dptr != 0);
	c = dvx_mock_last(&M, DVX_MOCK_OP_GPU_MEM_CREATE);
	assert_int_equal(c->flags, DVX_HAL_GPU_MEM_RDMA | DVX_HAL_GPU_MEM_EXPORT);
	assert_int_equal(c->len, 4096);
	assert_int_equal(dvx_mock_live(&M, DVX_MOCK_RES_GPU_MEM), 1);

	assert_int_equal(dvx_gpu_mem_export_fd(&mem, &fd), 0);
	assert_true(fd >= 0);
	assert_int_equal(dvx_mock_live(&M, DVX_MOCK_RES_FD), 1);
	assert_int_equal(dvx_hal_fd_close(dvx_mock_hal(&M), fd), 0);
	assert_int_equal(dvx_hal_fd_close(dvx_mock_hal(&M), fd), -EBADF);
	assert_int_equal(dvx_gpu_mem_dmabuf_fd(&mem, 0, 0, 0, &fd), 0);
	assert_int_equal(dvx_hal_fd_close(dvx_mock_hal(&M), fd), 0);
	c = dvx_mock_last(&M, DVX_MOCK_OP_GPU_DMABUF_FD);
	assert_int_equal(c->len, 2u << 20);
	assert_int_equal(c->addr, mem.dptr);
	assert_int_equal(dvx_gpu_mem_dmabuf_fd(&mem, 4096, 8192, DVX_HAL_GPU_DMABUF_PCIE, &fd), 0);
	c = dvx_mock_last(&M, DVX_MOCK_OP_GPU_DMABUF_FD);
	assert_int_equal(c->addr, mem.dptr + 4096);
	assert_int_equal(c->flags, DVX_HAL_GPU_DMABUF_PCIE);
	assert_int_equal(dvx_hal_fd_close(dvx_mock_hal(&M), fd), 0);
	assert_int_equal(dvx_mock_live(&M, DVX_MOCK_RES_FD), 0);
	/* bad ranges never reach the hal */
	assert_int_equal(dvx_gpu_mem_dmabuf_fd(&mem, 100, 4096, 0, &fd), -EINVAL);
	assert_int_equal(dvx_gpu_mem_dmabuf_fd(&mem, 0, 3u << 20, 0, &fd), -EINVAL);
	assert_int_equal(dvx_gpu_mem_dmabuf_fd(&mem, 0, 4096, 0x80, &fd), -EINVAL);
	assert_int_equal(dvx_mock_count(&M, DVX_MOCK_OP_GPU_DMABUF_FD), 2);

	/* memcpy through the fake device memory */
	{
		uint64_t v = 0x1122334455667788ull, r = 0;

		assert_int_equal(dvx_gpu_memcpy_htod(&g, mem.dptr + 8, &v, 8), 0);
		assert_int_equal(dvx_gpu_memcpy_dtoh(&g, &r, mem.dptr + 8, 8), 0);
		assert_int_equal(r, v);
	}
	assert_int_equal(dvx_gpu_mem_free(&mem), 0);
	assert_int_equal(dvx_gpu_mem_free(&mem), -EINVAL);

	/* not exportable */
	assert_int_equal(dvx_gpu_mem_alloc(&g, 1, 0, &mem), 0);
	assert_int_equal(dvx_gpu_mem_export_fd(&mem, &fd), -EINVAL);
	assert_int_equal(dvx_gpu_mem_free(&mem), 0);

	/* the driver fails: nothing held, diag from the hal */
	dvx_mock_fail_op(&M, DVX_MOCK_OP_GPU_MEM_CREATE, -ENOMEM);
	assert_int_equal(dvx_gpu_mem_alloc(&g, 1, 0, &mem), -ENOMEM);
	assert_string_equal(g.hg.diag.op, "gpu_mem_create");
	assert_int_equal(g.hg.diag.src, DVX_DIAG_CUDA);
	dvx_mock_clear_faults(&M);

	/* a GPU without the RDMA flag or dma-buf: refused before the driver */
	open_gpu(&g1, 1);
	assert_int_equal(dvx_gpu_mem_alloc(&g1, 4096, DVX_GPU_MEM_RDMA, &mem), -EOPNOTSUPP);
	assert_non_null(strstr(g1.hg.diag.msg, "GPUDirect RDMA"));
	assert_int_equal(dvx_gpu_mem_alloc(&g1, 4096, 0, &mem), 0);
	assert_int_equal(dvx_gpu_mem_dmabuf_fd(&mem, 0, 0, 0, &fd), -EOPNOTSUPP);
	assert_int_equal(dvx_gpu_mem_free(&mem), 0);
	assert_int_equal(dvx_gpu_mem_alloc(&g1, 0, 0, &mem), -EINVAL);
	assert_int_equal(dvx_gpu_mem_alloc(&g1, 1, 0x100, &mem), -EINVAL);
	assert_int_equal(dvx_gpu_close(&g1), 0);
	assert_int_equal(dvx_gpu_close(&g), 0);
	assert_int_equal(dvx_mock_live_total(&M), 0);
}

static void test_share(void **state)
{
	const struct dvx_hal *hal = dvx_mock_hal(&M);
	struct dvx_gpu g, g1;
	struct dvx_gpu_mem mem, leg, imp, imp2, found;
	struct dvx_hal_gpu_handle h, hi;
	uint64_t *w;
	int can = -1;

	(void)state;
	open_gpu(&g, 0);
	assert_int_equal(dvx_gpu_mem_alloc(&g, 3u << 20, DVX_GPU_MEM_EXPORT, &mem), 0);
	assert_int_equal(mem.len, 4u << 20);
	assert_int_equal(dvx_gpu_mem_alloc(&g, 100, DVX_GPU_MEM_LEGACY, &leg), 0);
	assert_int_equal(leg.len, 4096);
	assert_int_equal(leg.hm.flags, DVX_HAL_GPU_MEM_LEGACY);
	/* flags that do not go together, or a device that cannot */
	assert_int_equal(dvx_gpu_mem_alloc(&g, 100, DVX_GPU_MEM_LEGACY | DVX_GPU_MEM_RDMA, &imp),
			 -EINVAL);
	assert_int_equal(dvx_gpu_mem_alloc(&g, 100, DVX_GPU_MEM_FABRIC, &imp), -EOPNOTSUPP);
	assert_int_equal(dvx_gpu_mem_alloc(&g, 100, 0x100, &imp), -EINVAL);

	/* FD: a real descriptor; import maps an allocation of the same length */
	assert_int_equal(dvx_gpu_mem_export(&mem, DVX_HAL_GPU_HANDLE_FD, &h), 0);
	assert_int_equal(h.type, DVX_HAL_GPU_HANDLE_FD);
	assert_true(h.fd >= 0);
	assert_int_equal(h.len, 4u << 20);
	assert_int_equal(dvx_gpu_mem_import(&g, &h, &imp), 0);
	assert_int_equal(imp.len, 4u << 20);
	assert_int_equal(imp.hm.flags, DVX_HAL_GPU_MEM_IMPORTED | DVX_HAL_GPU_MEM_EXPORT);
	assert_int_equal(dvx_hal_fd_close(hal, h.fd), 0);
	/* the wrong handle type for the memory, a closed descriptor */
	assert_int_equal(dvx_gpu_mem_export(&mem, DVX_HAL_GPU_HANDLE_IPC, &hi), -EINVAL);
	assert_int_equal(dvx_gpu_mem_export(&leg, DVX_HAL_GPU_HANDLE_FD, &hi), -EINVAL);
	assert_int_equal(dvx_gpu_mem_export(&mem, 9, &hi), -EINVAL);
	assert_int_equal(dvx_gpu_mem_import(&g, &h, &imp2), -EINVAL);
	assert_string_equal(g.hg.diag.op, "gpu_mem_import");

	/* IPC: bytes; the import is LEGACY and IMPORTED */
	assert_int_equal(dvx_gpu_mem_export(&leg, DVX_HAL_GPU_HANDLE_IPC, &hi), 0);
	assert_int_equal(hi.fd, -1);
	assert_int_equal(hi.len, 4096);
	assert_int_equal(dvx_gpu_mem_import(&g, &hi, &imp2), 0);
	assert_int_equal(imp2.hm.flags, DVX_HAL_GPU_MEM_IMPORTED | DVX_HAL_GPU_MEM_LEGACY);
	hi.data[0] ^= 1;
	assert_int_equal(dvx_gpu_mem_import(&g, &hi, &found), -EINVAL);

	/* lookup: the allocation around an address; host memory is not found */
	assert_int_equal(dvx_gpu_mem_lookup(&g, mem.dptr + 12345, &found), 0);
	assert_int_equal(found.dptr, mem.dptr);
	assert_int_equal(found.len, mem.len);
	assert_int_equal(found.hm.flags, DVX_HAL_GPU_MEM_FOREIGN | DVX_HAL_GPU_MEM_EXPORT);
	assert_int_equal(dvx_gpu_mem_free(&found), -EINVAL);	/* not ours to free */
	assert_int_equal(dvx_gpu_mem_export(&found, DVX_HAL_GPU_HANDLE_FD, &h), 0);
	assert_int_equal(dvx_hal_fd_close(hal, h.fd), 0);
	assert_int_equal(dvx_gpu_mem_lookup(&g, (uint64_t)(uintptr_t)&can, &found), -ENOENT);
	assert_int_equal(g.hg.diag.err, 0);	/* an answer, not a failure */

	/* stream-ordered copy and atomics through the fake device memory */
	w = (uint64_t *)(uintptr_t)mem.dptr;
	w[1] = 5;
	assert_int_equal(dvx_hal_gpu_memcpy_async(&g.hg, mem.dptr + 64, mem.dptr + 8, 8, NULL), 0);
	assert_int_equal(w[8], 5);
	assert_int_equal(dvx_hal_gpu_stream_atomic(&g.hg, NULL, mem.dptr, DVX_HAL_GPU_ATOMIC_ADD, 3),
			 0);
	assert_int_equal(dvx_hal_gpu_stream_atomic(&g.hg, NULL, mem.dptr, DVX_HAL_GPU_ATOMIC_ADD, 4),
			 0);
	assert_int_equal(w[0], 7);
	assert_int_equal(dvx_hal_gpu_stream_atomic(&g.hg, NULL, mem.dptr, DVX_HAL_GPU_ATOMIC_SET, 2),
			 0);
	assert_int_equal(w[0], 2);
	assert_int_equal(dvx_hal_gpu_stream_atomic(&g.hg, NULL, mem.dptr + 4, 1, 2), -EINVAL);
	assert_int_equal(dvx_hal_gpu_stream_atomic(&g.hg, NULL, mem.dptr, 3, 2), -EINVAL);
	assert_int_equal(dvx_hal_gpu_memcpy_async(&g.hg, mem.dptr, 0, 8, NULL), -EINVAL);
	assert_int_equal(dvx_hal_gpu_stream_atomic(&g.hg, (void *)&can, mem.dptr, 1, 2), -EBADF);

	/* peer access: both ways by default, a cleared bit says no */
	assert_int_equal(dvx_hal_gpu_peer_access(&g.hg, 1, &can), 0);
	assert_int_equal(can, 1);
	M.gpu_peer[0] &= ~2u;
	assert_int_equal(dvx_hal_gpu_peer_access(&g.hg, 1, &can), 0);
	assert_int_equal(can, 0);
	assert_int_equal(dvx_hal_gpu_peer_access(&g.hg, 0, &can), -EINVAL);	/* itself */
	assert_int_equal(dvx_hal_gpu_peer_access(&g.hg, -1, &can), -EINVAL);
	assert_int_equal(dvx_hal_gpu_peer_access(&g.hg, 7, &can), -ENODEV);

	/* an injected failure of each new call: an error, nothing held */
	dvx_mock_fail_op(&M, DVX_MOCK_OP_GPU_MEM_EXPORT, -EIO);
	assert_int_equal(dvx_gpu_mem_export(&mem, DVX_HAL_GPU_HANDLE_FD, &h), -EIO);
	dvx_mock_fail_op(&M, DVX_MOCK_OP_GPU_MEM_EXPORT, 0);
	dvx_mock_fail_op(&M, DVX_MOCK_OP_GPU_MEM_IMPORT, -ENOMEM);
	assert_int_equal(dvx_gpu_mem_import(&g, &hi, &found), -ENOMEM);
	dvx_mock_fail_op(&M, DVX_MOCK_OP_GPU_MEM_IMPORT, 0);
	assert_int_equal(dvx_mock_live(&M, DVX_MOCK_RES_FD), 0);

	open_gpu(&g1, 1);
	assert_int_equal(dvx_gpu_close(&g1), 0);
	assert_int_equal(dvx_gpu_mem_free(&imp2), 0);
	assert_int_equal(dvx_gpu_mem_free(&imp), 0);
	assert_int_equal(dvx_gpu_mem_free(&leg), 0);
	assert_int_equal(dvx_gpu_mem_free(&mem), 0);
	assert_int_equal(dvx_gpu_close(&g), 0);
	assert_int_equal(dvx_mock_live_total(&M), 0);
}

static void test_host_register(void **state)
{
	static uint8_t page[3 * 4096] __attribute__((aligned(4096)));
	const struct dvx_mock_call *c;
	struct dvx_gpu_hostreg r, r2;
	struct dvx_gpu g;

	(void)state;
	open_gpu(&g, 0);
	/* a doorbell register at +0x800 of a UAR page: the whole page, IOMEM */
	assert_int_equal(dvx_gpu_host_register(&g, page + 0x800, 8, DVX_GPU_HOST_IOMEM, &r), 0);
	c = dvx_mock_last(&M, DVX_MOCK_OP_GPU_HOST_REGISTER);
	assert_int_equal(c->addr, (uint64_t)(uintptr_t)page);
	assert_int_equal(c->len, 4096);
	assert_int_equal(c->flags, DVX_HAL_GPU_HOST_IOMEM);
	assert_int_equal(r.dptr, (uint64_t)(uintptr_t)page + 0x800);
	/* overlapping pages are refused by the driver (EEXIST) */
	assert_int_equal(dvx_gpu_host_register(&g, page + 100, 5000, 0, &r2), -EEXIST);
	/* a range across a page boundary: both pages */
	assert_int_equal(dvx_gpu_host_register(&g, page + 4096 + 4000, 200, 0, &r2), 0);
	c = dvx_mock_last(&M, DVX_MOCK_OP_GPU_HOST_REGISTER);
	assert_int_equal(c->len, 8192);
	assert_int_equal(c->flags, 0);
	assert_int_equal(dvx_mock_live(&M, DVX_MOCK_RES_GPU_HOSTREG), 2);
	assert_int_equal(dvx_gpu_host_unregister(&r2), 0);
	assert_int_equal(dvx_gpu_host_unregister(&r2), -EINVAL);
	assert_int_equal(dvx_gpu_host_unregister(&r), 0);
	assert_int_equal(dvx_gpu_host_register(&g, page, 8, 0x10, &r), -EINVAL);
	dvx_mock_fail_op(&M, DVX_MOCK_OP_GPU_HOST_REGISTER, -EPERM);
	assert_int_equal(dvx_gpu_host_register(&g, page, 8, 0, &r), -EPERM);
	dvx_mock_clear_faults(&M);
	g.attr.can_map_host = 0;
	assert_int_equal(dvx_gpu_host_register(&g, page, 8, 0, &r), -EOPNOTSUPP);
	assert_int_equal(dvx_gpu_close(&g), 0);
	assert_int_equal(dvx_mock_live_total(&M), 0);
}

static void test_stream_wait(void **state)
{
	struct dvx_gpu_stream s;
	struct dvx_gpu g;

	(void)state;
	open_gpu(&g, 0);
	assert_int_equal(dvx_gpu_stream_create(&g, &s), 0);
	M.gpu_stream_busy = 3;
	M.now_step = 10;
	assert_int_equal(dvx_gpu_stream_wait(&s, 1000), 0);
	assert_int_equal(dvx_mock_count(&M, DVX_MOCK_OP_GPU_STREAM_QUERY), 4);
	/* still running at the deadline: -ETIMEDOUT, and it may be waited on again */
	M.gpu_stream_busy = 1000;
	assert_int_equal(dvx_gpu_stream_wait(&s, 50), -ETIMEDOUT);
	assert_string_equal(g.hg.diag.op, "gpu_stream_wait");
	M.gpu_stream_busy = 0;
	assert_int_equal(dvx_gpu_stream_wait(&s, 50), 0);
	/* a kernel fault surfaces as the query's error */
	dvx_mock_fail_op(&M, DVX_MOCK_OP_GPU_STREAM_QUERY, -EFAULT);
	assert_int_equal(dvx_gpu_stream_wait(&s, 50), -EFAULT);
	dvx_mock_clear_faults(&M);
	assert_int_equal(dvx_gpu_stream_destroy(&s), 0);
	assert_int_equal(dvx_gpu_stream_destroy(&s), -EINVAL);
	assert_int_equal(dvx_gpu_close(&g), 0);
	assert_int_equal(dvx_mock_live_total(&M), 0);
}

struct launch_seen {
	unsigned calls;
	char name[64];
	struct dvx_gpu_sq sq;
	uint32_t scope, per_thread, grid, block;
	uint64_t timeout, status;
};

static int launch_hook(void *arg, const struct dvx_hal_gpu_launch *l)
{
	struct launch_seen *s = (struct launch_seen *)arg;

	s->calls++;
	snprintf(s->name, sizeof(s->name), "%s", (const char *)l->func);
	s->grid = l->grid[0];
	s->block = l->block[0];
	if (!strcmp(s->name, "dvx_devlib_post_nop")) {
		memcpy(&s->sq, l->args[0], sizeof(s->sq));
		memcpy(&s->scope, l->args[1], 4);
		memcpy(&s->per_thread, l->args[2], 4);
		memcpy(&s->timeout, l->args[3], 8);
		memcpy(&s->status, l->args[4], 8);
	}
	return 0;
}

extern const size_t dvx_fatbin_gpu_devlib_len;

static void test_lib(void **state)
{
	struct launch_seen seen;
	struct dvx_gpu_stream s;
	struct dvx_gpu_sq sq;
	struct dvx_gpu_lib lib;
	struct dvx_gpu g;
	uint32_t k;
	int err;

	(void)state;
	open_gpu(&g, 0);
	if (dvx_fatbin_gpu_devlib_len == 0) {
		/* built without nvcc: the library says so */
		assert_int_equal(dvx_gpu_lib_load(&g, &lib), -ENOSYS);
		assert_non_null(strstr(g.hg.diag.msg, "nvcc"));
		assert_int_equal(dvx_gpu_close(&g), 0);
		return;
	}
	/* every step of the load made to fail: nothing held */
	for (k = 1;; k++) {
		dvx_mock_reset_log(&M);
		dvx_mock_fail_at(&M, k, -ENOENT);
		err = dvx_gpu_lib_load(&g, &lib);
		dvx_mock_clear_faults(&M);
		if (dvx_mock_calls(&M) < k) {
			assert_int_equal(err, 0);
			break;
		}
		assert_int_equal(err, -ENOENT);
		assert_int_equal(dvx_mock_live(&M, DVX_MOCK_RES_GPU_MODULE), 0);
	}
	assert_int_equal(k, 5);	/* load + 3 functions, then success */

	memset(&seen, 0, sizeof(seen));
	M.gpu_launch_fn = launch_hook;
	M.gpu_launch_arg = &seen;
	assert_int_equal(dvx_gpu_stream_create(&g, &s), 0);
	assert_int_equal(dvx_gpu_sq_view_init(&sq,
					      &(struct dvx_gpu_sq_cfg){ DVX_GPU_Q_SYS, 0x10000, 256,
									0x123, 64, 0x20000, 0x20008,
									0x30000, 0x20010 }),
			 0);
	assert_int_equal(dvx_gpu_lib_post_nop(&lib, &s, &sq,
					      &(struct dvx_gpu_nop_cfg){ DVX_GPU_SCOPE_WARP, 4, 64,
									 3, 1000, 0x40000 }),
			 0);
	assert_int_equal(seen.calls, 1);
	assert_string_equal(seen.name, "dvx_devlib_post_nop");
	assert_memory_equal(&seen.sq, &sq, sizeof(sq));
	assert_int_equal(seen.scope, DVX_GPU_SCOPE_WARP);
	assert_int_equal(seen.per_thread, 3);
	assert_int_equal(seen.grid, 4);
	assert_int_equal(seen.block, 64);
	assert_int_equal(seen.status, 0x40000);
	/* a warp-scope launch needs whole warps; a bad scope or view never launches */
	assert_int_equal(dvx_gpu_lib_post_nop(&lib, &s, &sq,
					      &(struct dvx_gpu_nop_cfg){ DVX_GPU_SCOPE_WARP, 1, 48,
									 1, 0, 8 }),
			 -EINVAL);
	assert_int_equal(dvx_gpu_lib_post_nop(&lib, &s, &sq,
					      &(struct dvx_gpu_nop_cfg){ (enum dvx_gpu_scope)3, 1,
									 32, 1, 0, 8 }),
			 -EINVAL);
	sq.version = 99;
	assert_int_equal(dvx_gpu_lib_post_nop(&lib, &s, &sq,
					      &(struct dvx_gpu_nop_cfg){ DVX_GPU_SCOPE_THREAD, 1,
									 32, 1, 0, 8 }),
			 -EINVAL);
	assert_int_equal(dvx_gpu_lib_cq_init(&lib, &s, 0x50000, 10), 0);
	assert_string_equal(seen.name, "dvx_devlib_cq_init");
	assert_int_equal(seen.grid, 4);
	assert_int_equal(dvx_gpu_lib_sq_ctrs_init(&lib, &s, 0x30000), 0);
	assert_int_equal(seen.block, DVX_MLX5_SQ_CTRS_BYTES / 8);
	assert_int_equal(dvx_gpu_lib_sq_ctrs_init(&lib, &s, 0x30008), -EINVAL);
	assert_int_equal(seen.calls, 3);
	/* a failed launch is reported */
	dvx_mock_fail_op(&M, DVX_MOCK_OP_GPU_LAUNCH, -ENOSPC);
	assert_int_equal(dvx_gpu_lib_cq_init(&lib, &s, 0x50000, 10), -ENOSPC);
	dvx_mock_clear_faults(&M);

	assert_int_equal(dvx_gpu_stream_destroy(&s), 0);
	assert_int_equal(dvx_gpu_lib_unload(&lib), 0);
	assert_int_equal(dvx_gpu_close(&g), 0);
	assert_int_equal(dvx_mock_live_total(&M), 0);
}

static void test_views(void **state)
{
	struct dvx_gpu_sq sq;
	struct dvx_gpu_cq cq;

	(void)state;
	assert_int_equal(dvx_gpu_sq_view_init(&sq, &(struct dvx_gpu_sq_cfg){ 0, 0x10000, 256, 0x123,
									     64, 0x20000, 0x20008,
									     0x30000, 0x20010 }),
			 0);
	assert_int_equal(sq.version, DVX_GPU_SQ_VERSION);
	assert_int_equal(sq.sq.nwqebb, 256);
	assert_int_equal(sq.sq.flags, 0);
	assert_int_equal(sq.ctrs, 0x30000);
	assert_int_equal(dvx_gpu_sq_view_init(&sq, &(struct dvx_gpu_sq_cfg){ 0, 0x10020, 256, 1, 0,
									     8, 8, 64, 8 }),
			 -EINVAL);
	assert_int_equal(dvx_gpu_sq_view_init(&sq, &(struct dvx_gpu_sq_cfg){ 0, 0x10000, 100, 1, 0,
									     8, 8, 64, 8 }),
			 -EINVAL);
	assert_int_equal(dvx_gpu_sq_view_init(&sq, &(struct dvx_gpu_sq_cfg){ 0, 0x10000, 256, 1, 0,
									     8, 0, 64, 8 }),
			 -EINVAL);
	assert_int_equal(dvx_gpu_sq_view_init(&sq,
					      &(struct dvx_gpu_sq_cfg){ DVX_GPU_Q_NO_UAR, 0x10000,
									256, 1, 0, 8, 0, 64, 8 }),
			 0);
	assert_int_equal(dvx_gpu_sq_view_init(&sq, &(struct dvx_gpu_sq_cfg){ 0, 0x10000, 256, 1, 0,
									     8, 8, 72, 8 }),
			 -EINVAL);
	assert_int_equal(dvx_gpu_sq_view_init(&sq, &(struct dvx_gpu_sq_cfg){ 0x80, 0x10000, 256, 1,
									     0, 8, 8, 64, 8 }),
			 -EINVAL);
	assert_int_equal(dvx_gpu_cq_view_init(&cq, DVX_GPU_Q_SYS, 0x1000, 6, 7, 0), 0);
	assert_int_equal(cq.cq.log_size, 6);
	assert_int_equal(cq.cq.flags, DVX_MLX5_CQ_SYS);
	assert_null(cq.cq.dbrec);
	assert_int_equal(dvx_gpu_cq_view_init(&cq, 0, 0x1010, 6, 7, 0), -EINVAL);
	assert_int_equal(dvx_gpu_cq_view_init(&cq, 0, 0x1000, 25, 7, 0), -EINVAL);
}

static void test_hal_wrappers(void **state)
{
	const struct dvx_hal *hal = dvx_mock_hal(&M);
	struct dvx_hal_gpu_launch l;
	struct dvx_hal_gpu hg;
	int n;

	(void)state;
	memset(&hg, 0, sizeof(hg));
	assert_int_equal(dvx_hal_gpu_init(NULL, &hg), -EINVAL);
	assert_int_equal(dvx_hal_gpu_init(hal, &hg), 0);
	assert_int_equal(hg.ordinal, -1);
	assert_int_equal(dvx_hal_gpu_count(&hg, NULL), -EINVAL);
	assert_int_equal(dvx_hal_gpu_count(&hg, &n), 0);
	assert_int_equal(dvx_hal_gpu_get(&hg, -1, NULL), -EINVAL);
	assert_string_equal(hg.diag.op, "gpu_get");
	/* no device chosen yet, no context retained */
	assert_int_equal(dvx_hal_gpu_ctx_retain(&hg), -EINVAL);
	assert_int_equal(dvx_hal_gpu_ctx_set_current(&hg), -EINVAL);
	assert_int_equal(dvx_hal_gpu_get(&hg, 0, NULL), 0);
	assert_int_equal(dvx_hal_gpu_ctx_release(&hg), -EINVAL);
	assert_int_equal(dvx_hal_gpu_ctx_retain(&hg), 0);
	assert_int_equal(dvx_hal_gpu_ctx_retain(&hg), -EINVAL);
	memset(&l, 0, sizeof(l));
	assert_int_equal(dvx_hal_gpu_launch(&hg, &l), -EINVAL);
	assert_int_equal(dvx_hal_gpu_dmabuf_fd(&hg, 0, 4096, 0, &n), -EINVAL);
	assert_int_equal(dvx_hal_gpu_host_register(&hg, NULL, 8, 0, NULL), -EINVAL);
	assert_int_equal(dvx_hal_gpu_module_function(&hg, NULL, "x", NULL), -EINVAL);
	assert_int_equal(dvx_hal_gpu_ctx_release(&hg), 0);
	assert_int_equal(dvx_mock_live_total(&M), 0);

	/* a backend with an empty GPU table, and one with no GPU table at all: -ENOSYS,
	 * named */
	{
		static const struct dvx_hal_gpu_ops none;
		static const struct dvx_hal bare = { .gpu = &none, .name = "bare" };
		static const struct dvx_hal nogpu = { .name = "nogpu" };
		unsigned cnt = 5;

		assert_int_equal(dvx_hal_gpu_init(&bare, &hg), -ENOSYS);
		assert_non_null(strstr(hg.diag.msg, "bare"));
		assert_int_equal(dvx_gpu_count(&bare, &cnt), 0);
		assert_int_equal(cnt, 0);
		assert_int_equal(dvx_hal_gpu_init(&nogpu, &hg), -ENOSYS);
		assert_non_null(strstr(hg.diag.msg, "nogpu"));
		cnt = 5;
		assert_int_equal(dvx_gpu_count(&nogpu, &cnt), 0);
		assert_int_equal(cnt, 0);
	}
}

static void test_cu_errno(void **state)
{
	(void)state;
	assert_int_equal(dvx_hal_cu_errno(0), 0);
	assert_int_equal(dvx_hal_cu_errno(1), -EINVAL);
	assert_int_equal(dvx_hal_cu_errno(2), -ENOMEM);
	assert_int_equal(dvx_hal_cu_errno(100), -ENODEV);
	assert_int_equal(dvx_hal_cu_errno(34), -ENODEV);
	assert_int_equal(dvx_hal_cu_errno(209), -ENOEXEC);
	assert_int_equal(dvx_hal_cu_errno(500), -ENOENT);
	assert_int_equal(dvx_hal_cu_errno(600), -EBUSY);
	assert_int_equal(dvx_hal_cu_errno(700), -EFAULT);
	assert_int_equal(dvx_hal_cu_errno(801), -EOPNOTSUPP);
	assert_int_equal(dvx_hal_cu_errno(12345), -EIO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_open_close, setup),
		cmocka_unit_test_setup(test_no_driver, setup),
		cmocka_unit_test_setup(test_open_fault_injection, setup),
		cmocka_unit_test_setup(test_mem, setup),
		cmocka_unit_test_setup(test_share, setup),
		cmocka_unit_test_setup(test_host_register, setup),
		cmocka_unit_test_setup(test_stream_wait, setup),
		cmocka_unit_test_setup(test_lib, setup),
		cmocka_unit_test_setup(test_views, setup),
		cmocka_unit_test_setup(test_hal_wrappers, setup),
		cmocka_unit_test_setup(test_cu_errno, setup),
	};

	return cmocka_run_group_tests_name("gpu-mock", tests, NULL, NULL);
}
