/* SPDX-License-Identifier: MIT */
/*
 * dvx/mlx5/sq.h - the one producer/doorbell protocol of a send queue, for every poster:
 * one CPU thread, many CPU threads, GPU threads (prm 2.1, 3.1-3.5).
 *
 * An SQ is described by two structs:
 *  - struct dvx_mlx5_sq: constant after dvx_mlx5_sq_init(): the ring, the doorbell
 *    record, the UAR register, the QPN half of the doorbell, flags. GPU kernels take it
 *    by value (with device addresses in it, dvx/gpu/queue.h);
 *  - struct dvx_mlx5_sq_ctrs: the posting counters, free-running 64-bit WQEBB indexes
 *    (the hardware sees the low 16 bits): @resv (next to hand out), @ready (published),
 *    @db_pi (rung), @ci (free up to). They live where the posters are: in the owner's
 *    host memory for CPU posters, in GPU memory for GPU posters.
 *
 * Posting is always the same five steps, each a function here:
 *
 *   1. reserve   dvx_mlx5_sq_reserve(): claim n consecutive WQEBBs if the ring has room
 *                for them (a claim that fails claims nothing). One attempt: waiting for
 *                room (polling completions, a clock, a timeout) is the caller's loop.
 *   2. build     the WQE builders of dvx/mlx5/wqe.h write the WQEs at the ticket.
 *   3. built     dvx_mlx5_sq_built(): the poster's WQE stores are complete.
 *   4. publish   dvx_mlx5_sq_publish(): in ticket order. A shared SQ passes a publish
 *                token: the poster whose ticket equals @ready holds it
 *                (dvx_mlx5_sq_turn()), rings if nobody reserved after it, and hands it
 *                on by storing @ready = ticket + n. A single poster publishes nothing:
 *                it rings when its batch is complete.
 *   5. ring      dvx_mlx5_sq_ring_db(): the doorbell sequence for everything published
 *                (prm 3.2): WQE stores before the record, the record
 *                BE32(pi & 0xffff), the record before the MMIO doorbell, one 8-byte
 *                doorbell {BE32(pi << 8), BE32(qpn << 8)} (the NVSHMEM/DOCA/UCX value,
 *                the same from CPU and GPU), the write-combining buffer drained, the
 *                BlueFlame half flipped. dvx_mlx5_sq_ring() copies a lone small WQE
 *                into a BlueFlame register instead (CPU only).
 *
 * The concurrency mode is an argument of reserve and publish, a constant at each call
 * site: DVX_MLX5_SQ_SINGLE (one poster at a time; the caller serialises) or
 * DVX_MLX5_SQ_SHARED (any number of CPU threads, or GPU threads, at once: reservations
 * by compare-and-swap, in-order publish, doorbells coalesced at the tail: only the
 * poster with no later reservation rings, for everything published before it; ringing
 * happens while holding the token, so doorbells go out one at a time in increasing
 * order and need no lock). The memory scope of the GPU's orderings comes from
 * DVX_MLX5_SQ_SYS in the SQ's flags (rings in host memory); the CPU ignores it.
 *
 * Nothing here waits, reads a clock or calls the hal: it is pure, header-only code that
 * compiles for the CPU and for CUDA devices. A WQEBB may be reused only when the WQE
 * that last occupied it has completed: whoever consumes completions advances @ci
 * (dvx_mlx5_sq_completed() for a single poster reading CQEs, a release store of @ci by
 * a shared queue's poller).
 */
#ifndef DVX_MLX5_SQ_H
#define DVX_MLX5_SQ_H

#include <dvx/mlx5/wqe.h>
#include <dvx/mlx5/barrier.h>

#ifndef __CUDACC__
#include <stdbool.h>
#endif

/* concurrency modes of dvx_mlx5_sq_reserve() and dvx_mlx5_sq_publish() */
#define DVX_MLX5_SQ_SINGLE 0u	/* one poster at a time */
#define DVX_MLX5_SQ_SHARED 1u	/* many posters: CAS reservations, in-order publish */

