// SPDX-License-Identifier: MIT
/*
 * bench/nccl-net-bench.c - libnccl-net-dvx.so through its v11 table, with and without
 * the QP sharing pool (docs/nccl.md): message rate and bandwidth from 8 B to 4 MiB over
 * C communicators from rank A to rank B, and the 8-byte round trip. The reference is the
 * plugin with private QPs, in the same run; each configuration runs in a child process
 * (the plugin reads its environment once). Both ranks are instances of one process,
 * driven by one thread, and every test() steps the software NIC (DVX_NET_SIM_THREAD=0):
 * the figures are the CPU cost of the plugin, the messaging layer and the model,
 * repeatable on a shared machine.
 *
 * --small: 8 B-64 KiB, the rate and the round trip at each size, and how many test()
 * and retried isend() calls one round trip takes (the small-message profile).
 *
 * --procs: the ranks as two processes, as NCCL runs them: RANK 0 sends and RANK 1
 * receives, each with its own instance and software NIC, the NICs' progress threads on
 * (DVX_NET_SIM_THREAD=1), the two joined by the wire on demand through the handles
 * (DVX_NET_WIRE=ondemand: shared-memory rings on one host; and ondemand:tcp:127.0.0.1,
 * the sockets), or as a mesh at start (unix:DIR); the handles pass through a pipe as
 * NCCL's bootstrap passes them. Bandwidth from 64 KiB to 4 MiB (512 KiB is the step
 * NCCL's Simple protocol sends with its default buffer), the FIFO clear-to-send, the
 * CTS offload and the FIFO with sharing on ('FIFO, g2': DVX_NET_COMM_NGROUPS=2, the C
 * comms on shared QPs), beside the same messages between two instances of one process
 * stepped by one thread; then the round trip at 8 B and 8 KiB between the processes (rank 0
 * sends, rank 1 answers on a comm the other way, every receive posted before its
 * message can come; the reference's 8-byte round trip beside it). The
 * figures include the processes' share of the CPUs: on a small machine they are CPU
 * bound.
 *
 * --rtt: --procs's round trips only (no bandwidth columns). Every rank closes its comms
 * and its instance at the end, so DVX_NET_STATS=FILE shows where the software NICs'
 * time went (passes, their time, the waiters' steps: docs/nccl.md).
 *
 * --gpu: --procs's two processes with their buffers in GPU memory, registered as
 * NCCL_PTR_CUDA (DVX_NET_GDR=cuda; plugins/nccl/gdr.h): the sender's a VMM allocation
 * made exportable as a POSIX fd, the receiver's cuMemAlloc memory, both on GPU 0 (the
 * software NIC reaches them through copies, so one GPU serves both ranks). Rows: the
 * copies made by dvx-copier (the default engine), by the NIC's thread in the rank's own
 * process, and host buffers (the reference) in the same run. Every message carries the
 * sender's pattern and the receiver never writes its buffers, so at the end the receiver
 * checks every byte of each comm's buffer against the pattern: the bytes came through
 * the NIC (a lost or misplaced copy shows), not which message brought them. Exits 77
 * without a GPU.
 *
 *   nccl-net-bench [--comms C] [--quick] [--small | --procs | --rtt | --gpu]
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/stat.h>
#include <sys/wait.h>

#include "bench_io.h"
#include "../plugins/nccl/abi.h"
#include <dvx/gpu/gpu.h>

#ifndef DVX_NCCL_PLUGIN
#define DVX_NCCL_PLUGIN "libnccl-net-dvx.so"
#endif
#define MAXC 16
#define WIN 8

static const struct dvx_nccl_net_v11 *T;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, int rc)
{
	fprintf(stderr, "nccl-net-bench: %s: %d\n", what, rc);
	exit(2);
}

struct link {
	void *sc, *rc, *smr, *rmr;
	char *sbuf, *rbuf;
};

static void connect_pair(void *ca, void *cb, struct link *l, size_t bytes)
{
	unsigned char h[DVX_NCCL_HANDLE_BYTES];
	void *lc;
	int rc;

	l->sc = l->rc = NULL;
	if ((rc = T->listen(cb, 0, h, &lc)))
		die("listen", rc);
	while (!l->sc || !l->rc) {
		if (!l->sc && (rc = T->connect(ca, 0, h, &l->sc, NULL)))
			die("connect", rc);
		if (!l->rc && (rc = T->accept(lc, &l->rc, NULL)))
			die("accept", rc);
	}
	T->close_listen(lc);
	l->sbuf = aligned_alloc(4096, bytes);
	l->rbuf = aligned_alloc(4096, bytes);
	memset(l->sbuf, 1, bytes);
	if (T->reg_mr(l->sc, l->sbuf, bytes, DVX_NCCL_PTR_HOST, &l->smr) ||
	    T->reg_mr(l->rc, l->rbuf, bytes, DVX_NCCL_PTR_HOST, &l->rmr))
		die("regMr", -1);
}

/* calls through the table during round trips (--small) */
static long n_test, n_isend_null;

