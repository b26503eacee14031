// SPDX-License-Identifier: MIT
/*
 * tests/fuzz/lf/cqe.c - libFuzzer harness: the CQE decoder (dvx_mlx5_cqe_parse(), the
 * CQ poll of dvx/mlx5/cqe.h, dvx_mlx5_cqe_format() of mlx5/decode.c).
 *
 * Feeds: a CQ ring. Input byte 0 picks its size (1 << (b % 5) entries, 1..16), byte 1
 * where the formatted text is cut; the rest are the 64-byte entries (zero-filled when
 * short). The ring is a heap block of exactly its size.
 *
 * Checks: every entry parses to the fields read independently here from the PRM
 * offsets (opcode, format, owner, solicited, QPN, WQE opcode, wqe_counter, byte_cnt,
 * imm, srqn_uidx, rqpn, slid, timestamp, and for error CQEs syndrome, vendor syndrome,
 * hw_err_synd, hw_synd_type), and the answer is the documented one: 0 exactly for the
 * five completion opcodes in a non-compressed format, the syndrome's errno
 * (dvx_mlx5_cqe_syndrome_errno()) for REQ_ERR/RESP_ERR, -EBADMSG for SIG_ERR, -EPROTO for
 * a compressed entry and every other opcode; is_error exactly for the three error
 * opcodes (an error CQE never passes for a completion); the entry is only read. The
 * text has the formatter's contract, a "syndrome:" line naming the syndrome for error
 * CQEs and nothing but its four lines for a compressed one. Polling the ring from ci 0
 * takes exactly the entries the owner-bit rule gives to software, in order, each with
 * the parse's answer (1 for a completion), never more than the ring holds, and the
 * doorbell record then holds BE32(ci & 0xffffff).
 */
#include <dvx/mlx5/decode.h>

#include "lf.h"

#define MAX_LOG 4u

struct cqe_text {
	struct dvx_mlx5_cqe_info info;
	int err;
};

