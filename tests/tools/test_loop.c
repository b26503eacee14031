// SPDX-License-Identifier: MIT
/*
 * The dvx-loop binary on the software NIC: every row of its table passes (RoCE and IB,
 * with the progress thread and stepped), --trace decodes every executed WQE, a row
 * run with a port down fails (exit 1, the row named) while the rows after it pass
 * again after recovery, usage errors exit 2, an absent --dev device 3, --version
 * prints the version.
 *
 * The measured runs: the -a sweep (a row per power of two, in order), bw and lat rows
 * with sane fields (rates above 0, t_min <= t_typical <= t_p99 <= t_max, the average
 * between min and max), every operation in both modes, -D (the run stops by itself and
 * reports; nothing here is timed), --progress on stderr and never on stdout, --json
 * parsed by a strict JSON parser (below: python is not among CI's packages) with the
 * rows checked, --listen/--connect with the server thread beside the client over TCP
 * on an ephemeral port (the port the listener printed is the one the client reached),
 * a fake server of this test that reads the client's HELLO frame field by field and
 * then refuses it or answers garbage, and the usage errors (exit 2).
 *
 * dvx-loop is found in $DVX_TOOLS_DIR, else in ../tools next to this binary
 * ($(O)/tests/tools-loop-test -> $(O)/tools/dvx-loop); 'make check' builds the tools
 * before it runs the tests.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/dvx_test.h"

#include <dvx/version.h>

static const char *argv0;
static char tools_dir[PATH_MAX];

/* the rows dvx-loop prints, in order: operation, size */
static const char *const rows[][2] = {
	{ "RDMA WRITE ", "8 B" },	{ "RDMA READ ", "8 B" },
	{ "RDMA WRITE ", "4 KiB" },	{ "RDMA READ ", "4 KiB" },
	{ "RDMA WRITE ", "1 MiB" },	{ "RDMA READ ", "1 MiB" },
	{ "RDMA WRITE_IMM ", "4 KiB" },	{ "SEND/RECV (2 SGEs) ", "4 KiB" },
	{ "ATOMIC fetch-add ", "8 B" },	{ "ATOMIC compare-swap ", "8 B" },
	{ "companion counter ", "4x4 KiB" },
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

static int find_tools(void)
{
	return dvx_test_tools_dir(argv0, tools_dir, sizeof(tools_dir));
}

struct run {
	int rc;
	char out[1 << 20];
	char err[65536];
};

static struct run R;

static void drain(int fd, char *buf, size_t n)
{
	size_t len = 0;
	ssize_t r;
	char sink[4096];

	while ((r = read(fd, len + 1 < n ? buf + len : sink,
			 len + 1 < n ? n - 1 - len : sizeof(sink))) > 0)
		if (len + 1 < n)
			len += (size_t)r;
	buf[len] = '\0';
	close(fd);
}

/* run dvx-loop with @args (NULL-terminated, argv[0] excluded) */
static void loop_run(const char *const *args)
{
	char bin[PATH_MAX + 16];
	char *argv[40];
	int po[2], pe[2], status, i;
	pid_t pid;

	if (find_tools()) {
		print_message("cannot locate the tools directory; set DVX_TOOLS_DIR\n");
		skip();
	}
	snprintf(bin, sizeof(bin), "%.*s/dvx-loop", PATH_MAX - 16, tools_dir);
	if (access(bin, X_OK)) {
		print_message("%s not built ('make tools', or set DVX_TOOLS_DIR)\n", bin);
		skip();
	}
	argv[0] = bin;
	for (i = 0; args[i] && i < 38; i++)
		argv[i + 1] = (char *)args[i];
	argv[i + 1] = NULL;
	assert_int_equal(pipe(po), 0);
	assert_int_equal(pipe(pe), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(po[1], 1);
		dup2(pe[1], 2);
		close(po[0]);
		close(pe[0]);
		execv(bin, argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	/* stdout first: stderr is a few lines, the pipe buffer holds them */
	drain(po[0], R.out, sizeof(R.out));
	drain(pe[0], R.err, sizeof(R.err));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	R.rc = WEXITSTATUS(status);
}

/* the table line of row @k, or NULL */
static const char *row_line(unsigned k, char *line, size_t n)
{
	const char *p = R.out;

	while (p && *p) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		if (!strncmp(p, rows[k][0], strlen(rows[k][0])) && len < n) {
			memcpy(line, p, len);
			line[len] = '\0';
			/* operation, then the size column */
			if (!strncmp(line + 23, rows[k][1], strlen(rows[k][1])) &&
			    line[23 + strlen(rows[k][1])] == ' ')
				return line;
		}
		p = e ? e + 1 : NULL;
	}
	return NULL;
}

/* every row present once with @iters and OK, except @fail_row (0-based) FAIL */
static void check_table(const char *iters, int fail_row)
{
	char line[256], want[64];
	unsigned k;

	for (k = 0; k < NROWS; k++) {
		if (!row_line(k, line, sizeof(line)))
			fail_msg("row '%s%s' missing:\n%s", rows[k][0], rows[k][1], R.out);
		snprintf(want, sizeof(want), " %s  %s ", iters, (int)k == fail_row ? "FAIL" : "OK");
		if (!strstr(line, want))
			fail_msg("row '%s' does not say '%s':\n%s", line, want, R.out);
	}
}

static void test_help_usage(void **state)
{
	static const char *const help[] = { "--help", NULL };
	static const char *const version[] = { "--version", NULL };
	static const char *const bad[] = { "--no-such-option", NULL };
	static const char *const iters0[] = { "--iters", "0", NULL };
	static const char *const three[] = { "--dev", "a", "--dev", "b", "--dev", "c", NULL };
	static const char *const mixed[] = { "--dev", "mlx5_0", "--trace", NULL };
	static const char *const absent[] = { "--dev", "dvx_no_such_device", "--iters", "1",
					      NULL };

	(void)state;
	loop_run(help);
	assert_int_equal(R.rc, 0);
	assert_non_null(strstr(R.out, "usage: dvx-loop"));
	loop_run(version);
	assert_int_equal(R.rc, 0);
	assert_non_null(strstr(R.out, "(dvx) " DVX_VERSION));
	loop_run(bad);
	assert_int_equal(R.rc, 2);
	assert_non_null(strstr(R.err, "unknown argument"));
	loop_run(iters0);
	assert_int_equal(R.rc, 2);
	loop_run(three);
	assert_int_equal(R.rc, 2);
	loop_run(mixed);
	assert_int_equal(R.rc, 2);
	/* no such device, whether or not this host has RDMA devices: 3, nothing found */
	loop_run(absent);
	assert_int_equal(R.rc, 3);
	assert_null(strstr(R.out, " OK "));
}

static void test_sim_roce(void **state)
{
	static const char *const args[] = { "--iters", "20", NULL };

	(void)state;
	loop_run(args);
	if (R.rc != 0)
		fail_msg("exit %d\nstdout:\n%s\nstderr:\n%s", R.rc, R.out, R.err);
	check_table("20", -1);
	assert_non_null(strstr(R.out, "RoCE v2"));
	assert_non_null(strstr(R.out, "all 11 rows passed"));
	assert_string_equal(R.err, "");
}

static void test_sim_ib_stepped(void **state)
{
	static const char *const args[] = { "--ib", "--no-thread", "--iters", "7", NULL };

	(void)state;
	loop_run(args);
	if (R.rc != 0)
		fail_msg("exit %d\nstdout:\n%s\nstderr:\n%s", R.rc, R.out, R.err);
	check_table("7", -1);
	assert_non_null(strstr(R.out, "InfiniBand"));
}

static void test_sim_trace(void **state)
{
	static const char *const args[] = { "--trace", "--iters", "1", NULL };
	static const char *const want[] = {
		"opcode: RDMA_WRITE (0x08)", "opcode: RDMA_READ (0x10)",
		"opcode: RDMA_WRITE_IMM (0x09)", "opcode: SEND (0x0a)",
		"opcode: ATOMIC_FA (0x12)", "opcode: ATOMIC_CS (0x11)", "opcode: WAIT (0x0f)",
		"opcode: RESP_WR_IMM", "opcode: RESP_SEND", "opcode: REQ (0x00)",
		" WQEs the decoder refused",
	};
	size_t k;

	(void)state;
	loop_run(args);
	if (R.rc != 0)
		fail_msg("exit %d\nstdout:\n%s\nstderr:\n%s", R.rc, R.out, R.err);
	check_table("1", -1);
	for (k = 0; k < sizeof(want) / sizeof(want[0]); k++)
		if (!strstr(R.out, want[k]))
			fail_msg("trace lacks '%s'", want[k]);
	/* 6 WRITE/READ, WRITE_IMM, SEND, 3 atomics, WAIT + FA and 4 batch WRITEs */
	assert_non_null(strstr(R.out, "trace: 17 WQEs, 18 CQEs"));
	assert_non_null(strstr(R.out, ", 0 WQEs the decoder refused"));
}

/* the ranks as two processes on the software NIC's wire (--procs 2) */
static void test_procs(void **state)
{
	static const char *const args[] = { "--procs", "2", "--iters", "5", NULL };
	static const char *const ib[] = { "--procs", "2", "--ib", "--iters", "3", NULL };
	static const char *const three[] = { "--procs", "3", NULL };
	static const char *const bw[] = { "--procs", "2", "--bw", NULL };
	static const char *const wire[] = { "--procs", "2", "--wire", "sideways:x", NULL };
	char line[256];
	unsigned k;

	(void)state;
	loop_run(args);
	if (R.rc != 0)
		fail_msg("exit %d\nstdout:\n%s\nstderr:\n%s", R.rc, R.out, R.err);
	assert_non_null(strstr(R.out, "2 ranks as processes (sim_0 -> sim_1, over the wire)"));
	assert_non_null(strstr(R.out, "all 11 rows passed"));
	for (k = 0; k + 1 < NROWS; k++) {
		if (!row_line(k, line, sizeof(line)))
			fail_msg("row '%s%s' missing:\n%s", rows[k][0], rows[k][1], R.out);
		if (!strstr(line, " 5  OK "))
			fail_msg("row '%s':\n%s", line, R.out);
	}
	/* the companion (the last row) is one process's: skipped, said why */
	assert_non_null(strstr(R.out, "companion counter      -               5  SKIP"));
	assert_non_null(strstr(R.out, "local to one process"));
	loop_run(ib);
	if (R.rc != 0)
		fail_msg("exit %d\nstdout:\n%s\nstderr:\n%s", R.rc, R.out, R.err);
	loop_run(three);
	assert_int_equal(R.rc, 2);
	loop_run(bw);
	assert_int_equal(R.rc, 2);
	loop_run(wire);	/* a --wire address that is none: the set-up fails, no hang */
	assert_int_equal(R.rc, 1);
}

static void test_sim_fault(void **state)
{
	static const char *const args[] = { "--fault-row", "2", "--iters", "3", NULL };

	(void)state;
	loop_run(args);
	assert_int_equal(R.rc, 1);
	check_table("3", 1);
	assert_non_null(strstr(R.out, "TRANSPORT_RETRY_EXC_ERR"));
	assert_non_null(strstr(R.err, "1 of 11 rows FAILED: [RDMA READ 8 B]"));
}

/* ---- a strict JSON parser (RFC 8259), enough to check dvx-loop's --json ---- */

enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jnode {
	int type;
	double num;
	char str[256];		/* J_STR: the value, cut to fit */
	char key[64];		/* a member of an object: its name */
	int first, next;	/* children (J_ARR, J_OBJ), the next sibling; -1 none */
	int count;
};

static struct jnode jpool[8192];
static int jcount;
static const char *jp;

static void jws(void)
{
	while (*jp == ' ' || *jp == '\t' || *jp == '\n' || *jp == '\r')
		jp++;
}

static int jnew(int type)
{
	if (jcount >= (int)(sizeof(jpool) / sizeof(jpool[0])))
		return -1;
	memset(&jpool[jcount], 0, sizeof(jpool[jcount]));
	jpool[jcount].type = type;
	jpool[jcount].first = jpool[jcount].next = -1;
	return jcount++;
}

/* a string at jp (after its opening quote) into @out; 0 or -1 */
static int jstring(char *out, size_t n)
{
	size_t len = 0;
	char c;
	int k;

	for (;;) {
		c = *jp++;
		if (c == '"')
			break;
		if ((unsigned char)c < 0x20)
			return -1;	/* control characters must be escaped; also the end */
		if (c == '\\') {
			c = *jp++;
			switch (c) {
			case '"': case '\\': case '/': break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'n': c = '\n'; break;
			case 'r': c = '\r'; break;
			case 't': c = '\t'; break;
			case 'u':
				for (k = 0; k < 4; k++)
					if (!isxdigit((unsigned char)jp[k]))
						return -1;
				jp += 4;
				c = '?';
				break;
			default:
				return -1;
			}
		}
		if (len + 1 < n)
			out[len++] = c;
	}
	out[len] = '\0';
	return 0;
}

static int jvalue(void);

static int jnumber(void)
{
	const char *s = jp;
	char *end;
	int v;

	if (*jp == '-')
		jp++;
	if (*jp == '0')
		jp++;
	else if (*jp >= '1' && *jp <= '9')
		while (isdigit((unsigned char)*jp))
			jp++;
	else
		return -1;
	if (*jp == '.') {
		jp++;
		if (!isdigit((unsigned char)*jp))
			return -1;
		while (isdigit((unsigned char)*jp))
			jp++;
	}
	if (*jp == 'e' || *jp == 'E') {
		jp++;
		if (*jp == '+' || *jp == '-')
			jp++;
		if (!isdigit((unsigned char)*jp))
			return -1;
		while (isdigit((unsigned char)*jp))
			jp++;
	}
	v = jnew(J_NUM);
	if (v < 0)
		return -1;
	jpool[v].num = strtod(s, &end);
	return end == jp ? v : -1;
}

/* the members of an array or object at jp (after its opening bracket) */
static int jcontainer(int obj)
{
	int v = jnew(obj ? J_OBJ : J_ARR), last = -1, kid;
	char key[64];

	if (v < 0)
		return -1;
	jws();
	if (*jp == (obj ? '}' : ']')) {
		jp++;
		return v;
	}
	for (;;) {
		jws();
		if (obj) {
			if (*jp++ != '"' || jstring(key, sizeof(key)))
				return -1;
			jws();
			if (*jp++ != ':')
				return -1;
		}
		kid = jvalue();
		if (kid < 0)
			return -1;
		if (obj)
			snprintf(jpool[kid].key, sizeof(jpool[kid].key), "%s", key);
		if (last < 0)
			jpool[v].first = kid;
		else
			jpool[last].next = kid;
		last = kid;
		jpool[v].count++;
		jws();
		if (*jp == ',') {
			jp++;
			continue;
		}
		if (*jp++ != (obj ? '}' : ']'))
			return -1;
		return v;
	}
}

static int jvalue(void)
{
	int v;

	jws();
	switch (*jp) {
	case '{':
		jp++;
		return jcontainer(1);
	case '[':
		jp++;
		return jcontainer(0);
	case '"':
		jp++;
		v = jnew(J_STR);
		return v < 0 || jstring(jpool[v].str, sizeof(jpool[v].str)) ? -1 : v;
	case 't':
	case 'f':
		v = jnew(J_BOOL);
		if (!strncmp(jp, "true", 4))
			jp += 4;
		else if (!strncmp(jp, "false", 5))
			jp += 5;
		else
			return -1;
		return v;
	case 'n':
		if (strncmp(jp, "null", 4))
			return -1;
		jp += 4;
		return jnew(J_NULL);
	default:
		return jnumber();
	}
}

/* the whole text is one JSON value (whitespace around it allowed); its node or -1 */
static int json_parse(const char *text)
{
	int v;

	jcount = 0;
	jp = text;
	v = jvalue();
	if (v < 0)
		return -1;
	jws();
	return *jp ? -1 : v;
}

static int jget(int obj, const char *key)
{
	int k;

	assert_int_equal(jpool[obj].type, J_OBJ);
	for (k = jpool[obj].first; k >= 0; k = jpool[k].next)
		if (!strcmp(jpool[k].key, key))
			return k;
	fail_msg("JSON object lacks \"%s\"", key);
	return -1;
}

static double jnum(int obj, const char *key)
{
	int k = jget(obj, key);

	if (jpool[k].type != J_NUM)
		fail_msg("JSON \"%s\" is not a number", key);
	return jpool[k].num;
}

static const char *jstr(int obj, const char *key)
{
	int k = jget(obj, key);

	if (jpool[k].type != J_STR)
		fail_msg("JSON \"%s\" is not a string", key);
	return jpool[k].str;
}

static int jkid(int arr, int i)
{
	int k = jpool[arr].first;

	while (i-- > 0 && k >= 0)
		k = jpool[k].next;
	assert_true(k >= 0);
	return k;
}

/* the parser itself: what it must take and what it must refuse */
static void test_json_parser(void **state)
{
	static const char *const good[] = {
		"{}", "[]", " {\"a\":[1,-2.5e3,0.25,true,false,null,\"x\\\"\\u00e9\"]} ",
		"0", "\"\"", "[{\"a\":{}}]",
	};
	static const char *const bad[] = {
		"", "{", "{\"a\":1,}", "[1,]", "{a:1}", "01", "1.", ".5", "NaN", "inf",
		"[1] [2]", "{\"a\":1}x", "\"\\x\"", "\"a\nb\"", "{\"a\" 1}", "tru", "-",
	};
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(good) / sizeof(good[0]); k++)
		if (json_parse(good[k]) < 0)
			fail_msg("refused valid JSON: %s", good[k]);
	for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++)
		if (json_parse(bad[k]) >= 0)
			fail_msg("took invalid JSON: %s", bad[k]);
}

