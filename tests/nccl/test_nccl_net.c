// SPDX-License-Identifier: MIT
/*
 * tests/nccl/test_nccl_net.c - nccl-net-test: libnccl-net-dvx.so driven the way NCCL's
 * proxy drives a network plugin, without NCCL (docs/nccl.md).
 *
 * The built library is dlopen()ed and its tables looked up by name (ncclNetPlugin_v11
 * and _v8; v10 and v9 for the layout). Each case runs in a child process of its own,
 * because the plugin reads its environment once per process. A rank has two threads,
 * as NCCL's proxy has: a service thread (listen, connect, accept, regMr, deregMr,
 * close) and a progress thread (isend, irecv, test) that starts on each connection as
 * soon as the service thread hands it over, so the two call into the plugin at the same
 * time. Ranks are threads of one process (one fabric) or forked processes joined by the
 * software NIC's wire (DVX_NET_WIRE). The traffic follows the proxy's habits: up to 32
 * requests in flight per comm, a NULL request means "call again", grouped receives of
 * up to 4 buffers whose tags pick the buffer (reversed on odd groups), zero-byte
 * messages, receives larger than the sends, the 0x1 optional-completion mark in
 * *request before irecv, requests tested oldest first. Every byte is checked, and
 * each rank's digest of what it received must not depend on the configuration
 * (sharing off and on, 1 and 2 NICs, v11 and v8).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>
#include <unistd.h>

#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "../lib/dvx_test.h"
#include "abi.h"

#ifndef DVX_NCCL_PLUGIN
#define DVX_NCCL_PLUGIN "libnccl-net-dvx.so"
#endif

#define MAX_RANKS 4
#define MAX_COMMS 16
#define NMAX 4			/* buffers per grouped receive */
#define SEC 1000000000ull

/* ------------------------------------------------------------------------------
 * The plugin, either version
 */
struct api {
	void *dl;
	int version;
	const struct dvx_nccl_net_v11 *t11;
	const struct dvx_nccl_net_v8 *t8;
};

static int nwarn;
static char last_warn[200];
static char copier_warn[512], copier_warn_next[512];	/* whole lines */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static void logger(int level, unsigned long flags, const char *file, int line, const char *fmt,
		   ...)
{
	va_list ap;

	if (level != DVX_NCCL_LOG_WARN)
		return;
	pthread_mutex_lock(&log_lock);
	va_start(ap, fmt);
	vsnprintf(copier_warn_next, sizeof(copier_warn_next), fmt, ap);
	va_end(ap);
	snprintf(last_warn, sizeof(last_warn), "%.199s", copier_warn_next);
	nwarn++;
	if (strstr(copier_warn_next, "dvx-copier"))	/* fault_copier looks for it later */
		memcpy(copier_warn, copier_warn_next, sizeof(copier_warn));
	if (getenv("DVX_NCCL_TEST_VERBOSE"))
		fprintf(stderr, "[%d] WARN %s:%d %s\n", (int)getpid(), file, line, last_warn);
	pthread_mutex_unlock(&log_lock);
}

static int api_open(struct api *a, int version)
{
	const char *path = getenv("DVX_NCCL_PLUGIN") ? getenv("DVX_NCCL_PLUGIN") : DVX_NCCL_PLUGIN;

	memset(a, 0, sizeof(*a));
	a->version = version;
	a->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!a->dl) {
		fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
		return -1;
	}
	if (version == 11)
		a->t11 = dlsym(a->dl, "ncclNetPlugin_v11");
	else
		a->t8 = dlsym(a->dl, "ncclNetPlugin_v8");
	return a->t11 || a->t8 ? 0 : -1;
}

static int api_init(struct api *a, void **ctx)
{
	*ctx = NULL;
	if (a->t11)
		return a->t11->init(ctx, 0x1234, NULL, logger, NULL);
	return a->t8->init(logger);
}

static int api_devices(struct api *a, int *n)
{
	return a->t11 ? a->t11->devices(n) : a->t8->devices(n);
}

static int api_listen(struct api *a, void *ctx, int dev, void *h, void **lc)
{
	return a->t11 ? a->t11->listen(ctx, dev, h, lc) : a->t8->listen(dev, h, lc);
}

static int api_connect(struct api *a, void *ctx, int dev, void *h, void **sc)
{
	struct dvx_nccl_dev_handle *dh = NULL;	/* what the proxy passes for a host device */

	return a->t11 ? a->t11->connect(ctx, dev, h, sc, &dh) : a->t8->connect(dev, h, sc, &dh);
}

static int api_accept(struct api *a, void *lc, void **rc)
{
	struct dvx_nccl_dev_handle *dh = NULL;

	return a->t11 ? a->t11->accept(lc, rc, &dh) : a->t8->accept(lc, rc, &dh);
}

/* the type the traffic's buffers are registered as: NCCL_PTR_CUDA in the GPU-buffer
 * case (host memory behind the plugin's DVX_NET_GDR=host path), set in its process */
static int reg_type = DVX_NCCL_PTR_HOST;

/*
 * The traffic's buffers: test memory, or with NCCL_PTR_CUDA under DVX_NET_GDR=hostproc
 * a shared mapping of a memfd this process keeps open (what the plugin exports to
 * dvx-copier --sim as a GPU allocation's fd)
 */
static struct {
	pthread_mutex_t lock;
	struct { void *p; size_t len; int fd; } b[1024];
} memfds = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int hostproc(void)
{
	const char *g = getenv("DVX_NET_GDR");

	return reg_type == DVX_NCCL_PTR_CUDA && g && !strcmp(g, "hostproc");
}

static void *memfd_buf(size_t bytes)
{
	int fd = memfd_create("dvx-test-gpu", MFD_CLOEXEC), i;
	void *p;

	if (fd < 0 || ftruncate(fd, (off_t)bytes))
		return NULL;
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		close(fd);
		return NULL;
	}
	pthread_mutex_lock(&memfds.lock);
	for (i = 0; i < 1024 && memfds.b[i].p; i++)
		;
	if (i < 1024) {
		memfds.b[i].p = p;
		memfds.b[i].len = bytes;
		memfds.b[i].fd = fd;
	}
	pthread_mutex_unlock(&memfds.lock);
	if (i == 1024) {
		munmap(p, bytes);
		close(fd);
		return NULL;
	}
	return p;
}

static void *buf_alloc(size_t bytes)
{
	return hostproc() ? memfd_buf(bytes) : dvx_test_alloc(bytes, 0);
}

static void buf_free(void *p)
{
	int i;

	pthread_mutex_lock(&memfds.lock);
	for (i = 0; i < 1024 && memfds.b[i].p != p; i++)
		;
	if (i < 1024) {
		munmap(p, memfds.b[i].len);
		close(memfds.b[i].fd);
		memfds.b[i].p = NULL;
	}
	pthread_mutex_unlock(&memfds.lock);
	if (i == 1024)
		dvx_test_free(p);
}

static int api_reg(struct api *a, void *comm, void *p, size_t n, void **mh)
{
	return a->t11 ? a->t11->reg_mr(comm, p, n, reg_type, mh) :
			a->t8->reg_mr(comm, p, n, reg_type, mh);
}

static int api_dereg(struct api *a, void *comm, void *mh)
{
	return a->t11 ? a->t11->dereg_mr(comm, mh) : a->t8->dereg_mr(comm, mh);
}

static int api_isend(struct api *a, void *sc, void *p, size_t n, int tag, void *mh, void **req)
{
	if (a->t11)
		return a->t11->isend(sc, p, n, tag, mh, NULL, req);
	return a->t8->isend(sc, p, (int)n, tag, mh, req);
}

static int api_irecv(struct api *a, void *rc, int n, void **p, size_t *sz, int *tags, void **mh,
		     void **req)
{
	int isz[NMAX], i;

	if (a->t11)
		return a->t11->irecv(rc, n, p, sz, tags, mh, NULL, req);
	for (i = 0; i < n && i < NMAX; i++)
		isz[i] = (int)sz[i];
	return a->t8->irecv(rc, n, p, isz, tags, mh, req);
}

static int api_test(struct api *a, void *req, int *done, int *sizes)
{
	return a->t11 ? a->t11->test(req, done, sizes) : a->t8->test(req, done, sizes);
}

static int api_close(struct api *a, int kind, void *comm)
{
	if (a->t11)
		return kind == 0 ? a->t11->close_listen(comm) :
		       kind == 1 ? a->t11->close_send(comm) : a->t11->close_recv(comm);
	return kind == 0 ? a->t8->close_listen(comm) :
	       kind == 1 ? a->t8->close_send(comm) : a->t8->close_recv(comm);
}

static int api_consumed(struct api *a, void *rc, int n, void *req)
{
	return a->t11 ? a->t11->irecv_consumed(rc, n, req) : a->t8->irecv_consumed(rc, n, req);
}

