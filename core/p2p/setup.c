// SPDX-License-Identifier: MIT
/*
 * core/p2p/setup.c - setting up and tearing down the P2P transport: per peer, lanes of
 * main RC QPs with core-direct companions and their loopback partners, one iova-0
 * sink per NIC, connection info exchanged over the bootstrap (docs/p2p.md).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <dvx/byteorder.h>
#include <dvx/p2p/setup.h>

#include "../nic/priv.h"

#define RING_ALIGN 4096u
#define DBR_BYTES 64u		/* one doorbell record per cache line */
#define PARTNER_DEPTH 64u	/* the loopback partner never posts */

/* the objects of one lane */
/*
 * What a QP of a lane lets its peer do (least privilege, docs/security.md): main QPs
 * take puts and signal fetch-adds, companions and partners only the loopback
 * fetch-add of a counter; main QPs are read remotely (gets) only when the transport
 * was configured for it (DVX_P2P_F_READ).
 */
#define MAIN_ACCESS (DVX_ACCESS_REMOTE_WRITE | DVX_ACCESS_REMOTE_ATOMIC)
#define COMP_ACCESS DVX_ACCESS_REMOTE_ATOMIC

struct lane_objs {
	struct dvx_cq main_cq;
	struct dvx_qp main_qp;
	struct dvx_cq comp_cq;
	struct dvx_qp comp_qp;
	struct dvx_cq part_cq;
	struct dvx_qp part_qp;
	uint32_t rec_att;	/* dvx_p2p_lane_recover() attempts on this lane */
	uint32_t rsvd;
};

/* per NIC */
struct nic_objs {
	struct dvx_umem umem;
	struct dvx_mr sink;
	uint8_t *base;		/* its slice of the ring region */
	uint64_t len;
	uint64_t off;		/* carving cursor of the rings */
	uint64_t dbr_off;	/* ... and of the doorbell records, after the rings */
	uint32_t partner;	/* 1: companions use a local partner QP (no force-loopback) */
	uint32_t rsvd;
};

struct dvx_p2p_setup {
	struct dvx_p2p_cfg cfg;
	struct nic_objs nic[DVX_P2P_MAX_NICS];
	struct lane_objs *objs;		/* npeers * nlanes */
	struct dvx_qp_conn *conn_in;	/* nranks * nlanes */
	struct dvx_qp_conn *conn_out;	/* nranks * nranks * nlanes */
	struct dvx_bootstrap bs;	/* private duplicate of cfg.bs (recovery handshakes) */
	uint32_t bs_live;
	uint32_t rec_busy;		/* a dvx_p2p_lane_recover() is running */
};

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static uint32_t nlanes_of(const struct dvx_p2p_cfg *c)
{
	return c->nnics * c->qps_per_nic;
}

/* ranks with lanes: every other one, or the list */
static uint32_t npeers_of(const struct dvx_p2p_cfg *c)
{
	return c->peers ? c->npeers : (uint32_t)c->nranks - 1;
}

/* a refused configuration: its cause in the first NIC's diagnostic, when there is one */
static int __attribute__((format(printf, 3, 4)))
cfg_bad(const struct dvx_p2p_cfg *c, const char *op, const char *fmt, ...)
{
	char why[sizeof(((struct dvx_diag *)0)->msg)];
	va_list ap;

	if (!c || !c->nnics || c->nnics > DVX_P2P_MAX_NICS || !c->nics[0])
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return dvx_core_fail(c->nics[0], -EINVAL, DVX_DIAG_ARG, op, "%s", why);
}

static int cfg_check(const struct dvx_p2p_cfg *c, const char *op)
{
	uint32_t i;

	if (!c || c->nnics == 0 || c->nnics > DVX_P2P_MAX_NICS)
		return -EINVAL;	/* no NIC to keep the record */
	for (i = 0; i < c->nnics; i++)
		if (!c->nics[i])
			return cfg_bad(c, op, "nics[%u] is NULL", i);
	if (c->nranks < 2 || c->nranks > 4096 || c->rank < 0 || c->rank >= c->nranks)
		return cfg_bad(c, op, "rank %d of nranks %d: 2 ... 4096 ranks", c->rank, c->nranks);
	if (c->qps_per_nic == 0 || c->qps_per_nic > 256)
		return cfg_bad(c, op, "qps_per_nic %u outside 1 ... 256", c->qps_per_nic);
	if (!DVX_IS_POW2(c->sq_depth) || c->sq_depth > 32768)
		return cfg_bad(c, op, "sq_depth %u is not a power of two up to 32768", c->sq_depth);
	if (c->comp_depth && (!DVX_IS_POW2(c->comp_depth) || c->comp_depth < 2 ||
			      c->comp_depth > 32768))
		return cfg_bad(c, op, "comp_depth %u: 0, or a power of two from 2 to 32768",
			       c->comp_depth);
	if (c->peers) {
		if (c->npeers > (uint32_t)c->nranks - 1)
			return cfg_bad(c, op, "npeers %u above nranks - 1", c->npeers);
		for (i = 0; i < c->npeers; i++)
			if (c->peers[i] < 0 || c->peers[i] >= c->nranks || c->peers[i] == c->rank ||
			    (i && c->peers[i] <= c->peers[i - 1]))
				return cfg_bad(c, op, "peers[%u] = %d: other ranks, ascending", i,
					       c->peers[i]);
	}
	return 0;
}

