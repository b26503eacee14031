// SPDX-License-Identifier: MIT
/*
 * Send WQE builders (dvx/mlx5/wqe.h), byte for byte against docs/prm.md section 2.
 *
 * Every expected layout is either a literal hex dump written from docs/prm.md's tables or
 * assembled by the reference encoders of mlx5_test.h at the byte offsets those tables
 * give. The ring is poisoned before every build, so each check also proves that the
 * builder wrote exactly the WQE's ds * 16 bytes and nothing else, and that a failing
 * builder wrote nothing at all.
 */
#include "mlx5_test.h"

#include <errno.h>
#include <dvx/mlx5/wqe.h>

/* distinctive values: every byte of every field differs, so a swapped or shifted
 * field cannot pass */
#define QPN 0xabcdefu
#define IDX 0x1234u			/* ring position 0x34 in a 64-WQEBB ring */
#define RADDR 0x0102030405060708ull
#define RKEY 0x11223344u
#define LADDR 0x8899aabbccddeeffull
#define LKEY 0x55667788u
#define IMM 0xdeadbeefu
#define LEN 0x00012345u
#define SIG DVX_MLX5_WQE_CTRL_CQ_UPDATE

#define NWQEBB 64u
#define RING_BYTES (NWQEBB * 64u)

#define CTRL_HEX(opmod, op, ds, imm) opmod " 12 34 " op " ab cd ef " ds " 00 00 00 08 " imm
#define RADDR_HEX "01 02 03 04 05 06 07 08 11 22 33 44 00 00 00 00"
#define DATA_HEX(len) len " 55 66 77 88 88 99 aa bb cc dd ee ff"

struct t_ring {
	uint8_t *buf;
	size_t bytes;
	struct dvx_mlx5_wq wq;
};

static void ring_open(struct t_ring *r, uint32_t nwqebb, uint32_t qpn, uint32_t max_inline)
{
	r->bytes = (size_t)nwqebb * 64u;
	r->buf = t_ring_alloc(r->bytes, T_POISON);
	assert_int_equal(dvx_mlx5_wq_init(&r->wq, r->buf, nwqebb, qpn, max_inline), 0);
}

static void ring_poison(struct t_ring *r, uint8_t fill)
{
	memset(r->buf, fill, r->bytes);
}

static void ring_close(struct t_ring *r)
{
	dvx_test_free(r->buf);
	r->buf = NULL;
}

/* the WQE at @idx is exactly the bytes of @hex, and the rest of the ring is poison */
#define assert_wqe_hex(r, idx, hex)                                                    \
	do {                                                                           \
		uint8_t lin_[1100];                                                    \
		size_t n_ = dvx_test_hex((hex), lin_, sizeof(lin_));                   \
		t_assert_ring_wqe((r)->buf, (r)->bytes, (idx), lin_, n_, T_POISON,     \
				  "wqe", __FILE__, __LINE__);                          \
	} while (0)

#define assert_untouched(r) assert_fill((r)->buf, 0, (r)->bytes, T_POISON)

/* ---- constants against docs/prm.md's tables ---- */

static void test_constants(void **state)
{
	(void)state;
	/* prm 2.2 opcode table */
	assert_int_equal(DVX_MLX5_OPCODE_NOP, 0x00);
	assert_int_equal(DVX_MLX5_OPCODE_SEND_INVAL, 0x01);
	assert_int_equal(DVX_MLX5_OPCODE_RDMA_WRITE, 0x08);
	assert_int_equal(DVX_MLX5_OPCODE_RDMA_WRITE_IMM, 0x09);
	assert_int_equal(DVX_MLX5_OPCODE_SEND, 0x0a);
	assert_int_equal(DVX_MLX5_OPCODE_SEND_IMM, 0x0b);
	assert_int_equal(DVX_MLX5_OPCODE_WAIT, 0x0f);
	assert_int_equal(DVX_MLX5_OPCODE_RDMA_READ, 0x10);
	assert_int_equal(DVX_MLX5_OPCODE_ATOMIC_CS, 0x11);
	assert_int_equal(DVX_MLX5_OPCODE_ATOMIC_FA, 0x12);
	assert_int_equal(DVX_MLX5_OPCODE_ATOMIC_MASKED_CS, 0x14);
	assert_int_equal(DVX_MLX5_OPCODE_ATOMIC_MASKED_FA, 0x15);
	assert_int_equal(DVX_MLX5_OPCODE_RECV_EN, 0x16);
	assert_int_equal(DVX_MLX5_OPCODE_SEND_EN, 0x17);
	assert_int_equal(DVX_MLX5_OPCODE_DUMP, 0x23);
	assert_int_equal(DVX_MLX5_OPCODE_UMR, 0x25);
	/* prm 2.4, 2.7 opmods */
	assert_int_equal(DVX_MLX5_OPMOD_EXT_ATOMIC_4B, 0x08);
	assert_int_equal(DVX_MLX5_OPMOD_EXT_ATOMIC_8B, 0x09);
	assert_int_equal(DVX_MLX5_OPMOD_WAIT_CQ_PI, 0);
	assert_int_equal(DVX_MLX5_OPMOD_WAIT_DATA, 1);
	assert_int_equal(DVX_MLX5_OPMOD_WAIT_TIME, 2);
	/* prm 2.1, 2.5, 2.6 */
	assert_int_equal(DVX_MLX5_SEND_WQE_BB, 64);
	assert_int_equal(DVX_MLX5_SEND_WQE_SHIFT, 6);
	assert_int_equal(1u << DVX_MLX5_SEND_WQE_SHIFT, DVX_MLX5_SEND_WQE_BB);
	assert_int_equal(DVX_MLX5_DS_BYTES, 16);
	assert_int_equal(DVX_MLX5_MAX_DS, 63);
	assert_int_equal(DVX_MLX5_MAX_WQE_BYTES, 1008);
	assert_int_equal(DVX_MLX5_MAX_WQEBB_PER_WQE, 16);
	assert_int_equal(DVX_MLX5_INLINE_SEG, 0x80000000u);
	assert_int_equal(DVX_MLX5_INVALID_LKEY, 0x100);
	assert_int_equal(DVX_MLX5_MAX_BYTE_COUNT, 0x7fffffffu);
	/* ds 63 - ctrl - raddr - 4-byte inline header */
	assert_int_equal(DVX_MLX5_MAX_INLINE, 63 * 16 - 32 - 4);
	assert_int_equal(DVX_MLX5_MAX_SGE, 61);
	/* ds -> WQEBBs is ceil(ds / 4) */
	assert_int_equal(dvx_mlx5_ds_to_wqebb(1), 1);
	assert_int_equal(dvx_mlx5_ds_to_wqebb(4), 1);
	assert_int_equal(dvx_mlx5_ds_to_wqebb(5), 2);
	assert_int_equal(dvx_mlx5_ds_to_wqebb(8), 2);
	assert_int_equal(dvx_mlx5_ds_to_wqebb(9), 3);
	assert_int_equal(dvx_mlx5_ds_to_wqebb(63), 16);
}

/* ---- fm_ce_se (prm 2.2) ---- */

