// SPDX-License-Identifier: MIT
/*
 * core/msg/hs.c - listen, connect, accept: the handshake over the hal's stream sockets
 * that makes a send comm on one end and a recv comm on the other, and decides with both
 * ends agreeing whether the connection makes a shared set (NEW), joins one (JOIN) or
 * gets private QPs (PRIVATE). docs/msg.md "Connecting".
 *
 *	connector                                   acceptor
 *	HELLO {cookie, key, proposal, FIFO} ------>  decide; NEW/PRIVATE: make QPs (RST)
 *	                                    <------  REPLY {decision, mask, QP infos}
 *	NEW/PRIVATE: make QPs, connect (RTS)
 *	READY {QP infos} ------------------------>  NEW/PRIVATE: connect (RTS)
 *	                                    <------  DONE
 *	the send comm is live                        the recv comm waits for accept()
 *
 * Every context runs all of its handshakes, incoming and outgoing, from each connect,
 * accept and progress call, so no order of calls on two ranks can deadlock them.
 */
#include "msg_priv.h"

#include <dvx/hal.h>

#define STAGE_MAGIC 0x53585644u		/* "DVXS" */
#define HELLO_BODY 64
#define REPLY_FIXED 48
#define READY_FIXED 16
#define DONE_BODY 16
#define CONN_BYTES ((uint32_t)sizeof(struct dvx_qp_conn))

/* ------------------------------------------------------------------------------
 * Messages
 */
static uint8_t *msg_begin(struct msg_hs *hs, uint8_t type, uint32_t body)
{
	memset(hs->out, 0, MSG_HS_HDR + body);
	dvx_msg_put32(hs->out, MSG_HS_MAGIC);
	hs->out[4] = MSG_HS_VERSION;
	hs->out[5] = type;
	dvx_msg_put16(hs->out + 6, (uint16_t)body);
	hs->out_len = MSG_HS_HDR + body;
	hs->out_off = 0;
	return hs->out + MSG_HS_HDR;
}

static void expect(struct msg_hs *hs)
{
	hs->in_len = MSG_HS_HDR;
	hs->in_off = 0;
}

/* 0: all sent; 1: blocked; < 0: failed */
static int hs_send(struct dvx_msg_state *st, struct msg_hs *hs)
{
	while (hs->out_off < hs->out_len) {
		struct dvx_hal_iov iov = { hs->out + hs->out_off, hs->out_len - hs->out_off };
		size_t sent = 0;
		int err = dvx_hal_sock_send(st->hal, hs->fd, &iov, 1, &sent);

		if (err == -EAGAIN)
			return 1;
		if (err)
			return err;
		hs->out_off += (uint32_t)sent;
	}
	return 0;
}

/* a whole message of @type: 0 (its body at hs->in + HDR, its length hs->in_len - HDR);
 * 1 blocked; < 0 failed (-ECONNRESET at the end of the stream, -EPROTO for bytes that
 * are not a message of this handshake) */
static int hs_recv(struct dvx_msg_state *st, struct msg_hs *hs, uint8_t type)
{
	for (;;) {
		size_t got = 0;
		int err;

		if (hs->in_off == hs->in_len) {
			uint32_t body;

			if (hs->in_len > MSG_HS_HDR)
				return 0;
			if (dvx_msg_get32(hs->in) != MSG_HS_MAGIC || hs->in[4] != MSG_HS_VERSION ||
			    hs->in[5] != type)
				return -EPROTO;
			body = dvx_msg_get16(hs->in + 6);
			if (!body || body > MSG_HS_MAX - MSG_HS_HDR)
				return -EPROTO;
			hs->in_len = MSG_HS_HDR + body;
			continue;
		}
		err = dvx_hal_sock_recv(st->hal, hs->fd, hs->in + hs->in_off,
					hs->in_len - hs->in_off, &got);
		if (err == -EAGAIN)
			return 1;
		if (err)
			return err;
		if (!got)
			return -ECONNRESET;
		hs->in_off += (uint32_t)got;
	}
}

/* ------------------------------------------------------------------------------
 * Shared helpers of both roles
 */
static struct dvx_msg_comm *hs_comm(struct dvx_msg_state *st, const struct msg_hs *hs)
{
	return hs->comm >= 0 ? &st->comms[hs->comm] : NULL;
}

/* map the comm's @nqps slots onto the set QPs in @mask, round robin */
static void map_mask(struct dvx_msg_comm *c, uint32_t nqps, uint8_t mask)
{
	uint8_t bits[DVX_MSG_MAX_QPS];
	uint32_t n = 0, q, j;

	for (q = 0; q < DVX_MSG_MAX_QPS; q++)
		if (mask & (1u << q))
			bits[n++] = (uint8_t)q;
	c->nqps = (uint8_t)nqps;
	memset(c->map, 0, sizeof(c->map));
	for (j = 0; j < nqps; j++)
		c->map[j] = bits[j % n];
}

/* move @c onto @nqps slots over @mask: the new references are taken before the old
 * ones go, so a QP both mappings use never drops to zero in between */
static void remap(struct dvx_msg_state *st, struct dvx_msg_comm *c, uint32_t nqps, uint8_t mask)
{
	struct dvx_msg_comm old = *c;

	map_mask(c, nqps, mask);
	c->mapped = 0;
	dvx_msg_set_ref(st, c);
	if (old.mapped)
		dvx_msg_set_unref(st, &old);
}

/* what the handshake holds, given back: the comm's references, a set it made, and
 * the socket unless @keep_fd */
static void hs_release_but(struct dvx_msg_state *st, struct msg_hs *hs, int keep_fd)
{
	struct dvx_msg_comm *c = hs_comm(st, hs);

	if (c) {
		dvx_msg_set_unref(st, c);
		dvx_msg_comm_free(st, c);
		hs->comm = -1;
	}
	/* a set this handshake made and nobody else uses (NEW or PRIVATE) */
	if (hs->set >= 0 && (hs->decision == MSG_D_NEW || hs->decision == MSG_D_PRIVATE ||
			     (hs->decision == MSG_D_NONE && hs->proposal == MSG_D_NEW))) {
		struct msg_set *x = &st->sets[hs->set];

		if (x->state == MSG_SET_PENDING)
			dvx_msg_set_release(st, (uint32_t)hs->set);
	}
	hs->set = -1;
	if (hs->fd >= 0 && !keep_fd) {
		dvx_hal_sock_close(st->hal, hs->fd);
		hs->fd = -1;
	}
}

