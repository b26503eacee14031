// SPDX-License-Identifier: MIT
/*
 * Completion queue (dvx/mlx5/cqe.h) against prm 4.
 *
 * A simulated device writes CQEs pass after pass with owner = (index >> log) & 1 and
 * the poller must see exactly the written entries, in order, and never a stale one
 * (prm 4.2). CQEs for the decoder are built at the byte offsets of prm 4.1 and
 * 4.5; every syndrome maps to the errno documented on dvx_mlx5_cqe_syndrome_errno().
 */
#include "mlx5_test.h"

#include <errno.h>
#include <dvx/mlx5/cqe.h>

#define CQN 0x00abcdu

/* ---- CQE images at prm 4's byte offsets ---- */

struct cqe_fields {
	uint8_t op_own;		/* 63 */
	uint8_t wqe_opcode;	/* 56 */
	uint32_t qpn;		/* 57-59 */
	uint16_t wqe_counter;	/* 60-61 */
	uint32_t byte_cnt;	/* 44-47 */
	uint32_t imm;		/* 36-39 */
	uint32_t srqn_uidx;	/* 32-35 (all 32 bits written) */
	uint32_t flags_rqpn;	/* 24-27 (all 32 bits written) */
	uint16_t slid;		/* 22-23 */
	uint64_t timestamp;	/* 48-55 */
	uint8_t hw_err_synd;	/* 52 (error CQEs) */
	uint8_t hw_synd_type;	/* 53 */
	uint8_t vendor;		/* 54 */
	uint8_t syndrome;	/* 55 */
};

static void cqe_build(uint8_t *c, const struct cqe_fields *f, int error_layout)
{
	uint32_t i;

	for (i = 0; i < 64; i++)
		c[i] = (uint8_t)(0x40 + i);	/* background noise in the reserved bytes */
	t_be16(c + 22, f->slid);
	t_be32(c + 24, f->flags_rqpn);
	t_be32(c + 32, f->srqn_uidx);
	t_be32(c + 36, f->imm);
	t_be32(c + 44, f->byte_cnt);
	if (error_layout) {
		c[52] = f->hw_err_synd;
		c[53] = f->hw_synd_type;
		c[54] = f->vendor;
		c[55] = f->syndrome;
	} else {
		t_be64(c + 48, f->timestamp);
	}
	c[56] = f->wqe_opcode;
	t_be24(c + 57, f->qpn);
	t_be16(c + 60, f->wqe_counter);
	c[62] = 0;
	c[63] = f->op_own;
}

static uint64_t be64_at(const uint8_t *p)
{
	return ((uint64_t)t_get_be32(p) << 32) | t_get_be32(p + 4);
}

/* the fields every CQE yields, whatever its opcode */
static void assert_common(const struct dvx_mlx5_cqe_info *info, const uint8_t *c)
{
	assert_int_equal(info->opcode, c[63] >> 4);
	assert_int_equal(info->format, (c[63] >> 2) & 3);
	assert_int_equal(info->owner, c[63] & 1);
	assert_int_equal(info->se, (c[63] >> 1) & 1);
	assert_int_equal(info->wqe_opcode, c[56]);
	assert_int_equal(info->qpn, t_get_be32(c + 56) & 0xffffff);
	assert_int_equal(info->wqe_counter, ((unsigned)c[60] << 8) | c[61]);
	assert_int_equal(info->byte_cnt, t_get_be32(c + 44));
	assert_int_equal(info->imm, t_get_be32(c + 36));
	assert_int_equal(info->srqn_uidx, t_get_be32(c + 32) & 0xffffff);
	assert_int_equal(info->rqpn, t_get_be32(c + 24) & 0xffffff);
	assert_int_equal(info->slid, ((unsigned)c[22] << 8) | c[23]);
	assert_true(info->timestamp == be64_at(c + 48));
}

static int parse(const uint8_t *c, struct dvx_mlx5_cqe_info *info)
{
	memset(info, 0xee, sizeof(*info));
	return dvx_mlx5_cqe_parse((const void *)c, info);
}

