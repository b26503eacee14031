// SPDX-License-Identifier: MIT
/*
 * A QP's own receive queue (dvx/mlx5/rq.h): receive WQEs are data segments (prm
 * 2.5) in slots of 2^stride_shift bytes, a short list is closed by {0, 0x100, 0},
 * and the RQ counter is published as BE32(pi & 0xffff) in word 0 of the QP doorbell
 * record (prm 3.1), leaving the SQ word 1 alone.
 */
#include "mlx5_test.h"

#include <errno.h>
#include <dvx/mlx5/rq.h>

struct fx {
	uint8_t *buf;
	uint8_t *dbr;
	uint32_t nwqe, stride_shift;
	size_t bytes;
	struct dvx_mlx5_rq rq;
};

static void fx_open(struct fx *f, uint32_t nwqe, uint32_t stride_shift)
{
	f->nwqe = nwqe;
	f->stride_shift = stride_shift;
	f->bytes = (size_t)nwqe << stride_shift;
	f->buf = t_ring_alloc(f->bytes, T_POISON);
	f->dbr = t_ring_alloc(64, T_POISON);
	memset(&f->rq, 0, sizeof(f->rq));
	assert_int_equal(dvx_mlx5_rq_init(&f->rq, f->buf, nwqe, stride_shift, (void *)f->dbr), 0);
}

static void fx_close(struct fx *f)
{
	dvx_test_free(f->buf);
	dvx_test_free(f->dbr);
}

static void make_sgl(struct dvx_mlx5_sge *sgl, uint32_t n, uint32_t tag)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		sgl[i].addr = 0x1122334455660000ull + tag * 0x100 + i;
		sgl[i].lkey = 0xa0b0c000u + tag * 0x10 + i;
		sgl[i].length = 0x00100000u + tag * 0x100 + i;
	}
}

/* slot @slot holds the non-empty entries of @sgl, then (if room) the terminator; the
 * rest of the slot is untouched */
static void assert_slot(const struct fx *f, uint32_t slot, const struct dvx_mlx5_sge *sgl,
			uint32_t nsge)
{
	const uint8_t *p = f->buf + ((size_t)slot << f->stride_shift);
	uint32_t max = (1u << f->stride_shift) / 16, i, n = 0;
	uint8_t want[16];

	for (i = 0; i < nsge; i++) {
		if (!sgl[i].length)
			continue;
		t_data(want, sgl[i].length, sgl[i].lkey, sgl[i].addr);
		assert_bytes_equal(p + 16 * n, want, 16);
		n++;
	}
	if (n < max) {
		/* prm 2.5: byte_count 0, lkey MLX5_INVALID_LKEY, addr 0 */
		assert_hex(p + 16 * n, "00 00 00 00 00 00 01 00 00 00 00 00 00 00 00 00");
		n++;
	}
	assert_fill(p, 16 * n, 1u << f->stride_shift, T_POISON);
}

static void test_init_args(void **state)
{
	uint8_t *buf = t_ring_alloc(1u << 20, 0), *dbr = t_ring_alloc(64, 0);
	struct dvx_mlx5_rq rq, before;
	dvx_be32 *db = (void *)dbr;

	(void)state;
	memset(&rq, 0x3c, sizeof(rq));
	before = rq;
	assert_int_equal(dvx_mlx5_rq_init(&rq, NULL, 8, 6, db), -EINVAL);
	assert_int_equal(dvx_mlx5_rq_init(&rq, buf + 8, 8, 6, db), -EINVAL);
	assert_int_equal(dvx_mlx5_rq_init(&rq, buf, 0, 6, db), -EINVAL);
	assert_int_equal(dvx_mlx5_rq_init(&rq, buf, 3, 6, db), -EINVAL);
	assert_int_equal(dvx_mlx5_rq_init(&rq, buf, 24, 6, db), -EINVAL);
	assert_int_equal(dvx_mlx5_rq_init(&rq, buf, 1u << 16, 4, db), -EINVAL);
	assert_int_equal(dvx_mlx5_rq_init(&rq, buf, 8, 3, db), -EINVAL);
	assert_int_equal(dvx_mlx5_rq_init(&rq, buf, 8, 11, db), -EINVAL);
	assert_int_equal(dvx_mlx5_rq_init(&rq, buf, 8, 6, NULL), -EINVAL);
	assert_int_equal(dvx_mlx5_rq_init(&rq, buf, 8, 6, (void *)(dbr + 4)), -EINVAL);
	assert_memory_equal(&rq, &before, sizeof(rq));

	memset(buf, T_POISON, 1u << 20);
	memset(dbr, T_POISON, 64);
	assert_int_equal(dvx_mlx5_rq_init(&rq, buf + 16, 1, 4, db), 0);
	assert_int_equal(rq.max_sge, 1);
	assert_int_equal(dvx_mlx5_rq_init(&rq, buf, 1u << 15, 10, (void *)(dbr + 8)), 0);
	assert_int_equal(rq.max_sge, 64);
	assert_int_equal(dvx_mlx5_rq_init(&rq, buf, 16, 6, db), 0);
	assert_ptr_equal(rq.buf, buf);
	assert_int_equal(rq.nwqe, 16);
	assert_int_equal(rq.stride_shift, 6);
	assert_int_equal(rq.max_sge, 4);
	assert_int_equal(rq.pi, 0);
	assert_int_equal(rq.ci, 0);
	assert_ptr_equal(rq.dbrec, db);
	/* init writes nothing but @rq */
	assert_fill(buf, 0, 1u << 20, T_POISON);
	assert_fill(dbr, 0, 64, T_POISON);
	dvx_test_free(buf);
	dvx_test_free(dbr);
}

