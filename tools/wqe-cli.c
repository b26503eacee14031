// SPDX-License-Identifier: MIT
/*
 * tools/wqe-cli.c - dvx-wqe's command line (tools/wqe-cli.h): the parse of
 * "decode [--cqe | --ring N [--index I]]" and "encode KIND [--field value ...]", the
 * usage texts, and the builder call of an encode line. Errors are written to the
 * stream the caller gives (dvx-wqe: stderr), in the order the arguments are read.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hexparse.h"
#include "wqe-cli.h"

static const char *prog = "dvx-wqe";

#define F_IDX DVX_WQE_F_IDX
#define F_QPN DVX_WQE_F_QPN
#define F_RADDR DVX_WQE_F_RADDR
#define F_RKEY DVX_WQE_F_RKEY
#define F_LADDR DVX_WQE_F_LADDR
#define F_LKEY DVX_WQE_F_LKEY
#define F_LEN DVX_WQE_F_LEN
#define F_SGE DVX_WQE_F_SGE
#define F_IMM DVX_WQE_F_IMM
#define F_DATA DVX_WQE_F_DATA
#define F_ADD DVX_WQE_F_ADD
#define F_COMPARE DVX_WQE_F_COMPARE
#define F_SWAP DVX_WQE_F_SWAP
#define F_COMPARE_MASK DVX_WQE_F_COMPARE_MASK
#define F_SWAP_MASK DVX_WQE_F_SWAP_MASK
#define F_BOUNDARY DVX_WQE_F_BOUNDARY
#define F_CQN DVX_WQE_F_CQN
#define F_MAX_INDEX DVX_WQE_F_MAX_INDEX
#define F_SLAVE_QPN DVX_WQE_F_SLAVE_QPN
#define F_FENCE DVX_WQE_F_FENCE
#define F_CE DVX_WQE_F_CE
#define F_SOLICITED DVX_WQE_F_SOLICITED
#define F_NFIELDS DVX_WQE_F_NFIELDS

void dvx_wqe_usage_main(FILE *f)
{
	fprintf(f,
		"usage: %s decode [--cqe | --ring N [--index I]] < hex\n"
		"       %s encode KIND [--field value ...]\n"
		"       %s {decode|encode} --help\n"
		"       %s --version\n"
		"\n"
		"Decode mlx5 send WQEs, send-ring dumps and CQEs given as hex bytes, one field\n"
		"per line (\"name: value\"), or build any WQE kind with dvx's builders and print\n"
		"its bytes. Exit status: 0 ok, 1 undecodable input, 2 usage error.\n",
		prog, prog, prog, prog);
}

void dvx_wqe_usage_decode(FILE *f)
{
	fprintf(f,
		"usage: %s decode [--cqe | --ring N [--index I]] < hex\n"
		"\n"
		"Reads hex bytes from stdin and prints every field as \"name: value\".\n"
		"  (default)    one WQE: at least ds * 16 bytes, starting with its ctrl segment\n"
		"  --cqe        one 64-byte CQE; for an error CQE also the syndrome, its likely\n"
		"               cause and the failed WQE's opcode, QPN and index\n"
		"  --ring N     a send-ring dump of N WQEBBs (exactly N * 64 bytes; N a power of\n"
		"               two up to %u), walked WQE by WQE; each WQE is headed by\n"
		"               \"--- wqebb K ---\"; an empty (all-zero) or malformed WQEBB is\n"
		"               reported and stepped over by one\n"
		"  --index I    with --ring: the WQEBB (producer index, taken modulo N) at which\n"
		"               the walk starts; the walk covers N WQEBBs, wrapping at the end\n"
		"\n"
		"Input: hex tokens separated by whitespace, ',' or '|'; \"0x\" prefixes and\n"
		"contiguous strings (\"00000508\") are fine; offset labels such as \"10:\" or\n"
		"\"0040:\" are checked against the byte count; '#' starts a comment.\n"
		"Exit status: 0 decoded; 1 bad hex, wrong byte count or a malformed WQE (its\n"
		"fields are still printed, with an \"error:\" line); 2 usage error.\n",
		prog, DVX_WQE_MAX_RING_WQEBB);
}

/* ---- options ---- */

