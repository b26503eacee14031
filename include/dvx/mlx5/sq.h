/* SPDX-License-Identifier: MIT */
/*
 * dvx/mlx5/sq.h - send queue state and the CPU doorbell sequence.
 *
 * The producer index @pi counts WQEBBs and runs free (32 bits); the hardware sees its
 * low 16 bits. @ci is the first WQEBB not yet known to be complete; pi - ci WQEBBs are
 * in flight and a WQEBB may be reused only when the WQE that last occupied it has
 * completed (facts 2.1 free-slot rule).
 *
 * One doorbell per batch (facts 3.2): build any number of WQEs, then
 *   1. dvx_wmb_wqe_before_dbr()      WQE stores before the record
 *   2. dbrec[SND] = BE32(pi & 0xffff)
 *   3. dvx_wmb_dbr_before_mmio()     record before the doorbell
 *   4. one 8-byte doorbell to the UAR register, or a BlueFlame copy of the WQE
 *   5. dvx_wmb_mmio_flush()          push the write-combining buffer out
 *   6. flip to the other BlueFlame half (BlueFlame UARs only)
 * The 8-byte doorbell dvx writes is {BE32(pi << 8), BE32(qpn << 8)}: the next free
 * index and the QPN (the NVSHMEM/DOCA/UCX-GDAKI convention, facts 3.2), the same
 * value the GPU path writes, so one convention holds on both sides.
 *
 * These functions are for one CPU thread per SQ at a time; sharing a QP between
 * threads is done above this layer (reservation, in-order publish, one ringer).
 */
#ifndef DVX_MLX5_SQ_H
#define DVX_MLX5_SQ_H

#include <dvx/mlx5/wqe.h>
#include <dvx/mlx5/barrier.h>

/**
 * struct dvx_mlx5_sq - a send queue as the CPU drives it.
 * @wq:		the ring (buffer, size, QPN, inline limit)
 * @nwqebb:	ring size in WQEBBs
 * @pi:		next free WQEBB (free-running)
 * @ci:		first WQEBB not known complete (free-running)
 * @db_pi:	@pi at the last doorbell
 * @dbrec:	the QP doorbell record (two BE32 words: RQ, SQ)
 * @uar_reg:	the UAR register doorbells go to
 * @bf_half:	bytes in one BlueFlame half (0: the register is not BlueFlame)
 * @bf_offset:	which half the next doorbell uses (0 or @bf_half)
 * @db_qpn:	the doorbell's QPN half as stored (dvx_mlx5_sq_db_value(0, qpn)),
 *		kept so a doorbell only ORs in the producer index
 */
struct dvx_mlx5_sq {
	struct dvx_mlx5_wq wq;
	uint32_t nwqebb;
	uint32_t pi;
	uint32_t ci;
	uint32_t db_pi;
	dvx_be32 *dbrec;
	uint8_t *uar_reg;
	uint32_t bf_half;
	uint32_t bf_offset;
	uint64_t db_qpn;
};

/** dvx_mlx5_sq_db_value() - the 8 doorbell bytes for producer index @pi, as stored. */
DVX_INLINE uint64_t dvx_mlx5_sq_db_value(uint32_t pi, uint32_t qpn)
{
	/* {BE32(pi << 8), BE32(qpn << 8)} is the big-endian form of one 64-bit value with
	 * pi << 8 in the high half: one 64-bit swap, on either host byte order */
	uint64_t v = ((uint64_t)(uint16_t)pi << 40) | (uint32_t)(qpn << 8);

	return (DVX_FORCE uint64_t)dvx_cpu_to_be64(v);
}

/**
 * dvx_mlx5_sq_init() - set up SQ state over a caller ring, doorbell record and UAR.
 * @sq:		state to fill
 * @buf:	ring of @nwqebb WQEBBs, 64-byte aligned
 * @nwqebb:	power of two, at most 2^15
 * @qpn:	QP number (24 bits)
 * @max_inline:	inline limit the QP was created for
 * @dbrec:	the QP's 8-byte doorbell record, 8-byte aligned
 * @uar_reg:	the UAR register to ring
 * @bf_half:	BlueFlame half size in bytes (bf_reg_size / 2), 0 for a non-BlueFlame UAR
 *
 * Context: any. Return: 0 or -EINVAL. Writes nothing but @sq.
 */