static void hs_release(struct dvx_msg_state *st, struct msg_hs *hs)
{
	hs_release_but(st, hs, 0);
}

static void hs_free(struct msg_hs *hs)
{
	hs->state = MSG_HS_FREE;
	hs->comm = -1;
	hs->set = -1;
	hs->fd = -1;
	hs->err = 0;
}

/* connector: fail the handshake; its connect call collects the error */
static void conn_fail(struct dvx_msg_state *st, struct msg_hs *hs, int err)
{
	hs_release(st, hs);
	hs->err = err;
	hs->state = MSG_HC_FAILED;
}

/* acceptor: drop the handshake (the connector sees the socket close) */
static void acc_drop(struct dvx_msg_state *st, struct msg_hs *hs)
{
	hs_release(st, hs);
	st->cnt.refused++;
	hs_free(hs);
}

/* a set made for this connection: created, key and identity filled */
static int set_make(struct dvx_msg_state *st, struct msg_hs *hs, int shared, uint32_t dir,
		    uint32_t nqps, uint64_t sid_ctx, uint64_t sid_serial)
{
	struct dvx_msg_comm *c = hs_comm(st, hs);
	struct msg_set *x;
	uint32_t set;
	int err = dvx_msg_set_alloc(st, shared, &set);

	if (err)
		return err;
	x = &st->sets[set];
	x->nic = c->nic;
	x->peer_ctx = c->peer_ctx;
	x->peer_nic = c->peer_nic;
	x->group = c->group;
	x->dir = (uint8_t)dir;
	x->nqps = (uint8_t)nqps;
	x->sid_ctx = sid_ctx;
	x->sid_serial = sid_serial;
	hs->set = (int32_t)set;
	if (shared) {
		err = dvx_msg_pool_add(st, set);
		if (err) {
			dvx_msg_set_release(st, set);
			hs->set = -1;
			return err;
		}
	}
	return 0;
}

/* the set's QPs' connection infos at @p */
static int put_infos(struct dvx_msg_state *st, uint32_t set, uint8_t *p)
{
	const struct msg_set *x = &st->sets[set];
	uint32_t q;
	int err;

	for (q = 0; q < x->nqps; q++) {
		struct dvx_qp_conn cn;

		err = dvx_qp_export(&x->qp[q], &cn);
		if (err)
			return err;
		memcpy(p + q * CONN_BYTES, &cn, CONN_BYTES);
	}
	return 0;
}

static void get_infos(const uint8_t *p, uint32_t n, struct dvx_qp_conn *out)
{
	uint32_t q;

	for (q = 0; q < n; q++)
		memcpy(&out[q], p + q * CONN_BYTES, CONN_BYTES);
}

/* the set's QPs exist (NEW/PRIVATE), now connect them and take the comm's refs */
static int set_go_live(struct dvx_msg_state *st, struct msg_hs *hs, const uint8_t *infos)
{
	struct dvx_msg_comm *c = hs_comm(st, hs);
	struct msg_set *x = &st->sets[hs->set];
	struct dvx_qp_conn rem[DVX_MSG_MAX_QPS];
	int err;

	get_infos(infos, x->nqps, rem);
	err = dvx_msg_set_connect(st, (uint32_t)hs->set, rem);
	if (err)
		return err;
	x->state = MSG_SET_LIVE;
	c->set = (uint32_t)hs->set;
	c->shared = x->shared;
	map_mask(c, c->nqps, x->live_mask);
	dvx_msg_set_ref(st, c);
	return 0;
}

static void count_decision(struct dvx_msg_state *st, uint8_t proposal, uint8_t decision)
{
	if (decision == MSG_D_NEW)
		st->cnt.primaries++;
	else if (decision == MSG_D_JOIN)
		st->cnt.secondaries++;
	else {
		st->cnt.privates++;
		/* this end shares, or the other end wanted to: the pool could not */
		if (st->cfg.groups || proposal != MSG_D_PRIVATE)
			st->cnt.fallbacks++;
	}
}

static uint32_t max_chunk(uint32_t log_a, uint32_t log_b)
{
	uint32_t l = log_a < log_b ? log_a : log_b;

	if (l > 31)
		l = 31;
	return l >= 31 ? 0x7fffffffu : (1u << l);
}

/* 1 while a NEW proposal of this context's own to the HELLO's sender is unanswered
 * (a connector past its proposal, before its REPLY) and this context's id is the
 * higher: both ends ran out of room for each other's NEW, and the tie-break is that the
 * lower end answers at once (PRIVATE, for want of room) while the higher end waits for
 * that answer, which gives back its own set, and then takes the lower end's NEW. The
 * lower end never waits on the higher one, so the wait is one round trip, and both ends
 * agree on one set instead of each holding its own for a connection the other refused. */
static int acc_must_wait(const struct dvx_msg_state *st, const struct dvx_msg_comm *c)
{
	uint32_t i;

	if (st->ctx_id <= c->peer_ctx)
		return 0;
	for (i = 0; i < st->cfg.max_pending; i++) {
		const struct msg_hs *o = &st->hs[i];

		if (o->state >= MSG_HC_CONNECTING && o->state <= MSG_HC_REPLY &&
		    o->proposal == MSG_D_NEW && o->comm >= 0 &&
		    st->comms[o->comm].peer_ctx == c->peer_ctx)
			return 1;
	}
	return 0;
}

/* an acceptor of this context waits in MSG_HA_DECIDE for a set (acc_must_wait()) */
static int acc_deciding(const struct dvx_msg_state *st)
{
	uint32_t i;

	for (i = 0; i < st->cfg.max_pending; i++)
		if (st->hs[i].state == MSG_HA_DECIDE)
			return 1;
	return 0;
}

/* ------------------------------------------------------------------------------
 * Connector
 */
