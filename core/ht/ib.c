// SPDX-License-Identifier: MIT
/*
 * core/ht/ib.c - the IB host transport's set-up: the configuration, the three regions,
 * init and fini, the non-blocking handshake over the bootstrap, the invariant checker
 * and the counters (docs/ht.md).
 */
#include "ht_priv.h"
#include "../nic/priv.h"

#include <stdarg.h>
#include <stdio.h>

#include <dvx/hal.h>
#include <dvx/mlx5/barrier.h>

#define HT_DEF_SQ 256
#define HT_DEF_RQ 512
#define HT_DEF_CTRL 256
#define HT_DEF_CTRL_SLOTS 8
#define HT_DEF_CB_DEPTH 8
#define HT_DEF_CB_SLOT 65536
#define HT_RNR_RETRY 6		/* finite: an RNR ends in an error, never an endless wait */
#define HT_MIN_RNR_NAK 31	/* the longest RNR timer between two tries */
#define HT_CREDIT_BYTES 256	/* credit words (one per channel), then the fetch-add sink */

/* a ring depth: a power of two from 16 to 32768 */
static int depth_ok(uint32_t v)
{
	return v >= 16 && v <= 32768 && !(v & (v - 1));
}

static int conn_is_zero(const struct dvx_qp_connect_cfg *a)
{
	static const struct dvx_qp_connect_cfg zero;

	return !memcmp(a, &zero, sizeof(zero));
}

/* a refused configuration or argument: its cause in the NIC's diagnostic, when the
 * configuration names an opened one */
static int __attribute__((format(printf, 3, 4)))
ht_bad(const struct dvx_ht_ib_cfg *in, const char *op, const char *fmt, ...)
{
	char why[sizeof(((struct dvx_diag *)0)->msg)];
	va_list ap;

	if (!in || !in->nic || in->nic->open != DVX_LIVE)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return dvx_core_fail(in->nic, -EINVAL, DVX_DIAG_ARG, op, "%s", why);
}

int dvx_ht_ib_cfg_norm(const struct dvx_ht_ib_cfg *in, struct dvx_ht_ib_cfg *c, int need_nic)
{
	const char *op = need_nic ? "dvx_ht_ib_init" : "dvx_ht_ib_mem_req";

	if (!in)
		return -EINVAL;
	*c = *in;
	if (need_nic && (!c->nic || c->nic->open != DVX_LIVE))
		return -EINVAL;	/* no NIC to keep the record */
	if (c->mode != DVX_HT_ZC && c->mode != DVX_HT_CB)
		return ht_bad(in, op, "mode %u: DVX_HT_ZC or DVX_HT_CB", c->mode);
	if (!c->nchannels)
		c->nchannels = 1;
	if (!c->sq_depth)
		c->sq_depth = HT_DEF_SQ;
	if (!c->rq_depth)
		c->rq_depth = HT_DEF_RQ;
	if (!c->max_ctrl)
		c->max_ctrl = HT_DEF_CTRL;
	if (!c->ctrl_slots)
		c->ctrl_slots = HT_DEF_CTRL_SLOTS;
	if (!c->cb_depth)
		c->cb_depth = HT_DEF_CB_DEPTH;
	if (!c->cb_slot_bytes)
		c->cb_slot_bytes = HT_DEF_CB_SLOT;
	if (c->nchannels > DVX_HT_MAX_CHANNELS)
		return ht_bad(in, op, "nchannels %u above %u", c->nchannels, DVX_HT_MAX_CHANNELS);
	if (!depth_ok(c->sq_depth) || !depth_ok(c->rq_depth))
		return ht_bad(in, op, "sq_depth %u, rq_depth %u: powers of two from 16 to 32768",
			      c->sq_depth, c->rq_depth);
	if (c->max_ctrl < 8 || c->max_ctrl > DVX_HT_MAX_CTRL)
		return ht_bad(in, op, "max_ctrl %u outside 8 ... %u", c->max_ctrl,
			      DVX_HT_MAX_CTRL);
	if (c->ctrl_slots > 64)
		return ht_bad(in, op, "ctrl_slots %u above 64", c->ctrl_slots);
	if (c->cb_depth > DVX_HT_CB_MAX_DEPTH)
		return ht_bad(in, op, "cb_depth %u above %u", c->cb_depth, DVX_HT_CB_MAX_DEPTH);
	if ((c->cb_slot_bytes & 63) || c->cb_slot_bytes > (1u << 30))
		return ht_bad(in, op, "cb_slot_bytes %u: a multiple of 64 up to 2^30",
			      c->cb_slot_bytes);
	/* every chunk and control message in flight consumes a receive at the peer: the
	 * slots and control messages must fit the receive ring, and the sends the send
	 * ring (writes, credits and control messages share it) */
	if (c->cb_depth + c->ctrl_slots > c->rq_depth)
		return ht_bad(in, op, "cb_depth %u + ctrl_slots %u above rq_depth %u",
			      c->cb_depth, c->ctrl_slots, c->rq_depth);
	if (2 * c->cb_depth + c->ctrl_slots > c->sq_depth)
		return ht_bad(in, op, "2 * cb_depth %u + ctrl_slots %u above sq_depth %u",
			      c->cb_depth, c->ctrl_slots, c->sq_depth);
	if (conn_is_zero(&c->conn)) {
		dvx_qp_connect_cfg_init(&c->conn);
		c->conn.rnr_retry = HT_RNR_RETRY;
		c->conn.min_rnr_nak = HT_MIN_RNR_NAK;
	}
	if (c->conn.rnr_retry >= 7)	/* 7 retries for ever: an RNR would hang the sender */
		return ht_bad(in, op, "conn.rnr_retry 7 retries for ever: at most 6");
	return 0;
}