/* both requests of one leg, tested in turn as NCCL's proxy does (a rendezvous send
 * of the CTS offload moves only when its sender is called) */
static void wait_reqs(void *q1, void *q2)
{
	int d1 = 0, d2 = 0, sizes[8], rc;

	while (!d1 || !d2) {
		if (!d1) {
			if ((rc = T->test(q1, &d1, sizes)))
				die("test", rc);
			n_test++;
		}
		if (!d2) {
			if ((rc = T->test(q2, &d2, sizes)))
				die("test", rc);
			n_test++;
		}
	}
}

/* @n messages of @size per comm over @nc comms, WIN in flight per comm: seconds.
 * @sides: 1 the sends, 2 the receives, 3 both (both ranks in this process) */
static double stream_sides(struct link *l, int nc, size_t size, int n, int sides)
{
	void *sq[MAXC][WIN], *rq[MAXC][WIN];
	int sent[MAXC] = { 0 }, posted[MAXC] = { 0 }, sdone[MAXC] = { 0 }, rdone[MAXC] = { 0 };
	int c, left = nc, tag = 1, rc, done, sizes[8];
	double t0 = now();

	memset(sq, 0, sizeof(sq));
	memset(rq, 0, sizeof(rq));
	while (left) {
		left = 0;
		for (c = 0; c < nc; c++) {
			struct link *k = &l[c];
			void *buf = k->rbuf;
			size_t sz = size;

			if ((sides & 2) && posted[c] < n && posted[c] - rdone[c] < WIN) {
				void **slot = &rq[c][posted[c] % WIN];

				if ((rc = T->irecv(k->rc, 1, &buf, &sz, &tag, &k->rmr, NULL, slot)))
					die("irecv", rc);
				posted[c] += *slot != NULL;
			}
			if ((sides & 1) && sent[c] < (sides & 2 ? posted[c] : n) &&
			    sent[c] - sdone[c] < WIN) {
				void **slot = &sq[c][sent[c] % WIN];

				if ((rc = T->isend(k->sc, k->sbuf, size, tag, k->smr, NULL, slot)))
					die("isend", rc);
				sent[c] += *slot != NULL;
			}
			if (rdone[c] < posted[c]) {
				done = 0;
				if ((rc = T->test(rq[c][rdone[c] % WIN], &done, sizes)))
					die("test", rc);
				rdone[c] += done;
			}
			if (sdone[c] < sent[c]) {
				done = 0;
				if ((rc = T->test(sq[c][sdone[c] % WIN], &done, sizes)))
					die("test", rc);
				sdone[c] += done;
			}
			left += ((sides & 2) && rdone[c] < n) || ((sides & 1) && sdone[c] < n);
		}
	}
	return now() - t0;
}

static double stream(struct link *l, int nc, size_t size, int n)
{
	return stream_sides(l, nc, size, n, 3);
}

/* the @sz-byte round trip, A to B and back: microseconds */
static double round_trip(struct link *ab, struct link *ba, size_t sz, int n)
{
	int tag = 1, i, rc;
	void *q1, *q2, *b1 = ab->rbuf, *b2 = ba->rbuf;
	double t0 = now();

	for (i = 0; i < n; i++) {
		q1 = q2 = NULL;
		if ((rc = T->irecv(ab->rc, 1, &b1, &sz, &tag, &ab->rmr, NULL, &q1)) || !q1)
			die("irecv", rc);
		while (!q2) {
			if ((rc = T->isend(ab->sc, ab->sbuf, sz, tag, ab->smr, NULL, &q2)))
				die("isend", rc);
			n_isend_null += !q2;
		}
		wait_reqs(q1, q2);
		q1 = q2 = NULL;
		if ((rc = T->irecv(ba->rc, 1, &b2, &sz, &tag, &ba->rmr, NULL, &q1)) || !q1)
			die("irecv", rc);
		while (!q2) {
			if ((rc = T->isend(ba->sc, ba->sbuf, sz, tag, ba->smr, NULL, &q2)))
				die("isend", rc);
			n_isend_null += !q2;
		}
		wait_reqs(q1, q2);
	}
	return (now() - t0) / n * 1e6;
}

