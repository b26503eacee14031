// SPDX-License-Identifier: MIT
/*
 * The dvx-loop binary on the software NIC: every row of its table passes (RoCE and IB,
 * with the progress thread and stepped), --trace decodes every executed WQE, a row
 * run with a port down fails (exit 1, the row named) while the rows after it pass
 * again after recovery, usage errors exit 2, an absent --dev device 3, --version
 * prints the version.
 *
 * dvx-loop is found in $DVX_TOOLS_DIR, else in ../tools next to this binary
 * ($(O)/tests/tools-loop-test -> $(O)/tools/dvx-loop); 'make check' builds the tools
 * before it runs the tests.
 */
#include <errno.h>
#include <limits.h>
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
	const char *env = getenv("DVX_TOOLS_DIR");
	char self[PATH_MAX], *slash;

	if (env && *env) {
		snprintf(tools_dir, sizeof(tools_dir), "%s", env);
		return 0;
	}
	if (!argv0 || !realpath(argv0, self))
		return -1;
	slash = strrchr(self, '/');
	if (!slash)
		return -1;
	*slash = '\0';		/* $(O)/tests */
	slash = strrchr(self, '/');
	if (!slash)
		return -1;
	*slash = '\0';		/* $(O) */
	snprintf(tools_dir, sizeof(tools_dir), "%.*s/tools", PATH_MAX - 16, self);
	return 0;
}

struct run {
	int rc;
	char out[1 << 20];
	char err[8192];
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
	char *argv[16];
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
	for (i = 0; args[i] && i < 14; i++)
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

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_help_usage),
		cmocka_unit_test(test_sim_roce),
		cmocka_unit_test(test_sim_ib_stepped),
		cmocka_unit_test(test_sim_trace),
		cmocka_unit_test(test_sim_fault),
	};

	(void)argc;
	argv0 = argv[0];
	return cmocka_run_group_tests_name("tools-loop", tests, NULL, NULL);
}