static void test_fm_ce_se_values(void **state)
{
	static const uint8_t fm_byte[5] = { 0x00, 0x20, 0x40, 0x60, 0x80 };
	static const uint8_t ce_byte[4] = { 0x0, 0x4, 0x8, 0xc };
	unsigned fm, ce;

	(void)state;
	assert_int_equal(DVX_MLX5_FM_NONE, 0);
	assert_int_equal(DVX_MLX5_FM_INITIATOR_SMALL, 1);
	assert_int_equal(DVX_MLX5_FM_FENCE, 2);
	assert_int_equal(DVX_MLX5_FM_STRONG_ORDERING, 3);
	assert_int_equal(DVX_MLX5_FM_FENCE_AND_INITIATOR_SMALL, 4);
	assert_int_equal(DVX_MLX5_CE_ERROR_ONLY, 0);
	assert_int_equal(DVX_MLX5_CE_FIRST_ERROR, 1);
	assert_int_equal(DVX_MLX5_CE_ALWAYS, 2);
	assert_int_equal(DVX_MLX5_CE_CQE_AND_EQE, 3);
	for (fm = 0; fm < 5; fm++)
		assert_int_equal(DVX_MLX5_WQE_CTRL_FM(fm), fm_byte[fm]);
	for (ce = 0; ce < 4; ce++)
		assert_int_equal(DVX_MLX5_WQE_CTRL_CE(ce), ce_byte[ce]);
	assert_int_equal(DVX_MLX5_WQE_CTRL_CQ_UPDATE, 0x08);
	assert_int_equal(DVX_MLX5_WQE_CTRL_SOLICITED, 0x02);
	assert_int_equal(DVX_MLX5_WQE_CTRL_FM_MASK, 0xe0);
	assert_int_equal(DVX_MLX5_WQE_CTRL_CE_MASK, 0x0c);
	assert_int_equal(DVX_MLX5_WQE_CTRL_FM(DVX_MLX5_FM_FENCE_AND_INITIATOR_SMALL) |
			 DVX_MLX5_WQE_CTRL_CE(DVX_MLX5_CE_ALWAYS) | DVX_MLX5_WQE_CTRL_SOLICITED,
			 0x8a);
}

/* every fence x completion x solicited combination lands in byte 11 and nowhere else */
static void test_fm_ce_se_in_wqe(void **state)
{
	static const uint8_t fm_byte[5] = { 0x00, 0x20, 0x40, 0x60, 0x80 };
	static const uint8_t ce_byte[4] = { 0x0, 0x4, 0x8, 0xc };
	struct t_ring r;
	unsigned fm, ce, se;

	(void)state;
	ring_open(&r, NWQEBB, QPN, 64);
	for (fm = 0; fm < 5; fm++) {
		for (ce = 0; ce < 4; ce++) {
			for (se = 0; se < 2; se++) {
				uint8_t f = (uint8_t)(DVX_MLX5_WQE_CTRL_FM(fm) |
						      DVX_MLX5_WQE_CTRL_CE(ce) |
						      (se ? DVX_MLX5_WQE_CTRL_SOLICITED : 0));
				uint8_t want[48];

				assert_int_equal(f, fm_byte[fm] | ce_byte[ce] | (se ? 2 : 0));
				ring_poison(&r, T_POISON);
				assert_int_equal(dvx_mlx5_wqe_rdma_write(&r.wq, IDX, f, RADDR, RKEY,
									 LADDR, LKEY, LEN), 1);
				t_ctrl(want, 0, IDX, 0x08, QPN, 3, f, 0);
				t_raddr(want + 16, RADDR, RKEY);
				t_data(want + 32, LEN, LKEY, LADDR);
				assert_ring_wqe(r.buf, r.bytes, IDX, want, sizeof(want), T_POISON);

				ring_poison(&r, T_POISON);
				assert_int_equal(dvx_mlx5_wqe_nop(&r.wq, IDX, f), 1);
				t_ctrl(want, 0, IDX, 0x00, QPN, 1, f, 0);
				assert_ring_wqe(r.buf, r.bytes, IDX, want, 16, T_POISON);
			}
		}
	}
	ring_close(&r);
}

/* ---- the four worked examples of prm 2.8, from their literal hex ---- */

static void test_example_a_rdma_write(void **state)
{
	struct t_ring r;

	(void)state;
	ring_open(&r, 8, 0x000123, 64);
	assert_int_equal(dvx_mlx5_wqe_rdma_write(&r.wq, 5, 0x08, 0x1000, 0x00005678, 0x40,
						 0x00001234, 4096), 1);
	assert_wqe_hex(&r, 5,
		       "00 00 05 08  00 01 23 03  00 00 00 08  00 00 00 00"
		       "00 00 00 00 00 00 10 00  00 00 56 78  00 00 00 00"
		       "00 00 10 00  00 00 12 34  00 00 00 00 00 00 00 40");
	ring_close(&r);
}

static void test_example_b_inline_write(void **state)
{
	static const uint8_t p[8] = { 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88 };
	struct t_ring r;

	(void)state;
	ring_open(&r, 8, 0x000123, 28);
	assert_int_equal(dvx_mlx5_wqe_rdma_write_inline(&r.wq, 5, DVX_MLX5_OPCODE_RDMA_WRITE, 0x08,
							0,
							&(struct dvx_mlx5_raddr){ 0x1000,
										  0x00005678 },
							p, 8),
			 1);
	assert_wqe_hex(&r, 5,
		       "00 00 05 08  00 01 23 03  00 00 00 08  00 00 00 00"
		       "00 00 00 00 00 00 10 00  00 00 56 78  00 00 00 00"
		       "80 00 00 08  11 22 33 44 55 66 77 88  00 00 00 00");
	ring_close(&r);
}

static void test_example_c_fetch_add(void **state)
{
	struct t_ring r;

	(void)state;
	ring_open(&r, 8, 0x000123, 64);
	assert_int_equal(dvx_mlx5_wqe_atomic_fa(&r.wq, 5, 0x08, 0x1000, 0x00005678, 1, 0,
						0x00009abc), 1);
	assert_wqe_hex(&r, 5,
		       "00 00 05 12  00 01 23 04  00 00 00 08  00 00 00 00"
		       "00 00 00 00 00 00 10 00  00 00 56 78  00 00 00 00"
		       "00 00 00 00 00 00 00 01  00 00 00 00 00 00 00 00"
		       "00 00 00 08  00 00 9a bc  00 00 00 00 00 00 00 00");
	ring_close(&r);
}

static void test_example_d_wait(void **state)
{
	struct t_ring r;

	(void)state;
	ring_open(&r, 8, 0x000234, 64);
	assert_int_equal(dvx_mlx5_wqe_wait_cq(&r.wq, 7, 0x08, 0x4a, 5), 1);
	assert_wqe_hex(&r, 7,
		       "00 00 07 0f  00 02 34 02  00 00 00 08  00 00 00 00"
		       "00 00 00 00 00 00 00 00  00 00 00 05  00 00 00 4a");
	ring_close(&r);
}

/* ---- every builder with distinctive values ---- */

static void test_nop(void **state)
{
	struct t_ring r;

	(void)state;
	ring_open(&r, NWQEBB, QPN, 64);
	assert_int_equal(dvx_mlx5_wqe_nop(&r.wq, IDX, SIG), 1);
	assert_wqe_hex(&r, IDX, CTRL_HEX("00", "00", "01", "00 00 00 00"));
	ring_close(&r);
}