/* ---- the measured runs ---- */

static void run_ok(const char *const *args)
{
	loop_run(args);
	if (R.rc != 0)
		fail_msg("exit %d\nstdout:\n%s\nstderr:\n%s", R.rc, R.out, R.err);
}

/* the table jrows of a measured run: lines that start with a size; up to @max */
static int perf_rows(char lines[][256], int max)
{
	const char *p = R.out;
	int n = 0;

	while (p && *p) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		const char *q = p;

		while (*q == ' ')
			q++;
		if (isdigit((unsigned char)*q) && len < 256 && n < max) {
			memcpy(lines[n], p, len);
			lines[n][len] = '\0';
			n++;
		}
		p = e ? e + 1 : NULL;
	}
	return n;
}

/* a bw row: bytes, iterations, seconds, MB/s, Mpps, result */
static void check_bw_row(const char *line, unsigned bytes, unsigned long long iters)
{
	unsigned b;
	unsigned long long it;
	double secs, mbps, mpps;
	char res[16];

	if (sscanf(line, "%u %llu %lf %lf %lf %15s", &b, &it, &secs, &mbps, &mpps, res) != 6)
		fail_msg("not a bw row: '%s'", line);
	if (b != bytes || (iters && it != iters) || !it || strcmp(res, "OK") ||
	    secs < 0 || mbps < 0 || mpps < 0)
		fail_msg("bw row '%s': expected %u bytes, %llu iterations, OK", line, bytes, iters);
}

