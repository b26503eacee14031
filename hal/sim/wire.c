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
#include <errno.h>
#include <string.h>

#include "sim.h"
#include "ctrl.h"

#define WIRE_MAGIC 0x44565857u		/* "DVXW" */
#define WIRE_VERSION 1u
#define WIRE_HELLO 16u			/* magic, version, rank, nranks */
#define WIRE_FRAMES_PER_ROUND 16u	/* frames read from one peer per round */

struct sim_wpeer {
	int32_t fd;		/* -1: not connected, or gone */
	uint8_t up;
	uint8_t rsvd[3];
	uint8_t *rx;		/* SIM_WIRE_HDR + max_msg */
	uint64_t rx_got;
	uint64_t rx_need;
	uint8_t *tx;		/* tx_cap bytes; [tx_head, tx_tail) still to send */
	uint64_t tx_head;
	uint64_t tx_tail;
};

struct sim_wremote {
	int32_t rank;
	uint32_t rsvd;
	struct dvx_sim_nic_cfg cfg;
};

/* a connection accepted during set-up whose hello is not complete yet */
struct sim_wacc {
	int32_t fd;
	uint32_t got;
	uint8_t b[WIRE_HELLO];
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
	struct dvx_hal_pollfd *pfd;	/* nranks + 1 */
	uint32_t *pmap;			/* pfd index -> rank */
	struct sim_wacc *acc;		/* nranks */
	struct dvx_sim_wire_stats st;
};

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
	       c->rank < c->nranks && c->max_msg <= (1u << 30) && c->max_remote_nics <= 65536;
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
}

/* a request of the largest message and one answer of it fit together */
static uint64_t tx_cap_of(const struct dvx_sim_wire_cfg *c)
{
	return 2ull * (SIM_WIRE_HDR + c->max_msg);
}

static void wire_layout(const struct dvx_sim_wire_cfg *c, struct wire_layout *l)
{
	size_t off = 0, n = (size_t)c->nranks;

	(void)lay(&off, sizeof(struct sim_wire));
	l->peers = lay(&off, n * sizeof(struct sim_wpeer));
	l->remotes = lay(&off, (size_t)c->max_remote_nics * sizeof(struct sim_wremote));
	l->pfd = lay(&off, (n + 1) * sizeof(struct dvx_hal_pollfd));
	l->pmap = lay(&off, (n + 1) * sizeof(uint32_t));
	l->acc = lay(&off, n * sizeof(struct sim_wacc));
	/* the other ranks' buffers; this rank's own peer entry has none */
	l->bufs = lay(&off, (n - 1) * (SIM_WIRE_HDR + c->max_msg + tx_cap_of(c) + 128));
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
		if (i == c.rank)
			continue;
		p->rx = buf;
		p->rx_need = SIM_WIRE_HDR;
		buf += DVX_ALIGN_UP(SIM_WIRE_HDR + (uint64_t)c.max_msg, 64);
		p->tx = buf;
		buf += DVX_ALIGN_UP(w->tx_cap, 64);
	}
	f->wire = w;
	f->wire_max_msg = c.max_msg;
	f->wire_min_retry_ns = c.min_retry_ns;
	f->wire_ops = &wire_ops;
	/* NIC time starts again with the wire: the time without one is no stall */
	f->wire_last_pass = 0;
	f->wire_frozen_ns = 0;
	f->wire_frozen = 0;
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

