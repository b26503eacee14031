// SPDX-License-Identifier: MIT
/*
 * tests/gpu/test_gpu_nvl.c - the NVLink path on real GPUs: rank r on GPU r mod the
 * number of GPUs (gpu_ranks.h), so one GPU is shared by every rank and two really cross
 * (one is enough for the mappings' logic: ranks that
 * share a GPU map each other's memory the same way).
 *
 *  - processes: 2 and 3 ranks as processes over the sockets bootstrap, the multi-peer
 *    transport discovering the topology (one host, its GPUs peers: all NVL),
 *    buffers shared through POSIX-fd handles and through legacy IPC; every scope
 *    (thread, warp, block) and operation (put then signal, put_signal, put_counter,
 *    put_signal_counter) sends a window to every peer, then waits check the signals
 *    (and a wait that must time out does), the host checks every byte and the counters;
 *  - threads: 2 ranks as threads of one process (the FD path imports in the process
 *    that exported), kernels running at once ping-pong put_signal/wait at every scope;
 *    the host-initiated put_signal on a stream; legacy memory reached by address;
 *  - small: 2 processes (on one GPU, and on GPUs r % count: two where there are two)
 *    send small messages as flagged lines (dvx_nvl_dev_put_ll() / dvx_nvl_dev_wait_ll()) at
 *    every scope, 0 bytes to twice DVX_NVL_LL_MAX, thousands of rounds each on the same
 *    lines, every byte checked; the refusals (sequence 0, misaligned lines) and a wait
 *    that must time out;
 *  - mixed: 3 ranks as threads, an injected topology (ranks 0 and 1 one host, rank 2
 *    another), IB over the software NIC: one kernel of rank 0 reaches its NVL peer
 *    through the mapping and its IB peer through the IB lanes, both from the
 *    multi-peer device handle.
 *
 * The parent never touches CUDA: every part runs in child processes (a process that
 * initialised CUDA cannot fork children that use it). Without a GPU it skips (exit 77);
 * 'make gpu-check' runs it and fails instead. DVX_GPU_TEST_QUICK=1: fewer rounds.
 */
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <ucontext.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../lib/dvx_test.h"

#include <dvx/gpu/gpu.h>
#include <dvx/mp/mp.h>
#include <dvx/mp/dev.h>
#include <dvx/nvl/ops.h>
#include <dvx/p2p/gpu.h>
#include <dvx/hal/sim.h>

#include "../lib/sim_world.h"
#include "gpu_ranks.h"

extern const unsigned char dvx_fatbin_tests_gpu_nvl_kernels[];
extern const size_t dvx_fatbin_tests_gpu_nvl_kernels_len;

#define SEC 1000000000ull
#define TMO (20 * SEC)
#define WIN (256u << 10)		/* each rank's window in a peer's buffer */
#define SIG_OFF(n) ((uint64_t)(n) * WIN)	/* then one 128-byte signal slot per rank */
#define CTR_OFF(n) (SIG_OFF(n) + (uint64_t)(n) * 128)
#define BUF_LEN(n) (CTR_OFF(n) + 4096)
#define MAXT 1024
#define SKIP 77

enum { S_THREAD, S_WARP, S_BLOCK };
static const char *const scope_name[] = { "thread", "warp", "block" };
static const char *const op_name[] = { "put+signal", "put_signal", "put_counter",
				       "put_signal_counter" };
static int quick;

#define CFAIL(...) do { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); return 1; } while (0)
#define COK(e) do { int e_ = (e); if (e_) CFAIL("%s:%d: %s = %d", __FILE__, __LINE__, #e, e_); } while (0)

static uint8_t pat(int from, int to, uint32_t round, uint64_t i)
{
	return (uint8_t)(from * 41 + to * 13 + round * 7 + i * 3 + (i >> 9));
}

struct kern {
	struct dvx_gpu_module mod;
	void *send, *wait, *pingpong, *mixed, *llpp, *llbad;
	struct dvx_gpu_mem status;
	int32_t st[MAXT];
};

static int kern_up(struct dvx_gpu *g, struct kern *k)
{
	COK(dvx_gpu_module_load(g, dvx_fatbin_tests_gpu_nvl_kernels,
				dvx_fatbin_tests_gpu_nvl_kernels_len, &k->mod));
	COK(dvx_gpu_module_function(&k->mod, "k_send", &k->send));
	COK(dvx_gpu_module_function(&k->mod, "k_wait", &k->wait));
	COK(dvx_gpu_module_function(&k->mod, "k_pingpong", &k->pingpong));
	COK(dvx_gpu_module_function(&k->mod, "k_mixed", &k->mixed));
	COK(dvx_gpu_module_function(&k->mod, "k_llpp", &k->llpp));
	COK(dvx_gpu_module_function(&k->mod, "k_llbad", &k->llbad));
	COK(dvx_gpu_mem_alloc(g, MAXT * 4, 0, &k->status));
	return 0;
}

static void kern_down(struct kern *k)
{
	dvx_gpu_mem_free(&k->status);
	dvx_gpu_module_unload(&k->mod);
}

/* launch and wait; 0 or the first thread's error (its index in *@at) */
static int run_k(struct dvx_gpu *g, struct kern *k, struct dvx_gpu_stream *s, void *f,
		 uint32_t grid, uint32_t block, void **args, int *at)
{
	uint32_t n = grid * block, i;
	int err;

	memset(k->st, 0x7f, n * 4);
	err = dvx_gpu_memcpy_htod(g, k->status.dptr, k->st, n * 4);
	if (!err)
		err = dvx_gpu_launch(g, f, grid, block, 0, s, args);
	if (!err)
		err = dvx_gpu_stream_wait(s, 60 * SEC);
	if (!err)
		err = dvx_gpu_memcpy_dtoh(g, k->st, k->status.dptr, n * 4);
	*at = -1;
	if (err)
		return err;
	for (i = 0; i < n; i++)
		if (k->st[i]) {
			*at = (int)i;
			return k->st[i];
		}
	return 0;
}

/* ---- part 0: the hal's stream operations on a real GPU ------------------------------- */

