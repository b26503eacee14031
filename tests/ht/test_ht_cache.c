// SPDX-License-Identifier: MIT
/*
 * tests/ht/test_ht_cache.c - the per-peer transport cache on the software NIC.
 * One thread: its lifecycle (made on first use, the same transport on every later
 * get, the other mode refused with -EEXIST and nothing changed, a peer's handshake
 * answered by a cache that was never asked, fini releasing everything), crossed
 * modes (both ends fail with -EPROTO), bad input. Ranks as threads, 2 to 8: every
 * rank asks for its peers in its own random order and waits for each one before
 * asking for the next (the order that deadlocks a construction that blocks for its
 * peer), then every rank sends to every other at once (modes by pair, every byte
 * checked), and finishes its cache while others may still be finishing theirs.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>

#include "../lib/dvx_test.h"
#include "hworld.h"

#define T_OUT (60 * HW_SEC)
#define SIZE (256u << 10)

static struct hw W;

static void cfg_of(struct dvx_ht_cache_cfg *c)
{
	memset(c, 0, sizeof(c[0]));
	c->tmpl.nchannels = 2;
	c->tmpl.sq_depth = 64;
	c->tmpl.rq_depth = 64;
	c->tmpl.cb_depth = 4;
	c->tmpl.cb_slot_bytes = 8192;
}

static uint32_t sim_qps(void)
{
	struct dvx_sim_stats s;

	dvx_sim_get_stats(W.fab, &s);
	return s.live[5];
}

static void test_lifecycle(void **state)
{
	struct dvx_ht_cache_cfg c;
	struct dvx_ht_cache_stats st;
	struct dvx_ht *t, *t2, *u;
	struct hw_side tx, rx;
	struct hw_side *sides[2] = { &tx, &rx };
	uint64_t end;
	uint32_t qps;

	(void)state;
	assert_int_equal(hw_init(&W, 3, SIZE), 0);
	cfg_of(&c);
	qps = sim_qps();
	assert_int_equal(hw_caches(&W, &c), 0);
	assert_int_equal(sim_qps(), qps);	/* an empty cache holds nothing */
	assert_null(dvx_ht_cache_lookup(&W.r[0].cache, 1));
	/* made on first use, the same one afterwards */
	assert_int_equal(dvx_ht_cache_get(&W.r[0].cache, 1, DVX_HT_ZC, &t), 0);
	assert_int_equal(t->peer, 1);
	assert_int_equal(t->mode, DVX_HT_ZC);
	assert_int_equal(t->nchannels, 2);
	assert_int_equal(dvx_ht_cache_get(&W.r[0].cache, 1, DVX_HT_ZC, &t2), 0);
	assert_ptr_equal(t, t2);
	assert_ptr_equal(dvx_ht_cache_lookup(&W.r[0].cache, 1), t);
	assert_int_equal(sim_qps(), qps + 2);
	/* the other mode: refused, nothing changes */
	t2 = NULL;
	assert_int_equal(dvx_ht_cache_get(&W.r[0].cache, 1, DVX_HT_CB, &t2), -EEXIST);
	assert_null(t2);
	assert_int_equal(dvx_ht_cache_get(&W.r[0].cache, 1, DVX_HT_ZC, &t2), 0);
	assert_ptr_equal(t, t2);
	assert_int_equal(sim_qps(), qps + 2);
	/* another peer, another transport */
	assert_int_equal(dvx_ht_cache_get(&W.r[0].cache, 2, DVX_HT_CB, &u), 0);
	assert_ptr_not_equal(t, u);
	dvx_ht_cache_get_stats(&W.r[0].cache, &st);
	assert_int_equal(st.live, 2);
	assert_int_equal(st.asked, 2);
	assert_int_equal(st.hits, 2);
	assert_int_equal(st.refused, 1);
	/* rank 1 never asks: its cache answers rank 0's handshake */
	end = hw_now() + T_OUT;
	while (!dvx_ht_connected(t) && hw_now() < end) {
		dvx_ht_progress(t);
		dvx_ht_cache_progress(&W.r[1].cache);
	}
	assert_true(dvx_ht_connected(t));
	t2 = dvx_ht_cache_lookup(&W.r[1].cache, 0);
	assert_non_null(t2);
	assert_int_equal(t2->mode, DVX_HT_ZC);	/* the mode rank 0 asked for */
	dvx_ht_cache_get_stats(&W.r[1].cache, &st);
	assert_int_equal(st.answered, 1);
	assert_int_equal(st.asked, 0);
	assert_int_equal(dvx_ht_cache_get(&W.r[1].cache, 0, DVX_HT_CB, &u), -EEXIST);
	assert_int_equal(dvx_ht_cache_get(&W.r[1].cache, 0, DVX_HT_ZC, &u), 0);
	assert_ptr_equal(u, t2);
	/* and it carries data both ways */
	hw_fill(W.r[0].sbuf, SIZE, 1);
	hw_side_init(&tx, t, 1, W.r[0].sbuf, &W.r[0].smr, SIZE, 32768, 2, 0);
	hw_side_init(&rx, t2, 0, W.r[1].rbuf, &W.r[1].rmr, SIZE, 32768, 2, 0);
	assert_int_equal(hw_run(sides, 2, T_OUT), 0);
	assert_int_equal(hw_verify(W.r[1].rbuf, SIZE, 1, NULL), 0);
	/* bad arguments */
	assert_int_equal(dvx_ht_cache_get(&W.r[0].cache, 0, DVX_HT_ZC, &u), -EINVAL);
	assert_int_equal(dvx_ht_cache_get(&W.r[0].cache, 3, DVX_HT_ZC, &u), -EINVAL);
	assert_int_equal(dvx_ht_cache_get(&W.r[0].cache, 1, 0, &u), -EINVAL);
	assert_int_equal(dvx_ht_cache_get(&W.r[0].cache, 1, DVX_HT_ZC, NULL), -EINVAL);
	assert_int_equal(dvx_ht_cache_init(&W.r[0].cache, &c, W.r[0].cs, 1 << 20, W.r[0].cr,
					   1 << 20, W.r[0].cd, 1 << 20),
			 -EBUSY);
	/* fini releases every transport */
	assert_int_equal(dvx_ht_cache_fini(&W.r[0].cache), 0);
	assert_int_equal(dvx_ht_cache_fini(&W.r[1].cache), 0);
	assert_int_equal(dvx_ht_cache_fini(&W.r[2].cache), 0);
	assert_int_equal(sim_qps(), qps);
	assert_int_equal(dvx_ht_cache_fini(&W.r[0].cache), -EINVAL);
	assert_null(dvx_ht_cache_lookup(&W.r[0].cache, 1));
	assert_int_equal(hw_fini(&W), 0);
}

