// SPDX-License-Identifier: MIT
/*
 * PRM command encoders/decoders (mlx5/cmd.c) against prm 1.1 and 1.6-1.8.
 *
 * Nothing here reads a mailbox through dvx's own accessors: bit positions are
 * transcribed from docs/prm.md's tables into the tables below and read with raw byte
 * arithmetic (raw_get/raw_put/raw_mask), so a wrong macro in cmd.h and a wrong
 * accessor in ifc.h both show up as a mismatch.
 */
#include "../../lib/dvx_test.h"

#include <errno.h>

#include <dvx/mlx5/cmd.h>

#define MB 272	/* the largest mailbox used here */

#define CHECK(cond, ...)                                  \
	do {                                              \
		if (!(cond)) {                            \
			print_error(__VA_ARGS__);         \
			print_error("\n");                \
			fail_msg("check failed: %s", #cond); \
		}                                         \
	} while (0)

/* ------------------------------------------------------------------------- */
/* raw big-endian dword bit arithmetic, independent of dvx/mlx5/ifc.h         */

/* bit b (0 = LSB) of the dword at @byte lives in byte @byte + 3 - b / 8 */
static unsigned raw_bit(const uint8_t *mb, unsigned byte, unsigned b)
{
	return (mb[byte + 3 - b / 8] >> (b % 8)) & 1u;
}

static uint64_t raw_get(const uint8_t *mb, unsigned byte, unsigned hi, unsigned lo)
{
	uint64_t v = 0;
	unsigned b;

	for (b = hi + 1; b-- > lo;)
		v = (v << 1) | raw_bit(mb, byte, b);
	return v;
}

static void raw_put(uint8_t *mb, unsigned byte, unsigned hi, unsigned lo, uint64_t v)
{
	unsigned b;

	for (b = lo; b <= hi; b++) {
		uint8_t *p = &mb[byte + 3 - b / 8];
		uint8_t m = (uint8_t)(1u << (b % 8));

		if ((v >> (b - lo)) & 1)
			*p |= m;
		else
			*p &= (uint8_t)~m;
	}
}

static void raw_mask(uint8_t *m, unsigned byte, unsigned hi, unsigned lo)
{
	unsigned b;

	for (b = lo; b <= hi; b++)
		m[byte + 3 - b / 8] |= (uint8_t)(1u << (b % 8));
}

static uint64_t raw_be64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = (v << 8) | p[i];
	return v;
}

/* write a hex byte string into @w at @byte */
static void want_hex(uint8_t *w, unsigned byte, const char *hex)
{
	size_t n = dvx_test_hex(hex, w + byte, MB - byte);

	assert_true(byte + n <= MB);
}

/* ------------------------------------------------------------------------- */
/* (1) the header's macros are docs/prm.md's tables                               */

struct macro_row {
	const char *name;
	unsigned m[3];	/* what cmd.h / ifc.h say */
	unsigned f[3];	/* transcribed from docs/prm.md */
};

#define ROW(name, macro, b, h, l) { name, { macro }, { b, h, l } }

/* prm 1.6 cqc table, cqc-relative */
static const struct macro_row cqc_rows[] = {
	ROW("cqc.status", DVX_MLX5_CQC_STATUS, 0, 31, 28),
	ROW("cqc.dbr_umem_valid", DVX_MLX5_CQC_DBR_UMEM_VALID, 0, 25, 25),
	ROW("cqc.cqe_sz", DVX_MLX5_CQC_CQE_SZ, 0, 23, 21),
	ROW("cqc.cc", DVX_MLX5_CQC_CC, 0, 20, 20),
	ROW("cqc.oi", DVX_MLX5_CQC_OI, 0, 17, 17),
	ROW("cqc.cq_period_mode", DVX_MLX5_CQC_CQ_PERIOD_MODE, 0, 16, 15),
	ROW("cqc.cqe_comp_en", DVX_MLX5_CQC_CQE_COMP_EN, 0, 14, 14),
	ROW("cqc.mini_cqe_res_format", DVX_MLX5_CQC_MINI_CQE_RES_FORMAT, 0, 13, 12),
	ROW("cqc.st", DVX_MLX5_CQC_ST, 0, 11, 8),
	ROW("cqc.cqe_comp_layout", DVX_MLX5_CQC_CQE_COMP_LAYOUT, 0, 1, 0),
	ROW("cqc.dbr_umem_id", DVX_MLX5_CQC_DBR_UMEM_ID, 4, 31, 0),
	ROW("cqc.page_offset", DVX_MLX5_CQC_PAGE_OFFSET, 8, 11, 6),
	ROW("cqc.cq_timestamp_format", DVX_MLX5_CQC_CQ_TIMESTAMP_FORMAT, 8, 1, 0),
	ROW("cqc.log_cq_size", DVX_MLX5_CQC_LOG_CQ_SIZE, 12, 28, 24),
	ROW("cqc.uar_page", DVX_MLX5_CQC_UAR_PAGE, 12, 23, 0),
	ROW("cqc.cq_period", DVX_MLX5_CQC_CQ_PERIOD, 16, 27, 16),
	ROW("cqc.cq_max_count", DVX_MLX5_CQC_CQ_MAX_COUNT, 16, 15, 0),
	ROW("cqc.c_eqn", DVX_MLX5_CQC_C_EQN, 20, 7, 0),
	ROW("cqc.log_page_size", DVX_MLX5_CQC_LOG_PAGE_SIZE, 24, 28, 24),
	ROW("cqc.last_notified_index", DVX_MLX5_CQC_LAST_NOTIFIED_INDEX, 32, 23, 0),
	ROW("cqc.last_solicit_index", DVX_MLX5_CQC_LAST_SOLICIT_INDEX, 36, 23, 0),
	ROW("cqc.consumer_counter", DVX_MLX5_CQC_CONSUMER_COUNTER, 40, 23, 0),
	ROW("cqc.producer_counter", DVX_MLX5_CQC_PRODUCER_COUNTER, 44, 23, 0),
};

/* create_cq_in rows (prm 1.6) */
static const struct macro_row cq_in_rows[] = {
	ROW("create_cq_in.cq_umem_id", DVX_MLX5_CREATE_CQ_IN_CQ_UMEM_ID, 88, 31, 0),
	ROW("create_cq_in.cq_umem_valid", DVX_MLX5_CREATE_CQ_IN_CQ_UMEM_VALID, 92, 31, 31),
};

/* prm 1.7 qpc table, qpc-relative */
static const struct macro_row qpc_rows[] = {
	ROW("qpc.state", DVX_MLX5_QPC_STATE, 0, 31, 28),
	ROW("qpc.st", DVX_MLX5_QPC_ST, 0, 23, 16),
	ROW("qpc.pm_state", DVX_MLX5_QPC_PM_STATE, 0, 12, 11),
	ROW("qpc.pd", DVX_MLX5_QPC_PD, 4, 23, 0),
	ROW("qpc.mtu", DVX_MLX5_QPC_MTU, 8, 31, 29),
	ROW("qpc.log_msg_max", DVX_MLX5_QPC_LOG_MSG_MAX, 8, 28, 24),
	ROW("qpc.log_rq_size", DVX_MLX5_QPC_LOG_RQ_SIZE, 8, 22, 19),
	ROW("qpc.log_rq_stride", DVX_MLX5_QPC_LOG_RQ_STRIDE, 8, 18, 16),
	ROW("qpc.no_sq", DVX_MLX5_QPC_NO_SQ, 8, 15, 15),
	ROW("qpc.log_sq_size", DVX_MLX5_QPC_LOG_SQ_SIZE, 8, 14, 11),
	ROW("qpc.ts_format", DVX_MLX5_QPC_TS_FORMAT, 8, 7, 6),
	ROW("qpc.counter_set_id", DVX_MLX5_QPC_COUNTER_SET_ID, 12, 31, 24),
	ROW("qpc.uar_page", DVX_MLX5_QPC_UAR_PAGE, 12, 23, 0),
	ROW("qpc.send_dbr_mode", DVX_MLX5_QPC_SEND_DBR_MODE, 16, 31, 30),
	ROW("qpc.user_index", DVX_MLX5_QPC_USER_INDEX, 16, 23, 0),
	ROW("qpc.log_page_size", DVX_MLX5_QPC_LOG_PAGE_SIZE, 20, 28, 24),
	ROW("qpc.remote_qpn", DVX_MLX5_QPC_REMOTE_QPN, 20, 23, 0),
	ROW("qpc.log_ack_req_freq", DVX_MLX5_QPC_LOG_ACK_REQ_FREQ, 112, 31, 28),
	ROW("qpc.log_sra_max", DVX_MLX5_QPC_LOG_SRA_MAX, 112, 23, 21),
	ROW("qpc.retry_count", DVX_MLX5_QPC_RETRY_COUNT, 112, 18, 16),
	ROW("qpc.rnr_retry", DVX_MLX5_QPC_RNR_RETRY, 112, 15, 13),
	ROW("qpc.next_send_psn", DVX_MLX5_QPC_NEXT_SEND_PSN, 120, 23, 0),
	ROW("qpc.cqn_snd", DVX_MLX5_QPC_CQN_SND, 124, 23, 0),
	ROW("qpc.log_rra_max", DVX_MLX5_QPC_LOG_RRA_MAX, 144, 23, 21),
	ROW("qpc.atomic_mode", DVX_MLX5_QPC_ATOMIC_MODE, 144, 19, 16),
	ROW("qpc.rre", DVX_MLX5_QPC_RRE, 144, 15, 15),
	ROW("qpc.rwe", DVX_MLX5_QPC_RWE, 144, 14, 14),
	ROW("qpc.rae", DVX_MLX5_QPC_RAE, 144, 13, 13),
	ROW("qpc.page_offset", DVX_MLX5_QPC_PAGE_OFFSET, 144, 11, 6),
	ROW("qpc.cd_slave_receive", DVX_MLX5_QPC_CD_SLAVE_RECEIVE, 144, 2, 2),
	ROW("qpc.cd_slave_send", DVX_MLX5_QPC_CD_SLAVE_SEND, 144, 1, 1),
	ROW("qpc.cd_master", DVX_MLX5_QPC_CD_MASTER, 144, 0, 0),
	ROW("qpc.min_rnr_nak", DVX_MLX5_QPC_MIN_RNR_NAK, 148, 28, 24),
	ROW("qpc.next_rcv_psn", DVX_MLX5_QPC_NEXT_RCV_PSN, 148, 23, 0),
	ROW("qpc.cqn_rcv", DVX_MLX5_QPC_CQN_RCV, 156, 23, 0),
	ROW("qpc.rq_type", DVX_MLX5_QPC_RQ_TYPE, 172, 26, 24),
	ROW("qpc.srqn_rmpn_xrqn", DVX_MLX5_QPC_SRQN_RMPN_XRQN, 172, 23, 0),
	ROW("qpc.hw_sq_wqebb_counter", DVX_MLX5_QPC_HW_SQ_WQEBB_COUNTER, 180, 31, 16),
	ROW("qpc.sw_sq_wqebb_counter", DVX_MLX5_QPC_SW_SQ_WQEBB_COUNTER, 180, 15, 0),
	ROW("qpc.cs_req", DVX_MLX5_QPC_CS_REQ, 196, 15, 8),
	ROW("qpc.cs_res", DVX_MLX5_QPC_CS_RES, 196, 7, 0),
	ROW("qpc.dbr_umem_valid", DVX_MLX5_QPC_DBR_UMEM_VALID, 208, 28, 28),
	ROW("qpc.dbr_umem_id", DVX_MLX5_QPC_DBR_UMEM_ID, 228, 31, 0),
};

