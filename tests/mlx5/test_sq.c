// SPDX-License-Identifier: MIT
/*
 * The SQ protocol (dvx/mlx5/sq.h) against prm 2.1 and 3.1-3.3: single-poster state and
 * the CPU doorbell byte for byte, and the shared mode's reservation, in-order publish
 * and tail-only doorbell, with threads.
 *
 * Host memory stands in for the device: the "UAR" is a poisoned 4 KiB, 64-byte aligned
 * buffer and the doorbell record a poisoned 8-byte word pair, so every check sees
 * exactly which bytes a doorbell wrote and that nothing else moved:
 *   DBR word 1 (SQ) = BE32(pi & 0xffff), word 0 (RQ) untouched;
 *   the 8-byte doorbell {BE32(pi << 8), BE32(qpn << 8)} at reg + bf_offset;
 *   with BlueFlame halves of 256 B the offset alternates 0/256 after every doorbell,
 *   a lone WQE of <= 256 B is copied whole (wrapped bytes included), anything else
 *   takes the 8-byte doorbell.
 */
#include "mlx5_test.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <dvx/mlx5/sq.h>

#define QPN 0x000123u
#define UAR_BYTES 4096u

struct fx {
	uint8_t *ring;
	uint32_t nwqebb;
	uint8_t *uar;
	uint8_t *dbr;		/* 64-byte aligned, the record is its first 8 bytes */
	struct dvx_mlx5_sq sq;
	struct dvx_mlx5_sq_ctrs sqc;
};

static void fx_open(struct fx *f, uint32_t nwqebb, uint32_t bf_half)
{
	f->nwqebb = nwqebb;
	f->ring = t_ring_alloc((size_t)nwqebb * 64, T_POISON);
	f->uar = t_ring_alloc(UAR_BYTES, T_POISON);
	f->dbr = t_ring_alloc(64, T_POISON);
	memset(&f->sq, 0, sizeof(f->sq));
	assert_int_equal(dvx_mlx5_sq_init(&f->sq, &f->sqc,
					  &(struct dvx_mlx5_sq_cfg){ f->ring, nwqebb, QPN, 64,
								     (void *)f->dbr, f->uar,
								     bf_half, 0 }),
			 0);
}

static void fx_close(struct fx *f)
{
	dvx_test_free(f->ring);
	dvx_test_free(f->uar);
	dvx_test_free(f->dbr);
}

/* forget what the last doorbell wrote */
static void fx_repoison(struct fx *f)
{
	memset(f->uar, T_POISON, UAR_BYTES);
	memset(f->dbr, T_POISON, 64);
}

static uint64_t post_nop(struct fx *f)
{
	uint64_t idx = 0xdeadbeef;

	assert_int_equal(dvx_mlx5_sq_reserve(&f->sq, &f->sqc, 1, DVX_MLX5_SQ_SINGLE, &idx), 0);
	assert_int_equal(dvx_mlx5_wqe_nop(&f->sq.wq, idx, DVX_MLX5_WQE_CTRL_CQ_UPDATE), 1);
	return idx;
}

static uint64_t post_cs64(struct fx *f)
{
	uint64_t idx = 0xdeadbeef;

	assert_int_equal(dvx_mlx5_sq_reserve(&f->sq, &f->sqc, 2, DVX_MLX5_SQ_SINGLE, &idx), 0);
	assert_int_equal(dvx_mlx5_wqe_masked_cs64(&f->sq.wq, idx, DVX_MLX5_WQE_CTRL_CQ_UPDATE,
						  &(struct dvx_mlx5_raddr){ 0x1000, 0x5678 },
						  &(struct dvx_mlx5_masked_cs){ 1, 2, 3, 4 }, 0,
						  0x99),
			 2);
	return idx;
}

/* a write with @nsge data segments: ds 2 + nsge */
static uint64_t post_sgl(struct fx *f, uint32_t nsge)
{
	struct dvx_mlx5_sge sgl[61];
	uint32_t i, w = (2 + nsge + 3) / 4;
	uint64_t idx = 0xdeadbeef;

	for (i = 0; i < nsge; i++) {
		sgl[i].addr = 0x1000u * (i + 1);
		sgl[i].lkey = 0x100u + i;
		sgl[i].length = 0x10u + i;
	}
	assert_int_equal(dvx_mlx5_sq_reserve(&f->sq, &f->sqc, w, DVX_MLX5_SQ_SINGLE, &idx), 0);
	assert_int_equal(dvx_mlx5_wqe_rdma_sgl(&f->sq.wq, idx, DVX_MLX5_OPCODE_RDMA_WRITE, 0x08, 0,
					       &(struct dvx_mlx5_raddr){ 0x2000, 0x5678 }, sgl,
					       nsge),
			 (int)w);
	return idx;
}

/* the record holds SQ counter @pi in word 1 and word 0 is untouched */
static void assert_dbr(const struct fx *f, uint32_t pi)
{
	uint8_t want[8];

	memset(want, T_POISON, 4);
	t_be32(want + 4, pi & 0xffff);
	assert_bytes_equal(f->dbr, want, 8);
	assert_fill(f->dbr, 8, 64, T_POISON);
}

/* exactly one 8-byte doorbell {BE32(pi << 8), BE32(qpn << 8)} at @off of the UAR */
static void assert_db8(const struct fx *f, uint32_t off, uint32_t pi)
{
	uint8_t want[8];

	t_be32(want, (pi & 0xffff) << 8);
	t_be32(want + 4, QPN << 8);
	assert_bytes_equal(f->uar + off, want, 8);
	assert_fill(f->uar, 0, off, T_POISON);
	assert_fill(f->uar, off + 8, UAR_BYTES, T_POISON);
}

