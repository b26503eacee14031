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
#include "gpu_proc.h"

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

/* one rank of the processes' run, its objects from open to close */
struct nvp {
	int me, n;
	uint32_t flags;
	struct dvx_bootstrap bs;
	struct dvx_gpu g;
	struct dvx_mp mp;
	struct dvx_gpu_mem buf, src;
	struct dvx_nvl_peer peers[4];
	struct dvx_nvl_buf nb;
	struct dvx_gpu_stream s;
	struct kern k;
	uint64_t expect[4], ctr_expect;
	uint8_t host[WIN];
	void *state;
};

/* phase buffers, once the transport is up: kernels, stream, the buffer (signals zeroed)
 * shared with the peers, the source */
static int nvp_up(struct nvp *x)
{
	int me = x->me, n = x->n, err;

	COK(kern_up(&x->g, &x->k));
	COK(dvx_gpu_stream_create(&x->g, &x->s));
	COK(dvx_gpu_mem_alloc(&x->g, BUF_LEN(n), x->flags, &x->buf));
	COK(dvx_gpu_mem_alloc(&x->g, WIN, 0, &x->src));
	memset(x->host, 0, sizeof(x->host));
	COK(dvx_gpu_memcpy_htod(&x->g, x->buf.dptr + SIG_OFF(n), x->host,
				BUF_LEN(n) - SIG_OFF(n)));
	err = dvx_nvl_exchange(&x->nb, x->peers, dvx_mp_nvl_bootstrap(&x->mp), &x->mp.topo, &x->g,
			       &(struct dvx_nvl_cfg){ (void *)(uintptr_t)x->buf.dptr, BUF_LEN(n),
						      NULL, TMO });
	if (err)
		CFAIL("rank %d: exchange %d (%s)", me, err, x->nb.diag.msg);
	return 0;
}

/* phase open: the GPU (rank r on GPU r mod n), the sockets bootstrap at @addr, the
 * transport (gpu_proc_up()), the buffers (nvp_up()), shared as the memory's kind asks */
static int nvp_open(struct nvp *x, const char *addr, unsigned cnt)
{
	if (gpu_proc_up(&(struct gpu_proc){ &x->bs, &x->g, &x->mp, &x->state, addr, x->me, x->n,
					    x->me % (int)cnt, 0, TMO }) ||
	    nvp_up(x))
		return 1;
	if (x->nb.mode != (x->flags & DVX_GPU_MEM_LEGACY ? DVX_NVL_IPC : DVX_NVL_FD))
		CFAIL("rank %d: shared as mode %u", x->me, x->nb.mode);
	return 0;
}

/* a round's phase send: @op at @scope into every peer's window, signals, counters */
static int nvp_send(struct nvp *x, int scope, int op, uint32_t round)
{
	uint32_t grid, block, groups, sc = (uint32_t)scope, o = (uint32_t)op;
	uint64_t chunk, i, dst, sig, ctrp = x->buf.dptr + CTR_OFF(x->n);
	void *args[] = { &sc, &o, &dst, &x->src.dptr, &chunk, &sig, &ctrp, &x->k.status.dptr };
	int p, at, err;

	shape(scope, &grid, &block, &groups);
	chunk = WIN / groups;
	for (p = 0; p < x->n; p++) {
		if (p == x->me)
			continue;
		for (i = 0; i < WIN; i++)
			x->host[i] = pat(x->me, p, round, i);
		COK(dvx_gpu_memcpy_htod(&x->g, x->src.dptr, x->host, WIN));
		dst = dvx_nvl_peer_ptr(&x->nb, p) + (uint64_t)x->me * WIN;
		sig = dvx_nvl_peer_ptr(&x->nb, p) + SIG_OFF(x->n) + (uint64_t)x->me * 128;
		err = run_k(&x->g, &x->k, &x->s, x->k.send, grid, block, args, &at);
		if (err)
			CFAIL("rank %d %s %s to %d: thread %d: %d", x->me, scope_name[scope],
			      op_name[op], p, at, err);
		if (op >= 2)
			x->ctr_expect += groups;
	}
	return 0;
}

