// SPDX-License-Identifier: MIT
/*
 * tests/fuzz/lf/hex.c - libFuzzer harness: the hex parser (dvx_hexparse()), the number
 * parser (dvx_parse_u64()) and dvx-wqe's command line (dvx_wqe_cli_parse() and the
 * builder call of an encode line, tools/wqe-cli.c).
 *
 * Feeds: input byte 0 picks the target (b % 3):
 *   0  hexparse: byte 1 the output room (0..255 bytes), byte 2 the error buffer's size
 *      (0: NULL), the rest the text (not NUL-terminated; the fuzzer's own buffer, so a
 *      read past its end is an ASan report);
 *   1  parse_u64: bytes 1-8 the maximum, the rest the string;
 *   2  the command line: the rest split at NUL bytes into arguments after "dvx-wqe"
 *      (at most 32), each in a heap block of its own size.
 * Checks:
 *   hexparse: the answer, the byte count and the bytes equal those of a reference
 *   parser written here from the documented syntax (tokens, 0x, labels checked against
 *   the byte count, comments, separators); an -EINVAL message names the bad token's
 *   line and column; -E2BIG leaves exactly the room filled; the error buffer is
 *   NUL-terminated and written only within its size; what parses prints back and parses
 *   to the same bytes;
 *   parse_u64: the answer and value equal an independent reading of the documented rule
 *   (character classes for the syntax, libc strtoull() for the value: decimal or 0x hex,
 *   nothing around it, -ERANGE above the maximum or 64 bits, -EINVAL for
 *   anything that is not a number), the value untouched on error;
 *   command line: the parse reads argv only, is deterministic, writes to its error
 *   stream exactly when it refuses (a whole line), and what it accepts is consistent
 *   (decode: --cqe and --ring exclusive, ring size a power of two within the limit;
 *   encode: a known kind, fields in range); an accepted encode line builds a WQE (or
 *   the builder refuses with -EMSGSIZE / -E2BIG / -EINVAL and writes nothing) that
 *   dvx_mlx5_wqe_decode() reads back with the kind's opcode, the index, QPN and
 *   fence / completion / solicited bits of the line.
 */
#include <ctype.h>

#include <dvx/mlx5/decode.h>

#include "../../../tools/hexparse.h"
#include "../../../tools/wqe-cli.h"
#include "lf.h"

#define MAX_ARGS 32

