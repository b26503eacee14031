// SPDX-License-Identifier: MIT
/*
 * core/msg/msg.c - the messaging context: configuration, the three regions, init and
 * fini, MRs, progress and close (the order of the layer's turns), statistics and the
 * invariant checker (docs/msg.md). The top of the folder: set.c and comm.c at the
 * bottom, data.c (the data path) above them, hs.c (handshakes) above data.c, and
 * this file above all of them; no file calls one above it (scripts/check-cycles.sh).
 */
#include "msg_priv.h"

#include <stdarg.h>
#include <stdio.h>

#include <dvx/hal.h>

#define MSG_DEF_COMMS 64
#define MSG_DEF_PENDING 16
#define MSG_DEF_REQS 32
#define MSG_DEF_TIMEOUT_NS (30ull * 1000000000ull)
#define MSG_DEF_SPLIT 65536
#define MSG_DEF_EAGER 4096
#define MSG_FLAGS (DVX_MSG_F_FLUSH | DVX_MSG_F_NO_FALLBACK | DVX_MSG_F_CTS_OFFLOAD)
#define MSG_PARTNER_DEPTH 64
#define MSG_RING_ALIGN 4096u

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static int pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static uint32_t pow2_ceil(uint64_t v)
{
	uint32_t p = 1;

	while (p < v && p < (1u << 30))
		p <<= 1;
	return p;
}

/*
 * A refused configuration: the reason goes into the first NIC's diagnostic (the
 * context's NICs keep its records, docs/msg.md), when there is one to write to.
 */
