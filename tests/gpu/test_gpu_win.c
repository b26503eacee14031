// SPDX-License-Identifier: MIT
/*
 * tests/gpu/test_gpu_win.c - the window on real GPUs: rank r on GPU r mod the number of
 * GPUs (gpu_ranks.h: one GPU shared, or mappings that cross GPUs) (one is enough: ranks that share
 * a GPU map each other's memory the same way).
 *
 *  - processes: 2 ranks (POSIX-fd memory) and 3 ranks (legacy IPC memory) as processes
 *    on GPUs r % n over the sockets bootstrap, all NVL: kernels at thread, warp and
 *    block scope run rounds of put_signal into every peer's window buffer (every byte
 *    checked on the GPU), signal_all with sums and single slots exact, put_counter with
 *    counters exact, barrier 0; barrier 1 reused across 100 launches; send/recv of 8 B
 *    to 64 MiB with every peer through 4 slots of 64 KiB (up to 1024 pipeline turns),
 *    every byte checked; small messages around the flagged-line threshold (0 B to
 *    2 * DVX_WIN_LL_MAX, a few rounds back to back) at every scope; refusals (another layout version, self, bad id) and waits that
 *    must time out;
 *  - mixed: 3 ranks as threads of one process, an injected topology (ranks 0 and 1 one
 *    host, rank 2 another), IB over the software NIC (the IB region in host memory the
 *    GPU maps): signal_all and sums over NVL and IB rows at once, barriers across
 *    launches, send/recv with the NVL peer and the IB peer at warp and block scope,
 *    small messages around the flagged-line threshold, 300 rounds back to back in one
 *    launch at every scope,
 *    SET refused on an IB peer;
 *  - verbs: every one-sided verb from one kernel to IB peers (3 ranks on 3 hosts, the
 *    window buffer in host memory, then in GPU memory) and to NVL and IB peers at once
 *    (4 ranks, 2 per host, GPU memory), at every scope, every byte checked on the GPU;
 *    then (k_win_rma) gets of random ranges checked byte by byte, put_value, add,
 *    fetch_add (old values a permutation), compare_swap (one winner a word),
 *    reset_peer_signal and quiet, the default device timeout, a get through a window
 *    without DVX_WIN_F_READ (IB: -EPERM, nothing written; NVL: allowed), and
 *    compare-swap as a lock at rank 0 by the IB and by the NVL contenders, counted;
 *  - verbs as processes: the 4-rank world (2 per host) with every rank a process on
 *    the software NIC's wire, each with its own fabric and copy engines for GPU memory,
 *    the window buffer in GPU memory: every verb at every scope, k_win_rma at every scope
 *    (4 processes on one GPU are time-sliced and each NIC access to GPU memory waits for
 *    its process's slice: block scope runs one round there, about 45 s).
 *
 * Under compute-sanitizer (DVX_GPU_SANITIZER=1) a launch waits for the process's
 * running kernels, so the threads' part reuses its barrier over one launch only.
 *
 * The parent never touches CUDA (children do everything). Without a GPU it skips (exit
 * 77); 'make gpu-check' runs it and fails instead. DVX_GPU_TEST_QUICK=1: fewer rounds;
 * DVX_GPU_TEST_ONLY=PATTERN: only the cases whose names match (cmocka's pattern).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../lib/dvx_test.h"

#include <dvx/gpu/gpu.h>
#include <dvx/win/win.h>
#include <dvx/p2p/gpu.h>
#include <dvx/hal/sim.h>
#include <dvx/bootstrap/wire.h>

#include "../lib/sim_world.h"
#include "gpu_ranks.h"
#include "gpu_proc.h"
#include "../lib/gpu_dma.h"

extern const unsigned char dvx_fatbin_tests_gpu_win_kernels[];
extern const size_t dvx_fatbin_tests_gpu_win_kernels_len;

#define SEC 1000000000ull
#define TMO (30 * SEC)
#define SLOT (64u << 10)		/* each rank's part of a window buffer */
#define SR_MAX (64ull << 20)		/* the largest send/recv */
#define SKIP 77
#define MIXN 3
#define VMAX 4			/* ranks of the verbs' worlds at most */
#define VSLOT (16u << 10)	/* each rank's part of a peer's window buffer there */

enum { S_THREAD, S_WARP, S_BLOCK };
static const char *const scope_name[] = { "thread", "warp", "block" };
static const uint32_t scope_block[] = { 1, 32, 256 };
static int quick, skipped, sanitizer;

#define CFAIL(...) do { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); return 1; } while (0)
#define COK(e) do { int e_ = (e); if (e_) CFAIL("%s:%d: %s = %d", __FILE__, __LINE__, #e, e_); } while (0)

/* the kernels, and their status words in host memory the GPU maps: no copy (and so no
 * synchronising call) stands between one launch and the next while other ranks' kernels
 * spin (compute-sanitizer turns synchronous copies into device-wide waits) */
struct kern {
	struct dvx_gpu_module mod;
	void *rounds, *barrier, *sendrecv, *refuse, *srrounds, *verbs, *rma;
	struct dvx_gpu_hostreg hr;
	volatile int32_t *st;
	uint64_t status;
};

static int kern_up(struct dvx_gpu *g, struct kern *k)
{
	COK(dvx_gpu_module_load(g, dvx_fatbin_tests_gpu_win_kernels,
				dvx_fatbin_tests_gpu_win_kernels_len, &k->mod));
	COK(dvx_gpu_module_function(&k->mod, "k_win_rounds", &k->rounds));
	COK(dvx_gpu_module_function(&k->mod, "k_win_barrier", &k->barrier));
	COK(dvx_gpu_module_function(&k->mod, "k_win_sendrecv", &k->sendrecv));
	COK(dvx_gpu_module_function(&k->mod, "k_win_sendrecv_rounds", &k->srrounds));
	COK(dvx_gpu_module_function(&k->mod, "k_win_refuse", &k->refuse));
	COK(dvx_gpu_module_function(&k->mod, "k_win_verbs", &k->verbs));
	COK(dvx_gpu_module_function(&k->mod, "k_win_rma", &k->rma));
	k->st = aligned_alloc(4096, 4096);
	if (!k->st)
		CFAIL("no memory");
	COK(dvx_gpu_host_register(g, (void *)k->st, 4096, 0, &k->hr));
	k->status = k->hr.dptr;
	return 0;
}

