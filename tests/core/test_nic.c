// SPDX-License-Identifier: MIT
/*
 * core-nic-test: dvx_nic (open, caps, port, GID, PD, EQ, UARs, features), dvx_umem,
 * dvx_mr and the sink MR against the mock ConnectX-7, with every hal call failed in
 * turn.
 */
#include "fixture.h"

static struct dvx_nic nic;

/* every feature a ConnectX-7 (the mock's, the default device's) gives */
#define CX7_FEATURES                                                                     \
	(DVX_NIC_FEAT_CD | DVX_NIC_FEAT_ATOMIC | DVX_NIC_FEAT_ATOMIC_HOST_ENDIAN |         \
	 DVX_NIC_FEAT_EXT_ATOMIC | DVX_NIC_FEAT_LOOPBACK | DVX_NIC_FEAT_RELAXED_ORDERING | \
	 DVX_NIC_FEAT_BF | DVX_NIC_FEAT_CQ_OI)

static int setup_roce(void **state)
{
	(void)state;
	fx_mock(1);
	return 0;
}

/* ---- open ---- */

static void test_open_roce(void **state)
{
	const struct dvx_mock_call *c;
	static const uint8_t want_gid[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
					      192, 168, 1, 10 };
	unsigned i;

	(void)state;
	assert_int_equal(fx_open(&nic), 0);
	assert_int_equal(nic.open, DVX_LIVE);
	assert_int_equal(nic.port, 1);
	assert_int_equal(nic.roce, 1);
	assert_int_equal(nic.link_layer, DVX_LINK_LAYER_ETHERNET);
	/* RoCE v2 and routable (IPv4-mapped) beats v1 and link-local */
	assert_int_equal(nic.gid_index, 3);
	assert_memory_equal(nic.gid.raw, want_gid, 16);
	assert_int_equal(nic.eqn, 7);
	assert_int_equal(nic.pdn, dvx_mock_last(&M, DVX_MOCK_OP_PD_ALLOC)->id);
	assert_int_equal(nic.uar.type, DVX_UAR_NC_DEDICATED);
	assert_int_equal(nic.uar.bf_half, 0);
	assert_int_equal(nic.uar.fallback_err, 0);
	assert_ptr_equal(nic.uar.reg, (uint8_t *)nic.uar.hal.base_addr + 0x800);
	assert_int_equal(nic.uar.page_id, dvx_mock_last(&M, DVX_MOCK_OP_UAR_ALLOC)->id);

	/* the caps pages queried, current values, in order */
	assert_int_equal(dvx_mock_count(&M, DVX_MOCK_OP_DEVX_CMD), 4);
	for (i = 0; i < 4; i++) {
		static const uint16_t op_mod[4] = { 0x1, 0x7, 0x9, 0x41 };

		c = dvx_mock_find(&M, DVX_MOCK_OP_DEVX_CMD, i);
		assert_int_equal(c->prm_opcode, DVX_MLX5_CMD_QUERY_HCA_CAP);
		assert_int_equal(c->prm_op_mod, op_mod[i]);
		assert_int_equal(c->inlen, 16);
		assert_int_equal(c->outlen, 4112);
	}
	/* a realistic CX-7 decoded */
	assert_true(nic.caps.general_valid && nic.caps.atomic_valid && nic.caps.roce_valid &&
		    nic.caps.general2_valid);
	assert_int_equal(nic.caps.log_max_qp_sz, 15);
	assert_int_equal(nic.caps.log_max_cq_sz, 22);
	assert_int_equal(nic.caps.log_bf_reg_size, 9);
	assert_int_equal(nic.caps.max_wqe_sz_sq, 1024);
	assert_int_equal(nic.caps.cqe_version, 1);
	assert_int_equal(nic.caps.atomic_operations, 0xf);
	assert_int_equal(nic.caps.atomic_size_qp, 0xc);
	assert_int_equal(nic.caps.r_roce_min_src_udp_port, 0xc000);
	assert_int_equal(nic.caps.send_dbr_mode_no_dbr_ext, 1);
	assert_int_equal(nic.features, CX7_FEATURES);
	assert_int_equal(nic.atomic_mode, DVX_MLX5_ATOMIC_MODE_UP_TO_8B);
	assert_int_equal(nic.atomic_be_results, 0);
	assert_int_equal(dvx_nic_require(&nic, DVX_NIC_FEAT_CD | DVX_NIC_FEAT_ATOMIC, "x"), 0);

	assert_int_equal(dvx_nic_close(&nic), 0);
	assert_int_equal(nic.open, 0);
	assert_int_equal(dvx_mock_live_total(&M), 0);
	assert_int_equal(M.closed_with_live, 0);
	assert_int_equal(dvx_nic_close(&nic), -EINVAL);
	/* reverse order: UAR, PD, device */
	assert_int_equal(dvx_mock_call_at(&M, dvx_mock_calls(&M) - 2)->op, DVX_MOCK_OP_UAR_FREE);
	assert_int_equal(dvx_mock_call_at(&M, dvx_mock_calls(&M) - 1)->op, DVX_MOCK_OP_PD_FREE);
	assert_int_equal(dvx_mock_call_at(&M, dvx_mock_calls(&M))->op, DVX_MOCK_OP_NIC_CLOSE);
}

