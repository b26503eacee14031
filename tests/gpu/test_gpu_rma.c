// SPDX-License-Identifier: MIT
/*
 * tests/gpu/test_gpu_rma.c - GPU threads post gets, fetch-adds, compare-swaps,
 * put_values, the device reset of a signal and quiet (dvx/p2p/dev.cuh) on lanes
 * exported from rank 0; two ranks run as host threads over the software NIC with its
 * progress thread. Checked exactly: the fetch-adds of every thread at thread, warp,
 * tile and block scope return old values that are a permutation of 0 ... n-1 and the
 * peer's word ends at the sum; gets of every thread's piece land byte-exactly;
 * compare-swap as a lock by all blocks guards a get + put_value increment, so the count
 * ends at blocks x rounds; the reset zeroes the peer's word; a bounded wait times out;
 * gets from a buffer whose exchanged rights lack remote read are refused on the GPU
 * before posting (-EPERM, the rest of a warp -ECANCELED, no byte written) and the lanes
 * serve the gets after them. test_gpu_recover: a lane fails under a running kernel (a
 * put under a wrong key) and dvx_p2p_gpu_lane_recover() brings it back while the kernel
 * waits (docs/gpu.md, "Recovering a lane the GPU drives"): a recovery the peer does not
 * join fails and says so, the one both ends run succeeds, tickets stay truthful, every
 * round after it lands and the signal count is exact. test_gpu_recover_contended: 256
 * threads put through one gated lane while both ends recover it again and again
 * (healthy: the gate closes under load and opens) and once after a real failure; every
 * refusal and verdict is taken at its word (refused: post again; given up: post
 * again; landed: done), so the peer's signal is exact only if no ticket lied.
 * test_gpu_recover_stuck: a device thread that stays inside the gate makes a recovery
 * answer -EAGAIN with the gate open again, and the lane serves it once it leaves.
 *
 * Needs an NVIDIA GPU: without one it skips (exit 77) naming 'make gpu-check', which
 * runs it and fails instead.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/dvx_test.h"
#include "../lib/p2p_world.h"

#include <dvx/gpu/gpu.h>
#include <dvx/hal/host.h>
#include <dvx/p2p/gpu.h>

extern const unsigned char dvx_fatbin_tests_gpu_rma_kernels[];
extern const size_t dvx_fatbin_tests_gpu_rma_kernels_len;

#define TMO (20 * W_SEC)
#define MAX_REGS 160
#define GRID 8u
#define BLOCK 256u
#define NTH (GRID * BLOCK)
#define SLOT (NTH * 8u)		/* data slot bytes: a word per thread */
#define ROUNDS 16u

static struct {
	const struct dvx_hal *hal;
	struct dvx_gpu g;
	struct dvx_gpu_module mod;
	void *k_fadd, *k_get, *k_get_perm, *k_lock, *k_reset, *k_nvl_fadd, *k_nvl_lock, *k_recover,
	     *k_contend, *k_stuck;
	struct dvx_gpu_stream s;
	struct dvx_gpu_mem status;
} E;

static const char *const scope_name[] = { "thread", "warp", "block", "tile(8)" };

static int skip_or_fail(const char *why)
{
	const char *req = getenv("DVX_GPU_REQUIRED");

	printf("%s; run 'make gpu-check' on a machine with an NVIDIA GPU and driver\n", why);
	return req && *req == '1' ? 1 : DVX_TEST_SKIP_ALL;
}