/* a BlueFlame copy of the @n WQEBBs from @idx at @off of the UAR, wrapped as the ring */
static void assert_bf(const struct fx *f, uint32_t off, uint32_t idx, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		assert_bytes_equal(f->uar + off + 64 * i,
				   f->ring + (((idx + i) & (f->nwqebb - 1)) * 64), 64);
	assert_fill(f->uar, 0, off, T_POISON);
	assert_fill(f->uar, off + 64 * n, UAR_BYTES, T_POISON);
}

static void assert_nothing_rung(const struct fx *f)
{
	assert_fill(f->uar, 0, UAR_BYTES, T_POISON);
	assert_fill(f->dbr, 0, 64, T_POISON);
}

/* ---- init ---- */

static void test_init_args(void **state)
{
	uint8_t *ring = t_ring_alloc(64 * 64, 0), *uar = t_ring_alloc(UAR_BYTES, 0);
	uint8_t *dbr = t_ring_alloc(64, 0);
	struct dvx_mlx5_sq sq, before;
	struct dvx_mlx5_sq_ctrs sqc, cbefore;
	dvx_be32 *db = (void *)dbr;

	(void)state;
	memset(&sq, 0x3c, sizeof(sq));
	memset(&sqc, 0x5a, sizeof(sqc));
	before = sq;
	cbefore = sqc;
	/* record and register */
	assert_int_equal(dvx_mlx5_sq_init(&sq, &sqc,
					  &(struct dvx_mlx5_sq_cfg){ ring, 64, QPN, 64, NULL, uar,
								     0, 0 }),
			 -EINVAL);
	assert_int_equal(dvx_mlx5_sq_init(&sq, &sqc,
					  &(struct dvx_mlx5_sq_cfg){ ring, 64, QPN, 64,
								     (void *)(dbr + 4), uar, 0,
								     0 }),
			 -EINVAL);
	assert_int_equal(dvx_mlx5_sq_init(&sq, &sqc,
					  &(struct dvx_mlx5_sq_cfg){ ring, 64, QPN, 64, db, NULL, 0,
								     0 }),
			 -EINVAL);
	assert_int_equal(dvx_mlx5_sq_init(&sq, &sqc,
					  &(struct dvx_mlx5_sq_cfg){ ring, 64, QPN, 64, db, uar + 4,
								     0, 0 }),
			 -EINVAL);
	/* BlueFlame half: a power of two of at least one WQEBB */
	assert_int_equal(dvx_mlx5_sq_init(&sq, &sqc,
					  &(struct dvx_mlx5_sq_cfg){ ring, 64, QPN, 64, db, uar, 32,
								     0 }),
			 -EINVAL);
	assert_int_equal(dvx_mlx5_sq_init(&sq, &sqc,
					  &(struct dvx_mlx5_sq_cfg){ ring, 64, QPN, 64, db, uar, 96,
								     0 }),
			 -EINVAL);
	assert_int_equal(dvx_mlx5_sq_init(&sq, &sqc,
					  &(struct dvx_mlx5_sq_cfg){ ring, 64, QPN, 64, db, uar, 1,
								     0 }),
			 -EINVAL);
	/* the ring itself */
	assert_int_equal(dvx_mlx5_sq_init(&sq, &sqc,
					  &(struct dvx_mlx5_sq_cfg){ NULL, 64, QPN, 64, db, uar, 0,
								     0 }),
			 -EINVAL);
	assert_int_equal(dvx_mlx5_sq_init(&sq, &sqc,
					  &(struct dvx_mlx5_sq_cfg){ ring + 16, 64, QPN, 64, db,
								     uar, 0, 0 }),
			 -EINVAL);
	assert_int_equal(dvx_mlx5_sq_init(&sq, &sqc,
					  &(struct dvx_mlx5_sq_cfg){ ring, 0, QPN, 64, db, uar, 0,
								     0 }),
			 -EINVAL);
	assert_int_equal(dvx_mlx5_sq_init(&sq, &sqc,
					  &(struct dvx_mlx5_sq_cfg){ ring, 48, QPN, 64, db, uar, 0,
								     0 }),
			 -EINVAL);
	assert_int_equal(dvx_mlx5_sq_init(&sq, &sqc,
					  &(struct dvx_mlx5_sq_cfg){ ring, 1u << 16, QPN, 64, db,
								     uar, 0, 0 }),
			 -EINVAL);
	assert_int_equal(dvx_mlx5_sq_init(&sq, &sqc,
					  &(struct dvx_mlx5_sq_cfg){ ring, 64, 0x1000000, 64, db,
								     uar, 0, 0 }),
			 -EINVAL);
	assert_int_equal(dvx_mlx5_sq_init(&sq, &sqc,
					  &(struct dvx_mlx5_sq_cfg){ ring, 64, QPN,
								     DVX_MLX5_MAX_INLINE + 1, db,
								     uar, 0, 0 }),
			 -EINVAL);
	/* unknown flags, and NO_UAR is the only way to go without a register */
	assert_int_equal(dvx_mlx5_sq_init(&sq, &sqc,
					  &(struct dvx_mlx5_sq_cfg){ ring, 64, QPN, 64, db, uar, 0,
								     4 }),
			 -EINVAL);
	assert_memory_equal(&sq, &before, sizeof(sq));
	assert_memory_equal(&sqc, &cbefore, sizeof(sqc));
	assert_int_equal(dvx_mlx5_sq_init(&sq, NULL,
					  &(struct dvx_mlx5_sq_cfg){ ring, 64, QPN, 64, db, NULL, 0,
								     DVX_MLX5_SQ_NO_UAR }),
			 0);
	assert_null(sq.uar_reg);
	assert_int_equal(sq.flags, DVX_MLX5_SQ_NO_UAR);
	assert_memory_equal(&sqc, &cbefore, sizeof(sqc));	/* NULL: counters untouched */
	/* nothing but @sq and @sqc is written, on success either */
	memset(ring, T_POISON, 64 * 64);
	memset(uar, T_POISON, UAR_BYTES);
	memset(dbr, T_POISON, 64);
	assert_int_equal(dvx_mlx5_sq_init(&sq, &sqc,
					  &(struct dvx_mlx5_sq_cfg){ ring, 64, QPN, 28, db, uar,
								     256, 0 }),
			 0);
	assert_fill(ring, 0, 64 * 64, T_POISON);
	assert_fill(uar, 0, UAR_BYTES, T_POISON);
	assert_fill(dbr, 0, 64, T_POISON);
	assert_ptr_equal(sq.wq.buf, ring);
	assert_int_equal(sq.wq.size_mask, 64 * 64 - 1);
	assert_int_equal(sq.wq.qpn, QPN);
	assert_int_equal(sq.wq.max_inline, 28);
	assert_int_equal(sq.nwqebb, 64);
	assert_int_equal(sqc.resv, 0);
	assert_int_equal(sqc.ci, 0);
	assert_int_equal(sqc.db_pi, 0);
	assert_ptr_equal(sq.dbrec, db);
	assert_ptr_equal(sq.uar_reg, uar);
	assert_int_equal(sq.bf_half, 256);
	assert_int_equal(sqc.bf_offset, 0);
	assert_int_equal(sq.flags, 0);
	assert_int_equal(sq.db_qpn, dvx_mlx5_sq_db_value(0, QPN));
	assert_int_equal(dvx_mlx5_sq_room(&sq, &sqc), 64);
	/* the extremes that are allowed */
	assert_int_equal(dvx_mlx5_sq_init(&sq, &sqc,
					  &(struct dvx_mlx5_sq_cfg){ ring, 1, 0xffffff, 0, db, uar,
								     64, 0 }),
			 0);
	assert_int_equal(dvx_mlx5_sq_init(&sq, &sqc,
					  &(struct dvx_mlx5_sq_cfg){ ring, 64, QPN, 0, db, uar + 8,
								     0, 0 }),
			 0);
	dvx_test_free(ring);
	dvx_test_free(uar);
	dvx_test_free(dbr);
}

