// SPDX-License-Identifier: MIT
/*
 * core/ht/ib_data.c - the IB host transport's data path: control messages, zero-copy
 * and copy-based chunks, the staging slots' state machine, completions, progress
 * (docs/ht.md).
 */
#include "ht_priv.h"

#include <dvx/hal.h>
#include <dvx/mlx5/barrier.h>

#define HT_POLL_BUDGET 64	/* completions taken per progress call */

static uint64_t data_addr(const struct dvx_ht_ib_state *st, const void *p)
{
	return st->mr.iova + (uint64_t)((const uint8_t *)p - (const uint8_t *)st->mr.addr);
}

static struct ht_chan *chan_of(struct dvx_ht_ib_state *st, const struct dvx_qp *qp)
{
	uint32_t i;

	for (i = 0; i < st->cfg.nchannels; i++)
		if (&st->ch[i].qp == qp)
			return &st->ch[i];
	return NULL;
}

static uint32_t chan_idx(const struct dvx_ht_ib_state *st, const struct ht_chan *c)
{
	return (uint32_t)(c - st->ch);
}

/* append @r to a request queue */
static void q_push(struct dvx_ht_req **head, struct dvx_ht_req **tail, struct dvx_ht_req *r)
{
	r->next = NULL;
	if (*tail)
		(*tail)->next = r;
	else
		*head = r;
	*tail = r;
}

static struct dvx_ht_req *q_pop(struct dvx_ht_req **head, struct dvx_ht_req **tail)
{
	struct dvx_ht_req *r = *head;

	if (r) {
		*head = r->next;
		if (!*head)
			*tail = NULL;
		r->next = NULL;
	}
	return r;
}

/* complete every request of a queue with @err */
static void q_fail(struct dvx_ht_req **head, struct dvx_ht_req **tail, int err, uint64_t *done)
{
	struct dvx_ht_req *r;

	while ((r = q_pop(head, tail))) {
		dvx_ht_req_done(r, err, 0);
		(*done)++;
	}
}

/* ------------------------------------------------------------------------------
 * Receives: keep the ring posted
 */

/*
 * Post receives until the ring is full, within two bounds: channel 0's receives each
 * need a free control buffer (a SEND may land in any of them), and in zero-copy mode
 * a notification that no receive has taken yet keeps its place in the ring, so the
 * peer can run at most rq_depth chunks ahead of the receives issued here.
 */
void dvx_ht_rx_fill(struct dvx_ht_ib_state *st, struct ht_chan *c)
{
	const struct dvx_ht_ib_cfg *cfg = &st->cfg;
	uint32_t idx = chan_idx(st, c), n = 0;
	uint64_t pend = cfg->mode == DVX_HT_ZC ? c->rx_arrived - c->rx_done : 0;

	if (c->err || c->qp.state != DVX_MLX5_QP_STATE_RTS)
		return;
	while (c->rx_posted + pend < cfg->rq_depth) {
		uint64_t addr = data_addr(st, st->data), wr = 0;
		uint32_t len = 0;
		int err;

		if (idx == 0) {
			uint32_t b;

			if (!st->nfree)
				break;
			b = st->free[st->nfree - 1];
			addr = data_addr(st, st->ctrl_rx + (uint64_t)b * st->ctrl_stride);
			len = cfg->max_ctrl;
			wr = b;
		}
		err = dvx_qp_post_recv(&c->qp, wr, addr, st->mr.lkey, len, DVX_POST_MORE);
		if (err)
			break;	/* -ENOSPC: the ring is full */
		if (idx == 0)
			st->nfree--;
		c->rx_posted++;
		n++;
	}
	if (n) {
		dvx_mlx5_rq_ring(&c->qp.rq);
		st->cnt.recv_posted += n;
	}
}

/* ------------------------------------------------------------------------------
 * Failure
 */