static int api_finalize(struct api *a, void *ctx)
{
	return a->t11 ? a->t11->finalize(ctx) : 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------------------------
 * The schedule both ends know: message sizes, contents, groups
 */
struct run {
	int nranks, ncomms, nmsgs, inflight, version, procs, reverse_tags;
	int kill_last;		/* procs: the last rank dies after the traffic */
	int cuda;		/* register the buffers as NCCL_PTR_CUDA */
	int ondemand;		/* procs: DVX_NET_WIRE=ondemand (joins through the handles; 2:
				 * ondemand:tcp:127.0.0.1) */
	size_t max_size;
	const char *env[8];	/* NAME=VALUE set in the case's process */
};

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

static size_t msg_size(const struct run *R, int src, int c, int j)
{
	uint64_t h = mix((uint64_t)src << 40 | (uint64_t)c << 24 | (uint64_t)j);

	if (j % 7 == 3)
		return 0;	/* zero-byte messages are real traffic */
	if (j % 3 == 0)
		return 1 + h % 64;
	return h % (R->max_size + 1);
}

static uint8_t msg_byte(int src, int c, int j, size_t k)
{
	return (uint8_t)(mix((uint64_t)src << 40 | (uint64_t)c << 24 | (uint64_t)j) + k * 131);
}

/* group g: its first message and its buffers */
static int group_n(int g)
{
	return 1 + g % NMAX;
}

/* ------------------------------------------------------------------------------
 * The world in shared memory (threads or processes)
 */
struct world {
	struct run R;
	uint8_t handle[MAX_RANKS][MAX_RANKS][MAX_COMMS][DVX_NCCL_HANDLE_BYTES];
	atomic_int published[MAX_RANKS][MAX_RANKS][MAX_COMMS];
	atomic_int done_ranks;
	atomic_int dead;
	pthread_barrier_t bar;
	uint64_t digest[MAX_RANKS];
	int fail[MAX_RANKS];
	char why[MAX_RANKS][512];
};

struct conn {
	void *lc, *sc, *rc;
	void *smr, *rmr;
	uint8_t *sbuf, *rbuf;
	uint8_t handle[DVX_NCCL_HANDLE_BYTES];	/* the connect's buffer, kept across retries */
	atomic_int ready;
	/* sender */
	int sj;			/* next message to send */
	void *sreq[DVX_NCCL_MAX_REQUESTS * NMAX];
	int sreq_j[DVX_NCCL_MAX_REQUESTS * NMAX];
	int shead, stail;	/* in-flight ring */
	/* receiver */
	int rg, rj;		/* next group to post, its first message */
	void *rreq[DVX_NCCL_MAX_REQUESTS];
	int rreq_g[DVX_NCCL_MAX_REQUESTS], rreq_j[DVX_NCCL_MAX_REQUESTS];
	int rhead, rtail;
	int recvd;
	uint64_t digest;
};

struct rank {
	struct world *w;
	struct api a;
	int r, ndev;
	void *ctx;
	struct conn conn[MAX_RANKS][MAX_COMMS];
	atomic_int traffic_done;
	char why[512];
	int err;
};

#define FAIL(rk, ...) do { \
	if (!(rk)->err) { \
		snprintf((rk)->why, sizeof((rk)->why), __VA_ARGS__); \
		(rk)->err = 1; \
	} \
} while (0)

static size_t slot_bytes(const struct run *R)
{
	return R->max_size + 128;	/* a receive is larger than the send by up to 127 */
}

static void *service(void *p)
{
	struct rank *rk = p;
	struct world *w = rk->w;
	const struct run *R = &w->R;
	size_t sbytes = (size_t)R->inflight * NMAX * slot_bytes(R);
	int peer, c, rc, left;
	uint64_t t0;

	for (peer = 0; peer < R->nranks; peer++)
		for (c = 0; peer != rk->r && c < R->ncomms; c++) {
			struct conn *k = &rk->conn[peer][c];

			rc = api_listen(&rk->a, rk->ctx, c % rk->ndev, w->handle[rk->r][peer][c], &k->lc);
			if (rc) {
				FAIL(rk, "listen: %d", rc);
				return NULL;
			}
			atomic_store(&w->published[rk->r][peer][c], 1);
		}
	t0 = now_ns();
	do {
		left = 0;
		for (peer = 0; peer < R->nranks; peer++)
			for (c = 0; peer != rk->r && c < R->ncomms; c++) {
				struct conn *k = &rk->conn[peer][c];

				if (!k->sc && atomic_load(&w->published[peer][rk->r][c])) {
					if (!k->handle[104])	/* first call: NCCL's copy of the handle */
						memcpy(k->handle, w->handle[peer][rk->r][c],
						       sizeof(k->handle));
					rc = api_connect(&rk->a, rk->ctx, c % rk->ndev, k->handle, &k->sc);
					if (rc) {
						FAIL(rk, "connect to %d/%d: %d (%s)", peer, c, rc, last_warn);
						return NULL;
					}
				}
				if (!k->rc && k->lc) {
					rc = api_accept(&rk->a, k->lc, &k->rc);
					if (rc) {
						FAIL(rk, "accept from %d/%d: %d", peer, c, rc);
						return NULL;
					}
					if (k->rc) {
						/* NCCL closes the listen comm after its one accept */
						api_close(&rk->a, 0, k->lc);
						k->lc = NULL;
					}
				}
				if (k->sc && k->rc && !atomic_load(&k->ready)) {
					k->sbuf = buf_alloc(sbytes);
					k->rbuf = buf_alloc(sbytes);
					if (!k->sbuf || !k->rbuf) {
						FAIL(rk, "no memory for the buffers");
						return NULL;
					}
					if (api_reg(&rk->a, k->sc, k->sbuf, sbytes, &k->smr) ||
					    api_reg(&rk->a, k->rc, k->rbuf, sbytes, &k->rmr)) {
						FAIL(rk, "regMr: %s", last_warn);
						return NULL;
					}
					atomic_store_explicit(&k->ready, 1, memory_order_release);
				}
				left += !atomic_load(&k->ready);
			}
		if (left && now_ns() - t0 > 60 * SEC) {
			FAIL(rk, "connect/accept: %d connections still not made after 60 s", left);
			return NULL;
		}
		if (left)
			sched_yield();
	} while (left);
	/* the service thread waits for the traffic, then closes, as NCCL does at the end */
	while (!atomic_load(&rk->traffic_done))
		usleep(1000);
	return NULL;
}

static int post_recv(struct rank *rk, int peer, int c, struct conn *k)
{
	const struct run *R = &rk->w->R;
	void *bufs[NMAX], *mhs[NMAX], *req;
	size_t sizes[NMAX];
	int tags[NMAX], n, i, rc, slot;

	if (k->rj >= R->nmsgs || k->rtail - k->rhead >= R->inflight)
		return 0;
	n = group_n(k->rg);
	if (n > R->nmsgs - k->rj)
		n = R->nmsgs - k->rj;
	slot = k->rtail % R->inflight;
	for (i = 0; i < n; i++) {
		/* buffer i takes message i of the group, or n-1-i when the tags are reversed */
		int m = R->reverse_tags && (k->rg & 1) ? n - 1 - i : i;

		bufs[i] = k->rbuf + ((size_t)slot * NMAX + (size_t)i) * slot_bytes(R);
		sizes[i] = msg_size(R, peer, c, k->rj + m) + (size_t)((k->rj + m) * 37 % 128);
		tags[i] = R->reverse_tags ? peer * 16 + m : peer;
		mhs[i] = k->rmr;
	}
	/* NCCL's optional-completion mark on every other receive, a stale value otherwise */
	req = (k->rg & 1) ? (void *)(uintptr_t)0x1 : (void *)(uintptr_t)0xdead;
	rc = api_irecv(&rk->a, k->rc, n, bufs, sizes, tags, mhs, &req);
	if (rc) {
		FAIL(rk, "irecv: %d (%s)", rc, last_warn);
		return -1;
	}
	if (!req)
		return 0;
	if (req == (void *)(uintptr_t)0x1 || req == (void *)(uintptr_t)0xdead) {
		FAIL(rk, "irecv left *request as it was");
		return -1;
	}
	k->rreq[k->rtail % R->inflight] = req;
	k->rreq_g[k->rtail % R->inflight] = k->rg;
	k->rreq_j[k->rtail % R->inflight] = k->rj;
	k->rtail++;
	k->rj += n;
	k->rg++;
	return 1;
}

static int test_recv(struct rank *rk, int peer, int c, struct conn *k)
{
	const struct run *R = &rk->w->R;
	int sizes[NMAX] = { 0 }, done = 0, rc, n, i, g, j0, slot;

	if (k->rhead == k->rtail)
		return 0;
	slot = k->rhead % R->inflight;
	rc = api_test(&rk->a, k->rreq[slot], &done, sizes);
	if (rc) {
		FAIL(rk, "test of a receive: %d (%s)", rc, last_warn);
		return -1;
	}
	if (!done)
		return 0;
	g = k->rreq_g[slot];
	j0 = k->rreq_j[slot];
	n = group_n(g);
	if (n > R->nmsgs - j0)
		n = R->nmsgs - j0;
	for (i = 0; i < n; i++) {
		int m = R->reverse_tags && (g & 1) ? n - 1 - i : i;
		size_t want = msg_size(R, peer, c, j0 + m), b;
		const uint8_t *p = k->rbuf + ((size_t)slot * NMAX + (size_t)i) * slot_bytes(R);

		if ((size_t)sizes[i] != want) {
			FAIL(rk, "from %d comm %d msg %d: %d bytes, want %zu", peer, c, j0 + m,
			     sizes[i], want);
			return -1;
		}
		for (b = 0; b < want; b++)
			if (p[b] != msg_byte(peer, c, j0 + m, b)) {
				FAIL(rk, "from %d comm %d msg %d: byte %zu is %02x, want %02x", peer, c,
				     j0 + m, b, p[b], msg_byte(peer, c, j0 + m, b));
				return -1;
			}
		for (b = 0; b < want; b++)
			k->digest = (k->digest ^ p[b]) * 0x100000001b3ull;
		k->digest = (k->digest ^ want) * 0x100000001b3ull;
	}
	/* the proxy tells the plugin when the GPU consumed a receive, after test said done */
	if (api_consumed(&rk->a, k->rc, n, k->rreq[slot])) {
		FAIL(rk, "irecvConsumed: %s", last_warn);
		return -1;
	}
	k->recvd += n;
	k->rhead++;
	return 1;
}

static int post_send(struct rank *rk, int peer, int c, struct conn *k)
{
	const struct run *R = &rk->w->R;
	int cap = R->inflight * NMAX, rc, slot, tag, g = 0, j0 = 0;
	size_t size, b;
	uint8_t *p;
	void *req = (void *)(uintptr_t)0xbad;

	if (k->sj >= R->nmsgs || k->stail - k->shead >= cap)
		return 0;
	slot = k->stail % cap;
	size = msg_size(R, rk->r, c, k->sj);
	p = k->sbuf + (size_t)slot * slot_bytes(R);
	for (b = 0; b < size; b++)
		p[b] = msg_byte(rk->r, c, k->sj, b);
	/* the tag: the sender's rank, or its position in its group when tags pick buffers */
	while (j0 + group_n(g) <= k->sj) {
		j0 += group_n(g);
		g++;
	}
	tag = R->reverse_tags ? rk->r * 16 + (k->sj - j0) : rk->r;
	rc = api_isend(&rk->a, k->sc, p, size, tag, k->smr, &req);
	if (rc) {
		FAIL(rk, "isend: %d (%s)", rc, last_warn);
		return -1;
	}
	if (!req)
		return 0;	/* no clear-to-send yet: later */
	k->sreq[slot] = req;
	k->sreq_j[slot] = k->sj;
	k->stail++;
	k->sj++;
	return 1;
}