/* struct dvx_mlx5_sq.flags */
enum {
	/* the ring or the doorbell record is in host memory (or read by a CPU): GPU
	 * posters order at system scope. Without it GPU scope (rings in GPU memory, read
	 * only by the NIC), as NVSHMEM does. The CPU ignores it. */
	DVX_MLX5_SQ_SYS = 1u << 0,
	/* GPU posters do not write the UAR register: the record alone (a CPU proxy
	 * rings). CPU posters always ring the register: an SQ the CPU posts on needs
	 * one, whatever its flags. */
	DVX_MLX5_SQ_NO_UAR = 1u << 1,
};

/**
 * struct dvx_mlx5_sq - a send queue as posters see it; constant after init.
 * @wq:		the ring (buffer, size, QPN, inline limit)
 * @dbrec:	the QP doorbell record (two BE32 words: RQ, SQ)
 * @uar_reg:	the UAR register doorbells go to (NULL only for a GPU view with
 *		DVX_MLX5_SQ_NO_UAR)
 * @db_qpn:	the doorbell's QPN half as stored (dvx_mlx5_sq_db_value(0, qpn)), so a
 *		doorbell only ORs in the producer index
 * @nwqebb:	ring size in WQEBBs, a power of two
 * @bf_half:	bytes in one BlueFlame half (0: the register is not BlueFlame)
 * @flags:	DVX_MLX5_SQ_*
 * @rsvd:	zero
 *
 * Fixed-width and 64 bytes on every compiler (pointers are 8 bytes on the 64-bit hosts
 * and GPUs dvx supports), so a host-built copy holding device addresses can be passed
 * to a kernel by value.
 */
struct dvx_mlx5_sq {
	struct dvx_mlx5_wq wq;
	dvx_be32 *dbrec;
	uint8_t *uar_reg;
	uint64_t db_qpn;
	uint32_t nwqebb;
	uint32_t bf_half;
	uint32_t flags;
	uint32_t rsvd;
};

/**
 * struct dvx_mlx5_sq_ctrs - the posting counters of an SQ.
 * @resv:	next WQEBB to hand out (a poster's ticket is its first WQEBB)
 * @ready:	every WQEBB below it is built and published, in order (shared mode)
 * @db_pi:	producer index of the last doorbell (written by the ringer only)
 * @bf_offset:	which BlueFlame half the next doorbell uses (0 or bf_half)
 * @ci:		WQEBBs below it are free: room is checked against it. Whoever consumes
 *		completions advances it; GPU posters whose consumer keeps its index
 *		elsewhere copy it here with dvx_mlx5_sq_ci_refresh()
 * @ci_poll:	1 while a poster refreshes @ci
 *
 * Each word has a 64-byte line of its own (posters on many CPUs or SMs touch them).
 * Zeroed before the first post and whenever the QP is reset (dvx_mlx5_sq_ctrs_set()).
 */
struct dvx_mlx5_sq_ctrs {
	uint64_t resv;
	uint64_t pad0[7];
	uint64_t ready;
	uint64_t pad1[7];
	uint64_t db_pi;
	uint32_t bf_offset;
	uint32_t pad2[13];
	uint64_t ci;
	uint32_t ci_poll;
	uint32_t pad3[13];
};

#define DVX_MLX5_SQ_CTRS_BYTES 256u
DVX_ASSERT_SIZE(struct dvx_mlx5_sq, 64);
DVX_ASSERT_SIZE(struct dvx_mlx5_sq_ctrs, DVX_MLX5_SQ_CTRS_BYTES);
DVX_ASSERT_OFFSET(struct dvx_mlx5_sq_ctrs, ready, 64);
DVX_ASSERT_OFFSET(struct dvx_mlx5_sq_ctrs, db_pi, 128);
DVX_ASSERT_OFFSET(struct dvx_mlx5_sq_ctrs, ci, 192);

/**
 * dvx_mlx5_sq_db_value() - the 8 doorbell bytes for producer index @pi, as stored.
 * @pi:		producer index (its low 16 bits are used)
 * @qpn:	QP number (24 bits)
 *
 * {BE32(pi << 8), BE32(qpn << 8)} is the big-endian form of one 64-bit value with
 * pi << 8 in the high half: one 64-bit swap, on either host byte order (prm 3.2).
 *
 * Context: any, host or device; pure. Return: the value to store.
 */
