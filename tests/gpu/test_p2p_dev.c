// SPDX-License-Identifier: MIT
/*
 * tests/gpu/test_p2p_dev.c - GPU threads post the P2P transport's operations
 * (dvx/p2p_dev.cuh) on lanes exported from rank 0 (dvx_p2p_dev_export()); two ranks run
 * as host threads over the software NIC with its progress thread, which executes the
 * WQEs the GPU writes into the host-resident rings. Rank 1 verifies every byte and
 * signal; rank 0 checks tickets, counters, timeouts, a bad rkey surfacing on the GPU
 * as an error, and that the host engine continues after dvx_p2p_dev_import().
 *
 * Needs an NVIDIA GPU: without one it skips (exit 77); 'make gpu-check' runs it and
 * fails instead. DVX_GPU_TEST_QUICK=1 runs smaller sizes (for compute-sanitizer).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/dvx_test.h"
#include "../lib/p2p_world.h"

#include <dvx/gpu/gpu.h>
#include <dvx/p2p_dev.h>

extern const unsigned char dvx_fatbin_tests_gpu_p2p_dev_kernels[];
extern const size_t dvx_fatbin_tests_gpu_p2p_dev_kernels_len;

#define TMO (20 * W_SEC)
#define MAX_REGS 160
#define MAX_STATUS 8192

enum { K_THREAD, K_WARP, K_BLOCK };

/* nchan: block scope, block b posts on channel b % nchan; ctr_word: block scope with
 * a counter (word ctr_word + channel), 0 for none. The transport has N_LANES lanes:
 * thread i / warp w use channel i / w, so up to N_LANES posters have a lane each. */
struct variant {
	int kind;
	uint32_t grid, block, nchunks, fence, nchan, ctr_word;
};

#define N_LANES 64u
static const struct variant variants[] = {
	{ K_THREAD, 1, 1, 1, 0, 0, 0 },
	{ K_THREAD, 1, 64, 64, 0, 0, 0 },
	{ K_THREAD, 1, 64, 64, 1, 0, 0 },
	{ K_THREAD, 64, 1, 64, 0, 0, 0 },		/* a lane per block */
	{ K_THREAD, 128, 32, 4096, 0, 0, 0 },		/* 64 threads per lane */
	{ K_WARP, 4, 64, 256, 0, 0, 0 },
	{ K_WARP, 64, 32, 2048, 0, 0, 0 },		/* a lane per block (warp) */
	{ K_WARP, 128, 32, 4096, 0, 0, 0 },		/* 2 blocks per lane */
	{ K_BLOCK, 1, 256, 256, 0, 1, 0 },
	{ K_BLOCK, 1, 80, 64, 0, 1, 0 },		/* a partial warp; 16 without data */
	{ K_BLOCK, 64, 128, 8192, 0, 64, 128 },		/* a lane per block, counters */
	{ K_BLOCK, 128, 64, 8192, 0, 1, 0 },		/* 128 blocks on one lane */
	{ K_BLOCK, 128, 32, 4096, 0, 64, 192 },		/* 2 blocks per lane, counters */
};
#define NVAR (sizeof(variants) / sizeof(variants[0]))
#define N_CTR 64u
#define N_SLOTS 128u	/* 2 ranks x 128 signal/counter words */

static const char *const kind_name[] = { "thread", "warp", "block" };

/* signals a round raises: one per thread and warp-scope lane, one per block */
static uint64_t round_signals(const struct variant *x)
{
	return x->kind == K_BLOCK ? x->grid : x->nchunks;
}

static struct {
	const struct dvx_hal *hal;
	struct dvx_gpu g;
	struct dvx_gpu_module mod;
	void *k_put, *k_warp, *k_ctr, *k_tmo, *k_bad, *k_block, *k_block_bad;
	struct dvx_gpu_stream s;
	struct dvx_gpu_mem status;
	uint64_t bytes;
	int quick;
	double ms[NVAR];
} E;