/*
 * A channel failed (its first error completion, or a protocol error found here):
 * remember why, make sure the QP is in error so every WQE still posted completes
 * (flushed: each send request gets its completion), and fail what waits for chunks or
 * control messages that can no longer come.
 */
void dvx_ht_chan_fail(struct dvx_ht_ib_state *st, struct ht_chan *c, int err)
{
	uint32_t k;

	if (c->err)
		return;
	c->err = err;
	if (c->qp.state != DVX_MLX5_QP_STATE_ERR)
		dvx_qp_to_err(&c->qp);	/* best effort: a QP already failed by the
					 * hardware flushes anyway */
	q_fail(&c->rx_head, &c->rx_tail, err, &c->rx_done);
	if (c == &st->ch[0])
		q_fail(&st->crx_head, &st->crx_tail, err, &st->ctrl_rx_done);
	if (st->cfg.mode != DVX_HT_CB)
		return;
	/* chunks still being prepared never go out */
	for (k = 0; k < st->cfg.cb_depth; k++) {
		struct ht_slot *s = &c->tx_slot[k];

		if (s->state == DVX_HT_SLOT_FILLING && s->req) {
			dvx_ht_req_done(s->req, err, 0);
			s->req = NULL;
		}
	}
}

/* an error completion: count it, keep its syndromes, fail its channel */
static void chan_error(struct dvx_ht_ib_state *st, struct ht_chan *c, const struct dvx_wc *wc)
{
	st->cnt.errors++;
	if (!c->err) {
		c->syndrome = wc->syndrome;
		c->vendor_syndrome = wc->vendor_syndrome;
	}
	dvx_ht_chan_fail(st, c, wc->status);
}

/* ------------------------------------------------------------------------------
 * Copy-based staging
 */
static void slot_op(const struct ht_chan *c, uint32_t ch, uint32_t k, uint64_t slot_bytes,
		    int tx, struct dvx_ht_cb_op *op)
{
	const struct ht_slot *s = tx ? &c->tx_slot[k] : &c->rx_slot[k];

	op->user = s->req ? s->req->buf : NULL;
	op->staging = (tx ? c->tx_staging : c->rx_staging) + (uint64_t)k * slot_bytes;
	op->len = s->len;
	op->channel = ch;
	op->slot = k;
	op->seq = s->seq;
}

/* start a slot's copy step: host memcpy unless a hook is given */
static void copy_start(struct dvx_ht_ib_state *st, struct ht_chan *c, uint32_t k, int tx)
{
	const struct dvx_ht_cb_hooks *h = &st->cfg.hooks;
	int (*start)(void *, const struct dvx_ht_cb_op *) = tx ? h->prepare : h->process;
	struct ht_slot *s = tx ? &c->tx_slot[k] : &c->rx_slot[k];
	struct dvx_ht_cb_op op;
	int r;

	slot_op(c, chan_idx(st, c), k, st->cfg.cb_slot_bytes, tx, &op);
	if (!start) {
		if (op.len)
			memcpy(tx ? op.staging : op.user, tx ? op.user : op.staging, op.len);
		s->copied = 1;
		return;
	}
	r = start(h->arg, &op);
	if (r == 1) {
		s->copying = 1;
		return;
	}
	s->copied = 1;
	s->err = r < 0 ? r : (r ? -EPROTO : 0);
}

/* has a slot's copy finished? (asks the hook once) */
static int copy_done(struct dvx_ht_ib_state *st, struct ht_chan *c, uint32_t k, int tx)
{
	const struct dvx_ht_cb_hooks *h = &st->cfg.hooks;
	int (*poll)(void *, const struct dvx_ht_cb_op *) = tx ? h->prepared : h->processed;
	struct ht_slot *s = tx ? &c->tx_slot[k] : &c->rx_slot[k];
	struct dvx_ht_cb_op op;
	int r;

	if (s->copied)
		return 1;
	if (!s->copying)
		return 0;
	slot_op(c, chan_idx(st, c), k, st->cfg.cb_slot_bytes, tx, &op);
	r = poll ? poll(h->arg, &op) : 1;
	if (!r)
		return 0;
	s->copying = 0;
	s->copied = 1;
	s->err = r < 0 ? r : (r == 1 ? 0 : -EPROTO);
	return 1;
}

