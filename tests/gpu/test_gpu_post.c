// SPDX-License-Identifier: MIT
/*
 * GPU posting on a real GPU (make gpu-check): kernels post NOP and RDMA WRITE WQEs
 * into a host-resident ring (registered with the GPU) at thread, warp and block scope,
 * 1..128 blocks sharing one SQ, while a host thread plays the NIC's consumer: it
 * follows the doorbell record, decodes and checks every WQE below it (mlx5 decoder),
 * checks the UAR doorbell words, zeroes consumed slots and advances the consumer
 * index. Checked: no WQE lost or duplicated, nothing below the doorbell record
 * unbuilt (in-order publish), doorbell values, a ring that never drains giving
 * -ETIMEDOUT with nothing claimed, and an error CQE surfacing on the GPU.
 *
 * Without a GPU or driver the binary skips itself (exit 77); with DVX_GPU_REQUIRED=1
 * (make gpu-check) it fails instead.
 */
#include <errno.h>
#include <pthread.h>
#include <unistd.h>

#include "../lib/dvx_test.h"

#include <dvx/gpu/gpu.h>
#include <dvx/gpu/queue.h>
#include <dvx/mlx5/decode.h>
#include <dvx/mlx5/cqe.h>
#include <dvx/mlx5/sq.h>

extern const unsigned char dvx_fatbin_tests_gpu_post_kernels[];
extern const size_t dvx_fatbin_tests_gpu_post_kernels_len;

#define NWQEBB 256u
#define QPN 0x1a2b3u
#define MAX_THREADS (128u * 256u)
#define CQ_LOG 6u
#define SEC 1000000000ull

static struct {
	const struct dvx_hal *hal;
	struct dvx_gpu g;
	struct dvx_gpu_lib lib;
	struct dvx_gpu_module mod;
	void *k_write, *k_faa, *k_timeout, *k_cq;
	struct dvx_gpu_stream s;
	struct dvx_hal_mem ring_mem, ctl_mem, cq_mem;
	struct dvx_gpu_hostreg ring_reg, ctl_reg, cq_reg;
	struct dvx_gpu_mem dmem;	/* ctrs at 0, status from 4096, cqe infos from 1 MiB */
	struct dvx_gpu_sq sq;
	uint8_t *ring;
	uint32_t *dbrec;		/* ctl + 0 */
	uint64_t *uar;			/* ctl + 64 */
	uint64_t *ci;			/* ctl + 128 */
} E;

#define STATUS_OFF 4096u
#define INFO_OFF (1u << 20)

static void check(int err, const char *what)
{
	if (err) {
		fprintf(stderr, "%s: %d (%s: %s)\n", what, err, E.g.hg.diag.op, E.g.hg.diag.msg);
		exit(1);
	}
}

static int skip_or_fail(const char *why)
{
	const char *req = getenv("DVX_GPU_REQUIRED");

	printf("%s; run 'make gpu-check' on a machine with an NVIDIA GPU and driver\n", why);
	return req && *req == '1' ? 1 : DVX_TEST_SKIP_ALL;
}

/* ---- the host thread that plays the NIC's consumer ---- */

struct nic {
	pthread_t thr;
	int stop;
	int recycle;		/* advance the consumer index (0: the ring never drains) */
	uint8_t opcode;		/* DVX_MLX5_OPCODE_NOP or _RDMA_WRITE */
	uint64_t nids;		/* RDMA WRITE ids are 0 .. nids-1 */
	uint8_t *seen;
	uint64_t consumed;	/* WQEBBs below the doorbell record, checked */
	uint64_t uar_pi;	/* last doorbell producer index seen in the UAR word */
	uint64_t uar_changes;
	int nerr;
	char err[256];
};

static void nic_fail(struct nic *n, const char *fmt, uint64_t a, uint64_t b)
{
	if (!n->nerr++)
		snprintf(n->err, sizeof(n->err), fmt, (unsigned long long)a, (unsigned long long)b);
}

