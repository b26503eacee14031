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
 *   nccl-net-bench [--comms C] [--quick] [--small]
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/wait.h>

#include "../plugins/nccl/abi.h"

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

/* @n messages of @size per comm over @nc comms, WIN in flight per comm: seconds */
static double stream(struct link *l, int nc, size_t size, int n)
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

			if (posted[c] < n && posted[c] - rdone[c] < WIN) {
				void **slot = &rq[c][posted[c] % WIN];

				if ((rc = T->irecv(k->rc, 1, &buf, &sz, &tag, &k->rmr, NULL, slot)))
					die("irecv", rc);
				posted[c] += *slot != NULL;
			}
			if (sent[c] < posted[c] && sent[c] - sdone[c] < WIN) {
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
			left += rdone[c] < n || sdone[c] < n;
		}
	}
	return now() - t0;
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

static int small;

static int child(int nc, int quick, int fd)
{
	const char *path = getenv("DVX_NCCL_PLUGIN") ? getenv("DVX_NCCL_PLUGIN") : DVX_NCCL_PLUGIN;
	struct link l[MAXC], back;
	double fig[NSIZES + 1];
	void *dl, *ca, *cb;
	unsigned i;
	int c;

	dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!dl || !(T = dlsym(dl, "ncclNetPlugin_v11")))
		die(dlerror() ? dlerror() : "dlsym", -1);
	if (T->init(&ca, 1, NULL, NULL, NULL) || T->init(&cb, 2, NULL, NULL, NULL))
		die("init", -1);
	for (c = 0; c < nc; c++)
		connect_pair(ca, cb, &l[c], 4 << 20);
	connect_pair(cb, ca, &back, 65536);
	if (small)
		return child_small(l, &back, nc, quick, fd);
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
		size_t want = sizeof(double) * (small ? SMALL_FIGS : NSIZES + 1);

		st = read(p[0], fig, want) == (ssize_t)want;
	}
	close(p[0]);
	waitpid(pid, NULL, 0);
	return st ? 0 : -1;
}

#define NCFG 6	/* configurations of the bandwidth table */
#define NSCFG 4	/* and of --small: FIFO and CTS offload, private and shared */

static int print_small(double (*fig)[SMALL_FIGS > NSIZES + 1 ? SMALL_FIGS : NSIZES + 1],
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
	double fig[NCFG][SMALL_FIGS > NSIZES + 1 ? SMALL_FIGS : NSIZES + 1];
	int nc = 4, quick = 0, i, k;
	unsigned s;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--comms") && i + 1 < argc)
			nc = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--quick"))
			quick = 1;
		else if (!strcmp(argv[i], "--small"))
			small = 1;
		else {
			fprintf(stderr, "usage: nccl-net-bench [--comms 1..%d] [--quick] [--small]\n", MAXC);
			return 2;
		}
	}
	if (nc < 1 || nc > MAXC)
		return 2;
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