/* The layout every region is carved by. */
struct ht_layout {
	uint32_t cq_depth;
	uint32_t nbuf;
	uint64_t wq_bytes, ctrl_stride, stage_bytes;
	/* rings */
	uint64_t o_wq, o_dbr, rings_bytes;
	/* data */
	uint64_t o_ctrl_rx, o_credit, o_tx_stage, o_rx_stage, data_bytes;
	/* state */
	uint64_t o_wr, o_zc, o_slots, o_free, o_arr, state_bytes;
};

static void layout(const struct dvx_ht_ib_cfg *c, struct ht_layout *l)
{
	uint64_t nch = c->nchannels, o;

	memset(l, 0, sizeof(*l));
	/* every WQE and receive of every channel may complete before one poll */
	l->cq_depth = 1u << (dvx_core_log2(nch * (c->sq_depth + c->rq_depth) - 1) + 1);
	l->wq_bytes = dvx_ht_align(DVX_QP_WQ_BYTES(c->sq_depth, c->rq_depth, DVX_RQ_STRIDE(1)),
				   HT_RING_ALIGN);
	l->nbuf = c->rq_depth + c->ctrl_slots;
	l->ctrl_stride = dvx_ht_align(c->max_ctrl, 64);
	l->stage_bytes = c->mode == DVX_HT_CB ?
				 nch * c->cb_depth * (uint64_t)c->cb_slot_bytes : 0;

	/* rings: the CQ, each channel's work queue, then one page of records (the
	 * channels' QPs, then the CQ) */
	l->o_wq = dvx_ht_align(DVX_CQ_RING_BYTES(l->cq_depth), HT_RING_ALIGN);
	l->o_dbr = l->o_wq + nch * l->wq_bytes;
	l->rings_bytes = l->o_dbr + HT_RING_ALIGN;

	/* data: control send slots, control receive buffers, the credit words and the
	 * fetch-add sink, then the staging (send slots, receive slots) */
	l->o_ctrl_rx = (uint64_t)c->ctrl_slots * l->ctrl_stride;
	l->o_credit = dvx_ht_align(l->o_ctrl_rx + (uint64_t)l->nbuf * l->ctrl_stride, 64);
	l->o_tx_stage = dvx_ht_align(l->o_credit + HT_CREDIT_BYTES, HT_RING_ALIGN);
	l->o_rx_stage = l->o_tx_stage + l->stage_bytes;
	l->data_bytes = dvx_ht_align(l->o_rx_stage + l->stage_bytes, HT_RING_ALIGN);

	/* state: the header, then per channel its wr_ids, its zero-copy length ring and
	 * its slots, then the control buffers' free list and arrival ring */
	o = dvx_ht_align(sizeof(struct dvx_ht_ib_state), 64);
	l->o_wr = o;
	o += nch * (c->sq_depth + c->rq_depth) * 8;
	l->o_zc = o;
	o += nch * c->rq_depth * 8;
	l->o_slots = o;
	o += nch * 2 * c->cb_depth * sizeof(struct ht_slot);
	l->o_free = o;
	o += (uint64_t)l->nbuf * 4;
	l->o_arr = o;
	o += (uint64_t)l->nbuf * 8;
	l->state_bytes = dvx_ht_align(o, 64);
}

int dvx_ht_ib_mem_req(const struct dvx_ht_ib_cfg *cfg, struct dvx_mem_req *state,
		      struct dvx_mem_req *rings, struct dvx_mem_req *data)
{
	struct dvx_ht_ib_cfg c;
	struct ht_layout l;
	int err = state && rings && data ? dvx_ht_ib_cfg_norm(cfg, &c, 0) : -EINVAL;