static void test_open_ib_and_pci(void **state)
{
	struct dvx_nic_cfg a;

	(void)state;
	fx_mock(0);
	memset(&a, 0, sizeof(a));
	a.name = "3b:00.0";		/* by PCI address */
	a.gid_index = -1;
	assert_int_equal(dvx_nic_open(&nic, HAL, &a), 0);
	assert_string_equal(nic.hal.info.name, "mlx5_0");
	assert_int_equal(nic.roce, 0);
	assert_int_equal(nic.lid, 0x11);
	assert_int_equal(nic.gid_index, 0);
	assert_false(nic.caps.roce_valid);
	assert_int_equal(dvx_mock_count(&M, DVX_MOCK_OP_DEVX_CMD), 3);	/* no RoCE page */
	assert_false(nic.features & DVX_NIC_FEAT_LOOPBACK);	/* no RoCE caps to say so */
	assert_int_equal(dvx_nic_close(&nic), 0);
	assert_int_equal(dvx_mock_live_total(&M), 0);
}

static void test_open_bad(void **state)
{
	struct dvx_nic_cfg a;

	(void)state;
	memset(&a, 0, sizeof(a));
	a.gid_index = -1;
	assert_int_equal(dvx_nic_open(NULL, HAL, &a), -EINVAL);
	assert_int_equal(dvx_nic_open(&nic, HAL, &a), -EINVAL);	/* no name */
	assert_int_equal(nic.hal.diag.src, DVX_DIAG_ARG);
	a.name = "";
	assert_int_equal(dvx_nic_open(&nic, HAL, &a), -EINVAL);
	a.name = "mlx5_0";
	assert_int_equal(dvx_nic_open(&nic, NULL, &a), -EINVAL);
	a.uar_pref = 9;
	assert_int_equal(dvx_nic_open(&nic, HAL, &a), -EINVAL);
	assert_int_equal(dvx_mock_calls(&M), 0);	/* nothing reached the hal */
	a.uar_pref = 0;

	a.name = "mlx5_9";
	assert_int_equal(dvx_nic_open(&nic, HAL, &a), -ENODEV);
	assert_non_null(strstr(nic.hal.diag.msg, "mlx5_9"));
	a.name = "mlx5_0";
	a.port = 2;
	assert_int_equal(dvx_nic_open(&nic, HAL, &a), -EINVAL);
	assert_non_null(strstr(nic.hal.diag.msg, "port 2"));
	a.port = 1;
	a.flags = DVX_NIC_CFG_F_GID_INDEX;
	a.gid_index = -1;		/* an explicit choice needs an index */
	assert_int_equal(dvx_nic_open(&nic, HAL, &a), -EINVAL);
	a.gid_index = 4;		/* an empty entry */
	assert_int_equal(dvx_nic_open(&nic, HAL, &a), -EINVAL);
	assert_non_null(strstr(nic.hal.diag.msg, "empty"));
	a.gid_index = 9;		/* beyond the table */
	assert_int_equal(dvx_nic_open(&nic, HAL, &a), -EINVAL);
	a.gid_index = 1;		/* RoCE v2 link-local, asked for */
	assert_int_equal(dvx_nic_open(&nic, HAL, &a), 0);
	assert_int_equal(nic.gid_index, 1);
	assert_int_equal(nic.gid.raw[0], 0xfe);
	assert_int_equal(dvx_nic_close(&nic), 0);
	assert_int_equal(dvx_mock_live_total(&M), 0);

	/* a DEVX open refused by the device */
	fx_cfg()->open_err = -EACCES;
	assert_int_equal(fx_open(&nic), -EACCES);
	assert_non_null(strstr(nic.hal.diag.msg, "DEVX"));
	fx_cfg()->open_err = 0;

	/* not an mlx5 device */
	fx_cfg()->info.is_mlx5 = 0;
	assert_int_equal(fx_open(&nic), -ENODEV);
	fx_cfg()->info.is_mlx5 = 1;

	/* no usable GID at all */
	memset(fx_cfg()->gid, 0, sizeof(fx_cfg()->gid));
	assert_int_equal(fx_open(&nic), -EOPNOTSUPP);
	assert_non_null(strstr(nic.hal.diag.msg, "no usable GID"));
	assert_int_equal(dvx_mock_live_total(&M), 0);
}

