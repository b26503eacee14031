// SPDX-License-Identifier: MIT
/*
 * core/msg/data.c - isend, irecv, iflush, test, progress, close: the clear-to-send
 * FIFO, the WRITEs with immediate, and the routing of every completion of a (shared)
 * CQ to its communicator and request by the wr_id's and the immediate's communicator
 * ids. docs/msg.md "The data path" and "Routing".
 */
#include "msg_priv.h"

#include <dvx/hal.h>


static int comm_ok(const struct dvx_msg_comm *c, uint8_t kind)
{
	return c && c->magic == MSG_COMM_MAGIC && c->kind == kind && c->st &&
	       c->st->magic == MSG_ST_MAGIC && c->state == MSG_CS_LIVE;
}

/* [@p, @p + @len) inside @mr, which is on the communicator's NIC */
static int buf_ok(const struct dvx_msg_comm *c, const struct dvx_mr *mr, const void *p,
		  size_t len)
{
	uintptr_t a = (uintptr_t)p, b = (uintptr_t)mr->addr;

	if (mr->live != DVX_LIVE || mr->nic != c->st->cfg.nics[c->nic])
		return 0;
	return !len || (a >= b && len <= mr->len && a - b <= mr->len - len);
}

/* ------------------------------------------------------------------------------
 * Failures and completions
 */
static void req_done(struct dvx_msg_req *h, int err)
{
	if (h->state != MSG_RS_BUSY)
		return;
	h->state = MSG_RS_DONE;
	if (err && !h->err)
		h->err = err;
}

void dvx_msg_comm_fail(struct dvx_msg_comm *c, int err)
{
	uint32_t i, n;

	if (!c->err)
		c->err = err;
	/* every request in flight ends with the error */
	if (c->kind == MSG_K_SEND) {
		n = c->max_reqs * DVX_MSG_MAX_RECVS;
		for (i = 0; i < n; i++)
			req_done(&dvx_msg_sreq(c, i)->h, c->err);
	} else if (c->kind == MSG_K_RECV) {
		for (i = 0; i < c->max_reqs; i++)
			req_done(&dvx_msg_rreq(c, i)->h, c->err);
	}
}

static int comm_on_set(const struct dvx_msg_comm *c, uint32_t set)
{
	return (c->kind == MSG_K_SEND || c->kind == MSG_K_RECV) && c->mapped && c->set == set;
}

/* QP @q of set @set failed: exactly the communicators that map a slot onto it fail;
 * nothing arrives on it any more, so what they expected there is written off */
static void qp_failed(struct dvx_msg_state *st, uint32_t set, uint32_t q, int err)
{
	struct msg_set *x = &st->sets[set];
	uint32_t i, j;

	if (!(x->failed_mask & (1u << q))) {
		x->failed_mask |= (uint8_t)(1u << q);
		x->qp_err[q] = err;
		st->cnt.qp_errors++;
	}
	for (i = 0; i < st->cfg.max_comms; i++) {
		struct dvx_msg_comm *c = &st->comms[i];

		if (!comm_on_set(c, set))
			continue;
		for (j = 0; j < c->nqps; j++)
			if (c->map[j] == q) {
				dvx_msg_comm_fail(c, x->qp_err[q]);
				c->rx_out[q] = 0;
				dvx_msg_closing_check(st, c);
				break;
			}
	}
}

/* a send-queue completion (good or flushed) of a comm's WQE: its count, its request */
static void on_send(struct dvx_msg_state *st, const struct dvx_wc *wc, int err)
{
	uint32_t kind = MSG_WR_KIND(wc->wr_id), idx = MSG_WR_IDX(wc->wr_id);
	struct dvx_msg_comm *c;
	struct msg_sreq *r;

	if (kind != MSG_WR_DATA && kind != MSG_WR_NOTE && kind != MSG_WR_CTS)
		return;
	c = dvx_msg_comm_any(st, MSG_WR_ID(wc->wr_id));
	if (!c || c->epoch != MSG_WR_EPOCH(wc->wr_id) || !c->wqe_out) {
		st->cnt.late++;	/* cannot happen: a comm keeps its slot while it has WQEs out */
		return;
	}
	c->wqe_out--;
	if (c->state == MSG_CS_CLOSING) {
		if (kind == MSG_WR_DATA)
			st->cnt.late++;	/* a send of a closed comm: counted and dropped */
		dvx_msg_closing_check(st, c);
		return;
	}
	if (kind != MSG_WR_DATA)
		return;		/* notices and clear-to-sends: only their ring room mattered */
	if (idx >= c->max_reqs * DVX_MSG_MAX_RECVS) {
		st->cnt.late++;
		return;
	}
	r = dvx_msg_sreq(c, idx);
	if (r->h.state != MSG_RS_BUSY || !r->left) {
		st->cnt.late++;
		return;
	}
	if (err)
		req_done(&r->h, err);
	else if (!--r->left)
		req_done(&r->h, 0);
}