	if (!err) {
		layout(&c, &l);
		*state = (struct dvx_mem_req){ l.state_bytes, 64 };
		*rings = (struct dvx_mem_req){ l.rings_bytes, HT_RING_ALIGN };
		*data = (struct dvx_mem_req){ l.data_bytes, HT_RING_ALIGN };
	}
	return err;
}

/* ------------------------------------------------------------------------------
 * The handshake
 */

/* a bootstrap answer that means "not now": the call had no effect, or stays pending
 * on the context and is resumed by calling it again */
int dvx_ht_bs_try(int err)
{
	return err == -ETIMEDOUT || err == -EBUSY || err == -ENOBUFS;
}

static void hello_make(struct dvx_ht_ib_state *st, uint8_t kind, int err)
{
	struct ht_hello *m = &st->out_msg;
	const struct dvx_ht_ib_cfg *c = &st->cfg;
	uint32_t i;

	memset(m, 0, sizeof(*m));
	m->magic = dvx_le32(HT_HELLO_MAGIC);
	m->version = HT_HELLO_VERSION;
	m->kind = kind;
	m->mode = (uint8_t)c->mode;
	m->nch = (uint8_t)c->nchannels;
	m->max_ctrl = dvx_le32(c->max_ctrl);
	m->err = (int32_t)dvx_le32((uint32_t)err);
	if (kind != HT_HELLO)
		return;
	if (c->mode == DVX_HT_CB) {
		m->cb_depth = dvx_le32(c->cb_depth);
		m->cb_slot_bytes = dvx_le32(c->cb_slot_bytes);
		m->staging = dvx_le64((uint64_t)(uintptr_t)st->ch[0].rx_staging -
				      (uint64_t)(uintptr_t)st->mr.addr + st->mr.iova);
	}
	m->rkey = dvx_le32(st->mr.rkey);
	m->credits = dvx_le64((uint64_t)(uintptr_t)st->ch[0].credit -
			      (uint64_t)(uintptr_t)st->mr.addr + st->mr.iova);
	dvx_qp_export(&st->ch[0].qp, &m->conn);
	for (i = 0; i < c->nchannels; i++) {
		struct dvx_qp_conn q;

		dvx_qp_export(&st->ch[i].qp, &q);
		m->qpn[i] = q.qpn;
		m->psn[i] = q.psn;
	}
}

int dvx_ht_hello_decode(const struct ht_hello *m, struct ht_hello *out)
{
	*out = *m;
	out->magic = dvx_le32(m->magic);
	out->max_ctrl = dvx_le32(m->max_ctrl);
	out->cb_depth = dvx_le32(m->cb_depth);
	out->cb_slot_bytes = dvx_le32(m->cb_slot_bytes);
	out->rkey = dvx_le32(m->rkey);
	out->err = (int32_t)dvx_le32((uint32_t)m->err);
	out->staging = dvx_le64(m->staging);
	out->credits = dvx_le64(m->credits);
	if (out->magic != HT_HELLO_MAGIC || out->version != HT_HELLO_VERSION ||
	    out->kind < HT_HELLO || out->kind > HT_FAIL)
		return -EPROTO;
	return 0;
}

/* the peer's HELLO against this end: the same mode and geometry */
static int hello_match(const struct dvx_ht_ib_state *st, const struct ht_hello *h)
{
	const struct dvx_ht_ib_cfg *c = &st->cfg;

	if (h->mode != c->mode || h->nch != c->nchannels || h->max_ctrl != c->max_ctrl)
		return -EPROTO;
	if (c->mode == DVX_HT_CB &&
	    (h->cb_depth != c->cb_depth || h->cb_slot_bytes != c->cb_slot_bytes))
		return -EPROTO;
	return 0;
}

/* connect every channel's QP to the peer's and post its receives */
static int hello_apply(struct dvx_ht_ib_state *st, const struct ht_hello *h)
{
	const struct dvx_ht_ib_cfg *c = &st->cfg;
	struct dvx_qp_connect_cfg ca = c->conn;
	uint32_t i;
	int err;

	/* the peer writes chunks (both modes) and hands slots back by fetch-add
	 * (copy-based); it never reads */
	ca.access = DVX_ACCESS_REMOTE_WRITE;
	if (c->mode == DVX_HT_CB)
		ca.access |= DVX_ACCESS_REMOTE_ATOMIC;
	st->peer_rkey = h->rkey;
	for (i = 0; i < c->nchannels; i++) {
		struct ht_chan *ch = &st->ch[i];
		struct dvx_qp_conn q = h->conn;

		q.qpn = h->qpn[i];
		q.psn = h->psn[i];
		err = dvx_qp_connect(&ch->qp, &q, &ca);
		if (err)
			return err;
		ch->peer_credit = h->credits + 8ull * i;
		ch->peer_staging = h->staging + (uint64_t)i * c->cb_depth * c->cb_slot_bytes;
	}
	for (i = 0; i < c->nchannels; i++)
		dvx_ht_rx_fill(st, &st->ch[i]);
	return 0;
}

