// SPDX-License-Identifier: MIT
/*
 * tools/dvx-wqe.c - decode mlx5 WQEs, ring dumps and CQEs; build any WQE kind.
 *
 *   dvx-wqe decode [--cqe | --ring N [--index I]]  < hex
 *   dvx-wqe encode KIND [--field value ...]
 *
 * Decoding goes through dvx_mlx5_wqe_decode() (which reads the PRM offsets itself),
 * encoding through the builders of dvx/mlx5/wqe.h, so piping one into the other checks
 * both. Exit status: 0 done; 1 input that cannot be decoded (bad hex, too few bytes,
 * a malformed WQE); 2 usage errors (unknown kind or option, a value too large for its
 * field, a missing required field).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <dvx/mlx5/decode.h>

#include "hexparse.h"
#include "tool.h"

#define EXIT_INPUT DVX_EXIT_FAIL
#define EXIT_USAGE DVX_EXIT_USAGE

/* the largest ring --ring accepts: qpc.log_sq_size is at most 15 (prm 1.7) */
#define MAX_RING_WQEBB (1u << DVX_MLX5_LOG_MAX_SQ)
/* the scratch ring a single WQE is decoded or built in: fits the largest WQE (ds 63) */
#define SCRATCH_WQEBB 16u
#define SCRATCH_BYTES (SCRATCH_WQEBB * DVX_MLX5_SEND_WQE_BB)

static const char *prog = "dvx-wqe";

static void usage_main(FILE *f)
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

static void usage_decode(FILE *f)
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
		prog, MAX_RING_WQEBB);
}

/* ---- reading stdin ---- */

static char *read_all(FILE *f, size_t *n)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);

	if (!buf)
		return NULL;
	for (;;) {
		size_t got;

		if (len == cap) {
			char *nb;

			if (cap >= (64u << 20)) {	/* a 32768-WQEBB ring is ~6 MiB of hex */
				free(buf);
				errno = E2BIG;
				return NULL;
			}
			nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				return NULL;
			}
			buf = nb;
			cap *= 2;
		}
		got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		free(buf);
		errno = EIO;
		return NULL;
	}
	*n = len;
	return buf;
}

/* stdin as bytes; on failure prints why and returns NULL */
static uint8_t *read_hex_stdin(size_t *nbytes)
{
	char err[256];
	size_t n;
	char *text = read_all(stdin, &n);
	uint8_t *bytes;
	int rc;

	if (!text) {
		fprintf(stderr, "%s: reading stdin: %s\n", prog, strerror(errno));
		return NULL;
	}
	bytes = malloc(n / 2 + 1);
	if (!bytes) {
		free(text);
		fprintf(stderr, "%s: out of memory\n", prog);
		return NULL;
	}
	rc = dvx_hexparse(text, n, bytes, n / 2 + 1, nbytes, err, sizeof(err));
	free(text);
	if (rc) {
		fprintf(stderr, "%s: bad hex input: %s\n", prog, err);
		free(bytes);
		return NULL;
	}
	return bytes;
}

static void print_text(size_t (*fmt)(const void *, char *, size_t), const void *obj)
{
	size_t need = fmt(obj, NULL, 0);
	char *s = malloc(need + 1);

	if (!s) {
		fprintf(stderr, "%s: out of memory\n", prog);
		exit(EXIT_INPUT);
	}
	fmt(obj, s, need + 1);
	fputs(s, stdout);
	free(s);
}

static size_t fmt_wqe(const void *d, char *buf, size_t len)
{
	return dvx_mlx5_wqe_format((const struct dvx_mlx5_wqe_desc *)d, buf, len);
}

struct cqe_and_err {
	struct dvx_mlx5_cqe_info info;
	int err;
};

static size_t fmt_cqe(const void *p, char *buf, size_t len)
{
	const struct cqe_and_err *c = (const struct cqe_and_err *)p;

	return dvx_mlx5_cqe_format(&c->info, c->err, buf, len);
}

/* ---- decode ---- */