/* bytes of the rings in one NIC's slice (the doorbell records follow them) */
static uint64_t nic_rings_only(const struct dvx_p2p_cfg *c);

/* bytes of one NIC's slice of the ring region */
static uint64_t nic_ring_bytes(const struct dvx_p2p_cfg *c)
{
	uint64_t lanes = (uint64_t)npeers_of(c) * c->qps_per_nic;

	/* doorbell records: up to 6 per lane, one cache line each; then the sink */
	return nic_rings_only(c) + align_up(lanes * 6 * DBR_BYTES + 64, RING_ALIGN);
}

static uint64_t nic_rings_only(const struct dvx_p2p_cfg *c)
{
	uint64_t lanes = (uint64_t)npeers_of(c) * c->qps_per_nic, per = 0;
	uint64_t cq = 64, wq = 64;

	/* main CQ + main SQ */
	per += align_up((uint64_t)c->sq_depth * cq, RING_ALIGN);
	per += align_up((uint64_t)c->sq_depth * wq, RING_ALIGN);
	if (c->comp_depth) {
		per += align_up((uint64_t)c->comp_depth * cq, RING_ALIGN);
		per += align_up((uint64_t)c->comp_depth * wq, RING_ALIGN);
		/* a partner may be needed (no force-loopback): room for it always */
		per += align_up((uint64_t)PARTNER_DEPTH * cq, RING_ALIGN);
		per += align_up((uint64_t)PARTNER_DEPTH * wq, RING_ALIGN);
	}
	return lanes * per;
}

int dvx_p2p_mem_req(const struct dvx_p2p_cfg *cfg, struct dvx_mem_req *state,
		    struct dvx_mem_req *rings)
{
	uint64_t npeers, nl, s;
	int err = cfg_check(cfg, "dvx_p2p_mem_req");

	if (err)
		return err;
	if (!state || !rings)
		return cfg_bad(cfg, "dvx_p2p_mem_req", "state or rings is NULL");
	npeers = npeers_of(cfg);
	nl = nlanes_of(cfg);
	s = align_up(sizeof(struct dvx_p2p_setup), 64);
	s += align_up((uint64_t)cfg->nranks * sizeof(int32_t), 64);	/* peer_idx */
	s += align_up(npeers * sizeof(int32_t) + 4, 64);		/* peer_rank */
	s += align_up(npeers * nl * sizeof(struct dvx_p2p_lane), 64);
	s += align_up(npeers * nl * sizeof(struct lane_objs), 64);
	s += align_up((uint64_t)cfg->nranks * nl * sizeof(struct dvx_qp_conn), 64);
	s += align_up((uint64_t)cfg->nranks * cfg->nranks * nl * sizeof(struct dvx_qp_conn), 64);
	state->bytes = s;
	state->align = 64;
	rings->bytes = (uint64_t)cfg->nnics * align_up(nic_ring_bytes(cfg), RING_ALIGN);
	rings->align = RING_ALIGN;
	return 0;
}

static void *carve_state(uint8_t **cur, uint64_t bytes)
{
	void *p = *cur;

	*cur += align_up(bytes, 64);
	return p;
}

static uint64_t carve(struct nic_objs *n, uint64_t bytes, uint64_t align)
{
	uint64_t o = align_up(n->off, align);

	n->off = o + bytes;
	return o;
}

static uint64_t carve_dbr(struct nic_objs *n)
{
	uint64_t o = n->dbr_off;

	n->dbr_off += DBR_BYTES;
	return o;
}

static int carved_ok(const struct nic_objs *n, const struct dvx_p2p_cfg *c)
{
	return n->off <= nic_rings_only(c) && n->dbr_off + 64 <= n->len;
}

static int q_from(struct dvx_p2p_q *q, struct dvx_qp *qp, struct dvx_cq *cq)
{
	struct dvx_p2p_q_cfg d;

	memset(&d, 0, sizeof(d));
	d.sq_buf = qp->sq.wq.buf;
	d.nwqebb = qp->sq.nwqebb;
	d.qpn = qp->qpn;
	d.dbrec = qp->dbrec;
	d.uar_reg = qp->uar_reg;
	d.cq_buf = cq->ring;
	d.cq_log_size = cq->mcq.log_size;
	d.cqn = cq->cqn;
	d.cq_dbrec = cq->dbrec;
	d.cq_ci = cq->mcq.ci;
	d.max_inline = qp->max_inline;
	d.nic = &qp->nic->hal;
	return dvx_p2p_q_init(q, &d);
}

static int make_cq(const struct dvx_p2p_cfg *c, struct dvx_nic *nic, struct nic_objs *n,
		   uint32_t depth, struct dvx_cq *cq)
{
	struct dvx_cq_cfg a;

	memset(&a, 0, sizeof(a));
	a.depth = depth;
	a.ring_umem = &n->umem;
	a.ring_offset = carve(n, (uint64_t)depth * 64, RING_ALIGN);
	a.dbr_umem = &n->umem;
	a.dbr_offset = carve_dbr(n);
	if (!carved_ok(n, c))
		return -ENOSPC;
	return dvx_cq_create(nic, &a, cq);
}