static void test_rdma_single(void **state)
{
	struct t_ring r;

	(void)state;
	ring_open(&r, NWQEBB, QPN, 64);
	assert_int_equal(dvx_mlx5_wqe_rdma_write(&r.wq, IDX, SIG, RADDR, RKEY, LADDR, LKEY, LEN),
			 1);
	assert_wqe_hex(&r, IDX, CTRL_HEX("00", "08", "03", "00 00 00 00") RADDR_HEX
		       DATA_HEX("00 01 23 45"));

	ring_poison(&r, T_POISON);
	assert_int_equal(dvx_mlx5_wqe_rdma_write_imm(&r.wq, IDX, SIG, IMM,
						     &(struct dvx_mlx5_raddr){ RADDR, RKEY },
						     &(struct dvx_mlx5_sge){ LADDR, LEN, LKEY }),
			 1);
	assert_wqe_hex(&r, IDX, CTRL_HEX("00", "09", "03", "de ad be ef") RADDR_HEX
		       DATA_HEX("00 01 23 45"));

	ring_poison(&r, T_POISON);
	assert_int_equal(dvx_mlx5_wqe_rdma_read(&r.wq, IDX, SIG, RADDR, RKEY, LADDR, LKEY, LEN), 1);
	assert_wqe_hex(&r, IDX, CTRL_HEX("00", "10", "03", "00 00 00 00") RADDR_HEX
		       DATA_HEX("00 01 23 45"));

	/* the generic form: an immediate is carried only by WRITE_IMM */
	ring_poison(&r, T_POISON);
	assert_int_equal(dvx_mlx5_wqe_rdma(&r.wq, IDX, DVX_MLX5_OPCODE_RDMA_WRITE, SIG, IMM,
					   &(struct dvx_mlx5_raddr){ RADDR, RKEY },
					   &(struct dvx_mlx5_sge){ LADDR, LEN, LKEY }),
			 1);
	assert_wqe_hex(&r, IDX, CTRL_HEX("00", "08", "03", "00 00 00 00") RADDR_HEX
		       DATA_HEX("00 01 23 45"));
	ring_poison(&r, T_POISON);
	assert_int_equal(dvx_mlx5_wqe_rdma(&r.wq, IDX, DVX_MLX5_OPCODE_RDMA_READ, SIG, IMM,
					   &(struct dvx_mlx5_raddr){ RADDR, RKEY },
					   &(struct dvx_mlx5_sge){ LADDR, LEN, LKEY }),
			 1);
	assert_wqe_hex(&r, IDX, CTRL_HEX("00", "10", "03", "00 00 00 00") RADDR_HEX
		       DATA_HEX("00 01 23 45"));

	/* the largest encodable length */
	ring_poison(&r, T_POISON);
	assert_int_equal(dvx_mlx5_wqe_rdma_write(&r.wq, IDX, SIG, RADDR, RKEY, LADDR, LKEY,
						 0x7fffffffu), 1);
	assert_wqe_hex(&r, IDX, CTRL_HEX("00", "08", "03", "00 00 00 00") RADDR_HEX
		       DATA_HEX("7f ff ff ff"));
	ring_close(&r);
}

/* length 0: no data segment at all, ds 2 */
static void test_rdma_len0(void **state)
{
	struct t_ring r;

	(void)state;
	ring_open(&r, NWQEBB, QPN, 64);
	assert_int_equal(dvx_mlx5_wqe_rdma_write(&r.wq, IDX, SIG, RADDR, RKEY, LADDR, LKEY, 0), 1);
	assert_wqe_hex(&r, IDX, CTRL_HEX("00", "08", "02", "00 00 00 00") RADDR_HEX);
	ring_poison(&r, T_POISON);
	assert_int_equal(dvx_mlx5_wqe_rdma_write_imm(&r.wq, IDX, SIG, IMM,
						     &(struct dvx_mlx5_raddr){ RADDR, RKEY },
						     &(struct dvx_mlx5_sge){ LADDR, 0, LKEY }),
			 1);
	assert_wqe_hex(&r, IDX, CTRL_HEX("00", "09", "02", "de ad be ef") RADDR_HEX);
	ring_poison(&r, T_POISON);
	assert_int_equal(dvx_mlx5_wqe_rdma_read(&r.wq, IDX, SIG, RADDR, RKEY, LADDR, LKEY, 0), 1);
	assert_wqe_hex(&r, IDX, CTRL_HEX("00", "10", "02", "00 00 00 00") RADDR_HEX);
	ring_close(&r);
}

static void test_rdma_errors(void **state)
{
	static const uint8_t bad_ops[] = { 0x00, 0x01, 0x0a, 0x0b, 0x0f, 0x11, 0x12, 0x14, 0x15,
					   0x16, 0x17, 0xff };
	struct dvx_mlx5_sge sge = { LADDR, 0x10, LKEY };
	struct t_ring r;
	size_t i;

	(void)state;
	ring_open(&r, NWQEBB, QPN, 64);
	/* byte_count bit 31 must be 0 (prm 2.5) */
	assert_int_equal(dvx_mlx5_wqe_rdma_write(&r.wq, IDX, SIG, RADDR, RKEY, LADDR, LKEY,
						 0x80000000u), -EINVAL);
	assert_int_equal(dvx_mlx5_wqe_rdma_write_imm(&r.wq, IDX, SIG, IMM,
						     &(struct dvx_mlx5_raddr){ RADDR, RKEY },
						     &(struct dvx_mlx5_sge){ LADDR, 0xffffffffu,
									     LKEY }),
			 -EINVAL);
	assert_int_equal(dvx_mlx5_wqe_rdma_read(&r.wq, IDX, SIG, RADDR, RKEY, LADDR, LKEY,
						0x80000001u), -EINVAL);
	for (i = 0; i < sizeof(bad_ops); i++) {
		assert_int_equal(dvx_mlx5_wqe_rdma(&r.wq, IDX, bad_ops[i], SIG, 0,
						   &(struct dvx_mlx5_raddr){ RADDR, RKEY },
						   &(struct dvx_mlx5_sge){ LADDR, 16, LKEY }),
				 -EINVAL);
		assert_int_equal(dvx_mlx5_wqe_rdma_sgl(&r.wq, IDX, bad_ops[i], SIG, 0,
						       &(struct dvx_mlx5_raddr){ RADDR, RKEY },
						       &sge, 1),
				 -EINVAL);
	}
	assert_untouched(&r);
	ring_close(&r);
}