/*
 * The send side of a copy-based channel, in order: each FILLING slot whose prepare step
 * is done is written into the peer's slot of the same index (a failed prepare sends a
 * zero-length notice instead, so the peer's count stays in step) and goes IN_FLIGHT;
 * the oldest IN_FLIGHT slot is FREE again once its write completed and the peer's
 * credit for it came.
 */
static void cb_pump_tx(struct dvx_ht_ib_state *st, struct ht_chan *c)
{
	const struct dvx_ht_ib_cfg *cfg = &st->cfg;
	uint64_t sb = cfg->cb_slot_bytes, credit;

	while (c->tx_posted < c->tx_issued && !c->err) {
		uint32_t k = (uint32_t)(c->tx_posted % cfg->cb_depth);
		struct ht_slot *s = &c->tx_slot[k];
		uint32_t imm = (uint32_t)s->seq & HT_IMM_SEQ_MASK;
		int err;

		if (!copy_done(st, c, k, 1))
			break;
		if (s->err)
			imm |= HT_IMM_FAILED;
		err = dvx_qp_post_write_imm(&c->qp, HT_WR_OF(s->req, HT_WR_DATA),
					    &(struct dvx_mlx5_sge){
						    data_addr(st, c->tx_staging + k * sb),
						    s->err ? 0 : (uint32_t)s->len, st->mr.lkey },
					    &(struct dvx_mlx5_raddr){ c->peer_staging + k * sb,
								      st->peer_rkey },
					    imm, DVX_POST_SIGNALED);
		if (err == -ENOSPC)
			break;
		if (err) {
			dvx_ht_chan_fail(st, c, err);
			break;
		}
		s->state = DVX_HT_SLOT_IN_FLIGHT;
		c->tx_posted++;
		c->tx_busy++;
	}
	credit = dvx_ld_acquire_u64(c->credit, DVX_SCOPE_SYS);
	while (c->tx_freed < c->tx_posted) {
		struct ht_slot *s = &c->tx_slot[c->tx_freed % cfg->cb_depth];

		if (!s->wdone || credit < s->seq + 1)
			break;
		memset(s, 0, sizeof(*s));	/* FREE */
		c->tx_freed++;
	}
}

/*
 * The receive side: a LANDED slot is taken by the oldest waiting receive (DRAINING:
 * the process step copies it out); in order, each slot whose copy is done completes
 * its receive, and is handed back to the peer by a fetch-add of one into the peer's
 * credit word (FREE).
 */
static void cb_pump_rx(struct dvx_ht_ib_state *st, struct ht_chan *c)
{
	const struct dvx_ht_ib_cfg *cfg = &st->cfg;
	uint64_t sink = data_addr(st, st->sink);

	while (c->rx_head && c->rx_matched < c->rx_arrived) {
		uint32_t k = (uint32_t)(c->rx_matched % cfg->cb_depth);
		struct ht_slot *s = &c->rx_slot[k];

		s->req = q_pop(&c->rx_head, &c->rx_tail);
		s->state = DVX_HT_SLOT_DRAINING;
		c->rx_matched++;
		if (s->err || s->len > s->req->len) {
			s->copied = 1;	/* nothing to copy: the receive fails */
			if (!s->err)
				s->err = -EMSGSIZE;
			continue;
		}
		copy_start(st, c, k, 0);
	}
	while (c->rx_credited < c->rx_matched) {
		uint32_t k = (uint32_t)(c->rx_credited % cfg->cb_depth);
		struct ht_slot *s = &c->rx_slot[k];
		int err;

		if (!copy_done(st, c, k, 0))
			break;
		if (s->req) {
			dvx_ht_req_done(s->req, s->err, s->err ? 0 : s->len);
			s->req = NULL;
			c->rx_done++;
			if (!s->err) {
				st->cnt.chunks_recv++;
				st->cnt.bytes_recv += s->len;
			}
		}
		if (!c->err) {
			err = dvx_qp_post_fetch_add(&c->qp,
						    HT_WR_OF((uintptr_t)chan_idx(st, c) << 3,
							     HT_WR_CREDIT),
						    c->peer_credit, st->peer_rkey, 1, sink,
						    st->mr.lkey, DVX_POST_SIGNALED);
			if (err == -ENOSPC)
				break;
			if (err) {
				dvx_ht_chan_fail(st, c, err);
				break;
			}
		}
		memset(s, 0, sizeof(*s));	/* FREE */
		c->rx_credited++;
	}
}

