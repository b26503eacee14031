// SPDX-License-Identifier: MIT
/*
 * tests/gpu/test_gpu_resident.c - queues in GPU memory, end to end on a real GPU: a QP on
 * the software NIC whose SQ ring, doorbell records and CQ live in device memory
 * (cuMemAlloc), which the software NIC reaches only through cuMemcpyDtoH/HtoD as a NIC's
 * DMA would (dvx_sim_dmabuf_export_dma(), docs/sim.md "Queues in GPU memory"). Kernels
 * post RDMA WRITEs at thread, warp and block scope with GPU-scope ordering (the view
 * without DVX_GPU_Q_SYS: what NVSHMEM does for queues in GPU memory), ring the UAR (host
 * memory registered for the GPU, as a NIC's UAR is behind PCIe), and a poller kernel
 * consumes the CQ in device memory and frees the ring's slots; the ring is 16 times
 * smaller than the work, so slots are recycled through completions all along. Then a
 * bad rkey: its error CQE reaches the GPU poller as -EPERM with its syndrome.
 * Checked on the host: every byte moved, no failed copy, no doorbell fault. Needs a GPU;
 * skips (exit 77) without one ('make gpu-check' fails instead).
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "../lib/dvx_test.h"

#include <dvx/gpu/gpu.h>
#include <dvx/gpu/queue.h>
#include <dvx/mlx5/cqe.h>
#include <dvx/nic/cq.h>
#include <dvx/nic/mr.h>
#include <dvx/nic/nic.h>
#include <dvx/nic/qp.h>
#include <dvx/nic/umem.h>
#include <dvx/hal/sim.h>

extern const unsigned char dvx_fatbin_tests_gpu_resident_kernels[];
extern const size_t dvx_fatbin_tests_gpu_resident_kernels_len;

#define SEC 1000000000ull
#define SQ_DEPTH 256u
#define CQ_LOG 9u		/* 512 CQEs */
#define NIDS 4096u		/* WRITE ids over all variants */
/* device memory: the queues (exported to the software NIC), then scratch it never sees */
#define Q_CQ 0u			/* 512 x 64 B */
#define Q_SQ (64u << 10)	/* SQ_DEPTH WQEBBs */
#define Q_CQDBR (128u << 10)
#define Q_SQDBR (Q_CQDBR + 64u)
#define Q_LEN (160u << 10)
#define S_CTRS (192u << 10)	/* struct dvx_mlx5_sq_ctrs */
#define S_CI (S_CTRS + 4096u)	/* the SQ's consumer index */
#define S_POLL (S_CI + 64u)	/* the poller's CQ index and WQEBBs freed */
#define S_RC (S_CI + 128u)
#define S_INFO (S_CI + 256u)
#define S_STATUS (256u << 10)	/* int32 per poster thread */
#define D_LEN (512u << 10)

static struct {
	const struct dvx_hal *cuda;
	struct dvx_gpu g;	/* the kernels' */
	struct dvx_gpu gd;	/* the software NIC's copy engine (its own diagnostics) */
	struct dvx_gpu_module mod;
	void *k_post, *k_poll;
	struct dvx_gpu_stream sp, sq;	/* posters, poller */
	struct dvx_gpu_mem dm;
	struct dvx_gpu_hostreg ureg;
	void *fab_mem;
	struct dvx_sim_fabric *fab;
	struct dvx_nic nic[2];
	struct dvx_umem du, hu;
	struct dvx_mr src_mr, dst_mr;
	struct dvx_cq dcq, pcq;
	struct dvx_qp dqp, pqp;
	uint8_t *hmem, *src, *dst;
	int32_t status[64 * 1024];
	unsigned dma_calls;
} E;

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * SEC + (uint64_t)t.tv_nsec;
}

static int skip_or_fail(const char *why)
{
	const char *req = getenv("DVX_GPU_REQUIRED");

	printf("%s; run 'make gpu-check' on a machine with an NVIDIA GPU and driver\n", why);
	return req && *req == '1' ? 1 : DVX_TEST_SKIP_ALL;
}

/* the software NIC's DMA: called on its progress thread with the fabric locked */
static int dma_read(void *arg, void *dst, uint64_t src, uint64_t len)
{
	(void)arg;
	E.dma_calls++;
	if (dvx_gpu_make_current(&E.gd))
		return -EIO;
	return dvx_gpu_memcpy_dtoh(&E.gd, dst, src, len);
}

