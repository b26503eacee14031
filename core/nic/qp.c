// SPDX-License-Identifier: MIT
/*
 * core/nic/qp.c - RC QPs: CREATE_QP in caller umems, the RST->RTS connection (IB LID path
 * or RoCE v2 GID path, force-loopback, local pairs), 2ERR, recovery, QUERY_QP
 * (prm 1.7-1.9, 4.5, 7).
 */
#include <errno.h>
#include <string.h>

#include <dvx/nic/qp.h>

#include "priv.h"

#define QP_FLAGS_OK                                                                     \
	(DVX_QP_F_CD_MASTER | DVX_QP_F_CD_SLAVE_SEND | DVX_QP_F_CD_SLAVE_RECV |         \
	 DVX_QP_F_PREINIT)
#define QP_CD_FLAGS (DVX_QP_F_CD_MASTER | DVX_QP_F_CD_SLAVE_SEND | DVX_QP_F_CD_SLAVE_RECV)
#define QP_LOG_MAX 15u			/* log_sq_size / log_rq_size are 4 bits */
#define QP_RQ_MAX_SGE 64u		/* 1 KiB receive stride: dvx_mlx5_rq_init's limit */
#define QP_LOG_MSG_MAX 30u		/* every source uses 30 (prm 1.7) */
#define QP_REMOTE_ACCESS                                                                \
	(DVX_ACCESS_REMOTE_WRITE | DVX_ACCESS_REMOTE_READ | DVX_ACCESS_REMOTE_ATOMIC)

/* ---- sizes ---- */

struct qp_geom {
	uint32_t max_wqe_bytes;	/* largest WQE the SQ is sized for */
	uint32_t rq_stride;	/* bytes per receive WQE, 0 without an RQ */
	uint64_t rq_bytes;
	uint64_t sq_bytes;
};

static int qp_geom(const struct dvx_qp_cfg *a, struct qp_geom *g)
{
	uint32_t inl;

	if (!a || !DVX_IS_POW2(a->sq_depth) || a->sq_depth > (1u << QP_LOG_MAX) ||
	    a->max_inline > DVX_MLX5_MAX_INLINE)
		return -EINVAL;
	if (a->rq_depth && (!DVX_IS_POW2(a->rq_depth) || a->rq_depth > (1u << QP_LOG_MAX) ||
			    !a->rq_max_sge || a->rq_max_sge > QP_RQ_MAX_SGE))
		return -EINVAL;
	if (!a->rq_depth && a->rq_max_sge)
		return -EINVAL;
	/* an RDMA WRITE with inline data: ctrl + raddr + 4-byte header + payload, in
	 * 16-byte units (prm 2.6); never less than one full WQEBB (an atomic is 64 B) */
	inl = DVX_ALIGN_UP(2 * DVX_MLX5_DS_BYTES + 4u + a->max_inline, DVX_MLX5_DS_BYTES);
	g->max_wqe_bytes = inl > DVX_WQEBB_BYTES ? inl : DVX_WQEBB_BYTES;
	if (a->sq_depth * DVX_WQEBB_BYTES < g->max_wqe_bytes)
		return -EINVAL;
	g->rq_stride = a->rq_depth ? DVX_RQ_STRIDE(a->rq_max_sge) : 0;
	/* a regular RQ spans at least one WQEBB so the SQ behind it stays aligned
	 * (prm 1.7, mlx5/cmd.c): widen the stride rather than pad */
	while (a->rq_depth && (uint64_t)a->rq_depth * g->rq_stride < DVX_WQEBB_BYTES)
		g->rq_stride <<= 1;
	g->rq_bytes = DVX_RQ_BYTES(a->rq_depth, g->rq_stride);
	g->sq_bytes = (uint64_t)a->sq_depth * DVX_WQEBB_BYTES;
	return 0;
}

int dvx_qp_mem_req(const struct dvx_qp_cfg *attr, struct dvx_mem_req *wq,
		   struct dvx_mem_req *dbr)
{
	struct qp_geom g;

	if (qp_geom(attr, &g))
		return -EINVAL;
	if (wq) {
		wq->bytes = g.rq_bytes + g.sq_bytes;
		wq->align = DVX_RING_ALIGN;
	}
	if (dbr) {
		dbr->bytes = DVX_DBR_BYTES;
		dbr->align = DVX_DBR_ALIGN;
	}
	return 0;
}

/* ---- create / destroy ---- */

static int bad(struct dvx_nic *nic, const char *op, const char *what)
{
	return dvx_core_fail(nic, -EINVAL, DVX_DIAG_ARG, op, "%s", what);
}

static const char *placement(const struct dvx_umem *umem, uint64_t off, uint64_t bytes,
			     uint64_t align)
{
	if (!umem || !umem->live)
		return "umem missing or not registered";
	if (off % align)
		return "offset misaligned";
	if (off > umem->len || bytes > umem->len - off)
		return "region runs past the end of its umem";
	return NULL;
}

static int cq_ok(const struct dvx_nic *nic, const struct dvx_cq *cq)
{
	return cq && cq->live && cq->nic == nic;
}

/*
 * qpc.ts_format as the Linux mlx5 core chooses it (docs/prm.md 1.2): the capability
 * that governs RC QPs is the RoCE page's qp_ts_format on a RoCE port, else the general
 * page's sq_ts_format; DEFAULT whenever it is non-zero (the device picks among the
 * formats it supports), FREE_RUNNING when it is 0 (the only one). Always 0 would be
 * refused by a device that supports only the real-time clock.
 */
