// SPDX-License-Identifier: MIT
/*
 * tests/testing/test_testing.c - libdvx-test.a (testing/, dvx/testing/cx7.h and
 * sweep.h) and the mock's mailbox capture, used the way a user's own suite uses them:
 * the ready-made ConnectX-7 opens with dvx_nic_open(); a CREATE_CQ's mailbox bytes are
 * captured and read back; a fault sweep passes over a correct init path and catches a
 * leaking one and one that returns a positive value.
 */
#include "../lib/dvx_test.h"

#include <errno.h>
#include <string.h>

#include <dvx/mlx5/cmd.h>
#include <dvx/mlx5/ifc.h>
#include <dvx/nic/cq.h>
#include <dvx/nic/nic.h>
#include <dvx/nic/umem.h>
#include <dvx/testing/cx7.h>
#include <dvx/testing/sweep.h>

static struct dvx_mock M;
static struct dvx_nic nic;
static struct dvx_umem um;
static struct dvx_cq cq;
static uint8_t mem[1 << 16] __attribute__((aligned(4096)));

static int open_nic(void)
{
	struct dvx_nic_cfg a;

	memset(&a, 0, sizeof(a));
	a.name = "mlx5_0";
	return dvx_nic_open(&nic, dvx_mock_hal(&M), &a);
}

static int setup(void **state)
{
	(void)state;
	memset(&nic, 0, sizeof(nic));
	memset(&um, 0, sizeof(um));
	memset(&cq, 0, sizeof(cq));
	assert_int_equal(dvx_mock_init(&M), 0);
	assert_int_equal(dvx_test_mock_add_cx7(&M, "mlx5_0", "0000:03:00.0"), 0);
	return 0;
}

static void test_cx7_opens(void **state)
{
	(void)state;
	assert_int_equal(open_nic(), 0);
	assert_int_equal(nic.caps.log_max_cq_sz, 22);
	assert_int_equal(nic.roce, 1);
	assert_int_equal(dvx_nic_close(&nic), 0);
	assert_int_equal(dvx_mock_live_total(&M), 0);
	assert_int_equal(dvx_test_mock_add_cx7(NULL, "x", "y"), -EINVAL);
}

static int make_cq(uint32_t depth)
{
	struct dvx_umem_cfg ua;
	struct dvx_cq_cfg ca;
	int err;

	memset(&ua, 0, sizeof(ua));
	ua.addr = mem;
	ua.len = sizeof(mem);
	err = dvx_umem_reg(&nic, &ua, &um);
	if (err)
		return err;
	memset(&ca, 0, sizeof(ca));
	ca.depth = depth;
	ca.ring_umem = &um;
	ca.dbr_umem = &um;
	ca.dbr_offset = sizeof(mem) - 64;
	err = dvx_cq_create(&nic, &ca, &cq);
	if (err)
		dvx_umem_dereg(&um);
	return err;
}

static void test_capture(void **state)
{
	uint8_t in[DVX_MLX5_CREATE_CQ_IN_BYTES], out[64];
	int slot;

	(void)state;
	assert_int_equal(open_nic(), 0);
	memset(in, 0, sizeof(in));
	slot = dvx_mock_capture(&M, DVX_MLX5_CMD_CREATE_CQ, -1, in, sizeof(in), out, sizeof(out));
	assert_true(slot >= 0);
	assert_int_equal(make_cq(256), 0);
	assert_int_equal(M.capture[slot].count, 1);
	assert_int_equal(M.capture[slot].in_len, DVX_MLX5_CREATE_CQ_IN_BYTES);
	/* the bytes dvx sent: the opcode, and log_cq_size 8 in the CQ context */
	assert_int_equal(in[0] << 8 | in[1], DVX_MLX5_CMD_CREATE_CQ);
	assert_int_equal(dvx_mlx5_get(DVX_MLX5_CQC_IN(in), DVX_MLX5_CQC_LOG_CQ_SIZE), 8);
	assert_int_equal(dvx_mlx5_get(DVX_MLX5_CQC_IN(in), DVX_MLX5_CQC_CQE_SZ), 0);	/* 64-byte CQEs */
	assert_int_equal(out[0], 0);	/* status OK as the mock answered */
	/* full: -ENOSPC; cleared: no more copies */
	for (slot = 1; slot < DVX_MOCK_MAX_CAPTURES; slot++)
		assert_true(dvx_mock_capture(&M, 0x999, -1, NULL, 0, NULL, 0) >= 0);
	assert_int_equal(dvx_mock_capture(&M, 0x999, -1, NULL, 0, NULL, 0), -ENOSPC);
	dvx_mock_capture_clear(&M);
	assert_int_equal(dvx_cq_destroy(&cq), 0);
	assert_int_equal(dvx_umem_dereg(&um), 0);
	assert_int_equal(dvx_nic_close(&nic), 0);
}