static uint32_t next_group(struct dvx_msg_state *st, const struct dvx_msg_comm *c)
{
	struct msg_peer *free_p = NULL;
	uint32_t i, g;

	for (i = 0; i < st->cfg.max_comms; i++) {
		struct msg_peer *p = &st->peers[i];

		if (!p->used) {
			if (!free_p)
				free_p = p;
			continue;
		}
		if (p->peer_ctx == c->peer_ctx && p->nic == c->nic && p->peer_nic == c->peer_nic) {
			g = p->next_group;
			p->next_group = (g + 1) % st->cfg.groups;
			return g;
		}
	}
	if (!free_p) {
		/* full: take over the entry of a peer this context has no communicator to */
		for (i = 0; i < st->cfg.max_comms && !free_p; i++) {
			struct msg_peer *p = &st->peers[i];
			uint32_t j, users = 0;

			for (j = 0; j < st->cfg.max_comms; j++) {
				const struct dvx_msg_comm *o = &st->comms[j];

				users += o != c && o->kind == MSG_K_SEND && o->peer_ctx == p->peer_ctx &&
					 o->nic == p->nic && o->peer_nic == p->peer_nic;
			}
			if (!users)
				free_p = p;
		}
		if (!free_p)
			return 0;
	}
	free_p->used = 1;
	free_p->peer_ctx = c->peer_ctx;
	free_p->nic = c->nic;
	free_p->peer_nic = c->peer_nic;
	free_p->next_group = 1 % st->cfg.groups;
	return 0;
}

/* decide what to propose; 1: wait (a primary of this key is being made), 0: go */
static int conn_propose(struct dvx_msg_state *st, struct msg_hs *hs)
{
	struct dvx_msg_comm *c = hs_comm(st, hs);
	struct msg_pool_ent *e;
	struct msg_set *x;
	int err;

	hs->proposal = MSG_D_PRIVATE;
	if (!st->cfg.groups)
		return 0;
	e = dvx_msg_pool_find_key(st, c->nic, c->peer_ctx, c->peer_nic, MSG_DIR_SEND, c->group);
	if (!e) {
		if (!dvx_msg_set_free_count(st, 1) || dvx_msg_pool_free_count(st) < hs->want_nqps)
			return (st->cfg.flags & DVX_MSG_F_NO_FALLBACK) ? -ENOSPC : 0;
		if (acc_deciding(st))
			return 1;	/* the room is an acceptor's that waited for it */
		hs->serial = ++st->serial;
		err = set_make(st, hs, 1, MSG_DIR_SEND, hs->want_nqps, st->ctx_id, hs->serial);
		if (err)
			return err;
		hs->proposal = MSG_D_NEW;
		return 0;
	}
	x = &st->sets[e->set];
	if (x->state == MSG_SET_PENDING || x->making)
		return 1;	/* its handshake runs: the other end may not have it yet */
	if (x->failed_mask & x->live_mask)
		return 0;	/* a failed QP: nobody joins that set */
	/* pin every live QP of the set for this handshake (one reference each): none of
	 * those the acceptor may pick can go while it runs */
	hs->proposal = MSG_D_JOIN;
	hs->set = (int32_t)e->set;
	hs->serial = x->sid_serial;
	hs->mask = x->live_mask;
	c->set = e->set;
	c->shared = 1;
	map_mask(c, (uint32_t)__builtin_popcount(x->live_mask), x->live_mask);
	dvx_msg_set_ref(st, c);
	return 0;
}

static void conn_hello(struct dvx_msg_state *st, struct msg_hs *hs)
{
	struct dvx_msg_comm *c = hs_comm(st, hs);
	struct msg_nic *n = &st->nic[c->nic];
	uint8_t *b = msg_begin(hs, MSG_HS_HELLO, HELLO_BODY);

	dvx_msg_put64(b, hs->cookie);
	dvx_msg_put64(b + 8, st->ctx_id);
	dvx_msg_put64(b + 16, hs->serial);
	dvx_msg_put64(b + 24, (uint64_t)(uintptr_t)c->fifo);
	dvx_msg_put32(b + 32, n->fifo_mr.rkey);
	dvx_msg_put16(b + 36, hs->listen_id);
	dvx_msg_put16(b + 38, c->id);
	dvx_msg_put16(b + 40, (uint16_t)c->group);
	dvx_msg_put16(b + 42, (uint16_t)st->cfg.max_reqs);
	b[44] = (uint8_t)c->nic;
	b[45] = hs->listen_nic;
	b[46] = hs->proposal;
	b[47] = (uint8_t)hs->want_nqps;
	b[48] = hs->mask;
	b[49] = (uint8_t)st->cfg.max_recvs;
	b[50] = (uint8_t)n->log_max_msg;
	b[51] = (uint8_t)st->cfg.nics[c->nic]->link_layer;
	dvx_msg_put16(b + 52, c->seq_base);
	b[54] = (st->cfg.flags & DVX_MSG_F_CTS_OFFLOAD) ? 1 : 0;	/* offload wished */
}

/* REPLY's offload answer (bytes 22-43): the receiver's eager ring, or FIFO mode */
static int conn_offload(struct dvx_msg_state *st, struct dvx_msg_comm *c, const uint8_t *b)
{
	uint32_t e = dvx_msg_get32(b + 36);

	c->offload = 0;
	if (!(b[22] & 1)) {
		if (st->cfg.flags & DVX_MSG_F_CTS_OFFLOAD)
			st->cnt.cts_fallbacks++;	/* the acceptor did not take it */
		return 0;
	}
	/* offload only if asked for, with a ring of whole 64-byte slots */
	if (!(st->cfg.flags & DVX_MSG_F_CTS_OFFLOAD) || e > 65536 || (e & 63) ||
	    !dvx_msg_get64(b + 24))
		return -EPROTO;
	c->offload = 1;
	c->eager_max = e < st->cfg.eager_bytes ? e : st->cfg.eager_bytes;
	c->ring_slot = MSG_EAGER_HDR + e;
	c->ring_addr = dvx_msg_get64(b + 24);
	c->ring_rkey = dvx_msg_get32(b + 32);
	c->lim = 0;	/* the receiver's first credit word says how far */
	st->cnt.offloads++;
	return 0;
}