static uint8_t qp_ts_format(const struct dvx_nic *nic)
{
	uint8_t cap = nic->roce && nic->caps.roce_valid ? nic->caps.qp_ts_format :
							   nic->caps.sq_ts_format;

	return cap ? DVX_MLX5_TS_DEFAULT : DVX_MLX5_TS_FREE_RUNNING;
}

static int qp_create_do(struct dvx_nic *nic, const struct dvx_qp_cfg *attr, struct dvx_qp *qp)
{
	static const char op[] = "dvx_qp_create";
	uint8_t in[DVX_MLX5_CREATE_QP_IN_BYTES], out[DVX_MLX5_CREATE_QP_OUT_BYTES];
	uint32_t bf_half;
	struct dvx_mlx5_qp_cfg ma;
	struct dvx_cq *rcq = NULL;
	struct dvx_uar *uar;
	struct qp_geom g;
	struct dvx_qp q;
	const char *why;
	int err;

	if (!nic || !nic->open)
		return -EINVAL;
	if (!attr || !qp)
		return bad(nic, op, "attr or qp is NULL");
	if (qp->live == DVX_LIVE)
		return dvx_core_fail(nic, -EBUSY, DVX_DIAG_ARG, op, "the QP is live: destroy it first");
	if (qp_geom(attr, &g))
		return bad(nic, op, "sizes: depths must be powers of two up to 2^15, the SQ must "
				    "hold one largest WQE, 1..64 receive SGEs with an RQ only, "
				    "inline within 1008-byte WQEs");
	if (attr->flags & ~(uint32_t)QP_FLAGS_OK)
		return bad(nic, op, "unknown flags");
	if ((attr->flags & DVX_QP_F_CD_SLAVE_RECV) && !attr->rq_depth)
		return bad(nic, op, "cd_slave_receive without a receive queue");
	if (attr->user_index > 0xffffffu || attr->psn > 0xffffffu)
		return bad(nic, op, "user_index and psn are 24 bits");
	if (!cq_ok(nic, attr->send_cq))
		return bad(nic, op, "send CQ missing or not on this NIC");
	if (attr->recv_cq && !attr->rq_depth)
		return bad(nic, op, "a receive CQ without a receive queue");
	if (attr->rq_depth) {
		rcq = attr->recv_cq ? attr->recv_cq : attr->send_cq;
		if (!cq_ok(nic, rcq))
			return bad(nic, op, "receive CQ not on this NIC");
	}
	why = placement(attr->wq_umem, attr->wq_offset, g.rq_bytes + g.sq_bytes,
			attr->wq_umem ? attr->wq_umem->ring_align : 1);
	if (why)
		return dvx_core_fail(nic, -EINVAL, DVX_DIAG_ARG, op, "work queue: %s", why);
	why = placement(attr->dbr_umem, attr->dbr_offset, DVX_DBR_BYTES, DVX_DBR_ALIGN);
	if (why)
		return dvx_core_fail(nic, -EINVAL, DVX_DIAG_ARG, op, "doorbell record: %s", why);
	if (attr->wq_umem->nic != nic || attr->dbr_umem->nic != nic)
		return bad(nic, op, "umem registered on another NIC");
	if (!attr->wq_umem->addr || !attr->dbr_umem->addr)
		return bad(nic, op, "umem has no address for the ring state");
	/* never over a live object's ring or record */
	if (dvx_core_umem_overlap(attr->wq_umem, attr->wq_offset, g.rq_bytes + g.sq_bytes) ||
	    dvx_core_umem_overlap(attr->dbr_umem, attr->dbr_offset, DVX_DBR_BYTES) ||
	    (attr->wq_umem == attr->dbr_umem &&
	     attr->dbr_offset < attr->wq_offset + g.rq_bytes + g.sq_bytes &&
	     attr->wq_offset < attr->dbr_offset + DVX_DBR_BYTES))
		return dvx_core_fail(nic, -EBUSY, DVX_DIAG_ARG, op,
				     "work queue [%#llx, +%llu) or doorbell record at %#llx "
				     "overlaps a live CQ's or QP's range in the same umem (or "
				     "each other)", (unsigned long long)attr->wq_offset,
				     (unsigned long long)(g.rq_bytes + g.sq_bytes),
				     (unsigned long long)attr->dbr_offset);
	if (!attr->dbr_umem->cpu && !(attr->flags & DVX_QP_F_PREINIT))
		return bad(nic, op, "record not CPU-writable: zero it and pass DVX_QP_F_PREINIT");
	uar = attr->uar ? attr->uar : &nic->uar;
	if (!uar->live || uar->nic != nic)
		return bad(nic, op, "UAR not allocated on this NIC");
	/* BlueFlame only on a register this QP has to itself (docs/prm.md 3.4) */
	bf_half = 0;
	if (uar->bf_half && uar != &nic->uar) {
		if (uar->qps)
			return dvx_core_fail(nic, -EBUSY, DVX_DIAG_ARG, op,
					     "BlueFlame UAR page 0x%x already rings %u QP(s): a "
					     "BlueFlame register serves one QP (share a "
					     "non-cached UAR instead)", uar->page_id, uar->qps);
		bf_half = uar->bf_half;
	}

	/* what the device must support */
	if ((attr->flags & QP_CD_FLAGS) && !(nic->features & DVX_NIC_FEAT_CD))
		return dvx_nic_require(nic, DVX_NIC_FEAT_CD, "a core-direct (cd_*) QP");
	if (dvx_core_log2(attr->sq_depth) > nic->caps.log_max_qp_sz ||
	    dvx_core_log2(attr->rq_depth ? attr->rq_depth : 1) > nic->caps.log_max_qp_sz)
		return dvx_core_fail(nic, -EOPNOTSUPP, DVX_DIAG_ARG, op,
				     "queue depth above the device's 2^%u", nic->caps.log_max_qp_sz);
	if (nic->caps.max_wqe_sz_sq && g.max_wqe_bytes > nic->caps.max_wqe_sz_sq)
		return dvx_core_fail(nic, -EOPNOTSUPP, DVX_DIAG_ARG, op,
				     "%u-byte WQEs (inline %u) above the device's %u",
				     g.max_wqe_bytes, attr->max_inline, nic->caps.max_wqe_sz_sq);
	if (attr->rq_depth && nic->caps.max_wqe_sz_rq &&
	    attr->rq_max_sge * DVX_MLX5_DS_BYTES > nic->caps.max_wqe_sz_rq)
		return dvx_core_fail(nic, -EOPNOTSUPP, DVX_DIAG_ARG, op,
				     "%u receive SGEs above the device's %u-byte receive WQEs",
				     attr->rq_max_sge, nic->caps.max_wqe_sz_rq);

	memset(&ma, 0, sizeof(ma));
	ma.pdn = nic->pdn;
	ma.uar_page = uar->page_id;
	ma.user_index = attr->user_index;
	ma.cqn_snd = attr->send_cq->cqn;
	ma.cqn_rcv = rcq ? rcq->cqn : 0;
	ma.wq_umem_id = attr->wq_umem->id;
	ma.dbr_umem_id = attr->dbr_umem->id;
	ma.wq_umem_offset = attr->wq_offset;
	ma.dbr_offset = attr->dbr_offset;
	ma.log_sq_size = (uint8_t)dvx_core_log2(attr->sq_depth);
	ma.ts_format = qp_ts_format(nic);
	ma.rq_type = attr->rq_depth ? DVX_MLX5_RQ_TYPE_REGULAR : DVX_MLX5_RQ_TYPE_ZERO;
	ma.log_rq_size = (uint8_t)(attr->rq_depth ? dvx_core_log2(attr->rq_depth) : 0);
	ma.log_rq_stride = (uint8_t)(attr->rq_depth ? dvx_core_log2(g.rq_stride) - 4 : 0);
	ma.log_msg_max = (uint8_t)(nic->caps.log_max_msg && nic->caps.log_max_msg < QP_LOG_MSG_MAX ?
					   nic->caps.log_max_msg : QP_LOG_MSG_MAX);
	ma.cd_master = (attr->flags & DVX_QP_F_CD_MASTER) != 0;
	ma.cd_slave_send = (attr->flags & DVX_QP_F_CD_SLAVE_SEND) != 0;
	ma.cd_slave_receive = (attr->flags & DVX_QP_F_CD_SLAVE_RECV) != 0;
	err = dvx_mlx5_create_qp_in(in, &ma);
	if (err)
		return dvx_core_fail(nic, err, DVX_DIAG_ARG, op,
				     "CREATE_QP: a value does not fit its field");

	memset(&q, 0, sizeof(q));
	q.nic = nic;
	q.send_cq = attr->send_cq;
	q.recv_cq = rcq;
	q.uar = uar;
	q.wq_umem = attr->wq_umem;
	q.dbr_umem = attr->dbr_umem;
	q.wq = attr->wq_umem->addr + attr->wq_offset;
	q.dbrec = (dvx_be32 *)(void *)(attr->dbr_umem->addr + attr->dbr_offset);
	q.uar_reg = uar->reg;
	q.wq_offset = attr->wq_offset;
	q.dbr_offset = attr->dbr_offset;
	q.state = DVX_MLX5_QP_STATE_RST;
	q.flags = attr->flags;
	q.psn = attr->psn;
	q.user_index = attr->user_index;
	q.max_inline = attr->max_inline;
	q.sq_bytes = g.sq_bytes;
	q.rq_bytes = g.rq_bytes;
	q.max_wqe_bytes = g.max_wqe_bytes;
	/* ring state first with a placeholder QPN: the addresses are checked before the
	 * device is told anything */
	err = dvx_mlx5_sq_init(&q.sq, &q.sqc,
			       &(struct dvx_mlx5_sq_cfg){ q.wq + g.rq_bytes, attr->sq_depth, 0,
							  attr->max_inline, q.dbrec, q.uar_reg,
							  bf_half, 0 });
	if (!err && attr->rq_depth)
		err = dvx_mlx5_rq_init(&q.rq, q.wq, attr->rq_depth,
				       dvx_core_log2(g.rq_stride), q.dbrec);
	if (err)
		return bad(nic, op, "ring, record or UAR register misaligned for the ring state");

	if (!(attr->flags & DVX_QP_F_PREINIT)) {
		q.dbrec[DVX_MLX5_RCV_DBR] = 0;
		q.dbrec[DVX_MLX5_SND_DBR] = 0;
	}
	err = dvx_core_obj_create(nic, in, sizeof(in), out, sizeof(out), &q.obj);
	if (err)
		return err;
	err = dvx_mlx5_create_qp_out(out, sizeof(out), &q.qpn);
	if (!err)
		err = dvx_mlx5_sq_init(&q.sq, &q.sqc,
				       &(struct dvx_mlx5_sq_cfg){ q.wq + g.rq_bytes, attr->sq_depth,
								  q.qpn, attr->max_inline, q.dbrec,
								  q.uar_reg, bf_half, 0 });
	if (err) {
		struct dvx_diag keep;

		dvx_core_fail(nic, err, DVX_DIAG_DEVX, op, "CREATE_QP output unreadable");
		keep = nic->hal.diag;
		if (dvx_hal_obj_destroy(&nic->hal, &q.obj))
			dvx_hal_log(&nic->hal.log, DVX_LOG_ERR, "unwinding: DESTROY_QP failed");
		nic->hal.diag = keep;
		return err;
	}
	q.obj.id = q.qpn;
	q.kick = (uint32_t)dvx_hal_nic_kicks(&nic->hal);
	q.live = DVX_LIVE;
	q.send_cq->users++;
	if (rcq && rcq != q.send_cq)
		rcq->users++;
	uar->users++;
	uar->qps++;
	q.wq_umem->users++;
	q.dbr_umem->users++;
	nic->nobjs++;
	q.sq_wr_ids = attr->sq_wr_ids;
	q.rq_wr_ids = attr->rq_wr_ids;
	*qp = q;
	/* posts store their wr_id unconditionally: into the caller's array, or into the
	 * QP's own sink (a pointer into *qp: live QPs are never moved, dvx/nic/post.h) */
	qp->sq_wr_slot = qp->sq_wr_ids ? qp->sq_wr_ids : &qp->wr_sink;
	qp->sq_wr_mask = qp->sq_wr_ids ? qp->sq.nwqebb - 1 : 0;
	/* on its CQs' lists, where dvx_cq_poll() finds it by QPN */
	qp->cq_next[0] = qp->send_cq->qps;
	qp->send_cq->qps = qp;
	if (qp->recv_cq && qp->recv_cq != qp->send_cq) {
		qp->cq_next[1] = qp->recv_cq->qps;
		qp->recv_cq->qps = qp;
	}
	dvx_core_umem_link(qp->wq_umem, &qp->wq_ext, qp->wq_offset, qp->rq_bytes + qp->sq_bytes);
	dvx_core_umem_link(qp->dbr_umem, &qp->dbr_ext, qp->dbr_offset, DVX_DBR_BYTES);
	return 0;
}