static void test_rdma_sgl(void **state)
{
	/* the middle entry is empty and must leave no segment behind */
	const struct dvx_mlx5_sge sgl[3] = {
		{ LADDR, 0x100, LKEY },
		{ 0x2000, 0, 0x999 },
		{ 0x3000, 0x200, 0x77 },
	};
	struct t_ring r;

	(void)state;
	ring_open(&r, NWQEBB, QPN, 64);
	assert_int_equal(dvx_mlx5_wqe_rdma_sgl(&r.wq, IDX, DVX_MLX5_OPCODE_RDMA_WRITE, SIG, IMM,
					       &(struct dvx_mlx5_raddr){ RADDR, RKEY }, sgl, 3),
			 1);
	assert_wqe_hex(&r, IDX, CTRL_HEX("00", "08", "04", "00 00 00 00") RADDR_HEX
		       DATA_HEX("00 00 01 00")
		       "00 00 02 00 00 00 00 77 00 00 00 00 00 00 30 00");

	ring_poison(&r, T_POISON);
	assert_int_equal(dvx_mlx5_wqe_rdma_sgl(&r.wq, IDX, DVX_MLX5_OPCODE_RDMA_WRITE_IMM, SIG, IMM,
					       &(struct dvx_mlx5_raddr){ RADDR, RKEY }, sgl, 3),
			 1);
	assert_wqe_hex(&r, IDX, CTRL_HEX("00", "09", "04", "de ad be ef") RADDR_HEX
		       DATA_HEX("00 00 01 00")
		       "00 00 02 00 00 00 00 77 00 00 00 00 00 00 30 00");

	ring_poison(&r, T_POISON);
	assert_int_equal(dvx_mlx5_wqe_rdma_sgl(&r.wq, IDX, DVX_MLX5_OPCODE_RDMA_READ, SIG, IMM,
					       &(struct dvx_mlx5_raddr){ RADDR, RKEY }, sgl, 3),
			 1);
	assert_wqe_hex(&r, IDX, CTRL_HEX("00", "10", "04", "00 00 00 00") RADDR_HEX
		       DATA_HEX("00 00 01 00")
		       "00 00 02 00 00 00 00 77 00 00 00 00 00 00 30 00");

	/* only empty entries, or none: ds 2 */
	ring_poison(&r, T_POISON);
	assert_int_equal(dvx_mlx5_wqe_rdma_sgl(&r.wq, IDX, DVX_MLX5_OPCODE_RDMA_WRITE, SIG, 0,
					       &(struct dvx_mlx5_raddr){ RADDR, RKEY }, sgl + 1, 1),
			 1);
	assert_wqe_hex(&r, IDX, CTRL_HEX("00", "08", "02", "00 00 00 00") RADDR_HEX);
	ring_poison(&r, T_POISON);
	assert_int_equal(dvx_mlx5_wqe_rdma_sgl(&r.wq, IDX, DVX_MLX5_OPCODE_RDMA_WRITE, SIG, 0,
					       &(struct dvx_mlx5_raddr){ RADDR, RKEY }, NULL, 0),
			 1);
	assert_wqe_hex(&r, IDX, CTRL_HEX("00", "08", "02", "00 00 00 00") RADDR_HEX);
	ring_close(&r);
}

/* fill @sgl with @nsge entries, every third one empty when @holes; returns non-empty */
static uint32_t make_sgl(struct dvx_mlx5_sge *sgl, uint32_t nsge, int holes, uint64_t *seed)
{
	uint32_t i, n = 0;

	for (i = 0; i < nsge; i++) {
		sgl[i].addr = t_rand64(seed);
		sgl[i].lkey = t_rand32(seed);
		sgl[i].length = (holes && i % 3 == 1) ? 0 : (t_rand32(seed) & 0x7fffffffu) | 1u;
		n += sgl[i].length != 0;
	}
	return n;
}

/* reference: ctrl (+ raddr) + one data segment per non-empty entry */
static size_t ref_sgl_wqe(uint8_t *lin, uint8_t opcode, uint32_t idx, uint32_t qpn, uint8_t f,
			  uint32_t imm, int with_raddr, const struct dvx_mlx5_sge *sgl,
			  uint32_t nsge)
{
	uint32_t i, seg = with_raddr ? 2 : 1;
	uint8_t ds;

	for (i = 0; i < nsge; i++)
		if (sgl[i].length)
			t_data(lin + 16 * seg++, sgl[i].length, sgl[i].lkey, sgl[i].addr);
	ds = (uint8_t)seg;
	t_ctrl(lin, 0, idx, opcode, qpn, ds, f, imm);
	if (with_raddr)
		t_raddr(lin + 16, RADDR, RKEY);
	return (size_t)ds * 16;
}

/* 0 ... 62 non-empty entries (with and without empty ones between): ds 2 + n up to 63,
 * -E2BIG past it, -EINVAL for a length with bit 31 */
static void test_rdma_sgl_sizes(void **state)
{
	static const uint8_t ops[3] = { 0x08, 0x09, 0x10 };
	struct dvx_mlx5_sge sgl[100];
	uint8_t lin[1024];
	uint64_t seed = 0x5eed0001;
	struct t_ring r;
	uint32_t nsge, o;
	int holes;

	(void)state;
	ring_open(&r, NWQEBB, QPN, 64);
	for (o = 0; o < 3; o++) {
		for (holes = 0; holes < 2; holes++) {
			for (nsge = 0; nsge <= 95; nsge++) {
				uint32_t n = make_sgl(sgl, nsge, holes, &seed);
				uint32_t imm = ops[o] == 0x09 ? IMM : 0;
				size_t len;
				int ret;

				ring_poison(&r, T_POISON);
				ret = dvx_mlx5_wqe_rdma_sgl(&r.wq, IDX, ops[o], SIG, IMM,
							    &(struct dvx_mlx5_raddr){ RADDR, RKEY },
							    sgl, nsge);
				if (2 + n > 63) {
					assert_int_equal(ret, -E2BIG);
					assert_untouched(&r);
					continue;
				}
				len = ref_sgl_wqe(lin, ops[o], IDX, QPN, SIG, imm, 1, sgl, nsge);
				assert_int_equal(ret, (2 + n + 3) / 4);
				assert_ring_wqe(r.buf, r.bytes, IDX, lin, len, T_POISON);
			}
		}
	}
	/* a length with bit 31 set anywhere in the list: nothing written */
	make_sgl(sgl, 10, 0, &seed);
	sgl[7].length = 0x80000000u;
	assert_int_equal(dvx_mlx5_wqe_rdma_sgl(&r.wq, IDX, 0x08, SIG, 0,
					       &(struct dvx_mlx5_raddr){ RADDR, RKEY }, sgl, 10),
			 -EINVAL);
	/* a list that is too long and has a bad length: either error, nothing written */
	make_sgl(sgl, 70, 0, &seed);
	sgl[69].length = 0xffffffffu;
	assert_true(dvx_mlx5_wqe_rdma_sgl(&r.wq, IDX, 0x08, SIG, 0,
					  &(struct dvx_mlx5_raddr){ RADDR, RKEY }, sgl, 70) < 0);
	/* entries promised but no list */
	assert_int_equal(dvx_mlx5_wqe_rdma_sgl(&r.wq, IDX, 0x08, SIG, 0,
					       &(struct dvx_mlx5_raddr){ RADDR, RKEY }, NULL, 1),
			 -EINVAL);
	assert_untouched(&r);
	ring_close(&r);
}