/* a message landed on @qp for no communicator this end knows: it used up a receive
 * that another message was counted on, so one goes back */
static void spare_receive(struct dvx_msg_state *st, uint32_t set, struct dvx_qp *qp)
{
	struct msg_set *x = &st->sets[set];
	uint32_t q = qp ? (uint32_t)(qp - x->qp) : 0;

	st->cnt.late++;
	if (!qp || !qp->rq.nwqe)
		return;
	if (x->orphans[q]) {
		x->orphans[q]--;	/* one of the receives a comm that gave up left */
		return;
	}
	dvx_qp_post_recv(qp, MSG_WR(0, MSG_WR_SPARE, 0, 0, 0), 0, 0, 0, 0);
}

static void on_recv(struct dvx_msg_state *st, uint32_t set, const struct dvx_wc *wc)
{
	uint32_t idx = MSG_IMM_IDX(wc->imm), slot = idx >> 3, b = idx & 7u, i;
	uint32_t q = (uint32_t)(wc->qp - st->sets[set].qp);
	struct dvx_msg_comm *c = dvx_msg_comm_any(st, MSG_IMM_ID(wc->imm));
	struct msg_rreq *r;

	if (!c || c->kind != MSG_K_RECV || !c->rx_out[q]) {
		spare_receive(st, set, wc->qp);
		return;
	}
	c->rx_out[q]--;
	if (c->state == MSG_CS_CLOSING) {
		st->cnt.late++;	/* announced before the close: counted and dropped */
		dvx_msg_closing_check(st, c);
		return;
	}
	if (slot >= c->max_reqs) {
		st->cnt.late++;
		return;
	}
	r = dvx_msg_rreq(c, slot);
	if (r->h.state != MSG_RS_BUSY || b >= r->n || !r->left[b]) {
		st->cnt.late++;
		return;
	}
	r->bytes[b] += wc->byte_len;
	if (MSG_IMM_KIND(wc->imm) == MSG_IMM_TOOBIG)
		r->berr[b] = -EMSGSIZE;
	else if (MSG_IMM_KIND(wc->imm) == MSG_IMM_REVOKED)
		r->berr[b] = -ECONNRESET;
	else if (MSG_IMM_KIND(wc->imm) != MSG_IMM_DATA)
		r->berr[b] = -EPROTO;
	r->left[b]--;
	for (i = 0; i < r->n; i++)
		if (r->left[i])
			return;
	for (i = 0; i < r->n; i++)
		if (r->berr[i]) {
			req_done(&r->h, r->berr[i]);
			return;
		}
	req_done(&r->h, 0);
}

static int retired(const struct msg_set *x, uint32_t qpn)
{
	uint32_t i;

	for (i = 0; i < x->nretired; i++)
		if (x->retired_qpn[i] == qpn)
			return 1;
	return 0;
}

int dvx_msg_poll_set(struct dvx_msg_state *st, uint32_t set, uint32_t budget)
{
	struct msg_set *x = &st->sets[set];
	uint32_t n = 0;

	while (n < budget && x->state == MSG_SET_LIVE) {
		struct dvx_wc wc;
		int r = dvx_cq_poll(&x->cq, &wc);
		int recv;

		if (!r)
			break;
		n++;
		recv = wc.opcode == DVX_WC_RECV || wc.opcode == DVX_WC_RECV_RDMA_WITH_IMM;
		if (r < 0 && !wc.qp) {
			uint32_t q;

			if (retired(x, wc.qpn)) {
				st->cnt.late++;	/* a QP destroyed after its last user left */
				continue;
			}
			/* a CQE this end cannot read or that names no QP of the set: the set's
			 * CQ is not to be trusted any more */
			for (q = 0; q < x->nqps; q++)
				if (x->live_mask & (1u << q))
					qp_failed(st, set, q, r);
			continue;
		}
		if (r < 0) {
			qp_failed(st, set, (uint32_t)(wc.qp - x->qp), r);
			if (!recv)
				on_send(st, &wc, r);	/* flushed: the NIC is done with it */
			continue;
		}
		if (wc.opcode == DVX_WC_RECV_RDMA_WITH_IMM)
			on_recv(st, set, &wc);
		else if (wc.opcode == DVX_WC_RECV)
			spare_receive(st, set, wc.qp);	/* a SEND: nobody of ours sends those */
		else
			on_send(st, &wc, 0);
	}
	return (int)n;
}