static void peer_down(struct sim_wire *w, struct sim_wpeer *p)
{
	if (p->fd >= 0)
		dvx_hal_sock_close(w->hal, p->fd);
	if (p->up)
		w->st.peers_down++;
	p->fd = -1;
	p->up = 0;
	p->rx_got = 0;
	p->rx_need = SIM_WIRE_HDR;
	p->tx_head = p->tx_tail = 0;
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

static void put_hello(uint8_t *b, const struct sim_wire *w)
{
	dvx_put_be32(b, WIRE_MAGIC);
	dvx_put_be32(b + 4, WIRE_VERSION);
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

static void setup_fail(struct sim_wire *w)
{
	int32_t i;

	for (i = 0; i < w->cfg.nranks; i++) {
		peer_down(w, &w->peers[i]);
		if (w->acc[i].fd >= 0)
			dvx_hal_sock_close(w->hal, w->acc[i].fd);
		w->acc[i].fd = -1;
	}
	w->st.peers_down = 0;
	close_listener(w);
}

/* A connection to a higher rank finished: check it and say who we are. */
static int connected_to(struct sim_wire *w, int32_t r, uint64_t deadline)
{
	uint8_t hello[WIRE_HELLO];
	int rc = dvx_hal_sock_error(w->hal, w->peers[r].fd);

	if (rc) {
		/* refused (not listening yet): try again */
		dvx_hal_sock_close(w->hal, w->peers[r].fd);
		w->peers[r].fd = -1;
		return 0;
	}
	put_hello(hello, w);
	rc = send_all(w, w->peers[r].fd, hello, sizeof(hello), deadline);
	if (!rc)
		w->peers[r].up = 1;
	return rc;
}

/* Read more of an accepted connection's hello; a complete one makes that rank up. */
static int hello_from(struct sim_wire *w, struct sim_wacc *a)
{
	size_t got = 0;
	uint32_t r;
	int rc;

	rc = dvx_hal_sock_recv(w->hal, a->fd, a->b + a->got, WIRE_HELLO - a->got, &got);
	if (rc == -EAGAIN)
		return 0;
	if (rc || !got) {
		/* it went away before saying who it is: not one of ours */
		dvx_hal_sock_close(w->hal, a->fd);
		a->fd = -1;
		return 0;
	}
	a->got += (uint32_t)got;
	if (a->got < WIRE_HELLO)
		return 0;
	r = dvx_get_be32(a->b + 8);
	if (dvx_get_be32(a->b) != WIRE_MAGIC || dvx_get_be32(a->b + 4) != WIRE_VERSION ||
	    dvx_get_be32(a->b + 12) != (uint32_t)w->cfg.nranks || r >= (uint32_t)w->cfg.rank ||
	    w->peers[r].up)
		return -EPROTO;
	w->peers[r].fd = a->fd;
	w->peers[r].up = 1;
	a->fd = -1;
	return 0;
}

int dvx_sim_wire_connect(struct dvx_sim_fabric *fab, const struct dvx_hal_sock_addr *table,
			 uint64_t timeout_ns)
{
	struct sim_wire *w = wire_of(fab);
	uint64_t deadline, now;
	int32_t me, n, r, i;
	uint32_t np, k;
	int rc = 0;

	if (!w || !table)
		return -EINVAL;
	if (w->connected || w->lfd < 0)
		return -EBUSY;
	me = w->cfg.rank;
	n = w->cfg.nranks;
	deadline = dvx_hal_now_ns(w->hal) + timeout_ns;
	for (;;) {
		int32_t missing = 0, retry = 0;

		for (r = 0; r < n; r++)
			missing += r != me && !w->peers[r].up;
		if (!missing)
			break;
		now = dvx_hal_now_ns(w->hal);
		if (now >= deadline) {
			rc = -ETIMEDOUT;
			goto fail;
		}
		/* a higher rank that does not listen yet (no socket file, refused) is tried
		 * again every millisecond until the deadline */
		for (r = me + 1; r < n; r++)
			if (!w->peers[r].up && w->peers[r].fd < 0 &&
			    dvx_hal_sock_connect(w->hal, &table[r], &w->peers[r].fd))
				retry = 1;
		np = 0;
		w->pfd[np].fd = w->lfd;
		w->pfd[np].events = DVX_HAL_POLL_IN;
		w->pmap[np++] = (uint32_t)n;
		for (r = me + 1; r < n; r++)
			if (!w->peers[r].up && w->peers[r].fd >= 0) {
				w->pfd[np].fd = w->peers[r].fd;
				w->pfd[np].events = DVX_HAL_POLL_OUT;
				w->pmap[np++] = (uint32_t)r;
			}
		for (i = 0; i < me && np <= (uint32_t)n; i++)
			if (w->acc[i].fd >= 0) {
				w->pfd[np].fd = w->acc[i].fd;
				w->pfd[np].events = DVX_HAL_POLL_IN;
				w->pmap[np++] = (uint32_t)(n + 1 + i);
			}
		rc = dvx_hal_sock_poll(w->hal, w->pfd, np, retry ? 1000000u :
				       deadline - now < 10000000u ? deadline - now : 10000000u);
		if (rc < 0)
			goto fail;
		for (k = 0; k < np; k++) {
			uint32_t m = w->pmap[k];

			if (!w->pfd[k].revents)
				continue;
			if (m == (uint32_t)n) {
				int fd = -1;

				/* a lower rank: keep it until its hello says which */
				for (i = 0; i < me && w->acc[i].fd >= 0; i++)
					;
				if (i == me || dvx_hal_sock_accept(w->hal, w->lfd, &fd))
					continue;
				w->acc[i].fd = fd;
				w->acc[i].got = 0;
			} else if (m < (uint32_t)n) {
				rc = connected_to(w, (int32_t)m, deadline);
				if (rc)
					goto fail;
			} else {
				rc = hello_from(w, &w->acc[m - (uint32_t)n - 1]);
				if (rc)
					goto fail;
			}
		}
	}
	close_listener(w);
	w->connected = 1;
	return 0;
fail:
	setup_fail(w);
	return rc;
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
	/* a request's payload is its message, an ACK's a READ's data: never more */
	return f->payload <= max_msg && (!f->payload || f->payload == f->len);
}

static void tx_flush(struct sim_wire *w, struct sim_wpeer *p)
{
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
	const struct sim_wpeer *p = &w->peers[rank];

	return p->up && tx_free(w, p) >= SIM_WIRE_HDR + payload;
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
	if (p->tx_head && p->tx_tail + need > w->tx_cap) {
		memmove(p->tx, p->tx + p->tx_head, p->tx_tail - p->tx_head);
		p->tx_tail -= p->tx_head;
		p->tx_head = 0;
	}
	t = p->tx + p->tx_tail;
	frame_put(t, f);
	t += SIM_WIRE_HDR;
	for (i = 0; i < nseg; i++) {
		memcpy(t, seg[i].p, seg[i].len);
		t += seg[i].len;
	}
	p->tx_tail += need;
	w->st.frames_tx++;
	if (f->type == SIM_WIRE_REQ)
		w->st.requests++;
	if (reserve == SIM_WIRE_RETRANSMIT)
		w->st.retransmits++;
	tx_flush(w, p);
	return 0;
}

/* ---- progress ------------------------------------------------------------------------ */

static void rx_frame(struct sim_fabric *fab, uint32_t rank, struct sim_wpeer *p,
		     const struct sim_wire_frame *f)
{
	struct sim_wire *w = fab->wire;
	int rc;

	w->st.frames_rx++;
	if (f->type != SIM_WIRE_REQ) {
		dvx_sim_exec_wire_response(fab, f, p->rx + SIM_WIRE_HDR);
		return;
	}
	rc = dvx_sim_exec_wire_request(fab, rank,
				       dvx_sim_qp_by_path(fab, f->link_layer, f->dlid, f->dgid,
							  f->dmac, f->dst_qpn),
				       f, p->rx + SIM_WIRE_HDR);
	if (rc == SIM_WIRE_DUP)
		w->st.duplicates++;
	else if (rc == SIM_WIRE_DROPPED)
		w->st.dropped++;
}

/* Read what @p sent, executing each complete frame; returns whether bytes came. */
static bool rx_peer(struct sim_fabric *fab, uint32_t rank, struct sim_wpeer *p)
{
	struct sim_wire *w = fab->wire;
	struct sim_wire_frame f;
	unsigned frames = 0;
	bool moved = false;

	while (p->up && frames < WIRE_FRAMES_PER_ROUND) {
		size_t got = 0;
		int rc = dvx_hal_sock_recv(w->hal, p->fd, p->rx + p->rx_got, p->rx_need - p->rx_got,
					   &got);

		if (rc == -EAGAIN)
			break;
		if (rc || !got) {
			/* the process ended or died: its QPs' requests are lost from now on */
			peer_down(w, p);
			return true;
		}
		moved = true;
		p->rx_got += got;
		if (p->rx_got < p->rx_need)
			continue;
		if (p->rx_need == SIM_WIRE_HDR) {
			if (!frame_get(p->rx, &f, w->cfg.max_msg)) {
				peer_down(w, p);	/* not our protocol: stop listening to it */
				return true;
			}
			p->rx_need += f.payload;
			if (p->rx_got < p->rx_need)
				continue;
		} else {
			(void)frame_get(p->rx, &f, w->cfg.max_msg);
		}
		rx_frame(fab, rank, p, &f);
		p->rx_got = 0;
		p->rx_need = SIM_WIRE_HDR;
		frames++;
	}
	return moved;
}

static bool wire_progress(struct sim_fabric *fab)
{
	struct sim_wire *w = fab->wire;
	bool moved = false;
	uint32_t np = 0, k;
	int32_t r;

	if (!w->connected)
		return false;
	for (r = 0; r < w->cfg.nranks; r++) {
		struct sim_wpeer *p = &w->peers[r];

		if (!p->up)
			continue;
		w->pfd[np].fd = p->fd;
		w->pfd[np].events = (int16_t)(DVX_HAL_POLL_IN |
					      (p->tx_tail > p->tx_head ? DVX_HAL_POLL_OUT : 0));
		w->pfd[np].revents = 0;
		w->pmap[np++] = (uint32_t)r;
	}
	if (!np || dvx_hal_sock_poll(w->hal, w->pfd, np, 0) <= 0)
		return false;
	for (k = 0; k < np; k++) {
		struct sim_wpeer *p = &w->peers[w->pmap[k]];
		int16_t ev = w->pfd[k].revents;

		if (ev & (DVX_HAL_POLL_IN | DVX_HAL_POLL_HUP | DVX_HAL_POLL_ERR))
			moved |= rx_peer(fab, w->pmap[k], p);
		if (ev & DVX_HAL_POLL_OUT) {
			uint64_t before = p->tx_tail - p->tx_head;

			tx_flush(w, p);
			moved |= p->tx_tail - p->tx_head != before;
		}
	}
	return moved;
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
		if (w->acc[r].fd >= 0)
			dvx_hal_sock_close(w->hal, w->acc[r].fd);
		w->acc[r].fd = -1;
	}
	close_listener(w);
	w->connected = 0;
	fab->wire = NULL;
	fab->wire_ops = NULL;
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

static void wire_idle_wait(struct sim_fabric *fab, uint64_t ns)
{
	struct dvx_hal_pollfd pfd[64];
	const struct dvx_hal *hal;
	struct sim_wire *w;
	unsigned n = 0;
	int32_t r;

	pthread_mutex_lock(&fab->lock);
	w = fab->wire;
	hal = w ? w->hal : NULL;
	for (r = 0; w && w->connected && r < w->cfg.nranks && n < 64; r++)
		if (w->peers[r].up) {
			pfd[n].fd = w->peers[r].fd;
			pfd[n].events = DVX_HAL_POLL_IN;
			pfd[n++].revents = 0;
		}
	pthread_mutex_unlock(&fab->lock);
	/* a socket closed meanwhile answers at once (NVAL/HUP): the next pass sees why */
	if (hal && n)
		dvx_hal_sock_poll(hal, pfd, n, ns);
	else if (hal)
		dvx_hal_sleep_ns(hal, ns);
}

static const struct sim_wire_ops wire_ops = {
	.route = wire_route,
	.send = wire_send,
	.room = wire_room,
	.progress = wire_progress,
	.close = wire_close,
	.rmac = wire_rmac,
	.idle_wait = wire_idle_wait,
};