static int decode_one(const uint8_t *bytes, size_t n)
{
	static uint8_t ring[SCRATCH_BYTES] DVX_ALIGNED(64);
	static struct dvx_mlx5_wqe_desc d;
	unsigned ds;
	int rc;

	if (n < DVX_MLX5_DS_BYTES) {
		fprintf(stderr, "%s: too few bytes: a WQE starts with a 16-byte ctrl segment, "
			"got %zu\n", prog, n);
		return EXIT_INPUT;
	}
	if (n > SCRATCH_BYTES) {
		fprintf(stderr, "%s: %zu bytes is more than one WQE (at most %u bytes, ds 63); "
			"for a ring dump use --ring N\n", prog, n, DVX_MLX5_MAX_WQE_BYTES);
		return EXIT_INPUT;
	}
	ds = bytes[7] & 0x3fu;
	if (n < ds * DVX_MLX5_DS_BYTES) {
		fprintf(stderr, "%s: too few bytes: ds %u needs %u bytes, got %zu\n", prog, ds,
			ds * DVX_MLX5_DS_BYTES, n);
		return EXIT_INPUT;
	}
	memset(ring, 0, sizeof(ring));
	memcpy(ring, bytes, n);
	rc = dvx_mlx5_wqe_decode(ring, sizeof(ring), 0, &d);
	print_text(fmt_wqe, &d);
	fflush(stdout);
	if (rc < 0) {
		fprintf(stderr, "%s: malformed WQE: %s\n", prog, dvx_mlx5_wqe_error_str(d.error));
		return EXIT_INPUT;
	}
	if (n > (size_t)rc * DVX_MLX5_SEND_WQE_BB)
		fprintf(stderr, "%s: note: %zu bytes after this WQE's %d WQEBB(s) not decoded "
			"(for several WQEs use --ring N)\n", prog,
			n - (size_t)rc * DVX_MLX5_SEND_WQE_BB, rc);
	return 0;
}

static int decode_cqe(const uint8_t *bytes, size_t n)
{
	struct dvx_mlx5_cqe64 cqe;
	struct cqe_and_err c;

	if (n != DVX_MLX5_CQE_SIZE) {
		fprintf(stderr, "%s: --cqe needs exactly 64 bytes, got %zu%s\n", prog, n,
			n == 128 ? " (of a 128-byte CQE pass the second half)" : "");
		return EXIT_INPUT;
	}
	memcpy(&cqe, bytes, sizeof(cqe));
	memset(&c, 0, sizeof(c));
	c.err = dvx_mlx5_cqe_parse(&cqe, &c.info);
	print_text(fmt_cqe, &c);
	return 0;
}

static int all_zero(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

static int decode_ring(const uint8_t *bytes, size_t n, uint32_t nwqebb, uint32_t start)
{
	static struct dvx_mlx5_wqe_desc d;
	uint32_t ring_bytes = nwqebb * DVX_MLX5_SEND_WQE_BB;
	uint32_t slot = start & (nwqebb - 1), done = 0, nbad = 0;

	if (n != ring_bytes) {
		fprintf(stderr, "%s: %s bytes: a ring of %u WQEBBs is %u bytes, got %zu\n", prog,
			n < ring_bytes ? "too few" : "too many", nwqebb, ring_bytes, n);
		return EXIT_INPUT;
	}
	while (done < nwqebb) {
		uint32_t step = 1;
		int rc;

		printf("--- wqebb %u ---\n", slot);
		if (all_zero(bytes + (size_t)slot * DVX_MLX5_SEND_WQE_BB, DVX_MLX5_SEND_WQE_BB)) {
			printf("empty: all-zero WQEBB\n");
		} else {
			rc = dvx_mlx5_wqe_decode(bytes, ring_bytes, slot, &d);
			print_text(fmt_wqe, &d);
			if (rc < 0) {
				nbad++;
			} else {
				step = (uint32_t)rc;
				if ((d.idx & (nwqebb - 1)) != slot)
					printf("note: wqe_index %u does not belong at WQEBB %u "
					       "(stale WQE, or a dump taken at another index?)\n",
					       d.idx, slot);
				if (done + step > nwqebb)
					printf("note: this WQE runs on over WQEBB %u, where the "
					       "walk started\n", start & (nwqebb - 1));
			}
		}
		done += step;
		slot = (slot + step) & (nwqebb - 1);
	}
	fflush(stdout);
	if (nbad) {
		fprintf(stderr, "%s: %u malformed WQEBB(s) in the ring\n", prog, nbad);
		return EXIT_INPUT;
	}
	return 0;
}

/* "--name value" or "--name=value"; returns the value or NULL (and *i is advanced) */
static const char *opt_value(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);
	const char *a = argv[*i];

	if (a[n] == '=')
		return a + n + 1;
	if (*i + 1 >= argc) {
		fprintf(stderr, "%s: %s needs a value\n", prog, name);
		return NULL;
	}
	return argv[++*i];
}