static void test_missing_caps(void **state)
{
	(void)state;
	/* no RC */
	fx_cap(GENERAL, DVX_MLX5_CAP_RC, 0);
	assert_int_equal(fx_open(&nic), -EOPNOTSUPP);
	assert_non_null(strstr(nic.hal.diag.msg, "RC"));
	assert_non_null(strstr(fx_log_last, "RC"));
	assert_int_equal(dvx_mock_live_total(&M), 0);
	fx_cap(GENERAL, DVX_MLX5_CAP_RC, 1);

	/* no core-direct: fine unless a feature needs it */
	fx_cap(GENERAL, DVX_MLX5_CAP_CD, 0);
	assert_int_equal(fx_open(&nic), 0);
	assert_false(nic.features & DVX_NIC_FEAT_CD);
	assert_int_equal(dvx_nic_require(&nic, DVX_NIC_FEAT_CD, "the companion QP"), -EOPNOTSUPP);
	assert_non_null(strstr(nic.hal.diag.msg, "core-direct"));
	assert_non_null(strstr(nic.hal.diag.msg, "companion"));
	assert_int_equal(dvx_nic_close(&nic), 0);
	assert_int_equal(fx_open_attr(&nic, 0, DVX_NIC_FEAT_CD, -1), -EOPNOTSUPP);
	assert_non_null(strstr(nic.hal.diag.msg, "cap cd = 0"));
	assert_int_equal(dvx_mock_live_total(&M), 0);
	fx_cap(GENERAL, DVX_MLX5_CAP_CD, 1);

	/* big-endian atomic mode: atomics work, results arrive big-endian */
	fx_cap(ATOMIC, DVX_MLX5_CAP_ATOMIC_REQ_8B_ENDIANNESS_MODE, 0);
	fx_cap(ATOMIC, DVX_MLX5_CAP_SUPPORTED_ATOMIC_REQ_8B_ENDIANNESS_MODE_1, 0);
	assert_int_equal(fx_open(&nic), 0);
	assert_true(nic.features & DVX_NIC_FEAT_ATOMIC);
	assert_int_equal(nic.atomic_be_results, 1);
	assert_int_equal(dvx_nic_close(&nic), 0);
	assert_int_equal(fx_open_attr(&nic, 0, DVX_NIC_FEAT_ATOMIC_HOST_ENDIAN, -1), -EOPNOTSUPP);
	assert_non_null(strstr(nic.hal.diag.msg, "big-endian atomic mode"));
	assert_non_null(strstr(nic.hal.diag.msg, "unsupported"));
	assert_int_equal(dvx_mock_live_total(&M), 0);

	/* no atomics at all: the atomic page is not even read */
	fx_cap(GENERAL, DVX_MLX5_CAP_ATOMIC, 0);
	assert_int_equal(fx_open(&nic), 0);
	assert_false(nic.caps.atomic_valid);
	assert_int_equal(nic.atomic_mode, 0);
	assert_int_equal(dvx_nic_require(&nic, DVX_NIC_FEAT_ATOMIC, "signals"), -EOPNOTSUPP);
	assert_non_null(strstr(nic.hal.diag.msg, "no atomics"));
	assert_int_equal(dvx_nic_close(&nic), 0);

	/* standard atomics only: IB-spec mode */
	fx_cap(GENERAL, DVX_MLX5_CAP_ATOMIC, 1);
	fx_cap(ATOMIC, DVX_MLX5_CAP_ATOMIC_OPERATIONS, 0x3);
	assert_int_equal(fx_open(&nic), 0);
	assert_int_equal(nic.atomic_mode, DVX_MLX5_ATOMIC_MODE_IB_SPEC);
	assert_false(nic.features & DVX_NIC_FEAT_EXT_ATOMIC);
	assert_int_equal(dvx_nic_close(&nic), 0);
	assert_int_equal(dvx_mock_live_total(&M), 0);
}

/*
 * The mock's own default device (dvx_mock_nic_cfg_init(), no libdvx-test.a) opens: its
 * capability pages parse to the modelled ConnectX-7, its link-local RoCE v2 GID is
 * chosen, and a CQ and a QP can be made on it. Without its pages the open fails at the
 * first QUERY_HCA_CAP and holds nothing.
 */
static void test_bare_mock(void **state)
{
	struct dvx_mock_nic_cfg cfg;
	struct dvx_nic_cfg attr;
	struct dvx_umem u;
	struct dvx_cq cq;
	struct dvx_qp qp;
	struct dvx_cq_cfg ca;
	struct dvx_qp_cfg qa;

	(void)state;
	dvx_mock_init(&M);
	dvx_mock_nic_cfg_init(&cfg, "mlx5_9", "0000:9a:00.0");
	assert_int_equal(dvx_mock_add_nic(&M, &cfg), 0);
	memset(&attr, 0, sizeof(attr));
	attr.name = "mlx5_9";
	memset(&nic, 0, sizeof(nic));
	assert_int_equal(dvx_nic_open(&nic, HAL, &attr), 0);
	/* the modelled ConnectX-7's limits, every page read */
	assert_true(nic.caps.rc && nic.caps.log_max_qp_sz == 15 && nic.caps.log_max_cq_sz == 22 &&
		    nic.caps.log_max_msg == 30 && nic.caps.log_bf_reg_size == 9 &&
		    nic.caps.cqe_version == 1);
	assert_true(nic.caps.atomic_valid && nic.caps.roce_valid && nic.caps.general2_valid);
	assert_int_equal(nic.features, CX7_FEATURES);
	assert_int_equal(nic.atomic_mode, DVX_MLX5_ATOMIC_MODE_UP_TO_8B);
	assert_int_equal(nic.roce, 1);
	assert_int_equal(nic.gid_index, 1);		/* link-local, RoCE v2 */
	assert_int_equal(nic.gid.raw[0], 0xfe);

	fx_umem(&nic, &u, 0, 16384);
	fx_cq_attr(&ca, &u, 0, 8192, 64);
	memset(&cq, 0, sizeof(cq));
	assert_int_equal(dvx_cq_create(&nic, &ca, &cq), 0);
	fx_qp_attr(&qa, &cq, &u, 4096, 8200);
	memset(&qp, 0, sizeof(qp));
	assert_int_equal(dvx_qp_create(&nic, &qa, &qp), 0);
	assert_int_equal(dvx_qp_destroy(&qp), 0);
	assert_int_equal(dvx_cq_destroy(&cq), 0);
	assert_int_equal(dvx_umem_dereg(&u), 0);
	assert_int_equal(dvx_nic_close(&nic), 0);
	assert_int_equal(dvx_mock_live_total(&M), 0);

	/* no pages: QUERY_HCA_CAP is refused, nothing is held */
	dvx_mock_nic_cfg_clear_caps(dvx_mock_nic_cfg(&M, 0));
	assert_int_equal(dvx_nic_open(&nic, HAL, &attr), -EINVAL);
	assert_string_equal(nic.hal.diag.op, "QUERY_HCA_CAP");
	assert_int_equal(nic.hal.diag.status, 0x03);
	assert_int_equal(dvx_mock_live_total(&M), 0);
	dvx_mock_nic_cfg_clear_caps(NULL);
}