int dvx_qp_create(struct dvx_nic *nic, const struct dvx_qp_cfg *attr, struct dvx_qp *qp)
{
	struct dvx_nic *n = nic;
	int err = qp_create_do(nic, attr, qp);

	if (!err && n)
		dvx_core_ok(n);
	return err;
}

/* take @qp off @cq's list (live QPs are never moved: dvx/nic/post.h) */
static void cq_unlink(struct dvx_cq *cq, struct dvx_qp *qp)
{
	struct dvx_qp **pp;

	for (pp = &cq->qps; *pp; pp = &(*pp)->cq_next[(*pp)->send_cq == cq ? 0 : 1])
		if (*pp == qp)
			break;
	if (*pp)
		*pp = (*pp)->cq_next[(*pp)->send_cq == cq ? 0 : 1];
}

static int qp_destroy_do(struct dvx_qp *qp)
{
	struct dvx_nic *nic;
	int err;

	if (!qp || !qp->live || !qp->nic)
		return -EINVAL;
	nic = qp->nic;
	err = dvx_hal_obj_destroy(&nic->hal, &qp->obj);
	if (err)
		return dvx_core_hal_failed(nic, err, DVX_MLX5_CMD_DESTROY_QP, "obj_destroy");
	qp->live = 0;
	cq_unlink(qp->send_cq, qp);
	if (qp->recv_cq && qp->recv_cq != qp->send_cq)
		cq_unlink(qp->recv_cq, qp);
	dvx_core_umem_unlink(qp->wq_umem, &qp->wq_ext);
	dvx_core_umem_unlink(qp->dbr_umem, &qp->dbr_ext);
	qp->send_cq->users--;
	if (qp->recv_cq && qp->recv_cq != qp->send_cq)
		qp->recv_cq->users--;
	qp->uar->users--;
	qp->uar->qps--;
	qp->wq_umem->users--;
	qp->dbr_umem->users--;
	nic->nobjs--;
	return 0;
}

