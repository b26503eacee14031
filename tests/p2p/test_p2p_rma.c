// SPDX-License-Identifier: MIT
/*
 * tests/p2p/test_p2p_rma.c - gets, the one-word operations and quiet of the P2P
 * transport on the software NIC, ranks as threads: gets of random ranges verified
 * byte by byte on every lane, fetch-adds in flight at once whose old values are
 * exactly 0 ... n-1, compare-swap hits and misses, put_value then add, the refusals
 * (bad descriptions: -EINVAL with nothing posted; a get from memory registered
 * without remote read: -EPERM before posting when its exchanged rights say so, on
 * the lane when they are unknown; over a transport without DVX_P2P_F_READ:
 * -EREMOTEIO; the destination unchanged). test_op_bytes checks the WQEs of dvx/p2p/ops.h (what the
 * host and the device forms post) field by field and against the mlx5 builders'
 * bytes (which mlx5-wqe-test and the rdma-core test check against mlx5dv.h).
 */
#include <stdlib.h>
#include <string.h>

#include "../lib/dvx_test.h"
#include "../lib/p2p_world.h"

#include <dvx/mlx5/prm.h>

#define T_OUT (20 * W_SEC)
#define N_FADD 96u		/* fetch-adds in flight at once (< sq_depth) */
#define ROUND 7u

static uint32_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(*s >> 33);
}

/* this rank's send area to @peer holds (me -> peer, ROUND); the peer said so too */
static void fill_and_meet(struct wrank *r, int peer, uint64_t want)
{
	uint8_t *p = r->data + wsend_off(r, peer);
	uint64_t i, len = r->w->cfg.slot_bytes;

	for (i = 0; i < len; i++)
		p[i] = wpat(r->rank, peer, ROUND, i);
	W_OK(r, dvx_p2p_signal(&r->t, peer, 0,
			       &(struct dvx_p2p_notify){ &r->sig_r[peer],
							 wsig_off(r, r->rank, 2), 1, NULL, 0, 0 },
			       T_OUT, NULL));
	W_OK(r, dvx_p2p_wait_signal(&r->t, &r->sig_l, wsig_off(r, peer, 2), DVX_CMP_GE, want,
				    T_OUT, NULL));
}

/* rma's phase gets: random ranges, on both lanes, into this rank's receive area */
static void rma_gets(struct wrank *r)
{
	int peer = r->rank ^ 1, me = r->rank;
	uint64_t slot = r->w->cfg.slot_bytes, seed = 0x1234567ull + (uint64_t)me;
	struct dvx_p2p_ticket tk;
	uint32_t k;

	for (k = 0; k < 64; k++) {
		uint64_t off = rnd(&seed) % slot, len = 1 + rnd(&seed) % (slot - off), i;
		uint8_t *d = wrecv(r, peer);

		memset(d, 0xA5, slot);
		W_OK(r, dvx_p2p_get(&r->t, peer, k & 1,
				    &(struct dvx_p2p_rxfer){ &r->data_r[peer],
							     wsend_off(r, me) + off, &r->data_l,
							     wrecv_off(r, peer) + off, len },
				    T_OUT, &tk));
		W_OK(r, dvx_p2p_wait_local(&r->t, &tk, T_OUT, NULL));
		for (i = 0; i < slot; i++) {
			uint8_t want = i >= off && i < off + len ? wpat(peer, me, ROUND, i) : 0xA5;

			W_CHECK(r, d[i] == want, "get %u [%llu, +%llu): byte %llu is %#x, not %#x",
				k, (unsigned long long)off, (unsigned long long)len,
				(unsigned long long)i, d[i], want);
		}
	}
}

/* rma's phase fetch-adds, in flight together: the old values are 0 ... N_FADD - 1
 * exactly */