/* "--name value" or "--name=value"; returns the value or NULL (and *i is advanced) */
static const char *opt_value(FILE *err, int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);
	const char *a = argv[*i];

	if (a[n] == '=')
		return a + n + 1;
	if (*i + 1 >= argc) {
		fprintf(err, "%s: %s needs a value\n", prog, name);
		return NULL;
	}
	return argv[++*i];
}

static int opt_is(const char *arg, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(arg, name, n) && (arg[n] == '\0' || arg[n] == '=');
}

static int number_arg(FILE *err, const char *opt, const char *s, uint64_t max, uint64_t *v)
{
	int rc = dvx_parse_u64(s, max, v);

	if (rc == -ERANGE)
		fprintf(err, "%s: %s %s: too large (at most 0x%llx)\n", prog, opt, s,
			(unsigned long long)max);
	else if (rc)
		fprintf(err, "%s: %s %s: not a number (decimal, or hex with 0x)\n", prog,
			opt, s);
	return rc;
}

/* ---- encode ---- */


#define B(f) (1u << (f))

static const struct {
	const char *name;
	uint64_t max;		/* 0: not a plain number */
	const char *help;
} fields[F_NFIELDS] = {
	[F_IDX] = { "--idx", 0xffff, "WQE index (ctrl wqe_index, 16 bits); default 0" },
	[F_QPN] = { "--qpn", 0xffffff, "QP number (24 bits); default 0" },
	[F_RADDR] = { "--raddr", UINT64_MAX, "remote address" },
	[F_RKEY] = { "--rkey", UINT32_MAX, "remote key" },
	[F_LADDR] = { "--laddr", UINT64_MAX, "local address" },
	[F_LKEY] = { "--lkey", UINT32_MAX, "local key" },
	[F_LEN] = { "--len", DVX_MLX5_MAX_BYTE_COUNT, "local length (0: no data segment)" },
	[F_SGE] = { "--sge", 0, "ADDR:LEN:LKEY, one data segment (repeatable)" },
	[F_IMM] = { "--imm", UINT32_MAX, "immediate (32 bits)" },
	[F_DATA] = { "--data", 0, "HEX inline payload (\"\" for none)" },
	[F_ADD] = { "--add", UINT64_MAX, "fetch-add addend" },
	[F_COMPARE] = { "--compare", UINT64_MAX, "compare value" },
	[F_SWAP] = { "--swap", UINT64_MAX, "swap value" },
	[F_COMPARE_MASK] = { "--compare-mask", UINT64_MAX, "masked CAS: bits compared" },
	[F_SWAP_MASK] = { "--swap-mask", UINT64_MAX, "masked CAS: bits swapped" },
	[F_BOUNDARY] = { "--boundary", UINT64_MAX, "masked FA field boundary; default 0" },
	[F_CQN] = { "--cqn", 0xffffff, "WAIT: the CQ to watch (24 bits)" },
	[F_MAX_INDEX] = { "--max-index", UINT32_MAX, "WAIT: CQE index; SEND_EN/RECV_EN: "
						     "slave index" },
	[F_SLAVE_QPN] = { "--slave-qpn", 0xffffff, "SEND_EN/RECV_EN: slave QP (24 bits)" },
	[F_FENCE] = { "--fence", 0, "none|initiator-small|fence|strong|"
				    "fence-and-initiator-small or 0-4; default none" },
	[F_CE] = { "--ce", 0, "error-only|first-error|always|cqe-and-eqe or 0-3; default "
			      "always" },
	[F_SOLICITED] = { "--solicited", 0, "set the solicited-event bit (no value)" },
};

#define COMMON (B(F_IDX) | B(F_QPN) | B(F_FENCE) | B(F_CE) | B(F_SOLICITED))
#define LOCAL (B(F_LADDR) | B(F_LKEY))
#define REMOTE (B(F_RADDR) | B(F_RKEY))
#define SGL (LOCAL | B(F_LEN) | B(F_SGE))	/* either --sge or laddr+lkey+len */