int dvx_msg_poll_flush(struct dvx_msg_state *st, uint32_t nic, uint32_t budget)
{
	struct msg_nic *x = &st->nic[nic];
	uint32_t n = 0;

	while (n < budget && x->fcq.live == DVX_LIVE) {
		struct dvx_wc wc;
		int r = dvx_cq_poll(&x->fcq, &wc);
		uint32_t idx;

		if (!r)
			break;
		n++;
		idx = MSG_WR_IDX(wc.wr_id);
		if (wc.qp != &x->fqp || MSG_WR_KIND(wc.wr_id) != MSG_WR_FLUSH ||
		    idx >= st->cfg.max_reqs) {
			st->cnt.late++;
			continue;
		}
		if (!x->freqs[idx].h.comm) {
			/* its communicator closed while the READ was in flight */
			x->freqs[idx].h.state = MSG_RS_FREE;
			st->cnt.late++;
			continue;
		}
		req_done(&x->freqs[idx].h, r < 0 ? r : 0);
	}
	return (int)n;
}

static void nic_progress(struct dvx_msg_state *st, uint32_t nic)
{
	dvx_hal_nic_progress(&st->cfg.nics[nic]->hal);
}

/* ------------------------------------------------------------------------------
 * Sending
 */

/* the FIFO slot's entries, once every one of them carries the expected sequence and
 * names this connection (an entry another sender's peer left there is not ours) */
static int cts_take(const struct dvx_msg_comm *c, uint32_t fslot, uint16_t seq,
		    struct msg_cts *e, uint32_t *nreqs)
{
	const struct msg_cts *f = (const struct msg_cts *)(const void *)c->fifo +
				  (uint64_t)fslot * c->fifo_recvs;
	uint32_t n, i;

	/* the sequence is written after the rest of its entry (one RDMA WRITE, in order):
	 * read it first, acquire, then the fields it covers */
	if (dvx_le16(__atomic_load_n(&f[0].seq, __ATOMIC_ACQUIRE)) != seq)
		return 0;
	n = f[0].nreqs;
	if (!n || n > c->max_recvs || n > c->fifo_recvs)
		return 0;
	for (i = 0; i < n; i++) {
		if (dvx_le16(__atomic_load_n(&f[i].seq, __ATOMIC_ACQUIRE)) != seq)
			return 0;
		e[i].addr = dvx_le64(f[i].addr);
		e[i].size = dvx_le32(f[i].size);
		e[i].rkey = dvx_le32(f[i].rkey);
		e[i].tag = dvx_le32(f[i].tag);
		e[i].rcomm = dvx_le16(f[i].rcomm);
		e[i].scomm = dvx_le16(f[i].scomm);
		e[i].idx = dvx_le16(f[i].idx);
		e[i].nreqs = f[i].nreqs;
		e[i].stripe = f[i].stripe;
		if (e[i].scomm != c->id || e[i].rcomm != c->peer_comm || e[i].nreqs != n)
			return 0;
	}
	*nreqs = n;
	return 1;
}

/* the receiver's close marker after this send comm's FIFO, if it is there */
static int marker_seen(const struct dvx_msg_state *st, const struct dvx_msg_comm *c)
{
	const struct msg_close_mark *k =
		(const struct msg_close_mark *)(const void *)((const struct msg_cts *)(const void *)
								      c->fifo +
							      (uint64_t)st->cfg.max_reqs *
								      st->cfg.max_recvs);

	if (dvx_le32(__atomic_load_n(&k->magic, __ATOMIC_ACQUIRE)) != MSG_CLOSE_MAGIC)
		return 0;
	return dvx_le16(k->rcomm) == c->peer_comm && dvx_le16(k->scomm) == c->id;
}

/* room for need[q] WQEBBs on each QP (after one poll of the set if short) */
static int sq_room(struct dvx_msg_state *st, struct msg_set *x, const uint32_t *need, int *polled,
		   uint32_t set)
{
	uint32_t q;

	for (q = 0; q < x->nqps; q++) {
		if (!need[q])
			continue;
		if (dvx_mlx5_sq_room(&x->qp[q].sq, &x->qp[q].sqc) >= need[q])
			continue;
		if (*polled)
			return 0;
		*polled = 1;
		dvx_msg_poll_set(st, set, MSG_POLL_BUDGET);
		return sq_room(st, x, need, polled, set);
	}
	return 1;
}