static int skip_or_fail(const char *why)
{
	const char *req = getenv("DVX_GPU_REQUIRED");

	printf("%s; run 'make gpu-check' on a machine with an NVIDIA GPU and driver\n", why);
	return req && *req == '1' ? 1 : DVX_TEST_SKIP_ALL;
}

/* every sender round writes this pattern over the whole slot */
static void fill(struct wrank *r, uint32_t round)
{
	uint8_t *p = r->data + wsend_off(r, 1);
	uint64_t i;

	for (i = 0; i < E.bytes; i++)
		p[i] = wpat(0, 1, round, i);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * W_SEC + (uint64_t)ts.tv_nsec;
}

/* run a kernel and return the first bad status (index in *@at) or 0 */
static int launch(void *k, uint32_t grid, uint32_t block, void **args, uint32_t n, int *at)
{
	int32_t st[MAX_STATUS];
	uint32_t i;
	int err;

	err = dvx_gpu_memcpy_htod(&E.g, E.status.dptr, memset(st, 0x7f, sizeof(st)), n * 4);
	if (!err)
		err = dvx_gpu_launch(&E.g, k, grid, block, 0, &E.s, args);
	if (!err)
		err = dvx_gpu_stream_wait(&E.s, 120 * W_SEC);
	if (!err)
		err = dvx_gpu_memcpy_dtoh(&E.g, st, E.status.dptr, n * 4);
	if (err) {
		*at = -1;
		return err;
	}
	for (i = 0; i < n; i++)
		if (st[i]) {
			*at = (int)i;
			return st[i];
		}
	return 0;
}

/* rank 1: wait for each round's signals, verify every byte, meet rank 0 */
static void receiver(struct wrank *r)
{
	uint64_t want = 0;
	uint32_t v;

	for (v = 0; v <= NVAR + 1; v++) {
		const uint8_t *p = wrecv(r, 0);
		uint64_t i;

		if (v < NVAR)
			want += round_signals(&variants[v]);
		else if (v == NVAR)
			want += 2 * N_CTR;	/* put_signal_counter + signal_counter */
		else
			want += 1;		/* the host's put_signal after import */
		W_OK(r, dvx_p2p_wait_signal(&r->t, &r->sig_l, wsig_off(r, 0, 0), DVX_CMP_GE, want,
					    60 * W_SEC, NULL));
		W_CHECK(r, dvx_p2p_read_signal(&r->sig_l, wsig_off(r, 0, 0)) == want,
			"round %u: signal %llu, want %llu", v,
			(unsigned long long)dvx_p2p_read_signal(&r->sig_l, wsig_off(r, 0, 0)),
			(unsigned long long)want);
		for (i = 0; i < E.bytes; i++)
			W_CHECK(r, p[i] == wpat(0, 1, v, i), "round %u: byte %llu is %#x, want %#x", v,
				(unsigned long long)i, p[i], wpat(0, 1, v, i));
		W_OK(r, dvx_bootstrap_barrier(&r->bs, 60 * W_SEC));
	}
}