/* ---- reserve / room ---- */

static void test_reserve_room(void **state)
{
	struct fx f;
	uint64_t idx;

	(void)state;
	fx_open(&f, 8, 0);
	assert_int_equal(dvx_mlx5_sq_room(&f.sq, &f.sqc), 8);
	assert_int_equal(dvx_mlx5_sq_reserve(&f.sq, &f.sqc, 0, DVX_MLX5_SQ_SINGLE, &idx), -EINVAL);
	/* more than the ring can ever hold */
	assert_int_equal(dvx_mlx5_sq_reserve(&f.sq, &f.sqc, 9, DVX_MLX5_SQ_SINGLE, &idx), -EINVAL);
	assert_int_equal(dvx_mlx5_sq_reserve(&f.sq, &f.sqc, 0xffffffffu, DVX_MLX5_SQ_SINGLE, &idx), -EINVAL);
	assert_int_equal(f.sqc.resv, 0);
	assert_int_equal(dvx_mlx5_sq_reserve(&f.sq, &f.sqc, 3, DVX_MLX5_SQ_SINGLE, &idx), 0);
	assert_int_equal(idx, 0);
	assert_int_equal(dvx_mlx5_sq_room(&f.sq, &f.sqc), 5);
	assert_int_equal(dvx_mlx5_sq_reserve(&f.sq, &f.sqc, 6, DVX_MLX5_SQ_SINGLE, &idx), -ENOSPC);
	assert_int_equal(f.sqc.resv, 3);
	assert_int_equal(dvx_mlx5_sq_reserve(&f.sq, &f.sqc, 5, DVX_MLX5_SQ_SINGLE, &idx), 0);
	assert_int_equal(idx, 3);
	assert_int_equal(dvx_mlx5_sq_room(&f.sq, &f.sqc), 0);
	idx = 77;
	assert_int_equal(dvx_mlx5_sq_reserve(&f.sq, &f.sqc, 1, DVX_MLX5_SQ_SINGLE, &idx), -ENOSPC);
	assert_int_equal(idx, 77);
	assert_int_equal(f.sqc.resv, 8);
	/* reserving writes nothing to the ring, the record or the register */
	assert_fill(f.ring, 0, 8 * 64, T_POISON);
	assert_nothing_rung(&f);
	fx_close(&f);

	/* a big ring takes a maximal WQE, and a whole batch at once */
	fx_open(&f, 64, 0);
	assert_int_equal(dvx_mlx5_sq_reserve(&f.sq, &f.sqc, DVX_MLX5_MAX_WQEBB_PER_WQE, DVX_MLX5_SQ_SINGLE, &idx), 0);
	assert_int_equal(dvx_mlx5_sq_room(&f.sq, &f.sqc), 64 - DVX_MLX5_MAX_WQEBB_PER_WQE);
	assert_int_equal(dvx_mlx5_sq_reserve(&f.sq, &f.sqc, 64 - DVX_MLX5_MAX_WQEBB_PER_WQE + 1, DVX_MLX5_SQ_SINGLE, &idx),
			 -ENOSPC);
	assert_int_equal(dvx_mlx5_sq_reserve(&f.sq, &f.sqc, 64 - DVX_MLX5_MAX_WQEBB_PER_WQE, DVX_MLX5_SQ_SINGLE, &idx), 0);
	assert_int_equal(idx, DVX_MLX5_MAX_WQEBB_PER_WQE);
	assert_int_equal(dvx_mlx5_sq_room(&f.sq, &f.sqc), 0);
	fx_close(&f);
}

/* ---- doorbells ---- */

