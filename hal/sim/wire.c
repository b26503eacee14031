// SPDX-License-Identifier: MIT
/*
 * hal/sim/wire.c - the wire: software NICs in different processes joined by stream
 * sockets (UNIX on one host, TCP across hosts), so that a responder's memory is only
 * ever touched by its own process (docs/sim-wire.md).
 *
 * This file is the transport: set-up (listen, connect to the higher ranks, accept the
 * lower ones), framing, a receive buffer and a send buffer per peer, the remote NICs
 * that route QPs here, the counters. What a frame means is exec.c's: requests go to its
 * responder half, answers to its requester half.
 *
 * Never blocking, never deadlocking: every round reads whatever arrived and executes it
 * at once (a request's answer goes into the send buffer, where room for it was checked
 * first, else the request is dropped and the requester retries), so a process always
 * drains its sockets; requests take send room only when a whole answer's worth stays
 * free, so answers always find room. All socket calls go through the hal's host table.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../host_priv.h"
#include "sim.h"
#include "ctrl.h"
#include "exec.h"
#include "ring.h"

#define WIRE_MAGIC 0x44565857u		/* "DVXW" */
#define WIRE_VERSION 2u		/* 2: a window of requests per QP, una at 116 */
#define WIRE_HELLO 16u			/* magic, version, rank, nranks */
#define WIRE_HELLO_VERSION 2u		/* 2: the acceptor answers with its own hello */
#define WIRE_HELLO_CROSS 0x80000002u	/* the acceptor's answer when two joins cross */
#define WIRE_HELLO_RING 0x40000002u	/* a hello with a shared-memory ring (and its answer
					 * when the ring is taken) */
#define WIRE_SHM_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)
#define WIRE_HELLO_NS 1000000000ull	/* an accepted connection says hello within 1 s */
#define WIRE_FRAMES_PER_ROUND 64u	/* frames executed from one peer per round */
#define WIRE_RX_MORE (64u << 10)	/* receive buffer beyond one frame */
#define WIRE_PUBLISH_NOW (16u << 10)	/* a frame written into the ring is published at
					 * once from this size, else at the pass's end */
#define WIRE_STREAM_PIECE (32u << 10)	/* cut-through (cfg.stream_bytes): a frame is
					 * published in pieces of this size */
#define WIRE_STREAM_WAIT_US 100u	/* cfg.stream_wait_us' default: the most a receiver
					 * waits for more of a payload that stopped coming
					 * (then whole, later); 50 times that for all of it
					 * (a peer that trickles) */

struct sim_wpeer {
	int32_t fd;		/* -1: not connected, or gone */
	uint8_t up;
	uint8_t connecting;	/* dvx_sim_wire_connect_peer() is at it (crossing joins) */
	uint8_t mine;		/* up through this process's join (not an accepted one) */
	uint8_t ring;		/* frames through the shared-memory ring (rtx, rrx); the
				 * socket carries wake-ups and the end */
	struct sim_ring rtx;	/* this process to the peer */
	struct sim_ring rrx;	/* the peer to this process */
	uint8_t busy;		/* a frame read in place from rrx is executing: its
				 * mapping stays until it is done (shm_dead) */
	void *shm;		/* the rings' mapping, shm_len bytes */
	uint64_t shm_len;
	void *shm_dead;		/* the mapping of a peer that went down while busy */
	uint8_t *rx;		/* rx_cap bytes; [rx_head, rx_tail) read, not yet executed */
	uint64_t rx_head;
	uint64_t rx_tail;
	uint8_t *tx;		/* tx_cap bytes; [tx_head, tx_tail) still to send */
	uint64_t tx_head;
	uint64_t tx_tail;
	uint32_t gen;		/* the ring's generation: counts its attachments and
				 * the peer's ends (wire_pos(), wire_unread()) */
	uint32_t rsvd_gen;
	uint64_t last_rx;	/* about when a frame from the peer was last executed (the
				 * monotonic clock; 0: none yet) */
	uint64_t tx_part;	/* ring: what is left to write of a frame larger than the
				 * ring, streaming through it from tx_head (0: tx_head is
				 * at a frame's start) */
	uint8_t nostream;	/* the frame at rrx's tail (nostream_at) is not placed as it
				 * arrives again: its rest did not come in time once */
	uint8_t xdone;		/* the frame at rrx's tail (xdone_at, xdone_len bytes) was
				 * executed before all of it arrived (its payload was not
				 * needed): taken, not executed, once it is whole */
	uint8_t rsvd2[6];
	uint64_t nostream_at;
	uint64_t xdone_at;
	uint64_t xdone_len;
	uint64_t wait_at;	/* the frame at rrx's tail (wait_at) was left to be whole when
				 * the peer's head was wait_head: nothing new until it moves
				 * (wire_pending(), the idle wait) */
	uint64_t wait_head;
};

/* sim_wpay.ctx of a payload arriving in a ring (stream_more()) */
struct sim_wstream {
	const struct sim_wpeer *p;
	uint64_t t0;		/* when its execution began */
	uint64_t wait_ns;	/* cfg.stream_wait_us: for more once it stopped */
	uint8_t asked;		/* more() was called: its bytes were being placed */
};

struct sim_wremote {
	int32_t rank;
	uint32_t rsvd;
	struct dvx_sim_nic_cfg cfg;
};

/* an accepted connection whose hello is not complete yet */
struct sim_wacc {
	int32_t fd;
	int32_t sfd;		/* a ring's memfd that came with the hello, else -1 */
	uint32_t got;
	uint32_t rsvd;
	uint8_t b[WIRE_HELLO];
	uint64_t deadline;	/* refused if its hello is not complete by then */
};

struct sim_wire {
	struct dvx_sim_wire_cfg cfg;	/* with the defaults filled in */
	const struct dvx_hal *hal;
	int32_t lfd;			/* listening socket during set-up, else -1 */
	uint8_t connected;
	uint8_t rsvd[3];
	struct dvx_hal_sock_addr laddr;	/* where it listens (removed at connect if UNIX) */
	uint64_t tx_cap;
	struct sim_wpeer *peers;
	struct sim_wremote *remotes;
	uint32_t nremotes;
	uint32_t rsvd2;
	struct dvx_hal_pollfd *pfd;	/* 2 * nranks + 2 */
	uint32_t *pmap;			/* pfd index -> rank, or what else it is */
	struct sim_wacc *acc;		/* nranks: connections accepted, hello pending */
	struct dvx_sim_wire_stats st;
	uint32_t rounds;		/* progress rounds (the sockets' poll, see there) */
	uint32_t sockets;		/* 1: poll the sockets in the next round */
};

/* with every peer on a ring, the sockets (wake-ups, the end, a listener's joins) are
 * polled every this many rounds, and after a wait they ended */
#define WIRE_SOCK_EVERY 16u

static const struct sim_wire_ops wire_ops;

struct wire_layout {
	size_t peers, remotes, pfd, pmap, acc, bufs, end;
};

static size_t lay(size_t *off, size_t bytes)
{
	size_t at = DVX_ALIGN_UP(*off, (size_t)64);

	*off = at + bytes;
	return at;
}

static bool wire_cfg_ok(const struct dvx_sim_wire_cfg *c)
{
	return c && c->nranks >= 1 && c->nranks <= DVX_SIM_WIRE_MAX_RANKS && c->rank >= 0 &&
	       c->rank < c->nranks && c->max_msg <= (1u << 30) && c->max_remote_nics <= 65536 &&
	       (!c->stream_bytes || c->stream_bytes >= 1024) && c->stream_wait_us <= 1000000 &&
	       (!c->ring_bytes || (c->ring_bytes >= SIM_RING_MIN && c->ring_bytes <= (1u << 30) &&
				   !(c->ring_bytes & (c->ring_bytes - 1))));
}

static void wire_defaults(const struct dvx_sim_wire_cfg *in, struct dvx_sim_wire_cfg *c)
{
	*c = *in;
	if (!c->max_msg)
		c->max_msg = DVX_SIM_WIRE_MAX_MSG_DEFAULT;
	if (!c->max_remote_nics)
		c->max_remote_nics = 2u * (uint32_t)c->nranks;
	if (!c->min_retry_ns)
		c->min_retry_ns = DVX_SIM_WIRE_RETRY_NS_DEFAULT;
	if (!c->hal)
		c->hal = dvx_hal_host();
	if (!c->stream_bytes)
		c->stream_bytes = DVX_SIM_WIRE_STREAM_DEFAULT;
	if (!c->stream_wait_us)
		c->stream_wait_us = WIRE_STREAM_WAIT_US;
}

/* a request of the largest message and one answer of it fit together, and 1 MiB more
 * for a window of requests (and their answers) written together */
static uint64_t tx_cap_of(const struct dvx_sim_wire_cfg *c)
{
	return 2ull * (SIM_WIRE_HDR + c->max_msg) + (1u << 20);
}

/* a frame of the largest message, and 64 KiB more to read what follows in one call */
static uint64_t rx_cap_of(const struct dvx_sim_wire_cfg *c)
{
	return SIM_WIRE_HDR + (uint64_t)c->max_msg + WIRE_RX_MORE;
}

static void wire_layout(const struct dvx_sim_wire_cfg *c, struct wire_layout *l)
{
	size_t off = 0, n = (size_t)c->nranks;

	(void)lay(&off, sizeof(struct sim_wire));
	l->peers = lay(&off, n * sizeof(struct sim_wpeer));
	l->remotes = lay(&off, (size_t)c->max_remote_nics * sizeof(struct sim_wremote));
	l->pfd = lay(&off, (2 * n + 2) * sizeof(struct dvx_hal_pollfd));
	l->pmap = lay(&off, (2 * n + 2) * sizeof(uint32_t));
	l->acc = lay(&off, n * sizeof(struct sim_wacc));
	/* the other ranks' buffers; this rank's own peer entry has none */
	l->bufs = lay(&off, (n - 1) * (rx_cap_of(c) + tx_cap_of(c) + 128));
	l->end = off + 64;	/* the start is aligned inside the caller's memory */
}