static int opt_is(const char *arg, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(arg, name, n) && (arg[n] == '\0' || arg[n] == '=');
}

static int number_arg(const char *opt, const char *s, uint64_t max, uint64_t *v)
{
	int rc = dvx_parse_u64(s, max, v);

	if (rc == -ERANGE)
		fprintf(stderr, "%s: %s %s: too large (at most 0x%llx)\n", prog, opt, s,
			(unsigned long long)max);
	else if (rc)
		fprintf(stderr, "%s: %s %s: not a number (decimal, or hex with 0x)\n", prog,
			opt, s);
	return rc;
}

static int cmd_decode(int argc, char **argv)
{
	uint64_t nwqebb = 0, index = 0;
	int cqe = 0, ring = 0, have_index = 0, i, rc;
	uint8_t *bytes;
	size_t n;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage_decode(stdout);
			return 0;
		} else if (!strcmp(a, "--cqe")) {
			cqe = 1;
		} else if (opt_is(a, "--ring")) {
			v = opt_value(argc, argv, &i, "--ring");
			if (!v || number_arg("--ring", v, MAX_RING_WQEBB, &nwqebb))
				return EXIT_USAGE;
			if (!DVX_IS_POW2(nwqebb)) {
				fprintf(stderr, "%s: --ring %s: the number of WQEBBs must be a "
					"power of two\n", prog, v);
				return EXIT_USAGE;
			}
			ring = 1;
		} else if (opt_is(a, "--index")) {
			v = opt_value(argc, argv, &i, "--index");
			if (!v || number_arg("--index", v, UINT32_MAX, &index))
				return EXIT_USAGE;
			have_index = 1;
		} else {
			fprintf(stderr, "%s: decode: unknown argument '%s' (see %s decode "
				"--help)\n", prog, a, prog);
			return EXIT_USAGE;
		}
	}
	if (cqe && ring) {
		fprintf(stderr, "%s: decode: --cqe and --ring exclude each other\n", prog);
		return EXIT_USAGE;
	}
	if (have_index && !ring) {
		fprintf(stderr, "%s: decode: --index applies to --ring only\n", prog);
		return EXIT_USAGE;
	}
	bytes = read_hex_stdin(&n);
	if (!bytes)
		return EXIT_INPUT;
	if (!n) {
		fprintf(stderr, "%s: no input bytes\n", prog);
		rc = EXIT_INPUT;
	} else if (cqe) {
		rc = decode_cqe(bytes, n);
	} else if (ring) {
		rc = decode_ring(bytes, n, (uint32_t)nwqebb, (uint32_t)index);
	} else {
		rc = decode_one(bytes, n);
	}
	free(bytes);
	return rc;
}

/* ---- encode ---- */

enum field {
	F_IDX, F_QPN, F_RADDR, F_RKEY, F_LADDR, F_LKEY, F_LEN, F_SGE, F_IMM, F_DATA, F_ADD,
	F_COMPARE, F_SWAP, F_COMPARE_MASK, F_SWAP_MASK, F_BOUNDARY, F_CQN, F_MAX_INDEX,
	F_SLAVE_QPN, F_FENCE, F_CE, F_SOLICITED, F_NFIELDS
};

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

static void usage_encode(FILE *f)
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

static int parse_fence(const char *s, uint8_t *fm)
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
	fprintf(stderr, "%s: --fence %s: expected none, initiator-small, fence, strong, "
		"fence-and-initiator-small or 0-4\n", prog, s);
	return -EINVAL;
}

static int parse_ce(const char *s, uint8_t *ce)
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
	fprintf(stderr, "%s: --ce %s: expected error-only, first-error, always, cqe-and-eqe "
		"or 0-3\n", prog, s);
	return -EINVAL;
}