int dvx_qp_destroy(struct dvx_qp *qp)
{
	struct dvx_nic *n = qp ? qp->nic : NULL;
	int err = qp_destroy_do(qp);

	if (!err && n)
		dvx_core_ok(n);
	return err;
}

/* ---- connection ---- */

int dvx_qp_export(const struct dvx_qp *qp, struct dvx_qp_conn *conn)
{
	const struct dvx_nic *nic;

	if (!qp || !qp->live || !conn)
		return -EINVAL;
	nic = qp->nic;
	memset(conn, 0, sizeof(*conn));
	conn->version = DVX_QP_CONN_VERSION;
	conn->link_layer = nic->link_layer;
	conn->port = nic->port;
	conn->mtu = nic->mtu;
	conn->qpn = dvx_cpu_to_be32(qp->qpn);
	conn->psn = dvx_cpu_to_be32(qp->psn);
	conn->lid = dvx_cpu_to_be16(nic->lid);
	conn->gid_index = (uint8_t)nic->gid_index;
	memcpy(conn->gid, nic->gid.raw, sizeof(conn->gid));
	return 0;
}

void dvx_qp_connect_cfg_init(struct dvx_qp_connect_cfg *attr)
{
	if (!attr)
		return;
	memset(attr, 0, sizeof(*attr));
	attr->access = QP_REMOTE_ACCESS;
	attr->min_rnr_nak = 12;
	attr->retry_count = 7;
	attr->rnr_retry = 7;
	attr->ack_timeout = 20;
	attr->hop_limit = 255;
}

