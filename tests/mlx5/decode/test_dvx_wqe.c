// SPDX-License-Identifier: MIT
/*
 * The dvx-wqe tool as a user runs it: decode, --cqe, --ring, encode of every kind
 * decoded back, bad input, --help. The tool is $DVX_TOOLS_DIR/dvx-wqe, or
 * ../tools/dvx-wqe next to this binary's directory ($(O)/tests -> $(O)/tools);
 * 'make check' builds the tools before it runs the tests.
 */
#include "../../lib/dvx_test.h"

#include <limits.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dvx/mlx5/wqe.h>

static char tool[PATH_MAX];

struct result {
	int status;		/* exit status, or 128 + signal */
	char out[1 << 17];
	char err[1 << 13];
};

static struct result res;

static void slurp(FILE *f, char *buf, size_t len)
{
	size_t n;

	rewind(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
}

/* run the tool with @args (NULL-terminated), @input on stdin */
static void run_argv(const char *input, const char *const *args)
{
	FILE *in = tmpfile(), *out = tmpfile(), *err = tmpfile();
	const char *argv[40];
	size_t i;
	pid_t pid;
	int st;

	assert_non_null(in);
	assert_non_null(out);
	assert_non_null(err);
	if (input)
		fputs(input, in);
	fflush(in);
	rewind(in);
	argv[0] = tool;
	for (i = 0; args[i]; i++) {
		assert_true(i + 2 < DVX_ARRAY_SIZE(argv));
		argv[i + 1] = args[i];
	}
	argv[i + 1] = NULL;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (dup2(fileno(in), 0) < 0 || dup2(fileno(out), 1) < 0 || dup2(fileno(err), 2) < 0)
			_exit(126);
		execv(tool, (char *const *)argv);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	res.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	slurp(out, res.out, sizeof(res.out));
	slurp(err, res.err, sizeof(res.err));
	fclose(in);
	fclose(out);
	fclose(err);
	if (res.status == 127 || res.status == 126) {
		print_error("could not run %s\n", tool);
		fail();
	}
}

#define RUN(input, ...) run_argv((input), (const char *const[]){ __VA_ARGS__, NULL })

static void expect_status(int want)
{
	if (res.status != want) {
		print_error("exit %d, want %d\nstdout:\n%s\nstderr:\n%s\n", res.status, want,
			    res.out, res.err);
		fail();
	}
}

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

static void assert_has(const char *s, const char *what)
{
	if (!strstr(s, what)) {
		print_error("'%s' not found in:\n%s\n", what, s);
		fail();
	}
}

static int tool_setup(void **state)
{
	(void)state;
	if (access(tool, X_OK)) {
		print_error("%s: not built (make O=... tools; 'make check' builds it first), or "
			    "set DVX_TOOLS_DIR\n", tool);
		return -1;
	}
	return 0;
}

/* ---- decode ---- */

#define EXAMPLE_A \
	"00: 00 00 05 08   # opmod 0 | idx 0x0005 | opcode 0x08\n" \
	"04: 00 01 23 03   # qpn 0x000123 | ds 3\n" \
	"08: 00 00 00 08\n" \
	"0C: 00 00 00 00\n" \
	"10: 00 00 00 00 00 00 10 00\n" \
	"18: 00 00 56 78\n" \
	"1C: 00 00 00 00\n" \
	"20: 00 00 10 00\n" \
	"24: 00 00 12 34\n" \
	"28: 00 00 00 00 00 00 00 40\n"

static void test_decode_example_a(void **state)
{
	(void)state;
	RUN(EXAMPLE_A, "decode");
	expect_status(0);
	assert_string_equal(res.out,
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
	assert_string_equal(res.err, "");

	/* the same as contiguous dwords with 0x prefixes, padded to a whole WQEBB */
	RUN("0x00000508 0x00012303 0x00000008 0x00000000\n"
	    "0x0000000000001000 0x00005678 0x00000000\n"
	    "0x00001000 0x00001234 0x0000000000000040 00000000000000000000000000000000\n",
	    "decode");
	expect_status(0);
	assert_line(res.out, "sge[0].byte_count: 4096");
	assert_string_equal(res.err, "");
}

/* 32 zero bytes, then bytes 32..63 of an error CQE */
#define ERR_CQE(synd, vendor, opcode_qpn, ctr, op_own) \
	"00000000000000000000000000000000 00000000000000000000000000000000\n" \
	"00000000 00000000000000000000000000000000 0000 " vendor " " synd " " \
	opcode_qpn " " ctr " 00 " op_own "\n"

static void test_decode_cqe(void **state)
{
	(void)state;
	RUN(ERR_CQE("13", "88", "08000123", "0005", "d0"), "decode", "--cqe");
	expect_status(0);
	assert_line(res.out, "opcode: REQ_ERR (0x0d)");
	assert_line(res.out, "syndrome: REMOTE_ACCESS_ERR (0x13)");
	assert_line(res.out, "vendor_syndrome: 0x88");
	assert_has(res.out, "\ncause: remote access error: bad rkey");
	assert_line(res.out, "failed_wqe_opcode: RDMA_WRITE (0x08)");
	assert_line(res.out, "failed_wqe_qpn: 0x000123");
	assert_line(res.out, "failed_wqe_index: 5");
	assert_line(res.out, "status: EPERM (-1)");

	/* flush after an earlier error */
	RUN(ERR_CQE("05", "00", "12000456", "0009", "d1"), "decode", "--cqe");
	expect_status(0);
	assert_line(res.out, "syndrome: WR_FLUSH_ERR (0x05)");
	assert_has(res.out, "an earlier WQE on this QP failed");
	assert_line(res.out, "failed_wqe_opcode: ATOMIC_FA (0x12)");

	/* a compressed CQE is called so, and not read as a normal one */
	RUN(ERR_CQE("00", "00", "08000123", "0005", "0c"), "decode", "--cqe");
	expect_status(0);
	assert_line(res.out, "format: compressed (3)");
	assert_has(res.out, "compressed: yes");
	assert_true(strstr(res.out, "qpn:") == NULL);

	/* a successful requester CQE */
	RUN(ERR_CQE("00", "00", "0a000123", "0005", "00"), "decode", "--cqe");
	expect_status(0);
	assert_line(res.out, "opcode: REQ (0x00)");
	assert_line(res.out, "wqe_opcode: SEND (0x0a)");
	assert_line(res.out, "status: ok (0)");

	/* not 64 bytes */
	RUN("00 01 02", "decode", "--cqe");
	expect_status(1);
	assert_has(res.err, "exactly 64 bytes");
}

/* a ring dump of @nwqebb WQEBBs as hex text, 16 bytes a line with offsets */
static void ring_hex(const uint8_t *ring, uint32_t nwqebb, char *out, size_t len)
{
	size_t pos = 0, i;

	for (i = 0; i < nwqebb * 64; i++) {
		if (i % 16 == 0)
			pos += (size_t)snprintf(out + pos, len - pos, "%04zx:", i);
		pos += (size_t)snprintf(out + pos, len - pos, " %02x%s", ring[i],
					i % 16 == 15 ? "\n" : "");
		assert_true(pos < len);
	}
}

static void test_decode_ring_wrapped(void **state)
{
	static uint8_t ring[4 * 64] DVX_ALIGNED(64);
	static char hex[4096];
	struct dvx_mlx5_wq wq;
	char *p;

	(void)state;
	memset(ring, 0, sizeof(ring));
	assert_int_equal(dvx_mlx5_wq_init(&wq, ring, 4, 0x123, 0), 0);
	assert_int_equal(dvx_mlx5_wqe_rdma_write(&wq, 1, 0x08, 0x1000, 0x5678, 0x40, 0x1234, 64),
			 1);
	assert_int_equal(dvx_mlx5_wqe_wait_cq(&wq, 2, 0x08, 0x4a, 5), 1);
	/* 2 WQEBBs at WQEBB 3: its data segment wraps to WQEBB 0 */
	assert_int_equal(dvx_mlx5_wqe_masked_cs64(&wq, 3, 0x08,
						  &(struct dvx_mlx5_raddr){ 0x2000, 0x5678 },
						  &(struct dvx_mlx5_masked_cs){ 1, ~0ull, 2,
										~0ull },
						  0, 0x1234),
			 2);
	ring_hex(ring, 4, hex, sizeof(hex));

	RUN(hex, "decode", "--ring", "4", "--index", "1");
	expect_status(0);
	assert_has(res.out, "--- wqebb 1 ---\nopcode: RDMA_WRITE (0x08)\n");
	assert_has(res.out, "--- wqebb 2 ---\nopcode: WAIT (0x0f)\n");
	assert_has(res.out, "--- wqebb 3 ---\nopcode: ATOMIC_MASKED_CS (0x14)\n");
	assert_true(strstr(res.out, "--- wqebb 0 ---") == NULL);	/* inside the last WQE */
	p = strstr(res.out, "--- wqebb 3 ---");
	assert_line(p, "wqebbs: 2");
	assert_line(p, "wqe_index: 3");
	assert_line(p, "swap: 0x0000000000000002");
	assert_line(p, "compare: 0x0000000000000001");
	assert_line(p, "sge[0].byte_count: 8");
	assert_line(p, "sge[0].lkey: 0x00001234");
	assert_line(res.out, "wait_cqn: 0x00004a");

	/* --index given as a producer counter past the ring: taken modulo 4 */
	RUN(hex, "decode", "--ring=4", "--index=0x10001");
	expect_status(0);
	assert_has(res.out, "--- wqebb 1 ---\nopcode: RDMA_WRITE");

	/* from WQEBB 0 the wrapped tail is not a WQE: reported, stepped over, exit 1 */
	RUN(hex, "decode", "--ring", "4");
	expect_status(1);
	assert_has(res.out, "--- wqebb 0 ---\n");
	assert_has(res.out, "\nerror: ");
	assert_has(res.out, "--- wqebb 1 ---\nopcode: RDMA_WRITE");
	assert_has(res.out, "--- wqebb 3 ---\nopcode: ATOMIC_MASKED_CS");
	assert_has(res.out, "runs on over WQEBB 0");
	assert_has(res.err, "1 malformed WQEBB");

	/* empty WQEBBs are reported as such and are no error */
	memset(ring, 0, sizeof(ring));
	assert_int_equal(dvx_mlx5_wqe_nop(&wq, 2, 0), 1);
	ring_hex(ring, 4, hex, sizeof(hex));
	RUN(hex, "decode", "--ring", "4");
	expect_status(0);
	assert_has(res.out, "--- wqebb 0 ---\nempty: all-zero WQEBB\n--- wqebb 1 ---\nempty");
	assert_has(res.out, "--- wqebb 2 ---\nopcode: NOP (0x00)");

	/* a WQE whose wqe_index does not match its slot is pointed out */
	memset(ring, 0, sizeof(ring));
	assert_int_equal(dvx_mlx5_wqe_nop(&wq, 6, 0), 1);	/* lands in WQEBB 2 */
	memset(ring, 0, 64 * 2);
	ring[2 * 64 + 2] = 9;					/* wqe_index 9 */
	ring_hex(ring, 4, hex, sizeof(hex));
	RUN(hex, "decode", "--ring", "4");
	expect_status(0);
	assert_has(res.out, "note: wqe_index 9 does not belong at WQEBB 2");

	/* wrong sizes */
	RUN(hex, "decode", "--ring", "8");
	expect_status(1);
	assert_has(res.err, "too few bytes");
	RUN(hex, "decode", "--ring", "2");
	expect_status(1);
	assert_has(res.err, "too many bytes");
	RUN(hex, "decode", "--ring", "3");
	expect_status(2);
	assert_has(res.err, "power of two");
}

/* ---- encode, decoded back ---- */

struct encode_case {
	const char *args[28];
	const char *lines[12];
};

static const struct encode_case encode_cases[] = {
	{ { "nop", "--idx", "3", "--qpn", "0x123", "--ce", "error-only" },
	  { "opcode: NOP (0x00)", "wqe_index: 3", "qpn: 0x000123", "ds: 1",
	    "completion: error_only (0)" } },
	{ { "write", "--raddr", "0x1000", "--rkey", "0x5678", "--laddr", "0x40", "--lkey",
	    "0x1234", "--len", "4096", "--idx", "5", "--qpn", "0x123" },
	  { "opcode: RDMA_WRITE (0x08)", "ds: 3", "raddr: 0x0000000000001000",
	    "rkey: 0x00005678", "sge[0].byte_count: 4096", "sge[0].addr: 0x0000000000000040",
	    "completion: always (2)" } },
	{ { "write-imm", "--raddr", "1", "--rkey", "2", "--sge", "0x40:64:7", "--sge",
	    "0x80:32:8", "--imm", "0xdeadbeef", "--fence", "fence", "--solicited" },
	  { "opcode: RDMA_WRITE_IMM (0x09)", "imm: 0xdeadbeef", "sge_count: 2",
	    "sge[1].byte_count: 32", "sge[1].lkey: 0x00000008", "fence: fence (2)",
	    "solicited: 1", "ds: 4" } },
	{ { "read", "--raddr", "0x2000", "--rkey", "9", "--laddr", "0", "--lkey", "3", "--len",
	    "8", "--fence", "strong" },
	  { "opcode: RDMA_READ (0x10)", "fence: strong_ordering (3)", "sge[0].byte_count: 8" } },
	{ { "send", "--laddr", "0x40", "--lkey", "1", "--len", "100", "--ce", "cqe-and-eqe" },
	  { "opcode: SEND (0x0a)", "ds: 2", "sge[0].byte_count: 100",
	    "completion: cqe_and_eqe (3)" } },
	{ { "send-imm", "--sge", "0:1:2", "--imm", "42", "--fence", "initiator-small" },
	  { "opcode: SEND_IMM (0x0b)", "imm: 0x0000002a", "fence: initiator_small (1)" } },
	{ { "write-inline", "--raddr", "0x1000", "--rkey", "0x5678", "--data",
	    "1122334455667788", "--idx", "5", "--qpn", "0x123" },
	  { "opcode: RDMA_WRITE (0x08)", "inline: 1", "inline_len: 8",
	    "inline_data: 1122334455667788", "ds: 3" } },
	{ { "write-imm-inline", "--raddr", "0", "--rkey", "0", "--data",
	    "00112233445566778899aabbccddeeff0011", "--imm", "7" },
	  { "opcode: RDMA_WRITE_IMM (0x09)", "inline_len: 18", "ds: 4", "imm: 0x00000007" } },
	{ { "send-inline", "--data", "" },
	  { "opcode: SEND (0x0a)", "inline: 1", "inline_len: 0", "inline_data: (empty)",
	    "ds: 2" } },
	{ { "send-imm-inline", "--data", "0xcafe", "--imm", "1", "--fence", "4" },
	  { "opcode: SEND_IMM (0x0b)", "inline_data: cafe",
	    "fence: fence_and_initiator_small (4)" } },
	{ { "cas", "--raddr", "8", "--rkey", "1", "--compare", "5", "--swap", "6", "--laddr",
	    "0", "--lkey", "2" },
	  { "opcode: ATOMIC_CS (0x11)", "compare: 0x0000000000000005",
	    "swap: 0x0000000000000006", "atomic_size: 8", "ds: 4" } },
	{ { "faa", "--raddr", "0x1000", "--rkey", "0x5678", "--add", "1", "--laddr", "0",
	    "--lkey", "0xabcd", "--idx", "5", "--qpn", "0x123" },
	  { "opcode: ATOMIC_FA (0x12)", "add: 0x0000000000000001", "sge[0].byte_count: 8",
	    "sge[0].lkey: 0x0000abcd" } },
	{ { "masked-cas32", "--raddr", "4", "--rkey", "1", "--compare", "1", "--swap", "2",
	    "--compare-mask", "0xff", "--swap-mask", "0xff00", "--laddr", "0", "--lkey", "2" },
	  { "opcode: ATOMIC_MASKED_CS (0x14)", "opmod: 0x08", "atomic_size: 4",
	    "compare_mask: 0x000000ff", "swap_mask: 0x0000ff00", "sge[0].byte_count: 4" } },
	{ { "masked-cas64", "--raddr", "8", "--rkey", "1", "--compare", "1", "--swap", "2",
	    "--compare-mask", "0xffffffffffffffff", "--swap-mask", "1", "--laddr", "0",
	    "--lkey", "2", "--idx", "15" },
	  { "opcode: ATOMIC_MASKED_CS (0x14)", "opmod: 0x09", "ds: 5", "wqebbs: 2",
	    "compare_mask: 0xffffffffffffffff", "wqe_index: 15" } },
	{ { "masked-faa32", "--raddr", "4", "--rkey", "1", "--add", "3", "--boundary",
	    "0x80008000", "--laddr", "0", "--lkey", "2" },
	  { "opcode: ATOMIC_MASKED_FA (0x15)", "opmod: 0x08", "add: 0x00000003",
	    "field_boundary: 0x80008000" } },
	{ { "masked-faa64", "--raddr", "8", "--rkey", "1", "--add", "0x100000000", "--laddr",
	    "0", "--lkey", "2" },
	  { "opcode: ATOMIC_MASKED_FA (0x15)", "opmod: 0x09", "add: 0x0000000100000000",
	    "field_boundary: 0x0000000000000000" } },
	{ { "wait", "--cqn", "0x4a", "--max-index", "5", "--idx", "7", "--qpn", "0x234" },
	  { "opcode: WAIT (0x0f)", "wait_on: cq (0)", "wait_max_index: 5",
	    "wait_cqn: 0x00004a", "ds: 2" } },
	{ { "send-en", "--slave-qpn", "0x456", "--max-index", "10" },
	  { "opcode: SEND_EN (0x17)", "slave_qpn: 0x000456", "wait_max_index: 10" } },
	{ { "recv-en", "--slave-qpn", "0x456", "--max-index", "11", "--ce", "first-error" },
	  { "opcode: RECV_EN (0x16)", "slave_qpn: 0x000456", "wait_max_index: 11",
	    "completion: first_error (1)" } },
};

static void test_encode_each_kind(void **state)
{
	static char encoded[1 << 14];
	const char *args[40];
	size_t i, j;

	(void)state;
	for (i = 0; i < DVX_ARRAY_SIZE(encode_cases); i++) {
		const struct encode_case *c = &encode_cases[i];

		args[0] = "encode";
		for (j = 0; j < DVX_ARRAY_SIZE(c->args) && c->args[j]; j++)
			args[j + 1] = c->args[j];
		args[j + 1] = NULL;
		run_argv(NULL, args);
		expect_status(0);
		assert_string_equal(res.err, "");
		assert_true(strncmp(res.out, "0000: ", 6) == 0);
		/* whole WQEBBs, 16 bytes a line */
		assert_int_equal(strlen(res.out) % (4 * 54), 0);
		strcpy(encoded, res.out);
		RUN(encoded, "decode");
		expect_status(0);
		for (j = 0; j < DVX_ARRAY_SIZE(c->lines) && c->lines[j]; j++)
			assert_line(res.out, c->lines[j]);
	}
	/* prm 2.8's example A, byte for byte */
	RUN(NULL, "encode", "write", "--raddr", "0x1000", "--rkey", "0x5678", "--laddr", "0x40",
	    "--lkey", "0x1234", "--len", "4096", "--idx", "5", "--qpn", "0x123");
	expect_status(0);
	assert_has(res.out, "0000: 00 00 05 08 00 01 23 03 00 00 00 08 00 00 00 00\n"
			    "0010: 00 00 00 00 00 00 10 00 00 00 56 78 00 00 00 00\n"
			    "0020: 00 00 10 00 00 00 12 34 00 00 00 00 00 00 00 40\n");
}

/* ---- bad input ---- */

static void expect_fail(int status, const char *msg)
{
	expect_status(status);
	assert_has(res.err, msg);
}

static void test_bad_input(void **state)
{
	(void)state;
	/* undecodable input: exit 1 */
	RUN("00 00 05 0", "decode");
	expect_fail(1, "odd number of hex digits");
	RUN("00 00 05 08 zz", "decode");
	expect_fail(1, "not hex: 'zz'");
	RUN("00 00 05 08", "decode");
	expect_fail(1, "too few bytes");
	RUN("00000508 00012303 00000008 00000000", "decode");	/* ds 3, 16 bytes */
	expect_fail(1, "ds 3 needs 48 bytes, got 16");
	RUN("", "decode");
	expect_fail(1, "no input bytes");
	RUN("00: 00 00 05 08\n08: 00", "decode");
	expect_fail(1, "offset label");
	/* a malformed WQE: its fields and the error, exit 1 */
	RUN("00000502 00012301 00000000 00000000", "decode");
	expect_fail(1, "malformed WQE: unknown opcode");
	assert_line(res.out, "opcode: UNKNOWN (0x02)");
	assert_line(res.out, "error: unknown opcode");

	/* usage errors: exit 2 */
	RUN(NULL, "frobnicate");
	expect_fail(2, "unknown command");
	RUN(NULL, "decode", "--bogus");
	expect_fail(2, "unknown argument");
	RUN(NULL, "decode", "--index", "1");
	expect_fail(2, "--index applies to --ring only");
	RUN(NULL, "decode", "--cqe", "--ring", "4");
	expect_fail(2, "exclude each other");
	RUN(NULL, "decode", "--ring");
	expect_fail(2, "needs a value");
	RUN(NULL, "decode", "--ring", "65536");
	expect_fail(2, "too large");
	RUN(NULL, "encode");
	expect_fail(2, "which KIND");
	RUN(NULL, "encode", "teleport");
	expect_fail(2, "unknown kind 'teleport'");
	RUN(NULL, "encode", "nop", "--colour", "red");
	expect_fail(2, "unknown field '--colour'");
	RUN(NULL, "encode", "nop", "--raddr", "1");
	expect_fail(2, "--raddr does not apply");
	RUN(NULL, "encode", "write", "--raddr", "1", "--rkey", "2");
	expect_fail(2, "missing --laddr --lkey --len");
	RUN(NULL, "encode", "write", "--raddr", "1", "--rkey", "2", "--sge", "1:2:3", "--len",
	    "5");
	expect_fail(2, "not both");
	RUN(NULL, "encode", "faa", "--raddr", "1", "--rkey", "2", "--laddr", "0", "--lkey", "1");
	expect_fail(2, "missing --add");
	RUN(NULL, "encode", "wait", "--cqn", "1");
	expect_fail(2, "missing --max-index");
	RUN(NULL, "encode", "nop", "--qpn", "0x1000000");
	expect_fail(2, "too large");
	RUN(NULL, "encode", "nop", "--idx", "0x10000");
	expect_fail(2, "too large");
	RUN(NULL, "encode", "wait", "--cqn", "0x1000000", "--max-index", "1");
	expect_fail(2, "too large");
	RUN(NULL, "encode", "masked-faa32", "--raddr", "4", "--rkey", "1", "--add",
	    "0x100000000", "--laddr", "0", "--lkey", "2");
	expect_fail(2, "does not fit in 32 bits");
	RUN(NULL, "encode", "write", "--raddr", "1", "--rkey", "2", "--laddr", "0", "--lkey",
	    "1", "--len", "0x80000000");
	expect_fail(2, "too large");
	RUN(NULL, "encode", "nop", "--idx", "five");
	expect_fail(2, "not a number");
	RUN(NULL, "encode", "nop", "--idx", "1", "--idx", "2");
	expect_fail(2, "given twice");
	RUN(NULL, "encode", "nop", "--fence", "sometimes");
	expect_fail(2, "--fence sometimes");
	RUN(NULL, "encode", "nop", "--ce", "7");
	expect_fail(2, "--ce 7");
	RUN(NULL, "encode", "send", "--sge", "1:2");
	expect_fail(2, "ADDR:LEN:LKEY");
	RUN(NULL, "encode", "send-inline", "--data", "abc");
	expect_fail(2, "odd number");
	{
		static char big[2 * 1000 + 1];

		memset(big, 'a', 2 * 1000);
		RUN(NULL, "encode", "write-inline", "--raddr", "1", "--rkey", "1", "--data", big);
		expect_fail(2, "inline limit");
	}
}

static void test_help(void **state)
{
	(void)state;
	RUN(NULL, "--help");
	expect_status(0);
	assert_has(res.out, "usage:");
	assert_has(res.out, "decode");
	assert_has(res.out, "encode");
	RUN(NULL, "decode", "--help");
	expect_status(0);
	assert_has(res.out, "--ring N");
	assert_has(res.out, "--cqe");
	assert_has(res.out, "--index I");
	RUN(NULL, "encode", "--help");
	expect_status(0);
	assert_has(res.out, "masked-cas64");
	assert_has(res.out, "recv-en");
	assert_has(res.out, "--compare-mask");
	assert_has(res.out, "--slave-qpn");
	RUN(NULL, "encode", "faa", "--help");
	expect_status(0);
	assert_has(res.out, "KINDs:");
	/* no arguments: usage on stderr, exit 2 */
	RUN(NULL, "-h");
	expect_status(0);
	run_argv(NULL, (const char *const[]){ NULL });
	expect_status(2);
	assert_has(res.err, "usage:");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_example_a),
		cmocka_unit_test(test_decode_cqe),
		cmocka_unit_test(test_decode_ring_wrapped),
		cmocka_unit_test(test_encode_each_kind),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_help),
	};
	const char *dir = getenv("DVX_TOOLS_DIR");

	(void)argc;
	if (dir && *dir) {
		snprintf(tool, sizeof(tool), "%s/dvx-wqe", dir);
	} else {
		/* $(O)/tests/<this> -> $(O)/tools/dvx-wqe */
		char self[PATH_MAX];
		const char *slash = strrchr(argv[0], '/');

		if (!slash) {
			ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

			self[n > 0 ? n : 0] = '\0';
		} else {
			snprintf(self, sizeof(self), "%s", argv[0]);
		}
		slash = strrchr(self, '/');
		snprintf(tool, sizeof(tool), "%.*s/../tools/dvx-wqe",
			 slash ? (int)(slash - self) : 1, slash ? self : ".");
	}
	return cmocka_run_group_tests_name("decode-dvx-wqe", tests, tool_setup, NULL);
}