static int parse_sge(const char *s, struct dvx_mlx5_sge *sge)
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
	if (number_arg("--sge address", buf, UINT64_MAX, &a) ||
	    number_arg("--sge length", len, DVX_MLX5_MAX_BYTE_COUNT, &l) ||
	    number_arg("--sge lkey", lkey, UINT32_MAX, &k))
		return -EINVAL;
	sge->addr = a;
	sge->length = (uint32_t)l;
	sge->lkey = (uint32_t)k;
	return 0;
bad:
	fprintf(stderr, "%s: --sge %s: expected ADDR:LEN:LKEY\n", prog, s);
	return -EINVAL;
}

struct encode_args {
	uint64_t v[F_NFIELDS];
	uint32_t given;
	uint8_t fm, ce, se;
	struct dvx_mlx5_sge sge[DVX_MLX5_DECODE_MAX_SGE];
	uint32_t nsge;
	uint8_t data[DVX_MLX5_MAX_WQE_BYTES];
	size_t data_len;
};

static int parse_encode_args(int argc, char **argv, size_t k, struct encode_args *a)
{
	int i;

	for (i = 2; i < argc; i++) {
		const char *arg = argv[i], *val;
		int f;

		for (f = 0; f < F_NFIELDS; f++)
			if (opt_is(arg, fields[f].name))
				break;
		if (f == F_NFIELDS) {
			fprintf(stderr, "%s: encode: unknown field '%s' (see %s encode --help)\n",
				prog, arg, prog);
			return -EINVAL;
		}
		if (!((COMMON | kinds[k].allowed) & B(f))) {
			fprintf(stderr, "%s: encode %s: %s does not apply to this kind\n", prog,
				kinds[k].name, fields[f].name);
			return -EINVAL;
		}
		if ((a->given & B(f)) && f != F_SGE) {
			fprintf(stderr, "%s: encode: %s given twice\n", prog, fields[f].name);
			return -EINVAL;
		}
		a->given |= B(f);
		if (f == F_SOLICITED) {
			if (arg[strlen(fields[f].name)] == '=') {
				fprintf(stderr, "%s: --solicited takes no value\n", prog);
				return -EINVAL;
			}
			a->se = 1;
			continue;
		}
		val = opt_value(argc, argv, &i, fields[f].name);
		if (!val)
			return -EINVAL;
		switch (f) {
		case F_FENCE:
			if (parse_fence(val, &a->fm))
				return -EINVAL;
			break;
		case F_CE:
			if (parse_ce(val, &a->ce))
				return -EINVAL;
			break;
		case F_SGE:
			if (a->nsge >= DVX_MLX5_DECODE_MAX_SGE) {
				fprintf(stderr, "%s: encode: more than %u --sge\n", prog,
					DVX_MLX5_DECODE_MAX_SGE);
				return -EINVAL;
			}
			if (parse_sge(val, &a->sge[a->nsge]))
				return -EINVAL;
			a->nsge++;
			break;
		case F_DATA: {
			char err[256];
			int rc = dvx_hexparse(val, strlen(val), a->data, sizeof(a->data),
					      &a->data_len, err, sizeof(err));

			if (rc) {
				fprintf(stderr, "%s: --data: %s\n", prog, err);
				return -EINVAL;
			}
			break;
		}
		default:
			if (number_arg(fields[f].name, val, fields[f].max, &a->v[f]))
				return -EINVAL;
			break;
		}
	}
	return 0;
}

static int check_required(size_t k, const struct encode_args *a)
{
	uint32_t missing = kinds[k].required & ~a->given;
	int f;

	if (kinds[k].shape == K_RDMA || kinds[k].shape == K_SEND) {
		uint32_t flat = LOCAL | B(F_LEN);

		if ((a->given & B(F_SGE)) && (a->given & flat)) {
			fprintf(stderr, "%s: encode %s: give the data either as --sge or as "
				"--laddr/--lkey/--len, not both\n", prog, kinds[k].name);
			return -EINVAL;
		}
		if (!(a->given & B(F_SGE)))
			missing |= flat & ~a->given;
	}
	if (!missing)
		return 0;
	fprintf(stderr, "%s: encode %s: missing", prog, kinds[k].name);
	for (f = 0; f < F_NFIELDS; f++)
		if (missing & B(f))
			fprintf(stderr, " %s", fields[f].name);
	if (kinds[k].shape == K_RDMA || kinds[k].shape == K_SEND)
		fprintf(stderr, " (or --sge ADDR:LEN:LKEY)");
	fprintf(stderr, "\n");
	return -EINVAL;
}

