/* SPDX-License-Identifier: MIT */
/*
 * dvx/nic/post.h - posting work on a dvx_qp and polling its completions from the CPU,
 * with a caller's work-request id per WQE (docs/core.md "The data path").
 *
 * Thin and inline: each post is the reservation, the builder and the doorbell of
 * dvx/mlx5/sq.h and dvx/mlx5/wqe.h (the same bytes), plus the wr_id stored in the
 * slot's entry of the caller's array (struct dvx_qp_cfg.sq_wr_ids / rq_wr_ids). No
 * allocation, no lock: one thread posts to a QP and one thread polls a CQ (they may be
 * the same thread). QPs that share a BlueFlame UAR page (dvx_qp_cfg.uar) must also
 * share that thread: their BlueFlame copies use one register (the NIC's default UAR is
 * non-cached, where 8-byte doorbells need no such care). A post with DVX_POST_MORE
 * writes the WQE without ringing; the next post to the same queue (send or receive)
 * without it rings once for the whole batch, and dvx_qp_ring() rings both queues. A
 * live QP, CQ or umem must not be moved or copied: CQs find their QPs, and umems their
 * users' ranges, through lists threaded through those structs.
 *
 *	dvx_qp_post_write(qp, 7, laddr, lkey, 4096, raddr, rkey, DVX_POST_SIGNALED);
 *	do
 *		n = dvx_cq_poll(&cq, &wc);	// 1: wc.wr_id == 7; < 0: wc.status
 *	while (n == 0);
 */
#ifndef DVX_NIC_POST_H
#define DVX_NIC_POST_H

#include <dvx/nic/qp.h>
#include <dvx/mlx5/wqe.h>

DVX_BEGIN_DECLS

/** enum dvx_post_flags - what a post asks for. */
enum dvx_post_flags {
	DVX_POST_SIGNALED = 1u << 0,	/* a completion for this WQE; unsignaled WQEs complete
					 * silently with the next signaled one */
	DVX_POST_FENCE = 1u << 1,	/* start after earlier RDMA READs and atomics answered */
	DVX_POST_SOLICITED = 1u << 2,	/* SEND: the receiver's solicited event */
	DVX_POST_INLINE = 1u << 3,	/* WRITE/SEND: copy the payload into the WQE (at most
					 * qp->max_inline bytes; the buffer is free on return) */
	DVX_POST_MORE = 1u << 4,	/* more posts follow: no doorbell yet */
};

/** enum dvx_wc_opcode - what completed. */
enum dvx_wc_opcode {
	DVX_WC_SEND = 0,
	DVX_WC_RDMA_WRITE,
	DVX_WC_RDMA_READ,
	DVX_WC_FETCH_ADD,
	DVX_WC_COMP_SWAP,
	DVX_WC_RECV,		/* a SEND landed in a posted receive */
	DVX_WC_RECV_RDMA_WITH_IMM,	/* a WRITE with immediate consumed a posted receive */
	DVX_WC_OTHER,
};

/**
 * struct dvx_wc - one completion.
 * @wr_id:	the id given to the post (without sq_wr_ids/rq_wr_ids: the WQE's index)
 * @status:	0, or the negative errno of an error completion (dvx_mlx5_cqe_syndrome_errno())
 * @opcode:	enum dvx_wc_opcode
 * @qpn:	the QP it belongs to
 * @byte_len:	receives: bytes that landed; READ and atomics: bytes returned
 * @imm:	the immediate (RECV of SEND_IMM, RECV_RDMA_WITH_IMM), CPU order
 * @syndrome, @vendor_syndrome: of an error completion (docs/errors.md)
 * @qp:		the dvx_qp it belongs to
 */
struct dvx_wc {
	uint64_t wr_id;
	int32_t status;
	uint32_t opcode;
	uint32_t qpn;
	uint32_t byte_len;
	uint32_t imm;
	uint8_t syndrome;
	uint8_t vendor_syndrome;
	uint16_t rsvd;
	struct dvx_qp *qp;
};

/**
 * dvx_post_fm_ce_se() - the ctrl segment's fm_ce_se byte for enum dvx_post_flags.
 * @flags:	SIGNALED, SOLICITED, FENCE (rdma-core's IBV_SEND_FENCE mode)
 * Context: any. Return: the byte.
 */