static void test_post_layouts(void **state)
{
	struct dvx_mlx5_sge sgl[8];
	struct fx f;
	uint32_t n;

	(void)state;
	fx_open(&f, 8, 6);	/* 64-byte slots: 4 data segments */
	/* 0 ... 4 entries */
	for (n = 0; n <= 4; n++) {
		make_sgl(sgl, n, n);
		assert_int_equal(dvx_mlx5_rq_post(&f.rq, sgl, n), n);
		assert_slot(&f, n, sgl, n);
	}
	/* the literal layout of slot 2 (two entries and the terminator) */
	assert_hex(f.buf + 2 * 64,
		   "00 10 02 00 a0 b0 c0 20 11 22 33 44 55 66 02 00"
		   "00 10 02 01 a0 b0 c0 21 11 22 33 44 55 66 02 01"
		   "00 00 00 00 00 00 01 00 00 00 00 00 00 00 00 00");
	assert_fill(f.buf, 2 * 64 + 48, 2 * 64 + 64, T_POISON);
	/* zero-length entries leave no segment: 6 entries, 2 empty -> full slot, no close */
	make_sgl(sgl, 6, 7);
	sgl[0].length = 0;
	sgl[4].length = 0;
	assert_int_equal(dvx_mlx5_rq_post(&f.rq, sgl, 6), 5);
	assert_slot(&f, 5, sgl, 6);
	/* only empty entries: just the terminator */
	sgl[0].length = sgl[1].length = 0;
	assert_int_equal(dvx_mlx5_rq_post(&f.rq, sgl, 2), 6);
	assert_hex(f.buf + 6 * 64, "00 00 00 00 00 00 01 00 00 00 00 00 00 00 00 00");
	assert_fill(f.buf, 6 * 64 + 16, 7 * 64, T_POISON);
	/* posting wrote nothing to the doorbell record */
	assert_fill(f.dbr, 0, 64, T_POISON);
	fx_close(&f);

	/* 16-byte slots hold one segment and never a terminator for one buffer */
	fx_open(&f, 4, 4);
	make_sgl(sgl, 1, 1);
	assert_int_equal(dvx_mlx5_rq_post(&f.rq, sgl, 1), 0);
	assert_slot(&f, 0, sgl, 1);
	assert_int_equal(dvx_mlx5_rq_post(&f.rq, NULL, 0), 1);
	assert_slot(&f, 1, sgl, 0);
	assert_fill(f.buf, 32, 64, T_POISON);
	fx_close(&f);
}

static void test_post_errors(void **state)
{
	struct dvx_mlx5_sge sgl[8];
	struct dvx_mlx5_rq before;
	uint8_t *copy;
	struct fx f;
	uint32_t i;

	(void)state;
	fx_open(&f, 4, 6);
	before = f.rq;
	/* more non-empty buffers than a slot holds */
	make_sgl(sgl, 5, 1);
	assert_int_equal(dvx_mlx5_rq_post(&f.rq, sgl, 5), -E2BIG);
	/* a length with bit 31 */
	make_sgl(sgl, 3, 2);
	sgl[2].length = 0x80000000u;
	assert_int_equal(dvx_mlx5_rq_post(&f.rq, sgl, 3), -EINVAL);
	sgl[2].length = 0xffffffffu;
	assert_int_equal(dvx_mlx5_rq_post(&f.rq, sgl, 3), -EINVAL);
	/* entries promised, no list */
	assert_int_equal(dvx_mlx5_rq_post(&f.rq, NULL, 1), -EINVAL);
	assert_memory_equal(&f.rq, &before, sizeof(before));
	assert_fill(f.buf, 0, f.bytes, T_POISON);

	make_sgl(sgl, 5, 3);
	sgl[1].length = 0;
	assert_int_equal(dvx_mlx5_rq_post(&f.rq, sgl, 5), 0);
	assert_slot(&f, 0, sgl, 5);
	/* fill the ring, then -ENOSPC with nothing written */
	for (i = 1; i < 4; i++) {
		make_sgl(sgl, 2, i);
		assert_int_equal(dvx_mlx5_rq_post(&f.rq, sgl, 2), i);
	}
	copy = dvx_test_alloc(f.bytes, 0);
	assert_non_null(copy);
	memcpy(copy, f.buf, f.bytes);
	before = f.rq;
	assert_int_equal(dvx_mlx5_rq_post(&f.rq, sgl, 1), -ENOSPC);
	assert_int_equal(dvx_mlx5_rq_post(&f.rq, NULL, 0), -ENOSPC);
	assert_memory_equal(&f.rq, &before, sizeof(before));
	assert_memory_equal(f.buf, copy, f.bytes);
	dvx_test_free(copy);
	/* one completion frees one slot: the next post reuses slot 0 */
	assert_int_equal(dvx_mlx5_rq_completed(&f.rq), 0);
	make_sgl(sgl, 1, 9);
	assert_int_equal(dvx_mlx5_rq_post(&f.rq, sgl, 1), 4);
	assert_int_equal(f.rq.pi, 5);
	fx_close(&f);
}