static const size_t sizes[] = { 8, 1024, 65536, 1 << 20, 4 << 20 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

/* the child: one configuration; writes its figures to @fd */
static const size_t small_sizes[] = { 8, 256, 4096, 65536 };
#define NSMALL (sizeof(small_sizes) / sizeof(small_sizes[0]))
#define SMALL_FIGS (NSMALL * 4)

/* --small: per size, the message rate over @nc comms, the round trip, and the calls
 * one round trip took (test() calls, isend() calls that returned no request) */
static int child_small(struct link *l, struct link *back, int nc, int quick, int fd)
{
	double fig[SMALL_FIGS];
	unsigned i;

	for (i = 0; i < NSMALL; i++) {
		size_t s = small_sizes[i];
		int n = quick ? 200 : 2000, rt = quick ? 100 : 1000;
		double t;

		stream(l, nc, s, 4);
		t = stream(l, nc, s, n);
		fig[i * 4] = (double)n * nc / t / 1e6;
		round_trip(l, back, s, 8);
		n_test = n_isend_null = 0;
		fig[i * 4 + 1] = round_trip(l, back, s, rt);
		fig[i * 4 + 2] = (double)n_test / rt;
		fig[i * 4 + 3] = (double)n_isend_null / rt;
	}
	return write(fd, fig, sizeof(fig)) == (ssize_t)sizeof(fig) ? 0 : 1;
}

static int small, procs_ref, rtt_only;

/* --procs: message sizes, and how many of each a comm carries */
static const size_t proc_sizes[] = { 65536, 524288, 4 << 20 };
#define NPROC (sizeof(proc_sizes) / sizeof(proc_sizes[0]))
/* --procs and --gpu figures: GB/s per size, then the round trips (us) at these sizes */
static const size_t rtt_sizes[] = { 8, 8192, 131072, 524288 };
#define RTT_MAX 524288
#define NRTT (sizeof(rtt_sizes) / sizeof(rtt_sizes[0]))
#define NPFIG (NPROC + NRTT)
/* figures of one run in one process: the sizes and the 8 B rate, or --procs' reference */
#define NONE_FIGS (NPFIG > NSIZES + 1 ? NPFIG : NSIZES + 1)

static int proc_count(size_t s, int quick)
{
	int n = (int)((quick ? 32 : 256) * (1 << 20) / s);

	return n < 16 ? 16 : n;
}

/* the plugin's v11 table into T (DVX_NCCL_PLUGIN, else the loader's search) */
static void plugin_open(void)
{
	const char *path = getenv("DVX_NCCL_PLUGIN") ? getenv("DVX_NCCL_PLUGIN") : DVX_NCCL_PLUGIN;
	void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	const char *e;

	if (!dl || !(T = dlsym(dl, "ncclNetPlugin_v11"))) {
		e = dlerror();	/* once: a second call answers NULL */
		die(e ? e : "dlsym", -1);
	}
}

static int child(int nc, int quick, int fd)
{
	struct link l[MAXC], back;
	double fig[NONE_FIGS];
	void *ca, *cb;
	unsigned i;
	int c;

	plugin_open();
	if (T->init(&ca, 1, NULL, NULL, NULL) || T->init(&cb, 2, NULL, NULL, NULL))
		die("init", -1);
	for (c = 0; c < nc; c++)
		connect_pair(ca, cb, &l[c], 4 << 20);
	connect_pair(cb, ca, &back, RTT_MAX);
	if (small)
		return child_small(l, &back, nc, quick, fd);
	if (procs_ref) {	/* --procs' reference: its sizes, both ranks here */
		for (i = 0; i < NPROC; i++) {
			int n = proc_count(proc_sizes[i], quick);

			stream(l, nc, proc_sizes[i], 4);
			fig[i] = (double)proc_sizes[i] * n * nc / stream(l, nc, proc_sizes[i], n) /
				 1e9;
		}
		for (i = 0; i < NRTT; i++) {
			round_trip(&l[0], &back, rtt_sizes[i], quick ? 20 : 200);
			fig[NPROC + i] = round_trip(&l[0], &back, rtt_sizes[i], quick ? 200 : 2000);
		}
		return write(fd, fig, sizeof(fig)) == (ssize_t)sizeof(fig) ? 0 : 1;
	}
	for (i = 0; i < NSIZES; i++) {
		size_t s = sizes[i];
		int n = (int)((quick ? 2 : 16) * (1 << 20) / (s < 4096 ? 4096 : s));
		double t;

		n = n < 8 ? 8 : n > 4000 ? 4000 : n;
		stream(l, nc, s, 4);	/* warm */
		t = stream(l, nc, s, n);
		fig[i] = (double)s * n * nc / t / 1e9;	/* GB/s */
		if (s == 8)
			fig[i] = (double)n * nc / t / 1e6;	/* M msg/s */
	}
	fig[NSIZES] = round_trip(&l[0], &back, 8, quick ? 200 : 2000);
	return write(fd, fig, sizeof(fig)) == (ssize_t)sizeof(fig) ? 0 : 1;
}

static int run(const char *env[], int nc, int quick, double *fig)
{
	int p[2], st;
	pid_t pid;

	if (pipe(p))
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		putenv((char *)"DVX_NET_SIM_THREAD=0");
		for (; *env; env++)
			putenv((char *)*env);
		_exit(child(nc, quick, p[1]));
	}
	close(p[1]);
	{
		size_t want = sizeof(double) * (small ? SMALL_FIGS : NONE_FIGS);

		st = read(p[0], fig, want) == (ssize_t)want;
	}
	close(p[0]);
	waitpid(pid, NULL, 0);
	return st ? 0 : -1;
}