static int make_qp(const struct dvx_p2p_cfg *c, struct dvx_nic *nic, struct nic_objs *n,
		   uint32_t depth, uint32_t inl,
		   struct dvx_cq *cq, struct dvx_uar *uar, uint32_t flags, uint32_t psn,
		   struct dvx_qp *qp)
{
	struct dvx_qp_cfg a;

	memset(&a, 0, sizeof(a));
	a.sq_depth = depth;
	a.max_inline = inl;
	a.send_cq = cq;
	a.uar = uar;
	a.flags = flags;
	a.psn = psn;
	a.wq_umem = &n->umem;
	a.wq_offset = carve(n, (uint64_t)depth * 64, RING_ALIGN);
	a.dbr_umem = &n->umem;
	a.dbr_offset = carve_dbr(n);
	if (!carved_ok(n, c))
		return -ENOSPC;
	return dvx_qp_create(nic, &a, qp);
}

static void lane_destroy(struct lane_objs *o)
{
	if (o->part_qp.live)
		dvx_qp_destroy(&o->part_qp);
	if (o->comp_qp.live)
		dvx_qp_destroy(&o->comp_qp);
	if (o->main_qp.live)
		dvx_qp_destroy(&o->main_qp);
	if (o->part_cq.live)
		dvx_cq_destroy(&o->part_cq);
	if (o->comp_cq.live)
		dvx_cq_destroy(&o->comp_cq);
	if (o->main_cq.live)
		dvx_cq_destroy(&o->main_cq);
}

static void teardown(struct dvx_p2p *t)
{
	struct dvx_p2p_setup *s = t->setup;
	uint32_t i, nl;

	if (!s)
		return;
	nl = nlanes_of(&s->cfg);
	for (i = t->npeers * nl; i-- > 0;)
		lane_destroy(&s->objs[i]);
	for (i = s->cfg.nnics; i-- > 0;) {
		if (s->nic[i].sink.live)
			dvx_mr_dereg(&s->nic[i].sink);
		if (s->nic[i].umem.live)
			dvx_umem_dereg(&s->nic[i].umem);
	}
	if (s->bs_live) {
		dvx_bootstrap_fini(&s->bs);
		s->bs_live = 0;
	}
}

static uint32_t lane_psn(int me, int peer, uint32_t lane)
{
	/* any 24-bit value works; distinct per connection helps reading traces */
	return ((uint32_t)me * 7919u + (uint32_t)peer * 104729u + lane * 31u) & 0xffffffu;
}

static int setup_lane(struct dvx_p2p *t, struct dvx_p2p_setup *s, uint32_t pidx, uint32_t l)
{
	const struct dvx_p2p_cfg *c = &s->cfg;
	uint32_t k = l / c->qps_per_nic;
	struct dvx_nic *nic = c->nics[k];
	struct nic_objs *n = &s->nic[k];
	struct lane_objs *o = &s->objs[pidx * t->nlanes + l];
	int peer = t->peer_rank[pidx];
	struct dvx_qp_connect_cfg ca;
	int err;

	err = make_cq(c, nic, n, c->sq_depth, &o->main_cq);
	if (!err)
		err = make_qp(c, nic, n, c->sq_depth, c->max_inline, &o->main_cq, NULL, 0,
			      lane_psn(c->rank, peer, l), &o->main_qp);
	if (err || !c->comp_depth)
		return err;
	err = make_cq(c, nic, n, c->comp_depth, &o->comp_cq);
	if (!err)
		err = make_qp(c, nic, n, c->comp_depth, 0, &o->comp_cq, o->main_qp.uar,
			      DVX_QP_F_CD_MASTER, 0x100u + l, &o->comp_qp);
	if (err)
		return err;
	ca = c->conn;
	ca.access = COMP_ACCESS;
	if (!n->partner)
		return dvx_qp_connect_loopback(&o->comp_qp, &ca);
	err = make_cq(c, nic, n, PARTNER_DEPTH, &o->part_cq);
	if (!err)
		err = make_qp(c, nic, n, PARTNER_DEPTH, 0, &o->part_cq, NULL, 0, 0x200u + l,
			      &o->part_qp);
	if (!err)
		err = dvx_qp_connect_pair(&o->comp_qp, &o->part_qp, &ca);
	return err;
}

static int fail(struct dvx_p2p *t, int err)
{
	struct dvx_diag keep[DVX_P2P_MAX_NICS];
	uint32_t i, n = t->nnics;

	/* the unwind's successful destroys clear each NIC's diagnostic: the caller is
	 * owed the failure's own record */
	for (i = 0; i < n; i++)
		if (t->nics[i])
			keep[i] = t->nics[i]->diag;
	teardown(t);
	for (i = 0; i < n; i++)
		if (t->nics[i])
			t->nics[i]->diag = keep[i];
	memset(t, 0, sizeof(*t));
	return err;
}

