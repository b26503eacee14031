// SPDX-License-Identifier: MIT
/*
 * dvx-probe's logic (tools/probe-lib.c) driven by the mock hal: the table and the
 * JSON document for a ConnectX-7, a device that fails to open, a device whose
 * QUERY_HCA_CAP fails with a DEVX status, no mlx5 device at all, the memlock
 * warning, the command line, and every hal call of the probe failed in turn.
 */
#include <errno.h>

#include "../lib/dvx_test.h"
#include "../lib/dvx_json.h"
#include <dvx/testing/cx7.h>

#include <dvx/mlx5/caps.h>

#include "../../tools/probe-lib.h"

static struct dvx_mock M;

/* the probe's output, captured */
struct cap {
	char *out;
	size_t outlen;
	char *err;
	size_t errlen;
	int rc;
};

static void cap_free(struct cap *c)
{
	/* DVX_TEST_SHOW=1 prints every report the probe wrote */
	if (getenv("DVX_TEST_SHOW"))
		fprintf(stderr, "---- rc %d ----\n%s%s", c->rc, c->out ? c->out : "",
			c->err ? c->err : "");
	free(c->out);
	free(c->err);
	memset(c, 0, sizeof(*c));
}

static void run_opts(struct cap *c, int json, const char *dev)
{
	struct dvx_probe_opts o;
	FILE *out, *err;

	memset(c, 0, sizeof(*c));
	out = open_memstream(&c->out, &c->outlen);
	err = open_memstream(&c->err, &c->errlen);
	assert_non_null(out);
	assert_non_null(err);
	memset(&o, 0, sizeof(o));
	o.json = json;
	o.dev = dev;
	o.out = out;
	o.err = err;
	c->rc = dvx_probe_run(dvx_mock_hal(&M), &o);
	fclose(out);
	fclose(err);
}

static void run_main(struct cap *c, const struct dvx_hal *hal, int argc, const char **argv)
{
	FILE *out, *err;

	memset(c, 0, sizeof(*c));
	out = open_memstream(&c->out, &c->outlen);
	err = open_memstream(&c->err, &c->errlen);
	c->rc = dvx_probe_main(hal, argc, (char **)argv, out, err);
	fclose(out);
	fclose(err);
}

#define assert_has(hay, needle)                                                            \
	do {                                                                               \
		if (!strstr((hay), (needle)))                                              \
			fail_msg("\"%s\" not found in:\n%s", (needle), (hay));             \
	} while (0)
#define assert_lacks(hay, needle)                                                          \
	do {                                                                               \
		if (strstr((hay), (needle)))                                               \
			fail_msg("\"%s\" unexpectedly found in:\n%s", (needle), (hay));    \
	} while (0)

static void assert_json(const char *s)
{
	char why[96];

	if (!dvx_test_json_check(s, why, sizeof(why)))
		fail_msg("invalid JSON (%s):\n%s", why, s);
}

/* the line of the table whose label is @label: the label must be followed by @want */
static void assert_row(const char *table, const char *label, const char *want)
{
	const char *p = table;
	size_t ll = strlen(label);

	while ((p = strstr(p, label)) != NULL) {
		const char *eol = strchr(p, '\n');
		const char *v = p + ll;

		while (*v == ' ')
			v++;
		if ((p == table || p[-1] == ' ' || p[-1] == '\n') && (!eol || v < eol) &&
		    strncmp(v, want, strlen(want)) == 0)
			return;
		p += ll;
	}
	fail_msg("no row \"%s  %s\" in:\n%s", label, want, table);
}

static void add_pci(const char *addr, uint32_t vendor, uint32_t device, uint32_t cls, int numa,
		    const char *path)
{
	struct dvx_hal_pci_dev d;

	memset(&d, 0, sizeof(d));
	strcpy(d.pci, addr);
	d.vendor_id = vendor;
	d.device_id = device;
	d.class_code = cls;
	d.numa_node = numa;
	snprintf(d.path, sizeof(d.path), "/sys/devices/%s", path);
	assert_int_equal(dvx_mock_add_pci(&M, &d), 0);
}