static void test_uars(void **state)
{
	struct dvx_uar u;

	(void)state;
	/* no dedicated register: the shared one, and the reason kept */
	assert_int_equal(fx_open_attr(&nic, DVX_UAR_PREF_NC, 0, -1), 0);
	dvx_mock_fail_at(&M, dvx_mock_calls(&M) + 1, -EOPNOTSUPP);
	assert_int_equal(dvx_uar_alloc(&nic, DVX_UAR_PREF_NC, &u), 0);
	assert_int_equal(u.type, DVX_UAR_NC_SHARED);
	assert_int_equal(u.fallback_err, -EOPNOTSUPP);
	assert_int_equal(dvx_mock_last(&M, DVX_MOCK_OP_UAR_ALLOC)->flags, DVX_UAR_NC_SHARED);
	assert_int_equal(nic.nobjs, 1);
	assert_int_equal(dvx_nic_close(&nic), -EBUSY);
	assert_int_equal(dvx_uar_free(&nic.uar), -EINVAL);	/* the NIC's own */
	assert_int_equal(dvx_uar_free(&u), 0);
	assert_int_equal(dvx_uar_free(&u), -EINVAL);

	/* BlueFlame on request */
	assert_int_equal(dvx_uar_alloc(&nic, DVX_UAR_PREF_BF, &u), 0);
	assert_int_equal(u.type, DVX_UAR_BF);
	assert_int_equal(u.bf_half, 256);
	assert_int_equal(dvx_uar_free(&u), 0);
	assert_int_equal(dvx_uar_alloc(&nic, DVX_UAR_PREF_NC_SHARED, &u), 0);
	assert_int_equal(u.type, DVX_UAR_NC_SHARED);
	assert_int_equal(dvx_uar_free(&u), 0);
	assert_int_equal(dvx_uar_alloc(&nic, (enum dvx_uar_pref)7, &u), -EINVAL);
	/* BlueFlame-or-NC whose BlueFlame allocation fails: a non-cached one, the error
	 * kept; the mock's next UAR call (the BF one) fails */
	dvx_mock_reset_log(&M);
	dvx_mock_fail_at(&M, 1, -ENOMEM);
	assert_int_equal(dvx_uar_alloc(&nic, DVX_UAR_PREF_BF_OR_NC, &u), 0);
	dvx_mock_clear_faults(&M);
	assert_int_equal(dvx_mock_call_at(&M, 1)->flags, DVX_UAR_BF);
	assert_int_equal(u.type, DVX_UAR_NC_DEDICATED);
	assert_int_equal(u.fallback_err, -ENOMEM);
	assert_int_equal(u.bf_half, 0);
	assert_int_equal(dvx_uar_free(&u), 0);
	/* a BlueFlame request the kernel maps non-cached: no BlueFlame copies on it */
	M.uar_bf_nc = 1;
	assert_int_equal(dvx_uar_alloc(&nic, DVX_UAR_PREF_BF, &u), 0);
	assert_int_equal(u.type, DVX_UAR_BF);
	assert_int_equal(u.hal.nc, 1);
	assert_int_equal(u.bf_half, 0);
	assert_int_equal(dvx_uar_free(&u), 0);
	M.uar_bf_nc = 0;
	assert_int_equal(dvx_nic_close(&nic), 0);

	/* BlueFlame asked for on a device without it */
	fx_cap(GENERAL, DVX_MLX5_CAP_BF, 0);
	assert_int_equal(fx_open_attr(&nic, DVX_UAR_PREF_BF, 0, -1), -EOPNOTSUPP);
	assert_non_null(strstr(nic.hal.diag.msg, "BlueFlame"));
	assert_int_equal(fx_open_attr(&nic, DVX_UAR_PREF_BF_OR_NC, 0, -1), 0);
	assert_int_equal(nic.uar.type, DVX_UAR_NC_DEDICATED);
	assert_int_equal(dvx_nic_close(&nic), 0);
	assert_int_equal(dvx_mock_live_total(&M), 0);
}

/* ---- fault sweeps over open ---- */

static void noop(void *ctx)
{
	(void)ctx;
}

static int act_open(void *ctx)
{
	return fx_open_attr(&nic, (uint8_t)(uintptr_t)ctx, 0, -1);
}

static void undo_close(void *ctx)
{
	(void)ctx;
	assert_int_equal(dvx_nic_close(&nic), 0);
}

static void open_failed(void *ctx, int err)
{
	(void)ctx;
	assert_int_equal(nic.open, 0);
	assert_int_equal(nic.hal.diag.err, err);
}

static void test_open_faults(void **state)
{
	struct fx_sweep s = { noop, act_open, undo_close, noop, open_failed, NULL };
	unsigned n;
	int err;

	(void)state;
	/* dev_open, query_device, 4 caps, query_port, 6 GIDs, pd, eqn, uar (the dedicated
	 * UAR's failure is absorbed by the fallback) */
	n = fx_sweep_calls(&s);
	assert_int_equal(n, 15);
	s.ctx = (void *)(uintptr_t)DVX_UAR_PREF_BF;
	assert_int_equal(fx_sweep_calls(&s), 16);
	s.ctx = NULL;

	/* every capability page answered with BAD_PARAM */
	err = fx_sweep_devx(&s, DVX_MLX5_CMD_QUERY_HCA_CAP);
	assert_int_equal(err, -EINVAL);
	assert_string_equal(nic.hal.diag.op, "QUERY_HCA_CAP");
	assert_non_null(strstr(nic.hal.diag.msg, "QUERY_HCA_CAP: BAD_PARAM syndrome 0x00c0ffee"));
	assert_non_null(strstr(fx_log_last, "DEVX"));
	/* only the atomic page missing */
	fx_mock(1);
	assert_int_equal(dvx_mock_fail_devx(&M, -1, DVX_MLX5_CMD_QUERY_HCA_CAP, 0x7, 0x03, 1, 0), 0);
	assert_int_equal(fx_open(&nic), -EINVAL);
	assert_int_equal(dvx_mock_live_total(&M), 0);
}

