/* SPDX-License-Identifier: MIT */
/*
 * dvx/mlx5/cqe.h - completion queue: the owner-bit rule, CQE decoding, error CQEs.
 *
 * A CQ of N = 2^log_size 64-byte entries is consumed with a free-running counter ci.
 * Entry ci & (N-1) belongs to software iff its opcode is not INVALID and its owner
 * bit equals (ci >> log_size) & 1; the hardware flips the bit it writes on every pass
 * (prm 4.2). dvx initialises a fresh ring with op_own 0xf1 (INVALID, owner 1), so no
 * entry looks valid on the first pass.
 *
 * dvx_mlx5_cqe_parse() turns one entry into a struct dvx_mlx5_cqe_info and an errno:
 * an error CQE is an error (never a completion), a compressed CQE is reported as
 * -EPROTO (dvx never enables compression and refuses to misread one).
 */
#ifndef DVX_MLX5_CQE_H
#define DVX_MLX5_CQE_H

#include <dvx/mlx5/prm.h>

#ifndef __CUDACC__
#include <errno.h>
#else
#include <cerrno>
#endif

/**
 * struct dvx_mlx5_cq - a CQ as a poller sees it.
 * @buf:	entry 0 of the ring
 * @log_size:	log2 of the number of entries
 * @ci:		consumer index (free-running)
 * @dbrec:	the CQ doorbell record (word 0: SET_CI, word 1: ARM); NULL leaves it
 *		(overrun-ignore CQs polled by a GPU that never hands entries back)
 * @cqn:	CQ number
 * @flags:	DVX_MLX5_CQ_SYS: GPU pollers load at system scope (the CQ is in host
 *		memory); the CPU ignores it
 *
 * Fixed-width (32 bytes), so a host-built copy with device addresses can be passed to
 * a kernel by value.
 */
struct dvx_mlx5_cq {
	uint8_t *buf;
	uint32_t log_size;
	uint32_t ci;
	dvx_be32 *dbrec;
	uint32_t cqn;
	uint32_t flags;
};

/* struct dvx_mlx5_cq.flags */
#define DVX_MLX5_CQ_SYS 1u

/**
 * struct dvx_mlx5_cqe_info - one CQE, decoded to CPU order.
 * @opcode:	enum dvx_mlx5_cqe_opcode (op_own[7:4])
 * @format:	op_own[3:2]
 * @owner:	op_own[0]
 * @se:		solicited event, op_own[1]
 * @wqe_opcode:	requester: opcode of the completed (or failed) WQE
 * @syndrome:	error CQEs: enum dvx_mlx5_cqe_syndrome
 * @vendor_syndrome: error CQEs: vendor_err_synd
 * @hw_err_synd: error CQEs: hw_err_synd
 * @hw_synd_type: error CQEs: hw_synd_type
 * @wqe_counter: index of the completed/failed WQE's first WQEBB (requester), or of
 *		the receive WQE (responder)
 * @qpn:	local QP number
 * @byte_cnt:	bytes received (responder) or read (RDMA READ)
 * @imm:	immediate of WRITE_IMM / SEND_IMM, CPU order
 * @srqn_uidx:	user index (cqe_version 1) or SRQ number, 24 bits
 * @rqpn:	remote QP number (responder)
 * @slid:	remote LID (responder, IB)
 * @timestamp:	raw timestamp
 * @is_error:	1 for REQ_ERR / RESP_ERR / SIG_ERR (0 for a compressed or unexpected CQE)
 */
struct dvx_mlx5_cqe_info {
	uint8_t opcode;
	uint8_t format;
	uint8_t owner;
	uint8_t se;
	uint8_t wqe_opcode;
	uint8_t syndrome;
	uint8_t vendor_syndrome;
	uint8_t hw_err_synd;
	uint8_t hw_synd_type;
	uint8_t is_error;
	uint16_t wqe_counter;
	uint32_t qpn;
	uint32_t byte_cnt;
	uint32_t imm;
	uint32_t srqn_uidx;
	uint32_t rqpn;
	uint16_t slid;
	uint16_t rsvd;
	uint64_t timestamp;
};