static int is_zero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return 0;
	return 1;
}

/* log2 of a read/atomic depth: 0 asks for the device maximum (qpc field: 3 bits) */
static int rd_atomic_log(uint16_t want, uint8_t cap_log, unsigned *log)
{
	unsigned max = cap_log < 7 ? cap_log : 7;

	if (!want) {
		*log = max;
		return 0;
	}
	if (!DVX_IS_POW2(want) || dvx_core_log2(want) > max)
		return -EINVAL;
	*log = dvx_core_log2(want);
	return 0;
}

static int attr_check(struct dvx_nic *nic, const struct dvx_qp_connect_cfg *a, const char *op)
{
	if (a->access & ~(uint32_t)QP_REMOTE_ACCESS)
		return bad(nic, op, "access: DVX_ACCESS_REMOTE_WRITE/READ/ATOMIC only");
	if (a->max_mtu > DVX_MLX5_MTU_4096 || a->min_rnr_nak > 31 || a->retry_count > 7 ||
	    a->rnr_retry > 7 || a->ack_timeout > 31 || a->sl > (nic->roce ? 7 : 15))
		return bad(nic, op, "a connection parameter is out of its range");
	if ((a->access & DVX_ACCESS_REMOTE_ATOMIC) && !(nic->features & DVX_NIC_FEAT_ATOMIC))
		return dvx_nic_require(nic, DVX_NIC_FEAT_ATOMIC, "remote atomic access");
	return 0;
}

static int remote_check(struct dvx_nic *nic, const struct dvx_qp_conn *r, const char *op)
{
	uint32_t qpn = dvx_be32_to_cpu(r->qpn);

	if (r->version != DVX_QP_CONN_VERSION)
		return dvx_core_fail(nic, -EINVAL, DVX_DIAG_ARG, op,
				     "remote info version %u, expected %u", r->version,
				     DVX_QP_CONN_VERSION);
	if (r->link_layer != nic->link_layer)
		return dvx_core_fail(nic, -EINVAL, DVX_DIAG_ARG, op,
				     "remote link layer %u differs from ours (%u)", r->link_layer,
				     nic->link_layer);
	if (!qpn || qpn > 0xffffffu)
		return dvx_core_fail(nic, -EINVAL, DVX_DIAG_ARG, op, "remote QPN 0x%x invalid", qpn);
	if (dvx_be32_to_cpu(r->psn) > 0xffffffu)
		return bad(nic, op, "remote PSN wider than 24 bits");
	if (r->mtu < DVX_MLX5_MTU_256 || r->mtu > DVX_MLX5_MTU_4096)
		return dvx_core_fail(nic, -EINVAL, DVX_DIAG_ARG, op, "remote MTU %u invalid", r->mtu);
	if (!nic->roce && !dvx_be16_to_cpu(r->lid))
		return bad(nic, op, "remote LID 0 on InfiniBand");
	if (nic->roce && is_zero(r->gid, sizeof(r->gid)))
		return bad(nic, op, "remote GID is zero on RoCE");
	return 0;
}

static uint16_t udp_sport(const struct dvx_nic *nic, uint32_t lqpn, uint32_t rqpn)
{
	const struct dvx_mlx5_caps *c = &nic->caps;
	uint32_t h = lqpn ^ rqpn;

	if (c->roce_valid && c->r_roce_min_src_udp_port &&
	    c->r_roce_max_src_udp_port >= c->r_roce_min_src_udp_port)
		return (uint16_t)(c->r_roce_min_src_udp_port +
				  h % ((uint32_t)c->r_roce_max_src_udp_port -
				       c->r_roce_min_src_udp_port + 1));
	return (uint16_t)(0xc000u | (h & 0x3fffu));
}

/* the three mailboxes of one connection, built before anything is sent */
struct conn_cmds {
	uint8_t rst2init[DVX_MLX5_MODIFY_QP_IN_BYTES];
	uint8_t init2rtr[DVX_MLX5_MODIFY_QP_IN_BYTES];
	uint8_t rtr2rts[DVX_MLX5_MODIFY_QP_IN_BYTES];
};