DVX_INLINE uint64_t dvx_mlx5_sq_db_value(uint32_t pi, uint32_t qpn)
{
	uint64_t v = ((uint64_t)(uint16_t)pi << 40) | (uint32_t)(qpn << 8);

	return (DVX_FORCE uint64_t)dvx_cpu_to_be64(v);
}

/**
 * dvx_mlx5_sq_ctrs_set() - set every counter to @idx (0 for a fresh QP; a restart's
 * first index after a reset).
 * @c:		the counters
 * @idx:	the index to start from; its low 16 bits must be 0 after a QP reset (the
 *		hardware's WQE index restarts at 0)
 *
 * Context: nobody posts. Return: nothing.
 */
DVX_INLINE void dvx_mlx5_sq_ctrs_set(struct dvx_mlx5_sq_ctrs *c, uint64_t idx)
{
	c->resv = idx;
	c->ready = idx;
	c->db_pi = idx;
	c->bf_offset = 0;
	c->ci = idx;
	c->ci_poll = 0;
}

/**
 * struct dvx_mlx5_sq_cfg - an SQ's caller memory and facts (dvx_mlx5_sq_init()).
 * @buf:	ring of @nwqebb WQEBBs, 64-byte aligned
 * @nwqebb:	power of two, at most 2^15
 * @qpn:	QP number (24 bits)
 * @max_inline:	inline limit the QP was created for
 * @dbrec:	the QP's 8-byte doorbell record, 8-byte aligned
 * @uar_reg:	the UAR register to ring, 8-byte aligned (NULL only with
 *		DVX_MLX5_SQ_NO_UAR, which only GPU posters honour)
 * @bf_half:	BlueFlame half size in bytes (bf_reg_size / 2), 0 for a non-BlueFlame
 *		register
 * @flags:	DVX_MLX5_SQ_*
 */
struct dvx_mlx5_sq_cfg {
	void *buf;
	uint32_t nwqebb;
	uint32_t qpn;
	uint32_t max_inline;
	dvx_be32 *dbrec;
	void *uar_reg;
	uint32_t bf_half;
	uint32_t flags;
};

/**
 * dvx_mlx5_sq_init() - describe an SQ over a caller ring, doorbell record and UAR.
 * @sq:		filled
 * @c:		the posting counters, zeroed here; NULL when they live elsewhere (GPU
 *		memory: zero them there)
 * @cfg:	the ring, doorbell record, UAR and facts (struct dvx_mlx5_sq_cfg), read
 *		during the call only
 *
 * Context: any. Return: 0 or -EINVAL (@sq and @c unchanged).
 */
DVX_INLINE int dvx_mlx5_sq_init(struct dvx_mlx5_sq *sq, struct dvx_mlx5_sq_ctrs *c,
				const struct dvx_mlx5_sq_cfg *cfg)
{
	void *buf = cfg->buf, *uar_reg = cfg->uar_reg;
	uint32_t nwqebb = cfg->nwqebb, qpn = cfg->qpn, max_inline = cfg->max_inline;
	uint32_t bf_half = cfg->bf_half, flags = cfg->flags;
	dvx_be32 *dbrec = cfg->dbrec;
	struct dvx_mlx5_wq wq;
	int err;

	if (!dbrec || ((uintptr_t)dbrec & 7) ||
	    (!(flags & DVX_MLX5_SQ_NO_UAR) && (!uar_reg || ((uintptr_t)uar_reg & 7))) ||
	    (bf_half && (bf_half < DVX_MLX5_SEND_WQE_BB || !DVX_IS_POW2(bf_half))) ||
	    (flags & ~(uint32_t)(DVX_MLX5_SQ_SYS | DVX_MLX5_SQ_NO_UAR)))
		return -EINVAL;
	err = dvx_mlx5_wq_init(&wq, buf, nwqebb, qpn, max_inline);
	if (err)
		return err;
	sq->wq = wq;
	sq->dbrec = dbrec;
	sq->uar_reg = (uint8_t *)uar_reg;
	sq->db_qpn = dvx_mlx5_sq_db_value(0, qpn);
	sq->nwqebb = nwqebb;
	sq->bf_half = bf_half;
	sq->flags = flags;
	sq->rsvd = 0;
	if (c)
		dvx_mlx5_sq_ctrs_set(c, 0);
	return 0;
}