static void nic_check_wqe(struct nic *n, uint64_t idx)
{
	struct dvx_mlx5_wqe_desc d;
	int w = dvx_mlx5_wqe_decode(E.ring, NWQEBB * 64, (uint32_t)idx, &d);

	if (w != 1) {
		nic_fail(n, "WQE %llu below the doorbell record does not decode (%lld)", idx,
			 (uint64_t)(int64_t)w);
		return;
	}
	if (d.idx != (uint16_t)idx || d.qpn != QPN || d.opcode != n->opcode)
		nic_fail(n, "WQE %llu: index/qpn/opcode wrong (idx %llu)", idx, d.idx);
	if (n->opcode == DVX_MLX5_OPCODE_RDMA_WRITE) {
		uint64_t id = d.sge[0].addr;

		if (d.nsge != 1 || d.rkey != 0x1234 || d.sge[0].lkey != 0x55 ||
		    d.raddr != 0x100000 + 8 * id || d.sge[0].length != 8 || id >= n->nids)
			nic_fail(n, "WQE %llu: fields wrong (id %llu)", idx, id);
		else
			n->seen[id]++;
	}
	memset(E.ring + (idx & (NWQEBB - 1)) * 64, 0, 64);	/* a stale WQE cannot pass again */
}

static int nic_poll(struct nic *n)
{
	uint32_t rec = dvx_be32_to_cpu(__atomic_load_n(&E.dbrec[DVX_MLX5_SND_DBR], __ATOMIC_ACQUIRE));
	uint64_t pi = n->consumed + (uint16_t)((uint16_t)rec - (uint16_t)n->consumed);
	uint64_t db = __atomic_load_n(E.uar, __ATOMIC_ACQUIRE);

	if (db) {
		uint64_t v = dvx_be64_to_cpu(db);
		uint16_t upi = (uint16_t)(v >> 40);
		uint64_t up = n->uar_pi + (int16_t)(upi - (uint16_t)n->uar_pi);

		if ((uint32_t)v >> 8 != QPN || (v & 0xff000000ffull))
			nic_fail(n, "UAR word %llx malformed (qpn %llx)", v, QPN);
		if (up < n->uar_pi)
			nic_fail(n, "UAR producer index went back from %llu to %llu", n->uar_pi, up);
		if (up != n->uar_pi)
			n->uar_changes++;
		n->uar_pi = up;
	}
	if (pi - n->consumed > NWQEBB) {
		nic_fail(n, "doorbell record %llu runs past the ring (consumed %llu)", pi, n->consumed);
		return 0;
	}
	if (pi == n->consumed)
		return 0;
	for (; n->consumed < pi; n->consumed++)
		nic_check_wqe(n, n->consumed);
	if (n->recycle)
		__atomic_store_n(E.ci, n->consumed, __ATOMIC_RELEASE);
	return 1;
}

static void *nic_main(void *arg)
{
	struct nic *n = (struct nic *)arg;

	while (!__atomic_load_n(&n->stop, __ATOMIC_ACQUIRE))
		nic_poll(n);
	while (nic_poll(n))	/* what was published before the stop */
		;
	return NULL;
}

/* fresh ring, records and counters; start the consumer */
static void reset_sq(struct nic *n, uint8_t opcode, uint64_t nids, int recycle)
{
	static const uint8_t zero[DVX_MLX5_SQ_CTRS_BYTES];

	memset(E.ring, 0, NWQEBB * 64);
	memset(E.ctl_mem.addr, 0, 4096);
	check(dvx_gpu_memcpy_htod(&E.g, E.dmem.dptr, zero, sizeof(zero)), "zero ctrs");
	memset(n, 0, sizeof(*n));
	n->opcode = opcode;
	n->nids = nids;
	n->recycle = recycle;
	if (nids) {
		n->seen = calloc(nids, 1);
		assert_non_null(n->seen);
	}
	assert_int_equal(pthread_create(&n->thr, NULL, nic_main, n), 0);
}

static void finish(struct nic *n, uint64_t expect, const char *what)
{
	uint64_t i;

	__atomic_store_n(&n->stop, 1, __ATOMIC_RELEASE);
	pthread_join(n->thr, NULL);
	if (n->nerr)
		fail_msg("%s: %d consumer errors; first: %s", what, n->nerr, n->err);
	assert_int_equal(n->consumed, expect);
	/* the last doorbell covers everything: record and register hold the final index */
	assert_int_equal(dvx_be32_to_cpu(E.dbrec[DVX_MLX5_SND_DBR]), expect & 0xffff);
	assert_int_equal(*E.uar, dvx_mlx5_sq_db_value((uint32_t)expect, QPN));
	for (i = 0; i < n->nids; i++)
		if (n->seen[i] != 1)
			fail_msg("%s: WQE id %llu seen %u times", what, (unsigned long long)i,
				 n->seen[i]);
	printf("  %s: %llu WQEs, %llu doorbell values seen by the consumer\n", what,
	       (unsigned long long)expect, (unsigned long long)n->uar_changes);
	free(n->seen);
}

