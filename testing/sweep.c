// SPDX-License-Identifier: MIT
/*
 * testing/sweep.c - fault sweeps over the mock hal (dvx/testing/sweep.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <dvx/testing/sweep.h>

static int broke(struct dvx_test_sweep_report *rep, uint32_t call, int ret, const char *why,
		 int a, int b)
{
	rep->bad_call = call;
	rep->bad_ret = ret;
	snprintf(rep->why, sizeof(rep->why), why, a, b);
	return -EPROTO;
}

int dvx_test_sweep(struct dvx_mock *m, const struct dvx_test_sweep *s,
		   struct dvx_test_sweep_report *rep)
{
	struct dvx_test_sweep_report local;
	uint32_t n, max, calls;
	int start, before, ret, err, bad;

	if (!rep)
		rep = &local;
	memset(rep, 0, sizeof(*rep));
	if (!m || !s || !s->action)
		return -EINVAL;
	err = s->err ? (s->err < 0 ? s->err : -s->err) : -EIO;
	max = s->max_calls ? s->max_calls : 1000;
	for (n = 1; n <= max; n++) {
		start = dvx_mock_live_total(m);
		if (s->setup)
			s->setup(s->ctx);
		before = dvx_mock_live_total(m);
		dvx_mock_reset_log(m);
		dvx_mock_fail_at(m, n, err);
		ret = s->action(s->ctx);
		dvx_mock_fail_at(m, 0, 0);	/* the caller's own faults stay armed */
		calls = dvx_mock_calls(m);
		rep->runs++;
		bad = 0;
		if (ret > 0) {
			bad = broke(rep, n, ret, "the action returned %d (a positive value) for a "
				    "failed call %d", ret, (int)n);
		} else if (ret == 0) {
			if (s->undo)
				s->undo(s->ctx);
		} else if (calls < n) {
			bad = broke(rep, n, ret, "the action failed (%d) without reaching the "
				    "injected call %d", ret, (int)n);
		} else {
			rep->failed++;
			if (dvx_mock_live_total(m) != before)
				bad = broke(rep, n, ret, "%d live objects after the error, %d before "
					    "the action", dvx_mock_live_total(m), before);
		}
		/* the teardown runs whatever happened, so the mock is left as clean as the
		 * caller's teardown can make it */
		if (s->teardown)
			s->teardown(s->ctx);
		if (bad)
			return bad;
		if (dvx_mock_live_total(m) != start)
			return broke(rep, n, ret, "%d live objects after the teardown, %d before "
				     "the set-up", dvx_mock_live_total(m), start);
		if (ret == 0) {
			if (calls < n)
				return 0;	/* the action made fewer calls: every one was swept */
			rep->absorbed++;
		}
	}
	snprintf(rep->why, sizeof(rep->why), "still reaching call %u after %u runs", max, max);
	return -E2BIG;
}