/* REPLY arrived: act on the decision; 0 or an error */
static int conn_reply(struct dvx_msg_state *st, struct msg_hs *hs)
{
	struct dvx_msg_comm *c = hs_comm(st, hs);
	const uint8_t *b = hs->in + MSG_HS_HDR;
	uint32_t body = hs->in_len - MSG_HS_HDR, status, nqps, set_nqps, q;
	uint8_t dec, mask;
	int err;

	if (body < REPLY_FIXED)
		return -EPROTO;
	status = dvx_msg_get32(b);
	if (status)
		return status < 4096 ? -(int)status : -EPROTO;
	dec = b[4];
	nqps = b[5];
	set_nqps = b[6];
	mask = b[7];
	if (!nqps || nqps > hs->want_nqps || set_nqps > DVX_MSG_MAX_QPS)
		return -EPROTO;
	c->peer_comm = dvx_msg_get16(b + 16);
	c->max_reqs = dvx_msg_get16(b + 18);
	c->max_recvs = b[20];
	c->max_chunk = max_chunk(st->nic[c->nic].log_max_msg, b[21]);
	c->fifo_recvs = st->cfg.max_recvs;
	if (!c->max_reqs || c->max_reqs > st->cfg.max_reqs || (c->max_reqs & (c->max_reqs - 1)) ||
	    !c->max_recvs || c->max_recvs > st->cfg.max_recvs)
		return -EPROTO;
	err = conn_offload(st, c, b);
	if (err)
		return err;
	/* the decision is taken once it is known to be one: until then a failure gives
	 * back what the proposal reserved (hs_release_but()) */
	switch (dec) {
	case MSG_D_JOIN:
		if (hs->proposal != MSG_D_JOIN || !mask || (mask & ~hs->mask))
			return -EPROTO;
		hs->decision = dec;
		/* the QPs both ends still have: the final mapping, then the pin goes */
		remap(st, c, nqps, mask);
		msg_begin(hs, MSG_HS_READY, READY_FIXED);
		break;
	case MSG_D_NEW:
	case MSG_D_PRIVATE:
		if (body != REPLY_FIXED + set_nqps * CONN_BYTES || !set_nqps || set_nqps > nqps ||
		    (dec == MSG_D_NEW && hs->proposal != MSG_D_NEW))
			return -EPROTO;
		hs->decision = dec;
		if (hs->proposal == MSG_D_JOIN) {
			dvx_msg_set_unref(st, c);	/* the pinned set was refused */
			hs->set = -1;
		}
		if (dec == MSG_D_PRIVATE && hs->proposal == MSG_D_NEW) {
			dvx_msg_set_release(st, (uint32_t)hs->set);	/* not made after all */
			hs->set = -1;
		}
		if (dec == MSG_D_PRIVATE) {
			err = set_make(st, hs, 0, MSG_DIR_SEND, set_nqps, st->ctx_id, 0);
			if (err)
				return err;
		} else {
			/* the acceptor may have granted fewer QPs than proposed */
			for (q = set_nqps; q < DVX_MSG_MAX_QPS; q++)
				dvx_msg_pool_del(st, (uint32_t)hs->set, q);
			st->sets[hs->set].nqps = (uint8_t)set_nqps;
		}
		err = dvx_msg_set_create(st, (uint32_t)hs->set, c->nic, MSG_DIR_SEND, set_nqps);
		if (err)
			return err;
		c->nqps = (uint8_t)nqps;
		err = set_go_live(st, hs, b + REPLY_FIXED);
		if (err)
			return err;
		{
			uint8_t *r = msg_begin(hs, MSG_HS_READY, READY_FIXED + set_nqps * CONN_BYTES);

			r[4] = (uint8_t)set_nqps;
			err = put_infos(st, (uint32_t)hs->set, r + READY_FIXED);
			if (err)
				return err;
		}
		break;
	default:
		return -EPROTO;
	}
	return 0;
}

/* one step of a connector; 1: progressed, 0: blocked, < 0: failed */
static int conn_step(struct dvx_msg_state *st, struct msg_hs *hs)
{
	struct dvx_msg_comm *c = hs_comm(st, hs);
	int err;

	switch (hs->state) {
	case MSG_HC_WAIT_KEY:
		err = conn_propose(st, hs);
		if (err)
			return err < 0 ? err : 0;
		conn_hello(st, hs);
		err = dvx_hal_sock_connect(st->hal, &hs->addr, &hs->fd);
		if (err)
			return err;
		hs->state = MSG_HC_CONNECTING;
		return 1;
	case MSG_HC_CONNECTING: {
		struct dvx_hal_pollfd p = { hs->fd, DVX_HAL_POLL_OUT, 0 };

		err = dvx_hal_sock_poll(st->hal, &p, 1, 0);
		if (err < 0)
			return err;
		if (!err || !p.revents)
			return 0;
		err = dvx_hal_sock_error(st->hal, hs->fd);
		if (err)
			return err;
		if (p.revents & (DVX_HAL_POLL_ERR | DVX_HAL_POLL_HUP | DVX_HAL_POLL_NVAL))
			return -ECONNREFUSED;
		hs->state = MSG_HC_HELLO;
		return 1;
	}
	case MSG_HC_HELLO:
		err = hs_send(st, hs);
		if (err)
			return err > 0 ? 0 : err;
		expect(hs);
		hs->state = MSG_HC_REPLY;
		return 1;
	case MSG_HC_REPLY:
		err = hs_recv(st, hs, MSG_HS_REPLY);
		if (err)
			return err > 0 ? 0 : err;
		err = conn_reply(st, hs);
		if (err)
			return err;
		hs->state = MSG_HC_READY;
		return 1;
	case MSG_HC_READY:
		err = hs_send(st, hs);
		if (err)
			return err > 0 ? 0 : err;
		expect(hs);
		hs->state = MSG_HC_DONE;
		return 1;
	case MSG_HC_DONE: {
		uint32_t status;

		err = hs_recv(st, hs, MSG_HS_DONE);
		if (err)
			return err > 0 ? 0 : err;
		if (hs->in_len - MSG_HS_HDR != DONE_BODY)
			return -EPROTO;
		status = dvx_msg_get32(hs->in + MSG_HS_HDR);
		if (status)
			return status < 4096 ? -(int)status : -EPROTO;
		count_decision(st, hs->proposal, hs->decision);
		if (hs->decision == MSG_D_NEW || hs->decision == MSG_D_PRIVATE) {
			st->sets[hs->set].making = 0;	/* both ends have it live */
			hs->set = -1;	/* the comm owns it now */
		}
		c->state = MSG_CS_LIVE;
		dvx_hal_sock_close(st->hal, hs->fd);
		hs->fd = -1;
		hs->state = MSG_HC_FINISHED;
		return 0;
	}
	default:
		return 0;
	}
}

