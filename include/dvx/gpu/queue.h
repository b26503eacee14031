/* SPDX-License-Identifier: MIT */
/*
 * dvx/gpu/queue.h - the GPU's view of an SQ and of a CQ, shared by host C and CUDA.
 *
 * A view is the mlx5 layer's own description (struct dvx_mlx5_sq, struct dvx_mlx5_cq,
 * dvx/mlx5/sq.h and cqe.h) holding device addresses (rings in GPU memory, or host
 * memory registered for the GPU with dvx_gpu_host_register()), plus where the posting
 * counters and the consumer index are. The host fills a view and passes it BY VALUE to
 * kernels, which post and poll with dvx/gpu/post.cuh through the same protocol steps
 * the CPU uses. Both views are fixed-width, versioned and size-asserted by every
 * compiler that reads them (gcc, clang, nvcc host and device passes).
 *
 * Counters (struct dvx_mlx5_sq_ctrs) are 64-bit and free-running: WQEBB tickets never
 * wrap in practice, so "a - b" comparisons are exact. Only the ring index (the low
 * log2(nwqebb) bits) and the 16-bit doorbell value wrap.
 */
#ifndef DVX_GPU_QUEUE_H
#define DVX_GPU_QUEUE_H

#include <dvx/mlx5/sq.h>
#include <dvx/mlx5/cqe.h>

DVX_BEGIN_DECLS

#define DVX_GPU_SQ_VERSION 2u
#define DVX_GPU_CQ_VERSION 2u

/* view flags: the mlx5 layer's (dvx/mlx5/sq.h) */
enum {
	/* the ring, the doorbell record or the CQ lives in host memory (or is read by a
	 * CPU): order with system-scope fences. Without it GPU-scope fences are used
	 * (rings in GPU memory, read only by the NIC), as NVSHMEM does. */
	DVX_GPU_Q_SYS = DVX_MLX5_SQ_SYS,
	/* do not write the UAR register (a CPU proxy rings from the doorbell record) */
	DVX_GPU_Q_NO_UAR = DVX_MLX5_SQ_NO_UAR,
};

/**
 * struct dvx_gpu_sq - what a kernel needs to post on an SQ; passed by value.
 * @version:	DVX_GPU_SQ_VERSION
 * @rsvd:	zero
 * @sq:		the SQ (ring, doorbell record, UAR register: device addresses; flags
 *		DVX_GPU_Q_*)
 * @ctrs:	device address of the struct dvx_mlx5_sq_ctrs, in GPU memory (GPU atomics
 *		on host memory are not atomic everywhere)
 * @ci:		device address of a 64-bit consumer index: the first WQEBB whose slot is
 *		not yet free. Whoever learns of completions advances it (the host, or a
 *		GPU CQ poller with dvx_dev_sq_set_ci()); posters read it one at a time
 *		into @ctrs (dvx_mlx5_sq_ci_refresh())
 * @rsvd2:	zero
 */
struct dvx_gpu_sq {
	uint32_t version;
	uint32_t rsvd;
	struct dvx_mlx5_sq sq;
	uint64_t ctrs;
	uint64_t ci;
	uint64_t rsvd2;
};

/**
 * struct dvx_gpu_cq - what a kernel needs to poll a CQ; passed by value.
 * @version:	DVX_GPU_CQ_VERSION
 * @rsvd:	zero
 * @cq:		the CQ (ring and doorbell record: device addresses; flags
 *		DVX_MLX5_CQ_SYS when it is in host memory; @cq.ci unused: pollers keep
 *		their own)
 */
struct dvx_gpu_cq {
	uint32_t version;
	uint32_t rsvd;
	struct dvx_mlx5_cq cq;
};

DVX_ASSERT_SIZE(struct dvx_gpu_sq, 96);
DVX_ASSERT_OFFSET(struct dvx_gpu_sq, sq, 8);
DVX_ASSERT_OFFSET(struct dvx_gpu_sq, ctrs, 72);
DVX_ASSERT_SIZE(struct dvx_gpu_cq, 40);