static inline int dvx_mlx5_sq_init(struct dvx_mlx5_sq *sq, void *buf, uint32_t nwqebb,
				   uint32_t qpn, uint32_t max_inline, dvx_be32 *dbrec,
				   void *uar_reg, uint32_t bf_half)
{
	struct dvx_mlx5_wq wq;
	int err;

	if (!dbrec || ((uintptr_t)dbrec & 7) || !uar_reg || ((uintptr_t)uar_reg & 7) ||
	    (bf_half && (bf_half < DVX_MLX5_SEND_WQE_BB || !DVX_IS_POW2(bf_half))))
		return -EINVAL;
	err = dvx_mlx5_wq_init(&wq, buf, nwqebb, qpn, max_inline);
	if (err)
		return err;
	sq->wq = wq;
	sq->nwqebb = nwqebb;
	sq->pi = 0;
	sq->ci = 0;
	sq->db_pi = 0;
	sq->dbrec = dbrec;
	sq->uar_reg = (uint8_t *)uar_reg;
	sq->bf_half = bf_half;
	sq->bf_offset = 0;
	sq->db_qpn = dvx_mlx5_sq_db_value(0, qpn);
	return 0;
}

/** dvx_mlx5_sq_reset() - back to index 0 (after the QP went through RESET). */
static inline void dvx_mlx5_sq_reset(struct dvx_mlx5_sq *sq)
{
	sq->pi = 0;
	sq->ci = 0;
	sq->db_pi = 0;
	sq->bf_offset = 0;
}

/** dvx_mlx5_sq_room() - WQEBBs that may be reserved now. */
static inline uint32_t dvx_mlx5_sq_room(const struct dvx_mlx5_sq *sq)
{
	return sq->nwqebb - (sq->pi - sq->ci);
}

/**
 * dvx_mlx5_sq_reserve() - claim @n consecutive WQEBBs: one WQE, or a whole batch.
 * @sq:		the send queue
 * @n:		WQEBBs to claim; a batch of k one-WQEBB WQEs claims k at once, so the
 *		room check and the producer update happen once per batch
 * @idx:	first claimed index (free-running) on success; the claimed WQEBBs are
 *		@idx ... @idx + @n - 1
 *
 * Return: 0; -EINVAL when @n is 0 or larger than the ring (it could never fit);
 * -ENOSPC when the ring holds too much uncompleted work (reap completions first).
 * Nothing is claimed on error.
 */
static inline int dvx_mlx5_sq_reserve(struct dvx_mlx5_sq *sq, uint32_t n, uint32_t *idx)
{
	if (dvx_unlikely(n - 1 >= sq->nwqebb))
		return -EINVAL;
	if (dvx_unlikely(sq->nwqebb - (sq->pi - sq->ci) < n))
		return -ENOSPC;
	*idx = sq->pi;
	sq->pi += n;
	return 0;
}

/**
 * dvx_mlx5_sq_update_dbrec() - steps 1-3 of the doorbell sequence: publish the WQEs
 * up to @pi through the doorbell record.
 * @sq:		the SQ
 * @pi:		its producer index (= sq->pi), read by the caller before the barriers:
 *		their memory clobbers would make every later read of *sq a fresh load
 *
 * WQE stores, then the record store (release), then the barrier that orders the record
 * before the MMIO doorbell write the caller makes next.
 *
 * Context: the SQ's one posting thread (host). Return: nothing.
 */
static inline void dvx_mlx5_sq_update_dbrec(struct dvx_mlx5_sq *sq, uint32_t pi)
{
	dvx_be32 *rec = &sq->dbrec[DVX_MLX5_SND_DBR];

	/* WQE stores before the doorbell-record store. */
	dvx_wmb_wqe_before_dbr();
	dvx_store_release_be32(rec, dvx_cpu_to_be32(pi & DVX_MLX5_WQE_INDEX_MASK));
	/* The doorbell record before the MMIO doorbell that makes the device read it. */
	dvx_wmb_dbr_before_mmio();
}

/**
 * dvx_mlx5_sq_db_done() - steps 5-6 of the doorbell sequence: drain the write-combining
 * buffer and move to the other BlueFlame half.
 * @sq:		the SQ
 * @pi:		the producer index the doorbell was rung for; recorded in sq->db_pi
 *
 * Context: the SQ's one posting thread (host). Return: nothing.
 */
static inline void dvx_mlx5_sq_db_done(struct dvx_mlx5_sq *sq, uint32_t pi)
{
	/* The doorbell leaves the WC buffer before the next one to this register. */
	dvx_wmb_mmio_flush();
	sq->bf_offset ^= sq->bf_half;
	sq->db_pi = pi;
}