static int test_send(struct rank *rk, int c, struct conn *k)
{
	const struct run *R = &rk->w->R;
	int cap = R->inflight * NMAX, sizes[NMAX] = { -1 }, done = 0, rc, slot;

	if (k->shead == k->stail)
		return 0;
	slot = k->shead % cap;
	rc = api_test(&rk->a, k->sreq[slot], &done, sizes);
	if (rc) {
		FAIL(rk, "test of a send: %d (%s)", rc, last_warn);
		return -1;
	}
	if (!done)
		return 0;
	if ((size_t)sizes[0] != msg_size(R, rk->r, c, k->sreq_j[slot])) {
		FAIL(rk, "send of msg %d reports %d bytes", k->sreq_j[slot], sizes[0]);
		return -1;
	}
	k->shead++;
	return 1;
}

static void *progress(void *p)
{
	struct rank *rk = p;
	const struct run *R = &rk->w->R;
	uint64_t t0 = now_ns();
	int peer, c, busy, moved, a, b, d, e;

	for (;;) {
		busy = 0;
		moved = 0;
		for (peer = 0; peer < R->nranks; peer++)
			for (c = 0; peer != rk->r && c < R->ncomms; c++) {
				struct conn *k = &rk->conn[peer][c];

				if (!atomic_load_explicit(&k->ready, memory_order_acquire)) {
					busy = 1;
					continue;
				}
				a = post_recv(rk, peer, c, k);
				b = a < 0 ? 0 : post_send(rk, peer, c, k);
				d = a < 0 || b < 0 ? 0 : test_recv(rk, peer, c, k);
				e = a < 0 || b < 0 || d < 0 ? 0 : test_send(rk, c, k);
				if (a < 0 || b < 0 || d < 0 || e < 0)
					goto out;
				moved |= a | b | d | e;
				busy |= k->recvd < R->nmsgs || k->shead < R->nmsgs;
			}
		if (rk->err || !busy)
			break;
		if (!moved)
			sched_yield();	/* nothing moved in this pass: let the NICs' thread run */
		if (now_ns() - t0 > 120 * SEC) {
			FAIL(rk, "traffic still running after 120 s");
			break;
		}
	}
out:
	atomic_store(&rk->traffic_done, 1);
	return NULL;
}

static void rank_close(struct rank *rk)
{
	const struct run *R = &rk->w->R;
	int peer, c;

	for (peer = 0; peer < R->nranks; peer++)
		for (c = 0; peer != rk->r && c < R->ncomms; c++) {
			struct conn *k = &rk->conn[peer][c];

			if (k->smr && api_dereg(&rk->a, k->sc, k->smr))
				FAIL(rk, "deregMr: %s", last_warn);
			if (k->rmr && api_dereg(&rk->a, k->rc, k->rmr))
				FAIL(rk, "deregMr: %s", last_warn);
			if (k->sc && api_close(&rk->a, 1, k->sc))
				FAIL(rk, "closeSend: %s", last_warn);
			if (k->rc && api_close(&rk->a, 2, k->rc))
				FAIL(rk, "closeRecv: %s", last_warn);
			if (k->lc && api_close(&rk->a, 0, k->lc))
				FAIL(rk, "closeListen: %s", last_warn);
			buf_free(k->sbuf);
			buf_free(k->rbuf);
		}
}

/* one message from rank @from to rank @to on comm 0, both living: 0 or -1 */
static int one_more(struct rank *rk, int from, int to)
{
	struct conn *k = &rk->conn[rk->r == from ? to : from][0];
	void *req = NULL, *bufs[1], *mhs[1];
	size_t sz[1] = { 256 };
	int tags[1] = { from }, sizes[NMAX] = { 0 }, done = 0, rc, i;
	uint64_t t0 = now_ns();

	if (rk->r == from) {
		for (i = 0; i < 200; i++)
			k->sbuf[i] = (uint8_t)(i ^ from);
		do
			rc = api_isend(&rk->a, k->sc, k->sbuf, 200, from, k->smr, &req);
		while (!rc && !req && now_ns() - t0 < 20 * SEC);
	} else {
		bufs[0] = k->rbuf;
		mhs[0] = k->rmr;
		rc = api_irecv(&rk->a, k->rc, 1, bufs, sz, tags, mhs, &req);
	}
	if (rc || !req)
		return -1;
	while (!done && now_ns() - t0 < 20 * SEC)
		if (api_test(&rk->a, req, &done, sizes))
			return -1;
	if (!done || sizes[0] != 200)
		return -1;
	for (i = 0; rk->r == to && i < 200; i++)
		if (k->rbuf[i] != (uint8_t)(i ^ from))
			return -1;
	return 0;
}

/*
 * The last rank dies after the traffic (kill_last). A survivor learns it when it next
 * sends: its receives post clear-to-sends, and one meeting the dead peer fails the
 * connection with a system error and one WARN line (a receive whose clear-to-send the
 * peer took before it died waits for data, as with any network plugin: the caller's
 * deadline covers that). The survivors' connections carry on.
 */
static void after_kill(struct world *w, struct rank *rk)
{
	const struct run *R = &w->R;
	int dead = R->nranks - 1, rc = 0, done, w0, sizes[NMAX], nq = 0, i;
	struct conn *k;
	void *req[16], *bufs[1], *mhs[1];
	size_t sz[1] = { 64 };
	int tags[1] = { dead };
	uint64_t t0, last = 0;

	if (rk->r == dead) {
		fflush(NULL);
		atomic_store(&w->dead, 1);
		_exit(0);	/* no close, no finalize: as if killed */
	}
	while (!atomic_load(&w->dead))
		usleep(1000);
	w0 = nwarn;
	k = &rk->conn[dead][0];
	t0 = now_ns();
	while (!rc && now_ns() - t0 < 60 * SEC) {
		if (nq < 16 && now_ns() - last > 50000000ull) {
			bufs[0] = k->rbuf + (size_t)nq * 64;
			mhs[0] = k->rmr;
			req[nq] = NULL;
			rc = api_irecv(&rk->a, k->rc, 1, bufs, sz, tags, mhs, &req[nq]);
			nq += !rc && req[nq];
			last = now_ns();
		}
		for (i = 0; !rc && i < nq; i++) {
			done = 0;
			if (req[i])
				rc = api_test(&rk->a, req[i], &done, sizes);
			if (done)
				req[i] = NULL;
		}
	}
	if (rc != DVX_NCCL_SYSTEM_ERROR || nwarn < w0 + 1) {
		FAIL(rk, "receives from the dead rank: %d after %.1f s (%s)", rc,
		     (double)(now_ns() - t0) / 1e9, last_warn);
		return;
	}
	/* the survivors: one message each way on comm 0 */
	if (R->nranks > 2 && rk->r < 2 &&
	    (one_more(rk, 0, 1) || one_more(rk, 1, 0)))
		FAIL(rk, "the survivors' connection after the kill: %s", last_warn);
}

/* one rank: its two threads; the context made and finished around them */
static void rank_run(struct world *w, struct rank *rk, int r, int init)
{
	pthread_t ts, tp;
	int peer, c;

	rk->w = w;
	rk->r = r;
	if (init) {
		if (api_open(&rk->a, w->R.version) || api_init(&rk->a, &rk->ctx) ||
		    api_devices(&rk->a, &rk->ndev) || rk->ndev < 1) {
			FAIL(rk, "init: %s", last_warn);
			goto out;
		}
	}
	pthread_create(&ts, NULL, service, rk);
	pthread_create(&tp, NULL, progress, rk);
	pthread_join(tp, NULL);
	pthread_join(ts, NULL);
	for (peer = 0; peer < w->R.nranks; peer++)
		for (c = 0; peer != r && c < w->R.ncomms; c++)
			w->digest[r] += mix(rk->conn[peer][c].digest + (uint64_t)peer * 977 + (uint64_t)c);
	/* every rank's traffic is in before anyone closes (NCCL's ranks finish a collective
	 * before they destroy their communicators) */
	pthread_barrier_wait(&w->bar);
	if (w->R.kill_last && !rk->err)
		after_kill(w, rk);
	rank_close(rk);
	if (init && api_finalize(&rk->a, rk->ctx))
		FAIL(rk, "finalize: %s", last_warn);
out:
	w->fail[r] = rk->err;
	snprintf(w->why[r], sizeof(w->why[r]), "%s", rk->why);
}

struct thr_arg {
	struct world *w;
	struct rank *rk;
	int r;
	int init;
};

static void *rank_thread(void *p)
{
	struct thr_arg *t = p;

	rank_run(t->w, t->rk, t->r, t->init);
	return NULL;
}

static struct world *world_new(const struct run *R)
{
	struct world *w = mmap(NULL, sizeof(*w), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			       -1, 0);
	pthread_barrierattr_t ba;

	if (w == MAP_FAILED)
		return NULL;
	memset(w, 0, sizeof(*w));
	w->R = *R;
	pthread_barrierattr_init(&ba);
	pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
	pthread_barrier_init(&w->bar, &ba, (unsigned)R->nranks);
	return w;
}

static void set_env(const struct run *R)
{
	int i;

	for (i = 0; i < 8; i++)	/* entries may be left NULL between others */
		if (R->env[i])
			putenv((char *)R->env[i]);
	reg_type = R->cuda ? DVX_NCCL_PTR_CUDA : DVX_NCCL_PTR_HOST;
}

/* ranks as threads of this process: v11 gives each its own instance; v8 has one per
 * process, which every rank uses */
static int world_threads(struct world *w)
{
	static struct rank rk[MAX_RANKS];
	struct thr_arg ta[MAX_RANKS];
	pthread_t th[MAX_RANKS];
	struct api a;
	void *ctx = NULL;
	int r, n = w->R.nranks, ndev = 0;

	memset(rk, 0, sizeof(rk));
	if (w->R.version == 8) {
		if (api_open(&a, 8) || api_init(&a, &ctx) || api_devices(&a, &ndev)) {
			fprintf(stderr, "v8 init: %s\n", last_warn);
			return 1;
		}
		for (r = 0; r < n; r++) {
			rk[r].a = a;
			rk[r].ndev = ndev;
		}
	}
	for (r = 0; r < n; r++) {
		ta[r] = (struct thr_arg){ w, &rk[r], r, w->R.version != 8 };
		pthread_create(&th[r], NULL, rank_thread, &ta[r]);
	}
	for (r = 0; r < n; r++)
		pthread_join(th[r], NULL);
	if (w->R.version == 8)
		dlclose(a.dl);	/* the destructor finishes the process-wide instance */
	return 0;
}