/* 32-bit kinds: every operand must fit */
static int check_32bit(size_t k, const struct encode_args *a)
{
	static const int ops[] = { F_ADD, F_COMPARE, F_SWAP, F_COMPARE_MASK, F_SWAP_MASK,
				   F_BOUNDARY };
	size_t i;

	if (kinds[k].shape != K_MCS32 && kinds[k].shape != K_MFA32)
		return 0;
	for (i = 0; i < DVX_ARRAY_SIZE(ops); i++) {
		if (a->v[ops[i]] > UINT32_MAX) {
			fprintf(stderr, "%s: encode %s: %s 0x%llx does not fit in 32 bits\n", prog,
				kinds[k].name, fields[ops[i]].name,
				(unsigned long long)a->v[ops[i]]);
			return -EINVAL;
		}
	}
	return 0;
}

static int build(size_t k, const struct dvx_mlx5_wq *wq, const struct encode_args *a)
{
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
			return dvx_mlx5_wqe_rdma_sgl(wq, idx, op, fm_ce_se, imm, raddr, rkey,
						     a->sge, a->nsge);
		return dvx_mlx5_wqe_rdma(wq, idx, op, fm_ce_se, imm, raddr, rkey, laddr, lkey,
					 (uint32_t)a->v[F_LEN]);
	case K_SEND:
		if (a->nsge)
			return dvx_mlx5_wqe_send_sgl(wq, idx, op, fm_ce_se, imm, a->sge, a->nsge);
		if (op == DVX_MLX5_OPCODE_SEND_IMM)
			return dvx_mlx5_wqe_send_imm(wq, idx, fm_ce_se, imm, laddr, lkey,
						     (uint32_t)a->v[F_LEN]);
		return dvx_mlx5_wqe_send(wq, idx, fm_ce_se, laddr, lkey, (uint32_t)a->v[F_LEN]);
	case K_RDMA_INL:
		return dvx_mlx5_wqe_rdma_write_inline(wq, idx, op, fm_ce_se, imm, raddr, rkey,
						      a->data, (uint32_t)a->data_len);
	case K_SEND_INL:
		return dvx_mlx5_wqe_send_inline(wq, idx, op, fm_ce_se, imm, a->data,
						(uint32_t)a->data_len);
	case K_CAS:
		return dvx_mlx5_wqe_atomic_cs(wq, idx, fm_ce_se, raddr, rkey, a->v[F_COMPARE],
					      a->v[F_SWAP], laddr, lkey);
	case K_FAA:
		return dvx_mlx5_wqe_atomic_fa(wq, idx, fm_ce_se, raddr, rkey, a->v[F_ADD], laddr,
					      lkey);
	case K_MCS32:
		return dvx_mlx5_wqe_masked_cs32(wq, idx, fm_ce_se, raddr, rkey,
						(uint32_t)a->v[F_COMPARE],
						(uint32_t)a->v[F_COMPARE_MASK],
						(uint32_t)a->v[F_SWAP], (uint32_t)a->v[F_SWAP_MASK],
						laddr, lkey);
	case K_MCS64:
		return dvx_mlx5_wqe_masked_cs64(wq, idx, fm_ce_se, raddr, rkey, a->v[F_COMPARE],
						a->v[F_COMPARE_MASK], a->v[F_SWAP],
						a->v[F_SWAP_MASK], laddr, lkey);
	case K_MFA32:
		return dvx_mlx5_wqe_masked_fa32(wq, idx, fm_ce_se, raddr, rkey,
						(uint32_t)a->v[F_ADD], (uint32_t)a->v[F_BOUNDARY],
						laddr, lkey);
	case K_MFA64:
		return dvx_mlx5_wqe_masked_fa64(wq, idx, fm_ce_se, raddr, rkey, a->v[F_ADD],
						a->v[F_BOUNDARY], laddr, lkey);
	case K_WAIT:
		return dvx_mlx5_wqe_wait_cq(wq, idx, fm_ce_se, (uint32_t)a->v[F_CQN],
					    (uint32_t)a->v[F_MAX_INDEX]);
	case K_EN:
		return dvx_mlx5_wqe_enable(wq, idx, op, fm_ce_se, (uint32_t)a->v[F_SLAVE_QPN],
					   (uint32_t)a->v[F_MAX_INDEX]);
	}
	return -EINVAL;
}