static void test_ring(void **state)
{
	struct dvx_mlx5_sge sgl[1];
	struct fx f;
	uint32_t i;

	(void)state;
	fx_open(&f, 8, 5);
	make_sgl(sgl, 1, 0);
	dvx_mlx5_rq_ring(&f.rq);
	assert_hex(f.dbr, "00 00 00 00 a5 a5 a5 a5");
	assert_int_equal(dvx_mlx5_rq_post(&f.rq, sgl, 1), 0);
	assert_int_equal(dvx_mlx5_rq_post(&f.rq, sgl, 1), 1);
	assert_int_equal(dvx_mlx5_rq_post(&f.rq, sgl, 1), 2);
	dvx_mlx5_rq_ring(&f.rq);
	assert_hex(f.dbr, "00 00 00 03 a5 a5 a5 a5");
	assert_fill(f.dbr, 8, 64, T_POISON);
	/* the counter runs free; the record shows its low 16 bits */
	for (i = 3; i < 0x10001; i++) {
		assert_int_equal(dvx_mlx5_rq_completed(&f.rq), i - 3);
		assert_int_equal(dvx_mlx5_rq_post(&f.rq, sgl, 1), i);
	}
	dvx_mlx5_rq_ring(&f.rq);
	assert_int_equal(f.rq.pi, 0x10001);
	assert_hex(f.dbr, "00 00 00 01 a5 a5 a5 a5");
	/* slot = index mod nwqe */
	assert_slot(&f, 0x10000 & 7, sgl, 1);
	fx_close(&f);
}

static void test_completed(void **state)
{
	struct dvx_mlx5_sge sgl[1];
	struct fx f;

	(void)state;
	fx_open(&f, 4, 4);
	make_sgl(sgl, 1, 0);
	assert_int_equal(dvx_mlx5_rq_completed(&f.rq), -EPROTO);
	assert_int_equal(f.rq.ci, 0);
	assert_int_equal(dvx_mlx5_rq_post(&f.rq, sgl, 1), 0);
	assert_int_equal(dvx_mlx5_rq_post(&f.rq, sgl, 1), 1);
	assert_int_equal(dvx_mlx5_rq_completed(&f.rq), 0);
	assert_int_equal(dvx_mlx5_rq_completed(&f.rq), 1);
	assert_int_equal(dvx_mlx5_rq_completed(&f.rq), -EPROTO);
	assert_int_equal(f.rq.ci, 2);
	assert_int_equal(f.rq.pi, 2);
	/* across the 32-bit wrap of the free-running counters */
	f.rq.pi = f.rq.ci = 0xfffffffeu;
	assert_int_equal(dvx_mlx5_rq_post(&f.rq, sgl, 1), 0xfffffffeu);
	assert_int_equal(dvx_mlx5_rq_post(&f.rq, sgl, 1), 0xffffffffu);
	assert_int_equal(dvx_mlx5_rq_post(&f.rq, sgl, 1), 0);
	assert_int_equal(dvx_mlx5_rq_post(&f.rq, sgl, 1), 1);
	assert_int_equal(dvx_mlx5_rq_post(&f.rq, sgl, 1), -ENOSPC);
	assert_int_equal(dvx_mlx5_rq_completed(&f.rq), 0xfffffffeu);
	assert_int_equal(dvx_mlx5_rq_completed(&f.rq), 0xffffffffu);
	assert_int_equal(dvx_mlx5_rq_completed(&f.rq), 0);
	assert_int_equal(dvx_mlx5_rq_completed(&f.rq), 1);
	assert_int_equal(dvx_mlx5_rq_completed(&f.rq), -EPROTO);
	/* reset */
	dvx_mlx5_rq_reset(&f.rq);
	assert_int_equal(f.rq.pi, 0);
	assert_int_equal(f.rq.ci, 0);
	assert_int_equal(dvx_mlx5_rq_post(&f.rq, sgl, 1), 0);
	fx_close(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_args),
		cmocka_unit_test(test_post_layouts),
		cmocka_unit_test(test_post_errors),
		cmocka_unit_test(test_ring),
		cmocka_unit_test(test_completed),
	};

	return cmocka_run_group_tests_name("mlx5-rq", tests, NULL, NULL);
}