static int proc_rank(int r, int n, void *arg)
{
	static struct rank rk;
	struct world *w = arg;
	char rank[32], size[32];

	snprintf(rank, sizeof(rank), "DVX_NET_RANK=%d", r);
	snprintf(size, sizeof(size), "DVX_NET_NRANKS=%d", n);
	putenv(rank);
	putenv(size);
	rank_run(w, &rk, r, 1);
	if (rk.a.dl)
		dlclose(rk.a.dl);
	fflush(NULL);
	exit(w->fail[r] ? 1 : 0);	/* exit, not _exit: LeakSanitizer checks the rank */
}

/* run @R in a child process (the plugin's environment is read once per process) and
 * return its ranks' digests */
static void run_case(const struct run *R, uint64_t *digest)
{
	struct world *w = world_new(R);
	pid_t pid;
	int st, r;

	assert_non_null(w);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		char dir[64], wire[96];

		set_env(R);
		if (R->procs) {
			snprintf(dir, sizeof(dir), "/tmp/dvx-nccl-test.%d", (int)getpid());
			mkdir(dir, 0700);
			snprintf(wire, sizeof(wire), "DVX_NET_WIRE=unix:%s", dir);
			if (R->ondemand)
				snprintf(wire, sizeof(wire), "DVX_NET_WIRE=ondemand%s",
					 R->ondemand == 2 ? ":tcp:127.0.0.1" : "");
			putenv(wire);
			st = dvx_test_fork_all(R->nranks, proc_rank, w);
			unlink(dir);
			rmdir(dir);
			_exit(st);
		}
		exit(world_threads(w));
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	for (r = 0; r < R->nranks; r++)
		if (w->fail[r])
			fprintf(stderr, "rank %d: %s\n", r, w->why[r]);
	if (!WIFEXITED(st))
		fprintf(stderr, "case killed by signal %d\n", WTERMSIG(st));
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	for (r = 0; r < R->nranks; r++) {
		assert_int_equal(w->fail[r], 0);
		if (digest)
			digest[r] = w->digest[r];
	}
	munmap(w, sizeof(*w));
}

/* ------------------------------------------------------------------------------
 * Traffic cases
 */
static const struct run base = {
	.nranks = 2, .ncomms = 1, .nmsgs = 96, .inflight = 32, .version = 11,
	.max_size = 4096, .reverse_tags = 0,
};

static void digests_equal(const uint64_t *a, const uint64_t *b, int n)
{
	int r;

	for (r = 0; r < n; r++)
		assert_true(a[r] == b[r]);
}

/* one line of a telemetry file: a whole record, however many comms it lists (the JSON
 * helpers run in the test's own thread) */
static char json_line[1 << 20];

/* the sum of "key":N over every line of @path (of every element, for "key":[N,...]) */
static long json_sum(const char *path, const char *key)
{
	char pat[64];
	long sum = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	while (fgets(json_line, sizeof(json_line), f)) {
		const char *p = json_line;

		while ((p = strstr(p, pat))) {
			char *e;

			p += strlen(pat);
			p += *p == '[';
			for (;;) {
				sum += strtol(p, &e, 10);
				if (*e != ',' || (p[-1] != '[' && p[-1] != ','))
					break;
				p = e + 1;
			}
		}
	}
	fclose(f);
	return sum;
}

/* the records in @path, each one whole line ({"plugin":"dvx" ... ]}), or -1 when a line
 * is not one record (two writers' records mixed) */
static int json_records(const char *path)
{
	FILE *f = fopen(path, "r");
	int n = 0;

	if (!f)
		return -1;
	while (fgets(json_line, sizeof(json_line), f)) {
		size_t l = strlen(json_line);

		if (strncmp(json_line, "{\"plugin\":\"dvx\",", 15) || l < 4 ||
		    strcmp(json_line + l - 3, "]}\n") || strstr(json_line + 1, "{\"plugin\"")) {
			n = -1;
			break;
		}
		n++;
	}
	fclose(f);
	return n;
}

/* "key":N of the first line of @path that has it, or -1 */
static long json_first(const char *path, const char *key)
{
	char pat[64];
	const char *p = NULL;
	FILE *f = fopen(path, "r");
	long v = -1;

	if (!f)
		return -1;
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	while (!p && fgets(json_line, sizeof(json_line), f))
		if ((p = strstr(json_line, pat)))
			v = strtol(p + strlen(pat), NULL, 10);
	fclose(f);
	return v;
}

/* @R with DVX_NET_STATS at @path (env slot @slot) and @groups in slot 0 */
static void stats_case(struct run *R, const char *groups, int slot, uint64_t *digest, char *path,
		       size_t len)
{
	static char env[160];

	snprintf(path, len, "/tmp/dvx-nccl-stats.%d.json", (int)getpid());
	unlink(path);
	snprintf(env, sizeof(env), "DVX_NET_STATS=%s", path);
	R->env[0] = groups;
	R->env[slot] = env;
	run_case(R, digest);
}

static void test_v11_threads_1_comm(void **state)
{
	struct run R = base;
	uint64_t d[MAX_RANKS];

	R.max_size = 256 * 1024;
	R.inflight = 8;
	R.nmsgs = 64;
	run_case(&R, d);
}

/* 16 comms per pair, 32 requests in flight, grouped receives with tags that pick the
 * buffer: the same digests without sharing, with 4 groups, and with 2 groups of deeper
 * QPs and 2 QPs per connection */
static void test_v11_threads_sharing(void **state)
{
	struct run R = base;
	uint64_t off[MAX_RANKS], on[MAX_RANKS], on2[MAX_RANKS];

	R.ncomms = 16;
	R.nmsgs = 64;
	R.reverse_tags = 1;
	R.env[0] = "DVX_NET_COMM_NGROUPS=0";
	run_case(&R, off);
	R.env[0] = "DVX_NET_COMM_NGROUPS=4";
	run_case(&R, on);
	digests_equal(off, on, R.nranks);
	R.env[0] = "DVX_NET_COMM_NGROUPS=2";
	R.env[1] = "DVX_NET_QP_DEPTH_MULT=4";
	R.env[2] = "DVX_NET_QPS_PER_CONN=2";
	run_case(&R, on2);
	digests_equal(off, on2, R.nranks);
}

/* two software NICs per process: comms alternate between them */
static void test_v11_threads_2_nics(void **state)
{
	struct run R = base;
	uint64_t one[MAX_RANKS], two[MAX_RANKS];

	R.ncomms = 4;
	run_case(&R, one);
	R.env[0] = "DVX_NET_SIM=2";
	R.env[1] = "DVX_NET_COMM_NGROUPS=2";
	run_case(&R, two);
	digests_equal(one, two, R.nranks);
}

/* the v8 table (int sizes, no instance: both ranks share the process's) */
static void test_v8_threads(void **state)
{
	struct run R = base, R11 = base;
	uint64_t d8[MAX_RANKS], d11[MAX_RANKS];

	R.version = 8;
	R.ncomms = 4;
	R11.ncomms = 4;
	run_case(&R, d8);
	run_case(&R11, d11);
	digests_equal(d8, d11, R.nranks);
	R.env[0] = "DVX_NET_COMM_NGROUPS=2";
	run_case(&R, d8);
	digests_equal(d8, d11, R.nranks);
}

/* the same traffic with ranks as threads, then as forked processes with sharing off
 * and on: every run gives the threads' bytes */
static void procs_digests(struct run *R)
{
	uint64_t thr[MAX_RANKS], off[MAX_RANKS], on[MAX_RANKS];

	run_case(R, thr);
	R->procs = 1;
#ifdef __SANITIZE_THREAD__
	/* TSan slows the processes tenfold on a shared machine: a longer transport timer */
	R->env[1] = "DVX_NET_WIRE_RETRY_MS=5000";
#endif
	run_case(R, off);
	digests_equal(thr, off, R->nranks);
	R->env[0] = "DVX_NET_COMM_NGROUPS=2";
	run_case(R, on);
	digests_equal(thr, on, R->nranks);
}

/* ranks as forked processes joined by the software NIC's wire (a mesh today) */
static void test_v11_procs(void **state)
{
	struct run R = base;

	R.ncomms = 4;
	R.nmsgs = 48;
	R.reverse_tags = 1;
	procs_digests(&R);
}

/*
 * The CTS receiver offload (DVX_NET_CTS_OFFLOAD=1, docs/msg.md): messages up to 64 KiB,
 * eager (up to 4096 and up to 1024 bytes) and by rendezvous, as threads with one and two
 * NICs and sharing on, and as processes on the wire with sharing off and on; every
 * digest the same as with the FIFO clear-to-send
 */
static void test_v11_cts_offload(void **state)
{
	struct run R = base;
	uint64_t ref[MAX_RANKS], got[MAX_RANKS];

	R.ncomms = 4;
	R.nmsgs = 64;
	R.reverse_tags = 1;
	R.max_size = 65536;
	run_case(&R, ref);
	R.env[2] = "DVX_NET_CTS_OFFLOAD=1";
	run_case(&R, got);
	digests_equal(ref, got, R.nranks);
	R.env[3] = "DVX_NET_EAGER_BYTES=1024";
	run_case(&R, got);
	digests_equal(ref, got, R.nranks);
	R.env[0] = "DVX_NET_COMM_NGROUPS=2";
	R.env[4] = "DVX_NET_SIM=2";
	run_case(&R, got);
	digests_equal(ref, got, R.nranks);
	R.env[0] = NULL;
	R.env[4] = NULL;
	procs_digests(&R);
}

/* ranks as forked processes that find each other through the handles alone: each
 * process's wire listens and joins the listener's process named by a handle on its
 * first connect (DVX_NET_WIRE=ondemand); 3 ranks, every pair both ways, sharing off and
 * on, the same bytes as ranks that are threads */