#define NCFG 6	/* configurations of the bandwidth table */
#define NSCFG 4	/* and of --small: FIFO and CTS offload, private and shared */

static int print_small(double (*fig)[SMALL_FIGS > NONE_FIGS ? SMALL_FIGS : NONE_FIGS],
		       const char **name, int nc)
{
	unsigned i;
	int k;

	printf("libnccl-net-dvx.so v11, 8 B-64 KiB: rate over %d comms A->B (%d in flight each), "
	       "round trip A->B->A on one comm; per round trip: test() calls and isend() calls "
	       "answered 'try later'; software NIC stepped by the one thread\n", nc, WIN);
	printf("%-16s %8s %10s %10s %9s %9s  %s\n", "config", "size", "Mmsg/s", "RTT us",
	       "tests/RT", "retry/RT", "RTT vs ref");
	for (k = 0; k < NSCFG; k++)
		for (i = 0; i < NSMALL; i++)
			printf("%-16s %8zu %10.4f %10.1f %9.1f %9.1f  %+6.1f%%\n", name[k], small_sizes[i],
			       fig[k][i * 4], fig[k][i * 4 + 1], fig[k][i * 4 + 2], fig[k][i * 4 + 3],
			       100.0 * (fig[k][i * 4 + 1] / fig[0][i * 4 + 1] - 1.0));
	return 0;
}

/* --gpu: the ranks' buffers in GPU memory (0: host memory) */
static int gpu_bufs;
static struct dvx_gpu gpu;

static uint8_t pattern(size_t i, int c)
{
	return (uint8_t)(i * 7u + (i >> 12) + (unsigned)c * 29u);
}

/* a buffer of @bytes for comm @c of @rank: host memory, or GPU memory (--gpu) */
static char *proc_buf(int rank, int c, size_t bytes, int *type)
{
	static struct dvx_gpu_mem m[2][MAXC + 1];
	uint8_t *p = aligned_alloc(4096, bytes);
	size_t i;

	if (!p)
		die("memory", -1);
	*type = DVX_NCCL_PTR_HOST;
	if (!rank)
		for (i = 0; i < bytes; i++)
			p[i] = pattern(i, c);
	if (!gpu_bufs)
		return (char *)p;
	if (!gpu.hg.hal && dvx_gpu_open(&gpu, dvx_hal_cuda(), 0, NULL))
		die("open GPU 0", -1);
	/* the sender's as NCCL makes its buffers (VMM, POSIX fd), the receiver's cuMemAlloc */
	if (dvx_gpu_mem_alloc(&gpu, bytes, rank ? DVX_GPU_MEM_LEGACY : DVX_GPU_MEM_EXPORT,
			      &m[rank][c]))
		die("GPU memory", -1);
	if (!rank && dvx_gpu_memcpy_htod(&gpu, m[rank][c].dptr, p, bytes))
		die("fill the GPU buffer", -1);
	free(p);
	*type = DVX_NCCL_PTR_CUDA;
	return (char *)(uintptr_t)m[rank][c].dptr;
}

/* the receiver: every byte of comm @c's buffer (the largest size) against the pattern */
static int proc_check(const char *buf, int c, size_t bytes)
{
	uint8_t *p = malloc(bytes);
	size_t i;
	int bad = !p;

	if (p && gpu_bufs)
		bad = dvx_gpu_memcpy_dtoh(&gpu, p, (uint64_t)(uintptr_t)buf, bytes) != 0;
	else if (p)
		memcpy(p, buf, bytes);
	for (i = 0; !bad && i < bytes; i++)
		if (p[i] != pattern(i, c)) {
			fprintf(stderr, "nccl-net-bench: comm %d, byte %zu: %#x, not %#x\n", c, i,
				p[i], pattern(i, c));
			bad = 1;
		}
	free(p);
	return bad;
}