/* ------------------------------------------------------------------------------
 * Acceptor
 */
static struct dvx_msg_comm *listen_by_id(struct dvx_msg_state *st, uint32_t id)
{
	uint32_t s = MSG_ID_SLOT(id);
	struct dvx_msg_comm *l;

	if (s >= st->cfg.max_comms)
		return NULL;
	l = &st->comms[s];
	return l->kind == MSG_K_LISTEN && l->id == id ? l : NULL;
}

static void acc_refuse(struct dvx_msg_state *st, struct msg_hs *hs, int err)
{
	uint8_t *b;

	hs_release_but(st, hs, 1);	/* keeps nothing but the socket, for the answer */
	b = msg_begin(hs, MSG_HS_REPLY, REPLY_FIXED);
	dvx_msg_put32(b, (uint32_t)-err);
	hs->state = MSG_HA_REFUSE;
	st->cnt.refused++;
}

/* the decision for a HELLO, the set reserved or pinned; 0, 1 (wait: MSG_HA_DECIDE) or
 * an errno to refuse with */
static int acc_decide(struct dvx_msg_state *st, struct msg_hs *hs, uint8_t proposal,
		      uint64_t serial, uint8_t mask, uint32_t nqps)
{
	struct dvx_msg_comm *c = hs_comm(st, hs);
	struct msg_pool_ent *e = NULL;
	int err;

	hs->proposal = proposal;
	hs->decision = MSG_D_PRIVATE;
	if (st->cfg.groups && proposal != MSG_D_PRIVATE)
		e = dvx_msg_pool_find_key(st, c->nic, c->peer_ctx, c->peer_nic, MSG_DIR_RECV,
					  c->group);
	if (st->cfg.groups && proposal == MSG_D_JOIN && e) {
		struct msg_set *x = &st->sets[e->set];
		uint8_t both = mask & x->live_mask & (uint8_t)~x->failed_mask;

		/* the set the connector names, as this end has it, with QPs both still have */
		if (x->state == MSG_SET_LIVE && x->sid_ctx == c->peer_ctx &&
		    x->sid_serial == serial && both) {
			hs->decision = MSG_D_JOIN;
			hs->mask = both;
			hs->set = (int32_t)e->set;
			c->set = e->set;
			c->shared = 1;
			map_mask(c, nqps, both);
			dvx_msg_set_ref(st, c);
			return 0;
		}
	}
	if (st->cfg.groups && proposal == MSG_D_NEW && !e) {
		if (dvx_msg_set_free_count(st, 1) && dvx_msg_pool_free_count(st) >= nqps) {
			err = set_make(st, hs, 1, MSG_DIR_RECV, nqps, c->peer_ctx, serial);
			if (err)
				return err;
			hs->decision = MSG_D_NEW;
			return dvx_msg_set_create(st, (uint32_t)hs->set, c->nic, MSG_DIR_RECV, nqps);
		}
		if (acc_must_wait(st, c))
			return 1;
		if (st->cfg.flags & DVX_MSG_F_NO_FALLBACK)
			return -ENOSPC;
	}
	err = set_make(st, hs, 0, MSG_DIR_RECV, nqps, c->peer_ctx, 0);
	if (err)
		return err;
	return dvx_msg_set_create(st, (uint32_t)hs->set, c->nic, MSG_DIR_RECV, nqps);
}

static int acc_answer(struct dvx_msg_state *st, struct msg_hs *hs);

/*
 * Offload: the credits the recv comm will keep posted on its first QP, min(C, its
 * receive queue / 8, at least 1), reserved there; the comms of one QP reserve at most
 * half its receive queue (the rest is for rendezvous data and FIFO-mode comms), so a
 * connection that would pass that runs in FIFO mode, both ends agreeing (REPLY).
 */
static void acc_credits(struct dvx_msg_state *st, struct msg_hs *hs, struct dvx_msg_comm *c)
{
	struct msg_set *x = &st->sets[hs->set];
	uint32_t q = hs->decision == MSG_D_JOIN ? c->map[0] : 0, k = x->rq_depth / 8;

	if (k > c->max_reqs)
		k = c->max_reqs;
	if (!k)
		k = 1;
	if (x->cr_res[q] + k > x->rq_depth / 2) {
		c->offload = 0;
		st->cnt.offloads--;
		st->cnt.cts_fallbacks++;
		return;
	}
	x->cr_res[q] += k;
	c->cr_want = k;
}