static int run(void *k, uint32_t grid, uint32_t block, void **args, uint32_t n, int *at)
{
	static int32_t st[NTH + 64];
	uint32_t i;
	int err;

	err = dvx_gpu_memcpy_htod(&E.g, E.status.dptr, memset(st, 0x7f, n * 4), n * 4);
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

/* rank 1 fills what rank 0 reads, then meets rank 0 at each step */
static void passive(struct wrank *r)
{
	uint64_t i, *w = (uint64_t *)(r->data + wsend_off(r, 0));
	uint32_t k;

	for (i = 0; i < NTH; i++)
		w[i] = 0x1000000ull + i * 0x9E3779B97F4A7C15ull;
	*(uint64_t *)(r->data + wrecv_off(r, 0)) = 0;	/* the lock-guarded count */
	for (k = 0; k < 8; k++)
		W_OK(r, dvx_bootstrap_barrier(&r->bs, 120 * W_SEC));
}

/* rank 0's exported lanes and the host memory its kernels reach */
struct act {
	struct dvx_gpu_hostreg regs[MAX_REGS], ctr_reg, data_reg;
	struct dvx_gpu_mem dmem;
	struct dvx_p2p_dev d;
	uint32_t nregs;
};

/* phase export: the rings, counters and data mapped for the GPU, the lanes exported */
static void act_export(struct wrank *r, struct act *x)
{
	uint64_t ctr_bytes = (uint64_t)r->w->cfg.nranks * r->w->cfg.nslots * 8;
	uint64_t data_bytes = (uint64_t)SLOT * 2 * r->w->cfg.nranks, need;
	int err;

	W_OK(r, dvx_gpu_make_current(&E.g));
	err = dvx_p2p_gpu_register(&r->t, &E.g, r->rings, r->rings_len, 0, x->regs, &x->nregs);
	W_CHECK(r, err == 0, "register: %d (%s: %s)", err, E.g.hg.diag.op, E.g.hg.diag.msg);
	W_OK(r, dvx_gpu_host_register(&E.g, r->ctr, ctr_bytes, 0, &x->ctr_reg));
	W_OK(r, dvx_gpu_host_register(&E.g, r->data, data_bytes, 0, &x->data_reg));
	W_OK(r, dvx_p2p_gpu_mem_req(&r->t, &need));
	W_OK(r, dvx_gpu_mem_alloc(&E.g, need, 0, &x->dmem));
	W_OK(r, dvx_p2p_gpu_export(&r->t, &E.g, x->regs, x->nregs, x->dmem.dptr, need, TMO,
				   &x->d));
}

/* phase fetch-adds at every scope: old values 0 ... NTH-1 once each (word 5 per scope) */
static void act_fadd(struct wrank *r, struct act *x)
{
	static uint8_t seen[NTH];
	struct wrank *r1 = &r->w->r[1];	/* threads: rank 1's memory is here to check */
	uint64_t *res = r->ctr, i;
	uint32_t sc;
	int peer = 1, at = 0, err;

	for (sc = 0; sc < 4; sc++) {
		uint64_t word = wsig_off(r, 0, 5 + sc);
		void *args[] = { &x->d, &peer, &r->sig_r[1], &word, &r->ctr_l, &sc, &E.status.dptr };

		memset(res, 0xff, NTH * 8);
		err = run(E.k_fadd, GRID, BLOCK, args, NTH, &at);
		W_CHECK(r, err == 0, "fetch-add %s: thread %d: %d", scope_name[sc], at, err);
		memset(seen, 0, sizeof(seen));
		for (i = 0; i < NTH; i++) {
			uint64_t v = __atomic_load_n(&res[i], __ATOMIC_ACQUIRE);

			W_CHECK(r, v < NTH && !seen[v], "fetch-add %s: thread %llu got %llu",
				scope_name[sc], (unsigned long long)i, (unsigned long long)v);
			seen[v] = 1;
		}
		W_CHECK(r, r1->sig[5 + sc] == NTH, "fetch-add %s: the word is %llu, want %u",
			scope_name[sc], (unsigned long long)r1->sig[5 + sc], NTH);
	}
}

/* phase gets at every scope: each thread's word of rank 1's send area, exactly */
static void act_get(struct wrank *r, struct act *x)
{
	struct wrank *r1 = &r->w->r[1];
	uint64_t i;
	uint32_t sc;
	int peer = 1, at = 0, err;

	for (sc = 0; sc < 4; sc++) {
		uint64_t soff = wsend_off(r, 0), doff = wrecv_off(r, 1);
		const uint64_t *want = (const uint64_t *)(r1->data + soff);
		const uint64_t *got = (const uint64_t *)(r->data + doff);
		void *args[] = { &x->d, &peer, &r->data_r[1], &soff, &r->data_l, &doff, &sc,
				 &E.status.dptr };

		memset(r->data + doff, 0, SLOT);
		err = run(E.k_get, GRID, BLOCK, args, NTH, &at);
		W_CHECK(r, err == 0, "get %s: thread %d: %d", scope_name[sc], at, err);
		for (i = 0; i < NTH; i++)
			W_CHECK(r, got[i] == want[i], "get %s: word %llu is %#llx, want %#llx",
				scope_name[sc], (unsigned long long)i, (unsigned long long)got[i],
				(unsigned long long)want[i]);
	}
}

/* phase refusals: gets from rank 1's buffer described without remote read are refused
 * on the GPU before posting (thread scope: every thread -EPERM; warp scope with one
 * refused lane a warp: it -EPERM, the rest of its warp -ECANCELED), no destination byte
 * written; the gets phase after it runs on the same lanes (they stayed healthy) */
static void act_perm(struct wrank *r, struct act *x)
{
	static const struct { uint32_t scope, badlane; } runs[] = { { 0, 32 }, { 1, 5 }, { 2, 17 } };
	struct dvx_p2p_rbuf bad = r->data_r[1];
	uint64_t soff = wsend_off(r, 0), doff = wrecv_off(r, 1), i;
	const uint8_t *got = r->data + doff;
	uint32_t k;
	int peer = 1;

	bad.access = DVX_P2P_ACC_KNOWN | DVX_P2P_ACC_WRITE | DVX_P2P_ACC_ATOMIC;
	for (k = 0; k < sizeof(runs) / sizeof(runs[0]); k++) {
		uint32_t sc = runs[k].scope, bl = runs[k].badlane;
		void *args[] = { &x->d, &peer, &r->data_r[1], &bad, &bl, &soff, &r->data_l, &doff,
				 &sc, &E.status.dptr };
		static int32_t st[NTH];

		memset(r->data + doff, 0xee, SLOT);
		W_OK(r, dvx_gpu_memcpy_htod(&E.g, E.status.dptr, memset(st, 0x7f, sizeof(st)),
					    sizeof(st)));
		W_OK(r, dvx_gpu_launch(&E.g, E.k_get_perm, GRID, BLOCK, 0, &E.s, args));
		W_OK(r, dvx_gpu_stream_wait(&E.s, 120 * W_SEC));
		W_OK(r, dvx_gpu_memcpy_dtoh(&E.g, st, E.status.dptr, sizeof(st)));
		for (i = 0; i < NTH; i++) {
			int want = bl >= 32 || i % 32 == bl ? -EPERM : -ECANCELED;

			W_CHECK(r, st[i] == want, "refusal (%s, lane %u refused): thread %llu: %d, want %d",
				scope_name[sc], bl, (unsigned long long)i, st[i], want);
		}
		for (i = 0; i < SLOT; i++)
			W_CHECK(r, got[i] == 0xee, "refusal (%s): byte %llu written", scope_name[sc],
				(unsigned long long)i);
	}
}

/* phase lock: compare-swap as a lock by every block around a get + put_value increment */
static void act_lock(struct wrank *r, struct act *x)
{
	struct wrank *r1 = &r->w->r[1];
	uint64_t lock = wsig_off(r, 0, 12), cnt = wrecv_off(r, 0), scr = wsend_off(r, 1);
	uint64_t res_ptr = x->ctr_reg.dptr, scr_ptr = x->data_reg.dptr + scr;
	uint32_t rounds = ROUNDS;
	int peer = 1, at = 0, err;
	void *args[] = { &x->d, &peer, &r->sig_r[1], &lock, &r->data_r[1], &cnt, &r->ctr_l,
			 &res_ptr, &r->data_l, &scr, &scr_ptr, &rounds, &E.status.dptr };

	err = run(E.k_lock, GRID, 32, args, GRID, &at);
	W_CHECK(r, err == 0, "lock: block %d: %d", at, err);
	W_CHECK(r, *(uint64_t *)(r1->data + cnt) == (uint64_t)GRID * ROUNDS,
		"lock-guarded count %llu, want %u",
		(unsigned long long)*(uint64_t *)(r1->data + cnt), GRID * ROUNDS);
	W_CHECK(r, r1->sig[12] == 0, "lock left at %llu", (unsigned long long)r1->sig[12]);
}

/* phase reset: the device reset of a peer's word; a bounded wait times out */
static void act_reset(struct wrank *r, struct act *x)
{
	struct wrank *r1 = &r->w->r[1];
	uint64_t sigoff = wsig_off(r, 0, 5), tmo = 2 * W_MS;
	const uint64_t *still = (const uint64_t *)(uintptr_t)(x->ctr_reg.dptr + 8 * 100);
	int peer = 1;
	void *args[] = { &x->d, &peer, &r->sig_r[1], &sigoff, &still, &tmo, &E.status.dptr };
	int32_t st[33];
	uint32_t k;

	r->ctr[100] = 0;
	W_OK(r, dvx_gpu_launch(&E.g, E.k_reset, 1, 32, 0, &E.s, args));
	W_OK(r, dvx_gpu_stream_wait(&E.s, 60 * W_SEC));
	W_OK(r, dvx_gpu_memcpy_dtoh(&E.g, st, E.status.dptr, sizeof(st)));
	for (k = 0; k < 32; k++)
		W_CHECK(r, st[k] == 0, "reset: lane %u: %d", k, st[k]);
	W_CHECK(r, st[32] == -ETIMEDOUT, "a bounded wait: %d", st[32]);
	W_CHECK(r, r1->sig[5] == 0, "reset left %llu", (unsigned long long)r1->sig[5]);
}

/* phase import: the lanes back to the host, the mappings undone */
static void act_import(struct wrank *r, struct act *x)
{
	W_OK(r, dvx_p2p_gpu_import(&r->t, &E.g, &x->d));
	W_OK(r, dvx_gpu_mem_free(&x->dmem));
	W_OK(r, dvx_gpu_host_unregister(&x->data_reg));
	W_OK(r, dvx_gpu_host_unregister(&x->ctr_reg));
	W_OK(r, dvx_p2p_gpu_unregister(x->regs, x->nregs));
}

/* rank 0, in its phases, each after a barrier with rank 1 (passive(): 8 in all): export,
 * fetch-adds, refusals, gets, lock, reset, import */
static void active(struct wrank *r)
{
	static struct act x;
	static void (*const phase[])(struct wrank *, struct act *) = {
		act_fadd, act_perm, act_get, act_lock, act_reset,
	};
	uint32_t k;

	memset(&x, 0, sizeof(x));
	act_export(r, &x);
	/* made without DVX_P2P_F_GPU_RECOVER: its lanes keep no gate */
	W_CHECK(r, dvx_p2p_gpu_lane_recover(&r->t, &E.g, &x.d, 1, 0, W_SEC) == -EOPNOTSUPP,
		"a recovery of an ungated export was not refused");
	for (k = 0; k < 8 && !r->fail_line; k++) {
		/* barrier k + 1 (the first: rank 1 filled its memory) */
		W_OK(r, dvx_bootstrap_barrier(&r->bs, 120 * W_SEC));
		if (k < sizeof(phase) / sizeof(phase[0]))
			phase[k](r, &x);
	}
	if (!r->fail_line)
		act_import(r, &x);
}

static void body(struct wrank *r)
{
	if (r->rank == 0)
		active(r);
	else
		passive(r);
}

static void test_gpu_rma(void **state)
{
	struct world_cfg c;

	(void)state;
	world_cfg_default(&c);
	c.nranks = 2;
	c.qps_per_nic = GRID;		/* a lane per block */
	c.nslots = NTH / 2;		/* nranks x nslots result words: one per thread */
	c.sq_depth = 512;		/* a 256-thread block's posts */
	c.slot_bytes = SLOT;
	c.progress_thread = 1;
	c.read = 1;
	assert_int_equal(world_run(&c, body, NULL), 0);
}

/* ---- a lane the GPU drives, failed and recovered under the running kernel ---- */

#define REC_ROUNDS 64u
#define REC_FAIL_AT 20u		/* the lane fails at rounds 20 and 40 */
#define REC_SIG 40u		/* the signal slot rank 0 raises at rank 1 */
#define REC_CTR 100u		/* rank 0's counter word the odd rounds raise */
#define REC_FLAG 300u		/* rank 0's counter words the kernel raises: recover now */

static uint64_t rec_pat(uint32_t k)
{
	return 0xc0ffee0000000000ull + k;
}

/* wait until the kernel asks for recovery @k (its flag word in host memory) */
static int rec_asked(struct wrank *r, uint32_t k)
{
	volatile uint64_t *flag = &r->ctr[REC_FLAG + k];
	uint64_t t0 = dvx_hal_now_ns(r->t.nics[0]->hal);

	while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE)) {
		if (dvx_hal_now_ns(r->t.nics[0]->hal) - t0 > 60 * W_SEC)
			return -ETIMEDOUT;
		sched_yield();
	}
	return 0;
}