/* zero-copy: hand waiting notifications to waiting receives, in order */
static void zc_match(struct dvx_ht_ib_state *st, struct ht_chan *c)
{
	int moved = 0;

	while (c->rx_head && c->rx_done < c->rx_arrived) {
		struct dvx_ht_req *r = q_pop(&c->rx_head, &c->rx_tail);
		uint64_t len = c->zc_len[c->rx_done % st->cfg.rq_depth];

		c->rx_done++;
		moved = 1;
		if (len > r->len) {
			dvx_ht_req_done(r, -EMSGSIZE, len);
			continue;
		}
		dvx_ht_req_done(r, 0, len);
		st->cnt.chunks_recv++;
		st->cnt.bytes_recv += len;
	}
	if (moved)
		dvx_ht_rx_fill(st, c);	/* their places in the ring are free again */
}

/* ------------------------------------------------------------------------------
 * Control messages
 */
static void ctrl_deliver(struct dvx_ht_ib_state *st, struct dvx_ht_req *r, uint32_t b,
			 uint32_t len)
{
	if (len > r->len) {
		dvx_ht_req_done(r, -EMSGSIZE, len);
	} else {
		if (len)
			memcpy(r->buf, st->ctrl_rx + (uint64_t)b * st->ctrl_stride, len);
		dvx_ht_req_done(r, 0, len);
		st->cnt.ctrl_recv++;
	}
	st->ctrl_rx_done++;
	st->free[st->nfree++] = b;
}

/* ------------------------------------------------------------------------------
 * Completions
 */
static void on_recv(struct dvx_ht_ib_state *st, struct ht_chan *c, const struct dvx_wc *wc)
{
	const struct dvx_ht_ib_cfg *cfg = &st->cfg;
	int ch0 = c == &st->ch[0];
	uint32_t seq;

	c->rx_posted--;
	if (wc->status) {
		if (ch0)
			st->free[st->nfree++] = (uint32_t)wc->wr_id;
		chan_error(st, c, wc);
		return;
	}
	if (wc->opcode == DVX_WC_RECV) {
		/* a control message: SENDs come on channel 0 only */
		if (!ch0) {
			dvx_ht_chan_fail(st, c, -EPROTO);
			return;
		}
		if (st->crx_head) {
			ctrl_deliver(st, q_pop(&st->crx_head, &st->crx_tail),
				     (uint32_t)wc->wr_id, wc->byte_len);
		} else {
			st->arr_buf[st->arr_tail % st->nbuf] = (uint32_t)wc->wr_id;
			st->arr_len[st->arr_tail % st->nbuf] = wc->byte_len;
			st->arr_tail++;
		}
		return;
	}
	if (ch0)
		st->free[st->nfree++] = (uint32_t)wc->wr_id;	/* a chunk: the buffer is unused */
	seq = wc->imm & HT_IMM_SEQ_MASK;
	if (seq != ((uint32_t)c->rx_arrived & HT_IMM_SEQ_MASK)) {
		dvx_ht_chan_fail(st, c, -EPROTO);	/* a chunk out of its channel's order */
		return;
	}
	if (cfg->mode == DVX_HT_ZC) {
		c->zc_len[c->rx_arrived % cfg->rq_depth] = wc->byte_len;
		c->rx_arrived++;
		zc_match(st, c);
		return;
	}
	{
		struct ht_slot *s = &c->rx_slot[c->rx_arrived % cfg->cb_depth];

		if (s->state != DVX_HT_SLOT_FREE || wc->byte_len > cfg->cb_slot_bytes) {
			dvx_ht_chan_fail(st, c, -EPROTO);	/* the peer overran its credits */
			return;
		}
		memset(s, 0, sizeof(*s));
		s->state = DVX_HT_SLOT_LANDED;
		s->seq = c->rx_arrived;
		s->len = wc->byte_len;
		s->err = (wc->imm & HT_IMM_FAILED) ? -EREMOTEIO : 0;
		c->rx_arrived++;
	}
	cb_pump_rx(st, c);
}

