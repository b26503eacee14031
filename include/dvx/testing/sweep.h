/* SPDX-License-Identifier: MIT */
/*
 * dvx/testing/sweep.h - fault sweeps over the mock hal, for users' own test suites
 * (libdvx-test.a; docs/testing.md "Testing your code against dvx").
 *
 * A sweep runs the caller's action once per hal call it makes, failing exactly that
 * call (1st, 2nd, ...), and checks what every init path of a driver must do on a
 * failure: return a negative errno (never 0, never a positive value), and leave
 * nothing behind (the mock's live objects are what they were before the action), so
 * that the caller's teardown brings the mock back to where it started. It ends at the
 * first run in which the action completes without reaching the injected call.
 *
 *	struct dvx_test_sweep s = { .setup = open_nic, .action = make_cq,
 *				    .undo = destroy_cq, .teardown = close_nic, .ctx = &t };
 *	struct dvx_test_sweep_report rep;
 *
 *	assert_int_equal(dvx_test_sweep(&mock, &s, &rep), 0);	// rep.why if not
 */
#ifndef DVX_TESTING_SWEEP_H
#define DVX_TESTING_SWEEP_H

#include <dvx/testing/mock.h>

DVX_BEGIN_DECLS

/**
 * struct dvx_test_sweep - what to sweep.
 * @setup:	before each run, e.g. open the NIC (NULL: nothing); its calls are not
 *		swept
 * @action:	the code under test: 0 or a negative errno
 * @undo:	after a run where @action returned 0: release what it made (NULL:
 *		nothing)
 * @teardown:	after each run, e.g. close the NIC (NULL: nothing)
 * @ctx:	passed to the four
 * @err:	the error the failed call returns (0: -EIO)
 * @max_calls:	give up after this many runs (0: 1000)
 */
struct dvx_test_sweep {
	void (*setup)(void *ctx);
	int (*action)(void *ctx);
	void (*undo)(void *ctx);
	void (*teardown)(void *ctx);
	void *ctx;
	int err;
	uint32_t max_calls;
};

/**
 * struct dvx_test_sweep_report - what a sweep saw.
 * @runs:	runs made
 * @failed:	runs in which @action returned an error, as it should
 * @absorbed:	runs in which the failed call was absorbed (a fallback) and @action
 *		still returned 0
 * @bad_call:	0, or the call whose failure broke a rule
 * @bad_ret:	what @action returned then
 * @why:	the rule broken, in words ("" when none)
 */
struct dvx_test_sweep_report {
	uint32_t runs;
	uint32_t failed;
	uint32_t absorbed;
	uint32_t bad_call;
	int32_t bad_ret;
	char why[160];
};

/**
 * dvx_test_sweep() - fail each hal call of @s->action in turn and check the rules.
 * @m:		the mock the action's objects use (dvx_mock_hal(@m))
 * @s:		the sweep
 * @rep:	filled (may be NULL)
 *
 * Uses the mock's fault injection (dvx_mock_fail_at()) and disarms only that after
 * each run (faults the caller armed with dvx_mock_fail_op() or dvx_mock_fail_devx()
 * stay armed); the call log is reset before each action. An action that fails
 * without reaching the injected call breaks a rule too (it failed for another
 * reason).
 *
 * Context: a test, one thread. Return: 0 when every run kept the rules; -EPROTO when
 * one did not (@rep says which call and why; the sweep stops there, after running
 * @s->teardown so the caller can leave the mock clean); -EINVAL for NULL
 * @m, @s or @s->action; -E2BIG when the action still reached the injected call after
 * @max_calls runs.
 */
int dvx_test_sweep(struct dvx_mock *m, const struct dvx_test_sweep *s,
		   struct dvx_test_sweep_report *rep);

DVX_END_DECLS

#endif /* DVX_TESTING_SWEEP_H */