static void rma_fadds(struct wrank *r)
{
	int peer = r->rank ^ 1, me = r->rank;
	uint64_t *res = r->ctr, v;	/* result words (local write) */
	uint8_t seen[N_FADD];
	uint32_t k;

	for (k = 0; k < N_FADD; k++) {
		res[k] = ~0ull;
		W_OK(r, dvx_p2p_fetch_add(&r->t, peer, k & 1,
					  &(struct dvx_p2p_amo){ &r->sig_r[peer],
								 wsig_off(r, me, 3),
								 DVX_P2P_AMO_FADD, 1, 0, &r->ctr_l,
								 8ull * k },
					  T_OUT, NULL));
	}
	W_OK(r, dvx_p2p_quiet(&r->t, T_OUT, NULL));
	memset(seen, 0, sizeof(seen));
	for (k = 0; k < N_FADD; k++) {
		v = __atomic_load_n(&res[k], __ATOMIC_ACQUIRE);
		W_CHECK(r, v < N_FADD && !seen[v], "fetch-add %u: old value %llu", k,
			(unsigned long long)v);
		seen[v] = 1;
	}
}

/* rma's phase words: compare-swap, a hit then a miss that changes nothing; put_value,
 * then a non-fetching add on the same lane */
static void rma_words(struct wrank *r)
{
	int peer = r->rank ^ 1, me = r->rank;
	uint64_t *res = r->ctr;
	struct dvx_p2p_ticket tk;

	W_OK(r, dvx_p2p_compare_swap(&r->t, peer, 0,
				     &(struct dvx_p2p_amo){ &r->sig_r[peer], wsig_off(r, me, 3),
							    DVX_P2P_AMO_CSWAP, 1000, N_FADD,
							    &r->ctr_l, 0 },
				     T_OUT, &tk));
	W_OK(r, dvx_p2p_wait_local(&r->t, &tk, T_OUT, NULL));
	W_CHECK(r, res[0] == N_FADD, "compare-swap hit: old %llu", (unsigned long long)res[0]);
	W_OK(r, dvx_p2p_compare_swap(&r->t, peer, 1,
				     &(struct dvx_p2p_amo){ &r->sig_r[peer], wsig_off(r, me, 3),
							    DVX_P2P_AMO_CSWAP, 5, 0, &r->ctr_l,
							    8 },
				     T_OUT, &tk));
	W_OK(r, dvx_p2p_wait_local(&r->t, &tk, T_OUT, NULL));
	W_CHECK(r, res[1] == 1000, "compare-swap miss: old %llu", (unsigned long long)res[1]);
	W_OK(r, dvx_p2p_put_value(&r->t, peer, 1,
				  &(struct dvx_p2p_amo){ &r->sig_r[peer], wsig_off(r, me, 4),
							 DVX_P2P_AMO_SET, 0xdeadbeefcafe0000ull, 0,
							 NULL, 0 },
				  T_OUT, NULL));
	W_OK(r, dvx_p2p_add(&r->t, peer, 1,
			    &(struct dvx_p2p_amo){ &r->sig_r[peer], wsig_off(r, me, 4),
						   DVX_P2P_AMO_ADD, 0xf00d, 0, NULL, 0 },
			    T_OUT, NULL));
	W_OK(r, dvx_p2p_quiet(&r->t, T_OUT, NULL));
}