static void test_v11_procs_ondemand(void **state)
{
	struct run R = base;
	uint64_t thr[MAX_RANKS], got[MAX_RANKS], big[MAX_RANKS];
	char path[128];

	R.nranks = 3;
	R.ncomms = 2;
	R.nmsgs = 32;
	R.ondemand = 1;	/* read by process runs only */
	procs_digests(&R);
	/* on one host the joins bring shared-memory rings, one with each of the 2 others:
	 * the telemetry's "wire" counts those still up when the process writes it, at its
	 * finalize before its wire goes down, so the first record written has both (later
	 * ones may have lost peers that ended); over TCP none */
	R.env[0] = NULL;
	R.procs = 0;
	run_case(&R, thr);
	R.procs = 1;
	stats_case(&R, "DVX_NET_COMM_NGROUPS=0", 2, got, path, sizeof(path));
	digests_equal(thr, got, R.nranks);
	assert_int_equal(json_first(path, "rings"), 2);
	assert_true(json_sum(path, "frames_rx") > 0);
	/* where the NICs' time went: passes and their time, socket polls (one round in
	 * 16 with rings) */
	assert_true(json_sum(path, "passes") > 0 && json_sum(path, "pass_ns") > 0);
	assert_true(json_sum(path, "polls") > 0 && json_sum(path, "polls") < json_sum(path, "passes"));
	R.env[3] = "DVX_NET_WIRE_RING_KB=0";	/* one host, no ring: the abstract sockets */
	stats_case(&R, "DVX_NET_COMM_NGROUPS=0", 2, got, path, sizeof(path));
	digests_equal(thr, got, R.nranks);
	assert_int_equal(json_sum(path, "rings"), 0);
	assert_true(json_sum(path, "frames_rx") > 0);
	/* messages up to 256 KiB: through the default ring, their WRITEs placed as they
	 * arrive (cut-through) where the receiver catches them arriving, and with that
	 * off (none placed so); then a small ring (64 KiB): frames stream through it */
	R.env[3] = NULL;
	R.max_size = 256 * 1024;
	R.procs = 0;
	run_case(&R, big);
	R.procs = 1;
	stats_case(&R, "DVX_NET_COMM_NGROUPS=0", 2, got, path, sizeof(path));
	digests_equal(big, got, R.nranks);
	R.env[3] = "DVX_NET_WIRE_STREAM_KB=0";
	/* more processes on this host than CPUs: the progress thread does not spin */
	R.env[5] = "LOCAL_WORLD_SIZE=4096";
	stats_case(&R, "DVX_NET_COMM_NGROUPS=0", 2, got, path, sizeof(path));
	digests_equal(big, got, R.nranks);
	assert_int_equal(json_first(path, "spins"), 64);
	/* 64 idle turns: the progress threads slept between the messages, and say so */
	assert_true(json_sum(path, "sleeps") > 0 && json_sum(path, "slept_ns") > 0);
	/* requests went on the wire, never more than the window (32) of one QP at once */
	assert_true(json_first(path, "window_max") >= 1 && json_first(path, "window_max") <= 32);
	R.env[5] = NULL;
	assert_int_equal(json_first(path, "streamed"), 0);	/* written, and none */
	assert_int_equal(json_sum(path, "streamed"), 0);
	assert_int_equal(json_sum(path, "stream_late"), 0);
	R.env[3] = "DVX_NET_WIRE_RING_KB=64";
	stats_case(&R, "DVX_NET_COMM_NGROUPS=0", 2, got, path, sizeof(path));
	digests_equal(big, got, R.nranks);
	assert_int_equal(json_first(path, "rings"), 2);
	R.max_size = base.max_size;
	R.env[3] = NULL;
	R.ondemand = 2;	/* ondemand:tcp:127.0.0.1 */
	stats_case(&R, "DVX_NET_COMM_NGROUPS=0", 2, got, path, sizeof(path));
	digests_equal(thr, got, R.nranks);
	assert_int_equal(json_sum(path, "rings"), 0);
	assert_true(json_sum(path, "frames_rx") > 0);
	unlink(path);
}

/* 3 ranks as processes, the last one killed after the traffic: the comms to it fail,
 * the others carry on */
static void test_v11_procs_killed(void **state)
{
	struct run R = base;

#ifdef __SANITIZE_THREAD__
	/* under TSan the wire's passes are far apart, and its transport timers do not count
	 * such gaps (docs/sim-wire.md): a dead peer is not found in bounded time there.
	 * make sanitize runs the process suites under ASan only, as for msg-procs-test */
	skip();
#endif
	R.nranks = 3;
	R.ncomms = 2;
	R.nmsgs = 16;
	R.procs = 1;
	R.kill_last = 1;
	R.env[0] = "DVX_NET_TIMEOUT_MS=3000";
	run_case(&R, NULL);
}

/* 4 ranks as threads, every pair connected both ways */
static void test_v11_4_ranks(void **state)
{
	struct run R = base;
	uint64_t off[MAX_RANKS], on[MAX_RANKS];

	R.nranks = 4;
	R.ncomms = 2;
	R.nmsgs = 32;
	run_case(&R, off);
	R.env[0] = "DVX_NET_COMM_NGROUPS=1";
	run_case(&R, on);
	digests_equal(off, on, R.nranks);
}

/* ------------------------------------------------------------------------------
 * Telemetry (DVX_NET_STATS) and the pool
 */

/* sharing shows in the telemetry: private sets only without it, primaries and
 * secondaries with it, the same bytes either way */
static void test_stats_sharing(void **state)
{
	struct run R = base;
	uint64_t off[MAX_RANKS], on[MAX_RANKS];
	char path[128];

	R.ncomms = 8;
	R.nmsgs = 32;
	stats_case(&R, "DVX_NET_COMM_NGROUPS=0", 1, off, path, sizeof(path));
	/* both ranks' instances appended to one file at once, each record whole (over 8
	 * KiB each: a stream's buffer wrote them in pieces that mixed, once) */
	assert_int_equal(json_records(path), R.nranks);
	assert_int_equal(json_sum(path, "primaries"), 0);
	assert_int_equal(json_sum(path, "secondaries"), 0);
	assert_int_equal(json_sum(path, "privates"), 2 * 2 * 8);	/* both ends of 16 */
	assert_int_equal(json_sum(path, "errors"), 0);	/* per comm and per QP */
	assert_true(json_sum(path, "completed") > 0);
	/* per QP: the send side's WQEs and the receive side's receives, all completed */
	assert_true(json_sum(path, "sq_posted") > 0);
	assert_true(json_sum(path, "rq_done") > 0);
	assert_true(json_sum(path, "cqes") > 0);
	/* where the messages' time went: every completion in one bin of the flight times,
	 * their sum no more than the processes' time, posts held as long as counted */
	assert_int_equal(json_sum(path, "flight_us_log2"), json_sum(path, "completed"));
	assert_true(json_sum(path, "flight_ns") > 0);
	assert_true(json_sum(path, "flight_max_ns") > 0);
	assert_true(json_sum(path, "held") <= json_sum(path, "waits"));
	assert_true(!json_sum(path, "held") == !json_sum(path, "held_ns"));
	stats_case(&R, "DVX_NET_COMM_NGROUPS=2", 1, on, path, sizeof(path));
	assert_true(json_sum(path, "primaries") > 0);
	assert_true(json_sum(path, "secondaries") > 0);
	assert_int_equal(json_sum(path, "fallbacks"), 0);
	digests_equal(off, on, R.nranks);
	unlink(path);
}

/* GPU buffers on software NICs (DVX_NET_GDR=host: the plugin's whole NCCL_PTR_CUDA path
 * over host memory, every byte the NIC moves for them through the software dma-bufs'
 * copies): the same bytes as host buffers, threads and processes, sharing off and on;
 * the copies are counted and none failed */
static void test_gpu_buffers(void **state)
{
	struct run R = base;
	uint64_t host[MAX_RANKS], gpu[MAX_RANKS];
	char path[128];
	int m, k;

	R.ncomms = 4;
	R.nmsgs = 48;
	R.max_size = 64 * 1024;
	R.env[2] = "DVX_NET_GDR=host";
	stats_case(&R, "DVX_NET_COMM_NGROUPS=0", 1, host, path, sizeof(path));
	assert_int_equal(json_sum(path, "gdr_copies"), 0);	/* host buffers: none */
	/* memcpy as the engine, then the process engine (buffers in memfds, every copy made
	 * by dvx-copier --sim): threads and processes, sharing off and on */
	R.cuda = 1;
	for (m = 0; m < 2; m++)
		for (k = 0; k < 4; k++) {
			R.env[2] = m ? "DVX_NET_GDR=hostproc" : "DVX_NET_GDR=host";
			R.procs = k >> 1;
			stats_case(&R, k & 1 ? "DVX_NET_COMM_NGROUPS=2" : "DVX_NET_COMM_NGROUPS=0", 1,
				   gpu, path, sizeof(path));
			assert_true(json_sum(path, "gdr_copies") > 0);
			assert_int_equal(json_sum(path, "gdr_failed"), 0);
			assert_int_equal(json_sum(path, "errors"), 0);
			digests_equal(host, gpu, R.nranks);
		}
	unlink(path);
}

/* a pool of one shared set: the other groups' connections fall back to private QPs,
 * both ends agreeing, and the traffic is the same */
static void test_pool_full_fallback(void **state)
{
	struct run R = base;
	uint64_t off[MAX_RANKS], full[MAX_RANKS];
	char path[128];

	R.ncomms = 8;
	R.nmsgs = 32;
	run_case(&R, off);
	R.env[1] = "DVX_NET_SHARED_SETS=1";
	stats_case(&R, "DVX_NET_COMM_NGROUPS=4", 2, full, path, sizeof(path));
	assert_true(json_sum(path, "fallbacks") > 0);
	/* with traffic both ways each process's one set is proposed to the other at once;
	 * the handshake's tie-break (docs/msg.md "Connecting") gives one of them to both */
	assert_true(json_sum(path, "primaries") > 0);
	digests_equal(off, full, R.nranks);
	unlink(path);
}

/* ------------------------------------------------------------------------------
 * Faults, in one thread: two instances of one process
 */
struct pair {
	struct api a;
	void *ca, *cb;
	void *lc, *sc, *rc;
	uint8_t h[DVX_NCCL_HANDLE_BYTES];
};