static inline uint8_t dvx_post_fm_ce_se(uint32_t flags)
{
	return (uint8_t)(((flags & DVX_POST_SIGNALED) ? DVX_MLX5_WQE_CTRL_CQ_UPDATE : 0) |
			 ((flags & DVX_POST_SOLICITED) ? DVX_MLX5_WQE_CTRL_SOLICITED : 0) |
			 ((flags & DVX_POST_FENCE) ?
				  DVX_MLX5_WQE_CTRL_FM(DVX_MLX5_FM_FENCE_AND_INITIATOR_SMALL) :
				  0));
}

/**
 * dvx_post_done() - after the builder: give back the claim if it failed, else keep the
 * wr_id in the slot's entry and ring unless DVX_POST_MORE.
 * @qp:		the QP
 * @t:		the claim's first WQEBB
 * @n:		the builder's answer (WQEBBs, or a negative errno)
 * @wr_id:	the caller's id
 * @flags:	enum dvx_post_flags
 * Context: the QP's one posting thread. Return: 0 or @n when negative.
 */
static inline int dvx_post_done(struct dvx_qp *qp, uint64_t t, int n, uint64_t wr_id,
				uint32_t flags)
{
	if (dvx_unlikely(n < 0)) {
		qp->sqc.resv = t;	/* nothing was claimed */
		return n;
	}
	qp->sq_wr_slot[(uint32_t)t & qp->sq_wr_mask] = wr_id;	/* or the QP's sink */
	if (!(flags & DVX_POST_MORE)) {
		dvx_mlx5_sq_ring(&qp->sq, &qp->sqc, t);
		if (dvx_unlikely(qp->kick))
			dvx_hal_nic_kick(&qp->nic->hal);
	}
	return 0;
}

/**
 * dvx_post_claim() - claim @n WQEBBs of the QP's ring (single poster).
 * @qp:		the QP
 * @n:		WQEBBs
 * @t:		the first one, on success
 * Context: the QP's one posting thread. Return: 0; -ENOSPC (poll completions first);
 * -EINVAL (@n 0 or larger than the ring).
 */
static inline int dvx_post_claim(struct dvx_qp *qp, uint32_t n, uint64_t *t)
{
	return dvx_mlx5_sq_reserve(&qp->sq, &qp->sqc, n, DVX_MLX5_SQ_SINGLE, t);
}

/**
 * dvx_post_inline_wqebb() - WQEBBs of an inline WQE.
 * @hdr_ds:	16-byte segments before the inline header (ctrl, raddr)
 * @len:	payload bytes
 * Context: any. Return: the WQEBBs.
 */
static inline uint32_t dvx_post_inline_wqebb(uint32_t hdr_ds, uint32_t len)
{
	return dvx_mlx5_ds_to_wqebb(hdr_ds + (4 + len + 15) / 16);
}

/**
 * dvx_qp_post_rdma() - post an RDMA WRITE, WRITE with immediate or READ of one buffer.
 * @qp:		a connected QP (the caller's one poster)
 * @opcode:	DVX_MLX5_OPCODE_RDMA_WRITE, _RDMA_WRITE_IMM or _RDMA_READ
 * @wr_id:	returned with the completion
 * @l:		the local buffer: address, lkey and length (READ: where the bytes land;
 *		< 2^31 bytes, 0 is a zero-length operation); read during the call only
 * @r:		the remote buffer: address and rkey
 * @imm:	WRITE_IMM's immediate (CPU order)
 * @flags:	enum dvx_post_flags (INLINE: WRITE only, @l's address is then a CPU
 *		pointer)
 *
 * Context: the QP's one posting thread. Return: 0; -ENOSPC (the ring is full of
 * uncompleted work: poll, then post again); -EINVAL (bad opcode or length);
 * -EMSGSIZE (inline above qp->max_inline). Nothing is posted on error.
 */
static inline int dvx_qp_post_rdma(struct dvx_qp *qp, uint8_t opcode, uint64_t wr_id,
				   const struct dvx_mlx5_sge *l, const struct dvx_mlx5_raddr *r,
				   uint32_t imm, uint32_t flags)
{
	uint8_t f = dvx_post_fm_ce_se(flags);
	uint32_t len = l->length;
	uint64_t t;
	int err, n;

	if (dvx_unlikely(flags & DVX_POST_INLINE)) {
		if (opcode == DVX_MLX5_OPCODE_RDMA_READ || len > qp->sq.wq.max_inline)
			return len > qp->sq.wq.max_inline ? -EMSGSIZE : -EINVAL;
		err = dvx_post_claim(qp, dvx_post_inline_wqebb(2, len), &t);
		if (err)
			return err;
		n = dvx_mlx5_wqe_rdma_write_inline(&qp->sq.wq, (uint32_t)t, opcode, f, imm, r,
						   (const void *)(uintptr_t)l->addr, len);
		return dvx_post_done(qp, t, n, wr_id, flags);
	}
	err = dvx_post_claim(qp, 1, &t);
	if (err)
		return err;
	n = dvx_mlx5_wqe_rdma(&qp->sq.wq, (uint32_t)t, opcode, f, imm, r, l);
	return dvx_post_done(qp, t, n, wr_id, flags);
}