static void on_send(struct dvx_ht_ib_state *st, struct ht_chan *c, const struct dvx_wc *wc)
{
	struct dvx_ht_req *r = HT_WR_REQ(wc->wr_id);
	int err = wc->status;

	switch (HT_WR_KIND(wc->wr_id)) {
	case HT_WR_DATA:
		c->tx_busy--;
		if (st->cfg.mode == DVX_HT_CB) {
			struct ht_slot *s = &c->tx_slot[r->priv[0]];

			s->wdone = 1;
			s->req = NULL;
			if (!err)
				err = s->err;
		}
		dvx_ht_req_done(r, err, err ? 0 : r->len);
		if (!err) {
			st->cnt.chunks_sent++;
			st->cnt.bytes_sent += r->len;
		}
		break;
	case HT_WR_CTRL:
		st->ctrl_tx_done++;
		dvx_ht_req_done(r, err, err ? 0 : r->len);
		if (!err)
			st->cnt.ctrl_sent++;
		break;
	case HT_WR_CREDIT:
		if (!err)
			st->cnt.credits_sent++;
		break;
	default:
		err = err ? err : -EPROTO;
		break;
	}
	if (wc->status)
		chan_error(st, c, wc);
	else if (err == -EPROTO)
		dvx_ht_chan_fail(st, c, -EPROTO);
}

static void poll_cq(struct dvx_ht_ib_state *st)
{
	uint32_t n;

	for (n = 0; n < HT_POLL_BUDGET; n++) {
		struct dvx_wc wc;
		struct ht_chan *c;
		int r = dvx_cq_poll(&st->cq, &wc);

		if (!r)
			return;
		c = wc.qp ? chan_of(st, wc.qp) : NULL;
		if (!c) {
			st->cnt.errors++;	/* names no QP of ours: nothing to account */
			continue;
		}
		if (wc.opcode == DVX_WC_RECV || wc.opcode == DVX_WC_RECV_RDMA_WITH_IMM)
			on_recv(st, c, &wc);
		else
			on_send(st, c, &wc);
	}
}

/* ------------------------------------------------------------------------------
 * Recovery (ib_rec.c): drain a failed channel, then clear it
 */

/*
 * Take completions and finish the copies a failed channel still has running; 1 once
 * nothing of @c is outstanding: every send WQE completed (flushed or not), every
 * receive WQE flushed, no hook copying into or out of a slot, every drained slot
 * handed back. The requests issued on @c are all done by then.
 */
int dvx_ht_chan_drained(struct dvx_ht_ib_state *st, struct ht_chan *c)
{
	int busy = 0;
	uint32_t k;

	poll_cq(st);
	if (st->cfg.mode == DVX_HT_CB) {
		for (k = 0; k < st->cfg.cb_depth; k++)
			if (c->tx_slot[k].copying && !copy_done(st, c, k, 1))
				busy = 1;
		cb_pump_rx(st, c);	/* a failed channel posts no credit */
		if (c->rx_credited != c->rx_matched)
			busy = 1;
	}
	return !busy && !c->rx_posted && c->qp.sqc.ci == c->qp.sqc.resv;
}