size_t dvx_sim_wire_mem_size(const struct dvx_sim_wire_cfg *cfg)
{
	struct dvx_sim_wire_cfg c;
	struct wire_layout l;

	if (!wire_cfg_ok(cfg))
		return 0;
	wire_defaults(cfg, &c);
	wire_layout(&c, &l);
	return l.end;
}

int dvx_sim_wire_init(struct dvx_sim_fabric *fab, const struct dvx_sim_wire_cfg *cfg, void *mem,
		      size_t len)
{
	struct sim_fabric *f = sim_fab_of(fab);
	struct dvx_sim_wire_cfg c;
	struct wire_layout l;
	struct sim_wire *w;
	uint8_t *base, *buf;
	int32_t i;

	if (!fab || !mem || !wire_cfg_ok(cfg) || len < dvx_sim_wire_mem_size(cfg))
		return -EINVAL;
	wire_defaults(cfg, &c);
	wire_layout(&c, &l);
	base = (uint8_t *)DVX_ALIGN_UP((uintptr_t)mem, (uintptr_t)64);
	pthread_mutex_lock(&f->lock);
	if (f->wire) {
		pthread_mutex_unlock(&f->lock);
		return -EBUSY;
	}
	memset(base, 0, l.bufs);
	w = (struct sim_wire *)(void *)base;
	w->cfg = c;
	w->hal = c.hal;
	w->lfd = -1;
	w->tx_cap = tx_cap_of(&c);
	w->peers = (struct sim_wpeer *)(void *)(base + l.peers);
	w->remotes = (struct sim_wremote *)(void *)(base + l.remotes);
	w->pfd = (struct dvx_hal_pollfd *)(void *)(base + l.pfd);
	w->pmap = (uint32_t *)(void *)(base + l.pmap);
	w->acc = (struct sim_wacc *)(void *)(base + l.acc);
	buf = base + l.bufs;
	for (i = 0; i < c.nranks; i++) {
		struct sim_wpeer *p = &w->peers[i];

		p->fd = -1;
		w->acc[i].fd = -1;
		w->acc[i].sfd = -1;
		if (i == c.rank)
			continue;
		p->rx = buf;
		buf += DVX_ALIGN_UP(rx_cap_of(&c), 64);
		p->tx = buf;
		buf += DVX_ALIGN_UP(w->tx_cap, 64);
	}
	f->wire = w;
	f->wire_max_msg = c.max_msg;
	f->wire_min_retry_ns = c.min_retry_ns;
	f->wire_ops = &wire_ops;
	atomic_store(&f->wire_on, 1);
	/* NIC time starts again with the wire: the time without one is no stall */
	f->wire_last_pass = 0;
	f->wire_frozen_ns = 0;
	f->wire_frozen = 0;
	f->wire_window_max = 0;
	f->wpasses = f->wpass_ns = f->helps = f->peeks = f->peek_hits = 0;
	__atomic_store_n(&f->help_busy, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&f->sleeps, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&f->slept_ns, 0, __ATOMIC_RELAXED);
	/* doorbells wake the progress thread's wait (without it: its time-out) */
	dvx_sim_kick_open(f);
	pthread_mutex_unlock(&f->lock);
	return 0;
}

static struct sim_wire *wire_of(struct dvx_sim_fabric *fab)
{
	return fab ? sim_fab_of(fab)->wire : NULL;
}

int dvx_sim_wire_listen(struct dvx_sim_fabric *fab, const struct dvx_hal_sock_addr *bind,
			struct dvx_hal_sock_addr *out)
{
	struct sim_wire *w = wire_of(fab);
	int fd = -1, rc;

	if (!w || !bind || !out)
		return -EINVAL;
	if (w->lfd >= 0 || w->connected)
		return -EBUSY;
	rc = dvx_hal_sock_listen(w->hal, bind, w->cfg.nranks + 4, &fd);
	if (rc)
		return rc;
	rc = dvx_hal_sock_name(w->hal, fd, out);
	if (rc) {
		dvx_hal_sock_close(w->hal, fd);
		if (bind->path[0])
			dvx_hal_sock_unlink(w->hal, bind);
		return rc;
	}
	if (bind->path[0])	/* a UNIX name: the address given is the one to reach */
		*out = *bind;
	w->lfd = fd;
	w->laddr = *out;
	return 0;
}

/* ---- the shared-memory rings (ring.c; docs/sim-wire.md) ------------------------------ */

/* both directions' headers, then their data areas */
static uint64_t shm_len_of(const struct sim_wire *w)
{
	return DVX_ALIGN_UP(2ull * SIM_RING_HDR + 2ull * w->cfg.ring_bytes, 4096ull);
}

/* the joiner's: a sealed memfd of the rings (its size can never change: a peer that
 * could shrink it would fault this process), mapped here */