static void test_send(void **state)
{
	struct t_ring r;

	(void)state;
	ring_open(&r, NWQEBB, QPN, 64);
	assert_int_equal(dvx_mlx5_wqe_send(&r.wq, IDX, SIG, LADDR, LKEY, LEN), 1);
	assert_wqe_hex(&r, IDX, CTRL_HEX("00", "0a", "02", "00 00 00 00") DATA_HEX("00 01 23 45"));
	ring_poison(&r, T_POISON);
	assert_int_equal(dvx_mlx5_wqe_send_imm(&r.wq, IDX, SIG, IMM, LADDR, LKEY, LEN), 1);
	assert_wqe_hex(&r, IDX, CTRL_HEX("00", "0b", "02", "de ad be ef") DATA_HEX("00 01 23 45"));
	/* zero length: ctrl only */
	ring_poison(&r, T_POISON);
	assert_int_equal(dvx_mlx5_wqe_send(&r.wq, IDX, SIG, LADDR, LKEY, 0), 1);
	assert_wqe_hex(&r, IDX, CTRL_HEX("00", "0a", "01", "00 00 00 00"));
	ring_poison(&r, T_POISON);
	assert_int_equal(dvx_mlx5_wqe_send_imm(&r.wq, IDX, SIG, IMM, LADDR, LKEY, 0), 1);
	assert_wqe_hex(&r, IDX, CTRL_HEX("00", "0b", "01", "de ad be ef"));
	/* errors write nothing */
	ring_poison(&r, T_POISON);
	assert_int_equal(dvx_mlx5_wqe_send(&r.wq, IDX, SIG, LADDR, LKEY, 0x80000000u), -EINVAL);
	assert_int_equal(dvx_mlx5_wqe_send_imm(&r.wq, IDX, SIG, IMM, LADDR, LKEY, 0xffffffffu),
			 -EINVAL);
	assert_untouched(&r);
	ring_close(&r);
}

static void test_send_sgl(void **state)
{
	static const uint8_t bad_ops[] = { 0x00, 0x01, 0x08, 0x09, 0x10, 0x0f, 0x17, 0xff };
	const struct dvx_mlx5_sge sgl[3] = {
		{ LADDR, 0x100, LKEY },
		{ 0x2000, 0, 0x999 },
		{ 0x3000, 0x200, 0x77 },
	};
	struct dvx_mlx5_sge big[100];
	uint8_t lin[1024];
	uint64_t seed = 0x5eed0002;
	struct t_ring r;
	uint32_t nsge;
	size_t i;
	int holes;

	(void)state;
	ring_open(&r, NWQEBB, QPN, 64);
	assert_int_equal(dvx_mlx5_wqe_send_sgl(&r.wq, IDX, DVX_MLX5_OPCODE_SEND, SIG, IMM, sgl, 3),
			 1);
	assert_wqe_hex(&r, IDX, CTRL_HEX("00", "0a", "03", "00 00 00 00") DATA_HEX("00 00 01 00")
		       "00 00 02 00 00 00 00 77 00 00 00 00 00 00 30 00");
	ring_poison(&r, T_POISON);
	assert_int_equal(dvx_mlx5_wqe_send_sgl(&r.wq, IDX, DVX_MLX5_OPCODE_SEND_IMM, SIG, IMM, sgl,
					       3), 1);
	assert_wqe_hex(&r, IDX, CTRL_HEX("00", "0b", "03", "de ad be ef") DATA_HEX("00 00 01 00")
		       "00 00 02 00 00 00 00 77 00 00 00 00 00 00 30 00");

	for (holes = 0; holes < 2; holes++) {
		for (nsge = 0; nsge <= 95; nsge++) {
			uint32_t n = make_sgl(big, nsge, holes, &seed);
			int ret;

			ring_poison(&r, T_POISON);
			ret = dvx_mlx5_wqe_send_sgl(&r.wq, IDX, DVX_MLX5_OPCODE_SEND_IMM, SIG, IMM,
						    big, nsge);
			if (1 + n > 63) {
				assert_int_equal(ret, -E2BIG);
				assert_untouched(&r);
				continue;
			}
			assert_int_equal(ret, (1 + n + 3) / 4);
			assert_ring_wqe(r.buf, r.bytes, IDX, lin,
					ref_sgl_wqe(lin, 0x0b, IDX, QPN, SIG, IMM, 0, big, nsge),
					T_POISON);
		}
	}

	ring_poison(&r, T_POISON);
	for (i = 0; i < sizeof(bad_ops); i++)
		assert_int_equal(dvx_mlx5_wqe_send_sgl(&r.wq, IDX, bad_ops[i], SIG, 0, sgl, 3),
				 -EINVAL);
	make_sgl(big, 10, 0, &seed);
	big[3].length = 0x80000000u;
	assert_int_equal(dvx_mlx5_wqe_send_sgl(&r.wq, IDX, DVX_MLX5_OPCODE_SEND, SIG, 0, big, 10),
			 -EINVAL);
	assert_int_equal(dvx_mlx5_wqe_send_sgl(&r.wq, IDX, DVX_MLX5_OPCODE_SEND, SIG, 0, NULL, 2),
			 -EINVAL);
	assert_untouched(&r);
	ring_close(&r);
}

/* ---- inline (prm 2.6) ---- */

static void fill_payload(uint8_t *p, size_t n, uint64_t *seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)t_rand32(seed);
	/* make sure the payload itself holds poison-like and header-like bytes */
	if (n > 3) {
		p[0] = 0x80;
		p[1] = T_POISON;
		p[2] = 0x00;
	}
}

/* lengths 0 ... DVX_MLX5_MAX_INLINE for write, write-imm, send, send-imm */
static void test_inline_all_lengths(void **state)
{
	static const struct {
		uint8_t op;
		int raddr;
		uint32_t imm;
	} kinds[4] = {
		{ 0x08, 1, 0 }, { 0x09, 1, IMM }, { 0x0a, 0, 0 }, { 0x0b, 0, IMM },
	};
	uint8_t payload[1024], lin[1024];
	uint64_t seed = 0x5eed0003;
	struct t_ring r;
	uint32_t len, k;

	(void)state;
	ring_open(&r, NWQEBB, QPN, DVX_MLX5_MAX_INLINE);
	fill_payload(payload, sizeof(payload), &seed);
	for (k = 0; k < 4; k++) {
		for (len = 0; len <= DVX_MLX5_MAX_INLINE; len++) {
			uint32_t fixed = kinds[k].raddr ? 2 : 1;
			uint32_t ds = fixed + (4 + len + 15) / 16;
			uint8_t f = (uint8_t)(len & 0xee);	/* vary fm_ce_se too */
			int ret;

			ring_poison(&r, (len & 1) ? T_POISON2 : T_POISON);
			if (kinds[k].raddr)
				ret = dvx_mlx5_wqe_rdma_write_inline(&r.wq, IDX, kinds[k].op, f,
								     IMM,
								     &(struct dvx_mlx5_raddr){
									     RADDR, RKEY },
								     payload, len);
			else
				ret = dvx_mlx5_wqe_send_inline(&r.wq, IDX, kinds[k].op, f, IMM,
							       payload, len);
			assert_true(ds <= 63);
			assert_int_equal(ret, (ds + 3) / 4);
			t_ctrl(lin, 0, IDX, kinds[k].op, QPN, (uint8_t)ds, f, kinds[k].imm);
			if (kinds[k].raddr)
				t_raddr(lin + 16, RADDR, RKEY);
			assert_int_equal(t_inline(lin + 16 * fixed, payload, len), ds - fixed);
			assert_ring_wqe(r.buf, r.bytes, IDX, lin, ds * 16,
					(len & 1) ? T_POISON2 : T_POISON);
		}
	}
	ring_close(&r);
}

