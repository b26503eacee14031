/* SPDX-License-Identifier: MIT */
/*
 * dvx/mlx5/wqe.h - send WQE builders, shared by the CPU and GPU posting paths.
 *
 * Every builder writes one complete WQE into a send ring at a given WQEBB index and
 * returns the number of WQEBBs it occupies (or a negative errno, having written
 * nothing). The ring is addressed modulo its size at 16-byte granularity, so a WQE
 * that spans several WQEBBs continues at WQEBB 0 when it runs past the ring's end
 * (prm 2.1); inline payloads wrap byte-exactly.
 *
 * Builders are pure: no locks, no doorbells, no allocation, no printing. Reserving
 * the slots and ringing the doorbell is the caller's business (dvx/mlx5/sq.h on the
 * CPU, the gpu/ layer on the GPU). Builders check only that the request is encodable
 * (field widths, ds limit, the ring's inline limit); they deliberately do not reject
 * what the hardware itself reports (a misaligned atomic, a bad key), so the software
 * NIC can be tested against the very bytes a caller would post.
 *
 * Values are given in CPU order (addresses, keys, lengths, atomic operands, the
 * immediate) and converted to big-endian here. fm_ce_se is the raw ctrl byte: compose
 * it from DVX_MLX5_WQE_CTRL_FM(), DVX_MLX5_WQE_CTRL_CE() and DVX_MLX5_WQE_CTRL_SOLICITED.
 */
#ifndef DVX_MLX5_WQE_H
#define DVX_MLX5_WQE_H

#include <dvx/mlx5/prm.h>

#ifndef __CUDACC__
#include <errno.h>
#include <string.h>
#else
#include <cerrno>
#include <cstring>
#endif

/**
 * struct dvx_mlx5_wq - what a builder needs to know about a send ring.
 * @buf:	WQEBB 0 of the ring, 64-byte aligned
 * @size_mask:	ring bytes - 1 (ring bytes = nwqebb * 64, a power of two)
 * @qpn:	the QP number, written into every ctrl segment
 * @max_inline:	largest inline payload the QP was created for (bytes)
 * @qpn_be8:	BE32(@qpn << 8), the ctrl segment's qpn_ds with ds 0, kept so that a
 *		builder only ORs in its ds (set by dvx_mlx5_wq_init(); a ring described
 *		by hand must set it too)
 *
 * Host/GPU shared: fixed-width, 24 bytes on LP64.
 */
struct dvx_mlx5_wq {
	uint8_t *buf;
	uint32_t size_mask;
	uint32_t qpn;
	uint32_t max_inline;
	dvx_be32 qpn_be8;
};

/** struct dvx_mlx5_sge - one local buffer (lkey, address, length): a data segment. */
struct dvx_mlx5_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

/**
 * struct dvx_mlx5_raddr - the remote side of an RDMA or atomic WQE: the values of its
 * remote address segment.
 * @addr:	remote virtual address (the MR's iova space)
 * @rkey:	the remote MR's rkey
 */
struct dvx_mlx5_raddr {
	uint64_t addr;
	uint32_t rkey;
};

/**
 * struct dvx_mlx5_masked_cs - the operands of a masked compare-and-swap (32-bit ones
 * use the low halves): the bits of @compare_mask are compared with @compare; on a
 * match the bits of @swap_mask are replaced by @swap.
 */
struct dvx_mlx5_masked_cs {
	uint64_t compare;
	uint64_t compare_mask;
	uint64_t swap;
	uint64_t swap_mask;
};

/* Largest inline payload any ring can take: ds 63 minus ctrl, raddr and the header. */
#define DVX_MLX5_MAX_INLINE (DVX_MLX5_MAX_WQE_BYTES - 2 * DVX_MLX5_DS_BYTES - 4u)
/* Largest scatter list a write/read WQE can carry (ds 63 minus ctrl and raddr). */
#define DVX_MLX5_MAX_SGE (DVX_MLX5_MAX_DS - 2u)

/** dvx_mlx5_wq_init() - describe a ring of @nwqebb WQEBBs (a power of two). */
DVX_INLINE int dvx_mlx5_wq_init(struct dvx_mlx5_wq *wq, void *buf, uint32_t nwqebb,
				uint32_t qpn, uint32_t max_inline)
{
	if (!buf || !DVX_IS_POW2(nwqebb) || nwqebb > (1u << DVX_MLX5_LOG_MAX_SQ) ||
	    ((uintptr_t)buf & (DVX_MLX5_SEND_WQE_BB - 1)) || qpn > 0xffffffu ||
	    max_inline > DVX_MLX5_MAX_INLINE)
		return -EINVAL;
	wq->buf = (uint8_t *)buf;
	wq->size_mask = nwqebb * DVX_MLX5_SEND_WQE_BB - 1;
	wq->qpn = qpn;
	wq->max_inline = max_inline;
	wq->qpn_be8 = dvx_cpu_to_be32(qpn << 8);
	return 0;
}

/** dvx_mlx5_wq_seg() - address of 16-byte segment @seg of the WQE at WQEBB @idx. */
DVX_INLINE void *dvx_mlx5_wq_seg(const struct dvx_mlx5_wq *wq, uint32_t idx, uint32_t seg)
{
	return wq->buf + (((idx << DVX_MLX5_SEND_WQE_SHIFT) + (seg << 4)) & wq->size_mask);
}

/**
 * dvx_mlx5_wq_wqebb() - address of WQEBB @idx: the WQE that starts there.
 *
 * A WQEBB never straddles the ring's end (the ring is whole WQEBBs), so the first
 * DVX_MLX5_DS_PER_WQEBB segments of a WQE are at +0, +16, +32 and +48 from here with
 * no masking; only segments in a later WQEBB can wrap and need dvx_mlx5_wq_seg().
 * The fixed-layout builders take this one pointer (and every field of @wq they need)
 * before their first store: the compiler must assume a store into the ring may
 * modify *@wq, so addresses computed after a store cost a reload of @wq each.
 */
