// SPDX-License-Identifier: MIT
/*
 * tests/fuzz/lf/prm.c - libFuzzer harness: the PRM output decoders (mlx5/cmd.c: every
 * *_out decoder and dvx_mlx5_cmd_out_status()) and the capability parser
 * (dvx_mlx5_caps_parse(), mlx5/caps.c).
 *
 * Feeds: an output mailbox. Input bytes 0-1 give its length (0..4399, little-endian,
 * taken modulo 4400: shorter and longer than every layout), byte 2 the capability type
 * (one of the five dvx names, or any value), the rest the mailbox bytes (zero-filled
 * when short). Each decoder gets the mailbox in a heap block of exactly that length, so
 * a read past it is an ASan report.
 *
 * Checks, the contract of tests/fuzz/test_fuzz.c's test_prm_outputs: the answer is 0
 * or a negative errno; a mailbox shorter than the layout is -EINVAL; a non-zero status
 * (byte 0) is exactly dvx_mlx5_cmd_status_errno(status), negative; both leave the
 * caller's output untouched (it is poisoned before each call); with status 0 and room
 * the answer is 0 and every decoded field equals the bits read here at the positions
 * of docs/prm.md (create_cq/qp: the number at dw@8 [23:0]; query_cq: the cqc at 16;
 * query_qp: opt_param_mask at 16 and the qpc at 24; the general capability page's
 * fields); NULL arguments are -EINVAL; the mailbox is only read. dvx_mlx5_caps_parse()
 * also refuses an unknown type with -EINVAL and, on success, fills only the group of
 * the type it was given (the other groups' valid flags keep the poison).
 */
#include <dvx/mlx5/caps.h>
#include <dvx/mlx5/cmd.h>

#include "lf.h"

#define MAX_LEN (DVX_MLX5_QUERY_HCA_CAP_OUT_BYTES + 288u)
#define POISON 0xa5

/* dw@@b [hi:lo] of a big-endian mailbox, read byte by byte */
static uint32_t bits(const uint8_t *m, unsigned b, unsigned hi, unsigned lo)
{
	uint32_t dw = (uint32_t)m[b] << 24 | (uint32_t)m[b + 1] << 16 | (uint32_t)m[b + 2] << 8 |
		      m[b + 3];
	uint32_t mask = hi - lo == 31 ? 0xffffffffu : ((1u << (hi - lo + 1)) - 1);

	return (dw >> lo) & mask;
}

static int all_poison(const void *p, size_t n)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i] != POISON)
			return 0;
	return 1;
}

/* the common contract; returns 1 when the decode must have filled its output */
static int check_common(int r, const uint8_t *out, size_t len, size_t need, const void *dst,
			size_t dlen)
{
	LF_CHECK(r <= 0);
	if (len < need) {
		LF_CHECK(r == -EINVAL);
	} else if (out[0]) {
		LF_CHECK(r == dvx_mlx5_cmd_status_errno(out[0]));
		LF_CHECK(r < 0);
	} else {
		LF_CHECK(r == 0);
		return 1;
	}
	LF_CHECK(all_poison(dst, dlen));	/* nothing written on error */
	return 0;
}

static void check_cq_query(const struct dvx_mlx5_cq_query *q, const uint8_t *m)
{
	LF_CHECK(q->status == bits(m, 16, 31, 28));
	LF_CHECK(q->cqe_sz == bits(m, 16, 23, 21));
	LF_CHECK(q->cc == bits(m, 16, 20, 20));
	LF_CHECK(q->oi == bits(m, 16, 17, 17));
	LF_CHECK(q->st == bits(m, 16, 11, 8));
	LF_CHECK(q->log_cq_size == bits(m, 28, 28, 24));
	LF_CHECK(q->uar_page == bits(m, 28, 23, 0));
	LF_CHECK(q->c_eqn == bits(m, 36, 7, 0));
	LF_CHECK(q->last_notified_index == bits(m, 48, 23, 0));
	LF_CHECK(q->last_solicit_index == bits(m, 52, 23, 0));
	LF_CHECK(q->consumer_counter == bits(m, 56, 23, 0));
	LF_CHECK(q->producer_counter == bits(m, 60, 23, 0));
	LF_CHECK(q->rsvd == 0);
}