/* a lat row: bytes, iterations, min, typical, p99, max, avg, result */
static void check_lat_row(const char *line, unsigned bytes, unsigned long long iters)
{
	unsigned b;
	unsigned long long it;
	double mn, typ, p99, mx, avg;
	char res[16];

	if (sscanf(line, "%u %llu %lf %lf %lf %lf %lf %15s", &b, &it, &mn, &typ, &p99, &mx,
		   &avg, res) != 8)
		fail_msg("not a lat row: '%s'", line);
	if (b != bytes || (iters && it != iters) || !it || strcmp(res, "OK"))
		fail_msg("lat row '%s': expected %u bytes, %llu iterations, OK", line, bytes,
			 iters);
	/* printed with two decimals: the order survives the rounding */
	if (!(mn <= typ && typ <= p99 && p99 <= mx && mn <= avg && avg <= mx && mx > 0))
		fail_msg("lat row '%s': not min <= typical <= p99 <= max, min <= avg <= max", line);
}

static void test_perf_sweep_bw(void **state)
{
	static const char *const args[] = { "--bw", "-a", "-s", "64K", "-n", "20", NULL };
	char lines[40][256];
	unsigned k, b;

	(void)state;
	run_ok(args);
	assert_int_equal(perf_rows(lines, 40), 16);		/* 2 ... 65536 */
	for (k = 0, b = 2; k < 16; k++, b *= 2)
		check_bw_row(lines[k], b, 20);
	assert_non_null(strstr(R.out, "dvx-loop: bw, RDMA WRITE, software NIC"));
	assert_non_null(strstr(R.out, "tx depth 128, cq-mod 16, 20 iterations per size"));
	assert_non_null(strstr(R.out, "every size passed (16 rows)"));
	assert_string_equal(R.err, "");		/* stderr is no terminal: no progress */
}