/* connect @cb to a fresh listen comm of @ca with handle bytes @h (changed by the
 * caller or not), driving accept meanwhile: the connect's result */
static int try_connect(struct pair *p, const uint8_t *h, void **sc, void **rc)
{
	uint8_t buf[DVX_NCCL_HANDLE_BYTES];
	uint64_t t0 = now_ns();
	int err;

	memcpy(buf, h, sizeof(buf));
	*sc = *rc = NULL;
	while (now_ns() - t0 < 20 * SEC) {
		err = p->a.t11->connect(p->cb, 0, buf, sc, NULL);
		if (err)
			return err;
		if (!*rc && p->a.t11->accept(p->lc, rc, NULL))
			return -1;
		if (*sc && *rc)
			return 0;
	}
	return -2;
}

static int pair_up(struct pair *p)
{
	memset(p, 0, sizeof(*p));
	if (api_open(&p->a, 11) || p->a.t11->init(&p->ca, 1, NULL, logger, NULL) ||
	    p->a.t11->init(&p->cb, 2, NULL, logger, NULL))
		return -1;
	return p->a.t11->listen(p->ca, 0, p->h, &p->lc);
}

static int fault_handles(void)
{
	struct pair p;
	uint8_t bad[DVX_NCCL_HANDLE_BYTES];
	char stats[128];
	void *sc, *rc;
	int w0, err;

	/* the refusals of the plugin's part are counted (the telemetry's handles_refused) */
	snprintf(stats, sizeof(stats), "/tmp/dvx-nccl-handles.%d.json", (int)getpid());
	unlink(stats);
	setenv("DVX_NET_STATS", stats, 1);
	if (pair_up(&p))
		return 1;
	/* not a dvx handle */
	memcpy(bad, p.h, sizeof(bad));
	bad[104] ^= 0x40;
	w0 = nwarn;
	err = try_connect(&p, bad, &sc, &rc);
	if (err != DVX_NCCL_INTERNAL_ERROR || nwarn != w0 + 1 || !strstr(last_warn, "not a dvx"))
		return fprintf(stderr, "bad magic: %d, %s\n", err, last_warn), 2;
	/* a NIC of another process, with no wire between */
	memcpy(bad, p.h, sizeof(bad));
	bad[120] ^= 0x5a;
	err = try_connect(&p, bad, &sc, &rc);
	if (err != DVX_NCCL_SYSTEM_ERROR || !strstr(last_warn, "another process"))
		return fprintf(stderr, "foreign NIC: %d, %s\n", err, last_warn), 3;
	/* the messaging layer's part: a wrong cookie, then garbage */
	memcpy(bad, p.h, sizeof(bad));
	bad[16] ^= 0xff;
	err = try_connect(&p, bad, &sc, &rc);
	if (err != DVX_NCCL_INTERNAL_ERROR)
		return fprintf(stderr, "bad cookie: %d, %s\n", err, last_warn), 4;
	memcpy(bad, p.h, sizeof(bad));
	bad[0] ^= 0x01;
	err = try_connect(&p, bad, &sc, &rc);
	if (err != DVX_NCCL_INTERNAL_ERROR)
		return fprintf(stderr, "bad inner magic: %d, %s\n", err, last_warn), 5;
	/* nothing changed: the good handle still connects */
	err = try_connect(&p, p.h, &sc, &rc);
	if (err || !sc || !rc)
		return fprintf(stderr, "good handle: %d, %s\n", err, last_warn), 6;
	if (p.a.t11->close_send(sc) || p.a.t11->close_recv(rc) || p.a.t11->close_listen(p.lc))
		return 7;
	/* a closed comm is no comm */
	w0 = nwarn;
	if (p.a.t11->close_send(sc) != DVX_NCCL_INTERNAL_ERROR || nwarn != w0 + 1)
		return 8;
	if (p.a.t11->finalize(p.ca) || p.a.t11->finalize(p.cb))
		return 9;
	err = (int)json_sum(stats, "handles_refused");
	unlink(stats);
	if (err != 2)	/* the bad magic and the foreign NIC; the layer's part is its own */
		return fprintf(stderr, "handles_refused %d, not 2\n", err), 10;
	return 0;
}

/* the wire on demand, rank 0 of 2 in this process: handles naming rank 1 with a
 * corrupted wire address, a rank the job lacks, or an address nobody answers at fail
 * cleanly (one WARN line each) and change nothing; the good handle then connects. One
 * host ("ondemand"): the address is an abstract UNIX name (family 1, bytes 52-59 its
 * token); across hosts ("ondemand:tcp:..."): TCP (family 4, bytes 50-51 the port) */
static int fault_ondemand_handles(void)
{
	struct pair p;
	uint8_t bad[DVX_NCCL_HANDLE_BYTES];
	void *sc, *rc;
	int w0, err, tcp = !!strstr(getenv("DVX_NET_WIRE"), ":tcp:");

	putenv((char *)"DVX_NET_RANK=0");
	putenv((char *)"DVX_NET_NRANKS=2");
	putenv((char *)"DVX_NET_TIMEOUT_MS=300");
	if (pair_up(&p))
		return 1;
	if (tcp ? p.h[48] != 4 || !(p.h[50] | p.h[51]) :
		  p.h[48] != 1 || p.h[49] | p.h[50] | p.h[51] ||
		  !(p.h[52] | p.h[53] | p.h[54] | p.h[55] | p.h[56] | p.h[57] | p.h[58] | p.h[59]))
		return fprintf(stderr, "no wire address in the handle\n"), 2;
	/* rank 1's NIC (sim_1) with the address's family broken */
	memcpy(bad, p.h, sizeof(bad));
	bad[114] = 1;
	bad[116] = 1;
	bad[48] = 9;
	w0 = nwarn;
	err = try_connect(&p, bad, &sc, &rc);
	if (err != DVX_NCCL_INTERNAL_ERROR || nwarn != w0 + 1 || !strstr(last_warn, "not one"))
		return fprintf(stderr, "bad address: %d, %s\n", err, last_warn), 3;
	/* one host: a name that is not the one the listener's identity makes */
	if (!tcp) {
		memcpy(bad, p.h, sizeof(bad));
		bad[114] = 1;
		bad[116] = 1;
		bad[52] ^= 0x5a;
		w0 = nwarn;
		err = try_connect(&p, bad, &sc, &rc);
		if (err != DVX_NCCL_INTERNAL_ERROR || nwarn != w0 + 1 ||
		    !strstr(last_warn, "not its listener's"))
			return fprintf(stderr, "bad token: %d, %s\n", err, last_warn), 9;
	}
	/* a rank the job of 2 does not have */
	memcpy(bad, p.h, sizeof(bad));
	bad[114] = 7;
	bad[116] = 7;
	w0 = nwarn;
	err = try_connect(&p, bad, &sc, &rc);
	if (err != DVX_NCCL_INTERNAL_ERROR || nwarn != w0 + 1 || !strstr(last_warn, "rank 7"))
		return fprintf(stderr, "bad rank: %d, %s\n", err, last_warn), 4;
	/* rank 1 at an address where nothing listens (port 1, another name): bounded,
	 * ncclSystemError */
	memcpy(bad, p.h, sizeof(bad));
	bad[114] = 1;
	bad[116] = 1;
	if (tcp) {
		bad[50] = 1;
		bad[51] = 0;
	} else {
		bad[52] ^= 0x5a;	/* another name, and the identity it is made from */
		bad[120] ^= 0x5a;
	}
	w0 = nwarn;
	err = try_connect(&p, bad, &sc, &rc);
	if (err != DVX_NCCL_SYSTEM_ERROR || nwarn != w0 + 1 || !strstr(last_warn, "joining"))
		return fprintf(stderr, "nobody there: %d, %s\n", err, last_warn), 5;
	err = try_connect(&p, p.h, &sc, &rc);
	if (err || !sc || !rc)
		return fprintf(stderr, "good handle: %d, %s\n", err, last_warn), 6;
	if (p.a.t11->close_send(sc) || p.a.t11->close_recv(rc) || p.a.t11->close_listen(p.lc))
		return 7;
	if (p.a.t11->finalize(p.ca) || p.a.t11->finalize(p.cb))
		return 8;
	return 0;
}

static int wait_req(struct pair *p, void *req, int *sizes)
{
	uint64_t t0 = now_ns();
	int done = 0, err;

	while (now_ns() - t0 < 20 * SEC) {
		err = p->a.t11->test(req, &done, sizes);
		if (err || done)
			return err;
	}
	return -2;
}

static int fault_oversize(void)
{
	struct pair p;
	static uint8_t sbuf[4096], rbuf[4096];
	void *sc, *rc, *smr, *rmr, *rq = NULL, *sq = NULL, *bufs[1] = { rbuf }, *mhs[1];
	size_t sz[1] = { 100 };
	int tags[1] = { 7 }, sizes[NMAX] = { 0 }, err, w0, i;
	uint64_t t0;

	if (pair_up(&p) || try_connect(&p, p.h, &sc, &rc))
		return 1;
	if (p.a.t11->reg_mr(sc, sbuf, sizeof(sbuf), DVX_NCCL_PTR_HOST, &smr) ||
	    p.a.t11->reg_mr(rc, rbuf, sizeof(rbuf), DVX_NCCL_PTR_HOST, &rmr))
		return 2;
	/* CUDA memory is not offered */
	w0 = nwarn;
	if (p.a.t11->reg_mr(sc, sbuf, sizeof(sbuf), DVX_NCCL_PTR_CUDA, &smr) !=
	    DVX_NCCL_INTERNAL_ERROR || nwarn != w0 + 1)
		return 3;
	mhs[0] = rmr;
	if (p.a.t11->irecv(rc, 1, bufs, sz, tags, mhs, NULL, &rq) || !rq)
		return 4;
	/* 200 bytes into a receive of 100: an error on both ends, never a truncation */
	w0 = nwarn;
	t0 = now_ns();
	do
		err = p.a.t11->isend(sc, sbuf, 200, 7, smr, NULL, &sq);
	while (!err && !sq && now_ns() - t0 < 20 * SEC);
	if (err != DVX_NCCL_INTERNAL_ERROR || !strstr(last_warn, "larger than the receive"))
		return fprintf(stderr, "oversize isend: %d %p, %s\n", err, sq, last_warn), 5;
	err = wait_req(&p, rq, sizes);
	if (err != DVX_NCCL_INTERNAL_ERROR || nwarn != w0 + 2)
		return fprintf(stderr, "oversize receive: %d, %s\n", err, last_warn), 6;
	/* the connection goes on */
	for (i = 0; i < 64; i++)
		sbuf[i] = (uint8_t)(i * 7 + 1);
	sz[0] = 4096;
	rq = (void *)(uintptr_t)0x1;
	if (p.a.t11->irecv(rc, 1, bufs, sz, tags, mhs, NULL, &rq) || !rq || rq == (void *)0x1)
		return 7;
	sq = NULL;
	t0 = now_ns();
	do
		err = p.a.t11->isend(sc, sbuf, 64, 7, smr, NULL, &sq);
	while (!err && !sq && now_ns() - t0 < 20 * SEC);
	if (err || !sq || wait_req(&p, sq, sizes) || sizes[0] != 64)
		return 8;
	if (wait_req(&p, rq, sizes) || sizes[0] != 64 || memcmp(rbuf, sbuf, 64))
		return 9;
	if (p.a.t11->dereg_mr(sc, smr) || p.a.t11->dereg_mr(rc, rmr) || p.a.t11->close_send(sc) ||
	    p.a.t11->close_recv(rc) || p.a.t11->close_listen(p.lc) || p.a.t11->finalize(p.ca) ||
	    p.a.t11->finalize(p.cb))
		return 10;
	return 0;
}

