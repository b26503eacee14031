/* SPDX-License-Identifier: MIT */
/*
 * dvx/mlx5/rq.h - a QP's own receive queue: receive WQEs and the RQ doorbell record.
 *
 * A receive WQE is a list of data segments in a slot of 2^stride_shift bytes
 * (qpc.log_rq_stride = stride_shift - 4). A list shorter than the slot is closed by a
 * segment with byte_count 0 and lkey DVX_MLX5_INVALID_LKEY (prm 2.5). Receives are
 * published by writing the RQ counter (16 bits, big-endian) into word 0 of the QP's
 * doorbell record; there is no UAR doorbell for receives. Responder CQEs complete
 * receive WQEs in posting order.
 */
#ifndef DVX_MLX5_RQ_H
#define DVX_MLX5_RQ_H

#include <dvx/mlx5/wqe.h>
#include <dvx/mlx5/barrier.h>

/**
 * struct dvx_mlx5_rq - a receive queue.
 * @buf:	slot 0, 16-byte aligned (64 recommended)
 * @nwqe:	number of slots, a power of two
 * @stride_shift: log2 of the slot size in bytes (4 ... 10)
 * @max_sge:	data segments per slot (slot size / 16)
 * @pi:		next free slot (free-running)
 * @ci:		next slot to complete (free-running)
 * @dbrec:	the QP doorbell record (word 0 is the RQ counter)
 */
struct dvx_mlx5_rq {
	uint8_t *buf;
	uint32_t nwqe;
	uint32_t stride_shift;
	uint32_t max_sge;
	uint32_t pi;
	uint32_t ci;
	uint32_t rsvd;
	dvx_be32 *dbrec;
};

/** dvx_mlx5_rq_init() - set up RQ state. Return: 0 or -EINVAL. */
static inline int dvx_mlx5_rq_init(struct dvx_mlx5_rq *rq, void *buf, uint32_t nwqe,
				   uint32_t stride_shift, dvx_be32 *dbrec)
{
	if (!buf || ((uintptr_t)buf & 15) || !DVX_IS_POW2(nwqe) || nwqe > (1u << 15) ||
	    stride_shift < 4 || stride_shift > 10 || !dbrec || ((uintptr_t)dbrec & 7))
		return -EINVAL;
	rq->buf = (uint8_t *)buf;
	rq->nwqe = nwqe;
	rq->stride_shift = stride_shift;
	rq->max_sge = (1u << stride_shift) / DVX_MLX5_DS_BYTES;
	rq->pi = 0;
	rq->ci = 0;
	rq->rsvd = 0;
	rq->dbrec = dbrec;
	return 0;
}

/** dvx_mlx5_rq_wqe() - the slot for free-running index @idx. */
static inline struct dvx_mlx5_wqe_data_seg *dvx_mlx5_rq_wqe(const struct dvx_mlx5_rq *rq,
							     uint32_t idx)
{
	size_t off = (size_t)(idx & (rq->nwqe - 1)) << rq->stride_shift;

	/* via void *: slots are 16-byte aligned (rq_init checks), which clang cannot see */
	return (struct dvx_mlx5_wqe_data_seg *)(void *)(rq->buf + off);
}

/**
 * dvx_mlx5_rq_post() - write one receive WQE at pi (not yet visible to the device).
 * @sgl:	buffers to scatter into; zero-length entries are skipped
 * @nsge:	entries in @sgl
 *
 * Return: the slot index used, or -ENOSPC (all slots posted and not completed),
 * -E2BIG (more buffers than a slot holds) or -EINVAL (a length >= 2^31).
 */
static inline int64_t dvx_mlx5_rq_post(struct dvx_mlx5_rq *rq, const struct dvx_mlx5_sge *sgl,
				       uint32_t nsge)
{
	struct dvx_mlx5_wqe_data_seg *d;
	uint32_t i, n = 0;

	if (nsge && !sgl)
		return -EINVAL;
	for (i = 0; i < nsge; i++) {
		if (sgl[i].length > DVX_MLX5_MAX_BYTE_COUNT)
			return -EINVAL;
		n += sgl[i].length != 0;
	}
	if (n > rq->max_sge)
		return -E2BIG;
	if (rq->pi - rq->ci >= rq->nwqe)
		return -ENOSPC;
	d = dvx_mlx5_rq_wqe(rq, rq->pi);
	for (i = 0; i < nsge; i++)
		if (sgl[i].length)
			dvx_mlx5_set_data_seg(d++, sgl[i].addr, sgl[i].lkey, sgl[i].length);
	if (n < rq->max_sge)
		dvx_mlx5_set_data_seg(d, 0, DVX_MLX5_INVALID_LKEY, 0);
	return (int64_t)(rq->pi++);
}

/** dvx_mlx5_rq_ring() - publish every posted receive through the doorbell record. */
static inline void dvx_mlx5_rq_ring(struct dvx_mlx5_rq *rq)
{
	/* Receive WQE stores before the record that hands them to the device. */
	dvx_wmb_wqe_before_dbr(DVX_SCOPE_SYS);
	dvx_store_dbrec(&rq->dbrec[DVX_MLX5_RCV_DBR],
			dvx_cpu_to_be32(rq->pi & DVX_MLX5_WQE_INDEX_MASK));
}

/**
 * dvx_mlx5_rq_completed() - account one responder CQE of this RQ.
 *
 * A QP's own RQ completes in posting order, so the completed receive is the oldest
 * outstanding one (rdma-core likewise tracks it by its own tail, not by the CQE's
 * wqe_counter, which is only meaningful for SRQs).
 *
 * Return: the free-running index of the completed receive, or -EPROTO when no
 * receive was outstanding (a responder CQE nobody asked for).
 */
static inline int64_t dvx_mlx5_rq_completed(struct dvx_mlx5_rq *rq)
{
	if (rq->ci == rq->pi)
		return -EPROTO;
	return (int64_t)(rq->ci++);
}

/** dvx_mlx5_rq_reset() - back to index 0 (after the QP went through RESET). */
static inline void dvx_mlx5_rq_reset(struct dvx_mlx5_rq *rq)
{
	rq->pi = 0;
	rq->ci = 0;
}

#endif /* DVX_MLX5_RQ_H */
