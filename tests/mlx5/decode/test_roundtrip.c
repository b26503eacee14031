// SPDX-License-Identifier: MIT
/*
 * Builders and decoder check each other: every builder of dvx/mlx5/wqe.h writes a WQE,
 * the decoder (which reads the PRM offsets itself) must find exactly the fields that
 * were asked for, and dvx_mlx5_wqe_encode() of the decoded description must write
 * byte-identical bytes into a second ring - at ring sizes of 1 to 64 WQEBBs and at
 * indices where the WQE runs past the ring's end and where the 16-bit index wraps.
 */
#include "../../lib/dvx_test.h"

#include <errno.h>

#include <dvx/mlx5/decode.h>

#define MAX_NWQEBB 64u
#define QPN 0xabcdefu
#define POISON 0xa5

static uint8_t ring_a[MAX_NWQEBB * 64] DVX_ALIGNED(64);
static uint8_t ring_b[MAX_NWQEBB * 64] DVX_ALIGNED(64);
static struct dvx_mlx5_wq wq_a, wq_b;
static uint32_t nwqebb;
static struct dvx_mlx5_wqe_desc d, d2;
static uint64_t seed = 0x0123456789abcdefull;
static unsigned long nroundtrips;

static const uint32_t ring_sizes[] = { 1, 2, 4, 8, 64 };

/* ctrl byte 11 combinations: every fence and completion mode, with and without SE */
static const uint8_t fmces[] = {
	0x00, 0x08, 0x0a, 0x04, 0x0c, 0x0e, 0x02, 0x20 | 0x08, 0x40, 0x40 | 0x0a,
	0x60 | 0x0c, 0x80 | 0x08, 0x80 | 0x0e,
};

static uint64_t rnd(void)
{
	seed = seed * 6364136223846793005ull + 1442695040888963407ull;
	return seed ^ (seed >> 29);
}

static void setup_ring(uint32_t n)
{
	nwqebb = n;
	memset(ring_a, POISON, sizeof(ring_a));
	memset(ring_b, POISON, sizeof(ring_b));
	assert_int_equal(dvx_mlx5_wq_init(&wq_a, ring_a, n, QPN, DVX_MLX5_MAX_INLINE), 0);
	assert_int_equal(dvx_mlx5_wq_init(&wq_b, ring_b, n, QPN, DVX_MLX5_MAX_INLINE), 0);
}

/*
 * WQE start indices for a ring of nwqebb: the start, the last WQEBBs (a multi-WQEBB
 * WQE wraps to WQEBB 0), and producer counters past the 16-bit wqe_index.
 */
static uint32_t indices(uint32_t *out)
{
	uint32_t n = 0;

	out[n++] = 0;
	out[n++] = 1;
	out[n++] = nwqebb - 1;
	out[n++] = nwqebb > 1 ? nwqebb - 2 : 3;
	out[n++] = 2 * nwqebb - 1;
	out[n++] = 0xfffe;
	out[n++] = 0xffff;
	out[n++] = 0x10000 + nwqebb - 1;
	out[n++] = 0x12345;
	return n;
}

/*
 * The builder just wrote a WQE of @n WQEBBs at @idx of ring_a: decode it, check the
 * ctrl fields, re-encode into ring_b, and require both rings to be identical.
 */
static void roundtrip(uint32_t idx, int n, uint8_t opcode, uint8_t fm_ce_se, uint32_t ds)
{
	assert_true(n >= 1);
	assert_int_equal(dvx_mlx5_wqe_decode(ring_a, nwqebb * 64, idx, &d), n);
	assert_int_equal(d.error, 0);
	assert_int_equal(d.opcode, opcode);
	assert_int_equal(d.idx, idx & 0xffff);
	assert_int_equal(d.qpn, QPN);
	assert_int_equal(d.ds, ds);
	assert_int_equal(d.nwqebb, n);
	assert_int_equal(d.fm_ce_se, fm_ce_se);
	assert_int_equal(d.signature, 0);

	assert_int_equal(dvx_mlx5_wqe_encode(&wq_b, idx, &d), n);
	assert_bytes_equal(ring_b, ring_a, nwqebb * 64);
	assert_int_equal(dvx_mlx5_wqe_decode(ring_b, nwqebb * 64, idx, &d2), n);
	assert_memory_equal(&d, &d2, sizeof(d));
	nroundtrips++;
}

