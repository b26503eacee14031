// SPDX-License-Identifier: MIT
/*
 * scripts/run-tests.sh, the suite's runner, over binaries whose outcome is known: a
 * scratch object tree whose tests/ holds links to this program, each link's name
 * saying what it does when run through it:
 *
 *   rt-pass       a cmocka group: 2 tests pass, 1 skips               PASS, 2 passed, 1 skipped
 *   rt-fail       2 pass, 1 fails, 1 skips, 1 whose setup fails      FAIL, exit 2
 *   rt-skip       no group; says why, exits 77                        SKIP (whole)
 *   rt-skipgroup  a group whose tests all skip, then 77 (gpu-nvl's way)  SKIP (whole)
 *   rt-exit       2 pass, then exit 3 (a leak report, say)            FAIL, 1 failed
 *   rt-hang       a test that sleeps past DVX_TEST_TIMEOUT            FAIL, timed out
 *   rt-conv       not cmocka, its lines (as nvcc-headers-test)        PASS, 2 passed
 *   rt-missing    no such file                                        FAIL (not built)
 *
 * The runner's console must be the same line for line (the failed binaries' log tails
 * aside, which show cmocka's XML in the JUnit runs) plainly, with DVX_JUNIT_DIR, and
 * with CMOCKA_MESSAGE_OUTPUT=xml (cmocka's XML on stdout instead of its summary lines;
 * a CMOCKA_XML_FILE from the environment ignored); its exit status non-zero, 0 for a run
 * of rt-pass alone. With DVX_JUNIT_DIR every binary has its NAME.xml, replacing a stale
 * one, with the test cases and outcomes it ran, and scripts/check-junit.sh (xmllint)
 * finds them well-formed and counting what the console says.
 *
 * The runner is $DVX_SRCTREE/scripts/run-tests.sh, else the one of the tree this test
 * was built from (DVX_TEST_SRCTREE); without it the test skips itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/dvx_test.h"

#ifndef DVX_TEST_SRCTREE
#define DVX_TEST_SRCTREE "."
#endif

/* DVX_TEST_TIMEOUT for the runs: rt-hang costs this much each time */
#define TMO "3"

#define SKIP_WHY "nothing to run here; run 'make widget-check' on a machine with a widget"

/* ---- the children: what a link's name runs ---- */

static void c_ok(void **state)
{
	(void)state;
}

static void c_ok_too(void **state)
{
	(void)state;
	assert_int_equal(1 + 1, 2);
}

static void c_skip(void **state)
{
	(void)state;
	skip();
}

static void c_fail(void **state)
{
	(void)state;
	fail_msg("a <b> & ]]> c");	/* XML's special characters, in the log only */
}

static int c_setup_fails(void **state)
{
	(void)state;
	return -1;
}

static void c_sleep(void **state)
{
	(void)state;
	sleep(60);		/* killed by the runner's timeout long before */
}

static int child(const char *mode)
{
	const struct CMUnitTest pass[] = {
		cmocka_unit_test(c_ok),
		cmocka_unit_test(c_skip),
		cmocka_unit_test(c_ok_too),
	};
	const struct CMUnitTest mixed[] = {
		cmocka_unit_test(c_ok),		cmocka_unit_test(c_fail),
		cmocka_unit_test(c_skip),	cmocka_unit_test_setup(c_ok, c_setup_fails),
		cmocka_unit_test(c_ok_too),
	};
	const struct CMUnitTest skips[] = {
		cmocka_unit_test(c_skip),
		cmocka_unit_test(c_skip),
	};
	const struct CMUnitTest two[] = {
		cmocka_unit_test(c_ok),
		cmocka_unit_test(c_ok_too),
	};
	const struct CMUnitTest hang[] = {
		cmocka_unit_test(c_sleep),
	};

	if (!strcmp(mode, "pass"))
		return cmocka_run_group_tests_name("rt-pass", pass, NULL, NULL);
	if (!strcmp(mode, "fail"))
		return cmocka_run_group_tests_name("rt-fail", mixed, NULL, NULL);
	if (!strcmp(mode, "skip")) {
		printf("%s\n", SKIP_WHY);
		return DVX_TEST_SKIP_ALL;
	}
	if (!strcmp(mode, "skipgroup")) {
		cmocka_run_group_tests_name("rt-skipgroup", skips, NULL, NULL);
		printf("%s\n", SKIP_WHY);
		return DVX_TEST_SKIP_ALL;
	}
	if (!strcmp(mode, "exit")) {
		cmocka_run_group_tests_name("rt-exit", two, NULL, NULL);
		return 3;
	}
	if (!strcmp(mode, "hang"))
		return cmocka_run_group_tests_name("rt-hang", hang, NULL, NULL);
	if (!strcmp(mode, "conv")) {	/* cmocka's lines, whatever CMOCKA_* says */
		printf("[       OK ] conv-one\n[       OK ] conv-two\n");
		printf("[==========] 2 test(s) run.\n[  PASSED  ] 2 test(s).\n");
		return 0;
	}
	fprintf(stderr, "runner-test: no child mode '%s'\n", mode);
	return 99;
}

