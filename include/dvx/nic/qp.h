/* SPDX-License-Identifier: MIT */
/*
 * dvx/nic/qp.h - RC queue pairs: create, connect (IB or RoCE v2, loopback, local pair),
 * error and recovery, query, destroy.
 *
 * A QP's work queue (RQ first, then SQ) and its 8-byte doorbell record live in caller
 * umems (dvx/nic/umem.h). The QP carries the ring state posters use: struct dvx_mlx5_sq
 * and its posting counters (dvx/mlx5/sq.h) and, with a receive queue, struct
 * dvx_mlx5_rq, so WQEs are built with the dvx/mlx5 builders, reserved and rung with
 * the SQ protocol (dvx_mlx5_sq_reserve(&qp->sq, &qp->sqc, ...), dvx_mlx5_sq_ring()).
 *
 * State (qp->state, enum dvx_mlx5_qp_state values):
 *
 *	RST --connect--> INIT --> RTR --> RTS --to_err / error CQE--> ERR
 *	 ^                                                            |
 *	 +---------------- recover (2RST, then INIT, RTR, RTS) -------+
 *
 * dvx tracks the state it moved the QP to; dvx_qp_query() reads the hardware's and
 * adopts ERR/SQER when the device moved the QP there itself (an error completion).
 */
#ifndef DVX_NIC_QP_H
#define DVX_NIC_QP_H

#include <dvx/nic/cq.h>
#include <dvx/mlx5/cmd.h>
#include <dvx/mlx5/sq.h>
#include <dvx/mlx5/rq.h>

DVX_BEGIN_DECLS

/* struct dvx_qp_cfg.flags */
enum {
	DVX_QP_F_CD_MASTER = 1u << 0,	/* may post WAIT / SEND_EN / RECV_EN (needs CD) */
	DVX_QP_F_CD_SLAVE_SEND = 1u << 1,	/* SQ gated by another QP's SEND_EN (needs CD) */
	DVX_QP_F_CD_SLAVE_RECV = 1u << 2,	/* RQ gated by RECV_EN (needs CD and an RQ) */
	DVX_QP_F_PREINIT = 1u << 3,	/* the caller zeroed the doorbell record itself */
};

/**
 * struct dvx_qp_cfg - an RC QP to create.
 * @sq_depth:	SQ size in WQEBBs (64 B), a power of two, at most
 *		2^min(15, cap log_max_qp_sz), and at least the WQEBBs of one largest WQE
 * @max_inline:	inline payload bytes one RDMA WRITE must carry; the largest WQE
 *		(ctrl + raddr + inline header + payload) must fit cap max_wqe_sz_sq
 * @rq_depth:	receive WQEs, a power of two up to 2^15; 0 for a zero-length RQ
 * @rq_max_sge:	data segments per receive WQE (1 .. cap max_wqe_sz_rq / 16); with
 *		@rq_depth only
 * @send_cq:	send CQ (required)
 * @recv_cq:	receive CQ; NULL means @send_cq. Only with @rq_depth
 * @uar:	UAR the SQ doorbell goes to: NULL for the NIC's default, another QP's
 *		(dvx_qp.uar) to share it (a companion shares its main QP's), or one
 *		of the caller's own from dvx_uar_alloc()
 * @user_index:	24 bits, echoed in CQEs (srqn_uidx, cqe_version 1)
 * @psn:	this QP's first send PSN (24 bits), sent to the peer by dvx_qp_export()
 * @flags:	DVX_QP_F_*
 * @wq_umem:	umem holding the work queue
 * @wq_offset:	WQ offset in @wq_umem (multiple of wq_umem->ring_align); the RQ is at
 *		@wq_offset, the SQ right behind it
 * @dbr_umem:	umem holding the 8-byte doorbell record
 * @dbr_offset:	record offset (multiple of 8)
 * @sq_wr_ids:	NULL, or @sq_depth entries of caller memory: the wr_id of each post of
 *		dvx/nic/post.h, returned by dvx_cq_poll() (NULL: the WQE index is)
 * @rq_wr_ids:	likewise @rq_depth entries for receives
 *
 * WQ bytes: DVX_QP_WQ_BYTES(sq_depth, rq_depth, DVX_RQ_STRIDE(rq_max_sge)). The record
 * is zeroed by dvx before CREATE_QP when the CPU can write it; otherwise the caller
 * zeroes it and passes DVX_QP_F_PREINIT.
 */