DVX_INLINE void *dvx_mlx5_wq_wqebb(const struct dvx_mlx5_wq *wq, uint32_t idx)
{
	return wq->buf + ((idx << DVX_MLX5_SEND_WQE_SHIFT) & wq->size_mask);
}

/* Segment @seg (< DVX_MLX5_DS_PER_WQEBB) of the WQE whose first WQEBB is at @wqe. */
#define DVX_MLX5_WQE_SEG(wqe, seg) ((void *)((uint8_t *)(wqe) + (seg) * DVX_MLX5_DS_BYTES))

/** dvx_mlx5_ds_to_wqebb() - WQEBBs occupied by a WQE of @ds 16-byte units. */
DVX_INLINE uint32_t dvx_mlx5_ds_to_wqebb(uint32_t ds)
{
	return (ds + DVX_MLX5_DS_PER_WQEBB - 1) / DVX_MLX5_DS_PER_WQEBB;
}

/* ---- segment setters ---- */

/**
 * dvx_mlx5_set_ctrl_seg() - fill a WQE's control segment.
 * @c:		the segment, in the ring
 * @idx:	WQE index (the low 16 bits are written)
 * @opcode:	DVX_MLX5_OPCODE_*
 * @opmod:	opcode modifier
 * @qpn:	the SQ's QP number (24 bits)
 * @ds:		the WQE's size in 16-byte units, this segment included (6 bits)
 * @fm_ce_se:	fence mode, completion and solicited-event bits (DVX_MLX5_WQE_CTRL_*)
 * @imm:	immediate or invalidation key, CPU order (0 when the opcode has none)
 *
 * Every field of the segment is written (signature and stream id zeroed).
 *
 * Context: any, host or device; no barrier. Return: nothing.
 */
DVX_INLINE void dvx_mlx5_set_ctrl_seg(struct dvx_mlx5_wqe_ctrl_seg *c, uint32_t idx,
				      uint8_t opcode, uint8_t opmod, uint32_t qpn, uint32_t ds,
				      uint8_t fm_ce_se, uint32_t imm)
{
	c->opmod_idx_opcode = dvx_cpu_to_be32(((uint32_t)opmod << 24) |
					      ((idx & DVX_MLX5_WQE_INDEX_MASK) << 8) | opcode);
	c->qpn_ds = dvx_cpu_to_be32((qpn << 8) | (ds & 0x3fu));
	c->signature = 0;
	c->dci_stream_channel_id[0] = 0;
	c->dci_stream_channel_id[1] = 0;
	c->fm_ce_se = fm_ce_se;
	c->imm = dvx_cpu_to_be32(imm);
}

/**
 * dvx_mlx5_wqe_ctrl() - fill a WQE's control segment with a pre-swapped QPN.
 * @c:		the segment, in the ring
 * @idx:	WQE index (the low 16 bits are written)
 * @opcode:	DVX_MLX5_OPCODE_*
 * @opmod:	opcode modifier
 * @qpn_be8:	the ring's QPN shifted left by 8, big-endian (wq->qpn_be8)
 * @ds:		the WQE's size in 16-byte units, this segment included (6 bits)
 * @fm_ce_se:	fence mode, completion and solicited-event bits
 * @imm:	immediate or invalidation key, CPU order
 *
 * As dvx_mlx5_set_ctrl_seg(), with the QPN taken already swapped so only @ds is
 * ORed in; the builders use it.
 *
 * Context: any, host or device; no barrier. Return: nothing.
 */
DVX_INLINE void dvx_mlx5_wqe_ctrl(struct dvx_mlx5_wqe_ctrl_seg *c, uint32_t idx,
				  uint8_t opcode, uint8_t opmod, dvx_be32 qpn_be8, uint32_t ds,
				  uint8_t fm_ce_se, uint32_t imm)
{
	c->opmod_idx_opcode = dvx_cpu_to_be32(((uint32_t)opmod << 24) |
					      ((idx & DVX_MLX5_WQE_INDEX_MASK) << 8) | opcode);
	c->qpn_ds = (DVX_FORCE dvx_be32)((DVX_FORCE uint32_t)qpn_be8 |
					 (DVX_FORCE uint32_t)dvx_cpu_to_be32(ds & 0x3fu));
	c->signature = 0;
	c->dci_stream_channel_id[0] = 0;
	c->dci_stream_channel_id[1] = 0;
	c->fm_ce_se = fm_ce_se;
	c->imm = dvx_cpu_to_be32(imm);
}

/**
 * dvx_mlx5_set_raddr_seg() - fill a remote-address segment (RDMA and atomics).
 * @r:		the segment, in the ring
 * @raddr:	remote virtual address (the peer MR's iova space)
 * @rkey:	the remote MR's rkey
 *
 * Context: any, host or device. Return: nothing.
 */
DVX_INLINE void dvx_mlx5_set_raddr_seg(struct dvx_mlx5_wqe_raddr_seg *r, uint64_t raddr,
				       uint32_t rkey)
{
	r->raddr = dvx_cpu_to_be64(raddr);
	r->rkey = dvx_cpu_to_be32(rkey);
	r->rsvd12 = 0;
}

/**
 * dvx_mlx5_set_data_seg() - fill a data (scatter/gather) segment.
 * @d:		the segment, in the ring
 * @addr:	local address of the buffer
 * @lkey:	the local MR's lkey
 * @len:	byte count (the caller keeps it below 2^31)
 *
 * Context: any, host or device. Return: nothing.
 */
DVX_INLINE void dvx_mlx5_set_data_seg(struct dvx_mlx5_wqe_data_seg *d, uint64_t addr,
				      uint32_t lkey, uint32_t len)
{
	d->byte_count = dvx_cpu_to_be32(len);
	d->lkey = dvx_cpu_to_be32(lkey);
	d->addr = dvx_cpu_to_be64(addr);
}

/**
 * dvx_mlx5_set_atomic_seg() - fill an atomic segment.
 * @a:		the segment, in the ring
 * @swap_add:	the swap value (compare-and-swap) or the addend (fetch-and-add)
 * @compare:	the compare value (compare-and-swap), else 0
 *
 * Context: any, host or device. Return: nothing.
 */