int dvx_msg_isend(struct dvx_msg_comm *c, const void *buf, size_t size, uint32_t tag,
		  const struct dvx_mr *mr, struct dvx_msg_req **req)
{
	struct msg_cts e[DVX_MSG_MAX_RECVS];
	uint32_t need[DVX_MSG_MAX_QPS] = { 0 };
	struct dvx_msg_state *st;
	struct msg_set *x;
	struct msg_sreq *r = NULL;
	uint32_t nreqs = 0, fslot, b, k, f, t, kind, ridx;
	uint64_t per;
	int polled = 0, err;

	if (!req)
		return -EINVAL;
	*req = NULL;
	if (!comm_ok(c, MSG_K_SEND) || !mr || (size && !buf) || !buf_ok(c, mr, buf, size))
		return -EINVAL;
	if (c->err)
		return c->err;
	st = c->st;
	x = &st->sets[c->set];
	fslot = (uint32_t)(c->head % c->max_reqs);
	if (!cts_take(c, fslot, (uint16_t)(c->seq_base + c->head + 1), e, &nreqs))
		/* the receiver has not posted this slot yet, or closed its end */
		return marker_seen(st, c) ? -ECONNRESET : 0;
	for (b = 0; b < nreqs; b++)
		if (!(c->head_mask & (1u << b)) && e[b].tag == tag)
			break;
	if (b == nreqs)
		return 0;	/* no buffer with this tag in the slot (yet) */
	ridx = (fslot << 3) | b;
	k = e[b].stripe & 15u;
	f = e[b].stripe >> 4;
	if (!k || k > c->nqps || f >= c->nqps)
		return -EPROTO;
	r = dvx_msg_sreq(c, ridx);
	if (r->h.state != MSG_RS_FREE)
		return 0;	/* the previous lap's request was not tested yet */
	per = k > 1 ? ((size + k - 1) / k + 63) & ~63ull : size;
	/* larger than the receive, or than the path carries per WQE: both ends learn */
	kind = size > e[b].size || per > c->max_chunk ? MSG_IMM_TOOBIG : MSG_IMM_DATA;
	for (t = 0; t < k; t++)
		need[c->map[(f + t) % c->nqps]]++;
	if (!sq_room(st, x, need, &polled, c->set))
		return 0;
	if (c->err)	/* the poll found a failure */
		return c->err;
	for (t = 0; t < k; t++) {
		uint32_t slot = (f + t) % c->nqps, len = 0;
		uint64_t off = (uint64_t)t * per;
		struct dvx_qp *qp = &x->qp[c->map[slot]];

		if (kind == MSG_IMM_DATA && off < size)
			len = (uint32_t)(size - off < per ? size - off : per);
		err = dvx_qp_post_write_imm(qp,
					    MSG_WR(c->id,
						   kind == MSG_IMM_DATA ? MSG_WR_DATA : MSG_WR_NOTE,
						   slot, c->epoch, ridx),
					    &(struct dvx_mlx5_sge){ (uint64_t)(uintptr_t)buf + off,
								    len, mr->lkey },
					    &(struct dvx_mlx5_raddr){ e[b].addr + off, e[b].rkey },
					    MSG_IMM(kind, e[b].idx, e[b].rcomm),
					    DVX_POST_SIGNALED | DVX_POST_MORE);
		if (err)
			return err;	/* cannot happen: room was checked */
		c->wqe_out++;
	}
	for (t = 0; t < x->nqps; t++)
		if (need[t])
			dvx_qp_ring(&x->qp[t]);
	c->head_mask |= (uint8_t)(1u << b);
	if (c->head_mask == (uint8_t)((1u << nreqs) - 1)) {
		c->head++;
		c->head_mask = 0;
	}
	if (kind != MSG_IMM_DATA)
		return -EMSGSIZE;
	memset(r, 0, sizeof(*r));
	r->h.magic = MSG_REQ_MAGIC;
	r->h.kind = MSG_RK_SEND;
	r->h.state = MSG_RS_BUSY;
	r->h.idx = (uint16_t)ridx;
	r->h.comm = c;
	r->size = size;
	r->left = (uint8_t)k;
	c->busy++;
	*req = &r->h;
	return 0;
}

/* ------------------------------------------------------------------------------
 * Receiving
 */