enum kind_shape { K_NOP, K_RDMA, K_SEND, K_RDMA_INL, K_SEND_INL, K_CAS, K_FAA, K_MCS32,
		  K_MCS64, K_MFA32, K_MFA64, K_WAIT, K_EN };

static const struct {
	const char *name;
	enum kind_shape shape;
	uint8_t opcode;
	uint32_t allowed;	/* beyond COMMON */
	uint32_t required;	/* beyond the data source of K_RDMA/K_SEND */
	const char *help;
} kinds[] = {
	{ "nop", K_NOP, DVX_MLX5_OPCODE_NOP, 0, 0, "NOP" },
	{ "write", K_RDMA, DVX_MLX5_OPCODE_RDMA_WRITE, REMOTE | SGL, REMOTE, "RDMA WRITE" },
	{ "write-imm", K_RDMA, DVX_MLX5_OPCODE_RDMA_WRITE_IMM, REMOTE | SGL | B(F_IMM),
	  REMOTE | B(F_IMM), "RDMA WRITE with immediate" },
	{ "read", K_RDMA, DVX_MLX5_OPCODE_RDMA_READ, REMOTE | SGL, REMOTE, "RDMA READ" },
	{ "send", K_SEND, DVX_MLX5_OPCODE_SEND, SGL, 0, "SEND" },
	{ "send-imm", K_SEND, DVX_MLX5_OPCODE_SEND_IMM, SGL | B(F_IMM), B(F_IMM),
	  "SEND with immediate" },
	{ "write-inline", K_RDMA_INL, DVX_MLX5_OPCODE_RDMA_WRITE, REMOTE | B(F_DATA),
	  REMOTE | B(F_DATA), "RDMA WRITE, payload inline" },
	{ "write-imm-inline", K_RDMA_INL, DVX_MLX5_OPCODE_RDMA_WRITE_IMM,
	  REMOTE | B(F_DATA) | B(F_IMM), REMOTE | B(F_DATA) | B(F_IMM),
	  "RDMA WRITE with immediate, payload inline" },
	{ "send-inline", K_SEND_INL, DVX_MLX5_OPCODE_SEND, B(F_DATA), B(F_DATA),
	  "SEND, payload inline" },
	{ "send-imm-inline", K_SEND_INL, DVX_MLX5_OPCODE_SEND_IMM, B(F_DATA) | B(F_IMM),
	  B(F_DATA) | B(F_IMM), "SEND with immediate, payload inline" },
	{ "cas", K_CAS, DVX_MLX5_OPCODE_ATOMIC_CS, REMOTE | LOCAL | B(F_COMPARE) | B(F_SWAP),
	  REMOTE | LOCAL | B(F_COMPARE) | B(F_SWAP), "8-byte compare-and-swap" },
	{ "faa", K_FAA, DVX_MLX5_OPCODE_ATOMIC_FA, REMOTE | LOCAL | B(F_ADD),
	  REMOTE | LOCAL | B(F_ADD), "8-byte fetch-and-add" },
	{ "masked-cas32", K_MCS32, DVX_MLX5_OPCODE_ATOMIC_MASKED_CS,
	  REMOTE | LOCAL | B(F_COMPARE) | B(F_SWAP) | B(F_COMPARE_MASK) | B(F_SWAP_MASK),
	  REMOTE | LOCAL | B(F_COMPARE) | B(F_SWAP) | B(F_COMPARE_MASK) | B(F_SWAP_MASK),
	  "4-byte masked compare-and-swap" },
	{ "masked-cas64", K_MCS64, DVX_MLX5_OPCODE_ATOMIC_MASKED_CS,
	  REMOTE | LOCAL | B(F_COMPARE) | B(F_SWAP) | B(F_COMPARE_MASK) | B(F_SWAP_MASK),
	  REMOTE | LOCAL | B(F_COMPARE) | B(F_SWAP) | B(F_COMPARE_MASK) | B(F_SWAP_MASK),
	  "8-byte masked compare-and-swap (2 WQEBBs)" },
	{ "masked-faa32", K_MFA32, DVX_MLX5_OPCODE_ATOMIC_MASKED_FA,
	  REMOTE | LOCAL | B(F_ADD) | B(F_BOUNDARY), REMOTE | LOCAL | B(F_ADD),
	  "4-byte masked fetch-and-add" },
	{ "masked-faa64", K_MFA64, DVX_MLX5_OPCODE_ATOMIC_MASKED_FA,
	  REMOTE | LOCAL | B(F_ADD) | B(F_BOUNDARY), REMOTE | LOCAL | B(F_ADD),
	  "8-byte masked fetch-and-add" },
	{ "wait", K_WAIT, DVX_MLX5_OPCODE_WAIT, B(F_CQN) | B(F_MAX_INDEX),
	  B(F_CQN) | B(F_MAX_INDEX), "core-direct WAIT on a CQ index" },
	{ "send-en", K_EN, DVX_MLX5_OPCODE_SEND_EN, B(F_SLAVE_QPN) | B(F_MAX_INDEX),
	  B(F_SLAVE_QPN) | B(F_MAX_INDEX), "core-direct SEND_EN" },
	{ "recv-en", K_EN, DVX_MLX5_OPCODE_RECV_EN, B(F_SLAVE_QPN) | B(F_MAX_INDEX),
	  B(F_SLAVE_QPN) | B(F_MAX_INDEX), "core-direct RECV_EN" },
};