/* a ring of nwqebb can hold a WQE of @k WQEBBs without overwriting itself */
static int fits(uint32_t k)
{
	return k <= nwqebb;
}

/*
 * Run @one(idx, v) for v in [0, @nvariants) at every ring size that can hold a WQE of
 * @min_wqebb WQEBBs and at every index of indices().
 */
typedef void (*case_fn)(uint32_t idx, uint32_t v);

static void for_rings(case_fn one, uint32_t nvariants, uint32_t min_wqebb)
{
	uint32_t idx[16], ni, r, i, v;

	for (r = 0; r < DVX_ARRAY_SIZE(ring_sizes); r++) {
		setup_ring(ring_sizes[r]);
		if (!fits(min_wqebb))
			continue;
		ni = indices(idx);
		for (i = 0; i < ni; i++)
			for (v = 0; v < nvariants; v++)
				one(idx[i], v);
	}
}

/* every fence mode x completion mode x solicited */
static void nop_case(uint32_t idx, uint32_t v)
{
	uint8_t f = (uint8_t)(DVX_MLX5_WQE_CTRL_FM(v / 8) | DVX_MLX5_WQE_CTRL_CE((v / 2) % 4) |
			      ((v & 1) ? DVX_MLX5_WQE_CTRL_SOLICITED : 0));

	roundtrip(idx, dvx_mlx5_wqe_nop(&wq_a, idx, f), DVX_MLX5_OPCODE_NOP, f, 1);
	assert_int_equal(d.kind, DVX_MLX5_KIND_NOP);
}

static void test_nop(void **state)
{
	(void)state;
	for_rings(nop_case, 5 * 4 * 2, 1);
}

static void check_rdma(uint64_t raddr, uint32_t rkey, uint32_t imm)
{
	assert_int_equal(d.kind, DVX_MLX5_KIND_RDMA);
	assert_true(d.raddr == raddr);
	assert_int_equal(d.rkey, rkey);
	assert_int_equal(d.imm, imm);
	assert_int_equal(d.is_inline, 0);
}

static void check_sge(uint32_t i, uint64_t addr, uint32_t lkey, uint32_t len)
{
	assert_true(d.sge[i].addr == addr);
	assert_int_equal(d.sge[i].lkey, lkey);
	assert_int_equal(d.sge[i].length, len);
}

static const uint8_t rdma_ops[] = { DVX_MLX5_OPCODE_RDMA_WRITE, DVX_MLX5_OPCODE_RDMA_WRITE_IMM,
				    DVX_MLX5_OPCODE_RDMA_READ };
static const uint32_t rdma_lens[] = { 0, 1, 8, 4096, 0x7fffffff };

/* v: opcode x length x fm_ce_se */
static void rdma_case(uint32_t idx, uint32_t v)
{
	uint8_t op = rdma_ops[v % 3], f = fmces[(v / 3) % DVX_ARRAY_SIZE(fmces)];
	uint32_t len = rdma_lens[(v / 3 / DVX_ARRAY_SIZE(fmces)) % DVX_ARRAY_SIZE(rdma_lens)];
	uint64_t raddr = rnd(), laddr = rnd();
	uint32_t rkey = (uint32_t)rnd(), lkey = (uint32_t)rnd(), imm = (uint32_t)rnd();
	int n = dvx_mlx5_wqe_rdma(&wq_a, idx, op, f, imm, &(struct dvx_mlx5_raddr){ raddr, rkey },
				  &(struct dvx_mlx5_sge){ laddr, len, lkey });

	roundtrip(idx, n, op, f, len ? 3 : 2);
	check_rdma(raddr, rkey, op == DVX_MLX5_OPCODE_RDMA_WRITE_IMM ? imm : 0);
	assert_int_equal(d.nsge, len ? 1 : 0);
	if (len)
		check_sge(0, laddr, lkey, len);
}