static void kern_down(struct kern *k)
{
	dvx_gpu_host_unregister(&k->hr);
	free((void *)k->st);
	dvx_gpu_module_unload(&k->mod);
}

/* one group of @scope: launch and wait; 0 or the first thread's error */
static int run_k(struct dvx_gpu *g, struct kern *k, struct dvx_gpu_stream *s, void *f,
		 uint32_t block, void **args)
{
	uint32_t i;
	int err;

	for (i = 0; i < block; i++)
		k->st[i] = 0x7f7f7f7f;	/* a kernel that never ran fails */
	dvx_fence(DVX_SCOPE_SYS);
	err = dvx_gpu_launch(g, f, 1, block, 0, s, args);
	if (!err)
		err = dvx_gpu_stream_wait(s, 120 * SEC);
	if (err)
		return err;
	dvx_fence(DVX_SCOPE_SYS);
	for (i = 0; i < block; i++)
		if (k->st[i])
			return k->st[i];
	return 0;
}

/* what a rank runs: the kernels, over an exchanged window */
struct wrun {
	struct dvx_gpu *g;
	struct kern *k;
	struct dvx_gpu_stream *s;
	struct dvx_win_dev d;
	struct dvx_p2p_lbuf src;	/* n * SLOT of GPU memory (no keys: NVL only) */
	uint64_t sbuf, rbuf;		/* SR_MAX + 1 each */
	struct dvx_bootstrap *bs;
	int me;
	int ib;				/* the mixed topology (no window buffer) */
	int sliced;			/* ranks as processes on one GPU: time-sliced */
};

static int sendrecv(struct wrun *w, uint32_t scope, uint64_t len, uint64_t round)
{
	uint8_t guard = 0xee;
	uint64_t tmo = TMO;
	void *args[] = { &w->d, &scope, &len, &round, &w->sbuf, &w->rbuf, &tmo, &w->k->status };
	int err;

	COK(dvx_gpu_memcpy_htod(w->g, w->rbuf + len, &guard, 1));
	COK(dvx_bootstrap_barrier(w->bs, TMO));
	err = run_k(w->g, w->k, w->s, w->k->sendrecv, scope_block[scope], args);
	if (err)
		CFAIL("rank %d: send/recv %s scope, %llu B: %d", w->me, scope_name[scope],
		      (unsigned long long)len, err);
	return 0;
}

static int run_all(struct wrun *w)
{
	static const uint64_t sizes[] = { 8, 4096, 1u << 20, SR_MAX };
	uint64_t slot = SLOT, round0 = 0, tmo = TMO;
	uint32_t scope, nrounds = quick ? 1 : 3, id = 1, one = 1, ver = DVX_WIN_DEV_VERSION + 1;
	unsigned i, launches = quick ? 10 : 100;
	int err;

	/* under compute-sanitizer a launch waits for the process's running kernels: ranks
	 * that are threads of one process cannot launch while another's kernel waits for
	 * them, so the threads' barrier reuse is one launch there (the processes run all) */
	if (w->ib && sanitizer)
		launches = 1;

	/* rounds at every scope; the signals and counters keep counting across launches */
	for (scope = S_THREAD; scope <= S_BLOCK; scope++, round0 += nrounds) {
		void *args[] = { &w->d, &scope, &w->src, &slot, &round0, &nrounds, &tmo,
				 &w->k->status };

		COK(dvx_bootstrap_barrier(w->bs, TMO));
		err = run_k(w->g, w->k, w->s, w->k->rounds, scope_block[scope], args);
		if (err)
			CFAIL("rank %d: rounds at %s scope: %d", w->me, scope_name[scope], err);
	}
	/* barrier 1 reused launch after launch */
	COK(dvx_bootstrap_barrier(w->bs, TMO));
	for (i = 0; i < launches; i++) {
		uint32_t sc = i % 3;
		void *args[] = { &w->d, &sc, &id, &one, &tmo, &w->k->status };

		err = run_k(w->g, w->k, w->s, w->k->barrier, scope_block[sc], args);
		if (err)
			CFAIL("rank %d: barrier launch %u: %d", w->me, i, err);
	}
	/* send/recv: every size at warp and block scope, the small ones by a thread */
	for (scope = S_THREAD; scope <= S_BLOCK; scope++)
		for (i = 0; i < 4; i++) {
			uint64_t len = sizes[i];

			if ((scope == S_THREAD && len > 4096) || (w->ib && len > (1u << 20)) ||
			    (quick && len > (1u << 20)))
				continue;
			if (sendrecv(w, scope, len, i + 10 * scope))
				return 1;
		}
	/* small messages back to back around the flagged-line threshold (64 KiB slots:
	 * dvx_win_ll_max() is DVX_WIN_LL_MAX), every scope; ranks that are processes share
	 * the GPU and take turns on it, so a few rounds there, hundreds between threads */
	for (scope = S_THREAD; scope <= S_BLOCK; scope++)
		for (i = 0; i < 7; i++) {
			static const uint64_t small[] = { 0, 8, 100, DVX_WIN_LL_MAX - 1, DVX_WIN_LL_MAX,
							  DVX_WIN_LL_MAX + 1, 2 * DVX_WIN_LL_MAX };
			uint64_t len = small[i];
			uint32_t rounds = w->ib ? (quick ? 50 : 300) : 4;
			uint8_t guard = 0xee;
			void *args[] = { &w->d, &scope, &len, &rounds, &w->sbuf, &w->rbuf, &tmo,
					 &w->k->status };

			COK(dvx_gpu_memcpy_htod(w->g, w->rbuf + len, &guard, 1));
			COK(dvx_bootstrap_barrier(w->bs, TMO));
			err = run_k(w->g, w->k, w->s, w->k->srrounds, scope_block[scope], args);
			if (err)
				CFAIL("rank %d: %u rounds of send/recv, %s scope, %llu B: %d", w->me,
				      rounds, scope_name[scope], (unsigned long long)len, err);
		}
	/* refusals and timeouts */
	{
		void *args[] = { &w->d, &ver, &w->k->status };

		COK(dvx_bootstrap_barrier(w->bs, TMO));
		err = run_k(w->g, w->k, w->s, w->k->refuse, 1, args);
		if (err)
			CFAIL("rank %d: refusal check %d failed", w->me, err);
	}
	COK(dvx_bootstrap_barrier(w->bs, TMO));
	return 0;
}

