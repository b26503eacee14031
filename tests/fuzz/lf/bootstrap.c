// SPDX-License-Identifier: MIT
/*
 * tests/fuzz/lf/bootstrap.c - libFuzzer harness: the sockets bootstrap's wire messages
 * (core/bootstrap/sock_*.c), the bytes arriving on a peer's socket.
 *
 * It uses the public API only (dvx_bootstrap_sock_init() and the calls on a context) and
 * the hal's socket seam: the host table's sock_* entries, now_ns, sleep_ns and
 * random_bytes (dvx/hal/host.h), the entries through which the mock (hal/mock) fails
 * calls in bootstrap-sock-fault-test. Here they are a scripted network of the harness's
 * own: no OS socket, a virtual clock (an empty poll costs its timeout, any poll at least
 * 1 ms, so every timeout comes, fast and the same every run), random bytes from a fixed
 * seed per rank. One real rank of a 2-rank job runs; its peer is the input.
 *
 * Feeds (address "unix:/dvx-fuzz/rv"):
 *   byte 0  [0] the rank under test (0: it accepts the peer at the rendezvous; 1: it
 *           connects to it); [1] the job has a secret (else the open mode); [2] the
 *           stream ends in end-of-file (else silence); [4:3] unexpected slots 0, 1, 2, 4
 *   byte 1  the most bytes one sock_recv gives (0: all there are)
 *   byte 2  the most bytes one sock_send takes (0: all)
 *   byte 3  fail the n-th hal call (0: none) with byte 4's errno (EIO, ECONNRESET, EPIPE,
 *           ENOMEM, EAGAIN, EINTR, ETIMEDOUT, ECONNREFUSED by b % 8)
 *   bytes 5-8  the calls the rank makes after the set-up, one per byte (b % 8): allgather
 *           of 16 bytes, barrier, recv tag 7 of 24 bytes, send tag 9 of 40 bytes, a
 *           duplicate and recv tag 3 of 8 bytes on it, recv tag 12 (300 bytes) before tag
 *           11 (16 bytes) that was sent first, recv tag 13 of 8 bytes (the peer sends 16),
 *           nothing
 *   the rest: the bytes the peer sends, in order, on the one connection between them.
 *
 * Checks: dvx_bootstrap_sock_init() answers 0 or one of its documented errors (or the
 * injected one); its stats add up (refused is the sum of the reasons, last_refusal one
 * of the documented errnos, at most one rank admitted); every call answers 0 or one of
 * the errors the header lists and returns within its timeout of virtual time (plus the
 * poll granularity); a receive that succeeds wrote exactly its buffer (a heap block of
 * its size) and an allgather kept this rank's block; after a failed set-up and after
 * dvx_bootstrap_fini() no socket is open and no socket file is left; the caller memory
 * is a heap block of exactly dvx_bootstrap_sock_mem_size() (freed after, so nothing
 * leaks).
 *
 * Seeds: 'DVX_FUZZ_WRITE_SEEDS=DIR' runs both ranks for real (two threads over the same
 * scripted network in real time) through call lists and records what the peer sent, so
 * the seeds hold valid handshakes (the proofs too: the nonces come from the same seeds)
 * and frames without this file knowing the wire format: they survive its changes when
 * regenerated ('scripts/fuzz.sh --seeds').
 */
#include <pthread.h>
#include <time.h>

#include <dvx/bootstrap/bootstrap.h>
#include <dvx/hal/hal.h>
#include <dvx/hal/host.h>

#include "lf.h"

#define RV_ADDR "unix:/dvx-fuzz/rv"
#define RV_PATH "/dvx-fuzz/rv"
#define NSOCK 16
#define NFILES 8
#define FD_BASE 100
#define SCRIPT (-2)		/* the peer end of the scripted connection */
#define INIT_TIMEOUT (30ull * 1000000000ull)
#define OP_TIMEOUT (10ull * 1000000000ull)
#define POLL_COST 1000000ull	/* every poll costs at least 1 ms of virtual time */
#define SLOT_BYTES 64u
#define SECRET "dvx fuzz secret"
#define NOPS 4