static int stream_ops_proc(int r, int n, void *arg)
{
	struct dvx_gpu g;
	struct dvx_gpu_mem m, l;
	struct dvx_gpu_stream s;
	uint64_t v[4] = { 0 };
	unsigned cnt = 0;

	(void)r;
	(void)n;
	(void)arg;
	if (dvx_gpu_count(dvx_hal_cuda(), &cnt) || !cnt)
		return SKIP;
#define STEP(x) do { fprintf(stderr, "stream ops: %s\n", #x); fflush(stderr); COK(x); } while (0)
	memset(&g, 0, sizeof(g));
	STEP(dvx_gpu_open(&g, dvx_hal_cuda(), 0, NULL));
	STEP(dvx_gpu_stream_create(&g, &s));
	STEP(dvx_gpu_mem_alloc(&g, 4096, DVX_GPU_MEM_EXPORT, &m));
	STEP(dvx_gpu_memcpy_htod(&g, m.dptr, v, sizeof(v)));
	STEP(dvx_hal_gpu_stream_atomic(&g.hg, s.handle, m.dptr, DVX_HAL_GPU_ATOMIC_SET, 7));
	STEP(dvx_gpu_stream_wait(&s, TMO));
	COK(dvx_hal_gpu_stream_atomic(&g.hg, s.handle, m.dptr, DVX_HAL_GPU_ATOMIC_SET, 7));
	COK(dvx_hal_gpu_stream_atomic(&g.hg, s.handle, m.dptr, DVX_HAL_GPU_ATOMIC_ADD, 3));
	COK(dvx_hal_gpu_stream_atomic(&g.hg, NULL, m.dptr + 8, DVX_HAL_GPU_ATOMIC_ADD, 5));
	COK(dvx_gpu_stream_wait(&s, TMO));
	COK(dvx_hal_gpu_memcpy_async(&g.hg, m.dptr + 16, m.dptr, 8, s.handle));
	COK(dvx_gpu_stream_wait(&s, TMO));
	COK(dvx_gpu_memcpy_dtoh(&g, v, m.dptr, sizeof(v)));
	if (v[0] != 10 || v[2] != 10)
		CFAIL("stream atomics: SET 7 then ADD 3 gave %llu (copy %llu), ADD 5 on the default "
		      "stream %llu", (unsigned long long)v[0], (unsigned long long)v[2],
		      (unsigned long long)v[1]);
	/* the allocation around an address: device memory yes, host memory no */
	COK(dvx_gpu_mem_lookup(&g, m.dptr + 100, &l));
	if (l.dptr != m.dptr || l.len != m.len ||
	    l.hm.flags != (DVX_HAL_GPU_MEM_FOREIGN | DVX_HAL_GPU_MEM_EXPORT))
		CFAIL("lookup: %llx+%llu flags %#x", (unsigned long long)l.dptr,
		      (unsigned long long)l.len, l.hm.flags);
	if (dvx_gpu_mem_lookup(&g, (uint64_t)(uintptr_t)v, &l) != -ENOENT)
		CFAIL("lookup of host memory is not -ENOENT");
	COK(dvx_gpu_mem_free(&m));
	COK(dvx_gpu_mem_alloc(&g, 4096, DVX_GPU_MEM_LEGACY, &m));
	COK(dvx_gpu_mem_lookup(&g, m.dptr + 8, &l));
	if (l.dptr != m.dptr || !(l.hm.flags & DVX_HAL_GPU_MEM_LEGACY))
		CFAIL("lookup of cuMemAlloc memory: flags %#x", l.hm.flags);
	COK(dvx_gpu_mem_free(&m));
	COK(dvx_gpu_stream_destroy(&s));
	COK(dvx_gpu_close(&g));
	return 0;
}

static int skipped;


static void test_stream_ops(void **state)
{
	int ret;

	(void)state;
	ret = dvx_test_fork_all(1, stream_ops_proc, NULL);
	if (ret == SKIP) {
		skipped = 1;
		skip();
	}
	if (ret)
		fail_msg("stream operations: %d", ret);
}

/* ---- part 1: processes ------------------------------------------------------------- */

/* the shape of a (scope, op) round: grid, block, groups */
static void shape(int scope, uint32_t *grid, uint32_t *block, uint32_t *groups)
{
	*grid = scope == S_BLOCK ? 4 : 2;
	*block = scope == S_THREAD ? 64 : scope == S_WARP ? 128 : 256;
	*groups = scope == S_THREAD ? *grid * *block : scope == S_WARP ? *grid * *block / 32 : *grid;
}