int dvx_p2p_init(struct dvx_p2p *t, const struct dvx_p2p_cfg *cfg, void *state,
		 uint64_t state_len, void *rings, uint64_t rings_len)
{
	struct dvx_mem_req sreq, rreq;
	struct dvx_p2p_setup *s;
	uint32_t i, p, l, nl, npeers;
	uint8_t *cur = state;
	int err;

	if (!t)
		return -EINVAL;
	err = cfg_check(cfg, "dvx_p2p_init");
	if (err)
		return err;
	err = dvx_p2p_mem_req(cfg, &sreq, &rreq);
	if (err)
		return err;
	if (!cfg->bs || cfg->bs->rank != cfg->rank || cfg->bs->nranks != cfg->nranks)
		return cfg_bad(cfg, "dvx_p2p_init", "bs: missing, or not of rank %d of %d",
			       cfg->rank, cfg->nranks);
	if (!state || state_len < sreq.bytes || ((uintptr_t)state & 63u))
		return cfg_bad(cfg, "dvx_p2p_init",
			       "state region: NULL, under %llu bytes or not 64-byte aligned",
			       (unsigned long long)sreq.bytes);
	if (!rings || rings_len < rreq.bytes || ((uintptr_t)rings & (RING_ALIGN - 1)))
		return cfg_bad(cfg, "dvx_p2p_init",
			       "rings region: NULL, under %llu bytes or not %u-byte aligned",
			       (unsigned long long)rreq.bytes, (unsigned)RING_ALIGN);
	if (cfg->max_inline && cfg->max_inline < 8)
		return cfg_bad(cfg, "dvx_p2p_init", "max_inline %u: 0 or at least 8",
			       cfg->max_inline);
	/* what the operations need from every NIC, checked before anything is made */
	for (i = 0; i < cfg->nnics; i++) {
		err = dvx_nic_require(cfg->nics[i],
				      DVX_NIC_FEAT_ATOMIC | (cfg->comp_depth ? DVX_NIC_FEAT_CD : 0),
				      "p2p transport");
		if (err)
			return err;
	}
	nl = nlanes_of(cfg);
	npeers = npeers_of(cfg);
	memset(state, 0, sreq.bytes);
	memset(t, 0, sizeof(*t));
	s = carve_state(&cur, sizeof(*s));
	s->cfg = *cfg;
	s->cfg.peers = NULL;	/* read here only: the maps below keep what it said */
	t->peer_idx = carve_state(&cur, (uint64_t)cfg->nranks * sizeof(int32_t));
	t->peer_rank = carve_state(&cur, (uint64_t)npeers * sizeof(int32_t) + 4);
	for (i = 0; i < (uint32_t)cfg->nranks; i++)
		t->peer_idx[i] = -1;
	for (p = 0; p < npeers; p++) {
		int32_t r = cfg->peers ? cfg->peers[p] : ((int)p < cfg->rank ? (int)p : (int)p + 1);

		t->peer_rank[p] = r;
		t->peer_idx[r] = (int32_t)p;
	}
	t->npeers = npeers;
	t->all_peers = npeers == (uint32_t)cfg->nranks - 1;
	t->flags = cfg->flags;
	if (!s->cfg.max_inline)
		s->cfg.max_inline = 8;	/* reset_signal's 8 zero bytes */
	t->lanes = carve_state(&cur, (uint64_t)npeers * nl * sizeof(struct dvx_p2p_lane));
	s->objs = carve_state(&cur, (uint64_t)npeers * nl * sizeof(struct lane_objs));
	s->conn_in = carve_state(&cur, (uint64_t)cfg->nranks * nl * sizeof(struct dvx_qp_conn));
	s->conn_out = carve_state(&cur, (uint64_t)cfg->nranks * cfg->nranks * nl *
					       sizeof(struct dvx_qp_conn));
	t->rank = cfg->rank;
	t->nranks = cfg->nranks;
	t->nnics = cfg->nnics;
	t->qps_per_nic = cfg->qps_per_nic;
	t->nlanes = nl;
	t->companions = cfg->comp_depth ? 1 : 0;
	t->setup = s;
	if (!s->cfg.conn.max_mtu)
		dvx_qp_connect_cfg_init(&s->cfg.conn);
	/* recovery talks pairwise in a tag space of its own: every rank dups here, at
	 * the same point of its sequence of duplicates, so the spaces agree */
	err = dvx_bootstrap_dup(cfg->bs, &s->bs);
	if (err)
		return fail(t, err);
	s->bs_live = 1;

	/* per NIC: its slice of the ring region as one umem, the sink */
	for (i = 0; i < cfg->nnics; i++) {
		struct nic_objs *n = &s->nic[i];
		struct dvx_umem_cfg ua;

		t->nics[i] = &cfg->nics[i]->hal;
		n->len = align_up(nic_ring_bytes(cfg), RING_ALIGN);
		n->base = (uint8_t *)rings + i * n->len;
		n->dbr_off = nic_rings_only(cfg);
		n->partner = (cfg->flags & DVX_P2P_F_LOCAL_PAIR) ||
			     !(cfg->nics[i]->features & DVX_NIC_FEAT_LOOPBACK);
		memset(n->base, 0, n->len);
		memset(&ua, 0, sizeof(ua));
		ua.addr = n->base;
		ua.len = n->len;
		ua.access = DVX_ACCESS_LOCAL_WRITE;
		ua.dmabuf_fd = -1;
		err = dvx_umem_reg(cfg->nics[i], &ua, &n->umem);
		if (err)
			return fail(t, err);
		if (n->umem.ring_align > RING_ALIGN)
			return fail(t, -EINVAL);
		/* the sink: the last 64 bytes of the slice (never a ring) */
		err = dvx_mr_sink(cfg->nics[i], n->base + n->len - 64, -1, 0, &n->sink);
		if (err)
			return fail(t, err);
	}
	/* every lane's QPs; companions connected locally */
	for (p = 0; p < npeers; p++)
		for (l = 0; l < nl; l++) {
			err = setup_lane(t, s, p, l);
			if (err)
				return fail(t, err);
		}
	/* exchange: row r of conn_in is what this rank's lanes to rank r look like */
	for (p = 0; p < npeers; p++) {
		int peer = t->peer_rank[p];

		for (l = 0; l < nl; l++) {
			err = dvx_qp_export(&s->objs[p * nl + l].main_qp,
					    &s->conn_in[(uint32_t)peer * nl + l]);
			if (err)
				return fail(t, err);
		}
	}
	err = dvx_bootstrap_allgather(cfg->bs, s->conn_in, s->conn_out,
				      (size_t)cfg->nranks * nl * sizeof(struct dvx_qp_conn),
				      cfg->timeout_ns);
	if (err)
		return fail(t, err);
	for (p = 0; p < npeers; p++) {
		int peer = t->peer_rank[p];
		const struct dvx_qp_conn *row =
			&s->conn_out[((uint32_t)peer * cfg->nranks + (uint32_t)cfg->rank) * nl];

		for (l = 0; l < nl; l++) {
			struct lane_objs *o = &s->objs[p * nl + l];
			struct dvx_p2p_lane *ln = &t->lanes[p * nl + l];
			struct dvx_qp_connect_cfg ca = s->cfg.conn;

			ca.access = MAIN_ACCESS |
				    ((cfg->flags & DVX_P2P_F_READ) ? DVX_ACCESS_REMOTE_READ : 0);
			/* a peer that made no lane to this rank (its list lacks us) */
			if (!row[l].version)
				return fail(t, -EPROTO);
			err = dvx_qp_connect(&o->main_qp, &row[l], &ca);
			if (err)
				return fail(t, err);
			ln->nic = l / cfg->qps_per_nic;
			ln->peer = (uint32_t)peer;
			ln->index = l;
			ln->sink_lkey = s->nic[ln->nic].sink.lkey;
			err = q_from(&ln->main, &o->main_qp, &o->main_cq);
			if (!err && cfg->comp_depth)
				err = q_from(&ln->comp, &o->comp_qp, &o->comp_cq);
			if (err)
				return fail(t, err);
		}
	}
	/* nobody posts before every responder is ready */
	err = dvx_bootstrap_barrier(cfg->bs, cfg->timeout_ns);
	if (err)
		return fail(t, err);
	return 0;
}