enum { S_FREE, S_LISTEN, S_CONN };

struct fsock {
	int state;
	int owner;		/* rank */
	int peer;		/* socket index of the other end, SCRIPT, or -1 */
	int peer_closed;
	char path[DVX_HAL_SOCK_PATH_MAX];
	uint8_t *rx;		/* record mode: bytes waiting to be read */
	size_t rx_len, rx_off, rx_cap;
	int acceptq[NSOCK];	/* listeners: connections not accepted yet */
	int nacc;
};

static struct net {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int record;			/* seeds: two real ranks in real time */
	struct fsock s[NSOCK];
	char files[NFILES][DVX_HAL_SOCK_PATH_MAX];
	/* fuzzing */
	int tested;
	const uint8_t *script;
	size_t script_len, script_off;
	size_t recv_chunk, send_chunk;
	int eof;
	int script_made;
	uint64_t vclock;
	uint32_t calls, fail_at, polls;
	int fail_err;
	int unlink_failed;		/* the injected failure hit sock_unlink */
	/* recording */
	int rec_rank;
	uint8_t *rec;
	size_t rec_len, rec_cap;
} net = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

struct rank_ctx {
	int rank;
	uint64_t rng;
};

static void lock(void)
{
	pthread_mutex_lock(&net.lock);
}

static void unlock(void)
{
	pthread_mutex_unlock(&net.lock);
}

static int rank_of(const struct dvx_hal *hal)
{
	return ((const struct rank_ctx *)hal->ctx)->rank;
}

/* the injected failure, when this is the chosen call (fuzzing only) */
static int injected_at(const char *call)
{
	if (net.record || ++net.calls != net.fail_at)
		return 0;
	if (lf_verbose())
		fprintf(stderr, "bootstrap: hal call %u (%s) fails with %d\n", net.calls, call,
			net.fail_err);
	return net.fail_err;
}
#define injected() injected_at(__func__)

static struct fsock *sock_of(int fd)
{
	int i = fd - FD_BASE;

	if (i < 0 || i >= NSOCK || net.s[i].state == S_FREE)
		return NULL;
	return &net.s[i];
}

static int new_sock(int state, int owner)
{
	int i;

	for (i = 0; i < NSOCK; i++) {
		if (net.s[i].state == S_FREE) {
			memset(&net.s[i], 0, sizeof(net.s[i]));
			net.s[i].state = state;
			net.s[i].owner = owner;
			net.s[i].peer = -1;
			return i;
		}
	}
	return -1;
}

static int file_find(const char *path)
{
	int i;

	for (i = 0; i < NFILES; i++)
		if (net.files[i][0] && !strcmp(net.files[i], path))
			return i;
	return -1;
}

static void push(struct fsock *s, const void *p, size_t n)
{
	if (s->rx_len + n > s->rx_cap) {
		s->rx_cap = (s->rx_len + n) * 2 + 256;
		s->rx = realloc(s->rx, s->rx_cap);
		LF_CHECK(s->rx != NULL);
	}
	memcpy(s->rx + s->rx_len, p, n);
	s->rx_len += n;
}

static void record(const void *p, size_t n)
{
	if (net.rec_len + n > net.rec_cap) {
		net.rec_cap = (net.rec_len + n) * 2 + 256;
		net.rec = realloc(net.rec, net.rec_cap);
		LF_CHECK(net.rec != NULL);
	}
	memcpy(net.rec + net.rec_len, p, n);
	net.rec_len += n;
}

/* ---- the host table ---- */

static uint64_t f_now_ns(const struct dvx_hal *hal)
{
	struct timespec ts;
	uint64_t t;

	(void)hal;
	if (net.record) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	}
	lock();
	t = net.vclock;
	unlock();
	return t;
}

static int f_sleep_ns(const struct dvx_hal *hal, uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };
	int e = injected();

	(void)hal;
	if (e)
		return e;
	if (net.record)
		nanosleep(&ts, NULL);
	else
		net.vclock += ns;
	return 0;
}