/* rank 0: export, launch t_recover, and when it asks: the first time a recovery the
 * peer does not join (it must fail and say so, the lane stays failed on the GPU), then
 * one with the peer (it must succeed while the kernel runs); the second time one with
 * the peer; the kernel finishes every round */
static void rec_active(struct wrank *r)
{
	static struct act x;
	struct dvx_p2p_rbuf bad = r->data_r[1];
	uint64_t soff = wsend_off(r, 1), doff = wrecv_off(r, 0), sigoff = wsig_off(r, 0, REC_SIG);
	uint64_t ctroff = 8ull * REC_CTR, flag_ptr;
	uint32_t rounds = REC_ROUNDS, fail_at = REC_FAIL_AT, k;
	int peer = 1, err, alone;
	int32_t st[5];
	void *args[] = { &x.d, &peer, &r->data_l, &soff, &r->data_r[1], &doff, &bad,
			 &r->sig_r[1], &sigoff, &r->ctr_l, &ctroff, &rounds, &fail_at, &flag_ptr,
			 &E.status.dptr };

	memset(&x, 0, sizeof(x));
	for (k = 0; k < REC_ROUNDS; k++)
		((uint64_t *)(r->data + soff))[k] = rec_pat(k);
	r->ctr[REC_FLAG] = r->ctr[REC_FLAG + 1] = 0;
	r->ctr[REC_CTR] = 0;
	bad.rkey[0] ^= 0x00a5a500u;	/* the responder refuses the key */
	act_export(r, &x);
	flag_ptr = x.ctr_reg.dptr + 8ull * REC_FLAG;
	/* refusals: self, a lane it does not have, a handle of another layout */
	{
		struct dvx_p2p_dev other = x.d;

		other.version = 3;
		W_CHECK(r, dvx_p2p_gpu_lane_recover(&r->t, &E.g, &x.d, 0, 0, W_SEC) == -EINVAL &&
			   dvx_p2p_gpu_lane_recover(&r->t, &E.g, &x.d, 1, 99, W_SEC) == -EINVAL &&
			   dvx_p2p_gpu_lane_recover(&r->t, &E.g, &other, 1, 0, W_SEC) == -EINVAL,
			"a bad recovery call was not refused");
	}
	W_OK(r, dvx_bootstrap_barrier(&r->bs, 120 * W_SEC));		/* A: started */
	W_OK(r, dvx_gpu_memcpy_htod(&E.g, E.status.dptr, memset(st, 0x7f, sizeof(st)), sizeof(st)));
	W_OK(r, dvx_gpu_launch(&E.g, E.k_recover, 1, 1, 0, &E.s, args));
	W_OK(r, rec_asked(r, 0));
	/* alone: the peer is not there, the recovery cannot finish and says so */
	alone = dvx_p2p_gpu_lane_recover(&r->t, &E.g, &x.d, 1, 0, 300 * W_MS);
	W_CHECK(r, alone == -ETIMEDOUT, "a recovery the peer did not join: %d", alone);
	{
		struct dvx_p2p_qstate gs;

		/* the GPU still sees the lane failed, its gate open */
		W_OK(r, dvx_gpu_memcpy_dtoh(&E.g, &gs, x.d.lanes + (uint64_t)r->t.npeers *
					    r->t.nlanes * DVX_P2P_DEV_LANE_BYTES, sizeof(gs)));
		W_CHECK(r, gs.state == DVX_P2P_Q_FAILED && gs.err < 0 && gs.gate == 0,
			"after the lone recovery: state %u err %d gate %u", gs.state, gs.err, gs.gate);
	}
	W_OK(r, dvx_bootstrap_barrier(&r->bs, 120 * W_SEC));		/* B: recover now */
	err = dvx_p2p_gpu_lane_recover(&r->t, &E.g, &x.d, 1, 0, 30 * W_SEC);
	W_CHECK(r, err == 0, "the recovery with the peer: %d", err);
	W_OK(r, rec_asked(r, 1));
	W_OK(r, dvx_bootstrap_barrier(&r->bs, 120 * W_SEC));		/* B2: again */
	err = dvx_p2p_gpu_lane_recover(&r->t, &E.g, &x.d, 1, 0, 30 * W_SEC);
	W_CHECK(r, err == 0, "the second recovery with the peer: %d", err);
	W_OK(r, dvx_gpu_stream_wait(&E.s, 120 * W_SEC));
	W_OK(r, dvx_gpu_memcpy_dtoh(&E.g, st, E.status.dptr, sizeof(st)));
	W_CHECK(r, st[0] == 0, "the kernel: %d (bad put %d, put on the failed lane %d, the bad "
		"ticket after the recovery %d, the first after the second %d)", st[0], st[1],
		st[2], st[3], st[4]);
	W_CHECK(r, st[1] < 0 && st[2] == st[1] && st[3] == st[1] && st[4] == -ESTALE,
		"the answers: %d %d %d %d", st[1], st[2], st[3], st[4]);
	W_CHECK(r, r->ctr[REC_CTR] == REC_ROUNDS / 2, "the counter: %llu, want %u",
		(unsigned long long)r->ctr[REC_CTR], REC_ROUNDS / 2);
	{
		struct dvx_p2p_lane_health h;

		W_OK(r, dvx_p2p_gpu_import(&r->t, &E.g, &x.d));
		W_OK(r, dvx_p2p_lane_health(&r->t, 1, 0, &h));
		W_CHECK(r, h.recoveries >= 2 && h.err == 0, "after import: %u recoveries, err %d",
			h.recoveries, h.err);
		printf("recover: the bad key's put %d, a put on the failed lane %d, its ticket after "
		       "the recovery %d, after the next %d; a recovery without the peer %d; %u "
		       "recoveries, every round's word, signal and counter exact\n", st[1], st[2],
		       st[3], st[4], alone, h.recoveries);
	}
	W_OK(r, dvx_gpu_mem_free(&x.dmem));
	W_OK(r, dvx_gpu_host_unregister(&x.data_reg));
	W_OK(r, dvx_gpu_host_unregister(&x.ctr_reg));
	W_OK(r, dvx_p2p_gpu_unregister(x.regs, x.nregs));
	W_OK(r, dvx_bootstrap_barrier(&r->bs, 120 * W_SEC));		/* C: done */
}