DVX_INLINE void dvx_mlx5_set_atomic_seg(struct dvx_mlx5_wqe_atomic_seg *a, uint64_t swap_add,
					uint64_t compare)
{
	a->swap_add = dvx_cpu_to_be64(swap_add);
	a->compare = dvx_cpu_to_be64(compare);
}

/**
 * dvx_mlx5_set_wait_seg() - fill the wait segment of a core-direct WAIT, SEND_EN
 * or RECV_EN.
 * @w:		the segment, in the ring
 * @max_index:	WAIT: the CQE index to wait for; SEND_EN/RECV_EN: the index to enable
 *		the slave queue up to
 * @qpn_cqn:	the CQ number (WAIT) or the slave QP number (SEND_EN, RECV_EN)
 *
 * The reserved bytes are zeroed.
 *
 * Context: any, host or device. Return: nothing.
 */
DVX_INLINE void dvx_mlx5_set_wait_seg(struct dvx_mlx5_wqe_wait_seg *w, uint32_t max_index,
				      uint32_t qpn_cqn)
{
	uint32_t i;

	for (i = 0; i < 8; i++)
		w->rsvd0[i] = 0;
	w->max_index = dvx_cpu_to_be32(max_index);
	w->qpn_cqn = dvx_cpu_to_be32(qpn_cqn);
}

/**
 * dvx_mlx5_wq_copy() - copy bytes into a WQE, wrapping at the ring's end.
 * @wq:		the ring
 * @idx:	WQE index
 * @off:	byte offset from the WQE's first byte
 * @src:	source bytes, read during the call only
 * @len:	bytes to copy, at most the ring's size
 *
 * Context: any, host or device; plain stores, no barrier. Return: nothing.
 */
DVX_INLINE void dvx_mlx5_wq_copy(const struct dvx_mlx5_wq *wq, uint32_t idx, uint32_t off,
				 const void *src, uint32_t len)
{
	uint32_t o = ((idx << DVX_MLX5_SEND_WQE_SHIFT) + off) & wq->size_mask;
	uint32_t room = wq->size_mask + 1 - o;
	const uint8_t *s = (const uint8_t *)src;

	if (len <= room) {
		memcpy(wq->buf + o, s, len);
	} else {
		memcpy(wq->buf + o, s, room);
		memcpy(wq->buf, s + room, len - room);
	}
}

/**
 * dvx_mlx5_wq_zero() - zero bytes of a WQE, wrapping at the ring's end.
 * @wq:		the ring
 * @idx:	WQE index
 * @off:	byte offset from the WQE's first byte
 * @len:	bytes to zero, at most the ring's size
 *
 * Context: any, host or device; plain stores, no barrier. Return: nothing.
 */
DVX_INLINE void dvx_mlx5_wq_zero(const struct dvx_mlx5_wq *wq, uint32_t idx, uint32_t off,
				 uint32_t len)
{
	uint32_t o = ((idx << DVX_MLX5_SEND_WQE_SHIFT) + off) & wq->size_mask;
	uint32_t room = wq->size_mask + 1 - o;

	if (len <= room) {
		memset(wq->buf + o, 0, len);
	} else {
		memset(wq->buf + o, 0, room);
		memset(wq->buf, 0, len - room);
	}
}

/* ---- whole-WQE builders ---- */

/**
 * dvx_mlx5_wqe_nop() - a NOP (ctrl only, ds 1).
 * Return: 1 (WQEBB).
 */
DVX_INLINE int dvx_mlx5_wqe_nop(const struct dvx_mlx5_wq *wq, uint32_t idx, uint8_t fm_ce_se)
{
	dvx_mlx5_wqe_ctrl((struct dvx_mlx5_wqe_ctrl_seg *)dvx_mlx5_wq_wqebb(wq, idx), idx,
			      DVX_MLX5_OPCODE_NOP, 0, wq->qpn_be8, 1, fm_ce_se, 0);
	return 1;
}

/**
 * dvx_mlx5_wqe_rdma() - RDMA WRITE, WRITE_IMM or READ with one local buffer.
 * @opcode:	DVX_MLX5_OPCODE_RDMA_WRITE, _RDMA_WRITE_IMM or _RDMA_READ
 * @imm:	immediate for WRITE_IMM (CPU order), else 0
 * @r:		the remote address and rkey, read during the call only
 * @l:		the local buffer; its length 0 builds a WQE without a data segment (ds 2)
 *
 * Layout: ctrl, raddr, data (ds 3). Return: 1, or -EINVAL (bad opcode, length >= 2^31).
 */
DVX_INLINE int dvx_mlx5_wqe_rdma(const struct dvx_mlx5_wq *wq, uint32_t idx, uint8_t opcode,
				 uint8_t fm_ce_se, uint32_t imm, const struct dvx_mlx5_raddr *r,
				 const struct dvx_mlx5_sge *l)
{
	void *w = dvx_mlx5_wq_wqebb(wq, idx);
	uint64_t raddr = r->addr, laddr = l->addr;
	uint32_t rkey = r->rkey, lkey = l->lkey, len = l->length;
	uint32_t ctrl_imm = opcode == DVX_MLX5_OPCODE_RDMA_WRITE_IMM ? imm : 0;

	if (dvx_unlikely(opcode != DVX_MLX5_OPCODE_RDMA_WRITE &&
			 opcode != DVX_MLX5_OPCODE_RDMA_WRITE_IMM &&
			 opcode != DVX_MLX5_OPCODE_RDMA_READ))
		return -EINVAL;
	/* one test for both uncommon lengths, 0 (no data segment) and > 2^31 - 1, and the
	 * common case written out with ds 3: it then costs one compare-and-branch whether
	 * or not the compiler would have threaded a separate "if (len)" */
	if (dvx_likely(len - 1u < DVX_MLX5_MAX_BYTE_COUNT)) {
		dvx_mlx5_wqe_ctrl((struct dvx_mlx5_wqe_ctrl_seg *)DVX_MLX5_WQE_SEG(w, 0), idx,
				      opcode, 0, wq->qpn_be8, 3, fm_ce_se, ctrl_imm);
		dvx_mlx5_set_raddr_seg((struct dvx_mlx5_wqe_raddr_seg *)DVX_MLX5_WQE_SEG(w, 1),
				       raddr, rkey);
		dvx_mlx5_set_data_seg((struct dvx_mlx5_wqe_data_seg *)DVX_MLX5_WQE_SEG(w, 2),
				      laddr, lkey, len);
		return 1;
	}
	if (len)
		return -EINVAL;
	dvx_mlx5_wqe_ctrl((struct dvx_mlx5_wqe_ctrl_seg *)DVX_MLX5_WQE_SEG(w, 0), idx, opcode,
			      0, wq->qpn_be8, 2, fm_ce_se, ctrl_imm);
	dvx_mlx5_set_raddr_seg((struct dvx_mlx5_wqe_raddr_seg *)DVX_MLX5_WQE_SEG(w, 1), raddr,
			       rkey);
	return 1;
}