int dvx_p2p_fini(struct dvx_p2p *t)
{
	if (!t || !t->setup)
		return -EINVAL;
	teardown(t);
	memset(t, 0, sizeof(*t));
	return 0;
}

DVX_STATIC_ASSERT((uint32_t)DVX_P2P_ACC_WRITE == (uint32_t)DVX_ACCESS_REMOTE_WRITE &&
			  (uint32_t)DVX_P2P_ACC_READ == (uint32_t)DVX_ACCESS_REMOTE_READ &&
			  (uint32_t)DVX_P2P_ACC_ATOMIC == (uint32_t)DVX_ACCESS_REMOTE_ATOMIC,
		  "a buffer's rights are the registration's bits");

int dvx_p2p_lbuf_init(struct dvx_p2p_lbuf *b, void *ptr, uint64_t len,
		      struct dvx_mr *const *mrs, uint32_t nmrs)
{
	uint32_t i;
	uint64_t addr = 0;

	if (!b || !ptr || !len || !mrs || nmrs == 0 || nmrs > DVX_P2P_MAX_NICS)
		return -EINVAL;
	for (i = 0; i < nmrs; i++) {
		const struct dvx_mr *m = mrs[i];
		uint64_t off, a;

		if (!m || (uint8_t *)ptr < (uint8_t *)m->addr ||
		    (uint64_t)((uint8_t *)ptr - (uint8_t *)m->addr) > m->len ||
		    len > m->len - (uint64_t)((uint8_t *)ptr - (uint8_t *)m->addr))
			return -EINVAL;
		off = (uint64_t)((uint8_t *)ptr - (uint8_t *)m->addr);
		a = m->iova + off;
		if (i && a != addr)
			return -EINVAL;	/* every NIC must know the buffer by one address */
		addr = a;
	}
	memset(b, 0, sizeof(*b));
	b->ptr = ptr;
	b->addr = addr;
	b->len = len;
	/* the rights every NIC's registration has */
	b->access = DVX_P2P_ACC_KNOWN | DVX_P2P_ACC_WRITE | DVX_P2P_ACC_READ | DVX_P2P_ACC_ATOMIC;
	for (i = 0; i < nmrs; i++) {
		b->lkey[i] = mrs[i]->lkey;
		b->rkey[i] = mrs[i]->rkey;
		b->access &= DVX_P2P_ACC_KNOWN | (mrs[i]->access & (DVX_P2P_ACC_WRITE | DVX_P2P_ACC_READ |
									 DVX_P2P_ACC_ATOMIC));
	}
	return 0;
}

