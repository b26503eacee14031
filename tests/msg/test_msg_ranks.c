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

#define T_OUT (60 * MW_SEC)
#define MAX_K 64
#define NB 2		/* buffers per irecv */
#define SLOT (64u << 10)

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
	/* handles[to][from][k]: the listen handle rank @to made for rank @from */
	struct dvx_msg_handle (*h)[MW_MAX][MAX_K];
	int fail[MW_MAX];
	char why[MW_MAX][160];
	uint64_t digest[MW_MAX];
	struct dvx_msg_stats stats[MW_MAX];
};

struct rank_arg {
	struct run *run;
	int rank;
};

#define RFAIL(ra, ...)                                                       \
	do {                                                                 \
		if (!(ra)->run->fail[(ra)->rank]) {                          \
			(ra)->run->fail[(ra)->rank] = __LINE__;              \
			snprintf((ra)->run->why[(ra)->rank], 160, __VA_ARGS__); \
		}                                                            \
		bar_break(&(ra)->run->bar);                                  \
	} while (0)

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* the size of the message @from sends @to on comm @k, buffer @b, round @round */
static size_t msg_len(int from, int to, int k, int b, uint32_t round)
{
	uint64_t x = mix(((uint64_t)from << 40) ^ ((uint64_t)to << 32) ^ ((uint64_t)k << 16) ^
			 ((uint64_t)b << 12) ^ round);

	switch (x & 3u) {
	case 0:
		return x >> 60;		/* 0 .. 15 */
	case 1:
		return (x >> 40) % 4096;
	default:
		return (x >> 40) % SLOT;
	}
}

static uint8_t msg_byte(int from, int to, int k, int b, uint32_t round, uint64_t i)
{
	return (uint8_t)(from * 37 + to * 11 + k * 5 + b * 3 + round * 7 + i * 13 + (i >> 8));
}

/* where rank @to receives from @from on comm @k, buffer @b (its own buffer) */
static uint64_t rx_off(const struct run *r, int from, int k, int b)
{
	return (((uint64_t)from * (uint64_t)r->k + (uint64_t)k) * NB + (uint64_t)b) * SLOT;
}

/* where rank @from keeps what it sends @to on comm @k, buffer @b */
static uint64_t tx_off(const struct run *r, int to, int k, int b)
{
	return ((uint64_t)r->n * r->k * NB + ((uint64_t)to * r->k + (uint64_t)k) * NB + (uint64_t)b) *
	       SLOT;
}