/* rank 1: its host-driven end of the lane, recovered when rank 0 says; then every
 * round's word and the signal count checked */
static void rec_passive(struct wrank *r)
{
	const uint64_t *got = (const uint64_t *)wrecv(r, 0);
	uint32_t k;
	int err;

	W_OK(r, dvx_bootstrap_barrier(&r->bs, 120 * W_SEC));		/* A */
	W_OK(r, dvx_bootstrap_barrier(&r->bs, 120 * W_SEC));		/* B */
	err = dvx_p2p_lane_recover(&r->t, 0, 0, 30 * W_SEC);
	W_CHECK(r, err == 0, "rank 1's recovery: %d", err);
	W_OK(r, dvx_bootstrap_barrier(&r->bs, 120 * W_SEC));		/* B2 */
	err = dvx_p2p_lane_recover(&r->t, 0, 0, 30 * W_SEC);
	W_CHECK(r, err == 0, "rank 1's second recovery: %d", err);
	W_OK(r, dvx_bootstrap_barrier(&r->bs, 120 * W_SEC));		/* C */
	for (k = 0; k < REC_ROUNDS; k++)
		W_CHECK(r, got[k] == rec_pat(k), "round %u's word: %#llx", k,
			(unsigned long long)got[k]);
	W_CHECK(r, r->sig[REC_SIG] == REC_ROUNDS, "the signal: %llu, want %u",
		(unsigned long long)r->sig[REC_SIG], REC_ROUNDS);
}