/** dvx_mlx5_wqe_rdma_write() - RDMA WRITE of one local buffer (ds 3, 1 WQEBB). */
DVX_INLINE int dvx_mlx5_wqe_rdma_write(const struct dvx_mlx5_wq *wq, uint32_t idx,
				       uint8_t fm_ce_se, uint64_t raddr, uint32_t rkey,
				       uint64_t laddr, uint32_t lkey, uint32_t len)
{
	struct dvx_mlx5_raddr r = { raddr, rkey };
	struct dvx_mlx5_sge l = { laddr, len, lkey };

	return dvx_mlx5_wqe_rdma(wq, idx, DVX_MLX5_OPCODE_RDMA_WRITE, fm_ce_se, 0, &r, &l);
}

/** dvx_mlx5_wqe_rdma_write_imm() - RDMA WRITE with immediate (ds 3, 1 WQEBB). */
DVX_INLINE int dvx_mlx5_wqe_rdma_write_imm(const struct dvx_mlx5_wq *wq, uint32_t idx,
					   uint8_t fm_ce_se, uint32_t imm,
					   const struct dvx_mlx5_raddr *r,
					   const struct dvx_mlx5_sge *l)
{
	return dvx_mlx5_wqe_rdma(wq, idx, DVX_MLX5_OPCODE_RDMA_WRITE_IMM, fm_ce_se, imm, r, l);
}

/** dvx_mlx5_wqe_rdma_read() - RDMA READ into one local buffer (ds 3, 1 WQEBB). */
DVX_INLINE int dvx_mlx5_wqe_rdma_read(const struct dvx_mlx5_wq *wq, uint32_t idx,
				      uint8_t fm_ce_se, uint64_t raddr, uint32_t rkey,
				      uint64_t laddr, uint32_t lkey, uint32_t len)
{
	struct dvx_mlx5_raddr r = { raddr, rkey };
	struct dvx_mlx5_sge l = { laddr, len, lkey };

	return dvx_mlx5_wqe_rdma(wq, idx, DVX_MLX5_OPCODE_RDMA_READ, fm_ce_se, 0, &r, &l);
}

/**
 * dvx_mlx5_wq_sgl() - write a scatter list as data segments of a WQE.
 * @wq:		the ring
 * @idx:	index of the WQE's first WQEBB
 * @first:	the segment (16-byte unit of the WQE) the first data segment goes to
 * @sgl:	the scatter list, read during the call only
 * @nsge:	its entries
 *
 * Zero-length entries are skipped (as rdma-core does); segments wrap at the ring's
 * end. The list must have passed dvx_mlx5_sgl_check().
 *
 * Context: any, host or device. Return: the number of segments written.
 */
DVX_INLINE uint32_t dvx_mlx5_wq_sgl(const struct dvx_mlx5_wq *wq, uint32_t idx, uint32_t first,
				    const struct dvx_mlx5_sge *sgl, uint32_t nsge)
{
	uint32_t i, n = 0;

	for (i = 0; i < nsge; i++) {
		if (!sgl[i].length)
			continue;
		dvx_mlx5_set_data_seg((struct dvx_mlx5_wqe_data_seg *)dvx_mlx5_wq_seg(wq, idx,
										first + n),
				      sgl[i].addr, sgl[i].lkey, sgl[i].length);
		n++;
	}
	return n;
}

/**
 * dvx_mlx5_sgl_check() - validate a scatter list for a WQE.
 * @sgl:	the scatter list (may be NULL when @nsge is 0)
 * @nsge:	its entries
 * @fixed:	segments of the WQE before the data segments (ctrl, raddr, ...)
 * @nseg:	set on success to the data segments needed (non-empty entries)
 *
 * Context: any, host or device. Return: 0; -EINVAL (NULL list with entries, an entry
 * longer than DVX_MLX5_MAX_BYTE_COUNT); -E2BIG (more than DVX_MLX5_MAX_DS segments in
 * all). Nothing is written on failure.
 */
DVX_INLINE int dvx_mlx5_sgl_check(const struct dvx_mlx5_sge *sgl, uint32_t nsge, uint32_t fixed,
				  uint32_t *nseg)
{
	uint32_t i, n = 0;

	if (nsge && !sgl)
		return -EINVAL;
	for (i = 0; i < nsge; i++) {
		if (sgl[i].length > DVX_MLX5_MAX_BYTE_COUNT)
			return -EINVAL;
		n += sgl[i].length != 0;
	}
	if (fixed + n > DVX_MLX5_MAX_DS)
		return -E2BIG;
	*nseg = n;
	return 0;
}

/**
 * dvx_mlx5_wqe_rdma_sgl() - RDMA WRITE, WRITE_IMM or READ with a scatter/gather list.
 * @r:		the remote address and rkey
 * @sgl:	local buffers; zero-length entries are skipped
 * @nsge:	entries in @sgl
 *
 * Layout: ctrl, raddr, one data segment per non-empty entry (ds 2 + n).
 * Return: WQEBBs used, -EINVAL (bad opcode or length) or -E2BIG (ds would exceed 63).
 */