static void check_qp_query(const struct dvx_mlx5_qp_query *q, const uint8_t *m)
{
	LF_CHECK(q->opt_param_mask == bits(m, 16, 31, 0));
	LF_CHECK(q->state == bits(m, 24, 31, 28));
	LF_CHECK(q->st == bits(m, 24, 23, 16));
	LF_CHECK(q->pm_state == bits(m, 24, 12, 11));
	LF_CHECK(q->pdn == bits(m, 28, 23, 0));
	LF_CHECK(q->mtu == bits(m, 32, 31, 29));
	LF_CHECK(q->log_sq_size == bits(m, 32, 14, 11));
	LF_CHECK(q->uar_page == bits(m, 36, 23, 0));
	LF_CHECK(q->user_index == bits(m, 40, 23, 0));
	LF_CHECK(q->remote_qpn == bits(m, 44, 23, 0));
	LF_CHECK(q->ack_timeout == bits(m, 56, 31, 27));
	LF_CHECK(q->vhca_port_num == bits(m, 84, 23, 16));
	LF_CHECK(q->retry_count == bits(m, 136, 18, 16));
	LF_CHECK(q->rnr_retry == bits(m, 136, 15, 13));
	LF_CHECK(q->next_send_psn == bits(m, 144, 23, 0));
	LF_CHECK(q->cqn_snd == bits(m, 148, 23, 0));
	LF_CHECK(q->cd_master == bits(m, 168, 0, 0));
	LF_CHECK(q->next_rcv_psn == bits(m, 172, 23, 0));
	LF_CHECK(q->cqn_rcv == bits(m, 180, 23, 0));
	LF_CHECK(q->rq_type == bits(m, 196, 26, 24));
	LF_CHECK(q->hw_sq_wqebb_counter == bits(m, 204, 31, 16));
	LF_CHECK(q->sw_sq_wqebb_counter == bits(m, 204, 15, 0));
	LF_CHECK(q->rsvd == 0);
}

/* the general page (cmd_hca_cap) at byte 16 of the mailbox */
static void check_general(const struct dvx_mlx5_caps *c, const uint8_t *m)
{
	const uint8_t *p = m + 16;

	LF_CHECK(c->general_valid == 1);
	LF_CHECK(c->hca_cap_2 == bits(p, 4, 31, 31));
	LF_CHECK(c->log_max_qp_sz == bits(p, 16, 23, 16));
	LF_CHECK(c->log_max_qp == bits(p, 16, 4, 0));
	LF_CHECK(c->log_max_cq_sz == bits(p, 24, 23, 16));
	LF_CHECK(c->log_max_ra_req_qp == bits(p, 40, 21, 16));
	LF_CHECK(c->log_max_ra_res_qp == bits(p, 40, 5, 0));
	LF_CHECK(c->port_type == bits(p, 52, 9, 8));
	LF_CHECK(c->num_ports == bits(p, 52, 7, 0));
	LF_CHECK(c->log_max_msg == bits(p, 56, 28, 24));
	LF_CHECK(c->cqe_version == bits(p, 60, 3, 0));
	LF_CHECK(c->roce == bits(p, 64, 2, 2));
	LF_CHECK(c->atomic == bits(p, 64, 1, 1));
	LF_CHECK(c->cq_oi == bits(p, 68, 31, 31));
	LF_CHECK(c->cd == bits(p, 68, 19, 19));
	LF_CHECK(c->rc == bits(p, 68, 0, 0));
	LF_CHECK(c->uar_4k == bits(p, 72, 31, 31));
	LF_CHECK(c->log_pg_sz == bits(p, 72, 7, 0));
	LF_CHECK(c->bf == bits(p, 76, 31, 31));
	LF_CHECK(c->max_wqe_sz_sq == bits(p, 80, 15, 0));
	LF_CHECK(c->max_wqe_sz_rq == bits(p, 84, 15, 0));
	LF_CHECK(c->log_max_pd == bits(p, 100, 20, 16));
	LF_CHECK(c->log_max_atomic_size_qp == bits(p, 176, 31, 24));
}