/* ---- the parent: the runner over them ---- */

static const char *const names[] = {
	"rt-pass", "rt-fail", "rt-skip", "rt-skipgroup", "rt-exit", "rt-hang", "rt-conv",
	"rt-missing",
};
#define NNAMES (sizeof(names) / sizeof(names[0]))

static char srctree[PATH_MAX];
static char runner[PATH_MAX + 32];
static char tmp[PATH_MAX];	/* the scratch folder: obj/tests/rt-*, junit/ */
static char obj[PATH_MAX + 8];
static char jdir[PATH_MAX + 8];

struct run {
	int rc;
	size_t len;
	char out[1 << 16];
};

static struct run plain;	/* the reference: the runner without JUnit */

/* run the runner (or, with @script, another script of the tree) with @env ("NAME=value",
 * NULL-terminated; the runner's own variables are cleared first) over @argv */
static void run_script(struct run *r, const char *script, const char *const *env,
		       const char *const *args)
{
	static const char *const clear[] = {
		"TESTS", "V", "DVX_TEST_WRAPPER", "DVX_TEST_TIMEOUT", "DVX_JUNIT_DIR",
		"CMOCKA_MESSAGE_OUTPUT", "CMOCKA_XML_FILE",
	};
	char *argv[NNAMES + 8];
	int po[2], status, i;
	ssize_t got;
	pid_t pid;

	argv[0] = (char *)"sh";
	argv[1] = (char *)script;
	for (i = 0; args[i] && i < (int)NNAMES + 4; i++)
		argv[i + 2] = (char *)args[i];
	argv[i + 2] = NULL;
	assert_int_equal(pipe(po), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		for (i = 0; i < (int)(sizeof(clear) / sizeof(clear[0])); i++)
			unsetenv(clear[i]);
		setenv("DVX_TEST_TIMEOUT", TMO, 1);
		for (i = 0; env && env[i]; i++)
			putenv((char *)env[i]);
		dup2(po[1], 1);
		dup2(po[1], 2);
		close(po[0]);
		close(po[1]);
		execvp("sh", argv);
		_exit(127);
	}
	close(po[1]);
	r->len = 0;
	while ((got = read(po[0], r->out + r->len, sizeof(r->out) - 1 - r->len)) > 0)
		r->len += (size_t)got;
	r->out[r->len] = '\0';
	close(po[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	r->rc = WEXITSTATUS(status);
}

static void run_all(struct run *r, const char *const *env)
{
	const char *args[NNAMES + 2];
	size_t i;

	args[0] = obj;
	for (i = 0; i < NNAMES; i++)
		args[i + 1] = names[i];
	args[NNAMES + 1] = NULL;
	run_script(r, runner, env, args);
}

/* the console without the failed binaries' log tails ("      | ...") */
static void console(const struct run *r, char *buf, size_t n)
{
	const char *p = r->out;
	size_t len = 0;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p + 1) : strlen(p);

		if (strncmp(p, "      | ", 8) && len + l < n) {
			memcpy(buf + len, p, l);
			len += l;
		}
		p += l;
	}
	buf[len] = '\0';
}