/* HELLO arrived: 0 (REPLY built), 1 (wait: MSG_HA_DECIDE) or an errno to refuse with */
static int acc_hello(struct dvx_msg_state *st, struct msg_hs *hs)
{
	const uint8_t *b = hs->in + MSG_HS_HDR;
	struct dvx_msg_comm *l, *c;
	uint32_t want, nqps, rreqs, rrecvs;
	int err;

	if (hs->in_len - MSG_HS_HDR != HELLO_BODY)
		return -EPROTO;
	l = listen_by_id(st, dvx_msg_get16(b + 36));
	if (!l || l->state != MSG_CS_LIVE)
		return -ECONNREFUSED;
	if (dvx_msg_get64(b) != l->cookie)
		return -EACCES;
	if (b[45] != l->nic)
		return -EPROTO;
	want = b[47];
	rreqs = dvx_msg_get16(b + 42);
	rrecvs = b[49];
	if (!want || want > DVX_MSG_MAX_QPS || b[46] < MSG_D_JOIN || b[46] > MSG_D_PRIVATE ||
	    !rreqs || (rreqs & (rreqs - 1)) || rreqs > DVX_MSG_MAX_REQS || !rrecvs ||
	    rrecvs > DVX_MSG_MAX_RECVS || dvx_msg_get16(b + 40) >= DVX_MSG_MAX_GROUPS)
		return -EPROTO;
	if (b[51] != st->cfg.nics[l->nic]->link_layer)
		return -ENETUNREACH;	/* IB to RoCE: no path */
	err = dvx_msg_comm_alloc(st, MSG_K_RECV, &c);
	if (err)
		return err;
	hs->comm = (int32_t)dvx_msg_slot_of(st, c);
	c->nic = l->nic;
	c->listen_id = l->id;
	c->peer_ctx = dvx_msg_get64(b + 8);
	c->rfifo_addr = dvx_msg_get64(b + 24);
	c->rfifo_rkey = dvx_msg_get32(b + 32);
	c->peer_comm = dvx_msg_get16(b + 38);
	c->group = dvx_msg_get16(b + 40);
	c->peer_nic = b[44];
	c->max_reqs = rreqs < st->cfg.max_reqs ? rreqs : st->cfg.max_reqs;
	c->fifo_depth = rreqs;
	c->max_recvs = rrecvs < st->cfg.max_recvs ? rrecvs : st->cfg.max_recvs;
	c->fifo_recvs = rrecvs;
	c->seq_base = dvx_msg_get16(b + 52);
	c->max_chunk = max_chunk(st->nic[c->nic].log_max_msg, b[50]);
	/* CTS offload when both ends ask for it; one that asked alone falls back */
	c->offload = (b[54] & 1) && (st->cfg.flags & DVX_MSG_F_CTS_OFFLOAD);
	if (c->offload)
		st->cnt.offloads++;
	else if ((b[54] & 1) || (st->cfg.flags & DVX_MSG_F_CTS_OFFLOAD))
		st->cnt.cts_fallbacks++;
	nqps = want < st->cfg.nqps ? want : st->cfg.nqps;
	c->nqps = (uint8_t)nqps;
	return acc_answer(st, hs);
}

/* the HELLO (still in hs->in) decided and its REPLY built: 0, 1 (wait) or an errno */
static int acc_answer(struct dvx_msg_state *st, struct msg_hs *hs)
{
	const uint8_t *b = hs->in + MSG_HS_HDR;
	struct dvx_msg_comm *c = hs_comm(st, hs);
	uint32_t nqps = c->nqps, set_nqps;
	uint8_t *r;
	int err;

	err = acc_decide(st, hs, b[46], dvx_msg_get64(b + 16), b[48], nqps);
	if (err)
		return err;
	if (c->offload)
		acc_credits(st, hs, c);
	set_nqps = hs->decision == MSG_D_JOIN ? 0 : st->sets[hs->set].nqps;
	r = msg_begin(hs, MSG_HS_REPLY, REPLY_FIXED + set_nqps * CONN_BYTES);
	r[4] = hs->decision;
	r[5] = (uint8_t)nqps;
	r[6] = (uint8_t)set_nqps;
	r[7] = hs->decision == MSG_D_JOIN ? hs->mask : 0;
	dvx_msg_put64(r + 8, st->ctx_id);
	dvx_msg_put16(r + 16, c->id);
	dvx_msg_put16(r + 18, (uint16_t)c->max_reqs);
	r[20] = (uint8_t)c->max_recvs;
	r[21] = (uint8_t)st->nic[c->nic].log_max_msg;
	if (c->offload) {
		r[22] = 1;
		dvx_msg_put64(r + 24, (uint64_t)(uintptr_t)c->eager);
		dvx_msg_put32(r + 32, st->nic[c->nic].fifo_mr.rkey);
		dvx_msg_put32(r + 36, st->cfg.eager_bytes);
	}
	if (set_nqps)
		return put_infos(st, (uint32_t)hs->set, r + REPLY_FIXED);
	return 0;
}

/* READY arrived: connect (NEW/PRIVATE) and build DONE */
static int acc_ready(struct dvx_msg_state *st, struct msg_hs *hs)
{
	const uint8_t *b = hs->in + MSG_HS_HDR;
	uint32_t body = hs->in_len - MSG_HS_HDR, status = dvx_msg_get32(b), n = b[4];
	int err;

	if (body < READY_FIXED)
		return -EPROTO;
	if (status)
		return status < 4096 ? -(int)status : -EPROTO;
	if (hs->decision != MSG_D_JOIN) {
		if (n != st->sets[hs->set].nqps || body != READY_FIXED + n * CONN_BYTES)
			return -EPROTO;
		err = set_go_live(st, hs, b + READY_FIXED);
		if (err)
			return err;
	} else if (n || body != READY_FIXED) {
		return -EPROTO;
	}
	msg_begin(hs, MSG_HS_DONE, DONE_BODY);
	return 0;
}

/* park a finished recv comm on its listen comm's queue */
static void acc_park(struct dvx_msg_state *st, struct dvx_msg_comm *c)
{
	struct dvx_msg_comm *l = listen_by_id(st, c->listen_id);
	int32_t s = (int32_t)dvx_msg_slot_of(st, c);

	c->state = MSG_CS_PARKED;
	c->q_next = -1;
	if (l->q_tail >= 0)
		st->comms[l->q_tail].q_next = s;
	else
		l->q_head = s;
	l->q_tail = s;
}