#define SW "pci0000:00/0000:00:01.0/0000:01:00.0"

/* one ConnectX-7 below a PCIe switch with an H100, another GPU on socket 1 */
static int setup_cx7(void **state)
{
	struct dvx_mock_nic_cfg cfg;

	(void)state;
	dvx_mock_init(&M);
	dvx_test_mock_cx7(&cfg, "mlx5_0", "0000:03:00.0", 0);
	assert_int_equal(dvx_mock_add_nic(&M, &cfg), 0);
	add_pci("0000:00:01.0", 0x8086, 0x1234, 0x060400, 0, "pci0000:00/0000:00:01.0");
	add_pci("0000:01:00.0", 0x1000, 0xc030, 0x060400, 0, SW);
	add_pci("0000:03:00.0", 0x15b3, 0x1021, 0x020000, 0, SW "/0000:02:00.0/0000:03:00.0");
	add_pci("0000:04:00.0", 0x10de, 0x2330, 0x030200, 0, SW "/0000:02:01.0/0000:04:00.0");
	add_pci("0000:04:00.1", 0x10de, 0x22a3, 0x040300, 0, SW "/0000:02:01.0/0000:04:00.1");
	add_pci("0000:81:00.0", 0x10de, 0x2330, 0x030200, 1,
		"pci0000:80/0000:80:01.0/0000:81:00.0");
	return 0;
}

/* ... plus a second device that cannot be opened, a third whose atomic caps query
 * fails with a DEVX status, and an irdma device named like an mlx5 one */
static int setup_mixed(void **state)
{
	struct dvx_mock_nic_cfg cfg;

	setup_cx7(state);
	dvx_test_mock_cx7(&cfg, "mlx5_1", "0000:3c:00.0", 1);
	cfg.open_err = -EACCES;
	assert_int_equal(dvx_mock_add_nic(&M, &cfg), 1);
	dvx_test_mock_cx7(&cfg, "mlx5_2", "0000:3d:00.0", 1);
	assert_int_equal(dvx_mock_add_nic(&M, &cfg), 2);
	assert_int_equal(dvx_mock_fail_devx(&M, 2, DVX_MLX5_CMD_QUERY_HCA_CAP,
					    DVX_MLX5_CAP_TYPE_ATOMIC << 1 | 1, 0x03, 0x12ab34cdu,
					    0),
			 0);
	dvx_mock_nic_cfg_init(&cfg, "mlx5_fake", "0000:05:00.0");
	strcpy(cfg.info.driver, "irdma");
	cfg.info.vendor_id = 0x8086;
	cfg.info.is_mlx5 = 0;
	assert_int_equal(dvx_mock_add_nic(&M, &cfg), 3);
	return 0;
}