/* rma's phase refusals: bad descriptions, -EINVAL, nothing posted */
static void rma_refusals(struct wrank *r)
{
	int peer = r->rank ^ 1, me = r->rank;

	W_CHECK(r, dvx_p2p_get(&r->t, peer, 0,
			       &(struct dvx_p2p_rxfer){ &r->data_r[peer], 0, &r->data_l, 0, 0 },
			       T_OUT, NULL) == -EINVAL, "a get of 0 bytes");
	W_CHECK(r, dvx_p2p_get(&r->t, peer, 0,
			       &(struct dvx_p2p_rxfer){ &r->data_r[peer], 1, &r->data_l, 0,
							r->data_r[peer].len },
			       T_OUT, NULL) == -EINVAL, "a get past the peer's buffer");
	W_CHECK(r, dvx_p2p_amo(&r->t, peer, 0,
			       &(struct dvx_p2p_amo){ &r->sig_r[peer], 4, DVX_P2P_AMO_ADD, 1, 0,
						      NULL, 0 },
			       T_OUT, NULL) == -EINVAL, "a misaligned word");
	W_CHECK(r, dvx_p2p_amo(&r->t, peer, 0,
			       &(struct dvx_p2p_amo){ &r->sig_r[peer], 0, DVX_P2P_AMO_FADD, 1, 0,
						      NULL, 0 },
			       T_OUT, NULL) == -EINVAL, "a fetch-add without a result word");
	W_CHECK(r, dvx_p2p_amo(&r->t, peer, 0,
			       &(struct dvx_p2p_amo){ &r->sig_r[peer], 0, 9, 1, 0, NULL, 0 },
			       T_OUT, NULL) == -EINVAL, "an unknown op");
	W_CHECK(r, dvx_p2p_fetch_add(&r->t, peer, 0,
				     &(struct dvx_p2p_amo){ &r->sig_r[peer], 0, DVX_P2P_AMO_ADD,
							    1, 0, NULL, 0 },
				     T_OUT, NULL) == -EINVAL, "fetch_add of an add");
	W_CHECK(r, dvx_p2p_get(&r->t, me, 0,
			       &(struct dvx_p2p_rxfer){ &r->data_r[peer], 0, &r->data_l, 0, 8 },
			       T_OUT, NULL) == -EINVAL, "a get from itself");
}

/* rma's phase check: both sides done, each checks what the other did to its words */
static void rma_check(struct wrank *r)
{
	int peer = r->rank ^ 1;
	uint64_t v;

	fill_and_meet(r, peer, 2);
	v = dvx_p2p_read_signal(&r->sig_l, wsig_off(r, peer, 3));
	W_CHECK(r, v == 1000, "fetch-adds and compare-swaps left %llu", (unsigned long long)v);
	v = dvx_p2p_read_signal(&r->sig_l, wsig_off(r, peer, 4));
	W_CHECK(r, v == 0xdeadbeefcafef00dull, "put_value + add left %#llx", (unsigned long long)v);
}

/* rma's phase no read: a get from memory registered without remote read (the signals):
 * as exchanged (its rights known) -EPERM before posting, the cause in the diagnostic,
 * the lane healthy; described by hand (rights unknown) -EPERM on its lane (channel 1,
 * failed after it); the destination unchanged both times. Rank 0 only, as the failed
 * lane flushes what the other end posts on it */
static void rma_no_read(struct wrank *r)
{
	int peer = r->rank ^ 1;
	struct dvx_p2p_rbuf hand = r->sig_r[peer];
	struct dvx_p2p_lane_health h;
	struct dvx_p2p_ticket tk;
	uint32_t k;
	int e;

	r->no_final_flush = 1;
	if (r->rank)
		return;
	memset(wrecv(r, peer), 0x5A, 64);
	W_CHECK(r, r->sig_r[peer].access == (DVX_P2P_ACC_KNOWN | DVX_P2P_ACC_WRITE | DVX_P2P_ACC_ATOMIC),
		"the signals' exchanged rights: %#x", r->sig_r[peer].access);
	W_CHECK(r, r->data_r[peer].access == (DVX_P2P_ACC_KNOWN | DVX_P2P_ACC_WRITE | DVX_P2P_ACC_READ),
		"the data's exchanged rights: %#x", r->data_r[peer].access);
	e = dvx_p2p_get(&r->t, peer, 1,
			&(struct dvx_p2p_rxfer){ &r->sig_r[peer], 0, &r->data_l, wrecv_off(r, peer), 64 },
			T_OUT, &tk);
	W_CHECK(r, e == -EPERM, "a get from a buffer known to be without remote read: %d", e);
	W_CHECK(r, strstr(r->t.nics[0]->diag.msg, "without remote read"), "diag: %s",
		r->t.nics[0]->diag.msg);
	W_OK(r, dvx_p2p_lane_health(&r->t, peer, 1, &h));
	W_CHECK(r, !h.err && !h.in_flight, "the refused get reached the lane: err %d, %llu in flight",
		h.err, (unsigned long long)h.in_flight);
	for (k = 0; k < 64; k++)
		W_CHECK(r, wrecv(r, peer)[k] == 0x5A, "byte %u written by a refused get", k);
	hand.access = 0;	/* rights unknown: the responder decides */
	W_OK(r, dvx_p2p_get(&r->t, peer, 1,
			    &(struct dvx_p2p_rxfer){ &hand, 0, &r->data_l, wrecv_off(r, peer), 64 },
			    T_OUT, &tk));
	e = dvx_p2p_wait_local(&r->t, &tk, T_OUT, NULL);
	W_CHECK(r, e == -EPERM, "a get without remote read: %d", e);
	for (k = 0; k < 64; k++)
		W_CHECK(r, wrecv(r, peer)[k] == 0x5A, "byte %u written by a refused get", k);
}