/* one step of an acceptor; 1: progressed, 0: blocked or finished */
static int acc_step(struct dvx_msg_state *st, struct msg_hs *hs)
{
	int err;

	switch (hs->state) {
	case MSG_HA_HELLO:
		err = hs_recv(st, hs, MSG_HS_HELLO);
		if (err > 0)
			return 0;
		if (err) {
			acc_drop(st, hs);
			return 0;
		}
		err = acc_hello(st, hs);
		if (err == -EPROTO) {
			acc_drop(st, hs);	/* not a peer of ours: no answer */
			return 0;
		}
		if (err == 1) {
			hs->state = MSG_HA_DECIDE;
			return 0;
		}
		if (err) {
			acc_refuse(st, hs, err);
			return 1;
		}
		hs->state = MSG_HA_REPLY;
		return 1;
	case MSG_HA_DECIDE:
		err = acc_answer(st, hs);
		if (err == 1)
			return 0;
		if (err) {
			acc_refuse(st, hs, err);
			return 1;
		}
		hs->state = MSG_HA_REPLY;
		return 1;
	case MSG_HA_REPLY:
	case MSG_HA_REFUSE:
		err = hs_send(st, hs);
		if (err > 0)
			return 0;
		if (err || hs->state == MSG_HA_REFUSE) {
			if (err)
				acc_drop(st, hs);
			else {
				hs_release(st, hs);
				hs_free(hs);
			}
			return 0;
		}
		expect(hs);
		hs->state = MSG_HA_READY;
		return 1;
	case MSG_HA_READY:
		err = hs_recv(st, hs, MSG_HS_READY);
		if (err > 0)
			return 0;
		if (!err)
			err = acc_ready(st, hs);
		if (err) {
			acc_drop(st, hs);
			return 0;
		}
		hs->state = MSG_HA_DONE;
		return 1;
	case MSG_HA_DONE: {
		struct dvx_msg_comm *c = hs_comm(st, hs);

		err = hs_send(st, hs);
		if (err > 0)
			return 0;
		if (err) {
			acc_drop(st, hs);
			return 0;
		}
		count_decision(st, hs->proposal, hs->decision);
		if (hs->decision != MSG_D_JOIN)
			st->sets[hs->set].making = 0;
		acc_park(st, c);
		hs->comm = -1;
		hs->set = -1;
		dvx_hal_sock_close(st->hal, hs->fd);
		hs_free(hs);
		return 0;
	}
	default:
		return 0;
	}
}

/* ------------------------------------------------------------------------------
 * The engine
 */
static struct msg_hs *hs_alloc(struct dvx_msg_state *st)
{
	uint32_t i;

	for (i = 0; i < st->cfg.max_pending; i++)
		if (st->hs[i].state == MSG_HS_FREE) {
			struct msg_hs *hs = &st->hs[i];

			memset(hs, 0, sizeof(*hs));
			hs->fd = -1;
			hs->comm = -1;
			hs->set = -1;
			hs->gen = (uint32_t)++st->hs_gen;
			hs->deadline = dvx_msg_now(st) + st->cfg.timeout_ns;
			return hs;
		}
	return NULL;
}

static void accept_new(struct dvx_msg_state *st)
{
	for (;;) {
		struct msg_hs *hs;
		int fd = -1;
		uint32_t i, free_slots = 0;

		/* incoming handshakes finish on their own (the connector answers from any of
		 * its calls), so they may take every free slot; this rank's own connects are
		 * the ones held to half the table (dvx_msg_connect()) */
		for (i = 0; i < st->cfg.max_pending; i++)
			free_slots += st->hs[i].state == MSG_HS_FREE;
		if (!free_slots)
			return;
		if (dvx_hal_sock_accept(st->hal, st->lfd, &fd))
			return;	/* none (-EAGAIN), or an aborted one: the next pass tries again */
		hs = hs_alloc(st);
		hs->fd = fd;
		hs->state = MSG_HA_HELLO;
		expect(hs);
	}
}

/* a connect that finished or failed and that nobody collected within the timeout (its
 * caller gave up): what it holds goes, so that abandoned connects cannot fill the table */
static void conn_expire(struct dvx_msg_state *st, struct msg_hs *hs)
{
	struct dvx_msg_comm *c = hs_comm(st, hs);

	if (hs->state == MSG_HC_FINISHED && c) {
		dvx_msg_set_unref(st, c);
		dvx_msg_comm_free(st, c);
	}
	hs->comm = -1;
	hs_free(hs);
	st->cnt.refused++;
}

void dvx_msg_hs_run(struct dvx_msg_state *st)
{
	uint32_t i;

	if (st->nclosing)
		dvx_msg_closing_poll(st);
	if (st->lfd >= 0)
		accept_new(st);
	for (i = 0; i < st->cfg.max_pending; i++) {
		struct msg_hs *hs = &st->hs[i];
		uint8_t was = hs->state;
		int r;

		if (hs->state == MSG_HS_FREE)
			continue;
		if (hs->state == MSG_HC_FINISHED || hs->state == MSG_HC_FAILED) {
			if (dvx_msg_now(st) > hs->deadline)
				conn_expire(st, hs);
			continue;
		}
		/* a step first: what already arrived counts, however late the call */
		do {
			if (hs->state >= MSG_HA_HELLO) {
				r = acc_step(st, hs);
			} else {
				r = conn_step(st, hs);
				if (r < 0) {
					conn_fail(st, hs, r);
					r = 0;
				}
			}
		} while (r > 0);
		if (hs->state == MSG_HS_FREE)
			continue;
		if (hs->state == MSG_HC_FINISHED || hs->state == MSG_HC_FAILED) {
			if (was != hs->state)	/* its caller has a timeout's time to collect it */
				hs->deadline = dvx_msg_now(st) + st->cfg.timeout_ns;
			continue;
		}
		if (dvx_msg_now(st) > hs->deadline) {
			if (hs->state >= MSG_HA_HELLO)
				acc_drop(st, hs);
			else
				conn_fail(st, hs, -ETIMEDOUT);
			hs->deadline = dvx_msg_now(st) + st->cfg.timeout_ns;
		}
	}
}

void dvx_msg_hs_abort_all(struct dvx_msg_state *st)
{
	uint32_t i;

	for (i = 0; i < st->cfg.max_pending; i++) {
		struct msg_hs *hs = &st->hs[i];

		if (hs->state == MSG_HS_FREE)
			continue;
		hs_release(st, hs);
		hs_free(hs);
	}
}

int dvx_msg_hs_close_listen(struct dvx_msg_state *st, struct dvx_msg_comm *c)
{
	uint32_t i;
	int err = 0;

	for (i = 0; i < st->cfg.max_pending; i++) {
		struct msg_hs *hs = &st->hs[i];
		struct dvx_msg_comm *h = hs_comm(st, hs);

		if (hs->state >= MSG_HA_HELLO && h && h->listen_id == c->id)
			acc_drop(st, hs);
	}
	/* connections that completed but were never accepted */
	while (c->q_head >= 0) {
		struct dvx_msg_comm *p = &st->comms[c->q_head];
		int e;

		c->q_head = p->q_next;
		e = dvx_msg_set_unref(st, p);
		if (!err)
			err = e;
		dvx_msg_comm_free(st, p);
	}
	dvx_msg_comm_free(st, c);
	return err;
}