/* ---- constants ---- */

static void test_constants(void **state)
{
	(void)state;
	/* prm 4.1 */
	assert_int_equal(DVX_MLX5_CQE_REQ, 0);
	assert_int_equal(DVX_MLX5_CQE_RESP_WR_IMM, 1);
	assert_int_equal(DVX_MLX5_CQE_RESP_SEND, 2);
	assert_int_equal(DVX_MLX5_CQE_RESP_SEND_IMM, 3);
	assert_int_equal(DVX_MLX5_CQE_RESP_SEND_INV, 4);
	assert_int_equal(DVX_MLX5_CQE_RESIZE_CQ, 5);
	assert_int_equal(DVX_MLX5_CQE_NO_PACKET, 6);
	assert_int_equal(DVX_MLX5_CQE_SIG_ERR, 12);
	assert_int_equal(DVX_MLX5_CQE_REQ_ERR, 13);
	assert_int_equal(DVX_MLX5_CQE_RESP_ERR, 14);
	assert_int_equal(DVX_MLX5_CQE_INVALID, 15);
	assert_int_equal(DVX_MLX5_CQE_FORMAT_NORMAL, 0);
	assert_int_equal(DVX_MLX5_CQE_FORMAT_INLINE32, 1);
	assert_int_equal(DVX_MLX5_CQE_FORMAT_INLINE64, 2);
	assert_int_equal(DVX_MLX5_CQE_FORMAT_COMPRESSED, 3);
	assert_int_equal(DVX_MLX5_CQE_OWNER_MASK, 0x01);
	assert_int_equal(DVX_MLX5_CQE_SE_MASK, 0x02);
	assert_int_equal(DVX_MLX5_CQE_SIZE, 64);
	/* prm 1.6: INVALID opcode, owner 1 */
	assert_int_equal(DVX_MLX5_CQE_INIT_OP_OWN, 0xf1);
	/* prm 4.5 */
	assert_int_equal(DVX_MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR, 0x01);
	assert_int_equal(DVX_MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR, 0x02);
	assert_int_equal(DVX_MLX5_CQE_SYNDROME_LOCAL_PROT_ERR, 0x04);
	assert_int_equal(DVX_MLX5_CQE_SYNDROME_WR_FLUSH_ERR, 0x05);
	assert_int_equal(DVX_MLX5_CQE_SYNDROME_MW_BIND_ERR, 0x06);
	assert_int_equal(DVX_MLX5_CQE_SYNDROME_BAD_RESP_ERR, 0x10);
	assert_int_equal(DVX_MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR, 0x11);
	assert_int_equal(DVX_MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR, 0x12);
	assert_int_equal(DVX_MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR, 0x13);
	assert_int_equal(DVX_MLX5_CQE_SYNDROME_REMOTE_OP_ERR, 0x14);
	assert_int_equal(DVX_MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR, 0x15);
	assert_int_equal(DVX_MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR, 0x16);
	assert_int_equal(DVX_MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR, 0x22);
	/* prm 3.1, 4.4, 1.4 */
	assert_int_equal(DVX_MLX5_CQ_SET_CI, 0);
	assert_int_equal(DVX_MLX5_CQ_ARM_DB, 1);
	assert_int_equal(DVX_MLX5_RCV_DBR, 0);
	assert_int_equal(DVX_MLX5_SND_DBR, 1);
	assert_int_equal(DVX_MLX5_DBR_BYTES, 8);
	assert_int_equal(DVX_MLX5_CQ_CI_MASK, 0xffffff);
	assert_int_equal(DVX_MLX5_UAR_CQ_DOORBELL, 0x20);
	assert_int_equal(DVX_MLX5_UAR_BF_OFFSET, 0x800);
	assert_int_equal(DVX_MLX5_UAR_DBR_LESS_DB, 0x600);
	assert_int_equal(DVX_MLX5_UAR_PAGE_SIZE, 4096);
}

/* ---- init ---- */