/**
 * dvx_mlx5_sq_scope() - the scope GPU posters order at for this SQ.
 * @sq:		the SQ
 *
 * Context: any; pure. Return: DVX_SCOPE_SYS with DVX_MLX5_SQ_SYS, else DVX_SCOPE_GPU.
 */
DVX_INLINE unsigned dvx_mlx5_sq_scope(const struct dvx_mlx5_sq *sq)
{
	return (sq->flags & DVX_MLX5_SQ_SYS) ? DVX_SCOPE_SYS : DVX_SCOPE_GPU;
}

/**
 * dvx_mlx5_sq_room() - WQEBBs a single poster may reserve now.
 * @sq:		the SQ
 * @c:		its counters
 *
 * Context: the SQ's poster. Return: free WQEBBs.
 */
DVX_INLINE uint32_t dvx_mlx5_sq_room(const struct dvx_mlx5_sq *sq,
				     const struct dvx_mlx5_sq_ctrs *c)
{
	return sq->nwqebb - (uint32_t)(c->resv - c->ci);
}

/**
 * dvx_mlx5_sq_reserve() - step 1: claim @n consecutive WQEBBs if the ring has room.
 * @sq:		the SQ
 * @c:		its counters
 * @n:		WQEBBs to claim: one WQE, or a whole batch (the room check and the
 *		counter update then happen once per batch)
 * @mode:	DVX_MLX5_SQ_SINGLE or DVX_MLX5_SQ_SHARED (a constant)
 * @ticket:	first claimed WQEBB (free-running) on success; the claim is @ticket ...
 *		@ticket + @n - 1
 *
 * SINGLE: plain loads and a store. SHARED: the room is checked against @ci (acquire:
 * slots are rewritten only after their completion was consumed) and @resv is advanced
 * by compare-and-swap, retried while other posters win it and room remains.
 *
 * Context: SINGLE: the one poster; SHARED: any thread, CPU or GPU. Return: 0; -EINVAL
 * when @n is 0 or larger than the ring (it could never fit); -ENOSPC when the ring
 * holds too much uncompleted work (consume completions, then try again). Nothing is
 * claimed on error.
 */
DVX_INLINE int dvx_mlx5_sq_reserve(const struct dvx_mlx5_sq *sq, struct dvx_mlx5_sq_ctrs *c,
				   uint32_t n, unsigned mode, uint64_t *ticket)
{
	uint64_t r, ci, seen;

	if (dvx_unlikely(n - 1 >= sq->nwqebb))
		return -EINVAL;
	if (mode == DVX_MLX5_SQ_SINGLE) {
		r = c->resv;
		if (dvx_unlikely(sq->nwqebb - (r - c->ci) < n))
			return -ENOSPC;
		*ticket = r;
		c->resv = r + n;
		return 0;
	}
	r = dvx_ld_relaxed_u64(&c->resv);
	ci = dvx_ld_acquire_u64(&c->ci, DVX_SCOPE_GPU);
	for (;;) {
		if (r + n - ci > sq->nwqebb)
			return -ENOSPC;
		seen = dvx_cas_u64(&c->resv, r, r + n);
		if (seen == r) {
			*ticket = r;
			return 0;
		}
		r = seen;
	}
}

/**
 * dvx_mlx5_sq_ci_refresh() - copy the consumer's index into @c->ci, if no other poster
 * is doing so (shared GPU posters whose consumer index lives in host memory: one
 * reader at a time, so thousands of waiting threads do not flood PCIe).
 * @c:		the counters (GPU memory)
 * @ci_src:	the consumer's free-running index (advanced by whoever consumes)
 * @scope:	DVX_SCOPE_SYS when @ci_src is in host memory
 *
 * Context: any poster. Return: the freshest index known.
 */
DVX_INLINE uint64_t dvx_mlx5_sq_ci_refresh(struct dvx_mlx5_sq_ctrs *c, const uint64_t *ci_src,
					   unsigned scope)
{
	uint64_t ci;

	if (!dvx_trylock(&c->ci_poll))
		return dvx_ld_acquire_u64(&c->ci, DVX_SCOPE_GPU);
	ci = dvx_ld_acquire_u64(ci_src, scope);
	/* the real index acquired before the copy posters acquire: a slot is rewritten
	 * only after its consumer freed it */
	dvx_fence(DVX_SCOPE_GPU);
	dvx_max_u64(&c->ci, ci);
	dvx_unlock(&c->ci_poll);
	return dvx_ld_acquire_u64(&c->ci, DVX_SCOPE_GPU);
}

