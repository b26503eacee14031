// SPDX-License-Identifier: MIT
/*
 * bench/gpu-p2p-bench - WQEs posted per second from GPU threads, in one table, in two
 * modes:
 *
 *   sim      the P2P transport's put (8 bytes, one WRITE WQE each) through the device
 *            API (dvx/p2p/dev.cuh) on the lanes of rank 0 of two ranks on the software
 *            NIC, whose progress thread executes every WQE (data really moves, CQEs
 *            come back and are consumed by the GPU); each block flushes its lane at the
 *            end, so the time covers execution too; 64 lanes, block b on lane b % 64
 *   recycle  bench/gpu-post's kernel: one-WQEBB RDMA WRITEs into one host-resident SQ
 *            whose slots a host thread frees as soon as the doorbell record shows them
 *            (the posting path alone: no execution, no CQ)
 *
 * Rows: 1 thread, 1 warp, 1 block (256) and all SMs x 256 at thread, warp and block
 * scope; then put + wait_local latency from one GPU thread (sim). Times are host wall
 * clock from launch to the end of the kernel; a warm-up launch precedes each mode.
 *
 *   gpu-p2p-bench
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dvx/gpu/gpu.h>
#include <dvx/gpu/queue.h>
#include <dvx/mlx5/sq.h>
#include <dvx/p2p/gpu.h>

#include "../tests/lib/p2p_world.h"

extern const unsigned char dvx_fatbin_bench_gpu_p2p_bench[];
extern const size_t dvx_fatbin_bench_gpu_p2p_bench_len;
extern const unsigned char dvx_fatbin_bench_gpu_post[];
extern const size_t dvx_fatbin_bench_gpu_post_len;

#define SEC 1000000000ull
#define NLANES 64u
#define MAXROWS 32

static const char *const scope_name[] = { "thread", "warp", "block" };

static struct {
	struct dvx_gpu g;
	struct dvx_gpu_module mod, pmod;
	void *k_put, *k_lat, *k_post;
	struct dvx_gpu_stream s;
	struct dvx_gpu_mem dm;		/* status words, latency output */
	uint32_t sms;
	struct row {
		const char *who, *mode;
		uint32_t grid, block, scope, per;
		uint64_t wqes, ns;
	} rows[MAXROWS];
	unsigned nrows;
	double lat_avg, lat_min;
	uint32_t lat_iters;
	int fail;
} B;

/* recycle mode's consumer */
static uint32_t *dbrec;
static uint64_t *ci_word, consumed;
static int stop;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
}

static int check_status(uint32_t n)
{
	int32_t *st = calloc(n, sizeof(*st));
	uint32_t i;
	int err = st ? dvx_gpu_memcpy_dtoh(&B.g, st, B.dm.dptr, n * 4ull) : -ENOMEM;

	for (i = 0; !err && i < n; i++)
		if (st[i]) {
			fprintf(stderr, "gpu-p2p-bench: thread %u: %d\n", i, st[i]);
			err = st[i];
		}
	free(st);
	return err;
}

static void add_rows(const char *mode, uint32_t f)
{
	struct { const char *who; uint32_t grid, block, scope, per; } t[] = {
		{ "1 thread", 1, 1, 0, 20000 },
		{ "1 warp", 1, 32, 0, 1000 },
		{ "1 warp", 1, 32, 1, 2000 },
		{ "1 block (256)", 1, 256, 0, 100 },
		{ "1 block (256)", 1, 256, 1, 200 },
		{ "1 block (256)", 1, 256, 2, 400 },
		{ "all SMs x 256", B.sms, 256, 0, 4 },
		{ "all SMs x 256", B.sms, 256, 1, 8 },
		{ "all SMs x 256", B.sms, 256, 2, 8 },
	};
	unsigned i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]) && B.nrows < MAXROWS; i++) {
		struct row *r = &B.rows[B.nrows++];

		r->who = t[i].who;
		r->mode = mode;
		r->grid = t[i].grid;
		r->block = t[i].block;
		r->scope = t[i].scope;
		r->per = t[i].per * f;
	}
}

/* ---- sim mode: rank 0 exports its lanes and runs the kernels ---- */