/* the ds boundaries of prm 2.6, literally */
static void test_inline_ds_boundaries(void **state)
{
	static const struct {
		uint32_t len;
		uint8_t write_ds, send_ds;
	} cases[] = {
		{ 0, 3, 2 }, { 1, 3, 2 }, { 12, 3, 2 }, { 13, 4, 3 }, { 28, 4, 3 }, { 29, 5, 4 },
		{ 44, 5, 4 }, { 45, 6, 5 }, { 956, 62, 61 }, { 957, 63, 62 }, { 972, 63, 62 },
	};
	uint8_t payload[1024] = { 0 };
	struct t_ring r;
	size_t i;

	(void)state;
	ring_open(&r, NWQEBB, QPN, DVX_MLX5_MAX_INLINE);
	for (i = 0; i < DVX_ARRAY_SIZE(cases); i++) {
		uint8_t *c = r.buf + (IDX % NWQEBB) * 64;

		dvx_mlx5_wqe_rdma_write_inline(&r.wq, IDX, 0x08, 0, 0,
					       &(struct dvx_mlx5_raddr){ RADDR, RKEY }, payload,
					       cases[i].len);
		assert_int_equal(c[7], cases[i].write_ds);
		assert_int_equal(t_get_be32(c + 32), 0x80000000u | cases[i].len);
		dvx_mlx5_wqe_send_inline(&r.wq, IDX, 0x0a, 0, 0, payload, cases[i].len);
		assert_int_equal(c[7], cases[i].send_ds);
		assert_int_equal(t_get_be32(c + 16), 0x80000000u | cases[i].len);
	}
	ring_close(&r);
}

/* the zero-length inline segment: header 0x80000000 and 12 zero bytes */
static void test_inline_zero(void **state)
{
	struct t_ring r;

	(void)state;
	ring_open(&r, NWQEBB, QPN, 0);
	assert_int_equal(dvx_mlx5_wqe_rdma_write_inline(&r.wq, IDX, 0x08, SIG, 0,
							&(struct dvx_mlx5_raddr){ RADDR, RKEY },
							NULL, 0),
			 1);
	assert_wqe_hex(&r, IDX, CTRL_HEX("00", "08", "03", "00 00 00 00") RADDR_HEX
		       "80 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00");
	ring_poison(&r, T_POISON);
	assert_int_equal(dvx_mlx5_wqe_send_inline(&r.wq, IDX, 0x0b, SIG, IMM, NULL, 0), 1);
	assert_wqe_hex(&r, IDX, CTRL_HEX("00", "0b", "02", "de ad be ef")
		       "80 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00");
	ring_close(&r);
}

/* over the ring's max_inline: -EMSGSIZE and nothing written; bad opcodes: -EINVAL */
static void test_inline_errors(void **state)
{
	static const uint32_t limits[] = { 0, 12, 28, 100, DVX_MLX5_MAX_INLINE };
	uint8_t payload[1100] = { 0 };
	struct t_ring r;
	size_t i;

	(void)state;
	for (i = 0; i < DVX_ARRAY_SIZE(limits); i++) {
		uint32_t lim = limits[i], len;

		ring_open(&r, NWQEBB, QPN, lim);
		for (len = lim + 1; len <= lim + 40; len++) {
			assert_int_equal(dvx_mlx5_wqe_rdma_write_inline(&r.wq, IDX, 0x08, SIG, 0,
									&(struct dvx_mlx5_raddr){
										RADDR, RKEY },
									payload, len),
					 -EMSGSIZE);
			assert_int_equal(dvx_mlx5_wqe_rdma_write_inline(&r.wq, IDX, 0x09, SIG, IMM,
									&(struct dvx_mlx5_raddr){
										RADDR, RKEY },
									payload, len),
					 -EMSGSIZE);
			assert_int_equal(dvx_mlx5_wqe_send_inline(&r.wq, IDX, 0x0a, SIG, 0, payload,
								  len), -EMSGSIZE);
			assert_int_equal(dvx_mlx5_wqe_send_inline(&r.wq, IDX, 0x0b, SIG, IMM,
								  payload, len), -EMSGSIZE);
		}
		assert_int_equal(dvx_mlx5_wqe_rdma_write_inline(&r.wq, IDX, 0x08, SIG, 0,
								&(struct dvx_mlx5_raddr){ RADDR,
											  RKEY },
								payload, 0xffffffffu),
				 -EMSGSIZE);
		assert_int_equal(dvx_mlx5_wqe_send_inline(&r.wq, IDX, 0x0a, SIG, 0, payload,
							  0xffffffffu), -EMSGSIZE);
		/* a payload promised but not given */
		if (lim) {
			assert_true(dvx_mlx5_wqe_rdma_write_inline(&r.wq, IDX, 0x08, SIG, 0,
								   &(struct dvx_mlx5_raddr){ RADDR,
											     RKEY },
								   NULL, 1) < 0);
			assert_true(dvx_mlx5_wqe_send_inline(&r.wq, IDX, 0x0a, SIG, 0, NULL, 1) <
				    0);
		}
		assert_int_equal(dvx_mlx5_wqe_rdma_write_inline(&r.wq, IDX, 0x10, SIG, 0,
								&(struct dvx_mlx5_raddr){ RADDR,
											  RKEY },
								payload, 0),
				 -EINVAL);
		assert_int_equal(dvx_mlx5_wqe_rdma_write_inline(&r.wq, IDX, 0x0a, SIG, 0,
								&(struct dvx_mlx5_raddr){ RADDR,
											  RKEY },
								payload, 0),
				 -EINVAL);
		assert_int_equal(dvx_mlx5_wqe_send_inline(&r.wq, IDX, 0x08, SIG, 0, payload, 0),
				 -EINVAL);
		assert_int_equal(dvx_mlx5_wqe_send_inline(&r.wq, IDX, 0x00, SIG, 0, payload, 0),
				 -EINVAL);
		assert_untouched(&r);
		/* exactly at the limit it builds */
		assert_true(dvx_mlx5_wqe_rdma_write_inline(&r.wq, IDX, 0x08, SIG, 0,
							   &(struct dvx_mlx5_raddr){ RADDR, RKEY },
							   payload, lim) > 0);
		assert_true(dvx_mlx5_wqe_send_inline(&r.wq, IDX, 0x0a, SIG, 0, payload, lim) > 0);
		ring_close(&r);
	}
}

/*
 * A ring described by hand (the GPU side may fill struct dvx_mlx5_wq from device
 * state without dvx_mlx5_wq_init()) with no inline limit of its own: the ds limit of
 * 63 still bounds the payload, also for lengths near 2^32 where 4 + len + 15 wraps.
 */
static void test_inline_unbounded_ring(void **state)
{
	static uint8_t payload[1100];
	static const uint32_t lens[] = { 973, 989, 1000, 0x7fffffffu, 0xfffffff0u, 0xfffffffcu,
					 0xffffffffu };
	struct t_ring r;
	size_t i;

	(void)state;
	ring_open(&r, NWQEBB, QPN, 0);
	r.wq.max_inline = 0xffffffffu;
	for (i = 0; i < DVX_ARRAY_SIZE(lens); i++) {
		if (lens[i] > DVX_MLX5_MAX_INLINE)
			assert_int_equal(dvx_mlx5_wqe_rdma_write_inline(&r.wq, IDX, 0x08, SIG, 0,
									&(struct dvx_mlx5_raddr){
										RADDR, RKEY },
									payload, lens[i]),
					 -EMSGSIZE);
		if (lens[i] > 63 * 16 - 16 - 4)
			assert_int_equal(dvx_mlx5_wqe_send_inline(&r.wq, IDX, 0x0a, SIG, 0, payload,
								  lens[i]), -EMSGSIZE);
	}
	assert_untouched(&r);
	/* send's own largest payload: ds 1 + 62 = 63 */
	assert_int_equal(dvx_mlx5_wqe_send_inline(&r.wq, IDX, 0x0a, SIG, 0, payload, 988), 16);
	assert_int_equal(r.buf[(IDX % NWQEBB) * 64 + 7], 63);
	ring_close(&r);
}

