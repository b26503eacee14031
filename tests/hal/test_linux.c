// SPDX-License-Identifier: MIT
/*
 * The linux backend on this host, and the dvx-probe binary, each answer checked against
 * an independent reading of the same machine: the RDMA devices against a directory
 * listing of /sys/class/infiniband, every PCI function's ids, class and NUMA node
 * against its own sysfs files, the memlock limit against getrlimit(), the page size
 * against sysconf(), the clock against CLOCK_MONOTONIC. On a machine without RDMA
 * hardware (CI) the device list is empty and dvx-probe exits 2 saying there is no
 * mlx5 device; on a machine with devices the listing is checked for sanity and the
 * no-device expectations are skipped.
 *
 * dvx-probe is found in $DVX_TOOLS_DIR, else in ../tools next to this binary
 * ($(O)/tests/hal-linux-test -> $(O)/tools/dvx-probe).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../lib/dvx_test.h"
#include "../lib/dvx_json.h"

#include <dvx/hal.h>

static const char *argv0;
static char tools_dir[PATH_MAX];

static const struct dvx_hal *linux_or_skip(void)
{
	const struct dvx_hal *hal = dvx_hal_linux();

	if (!hal) {
		print_message("built without rdma-core (CONFIG_DVX_RDMA=n): no linux backend\n");
		skip();
	}
	return hal;
}

/* entries of a sysfs directory (not "." or ".."), 0 when it does not exist */
static unsigned count_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	unsigned n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

/* a sysfs number ("0x15b3\n", "-1\n"), read without dvx's sysfs helpers */
static long long read_num(const char *dir, const char *file, long long dflt)
{
	char path[PATH_MAX], buf[64];
	FILE *f;
	long long v = dflt;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "r");
	if (!f)
		return dflt;
	if (fgets(buf, sizeof(buf), f))
		v = strtoll(buf, NULL, 0);
	fclose(f);
	return v;
}

static unsigned ndevs(const struct dvx_hal *hal)
{
	unsigned n = 99;

	assert_int_equal(dvx_hal_nic_list(hal, NULL, 0, &n), 0);
	return n;
}

static void test_dev_list(void **state)
{
	const struct dvx_hal *hal = linux_or_skip();
	struct dvx_hal_nic_info info[16];
	unsigned n, i;

	(void)state;
	assert_string_equal(hal->name, "linux");
	n = ndevs(hal);
	/* rdma-core lists what the kernel's class directory holds */
	assert_int_equal(n, count_dir("/sys/class/infiniband"));
	if (n == 0) {
		print_message("no RDMA devices on this host: the list is empty, without error\n");
		return;
	}
	assert_int_equal(dvx_hal_nic_list(hal, info, 16, &n), 0);
	for (i = 0; i < n && i < 16; i++) {
		print_message("%s pci=%s driver=%s mlx5=%u numa=%d netdev=%s\n", info[i].name,
			      info[i].pci, info[i].driver, info[i].is_mlx5, info[i].numa_node,
			      info[i].netdev);
		assert_true(info[i].name[0] != '\0');
		if (info[i].is_mlx5 && info[i].driver[0])
			assert_int_equal(strncmp(info[i].driver, "mlx5_", 5), 0);
	}
}

static void test_open_absent(void **state)
{
	const struct dvx_hal *hal = linux_or_skip();
	struct dvx_hal_nic dev;

	(void)state;
	memset(&dev, 0, sizeof(dev));
	assert_int_equal(dvx_hal_nic_open(hal, "dvx_no_such_device", &dev), -ENODEV);
	assert_string_equal(dev.diag.op, "nic_open");
	assert_null(dev.priv);
	if (ndevs(hal) == 0) {
		memset(&dev, 0, sizeof(dev));
		assert_int_equal(dvx_hal_nic_open(hal, "0000:3b:00.0", &dev), -ENODEV);
		assert_true(dev.diag.msg[0] != '\0');
	}
}