DVX_INLINE int dvx_mlx5_wqe_rdma_sgl(const struct dvx_mlx5_wq *wq, uint32_t idx, uint8_t opcode,
				     uint8_t fm_ce_se, uint32_t imm, const struct dvx_mlx5_raddr *r,
				     const struct dvx_mlx5_sge *sgl, uint32_t nsge)
{
	uint32_t n;
	int err;

	if (opcode != DVX_MLX5_OPCODE_RDMA_WRITE && opcode != DVX_MLX5_OPCODE_RDMA_WRITE_IMM &&
	    opcode != DVX_MLX5_OPCODE_RDMA_READ)
		return -EINVAL;
	err = dvx_mlx5_sgl_check(sgl, nsge, 2, &n);
	if (err)
		return err;
	dvx_mlx5_wqe_ctrl((struct dvx_mlx5_wqe_ctrl_seg *)dvx_mlx5_wq_seg(wq, idx, 0), idx,
			      opcode, 0, wq->qpn_be8, 2 + n, fm_ce_se,
			      opcode == DVX_MLX5_OPCODE_RDMA_WRITE_IMM ? imm : 0);
	dvx_mlx5_set_raddr_seg((struct dvx_mlx5_wqe_raddr_seg *)dvx_mlx5_wq_seg(wq, idx, 1),
			       r->addr, r->rkey);
	dvx_mlx5_wq_sgl(wq, idx, 2, sgl, nsge);
	return (int)dvx_mlx5_ds_to_wqebb(2 + n);
}

/**
 * dvx_mlx5_wqe_send_sgl() - SEND or SEND_IMM with a scatter/gather list.
 * @opcode:	DVX_MLX5_OPCODE_SEND or _SEND_IMM
 *
 * Layout: ctrl, one data segment per non-empty entry (ds 1 + n).
 * Return: WQEBBs used, -EINVAL or -E2BIG.
 */
DVX_INLINE int dvx_mlx5_wqe_send_sgl(const struct dvx_mlx5_wq *wq, uint32_t idx, uint8_t opcode,
				     uint8_t fm_ce_se, uint32_t imm,
				     const struct dvx_mlx5_sge *sgl, uint32_t nsge)
{
	uint32_t n;
	int err;

	if (opcode != DVX_MLX5_OPCODE_SEND && opcode != DVX_MLX5_OPCODE_SEND_IMM)
		return -EINVAL;
	err = dvx_mlx5_sgl_check(sgl, nsge, 1, &n);
	if (err)
		return err;
	dvx_mlx5_wqe_ctrl((struct dvx_mlx5_wqe_ctrl_seg *)dvx_mlx5_wq_seg(wq, idx, 0), idx,
			      opcode, 0, wq->qpn_be8, 1 + n, fm_ce_se,
			      opcode == DVX_MLX5_OPCODE_SEND_IMM ? imm : 0);
	dvx_mlx5_wq_sgl(wq, idx, 1, sgl, nsge);
	return (int)dvx_mlx5_ds_to_wqebb(1 + n);
}

/** dvx_mlx5_wqe_send() - SEND of one local buffer (ds 2, 1 WQEBB; ds 1 when @len is 0). */
DVX_INLINE int dvx_mlx5_wqe_send(const struct dvx_mlx5_wq *wq, uint32_t idx, uint8_t fm_ce_se,
				 uint64_t laddr, uint32_t lkey, uint32_t len)
{
	struct dvx_mlx5_sge sge = { laddr, len, lkey };

	return dvx_mlx5_wqe_send_sgl(wq, idx, DVX_MLX5_OPCODE_SEND, fm_ce_se, 0, &sge, 1);
}

/** dvx_mlx5_wqe_send_imm() - SEND with immediate of one local buffer. */
DVX_INLINE int dvx_mlx5_wqe_send_imm(const struct dvx_mlx5_wq *wq, uint32_t idx,
				     uint8_t fm_ce_se, uint32_t imm, uint64_t laddr,
				     uint32_t lkey, uint32_t len)
{
	struct dvx_mlx5_sge sge = { laddr, len, lkey };

	return dvx_mlx5_wqe_send_sgl(wq, idx, DVX_MLX5_OPCODE_SEND_IMM, fm_ce_se, imm, &sge, 1);
}

/**
 * dvx_mlx5_wq_inline() - write an inline-data segment into a WQE.
 * @wq:		the ring
 * @idx:	index of the WQE's first WQEBB
 * @seg:	the segment (16-byte unit of the WQE) it starts at
 * @data:	the payload, read during the call only (may be NULL when @len is 0)
 * @len:	payload bytes; the caller has checked them against the inline limits
 *
 * Writes the 4-byte header (byte count with DVX_MLX5_INLINE_SEG), the payload and zero
 * padding to a 16-byte boundary, wrapping at the ring's end.
 *
 * Context: any, host or device. Return: the 16-byte units the segment occupies.
 */
DVX_INLINE uint32_t dvx_mlx5_wq_inline(const struct dvx_mlx5_wq *wq, uint32_t idx, uint32_t seg,
				       const void *data, uint32_t len)
{
	uint32_t units = (4 + len + 15) / 16;
	uint32_t off = seg * DVX_MLX5_DS_BYTES;
	struct dvx_mlx5_wqe_inl_seg *h =
		(struct dvx_mlx5_wqe_inl_seg *)dvx_mlx5_wq_seg(wq, idx, seg);

	h->byte_count = dvx_cpu_to_be32(len | DVX_MLX5_INLINE_SEG);
	if (len)
		dvx_mlx5_wq_copy(wq, idx, off + 4, data, len);
	if (units * 16 > 4 + len)
		dvx_mlx5_wq_zero(wq, idx, off + 4 + len, units * 16 - 4 - len);
	return units;
}

