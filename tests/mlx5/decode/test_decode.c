// SPDX-License-Identifier: MIT
/*
 * WQE/CQE decoder: the worked examples of prm 2.8 from literal bytes, malformed
 * WQEs, the text formats, CQEs of every sort, the name tables, and rdma-core's
 * mlx5dv.h as a second opinion on the bytes where it is installed.
 */
#include "../../lib/dvx_test.h"

#include <errno.h>

#include <dvx/mlx5/decode.h>

#if defined(__has_include)
#if __has_include(<infiniband/mlx5dv.h>)
#include <infiniband/mlx5dv.h>
#define HAVE_MLX5DV 1
#endif
#endif
#ifndef HAVE_MLX5DV
#define HAVE_MLX5DV 0
#endif

static uint8_t ring[64 * 64] DVX_ALIGNED(64);
static struct dvx_mlx5_wqe_desc d;
static char text[16384];

/* @hex into a zeroed ring of @nwqebb WQEBBs, starting at WQEBB @slot (wrapping) */
static void load(const char *hex, uint32_t nwqebb, uint32_t slot)
{
	uint8_t tmp[2048];
	size_t n = dvx_test_hex(hex, tmp, sizeof(tmp)), i;

	assert_true(n <= sizeof(tmp));
	memset(ring, 0, sizeof(ring));
	for (i = 0; i < n; i++)
		ring[(slot * 64 + i) % (nwqebb * 64)] = tmp[i];
}

static const char *format_wqe(void)
{
	size_t n = dvx_mlx5_wqe_format(&d, text, sizeof(text));

	assert_true(n < sizeof(text));
	assert_int_equal(strlen(text), n);
	return text;
}

