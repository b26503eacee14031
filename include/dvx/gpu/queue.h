/* SPDX-License-Identifier: MIT */
/*
 * dvx/gpu/queue.h - the GPU's view of an SQ and of a CQ, shared by host C and CUDA.
 *
 * The host fills a struct dvx_gpu_sq / dvx_gpu_cq with device addresses (rings in GPU
 * memory, or host memory registered for the GPU with dvx_gpu_host_register()) and
 * passes it BY VALUE to kernels, which post and poll with dvx/gpu/post.cuh. Both
 * structs are fixed-width, versioned and size-asserted by every compiler that reads
 * them (gcc, clang, nvcc host and device passes).
 *
 * Counters (struct dvx_gpu_sq_ctrs) are 64-bit and free-running: WQEBB tickets never
 * wrap in practice, so "a - b" comparisons are exact. Only the ring index (the low
 * log2(nwqebb) bits) and the 16-bit doorbell value wrap.
 */
#ifndef DVX_GPU_QUEUE_H
#define DVX_GPU_QUEUE_H

#include <dvx/mlx5/wqe.h>

DVX_BEGIN_DECLS

#define DVX_GPU_SQ_VERSION 1u
#define DVX_GPU_CQ_VERSION 1u

/* struct dvx_gpu_sq.flags / dvx_gpu_cq.flags */
enum {
	/* The ring, the doorbell record or the CQ lives in host memory (or is read by a
	 * CPU): order with system-scope fences. Without it GPU-scope fences are used
	 * (rings in GPU memory, read only by the NIC), as NVSHMEM does. */
	DVX_GPU_Q_SYS = 1u << 0,
	/* Do not write the UAR register (a CPU proxy rings from the doorbell record). */
	DVX_GPU_Q_NO_UAR = 1u << 1,
};

/**
 * struct dvx_gpu_sq_ctrs - the posting state many GPU threads share, one per SQ.
 * @resv:	next WQEBB to hand out (a poster's ticket is its first WQEBB)
 * @ready:	every WQEBB below it is built and published, in order
 * @db_pi:	producer index of the last doorbell (written only by the poster that
 *		holds the publish token, see post.cuh)
 * @ci_seen:	the consumer index as last read from the view's @ci (which may be in
 *		host memory): posters check for room against this GPU-memory copy and
 *		only one of them at a time (@ci_poll) reads the real index when it says
 *		the ring is full, so thousands of waiting threads do not flood PCIe
 * @ci_poll:	1 while a poster refreshes @ci_seen
 *
 * Lives in GPU memory (GPU atomics on it), zeroed before the first post and whenever
 * the QP is reset. Each word has a 64-byte line of its own. DVX_GPU_SQ_CTRS_BYTES.
 */
struct dvx_gpu_sq_ctrs {
	uint64_t resv;
	uint64_t pad0[7];
	uint64_t ready;
	uint64_t pad1[7];
	uint64_t db_pi;
	uint64_t pad2[7];
	uint64_t ci_seen;
	uint32_t ci_poll;
	uint32_t pad3[13];
};
#define DVX_GPU_SQ_CTRS_BYTES 256u

/**
 * struct dvx_gpu_sq - what a kernel needs to post on an SQ; passed by value.
 * @version:	DVX_GPU_SQ_VERSION
 * @flags:	DVX_GPU_Q_*
 * @ring:	device address of WQEBB 0 (64-byte aligned)
 * @dbrec:	device address of the QP doorbell record (two BE32 words: RQ, SQ)
 * @uar:	device address of the 8-byte UAR doorbell register (a UAR page
 *		registered with DVX_GPU_HOST_IOMEM), or 0 with DVX_GPU_Q_NO_UAR
 * @ctrs:	device address of the struct dvx_gpu_sq_ctrs
 * @ci:		device address of a 64-bit consumer index: the first WQEBB whose slot is
 *		not yet free. Whoever learns of completions advances it (the host, or a
 *		GPU CQ poller with dvx_dev_sq_set_ci()); posters only read it.
 * @nwqebb:	ring size in WQEBBs, a power of two
 * @qpn:	QP number
 * @max_inline:	inline limit the QP was created for
 */
struct dvx_gpu_sq {
	uint32_t version;
	uint32_t flags;
	uint64_t ring;
	uint64_t dbrec;
	uint64_t uar;
	uint64_t ctrs;
	uint64_t ci;
	uint32_t nwqebb;
	uint32_t qpn;
	uint32_t max_inline;
	uint32_t rsvd;
};