void dvx_wqe_usage_encode(FILE *f)
{
	size_t i;

	fprintf(f,
		"usage: %s encode KIND [--field value ...]\n"
		"\n"
		"Builds one WQE with dvx's builders and prints its WQEBBs in hex, 16 bytes per\n"
		"line with offsets (feed it to '%s decode'). Values are decimal or 0x hex;\n"
		"\"--field=value\" works too.\n"
		"\nKINDs:\n", prog, prog);
	for (i = 0; i < DVX_ARRAY_SIZE(kinds); i++)
		fprintf(f, "  %-17s %s\n", kinds[i].name, kinds[i].help);
	fprintf(f, "\nfields:\n");
	for (i = 0; i < F_NFIELDS; i++)
		fprintf(f, "  %-15s %s\n", fields[i].name, fields[i].help);
	fprintf(f,
		"\nRequired: write/read/send and their -imm forms: the data as --sge (up to\n"
		"%u times, %u for send) or as --laddr, --lkey and --len; -imm kinds --imm;\n"
		"the remote kinds --raddr and --rkey; *-inline --data; atomics --laddr and\n"
		"--lkey (the result buffer) and their operands (--compare --swap; --add; the\n"
		"masked CAS both masks); wait --cqn --max-index; send-en/recv-en --slave-qpn\n"
		"--max-index.\n"
		"Operands of the 32-bit kinds must fit in 32 bits.\n"
		"Exit status: 0 built; 2 usage error (unknown kind or field, a missing field,\n"
		"a value too large for its field, a payload above the inline limit).\n",
		DVX_MLX5_MAX_SGE, DVX_MLX5_DECODE_MAX_SGE);
}

/* case-insensitive, '-' == '_' */
static int word_eq(const char *a, const char *b)
{
	for (;; a++, b++) {
		char x = *a == '_' ? '-' : *a, y = *b == '_' ? '-' : *b;

		if (x >= 'A' && x <= 'Z')
			x = (char)(x - 'A' + 'a');
		if (y >= 'A' && y <= 'Z')
			y = (char)(y - 'A' + 'a');
		if (x != y)
			return 0;
		if (!x)
			return 1;
	}
}

static int parse_fence(FILE *err, const char *s, uint8_t *fm)
{
	uint64_t v;
	uint8_t i;

	if (word_eq(s, "strong")) {
		*fm = DVX_MLX5_FM_STRONG_ORDERING;
		return 0;
	}
	for (i = 0; i <= DVX_MLX5_FM_FENCE_AND_INITIATOR_SMALL; i++) {
		if (word_eq(s, dvx_mlx5_fm_name(i))) {
			*fm = i;
			return 0;
		}
	}
	if (!dvx_parse_u64(s, DVX_MLX5_FM_FENCE_AND_INITIATOR_SMALL, &v)) {
		*fm = (uint8_t)v;
		return 0;
	}
	fprintf(err, "%s: --fence %s: expected none, initiator-small, fence, strong, "
		"fence-and-initiator-small or 0-4\n", prog, s);
	return -EINVAL;
}