static void test_perf_sweep_lat(void **state)
{
	static const char *const args[] = { "--lat", "--op", "read", "-a", "-s", "1024",
					    "-n", "30", NULL };
	static const char *const def[] = { "--lat", "-n", "25", NULL };
	char lines[40][256];
	unsigned k, b;

	(void)state;
	run_ok(args);
	assert_int_equal(perf_rows(lines, 40), 10);		/* 2 ... 1024 */
	for (k = 0, b = 2; k < 10; k++, b *= 2)
		check_lat_row(lines[k], b, 30);
	assert_non_null(strstr(R.out, "dvx-loop: lat, RDMA READ, "));
	assert_non_null(strstr(R.out, "one operation in flight"));
	/* --lat alone: 2 bytes, as ib_write_lat */
	run_ok(def);
	assert_int_equal(perf_rows(lines, 40), 1);
	check_lat_row(lines[0], 2, 25);
}

/* every operation, bw and lat, with the progress thread and stepped */
static void test_perf_ops(void **state)
{
	static const char *const opn[] = { "write", "write_imm", "read", "send", "fetch_add",
					   "cmp_swap" };
	static const char *const title[] = { "RDMA WRITE,", "RDMA WRITE_IMM,", "RDMA READ,",
					     "SEND,", "ATOMIC fetch-add,",
					     "ATOMIC compare-swap," };
	char lines[4][256];
	size_t k;
	int stepped;

	(void)state;
	for (k = 0; k < sizeof(opn) / sizeof(opn[0]); k++) {
		int atomic = k >= 4;
		unsigned bytes = atomic ? 8 : 4096;

		for (stepped = 0; stepped < 2; stepped++) {
			const char *bw[16] = { "--bw", "--op", opn[k], "-n", "300", "-t", "32",
					       "--cq-mod", "5" };
			const char *lat[16] = { "--lat", "--op", opn[k], "-n", "40" };
			int nb = 9, nl = 5;

			if (!atomic) {
				bw[nb++] = "-s";
				bw[nb++] = "4096";
				lat[nl++] = "-s";
				lat[nl++] = "4096";
			}
			if (stepped) {
				bw[nb++] = "--no-thread";
				lat[nl++] = "--no-thread";
			}
			run_ok(bw);
			assert_int_equal(perf_rows(lines, 4), 1);
			check_bw_row(lines[0], bytes, 300);
			assert_non_null(strstr(R.out, title[k]));
			run_ok(lat);
			assert_int_equal(perf_rows(lines, 4), 1);
			check_lat_row(lines[0], bytes, 40);
		}
	}
}