/* the named wrappers write what the generic builder writes */
static void rdma_wrapper_case(uint32_t idx, uint32_t v)
{
	int n;

	(void)v;
	n = dvx_mlx5_wqe_rdma_write(&wq_a, idx, 0x08, 0x1000, 0x5678, 0x40, 0x1234, 4096);
	roundtrip(idx, n, DVX_MLX5_OPCODE_RDMA_WRITE, 0x08, 3);
	check_rdma(0x1000, 0x5678, 0);
	check_sge(0, 0x40, 0x1234, 4096);
	n = dvx_mlx5_wqe_rdma_write_imm(&wq_a, idx, 0x0a, 0x77,
					&(struct dvx_mlx5_raddr){ 0x2000, 1 },
					&(struct dvx_mlx5_sge){ 2, 4, 3 });
	roundtrip(idx, n, DVX_MLX5_OPCODE_RDMA_WRITE_IMM, 0x0a, 3);
	check_rdma(0x2000, 1, 0x77);
	check_sge(0, 2, 3, 4);
	n = dvx_mlx5_wqe_rdma_read(&wq_a, idx, 0x48, 0x3000, 5, 6, 7, 8);
	roundtrip(idx, n, DVX_MLX5_OPCODE_RDMA_READ, 0x48, 3);
	check_rdma(0x3000, 5, 0);
	check_sge(0, 6, 7, 8);
}

static void test_rdma_one_buffer(void **state)
{
	(void)state;
	for_rings(rdma_case, 3 * DVX_ARRAY_SIZE(fmces) * DVX_ARRAY_SIZE(rdma_lens), 1);
	for_rings(rdma_wrapper_case, 1, 1);
}

/* an SGL of @nsge entries, every @zero_every-th of length 0 (0: none) */
static uint32_t make_sgl(struct dvx_mlx5_sge *sgl, uint32_t nsge, uint32_t zero_every)
{
	uint32_t i, nonzero = 0;

	for (i = 0; i < nsge; i++) {
		sgl[i].addr = rnd();
		sgl[i].lkey = (uint32_t)rnd();
		sgl[i].length = (uint32_t)(rnd() & DVX_MLX5_MAX_BYTE_COUNT) | 1u;
		if (zero_every && i % zero_every == 1)
			sgl[i].length = 0;
		nonzero += sgl[i].length != 0;
	}
	return nonzero;
}

/* the decoded segments are the non-empty entries of @sgl, in order */
static void check_sgl(const struct dvx_mlx5_sge *sgl, uint32_t nsge, uint32_t nonzero)
{
	uint32_t i, j = 0;

	assert_int_equal(d.nsge, nonzero);
	for (i = 0; i < nsge; i++)
		if (sgl[i].length)
			check_sge(j++, sgl[i].addr, sgl[i].lkey, sgl[i].length);
}

/* v: entries 1..65 (past the limit too), with and without zero-length ones, opcode */
static void rdma_sgl_case(uint32_t idx, uint32_t v)
{
	struct dvx_mlx5_sge sgl[DVX_MLX5_MAX_SGE + 8];
	uint32_t nsge = 1 + v / 6, nz = make_sgl(sgl, nsge, (v / 3) % 2 ? 3 : 0);
	uint32_t rkey = (uint32_t)rnd(), imm = (uint32_t)rnd();
	uint64_t raddr = rnd();
	uint8_t op = rdma_ops[v % 3], f = fmces[(nsge + idx) % DVX_ARRAY_SIZE(fmces)];
	int n;

	if (nz > DVX_MLX5_MAX_SGE || !fits(dvx_mlx5_ds_to_wqebb(2 + nz)))
		return;
	n = dvx_mlx5_wqe_rdma_sgl(&wq_a, idx, op, f, imm, &(struct dvx_mlx5_raddr){ raddr, rkey },
				  sgl, nsge);
	assert_int_equal(n, (int)dvx_mlx5_ds_to_wqebb(2 + nz));
	roundtrip(idx, n, op, f, 2 + nz);
	check_rdma(raddr, rkey, op == DVX_MLX5_OPCODE_RDMA_WRITE_IMM ? imm : 0);
	check_sgl(sgl, nsge, nz);
}