static void test_ring_db(void **state)
{
	struct fx f;

	(void)state;
	fx_open(&f, 64, 0);
	/* nothing posted: nothing rung */
	dvx_mlx5_sq_ring_db(&f.sq, &f.sqc, f.sqc.resv);
	assert_nothing_rung(&f);
	post_nop(&f);
	dvx_mlx5_sq_ring_db(&f.sq, &f.sqc, f.sqc.resv);
	assert_dbr(&f, 1);
	assert_db8(&f, 0, 1);
	assert_hex(f.uar, "00 00 01 00 00 01 23 00");
	assert_hex(f.dbr, "a5 a5 a5 a5 00 00 00 01");
	assert_int_equal(f.sqc.db_pi, 1);
	assert_int_equal(f.sqc.bf_offset, 0);
	/* again with nothing new: no store at all */
	fx_repoison(&f);
	dvx_mlx5_sq_ring_db(&f.sq, &f.sqc, f.sqc.resv);
	dvx_mlx5_sq_ring(&f.sq, &f.sqc, 0);
	assert_nothing_rung(&f);
	/* a batch: one doorbell naming the next free index */
	post_nop(&f);
	post_cs64(&f);
	post_sgl(&f, 10);	/* ds 12: 3 WQEBBs */
	dvx_mlx5_sq_ring_db(&f.sq, &f.sqc, f.sqc.resv);
	assert_dbr(&f, 7);
	assert_db8(&f, 0, 7);
	assert_int_equal(f.sqc.db_pi, 7);
	fx_close(&f);
}

static void test_db_value(void **state)
{
	union {
		uint64_t raw;
		uint8_t b[8];
	} v;

	(void)state;
	v.raw = dvx_mlx5_sq_db_value(0x12345, 0xabcdef);
	assert_hex(v.b, "00 23 45 00 ab cd ef 00");
	v.raw = dvx_mlx5_sq_db_value(0xffff, 0xffffff);
	assert_hex(v.b, "00 ff ff 00 ff ff ff 00");
	v.raw = dvx_mlx5_sq_db_value(0x10000, 1);
	assert_hex(v.b, "00 00 00 00 00 00 01 00");
}

/* BlueFlame halves of 256 B: every doorbell flips the half */
static void test_bf_alternation(void **state)
{
	struct fx f;
	int i;

	(void)state;
	fx_open(&f, 64, 256);
	for (i = 0; i < 8; i++) {
		uint32_t off = (i & 1) ? 256 : 0;

		fx_repoison(&f);
		assert_int_equal(f.sqc.bf_offset, off);
		post_nop(&f);
		post_nop(&f);
		dvx_mlx5_sq_ring_db(&f.sq, &f.sqc, f.sqc.resv);
		assert_dbr(&f, 2 * (i + 1));
		assert_db8(&f, off, 2 * (i + 1));
		assert_int_equal(f.sqc.bf_offset, 256 - off);
		/* nothing new: neither a store nor a flip */
		fx_repoison(&f);
		dvx_mlx5_sq_ring_db(&f.sq, &f.sqc, f.sqc.resv);
		assert_nothing_rung(&f);
		assert_int_equal(f.sqc.bf_offset, 256 - off);
	}
	fx_close(&f);

	/* a non-BlueFlame register never moves */
	fx_open(&f, 64, 0);
	for (i = 0; i < 4; i++) {
		fx_repoison(&f);
		post_nop(&f);
		dvx_mlx5_sq_ring(&f.sq, &f.sqc, f.sqc.resv - 1);
		assert_db8(&f, 0, (uint32_t)i + 1);
		assert_int_equal(f.sqc.bf_offset, 0);
	}
	fx_close(&f);
}

/* a lone WQE of 1 ... 4 WQEBBs (<= 256 B) is copied whole; 5 WQEBBs take the 8-byte DB */
static void test_bf_single_wqe(void **state)
{
	static const uint32_t nsge[] = { 1, 6, 10, 14, 15 };	/* ds 3, 8, 12, 16, 17 */
	struct fx f;
	uint32_t off = 0, idx;
	size_t i;

	(void)state;
	fx_open(&f, 64, 256);
	fx_repoison(&f);
	idx = post_nop(&f);
	dvx_mlx5_sq_ring(&f.sq, &f.sqc, idx);
	assert_dbr(&f, 1);
	assert_bf(&f, 0, idx, 1);
	assert_int_equal(f.sqc.bf_offset, 256);
	off = 256;
	for (i = 0; i < DVX_ARRAY_SIZE(nsge); i++) {
		uint32_t w = (2 + nsge[i] + 3) / 4;

		fx_repoison(&f);
		idx = post_sgl(&f, nsge[i]);
		dvx_mlx5_sq_ring(&f.sq, &f.sqc, idx);
		assert_dbr(&f, f.sqc.resv);
		if (w * 64 <= 256)
			assert_bf(&f, off, idx, w);
		else
			assert_db8(&f, off, f.sqc.resv);
		assert_int_equal(f.sqc.bf_offset, off ^ 256);
		assert_int_equal(f.sqc.db_pi, f.sqc.resv);
		off ^= 256;
	}
	/* the 2-WQEBB masked compare-swap goes by BlueFlame */
	fx_repoison(&f);
	idx = post_cs64(&f);
	dvx_mlx5_sq_ring(&f.sq, &f.sqc, idx);
	assert_bf(&f, off, idx, 2);
	fx_close(&f);

	/* a larger half (bf_reg_size 1 KiB) takes a 5-WQEBB WQE whole */
	fx_open(&f, 64, 512);
	fx_repoison(&f);
	idx = post_sgl(&f, 15);
	dvx_mlx5_sq_ring(&f.sq, &f.sqc, idx);
	assert_bf(&f, 0, idx, 5);
	fx_close(&f);
}