static void test_host_ops(void **state)
{
	const struct dvx_hal *hal = linux_or_skip();
	static struct dvx_hal_pci_dev pci[512];
	struct dvx_hal_limits lim;
	struct dvx_hal_mem mem;
	struct timespec ts;
	struct rlimit rl;
	unsigned n, nb, i, bridges = 0;
	uint64_t t0, t1, mono;
	size_t k;

	(void)state;
	/* limits: what getrlimit() and sysconf() say */
	assert_int_equal(dvx_hal_limits(hal, &lim), 0);
	assert_int_equal(getrlimit(RLIMIT_MEMLOCK, &rl), 0);
	assert_int_equal(lim.memlock_cur, rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX :
					  (uint64_t)rl.rlim_cur);
	assert_int_equal(lim.memlock_max, rl.rlim_max == RLIM_INFINITY ? UINT64_MAX :
					  (uint64_t)rl.rlim_max);
	assert_int_equal(lim.page_size, (uint64_t)sysconf(_SC_PAGESIZE));

	/* PCI: every function of /sys/bus/pci/devices, each as its own files say */
	assert_int_equal(dvx_hal_pci_list(hal, 0, 0, NULL, 0, &n), 0);
	print_message("%u PCI functions visible\n", n);
	assert_int_equal(n, count_dir("/sys/bus/pci/devices"));
	assert_true(n <= DVX_ARRAY_SIZE(pci));
	assert_int_equal(dvx_hal_pci_list(hal, 0, 0, pci, n, &n), 0);
	for (i = 0; i < n; i++) {
		char dir[PATH_MAX];

		snprintf(dir, sizeof(dir), "/sys/bus/pci/devices/%.*s", (int)sizeof(pci[i].pci),
			 pci[i].pci);
		assert_int_equal(pci[i].vendor_id, read_num(dir, "vendor", -1));
		assert_int_equal(pci[i].device_id, read_num(dir, "device", -1));
		assert_int_equal(pci[i].class_code, read_num(dir, "class", -1));
		assert_int_equal(pci[i].numa_node, read_num(dir, "numa_node", -1));
		bridges += (pci[i].class_code >> 16) == 0x06;
	}
	/* the class filter keeps exactly the bridges */
	assert_int_equal(dvx_hal_pci_list(hal, 0xff0000, 0x060000, NULL, 0, &nb), 0);
	assert_int_equal(nb, bridges);

	/* memory: aligned, zeroed as asked, writable, and its kind says its page size */
	assert_int_equal(dvx_hal_mem_alloc(hal, 8192, 4096, -1, DVX_MEM_F_HUGE | DVX_MEM_F_ZERO,
					   &mem), 0);
	assert_int_equal((uintptr_t)mem.addr % 4096, 0);
	assert_true(mem.len >= 8192);
	for (k = 0; k < 8192; k++)
		assert_int_equal(((uint8_t *)mem.addr)[k], 0);
	memset(mem.addr, 0x5c, 8192);
	if (mem.kind == DVX_MEM_PAGES)
		assert_int_equal(mem.page_size, lim.page_size);
	else
		assert_true(mem.page_size > lim.page_size);
	assert_int_equal(dvx_hal_mem_free(hal, &mem), 0);

	/* the clock is CLOCK_MONOTONIC's */
	t0 = dvx_hal_now_ns(hal);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	mono = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	t1 = dvx_hal_now_ns(hal);
	assert_true(t0 <= mono && mono <= t1);
}

/* ---- the dvx-probe binary ---- */

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
	char out[65536];
	char err[4096];
};

static void drain(int fd, char *buf, size_t n)
{
	size_t len = 0;
	ssize_t r;

	while (len + 1 < n && (r = read(fd, buf + len, n - 1 - len)) > 0)
		len += (size_t)r;
	buf[len] = '\0';
	close(fd);
}

/* run dvx-probe with @args (NULL-terminated, argv[0] excluded) */
static void probe(struct run *r, const char *const *args)
{
	char bin[PATH_MAX + 16];
	char *argv[8];
	int po[2], pe[2], status, i;
	pid_t pid;

	snprintf(bin, sizeof(bin), "%.*s/dvx-probe", PATH_MAX - 16, tools_dir);
	if (access(bin, X_OK)) {
		print_message("%s not built ('make tools', or set DVX_TOOLS_DIR)\n", bin);
		skip();
	}
	argv[0] = bin;
	for (i = 0; args[i] && i < 6; i++)
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
	/* stdout first: small enough for stderr's pipe buffer to hold the rest */
	drain(po[0], r->out, sizeof(r->out));
	drain(pe[0], r->err, sizeof(r->err));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	r->rc = WEXITSTATUS(status);
}

static struct run R;

static void test_probe_binary(void **state)
{
	static const char *const none[] = { NULL };
	static const char *const json[] = { "--json", NULL };
	static const char *const help[] = { "--help", NULL };
	static const char *const bad[] = { "--no-such-option", NULL };
	static const char *const absent[] = { "--dev", "0000:ff:1f.7", NULL };
	const struct dvx_hal *hal = linux_or_skip();
	char why[96];

	(void)state;
	if (find_tools()) {
		print_message("cannot locate the tools directory; set DVX_TOOLS_DIR\n");
		skip();
	}
	probe(&R, help);
	assert_int_equal(R.rc, 0);
	assert_non_null(strstr(R.out, "usage: dvx-probe"));
	probe(&R, bad);
	assert_int_equal(R.rc, 2);		/* usage error */
	assert_non_null(strstr(R.err, "unknown argument"));
	probe(&R, absent);
	assert_int_equal(R.rc, 3);		/* nothing found */

	if (ndevs(hal) != 0) {
		print_message("RDMA devices present: the no-device run is not checked here\n");
		probe(&R, json);
		assert_true(R.rc == 0 || R.rc == 1 || R.rc == 3);
		assert_true(dvx_test_json_check(R.out, why, sizeof(why)));
		return;
	}
	probe(&R, none);
	assert_int_equal(R.rc, 3);
	assert_non_null(strstr(R.err, "no mlx5 device"));
	assert_non_null(strstr(R.out, "linux backend, 0 RDMA devices"));
	probe(&R, json);
	assert_int_equal(R.rc, 3);
	if (!dvx_test_json_check(R.out, why, sizeof(why)))
		fail_msg("dvx-probe --json: %s", why);
	assert_non_null(strstr(R.out, "\"status\": \"no_device\""));
	assert_non_null(strstr(R.err, "no mlx5 device"));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dev_list),
		cmocka_unit_test(test_open_absent),
		cmocka_unit_test(test_host_ops),
		cmocka_unit_test(test_probe_binary),
	};

	(void)argc;
	argv0 = argv[0];
	return cmocka_run_group_tests_name("hal-linux", tests, NULL, NULL);
}