/* the handshake failed: remember why, and tell a peer that may be waiting for this
 * end unless the peer is the one that gave up (@tell 0) */
static int hs_fail(struct dvx_ht_ib_state *st, int err, int tell)
{
	int sent_hello = st->hs != HT_HS_SEND_HELLO;

	st->err = err;
	st->hs = HT_HS_FAILED;
	/* best effort: a bootstrap call still pending on the context refuses it, and
	 * the peer's wait times out instead */
	if (sent_hello && tell) {
		hello_make(st, HT_FAIL, err);
		dvx_bootstrap_send(st->cfg.bs, st->cfg.peer, st->cfg.tag, &st->out_msg,
				   sizeof(st->out_msg), HT_BS_TRY_NS);
	}
	return err;
}

/* one message from the peer, if one is there: 1 got it, 0 not yet, or the error */
static int hs_recv(struct dvx_ht_ib_state *st, struct ht_hello *m)
{
	struct ht_hello raw;
	int err;

	err = dvx_bootstrap_recv(st->cfg.bs, st->cfg.peer, st->cfg.tag, &raw, sizeof(raw),
				 HT_BS_TRY_NS);
	if (dvx_ht_bs_try(err))
		return 0;
	if (err == -EMSGSIZE)
		return -EPROTO;	/* not a handshake message of this version */
	if (err)
		return err;
	err = dvx_ht_hello_decode(&raw, m);
	return err ? err : 1;
}

/* hand out_msg to the bootstrap: 1 handed over, 0 not yet, or the error */
static int hs_send(struct dvx_ht_ib_state *st)
{
	int err = dvx_bootstrap_send(st->cfg.bs, st->cfg.peer, st->cfg.tag, &st->out_msg,
				     sizeof(st->out_msg), HT_BS_TRY_NS);

	if (dvx_ht_bs_try(err))
		return 0;
	return err ? err : 1;
}

/* the peer gave up: a mismatch is one on both ends; anything else is its own */
static int peer_refusal(const struct ht_hello *m)
{
	return m->err == -EPROTO ? -EPROTO : -ECONNREFUSED;
}

/*
 * Move the handshake on as far as it goes without waiting: send HELLO, take the
 * peer's HELLO (connect, post receives), send READY, take the peer's READY. Each end
 * connects its QPs before it says READY, so neither writes to a QP that is not ready
 * to receive. 0 (moved or not), or the error that failed the transport.
 */
int dvx_ht_hs_step(struct dvx_ht_ib_state *st)
{
	struct ht_hello m;
	int r;

	switch (st->hs) {
	case HT_HS_SEND_HELLO:
		r = hs_send(st);
		if (r <= 0)
			return r < 0 ? hs_fail(st, r, 1) : 0;
		st->hs = HT_HS_RECV_HELLO;
		DVX_FALLTHROUGH;
	case HT_HS_RECV_HELLO:
		if (st->have_hello) {
			/* the cache took the peer's HELLO for us */
			st->have_hello = 0;
			r = dvx_ht_hello_decode(&st->in_msg, &m);
			r = r ? r : 1;
		} else {
			r = hs_recv(st, &m);
		}
		if (r <= 0)
			return r < 0 ? hs_fail(st, r, 1) : 0;
		if (m.kind == HT_FAIL)
			return hs_fail(st, peer_refusal(&m), 0);
		if (m.kind != HT_HELLO)
			return hs_fail(st, -EPROTO, 1);
		r = hello_match(st, &m);
		if (!r)
			r = hello_apply(st, &m);
		if (r)
			return hs_fail(st, r, 1);
		hello_make(st, HT_READY, 0);
		st->hs = HT_HS_SEND_READY;
		DVX_FALLTHROUGH;
	case HT_HS_SEND_READY:
		r = hs_send(st);
		if (r <= 0)
			return r < 0 ? hs_fail(st, r, 1) : 0;
		st->hs = HT_HS_RECV_READY;
		DVX_FALLTHROUGH;
	case HT_HS_RECV_READY:
		r = hs_recv(st, &m);
		if (r <= 0)
			return r < 0 ? hs_fail(st, r, 1) : 0;
		if (m.kind == HT_FAIL)
			return hs_fail(st, peer_refusal(&m), 0);
		if (m.kind != HT_READY)
			return hs_fail(st, -EPROTO, 1);
		st->hs = HT_HS_CONNECTED;
		return 0;
	case HT_HS_FAILED:
		return st->err;
	default:
		return 0;
	}
}