int dvx_msg_irecv(struct dvx_msg_comm *c, int n, void *const *bufs, const size_t *sizes,
		  const uint32_t *tags, struct dvx_mr *const *mrs, struct dvx_msg_req **req)
{
	uint32_t rneed[DVX_MSG_MAX_QPS] = { 0 };
	uint8_t kb[DVX_MSG_MAX_RECVS], fb[DVX_MSG_MAX_RECVS];
	struct dvx_msg_state *st;
	struct msg_set *x;
	struct msg_rreq *r;
	struct msg_cts *stg;
	struct dvx_qp *cts_qp;
	uint32_t rslot, i, t, q, rr;
	uint16_t seq;
	int polled = 0, err;

	if (!req)
		return -EINVAL;
	*req = NULL;
	if (!comm_ok(c, MSG_K_RECV) || n < 1 || (uint32_t)n > c->max_recvs || !bufs || !sizes ||
	    !tags || !mrs)
		return -EINVAL;
	for (i = 0; i < (uint32_t)n; i++)
		if (!mrs[i] || (sizes[i] && !bufs[i]) || !buf_ok(c, mrs[i], bufs[i], sizes[i]))
			return -EINVAL;
	if (c->err)
		return c->err;
	st = c->st;
	x = &st->sets[c->set];
	rslot = (uint32_t)(c->head % c->max_reqs);
	r = dvx_msg_rreq(c, rslot);
	if (r->h.state != MSG_RS_FREE)
		return 0;	/* that slot's request was not tested yet */
	/* big buffers are striped over every QP slot, small ones take one, round robin */
	rr = c->rr;
	for (i = 0; i < (uint32_t)n; i++) {
		if (sizes[i] >= st->cfg.split_bytes && c->nqps > 1) {
			kb[i] = c->nqps;
			fb[i] = 0;
		} else {
			kb[i] = 1;
			fb[i] = (uint8_t)rr;
			rr = (rr + 1) % c->nqps;
		}
		for (t = 0; t < kb[i]; t++)
			rneed[c->map[(fb[i] + t) % c->nqps]]++;
	}
	cts_qp = &x->qp[c->map[0]];
	/* a fair share of each shared receive queue: this comm may hold up to its part of
	 * the depth (its slots on the QP against all slots mapped there), and always one
	 * request's worth when it holds none, so no comm can starve another for good */
	for (q = 0; q < x->nqps; q++) {
		uint32_t mine = 0, j;

		if (!rneed[q] || !c->rx_out[q])
			continue;
		for (j = 0; j < c->nqps; j++)
			mine += c->map[j] == q;
		if ((uint64_t)(c->rx_out[q] + rneed[q]) * x->qp_refs[q] >
		    (uint64_t)x->rq_depth * mine)
			return 0;
	}
	for (;;) {
		int short_rq = 0;

		for (q = 0; q < x->nqps; q++)
			if (rneed[q] && x->qp[q].rq.nwqe - (x->qp[q].rq.pi - x->qp[q].rq.ci) < rneed[q])
				short_rq = 1;
		if (!short_rq && dvx_mlx5_sq_room(&cts_qp->sq, &cts_qp->sqc) >= 1)
			break;
		if (polled)
			return 0;
		polled = 1;
		dvx_msg_poll_set(st, c->set, MSG_POLL_BUDGET);
		if (c->err)
			return c->err;
	}
	/* the receives first, published before the CTS can bring any data */
	for (i = 0; i < (uint32_t)n; i++)
		for (t = 0; t < kb[i]; t++) {
			uint32_t slot = (fb[i] + t) % c->nqps;

			err = dvx_qp_post_recv(&x->qp[c->map[slot]],
					       MSG_WR(c->id, MSG_WR_RECV, slot, c->epoch,
						      (rslot << 3) | i),
					       0, 0, 0, DVX_POST_MORE);
			if (err)
				return err;	/* cannot happen: room was checked */
		}
	for (q = 0; q < x->nqps; q++)
		c->rx_out[q] = (uint16_t)(c->rx_out[q] + rneed[q]);
	for (q = 0; q < x->nqps; q++)
		if (rneed[q])
			dvx_mlx5_rq_ring(&x->qp[q].rq);
	/* the CTS entries, sequence last, from the staging area (no peer can write it) */
	seq = (uint16_t)(c->seq_base + c->head + 1);
	stg = (struct msg_cts *)(void *)c->stage + (uint64_t)rslot * st->cfg.max_recvs;
	for (i = 0; i < (uint32_t)n; i++) {
		stg[i].addr = dvx_le64((uint64_t)(uintptr_t)bufs[i]);
		/* a buffer of 4 GiB or more takes messages of up to 4 GiB - 1 */
		stg[i].size = dvx_le32(sizes[i] > UINT32_MAX ? UINT32_MAX : (uint32_t)sizes[i]);
		stg[i].rkey = dvx_le32(mrs[i]->rkey);
		stg[i].tag = dvx_le32(tags[i]);
		stg[i].rcomm = dvx_le16(c->id);
		stg[i].scomm = dvx_le16(c->peer_comm);
		stg[i].idx = dvx_le16((uint16_t)((rslot << 3) | i));
		stg[i].nreqs = (uint8_t)n;
		stg[i].stripe = (uint8_t)((fb[i] << 4) | kb[i]);
		stg[i].rsvd = 0;
		stg[i].seq = dvx_le16(seq);
	}
	err = dvx_qp_post_write(cts_qp, MSG_WR(c->id, MSG_WR_CTS, 0, c->epoch, rslot << 3),
				(uint64_t)(uintptr_t)stg, st->nic[c->nic].stage_mr.lkey,
				(uint32_t)n * (uint32_t)sizeof(struct msg_cts),
				c->rfifo_addr + (uint64_t)rslot * c->fifo_recvs * sizeof(struct msg_cts),
				c->rfifo_rkey, DVX_POST_SIGNALED);
	if (err)
		return err;
	c->wqe_out++;
	c->rr = (uint8_t)rr;
	memset(r, 0, sizeof(*r));
	r->h.magic = MSG_REQ_MAGIC;
	r->h.kind = MSG_RK_RECV;
	r->h.state = MSG_RS_BUSY;
	r->h.idx = (uint16_t)rslot;
	r->h.comm = c;
	r->n = (uint8_t)n;
	for (i = 0; i < (uint32_t)n; i++)
		r->left[i] = kb[i];
	c->head++;
	c->busy++;
	*req = &r->h;
	return 0;
}

