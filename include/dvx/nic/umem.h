/* SPDX-License-Identifier: MIT */
/*
 * dvx/nic/umem.h - caller memory registered as a DEVX umem, and the queue-memory contract.
 *
 * CQ rings, QP work queues and doorbell records live in caller memory registered as
 * umems (the kernel forces DEVX queues into umems, prm 1.1). A umem is host memory
 * or a dma-buf (GPU memory): dvx_umem_reg(). Rings and doorbell records are then
 * placed in umems at caller-chosen offsets; several may share one umem.
 *
 * Placement rules (checked by dvx_cq_create()/dvx_qp_create()):
 *  - a umem starts on a 4 KiB boundary (host address, or dma-buf offset);
 *  - a ring starts at an offset that is a multiple of umem->ring_align: 64 B with the
 *    default page-size bitmap (4 KiB pages only, so every 64 B offset is expressible
 *    as page + page_offset, as UCX does, prm 1.5), else the largest page size the
 *    bitmap allows (a ring then starts on a page: where the umem's pages are larger
 *    than 4 KiB the device reaches only the first 4 KiB of each, prm 1.5.1);
 *    DVX_RING_ALIGN (4 KiB) works with the default bitmap and is what the mem-request
 *    calls report;
 *  - a doorbell record is 8 bytes at an 8-byte aligned offset (prm 3.1).
 *
 * Sizes: dvx_cq_mem_req() and dvx_qp_mem_req() give bytes and alignment for an
 * attribute set; the DVX_*_BYTES macros give the same at compile time for static pools.
 */
#ifndef DVX_NIC_UMEM_H
#define DVX_NIC_UMEM_H

#include <dvx/nic/nic.h>

DVX_BEGIN_DECLS

/* ---- the memory contract, at compile time ---- */
#define DVX_UMEM_BASE_ALIGN 4096u	/* a umem starts on a 4 KiB boundary */
#define DVX_UMEM_PGSZ_DEFAULT 4096ull	/* default pgsz_bitmap: 4 KiB pages only */
#define DVX_RING_ALIGN 4096u		/* ring placement valid with the default bitmap */
#define DVX_RING_MIN_ALIGN 64u		/* the least a ring needs (umem with 4 KiB pages) */
#define DVX_DBR_ALIGN 8u
#define DVX_DBR_BYTES 8u		/* one CQ or QP doorbell record */
#define DVX_CQE_BYTES 64u
#define DVX_WQEBB_BYTES 64u

/** DVX_CQ_RING_BYTES() - ring bytes of a CQ of @depth CQEs (collapsed CQs need 64). */
#define DVX_CQ_RING_BYTES(depth) ((uint64_t)(depth) * DVX_CQE_BYTES)
/** DVX_RQ_STRIDE() - receive WQE stride for @max_sge data segments (power of two >= 16). */
#define DVX_RQ_STRIDE(max_sge)                                                          \
	((max_sge) <= 1 ? 16u : (max_sge) <= 2 ? 32u : (max_sge) <= 4 ? 64u :          \
	 (max_sge) <= 8 ? 128u : (max_sge) <= 16 ? 256u : (max_sge) <= 32 ? 512u : 1024u)
/** DVX_RQ_BYTES() - bytes of a regular RQ (at least one 64 B WQEBB, prm 1.7), 0 for none. */
#define DVX_RQ_BYTES(rq_depth, rq_stride)                                               \
	((rq_depth) ? ((uint64_t)(rq_depth) * (rq_stride) < 64u ? 64u :                 \
		       (uint64_t)(rq_depth) * (rq_stride)) : 0u)
/**
 * DVX_QP_WQ_BYTES() - bytes of a QP work queue: the RQ (first) then the SQ.
 * @sq_depth:	SQ WQEBBs
 * @rq_depth:	receive WQEs, 0 for a zero-length RQ
 * @rq_stride:	DVX_RQ_STRIDE(max_sge)
 */
#define DVX_QP_WQ_BYTES(sq_depth, rq_depth, rq_stride)                                  \
	(DVX_RQ_BYTES(rq_depth, rq_stride) + (uint64_t)(sq_depth) * DVX_WQEBB_BYTES)

/** struct dvx_mem_req - a piece of memory an object needs. */
struct dvx_mem_req {
	uint64_t bytes;
	uint64_t align;
};

/* struct dvx_umem_cfg.flags */
enum {
	DVX_UMEM_F_CPU = 1u << 0,	/* dma-buf umem whose @addr the CPU can read and write */
	DVX_UMEM_F_DMABUF = 1u << 1,	/* @dmabuf_fd holds a dma-buf fd (zero struct: host) */
};