static void test_table_cx7(void **state)
{
	struct cap c;

	(void)state;
	run_opts(&c, 0, NULL);
	assert_int_equal(c.rc, DVX_PROBE_OK);
	assert_has(c.out, "\nmlx5_0\n");
	assert_row(c.out, "PCI address", "0000:03:00.0");
	assert_row(c.out, "NUMA node", "0");
	assert_row(c.out, "driver", "mlx5_core (15b3:1021)");
	assert_row(c.out, "netdev", DVX_TEST_CX7_NETDEV);
	assert_row(c.out, "nearest GPU", "0000:04:00.0 (10de:2330, NUMA 0, PXB)");
	assert_row(c.out, "firmware", "28.39.1002");
	assert_row(c.out, "node GUID", "9c63:c003:00a1:b2c4");
	assert_row(c.out, "core-direct (cd)", "yes");
	assert_row(c.out, "atomic operations", "CS FA masked-CS masked-FA (0x000f)");
	assert_row(c.out, "atomic sizes (QP)", "4B 8B (0x000c)");
	assert_row(c.out, "8B atomic result order", "host endian (mode 1); mode 1 supported: yes");
	assert_row(c.out, "max SQ size", "32768 WQEBBs (log_max_qp_sz 15)");
	assert_row(c.out, "max CQ size", "4194304 CQEs (log_max_cq_sz 22)");
	assert_row(c.out, "max_qp_rd_atom", "16");
	assert_row(c.out, "BlueFlame", "yes, 512-byte registers (log_bf_reg_size 9)");
	assert_row(c.out, "port type", "Ethernet (RoCE)");
	assert_row(c.out, "cqe_version", "1");
	assert_row(c.out, "max_wqe_sz_sq", "1024 bytes");
	assert_row(c.out, "relaxed ordering", "write yes, read no, read with PCIe RO yes");
	assert_row(c.out, "force-loopback RC QP", "RoCE enabled: yes, RoCE disabled: yes");
	assert_row(c.out, "WAIT on data / on time", "yes / yes");
	assert_row(c.out, "send_dbr_mode_no_dbr_ext", "yes");
	assert_row(c.out, "port 1", "ACTIVE, Ethernet, MTU 4096");
	assert_has(c.out, "fe80::9e63:c0ff:fe00:1");
	assert_has(c.out, "::ffff:" DVX_TEST_CX7_IPV4);
	assert_row(c.out, "GID 3", "::ffff:" DVX_TEST_CX7_IPV4);
	assert_has(c.out, "RoCE v2  " DVX_TEST_CX7_NETDEV);
	assert_has(c.out, "RoCE v1");
	assert_lacks(c.out, "GID 4");		/* empty entries are not listed */
	assert_row(c.out, "RLIMIT_MEMLOCK:", "unlimited");
	assert_lacks(c.out, "WARNING");
	assert_lacks(c.out, "error");
	assert_int_equal(c.errlen, 0);
	/* everything opened was closed */
	assert_int_equal(dvx_mock_live_total(&M), 0);
	assert_int_equal(dvx_mock_count(&M, DVX_MOCK_OP_NIC_OPEN), 1);
	assert_int_equal(dvx_mock_count(&M, DVX_MOCK_OP_NIC_CLOSE), 1);
	/* the four capability pages, current values */
	assert_int_equal(dvx_mock_count(&M, DVX_MOCK_OP_DEVX_CMD), 4);
	assert_int_equal(dvx_mock_find(&M, DVX_MOCK_OP_DEVX_CMD, 0)->prm_op_mod, 0x1);
	assert_int_equal(dvx_mock_find(&M, DVX_MOCK_OP_DEVX_CMD, 1)->prm_op_mod, 0x7);
	assert_int_equal(dvx_mock_find(&M, DVX_MOCK_OP_DEVX_CMD, 2)->prm_op_mod, 0x9);
	assert_int_equal(dvx_mock_find(&M, DVX_MOCK_OP_DEVX_CMD, 3)->prm_op_mod, 0x41);
	cap_free(&c);
}