static int proc_rank(const char *addr, int me, int n, uint32_t flags)
{
	static uint64_t bsmem[65536];
	struct dvx_bootstrap_sock_cfg a;
	struct dvx_bootstrap bs;
	struct dvx_gpu g;
	struct dvx_mp mp;
	struct dvx_mp_cfg c;
	struct dvx_gpu_mem buf, src;
	struct dvx_nvl_peer peers[4];
	struct dvx_nvl_buf nb;
	struct dvx_gpu_stream s;
	struct kern k;
	uint64_t expect[4] = { 0 }, ctr_expect = 0, ctr;
	static uint8_t host[WIN];
	void *state;
	unsigned cnt = 0;
	uint32_t round = 0;
	int scope, op, p, at, err;

	if (dvx_gpu_count(dvx_hal_cuda(), &cnt) || !cnt)
		return SKIP;
	memset(&g, 0, sizeof(g));
	COK(dvx_gpu_open(&g, dvx_hal_cuda(), me % (int)cnt, NULL));
	memset(&a, 0, sizeof(a));
	a.addr = addr;
	a.rank = me;
	a.nranks = n;
	a.max_unexpected = 16;
	a.slot_bytes = 8192;
	a.timeout_ns = TMO;
	COK(dvx_bootstrap_sock_init(&bs, &a, bsmem, sizeof(bsmem)));
	memset(&c, 0, sizeof(c));
	c.rank = me;
	c.nranks = n;
	c.bs = &bs;
	c.gpu = &g;
	c.timeout_ns = TMO;
	state = aligned_alloc(64, (dvx_mp_mem_size(&c) + 63) & ~(size_t)63);
	COK(dvx_mp_init(&mp, &c, state, dvx_mp_mem_size(&c)));
	if (mp.topo.nnvl != n || mp.topo.nib)
		CFAIL("rank %d: %d NVL, %d IB: the GPUs of one host should make everyone NVL", me, mp.topo.nnvl,
		      mp.topo.nib);
	COK(dvx_mp_connect(&mp, NULL, 0, NULL, 0));
	COK(kern_up(&g, &k));
	COK(dvx_gpu_stream_create(&g, &s));
	COK(dvx_gpu_mem_alloc(&g, BUF_LEN(n), flags, &buf));
	COK(dvx_gpu_mem_alloc(&g, WIN, 0, &src));
	memset(host, 0, sizeof(host));
	COK(dvx_gpu_memcpy_htod(&g, buf.dptr + SIG_OFF(n), host, BUF_LEN(n) - SIG_OFF(n)));
	err = dvx_nvl_exchange(&nb, peers, dvx_mp_nvl_bootstrap(&mp), &mp.topo, &g,
			       &(struct dvx_nvl_cfg){ (void *)(uintptr_t)buf.dptr, BUF_LEN(n), NULL,
						      TMO });
	if (err)
		CFAIL("rank %d: exchange %d (%s)", me, err, nb.diag.msg);
	if (nb.mode != (flags & DVX_GPU_MEM_LEGACY ? DVX_NVL_IPC : DVX_NVL_FD))
		CFAIL("rank %d: shared as mode %u", me, nb.mode);

	for (scope = S_THREAD; scope <= S_BLOCK; scope++)
		for (op = 0; op < 4; op++, round++) {
			uint32_t grid, block, groups, one = 1;
			uint64_t chunk, i;

			if (quick && op != 1 && op != 3)
				continue;
			shape(scope, &grid, &block, &groups);
			chunk = WIN / groups;
			for (p = 0; p < n; p++) {
				uint64_t dst, sig, ctrp, wv;
				uint32_t sc = (uint32_t)scope, o = (uint32_t)op;
				void *args[] = { &sc, &o, &dst, &src.dptr, &chunk, &sig, &ctrp,
						 &k.status.dptr };

				if (p == me)
					continue;
				for (i = 0; i < WIN; i++)
					host[i] = pat(me, p, round, i);
				COK(dvx_gpu_memcpy_htod(&g, src.dptr, host, WIN));
				dst = dvx_nvl_peer_ptr(&nb, p) + (uint64_t)me * WIN;
				sig = dvx_nvl_peer_ptr(&nb, p) + SIG_OFF(n) + (uint64_t)me * 128;
				ctrp = buf.dptr + CTR_OFF(n);
				err = run_k(&g, &k, &s, k.send, grid, block, args, &at);
				if (err)
					CFAIL("rank %d %s %s to %d: thread %d: %d", me,
					      scope_name[scope], op_name[op], p, at, err);
				if (op >= 2)
					ctr_expect += groups;
				(void)wv;
				(void)one;
			}
			COK(dvx_bootstrap_barrier(&bs, TMO));
			for (p = 0; p < n; p++) {
				uint64_t w = buf.dptr + SIG_OFF(n) + (uint64_t)p * 128, tmo = TMO;
				uint32_t sc = (uint32_t)scope, cmp = DVX_CMP_GE;
				void *args[] = { &sc, &w, &cmp, &expect[p], &tmo, &k.status.dptr };

				if (p == me)
					continue;
				expect[p] += groups;
				err = run_k(&g, &k, &s, k.wait, scope == S_BLOCK ? 1 : 1,
					    scope == S_THREAD ? 1 : scope == S_WARP ? 32 : 128, args, &at);
				if (err)
					CFAIL("rank %d %s %s: wait for %d's %llu signals: %d", me,
					      scope_name[scope], op_name[op], p,
					      (unsigned long long)expect[p], err);
				COK(dvx_gpu_memcpy_dtoh(&g, host, buf.dptr + (uint64_t)p * WIN, WIN));
				for (i = 0; i < WIN; i++)
					if (host[i] != pat(p, me, round, i))
						CFAIL("rank %d %s %s: byte %llu from %d is %u", me,
						      scope_name[scope], op_name[op],
						      (unsigned long long)i, p, host[i]);
			}
			COK(dvx_gpu_memcpy_dtoh(&g, &ctr, buf.dptr + CTR_OFF(n), 8));
			if (ctr != ctr_expect)
				CFAIL("rank %d %s %s: counter %llu, want %llu", me, scope_name[scope],
				      op_name[op], (unsigned long long)ctr,
				      (unsigned long long)ctr_expect);
			COK(dvx_bootstrap_barrier(&bs, TMO));
		}
	/* a wait that cannot be satisfied: -ETIMEDOUT, never a success */
	{
		uint64_t w = buf.dptr + SIG_OFF(n) + (uint64_t)((me + 1) % n) * 128, tmo = 2000000;
		uint64_t v = expect[(me + 1) % n] + 1;
		uint32_t sc = S_BLOCK, cmp = DVX_CMP_GE;
		void *args[] = { &sc, &w, &cmp, &v, &tmo, &k.status.dptr };

		err = run_k(&g, &k, &s, k.wait, 1, 64, args, &at);
		if (err != -ETIMEDOUT)
			CFAIL("rank %d: an unsatisfiable wait answered %d", me, err);
	}
	COK(dvx_nvl_unmap(&nb));
	COK(dvx_bootstrap_barrier(&bs, TMO));
	COK(dvx_gpu_mem_free(&src));
	COK(dvx_gpu_mem_free(&buf));
	COK(dvx_gpu_stream_destroy(&s));
	kern_down(&k);
	COK(dvx_mp_fini(&mp));
	dvx_bootstrap_fini(&bs);
	COK(dvx_gpu_close(&g));
	free(state);
	return 0;
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
	static const uint32_t modes[] = { DVX_GPU_MEM_EXPORT, DVX_GPU_MEM_LEGACY };
	struct proc_arg a;
	int n, m, ret;

	(void)state;
	if (skipped)
		skip();
	for (m = 0; m < 2; m++)
		for (n = 2; n <= (quick ? 2 : 3); n++) {
			snprintf(a.addr, sizeof(a.addr), "unix:/tmp/dvx-gpu-nvl-%d-%d-%d.sock",
				 (int)getpid(), m, n);
			a.flags = modes[m];
			ret = dvx_test_fork_all(n, proc_main, &a);
			if (ret == SKIP) {
				skipped = 1;
				skip();
			}
			if (ret)
				fail_msg("%d processes, %s memory: a rank failed (%d)", n,
					 m ? "legacy" : "VMM", ret);
			printf("processes: %d ranks, %s memory (%s): every scope and operation checked\n",
			       n, m ? "cuMemAlloc" : "cuMemCreate", m ? "legacy IPC" : "POSIX fd");
		}
}