/* a round's phase check: every peer's signals waited for at @scope on the GPU, its bytes
 * and the counter checked */
static int nvp_check(struct nvp *x, int scope, int op, uint32_t round)
{
	uint32_t grid, block, groups;
	uint64_t ctr, i;
	int p, at, err;

	shape(scope, &grid, &block, &groups);
	for (p = 0; p < x->n; p++) {
		uint64_t w = x->buf.dptr + SIG_OFF(x->n) + (uint64_t)p * 128, tmo = TMO;
		uint32_t sc = (uint32_t)scope, cmp = DVX_CMP_GE;
		void *args[] = { &sc, &w, &cmp, &x->expect[p], &tmo, &x->k.status.dptr };

		if (p == x->me)
			continue;
		x->expect[p] += groups;
		err = run_k(&x->g, &x->k, &x->s, x->k.wait, 1,
			    scope == S_THREAD ? 1 : scope == S_WARP ? 32 : 128, args, &at);
		if (err)
			CFAIL("rank %d %s %s: wait for %d's %llu signals: %d", x->me,
			      scope_name[scope], op_name[op], p, (unsigned long long)x->expect[p],
			      err);
		COK(dvx_gpu_memcpy_dtoh(&x->g, x->host, x->buf.dptr + (uint64_t)p * WIN, WIN));
		for (i = 0; i < WIN; i++)
			if (x->host[i] != pat(p, x->me, round, i))
				CFAIL("rank %d %s %s: byte %llu from %d is %u", x->me,
				      scope_name[scope], op_name[op], (unsigned long long)i, p,
				      x->host[i]);
	}
	COK(dvx_gpu_memcpy_dtoh(&x->g, &ctr, x->buf.dptr + CTR_OFF(x->n), 8));
	if (ctr != x->ctr_expect)
		CFAIL("rank %d %s %s: counter %llu, want %llu", x->me, scope_name[scope],
		      op_name[op], (unsigned long long)ctr, (unsigned long long)x->ctr_expect);
	return 0;
}

/* phase rounds: every operation at every scope (quick: two of them), send, barrier,
 * check, barrier; then a wait that cannot be satisfied: -ETIMEDOUT, never a success */
static int nvp_rounds(struct nvp *x)
{
	uint32_t round = 0;
	int scope, op, at, err;

	for (scope = S_THREAD; scope <= S_BLOCK; scope++)
		for (op = 0; op < 4; op++, round++) {
			if (quick && op != 1 && op != 3)
				continue;
			if (nvp_send(x, scope, op, round))
				return 1;
			COK(dvx_bootstrap_barrier(&x->bs, TMO));
			if (nvp_check(x, scope, op, round))
				return 1;
			COK(dvx_bootstrap_barrier(&x->bs, TMO));
		}
	{
		int nx = (x->me + 1) % x->n;
		uint64_t w = x->buf.dptr + SIG_OFF(x->n) + (uint64_t)nx * 128, tmo = 2000000;
		uint64_t v = x->expect[nx] + 1;
		uint32_t sc = S_BLOCK, cmp = DVX_CMP_GE;
		void *args[] = { &sc, &w, &cmp, &v, &tmo, &x->k.status.dptr };

		err = run_k(&x->g, &x->k, &x->s, x->k.wait, 1, 64, args, &at);
		if (err != -ETIMEDOUT)
			CFAIL("rank %d: an unsatisfiable wait answered %d", x->me, err);
	}
	return 0;
}

static int nvp_close(struct nvp *x)
{
	COK(dvx_nvl_unmap(&x->nb));
	COK(dvx_bootstrap_barrier(&x->bs, TMO));
	COK(dvx_gpu_mem_free(&x->src));
	COK(dvx_gpu_mem_free(&x->buf));
	COK(dvx_gpu_stream_destroy(&x->s));
	kern_down(&x->k);
	return gpu_proc_down(&x->mp, &x->bs, &x->g, x->state) ? 1 : 0;
}