int dvx_msg_iflush(struct dvx_msg_comm *c, int n, void *const *bufs, const size_t *sizes,
		   struct dvx_mr *const *mrs, struct dvx_msg_req **req)
{
	struct dvx_msg_state *st;
	struct msg_nic *x;
	struct msg_rreq *r;
	int i, last = -1, err;
	uint32_t idx;

	if (!req)
		return -EINVAL;
	*req = NULL;
	if (!comm_ok(c, MSG_K_RECV) || n < 1 || (uint32_t)n > c->max_recvs || !bufs || !sizes ||
	    !mrs)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (!mrs[i] || (sizes[i] && !bufs[i]) || !buf_ok(c, mrs[i], bufs[i], sizes[i]))
			return -EINVAL;
		if (sizes[i])
			last = i;
	}
	st = c->st;
	if (!(st->cfg.flags & DVX_MSG_F_FLUSH) || last < 0)
		return 0;
	x = &st->nic[c->nic];
	idx = x->fhead % st->cfg.max_reqs;
	r = &x->freqs[idx];
	if (r->h.state != MSG_RS_FREE) {
		dvx_msg_poll_flush(st, c->nic, MSG_POLL_BUDGET);
		return -EAGAIN;
	}
	err = dvx_qp_post_read(&x->fqp, MSG_WR(0, MSG_WR_FLUSH, c->nic, 0, idx),
			       (uint64_t)(uintptr_t)(st->fifo + st->flush_off + c->nic * 64ull),
			       x->stage_mr.lkey, 1, (uint64_t)(uintptr_t)bufs[last], mrs[last]->rkey,
			       DVX_POST_SIGNALED);
	if (err == -ENOSPC) {
		dvx_msg_poll_flush(st, c->nic, MSG_POLL_BUDGET);
		return -EAGAIN;
	}
	if (err)
		return err;
	memset(r, 0, sizeof(*r));
	r->h.magic = MSG_REQ_MAGIC;
	r->h.kind = MSG_RK_FLUSH;
	r->h.state = MSG_RS_BUSY;
	r->h.idx = (uint16_t)idx;
	r->h.comm = c;
	x->fhead++;
	*req = &r->h;
	return 0;
}

/* ------------------------------------------------------------------------------
 * Test, progress, close
 */
int dvx_msg_test(struct dvx_msg_req *req, int *done, size_t *sizes)
{
	struct dvx_msg_comm *c;
	struct dvx_msg_state *st;
	int err;

	if (!req || !done || req->magic != MSG_REQ_MAGIC || req->state == MSG_RS_FREE)
		return -EINVAL;
	c = req->comm;
	if (!c || c->magic != MSG_COMM_MAGIC || !c->st || c->st->magic != MSG_ST_MAGIC)
		return -EINVAL;
	st = c->st;
	if (st->nclosing)
		dvx_msg_closing_poll(st);
	if (req->state == MSG_RS_BUSY) {
		nic_progress(st, c->nic);
		if (req->kind == MSG_RK_FLUSH)
			dvx_msg_poll_flush(st, c->nic, MSG_POLL_BUDGET);
		else if (c->mapped)
			dvx_msg_poll_set(st, c->set, MSG_POLL_BUDGET);
	}
	if (req->state != MSG_RS_DONE) {
		*done = 0;
		return 0;
	}
	if (sizes) {
		if (req->kind == MSG_RK_SEND) {
			sizes[0] = req->err ? 0 : ((struct msg_sreq *)(void *)req)->size;
		} else if (req->kind == MSG_RK_RECV) {
			const struct msg_rreq *r = (const struct msg_rreq *)(const void *)req;
			uint32_t i;

			for (i = 0; i < r->n; i++)
				sizes[i] = r->berr[i] ? 0 : r->bytes[i];
		}
	}
	err = req->err;
	req->state = MSG_RS_FREE;
	req->magic = 0;
	if (req->kind != MSG_RK_FLUSH && c->busy)
		c->busy--;
	*done = 1;
	return err;
}

