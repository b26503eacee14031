// SPDX-License-Identifier: MIT
/*
 * core/msg/data.c - isend, irecv, iflush, test, progress, close: the clear-to-send
 * FIFO, the WRITEs with immediate, and the routing of every completion of a (shared)
 * CQ to its communicator and request by the wr_id's and the immediate's communicator
 * ids. docs/msg.md "The data path" and "Routing".
 */
#include "msg_priv.h"

#include <stdarg.h>
#include <stdio.h>

#include <dvx/hal.h>


/* CTS offload (the end of this file) */
static int isend_offload(struct dvx_msg_comm *c, const void *buf, size_t size, uint32_t tag,
			 const struct dvx_mr *mr, struct dvx_msg_req **req);
static int irecv_offload(struct dvx_msg_comm *c, int n, void *const *bufs, const size_t *sizes,
			 const uint32_t *tags, struct dvx_mr *const *mrs,
			 struct dvx_msg_req **req);
static void revoke_offload(struct dvx_msg_state *st, struct dvx_msg_comm *c);
static void close_note(struct dvx_msg_state *st, struct dvx_msg_comm *c);
static void credit_update(struct dvx_msg_state *st, struct dvx_msg_comm *c, int probe);

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

/* a refused argument of a live communicator's call: the cause in its NIC's diagnostic */
static int __attribute__((format(printf, 3, 4)))
arg_bad(const struct dvx_msg_comm *c, const char *op, const char *fmt, ...)
{
	struct dvx_diag *d = &c->st->cfg.nics[c->nic]->hal.diag;
	va_list ap;

	dvx_hal_diag_set(d, -EINVAL, DVX_DIAG_ARG, op, NULL);
	va_start(ap, fmt);
	vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* why a buffer of @len at @p is not one the communicator can use with @mr, or NULL */
static const char *buf_why(const struct dvx_msg_comm *c, const struct dvx_mr *mr, const void *p,
			   size_t len)
{
	if (!mr)
		return "no MR";
	if (len && !p)
		return "a length without a buffer";
	if (mr->live != DVX_LIVE || mr->nic != c->st->cfg.nics[c->nic])
		return "an MR that is not live on the communicator's NIC";
	if (!buf_ok(c, mr, p, len))
		return "a buffer outside its MR";
	return NULL;
}

/* ------------------------------------------------------------------------------
 * Failures and completions
 */
/* a request slot taken: zeroed (@size bytes from @h), then its head filled in */
static void req_begin(struct dvx_msg_req *h, size_t size, uint8_t kind, uint32_t idx,
		      struct dvx_msg_comm *c)
{
	memset(h, 0, size);
	h->magic = MSG_REQ_MAGIC;
	h->kind = kind;
	h->state = MSG_RS_BUSY;
	h->idx = (uint16_t)idx;
	h->comm = c;
}

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

	if (kind != MSG_WR_DATA && kind != MSG_WR_NOTE && kind != MSG_WR_CTS &&
	    kind != MSG_WR_EAGER && kind != MSG_WR_RTS && kind != MSG_WR_CREDIT)
		return;
	c = dvx_msg_comm_any(st, MSG_WR_ID(wc->wr_id));
	if (!c || c->epoch != MSG_WR_EPOCH(wc->wr_id) || !c->wqe_out) {
		st->cnt.late++;	/* cannot happen: a comm keeps its slot while it has WQEs out */
		return;
	}
	c->wqe_out--;
	if (c->state == MSG_CS_CLOSING) {
		if (kind == MSG_WR_DATA || kind == MSG_WR_EAGER)
			st->cnt.late++;	/* a send of a closed comm: counted and dropped */
		dvx_msg_closing_check(st, c);
		return;
	}
	if (kind == MSG_WR_CREDIT) {
		c->cr_busy = 0;	/* the credit word's source is free: a later limit goes now */
		if ((c->todo & MSG_TODO_CREDIT) && !err)
			credit_update(st, c, 0);
		return;
	}
	if (kind != MSG_WR_DATA && kind != MSG_WR_EAGER)
		return;		/* notices, clear-to-sends and rendezvous requests: only their
				 * ring room mattered */
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

static void on_eager(struct dvx_msg_state *st, uint32_t set, const struct dvx_wc *wc);
static void rreq_settle(struct msg_rreq *r);

static void on_recv(struct dvx_msg_state *st, uint32_t set, const struct dvx_wc *wc)
{
	uint32_t idx = MSG_IMM_IDX(wc->imm), slot = idx >> 3, b = idx & 7u;
	uint32_t q = (uint32_t)(wc->qp - st->sets[set].qp);
	struct dvx_msg_comm *c = dvx_msg_comm_any(st, MSG_IMM_ID(wc->imm));
	struct msg_rreq *r;

	if (MSG_IMM_KIND(wc->imm) == MSG_IMM_EAGER) {
		on_eager(st, set, wc);
		return;
	}
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
	/* more than the buffer holds: the peer wrote outside it (its key covers the whole
	 * MR); never reported as a size */
	if (r->bytes[b] > r->size[b] && !r->berr[b])
		r->berr[b] = -EPROTO;
	if (MSG_IMM_KIND(wc->imm) == MSG_IMM_TOOBIG)
		r->berr[b] = -EMSGSIZE;
	else if (MSG_IMM_KIND(wc->imm) == MSG_IMM_REVOKED)
		r->berr[b] = -ECONNRESET;
	else if (MSG_IMM_KIND(wc->imm) != MSG_IMM_DATA)
		r->berr[b] = -EPROTO;
	r->left[b]--;
	rreq_settle(r);
}

/* a receive request whose buffers expect nothing more is done, with its first error */
static void rreq_settle(struct msg_rreq *r)
{
	uint32_t i;

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
		if (wc.qp && wc.qp >= x->qp && wc.qp < x->qp + DVX_MSG_MAX_QPS) {
			x->cqes[wc.qp - x->qp]++;
			x->cqe_errs[wc.qp - x->qp] += r < 0;
		}
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

	/* entry 0's sequence is written by a WRITE of its own after the WRITE of the slot's
	 * entries (dvx_msg_irecv()): read it first, acquire, then the fields it covers */
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

/*
 * The data of one message into the buffer clear-to-send entry @e names: one WRITE with
 * immediate per QP slot of its stripe (chunks of ceil(size / k) rounded to 64 bytes,
 * trailing ones possibly empty), or zero-length notices of kind TOOBIG when the message
 * is larger than the buffer or than a WQE carries on the path. Returns the number of
 * WRITEs posted (their kind in *@kind), 0 when a send queue has no room after one poll
 * (nothing posted: call again), or a negative errno (-EPROTO: a stripe this connection
 * cannot have; the comm's error found by the poll).
 */
static int post_data(struct dvx_msg_state *st, struct dvx_msg_comm *c, const struct msg_cts *e,
		     uint32_t ridx, uint64_t addr, uint64_t size, uint32_t lkey, uint32_t *kind)
{
	struct msg_set *x = &st->sets[c->set];
	uint32_t need[DVX_MSG_MAX_QPS] = { 0 }, k = e->stripe & 15u, f = e->stripe >> 4, t;
	uint64_t per;
	int polled = 0, err;

	if (!k || k > c->nqps || f >= c->nqps)
		return -EPROTO;
	per = k > 1 ? ((size + k - 1) / k + 63) & ~63ull : size;
	/* larger than the receive, or than the path carries per WQE: both ends learn */
	*kind = size > e->size || per > c->max_chunk ? MSG_IMM_TOOBIG : MSG_IMM_DATA;
	for (t = 0; t < k; t++)
		need[c->map[(f + t) % c->nqps]]++;
	if (!sq_room(st, x, need, &polled, c->set))
		return 0;
	if (c->err)	/* the poll found a failure */
		return c->err;
	for (t = 0; t < k; t++) {
		uint32_t slot = (f + t) % c->nqps, len = 0;
		uint64_t off = (uint64_t)t * per;

		if (*kind == MSG_IMM_DATA && off < size)
			len = (uint32_t)(size - off < per ? size - off : per);
		err = dvx_qp_post_write_imm(&x->qp[c->map[slot]],
					    MSG_WR(c->id,
						   *kind == MSG_IMM_DATA ? MSG_WR_DATA : MSG_WR_NOTE,
						   slot, c->epoch, ridx),
					    &(struct dvx_mlx5_sge){ addr + off, len, lkey },
					    &(struct dvx_mlx5_raddr){ e->addr + off, e->rkey },
					    MSG_IMM(*kind, e->idx, e->rcomm),
					    DVX_POST_SIGNALED | DVX_POST_MORE);
		if (err)
			return err;	/* cannot happen: room was checked */
		c->wqe_out++;
	}
	for (t = 0; t < x->nqps; t++)
		if (need[t])
			dvx_qp_ring(&x->qp[t]);
	return (int)k;
}

int dvx_msg_isend(struct dvx_msg_comm *c, const void *buf, size_t size, uint32_t tag,
		  const struct dvx_mr *mr, struct dvx_msg_req **req)
{
	struct msg_cts e[DVX_MSG_MAX_RECVS];
	struct dvx_msg_state *st;
	struct msg_sreq *r = NULL;
	uint32_t nreqs = 0, fslot, b, kind, ridx;
	const char *why;
	int k;

	if (!req)
		return -EINVAL;
	*req = NULL;
	if (!comm_ok(c, MSG_K_SEND))
		return -EINVAL;	/* not a live send communicator: nowhere to say so */
	why = buf_why(c, mr, buf, size);
	if (why)
		return arg_bad(c, "dvx_msg_isend", "%s", why);
	if (c->err)
		return c->err;
	if (c->offload)
		return isend_offload(c, buf, size, tag, mr, req);
	st = c->st;
	fslot = (uint32_t)(c->head % c->max_reqs);
	if (!cts_take(c, fslot, (uint16_t)(c->seq_base + c->head + 1), e, &nreqs)) {
		/* a software NIC may hold the clear-to-send in its wire: step it once (its
		 * progress thread may sleep), as a test does, and look again */
		nic_progress(st, c->nic);
	}
	if (!cts_take(c, fslot, (uint16_t)(c->seq_base + c->head + 1), e, &nreqs)) {
		/* the receiver has not posted this slot yet, or closed its end */
		if (marker_seen(st, c))
			return -ECONNRESET;
		st->cnt.cts_waits++;
		return 0;
	}
	for (b = 0; b < nreqs; b++)
		if (!(c->head_mask & (1u << b)) && e[b].tag == tag)
			break;
	if (b == nreqs)
		return 0;	/* no buffer with this tag in the slot (yet) */
	ridx = (fslot << 3) | b;
	r = dvx_msg_sreq(c, ridx);
	if (r->h.state != MSG_RS_FREE)
		return 0;	/* the previous lap's request was not tested yet */
	k = post_data(st, c, &e[b], ridx, (uint64_t)(uintptr_t)buf, size, mr->lkey, &kind);
	if (k <= 0)
		return k;	/* no room yet (0), or an error */
	c->head_mask |= (uint8_t)(1u << b);
	if (c->head_mask == (uint8_t)((1u << nreqs) - 1)) {
		c->head++;
		c->head_mask = 0;
	}
	if (kind != MSG_IMM_DATA)
		return -EMSGSIZE;
	req_begin(&r->h, sizeof(*r), MSG_RK_SEND, ridx, c);
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
	uint64_t raddr;
	uint16_t seq;
	int polled = 0, err;

	if (!req)
		return -EINVAL;
	*req = NULL;
	if (!comm_ok(c, MSG_K_RECV))
		return -EINVAL;	/* not a live recv communicator: nowhere to say so */
	if (n < 1 || (uint32_t)n > c->max_recvs)
		return arg_bad(c, "dvx_msg_irecv", "n %d: 1 ... the connection's max_recvs %u", n,
			       c->max_recvs);
	if (!bufs || !sizes || !tags || !mrs)
		return arg_bad(c, "dvx_msg_irecv", "bufs, sizes, tags or mrs is NULL");
	for (i = 0; i < (uint32_t)n; i++) {
		const char *why = buf_why(c, mrs[i], bufs[i], sizes[i]);

		if (why)
			return arg_bad(c, "dvx_msg_irecv", "buffer %u: %s", i, why);
	}
	if (c->err)
		return c->err;
	if (c->offload)
		return irecv_offload(c, n, bufs, sizes, tags, mrs, req);
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
		if (!short_rq && dvx_mlx5_sq_room(&cts_qp->sq, &cts_qp->sqc) >= 2)
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
	/*
	 * The CTS entries from the staging area (no peer can write it), in two WRITEs on one
	 * QP: the entries with entry 0's sequence not yet right, then that sequence alone.
	 * Nothing orders the placement of the bytes within one WRITE (docs/prm.md 10.2): a
	 * sequence written with its entry can be seen before the entry's other fields, and
	 * the sender would take an address, key or size left from the slot's last use (the
	 * software NIC's reorder mode found it). The responder executes the second WRITE
	 * after the first, so entry 0's sequence says the whole slot landed; the sender
	 * reads it first (cts_take()). Its two bytes come from the staged entry's rsvd.
	 */
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
		stg[i].rsvd = dvx_le16(seq);
		stg[i].seq = dvx_le16(seq);
	}
	stg[0].seq = dvx_le16((uint16_t)~seq);
	raddr = c->rfifo_addr + (uint64_t)rslot * c->fifo_recvs * sizeof(struct msg_cts);
	err = dvx_qp_post_write(cts_qp, MSG_WR(c->id, 0, 0, c->epoch, rslot << 3),
				(uint64_t)(uintptr_t)stg, st->nic[c->nic].stage_mr.lkey,
				(uint32_t)n * (uint32_t)sizeof(struct msg_cts), raddr, c->rfifo_rkey,
				DVX_POST_MORE);
	if (!err)
		err = dvx_qp_post_write(cts_qp, MSG_WR(c->id, MSG_WR_CTS, 0, c->epoch, rslot << 3),
					(uint64_t)(uintptr_t)&stg[0].rsvd,
					st->nic[c->nic].stage_mr.lkey, sizeof(stg[0].seq),
					raddr + offsetof(struct msg_cts, seq), c->rfifo_rkey,
					DVX_POST_SIGNALED);
	if (err)
		return err;
	c->wqe_out++;
	c->rr = (uint8_t)rr;
	req_begin(&r->h, sizeof(*r), MSG_RK_RECV, rslot, c);
	r->n = (uint8_t)n;
	for (i = 0; i < (uint32_t)n; i++) {
		r->left[i] = kb[i];
		r->size[i] = sizes[i];	/* what a message may report at most */
	}
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
	req_begin(&r->h, sizeof(*r), MSG_RK_FLUSH, idx, c);
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
		if (req->kind != MSG_RK_FLUSH && c->offload)
			dvx_msg_offload_kick(st, c);
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
	/* offload: its credit receives stay posted; a late eager message uses one up */
	if (c->kind == MSG_K_RECV && c->mapped && c->cr_out) {
		struct msg_set *x = &st->sets[c->set];
		uint32_t q = c->map[0];

		if (!(x->failed_mask & (1u << q)))
			x->orphans[q] = (uint16_t)(x->orphans[q] + c->cr_out);
		c->cr_out = 0;
	}
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
	if (c->todo & MSG_TODO_NOTE)
		close_note(st, c);
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
/* one revoked buffer: a zero-length WRITE with immediate of kind REVOKED per QP slot of
 * its stripe (a stripe this connection cannot have is skipped); 1 when a send queue has
 * no room (MSG_TODO_REVOKE: again at a later look) or the comm failed, else 0 */
static int revoke_entry(struct dvx_msg_state *st, struct dvx_msg_comm *c,
			const struct msg_cts *e, uint32_t ridx)
{
	struct msg_set *x = &st->sets[c->set];
	uint32_t need[DVX_MSG_MAX_QPS] = { 0 }, k = e->stripe & 15u, f = e->stripe >> 4, t;
	int polled = 0;

	if (!k || k > c->nqps || f >= c->nqps)
		return 0;
	for (t = 0; t < k; t++)
		need[c->map[(f + t) % c->nqps]]++;
	if (!sq_room(st, x, need, &polled, c->set) || c->err) {
		if (!c->err)
			c->todo |= MSG_TODO_REVOKE;
		return 1;
	}
	for (t = 0; t < k; t++) {
		uint32_t slot = (f + t) % c->nqps;

		if (!dvx_qp_post_write_imm(&x->qp[c->map[slot]],
					   MSG_WR(c->id, MSG_WR_NOTE, slot, c->epoch, ridx),
					   &(struct dvx_mlx5_sge){ 0, 0, 0 },
					   &(struct dvx_mlx5_raddr){ e->addr, e->rkey },
					   MSG_IMM(MSG_IMM_REVOKED, e->idx, e->rcomm),
					   DVX_POST_SIGNALED))
			c->wqe_out++;
	}
	return 0;
}

static void revoke_unused(struct dvx_msg_state *st, struct dvx_msg_comm *c)
{
	struct msg_cts e[DVX_MSG_MAX_RECVS];
	uint64_t start = c->head;
	uint32_t p, b, nreqs;

	c->todo &= (uint8_t)~MSG_TODO_REVOKE;
	if (c->err)
		return;
	if (c->offload) {
		revoke_offload(st, c);
		return;
	}
	for (p = 0; p < c->max_reqs; p++) {
		uint64_t pos = start + p;
		uint32_t fslot = (uint32_t)(pos % c->max_reqs);

		if (!cts_take(c, fslot, (uint16_t)(c->seq_base + pos + 1), e, &nreqs))
			break;
		for (b = 0; b < nreqs; b++) {
			if (c->head_mask & (1u << b))
				continue;	/* matched, or revoked already */
			if (revoke_entry(st, c, &e[b], (fslot << 3) | b))
				return;
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
		if (c->offload)
			close_note(st, c);
	} else {
		if (c->offload && c->arrived > c->freed)
			st->cnt.late += c->arrived - c->freed;	/* parked: dropped */
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

/* ------------------------------------------------------------------------------
 * CTS receiver offload (docs/msg.md "CTS receiver offload"): a message of at most the
 * eager size goes at once, header and payload in one WRITE with immediate into the
 * receiver's eager ring slot seq mod C, on QP slot 0; each such WRITE consumes one of
 * the receive WQEs the receiver keeps posted for the comm (its credits). A larger
 * message sends a header with MSG_EF_RTS; the receiver answers it, once matched, with
 * the FIFO clear-to-send of that one buffer in FIFO slot seq mod C, and the data goes
 * as in FIFO mode. The receiver matches in sequence order and writes back, now and
 * then, how far the sender may go: the credit word after the sender's close marker.
 */

/* the ring slot of sequence number @s is consumed (recv) */
static int ring_used(const struct dvx_msg_comm *c, uint64_t s)
{
	uint32_t k = (uint32_t)(s % c->max_reqs);

	return (c->used[k >> 3] >> (k & 7u)) & 1u;
}

static void ring_mark(struct dvx_msg_comm *c, uint64_t s, int on)
{
	uint32_t k = (uint32_t)(s % c->max_reqs);

	if (on)
		c->used[k >> 3] = (uint8_t)(c->used[k >> 3] | (1u << (k & 7u)));
	else
		c->used[k >> 3] = (uint8_t)(c->used[k >> 3] & ~(1u << (k & 7u)));
}

/*
 * The sequence of the answer to rendezvous @s, as its FIFO slot's entry carries it: 1 ...
 * 65535, never 0. The sender clears a slot's sequence to 0 once it has taken the answer
 * there (rts_data(), revoke_offload()), and a slot sees answers only for rendezvous, so
 * its entry can stay behind for many laps: were 0 a sequence, the answer whose number
 * came round to it would find the slot's cleared old answer complete and take it - an
 * older buffer's address, key and size (-EMSGSIZE for a larger message, else another
 * buffer's bytes overwritten), its own answer never read. FIFO mode numbers every
 * slot's entries each lap and never clears them: (uint16_t)(base + position + 1) there.
 */
static uint16_t rts_seq(const struct dvx_msg_comm *c, uint64_t s)
{
	return (uint16_t)(1u + (uint32_t)(((uint64_t)c->seq_base + s) % 65535u));
}

/* where, in the sender's FIFO area, the credit word lies: after its close marker */
static uint64_t credit_off(uint64_t reqs, uint64_t recvs)
{
	return (reqs * recvs + 1) * sizeof(struct msg_cts);
}

/* send: the receiver's credit word (its WRITE lands as DMA; read with acquire, and only
 * ever rising: scripts/tsan.supp names this function) */
static uint64_t __attribute__((noinline)) credit_read(const struct dvx_msg_state *st,
							const struct dvx_msg_comm *c)
{
	const uint64_t *cw = (const uint64_t *)(const void *)(c->fifo +
							      credit_off(st->cfg.max_reqs,
									 st->cfg.max_recvs));
	uint64_t v = dvx_le64(__atomic_load_n(cw, __ATOMIC_ACQUIRE));

	return v > c->lim ? v : c->lim;
}

/*
 * Keep the credits posted and tell the sender how far it may go: sequence numbers
 * below min(freed + C, arrived + credits posted), written when that moved by half a
 * ring, or at once when the sender has used all it was given. The receives are rung
 * before the word is written, so a WRITE with immediate never meets an empty queue.
 */
static void credit_update(struct dvx_msg_state *st, struct dvx_msg_comm *c, int probe)
{
	struct msg_set *x = &st->sets[c->set];
	struct dvx_qp *qp = &x->qp[c->map[0]];
	uint32_t want = c->cr_want;	/* reserved when it was accepted (acc_credits()) */
	uint64_t lim, *w;
	int posted = 0;

	c->todo &= (uint8_t)~MSG_TODO_CREDIT;
	if (c->err || c->state != MSG_CS_LIVE)
		return;
	while (c->cr_out < want && qp->rq.nwqe - (qp->rq.pi - qp->rq.ci) > 0) {
		if (dvx_qp_post_recv(qp, MSG_WR(c->id, MSG_WR_CREDIT, 0, c->epoch, 0), 0, 0, 0,
				     DVX_POST_MORE))
			break;
		c->cr_out++;
		posted = 1;
	}
	if (posted)
		dvx_mlx5_rq_ring(&qp->rq);
	if (c->cr_out < want)
		c->todo |= MSG_TODO_CREDIT;	/* the queue is full: again at a later look */
	lim = c->arrived + c->cr_out;
	if (lim > c->freed + c->max_reqs)
		lim = c->freed + c->max_reqs;
	if (lim < c->granted)
		lim = c->granted;	/* a shrunk share: never less than given */
	/* a probe (an irecv with nothing of this comm in flight) writes even when there is
	 * nothing new, so a dead peer fails the receive's QP as a clear-to-send would */
	if (!(probe && !c->wqe_out)) {
		if (lim == c->granted)
			return;
		if (c->granted > c->arrived && lim - c->granted < (c->max_reqs + 1) / 2)
			return;	/* the sender has credit left: batch */
	}
	/* one credit WRITE at a time: its source word is not rewritten while the NIC may
	 * still read it (its completion writes the next) */
	if (c->cr_busy || dvx_mlx5_sq_room(&qp->sq, &qp->sqc) < 1) {
		c->todo |= MSG_TODO_CREDIT;
		return;
	}
	w = (uint64_t *)(void *)(c->stage + credit_off(st->cfg.max_reqs, st->cfg.max_recvs));
	*w = dvx_le64(lim);
	if (dvx_qp_post_write(qp, MSG_WR(c->id, MSG_WR_CREDIT, 0, c->epoch, 0),
			      (uint64_t)(uintptr_t)w, st->nic[c->nic].stage_mr.lkey, 8,
			      c->rfifo_addr + credit_off(c->fifo_depth, c->fifo_recvs),
			      c->rfifo_rkey, DVX_POST_SIGNALED))
		return;
	c->wqe_out++;
	c->cr_busy = 1;
	c->granted = lim;
	st->cnt.credits++;
}

/* skip the requests whose buffers are all matched (and those done long ago) */
static void r_lo_advance(struct dvx_msg_comm *c)
{
	while (c->r_lo < c->head) {
		const struct msg_rreq *r = dvx_msg_rreq(c, (uint32_t)(c->r_lo % c->max_reqs));

		if (c->r_lo + c->max_reqs >= c->head && r->h.state == MSG_RS_BUSY &&
		    r->matched != (uint8_t)((1u << r->n) - 1))
			break;
		c->r_lo++;
	}
}

/*
 * Answer a rendezvous matched to buffer @b of request slot @rslot: post the receives
 * its data will take, then the clear-to-send of that one buffer into the sender's FIFO
 * slot @s mod C (entries, then the sequence: dvx_msg_irecv() says why). 0, or -ENOSPC
 * when a queue has no room (matched again later).
 */
static int rts_answer(struct dvx_msg_state *st, struct dvx_msg_comm *c, struct msg_rreq *r,
		      uint32_t rslot, uint32_t b, uint64_t s)
{
	struct msg_set *x = &st->sets[c->set];
	struct dvx_qp *cts_qp = &x->qp[c->map[0]];
	uint32_t rneed[DVX_MSG_MAX_QPS] = { 0 }, k = 1, f, t, q, fslot;
	struct msg_cts *stg;
	uint64_t raddr;
	uint16_t seq;
	int err;

	if (r->size[b] >= st->cfg.split_bytes && c->nqps > 1) {
		k = c->nqps;
		f = 0;
	} else {
		f = c->rr;
	}
	for (t = 0; t < k; t++)
		rneed[c->map[(f + t) % c->nqps]]++;
	for (q = 0; q < x->nqps; q++)
		if (rneed[q] && x->qp[q].rq.nwqe - (x->qp[q].rq.pi - x->qp[q].rq.ci) < rneed[q])
			return -ENOSPC;
	if (dvx_mlx5_sq_room(&cts_qp->sq, &cts_qp->sqc) < 2)
		return -ENOSPC;
	for (t = 0; t < k; t++) {
		uint32_t slot = (f + t) % c->nqps;

		err = dvx_qp_post_recv(&x->qp[c->map[slot]],
				       MSG_WR(c->id, MSG_WR_RECV, slot, c->epoch, (rslot << 3) | b),
				       0, 0, 0, DVX_POST_MORE);
		if (err)
			return err;	/* cannot happen: room was checked */
	}
	for (q = 0; q < x->nqps; q++)
		if (rneed[q]) {
			c->rx_out[q] = (uint16_t)(c->rx_out[q] + rneed[q]);
			dvx_mlx5_rq_ring(&x->qp[q].rq);
		}
	if (k == 1)
		c->rr = (uint8_t)((f + 1) % c->nqps);
	r->left[b] = (uint8_t)k;
	fslot = (uint32_t)(s % c->max_reqs);
	seq = rts_seq(c, s);
	stg = (struct msg_cts *)(void *)c->stage + (uint64_t)fslot * st->cfg.max_recvs;
	stg->addr = dvx_le64(r->addr[b]);
	stg->size = dvx_le32(r->size[b] > UINT32_MAX ? UINT32_MAX : (uint32_t)r->size[b]);
	stg->rkey = dvx_le32(r->rkey[b]);
	stg->tag = dvx_le32(r->tag[b]);
	stg->rcomm = dvx_le16(c->id);
	stg->scomm = dvx_le16(c->peer_comm);
	stg->idx = dvx_le16((uint16_t)((rslot << 3) | b));
	stg->nreqs = 1;
	stg->stripe = (uint8_t)((f << 4) | k);
	stg->rsvd = dvx_le16(seq);
	stg->seq = dvx_le16((uint16_t)~seq);
	raddr = c->rfifo_addr + (uint64_t)fslot * c->fifo_recvs * sizeof(struct msg_cts);
	err = dvx_qp_post_write(cts_qp, MSG_WR(c->id, 0, 0, c->epoch, rslot << 3),
				(uint64_t)(uintptr_t)stg, st->nic[c->nic].stage_mr.lkey,
				(uint32_t)sizeof(*stg), raddr, c->rfifo_rkey, DVX_POST_MORE);
	if (!err)
		err = dvx_qp_post_write(cts_qp, MSG_WR(c->id, MSG_WR_CTS, 0, c->epoch, rslot << 3),
					(uint64_t)(uintptr_t)&stg->rsvd,
					st->nic[c->nic].stage_mr.lkey, sizeof(stg->seq),
					raddr + offsetof(struct msg_cts, seq), c->rfifo_rkey,
					DVX_POST_SIGNALED);
	if (err)
		return err;	/* cannot happen: room was checked */
	c->wqe_out++;
	return 0;
}

/* the eager header of ring slot @s */
static const struct msg_eager_hdr *ring_hdr(const struct dvx_msg_state *st,
					    const struct dvx_msg_comm *c, uint64_t s)
{
	return (const struct msg_eager_hdr *)(const void *)(c->eager +
							    (s % c->max_reqs) *
								    (MSG_EAGER_HDR +
								     st->cfg.eager_bytes));
}

/* match message @s to the first unmatched buffer with its tag in the earliest posted
 * request that has one: 1 matched, 0 none (it stays parked), -ENOSPC no room yet */
static int match_one(struct dvx_msg_state *st, struct dvx_msg_comm *c, uint64_t s)
{
	const struct msg_eager_hdr *h = ring_hdr(st, c, s);
	uint32_t tag = dvx_le32(h->tag), size = dvx_le32(h->size), b = 0, rslot = 0;
	struct msg_rreq *r = NULL;
	uint64_t p;
	int err;

	for (p = c->r_lo; p < c->head && !r; p++) {
		struct msg_rreq *o = dvx_msg_rreq(c, (uint32_t)(p % c->max_reqs));

		if (o->h.state != MSG_RS_BUSY)
			continue;
		for (b = 0; b < o->n; b++)
			if (!(o->matched & (1u << b)) && o->tag[b] == tag) {
				r = o;
				rslot = (uint32_t)(p % c->max_reqs);
				break;
			}
	}
	if (!r)
		return 0;
	if (dvx_le32(h->flags) & MSG_EF_RTS) {
		err = rts_answer(st, c, r, rslot, b, s);
		if (err)
			return err;
	} else {
		if (size > r->size[b]) {
			r->berr[b] = -EMSGSIZE;	/* larger than the receive: never truncated */
		} else {
			if (size)
				memcpy((void *)(uintptr_t)r->addr[b], h + 1, size);
			r->bytes[b] = size;
		}
		r->left[b] = 0;
	}
	r->matched = (uint8_t)(r->matched | (1u << b));
	ring_mark(c, s, 1);
	rreq_settle(r);
	return 1;
}

/* the sender closed: every buffer no message was matched to ends with -ECONNRESET */
static void gone_fail(struct dvx_msg_comm *c)
{
	uint64_t p;
	uint32_t b;

	for (p = c->r_lo; p < c->head; p++) {
		struct msg_rreq *r = dvx_msg_rreq(c, (uint32_t)(p % c->max_reqs));

		if (r->h.state != MSG_RS_BUSY)
			continue;
		for (b = 0; b < r->n; b++)
			if (!(r->matched & (1u << b))) {
				r->matched = (uint8_t)(r->matched | (1u << b));
				r->berr[b] = -ECONNRESET;
				r->left[b] = 0;
			}
		rreq_settle(r);
	}
}

/* match the parked messages in sequence order, then free the consumed prefix */
static void rx_match(struct dvx_msg_state *st, struct dvx_msg_comm *c)
{
	uint64_t s;

	c->todo &= (uint8_t)~MSG_TODO_MATCH;
	if (c->err || c->state != MSG_CS_LIVE)
		return;
	r_lo_advance(c);
	for (s = c->freed; s < c->arrived; s++) {
		if (ring_used(c, s))
			continue;
		if (match_one(st, c, s) < 0) {
			c->todo |= MSG_TODO_MATCH;	/* no room: again at a later look */
			break;
		}
	}
	while (c->freed < c->arrived && ring_used(c, c->freed)) {
		ring_mark(c, c->freed, 0);
		c->freed++;
	}
	if (c->peer_gone)
		gone_fail(c);
	r_lo_advance(c);
}

/* a WRITE with immediate into the eager ring: check its header, match it */
static void on_eager(struct dvx_msg_state *st, uint32_t set, const struct dvx_wc *wc)
{
	uint32_t q = (uint32_t)(wc->qp - st->sets[set].qp), slot = MSG_IMM_IDX(wc->imm);
	struct dvx_msg_comm *c = dvx_msg_comm_any(st, MSG_IMM_ID(wc->imm));
	const struct msg_eager_hdr *h;
	uint32_t size, flags;

	if (!c || c->kind != MSG_K_RECV || !c->offload || !comm_on_set(c, set) ||
	    c->map[0] != q || !c->cr_out) {
		spare_receive(st, set, wc->qp);
		return;
	}
	c->cr_out--;
	if (c->state == MSG_CS_CLOSING) {
		st->cnt.late++;	/* sent before the close was known: counted and dropped */
		dvx_msg_closing_check(st, c);
		return;
	}
	if (c->err)
		return;
	h = ring_hdr(st, c, c->arrived);
	size = dvx_le32(h->size);
	flags = dvx_le32(h->flags);
	/* the slot is the next in sequence, the header names it, the length fits the kind */
	if (slot != c->arrived % c->max_reqs || dvx_le32(h->seq) != (uint32_t)c->arrived ||
	    (flags & ~(MSG_EF_RTS | MSG_EF_CLOSE)) || flags == (MSG_EF_RTS | MSG_EF_CLOSE) ||
	    c->peer_gone ||
	    (flags ? wc->byte_len != MSG_EAGER_HDR :
		     size > st->cfg.eager_bytes || wc->byte_len != MSG_EAGER_HDR + size)) {
		dvx_msg_comm_fail(c, -EPROTO);
		return;
	}
	if (flags & MSG_EF_CLOSE) {
		ring_mark(c, c->arrived, 1);	/* nothing to match: consumed */
		c->peer_gone = 1;
	}
	c->arrived++;
	rx_match(st, c);
	credit_update(st, c, 0);
}

/* sender: the clear-to-send answering rendezvous @r, if it is there: its data goes */
static void rts_data(struct dvx_msg_state *st, struct dvx_msg_comm *c, struct msg_sreq *r)
{
	uint32_t fslot = (uint32_t)(r->seq % c->max_reqs), nreqs, kind;
	struct msg_cts e[DVX_MSG_MAX_RECVS];
	struct msg_cts *fe;
	int k;

	if (!cts_take(c, fslot, rts_seq(c, r->seq), e, &nreqs))
		return;
	k = nreqs == 1 ? post_data(st, c, &e[0], r->h.idx, r->addr, r->size, r->lkey, &kind) :
			 -EPROTO;
	if (k < 0 && !c->err)
		dvx_msg_comm_fail(c, k);
	if (k <= 0)
		return;		/* no room: at a later look */
	/* taken: the slot's next answer (sequence + C) finds it clear */
	fe = (struct msg_cts *)(void *)c->fifo + (uint64_t)fslot * c->fifo_recvs;
	__atomic_store_n(&fe->seq, 0, __ATOMIC_RELAXED);
	r->rts = 0;
	c->rts_n--;
	if (kind != MSG_IMM_DATA)
		req_done(&r->h, -EMSGSIZE);	/* larger than the receive: both ends learn */
	else
		r->left = (uint8_t)k;
}

/* sender: the rendezvous sends whose answers came, in any order */
static void rts_progress(struct dvx_msg_state *st, struct dvx_msg_comm *c)
{
	uint32_t nsreq = c->max_reqs * DVX_MSG_MAX_RECVS;
	uint64_t p;

	for (p = c->rts_lo; p < c->head && c->rts_n && !c->err; p++) {
		struct msg_sreq *r = dvx_msg_sreq(c, (uint32_t)(p % nsreq));

		if (r->h.state == MSG_RS_BUSY && r->rts && r->seq == p)
			rts_data(st, c, r);
	}
	while (c->rts_lo < c->head) {
		struct msg_sreq *r = dvx_msg_sreq(c, (uint32_t)(c->rts_lo % nsreq));

		if (c->rts_n && r->h.state == MSG_RS_BUSY && r->rts && r->seq == c->rts_lo)
			break;
		c->rts_lo++;
	}
}

void dvx_msg_offload_kick(struct dvx_msg_state *st, struct dvx_msg_comm *c)
{
	if (!c->offload || c->state != MSG_CS_LIVE || c->err)
		return;
	if (c->kind == MSG_K_SEND) {
		rts_progress(st, c);
		return;
	}
	if (c->todo & MSG_TODO_MATCH)
		rx_match(st, c);
	credit_update(st, c, 0);
}

static int isend_offload(struct dvx_msg_comm *c, const void *buf, size_t size, uint32_t tag,
			 const struct dvx_mr *mr, struct dvx_msg_req **req)
{
	struct dvx_msg_state *st = c->st;
	struct msg_set *x = &st->sets[c->set];
	uint32_t nsreq = c->max_reqs * DVX_MSG_MAX_RECVS, ridx = (uint32_t)(c->head % nsreq);
	uint32_t slot = (uint32_t)(c->head % c->max_reqs), need[DVX_MSG_MAX_QPS] = { 0 };
	int eager = size <= c->eager_max && !(mr->flags & DVX_MR_DEVMEM), polled = 0, err;
	struct msg_eager_hdr *h;
	struct msg_sreq *r;

	rts_progress(st, c);
	if (c->err)
		return c->err;
	if (marker_seen(st, c))
		return -ECONNRESET;	/* the receiver closed its end */
	if (c->head >= c->lim) {
		c->lim = credit_read(st, c);
		if (c->head >= c->lim) {
			st->cnt.credit_waits++;
			return 0;
		}
	}
	/* the answer to this send's slot must not land on an older one not yet read */
	if (c->rts_n && c->head >= c->rts_lo + c->max_reqs) {
		st->cnt.cts_waits++;
		return 0;
	}
	r = dvx_msg_sreq(c, ridx);
	if (r->h.state != MSG_RS_FREE)
		return 0;	/* the previous lap's request was not tested yet */
	need[c->map[0]] = 1;
	if (!sq_room(st, x, need, &polled, c->set))
		return 0;
	if (c->err)
		return c->err;
	h = (struct msg_eager_hdr *)(void *)(c->eager +
					     (uint64_t)slot * (MSG_EAGER_HDR + st->cfg.eager_bytes));
	h->tag = dvx_le32(tag);
	h->size = dvx_le32(size > UINT32_MAX ? UINT32_MAX : (uint32_t)size);
	h->seq = dvx_le32((uint32_t)c->head);
	h->flags = dvx_le32(eager ? 0 : MSG_EF_RTS);
	if (eager && size)
		memcpy(h + 1, buf, size);
	err = dvx_qp_post_write_imm(&x->qp[c->map[0]],
				    MSG_WR(c->id, eager ? MSG_WR_EAGER : MSG_WR_RTS, 0, c->epoch,
					   ridx),
				    &(struct dvx_mlx5_sge){ (uint64_t)(uintptr_t)h,
							    MSG_EAGER_HDR +
								    (eager ? (uint32_t)size : 0),
							    st->nic[c->nic].stage_mr.lkey },
				    &(struct dvx_mlx5_raddr){ c->ring_addr +
								      (uint64_t)slot * c->ring_slot,
							      c->ring_rkey },
				    MSG_IMM(MSG_IMM_EAGER, slot, c->peer_comm), DVX_POST_SIGNALED);
	if (err)
		return err;	/* cannot happen: room was checked */
	dvx_qp_ring(&x->qp[c->map[0]]);
	c->wqe_out++;
	req_begin(&r->h, sizeof(*r), MSG_RK_SEND, ridx, c);
	r->size = size;
	r->seq = c->head;
	if (eager) {
		r->left = 1;
		st->cnt.eager++;
	} else {
		r->rts = 1;
		r->addr = (uint64_t)(uintptr_t)buf;
		r->lkey = mr->lkey;
		if (!c->rts_n++)
			c->rts_lo = c->head;
		st->cnt.rts++;
	}
	c->head++;
	c->busy++;
	*req = &r->h;
	return 0;
}

static int irecv_offload(struct dvx_msg_comm *c, int n, void *const *bufs, const size_t *sizes,
			 const uint32_t *tags, struct dvx_mr *const *mrs,
			 struct dvx_msg_req **req)
{
	struct dvx_msg_state *st = c->st;
	uint32_t rslot = (uint32_t)(c->head % c->max_reqs), i;
	struct msg_rreq *r = dvx_msg_rreq(c, rslot);

	for (i = 0; i < (uint32_t)n; i++)
		if (mrs[i]->flags & DVX_MR_DEVMEM)
			return arg_bad(c, "dvx_msg_irecv",
				       "buffer %u: device memory (a dma-buf MR) on a CTS-offload connection, whose eager messages the CPU copies",
				       i);
	if (r->h.state != MSG_RS_FREE)
		return 0;	/* that slot's request was not tested yet */
	r_lo_advance(c);
	req_begin(&r->h, sizeof(*r), MSG_RK_RECV, rslot, c);
	r->n = (uint8_t)n;
	for (i = 0; i < (uint32_t)n; i++) {
		r->left[i] = 1;	/* a message to match */
		r->addr[i] = (uint64_t)(uintptr_t)bufs[i];
		r->size[i] = sizes[i];
		r->tag[i] = tags[i];
		r->rkey[i] = mrs[i]->rkey;
	}
	c->head++;
	c->busy++;
	*req = &r->h;
	rx_match(st, c);	/* parked messages first */
	credit_update(st, c, 1);
	return 0;
}

/* a send comm closing tells its receiver with a header of its own, the last sequence
 * number (a credit like any message), so the receives it will not fill end */
static void close_note(struct dvx_msg_state *st, struct dvx_msg_comm *c)
{
	struct msg_set *x = &st->sets[c->set];
	struct dvx_qp *qp = &x->qp[c->map[0]];
	uint32_t slot = (uint32_t)(c->head % c->max_reqs);
	struct msg_eager_hdr *h;

	c->todo &= (uint8_t)~MSG_TODO_NOTE;
	if (c->err || c->marked || marker_seen(st, c))
		return;		/* the receiver is gone already */
	if (c->head >= c->lim)
		c->lim = credit_read(st, c);
	if (c->head >= c->lim || dvx_mlx5_sq_room(&qp->sq, &qp->sqc) < 1) {
		c->todo |= MSG_TODO_NOTE;	/* again at a later look */
		return;
	}
	h = (struct msg_eager_hdr *)(void *)(c->eager +
					     (uint64_t)slot * (MSG_EAGER_HDR + st->cfg.eager_bytes));
	memset(h, 0, sizeof(*h));
	h->seq = dvx_le32((uint32_t)c->head);
	h->flags = dvx_le32(MSG_EF_CLOSE);
	if (dvx_qp_post_write_imm(qp, MSG_WR(c->id, MSG_WR_RTS, 0, c->epoch, 0),
				  &(struct dvx_mlx5_sge){ (uint64_t)(uintptr_t)h, MSG_EAGER_HDR,
							  st->nic[c->nic].stage_mr.lkey },
				  &(struct dvx_mlx5_raddr){ c->ring_addr + (uint64_t)slot * c->ring_slot,
							    c->ring_rkey },
				  MSG_IMM(MSG_IMM_EAGER, slot, c->peer_comm), DVX_POST_SIGNALED))
		return;
	dvx_qp_ring(qp);
	c->wqe_out++;
	c->head++;
}

/* a send comm closing: the answers to its rendezvous it will not use are revoked */
static void revoke_offload(struct dvx_msg_state *st, struct dvx_msg_comm *c)
{
	struct msg_cts e[DVX_MSG_MAX_RECVS];
	uint32_t nreqs;
	uint64_t p;

	for (p = c->rts_lo; p < c->head; p++) {
		uint32_t fslot = (uint32_t)(p % c->max_reqs);
		struct msg_cts *fe = (struct msg_cts *)(void *)c->fifo +
				     (uint64_t)fslot * c->fifo_recvs;

		if (!cts_take(c, fslot, rts_seq(c, p), e, &nreqs) || nreqs != 1)
			continue;
		if (revoke_entry(st, c, &e[0], 0))
			return;
		__atomic_store_n(&fe->seq, 0, __ATOMIC_RELAXED);
	}
}