/* ---- part 1: processes, all NVL ------------------------------------------------------ */

/* one rank of the processes' run, its objects from open to close */
struct pr {
	int me, n;
	uint32_t memflags;
	struct dvx_bootstrap bs;
	struct dvx_gpu g;
	struct dvx_mp mp;
	struct dvx_win win;
	struct dvx_gpu_mem nvl, dev, data, src, sr;
	struct dvx_gpu_stream s;
	struct kern k;
	struct wrun w;
	void *state, *wstate;
};

/* phase open: the GPU (rank r on GPU r mod n), the sockets bootstrap at @addr, the
 * multi-peer transport (everyone NVL), the kernels and a stream */
static int pr_open(struct pr *x, const char *addr, unsigned cnt)
{
	if (gpu_proc_up(&(struct gpu_proc){ &x->bs, &x->g, &x->mp, &x->state, addr, x->me, x->n,
					    x->me % (int)cnt, 0, TMO }))
		return 1;
	COK(kern_up(&x->g, &x->k));
	COK(dvx_gpu_stream_create(&x->g, &x->s));
	return 0;
}

/* phase window: configuration, regions in GPU memory, init, the exchange (and a second
 * one refused) */
static int pr_window(struct pr *x)
{
	struct dvx_win_cfg wc;
	struct dvx_mem_req req[DVX_WIN_MEM_N];
	struct dvx_win_regions mem;
	uint64_t dlen = (uint64_t)x->n * SLOT;
	int err;

	memset(&wc, 0, sizeof(wc));
	wc.signals = 4;
	wc.counters = 2;
	wc.barriers = 2;
	wc.slots = 4;
	wc.slot_bytes = SLOT;
	wc.stream = &x->s;
	wc.timeout_ns = TMO;
	COK(dvx_win_mem_req(&x->mp, &wc, req));
	x->wstate = aligned_alloc(64, (req[DVX_WIN_MEM_STATE].bytes + 63) & ~(uint64_t)63);
	COK(dvx_gpu_mem_alloc(&x->g, req[DVX_WIN_MEM_NVL].bytes, x->memflags, &x->nvl));
	COK(dvx_gpu_mem_alloc(&x->g, req[DVX_WIN_MEM_DEV].bytes, 0, &x->dev));
	COK(dvx_gpu_mem_alloc(&x->g, dlen, x->memflags, &x->data));
	COK(dvx_gpu_mem_alloc(&x->g, dlen, 0, &x->src));
	COK(dvx_gpu_mem_alloc(&x->g, 2 * (SR_MAX + 64), 0, &x->sr));
	memset(&mem, 0, sizeof(mem));
	mem.state = x->wstate;
	mem.state_len = req[DVX_WIN_MEM_STATE].bytes;
	mem.nvl = (void *)(uintptr_t)x->nvl.dptr;
	mem.nvl_len = req[DVX_WIN_MEM_NVL].bytes;
	mem.dev = x->dev.dptr;
	mem.dev_len = req[DVX_WIN_MEM_DEV].bytes;
	memset(&x->win, 0, sizeof(x->win));
	COK(dvx_win_init(&x->win, &x->mp, &wc, &mem));
	err = dvx_win_exchange(&x->win, (void *)(uintptr_t)x->data.dptr, dlen);
	if (err)
		CFAIL("rank %d: exchange %d (%s)", x->me, err, x->win.diag.msg);
	if (dvx_win_exchange(&x->win, (void *)(uintptr_t)x->data.dptr, dlen) != -EALREADY)
		CFAIL("rank %d: a second exchange was not -EALREADY", x->me);
	return 0;
}

/* phase run: the device handle and run_all() */
static int pr_run(struct pr *x)
{
	struct wrun *w = &x->w;

	memset(w, 0, sizeof(*w));
	COK(dvx_win_dev_make(&x->win, NULL, &w->d));
	w->g = &x->g;
	w->k = &x->k;
	w->s = &x->s;
	w->src.ptr = (void *)(uintptr_t)x->src.dptr;
	w->src.addr = x->src.dptr;
	w->src.len = (uint64_t)x->n * SLOT;
	w->sbuf = x->sr.dptr;
	w->rbuf = x->sr.dptr + SR_MAX + 64;
	w->bs = &x->bs;
	w->me = x->me;
	return run_all(w);
}

static int pr_close(struct pr *x)
{
	COK(dvx_win_fini(&x->win));
	COK(dvx_bootstrap_barrier(&x->bs, TMO));
	dvx_gpu_mem_free(&x->sr);
	dvx_gpu_mem_free(&x->src);
	dvx_gpu_mem_free(&x->data);
	dvx_gpu_mem_free(&x->dev);
	dvx_gpu_mem_free(&x->nvl);
	dvx_gpu_stream_destroy(&x->s);
	kern_down(&x->k);
	free(x->wstate);
	return gpu_proc_down(&x->mp, &x->bs, &x->g, x->state) ? 1 : 0;
}

/* one rank as a process, in its phases: open, window, run, close (SKIP without a GPU) */
static int proc_rank(const char *addr, int me, int n, uint32_t memflags)
{
	static struct pr x;
	unsigned cnt = 0;

	if (dvx_gpu_count(dvx_hal_cuda(), &cnt) || !cnt)
		return SKIP;
	memset(&x, 0, sizeof(x));
	x.me = me;
	x.n = n;
	x.memflags = memflags;
	return pr_open(&x, addr, cnt) || pr_window(&x) || pr_run(&x) || pr_close(&x);
}