void dvx_msg_comm_finish_close(struct dvx_msg_state *st, struct dvx_msg_comm *c)
{
	if (c->state == MSG_CS_CLOSING && st->nclosing)
		st->nclosing--;
	dvx_msg_set_unref(st, c);
	dvx_msg_comm_free(st, c);
}

static void revoke_unused(struct dvx_msg_state *st, struct dvx_msg_comm *c);
static void mark_close(struct dvx_msg_state *st, struct dvx_msg_comm *c);

/*
 * A CLOSING comm goes once nothing of it is in flight: its WQEs completed, and for a
 * recv comm every message it announced arrived (or was revoked), for a send comm the
 * receiver's close marker seen (every clear-to-send it wrote is then known and
 * revoked). A QP that failed ends the wait for what it carried. At its close deadline
 * it goes anyway: a recv comm's receives still posted become the QP's orphans (a late
 * message uses one up), a send comm's FIFO is left to its next owner, whose sequence
 * and id checks ignore what lands there.
 */
void dvx_msg_closing_check(struct dvx_msg_state *st, struct dvx_msg_comm *c)
{
	uint32_t q, waiting = 0;
	int late;

	if (c->state != MSG_CS_CLOSING)
		return;
	if (c->todo & MSG_TODO_MARK)
		mark_close(st, c);
	if (c->kind == MSG_K_SEND && !c->marked && !c->err && marker_seen(st, c)) {
		c->marked = 1;
		c->todo |= MSG_TODO_REVOKE;	/* what landed since the close, now all known */
	}
	if (c->todo & MSG_TODO_REVOKE)
		revoke_unused(st, c);
	if (c->state != MSG_CS_CLOSING)
		return;	/* the polls above may have finished it */
	for (q = 0; q < DVX_MSG_MAX_QPS; q++)
		waiting += c->rx_out[q];
	if (!c->wqe_out && !waiting && !c->todo &&
	    (c->kind != MSG_K_SEND || c->marked || c->err)) {
		dvx_msg_comm_finish_close(st, c);
		return;
	}
	late = dvx_msg_now(st) > c->close_deadline;
	if (!late)
		return;
	if (c->kind == MSG_K_RECV && c->mapped) {
		struct msg_set *x = &st->sets[c->set];

		for (q = 0; q < DVX_MSG_MAX_QPS; q++)
			if (!(x->failed_mask & (1u << q)))
				x->orphans[q] = (uint16_t)(x->orphans[q] + c->rx_out[q]);
		memset(c->rx_out, 0, sizeof(c->rx_out));
	}
	st->cnt.refused++;
	dvx_msg_comm_finish_close(st, c);
}

/* poll the sets of CLOSING comms: their completions finish the closes */
void dvx_msg_closing_poll(struct dvx_msg_state *st)
{
	uint32_t i;

	for (i = 0; i < st->cfg.max_comms && st->nclosing; i++) {
		struct dvx_msg_comm *c = &st->comms[i];

		if (c->state != MSG_CS_CLOSING)
			continue;
		dvx_msg_poll_set(st, c->set, MSG_POLL_BUDGET);
		dvx_msg_closing_check(st, c);	/* the poll may have freed it already */
	}
}

/*
 * A send comm closing with clear-to-send entries it has not used (the receiver posted
 * buffers this side will never fill): tell the receiver, one zero-length WRITE with
 * immediate of kind REVOKED per QP slot of each buffer's stripe, so that its requests
 * end (-ECONNRESET) and its receive queues get their receives back. Best effort: an
 * entry that finds no room in the send queue after one poll stays unrevoked.
 */
static void revoke_unused(struct dvx_msg_state *st, struct dvx_msg_comm *c)
{
	struct msg_set *x = &st->sets[c->set];
	struct msg_cts e[DVX_MSG_MAX_RECVS];
	uint64_t start = c->head;
	uint32_t p, b, t, nreqs;

	c->todo &= (uint8_t)~MSG_TODO_REVOKE;
	if (c->err)
		return;
	for (p = 0; p < c->max_reqs; p++) {
		uint64_t pos = start + p;
		uint32_t fslot = (uint32_t)(pos % c->max_reqs);

		if (!cts_take(c, fslot, (uint16_t)(c->seq_base + pos + 1), e, &nreqs))
			break;
		for (b = 0; b < nreqs; b++) {
			uint32_t need[DVX_MSG_MAX_QPS] = { 0 }, k = e[b].stripe & 15u,
				 f = e[b].stripe >> 4;
			int polled = 0;

			if (c->head_mask & (1u << b))
				continue;	/* matched, or revoked already */
			if (!k || k > c->nqps || f >= c->nqps)
				continue;
			for (t = 0; t < k; t++)
				need[c->map[(f + t) % c->nqps]]++;
			if (!sq_room(st, x, need, &polled, c->set) || c->err) {
				if (!c->err)
					c->todo |= MSG_TODO_REVOKE;	/* again at a later look */
				return;
			}
			for (t = 0; t < k; t++) {
				uint32_t slot = (f + t) % c->nqps;

				if (!dvx_qp_post_write_imm(&x->qp[c->map[slot]],
							   MSG_WR(c->id, MSG_WR_NOTE, slot,
								  c->epoch, (fslot << 3) | b),
							   &(struct dvx_mlx5_sge){ 0, 0, 0 },
							   &(struct dvx_mlx5_raddr){ e[b].addr,
										     e[b].rkey },
							   MSG_IMM(MSG_IMM_REVOKED, e[b].idx,
								   e[b].rcomm),
							   DVX_POST_SIGNALED))
					c->wqe_out++;
			}
			c->head_mask |= (uint8_t)(1u << b);
		}
		/* this slot is done: a later look starts after it */
		c->head = pos + 1;
		c->head_mask = 0;
	}
}