static void test_rdma_sgl(void **state)
{
	struct dvx_mlx5_sge sgl[DVX_MLX5_MAX_SGE + 1];

	(void)state;
	for_rings(rdma_sgl_case, 6 * (DVX_MLX5_MAX_SGE + 4), 1);
	/* 62 segments do not fit after ctrl and raddr */
	setup_ring(64);
	make_sgl(sgl, DVX_MLX5_MAX_SGE + 1, 0);
	assert_int_equal(dvx_mlx5_wqe_rdma_sgl(&wq_a, 0, DVX_MLX5_OPCODE_RDMA_WRITE, 0, 0,
					       &(struct dvx_mlx5_raddr){ 0, 0 }, sgl,
					       DVX_MLX5_MAX_SGE + 1),
			 -E2BIG);
}

static const uint32_t send_lens[] = { 0, 1, 64, 0x7fffffff };

/* v: length x fm_ce_se; SEND then SEND_IMM */
static void send_case(uint32_t idx, uint32_t v)
{
	uint32_t len = send_lens[v % DVX_ARRAY_SIZE(send_lens)], ds = len ? 2 : 1;
	uint8_t f = fmces[(v / DVX_ARRAY_SIZE(send_lens)) % DVX_ARRAY_SIZE(fmces)];
	uint32_t lkey = (uint32_t)rnd(), imm = (uint32_t)rnd();
	uint64_t laddr = rnd();
	int n;

	n = dvx_mlx5_wqe_send(&wq_a, idx, f, laddr, lkey, len);
	roundtrip(idx, n, DVX_MLX5_OPCODE_SEND, f, ds);
	assert_int_equal(d.kind, DVX_MLX5_KIND_SEND);
	assert_int_equal(d.imm, 0);
	assert_int_equal(d.nsge, len ? 1 : 0);
	if (len)
		check_sge(0, laddr, lkey, len);
	n = dvx_mlx5_wqe_send_imm(&wq_a, idx, f, imm, laddr, lkey, len);
	roundtrip(idx, n, DVX_MLX5_OPCODE_SEND_IMM, f, ds);
	assert_int_equal(d.imm, imm);
}

/* v: entries 1..64 (ctrl + 62 data segments is ds 63), with and without empty ones */
static void send_sgl_case(uint32_t idx, uint32_t v)
{
	struct dvx_mlx5_sge sgl[DVX_MLX5_DECODE_MAX_SGE + 4];
	uint32_t nsge = 1 + v / 2, nz = make_sgl(sgl, nsge, (v & 1) ? 4 : 0);
	uint32_t imm = (uint32_t)rnd();
	uint8_t op = (idx & 1) ? DVX_MLX5_OPCODE_SEND_IMM : DVX_MLX5_OPCODE_SEND;
	int n;

	if (nz > DVX_MLX5_DECODE_MAX_SGE || !fits(dvx_mlx5_ds_to_wqebb(1 + nz)))
		return;
	n = dvx_mlx5_wqe_send_sgl(&wq_a, idx, op, 0x08, imm, sgl, nsge);
	roundtrip(idx, n, op, 0x08, 1 + nz);
	assert_int_equal(d.imm, op == DVX_MLX5_OPCODE_SEND_IMM ? imm : 0);
	check_sgl(sgl, nsge, nz);
}

static void test_send(void **state)
{
	(void)state;
	for_rings(send_case, DVX_ARRAY_SIZE(send_lens) * DVX_ARRAY_SIZE(fmces), 1);
	for_rings(send_sgl_case, 2 * (DVX_MLX5_DECODE_MAX_SGE + 2), 1);
}

static void fill_payload(uint8_t *p, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 7 + len);
}

static const uint8_t inline_ops[] = { DVX_MLX5_OPCODE_RDMA_WRITE,
				      DVX_MLX5_OPCODE_RDMA_WRITE_IMM, DVX_MLX5_OPCODE_SEND,
				      DVX_MLX5_OPCODE_SEND_IMM };