/** dvx_qp_post_write() - RDMA WRITE of one buffer (dvx_qp_post_rdma()). Return: as it. */
static inline int dvx_qp_post_write(struct dvx_qp *qp, uint64_t wr_id, uint64_t laddr,
				    uint32_t lkey, uint32_t len, uint64_t raddr, uint32_t rkey,
				    uint32_t flags)
{
	struct dvx_mlx5_sge l = { laddr, len, lkey };
	struct dvx_mlx5_raddr r = { raddr, rkey };

	return dvx_qp_post_rdma(qp, DVX_MLX5_OPCODE_RDMA_WRITE, wr_id, &l, &r, 0, flags);
}

/**
 * dvx_qp_post_write_imm() - RDMA WRITE with an immediate: it consumes a receive at the
 * peer, whose completion carries @imm. Arguments as dvx_qp_post_rdma(). Return: as
 * dvx_qp_post_rdma().
 */
static inline int dvx_qp_post_write_imm(struct dvx_qp *qp, uint64_t wr_id,
					const struct dvx_mlx5_sge *l,
					const struct dvx_mlx5_raddr *r, uint32_t imm,
					uint32_t flags)
{
	return dvx_qp_post_rdma(qp, DVX_MLX5_OPCODE_RDMA_WRITE_IMM, wr_id, l, r, imm, flags);
}

/** dvx_qp_post_read() - RDMA READ into one local buffer. Return: as dvx_qp_post_rdma(). */
static inline int dvx_qp_post_read(struct dvx_qp *qp, uint64_t wr_id, uint64_t laddr,
				   uint32_t lkey, uint32_t len, uint64_t raddr, uint32_t rkey,
				   uint32_t flags)
{
	struct dvx_mlx5_sge l = { laddr, len, lkey };
	struct dvx_mlx5_raddr r = { raddr, rkey };

	return dvx_qp_post_rdma(qp, DVX_MLX5_OPCODE_RDMA_READ, wr_id, &l, &r, 0, flags);
}

/**
 * dvx_qp_post_send() - SEND of one buffer (or inline bytes) into the peer's next
 * posted receive.
 * @qp, @wr_id, @laddr, @lkey, @len, @flags: as dvx_qp_post_rdma()
 *
 * Context: the QP's one posting thread. Return: as dvx_qp_post_rdma().
 */
static inline int dvx_qp_post_send(struct dvx_qp *qp, uint64_t wr_id, uint64_t laddr,
				   uint32_t lkey, uint32_t len, uint32_t flags)
{
	uint8_t f = dvx_post_fm_ce_se(flags);
	uint64_t t;
	int err, n;

	if (dvx_unlikely(flags & DVX_POST_INLINE)) {
		if (len > qp->sq.wq.max_inline)
			return -EMSGSIZE;
		err = dvx_post_claim(qp, dvx_post_inline_wqebb(1, len), &t);
		if (err)
			return err;
		n = dvx_mlx5_wqe_send_inline(&qp->sq.wq, (uint32_t)t, DVX_MLX5_OPCODE_SEND, f, 0,
					     (const void *)(uintptr_t)laddr, len);
		return dvx_post_done(qp, t, n, wr_id, flags);
	}
	err = dvx_post_claim(qp, 1, &t);
	if (err)
		return err;
	n = dvx_mlx5_wqe_send(&qp->sq.wq, (uint32_t)t, f, laddr, lkey, len);
	return dvx_post_done(qp, t, n, wr_id, flags);
}

/**
 * dvx_qp_post_fetch_add() - 8-byte fetch-and-add at @raddr; the old value lands at
 * @laddr/@lkey (8 bytes, which the local MR must let the NIC write).
 * @add:	the addend
 * Other arguments as dvx_qp_post_rdma(). Return: as dvx_qp_post_rdma().
 */
static inline int dvx_qp_post_fetch_add(struct dvx_qp *qp, uint64_t wr_id, uint64_t raddr,
					uint32_t rkey, uint64_t add, uint64_t laddr,
					uint32_t lkey, uint32_t flags)
{
	uint64_t t;
	int err = dvx_post_claim(qp, 1, &t);

	if (err)
		return err;
	return dvx_post_done(qp, t,
			     dvx_mlx5_wqe_atomic_fa(&qp->sq.wq, (uint32_t)t,
						    dvx_post_fm_ce_se(flags), raddr, rkey, add,
						    laddr, lkey),
			     wr_id, flags);
}