static void test_json_cx7(void **state)
{
	struct cap c;

	(void)state;
	run_opts(&c, 1, NULL);
	assert_int_equal(c.rc, DVX_PROBE_OK);
	assert_json(c.out);
	assert_has(c.out, "\"status\": \"ok\"");
	assert_has(c.out, "\"exit_code\": 0");
	assert_has(c.out, "\"name\": \"mlx5_0\"");
	assert_has(c.out, "\"pci\": \"0000:03:00.0\"");
	assert_has(c.out, "\"numa_node\": 0");
	assert_has(c.out, "\"driver\": \"mlx5_core\"");
	assert_has(c.out, "\"device_id\": \"0x1021\"");
	assert_has(c.out, "\"relation\": \"PXB\"");
	assert_has(c.out, "\"fw_ver\": \"28.39.1002\"");
	assert_has(c.out, "\"node_guid\": \"9c63:c003:00a1:b2c4\"");
	assert_has(c.out, "\"cd\": true");
	assert_has(c.out, "\"masked_fa\": true");
	assert_has(c.out, "\"4B\": true");
	assert_has(c.out, "\"atomic_8B_result_order\": \"host\"");
	assert_has(c.out, "\"atomic_8B_endianness_mode_1_supported\": true");
	assert_has(c.out, "\"log_max_qp_sz\": 15");
	assert_has(c.out, "\"max_sq_wqebbs\": 32768");
	assert_has(c.out, "\"max_cqes\": 4194304");
	assert_has(c.out, "\"max_qp_rd_atom\": 16");
	assert_has(c.out, "\"bf_reg_size\": 512");
	assert_has(c.out, "\"port_type\": \"Ethernet\"");
	assert_has(c.out, "\"cqe_version\": 1");
	assert_has(c.out, "\"max_wqe_sz_sq\": 1024");
	assert_has(c.out, "\"fl_rc_qp_when_roce_enabled\": true");
	assert_has(c.out, "\"wait_on_data\": true");
	assert_has(c.out, "\"send_dbr_mode_no_dbr_ext\": true");
	assert_has(c.out, "\"state\": \"ACTIVE\"");
	assert_has(c.out, "\"link_layer\": \"Ethernet\"");
	assert_has(c.out, "\"active_mtu\": 4096");
	assert_has(c.out, "\"gid\": \"::ffff:" DVX_TEST_CX7_IPV4 "\"");
	assert_has(c.out, "\"type\": \"RoCE v2\"");
	assert_has(c.out, "\"netdev\": \"" DVX_TEST_CX7_NETDEV "\"");
	assert_has(c.out, "\"unlimited\": true");
	assert_has(c.out, "\"warning\": null");
	assert_has(c.out, "\"errors\": []");
	assert_int_equal(dvx_mock_live_total(&M), 0);
	cap_free(&c);
}

static void test_mixed(void **state)
{
	struct cap c;

	(void)state;
	run_opts(&c, 0, NULL);
	/* some devices failed: reported, and the exit status says so */
	assert_int_equal(c.rc, DVX_PROBE_ERROR);
	/* mlx5_0 is fine */
	assert_row(c.out, "firmware", "28.39.1002");
	/* mlx5_1 is listed with the errno and the backend's words */
	assert_has(c.out, "\nmlx5_1\n");
	assert_has(c.out, "error: nic_open: EACCES (13): DEVX open failed");
	assert_row(c.out, "status", "could not be opened");
	/* mlx5_2: the DEVX status and syndrome, and the probe went on */
	assert_has(c.out, "\nmlx5_2\n");
	assert_has(c.out, "error: devx_cmd QUERY_HCA_CAP atomic (op_mod 0x7): EINVAL (22), "
			  "DEVX status 0x03 (BAD_PARAM) syndrome 0x12ab34cd");
	assert_row(c.out, "atomic caps", "unknown (QUERY_HCA_CAP failed)");
	assert_has(strstr(c.out, "\nmlx5_2\n"), "core-direct (cd)");
	assert_has(strstr(c.out, "\nmlx5_2\n"), "port 1");
	/* the nearest GPU of the socket-1 devices with no PCI path known: by NUMA node */
	assert_has(strstr(c.out, "\nmlx5_2\n"), "0000:81:00.0 (10de:2330, NUMA 1, path unknown)");
	/* the irdma device is not mlx5, whatever its name */
	assert_has(c.out, "not mlx5 (dvx drives mlx5 only):\n  mlx5_fake");
	assert_has(c.out, "driver irdma");
	assert_lacks(c.out, "\nmlx5_fake\n");
	assert_int_equal(dvx_mock_live_total(&M), 0);
	cap_free(&c);

	run_opts(&c, 1, NULL);
	assert_int_equal(c.rc, DVX_PROBE_ERROR);
	assert_json(c.out);
	assert_has(c.out, "\"status\": \"error\"");
	assert_has(c.out, "\"opened\": false");
	assert_has(c.out, "\"errno_name\": \"EACCES\"");
	assert_has(c.out, "\"devx_status\": \"0x03\"");
	assert_has(c.out, "\"devx_status_name\": \"BAD_PARAM\"");
	assert_has(c.out, "\"devx_syndrome\": \"0x12ab34cd\"");
	assert_has(c.out, "\"devx_opcode\": \"0x100\"");
	assert_has(c.out, "\"atomic_valid\": false");
	assert_has(c.out, "\"other_devices\": [");
	assert_has(c.out, "\"driver\": \"irdma\"");
	assert_int_equal(dvx_mock_live_total(&M), 0);
	cap_free(&c);
}