/* v: payload length 0..max x opcode */
static void inline_case(uint32_t idx, uint32_t v)
{
	uint8_t payload[DVX_MLX5_MAX_WQE_BYTES], op = inline_ops[v % 4];
	uint32_t len = v / 4, rkey = (uint32_t)rnd(), imm = (uint32_t)rnd();
	int rdma = op <= DVX_MLX5_OPCODE_RDMA_WRITE_IMM;
	int imm_op = op == DVX_MLX5_OPCODE_RDMA_WRITE_IMM || op == DVX_MLX5_OPCODE_SEND_IMM;
	uint32_t ds = (rdma ? 2 : 1) + DVX_DIV_ROUND_UP(4 + len, 16);
	uint8_t f = fmces[(len + idx) % DVX_ARRAY_SIZE(fmces)];
	uint64_t raddr = rnd();
	int n;

	if (!fits(dvx_mlx5_ds_to_wqebb(ds)))
		return;
	fill_payload(payload, len);
	if (rdma)
		n = dvx_mlx5_wqe_rdma_write_inline(&wq_a, idx, op, f, imm,
						   &(struct dvx_mlx5_raddr){ raddr, rkey }, payload,
						   len);
	else
		n = dvx_mlx5_wqe_send_inline(&wq_a, idx, op, f, imm, payload, len);
	roundtrip(idx, n, op, f, ds);
	assert_int_equal(d.is_inline, 1);
	assert_int_equal(d.nsge, 0);
	assert_int_equal(d.inline_len, len);
	assert_memory_equal(d.inline_data, payload, len);
	assert_int_equal(d.imm, imm_op ? imm : 0);
	if (rdma) {
		assert_true(d.raddr == raddr);
		assert_int_equal(d.rkey, rkey);
	}
}

static void test_inline(void **state)
{
	uint8_t payload[32] = { 0 };

	(void)state;
	for_rings(inline_case, 4 * (DVX_MLX5_MAX_INLINE + 1), 1);
	/* above the ring's inline limit the builder refuses and writes nothing */
	setup_ring(8);
	assert_int_equal(dvx_mlx5_wq_init(&wq_a, ring_a, 8, QPN, 16), 0);
	assert_int_equal(dvx_mlx5_wqe_rdma_write_inline(&wq_a, 0, DVX_MLX5_OPCODE_RDMA_WRITE, 0, 0,
							&(struct dvx_mlx5_raddr){ 0, 0 }, payload,
							17),
			 -EMSGSIZE);
	assert_bytes_equal(ring_a, ring_b, sizeof(ring_a));
}

static void check_atomic(uint64_t raddr, uint32_t rkey, uint8_t size, uint64_t laddr,
			 uint32_t lkey)
{
	assert_true(d.raddr == raddr);
	assert_int_equal(d.rkey, rkey);
	assert_int_equal(d.atomic_size, size);
	assert_int_equal(d.nsge, 1);
	check_sge(0, laddr, lkey, size);
	assert_int_equal(d.imm, 0);
}

static const uint64_t operands[] = { 0, 1, ~0ull, 0x8000000000000000ull,
				     0xffffffff00000000ull, 0x0123456789abcdefull };
#define NOPS DVX_ARRAY_SIZE(operands)

/* v: operand a x operand b; CS then FA */
static void atomic_case(uint32_t idx, uint32_t v)
{
	uint64_t a = operands[v % NOPS], b = operands[v / NOPS], raddr = rnd() & ~7ull;
	uint64_t laddr = rnd();
	uint32_t rkey = (uint32_t)rnd(), lkey = (uint32_t)rnd();
	uint8_t f = fmces[(v + idx) % DVX_ARRAY_SIZE(fmces)];
	int n;

	n = dvx_mlx5_wqe_atomic_cs(&wq_a, idx, f, &(struct dvx_mlx5_raddr){ raddr, rkey }, a, b,
				   laddr, lkey);
	roundtrip(idx, n, DVX_MLX5_OPCODE_ATOMIC_CS, f, 4);
	assert_int_equal(d.kind, DVX_MLX5_KIND_ATOMIC);
	check_atomic(raddr, rkey, 8, laddr, lkey);
	assert_true(d.compare == a);
	assert_true(d.swap_add == b);

	n = dvx_mlx5_wqe_atomic_fa(&wq_a, idx, f, raddr, rkey, a, laddr, lkey);
	roundtrip(idx, n, DVX_MLX5_OPCODE_ATOMIC_FA, f, 4);
	check_atomic(raddr, rkey, 8, laddr, lkey);
	assert_true(d.swap_add == a);
	assert_true(d.compare == 0);
}