/* prm 1.8 ads table, ads-relative */
static const struct macro_row ads_rows[] = {
	ROW("ads.fl", DVX_MLX5_ADS_FL, 0, 31, 31),
	ROW("ads.pkey_index", DVX_MLX5_ADS_PKEY_INDEX, 0, 15, 0),
	ROW("ads.grh", DVX_MLX5_ADS_GRH, 4, 23, 23),
	ROW("ads.mlid", DVX_MLX5_ADS_MLID, 4, 22, 16),
	ROW("ads.rlid", DVX_MLX5_ADS_RLID, 4, 15, 0),
	ROW("ads.ack_timeout", DVX_MLX5_ADS_ACK_TIMEOUT, 8, 31, 27),
	ROW("ads.src_addr_index", DVX_MLX5_ADS_SRC_ADDR_INDEX, 8, 23, 16),
	ROW("ads.stat_rate", DVX_MLX5_ADS_STAT_RATE, 8, 11, 8),
	ROW("ads.hop_limit", DVX_MLX5_ADS_HOP_LIMIT, 8, 7, 0),
	ROW("ads.tclass", DVX_MLX5_ADS_TCLASS, 12, 27, 20),
	ROW("ads.flow_label", DVX_MLX5_ADS_FLOW_LABEL, 12, 19, 0),
	ROW("ads.dscp", DVX_MLX5_ADS_DSCP, 32, 21, 16),
	ROW("ads.udp_sport", DVX_MLX5_ADS_UDP_SPORT, 32, 15, 0),
	ROW("ads.eth_prio", DVX_MLX5_ADS_ETH_PRIO, 36, 30, 28),
	ROW("ads.sl", DVX_MLX5_ADS_SL, 36, 27, 24),
	ROW("ads.vhca_port_num", DVX_MLX5_ADS_VHCA_PORT_NUM, 36, 23, 16),
	ROW("ads.rmac_47_32", DVX_MLX5_ADS_RMAC_47_32, 36, 15, 0),
	ROW("ads.rmac_31_0", DVX_MLX5_ADS_RMAC_31_0, 40, 31, 0),
};

/* create_qp_in rows (prm 1.7) */
static const struct macro_row qp_in_rows[] = {
	ROW("create_qp_in.qpc_ext", DVX_MLX5_CREATE_QP_IN_QPC_EXT, 8, 31, 31),
	ROW("create_qp_in.opt_param_mask", DVX_MLX5_CREATE_QP_IN_OPT_PARAM_MASK, 16, 31, 0),
	ROW("create_qp_in.wq_umem_id", DVX_MLX5_CREATE_QP_IN_WQ_UMEM_ID, 264, 31, 0),
	ROW("create_qp_in.wq_umem_valid", DVX_MLX5_CREATE_QP_IN_WQ_UMEM_VALID, 268, 31, 31),
};

/* object numbers, envelope and the 16-byte commands (prm 1.1, 1.6-1.8) */
static const struct macro_row hdr_rows[] = {
	ROW("opcode", DVX_MLX5_HDR_OPCODE, 0, 31, 16),
	ROW("op_mod", DVX_MLX5_HDR_OP_MOD, 4, 15, 0),
	ROW("out.status", DVX_MLX5_OUT_STATUS, 0, 31, 24),
	ROW("out.syndrome", DVX_MLX5_OUT_SYNDROME, 4, 31, 0),
	ROW("create_cq_out.cqn", DVX_MLX5_CREATE_CQ_OUT_CQN, 8, 23, 0),
	ROW("destroy_cq_in.cqn", DVX_MLX5_DESTROY_CQ_IN_CQN, 8, 23, 0),
	ROW("query_cq_in.cqn", DVX_MLX5_QUERY_CQ_IN_CQN, 8, 23, 0),
	ROW("create_qp_out.qpn", DVX_MLX5_CREATE_QP_OUT_QPN, 8, 23, 0),
	ROW("destroy_qp_in.qpn", DVX_MLX5_DESTROY_QP_IN_QPN, 8, 23, 0),
	ROW("modify.qpn", DVX_MLX5_MODIFY_QP_IN_QPN, 8, 23, 0),
	ROW("modify.opt_param_mask", DVX_MLX5_MODIFY_QP_IN_OPT_PARAM_MASK, 16, 31, 0),
	ROW("modify.ece", DVX_MLX5_MODIFY_QP_IN_ECE, 20, 31, 0),
	ROW("2err.qpn", DVX_MLX5_QP_2ERR_IN_QPN, 8, 23, 0),
	ROW("2rst.qpn", DVX_MLX5_QP_2RST_IN_QPN, 8, 23, 0),
	ROW("query_qp_in.qpn", DVX_MLX5_QUERY_QP_IN_QPN, 8, 23, 0),
	ROW("query_qp_out.opt_param_mask", DVX_MLX5_QUERY_QP_OUT_OPT_PARAM_MASK, 16, 31, 0),
};

/*
 * Each row against its transcription, in the structure it belongs to. @used (NULL: no
 * check) collects the bits of one mailbox: the rows sit at @base in it (a context's
 * placement), and no two fields of the mailbox may overlap.
 */
static void check_rows(const struct macro_row *rows, size_t n, uint8_t *used, unsigned base)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct macro_row *r = &rows[i];
		uint8_t buf[MB], want[MB], m[MB];
		unsigned j;

		CHECK(r->m[0] == r->f[0] && r->m[1] == r->f[1] && r->m[2] == r->f[2],
		      "%s: header says dw@%u [%u:%u], prm dw@%u [%u:%u]", r->name, r->m[0],
		      r->m[1], r->m[2], r->f[0], r->f[1], r->f[2]);
		CHECK(r->f[0] % 4 == 0 && r->f[0] + 4 <= MB && r->f[1] >= r->f[2] && r->f[1] < 32,
		      "%s: not a dword field", r->name);

		memset(m, 0, sizeof(m));
		raw_mask(m, r->f[0], r->f[1], r->f[2]);
		if (used) {
			for (j = 0; j + base < MB; j++)
				CHECK(!(used[base + j] & m[j]),
				      "%s overlaps an earlier field at mailbox byte %u", r->name,
				      base + j);
			for (j = 0; j + base < MB; j++)
				used[base + j] |= m[j];
		}

		/* set-only-this-field over ones: exactly its bits clear */
		memset(buf, 0xff, sizeof(buf));
		dvx_mlx5_set(buf, r->m[0], r->m[1], r->m[2], 0);
		for (j = 0; j < MB; j++)
			want[j] = (uint8_t)(0xff & ~m[j]);
		assert_bytes_equal(buf, want, MB);
		/* ... and over zeros: exactly its bits set, read back independently */
		memset(buf, 0, sizeof(buf));
		dvx_mlx5_set(buf, r->m[0], r->m[1], r->m[2], 0xffffffffu);
		assert_bytes_equal(buf, m, MB);
		CHECK(raw_get(buf, r->f[0], r->f[1], r->f[2]) ==
			      dvx_mlx5_get(buf, r->m[0], r->m[1], r->m[2]),
		      "%s: get disagrees", r->name);
	}
}

static void test_macros_are_facts(void **state)
{
	uint8_t used[MB];

	(void)state;
	/* create_cq_in: its own fields and the cqc at its placement, all disjoint */
	memset(used, 0, sizeof(used));
	check_rows(cq_in_rows, DVX_ARRAY_SIZE(cq_in_rows), used, 0);
	check_rows(cqc_rows, DVX_ARRAY_SIZE(cqc_rows), used, DVX_MLX5_CREATE_CQ_IN_CQC);
	/* create_qp_in: its fields, the qpc, and the address path inside the qpc */
	memset(used, 0, sizeof(used));
	check_rows(qp_in_rows, DVX_ARRAY_SIZE(qp_in_rows), used, 0);
	check_rows(qpc_rows, DVX_ARRAY_SIZE(qpc_rows), used, DVX_MLX5_CREATE_QP_IN_QPC);
	check_rows(ads_rows, DVX_ARRAY_SIZE(ads_rows), used,
		   DVX_MLX5_CREATE_QP_IN_QPC + DVX_MLX5_QPC_PRIMARY_ADDRESS_PATH);
	check_rows(hdr_rows, DVX_ARRAY_SIZE(hdr_rows), NULL, 0);

	/* whole 64-bit fields and byte strings (prm 1.6-1.8) */
	assert_int_equal(DVX_MLX5_CREATE_CQ_IN_CQC, 16);
	assert_int_equal(DVX_MLX5_QUERY_CQ_OUT_CQC, 16);
	assert_int_equal(DVX_MLX5_CQC_DBR_ADDR, 56);
	assert_int_equal(DVX_MLX5_CREATE_CQ_IN_CQ_UMEM_OFFSET, 80);
	assert_int_equal(DVX_MLX5_CREATE_QP_IN_QPC, 24);
	assert_int_equal(DVX_MLX5_MODIFY_QP_IN_QPC, 24);
	assert_int_equal(DVX_MLX5_QUERY_QP_OUT_QPC, 24);
	assert_int_equal(DVX_MLX5_QPC_PRIMARY_ADDRESS_PATH, 24);
	assert_int_equal(DVX_MLX5_QPC_DBR_ADDR, 160);
	assert_int_equal(DVX_MLX5_ADS_RGID_RIP, 16);
	assert_int_equal(DVX_MLX5_ADS_RMAC, 38);
	assert_int_equal(DVX_MLX5_CREATE_QP_IN_WQ_UMEM_OFFSET, 256);
	/* the 64-bit fields are naturally aligned and disjoint from every bit field */
	assert_int_equal(DVX_MLX5_CQC_DBR_ADDR % 8, 0);
	assert_int_equal(DVX_MLX5_CREATE_CQ_IN_CQ_UMEM_OFFSET % 8, 0);
	assert_int_equal(DVX_MLX5_QPC_DBR_ADDR % 8, 0);
	assert_int_equal(DVX_MLX5_CREATE_QP_IN_WQ_UMEM_OFFSET % 8, 0);

	/* sizes (prm 1.6-1.8; query outputs per KL mlx5_ifc.h) */
	assert_int_equal(DVX_MLX5_CREATE_CQ_IN_BYTES, 272);
	assert_int_equal(DVX_MLX5_CREATE_QP_IN_BYTES, 272);
	assert_int_equal(DVX_MLX5_MODIFY_QP_IN_BYTES, 272);
	assert_int_equal(DVX_MLX5_QUERY_QP_OUT_BYTES, 24 + 232 + 16);
	assert_int_equal(DVX_MLX5_QUERY_CQ_OUT_BYTES, 16 + 64 + 192);
	assert_int_equal(DVX_MLX5_QP_2ERR_IN_BYTES, 16);
	assert_int_equal(DVX_MLX5_CMD_MAX_BYTES, 272);

	/* opt_param_mask bits (prm 1.8) */
	assert_int_equal(DVX_MLX5_QP_OPTPAR_RRE, 1 << 1);
	assert_int_equal(DVX_MLX5_QP_OPTPAR_RAE, 1 << 2);
	assert_int_equal(DVX_MLX5_QP_OPTPAR_RWE, 1 << 3);
	assert_int_equal(DVX_MLX5_QP_OPTPAR_PKEY_INDEX, 1 << 4);
	assert_int_equal(DVX_MLX5_QP_OPTPAR_RNR_TIMEOUT, 1 << 6);
	assert_int_equal(DVX_MLX5_QP_OPTPAR_PRIMARY_ADDR_PATH, 1 << 7);
	assert_int_equal(DVX_MLX5_QP_OPTPAR_SRA_MAX, 1 << 8);
	assert_int_equal(DVX_MLX5_QP_OPTPAR_RRA_MAX, 1 << 9);
	assert_int_equal(DVX_MLX5_QP_OPTPAR_PM_STATE, 1 << 10);
	assert_int_equal(DVX_MLX5_QP_OPTPAR_RETRY_COUNT, 1 << 12);
	assert_int_equal(DVX_MLX5_QP_OPTPAR_RNR_RETRY, 1 << 13);
	assert_int_equal(DVX_MLX5_QP_OPTPAR_ACK_TIMEOUT, 1 << 14);
	assert_int_equal(DVX_MLX5_QP_OPTPAR_LAG_TX_AFF, 1 << 15);
	assert_int_equal(DVX_MLX5_QP_OPTPAR_PRI_PORT, 1 << 16);
	assert_int_equal(DVX_MLX5_QP_OPTPAR_DSCP, 1 << 17);
	assert_int_equal(DVX_MLX5_QP_OPTPAR_SGID_INDEX, 1 << 23);
}