/**
 * dvx_mlx5_cqe_syndrome_errno() - the errno dvx reports for an error-CQE syndrome.
 *
 *   LOCAL_LENGTH -EMSGSIZE   LOCAL_QP_OP -EINVAL      LOCAL_PROT -EACCES
 *   WR_FLUSH -ECANCELED      MW_BIND -EINVAL          BAD_RESP -EPROTO
 *   LOCAL_ACCESS -EFAULT     REMOTE_INVAL_REQ -EREMOTEIO  REMOTE_ACCESS -EPERM
 *   REMOTE_OP -EREMOTEIO     TRANSPORT_RETRY_EXC -EHOSTUNREACH
 *   RNR_RETRY_EXC -ENOBUFS   REMOTE_ABORTED -ECONNABORTED   anything else -EIO
 */
DVX_INLINE int dvx_mlx5_cqe_syndrome_errno(uint8_t syndrome)
{
	switch (syndrome) {
	case DVX_MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR: return -EMSGSIZE;
	case DVX_MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR: return -EINVAL;
	case DVX_MLX5_CQE_SYNDROME_LOCAL_PROT_ERR: return -EACCES;
	case DVX_MLX5_CQE_SYNDROME_WR_FLUSH_ERR: return -ECANCELED;
	case DVX_MLX5_CQE_SYNDROME_MW_BIND_ERR: return -EINVAL;
	case DVX_MLX5_CQE_SYNDROME_BAD_RESP_ERR: return -EPROTO;
	case DVX_MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR: return -EFAULT;
	case DVX_MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR: return -EREMOTEIO;
	case DVX_MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR: return -EPERM;
	case DVX_MLX5_CQE_SYNDROME_REMOTE_OP_ERR: return -EREMOTEIO;
	case DVX_MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR: return -EHOSTUNREACH;
	case DVX_MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR: return -ENOBUFS;
	case DVX_MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR: return -ECONNABORTED;
	default: return -EIO;
	}
}

/** dvx_mlx5_cqe_at() - the entry for counter value @idx. */
DVX_INLINE struct dvx_mlx5_cqe64 *dvx_mlx5_cqe_at(uint8_t *buf, uint32_t log_size, uint32_t idx)
{
	/* via void *: entries are 64-byte aligned (cq_init checks), which clang cannot see */
	return (struct dvx_mlx5_cqe64 *)(void *)(buf + ((idx & ((1u << log_size) - 1)) *
							 DVX_MLX5_CQE_SIZE));
}

/**
 * dvx_mlx5_cqe_sw_owned() - the owner-bit rule for the entry read as @op_own at
 * counter value @idx of a 2^@log_size CQ.
 */
DVX_INLINE int dvx_mlx5_cqe_sw_owned(uint8_t op_own, uint32_t idx, uint32_t log_size)
{
	return (op_own >> 4) != DVX_MLX5_CQE_INVALID &&
	       (op_own & DVX_MLX5_CQE_OWNER_MASK) == ((idx >> log_size) & 1u);
}

/**
 * dvx_mlx5_cqe_parse() - decode a CQE already known to be software-owned.
 * @cqe:	the entry (read after dvx_rmb_owner_before_cqe() on the CPU)
 * @info:	filled in every case
 *
 * Return: 0 for a successful completion; for an error CQE the syndrome's errno
 * (dvx_mlx5_cqe_syndrome_errno()); -EPROTO for a compressed CQE, an INVALID or a
 * RESIZE/NO_PACKET opcode; -EBADMSG for a signature error.
 */