static int shm_make(struct sim_wire *w, int *fd, void **map)
{
	uint64_t len = shm_len_of(w);
	void *m;
	int f = memfd_create("dvx-wire-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (f < 0)
		return -errno;
	if (ftruncate(f, (off_t)len) || fcntl(f, F_ADD_SEALS, WIRE_SHM_SEALS)) {
		close(f);
		return -EIO;
	}
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
	if (m == MAP_FAILED) {
		close(f);
		return -ENOMEM;
	}
	*fd = f;
	*map = m;
	return 0;
}

/* the acceptor's: a memfd from a peer, taken only when it is sealed against resizing
 * and exactly as long as this process's own configuration makes it */
static int shm_take(struct sim_wire *w, int fd, void **map)
{
	uint64_t len = shm_len_of(w);
	struct stat st;
	void *m;
	int seals = fcntl(fd, F_GET_SEALS);

	if (seals < 0 || (seals & (F_SEAL_SHRINK | F_SEAL_GROW)) != (F_SEAL_SHRINK | F_SEAL_GROW) ||
	    fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != len)
		return -EPROTO;
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return -ENOMEM;
	*map = m;
	return 0;
}

/* the peer's frames from now on through @map: the joiner writes the first direction */
static void peer_ring(struct sim_wire *w, struct sim_wpeer *p, void *map, bool joiner)
{
	uint8_t *b = map;
	uint64_t rb = w->cfg.ring_bytes;
	void *h0 = b, *h1 = b + SIM_RING_HDR, *d0 = b + 2 * SIM_RING_HDR,
	     *d1 = b + 2 * SIM_RING_HDR + rb;

	dvx_sim_ring_attach(&p->rtx, joiner ? h0 : h1, joiner ? d0 : d1, rb);
	dvx_sim_ring_attach(&p->rrx, joiner ? h1 : h0, joiner ? d1 : d0, rb);
	p->shm = map;
	p->shm_len = shm_len_of(w);
	p->ring = 1;
	p->nostream = 0;
	p->xdone = 0;
	p->wait_at = UINT64_MAX;
	p->gen++;
}

static void shm_drop(struct sim_wire *w, void *map)
{
	if (map)
		munmap(map, shm_len_of(w));
}

static void peer_down(struct sim_wire *w, struct sim_wpeer *p)
{
	/* a frame executing from the ring in place still reads its payload there: the
	 * mapping goes when it is done (rx_direct()) */
	if (p->shm && p->busy)
		p->shm_dead = p->shm;
	else if (p->shm)
		munmap(p->shm, p->shm_len);
	p->shm = NULL;
	p->ring = 0;
	p->gen++;
	if (p->fd >= 0)
		dvx_hal_sock_close(w->hal, p->fd);
	if (p->up)
		w->st.peers_down++;
	p->fd = -1;
	p->up = 0;
	p->mine = 0;
	p->rx_head = p->rx_tail = 0;
	p->tx_head = p->tx_tail = p->tx_part = 0;
}

static void close_listener(struct sim_wire *w)
{
	if (w->lfd < 0)
		return;
	dvx_hal_sock_close(w->hal, w->lfd);
	w->lfd = -1;
	if (w->laddr.path[0])
		dvx_hal_sock_unlink(w->hal, &w->laddr);
}

static void put_hello(uint8_t *b, const struct sim_wire *w, uint32_t version)
{
	dvx_put_be32(b, WIRE_MAGIC);
	dvx_put_be32(b + 4, version);
	dvx_put_be32(b + 8, (uint32_t)w->cfg.rank);
	dvx_put_be32(b + 12, (uint32_t)w->cfg.nranks);
}

/* Write all of @b (a hello: 16 bytes on a fresh connection) before @deadline. */
static int send_all(struct sim_wire *w, int fd, const uint8_t *b, size_t len, uint64_t deadline)
{
	struct dvx_hal_pollfd pf = { fd, DVX_HAL_POLL_OUT, 0 };
	size_t sent;
	int rc;

	while (len) {
		struct dvx_hal_iov iov = { b, len };

		rc = dvx_hal_sock_send(w->hal, fd, &iov, 1, &sent);
		if (!rc) {
			b += sent;
			len -= sent;
			continue;
		}
		if (rc != -EAGAIN)
			return rc;
		if (dvx_hal_now_ns(w->hal) >= deadline)
			return -ETIMEDOUT;
		dvx_hal_sock_poll(w->hal, &pf, 1, 1000000u);
	}
	return 0;
}

static void acc_close(struct sim_wire *w, struct sim_wacc *a, bool refused)
{
	dvx_hal_sock_close(w->hal, a->fd);
	if (a->sfd >= 0)
		dvx_hal_fd_close(w->hal, a->sfd);
	a->sfd = -1;
	a->fd = -1;
	a->got = 0;
	if (refused)
		w->st.refused++;
}

/* a failed mesh: every connection closed (fab->lock held) */
static void setup_fail(struct sim_wire *w)
{
	int32_t i;

	for (i = 0; i < w->cfg.nranks; i++) {
		peer_down(w, &w->peers[i]);
		if (w->acc[i].fd >= 0)
			acc_close(w, &w->acc[i], false);
	}
	w->st.peers_down = 0;
	close_listener(w);
}

/* the rank a hello of @version names, or -1 when it is not one of a rank of this job */
static int32_t hello_rank(const struct sim_wire *w, const uint8_t *b, uint32_t version)
{
	uint32_t r = dvx_get_be32(b + 8);

	if (dvx_get_be32(b) != WIRE_MAGIC || dvx_get_be32(b + 4) != version ||
	    dvx_get_be32(b + 12) != (uint32_t)w->cfg.nranks || r >= (uint32_t)w->cfg.nranks ||
	    r == (uint32_t)w->cfg.rank)
		return -1;
	return (int32_t)r;
}


/*
 * The acceptor's half of a join, one round without waiting (fab->lock held, or the
 * wire not yet shared): take the connections waiting at the listener, read what came of
 * their hellos, and take a rank in whose hello is right: this job (magic, version,
 * nranks), a rank that is not this one, not one that is up already (a second connection
 * claiming an identity), nor one this process is connecting to itself when it is the
 * higher rank (two joins that cross: the lower rank's connection is the one kept). It
 * gets this process's hello back and is up. Anything else is refused (closed) and
 * counted, and changes nothing; so is a connection that says nothing for a second, or
 * one more than there are slots for hellos. Returns whether a rank came up.
 */
static bool accept_step(struct sim_wire *w)
{
	uint64_t now = dvx_hal_now_ns(w->hal);
	bool up = false;
	int32_t i, r;
	int fd;

	while (w->lfd >= 0 && !dvx_hal_sock_accept(w->hal, w->lfd, &fd)) {
		for (i = 0; i < w->cfg.nranks && w->acc[i].fd >= 0; i++)
			;
		if (i == w->cfg.nranks) {
			dvx_hal_sock_close(w->hal, fd);
			w->st.refused++;
			continue;
		}
		w->acc[i].fd = fd;
		w->acc[i].sfd = -1;
		w->acc[i].got = 0;
		w->acc[i].deadline = now + WIRE_HELLO_NS;
	}
	for (i = 0; i < w->cfg.nranks; i++) {
		struct sim_wacc *a = &w->acc[i];
		uint8_t hello[WIRE_HELLO];
		struct dvx_hal_iov iov = { hello, sizeof(hello) };
		size_t got = 0, sent = 0;
		uint32_t ver;
		void *map = NULL;
		unsigned nfd = 0;
		int rc, sfd = -1;

		if (a->fd < 0)
			continue;
		/* a ring's memfd comes with the hello's first byte (UNIX sockets) */
		if (w->laddr.family == DVX_HAL_SOCK_UNIX || w->laddr.family == DVX_HAL_SOCK_ABSTRACT) {
			rc = dvx_hal_sock_recv_fds(w->hal, a->fd, a->b + a->got, WIRE_HELLO - a->got,
						   &got, &sfd, 1, &nfd);
			if (!rc && nfd && a->sfd < 0)
				a->sfd = sfd;
			else if (!rc && nfd)
				dvx_hal_fd_close(w->hal, sfd);	/* one ring per hello */
		} else {
			rc = dvx_hal_sock_recv(w->hal, a->fd, a->b + a->got, WIRE_HELLO - a->got,
					       &got);
		}
		if (rc == -EAGAIN) {
			if (now >= a->deadline)
				acc_close(w, a, true);
			continue;
		}
		if (rc || !got) {
			acc_close(w, a, true);	/* gone before saying who it is */
			continue;
		}
		a->got += (uint32_t)got;
		if (a->got < WIRE_HELLO)
			continue;
		ver = dvx_get_be32(a->b + 4) == WIRE_HELLO_RING ? WIRE_HELLO_RING :
									 WIRE_HELLO_VERSION;
		r = hello_rank(w, a->b, ver);
		if (r > w->cfg.rank && (w->peers[r].connecting ||
					 (w->peers[r].up && w->peers[r].mine))) {
			/* joins that crossed (this one's, in flight or done, is kept): the
			 * other waits for it instead of failing */
			put_hello(hello, w, WIRE_HELLO_CROSS);
			(void)dvx_hal_sock_send(w->hal, a->fd, &iov, 1, &sent);
			acc_close(w, a, false);
			continue;
		}
		if (r < 0 || w->peers[r].up) {
			acc_close(w, a, true);	/* not of this job, or a rank taken */
			continue;
		}
		/* the ring offered is taken when this process has rings of that size too and
		 * the memfd is one it may map; else the answer says no ring: frames go
		 * through the socket */
		if (ver == WIRE_HELLO_RING && a->sfd >= 0 && w->cfg.ring_bytes &&
		    shm_take(w, a->sfd, &map))
			map = NULL;
		if (a->sfd >= 0)
			dvx_hal_fd_close(w->hal, a->sfd);
		a->sfd = -1;
		put_hello(hello, w, map ? WIRE_HELLO_RING : WIRE_HELLO_VERSION);
		/* 16 bytes into a fresh connection: all of them or none fit */
		rc = dvx_hal_sock_send(w->hal, a->fd, &iov, 1, &sent);
		if (rc || sent != sizeof(hello)) {
			shm_drop(w, map);
			acc_close(w, a, true);
			continue;
		}
		w->peers[r].fd = a->fd;
		w->peers[r].up = 1;
		w->peers[r].mine = 0;
		w->peers[r].rx_head = w->peers[r].rx_tail = 0;
		w->peers[r].tx_head = w->peers[r].tx_tail = w->peers[r].tx_part = 0;
		if (map)
			peer_ring(w, &w->peers[r], map, false);
		a->fd = -1;
		a->got = 0;
		up = true;
	}
	return up;
}

static int lock_accept(struct sim_fabric *f, struct sim_wire *w, int32_t r)
{
	int is_up;

	pthread_mutex_lock(&f->lock);
	accept_step(w);
	is_up = w->peers[r].up;
	pthread_mutex_unlock(&f->lock);
	return is_up;
}

/*
 * Join rank @r at @addr before @deadline: connect (again every millisecond while
 * nothing listens there), say hello, and take the connection when rank @r's hello comes
 * back. Meanwhile this process's own listener is served (accept_step()), so joins that
 * wait on each other all go on. 0 also when @r joined this process meanwhile.
 */
static int join_peer(struct sim_fabric *f, struct sim_wire *w, int32_t r,
		     const struct dvx_hal_sock_addr *addr, uint64_t deadline)
{
	uint8_t hello[WIRE_HELLO], back[WIRE_HELLO];
	uint32_t got = 0;
	int fd = -1, rc = 0, said = 0, crossed = 0, mfd = -1;
	void *map = NULL;

	pthread_mutex_lock(&f->lock);
	if (w->peers[r].up) {
		pthread_mutex_unlock(&f->lock);
		return 0;
	}
	if (w->peers[r].connecting) {
		pthread_mutex_unlock(&f->lock);
		return -EBUSY;
	}
	w->peers[r].connecting = 1;
	pthread_mutex_unlock(&f->lock);
	/* on one host (a UNIX address) the frames go through a shared-memory ring, if
	 * this process has rings and can make one; its memfd goes with the hello */
	if (w->cfg.ring_bytes &&
	    (addr->family == DVX_HAL_SOCK_UNIX || addr->family == DVX_HAL_SOCK_ABSTRACT) &&
	    shm_make(w, &mfd, &map)) {
		mfd = -1;
		map = NULL;
	}
	put_hello(hello, w, map ? WIRE_HELLO_RING : WIRE_HELLO_VERSION);
	for (;;) {
		struct dvx_hal_pollfd pf[2];
		uint64_t now = dvx_hal_now_ns(w->hal), wait;
		unsigned np = 0;

		if (lock_accept(f, w, r)) {
			rc = 0;	/* it joined us, or the crossing went its way */
			break;
		}
		if (now >= deadline) {
			rc = -ETIMEDOUT;
			break;
		}
		wait = deadline - now < 1000000u ? deadline - now : 1000000u;
		if (fd < 0 && !crossed && dvx_hal_sock_connect(w->hal, addr, &fd)) {
			fd = -1;	/* nothing listens there yet: again in a millisecond */
			dvx_hal_sock_poll(w->hal, NULL, 0, wait);
			continue;
		}
		if (w->lfd >= 0) {
			pf[np].fd = w->lfd;
			pf[np++].events = DVX_HAL_POLL_IN;
		}
		if (fd >= 0) {
			pf[np].fd = fd;
			pf[np++].events = said ? DVX_HAL_POLL_IN : DVX_HAL_POLL_OUT;
		}
		rc = dvx_hal_sock_poll(w->hal, pf, np, wait);
		if (rc < 0)
			break;
		rc = 0;
		if (fd < 0 || !pf[np - 1].revents)
			continue;
		if (!said) {
			if (dvx_hal_sock_error(w->hal, fd)) {
				dvx_hal_sock_close(w->hal, fd);	/* refused: not listening yet */
				fd = -1;
				continue;
			}
			if (mfd >= 0) {
				size_t sent = 0;

				/* the memfd with the first bytes; the rest as any bytes */
				rc = dvx_hal_sock_send_fds(w->hal, fd, hello, sizeof(hello), &mfd, 1,
							   &sent);
				if (rc == -EAGAIN) {
					rc = 0;
					continue;
				}
				if (!rc && sent < sizeof(hello))
					rc = send_all(w, fd, hello + sent, sizeof(hello) - sent,
						      deadline);
			} else {
				rc = send_all(w, fd, hello, sizeof(hello), deadline);
			}
			if (rc)
				break;
			said = 1;
			continue;
		}
		{
			size_t n = 0;

			rc = dvx_hal_sock_recv(w->hal, fd, back + got, sizeof(back) - got, &n);
			if (rc == -EAGAIN) {
				rc = 0;
				continue;
			}
			if (rc || !n) {
				/* refused: not this job, or this rank is up there already (also
				 * when it joined us meanwhile: then that is the connection) */
				rc = lock_accept(f, w, r) ? 0 : -ECONNREFUSED;
				break;
			}
			got += (uint32_t)n;
			if (got < sizeof(back))
				continue;
			if (hello_rank(w, back, WIRE_HELLO_CROSS) == r) {
				/* two joins crossed: the lower rank's comes to our listener */
				dvx_hal_sock_close(w->hal, fd);
				fd = -1;
				crossed = 1;
				continue;
			}
			/* the ring taken (only one offered can be), or not: the socket */
			if (hello_rank(w, back, WIRE_HELLO_VERSION) != r &&
			    (!map || hello_rank(w, back, WIRE_HELLO_RING) != r)) {
				rc = -EPROTO;	/* someone else answers at that address */
				break;
			}
			if (dvx_get_be32(back + 4) != WIRE_HELLO_RING) {
				shm_drop(w, map);
				map = NULL;
			}
			pthread_mutex_lock(&f->lock);
			if (!w->peers[r].up) {
				w->peers[r].fd = fd;
				w->peers[r].up = 1;
				w->peers[r].mine = 1;
				w->peers[r].rx_head = w->peers[r].rx_tail = 0;
				w->peers[r].tx_head = w->peers[r].tx_tail = 0;
				w->peers[r].tx_part = 0;
				if (map)
					peer_ring(w, &w->peers[r], map, true);
				map = NULL;
				fd = -1;
			}
			w->peers[r].connecting = 0;
			pthread_mutex_unlock(&f->lock);
			if (fd >= 0)
				dvx_hal_sock_close(w->hal, fd);
			if (mfd >= 0)
				close(mfd);
			shm_drop(w, map);
			return 0;
		}
	}
	if (fd >= 0)
		dvx_hal_sock_close(w->hal, fd);
	if (mfd >= 0)
		close(mfd);
	shm_drop(w, map);
	pthread_mutex_lock(&f->lock);
	w->peers[r].connecting = 0;
	pthread_mutex_unlock(&f->lock);
	return rc;
}

int dvx_sim_wire_connect_peer(struct dvx_sim_fabric *fab, int rank,
			      const struct dvx_hal_sock_addr *addr, uint64_t timeout_ns)
{
	struct sim_wire *w = wire_of(fab);

	if (!w || !addr || rank < 0 || rank >= w->cfg.nranks || rank == w->cfg.rank)
		return -EINVAL;
	return join_peer(sim_fab_of(fab), w, rank, addr,
			 dvx_hal_now_ns(w->hal) + timeout_ns);
}

int dvx_sim_wire_connect(struct dvx_sim_fabric *fab, const struct dvx_hal_sock_addr *table,
			 uint64_t timeout_ns)
{
	struct sim_fabric *f = fab ? sim_fab_of(fab) : NULL;
	struct sim_wire *w = wire_of(fab);
	uint64_t deadline;
	int32_t me, n, r;
	int rc = 0;

	if (!w || !table)
		return -EINVAL;
	if (w->connected || w->lfd < 0)
		return -EBUSY;
	me = w->cfg.rank;
	n = w->cfg.nranks;
	deadline = dvx_hal_now_ns(w->hal) + timeout_ns;
	/* the mesh is joins: this rank joins the higher ranks, the lower ones join it */
	for (r = me + 1; r < n && !rc; r++)
		rc = join_peer(f, w, r, &table[r], deadline);
	for (r = 0; r < me && !rc; r++) {
		while (!lock_accept(f, w, r)) {
			struct dvx_hal_pollfd pf = { w->lfd, DVX_HAL_POLL_IN, 0 };
			uint64_t now = dvx_hal_now_ns(w->hal);

			if (now >= deadline) {
				rc = -ETIMEDOUT;
				break;
			}
			/* short waits: a hello after the accept does not wake the listener */
			dvx_hal_sock_poll(w->hal, &pf, 1, deadline - now < 1000000u ?
					  deadline - now : 1000000u);
		}
	}
	pthread_mutex_lock(&f->lock);
	if (rc) {
		setup_fail(w);
	} else {
		close_listener(w);
		w->connected = 1;
	}
	pthread_mutex_unlock(&f->lock);
	return rc;
}

/* ---- addresses as short strings (the NCCL plugin's handles carry them) --------------- */

int dvx_sim_wire_addr_format(const struct dvx_hal_sock_addr *a, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN];
	int n;

	if (!a || !buf || !len)
		return -EINVAL;
	switch (a->family) {
	case DVX_HAL_SOCK_UNIX:
	case DVX_HAL_SOCK_ABSTRACT:
		if (!a->path[0] || !memchr(a->path, 0, sizeof(a->path)))
			return -EINVAL;
		n = snprintf(buf, len, "%s:%s", a->family == DVX_HAL_SOCK_UNIX ? "unix" :
			     "abstract", a->path);
		break;
	case DVX_HAL_SOCK_IP4:
		if (!inet_ntop(AF_INET, a->ip, ip, sizeof(ip)))
			return -EINVAL;
		n = snprintf(buf, len, "tcp:%s:%u", ip, (unsigned)a->port);
		break;
	case DVX_HAL_SOCK_IP6:
		if (!inet_ntop(AF_INET6, a->ip, ip, sizeof(ip)))
			return -EINVAL;
		n = a->scope_id ? snprintf(buf, len, "tcp6:[%s%%%u]:%u", ip, (unsigned)a->scope_id,
					   (unsigned)a->port) :
				  snprintf(buf, len, "tcp6:[%s]:%u", ip, (unsigned)a->port);
		break;
	default:
		return -EINVAL;
	}
	if (n < 0 || (size_t)n >= len || (size_t)n >= DVX_SIM_WIRE_ADDR_MAX) {
		buf[0] = 0;
		return -ENAMETOOLONG;
	}
	return 0;
}