/* ---- umems ---- */

/*
 * Every status byte a NIC may answer a command with, through the hal (which keeps it
 * raw: -EREMOTEIO) to the caller of dvx_nic_open(): the errno is the one the mlx5
 * table gives, never 0 for a refusal; the diag keeps the status, the syndrome and the
 * status's name; nothing stays allocated.
 */
static void test_every_status(void **state)
{
	char want[64];
	unsigned s;

	(void)state;
	for (s = 1; s < 256; s++) {
		int err, mlx5_err = dvx_mlx5_cmd_status_errno((uint8_t)s);

		fx_mock(1);
		assert_int_equal(dvx_mock_fail_devx(&M, -1, DVX_MLX5_CMD_QUERY_HCA_CAP, -1,
						    (uint8_t)s, 0x5eed0000u | s, 0), 0);
		err = fx_open(&nic);
		assert_true(mlx5_err < 0);
		if (err != mlx5_err)
			fail_msg("status 0x%02x: open returned %d, the mlx5 table says %d", s, err,
				 mlx5_err);
		assert_int_equal(nic.hal.diag.err, err);
		assert_int_equal(nic.hal.diag.status, s);
		assert_int_equal(nic.hal.diag.syndrome, 0x5eed0000u | s);
		snprintf(want, sizeof(want), "QUERY_HCA_CAP: %s syndrome",
			 dvx_mlx5_cmd_status_name((uint8_t)s));
		if (!strstr(nic.hal.diag.msg, want))
			fail_msg("status 0x%02x: diag \"%s\" lacks \"%s\"", s, nic.hal.diag.msg,
				 want);
		assert_int_equal(dvx_mock_live_total(&M), 0);
	}
	/* the kernel driver's choices for the statuses users meet most (prm 1.1) */
	assert_int_equal(dvx_mlx5_cmd_status_errno(DVX_MLX5_CMD_STAT_BAD_PARAM_ERR), -EINVAL);
	assert_int_equal(dvx_mlx5_cmd_status_errno(DVX_MLX5_CMD_STAT_LIM_ERR), -ENOMEM);
	assert_int_equal(dvx_mlx5_cmd_status_errno(DVX_MLX5_CMD_STAT_RES_BUSY), -EBUSY);
	assert_int_equal(dvx_mlx5_cmd_status_errno(DVX_MLX5_CMD_STAT_NO_RES_ERR), -EAGAIN);
	assert_int_equal(dvx_mlx5_cmd_status_errno(DVX_MLX5_CMD_STAT_OK), 0);
	assert_string_equal(dvx_mlx5_cmd_status_name(0x42), "UNKNOWN");
}

static void test_umem(void **state)
{
	struct dvx_umem_cfg a;
	struct dvx_umem u, u2;
	const struct dvx_mock_call *c;
	uint32_t calls;

	(void)state;
	assert_int_equal(fx_open(&nic), 0);
	memset(&a, 0, sizeof(a));	/* zero means default: host memory, fd 0 ignored */
	a.addr = fx_mem + 4096;
	a.len = 65536;
	assert_int_equal(dvx_umem_reg(&nic, &a, &u), 0);
	c = dvx_mock_last(&M, DVX_MOCK_OP_UMEM_REG);
	assert_int_equal(c->addr, (uintptr_t)(fx_mem + 4096));
	assert_int_equal(c->len, 65536);
	assert_int_equal(c->access, DVX_ACCESS_LOCAL_WRITE);
	assert_int_equal(c->dmabuf_fd, -1);
	assert_int_equal(c->pgsz_bitmap, 4096);
	assert_int_equal(u.id, c->id);
	assert_int_equal(u.ring_align, 64);
	assert_int_equal(u.cpu, 1);
	assert_int_equal(u.via_dmabuf, 0);

	/* GPU memory as a dma-buf, with wider pages: rings then align to 2 MiB */
	memset(&a, 0, sizeof(a));
	a.addr = (void *)(uintptr_t)0x7f0000200000ull;	/* the GPU VA, never touched */
	a.len = 1u << 21;
	a.dmabuf_fd = 42;
	a.flags = DVX_UMEM_F_DMABUF;
	a.dmabuf_offset = 0x3000;
	a.access = DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_READ;
	a.pgsz_bitmap = (1ull << 21) | 4096;
	assert_int_equal(dvx_umem_reg(&nic, &a, &u2), 0);
	c = dvx_mock_last(&M, DVX_MOCK_OP_UMEM_REG);
	assert_int_equal(c->dmabuf_fd, 42);
	assert_int_equal(c->offset, 0x3000);
	assert_int_equal(c->addr, 0);
	assert_int_equal(c->access, DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_READ);
	assert_int_equal(u2.ring_align, 1u << 21);
	assert_int_equal(u2.cpu, 0);
	assert_int_equal(u2.via_dmabuf, 1);
	assert_int_equal(dvx_umem_dereg(&u2), 0);

	/* bad input: nothing reaches the hal */
	calls = dvx_mock_calls(&M);
	memset(&a, 0, sizeof(a));
	a.addr = fx_mem;
	a.len = 4096;
	a.dmabuf_fd = -1;
	assert_int_equal(dvx_umem_reg(&nic, NULL, &u2), -EINVAL);
	a.len = 0;
	assert_int_equal(dvx_umem_reg(&nic, &a, &u2), -EINVAL);
	a.len = 4096;
	a.addr = fx_mem + 64;
	assert_int_equal(dvx_umem_reg(&nic, &a, &u2), -EINVAL);
	assert_non_null(strstr(nic.hal.diag.msg, "4 KiB"));
	a.addr = fx_mem;
	a.access = DVX_ACCESS_REMOTE_READ;
	assert_int_equal(dvx_umem_reg(&nic, &a, &u2), -EINVAL);
	assert_non_null(strstr(nic.hal.diag.msg, "LOCAL_WRITE"));
	a.access = 1u << 12;
	assert_int_equal(dvx_umem_reg(&nic, &a, &u2), -EINVAL);
	/* bits the kernel's DEVX umem refuses (devx_umem_get): refused here first */
	a.access = DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_ATOMIC;
	assert_int_equal(dvx_umem_reg(&nic, &a, &u2), -EINVAL);
	assert_non_null(strstr(nic.hal.diag.msg, "does not take"));
	a.access = DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_RELAXED_ORDERING;
	assert_int_equal(dvx_umem_reg(&nic, &a, &u2), -EINVAL);
	a.access = 0;
	a.pgsz_bitmap = 1ull << 21;
	assert_int_equal(dvx_umem_reg(&nic, &a, &u2), -EINVAL);
	a.pgsz_bitmap = 0;
	a.dmabuf_offset = 4096;		/* offset without an fd */
	assert_int_equal(dvx_umem_reg(&nic, &a, &u2), -EINVAL);
	a.dmabuf_fd = 3;
	a.flags = DVX_UMEM_F_DMABUF;
	a.dmabuf_offset = 100;
	assert_int_equal(dvx_umem_reg(&nic, &a, &u2), -EINVAL);
	a.dmabuf_fd = -1;			/* the flag without an fd */
	a.dmabuf_offset = 0;
	assert_int_equal(dvx_umem_reg(&nic, &a, &u2), -EINVAL);
	a.flags = 0;
	a.addr = NULL;
	assert_int_equal(dvx_umem_reg(&nic, &a, &u2), -EINVAL);
	a.addr = fx_mem;
	a.flags = DVX_UMEM_F_CPU;	/* only for dma-bufs */
	assert_int_equal(dvx_umem_reg(&nic, &a, &u2), -EINVAL);
	assert_int_equal(dvx_mock_calls(&M), calls);

	assert_int_equal(dvx_nic_close(&nic), -EBUSY);
	assert_int_equal(dvx_umem_dereg(&u), 0);
	assert_int_equal(dvx_umem_dereg(&u), -EINVAL);
	assert_int_equal(dvx_nic_close(&nic), 0);
	assert_int_equal(dvx_mock_live_total(&M), 0);
}