/* ---- atomics (prm 2.4) ---- */

static void test_atomic_std(void **state)
{
	struct t_ring r;

	(void)state;
	ring_open(&r, NWQEBB, QPN, 64);
	/* compare-swap: swap_add = new value, compare = expected */
	assert_int_equal(dvx_mlx5_wqe_atomic_cs(&r.wq, IDX, SIG,
						&(struct dvx_mlx5_raddr){ RADDR, RKEY },
						0x3333333344444444ull, 0x1111111122222222ull, LADDR,
						LKEY),
			 1);
	assert_wqe_hex(&r, IDX, CTRL_HEX("00", "11", "04", "00 00 00 00") RADDR_HEX
		       "11 11 11 11 22 22 22 22 33 33 33 33 44 44 44 44"
		       DATA_HEX("00 00 00 08"));
	/* fetch-add: swap_add = addend, compare 0 */
	ring_poison(&r, T_POISON);
	assert_int_equal(dvx_mlx5_wqe_atomic_fa(&r.wq, IDX, SIG, RADDR, RKEY,
						0x0123456789abcdefull, LADDR, LKEY), 1);
	assert_wqe_hex(&r, IDX, CTRL_HEX("00", "12", "04", "00 00 00 00") RADDR_HEX
		       "01 23 45 67 89 ab cd ef 00 00 00 00 00 00 00 00"
		       DATA_HEX("00 00 00 08"));
	ring_close(&r);
}

static void test_atomic_masked(void **state)
{
	struct t_ring r;

	(void)state;
	ring_open(&r, NWQEBB, QPN, 64);
	/* masked FA 4 B: add_data BE32, field_boundary BE32, 8 reserved bytes; data 4 B */
	assert_int_equal(dvx_mlx5_wqe_masked_fa32(&r.wq, IDX, SIG,
						  &(struct dvx_mlx5_raddr){ RADDR, RKEY },
						  0x89abcdefu, 0x80008000u, LADDR, LKEY),
			 1);
	assert_wqe_hex(&r, IDX, CTRL_HEX("08", "15", "04", "00 00 00 00") RADDR_HEX
		       "89 ab cd ef 80 00 80 00 00 00 00 00 00 00 00 00"
		       DATA_HEX("00 00 00 04"));
	/* masked FA 8 B: add_data BE64, field_boundary BE64; data 8 B */
	ring_poison(&r, T_POISON);
	assert_int_equal(dvx_mlx5_wqe_masked_fa64(&r.wq, IDX, SIG,
						  &(struct dvx_mlx5_raddr){ RADDR, RKEY },
						  0xf0e0d0c0b0a09080ull, 0x8000000080000001ull,
						  LADDR, LKEY),
			 1);
	assert_wqe_hex(&r, IDX, CTRL_HEX("09", "15", "04", "00 00 00 00") RADDR_HEX
		       "f0 e0 d0 c0 b0 a0 90 80 80 00 00 00 80 00 00 01"
		       DATA_HEX("00 00 00 08"));
	/* masked CS 4 B: swap, compare, swap_mask, compare_mask (BE32 each); data 4 B */
	ring_poison(&r, T_POISON);
	assert_int_equal(dvx_mlx5_wqe_masked_cs32(&r.wq, IDX, SIG,
						  &(struct dvx_mlx5_raddr){ RADDR, RKEY },
						  &(struct dvx_mlx5_masked_cs){
							  0xc0c1c2c3u, 0x0f0e0d0cu, 0x12131415u,
							  0xff00fe01u },
						  LADDR, LKEY),
			 1);
	assert_wqe_hex(&r, IDX, CTRL_HEX("08", "14", "04", "00 00 00 00") RADDR_HEX
		       "12 13 14 15 c0 c1 c2 c3 ff 00 fe 01 0f 0e 0d 0c"
		       DATA_HEX("00 00 00 04"));
	/* masked CS 8 B: {swap, compare} {swap_mask, compare_mask}; ds 5 = 80 B, 2 WQEBBs */
	ring_poison(&r, T_POISON);
	assert_int_equal(dvx_mlx5_wqe_masked_cs64(&r.wq, IDX, SIG,
						  &(struct dvx_mlx5_raddr){ RADDR, RKEY },
						  &(struct dvx_mlx5_masked_cs){
							  0x1111111111111111ull,
							  0x2222222222222222ull,
							  0x3333333333333333ull,
							  0x4444444444444444ull },
						  LADDR, LKEY),
			 2);
	assert_wqe_hex(&r, IDX, CTRL_HEX("09", "14", "05", "00 00 00 00") RADDR_HEX
		       "33 33 33 33 33 33 33 33 11 11 11 11 11 11 11 11"
		       "44 44 44 44 44 44 44 44 22 22 22 22 22 22 22 22"
		       DATA_HEX("00 00 00 08"));
	ring_close(&r);
}

/* ---- core-direct (prm 2.7) ---- */

static void test_wait_enable(void **state)
{
	static const uint8_t bad_ops[] = { 0x00, 0x0f, 0x08, 0x15, 0x18, 0xff };
	struct t_ring r;
	size_t i;

	(void)state;
	ring_open(&r, NWQEBB, QPN, 64);
	assert_int_equal(dvx_mlx5_wqe_wait_cq(&r.wq, IDX, SIG, 0x00fedcba, 0x00123456), 1);
	assert_wqe_hex(&r, IDX, CTRL_HEX("00", "0f", "02", "00 00 00 00")
		       "00 00 00 00 00 00 00 00 00 12 34 56 00 fe dc ba");
	ring_poison(&r, T_POISON);
	assert_int_equal(dvx_mlx5_wqe_send_en(&r.wq, IDX, SIG, 0x00654321, 0xbeef), 1);
	assert_wqe_hex(&r, IDX, CTRL_HEX("00", "17", "02", "00 00 00 00")
		       "00 00 00 00 00 00 00 00 00 00 be ef 00 65 43 21");
	ring_poison(&r, T_POISON);
	assert_int_equal(dvx_mlx5_wqe_recv_en(&r.wq, IDX, SIG, 0x00654321, 0xbeef), 1);
	assert_wqe_hex(&r, IDX, CTRL_HEX("00", "16", "02", "00 00 00 00")
		       "00 00 00 00 00 00 00 00 00 00 be ef 00 65 43 21");
	ring_poison(&r, T_POISON);
	for (i = 0; i < sizeof(bad_ops); i++)
		assert_int_equal(dvx_mlx5_wqe_enable(&r.wq, IDX, bad_ops[i], SIG, 1, 1), -EINVAL);
	assert_untouched(&r);
	ring_close(&r);
}

/* ---- ctrl index and position ---- */