static int f_random_bytes(const struct dvx_hal *hal, void *buf, size_t len)
{
	struct rank_ctx *c = hal->ctx;
	uint8_t *b = buf;
	int e = injected();
	size_t i;

	if (e)
		return e;
	for (i = 0; i < len; i++) {
		c->rng ^= c->rng << 13;
		c->rng ^= c->rng >> 7;
		c->rng ^= c->rng << 17;
		b[i] = (uint8_t)(c->rng >> 24);
	}
	return 0;
}

static int f_listen(const struct dvx_hal *hal, const struct dvx_hal_sock_addr *addr,
		    int backlog, int *fd)
{
	int e = injected(), i, f;

	*fd = -1;
	if (e)
		return e;
	LF_CHECK(addr->family == DVX_HAL_SOCK_UNIX && addr->path[0] && backlog > 0);
	lock();
	if (file_find(addr->path) >= 0) {
		unlock();
		return -EADDRINUSE;
	}
	i = new_sock(S_LISTEN, rank_of(hal));
	for (f = 0; f < NFILES && net.files[f][0]; f++)
		;
	LF_CHECK(i >= 0 && f < NFILES);
	snprintf(net.s[i].path, sizeof(net.s[i].path), "%s", addr->path);
	snprintf(net.files[f], sizeof(net.files[f]), "%s", addr->path);
	unlock();
	*fd = FD_BASE + i;
	return 0;
}

static int f_connect(const struct dvx_hal *hal, const struct dvx_hal_sock_addr *addr, int *fd)
{
	int e = injected(), i, k, l;

	*fd = -1;
	if (e)
		return e;
	lock();
	if (!net.record) {
		if (net.tested != 1 || strcmp(addr->path, RV_PATH) || net.script_made) {
			unlock();
			return strcmp(addr->path, RV_PATH) ? -ENOENT : -ECONNREFUSED;
		}
		i = new_sock(S_CONN, rank_of(hal));
		LF_CHECK(i >= 0);
		net.s[i].peer = SCRIPT;
		net.script_made = 1;
		unlock();
		*fd = FD_BASE + i;
		return 0;
	}
	for (l = 0; l < NSOCK; l++)
		if (net.s[l].state == S_LISTEN && !strcmp(net.s[l].path, addr->path))
			break;
	if (l == NSOCK) {
		unlock();
		return file_find(addr->path) >= 0 ? -ECONNREFUSED : -ENOENT;
	}
	i = new_sock(S_CONN, rank_of(hal));
	k = new_sock(S_CONN, net.s[l].owner);
	LF_CHECK(i >= 0 && k >= 0 && net.s[l].nacc < NSOCK);
	net.s[i].peer = k;
	net.s[k].peer = i;
	net.s[l].acceptq[net.s[l].nacc++] = k;
	pthread_cond_broadcast(&net.cond);
	unlock();
	*fd = FD_BASE + i;
	return 0;
}

static int f_error(const struct dvx_hal *hal, int fd)
{
	(void)hal;
	(void)fd;
	return injected();
}

static int f_accept(const struct dvx_hal *hal, int lfd, int *fd)
{
	struct fsock *l;
	int e = injected(), i;

	*fd = -1;
	if (e)
		return e;
	lock();
	l = sock_of(lfd);
	LF_CHECK(l && l->state == S_LISTEN);
	if (!net.record) {
		if (net.tested != 0 || strcmp(l->path, RV_PATH) || net.script_made) {
			unlock();
			return -EAGAIN;
		}
		i = new_sock(S_CONN, rank_of(hal));
		LF_CHECK(i >= 0);
		net.s[i].peer = SCRIPT;
		net.script_made = 1;
	} else {
		if (!l->nacc) {
			unlock();
			return -EAGAIN;
		}
		i = l->acceptq[0];
		memmove(l->acceptq, l->acceptq + 1, (size_t)--l->nacc * sizeof(int));
	}
	unlock();
	*fd = FD_BASE + i;
	return 0;
}