/**
 * dvx_mlx5_wqe_rdma_write_inline() - RDMA WRITE (or WRITE_IMM) carrying its payload.
 * @opcode:	DVX_MLX5_OPCODE_RDMA_WRITE or _RDMA_WRITE_IMM
 * @r:		the remote address and rkey
 * @data:	the bytes exactly as they must land remotely
 * @len:	at most wq->max_inline
 *
 * Layout: ctrl, raddr, inline header + payload padded to 16 B (ds 2 + ceil((4+len)/16)).
 * Return: WQEBBs used, -EINVAL (bad opcode) or -EMSGSIZE (@len above the ring's limit).
 */
DVX_INLINE int dvx_mlx5_wqe_rdma_write_inline(const struct dvx_mlx5_wq *wq, uint32_t idx,
					      uint8_t opcode, uint8_t fm_ce_se, uint32_t imm,
					      const struct dvx_mlx5_raddr *r, const void *data,
					      uint32_t len)
{
	uint32_t ds;

	if (opcode != DVX_MLX5_OPCODE_RDMA_WRITE && opcode != DVX_MLX5_OPCODE_RDMA_WRITE_IMM)
		return -EINVAL;
	if (len > wq->max_inline || len > DVX_MLX5_MAX_INLINE || (len && !data))
		return -EMSGSIZE;
	ds = 2 + dvx_mlx5_wq_inline(wq, idx, 2, data, len);
	dvx_mlx5_set_raddr_seg((struct dvx_mlx5_wqe_raddr_seg *)dvx_mlx5_wq_seg(wq, idx, 1),
			       r->addr, r->rkey);
	dvx_mlx5_wqe_ctrl((struct dvx_mlx5_wqe_ctrl_seg *)dvx_mlx5_wq_seg(wq, idx, 0), idx,
			      opcode, 0, wq->qpn_be8, ds, fm_ce_se,
			      opcode == DVX_MLX5_OPCODE_RDMA_WRITE_IMM ? imm : 0);
	return (int)dvx_mlx5_ds_to_wqebb(ds);
}

/**
 * dvx_mlx5_wqe_send_inline() - SEND (or SEND_IMM) carrying its payload.
 * Layout: ctrl, inline header + payload (ds 1 + ceil((4+len)/16)).
 * Return: WQEBBs used, -EINVAL or -EMSGSIZE.
 */
DVX_INLINE int dvx_mlx5_wqe_send_inline(const struct dvx_mlx5_wq *wq, uint32_t idx,
					uint8_t opcode, uint8_t fm_ce_se, uint32_t imm,
					const void *data, uint32_t len)
{
	uint32_t ds;

	if (opcode != DVX_MLX5_OPCODE_SEND && opcode != DVX_MLX5_OPCODE_SEND_IMM)
		return -EINVAL;
	/* the ds limit as a plain length bound: (4 + len + 15) would wrap for len near 2^32 */
	if (len > wq->max_inline ||
	    len > DVX_MLX5_MAX_WQE_BYTES - DVX_MLX5_DS_BYTES - 4u || (len && !data))
		return -EMSGSIZE;
	ds = 1 + dvx_mlx5_wq_inline(wq, idx, 1, data, len);
	dvx_mlx5_wqe_ctrl((struct dvx_mlx5_wqe_ctrl_seg *)dvx_mlx5_wq_seg(wq, idx, 0), idx,
			      opcode, 0, wq->qpn_be8, ds, fm_ce_se,
			      opcode == DVX_MLX5_OPCODE_SEND_IMM ? imm : 0);
	return (int)dvx_mlx5_ds_to_wqebb(ds);
}

/**
 * dvx_mlx5_wqe_atomic_common() - the common part of an atomic WQE: ctrl + raddr + an
 * operand segment of @opseg_units + one 8/4-byte result data segment.
 * @wq:		the ring
 * @idx:	index of the WQE's first WQEBB
 * @opcode:	DVX_MLX5_OPCODE_ATOMIC_* (the caller checked it)
 * @opmod:	opcode modifier (extended atomics: the operand size)
 * @fm_ce_se:	fence mode, completion and solicited-event bits
 * @r:		remote address of the operand and the remote MR's rkey
 * @opseg_units: 16-byte units of the operand segment (1 or 2)
 * @l:		where the original value is returned: local address, lkey, and the
 *		result's size as the length (8 or 4)
 *
 * Writes all but the operand segment and returns the WQE's first WQEBB: the caller
 * writes the operands at DVX_MLX5_WQE_SEG(wqe, 2) (segments 2-3 never wrap). The data
 * segment is in a later WQEBB, which may wrap, when the operands take 2 units.
 *
 * Context: any, host or device. Return: the WQE's first WQEBB.
 */
DVX_INLINE void *dvx_mlx5_wqe_atomic_common(const struct dvx_mlx5_wq *wq, uint32_t idx,
					    uint8_t opcode, uint8_t opmod, uint8_t fm_ce_se,
					    const struct dvx_mlx5_raddr *r, uint32_t opseg_units,
					    const struct dvx_mlx5_sge *l)
{
	uint32_t dseg = 2 + opseg_units;
	void *w = dvx_mlx5_wq_wqebb(wq, idx);
	void *d = dseg < DVX_MLX5_DS_PER_WQEBB ? DVX_MLX5_WQE_SEG(w, dseg) :
						 dvx_mlx5_wq_seg(wq, idx, dseg);

	dvx_mlx5_wqe_ctrl((struct dvx_mlx5_wqe_ctrl_seg *)DVX_MLX5_WQE_SEG(w, 0), idx, opcode,
			      opmod, wq->qpn_be8, dseg + 1, fm_ce_se, 0);
	dvx_mlx5_set_raddr_seg((struct dvx_mlx5_wqe_raddr_seg *)DVX_MLX5_WQE_SEG(w, 1), r->addr,
			       r->rkey);
	dvx_mlx5_set_data_seg((struct dvx_mlx5_wqe_data_seg *)d, l->addr, l->lkey, l->length);
	return w;
}

/**
 * dvx_mlx5_wqe_atomic_fa() - 8-byte fetch-and-add; the old value lands at @laddr/@lkey.
 * Layout: ctrl, raddr, atomic (swap_add = @add, compare 0), data 8 B (ds 4). Return: 1.
 */
