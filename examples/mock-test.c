// SPDX-License-Identifier: MIT
/*
 * examples/mock-test.c - a user's own cmocka test of code that uses dvx, run against
 * the mock hal with no hardware: the ready-made ConnectX-7 of libdvx-test.a, a fault
 * injected the way firmware reports one (a DEVX command answered with a bad status),
 * the mailbox dvx sent read back, and a fault sweep over the user's init path.
 *
 *   cc mock-test.c $(pkg-config --cflags --libs dvx-test) -lcmocka -o mock-test
 *
 * The "user code" below is app_init()/app_fini(): a NIC, a umem and a CQ, cleaned up
 * on every failure path. The tests check that it reports dvx's errors and leaks
 * nothing, whatever fails.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <dvx/mlx5/cmd.h>
#include <dvx/mlx5/ifc.h>
#include <dvx/nic/cq.h>
#include <dvx/nic/nic.h>
#include <dvx/nic/umem.h>
#include <dvx/testing/cx7.h>
#include <dvx/testing/sweep.h>

/* ---- the user's code under test ---- */

struct app {
	struct dvx_nic nic;
	struct dvx_umem umem;
	struct dvx_cq cq;
	uint8_t ring[1 << 14] __attribute__((aligned(4096)));
};

static int app_init(struct app *a, const struct dvx_hal *hal, uint32_t depth)
{
	struct dvx_nic_cfg na;
	struct dvx_umem_cfg ua;
	struct dvx_cq_cfg ca;
	int err;

	memset(&na, 0, sizeof(na));
	na.name = "mlx5_0";
	err = dvx_nic_open(&a->nic, hal, &na);
	if (err)
		return err;
	memset(&ua, 0, sizeof(ua));
	ua.addr = a->ring;
	ua.len = sizeof(a->ring);
	err = dvx_umem_reg(&a->nic, &ua, &a->umem);
	if (err)
		goto close;
	memset(&ca, 0, sizeof(ca));
	ca.depth = depth;
	ca.ring_umem = &a->umem;
	ca.dbr_umem = &a->umem;
	ca.dbr_offset = sizeof(a->ring) - 64;
	err = dvx_cq_create(&a->nic, &ca, &a->cq);
	if (err)
		goto umem;
	return 0;
umem:
	dvx_umem_dereg(&a->umem);
close:
	dvx_nic_close(&a->nic);
	return err;
}

static void app_fini(struct app *a)
{
	dvx_cq_destroy(&a->cq);
	dvx_umem_dereg(&a->umem);
	dvx_nic_close(&a->nic);
}

/* ---- the tests ---- */

static struct dvx_mock mock;
static struct app app;

static int setup(void **state)
{
	(void)state;
	memset(&app, 0, sizeof(app));
	assert_int_equal(dvx_mock_init(&mock), 0);
	assert_true(dvx_test_mock_add_cx7(&mock, "mlx5_0", "0000:03:00.0") >= 0);
	return 0;
}

/* it works, and the CQ dvx created is the one asked for (the mailbox, byte by byte) */
static void test_init(void **state)
{
	uint8_t in[DVX_MLX5_CREATE_CQ_IN_BYTES];

	(void)state;
	assert_true(dvx_mock_capture(&mock, DVX_MLX5_CMD_CREATE_CQ, -1, in, sizeof(in), NULL, 0) >=
		    0);
	assert_int_equal(app_init(&app, dvx_mock_hal(&mock), 128), 0);
	assert_int_equal(dvx_mlx5_get(DVX_MLX5_CQC_IN(in), DVX_MLX5_CQC_LOG_CQ_SIZE), 7);
	app_fini(&app);
	assert_int_equal(dvx_mock_live_total(&mock), 0);
}

/* firmware refuses CREATE_CQ (BAD_PARAM, a syndrome): the error comes back, nothing is
 * left, and the NIC's diagnostic said what firmware said before it was closed */
static void test_firmware_refuses(void **state)
{
	(void)state;
	assert_int_equal(dvx_mock_fail_devx(&mock, -1, DVX_MLX5_CMD_CREATE_CQ, -1, 0x03,
					    0x1234abcd, 0), 0);
	assert_int_equal(app_init(&app, dvx_mock_hal(&mock), 128), -EINVAL);
	assert_int_equal(dvx_mock_live_total(&mock), 0);
}

/* every hal call of app_init() failing in turn: an error each time, no leak */
static int sw_action(void *ctx)
{
	return app_init(ctx, dvx_mock_hal(&mock), 64);
}

static void sw_undo(void *ctx)
{
	app_fini(ctx);
}

static void test_sweep(void **state)
{
	struct dvx_test_sweep s = { NULL, sw_action, sw_undo, NULL, &app, 0, 0 };
	struct dvx_test_sweep_report rep;
	int err;

	(void)state;
	err = dvx_test_sweep(&mock, &s, &rep);
	if (err)
		fail_msg("call %u: %s", rep.bad_call, rep.why);
	print_message("app_init: %u hal calls failed in turn, every one cleaned up\n", rep.failed);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_init, setup),
		cmocka_unit_test_setup(test_firmware_refuses, setup),
		cmocka_unit_test_setup(test_sweep, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