struct dvx_qp_cfg {
	uint32_t sq_depth;
	uint32_t max_inline;
	uint32_t rq_depth;
	uint32_t rq_max_sge;
	struct dvx_cq *send_cq;
	struct dvx_cq *recv_cq;
	struct dvx_uar *uar;
	uint32_t user_index;
	uint32_t psn;
	uint32_t flags;
	uint32_t rsvd;
	struct dvx_umem *wq_umem;
	uint64_t wq_offset;
	struct dvx_umem *dbr_umem;
	uint64_t dbr_offset;
	uint64_t *sq_wr_ids;
	uint64_t *rq_wr_ids;
};

#define DVX_QP_CONN_VERSION 1u

/**
 * struct dvx_qp_conn - what one side sends the other to connect (48 bytes).
 * Multi-byte fields are big-endian, so the bytes can go over any wire as they are.
 * @version:	DVX_QP_CONN_VERSION
 * @link_layer:	enum dvx_link_layer of the sender's port
 * @port:	sender's port (information only)
 * @mtu:	sender's active MTU (IB enum 1..5)
 * @qpn:	sender's QP number, BE
 * @psn:	the first PSN the sender will send, BE
 * @lid:	sender's LID, BE (IB)
 * @gid_index:	sender's GID index (information only)
 * @flags:	0
 * @gid:	sender's GID, network order (RoCE; IB: the port GID, unused)
 * @rsvd:	0
 */
struct dvx_qp_conn {
	uint8_t version;
	uint8_t link_layer;
	uint8_t port;
	uint8_t mtu;
	dvx_be32 qpn;
	dvx_be32 psn;
	dvx_be16 lid;
	uint8_t gid_index;
	uint8_t flags;
	uint8_t gid[16];
	uint8_t rsvd[16];
};
DVX_ASSERT_SIZE(struct dvx_qp_conn, 48);

/**
 * struct dvx_qp_connect_cfg - connection parameters (dvx_qp_connect_cfg_init()
 * fills the usual values; every field is used as given).
 * @access:	what the peer may do here: DVX_ACCESS_REMOTE_WRITE / _READ / _ATOMIC
 *		(rwe/rre/rae at RST2INIT; atomic_mode from the NIC's caps)
 * @max_mtu:	upper bound on the path MTU (IB enum), 0 for none; the MTU used is
 *		min(local active, remote, @max_mtu)
 * @min_rnr_nak: RNR NAK timer code (0..31), default 12
 * @retry_count: transport retries (0..7), default 7
 * @rnr_retry:	RNR retries (0..7, 7 = infinite), default 7
 * @ack_timeout: 4.096 us * 2^n (0..31; 0 = infinite), default 20
 * @sl:		IB service level (0..15) / RoCE Ethernet priority (0..7), default 0
 * @traffic_class: GRH traffic class (RoCE; DSCP = tclass >> 2), default 0
 * @hop_limit:	GRH hop limit (RoCE), default 255
 * @max_rd_atomic: initiator RDMA-read/atomic depth, power of two; 0 = device maximum
 * @max_dest_rd_atomic: responder depth, power of two; 0 = device maximum
 * @udp_sport:	RoCE v2 UDP source port; 0 = derived from the QPNs inside the
 *		device's range (roce cap r_roce_*_src_udp_port), else 0xC000 | bits
 */
struct dvx_qp_connect_cfg {
	uint32_t access;
	uint8_t max_mtu;
	uint8_t min_rnr_nak;
	uint8_t retry_count;
	uint8_t rnr_retry;
	uint8_t ack_timeout;
	uint8_t sl;
	uint8_t traffic_class;
	uint8_t hop_limit;
	uint16_t max_rd_atomic;
	uint16_t max_dest_rd_atomic;
	uint16_t udp_sport;
	uint16_t rsvd;
};