DVX_INLINE int dvx_mlx5_wqe_atomic_fa(const struct dvx_mlx5_wq *wq, uint32_t idx,
				      uint8_t fm_ce_se, uint64_t raddr, uint32_t rkey,
				      uint64_t add, uint64_t laddr, uint32_t lkey)
{
	struct dvx_mlx5_raddr r = { raddr, rkey };
	struct dvx_mlx5_sge l = { laddr, 8, lkey };
	void *w = dvx_mlx5_wqe_atomic_common(wq, idx, DVX_MLX5_OPCODE_ATOMIC_FA, 0, fm_ce_se, &r,
					     1, &l);

	dvx_mlx5_set_atomic_seg((struct dvx_mlx5_wqe_atomic_seg *)DVX_MLX5_WQE_SEG(w, 2), add,
				0);
	return 1;
}

/**
 * dvx_mlx5_wqe_atomic_cs() - 8-byte compare-and-swap: if *@r == @compare then
 * *@r = @swap; the old value lands at @laddr/@lkey.
 * Layout: ctrl, raddr, atomic (swap_add = @swap, compare = @compare), data 8 B (ds 4).
 * Return: 1.
 */
DVX_INLINE int dvx_mlx5_wqe_atomic_cs(const struct dvx_mlx5_wq *wq, uint32_t idx,
				      uint8_t fm_ce_se, const struct dvx_mlx5_raddr *r,
				      uint64_t compare, uint64_t swap, uint64_t laddr,
				      uint32_t lkey)
{
	struct dvx_mlx5_sge l = { laddr, 8, lkey };
	void *w = dvx_mlx5_wqe_atomic_common(wq, idx, DVX_MLX5_OPCODE_ATOMIC_CS, 0, fm_ce_se, r,
					     1, &l);

	dvx_mlx5_set_atomic_seg((struct dvx_mlx5_wqe_atomic_seg *)DVX_MLX5_WQE_SEG(w, 2), swap,
				compare);
	return 1;
}

/**
 * dvx_mlx5_wqe_masked_fa32() - 4-byte masked fetch-and-add (opmod 0x08).
 * @boundary:	field boundary mask (0: one 32-bit field)
 * Layout: ctrl, raddr, masked-FA32, data 4 B (ds 4). Return: 1.
 */
DVX_INLINE int dvx_mlx5_wqe_masked_fa32(const struct dvx_mlx5_wq *wq, uint32_t idx,
					uint8_t fm_ce_se, const struct dvx_mlx5_raddr *r,
					uint32_t add, uint32_t boundary, uint64_t laddr,
					uint32_t lkey)
{
	struct dvx_mlx5_sge l = { laddr, 4, lkey };
	void *w = dvx_mlx5_wqe_atomic_common(wq, idx, DVX_MLX5_OPCODE_ATOMIC_MASKED_FA,
					     DVX_MLX5_OPMOD_EXT_ATOMIC_4B, fm_ce_se, r, 1, &l);
	struct dvx_mlx5_wqe_masked_fa32_seg *s =
		(struct dvx_mlx5_wqe_masked_fa32_seg *)DVX_MLX5_WQE_SEG(w, 2);
	uint32_t i;

	s->add_data = dvx_cpu_to_be32(add);
	s->field_boundary = dvx_cpu_to_be32(boundary);
	for (i = 0; i < 8; i++)
		s->rsvd8[i] = 0;
	return 1;
}

/**
 * dvx_mlx5_wqe_masked_fa64() - 8-byte masked fetch-and-add (opmod 0x09).
 * Layout: ctrl, raddr, masked-FA64, data 8 B (ds 4). Return: 1.
 */
DVX_INLINE int dvx_mlx5_wqe_masked_fa64(const struct dvx_mlx5_wq *wq, uint32_t idx,
					uint8_t fm_ce_se, const struct dvx_mlx5_raddr *r,
					uint64_t add, uint64_t boundary, uint64_t laddr,
					uint32_t lkey)
{
	struct dvx_mlx5_sge l = { laddr, 8, lkey };
	void *w = dvx_mlx5_wqe_atomic_common(wq, idx, DVX_MLX5_OPCODE_ATOMIC_MASKED_FA,
					     DVX_MLX5_OPMOD_EXT_ATOMIC_8B, fm_ce_se, r, 1, &l);
	struct dvx_mlx5_wqe_masked_fa64_seg *s =
		(struct dvx_mlx5_wqe_masked_fa64_seg *)DVX_MLX5_WQE_SEG(w, 2);

	s->add_data = dvx_cpu_to_be64(add);
	s->field_boundary = dvx_cpu_to_be64(boundary);
	return 1;
}

/**
 * dvx_mlx5_wqe_masked_cs32() - 4-byte masked compare-and-swap (opmod 0x08): the bits
 * of @op->compare_mask are compared with @op->compare; on a match the bits of
 * @op->swap_mask are replaced by @op->swap (the low 32 bits of each).
 * Layout: ctrl, raddr, masked-CS32, data 4 B (ds 4). Return: 1.
 */
DVX_INLINE int dvx_mlx5_wqe_masked_cs32(const struct dvx_mlx5_wq *wq, uint32_t idx,
					uint8_t fm_ce_se, const struct dvx_mlx5_raddr *r,
					const struct dvx_mlx5_masked_cs *op, uint64_t laddr,
					uint32_t lkey)
{
	struct dvx_mlx5_sge l = { laddr, 4, lkey };
	void *w = dvx_mlx5_wqe_atomic_common(wq, idx, DVX_MLX5_OPCODE_ATOMIC_MASKED_CS,
					     DVX_MLX5_OPMOD_EXT_ATOMIC_4B, fm_ce_se, r, 1, &l);
	struct dvx_mlx5_wqe_masked_cs32_seg *s =
		(struct dvx_mlx5_wqe_masked_cs32_seg *)DVX_MLX5_WQE_SEG(w, 2);

	s->swap_data = dvx_cpu_to_be32((uint32_t)op->swap);
	s->compare_data = dvx_cpu_to_be32((uint32_t)op->compare);
	s->swap_mask = dvx_cpu_to_be32((uint32_t)op->swap_mask);
	s->compare_mask = dvx_cpu_to_be32((uint32_t)op->compare_mask);
	return 1;
}