struct proc_arg {
	char addr[96];
	uint32_t flags;
};

static int proc_main(int r, int n, void *arg)
{
	struct proc_arg *a = arg;

	return proc_rank(a->addr, r, n, a->flags);
}

static void test_processes(void **state)
{
	struct proc_arg a;
	int n, ret;

	(void)state;
	for (n = 2; n <= 3; n++) {
		snprintf(a.addr, sizeof(a.addr), "unix:/tmp/dvx-gpu-win-%d-%d.sock", (int)getpid(), n);
		a.flags = n == 2 ? DVX_GPU_MEM_EXPORT : DVX_GPU_MEM_LEGACY;
		ret = dvx_test_fork_all(n, proc_main, &a);
		if (ret == SKIP) {
			skipped = 1;
			skip();
		}
		if (ret)
			fail_msg("%d processes: a rank failed (%d)", n, ret);
		printf("processes: %d ranks (%s): rounds, barriers over %d launches, send/recv to %s\n",
		       n, n == 2 ? "POSIX fd" : "legacy IPC", quick ? 10 : 100, quick ? "1 MiB" : "64 MiB");
	}
}

/* ---- part 2: threads, NVL and IB (software NIC) at once ------------------------------ */

struct mixed {
	struct dvx_tw tw;	/* the injected hosts, the fabric, the bootstrap group */
	struct dvx_gdma gdma;	/* data_gpu: the GPUs' hal whose dma-bufs the fabric reaches */
	int n;			/* ranks */
	int verbs;		/* run k_win_verbs over a window buffer, not run_all() */
	int data_gpu;		/* the window buffer and sources in GPU memory, else host memory */
	const int *hosts;	/* [n] each rank's host (NULL: ranks 0 and 1 one host, 2 another) */
	int ret[VMAX];
	/* ranks as processes (verbs_procs()): this process's bootstrap (each rank's is a
	 * duplicate of it), and tw holds its fabric (its own NIC, the wire to the others'
	 * processes) and the facts */
	struct dvx_bootstrap *pbs;
	char addr[96];		/* the sockets bootstrap's address */
	int ngpus;		/* processes: the GPUs the ranks share (r on r % ngpus) */
};

/* the verbs at every scope, over the window buffer; then gets, the one-word
 * operations and the resets (k_win_rma) at every scope */