static int f_name(const struct dvx_hal *hal, int fd, struct dvx_hal_sock_addr *addr)
{
	struct fsock *s;
	int e = injected();

	(void)hal;
	if (e)
		return e;
	lock();
	s = sock_of(fd);
	LF_CHECK(s != NULL);
	memset(addr, 0, sizeof(*addr));
	addr->family = DVX_HAL_SOCK_UNIX;
	snprintf(addr->path, sizeof(addr->path), "%s", s->path);
	unlock();
	return 0;
}

static int f_send(const struct dvx_hal *hal, int fd, const struct dvx_hal_iov *iov,
		  unsigned iovcnt, size_t *sent)
{
	struct fsock *s;
	size_t total = 0, room, k;
	unsigned i;
	int e = injected();

	*sent = 0;
	if (e)
		return e;
	LF_CHECK(iovcnt >= 1 && iovcnt <= DVX_HAL_SOCK_IOV_MAX);
	for (i = 0; i < iovcnt; i++)
		total += iov[i].len;
	LF_CHECK(total > 0);
	lock();
	s = sock_of(fd);
	LF_CHECK(s && s->state == S_CONN);
	if (s->peer_closed || s->peer == -1) {
		unlock();
		return -EPIPE;
	}
	room = net.send_chunk && !net.record ? net.send_chunk : total;
	for (i = 0; i < iovcnt && *sent < room; i++) {
		k = iov[i].len < room - *sent ? iov[i].len : room - *sent;
		if (!k)
			continue;
		if (net.record) {
			push(&net.s[s->peer], iov[i].base, k);
			if (s->owner == net.rec_rank)
				record(iov[i].base, k);
		}
		*sent += k;
	}
	pthread_cond_broadcast(&net.cond);
	unlock();
	return 0;
}

static int f_recv(const struct dvx_hal *hal, int fd, void *buf, size_t len, size_t *got)
{
	struct fsock *s;
	size_t n;
	int e = injected();

	(void)hal;
	*got = 0;
	if (e)
		return e;
	LF_CHECK(len > 0);
	lock();
	s = sock_of(fd);
	LF_CHECK(s && s->state == S_CONN);
	if (s->peer == SCRIPT) {
		n = net.script_len - net.script_off;
		if (net.recv_chunk && n > net.recv_chunk)
			n = net.recv_chunk;
		if (n > len)
			n = len;
		if (!n && !net.eof) {
			unlock();
			return -EAGAIN;
		}
		memcpy(buf, net.script + net.script_off, n);
		net.script_off += n;
		*got = n;
	} else {
		n = s->rx_len - s->rx_off;
		if (n > len)
			n = len;
		if (!n && !s->peer_closed) {
			unlock();
			return -EAGAIN;
		}
		memcpy(buf, s->rx + s->rx_off, n);
		s->rx_off += n;
		*got = n;
	}
	unlock();
	return 0;
}

static short revents_of(const struct dvx_hal_pollfd *p)
{
	struct fsock *s = sock_of(p->fd);
	short r = 0;

	if (p->fd < 0)
		return 0;
	if (!s)
		return DVX_HAL_POLL_NVAL;
	if (s->state == S_LISTEN) {
		if (net.record ? s->nacc > 0 :
		    (net.tested == 0 && !net.script_made && !strcmp(s->path, RV_PATH)))
			r |= DVX_HAL_POLL_IN;
	} else if (s->peer == SCRIPT) {
		if (net.script_off < net.script_len || net.eof)
			r |= DVX_HAL_POLL_IN;
		if (net.script_off == net.script_len && net.eof)
			r |= DVX_HAL_POLL_HUP;
		r |= DVX_HAL_POLL_OUT;
	} else {
		if (s->rx_off < s->rx_len || s->peer_closed)
			r |= DVX_HAL_POLL_IN;
		if (s->peer_closed)
			r |= DVX_HAL_POLL_HUP;
		else
			r |= DVX_HAL_POLL_OUT;
	}
	return (short)(r & (p->events | DVX_HAL_POLL_HUP | DVX_HAL_POLL_ERR | DVX_HAL_POLL_NVAL));
}