static int parse_ce(FILE *err, const char *s, uint8_t *ce)
{
	uint64_t v;
	uint8_t i;

	for (i = 0; i <= DVX_MLX5_CE_CQE_AND_EQE; i++) {
		if (word_eq(s, dvx_mlx5_ce_name(i))) {
			*ce = i;
			return 0;
		}
	}
	if (!dvx_parse_u64(s, DVX_MLX5_CE_CQE_AND_EQE, &v)) {
		*ce = (uint8_t)v;
		return 0;
	}
	fprintf(err, "%s: --ce %s: expected error-only, first-error, always, cqe-and-eqe "
		"or 0-3\n", prog, s);
	return -EINVAL;
}

static int parse_sge(FILE *err, const char *s, struct dvx_mlx5_sge *sge)
{
	char buf[128], *len, *lkey;
	uint64_t a, l, k;

	if (strlen(s) >= sizeof(buf))
		goto bad;
	strcpy(buf, s);
	len = strchr(buf, ':');
	if (!len)
		goto bad;
	*len++ = '\0';
	lkey = strchr(len, ':');
	if (!lkey)
		goto bad;
	*lkey++ = '\0';
	if (number_arg(err, "--sge address", buf, UINT64_MAX, &a) ||
	    number_arg(err, "--sge length", len, DVX_MLX5_MAX_BYTE_COUNT, &l) ||
	    number_arg(err, "--sge lkey", lkey, UINT32_MAX, &k))
		return -EINVAL;
	sge->addr = a;
	sge->length = (uint32_t)l;
	sge->lkey = (uint32_t)k;
	return 0;
bad:
	fprintf(err, "%s: --sge %s: expected ADDR:LEN:LKEY\n", prog, s);
	return -EINVAL;
}


static int parse_encode_args(FILE *err, int argc, char **argv, size_t k,
			     struct dvx_wqe_encode_args *a)
{
	int i;

	for (i = 2; i < argc; i++) {
		const char *arg = argv[i], *val;
		int f;

		for (f = 0; f < F_NFIELDS; f++)
			if (opt_is(arg, fields[f].name))
				break;
		if (f == F_NFIELDS) {
			fprintf(err, "%s: encode: unknown field '%s' (see %s encode --help)\n",
				prog, arg, prog);
			return -EINVAL;
		}
		if (!((COMMON | kinds[k].allowed) & B(f))) {
			fprintf(err, "%s: encode %s: %s does not apply to this kind\n", prog,
				kinds[k].name, fields[f].name);
			return -EINVAL;
		}
		if ((a->given & B(f)) && f != F_SGE) {
			fprintf(err, "%s: encode: %s given twice\n", prog, fields[f].name);
			return -EINVAL;
		}
		a->given |= B(f);
		if (f == F_SOLICITED) {
			if (arg[strlen(fields[f].name)] == '=') {
				fprintf(err, "%s: --solicited takes no value\n", prog);
				return -EINVAL;
			}
			a->se = 1;
			continue;
		}
		val = opt_value(err, argc, argv, &i, fields[f].name);
		if (!val)
			return -EINVAL;
		switch (f) {
		case F_FENCE:
			if (parse_fence(err, val, &a->fm))
				return -EINVAL;
			break;
		case F_CE:
			if (parse_ce(err, val, &a->ce))
				return -EINVAL;
			break;
		case F_SGE:
			if (a->nsge >= DVX_MLX5_DECODE_MAX_SGE) {
				fprintf(err, "%s: encode: more than %u --sge\n", prog,
					DVX_MLX5_DECODE_MAX_SGE);
				return -EINVAL;
			}
			if (parse_sge(err, val, &a->sge[a->nsge]))
				return -EINVAL;
			a->nsge++;
			break;
		case F_DATA: {
			char msg[256];
			int rc = dvx_hexparse(val, strlen(val), a->data, sizeof(a->data),
					      &a->data_len, msg, sizeof(msg));

			if (rc) {
				fprintf(err, "%s: --data: %s\n", prog, msg);
				return -EINVAL;
			}
			break;
		}
		default:
			if (number_arg(err, fields[f].name, val, fields[f].max, &a->v[f]))
				return -EINVAL;
			break;
		}
	}
	return 0;
}