static int parse_port(const char *s, uint16_t *port)
{
	unsigned long v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = v * 10 + (unsigned long)(*s - '0');
		if (v > 65535)
			return -EINVAL;
	}
	if (!v)
		return -EINVAL;
	*port = (uint16_t)v;
	return 0;
}

int dvx_sim_wire_addr_parse(const char *str, struct dvx_hal_sock_addr *a)
{
	char tmp[DVX_SIM_WIRE_ADDR_MAX];
	const char *p;
	char *e;
	size_t n;

	if (!a)
		return -EINVAL;
	memset(a, 0, sizeof(*a));
	if (!str)
		return -EINVAL;
	n = strnlen(str, DVX_SIM_WIRE_ADDR_MAX);
	if (n == DVX_SIM_WIRE_ADDR_MAX)
		return -EINVAL;
	if (!strncmp(str, "unix:", 5) || !strncmp(str, "abstract:", 9)) {
		a->family = str[0] == 'u' ? DVX_HAL_SOCK_UNIX : DVX_HAL_SOCK_ABSTRACT;
		p = strchr(str, ':') + 1;
		if (!*p || strlen(p) >= sizeof(a->path))
			goto bad;
		memcpy(a->path, p, strlen(p) + 1);
		return 0;
	}
	if (!strncmp(str, "tcp:", 4)) {
		memcpy(tmp, str + 4, n - 4 + 1);
		e = strrchr(tmp, ':');
		if (!e)
			return -EINVAL;
		*e = 0;
		a->family = DVX_HAL_SOCK_IP4;
		if (inet_pton(AF_INET, tmp, a->ip) != 1 || parse_port(e + 1, &a->port))
			goto bad;
		return 0;
	}
	if (!strncmp(str, "tcp6:[", 6)) {
		char *pct;

		memcpy(tmp, str + 6, n - 6 + 1);
		e = strstr(tmp, "]:");
		if (!e)
			return -EINVAL;
		*e = 0;
		a->family = DVX_HAL_SOCK_IP6;
		pct = strchr(tmp, '%');
		if (pct) {
			uint16_t sc;

			*pct = 0;
			/* a numeric scope (an interface index) only */
			if (parse_port(pct + 1, &sc))
				goto bad;
			a->scope_id = sc;
		}
		if (inet_pton(AF_INET6, tmp, a->ip) != 1 || parse_port(e + 2, &a->port))
			goto bad;
		return 0;
	}
	return -EINVAL;
bad:
	memset(a, 0, sizeof(*a));
	return -EINVAL;
}

int dvx_sim_wire_addr(struct dvx_sim_fabric *fab, char *buf, size_t len)
{
	struct sim_wire *w = wire_of(fab);

	if (!w || !buf || !len)
		return -EINVAL;
	if (w->lfd < 0)
		return -ENOTCONN;
	return dvx_sim_wire_addr_format(&w->laddr, buf, len);
}

int dvx_sim_wire_add_remote_nic(struct dvx_sim_fabric *fab, int rank,
				const struct dvx_sim_nic_cfg *cfg)
{
	struct sim_fabric *f = fab ? sim_fab_of(fab) : NULL;
	struct sim_wire *w = wire_of(fab);
	int rc = 0;

	if (!w || !cfg || rank < 0 || rank >= w->cfg.nranks || rank == w->cfg.rank ||
	    cfg->nports < 1 || cfg->nports > DVX_SIM_MAX_PORTS)
		return -EINVAL;
	pthread_mutex_lock(&f->lock);
	if (w->nremotes >= w->cfg.max_remote_nics) {
		rc = -ENOSPC;
	} else {
		w->remotes[w->nremotes].rank = rank;
		w->remotes[w->nremotes].cfg = *cfg;
		w->nremotes++;
	}
	pthread_mutex_unlock(&f->lock);
	return rc;
}

int dvx_sim_wire_get_stats(struct dvx_sim_fabric *fab, struct dvx_sim_wire_stats *st)
{
	struct sim_wire *w = wire_of(fab);

	if (!w || !st)
		return -EINVAL;
	pthread_mutex_lock(&sim_fab_of(fab)->lock);
	*st = w->st;
	st->stalls = sim_fab_of(fab)->wire_frozen;
	st->stalled_ns = sim_fab_of(fab)->wire_frozen_ns;
	st->window_max = sim_fab_of(fab)->wire_window_max;
	st->kicks = atomic_load(&sim_fab_of(fab)->kicks);
	st->retry_exceeded = sim_fab_of(fab)->wretry_exc_n;
	st->last_retry_exc = sim_fab_of(fab)->wretry_exc;
	st->stale_answers = sim_fab_of(fab)->wstale;
	st->unread_waits = sim_fab_of(fab)->wunread;
	st->passes = sim_fab_of(fab)->wpasses;
	st->pass_ns = sim_fab_of(fab)->wpass_ns;
	st->helps = sim_fab_of(fab)->helps;
	st->help_busy = __atomic_load_n(&sim_fab_of(fab)->help_busy, __ATOMIC_RELAXED);
	st->peeks = sim_fab_of(fab)->peeks;
	st->peek_hits = sim_fab_of(fab)->peek_hits;
	st->sleeps = __atomic_load_n(&sim_fab_of(fab)->sleeps, __ATOMIC_RELAXED);
	st->slept_ns = __atomic_load_n(&sim_fab_of(fab)->slept_ns, __ATOMIC_RELAXED);
	st->rings = 0;
	for (int32_t r = 0; r < w->cfg.nranks; r++)
		st->rings += w->peers[r].up && w->peers[r].ring;
	pthread_mutex_unlock(&sim_fab_of(fab)->lock);
	return 0;
}