/* how a QP was last connected (dvx_qp.conn_kind) */
enum dvx_qp_conn_kind {
	DVX_QP_CONN_NONE = 0,
	DVX_QP_CONN_REMOTE = 1,		/* dvx_qp_connect() / dvx_qp_connect_pair() */
	DVX_QP_CONN_LOOPBACK = 2,	/* dvx_qp_connect_loopback(): fl = 1, to itself */
};

/**
 * struct dvx_qp - an RC QP, in caller storage.
 * @sq:		send queue as posters see it (ring, record, UAR register, BlueFlame half)
 * @sqc:	its posting counters (one CPU poster at a time unless the caller shares
 *		them with DVX_MLX5_SQ_SHARED)
 * @rq:		receive ring state; rq.nwqe 0 for a zero-length RQ
 * @obj:	the DEVX object
 * @nic:	the NIC
 * @send_cq:	send CQ
 * @recv_cq:	receive CQ (NULL without an RQ)
 * @uar:	the UAR whose register @uar_reg is
 * @wq_umem:	umem of the work queue
 * @dbr_umem:	umem of the record
 * @wq:		address of the work queue (the RQ, then the SQ)
 * @dbrec:	address of the doorbell record (word 0 RQ, word 1 SQ)
 * @uar_reg:	the register doorbells are written to
 * @wq_offset:	WQ offset in @wq_umem
 * @dbr_offset:	record offset in @dbr_umem
 * @qpn:	QP number
 * @state:	enum dvx_mlx5_qp_state as dvx last moved it (or dvx_qp_query() saw it)
 * @flags:	DVX_QP_F_* it was created with
 * @psn:	first send PSN
 * @user_index:	the user index
 * @sq_bytes:	SQ bytes
 * @rq_bytes:	RQ bytes (0 for a zero-length RQ)
 * @max_inline:	inline bytes a WRITE may carry
 * @max_wqe_bytes: bytes of the largest WQE the QP was sized for
 * @conn_kind:	enum dvx_qp_conn_kind
 * @remote:	the peer's connection info (kept for dvx_qp_recover())
 * @conn_attr:	the connection parameters used (kept for dvx_qp_recover())
 * @recoveries:	times dvx_qp_recover() brought it back
 * @live:	DVX_LIVE between create and destroy (a create into a live object is -EBUSY)
 * @wq_ext, @dbr_ext: the work queue's and the record's ranges in their umems' lists
 * @sq_wr_ids, @rq_wr_ids: the caller's wr_id arrays (struct dvx_qp_cfg), or NULL
 * @sq_wr_slot:	where posts store wr_ids: @sq_wr_ids, or @wr_sink when there is none
 *		(so a post stores unconditionally: no test on the data path)
 * @sq_wr_mask:	@sq_depth - 1 with @sq_wr_ids, 0 with the sink
 * @wr_sink:	the one slot wr_ids go to when the caller keeps none (never read)
 * @kick:	1 when the backend wants dvx_hal_nic_kick() after each doorbell (the sim,
 *		whose progress thread may sleep); 0 on hardware
 * @cq_next:	the next QP on the send CQ's [0] and the receive CQ's [1] list (one
 *		entry, [0], when both are the same CQ): dvx_cq_poll() finds a QP by QPN
 */