static int dma_write(void *arg, uint64_t dst, const void *src, uint64_t len)
{
	(void)arg;
	E.dma_calls++;
	if (dvx_gpu_make_current(&E.gd))
		return -EIO;
	return dvx_gpu_memcpy_htod(&E.gd, dst, src, len);
}

static const struct dvx_sim_dma dma = { dma_read, dma_write, NULL };

#define NIC_OK(n, x)                                                                     \
	do {                                                                             \
		int e_ = (x);                                                            \
		if (e_)                                                                  \
			fail_msg("%s: %d (%s: %s)", #x, e_, E.nic[n].hal.diag.op,        \
				 E.nic[n].hal.diag.msg);                                \
	} while (0)
#define GPU_OK(x)                                                                        \
	do {                                                                             \
		int e_ = (x);                                                            \
		if (e_)                                                                  \
			fail_msg("%s: %d (%s: %s)", #x, e_, E.g.hg.diag.op, E.g.hg.diag.msg); \
	} while (0)

static void world_up(void)
{
	struct dvx_sim_fabric_cfg fc;
	struct dvx_sim_nic_cfg nc;
	struct dvx_nic_cfg na;
	struct dvx_umem_cfg ua;
	struct dvx_mr_cfg ma;
	struct dvx_cq_cfg ca;
	struct dvx_qp_cfg qa;
	struct dvx_qp_connect_cfg cn;
	struct dvx_mem_req wq, dbr;
	size_t sz;
	uint8_t *init;
	int i, fd;

	dvx_sim_fabric_cfg_default(&fc);
	fc.max_nics = 2;
	sz = dvx_sim_fabric_mem_size(&fc);
	E.fab_mem = calloc(1, sz);
	assert_non_null(E.fab_mem);
	assert_int_equal(dvx_sim_fabric_init(E.fab_mem, sz, &fc, &E.fab), 0);
	for (i = 0; i < 2; i++) {
		dvx_sim_nic_cfg_default(&nc, (unsigned)i);
		assert_int_equal(dvx_sim_add_nic(E.fab, &nc), i);
	}
	assert_int_equal(dvx_sim_start(E.fab), 0);
	for (i = 0; i < 2; i++) {
		memset(&na, 0, sizeof(na));
		na.name = i ? "sim_1" : "sim_0";
		NIC_OK(i, dvx_nic_open(&E.nic[i], dvx_sim_hal(E.fab), &na));
	}

	/* device memory: zeroed, the CQ's entries INVALID/owner 1 (the caller's part for a
	 * ring the CPU cannot write: DVX_CQ_F_PREINIT, DVX_QP_F_PREINIT) */
	GPU_OK(dvx_gpu_mem_alloc(&E.g, D_LEN, 0, &E.dm));
	init = calloc(1, D_LEN);
	assert_non_null(init);
	dvx_mlx5_cq_ring_init(init + Q_CQ, CQ_LOG);
	dvx_mlx5_cq_dbr_init((dvx_be32 *)(void *)(init + Q_CQDBR));
	GPU_OK(dvx_gpu_memcpy_htod(&E.g, E.dm.dptr, init, D_LEN));
	free(init);
	assert_int_equal(dvx_sim_dmabuf_export_dma(E.fab, E.dm.dptr, Q_LEN, &dma, &fd), 0);
	memset(&ua, 0, sizeof(ua));
	ua.addr = (void *)(uintptr_t)E.dm.dptr;	/* the address the kernels use */
	ua.len = Q_LEN;
	ua.flags = DVX_UMEM_F_DMABUF;
	ua.dmabuf_fd = fd;
	NIC_OK(0, dvx_umem_reg(&E.nic[0], &ua, &E.du));
	memset(&ca, 0, sizeof(ca));
	ca.depth = 1u << CQ_LOG;
	ca.flags = DVX_CQ_F_PREINIT;
	ca.ring_umem = &E.du;
	ca.ring_offset = Q_CQ;
	ca.dbr_umem = &E.du;
	ca.dbr_offset = Q_CQDBR;
	NIC_OK(0, dvx_cq_create(&E.nic[0], &ca, &E.dcq));
	memset(&qa, 0, sizeof(qa));
	qa.sq_depth = SQ_DEPTH;
	qa.send_cq = &E.dcq;
	qa.flags = DVX_QP_F_PREINIT;
	NIC_OK(0, dvx_qp_mem_req(&qa, &wq, &dbr));
	assert_true(wq.bytes <= Q_CQDBR - Q_SQ);
	qa.wq_umem = &E.du;
	qa.wq_offset = Q_SQ;
	qa.dbr_umem = &E.du;
	qa.dbr_offset = Q_SQDBR;
	NIC_OK(0, dvx_qp_create(&E.nic[0], &qa, &E.dqp));

	/* the peer: an ordinary QP in host memory on the other NIC; the data in host memory */
	E.hmem = aligned_alloc(4096, 1u << 20);
	E.src = aligned_alloc(4096, NIDS * 8);
	E.dst = aligned_alloc(4096, NIDS * 8);
	assert_true(E.hmem && E.src && E.dst);
	memset(E.hmem, 0, 1u << 20);
	for (i = 0; i < (int)NIDS; i++) {
		uint64_t v = 0x5157000000000000ull | (uint64_t)i;

		memcpy(E.src + 8 * i, &v, 8);
	}
	memset(E.dst, 0, NIDS * 8);
	memset(&ua, 0, sizeof(ua));
	ua.addr = E.hmem;
	ua.len = 1u << 20;
	NIC_OK(1, dvx_umem_reg(&E.nic[1], &ua, &E.hu));
	memset(&ca, 0, sizeof(ca));
	ca.depth = 64;
	ca.ring_umem = &E.hu;
	ca.dbr_umem = &E.hu;
	ca.dbr_offset = 512u << 10;
	NIC_OK(1, dvx_cq_create(&E.nic[1], &ca, &E.pcq));
	memset(&qa, 0, sizeof(qa));
	qa.sq_depth = 64;
	qa.send_cq = &E.pcq;
	qa.wq_umem = &E.hu;
	qa.wq_offset = 64u << 10;
	qa.dbr_umem = &E.hu;
	qa.dbr_offset = (512u << 10) + 64;
	NIC_OK(1, dvx_qp_create(&E.nic[1], &qa, &E.pqp));
	memset(&ma, 0, sizeof(ma));
	ma.addr = E.src;
	ma.len = NIDS * 8;
	ma.access = DVX_ACCESS_LOCAL_WRITE;
	NIC_OK(0, dvx_mr_reg(&E.nic[0], &ma, &E.src_mr));
	ma.addr = E.dst;
	ma.access = DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_WRITE;
	NIC_OK(1, dvx_mr_reg(&E.nic[1], &ma, &E.dst_mr));
	dvx_qp_connect_cfg_init(&cn);
	cn.access = DVX_ACCESS_REMOTE_WRITE;
	NIC_OK(0, dvx_qp_connect_pair(&E.dqp, &E.pqp, &cn));
}

static void world_down(void)
{
	struct dvx_sim_stats st;

	assert_int_equal(dvx_sim_stop(E.fab), 0);
	NIC_OK(0, dvx_qp_destroy(&E.dqp));
	NIC_OK(1, dvx_qp_destroy(&E.pqp));
	NIC_OK(0, dvx_cq_destroy(&E.dcq));
	NIC_OK(1, dvx_cq_destroy(&E.pcq));
	NIC_OK(0, dvx_mr_dereg(&E.src_mr));
	NIC_OK(1, dvx_mr_dereg(&E.dst_mr));
	NIC_OK(0, dvx_umem_dereg(&E.du));
	NIC_OK(1, dvx_umem_dereg(&E.hu));
	NIC_OK(0, dvx_nic_close(&E.nic[0]));
	NIC_OK(1, dvx_nic_close(&E.nic[1]));
	assert_int_equal(dvx_sim_get_stats(E.fab, &st), 0);
	printf("software NIC: %llu WQEs, %llu CQEs, %llu copies from and %llu to device memory, "
	       "%llu failed\n", (unsigned long long)st.wqes_executed,
	       (unsigned long long)st.cqes_written, (unsigned long long)st.dma_reads,
	       (unsigned long long)st.dma_writes, (unsigned long long)st.dma_errors);
	assert_int_equal(st.dma_errors, 0);
	assert_int_equal(dvx_sim_fini(E.fab), 0);	/* -EPROTO: an unread doorbell fault */
	free(E.fab_mem);
	GPU_OK(dvx_gpu_host_unregister(&E.ureg));
	GPU_OK(dvx_gpu_mem_free(&E.dm));
	free(E.hmem);
	free(E.src);
	free(E.dst);
}

struct variant {
	const char *name;
	uint32_t scope, grid, block, per;
};

static const struct variant variants[] = {
	{ "thread", 0, 1, 64, 8 },	/* 512 WQEs */
	{ "warp", 1, 2, 64, 8 },	/* 1024 */
	{ "block", 2, 4, 128, 4 },	/* 2048 */
};

static void test_resident(void **state)
{
	struct dvx_gpu_sq sv;
	struct dvx_gpu_cq cv;
	struct dvx_mlx5_cqe_info info;
	uint64_t id0 = 0, timeout = 20 * SEC, laddr, raddr, ci, pollst, rcp, infop, statp;
	uint32_t lkey, rkey, v, i;
	int32_t rc;
	int err;

	(void)state;
	world_up();
	/* the kernels' views: ring, record and counters in device memory, GPU scope */
	GPU_OK(dvx_gpu_host_register(&E.g, E.dqp.sq.uar_reg, 8, 0, &E.ureg));
	err = dvx_gpu_sq_view_init(&sv, &(struct dvx_gpu_sq_cfg){
						0, (uint64_t)(uintptr_t)E.dqp.sq.wq.buf,
						E.dqp.sq.nwqebb, E.dqp.qpn, E.dqp.sq.wq.max_inline,
						(uint64_t)(uintptr_t)E.dqp.sq.dbrec, E.ureg.dptr,
						E.dm.dptr + S_CTRS, E.dm.dptr + S_CI });
	assert_int_equal(err, 0);
	assert_int_equal(dvx_gpu_cq_view_init(&cv, 0, (uint64_t)(uintptr_t)E.dcq.ring, CQ_LOG,
					      E.dcq.cqn, (uint64_t)(uintptr_t)E.dcq.dbrec), 0);
	assert_true(sv.sq.wq.buf == (uint8_t *)(uintptr_t)(E.dm.dptr + Q_SQ));
	laddr = (uint64_t)(uintptr_t)E.src;
	raddr = (uint64_t)(uintptr_t)E.dst;
	lkey = E.src_mr.lkey;
	rkey = E.dst_mr.rkey;
	ci = E.dm.dptr + S_POLL;
	pollst = E.dm.dptr + S_POLL + 8;
	rcp = E.dm.dptr + S_RC;
	infop = E.dm.dptr + S_INFO;
	statp = E.dm.dptr + S_STATUS;

	for (v = 0; v < sizeof(variants) / sizeof(variants[0]); v++) {
		const struct variant *x = &variants[v];
		uint32_t nthr = x->grid * x->block, n = nthr * x->per;
		void *pargs[] = { &sv, (void *)&x->scope, (void *)&x->per, &id0, &laddr, &lkey,
				  &raddr, &rkey, &timeout, &statp };
		void *qargs[] = { &cv, &sv, &ci, &pollst, &n, &timeout, &rcp, &infop };
		uint64_t t0 = now_ns(), t1;

		GPU_OK(dvx_gpu_launch(&E.g, E.k_poll, 1, 1, 0, &E.sq, qargs));
		GPU_OK(dvx_gpu_launch(&E.g, E.k_post, x->grid, x->block, 0, &E.sp, pargs));
		GPU_OK(dvx_gpu_stream_wait(&E.sp, 60 * SEC));
		GPU_OK(dvx_gpu_stream_wait(&E.sq, 60 * SEC));
		t1 = now_ns();
		GPU_OK(dvx_gpu_memcpy_dtoh(&E.g, E.status, statp, nthr * 4ull));
		for (i = 0; i < nthr; i++)
			if (E.status[i])
				fail_msg("%s: poster %u: %d", x->name, i, E.status[i]);
		GPU_OK(dvx_gpu_memcpy_dtoh(&E.g, &rc, rcp, 4));
		if (rc != 1) {
			GPU_OK(dvx_gpu_memcpy_dtoh(&E.g, &info, infop, sizeof(info)));
			fail_msg("%s: poller: %d (syndrome %#x, wqe %u)", x->name, rc, info.syndrome,
				 info.wqe_counter);
		}
		for (i = 0; i < n; i++)
			if (memcmp(E.dst + 8 * (id0 + i), E.src + 8 * (id0 + i), 8))
				fail_msg("%s: WRITE %llu did not land", x->name,
					 (unsigned long long)(id0 + i));
		printf("  %-6s %ux%u x %u: %u WRITEs through a %u-WQEBB ring in GPU memory, "
		       "CQ polled on the GPU, %.1f ms\n", x->name, x->grid, x->block, x->per, n,
		       SQ_DEPTH, (double)(t1 - t0) / 1e6);
		id0 += n;
	}
	{
		/* nothing past the last id was written */
		static const uint8_t zero[8];

		assert_memory_equal(E.dst + 8 * id0, zero, 8);
	}

	/* a bad rkey: the error CQE, written into device memory, reaches the GPU poller */
	{
		uint32_t scope = 0, per = 1, one = 1, bad = rkey ^ 0x100;
		uint64_t id = id0;
		void *pargs[] = { &sv, &scope, &per, &id, &laddr, &lkey, &raddr, &bad, &timeout,
				  &statp };
		void *qargs[] = { &cv, &sv, &ci, &pollst, &one, &timeout, &rcp, &infop };

		GPU_OK(dvx_gpu_launch(&E.g, E.k_poll, 1, 1, 0, &E.sq, qargs));
		GPU_OK(dvx_gpu_launch(&E.g, E.k_post, 1, 1, 0, &E.sp, pargs));
		GPU_OK(dvx_gpu_stream_wait(&E.sp, 60 * SEC));
		GPU_OK(dvx_gpu_stream_wait(&E.sq, 60 * SEC));
		GPU_OK(dvx_gpu_memcpy_dtoh(&E.g, &rc, rcp, 4));
		GPU_OK(dvx_gpu_memcpy_dtoh(&E.g, &info, infop, sizeof(info)));
		printf("  bad rkey: the GPU poller got %d, syndrome %#x, vendor %#x, wqe %u\n", rc,
		       info.syndrome, info.vendor_syndrome, info.wqe_counter);
		assert_int_equal(rc, -EPERM);
		assert_int_equal(info.wqe_counter, (uint16_t)id0);
	}
	world_down();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resident),
	};
	unsigned n = 0;
	int rc;

	E.cuda = dvx_hal_cuda();
	if (!E.cuda)
		return skip_or_fail("libdvx was built without CUDA (CONFIG_DVX_GPU=n)");
	if (dvx_fatbin_tests_gpu_resident_kernels_len == 0)
		return skip_or_fail("the test kernels were built without nvcc");
	if (dvx_gpu_count(E.cuda, &n) || n == 0)
		return skip_or_fail("no NVIDIA GPU or driver found");
	if (dvx_gpu_open(&E.g, E.cuda, 0, NULL) || dvx_gpu_open(&E.gd, E.cuda, 0, NULL) ||
	    dvx_gpu_make_current(&E.g) ||
	    dvx_gpu_module_load(&E.g, dvx_fatbin_tests_gpu_resident_kernels,
				dvx_fatbin_tests_gpu_resident_kernels_len, &E.mod) ||
	    dvx_gpu_module_function(&E.mod, "r_post", &E.k_post) ||
	    dvx_gpu_module_function(&E.mod, "r_poll", &E.k_poll) ||
	    dvx_gpu_stream_create(&E.g, &E.sp) || dvx_gpu_stream_create(&E.g, &E.sq)) {
		fprintf(stderr, "gpu set-up failed: %s: %s\n", E.g.hg.diag.op, E.g.hg.diag.msg);
		return 1;
	}
	printf("gpu: %s (%s) sm_%d%d, %u SMs\n", E.g.attr.name, E.g.attr.pci, E.g.attr.cc_major,
	       E.g.attr.cc_minor, E.g.attr.sm_count);
	rc = cmocka_run_group_tests_name("gpu-resident", tests, NULL, NULL);
	dvx_gpu_stream_destroy(&E.sq);
	dvx_gpu_stream_destroy(&E.sp);
	dvx_gpu_module_unload(&E.mod);
	dvx_gpu_close(&E.gd);
	dvx_gpu_close(&E.g);
	return rc;
}