static struct dvx_umem sw_umem;
static struct dvx_mr sw_mr;

static void open_nic(void *ctx)
{
	(void)ctx;
	fx_mock(1);
	assert_int_equal(fx_open(&nic), 0);
}

static void close_nic(void *ctx)
{
	(void)ctx;
	assert_int_equal(dvx_nic_close(&nic), 0);
}

static int act_umem(void *ctx)
{
	struct dvx_umem_cfg a;

	(void)ctx;
	memset(&a, 0, sizeof(a));
	a.addr = fx_mem;
	a.len = 8192;
	a.dmabuf_fd = ctx ? 9 : -1;
	a.flags = ctx ? DVX_UMEM_F_DMABUF : 0;
	return dvx_umem_reg(&nic, &a, &sw_umem);
}

static void undo_umem(void *ctx)
{
	(void)ctx;
	assert_int_equal(dvx_umem_dereg(&sw_umem), 0);
}

static void test_umem_faults(void **state)
{
	struct fx_sweep s = { open_nic, act_umem, undo_umem, close_nic, NULL, NULL };

	(void)state;
	assert_int_equal(fx_sweep_calls(&s), 1);
	s.ctx = (void *)1;	/* dma-buf */
	assert_int_equal(fx_sweep_calls(&s), 1);
	/* a failed deregistration keeps the umem */
	open_nic(NULL);
	assert_int_equal(act_umem(NULL), 0);
	dvx_mock_fail_op(&M, DVX_MOCK_OP_UMEM_DEREG, -EBUSY);
	assert_int_equal(dvx_umem_dereg(&sw_umem), -EBUSY);
	assert_int_equal(sw_umem.live, DVX_LIVE);
	dvx_mock_clear_faults(&M);
	undo_umem(NULL);
	close_nic(NULL);
	assert_int_equal(dvx_mock_live_total(&M), 0);
}

/* ---- MRs ---- */