static void wait1(void *q)
{
	int done = 0, got[8], rc;

	while (!done)
		if ((rc = T->test(q, &done, got)))
			die("test", rc);
}

static void *post_recv(void *rc, void *buf, size_t sz, void *mr)
{
	void *q = NULL;
	int tag = 1, e;

	if ((e = T->irecv(rc, 1, &buf, &sz, &tag, &mr, NULL, &q)) || !q)
		die("irecv", e);
	return q;
}

static void *post_send(void *sc, void *buf, size_t sz, void *mr)
{
	void *q = NULL;
	int e;

	while (!q)
		if ((e = T->isend(sc, buf, sz, 1, mr, NULL, &q)))
			die("isend", e);
	return q;
}

/*
 * the @sz-byte round trip between the processes, @n times: 0 sends on @fw and 1 answers
 * on @bw, each receive posted before the message it waits for can come (as NCCL's
 * proxy posts them): microseconds on rank 0
 */
static double proc_rtt(int rank, struct link *fw, struct link *bw, size_t sz, int n)
{
	double t0 = now();
	void *rq, *sq;
	int i;

	if (rank) {
		rq = post_recv(fw->rc, fw->rbuf, sz, fw->rmr);
		for (i = 0; i < n; i++) {
			wait1(rq);
			if (i + 1 < n)
				rq = post_recv(fw->rc, fw->rbuf, sz, fw->rmr);
			wait1(post_send(bw->sc, bw->sbuf, sz, bw->smr));
		}
		return 0;
	}
	for (i = 0; i < n; i++) {
		rq = post_recv(bw->rc, bw->rbuf, sz, bw->rmr);
		sq = post_send(fw->sc, fw->sbuf, sz, fw->smr);
		wait1(sq);
		wait1(rq);
	}
	return (now() - t0) / n * 1e6;
}

/* the way back for the round trips: 0 listens, its handle through @qfd to 1 */
static void proc_back(void *ctx, int rank, int qfd, struct link *bw)
{
	unsigned char h[DVX_NCCL_HANDLE_BYTES];
	void *lc = NULL;
	int rc, type;

	memset(bw, 0, sizeof(*bw));
	if (!rank) {
		if ((rc = T->listen(ctx, 0, h, &lc)))
			die("listen back", rc);
		if (bench_full_io(qfd, h, sizeof(h), 1))
			die("handle back out", -1);
		while (!bw->rc)
			if ((rc = T->accept(lc, &bw->rc, NULL)))
				die("accept back", rc);
		T->close_listen(lc);
		bw->rbuf = proc_buf(1, MAXC, RTT_MAX, &type);	/* not filled: the answers */
		if ((rc = T->reg_mr(bw->rc, bw->rbuf, RTT_MAX, type, &bw->rmr)))
			die("regMr back", rc);
		return;
	}
	if (bench_full_io(qfd, h, sizeof(h), 0))
		die("handle back in", -1);
	while (!bw->sc)
		if ((rc = T->connect(ctx, 0, h, &bw->sc, NULL)))
			die("connect back", rc);
	bw->sbuf = proc_buf(0, MAXC, RTT_MAX, &type);
	if ((rc = T->reg_mr(bw->sc, bw->sbuf, RTT_MAX, type, &bw->smr)))
		die("regMr back", rc);
}

/* one rank of --procs: 1 listens, sends its handles on @hfd, receives; 0 reads the
 * handles from @hfd, connects, sends, and writes GB/s per size on @out; then the round
 * trips, the way back joined through @qfd */