static size_t fmt_cqe(const void *obj, char *buf, size_t len)
{
	const struct cqe_text *t = obj;

	return dvx_mlx5_cqe_format(&t->info, t->err, buf, len);
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* what dvx_mlx5_cqe_parse() must answer for entry @b */
static int expected(const uint8_t *b)
{
	uint8_t op = b[63] >> 4;

	if (((b[63] >> 2) & 3) == DVX_MLX5_CQE_FORMAT_COMPRESSED)
		return -EPROTO;
	switch (op) {
	case DVX_MLX5_CQE_REQ:
	case DVX_MLX5_CQE_RESP_WR_IMM:
	case DVX_MLX5_CQE_RESP_SEND:
	case DVX_MLX5_CQE_RESP_SEND_IMM:
	case DVX_MLX5_CQE_RESP_SEND_INV:
		return 0;
	case DVX_MLX5_CQE_REQ_ERR:
	case DVX_MLX5_CQE_RESP_ERR:
		return dvx_mlx5_cqe_syndrome_errno(b[55]);
	case DVX_MLX5_CQE_SIG_ERR:
		return -EBADMSG;
	default:
		return -EPROTO;
	}
}

static void check_entry(const uint8_t *b, size_t cut)
{
	struct cqe_text t;
	uint8_t copy[64], op = b[63] >> 4;
	int is_err = op == DVX_MLX5_CQE_REQ_ERR || op == DVX_MLX5_CQE_RESP_ERR ||
		     op == DVX_MLX5_CQE_SIG_ERR;
	int compressed = ((b[63] >> 2) & 3) == DVX_MLX5_CQE_FORMAT_COMPRESSED;
	size_t n;
	char *s;

	memcpy(copy, b, 64);
	memset(&t, 0xa5, sizeof(t));
	t.err = dvx_mlx5_cqe_parse((const struct dvx_mlx5_cqe64 *)(const void *)b, &t.info);
	LF_CHECK(!memcmp(copy, b, 64));
	LF_CHECK(t.err == expected(b));
	LF_CHECK(t.err <= 0);
	if (is_err && !compressed)
		LF_CHECK(t.err < 0);		/* an error CQE is never a completion */

	LF_CHECK(t.info.opcode == op);
	LF_CHECK(t.info.format == ((b[63] >> 2) & 3));
	LF_CHECK(t.info.owner == (b[63] & 1));
	LF_CHECK(t.info.se == ((b[63] >> 1) & 1));
	LF_CHECK(t.info.is_error == (is_err && !compressed));
	/* filled in every case, the compressed one included */
	LF_CHECK(t.info.wqe_opcode == b[56]);
	LF_CHECK(t.info.qpn == (be32(b + 56) & 0xffffff));
	LF_CHECK(t.info.wqe_counter == be16(b + 60));
	LF_CHECK(t.info.byte_cnt == be32(b + 44));
	LF_CHECK(t.info.imm == be32(b + 36));
	LF_CHECK(t.info.srqn_uidx == (be32(b + 32) & 0xffffff));
	LF_CHECK(t.info.rqpn == (be32(b + 24) & 0xffffff));
	LF_CHECK(t.info.slid == be16(b + 22));
	LF_CHECK(t.info.timestamp == ((uint64_t)be32(b + 48) << 32 | be32(b + 52)));
	LF_CHECK(t.info.rsvd == 0);
	if (t.info.is_error && op != DVX_MLX5_CQE_SIG_ERR) {
		LF_CHECK(t.info.syndrome == b[55]);
		LF_CHECK(t.info.vendor_syndrome == b[54]);
		LF_CHECK(t.info.hw_synd_type == b[53]);
		LF_CHECK(t.info.hw_err_synd == b[52]);
	} else {
		LF_CHECK(!t.info.syndrome && !t.info.vendor_syndrome && !t.info.hw_synd_type &&
			 !t.info.hw_err_synd);
	}

	lf_check_text(fmt_cqe, &t, cut);
	n = fmt_cqe(&t, NULL, 0);
	s = malloc(n + 1);
	LF_CHECK(s != NULL);
	fmt_cqe(&t, s, n + 1);
	if (compressed) {
		size_t lines = 0, i;

		for (i = 0; i < n; i++)
			lines += s[i] == '\n';
		LF_CHECK(lines == 4 && !strncmp(s, "format: compressed (3)\n", 23));
	} else if (t.info.is_error && op != DVX_MLX5_CQE_SIG_ERR) {
		char want[96];

		snprintf(want, sizeof(want), "\nsyndrome: %s (0x%02x)\n",
			 dvx_mlx5_syndrome_name(b[55]), b[55]);
		LF_CHECK(strstr(s, want) != NULL);
	}
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lf_in in = { data, size };
	uint32_t log = lf_u8(&in) % (MAX_LOG + 1), n = 1u << log, i, taken = 0;
	size_t cut = lf_u8(&in);
	struct dvx_mlx5_cqe_info info;
	struct dvx_mlx5_cq cq;
	dvx_be32 *dbrec = malloc(8);
	uint8_t *ring = aligned_alloc(64, (size_t)n * 64);

	LF_CHECK(ring && dbrec);
	lf_bytes(&in, ring, (size_t)n * 64);
	for (i = 0; i < n; i++)
		check_entry(ring + (size_t)i * 64, cut + i);

	/* the poll loop takes what the owner-bit rule hands to software, in order */
	memset(dbrec, 0xee, 8);
	LF_CHECK(dvx_mlx5_cq_init(&cq, ring, log, dbrec, 0x1234) == 0);
	for (;;) {
		const uint8_t *b = ring + (size_t)(cq.ci & (n - 1)) * 64;
		uint32_t ci = cq.ci;
		int owned = dvx_mlx5_cqe_sw_owned(b[63], ci, log), r, want;

		r = dvx_mlx5_cq_poll_one(&cq, &info);
		if (!owned) {
			LF_CHECK(r == 0 && cq.ci == ci);
			break;
		}
		want = expected(b);
		LF_CHECK(r == (want ? want : 1));
		LF_CHECK(cq.ci == ci + 1);
		LF_CHECK(info.wqe_counter == be16(b + 60));
		taken++;
		/* the same entry is never software's on the next pass */
		LF_CHECK(taken <= n);
	}
	dvx_mlx5_cq_update_ci(&cq);
	LF_CHECK(dvx_be32_to_cpu(dbrec[DVX_MLX5_CQ_SET_CI]) == (cq.ci & 0xffffff));
	free(ring);
	free(dbrec);
	return 0;
}

/* ---- seeds: the CQEs of the byte-exact tests (tests/decode, tests/mlx5/test_cq.c) ---- */

static void put_cqe(uint8_t *b, uint8_t op_own, uint8_t wqe_op, uint32_t qpn, uint16_t ctr,
		    uint32_t byte_cnt, uint32_t imm)
{
	memset(b, 0, 64);
	b[36] = (uint8_t)(imm >> 24);
	b[37] = (uint8_t)(imm >> 16);
	b[38] = (uint8_t)(imm >> 8);
	b[39] = (uint8_t)imm;
	b[44] = (uint8_t)(byte_cnt >> 24);
	b[45] = (uint8_t)(byte_cnt >> 16);
	b[46] = (uint8_t)(byte_cnt >> 8);
	b[47] = (uint8_t)byte_cnt;
	b[56] = wqe_op;
	b[57] = (uint8_t)(qpn >> 16);
	b[58] = (uint8_t)(qpn >> 8);
	b[59] = (uint8_t)qpn;
	b[60] = (uint8_t)(ctr >> 8);
	b[61] = (uint8_t)ctr;
	b[63] = op_own;
}

static void write_seeds(void)
{
	uint8_t buf[2 + 16 * 64], *e = buf + 2;
	static const uint8_t synd[] = { 0x01, 0x02, 0x04, 0x05, 0x06, 0x10, 0x11, 0x12, 0x13,
					0x14, 0x15, 0x16, 0x22, 0x7f };
	unsigned i;

	/* one entry of each sort */
	buf[0] = 0;
	buf[1] = 40;
	put_cqe(e, 0x00, DVX_MLX5_OPCODE_RDMA_WRITE, 0x123, 5, 0, 0);
	lf_seed("req-write", buf, 2 + 64);
	put_cqe(e, 0x10, 0, 0x123, 7, 64, 0xdeadbeef);
	lf_seed("resp-write-imm", buf, 2 + 64);
	put_cqe(e, 0x22, 0, 0x123, 8, 4096, 0);
	lf_seed("resp-send-se", buf, 2 + 64);
	put_cqe(e, 0xd0, DVX_MLX5_OPCODE_RDMA_WRITE, 0x123, 9, 0, 0);
	e[55] = 0x13;	/* REMOTE_ACCESS_ERR */
	e[54] = 0x93;	/* ODP */
	lf_seed("req-err-remote-access-odp", buf, 2 + 64);
	put_cqe(e, 0xe0, 0, 0x123, 3, 0, 0);
	e[55] = 0x05;	/* WR_FLUSH_ERR */
	lf_seed("resp-err-flush", buf, 2 + 64);
	put_cqe(e, 0xc0, 0, 0x123, 3, 0, 0);
	lf_seed("sig-err", buf, 2 + 64);
	put_cqe(e, 0x0c, 0, 0x123, 3, 0, 0);
	lf_seed("compressed", buf, 2 + 64);
	put_cqe(e, 0xf1, 0, 0, 0, 0, 0);
	lf_seed("invalid-initial", buf, 2 + 64);

	/* a ring of 16: a first pass of completions and errors, ending in fresh entries */
	buf[0] = 4;
	for (i = 0; i < 16; i++) {
		uint8_t *b = e + i * 64;

		if (i < 12 && i % 3 != 2) {
			put_cqe(b, i & 1 ? 0x00 : 0x20, DVX_MLX5_OPCODE_SEND, 0x42, (uint16_t)i,
				(uint32_t)i * 8, 0);
		} else if (i < 12) {
			put_cqe(b, 0xd0, DVX_MLX5_OPCODE_RDMA_READ, 0x42, (uint16_t)i, 0, 0);
			b[55] = synd[i % sizeof(synd)];
		} else {
			put_cqe(b, 0xf1, 0, 0, 0, 0, 0);
		}
	}
	lf_seed("ring16-mixed", buf, sizeof(buf));
	/* the second pass: owner 1 */
	for (i = 0; i < 16; i++)
		put_cqe(e + i * 64, 0x01, DVX_MLX5_OPCODE_RDMA_WRITE_IMM, 0x42, (uint16_t)(16 + i),
			0, 0);
	lf_seed("ring16-second-pass", buf, sizeof(buf));
	/* every syndrome the table names */
	buf[0] = 4;
	for (i = 0; i < 16; i++) {
		put_cqe(e + i * 64, 0xd0, DVX_MLX5_OPCODE_ATOMIC_CS, 0x42, (uint16_t)i, 0, 0);
		e[i * 64 + 55] = synd[i % sizeof(synd)];
	}
	lf_seed("ring16-syndromes", buf, sizeof(buf));
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	lf_seed_mode(write_seeds);
	return 0;
}