static int cmd_encode(int argc, char **argv)
{
	static uint8_t ring[SCRATCH_BYTES] DVX_ALIGNED(64);
	static struct encode_args a;
	struct dvx_mlx5_wq wq;
	uint32_t i, slot;
	size_t k;
	int n;

	if (argc < 2) {
		fprintf(stderr, "%s: encode: which KIND? (see %s encode --help)\n", prog, prog);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage_encode(stdout);
		return 0;
	}
	for (k = 0; k < DVX_ARRAY_SIZE(kinds); k++)
		if (word_eq(argv[1], kinds[k].name))
			break;
	if (k == DVX_ARRAY_SIZE(kinds)) {
		fprintf(stderr, "%s: encode: unknown kind '%s' (see %s encode --help)\n", prog,
			argv[1], prog);
		return EXIT_USAGE;
	}
	for (n = 2; n < argc; n++) {
		if (!strcmp(argv[n], "--help") || !strcmp(argv[n], "-h")) {
			usage_encode(stdout);
			return 0;
		}
	}
	memset(&a, 0, sizeof(a));
	a.ce = DVX_MLX5_CE_ALWAYS;
	if (parse_encode_args(argc, argv, k, &a) || check_required(k, &a) || check_32bit(k, &a))
		return EXIT_USAGE;
	for (i = 0; i < a.nsge; i++)
		if (!a.sge[i].length)
			fprintf(stderr, "%s: note: --sge %u has length 0; the builders leave such "
				"entries out\n", prog, i);

	memset(ring, 0, sizeof(ring));
	if (dvx_mlx5_wq_init(&wq, ring, SCRATCH_WQEBB, (uint32_t)a.v[F_QPN], DVX_MLX5_MAX_INLINE)) {
		fprintf(stderr, "%s: internal error: scratch ring\n", prog);
		return EXIT_INPUT;
	}
	n = build(k, &wq, &a);
	if (n < 0) {
		if (n == -EMSGSIZE)
			fprintf(stderr, "%s: encode %s: inline payload of %zu bytes is above the "
				"inline limit (%u bytes)\n", prog, kinds[k].name, a.data_len,
				DVX_MLX5_MAX_INLINE);
		else if (n == -E2BIG)
			fprintf(stderr, "%s: encode %s: %u data segments make ds exceed 63\n",
				prog, kinds[k].name, a.nsge);
		else
			fprintf(stderr, "%s: encode %s: the builder refused: %s\n", prog,
				kinds[k].name, strerror(-n));
		return EXIT_USAGE;
	}
	/* print the WQE's WQEBBs from its first byte, unwrapping the scratch ring */
	slot = (uint32_t)a.v[F_IDX] & (SCRATCH_WQEBB - 1);
	for (i = 0; i < (uint32_t)n * DVX_MLX5_SEND_WQE_BB; i++) {
		uint32_t off = (slot * DVX_MLX5_SEND_WQE_BB + i) & (SCRATCH_BYTES - 1);

		if (i % 16 == 0)
			printf("%04x:", i);
		printf(" %02x", ring[off]);
		if (i % 16 == 15)
			printf("\n");
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage_main(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage_main(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		dvx_tool_version(stdout, prog);
		return 0;
	}
	if (!strcmp(argv[1], "decode"))
		return cmd_decode(argc - 1, argv + 1);
	if (!strcmp(argv[1], "encode"))
		return cmd_encode(argc - 1, argv + 1);
	fprintf(stderr, "%s: unknown command '%s' (decode or encode; see %s --help)\n", prog,
		argv[1], prog);
	return EXIT_USAGE;
}