static void test_init_args(void **state)
{
	uint8_t *buf = t_ring_alloc(64 * 64, 0), *dbr = t_ring_alloc(64, 0);
	struct dvx_mlx5_cq cq, before;
	dvx_be32 *db = (void *)dbr;

	(void)state;
	memset(&cq, 0x3c, sizeof(cq));
	before = cq;
	assert_int_equal(dvx_mlx5_cq_init(&cq, NULL, 6, db, CQN), -EINVAL);
	assert_int_equal(dvx_mlx5_cq_init(&cq, buf + 32, 6, db, CQN), -EINVAL);
	assert_int_equal(dvx_mlx5_cq_init(&cq, buf, 25, db, CQN), -EINVAL);
	assert_int_equal(dvx_mlx5_cq_init(&cq, buf, 6, NULL, CQN), -EINVAL);
	assert_int_equal(dvx_mlx5_cq_init(&cq, buf, 6, (void *)(dbr + 4), CQN), -EINVAL);
	assert_int_equal(dvx_mlx5_cq_init(&cq, buf, 6, db, 0x1000000), -EINVAL);
	assert_memory_equal(&cq, &before, sizeof(cq));

	memset(buf, T_POISON, 64 * 64);
	memset(dbr, T_POISON, 64);
	assert_int_equal(dvx_mlx5_cq_init(&cq, buf, 6, db, 0xffffff), 0);
	assert_ptr_equal(cq.buf, buf);
	assert_int_equal(cq.log_size, 6);
	assert_int_equal(cq.ci, 0);
	assert_ptr_equal(cq.dbrec, db);
	assert_int_equal(cq.cqn, 0xffffff);
	assert_int_equal(dvx_mlx5_cq_init(&cq, buf, 0, (void *)(dbr + 8), 0), 0);
	assert_int_equal(dvx_mlx5_cq_init(&cq, buf, 24, db, CQN), 0);
	/* init touches neither the ring nor the record */
	assert_fill(buf, 0, 64 * 64, T_POISON);
	assert_fill(dbr, 0, 64, T_POISON);
	dvx_test_free(buf);
	dvx_test_free(dbr);
}

/* a fresh ring: every op_own 0xf1, nothing else written, and nothing looks valid on
 * any pass */
static void test_ring_init(void **state)
{
	uint32_t log;

	(void)state;
	for (log = 0; log <= 12; log++) {
		uint32_t n = 1u << log, i;
		uint8_t *buf = t_ring_alloc((size_t)n * 64, T_POISON);
		uint8_t *dbr = t_ring_alloc(64, T_POISON);
		struct dvx_mlx5_cq cq;

		memset(&cq, 0, sizeof(cq));
		dvx_mlx5_cq_ring_init(buf, log);
		for (i = 0; i < n; i++) {
			assert_fill(buf + 64 * i, 0, 63, T_POISON);
			assert_int_equal(buf[64 * i + 63], 0xf1);
		}
		assert_int_equal(dvx_mlx5_cq_init(&cq, buf, log, (void *)dbr, CQN), 0);
		for (i = 0; i < 4 * n + 3; i++) {
			struct dvx_mlx5_cqe_info info;

			cq.ci = i;
			assert_null(dvx_mlx5_cq_peek(&cq));
			assert_int_equal(dvx_mlx5_cq_poll_one(&cq, &info), 0);
			assert_int_equal(cq.ci, i);
		}
		cq.ci = 0xfffffff0u;	/* far along, either owner parity */
		for (i = 0; i < 32; i++, cq.ci++)
			assert_null(dvx_mlx5_cq_peek(&cq));
		assert_fill(dbr, 0, 64, T_POISON);
		dvx_test_free(buf);
		dvx_test_free(dbr);
	}
}

