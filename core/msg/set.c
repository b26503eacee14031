// SPDX-License-Identifier: MIT
/*
 * core/msg/set.c - QP sets (a connection's QPs and their CQ, or a pool group's) and the
 * pool that keys shared sets' QPs by (local NIC, peer, peer NIC, direction, group,
 * QP slot); refcounts on QPs (communicator slots mapped to them) and on CQs (live QPs
 * of the set). docs/msg.md "The sharing pool".
 */
#include "msg_priv.h"

#define MSG_RING_ALIGN 4096u

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

uint32_t dvx_msg_set_free_count(const struct dvx_msg_state *st, int shared)
{
	uint32_t i, n = 0, lo = shared ? 0 : st->nshared,
		    hi = shared ? st->nshared : st->nshared + st->nprivate;

	for (i = lo; i < hi; i++)
		n += st->sets[i].state == MSG_SET_FREE;
	return n;
}

int dvx_msg_set_alloc(struct dvx_msg_state *st, int shared, uint32_t *set)
{
	uint32_t i, lo = shared ? 0 : st->nshared,
		    hi = shared ? st->nshared : st->nshared + st->nprivate;

	for (i = lo; i < hi; i++) {
		struct msg_set *x = &st->sets[i];

		if (x->state != MSG_SET_FREE)
			continue;
		x->state = MSG_SET_PENDING;
		x->making = 1;
		x->nqps = 0;
		x->live_mask = x->failed_mask = 0;
		x->cq_refs = 0;
		x->nretired = 0;
		memset(x->orphans, 0, sizeof(x->orphans));
		memset(x->qp_refs, 0, sizeof(x->qp_refs));
		memset(x->qp_err, 0, sizeof(x->qp_err));
		memset(x->cr_res, 0, sizeof(x->cr_res));
		memset(x->cqes, 0, sizeof(x->cqes));
		memset(x->cqe_errs, 0, sizeof(x->cqe_errs));
		*set = i;
		return 0;
	}
	return -ENOSPC;
}

/* a set's QP's first PSN: any 24-bit value; distinct ones help reading traces */
static uint32_t set_psn(struct dvx_msg_state *st, uint32_t set, uint32_t q)
{
	return (uint32_t)((st->ctx_id >> 8) + set * 7919u + q * 31u) & 0xffffffu;
}

int dvx_msg_set_create(struct dvx_msg_state *st, uint32_t set, uint32_t nic, uint32_t dir,
		       uint32_t nqps)
{
	struct msg_set *x = &st->sets[set];
	struct dvx_nic *n = st->cfg.nics[nic];
	struct dvx_umem *um = &st->nic[nic].umem;
	uint64_t wq = align_up(DVX_QP_WQ_BYTES(x->sq_depth, x->rq_depth, DVX_RQ_STRIDE(1)),
			       MSG_RING_ALIGN);
	uint64_t cq_off = x->ring_off + (uint64_t)st->cfg.nqps * wq;
	uint64_t dbr = cq_off + align_up(DVX_CQ_RING_BYTES(x->cq_depth), MSG_RING_ALIGN);
	struct dvx_cq_cfg ca;
	uint32_t q;
	int err;

	if (nqps < 1 || nqps > st->cfg.nqps)
		return -EINVAL;
	x->nic = nic;
	x->dir = (uint8_t)dir;
	x->nqps = (uint8_t)nqps;
	memset(&ca, 0, sizeof(ca));
	ca.depth = x->cq_depth;
	ca.ring_umem = um;
	ca.ring_offset = cq_off;
	ca.dbr_umem = um;
	ca.dbr_offset = dbr + (uint64_t)DVX_MSG_MAX_QPS * 8;
	err = dvx_cq_create(n, &ca, &x->cq);
	if (err)
		return err;
	for (q = 0; q < nqps; q++) {
		struct dvx_qp_cfg qa;

		memset(&qa, 0, sizeof(qa));
		qa.sq_depth = x->sq_depth;
		/* receives only where WRITEs with immediate arrive: the recv side */
		qa.rq_depth = dir == MSG_DIR_RECV ? x->rq_depth : 0;
		qa.rq_max_sge = dir == MSG_DIR_RECV ? 1 : 0;
		qa.send_cq = &x->cq;
		qa.recv_cq = dir == MSG_DIR_RECV ? &x->cq : NULL;
		qa.psn = set_psn(st, set, q);
		qa.wq_umem = um;
		qa.wq_offset = x->ring_off + (uint64_t)q * wq;
		qa.dbr_umem = um;
		qa.dbr_offset = dbr + (uint64_t)q * 8;
		qa.sq_wr_ids = x->wr_ids + (uint64_t)q * (x->sq_depth + x->rq_depth);
		qa.rq_wr_ids = dir == MSG_DIR_RECV ? qa.sq_wr_ids + x->sq_depth : NULL;
		err = dvx_qp_create(n, &qa, &x->qp[q]);
		if (err)
			return err;	/* dvx_msg_set_release() destroys what was made */
		x->live_mask |= (uint8_t)(1u << q);
		x->cq_refs++;
	}
	x->cq_live = 1;
	return 0;
}

