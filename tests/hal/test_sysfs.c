// SPDX-License-Identifier: MIT
/*
 * hal/sysfs.c against a fake sysfs tree built in a temporary directory:
 *
 *   devices/pci0000:00/0000:00:01.0                        root port
 *     0000:01:00.0                                         switch upstream port
 *       0000:02:00.0/0000:03:00.0                          ConnectX-7, mlx5_core -> mlx5_0
 *         mlx5_core.sf.2                                   a sub-function -> mlx5_2
 *       0000:02:01.0/0000:04:00.0                          NVIDIA H100 (3D controller)
 *       0000:02:01.0/0000:04:00.1                          NVIDIA audio (not a GPU)
 *   devices/pci0000:00/0000:00:02.0/0000:05:00.0           Intel E810, irdma -> "mlx5_fake"
 *   devices/pci0000:80/0000:80:01.0/0000:81:00.0           NVIDIA GPU on the other socket
 *   devices/pci0000:80/0000:80:02.0/0000:82:00.0           Mellanox, no driver link -> mlx5_3
 *   devices/virtual/rxe0                                   a soft RoCE device, no PCI
 */
#include <errno.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/dvx_test.h"

#include "../../hal/sysfs.h"

static char root[PATH_MAX];

/* snprintf that asserts the path fit (and keeps gcc's truncation analysis quiet) */
static void pf(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void pf(char *out, size_t n, const char *fmt, ...)
{
	va_list ap;
	int l;

	va_start(ap, fmt);
	l = vsnprintf(out, n, fmt, ap);
	va_end(ap);
	assert_true(l >= 0 && (size_t)l < n);
}

static void mkdirs(const char *rel)
{
	char path[PATH_MAX], *p;

	pf(path, sizeof(path), "%s/%s", root, rel);
	for (p = path + strlen(root) + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	mkdir(path, 0755);
}

static void put(const char *rel, const char *content)
{
	char path[PATH_MAX];
	FILE *f;

	pf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(content, f);
	fclose(f);
}

static void link_to(const char *rel, const char *target_rel)
{
	char path[PATH_MAX], target[PATH_MAX];

	pf(path, sizeof(path), "%s/%s", root, rel);
	pf(target, sizeof(target), "%s/%s", root, target_rel);
	assert_int_equal(symlink(target, path), 0);
}

static void pci_fn(const char *dir, const char *addr, const char *vendor, const char *device,
		   const char *cls, const char *numa, const char *driver)
{
	char rel[PATH_MAX], buf[PATH_MAX];

	mkdirs(dir);
	pf(rel, sizeof(rel), "%s/vendor", dir);
	put(rel, vendor);
	pf(rel, sizeof(rel), "%s/device", dir);
	put(rel, device);
	pf(rel, sizeof(rel), "%s/class", dir);
	put(rel, cls);
	pf(rel, sizeof(rel), "%s/numa_node", dir);
	put(rel, numa);
	if (driver) {
		pf(buf, sizeof(buf), "bus/pci/drivers/%s", driver);
		mkdirs(buf);
		pf(rel, sizeof(rel), "%s/driver", dir);
		link_to(rel, buf);
	}
	pf(rel, sizeof(rel), "bus/pci/devices/%s", addr);
	link_to(rel, dir);
}

static void ib_dev(const char *name, const char *device_dir, const char *guid, int nports)
{
	char rel[PATH_MAX];
	int p;

	pf(rel, sizeof(rel), "class/infiniband/%s", name);
	mkdirs(rel);
	if (device_dir) {
		pf(rel, sizeof(rel), "class/infiniband/%s/device", name);
		link_to(rel, device_dir);
	}
	pf(rel, sizeof(rel), "class/infiniband/%s/node_guid", name);
	put(rel, guid);
	for (p = 1; p <= nports; p++) {
		pf(rel, sizeof(rel), "class/infiniband/%s/ports/%d", name, p);
		mkdirs(rel);
	}
}

#define NIC "devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0"
#define GPU "devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0/0000:04:00.0"
#define AUDIO "devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0/0000:04:00.1"
#define E810 "devices/pci0000:00/0000:00:02.0/0000:05:00.0"
#define GPU_FAR "devices/pci0000:80/0000:80:01.0/0000:81:00.0"
#define NODRV "devices/pci0000:80/0000:80:02.0/0000:82:00.0"

static int build_tree(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "%s/dvx-sysfs-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(root));
	mkdirs("bus/pci/devices");

	pci_fn(NIC, "0000:03:00.0", "0x15b3\n", "0x1021\n", "0x020000\n", "0\n", "mlx5_core");
	pci_fn(GPU, "0000:04:00.0", "0x10de\n", "0x2330\n", "0x030200\n", "0\n", "nvidia");
	pci_fn(AUDIO, "0000:04:00.1", "0x10de\n", "0x22a3\n", "0x040300\n", "0\n", NULL);
	pci_fn(E810, "0000:05:00.0", "0x8086\n", "0x159b\n", "0x020000\n", "0\n", "irdma");
	pci_fn(GPU_FAR, "0000:81:00.0", "0x10de\n", "0x2330\n", "0x030200\n", "1\n", "nvidia");
	pci_fn(NODRV, "0000:82:00.0", "0x15b3\n", "0x101d\n", "0x020700\n", "-1\n", NULL);

	/* the NIC's netdevs: the port-2 one sorts first, dev_port picks port 1's */
	mkdirs(NIC "/net/aaa_p2");
	put(NIC "/net/aaa_p2/dev_port", "1\n");
	mkdirs(NIC "/net/ens1f0np0");
	put(NIC "/net/ens1f0np0/dev_port", "0\n");

	/* a sub-function: an auxiliary device below the PF with its own driver */
	mkdirs(NIC "/mlx5_core.sf.2");
	mkdirs("bus/auxiliary/drivers/mlx5_core.sf");
	link_to(NIC "/mlx5_core.sf.2/driver", "bus/auxiliary/drivers/mlx5_core.sf");

	mkdirs("devices/virtual/rxe0");

	ib_dev("mlx5_0", NIC, "9c63:c003:00a1:b2c4\n", 1);
	ib_dev("mlx5_fake", E810, "0011:2233:4455:6677\n", 1);	/* named like mlx5, is not */
	ib_dev("mlx5_2", NIC "/mlx5_core.sf.2", "9c63:c003:00a1:b2c5\n", 1);
	ib_dev("mlx5_3", NODRV, "9c63:c003:00a1:0000\n", 2);
	ib_dev("rxe0", "devices/virtual/rxe0", "0000:0000:0000:0001\n", 1);
	/* RoCE netdev of mlx5_3's port 1, from the GID table attributes */
	mkdirs("class/infiniband/mlx5_3/ports/1/gid_attrs/ndevs");
	put("class/infiniband/mlx5_3/ports/1/gid_attrs/ndevs/0", "ib_roce0\n");
	return 0;
}

static int remove_tree(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static const struct dvx_hal_nic_info *by_name(const struct dvx_hal_nic_info *info, unsigned n,
					      const char *name)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (strcmp(info[i].name, name) == 0)
			return &info[i];
	fail_msg("device %s not listed", name);
	return NULL;
}

static void test_ib_list(void **state)
{
	struct dvx_hal_nic_info info[8];
	const struct dvx_hal_nic_info *d;
	unsigned n;

	(void)state;
	assert_int_equal(dvx_sysfs_ib_list(root, info, 8, &n), 0);
	assert_int_equal(n, 5);
	/* name order */
	assert_string_equal(info[0].name, "mlx5_0");
	assert_string_equal(info[1].name, "mlx5_2");
	assert_string_equal(info[4].name, "rxe0");

	d = by_name(info, n, "mlx5_0");
	assert_int_equal(d->is_mlx5, 1);
	assert_string_equal(d->driver, "mlx5_core");
	assert_string_equal(d->pci, "0000:03:00.0");
	assert_int_equal(d->numa_node, 0);
	assert_int_equal(d->vendor_id, 0x15b3);
	assert_int_equal(d->device_id, 0x1021);
	assert_int_equal(d->nports, 1);
	assert_true(d->node_guid == 0x9c63c00300a1b2c4ull);
	assert_string_equal(d->netdev, "ens1f0np0");

	/* an "mlx5" name on an irdma device is not mlx5 */
	d = by_name(info, n, "mlx5_fake");
	assert_int_equal(d->is_mlx5, 0);
	assert_string_equal(d->driver, "irdma");
	assert_int_equal(d->vendor_id, 0x8086);
	assert_string_equal(d->pci, "0000:05:00.0");

	/* a sub-function: mlx5 by its auxiliary driver, PCI address of its parent PF */
	d = by_name(info, n, "mlx5_2");
	assert_int_equal(d->is_mlx5, 1);
	assert_string_equal(d->driver, "mlx5_core.sf");
	assert_string_equal(d->pci, "0000:03:00.0");
	assert_int_equal(d->vendor_id, 0x15b3);

	/* no driver link visible: decided by the vendor id */
	d = by_name(info, n, "mlx5_3");
	assert_int_equal(d->is_mlx5, 1);
	assert_string_equal(d->driver, "");
	assert_int_equal(d->numa_node, -1);
	assert_int_equal(d->nports, 2);
	assert_string_equal(d->netdev, "ib_roce0");

	/* a soft device without PCI function */
	d = by_name(info, n, "rxe0");
	assert_int_equal(d->is_mlx5, 0);
	assert_string_equal(d->pci, "");
	assert_int_equal(d->numa_node, -1);

	/* count beyond max: the number present, only max written */
	memset(info, 0, sizeof(info));
	assert_int_equal(dvx_sysfs_ib_list(root, info, 2, &n), 0);
	assert_int_equal(n, 5);
	assert_string_equal(info[1].name, "mlx5_2");
	assert_string_equal(info[2].name, "");
}

static void test_ib_missing(void **state)
{
	struct dvx_hal_nic_info info[2];
	char dir[PATH_MAX + 32];
	unsigned n = 7;

	(void)state;
	pf(dir, sizeof(dir), "%s/nonexistent", root);
	assert_int_equal(dvx_sysfs_ib_list(dir, info, 2, &n), 0);	/* no RDMA: 0 devices */
	assert_int_equal(n, 0);
	pf(dir, sizeof(dir), "%s/class/infiniband/mlx5_9", root);
	assert_int_equal(dvx_sysfs_ib_dev_info(dir, "mlx5_9", &info[0]), -ENOENT);
	assert_int_equal(dvx_sysfs_ib_list(root, NULL, 1, &n), -EINVAL);
}

static void test_pci_list(void **state)
{
	struct dvx_hal_pci_dev d[16];
	const char *nic_path = NULL, *gpu_path = NULL;
	unsigned n, i;

	(void)state;
	assert_int_equal(dvx_sysfs_pci_list(root, 0, 0, d, 16, &n), 0);
	assert_int_equal(n, 6);
	for (i = 1; i < n; i++)
		assert_true(strcmp(d[i - 1].pci, d[i].pci) < 0);	/* address order */
	for (i = 0; i < n; i++) {
		if (strcmp(d[i].pci, "0000:03:00.0") == 0)
			nic_path = d[i].path;
		if (strcmp(d[i].pci, "0000:04:00.0") == 0)
			gpu_path = d[i].path;
	}
	assert_non_null(nic_path);
	assert_non_null(gpu_path);
	/* realpaths: the NIC and the GPU share the switch's upstream port */
	assert_non_null(strstr(nic_path, NIC));
	assert_non_null(strstr(gpu_path, GPU));
	for (i = 0; nic_path[i] && nic_path[i] == gpu_path[i]; i++)
		;
	/* the paths part inside the switch: ".../0000:01:00.0/0000:02:0" is shared */
	assert_true(i > 23);
	assert_memory_equal(nic_path + i - 23, "/0000:01:00.0/0000:02:0", 23);

	/* display controllers of any subclass: the two GPUs, not the audio function */
	assert_int_equal(dvx_sysfs_pci_list(root, 0xff0000, 0x030000, d, 16, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(d[0].pci, "0000:04:00.0");
	assert_int_equal(d[0].vendor_id, 0x10de);
	assert_int_equal(d[0].device_id, 0x2330);
	assert_int_equal(d[0].class_code, 0x030200);
	assert_int_equal(d[0].numa_node, 0);
	assert_string_equal(d[1].pci, "0000:81:00.0");
	assert_int_equal(d[1].numa_node, 1);

	/* InfiniBand controllers; count without storage */
	assert_int_equal(dvx_sysfs_pci_list(root, 0xffff00, 0x020700, NULL, 0, &n), 0);
	assert_int_equal(n, 1);
}

static void test_pci_normalize(void **state)
{
	char out[DVX_HAL_PCI_MAX];

	(void)state;
	assert_int_equal(dvx_sysfs_pci_normalize("0000:3b:00.0", out), 0);
	assert_string_equal(out, "0000:3b:00.0");
	assert_int_equal(dvx_sysfs_pci_normalize("3B:00.1", out), 0);
	assert_string_equal(out, "0000:3b:00.1");
	assert_int_equal(dvx_sysfs_pci_normalize("0001:AF:1f.7", out), 0);
	assert_string_equal(out, "0001:af:1f.7");
	assert_int_equal(dvx_sysfs_pci_normalize("mlx5_0", out), -EINVAL);
	assert_int_equal(dvx_sysfs_pci_normalize("3b:00.8", out), -EINVAL);	/* fn 0-7 */
	assert_int_equal(dvx_sysfs_pci_normalize("3b:20.0", out), -EINVAL);	/* slot 0-1f */
	assert_int_equal(dvx_sysfs_pci_normalize("3b:00.0x", out), -EINVAL);
	assert_int_equal(dvx_sysfs_pci_normalize("", out), -EINVAL);
	assert_int_equal(dvx_sysfs_pci_normalize("0000-3b:00.0", out), -EINVAL);
}

static void test_read(void **state)
{
	char path[PATH_MAX + 32], buf[8];
	uint64_t v;

	(void)state;
	pf(path, sizeof(path), "%s/" NIC "/vendor", root);
	assert_int_equal(dvx_sysfs_read_u64(path, &v), 0);
	assert_int_equal(v, 0x15b3);
	pf(path, sizeof(path), "%s/" NODRV "/numa_node", root);
	assert_int_equal(dvx_sysfs_read_u64(path, &v), 0);
	assert_int_equal((int64_t)v, -1);
	put("num", "  42\n");
	pf(path, sizeof(path), "%s/num", root);
	assert_int_equal(dvx_sysfs_read_u64(path, &v), 0);
	assert_int_equal(v, 42);
	put("bad", "12abc\n");
	pf(path, sizeof(path), "%s/bad", root);
	assert_int_equal(dvx_sysfs_read_u64(path, &v), -EINVAL);
	put("word", "mlx5_core_long\n");
	pf(path, sizeof(path), "%s/word", root);
	assert_int_equal(dvx_sysfs_read_str(path, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "mlx5_co");	/* cut to the buffer, terminated */
	pf(path, sizeof(path), "%s/none", root);
	assert_int_equal(dvx_sysfs_read_str(path, buf, sizeof(buf)), -ENOENT);
	assert_string_equal(buf, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ib_list),
		cmocka_unit_test(test_ib_missing),
		cmocka_unit_test(test_pci_list),
		cmocka_unit_test(test_pci_normalize),
		cmocka_unit_test(test_read),
	};

	return cmocka_run_group_tests_name("hal-sysfs", tests, build_tree, remove_tree);
}