static int __attribute__((format(printf, 3, 4)))
cfg_bad(const struct dvx_msg_cfg *in, const char *op, const char *fmt, ...)
{
	struct dvx_nic *nic = NULL;
	struct dvx_diag *d;
	va_list ap;

	if (in && in->nnics && in->nnics <= DVX_MSG_MAX_NICS)
		nic = in->nics[0];
	if (!nic)
		return -EINVAL;
	d = &nic->hal.diag;
	dvx_hal_diag_set(d, -EINVAL, DVX_DIAG_ARG, op, NULL);
	va_start(ap, fmt);
	vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* the configuration with its defaults filled in, or -EINVAL with the reason in the
 * first NIC's diagnostic */
static int cfg_norm(const struct dvx_msg_cfg *in, struct dvx_msg_cfg *c, const char *op)
{
	uint32_t i;

	if (!in)
		return -EINVAL;
	*c = *in;
	if (!c->nnics || c->nnics > DVX_MSG_MAX_NICS)
		return -EINVAL;	/* no NIC to keep the record */
	for (i = 0; i < c->nnics; i++)
		if (!c->nics[i] || c->nics[i]->open != DVX_LIVE)
			return cfg_bad(in, op, "nics[%u] is not an opened NIC", i);
	if (!c->max_comms)
		c->max_comms = MSG_DEF_COMMS;
	if (!c->max_pending)
		c->max_pending = MSG_DEF_PENDING;
	if (!c->nqps)
		c->nqps = 1;
	if (!c->max_reqs)
		c->max_reqs = MSG_DEF_REQS;
	if (!c->max_recvs)
		c->max_recvs = DVX_MSG_MAX_RECVS;
	if (c->max_comms > DVX_MSG_MAX_COMMS)
		return cfg_bad(in, op, "max_comms %u above %u", c->max_comms, DVX_MSG_MAX_COMMS);
	if (c->max_pending < 2 || c->max_pending > 256)
		return cfg_bad(in, op, "max_pending %u outside 2 ... 256", c->max_pending);
	if (c->nqps > DVX_MSG_MAX_QPS)
		return cfg_bad(in, op, "nqps %u above %u", c->nqps, DVX_MSG_MAX_QPS);
	if (c->max_recvs > DVX_MSG_MAX_RECVS)
		return cfg_bad(in, op, "max_recvs %u above %u", c->max_recvs, DVX_MSG_MAX_RECVS);
	if (c->max_reqs > DVX_MSG_MAX_REQS || !pow2(c->max_reqs))
		return cfg_bad(in, op, "max_reqs %u is not a power of two up to %u", c->max_reqs,
			       DVX_MSG_MAX_REQS);
	if (c->groups > DVX_MSG_MAX_GROUPS)
		return cfg_bad(in, op, "groups %u above %u", c->groups, DVX_MSG_MAX_GROUPS);
	if (c->depth_mult > 16)
		return cfg_bad(in, op, "depth_mult %u above 16", c->depth_mult);
	if (c->flags & ~(uint32_t)MSG_FLAGS)
		return cfg_bad(in, op, "unknown flags %#x", c->flags & ~(uint32_t)MSG_FLAGS);
	if (!(c->flags & DVX_MSG_F_CTS_OFFLOAD))
		c->eager_bytes = 0;	/* no ring without offload */
	else if (!c->eager_bytes)
		c->eager_bytes = MSG_DEF_EAGER;
	else if (c->eager_bytes > 65536 || (c->eager_bytes & 63))
		return cfg_bad(in, op, "eager_bytes %u is not a multiple of 64 up to 65536",
			       c->eager_bytes);
	/* the default depths hold max_reqs * max_recvs WQEs, rounded up to a power of two
	 * (max_recvs 3, 5, 6, 7 are fine: the queues are a little deeper) */
	if (!c->sq_depth)	/* a receiver's irecv takes two WQEBBs (its CTS, then its seq) */
		c->sq_depth = pow2_ceil((uint64_t)c->max_reqs * (c->max_recvs < 2 ? 2 : c->max_recvs));
	if (!c->rq_depth)
		c->rq_depth = pow2_ceil((uint64_t)c->max_reqs * c->max_recvs);
	if (!pow2(c->sq_depth) || c->sq_depth > 32768)
		return cfg_bad(in, op, "sq_depth %u is not a power of two up to 32768",
			       c->sq_depth);
	if (!pow2(c->rq_depth) || c->rq_depth > 32768)
		return cfg_bad(in, op, "rq_depth %u is not a power of two up to 32768",
			       c->rq_depth);
	if (!c->depth_mult)
		c->depth_mult = 1;
	/* a shared QP's depths, checked now rather than at connect */
	if ((uint64_t)c->sq_depth * c->depth_mult > 32768 ||
	    (uint64_t)c->rq_depth * c->depth_mult > 32768)
		return cfg_bad(in, op, "a shared QP's depths (sq_depth %u, rq_depth %u times depth_mult %u) above 32768",
			       c->sq_depth, c->rq_depth, c->depth_mult);
	if (c->groups) {
		if (!c->max_shared_sets)
			c->max_shared_sets = c->max_comms < 64 ? c->max_comms : 64;
		if (!in->max_private_sets)
			c->max_private_sets = 16;
	} else {
		c->max_shared_sets = 0;
		if (!c->max_private_sets)
			c->max_private_sets = c->max_comms;
	}
	if (c->max_shared_sets > 4096 || c->max_private_sets > 4096 ||
	    !(c->max_shared_sets + c->max_private_sets))
		return cfg_bad(in, op, "max_shared_sets %u and max_private_sets %u: each up to 4096, not both 0",
			       c->max_shared_sets, c->max_private_sets);
	if (!c->split_bytes)
		c->split_bytes = MSG_DEF_SPLIT;
	if (!c->timeout_ns)
		c->timeout_ns = MSG_DEF_TIMEOUT_NS;
	if (!c->conn.max_mtu && !c->conn.retry_count && !c->conn.ack_timeout)
		dvx_qp_connect_cfg_init(&c->conn);
	switch (c->listen_addr.family) {
	case DVX_HAL_SOCK_NONE:
	case DVX_HAL_SOCK_IP4:
	case DVX_HAL_SOCK_IP6:
		break;
	case DVX_HAL_SOCK_UNIX:
	case DVX_HAL_SOCK_ABSTRACT:
		if (!c->listen_addr.path[0] ||
		    strnlen(c->listen_addr.path, sizeof(c->listen_addr.path)) > 47)
			return cfg_bad(in, op, "listen_addr: a UNIX name of 1 ... 47 characters");
		break;
	default:
		return cfg_bad(in, op, "listen_addr: unknown family %u", c->listen_addr.family);
	}
	return 0;
}

/* The layout every region is carved by. */
struct msg_layout {
	uint32_t priv_sq, priv_rq, priv_cq, shr_sq, shr_rq, shr_cq, f_depth;
	uint64_t req_stride, fifo_stride, ring_stride, wq_bytes_p, wq_bytes_s;
	uint64_t private_stride, shared_stride, flush_stride;
	/* state */
	uint64_t o_comms, o_gens, o_epochs, o_sets, o_pool, o_hs, o_peers, o_reqs, o_wrids,
		o_fwr, o_freq, state_bytes;
	uint64_t wr_private, wr_shared;	/* wr_id entries per set */
	/* fifo */
	uint64_t ring_off, stage_off, estage_off, flush_off, fifo_bytes;
	/* rings */
	uint64_t sets_off, rings_bytes;
};

static uint64_t set_stride(uint32_t nqps, uint32_t sq, uint32_t rq, uint32_t cq,
			   uint64_t *wq_bytes)
{
	uint64_t wq = align_up(DVX_QP_WQ_BYTES(sq, rq, DVX_RQ_STRIDE(1)), MSG_RING_ALIGN);

	*wq_bytes = wq;
	/* QPs' work queues, the CQ ring, then one page of records (QPs, then the CQ) */
	return (uint64_t)nqps * wq + align_up(DVX_CQ_RING_BYTES(cq), MSG_RING_ALIGN) +
	       MSG_RING_ALIGN;
}

static void layout(const struct dvx_msg_cfg *c, struct msg_layout *l)
{
	uint64_t o = 0, rr = (uint64_t)c->max_reqs * c->max_recvs, wrf;
	uint32_t nsets = c->max_shared_sets + c->max_private_sets;

	memset(l, 0, sizeof(*l));
	l->priv_sq = c->sq_depth;
	l->priv_rq = c->rq_depth;
	l->priv_cq = pow2_ceil((uint64_t)c->nqps * (c->sq_depth + c->rq_depth));
	l->shr_sq = c->sq_depth * c->depth_mult;
	l->shr_rq = c->rq_depth * c->depth_mult;
	l->shr_cq = pow2_ceil((uint64_t)c->nqps * (l->shr_sq + l->shr_rq));
	l->f_depth = pow2_ceil(rr);
	l->private_stride = set_stride(c->nqps, l->priv_sq, l->priv_rq, l->priv_cq,
				       &l->wq_bytes_p);
	l->shared_stride = c->max_shared_sets ?
				   set_stride(c->nqps, l->shr_sq, l->shr_rq, l->shr_cq,
					      &l->wq_bytes_s) :
				   0;
	l->wr_private = (uint64_t)c->nqps * (l->priv_sq + l->priv_rq);
	l->wr_shared = (uint64_t)c->nqps * (l->shr_sq + l->shr_rq);
	/* send requests are indexed FIFO slot << 3 | buffer */
	l->req_stride = (uint64_t)c->max_reqs * DVX_MSG_MAX_RECVS * sizeof(struct msg_sreq);
	if ((uint64_t)c->max_reqs * sizeof(struct msg_rreq) > l->req_stride)
		l->req_stride = (uint64_t)c->max_reqs * sizeof(struct msg_rreq);
	l->req_stride = align_up(l->req_stride, 64);
	/* the FIFO's entries, then the close marker's entry, then (offload) the credit word */
	l->fifo_stride = align_up((rr + 1) * sizeof(struct msg_cts) +
				  ((c->flags & DVX_MSG_F_CTS_OFFLOAD) ? 8 : 0), 64);
	/* offload: an eager ring of max_reqs slots (recv comms) or its staging (send) */
	l->ring_stride = c->eager_bytes ?
				 align_up((uint64_t)c->max_reqs * (MSG_EAGER_HDR + c->eager_bytes), 64) :
				 0;

	/* state */
	o = align_up(sizeof(struct dvx_msg_state), 64);
	l->o_comms = o;
	o = align_up(o + (uint64_t)c->max_comms * sizeof(struct dvx_msg_comm), 64);
	l->o_gens = o;
	o = align_up(o + c->max_comms, 64);
	l->o_epochs = o;
	o = align_up(o + (uint64_t)c->max_comms * 2, 64);
	l->o_sets = o;
	o = align_up(o + (uint64_t)nsets * sizeof(struct msg_set), 64);
	l->o_pool = o;
	o = align_up(o + (uint64_t)c->max_shared_sets * c->nqps * sizeof(struct msg_pool_ent),
		     64);
	l->o_hs = o;
	o = align_up(o + (uint64_t)c->max_pending * sizeof(struct msg_hs), 64);
	l->o_peers = o;
	o = align_up(o + (uint64_t)c->max_comms * sizeof(struct msg_peer), 64);
	l->o_reqs = o;
	o = align_up(o + (uint64_t)c->max_comms * l->req_stride, 64);
	l->o_wrids = o;
	o = align_up(o + ((uint64_t)c->max_shared_sets * l->wr_shared +
			  (uint64_t)c->max_private_sets * l->wr_private) * 8,
		     64);
	wrf = (c->flags & DVX_MSG_F_FLUSH) ? (uint64_t)c->nnics * l->f_depth : 0;
	l->o_fwr = o;
	o = align_up(o + wrf * 8, 64);
	l->o_freq = o;
	if (c->flags & DVX_MSG_F_FLUSH)
		o = align_up(o + (uint64_t)c->nnics * c->max_reqs * sizeof(struct msg_rreq), 64);
	l->state_bytes = o;

	/* fifo: a FIFO per communicator slot (peers write them: one MR with remote write);
	 * from the next page on a staging area per slot and 64 bytes of flush target per
	 * NIC (only this NIC reads and writes them: an MR without remote rights) */
	l->ring_off = align_up((uint64_t)c->max_comms * l->fifo_stride, 64);
	l->stage_off = align_up(l->ring_off + (uint64_t)c->max_comms * l->ring_stride,
				MSG_RING_ALIGN);
	l->estage_off = l->stage_off + (uint64_t)c->max_comms * l->fifo_stride;
	l->flush_off = l->estage_off + (uint64_t)c->max_comms * l->ring_stride;
	l->fifo_bytes = align_up(l->flush_off + (uint64_t)c->nnics * 64, MSG_RING_ALIGN);

	/* rings: the flush QPs per NIC, then the shared sets, then the private ones */
	if (c->flags & DVX_MSG_F_FLUSH)
		l->flush_stride =
			align_up(DVX_CQ_RING_BYTES(l->f_depth), MSG_RING_ALIGN) +
			align_up(DVX_QP_WQ_BYTES(l->f_depth, 0, DVX_RQ_STRIDE(1)), MSG_RING_ALIGN) +
			align_up(DVX_CQ_RING_BYTES(MSG_PARTNER_DEPTH), MSG_RING_ALIGN) +
			align_up(DVX_QP_WQ_BYTES(MSG_PARTNER_DEPTH, 0, DVX_RQ_STRIDE(1)),
				 MSG_RING_ALIGN) +
			MSG_RING_ALIGN;
	l->sets_off = (uint64_t)c->nnics * l->flush_stride;
	l->rings_bytes = l->sets_off + (uint64_t)c->max_shared_sets * l->shared_stride +
			 (uint64_t)c->max_private_sets * l->private_stride;
}

int dvx_msg_mem_req(const struct dvx_msg_cfg *cfg, struct dvx_mem_req *state,
		    struct dvx_mem_req *fifo, struct dvx_mem_req *rings)
{
	struct dvx_msg_cfg c;
	struct msg_layout l;
	int err;

	if (!state || !fifo || !rings)
		return cfg_bad(cfg, "dvx_msg_mem_req", "state, fifo or rings is NULL");
	err = cfg_norm(cfg, &c, "dvx_msg_mem_req");
	if (err)
		return err;
	layout(&c, &l);
	state->bytes = l.state_bytes;
	state->align = 64;
	fifo->bytes = l.fifo_bytes;
	fifo->align = MSG_RING_ALIGN;
	rings->bytes = l.rings_bytes;
	rings->align = MSG_RING_ALIGN;
	return 0;
}

/* ------------------------------------------------------------------------------
 * init / fini
 */
static int flush_make(struct dvx_msg_state *st, uint32_t i, uint32_t depth)
{
	struct msg_nic *n = &st->nic[i];
	struct dvx_nic *nic = st->cfg.nics[i];
	uint64_t base = (uint64_t)i * st->flush_stride, o = base;
	uint64_t dbr = base + st->flush_stride - MSG_RING_ALIGN;
	struct dvx_qp_connect_cfg ca = st->cfg.conn;
	struct dvx_cq_cfg cqa;
	struct dvx_qp_cfg qa;
	int err;

	memset(&cqa, 0, sizeof(cqa));
	cqa.depth = depth;
	cqa.ring_umem = &n->umem;
	cqa.ring_offset = o;
	cqa.dbr_umem = &n->umem;
	cqa.dbr_offset = dbr;
	err = dvx_cq_create(nic, &cqa, &n->fcq);
	if (err)
		return err;
	o += align_up(DVX_CQ_RING_BYTES(depth), MSG_RING_ALIGN);
	memset(&qa, 0, sizeof(qa));
	qa.sq_depth = depth;
	qa.send_cq = &n->fcq;
	qa.wq_umem = &n->umem;
	qa.wq_offset = o;
	qa.dbr_umem = &n->umem;
	qa.dbr_offset = dbr + 8;
	qa.sq_wr_ids = n->f_wr_ids;
	qa.psn = 0x4d0u + i;
	err = dvx_qp_create(nic, &qa, &n->fqp);
	if (err)
		return err;
	o += align_up(DVX_QP_WQ_BYTES(depth, 0, DVX_RQ_STRIDE(1)), MSG_RING_ALIGN);
	ca.access = DVX_ACCESS_REMOTE_READ;
	if (nic->features & DVX_NIC_FEAT_LOOPBACK)
		return dvx_qp_connect_loopback(&n->fqp, &ca);
	/* no force-loopback: a local partner answers the READs */
	cqa.depth = MSG_PARTNER_DEPTH;
	cqa.ring_offset = o;
	cqa.dbr_offset = dbr + 16;
	err = dvx_cq_create(nic, &cqa, &n->pcq);
	if (err)
		return err;
	o += align_up(DVX_CQ_RING_BYTES(MSG_PARTNER_DEPTH), MSG_RING_ALIGN);
	qa.sq_depth = MSG_PARTNER_DEPTH;
	qa.send_cq = &n->pcq;
	qa.wq_offset = o;
	qa.dbr_offset = dbr + 24;
	qa.sq_wr_ids = NULL;
	qa.psn = 0x4e0u + i;
	err = dvx_qp_create(nic, &qa, &n->pqp);
	if (err)
		return err;
	return dvx_qp_connect_pair(&n->fqp, &n->pqp, &ca);
}

static int destroy_first(int *first, int err)
{
	if (err && !*first)
		*first = err;
	return err;
}

/* everything a context holds, in reverse order of making; the first error */
static int teardown(struct dvx_msg_state *st)
{
	uint32_t i, n = st->nshared + st->nprivate;
	int first = 0;

	dvx_msg_hs_abort_all(st);
	for (i = 0; i < st->cfg.max_comms; i++)
		if (st->comms[i].kind != MSG_K_FREE)
			dvx_msg_comm_free(st, &st->comms[i]);
	for (i = 0; i < n; i++)
		if (st->sets[i].state != MSG_SET_FREE)
			destroy_first(&first, dvx_msg_set_release(st, i));
	for (i = st->cfg.nnics; i-- > 0;) {
		struct msg_nic *x = &st->nic[i];

		if (x->pqp.live)
			destroy_first(&first, dvx_qp_destroy(&x->pqp));
		if (x->fqp.live)
			destroy_first(&first, dvx_qp_destroy(&x->fqp));
		if (x->pcq.live)
			destroy_first(&first, dvx_cq_destroy(&x->pcq));
		if (x->fcq.live)
			destroy_first(&first, dvx_cq_destroy(&x->fcq));
		if (x->stage_mr.live)
			destroy_first(&first, dvx_mr_dereg(&x->stage_mr));
		if (x->fifo_mr.live)
			destroy_first(&first, dvx_mr_dereg(&x->fifo_mr));
		if (x->umem.live)
			destroy_first(&first, dvx_umem_dereg(&x->umem));
	}
	if (st->lfd >= 0) {
		dvx_hal_sock_close(st->hal, st->lfd);
		if (st->addr.family == DVX_HAL_SOCK_UNIX)
			dvx_hal_sock_unlink(st->hal, &st->addr);
		st->lfd = -1;
	}
	return first;
}

static int init_fail(struct dvx_msg *m, struct dvx_msg_state *st, int err)
{
	struct dvx_diag keep[DVX_MSG_MAX_NICS];
	uint32_t i, n = st->cfg.nnics;

	/* the unwind's successful destroys clear each NIC's diagnostic: the caller is owed
	 * the failure's own record */
	for (i = 0; i < n; i++)
		keep[i] = st->cfg.nics[i]->hal.diag;
	teardown(st);
	for (i = 0; i < n; i++)
		st->cfg.nics[i]->hal.diag = keep[i];
	st->magic = 0;
	memset(m, 0, sizeof(*m));
	return err;
}

static int listen_open(struct dvx_msg_state *st)
{
	struct dvx_hal_sock_addr a = st->cfg.listen_addr;
	int err;

	if (a.family == DVX_HAL_SOCK_NONE) {
		memset(&a, 0, sizeof(a));
		a.family = DVX_HAL_SOCK_IP4;
		a.ip[0] = 127;
		a.ip[3] = 1;
	}
	err = dvx_hal_sock_listen(st->hal, &a, 64, &st->lfd);
	if (err)
		return err;
	st->addr = a;
	if (a.family == DVX_HAL_SOCK_IP4 || a.family == DVX_HAL_SOCK_IP6) {
		struct dvx_hal_sock_addr got;

		/* the port the system picked */
		err = dvx_hal_sock_name(st->hal, st->lfd, &got);
		if (err)
			return err;
		st->addr.port = got.port;
	}
	return 0;
}

int dvx_msg_init(struct dvx_msg *m, const struct dvx_msg_cfg *cfg, void *state,
		 uint64_t state_len, void *fifo, uint64_t fifo_len, void *rings,
		 uint64_t rings_len)
{
	struct dvx_msg_state *st = state;
	struct dvx_msg_cfg c;
	struct msg_layout l;
	uint8_t *s8 = state;
	uint64_t wo;
	uint32_t i, nsets;
	int err;

	if (!m)
		return -EINVAL;
	if (m->live == DVX_LIVE)
		return -EBUSY;
	err = cfg_norm(cfg, &c, "dvx_msg_init");
	if (err)
		return err;
	layout(&c, &l);
	if (!state || state_len < l.state_bytes || ((uintptr_t)state & 63))
		return cfg_bad(cfg, "dvx_msg_init",
			       "state region: NULL, under %llu bytes or not 64-byte aligned",
			       (unsigned long long)l.state_bytes);
	if (!fifo || fifo_len < l.fifo_bytes || ((uintptr_t)fifo & (MSG_RING_ALIGN - 1)))
		return cfg_bad(cfg, "dvx_msg_init",
			       "fifo region: NULL, under %llu bytes or not 4096-byte aligned",
			       (unsigned long long)l.fifo_bytes);
	if (!rings || rings_len < l.rings_bytes || ((uintptr_t)rings & (MSG_RING_ALIGN - 1)))
		return cfg_bad(cfg, "dvx_msg_init",
			       "rings region: NULL, under %llu bytes or not 4096-byte aligned",
			       (unsigned long long)l.rings_bytes);
	memset(state, 0, l.state_bytes);
	memset(fifo, 0, l.fifo_bytes);
	memset(rings, 0, l.rings_bytes);
	st->magic = MSG_ST_MAGIC;
	st->m = m;
	st->cfg = c;
	st->hal = c.hal ? c.hal : dvx_hal_host();
	st->lfd = -1;
	st->comms = (struct dvx_msg_comm *)(void *)(s8 + l.o_comms);
	st->gens = s8 + l.o_gens;
	st->epochs = (uint16_t *)(void *)(s8 + l.o_epochs);
	st->sets = (struct msg_set *)(void *)(s8 + l.o_sets);
	st->pool = (struct msg_pool_ent *)(void *)(s8 + l.o_pool);
	st->hs = (struct msg_hs *)(void *)(s8 + l.o_hs);
	st->peers = (struct msg_peer *)(void *)(s8 + l.o_peers);
	st->reqs = s8 + l.o_reqs;
	st->req_stride = l.req_stride;
	st->fifo = fifo;
	st->fifo_stride = l.fifo_stride;
	st->stage_off = l.stage_off;
	st->flush_off = l.flush_off;
	st->ring_off = l.ring_off;
	st->estage_off = l.estage_off;
	st->ring_stride = l.ring_stride;
	st->fifo_len = l.fifo_bytes;
	st->rings = rings;
	st->rings_len = l.rings_bytes;
	st->shared_stride = l.shared_stride;
	st->private_stride = l.private_stride;
	st->flush_stride = l.flush_stride;
	st->sets_off = l.sets_off;
	st->nshared = c.max_shared_sets;
	st->nprivate = c.max_private_sets;
	st->npool = c.max_shared_sets * c.nqps;
	st->priv_sq = l.priv_sq;
	st->priv_rq = l.priv_rq;
	st->priv_cq = l.priv_cq;
	st->shr_sq = l.shr_sq;
	st->shr_rq = l.shr_rq;
	st->shr_cq = l.shr_cq;
	for (i = 0; i < c.max_pending; i++) {
		st->hs[i].fd = -1;
		st->hs[i].comm = -1;
		st->hs[i].set = -1;
	}
	/* the sets' wr_id arrays and ring slots */
	nsets = c.max_shared_sets + c.max_private_sets;
	wo = l.o_wrids;
	for (i = 0; i < nsets; i++) {
		struct msg_set *x = &st->sets[i];
		int sh = i < c.max_shared_sets;

		x->wr_ids = (uint64_t *)(void *)(s8 + wo);
		wo += (sh ? l.wr_shared : l.wr_private) * 8;
		x->ring_off = sh ? l.sets_off + (uint64_t)i * l.shared_stride :
				   l.sets_off + (uint64_t)c.max_shared_sets * l.shared_stride +
					   (uint64_t)(i - c.max_shared_sets) * l.private_stride;
		x->shared = (uint8_t)sh;
		x->sq_depth = sh ? l.shr_sq : l.priv_sq;
		x->rq_depth = sh ? l.shr_rq : l.priv_rq;
		x->cq_depth = sh ? l.shr_cq : l.priv_cq;
	}
	m->st = st;
	err = dvx_msg_random64(st, &st->ctx_id);
	if (err)
		return init_fail(m, st, err);
	for (i = 0; i < c.nnics; i++) {
		struct msg_nic *n = &st->nic[i];
		struct dvx_umem_cfg ua;
		struct dvx_mr_cfg ma;

		n->log_max_msg = c.nics[i]->caps.log_max_msg ? c.nics[i]->caps.log_max_msg : 30;
		memset(&ua, 0, sizeof(ua));
		ua.addr = rings;
		ua.len = l.rings_bytes;
		ua.access = DVX_ACCESS_LOCAL_WRITE;
		err = dvx_umem_reg(c.nics[i], &ua, &n->umem);
		if (err)
			return init_fail(m, st, err);
		if (n->umem.ring_align > MSG_RING_ALIGN)
			return init_fail(m, st, -EINVAL);
		/* peers write clear-to-send entries into the FIFOs: remote write, nothing
		 * else; the staging and flush targets after them are this NIC's alone */
		memset(&ma, 0, sizeof(ma));
		ma.addr = fifo;
		ma.len = l.stage_off;
		ma.access = DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_WRITE;
		err = dvx_mr_reg(c.nics[i], &ma, &n->fifo_mr);
		if (err)
			return init_fail(m, st, err);
		ma.addr = (uint8_t *)fifo + l.stage_off;
		ma.len = l.fifo_bytes - l.stage_off;
		ma.access = DVX_ACCESS_LOCAL_WRITE;
		err = dvx_mr_reg(c.nics[i], &ma, &n->stage_mr);
		if (err)
			return init_fail(m, st, err);
		if (c.flags & DVX_MSG_F_FLUSH) {
			n->f_wr_ids = (uint64_t *)(void *)(s8 + l.o_fwr) + (uint64_t)i * l.f_depth;
			n->freqs = (struct msg_rreq *)(void *)(s8 + l.o_freq) +
				   (uint64_t)i * c.max_reqs;
			err = flush_make(st, i, l.f_depth);
			if (err)
				return init_fail(m, st, err);
		}
	}
	err = listen_open(st);
	if (err)
		return init_fail(m, st, err);
	m->live = DVX_LIVE;
	return 0;
}

int dvx_msg_fini(struct dvx_msg *m)
{
	struct dvx_msg_state *st;
	int err;

	if (!m || m->live != DVX_LIVE || !m->st || m->st->magic != MSG_ST_MAGIC)
		return -EINVAL;
	st = m->st;
	err = teardown(st);
	st->magic = 0;
	memset(m, 0, sizeof(*m));
	return err;
}

/* ------------------------------------------------------------------------------
 * MRs
 */
int dvx_msg_reg_mr(struct dvx_msg *m, uint32_t nic, const struct dvx_mr_cfg *attr,
		   struct dvx_mr *mr)
{
	struct dvx_msg_state *st;
	struct dvx_mr_cfg a;

	if (!m || m->live != DVX_LIVE || !attr || !mr)
		return -EINVAL;
	st = m->st;
	if (nic >= st->cfg.nnics)
		return cfg_bad(&st->cfg, "dvx_msg_reg_mr", "nic %u: the context has %u", nic,
			       st->cfg.nnics);
	a = *attr;
	a.access = DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_WRITE;
	if (st->cfg.flags & DVX_MSG_F_FLUSH)
		a.access |= DVX_ACCESS_REMOTE_READ;
	a.flags &= ~(uint32_t)DVX_MR_IOVA_ZERO;	/* CTS entries carry addresses */
	return dvx_mr_reg(st->cfg.nics[nic], &a, mr);
}

int dvx_msg_dereg_mr(struct dvx_msg *m, struct dvx_mr *mr)
{
	if (!m || m->live != DVX_LIVE || !mr)
		return -EINVAL;
	return dvx_mr_dereg(mr);
}

/* ------------------------------------------------------------------------------
 * Statistics, the invariant checker
 */
void dvx_msg_stats_of(const struct dvx_msg_state *st, struct dvx_msg_stats *s)
{
	uint32_t i, q, nsets = st->nshared + st->nprivate;

	*s = st->cnt;
	s->comms = s->closing = s->pending = s->sets = s->shared_sets = s->qps = s->cqs = 0;
	s->pool_entries = 0;
	s->ring_bytes = 0;
	s->ring_region = st->rings_len;
	for (i = 0; i < st->cfg.max_comms; i++) {
		s->comms += st->comms[i].kind != MSG_K_FREE;
		s->closing += st->comms[i].kind != MSG_K_FREE &&
			      st->comms[i].state == MSG_CS_CLOSING;
	}
	for (i = 0; i < st->cfg.max_pending; i++)
		s->pending += st->hs[i].state != MSG_HS_FREE;
	for (i = 0; i < nsets; i++) {
		const struct msg_set *x = &st->sets[i];

		if (x->state == MSG_SET_FREE)
			continue;
		s->sets++;
		s->shared_sets += x->shared;
		s->cqs += x->cq.live == DVX_LIVE;
		for (q = 0; q < DVX_MSG_MAX_QPS; q++)
			s->qps += x->qp[q].live == DVX_LIVE;
		s->ring_bytes += x->shared ? st->shared_stride : st->private_stride;
	}
	for (i = 0; i < st->cfg.nnics; i++) {
		s->qps += (st->nic[i].fqp.live == DVX_LIVE) + (st->nic[i].pqp.live == DVX_LIVE);
		s->cqs += (st->nic[i].fcq.live == DVX_LIVE) + (st->nic[i].pcq.live == DVX_LIVE);
	}
	for (i = 0; i < st->npool; i++)
		s->pool_entries += st->pool[i].used;
}

void dvx_msg_get_stats(const struct dvx_msg *m, struct dvx_msg_stats *s)
{
	if (!s)
		return;
	memset(s, 0, sizeof(*s));
	if (!m || m->live != DVX_LIVE || !m->st)
		return;
	dvx_msg_stats_of(m->st, s);
}

int dvx_msg_comm_qp_stats(const struct dvx_msg_comm *comm, uint32_t slot,
			  struct dvx_msg_qp_stats *out)
{
	const struct msg_set *x;
	const struct dvx_qp *qp;
	uint32_t q;

	if (!comm || !out || comm->magic != MSG_COMM_MAGIC || !comm->st ||
	    (comm->kind != MSG_K_SEND && comm->kind != MSG_K_RECV))
		return -EINVAL;
	if (slot >= comm->nqps || !comm->mapped)
		return -ENOENT;
	x = &comm->st->sets[comm->set];
	q = comm->map[slot];
	qp = &x->qp[q];
	if (qp->live != DVX_LIVE)
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	out->qpn = qp->qpn;
	out->nic = x->nic;
	out->shared = x->shared;
	out->dir = x->dir;
	out->failed = (x->failed_mask >> q) & 1u;
	out->comms = x->qp_refs[q];
	out->sq_posted = qp->sqc.resv;
	out->sq_done = qp->sqc.ci;
	out->rq_posted = qp->rq.pi;
	out->rq_done = qp->rq.ci;
	out->cqes = x->cqes[q];
	out->errors = x->cqe_errs[q];
	return 0;
}

int dvx_msg_comm_info(const struct dvx_msg_comm *comm, int *shared, uint32_t *nqps,
		      uint32_t *id)
{
	if (!comm || comm->magic != MSG_COMM_MAGIC ||
	    (comm->kind != MSG_K_SEND && comm->kind != MSG_K_RECV))
		return -EINVAL;
	if (shared)
		*shared = comm->shared;
	if (nqps)
		*nqps = comm->nqps;
	if (id)
		*id = comm->id;
	return 0;
}

#define CHECK(cond, msg)             \
	do {                         \
		if (!(cond)) {       \
			if (why)     \
				*why = msg; \
			return -EUCLEAN; \
		}                    \
	} while (0)

int dvx_msg_check(const struct dvx_msg *m, const char **why)
{
	const struct dvx_msg_state *st;
	uint32_t i, j, q, nsets;
	uint32_t refs[DVX_MSG_MAX_QPS];

	if (why)
		*why = "";
	if (!m || m->live != DVX_LIVE || !m->st || m->st->magic != MSG_ST_MAGIC)
		return -EINVAL;
	st = m->st;
	nsets = st->nshared + st->nprivate;
	/* communicators: ids route to themselves, their QPs are live and their set's */
	for (i = 0; i < st->cfg.max_comms; i++) {
		const struct dvx_msg_comm *c = &st->comms[i];
		const struct msg_set *x;

		if (c->kind == MSG_K_FREE)
			continue;
		CHECK(c->magic == MSG_COMM_MAGIC, "a communicator slot without its magic");
		CHECK(MSG_ID_SLOT(c->id) == i, "a communicator id that names another slot");
		CHECK(MSG_ID_GEN(c->id) == st->gens[i] && MSG_ID_GEN(c->id) != 0,
		      "a communicator id whose generation is not its slot's");
		if (c->kind == MSG_K_LISTEN || !c->mapped) {
			CHECK(c->state != MSG_CS_LIVE || c->kind == MSG_K_LISTEN,
			      "a live communicator without QPs");
			continue;
		}
		CHECK(c->set < nsets, "a connected communicator without a set");
		x = &st->sets[c->set];
		CHECK(x->state == MSG_SET_LIVE, "a communicator on a set that is not live");
		CHECK(x->shared == c->shared, "a communicator whose sharing is not its set's");
		CHECK(x->dir == (c->kind == MSG_K_SEND ? MSG_DIR_SEND : MSG_DIR_RECV),
		      "a communicator on a set of the other direction");
		CHECK(x->peer_ctx == c->peer_ctx && x->nic == c->nic && x->peer_nic == c->peer_nic,
		      "a communicator on a set of another peer or NIC");
		CHECK(!x->shared || x->group == c->group,
		      "a communicator on a shared set of another group");
		CHECK(c->nqps >= 1 && c->nqps <= DVX_MSG_MAX_QPS, "a communicator without QPs");
		for (j = 0; j < c->nqps; j++) {
			CHECK(c->map[j] < x->nqps, "a QP slot mapped outside its set");
			CHECK(x->live_mask & (1u << c->map[j]), "a QP slot mapped to a destroyed QP");
			CHECK(x->qp[c->map[j]].live == DVX_LIVE,
			      "a QP slot mapped to a QP that is not live");
		}
		CHECK((c->state != MSG_CS_LIVE && c->state != MSG_CS_PARKED) ||
			      dvx_msg_comm_by_id((struct dvx_msg_state *)st, c->id) == c,
		      "a communicator id that does not route to its communicator");
	}
	/* sets: refcounts equal users, CQ refs the live QPs */
	for (i = 0; i < nsets; i++) {
		const struct msg_set *x = &st->sets[i];
		uint32_t live = 0, users = 0;

		if (x->state != MSG_SET_LIVE)
			continue;

		memset(refs, 0, sizeof(refs));
		for (j = 0; j < st->cfg.max_comms; j++) {
			const struct dvx_msg_comm *c = &st->comms[j];

			if ((c->kind != MSG_K_SEND && c->kind != MSG_K_RECV) || !c->mapped ||
			    c->set != i)
				continue;
			users++;
			for (q = 0; q < c->nqps; q++)
				refs[c->map[q]]++;
		}
		CHECK(x->shared || users <= 1, "a private set with more than one communicator");
		for (q = 0; q < DVX_MSG_MAX_QPS; q++) {
			int alive = (x->live_mask >> q) & 1u;

			CHECK(x->qp_refs[q] == refs[q], "a QP refcount that is not its users");
			CHECK(alive == (x->qp[q].live == DVX_LIVE),
			      "a set's live mask that disagrees with its QPs");
			CHECK(!alive || q < x->nqps, "a live QP beyond the set's count");
			CHECK(!alive || x->qp_refs[q] > 0, "a live QP nobody references");
			CHECK(alive || !x->qp_refs[q], "a destroyed QP still referenced");
			live += (uint32_t)alive;
		}
		/* every posted receive is one a comm (live or closing) still expects */
		for (q = 0; q < x->nqps && x->dir == MSG_DIR_RECV; q++) {
			uint32_t want = 0;

			if (!(x->live_mask & (1u << q)) || (x->failed_mask & (1u << q)))
				continue;
			for (j = 0; j < st->cfg.max_comms; j++) {
				const struct dvx_msg_comm *c = &st->comms[j];

				if (c->kind == MSG_K_RECV && c->mapped && c->set == i)
					want += c->rx_out[q] + (c->map[0] == q ? c->cr_out : 0);
			}
			CHECK(x->qp[q].rq.pi - x->qp[q].rq.ci == want + x->orphans[q],
			      "posted receives that are not the messages the comms expect");
		}
		CHECK(x->cq_refs == live, "a CQ refcount that is not its live QPs");
		CHECK(live > 0, "a live set without a live QP");
		CHECK(x->cq.live == DVX_LIVE, "a CQ destroyed while its QPs reference it");
		CHECK(x->cq.users == live, "a CQ whose bound QPs are not the set's live QPs");
	}
	/* the pool: one entry per live shared QP, keys unique */
	for (i = 0; i < st->npool; i++) {
		const struct msg_pool_ent *e = &st->pool[i];
		const struct msg_set *x;

		if (!e->used)
			continue;
		CHECK(e->set < st->nshared, "a pool entry for a set outside the pool");
		x = &st->sets[e->set];
		/* a set still being made (its handshake runs) holds entries for the QPs it
		 * will have: a reservation, so that nobody joins it or makes another */
		CHECK(x->state != MSG_SET_FREE &&
			      (x->state == MSG_SET_PENDING ? e->slot < x->nqps :
							     !!(x->live_mask & (1u << e->slot))),
		      "a pool entry for a QP that is not live");
		CHECK(x->nic == e->nic && x->peer_ctx == e->peer_ctx && x->peer_nic == e->peer_nic &&
			      x->dir == e->dir && x->group == e->group,
		      "a pool entry whose key is not its set's");
		for (j = i + 1; j < st->npool; j++) {
			const struct msg_pool_ent *f = &st->pool[j];

			CHECK(!f->used || f->nic != e->nic || f->peer_ctx != e->peer_ctx ||
				      f->peer_nic != e->peer_nic || f->dir != e->dir ||
				      f->group != e->group || f->slot != e->slot,
			      "two pool entries with the same key");
		}
	}
	for (i = 0; i < st->nshared; i++) {
		const struct msg_set *x = &st->sets[i];
		uint32_t n = 0;

		if (x->state == MSG_SET_FREE)
			continue;
		for (j = 0; j < st->npool; j++)
			n += st->pool[j].used && st->pool[j].set == i;
		CHECK(n == (x->state == MSG_SET_PENDING ? x->nqps :
							   (uint32_t)__builtin_popcount(x->live_mask)),
		      "a shared set whose pool entries are not its live QPs");
	}
	return 0;
}

/* ------------------------------------------------------------------------------
 * Progress and close: the order of the layer's turns
 */
int dvx_msg_progress(struct dvx_msg *m)
{
	struct dvx_msg_state *st;
	uint32_t i;

	if (!m || m->live != DVX_LIVE || !m->st)
		return -EINVAL;
	st = m->st;
	for (i = 0; i < st->cfg.nnics; i++)
		dvx_hal_nic_progress(&st->cfg.nics[i]->hal);
	dvx_msg_hs_run(st);
	for (i = 0; i < st->nshared + st->nprivate; i++)
		if (st->sets[i].state == MSG_SET_LIVE)
			dvx_msg_poll_set(st, i, MSG_POLL_BUDGET);
	if (st->cfg.flags & DVX_MSG_F_FLUSH)
		for (i = 0; i < st->cfg.nnics; i++)
			dvx_msg_poll_flush(st, i, MSG_POLL_BUDGET);
	/* offload: rendezvous answers to act on, credits and matches left for later */
	if (st->cfg.flags & DVX_MSG_F_CTS_OFFLOAD)
		for (i = 0; i < st->cfg.max_comms; i++)
			if (st->comms[i].offload && st->comms[i].state == MSG_CS_LIVE &&
			    (st->comms[i].rts_n || st->comms[i].todo))
				dvx_msg_offload_kick(st, &st->comms[i]);
	return 0;
}

int dvx_msg_close(struct dvx_msg_comm *c)
{
	if (!c || c->magic != MSG_COMM_MAGIC || !c->st || c->st->magic != MSG_ST_MAGIC ||
	    c->state != MSG_CS_LIVE)
		return -EINVAL;
	if (c->kind == MSG_K_LISTEN)
		return dvx_msg_hs_close_listen(c->st, c);
	if (c->kind != MSG_K_SEND && c->kind != MSG_K_RECV)
		return -EINVAL;
	return dvx_msg_close_conn(c->st, c);
}