/* more than one WQE since the last doorbell: the 8-byte doorbell, even if small */
static void test_bf_batch(void **state)
{
	struct fx f;
	uint32_t last;

	(void)state;
	fx_open(&f, 64, 256);
	fx_repoison(&f);
	post_nop(&f);
	last = post_nop(&f);
	dvx_mlx5_sq_ring(&f.sq, &f.sqc, last);
	assert_dbr(&f, 2);
	assert_db8(&f, 0, 2);
	assert_int_equal(f.sqc.bf_offset, 256);
	fx_repoison(&f);
	post_nop(&f);
	post_nop(&f);
	last = post_cs64(&f);
	dvx_mlx5_sq_ring(&f.sq, &f.sqc, last);
	assert_dbr(&f, 6);
	assert_db8(&f, 256, 6);
	assert_int_equal(f.sqc.bf_offset, 0);
	/* and then a lone one goes by BlueFlame again */
	fx_repoison(&f);
	last = post_nop(&f);
	dvx_mlx5_sq_ring(&f.sq, &f.sqc, last);
	assert_bf(&f, 0, last, 1);
	fx_close(&f);
}

/* a BlueFlame copy of a WQE that wraps the ring copies the wrapped bytes */
static void test_bf_wrap(void **state)
{
	struct fx f;
	uint32_t i, idx;

	(void)state;
	fx_open(&f, 8, 256);
	for (i = 0; i < 7; i++) {
		idx = post_nop(&f);
		dvx_mlx5_sq_ring(&f.sq, &f.sqc, idx);
		assert_int_equal(dvx_mlx5_sq_completed(&f.sq, &f.sqc, (uint16_t)idx), 1);
	}
	/* masked CS 8 B at WQEBB 7: its second block is WQEBB 0 */
	fx_repoison(&f);
	idx = post_cs64(&f);
	assert_int_equal(idx, 7);
	dvx_mlx5_sq_ring(&f.sq, &f.sqc, idx);
	assert_dbr(&f, 9);
	assert_bf(&f, f.sqc.bf_offset ^ 256, 7, 2);
	assert_bytes_equal(f.uar + (f.sqc.bf_offset ^ 256) + 64, f.ring, 64);
	/* the data segment of the WQE really is at the start of WQEBB 0 */
	assert_hex(f.uar + (f.sqc.bf_offset ^ 256) + 64,
		   "00 00 00 08 00 00 00 99 00 00 00 00 00 00 00 00");
	assert_int_equal(dvx_mlx5_sq_completed(&f.sq, &f.sqc, 7), 2);
	/* 4 WQEBBs from WQEBB 6 (9 -> 6 after a few NOPs): 6, 7, 0, 1 */
	for (i = 0; i < 5; i++) {
		idx = post_nop(&f);
		dvx_mlx5_sq_ring(&f.sq, &f.sqc, idx);
		dvx_mlx5_sq_completed(&f.sq, &f.sqc, (uint16_t)idx);
	}
	assert_int_equal(f.sqc.resv & 7, 6);
	fx_repoison(&f);
	idx = post_sgl(&f, 14);
	dvx_mlx5_sq_ring(&f.sq, &f.sqc, idx);
	assert_bf(&f, f.sqc.bf_offset ^ 256, idx, 4);
	assert_bytes_equal(f.uar + (f.sqc.bf_offset ^ 256) + 128, f.ring, 128);
	fx_close(&f);
}

/* pi runs free past 2^16 (and 2^32); the hardware sees its low 16 bits */
static void test_pi_wrap(void **state)
{
	struct fx f;
	uint32_t i, idx;

	(void)state;
	fx_open(&f, 64, 0);
	for (i = 0; i < 0xfffe; i++) {
		idx = post_nop(&f);
		dvx_mlx5_sq_ring_db(&f.sq, &f.sqc, f.sqc.resv);
		assert_int_equal(dvx_mlx5_sq_completed(&f.sq, &f.sqc, (uint16_t)idx), 1);
	}
	assert_int_equal(f.sqc.resv, 0xfffe);
	fx_repoison(&f);
	assert_int_equal(post_nop(&f), 0xfffe);
	assert_int_equal(post_nop(&f), 0xffff);
	assert_int_equal(post_nop(&f), 0x10000);
	dvx_mlx5_sq_ring_db(&f.sq, &f.sqc, f.sqc.resv);
	assert_dbr(&f, 0x10001);
	assert_hex(f.dbr + 4, "00 00 00 01");
	assert_hex(f.uar, "00 00 01 00 00 01 23 00");
	assert_hex(f.ring + (0xfffe & 63) * 64, "00 ff fe 00");
	assert_hex(f.ring + (0xffff & 63) * 64, "00 ff ff 00");
	assert_hex(f.ring + (0x10000 & 63) * 64, "00 00 00 00");
	/* the last WQE completes, freeing all three across the wrap */
	assert_int_equal(dvx_mlx5_sq_completed(&f.sq, &f.sqc, 0x0000), 3);
	assert_int_equal(f.sqc.ci, 0x10001);
	assert_int_equal(dvx_mlx5_sq_room(&f.sq, &f.sqc), 64);
	fx_close(&f);

	/* and past 2^32: the counters are 64-bit and do not wrap there; the ring slot and
	 * the 16-bit index the hardware sees do */
	fx_open(&f, 64, 256);
	f.sqc.resv = f.sqc.ci = f.sqc.db_pi = 0xfffffffeu;
	fx_repoison(&f);
	assert_int_equal(post_nop(&f), 0xfffffffeu);
	assert_int_equal(post_cs64(&f), 0xffffffffu);
	assert_int_equal(post_nop(&f), 0x100000001ull);
	assert_int_equal(dvx_mlx5_sq_room(&f.sq, &f.sqc), 60);
	dvx_mlx5_sq_ring_db(&f.sq, &f.sqc, f.sqc.resv);
	assert_dbr(&f, 2);
	assert_db8(&f, 0, 2);
	assert_int_equal(dvx_mlx5_sq_completed(&f.sq, &f.sqc, 0xffff), 3);
	assert_int_equal(f.sqc.ci, 0x100000001ull);
	assert_int_equal(dvx_mlx5_sq_completed(&f.sq, &f.sqc, 0x0001), 1);
	assert_int_equal(f.sqc.ci, 0x100000002ull);
	assert_int_equal(dvx_mlx5_sq_room(&f.sq, &f.sqc), 64);
	fx_close(&f);
}