/* opcode INVALID is never software-owned, whatever the owner bit and counter */
static void test_invalid_never_valid(void **state)
{
	uint32_t log, ci, low;

	(void)state;
	for (log = 0; log <= 12; log++) {
		for (ci = 0; ci < 4u << log; ci += 1 + (ci >> 3)) {
			for (low = 0; low < 16; low++) {
				uint8_t op_own = (uint8_t)(0xf0 | low);
				unsigned opc;

				assert_false(dvx_mlx5_cqe_sw_owned(op_own, ci, log));
				/* every other opcode follows the owner rule alone */
				for (opc = 0; opc < 15; opc++) {
					uint8_t o = (uint8_t)((opc << 4) | low);

					assert_int_equal(dvx_mlx5_cqe_sw_owned(o, ci, log),
							 (low & 1) == ((ci >> log) & 1));
				}
			}
		}
	}
}

/*
 * The owner-bit rule over ten passes for log sizes 0 ... 12: a device model writes
 * CQEs in batches of random size (never overrunning the consumer), the poller takes
 * what is there. It must get every written entry exactly once, in order, and stop
 * at the first unwritten one, which from the second pass on holds the previous
 * pass's CQE with the other owner bit.
 */
static void test_owner_rule_passes(void **state)
{
	uint64_t seed = 0xc0ffee;
	uint32_t log;

	(void)state;
	for (log = 0; log <= 12; log++) {
		uint32_t n = 1u << log, prod = 0, total = 10 * n;
		uint8_t *buf = t_ring_alloc((size_t)n * 64, T_POISON);
		uint8_t *dbr = t_ring_alloc(64, T_POISON);
		struct dvx_mlx5_cq cq;

		memset(&cq, 0, sizeof(cq));
		dvx_mlx5_cq_ring_init(buf, log);
		assert_int_equal(dvx_mlx5_cq_init(&cq, buf, log, (void *)dbr, CQN), 0);
		while (cq.ci < total) {
			uint32_t room = n - (prod - cq.ci), k, j;

			k = room ? t_rand32(&seed) % (room + 1) : 0;
			if (k > total - prod)
				k = total - prod;
			for (j = 0; j < k; j++, prod++) {
				struct cqe_fields f = {
					.op_own = (uint8_t)((DVX_MLX5_CQE_REQ << 4) |
							    ((prod >> log) & 1)),
					.wqe_opcode = 0x08,
					.qpn = 0x123,
					.wqe_counter = (uint16_t)prod,
					.byte_cnt = prod,
				};

				cqe_build(buf + 64 * (prod & (n - 1)), &f, 0);
			}
			/* take everything that is there */
			while (cq.ci != prod) {
				struct dvx_mlx5_cqe_info info;
				struct dvx_mlx5_cqe64 *cqe = dvx_mlx5_cq_peek(&cq);

				assert_non_null(cqe);
				assert_ptr_equal(cqe, buf + 64 * (cq.ci & (n - 1)));
				if (cq.ci & 1) {
					assert_int_equal(dvx_mlx5_cq_poll_one(&cq, &info), 1);
					assert_int_equal(info.byte_cnt, cq.ci - 1);
					assert_int_equal(info.wqe_counter, (uint16_t)(cq.ci - 1));
				} else {
					assert_int_equal(parse((const void *)cqe, &info), 0);
					assert_int_equal(info.byte_cnt, cq.ci);
					dvx_mlx5_cq_pop(&cq);
				}
			}
			/* caught up: the entry at ci is unwritten (init or a stale pass) */
			assert_null(dvx_mlx5_cq_peek(&cq));
			if (t_rand32(&seed) & 1) {
				dvx_mlx5_cq_update_ci(&cq);
				assert_int_equal(t_get_be32(dbr), cq.ci & 0xffffff);
			}
		}
		assert_int_equal(prod, total);
		assert_fill(dbr, 4, 64, T_POISON);	/* the arm word is never written */
		dvx_test_free(buf);
		dvx_test_free(dbr);
	}
}

/* ---- the decoder ---- */