static int f_poll(const struct dvx_hal *hal, struct dvx_hal_pollfd *fds, unsigned nfds,
		  uint64_t timeout_ns)
{
	uint64_t end = f_now_ns(hal) + timeout_ns;
	unsigned i;
	int e = injected(), ready;

	if (e)
		return e;
	lock();
	for (;;) {
		ready = 0;
		for (i = 0; i < nfds; i++) {
			fds[i].revents = revents_of(&fds[i]);
			ready += fds[i].revents != 0;
		}
		if (!net.record) {
			net.vclock += ready || timeout_ns < POLL_COST ? POLL_COST : timeout_ns;
			LF_CHECK(++net.polls < 1000000);	/* every wait ends */
			break;
		}
		if (ready || f_now_ns(hal) >= end)
			break;
		{
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 1000000;	/* re-check the clock every ms */
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&net.cond, &net.lock, &ts);
		}
	}
	unlock();
	return ready;
}

static int f_close(const struct dvx_hal *hal, int fd)
{
	struct fsock *s;
	int e = injected(), i;

	(void)hal;
	lock();
	s = sock_of(fd);
	LF_CHECK(s != NULL);		/* never a socket it did not open, never twice */
	if (s->state == S_LISTEN) {
		for (i = 0; i < s->nacc; i++) {	/* connections never accepted go too */
			struct fsock *a = &net.s[s->acceptq[i]];

			if (a->peer >= 0)
				net.s[a->peer].peer_closed = 1;
			free(a->rx);
			a->state = S_FREE;
		}
	} else if (s->peer >= 0) {
		net.s[s->peer].peer_closed = 1;
		net.s[s->peer].peer = -1;
	}
	free(s->rx);
	memset(s, 0, sizeof(*s));
	pthread_cond_broadcast(&net.cond);
	unlock();
	return e;	/* released whatever it answers */
}

static int f_unlink(const struct dvx_hal *hal, const struct dvx_hal_sock_addr *addr)
{
	int e = injected(), f;

	(void)hal;
	if (e) {
		net.unlink_failed = 1;
		return e;
	}
	lock();
	f = file_find(addr->path);
	if (f >= 0)
		net.files[f][0] = '\0';
	unlock();
	return f >= 0 ? 0 : -ENOENT;
}

static const struct dvx_hal_host_ops fake_ops = {
	.now_ns = f_now_ns,
	.sock_listen = f_listen,
	.sock_connect = f_connect,
	.sock_error = f_error,
	.sock_accept = f_accept,
	.sock_name = f_name,
	.sock_send = f_send,
	.sock_recv = f_recv,
	.sock_poll = f_poll,
	.sock_close = f_close,
	.sock_unlink = f_unlink,
	.sleep_ns = f_sleep_ns,
	.random_bytes = f_random_bytes,
};

/* nothing open, no socket file left (but the one a failed unlink could not remove, as
 * bootstrap-sock-fault-test allows) */
static void check_clean(void)
{
	int i, files = 0;

	for (i = 0; i < NSOCK; i++)
		if (net.s[i].state != S_FREE && (!net.record || net.s[i].owner == net.tested))
			lf_fail(__FILE__, __LINE__, "a socket was left open");
	for (i = 0; i < NFILES; i++)
		files += net.files[i][0] != '\0';
	if (!net.record && files > net.unlink_failed)
		lf_fail(__FILE__, __LINE__, "a socket file was left");
}

/* ---- one rank's life: set-up, the calls, fini ---- */

struct rank_run {
	int rank;
	int tested;		/* this is the rank under test (the other is the peer) */
	unsigned flags;
	uint8_t ops[NOPS];
	struct rank_ctx ctx;
	struct dvx_hal hal;
	int init_rc;
};

static int in_set(int r, const int *set, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (r == set[i])
			return 1;
	return 0;
}

