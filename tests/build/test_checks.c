// SPDX-License-Identifier: MIT
/*
 * The build's structural checks on planted breaches (docs/build.md, "Checks the build
 * makes"): each script passes a clean input and fails the planted one.
 *
 *   scripts/check-cycles.sh   two objects of one folder calling each other (a loop),
 *                             three in a ring, and a stack that is not one
 *   scripts/check-layers.sh   a core/nic/ file including the window's header (a floor
 *                             broken), an mlx5/ file including a core header, and the
 *                             tree as it is
 *   scripts/check-exports.sh  an appliance archive (--product) holding a mock object
 *   scripts/check-names.sh    an open without its close, a void fini, a third sizing
 *                             spelling, an input struct named _attr
 *
 * The scripts are $DVX_SRCTREE/scripts/..., else the tree this test was built from.
 * Objects are compiled with $CC (cc by default); without a compiler the cycle cases
 * skip.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/dvx_test.h"

#ifndef DVX_TEST_SRCTREE
#define DVX_TEST_SRCTREE "."
#endif

static char top[4096];		/* the source tree */
static char tmp[256];		/* this test's scratch folder */

static const char *srctree(void)
{
	const char *s = getenv("DVX_SRCTREE");

	return s && *s ? s : DVX_TEST_SRCTREE;
}

/* run @cmd through the shell, its output dropped: its exit status, -1 on a signal */
static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void put(const char *path, const char *text)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", tmp, path);
	assert_int_equal(sh("mkdir -p \"$(dirname '%s')\"", p), 0);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup(void **state)
{
	(void)state;
	snprintf(top, sizeof(top), "%s", srctree());
	snprintf(tmp, sizeof(tmp), "/tmp/dvx-checks-XXXXXX");
	if (!mkdtemp(tmp))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sh("rm -rf '%s'", tmp);
	return 0;
}

static int have_cc(void)
{
	return sh("command -v \"${CC:-cc}\" >/dev/null 2>&1") == 0;
}

/* compile @names (tmp/d/NAME.c) into objects */
static void objs(const char *const *names, int n)
{
	int i;

	for (i = 0; i < n; i++)
		assert_int_equal(sh("cd '%s/d' && \"${CC:-cc}\" -c -o %s.o %s.c", tmp, names[i],
				    names[i]), 0);
}

static void test_cycle_pair(void **state)
{
	static const char *const n[] = { "a", "b" };

	(void)state;
	if (!have_cc())
		skip();
	put("d/a.c", "int dvx_b(void);\nint dvx_a(void) { return dvx_b(); }\n");
	put("d/b.c", "int dvx_a(void);\nint dvx_b(void) { return 1; }\nint dvx_c(void) { return dvx_a(); }\n");
	objs(n, 2);
	assert_int_equal(sh("'%s/scripts/check-cycles.sh' '%s/d/a.o' '%s/d/b.o' 2>/dev/null", top,
			    tmp, tmp), 1);
	/* the same objects in two folders: not a loop inside a folder */
	assert_int_equal(sh("mkdir -p '%s/e' && mv '%s/d/b.o' '%s/e/b.o'", tmp, tmp, tmp), 0);
	assert_int_equal(sh("'%s/scripts/check-cycles.sh' '%s/d/a.o' '%s/e/b.o'", top, tmp, tmp), 0);
}

static void test_cycle_ring(void **state)
{
	static const char *const n[] = { "x", "y", "z", "w" };

	(void)state;
	if (!have_cc())
		skip();
	/* x -> y -> z -> x, and w below them all */
	put("d/w.c", "int dvx_w(void) { return 0; }\n");
	put("d/x.c", "int dvx_y(void);\nint dvx_w(void);\nint dvx_x(void) { return dvx_y() + dvx_w(); }\n");
	put("d/y.c", "int dvx_z(void);\nint dvx_y(void) { return dvx_z(); }\n");
	put("d/z.c", "int dvx_x(void);\nint dvx_z(void) { return 0; }\nint dvx_z2(void) { return dvx_x(); }\n");
	objs(n, 4);
	assert_int_equal(sh("cd '%s/d' && '%s/scripts/check-cycles.sh' w.o x.o y.o z.o 2>/dev/null",
			    tmp, top), 1);
	/* without z's call back up: a stack */
	put("d/z.c", "int dvx_z(void) { return 0; }\n");
	objs(n + 3, 1);
	objs(n + 2, 1);
	assert_int_equal(sh("cd '%s/d' && '%s/scripts/check-cycles.sh' w.o x.o y.o z.o", tmp, top), 0);
}