/*
 * A drained channel starts anew (both ends do it while neither QP is connected): every
 * counter and slot back to zero, the credit word zeroed, and what landed but no
 * receive had taken dropped (channel 0: the control messages waiting too). Returns
 * how many were dropped.
 */
uint64_t dvx_ht_chan_clear(struct dvx_ht_ib_state *st, struct ht_chan *c)
{
	/* zero-copy: the receives the failure completed count in rx_done too, and there
	 * were such only while no notification waited */
	uint64_t taken = st->cfg.mode == DVX_HT_CB ? c->rx_matched : c->rx_done;
	uint64_t dropped = c->rx_arrived > taken ? c->rx_arrived - taken : 0;

	c->tx_issued = c->tx_posted = c->tx_freed = 0;
	c->tx_busy = 0;
	c->rx_issued = c->rx_arrived = c->rx_matched = c->rx_done = c->rx_credited = 0;
	c->rx_head = c->rx_tail = NULL;
	c->zc_pending = 0;
	if (st->cfg.mode == DVX_HT_CB) {
		memset(c->tx_slot, 0, st->cfg.cb_depth * sizeof(*c->tx_slot));
		memset(c->rx_slot, 0, st->cfg.cb_depth * sizeof(*c->rx_slot));
	}
	dvx_st_release_u64(c->credit, 0, DVX_SCOPE_SYS);
	if (c == &st->ch[0]) {
		while (st->arr_head != st->arr_tail) {
			st->free[st->nfree++] = st->arr_buf[st->arr_head++ % st->nbuf];
			dropped++;
		}
	}
	return dropped;
}

/* ------------------------------------------------------------------------------
 * The operations
 */

/* 0 when chunks and control messages may be issued on @c, else why not */
static int can_issue(const struct dvx_ht_ib_state *st, const struct ht_chan *c)
{
	if (st->hs != HT_HS_CONNECTED)
		return st->hs == HT_HS_FAILED ? st->err : -ENOTCONN;
	return c->err;
}

static int ib_send_ctrl(struct dvx_ht *t, const void *buf, size_t len, struct dvx_ht_req *req)
{
	struct dvx_ht_ib_state *st = dvx_ht_st(t);
	struct ht_chan *c = &st->ch[0];
	uint8_t *slot;
	int err = can_issue(st, c);

	if (err)
		return err;
	if (st->ctrl_tx_issued - st->ctrl_tx_done >= st->cfg.ctrl_slots)
		return -EAGAIN;
	/* the payload is copied: the caller's buffer is free on return */
	slot = st->ctrl_tx + (st->ctrl_tx_issued % st->cfg.ctrl_slots) * st->ctrl_stride;
	if (len)
		memcpy(slot, buf, len);
	err = dvx_qp_post_send(&c->qp, HT_WR_OF(req, HT_WR_CTRL), data_addr(st, slot),
			       st->mr.lkey, (uint32_t)len, DVX_POST_SIGNALED);
	if (err)
		return err == -ENOSPC ? -EAGAIN : err;
	req->seq = st->ctrl_tx_issued++;
	req->len = len;
	return 0;
}

static int ib_recv_ctrl(struct dvx_ht *t, void *buf, size_t len, struct dvx_ht_req *req)
{
	struct dvx_ht_ib_state *st = dvx_ht_st(t);
	int err = can_issue(st, &st->ch[0]);

	(void)buf;
	(void)len;
	if (err)
		return err;
	req->seq = st->ctrl_rx_issued++;
	if (st->arr_head != st->arr_tail) {
		uint64_t i = st->arr_head++ % st->nbuf;

		ctrl_deliver(st, req, st->arr_buf[i], st->arr_len[i]);
		dvx_ht_rx_fill(st, &st->ch[0]);
		return 0;
	}
	q_push(&st->crx_head, &st->crx_tail, req);
	return 0;
}