/* ---- completions ---- */

static void test_completed_sizes(void **state)
{
	struct fx f;

	(void)state;
	fx_open(&f, 8, 0);
	assert_int_equal(post_nop(&f), 0);
	assert_int_equal(post_cs64(&f), 1);
	assert_int_equal(post_nop(&f), 3);
	assert_int_equal(post_sgl(&f, 4), 4);	/* ds 6: 2 WQEBBs */
	assert_int_equal(dvx_mlx5_sq_room(&f.sq, &f.sqc), 2);
	assert_int_equal(dvx_mlx5_sq_completed(&f.sq, &f.sqc, 0), 1);
	assert_int_equal(f.sqc.ci, 1);
	assert_int_equal(dvx_mlx5_sq_completed(&f.sq, &f.sqc, 1), 2);
	assert_int_equal(f.sqc.ci, 3);
	assert_int_equal(dvx_mlx5_sq_completed(&f.sq, &f.sqc, 3), 1);
	assert_int_equal(f.sqc.ci, 4);
	assert_int_equal(dvx_mlx5_sq_completed(&f.sq, &f.sqc, 4), 2);
	assert_int_equal(f.sqc.ci, 6);
	assert_int_equal(dvx_mlx5_sq_room(&f.sq, &f.sqc), 8);
	fx_close(&f);
}

/* RC completes in order: a CQE for a later WQE frees every earlier one */
static void test_completed_in_order(void **state)
{
	struct fx f;
	uint32_t last;

	(void)state;
	fx_open(&f, 16, 0);
	post_nop(&f);
	post_nop(&f);
	post_nop(&f);
	last = post_cs64(&f);
	post_nop(&f);
	assert_int_equal(last, 3);
	assert_int_equal(dvx_mlx5_sq_completed(&f.sq, &f.sqc, 3), 5);
	assert_int_equal(f.sqc.ci, 5);
	assert_int_equal(dvx_mlx5_sq_completed(&f.sq, &f.sqc, 5), 1);
	assert_int_equal(f.sqc.ci, 6);
	assert_int_equal(dvx_mlx5_sq_room(&f.sq, &f.sqc), 16);
	fx_close(&f);
}

/* a wqe_counter that names no WQE in flight is refused and changes nothing */
static void test_completed_eproto(void **state)
{
	struct dvx_mlx5_sq_ctrs before;
	struct fx f;
	uint32_t i;

	(void)state;
	fx_open(&f, 16, 0);
	/* nothing in flight at all */
	before = f.sqc;
	assert_int_equal(dvx_mlx5_sq_completed(&f.sq, &f.sqc, 0), -EPROTO);
	assert_int_equal(dvx_mlx5_sq_completed(&f.sq, &f.sqc, 0xffff), -EPROTO);
	assert_memory_equal(&f.sqc, &before, sizeof(before));
	/* WQEs 0..3 done, 4..9 in flight */
	for (i = 0; i < 10; i++)
		post_nop(&f);
	assert_int_equal(dvx_mlx5_sq_completed(&f.sq, &f.sqc, 3), 4);
	before = f.sqc;
	assert_int_equal(dvx_mlx5_sq_completed(&f.sq, &f.sqc, 3), -EPROTO);	/* already completed */
	assert_int_equal(dvx_mlx5_sq_completed(&f.sq, &f.sqc, 0), -EPROTO);
	assert_int_equal(dvx_mlx5_sq_completed(&f.sq, &f.sqc, 10), -EPROTO);	/* not posted yet */
	assert_int_equal(dvx_mlx5_sq_completed(&f.sq, &f.sqc, 11), -EPROTO);
	assert_int_equal(dvx_mlx5_sq_completed(&f.sq, &f.sqc, 0x8000), -EPROTO);
	assert_int_equal(dvx_mlx5_sq_completed(&f.sq, &f.sqc, 0xffff), -EPROTO);
	assert_int_equal(dvx_mlx5_sq_completed(&f.sq, &f.sqc, 4 + 0x10000 / 2), -EPROTO);
	assert_memory_equal(&f.sqc, &before, sizeof(before));
	assert_int_equal(dvx_mlx5_sq_completed(&f.sq, &f.sqc, 9), 6);
	fx_close(&f);

	/* the index pi itself is not in flight, even when its slot reads as ds 0 (a
	 * zeroed ring): nothing may be freed by a CQE for a WQE never posted */
	fx_open(&f, 16, 0);
	memset(f.ring, 0, 16 * 64);
	for (i = 0; i < 4; i++)
		post_nop(&f);
	before = f.sqc;
	assert_int_equal(dvx_mlx5_sq_completed(&f.sq, &f.sqc, 4), -EPROTO);
	assert_memory_equal(&f.sqc, &before, sizeof(before));
	fx_close(&f);
}