static void test_mr(void **state)
{
	struct dvx_mr_cfg a;
	struct dvx_mr mr, sink;
	const struct dvx_mock_call *c;
	uint32_t calls;

	(void)state;
	assert_int_equal(fx_open(&nic), 0);
	memset(&a, 0, sizeof(a));
	a.addr = fx_mem + 100;
	a.len = 1000;
	a.access = DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_WRITE | DVX_ACCESS_RELAXED_ORDERING;
	/* dmabuf_fd left 0: without DVX_MR_F_DMABUF it is host memory, fd 0 never used */
	assert_int_equal(dvx_mr_reg(&nic, &a, &mr), 0);
	assert_int_equal(dvx_mock_last(&M, DVX_MOCK_OP_MR_REG)->dmabuf_fd, -1);
	c = dvx_mock_last(&M, DVX_MOCK_OP_MR_REG);
	assert_int_equal(c->addr, (uintptr_t)(fx_mem + 100));
	assert_int_equal(c->iova, (uintptr_t)(fx_mem + 100));	/* iova = address */
	assert_int_equal(c->len, 1000);
	assert_int_equal(c->access, a.access);			/* RO kept: CX-7 has it */
	assert_int_equal(c->flags, 0);
	assert_int_equal(mr.lkey, c->id);
	assert_int_equal(mr.flags, 0);
	assert_int_equal(mr.iova, (uintptr_t)(fx_mem + 100));
	assert_int_equal(dvx_mr_dereg(&mr), 0);

	/* iova 0 */
	a.flags = DVX_MR_IOVA_ZERO;
	assert_int_equal(dvx_mr_reg(&nic, &a, &mr), 0);
	assert_int_equal(dvx_mock_last(&M, DVX_MOCK_OP_MR_REG)->iova, 0);
	assert_int_equal(mr.iova, 0);
	assert_int_equal(dvx_mr_dereg(&mr), 0);

	/* GPU memory from a dma-buf: iova = the GPU VA, same page offset as the offset */
	a.addr = (void *)(uintptr_t)0x7f0000001040ull;
	a.dmabuf_fd = 17;
	a.dmabuf_offset = 0x5040;
	a.flags = DVX_MR_F_DMABUF | DVX_MR_F_DATA_DIRECT;
	assert_int_equal(dvx_mr_reg(&nic, &a, &mr), 0);
	c = dvx_mock_last(&M, DVX_MOCK_OP_MR_REG);
	assert_int_equal(c->flags, DVX_MR_DMABUF | DVX_MR_DATA_DIRECT);
	assert_int_equal(c->dmabuf_fd, 17);
	assert_int_equal(c->offset, 0x5040);
	assert_int_equal(c->iova, 0x7f0000001040ull);
	assert_int_equal(dvx_mr_dereg(&mr), 0);
	a.dmabuf_offset = 0x5000;	/* page offsets differ */
	a.flags = DVX_MR_F_DMABUF;
	assert_int_equal(dvx_mr_reg(&nic, &a, &mr), -EINVAL);
	a.flags = DVX_MR_F_DMABUF | DVX_MR_IOVA_ZERO;	/* iova 0 from a dma-buf: page-aligned offset */
	a.addr = NULL;
	assert_int_equal(dvx_mr_reg(&nic, &a, &mr), 0);
	assert_int_equal(dvx_mock_last(&M, DVX_MOCK_OP_MR_REG)->iova, 0);
	assert_int_equal(dvx_mr_dereg(&mr), 0);

	/* bad input changes nothing */
	calls = dvx_mock_calls(&M);
	memset(&a, 0, sizeof(a));
	a.addr = fx_mem;
	a.len = 64;
	a.dmabuf_fd = -1;
	a.access = DVX_ACCESS_REMOTE_WRITE;	/* without LOCAL_WRITE */
	assert_int_equal(dvx_mr_reg(&nic, &a, &mr), -EINVAL);
	a.access = DVX_ACCESS_LOCAL_WRITE | (1u << 9);
	assert_int_equal(dvx_mr_reg(&nic, &a, &mr), -EINVAL);
	a.access = DVX_ACCESS_LOCAL_WRITE;
	a.len = 0;
	assert_int_equal(dvx_mr_reg(&nic, &a, &mr), -EINVAL);
	a.len = 64;
	a.flags = DVX_MR_F_DATA_DIRECT;		/* host memory */
	assert_int_equal(dvx_mr_reg(&nic, &a, &mr), -EINVAL);
	a.flags = 0x80;
	assert_int_equal(dvx_mr_reg(&nic, &a, &mr), -EINVAL);
	a.flags = DVX_MR_F_DMABUF;		/* the flag without an fd */
	assert_int_equal(dvx_mr_reg(&nic, &a, &mr), -EINVAL);
	a.flags = 0;
	a.addr = NULL;
	assert_int_equal(dvx_mr_reg(&nic, &a, &mr), -EINVAL);
	assert_int_equal(dvx_mr_sink(&nic, fx_mem + 4, -1, 0, &sink), -EINVAL);
	assert_int_equal(dvx_mr_sink(&nic, NULL, -1, 0, &sink), -EINVAL);
	assert_int_equal(dvx_mr_sink(&nic, NULL, 5, 8, &sink), -EINVAL);
	assert_int_equal(dvx_mock_calls(&M), calls);

	/* the sink: 8 bytes at iova 0 for atomic results */
	assert_int_equal(dvx_mr_sink(&nic, fx_mem + 8, -1, 0, &sink), 0);
	c = dvx_mock_last(&M, DVX_MOCK_OP_MR_REG);
	assert_int_equal(c->len, 8);
	assert_int_equal(c->iova, 0);
	assert_int_equal(c->addr, (uintptr_t)(fx_mem + 8));
	assert_int_equal(c->access, DVX_ACCESS_LOCAL_WRITE);	/* no remote right at all */
	assert_int_equal(sink.iova, 0);
	assert_int_equal(dvx_mr_dereg(&sink), 0);
	assert_int_equal(dvx_mr_sink(&nic, NULL, 5, 0x2000, &sink), 0);	/* in GPU memory */
	c = dvx_mock_last(&M, DVX_MOCK_OP_MR_REG);
	assert_int_equal(c->dmabuf_fd, 5);
	assert_int_equal(c->offset, 0x2000);
	assert_int_equal(c->iova, 0);
	assert_int_equal(dvx_mr_dereg(&sink), 0);
	assert_int_equal(dvx_nic_close(&nic), 0);

	/* a device without relaxed ordering: the hint is dropped and reported */
	fx_cap(GENERAL, DVX_MLX5_CAP_RELAXED_ORDERING_WRITE, 0);
	fx_cap(GENERAL, DVX_MLX5_CAP_RELAXED_ORDERING_READ_PCI_ENABLED, 0);
	fx_cap(GENERAL, DVX_MLX5_CAP_ATOMIC, 0);
	assert_int_equal(fx_open(&nic), 0);
	memset(&a, 0, sizeof(a));
	a.addr = fx_mem;
	a.len = 64;
	a.dmabuf_fd = -1;
	a.access = DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_RELAXED_ORDERING;
	assert_int_equal(dvx_mr_reg(&nic, &a, &mr), 0);
	assert_int_equal(mr.flags, DVX_MR_RO_DROPPED);
	assert_int_equal(mr.access, DVX_ACCESS_LOCAL_WRITE);
	assert_int_equal(dvx_mock_last(&M, DVX_MOCK_OP_MR_REG)->access, DVX_ACCESS_LOCAL_WRITE);
	assert_int_equal(dvx_mr_dereg(&mr), 0);
	/* the newer relaxed_ordering_read bit (dw@100 [21], byte 101's 0x20) alone is
	 * relaxed ordering too; the two read bits are told apart */
	assert_int_equal(dvx_nic_close(&nic), 0);
	fx_cap(GENERAL, DVX_MLX5_CAP_RELAXED_ORDERING_READ, 1);
	assert_int_equal(fx_open(&nic), 0);
	assert_int_equal(nic.caps.relaxed_ordering_read, 1);
	assert_int_equal(nic.caps.relaxed_ordering_read_pci_enabled, 0);
	assert_true(nic.features & DVX_NIC_FEAT_RELAXED_ORDERING);
	a.access = DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_RELAXED_ORDERING;
	assert_int_equal(dvx_mr_reg(&nic, &a, &mr), 0);
	assert_int_equal(mr.flags, 0);
	assert_int_equal(dvx_mr_dereg(&mr), 0);
	/* and without atomics: no remote-atomic MR; the sink goes without that right */
	a.access = DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_ATOMIC;
	assert_int_equal(dvx_mr_reg(&nic, &a, &mr), -EOPNOTSUPP);
	assert_non_null(strstr(nic.hal.diag.msg, "no atomics"));
	assert_int_equal(dvx_mr_sink(&nic, fx_mem, -1, 0, &sink), 0);
	assert_int_equal(sink.access, DVX_ACCESS_LOCAL_WRITE);	/* only ever a local target */
	assert_int_equal(dvx_mr_dereg(&sink), 0);
	assert_int_equal(dvx_nic_close(&nic), 0);
	assert_int_equal(dvx_mock_live_total(&M), 0);
}