static int run_verbs(struct wrun *w, struct dvx_p2p_lbuf *src)
{
	uint64_t slot = VSLOT, round0 = 0, tmo = TMO, qtmo = w->sliced ? TMO : 0;
	uint32_t scope, nrounds = quick ? 2 : 20;
	int err;

	for (scope = S_THREAD; scope <= S_BLOCK; scope++, round0 += nrounds) {
		void *args[] = { &w->d, &scope, src, &slot, &round0, &nrounds, &tmo, &w->k->status };

		COK(dvx_bootstrap_barrier(w->bs, TMO));
		err = run_k(w->g, w->k, w->s, w->k->verbs, scope_block[scope], args);
		if (err)
			CFAIL("rank %d: every verb at %s scope: %d", w->me, scope_name[scope], err);
	}
	nrounds = quick || w->sliced ? 2 : 8;
	/* ranks as processes sharing a GPU are time-sliced, and every one-sided operation's
	 * NIC access to GPU memory is a copy that waits for its process's slice: about 7 ms
	 * an operation, linear in the threads (2 rounds: thread 1.4 s, warp 11.9 s, block
	 * 89.5 s on one H200, bench/RESULTS.md 2026-11-29). So that world runs 2 rounds, and
	 * one at block scope under a bound of 100 s (30 s was what timed out before) */
	for (scope = S_THREAD; scope <= S_BLOCK; scope++, round0 += nrounds) {
		void *args[] = { &w->d, &scope, src, &slot, &round0, &nrounds, &tmo, &qtmo,
				 &w->k->status };
		struct timespec t0, t1;

		if (w->sliced && scope == S_BLOCK) {
			nrounds = 1;
			tmo = qtmo = 100 * SEC;
		}
		COK(dvx_bootstrap_barrier(w->bs, TMO));
		clock_gettime(CLOCK_MONOTONIC, &t0);
		err = run_k(w->g, w->k, w->s, w->k->rma, scope_block[scope], args);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (w->sliced && w->me == 0)
			printf("verbs as processes: k_win_rma at %s scope, %u round(s): %d in %.1f s\n",
			       scope_name[scope], nrounds, err,
			       (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
		if (err)
			CFAIL("rank %d: gets, one-word operations, resets at %s scope: %d", w->me,
			      scope_name[scope], err);
	}
	COK(dvx_bootstrap_barrier(w->bs, TMO));
	return 0;
}

/* one rank of the mixed run, its objects from open to close */
struct mxr {
	struct mixed *mx;
	int me;
	struct dvx_bootstrap bs;
	struct dvx_gpu g;
	struct dvx_nic nic;
	struct dvx_mp mp;
	struct dvx_mem_req rreq;
	struct dvx_win win;
	struct dvx_win_cfg wc;
	struct dvx_mem_req req[DVX_WIN_MEM_N];
	struct dvx_gpu_mem nvl, dev, sr, dm, gdata, gsrc;
	struct dvx_gpu_hostreg regs[16], hr, hdata, hsrc;
	uint32_t nregs;
	struct dvx_p2p_lbuf lsrc;
	void *data, *srcp, *hd, *hs;	/* the window buffer and sources (verbs) */
	uint64_t dlen;
	struct dvx_mp_dev mpdev;
	struct dvx_gpu_stream s;
	struct kern k;
	struct wrun w;
	void *state, *wstate, *ist, *irings, *ibmem;
};

/* phase open: bootstrap, GPU, NIC, the multi-peer transport with its IB lanes
 * connected, the kernels and a stream */
static int mxr_open(struct mxr *x)
{
	struct mixed *mx = x->mx;
	struct dvx_nic_cfg na;
	struct dvx_mp_cfg c;
	struct dvx_mem_req sreq;
	char name[16];

	if (mx->pbs)
		COK(dvx_bootstrap_dup(mx->pbs, &x->bs));
	else
		COK(dvx_bootstrap_thread_init(&x->bs, mx->tw.g, x->me));
	COK(dvx_gpu_open(&x->g, mx->data_gpu ? dvx_gdma_hal(&mx->gdma) : dvx_hal_cuda(),
			 gpu_of_rank(x->me), NULL));
	memset(&na, 0, sizeof(na));
	snprintf(name, sizeof(name), "sim_%d", x->me);
	na.name = name;
	na.gid_index = -1;
	COK(dvx_nic_open(&x->nic, dvx_sim_hal(mx->tw.fab), &na));
	memset(&c, 0, sizeof(c));
	c.rank = x->me;
	c.nranks = mx->n;
	c.bs = &x->bs;
	c.gpu = &x->g;
	c.ib.nnics = 1;
	c.ib.nics[0] = &x->nic;
	c.ib.qps_per_nic = 1;
	c.ib.sq_depth = mx->verbs ? 1024 : 256;	/* k_win_rma: 256 members post at once */
	c.ib.comp_depth = 16;
	c.ib.flags = mx->verbs ? DVX_P2P_F_READ : 0;	/* k_win_rma's gets */
	c.inject = mx->tw.inf;
	c.timeout_ns = TMO;
	x->state = aligned_alloc(64, (dvx_mp_mem_size(&c) + 63) & ~(size_t)63);
	COK(dvx_mp_init(&x->mp, &c, x->state, dvx_mp_mem_size(&c)));
	COK(dvx_mp_ib_mem_req(&x->mp, &sreq, &x->rreq));
	x->ist = aligned_alloc(64, (sreq.bytes + 63) & ~(uint64_t)63);
	x->irings = aligned_alloc(4096, (x->rreq.bytes + 4095) & ~(uint64_t)4095);
	COK(dvx_mp_connect(&x->mp, x->ist, sreq.bytes, x->irings, x->rreq.bytes));
	COK(kern_up(&x->g, &x->k));
	COK(dvx_gpu_stream_create(&x->g, &x->s));
	return 0;
}

/* phase window: its configuration and regions (the IB region in host memory the
 * software NIC reaches and the GPU maps), dvx_win_init() */
static int mxr_window(struct mxr *x)
{
	struct dvx_win_cfg *wc = &x->wc;
	struct dvx_mem_req *req = x->req;
	struct dvx_win_regions mem;

	memset(wc, 0, sizeof(*wc));
	wc->signals = 4;
	wc->counters = 2;
	wc->barriers = x->mx->verbs ? 1 + (uint32_t)x->mx->n : 2;
	wc->slots = 4;
	wc->slot_bytes = 16384;
	wc->flags = DVX_WIN_F_IB_HOST | (x->mx->verbs ? DVX_WIN_F_READ : 0);
	wc->stream = &x->s;
	wc->timeout_ns = TMO;
	COK(dvx_win_mem_req(&x->mp, wc, req));
	x->wstate = aligned_alloc(64, (req[DVX_WIN_MEM_STATE].bytes + 63) & ~(uint64_t)63);
	memset(&mem, 0, sizeof(mem));
	mem.state = x->wstate;
	mem.state_len = req[DVX_WIN_MEM_STATE].bytes;
	if (req[DVX_WIN_MEM_NVL].bytes) {
		COK(dvx_gpu_mem_alloc(&x->g, req[DVX_WIN_MEM_NVL].bytes, DVX_GPU_MEM_EXPORT,
				      &x->nvl));
		mem.nvl = (void *)(uintptr_t)x->nvl.dptr;
		mem.nvl_len = req[DVX_WIN_MEM_NVL].bytes;
	}
	x->ibmem = aligned_alloc(4096, (req[DVX_WIN_MEM_IB].bytes + 4095) & ~(uint64_t)4095);
	COK(dvx_gpu_host_register(&x->g, x->ibmem, req[DVX_WIN_MEM_IB].bytes, 0, &x->hr));
	if (x->hr.dptr != (uint64_t)(uintptr_t)x->ibmem)
		CFAIL("rank %d: host memory mapped at another address", x->me);
	mem.ib = x->ibmem;
	mem.ib_len = req[DVX_WIN_MEM_IB].bytes;
	COK(dvx_gpu_mem_alloc(&x->g, req[DVX_WIN_MEM_DEV].bytes, 0, &x->dev));
	mem.dev = x->dev.dptr;
	mem.dev_len = req[DVX_WIN_MEM_DEV].bytes;
	COK(dvx_gpu_mem_alloc(&x->g, 2 * (SR_MAX + 64), 0, &x->sr));
	memset(&x->win, 0, sizeof(x->win));
	COK(dvx_win_init(&x->win, &x->mp, wc, &mem));
	return 0;
}

/* phase buffers (verbs): the window buffer and the sources, in GPU memory (the NVL
 * peers map it, the software NIC reaches it through its DMA callbacks) or in host memory
 * the GPU maps; exchanged, the sources registered */
static int mxr_buffers(struct mxr *x)
{
	struct mixed *mx = x->mx;
	int err;

	x->dlen = (uint64_t)mx->n * VSLOT;
	if (mx->verbs && mx->data_gpu) {
		COK(dvx_gpu_mem_alloc(&x->g, x->dlen, DVX_GPU_MEM_EXPORT, &x->gdata));
		COK(dvx_gpu_mem_alloc(&x->g, x->dlen, DVX_GPU_MEM_EXPORT, &x->gsrc));
		x->data = (void *)(uintptr_t)x->gdata.dptr;
		x->srcp = (void *)(uintptr_t)x->gsrc.dptr;
	} else if (mx->verbs) {
		x->hd = aligned_alloc(4096, x->dlen);
		x->hs = aligned_alloc(4096, x->dlen);
		if (!x->hd || !x->hs)
			CFAIL("no memory");
		memset(x->hd, 0, x->dlen);
		COK(dvx_gpu_host_register(&x->g, x->hd, x->dlen, 0, &x->hdata));
		COK(dvx_gpu_host_register(&x->g, x->hs, x->dlen, 0, &x->hsrc));
		if (x->hdata.dptr != (uint64_t)(uintptr_t)x->hd ||
		    x->hsrc.dptr != (uint64_t)(uintptr_t)x->hs)
			CFAIL("rank %d: host memory mapped at another address", x->me);
		x->data = x->hd;
		x->srcp = x->hs;
	}
	err = dvx_win_exchange(&x->win, x->data, x->data ? x->dlen : 0);
	if (err)
		CFAIL("mixed rank %d: exchange %d (%s)", x->me, err, x->win.diag.msg);
	if (x->data) {
		err = dvx_win_register_src(&x->win, x->srcp, x->dlen, &x->lsrc);
		if (err)
			CFAIL("rank %d: register_src %d (%s)", x->me, err, x->win.diag.msg);
	}
	return 0;
}

/* phase export: the IB lanes for kernels, the window's device handle, the run's
 * context; every rank's kernels loaded before any kernel spins (lazy loading) */
static int mxr_export(struct mxr *x)
{
	uint64_t need;

	COK(dvx_p2p_gpu_register(&x->mp.ib, &x->g, x->irings, x->rreq.bytes, 0, x->regs,
				 &x->nregs));
	COK(dvx_mp_dev_mem_req(&x->mp, &need));
	COK(dvx_gpu_mem_alloc(&x->g, need, 0, &x->dm));
	COK(dvx_mp_dev_export(&x->mp, NULL, x->regs, x->nregs, x->dm.dptr, x->dm.len, TMO,
			      &x->mpdev));
	memset(&x->w, 0, sizeof(x->w));
	COK(dvx_win_dev_make(&x->win, &x->mpdev, &x->w.d));
	x->w.g = &x->g;
	x->w.k = &x->k;
	x->w.s = &x->s;
	x->w.sbuf = x->sr.dptr;
	x->w.rbuf = x->sr.dptr + SR_MAX + 64;
	x->w.bs = &x->bs;
	x->w.me = x->me;
	x->w.ib = 1;
	x->w.sliced = x->mx->pbs && x->mx->ngpus < x->mx->n;
	COK(dvx_bootstrap_barrier(&x->bs, TMO));
	return 0;
}

/* phase close: the lanes back to the host, flushed, the window, every region */
static int mxr_close(struct mxr *x)
{
	COK(dvx_mp_dev_import(&x->mp, &x->mpdev));
	COK(dvx_p2p_gpu_unregister(x->regs, x->nregs));
	COK(dvx_p2p_flush(&x->mp.ib, 0, TMO, NULL));
	COK(dvx_bootstrap_barrier(&x->bs, TMO));
	if (x->data)
		COK(dvx_win_deregister_src(&x->win, x->srcp));
	COK(dvx_win_fini(&x->win));
	COK(dvx_bootstrap_barrier(&x->bs, TMO));
	COK(dvx_gpu_host_unregister(&x->hr));
	if (x->hd) {
		COK(dvx_gpu_host_unregister(&x->hdata));
		COK(dvx_gpu_host_unregister(&x->hsrc));
	} else if (x->data) {
		dvx_gpu_mem_free(&x->gsrc);
		dvx_gpu_mem_free(&x->gdata);
	}
	free(x->hd);
	free(x->hs);
	dvx_gpu_mem_free(&x->dm);
	dvx_gpu_mem_free(&x->sr);
	dvx_gpu_mem_free(&x->dev);
	if (x->req[DVX_WIN_MEM_NVL].bytes)
		dvx_gpu_mem_free(&x->nvl);
	dvx_gpu_stream_destroy(&x->s);
	kern_down(&x->k);
	COK(dvx_mp_fini(&x->mp));
	dvx_nic_close(&x->nic);
	dvx_bootstrap_fini(&x->bs);
	COK(dvx_gpu_close(&x->g));
	free(x->ibmem);
	free(x->irings);
	free(x->ist);
	free(x->wstate);
	free(x->state);
	return 0;
}

/* one rank of the mixed run, in its phases: open, window, buffers, export, run (every
 * verb, or run_all()), close. 0, or 1 with the cause on stderr (what a failed phase
 * made is left: the process ends) */
static int mixed_rank(struct mixed *mx, int me)
{
	struct mxr *x = calloc(1, sizeof(*x));
	int err;

	if (!x)
		CFAIL("rank %d: no memory", me);
	x->mx = mx;
	x->me = me;
	err = mxr_open(x) || mxr_window(x) || mxr_buffers(x) || mxr_export(x) ||
	      (mx->verbs ? run_verbs(&x->w, &x->lsrc) : run_all(&x->w)) || mxr_close(x);
	if (!err)
		free(x);
	return err;
}

struct marg {
	struct mixed *mx;
	int rank;
};

static void *mixed_main(void *arg)
{
	struct marg *a = arg;

	a->mx->ret[a->rank] = mixed_rank(a->mx, a->rank);
	return NULL;
}

static int mixed_proc(int r, int n, void *arg)
{
	static const int hosts3[MIXN] = { 0, 0, 1 };	/* ranks 0 and 1 one host */
	const struct mixed *want = arg;
	const int *hosts = want->hosts;
	struct mixed mx;
	struct marg ma[VMAX];
	uint8_t uuid[GPU_RANKS_MAX][16];
	int i, ngpus;

	(void)r;
	(void)n;
	ngpus = gpu_ranks_uuids(uuid);
	if (!ngpus)
		return SKIP;
	if (ngpus < 0)
		return 3;
	memset(&mx, 0, sizeof(mx));
	mx.n = want->n ? want->n : MIXN;
	mx.verbs = want->verbs;
	mx.data_gpu = want->data_gpu;
	i = dvx_tw_init(&mx.tw, mx.n, hosts ? hosts : hosts3, uuid[0]);
	if (i)
		return 4;
	dvx_tw_gpus(&mx.tw, (const uint8_t (*)[16])uuid, ngpus);	/* rank r on GPU r % ngpus */
	if (mx.data_gpu && dvx_gdma_init(&mx.gdma, mx.tw.fab))
		return 6;
	for (i = 0; i < mx.n; i++) {
		ma[i].mx = &mx;
		ma[i].rank = i;
	}
	dvx_tw_run(&mx.tw, mixed_main, ma, sizeof(ma[0]));
	if (mx.data_gpu) {
		struct dvx_sim_stats st;

		for (i = 0; i < DVX_GDMA_GPUS; i++)
			if (mx.gdma.eng[i].up)
				printf("  GPU %d: the software NIC's copies: %llu reads, %llu writes, %llu bytes%s\n",
				       i, (unsigned long long)mx.gdma.eng[i].reads,
				       (unsigned long long)mx.gdma.eng[i].writes,
				       (unsigned long long)mx.gdma.eng[i].bytes,
				       mx.gdma.eng[i].err ? " (a copy failed)" : "");
		fflush(stdout);
		if (!dvx_sim_get_stats(mx.tw.fab, &st) && st.dma_errors)
			return 7;
		dvx_gdma_fini(&mx.gdma);
	}
	for (i = 0; i < mx.n; i++)
		if (mx.ret[i])
			return mx.ret[i];
	return dvx_tw_fini(&mx.tw, NULL) ? 5 : 0;
}

/*
 * One rank of the verbs world as a process: the sockets bootstrap, a fabric of its own
 * with this rank's NIC joined to the other processes' by the wire, the GPUs' hal whose
 * dma-bufs this fabric reaches (GPU r % n's copy engine), then the rank as the threads'
 * world runs it. 0, or the failing step's code.
 */
static int verbs_proc(int r, int n, void *arg)
{
	const struct mixed *want = arg;
	struct dvx_bootstrap_sock_cfg ba;
	struct dvx_bootstrap_wire_cfg wa;
	struct dvx_sim_fabric_cfg fc;
	struct dvx_sim_nic_cfg nc;
	struct dvx_bootstrap bs;
	struct mixed *mx = calloc(1, sizeof(*mx));
	uint8_t uuid[GPU_RANKS_MAX][16];
	void *fmem = NULL, *wmem = NULL, *bsmem;
	size_t sz;
	int ngpus, ret = 0, err;

	if (!mx)
		return 2;
	ngpus = gpu_ranks_uuids(uuid);
	if (ngpus <= 0) {
		free(mx);
		return ngpus ? 3 : SKIP;
	}
	*mx = *want;
	memset(&ba, 0, sizeof(ba));
	ba.addr = want->addr;
	ba.rank = r;
	ba.nranks = n;
	ba.max_unexpected = 64;
	ba.slot_bytes = 8192;
	ba.timeout_ns = TMO;
	sz = dvx_bootstrap_sock_mem_size(n, 64, 8192);
	bsmem = aligned_alloc(64, (sz + 63) & ~(size_t)63);
	err = bsmem ? dvx_bootstrap_sock_init(&bs, &ba, bsmem, sz) : -ENOMEM;
	if (err) {
		fprintf(stderr, "rank %d: the sockets bootstrap at %s: %d\n", r, want->addr, err);
		free(bsmem);
		free(mx);
		return 4;
	}
	/* the facts the threads' world injects: rank r on GPU r % ngpus */
	dvx_tw_facts(&mx->tw, n, want->hosts, uuid[0]);
	dvx_tw_gpus(&mx->tw, (const uint8_t (*)[16])uuid, ngpus);
	dvx_sim_fabric_cfg_default(&fc);
	fc.max_nics = 1;
	fc.max_gpus = 0;
	fc.max_gpu_mems = 0;
	fc.max_qps = (uint32_t)n * 3u + 8u;
	fc.max_cqs = fc.max_qps;
	sz = dvx_sim_fabric_mem_size(&fc);
	fmem = calloc(1, sz);
	dvx_sim_nic_cfg_default(&nc, (unsigned)r);
	if (!fmem || dvx_sim_fabric_init(fmem, sz, &fc, &mx->tw.fab)) {
		ret = 5;
		goto out;
	}
	if (dvx_sim_add_nic(mx->tw.fab, &nc) != 0) {
		ret = 5;
		goto fab;
	}
	memset(&wa, 0, sizeof(wa));
	wa.fab = mx->tw.fab;
	wa.max_msg = 1u << 20;
	sz = dvx_bootstrap_wire_mem_size(n, wa.max_msg);
	wmem = calloc(1, sz);
	if (!wmem || dvx_bootstrap_wire_join(&bs, &wa, wmem, sz, TMO) ||
	    dvx_gdma_init(&mx->gdma, mx->tw.fab)) {
		fprintf(stderr, "rank %d: the wire or the copy engines\n", r);
		ret = 6;
		goto fab;
	}
	if (dvx_sim_start(mx->tw.fab)) {
		ret = 6;
		goto gdma;
	}
	mx->pbs = &bs;
	mx->ngpus = ngpus;
	mx->data_gpu = 1;
	mx->verbs = 1;
	ret = mixed_rank(mx, r);
	if (!ret) {
		struct dvx_sim_stats st;
		int i;

		for (i = 0; i < DVX_GDMA_GPUS; i++)
			if (mx->gdma.eng[i].up)
				printf("  rank %d, GPU %d: the software NIC's copies: %llu reads, %llu "
				       "writes, %llu bytes%s\n", r, i,
				       (unsigned long long)mx->gdma.eng[i].reads,
				       (unsigned long long)mx->gdma.eng[i].writes,
				       (unsigned long long)mx->gdma.eng[i].bytes,
				       mx->gdma.eng[i].err ? " (a copy failed)" : "");
		fflush(stdout);
		if (!dvx_sim_get_stats(mx->tw.fab, &st) && st.dma_errors)
			ret = 7;
		/* nobody's wire goes while another still answers it */
		if (!ret && dvx_bootstrap_barrier(&bs, TMO))
			ret = 8;
	}
	dvx_sim_stop(mx->tw.fab);
gdma:
	dvx_gdma_fini(&mx->gdma);
fab:
	dvx_sim_fini(mx->tw.fab);
out:
	dvx_bootstrap_fini(&bs);
	free(bsmem);
	free(wmem);
	free(fmem);
	free(mx);
	return ret;
}

/* the verbs world with 2 ranks per host (NVL and IB peers), the data in GPU memory,
 * ranks as processes on the wire */
static void test_verbs_procs_gpu(void **state)
{
	static const int hosts[4] = { 0, 0, 1, 1 };
	struct mixed want;
	int ret;

	(void)state;
	if (skipped)
		skip();
	memset(&want, 0, sizeof(want));
	want.n = 4;
	want.hosts = hosts;
	snprintf(want.addr, sizeof(want.addr), "unix:/tmp/dvx-gpu-win-v-%d.sock", (int)getpid());
	ret = dvx_test_fork_all(want.n, verbs_proc, &want);
	if (ret == SKIP) {
		skipped = 1;
		skip();
	}
	if (ret)
		fail_msg("verbs, 4 ranks as processes, 2 per host (NVL and IB), GPU memory: %d",
			 ret);
	printf("verbs: 4 ranks as processes on the wire, 2 per host (NVL and IB), data in GPU "
	       "memory: every verb and k_win_rma at every scope (block scope one round), every "
	       "byte checked on the GPU\n");
}

static void test_mixed(void **state)
{
	struct mixed want;
	int ret;

	(void)state;
	if (skipped)
		skip();
	memset(&want, 0, sizeof(want));
	ret = dvx_test_fork_all(1, mixed_proc, &want);
	if (ret == SKIP) {
		skipped = 1;
		skip();
	}
	if (ret)
		fail_msg("mixed NVL + IB: %d", ret);
	printf("mixed: 3 ranks as threads, NVL and IB (software NIC) peers: signals, barriers, send/recv\n");
}

/* one verbs world: @n ranks on @hosts, the data in GPU or host memory */
static void verbs_world(int n, const int *hosts, int data_gpu, const char *what)
{
	struct mixed want;
	int ret;

	if (skipped)
		skip();
	memset(&want, 0, sizeof(want));
	want.n = n;
	want.hosts = hosts;
	want.verbs = 1;
	want.data_gpu = data_gpu;
	ret = dvx_test_fork_all(1, mixed_proc, &want);
	if (ret == SKIP) {
		skipped = 1;
		skip();
	}
	if (ret)
		fail_msg("verbs, %s: %d", what, ret);
	printf("verbs: %s, data in %s memory: put + barrier_peer, put_signal, put_signal_counter, "
	       "wait/reset_counter, signal_peer, barrier; %d rounds a scope, every byte checked on "
	       "the GPU; get, put_value, add, fetch_add, compare_swap, reset_peer_signal, quiet, "
	       "the refused get, the lock at rank 0: %d rounds a scope\n", what,
	       data_gpu ? "GPU" : "host", quick ? 2 : 20, quick ? 2 : 8);
}

/* every verb from one kernel over IB peers (software NIC): 3 ranks on 3 hosts, the
 * window buffer and the sources in host memory the GPU maps */
static void test_verbs_ib_host(void **state)
{
	static const int hosts[3] = { 0, 1, 2 };

	(void)state;
	verbs_world(3, hosts, 0, "3 ranks on 3 hosts (IB)");
}

/* the same with the window buffer and the sources in GPU memory: the software NIC
 * reaches them through its DMA callbacks (gpu_dma.h) */
static void test_verbs_ib_gpu(void **state)
{
	static const int hosts[3] = { 0, 1, 2 };

	(void)state;
	verbs_world(3, hosts, 1, "3 ranks on 3 hosts (IB)");
}

/* NVL and IB peers from one kernel, the data in GPU memory: 4 ranks, two per host (rank
 * r on GPU r % n: two GPUs make each host's pair cross GPUs) */
static void test_verbs_mixed_gpu(void **state)
{
	static const int hosts[4] = { 0, 0, 1, 1 };

	(void)state;
	verbs_world(4, hosts, 1, "4 ranks, 2 per host (NVL and IB)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_processes),
		cmocka_unit_test(test_mixed),
		cmocka_unit_test(test_verbs_ib_host),
		cmocka_unit_test(test_verbs_ib_gpu),
		cmocka_unit_test(test_verbs_mixed_gpu),
		cmocka_unit_test(test_verbs_procs_gpu),
	};
	const char *q = getenv("DVX_GPU_TEST_QUICK");
	const char *req = getenv("DVX_GPU_REQUIRED");
	int rc;

	/* before CUDA starts: rank streams and the software NIC's copy streams each on a
	 * hardware queue of their own (gpu_dma.h, docs/win.md) */
	setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
	quick = q && *q == '1';
	sanitizer = getenv("DVX_GPU_SANITIZER") && *getenv("DVX_GPU_SANITIZER") == '1';
	if (!dvx_hal_cuda() || !dvx_fatbin_tests_gpu_win_kernels_len) {
		printf("built without CUDA or nvcc; run 'make gpu-check' on a machine with an NVIDIA GPU\n");
		return req && *req == '1' ? 1 : DVX_TEST_SKIP_ALL;
	}
	if (getenv("DVX_GPU_TEST_ONLY"))	/* a cmocka pattern: the cases to run */
		cmocka_set_test_filter(getenv("DVX_GPU_TEST_ONLY"));
	rc = cmocka_run_group_tests_name("gpu-win", tests, NULL, NULL);
	if (skipped) {
		printf("no NVIDIA GPU or driver found; run 'make gpu-check' on a machine with one\n");
		return req && *req == '1' ? 1 : DVX_TEST_SKIP_ALL;
	}
	return rc;
}