/* one rank as a process, in its phases: open, rounds, close (SKIP without a GPU) */
static int proc_rank(const char *addr, int me, int n, uint32_t flags)
{
	static struct nvp x;
	unsigned cnt = 0;

	if (dvx_gpu_count(dvx_hal_cuda(), &cnt) || !cnt)
		return SKIP;
	memset(&x, 0, sizeof(x));
	x.me = me;
	x.n = n;
	x.flags = flags;
	return nvp_open(&x, addr, cnt) || nvp_rounds(&x) || nvp_close(&x);
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

/* thread rank's phase ping-pong: at every scope, both kernels at once, words SET to the
 * round; the times into @t, the peer's 4 KiB checked */
static int tr_pingpong(struct nvp *x, struct trank *t)
{
	int me = x->me, peer = 1 - me, scope, at, err;
	uint32_t rounds = quick ? 50 : 2000;
	uint64_t i;

	for (scope = S_THREAD; scope <= S_BLOCK; scope++) {
		uint64_t dst = dvx_nvl_peer_ptr(&x->nb, peer) + (uint64_t)me * WIN;
		uint64_t pw = dvx_nvl_peer_ptr(&x->nb, peer) + SIG_OFF(2) + 128 * (uint64_t)scope;
		uint64_t mw = x->buf.dptr + SIG_OFF(2) + 128 * (uint64_t)scope, len = 4096;
		uint64_t tmo = TMO;
		uint32_t sc = (uint32_t)scope;
		uint32_t block = scope == S_THREAD ? 1 : scope == S_WARP ? 32 : 256;
		void *args[] = { &sc, &me, &dst, &x->src.dptr, &len, &pw, &mw, &rounds, &tmo,
				 &x->k.status.dptr };
		struct timespec t0, t1;

		pthread_barrier_wait(&tbar);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		err = run_k(&x->g, &x->k, &x->s, x->k.pingpong, 1, block, args, &at);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (err)
			CFAIL("thread rank %d: %s ping-pong: %d", me, scope_name[scope], err);
		t->pp_ns[scope] = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 +
				   (double)(t1.tv_nsec - t0.tv_nsec)) / (2.0 * rounds);
	}
	COK(dvx_bootstrap_barrier(&x->bs, TMO));
	COK(dvx_gpu_memcpy_dtoh(&x->g, x->host, x->buf.dptr + (uint64_t)peer * WIN, 4096));
	for (i = 0; i < 4096; i++)
		if (x->host[i] != pat(peer, me, 99, i))
			CFAIL("thread rank %d: ping-pong byte %llu is %u", me,
			      (unsigned long long)i, x->host[i]);
	return 0;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
}

/* thread rank's phase host put: rank 0 copies on a stream and signals after it, rank 1
 * waits for the signal on the GPU and checks the bytes */
static int tr_host_put(struct nvp *x)
{
	uint64_t i;
	int at, err;

	if (x->me == 0) {
		uint64_t seen = 0, t0, t1, t2, t3;

		t0 = mono_ns();
		COK(dvx_mp_nvl_put(&x->mp, &x->s, dvx_nvl_peer_ptr(&x->nb, 1) + WIN / 2, x->src.dptr,
				   WIN / 2));
		t1 = mono_ns();
		COK(dvx_mp_nvl_signal(&x->mp, &x->s,
				      dvx_nvl_peer_ptr(&x->nb, 1) + SIG_OFF(2) + 3 * 128,
				      DVX_NVL_SIG_ADD, 5));
		t2 = mono_ns();
		COK(dvx_gpu_stream_wait(&x->s, TMO));
		t3 = mono_ns();
		fprintf(stderr, "host put_signal: put %.3f ms, signal %.3f ms, wait %.3f ms\n",
			(double)(t1 - t0) / 1e6, (double)(t2 - t1) / 1e6, (double)(t3 - t2) / 1e6);
		COK(dvx_gpu_memcpy_dtoh(&x->g, &seen,
					dvx_nvl_peer_ptr(&x->nb, 1) + SIG_OFF(2) + 3 * 128, 8));
		if (seen != 5)
			CFAIL("host put_signal: the word reads %llu through the mapping",
			      (unsigned long long)seen);
		return 0;
	}
	{
		uint64_t w = x->buf.dptr + SIG_OFF(2) + 3 * 128, v = 5, tmo = TMO;
		uint32_t sc = S_THREAD, cmp = DVX_CMP_EQ;
		void *args[] = { &sc, &w, &cmp, &v, &tmo, &x->k.status.dptr };

		err = run_k(&x->g, &x->k, &x->s, x->k.wait, 1, 1, args, &at);
		if (err) {
			uint64_t seen = 0;

			dvx_gpu_memcpy_dtoh(&x->g, &seen, w, 8);
			CFAIL("host put_signal: waited %d, the word reads %llu", err,
			      (unsigned long long)seen);
		}
	}
	COK(dvx_gpu_memcpy_dtoh(&x->g, x->host, x->buf.dptr + WIN / 2, WIN / 2));
	for (i = 0; i < WIN / 2; i++)
		if (x->host[i] != pat(0, 1, 99, i))
			CFAIL("host put: byte %llu is %u", (unsigned long long)i, x->host[i]);
	return 0;
}

