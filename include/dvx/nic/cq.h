/* SPDX-License-Identifier: MIT */
/*
 * dvx/nic/cq.h - a completion queue created with CREATE_CQ (64-byte CQEs) in caller umems.
 *
 * The ring and the doorbell record sit in umems at caller offsets (dvx/nic/umem.h). The
 * CQ carries the ring state a poller uses (struct dvx_mlx5_cq, dvx/mlx5/cqe.h): poll it
 * with dvx_mlx5_cq_poll_one(&cq->mcq, ...). Not to be confused with dvx/mlx5/cqe.h,
 * which is that ring state and the CQE format.
 */
#ifndef DVX_NIC_CQ_H
#define DVX_NIC_CQ_H

#include <dvx/nic/umem.h>
#include <dvx/mlx5/cqe.h>

DVX_BEGIN_DECLS

/* struct dvx_cq_cfg.flags */
enum {
	DVX_CQ_F_OI = 1u << 0,		/* overrun ignore (needs DVX_NIC_FEAT_CQ_OI) */
	DVX_CQ_F_COLLAPSED = 1u << 1,	/* every CQE lands in entry 0 (needs DVX_CQ_F_OI) */
	DVX_CQ_F_PREINIT = 1u << 2,	/* the caller initialised ring and record (see below) */
};

/**
 * struct dvx_cq_cfg - a CQ to create.
 * @depth:	CQEs, a power of two, at most 2^min(24, cap log_max_cq_sz)
 * @flags:	DVX_CQ_F_*
 * @ring_umem:	umem holding the ring
 * @ring_offset: ring offset in @ring_umem (multiple of ring_umem->ring_align)
 * @dbr_umem:	umem holding the 8-byte doorbell record (may be @ring_umem)
 * @dbr_offset:	record offset (multiple of 8)
 * @uar:	UAR whose page id goes into cqc.uar_page; NULL: the NIC's default
 *
 * Ring bytes: DVX_CQ_RING_BYTES(depth), or 64 for a collapsed CQ.
 *
 * Before CREATE_CQ, dvx writes op_own = 0xf1 (INVALID, owner 1) into every CQE
 * (dvx_mlx5_cq_ring_init()) and initialises the doorbell record for a polled CQ
 * (dvx_mlx5_cq_dbr_init(): consumer index 0, arm word DVX_MLX5_CQ_ARM_POLLED), when both
 * umems are CPU-writable. For a ring the CPU cannot write (GPU memory), the caller does
 * that itself, with the same two helpers on a host copy, and says so with
 * DVX_CQ_F_PREINIT (without it such a CQ is refused).
 */
struct dvx_cq_cfg {
	uint32_t depth;
	uint32_t flags;
	struct dvx_umem *ring_umem;
	uint64_t ring_offset;
	struct dvx_umem *dbr_umem;
	uint64_t dbr_offset;
	struct dvx_uar *uar;
};

/**
 * struct dvx_cq - a CQ, in caller storage.
 * @mcq:	ring state for pollers (buf, log_size, ci, dbrec, cqn). A collapsed CQ
 *		has log_size 0 (one entry); its owner bits mean nothing (prm 4.3)
 * @obj:	the DEVX object
 * @nic:	the NIC
 * @ring_umem:	where the ring is
 * @dbr_umem:	where the doorbell record is
 * @uar:	the UAR its page id came from
 * @ring:	the ring's address (ring_umem->addr + offset)
 * @dbrec:	the doorbell record's address
 * @ring_offset: offset of the ring in @ring_umem
 * @dbr_offset:	offset of the record in @dbr_umem
 * @cqn:	CQ number
 * @depth:	CQEs
 * @flags:	DVX_CQ_F_* it was created with
 * @users:	QPs bound to it; dvx_cq_destroy() refuses while non-zero
 * @index_base:	the CQ index (24-bit counter, as WAIT-on-CQ counts) that the bound
 *		QP's WQE index 0 maps to: 0 after create, moved by dvx_qp_recover()
 * @live:	DVX_LIVE between create and destroy (a create into a live object is -EBUSY)
 * @ring_ext, @dbr_ext: the ring's and the record's ranges in their umems' lists
 * @qps:	the live QPs bound to it (linked through their cq_next; dvx_cq_poll())
 */
struct dvx_cq {
	struct dvx_mlx5_cq mcq;
	struct dvx_hal_obj obj;
	struct dvx_nic *nic;
	struct dvx_umem *ring_umem;
	struct dvx_umem *dbr_umem;
	struct dvx_uar *uar;
	uint8_t *ring;
	dvx_be32 *dbrec;
	uint64_t ring_offset;
	uint64_t dbr_offset;
	uint32_t cqn;
	uint32_t depth;
	uint32_t flags;
	uint32_t users;
	uint32_t index_base;
	uint32_t live;
	struct dvx_umem_ext ring_ext;
	struct dvx_umem_ext dbr_ext;
	struct dvx_qp *qps;
};

/**
 * dvx_cq_mem_req() - the memory a CQ of @attr needs (only depth and flags are read).
 * @attr:	the CQ
 * @ring:	ring bytes and alignment (DVX_RING_ALIGN)
 * @dbr:	DVX_DBR_BYTES, DVX_DBR_ALIGN
 * Return: 0 or -EINVAL (depth 0 or not a power of two, collapsed without OI).
 */
int dvx_cq_mem_req(const struct dvx_cq_cfg *attr, struct dvx_mem_req *ring,
		   struct dvx_mem_req *dbr);

/**
 * dvx_cq_create() - CREATE_CQ with 64-byte CQEs, the NIC's EQ and the given UAR.
 * @nic:	an open NIC
 * @attr:	the CQ
 * @cq:		caller storage, overwritten on success only
 *
 * Context: control path. Return: 0; -EINVAL (bad argument: depth, umems, offsets,
 * sizes; nothing touched); -EBUSY (@cq is live, or the ring or the record overlaps
 * a live CQ's or QP's ring or record in the same umem, or each other: nothing
 * touched); -EOPNOTSUPP (OI without the cap, depth above the cap);
 * or the hal's error ("CREATE_CQ: <status> syndrome 0x..." in nic->hal.diag). After
 * a hal error the ring may hold the 0xf1 pattern and the record zeroes, nothing else.
 */
int dvx_cq_create(struct dvx_nic *nic, const struct dvx_cq_cfg *attr, struct dvx_cq *cq);

/**
 * dvx_cq_destroy() - destroy the CQ.
 * Return: 0; -EINVAL (not live); -EBUSY (QPs still bound); or the hal's error (the CQ
 * stays). The ring memory stays the caller's.
 */
int dvx_cq_destroy(struct dvx_cq *cq);

DVX_END_DECLS

#endif /* DVX_NIC_CQ_H */
