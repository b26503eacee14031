// SPDX-License-Identifier: MIT
/*
 * tests/msg/test_msg_ranks.c - the messaging layer with ranks as threads: 2 to 8 ranks
 * on one software-NIC fabric, each with its own context on its own thread, 1 to 64
 * communicators per ordered pair of ranks, connected with every rank calling connect
 * and accept in its own order; every comm carries rounds of messages (two buffers per
 * irecv, tags, sizes up to 64 KiB, completions tested out of order), every byte
 * checked; the same traffic without sharing and with the pool (4 groups, depth x2, one
 * QP) must give identical results, with the pool using far fewer QPs; communicators
 * closed in a random order while others still talk; the invariant checker after every
 * phase.
 */
#include <errno.h>
#include <pthread.h>

#include "../lib/dvx_test.h"
#include "mworld.h"
#include "mrank.h"

#define T_OUT (60 * MW_SEC)

/* a barrier that a failing rank breaks, so the others stop instead of waiting */
struct bar {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int n, in, gen, broken;
};

static void bar_init(struct bar *b, int n)
{
	pthread_mutex_init(&b->mu, NULL);
	pthread_cond_init(&b->cv, NULL);
	b->n = n;
	b->in = b->gen = b->broken = 0;
}

/* 0, or -1 when the barrier was broken */
static int bar_wait(struct bar *b)
{
	int gen, ret;

	pthread_mutex_lock(&b->mu);
	gen = b->gen;
	if (++b->in == b->n) {
		b->in = 0;
		b->gen++;
		pthread_cond_broadcast(&b->cv);
	}
	while (gen == b->gen && !b->broken)
		pthread_cond_wait(&b->cv, &b->mu);
	ret = b->broken ? -1 : 0;
	pthread_mutex_unlock(&b->mu);
	return ret;
}

static void bar_break(struct bar *b)
{
	pthread_mutex_lock(&b->mu);
	b->broken = 1;
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->mu);
}

struct run {
	struct mw w;
	int n, k;
	uint32_t rounds;
	uint64_t seed;
	struct bar bar;
	struct mrank *r[MW_MAX];
	uint64_t digest[MW_MAX];
	struct dvx_msg_stats stats[MW_MAX];
};

struct rank_arg {
	struct run *run;
	int rank;
};

static int barrier(void *arg)
{
	return bar_wait(arg);
}

static void *rank_main(void *p)
{
	struct rank_arg *ra = p;
	struct run *run = ra->run;
	struct mrank *r = run->r[ra->rank];
	int q, k;

	if (mr_listen(r) || bar_wait(&run->bar))
		goto out;
	/* the handles every other rank made for this one */
	for (q = 0; q < run->n; q++)
		for (k = 0; q != r->me && k < run->k; k++)
			r->hin[q][k] = run->r[q]->hout[r->me][k];
	if (mr_connect(r) || bar_wait(&run->bar) || mr_rounds(r, run->rounds))
		goto out;
	run->digest[r->me] = r->digest;
	dvx_msg_get_stats(r->m, &run->stats[r->me]);
	mr_close_all(r, run->seed);
out:
	if (r->fail_line)
		bar_break(&run->bar);
	return NULL;
}

/* the traffic of @n ranks, @k comms per pair, in a world of @cfg; 0 or the first
 * rank's failure (printed) */