static void body(struct wrank *r)
{
	struct dvx_gpu_hostreg regs[2 * NLANES + 2];
	struct dvx_gpu_mem dmem;
	struct dvx_p2p_dev d;
	uint64_t need, soff = wsend_off(r, 1), doff = wrecv_off(r, 0), tmo = 60 * SEC;
	uint64_t status = B.dm.dptr, out = B.dm.dptr + (1u << 20);
	uint32_t nregs, nchan = NLANES, i;
	int peer = 1;

	if (r->rank == 1) {
		W_OK(r, dvx_bootstrap_barrier(&r->bs, 600 * W_SEC));
		return;
	}
	W_OK(r, dvx_gpu_make_current(&B.g));
	W_CHECK(r, dvx_p2p_gpu_nregs(&r->t) <= 2 * NLANES + 2, "too many registrations");
	W_OK(r, dvx_p2p_gpu_register(&r->t, &B.g, r->rings, r->rings_len, 0, regs, &nregs));
	W_OK(r, dvx_p2p_gpu_mem_req(&r->t, &need));
	W_OK(r, dvx_gpu_mem_alloc(&B.g, need, 0, &dmem));
	W_OK(r, dvx_p2p_gpu_export(&r->t, &B.g, regs, nregs, dmem.dptr, need, tmo, &d));
	for (i = 0; i <= B.nrows; i++) {
		struct row *x = &B.rows[i ? i - 1 : 0];
		uint32_t per = i ? x->per : 10, sc = x->scope, nthr = x->grid * x->block;
		void *args[] = { &d, &peer, &r->data_l, &soff, &r->data_r[1], &doff, &sc, &per,
				 &nchan, &tmo, &status };
		uint64_t t0;

		if (i && strcmp(x->mode, "sim"))
			continue;
		t0 = now_ns();
		W_OK(r, dvx_gpu_launch(&B.g, B.k_put, x->grid, x->block, 0, &B.s, args));
		W_OK(r, dvx_gpu_stream_wait(&B.s, 300 * SEC));
		if (i) {
			x->ns = now_ns() - t0;
			x->wqes = (uint64_t)nthr * per;
		}
		W_OK(r, check_status(nthr));
	}
	{
		uint32_t it = B.lat_iters;
		uint64_t o[2];
		void *args[] = { &d, &peer, &r->data_l, &soff, &r->data_r[1], &doff, &it, &tmo,
				 &out, &status };

		W_OK(r, dvx_gpu_launch(&B.g, B.k_lat, 1, 1, 0, &B.s, args));
		W_OK(r, dvx_gpu_stream_wait(&B.s, 300 * SEC));
		W_OK(r, check_status(1));
		W_OK(r, dvx_gpu_memcpy_dtoh(&B.g, o, out, sizeof(o)));
		B.lat_avg = (double)o[0] / it;
		B.lat_min = (double)o[1];
	}
	W_OK(r, dvx_p2p_gpu_import(&r->t, &B.g, &d));
	W_OK(r, dvx_gpu_mem_free(&dmem));
	W_OK(r, dvx_p2p_gpu_unregister(regs, nregs));
	W_OK(r, dvx_bootstrap_barrier(&r->bs, 600 * W_SEC));
}

/* ---- recycle mode: bench/gpu-post's kernel and consumer ---- */

static void *consumer(void *arg)
{
	(void)arg;
	for (;;) {
		uint32_t rec = dvx_be32_to_cpu(__atomic_load_n(&dbrec[DVX_MLX5_SND_DBR],
							       __ATOMIC_ACQUIRE));
		uint64_t pi = consumed + (uint16_t)((uint16_t)rec - (uint16_t)consumed);

		if (pi != consumed) {
			consumed = pi;
			__atomic_store_n(ci_word, pi, __ATOMIC_RELEASE);
		} else if (__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
			return NULL;
		}
	}
}

static int recycle(const struct dvx_hal *hal)
{
	const uint32_t nwqebb = 4096;
	struct dvx_hal_mem ring, ctl;
	struct dvx_gpu_hostreg rr, cr;
	struct dvx_gpu_sq sq;
	uint64_t ctrs = B.dm.dptr + (2u << 20), status = B.dm.dptr;
	unsigned i;
	int err;

	if ((err = dvx_hal_mem_alloc(hal, nwqebb * 64ull, 4096, -1, DVX_MEM_F_ZERO, &ring)))
		return err;
	if ((err = dvx_hal_mem_alloc(hal, 4096, 4096, -1, DVX_MEM_F_ZERO, &ctl)) ||
	    (err = dvx_gpu_host_register(&B.g, ring.addr, nwqebb * 64ull, 0, &rr)) ||
	    (err = dvx_gpu_host_register(&B.g, ctl.addr, 4096, 0, &cr)) ||
	    (err = dvx_gpu_sq_view_init(&sq, &(struct dvx_gpu_sq_cfg){
						     DVX_GPU_Q_SYS, rr.dptr, nwqebb, 0x123, 64,
						     cr.dptr, cr.dptr + 64, ctrs, cr.dptr + 128 })))
		return err;
	dbrec = (uint32_t *)ctl.addr;
	ci_word = (uint64_t *)(void *)((uint8_t *)ctl.addr + 128);
	for (i = 0; i <= B.nrows && !err; i++) {
		struct row *x = &B.rows[i ? i - 1 : 0];
		uint32_t per = i ? x->per : 100, sc = x->scope, nthr = x->grid * x->block;
		uint64_t timeout = 30 * SEC, t0, t1;
		void *args[] = { &sq, &sc, &per, &timeout, &status };
		pthread_t thr;

		if (i && strcmp(x->mode, "recycle"))
			continue;
		memset(ring.addr, 0, nwqebb * 64ull);
		memset(ctl.addr, 0, 4096);
		consumed = 0;
		stop = 0;
		err = dvx_gpu_memcpy_htod(&B.g, ctrs, ring.addr, DVX_MLX5_SQ_CTRS_BYTES);
		if (err)
			break;
		pthread_create(&thr, NULL, consumer, NULL);
		t0 = now_ns();
		err = dvx_gpu_launch(&B.g, B.k_post, x->grid, x->block, 0, &B.s, args);
		if (!err)
			err = dvx_gpu_stream_wait(&B.s, 300 * SEC);
		t1 = now_ns();
		__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
		pthread_join(thr, NULL);
		if (!err)
			err = check_status(nthr);
		if (!err && consumed != (uint64_t)nthr * per)
			err = -EIO;
		if (i) {
			x->ns = t1 - t0;
			x->wqes = (uint64_t)nthr * per;
		}
	}
	dvx_gpu_host_unregister(&cr);
	dvx_gpu_host_unregister(&rr);
	dvx_hal_mem_free(hal, &ctl);
	dvx_hal_mem_free(hal, &ring);
	return err;
}