/* ------------------------------------------------------------------------- */
/* (2) every attribute field lands on exactly its bits, and nowhere else      */

typedef int (*enc_fn)(void *in, const void *attr);

struct encoder {
	const char *name;
	enc_fn fn;
	size_t attr_size;
	size_t bytes;
};

#define TEST_QPN 0x00abcdefu

static int enc_create_cq(void *in, const void *a)
{
	return dvx_mlx5_create_cq_in(in, a);
}

static int enc_create_qp(void *in, const void *a)
{
	return dvx_mlx5_create_qp_in(in, a);
}

static int enc_rst2init(void *in, const void *a)
{
	return dvx_mlx5_rst2init_qp_in(in, TEST_QPN, a);
}

static int enc_init2rtr(void *in, const void *a)
{
	return dvx_mlx5_init2rtr_qp_in(in, TEST_QPN, a);
}

static int enc_rtr2rts(void *in, const void *a)
{
	return dvx_mlx5_rtr2rts_qp_in(in, TEST_QPN, a);
}

static const struct encoder E_CQ = { "create_cq_in", enc_create_cq,
				     sizeof(struct dvx_mlx5_cq_cfg), 272 };
static const struct encoder E_QP = { "create_qp_in", enc_create_qp,
				     sizeof(struct dvx_mlx5_qp_cfg), 272 };
static const struct encoder E_R2I = { "rst2init_qp_in", enc_rst2init,
				      sizeof(struct dvx_mlx5_rst2init_cfg), 272 };
static const struct encoder E_I2R = { "init2rtr_qp_in", enc_init2rtr,
				      sizeof(struct dvx_mlx5_init2rtr_cfg), 272 };
static const struct encoder E_R2R = { "rtr2rts_qp_in", enc_rtr2rts,
				      sizeof(struct dvx_mlx5_rtr2rts_cfg), 272 };

enum { K_BITS, K_A64, K_A8 };	/* a bit field; a 64-bit field 64-/8-byte aligned values */

struct frow {
	const char *name;
	size_t off, size;	/* the attribute member */
	unsigned byte, hi, lo;	/* where it lands, from docs/prm.md's tables */
	unsigned kind;
};

#define F(T, m, b, h, l) { #m, offsetof(T, m), sizeof(((T *)0)->m), b, h, l, K_BITS }
#define F64(T, m, b, kind) { #m, offsetof(T, m), sizeof(((T *)0)->m), b, 63, 0, kind }

static void set_member(void *obj, size_t off, size_t size, uint64_t v)
{
	uint8_t *p = (uint8_t *)obj + off;
	uint8_t u8 = (uint8_t)v;
	uint16_t u16 = (uint16_t)v;
	uint32_t u32 = (uint32_t)v;

	switch (size) {
	case 1:
		memcpy(p, &u8, 1);
		break;
	case 2:
		memcpy(p, &u16, 2);
		break;
	case 4:
		memcpy(p, &u32, 4);
		break;
	case 8:
		memcpy(p, &v, 8);
		break;
	default:
		fail_msg("member size %zu", size);
	}
}

static void row_mask(uint8_t *m, const struct frow *r)
{
	memset(m, 0, MB);
	if (r->kind == K_BITS)
		raw_mask(m, r->byte, r->hi, r->lo);
	else
		memset(m + r->byte, 0xff, 8);
}

static uint64_t row_get(const uint8_t *mb, const struct frow *r)
{
	return r->kind == K_BITS ? raw_get(mb, r->byte, r->hi, r->lo) : raw_be64(mb + r->byte);
}

static void row_values(const struct frow *r, uint64_t v[4])
{
	uint64_t max;

	switch (r->kind) {
	case K_A64:
		v[0] = 0x0123456789abcdc0ull;
		v[1] = 0x5a5a5a5a5a5a5a40ull;
		v[2] = 64;
		v[3] = 0;
		return;
	case K_A8:
		v[0] = 0xfffffffffffffff8ull;
		v[1] = 0x5a5a5a5a5a5a5a58ull;
		v[2] = 8;
		v[3] = 0;
		return;
	default:
		max = (r->hi - r->lo == 31) ? 0xffffffffull : ((1ull << (r->hi - r->lo + 1)) - 1);
		v[0] = max;
		v[1] = 0x5a5a5a5aa5a5a5a5ull & max;
		v[2] = 1;
		v[3] = 0;
	}
}

/*
 * For each row and each of its values: encode @base with that one member changed.
 * The field must read back the value (raw arithmetic at the prm position), and
 * every other bit of the mailbox must equal the encoding of @base itself.
 */
static void check_fields(const struct encoder *e, const void *base, const struct frow *rows,
			 size_t n)
{
	uint8_t attr[512], ref[MB], got[MB], m[MB];
	size_t i, k, j;

	assert_true(e->attr_size <= sizeof(attr));
	memset(ref, 0xa5, sizeof(ref));
	CHECK(e->fn(ref, base) == 0, "%s: base attr refused", e->name);
	for (i = 0; i < n; i++) {
		const struct frow *r = &rows[i];
		uint64_t v[4];

		row_values(r, v);
		row_mask(m, r);
		for (k = 0; k < 4; k++) {
			memcpy(attr, base, e->attr_size);
			set_member(attr, r->off, r->size, v[k]);
			memset(got, 0x3c, sizeof(got));
			CHECK(e->fn(got, attr) == 0, "%s.%s = %#llx refused", e->name, r->name,
			      (unsigned long long)v[k]);
			CHECK(row_get(got, r) == v[k], "%s.%s = %#llx reads back %#llx", e->name,
			      r->name, (unsigned long long)v[k], (unsigned long long)row_get(got, r));
			for (j = 0; j < e->bytes; j++)
				CHECK(((got[j] ^ ref[j]) & ~m[j]) == 0,
				      "%s.%s = %#llx changed byte %zu (%02x, base %02x) outside the field",
				      e->name, r->name, (unsigned long long)v[k], j, got[j], ref[j]);
		}
	}
}

/* ---- create_cq (prm 1.6) ---- */

#define CQF(m, b, h, l) F(struct dvx_mlx5_cq_cfg, m, b, h, l)
static const struct frow cq_fields[] = {
	CQF(log_cq_size, 28, 28, 24),
	CQF(uar_page, 28, 23, 0),
	CQF(eqn, 36, 7, 0),
	CQF(cq_umem_id, 88, 31, 0),
	CQF(dbr_umem_id, 20, 31, 0),
	CQF(oi, 16, 17, 17),
	CQF(cc, 16, 20, 20),
	CQF(log_page_size, 40, 28, 24),
	CQF(ts_format, 24, 1, 0),
	F64(struct dvx_mlx5_cq_cfg, cq_umem_offset, 80, K_A64),
	F64(struct dvx_mlx5_cq_cfg, dbr_offset, 72, K_A8),
};

static const struct dvx_mlx5_cq_cfg cq_zero = { .cqe_size = 64 };
static const struct dvx_mlx5_cq_cfg cq_busy = {
	.log_cq_size = 13, .uar_page = 0xc3c3c3, .eqn = 0x99, .cq_umem_id = 0x87654321,
	.cq_umem_offset = 0x1000, .dbr_umem_id = 0xfedcba98, .cqe_size = 128,
	.dbr_offset = 0x7f8, .oi = 1, .cc = 1, .log_page_size = 31, .ts_format = 3,
};

static void test_cq_fields(void **state)
{
	(void)state;
	check_fields(&E_CQ, &cq_zero, cq_fields, DVX_ARRAY_SIZE(cq_fields));
	check_fields(&E_CQ, &cq_busy, cq_fields, DVX_ARRAY_SIZE(cq_fields));
}

/* cqe_size is an encoding, not a raw field: 64 (or 0) -> 0, 128 -> 1 */
static void test_cq_cqe_size(void **state)
{
	struct dvx_mlx5_cq_cfg a = cq_busy;
	uint8_t in[MB];

	(void)state;
	a.cqe_size = 128;
	assert_int_equal(dvx_mlx5_create_cq_in(in, &a), 0);
	assert_int_equal(raw_get(in, 16, 23, 21), 1);
	a.cqe_size = 64;
	assert_int_equal(dvx_mlx5_create_cq_in(in, &a), 0);
	assert_int_equal(raw_get(in, 16, 23, 21), 0);
	a.cqe_size = 0;
	assert_int_equal(dvx_mlx5_create_cq_in(in, &a), 0);
	assert_int_equal(raw_get(in, 16, 23, 21), 0);
}

/* ---- create_qp (prm 1.7) ---- */

#define QPF(m, b, h, l) F(struct dvx_mlx5_qp_cfg, m, b, h, l)
static const struct frow qp_fields[] = {
	QPF(pdn, 28, 23, 0),
	QPF(uar_page, 36, 23, 0),
	QPF(user_index, 40, 23, 0),
	QPF(cqn_snd, 148, 23, 0),
	QPF(cqn_rcv, 180, 23, 0),
	QPF(wq_umem_id, 264, 31, 0),
	QPF(dbr_umem_id, 252, 31, 0),
	QPF(log_sq_size, 32, 14, 11),
	QPF(log_msg_max, 32, 28, 24),
	QPF(ts_format, 32, 7, 6),
	QPF(send_dbr_mode, 40, 31, 30),
	QPF(cd_master, 168, 0, 0),
	QPF(cd_slave_send, 168, 1, 1),
	QPF(cd_slave_receive, 168, 2, 2),
	F64(struct dvx_mlx5_qp_cfg, wq_umem_offset, 256, K_A64),
	F64(struct dvx_mlx5_qp_cfg, dbr_offset, 184, K_A8),
};

static const struct frow qp_rq_fields[] = {
	QPF(log_rq_size, 32, 22, 19),
	QPF(log_rq_stride, 32, 18, 16),
};

static const struct frow qp_srq_fields[] = {
	QPF(srqn, 196, 23, 0),
};

static const struct dvx_mlx5_qp_cfg qp_zero = { .rq_type = DVX_MLX5_RQ_TYPE_ZERO };
static const struct dvx_mlx5_qp_cfg qp_busy = {
	.pdn = 0x3c3c3c, .uar_page = 0xc3c3c3, .user_index = 0x969696, .cqn_snd = 0x696969,
	.cqn_rcv = 0xa5a5a5, .wq_umem_id = 0xdeadbeef, .dbr_umem_id = 0xfeedface,
	.wq_umem_offset = 0x40000, .dbr_offset = 0x7ff8, .log_sq_size = 15,
	.rq_type = DVX_MLX5_RQ_TYPE_ZERO, .log_msg_max = 31, .ts_format = 3, .send_dbr_mode = 3,
	.cd_master = 1, .cd_slave_send = 1, .cd_slave_receive = 1,
};