int dvx_p2p_exchange(struct dvx_p2p *t, struct dvx_bootstrap *bs, const struct dvx_p2p_lbuf *mine,
		     struct dvx_p2p_rbuf *all, uint64_t timeout_ns)
{
	struct dvx_p2p_rbuf r;
	uint32_t i;

	if (!t || !bs || !mine || !all || bs->nranks != t->nranks)
		return -EINVAL;
	memset(&r, 0, sizeof(r));
	r.addr = dvx_le64(mine->addr);
	r.len = dvx_le64(mine->len);
	for (i = 0; i < DVX_P2P_MAX_NICS; i++)
		r.rkey[i] = dvx_le32(mine->rkey[i]);
	r.access = dvx_le32(mine->access);
	{
		int err = dvx_bootstrap_allgather(bs, &r, all, sizeof(r), timeout_ns);

		if (err)
			return err;
	}
	for (i = 0; i < (uint32_t)t->nranks; i++) {
		uint32_t k;

		all[i].addr = dvx_le64(all[i].addr);
		all[i].len = dvx_le64(all[i].len);
		for (k = 0; k < DVX_P2P_MAX_NICS; k++)
			all[i].rkey[k] = dvx_le32(all[i].rkey[k]);
		all[i].access = dvx_le32(all[i].access);
		all[i].rsvd = 0;
	}
	return 0;
}

/* ---- recovery of a lane (dvx_p2p_lane_recover) ----------------------------------- */

#define REC_MAGIC 0x64767252u	/* "dvrR" */
#define REC_SLICE_NS 1000000ull	/* bootstrap waits are cut into slices: the NICs progress */

enum { REC_HELLO = 1, REC_ACK = 2, REC_QUIET = 3, REC_READY = 4 };

/*
 * One message, little-endian. Every call of a side is an attempt with its own number
 * (@att); HELLO opens it, ACK answers a HELLO (@echo = the attempt acknowledged) with
 * the sender's attempt and status, QUIET and READY carry the pair (@att = sender's,
 * @echo = receiver's) they belong to. Messages left over by an attempt that timed
 * out never match a later pair and are read past.
 */
struct rec_msg {
	uint32_t magic;
	uint32_t kind;
	uint32_t att;
	uint32_t echo;
	uint32_t failed;	/* ACK: 1 when the sender's side needs recovery */
	int32_t err;		/* ACK: the error that failed the sender's side (0: none) */
};

static uint64_t rec_now(const struct dvx_p2p *t)
{
	return dvx_hal_now_ns(t->nics[0]->hal);
}

static int rec_send(struct dvx_p2p_setup *s, int peer, uint32_t lane, uint32_t kind,
		    uint32_t att, uint32_t echo, uint32_t failed, int32_t err, uint64_t timeout_ns)
{
	struct rec_msg m;

	m.magic = dvx_le32(REC_MAGIC);
	m.kind = dvx_le32(kind);
	m.att = dvx_le32(att);
	m.echo = dvx_le32(echo);
	m.failed = dvx_le32(failed);
	m.err = (int32_t)dvx_le32((uint32_t)err);
	return dvx_bootstrap_send(&s->bs, peer, lane, &m, sizeof(m), timeout_ns);
}

/* the next message from @peer about @lane, before @deadline (the NICs progress) */
static int rec_recv(struct dvx_p2p *t, struct dvx_p2p_setup *s, int peer, uint32_t lane,
		    struct rec_msg *m, uint64_t deadline)
{
	uint32_t i;
	int err;

	for (;;) {
		uint64_t now = rec_now(t);

		if (now >= deadline)
			return -ETIMEDOUT;
		err = dvx_bootstrap_recv(&s->bs, peer, lane, m, sizeof(*m),
					 deadline - now < REC_SLICE_NS ? deadline - now
								       : REC_SLICE_NS);
		if (err == -EMSGSIZE)
			continue;	/* not ours: dropped */
		if (err != -ETIMEDOUT)
			break;
		for (i = 0; i < t->nnics; i++)
			dvx_hal_nic_progress(t->nics[i]);
	}
	if (err)
		return err;
	m->magic = dvx_le32(m->magic);
	m->kind = dvx_le32(m->kind);
	m->att = dvx_le32(m->att);
	m->echo = dvx_le32(m->echo);
	m->failed = dvx_le32(m->failed);
	m->err = (int32_t)dvx_le32((uint32_t)m->err);
	return 0;
}