static void has_line(const struct run *r, const char *line)
{
	const char *p = r->out;
	size_t n = strlen(line);

	while ((p = strstr(p, line))) {
		if ((p == r->out || p[-1] == '\n') && (p[n] == '\n' || !p[n]))
			return;
		p += n;
	}
	print_message("no line '%s' in:\n%s\n", line, r->out);
	fail();
}

static void has_prefix_line(const struct run *r, const char *start)
{
	const char *p = r->out;
	size_t n = strlen(start);

	while ((p = strstr(p, start))) {
		if (p == r->out || p[-1] == '\n')
			return;
		p += n;
	}
	print_message("no line starting '%s' in:\n%s\n", start, r->out);
	fail();
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;

	while ((s = strstr(s, what))) {
		n++;
		s += strlen(what);
	}
	return n;
}

static char *slurp(const char *path)
{
	static char buf[1 << 16];
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return NULL;
	buf[n] = '\0';
	return buf;
}

static void spit(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static int have_xmllint(void)
{
	return system("command -v xmllint >/dev/null 2>&1") == 0;
}

/* the plain run: every binary's line and the summary */
static void test_plain(void **state)
{
	char line[PATH_MAX + 128];

	(void)state;
	assert_int_not_equal(plain.rc, 0);
	has_line(&plain, "PASS  rt-pass (2 passed, 1 skipped)");
	has_line(&plain, "      skipped: c_skip");
	snprintf(line, sizeof(line),
		 "FAIL  rt-fail (exit 2; 2 passed, 1 skipped, 1 failed) - log: %s/tests/logs/rt-fail.log",
		 obj);
	has_line(&plain, line);
	has_line(&plain, "SKIP  rt-skip: " SKIP_WHY);
	has_line(&plain, "SKIP  rt-skipgroup: " SKIP_WHY);
	has_prefix_line(&plain, "FAIL  rt-exit (exit 3; 2 passed, 0 skipped, 0 failed) - log: ");
	has_prefix_line(&plain, "FAIL  rt-hang (exit 124; 0 passed, 0 skipped, 0 failed) - log: ");
	has_line(&plain, "      | (timed out after " TMO " s: killed by run-tests.sh)");
	has_line(&plain, "PASS  rt-conv (2 passed)");
	has_line(&plain, "FAIL  rt-missing (not built)");
	has_line(&plain, "dvx tests: 8 binaries (2 skipped whole, 4 failed); 8 tests passed, "
			 "2 skipped, 3 failed");
	has_line(&plain, "failed: rt-fail rt-exit rt-hang rt-missing");
	/* the plain run writes no XML anywhere */
	snprintf(line, sizeof(line), "%s/tests/logs/rt-pass.junit.rt-pass.xml", obj);
	assert_int_not_equal(access(line, F_OK), 0);
}

/* the same console with JUnit files, and files that say what the console says */
static void test_junit(void **state)
{
	static struct run r;
	static char want[1 << 16], got[1 << 16];
	char env_dir[PATH_MAX + 32], path[PATH_MAX + 64], stale[PATH_MAX + 64];
	const char *env[] = { env_dir, NULL };
	char *x;
	size_t i;

	(void)state;
	snprintf(env_dir, sizeof(env_dir), "DVX_JUNIT_DIR=%s", jdir);
	/* a stale file in the JUnit folder and one of cmocka's in the logs are replaced */
	assert_int_equal(mkdir(jdir, 0755), 0);
	snprintf(path, sizeof(path), "%s/rt-pass.xml", jdir);
	spit(path, "stale, not even XML <");
	snprintf(stale, sizeof(stale), "%s/tests/logs/rt-pass.junit.rt-pass.xml", obj);
	spit(stale, "<?xml version=\"1.0\" ?>\n<testsuites>\n  <testsuite name=\"stale\" "
		    "tests=\"9\" failures=\"9\" errors=\"0\" skipped=\"0\" >\n  </testsuite>\n"
		    "</testsuites>\n");
	run_all(&r, env);
	assert_int_equal(r.rc, plain.rc);
	console(&plain, want, sizeof(want));
	console(&r, got, sizeof(got));
	if (strcmp(want, got)) {
		print_message("without JUnit:\n%s\nwith:\n%s\n", want, got);
		fail();
	}
	/* a failed binary's log shows cmocka's failure messages (from its XML) */
	has_line(&r, "      |       <failure><![CDATA[Test setup failed]]></failure>");

	for (i = 0; i < NNAMES; i++) {
		snprintf(path, sizeof(path), "%s/%s.xml", jdir, names[i]);
		x = slurp(path);
		if (!x) {
			print_message("no %s\n", path);
			fail();
		}
		assert_non_null(strstr(x, "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n<testsuites>\n"));
		assert_non_null(strstr(x, "</testsuites>\n"));
		assert_null(strstr(x, "stale"));
		if (!strcmp(names[i], "rt-pass")) {
			assert_int_equal(count(x, "<testcase "), 3);
			assert_int_equal(count(x, "<skipped"), 1);
			assert_int_equal(count(x, "<failure"), 0);
		} else if (!strcmp(names[i], "rt-fail")) {
			assert_int_equal(count(x, "<testsuite "), 1);
			assert_int_equal(count(x, "<testcase "), 5);
			assert_int_equal(count(x, "<skipped"), 1);
			assert_int_equal(count(x, "<failure"), 2);	/* the failure, the setup */
			assert_non_null(strstr(x, "tests=\"5\" failures=\"1\" errors=\"1\" skipped=\"1\""));
		} else if (!strncmp(names[i], "rt-skip", 7)) {
			/* one case for the binary, none of the group rt-skipgroup ran */
			assert_int_equal(count(x, "<testsuite "), 1);
			assert_int_equal(count(x, "<testcase "), 1);
			assert_non_null(strstr(x, "<skipped message=\"nothing to run here; run "
						  "'make widget-check' on a machine with a widget\"/>"));
		} else if (!strcmp(names[i], "rt-exit")) {
			/* cmocka's suite (2 passed) and the runner's for the exit status */
			assert_int_equal(count(x, "<testsuite "), 2);
			assert_int_equal(count(x, "<testcase "), 3);
			assert_non_null(strstr(x, "<failure message=\"exit status 3 without a "
						  "failed test\">"));
		} else if (!strcmp(names[i], "rt-hang")) {
			assert_int_equal(count(x, "<testsuite "), 1);
			assert_non_null(strstr(x, "<failure message=\"timed out after " TMO " s\">"));
		} else if (!strcmp(names[i], "rt-conv")) {
			/* no cmocka XML: a suite from its lines, its test cases named */
			assert_int_equal(count(x, "<testcase "), 2);
			assert_non_null(strstr(x, "<testcase name=\"conv-one\""));
			assert_non_null(strstr(x, "<testcase name=\"conv-two\""));
		} else if (!strcmp(names[i], "rt-missing")) {
			assert_non_null(strstr(x, "<failure message=\"not built: "));
		}
	}
	/* cmocka's per-group files do not stay behind */
	assert_int_not_equal(access(stale, F_OK), 0);

	if (!have_xmllint()) {
		print_message("xmllint not installed (libxml2-utils): the files' XML and counts "
			      "are not checked against the console\n");
		skip();
	}
	snprintf(path, sizeof(path), "%s/console", tmp);
	spit(path, r.out);
	{
		static struct run c;
		char chk[PATH_MAX + 32];
		const char *args[] = { path, jdir, NULL };

		snprintf(chk, sizeof(chk), "%s/scripts/check-junit.sh", srctree);
		run_script(&c, chk, NULL, args);
		if (c.rc != 0) {
			print_message("%s", c.out);
			fail();
		}
	}
}

/* cmocka's XML on stdout (CMOCKA_MESSAGE_OUTPUT=xml): the same counts; a CMOCKA_XML_FILE
 * in the environment is not handed on */
static void test_xml_output(void **state)
{
	static struct run r;
	static char want[1 << 16], got[1 << 16];
	char xml_file[PATH_MAX + 32], shared[PATH_MAX + 16];
	const char *env[] = { "CMOCKA_MESSAGE_OUTPUT=xml", xml_file, NULL };

	(void)state;
	snprintf(shared, sizeof(shared), "%s/shared.xml", tmp);
	snprintf(xml_file, sizeof(xml_file), "CMOCKA_XML_FILE=%s", shared);
	run_all(&r, env);
	assert_int_equal(r.rc, plain.rc);
	console(&plain, want, sizeof(want));
	console(&r, got, sizeof(got));
	if (strcmp(want, got)) {
		print_message("plain:\n%s\nCMOCKA_MESSAGE_OUTPUT=xml:\n%s\n", want, got);
		fail();
	}
	assert_int_not_equal(access(shared, F_OK), 0);
}

/* a run whose binaries all pass exits 0, with or without JUnit */
static void test_green(void **state)
{
	static struct run r;
	char env_dir[PATH_MAX + 32];
	const char *env[] = { env_dir, NULL };
	const char *args[] = { obj, "rt-pass", "rt-skip", NULL };
	const char *summary = "dvx tests: 2 binaries (1 skipped whole, 0 failed); 2 tests "
			      "passed, 1 skipped, 0 failed";

	(void)state;
	run_script(&r, runner, NULL, args);
	if (r.rc)
		print_message("exit %d:\n%s\n", r.rc, r.out);
	assert_int_equal(r.rc, 0);
	has_line(&r, summary);
	snprintf(env_dir, sizeof(env_dir), "DVX_JUNIT_DIR=%s/green", tmp);
	run_script(&r, runner, env, args);
	if (r.rc)
		print_message("exit %d with DVX_JUNIT_DIR:\n%s\n", r.rc, r.out);
	assert_int_equal(r.rc, 0);
	has_line(&r, summary);
}

static int setup(void **state)
{
	char self[PATH_MAX], path[PATH_MAX + 64];
	const char *env = getenv("DVX_SRCTREE");
	const char *t = getenv("TMPDIR");
	ssize_t n;
	size_t i;

	(void)state;
	snprintf(srctree, sizeof(srctree), "%s", env && *env ? env : DVX_TEST_SRCTREE);
	snprintf(runner, sizeof(runner), "%s/scripts/run-tests.sh", srctree);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -1;
	self[n] = '\0';
	snprintf(tmp, sizeof(tmp), "%s/dvx-runner-test.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(tmp))
		return -1;
	snprintf(obj, sizeof(obj), "%s/obj", tmp);
	snprintf(jdir, sizeof(jdir), "%s/junit", tmp);
	snprintf(path, sizeof(path), "%s/tests", obj);
	if (mkdir(obj, 0755) || mkdir(path, 0755))
		return -1;
	for (i = 0; i < NNAMES; i++) {
		if (!strcmp(names[i], "rt-missing"))
			continue;
		snprintf(path, sizeof(path), "%s/tests/%s", obj, names[i]);
		if (symlink(self, path))
			return -1;
	}
	/* the reference every other case compares with */
	run_all(&plain, NULL);
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	if (tmp[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
		if (system(cmd))
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_junit),
		cmocka_unit_test(test_xml_output),
		cmocka_unit_test(test_green),
	};
	const char *me = strrchr(argv[0], '/');
	const char *env = getenv("DVX_SRCTREE");
	char path[PATH_MAX + 32];

	(void)argc;
	me = me ? me + 1 : argv[0];
	if (!strncmp(me, "rt-", 3))
		return child(me + 3);
	snprintf(path, sizeof(path), "%s/scripts/run-tests.sh", env && *env ? env : DVX_TEST_SRCTREE);
	if (access(path, R_OK)) {
		printf("%s not found; set DVX_SRCTREE to the dvx source tree\n", path);
		return DVX_TEST_SKIP_ALL;
	}
	return cmocka_run_group_tests_name("runner", tests, setup, teardown);
}