static void read_status(uint32_t nthreads, int32_t *st)
{
	check(dvx_gpu_memcpy_dtoh(&E.g, st, E.dmem.dptr + STATUS_OFF, nthreads * 4), "status");
}

static void wait_stream(void)
{
	check(dvx_gpu_stream_wait(&E.s, 120 * SEC), "stream wait");
}

static void run_write(uint32_t scope, uint32_t grid, uint32_t block, uint32_t per)
{
	static int32_t st[MAX_THREADS];
	uint64_t timeout = 10 * SEC, status = E.dmem.dptr + STATUS_OFF;
	uint32_t i, nthr = grid * block;
	void *args[] = { &E.sq, &scope, &per, &timeout, &status };
	char what[64];
	struct nic n;

	if (getenv("DVX_GPU_TEST_QUICK")) {	/* under compute-sanitizer: small grids */
		grid = grid > 4 ? 4 : grid;
		per = per > 2 ? 2 : per;
		nthr = grid * block;
	}
	snprintf(what, sizeof(what), "write scope %u grid %u block %u x%u", scope, grid, block, per);
	reset_sq(&n, DVX_MLX5_OPCODE_RDMA_WRITE, (uint64_t)nthr * per, 1);
	check(dvx_gpu_launch(&E.g, E.k_write, grid, block, 0, &E.s, args), "launch");
	wait_stream();
	finish(&n, (uint64_t)nthr * per, what);
	read_status(nthr, st);
	for (i = 0; i < nthr; i++)
		assert_int_equal(st[i], 0);
}

static void test_thread_scope(void **state)
{
	(void)state;
	run_write(0, 1, 1, 512);
	run_write(0, 1, 64, 8);
	run_write(0, 8, 64, 8);
	run_write(0, 128, 128, 4);
}

static void test_warp_scope(void **state)
{
	(void)state;
	run_write(1, 1, 32, 16);
	run_write(1, 128, 128, 4);
}

static void test_block_scope(void **state)
{
	(void)state;
	run_write(2, 1, 256, 4);
	run_write(2, 128, 256, 2);
	run_write(2, 16, 80, 3);	/* a block with a partial last warp */
}

static void test_faa(void **state)
{
	static int32_t st[MAX_THREADS];
	uint32_t grid = 64, block = 64, per = 4, i;
	uint64_t timeout = 10 * SEC, status = E.dmem.dptr + STATUS_OFF;
	void *args[] = { &E.sq, &per, &timeout, &status };
	struct nic n;

	(void)state;
	reset_sq(&n, DVX_MLX5_OPCODE_RDMA_WRITE, (uint64_t)grid * block * per, 1);
	check(dvx_gpu_launch(&E.g, E.k_faa, grid, block, 0, &E.s, args), "launch");
	wait_stream();
	finish(&n, (uint64_t)grid * block * per, "fetch-add reservations");
	read_status(grid * block, st);
	for (i = 0; i < grid * block; i++)
		assert_int_equal(st[i], 0);
}

static void test_lib_nop(void **state)
{
	static int32_t st[MAX_THREADS];
	uint32_t scope, i;
	struct nic n;

	(void)state;
	for (scope = 0; scope <= 2; scope++) {
		reset_sq(&n, DVX_MLX5_OPCODE_NOP, 0, 1);
		check(dvx_gpu_lib_post_nop(&E.lib, &E.s, &E.sq,
					   &(struct dvx_gpu_nop_cfg){ (enum dvx_gpu_scope)scope, 32,
								      128, 4, 10 * SEC,
								      E.dmem.dptr + STATUS_OFF }),
		      "post_nop");
		wait_stream();
		finish(&n, 32 * 128 * 4, scope == 0 ? "lib NOP thread" :
				     scope == 1 ? "lib NOP warp" : "lib NOP block");
		read_status(32 * 128, st);
		for (i = 0; i < 32 * 128; i++)
			assert_int_equal(st[i], 0);
	}
}

