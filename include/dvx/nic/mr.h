/* SPDX-License-Identifier: MIT */
/*
 * dvx/nic/mr.h - memory regions: host or GPU memory, iova = address or iova 0, dma-buf,
 * and the 8-byte sink MR for atomic results nobody reads.
 *
 * A WQE address A in an MR registered with iova I refers to byte addr + (A - I)
 * (prm 5.1). With DVX_MR_IOVA_ZERO, WQE addresses are plain offsets into the region,
 * which is how windows, signals and counters are addressed.
 *
 * Relaxed ordering is a hint: asked for on a device without the relaxed_ordering caps
 * it is dropped (the MR is registered without it) and mr->flags carries
 * DVX_MR_RO_DROPPED, so nothing fails on hardware that simply lacks it.
 */
#ifndef DVX_NIC_MR_H
#define DVX_NIC_MR_H

#include <dvx/nic/nic.h>

DVX_BEGIN_DECLS

/* struct dvx_mr_cfg.flags */
enum {
	DVX_MR_IOVA_ZERO = 1u << 0,	/* iova 0: WQE addresses are offsets into the region */
	DVX_MR_F_DATA_DIRECT = 1u << 1,	/* dma-buf only: mlx5 Data-Direct registration */
	DVX_MR_F_DMABUF = 1u << 2,	/* @dmabuf_fd holds a dma-buf fd (zero struct: host) */
};

/* struct dvx_mr.flags (what happened) */
enum {
	DVX_MR_RO_DROPPED = 1u << 0,	/* relaxed ordering asked for, device lacks it */
	DVX_MR_DEVMEM = 1u << 1,	/* registered from a dma-buf: device memory, which
					 * the CPU may not read or write */
};

/**
 * struct dvx_mr_cfg - memory to register.
 * @addr:	the region's address (host, or GPU VA). With a dma-buf it is the iova
 *		unless DVX_MR_IOVA_ZERO (then it may be NULL)
 * @len:	bytes (> 0)
 * @access:	enum dvx_access bits. REMOTE_WRITE and REMOTE_ATOMIC need LOCAL_WRITE
 *		(IB rule); REMOTE_ATOMIC needs DVX_NIC_FEAT_ATOMIC
 * @flags:	DVX_MR_IOVA_ZERO, DVX_MR_F_DATA_DIRECT, DVX_MR_F_DMABUF
 * @dmabuf_fd:	with DVX_MR_F_DMABUF a dma-buf fd, else ignored (a zeroed struct
 *		registers host memory); stays the caller's
 * @dmabuf_offset: offset of the region in the dma-buf; with iova = @addr, @addr and
 *		@dmabuf_offset must have the same offset inside a 4 KiB page (ibv_reg_mr.3)
 */
struct dvx_mr_cfg {
	void *addr;
	uint64_t len;
	uint32_t access;
	uint32_t flags;
	int32_t dmabuf_fd;
	uint32_t rsvd;
	uint64_t dmabuf_offset;
};

/**
 * struct dvx_mr - a registered MR, in caller storage.
 * @hal:	the hal's handle
 * @nic:	the NIC
 * @addr:	the region's address (as given)
 * @len:	bytes
 * @iova:	the address WQEs use for byte 0 of the region (0 or @addr)
 * @lkey:	local key (data segments)
 * @rkey:	remote key (CPU order; send it to peers as dvx_cpu_to_be32(rkey))
 * @access:	access actually registered (RO removed when dropped)
 * @flags:	DVX_MR_RO_DROPPED, DVX_MR_DEVMEM
 * @live:	DVX_LIVE between reg and dereg (a create into a live object is -EBUSY)
 */
struct dvx_mr {
	struct dvx_hal_mr hal;
	struct dvx_nic *nic;
	void *addr;
	uint64_t len;
	uint64_t iova;
	uint32_t lkey;
	uint32_t rkey;
	uint32_t access;
	uint32_t flags;
	uint32_t live;
	uint32_t rsvd;
};

/**
 * dvx_mr_reg() - register a memory region on the NIC's PD.
 * @nic:	an open NIC
 * @attr:	the region
 * @mr:		caller storage, overwritten on success only
 *
 * Context: control path. Return: 0; -EINVAL (bad argument); -EOPNOTSUPP (remote
 * atomic access on a device without atomics); or the hal's error.
 */
int dvx_mr_reg(struct dvx_nic *nic, const struct dvx_mr_cfg *attr, struct dvx_mr *mr);

/**
 * dvx_mr_sink() - register the 8-byte sink at iova 0 for atomic results.
 * @nic:	an open NIC
 * @buf:	8 bytes, 8-byte aligned, owned by the caller (host, or GPU VA with a
 *		dma-buf); must outlive the MR. Its content is never read by dvx
 * @dmabuf_fd:	-1 for plain memory, or the dma-buf holding @buf
 * @dmabuf_offset: offset of @buf inside the dma-buf
 * @mr:		caller storage
 *
 * Access LOCAL_WRITE only, iova 0: a fetch result nobody reads goes to laddr 0 with
 * mr->lkey. The sink is only ever a local target, so no peer may write, read or
 * update it (torchcomms registers its sink with every remote right, prm 5.1; dvx
 * does not: docs/security.md).
 *
 * Return: as dvx_mr_reg().
 */
int dvx_mr_sink(struct dvx_nic *nic, void *buf, int dmabuf_fd, uint64_t dmabuf_offset,
		struct dvx_mr *mr);

/**
 * dvx_mr_dereg() - deregister.
 * Return: 0; -EINVAL (not registered); or the hal's error (the MR stays registered).
 */
int dvx_mr_dereg(struct dvx_mr *mr);

DVX_END_DECLS

#endif /* DVX_NIC_MR_H */