static int check_required(FILE *err, size_t k, const struct dvx_wqe_encode_args *a)
{
	uint32_t missing = kinds[k].required & ~a->given;
	int f;

	if (kinds[k].shape == K_RDMA || kinds[k].shape == K_SEND) {
		uint32_t flat = LOCAL | B(F_LEN);

		if ((a->given & B(F_SGE)) && (a->given & flat)) {
			fprintf(err, "%s: encode %s: give the data either as --sge or as "
				"--laddr/--lkey/--len, not both\n", prog, kinds[k].name);
			return -EINVAL;
		}
		if (!(a->given & B(F_SGE)))
			missing |= flat & ~a->given;
	}
	if (!missing)
		return 0;
	fprintf(err, "%s: encode %s: missing", prog, kinds[k].name);
	for (f = 0; f < F_NFIELDS; f++)
		if (missing & B(f))
			fprintf(err, " %s", fields[f].name);
	if (kinds[k].shape == K_RDMA || kinds[k].shape == K_SEND)
		fprintf(err, " (or --sge ADDR:LEN:LKEY)");
	fprintf(err, "\n");
	return -EINVAL;
}

/* 32-bit kinds: every operand must fit */
static int check_32bit(FILE *err, size_t k, const struct dvx_wqe_encode_args *a)
{
	static const int ops[] = { F_ADD, F_COMPARE, F_SWAP, F_COMPARE_MASK, F_SWAP_MASK,
				   F_BOUNDARY };
	size_t i;

	if (kinds[k].shape != K_MCS32 && kinds[k].shape != K_MFA32)
		return 0;
	for (i = 0; i < DVX_ARRAY_SIZE(ops); i++) {
		if (a->v[ops[i]] > UINT32_MAX) {
			fprintf(err, "%s: encode %s: %s 0x%llx does not fit in 32 bits\n", prog,
				kinds[k].name, fields[ops[i]].name,
				(unsigned long long)a->v[ops[i]]);
			return -EINVAL;
		}
	}
	return 0;
}