/* the ctrl carries idx & 0xffff; the WQE sits at WQEBB idx mod nwqebb */
static void test_index_encoding(void **state)
{
	static const uint32_t idxs[] = { 0, 1, 0xff, 0x100, 0xffff, 0x10000, 0x12345, 0xfffffffe,
					 0xffffffffu };
	struct t_ring r;
	size_t i;

	(void)state;
	ring_open(&r, 8, 0xffffff, 64);
	for (i = 0; i < DVX_ARRAY_SIZE(idxs); i++) {
		uint8_t want[16];

		ring_poison(&r, T_POISON);
		assert_int_equal(dvx_mlx5_wqe_nop(&r.wq, idxs[i], 0), 1);
		t_ctrl(want, 0, idxs[i] & 0xffff, 0, 0xffffff, 1, 0, 0);
		assert_ring_wqe(r.buf, r.bytes, idxs[i], want, 16, T_POISON);
		assert_int_equal(r.buf[(idxs[i] & 7) * 64 + 1], (idxs[i] >> 8) & 0xff);
		assert_int_equal(r.buf[(idxs[i] & 7) * 64 + 2], idxs[i] & 0xff);
	}
	ring_close(&r);
}

/* the segment setters on their own */
static void test_setters(void **state)
{
	uint8_t buf[64] DVX_ALIGNED(16);

	(void)state;
	memset(buf, T_POISON, sizeof(buf));
	dvx_mlx5_set_ctrl_seg((void *)buf, 0x3abcd, 0x25, 0xa7, 0x00a0b0c0, 0x3f, 0xe2, IMM);
	assert_hex(buf, "a7 ab cd 25 a0 b0 c0 3f 00 00 00 e2 de ad be ef");
	assert_fill(buf, 16, 64, T_POISON);
	/* ds is 6 bits: wider values must not leak into the QPN */
	dvx_mlx5_set_ctrl_seg((void *)buf, 0, 0, 0, 0x123456, 0x40 | 5, 0, 0);
	assert_hex(buf, "00 00 00 00 12 34 56 05 00 00 00 00 00 00 00 00");
	memset(buf, T_POISON, sizeof(buf));
	dvx_mlx5_set_raddr_seg((void *)buf, RADDR, RKEY);
	assert_hex(buf, RADDR_HEX);
	dvx_mlx5_set_data_seg((void *)(buf + 16), LADDR, LKEY, LEN);
	assert_hex(buf + 16, DATA_HEX("00 01 23 45"));
	dvx_mlx5_set_atomic_seg((void *)(buf + 32), 0x0102030405060708ull, 0x1112131415161718ull);
	assert_hex(buf + 32, "01 02 03 04 05 06 07 08 11 12 13 14 15 16 17 18");
	dvx_mlx5_set_wait_seg((void *)(buf + 48), 0x00abcdef, 0x00123456);
	assert_hex(buf + 48, "00 00 00 00 00 00 00 00 00 ab cd ef 00 12 34 56");
}

/* ---- wq_init ---- */

static void test_wq_init(void **state)
{
	uint8_t *ring = t_ring_alloc(64u << 15, 0);
	struct dvx_mlx5_wq wq, before;

	(void)state;
	memset(&wq, 0x77, sizeof(wq));
	before = wq;
	assert_int_equal(dvx_mlx5_wq_init(&wq, NULL, 8, 1, 0), -EINVAL);
	assert_int_equal(dvx_mlx5_wq_init(&wq, ring, 0, 1, 0), -EINVAL);
	assert_int_equal(dvx_mlx5_wq_init(&wq, ring, 3, 1, 0), -EINVAL);
	assert_int_equal(dvx_mlx5_wq_init(&wq, ring, 12, 1, 0), -EINVAL);
	assert_int_equal(dvx_mlx5_wq_init(&wq, ring, 1u << 16, 1, 0), -EINVAL);
	assert_int_equal(dvx_mlx5_wq_init(&wq, ring + 32, 8, 1, 0), -EINVAL);
	assert_int_equal(dvx_mlx5_wq_init(&wq, ring + 8, 8, 1, 0), -EINVAL);
	assert_int_equal(dvx_mlx5_wq_init(&wq, ring, 8, 0x1000000, 0), -EINVAL);
	assert_int_equal(dvx_mlx5_wq_init(&wq, ring, 8, 1, DVX_MLX5_MAX_INLINE + 1), -EINVAL);
	assert_memory_equal(&wq, &before, sizeof(wq));

	assert_int_equal(dvx_mlx5_wq_init(&wq, ring, 1, 0xffffff, DVX_MLX5_MAX_INLINE), 0);
	assert_ptr_equal(wq.buf, ring);
	assert_int_equal(wq.size_mask, 63);
	assert_int_equal(wq.qpn, 0xffffff);
	assert_int_equal(wq.max_inline, DVX_MLX5_MAX_INLINE);
	assert_int_equal(dvx_mlx5_wq_init(&wq, ring, 1u << 15, 0, 0), 0);
	assert_int_equal(wq.size_mask, (64u << 15) - 1);
	assert_int_equal(dvx_mlx5_wq_init(&wq, ring + 64, 2, 5, 7), 0);
	assert_int_equal(wq.size_mask, 127);
	assert_int_equal(wq.qpn, 5);
	assert_int_equal(wq.max_inline, 7);
	dvx_test_free(ring);
}

/* every builder on a QPN with all 24 bits set keeps ds and QPN apart */
static void test_qpn_full_width(void **state)
{
	struct t_ring r;
	uint8_t *c;

	(void)state;
	ring_open(&r, NWQEBB, 0xffffff, 64);
	c = r.buf + (IDX % NWQEBB) * 64;
	dvx_mlx5_wqe_masked_cs64(&r.wq, IDX, 0, &(struct dvx_mlx5_raddr){ 0, 0 },
				 &(struct dvx_mlx5_masked_cs){ 0, 0, 0, 0 }, 0, 0);
	assert_hex(c + 4, "ff ff ff 05");
	dvx_mlx5_wqe_wait_cq(&r.wq, IDX, 0, 0, 0);
	assert_hex(c + 4, "ff ff ff 02");
	dvx_mlx5_wqe_nop(&r.wq, IDX, 0);
	assert_hex(c + 4, "ff ff ff 01");
	ring_close(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_constants),
		cmocka_unit_test(test_fm_ce_se_values),
		cmocka_unit_test(test_fm_ce_se_in_wqe),
		cmocka_unit_test(test_example_a_rdma_write),
		cmocka_unit_test(test_example_b_inline_write),
		cmocka_unit_test(test_example_c_fetch_add),
		cmocka_unit_test(test_example_d_wait),
		cmocka_unit_test(test_nop),
		cmocka_unit_test(test_rdma_single),
		cmocka_unit_test(test_rdma_len0),
		cmocka_unit_test(test_rdma_errors),
		cmocka_unit_test(test_rdma_sgl),
		cmocka_unit_test(test_rdma_sgl_sizes),
		cmocka_unit_test(test_send),
		cmocka_unit_test(test_send_sgl),
		cmocka_unit_test(test_inline_all_lengths),
		cmocka_unit_test(test_inline_ds_boundaries),
		cmocka_unit_test(test_inline_zero),
		cmocka_unit_test(test_inline_errors),
		cmocka_unit_test(test_inline_unbounded_ring),
		cmocka_unit_test(test_atomic_std),
		cmocka_unit_test(test_atomic_masked),
		cmocka_unit_test(test_wait_enable),
		cmocka_unit_test(test_index_encoding),
		cmocka_unit_test(test_setters),
		cmocka_unit_test(test_wq_init),
		cmocka_unit_test(test_qpn_full_width),
	};

	return cmocka_run_group_tests_name("mlx5-wqe", tests, NULL, NULL);
}