/**
 * dvx_qp_post_comp_swap() - 8-byte compare-and-swap at @r (if it holds @compare it
 * becomes @swap); the old value lands at @laddr/@lkey.
 * @r:		the remote word: address and rkey
 * Other arguments as dvx_qp_post_fetch_add(). Return: as dvx_qp_post_rdma().
 */
static inline int dvx_qp_post_comp_swap(struct dvx_qp *qp, uint64_t wr_id,
					const struct dvx_mlx5_raddr *r, uint64_t compare,
					uint64_t swap, uint64_t laddr, uint32_t lkey,
					uint32_t flags)
{
	uint64_t t;
	int err = dvx_post_claim(qp, 1, &t);

	if (err)
		return err;
	return dvx_post_done(qp, t,
			     dvx_mlx5_wqe_atomic_cs(&qp->sq.wq, (uint32_t)t,
						    dvx_post_fm_ce_se(flags), r, compare, swap,
						    laddr, lkey),
			     wr_id, flags);
}

/**
 * dvx_qp_ring() - ring the doorbells for every WQE and receive posted with
 * DVX_POST_MORE, on the send queue and the receive queue.
 * @qp:		the QP
 *
 * Context: the QP's one posting thread. Return: nothing (nothing to ring is fine).
 */
static inline void dvx_qp_ring(struct dvx_qp *qp)
{
	if (qp->sqc.resv != qp->sqc.db_pi) {
		dvx_mlx5_sq_ring_db(&qp->sq, &qp->sqc, qp->sqc.resv);
		if (dvx_unlikely(qp->kick))
			dvx_hal_nic_kick(&qp->nic->hal);
	}
	if (qp->rq.nwqe)
		dvx_mlx5_rq_ring(&qp->rq);
}

/**
 * dvx_qp_post_recv() - post one receive buffer (and ring unless DVX_POST_MORE).
 * @qp:		a QP created with rq_depth > 0
 * @wr_id:	returned with the receive's completion
 * @addr, @lkey, @len: where a SEND's bytes land (len 0: a receive that takes only
 *		a WRITE with immediate or a zero-length SEND)
 * @flags:	DVX_POST_MORE or 0
 *
 * Context: the QP's one posting thread. Return: 0; -ENOSPC (every receive slot posted
 * and not completed); -EINVAL (no receive queue, or @len >= 2^31).
 */
static inline int dvx_qp_post_recv(struct dvx_qp *qp, uint64_t wr_id, uint64_t addr,
				   uint32_t lkey, uint32_t len, uint32_t flags)
{
	struct dvx_mlx5_sge sge = { addr, len, lkey };
	int64_t i;

	if (dvx_unlikely(!qp->rq.nwqe))
		return -EINVAL;
	i = dvx_mlx5_rq_post(&qp->rq, &sge, 1);
	if (i < 0)
		return (int)i;
	if (qp->rq_wr_ids)
		qp->rq_wr_ids[(uint64_t)i & (qp->rq.nwqe - 1)] = wr_id;
	if (!(flags & DVX_POST_MORE))
		dvx_mlx5_rq_ring(&qp->rq);
	return 0;
}

/**
 * dvx_wc_send_opcode() - enum dvx_wc_opcode of a send-queue WQE opcode.
 * @wqe_opcode:	DVX_MLX5_OPCODE_*
 * Context: any. Return: the completion's opcode (DVX_WC_OTHER for the rest).
 */
static inline uint32_t dvx_wc_send_opcode(uint8_t wqe_opcode)
{
	switch (wqe_opcode) {
	case DVX_MLX5_OPCODE_RDMA_WRITE:
	case DVX_MLX5_OPCODE_RDMA_WRITE_IMM:
		return DVX_WC_RDMA_WRITE;
	case DVX_MLX5_OPCODE_SEND:
	case DVX_MLX5_OPCODE_SEND_IMM:
	case DVX_MLX5_OPCODE_SEND_INVAL:
		return DVX_WC_SEND;
	case DVX_MLX5_OPCODE_RDMA_READ:
		return DVX_WC_RDMA_READ;
	case DVX_MLX5_OPCODE_ATOMIC_FA:
	case DVX_MLX5_OPCODE_ATOMIC_MASKED_FA:
		return DVX_WC_FETCH_ADD;
	case DVX_MLX5_OPCODE_ATOMIC_CS:
	case DVX_MLX5_OPCODE_ATOMIC_MASKED_CS:
		return DVX_WC_COMP_SWAP;
	default:
		return DVX_WC_OTHER;
	}
}