static int zc_send(struct dvx_ht_ib_state *st, struct ht_chan *c, const struct dvx_ht_chunk *k,
		   struct dvx_ht_req *req)
{
	const struct dvx_mr *mr = k->mr;
	const uint8_t *p = k->buf;
	int err;

	if (!mr || !k->remote || k->offset > k->remote->len ||
	    k->len > k->remote->len - k->offset || p < (const uint8_t *)mr->addr ||
	    (uint64_t)(p - (const uint8_t *)mr->addr) > mr->len ||
	    k->len > mr->len - (uint64_t)(p - (const uint8_t *)mr->addr))
		return -EINVAL;
	err = dvx_qp_post_write_imm(&c->qp, HT_WR_OF(req, HT_WR_DATA),
				    &(struct dvx_mlx5_sge){
					    mr->iova + (uint64_t)(p - (const uint8_t *)mr->addr),
					    (uint32_t)k->len, mr->lkey },
				    &(struct dvx_mlx5_raddr){ k->remote->addr + k->offset,
							      k->remote->key },
				    (uint32_t)c->tx_posted & HT_IMM_SEQ_MASK, DVX_POST_SIGNALED);
	if (err)
		return err == -ENOSPC ? -EAGAIN : err;
	req->seq = c->tx_posted++;
	c->tx_issued++;
	c->tx_busy++;
	return 0;
}

static int cb_send(struct dvx_ht_ib_state *st, struct ht_chan *c, const struct dvx_ht_chunk *k,
		   struct dvx_ht_req *req)
{
	uint32_t slot = (uint32_t)(c->tx_issued % st->cfg.cb_depth);
	struct ht_slot *s = &c->tx_slot[slot];

	if (k->remote)
		return -EINVAL;	/* copy-based chunks go to the peer's staging */
	if (s->state != DVX_HT_SLOT_FREE) {
		st->cnt.credit_waits++;
		return -EAGAIN;
	}
	memset(s, 0, sizeof(*s));
	s->state = DVX_HT_SLOT_FILLING;
	s->seq = c->tx_issued;
	s->len = k->len;
	s->req = req;
	req->seq = c->tx_issued++;
	req->priv[0] = slot;
	copy_start(st, c, slot, 1);
	cb_pump_tx(st, c);
	return 0;
}

static int ib_send_chunk(struct dvx_ht *t, const struct dvx_ht_chunk *k, struct dvx_ht_req *req)
{
	struct dvx_ht_ib_state *st = dvx_ht_st(t);
	struct ht_chan *c = &st->ch[k->channel];
	int err = can_issue(st, c);

	if (err)
		return err;
	return st->cfg.mode == DVX_HT_ZC ? zc_send(st, c, k, req) : cb_send(st, c, k, req);
}

static int ib_recv_chunk(struct dvx_ht *t, const struct dvx_ht_chunk *k, struct dvx_ht_req *req)
{
	struct dvx_ht_ib_state *st = dvx_ht_st(t);
	struct ht_chan *c = &st->ch[k->channel];
	int err = can_issue(st, c);

	if (err)
		return err;
	if (st->cfg.mode == DVX_HT_CB && k->len && !k->buf)
		return -EINVAL;
	req->seq = c->rx_issued++;
	q_push(&c->rx_head, &c->rx_tail, req);
	if (st->cfg.mode == DVX_HT_ZC)
		zc_match(st, c);
	else
		cb_pump_rx(st, c);
	return 0;
}