/* ------------------------------------------------------------------------------
 * The calls
 */
int dvx_msg_listen(struct dvx_msg *m, uint32_t nic, struct dvx_msg_handle *handle,
		   struct dvx_msg_comm **listen)
{
	struct dvx_msg_state *st;
	struct msg_handle_info info;
	struct dvx_msg_comm *c;
	uint64_t cookie;
	int err;

	if (!m || m->live != DVX_LIVE || !handle || !listen)
		return -EINVAL;
	st = m->st;
	if (nic >= st->cfg.nnics)
		return -EINVAL;
	err = dvx_msg_random64(st, &cookie);
	if (err)
		return err;
	err = dvx_msg_comm_alloc(st, MSG_K_LISTEN, &c);
	if (err)
		return err;
	c->nic = nic;
	c->cookie = cookie;
	c->state = MSG_CS_LIVE;
	info.addr = st->addr;
	info.ctx = st->ctx_id;
	info.cookie = c->cookie;
	info.listen_id = c->id;
	info.nic = (uint8_t)c->nic;
	dvx_msg_handle_put(handle, &info);
	*listen = c;
	return 0;
}

/* handshakes this context runs as the connector */
static uint32_t conn_count(const struct dvx_msg_state *st)
{
	uint32_t i, n = 0;

	for (i = 0; i < st->cfg.max_pending; i++)
		n += st->hs[i].state != MSG_HS_FREE && st->hs[i].state < MSG_HA_HELLO;
	return n;
}

static void stage_clear(struct dvx_msg_handle *h)
{
	memset(h->stage, 0, sizeof(h->stage));
}

/* the handshake a handle's stage names, if it is this context's and still running */
static struct msg_hs *stage_hs(struct dvx_msg_state *st, const struct dvx_msg_handle *h)
{
	uint32_t idx;
	struct msg_hs *hs;

	if (dvx_msg_get32(h->stage) != STAGE_MAGIC || dvx_msg_get64(h->stage + 16) != st->ctx_id)
		return NULL;
	idx = dvx_msg_get32(h->stage + 4);
	if (idx >= st->cfg.max_pending)
		return NULL;
	hs = &st->hs[idx];
	if (hs->state == MSG_HS_FREE || hs->state >= MSG_HA_HELLO ||
	    hs->gen != dvx_msg_get32(h->stage + 8))
		return NULL;
	return hs;
}

int dvx_msg_connect(struct dvx_msg *m, uint32_t nic, uint32_t nqps,
		    struct dvx_msg_handle *handle, struct dvx_msg_comm **send)
{
	struct dvx_msg_state *st;
	struct dvx_msg_comm *c;
	struct msg_hs *hs;
	int err;

	if (!m || m->live != DVX_LIVE || !handle || !send)
		return -EINVAL;
	st = m->st;
	*send = NULL;
	hs = stage_hs(st, handle);
	if (!hs) {
		struct msg_handle_info hi;

		stage_clear(handle);
		if (!nqps)
			nqps = st->cfg.nqps;
		if (nic >= st->cfg.nnics || nqps > st->cfg.nqps)
			return -EINVAL;
		err = dvx_msg_handle_parse(handle, &hi);
		if (err)
			return err;
		/* at most half the handshake table connects out, so that incoming ones always
		 * find room: two ranks whose tables filled with connects to each other would
		 * otherwise wait for each other for ever. No room: not now, call again */
		if (conn_count(st) >= st->cfg.max_pending / 2) {
			dvx_msg_hs_run(st);
			return 0;
		}
		hs = hs_alloc(st);
		if (!hs) {
			dvx_msg_hs_run(st);
			return 0;
		}
		err = dvx_msg_comm_alloc(st, MSG_K_SEND, &c);
		if (err) {
			hs_free(hs);
			return err;
		}
		hs->comm = (int32_t)dvx_msg_slot_of(st, c);
		hs->state = MSG_HC_WAIT_KEY;
		hs->want_nqps = nqps;
		hs->addr = hi.addr;
		hs->cookie = hi.cookie;
		hs->listen_id = hi.listen_id;
		hs->listen_nic = hi.nic;
		c->nic = nic;
		c->peer_ctx = hi.ctx;
		c->peer_nic = hi.nic;
		c->nqps = (uint8_t)nqps;
		c->group = st->cfg.groups ? next_group(st, c) : 0;
		/* the clear-to-send sequence starts anywhere: a receiver still writing into
		 * a FIFO this slot had before never writes the sequence expected now */
		c->seq_base = (uint16_t)(st->ctx_id ^ (st->hs_gen * 0x9e37u) ^ c->epoch * 0x7f4au);
		dvx_msg_put32(handle->stage, STAGE_MAGIC);
		dvx_msg_put32(handle->stage + 4, (uint32_t)(hs - st->hs));
		dvx_msg_put32(handle->stage + 8, hs->gen);
		dvx_msg_put64(handle->stage + 16, st->ctx_id);
	}
	dvx_msg_hs_run(st);
	if (hs->state == MSG_HC_FINISHED) {
		*send = hs_comm(st, hs);
		hs->comm = -1;
		hs_free(hs);
		stage_clear(handle);
		return 0;
	}
	if (hs->state == MSG_HC_FAILED) {
		err = hs->err;
		hs_free(hs);
		stage_clear(handle);
		return err;
	}
	return 0;
}

int dvx_msg_accept(struct dvx_msg_comm *listen, struct dvx_msg_comm **recv)
{
	struct dvx_msg_state *st;
	struct dvx_msg_comm *c;

	if (!listen || listen->magic != MSG_COMM_MAGIC || listen->kind != MSG_K_LISTEN || !recv)
		return -EINVAL;
	st = listen->st;
	*recv = NULL;
	dvx_msg_hs_run(st);
	if (listen->q_head < 0)
		return 0;
	c = &st->comms[listen->q_head];
	listen->q_head = c->q_next;
	if (listen->q_head < 0)
		listen->q_tail = -1;
	c->q_next = -1;
	c->state = MSG_CS_LIVE;
	dvx_msg_offload_kick(st, c);	/* offload: the credits, and the first word of them */
	*recv = c;
	return 0;
}