static void test_atomics(void **state)
{
	(void)state;
	for_rings(atomic_case, NOPS * NOPS, 1);
}

/* v: operand a x operand b; masked FA 4/8 B, masked CS 4 B, and CS 8 B where it fits */
static void masked_case(uint32_t idx, uint32_t v)
{
	uint64_t a = operands[v % NOPS], b = operands[v / NOPS], m1 = rnd(), m2 = rnd();
	uint64_t raddr = rnd(), laddr = rnd();
	uint32_t rkey = (uint32_t)rnd(), lkey = (uint32_t)rnd();
	uint32_t a32 = (uint32_t)a, b32 = (uint32_t)b;
	uint8_t f = fmces[(v + idx) % DVX_ARRAY_SIZE(fmces)];
	int n;

	n = dvx_mlx5_wqe_masked_fa32(&wq_a, idx, f, &(struct dvx_mlx5_raddr){ raddr, rkey }, a32,
				     b32, laddr, lkey);
	roundtrip(idx, n, DVX_MLX5_OPCODE_ATOMIC_MASKED_FA, f, 4);
	assert_int_equal(d.kind, DVX_MLX5_KIND_MASKED_ATOMIC);
	assert_int_equal(d.opmod, DVX_MLX5_OPMOD_EXT_ATOMIC_4B);
	check_atomic(raddr, rkey, 4, laddr, lkey);
	assert_true(d.swap_add == a32);
	assert_true(d.field_boundary == b32);

	n = dvx_mlx5_wqe_masked_fa64(&wq_a, idx, f, &(struct dvx_mlx5_raddr){ raddr, rkey }, a, b,
				     laddr, lkey);
	roundtrip(idx, n, DVX_MLX5_OPCODE_ATOMIC_MASKED_FA, f, 4);
	assert_int_equal(d.opmod, DVX_MLX5_OPMOD_EXT_ATOMIC_8B);
	check_atomic(raddr, rkey, 8, laddr, lkey);
	assert_true(d.swap_add == a);
	assert_true(d.field_boundary == b);

	n = dvx_mlx5_wqe_masked_cs32(&wq_a, idx, f, &(struct dvx_mlx5_raddr){ raddr, rkey },
				     &(struct dvx_mlx5_masked_cs){ a32, (uint32_t)m1, b32,
								   (uint32_t)m2 },
				     laddr, lkey);
	roundtrip(idx, n, DVX_MLX5_OPCODE_ATOMIC_MASKED_CS, f, 4);
	assert_int_equal(d.opmod, DVX_MLX5_OPMOD_EXT_ATOMIC_4B);
	check_atomic(raddr, rkey, 4, laddr, lkey);
	assert_true(d.compare == a32);
	assert_true(d.compare_mask == (uint32_t)m1);
	assert_true(d.swap_add == b32);
	assert_true(d.swap_mask == (uint32_t)m2);

	if (!fits(2))
		return;
	n = dvx_mlx5_wqe_masked_cs64(&wq_a, idx, f, &(struct dvx_mlx5_raddr){ raddr, rkey },
				     &(struct dvx_mlx5_masked_cs){ a, m1, b, m2 }, laddr, lkey);
	assert_int_equal(n, 2);
	roundtrip(idx, n, DVX_MLX5_OPCODE_ATOMIC_MASKED_CS, f, 5);
	assert_int_equal(d.opmod, DVX_MLX5_OPMOD_EXT_ATOMIC_8B);
	check_atomic(raddr, rkey, 8, laddr, lkey);
	assert_true(d.compare == a);
	assert_true(d.compare_mask == m1);
	assert_true(d.swap_add == b);
	assert_true(d.swap_mask == m2);
}

static void test_masked_atomics(void **state)
{
	(void)state;
	for_rings(masked_case, NOPS * NOPS, 1);
}

static const uint32_t wait_vals[] = { 0, 1, 5, 0xffffff, 0xffffffffu };
#define NWAIT DVX_ARRAY_SIZE(wait_vals)