/* ---- part 2: threads of one process ----------------------------------------------- */

struct trank {
	int rank, n;
	struct dvx_bootstrap_tgroup *grp;
	uint32_t flags;
	int ret;
	double pp_ns[3];
};

static pthread_barrier_t tbar;

static int thread_rank(struct trank *t)
{
	struct dvx_bootstrap bs;
	struct dvx_gpu g;
	struct dvx_mp mp;
	struct dvx_mp_cfg c;
	struct dvx_gpu_mem buf, src;
	struct dvx_nvl_peer peers[2];
	struct dvx_nvl_buf nb;
	struct dvx_gpu_stream s;
	struct kern k;
	static __thread uint8_t host[WIN];
	void *state;
	int me = t->rank, peer = 1 - t->rank, scope, at, err;
	uint32_t rounds = quick ? 50 : 2000;
	uint64_t i;

	COK(dvx_bootstrap_thread_init(&bs, t->grp, me));
	memset(&g, 0, sizeof(g));
	COK(dvx_gpu_open(&g, dvx_hal_cuda(), gpu_of_rank(me), NULL));
	memset(&c, 0, sizeof(c));
	c.rank = me;
	c.nranks = 2;
	c.bs = &bs;
	c.gpu = &g;
	c.timeout_ns = TMO;
	state = aligned_alloc(64, (dvx_mp_mem_size(&c) + 63) & ~(size_t)63);
	COK(dvx_mp_init(&mp, &c, state, dvx_mp_mem_size(&c)));
	COK(dvx_mp_connect(&mp, NULL, 0, NULL, 0));
	COK(kern_up(&g, &k));
	COK(dvx_gpu_stream_create(&g, &s));
	COK(dvx_gpu_mem_alloc(&g, BUF_LEN(2), t->flags, &buf));
	COK(dvx_gpu_mem_alloc(&g, WIN, 0, &src));
	memset(host, 0, sizeof(host));
	COK(dvx_gpu_memcpy_htod(&g, buf.dptr + SIG_OFF(2), host, BUF_LEN(2) - SIG_OFF(2)));
	for (i = 0; i < WIN; i++)
		host[i] = pat(me, peer, 99, i);
	COK(dvx_gpu_memcpy_htod(&g, src.dptr, host, WIN));
	err = dvx_nvl_exchange(&nb, peers, dvx_mp_nvl_bootstrap(&mp), &mp.topo, &g,
			       &(struct dvx_nvl_cfg){ (void *)(uintptr_t)buf.dptr, BUF_LEN(2), NULL,
						      TMO });
	if (err)
		CFAIL("thread rank %d: exchange %d (%s)", me, err, nb.diag.msg);

	/* ping-pong at every scope: both kernels run at once; words SET to the round */
	for (scope = S_THREAD; scope <= S_BLOCK; scope++) {
		uint64_t dst = dvx_nvl_peer_ptr(&nb, peer) + (uint64_t)me * WIN;
		uint64_t pw = dvx_nvl_peer_ptr(&nb, peer) + SIG_OFF(2) + 128 * (uint64_t)scope;
		uint64_t mw = buf.dptr + SIG_OFF(2) + 128 * (uint64_t)scope, len = 4096, tmo = TMO;
		uint32_t sc = (uint32_t)scope, block = scope == S_THREAD ? 1 : scope == S_WARP ? 32 : 256;
		void *args[] = { &sc, &me, &dst, &src.dptr, &len, &pw, &mw, &rounds, &tmo,
				 &k.status.dptr };
		struct timespec t0, t1;

		pthread_barrier_wait(&tbar);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		err = run_k(&g, &k, &s, k.pingpong, 1, block, args, &at);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (err)
			CFAIL("thread rank %d: %s ping-pong: %d", me, scope_name[scope], err);
		t->pp_ns[scope] = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 +
				   (double)(t1.tv_nsec - t0.tv_nsec)) / (2.0 * rounds);
	}
	COK(dvx_bootstrap_barrier(&bs, TMO));
	COK(dvx_gpu_memcpy_dtoh(&g, host, buf.dptr + (uint64_t)peer * WIN, 4096));
	for (i = 0; i < 4096; i++)
		if (host[i] != pat(peer, me, 99, i))
			CFAIL("thread rank %d: ping-pong byte %llu is %u", me, (unsigned long long)i,
			      host[i]);

	/* host-initiated: rank 0 copies on a stream and signals after it */
	if (me == 0) {
		uint64_t seen = 0, t0, t1, t2, t3;
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		t0 = (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
		COK(dvx_mp_nvl_put(&mp, &s, dvx_nvl_peer_ptr(&nb, 1) + WIN / 2, src.dptr, WIN / 2));
		clock_gettime(CLOCK_MONOTONIC, &ts);
		t1 = (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
		COK(dvx_mp_nvl_signal(&mp, &s, dvx_nvl_peer_ptr(&nb, 1) + SIG_OFF(2) + 3 * 128,
				      DVX_NVL_SIG_ADD, 5));
		clock_gettime(CLOCK_MONOTONIC, &ts);
		t2 = (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
		COK(dvx_gpu_stream_wait(&s, TMO));
		clock_gettime(CLOCK_MONOTONIC, &ts);
		t3 = (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
		fprintf(stderr, "host put_signal: put %.3f ms, signal %.3f ms, wait %.3f ms\n",
			(double)(t1 - t0) / 1e6, (double)(t2 - t1) / 1e6, (double)(t3 - t2) / 1e6);
		COK(dvx_gpu_memcpy_dtoh(&g, &seen, dvx_nvl_peer_ptr(&nb, 1) + SIG_OFF(2) + 3 * 128, 8));
		if (seen != 5)
			CFAIL("host put_signal: the word reads %llu through the mapping",
			      (unsigned long long)seen);
	} else {
		uint64_t w = buf.dptr + SIG_OFF(2) + 3 * 128, v = 5, tmo = TMO;
		uint32_t sc = S_THREAD, cmp = DVX_CMP_EQ;
		void *args[] = { &sc, &w, &cmp, &v, &tmo, &k.status.dptr };

		err = run_k(&g, &k, &s, k.wait, 1, 1, args, &at);
		if (err) {
			uint64_t seen = 0;

			dvx_gpu_memcpy_dtoh(&g, &seen, w, 8);
			CFAIL("host put_signal: waited %d, the word reads %llu", err,
			      (unsigned long long)seen);
		}
		COK(dvx_gpu_memcpy_dtoh(&g, host, buf.dptr + WIN / 2, WIN / 2));
		for (i = 0; i < WIN / 2; i++)
			if (host[i] != pat(0, 1, 99, i))
				CFAIL("host put: byte %llu is %u", (unsigned long long)i, host[i]);
	}
	COK(dvx_bootstrap_barrier(&bs, TMO));
	COK(dvx_nvl_unmap(&nb));
	COK(dvx_bootstrap_barrier(&bs, TMO));
	COK(dvx_gpu_mem_free(&src));
	COK(dvx_gpu_mem_free(&buf));
	COK(dvx_gpu_stream_destroy(&s));
	kern_down(&k);
	COK(dvx_mp_fini(&mp));
	dvx_bootstrap_fini(&bs);
	COK(dvx_gpu_close(&g));
	free(state);
	return 0;
}

static void *thread_main(void *arg)
{
	struct trank *t = arg;

	t->ret = thread_rank(t);
	return NULL;
}

static int threads_proc(int r, int n, void *arg)
{
	struct dvx_bootstrap_tgroup_cfg ga;
	struct trank t[2];
	pthread_t th[2];
	uint32_t flags = *(uint32_t *)arg;
	unsigned cnt = 0;
	size_t sz;
	void *mem;
	int i, s;

	(void)r;
	(void)n;
	if (dvx_gpu_count(dvx_hal_cuda(), &cnt) || !cnt)
		return SKIP;
	memset(&ga, 0, sizeof(ga));
	ga.nranks = 2;
	ga.max_unexpected = 16;
	ga.slot_bytes = 8192;
	sz = dvx_bootstrap_tgroup_mem_size(2, 16, 8192);
	mem = calloc(1, sz);
	pthread_barrier_init(&tbar, NULL, 2);
	if (dvx_bootstrap_tgroup_init(&t[0].grp, &ga, mem, sz))
		return 2;
	for (i = 0; i < 2; i++) {
		t[i].rank = i;
		t[i].n = 2;
		t[i].grp = t[0].grp;
		t[i].flags = flags;
		pthread_create(&th[i], NULL, thread_main, &t[i]);
	}
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	for (s = 0; s < 3; s++)
		printf("threads: %s-scope ping-pong, 4 KiB put_signal + wait: %.0f ns per half round trip"
		       " (%s, two kernels)\n", scope_name[s], t[0].pp_ns[s],
		       cnt > 1 ? "two GPUs" : "one GPU");
	fflush(stdout);
	return t[0].ret ? t[0].ret : t[1].ret;
}

static void test_threads(void **state)
{
	uint32_t flags = DVX_GPU_MEM_EXPORT;
	int ret;

	(void)state;
	if (skipped)
		skip();
	ret = dvx_test_fork_all(1, threads_proc, &flags);
	if (ret)
		fail_msg("threads, VMM memory: %d", ret);
	flags = DVX_GPU_MEM_LEGACY;
	ret = dvx_test_fork_all(1, threads_proc, &flags);
	if (ret)
		fail_msg("threads, legacy memory: %d", ret);
}

/* ---- part 3: NVL and IB peers from one kernel -------------------------------------- */

#define MIXN 3

struct mixed {
	struct dvx_tw tw;	/* the injected hosts, the fabric, the bootstrap group */
	int ret[MIXN];
};

static int mixed_rank(struct mixed *w, int me)
{
	struct dvx_bootstrap bs;
	struct dvx_gpu g;
	struct dvx_nic nic;
	struct dvx_nic_cfg na;
	struct dvx_mp mp;
	struct dvx_mp_cfg c;
	struct dvx_mem_req sreq, rreq;
	struct dvx_gpu_mem buf, src, dm;
	struct dvx_nvl_peer peers[MIXN];
	struct dvx_nvl_buf nb;
	struct dvx_gpu_stream s;
	struct dvx_gpu_hostreg regs[16], hr;
	struct dvx_p2p_lbuf ilb;
	struct dvx_p2p_rbuf all[MIXN], ib[MIXN];
	struct dvx_gpu_mem ibd;
	struct dvx_mp_dev dev;
	struct kern k;
	uint8_t *ibuf;
	void *state, *ist = NULL, *irings = NULL;
	static __thread uint8_t host[WIN];
	char name[16];
	uint32_t nregs = 0;
	uint64_t need, i;
	int at, err;

	COK(dvx_bootstrap_thread_init(&bs, w->tw.g, me));
	memset(&g, 0, sizeof(g));
	COK(dvx_gpu_open(&g, dvx_hal_cuda(), gpu_of_rank(me), NULL));
	memset(&na, 0, sizeof(na));
	snprintf(name, sizeof(name), "sim_%d", me);
	na.name = name;
	na.gid_index = -1;
	COK(dvx_nic_open(&nic, dvx_sim_hal(w->tw.fab), &na));
	memset(&c, 0, sizeof(c));
	c.rank = me;
	c.nranks = MIXN;
	c.bs = &bs;
	c.gpu = &g;
	c.ib.nnics = 1;
	c.ib.nics[0] = &nic;
	c.ib.qps_per_nic = 1;
	c.ib.sq_depth = 256;
	c.ib.comp_depth = 16;
	c.inject = w->tw.inf;
	c.timeout_ns = TMO;
	state = aligned_alloc(64, (dvx_mp_mem_size(&c) + 63) & ~(size_t)63);
	COK(dvx_mp_init(&mp, &c, state, dvx_mp_mem_size(&c)));
	COK(dvx_mp_ib_mem_req(&mp, &sreq, &rreq));
	ist = aligned_alloc(64, (sreq.bytes + 63) & ~(uint64_t)63);
	irings = aligned_alloc(4096, (rreq.bytes + 4095) & ~(uint64_t)4095);
	COK(dvx_mp_connect(&mp, ist, sreq.bytes, irings, rreq.bytes));
	COK(kern_up(&g, &k));
	COK(dvx_gpu_stream_create(&g, &s));
	/* NVL: a GPU buffer; IB: host memory the software NIC reads and writes */
	COK(dvx_gpu_mem_alloc(&g, BUF_LEN(MIXN), DVX_GPU_MEM_EXPORT, &buf));
	COK(dvx_gpu_mem_alloc(&g, WIN, 0, &src));
	memset(host, 0, sizeof(host));
	COK(dvx_gpu_memcpy_htod(&g, buf.dptr + SIG_OFF(MIXN), host, BUF_LEN(MIXN) - SIG_OFF(MIXN)));
	for (i = 0; i < WIN; i++)
		host[i] = pat(me, 9, 7, i);
	COK(dvx_gpu_memcpy_htod(&g, src.dptr, host, WIN));
	ibuf = aligned_alloc(4096, BUF_LEN(MIXN));
	memset(ibuf, 0, BUF_LEN(MIXN));
	memcpy(ibuf + (uint64_t)me * WIN, host, WIN);	/* this rank's IB source: its own window */
	COK(dvx_mp_register(&mp, ibuf, BUF_LEN(MIXN), DVX_MP_REG_WRITE | DVX_MP_REG_ATOMIC, &ilb));
	COK(dvx_mp_exchange_ib(&mp, &ilb, all, ib, TMO));
	err = dvx_nvl_exchange(&nb, peers, dvx_mp_nvl_bootstrap(&mp), &mp.topo, &g,
			       &(struct dvx_nvl_cfg){ (void *)(uintptr_t)buf.dptr, BUF_LEN(MIXN),
						      NULL, TMO });
	if (err)
		CFAIL("mixed rank %d: exchange %d (%s)", me, err, nb.diag.msg);
	COK(dvx_bootstrap_barrier(&bs, TMO));
	if (me == 0) {
		uint64_t len = WIN, win = WIN, nsig = SIG_OFF(MIXN), isig = SIG_OFF(MIXN), tmo = TMO;
		void *args[10];

		COK(dvx_gpu_host_register(&g, ibuf, BUF_LEN(MIXN), 0, &hr));
		COK(dvx_p2p_gpu_register(&mp.ib, &g, irings, rreq.bytes, 0, regs, &nregs));
		COK(dvx_mp_dev_mem_req(&mp, &need));
		COK(dvx_gpu_mem_alloc(&g, need, 0, &dm));
		COK(dvx_mp_dev_export(&mp, &nb, regs, nregs, dm.dptr, dm.len, TMO, &dev));
		COK(dvx_gpu_mem_alloc(&g, sizeof(ib), 0, &ibd));
		COK(dvx_gpu_memcpy_htod(&g, ibd.dptr, ib, sizeof(ib)));
		args[0] = &dev; args[1] = &src.dptr; args[2] = &len; args[3] = &win;
		args[4] = &nsig; args[5] = &ilb; args[6] = &ibd.dptr; args[7] = &isig;
		args[8] = &tmo; args[9] = &k.status.dptr;
		err = run_k(&g, &k, &s, k.mixed, MIXN, 128, args, &at);
		if (err)
			CFAIL("mixed kernel: thread %d: %d", at, err);
		COK(dvx_mp_dev_import(&mp, &dev));
		COK(dvx_p2p_gpu_unregister(regs, nregs));
		COK(dvx_gpu_host_unregister(&hr));
		COK(dvx_gpu_mem_free(&ibd));
		COK(dvx_gpu_mem_free(&dm));
	} else if (me == 1) {	/* the NVL peer */
		uint64_t wd = buf.dptr + SIG_OFF(MIXN), v = 1, tmo = TMO;
		uint32_t sc = S_THREAD, cmp = DVX_CMP_EQ;
		void *args[] = { &sc, &wd, &cmp, &v, &tmo, &k.status.dptr };

		COK(run_k(&g, &k, &s, k.wait, 1, 1, args, &at));
		COK(dvx_gpu_memcpy_dtoh(&g, host, buf.dptr, WIN));
		for (i = 0; i < WIN; i++)
			if (host[i] != pat(0, 9, 7, i))
				CFAIL("NVL peer: byte %llu is %u", (unsigned long long)i, host[i]);
	} else {		/* the IB peer */
		COK(dvx_p2p_wait_signal(&mp.ib, &ilb, SIG_OFF(MIXN), DVX_CMP_EQ, 1, TMO, NULL));
		for (i = 0; i < WIN; i++)
			if (ibuf[i] != pat(0, 9, 7, i))
				CFAIL("IB peer: byte %llu is %u", (unsigned long long)i, ibuf[i]);
	}
	if (mp.ib_live)
		COK(dvx_p2p_flush(&mp.ib, 0, TMO, NULL));
	COK(dvx_bootstrap_barrier(&bs, TMO));
	COK(dvx_nvl_unmap(&nb));
	COK(dvx_bootstrap_barrier(&bs, TMO));
	COK(dvx_mp_deregister(&mp, ibuf));
	COK(dvx_gpu_mem_free(&src));
	COK(dvx_gpu_mem_free(&buf));
	COK(dvx_gpu_stream_destroy(&s));
	kern_down(&k);
	COK(dvx_mp_fini(&mp));
	dvx_nic_close(&nic);
	dvx_bootstrap_fini(&bs);
	COK(dvx_gpu_close(&g));
	free(ibuf);
	free(irings);
	free(ist);
	free(state);
	return 0;
}

struct marg {
	struct mixed *w;
	int rank;
};

static void *mixed_main(void *arg)
{
	struct marg *a = arg;
	static uint8_t alts[MIXN][65536];
	stack_t ss = { .ss_sp = alts[a->rank], .ss_size = sizeof(alts[0]) };

	sigaltstack(&ss, NULL);	/* each thread needs its own alternate stack */
	a->w->ret[a->rank] = mixed_rank(a->w, a->rank);
	return NULL;
}

/* a crash in a child says where: the faulting address, the instruction, the stack (on
 * an alternate stack, with calls that are safe in a signal handler), and the mappings */
static void on_segv(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	void *bt[32];
	char line[160];
	int n, fd;
	ssize_t k;

	const uint64_t *sp = (const uint64_t *)(uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
	int i;

	(void)bt;
	n = snprintf(line, sizeof(line), "signal %d at %p, rip %llx rsp %llx\n", sig, si->si_addr,
		     (unsigned long long)uc->uc_mcontext.gregs[REG_RIP], (unsigned long long)sp);
	write(2, line, (size_t)n);
	for (i = 0; i < 48; i++) {
		n = snprintf(line, sizeof(line), "stack[%d] %llx\n", i, (unsigned long long)sp[i]);
		write(2, line, (size_t)n);
	}
	fd = open("/proc/self/maps", O_RDONLY);
	while (fd >= 0 && (k = read(fd, line, sizeof(line))) > 0)
		write(2, line, (size_t)k);
	_exit(98);
}

static void catch_crashes(void)
{
	static uint8_t alt[65536];
	stack_t ss = { .ss_sp = alt, .ss_size = sizeof(alt) };
	struct sigaction sa;
	void *warm[2];

	backtrace(warm, 2);	/* loads what backtrace needs, outside the handler */
	sigaltstack(&ss, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGABRT, &sa, NULL);
}

static int mixed_proc(int r, int n, void *arg)
{
	static const int hosts[MIXN] = { 0, 0, 1 };	/* ranks 0 and 1 one host */
	struct mixed w;
	struct marg ma[MIXN];
	uint8_t uuid[GPU_RANKS_MAX][16];
	int i, ngpus;

	(void)r;
	(void)n;
	(void)arg;
	catch_crashes();
	ngpus = gpu_ranks_uuids(uuid);
	if (!ngpus)
		return SKIP;
	if (ngpus < 0)
		return 3;
	memset(&w, 0, sizeof(w));
	/* the facts: ranks 0 and 1 one host, rank 2 another; rank r on GPU r % ngpus */
	i = dvx_tw_init(&w.tw, MIXN, hosts, uuid[0]);
	if (i)
		return 4;
	dvx_tw_gpus(&w.tw, (const uint8_t (*)[16])uuid, ngpus);
	for (i = 0; i < MIXN; i++) {
		ma[i].w = &w;
		ma[i].rank = i;
	}
	dvx_tw_run(&w.tw, mixed_main, ma, sizeof(ma[0]));
	for (i = 0; i < MIXN; i++)
		if (w.ret[i])
			return w.ret[i];
	if (dvx_tw_fini(&w.tw, NULL))
		return 5;
	printf("mixed: one kernel reached its NVL peer (mapping) and its IB peer (software NIC)\n");
	return 0;
}

static void test_mixed(void **state)
{
	int ret;

	(void)state;
	if (skipped)
		skip();
	ret = dvx_test_fork_all(1, mixed_proc, NULL);
	if (ret)
		fail_msg("mixed NVL + IB: %d", ret);
}

/* ---- part 4: small messages as flagged lines, two processes ----------------------- */

#define LL_AREA (64u << 10)	/* [0, 64K) lines the peer writes, then src, then dst */

struct ll_arg {
	char addr[96];
	int spread;	/* rank r on GPU r % count (two GPUs where there are two) */
};

static int ll_rank(const struct ll_arg *la, int me, int n)
{
	static uint64_t bsmem[65536];
	static const uint64_t lens[] = { 0, 1, 7, 8, 9, 15, 16, 17, 100, 1000,
					 DVX_NVL_LL_MAX - 1, DVX_NVL_LL_MAX, DVX_NVL_LL_MAX + 1,
					 2 * DVX_NVL_LL_MAX };
	struct dvx_bootstrap_sock_cfg a;
	struct dvx_bootstrap bs;
	struct dvx_gpu g;
	struct dvx_mp mp;
	struct dvx_mp_cfg c;
	struct dvx_gpu_mem buf;
	struct dvx_nvl_peer peers[2];
	struct dvx_nvl_buf nb;
	struct dvx_gpu_stream s;
	struct kern k;
	static uint8_t zero[LL_AREA];
	void *state;
	unsigned cnt = 0;
	int scope, err, at, ordinal, other;
	unsigned j;

	if (dvx_gpu_count(dvx_hal_cuda(), &cnt) || !cnt)
		return SKIP;
	ordinal = la->spread ? me % (int)cnt : 0;
	memset(&g, 0, sizeof(g));
	COK(dvx_gpu_open(&g, dvx_hal_cuda(), ordinal, NULL));
	memset(&a, 0, sizeof(a));
	a.addr = la->addr;
	a.rank = me;
	a.nranks = n;
	a.max_unexpected = 16;
	a.slot_bytes = 8192;
	a.timeout_ns = TMO;
	COK(dvx_bootstrap_sock_init(&bs, &a, bsmem, sizeof(bsmem)));
	memset(&c, 0, sizeof(c));
	c.rank = me;
	c.nranks = n;
	c.bs = &bs;
	c.gpu = &g;
	c.timeout_ns = TMO;
	state = aligned_alloc(64, (dvx_mp_mem_size(&c) + 63) & ~(size_t)63);
	COK(dvx_mp_init(&mp, &c, state, dvx_mp_mem_size(&c)));
	if (mp.topo.nnvl != n)
		CFAIL("rank %d: %d NVL of %d: GPUs of one host should be NVL peers", me, mp.topo.nnvl, n);
	COK(dvx_mp_connect(&mp, NULL, 0, NULL, 0));
	COK(kern_up(&g, &k));
	COK(dvx_gpu_stream_create(&g, &s));
	COK(dvx_gpu_mem_alloc(&g, 3 * LL_AREA, DVX_GPU_MEM_EXPORT, &buf));
	err = dvx_nvl_exchange(&nb, peers, dvx_mp_nvl_bootstrap(&mp), &mp.topo, &g,
			       &(struct dvx_nvl_cfg){ (void *)(uintptr_t)buf.dptr, 3 * LL_AREA, NULL,
						      TMO });
	if (err)
		CFAIL("rank %d: exchange %d (%s)", me, err, nb.diag.msg);
	/* two processes on one GPU take turns on it (their kernels do not run at once):
	 * a few rounds there; thousands where each has its GPU, and in one launch below */
	other = la->spread ? (1 - me) % (int)cnt : 0;
	for (scope = S_THREAD; scope <= S_BLOCK; scope++)
		for (j = 0; j < sizeof(lens) / sizeof(lens[0]); j++) {
			uint64_t plines = dvx_nvl_peer_ptr(&nb, 1 - me), mlines = buf.dptr;
			uint64_t src = buf.dptr + LL_AREA, dst = buf.dptr + 2 * LL_AREA;
			uint64_t len = lens[j], tmo = TMO;
			uint32_t sc = (uint32_t)scope;
			uint32_t rounds = other == ordinal ? 3 : quick ? 200 : 3000;
			void *args[] = { &sc, &me, &plines, &mlines, &src, &dst, &len, &rounds, &tmo,
					 &k.status.dptr };

			/* lines start unwritten (0: no sequence) for every case */
			COK(dvx_gpu_memcpy_htod(&g, buf.dptr, zero, LL_AREA));
			COK(dvx_bootstrap_barrier(&bs, TMO));
			err = run_k(&g, &k, &s, k.llpp, 1,
				    scope == S_THREAD ? 1 : scope == S_WARP ? 32 : 128, args, &at);
			if (err)
				CFAIL("rank %d (GPU %d, peer on GPU %d): flagged lines, %s, %llu bytes, "
				      "%u rounds: thread %d: %d", me, ordinal, other, scope_name[scope],
				      (unsigned long long)len, rounds, at, err);
			COK(dvx_bootstrap_barrier(&bs, TMO));
		}
	/* both sides in one launch of rank 0 (two blocks at once), over rank 1's mapping
	 * and rank 0's own lines: thousands of rounds on one GPU too */
	for (scope = S_THREAD; me == 0 && scope <= S_BLOCK; scope++)
		for (j = 0; j < sizeof(lens) / sizeof(lens[0]); j++) {
			uint64_t l0 = buf.dptr, l1 = dvx_nvl_peer_ptr(&nb, 1);
			uint64_t src = buf.dptr + LL_AREA, dst = buf.dptr + 2 * LL_AREA;
			uint64_t len = lens[j], tmo = TMO;
			uint32_t sc = (uint32_t)scope, rounds = quick ? 200 : 3000;
			int both = -1;
			void *args[] = { &sc, &both, &l0, &l1, &src, &dst, &len, &rounds, &tmo,
					 &k.status.dptr };

			COK(dvx_gpu_memcpy_htod(&g, buf.dptr, zero, LL_AREA));
			COK(dvx_gpu_memcpy_htod(&g, l1, zero, LL_AREA));
			err = run_k(&g, &k, &s, k.llpp, 2,
				    scope == S_THREAD ? 1 : scope == S_WARP ? 32 : 128, args, &at);
			if (err)
				CFAIL("one launch, both ranks: flagged lines, %s, %llu bytes: thread %d: %d",
				      scope_name[scope], (unsigned long long)len, at, err);
		}
	COK(dvx_bootstrap_barrier(&bs, TMO));
	if (me == 0) {
		uint64_t dst = buf.dptr + 2 * LL_AREA, l = buf.dptr;
		void *args[] = { &l, &dst, &k.status.dptr };

		COK(dvx_gpu_memcpy_htod(&g, buf.dptr, zero, LL_AREA));
		(void)run_k(&g, &k, &s, k.llbad, 1, 4, args, &at);	/* status[0..3] back */
		if (k.st[0] != -EINVAL || k.st[1] != -EINVAL || k.st[2] != -EINVAL ||
		    k.st[3] != -ETIMEDOUT)
			CFAIL("flagged lines: seq 0 %d, misaligned %d / %d, never written %d", k.st[0],
			      k.st[1], k.st[2], k.st[3]);
	}
	COK(dvx_bootstrap_barrier(&bs, TMO));
	COK(dvx_nvl_unmap(&nb));
	COK(dvx_bootstrap_barrier(&bs, TMO));
	COK(dvx_gpu_mem_free(&buf));
	COK(dvx_gpu_stream_destroy(&s));
	kern_down(&k);
	COK(dvx_mp_fini(&mp));
	dvx_bootstrap_fini(&bs);
	COK(dvx_gpu_close(&g));
	free(state);
	return 0;
}

static int ll_main(int r, int n, void *arg)
{
	return ll_rank(arg, r, n);
}

static void test_small(void **state)
{
	struct ll_arg a;
	int spread, ret;

	(void)state;
	if (skipped)
		skip();
	for (spread = 0; spread < 2; spread++) {
		snprintf(a.addr, sizeof(a.addr), "unix:/tmp/dvx-gpu-nvl-ll-%d-%d.sock", (int)getpid(),
			 spread);
		a.spread = spread;
		ret = dvx_test_fork_all(2, ll_main, &a);
		if (ret == SKIP) {
			skipped = 1;
			skip();
		}
		if (ret)
			fail_msg("flagged lines, two processes (%s): a rank failed (%d)",
				 spread ? "GPU r % count" : "one GPU", ret);
		printf("small messages: 2 processes %s, flagged lines at every scope, 0 to %u bytes "
		       "(3 rounds where both share a GPU, else %d), and both sides in one launch (%d "
		       "rounds), reusing the lines: every byte checked\n",
		       spread ? "on GPUs r % count" : "on GPU 0", 2 * DVX_NVL_LL_MAX,
		       quick ? 200 : 3000, quick ? 200 : 3000);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stream_ops),
		cmocka_unit_test(test_processes),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_mixed),
		cmocka_unit_test(test_small),
	};
	const char *q = getenv("DVX_GPU_TEST_QUICK");
	const char *req = getenv("DVX_GPU_REQUIRED");
	int rc;

	quick = q && *q == '1';
	if (getenv("DVX_GPU_NVL_ONLY_MIXED")) {
		const struct CMUnitTest only[] = { cmocka_unit_test(test_mixed) };

		return cmocka_run_group_tests_name("gpu-nvl-mixed", only, NULL, NULL);
	}
	if (!dvx_hal_cuda() || !dvx_fatbin_tests_gpu_nvl_kernels_len) {
		printf("built without CUDA or nvcc; run 'make gpu-check' on a machine with an NVIDIA GPU\n");
		return req && *req == '1' ? 1 : DVX_TEST_SKIP_ALL;
	}
	rc = cmocka_run_group_tests_name("gpu-nvl", tests, NULL, NULL);
	if (skipped) {
		printf("no NVIDIA GPU or driver found; run 'make gpu-check' on a machine with one\n");
		return req && *req == '1' ? 1 : DVX_TEST_SKIP_ALL;
	}
	return rc;
}