static void test_dev_filter(void **state)
{
	const char *by_pci[] = { "dvx-probe", "--dev", "3d:00.0" };
	const char *by_name[] = { "dvx-probe", "--dev=mlx5_0", "--json" };
	const char *not_mlx5[] = { "dvx-probe", "--dev", "mlx5_fake" };
	const char *nothing[] = { "dvx-probe", "--dev", "mlx5_7" };
	struct cap c;

	(void)state;
	run_main(&c, dvx_mock_hal(&M), 3, by_pci);
	assert_int_equal(c.rc, DVX_PROBE_ERROR);	/* mlx5_2 has its atomic failure */
	assert_has(c.out, "\nmlx5_2\n");
	assert_lacks(c.out, "\nmlx5_0\n");
	assert_lacks(c.out, "mlx5_fake");
	cap_free(&c);

	run_main(&c, dvx_mock_hal(&M), 3, by_name);
	assert_int_equal(c.rc, DVX_PROBE_OK);
	assert_json(c.out);
	assert_has(c.out, "\"name\": \"mlx5_0\"");
	assert_lacks(c.out, "mlx5_1");
	cap_free(&c);

	run_main(&c, dvx_mock_hal(&M), 3, not_mlx5);
	assert_int_equal(c.rc, DVX_PROBE_NO_DEVICE);
	assert_has(c.err, "mlx5_fake is driven by irdma, not mlx5");
	cap_free(&c);

	run_main(&c, dvx_mock_hal(&M), 3, nothing);
	assert_int_equal(c.rc, DVX_PROBE_NO_DEVICE);
	assert_has(c.err, "no mlx5 device named or at \"mlx5_7\"");
	cap_free(&c);
	assert_int_equal(dvx_mock_live_total(&M), 0);
}

static void test_no_device(void **state)
{
	struct dvx_mock_nic_cfg cfg;
	struct cap c;

	(void)state;
	dvx_mock_init(&M);
	run_opts(&c, 0, NULL);
	assert_int_equal(c.rc, DVX_PROBE_NO_DEVICE);
	assert_has(c.err, "no mlx5 device found");
	assert_has(c.out, "0 RDMA devices, 0 mlx5");
	cap_free(&c);

	run_opts(&c, 1, NULL);
	assert_int_equal(c.rc, DVX_PROBE_NO_DEVICE);
	assert_json(c.out);
	assert_has(c.out, "\"status\": \"no_device\"");
	assert_has(c.out, "\"exit_code\": 3");
	assert_has(c.out, "\"devices\": []");
	cap_free(&c);

	/* only non-mlx5 devices */
	dvx_mock_nic_cfg_init(&cfg, "mlx5_fake", "0000:05:00.0");
	strcpy(cfg.info.driver, "irdma");
	cfg.info.is_mlx5 = 0;
	dvx_mock_add_nic(&M, &cfg);
	run_opts(&c, 0, NULL);
	assert_int_equal(c.rc, DVX_PROBE_NO_DEVICE);
	assert_has(c.err, "no mlx5 device found (1 other RDMA device)");
	assert_has(c.out, "mlx5_fake");
	assert_int_equal(dvx_mock_count(&M, DVX_MOCK_OP_NIC_OPEN), 0);
	cap_free(&c);
}