/* v: CQN/slave QPN x index; WAIT, SEND_EN, RECV_EN */
static void wait_case(uint32_t idx, uint32_t v)
{
	uint32_t a = wait_vals[v % NWAIT], b = wait_vals[v / NWAIT];
	uint8_t f = fmces[(v + idx) % DVX_ARRAY_SIZE(fmces)];
	int n;

	n = dvx_mlx5_wqe_wait_cq(&wq_a, idx, f, a, b);
	roundtrip(idx, n, DVX_MLX5_OPCODE_WAIT, f, 2);
	assert_int_equal(d.kind, DVX_MLX5_KIND_WAIT);
	assert_int_equal(d.opmod, DVX_MLX5_OPMOD_WAIT_CQ_PI);
	assert_int_equal(d.wait_qpn_cqn, a);
	assert_int_equal(d.wait_max_index, b);

	n = dvx_mlx5_wqe_send_en(&wq_a, idx, f, a, b);
	roundtrip(idx, n, DVX_MLX5_OPCODE_SEND_EN, f, 2);
	assert_int_equal(d.wait_qpn_cqn, a);
	assert_int_equal(d.wait_max_index, b);

	n = dvx_mlx5_wqe_recv_en(&wq_a, idx, f, a, b);
	roundtrip(idx, n, DVX_MLX5_OPCODE_RECV_EN, f, 2);
	assert_int_equal(d.wait_qpn_cqn, a);
	assert_int_equal(d.wait_max_index, b);
}

static void test_wait_and_enable(void **state)
{
	(void)state;
	for_rings(wait_case, NWAIT * NWAIT, 1);
}

/* one WQE of a random kind at @idx of ring_a; returns its WQEBBs */
static int post_random(uint32_t idx, uint32_t room, uint8_t *opcode)
{
	struct dvx_mlx5_sge sgl[8];
	uint8_t payload[200], f = fmces[rnd() % DVX_ARRAY_SIZE(fmces)];
	uint32_t len;
	int n;

	for (;;) {
		switch (rnd() % 12) {
		case 0:
			*opcode = DVX_MLX5_OPCODE_NOP;
			n = dvx_mlx5_wqe_nop(&wq_a, idx, f);
			break;
		case 1:
			*opcode = DVX_MLX5_OPCODE_RDMA_WRITE;
			n = dvx_mlx5_wqe_rdma_write(&wq_a, idx, f, rnd(), 1, rnd(), 2, 4096);
			break;
		case 2:
			*opcode = DVX_MLX5_OPCODE_RDMA_READ;
			len = 1 + (uint32_t)(rnd() % DVX_ARRAY_SIZE(sgl));
			make_sgl(sgl, len, 0);
			if (dvx_mlx5_ds_to_wqebb(2 + len) > room)
				continue;
			n = dvx_mlx5_wqe_rdma_sgl(&wq_a, idx, *opcode, f, 0,
						  &(struct dvx_mlx5_raddr){ rnd(), 3 }, sgl, len);
			break;
		case 3:
			*opcode = DVX_MLX5_OPCODE_RDMA_WRITE_IMM;
			len = (uint32_t)(rnd() % sizeof(payload));
			fill_payload(payload, len);
			if (dvx_mlx5_ds_to_wqebb(2 + DVX_DIV_ROUND_UP(4 + len, 16)) > room)
				continue;
			n = dvx_mlx5_wqe_rdma_write_inline(&wq_a, idx, *opcode, f, 7,
							   &(struct dvx_mlx5_raddr){ rnd(), 4 },
							   payload, len);
			break;
		case 4:
			*opcode = DVX_MLX5_OPCODE_SEND_IMM;
			len = (uint32_t)(rnd() % sizeof(payload));
			fill_payload(payload, len);
			if (dvx_mlx5_ds_to_wqebb(1 + DVX_DIV_ROUND_UP(4 + len, 16)) > room)
				continue;
			n = dvx_mlx5_wqe_send_inline(&wq_a, idx, *opcode, f, 9, payload, len);
			break;
		case 5:
			*opcode = DVX_MLX5_OPCODE_SEND;
			n = dvx_mlx5_wqe_send(&wq_a, idx, f, rnd(), 5, 64);
			break;
		case 6:
			*opcode = DVX_MLX5_OPCODE_ATOMIC_CS;
			n = dvx_mlx5_wqe_atomic_cs(&wq_a, idx, f, &(struct dvx_mlx5_raddr){ 8, 1 },
						   rnd(), rnd(), 0, 2);
			break;
		case 7:
			*opcode = DVX_MLX5_OPCODE_ATOMIC_FA;
			n = dvx_mlx5_wqe_atomic_fa(&wq_a, idx, f, 8, 1, 1, 0, 2);
			break;
		case 8:
			*opcode = DVX_MLX5_OPCODE_ATOMIC_MASKED_CS;
			if (room < 2)
				continue;
			n = dvx_mlx5_wqe_masked_cs64(&wq_a, idx, f,
						     &(struct dvx_mlx5_raddr){ 8, 1 },
						     &(struct dvx_mlx5_masked_cs){ rnd(), rnd(),
										   rnd(), rnd() },
						     0, 2);
			break;
		case 9:
			*opcode = DVX_MLX5_OPCODE_ATOMIC_MASKED_FA;
			n = dvx_mlx5_wqe_masked_fa32(&wq_a, idx, f,
						     &(struct dvx_mlx5_raddr){ 8, 1 }, 3, 0, 0, 2);
			break;
		case 10:
			*opcode = DVX_MLX5_OPCODE_WAIT;
			n = dvx_mlx5_wqe_wait_cq(&wq_a, idx, f, 0x4a, (uint32_t)rnd());
			break;
		default:
			*opcode = DVX_MLX5_OPCODE_SEND_EN;
			n = dvx_mlx5_wqe_send_en(&wq_a, idx, f, 0x234, (uint32_t)rnd());
			break;
		}
		assert_true(n >= 1 && (uint32_t)n <= room);
		return n;
	}
}