/**
 * dvx_mlx5_sq_reserve_faa() - claim @n WQEBBs at once with one fetch-add, room or not
 * (shared mode). The caller must then wait until dvx_mlx5_sq_has_room() before
 * building, and must eventually build and publish the claimed WQEBBs (a claim cannot
 * be given back).
 * @c:		the counters
 * @n:		WQEBBs (1 .. nwqebb)
 *
 * Context: any poster. Return: the ticket.
 */
DVX_INLINE uint64_t dvx_mlx5_sq_reserve_faa(struct dvx_mlx5_sq_ctrs *c, uint32_t n)
{
	return dvx_faa_u64(&c->resv, n);
}

/**
 * dvx_mlx5_sq_has_room() - whether the WQEBBs [@ticket, @ticket + @n) are free.
 * @sq:		the SQ
 * @c:		its counters
 * @ticket:	a claim's first WQEBB
 * @n:		its WQEBBs
 *
 * Context: any poster. Return: true when they are.
 */
DVX_INLINE bool dvx_mlx5_sq_has_room(const struct dvx_mlx5_sq *sq, struct dvx_mlx5_sq_ctrs *c,
				     uint64_t ticket, uint32_t n)
{
	return ticket + n - dvx_ld_acquire_u64(&c->ci, DVX_SCOPE_GPU) <= sq->nwqebb;
}

/**
 * dvx_mlx5_sq_built() - step 3: this poster's WQE stores (and, after a group barrier,
 * its group's) are complete and are ordered before what publishes them.
 * @sq:		the SQ
 *
 * GPU: a fence at the SQ's scope, so the WQEs are visible before the release of
 * @ready that hands them to the ringer. CPU: nothing (the release of @ready, and the
 * ringer's dvx_wmb_wqe_before_dbr() after acquiring it, order them).
 *
 * Context: any poster, after building. Return: nothing.
 */
DVX_INLINE void dvx_mlx5_sq_built(const struct dvx_mlx5_sq *sq)
{
#ifdef __CUDA_ARCH__
	dvx_fence(dvx_mlx5_sq_scope(sq));
#else
	(void)sq;
#endif
}

/**
 * dvx_mlx5_sq_turn() - whether the publish token is @ticket's (shared mode): every
 * earlier reservation has been published.
 * @c:		the counters
 * @ticket:	a reservation's first WQEBB
 *
 * Context: any poster, to spin on (with the caller's relax and timeout). Return: true
 * when it is this poster's turn to publish.
 */
DVX_INLINE bool dvx_mlx5_sq_turn(struct dvx_mlx5_sq_ctrs *c, uint64_t ticket)
{
	return dvx_ld_acquire_u64(&c->ready, DVX_SCOPE_GPU) == ticket;
}

/**
 * dvx_mlx5_sq_ring_db() - step 5: the doorbell for producer index @pi, with an 8-byte
 * doorbell write; on the CPU nothing when @pi was rung already.
 * @sq:		the SQ
 * @c:		its counters
 * @pi:		every WQEBB below it is published
 *
 * Record (and register) written, @db_pi = @pi, the BlueFlame half flipped. The caller
 * has the right to ring: the single poster, or the holder of the publish token. GPU
 * code rings only for a new index and never through BlueFlame (views have no
 * BlueFlame half): the check and the half are left out there.
 *
 * Context: the ringer, CPU or GPU. Return: nothing.
 */