/* one rank as a thread, in its phases: open (nvp_up()), the source's pattern,
 * ping-pong, host put, close (nvp_close()) */
static int thread_rank(struct trank *t)
{
	struct nvp *x = calloc(1, sizeof(*x));
	uint64_t i;

	if (!x)
		CFAIL("thread rank %d: no memory", t->rank);
	x->me = t->rank;
	x->n = 2;
	x->flags = t->flags;
	COK(dvx_bootstrap_thread_init(&x->bs, t->grp, x->me));
	COK(dvx_gpu_open(&x->g, dvx_hal_cuda(), gpu_of_rank(x->me), NULL));
	{
		struct dvx_mp_cfg c;

		memset(&c, 0, sizeof(c));
		c.rank = x->me;
		c.nranks = 2;
		c.bs = &x->bs;
		c.gpu = &x->g;
		c.timeout_ns = TMO;
		x->state = aligned_alloc(64, (dvx_mp_mem_size(&c) + 63) & ~(size_t)63);
		COK(dvx_mp_init(&x->mp, &c, x->state, dvx_mp_mem_size(&c)));
		COK(dvx_mp_connect(&x->mp, NULL, 0, NULL, 0));
	}
	if (nvp_up(x))
		return 1;
	for (i = 0; i < WIN; i++)
		x->host[i] = pat(x->me, 1 - x->me, 99, i);
	COK(dvx_gpu_memcpy_htod(&x->g, x->src.dptr, x->host, WIN));
	if (tr_pingpong(x, t) || tr_host_put(x))
		return 1;
	COK(dvx_bootstrap_barrier(&x->bs, TMO));
	if (nvp_close(x))
		return 1;
	free(x);
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

/* one rank of the mixed run, its objects */
struct mixr {
	struct mixed *w;
	int me;
	struct dvx_bootstrap bs;
	struct dvx_gpu g;
	struct dvx_nic nic;
	struct dvx_mp mp;
	struct dvx_mem_req rreq;
	struct dvx_gpu_mem buf, src;
	struct dvx_nvl_peer peers[MIXN];
	struct dvx_nvl_buf nb;
	struct dvx_gpu_stream s;
	struct dvx_p2p_lbuf ilb;
	struct dvx_p2p_rbuf all[MIXN], ib[MIXN];
	struct kern k;
	uint8_t *ibuf;
	uint8_t host[WIN];
	void *state, *ist, *irings;
};

/* phase open: bootstrap, GPU, NIC, the multi-peer transport with its IB lanes, kernels,
 * stream */
static int mix_open(struct mixr *x)
{
	struct dvx_nic_cfg na;
	struct dvx_mp_cfg c;
	struct dvx_mem_req sreq;
	char name[16];

	COK(dvx_bootstrap_thread_init(&x->bs, x->w->tw.g, x->me));
	COK(dvx_gpu_open(&x->g, dvx_hal_cuda(), gpu_of_rank(x->me), NULL));
	memset(&na, 0, sizeof(na));
	snprintf(name, sizeof(name), "sim_%d", x->me);
	na.name = name;
	na.gid_index = -1;
	COK(dvx_nic_open(&x->nic, dvx_sim_hal(x->w->tw.fab), &na));
	memset(&c, 0, sizeof(c));
	c.rank = x->me;
	c.nranks = MIXN;
	c.bs = &x->bs;
	c.gpu = &x->g;
	c.ib.nnics = 1;
	c.ib.nics[0] = &x->nic;
	c.ib.qps_per_nic = 1;
	c.ib.sq_depth = 256;
	c.ib.comp_depth = 16;
	c.inject = x->w->tw.inf;
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

/* phase buffers: NVL, a GPU buffer; IB, host memory the software NIC reads and writes
 * (this rank's IB source: its own window); both exchanged */
static int mix_buffers(struct mixr *x)
{
	uint64_t i;
	int err;

	COK(dvx_gpu_mem_alloc(&x->g, BUF_LEN(MIXN), DVX_GPU_MEM_EXPORT, &x->buf));
	COK(dvx_gpu_mem_alloc(&x->g, WIN, 0, &x->src));
	memset(x->host, 0, sizeof(x->host));
	COK(dvx_gpu_memcpy_htod(&x->g, x->buf.dptr + SIG_OFF(MIXN), x->host,
				BUF_LEN(MIXN) - SIG_OFF(MIXN)));
	for (i = 0; i < WIN; i++)
		x->host[i] = pat(x->me, 9, 7, i);
	COK(dvx_gpu_memcpy_htod(&x->g, x->src.dptr, x->host, WIN));
	x->ibuf = aligned_alloc(4096, BUF_LEN(MIXN));
	if (!x->ibuf)
		CFAIL("mixed rank %d: no memory", x->me);
	memset(x->ibuf, 0, BUF_LEN(MIXN));
	memcpy(x->ibuf + (uint64_t)x->me * WIN, x->host, WIN);
	COK(dvx_mp_register(&x->mp, x->ibuf, BUF_LEN(MIXN), DVX_MP_REG_WRITE | DVX_MP_REG_ATOMIC,
			    &x->ilb));
	COK(dvx_mp_exchange_ib(&x->mp, &x->ilb, x->all, x->ib, TMO));
	err = dvx_nvl_exchange(&x->nb, x->peers, dvx_mp_nvl_bootstrap(&x->mp), &x->mp.topo,
			       &x->g, &(struct dvx_nvl_cfg){ (void *)(uintptr_t)x->buf.dptr,
							     BUF_LEN(MIXN), NULL, TMO });
	if (err)
		CFAIL("mixed rank %d: exchange %d (%s)", x->me, err, x->nb.diag.msg);
	COK(dvx_bootstrap_barrier(&x->bs, TMO));
	return 0;
}

/* rank 0: the lanes exported, one kernel that puts to the NVL and the IB peer */
static int mix_poster(struct mixr *x)
{
	uint64_t len = WIN, win = WIN, nsig = SIG_OFF(MIXN), isig = SIG_OFF(MIXN), tmo = TMO;
	struct dvx_gpu_hostreg regs[16], hr;
	struct dvx_gpu_mem dm, ibd;
	struct dvx_mp_dev dev;
	uint32_t nregs = 0;
	uint64_t need;
	void *args[10];
	int at, err;

	COK(dvx_gpu_host_register(&x->g, x->ibuf, BUF_LEN(MIXN), 0, &hr));
	COK(dvx_p2p_gpu_register(&x->mp.ib, &x->g, x->irings, x->rreq.bytes, 0, regs, &nregs));
	COK(dvx_mp_dev_mem_req(&x->mp, &need));
	COK(dvx_gpu_mem_alloc(&x->g, need, 0, &dm));
	COK(dvx_mp_dev_export(&x->mp, &x->nb, regs, nregs, dm.dptr, dm.len, TMO, &dev));
	COK(dvx_gpu_mem_alloc(&x->g, sizeof(x->ib), 0, &ibd));
	COK(dvx_gpu_memcpy_htod(&x->g, ibd.dptr, x->ib, sizeof(x->ib)));
	args[0] = &dev; args[1] = &x->src.dptr; args[2] = &len; args[3] = &win;
	args[4] = &nsig; args[5] = &x->ilb; args[6] = &ibd.dptr; args[7] = &isig;
	args[8] = &tmo; args[9] = &x->k.status.dptr;
	err = run_k(&x->g, &x->k, &x->s, x->k.mixed, MIXN, 128, args, &at);
	if (err)
		CFAIL("mixed kernel: thread %d: %d", at, err);
	COK(dvx_mp_dev_import(&x->mp, &dev));
	COK(dvx_p2p_gpu_unregister(regs, nregs));
	COK(dvx_gpu_host_unregister(&hr));
	COK(dvx_gpu_mem_free(&ibd));
	COK(dvx_gpu_mem_free(&dm));
	return 0;
}

/* rank 1, the NVL peer: the signal waited for on the GPU, the bytes checked */
static int mix_nvl_peer(struct mixr *x)
{
	uint64_t wd = x->buf.dptr + SIG_OFF(MIXN), v = 1, tmo = TMO, i;
	uint32_t sc = S_THREAD, cmp = DVX_CMP_EQ;
	void *args[] = { &sc, &wd, &cmp, &v, &tmo, &x->k.status.dptr };
	int at;

	COK(run_k(&x->g, &x->k, &x->s, x->k.wait, 1, 1, args, &at));
	COK(dvx_gpu_memcpy_dtoh(&x->g, x->host, x->buf.dptr, WIN));
	for (i = 0; i < WIN; i++)
		if (x->host[i] != pat(0, 9, 7, i))
			CFAIL("NVL peer: byte %llu is %u", (unsigned long long)i, x->host[i]);
	return 0;
}

/* rank 2, the IB peer: the signal waited for on the host, the bytes checked */
static int mix_ib_peer(struct mixr *x)
{
	uint64_t i;

	COK(dvx_p2p_wait_signal(&x->mp.ib, &x->ilb, SIG_OFF(MIXN), DVX_CMP_EQ, 1, TMO, NULL));
	for (i = 0; i < WIN; i++)
		if (x->ibuf[i] != pat(0, 9, 7, i))
			CFAIL("IB peer: byte %llu is %u", (unsigned long long)i, x->ibuf[i]);
	return 0;
}

static int mix_close(struct mixr *x)
{
	if (x->mp.ib_live)
		COK(dvx_p2p_flush(&x->mp.ib, 0, TMO, NULL));
	COK(dvx_bootstrap_barrier(&x->bs, TMO));
	COK(dvx_nvl_unmap(&x->nb));
	COK(dvx_bootstrap_barrier(&x->bs, TMO));
	COK(dvx_mp_deregister(&x->mp, x->ibuf));
	COK(dvx_gpu_mem_free(&x->src));
	COK(dvx_gpu_mem_free(&x->buf));
	COK(dvx_gpu_stream_destroy(&x->s));
	kern_down(&x->k);
	COK(dvx_mp_fini(&x->mp));
	dvx_nic_close(&x->nic);
	dvx_bootstrap_fini(&x->bs);
	COK(dvx_gpu_close(&x->g));
	free(x->ibuf);
	free(x->irings);
	free(x->ist);
	free(x->state);
	return 0;
}

/* one rank of the mixed run, in its phases: open, buffers, its role (the poster, the
 * NVL peer, the IB peer), close */
static int mixed_rank(struct mixed *w, int me)
{
	struct mixr *x = calloc(1, sizeof(*x));
	int err;

	if (!x)
		CFAIL("mixed rank %d: no memory", me);
	x->w = w;
	x->me = me;
	err = mix_open(x) || mix_buffers(x) ||
	      (me == 0 ? mix_poster(x) : me == 1 ? mix_nvl_peer(x) : mix_ib_peer(x)) ||
	      mix_close(x);
	if (!err)
		free(x);
	return err;
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

static const uint64_t ll_lens[] = { 0, 1, 7, 8, 9, 15, 16, 17, 100, 1000, DVX_NVL_LL_MAX - 1,
				    DVX_NVL_LL_MAX, DVX_NVL_LL_MAX + 1, 2 * DVX_NVL_LL_MAX };
static uint8_t ll_zero[LL_AREA];

/* one rank of the flagged lines' run, its objects */
struct llr {
	int me, n, ordinal, other;	/* its GPU and the peer's */
	struct dvx_bootstrap bs;
	struct dvx_gpu g;
	struct dvx_mp mp;
	struct dvx_gpu_mem buf;
	struct dvx_nvl_peer peers[2];
	struct dvx_nvl_buf nb;
	struct dvx_gpu_stream s;
	struct kern k;
	void *state;
};

/* phase open: GPU, bootstrap at @addr, the transport (everyone NVL), kernels, stream,
 * the lines, source and destination shared with the peer */
static int ll_open(struct llr *x, const char *addr)
{
	int err;

	if (gpu_proc_up(&(struct gpu_proc){ &x->bs, &x->g, &x->mp, &x->state, addr, x->me, x->n,
					    x->ordinal, 1, TMO }))
		return 1;
	COK(kern_up(&x->g, &x->k));
	COK(dvx_gpu_stream_create(&x->g, &x->s));
	COK(dvx_gpu_mem_alloc(&x->g, 3 * LL_AREA, DVX_GPU_MEM_EXPORT, &x->buf));
	err = dvx_nvl_exchange(&x->nb, x->peers, dvx_mp_nvl_bootstrap(&x->mp), &x->mp.topo, &x->g,
			       &(struct dvx_nvl_cfg){ (void *)(uintptr_t)x->buf.dptr, 3 * LL_AREA,
						      NULL, TMO });
	if (err)
		CFAIL("rank %d: exchange %d (%s)", x->me, err, x->nb.diag.msg);
	return 0;
}

static uint32_t ll_block(int scope)
{
	return scope == S_THREAD ? 1 : scope == S_WARP ? 32 : 128;
}

/* phase pairs: both processes ping-pong every length at every scope. Two processes on
 * one GPU take turns on it (their kernels do not run at once): a few rounds there;
 * thousands where each has its GPU (and in one launch, ll_one_launch()) */
static int ll_pairs(struct llr *x)
{
	uint64_t plines = dvx_nvl_peer_ptr(&x->nb, 1 - x->me), mlines = x->buf.dptr;
	uint64_t src = x->buf.dptr + LL_AREA, dst = x->buf.dptr + 2 * LL_AREA, len, tmo = TMO;
	uint32_t sc, rounds = x->other == x->ordinal ? 3 : quick ? 200 : 3000;
	void *args[] = { &sc, &x->me, &plines, &mlines, &src, &dst, &len, &rounds, &tmo,
			 &x->k.status.dptr };
	int scope, err, at;
	unsigned j;

	for (scope = S_THREAD; scope <= S_BLOCK; scope++)
		for (j = 0; j < sizeof(ll_lens) / sizeof(ll_lens[0]); j++) {
			sc = (uint32_t)scope;
			len = ll_lens[j];
			/* lines start unwritten (0: no sequence) for every case */
			COK(dvx_gpu_memcpy_htod(&x->g, x->buf.dptr, ll_zero, LL_AREA));
			COK(dvx_bootstrap_barrier(&x->bs, TMO));
			err = run_k(&x->g, &x->k, &x->s, x->k.llpp, 1, ll_block(scope), args, &at);
			if (err)
				CFAIL("rank %d (GPU %d, peer on GPU %d): flagged lines, %s, %llu "
				      "bytes, %u rounds: thread %d: %d", x->me, x->ordinal, x->other,
				      scope_name[scope], (unsigned long long)len, rounds, at, err);
			COK(dvx_bootstrap_barrier(&x->bs, TMO));
		}
	return 0;
}

/* phase one launch (rank 0): both sides in one launch (two blocks at once), over rank
 * 1's mapping and rank 0's own lines: thousands of rounds on one GPU too */
static int ll_one_launch(struct llr *x)
{
	uint64_t l0 = x->buf.dptr, l1 = dvx_nvl_peer_ptr(&x->nb, 1);
	uint64_t src = x->buf.dptr + LL_AREA, dst = x->buf.dptr + 2 * LL_AREA, len, tmo = TMO;
	uint32_t sc, rounds = quick ? 200 : 3000;
	int both = -1, scope, err, at;
	void *args[] = { &sc, &both, &l0, &l1, &src, &dst, &len, &rounds, &tmo,
			 &x->k.status.dptr };
	unsigned j;

	for (scope = S_THREAD; scope <= S_BLOCK; scope++)
		for (j = 0; j < sizeof(ll_lens) / sizeof(ll_lens[0]); j++) {
			sc = (uint32_t)scope;
			len = ll_lens[j];
			COK(dvx_gpu_memcpy_htod(&x->g, l0, ll_zero, LL_AREA));
			COK(dvx_gpu_memcpy_htod(&x->g, l1, ll_zero, LL_AREA));
			err = run_k(&x->g, &x->k, &x->s, x->k.llpp, 2, ll_block(scope), args, &at);
			if (err)
				CFAIL("one launch, both ranks: flagged lines, %s, %llu bytes: "
				      "thread %d: %d", scope_name[scope], (unsigned long long)len, at,
				      err);
		}
	return 0;
}

/* phase refusals (rank 0): sequence 0, misaligned lines, a line never written */
static int ll_refusals(struct llr *x)
{
	uint64_t dst = x->buf.dptr + 2 * LL_AREA, l = x->buf.dptr;
	void *args[] = { &l, &dst, &x->k.status.dptr };
	int at;

	COK(dvx_gpu_memcpy_htod(&x->g, x->buf.dptr, ll_zero, LL_AREA));
	(void)run_k(&x->g, &x->k, &x->s, x->k.llbad, 1, 4, args, &at);	/* status[0..3] back */
	if (x->k.st[0] != -EINVAL || x->k.st[1] != -EINVAL || x->k.st[2] != -EINVAL ||
	    x->k.st[3] != -ETIMEDOUT)
		CFAIL("flagged lines: seq 0 %d, misaligned %d / %d, never written %d", x->k.st[0],
		      x->k.st[1], x->k.st[2], x->k.st[3]);
	return 0;
}

static int ll_close(struct llr *x)
{
	COK(dvx_bootstrap_barrier(&x->bs, TMO));
	COK(dvx_nvl_unmap(&x->nb));
	COK(dvx_bootstrap_barrier(&x->bs, TMO));
	COK(dvx_gpu_mem_free(&x->buf));
	COK(dvx_gpu_stream_destroy(&x->s));
	kern_down(&x->k);
	return gpu_proc_down(&x->mp, &x->bs, &x->g, x->state) ? 1 : 0;
}

/* one rank as a process, in its phases: open, pairs, one launch and refusals (rank 0),
 * close (SKIP without a GPU) */
static int ll_rank(const struct ll_arg *la, int me, int n)
{
	static struct llr x;
	unsigned cnt = 0;

	if (dvx_gpu_count(dvx_hal_cuda(), &cnt) || !cnt)
		return SKIP;
	memset(&x, 0, sizeof(x));
	x.me = me;
	x.n = n;
	x.ordinal = la->spread ? me % (int)cnt : 0;
	x.other = la->spread ? (1 - me) % (int)cnt : 0;
	if (ll_open(&x, la->addr) || ll_pairs(&x))
		return 1;
	if (me == 0) {
		COK(dvx_bootstrap_barrier(&x.bs, TMO));
		if (ll_one_launch(&x) || ll_refusals(&x))
			return 1;
	} else {
		COK(dvx_bootstrap_barrier(&x.bs, TMO));
	}
	return ll_close(&x);
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