static void test_qp_fields(void **state)
{
	struct dvx_mlx5_qp_cfg rq0 = qp_zero, rqb = qp_busy, srq0 = qp_zero, srqb = qp_busy;

	(void)state;
	check_fields(&E_QP, &qp_zero, qp_fields, DVX_ARRAY_SIZE(qp_fields));
	check_fields(&E_QP, &qp_busy, qp_fields, DVX_ARRAY_SIZE(qp_fields));

	/* a regular RQ of 4 x 64 B: every tested size/stride value keeps it >= 64 B */
	rq0.rq_type = rqb.rq_type = DVX_MLX5_RQ_TYPE_REGULAR;
	rq0.log_rq_size = rqb.log_rq_size = 2;
	rq0.log_rq_stride = rqb.log_rq_stride = 2;
	check_fields(&E_QP, &rq0, qp_rq_fields, DVX_ARRAY_SIZE(qp_rq_fields));
	check_fields(&E_QP, &rqb, qp_rq_fields, DVX_ARRAY_SIZE(qp_rq_fields));

	srq0.rq_type = srqb.rq_type = DVX_MLX5_RQ_TYPE_SRQ;
	srqb.srqn = 0x123456;
	check_fields(&E_QP, &srq0, qp_srq_fields, DVX_ARRAY_SIZE(qp_srq_fields));
	check_fields(&E_QP, &srqb, qp_srq_fields, DVX_ARRAY_SIZE(qp_srq_fields));
}

/* the constant part of create_qp_in: st RC, pm_state MIGRATED, valid bits; rq_type */
static void test_qp_constants(void **state)
{
	struct dvx_mlx5_qp_cfg a = qp_zero;
	uint8_t in[MB], want[MB];

	(void)state;
	assert_int_equal(dvx_mlx5_create_qp_in(in, &a), 0);
	memset(want, 0, sizeof(want));
	want_hex(want, 0, "05 00 00 00");	/* opcode 0x500 */
	want_hex(want, 24, "00 00 18 00");	/* st 0 (RC), pm_state 3 at [12:11] */
	want_hex(want, 196, "03 00 00 00");	/* rq_type 3 (zero-length RQ) */
	want_hex(want, 232, "10 00 00 00");	/* qpc.dbr_umem_valid [28] */
	want_hex(want, 268, "80 00 00 00");	/* wq_umem_valid [31] */
	assert_bytes_equal(in, want, MB);

	a.rq_type = DVX_MLX5_RQ_TYPE_SRQ;
	assert_int_equal(dvx_mlx5_create_qp_in(in, &a), 0);
	assert_int_equal(raw_get(in, 196, 26, 24), 1);
	a.rq_type = DVX_MLX5_RQ_TYPE_REGULAR;
	a.log_rq_stride = 2;
	assert_int_equal(dvx_mlx5_create_qp_in(in, &a), 0);
	assert_int_equal(raw_get(in, 196, 26, 24), 0);

	/* the CQ's constants: cqc.dbr_umem_valid [25] and cq_umem_valid [31] */
	assert_int_equal(dvx_mlx5_create_cq_in(in, &cq_zero), 0);
	memset(want, 0, sizeof(want));
	want_hex(want, 0, "04 00 00 00");
	want_hex(want, 16, "02 00 00 00");
	want_hex(want, 92, "80 00 00 00");
	assert_bytes_equal(in, want, MB);
}

/* ---- the transitions (prm 1.8) ---- */

#define R2IF(m, b, h, l) F(struct dvx_mlx5_rst2init_cfg, m, b, h, l)
static const struct frow r2i_fields[] = {
	R2IF(rre, 168, 15, 15),
	R2IF(rwe, 168, 14, 14),
	R2IF(rae, 168, 13, 13),
	R2IF(atomic_mode, 168, 19, 16),
	R2IF(vhca_port_num, 84, 23, 16),
	R2IF(pkey_index, 48, 15, 0),
};

#define I2RF(m, b, h, l) F(struct dvx_mlx5_init2rtr_cfg, m, b, h, l)
static const struct frow i2r_fields[] = {
	I2RF(remote_qpn, 44, 23, 0),
	I2RF(next_rcv_psn, 172, 23, 0),
	I2RF(log_msg_max, 32, 28, 24),
	I2RF(min_rnr_nak, 172, 28, 24),
	I2RF(log_rra_max, 168, 23, 21),
	I2RF(rre, 168, 15, 15),		/* with resend_access */
	I2RF(rwe, 168, 14, 14),
	I2RF(rae, 168, 13, 13),
	I2RF(atomic_mode, 168, 19, 16),
};

/* path fields valid for every link layer */
static const struct frow path_common_fields[] = {
	I2RF(path.vhca_port_num, 84, 23, 16),
	I2RF(path.pkey_index, 48, 15, 0),
	I2RF(path.ack_timeout, 56, 31, 27),
	I2RF(path.stat_rate, 56, 11, 8),
	I2RF(path.fl, 48, 31, 31),
};

/* IB, LID routed */
static const struct frow path_ib_fields[] = {
	I2RF(path.rlid, 52, 15, 0),
	I2RF(path.sl, 84, 27, 24),
	I2RF(path.mlid, 52, 22, 16),
	I2RF(path.grh, 52, 23, 23),
};

/* the GRH fields: RoCE always, IB with grh = 1 */
static const struct frow path_grh_fields[] = {
	I2RF(path.src_addr_index, 56, 23, 16),
	I2RF(path.hop_limit, 56, 7, 0),
	I2RF(path.tclass, 60, 27, 20),
	I2RF(path.flow_label, 60, 19, 0),
	I2RF(path.rgid[0], 64, 31, 24),		/* first and last GID bytes */
	I2RF(path.rgid[15], 76, 7, 0),
};

/* RoCE only */
static const struct frow path_roce_fields[] = {
	I2RF(path.dscp, 80, 21, 16),
	I2RF(path.udp_sport, 80, 15, 0),
	I2RF(path.eth_prio, 84, 30, 28),
	I2RF(path.rmac[0], 84, 15, 8),		/* rmac_47_32 high byte */
	I2RF(path.rmac[1], 84, 7, 0),
	I2RF(path.rmac[2], 88, 31, 24),		/* rmac_31_0 */
	I2RF(path.rmac[5], 88, 7, 0),
};

static const struct dvx_mlx5_init2rtr_cfg i2r_zero = {
	.mtu = DVX_MLX5_MTU_256, .resend_access = 1,
};
static const struct dvx_mlx5_init2rtr_cfg i2r_busy = {
	.remote_qpn = 0x5a5a5a, .next_rcv_psn = 0xa5a5a5, .mtu = DVX_MLX5_MTU_4096,
	.log_msg_max = 31, .min_rnr_nak = 31, .log_rra_max = 7, .resend_access = 1,
	.rre = 1, .rwe = 1, .rae = 1, .atomic_mode = 15,
	.path = { .vhca_port_num = 0xff, .pkey_index = 0xffff, .rlid = 0xffff, .sl = 15,
		  .grh = 1, .mlid = 0x7f, .src_addr_index = 0xff, .hop_limit = 0xff,
		  .tclass = 0xff, .flow_label = 0xfffff,
		  .rgid = { 0xff, 0xfe, 0xfd, 0xfc, 0xfb, 0xfa, 0xf9, 0xf8,
			    0xf7, 0xf6, 0xf5, 0xf4, 0xf3, 0xf2, 0xf1, 0xf0 },
		  .ack_timeout = 31, .stat_rate = 15, .fl = 1 },
};

static void test_rst2init_fields(void **state)
{
	const struct dvx_mlx5_rst2init_cfg zero = { 0 };
	const struct dvx_mlx5_rst2init_cfg busy = {
		.rre = 1, .rwe = 1, .rae = 1, .atomic_mode = 15, .vhca_port_num = 0xff,
		.pkey_index = 0xffff,
	};

	(void)state;
	check_fields(&E_R2I, &zero, r2i_fields, DVX_ARRAY_SIZE(r2i_fields));
	check_fields(&E_R2I, &busy, r2i_fields, DVX_ARRAY_SIZE(r2i_fields));
}

static void test_init2rtr_fields(void **state)
{
	struct dvx_mlx5_init2rtr_cfg ib_nogrh = i2r_zero, ib_grh = i2r_zero, roce0 = i2r_zero;
	struct dvx_mlx5_init2rtr_cfg roceb = i2r_busy;
	uint8_t in[MB];
	unsigned mtu;

	(void)state;
	check_fields(&E_I2R, &i2r_zero, i2r_fields, DVX_ARRAY_SIZE(i2r_fields));
	check_fields(&E_I2R, &i2r_busy, i2r_fields, DVX_ARRAY_SIZE(i2r_fields));

	/* IB without GRH, IB with GRH, RoCE: zero and busy backgrounds */
	ib_grh.path.grh = 1;
	roce0.path.roce = 1;
	roceb.path.roce = 1;
	roceb.path.rlid = 0;
	roceb.path.sl = 0;
	roceb.path.grh = 0;
	roceb.path.mlid = 0;
	roceb.path.dscp = 63;
	roceb.path.eth_prio = 7;
	roceb.path.udp_sport = 0xffff;
	memset(roceb.path.rmac, 0xee, sizeof(roceb.path.rmac));

	check_fields(&E_I2R, &ib_nogrh, path_common_fields, DVX_ARRAY_SIZE(path_common_fields));
	check_fields(&E_I2R, &ib_nogrh, path_ib_fields, DVX_ARRAY_SIZE(path_ib_fields));
	check_fields(&E_I2R, &ib_grh, path_grh_fields, DVX_ARRAY_SIZE(path_grh_fields));
	check_fields(&E_I2R, &i2r_busy, path_common_fields, DVX_ARRAY_SIZE(path_common_fields));
	check_fields(&E_I2R, &i2r_busy, path_ib_fields, DVX_ARRAY_SIZE(path_ib_fields) - 1);
	check_fields(&E_I2R, &i2r_busy, path_grh_fields, DVX_ARRAY_SIZE(path_grh_fields));
	check_fields(&E_I2R, &roce0, path_common_fields, DVX_ARRAY_SIZE(path_common_fields));
	check_fields(&E_I2R, &roce0, path_grh_fields, DVX_ARRAY_SIZE(path_grh_fields));
	check_fields(&E_I2R, &roce0, path_roce_fields, DVX_ARRAY_SIZE(path_roce_fields));
	check_fields(&E_I2R, &roceb, path_common_fields, DVX_ARRAY_SIZE(path_common_fields));
	check_fields(&E_I2R, &roceb, path_grh_fields, DVX_ARRAY_SIZE(path_grh_fields));
	check_fields(&E_I2R, &roceb, path_roce_fields, DVX_ARRAY_SIZE(path_roce_fields));

	/* mtu is an enumeration: 1..5, each at dw@32 [31:29] */
	for (mtu = 1; mtu <= 5; mtu++) {
		struct dvx_mlx5_init2rtr_cfg a = i2r_busy;

		a.mtu = (uint8_t)mtu;
		assert_int_equal(dvx_mlx5_init2rtr_qp_in(in, TEST_QPN, &a), 0);
		assert_int_equal(raw_get(in, 32, 31, 29), mtu);
		assert_int_equal(raw_get(in, 32, 28, 24), 31);
	}
}