static void test_parse_requester(void **state)
{
	struct dvx_mlx5_cqe_info info;
	uint8_t c[64] DVX_ALIGNED(64);
	struct cqe_fields f = {
		.op_own = 0x01,			/* REQ, format 0, owner 1 */
		.wqe_opcode = 0x08,		/* RDMA_WRITE */
		.qpn = 0x000123,
		.wqe_counter = 0x0005,
		.byte_cnt = 0,
		.timestamp = 0x0102030405060708ull,
		.srqn_uidx = 0xff00beef,
		.flags_rqpn = 0x07000000,
	};

	(void)state;
	cqe_build(c, &f, 0);
	assert_hex(c + 56, "08 00 01 23 00 05 00 01");
	assert_int_equal(parse(c, &info), 0);
	assert_common(&info, c);
	assert_int_equal(info.opcode, DVX_MLX5_CQE_REQ);
	assert_int_equal(info.wqe_opcode, 0x08);
	assert_int_equal(info.qpn, 0x123);
	assert_int_equal(info.wqe_counter, 5);
	assert_int_equal(info.owner, 1);
	assert_int_equal(info.is_error, 0);
	assert_int_equal(info.syndrome, 0);
	assert_int_equal(info.vendor_syndrome, 0);
	assert_int_equal(info.hw_err_synd, 0);
	assert_int_equal(info.hw_synd_type, 0);
	assert_true(info.timestamp == 0x0102030405060708ull);
	assert_int_equal(info.srqn_uidx, 0x00beef);
	assert_int_equal(info.rqpn, 0);

	/* an RDMA READ reports its bytes; a full-width QPN and counter */
	f.op_own = 0x00;
	f.wqe_opcode = 0x10;
	f.qpn = 0xffffff;
	f.wqe_counter = 0xffff;
	f.byte_cnt = 0x12345678;
	cqe_build(c, &f, 0);
	assert_int_equal(parse(c, &info), 0);
	assert_common(&info, c);
	assert_int_equal(info.wqe_opcode, 0x10);
	assert_int_equal(info.qpn, 0xffffff);
	assert_int_equal(info.wqe_counter, 0xffff);
	assert_int_equal(info.byte_cnt, 0x12345678);
	assert_int_equal(info.owner, 0);
}

static void test_parse_responder(void **state)
{
	static const uint8_t ops[4] = { DVX_MLX5_CQE_RESP_WR_IMM, DVX_MLX5_CQE_RESP_SEND,
					DVX_MLX5_CQE_RESP_SEND_IMM, DVX_MLX5_CQE_RESP_SEND_INV };
	struct dvx_mlx5_cqe_info info;
	uint8_t c[64] DVX_ALIGNED(64);
	unsigned i, fmt;

	(void)state;
	for (i = 0; i < 4; i++) {
		for (fmt = 0; fmt < 3; fmt++) {
			struct cqe_fields f = {
				.op_own = (uint8_t)((ops[i] << 4) | (fmt << 2) | 0x02 | (i & 1)),
				.wqe_opcode = 0,
				.qpn = 0x00abcd,
				.wqe_counter = 0x1234,
				.byte_cnt = 0x00010000,
				.imm = 0xdeadbeef,
				.srqn_uidx = 0xff123456,	/* [31:24] not part of the field */
				.flags_rqpn = 0x07fedcba,	/* [26:24] RoCE L3 type */
				.slid = 0xbeef,
				.timestamp = 0xfedcba9876543210ull,
			};

			cqe_build(c, &f, 0);
			assert_hex(c + 36, "de ad be ef");
			assert_int_equal(parse(c, &info), 0);
			assert_common(&info, c);
			assert_int_equal(info.opcode, ops[i]);
			assert_int_equal(info.format, fmt);
			assert_int_equal(info.se, 1);
			assert_int_equal(info.owner, i & 1);
			assert_int_equal(info.is_error, 0);
			assert_int_equal(info.imm, 0xdeadbeef);	/* CPU order */
			assert_int_equal(info.byte_cnt, 0x00010000);
			assert_int_equal(info.rqpn, 0xfedcba);
			assert_int_equal(info.slid, 0xbeef);
			assert_int_equal(info.srqn_uidx, 0x123456);
			assert_int_equal(info.qpn, 0x00abcd);
			assert_int_equal(info.wqe_counter, 0x1234);
			assert_true(info.timestamp == 0xfedcba9876543210ull);
		}
	}
}