/**
 * dvx_cq_poll() - take the next completion of @cq, if any, and account it on its QP.
 * @cq:		a CQ bound to QPs created by dvx_qp_create() (any number, as send or
 *		receive CQ); its one polling thread
 * @wc:		filled for a completion, good or bad
 *
 * The QP is found by the completion's QPN among the CQ's QPs. A send completion frees
 * its WQE and every unsignaled one before it (ring room for new posts); a receive
 * completion frees the oldest posted receive. The doorbell record is updated for every
 * completion taken.
 *
 * Context: the CQ's one polling thread. Return: 1 for a good completion; 0 when the
 * CQ is empty; a negative errno for an error completion (@wc->status holds it, with
 * @wc->wr_id of the failed WQE and the syndromes; the QP is in error and every later
 * WQE of it completes flushed, -ECANCELED), or for a completion that names no QP of
 * this CQ or no WQE in flight (-EPROTO, @wc->qp NULL or the count left unchanged).
 */
static inline int dvx_cq_poll(struct dvx_cq *cq, struct dvx_wc *wc)
{
	struct dvx_mlx5_cqe_info in;
	struct dvx_qp *qp;
	int r = dvx_mlx5_cq_poll_one(&cq->mcq, &in), recv;

	if (!r)
		return 0;
	dvx_mlx5_cq_update_ci(&cq->mcq);
	if (dvx_unlikely(r < 0 && !in.is_error)) {
		/* not a completion (compressed, resize, signature): nothing to account */
		memset(wc, 0, sizeof(*wc));
		wc->opcode = DVX_WC_OTHER;
		wc->status = -EPROTO;
		return -EPROTO;
	}
	wc->status = r < 0 ? r : 0;
	wc->qpn = in.qpn;
	wc->byte_len = in.byte_cnt;
	wc->imm = in.imm;
	wc->syndrome = in.syndrome;
	wc->vendor_syndrome = in.vendor_syndrome;
	wc->rsvd = 0;
	for (qp = cq->qps; qp && qp->qpn != in.qpn;
	     qp = qp->send_cq == cq ? qp->cq_next[0] : qp->cq_next[1])
		;
	wc->qp = qp;
	if (dvx_unlikely(!qp)) {
		wc->wr_id = 0;
		wc->opcode = DVX_WC_OTHER;
		wc->status = -EPROTO;
		return -EPROTO;
	}
	recv = in.opcode == DVX_MLX5_CQE_RESP_ERR ||
	       (in.opcode >= DVX_MLX5_CQE_RESP_WR_IMM && in.opcode <= DVX_MLX5_CQE_RESP_SEND_INV);
	if (recv) {
		int64_t i = dvx_mlx5_rq_completed(&qp->rq);

		wc->opcode = in.opcode == DVX_MLX5_CQE_RESP_WR_IMM ? DVX_WC_RECV_RDMA_WITH_IMM :
								      DVX_WC_RECV;
		if (dvx_unlikely(i < 0)) {
			wc->wr_id = 0;
			wc->status = -EPROTO;
			return -EPROTO;
		}
		wc->wr_id = qp->rq_wr_ids ? qp->rq_wr_ids[(uint64_t)i & (qp->rq.nwqe - 1)] :
					    (uint64_t)i;
	} else {
		uint64_t idx = dvx_mlx5_sq_index(&qp->sqc, in.wqe_counter);
		int n;

		const struct dvx_mlx5_wqe_ctrl_seg *ctrl =
			(const struct dvx_mlx5_wqe_ctrl_seg *)dvx_mlx5_wq_seg(&qp->sq.wq,
									      (uint32_t)idx, 0);

		wc->opcode = dvx_wc_send_opcode(
			(uint8_t)(dvx_be32_to_cpu(ctrl->opmod_idx_opcode) & 0xffu));
		wc->wr_id = qp->sq_wr_ids ? qp->sq_wr_ids[(uint32_t)idx & (qp->sq.nwqebb - 1)] : idx;
		n = dvx_mlx5_sq_completed(&qp->sq, &qp->sqc, in.wqe_counter);
		if (dvx_unlikely(n < 0)) {
			wc->status = n;
			return n;
		}
	}
	return r;
}

DVX_END_DECLS

#endif /* DVX_NIC_POST_H */