static int build_cmds(struct dvx_qp *qp, const struct dvx_qp_conn *r,
		      const struct dvx_qp_connect_cfg *a, int loopback, struct conn_cmds *c,
		      const char *op)
{
	struct dvx_nic *nic = qp->nic;
	struct dvx_mlx5_rst2init_cfg ri;
	struct dvx_mlx5_init2rtr_cfg rr;
	struct dvx_mlx5_rtr2rts_cfg rs;
	unsigned log_rra, log_sra, mtu;
	int err;

	if (rd_atomic_log(a->max_dest_rd_atomic, nic->caps.log_max_ra_res_qp, &log_rra) ||
	    rd_atomic_log(a->max_rd_atomic, nic->caps.log_max_ra_req_qp, &log_sra))
		return dvx_core_fail(nic, -EINVAL, DVX_DIAG_ARG, op,
				     "read/atomic depths must be powers of two within the device's "
				     "2^%u (initiator) / 2^%u (responder)",
				     nic->caps.log_max_ra_req_qp, nic->caps.log_max_ra_res_qp);
	mtu = nic->mtu >= DVX_MLX5_MTU_256 && nic->mtu <= DVX_MLX5_MTU_4096 ? nic->mtu :
									      DVX_MLX5_MTU_1024;
	if (r->mtu < mtu)
		mtu = r->mtu;
	if (a->max_mtu && a->max_mtu < mtu)
		mtu = a->max_mtu;

	memset(&ri, 0, sizeof(ri));
	ri.rwe = (a->access & DVX_ACCESS_REMOTE_WRITE) != 0;
	ri.rre = (a->access & DVX_ACCESS_REMOTE_READ) != 0;
	ri.rae = (a->access & DVX_ACCESS_REMOTE_ATOMIC) != 0;
	ri.atomic_mode = ri.rae ? nic->atomic_mode : 0;
	ri.vhca_port_num = nic->port;

	memset(&rr, 0, sizeof(rr));
	rr.remote_qpn = dvx_be32_to_cpu(r->qpn);
	rr.next_rcv_psn = dvx_be32_to_cpu(r->psn);
	rr.mtu = (uint8_t)mtu;
	rr.log_msg_max = (uint8_t)(nic->caps.log_max_msg && nic->caps.log_max_msg < QP_LOG_MSG_MAX ?
					   nic->caps.log_max_msg : QP_LOG_MSG_MAX);
	rr.min_rnr_nak = a->min_rnr_nak;
	rr.log_rra_max = (uint8_t)log_rra;
	rr.path.vhca_port_num = nic->port;
	if (loopback) {
		rr.path.fl = 1;		/* the DPDK self-loop: no address at all (prm 1.8) */
		rr.path.roce = (uint8_t)nic->roce;
	} else if (!nic->roce) {
		rr.path.rlid = dvx_be16_to_cpu(r->lid);
		rr.path.sl = a->sl;
	} else {
		rr.path.roce = 1;
		memcpy(rr.path.rgid, r->gid, sizeof(rr.path.rgid));
		rr.path.src_addr_index = (uint8_t)nic->gid_index;
		rr.path.hop_limit = a->hop_limit;
		rr.path.tclass = a->traffic_class;
		rr.path.eth_prio = a->sl;
		/* the IP and UDP headers exist on RoCE v2 only: a RoCE v1 (GRH over
		 * Ethernet) path carries no DSCP and no UDP source port, as the kernel sets
		 * them (mlx5_set_path) and NVSHMEM's v1 port base 0 leaves them */
		if (nic->gid.type == DVX_GID_TYPE_ROCE_V2) {
			rr.path.dscp = a->traffic_class >> 2;
			rr.path.udp_sport = a->udp_sport ? a->udp_sport :
					    udp_sport(nic, qp->qpn, rr.remote_qpn);
		}
		err = dvx_hal_roce_rmac(&nic->hal, &nic->pd, nic->port, nic->gid_index, r->gid,
					rr.path.rmac);
		if (err)
			return dvx_core_hal_failed(nic, err, 0, "roce_rmac");
	}

	memset(&rs, 0, sizeof(rs));
	rs.next_send_psn = qp->psn;
	rs.retry_count = a->retry_count;
	rs.rnr_retry = a->rnr_retry;
	rs.ack_timeout = a->ack_timeout;
	rs.log_sra_max = (uint8_t)log_sra;

	if ((err = dvx_mlx5_rst2init_qp_in(c->rst2init, qp->qpn, &ri)) ||
	    (err = dvx_mlx5_init2rtr_qp_in(c->init2rtr, qp->qpn, &rr)) ||
	    (err = dvx_mlx5_rtr2rts_qp_in(c->rtr2rts, qp->qpn, &rs)))
		return dvx_core_fail(nic, err, DVX_DIAG_ARG, op,
				     "a connection value does not fit its field");
	return 0;
}

static int modify(struct dvx_qp *qp, const void *in, size_t inlen, uint32_t new_state)
{
	uint8_t out[DVX_MLX5_MODIFY_QP_OUT_BYTES];
	int err = dvx_core_obj_modify(qp->nic, &qp->obj, in, inlen, out, sizeof(out));

	if (err) {
		qp->nic->hal.diag.qpn = qp->qpn;
		return err;
	}
	qp->state = new_state;
	return 0;
}

static int to_rst(struct dvx_qp *qp)
{
	uint8_t in[DVX_MLX5_QP_2RST_IN_BYTES];
	int err = dvx_mlx5_qp_2rst_in(in, qp->qpn);

	return err ? err : modify(qp, in, sizeof(in), DVX_MLX5_QP_STATE_RST);
}

/* after a failed transition: back to RST so the call can be repeated; the first
 * failure stays in the diag */