/* -D: each size runs until its time is up, then reports; nothing here is timed */
static void test_perf_duration(void **state)
{
	static const char *const bw[] = { "--bw", "-D", "1", "-s", "4096", "--progress",
					  NULL };
	static const char *const lat[] = { "--lat", "-D", "1", "--op", "send", "--json",
					   "--progress", NULL };
	char lines[4][256];
	int root, jrows, row;

	(void)state;
	run_ok(bw);
	assert_int_equal(perf_rows(lines, 4), 1);
	check_bw_row(lines[0], 4096, 0);
	assert_non_null(strstr(R.out, "1 s per size"));
	/* the progress line: after a second, on stderr, never on stdout */
	assert_non_null(strstr(R.err, "dvx-loop: write 4096 B: "));
	assert_non_null(strstr(R.err, " operations, "));
	assert_null(strstr(R.out, " operations, "));

	run_ok(lat);
	root = json_parse(R.out);
	if (root < 0)
		fail_msg("not JSON:\n%s", R.out);
	assert_int_equal(jpool[jget(root, "iters")].type, J_NULL);
	assert_int_equal((int)jnum(root, "duration_s"), 1);
	jrows = jget(root, "rows");
	assert_int_equal(jpool[jrows].count, 1);
	row = jkid(jrows, 0);
	assert_true(jnum(row, "iters") >= 1);
	assert_string_equal(jstr(row, "result"), "OK");
	assert_non_null(strstr(R.err, "dvx-loop: send 2 B: "));
	assert_non_null(strstr(R.err, " us average"));
}