static int run_world(struct run *r, int n, int k, uint32_t rounds, const struct dvx_msg_cfg *cfg)
{
	struct rank_arg ra[MW_MAX];
	pthread_t th[MW_MAX];
	int i, err = 0;

	memset(r, 0, sizeof(*r));
	r->n = n;
	r->k = k;
	r->rounds = rounds;
	r->seed = 0x5eed;
	assert_int_equal(mw_init(&r->w, n, cfg, mr_buf_bytes(n, k), 1), 0);
	bar_init(&r->bar, n);
	for (i = 0; i < n; i++) {
		r->r[i] = calloc(1, sizeof(struct mrank));
		assert_non_null(r->r[i]);
		r->r[i]->me = i;
		r->r[i]->n = n;
		r->r[i]->K = k;
		r->r[i]->m = &r->w.r[i].m;
		r->r[i]->buf = r->w.r[i].buf;
		r->r[i]->mr = &r->w.r[i].mr;
		r->r[i]->timeout_ns = T_OUT;
		r->r[i]->barrier = barrier;
		r->r[i]->barrier_arg = &r->bar;
	}
	for (i = 0; i < n; i++) {
		ra[i].run = r;
		ra[i].rank = i;
		assert_int_equal(pthread_create(&th[i], NULL, rank_main, &ra[i]), 0);
	}
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < n; i++) {
		if (r->r[i]->fail_line) {
			fprintf(stderr, "rank %d failed at line %d: %s\n", i, r->r[i]->fail_line,
				r->r[i]->why);
			err = -1;
		}
		/* what a failure left open */
		mr_close_all(r->r[i], 0);
	}
	if (mw_fini(&r->w) && !err)
		err = -2;
	for (i = 0; i < n; i++)
		free(r->r[i]);
	return err;
}

static void cfg_small(struct dvx_msg_cfg *c, int k, int n)
{
	memset(c, 0, sizeof(*c));
	c->max_comms = (uint32_t)(3 * (n - 1) * k + 2);
	c->max_pending = 16;
	c->max_reqs = 4;
	c->max_recvs = MR_NB;
	c->timeout_ns = T_OUT;
}

/* the same traffic without sharing and with the pool: identical results */
static void sharing_vs_private(int n, int k, uint32_t rounds)
{
	struct dvx_msg_cfg c;
	static struct run a, b;
	uint64_t qa = 0, qb = 0;
	int i;

	cfg_small(&c, k, n);
	c.max_private_sets = (uint32_t)(2 * (n - 1) * k);
	assert_int_equal(run_world(&a, n, k, rounds, &c), 0);
	cfg_small(&c, k, n);
	c.groups = 4;
	c.depth_mult = 2;
	c.nqps = 1;
	c.max_shared_sets = (uint32_t)(2 * (n - 1) * 4);
	c.max_private_sets = 2;
	assert_int_equal(run_world(&b, n, k, rounds, &c), 0);
	for (i = 0; i < n; i++) {
		assert_int_equal(a.digest[i], b.digest[i]);
		qa += a.stats[i].qps;
		qb += b.stats[i].qps;
		assert_int_equal(b.stats[i].fallbacks, 0);
	}
	if (k > 4)
		assert_true(qb < qa);
	printf("  %d ranks, %d comms per pair, %u rounds: QPs %llu private, %llu shared\n", n, k,
	       rounds, (unsigned long long)qa, (unsigned long long)qb);
}

static void test_2_ranks_1_comm(void **s)
{
	(void)s;
	sharing_vs_private(2, 1, 8);
}

static void test_2_ranks_64_comms(void **s)
{
	(void)s;
	sharing_vs_private(2, 64, 3);
}

static void test_4_ranks_16_comms(void **s)
{
	(void)s;
	sharing_vs_private(4, 16, 2);
}

static void test_8_ranks_4_comms(void **s)
{
	(void)s;
	sharing_vs_private(8, 4, 2);
}

/* several QPs per connection, striped buffers, and the pool mapping them */
static void test_4_ranks_4_qps(void **s)
{
	struct dvx_msg_cfg c;
	static struct run r;

	(void)s;
	cfg_small(&c, 8, 4);
	c.nqps = 4;
	c.split_bytes = 4096;
	c.groups = 2;
	c.max_shared_sets = 2 * 3 * 2;
	c.max_private_sets = 2;
	assert_int_equal(run_world(&r, 4, 8, 2, &c), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_2_ranks_1_comm),
		cmocka_unit_test(test_2_ranks_64_comms),
		cmocka_unit_test(test_4_ranks_16_comms),
		cmocka_unit_test(test_8_ranks_4_comms),
		cmocka_unit_test(test_4_ranks_4_qps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