/* @line (a whole line, without '\n') appears in @s */
static void assert_line(const char *s, const char *line)
{
	size_t n = strlen(line);
	const char *p = s;

	while ((p = strstr(p, line)) != NULL) {
		if ((p == s || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0'))
			return;
		p += n;
	}
	print_error("line '%s' not found in:\n%s\n", line, s);
	fail();
}

static void assert_no_line_starting(const char *s, const char *prefix)
{
	const char *p = s;

	while ((p = strstr(p, prefix)) != NULL) {
		if (p == s || p[-1] == '\n') {
			print_error("unexpected line '%s...' in:\n%s\n", prefix, s);
			fail();
		}
		p++;
	}
}

/* ---- prm 2.8 worked examples ---- */

#define EXAMPLE_A \
	"00 00 05 08  00 01 23 03  00 00 00 08  00 00 00 00" \
	"00 00 00 00 00 00 10 00  00 00 56 78  00 00 00 00" \
	"00 00 10 00  00 00 12 34  00 00 00 00 00 00 00 40"

static void test_example_a_write(void **state)
{
	(void)state;
	load(EXAMPLE_A, 1, 0);
	assert_int_equal(dvx_mlx5_wqe_decode(ring, 64, 0, &d), 1);
	assert_int_equal(d.kind, DVX_MLX5_KIND_RDMA);
	assert_int_equal(d.opcode, DVX_MLX5_OPCODE_RDMA_WRITE);
	assert_int_equal(d.opmod, 0);
	assert_int_equal(d.idx, 5);
	assert_int_equal(d.qpn, 0x123);
	assert_int_equal(d.ds, 3);
	assert_int_equal(d.nwqebb, 1);
	assert_int_equal(d.signature, 0);
	assert_int_equal(d.fm_ce_se, DVX_MLX5_WQE_CTRL_CQ_UPDATE);
	assert_int_equal(d.imm, 0);
	assert_true(d.raddr == 0x1000);
	assert_int_equal(d.rkey, 0x5678);
	assert_int_equal(d.is_inline, 0);
	assert_int_equal(d.nsge, 1);
	assert_int_equal(d.sge[0].length, 4096);
	assert_int_equal(d.sge[0].lkey, 0x1234);
	assert_true(d.sge[0].addr == 0x40);
	assert_int_equal(d.error, 0);

	/* the full text, golden */
	assert_string_equal(format_wqe(),
			    "opcode: RDMA_WRITE (0x08)\n"
			    "opmod: 0x00\n"
			    "wqe_index: 5\n"
			    "qpn: 0x000123\n"
			    "ds: 3\n"
			    "wqebbs: 1\n"
			    "signature: 0x00\n"
			    "fence: none (0)\n"
			    "completion: always (2)\n"
			    "solicited: 0\n"
			    "imm: 0x00000000\n"
			    "raddr: 0x0000000000001000\n"
			    "rkey: 0x00005678\n"
			    "inline: 0\n"
			    "sge_count: 1\n"
			    "sge[0].byte_count: 4096\n"
			    "sge[0].lkey: 0x00001234\n"
			    "sge[0].addr: 0x0000000000000040\n");
}

static void test_example_b_write_inline(void **state)
{
	(void)state;
	load("00 00 05 08  00 01 23 03  00 00 00 08  00 00 00 00"
	     "00 00 00 00 00 00 10 00  00 00 56 78  00 00 00 00"
	     "80 00 00 08  11 22 33 44 55 66 77 88  00 00 00 00", 1, 0);
	assert_int_equal(dvx_mlx5_wqe_decode(ring, 64, 0, &d), 1);
	assert_int_equal(d.kind, DVX_MLX5_KIND_RDMA);
	assert_int_equal(d.opcode, DVX_MLX5_OPCODE_RDMA_WRITE);
	assert_int_equal(d.idx, 5);
	assert_int_equal(d.qpn, 0x123);
	assert_int_equal(d.ds, 3);
	assert_int_equal(d.fm_ce_se, 0x08);
	assert_true(d.raddr == 0x1000);
	assert_int_equal(d.rkey, 0x5678);
	assert_int_equal(d.is_inline, 1);
	assert_int_equal(d.inline_len, 8);
	assert_int_equal(d.nsge, 0);
	assert_bytes_equal(d.inline_data, "\x11\x22\x33\x44\x55\x66\x77\x88", 8);
	format_wqe();
	assert_line(text, "inline: 1");
	assert_line(text, "inline_len: 8");
	assert_line(text, "inline_data: 1122334455667788");
	assert_no_line_starting(text, "sge");
}

static void test_example_c_fetch_add(void **state)
{
	(void)state;
	load("00 00 05 12  00 01 23 04  00 00 00 08  00 00 00 00"
	     "00 00 00 00 00 00 10 00  00 00 56 78  00 00 00 00"
	     "00 00 00 00 00 00 00 01  00 00 00 00 00 00 00 00"
	     "00 00 00 08  00 00 ab cd  00 00 00 00 00 00 00 00", 1, 0);
	assert_int_equal(dvx_mlx5_wqe_decode(ring, 64, 0, &d), 1);
	assert_int_equal(d.kind, DVX_MLX5_KIND_ATOMIC);
	assert_int_equal(d.opcode, DVX_MLX5_OPCODE_ATOMIC_FA);
	assert_int_equal(d.opmod, 0);
	assert_int_equal(d.idx, 5);
	assert_int_equal(d.qpn, 0x123);
	assert_int_equal(d.ds, 4);
	assert_int_equal(d.nwqebb, 1);
	assert_int_equal(d.fm_ce_se, 0x08);
	assert_true(d.raddr == 0x1000);
	assert_int_equal(d.rkey, 0x5678);
	assert_int_equal(d.atomic_size, 8);
	assert_true(d.swap_add == 1);
	assert_true(d.compare == 0);
	assert_int_equal(d.nsge, 1);
	assert_int_equal(d.sge[0].length, 8);
	assert_int_equal(d.sge[0].lkey, 0xabcd);
	assert_true(d.sge[0].addr == 0);
	format_wqe();
	assert_line(text, "opcode: ATOMIC_FA (0x12)");
	assert_line(text, "atomic_size: 8");
	assert_line(text, "add: 0x0000000000000001");
	assert_line(text, "sge[0].byte_count: 8");
	assert_line(text, "sge[0].lkey: 0x0000abcd");
}

static void test_example_d_wait(void **state)
{
	(void)state;
	load("00 00 07 0F  00 02 34 02  00 00 00 08  00 00 00 00"
	     "00 00 00 00 00 00 00 00  00 00 00 05  00 00 00 4A", 1, 0);
	assert_int_equal(dvx_mlx5_wqe_decode(ring, 64, 0, &d), 1);
	assert_int_equal(d.kind, DVX_MLX5_KIND_WAIT);
	assert_int_equal(d.opcode, DVX_MLX5_OPCODE_WAIT);
	assert_int_equal(d.opmod, DVX_MLX5_OPMOD_WAIT_CQ_PI);
	assert_int_equal(d.idx, 7);
	assert_int_equal(d.qpn, 0x234);
	assert_int_equal(d.ds, 2);
	assert_int_equal(d.fm_ce_se, 0x08);
	assert_int_equal(d.wait_max_index, 5);
	assert_int_equal(d.wait_qpn_cqn, 0x4a);
	format_wqe();
	assert_line(text, "opcode: WAIT (0x0f)");
	assert_line(text, "wait_on: cq (0)");
	assert_line(text, "wait_max_index: 5");
	assert_line(text, "wait_cqn: 0x00004a");
	assert_no_line_starting(text, "slave_qpn");
}

/* the same four examples built with rdma-core's setters: a decoder-independent writer */
static void test_mlx5dv_second_opinion(void **state)
{
#if HAVE_MLX5DV
	struct mlx5_wqe_ctrl_seg *c = (struct mlx5_wqe_ctrl_seg *)ring;
	struct mlx5_wqe_raddr_seg *r = (struct mlx5_wqe_raddr_seg *)(ring + 16);
	struct mlx5_wqe_atomic_seg *a = (struct mlx5_wqe_atomic_seg *)(ring + 32);
	uint8_t want[64];

	(void)state;
	memset(ring, 0, sizeof(ring));
	mlx5dv_set_ctrl_seg(c, 5, MLX5_OPCODE_RDMA_WRITE, 0, 0x123, MLX5_WQE_CTRL_CQ_UPDATE, 3,
			    0, 0);
	r->raddr = htobe64(0x1000);
	r->rkey = htobe32(0x5678);
	mlx5dv_set_data_seg((struct mlx5_wqe_data_seg *)(ring + 32), 4096, 0x1234, 0x40);
	assert_int_equal(dvx_test_hex(EXAMPLE_A, want, sizeof(want)), 48);
	assert_bytes_equal(ring, want, 48);	/* prm and rdma-core agree */
	assert_int_equal(dvx_mlx5_wqe_decode(ring, 64, 0, &d), 1);
	assert_int_equal(d.sge[0].length, 4096);

	/* RDMA_WRITE_IMM: rdma-core takes the immediate already big-endian */
	memset(ring, 0, sizeof(ring));
	mlx5dv_set_ctrl_seg(c, 0xfffe, MLX5_OPCODE_RDMA_WRITE_IMM, 0, 0xabcdef,
			    MLX5_WQE_CTRL_CQ_UPDATE | MLX5_WQE_CTRL_SOLICITED | MLX5_WQE_CTRL_FENCE,
			    3, 0, htobe32(0xdeadbeef));
	r->raddr = htobe64(0x0123456789abcdefull);
	r->rkey = htobe32(0x11223344);
	mlx5dv_set_data_seg((struct mlx5_wqe_data_seg *)(ring + 32), 0x7fffffff, 0x55667788,
			    0x1000);
	assert_int_equal(dvx_mlx5_wqe_decode(ring, 64, 0, &d), 1);
	assert_int_equal(d.opcode, DVX_MLX5_OPCODE_RDMA_WRITE_IMM);
	assert_int_equal(d.idx, 0xfffe);
	assert_int_equal(d.qpn, 0xabcdef);
	assert_int_equal(d.imm, 0xdeadbeef);
	assert_int_equal(d.fm_ce_se, 0x80 | 0x08 | 0x02);
	assert_true(d.raddr == 0x0123456789abcdefull);
	assert_int_equal(d.rkey, 0x11223344);
	assert_int_equal(d.sge[0].length, 0x7fffffff);
	assert_int_equal(d.sge[0].lkey, 0x55667788);
	format_wqe();
	assert_line(text, "fence: fence_and_initiator_small (4)");
	assert_line(text, "solicited: 1");

	/* ATOMIC_CS */
	memset(ring, 0, sizeof(ring));
	mlx5dv_set_ctrl_seg(c, 9, MLX5_OPCODE_ATOMIC_CS, 0, 1, 0, 4, 0, 0);
	r->raddr = htobe64(0x8);
	r->rkey = htobe32(2);
	a->swap_add = htobe64(0x1111111122222222ull);
	a->compare = htobe64(0x3333333344444444ull);
	mlx5dv_set_data_seg((struct mlx5_wqe_data_seg *)(ring + 48), 8, 3, 0x40);
	assert_int_equal(dvx_mlx5_wqe_decode(ring, 64, 0, &d), 1);
	assert_true(d.swap_add == 0x1111111122222222ull);
	assert_true(d.compare == 0x3333333344444444ull);
	assert_int_equal(d.sge[0].lkey, 3);
	format_wqe();
	assert_line(text, "swap: 0x1111111122222222");
	assert_line(text, "compare: 0x3333333344444444");
	assert_line(text, "completion: error_only (0)");
#else
	(void)state;
	skip();
#endif
}

/* rdma-core's error CQE layout, parsed by dvx and formatted */
static void test_mlx5dv_err_cqe(void **state)
{
#if HAVE_MLX5DV
	struct mlx5_err_cqe e;
	struct dvx_mlx5_cqe64 cqe;
	struct dvx_mlx5_cqe_info info;
	int err;

	(void)state;
	memset(&e, 0, sizeof(e));
	e.syndrome = MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR;
	e.vendor_err_synd = 0x88;
	e.s_wqe_opcode_qpn = htobe32((uint32_t)MLX5_OPCODE_RDMA_WRITE << 24 | 0x000123);
	e.wqe_counter = htobe16(5);
	e.op_own = MLX5_CQE_REQ_ERR << 4 | 1;
	assert_int_equal(sizeof(e), sizeof(cqe));
	memcpy(&cqe, &e, sizeof(cqe));
	err = dvx_mlx5_cqe_parse(&cqe, &info);
	assert_int_equal(err, -EPERM);
	dvx_mlx5_cqe_format(&info, err, text, sizeof(text));
	assert_line(text, "syndrome: REMOTE_ACCESS_ERR (0x13)");
	assert_line(text, "vendor_syndrome: 0x88");
	assert_line(text, "failed_wqe_opcode: RDMA_WRITE (0x08)");
	assert_line(text, "failed_wqe_qpn: 0x000123");
	assert_line(text, "failed_wqe_index: 5");
	assert_line(text, "owner: 1");
#else
	(void)state;
	skip();
#endif
}

/* ---- wrapping ---- */

/* a masked CS 8 B (2 WQEBBs) starting in the last WQEBB continues at WQEBB 0 */
static void test_wrap_two_wqebbs(void **state)
{
	uint32_t n;

	(void)state;
	for (n = 2; n <= 64; n *= 2) {
		load("09 00 07 14  00 00 01 05  00 00 00 08  00 00 00 00"
		     "00 00 00 00 00 00 20 00  00 00 00 0a  00 00 00 00"
		     "00 00 00 00 00 00 00 02  00 00 00 00 00 00 00 01"	/* swap, compare */
		     "00 00 00 00 00 00 00 f0  00 00 00 00 00 00 00 ff"	/* the masks */
		     "00 00 00 08  00 00 00 0b  00 00 00 00 00 00 00 c0",	/* -> WQEBB 0 */
		     n, n - 1);
		assert_int_equal(dvx_mlx5_wqe_decode(ring, n * 64, n - 1, &d), 2);
		/* the index is taken modulo the ring */
		assert_int_equal(dvx_mlx5_wqe_decode(ring, n * 64, 2 * n - 1, &d), 2);
		assert_int_equal(d.kind, DVX_MLX5_KIND_MASKED_ATOMIC);
		assert_int_equal(d.atomic_size, 8);
		assert_true(d.swap_add == 2 && d.compare == 1);
		assert_true(d.swap_mask == 0xf0 && d.compare_mask == 0xff);
		assert_int_equal(d.nsge, 1);
		assert_int_equal(d.sge[0].length, 8);
		assert_int_equal(d.sge[0].lkey, 0xb);
		assert_true(d.sge[0].addr == 0xc0);
		/* the data segment really sits at the start of the ring */
		assert_int_equal(ring[3], 8);
	}
}

/* an inline payload that crosses the ring end mid-segment */
static void test_wrap_inline_bytes(void **state)
{
	char hex[1024];
	uint32_t i, len = 40;	/* header at 0x20 of the last WQEBB, payload runs on */
	int pos;

	(void)state;
	pos = snprintf(hex, sizeof(hex),
		       "00 00 01 08  00 00 01 05  00 00 00 00  00 00 00 00"
		       "00 00 00 00 00 00 00 00  00 00 00 01  00 00 00 00"
		       "80 00 00 %02x", len);
	for (i = 0; i < len; i++)
		pos += snprintf(hex + pos, sizeof(hex) - (size_t)pos, " %02x", i + 1);
	load(hex, 2, 1);
	assert_int_equal(dvx_mlx5_wqe_decode(ring, 128, 1, &d), 2);
	assert_int_equal(d.idx, 1);
	assert_int_equal(d.inline_len, len);
	for (i = 0; i < len; i++)
		assert_int_equal(d.inline_data[i], i + 1);
}

/* ---- malformed ---- */

static void expect_bad(const char *hex, uint32_t nwqebb, enum dvx_mlx5_wqe_err why)
{
	load(hex, nwqebb, 0);
	assert_int_equal(dvx_mlx5_wqe_decode(ring, nwqebb * 64, 0, &d), -EBADMSG);
	if (d.error != why) {
		print_error("error %u (%s), want %u (%s) for %s\n", d.error,
			    dvx_mlx5_wqe_error_str(d.error), why,
			    dvx_mlx5_wqe_error_str((uint8_t)why), hex);
		fail();
	}
	format_wqe();
	assert_non_null(strstr(text, "\nerror: "));
}

static void test_malformed(void **state)
{
	(void)state;
	/* ds 0: also what an all-zero WQEBB is */
	expect_bad("00", 1, DVX_MLX5_WQE_ERR_DS_ZERO);
	expect_bad("00 00 05 08  00 01 23 00", 1, DVX_MLX5_WQE_ERR_DS_ZERO);
	/* ds too small for the fixed segments */
	expect_bad("00 00 05 08  00 01 23 01", 1, DVX_MLX5_WQE_ERR_DS_SHORT);	/* write */
	assert_no_line_starting(text, "raddr");		/* not read: not printed */
	expect_bad("00 00 05 10  00 01 23 01", 1, DVX_MLX5_WQE_ERR_DS_SHORT);	/* read */
	expect_bad("00 00 05 11  00 01 23 03", 1, DVX_MLX5_WQE_ERR_DS_SHORT);	/* CS */
	expect_bad("00 00 05 12  00 01 23 02", 1, DVX_MLX5_WQE_ERR_DS_SHORT);	/* FA */
	expect_bad("09 00 05 14  00 01 23 04", 2, DVX_MLX5_WQE_ERR_DS_SHORT);	/* mCS 8 B */
	expect_bad("08 00 05 15  00 01 23 03", 1, DVX_MLX5_WQE_ERR_DS_SHORT);	/* mFA 4 B */
	expect_bad("00 00 05 0f  00 01 23 01", 1, DVX_MLX5_WQE_ERR_DS_SHORT);	/* WAIT */
	expect_bad("00 00 05 17  00 01 23 01", 1, DVX_MLX5_WQE_ERR_DS_SHORT);	/* SEND_EN */
	expect_bad("01 00 05 0f  00 01 23 01", 1, DVX_MLX5_WQE_ERR_DS_SHORT);	/* WAIT data */
	/* ds too large for fixed layouts */
	expect_bad("00 00 05 12  00 01 23 05", 2, DVX_MLX5_WQE_ERR_DS_LONG);
	expect_bad("08 00 05 14  00 01 23 05", 2, DVX_MLX5_WQE_ERR_DS_LONG);	/* mCS 4 B */
	expect_bad("00 00 05 16  00 01 23 03", 1, DVX_MLX5_WQE_ERR_DS_LONG);	/* RECV_EN */
	/* the WQE would be larger than the ring */
	expect_bad("00 00 05 0a  00 01 23 05", 1, DVX_MLX5_WQE_ERR_DS_RING);
	assert_no_line_starting(text, "inline");
	/* inline: length past ds (ds 3 leaves 28 bytes), and units left over after it */
	expect_bad("00 00 05 08  00 01 23 03  00 00 00 08  00 00 00 00"
		   "00 00 00 00 00 00 10 00  00 00 56 78  00 00 00 00"
		   "80 00 00 1d", 1, DVX_MLX5_WQE_ERR_INLINE_LEN);
	assert_int_equal(d.inline_len, 29);
	assert_int_equal(d.inline_data[27], 0);	/* the 28 bytes within ds were read */
}

static void test_malformed_more(void **state)
{
	(void)state;
	expect_bad("00 00 05 0a  00 01 23 02  00 00 00 00  00 00 00 00"
		   "80 00 00 0d", 1, DVX_MLX5_WQE_ERR_INLINE_LEN);		/* 13 > 12 */
	expect_bad("00 00 05 0a  00 01 23 04  00 00 00 00  00 00 00 00"
		   "80 00 00 04", 1, DVX_MLX5_WQE_ERR_DS_LONG);		/* 1 unit needed */
	expect_bad("00 00 05 10  00 01 23 03  00 00 00 00  00 00 00 00"
		   "00 00 00 00 00 00 00 00  00 00 00 01  00 00 00 00"
		   "80 00 00 04", 1, DVX_MLX5_WQE_ERR_INLINE_READ);
	/* a data segment after the first with bit 31 set */
	expect_bad("00 00 05 0a  00 01 23 03  00 00 00 00  00 00 00 00"
		   "00 00 00 10  00 00 00 01  00 00 00 00 00 00 00 00"
		   "80 00 00 10  00 00 00 01  00 00 00 00 00 00 00 00", 1,
		   DVX_MLX5_WQE_ERR_BYTE_COUNT);
	/* masked atomics with an opmod that is not 0x08/0x09 */
	expect_bad("00 00 05 14  00 01 23 04", 1, DVX_MLX5_WQE_ERR_OPMOD);
	expect_bad("0a 00 05 15  00 01 23 04", 1, DVX_MLX5_WQE_ERR_OPMOD);
	/* unknown opcodes, and named ones dvx does not decode */
	expect_bad("00 00 05 02  00 01 23 01", 1, DVX_MLX5_WQE_ERR_OPCODE);
	expect_bad("00 00 05 ff  00 01 23 01", 1, DVX_MLX5_WQE_ERR_OPCODE);
	assert_line(text, "opcode: UNKNOWN (0xff)");
	expect_bad("00 00 05 23  00 01 23 02", 1, DVX_MLX5_WQE_ERR_UNDECODED);
	assert_line(text, "opcode: DUMP (0x23)");
	expect_bad("00 00 05 25  00 01 23 02", 1, DVX_MLX5_WQE_ERR_UNDECODED);
	/* what was read before the error stays in the desc */
	assert_int_equal(d.idx, 5);
	assert_int_equal(d.qpn, 0x123);
}

static void test_bad_arguments(void **state)
{
	(void)state;
	memset(ring, 0, sizeof(ring));
	assert_int_equal(dvx_mlx5_wqe_decode(NULL, 64, 0, &d), -EINVAL);
	assert_int_equal(dvx_mlx5_wqe_decode(ring, 64, 0, NULL), -EINVAL);
	assert_int_equal(dvx_mlx5_wqe_decode(ring, 0, 0, &d), -EINVAL);
	assert_int_equal(dvx_mlx5_wqe_decode(ring, 32, 0, &d), -EINVAL);
	assert_int_equal(dvx_mlx5_wqe_decode(ring, 96, 0, &d), -EINVAL);
	assert_int_equal(dvx_mlx5_wqe_decode(ring, 192, 0, &d), -EINVAL);
}

/* things that decode fine: NOP padding, zero-length and INVALID_LKEY segments, WAIT on
 * data kept raw, SEND_INVAL's rkey, an inline of length 0 */
static void test_accepted_oddities(void **state)
{
	(void)state;
	load("00 00 05 00  00 01 23 04", 1, 0);		/* NOP ds 4 */
	assert_int_equal(dvx_mlx5_wqe_decode(ring, 64, 0, &d), 1);
	assert_int_equal(d.kind, DVX_MLX5_KIND_NOP);

	load("00 00 05 0a  00 01 23 01", 1, 0);		/* SEND without data */
	assert_int_equal(dvx_mlx5_wqe_decode(ring, 64, 0, &d), 1);
	assert_int_equal(d.nsge, 0);
	assert_int_equal(d.is_inline, 0);
	load("00 00 05 10  00 01 23 02", 1, 0);		/* READ without data */
	assert_int_equal(dvx_mlx5_wqe_decode(ring, 64, 0, &d), 1);
	assert_int_equal(d.nsge, 0);

	load("00 00 05 0a  00 01 23 03  00 00 00 08  00 00 00 00"
	     "00 00 00 00  00 00 01 00  00 00 00 00 00 00 00 00"
	     "00 00 00 20  00 00 00 07  00 00 00 00 00 00 01 00", 1, 0);
	assert_int_equal(dvx_mlx5_wqe_decode(ring, 64, 0, &d), 1);
	assert_int_equal(d.nsge, 2);
	assert_int_equal(d.sge[0].length, 0);
	assert_int_equal(d.sge[0].lkey, DVX_MLX5_INVALID_LKEY);
	assert_int_equal(d.sge[1].length, 32);
	format_wqe();
	assert_line(text, "sge_count: 2");
	assert_line(text, "sge[0].byte_count: 0");
	assert_line(text, "sge[1].byte_count: 32");

	load("01 00 05 0f  00 01 23 03  00 00 00 08  00 00 00 00"
	     "00 00 00 01  00 00 00 02  00 00 00 03  00 00 00 04"
	     "00 00 00 00 00 00 00 05  ff ff ff ff ff ff ff ff", 1, 0);
	assert_int_equal(dvx_mlx5_wqe_decode(ring, 64, 0, &d), 1);
	assert_int_equal(d.kind, DVX_MLX5_KIND_WAIT);
	assert_int_equal(d.opmod, 1);
	assert_int_equal(d.raw_len, 32);
	format_wqe();
	assert_line(text, "wait_on: data (1)");
	assert_line(text, "wait_segment: 0000000100000002000000030000000400000000000000"
			  "05ffffffffffffffff");
	assert_no_line_starting(text, "wait_cqn");

	load("00 00 05 01  00 01 23 02  00 00 00 08  12 34 56 78"
	     "00 00 00 40  00 00 00 07  00 00 00 00 00 00 01 00", 1, 0);
	assert_int_equal(dvx_mlx5_wqe_decode(ring, 64, 0, &d), 1);
	assert_int_equal(d.kind, DVX_MLX5_KIND_SEND);
	format_wqe();
	assert_line(text, "opcode: SEND_INVAL (0x01)");
	assert_line(text, "invalidate_rkey: 0x12345678");

	load("00 00 05 0b  00 01 23 02  00 00 00 08  00 00 00 2a"
	     "80 00 00 00", 1, 0);
	assert_int_equal(dvx_mlx5_wqe_decode(ring, 64, 0, &d), 1);
	assert_int_equal(d.is_inline, 1);
	assert_int_equal(d.inline_len, 0);
	format_wqe();
	assert_line(text, "inline_data: (empty)");
	assert_line(text, "imm: 0x0000002a");

	load("00 00 05 17  00 01 23 02  00 00 00 00  00 00 00 00"
	     "00 00 00 00 00 00 00 00  00 00 00 09  00 00 04 56", 1, 0);
	assert_int_equal(dvx_mlx5_wqe_decode(ring, 64, 0, &d), 1);
	format_wqe();
	assert_line(text, "opcode: SEND_EN (0x17)");
	assert_line(text, "wait_max_index: 9");
	assert_line(text, "slave_qpn: 0x000456");
	assert_no_line_starting(text, "wait_on");
}

/* ---- dvx_mlx5_wqe_format(): snprintf semantics ---- */

static void test_format_snprintf(void **state)
{
	char small[40];
	size_t need, n;

	(void)state;
	load(EXAMPLE_A, 1, 0);
	assert_int_equal(dvx_mlx5_wqe_decode(ring, 64, 0, &d), 1);
	need = dvx_mlx5_wqe_format(&d, NULL, 0);
	assert_true(need > 100);
	assert_int_equal(dvx_mlx5_wqe_format(&d, text, sizeof(text)), need);
	assert_int_equal(strlen(text), need);
	memset(small, 'x', sizeof(small));
	n = dvx_mlx5_wqe_format(&d, small, sizeof(small));
	assert_int_equal(n, need);
	assert_int_equal(strlen(small), sizeof(small) - 1);
	assert_memory_equal(small, text, sizeof(small) - 1);
	small[0] = 'x';
	assert_int_equal(dvx_mlx5_wqe_format(&d, small, 1), need);
	assert_int_equal(small[0], '\0');
	/* every length gives a prefix of the full text */
	for (n = 1; n <= need + 1; n += 7) {
		char buf[1024];

		memset(buf, 'x', sizeof(buf));
		assert_int_equal(dvx_mlx5_wqe_format(&d, buf, n), need);
		assert_int_equal(strlen(buf), n - 1 < need ? n - 1 : need);
		assert_memory_equal(buf, text, strlen(buf));
	}
}

/* every kind's text has one "name: value" per line */
static void test_format_lines(void **state)
{
	static const char *const wqes[] = {
		EXAMPLE_A,
		"00 00 00 00  00 00 00 01  00 00 00 6e",	/* NOP, every fm_ce_se bit */
		"09 00 07 14  00 00 01 05  00 00 00 08  00 00 00 00",
		"00 00 05 0f  00 01 23 00",			/* bad */
	};
	size_t i;

	(void)state;
	for (i = 0; i < DVX_ARRAY_SIZE(wqes); i++) {
		char *line, *save = NULL;

		load(wqes[i], 2, 0);
		dvx_mlx5_wqe_decode(ring, 128, 0, &d);
		format_wqe();
		for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			char *colon = strstr(line, ": ");

			assert_non_null(colon);
			assert_true(colon > line);
			assert_null(strchr(line, '\t'));
		}
	}
	load("00 00 00 00  00 00 00 01  00 00 00 6e", 1, 0);
	dvx_mlx5_wqe_decode(ring, 64, 0, &d);
	format_wqe();
	assert_line(text, "fence: strong_ordering (3)");
	assert_line(text, "completion: cqe_and_eqe (3)");
	assert_line(text, "solicited: 1");
}

/* ---- CQEs ---- */

static int cqe_from(const char *hex, struct dvx_mlx5_cqe_info *info)
{
	struct dvx_mlx5_cqe64 cqe;
	uint8_t b[64];
	int err;

	memset(b, 0, sizeof(b));
	dvx_test_hex(hex, b, sizeof(b));
	memcpy(&cqe, b, sizeof(cqe));
	err = dvx_mlx5_cqe_parse(&cqe, info);
	dvx_mlx5_cqe_format(info, err, text, sizeof(text));
	return err;
}

/* bytes 32..63 of a CQE; bytes 0..31 are zero */
#define CQE_TAIL(srqn, imm, app, bytes, ts, sop_qpn, ctr, sig, op_own) \
	"00000000000000000000000000000000 00000000000000000000000000000000 " \
	srqn " " imm " " app " " bytes " " ts " " sop_qpn " " ctr " " sig " " op_own

static void test_cqe_requester(void **state)
{
	struct dvx_mlx5_cqe_info info;

	(void)state;
	assert_int_equal(cqe_from(CQE_TAIL("00000000", "00000000", "00000000", "00000000",
					   "0000000000001234", "08000123", "0005", "00", "01"),
				  &info), 0);
	assert_line(text, "opcode: REQ (0x00)");
	assert_line(text, "format: normal (0)");
	assert_line(text, "owner: 1");
	assert_line(text, "qpn: 0x000123");
	assert_line(text, "wqe_counter: 5");
	assert_line(text, "wqe_opcode: RDMA_WRITE (0x08)");
	assert_line(text, "timestamp: 0x0000000000001234");
	assert_line(text, "status: ok (0)");
	assert_no_line_starting(text, "syndrome");
	assert_no_line_starting(text, "cause");

	/* RDMA READ completion: byte count */
	cqe_from(CQE_TAIL("00000000", "00000000", "00000000", "00001000", "0000000000000000",
			  "10000123", "0006", "00", "00"), &info);
	assert_line(text, "wqe_opcode: RDMA_READ (0x10)");
	assert_line(text, "byte_cnt: 4096");
}

static void test_cqe_responder_imm(void **state)
{
	struct dvx_mlx5_cqe_info info;

	(void)state;
	/* RESP_WR_IMM: immediate, remote QPN in flags_rqpn (bytes 24-27), user index */
	assert_int_equal(cqe_from("00000000000000000000000000000000"
				  "0000000000000000 00000456 00000000"
				  "00000042 deadbeef 00000000 00000040 0000000000000000"
				  "00000123 0003 00 12", &info), 0);
	assert_line(text, "opcode: RESP_WR_IMM (0x01)");
	assert_line(text, "imm: 0xdeadbeef");
	assert_line(text, "rqpn: 0x000456");
	assert_line(text, "srqn_uidx: 0x000042");
	assert_line(text, "byte_cnt: 64");
	assert_line(text, "solicited: 1");
	assert_line(text, "wqe_counter: 3");
	assert_no_line_starting(text, "wqe_opcode");	/* not a requester CQE */

	assert_int_equal(cqe_from(CQE_TAIL("00000000", "0000002a", "00000000", "00000010",
					   "0000000000000000", "00000123", "0000", "00", "30"),
				  &info), 0);
	assert_line(text, "opcode: RESP_SEND_IMM (0x03)");
	assert_line(text, "imm: 0x0000002a");
}

static void test_cqe_errors(void **state)
{
	static const struct {
		uint8_t syndrome;
		const char *name;
		const char *cause_has;
		int err;
	} cases[] = {
		{ 0x01, "LOCAL_LENGTH_ERR", "length", -EMSGSIZE },
		{ 0x02, "LOCAL_QP_OP_ERR", "malformed", -EINVAL },
		{ 0x04, "LOCAL_PROT_ERR", "bad lkey", -EACCES },
		{ 0x05, "WR_FLUSH_ERR", "an earlier WQE on this QP failed and moved it to error",
		  -ECANCELED },
		{ 0x06, "MW_BIND_ERR", "window", -EINVAL },
		{ 0x10, "BAD_RESP_ERR", "response", -EPROTO },
		{ 0x11, "LOCAL_ACCESS_ERR", "local", -EFAULT },
		{ 0x12, "REMOTE_INVAL_REQ_ERR", "rejected", -EREMOTEIO },
		{ 0x13, "REMOTE_ACCESS_ERR", "bad rkey", -EPERM },
		{ 0x14, "REMOTE_OP_ERR", "responder", -EREMOTEIO },
		{ 0x15, "TRANSPORT_RETRY_EXC_ERR", "peer unreachable", -EHOSTUNREACH },
		{ 0x16, "RNR_RETRY_EXC_ERR", "no receive posted", -ENOBUFS },
		{ 0x22, "REMOTE_ABORTED_ERR", "aborted", -ECONNABORTED },
	};
	struct dvx_mlx5_cqe_info info;
	char hex[256], line[160];
	size_t i;

	(void)state;
	for (i = 0; i < DVX_ARRAY_SIZE(cases); i++) {
		snprintf(hex, sizeof(hex),
			 "00000000000000000000000000000000 00000000000000000000000000000000"
			 "00000000 00000000000000000000000000000000"
			 "0102 33 %02x 09000123 0005 00 d0",
			 cases[i].syndrome);
		assert_int_equal(cqe_from(hex, &info), cases[i].err);
		assert_int_equal(info.is_error, 1);
		assert_line(text, "opcode: REQ_ERR (0x0d)");
		snprintf(line, sizeof(line), "syndrome: %s (0x%02x)", cases[i].name,
			 cases[i].syndrome);
		assert_line(text, line);
		assert_line(text, "vendor_syndrome: 0x33");
		assert_line(text, "hw_err_synd: 0x01");
		assert_line(text, "hw_synd_type: 0x02");
		assert_non_null(strstr(text, "\ncause: "));
		assert_non_null(strstr(strstr(text, "\ncause: "), cases[i].cause_has));
		assert_line(text, "failed_wqe_opcode: RDMA_WRITE_IMM (0x09)");
		assert_line(text, "failed_wqe_qpn: 0x000123");
		assert_line(text, "failed_wqe_index: 5");
	}
	/* the cause words the syndromes are known by */
	assert_non_null(strstr(dvx_mlx5_syndrome_cause(0x04), "local bounds"));
	assert_non_null(strstr(dvx_mlx5_syndrome_cause(0x13), "remote bounds"));
	assert_non_null(strstr(dvx_mlx5_syndrome_cause(0x13), "remote access right"));
	assert_non_null(strstr(dvx_mlx5_syndrome_cause(0x15), "wrong address"));
	assert_non_null(strstr(dvx_mlx5_syndrome_cause(0x15), "link down"));
	assert_string_equal(dvx_mlx5_syndrome_name(0x99), "UNKNOWN");

	/* responder error with a vendor syndrome dvx knows */
	assert_int_equal(cqe_from("00000000000000000000000000000000 "
				  "00000000000000000000000000000000 "
				  "00000000 00000000000000000000000000000000 "
				  "0000 93 22 00000077 0002 00 e0", &info), -ECONNABORTED);
	assert_line(text, "opcode: RESP_ERR (0x0e)");
	assert_line(text, "vendor_syndrome: 0x93 (ODP)");
	assert_non_null(strstr(text, "\nvendor_cause: on-demand paging"));
	assert_non_null(strstr(text, "\nfailed_wqe_opcode: receive WQE"));
	assert_line(text, "failed_wqe_index: 2");
	assert_string_equal(dvx_mlx5_vendor_syndrome_name(0x99), "PSN");
	assert_null(dvx_mlx5_vendor_syndrome_cause(0x33));
}

static void test_cqe_compressed(void **state)
{
	struct dvx_mlx5_cqe_info info;

	(void)state;
	/* format 3, opcode and everything else looking like a plausible REQ */
	assert_int_equal(cqe_from(CQE_TAIL("00000000", "00000000", "00000000", "00000000",
					   "0000000000000000", "08000123", "0005", "00", "0d"),
				  &info), -EPROTO);
	assert_line(text, "format: compressed (3)");
	assert_line(text, "owner: 1");
	assert_non_null(strstr(text, "\ncompressed: yes"));
	assert_line(text, "status: EPROTO (-71)");
	/* nothing of a normal CQE is read out of it */
	assert_no_line_starting(text, "qpn");
	assert_no_line_starting(text, "wqe_counter");
	assert_no_line_starting(text, "opcode");
	assert_no_line_starting(text, "wqe_opcode");
	/* an error opcode with format 3 is compressed all the same */
	cqe_from(CQE_TAIL("00000000", "00000000", "00000000", "00000000", "0000000000000000",
			  "08000123", "0005", "00", "dc"), &info);
	assert_non_null(strstr(text, "compressed: yes"));
	assert_no_line_starting(text, "syndrome");
}

static void test_cqe_other(void **state)
{
	struct dvx_mlx5_cqe_info info;

	(void)state;
	assert_int_equal(cqe_from(CQE_TAIL("00000000", "00000000", "00000000", "00000000",
					   "0000000000000000", "00000000", "0000", "00", "f1"),
				  &info), -EPROTO);
	assert_line(text, "opcode: INVALID (0x0f)");
	assert_non_null(strstr(text, "\nnote: opcode INVALID"));
	cqe_from(CQE_TAIL("00000000", "00000000", "00000000", "00000000", "0000000000000000",
			  "00000000", "0000", "00", "c0"), &info);
	assert_line(text, "opcode: SIG_ERR (0x0c)");
	assert_line(text, "status: EBADMSG (-74)");
	cqe_from(CQE_TAIL("00000000", "00000000", "00000000", "00000000", "0000000000000000",
			  "00000000", "0000", "00", "04"), &info);
	assert_line(text, "format: inline_scatter_32 (1)");
	cqe_from(CQE_TAIL("00000000", "00000000", "00000000", "00000000", "0000000000000000",
			  "00000000", "0000", "00", "90"), &info);
	assert_line(text, "opcode: UNKNOWN (0x09)");
	assert_line(text, "note: unknown CQE opcode");
}

/* ---- name tables ---- */

static void test_names_total_distinct(void **state)
{
	const char *seen[256];
	unsigned i, j, n = 0;

	(void)state;
	for (i = 0; i < 256; i++) {
		const char *s = dvx_mlx5_opcode_name((uint8_t)i);

		assert_non_null(s);
		assert_non_null(dvx_mlx5_cqe_opcode_name((uint8_t)i));
		assert_non_null(dvx_mlx5_syndrome_name((uint8_t)i));
		assert_non_null(dvx_mlx5_syndrome_cause((uint8_t)i));
		assert_non_null(dvx_mlx5_vendor_syndrome_name((uint8_t)i));
		assert_non_null(dvx_mlx5_fm_name((uint8_t)i));
		assert_non_null(dvx_mlx5_ce_name((uint8_t)i));
		assert_non_null(dvx_mlx5_wqe_error_str((uint8_t)i));
		if (strcmp(s, "UNKNOWN")) {
			for (j = 0; j < n; j++)
				assert_string_not_equal(seen[j], s);
			seen[n++] = s;
			/* every name parses back, in any case, with or without a prefix */
			assert_int_equal(dvx_mlx5_opcode_from_name(s), (int)i);
		}
	}
	assert_int_equal(n, 18);	/* the prm 2.2 table */

	/* every enum opcode has its name */
	assert_string_equal(dvx_mlx5_opcode_name(DVX_MLX5_OPCODE_RDMA_WRITE), "RDMA_WRITE");
	assert_string_equal(dvx_mlx5_opcode_name(DVX_MLX5_OPCODE_WAIT), "WAIT");
	assert_string_equal(dvx_mlx5_opcode_name(DVX_MLX5_OPCODE_SEND_EN), "SEND_EN");
	assert_string_equal(dvx_mlx5_opcode_name(DVX_MLX5_OPCODE_RECV_EN), "RECV_EN");
	assert_string_equal(dvx_mlx5_opcode_name(0x02), "UNKNOWN");

	/* CQE opcodes: 11 named, distinct */
	for (i = 0, n = 0; i < 256; i++) {
		const char *s = dvx_mlx5_cqe_opcode_name((uint8_t)i);

		if (strcmp(s, "UNKNOWN")) {
			for (j = 0; j < n; j++)
				assert_string_not_equal(seen[j], s);
			seen[n++] = s;
			assert_true(i < 16);
		}
	}
	assert_int_equal(n, 11);
	assert_string_equal(dvx_mlx5_cqe_opcode_name(DVX_MLX5_CQE_REQ_ERR), "REQ_ERR");

	/* syndromes: the 13 of prm 4.5, distinct names and causes */
	{
		const char *causes[256];

		for (i = 0, n = 0; i < 256; i++) {
			const char *s = dvx_mlx5_syndrome_name((uint8_t)i);
			const char *c = dvx_mlx5_syndrome_cause((uint8_t)i);

			if (!strcmp(s, "UNKNOWN"))
				continue;
			for (j = 0; j < n; j++) {
				assert_string_not_equal(seen[j], s);
				assert_string_not_equal(causes[j], c);
			}
			causes[n] = c;
			seen[n++] = s;
		}
		assert_int_equal(n, 13);
	}
	/* vendor syndromes: 0x93, 0x99 */
	for (i = 0, n = 0; i < 256; i++)
		n += strcmp(dvx_mlx5_vendor_syndrome_name((uint8_t)i), "UNKNOWN") != 0;
	assert_int_equal(n, 2);

	/* fence and completion modes */
	assert_string_equal(dvx_mlx5_fm_name(0), "none");
	assert_string_equal(dvx_mlx5_fm_name(1), "initiator_small");
	assert_string_equal(dvx_mlx5_fm_name(2), "fence");
	assert_string_equal(dvx_mlx5_fm_name(3), "strong_ordering");
	assert_string_equal(dvx_mlx5_fm_name(4), "fence_and_initiator_small");
	assert_string_equal(dvx_mlx5_fm_name(5), "reserved");
	assert_string_equal(dvx_mlx5_ce_name(0), "error_only");
	assert_string_equal(dvx_mlx5_ce_name(1), "first_error");
	assert_string_equal(dvx_mlx5_ce_name(2), "always");
	assert_string_equal(dvx_mlx5_ce_name(3), "cqe_and_eqe");
	assert_string_equal(dvx_mlx5_ce_name(4), "UNKNOWN");
	for (i = 0; i < 5; i++)
		for (j = 0; j < i; j++)
			assert_string_not_equal(dvx_mlx5_fm_name((uint8_t)i),
						dvx_mlx5_fm_name((uint8_t)j));
	for (i = 0; i < 4; i++)
		for (j = 0; j < i; j++)
			assert_string_not_equal(dvx_mlx5_ce_name((uint8_t)i),
						dvx_mlx5_ce_name((uint8_t)j));
	/* decode errors: all distinct */
	for (i = 0; i < DVX_MLX5_WQE_ERR_MAX; i++)
		for (j = 0; j < i; j++)
			assert_string_not_equal(dvx_mlx5_wqe_error_str((uint8_t)i),
						dvx_mlx5_wqe_error_str((uint8_t)j));
}

static void test_opcode_from_name(void **state)
{
	(void)state;
	assert_int_equal(dvx_mlx5_opcode_from_name("RDMA_WRITE"), 0x08);
	assert_int_equal(dvx_mlx5_opcode_from_name("rdma_write"), 0x08);
	assert_int_equal(dvx_mlx5_opcode_from_name("Rdma-Write-Imm"), 0x09);
	assert_int_equal(dvx_mlx5_opcode_from_name("OPCODE_RDMA_READ"), 0x10);
	assert_int_equal(dvx_mlx5_opcode_from_name("opcode_send"), 0x0a);
	assert_int_equal(dvx_mlx5_opcode_from_name("MLX5_OPCODE_ATOMIC_FA"), 0x12);
	assert_int_equal(dvx_mlx5_opcode_from_name("DVX_MLX5_OPCODE_ATOMIC_MASKED_CS"), 0x14);
	assert_int_equal(dvx_mlx5_opcode_from_name("nop"), 0x00);
	assert_int_equal(dvx_mlx5_opcode_from_name("wait"), 0x0f);
	assert_int_equal(dvx_mlx5_opcode_from_name("CQE_WAIT"), 0x0f);
	assert_int_equal(dvx_mlx5_opcode_from_name("send_enable"), 0x17);
	assert_int_equal(dvx_mlx5_opcode_from_name("write"), 0x08);
	assert_int_equal(dvx_mlx5_opcode_from_name("masked-fa"), 0x15);
	assert_int_equal(dvx_mlx5_opcode_from_name("fa"), 0xfa);	/* a number, not FA */
	/* hex numbers */
	assert_int_equal(dvx_mlx5_opcode_from_name("0x08"), 0x08);
	assert_int_equal(dvx_mlx5_opcode_from_name("0X0F"), 0x0f);
	assert_int_equal(dvx_mlx5_opcode_from_name("10"), 0x10);
	assert_int_equal(dvx_mlx5_opcode_from_name("ff"), 0xff);
	assert_int_equal(dvx_mlx5_opcode_from_name("0x2d"), 0x2d);
	/* garbage */
	assert_int_equal(dvx_mlx5_opcode_from_name(NULL), -EINVAL);
	assert_int_equal(dvx_mlx5_opcode_from_name(""), -EINVAL);
	assert_int_equal(dvx_mlx5_opcode_from_name("0x"), -EINVAL);
	assert_int_equal(dvx_mlx5_opcode_from_name("0x100"), -EINVAL);
	assert_int_equal(dvx_mlx5_opcode_from_name("OPCODE_"), -EINVAL);
	assert_int_equal(dvx_mlx5_opcode_from_name("RDMA_WRIT"), -EINVAL);
	assert_int_equal(dvx_mlx5_opcode_from_name("RDMA_WRITEX"), -EINVAL);
	assert_int_equal(dvx_mlx5_opcode_from_name("UNKNOWN"), -EINVAL);
	assert_int_equal(dvx_mlx5_opcode_from_name("-8"), -EINVAL);
}

/* ---- dvx_mlx5_wqe_encode(): refusals write nothing ---- */

static void expect_refused(const struct dvx_mlx5_wqe_desc *desc, int want)
{
	static uint8_t out[256] DVX_ALIGNED(64);
	uint8_t poison[256];
	struct dvx_mlx5_wq wq;

	memset(out, 0x5a, sizeof(out));
	memset(poison, 0x5a, sizeof(poison));
	assert_int_equal(dvx_mlx5_wq_init(&wq, out, 4, 1, DVX_MLX5_MAX_INLINE), 0);
	assert_int_equal(dvx_mlx5_wqe_encode(&wq, 3, desc), want);
	assert_bytes_equal(out, poison, sizeof(out));
}

static void test_encode_refusals(void **state)
{
	struct dvx_mlx5_wqe_desc e;
	struct dvx_mlx5_wq wq;

	(void)state;
	/* a zero-length data segment: the builders would leave it out */
	load("00 00 05 0a  00 01 23 03  00 00 00 08  00 00 00 00"
	     "00 00 00 00  00 00 01 00  00 00 00 00 00 00 00 00"
	     "00 00 00 20  00 00 00 07  00 00 00 00 00 00 01 00", 1, 0);
	assert_int_equal(dvx_mlx5_wqe_decode(ring, 64, 0, &d), 1);
	expect_refused(&d, -EINVAL);
	/* the same without the empty segment re-encodes */
	e = d;
	e.sge[0] = e.sge[1];
	e.nsge = 1;
	e.ds = 0;
	e.nwqebb = 0;
	{
		static uint8_t out[256] DVX_ALIGNED(64);

		assert_int_equal(dvx_mlx5_wq_init(&wq, out, 4, 1, 0), 0);
		assert_int_equal(dvx_mlx5_wqe_encode(&wq, 3, &e), 1);
		assert_int_equal(out[3 * 64 + 7], 2);	/* ds 2 */
	}
	/* a ds the builder would not produce */
	e.ds = 3;
	expect_refused(&e, -EINVAL);

	/* SEND_INVAL and WAIT on data have no builder */
	load("00 00 05 01  00 01 23 02  00 00 00 08  12 34 56 78"
	     "00 00 00 40  00 00 00 07  00 00 00 00 00 00 01 00", 1, 0);
	assert_int_equal(dvx_mlx5_wqe_decode(ring, 64, 0, &d), 1);
	expect_refused(&d, -EOPNOTSUPP);
	load("01 00 05 0f  00 01 23 03", 1, 0);
	assert_int_equal(dvx_mlx5_wqe_decode(ring, 64, 0, &d), 1);
	expect_refused(&d, -EOPNOTSUPP);

	/* NOP padded to ds 4 */
	load("00 00 05 00  00 01 23 04", 1, 0);
	assert_int_equal(dvx_mlx5_wqe_decode(ring, 64, 0, &d), 1);
	expect_refused(&d, -EINVAL);

	/* a signature, an immediate on a plain WRITE, an opmod on a WRITE */
	load(EXAMPLE_A, 1, 0);
	assert_int_equal(dvx_mlx5_wqe_decode(ring, 64, 0, &d), 1);
	e = d;
	e.signature = 1;
	expect_refused(&e, -EINVAL);
	e = d;
	e.imm = 1;
	expect_refused(&e, -EINVAL);
	e = d;
	e.opmod = 1;
	expect_refused(&e, -EINVAL);
	e = d;
	e.kind = DVX_MLX5_KIND_SEND;
	expect_refused(&e, -EINVAL);

	/* FA with a compare value; atomics with the wrong result length */
	load("00 00 05 12  00 01 23 04  00 00 00 08  00 00 00 00"
	     "00 00 00 00 00 00 10 00  00 00 56 78  00 00 00 00"
	     "00 00 00 00 00 00 00 01  00 00 00 00 00 00 00 09"
	     "00 00 00 08  00 00 ab cd  00 00 00 00 00 00 00 00", 1, 0);
	assert_int_equal(dvx_mlx5_wqe_decode(ring, 64, 0, &d), 1);
	expect_refused(&d, -EINVAL);
	d.compare = 0;
	d.sge[0].length = 4;
	expect_refused(&d, -EINVAL);

	/* masked 4 B operand wider than 32 bits */
	load("08 00 05 15  00 01 23 04  00 00 00 08  00 00 00 00"
	     "00 00 00 00 00 00 10 00  00 00 56 78  00 00 00 00"
	     "00 00 00 01  00 00 00 00  00 00 00 00 00 00 00 00"
	     "00 00 00 04  00 00 ab cd  00 00 00 00 00 00 00 00", 1, 0);
	assert_int_equal(dvx_mlx5_wqe_decode(ring, 64, 0, &d), 1);
	d.swap_add = 0x100000001ull;
	expect_refused(&d, -EINVAL);

	/* unknown and undecoded opcodes, NULLs */
	memset(&e, 0, sizeof(e));
	e.opcode = 0x02;
	expect_refused(&e, -EINVAL);
	e.opcode = DVX_MLX5_OPCODE_UMR;
	expect_refused(&e, -EOPNOTSUPP);
	assert_int_equal(dvx_mlx5_wqe_encode(NULL, 0, &e), -EINVAL);
	assert_int_equal(dvx_mlx5_wq_init(&wq, ring, 1, 1, 0), 0);
	assert_int_equal(dvx_mlx5_wqe_encode(&wq, 0, NULL), -EINVAL);

	/* an inline payload above the ring's limit comes back from the builder */
	load("00 00 05 08  00 01 23 04  00 00 00 08  00 00 00 00"
	     "00 00 00 00 00 00 10 00  00 00 56 78  00 00 00 00"
	     "80 00 00 10", 1, 0);
	assert_int_equal(dvx_mlx5_wqe_decode(ring, 64, 0, &d), 1);
	{
		static uint8_t out[256] DVX_ALIGNED(64);

		assert_int_equal(dvx_mlx5_wq_init(&wq, out, 4, 1, 8), 0);
		assert_int_equal(dvx_mlx5_wqe_encode(&wq, 0, &d), -EMSGSIZE);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_example_a_write),
		cmocka_unit_test(test_example_b_write_inline),
		cmocka_unit_test(test_example_c_fetch_add),
		cmocka_unit_test(test_example_d_wait),
		cmocka_unit_test(test_mlx5dv_second_opinion),
		cmocka_unit_test(test_mlx5dv_err_cqe),
		cmocka_unit_test(test_wrap_two_wqebbs),
		cmocka_unit_test(test_wrap_inline_bytes),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_malformed_more),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_accepted_oddities),
		cmocka_unit_test(test_format_snprintf),
		cmocka_unit_test(test_format_lines),
		cmocka_unit_test(test_cqe_requester),
		cmocka_unit_test(test_cqe_responder_imm),
		cmocka_unit_test(test_cqe_errors),
		cmocka_unit_test(test_cqe_compressed),
		cmocka_unit_test(test_cqe_other),
		cmocka_unit_test(test_names_total_distinct),
		cmocka_unit_test(test_opcode_from_name),
		cmocka_unit_test(test_encode_refusals),
	};

	return cmocka_run_group_tests_name("decode-wqe", tests, NULL, NULL);
}