/* a bw or lat object: its fields and jrows */
static int check_perf_json(const char *mode, const char *op, const char *transport,
			   unsigned first, unsigned nrows, unsigned long long iters)
{
	int root = json_parse(R.out), jrows, row;
	unsigned k, b;

	if (root < 0)
		fail_msg("stdout is not one JSON value:\n%s", R.out);
	assert_string_equal(jstr(root, "tool"), "dvx-loop");
	assert_string_equal(jstr(root, "version"), DVX_VERSION);
	assert_string_equal(jstr(root, "role"), "client");
	assert_string_equal(jstr(root, "mode"), mode);
	assert_string_equal(jstr(root, "op"), op);
	assert_string_equal(jstr(root, "backend"), "software NIC");
	assert_string_equal(jstr(root, "transport"), transport);
	assert_string_equal(jstr(root, "result"), "OK");
	assert_true(jnum(root, "mtu") == 4096);
	assert_true(jnum(root, "iters") == (double)iters);
	assert_int_equal(jpool[jget(root, "devices")].type, J_ARR);
	jrows = jget(root, "rows");
	assert_int_equal(jpool[jrows].type, J_ARR);
	assert_int_equal(jpool[jrows].count, (int)nrows);
	for (k = 0, b = first; k < nrows; k++, b *= 2) {
		row = jkid(jrows, (int)k);
		assert_true(jnum(row, "bytes") == b);
		assert_true(jnum(row, "iters") == (double)iters);
		assert_string_equal(jstr(row, "result"), "OK");
		if (!strcmp(mode, "bw")) {
			assert_true(jnum(row, "seconds") > 0);
			assert_true(jnum(row, "mb_per_s") > 0);
			assert_true(jnum(row, "mpps") > 0);
			assert_true(fabs(jnum(row, "mb_per_s") - jnum(row, "mpps") * b) <=
				    1e-3 * jnum(row, "mb_per_s"));
		} else {
			double mn = jnum(row, "t_min_us"), typ = jnum(row, "t_typical_us");
			double p99 = jnum(row, "t_p99_us"), mx = jnum(row, "t_max_us");
			double avg = jnum(row, "t_avg_us");

			assert_true(mn > 0 && mn <= typ && typ <= p99 && p99 <= mx);
			assert_true(mn <= avg && avg <= mx);
		}
	}
	return root;
}

static void test_perf_json(void **state)
{
	static const char *const bw[] = { "--bw", "-a", "-s", "1K", "-n", "10", "--json",
					  NULL };
	static const char *const lat[] = { "--lat", "--op", "write_imm", "-s", "64", "-n",
					   "20", "--json", NULL };
	static const char *const chk[] = { "--json", "--iters", "2", NULL };
	int root, jrows, row, k;

	(void)state;
	run_ok(bw);
	root = check_perf_json("bw", "write", "in-process", 2, 10, 10);
	assert_true(jnum(root, "tx_depth") == 128);
	assert_true(jnum(root, "cq_mod") == 16);
	assert_string_equal(R.err, "");
	run_ok(lat);
	check_perf_json("lat", "write_imm", "in-process", 64, 1, 20);

	/* the check table as JSON: the same 11 jrows */
	run_ok(chk);
	root = json_parse(R.out);
	if (root < 0)
		fail_msg("not JSON:\n%s", R.out);
	assert_string_equal(jstr(root, "mode"), "check");
	assert_string_equal(jstr(root, "result"), "OK");
	jrows = jget(root, "rows");
	assert_int_equal(jpool[jrows].count, (int)NROWS);
	for (k = 0; k < (int)NROWS; k++) {
		char op[64];

		row = jkid(jrows, k);
		snprintf(op, sizeof(op), "%s", rows[k][0]);
		op[strlen(op) - 1] = '\0';	/* the table's name without its blank */
		assert_string_equal(jstr(row, "op"), op);
		assert_string_equal(jstr(row, "size"), rows[k][1]);
		assert_true(jnum(row, "iters") == 2);
		assert_string_equal(jstr(row, "result"), "OK");
		assert_true(jnum(row, "us_per_op") >= 0);
	}
}