static int hexv(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* ---- the reference hex parser: the syntax of tools/hexparse.h, token by token ---- */

struct ref {
	int rc;
	size_t nout;
	size_t line, col;	/* of the token that failed (-EINVAL) */
	uint8_t out[256];
};

static int sep(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' ||
	       c == ',' || c == '|';
}

static void ref_hexparse(const char *t, size_t n, size_t max, struct ref *r)
{
	size_t i = 0, line = 1, bol = 0;
	uint64_t first = 0;
	int labelled = 0;

	memset(r, 0, sizeof(*r));
	while (i < n) {
		size_t s, e, k, nd;
		const char *dg;
		int label;

		if (t[i] == '#') {		/* a comment runs to the newline */
			while (i < n && t[i] != '\n')
				i++;
			continue;
		}
		if (sep(t[i])) {
			if (t[i] == '\n') {
				line++;
				bol = i + 1;
			}
			i++;
			continue;
		}
		for (s = e = i; e < n && !sep(t[e]) && t[e] != '#'; e++)
			;
		i = e;
		r->line = line;
		r->col = s - bol + 1;
		label = t[e - 1] == ':';
		dg = t + s;
		nd = e - s - (size_t)label;
		if (nd >= 2 && dg[0] == '0' && (dg[1] == 'x' || dg[1] == 'X')) {
			dg += 2;
			nd -= 2;
		}
		if (!nd) {
			r->rc = -EINVAL;
			return;
		}
		for (k = 0; k < nd; k++) {
			if (hexv(dg[k]) < 0) {
				r->rc = -EINVAL;
				return;
			}
		}
		if (label) {
			uint64_t v = 0;

			if (nd > 16) {
				r->rc = -EINVAL;
				return;
			}
			for (k = 0; k < nd; k++)
				v = v * 16 + (uint64_t)hexv(dg[k]);
			if (!labelled) {
				labelled = 1;
				first = v - r->nout;	/* the offset of byte 0 */
			} else if (v - first != r->nout) {
				r->rc = -EINVAL;
				return;
			}
			continue;
		}
		if (nd % 2) {
			r->rc = -EINVAL;
			return;
		}
		for (k = 0; k < nd; k += 2) {
			if (r->nout == max) {
				r->rc = -E2BIG;
				return;
			}
			r->out[r->nout++] = (uint8_t)(hexv(dg[k]) * 16 + hexv(dg[k + 1]));
		}
	}
}

static void fuzz_hexparse(struct lf_in *in)
{
	size_t max = lf_u8(in), errlen = lf_u8(in), nout = 77, nout2, i, pos = 0;
	const char *text = (const char *)in->p;
	uint8_t *out = malloc(max ? max : 1), *out2;
	char *err = errlen ? malloc(errlen) : NULL, *back;
	struct ref ref;
	int rc;

	LF_CHECK(out && (err || !errlen));
	if (err)
		memset(err, 'X', errlen);
	rc = dvx_hexparse(text, in->n, out, max, &nout, err, errlen);
	ref_hexparse(text, in->n, max, &ref);
	LF_CHECK(rc == ref.rc);
	LF_CHECK(nout == ref.nout && nout <= max);
	LF_CHECK(!memcmp(out, ref.out, nout));
	if (err) {
		LF_CHECK(memchr(err, '\0', errlen) != NULL);
		if (errlen > 1)	/* a one-byte buffer holds only the NUL */
			LF_CHECK((rc == 0) == (err[0] == '\0'));
	}
	if (rc == -EINVAL && err && errlen > 40) {
		char want[64];

		snprintf(want, sizeof(want), "line %zu, column %zu: ", ref.line, ref.col);
		LF_CHECK(!strncmp(err, want, strlen(want)));
	}
	if (rc == -E2BIG)
		LF_CHECK(nout == max);
	if (rc == 0) {
		/* it prints back and parses to the same bytes */
		back = malloc(3 * nout + 1);
		out2 = malloc(nout + 1);
		LF_CHECK(back && out2);
		for (i = 0; i < nout; i++)
			pos += (size_t)snprintf(back + pos, 4, "%02x ", out[i]);
		LF_CHECK(dvx_hexparse(back, pos, out2, nout, &nout2, NULL, 0) == 0);
		LF_CHECK(nout2 == nout && !memcmp(out, out2, nout));
		free(out2);
		free(back);
	}
	free(err);
	free(out);
}

/* ---- parse_u64 against the documented rule ---- */

/*
 * The rule, checked independently of the parser: the syntax by character classes
 * (decimal digits only, or "0x"/"0X" and hex digits only), the value by libc's
 * strtoull() (its ERANGE for more than 64 bits), then the bound.
 */
static int ref_u64(const char *s, uint64_t max, uint64_t *v)
{
	int hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	const char *d = hex ? s + 2 : s;
	unsigned long long x;
	char *end;
	size_t i;

	if (!d[0])
		return -EINVAL;
	for (i = 0; d[i]; i++)
		if (!(hex ? isxdigit((unsigned char)d[i]) : isdigit((unsigned char)d[i])))
			return -EINVAL;
	errno = 0;
	x = strtoull(d, &end, hex ? 16 : 10);
	if (errno == ERANGE || x > max)
		return -ERANGE;
	*v = (uint64_t)x;
	return 0;
}

static void fuzz_u64(struct lf_in *in)
{
	uint64_t max = lf_u64(in), v = 0x1234, w = 0x1234;
	size_t n = in->n;
	char *s = malloc(n + 1);
	int rc, want;

	LF_CHECK(s != NULL);
	lf_bytes(in, s, n);
	s[n] = '\0';	/* a NUL inside ends the string early: fine */
	rc = dvx_parse_u64(s, max, &v);
	want = ref_u64(s, max, &w);
	LF_CHECK(rc == want);
	LF_CHECK(v == w);	/* the value, or untouched on error */
	free(s);
}

/* ---- dvx-wqe's command line ---- */

static char *run_parse(int argc, char **argv, struct dvx_wqe_cli *c, size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);

	LF_CHECK(f != NULL);
	dvx_wqe_cli_parse(argc, argv, f, c);
	LF_CHECK(fclose(f) == 0);
	return text;
}