/* the errno table documented on dvx_mlx5_cqe_syndrome_errno() */
static const struct {
	uint8_t syndrome;
	int err;
} errno_table[] = {
	{ 0x01, -EMSGSIZE },	{ 0x02, -EINVAL },	 { 0x04, -EACCES },
	{ 0x05, -ECANCELED },	{ 0x06, -EINVAL },	 { 0x10, -EPROTO },
	{ 0x11, -EFAULT },	{ 0x12, -EREMOTEIO },	 { 0x13, -EPERM },
	{ 0x14, -EREMOTEIO },	{ 0x15, -EHOSTUNREACH }, { 0x16, -ENOBUFS },
	{ 0x22, -ECONNABORTED },
};

static int expected_errno(uint8_t syndrome)
{
	size_t i;

	for (i = 0; i < DVX_ARRAY_SIZE(errno_table); i++)
		if (errno_table[i].syndrome == syndrome)
			return errno_table[i].err;
	return -EIO;
}

static void test_syndrome_errno(void **state)
{
	unsigned s;

	(void)state;
	for (s = 0; s < 256; s++)
		assert_int_equal(dvx_mlx5_cqe_syndrome_errno((uint8_t)s),
				 expected_errno((uint8_t)s));
	/* every errno is an error */
	for (s = 0; s < 256; s++)
		assert_true(dvx_mlx5_cqe_syndrome_errno((uint8_t)s) < 0);
}

static void test_parse_errors(void **state)
{
	static const uint8_t unknown[] = { 0x00, 0x03, 0x07, 0x0f, 0x17, 0x20, 0x21, 0x23,
					   0x93, 0x99, 0xff };
	static const uint8_t err_ops[2] = { DVX_MLX5_CQE_REQ_ERR, DVX_MLX5_CQE_RESP_ERR };
	struct dvx_mlx5_cqe_info info;
	uint8_t c[64] DVX_ALIGNED(64);
	size_t i, o;

	(void)state;
	for (o = 0; o < 2; o++) {
		for (i = 0; i < DVX_ARRAY_SIZE(errno_table) + DVX_ARRAY_SIZE(unknown); i++) {
			uint8_t s = i < DVX_ARRAY_SIZE(errno_table) ?
					    errno_table[i].syndrome :
					    unknown[i - DVX_ARRAY_SIZE(errno_table)];
			struct cqe_fields f = {
				.op_own = (uint8_t)((err_ops[o] << 4) | (i & 1)),
				.wqe_opcode = 0x12,		/* the failed WQE: FETCH_ADD */
				.qpn = 0xabcdef,
				.wqe_counter = 0xbeef,
				.srqn_uidx = 0x00000777,
				.hw_err_synd = 0x5b,
				.hw_synd_type = 0x3c,
				.vendor = 0x93,
				.syndrome = s,
			};

			cqe_build(c, &f, 1);
			/* prm 4.5 offsets */
			assert_int_equal(c[52], 0x5b);
			assert_int_equal(c[53], 0x3c);
			assert_int_equal(c[54], 0x93);
			assert_int_equal(c[55], s);
			assert_hex(c + 56, "12 ab cd ef be ef");
			assert_int_equal(parse(c, &info), expected_errno(s));
			assert_int_equal(info.is_error, 1);
			assert_int_equal(info.opcode, err_ops[o]);
			assert_int_equal(info.syndrome, s);
			assert_int_equal(info.vendor_syndrome, 0x93);
			assert_int_equal(info.hw_err_synd, 0x5b);
			assert_int_equal(info.hw_synd_type, 0x3c);
			assert_int_equal(info.wqe_opcode, 0x12);
			assert_int_equal(info.qpn, 0xabcdef);
			assert_int_equal(info.wqe_counter, 0xbeef);
			assert_int_equal(info.owner, i & 1);
			assert_int_equal(info.srqn_uidx, 0x777);
		}
	}
}