static int act_mr(void *ctx)
{
	struct dvx_mr_cfg a;

	if (ctx)
		return dvx_mr_sink(&nic, fx_mem, -1, 0, &sw_mr);
	memset(&a, 0, sizeof(a));
	a.addr = fx_mem;
	a.len = 4096;
	a.access = DVX_ACCESS_LOCAL_WRITE;
	a.dmabuf_fd = -1;
	return dvx_mr_reg(&nic, &a, &sw_mr);
}

static void undo_mr(void *ctx)
{
	(void)ctx;
	assert_int_equal(dvx_mr_dereg(&sw_mr), 0);
}

static void test_mr_faults(void **state)
{
	struct fx_sweep s = { open_nic, act_mr, undo_mr, close_nic, NULL, NULL };

	(void)state;
	assert_int_equal(fx_sweep_calls(&s), 1);
	s.ctx = (void *)1;	/* the sink */
	assert_int_equal(fx_sweep_calls(&s), 1);
	/* a failed deregistration keeps the MR, and the NIC cannot close under it */
	open_nic(NULL);
	assert_int_equal(act_mr(NULL), 0);
	dvx_mock_fail_op(&M, DVX_MOCK_OP_MR_DEREG, -EIO);
	assert_int_equal(dvx_mr_dereg(&sw_mr), -EIO);
	dvx_mock_clear_faults(&M);
	assert_int_equal(dvx_nic_close(&nic), -EBUSY);
	undo_mr(NULL);
	close_nic(NULL);
	assert_int_equal(dvx_mock_live_total(&M), 0);
}

static void test_close_faults(void **state)
{
	unsigned n;

	(void)state;
	/* a failed release leaves the NIC open for another try */
	for (n = 1; n <= 3; n++) {
		open_nic(NULL);
		dvx_mock_reset_log(&M);
		dvx_mock_fail_at(&M, n, -EIO);
		assert_int_equal(dvx_nic_close(&nic), -EIO);
		assert_int_equal(nic.open, DVX_LIVE);
		dvx_mock_clear_faults(&M);
		assert_int_equal(dvx_nic_close(&nic), 0);
		assert_int_equal(dvx_mock_live_total(&M), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_open_roce, setup_roce),
		cmocka_unit_test_setup(test_open_ib_and_pci, setup_roce),
		cmocka_unit_test_setup(test_open_bad, setup_roce),
		cmocka_unit_test_setup(test_missing_caps, setup_roce),
		cmocka_unit_test_setup(test_bare_mock, setup_roce),
		cmocka_unit_test_setup(test_uars, setup_roce),
		cmocka_unit_test_setup(test_open_faults, setup_roce),
		cmocka_unit_test_setup(test_every_status, setup_roce),
		cmocka_unit_test_setup(test_umem, setup_roce),
		cmocka_unit_test_setup(test_umem_faults, setup_roce),
		cmocka_unit_test_setup(test_mr, setup_roce),
		cmocka_unit_test_setup(test_mr_faults, setup_roce),
		cmocka_unit_test_setup(test_close_faults, setup_roce),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