/* ------------------------------------------------------------------------------
 * init / fini
 */
/* everything the transport holds, in reverse order of making; the first error (the
 * rest is released all the same) */
static int teardown(struct dvx_ht_ib_state *st)
{
	int err[DVX_HT_MAX_CHANNELS + 3] = { 0 }, n = 0, i;

	for (i = (int)st->cfg.nchannels; i-- > 0;)
		if (st->ch[i].qp.live == DVX_LIVE)
			err[n++] = dvx_qp_destroy(&st->ch[i].qp);
	if (st->cq.live == DVX_LIVE)
		err[n++] = dvx_cq_destroy(&st->cq);
	if (st->mr.live == DVX_LIVE)
		err[n++] = dvx_mr_dereg(&st->mr);
	if (st->umem.live == DVX_LIVE)
		err[n++] = dvx_umem_dereg(&st->umem);
	for (i = 0; i < n; i++)
		if (err[i])
			return err[i];
	return 0;
}

int dvx_ht_regions_take(const struct dvx_ht_region *r, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (!r[i].p || r[i].len < r[i].need || ((uintptr_t)r[i].p & (r[i].align - 1)))
			return -EINVAL;
	for (i = 0; i < n; i++)
		if (r[i].zero)
			memset(r[i].p, 0, r[i].need);
	return 0;
}

static int init_fail(struct dvx_ht_ib *ib, struct dvx_ht_ib_state *st, int err)
{
	struct dvx_diag keep = st->cfg.nic->hal.diag;

	/* the unwind's successful destroys clear the NIC's diagnostic: the caller is
	 * owed the failure's own record */
	teardown(st);
	st->cfg.nic->hal.diag = keep;
	st->magic = 0;
	memset(ib, 0, sizeof(*ib));
	return err;
}

/* the channel's QP: its work queue in the ring region, its receives the data region's */
static int chan_make(struct dvx_ht_ib_state *st, const struct ht_layout *l, uint32_t i)
{
	struct ht_chan *ch = &st->ch[i];
	const struct dvx_ht_ib_cfg *c = &st->cfg;
	struct dvx_qp_cfg qa;

	memset(&qa, 0, sizeof(qa));
	qa.sq_depth = c->sq_depth;
	qa.rq_depth = c->rq_depth;
	qa.rq_max_sge = 1;
	qa.send_cq = &st->cq;
	qa.recv_cq = &st->cq;
	/* any 24-bit PSN; distinct ones help reading traces */
	qa.psn = (0x4854u + i * 977u + (uint32_t)c->peer * 31u) & 0xffffffu;
	qa.wq_umem = &st->umem;
	qa.wq_offset = l->o_wq + (uint64_t)i * l->wq_bytes;
	qa.dbr_umem = &st->umem;
	qa.dbr_offset = l->o_dbr + 8ull * i;
	qa.sq_wr_ids = ch->wr_ids;
	qa.rq_wr_ids = ch->wr_ids + c->sq_depth;
	return dvx_qp_create(c->nic, &qa, &ch->qp);
}

/* carve the state and data regions (already zeroed) into the channels' pieces */
static void carve(struct dvx_ht_ib_state *st, const struct ht_layout *l, uint8_t *s8)
{
	const struct dvx_ht_ib_cfg *c = &st->cfg;
	uint32_t i;

	st->ctrl_stride = l->ctrl_stride;
	st->nbuf = l->nbuf;
	st->ctrl_tx = st->data;
	st->ctrl_rx = st->data + l->o_ctrl_rx;
	st->sink = (uint64_t *)(void *)(st->data + l->o_credit) + DVX_HT_MAX_CHANNELS;
	st->free = (uint32_t *)(void *)(s8 + l->o_free);
	st->arr_buf = (uint32_t *)(void *)(s8 + l->o_arr);
	st->arr_len = st->arr_buf + l->nbuf;
	for (i = 0; i < l->nbuf; i++)
		st->free[i] = l->nbuf - 1 - i;
	st->nfree = l->nbuf;
	for (i = 0; i < c->nchannels; i++) {
		struct ht_chan *ch = &st->ch[i];
		uint64_t sl = (uint64_t)c->cb_depth * c->cb_slot_bytes;

		ch->wr_ids = (uint64_t *)(void *)(s8 + l->o_wr) +
			     (uint64_t)i * (c->sq_depth + c->rq_depth);
		ch->zc_len = (uint64_t *)(void *)(s8 + l->o_zc) + (uint64_t)i * c->rq_depth;
		ch->tx_slot = (struct ht_slot *)(void *)(s8 + l->o_slots) +
			      (uint64_t)i * 2 * c->cb_depth;
		ch->rx_slot = ch->tx_slot + c->cb_depth;
		ch->credit = (uint64_t *)(void *)(st->data + l->o_credit) + i;
		if (c->mode == DVX_HT_CB) {
			ch->tx_staging = st->data + l->o_tx_stage + i * sl;
			ch->rx_staging = st->data + l->o_rx_stage + i * sl;
		}
	}
}