/* no room for another QP set: the connect fails with a system error, nothing else does */
static int fault_no_room(void)
{
	struct pair p;
	void *sc, *rc, *sc2, *rc2, *lc2;
	uint8_t h2[DVX_NCCL_HANDLE_BYTES];
	int err;

	if (pair_up(&p) || try_connect(&p, p.h, &sc, &rc))
		return 1;
	if (p.a.t11->listen(p.ca, 0, h2, &lc2))
		return 2;
	p.lc = lc2;
	err = try_connect(&p, h2, &sc2, &rc2);
	if (err != DVX_NCCL_SYSTEM_ERROR || !strstr(last_warn, "connect"))
		return fprintf(stderr, "no room: %d, %s\n", err, last_warn), 3;
	if (p.a.t11->close_send(sc) || p.a.t11->close_recv(rc) || p.a.t11->close_listen(lc2) ||
	    p.a.t11->finalize(p.ca) || p.a.t11->finalize(p.cb))
		return 4;
	return 0;
}

/* a bad configuration is the user's error, said in one line */
/* init in this process fails with @want and one WARN line that holds @what and @also */
static int init_refused(int want, const char *what, const char *also)
{
	struct api a;
	void *ctx = NULL;
	int err;

	if (api_open(&a, 11))
		return 1;
	err = a.t11->init(&ctx, 1, NULL, logger, NULL);
	if (err != want || nwarn != 1 || !strstr(last_warn, what) ||
	    (also && !strstr(last_warn, also)))
		return fprintf(stderr, "init: %d, %d WARNs, %s\n", err, nwarn, last_warn), 2;
	return 0;
}

static int fault_config(void)
{
	/* the variable set for this run is the one the warning must name */
	const char *var = getenv("DVX_NET_EAGER_BYTES")	   ? "DVX_NET_EAGER_BYTES"
			  : getenv("DVX_NET_CTS_OFFLOAD")  ? "DVX_NET_CTS_OFFLOAD"
			  : getenv("DVX_NET_WIRE_RING_KB") ? "DVX_NET_WIRE_RING_KB"
			  : getenv("DVX_NET_WIRE_STREAM_KB") ? "DVX_NET_WIRE_STREAM_KB"
			  : getenv("DVX_NET_GDR_ENGINE")   ? "DVX_NET_GDR_ENGINE"
			  : getenv("DVX_NET_GDR_STAGE_KB") ? "DVX_NET_GDR_STAGE_KB"
							   : "DVX_NET_QPS_PER_CONN";

	return init_refused(DVX_NCCL_INVALID_USAGE, var, NULL);
}