static uint64_t rec_left(const struct dvx_p2p *t, uint64_t deadline)
{
	uint64_t now = rec_now(t);

	return now >= deadline ? 0 : deadline - now;
}

/*
 * Meet the peer: send HELLO(@att), answer every HELLO with an ACK carrying our status,
 * and finish on the ACK of our HELLO, which names the peer's attempt (*@patt).
 */
static int rec_meet(struct dvx_p2p *t, struct dvx_p2p_setup *s, int peer, uint32_t lane,
		    uint32_t att, uint32_t failed, int32_t lerr, uint64_t deadline,
		    uint32_t *patt, uint32_t *pfailed, int32_t *perr)
{
	struct rec_msg m;
	uint32_t acked = 0;
	int have_acked = 0, err;

	err = rec_send(s, peer, lane, REC_HELLO, att, 0, 0, 0, rec_left(t, deadline));
	for (;;) {
		if (err)
			return err;
		err = rec_recv(t, s, peer, lane, &m, deadline);
		if (err)
			return err;
		if (m.magic != REC_MAGIC)
			continue;
		if (m.kind == REC_HELLO) {
			acked = m.att;
			have_acked = 1;
			err = rec_send(s, peer, lane, REC_ACK, att, m.att, failed, lerr,
				       rec_left(t, deadline));
			continue;
		}
		if (m.kind != REC_ACK || m.echo != att)
			continue;	/* left over from an attempt that timed out */
		/* its HELLO may have been read by one of our attempts that timed out */
		if (!have_acked || acked != m.att) {
			err = rec_send(s, peer, lane, REC_ACK, att, m.att, failed, lerr,
				       rec_left(t, deadline));
			if (err)
				return err;
		}
		*patt = m.att;
		*pfailed = m.failed;
		*perr = m.err;
		return 0;
	}
}

/* wait for the peer's @kind of the pair (@patt, @att) */
static int rec_expect(struct dvx_p2p *t, struct dvx_p2p_setup *s, int peer, uint32_t lane,
		      uint32_t kind, uint32_t att, uint32_t patt, uint64_t deadline)
{
	struct rec_msg m;
	int err;

	for (;;) {
		err = rec_recv(t, s, peer, lane, &m, deadline);
		if (err)
			return err;
		if (m.magic == REC_MAGIC && m.kind == kind && m.att == patt && m.echo == att)
			return 0;
	}
}

static int qp_hw_state(struct dvx_qp *qp, uint32_t *st)
{
	return dvx_qp_query(qp, NULL, st);
}

/* move @qp to ERR unless the hardware has it in ERR or RST already */
static int qp_stop(struct dvx_qp *qp)
{
	uint32_t st;
	int err = qp_hw_state(qp, &st);

	if (err)
		return err;
	if (st == DVX_MLX5_QP_STATE_ERR || st == DVX_MLX5_QP_STATE_RST)
		return 0;
	return dvx_qp_to_err(qp);
}

/* whether this side of the lane needs recovery: main, then companion (and partner) */
static int lane_status(struct dvx_p2p_lane *l, struct lane_objs *o, int *main_bad,
		       int *comp_bad, int32_t *lerr)
{
	uint32_t st;
	int err;

	*main_bad = __atomic_load_n(&l->main.s.state, __ATOMIC_ACQUIRE) == DVX_P2P_Q_FAILED;
	*comp_bad = 0;
	*lerr = 0;
	err = qp_hw_state(&o->main_qp, &st);
	if (err)
		return err;
	if (st != DVX_MLX5_QP_STATE_RTS)
		*main_bad = 1;
	if (l->comp.s.state != DVX_P2P_Q_UNUSED) {
		*comp_bad = __atomic_load_n(&l->comp.s.state, __ATOMIC_ACQUIRE) == DVX_P2P_Q_FAILED;
		err = qp_hw_state(&o->comp_qp, &st);
		if (err)
			return err;
		if (st != DVX_MLX5_QP_STATE_RTS)
			*comp_bad = 1;
		if (o->part_qp.live) {
			err = qp_hw_state(&o->part_qp, &st);
			if (err)
				return err;
			if (st != DVX_MLX5_QP_STATE_RTS)
				*comp_bad = 1;
		}
	}
	if (__atomic_load_n(&l->main.s.state, __ATOMIC_ACQUIRE) == DVX_P2P_Q_FAILED)
		*lerr = l->main.s.err;
	else if (__atomic_load_n(&l->comp.s.state, __ATOMIC_ACQUIRE) == DVX_P2P_Q_FAILED)
		*lerr = l->comp.s.err;
	return 0;
}

/*
 * The last look before returning 0: the queues running and every QP of the lane
 * (main, companion, partner) in RTS as QUERY_QP reads it. A queue that failed again
 * inside the call, or whose QP the device reports out of RTS after its reset, is
 * marked failed (-EIO where it has no error of its own) and the call is -EAGAIN: the
 * lane is failed, and calling again on both ends recovers it.
 */