struct dvx_qp {
	struct dvx_mlx5_sq sq;
	struct dvx_mlx5_sq_ctrs sqc;
	struct dvx_mlx5_rq rq;
	struct dvx_hal_obj obj;
	struct dvx_nic *nic;
	struct dvx_cq *send_cq;
	struct dvx_cq *recv_cq;
	struct dvx_uar *uar;
	struct dvx_umem *wq_umem;
	struct dvx_umem *dbr_umem;
	uint8_t *wq;
	dvx_be32 *dbrec;
	uint8_t *uar_reg;
	uint64_t wq_offset;
	uint64_t dbr_offset;
	uint32_t qpn;
	uint32_t state;
	uint32_t flags;
	uint32_t psn;
	uint32_t user_index;
	uint32_t max_inline;
	uint64_t sq_bytes;
	uint64_t rq_bytes;
	uint32_t max_wqe_bytes;
	uint32_t conn_kind;
	struct dvx_qp_conn remote;
	struct dvx_qp_connect_cfg conn_attr;
	uint32_t recoveries;
	uint32_t live;
	struct dvx_umem_ext wq_ext;
	struct dvx_umem_ext dbr_ext;
	uint64_t *sq_wr_ids;
	uint64_t *rq_wr_ids;
	struct dvx_qp *cq_next[2];
	uint64_t *sq_wr_slot;
	uint32_t sq_wr_mask;
	uint32_t kick;
	uint64_t wr_sink;
};

/**
 * dvx_qp_mem_req() - the memory a QP of @attr needs (reads sq_depth, rq_depth,
 * rq_max_sge and max_inline only).
 * @wq:		work-queue bytes and alignment (DVX_RING_ALIGN)
 * @dbr:	DVX_DBR_BYTES, DVX_DBR_ALIGN
 * Return: 0 or -EINVAL (depth 0 or not a power of two, too large, inline too big).
 */
int dvx_qp_mem_req(const struct dvx_qp_cfg *attr, struct dvx_mem_req *wq,
		   struct dvx_mem_req *dbr);

/**
 * dvx_qp_create() - CREATE_QP for an RC QP in caller umems; set up sq/rq ring state.
 * @nic:	an open NIC
 * @attr:	the QP
 * @qp:		caller storage, overwritten on success only
 *
 * Writes st = RC, pm_state = MIGRATED, pd, uar_page, user_index, cqn_snd/rcv,
 * log_sq_size, rq_type (regular or zero-length), log_rq_size/stride, log_msg_max =
 * min(30, cap), cd_* bits, dbr and wq umem ids and offsets.
 *
 * Context: control path. Return: 0; -EINVAL (bad argument, nothing touched); -EBUSY
 * (@qp is live, or the work queue or the record overlaps a live CQ's or QP's ring or
 * record in the same umem, or each other: nothing touched); -EOPNOTSUPP (core-direct bits without the cd cap, sizes beyond the caps); or the
 * hal's error ("CREATE_QP: ..."). After a hal error the record may be zeroed.
 */
int dvx_qp_create(struct dvx_nic *nic, const struct dvx_qp_cfg *attr, struct dvx_qp *qp);

/**
 * dvx_qp_destroy() - destroy the QP (any state).
 * Return: 0; -EINVAL (not live); or the hal's error (the QP stays).
 */
int dvx_qp_destroy(struct dvx_qp *qp);

/**
 * dvx_qp_export() - this QP's connection info, to send to the peer.
 * @qp:		a live QP
 * @conn:	filled (48 bytes, byte order defined)
 * Return: 0 or -EINVAL.
 */
int dvx_qp_export(const struct dvx_qp *qp, struct dvx_qp_conn *conn);

/** dvx_qp_connect_cfg_init() - the usual parameters (see struct dvx_qp_connect_cfg). */
void dvx_qp_connect_cfg_init(struct dvx_qp_connect_cfg *attr);

/**
 * dvx_qp_connect() - RST -> INIT -> RTR -> RTS to the peer described by @remote.
 * @qp:		a QP in RST
 * @remote:	the peer's dvx_qp_export() output
 * @attr:	parameters, NULL for dvx_qp_connect_cfg_init()'s
 *
 * IB ports use the LID path (rlid, sl, no GRH); RoCE ports the GID path (rgid, the
 * peer MAC from the hal's roce_rmac, udp_sport, hop_limit, traffic class, source GID
 * index). MTU = min of both sides (and @attr->max_mtu); PSNs from both exports.
 *
 * Context: control path. Return: 0 (qp->state RTS); -EINVAL (bad @remote: version,
 * link layer differs, QPN 0 or > 24 bits, MTU, LID 0 on IB, zero GID on RoCE; bad
 * @attr; QP not in RST), nothing sent; -EOPNOTSUPP (remote atomic access without
 * atomics); or the failed command's error. When a transition fails, dvx moves the
 * QP back to RST (2RST, best effort) so the call may be repeated; qp->state says
 * where it is.
 */