static void *rank_main(void *p)
{
	struct rank_arg *ra = p;
	struct run *r = ra->run;
	int me = ra->rank, n = r->n, K = r->k, q, k, b, i;
	struct mw_rank *mr = &r->w.r[me];
	struct dvx_msg *m = &mr->m;
	static __thread struct dvx_msg_comm *lc[MW_MAX][MAX_K], *sc[MW_MAX][MAX_K],
		*rc[MW_MAX][MAX_K];
	static __thread struct dvx_msg_handle mine[MW_MAX][MAX_K];
	static __thread struct dvx_msg_req *sq[MW_MAX][MAX_K][NB], *rq[MW_MAX][MAX_K];
	uint64_t end, dig = 0;
	uint32_t round;
	int left, err;
	const char *why = NULL;

	memset(lc, 0, sizeof(lc));
	memset(sc, 0, sizeof(sc));
	memset(rc, 0, sizeof(rc));
	/* 1. listen for every peer's K connections; publish the handles */
	for (q = 0; q < n; q++)
		for (k = 0; q != me && k < K; k++)
			if ((err = dvx_msg_listen(m, 0, &r->h[me][q][k], &lc[q][k]))) {
				RFAIL(ra, "listen = %d", err);
				goto out;
			}
	if (bar_wait(&r->bar))
		goto out;
	for (q = 0; q < n; q++)
		for (k = 0; q != me && k < K; k++)
			mine[q][k] = r->h[q][me][k];
	/* 2. connect and accept, interleaved, peers visited in a rank-dependent order */
	end = mw_now() + T_OUT;
	do {
		left = 0;
		for (i = 0; i < n; i++) {
			/* even ranks walk the peers up, odd ones down */
			q = (me & 1) ? (me + n - 1 - i) % n : (me + 1 + i) % n;
			if (q == me)
				continue;
			for (k = 0; k < K; k++) {
				if (!sc[q][k]) {
					err = dvx_msg_connect(m, 0, 0, &mine[q][k], &sc[q][k]);
					if (err) {
						RFAIL(ra, "connect to %d/%d = %d", q, k, err);
						goto out;
					}
					left += !sc[q][k];
				}
				if (!rc[q][k]) {
					err = dvx_msg_accept(lc[q][k], &rc[q][k]);
					if (err) {
						RFAIL(ra, "accept = %d", err);
						goto out;
					}
					left += !rc[q][k];
				}
			}
		}
		if (mw_now() > end) {
			RFAIL(ra, "connections: %d left", left);
			goto out;
		}
	} while (left);
	for (q = 0; q < n; q++)
		for (k = 0; q != me && k < K; k++) {
			dvx_msg_close(lc[q][k]);
			lc[q][k] = NULL;
		}
	if (dvx_msg_check(m, &why)) {
		RFAIL(ra, "after connecting: %s", why);
		goto out;
	}
	if (bar_wait(&r->bar))
		goto out;

	/* 3. rounds of traffic on every comm, driven without ever blocking on one call:
	 * shared QPs have room for only some comms' receives at a time (the depth
	 * multiplier decides how many), so posts that find none are tried again while
	 * everything else progresses, as a collective library's proxy does */
	for (round = 0; round < r->rounds; round++) {
		static __thread uint8_t rposted[MW_MAX][MAX_K], rdone[MW_MAX][MAX_K];
		static __thread uint8_t sposted[MW_MAX][MAX_K][NB], sdone[MW_MAX][MAX_K][NB];
		int todo = (n - 1) * K * (1 + NB), pass = 0;

		memset(rposted, 0, sizeof(rposted));
		memset(rdone, 0, sizeof(rdone));
		memset(sposted, 0, sizeof(sposted));
		memset(sdone, 0, sizeof(sdone));
		for (q = 0; q < n; q++)
			for (k = 0; q != me && k < K; k++)
				for (b = 0; b < NB; b++) {
					uint8_t *src = mr->buf + tx_off(r, q, k, b);
					size_t len = msg_len(me, q, k, b, round), j;

					for (j = 0; j < len; j++)
						src[j] = msg_byte(me, q, k, b, round, j);
				}
		end = mw_now() + T_OUT;
		while (todo) {
			/* receives posted and tested from the last comm to the first, sends
			 * from the first: completions of shared CQs reach every comm whichever
			 * is tested */
			for (q = n; q-- > 0;)
				for (k = K; q != me && k-- > 0;) {
					size_t got[NB];
					int done = 0;

					if (!rposted[q][k]) {
						void *bufs[NB];
						size_t sz[NB];
						uint32_t tags[NB];
						struct dvx_mr *mrs[NB];

						for (b = 0; b < NB; b++) {
							bufs[b] = mr->buf + rx_off(r, q, k, b);
							sz[b] = SLOT;
							tags[b] = (uint32_t)(k * 16 + b);
							mrs[b] = &mr->mr;
						}
						err = dvx_msg_irecv(rc[q][k], NB, bufs, sz, tags, mrs,
								    &rq[q][k]);
						if (err) {
							RFAIL(ra, "irecv from %d/%d = %d", q, k, err);
							goto out;
						}
						rposted[q][k] = rq[q][k] != NULL;
						continue;
					}
					if (rdone[q][k])
						continue;
					err = dvx_msg_test(rq[q][k], &done, got);
					if (err) {
						RFAIL(ra, "receive from %d/%d round %u = %d", q, k, round,
						      err);
						goto out;
					}
					if (!done)
						continue;
					rdone[q][k] = 1;
					todo--;
					for (b = 0; b < NB; b++) {
						const uint8_t *d = mr->buf + rx_off(r, q, k, b);
						size_t len = msg_len(q, me, k, b, round), j;

						if (got[b] != len) {
							RFAIL(ra, "from %d/%d/%d: %zu bytes, want %zu", q,
							      k, b, got[b], len);
							goto out;
						}
						for (j = 0; j < len; j++)
							if (d[j] != msg_byte(q, me, k, b, round, j)) {
								RFAIL(ra, "from %d/%d/%d: byte %zu", q, k,
								      b, j);
								goto out;
							}
						/* a sum: the order of completions must not matter */
						dig += mix(got[b] + ((uint64_t)q << 48) +
							   ((uint64_t)k << 40) + ((uint64_t)b << 36) +
							   round +
							   (len ? ((uint64_t)d[len - 1] << 20 |
								   (uint64_t)d[len / 2] << 28) :
								  0));
					}
				}
			for (q = 0; q < n; q++)
				for (k = 0; q != me && k < K; k++)
					for (b = NB; b-- > 0;) {	/* buffers in reverse order */
						int done = 0;

						if (!sposted[q][k][b]) {
							err = dvx_msg_isend(
								sc[q][k], mr->buf + tx_off(r, q, k, b),
								msg_len(me, q, k, b, round),
								(uint32_t)(k * 16 + b), &mr->mr,
								&sq[q][k][b]);
							if (err) {
								RFAIL(ra, "isend to %d/%d = %d", q, k, err);
								goto out;
							}
							sposted[q][k][b] = sq[q][k][b] != NULL;
							continue;
						}
						if (sdone[q][k][b])
							continue;
						err = dvx_msg_test(sq[q][k][b], &done, NULL);
						if (err) {
							RFAIL(ra, "send to %d/%d = %d", q, k, err);
							goto out;
						}
						if (done) {
							sdone[q][k][b] = 1;
							todo--;
						}
					}
			if (!(++pass & 255) && mw_now() > end) {
				RFAIL(ra, "round %u: %d operations left", round, todo);
				goto out;
			}
		}
		if (dvx_msg_check(m, &why)) {
			RFAIL(ra, "round %u: %s", round, why);
			goto out;
		}
		/* the peers reuse their send areas next round */
		if (bar_wait(&r->bar))
			goto out;
	}
	r->digest[me] = dig;
	dvx_msg_get_stats(m, &r->stats[me]);

	/* 4. close in a random order, checking after each */
	{
		uint64_t x = mix(r->seed ^ (uint64_t)me);
		int total = 2 * (n - 1) * K, c;

		for (c = 0; c < total; c++) {
			int pick = (int)(mix(x + (uint64_t)c) % (uint64_t)(total - c)), seen = 0;

			for (q = 0; q < n && pick >= 0; q++)
				for (k = 0; q != me && k < K && pick >= 0; k++)
					for (b = 0; b < 2 && pick >= 0; b++) {
						struct dvx_msg_comm **cc = b ? &rc[q][k] : &sc[q][k];

						if (!*cc)
							continue;
						if (seen++ == pick) {
							err = dvx_msg_close(*cc);
							*cc = NULL;
							pick = -1;
							if (err)
								RFAIL(ra, "close = %d", err);
						}
					}
			if (dvx_msg_check(m, &why)) {
				RFAIL(ra, "closing: %s", why);
				goto out;
			}
		}
	}
out:
	for (q = 0; q < n; q++)
		for (k = 0; k < K; k++) {
			if (lc[q][k])
				dvx_msg_close(lc[q][k]);
			if (sc[q][k])
				dvx_msg_close(sc[q][k]);
			if (rc[q][k])
				dvx_msg_close(rc[q][k]);
		}
	return NULL;
}