/* completions across the 16-bit wrap of wqe_counter */
static void test_completed_wrap16(void **state)
{
	struct dvx_mlx5_sq_ctrs before;
	struct fx f;

	(void)state;
	fx_open(&f, 16, 0);
	f.sqc.resv = f.sqc.ci = f.sqc.db_pi = 0x2fffd;
	assert_int_equal(post_nop(&f), 0x2fffd);
	assert_int_equal(post_nop(&f), 0x2fffe);
	assert_int_equal(post_cs64(&f), 0x2ffff);	/* occupies 0x2ffff and 0x30000 */
	assert_int_equal(post_nop(&f), 0x30001);
	assert_int_equal(post_nop(&f), 0x30002);
	assert_int_equal(dvx_mlx5_sq_completed(&f.sq, &f.sqc, 0xfffe), 2);
	assert_int_equal(f.sqc.ci, 0x2ffff);
	assert_int_equal(dvx_mlx5_sq_completed(&f.sq, &f.sqc, 0xffff), 2);
	assert_int_equal(f.sqc.ci, 0x30001);
	before = f.sqc;
	assert_int_equal(dvx_mlx5_sq_completed(&f.sq, &f.sqc, 0xffff), -EPROTO);
	assert_int_equal(dvx_mlx5_sq_completed(&f.sq, &f.sqc, 0xfffd), -EPROTO);
	assert_int_equal(dvx_mlx5_sq_completed(&f.sq, &f.sqc, 0x0003), -EPROTO);
	assert_memory_equal(&f.sqc, &before, sizeof(before));
	assert_int_equal(dvx_mlx5_sq_completed(&f.sq, &f.sqc, 0x0002), 2);
	assert_int_equal(f.sqc.ci, 0x30003);
	assert_int_equal(f.sqc.ci, f.sqc.resv);
	fx_close(&f);
}

static void test_reset(void **state)
{
	struct fx f;
	uint32_t idx;

	(void)state;
	fx_open(&f, 16, 256);
	post_nop(&f);
	post_nop(&f);
	dvx_mlx5_sq_ring_db(&f.sq, &f.sqc, f.sqc.resv);
	post_cs64(&f);
	dvx_mlx5_sq_completed(&f.sq, &f.sqc, 0);
	assert_int_equal(f.sqc.bf_offset, 256);
	dvx_mlx5_sq_ctrs_set(&f.sqc, 0);
	assert_int_equal(f.sqc.resv, 0);
	assert_int_equal(f.sqc.ci, 0);
	assert_int_equal(f.sqc.db_pi, 0);
	assert_int_equal(f.sqc.bf_offset, 0);
	assert_int_equal(f.sq.nwqebb, 16);
	assert_int_equal(f.sq.wq.qpn, QPN);
	assert_int_equal(f.sq.bf_half, 256);
	assert_int_equal(dvx_mlx5_sq_room(&f.sq, &f.sqc), 16);
	/* it starts over at index 0 and the first doorbell uses the first half */
	fx_repoison(&f);
	idx = post_nop(&f);
	assert_int_equal(idx, 0);
	dvx_mlx5_sq_ring_db(&f.sq, &f.sqc, f.sqc.resv);
	assert_dbr(&f, 1);
	assert_db8(&f, 0, 1);
	fx_close(&f);
}

/* ---- shared mode: many posters ---- */

/* the steps one shared poster takes, single-threaded so each can be checked */
static void test_shared_steps(void **state)
{
	struct fx f;
	uint64_t a = 0, b = 0, c = 0;

	(void)state;
	fx_open(&f, 8, 0);
	/* two posters reserve: CAS against the room, nothing claimed when it is short */
	assert_int_equal(dvx_mlx5_sq_reserve(&f.sq, &f.sqc, 3, DVX_MLX5_SQ_SHARED, &a), 0);
	assert_int_equal(dvx_mlx5_sq_reserve(&f.sq, &f.sqc, 4, DVX_MLX5_SQ_SHARED, &b), 0);
	assert_int_equal(a, 0);
	assert_int_equal(b, 3);
	assert_int_equal(dvx_mlx5_sq_reserve(&f.sq, &f.sqc, 2, DVX_MLX5_SQ_SHARED, &c), -ENOSPC);
	assert_int_equal(dvx_mlx5_sq_reserve(&f.sq, &f.sqc, 9, DVX_MLX5_SQ_SHARED, &c), -EINVAL);
	assert_int_equal(f.sqc.resv, 7);
	/* only the poster whose ticket equals ready may publish */
	assert_false(dvx_mlx5_sq_turn(&f.sqc, b));
	assert_true(dvx_mlx5_sq_turn(&f.sqc, a));
	for (c = 0; c < 7; c++)
		dvx_mlx5_wqe_nop(&f.sq.wq, (uint32_t)c, DVX_MLX5_WQE_CTRL_CQ_UPDATE);
	/* the first publishes without ringing: a later reservation exists */
	dvx_mlx5_sq_built(&f.sq);
	dvx_mlx5_sq_publish(&f.sq, &f.sqc, a, 3, DVX_MLX5_SQ_SHARED);
	assert_int_equal(f.sqc.ready, 3);
	assert_nothing_rung(&f);
	/* the tail publishes and rings once, for both */
	assert_true(dvx_mlx5_sq_turn(&f.sqc, b));
	dvx_mlx5_sq_publish(&f.sq, &f.sqc, b, 4, DVX_MLX5_SQ_SHARED);
	assert_int_equal(f.sqc.ready, 7);
	assert_int_equal(f.sqc.db_pi, 7);
	assert_dbr(&f, 7);
	assert_db8(&f, 0, 7);
	/* the consumer frees slots; a reservation that fits now succeeds */
	f.sqc.ci = 3;
	assert_int_equal(dvx_mlx5_sq_reserve(&f.sq, &f.sqc, 4, DVX_MLX5_SQ_SHARED, &c), 0);
	assert_int_equal(c, 7);
	/* single mode publishes nothing: the poster rings its batch */
	fx_repoison(&f);
	dvx_mlx5_sq_publish(&f.sq, &f.sqc, c, 4, DVX_MLX5_SQ_SINGLE);
	assert_int_equal(f.sqc.ready, 7);
	assert_nothing_rung(&f);
	fx_close(&f);
}

/*
 * Threads share one SQ: each posts its own sequence of NOPs carrying (thread, seq) in
 * the ctrl's immediate; a consumer thread plays the NIC: it reads the doorbell record,
 * checks every WQE below it (its 16-bit index, and each thread's sequence in order),
 * and frees the slots. Every WQE must be seen exactly once, in ticket order, the
 * record must only move forward, and the last doorbell must cover everything.
 */