DVX_INLINE int dvx_mlx5_cqe_parse(const struct dvx_mlx5_cqe64 *cqe, struct dvx_mlx5_cqe_info *info)
{
	uint8_t op_own = cqe->op_own;
	uint32_t sop = dvx_be32_to_cpu(cqe->sop_drop_qpn);

	info->opcode = op_own >> 4;
	info->format = (op_own >> 2) & 3u;
	info->owner = op_own & DVX_MLX5_CQE_OWNER_MASK;
	info->se = (op_own & DVX_MLX5_CQE_SE_MASK) ? 1 : 0;
	info->wqe_opcode = (uint8_t)(sop >> 24);
	info->qpn = sop & 0xffffffu;
	info->wqe_counter = dvx_be16_to_cpu(cqe->wqe_counter);
	info->byte_cnt = dvx_be32_to_cpu(cqe->byte_cnt);
	info->imm = dvx_be32_to_cpu(cqe->imm_inval_pkey);
	info->srqn_uidx = dvx_be32_to_cpu(cqe->srqn_uidx) & 0xffffffu;
	info->rqpn = dvx_be32_to_cpu(cqe->flags_rqpn) & 0xffffffu;
	info->slid = dvx_be16_to_cpu(cqe->slid);
	info->rsvd = 0;
	info->timestamp = dvx_be64_to_cpu(cqe->timestamp);
	info->syndrome = 0;
	info->vendor_syndrome = 0;
	info->hw_err_synd = 0;
	info->hw_synd_type = 0;
	info->is_error = 0;

	if (dvx_unlikely(info->format == DVX_MLX5_CQE_FORMAT_COMPRESSED))
		return -EPROTO;
	switch (info->opcode) {
	case DVX_MLX5_CQE_REQ:
	case DVX_MLX5_CQE_RESP_WR_IMM:
	case DVX_MLX5_CQE_RESP_SEND:
	case DVX_MLX5_CQE_RESP_SEND_IMM:
	case DVX_MLX5_CQE_RESP_SEND_INV:
		return 0;
	case DVX_MLX5_CQE_REQ_ERR:
	case DVX_MLX5_CQE_RESP_ERR: {
		const struct dvx_mlx5_err_cqe *e = (const struct dvx_mlx5_err_cqe *)cqe;

		info->is_error = 1;
		info->syndrome = e->syndrome;
		info->vendor_syndrome = e->vendor_err_synd;
		info->hw_err_synd = e->hw_err_synd;
		info->hw_synd_type = e->hw_synd_type;
		return dvx_mlx5_cqe_syndrome_errno(e->syndrome);
	}
	case DVX_MLX5_CQE_SIG_ERR:
		info->is_error = 1;
		return -EBADMSG;
	default:
		return -EPROTO;
	}
}

/**
 * dvx_mlx5_cq_init() - set up a poller over a caller ring of 2^@log_size entries.
 * @cq:		filled
 * @buf:	the ring, 64-byte aligned; it must already hold DVX_MLX5_CQE_INIT_OP_OWN in
 *		every op_own (see dvx_mlx5_cq_ring_init())
 * @log_size:	log2 of the entries, at most 24
 * @dbrec:	the CQ's doorbell record, 8-byte aligned
 * @cqn:	CQ number (24 bits)
 *
 * Context: any. Return: 0 or -EINVAL (@cq unchanged). @cq->flags is 0 (CPU polling);
 * set DVX_MLX5_CQ_SYS for a GPU view of a CQ in host memory.
 */
DVX_INLINE int dvx_mlx5_cq_init(struct dvx_mlx5_cq *cq, void *buf, uint32_t log_size,
				dvx_be32 *dbrec, uint32_t cqn)
{
	if (!buf || ((uintptr_t)buf & (DVX_MLX5_CQE_SIZE - 1)) || log_size > 24 || !dbrec ||
	    ((uintptr_t)dbrec & 7) || cqn > 0xffffffu)
		return -EINVAL;
	cq->buf = (uint8_t *)buf;
	cq->log_size = log_size;
	cq->ci = 0;
	cq->dbrec = dbrec;
	cq->cqn = cqn;
	cq->flags = 0;
	return 0;
}

/** dvx_mlx5_cq_ring_init() - mark every entry of a fresh ring INVALID/owner 1. */
DVX_INLINE void dvx_mlx5_cq_ring_init(void *buf, uint32_t log_size)
{
	uint32_t i, n = 1u << log_size;

	for (i = 0; i < n; i++)
		dvx_mlx5_cqe_at((uint8_t *)buf, log_size, i)->op_own = DVX_MLX5_CQE_INIT_OP_OWN;
}

/**
 * dvx_mlx5_cq_dbr_init() - a fresh CQ doorbell record for a CQ that is only polled.
 * @dbrec:	the 8-byte record, before CREATE_CQ
 *
 * Word 0 (the consumer index) 0; word 1 (arm) DVX_MLX5_CQ_ARM_POLLED, never 0: with a
 * zero arm word the device may run its doorbell recovery on a CQ nobody arms, which the
 * Linux driver avoids for its own polled CQs with exactly this value (prm 4.4).
 *
 * Context: any. Return: nothing.
 */