static void rec_body(struct wrank *r)
{
	if (r->rank == 0)
		rec_active(r);
	else
		rec_passive(r);
}

/* the recovery tests' world: 2 ranks, a lane a peer, rank 0's exportable with a gate,
 * @fn on each; @sq_depth 0: the default */
static void gated_world(wbody_fn fn, uint32_t sq_depth)
{
	struct world_cfg c;

	world_cfg_default(&c);
	c.nranks = 2;
	c.qps_per_nic = 1;
	c.nslots = NTH / 2;
	c.slot_bytes = SLOT;
	if (sq_depth)
		c.sq_depth = sq_depth;
	c.progress_thread = 1;
	c.gpu_recover = 1;
	assert_int_equal(world_run(&c, fn, NULL), 0);
}

static void test_gpu_recover(void **state)
{
	(void)state;
	gated_world(rec_body, 0);
}

/* ---- contention at the recovery gate ---- */

#define CON_GRID 4u
#define CON_BLOCK 64u
#define CON_NT (CON_GRID * CON_BLOCK)
#define CON_ROUNDS 8u		/* CON_NT * CON_ROUNDS words: one data slot */
#define CON_SIG 41u		/* the signal slot rank 0 raises at rank 1 */
#define CON_STATS 400u		/* rank 0's counter words: 3 per thread, host memory */
#define CON_MAX_REC 4000u	/* recoveries before the test gives up */

/* what each end tells the other before every recovery: rank 0 whether it is ready to
 * stop (1: the kernel is done and the failure recovered; 2: it gives up), each end its
 * last recovery's answer; both stop when rank 0 is ready and both answered 0 */
struct con_turn {
	int32_t ready, err;
};

static int con_stop(const struct con_turn *both)
{
	return both[0].ready == 2 || (both[0].ready == 1 && both[0].err == 0 && both[1].err == 0);
}

static uint64_t con_pat(uint64_t w)
{
	return 0xc0de000000000000ull + w * 0x9E3779B97F4A7C15ull % 0xffffffffffull;
}

/* rank 0: launch t_contend, then recover the lane with the peer over and over while the
 * threads post through its gate, until the kernel is done and the real failure (seen
 * through the flag before a recovery began) has been recovered; every recovery answers
 * 0, or -EAGAIN at one end for a lane that failed while it ran (both call again) */