static void sender(struct wrank *r)
{
	struct dvx_gpu_hostreg regs[MAX_REGS], ctr_reg;
	struct dvx_gpu_mem dmem;
	struct dvx_p2p_dev d;
	struct dvx_p2p_lane_health h;
	struct dvx_p2p_ticket tk;
	struct dvx_p2p_rbuf bad;
	uint64_t need, soff = wsend_off(r, 1), doff = wrecv_off(r, 0), sigoff = wsig_off(r, 0, 0);
	uint64_t ctr_dev, tmo = TMO;
	uint32_t nregs, v, i, ncw = r->t.nlanes;
	int peer = 1, at = 0, err;

	W_OK(r, dvx_gpu_make_current(&E.g));	/* the context is per thread */
	W_CHECK(r, dvx_p2p_dev_nregs(&r->t) <= MAX_REGS, "too many registrations");
	err = dvx_p2p_dev_register(&r->t, &E.g, r->rings, r->rings_len, 0, regs, &nregs);
	W_CHECK(r, err == 0, "register: %d (%s: %s)", err, E.g.hg.diag.op, E.g.hg.diag.msg);
	W_OK(r, dvx_gpu_host_register(&E.g, r->ctr, (uint64_t)r->w->cfg.nranks *
				      r->w->cfg.nslots * 8, 0, &ctr_reg));
	ctr_dev = ctr_reg.dptr;
	W_OK(r, dvx_p2p_dev_mem_req(&r->t, &need));
	W_OK(r, dvx_gpu_mem_alloc(&E.g, need, 0, &dmem));
	/* bad arguments change nothing */
	W_CHECK(r, dvx_p2p_dev_export(&r->t, &E.g, regs, nregs, dmem.dptr, need - 1, tmo, &d) ==
		-EINVAL, "short device memory accepted");
	W_OK(r, dvx_p2p_dev_export(&r->t, &E.g, regs, nregs, dmem.dptr, need, tmo, &d));

	for (v = 0; v < NVAR; v++) {
		const struct variant *x = &variants[v];
		uint64_t chunk = E.bytes / x->nchunks, t0;
		void *args[16];
		uint32_t nch = x->nchunks, nchan = x->nchan, cw = x->ctr_word, use_ctr = !!cw;
		uint64_t before[N_LANES];
		void *k = x->kind == K_THREAD ? E.k_put : x->kind == K_WARP ? E.k_warp : E.k_block;

		fill(r, v);
		args[0] = &d; args[1] = &peer; args[2] = &r->data_l; args[3] = &soff;
		args[4] = &r->data_r[1]; args[5] = &doff; args[6] = &r->sig_r[1];
		args[7] = &sigoff; args[8] = &chunk; args[9] = &nch;
		if (x->kind == K_BLOCK) {
			args[8] = &r->ctr_l; args[9] = &cw; args[10] = &use_ctr;
			args[11] = &chunk; args[12] = &nch; args[13] = &nchan;
			args[14] = &tmo; args[15] = &E.status.dptr;
			if (use_ctr)
				memcpy(before, r->ctr + cw, sizeof(before));
		} else if (x->kind == K_THREAD) {
			uint32_t fence = x->fence;

			args[10] = &fence; args[11] = &tmo; args[12] = &E.status.dptr;
		} else {
			args[10] = &tmo; args[11] = &E.status.dptr;
		}
		t0 = now_ns();
		err = launch(k, x->grid, x->block, args, x->grid * x->block, &at);
		E.ms[v] = (double)(now_ns() - t0) / 1e6;
		W_CHECK(r, err == 0, "variant %u (%s %ux%u): thread %d: %d", v,
			kind_name[x->kind], x->grid, x->block, at, err);
		/* block scope with counters: one count per block, after its flush */
		for (i = 0; use_ctr && i < nchan; i++) {
			uint64_t want = x->grid / nchan + (i < x->grid % nchan);

			W_CHECK(r, r->ctr[cw + i] - before[i] == want,
				"variant %u: counter of channel %u rose by %llu, want %llu", v, i,
				(unsigned long long)(r->ctr[cw + i] - before[i]),
				(unsigned long long)want);
		}
		W_OK(r, dvx_bootstrap_barrier(&r->bs, 60 * W_SEC));
	}

	/* counters: 3 per thread on word (i % lanes), data and 2 signals each */
	{
		uint64_t chunk = E.bytes / N_CTR;
		uint32_t n = N_CTR;
		void *args[] = { &d, &peer, &r->data_l, &soff, &r->data_r[1], &doff, &r->sig_r[1],
				 &sigoff, &r->ctr_l, &ctr_dev, &chunk, &n, &tmo, &E.status.dptr };

		fill(r, NVAR);
		err = launch(E.k_ctr, 2, 32, args, n, &at);
		W_CHECK(r, err == 0, "counters: thread %d: %d", at, err);
		for (i = 0; i < ncw; i++)
			W_CHECK(r, r->ctr[i] == 3ull * (n / ncw + (i < n % ncw)),
				"counter %u = %llu", i, (unsigned long long)r->ctr[i]);
		W_OK(r, dvx_bootstrap_barrier(&r->bs, 60 * W_SEC));
	}

	/* timeouts and bad input come back as errors */
	{
		const uint64_t *still = (const uint64_t *)(uintptr_t)(ctr_dev + 100 * 8);	/* never raised */
		int32_t st[5];
		void *args[] = { &d, &peer, &still, &E.status.dptr };

		W_OK(r, dvx_gpu_launch(&E.g, E.k_tmo, 1, 1, 0, &E.s, args));
		W_OK(r, dvx_gpu_stream_wait(&E.s, 60 * W_SEC));
		W_OK(r, dvx_gpu_memcpy_dtoh(&E.g, st, E.status.dptr, sizeof(st)));
		W_CHECK(r, st[0] == -ETIMEDOUT && st[1] == -ETIMEDOUT && st[2] == -EINVAL &&
			st[3] == -EINVAL && st[4] == -EINVAL, "timeouts: %d %d %d %d %d", st[0],
			st[1], st[2], st[3], st[4]);
	}

	/* block scope, bad input: nothing posted, every thread gets an error */
	{
		int32_t st[9];
		void *args[] = { &d, &peer, &r->data_l, &r->data_r[1], &r->sig_r[1], &tmo,
				 &E.status.dptr };

		W_OK(r, dvx_gpu_launch(&E.g, E.k_block_bad, 1, 8, 0, &E.s, args));
		W_OK(r, dvx_gpu_stream_wait(&E.s, 60 * W_SEC));
		W_OK(r, dvx_gpu_memcpy_dtoh(&E.g, st, E.status.dptr, sizeof(st)));
		W_CHECK(r, st[0] == -ECANCELED && st[1] == -ECANCELED && st[2] == -EINVAL &&
			st[3] == -EINVAL && st[4] == -EINVAL && st[5] == -EINVAL &&
			st[6] == -EINVAL && st[7] == -EINVAL && st[8] == -EINVAL,
			"block bad input: %d %d %d / %d %d %d / %d %d %d", st[0], st[1], st[2],
			st[3], st[4], st[5], st[6], st[7], st[8]);
	}

	/* a bad rkey on lane 1 fails there, on the GPU, with the error CQE's errno */
	bad = r->data_r[1];
	bad.rkey[0] ^= 0x5a5a00u;
	{
		uint32_t ch = 1;
		int32_t st[4];
		void *args[] = { &d, &peer, &ch, &r->data_l, &bad, &tmo, &E.status.dptr };

		W_OK(r, dvx_gpu_launch(&E.g, E.k_bad, 1, 1, 0, &E.s, args));
		W_OK(r, dvx_gpu_stream_wait(&E.s, 60 * W_SEC));
		W_OK(r, dvx_gpu_memcpy_dtoh(&E.g, st, E.status.dptr, sizeof(st)));
		W_CHECK(r, st[0] == 0 && st[1] == -EPERM && st[2] == -EPERM && st[3] != 0,
			"bad rkey: post %d, wait %d, next post %d, syndrome %#x", st[0], st[1],
			st[2], st[3]);
	}

	/* back to the host: lane 1 failed with the GPU's record, lane 0 goes on */
	W_OK(r, dvx_p2p_dev_import(&r->t, &E.g, &d));
	W_OK(r, dvx_p2p_lane_health(&r->t, peer, 1, &h));
	W_CHECK(r, h.err == -EPERM && h.syndrome != 0, "lane 1 health: err %d syndrome %#x",
		h.err, h.syndrome);
	fill(r, NVAR + 1);
	W_OK(r, dvx_p2p_put_signal(&r->t, peer, 0, &r->data_l, soff, &r->data_r[1], doff,
				   E.bytes, &r->sig_r[1], sigoff, 1, 0, tmo, &tk));
	W_OK(r, dvx_p2p_wait_local(&r->t, &tk, tmo, NULL));
	W_OK(r, dvx_bootstrap_barrier(&r->bs, 60 * W_SEC));
	r->no_final_flush = 1;

	W_OK(r, dvx_gpu_mem_free(&dmem));
	W_OK(r, dvx_gpu_host_unregister(&ctr_reg));
	W_OK(r, dvx_p2p_dev_unregister(regs, nregs));
}