static void check_encode(const struct dvx_wqe_cli *c)
{
	static uint8_t ring[16 * 64] DVX_ALIGNED(64);
	static struct dvx_mlx5_wqe_desc d;
	const struct dvx_wqe_encode_args *a = &c->enc;
	struct dvx_mlx5_wq wq;
	uint32_t idx = (uint32_t)a->v[DVX_WQE_F_IDX], i;
	uint8_t fm_ce_se;
	int n, r;

	LF_CHECK(strcmp(dvx_wqe_kind_name(c->kind), "?") != 0);
	LF_CHECK(!(a->given & ~((1u << DVX_WQE_F_NFIELDS) - 1)));
	LF_CHECK(a->nsge <= DVX_MLX5_DECODE_MAX_SGE && a->data_len <= sizeof(a->data));
	LF_CHECK(a->fm <= DVX_MLX5_FM_FENCE_AND_INITIATOR_SMALL && a->ce <= DVX_MLX5_CE_CQE_AND_EQE);
	LF_CHECK(a->se <= 1);
	LF_CHECK(idx <= 0xffff && a->v[DVX_WQE_F_QPN] <= 0xffffff);
	LF_CHECK(a->v[DVX_WQE_F_CQN] <= 0xffffff && a->v[DVX_WQE_F_SLAVE_QPN] <= 0xffffff);
	LF_CHECK(a->v[DVX_WQE_F_LEN] <= DVX_MLX5_MAX_BYTE_COUNT);

	memset(ring, 0xc3, sizeof(ring));
	LF_CHECK(dvx_mlx5_wq_init(&wq, ring, 16, (uint32_t)a->v[DVX_WQE_F_QPN],
				  DVX_MLX5_MAX_INLINE) == 0);
	n = dvx_wqe_cli_build(c, &wq);
	if (n < 0) {
		LF_CHECK(n == -EMSGSIZE || n == -E2BIG || n == -EINVAL);
		for (i = 0; i < sizeof(ring); i++)
			LF_CHECK(ring[i] == 0xc3);	/* nothing written on failure */
		return;
	}
	r = dvx_mlx5_wqe_decode(ring, sizeof(ring), idx, &d);
	LF_CHECK(r == n);
	LF_CHECK(d.opcode == dvx_wqe_kind_opcode(c->kind));
	LF_CHECK(d.idx == idx && d.qpn == a->v[DVX_WQE_F_QPN]);
	fm_ce_se = (uint8_t)(DVX_MLX5_WQE_CTRL_FM(a->fm) | DVX_MLX5_WQE_CTRL_CE(a->ce) |
			     (a->se ? DVX_MLX5_WQE_CTRL_SOLICITED : 0));
	LF_CHECK(d.fm_ce_se == fm_ce_se);
}