static void con_active(struct wrank *r)
{
	static struct act x;
	static int32_t st[CON_NT];
	struct dvx_p2p_rbuf bad = r->data_r[1];
	uint64_t soff = wsend_off(r, 1), doff = wrecv_off(r, 0), sigoff = wsig_off(r, 0, CON_SIG);
	uint64_t flag_ptr, stats_ptr, sum[3] = { 0, 0, 0 };
	volatile uint64_t *flag = &r->ctr[REC_FLAG];
	uint32_t rounds = CON_ROUNDS, nrec = 0, healthy_busy = 0, i;
	struct con_turn me = { 0, 0 }, both[2];
	int peer = 1, handled = 0, done = 0, err;
	void *args[] = { &x.d, &peer, &r->data_l, &soff, &r->data_r[1], &doff, &bad,
			 &r->sig_r[1], &sigoff, &rounds, &flag_ptr, &stats_ptr, &E.status.dptr };

	memset(&x, 0, sizeof(x));
	for (i = 0; i < CON_NT * CON_ROUNDS; i++)
		((uint64_t *)(r->data + soff))[i] = con_pat(i);
	memset(r->ctr + CON_STATS, 0, 3 * CON_NT * 8);
	*flag = 0;
	bad.rkey[0] ^= 0x00a5a500u;	/* the responder refuses the key */
	act_export(r, &x);
	flag_ptr = x.ctr_reg.dptr + 8ull * REC_FLAG;
	stats_ptr = x.ctr_reg.dptr + 8ull * CON_STATS;
	W_OK(r, dvx_bootstrap_barrier(&r->bs, 120 * W_SEC));		/* A: started */
	W_OK(r, dvx_gpu_memcpy_htod(&E.g, E.status.dptr, memset(st, 0x7f, sizeof(st)), sizeof(st)));
	W_OK(r, dvx_gpu_launch(&E.g, E.k_contend, CON_GRID, CON_BLOCK, 0, &E.s, args));
	while (!r->fail_line) {
		int saw;

		if (!done) {
			err = dvx_gpu_stream_wait(&E.s, 0);
			W_CHECK(r, err == 0 || err == -ETIMEDOUT, "the kernel: %d", err);
			done = err == 0;
		}
		me.ready = nrec >= CON_MAX_REC ? 2 : done && handled;
		W_OK(r, dvx_bootstrap_allgather(&r->bs, &me, both, sizeof(me), 60 * W_SEC));
		if (con_stop(both))
			break;
		saw = __atomic_load_n(flag, __ATOMIC_ACQUIRE) != 0;
		me.err = dvx_p2p_gpu_lane_recover(&r->t, &E.g, &x.d, 1, 0, 30 * W_SEC);
		W_CHECK(r, me.err == 0 || me.err == -EAGAIN, "recovery %u: %d", nrec, me.err);
		healthy_busy += !saw && !done;
		handled |= saw && me.err == 0;
		nrec++;
		usleep(1000);		/* the threads get on between recoveries */
	}
	W_CHECK(r, nrec < CON_MAX_REC, "still not done after %u recoveries", nrec);
	W_OK(r, dvx_gpu_stream_wait(&E.s, 120 * W_SEC));
	W_OK(r, dvx_gpu_memcpy_dtoh(&E.g, st, E.status.dptr, sizeof(st)));
	for (i = 0; i < CON_NT; i++) {
		W_CHECK(r, st[i] == 0, "thread %u: %d", i, st[i]);
		sum[0] += r->ctr[CON_STATS + 3 * i];
		sum[1] += r->ctr[CON_STATS + 3 * i + 1];
		sum[2] += r->ctr[CON_STATS + 3 * i + 2];
	}
	/* how often the gate was met closed, and what the failure cost, depend on timing:
	 * printed below, not asserted */
	{
		struct dvx_p2p_lane_health h;

		W_OK(r, dvx_p2p_gpu_import(&r->t, &E.g, &x.d));
		W_OK(r, dvx_p2p_lane_health(&r->t, 1, 0, &h));
		W_CHECK(r, h.recoveries >= 1 && h.err == 0, "after import: %u recoveries, err %d",
			h.recoveries, h.err);
		printf("contend: %u threads x %u puts through one gated lane, %u recoveries (%u "
		       "while the kernel posted and before the failure), the lane reset %u "
		       "time(s); the threads were answered -EAGAIN %llu times and lane errors "
		       "%llu times, %llu puts were given up and posted again\n", CON_NT,
		       CON_ROUNDS, nrec, healthy_busy, h.recoveries, (unsigned long long)sum[0], (unsigned long long)sum[1],
		       (unsigned long long)sum[2]);
	}
	W_OK(r, dvx_gpu_mem_free(&x.dmem));
	W_OK(r, dvx_gpu_host_unregister(&x.data_reg));
	W_OK(r, dvx_gpu_host_unregister(&x.ctr_reg));
	W_OK(r, dvx_p2p_gpu_unregister(x.regs, x.nregs));
	W_OK(r, dvx_bootstrap_barrier(&r->bs, 120 * W_SEC));		/* C: done */
}