/* get, the one-word operations and their refusals, in phases */
static void body_rma(struct wrank *r)
{
	static void (*const phase[])(struct wrank *) = {
		rma_gets, rma_fadds, rma_words, rma_refusals, rma_check, rma_no_read,
	};
	size_t k;

	fill_and_meet(r, r->rank ^ 1, 1);
	for (k = 0; k < sizeof(phase) / sizeof(phase[0]) && !r->fail_line; k++)
		phase[k](r);
}

static void test_get_amo_quiet(void **s)
{
	struct world_cfg c;

	(void)s;
	world_cfg_default(&c);
	if (world_mode(&c) != WORLD_THREADS)
		skip();
	c.nranks = 2;
	c.qps_per_nic = 2;
	c.slot_bytes = 4096;
	c.sq_depth = 256;
	c.nslots = 64;		/* 2 x 64 result words */
	c.read = 1;
	assert_int_equal(world_run(&c, body_rma, NULL), 0);
}

/* lanes connected without remote read refuse every get, readable memory or not: the
 * responder answers an invalid request (REMOTE_INVAL_REQ_ERR, -EREMOTEIO) */
static void body_noread(struct wrank *r)
{
	int peer = r->rank ^ 1;
	struct dvx_p2p_ticket tk;
	uint32_t k;
	int err;

	r->no_final_flush = 1;
	if (r->rank)
		return;		/* one get at a time: the other's would fail on a flushed QP */
	memset(wrecv(r, peer), 0x5A, 64);
	W_OK(r, dvx_p2p_get(&r->t, peer, 0,
			    &(struct dvx_p2p_rxfer){ &r->data_r[peer], wsend_off(r, r->rank),
						     &r->data_l, wrecv_off(r, peer), 64 },
			    T_OUT, &tk));
	err = dvx_p2p_wait_local(&r->t, &tk, T_OUT, NULL);
	W_CHECK(r, err == -EREMOTEIO, "a get over a lane without remote read: %d", err);
	for (k = 0; k < 64; k++)
		W_CHECK(r, wrecv(r, peer)[k] == 0x5A, "byte %u written by a refused get", k);
	r->no_final_flush = 1;
}

static void test_get_least_privilege(void **s)
{
	struct world_cfg c;

	(void)s;
	world_cfg_default(&c);
	if (world_mode(&c) != WORLD_THREADS)
		skip();
	c.nranks = 2;
	c.read = 2;
	assert_int_equal(world_run(&c, body_noread, NULL), 0);
}

/* ---- the WQEs the host and device forms build (dvx/p2p/ops.h), byte by byte ---- */

static uint8_t ring_a[8 * 64] __attribute__((aligned(64)));
static uint8_t ring_b[8 * 64] __attribute__((aligned(64)));

static void check_ctrl(const uint8_t *w, uint32_t idx, uint8_t opcode, uint8_t ds, uint8_t fm_ce_se)
{
	assert_int_equal(dvx_get_be32(w), (idx & 0xffffu) << 8 | opcode);
	assert_int_equal(dvx_get_be32(w + 4), 0x123u << 8 | ds);
	assert_int_equal(w[11], fm_ce_se);
}