static void fuzz_cli(struct lf_in *in)
{
	static struct dvx_wqe_cli c, c2;
	char *argv[MAX_ARGS + 2], *copy[MAX_ARGS + 2], *err, *err2;
	size_t elen, elen2;
	int argc = 1, i;

	argv[0] = strdup("dvx-wqe");
	while (in->n && argc <= MAX_ARGS) {
		const uint8_t *z = memchr(in->p, 0, in->n);
		size_t len = z ? (size_t)(z - in->p) : in->n;

		argv[argc] = malloc(len + 1);
		LF_CHECK(argv[argc] != NULL);
		lf_bytes(in, argv[argc], len);
		argv[argc][len] = '\0';
		lf_u8(in);	/* the NUL */
		argc++;
	}
	argv[argc] = NULL;
	for (i = 0; i < argc; i++)
		copy[i] = strdup(argv[i]);

	err = run_parse(argc, argv, &c, &elen);
	LF_CHECK(c.action >= DVX_WQE_USAGE_ERROR && c.action <= DVX_WQE_ENCODE);
	for (i = 0; i < argc; i++)
		LF_CHECK(!strcmp(argv[i], copy[i]));	/* argv is only read */
	/* a message exactly when it refuses, and whole lines */
	LF_CHECK((c.action == DVX_WQE_USAGE_ERROR) == (elen > 0));
	LF_CHECK(!elen || err[elen - 1] == '\n');
	/* the same line parses the same way */
	err2 = run_parse(argc, argv, &c2, &elen2);
	LF_CHECK(elen == elen2 && !memcmp(err, err2, elen));
	LF_CHECK(!memcmp(&c, &c2, sizeof(c)));

	if (c.action == DVX_WQE_DECODE) {
		LF_CHECK(!(c.cqe && c.ring));
		if (c.ring)
			LF_CHECK(c.nwqebb >= 1 && c.nwqebb <= DVX_WQE_MAX_RING_WQEBB &&
				 !(c.nwqebb & (c.nwqebb - 1)) && c.index <= UINT32_MAX);
		else
			LF_CHECK(!c.nwqebb && !c.index);
	}
	if (c.action == DVX_WQE_ENCODE)
		check_encode(&c);
	free(err2);
	free(err);
	for (i = 0; i < argc; i++) {
		free(copy[i]);
		free(argv[i]);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lf_in in = { data, size };

	switch (lf_u8(&in) % 3) {
	case 0:
		fuzz_hexparse(&in);
		break;
	case 1:
		fuzz_u64(&in);
		break;
	default:
		fuzz_cli(&in);
		break;
	}
	return 0;
}

/* ---- seeds: tests/mlx5/decode/test_hexparse.c's dumps, numbers, dvx-wqe command lines ---- */

static void seed_hex(const char *name, const char *text)
{
	uint8_t buf[512];
	size_t n = strlen(text);

	buf[0] = 0;
	buf[1] = 128;
	buf[2] = 100;
	memcpy(buf + 3, text, n);
	lf_seed(name, buf, 3 + n);
}

static void seed_u64(const char *name, uint64_t max, const char *s)
{
	uint8_t buf[64];
	size_t n = strlen(s), i;

	buf[0] = 1;
	for (i = 0; i < 8; i++)
		buf[1 + i] = (uint8_t)(max >> (8 * i));
	memcpy(buf + 9, s, n);
	lf_seed(name, buf, 9 + n);
}

/* @args: the arguments separated by '\n' */
static void seed_cli(const char *name, const char *args)
{
	uint8_t buf[1024];
	size_t n = strlen(args), i;

	buf[0] = 2;
	for (i = 0; i < n; i++)
		buf[1 + i] = args[i] == '\n' ? 0 : (uint8_t)args[i];
	lf_seed(name, buf, 1 + n);
}

static void write_seeds(void)
{
	seed_hex("hex-spaced", "00 00 05 08");
	seed_hex("hex-0x", "0x00 0x00 0x05 0x08 0x00000508 0X0001");
	seed_hex("hex-separators", "  \t00\n\n01\r\n02  00,01, 02|03 | 04 AbCdEf");
	seed_hex("hex-comment", "00 01 # comment 0g zz\n02 00#x\n01");
	seed_hex("hex-labels", "0000: 00112233 44556677 8899aabb ccddeeff\n0010: 00112233");
	seed_hex("hex-labels-ring", "0140: 01 02 03 04\n0144: 05 aa 10: bb");
	seed_hex("hex-labels-pipes", "00: 00 00 05 08 | 04: 00 01 23 03 | 08: 00 00 00 08 | "
				     "0C: 00 00 00 00");
	seed_hex("hex-bad-label", "00: 00 00\n08: 00");
	seed_hex("hex-bad-odd", "00 01\n02 03 0x5");
	seed_hex("hex-wqe-dump", "0000: 00 00 05 08 00 01 23 03 00 00 00 08 00 00 00 00\n"
				 "0010: 00 00 00 00 00 00 10 00 00 00 56 78 00 00 00 00\n"
				 "0020: 00 00 10 00 00 00 12 34 00 00 00 00 00 00 00 40\n");
	seed_u64("u64-dec", UINT64_MAX, "18446744073709551615");
	seed_u64("u64-hex", 0xff, "0XfF");
	seed_u64("u64-hex-max", UINT64_MAX, "0xffffffffffffffff");
	seed_u64("u64-zero", 10, "0");
	seed_cli("cli-help", "--help");
	seed_cli("cli-version", "--version");
	seed_cli("cli-decode-ring", "decode\n--ring\n0x10\n--index=3");
	seed_cli("cli-decode-cqe", "decode\n--cqe");
	seed_cli("cli-encode-write", "encode\nwrite\n--raddr\n0x1000\n--rkey\n0x5678\n--laddr\n0x40\n"
				     "--lkey\n0x1234\n--len\n4096\n--idx\n5\n--qpn\n0x123");
	seed_cli("cli-encode-sge", "encode\nsend-imm\n--sge\n0x40:16:7\n--sge=1:2:3\n--imm\n7\n"
				   "--fence\nstrong\n--ce\nerror-only\n--solicited");
	seed_cli("cli-encode-inline", "encode\nwrite-imm-inline\n--raddr\n1\n--rkey\n2\n--data\n"
				      "11 22 33\n--imm\n9");
	seed_cli("cli-encode-masked", "encode\nmasked-cas64\n--raddr\n1\n--rkey\n2\n--laddr\n3\n"
				      "--lkey\n4\n--compare\n5\n--swap\n6\n--compare-mask\n7\n"
				      "--swap-mask\n8");
	seed_cli("cli-encode-faa32", "encode\nmasked-faa32\n--raddr\n1\n--rkey\n2\n--laddr\n3\n"
				     "--lkey\n4\n--add\n5\n--boundary\n3");
	seed_cli("cli-encode-wait", "encode\nwait\n--cqn\n0x4a\n--max-index\n5");
	seed_cli("cli-encode-recv-en", "encode\nrecv_en\n--slave-qpn\n0x234\n--max-index\n9");
	seed_cli("cli-encode-cas", "encode\ncas\n--raddr\n1\n--rkey\n2\n--laddr\n3\n--lkey\n4\n"
				   "--compare\n5\n--swap\n6\n--fence=fence-and-initiator-small");
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	lf_seed_mode(write_seeds);
	return 0;
}