/* ---- routing ------------------------------------------------------------------------ */

static uint32_t wire_route(struct sim_fabric *fab, const struct sim_qp *qp)
{
	const struct sim_wire *w = fab->wire;
	uint8_t ll = qp->nic->cfg.port[qp->port - 1].link_layer;
	uint32_t i, p;

	for (i = 0; i < w->nremotes; i++) {
		const struct dvx_sim_nic_cfg *c = &w->remotes[i].cfg;

		for (p = 1; p <= c->nports; p++) {
			const struct dvx_sim_port_cfg *pc = &c->port[p - 1];

			if (pc->link_layer != ll)
				continue;
			if (ll == DVX_LINK_LAYER_IB ? pc->lid == qp->rlid :
			    dvx_sim_cfg_has_gid(c, p, qp->rgid) && !memcmp(pc->mac, qp->rmac, 6))
				return (uint32_t)w->remotes[i].rank + 1;
		}
	}
	return 0;
}

static bool wire_rmac(struct sim_fabric *fab, const uint8_t gid[16], uint8_t mac[6])
{
	const struct sim_wire *w = fab->wire;
	uint32_t i, p;

	for (i = 0; w && i < w->nremotes; i++) {
		const struct dvx_sim_nic_cfg *c = &w->remotes[i].cfg;

		for (p = 1; p <= c->nports; p++)
			if (c->port[p - 1].link_layer == DVX_LINK_LAYER_ETHERNET &&
			    dvx_sim_cfg_has_gid(c, p, gid)) {
				memcpy(mac, c->port[p - 1].mac, 6);
				return true;
			}
	}
	return false;
}

/* ---- frames --------------------------------------------------------------------------- */

static void frame_put(uint8_t *b, const struct sim_wire_frame *f)
{
	memset(b, 0, SIM_WIRE_HDR);
	dvx_put_be32(b, WIRE_MAGIC);
	b[4] = WIRE_VERSION;
	b[5] = f->type;
	b[6] = f->opcode;
	b[7] = f->opmod;
	b[8] = f->fm_ce_se;
	b[9] = f->synd;
	b[10] = f->vendor;
	b[11] = f->link_layer;
	b[12] = f->src_nic;
	dvx_put_be32(b + 16, f->dst_qpn);
	dvx_put_be32(b + 20, f->src_qpn);
	dvx_put_be32(b + 24, f->psn);
	dvx_put_be32(b + 28, f->rkey);
	dvx_put_be64(b + 32, f->raddr);
	dvx_put_be64(b + 40, f->len);
	dvx_put_be64(b + 48, f->a);
	dvx_put_be64(b + 56, f->b);
	dvx_put_be64(b + 64, f->swap_mask);
	dvx_put_be64(b + 72, f->cmp_mask);
	memcpy(b + 80, f->imm, 4);
	dvx_put_be16(b + 84, f->dlid);
	dvx_put_be16(b + 86, f->slid);
	memcpy(b + 88, f->dgid, 16);
	memcpy(b + 104, f->dmac, 6);
	dvx_put_be32(b + 112, f->payload);
	dvx_put_be32(b + 116, f->una);
}

/* Decode a header; false when it is not one (the connection is then dropped). */
static bool frame_get(const uint8_t *b, struct sim_wire_frame *f, uint32_t max_msg)
{
	memset(f, 0, sizeof(*f));
	if (dvx_get_be32(b) != WIRE_MAGIC || b[4] != WIRE_VERSION || b[5] < SIM_WIRE_REQ ||
	    b[5] > SIM_WIRE_NAK)
		return false;
	f->type = b[5];
	f->opcode = b[6];
	f->opmod = b[7];
	f->fm_ce_se = b[8];
	f->synd = b[9];
	f->vendor = b[10];
	f->link_layer = b[11];
	f->src_nic = b[12];
	f->dst_qpn = dvx_get_be32(b + 16);
	f->src_qpn = dvx_get_be32(b + 20);
	f->psn = dvx_get_be32(b + 24);
	f->rkey = dvx_get_be32(b + 28);
	f->raddr = dvx_get_be64(b + 32);
	f->len = dvx_get_be64(b + 40);
	f->a = dvx_get_be64(b + 48);
	f->b = dvx_get_be64(b + 56);
	f->swap_mask = dvx_get_be64(b + 64);
	f->cmp_mask = dvx_get_be64(b + 72);
	memcpy(f->imm, b + 80, 4);
	f->dlid = dvx_get_be16(b + 84);
	f->slid = dvx_get_be16(b + 86);
	memcpy(f->dgid, b + 88, 16);
	memcpy(f->dmac, b + 104, 6);
	f->payload = dvx_get_be32(b + 112);
	f->una = dvx_get_be32(b + 116) & 0xffffffu;
	f->psn &= 0xffffffu;
	/* a request's payload is its message, an ACK's a READ's data: never more; a
	 * WRITE's or SEND's message is all there (its length is the bytes that follow) */
	if (f->type == SIM_WIRE_REQ && f->payload != f->len &&
	    (f->opcode == SIM_OP_RDMA_WRITE || f->opcode == SIM_OP_RDMA_WRITE_IMM ||
	     f->opcode == SIM_OP_SEND || f->opcode == SIM_OP_SEND_IMM))
		return false;
	return f->payload <= max_msg && (!f->payload || f->payload == f->len);
}

/* the peer waits on its socket for bytes in its ring: one byte wakes it */
static void ring_wake(struct sim_wire *w, struct sim_wpeer *p)
{
	static const uint8_t one = 1;
	struct dvx_hal_iov iov = { (void *)(uintptr_t)&one, 1 };
	size_t sent = 0;
	int rc = dvx_hal_sock_send(w->hal, p->fd, &iov, 1, &sent);

	/* a full socket holds wake-ups not read yet: this one is not needed */
	if (rc && rc != -EAGAIN)
		peer_down(w, p);
}

/* publish what the ring holds; wake the peer if it waits */
static void ring_publish(struct sim_wire *w, struct sim_wpeer *p)
{
	if (dvx_sim_ring_publish(&p->rtx))
		ring_wake(w, p);
}

/*
 * Of the send buffer (this process's own frames: trusted), the bytes to write into
 * @room: the rest of a frame larger than the ring that streams through it, then the
 * frames that fit whole, so that the peer finds whole frames in its ring and reads them
 * in place (rx_direct()); a first frame larger than the ring starts to stream (*@part:
 * what is then left of it).
 */
static uint64_t tx_whole(const struct sim_wpeer *p, uint64_t room, uint64_t *part)
{
	uint64_t have = p->tx_tail - p->tx_head, n = 0, len;
	const uint8_t *t = p->tx + p->tx_head;

	*part = 0;
	if (p->tx_part) {
		n = p->tx_part < room ? p->tx_part : room;
		if (n < p->tx_part) {
			*part = p->tx_part - n;
			return n;
		}
	}
	while (n + SIM_WIRE_HDR <= have) {
		len = SIM_WIRE_HDR + (uint64_t)dvx_get_be32(t + n + 112);
		if (n + len > room) {
			if (!n && room && len > p->rtx.size) {
				*part = len - room;
				return room;
			}
			break;
		}
		n += len;
	}
	return n;
}

/* what the send buffer holds into the ring, as much as fits (whole frames) */
static void ring_flush(struct sim_wire *w, struct sim_wpeer *p)
{
	uint64_t room, n, part;

	if (p->tx_head < p->tx_tail) {
		if (dvx_sim_ring_room(&p->rtx, &room)) {
			peer_down(w, p);	/* its tail is not one it can have */
			return;
		}
		n = tx_whole(p, room, &part);
		if (n && !dvx_sim_ring_write(&p->rtx, p->tx + p->tx_head, n)) {
			p->tx_head += n;
			p->tx_part = part;
			w->st.bytes_tx += n;
		}
		if (p->tx_head == p->tx_tail)
			p->tx_head = p->tx_tail = p->tx_part = 0;
	}
	ring_publish(w, p);
}

static void tx_flush(struct sim_wire *w, struct sim_wpeer *p)
{
	if (p->up && p->ring) {
		ring_flush(w, p);
		return;
	}
	while (p->up && p->tx_head < p->tx_tail) {
		struct dvx_hal_iov iov = { p->tx + p->tx_head, p->tx_tail - p->tx_head };
		size_t sent = 0;
		int rc = dvx_hal_sock_send(w->hal, p->fd, &iov, 1, &sent);

		if (rc == -EAGAIN)
			return;
		if (rc) {
			peer_down(w, p);
			return;
		}
		p->tx_head += sent;
		w->st.bytes_tx += sent;
	}
	p->tx_head = p->tx_tail = 0;
}

static uint64_t tx_free(const struct sim_wire *w, const struct sim_wpeer *p)
{
	return w->tx_cap - (p->tx_tail - p->tx_head);
}

static int wire_room(struct sim_fabric *fab, uint32_t rank, uint64_t payload)
{
	struct sim_wire *w = fab->wire;
	struct sim_wpeer *p = &w->peers[rank];

	if (p->up && tx_free(w, p) < SIM_WIRE_HDR + payload)
		tx_flush(w, p);
	return p->up && tx_free(w, p) >= SIM_WIRE_HDR + payload;
}

/* cut-through (cfg.stream_bytes): whether @f is a frame that the peer may execute
 * before it is whole, so one written a piece at a time: a request that WRITEs at least
 * that many bytes (the receiver's rule, stream_ok()) */