static int ib_progress(struct dvx_ht *t)
{
	struct dvx_ht_ib_state *st = dvx_ht_st(t);
	uint32_t i;
	int err;

	/* the owning cache answers peers and moves their handshakes now and then, so a
	 * rank waiting here still answers everyone */
	if (st->idle.fn && ++st->accept_tick >= st->idle.every) {
		st->accept_tick = 0;
		st->idle.fn(st->idle.arg);
	}
	if (st->hs != HT_HS_CONNECTED) {
		err = st->hs_step(st);
		if (err || st->hs != HT_HS_CONNECTED) {
			dvx_hal_nic_progress(&st->cfg.nic->hal);
			return err;
		}
	}
	poll_cq(st);
	for (i = 0; i < st->cfg.nchannels; i++) {
		struct ht_chan *c = &st->ch[i];

		if (st->cfg.mode == DVX_HT_CB) {
			cb_pump_tx(st, c);
			cb_pump_rx(st, c);
		}
		dvx_ht_rx_fill(st, c);
	}
	dvx_hal_nic_progress(&st->cfg.nic->hal);
	return 0;
}

static int ib_connected(const struct dvx_ht *t)
{
	return dvx_ht_st(t)->hs == HT_HS_CONNECTED;
}

static int ib_ready(const struct dvx_ht *t, uint32_t channel, uint32_t dir)
{
	const struct dvx_ht_ib_state *st = dvx_ht_st(t);
	const struct ht_chan *c = &st->ch[channel];

	if (can_issue(st, c))
		return 0;
	if (dir == DVX_HT_RECV)
		return 1;
	if (st->cfg.mode == DVX_HT_CB)
		return c->tx_slot[c->tx_issued % st->cfg.cb_depth].state == DVX_HT_SLOT_FREE;
	return dvx_mlx5_sq_room(&c->qp.sq, &c->qp.sqc) > 0;
}

static int ib_status(const struct dvx_ht *t, int32_t channel)
{
	const struct dvx_ht_ib_state *st = dvx_ht_st(t);

	return channel < 0 ? st->err : st->ch[channel].err;
}

static int ib_export(struct dvx_ht *t, void *buf, uint64_t len, const struct dvx_mr *mr,
		     struct dvx_ht_desc *d)
{
	const uint8_t *p = buf;

	if (t->mode != DVX_HT_ZC)
		return -EOPNOTSUPP;	/* copy-based chunks land in the staging slots */
	if (!mr || mr->live != DVX_LIVE || mr->nic != dvx_ht_st(t)->cfg.nic ||
	    !(mr->access & DVX_ACCESS_REMOTE_WRITE) || p < (const uint8_t *)mr->addr ||
	    (uint64_t)(p - (const uint8_t *)mr->addr) > mr->len ||
	    len > mr->len - (uint64_t)(p - (const uint8_t *)mr->addr))
		return -EINVAL;
	dvx_ht_desc_pack(d, mr->iova + (uint64_t)(p - (const uint8_t *)mr->addr), len, mr->rkey);
	return 0;
}

static int ib_import(struct dvx_ht *t, const struct dvx_ht_desc *d, struct dvx_ht_rbuf *r)
{
	if (t->mode != DVX_HT_ZC)
		return -EOPNOTSUPP;
	return dvx_ht_desc_unpack(d, r);
}

static uint64_t ib_now(const struct dvx_ht *t)
{
	return dvx_hal_now_ns(dvx_ht_st(t)->hal);
}

static int ib_recover(struct dvx_ht *t, uint32_t channel, uint64_t timeout_ns)
{
	return dvx_ht_st(t)->recover(t, channel, timeout_ns);
}

const struct dvx_ht_ops dvx_ht_ib_ops = {
	.send_ctrl = ib_send_ctrl,
	.recv_ctrl = ib_recv_ctrl,
	.send_chunk = ib_send_chunk,
	.recv_chunk = ib_recv_chunk,
	.progress = ib_progress,
	.connected = ib_connected,
	.ready = ib_ready,
	.status = ib_status,
	.export_buf = ib_export,
	.import_buf = ib_import,
	.now_ns = ib_now,
	.recover = ib_recover,
};