#define R2RF(m, b, h, l) F(struct dvx_mlx5_rtr2rts_cfg, m, b, h, l)
static const struct frow r2r_fields[] = {
	R2RF(next_send_psn, 144, 23, 0),
	R2RF(retry_count, 136, 18, 16),
	R2RF(rnr_retry, 136, 15, 13),
	R2RF(ack_timeout, 56, 31, 27),
	R2RF(log_sra_max, 136, 23, 21),
	R2RF(log_ack_req_freq, 136, 31, 28),
};

static void test_rtr2rts_fields(void **state)
{
	const struct dvx_mlx5_rtr2rts_cfg zero = { 0 };
	const struct dvx_mlx5_rtr2rts_cfg busy = {
		.next_send_psn = 0xffffff, .retry_count = 7, .rnr_retry = 7, .ack_timeout = 31,
		.log_sra_max = 7, .log_ack_req_freq = 15,
	};

	(void)state;
	check_fields(&E_R2R, &zero, r2r_fields, DVX_ARRAY_SIZE(r2r_fields));
	check_fields(&E_R2R, &busy, r2r_fields, DVX_ARRAY_SIZE(r2r_fields));
}

/* the object-number commands: whole 16-byte mailboxes */
typedef int (*objnum_fn)(void *in, uint32_t num);

static void test_objnum_commands(void **state)
{
	static const struct {
		const char *name;
		objnum_fn fn;
		const char *opcode;
		size_t bytes;
	} cmds[] = {
		{ "destroy_cq", dvx_mlx5_destroy_cq_in, "04 01", DVX_MLX5_DESTROY_CQ_IN_BYTES },
		{ "query_cq", dvx_mlx5_query_cq_in, "04 02", DVX_MLX5_QUERY_CQ_IN_BYTES },
		{ "destroy_qp", dvx_mlx5_destroy_qp_in, "05 01", DVX_MLX5_DESTROY_QP_IN_BYTES },
		{ "2err", dvx_mlx5_qp_2err_in, "05 07", DVX_MLX5_QP_2ERR_IN_BYTES },
		{ "2rst", dvx_mlx5_qp_2rst_in, "05 0a", DVX_MLX5_QP_2RST_IN_BYTES },
		{ "query_qp", dvx_mlx5_query_qp_in, "05 0b", DVX_MLX5_QUERY_QP_IN_BYTES },
	};
	uint8_t in[MB], want[MB], before[MB];
	size_t i;

	(void)state;
	for (i = 0; i < DVX_ARRAY_SIZE(cmds); i++) {
		assert_int_equal(cmds[i].bytes, 16);
		memset(in, 0xee, sizeof(in));
		assert_int_equal(cmds[i].fn(in, 0xfedcba), 0);
		memset(want, 0xee, sizeof(want));	/* beyond 16 bytes: not ours */
		memset(want, 0, 16);
		want_hex(want, 0, cmds[i].opcode);
		want_hex(want, 8, "00 fe dc ba");
		assert_bytes_equal(in, want, MB);

		assert_int_equal(cmds[i].fn(in, 0xffffff), 0);
		assert_int_equal(raw_get(in, 8, 31, 0), 0xffffff);

		memset(in, 0x5a, sizeof(in));
		memcpy(before, in, sizeof(in));
		CHECK(cmds[i].fn(in, 0x1000000) == -EINVAL, "%s: 25-bit number accepted",
		      cmds[i].name);
		assert_bytes_equal(in, before, MB);
		assert_int_equal(cmds[i].fn(NULL, 1), -EINVAL);
	}
}

/* ------------------------------------------------------------------------- */
/* (3) the DOCA DEVX_SET64 bug (prm 0): cd_master is bit 0 of dw@168 only   */

static void test_cd_master_neighbours(void **state)
{
	struct dvx_mlx5_qp_cfg a = qp_busy;
	struct dvx_mlx5_init2rtr_cfg r = i2r_busy;
	uint8_t buf[MB], want[MB], set64[MB];
	size_t j;

	(void)state;
	/* set-only-this-field over ones and over zeros: bytes 168-175 */
	memset(buf, 0xff, sizeof(buf));
	dvx_mlx5_set(DVX_MLX5_QPC_IN(buf), DVX_MLX5_QPC_CD_MASTER, 0);
	memset(want, 0xff, sizeof(want));
	want_hex(want, 168, "ff ff ff fe ff ff ff ff");
	assert_bytes_equal(buf, want, MB);
	memset(buf, 0, sizeof(buf));
	dvx_mlx5_set(DVX_MLX5_QPC_IN(buf), DVX_MLX5_QPC_CD_MASTER, 1);
	memset(want, 0, sizeof(want));
	want_hex(want, 168, "00 00 00 01 00 00 00 00");
	assert_bytes_equal(buf, want, MB);
	assert_int_equal(raw_get(buf, 172, 23, 0), 0);	/* next_rcv_psn untouched */

	/* the encoder: cd_master alone flips exactly bit 0 of byte 171 */
	a.cd_master = 0;
	assert_int_equal(dvx_mlx5_create_qp_in(want, &a), 0);
	a.cd_master = 1;
	assert_int_equal(dvx_mlx5_create_qp_in(buf, &a), 0);
	for (j = 0; j < MB; j++)
		CHECK((buf[j] ^ want[j]) == (j == 171 ? 0x01 : 0x00), "byte %zu: %02x vs %02x", j,
		      buf[j], want[j]);
	/* the other cd bits and the 168-175 word: slave bits set, next_rcv_psn 0 */
	assert_int_equal(raw_get(buf, 168, 2, 0), 7);
	assert_int_equal(raw_get(buf, 172, 31, 0), 0);
	assert_int_equal(raw_get(buf, 168, 31, 3), 0);

	/* a connected QP's INIT2RTR mailbox with next_rcv_psn and min_rnr_nak all ones:
	 * setting cd_master there (a caller's set-only-this-field) leaves 172-175 intact */
	r.next_rcv_psn = 0xffffff;
	assert_int_equal(dvx_mlx5_init2rtr_qp_in(buf, TEST_QPN, &r), 0);
	memcpy(want, buf, sizeof(want));
	dvx_mlx5_set(DVX_MLX5_QPC_IN(buf), DVX_MLX5_QPC_CD_MASTER, 1);
	want[171] |= 0x01;
	assert_bytes_equal(buf, want, MB);
	assert_int_equal(raw_get(buf, 172, 23, 0), 0xffffff);
	assert_int_equal(raw_get(buf, 172, 28, 24), 31);

	/* what DEVX_SET64(qpc, cd_master, 1) did: a BE64 store of 1 into the 8-byte word
	 * holding the field, i.e. qpc bytes 144-151 = command bytes 168-175. That clears
	 * dw@168 and puts the 1 in next_rcv_psn bit 0 -- the encoding above is not that. */
	memset(set64, 0, sizeof(set64));
	want_hex(set64, 168, "00 00 00 00 00 00 00 01");
	assert_int_equal(raw_get(set64, 168, 0, 0), 0);		/* cd_master not set */
	assert_int_equal(raw_get(set64, 172, 23, 0), 1);	/* next_rcv_psn hit */
	a = qp_zero;
	a.cd_master = 1;
	assert_int_equal(dvx_mlx5_create_qp_in(buf, &a), 0);
	assert_int_equal(raw_get(buf, 168, 0, 0), 1);
	assert_int_equal(raw_get(buf, 172, 23, 0), 0);
	assert_true(memcmp(buf + 168, set64 + 168, 8) != 0);
}

/* ------------------------------------------------------------------------- */
/* (4) realistic mailboxes, literal bytes                                     */

/* CX7-like CQ for a main QP: 1024 x 64 B CQEs, overrun ignore, DBR at 0x40 */
static void test_cq_realistic(void **state)
{
	const struct dvx_mlx5_cq_cfg a = {
		.log_cq_size = 10, .uar_page = 0x1a2b, .eqn = 0x17, .cq_umem_id = 0x11,
		.cq_umem_offset = 0, .dbr_umem_id = 0x12, .dbr_offset = 0x40, .cqe_size = 64,
		.oi = 1,
	};
	const struct dvx_mlx5_cq_cfg c = {
		/* NVSHMEM-style collapsed CQ, ring at 0x1000 of a shared umem, 128 B CQE */
		.log_cq_size = 0, .uar_page = 0x1a2b, .eqn = 0x17, .cq_umem_id = 0x31,
		.cq_umem_offset = 0x1000, .dbr_umem_id = 0x32, .dbr_offset = 0x10,
		.cqe_size = 128, .oi = 1, .cc = 1, .log_page_size = 4,
	};
	uint8_t in[MB], want[MB];

	(void)state;
	memset(in, 0xcc, sizeof(in));
	assert_int_equal(dvx_mlx5_create_cq_in(in, &a), 0);
	memset(want, 0, sizeof(want));
	want_hex(want, 0, "04 00 00 00");	/* CREATE_CQ */
	want_hex(want, 16, "02 02 00 00");	/* dbr_umem_valid [25], oi [17], cqe_sz 0 */
	want_hex(want, 20, "00 00 00 12");	/* dbr_umem_id */
	want_hex(want, 28, "0a 00 1a 2b");	/* log_cq_size 10, uar_page 0x1a2b */
	want_hex(want, 36, "00 00 00 17");	/* c_eqn */
	want_hex(want, 72, "00 00 00 00 00 00 00 40");	/* dbr_addr */
	want_hex(want, 88, "00 00 00 11");	/* cq_umem_id */
	want_hex(want, 92, "80 00 00 00");	/* cq_umem_valid */
	assert_bytes_equal(in, want, MB);

	assert_int_equal(dvx_mlx5_create_cq_in(in, &c), 0);
	memset(want, 0, sizeof(want));
	want_hex(want, 0, "04 00 00 00");
	want_hex(want, 16, "02 32 00 00");	/* valid [25], cqe_sz 1 [23:21], cc [20], oi [17] */
	want_hex(want, 20, "00 00 00 32");
	want_hex(want, 28, "00 00 1a 2b");
	want_hex(want, 36, "00 00 00 17");
	want_hex(want, 40, "04 00 00 00");	/* log_page_size 4 */
	want_hex(want, 72, "00 00 00 00 00 00 00 10");
	want_hex(want, 80, "00 00 00 00 00 00 10 00");	/* cq_umem_offset */
	want_hex(want, 88, "00 00 00 31");
	want_hex(want, 92, "80 00 00 00");
	assert_bytes_equal(in, want, MB);
}