#define SH_THREADS 4
#define SH_POSTS 20000
#define SH_NWQEBB 64

struct sh {
	struct fx f;
	uint32_t next_seq[SH_THREADS];
	uint64_t seen;
	int bad;
	int done;
};

static void *sh_poster(void *arg)
{
	struct sh *s = arg;
	static uint32_t id_next;
	uint32_t id = __atomic_fetch_add(&id_next, 1, __ATOMIC_RELAXED) % SH_THREADS, k;

	for (k = 0; k < SH_POSTS; k++) {
		uint64_t t;
		int err;

		while ((err = dvx_mlx5_sq_reserve(&s->f.sq, &s->f.sqc, 1, DVX_MLX5_SQ_SHARED,
						  &t)) == -ENOSPC)
			sched_yield();
		if (err) {
			__atomic_store_n(&s->bad, 1, __ATOMIC_RELAXED);
			return NULL;
		}
		dvx_mlx5_wqe_ctrl((struct dvx_mlx5_wqe_ctrl_seg *)dvx_mlx5_wq_seg(&s->f.sq.wq,
										  (uint32_t)t, 0),
				  (uint32_t)t, DVX_MLX5_OPCODE_NOP, 0, s->f.sq.wq.qpn_be8, 1,
				  DVX_MLX5_WQE_CTRL_CQ_UPDATE, (id << 24) | k);
		dvx_mlx5_sq_built(&s->f.sq);
		while (!dvx_mlx5_sq_turn(&s->f.sqc, t))
			sched_yield();
		dvx_mlx5_sq_publish(&s->f.sq, &s->f.sqc, t, 1, DVX_MLX5_SQ_SHARED);
	}
	return NULL;
}

static void *sh_consumer(void *arg)
{
	struct sh *s = arg;
	uint64_t ci = 0, total = (uint64_t)SH_THREADS * SH_POSTS;
	uint16_t last_rec = 0;

	while (ci < total && !__atomic_load_n(&s->bad, __ATOMIC_RELAXED)) {
		uint32_t word = dvx_be32_to_cpu(__atomic_load_n((dvx_be32 *)(void *)(s->f.dbr + 4),
								__ATOMIC_ACQUIRE));
		uint16_t rec = (uint16_t)word;
		uint16_t ahead = (uint16_t)(rec - last_rec);

		/* the whole word is the poison until the first doorbell: the 16-bit counter
		 * itself passes 0x5a5a on its way (80000 posts wrap it) */
		if (word == 0x5a5a5a5au || ahead > SH_NWQEBB) {
			if (word != 0x5a5a5a5au)
				__atomic_store_n(&s->bad, 2, __ATOMIC_RELAXED);
			sched_yield();
			continue;
		}
		last_rec = rec;
		while ((uint16_t)ci != rec) {
			const struct dvx_mlx5_wqe_ctrl_seg *c = dvx_mlx5_wq_seg(&s->f.sq.wq,
										(uint32_t)ci, 0);
			uint32_t imm = dvx_be32_to_cpu(c->imm), id = imm >> 24;

			if ((dvx_be32_to_cpu(c->opmod_idx_opcode) >> 8 & 0xffff) != (uint16_t)ci ||
			    id >= SH_THREADS || (imm & 0xffffff) != s->next_seq[id]) {
				__atomic_store_n(&s->bad, 3, __ATOMIC_RELAXED);
				return NULL;
			}
			s->next_seq[id]++;
			ci++;
		}
		/* the slots are free once consumed */
		__atomic_store_n(&s->f.sqc.ci, ci, __ATOMIC_RELEASE);
		if (ci < total)
			sched_yield();
	}
	s->seen = ci;
	return NULL;
}

static void test_shared_threads(void **state)
{
	static struct sh s;
	pthread_t p[SH_THREADS], c;
	uint32_t i;

	(void)state;
	memset(&s, 0, sizeof(s));
	fx_open(&s.f, SH_NWQEBB, 0);
	memset(s.f.dbr, 0x5a, 64);
	assert_int_equal(pthread_create(&c, NULL, sh_consumer, &s), 0);
	for (i = 0; i < SH_THREADS; i++)
		assert_int_equal(pthread_create(&p[i], NULL, sh_poster, &s), 0);
	for (i = 0; i < SH_THREADS; i++)
		pthread_join(p[i], NULL);
	pthread_join(c, NULL);
	assert_int_equal(s.bad, 0);
	assert_int_equal(s.seen, (uint64_t)SH_THREADS * SH_POSTS);
	for (i = 0; i < SH_THREADS; i++)
		assert_int_equal(s.next_seq[i], SH_POSTS);
	assert_int_equal(s.f.sqc.resv, (uint64_t)SH_THREADS * SH_POSTS);
	assert_int_equal(s.f.sqc.ready, s.f.sqc.resv);
	assert_int_equal(s.f.sqc.db_pi, s.f.sqc.resv);	/* the last doorbell covers all */
	assert_db8(&s.f, 0, (uint32_t)s.f.sqc.resv);
	fx_close(&s.f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_args),
		cmocka_unit_test(test_reserve_room),
		cmocka_unit_test(test_ring_db),
		cmocka_unit_test(test_db_value),
		cmocka_unit_test(test_bf_alternation),
		cmocka_unit_test(test_bf_single_wqe),
		cmocka_unit_test(test_bf_batch),
		cmocka_unit_test(test_bf_wrap),
		cmocka_unit_test(test_pi_wrap),
		cmocka_unit_test(test_completed_sizes),
		cmocka_unit_test(test_completed_in_order),
		cmocka_unit_test(test_completed_eproto),
		cmocka_unit_test(test_completed_wrap16),
		cmocka_unit_test(test_reset),
		cmocka_unit_test(test_shared_steps),
		cmocka_unit_test(test_shared_threads),
	};

	return cmocka_run_group_tests_name("mlx5-sq", tests, NULL, NULL);
}