static bool stream_frame(const struct sim_wire *w, const struct sim_wire_frame *f)
{
	return f->type == SIM_WIRE_REQ && f->payload >= w->cfg.stream_bytes &&
	       (f->opcode == SIM_OP_RDMA_WRITE || f->opcode == SIM_OP_RDMA_WRITE_IMM);
}

/* the piece_us fault: the sender stands still (a process off its CPU mid-frame) */
static void piece_pause(uint32_t us)
{
	struct timespec ts = { us / 1000000u, (long)(us % 1000000u) * 1000 };

	nanosleep(&ts, NULL);
}

/* whether a frame's pieces include device memory (read through DMA callbacks) */
static bool segs_dma(const struct sim_wseg *seg, unsigned nseg)
{
	unsigned i;

	for (i = 0; i < nseg; i++)
		if (seg[i].dma)
			return true;
	return false;
}

static int wire_send(struct sim_fabric *fab, uint32_t rank, const struct sim_wire_frame *f,
		      const struct sim_wseg *seg, unsigned nseg, int reserve)
{
	struct sim_wire *w = fab->wire;
	struct sim_wpeer *p;
	uint64_t need = SIM_WIRE_HDR + f->payload;
	uint8_t *t;
	unsigned i;

	if (!w || rank >= (uint32_t)w->cfg.nranks || rank == (uint32_t)w->cfg.rank)
		return -ENOTCONN;
	p = &w->peers[rank];
	if (!p->up)
		return -ENOTCONN;
	if (tx_free(w, p) < need + (reserve ? SIM_WIRE_HDR + (uint64_t)w->cfg.max_msg : 0)) {
		tx_flush(w, p);
		if (tx_free(w, p) < need + (reserve ? SIM_WIRE_HDR + (uint64_t)w->cfg.max_msg : 0))
			return p->up ? -EAGAIN : -ENOTCONN;
	}
	if (p->ring && p->tx_head == p->tx_tail && !segs_dma(seg, nseg)) {
		uint64_t room;
		uint8_t h[SIM_WIRE_HDR];

		if (dvx_sim_ring_room(&p->rtx, &room)) {
			peer_down(w, p);	/* its tail is not one it can have */
			return -ENOTCONN;
		}
		/* straight into the ring when nothing waits before it (one copy fewer);
		 * published at the end of the pass. Not for data in device memory: that
		 * is read through its DMA callbacks into the frame below */
		if (room >= need) {
			frame_put(h, f);
			(void)dvx_sim_ring_write(&p->rtx, h, SIM_WIRE_HDR);
			for (i = 0; i < nseg; i++) {
				uint32_t o, k;

				if (!stream_frame(w, f)) {
					(void)dvx_sim_ring_write(&p->rtx, seg[i].p, seg[i].len);
					continue;
				}
				/* cut-through: a piece at a time, so that the peer places
				 * the first bytes while the rest are written */
				for (o = 0; o < seg[i].len; o += k) {
					k = seg[i].len - o < WIRE_STREAM_PIECE ?
					    seg[i].len - o : WIRE_STREAM_PIECE;
					(void)dvx_sim_ring_write(&p->rtx, seg[i].p + o, k);
					ring_publish(w, p);
					/* a wake-up that failed took the peer down, and
					 * its ring with it: the request is lost */
					if (!p->up)
						return -ENOTCONN;
					if (fab->faults.piece_us)
						piece_pause(fab->faults.piece_us);
				}
			}
			w->st.bytes_tx += need;
			/* a large frame goes out at once, so the peer copies it out while this
			 * pass copies the next one in (two channels' messages overlap) */
			if (need >= WIRE_PUBLISH_NOW)
				ring_publish(w, p);
			goto sent;
		}
		/* a request that would fit the ring waits for room there rather than
		 * being copied twice (into the send buffer, later into the ring); the
		 * requester sends it in a later pass, as when the send buffer is full.
		 * Answers, and frames larger than the ring, take the send buffer */
		if (reserve && need <= p->rtx.size)
			return -EAGAIN;
	}
	if (p->tx_head && p->tx_tail + need > w->tx_cap) {
		memmove(p->tx, p->tx + p->tx_head, p->tx_tail - p->tx_head);
		p->tx_tail -= p->tx_head;
		p->tx_head = 0;
	}
	t = p->tx + p->tx_tail;
	frame_put(t, f);
	t += SIM_WIRE_HDR;
	for (i = 0; i < nseg; i++) {
		/* data in device memory: read through its DMA callbacks into the frame; a
		 * failed read queues nothing */
		if (seg[i].dma) {
			if (dvx_sim_dma_read(fab, seg[i].dma, t, seg[i].dptr, seg[i].len))
				return -EIO;
		} else {
			memcpy(t, seg[i].p, seg[i].len);
		}
		t += seg[i].len;
	}
	p->tx_tail += need;
sent:
	w->st.frames_tx++;
	if (f->type == SIM_WIRE_REQ)
		w->st.requests++;
	if (reserve == SIM_WIRE_RETRANSMIT)
		w->st.retransmits++;
	/* written at the end of the pass (wire_flush()), with the others of the pass */
	return 0;
}

static void wire_flush(struct sim_fabric *fab)
{
	struct sim_wire *w = fab->wire;
	int32_t r;

	for (r = 0; r < w->cfg.nranks; r++)
		if (w->peers[r].up && (w->peers[r].ring ||
				       w->peers[r].tx_tail > w->peers[r].tx_head))
			tx_flush(w, &w->peers[r]);
}

/* ---- progress ------------------------------------------------------------------------ */

/* execute one frame: SIM_WIRE_HELD when the reorder mode placed its message in part and
 * holds it (the frame stays where it is, and nothing after it from @rank runs before its
 * next pass executes it whole: docs/sim-wire.md "Reorder mode"); SIM_WIRE_LATER when its
 * payload, still arriving, stopped coming (not executed); else SIM_WIRE_DONE */
static int rx_frame(struct sim_fabric *fab, uint32_t rank, const struct sim_wpay *payload,
		    const struct sim_wire_frame *f)
{
	struct sim_wire *w = fab->wire;
	int rc;

	w->peers[rank].last_rx = fab->wire_last_pass;	/* within a pass of now: no clock read a frame */
	if (f->type != SIM_WIRE_REQ) {
		if (dvx_sim_exec_wire_response(fab, f, payload))
			return SIM_WIRE_HELD;
		w->st.frames_rx++;
		return SIM_WIRE_DONE;
	}
	rc = dvx_sim_exec_wire_request(fab, rank,
				       dvx_sim_qp_by_path(fab, f->link_layer, f->dlid, f->dgid,
							  f->dmac, f->dst_qpn),
				       f, payload);
	if (rc == SIM_WIRE_HELD || rc == SIM_WIRE_LATER)
		return rc;
	/* a frame executed before it was whole counts once it is (rx_direct()) */
	if (!payload->more)
		w->st.frames_rx++;
	if (rc == SIM_WIRE_DUP)
		w->st.duplicates++;
	else if (rc == SIM_WIRE_DROPPED) {
		w->st.dropped++;
		if (fab->wdrop.why < DVX_SIM_WDROP_NKINDS)
			w->st.drop_why[fab->wdrop.why]++;
		w->st.last_drop = fab->wdrop;
	}
	return SIM_WIRE_DONE;
}

/*
 * Cut-through (docs/sim-wire.md): whether the frame at @p's tail, not all there yet, is
 * executed now, its payload placed as it arrives: a request that WRITEs a large payload
 * (stream_frame()), not one whose rest stopped coming before, and not in the reorder
 * mode (which places a message's parts in its own order)
 */
static bool stream_ok(const struct sim_fabric *fab, const struct sim_wpeer *p,
		      const struct sim_wire_frame *f)
{
	return stream_frame(fab->wire, f) && !fab->ro_on &&
	       !(p->nostream && p->nostream_at == p->rrx.pos);
}

/* sim_wpay.more() of a payload arriving in a ring: waits for more than @have of its
 * bytes, at most cfg.stream_wait_us after the last ones came and 50 times that after the
 * frame's execution began; how many are there now */
static uint64_t stream_more(const struct sim_wpay *pay, uint64_t have)
{
	struct sim_wstream *s = pay->ctx;
	uint64_t avail, t0 = 0;
	unsigned spin = 0;

	s->asked = 1;
	for (;;) {
		if (dvx_sim_ring_avail(&s->p->rrx, &avail))
			return have;	/* a head it cannot have: the next look drops it */
		avail = avail > SIM_WIRE_HDR ? avail - SIM_WIRE_HDR : 0;
		if (avail > have)
			return avail;
		if (!(++spin & 63)) {
			uint64_t now = dvx_sim_now_ns();

			if (!t0)
				t0 = now;
			else if (now - t0 > s->wait_ns)
				return have;
			if (now - s->t0 > 50 * s->wait_ns)
				return have;
		}
		dvx_host_cpu_relax();
	}
}

enum {
	RXD_NONE,	/* no whole frame in the ring yet */
	RXD_DONE,	/* one executed in place and taken */
	RXD_HELD,	/* one held by the reorder mode: now in the receive buffer */
	RXD_BUFFER,	/* one larger than the ring: through the receive buffer */
	RXD_DOWN,	/* the peer broke the ring or its header: gone */
};

/* a frame at @p's tail left until it is whole, the peer's head at @avail bytes beyond the
 * tail: the looks and the idle wait wait for that head to move */
static int rx_wait(struct sim_wpeer *p, uint64_t avail)
{
	p->wait_at = p->rrx.pos;
	p->wait_head = p->rrx.pos + avail;
	return RXD_NONE;
}

/*
 * The frame at the tail of @p's ring, executed where it lies (docs/sim-wire.md, "The
 * shared-memory ring"): its header copied out and decoded, and every decision made on
 * that private copy (the peer may rewrite the ring at any time); the payload's bytes
 * are taken once from the ring, in one or two pieces, by exec.c straight into the
 * memory they are for. A frame the reorder mode holds goes into the receive buffer (the
 * header as decoded, the payload as it is now) and is taken from there in the next
 * pass; one larger than the ring is left to the receive buffer (RXD_BUFFER).
 */