static int proc_rank(int rank, int nc, int quick, int hfd, int qfd, int out)
{
	static unsigned char h[MAXC][DVX_NCCL_HANDLE_BYTES];
	struct link l[MAXC];
	void *ctx, *lc[MAXC];
	size_t bytes = 4 << 20;
	double fig[NPFIG];
	struct link bw;
	unsigned i;
	int c, rc, todo, type;

	plugin_open();
	if ((rc = T->init(&ctx, 1, NULL, NULL, NULL)))
		die("init", rc);
	memset(l, 0, sizeof(l));
	if (rank == 1) {
		for (c = 0; c < nc; c++)
			if ((rc = T->listen(ctx, 0, h[c], &lc[c])))
				die("listen", rc);
		if (bench_full_io(hfd, h, sizeof(h[0]) * (size_t)nc, 1))
			die("handles out", -1);
		for (todo = nc; todo;)
			for (c = 0, todo = 0; c < nc; c++)
				if (!l[c].rc && (rc = T->accept(lc[c], &l[c].rc, NULL)))
					die("accept", rc);
				else
					todo += !l[c].rc;
		for (c = 0; c < nc; c++) {
			T->close_listen(lc[c]);
			l[c].rbuf = proc_buf(rank, c, bytes, &type);
			if ((rc = T->reg_mr(l[c].rc, l[c].rbuf, bytes, type, &l[c].rmr)))
				die("regMr", rc);
		}
	} else {
		if (bench_full_io(hfd, h, sizeof(h[0]) * (size_t)nc, 0))
			die("handles in", -1);
		for (todo = nc; todo;)
			for (c = 0, todo = 0; c < nc; c++)
				if (!l[c].sc && (rc = T->connect(ctx, 0, h[c], &l[c].sc, NULL)))
					die("connect", rc);
				else
					todo += !l[c].sc;
		for (c = 0; c < nc; c++) {
			l[c].sbuf = proc_buf(rank, c, bytes, &type);
			if ((rc = T->reg_mr(l[c].sc, l[c].sbuf, bytes, type, &l[c].smr)))
				die("regMr", rc);
		}
	}
	for (i = 0; i < NPROC; i++) {
		int n = proc_count(proc_sizes[i], quick);
		double t;

		if (rtt_only) {
			fig[i] = 0;
			continue;
		}
		stream_sides(l, nc, proc_sizes[i], 4, rank ? 2 : 1);	/* warm */
		t = stream_sides(l, nc, proc_sizes[i], n, rank ? 2 : 1);
		fig[i] = (double)proc_sizes[i] * n * nc / t / 1e9;
	}
	for (c = 0; rank && !rtt_only && c < nc; c++)
		if (proc_check(l[c].rbuf, c, proc_sizes[NPROC - 1]))
			return 3;
	proc_back(ctx, rank, qfd, &bw);
	for (i = 0; i < NRTT; i++) {
		int n = quick ? 200 : 2000;

		proc_rtt(rank, &l[0], &bw, rtt_sizes[i], n / 10);	/* warm */
		fig[NPROC + i] = proc_rtt(rank, &l[0], &bw, rtt_sizes[i], n);
	}
	if (!rank && bench_full_io(out, fig, sizeof(fig), 1))
		return 1;
	/* an end as NCCL's: the comms closed, then the instance (DVX_NET_STATS is
	 * written there) */
	for (c = 0; c < nc; c++)
		if ((rc = rank ? T->close_recv(l[c].rc) : T->close_send(l[c].sc)))
			die("close", rc);
	if ((rc = rank ? T->close_send(bw.sc) : T->close_recv(bw.rc)) || (rc = T->finalize(ctx)))
		die("close back / finalize", rc);
	return 0;
}

/* --procs, one configuration: the two ranks forked, GB/s per size into @fig */
static int run_procs(const char *env[], int nc, int quick, double *fig)
{
	int hp[2], qp[2], op[2], r, st, bad = 0;
	pid_t pid[2];

	if (pipe(hp) || pipe(qp) || pipe(op))
		return -1;
	for (r = 0; r < 2; r++) {
		fflush(NULL);
		pid[r] = fork();
		if (pid[r] == 0) {
			const char **e;

			putenv((char *)(r ? "RANK=1" : "RANK=0"));
			putenv((char *)"WORLD_SIZE=2");
			putenv((char *)(r ? "DVX_NET_RANK=1" : "DVX_NET_RANK=0"));
			putenv((char *)"DVX_NET_NRANKS=2");
			putenv((char *)"DVX_NET_SIM_THREAD=1");
			for (e = env; *e; e++)
				putenv((char *)*e);
			if (!getenv("DVX_NET_WIRE"))
				putenv((char *)"DVX_NET_WIRE=ondemand");
			/* each rank keeps only its own ends: a rank that dies is an end of
			 * file for the other and for the parent, never a hang */
			close(op[0]);
			close(r ? hp[0] : hp[1]);
			close(r ? qp[1] : qp[0]);
			if (r)
				close(op[1]);
			_exit(proc_rank(r, nc, quick, r ? hp[1] : hp[0], r ? qp[0] : qp[1], op[1]));
		}
		if (pid[r] < 0)
			bad = 1;
	}
	close(hp[0]);
	close(hp[1]);
	close(qp[0]);
	close(qp[1]);
	close(op[1]);
	bad |= bench_full_io(op[0], fig, sizeof(double) * NPFIG, 0);
	close(op[0]);
	for (r = 0; r < 2; r++)
		if (pid[r] > 0 && (waitpid(pid[r], &st, 0) != pid[r] || !WIFEXITED(st) ||
				   WEXITSTATUS(st)))
			bad = 1;
	return bad ? -1 : 0;
}