static void test_layers(void **state)
{
	(void)state;
	/* the tree as it is passes */
	assert_int_equal(sh("'%s/scripts/check-layers.sh' '%s'", top, top), 0);
	/* a floor broken inside core: nic (lowest) includes the window (highest) */
	put("t/core/nic/bad.c", "#include <dvx/win/win.h>\n");
	assert_int_equal(sh("'%s/scripts/check-layers.sh' '%s/t' 2>/dev/null", top, tmp), 1);
	/* one floor up is one floor up: msg may not include mp */
	put("t/core/nic/bad.c", "#include <dvx/nic/qp.h>\n");
	put("t/core/msg/bad.c", "#include <dvx/mp/mp.h>\n");
	assert_int_equal(sh("'%s/scripts/check-layers.sh' '%s/t' 2>/dev/null", top, tmp), 1);
	/* siblings of one floor may use each other, and every folder the floors below */
	put("t/core/msg/bad.c", "#include <dvx/p2p/p2p.h>\n#include <dvx/bootstrap/bootstrap.h>\n");
	put("t/core/win/ok.c", "#include <dvx/mp/mp.h>\n#include <dvx/nic/qp.h>\n");
	assert_int_equal(sh("'%s/scripts/check-layers.sh' '%s/t'", top, tmp), 0);
	/* a layer broken: mlx5 includes core */
	put("t/mlx5/bad.c", "#include <dvx/nic/qp.h>\n");
	assert_int_equal(sh("'%s/scripts/check-layers.sh' '%s/t' 2>/dev/null", top, tmp), 1);
}

static void test_product_archive(void **state)
{
	(void)state;
	if (!have_cc())
		skip();
	put("p/m.c", "int dvx_mock_thing(void) { return 0; }\n");
	put("p/n.c", "int dvx_nic_thing(void) { return 0; }\n");
	assert_int_equal(sh("cd '%s/p' && \"${CC:-cc}\" -c m.c n.c && ar rcs withmock.a m.o n.o && "
			    "ar rcs clean.a n.o", tmp), 0);
	assert_int_equal(sh("'%s/scripts/check-exports.sh' --product '%s/p/clean.a'", top, tmp), 0);
	assert_int_equal(sh("'%s/scripts/check-exports.sh' --product '%s/p/withmock.a' 2>/dev/null",
			    top, tmp), 1);
	/* a failed check removes the archive, so a later make cannot take it as built */
	assert_int_equal(sh("test -e '%s/p/withmock.a'", tmp), 1);
	/* the test library may hold the mock */
	assert_int_equal(sh("cd '%s/p' && ar rcs test.a m.o && '%s/scripts/check-exports.sh' test.a",
			    tmp, top), 0);
}

static void test_names(void **state)
{
	(void)state;
	assert_int_equal(sh("'%s/scripts/check-names.sh' '%s'", top, top), 0);
	put("n/include/dvx/foo/foo.h", "int dvx_foo_open(void);\nint dvx_foo_close(void);\n"
	    "int dvx_foo_init(void);\nint dvx_foo_fini(void);\nsize_t dvx_foo_mem_size(int n);\n"
	    "struct dvx_foo_cfg {\n\tint x;\n};\n");
	put("n/include/dvx/hal/q.h", "struct dvx_hal_q_attr {\n\tint x;\n};\n");
	assert_int_equal(sh("'%s/scripts/check-names.sh' '%s/n'", top, tmp), 0);
	/* an open without its close */
	put("n/include/dvx/foo/bar.h", "int dvx_bar_open(void);\n");
	assert_int_equal(sh("'%s/scripts/check-names.sh' '%s/n' 2>/dev/null", top, tmp), 1);
	/* a fini that cannot fail */
	put("n/include/dvx/foo/bar.h", "void dvx_bar_fini(void);\n");
	assert_int_equal(sh("'%s/scripts/check-names.sh' '%s/n' 2>/dev/null", top, tmp), 1);
	/* a third spelling of sizing */
	put("n/include/dvx/foo/bar.h", "size_t dvx_bar_state_size(int n);\n");
	assert_int_equal(sh("'%s/scripts/check-names.sh' '%s/n' 2>/dev/null", top, tmp), 1);
	/* an input struct named like a query result */
	put("n/include/dvx/foo/bar.h", "struct dvx_bar_attr {\n\tint x;\n};\n");
	assert_int_equal(sh("'%s/scripts/check-names.sh' '%s/n' 2>/dev/null", top, tmp), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_cycle_pair, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cycle_ring, setup, teardown),
		cmocka_unit_test_setup_teardown(test_layers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_product_archive, setup, teardown),
		cmocka_unit_test_setup_teardown(test_names, setup, teardown),
	};

	return cmocka_run_group_tests_name("build-checks", tests, NULL, NULL);
}