/**
 * struct dvx_umem_cfg - memory to register.
 * @addr:	host memory: its address (4 KiB aligned). dma-buf: the address the rings
 *		will be known by (e.g. the GPU VA; may be NULL when no ring will be
 *		placed in it), not used for the registration
 * @len:	bytes (> 0)
 * @access:	enum dvx_access bits; 0 means DVX_ACCESS_LOCAL_WRITE; must contain
 *		LOCAL_WRITE (the device writes CQEs and reads records); only LOCAL_WRITE,
 *		REMOTE_WRITE and REMOTE_READ, the bits the kernel's DEVX umem takes
 * @flags:	DVX_UMEM_F_*
 * @dmabuf_fd:	with DVX_UMEM_F_DMABUF, a dma-buf fd (GPU memory); without it ignored
 *		(host memory): a zeroed struct never hands fd 0 to the kernel. The fd
 *		stays the caller's (dvx never closes it)
 * @dmabuf_offset: offset of the region in the dma-buf (4 KiB aligned)
 * @pgsz_bitmap: page sizes the device may map the umem with; 0 means
 *		DVX_UMEM_PGSZ_DEFAULT (see the placement rules above)
 */
struct dvx_umem_cfg {
	void *addr;
	uint64_t len;
	uint32_t access;
	uint32_t flags;
	int32_t dmabuf_fd;
	uint32_t rsvd;
	uint64_t dmabuf_offset;
	uint64_t pgsz_bitmap;
};

/**
 * struct dvx_umem_ext - a byte range of a umem that a live CQ or QP uses (its ring or
 * its doorbell record), linked into the umem's list while the object lives (inside
 * struct dvx_cq / struct dvx_qp: no allocation). A create whose ring or record would
 * overlap one of them is refused.
 * @next:	the next range in use, NULL at the end
 * @off:	first byte, from the start of the umem
 * @len:	bytes
 */
struct dvx_umem_ext {
	struct dvx_umem_ext *next;
	uint64_t off;
	uint64_t len;
};

/**
 * struct dvx_umem - a registered umem, in caller storage.
 * @hal:	the hal's handle
 * @nic:	the NIC it is registered on
 * @addr:	the address rings in it are known by (NULL: none)
 * @len:	bytes
 * @id:		umem id (*_umem_id mailbox fields)
 * @access:	access registered with
 * @ring_align:	ring offsets must be multiples of this (64 with the default bitmap)
 * @users:	CQs and QPs placed in it; dvx_umem_dereg() refuses while non-zero
 * @cpu:	1 when the CPU may write @addr (host memory, or DVX_UMEM_F_CPU)
 * @via_dmabuf:	1 for a dma-buf registration
 * @live:	DVX_LIVE between reg and dereg (a create into a live object is -EBUSY)
 * @exts:	the ranges live CQs and QPs use (rings, doorbell records)
 */
struct dvx_umem {
	struct dvx_hal_umem hal;
	struct dvx_nic *nic;
	uint8_t *addr;
	uint64_t len;
	uint32_t id;
	uint32_t access;
	uint64_t ring_align;
	uint32_t users;
	uint8_t cpu;
	uint8_t via_dmabuf;
	uint8_t rsvd[2];
	uint32_t live;
	uint32_t rsvd2;
	struct dvx_umem_ext *exts;
};

/**
 * dvx_umem_reg() - register caller memory as a DEVX umem.
 * @nic:	an open NIC
 * @attr:	the memory (host address, or dma-buf fd + offset)
 * @umem:	caller storage, overwritten on success only
 *
 * The memory stays the caller's: it must outlive the umem and is never written by
 * this call. Context: control path. Return: 0; -EINVAL (bad argument: NULL, len 0,
 * misaligned address or offset, unknown access bits, access without LOCAL_WRITE, a
 * page-size bitmap without 4 KiB pages); or the hal's error (nothing registered).
 */
int dvx_umem_reg(struct dvx_nic *nic, const struct dvx_umem_cfg *attr, struct dvx_umem *umem);

/**
 * dvx_umem_dereg() - deregister a umem.
 * Return: 0; -EINVAL (not registered); -EBUSY (a CQ or QP still lives in it); or the
 * hal's error (the umem stays registered).
 */
int dvx_umem_dereg(struct dvx_umem *umem);

DVX_END_DECLS

#endif /* DVX_NIC_UMEM_H */