/* --procs: two processes against one, FIFO and CTS offload */
static int main_procs(int nc, int quick)
{
	static const char *fifo[] = { "DVX_NET_COMM_NGROUPS=0", NULL };
	static const char *co[] = { "DVX_NET_COMM_NGROUPS=0", "DVX_NET_CTS_OFFLOAD=1", NULL };
	static char wire[64];
	static const char *mesh[] = { "DVX_NET_COMM_NGROUPS=0", wire, NULL };
	static const char *tcp[] = { "DVX_NET_COMM_NGROUPS=0", "DVX_NET_WIRE=ondemand:tcp:127.0.0.1",
				     NULL };
	static const char *shared[] = { "DVX_NET_COMM_NGROUPS=2", NULL };
	const char **cfg[] = { fifo, co, tcp, mesh, shared };
	const char *name[] = { "FIFO CTS", "CTS offload", "FIFO, TCP", "FIFO, mesh", "FIFO, g2" };
	double fig[5][2][NPFIG];
	const char *dir;
	unsigned i;
	int k, bad = 0;

	/* the mesh: a UNIX wire joined at start (same-host shared-memory rings) */
	snprintf(wire, sizeof(wire), "DVX_NET_WIRE=unix:/tmp/dvx-ncb-%d", (int)getpid());
	dir = wire + strlen("DVX_NET_WIRE=unix:");
	if (mkdir(dir, 0700))
		return 1;
	for (k = 0; k < 5 && !bad; k++) {
		bad = run_procs(cfg[k], nc, quick, fig[k][0]);
		if (bad) {
			fprintf(stderr, "nccl-net-bench: --procs '%s' failed\n", name[k]);
		} else if (cfg[k] == mesh || cfg[k] == tcp) {
			/* no wire in one process: the FIFO row's reference */
			memcpy(fig[k][1], fig[0][1], sizeof(fig[k][1]));
		} else {
			/* the reference: both ranks in one process, one thread stepping the NIC */
			double one[NONE_FIGS];

			procs_ref = 1;
			bad = run(cfg[k], nc, quick, one);
			for (i = 0; i < NPROC && !bad; i++)
				fig[k][1][i] = one[i];
			for (i = NPROC; i < NPFIG && !bad; i++)
				fig[k][1][i] = one[i];	/* its round trips */
		}
	}
	rmdir(dir);
	if (bad)
		return 1;
	printf("libnccl-net-dvx.so v11, %d comms A->B, %d in flight each, GB/s: two processes "
	       "(progress threads; the wire on demand, one host: shared-memory rings; 'TCP': on "
	       "demand over TCP; 'mesh': joined at start, rings) / one process (one thread)\n",
	       nc, WIN);
	printf("%-12s", "config");
	for (i = 0; i < NPROC; i++)
		printf(" %17zuK", proc_sizes[i] / 1024);
	for (i = 0; i < NRTT; i++)
		printf(" %13s %4zuK", "RTT us", rtt_sizes[i] >> 10);
	printf("   (RTT 0K: 8 B)\n");
	for (k = 0; k < 5; k++) {
		printf("%-12s", name[k]);
		for (i = 0; i < NPROC; i++)
			printf("   %6.2f / %6.2f", fig[k][0][i], fig[k][1][i]);
		for (i = NPROC; i < NPFIG; i++)
			printf("   %6.1f / %6.1f", fig[k][0][i], fig[k][1][i]);
		printf("\n");
	}
	return 0;
}