/* rank 1: a recovery for every one of rank 0's, then every word and the signal exact */
static void con_passive(struct wrank *r)
{
	const uint64_t *got = (const uint64_t *)wrecv(r, 0);
	struct con_turn me = { 1, 0 }, both[2];
	uint32_t k;

	W_OK(r, dvx_bootstrap_barrier(&r->bs, 120 * W_SEC));		/* A */
	while (!r->fail_line) {
		W_OK(r, dvx_bootstrap_allgather(&r->bs, &me, both, sizeof(me), 60 * W_SEC));
		if (con_stop(both))
			break;
		me.err = dvx_p2p_lane_recover(&r->t, 0, 0, 30 * W_SEC);
		W_CHECK(r, me.err == 0 || me.err == -EAGAIN, "rank 1's recovery: %d", me.err);
	}
	W_OK(r, dvx_bootstrap_barrier(&r->bs, 120 * W_SEC));		/* C */
	for (k = 0; k < CON_NT * CON_ROUNDS; k++)
		W_CHECK(r, got[k] == con_pat(k), "word %u: %#llx", k, (unsigned long long)got[k]);
	W_CHECK(r, r->sig[CON_SIG] == CON_NT * CON_ROUNDS, "the signal: %llu, want %u",
		(unsigned long long)r->sig[CON_SIG], CON_NT * CON_ROUNDS);
}

static void con_body(struct wrank *r)
{
	if (r->rank == 0)
		con_active(r);
	else
		con_passive(r);
}

/* many threads through one gated lane while it is recovered again and again */
static void test_gpu_recover_contended(void **state)
{
	(void)state;
	gated_world(con_body, 1024);	/* every thread's put and signal in flight at once */
}

/* ---- a device thread that stays inside the gate ---- */

#define STUCK_SIG 42u		/* the signal slot rank 0 raises at rank 1 */

/* rank 0: t_stuck counts itself in and stays; a recovery waits for it in vain and
 * answers -EAGAIN with the lane as it was and its gate open; once the thread leaves,
 * the lane serves it */
static void stuck_active(struct wrank *r)
{
	static struct act x;
	uint64_t soff = wsend_off(r, 1), doff = wrecv_off(r, 0), sigoff = wsig_off(r, 0, STUCK_SIG);
	volatile uint64_t *flag = &r->ctr[REC_FLAG];
	uint64_t flag_ptr;
	struct dvx_p2p_qstate gs;
	int32_t st[3];
	int peer = 1, err;
	void *args[] = { &x.d, &peer, &r->data_l, &soff, &r->data_r[1], &doff, &r->sig_r[1],
			 &sigoff, &flag_ptr, &E.status.dptr };

	memset(&x, 0, sizeof(x));
	*(uint64_t *)(r->data + soff) = 0x57c4;
	flag[0] = flag[1] = 0;
	act_export(r, &x);
	flag_ptr = x.ctr_reg.dptr + 8ull * REC_FLAG;
	W_OK(r, dvx_bootstrap_barrier(&r->bs, 120 * W_SEC));		/* A */
	W_OK(r, dvx_gpu_memcpy_htod(&E.g, E.status.dptr, memset(st, 0x7f, sizeof(st)), sizeof(st)));
	W_OK(r, dvx_gpu_launch(&E.g, E.k_stuck, 1, 1, 0, &E.s, args));
	W_OK(r, rec_asked(r, 0));
	err = dvx_p2p_gpu_lane_recover(&r->t, &E.g, &x.d, 1, 0, 200 * W_MS);
	W_CHECK(r, err == -EAGAIN, "a recovery with a thread inside: %d", err);
	W_OK(r, dvx_gpu_memcpy_dtoh(&E.g, &gs, x.d.lanes + (uint64_t)r->t.npeers *
				    r->t.nlanes * DVX_P2P_DEV_LANE_BYTES, sizeof(gs)));
	W_CHECK(r, gs.state == DVX_P2P_Q_OK && gs.gate == 0 && gs.inside == 1,
		"after it: state %u gate %u inside %u", gs.state, gs.gate, gs.inside);
	__atomic_store_n(&r->ctr[REC_FLAG + 1], 1, __ATOMIC_RELEASE);
	W_OK(r, dvx_gpu_stream_wait(&E.s, 120 * W_SEC));
	W_OK(r, dvx_gpu_memcpy_dtoh(&E.g, st, E.status.dptr, sizeof(st)));
	W_CHECK(r, st[0] == 0 && st[1] == 0 && st[2] == 0, "the kernel: %d %d %d", st[0], st[1],
		st[2]);
	{
		struct dvx_p2p_lane_health h;

		W_OK(r, dvx_p2p_gpu_import(&r->t, &E.g, &x.d));
		W_OK(r, dvx_p2p_lane_health(&r->t, 1, 0, &h));
		W_CHECK(r, h.recoveries == 0 && h.err == 0, "after import: %u recoveries, err %d",
			h.recoveries, h.err);
		printf("stuck: a recovery with a device thread inside the gate answered %d, the "
		       "gate open again, the lane served the thread once it left\n", err);
	}
	W_OK(r, dvx_gpu_mem_free(&x.dmem));
	W_OK(r, dvx_gpu_host_unregister(&x.data_reg));
	W_OK(r, dvx_gpu_host_unregister(&x.ctr_reg));
	W_OK(r, dvx_p2p_gpu_unregister(x.regs, x.nregs));
	W_OK(r, dvx_bootstrap_barrier(&r->bs, 120 * W_SEC));		/* C */
}

static void stuck_body(struct wrank *r)
{
	if (r->rank == 0) {
		stuck_active(r);
		return;
	}
	W_OK(r, dvx_bootstrap_barrier(&r->bs, 120 * W_SEC));		/* A */
	W_OK(r, dvx_bootstrap_barrier(&r->bs, 120 * W_SEC));		/* C */
	W_CHECK(r, *(const uint64_t *)wrecv(r, 0) == 0x57c4 && r->sig[STUCK_SIG] == 1,
		"the put after the stay: %#llx, signal %llu",
		(unsigned long long)*(const uint64_t *)wrecv(r, 0),
		(unsigned long long)r->sig[STUCK_SIG]);
}

