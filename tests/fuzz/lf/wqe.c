// SPDX-License-Identifier: MIT
/*
 * tests/fuzz/lf/wqe.c - libFuzzer harness: the WQE decoder (mlx5/decode.c).
 *
 * Feeds: a send-ring dump. Input byte 0 picks the ring's size (1 << (b % 7) WQEBBs,
 * 1..64), bytes 1-4 the WQEBB index the decode starts at (any 32-bit value, taken
 * modulo the ring, little-endian), the rest is the ring (zero-filled when short). The
 * ring is a heap block of exactly its size, so a read past its end (instead of wrapping
 * to byte 0) is an ASan report.
 *
 * Checks (dvx/mlx5/decode.h): the answer is the WQEBB count (1..16, never more than the
 * ring) or -EBADMSG with a reason in d.error (and only then); the ctrl fields match the
 * bytes read independently here (opcode, opmod, wqe_index, qpn, ds, signature,
 * fm_ce_se, imm) and nwqebb is ceil(ds / 4); the decoder leaves the ring alone; the
 * formatted text has the formatter's contract (exact length, printable, truncation
 * keeps a NUL-terminated prefix) and an "error:" line exactly after -EBADMSG; what
 * decodes and dvx_mlx5_wqe_encode() can rebuild re-encodes into a fresh ring as a WQE
 * that decodes to the same description, written only inside its own WQEBBs, and an
 * encode that refuses writes nothing.
 */
#include <dvx/mlx5/decode.h>

#include "lf.h"

#define MAX_WQEBB 64u
#define ENC_WQEBB 16u	/* the largest WQE (ds 63) fits */
#define FILL 0x5a

static struct dvx_mlx5_wqe_desc d, d2;

static size_t fmt_wqe(const void *obj, char *buf, size_t len)
{
	return dvx_mlx5_wqe_format(obj, buf, len);
}

/* the byte at offset @off of the WQE at @base, wrapping like the hardware */
static uint8_t at(const uint8_t *ring, uint32_t mask, uint32_t base, uint32_t off)
{
	return ring[(base + off) & mask];
}

static void check_ctrl(const uint8_t *ring, uint32_t bytes, uint32_t idx)
{
	uint32_t m = bytes - 1, b = (idx * 64u) & m;

	LF_CHECK(d.opmod == at(ring, m, b, 0));
	LF_CHECK(d.idx == (uint16_t)(at(ring, m, b, 1) << 8 | at(ring, m, b, 2)));
	LF_CHECK(d.opcode == at(ring, m, b, 3));
	LF_CHECK(d.qpn == ((uint32_t)at(ring, m, b, 4) << 16 | (uint32_t)at(ring, m, b, 5) << 8 |
			   at(ring, m, b, 6)));
	LF_CHECK(d.ds == (at(ring, m, b, 7) & 0x3f));
	LF_CHECK(d.signature == at(ring, m, b, 8));
	LF_CHECK(d.fm_ce_se == at(ring, m, b, 11));
	LF_CHECK(d.imm == ((uint32_t)at(ring, m, b, 12) << 24 | (uint32_t)at(ring, m, b, 13) << 16 |
			   (uint32_t)at(ring, m, b, 14) << 8 | at(ring, m, b, 15)));
	LF_CHECK(d.nwqebb == (d.ds + 3) / 4);
}

/* the formatted text ends with an "error:" line exactly when the decode failed */
static void check_text(int r, size_t cut)
{
	size_t n = dvx_mlx5_wqe_format(&d, NULL, 0);
	char *s = malloc(n + 1), *last;

	LF_CHECK(s != NULL);
	dvx_mlx5_wqe_format(&d, s, n + 1);
	LF_CHECK(n > 0 && s[n - 1] == '\n');
	s[n - 1] = '\0';
	last = strrchr(s, '\n');
	last = last ? last + 1 : s;
	LF_CHECK((r < 0) == !strncmp(last, "error: ", 7));
	free(s);
	lf_check_text(fmt_wqe, &d, cut);
}

