// SPDX-License-Identifier: MIT
/*
 * mlx5-bf-asm-test: the BlueFlame copy is one 64-byte store sequence on each CPU dvx
 * runs on (dvx/mlx5/barrier.h dvx_mmio_copy_wqebb(), prm 3.3).
 *
 * The test compiles a probe that calls the copy, and one that calls the single-poster
 * doorbell (dvx_mlx5_sq_ring(), whose BlueFlame path loops over the copy), for x86-64
 * and for aarch64, disassembles them with objdump and checks the stores:
 *
 *  - x86-64: exactly four 16-byte movdqu stores from xmm registers to offsets 0, 0x10,
 *    0x20, 0x30 of one base register, back to back, and no other store in the copy;
 *  - aarch64: exactly one st1 of four 128-bit registers ({vA.2d-vD.2d}) and no other
 *    store in the copy.
 *
 * The compilers: the one the tree was built with for the host's own architecture,
 * x86_64-linux-gnu-gcc / aarch64-linux-gnu-gcc for the other (scripts/setup.sh installs
 * gcc-aarch64-linux-gnu). A missing cross compiler skips that architecture's test and
 * says how to get it. The headers are the source tree's ($DVX_SRCTREE, else the tree
 * this test was built from).
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "../lib/dvx_test.h"

#ifndef DVX_TEST_SRCTREE
#define DVX_TEST_SRCTREE "."
#endif
#ifndef DVX_TEST_CC
#define DVX_TEST_CC "cc"
#endif

static char dir[PATH_MAX];
static char srctree[PATH_MAX];

/* the disassembly of one probe, and the lines of one function in it */
static char dis[1 << 17];
static char fn_lines[256][160];
static unsigned fn_n;

static const char probe_src[] =
	"#include <dvx/mlx5/barrier.h>\n"
	"#include <dvx/mlx5/sq.h>\n"
	"void probe_copy(void *reg, const void *src);\n"
	"void probe_copy(void *reg, const void *src)\n"
	"{\n"
	"\tdvx_mmio_copy_wqebb(reg, src);\n"
	"}\n"
	"void probe_ring(const struct dvx_mlx5_sq *sq, struct dvx_mlx5_sq_ctrs *c,\n"
	"\t\tuint64_t last);\n"
	"void probe_ring(const struct dvx_mlx5_sq *sq, struct dvx_mlx5_sq_ctrs *c,\n"
	"\t\tuint64_t last)\n"
	"{\n"
	"\tdvx_mlx5_sq_ring(sq, c, last);\n"
	"}\n";

static bool have(const char *prog)
{
	char cmd[PATH_MAX + 64];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", prog);
	return system(cmd) == 0;
}