/*
 * A ring filled back to back from a start index past the 16-bit wrap, walked WQE by
 * WQE with the decoder's WQEBB counts, re-encoded into a second ring: same bytes.
 */
static void test_ring_sequence(void **state)
{
	static const uint32_t sizes[] = { 8, 16, 64 };
	uint8_t ops[MAX_NWQEBB];
	uint32_t starts[MAX_NWQEBB];
	uint32_t r, round;

	(void)state;
	for (r = 0; r < DVX_ARRAY_SIZE(sizes); r++) {
		for (round = 0; round < 50; round++) {
			uint32_t start = 0xffff - (uint32_t)(rnd() % (2 * sizes[r]));
			uint32_t pi = start, k, nwqe = 0;

			setup_ring(sizes[r]);
			while (pi - start < nwqebb) {
				int n;

				starts[nwqe] = pi;
				n = post_random(pi, nwqebb - (pi - start), &ops[nwqe]);
				pi += (uint32_t)n;
				nwqe++;
			}
			/* walk: every WQE found where the previous one ended */
			pi = start;
			for (k = 0; k < nwqe; k++) {
				int n = dvx_mlx5_wqe_decode(ring_a, nwqebb * 64, pi, &d);

				assert_int_equal(pi, starts[k]);
				assert_true(n >= 1);
				assert_int_equal(d.opcode, ops[k]);
				assert_int_equal(d.idx, pi & 0xffff);
				assert_int_equal(dvx_mlx5_wqe_encode(&wq_b, pi, &d), n);
				pi += (uint32_t)n;
			}
			assert_int_equal(pi - start, nwqebb);
			assert_bytes_equal(ring_b, ring_a, nwqebb * 64);
		}
	}
}

static int report(void **state)
{
	(void)state;
	print_message("decode-roundtrip: %lu build/decode/encode round trips\n", nroundtrips);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nop),
		cmocka_unit_test(test_rdma_one_buffer),
		cmocka_unit_test(test_rdma_sgl),
		cmocka_unit_test(test_send),
		cmocka_unit_test(test_inline),
		cmocka_unit_test(test_atomics),
		cmocka_unit_test(test_masked_atomics),
		cmocka_unit_test(test_wait_and_enable),
		cmocka_unit_test(test_ring_sequence),
	};

	return cmocka_run_group_tests_name("decode-roundtrip", tests, NULL, report);
}