int dvx_wqe_cli_build(const struct dvx_wqe_cli *c, const struct dvx_mlx5_wq *wq)
{
	const struct dvx_wqe_encode_args *a = &c->enc;
	size_t k = c->kind;
	uint32_t idx = (uint32_t)a->v[F_IDX];
	uint8_t fm_ce_se = (uint8_t)(DVX_MLX5_WQE_CTRL_FM(a->fm) | DVX_MLX5_WQE_CTRL_CE(a->ce) |
				     (a->se ? DVX_MLX5_WQE_CTRL_SOLICITED : 0));
	uint8_t op = kinds[k].opcode;
	uint64_t raddr = a->v[F_RADDR], laddr = a->v[F_LADDR];
	uint32_t rkey = (uint32_t)a->v[F_RKEY], lkey = (uint32_t)a->v[F_LKEY];
	uint32_t imm = (uint32_t)a->v[F_IMM];

	switch (kinds[k].shape) {
	case K_NOP:
		return dvx_mlx5_wqe_nop(wq, idx, fm_ce_se);
	case K_RDMA:
		if (a->nsge)
			return dvx_mlx5_wqe_rdma_sgl(wq, idx, op, fm_ce_se, imm,
						     &(struct dvx_mlx5_raddr){ raddr, rkey },
						     a->sge, a->nsge);
		return dvx_mlx5_wqe_rdma(wq, idx, op, fm_ce_se, imm,
					 &(struct dvx_mlx5_raddr){ raddr, rkey },
					 &(struct dvx_mlx5_sge){ laddr, (uint32_t)a->v[F_LEN],
								 lkey });
	case K_SEND:
		if (a->nsge)
			return dvx_mlx5_wqe_send_sgl(wq, idx, op, fm_ce_se, imm, a->sge, a->nsge);
		if (op == DVX_MLX5_OPCODE_SEND_IMM)
			return dvx_mlx5_wqe_send_imm(wq, idx, fm_ce_se, imm, laddr, lkey,
						     (uint32_t)a->v[F_LEN]);
		return dvx_mlx5_wqe_send(wq, idx, fm_ce_se, laddr, lkey, (uint32_t)a->v[F_LEN]);
	case K_RDMA_INL:
		return dvx_mlx5_wqe_rdma_write_inline(wq, idx, op, fm_ce_se, imm,
						      &(struct dvx_mlx5_raddr){ raddr, rkey },
						      a->data, (uint32_t)a->data_len);
	case K_SEND_INL:
		return dvx_mlx5_wqe_send_inline(wq, idx, op, fm_ce_se, imm, a->data,
						(uint32_t)a->data_len);
	case K_CAS:
		return dvx_mlx5_wqe_atomic_cs(wq, idx, fm_ce_se,
					      &(struct dvx_mlx5_raddr){ raddr, rkey },
					      a->v[F_COMPARE], a->v[F_SWAP], laddr, lkey);
	case K_FAA:
		return dvx_mlx5_wqe_atomic_fa(wq, idx, fm_ce_se, raddr, rkey, a->v[F_ADD], laddr,
					      lkey);
	case K_MCS32:
		return dvx_mlx5_wqe_masked_cs32(wq, idx, fm_ce_se,
						&(struct dvx_mlx5_raddr){ raddr, rkey },
						&(struct dvx_mlx5_masked_cs){
							(uint32_t)a->v[F_COMPARE],
							(uint32_t)a->v[F_COMPARE_MASK],
							(uint32_t)a->v[F_SWAP],
							(uint32_t)a->v[F_SWAP_MASK] },
						laddr, lkey);
	case K_MCS64:
		return dvx_mlx5_wqe_masked_cs64(wq, idx, fm_ce_se,
						&(struct dvx_mlx5_raddr){ raddr, rkey },
						&(struct dvx_mlx5_masked_cs){
							a->v[F_COMPARE], a->v[F_COMPARE_MASK],
							a->v[F_SWAP], a->v[F_SWAP_MASK] },
						laddr, lkey);
	case K_MFA32:
		return dvx_mlx5_wqe_masked_fa32(wq, idx, fm_ce_se,
						&(struct dvx_mlx5_raddr){ raddr, rkey },
						(uint32_t)a->v[F_ADD], (uint32_t)a->v[F_BOUNDARY],
						laddr, lkey);
	case K_MFA64:
		return dvx_mlx5_wqe_masked_fa64(wq, idx, fm_ce_se,
						&(struct dvx_mlx5_raddr){ raddr, rkey },
						a->v[F_ADD], a->v[F_BOUNDARY], laddr, lkey);
	case K_WAIT:
		return dvx_mlx5_wqe_wait_cq(wq, idx, fm_ce_se, (uint32_t)a->v[F_CQN],
					    (uint32_t)a->v[F_MAX_INDEX]);
	case K_EN:
		return dvx_mlx5_wqe_enable(wq, idx, op, fm_ce_se, (uint32_t)a->v[F_SLAVE_QPN],
					   (uint32_t)a->v[F_MAX_INDEX]);
	}
	return -EINVAL;
}

const char *dvx_wqe_kind_name(size_t kind)
{
	return kind < DVX_ARRAY_SIZE(kinds) ? kinds[kind].name : "?";
}

uint8_t dvx_wqe_kind_opcode(size_t kind)
{
	return kind < DVX_ARRAY_SIZE(kinds) ? kinds[kind].opcode : 0;
}

/* ---- the parse ---- */