static int rx_direct(struct sim_fabric *fab, uint32_t rank, struct sim_wpeer *p)
{
	struct sim_wire *w = fab->wire;
	uint8_t h[SIM_WIRE_HDR];
	struct sim_wire_frame f;
	struct sim_wstream ws;
	struct sim_wpay pay;
	uint64_t avail, len;
	bool held;
	int rc;

	if (dvx_sim_ring_avail(&p->rrx, &avail)) {
		peer_down(w, p);	/* a head it cannot have */
		return RXD_DOWN;
	}
	if (p->xdone && p->xdone_at == p->rrx.pos) {
		/* executed already, on the header as it was then: taken once whole */
		if (avail < p->xdone_len)
			return rx_wait(p, avail);
		p->xdone = 0;
		dvx_sim_ring_consume(&p->rrx, p->xdone_len);
		w->st.frames_rx++;
		return RXD_DONE;
	}
	if (avail < SIM_WIRE_HDR)
		return RXD_NONE;	/* a header comes whole (with its first piece) */
	dvx_sim_ring_peek(&p->rrx, 0, h, SIM_WIRE_HDR);
	if (!frame_get(h, &f, w->cfg.max_msg)) {
		peer_down(w, p);	/* not our protocol: stop listening to it */
		return RXD_DOWN;
	}
	len = SIM_WIRE_HDR + (uint64_t)f.payload;
	if (len > p->rrx.size)
		return RXD_BUFFER;
	memset(&pay, 0, sizeof(pay));
	if (avail < len) {
		/* the rest is coming (whole frames fit the ring); a large WRITE's bytes are
		 * placed as they come (cut-through) */
		if (!stream_ok(fab, p, &f))
			return rx_wait(p, avail);
		ws.p = p;
		ws.t0 = dvx_sim_now_ns();
		ws.wait_ns = (uint64_t)w->cfg.stream_wait_us * 1000u;
		ws.asked = 0;
		pay.have = avail - SIM_WIRE_HDR;
		pay.more = stream_more;
		pay.ctx = &ws;
	}
	dvx_sim_ring_span(&p->rrx, SIM_WIRE_HDR, f.payload, &pay.p[0], &pay.n[0], &pay.p[1]);
	pay.n[1] = f.payload - pay.n[0];
	p->busy = 1;
	rc = rx_frame(fab, rank, &pay, &f);
	p->busy = 0;
	held = rc == SIM_WIRE_HELD;
	if (p->shm_dead) {
		/* it went down meanwhile (an answer that could not be sent ...) */
		munmap(p->shm_dead, p->shm_len);
		p->shm_dead = NULL;
		return RXD_DOWN;
	}
	if (!p->up)
		return RXD_DOWN;
	if (pay.more) {
		if (rc == SIM_WIRE_LATER) {
			/* its rest stopped coming: executed when it is whole */
			w->st.stream_late++;
			p->nostream = 1;
			p->nostream_at = p->rrx.pos;
			if (dvx_sim_ring_avail(&p->rrx, &avail))
				return RXD_NONE;	/* the next look drops it */
			return rx_wait(p, avail);
		}
		if (ws.asked)
			w->st.streamed++;	/* its bytes placed as they came */
		if (dvx_sim_ring_avail(&p->rrx, &avail)) {
			peer_down(w, p);
			return RXD_DOWN;
		}
		if (avail < len) {
			/* executed without its payload (a duplicate, an RNR, a NAK, a drop) */
			p->xdone = 1;
			p->xdone_at = p->rrx.pos;
			p->xdone_len = len;
			return RXD_DONE;
		}
		w->st.frames_rx++;
	}
	if (held) {
		/* executed again whole in the next pass, from the receive buffer: the
		 * header decided on, the payload's bytes as the ring holds them now */
		memcpy(p->rx, h, SIM_WIRE_HDR);
		dvx_sim_ring_peek(&p->rrx, SIM_WIRE_HDR, p->rx + SIM_WIRE_HDR, f.payload);
		p->rx_head = 0;
		p->rx_tail = len;
	}
	dvx_sim_ring_consume(&p->rrx, len);
	return held ? RXD_HELD : RXD_DONE;
}

/*
 * Read what @p sent, as much as the buffer takes in one call, and execute each complete
 * frame in it (at most WIRE_FRAMES_PER_ROUND); returns whether bytes came. With a ring
 * and the receive buffer empty, whole frames are executed where they lie (rx_direct()).
 */
static bool rx_peer(struct sim_fabric *fab, uint32_t rank, struct sim_wpeer *p)
{
	struct sim_wire *w = fab->wire;
	uint64_t cap = rx_cap_of(&w->cfg);
	struct sim_wire_frame f;
	unsigned frames = 0;
	bool moved = false;

	while (p->up && frames < WIRE_FRAMES_PER_ROUND) {
		uint64_t have = p->rx_tail - p->rx_head;
		size_t got = 0;
		int rc;

		/* the receive buffer empty: whole frames are executed in the ring itself */
		if (p->ring && !have) {
			rc = rx_direct(fab, rank, p);
			if (rc == RXD_DONE) {
				moved = true;
				frames++;
				continue;
			}
			if (rc == RXD_DOWN)
				return true;
			if (rc == RXD_HELD) {
				moved = true;
				break;
			}
			if (rc == RXD_NONE)
				break;
			/* RXD_BUFFER: through the receive buffer, as below */
		}
		if (have >= SIM_WIRE_HDR) {
			const uint8_t *b = p->rx + p->rx_head;

			if (!frame_get(b, &f, w->cfg.max_msg)) {
				peer_down(w, p);	/* not our protocol: stop listening to it */
				return true;
			}
			if (have >= SIM_WIRE_HDR + (uint64_t)f.payload) {
				struct sim_wpay pay = { { b + SIM_WIRE_HDR, NULL },
							{ f.payload, 0 }, 0, NULL, NULL };

				if (rx_frame(fab, rank, &pay, &f) == SIM_WIRE_HELD) {
					moved = true;	/* held: again in the next pass */
					break;
				}
				p->rx_head += SIM_WIRE_HDR + (uint64_t)f.payload;
				frames++;
				continue;
			}
		}
		/* more is needed: what is left to the front, then read */
		if (p->rx_head) {
			memmove(p->rx, p->rx + p->rx_head, have);
			p->rx_head = 0;
			p->rx_tail = have;
		}
		if (p->ring) {
			uint64_t g = 0;

			/* a head it cannot have: a peer that broke the ring is gone */
			if (dvx_sim_ring_read(&p->rrx, p->rx + p->rx_tail, cap - p->rx_tail, &g)) {
				peer_down(w, p);
				return true;
			}
			if (!g)
				break;
			moved = true;
			p->rx_tail += g;
			continue;
		}
		rc = dvx_hal_sock_recv(w->hal, p->fd, p->rx + p->rx_tail, cap - p->rx_tail, &got);
		if (rc == -EAGAIN)
			break;
		if (rc || !got) {
			/* the process ended or died: its QPs' requests are lost from now on */
			peer_down(w, p);
			return true;
		}
		moved = true;
		p->rx_tail += got;
	}
	if (p->rx_head == p->rx_tail)
		p->rx_head = p->rx_tail = 0;
	return moved || frames;
}

/* a ring peer's socket: read the wake-up bytes; false at its end (the process ended or
 * died: the caller reads what its ring still holds, then takes it down) */
static bool wake_drain(struct sim_wire *w, struct sim_wpeer *p)
{
	uint8_t b[64];

	for (;;) {
		size_t got = 0;
		int rc = dvx_hal_sock_recv(w->hal, p->fd, b, sizeof(b), &got);

		if (rc == -EAGAIN)
			return true;
		if (rc || !got)
			return false;
	}
}

/* rounds of a ring's last frames read at its peer's end (bounded: a peer that closed
 * its socket and still writes is not waited for) */
#define WIRE_RING_LAST 4096u

static bool wire_progress(struct sim_fabric *fab)
{
	struct sim_wire *w = fab->wire;
	uint32_t np = 0, npeers, k;
	bool moved = false;
	int32_t r;

	for (r = 0; r < w->cfg.nranks; r++) {
		struct sim_wpeer *p = &w->peers[r];

		if (!p->up)
			continue;
		w->pfd[np].fd = p->fd;
		w->pfd[np].events = (int16_t)(DVX_HAL_POLL_IN |
					      (!p->ring && p->tx_tail > p->tx_head ?
					       DVX_HAL_POLL_OUT : 0));
		w->pfd[np].revents = 0;
		w->pmap[np++] = (uint32_t)r;
	}
	npeers = np;
	/* joins on demand: the listener that stays open, and the hellos coming in */
	if (w->lfd >= 0) {
		w->pfd[np].fd = w->lfd;
		w->pfd[np].events = DVX_HAL_POLL_IN;
		w->pfd[np++].revents = 0;
		for (r = 0; r < w->cfg.nranks; r++)
			if (w->acc[r].fd >= 0) {
				w->pfd[np].fd = w->acc[r].fd;
				w->pfd[np].events = DVX_HAL_POLL_IN;
				w->pfd[np++].revents = 0;
			}
	}
	if (!np)
		return false;
	/* peers on rings only: their sockets hold wake-ups and the end, not frames, and a
	 * listener's joins are rare, so the poll (a system call, an eighth of the plugin's
	 * time between two processes in a profile, 2026-11-29) is left out of most rounds
	 * (the rings are read in every one; a join waits a few rounds at most, and a wait
	 * that a socket ended polls them all in the next round) */
	if (!w->sockets && ++w->rounds % WIRE_SOCK_EVERY) {
		for (k = 0; k < npeers && w->peers[w->pmap[k]].ring; k++)
			;
		if (k == npeers) {
			for (k = 0; k < np; k++)
				w->pfd[k].revents = 0;
			goto polled;
		}
	}
	w->sockets = 0;
	w->st.polls++;
	if (dvx_hal_sock_poll(w->hal, w->pfd, np, 0) <= 0) {
		/* nothing new; frames buffered by the last round may still be there */
		for (k = 0; k < np; k++)
			w->pfd[k].revents = 0;
	}
polled:
	for (k = npeers; k < np; k++)
		if (w->pfd[k].revents) {
			moved |= accept_step(w);
			break;
		}
	for (k = 0; k < npeers; k++) {
		struct sim_wpeer *p = &w->peers[w->pmap[k]];
		int16_t ev = w->pfd[k].revents;

		if (p->ring) {
			/* the socket: wake-ups to drop, or the end of the peer; at the end, what
			 * it published before it went is read first, as a socket's bytes come
			 * before its end of file (its last answers are in the ring) */
			if ((ev & (DVX_HAL_POLL_IN | DVX_HAL_POLL_HUP | DVX_HAL_POLL_ERR)) &&
			    !wake_drain(w, p)) {
				unsigned i;

				for (i = 0; i < WIRE_RING_LAST && p->up &&
					    rx_peer(fab, w->pmap[k], p); i++)
					;
				if (p->up)
					peer_down(w, p);
				moved = true;
				continue;
			}
			/* the ring: looked at every round (a frame may be there unwoken) */
			moved |= rx_peer(fab, w->pmap[k], p);
			if (p->up && p->tx_tail > p->tx_head) {
				uint64_t before = p->tx_tail - p->tx_head;

				tx_flush(w, p);
				moved |= p->tx_tail - p->tx_head != before;
			}
			continue;
		}
		/* frames left in the buffer by the last round's bound count as arrived */
		if ((ev & (DVX_HAL_POLL_IN | DVX_HAL_POLL_HUP | DVX_HAL_POLL_ERR)) ||
		    p->rx_tail - p->rx_head >= SIM_WIRE_HDR)
			moved |= rx_peer(fab, w->pmap[k], p);
		if (ev & DVX_HAL_POLL_OUT) {
			uint64_t before = p->tx_tail - p->tx_head;

			tx_flush(w, p);
			moved |= p->tx_tail - p->tx_head != before;
		}
	}
	return moved;
}