/* CX7-like RC QP, zero-length RQ, core-direct master (the DOCA companion pattern) */
static void test_qp_realistic(void **state)
{
	struct dvx_mlx5_qp_cfg a = {
		.pdn = 0x000123, .uar_page = 0x1a2b, .user_index = 0x42, .cqn_snd = 0x400,
		.wq_umem_id = 0x21, .wq_umem_offset = 0, .dbr_umem_id = 0x22, .dbr_offset = 8,
		.log_sq_size = 8, .rq_type = DVX_MLX5_RQ_TYPE_ZERO, .log_msg_max = 30,
		.cd_master = 1,
	};
	struct dvx_mlx5_qp_wq_layout l;
	uint8_t in[MB], want[MB];

	(void)state;
	memset(in, 0xcc, sizeof(in));
	assert_int_equal(dvx_mlx5_create_qp_in(in, &a), 0);
	memset(want, 0, sizeof(want));
	want_hex(want, 0, "05 00 00 00");	/* CREATE_QP */
	want_hex(want, 24, "00 00 18 00");	/* st RC, pm_state MIGRATED */
	want_hex(want, 28, "00 00 01 23");	/* pd */
	want_hex(want, 32, "1e 00 40 00");	/* log_msg_max 30, log_sq_size 8 */
	want_hex(want, 36, "00 00 1a 2b");	/* uar_page */
	want_hex(want, 40, "00 00 00 42");	/* user_index */
	want_hex(want, 148, "00 00 04 00");	/* cqn_snd */
	want_hex(want, 168, "00 00 00 01");	/* cd_master */
	want_hex(want, 184, "00 00 00 00 00 00 00 08");	/* dbr_addr */
	want_hex(want, 196, "03 00 00 00");	/* rq_type zero-length */
	want_hex(want, 232, "10 00 00 00");	/* dbr_umem_valid */
	want_hex(want, 252, "00 00 00 22");	/* dbr_umem_id */
	want_hex(want, 264, "00 00 00 21");	/* wq_umem_id */
	want_hex(want, 268, "80 00 00 00");	/* wq_umem_valid */
	assert_bytes_equal(in, want, MB);
	assert_int_equal(dvx_mlx5_qp_wq_layout(&a, &l), 0);
	assert_int_equal(l.rq_bytes, 0);
	assert_int_equal(l.sq_offset, 0);
	assert_int_equal(l.sq_bytes, 256 * 64);
	assert_int_equal(l.end, 256 * 64);

	/* the same QP with its own RQ (64 x 64 B) and recv CQ, WQ at 0x1000 of the umem */
	a.rq_type = DVX_MLX5_RQ_TYPE_REGULAR;
	a.log_rq_size = 6;
	a.log_rq_stride = 2;
	a.cqn_rcv = 0x401;
	a.wq_umem_offset = 0x1000;
	a.cd_master = 0;
	assert_int_equal(dvx_mlx5_create_qp_in(in, &a), 0);
	want_hex(want, 32, "1e 32 40 00");	/* + log_rq_size 6 [22:19], stride 2 [18:16] */
	want_hex(want, 168, "00 00 00 00");
	want_hex(want, 180, "00 00 04 01");	/* cqn_rcv */
	want_hex(want, 196, "00 00 00 00");	/* rq_type regular */
	want_hex(want, 256, "00 00 00 00 00 00 10 00");	/* wq_umem_offset */
	assert_bytes_equal(in, want, MB);
	/* RQ first, SQ behind it (rdma-core mlx5_calc_wq_size) */
	assert_int_equal(dvx_mlx5_qp_wq_layout(&a, &l), 0);
	assert_int_equal(l.rq_offset, 0x1000);
	assert_int_equal(l.rq_bytes, 4096);
	assert_int_equal(l.sq_offset, 0x2000);
	assert_int_equal(l.sq_bytes, 16384);
	assert_int_equal(l.end, 0x6000);
}

static void test_rst2init_realistic(void **state)
{
	const struct dvx_mlx5_rst2init_cfg a = {
		.rre = 1, .rwe = 1, .rae = 1, .atomic_mode = DVX_MLX5_ATOMIC_MODE_UP_TO_8B,
		.vhca_port_num = 1, .pkey_index = 0,
	};
	uint8_t in[MB], want[MB];

	(void)state;
	memset(in, 0xcc, sizeof(in));
	assert_int_equal(dvx_mlx5_rst2init_qp_in(in, 0xabc, &a), 0);
	memset(want, 0, sizeof(want));
	want_hex(want, 0, "05 02 00 00");	/* RST2INIT_QP */
	want_hex(want, 8, "00 00 0a bc");	/* qpn */
	want_hex(want, 24, "00 00 18 00");	/* pm_state MIGRATED */
	want_hex(want, 84, "00 01 00 00");	/* vhca_port_num 1 */
	want_hex(want, 168, "00 03 e0 00");	/* atomic_mode 3, rre, rwe, rae */
	assert_bytes_equal(in, want, MB);
}

/* INIT2RTR over IB: LID 7, SL 3, P_Key index 2, 4 KiB MTU (NVSHMEM-style, no opt mask) */
static void test_init2rtr_ib_realistic(void **state)
{
	const struct dvx_mlx5_init2rtr_cfg a = {
		.remote_qpn = 0xdef, .next_rcv_psn = 0xabcd, .mtu = DVX_MLX5_MTU_4096,
		.log_msg_max = 30, .min_rnr_nak = 12, .log_rra_max = 4,
		.path = { .roce = 0, .vhca_port_num = 1, .pkey_index = 2, .rlid = 7, .sl = 3 },
	};
	uint8_t in[MB], want[MB];

	(void)state;
	memset(in, 0xcc, sizeof(in));
	assert_int_equal(dvx_mlx5_init2rtr_qp_in(in, 0xabc, &a), 0);
	memset(want, 0, sizeof(want));
	want_hex(want, 0, "05 03 00 00");	/* INIT2RTR_QP */
	want_hex(want, 8, "00 00 0a bc");
	want_hex(want, 32, "be 00 00 00");	/* mtu 5 [31:29], log_msg_max 30 */
	want_hex(want, 44, "00 00 0d ef");	/* remote_qpn */
	want_hex(want, 48, "00 00 00 02");	/* pkey_index */
	want_hex(want, 52, "00 00 00 07");	/* grh 0, mlid 0, rlid 7 */
	want_hex(want, 84, "03 01 00 00");	/* sl 3, vhca_port_num 1 */
	want_hex(want, 168, "00 80 00 00");	/* log_rra_max 4 */
	want_hex(want, 172, "0c 00 ab cd");	/* min_rnr_nak 12, next_rcv_psn */
	assert_bytes_equal(in, want, MB);
}

/* INIT2RTR over RoCE v2 with GID, MAC, UDP sport 0xC123, hop limit 255, UCX-style
 * re-sent access bits with opt_param_mask RRE|RAE|RWE */
static void test_init2rtr_roce_realistic(void **state)
{
	const struct dvx_mlx5_init2rtr_cfg a = {
		.remote_qpn = 0xdef, .next_rcv_psn = 0, .mtu = DVX_MLX5_MTU_1024,
		.log_msg_max = 30, .min_rnr_nak = 12, .log_rra_max = 4,
		.resend_access = 1, .rre = 1, .rwe = 1, .rae = 1,
		.atomic_mode = DVX_MLX5_ATOMIC_MODE_UP_TO_8B,
		.path = {
			.roce = 1, .vhca_port_num = 1, .src_addr_index = 3, .hop_limit = 255,
			.tclass = 0x68, .dscp = 0x1a, .eth_prio = 3, .udp_sport = 0xc123,
			/* ::ffff:192.168.1.2, the RoCE v2 GID of an IPv4 address */
			.rgid = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 1, 2 },
			.rmac = { 0x0c, 0x42, 0xa1, 0x12, 0x34, 0x56 },
		},
	};
	uint8_t in[MB], want[MB];

	(void)state;
	memset(in, 0xcc, sizeof(in));
	assert_int_equal(dvx_mlx5_init2rtr_qp_in(in, 0xabc, &a), 0);
	memset(want, 0, sizeof(want));
	want_hex(want, 0, "05 03 00 00");
	want_hex(want, 8, "00 00 0a bc");
	want_hex(want, 16, "00 00 00 0e");	/* opt_param_mask RRE|RAE|RWE */
	want_hex(want, 32, "7e 00 00 00");	/* mtu 3, log_msg_max 30 */
	want_hex(want, 44, "00 00 0d ef");
	want_hex(want, 56, "00 03 00 ff");	/* src_addr_index 3, hop_limit 255 */
	want_hex(want, 60, "06 80 00 00");	/* tclass 0x68, flow_label 0 */
	want_hex(want, 64, "00 00 00 00 00 00 00 00 00 00 ff ff c0 a8 01 02");	/* rgid */
	want_hex(want, 80, "00 1a c1 23");	/* dscp 26, udp_sport 0xc123 */
	want_hex(want, 84, "30 01 0c 42");	/* eth_prio 3, port 1, rmac_47_32 */
	want_hex(want, 88, "a1 12 34 56");	/* rmac_31_0 */
	want_hex(want, 168, "00 83 e0 00");	/* log_rra_max 4, atomic_mode 3, rre rwe rae */
	want_hex(want, 172, "0c 00 00 00");	/* min_rnr_nak 12, next_rcv_psn 0 */
	assert_bytes_equal(in, want, MB);
}

static void test_rtr2rts_realistic(void **state)
{
	const struct dvx_mlx5_rtr2rts_cfg a = {
		.next_send_psn = 0xabcd, .retry_count = 7, .rnr_retry = 7, .ack_timeout = 20,
		.log_sra_max = 4, .log_ack_req_freq = 0,
	};
	uint8_t in[MB], want[MB];

	(void)state;
	memset(in, 0xcc, sizeof(in));
	assert_int_equal(dvx_mlx5_rtr2rts_qp_in(in, 0xabc, &a), 0);
	memset(want, 0, sizeof(want));
	want_hex(want, 0, "05 04 00 00");	/* RTR2RTS_QP */
	want_hex(want, 8, "00 00 0a bc");
	want_hex(want, 56, "a0 00 00 00");	/* ack_timeout 20 [31:27] */
	want_hex(want, 136, "00 87 e0 00");	/* log_sra_max 4, retry 7, rnr_retry 7 */
	want_hex(want, 144, "00 00 ab cd");	/* next_send_psn */
	assert_bytes_equal(in, want, MB);
}

/* prm 1.8 last bullet: fl = 1, remote_qpn = own qpn, port, mtu; nothing else */
static void test_init2rtr_loopback(void **state)
{
	uint8_t in[MB], want[MB];

	(void)state;
	memset(in, 0xcc, sizeof(in));
	assert_int_equal(dvx_mlx5_init2rtr_loopback_qp_in(in, 0xabc, 1, DVX_MLX5_MTU_256), 0);
	memset(want, 0, sizeof(want));
	want_hex(want, 0, "05 03 00 00");
	want_hex(want, 8, "00 00 0a bc");
	want_hex(want, 32, "20 00 00 00");	/* mtu 1 */
	want_hex(want, 44, "00 00 0a bc");	/* remote_qpn = own */
	want_hex(want, 48, "80 00 00 00");	/* fl */
	want_hex(want, 84, "00 01 00 00");	/* vhca_port_num */
	assert_bytes_equal(in, want, MB);

	memset(in, 0x5a, sizeof(in));
	memcpy(want, in, sizeof(in));
	assert_int_equal(dvx_mlx5_init2rtr_loopback_qp_in(in, 0xabc, 1, 0), -EINVAL);
	assert_int_equal(dvx_mlx5_init2rtr_loopback_qp_in(in, 0xabc, 1, 6), -EINVAL);
	assert_int_equal(dvx_mlx5_init2rtr_loopback_qp_in(in, 0x1000000, 1, 1), -EINVAL);
	assert_int_equal(dvx_mlx5_init2rtr_loopback_qp_in(NULL, 1, 1, 1), -EINVAL);
	assert_bytes_equal(in, want, MB);
}

/* ------------------------------------------------------------------------- */
/* (5) invalid input: -EINVAL and the mailbox untouched                       */

struct bad {
	const char *name;
	size_t off, size;
	uint64_t v;
};

#define BAD(T, m, val) { #m "=" #val, offsetof(T, m), sizeof(((T *)0)->m), (uint64_t)(val) }