static enum dvx_wqe_action parse_decode(FILE *err, int argc, char **argv, struct dvx_wqe_cli *c)
{
	int have_index = 0, i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			return DVX_WQE_HELP_DECODE;
		} else if (!strcmp(a, "--cqe")) {
			c->cqe = 1;
		} else if (opt_is(a, "--ring")) {
			v = opt_value(err, argc, argv, &i, "--ring");
			if (!v || number_arg(err, "--ring", v, DVX_WQE_MAX_RING_WQEBB, &c->nwqebb))
				return DVX_WQE_USAGE_ERROR;
			if (!DVX_IS_POW2(c->nwqebb)) {
				fprintf(err, "%s: --ring %s: the number of WQEBBs must be a "
					"power of two\n", prog, v);
				return DVX_WQE_USAGE_ERROR;
			}
			c->ring = 1;
		} else if (opt_is(a, "--index")) {
			v = opt_value(err, argc, argv, &i, "--index");
			if (!v || number_arg(err, "--index", v, UINT32_MAX, &c->index))
				return DVX_WQE_USAGE_ERROR;
			have_index = 1;
		} else {
			fprintf(err, "%s: decode: unknown argument '%s' (see %s decode "
				"--help)\n", prog, a, prog);
			return DVX_WQE_USAGE_ERROR;
		}
	}
	if (c->cqe && c->ring) {
		fprintf(err, "%s: decode: --cqe and --ring exclude each other\n", prog);
		return DVX_WQE_USAGE_ERROR;
	}
	if (have_index && !c->ring) {
		fprintf(err, "%s: decode: --index applies to --ring only\n", prog);
		return DVX_WQE_USAGE_ERROR;
	}
	return DVX_WQE_DECODE;
}

static enum dvx_wqe_action parse_encode(FILE *err, int argc, char **argv, struct dvx_wqe_cli *c)
{
	struct dvx_wqe_encode_args *a = &c->enc;
	size_t k;
	int n;

	if (argc < 2) {
		fprintf(err, "%s: encode: which KIND? (see %s encode --help)\n", prog, prog);
		return DVX_WQE_USAGE_ERROR;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return DVX_WQE_HELP_ENCODE;
	for (k = 0; k < DVX_ARRAY_SIZE(kinds); k++)
		if (word_eq(argv[1], kinds[k].name))
			break;
	if (k == DVX_ARRAY_SIZE(kinds)) {
		fprintf(err, "%s: encode: unknown kind '%s' (see %s encode --help)\n", prog,
			argv[1], prog);
		return DVX_WQE_USAGE_ERROR;
	}
	for (n = 2; n < argc; n++)
		if (!strcmp(argv[n], "--help") || !strcmp(argv[n], "-h"))
			return DVX_WQE_HELP_ENCODE;
	c->kind = k;
	memset(a, 0, sizeof(*a));
	a->ce = DVX_MLX5_CE_ALWAYS;
	if (parse_encode_args(err, argc, argv, k, a) || check_required(err, k, a) ||
	    check_32bit(err, k, a))
		return DVX_WQE_USAGE_ERROR;
	return DVX_WQE_ENCODE;
}

static enum dvx_wqe_action parse(int argc, char **argv, FILE *err, struct dvx_wqe_cli *c)
{
	if (argc < 2) {
		dvx_wqe_usage_main(err);
		return DVX_WQE_USAGE_ERROR;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))
		return DVX_WQE_HELP_MAIN;
	if (!strcmp(argv[1], "--version"))
		return DVX_WQE_VERSION;
	if (!strcmp(argv[1], "decode"))
		return parse_decode(err, argc - 1, argv + 1, c);
	if (!strcmp(argv[1], "encode"))
		return parse_encode(err, argc - 1, argv + 1, c);
	fprintf(err, "%s: unknown command '%s' (decode or encode; see %s --help)\n", prog,
		argv[1], prog);
	return DVX_WQE_USAGE_ERROR;
}

enum dvx_wqe_action dvx_wqe_cli_parse(int argc, char **argv, FILE *err, struct dvx_wqe_cli *c)
{
	memset(c, 0, sizeof(*c));
	c->action = parse(argc, argv, err, c);
	return c->action;
}