/*
 * The progress thread's look between idle passes (fabric.c sim_peek()): true when a pass
 * has something of the wire's to do that a look can see: a frame in a ring, bytes read
 * and not executed, bytes waiting to go, a socket that said something. A peer on a
 * socket (not a ring) is only seen by a poll: true, the whole pass polls it.
 */
static bool wire_pending(struct sim_fabric *fab)
{
	struct sim_wire *w = fab->wire;
	uint64_t avail;
	int32_t r;

	if (!w || w->sockets)
		return true;
	for (r = 0; r < w->cfg.nranks; r++) {
		const struct sim_wpeer *p = &w->peers[r];

		if (!p->up)
			continue;
		if (!p->ring || p->busy || p->tx_head < p->tx_tail || p->rx_tail > p->rx_head)
			return true;
		if (dvx_sim_ring_avail(&p->rrx, &avail))
			return true;
		/* bytes, but for a frame left to be whole with no more come */
		if (avail && (p->wait_at != p->rrx.pos || p->wait_head != p->rrx.pos + avail))
			return true;
	}
	return false;
}

static void wire_close(struct sim_fabric *fab)
{
	struct sim_wire *w = fab->wire;
	int32_t r;

	for (r = 0; r < w->cfg.nranks; r++) {
		struct sim_wpeer *p = &w->peers[r];

		if (p->fd >= 0)
			dvx_hal_sock_close(w->hal, p->fd);
		p->fd = -1;
		p->up = 0;
		if (p->shm)
			munmap(p->shm, p->shm_len);
		p->shm = NULL;
		p->ring = 0;
		if (w->acc[r].fd >= 0)
			acc_close(w, &w->acc[r], false);
	}
	close_listener(w);
	w->connected = 0;
	fab->wire = NULL;
	fab->wire_ops = NULL;
	atomic_store(&fab->wire_on, 0);
}

int dvx_sim_wire_fini(struct dvx_sim_fabric *fab)
{
	struct sim_fabric *f = fab ? sim_fab_of(fab) : NULL;

	if (!f)
		return -EINVAL;
	pthread_mutex_lock(&f->lock);
	if (f->wire)
		wire_close(f);
	pthread_mutex_unlock(&f->lock);
	return 0;
}

/* the head of @p's ring that this side has seen: beyond the tail when a frame there was
 * left to be whole (rx_wait()); a wait ends when the peer publishes past it */
static uint64_t ring_seen(const struct sim_wpeer *p)
{
	return p->wait_at == p->rrx.pos ? p->wait_head : p->rrx.pos;
}

static bool wire_idle_wait(struct sim_fabric *fab, uint64_t ns)
{
	struct dvx_hal_pollfd pfd[64];
	const struct dvx_hal *hal;
	struct sim_wire *w;
	unsigned n = 0, kick = 64, i;
	bool armed = false, rings = false, sock = false, waited;
	int32_t r;

	pthread_mutex_lock(&fab->lock);
	w = fab->wire;
	hal = w ? w->hal : NULL;
	if (w && fab->kick_fd >= 0) {
		/* a doorbell's kick (dvx_sim_kick()) */
		kick = n;
		pfd[n].fd = fab->kick_fd;
		pfd[n].events = DVX_HAL_POLL_IN;
		pfd[n++].revents = 0;
	}
	if (w && w->lfd >= 0) {
		/* a join wakes it; a pending hello is read in the next round anyway */
		pfd[n].fd = w->lfd;
		pfd[n].events = DVX_HAL_POLL_IN;
		pfd[n++].revents = 0;
		for (r = 0; r < w->cfg.nranks && n < 64; r++)
			if (w->acc[r].fd >= 0) {
				pfd[n].fd = w->acc[r].fd;
				pfd[n].events = DVX_HAL_POLL_IN;
				pfd[n++].revents = 0;
			}
	}
	for (r = 0; w && r < w->cfg.nranks && n < 64; r++)
		if (w->peers[r].up) {
			pfd[n].fd = w->peers[r].fd;
			pfd[n].events = DVX_HAL_POLL_IN;
			pfd[n++].revents = 0;
		}
	/* a doorbell already there: no wait at all */
	if (hal && kick < n && !dvx_sim_idle_arm(fab))
		hal = NULL;
	armed = hal && kick < n;
	/* a ring with bytes in it: no wait either; else its peer wakes the socket */
	rings = hal != NULL;
	for (r = 0; rings && w && r < w->cfg.nranks; r++)
		if (w->peers[r].up && w->peers[r].ring &&
		    !dvx_sim_ring_arm_at(&w->peers[r].rrx, ring_seen(&w->peers[r])))
			hal = NULL;
	pthread_mutex_unlock(&fab->lock);
	waited = hal != NULL;
	/* a socket closed meanwhile answers at once (NVAL/HUP): the next pass sees why.
	 * Every wait keeps its time-out: a doorbell rung by a poster that does not kick
	 * (GPU code, the mlx5 protocol used directly) is found at the next one */
	if (hal && n && dvx_hal_sock_poll(hal, pfd, n, ns) > 0)
		for (i = 0; i < n; i++)
			sock |= i != kick && pfd[i].revents;
	else if (hal && !n)
		dvx_hal_sleep_ns(hal, ns);
	if (armed)
		dvx_sim_idle_disarm(fab, pfd[kick].revents != 0);
	if (!rings && !sock)
		return waited;
	pthread_mutex_lock(&fab->lock);
	if (fab->wire == w && sock)
		w->sockets = 1;	/* a socket said something: the next round polls them all */
	for (r = 0; rings && fab->wire == w && r < w->cfg.nranks; r++)
		if (w->peers[r].up && w->peers[r].ring)
			dvx_sim_ring_disarm(&w->peers[r].rrx);
	pthread_mutex_unlock(&fab->lock);
	return waited;
}

/* how long process @rank has sent nothing this process executed (0: it never did) */
static uint64_t wire_quiet(struct sim_fabric *fab, uint32_t rank)
{
	const struct sim_wire *w = fab->wire;
	uint64_t t;

	if (!w || rank >= (uint32_t)w->cfg.nranks || !w->peers[rank].last_rx)
		return 0;
	t = dvx_sim_now_ns();
	return t > w->peers[rank].last_rx ? t - w->peers[rank].last_rx : 0;
}

/*
 * Where the frames queued so far towards process @rank end in its ring's byte stream
 * (the ring's head, written or not, and what the send buffer still holds before it: it
 * goes into the ring in order), and the ring's generation in *@gen; 0 when the peer is
 * not on a ring (a socket: what the peer has read is not known here).
 */
static uint64_t wire_pos(struct sim_fabric *fab, uint32_t rank, uint32_t *gen)
{
	const struct sim_wire *w = fab->wire;
	const struct sim_wpeer *p;

	*gen = 0;
	if (!w || rank >= (uint32_t)w->cfg.nranks)
		return 0;
	p = &w->peers[rank];
	if (!p->up || !p->ring)
		return 0;
	*gen = p->gen;
	return p->rtx.pos + (p->tx_tail - p->tx_head);
}

/*
 * Whether process @rank has not yet taken from its ring the bytes up to @end (from
 * wire_pos() in generation @gen): it has not run since (a NIC would have read them
 * long ago). False once it took them, when the ring is another one (the peer ended, or
 * came back), and when the tail it published is not one it can have.
 */
static bool wire_unread(struct sim_fabric *fab, uint32_t rank, uint64_t end, uint32_t gen)
{
	const struct sim_wire *w = fab->wire;
	const struct sim_wpeer *p;
	uint64_t tail;

	if (!w || !end || rank >= (uint32_t)w->cfg.nranks)
		return false;
	p = &w->peers[rank];
	if (!p->up || !p->ring || p->gen != gen)
		return false;
	tail = __atomic_load_n(&p->rtx.shm->tail, __ATOMIC_ACQUIRE);
	return tail < end && p->rtx.pos - tail <= p->rtx.size;
}

static const struct sim_wire_ops wire_ops = {
	.route = wire_route,
	.send = wire_send,
	.room = wire_room,
	.progress = wire_progress,
	.close = wire_close,
	.rmac = wire_rmac,
	.idle_wait = wire_idle_wait,
	.flush = wire_flush,
	.quiet = wire_quiet,
	.pos = wire_pos,
	.unread = wire_unread,
	.pending = wire_pending,
};