/* a call's answer: 0 or a documented error; and it kept to its timeout */
static void check_call(int r, uint64_t t0, const struct dvx_hal *hal)
{
	static const int ok[] = { 0, -ETIMEDOUT, -ECONNRESET, -EMSGSIZE, -ENOBUFS, -EBUSY,
				  -EPROTO };

	if (lf_verbose() && !net.record)
		fprintf(stderr, "bootstrap: call: %d after %llu ms\n", r,
			(unsigned long long)((dvx_hal_now_ns(hal) - t0) / 1000000));
	if (!net.record) {
		LF_CHECK(in_set(r, ok, DVX_ARRAY_SIZE(ok)) || (net.fail_at && r == net.fail_err));
		LF_CHECK(dvx_hal_now_ns(hal) - t0 <= OP_TIMEOUT + 4 * POLL_COST);
	}
}

static uint8_t pat(unsigned i, unsigned salt)
{
	return (uint8_t)(i * 7 + salt);
}

/* recv @len bytes with @tag into an exact heap block; on success check the bytes */
static void do_recv(struct dvx_bootstrap *bs, int peer, uint32_t tag, size_t len,
		    unsigned salt, const struct dvx_hal *hal)
{
	uint8_t *b = malloc(len);
	uint64_t t0 = dvx_hal_now_ns(hal);
	int r;

	LF_CHECK(b != NULL);
	r = dvx_bootstrap_recv(bs, peer, tag, b, len, OP_TIMEOUT);
	check_call(r, t0, hal);
	if (net.record && !r) {
		size_t i;

		for (i = 0; i < len; i++)
			LF_CHECK(b[i] == pat((unsigned)i, salt));
	}
	free(b);
}

static void do_send(struct dvx_bootstrap *bs, int peer, uint32_t tag, size_t len,
		    unsigned salt, const struct dvx_hal *hal)
{
	uint8_t *b = malloc(len);
	uint64_t t0 = dvx_hal_now_ns(hal);
	size_t i;
	int r;

	LF_CHECK(b != NULL);
	for (i = 0; i < len; i++)
		b[i] = pat((unsigned)i, salt);
	r = dvx_bootstrap_send(bs, peer, tag, b, len, OP_TIMEOUT);
	check_call(r, t0, hal);
	free(b);
}

/* the calls: the rank under test receives what the peer sends, and the other way */
static void run_ops(struct rank_run *rr, struct dvx_bootstrap *bs)
{
	const struct dvx_hal *hal = &rr->hal;
	int peer = 1 - rr->rank, k, r;

	for (k = 0; k < NOPS; k++) {
		uint64_t t0 = dvx_hal_now_ns(hal);

		switch (rr->ops[k] % 8) {
		case 0: {
			uint8_t in[16], out[32];

			memset(in, 0x40 + rr->rank, sizeof(in));
			r = dvx_bootstrap_allgather(bs, in, out, sizeof(in), OP_TIMEOUT);
			check_call(r, t0, hal);
			if (!r)
				LF_CHECK(!memcmp(out + 16 * rr->rank, in, 16));
			break;
		}
		case 1:
			check_call(dvx_bootstrap_barrier(bs, OP_TIMEOUT), t0, hal);
			break;
		case 2:
			if (rr->tested)
				do_recv(bs, peer, 7, 24, 1, hal);
			else
				do_send(bs, peer, 7, 24, 1, hal);
			break;
		case 3:
			if (rr->tested)
				do_send(bs, peer, 9, 40, 2, hal);
			else
				do_recv(bs, peer, 9, 40, 2, hal);
			break;
		case 4: {
			struct dvx_bootstrap dup;

			r = dvx_bootstrap_dup(bs, &dup);
			LF_CHECK(r == 0 || r == -EBUSY);
			if (r)
				break;
			if (rr->tested)
				do_recv(&dup, peer, 3, 8, 3, hal);
			else
				do_send(&dup, peer, 3, 8, 3, hal);
			dvx_bootstrap_fini(&dup);
			break;
		}
		case 5:
			if (rr->tested) {
				do_recv(bs, peer, 12, 300, 5, hal);
				do_recv(bs, peer, 11, 16, 4, hal);
			} else {
				do_send(bs, peer, 11, 16, 4, hal);
				do_send(bs, peer, 12, 300, 5, hal);
			}
			break;
		case 6:
			if (rr->tested)
				do_recv(bs, peer, 13, 8, 6, hal);
			else
				do_send(bs, peer, 13, 16, 6, hal);
			break;
		default:
			break;
		}
	}
}