static void back_to_rst(struct dvx_qp *qp)
{
	struct dvx_diag keep = qp->nic->hal.diag;

	if (qp->state != DVX_MLX5_QP_STATE_RST && to_rst(qp))
		dvx_hal_log(&qp->nic->hal.log, DVX_LOG_ERR, "QP 0x%x: 2RST after a failed "
			    "connect failed too; state %s", qp->qpn,
			    dvx_mlx5_qp_state_name(qp->state));
	qp->nic->hal.diag = keep;
}

static int do_connect(struct dvx_qp *qp, const struct dvx_qp_conn *remote,
		      const struct dvx_qp_connect_cfg *attr, int loopback, const char *op)
{
	struct dvx_qp_connect_cfg def;
	struct dvx_nic *nic;
	struct conn_cmds c;
	int err;

	if (!qp || !qp->live || !qp->nic)
		return -EINVAL;
	nic = qp->nic;
	if (!attr) {
		dvx_qp_connect_cfg_init(&def);
		attr = &def;
	}
	if (qp->state != DVX_MLX5_QP_STATE_RST)
		return dvx_core_fail(nic, -EINVAL, DVX_DIAG_STATE, op, "QP 0x%x is in %s, not RST",
				     qp->qpn, dvx_mlx5_qp_state_name(qp->state));
	if (!remote)
		return bad(nic, op, "remote info is NULL");
	err = remote_check(nic, remote, op);
	if (!err)
		err = attr_check(nic, attr, op);
	if (err)
		return err;
	if (loopback && !(nic->features & DVX_NIC_FEAT_LOOPBACK))
		return dvx_core_fail(nic, -EOPNOTSUPP, DVX_DIAG_ARG, op,
				     "%s does not allow force-loopback RC QPs: connect two local QPs "
				     "with dvx_qp_connect_pair()", nic->hal.info.name);
	err = build_cmds(qp, remote, attr, loopback, &c, op);
	if (err)
		return err;

	err = modify(qp, c.rst2init, sizeof(c.rst2init), DVX_MLX5_QP_STATE_INIT);
	if (!err)
		err = modify(qp, c.init2rtr, sizeof(c.init2rtr), DVX_MLX5_QP_STATE_RTR);
	if (!err)
		err = modify(qp, c.rtr2rts, sizeof(c.rtr2rts), DVX_MLX5_QP_STATE_RTS);
	if (err) {
		back_to_rst(qp);
		return err;
	}
	if (remote != &qp->remote)
		qp->remote = *remote;
	if (attr != &qp->conn_attr)
		qp->conn_attr = *attr;
	qp->conn_kind = loopback ? DVX_QP_CONN_LOOPBACK : DVX_QP_CONN_REMOTE;
	dvx_hal_log(&nic->hal.log, DVX_LOG_DEBUG, "QP 0x%x connected to QP 0x%x%s", qp->qpn,
		    dvx_be32_to_cpu(remote->qpn), loopback ? " (force-loopback)" : "");
	return 0;
}

static int qp_connect_do(struct dvx_qp *qp, const struct dvx_qp_conn *remote,
		   const struct dvx_qp_connect_cfg *attr)
{
	return do_connect(qp, remote, attr, 0, "dvx_qp_connect");
}

int dvx_qp_connect(struct dvx_qp *qp, const struct dvx_qp_conn *remote,
		   const struct dvx_qp_connect_cfg *attr)
{
	struct dvx_nic *n = qp ? qp->nic : NULL;
	int err = qp_connect_do(qp, remote, attr);

	if (!err && n)
		dvx_core_ok(n);
	return err;
}

static int qp_connect_loopback_do(struct dvx_qp *qp, const struct dvx_qp_connect_cfg *attr)
{
	struct dvx_qp_conn self;

	if (dvx_qp_export(qp, &self))
		return -EINVAL;
	return do_connect(qp, &self, attr, 1, "dvx_qp_connect_loopback");
}

int dvx_qp_connect_loopback(struct dvx_qp *qp, const struct dvx_qp_connect_cfg *attr)
{
	struct dvx_nic *n = qp ? qp->nic : NULL;
	int err = qp_connect_loopback_do(qp, attr);

	if (!err && n)
		dvx_core_ok(n);
	return err;
}

static int qp_connect_pair_do(struct dvx_qp *a, struct dvx_qp *b,
			const struct dvx_qp_connect_cfg *attr)
{
	struct dvx_qp_conn ca, cb;
	int err;

	if (!a || !b || a == b || dvx_qp_export(a, &ca) || dvx_qp_export(b, &cb))
		return -EINVAL;
	if (b->state != DVX_MLX5_QP_STATE_RST)
		return dvx_core_fail(b->nic, -EINVAL, DVX_DIAG_STATE, "dvx_qp_connect_pair",
				     "QP 0x%x is in %s, not RST", b->qpn,
				     dvx_mlx5_qp_state_name(b->state));
	err = dvx_qp_connect(a, &cb, attr);
	if (err)
		return err;
	err = dvx_qp_connect(b, &ca, attr);
	if (err) {
		struct dvx_diag keep = b->nic->hal.diag;

		back_to_rst(a);
		b->nic->hal.diag = keep;
		a->conn_kind = DVX_QP_CONN_NONE;
	}
	return err;
}