int dvx_qp_connect(struct dvx_qp *qp, const struct dvx_qp_conn *remote,
		   const struct dvx_qp_connect_cfg *attr);

/**
 * dvx_qp_connect_loopback() - connect the QP to itself with force-loopback (fl = 1):
 * the DPDK self-loop (prm 1.8), no addresses needed.
 * @qp:		a QP in RST
 * @attr:	parameters (access, depths, retries), NULL for the defaults
 *
 * Return: 0; -EOPNOTSUPP when the device does not allow force-loopback RC QPs
 * (DVX_NIC_FEAT_LOOPBACK), with a message: connect two local QPs with
 * dvx_qp_connect_pair() instead; otherwise as dvx_qp_connect().
 */
int dvx_qp_connect_loopback(struct dvx_qp *qp, const struct dvx_qp_connect_cfg *attr);

/**
 * dvx_qp_connect_pair() - connect two local QPs (same or different NICs) to each other.
 * @a:		a QP in RST
 * @b:		another QP in RST
 * @attr:	parameters for both, NULL for the defaults
 *
 * Return: 0, or as dvx_qp_connect(); when @b fails, @a is moved back to RST too.
 */
int dvx_qp_connect_pair(struct dvx_qp *a, struct dvx_qp *b,
			const struct dvx_qp_connect_cfg *attr);

/**
 * dvx_qp_to_err() - move the QP to ERR (2ERR_QP): outstanding WQEs complete with
 * flush errors.
 * Return: 0 or the command's error (state unchanged).
 */
int dvx_qp_to_err(struct dvx_qp *qp);

/**
 * dvx_qp_recover() - bring a connected QP back to RTS with the stored peer info.
 * @qp:		a QP connected before (any state)
 *
 * Sequence: 2RST (unless already RST); then, software side: the SQ (pi, ci, doorbell
 * state, BlueFlame half) and the RQ (pi, ci) restart at 0 and both doorbell-record
 * words are zeroed (when the CPU can write the record; otherwise the caller must zero
 * it before calling); each bound CQ used by this QP alone is re-synchronised: QUERY_CQ
 * reads its producer counter, every CQE still in the ring (the flush completions) is
 * skipped by moving mcq.ci to that counter, the CI record is written, and
 * cq->index_base takes that value (CQ index of the new WQE index 0, for WAIT-on-CQ).
 * A CQ shared with other QPs is left alone: the caller drains it. Then RST2INIT,
 * INIT2RTR and RTR2RTS with the stored connection info and parameters (loopback QPs
 * reconnect to themselves). The peer must recover its side too (RC PSNs restart at the
 * exported values). WQEs posted before are gone; the caller reposts what it needs.
 *
 * Context: control path; nothing may post to the QP meanwhile. Return: 0 (state RTS),
 * -EINVAL (never connected), or the failed command's error (qp->state says where it
 * stopped; calling again retries).
 */
int dvx_qp_recover(struct dvx_qp *qp);

/**
 * dvx_qp_query() - QUERY_QP: the hardware's view.
 * @qp:		a live QP
 * @q:		filled (state, PSNs, counters, ...), may be NULL
 * @state:	receives the hardware state (enum dvx_mlx5_qp_state), may be NULL
 *
 * When the hardware reports ERR or SQER while dvx thought RTS, qp->state adopts it.
 * Return: 0 or the command's error.
 */
int dvx_qp_query(struct dvx_qp *qp, struct dvx_mlx5_qp_query *q, uint32_t *state);

DVX_END_DECLS

#endif /* DVX_NIC_QP_H */