DVX_INLINE void dvx_mlx5_sq_ring_db(const struct dvx_mlx5_sq *sq, struct dvx_mlx5_sq_ctrs *c,
				    uint64_t pi)
{
	unsigned scope = dvx_mlx5_sq_scope(sq);
	dvx_be32 rec;
	uint8_t *reg;
	uint64_t db;

#ifdef __CUDA_ARCH__
	/* GPU ringers never ring twice for one index (the token's tail rings once; a
	 * waiting FAA poster checks @db_pi first) and never use BlueFlame: no loads of
	 * GPU memory before the doorbell */
	reg = sq->uar_reg;
#else
	if (pi == c->db_pi)
		return;
	/* the register and the values are fixed before the barriers: their memory
	 * clobbers would make every later read of *sq and *c a fresh load */
	reg = sq->uar_reg + c->bf_offset;
#endif
	rec = dvx_cpu_to_be32((uint32_t)pi & DVX_MLX5_WQE_INDEX_MASK);
	/* {BE32(pi << 8), BE32(qpn << 8)}, the QPN half stored already: the first word
	 * is the record's bytes moved up by one */
#if DVX_HOST_BIG_ENDIAN && !defined(__CUDA_ARCH__)
	db = sq->db_qpn | ((uint64_t)(DVX_FORCE uint32_t)rec << 40);
#else
	db = sq->db_qpn | (uint64_t)((DVX_FORCE uint32_t)rec >> 8);
#endif
	/* WQE stores (ours, and other posters' made visible by their release of @ready,
	 * which the token holder acquired) before the doorbell-record store. */
	dvx_wmb_wqe_before_dbr(scope);
	dvx_store_dbrec(&sq->dbrec[DVX_MLX5_SND_DBR], rec);
#ifdef __CUDA_ARCH__
	/* GPU posters may leave the register to a proxy (CPU posters always ring) */
	if (!(sq->flags & DVX_MLX5_SQ_NO_UAR))
#endif
	{
		/* The doorbell record before the MMIO doorbell that makes the device read it. */
		dvx_wmb_dbr_before_mmio(scope);
		dvx_mmio_write64(reg, db);
		/* The doorbell leaves the WC buffer before the next one to this register. */
		dvx_wmb_mmio_flush();
	}
#ifndef __CUDA_ARCH__
	c->bf_offset ^= sq->bf_half;
#endif
	c->db_pi = pi;
}

/**
 * dvx_mlx5_sq_publish() - step 4: publish [@ticket, @ticket + @n).
 * @sq:		the SQ
 * @c:		its counters
 * @ticket:	from dvx_mlx5_sq_reserve()
 * @n:		WQEBBs of that reservation, all built (dvx_mlx5_sq_built())
 * @mode:	DVX_MLX5_SQ_SINGLE or DVX_MLX5_SQ_SHARED (a constant)
 *
 * SHARED: the caller holds the token (dvx_mlx5_sq_turn(@c, @ticket)); rings unless a
 * later poster has reserved (it will ring, covering these WQEBBs), then passes the
 * token on (release of @ready = @ticket + @n). SINGLE: nothing; the poster rings its
 * batch with dvx_mlx5_sq_ring_db() or dvx_mlx5_sq_ring().
 *
 * Context: the reservation's poster. Return: nothing.
 */
DVX_INLINE void dvx_mlx5_sq_publish(const struct dvx_mlx5_sq *sq, struct dvx_mlx5_sq_ctrs *c,
				    uint64_t ticket, uint32_t n, unsigned mode)
{
	uint64_t end = ticket + n;

	if (mode == DVX_MLX5_SQ_SINGLE)
		return;
	/* the token is ours: ring unless a later poster has claimed slots (it will ring,
	 * or ring for us while it waits for room) */
	if (dvx_ld_relaxed_u64(&c->resv) == end)
		dvx_mlx5_sq_ring_db(sq, c, end);
	dvx_st_release_u64(&c->ready, end, DVX_SCOPE_GPU);
}

/**
 * dvx_mlx5_sq_ring() - ring for the batch that ends with the WQE at @last (single
 * poster, CPU).
 * @sq:		the SQ
 * @c:		its counters
 * @last:	index of the batch's last WQE (as reserved)
 *
 * When the batch is that single WQE, the register is BlueFlame and the WQE fits in a
 * half, the whole WQE is copied into the register, one 64-byte write per WQEBB
 * (dvx_mmio_copy_wqebb(); the device need not fetch it; it stays in the ring too);
 * otherwise, and on a CPU without a 64-byte store (DVX_MMIO_COPY64 0),
 * dvx_mlx5_sq_ring_db() for everything reserved.
 *
 * Context: the SQ's one CPU poster. Return: nothing.
 */