static const unsigned slot_choice[4] = { 0, 1, 2, 4 };

static void *rank_main(void *arg)
{
	static const int init_ok[] = { 0, -ETIMEDOUT, -EACCES, -EPROTO, -ECONNRESET,
				       -ECONNREFUSED };
	struct rank_run *rr = arg;
	struct dvx_bootstrap_sock_cfg a;
	struct dvx_bootstrap_sock_stats st;
	struct dvx_bootstrap bs;
	uint32_t slots = slot_choice[(rr->flags >> 3) & 3];
	size_t len = dvx_bootstrap_sock_mem_size(2, slots, SLOT_BYTES);
	uint64_t t0;
	void *mem;
	int r;

	rr->ctx.rank = rr->rank;
	rr->ctx.rng = 0x9e3779b97f4a7c15ull * (uint64_t)(rr->rank + 1);
	rr->hal.host = &fake_ops;
	rr->hal.ctx = &rr->ctx;
	rr->hal.name = "fuzz-net";
	LF_CHECK(len > 0);
	mem = aligned_alloc(8, (len + 7) & ~(size_t)7);
	LF_CHECK(mem != NULL);
	memset(&a, 0, sizeof(a));
	memset(&st, 0xee, sizeof(st));
	a.addr = RV_ADDR;
	a.rank = rr->rank;
	a.nranks = 2;
	a.max_unexpected = slots;
	a.slot_bytes = SLOT_BYTES;
	a.timeout_ns = INIT_TIMEOUT;
	a.hal = &rr->hal;
	a.stats = &st;
	if (rr->flags & 2) {
		a.secret = SECRET;
		a.secret_len = sizeof(SECRET) - 1;
	}
	t0 = dvx_hal_now_ns(&rr->hal);
	r = dvx_bootstrap_sock_init(&bs, &a, mem, len);
	rr->init_rc = r;
	if (rr->tested && !net.record)	/* the set-up keeps to its bound */
		LF_CHECK(dvx_hal_now_ns(&rr->hal) - t0 <= INIT_TIMEOUT + 4 * POLL_COST);
	if (lf_verbose())
		fprintf(stderr, "bootstrap: rank %d init %d (admitted %u refused %u, last %d)\n",
			rr->rank, r, st.admitted, st.refused, st.last_refusal);
	if (rr->tested) {
		LF_CHECK(in_set(r, init_ok, DVX_ARRAY_SIZE(init_ok)) ||
			 (net.fail_at && r == net.fail_err));
		LF_CHECK(st.refused == st.refused_auth + st.refused_proto + st.refused_slow +
				       st.refused_hangup + st.refused_late);
		LF_CHECK(st.admitted <= 1);
		LF_CHECK(st.refused ? (st.last_refusal == -EACCES || st.last_refusal == -EPROTO ||
				       st.last_refusal == -ETIMEDOUT ||
				       st.last_refusal == -ECONNRESET ||
				       st.last_refusal == -ECANCELED) : st.last_refusal == 0);
	}
	if (r) {
		if (rr->tested)
			check_clean();	/* a failed set-up leaves nothing behind */
		free(mem);
		return NULL;
	}
	run_ops(rr, &bs);
	dvx_bootstrap_fini(&bs);
	if (rr->tested)
		check_clean();
	free(mem);
	return NULL;
}