static void check_bad(const struct encoder *e, const void *base, const struct bad *b, size_t n)
{
	uint8_t attr[512], in[MB], before[MB];
	size_t i;

	memset(in, 0x5a, sizeof(in));
	CHECK(e->fn(in, base) == 0, "%s: base refused", e->name);
	for (i = 0; i < n; i++) {
		memcpy(attr, base, e->attr_size);
		set_member(attr, b[i].off, b[i].size, b[i].v);
		for (size_t j = 0; j < MB; j++)
			in[j] = (uint8_t)(0x5a ^ j);
		memcpy(before, in, sizeof(in));
		CHECK(e->fn(in, attr) == -EINVAL, "%s: %s accepted", e->name, b[i].name);
		CHECK(memcmp(in, before, MB) == 0, "%s: %s wrote the mailbox", e->name, b[i].name);
	}
	memcpy(before, in, sizeof(in));
	CHECK(e->fn(in, NULL) == -EINVAL, "%s: NULL attr", e->name);
	assert_bytes_equal(in, before, MB);
	CHECK(e->fn(NULL, base) == -EINVAL, "%s: NULL mailbox", e->name);
}

#define CQB(m, v) BAD(struct dvx_mlx5_cq_cfg, m, v)
static const struct bad cq_bad[] = {
	CQB(log_cq_size, 32), CQB(uar_page, 0x1000000), CQB(eqn, 256), CQB(cqe_size, 32),
	CQB(cqe_size, 96), CQB(cqe_size, 256), CQB(oi, 2), CQB(cc, 2), CQB(log_page_size, 32),
	CQB(ts_format, 4), CQB(cq_umem_offset, 32), CQB(cq_umem_offset, 0x1008),
	CQB(dbr_offset, 4), CQB(dbr_offset, 0x41),
};

#define QPB(m, v) BAD(struct dvx_mlx5_qp_cfg, m, v)
static const struct bad qp_bad[] = {	/* over a zero-RQ QP */
	QPB(pdn, 0x1000000), QPB(uar_page, 0x1000000), QPB(user_index, 0x1000000),
	QPB(cqn_snd, 0x1000000), QPB(cqn_rcv, 0x1000000), QPB(srqn, 5), QPB(log_sq_size, 16),
	QPB(rq_type, 2), QPB(rq_type, 4), QPB(rq_type, 0xff), QPB(log_rq_size, 1),
	QPB(log_rq_stride, 1), QPB(log_msg_max, 32), QPB(ts_format, 4), QPB(send_dbr_mode, 4),
	QPB(cd_master, 2), QPB(cd_slave_send, 2), QPB(cd_slave_receive, 2),
	QPB(wq_umem_offset, 32), QPB(wq_umem_offset, 0xffffffffffffffc0ull) /* WQ wraps */,
	QPB(dbr_offset, 12), QPB(dbr_offset, 1),
};
static const struct bad qp_rq_bad[] = {	/* over a regular 4 x 16 B RQ */
	QPB(log_rq_size, 16), QPB(log_rq_stride, 8), QPB(log_rq_size, 1) /* 32 B < WQEBB */,
	QPB(srqn, 1),
};
static const struct bad qp_srq_bad[] = {	/* over an SRQ-attached QP */
	QPB(srqn, 0x1000000), QPB(log_rq_size, 1), QPB(log_rq_stride, 2),
};

#define R2IB(m, v) BAD(struct dvx_mlx5_rst2init_cfg, m, v)
static const struct bad r2i_bad[] = {
	R2IB(rre, 2), R2IB(rwe, 2), R2IB(rae, 2), R2IB(atomic_mode, 16),
};

#define I2RB(m, v) BAD(struct dvx_mlx5_init2rtr_cfg, m, v)
static const struct bad i2r_ib_bad[] = {	/* over an IB, no-GRH, no-resend INIT2RTR */
	I2RB(mtu, 0), I2RB(mtu, 6), I2RB(mtu, 7), I2RB(remote_qpn, 0x1000000),
	I2RB(next_rcv_psn, 0x1000000), I2RB(log_msg_max, 32), I2RB(min_rnr_nak, 32),
	I2RB(log_rra_max, 8), I2RB(resend_access, 2), I2RB(rre, 1), I2RB(rwe, 1), I2RB(rae, 1),
	I2RB(atomic_mode, 1),
	I2RB(path.roce, 2), I2RB(path.ack_timeout, 32), I2RB(path.stat_rate, 16),
	I2RB(path.fl, 2), I2RB(path.flow_label, 0x100000), I2RB(path.sl, 16),
	I2RB(path.grh, 2), I2RB(path.mlid, 0x80), I2RB(path.dscp, 1), I2RB(path.eth_prio, 1),
	I2RB(path.udp_sport, 0xc000), I2RB(path.rmac[0], 1), I2RB(path.rmac[5], 1),
	/* GRH fields without grh = 1 would be dropped */
	I2RB(path.rgid[0], 0xfe), I2RB(path.rgid[15], 1), I2RB(path.src_addr_index, 1),
	I2RB(path.hop_limit, 64), I2RB(path.tclass, 1), I2RB(path.flow_label, 1),
};
static const struct bad i2r_roce_bad[] = {	/* over a RoCE INIT2RTR */
	I2RB(path.rlid, 1), I2RB(path.sl, 1), I2RB(path.grh, 1), I2RB(path.mlid, 1),
	I2RB(path.dscp, 64), I2RB(path.eth_prio, 8), I2RB(path.flow_label, 0x100000),
	I2RB(path.roce, 2),
};
static const struct bad i2r_resend_bad[] = {	/* with resend_access */
	I2RB(rre, 2), I2RB(rwe, 2), I2RB(rae, 2), I2RB(atomic_mode, 16),
};

#define R2RB(m, v) BAD(struct dvx_mlx5_rtr2rts_cfg, m, v)
static const struct bad r2r_bad[] = {
	R2RB(next_send_psn, 0x1000000), R2RB(retry_count, 8), R2RB(rnr_retry, 8),
	R2RB(ack_timeout, 32), R2RB(log_sra_max, 8), R2RB(log_ack_req_freq, 16),
};

static void test_invalid(void **state)
{
	struct dvx_mlx5_qp_cfg rq = qp_zero, srq = qp_zero;
	struct dvx_mlx5_init2rtr_cfg roce = i2r_zero, ib = i2r_zero;
	const struct dvx_mlx5_rst2init_cfg r2i = { .rre = 1 };
	const struct dvx_mlx5_rtr2rts_cfg r2r = { .retry_count = 7 };
	struct dvx_mlx5_qp_wq_layout l, l0;
	uint8_t in[MB], before[MB];

	(void)state;
	check_bad(&E_CQ, &cq_busy, cq_bad, DVX_ARRAY_SIZE(cq_bad));
	check_bad(&E_QP, &qp_zero, qp_bad, DVX_ARRAY_SIZE(qp_bad));
	rq.rq_type = DVX_MLX5_RQ_TYPE_REGULAR;
	rq.log_rq_size = 2;	/* 4 x 16 B = 64 B: the smallest regular RQ */
	check_bad(&E_QP, &rq, qp_rq_bad, DVX_ARRAY_SIZE(qp_rq_bad));
	srq.rq_type = DVX_MLX5_RQ_TYPE_SRQ;
	srq.srqn = 0x77;
	check_bad(&E_QP, &srq, qp_srq_bad, DVX_ARRAY_SIZE(qp_srq_bad));
	check_bad(&E_R2I, &r2i, r2i_bad, DVX_ARRAY_SIZE(r2i_bad));
	ib.resend_access = 0;
	check_bad(&E_I2R, &ib, i2r_ib_bad, DVX_ARRAY_SIZE(i2r_ib_bad));
	roce.path.roce = 1;
	check_bad(&E_I2R, &roce, i2r_roce_bad, DVX_ARRAY_SIZE(i2r_roce_bad));
	check_bad(&E_I2R, &i2r_busy, i2r_resend_bad, DVX_ARRAY_SIZE(i2r_resend_bad));
	check_bad(&E_R2R, &r2r, r2r_bad, DVX_ARRAY_SIZE(r2r_bad));

	/* a qpn that does not fit, on every modify command */
	memset(in, 0x5a, sizeof(in));
	memcpy(before, in, sizeof(in));
	assert_int_equal(dvx_mlx5_rst2init_qp_in(in, 0x1000000, &r2i), -EINVAL);
	assert_int_equal(dvx_mlx5_init2rtr_qp_in(in, 0x1000000, &i2r_zero), -EINVAL);
	assert_int_equal(dvx_mlx5_rtr2rts_qp_in(in, 0x1000000, &r2r), -EINVAL);
	assert_bytes_equal(in, before, MB);

	/* the layout helper refuses what create_qp refuses and leaves @l alone */
	memset(&l, 0x77, sizeof(l));
	memcpy(&l0, &l, sizeof(l));
	rq.log_rq_stride = 0;
	rq.log_rq_size = 1;
	assert_int_equal(dvx_mlx5_qp_wq_layout(&rq, &l), -EINVAL);
	assert_int_equal(dvx_mlx5_qp_wq_layout(NULL, &l), -EINVAL);
	assert_int_equal(dvx_mlx5_qp_wq_layout(&qp_zero, NULL), -EINVAL);
	assert_memory_equal(&l, &l0, sizeof(l));
}

/* ------------------------------------------------------------------------- */
/* (6) names, status, output decoders                                         */

static void test_names(void **state)
{
	static const struct {
		unsigned op;
		const char *name;
	} ops[] = {
		{ 0x100, "QUERY_HCA_CAP" }, { 0x200, "CREATE_MKEY" }, { 0x400, "CREATE_CQ" },
		{ 0x401, "DESTROY_CQ" }, { 0x402, "QUERY_CQ" }, { 0x500, "CREATE_QP" },
		{ 0x501, "DESTROY_QP" }, { 0x502, "RST2INIT_QP" }, { 0x503, "INIT2RTR_QP" },
		{ 0x504, "RTR2RTS_QP" }, { 0x505, "RTS2RTS_QP" }, { 0x507, "2ERR_QP" },
		{ 0x50a, "2RST_QP" }, { 0x50b, "QUERY_QP" }, { 0x800, "ALLOC_PD" },
		{ 0x0, "UNKNOWN" }, { 0x506, "UNKNOWN" }, { 0xffff, "UNKNOWN" },
	};
	static const char *const states[] = {
		"RST", "INIT", "RTR", "RTS", "SQER", "SQD", "ERR", "SQ_DRAINING", "UNKNOWN",
		"SUSPENDED", "UNKNOWN",
	};
	size_t i;

	(void)state;
	for (i = 0; i < DVX_ARRAY_SIZE(ops); i++)
		assert_string_equal(dvx_mlx5_cmd_name(ops[i].op), ops[i].name);
	for (i = 0; i < DVX_ARRAY_SIZE(states); i++)
		assert_string_equal(dvx_mlx5_qp_state_name((unsigned)i), states[i]);
	/* PRM values, not ibv_qp_state's (KL qp.h / mlx5_ifc.h) */
	assert_int_equal(DVX_MLX5_QP_STATE_RST, 0);
	assert_int_equal(DVX_MLX5_QP_STATE_INIT, 1);
	assert_int_equal(DVX_MLX5_QP_STATE_RTR, 2);
	assert_int_equal(DVX_MLX5_QP_STATE_RTS, 3);
	assert_int_equal(DVX_MLX5_QP_STATE_SQER, 4);
	assert_int_equal(DVX_MLX5_QP_STATE_ERR, 6);
}