static void test_timeout(void **state)
{
	uint32_t n_post = NWQEBB + 1, i;
	uint64_t timeout = 2000000, status = E.dmem.dptr + STATUS_OFF;	/* 2 ms */
	void *args[] = { &E.sq, &n_post, &timeout, &status };
	struct dvx_mlx5_sq_ctrs ctrs;
	int32_t st[NWQEBB + 1];
	struct nic n;

	(void)state;
	reset_sq(&n, DVX_MLX5_OPCODE_NOP, 0, 0);	/* the consumer never frees a slot */
	check(dvx_gpu_launch(&E.g, E.k_timeout, 1, 1, 0, &E.s, args), "launch");
	wait_stream();
	finish(&n, NWQEBB, "timeout");
	read_status(n_post, st);
	for (i = 0; i < NWQEBB; i++)
		assert_int_equal(st[i], 0);
	assert_int_equal(st[NWQEBB], -ETIMEDOUT);
	/* the timed-out post claimed nothing */
	check(dvx_gpu_memcpy_dtoh(&E.g, &ctrs, E.dmem.dptr, sizeof(ctrs)), "ctrs");
	assert_int_equal(ctrs.resv, NWQEBB);
	assert_int_equal(ctrs.ready, NWQEBB);
	assert_int_equal(ctrs.db_pi, NWQEBB);
}

static void write_cqe(uint8_t *buf, uint32_t idx, uint8_t opcode, uint8_t syndrome)
{
	struct dvx_mlx5_cqe64 *c = dvx_mlx5_cqe_at(buf, CQ_LOG, idx);
	uint8_t op_own = (uint8_t)(opcode << 4) | ((idx >> CQ_LOG) & 1);

	memset(c, 0, 63);
	c->sop_drop_qpn = dvx_cpu_to_be32((uint32_t)DVX_MLX5_OPCODE_RDMA_WRITE << 24 | QPN);
	c->wqe_counter = dvx_cpu_to_be16((uint16_t)idx);
	if (opcode == DVX_MLX5_CQE_REQ_ERR) {
		struct dvx_mlx5_err_cqe *e = (struct dvx_mlx5_err_cqe *)(void *)c;

		e->syndrome = syndrome;
		e->vendor_err_synd = 0x88;
	}
	/* the owner byte last: the poller reads the rest only after it */
	__atomic_store_n(&c->op_own, op_own, __ATOMIC_RELEASE);
}