/* both ranks ask at once, for different modes: both transports fail with -EPROTO and
 * stay cached as they are (no abort, no second try) */
static void test_crossed_modes(void **state)
{
	struct dvx_ht_cache_cfg c;
	struct dvx_ht *a, *b;
	uint64_t end;

	(void)state;
	assert_int_equal(hw_init(&W, 2, SIZE), 0);
	cfg_of(&c);
	assert_int_equal(hw_caches(&W, &c), 0);
	assert_int_equal(dvx_ht_cache_get(&W.r[0].cache, 1, DVX_HT_ZC, &a), 0);
	assert_int_equal(dvx_ht_cache_get(&W.r[1].cache, 0, DVX_HT_CB, &b), 0);
	end = hw_now() + T_OUT;
	while ((!dvx_ht_status(a, -1) || !dvx_ht_status(b, -1)) && hw_now() < end)
		hw_progress(&W);
	assert_int_equal(dvx_ht_status(a, -1), -EPROTO);
	assert_int_equal(dvx_ht_status(b, -1), -EPROTO);
	assert_int_equal(dvx_ht_wait_connected(a, 1000), -EPROTO);
	assert_int_equal(dvx_ht_cache_get(&W.r[0].cache, 1, DVX_HT_ZC, &b), 0);
	assert_ptr_equal(a, b);
	assert_int_equal(hw_fini(&W), 0);
}