/* the port after "listening on 127.0.0.1:" on stderr */
static unsigned listen_port(void)
{
	const char *p = strstr(R.err, "dvx-loop: listening on 127.0.0.1:");
	unsigned port = 0;

	if (!p || sscanf(p, "dvx-loop: listening on 127.0.0.1:%u", &port) != 1 || !port ||
	    port > 65535)
		fail_msg("no 'listening on 127.0.0.1:PORT' on stderr:\n%s", R.err);
	return port;
}

/* client and server over TCP, the server a thread of the same process */
static void test_tcp(void **state)
{
	static const char *const bw[] = { "--listen", "127.0.0.1:0", "--connect", "127.0.0.1",
					  "--bw", "-a", "-s", "4096", "-n", "20", NULL };
	static const char *const lat[] = { "--listen", "127.0.0.1:0", "--connect", "127.0.0.1",
					   "--lat", "--op", "send", "-s", "1000", "-n", "30",
					   "--json", NULL };
	static const char *const atom[] = { "--listen", "127.0.0.1:0", "--connect",
					    "127.0.0.1", "--bw", "--op", "fetch_add", "-n", "500",
					    "--no-thread", NULL };
	char lines[40][256], want[64];
	unsigned k, b, port;
	int root;

	(void)state;
	run_ok(bw);
	port = listen_port();
	assert_int_equal(perf_rows(lines, 40), 12);		/* 2 ... 4096 */
	for (k = 0, b = 2; k < 12; k++, b *= 2)
		check_bw_row(lines[k], b, 20);
	snprintf(want, sizeof(want), "-> server 127.0.0.1:%u over TCP", port);
	assert_non_null(strstr(R.out, want));

	run_ok(lat);
	port = listen_port();
	root = check_perf_json("lat", "send", "tcp", 1000, 1, 30);
	snprintf(want, sizeof(want), "127.0.0.1:%u", port);
	assert_string_equal(jstr(root, "server"), want);

	run_ok(atom);
	assert_int_equal(perf_rows(lines, 4), 1);
	check_bw_row(lines[0], 8, 500);
}

/* ---- a fake server: what the client sends, and what it does with a bad answer ---- */

struct fake {
	int lfd;
	unsigned port;
	int garbage;		/* answer garbage instead of a refusal */
	uint8_t hello[256];
	int got;		/* bytes of the HELLO read */
};