static void test_memlock_warning(void **state)
{
	struct cap c;

	(void)state;
	M.limits.memlock_cur = 8u << 20;
	M.limits.memlock_max = 8u << 20;
	run_opts(&c, 0, NULL);
	assert_int_equal(c.rc, DVX_PROBE_OK);	/* a warning, not an error */
	assert_row(c.out, "RLIMIT_MEMLOCK:", "8 MiB (hard 8 MiB)");
	assert_has(c.out, "WARNING: RLIMIT_MEMLOCK is 8 MiB, below 64 MiB: memory registrations");
	assert_has(c.out, "may fail");
	cap_free(&c);

	run_opts(&c, 1, NULL);
	assert_json(c.out);
	assert_has(c.out, "\"soft_bytes\": 8388608");
	assert_has(c.out, "\"warning\": \"RLIMIT_MEMLOCK is 8 MiB");
	assert_has(c.err, "warning");
	cap_free(&c);

	M.limits.memlock_cur = 128u << 20;
	M.limits.memlock_max = UINT64_MAX;
	run_opts(&c, 0, NULL);
	assert_row(c.out, "RLIMIT_MEMLOCK:", "128 MiB (hard unlimited)");
	assert_lacks(c.out, "WARNING");
	cap_free(&c);
}

static void test_json_escaping(void **state)
{
	struct dvx_mock_nic_cfg cfg;
	struct cap c;

	(void)state;
	dvx_mock_init(&M);
	dvx_test_mock_cx7(&cfg, "mlx5_\"q\\x\n\t\x01\xc3\xa9", "0000:03:00.0", -1);
	strcpy(cfg.attr.fw_ver, "fw \"1\"");
	dvx_mock_add_nic(&M, &cfg);
	run_opts(&c, 1, NULL);
	assert_int_equal(c.rc, DVX_PROBE_OK);
	assert_json(c.out);
	assert_has(c.out, "\"name\": \"mlx5_\\\"q\\\\x\\n\\t\\u0001\\u00c3\\u00a9\"");
	assert_has(c.out, "\"fw_ver\": \"fw \\\"1\\\"\"");
	assert_has(c.out, "\"nearest_gpu\": null");	/* no PCI devices configured */
	assert_has(c.out, "\"nearest_gpu_known\": true");
	cap_free(&c);
}

static void test_command_line(void **state)
{
	const char *help[] = { "dvx-probe", "--help" };
	const char *bad[] = { "dvx-probe", "--frobnicate" };
	const char *nodev[] = { "dvx-probe", "--dev" };
	const char *plain[] = { "dvx-probe" };
	struct cap c;

	(void)state;
	run_main(&c, dvx_mock_hal(&M), 2, help);
	assert_int_equal(c.rc, 0);
	assert_has(c.out, "usage: dvx-probe");
	assert_has(c.out, "--json");
	assert_int_equal(dvx_mock_calls(&M), 0);	/* --help touches no hardware */
	cap_free(&c);

	{
		const char *ver[] = { "dvx-probe", "--version" };

		run_main(&c, dvx_mock_hal(&M), 2, ver);
		assert_int_equal(c.rc, 0);
		assert_has(c.out, "dvx-probe (dvx) ");
		cap_free(&c);
	}
	run_main(&c, dvx_mock_hal(&M), 2, bad);
	assert_int_equal(c.rc, DVX_PROBE_USAGE);
	assert_has(c.err, "unknown argument \"--frobnicate\"");
	cap_free(&c);

	run_main(&c, dvx_mock_hal(&M), 2, nodev);
	assert_int_equal(c.rc, DVX_PROBE_USAGE);
	assert_has(c.err, "--dev needs");
	cap_free(&c);

	/* a libdvx without rdma-core: dvx_hal_linux() is NULL */
	run_main(&c, NULL, 1, plain);
	assert_int_equal(c.rc, DVX_PROBE_NO_DEVICE);
	assert_has(c.err, "built without rdma-core");
	cap_free(&c);
	run_main(&c, NULL, 2, help);
	assert_int_equal(c.rc, 0);
	cap_free(&c);
}