static int lane_usable(struct dvx_p2p_lane *l, struct lane_objs *o)
{
	int main_bad, comp_bad, err;
	int32_t lerr;

	err = lane_status(l, o, &main_bad, &comp_bad, &lerr);
	if (err)
		return err;
	if (main_bad)
		dvx_p2p_q_mark_failed(&l->main, lerr ? lerr : -EIO);
	if (comp_bad)
		dvx_p2p_q_mark_failed(&l->comp, lerr ? lerr : -EIO);
	return main_bad || comp_bad ? -EAGAIN : 0;
}

static int lane_recover(struct dvx_p2p *t, struct dvx_p2p_setup *s, int peer, uint32_t lane,
			struct dvx_p2p_lane *l, struct lane_objs *o, uint64_t deadline)
{
	uint32_t att = ++o->rec_att, patt = 0, pfailed = 0;
	int main_bad, comp_bad, err, mark;
	int32_t lerr, perr = 0;

	err = lane_status(l, o, &main_bad, &comp_bad, &lerr);
	if (err)
		return err;
	err = rec_meet(t, s, peer, lane, att, (uint32_t)(main_bad || comp_bad), lerr, deadline,
		       &patt, &pfailed, &perr);
	if (err)
		return err;
	if (!main_bad && !comp_bad && !pfailed)
		return 0;	/* healthy at both ends */

	/* stop: both ends' main QPs in ERR, every CQE of the lane consumed */
	mark = lerr ? lerr : (perr < 0 ? perr : -ECONNRESET);
	dvx_p2p_q_mark_failed(&l->main, mark);
	err = qp_stop(&o->main_qp);
	if (!err && comp_bad) {
		dvx_p2p_q_mark_failed(&l->comp, mark);
		err = qp_stop(&o->comp_qp);
	}
	if (!err)
		err = dvx_p2p_q_quiesce(&l->main, rec_left(t, deadline));
	/* the companion's WAITs are satisfied by the main QP's flushes */
	if (!err && l->comp.s.state != DVX_P2P_Q_UNUSED)
		err = dvx_p2p_q_quiesce(&l->comp, rec_left(t, deadline));
	if (!err && !comp_bad && l->comp.s.state != DVX_P2P_Q_UNUSED) {
		/* the companion (or its partner) may have failed while it drained: its
		 * loopback fetch-adds met the fault that broke the main QP. Then it is
		 * stopped, drained and reset with the rest. */
		int mb, cb;
		int32_t le;

		err = lane_status(l, o, &mb, &cb, &le);
		if (!err && cb) {
			comp_bad = 1;
			dvx_p2p_q_mark_failed(&l->comp, mark);
			err = qp_stop(&o->comp_qp);
			if (!err)
				err = dvx_p2p_q_quiesce(&l->comp, rec_left(t, deadline));
		}
	}
	if (!err)
		err = rec_send(s, peer, lane, REC_QUIET, att, patt, 0, 0, rec_left(t, deadline));
	if (!err)
		err = rec_expect(t, s, peer, lane, REC_QUIET, att, patt, deadline);
	if (err)
		return err;

	/* reset and reconnect: both ends restart from their exported PSNs */
	err = dvx_qp_recover(&o->main_qp);
	if (!err && comp_bad) {
		err = dvx_qp_recover(&o->comp_qp);
		if (!err && o->part_qp.live)
			err = dvx_qp_recover(&o->part_qp);
	}
	if (err)
		return err;
	/* nobody posts before the other's responder is ready */
	err = rec_send(s, peer, lane, REC_READY, att, patt, 0, 0, rec_left(t, deadline));
	if (!err)
		err = rec_expect(t, s, peer, lane, REC_READY, att, patt, deadline);
	if (err)
		return err;	/* the queues stay failed: a later call stops and resets again */
	err = dvx_p2p_q_restart(&l->main, o->main_cq.mcq.ci, o->main_cq.index_base);
	if (!err && comp_bad)
		err = dvx_p2p_q_restart(&l->comp, o->comp_cq.mcq.ci, o->comp_cq.index_base);
	if (err)
		return err;
	/* 0 promises a usable lane: every queue restarted, every QP of it in RTS */
	return lane_usable(l, o);
}

int dvx_p2p_lane_recover(struct dvx_p2p *t, int peer, uint32_t lane, uint64_t timeout_ns)
{
	struct dvx_p2p_setup *s;
	uint32_t idx, busy = 0;
	uint64_t deadline;
	int pi, err;

	if (!t || !t->setup || !t->lanes || peer < 0 || peer >= t->nranks || lane >= t->nlanes)
		return -EINVAL;
	pi = t->peer_idx[peer];
	if (pi < 0)
		return -EINVAL;
	s = t->setup;
	if (!s->bs_live)
		return -EINVAL;
	if (!__atomic_compare_exchange_n(&s->rec_busy, &busy, 1u, 0, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		return -EBUSY;
	idx = (uint32_t)pi * t->nlanes + lane;
	deadline = rec_now(t);
	deadline = timeout_ns > UINT64_MAX - deadline ? UINT64_MAX : deadline + timeout_ns;
	err = lane_recover(t, s, peer, lane, &t->lanes[idx], &s->objs[idx], deadline);
	__atomic_store_n(&s->rec_busy, 0u, __ATOMIC_RELEASE);
	return err;
}