/* ---- sweeps ---- */

static int bug;	/* 1: leak the umem on failure; 2: return a positive value; 3: fail alone */

static void sw_setup(void *ctx)
{
	int err;

	(void)ctx;
	err = open_nic();
	if (err)
		fail_msg("open: %d (%s), live %d", err, nic.hal.diag.msg, dvx_mock_live_total(&M));
}

static int sw_action(void *ctx)
{
	struct dvx_umem_cfg ua;
	struct dvx_cq_cfg ca;
	int err;

	(void)ctx;
	if (bug == 3)
		return -ENODEV;		/* fails for a reason of its own */
	memset(&ua, 0, sizeof(ua));
	ua.addr = mem;
	ua.len = sizeof(mem);
	err = dvx_umem_reg(&nic, &ua, &um);
	if (err)
		return err;
	memset(&ca, 0, sizeof(ca));
	ca.depth = 64;
	ca.ring_umem = &um;
	ca.dbr_umem = &um;
	ca.dbr_offset = sizeof(mem) - 64;
	err = dvx_cq_create(&nic, &ca, &cq);
	if (err && bug == 1)
		return err;		/* the umem stays registered: a leak */
	if (err && bug == 2) {
		dvx_umem_dereg(&um);
		return 1;
	}
	if (err)
		dvx_umem_dereg(&um);
	return err;
}

static void sw_undo(void *ctx)
{
	(void)ctx;
	assert_int_equal(dvx_cq_destroy(&cq), 0);
	assert_int_equal(dvx_umem_dereg(&um), 0);
}

static void sw_teardown(void *ctx)
{
	(void)ctx;
	if (um.live)
		dvx_umem_dereg(&um);	/* what the leaking action left */
	memset(&um, 0, sizeof(um));
	memset(&cq, 0, sizeof(cq));
	assert_int_equal(dvx_nic_close(&nic), 0);
}

static void test_sweep(void **state)
{
	struct dvx_test_sweep s = { sw_setup, sw_action, sw_undo, sw_teardown, NULL, 0, 0 };
	struct dvx_test_sweep_report rep;

	(void)state;
	bug = 0;
	assert_int_equal(dvx_test_sweep(&M, &s, &rep), 0);
	assert_string_equal(rep.why, "");
	assert_true(rep.failed >= 2);		/* the umem's and the CQ's calls */
	assert_int_equal(rep.runs, rep.failed + rep.absorbed + 1);
	bug = 1;
	assert_int_equal(dvx_test_sweep(&M, &s, &rep), -EPROTO);
	assert_non_null(strstr(rep.why, "live objects after the error"));
	assert_true(rep.bad_call > 1);
	assert_true(rep.bad_ret < 0);
	bug = 2;
	assert_int_equal(dvx_test_sweep(&M, &s, &rep), -EPROTO);
	assert_non_null(strstr(rep.why, "positive"));
	assert_int_equal(rep.bad_ret, 1);
	bug = 3;
	assert_int_equal(dvx_test_sweep(&M, &s, &rep), -EPROTO);
	assert_non_null(strstr(rep.why, "without reaching"));
	/* the caller's own faults stay armed across the sweep */
	bug = 0;
	dvx_mock_fail_op(&M, DVX_MOCK_OP_MR_REG, -EPERM);
	assert_int_equal(dvx_test_sweep(&M, &s, &rep), 0);
	assert_int_equal(M.fail_op_err[DVX_MOCK_OP_MR_REG], -EPERM);
	dvx_mock_fail_op(&M, DVX_MOCK_OP_MR_REG, 0);
	s.max_calls = 1;
	assert_int_equal(dvx_test_sweep(&M, &s, &rep), -E2BIG);
	assert_int_equal(dvx_test_sweep(NULL, &s, &rep), -EINVAL);
	assert_int_equal(dvx_mock_live_total(&M), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_cx7_opens, setup),
		cmocka_unit_test_setup(test_capture, setup),
		cmocka_unit_test_setup(test_sweep, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