DVX_INLINE void dvx_mlx5_cq_dbr_init(dvx_be32 *dbrec)
{
	dbrec[DVX_MLX5_CQ_SET_CI] = dvx_cpu_to_be32(0);
	dbrec[DVX_MLX5_CQ_ARM_DB] = dvx_cpu_to_be32(DVX_MLX5_CQ_ARM_POLLED);
}

#include <dvx/mlx5/barrier.h>

/* ---- polling: one sequence for CPU and GPU pollers (prm 4.2, 4.4) ---- */

/**
 * dvx_mlx5_cq_peek() - the CQE at ci if software owns it, else NULL.
 * @cq:		the poller's view (one poller at a time)
 *
 * The owner byte is loaded first (dvx_cqe_owner_load(): an acquire, at system scope on
 * a GPU with DVX_MLX5_CQ_SYS), so the returned entry's other fields may be read.
 * Consume it with dvx_mlx5_cq_pop().
 *
 * Context: the CQ's poller, CPU or GPU. Return: the entry, or NULL when the CQ is
 * empty.
 */
DVX_INLINE struct dvx_mlx5_cqe64 *dvx_mlx5_cq_peek(struct dvx_mlx5_cq *cq)
{
	struct dvx_mlx5_cqe64 *cqe = dvx_mlx5_cqe_at(cq->buf, cq->log_size, cq->ci);
	uint8_t op_own = dvx_cqe_owner_load(cqe, (cq->flags & DVX_MLX5_CQ_SYS) ? DVX_SCOPE_SYS :
									      DVX_SCOPE_GPU);

	if (!dvx_mlx5_cqe_sw_owned(op_own, cq->ci, cq->log_size))
		return NULL;
	return cqe;
}

/**
 * dvx_mlx5_cq_pop() - consume the entry at ci (the record is updated separately, once
 * per batch: dvx_mlx5_cq_update_ci()).
 * @cq:		the poller's view
 *
 * Context: the CQ's poller. Return: nothing.
 */
DVX_INLINE void dvx_mlx5_cq_pop(struct dvx_mlx5_cq *cq)
{
	cq->ci++;
}

/**
 * dvx_mlx5_cq_update_ci() - tell the device how far software has consumed, so it may
 * reuse those entries: DBR word 0 = BE32(ci & 0xffffff) (prm 4.4). Not needed for
 * overrun-ignore CQs, harmless for them; nothing when the view has no record.
 * @cq:		the poller's view
 *
 * Context: the CQ's poller, CPU or GPU. Return: nothing.
 */
DVX_INLINE void dvx_mlx5_cq_update_ci(struct dvx_mlx5_cq *cq)
{
	if (!cq->dbrec)
		return;
	/* Reads of the consumed entries complete before they are handed back. */
	dvx_mb_cqe_reads_before_ci();
	dvx_store_dbrec(&cq->dbrec[DVX_MLX5_CQ_SET_CI],
			dvx_cpu_to_be32(cq->ci & DVX_MLX5_CQ_CI_MASK));
}

/**
 * dvx_mlx5_cq_poll_one() - take the next completion, if any.
 * @cq:		the poller's view
 * @info:	filled when an entry was taken
 *
 * The record is not updated: call dvx_mlx5_cq_update_ci() after a batch.
 *
 * Context: the CQ's poller, CPU or GPU. Return: 1 and @info for a good completion; a
 * negative errno (and @info) for an error, compressed or unexpected entry, which is
 * consumed all the same; 0 when the CQ is empty.
 */
DVX_INLINE int dvx_mlx5_cq_poll_one(struct dvx_mlx5_cq *cq, struct dvx_mlx5_cqe_info *info)
{
	struct dvx_mlx5_cqe64 *cqe = dvx_mlx5_cq_peek(cq);
	int err;

	if (!cqe)
		return 0;
	err = dvx_mlx5_cqe_parse(cqe, info);
	dvx_mlx5_cq_pop(cq);
	return err ? err : 1;
}
#endif /* DVX_MLX5_CQE_H */