int dvx_ht_ib_setup(struct dvx_ht_ib *ib, const struct dvx_ht_ib_cfg *cfg, void *state,
		    uint64_t state_len, void *rings, uint64_t rings_len, void *data,
		    uint64_t data_len, const struct ht_idle *idle, const struct ht_hello *hello)
{
	struct dvx_ht_ib_state *st = state;
	struct dvx_ht_ib_cfg c;
	struct ht_layout l;
	uint32_t i;
	int err;

	if (!ib)
		return -EINVAL;
	if (ib->live == DVX_LIVE)
		return -EBUSY;
	err = dvx_ht_ib_cfg_norm(cfg, &c, 1);
	if (err)
		return err;
	if (!c.bs)
		return ht_bad(cfg, "dvx_ht_ib_init", "no bootstrap");
	if (c.peer < 0 || c.peer >= dvx_bootstrap_nranks(c.bs) ||
	    c.peer == dvx_bootstrap_rank(c.bs))
		return ht_bad(cfg, "dvx_ht_ib_init", "peer %d: another rank of the %d", c.peer,
			      dvx_bootstrap_nranks(c.bs));
	if (c.mode == DVX_HT_CB && !(c.nic->features & DVX_NIC_FEAT_ATOMIC))
		return -EOPNOTSUPP;	/* the credits are fetch-adds */
	layout(&c, &l);
	{
		const struct dvx_ht_region r[3] = {
			{ state, state_len, l.state_bytes, 64, 1 },
			{ rings, rings_len, l.rings_bytes, HT_RING_ALIGN, 1 },
			{ data, data_len, l.data_bytes, HT_RING_ALIGN, 1 },
		};

		static const char *const name[3] = { "state", "rings", "data" };

		for (i = 0; i < 3; i++)
			if (!r[i].p || r[i].len < r[i].need || ((uintptr_t)r[i].p & (r[i].align - 1)))
				return ht_bad(cfg, "dvx_ht_ib_init",
					      "%s region: NULL, under %llu bytes or not %llu-byte aligned",
					      name[i], (unsigned long long)r[i].need,
					      (unsigned long long)r[i].align);
		err = dvx_ht_regions_take(r, 3);
		if (err)
			return err;
	}
	st->magic = HT_ST_MAGIC;
	st->ib = ib;
	st->cfg = c;
	st->hs_step = dvx_ht_hs_step;
	st->recover = dvx_ht_ib_recover_chan;
	if (idle)
		st->idle = *idle;
	st->hal = c.nic->hal.hal;
	st->data = data;
	st->cq_depth = l.cq_depth;
	carve(st, &l, state);
	ib->st = st;

	/* the rings as a umem; the data region as an MR: peers write chunks and control
	 * messages, copy-based peers add credits; the CQ; a QP per channel */
	err = dvx_umem_reg(c.nic,
			   &(struct dvx_umem_cfg){ .addr = rings, .len = l.rings_bytes,
						    .access = DVX_ACCESS_LOCAL_WRITE,
						    .dmabuf_fd = -1 },
			   &st->umem);
	if (!err && st->umem.ring_align > HT_RING_ALIGN)
		err = -EINVAL;
	if (!err)
		err = dvx_mr_reg(c.nic,
				 &(struct dvx_mr_cfg){
					 .addr = data, .len = l.data_bytes,
					 .access = DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_WRITE |
						   (c.mode == DVX_HT_CB ? DVX_ACCESS_REMOTE_ATOMIC : 0) },
				 &st->mr);
	if (!err)
		err = dvx_cq_create(c.nic,
				    &(struct dvx_cq_cfg){
					    .depth = l.cq_depth, .ring_umem = &st->umem,
					    .dbr_umem = &st->umem,
					    .dbr_offset = l.o_dbr + 8ull * DVX_HT_MAX_CHANNELS },
				    &st->cq);
	for (i = 0; !err && i < c.nchannels; i++)
		err = chan_make(st, &l, i);
	if (err)
		return init_fail(ib, st, err);

	ib->ht.ops = &dvx_ht_ib_ops;
	ib->ht.priv = st;
	ib->ht.peer = c.peer;
	ib->ht.mode = c.mode;
	ib->ht.nchannels = c.nchannels;
	ib->ht.max_ctrl = c.max_ctrl;
	ib->ht.depth = c.mode == DVX_HT_CB ? c.cb_depth : 0;
	if (c.mode == DVX_HT_CB) {
		ib->ht.max_chunk = c.cb_slot_bytes;
	} else {
		uint32_t lm = c.nic->caps.log_max_msg ? c.nic->caps.log_max_msg : 30;

		ib->ht.max_chunk = 1ull << (lm < 30 ? lm : 30);
	}
	ib->ht.live = DVX_LIVE;
	ib->live = DVX_LIVE;

	hello_make(st, HT_HELLO, 0);
	st->hs = HT_HS_SEND_HELLO;
	if (hello) {
		st->in_msg = *hello;
		st->have_hello = 1;
	}
	/* offer this end's half now; everything the peer answers is taken by later
	 * calls, so a transport that has offered stays live whatever happens next (and
	 * the peer never meets a half offered by an end that is gone) */
	err = hs_send(st);
	if (err < 0)
		return init_fail(ib, st, err);
	if (err)
		st->hs = HT_HS_RECV_HELLO;
	return 0;
}