static void test_op_bytes(void **s)
{
	struct dvx_mlx5_wq a, b;
	struct dvx_p2p_lbuf l = { NULL, 0x10000, 4096, { 0x11 }, { 0x22 }, 0, 0 };
	struct dvx_p2p_rbuf rb = { 0x7000000000ull, 4096, { 0x33 }, 0, 0 };
	struct dvx_p2p_op op;
	const uint8_t *w;

	(void)s;
	assert_int_equal(dvx_mlx5_wq_init(&a, ring_a, 8, 0x123, 64), 0);
	assert_int_equal(dvx_mlx5_wq_init(&b, ring_b, 8, 0x123, 64), 0);

	/* get: READ, ds 3: ctrl, raddr (peer), data (local destination) */
	memset(&op, 0, sizeof(op));
	assert_int_equal(dvx_p2p_op_make_get(0, &(struct dvx_p2p_rxfer){ &rb, 64, &l, 128, 1000 },
					     &op), 0);
	assert_int_equal(dvx_p2p_op_nmain(&op), 1);
	assert_int_equal(dvx_p2p_op_build_main(&a, 9, &op, 1), 0);
	w = ring_a + 64;
	check_ctrl(w, 1, DVX_MLX5_OPCODE_RDMA_READ, 3, DVX_P2P_CE);
	assert_true(dvx_get_be64(w + 16) == 0x7000000040ull);
	assert_int_equal(dvx_get_be32(w + 24), 0x33);
	assert_int_equal(dvx_get_be32(w + 32), 1000);
	assert_int_equal(dvx_get_be32(w + 36), 0x11);
	assert_true(dvx_get_be64(w + 40) == 0x10080ull);
	dvx_mlx5_wqe_rdma_read(&b, 1, DVX_P2P_CE, 0x7000000040ull, 0x33, 0x10080, 0x11, 1000);
	assert_memory_equal(ring_a + 64, ring_b + 64, 64);

	/* fetch_add: ATOMIC_FA, ds 4: ctrl, raddr, atomic (addend), data (result word) */
	memset(&op, 0, sizeof(op));
	assert_int_equal(dvx_p2p_op_make_amo(0, &(struct dvx_p2p_amo){ &rb, 8, DVX_P2P_AMO_FADD,
								      5, 0, &l, 16 }, 9, &op), 0);
	assert_int_equal(dvx_p2p_op_build_main(&a, 9, &op, 2), 0);
	w = ring_a + 128;
	check_ctrl(w, 2, DVX_MLX5_OPCODE_ATOMIC_FA, 4, DVX_P2P_CE);
	assert_true(dvx_get_be64(w + 16) == 0x7000000008ull);
	assert_true(dvx_get_be64(w + 32) == 5);
	assert_int_equal(dvx_get_be32(w + 48), 8);
	assert_int_equal(dvx_get_be32(w + 52), 0x11);
	assert_true(dvx_get_be64(w + 56) == 0x10010ull);
	dvx_mlx5_wqe_atomic_fa(&b, 2, DVX_P2P_CE, 0x7000000008ull, 0x33, 5, 0x10010, 0x11);
	assert_memory_equal(ring_a + 128, ring_b + 128, 64);

	/* add: the old value into the sink (address 0, the sink's lkey) */
	memset(&op, 0, sizeof(op));
	assert_int_equal(dvx_p2p_op_make_amo(0, &(struct dvx_p2p_amo){ &rb, 8, DVX_P2P_AMO_ADD,
								      5, 0, NULL, 0 }, 9, &op), 0);
	assert_int_equal(dvx_p2p_op_build_main(&a, 9, &op, 3), 0);
	w = ring_a + 192;
	assert_int_equal(dvx_get_be32(w + 52), 9);
	assert_true(dvx_get_be64(w + 56) == 0);

	/* compare_swap: ATOMIC_CS, swap then compare in the atomic segment */
	memset(&op, 0, sizeof(op));
	assert_int_equal(dvx_p2p_op_make_amo(0, &(struct dvx_p2p_amo){ &rb, 8, DVX_P2P_AMO_CSWAP,
								      77, 66, &l, 24 }, 9, &op), 0);
	assert_int_equal(dvx_p2p_op_build_main(&a, 9, &op, 4), 0);
	w = ring_a + 256;
	check_ctrl(w, 4, DVX_MLX5_OPCODE_ATOMIC_CS, 4, DVX_P2P_CE);
	assert_true(dvx_get_be64(w + 32) == 77);
	assert_true(dvx_get_be64(w + 40) == 66);
	dvx_mlx5_wqe_atomic_cs(&b, 4, DVX_P2P_CE, &(struct dvx_mlx5_raddr){ 0x7000000008ull, 0x33 },
			       66, 77, 0x10018, 0x11);
	assert_memory_equal(ring_a + 256, ring_b + 256, 64);

	/* put_value: an inline WRITE of the 8 bytes as stored, ds 3 */
	memset(&op, 0, sizeof(op));
	assert_int_equal(dvx_p2p_op_make_amo(0, &(struct dvx_p2p_amo){ &rb, 8, DVX_P2P_AMO_SET,
								      0x0102030405060708ull, 0,
								      NULL, 0 }, 9, &op), 0);
	assert_int_equal(dvx_p2p_op_build_main(&a, 9, &op, 5), 0);
	w = ring_a + 320;
	check_ctrl(w, 5, DVX_MLX5_OPCODE_RDMA_WRITE, 3, DVX_P2P_CE);
	assert_int_equal(dvx_get_be32(w + 32), DVX_MLX5_INLINE_SEG | 8u);
	{
		uint64_t v = 0x0102030405060708ull;

		assert_memory_equal(w + 36, &v, 8);
	}

	/* the device reset: a fenced inline WRITE of zero */
	memset(&op, 0, sizeof(op));
	assert_int_equal(dvx_p2p_op_make_group(0, 0, &(struct dvx_p2p_notify){ &rb, 16, 0, NULL, 0,
							DVX_P2P_RESET | DVX_P2P_FENCE }, &op), 0);
	assert_int_equal(dvx_p2p_op_build_main(&a, 9, &op, 6), 0);
	w = ring_a + 384;
	check_ctrl(w, 6, DVX_MLX5_OPCODE_RDMA_WRITE, 3, DVX_P2P_CE | DVX_P2P_WQE_FENCE);
	assert_true(dvx_get_be64(w + 36) == 0);

	/* refusals of the resolvers */
	memset(&op, 0, sizeof(op));
	assert_int_equal(dvx_p2p_op_make_amo(0, &(struct dvx_p2p_amo){ &rb, 4096, DVX_P2P_AMO_ADD,
								      1, 0, NULL, 0 }, 9, &op), -EINVAL);
	assert_int_equal(dvx_p2p_op_make_amo(0, &(struct dvx_p2p_amo){ &rb, 0, DVX_P2P_AMO_SET,
								      1, 0, &l, 0 }, 9, &op), -EINVAL);
	assert_int_equal(dvx_p2p_op_make_amo(1, &(struct dvx_p2p_amo){ &rb, 0, DVX_P2P_AMO_ADD,
								      1, 0, NULL, 0 }, 9, &op), -EINVAL);
	assert_int_equal(dvx_p2p_op_make_get(0, &(struct dvx_p2p_rxfer){ &rb, 4000, &l, 0, 97 },
					     &op), -EINVAL);
	assert_int_equal(dvx_p2p_op_make_get(0, &(struct dvx_p2p_rxfer){ &rb, 0, &l, 4000, 97 },
					     &op), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_op_bytes),
		cmocka_unit_test(test_get_amo_quiet),
		cmocka_unit_test(test_get_least_privilege),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