/**
 * struct dvx_gpu_cq - what a kernel needs to poll a CQ; passed by value.
 * @version:	DVX_GPU_CQ_VERSION
 * @flags:	DVX_GPU_Q_*
 * @buf:	device address of entry 0 (64-byte entries, initialised INVALID/owner 1)
 * @dbrec:	device address of the CQ doorbell record (word 0 SET_CI), or 0 to leave it
 * @log_size:	log2 of the number of entries
 * @cqn:	CQ number
 */
struct dvx_gpu_cq {
	uint32_t version;
	uint32_t flags;
	uint64_t buf;
	uint64_t dbrec;
	uint32_t log_size;
	uint32_t cqn;
};

DVX_ASSERT_SIZE(struct dvx_gpu_sq_ctrs, DVX_GPU_SQ_CTRS_BYTES);
DVX_ASSERT_SIZE(struct dvx_gpu_sq, 64);
DVX_ASSERT_OFFSET(struct dvx_gpu_sq, ring, 8);
DVX_ASSERT_OFFSET(struct dvx_gpu_sq, nwqebb, 48);
DVX_ASSERT_SIZE(struct dvx_gpu_cq, 32);

/**
 * dvx_gpu_sq_view_init() - describe an SQ for kernels.
 * @sq:		filled
 * @flags:	DVX_GPU_Q_*
 * @ring:	device address of the ring, 64-byte aligned
 * @nwqebb:	ring size, a power of two, at most 2^15
 * @qpn:	QP number (24 bits)
 * @max_inline:	inline limit
 * @dbrec:	device address of the QP doorbell record, 8-byte aligned
 * @uar:	device address of the UAR register, 8-byte aligned (0 only with
 *		DVX_GPU_Q_NO_UAR)
 * @ctrs:	device address of zeroed struct dvx_gpu_sq_ctrs, 64-byte aligned
 * @ci:		device address of the 64-bit consumer index, 8-byte aligned
 *
 * Context: any (host or device). Return: 0 or -EINVAL (@sq unchanged).
 */
DVX_INLINE int dvx_gpu_sq_view_init(struct dvx_gpu_sq *sq, uint32_t flags, uint64_t ring,
				    uint32_t nwqebb, uint32_t qpn, uint32_t max_inline,
				    uint64_t dbrec, uint64_t uar, uint64_t ctrs, uint64_t ci)
{
	if (!ring || (ring & 63) || !DVX_IS_POW2(nwqebb) || nwqebb > (1u << DVX_MLX5_LOG_MAX_SQ) ||
	    qpn > 0xffffffu || max_inline > DVX_MLX5_MAX_INLINE || !dbrec || (dbrec & 7) ||
	    (!(flags & DVX_GPU_Q_NO_UAR) && (!uar || (uar & 7))) || !ctrs || (ctrs & 63) ||
	    !ci || (ci & 7) || (flags & ~(uint32_t)(DVX_GPU_Q_SYS | DVX_GPU_Q_NO_UAR)))
		return -EINVAL;
	sq->version = DVX_GPU_SQ_VERSION;
	sq->flags = flags;
	sq->ring = ring;
	sq->dbrec = dbrec;
	sq->uar = uar;
	sq->ctrs = ctrs;
	sq->ci = ci;
	sq->nwqebb = nwqebb;
	sq->qpn = qpn;
	sq->max_inline = max_inline;
	sq->rsvd = 0;
	return 0;
}

/**
 * dvx_gpu_cq_view_init() - describe a CQ for kernels.
 * @buf:	device address of 2^@log_size 64-byte entries, 64-byte aligned
 * @dbrec:	device address of the CQ doorbell record, or 0 (overrun-ignore CQs)
 *
 * Return: 0 or -EINVAL (@cq unchanged).
 */
DVX_INLINE int dvx_gpu_cq_view_init(struct dvx_gpu_cq *cq, uint32_t flags, uint64_t buf,
				    uint32_t log_size, uint32_t cqn, uint64_t dbrec)
{
	if (!buf || (buf & 63) || log_size > 24 || cqn > 0xffffffu || (dbrec & 7) ||
	    (flags & ~(uint32_t)DVX_GPU_Q_SYS))
		return -EINVAL;
	cq->version = DVX_GPU_CQ_VERSION;
	cq->flags = flags;
	cq->buf = buf;
	cq->dbrec = dbrec;
	cq->log_size = log_size;
	cq->cqn = cqn;
	return 0;
}

DVX_END_DECLS

#endif /* DVX_GPU_QUEUE_H */