static void test_out_status(void **state)
{
	uint8_t out[16];
	uint8_t st = 0xaa;
	uint32_t syn = 0xaaaaaaaa;

	(void)state;
	memset(out, 0, sizeof(out));
	want_hex(out, 4, "12 34 56 78");
	assert_int_equal(dvx_mlx5_cmd_out_status(out, &st, &syn), 0);
	assert_int_equal(st, 0);
	assert_int_equal(syn, 0x12345678);

	out[0] = 0x06;	/* RESOURCE_BUSY */
	out[1] = 0xff;	/* reserved bits beside status are not status */
	assert_int_equal(dvx_mlx5_cmd_out_status(out, &st, &syn), -EBUSY);
	assert_int_equal(st, 0x06);
	assert_int_equal(syn, 0x12345678);
	out[0] = 0x08;	/* EXCEED_LIM */
	assert_int_equal(dvx_mlx5_cmd_out_status(out, NULL, NULL), -ENOMEM);
	out[0] = 0x03;	/* BAD_PARAM */
	assert_int_equal(dvx_mlx5_cmd_out_status(out, &st, NULL), -EINVAL);
	assert_int_equal(st, 3);
	out[0] = 0xee;	/* unnamed */
	assert_int_equal(dvx_mlx5_cmd_out_status(out, NULL, &syn), -EIO);
	assert_int_equal(dvx_mlx5_cmd_out_status(NULL, &st, &syn), -EINVAL);
}

typedef int (*num_out_fn)(const void *out, size_t outlen, uint32_t *num);

static void check_num_out(num_out_fn fn, size_t need)
{
	uint8_t out[16];
	uint32_t num;

	memset(out, 0, sizeof(out));
	want_hex(out, 8, "ff 12 34 ab");	/* reserved byte 8 must not leak in */
	num = 0;
	assert_int_equal(fn(out, need, &num), 0);
	assert_int_equal(num, 0x1234ab);

	num = 0x77;
	assert_int_equal(fn(out, need - 1, &num), -EINVAL);
	assert_int_equal(fn(NULL, need, &num), -EINVAL);
	assert_int_equal(fn(out, need, NULL), -EINVAL);
	out[0] = 0x0f;	/* NO_RESOURCES */
	assert_int_equal(fn(out, need, &num), -EAGAIN);
	assert_int_equal(num, 0x77);
}

static void test_create_out(void **state)
{
	(void)state;
	check_num_out(dvx_mlx5_create_cq_out, DVX_MLX5_CREATE_CQ_OUT_BYTES);
	check_num_out(dvx_mlx5_create_qp_out, DVX_MLX5_CREATE_QP_OUT_BYTES);
}

static void test_query_qp_out(void **state)
{
	uint8_t out[MB];
	struct dvx_mlx5_qp_query q, q0;

	(void)state;
	/* a plausible RTS answer, written with raw arithmetic at the KL/prm offsets
	 * (opt_param_mask at 16, qpc at 24), over a background of ones in reserved space */
	memset(out, 0, sizeof(out));
	memset(out + 256, 0xff, 16);
	raw_put(out, 16, 31, 0, 0x0000000e);		/* opt_param_mask */
	raw_put(out, 24, 31, 28, 3);			/* state RTS */
	raw_put(out, 24, 23, 16, 0);			/* st RC */
	raw_put(out, 24, 12, 11, 3);			/* pm_state */
	raw_put(out, 28, 23, 0, 0x123);			/* pd */
	raw_put(out, 32, 31, 29, 5);			/* mtu */
	raw_put(out, 32, 14, 11, 8);			/* log_sq_size */
	raw_put(out, 36, 23, 0, 0x1a2b);		/* uar_page */
	raw_put(out, 40, 23, 0, 0x42);			/* user_index */
	raw_put(out, 44, 23, 0, 0xdef);			/* remote_qpn */
	raw_put(out, 56, 31, 27, 20);			/* ack_timeout */
	raw_put(out, 84, 23, 16, 1);			/* vhca_port_num */
	raw_put(out, 136, 18, 16, 7);			/* retry_count */
	raw_put(out, 136, 15, 13, 6);			/* rnr_retry */
	raw_put(out, 144, 23, 0, 0x10);			/* next_send_psn */
	raw_put(out, 148, 23, 0, 0x400);		/* cqn_snd */
	raw_put(out, 168, 0, 0, 1);			/* cd_master */
	raw_put(out, 172, 23, 0, 0x20);			/* next_rcv_psn */
	raw_put(out, 180, 23, 0, 0x401);		/* cqn_rcv */
	raw_put(out, 196, 26, 24, 3);			/* rq_type */
	raw_put(out, 204, 31, 16, 0x1234);		/* hw_sq_wqebb_counter */
	raw_put(out, 204, 15, 0, 0x5678);		/* sw_sq_wqebb_counter */
	assert_int_equal(dvx_mlx5_query_qp_out(out, sizeof(out), &q), 0);
	assert_int_equal(q.state, DVX_MLX5_QP_STATE_RTS);
	assert_string_equal(dvx_mlx5_qp_state_name(q.state), "RTS");
	assert_int_equal(q.st, 0);
	assert_int_equal(q.pm_state, 3);
	assert_int_equal(q.pdn, 0x123);
	assert_int_equal(q.mtu, 5);
	assert_int_equal(q.log_sq_size, 8);
	assert_int_equal(q.uar_page, 0x1a2b);
	assert_int_equal(q.user_index, 0x42);
	assert_int_equal(q.remote_qpn, 0xdef);
	assert_int_equal(q.ack_timeout, 20);
	assert_int_equal(q.vhca_port_num, 1);
	assert_int_equal(q.retry_count, 7);
	assert_int_equal(q.rnr_retry, 6);
	assert_int_equal(q.next_send_psn, 0x10);
	assert_int_equal(q.cqn_snd, 0x400);
	assert_int_equal(q.cd_master, 1);
	assert_int_equal(q.next_rcv_psn, 0x20);
	assert_int_equal(q.cqn_rcv, 0x401);
	assert_int_equal(q.rq_type, 3);
	assert_int_equal(q.hw_sq_wqebb_counter, 0x1234);
	assert_int_equal(q.sw_sq_wqebb_counter, 0x5678);
	assert_int_equal(q.opt_param_mask, 0xe);

	/* every field all ones: each decodes to exactly its width */
	memset(out, 0xff, sizeof(out));
	out[0] = 0;
	assert_int_equal(dvx_mlx5_query_qp_out(out, sizeof(out), &q), 0);
	assert_int_equal(q.state, 0xf);
	assert_int_equal(q.st, 0xff);
	assert_int_equal(q.pm_state, 3);
	assert_int_equal(q.mtu, 7);
	assert_int_equal(q.log_sq_size, 15);
	assert_int_equal(q.rq_type, 7);
	assert_int_equal(q.retry_count, 7);
	assert_int_equal(q.rnr_retry, 7);
	assert_int_equal(q.ack_timeout, 31);
	assert_int_equal(q.cd_master, 1);
	assert_int_equal(q.pdn, 0xffffff);
	assert_int_equal(q.next_rcv_psn, 0xffffff);
	assert_int_equal(q.hw_sq_wqebb_counter, 0xffff);
	assert_int_equal(q.opt_param_mask, 0xffffffffu);

	/* errors leave @q alone */
	memset(&q, 0x33, sizeof(q));
	memcpy(&q0, &q, sizeof(q));
	assert_int_equal(dvx_mlx5_query_qp_out(out, sizeof(out) - 1, &q), -EINVAL);
	out[0] = 0x10;	/* BAD_QP_STATE */
	assert_int_equal(dvx_mlx5_query_qp_out(out, sizeof(out), &q), -EINVAL);
	out[0] = 0x06;
	assert_int_equal(dvx_mlx5_query_qp_out(out, sizeof(out), &q), -EBUSY);
	assert_int_equal(dvx_mlx5_query_qp_out(NULL, sizeof(out), &q), -EINVAL);
	assert_int_equal(dvx_mlx5_query_qp_out(out, sizeof(out), NULL), -EINVAL);
	assert_memory_equal(&q, &q0, sizeof(q));
}

static void test_query_cq_out(void **state)
{
	uint8_t out[MB];
	struct dvx_mlx5_cq_query q, q0;

	(void)state;
	memset(out, 0, sizeof(out));
	raw_put(out, 16, 31, 28, 0x9);			/* status (e.g. overflow) */
	raw_put(out, 16, 23, 21, 1);			/* cqe_sz */
	raw_put(out, 16, 20, 20, 1);			/* cc */
	raw_put(out, 16, 17, 17, 1);			/* oi */
	raw_put(out, 16, 11, 8, 0xa);			/* st */
	raw_put(out, 28, 28, 24, 10);			/* log_cq_size */
	raw_put(out, 28, 23, 0, 0x1a2b);		/* uar_page */
	raw_put(out, 36, 31, 8, 0xffffff);		/* high bits beside c_eqn */
	raw_put(out, 36, 7, 0, 0x17);			/* c_eqn */
	raw_put(out, 48, 23, 0, 0x111111);		/* last_notified_index */
	raw_put(out, 52, 23, 0, 0x222222);		/* last_solicit_index */
	raw_put(out, 56, 31, 0, 0xff333333);		/* consumer_counter + reserved */
	raw_put(out, 60, 23, 0, 0x444444);		/* producer_counter */
	assert_int_equal(dvx_mlx5_query_cq_out(out, sizeof(out), &q), 0);
	assert_int_equal(q.status, 9);
	assert_int_equal(q.cqe_sz, 1);
	assert_int_equal(q.cc, 1);
	assert_int_equal(q.oi, 1);
	assert_int_equal(q.st, 0xa);
	assert_int_equal(q.log_cq_size, 10);
	assert_int_equal(q.uar_page, 0x1a2b);
	assert_int_equal(q.c_eqn, 0x17);
	assert_int_equal(q.last_notified_index, 0x111111);
	assert_int_equal(q.last_solicit_index, 0x222222);
	assert_int_equal(q.consumer_counter, 0x333333);
	assert_int_equal(q.producer_counter, 0x444444);

	memset(&q, 0x33, sizeof(q));
	memcpy(&q0, &q, sizeof(q));
	assert_int_equal(dvx_mlx5_query_cq_out(out, DVX_MLX5_QUERY_CQ_OUT_BYTES - 1, &q), -EINVAL);
	out[0] = 0x05;
	assert_int_equal(dvx_mlx5_query_cq_out(out, sizeof(out), &q), -EINVAL);
	assert_memory_equal(&q, &q0, sizeof(q));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_macros_are_facts),
		cmocka_unit_test(test_cq_fields),
		cmocka_unit_test(test_cq_cqe_size),
		cmocka_unit_test(test_qp_fields),
		cmocka_unit_test(test_qp_constants),
		cmocka_unit_test(test_rst2init_fields),
		cmocka_unit_test(test_init2rtr_fields),
		cmocka_unit_test(test_rtr2rts_fields),
		cmocka_unit_test(test_objnum_commands),
		cmocka_unit_test(test_cd_master_neighbours),
		cmocka_unit_test(test_cq_realistic),
		cmocka_unit_test(test_qp_realistic),
		cmocka_unit_test(test_rst2init_realistic),
		cmocka_unit_test(test_init2rtr_ib_realistic),
		cmocka_unit_test(test_init2rtr_roce_realistic),
		cmocka_unit_test(test_rtr2rts_realistic),
		cmocka_unit_test(test_init2rtr_loopback),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_out_status),
		cmocka_unit_test(test_create_out),
		cmocka_unit_test(test_query_qp_out),
		cmocka_unit_test(test_query_cq_out),
	};

	return cmocka_run_group_tests_name("mlx5-cmd", tests, NULL, NULL);
}