int dvx_qp_connect_pair(struct dvx_qp *a, struct dvx_qp *b,
			const struct dvx_qp_connect_cfg *attr)
{
	struct dvx_nic *n = a ? a->nic : NULL;
	int err = qp_connect_pair_do(a, b, attr);

	if (!err && n)
		dvx_core_ok(n);
	return err;
}

static int qp_to_err_do(struct dvx_qp *qp)
{
	uint8_t in[DVX_MLX5_QP_2ERR_IN_BYTES];
	int err;

	if (!qp || !qp->live || !qp->nic)
		return -EINVAL;
	err = dvx_mlx5_qp_2err_in(in, qp->qpn);
	if (err)
		return err;
	return modify(qp, in, sizeof(in), DVX_MLX5_QP_STATE_ERR);
}

int dvx_qp_to_err(struct dvx_qp *qp)
{
	struct dvx_nic *n = qp ? qp->nic : NULL;
	int err = qp_to_err_do(qp);

	if (!err && n)
		dvx_core_ok(n);
	return err;
}

/* skip the CQEs a reset QP left in a CQ it alone uses (see dvx_qp_recover()) */
static int cq_resync(struct dvx_cq *cq)
{
	uint8_t in[DVX_MLX5_QUERY_CQ_IN_BYTES], out[DVX_MLX5_QUERY_CQ_OUT_BYTES];
	struct dvx_mlx5_cq_query q;
	int err;

	err = dvx_mlx5_query_cq_in(in, cq->cqn);
	if (!err)
		err = dvx_core_obj_query(cq->nic, &cq->obj, in, sizeof(in), out, sizeof(out));
	if (!err)
		err = dvx_mlx5_query_cq_out(out, sizeof(out), &q);
	if (err)
		return err;
	cq->mcq.ci += (q.producer_counter - cq->mcq.ci) & DVX_MLX5_CQ_CI_MASK;
	cq->index_base = cq->mcq.ci & DVX_MLX5_CQ_CI_MASK;
	if (cq->dbr_umem->cpu)
		dvx_mlx5_cq_update_ci(&cq->mcq);
	return 0;
}

static int qp_recover_do(struct dvx_qp *qp)
{
	static const char op[] = "dvx_qp_recover";
	int err;

	if (!qp || !qp->live || !qp->nic)
		return -EINVAL;
	if (qp->conn_kind == DVX_QP_CONN_NONE)
		return dvx_core_fail(qp->nic, -EINVAL, DVX_DIAG_STATE, op,
				     "QP 0x%x was never connected: nothing to recover to", qp->qpn);
	if (qp->state != DVX_MLX5_QP_STATE_RST) {
		err = to_rst(qp);
		if (err)
			return err;
	}
	/* the device forgot the QP's queues: so does software */
	dvx_mlx5_sq_ctrs_set(&qp->sqc, 0);
	if (qp->rq.nwqe)
		dvx_mlx5_rq_reset(&qp->rq);
	if (qp->dbr_umem->cpu) {
		DVX_WRITE_ONCE(qp->dbrec[DVX_MLX5_RCV_DBR], 0);
		DVX_WRITE_ONCE(qp->dbrec[DVX_MLX5_SND_DBR], 0);
	}
	if (qp->send_cq->users == 1 && (err = cq_resync(qp->send_cq)))
		return err;
	if (qp->recv_cq && qp->recv_cq != qp->send_cq && qp->recv_cq->users == 1 &&
	    (err = cq_resync(qp->recv_cq)))
		return err;
	err = do_connect(qp, &qp->remote, &qp->conn_attr,
			 qp->conn_kind == DVX_QP_CONN_LOOPBACK, op);
	if (err)
		return err;
	qp->recoveries++;
	return 0;
}

int dvx_qp_recover(struct dvx_qp *qp)
{
	struct dvx_nic *n = qp ? qp->nic : NULL;
	int err = qp_recover_do(qp);

	if (!err && n)
		dvx_core_ok(n);
	return err;
}

static int qp_query_do(struct dvx_qp *qp, struct dvx_mlx5_qp_query *q, uint32_t *state)
{
	uint8_t in[DVX_MLX5_QUERY_QP_IN_BYTES], out[DVX_MLX5_QUERY_QP_OUT_BYTES];
	struct dvx_mlx5_qp_query r;
	int err;

	if (!qp || !qp->live || !qp->nic)
		return -EINVAL;
	err = dvx_mlx5_query_qp_in(in, qp->qpn);
	if (!err)
		err = dvx_core_obj_query(qp->nic, &qp->obj, in, sizeof(in), out, sizeof(out));
	if (!err)
		err = dvx_mlx5_query_qp_out(out, sizeof(out), &r);
	if (err)
		return err;
	if ((r.state == DVX_MLX5_QP_STATE_ERR || r.state == DVX_MLX5_QP_STATE_SQER) &&
	    qp->state == DVX_MLX5_QP_STATE_RTS)
		qp->state = r.state;
	if (q)
		*q = r;
	if (state)
		*state = r.state;
	return 0;
}

int dvx_qp_query(struct dvx_qp *qp, struct dvx_mlx5_qp_query *q, uint32_t *state)
{
	struct dvx_nic *n = qp ? qp->nic : NULL;
	int err = qp_query_do(qp, q, state);

	if (!err && n)
		dvx_core_ok(n);
	return err;
}