/* --gpu: host buffers against GPU buffers through each engine */
static int main_gpu(int nc, int quick)
{
	static const char *host[] = { "DVX_NET_COMM_NGROUPS=0", NULL };
	static const char *proc[] = { "DVX_NET_COMM_NGROUPS=0", "DVX_NET_GDR=cuda",
				      "DVX_NET_GDR_ENGINE=process", NULL };
	static const char *thr[] = { "DVX_NET_COMM_NGROUPS=0", "DVX_NET_GDR=cuda",
				     "DVX_NET_GDR_ENGINE=thread", NULL };
	const char **cfg[] = { host, proc, thr };
	const char *name[] = { "host buffers (ref)", "GPU, dvx-copier", "GPU, in-process" };
	double fig[3][NPFIG];
	unsigned i;
	pid_t pid;
	int k, st;

	/* a GPU? asked in a child: this process must not start CUDA before the ranks fork */
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		unsigned n = 0;

		_exit(dvx_hal_cuda() && !dvx_gpu_count(dvx_hal_cuda(), &n) && n ? 0 : 77);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
		printf("nccl-net-bench --gpu: no NVIDIA GPU or driver; skipped\n");
		return 77;
	}
	for (k = 0; k < 3; k++) {
		gpu_bufs = k > 0;
		if (run_procs(cfg[k], nc, quick, fig[k])) {
			fprintf(stderr, "nccl-net-bench: --gpu '%s' failed\n", name[k]);
			return 1;
		}
	}
	printf("libnccl-net-dvx.so v11, %d comms A->B, %d in flight each, GB/s, two processes "
	       "(the wire on demand, shared-memory rings), buffers in GPU 0's memory "
	       "(NCCL_PTR_CUDA) or host memory; every byte received checked against the pattern\n",
	       nc, WIN);
	printf("%-20s", "buffers");
	for (i = 0; i < NPROC; i++)
		printf(" %8zuK", proc_sizes[i] / 1024);
	for (i = 0; i < NRTT; i++)
		printf(" RTT %4zuK us", rtt_sizes[i] >> 10);
	printf("   (RTT 0K: 8 B)\n");
	for (k = 0; k < 3; k++) {
		printf("%-20s", name[k]);
		for (i = 0; i < NPROC; i++)
			printf(" %9.3f", fig[k][i]);
		for (i = NPROC; i < NPFIG; i++)
			printf(" %12.1f", fig[k][i]);
		printf("\n");
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const char *off[] = { "DVX_NET_COMM_NGROUPS=0", NULL };
	static const char *g1[] = { "DVX_NET_COMM_NGROUPS=1", NULL };
	static const char *g4[] = { "DVX_NET_COMM_NGROUPS=4", NULL };
	static const char *g4d4[] = { "DVX_NET_COMM_NGROUPS=4", "DVX_NET_QP_DEPTH_MULT=4", NULL };
	static const char *q4[] = { "DVX_NET_COMM_NGROUPS=0", "DVX_NET_QPS_PER_CONN=4", NULL };
	static const char *co[] = { "DVX_NET_COMM_NGROUPS=0", "DVX_NET_CTS_OFFLOAD=1", NULL };
	static const char *cog1[] = { "DVX_NET_COMM_NGROUPS=1", "DVX_NET_CTS_OFFLOAD=1", NULL };
	const char **cfg[] = { off, g1, g4, g4d4, q4, co };
	const char *name[] = { "private (ref)", "shared 1 grp", "shared 4 grp", "4 grp depth x4",
			       "private 4 QPs", "CTS offload" };
	const char **scfg[] = { off, g1, co, cog1 };
	const char *sname[] = { "private (ref)", "shared 1 grp", "CTS offload", "offload 1 grp" };
	double fig[NCFG][SMALL_FIGS > NONE_FIGS ? SMALL_FIGS : NONE_FIGS];
	int nc = 4, quick = 0, procs = 0, gpu_mode = 0, i, k;
	unsigned s;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--comms") && i + 1 < argc)
			nc = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--quick"))
			quick = 1;
		else if (!strcmp(argv[i], "--small"))
			small = 1;
		else if (!strcmp(argv[i], "--procs"))
			procs = 1;
		else if (!strcmp(argv[i], "--rtt"))
			procs = rtt_only = 1;
		else if (!strcmp(argv[i], "--gpu"))
			gpu_mode = 1;
		else {
			fprintf(stderr, "usage: nccl-net-bench [--comms 1..%d] [--quick] "
				"[--small | --procs | --rtt | --gpu]\n", MAXC);
			return 2;
		}
	}
	if (nc < 1 || nc > MAXC)
		return 2;
	if (gpu_mode)
		return main_gpu(nc, quick);
	if (procs)
		return main_procs(nc, quick);
	for (k = 0; k < (small ? NSCFG : NCFG); k++)
		if (run(small ? scfg[k] : cfg[k], nc, quick, fig[k])) {
			fprintf(stderr, "nccl-net-bench: configuration '%s' failed\n",
				small ? sname[k] : name[k]);
			return 1;
		}
	if (small)
		return print_small(fig, sname, nc);
	printf("libnccl-net-dvx.so v11, %d comms A->B, %d in flight each, software NIC stepped by "
	       "the one thread\n", nc, WIN);
	printf("%-16s %10s", "config", "8 B Mmsg/s");
	for (s = 1; s < NSIZES; s++)
		printf(" %9zuK", sizes[s] / 1024);
	printf(" %10s  vs ref\n", "RTT 8B us");
	for (k = 0; k < NCFG; k++) {
		printf("%-16s %10.3f", name[k], fig[k][0]);
		for (s = 1; s < NSIZES; s++)
			printf(" %8.2fGB", fig[k][s]);
		printf(" %10.1f  %+5.1f%%\n", fig[k][NSIZES],
		       100.0 * (fig[k][NSIZES - 1] / fig[0][NSIZES - 1] - 1.0));
	}
	return 0;
}