static void run_fault(int (*fn)(void), const char *env0, const char *env1)
{
	pid_t pid;
	int st;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		if (env0)
			putenv((char *)env0);
		if (env1)
			putenv((char *)env1);
		exit(fn());	/* LeakSanitizer checks the case's process */
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

static void test_fault_handles(void **state)
{
	run_fault(fault_handles, NULL, NULL);
}

static void test_fault_ondemand_handles(void **state)
{
	run_fault(fault_ondemand_handles, "DVX_NET_WIRE=ondemand", NULL);
	run_fault(fault_ondemand_handles, "DVX_NET_WIRE=ondemand:tcp:127.0.0.1", NULL);
}

/*
 * dvx-copier fails (DVX_NET_GDR=hostproc, DVX_COPIER_FAIL_AFTER=6): the copies of GPU
 * buffers that come after are error completions, one WARN says why; the MRs deregister
 * and everything closes. Then a program that is not a copier: init fails, saying so.
 */
static int fault_copier(void)
{
	struct pair p;
	static uint8_t plain[4096];
	uint8_t *sbuf, *rbuf;
	void *sc, *rc, *smr, *rmr, *mr, *bufs[1], *mhs[1];
	size_t sz[1] = { 256 };
	int tags[1] = { 7 }, sizes[NMAX] = { 0 }, err = 0, i, w0;
	uint64_t t0;

	reg_type = DVX_NCCL_PTR_CUDA;
	if (pair_up(&p) || try_connect(&p, p.h, &sc, &rc))
		return 1;
	sbuf = memfd_buf(1 << 16);
	rbuf = memfd_buf(1 << 16);
	if (!sbuf || !rbuf)
		return 2;
	/* host memory that is no memfd: the export says why */
	w0 = nwarn;
	if (p.a.t11->reg_mr(sc, plain, sizeof(plain), DVX_NCCL_PTR_CUDA, &mr) == DVX_NCCL_OK ||
	    nwarn != w0 + 1 || !strstr(last_warn, "shared mapping"))
		return fprintf(stderr, "plain memory: %s\n", last_warn), 3;
	if (p.a.t11->reg_mr(sc, sbuf, 1 << 16, DVX_NCCL_PTR_CUDA, &smr) ||
	    p.a.t11->reg_mr(rc, rbuf, 1 << 16, DVX_NCCL_PTR_CUDA, &rmr))
		return fprintf(stderr, "regMr: %s\n", last_warn), 4;
	bufs[0] = rbuf;
	mhs[0] = rmr;
	w0 = nwarn;
	for (i = 0; i < 20 && !err; i++) {
		void *rq = NULL, *sq = NULL;

		memset(sbuf, i + 1, 256);
		if (p.a.t11->irecv(rc, 1, bufs, sz, tags, mhs, NULL, &rq) || !rq)
			return 5;
		t0 = now_ns();
		do
			err = p.a.t11->isend(sc, sbuf, 256, 7, smr, NULL, &sq);
		while (!err && !sq && now_ns() - t0 < 20 * SEC);
		if (!err)
			err = wait_req(&p, sq, sizes);
		if (!err)
			err = wait_req(&p, rq, sizes);
		if (!err && (sizes[0] != 256 || rbuf[0] != i + 1 || rbuf[255] != i + 1))
			return fprintf(stderr, "message %d: %d bytes, %#x\n", i, sizes[0], rbuf[0]), 6;
	}
	/* the copier failed its 6th copy: the messages before were exact (checked above),
	 * that one an error. Which message it is depends on the NIC's retransmissions, each
	 * a gather again (a slow run, under TSan, used six on the first) */
	if (err == DVX_NCCL_OK || nwarn < w0 + 1)
		return fprintf(stderr, "the failed copy: %d at message %d, %d WARNs\n", err, i,
			       nwarn - w0), 7;
	if (!strstr(copier_warn, "DVX_COPIER_FAIL_AFTER") ||
	    !strstr(copier_warn, "every copy of GPU memory fails"))
		return fprintf(stderr, "the copier's WARN: %s\n", copier_warn), 8;
	/* it stays gone: deregistration and closing still work */
	if (p.a.t11->dereg_mr(sc, smr) || p.a.t11->dereg_mr(rc, rmr))
		return fprintf(stderr, "deregMr after the copier: %s\n", last_warn), 9;
	p.a.t11->close_send(sc);
	p.a.t11->close_recv(rc);
	if (p.a.t11->close_listen(p.lc) || p.a.t11->finalize(p.ca) || p.a.t11->finalize(p.cb))
		return 10;
	return 0;
}

static int fault_copier_start(void)
{
	/* it ends before or after its hello is sent: "ended" or "took no request" */
	return init_refused(DVX_NCCL_SYSTEM_ERROR, "GPU buffers", "exit status 0");
}

static void test_fault_copier(void **state)
{
	setenv("DVX_COPIER_FAIL_AFTER", "6", 1);
	run_fault(fault_copier, "DVX_NET_GDR=hostproc", NULL);
	unsetenv("DVX_COPIER_FAIL_AFTER");
	run_fault(fault_copier_start, "DVX_NET_GDR=hostproc", "DVX_NET_GDR_COPIER=/bin/true");
}

static void test_fault_oversize(void **state)
{
	run_fault(fault_oversize, NULL, NULL);
}

static void test_fault_no_room(void **state)
{
	run_fault(fault_no_room, "DVX_NET_PRIVATE_SETS=1", NULL);
}

static void test_fault_config(void **state)
{
	run_fault(fault_config, "DVX_NET_QPS_PER_CONN=99", NULL);
	/* the CTS receiver offload copies eager messages with the CPU: not with GPU buffers */
	run_fault(fault_config, "DVX_NET_CTS_OFFLOAD=1", "DVX_NET_GDR=host");
	run_fault(fault_config, "DVX_NET_EAGER_BYTES=100", NULL);
	/* the ring: 0 or a power of two from 4 KiB */
	run_fault(fault_config, "DVX_NET_WIRE_RING_KB=3000", NULL);
	run_fault(fault_config, "DVX_NET_WIRE_RING_KB=2", NULL);
	/* cut-through: 0 (off) or from 4 KiB */
	run_fault(fault_config, "DVX_NET_WIRE_STREAM_KB=3", NULL);
	/* GPU buffers' engine and its staging area (refused in any mode) */
	run_fault(fault_config, "DVX_NET_GDR_ENGINE=dma", "DVX_NET_GDR=host");
	run_fault(fault_config, "DVX_NET_GDR_ENGINE=dma", NULL);
	run_fault(fault_config, "DVX_NET_GDR_STAGE_KB=8", NULL);
}

/* ------------------------------------------------------------------------------
 * The ABI: the tables and properties against the documented layout (x86-64 and other
 * LP64 targets: 8-byte pointers)
 */
#define OFF(type, member, want) assert_int_equal(offsetof(type, member), want)

static void test_abi_layout(void **state)
{
	struct api a;
	void *dl;
	const char *names[] = { "ncclNetPlugin_v11", "ncclNetPlugin_v10", "ncclNetPlugin_v9",
				"ncclNetPlugin_v8" };
	size_t i;

	if (sizeof(void *) != 8)
		skip();
	/* properties v11: 112 bytes */
	OFF(struct dvx_nccl_props_v11, name, 0);
	OFF(struct dvx_nccl_props_v11, pci_path, 8);
	OFF(struct dvx_nccl_props_v11, guid, 16);
	OFF(struct dvx_nccl_props_v11, ptr_support, 24);
	OFF(struct dvx_nccl_props_v11, reg_is_global, 28);
	OFF(struct dvx_nccl_props_v11, force_flush, 32);
	OFF(struct dvx_nccl_props_v11, speed, 36);
	OFF(struct dvx_nccl_props_v11, port, 40);
	OFF(struct dvx_nccl_props_v11, latency, 44);
	OFF(struct dvx_nccl_props_v11, max_comms, 48);
	OFF(struct dvx_nccl_props_v11, max_recvs, 52);
	OFF(struct dvx_nccl_props_v11, dev_type, 56);
	OFF(struct dvx_nccl_props_v11, dev_version, 60);
	OFF(struct dvx_nccl_props_v11, vdev, 64);
	OFF(struct dvx_nccl_props_v11, max_p2p_bytes, 88);
	OFF(struct dvx_nccl_props_v11, max_coll_bytes, 96);
	OFF(struct dvx_nccl_props_v11, max_multi_request, 104);
	assert_int_equal(sizeof(struct dvx_nccl_props_v11), 112);
	/* v9 and v10: the same less the last member */
	OFF(struct dvx_nccl_props_v9, force_flush, 32);
	OFF(struct dvx_nccl_props_v9, vdev, 64);
	OFF(struct dvx_nccl_props_v9, max_p2p_bytes, 88);
	OFF(struct dvx_nccl_props_v9, max_coll_bytes, 96);
	assert_int_equal(sizeof(struct dvx_nccl_props_v9), 104);
	/* v8: 64 bytes, no flush, no virtual devices */
	OFF(struct dvx_nccl_props_v8, guid, 16);
	OFF(struct dvx_nccl_props_v8, ptr_support, 24);
	OFF(struct dvx_nccl_props_v8, reg_is_global, 28);
	OFF(struct dvx_nccl_props_v8, speed, 32);
	OFF(struct dvx_nccl_props_v8, port, 36);
	OFF(struct dvx_nccl_props_v8, latency, 40);
	OFF(struct dvx_nccl_props_v8, max_comms, 44);
	OFF(struct dvx_nccl_props_v8, max_recvs, 48);
	OFF(struct dvx_nccl_props_v8, dev_type, 52);
	OFF(struct dvx_nccl_props_v8, dev_version, 56);
	assert_int_equal(sizeof(struct dvx_nccl_props_v8), 64);
	assert_int_equal(sizeof(struct dvx_nccl_vdev), 20);
	assert_int_equal(sizeof(struct dvx_nccl_dev_handle), 32);
	/* the tables: member k at 8k */
	OFF(struct dvx_nccl_net_v11, init, 8);
	OFF(struct dvx_nccl_net_v11, listen, 32);
	OFF(struct dvx_nccl_net_v11, isend, 80);
	OFF(struct dvx_nccl_net_v11, irecv, 88);
	OFF(struct dvx_nccl_net_v11, iflush, 96);
	OFF(struct dvx_nccl_net_v11, test, 104);
	OFF(struct dvx_nccl_net_v11, close_listen, 128);
	OFF(struct dvx_nccl_net_v11, get_device_mr, 136);
	OFF(struct dvx_nccl_net_v11, irecv_consumed, 144);
	OFF(struct dvx_nccl_net_v11, make_vdevice, 152);
	OFF(struct dvx_nccl_net_v11, finalize, 160);
	OFF(struct dvx_nccl_net_v11, set_net_attr, 168);
	assert_int_equal(sizeof(struct dvx_nccl_net_v11), 176);
	OFF(struct dvx_nccl_net_v10, connect, 40);
	OFF(struct dvx_nccl_net_v10, make_vdevice, 152);
	assert_int_equal(sizeof(struct dvx_nccl_net_v10), 160);
	OFF(struct dvx_nccl_net_v9, make_vdevice, 152);
	assert_int_equal(sizeof(struct dvx_nccl_net_v9), 160);
	OFF(struct dvx_nccl_net_v8, isend, 80);
	OFF(struct dvx_nccl_net_v8, test, 104);
	OFF(struct dvx_nccl_net_v8, irecv_consumed, 144);
	assert_int_equal(sizeof(struct dvx_nccl_net_v8), 152);

	/* every version is exported, named "dvx", with what NCCL calls unconditionally */
	assert_int_equal(api_open(&a, 11), 0);
	dl = a.dl;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct dvx_nccl_net_v8 *t = dlsym(dl, names[i]);	/* common prefix */

		assert_non_null(t);
		assert_string_equal(t->name, "dvx");
		assert_non_null(t->init);
		assert_non_null(t->devices);
		assert_non_null(t->get_properties);
		assert_non_null(t->listen);
		assert_non_null(t->connect);
		assert_non_null(t->accept);
		assert_non_null(t->reg_mr);
		assert_non_null(t->dereg_mr);
		assert_non_null(t->test);
		assert_non_null(t->close_send);
		assert_non_null(t->close_recv);
		assert_non_null(t->close_listen);
		assert_non_null(t->irecv_consumed);
	}
	assert_non_null(a.t11->finalize);	/* called unconditionally under v11 */
	assert_non_null(a.t11->set_net_attr);
	assert_null(dlsym(dl, "ncclNetPlugin_v7"));
	assert_null(dlsym(dl, "dvx_msg_init"));		/* the library stays inside */
	dlclose(dl);
}

/* the properties each version reports, in a child (the plugin reads its environment
 * once) */
static int props_child(void)
{
	struct api a;
	void *ctx;
	struct dvx_nccl_props_v11 p11;
	struct dvx_nccl_props_v9 p9;
	struct dvx_nccl_props_v8 p8;
	const struct dvx_nccl_net_v9 *t9;
	/* software NICs report 25 Gb/s unless DVX_NET_SPEED says otherwise */
	int speed = getenv("DVX_NET_SPEED") ? atoi(getenv("DVX_NET_SPEED")) : 25000;
	int n = 0;

	if (api_open(&a, 11) || a.t11->init(&ctx, 1, NULL, logger, NULL) || a.t11->devices(&n) ||
	    n != 2)
		return 1;
	if (a.t11->get_properties(1, &p11) || strcmp(p11.name, "sim_1") || p11.pci_path ||
	    p11.ptr_support != DVX_NCCL_PTR_HOST || p11.max_recvs != 8 || p11.dev_type != 0 ||
	    p11.vdev.ndevs != 1 || p11.vdev.devs[0] != 1 || !p11.max_p2p_bytes ||
	    p11.max_p2p_bytes > DVX_NCCL_MAX_NET_BYTES || p11.max_comms < 1 || p11.speed != speed ||
	    p11.force_flush || p11.max_multi_request != 1)
		return 2;
	t9 = dlsym(a.dl, "ncclNetPlugin_v9");
	if (!t9 || t9->get_properties(0, &p9) || strcmp(p9.name, "sim_0") || p9.guid == p11.guid ||
	    p9.max_p2p_bytes != p11.max_p2p_bytes)
		return 3;
	if (dlsym(a.dl, "ncclNetPlugin_v8") == NULL ||
	    ((const struct dvx_nccl_net_v8 *)dlsym(a.dl, "ncclNetPlugin_v8"))->get_properties(0, &p8) ||
	    strcmp(p8.name, "sim_0") || p8.max_recvs != 8 || p8.ptr_support != DVX_NCCL_PTR_HOST)
		return 4;
	if (a.t11->get_properties(2, &p11) != DVX_NCCL_INTERNAL_ERROR)
		return 5;
	return a.t11->finalize(ctx) ? 6 : 0;
}

static void test_properties(void **state)
{
	run_fault(props_child, "DVX_NET_SIM=2", NULL);
	run_fault(props_child, "DVX_NET_SIM=2", "DVX_NET_SPEED=40000");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_abi_layout),
		cmocka_unit_test(test_properties),
		cmocka_unit_test(test_v11_threads_1_comm),
		cmocka_unit_test(test_v11_threads_sharing),
		cmocka_unit_test(test_v11_threads_2_nics),
		cmocka_unit_test(test_v8_threads),
		cmocka_unit_test(test_v11_4_ranks),
		cmocka_unit_test(test_v11_procs),
		cmocka_unit_test(test_v11_procs_killed),
		cmocka_unit_test(test_v11_procs_ondemand),
		cmocka_unit_test(test_v11_cts_offload),
		cmocka_unit_test(test_stats_sharing),
		cmocka_unit_test(test_pool_full_fallback),
		cmocka_unit_test(test_gpu_buffers),
		cmocka_unit_test(test_fault_handles),
		cmocka_unit_test(test_fault_ondemand_handles),
		cmocka_unit_test(test_fault_oversize),
		cmocka_unit_test(test_fault_copier),
		cmocka_unit_test(test_fault_no_room),
		cmocka_unit_test(test_fault_config),
	};

	/* DVX_NCCL_TEST_ONLY=pattern: only the tests whose names match (cmocka's filter) */
	if (getenv("DVX_NCCL_TEST_ONLY"))
		cmocka_set_test_filter(getenv("DVX_NCCL_TEST_ONLY"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