static inline void dvx_mlx5_sq_ring(const struct dvx_mlx5_sq *sq, struct dvx_mlx5_sq_ctrs *c,
				    uint64_t last)
{
	uint64_t pi = c->resv;
	uint32_t n = (uint32_t)(pi - last), i;
	uint8_t *reg;

	if (pi == c->db_pi)
		return;
	if (!DVX_MMIO_COPY64 || !sq->bf_half || last != c->db_pi ||
	    n * DVX_MLX5_SEND_WQE_BB > sq->bf_half) {
		dvx_mlx5_sq_ring_db(sq, c, pi);
		return;
	}
	reg = sq->uar_reg + c->bf_offset;
	/* WQE stores before the doorbell-record store. */
	dvx_wmb_wqe_before_dbr(DVX_SCOPE_SYS);
	dvx_store_dbrec(&sq->dbrec[DVX_MLX5_SND_DBR],
			dvx_cpu_to_be32((uint32_t)pi & DVX_MLX5_WQE_INDEX_MASK));
	/* The doorbell record before the BlueFlame copy that makes the device read it. */
	dvx_wmb_dbr_before_mmio(DVX_SCOPE_SYS);
	for (i = 0; i < n; i++)
		dvx_mmio_copy_wqebb(reg + i * DVX_MLX5_SEND_WQE_BB,
				    dvx_mlx5_wq_seg(&sq->wq, (uint32_t)(last + i), 0));
	/* The copy leaves the WC buffer before the next doorbell to this register. */
	dvx_wmb_mmio_flush();
	c->bf_offset ^= sq->bf_half;
	c->db_pi = pi;
}

/**
 * dvx_mlx5_sq_wqe_size() - WQEBBs of the WQE that starts at @idx, read from its ctrl.
 * @sq:		the SQ
 * @idx:	the WQE's first WQEBB
 *
 * Context: any; the WQE must be built. Return: 1 ... 4 for ds 1 ... 63.
 */
DVX_INLINE uint32_t dvx_mlx5_sq_wqe_size(const struct dvx_mlx5_sq *sq, uint64_t idx)
{
	const struct dvx_mlx5_wqe_ctrl_seg *c =
		(const struct dvx_mlx5_wqe_ctrl_seg *)dvx_mlx5_wq_seg(&sq->wq, (uint32_t)idx, 0);

	return dvx_mlx5_ds_to_wqebb(dvx_be32_to_cpu(c->qpn_ds) & 0x3fu);
}

/**
 * dvx_mlx5_sq_index() - extend a CQE's 16-bit wqe_counter to the SQ's free-running
 * index, given that the WQE is between ci and resv.
 * @c:		the counters
 * @wqe_counter: the CQE's WQE index
 *
 * Context: the consumer. Return: the free-running index.
 */
DVX_INLINE uint64_t dvx_mlx5_sq_index(const struct dvx_mlx5_sq_ctrs *c, uint16_t wqe_counter)
{
	return c->resv - (uint16_t)((uint16_t)c->resv - wqe_counter);
}

/**
 * dvx_mlx5_sq_completed() - account a completion whose CQE names @wqe_counter (single
 * poster that consumes its own CQEs).
 * @sq:		the SQ
 * @c:		its counters
 * @wqe_counter: the CQE's WQE index
 *
 * RC completes in order: the WQE at @wqe_counter and every WQE before it are done, so
 * ci moves past that WQE (its size is read from its own ctrl segment, which is still
 * in the ring since its slots were not yet free).
 *
 * Context: the consumer. Return: WQEBBs freed (>= 1), or -EPROTO when @wqe_counter
 * does not name a WQE in flight (a stale or corrupt CQE); @c is then unchanged.
 */
DVX_INLINE int dvx_mlx5_sq_completed(const struct dvx_mlx5_sq *sq, struct dvx_mlx5_sq_ctrs *c,
				     uint16_t wqe_counter)
{
	uint64_t idx = dvx_mlx5_sq_index(c, wqe_counter);
	uint64_t end, freed;

	if (dvx_unlikely(idx - c->ci >= c->resv - c->ci))
		return -EPROTO;
	end = idx + dvx_mlx5_sq_wqe_size(sq, idx);
	if (dvx_unlikely(end - c->ci > c->resv - c->ci))
		return -EPROTO;
	freed = end - c->ci;
	c->ci = end;
	return (int)freed;
}

#endif /* DVX_MLX5_SQ_H */