/* the hal failing outright: listing fails */
static void test_list_fails(void **state)
{
	struct cap c;

	(void)state;
	dvx_mock_fail_op(&M, DVX_MOCK_OP_NIC_LIST, -EIO);
	run_opts(&c, 0, NULL);
	assert_int_equal(c.rc, DVX_PROBE_ERROR);
	assert_has(c.err, "cannot list RDMA devices");
	assert_has(c.out, "error: nic_list: EIO (5)");
	cap_free(&c);
	run_opts(&c, 1, NULL);
	assert_json(c.out);
	assert_has(c.out, "\"op\": \"nic_list\"");
	cap_free(&c);
}

/* the nearest GPU and its relation, in nvidia-smi topo's words */
static void gpu_case(const char *nic_path, int nic_node, const char *gpu_path, int gpu_node,
		     const char *want)
{
	struct dvx_mock_nic_cfg cfg;
	struct cap c;

	dvx_mock_init(&M);
	dvx_test_mock_cx7(&cfg, "mlx5_0", "0000:03:00.0", nic_node);
	dvx_mock_add_nic(&M, &cfg);
	add_pci("0000:03:00.0", 0x15b3, 0x1021, 0x020000, nic_node, nic_path);
	add_pci("0000:04:00.0", 0x10de, 0x2330, 0x030200, gpu_node, gpu_path);
	run_opts(&c, 0, NULL);
	assert_int_equal(c.rc, DVX_PROBE_OK);
	assert_row(c.out, "nearest GPU", want);
	cap_free(&c);
}

static void test_gpu_relation(void **state)
{
	struct cap c;

	(void)state;
	/* below the same bridge: PIX */
	gpu_case(SW "/0000:02:00.0/0000:03:00.0", 0, SW "/0000:02:00.0/0000:04:00.0", 0,
		 "0000:04:00.0 (10de:2330, NUMA 0, PIX)");
	/* through the switch: PXB */
	gpu_case(SW "/0000:02:00.0/0000:03:00.0", 0, SW "/0000:02:01.0/0000:04:00.0", 0,
		 "0000:04:00.0 (10de:2330, NUMA 0, PXB)");
	/* other root port of the same host bridge: PHB */
	gpu_case(SW "/0000:02:00.0/0000:03:00.0", 0, "pci0000:00/0000:00:03.0/0000:04:00.0", 0,
		 "0000:04:00.0 (10de:2330, NUMA 0, PHB)");
	/* other host bridge, same node: NODE; other node: SYS */
	gpu_case(SW "/0000:02:00.0/0000:03:00.0", 0, "pci0000:40/0000:40:01.0/0000:04:00.0", 0,
		 "0000:04:00.0 (10de:2330, NUMA 0, NODE)");
	gpu_case(SW "/0000:02:00.0/0000:03:00.0", 0, "pci0000:80/0000:80:01.0/0000:04:00.0", 1,
		 "0000:04:00.0 (10de:2330, NUMA 1, SYS)");

	/* the nearer of two GPUs wins over list order; none at all says so */
	dvx_mock_init(&M);
	{
		struct dvx_mock_nic_cfg cfg;

		dvx_test_mock_cx7(&cfg, "mlx5_0", "0000:03:00.0", 0);
		dvx_mock_add_nic(&M, &cfg);
	}
	add_pci("0000:03:00.0", 0x15b3, 0x1021, 0x020000, 0, SW "/0000:02:00.0/0000:03:00.0");
	run_opts(&c, 0, NULL);
	assert_row(c.out, "nearest GPU", "none");
	cap_free(&c);
	add_pci("0000:01:00.0", 0x10de, 0x2330, 0x030000, 1,
		"pci0000:80/0000:80:01.0/0000:01:00.0");
	add_pci("0000:05:00.0", 0x10de, 0x2331, 0x030200, 0, SW "/0000:02:00.0/0000:05:00.0");
	run_opts(&c, 0, NULL);
	assert_row(c.out, "nearest GPU", "0000:05:00.0 (10de:2331, NUMA 0, PIX)");
	cap_free(&c);
	/* pci_list failing: unknown, reported */
	dvx_mock_fail_op(&M, DVX_MOCK_OP_PCI_LIST, -EACCES);
	run_opts(&c, 0, NULL);
	assert_int_equal(c.rc, DVX_PROBE_ERROR);
	assert_row(c.out, "nearest GPU", "unknown");
	assert_has(c.out, "error: pci_list nearest GPU: EACCES (13)");
	cap_free(&c);
}