/* a closing recv comm tells its sender it is gone: the close marker after the sender's
 * FIFO, on the QP of its clear-to-sends (behind every one of them) */
static void mark_close(struct dvx_msg_state *st, struct dvx_msg_comm *c)
{
	struct msg_set *x = &st->sets[c->set];
	struct dvx_qp *qp = &x->qp[c->map[0]];
	struct msg_close_mark *k = (struct msg_close_mark *)(void *)((struct msg_cts *)(void *)
								     c->stage +
							     (uint64_t)st->cfg.max_reqs *
								     st->cfg.max_recvs);
	uint64_t raddr = c->rfifo_addr +
			 (uint64_t)c->fifo_depth * c->fifo_recvs * sizeof(struct msg_cts);

	c->todo &= (uint8_t)~MSG_TODO_MARK;
	if (c->err)
		return;	/* its QP failed: the sender's fails too */
	if (dvx_mlx5_sq_room(&qp->sq, &qp->sqc) < 1) {
		dvx_msg_poll_set(st, c->set, MSG_POLL_BUDGET);
		if (c->err)
			return;
		if (dvx_mlx5_sq_room(&qp->sq, &qp->sqc) < 1) {
			c->todo |= MSG_TODO_MARK;	/* again at a later look */
			return;
		}
	}
	memset(k, 0, sizeof(*k));
	k->rcomm = dvx_le16(c->id);
	k->scomm = dvx_le16(c->peer_comm);
	k->head = dvx_le64(c->head);
	k->magic = dvx_le32(MSG_CLOSE_MAGIC);
	if (!dvx_qp_post_write(qp, MSG_WR(c->id, MSG_WR_CTS, 0, c->epoch, 0),
			       (uint64_t)(uintptr_t)k, st->nic[c->nic].stage_mr.lkey,
			       (uint32_t)sizeof(*k), raddr, c->rfifo_rkey, DVX_POST_SIGNALED))
		c->wqe_out++;
}

/* dvx_msg_close() of a live send or recv comm (msg.c checked it) */
int dvx_msg_close_conn(struct dvx_msg_state *st, struct dvx_msg_comm *c)
{
	uint32_t i;
	int err = 0;

	/* its flush requests go with it */
	if (c->kind == MSG_K_RECV && (st->cfg.flags & DVX_MSG_F_FLUSH)) {
		struct msg_nic *x = &st->nic[c->nic];

		for (i = 0; i < st->cfg.max_reqs; i++) {
			struct dvx_msg_req *h = &x->freqs[i].h;

			if (h->comm != c || h->state == MSG_RS_FREE)
				continue;
			if (h->state == MSG_RS_DONE) {
				h->state = MSG_RS_FREE;	/* done and never tested: free again */
			} else {
				h->comm = NULL;	/* a READ in flight: its completion frees it */
			}
			h->magic = 0;
		}
	}
	if (c->kind == MSG_K_SEND) {
		c->marked = (uint8_t)marker_seen(st, c);
		revoke_unused(st, c);	/* what the receiver announced and it will not fill */
	} else {
		mark_close(st, c);
	}
	/* its requests are gone: a test() of one is -EINVAL from now on */
	memset(c->reqs, 0, st->req_stride);
	c->busy = 0;
	c->state = MSG_CS_CLOSING;
	c->close_deadline = dvx_msg_now(st) + st->cfg.timeout_ns;
	st->nclosing++;
	/* WQEs it posted, or messages it announced, may still be in flight: it keeps its
	 * slot (its id routes nowhere else) and its QP references until they are in;
	 * this poll, and every later test, connect, accept and progress, finish it */
	dvx_msg_poll_set(st, c->set, MSG_POLL_BUDGET);
	if (c->state == MSG_CS_CLOSING)
		dvx_msg_closing_check(st, c);
	return err;
}