static void test_gpu_recover_stuck(void **state)
{
	(void)state;
	gated_world(stuck_body, 0);
}

/* the NVL forms on this GPU's memory (the mapping of a peer is the same kind of
 * pointer): fetch-adds at every scope, and compare-swap as a lock by every block */
static void test_gpu_nvl_amo(void **state)
{
	static uint64_t old[NTH];
	static uint8_t seen[NTH];
	struct dvx_gpu_mem m;
	uint64_t word, oldp, v;
	uint32_t sc, i, rounds = 64;
	int at = 0, err;

	(void)state;
	assert_int_equal(dvx_gpu_mem_alloc(&E.g, 16 + NTH * 8, 0, &m), 0);
	word = m.dptr;
	oldp = m.dptr + 16;
	for (sc = 0; sc < 4; sc++) {
		void *args[] = { &word, &oldp, &sc, &E.status.dptr };

		v = 0;
		assert_int_equal(dvx_gpu_memcpy_htod(&E.g, word, &v, 8), 0);
		err = run(E.k_nvl_fadd, GRID, BLOCK, args, NTH, &at);
		if (err)
			fail_msg("nvl fetch-add %s: thread %d: %d", scope_name[sc], at, err);
		assert_int_equal(dvx_gpu_memcpy_dtoh(&E.g, old, oldp, NTH * 8), 0);
		assert_int_equal(dvx_gpu_memcpy_dtoh(&E.g, &v, word, 8), 0);
		assert_true(v == NTH);
		memset(seen, 0, sizeof(seen));
		for (i = 0; i < NTH; i++) {
			if (old[i] >= NTH || seen[old[i]])
				fail_msg("nvl fetch-add %s: thread %u got %llu", scope_name[sc], i,
					 (unsigned long long)old[i]);
			seen[old[i]] = 1;
		}
	}
	{
		uint64_t z[2] = { 0, 0 }, cnt = m.dptr + 8;
		void *args[] = { &word, &cnt, &rounds, &E.status.dptr };

		assert_int_equal(dvx_gpu_memcpy_htod(&E.g, word, z, 16), 0);
		err = run(E.k_nvl_lock, GRID, 32, args, GRID, &at);
		if (err)
			fail_msg("nvl lock: block %d: %d", at, err);
		assert_int_equal(dvx_gpu_memcpy_dtoh(&E.g, z, word, 16), 0);
		assert_true(z[0] == 0);
		assert_true(z[1] == (uint64_t)GRID * rounds);
	}
	assert_int_equal(dvx_gpu_mem_free(&m), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gpu_rma),
		cmocka_unit_test(test_gpu_nvl_amo),
		cmocka_unit_test(test_gpu_recover),
		cmocka_unit_test(test_gpu_recover_contended),
		cmocka_unit_test(test_gpu_recover_stuck),
	};
	unsigned n = 0;
	int rc;

	E.hal = dvx_hal_cuda();
	if (!E.hal)
		return skip_or_fail("libdvx was built without CUDA (CONFIG_DVX_GPU=n)");
	if (dvx_fatbin_tests_gpu_rma_kernels_len == 0)
		return skip_or_fail("the test kernels were built without nvcc");
	if (dvx_gpu_count(E.hal, &n) || n == 0)
		return skip_or_fail("no NVIDIA GPU or driver found");
	if (dvx_gpu_open(&E.g, E.hal, 0, NULL) ||
	    dvx_gpu_module_load(&E.g, dvx_fatbin_tests_gpu_rma_kernels,
				dvx_fatbin_tests_gpu_rma_kernels_len, &E.mod) ||
	    dvx_gpu_module_function(&E.mod, "t_fadd", &E.k_fadd) ||
	    dvx_gpu_module_function(&E.mod, "t_get", &E.k_get) ||
	    dvx_gpu_module_function(&E.mod, "t_get_perm", &E.k_get_perm) ||
	    dvx_gpu_module_function(&E.mod, "t_lock", &E.k_lock) ||
	    dvx_gpu_module_function(&E.mod, "t_recover", &E.k_recover) ||
	    dvx_gpu_module_function(&E.mod, "t_contend", &E.k_contend) ||
	    dvx_gpu_module_function(&E.mod, "t_stuck", &E.k_stuck) ||
	    dvx_gpu_module_function(&E.mod, "t_reset", &E.k_reset) ||
	    dvx_gpu_module_function(&E.mod, "t_nvl_fadd", &E.k_nvl_fadd) ||
	    dvx_gpu_module_function(&E.mod, "t_nvl_lock", &E.k_nvl_lock) ||
	    dvx_gpu_stream_create(&E.g, &E.s) ||
	    dvx_gpu_mem_alloc(&E.g, (NTH + 64) * 4, 0, &E.status)) {
		fprintf(stderr, "gpu set-up failed: %s: %s\n", E.g.hg.diag.op, E.g.hg.diag.msg);
		return 1;
	}
	printf("gpu: %s (%s) sm_%d%d, %u SMs\n", E.g.attr.name, E.g.attr.pci, E.g.attr.cc_major,
	       E.g.attr.cc_minor, E.g.attr.sm_count);
	rc = cmocka_run_group_tests_name("gpu-rma", tests, NULL, NULL);
	dvx_gpu_mem_free(&E.status);
	dvx_gpu_stream_destroy(&E.s);
	dvx_gpu_module_unload(&E.mod);
	dvx_gpu_close(&E.g);
	return rc;
}