/* @r: the decode's answer; after a failed decode only "nothing written on error" holds */
static void check_reencode(int r, uint32_t idx)
{
	static uint8_t enc[ENC_WQEBB * 64] DVX_ALIGNED(64);
	struct dvx_mlx5_wq wq;
	uint32_t i, slot = idx % ENC_WQEBB;
	int e;

	memset(enc, FILL, sizeof(enc));
	LF_CHECK(dvx_mlx5_wq_init(&wq, enc, ENC_WQEBB, d.qpn, DVX_MLX5_MAX_INLINE) == 0);
	e = dvx_mlx5_wqe_encode(&wq, idx, &d);
	LF_CHECK(e == -EINVAL || e == -EOPNOTSUPP || e == -EMSGSIZE || e == -E2BIG ||
		 (e >= 1 && e <= 16));
	if (e < 0) {
		/* nothing written on error */
		for (i = 0; i < sizeof(enc); i++)
			LF_CHECK(enc[i] == FILL);
		return;
	}
	/* only the WQE's own WQEBBs were written */
	for (i = 0; i < ENC_WQEBB; i++) {
		uint32_t k, rel = (i + ENC_WQEBB - slot) % ENC_WQEBB;

		if (rel < (uint32_t)e)
			continue;
		for (k = 0; k < 64; k++)
			LF_CHECK(enc[i * 64 + k] == FILL);
	}
	if (r < 0)
		return;
	/* what decoded re-encodes to as many WQEBBs, which decode to the same WQE (the ring supplies index and QPN) */
	LF_CHECK(e == r);
	LF_CHECK(dvx_mlx5_wqe_decode(enc, sizeof(enc), idx, &d2) == r);
	d2.idx = d.idx;
	d2.qpn = d.qpn;
	LF_CHECK(!memcmp(&d, &d2, offsetof(struct dvx_mlx5_wqe_desc, raw)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lf_in in = { data, size };
	uint32_t nwqebb = 1u << (lf_u8(&in) % 7), bytes = nwqebb * 64, idx = lf_u32(&in);
	uint8_t *ring = malloc(bytes), *copy = malloc(bytes);
	size_t cut;
	int r;

	LF_CHECK(ring && copy);
	cut = in.n ? in.p[0] : 0;
	lf_bytes(&in, ring, bytes);
	memcpy(copy, ring, bytes);

	r = dvx_mlx5_wqe_decode(ring, bytes, idx, &d);
	LF_CHECK(!memcmp(ring, copy, bytes));		/* the ring is only read */
	check_ctrl(ring, bytes, idx);
	if (r < 0) {
		LF_CHECK(r == -EBADMSG);
		LF_CHECK(d.error > DVX_MLX5_WQE_OK && d.error < DVX_MLX5_WQE_ERR_MAX);
		LF_CHECK(strcmp(dvx_mlx5_wqe_error_str(d.error), "ok") != 0);
	} else {
		LF_CHECK(d.error == DVX_MLX5_WQE_OK);
		LF_CHECK(r >= 1 && r <= 16 && (uint32_t)r <= nwqebb && r == d.nwqebb);
		LF_CHECK(d.kind != DVX_MLX5_KIND_UNKNOWN);
		LF_CHECK(d.nsge <= DVX_MLX5_DECODE_MAX_SGE && d.raw_len <= DVX_MLX5_DECODE_RAW_BYTES);
		LF_CHECK(!d.is_inline || (d.nsge == 0 && 4 + d.inline_len <= d.ds * 16u));
	}
	check_text(r, cut);
	check_reencode(r, idx);
	free(copy);
	free(ring);
	return 0;
}

/* ---- seeds: builders' WQEs of every kind and the prm 2.8 worked examples ---- */

static void seed_ring(const char *name, uint32_t log, uint32_t idx, const uint8_t *ring)
{
	uint8_t buf[5 + MAX_WQEBB * 64];

	buf[0] = (uint8_t)log;
	buf[1] = (uint8_t)idx;		/* little-endian, as lf_u32() reads it */
	buf[2] = (uint8_t)(idx >> 8);
	buf[3] = (uint8_t)(idx >> 16);
	buf[4] = (uint8_t)(idx >> 24);
	memcpy(buf + 5, ring, 64u << log);
	lf_seed(name, buf, 5 + (64u << log));
}

static void write_seeds(void)
{
	static uint8_t ring[8 * 64] DVX_ALIGNED(64);
	static const uint8_t example_a[48] = {	/* prm 2.8 example A: RDMA WRITE, 1 SGE */
		0x00, 0x00, 0x05, 0x08, 0x00, 0x01, 0x23, 0x03, 0x00, 0x00, 0x00, 0x08, 0, 0, 0, 0,
		0, 0, 0, 0, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x56, 0x78, 0, 0, 0, 0,
		0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x12, 0x34, 0, 0, 0, 0, 0, 0, 0, 0x40 };
	static const uint8_t example_b[48] = {	/* WRITE with 8 bytes inline */
		0x00, 0x00, 0x05, 0x08, 0x00, 0x01, 0x23, 0x03, 0x00, 0x00, 0x00, 0x08, 0, 0, 0, 0,
		0, 0, 0, 0, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x56, 0x78, 0, 0, 0, 0,
		0x80, 0x00, 0x00, 0x08, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0, 0, 0, 0 };
	static const uint8_t example_c[64] = {	/* ATOMIC_FA */
		0x00, 0x00, 0x05, 0x12, 0x00, 0x01, 0x23, 0x04, 0x00, 0x00, 0x00, 0x08, 0, 0, 0, 0,
		0, 0, 0, 0, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x56, 0x78, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0x01, 0, 0, 0, 0, 0, 0, 0, 0,
		0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0xab, 0xcd, 0, 0, 0, 0, 0, 0, 0, 0 };
	static const uint8_t example_d[32] = {	/* WAIT on CQ 0x4a, index 5 */
		0x00, 0x00, 0x07, 0x0f, 0x00, 0x02, 0x34, 0x02, 0x00, 0x00, 0x00, 0x08, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x4a };
	uint8_t payload[200];
	struct dvx_mlx5_sge sg[3] = { { 0x10000, 4096, 0x1234 }, { 0x20000, 16, 7 },
				      { 0x30000, 1, 9 } };
	struct dvx_mlx5_wq wq;
	char name[64];
	unsigned k;

	memset(ring, 0, sizeof(ring));
	memcpy(ring, example_a, sizeof(example_a));
	seed_ring("prm-example-a-write", 0, 0, ring);
	memset(ring, 0, sizeof(ring));
	memcpy(ring, example_b, sizeof(example_b));
	seed_ring("prm-example-b-write-inline", 0, 0, ring);
	memset(ring, 0, sizeof(ring));
	memcpy(ring, example_c, sizeof(example_c));
	seed_ring("prm-example-c-fetch-add", 0, 0, ring);
	memset(ring, 0, sizeof(ring));
	memcpy(ring, example_d, sizeof(example_d));
	seed_ring("prm-example-d-wait", 0, 0, ring);

	for (k = 0; k < 160; k++)
		payload[k] = (uint8_t)(k * 7 + 1);
	for (k = 0; k < 16; k++) {
		/* the 16 kinds, in an 8-WQEBB ring at index 7 (so big ones wrap) */
		uint32_t idx = 7;

		memset(ring, 0, sizeof(ring));
		LF_CHECK(dvx_mlx5_wq_init(&wq, ring, 8, 0x123, 256) == 0);
		switch (k) {
		case 0: dvx_mlx5_wqe_nop(&wq, idx, DVX_MLX5_WQE_CTRL_CQ_UPDATE); break;
		case 1: dvx_mlx5_wqe_rdma_write(&wq, idx, 8, 0x1000, 0x5678, 0x40, 0x1234, 4096); break;
		case 2: dvx_mlx5_wqe_rdma_read(&wq, idx, 8, 0x1000, 0x5678, 0x40, 0x1234, 64); break;
		case 3: dvx_mlx5_wqe_atomic_fa(&wq, idx, 8, 0x1000, 0x5678, 1, 0x40, 0x1234); break;
		case 4:
			dvx_mlx5_wqe_atomic_cs(&wq, idx, 8,
					       &(struct dvx_mlx5_raddr){ 0x1000, 0x5678 }, 1, 2,
					       0x40, 0x1234);
			break;
		case 5:
			dvx_mlx5_wqe_masked_cs64(&wq, idx, 8,
						 &(struct dvx_mlx5_raddr){ 0x1000, 0x5678 },
						 &(struct dvx_mlx5_masked_cs){ 1, 0xff, 2, 0xf0 },
						 0x40, 0x1234);
			break;
		case 6:
			dvx_mlx5_wqe_masked_cs32(&wq, idx, 8,
						 &(struct dvx_mlx5_raddr){ 0x1000, 0x5678 },
						 &(struct dvx_mlx5_masked_cs){ 1, 0xff, 2, 0xf0 },
						 0x40, 0x1234);
			break;
		case 7:
			dvx_mlx5_wqe_masked_fa32(&wq, idx, 8,
						 &(struct dvx_mlx5_raddr){ 0x1000, 0x5678 }, 3,
						 0x80, 0x40, 0x1234);
			break;
		case 8:
			dvx_mlx5_wqe_masked_fa64(&wq, idx, 8,
						 &(struct dvx_mlx5_raddr){ 0x1000, 0x5678 }, 3,
						 0x80, 0x40, 0x1234);
			break;
		case 9:
			dvx_mlx5_wqe_rdma_write_inline(&wq, idx, DVX_MLX5_OPCODE_RDMA_WRITE_IMM, 8,
						       0xabcd,
						       &(struct dvx_mlx5_raddr){ 0x1000, 0x5678 },
						       payload, 160);
			break;
		case 10: dvx_mlx5_wqe_send_inline(&wq, idx, DVX_MLX5_OPCODE_SEND, 8, 0, payload,
						  13); break;
		case 11: dvx_mlx5_wqe_send_sgl(&wq, idx, DVX_MLX5_OPCODE_SEND_IMM, 8, 0x77, sg, 3);
			break;
		case 12:
			dvx_mlx5_wqe_rdma_sgl(&wq, idx, DVX_MLX5_OPCODE_RDMA_WRITE, 8, 0,
					      &(struct dvx_mlx5_raddr){ 0x1000, 0x5678 }, sg, 3);
			break;
		case 13: dvx_mlx5_wqe_wait_cq(&wq, idx, 8, 0x4a, 5); break;
		case 14: dvx_mlx5_wqe_send_en(&wq, idx, 8, 0x234, 9); break;
		default: dvx_mlx5_wqe_enable(&wq, idx, DVX_MLX5_OPCODE_RECV_EN, 8, 0x234, 9); break;
		}
		snprintf(name, sizeof(name), "builder-%02u", k);
		seed_ring(name, 3, idx, ring);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	lf_seed_mode(write_seeds);
	return 0;
}