static uint32_t be32_at(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void *fake_server(void *arg)
{
	struct fake *f = arg;
	struct pollfd pfd = { f->lfd, POLLIN, 0 };
	uint8_t reply[256];
	ssize_t r;
	int fd;

	if (poll(&pfd, 1, 20000) != 1)
		return NULL;
	fd = accept(f->lfd, NULL, NULL);
	if (fd < 0)
		return NULL;
	pfd.fd = fd;
	while (f->got < 256 && poll(&pfd, 1, 20000) == 1) {
		r = read(fd, f->hello + f->got, (size_t)(256 - f->got));
		if (r <= 0)
			break;
		f->got += (int)r;
	}
	memset(reply, 0x5a, sizeof(reply));
	if (!f->garbage) {
		memset(reply, 0, sizeof(reply));
		memcpy(reply, "DVXL", 4);
		reply[5] = 1;				/* version 1 */
		reply[7] = 2;				/* WELCOME */
		reply[8] = 0xff;			/* status -EINVAL */
		reply[9] = 0xff;
		reply[10] = 0xff;
		reply[11] = (uint8_t)-EINVAL;
		snprintf((char *)reply + 112, 96, "go away (a test)");
	}
	if (write(fd, reply, sizeof(reply)) != (ssize_t)sizeof(reply))
		f->got = -1;
	close(fd);
	return NULL;
}

static void fake_run(int garbage)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	struct fake f;
	pthread_t th;
	char to[64];
	const char *args[] = { "--listen", "127.0.0.1:0", "--connect", to, "--bw", "-s", "4096",
			       "-n", "20", NULL };

	memset(&f, 0, sizeof(f));
	f.garbage = garbage;
	f.lfd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(f.lfd >= 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(f.lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(f.lfd, 1), 0);
	assert_int_equal(getsockname(f.lfd, (struct sockaddr *)&sa, &len), 0);
	f.port = ntohs(sa.sin_port);
	snprintf(to, sizeof(to), "127.0.0.1:%u", f.port);
	assert_int_equal(pthread_create(&th, NULL, fake_server, &f), 0);
	/* dvx-loop's own server thread never gets a client: it stops waiting when the
	 * client gives up, quietly (the client says why) */
	loop_run(args);
	pthread_join(th, NULL);
	close(f.lfd);
	assert_int_equal(R.rc, 1);
	assert_null(strstr(R.err, "server:"));

	/* the HELLO: magic, version, type, mode, op, the size, the count, tx depth, cq-mod,
	 * and an endpoint (rkey, buffer address and size, QPN) */
	assert_int_equal(f.got, 256);
	assert_memory_equal(f.hello, "DVXL", 4);
	assert_int_equal(f.hello[4] << 8 | f.hello[5], 1);
	assert_int_equal(f.hello[6] << 8 | f.hello[7], 1);	/* HELLO */
	assert_int_equal(f.hello[12], 1);			/* bw */
	assert_int_equal(f.hello[13], 0);			/* write */
	assert_int_equal(f.hello[14], 0);			/* no sweep */
	assert_int_equal(be32_at(f.hello + 16), 4096);
	assert_int_equal(be32_at(f.hello + 20), 0);		/* no duration */
	assert_int_equal(be32_at(f.hello + 24), 128);
	assert_int_equal(be32_at(f.hello + 28), 16);
	assert_int_equal(be32_at(f.hello + 36), 20);		/* iters (be64, low half) */
	assert_int_not_equal(be32_at(f.hello + 44), 0);		/* rkey */
	assert_int_not_equal(be32_at(f.hello + 48) | be32_at(f.hello + 52), 0); /* addr */
	assert_true(be32_at(f.hello + 60) >= 4096);		/* cap */
	assert_int_not_equal(be32_at(f.hello + 68), 0);		/* conn.qpn */
	if (garbage)
		assert_non_null(strstr(R.err, "not a dvx-loop server"));
	else
		assert_non_null(strstr(R.err, "refused: go away (a test)"));
	assert_null(strstr(R.out, " OK"));
}

static void test_tcp_fake_server(void **state)
{
	(void)state;
	fake_run(0);
	fake_run(1);
}

static void test_perf_usage(void **state)
{
	static const char *const bad[][8] = {
		{ "--bw", "--lat" },
		{ "-n", "5", "-D", "1" },
		{ "-D", "0" },
		{ "--op", "bogus" },
		{ "--op" },
		{ "-s", "0" },
		{ "-s", "2G" },
		{ "-s", "12Q" },
		{ "--op", "fetch_add", "-a" },
		{ "--op", "cmp_swap", "-s", "16" },
		{ "-a", "-s", "1000" },
		{ "--lat", "-t", "4" },
		{ "--tx-depth", "0" },
		{ "--tx-depth", "257" },
		{ "--cq-mod", "0" },
		{ "--trace", "--json" },
		{ "--progress" },
		{ "--bw", "--fault-row", "1" },
		{ "--bw", "--accept-timeout", "5" },
		{ "--listen", "70000", "--connect", "127.0.0.1" },
		{ "--listen", "127.0.0.1:0", "--connect", "127.0.0.1:0" },
		{ "--listen", "127.0.0.1:0", "--connect", "[::1" },
		{ "--listen", "127.0.0.1:0", "--connect", "::1:5" },
		{ "--listen", "127.0.0.1:0", "--connect" },
		{ "--dev", "a", "--dev", "b", "--listen", "1" },
		{ "--iters", "20000000" },
	};
	static const char *const lone[] = { "--listen", "0", "--bw", NULL };
	static const char *const lone2[] = { "--connect", "127.0.0.1:18515", NULL };
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		loop_run(bad[k]);
		if (R.rc != 2)
			fail_msg("'%s %s %s ...': exit %d, expected 2 (usage)\n%s", bad[k][0],
				 bad[k][1] ? bad[k][1] : "",
				 bad[k][1] && bad[k][2] ? bad[k][2] : "", R.rc, R.err);
		assert_non_null(strstr(R.err, "dvx-loop: "));
		assert_string_equal(R.out, "");
	}
	/* a lone side on the software NIC could never reach its peer: said plainly */
	loop_run(lone);
	assert_int_equal(R.rc, 2);
	assert_non_null(strstr(R.err, "the software NIC lives inside this process"));
	loop_run(lone2);
	assert_int_equal(R.rc, 2);
	assert_non_null(strstr(R.err, "the software NIC lives inside this process"));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_help_usage),
		cmocka_unit_test(test_sim_roce),
		cmocka_unit_test(test_sim_ib_stepped),
		cmocka_unit_test(test_sim_trace),
		cmocka_unit_test(test_sim_fault),
		cmocka_unit_test(test_procs),
		cmocka_unit_test(test_json_parser),
		cmocka_unit_test(test_perf_usage),
		cmocka_unit_test(test_perf_sweep_bw),
		cmocka_unit_test(test_perf_sweep_lat),
		cmocka_unit_test(test_perf_ops),
		cmocka_unit_test(test_perf_duration),
		cmocka_unit_test(test_perf_json),
		cmocka_unit_test(test_tcp),
		cmocka_unit_test(test_tcp_fake_server),
	};

	(void)argc;
	argv0 = argv[0];
	return cmocka_run_group_tests_name("tools-loop", tests, NULL, NULL);
}