int dvx_msg_set_connect(struct dvx_msg_state *st, uint32_t set, const struct dvx_qp_conn *remote)
{
	struct msg_set *x = &st->sets[set];
	struct dvx_qp_connect_cfg ca = st->cfg.conn;
	uint32_t q;
	int err;

	/* peers write: data (recv side) and clear-to-send entries (send side); never
	 * read, never atomics */
	ca.access = DVX_ACCESS_REMOTE_WRITE;
	for (q = 0; q < x->nqps; q++) {
		err = dvx_qp_connect(&x->qp[q], &remote[q], &ca);
		if (err)
			return err;
	}
	return 0;
}

/* destroy QP @q of set @x and its pool entry; the CQ with the last one */
static int set_drop_qp(struct dvx_msg_state *st, uint32_t set, uint32_t q)
{
	struct msg_set *x = &st->sets[set];
	uint32_t qpn = x->qp[q].qpn;
	int err = 0, e;

	if (x->qp[q].live == DVX_LIVE)
		err = dvx_qp_destroy(&x->qp[q]);
	/* completions of this QP may still sit in the set's CQ: the polls that meet them
	 * count them as late instead of taking them for a broken CQ */
	if (qpn && x->cq_refs > 1 && x->nretired < DVX_MSG_MAX_QPS)
		x->retired_qpn[x->nretired++] = qpn;
	if (x->qp[q].live == DVX_LIVE)
		memset(&x->qp[q], 0, sizeof(x->qp[q]));	/* a failed destroy: forget it */
	if (x->shared)
		dvx_msg_pool_del(st, set, q);
	if (x->live_mask & (1u << q)) {
		x->live_mask &= (uint8_t)~(1u << q);
		x->cq_refs--;
	}
	x->qp_refs[q] = 0;
	if (!x->cq_refs && x->cq.live == DVX_LIVE) {
		e = dvx_cq_destroy(&x->cq);
		if (x->cq.live == DVX_LIVE)
			memset(&x->cq, 0, sizeof(x->cq));
		if (!err)
			err = e;
	}
	if (!x->cq_refs) {
		x->cq_live = 0;
		x->state = MSG_SET_FREE;
	}
	return err;
}

int dvx_msg_set_release(struct dvx_msg_state *st, uint32_t set)
{
	struct msg_set *x = &st->sets[set];
	uint32_t q;
	int err = 0, e;

	for (q = 0; q < DVX_MSG_MAX_QPS; q++)
		if (x->qp[q].live == DVX_LIVE || (x->live_mask & (1u << q))) {
			e = set_drop_qp(st, set, q);
			if (!err)
				err = e;
		}
	if (x->cq.live == DVX_LIVE) {
		e = dvx_cq_destroy(&x->cq);
		if (!err)
			err = e;
	}
	memset(&x->cq, 0, sizeof(x->cq));
	if (x->shared)
		for (q = 0; q < DVX_MSG_MAX_QPS; q++)
			dvx_msg_pool_del(st, set, q);
	x->live_mask = x->failed_mask = 0;
	x->cq_refs = 0;
	x->cq_live = 0;
	memset(x->qp_refs, 0, sizeof(x->qp_refs));
	x->nretired = 0;
	x->state = MSG_SET_FREE;
	return err;
}