int dvx_ht_ib_init(struct dvx_ht_ib *ib, const struct dvx_ht_ib_cfg *cfg, void *state,
		   uint64_t state_len, void *rings, uint64_t rings_len, void *data,
		   uint64_t data_len)
{
	return dvx_ht_ib_setup(ib, cfg, state, state_len, rings, rings_len, data, data_len, NULL,
			       NULL);
}

static int ib_valid(const struct dvx_ht_ib *ib)
{
	return ib && ib->live == DVX_LIVE && ib->st && ib->st->magic == HT_ST_MAGIC;
}

int dvx_ht_ib_fini(struct dvx_ht_ib *ib)
{
	struct dvx_ht_ib_state *st;
	int err;

	if (!ib_valid(ib))
		return -EINVAL;
	st = ib->st;
	err = teardown(st);
	st->magic = 0;
	memset(ib, 0, sizeof(*ib));
	return err;
}

/* ------------------------------------------------------------------------------
 * Queries, counters, the invariant checker
 */
int dvx_ht_ib_slot_state(const struct dvx_ht_ib *ib, uint32_t dir, uint32_t channel,
			 uint32_t slot)
{
	const struct dvx_ht_ib_state *st;

	if (!ib_valid(ib))
		return -EINVAL;
	st = ib->st;
	if (st->cfg.mode != DVX_HT_CB || channel >= st->cfg.nchannels ||
	    slot >= st->cfg.cb_depth || dir > DVX_HT_RECV)
		return -EINVAL;
	return dir == DVX_HT_SEND ? st->ch[channel].tx_slot[slot].state :
				    st->ch[channel].rx_slot[slot].state;
}

int dvx_ht_ib_chan_syndrome(const struct dvx_ht_ib *ib, uint32_t channel, uint8_t *vendor)
{
	const struct ht_chan *c;

	if (!ib_valid(ib) || channel >= ib->st->cfg.nchannels)
		return 0;
	c = &ib->st->ch[channel];
	if (vendor)
		*vendor = c->vendor_syndrome;
	return c->syndrome;
}

void dvx_ht_ib_get_stats(const struct dvx_ht_ib *ib, struct dvx_ht_ib_stats *s)
{
	if (!s)
		return;
	memset(s, 0, sizeof(*s));
	if (ib_valid(ib))
		*s = ib->st->cnt;
}

/* a violation: its description for the caller, and the answer */
static int violated(const char **why, const char *what)
{
	if (why)
		*why = what;
	return -EUCLEAN;
}

#define CHECK(cond, msg) do { if (!(cond)) return violated(why, msg); } while (0)

/* a request queue: in order of issue, of its kind and channel, all busy */
static int check_queue(const struct dvx_ht_req *q, uint32_t kind, uint32_t channel,
		       uint64_t first, uint64_t count, const char **why)
{
	uint64_t n = 0;

	for (; q; q = q->next, n++) {
		CHECK(n < count, "a request queue longer than its counters say");
		CHECK(q->state == DVX_HT_RS_BUSY && q->kind == kind,
		      "a queued request that is not busy, or of another kind");
		CHECK(q->channel == channel, "a queued receive of another channel");
		CHECK(q->seq == first + n, "a request queue out of order");
	}
	CHECK(n == count, "a request queue shorter than its counters say");
	return 0;
}

/*
 * A copy-based direction: the chunks [lo, mid) in state @a, [mid, hi) in state @b, each
 * in slot seq % depth and holding its own sequence, every other slot free.
 */