static void test_cq_error(void **state)
{
	struct dvx_mlx5_cqe_info info[3];
	uint32_t n = 3;
	uint64_t timeout = 5 * SEC, rc_d = E.dmem.dptr + STATUS_OFF, info_d = E.dmem.dptr + INFO_OFF;
	struct dvx_gpu_cq cq;
	int32_t rc[3];
	void *args[] = { &cq, &n, &timeout, &rc_d, &info_d };
	uint8_t *buf = (uint8_t *)E.cq_mem.addr;

	(void)state;
	dvx_mlx5_cq_ring_init(buf, CQ_LOG);
	check(dvx_gpu_cq_view_init(&cq, DVX_GPU_Q_SYS, E.cq_reg.dptr, CQ_LOG, 0x77, 0), "cq view");
	/* the third poll must time out: make that quick, the first two come while polling */
	timeout = 2 * SEC;
	check(dvx_gpu_launch(&E.g, E.k_cq, 1, 1, 0, &E.s, args), "launch");
	usleep(20000);
	write_cqe(buf, 0, DVX_MLX5_CQE_REQ, 0);
	usleep(5000);
	write_cqe(buf, 1, DVX_MLX5_CQE_REQ_ERR, DVX_MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
	wait_stream();
	check(dvx_gpu_memcpy_dtoh(&E.g, rc, rc_d, sizeof(rc)), "rc");
	check(dvx_gpu_memcpy_dtoh(&E.g, info, info_d, sizeof(info)), "info");
	assert_int_equal(rc[0], 1);
	assert_int_equal(info[0].opcode, DVX_MLX5_CQE_REQ);
	assert_int_equal(info[0].qpn, QPN);
	assert_int_equal(rc[1], -EPERM);	/* an error CQE is an error, never a completion */
	assert_int_equal(info[1].is_error, 1);
	assert_int_equal(info[1].syndrome, DVX_MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
	assert_int_equal(info[1].vendor_syndrome, 0x88);
	assert_int_equal(info[1].wqe_counter, 1);
	assert_int_equal(rc[2], -ETIMEDOUT);
}

static int env_up(void)
{
	unsigned n = 0;
	int err;

	E.hal = dvx_hal_cuda();
	if (!E.hal)
		return skip_or_fail("libdvx was built without CUDA (CONFIG_DVX_GPU=n)");
	if (dvx_fatbin_tests_gpu_post_kernels_len == 0)
		return skip_or_fail("the test kernels were built without nvcc");
	err = dvx_gpu_count(E.hal, &n);
	if (err || n == 0)
		return skip_or_fail("no NVIDIA GPU or driver found");
	check(dvx_gpu_open(&E.g, E.hal, 0, NULL), "gpu open");
	printf("gpu: %s (%s) sm_%d%d, %u SMs, driver %d\n", E.g.attr.name, E.g.attr.pci,
	       E.g.attr.cc_major, E.g.attr.cc_minor, E.g.attr.sm_count, E.g.attr.driver_version);
	check(dvx_gpu_lib_load(&E.g, &E.lib), "lib load");
	check(dvx_gpu_module_load(&E.g, dvx_fatbin_tests_gpu_post_kernels,
				  dvx_fatbin_tests_gpu_post_kernels_len, &E.mod), "module load");
	check(dvx_gpu_module_function(&E.mod, "t_post_write", &E.k_write), "k_write");
	check(dvx_gpu_module_function(&E.mod, "t_post_write_faa", &E.k_faa), "k_faa");
	check(dvx_gpu_module_function(&E.mod, "t_post_until_timeout", &E.k_timeout), "k_timeout");
	check(dvx_gpu_module_function(&E.mod, "t_cq_poll", &E.k_cq), "k_cq");
	check(dvx_gpu_stream_create(&E.g, &E.s), "stream");
	check(dvx_hal_mem_alloc(E.hal, NWQEBB * 64, 4096, -1, DVX_MEM_F_ZERO, &E.ring_mem), "ring");
	check(dvx_hal_mem_alloc(E.hal, 4096, 4096, -1, DVX_MEM_F_ZERO, &E.ctl_mem), "ctl");
	check(dvx_hal_mem_alloc(E.hal, 64u << CQ_LOG, 4096, -1, DVX_MEM_F_ZERO, &E.cq_mem), "cq");
	check(dvx_gpu_host_register(&E.g, E.ring_mem.addr, NWQEBB * 64, 0, &E.ring_reg), "reg ring");
	check(dvx_gpu_host_register(&E.g, E.ctl_mem.addr, 4096, 0, &E.ctl_reg), "reg ctl");
	check(dvx_gpu_host_register(&E.g, E.cq_mem.addr, 64u << CQ_LOG, 0, &E.cq_reg), "reg cq");
	check(dvx_gpu_mem_alloc(&E.g, 2u << 20, DVX_GPU_MEM_RDMA & (E.g.attr.vmm_rdma ? ~0u : 0),
				&E.dmem), "device memory");
	E.ring = (uint8_t *)E.ring_mem.addr;
	E.dbrec = (uint32_t *)E.ctl_mem.addr;
	E.uar = (uint64_t *)(void *)((uint8_t *)E.ctl_mem.addr + 64);
	E.ci = (uint64_t *)(void *)((uint8_t *)E.ctl_mem.addr + 128);
	check(dvx_gpu_sq_view_init(&E.sq,
				   &(struct dvx_gpu_sq_cfg){ DVX_GPU_Q_SYS, E.ring_reg.dptr, NWQEBB,
							     QPN, 64, E.ctl_reg.dptr,
							     E.ctl_reg.dptr + 64, E.dmem.dptr,
							     E.ctl_reg.dptr + 128 }),
	      "sq view");
	return 0;
}

static void env_down(void)
{
	check(dvx_gpu_mem_free(&E.dmem), "free dmem");
	check(dvx_gpu_host_unregister(&E.cq_reg), "unreg cq");
	check(dvx_gpu_host_unregister(&E.ctl_reg), "unreg ctl");
	check(dvx_gpu_host_unregister(&E.ring_reg), "unreg ring");
	dvx_hal_mem_free(E.hal, &E.cq_mem);
	dvx_hal_mem_free(E.hal, &E.ctl_mem);
	dvx_hal_mem_free(E.hal, &E.ring_mem);
	check(dvx_gpu_stream_destroy(&E.s), "stream destroy");
	check(dvx_gpu_module_unload(&E.mod), "module unload");
	check(dvx_gpu_lib_unload(&E.lib), "lib unload");
	check(dvx_gpu_close(&E.g), "gpu close");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_thread_scope),
		cmocka_unit_test(test_warp_scope),
		cmocka_unit_test(test_block_scope),
		cmocka_unit_test(test_faa),
		cmocka_unit_test(test_lib_nop),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_cq_error),
	};
	int rc = env_up();

	if (rc)
		return rc;
	rc = cmocka_run_group_tests_name("gpu-post", tests, NULL, NULL);
	env_down();
	return rc;
}