/*
 * Fail every hal call of the probe in turn (over the mixed setup: one good device,
 * one that cannot open, one with a DEVX failure), in both output modes and with two
 * errnos: the probe must report the failure, never crash, and close whatever it
 * opened.
 */
static void test_fault_injection(void **state)
{
	static const int errs[] = { -EIO, -ENOMEM };
	uint32_t total, n;
	size_t e;
	int json;
	struct cap c;

	(void)state;
	run_opts(&c, 0, NULL);
	total = dvx_mock_calls(&M);
	cap_free(&c);
	assert_true(total > 20);
	print_message("failing each of the probe's %u hal calls in turn, 2 errnos, 2 formats\n",
		      total);

	for (json = 0; json <= 1; json++) {
		for (e = 0; e < DVX_ARRAY_SIZE(errs); e++) {
			for (n = 1; n <= total; n++) {
				const struct dvx_mock_call *call;
				char want[48];

				dvx_mock_reset_log(&M);
				dvx_mock_fail_at(&M, n, errs[e]);
				run_opts(&c, json, NULL);
				call = dvx_mock_call_at(&M, n);
				if (dvx_mock_live_total(&M) != 0)
					fail_msg("call %u (%s) failed: %d resources left", n,
						 call ? dvx_mock_op_name(call->op) : "?",
						 dvx_mock_live_total(&M));
				assert_non_null(call);
				assert_int_equal(call->ret, errs[e]);
				assert_int_equal(call->injected, 1);
				/* reported: an error exit, and the errno in the output */
				assert_int_equal(c.rc, DVX_PROBE_ERROR);
				if (json) {
					assert_json(c.out);
					snprintf(want, sizeof(want), "\"errno\": %d", -errs[e]);
				} else {
					snprintf(want, sizeof(want), "%s (%d)",
						 errs[e] == -EIO ? "EIO" : "ENOMEM", -errs[e]);
				}
				assert_has(c.out, want);
				cap_free(&c);
			}
		}
	}
	dvx_mock_clear_faults(&M);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_table_cx7, setup_cx7),
		cmocka_unit_test_setup(test_json_cx7, setup_cx7),
		cmocka_unit_test_setup(test_mixed, setup_mixed),
		cmocka_unit_test_setup(test_dev_filter, setup_mixed),
		cmocka_unit_test_setup(test_no_device, setup_cx7),
		cmocka_unit_test_setup(test_memlock_warning, setup_cx7),
		cmocka_unit_test_setup(test_json_escaping, setup_cx7),
		cmocka_unit_test_setup(test_command_line, setup_cx7),
		cmocka_unit_test_setup(test_list_fails, setup_cx7),
		cmocka_unit_test(test_gpu_relation),
		cmocka_unit_test_setup(test_fault_injection, setup_mixed),
	};

	return cmocka_run_group_tests_name("hal-probe", tests, NULL, NULL);
}