/**
 * dvx_mlx5_wqe_masked_cs64() - 8-byte masked compare-and-swap (opmod 0x09).
 * Layout: ctrl, raddr, masked-CS64 (32 B: swap, compare, swap_mask, compare_mask),
 * data 8 B: ds 5, 80 bytes, so 2 WQEBBs (the second may wrap to WQEBB 0).
 * Return: 2.
 */
DVX_INLINE int dvx_mlx5_wqe_masked_cs64(const struct dvx_mlx5_wq *wq, uint32_t idx,
					uint8_t fm_ce_se, const struct dvx_mlx5_raddr *r,
					const struct dvx_mlx5_masked_cs *op, uint64_t laddr,
					uint32_t lkey)
{
	struct dvx_mlx5_sge l = { laddr, 8, lkey };
	/* the 32 operand bytes are segments 2 and 3, contiguous in the first WQEBB; the data
	 * segment (4) is in the second WQEBB, which may wrap to WQEBB 0 */
	void *w = dvx_mlx5_wqe_atomic_common(wq, idx, DVX_MLX5_OPCODE_ATOMIC_MASKED_CS,
					     DVX_MLX5_OPMOD_EXT_ATOMIC_8B, fm_ce_se, r, 2, &l);
	struct dvx_mlx5_wqe_masked_cs64_seg *s =
		(struct dvx_mlx5_wqe_masked_cs64_seg *)DVX_MLX5_WQE_SEG(w, 2);

	s->swap_data = dvx_cpu_to_be64(op->swap);
	s->compare_data = dvx_cpu_to_be64(op->compare);
	s->swap_mask = dvx_cpu_to_be64(op->swap_mask);
	s->compare_mask = dvx_cpu_to_be64(op->compare_mask);
	return 2;
}

/**
 * dvx_mlx5_wqe_wait_cq() - core-direct WAIT until CQ @cqn has produced CQE @max_index.
 * @max_index:	0-based CQE index (24-bit CQ counter space) to wait for
 *
 * Layout: ctrl (opmod 0: wait on CQ producer index), wait segment (ds 2). The QP must
 * have been created with cd_master. Return: 1.
 */
DVX_INLINE int dvx_mlx5_wqe_wait_cq(const struct dvx_mlx5_wq *wq, uint32_t idx,
				    uint8_t fm_ce_se, uint32_t cqn, uint32_t max_index)
{
	void *w = dvx_mlx5_wq_wqebb(wq, idx);

	dvx_mlx5_wqe_ctrl((struct dvx_mlx5_wqe_ctrl_seg *)DVX_MLX5_WQE_SEG(w, 0), idx,
			      DVX_MLX5_OPCODE_WAIT, DVX_MLX5_OPMOD_WAIT_CQ_PI, wq->qpn_be8, 2,
			      fm_ce_se, 0);
	dvx_mlx5_set_wait_seg((struct dvx_mlx5_wqe_wait_seg *)DVX_MLX5_WQE_SEG(w, 1), max_index,
			      cqn);
	return 1;
}

/**
 * dvx_mlx5_wqe_enable() - core-direct SEND_EN or RECV_EN: enable the slave queue of
 * @slave_qpn up to @max_index.
 * @wq:		the (cd_master) ring
 * @idx:	WQE index
 * @opcode:	DVX_MLX5_OPCODE_SEND_EN or DVX_MLX5_OPCODE_RECV_EN
 * @fm_ce_se:	fence mode, completion and solicited-event bits
 * @slave_qpn:	the slave QP
 * @max_index:	the slave queue's WQE index to enable up to
 *
 * Layout: ctrl, wait segment (ds 2).
 *
 * Context: any, host or device. Return: 1 (WQEBB), or -EINVAL for another opcode
 * (nothing is written).
 */
DVX_INLINE int dvx_mlx5_wqe_enable(const struct dvx_mlx5_wq *wq, uint32_t idx, uint8_t opcode,
				   uint8_t fm_ce_se, uint32_t slave_qpn, uint32_t max_index)
{
	void *w = dvx_mlx5_wq_wqebb(wq, idx);

	if (opcode != DVX_MLX5_OPCODE_SEND_EN && opcode != DVX_MLX5_OPCODE_RECV_EN)
		return -EINVAL;
	dvx_mlx5_wqe_ctrl((struct dvx_mlx5_wqe_ctrl_seg *)DVX_MLX5_WQE_SEG(w, 0), idx, opcode,
			      0, wq->qpn_be8, 2, fm_ce_se, 0);
	dvx_mlx5_set_wait_seg((struct dvx_mlx5_wqe_wait_seg *)DVX_MLX5_WQE_SEG(w, 1), max_index,
			      slave_qpn);
	return 1;
}

/** dvx_mlx5_wqe_send_en() - core-direct SEND_EN of a cd_slave_send QP's SQ (ds 2). */
DVX_INLINE int dvx_mlx5_wqe_send_en(const struct dvx_mlx5_wq *wq, uint32_t idx,
				    uint8_t fm_ce_se, uint32_t slave_qpn, uint32_t max_index)
{
	return dvx_mlx5_wqe_enable(wq, idx, DVX_MLX5_OPCODE_SEND_EN, fm_ce_se, slave_qpn,
				   max_index);
}

/** dvx_mlx5_wqe_recv_en() - core-direct RECV_EN of a cd_slave_receive QP's RQ (ds 2). */
DVX_INLINE int dvx_mlx5_wqe_recv_en(const struct dvx_mlx5_wq *wq, uint32_t idx,
				    uint8_t fm_ce_se, uint32_t slave_qpn, uint32_t max_index)
{
	return dvx_mlx5_wqe_enable(wq, idx, DVX_MLX5_OPCODE_RECV_EN, fm_ce_se, slave_qpn,
				   max_index);
}

#endif /* DVX_MLX5_WQE_H */