static int setup(void **state)
{
	const char *env = getenv("DVX_SRCTREE"), *tmpdir = getenv("TMPDIR");
	FILE *f;
	char path[PATH_MAX + 16];

	(void)state;
	snprintf(srctree, sizeof(srctree), "%s", env && *env ? env : DVX_TEST_SRCTREE);
	snprintf(dir, sizeof(dir), "%s/dvx-bf-asm-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/probe.c", dir);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(probe_src, f);
	return fclose(f);
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* compile the probe with @cc into @arch.o and disassemble it with @objdump into dis[] */
static void build(const char *cc, const char *objdump, const char *arch)
{
	char cmd[3 * PATH_MAX + 256];
	FILE *p;
	size_t n;

	snprintf(cmd, sizeof(cmd),
		 "%s -std=c11 -O2 -Wall -Werror -I'%s/include' -c '%s/probe.c' -o '%s/%s.o' 2>&1",
		 cc, srctree, dir, dir, arch);
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(dis, 1, sizeof(dis) - 1, p);
	dis[n] = 0;
	if (pclose(p) != 0)
		fail_msg("%s failed:\n%s", cmd, dis);

	snprintf(cmd, sizeof(cmd), "%s -d --no-show-raw-insn '%s/%s.o'", objdump, dir, arch);
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(dis, 1, sizeof(dis) - 1, p);
	dis[n] = 0;
	assert_true(n < sizeof(dis) - 1);
	assert_int_equal(pclose(p), 0);
}

/* the instructions of function @name in dis[]: "mnemonic operands", one per entry */
static void function(const char *name)
{
	char head[64];
	const char *s, *e;

	snprintf(head, sizeof(head), "<%s>:\n", name);
	s = strstr(dis, head);
	if (!s)
		fail_msg("no %s in the disassembly:\n%s", name, dis);
	s += strlen(head);
	fn_n = 0;
	for (; *s && *s != '\n'; s = *e ? e + 1 : e) {
		const char *tab;
		size_t len;

		e = strchr(s, '\n');
		if (!e)
			e = s + strlen(s);
		/* "   4:\tmovdqu %xmm0,(%rdi)" : the instruction follows the address' tab */
		tab = memchr(s, '\t', (size_t)(e - s));
		if (!tab)
			continue;
		len = (size_t)(e - tab - 1);
		assert_true(fn_n < sizeof(fn_lines) / sizeof(fn_lines[0]));
		if (len >= sizeof(fn_lines[0]))
			len = sizeof(fn_lines[0]) - 1;
		memcpy(fn_lines[fn_n], tab + 1, len);
		fn_lines[fn_n][len] = 0;
		fn_n++;
	}
	assert_true(fn_n > 0);
}

static bool starts(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

/* an x86-64 store: AT&T syntax puts the destination last; a memory one has "(" */
static bool x86_store(const char *insn)
{
	const char *comma = strrchr(insn, ',');

	if (!comma || !strchr(comma, '('))
		return false;
	return !starts(insn, "lea") && !starts(insn, "cmp") && !starts(insn, "test") &&
	       !starts(insn, "nop") && !starts(insn, "bt");
}

/*
 * The stores of the current function: exactly @groups runs of four movdqu from an xmm
 * register to 0, 0x10, 0x20, 0x30 of one base, each run back to back; @other_ok
 * more stores allowed elsewhere (the doorbell record, the counters).
 */
static void check_x86(unsigned groups, unsigned other_ok)
{
	static const char *const off[4] = { "(", "0x10(", "0x20(", "0x30(" };
	unsigned i, k, runs = 0, other = 0;

	for (i = 0; i < fn_n; i++) {
		if (!x86_store(fn_lines[i]))
			continue;
		if (!starts(fn_lines[i], "movdqu %xmm")) {
			other++;
			continue;
		}
		/* a run: this and the next three instructions, offsets ascending */
		for (k = 0; k < 4; k++) {
			const char *c;

			if (i + k >= fn_n || !starts(fn_lines[i + k], "movdqu %xmm"))
				fail_msg("x86-64: a 16-byte store outside a run of four at "
					 "'%s'", fn_lines[i]);
			c = strchr(fn_lines[i + k], ',');
			if (!c || !starts(c + 1, off[k]))
				fail_msg("x86-64: store %u of the run is '%s', want offset %s",
					 k, fn_lines[i + k], off[k]);
			if (k && strcmp(strchr(fn_lines[i + k], '('), strchr(fn_lines[i], '(')))
				fail_msg("x86-64: the run changes base register at '%s'",
					 fn_lines[i + k]);
		}
		runs++;
		i += 3;
	}
	if (runs != groups)
		fail_msg("x86-64: %u runs of four 16-byte stores, %u expected (the copy is "
			 "not one 64-byte store sequence)", runs, groups);
	if (other > other_ok)
		fail_msg("x86-64: %u other stores, at most %u expected", other, other_ok);
}

/* an aarch64 store */
static bool arm_store(const char *insn)
{
	return starts(insn, "st") && !starts(insn, "stadd");
}

/* exactly @groups st1 of four 128-bit registers; @other_ok other stores allowed */
static void check_arm(unsigned groups, unsigned other_ok)
{
	unsigned i, runs = 0, other = 0;

	for (i = 0; i < fn_n; i++) {
		const char *v;

		if (!arm_store(fn_lines[i]))
			continue;
		if (!starts(fn_lines[i], "st1\t{v") && !starts(fn_lines[i], "st1 {v")) {
			other++;
			continue;
		}
		/* "st1\t{v16.2d-v19.2d}, [x0]": four registers, 2d lanes */
		v = strchr(fn_lines[i], '{');
		if (!strstr(v, ".2d-v") || !strstr(v, ".2d}, ["))
			fail_msg("aarch64: '%s' is not a st1 of four 128-bit registers",
				 fn_lines[i]);
		runs++;
	}
	if (runs != groups)
		fail_msg("aarch64: %u 64-byte st1 stores, %u expected (the copy is not one "
			 "64-byte store)", runs, groups);
	if (other > other_ok)
		fail_msg("aarch64: %u other stores, at most %u expected", other, other_ok);
}

static bool host_is(const char *m)
{
	struct utsname u;

	return uname(&u) == 0 && strcmp(u.machine, m) == 0;
}

/* one architecture: its compiler (the tree's own on a host of that kind, else
 * @cross-gcc and @cross-objdump), the probes built, the copy and the doorbell checked */
static void arch_case(const char *machine, const char *cross, const char *pkg,
		      void (*check)(unsigned groups, unsigned other_ok))
{
	char cc[64], od[64];

	if (host_is(machine)) {
		snprintf(cc, sizeof(cc), "%s", DVX_TEST_CC);
		snprintf(od, sizeof(od), "objdump");
	} else {
		snprintf(cc, sizeof(cc), "%s-gcc", cross);
		snprintf(od, sizeof(od), "%s-objdump", cross);
	}
	if (!have(cc) || !have(od)) {
		print_message("no %s compiler here (%s): install %s (scripts/setup.sh "
			      "does)\n", machine, cc, pkg);
		skip();
	}
	build(cc, od, machine);
	function("probe_copy");
	check(1, 0);
	/* the doorbell: the copy in the BlueFlame loop; the record, the 8-byte doorbell
	 * and the counters are other stores */
	function("probe_ring");
	check(1, 16);
}

static void test_x86_64(void **state)
{
	(void)state;
	arch_case("x86_64", "x86_64-linux-gnu", "gcc-x86-64-linux-gnu", check_x86);
}

static void test_aarch64(void **state)
{
	(void)state;
	arch_case("aarch64", "aarch64-linux-gnu", "gcc-aarch64-linux-gnu", check_arm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_x86_64),
		cmocka_unit_test(test_aarch64),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