/**
 * dvx_mlx5_sq_ring_db() - ring the doorbell for everything reserved so far, with an
 * 8-byte doorbell write. Does nothing when nothing new was posted.
 */
static inline void dvx_mlx5_sq_ring_db(struct dvx_mlx5_sq *sq)
{
	uint32_t pi = sq->pi;
	uint8_t *reg;
	uint64_t db;

	if (pi == sq->db_pi)
		return;
	/* the register and the value are fixed before the barriers (see update_dbrec) */
	reg = sq->uar_reg + sq->bf_offset;
	db = sq->db_qpn | dvx_mlx5_sq_db_value(pi, 0);
	dvx_mlx5_sq_update_dbrec(sq, pi);
	dvx_mmio_write64(reg, db);
	dvx_mlx5_sq_db_done(sq, pi);
}

/**
 * dvx_mlx5_sq_ring() - ring the doorbell for the batch that ends with the WQE at @last.
 * @last:	index of the batch's last WQE (as returned by reserve)
 *
 * When the batch is that single WQE, the UAR is BlueFlame and the WQE fits in a half,
 * the whole WQE is copied into the register (BlueFlame: the device need not fetch it;
 * it stays in the ring too); otherwise an 8-byte doorbell is written.
 */
static inline void dvx_mlx5_sq_ring(struct dvx_mlx5_sq *sq, uint32_t last)
{
	uint32_t n = sq->pi - last, i;

	if (sq->pi == sq->db_pi)
		return;
	if (!sq->bf_half || last != sq->db_pi ||
	    n * DVX_MLX5_SEND_WQE_BB > sq->bf_half) {
		dvx_mlx5_sq_ring_db(sq);
		return;
	}
	dvx_mlx5_sq_update_dbrec(sq, sq->pi);
	for (i = 0; i < n; i++)
		dvx_mmio_copy_wqebb(sq->uar_reg + sq->bf_offset + i * DVX_MLX5_SEND_WQE_BB,
				    dvx_mlx5_wq_seg(&sq->wq, last + i, 0));
	dvx_mlx5_sq_db_done(sq, sq->pi);
}

/**
 * dvx_mlx5_sq_wqe_size() - WQEBBs of the WQE that starts at @idx, read from its ctrl.
 */
static inline uint32_t dvx_mlx5_sq_wqe_size(const struct dvx_mlx5_sq *sq, uint32_t idx)
{
	const struct dvx_mlx5_wqe_ctrl_seg *c =
		(const struct dvx_mlx5_wqe_ctrl_seg *)dvx_mlx5_wq_seg(&sq->wq, idx, 0);

	return dvx_mlx5_ds_to_wqebb(dvx_be32_to_cpu(c->qpn_ds) & 0x3fu);
}

/**
 * dvx_mlx5_sq_index() - extend a CQE's 16-bit wqe_counter to the SQ's free-running
 * index, given that the WQE is between ci and pi.
 */
static inline uint32_t dvx_mlx5_sq_index(const struct dvx_mlx5_sq *sq, uint16_t wqe_counter)
{
	return sq->pi - (uint16_t)((uint16_t)sq->pi - wqe_counter);
}

/**
 * dvx_mlx5_sq_completed() - account a completion whose CQE names @wqe_counter.
 *
 * RC completes in order: the WQE at @wqe_counter and every WQE before it are done, so
 * ci moves past that WQE (its size is read from its own ctrl segment, which is still
 * in the ring since its slots were not yet free).
 *
 * Return: WQEBBs freed (>= 1), or -EPROTO when @wqe_counter does not name a WQE in
 * flight (a stale or corrupt CQE); @sq is then unchanged.
 */
static inline int dvx_mlx5_sq_completed(struct dvx_mlx5_sq *sq, uint16_t wqe_counter)
{
	uint32_t idx = dvx_mlx5_sq_index(sq, wqe_counter);
	uint32_t end, freed;

	if (dvx_unlikely(idx - sq->ci >= sq->pi - sq->ci))
		return -EPROTO;
	end = idx + dvx_mlx5_sq_wqe_size(sq, idx);
	if (dvx_unlikely(end - sq->ci > sq->pi - sq->ci))
		return -EPROTO;
	freed = end - sq->ci;
	sq->ci = end;
	return (int)freed;
}

#endif /* DVX_MLX5_SQ_H */