/* format 3 (compressed) is refused as -EPROTO and is no error CQE; SIG_ERR is
 * -EBADMSG; RESIZE, NO_PACKET, INVALID and the unassigned opcodes are -EPROTO */
static void test_parse_other(void **state)
{
	struct dvx_mlx5_cqe_info info;
	uint8_t c[64] DVX_ALIGNED(64);
	struct cqe_fields f = {
		.wqe_opcode = 0x08,
		.qpn = 0x123,
		.wqe_counter = 7,
		.syndrome = 0x13,
	};
	unsigned opc;

	(void)state;
	for (opc = 0; opc < 16; opc++) {
		f.op_own = (uint8_t)((opc << 4) | (3 << 2) | 1);
		cqe_build(c, &f, 0);
		assert_int_equal(parse(c, &info), -EPROTO);
		assert_int_equal(info.is_error, 0);
		assert_int_equal(info.format, 3);
		assert_int_equal(info.opcode, opc);
		assert_int_equal(info.syndrome, 0);
	}
	f.op_own = DVX_MLX5_CQE_SIG_ERR << 4;
	cqe_build(c, &f, 0);
	assert_int_equal(parse(c, &info), -EBADMSG);
	assert_int_equal(info.opcode, DVX_MLX5_CQE_SIG_ERR);
	assert_int_equal(info.is_error, 1);
	for (opc = 5; opc < 16; opc++) {
		if (opc == DVX_MLX5_CQE_SIG_ERR || opc == DVX_MLX5_CQE_REQ_ERR ||
		    opc == DVX_MLX5_CQE_RESP_ERR)
			continue;
		f.op_own = (uint8_t)(opc << 4);
		cqe_build(c, &f, 0);
		assert_int_equal(parse(c, &info), -EPROTO);
		assert_int_equal(info.opcode, opc);
		assert_int_equal(info.is_error, 0);
		assert_common(&info, c);
	}
}

/* poll_one consumes error and unexpected entries like any other */
static void test_poll_one(void **state)
{
	uint8_t *buf = t_ring_alloc(4 * 64, T_POISON), *dbr = t_ring_alloc(64, T_POISON);
	struct dvx_mlx5_cqe_info info;
	struct dvx_mlx5_cq cq;
	struct cqe_fields f = { .wqe_opcode = 0x08, .qpn = 0x123 };

	(void)state;
	memset(&cq, 0, sizeof(cq));
	dvx_mlx5_cq_ring_init(buf, 2);
	assert_int_equal(dvx_mlx5_cq_init(&cq, buf, 2, (void *)dbr, CQN), 0);
	assert_int_equal(dvx_mlx5_cq_poll_one(&cq, &info), 0);
	/* pass 0: owner 0 */
	f.op_own = 0x00;
	f.wqe_counter = 0;
	cqe_build(buf, &f, 0);
	f.op_own = DVX_MLX5_CQE_REQ_ERR << 4;
	f.wqe_counter = 1;
	f.syndrome = DVX_MLX5_CQE_SYNDROME_LOCAL_PROT_ERR;
	cqe_build(buf + 64, &f, 1);
	f.op_own = (3 << 2);	/* compressed */
	f.wqe_counter = 2;
	cqe_build(buf + 128, &f, 0);
	f.op_own = DVX_MLX5_CQE_REQ_ERR << 4;
	f.wqe_counter = 3;
	f.syndrome = DVX_MLX5_CQE_SYNDROME_WR_FLUSH_ERR;
	cqe_build(buf + 192, &f, 1);
	assert_int_equal(dvx_mlx5_cq_poll_one(&cq, &info), 1);
	assert_int_equal(info.wqe_counter, 0);
	assert_int_equal(cq.ci, 1);
	assert_int_equal(dvx_mlx5_cq_poll_one(&cq, &info), -EACCES);
	assert_int_equal(info.wqe_counter, 1);
	assert_int_equal(info.is_error, 1);
	assert_int_equal(cq.ci, 2);
	assert_int_equal(dvx_mlx5_cq_poll_one(&cq, &info), -EPROTO);
	assert_int_equal(cq.ci, 3);
	assert_int_equal(dvx_mlx5_cq_poll_one(&cq, &info), -ECANCELED);
	assert_int_equal(info.syndrome, 0x05);
	assert_int_equal(cq.ci, 4);
	/* the ring is exhausted: entry 0 still holds pass 0's owner 0 */
	assert_int_equal(dvx_mlx5_cq_poll_one(&cq, &info), 0);
	assert_int_equal(cq.ci, 4);
	/* pass 1 writes owner 1 */
	f.op_own = 0x01;
	f.wqe_counter = 4;
	cqe_build(buf, &f, 0);
	assert_int_equal(dvx_mlx5_cq_poll_one(&cq, &info), 1);
	assert_int_equal(info.wqe_counter, 4);
	assert_int_equal(dvx_mlx5_cq_poll_one(&cq, &info), 0);
	/* polling never writes the doorbell record */
	assert_fill(dbr, 0, 64, T_POISON);
	dvx_test_free(buf);
	dvx_test_free(dbr);
}