static void body(struct wrank *r)
{
	if (r->rank == 0)
		sender(r);
	else
		receiver(r);
}

static void test_p2p_dev(void **state)
{
	struct world_cfg c;
	uint32_t v;

	(void)state;
	world_cfg_default(&c);
	c.nranks = 2;
	c.qps_per_nic = N_LANES;	/* the most dvx_p2p_cfg allows per NIC */
	c.nslots = N_SLOTS;
	c.sq_depth = 512;		/* a 256-thread block's WRITEs + its signal */
	c.slot_bytes = E.bytes;
	c.progress_thread = 1;
	assert_int_equal(world_run(&c, body, NULL), 0);
	for (v = 0; v < NVAR; v++)
		printf("  %-6s %3ux%-3u %5u puts of %llu B, %llu signals: %.2f ms (%.1f MB/s through the sim)\n",
		       kind_name[variants[v].kind], variants[v].grid,
		       variants[v].block, variants[v].nchunks,
		       (unsigned long long)(E.bytes / variants[v].nchunks),
		       (unsigned long long)round_signals(&variants[v]), E.ms[v],
		       (double)E.bytes / 1e3 / E.ms[v]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_p2p_dev),
	};
	unsigned n = 0;
	const char *q = getenv("DVX_GPU_TEST_QUICK");
	int rc;

	E.quick = q && *q == '1';
	E.bytes = E.quick ? (1u << 20) : (64u << 20);
	E.hal = dvx_hal_cuda();
	if (!E.hal)
		return skip_or_fail("libdvx was built without CUDA (CONFIG_DVX_GPU=n)");
	if (dvx_fatbin_tests_gpu_p2p_dev_kernels_len == 0)
		return skip_or_fail("the test kernels were built without nvcc");
	if (dvx_gpu_count(E.hal, &n) || n == 0)
		return skip_or_fail("no NVIDIA GPU or driver found");
	if (dvx_gpu_open(&E.g, E.hal, 0, NULL) ||
	    dvx_gpu_module_load(&E.g, dvx_fatbin_tests_gpu_p2p_dev_kernels,
				dvx_fatbin_tests_gpu_p2p_dev_kernels_len, &E.mod) ||
	    dvx_gpu_module_function(&E.mod, "t_put_signal", &E.k_put) ||
	    dvx_gpu_module_function(&E.mod, "t_put_warp", &E.k_warp) ||
	    dvx_gpu_module_function(&E.mod, "t_counter", &E.k_ctr) ||
	    dvx_gpu_module_function(&E.mod, "t_timeouts", &E.k_tmo) ||
	    dvx_gpu_module_function(&E.mod, "t_bad_rkey", &E.k_bad) ||
	    dvx_gpu_module_function(&E.mod, "t_put_block", &E.k_block) ||
	    dvx_gpu_module_function(&E.mod, "t_block_bad", &E.k_block_bad) ||
	    dvx_gpu_stream_create(&E.g, &E.s) ||
	    dvx_gpu_mem_alloc(&E.g, MAX_STATUS * 4, 0, &E.status)) {
		fprintf(stderr, "gpu set-up failed: %s: %s\n", E.g.hg.diag.op, E.g.hg.diag.msg);
		return 1;
	}
	printf("gpu: %s (%s) sm_%d%d, %u SMs; %llu-byte rounds\n", E.g.attr.name, E.g.attr.pci,
	       E.g.attr.cc_major, E.g.attr.cc_minor, E.g.attr.sm_count,
	       (unsigned long long)E.bytes);
	rc = cmocka_run_group_tests_name("gpu-p2p", tests, NULL, NULL);
	dvx_gpu_mem_free(&E.status);
	dvx_gpu_stream_destroy(&E.s);
	dvx_gpu_module_unload(&E.mod);
	dvx_gpu_close(&E.g);
	return rc;
}