int main(void)
{
	const struct dvx_hal *hal = dvx_hal_cuda();
	struct world_cfg c;
	unsigned n = 0, i;
	int err;

	if (!hal || !dvx_fatbin_bench_gpu_p2p_bench_len || dvx_gpu_count(hal, &n) || !n) {
		printf("gpu-p2p-bench: needs CUDA (CONFIG_DVX_GPU=y, nvcc) and an NVIDIA GPU; skipped\n");
		return 77;
	}
	if (dvx_gpu_open(&B.g, hal, 0, NULL) ||
	    dvx_gpu_module_load(&B.g, dvx_fatbin_bench_gpu_p2p_bench,
				dvx_fatbin_bench_gpu_p2p_bench_len, &B.mod) ||
	    dvx_gpu_module_load(&B.g, dvx_fatbin_bench_gpu_post, dvx_fatbin_bench_gpu_post_len,
				&B.pmod) ||
	    dvx_gpu_module_function(&B.mod, "b_p2p_put", &B.k_put) ||
	    dvx_gpu_module_function(&B.mod, "b_p2p_lat", &B.k_lat) ||
	    dvx_gpu_module_function(&B.pmod, "b_post", &B.k_post) ||
	    dvx_gpu_stream_create(&B.g, &B.s) || dvx_gpu_mem_alloc(&B.g, 4u << 20, 0, &B.dm)) {
		fprintf(stderr, "gpu-p2p-bench: set-up failed: %s: %s\n", B.g.hg.diag.op,
			B.g.hg.diag.msg);
		return 1;
	}
	B.sms = B.g.attr.sm_count;
	B.lat_iters = 2000;
	add_rows("sim", 1);
	add_rows("recycle", 20);

	world_cfg_default(&c);
	c.nranks = 2;
	c.qps_per_nic = NLANES;
	c.sq_depth = 1024;
	c.progress_thread = 1;
	/* DVX_BENCH_GATED=1: a transport whose exported lanes can be recovered while
	 * kernels run (DVX_P2P_F_GPU_RECOVER): the sim rows pay the recovery gate */
	c.gpu_recover = getenv("DVX_BENCH_GATED") && getenv("DVX_BENCH_GATED")[0] == '1';
	err = world_run(&c, body, NULL);
	if (err) {
		fprintf(stderr, "gpu-p2p-bench: sim mode failed: %d\n", err);
		return 1;
	}
	err = recycle(hal);
	if (err) {
		fprintf(stderr, "gpu-p2p-bench: recycle mode failed: %d (%s: %s)\n", err,
			B.g.hg.diag.op, B.g.hg.diag.msg);
		return 1;
	}
	printf("gpu-p2p-bench: %s (%s) sm_%d%d, %u SMs, driver %d\n", B.g.attr.name,
	       B.g.attr.pci, B.g.attr.cc_major, B.g.attr.cc_minor, B.sms,
	       B.g.attr.driver_version);
	printf("sim: P2P put (8 B WRITE) via dvx/p2p/dev.cuh, 2 ranks on the software NIC, %u lanes%s;\n"
	       "recycle: one SQ of 4096 WQEBBs, a host thread frees slots (bench/gpu-post)\n",
	       NLANES, c.gpu_recover ? ", gated (DVX_P2P_F_GPU_RECOVER)" : "");
	printf("%-16s %-7s %-8s %8s %10s %12s %9s\n", "posters", "scope", "against", "threads",
	       "WQEs", "WQEs/s", "ns/WQE");
	for (i = 0; i < B.nrows; i++) {
		struct row *x = &B.rows[i];

		printf("%-16s %-7s %-8s %8u %10llu %12.0f %9.1f\n", x->who, scope_name[x->scope],
		       x->mode, x->grid * x->block, (unsigned long long)x->wqes,
		       x->wqes * 1e9 / (double)x->ns, (double)x->ns / (double)x->wqes);
	}
	printf("put + wait_local, 1 GPU thread, sim: %.0f ns average, %.0f ns best (%u iterations)\n",
	       B.lat_avg, B.lat_min, B.lat_iters);
	dvx_gpu_mem_free(&B.dm);
	dvx_gpu_stream_destroy(&B.s);
	dvx_gpu_module_unload(&B.pmod);
	dvx_gpu_module_unload(&B.mod);
	dvx_gpu_close(&B.g);
	return 0;
}