/* update_ci: DBR word 0 = BE32(ci & 0xffffff), word 1 untouched */
static void test_update_ci(void **state)
{
	static const struct {
		uint32_t ci;
		const char *hex;
	} cases[] = {
		{ 0, "00 00 00 00" },		{ 5, "00 00 00 05" },
		{ 0x123456, "00 12 34 56" },	{ 0xffffff, "00 ff ff ff" },
		{ 0x1000000, "00 00 00 00" },	{ 0x1234567, "00 23 45 67" },
		{ 0xffffffffu, "00 ff ff ff" },
	};
	uint8_t *buf = t_ring_alloc(64, 0), *dbr = t_ring_alloc(64, T_POISON);
	struct dvx_mlx5_cq cq;
	size_t i;

	(void)state;
	memset(&cq, 0, sizeof(cq));
	assert_int_equal(dvx_mlx5_cq_init(&cq, buf, 0, (void *)dbr, CQN), 0);
	for (i = 0; i < DVX_ARRAY_SIZE(cases); i++) {
		memset(dbr, T_POISON, 64);
		cq.ci = cases[i].ci;
		dvx_mlx5_cq_update_ci(&cq);
		assert_hex(dbr, cases[i].hex);
		assert_fill(dbr, 4, 64, T_POISON);
		assert_int_equal(cq.ci, cases[i].ci);
	}
	dvx_test_free(buf);
	dvx_test_free(dbr);
}

/* the entry address: counter mod size, 64 bytes apart */
static void test_cqe_at(void **state)
{
	uint8_t *buf = t_ring_alloc(16 * 64, 0);

	(void)state;
	assert_ptr_equal(dvx_mlx5_cqe_at(buf, 4, 0), buf);
	assert_ptr_equal(dvx_mlx5_cqe_at(buf, 4, 15), buf + 15 * 64);
	assert_ptr_equal(dvx_mlx5_cqe_at(buf, 4, 16), buf);
	assert_ptr_equal(dvx_mlx5_cqe_at(buf, 4, 0xffffffffu), buf + 15 * 64);
	assert_ptr_equal(dvx_mlx5_cqe_at(buf, 0, 12345), buf);
	dvx_test_free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_constants),
		cmocka_unit_test(test_init_args),
		cmocka_unit_test(test_ring_init),
		cmocka_unit_test(test_invalid_never_valid),
		cmocka_unit_test(test_owner_rule_passes),
		cmocka_unit_test(test_parse_requester),
		cmocka_unit_test(test_parse_responder),
		cmocka_unit_test(test_syndrome_errno),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_parse_other),
		cmocka_unit_test(test_poll_one),
		cmocka_unit_test(test_update_ci),
		cmocka_unit_test(test_cqe_at),
	};

	return cmocka_run_group_tests_name("mlx5-cq", tests, NULL, NULL);
}