void dvx_msg_set_ref(struct dvx_msg_state *st, struct dvx_msg_comm *c)
{
	struct msg_set *x = &st->sets[c->set];
	uint32_t j;

	for (j = 0; j < c->nqps; j++)
		x->qp_refs[c->map[j]]++;
	c->mapped = 1;
}

int dvx_msg_set_unref(struct dvx_msg_state *st, struct dvx_msg_comm *c)
{
	struct msg_set *x;
	uint32_t j;
	int err = 0, e;

	if (!c->mapped)
		return 0;
	x = &st->sets[c->set];
	c->mapped = 0;
	if (c->cr_want) {	/* offload: its credit reservation goes */
		x->cr_res[c->map[0]] -= c->cr_want;
		c->cr_want = 0;
	}
	for (j = 0; j < c->nqps; j++) {
		uint32_t q = c->map[j];

		if (!x->qp_refs[q])
			continue;	/* cannot happen: dvx_msg_check() says so */
		if (--x->qp_refs[q])
			continue;
		/* the QP's last user: it goes, and the CQ with the set's last QP */
		e = set_drop_qp(st, c->set, q);
		if (!err)
			err = e;
	}
	return err;
}

/* ------------------------------------------------------------------------------
 * The pool
 */
struct msg_pool_ent *dvx_msg_pool_find(struct dvx_msg_state *st, uint32_t nic, uint64_t peer,
				       uint32_t peer_nic, uint32_t dir, uint32_t group,
				       uint32_t slot)
{
	uint32_t i;

	for (i = 0; i < st->npool; i++) {
		struct msg_pool_ent *e = &st->pool[i];

		if (e->used && e->nic == nic && e->peer_ctx == peer && e->peer_nic == peer_nic &&
		    e->dir == dir && e->group == group && e->slot == slot)
			return e;
	}
	return NULL;
}

/* the entry of the lowest QP slot a set of this key still has (slot 0 unless it went) */
struct msg_pool_ent *dvx_msg_pool_find_key(struct dvx_msg_state *st, uint32_t nic, uint64_t peer,
					   uint32_t peer_nic, uint32_t dir, uint32_t group)
{
	uint32_t q;

	for (q = 0; q < DVX_MSG_MAX_QPS; q++) {
		struct msg_pool_ent *e = dvx_msg_pool_find(st, nic, peer, peer_nic, dir, group, q);

		if (e)
			return e;
	}
	return NULL;
}

uint32_t dvx_msg_pool_free_count(const struct dvx_msg_state *st)
{
	uint32_t i, n = 0;

	for (i = 0; i < st->npool; i++)
		n += !st->pool[i].used;
	return n;
}

int dvx_msg_pool_add(struct dvx_msg_state *st, uint32_t set)
{
	const struct msg_set *x = &st->sets[set];
	uint32_t i, q = 0;

	if (dvx_msg_pool_free_count(st) < x->nqps)
		return -ENOSPC;
	for (q = 0; q < x->nqps; q++)
		if (dvx_msg_pool_find(st, x->nic, x->peer_ctx, x->peer_nic, x->dir, x->group, q))
			return -EEXIST;
	q = 0;
	for (i = 0; i < st->npool && q < x->nqps; i++) {
		struct msg_pool_ent *e = &st->pool[i];

		if (e->used)
			continue;
		e->used = 1;
		e->dir = x->dir;
		e->slot = (uint8_t)q++;
		e->nic = x->nic;
		e->peer_nic = x->peer_nic;
		e->group = x->group;
		e->peer_ctx = x->peer_ctx;
		e->set = set;
	}
	return 0;
}

void dvx_msg_pool_del(struct dvx_msg_state *st, uint32_t set, uint32_t slot)
{
	const struct msg_set *x = &st->sets[set];
	struct msg_pool_ent *e;

	/* by the full key the entry was made with, never by QPN */
	e = dvx_msg_pool_find(st, x->nic, x->peer_ctx, x->peer_nic, x->dir, x->group, slot);
	if (e && e->set == set)
		memset(e, 0, sizeof(*e));
}