static void net_reset(void)
{
	int i;

	for (i = 0; i < NSOCK; i++)
		free(net.s[i].rx);
	memset(net.s, 0, sizeof(net.s));
	memset(net.files, 0, sizeof(net.files));
	net.script_off = 0;
	net.script_made = 0;
	net.vclock = 1000000000ull;
	net.calls = 0;
	net.polls = 0;
	net.unlink_failed = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int errs[8] = { -EIO, -ECONNRESET, -EPIPE, -ENOMEM, -EAGAIN, -EINTR,
				     -ETIMEDOUT, -ECONNREFUSED };
	struct lf_in in = { data, size };
	struct rank_run rr;
	unsigned flags = lf_u8(&in), k;

	net_reset();
	net.record = 0;
	memset(&rr, 0, sizeof(rr));
	rr.flags = flags;
	rr.rank = (int)(flags & 1);
	rr.tested = 1;
	net.tested = rr.rank;
	net.eof = (flags >> 2) & 1;
	net.recv_chunk = lf_u8(&in);
	net.send_chunk = lf_u8(&in);
	net.fail_at = lf_u8(&in);
	net.fail_err = errs[lf_u8(&in) % 8];
	for (k = 0; k < NOPS; k++)
		rr.ops[k] = lf_u8(&in);
	net.script = in.p;
	net.script_len = in.n;
	rank_main(&rr);
	net_reset();
	return 0;
}

/* ---- seeds: both ranks for real, the peer's bytes recorded ---- */

static void write_seed(unsigned flags, const uint8_t *ops, const char *name)
{
	struct rank_run rr[2];
	pthread_t th[2];
	uint8_t *buf;
	int r;

	net_reset();
	net.record = 1;
	net.tested = (int)(flags & 1);
	net.rec_rank = 1 - net.tested;
	net.rec_len = 0;
	for (r = 0; r < 2; r++) {
		memset(&rr[r], 0, sizeof(rr[r]));
		rr[r].rank = r;
		rr[r].tested = r == net.tested;
		rr[r].flags = flags;
		memcpy(rr[r].ops, ops, NOPS);
		LF_CHECK(pthread_create(&th[r], NULL, rank_main, &rr[r]) == 0);
	}
	for (r = 0; r < 2; r++)
		pthread_join(th[r], NULL);
	LF_CHECK(rr[0].init_rc == 0 && rr[1].init_rc == 0);
	buf = malloc(5 + NOPS + net.rec_len);
	LF_CHECK(buf != NULL);
	buf[0] = (uint8_t)flags;
	buf[1] = 0;
	buf[2] = 0;
	buf[3] = 0;
	buf[4] = 0;
	memcpy(buf + 5, ops, NOPS);
	memcpy(buf + 5 + NOPS, net.rec, net.rec_len);
	lf_seed(name, buf, 5 + NOPS + net.rec_len);
	free(buf);
	net_reset();
}

static void write_seeds(void)
{
	static const uint8_t all[NOPS] = { 0, 2, 3, 4 }, more[NOPS] = { 5, 1, 6, 0 },
			     none[NOPS] = { 7, 7, 7, 7 };
	unsigned rank, secret;
	char name[64];

	for (rank = 0; rank < 2; rank++) {
		for (secret = 0; secret < 2; secret++) {
			/* flags: rank, secret, end-of-file, 4 unexpected slots */
			unsigned f = rank | secret << 1 | 1u << 2 | 3u << 3;

			snprintf(name, sizeof(name), "rank%u-%s-allgather-send-recv-dup", rank,
				 secret ? "secret" : "open");
			write_seed(f, all, name);
			snprintf(name, sizeof(name), "rank%u-%s-unexpected-barrier-msgsize", rank,
				 secret ? "secret" : "open");
			write_seed(f, more, name);
			snprintf(name, sizeof(name), "rank%u-%s-setup-only", rank,
				 secret ? "secret" : "open");
			write_seed(f, none, name);
		}
	}
	free(net.rec);
	net.rec = NULL;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	unsetenv(DVX_BOOTSTRAP_SECRET_ENV);	/* the open mode is the input's choice */
	lf_seed_mode(write_seeds);
	return 0;
}