static void fuzz_caps(const uint8_t *out, size_t len, unsigned type)
{
	static struct dvx_mlx5_caps caps;
	uint8_t *v[4] = { &caps.general_valid, &caps.atomic_valid, &caps.roce_valid,
			  &caps.general2_valid };
	int known = type == DVX_MLX5_CAP_TYPE_GENERAL || type == DVX_MLX5_CAP_TYPE_ATOMIC ||
		    type == DVX_MLX5_CAP_TYPE_ROCE || type == DVX_MLX5_CAP_TYPE_GENERAL_2;
	int r, mine, i;

	memset(&caps, POISON, sizeof(caps));
	r = dvx_mlx5_caps_parse(&caps, type, out, len);
	LF_CHECK(r <= 0);
	if (len < DVX_MLX5_QUERY_HCA_CAP_OUT_BYTES)
		LF_CHECK(r == -EINVAL);
	else if (out[0])
		LF_CHECK(r == dvx_mlx5_cmd_status_errno(out[0]) && r < 0);
	else if (!known)
		LF_CHECK(r == -EINVAL);
	else
		LF_CHECK(r == 0);
	if (r) {
		LF_CHECK(all_poison(&caps, sizeof(caps)));
		return;
	}
	mine = type == DVX_MLX5_CAP_TYPE_GENERAL ? 0 : type == DVX_MLX5_CAP_TYPE_ATOMIC ? 1 :
	       type == DVX_MLX5_CAP_TYPE_ROCE ? 2 : 3;
	for (i = 0; i < 4; i++)
		LF_CHECK(*v[i] == (i == mine ? 1 : POISON));
	if (type == DVX_MLX5_CAP_TYPE_GENERAL)
		check_general(&caps, out);
	LF_CHECK(dvx_mlx5_caps_parse(NULL, type, out, len) == -EINVAL);
	LF_CHECK(dvx_mlx5_caps_parse(&caps, type, NULL, len) == -EINVAL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t types[] = { DVX_MLX5_CAP_TYPE_GENERAL, DVX_MLX5_CAP_TYPE_ATOMIC,
					 DVX_MLX5_CAP_TYPE_ROCE, DVX_MLX5_CAP_TYPE_GENERAL_2,
					 DVX_MLX5_CAP_TYPE_ODP };
	struct lf_in in = { data, size };
	size_t len = lf_u16(&in) % MAX_LEN;
	unsigned t = lf_u8(&in), type = t < 0xf0 ? types[t % DVX_ARRAY_SIZE(types)] : t & 0x3f;
	uint8_t *out = malloc(len ? len : 1), *copy = malloc(len ? len : 1);
	struct dvx_mlx5_qp_query qq;
	struct dvx_mlx5_cq_query cq;
	uint32_t num, st32 = 0;
	uint8_t st8 = 0;
	int r;

	LF_CHECK(out && copy);
	lf_bytes(&in, out, len);
	memcpy(copy, out, len);

	memset(&num, POISON, sizeof(num));
	r = dvx_mlx5_create_cq_out(out, len, &num);
	if (check_common(r, out, len, DVX_MLX5_CREATE_CQ_OUT_BYTES, &num, sizeof(num)))
		LF_CHECK(num == bits(out, 8, 23, 0));
	memset(&num, POISON, sizeof(num));
	r = dvx_mlx5_create_qp_out(out, len, &num);
	if (check_common(r, out, len, DVX_MLX5_CREATE_QP_OUT_BYTES, &num, sizeof(num)))
		LF_CHECK(num == bits(out, 8, 23, 0));
	memset(&cq, POISON, sizeof(cq));
	r = dvx_mlx5_query_cq_out(out, len, &cq);
	if (check_common(r, out, len, DVX_MLX5_QUERY_CQ_OUT_BYTES, &cq, sizeof(cq)))
		check_cq_query(&cq, out);
	memset(&qq, POISON, sizeof(qq));
	r = dvx_mlx5_query_qp_out(out, len, &qq);
	if (check_common(r, out, len, DVX_MLX5_QUERY_QP_OUT_BYTES, &qq, sizeof(qq)))
		check_qp_query(&qq, out);
	if (len >= 8) {
		r = dvx_mlx5_cmd_out_status(out, &st8, &st32);
		LF_CHECK(st8 == out[0] && st32 == bits(out, 4, 31, 0));
		LF_CHECK(r == (out[0] ? dvx_mlx5_cmd_status_errno(out[0]) : 0));
		LF_CHECK(dvx_mlx5_cmd_out_status(out, NULL, NULL) == r);
		LF_CHECK(r || !strcmp(dvx_mlx5_cmd_status_name(out[0]), "OK"));
	}
	fuzz_caps(out, len, type);
	LF_CHECK(!memcmp(out, copy, len));	/* the mailbox is only read */

	/* NULL arguments */
	LF_CHECK(dvx_mlx5_create_cq_out(NULL, len, &num) == -EINVAL);
	LF_CHECK(dvx_mlx5_create_qp_out(out, len, NULL) == -EINVAL);
	LF_CHECK(dvx_mlx5_query_cq_out(out, len, NULL) == -EINVAL);
	LF_CHECK(dvx_mlx5_query_qp_out(NULL, len, &qq) == -EINVAL);
	LF_CHECK(dvx_mlx5_cmd_out_status(NULL, NULL, NULL) == -EINVAL);
	free(copy);
	free(out);
	return 0;
}

/* ---- seeds: output mailboxes as the software NIC answers them ---- */

static void put32(uint8_t *m, unsigned b, uint32_t v)
{
	m[b] = (uint8_t)(v >> 24);
	m[b + 1] = (uint8_t)(v >> 16);
	m[b + 2] = (uint8_t)(v >> 8);
	m[b + 3] = (uint8_t)v;
}

static void seed(const char *name, size_t len, unsigned type_sel, const uint8_t *m, size_t n)
{
	static uint8_t buf[3 + MAX_LEN];

	buf[0] = (uint8_t)len;
	buf[1] = (uint8_t)(len >> 8);
	buf[2] = (uint8_t)type_sel;
	memcpy(buf + 3, m, n);
	lf_seed(name, buf, 3 + n);
}

static void write_seeds(void)
{
	static uint8_t m[MAX_LEN];

	memset(m, 0, sizeof(m));
	put32(m, 8, 0x000401);		/* a CQN / QPN */
	seed("create-ok", 16, 0, m, 16);
	m[0] = DVX_MLX5_CMD_STAT_BAD_PARAM_ERR;
	put32(m, 4, 0x12345678);	/* syndrome */
	seed("create-bad-param", 16, 0, m, 16);
	m[0] = DVX_MLX5_CMD_STAT_LIM_ERR;
	seed("create-exceed-lim", 16, 0, m, 16);
	seed("create-short", 15, 0, m, 15);

	/* query_cq_out: log_cq_size 8, uar 3, eqn 7, counters */
	memset(m, 0, sizeof(m));
	put32(m, 28, 8u << 24 | 3);
	put32(m, 36, 7);
	put32(m, 56, 0x10);
	put32(m, 60, 0x12);
	seed("query-cq", DVX_MLX5_QUERY_CQ_OUT_BYTES, 0, m, DVX_MLX5_QUERY_CQ_OUT_BYTES);
	/* query_qp_out: RTS, MTU 4096, remote QPN, PSNs, counters */
	memset(m, 0, sizeof(m));
	put32(m, 24, 3u << 28);
	put32(m, 32, 5u << 29 | 6u << 11);
	put32(m, 44, 0x000402);
	put32(m, 144, 0x123456);
	put32(m, 172, 0x654321);
	put32(m, 204, 5u << 16 | 9);
	seed("query-qp", DVX_MLX5_QUERY_QP_OUT_BYTES, 0, m, DVX_MLX5_QUERY_QP_OUT_BYTES);

	/* QUERY_HCA_CAP: the general page of a ConnectX-7 as the sim builds it */
	memset(m, 0, sizeof(m));
	put32(m + 16, 4, 1u << 31);
	put32(m + 16, 16, 17u << 16 | 17);
	put32(m + 16, 24, 22u << 16);
	put32(m + 16, 52, 1u << 8 | 1);
	put32(m + 16, 56, 30u << 24);
	put32(m + 16, 60, 1);
	put32(m + 16, 64, 6);
	put32(m + 16, 68, 1u << 31 | 1u << 19 | 1);
	put32(m + 16, 72, 1u << 31 | 6u << 16 | 12);
	put32(m + 16, 80, 1024);
	put32(m + 16, 100, 23u << 16);
	put32(m + 16, 176, 3u << 24);
	seed("caps-general", DVX_MLX5_QUERY_HCA_CAP_OUT_BYTES, 0, m,
	     DVX_MLX5_QUERY_HCA_CAP_OUT_BYTES);
	memset(m, 0, sizeof(m));
	put32(m + 16, 8, 3u << 30 | 1u << 25);
	put32(m + 16, 16, 0xf);
	put32(m + 16, 20, 0xc);
	seed("caps-atomic", DVX_MLX5_QUERY_HCA_CAP_OUT_BYTES, 1, m,
	     DVX_MLX5_QUERY_HCA_CAP_OUT_BYTES);
	memset(m, 0, sizeof(m));
	put32(m + 16, 24, 0xffffc000u);
	seed("caps-roce", DVX_MLX5_QUERY_HCA_CAP_OUT_BYTES, 2, m,
	     DVX_MLX5_QUERY_HCA_CAP_OUT_BYTES);
	m[0] = DVX_MLX5_CMD_STAT_BAD_OP_ERR;
	seed("caps-bad-op", DVX_MLX5_QUERY_HCA_CAP_OUT_BYTES, 3, m, 64);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	lf_seed_mode(write_seeds);
	return 0;
}