static void test_bad_config(void **state)
{
	struct dvx_ht_cache_cfg c;
	struct dvx_ht_cache x;
	struct dvx_mem_req s, g, d;

	(void)state;
	assert_int_equal(hw_init(&W, 2, SIZE), 0);
	cfg_of(&c);
	c.bs = &W.r[0].bs;
	c.tmpl.nic = &W.r[0].nic;
	assert_int_equal(dvx_ht_cache_mem_req(&c, &s, &g, &d), 0);
	assert_int_equal(dvx_ht_cache_mem_req(NULL, &s, &g, &d), -EINVAL);
	c.tmpl.sq_depth = 3;
	assert_int_equal(dvx_ht_cache_mem_req(&c, &s, &g, &d), -EINVAL);
	cfg_of(&c);
	c.bs = NULL;
	assert_int_equal(dvx_ht_cache_mem_req(&c, &s, &g, &d), -EINVAL);
	c.bs = &W.r[0].bs;
	memset(&x, 0, sizeof(x));
	/* no NIC in the template */
	assert_int_equal(dvx_ht_cache_init(&x, &c, NULL, 0, NULL, 0, NULL, 0), -EINVAL);
	c.tmpl.nic = &W.r[0].nic;
	assert_int_equal(dvx_ht_cache_init(&x, &c, NULL, 0, NULL, 0, NULL, 0), -EINVAL);
	assert_int_equal(x.live, 0);
	assert_int_equal(hw_fini(&W), 0);
}

/* ---- ranks as threads ------------------------------------------------------------- */

struct run {
	int n;
	uint64_t seed;
	int fail[HW_MAX];
	char why[HW_MAX][160];
	int answered[HW_MAX];
};

struct rank_arg {
	struct run *run;
	int rank;
};

static void *rank_main(void *p)
{
	struct rank_arg *a = p;
	struct run *run = a->run;
	struct dvx_ht_cache_stats st;
	int me = a->rank;

	if (hw_all_to_all(&W, me, SIZE, run->seed, run->why[me], sizeof(run->why[me]))) {
		run->fail[me] = 1;
		return NULL;
	}
	dvx_ht_cache_get_stats(&W.r[me].cache, &st);
	run->answered[me] = (int)st.answered;
	return NULL;
}

static void ranks(int n, uint64_t seed)
{
	struct dvx_ht_cache_cfg c;
	struct run run;
	struct rank_arg args[HW_MAX];
	pthread_t th[HW_MAX];
	int i, answered = 0;

	memset(&run, 0, sizeof(run));
	run.n = n;
	run.seed = seed;
	assert_int_equal(hw_init(&W, n, (uint64_t)SIZE * n), 0);
	cfg_of(&c);
	assert_int_equal(hw_caches(&W, &c), 0);
	for (i = 0; i < n; i++) {
		args[i].run = &run;
		args[i].rank = i;
		assert_int_equal(pthread_create(&th[i], NULL, rank_main, &args[i]), 0);
	}
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < n; i++) {
		if (run.fail[i])
			fail_msg("%d ranks, rank %d: %s", n, i, run.why[i]);
		answered += run.answered[i];
	}
	print_message("%d ranks: %d of %d transports made to answer a peer\n", n, answered,
		      n * (n - 1));
	assert_int_equal(hw_fini(&W), 0);
}

static void test_ranks(void **state)
{
	int n;

	(void)state;
	for (n = 2; n <= HW_MAX; n++)
		ranks(n, (uint64_t)n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lifecycle),
		cmocka_unit_test(test_crossed_modes),
		cmocka_unit_test(test_bad_config),
		cmocka_unit_test(test_ranks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