/**
 * struct dvx_gpu_sq_cfg - an SQ's device addresses and facts (dvx_gpu_sq_view_init()).
 * @flags:	DVX_GPU_Q_*
 * @ring:	device address of the ring, 64-byte aligned
 * @nwqebb:	ring size, a power of two, at most 2^15
 * @qpn:	QP number (24 bits)
 * @max_inline:	inline limit
 * @dbrec:	device address of the QP doorbell record, 8-byte aligned
 * @uar:	device address of the UAR register, 8-byte aligned (0 only with
 *		DVX_GPU_Q_NO_UAR)
 * @ctrs:	device address of zeroed struct dvx_mlx5_sq_ctrs, 64-byte aligned
 * @ci:		device address of the 64-bit consumer index, 8-byte aligned
 */
struct dvx_gpu_sq_cfg {
	uint32_t flags;
	uint64_t ring;
	uint32_t nwqebb;
	uint32_t qpn;
	uint32_t max_inline;
	uint64_t dbrec;
	uint64_t uar;
	uint64_t ctrs;
	uint64_t ci;
};

/**
 * dvx_gpu_sq_view_init() - describe an SQ for kernels.
 * @v:		filled
 * @cfg:	the SQ's device addresses and facts (struct dvx_gpu_sq_cfg), read during
 *		the call only
 *
 * Context: any (host or device). Return: 0 or -EINVAL (@v unchanged).
 */
DVX_INLINE int dvx_gpu_sq_view_init(struct dvx_gpu_sq *v, const struct dvx_gpu_sq_cfg *cfg)
{
	uint64_t ring = cfg->ring, ctrs = cfg->ctrs, ci = cfg->ci;
	uint32_t nwqebb = cfg->nwqebb, max_inline = cfg->max_inline;
	struct dvx_mlx5_sq_cfg sc;
	struct dvx_mlx5_sq sq;

	sc.buf = (void *)(uintptr_t)ring;
	sc.nwqebb = nwqebb;
	sc.qpn = cfg->qpn;
	sc.max_inline = max_inline;
	sc.dbrec = (dvx_be32 *)(uintptr_t)cfg->dbrec;
	sc.uar_reg = (void *)(uintptr_t)cfg->uar;
	sc.bf_half = 0;
	sc.flags = cfg->flags;
	if (!ring || nwqebb > (1u << DVX_MLX5_LOG_MAX_SQ) || max_inline > DVX_MLX5_MAX_INLINE ||
	    !ctrs || (ctrs & 63) || !ci || (ci & 7) || dvx_mlx5_sq_init(&sq, NULL, &sc))
		return -EINVAL;
	v->version = DVX_GPU_SQ_VERSION;
	v->rsvd = 0;
	v->sq = sq;
	v->ctrs = ctrs;
	v->ci = ci;
	v->rsvd2 = 0;
	return 0;
}

/**
 * dvx_gpu_cq_view_init() - describe a CQ for kernels.
 * @v:		filled
 * @flags:	DVX_GPU_Q_SYS when the CQ is in host memory
 * @buf:	device address of 2^@log_size 64-byte entries, 64-byte aligned
 * @log_size:	log2 of the entries, at most 24
 * @cqn:	CQ number (24 bits)
 * @dbrec:	device address of the CQ doorbell record, or 0 (overrun-ignore CQs)
 *
 * Context: any (host or device). Return: 0 or -EINVAL (@v unchanged).
 */
DVX_INLINE int dvx_gpu_cq_view_init(struct dvx_gpu_cq *v, uint32_t flags, uint64_t buf,
				    uint32_t log_size, uint32_t cqn, uint64_t dbrec)
{
	if (!buf || (buf & 63) || log_size > 24 || cqn > 0xffffffu || (dbrec & 7) ||
	    (flags & ~(uint32_t)DVX_GPU_Q_SYS))
		return -EINVAL;
	v->version = DVX_GPU_CQ_VERSION;
	v->rsvd = 0;
	v->cq.buf = (uint8_t *)(uintptr_t)buf;
	v->cq.log_size = log_size;
	v->cq.ci = 0;
	v->cq.dbrec = (dvx_be32 *)(uintptr_t)dbrec;
	v->cq.cqn = cqn;
	v->cq.flags = (flags & DVX_GPU_Q_SYS) ? DVX_MLX5_CQ_SYS : 0;
	return 0;
}

DVX_END_DECLS

#endif /* DVX_GPU_QUEUE_H */