/* the traffic of @n ranks, @k comms per pair, in a world of @cfg; 0 or the first
 * rank's failure (printed) */
static int run_world(struct run *r, int n, int k, uint32_t rounds, const struct dvx_msg_cfg *cfg)
{
	struct rank_arg ra[MW_MAX];
	pthread_t th[MW_MAX];
	uint64_t buf = (uint64_t)2 * n * k * NB * SLOT;
	int i, err = 0;

	memset(r, 0, sizeof(*r));
	r->n = n;
	r->k = k;
	r->rounds = rounds;
	r->seed = 0x5eed;
	r->h = calloc(MW_MAX, sizeof(*r->h));
	assert_non_null(r->h);
	assert_int_equal(mw_init(&r->w, n, cfg, buf, 1), 0);
	bar_init(&r->bar, n);
	for (i = 0; i < n; i++) {
		ra[i].run = r;
		ra[i].rank = i;
		assert_int_equal(pthread_create(&th[i], NULL, rank_main, &ra[i]), 0);
	}
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < n; i++)
		if (r->fail[i]) {
			fprintf(stderr, "rank %d failed at line %d: %s\n", i, r->fail[i], r->why[i]);
			err = -1;
		}
	if (mw_fini(&r->w) && !err)
		err = -2;
	free(r->h);
	r->h = NULL;
	return err;
}

static void cfg_small(struct dvx_msg_cfg *c, int k, int n)
{
	memset(c, 0, sizeof(*c));
	c->max_comms = (uint32_t)(3 * (n - 1) * k + 2);
	c->max_pending = 16;
	c->max_reqs = 4;
	c->max_recvs = NB;
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