static int check_slots(const struct ht_slot *s, uint32_t depth, uint64_t lo, uint64_t mid,
		       uint64_t hi, uint8_t a, uint8_t b, const char **why)
{
	uint64_t used = 0, k;
	uint32_t i;

	CHECK(lo <= mid && mid <= hi, "staging counters out of order");
	CHECK(hi - lo <= depth, "more chunks in staging slots than there are slots");
	for (k = lo; k < hi; k++) {
		const struct ht_slot *x = &s[k % depth];

		CHECK(x->state == (k < mid ? a : b),
		      "a staging slot in a state its counters do not allow");
		CHECK(x->seq == k, "a staging slot holding another chunk than its turn");
		used |= 1ull << (k % depth);
	}
	for (i = 0; i < depth; i++)
		CHECK((used >> i) & 1 || s[i].state == DVX_HT_SLOT_FREE,
		      "a staging slot busy that no counter covers");
	return 0;
}

static int check_chan(const struct dvx_ht_ib_state *st, uint32_t i, const char **why)
{
	const struct dvx_ht_ib_cfg *c = &st->cfg;
	const struct ht_chan *ch = &st->ch[i];
	uint64_t credit = dvx_ld_acquire_u64(ch->credit, DVX_SCOPE_SYS);
	uint64_t matched = c->mode == DVX_HT_CB ? ch->rx_matched : ch->rx_done;
	int err;

	CHECK(ch->rx_posted <= c->rq_depth, "more receives posted than the ring holds");
	CHECK(ch->rx_posted == ch->qp.rq.pi - ch->qp.rq.ci,
	      "receives posted that the ring does not count");
	CHECK(ch->tx_posted <= ch->tx_issued, "more chunks written than issued");
	CHECK(ch->rx_done <= ch->rx_issued && matched <= ch->rx_issued,
	      "more receives done than issued");
	if (ch->err)
		return 0;	/* a failed channel stops where it failed */
	CHECK(matched == (ch->rx_issued < ch->rx_arrived ? ch->rx_issued : ch->rx_arrived),
	      "a receive waiting while a chunk waits for it");
	err = check_queue(ch->rx_head, DVX_HT_REQ_RECV, i, matched, ch->rx_issued - matched, why);
	if (err)
		return err;
	CHECK(credit <= ch->tx_posted, "a credit for a chunk never sent");
	if (c->mode == DVX_HT_ZC) {
		CHECK(ch->rx_posted + (ch->rx_arrived - matched) <= c->rq_depth,
		      "receives and unmatched notifications beyond the receive ring");
		return 0;
	}
	CHECK(credit >= ch->tx_freed, "a send slot freed before its credit came");
	err = check_slots(ch->tx_slot, c->cb_depth, ch->tx_freed, ch->tx_posted, ch->tx_issued,
			  DVX_HT_SLOT_IN_FLIGHT, DVX_HT_SLOT_FILLING, why);
	if (err)
		return err;
	CHECK(ch->rx_credited <= ch->rx_done && ch->rx_done <= ch->rx_matched,
	      "a credit for a chunk not drained, or a receive done before its copy");
	return check_slots(ch->rx_slot, c->cb_depth, ch->rx_credited, ch->rx_matched,
			   ch->rx_arrived, DVX_HT_SLOT_DRAINING, DVX_HT_SLOT_LANDED, why);
}

int dvx_ht_ib_check(const struct dvx_ht_ib *ib, const char **why)
{
	const struct dvx_ht_ib_state *st;
	uint32_t i;
	int err;

	if (why)
		*why = "";
	if (!ib_valid(ib))
		return -EINVAL;
	st = ib->st;
	CHECK(st->hs >= HT_HS_SEND_HELLO && st->hs <= HT_HS_FAILED, "a handshake state unknown");
	CHECK((st->hs == HT_HS_FAILED) == (st->err != 0), "a failed transport without its error");
	CHECK(st->ctrl_tx_issued - st->ctrl_tx_done <= st->cfg.ctrl_slots,
	      "more control messages in flight than slots");
	CHECK(st->ctrl_rx_done <= st->ctrl_rx_issued, "more control receives done than issued");
	CHECK(st->arr_head == st->arr_tail || !st->crx_head,
	      "a control receive waiting while a control message waits for it");
	CHECK(st->nfree + st->ch[0].rx_posted + (st->arr_tail - st->arr_head) == st->nbuf,
	      "control buffers lost: free, posted and waiting do not add up");
	if (!st->ch[0].err) {
		err = check_queue(st->crx_head, DVX_HT_REQ_CTRL_RECV, 0, st->ctrl_rx_done,
				  st->ctrl_rx_issued - st->ctrl_rx_done, why);
		if (err)
			return err;
	}
	for (i = 0; i < st->cfg.nchannels; i++) {
		err = check_chan(st, i, why);
		if (err)
			return err;
	}
	return 0;
}
