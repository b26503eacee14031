// SPDX-License-Identifier: MIT
/*
 * The bootstrap's threads adapter (core/bootstrap/thread.c) and its generic calls
 * (core/bootstrap/bootstrap.c): ranks are threads of this process.
 *
 * Rank threads never call cmocka's asserts (they are not thread-safe): a rank records the
 * line of its first failed check and the main thread asserts that every rank passed.
 * Timeouts are short only where a timeout is the expected outcome; everything that must
 * succeed gets 20 s, so a loaded machine cannot make a test flaky.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>

#include "../lib/dvx_test.h"

#include <dvx/bootstrap/bootstrap.h>

#define LONG_NS (20ull * 1000000000ull)
#define SHORT_NS (100ull * 1000000ull)
#define MAXR 8

struct run;
typedef int (*rank_fn)(struct run *run, struct dvx_bootstrap *bs, int rank);

struct run {
	struct dvx_bootstrap_tgroup *g;
	int nranks;
	rank_fn fn;
	void *arg;
	atomic_int counter;
	pthread_barrier_t pb;	/* out-of-band sync between the rank threads */
	int fail_line[MAXR];
	int rank_of[MAXR];
	pthread_t tid[MAXR];
	void *mem;
};

/* A failed check in a rank thread: return the line. */
#define CHECK(cond) \
	do { \
		if (!(cond)) \
			return __LINE__; \
	} while (0)
#define CHECK_RET(expr, want) \
	do { \
		int ret_ = (expr); \
		if (ret_ != (want)) { \
			fprintf(stderr, "%s:%d: %s = %d, want %d\n", __FILE__, __LINE__, #expr, \
				ret_, (want)); \
			return __LINE__; \
		} \
	} while (0)

static void *rank_main(void *p)
{
	int *slot = p;
	struct run *run = (struct run *)(void *)((char *)p - offsetof(struct run, rank_of) -
						   (size_t)*slot * sizeof(int));
	int rank = *slot, line;
	struct dvx_bootstrap bs;

	line = dvx_bootstrap_thread_init(&bs, run->g, rank);
	if (line) {
		run->fail_line[rank] = -1000 + line;
		return NULL;
	}
	line = run->fn(run, &bs, rank);
	dvx_bootstrap_fini(&bs);
	run->fail_line[rank] = line;
	return NULL;
}

/* Run @fn on @nranks threads over a fresh group with @slots slots of @slot_bytes. */
static void run_ranks(int nranks, uint32_t slots, uint32_t slot_bytes, rank_fn fn, void *arg)
{
	struct dvx_bootstrap_tgroup_cfg attr = {
		.nranks = nranks, .max_unexpected = slots, .slot_bytes = slot_bytes,
	};
	struct run *run = calloc(1, sizeof(*run));
	size_t sz = dvx_bootstrap_tgroup_mem_size(nranks, slots, slot_bytes);
	int i;

	assert_non_null(run);
	assert_int_equal(sz, DVX_BOOTSTRAP_TGROUP_MEM_SIZE(nranks, slots, slot_bytes));
	run->mem = aligned_alloc(64, DVX_ALIGN_UP(sz, 64));
	assert_non_null(run->mem);
	assert_int_equal(dvx_bootstrap_tgroup_init(&run->g, &attr, run->mem, sz), 0);
	run->nranks = nranks;
	run->fn = fn;
	run->arg = arg;
	atomic_init(&run->counter, 0);
	pthread_barrier_init(&run->pb, NULL, (unsigned)nranks);
	for (i = 0; i < nranks; i++) {
		run->rank_of[i] = i;
		assert_int_equal(pthread_create(&run->tid[i], NULL, rank_main, &run->rank_of[i]), 0);
	}
	for (i = 0; i < nranks; i++)
		pthread_join(run->tid[i], NULL);
	for (i = 0; i < nranks; i++) {
		if (run->fail_line[i])
			fprintf(stderr, "rank %d failed at line %d\n", i, run->fail_line[i]);
	}
	for (i = 0; i < nranks; i++)
		assert_int_equal(run->fail_line[i], 0);
	assert_int_equal(dvx_bootstrap_tgroup_fini(run->g), 0);
	pthread_barrier_destroy(&run->pb);
	free(run->mem);
	free(run);
}

static uint8_t pat(int rank, size_t i, int salt)
{
	return (uint8_t)(rank * 31 + (int)i * 7 + salt);
}

/* ------------------------------------------------------------------------------------ */

static int do_allgather(struct run *run, struct dvx_bootstrap *bs, int rank)
{
	static const size_t lens[] = { 1, 8, 100, 4096, 100000 };
	int n = run->nranks, r, k;
	size_t i, li;

	CHECK(dvx_bootstrap_rank(bs) == rank && dvx_bootstrap_nranks(bs) == n);
	for (li = 0; li < DVX_ARRAY_SIZE(lens); li++) {
		size_t len = lens[li];
		uint8_t *in = malloc(len), *out = malloc(len * (size_t)n);

		CHECK(in && out);
		for (k = 0; k < 3; k++) {
			for (i = 0; i < len; i++)
				in[i] = pat(rank, i, k);
			memset(out, 0xee, len * (size_t)n);
			CHECK_RET(dvx_bootstrap_allgather(bs, in, out, len, LONG_NS), 0);
			for (r = 0; r < n; r++)
				for (i = 0; i < len; i++)
					CHECK(out[(size_t)r * len + i] == pat(r, i, k));
		}
		/* in place: the input is this rank's block of out */
		for (i = 0; i < len; i++)
			out[(size_t)rank * len + i] = pat(rank, i, 9);
		CHECK_RET(dvx_bootstrap_allgather(bs, out + (size_t)rank * len, out, len, LONG_NS), 0);
		for (r = 0; r < n; r++)
			for (i = 0; i < len; i++)
				CHECK(out[(size_t)r * len + i] == pat(r, i, 9));
		free(in);
		free(out);
	}
	return 0;
}

static void test_allgather(void **state)
{
	(void)state;
	run_ranks(1, 4, 64, do_allgather, NULL);
	run_ranks(2, 4, 64, do_allgather, NULL);
	run_ranks(4, 4, 64, do_allgather, NULL);
	run_ranks(8, 4, 64, do_allgather, NULL);
	run_ranks(8, 0, 0, do_allgather, NULL);	/* no slots: every message waits */
}

static int do_barrier(struct run *run, struct dvx_bootstrap *bs, int rank)
{
	int k, n = run->nranks;

	for (k = 0; k < 40; k++) {
		atomic_fetch_add(&run->counter, 1);
		CHECK_RET(dvx_bootstrap_barrier(bs, LONG_NS), 0);
		/* everybody incremented for round k before anybody left it */
		CHECK(atomic_load(&run->counter) >= (k + 1) * n);
		CHECK_RET(dvx_bootstrap_barrier(bs, LONG_NS), 0);
	}
	return 0;
}

static void test_barrier(void **state)
{
	(void)state;
	run_ranks(2, 2, 16, do_barrier, NULL);
	run_ranks(4, 2, 16, do_barrier, NULL);
	run_ranks(8, 2, 16, do_barrier, NULL);
}

/* Every pair, both ways, small messages (eager), then out-of-order tags. */
static int do_p2p(struct run *run, struct dvx_bootstrap *bs, int rank)
{
	int n = run->nranks, d, p;
	uint32_t v, t;

	for (d = 1; d < n; d++) {
		p = (rank + d) % n;
		v = (uint32_t)(rank * 1000 + p);
		CHECK_RET(dvx_bootstrap_send(bs, p, 42, &v, sizeof(v), LONG_NS), 0);
	}
	for (d = 1; d < n; d++) {
		p = (rank + n - d) % n;
		CHECK_RET(dvx_bootstrap_recv(bs, p, 42, &v, sizeof(v), LONG_NS), 0);
		CHECK(v == (uint32_t)(p * 1000 + rank));
	}
	/* nothing of the above is left in a mailbox: the slots are free for what follows */
	CHECK_RET(dvx_bootstrap_barrier(bs, LONG_NS), 0);
	/* rank 0 -> 1: tags 1..5 sent in order, received 5,3,1,2,4; same tag keeps order */
	if (rank == 0) {
		for (t = 1; t <= 5; t++)
			CHECK_RET(dvx_bootstrap_send(bs, 1, t, &t, sizeof(t), LONG_NS), 0);
		for (t = 0; t < 3; t++)
			CHECK_RET(dvx_bootstrap_send(bs, 1, 77, &t, sizeof(t), LONG_NS), 0);
		CHECK_RET(dvx_bootstrap_send(bs, 1, 78, NULL, 0, LONG_NS), 0);
	} else if (rank == 1) {
		static const uint32_t order[] = { 5, 3, 1, 2, 4 };
		size_t i;

		for (i = 0; i < DVX_ARRAY_SIZE(order); i++) {
			CHECK_RET(dvx_bootstrap_recv(bs, 0, order[i], &v, sizeof(v), LONG_NS), 0);
			CHECK(v == order[i]);
		}
		for (t = 0; t < 3; t++) {
			CHECK_RET(dvx_bootstrap_recv(bs, 0, 77, &v, sizeof(v), LONG_NS), 0);
			CHECK(v == t);
		}
		CHECK_RET(dvx_bootstrap_recv(bs, 0, 78, NULL, 0, LONG_NS), 0);
	}
	/* a large message (bigger than any slot) each way, in a fixed order */
	if (rank < 2) {
		size_t len = 3u << 20, i;
		uint8_t *b = malloc(len);

		CHECK(b);
		if (rank == 0) {
			for (i = 0; i < len; i++)
				b[i] = pat(0, i, 1);
			CHECK_RET(dvx_bootstrap_send(bs, 1, 5, b, len, LONG_NS), 0);
			CHECK_RET(dvx_bootstrap_recv(bs, 1, 6, b, len, LONG_NS), 0);
			for (i = 0; i < len; i++)
				CHECK(b[i] == pat(1, i, 2));
		} else {
			CHECK_RET(dvx_bootstrap_recv(bs, 0, 5, b, len, LONG_NS), 0);
			for (i = 0; i < len; i++)
				CHECK(b[i] == pat(0, i, 1));
			for (i = 0; i < len; i++)
				b[i] = pat(1, i, 2);
			CHECK_RET(dvx_bootstrap_send(bs, 0, 6, b, len, LONG_NS), 0);
		}
		free(b);
	}
	/* a length mismatch drops that message and nothing else */
	if (rank == 0) {
		uint64_t big = 0x1122334455667788ull;

		CHECK_RET(dvx_bootstrap_send(bs, 1, 9, &big, sizeof(big), LONG_NS), 0);
		v = 99;
		CHECK_RET(dvx_bootstrap_send(bs, 1, 9, &v, sizeof(v), LONG_NS), 0);
	} else if (rank == 1) {
		CHECK_RET(dvx_bootstrap_recv(bs, 0, 9, &v, sizeof(v), LONG_NS), -EMSGSIZE);
		CHECK_RET(dvx_bootstrap_recv(bs, 0, 9, &v, sizeof(v), LONG_NS), 0);
		CHECK(v == 99);
	}
	CHECK_RET(dvx_bootstrap_barrier(bs, LONG_NS), 0);
	return 0;
}

static void test_p2p(void **state)
{
	(void)state;
	run_ranks(2, 8, 64, do_p2p, NULL);
	run_ranks(4, 8, 64, do_p2p, NULL);
	run_ranks(8, 8, 64, do_p2p, NULL);
}

/* A duplicate's messages and collectives never meet the original's. */
static int do_dup(struct run *run, struct dvx_bootstrap *bs, int rank)
{
	struct dvx_bootstrap d1, d2;
	uint32_t v;
	int n = run->nranks, i, p;
	uint32_t in, *out = calloc((size_t)n, sizeof(*out));

	CHECK(out);
	CHECK_RET(dvx_bootstrap_dup(bs, &d1), 0);
	CHECK_RET(dvx_bootstrap_dup(&d1, &d2), 0);
	CHECK(d1.space != 0 && d2.space != 0 && d1.space != d2.space);
	CHECK(dvx_bootstrap_rank(&d1) == rank && dvx_bootstrap_nranks(&d2) == n);
	if (rank == 0) {
		v = 2;
		CHECK_RET(dvx_bootstrap_send(&d2, 1, 7, &v, sizeof(v), LONG_NS), 0);
		v = 1;
		CHECK_RET(dvx_bootstrap_send(&d1, 1, 7, &v, sizeof(v), LONG_NS), 0);
		v = 0;
		CHECK_RET(dvx_bootstrap_send(bs, 1, 7, &v, sizeof(v), LONG_NS), 0);
	} else if (rank == 1) {
		CHECK_RET(dvx_bootstrap_recv(bs, 0, 7, &v, sizeof(v), LONG_NS), 0);
		CHECK(v == 0);
		CHECK_RET(dvx_bootstrap_recv(&d1, 0, 7, &v, sizeof(v), LONG_NS), 0);
		CHECK(v == 1);
		CHECK_RET(dvx_bootstrap_recv(&d2, 0, 7, &v, sizeof(v), LONG_NS), 0);
		CHECK(v == 2);
	}
	/* the first collective of each context has the same number: a rank that is done
	 * with d1's sends its next step on bs to a neighbour still in d1 */
	for (i = 0; i < 20; i++) {
		in = (uint32_t)rank + 100 + (uint32_t)i;
		CHECK_RET(dvx_bootstrap_allgather(&d1, &in, out, sizeof(in), LONG_NS), 0);
		for (p = 0; p < n; p++)
			CHECK(out[p] == (uint32_t)(p + 100 + i));
		in = (uint32_t)rank + 200 + (uint32_t)i;
		CHECK_RET(dvx_bootstrap_allgather(bs, &in, out, sizeof(in), LONG_NS), 0);
		for (p = 0; p < n; p++)
			CHECK(out[p] == (uint32_t)(p + 200 + i));
		CHECK_RET(dvx_bootstrap_barrier(&d2, LONG_NS), 0);
	}
	/* the rank stays in the group until its last context goes */
	dvx_bootstrap_fini(&d2);
	dvx_bootstrap_fini(&d1);
	CHECK_RET(dvx_bootstrap_barrier(bs, LONG_NS), 0);
	free(out);
	return 0;
}

static void test_dup(void **state)
{
	(void)state;
	run_ranks(2, 8, 64, do_dup, NULL);
	run_ranks(4, 8, 64, do_dup, NULL);
}

/* The last rank stays away from the barrier until the others timed out; they resume. */
static int do_timeout(struct run *run, struct dvx_bootstrap *bs, int rank)
{
	int last = run->nranks - 1;
	uint32_t v;

	if (rank != last) {
		CHECK_RET(dvx_bootstrap_barrier(bs, SHORT_NS), -ETIMEDOUT);
		/* the barrier is pending: other calls wait for it */
		CHECK_RET(dvx_bootstrap_send(bs, last, 1, &v, sizeof(v), LONG_NS), -EBUSY);
		CHECK_RET(dvx_bootstrap_barrier(bs, 0), -ETIMEDOUT);
		pthread_barrier_wait(&run->pb);
		CHECK_RET(dvx_bootstrap_barrier(bs, LONG_NS), 0);
	} else {
		pthread_barrier_wait(&run->pb);
		CHECK_RET(dvx_bootstrap_barrier(bs, LONG_NS), 0);
	}
	/* a receive nobody sends to times out cleanly, and the next one works */
	if (rank == 0) {
		CHECK_RET(dvx_bootstrap_recv(bs, 1, 3, &v, sizeof(v), SHORT_NS), -ETIMEDOUT);
		CHECK_RET(dvx_bootstrap_recv(bs, 1, 3, &v, sizeof(v), 0), -ETIMEDOUT);
		pthread_barrier_wait(&run->pb);
		CHECK_RET(dvx_bootstrap_recv(bs, 1, 3, &v, sizeof(v), LONG_NS), 0);
		CHECK(v == 33);
	} else if (rank == 1) {
		pthread_barrier_wait(&run->pb);
		v = 33;
		CHECK_RET(dvx_bootstrap_send(bs, 0, 3, &v, sizeof(v), LONG_NS), 0);
	} else {
		pthread_barrier_wait(&run->pb);
	}
	/* a send that needs its receiver (no slots here) times out cleanly too */
	if (rank == 0) {
		CHECK_RET(dvx_bootstrap_send(bs, 1, 4, &v, sizeof(v), SHORT_NS), -ETIMEDOUT);
		pthread_barrier_wait(&run->pb);
	} else if (rank == 1) {
		pthread_barrier_wait(&run->pb);
		CHECK_RET(dvx_bootstrap_recv(bs, 0, 4, &v, sizeof(v), SHORT_NS), -ETIMEDOUT);
	} else {
		pthread_barrier_wait(&run->pb);
	}
	CHECK_RET(dvx_bootstrap_barrier(bs, LONG_NS), 0);
	return 0;
}

static void test_timeout(void **state)
{
	(void)state;
	run_ranks(2, 0, 0, do_timeout, NULL);
	run_ranks(4, 0, 0, do_timeout, NULL);
	run_ranks(8, 0, 0, do_timeout, NULL);
}

/* A rank that leaves or is aborted makes the others fail instead of waiting. */
static int do_leave(struct run *run, struct dvx_bootstrap *bs, int rank)
{
	uint32_t v = 5;

	if (rank == 0) {
		/* sent before leaving: still delivered */
		CHECK_RET(dvx_bootstrap_send(bs, 1, 1, &v, sizeof(v), LONG_NS), 0);
		CHECK_RET(dvx_bootstrap_barrier(bs, LONG_NS), 0);
		return 0;	/* rank_main finishes the context: rank 0 leaves */
	}
	CHECK_RET(dvx_bootstrap_barrier(bs, LONG_NS), 0);
	CHECK_RET(dvx_bootstrap_barrier(bs, LONG_NS), -ECONNRESET);
	if (rank == 1) {
		CHECK_RET(dvx_bootstrap_recv(bs, 0, 1, &v, sizeof(v), LONG_NS), 0);
		CHECK(v == 5);
		CHECK_RET(dvx_bootstrap_recv(bs, 0, 1, &v, sizeof(v), LONG_NS), -ECONNRESET);
		CHECK_RET(dvx_bootstrap_send(bs, 0, 1, &v, sizeof(v), LONG_NS), -ECONNRESET);
	}
	if (run->nranks > 2) {
		/* the others still talk to each other */
		int peer = rank == 1 ? 2 : 1;

		if (rank == 1) {
			CHECK_RET(dvx_bootstrap_send(bs, peer, 8, &v, sizeof(v), LONG_NS), 0);
			CHECK_RET(dvx_bootstrap_recv(bs, peer, 8, &v, sizeof(v), LONG_NS), 0);
		} else if (rank == 2) {
			CHECK_RET(dvx_bootstrap_recv(bs, peer, 8, &v, sizeof(v), LONG_NS), 0);
			CHECK_RET(dvx_bootstrap_send(bs, peer, 8, &v, sizeof(v), LONG_NS), 0);
		}
	}
	return 0;
}

static void test_leave(void **state)
{
	(void)state;
	run_ranks(2, 4, 16, do_leave, NULL);
	run_ranks(4, 4, 16, do_leave, NULL);
}

static int do_abort(struct run *run, struct dvx_bootstrap *bs, int rank)
{
	uint32_t v;

	if (rank == 0) {
		/* wait until rank 1 is (about to be) blocked, then abort rank 2 */
		pthread_barrier_wait(&run->pb);
		dvx_bootstrap_tgroup_abort(run->g, 2);
		return 0;
	}
	if (rank == 1) {
		pthread_barrier_wait(&run->pb);
		/* rank 2 never sends: the abort ends the wait */
		CHECK_RET(dvx_bootstrap_recv(bs, 2, 1, &v, sizeof(v), LONG_NS), -ECONNRESET);
		CHECK_RET(dvx_bootstrap_barrier(bs, LONG_NS), -ECONNRESET);
		return 0;
	}
	pthread_barrier_wait(&run->pb);
	/* the aborted rank's own calls fail too */
	CHECK_RET(dvx_bootstrap_recv(bs, 1, 1, &v, sizeof(v), LONG_NS), -ECONNRESET);
	return 0;
}

static void test_abort(void **state)
{
	(void)state;
	run_ranks(3, 4, 16, do_abort, NULL);
}

static int do_abort_all(struct run *run, struct dvx_bootstrap *bs, int rank)
{
	uint32_t v;

	pthread_barrier_wait(&run->pb);
	if (rank == 0)
		dvx_bootstrap_tgroup_abort(run->g, -1);
	else
		CHECK_RET(dvx_bootstrap_recv(bs, 0, 1, &v, sizeof(v), LONG_NS), -ECONNRESET);
	CHECK_RET(dvx_bootstrap_barrier(bs, LONG_NS), -ECONNRESET);
	return 0;
}

static void test_abort_all(void **state)
{
	(void)state;
	run_ranks(4, 4, 16, do_abort_all, NULL);
}

static void test_bad_args(void **state)
{
	struct dvx_bootstrap_tgroup_cfg attr = { .nranks = 2, .max_unexpected = 2,
						   .slot_bytes = 16 };
	struct dvx_bootstrap_tgroup *g = NULL;
	struct dvx_bootstrap bs, b1, dup;
	size_t sz = dvx_bootstrap_tgroup_mem_size(2, 2, 16);
	uint64_t *mem = calloc(1, sz + 8);
	uint32_t v = 0, out[2];

	(void)state;
	assert_non_null(mem);
	assert_int_equal(dvx_bootstrap_tgroup_mem_size(0, 2, 16), 0);
	assert_int_equal(dvx_bootstrap_tgroup_mem_size(-1, 2, 16), 0);
	assert_int_equal(dvx_bootstrap_tgroup_mem_size(DVX_BOOTSTRAP_MAX_RANKS + 1, 2, 16), 0);
	assert_int_equal(dvx_bootstrap_tgroup_mem_size(2, DVX_BOOTSTRAP_MAX_SLOTS + 1, 16), 0);

	assert_int_equal(dvx_bootstrap_tgroup_init(NULL, &attr, mem, sz), -EINVAL);
	assert_int_equal(dvx_bootstrap_tgroup_init(&g, NULL, mem, sz), -EINVAL);
	assert_int_equal(dvx_bootstrap_tgroup_init(&g, &attr, NULL, sz), -EINVAL);
	assert_int_equal(dvx_bootstrap_tgroup_init(&g, &attr, mem, sz - 1), -EINVAL);
	assert_int_equal(dvx_bootstrap_tgroup_init(&g, &attr, (char *)mem + 4, sz), -EINVAL);
	attr.nranks = 0;
	assert_int_equal(dvx_bootstrap_tgroup_init(&g, &attr, mem, sz), -EINVAL);
	assert_null(g);
	attr.nranks = 2;
	assert_int_equal(dvx_bootstrap_tgroup_init(&g, &attr, mem, sz), 0);

	assert_int_equal(dvx_bootstrap_thread_init(&bs, g, 2), -EINVAL);
	assert_int_equal(dvx_bootstrap_thread_init(&bs, g, -1), -EINVAL);
	assert_int_equal(dvx_bootstrap_thread_init(NULL, g, 0), -EINVAL);
	assert_int_equal(dvx_bootstrap_thread_init(&bs, NULL, 0), -EINVAL);
	assert_int_equal(dvx_bootstrap_thread_init(&bs, g, 0), 0);
	assert_int_equal(dvx_bootstrap_thread_init(&b1, g, 0), -EBUSY);
	assert_int_equal(dvx_bootstrap_tgroup_fini(g), -EBUSY);

	assert_int_equal(dvx_bootstrap_send(NULL, 1, 0, &v, 4, 0), -EINVAL);
	assert_int_equal(dvx_bootstrap_send(&bs, 0, 0, &v, 4, 0), -EINVAL);	/* self */
	assert_int_equal(dvx_bootstrap_send(&bs, 2, 0, &v, 4, 0), -EINVAL);
	assert_int_equal(dvx_bootstrap_send(&bs, -1, 0, &v, 4, 0), -EINVAL);
	assert_int_equal(dvx_bootstrap_send(&bs, 1, 0, NULL, 4, 0), -EINVAL);
	assert_int_equal(dvx_bootstrap_recv(&bs, 0, 0, &v, 4, 0), -EINVAL);
	assert_int_equal(dvx_bootstrap_recv(&bs, 1, 0, NULL, 4, 0), -EINVAL);
	assert_int_equal(dvx_bootstrap_allgather(&bs, &v, out, 0, 0), -EINVAL);
	assert_int_equal(dvx_bootstrap_allgather(&bs, NULL, out, 4, 0), -EINVAL);
	assert_int_equal(dvx_bootstrap_allgather(&bs, &v, NULL, 4, 0), -EINVAL);
	assert_int_equal(dvx_bootstrap_barrier(NULL, 0), -EINVAL);
	assert_int_equal(dvx_bootstrap_dup(&bs, NULL), -EINVAL);
	assert_int_equal(dvx_bootstrap_dup(&bs, &bs), -EINVAL);
	assert_int_equal(dvx_bootstrap_dup(NULL, &dup), -EINVAL);
	/* nothing changed: an empty receive still times out, rank 1 may still attach */
	assert_int_equal(dvx_bootstrap_recv(&bs, 1, 0, &v, 4, 0), -ETIMEDOUT);
	assert_int_equal(dvx_bootstrap_thread_init(&b1, g, 1), 0);
	/* rank 1 (this thread too) sends eagerly; rank 0 receives */
	v = 12;
	assert_int_equal(dvx_bootstrap_send(&b1, 0, 3, &v, 4, LONG_NS), 0);
	v = 0;
	assert_int_equal(dvx_bootstrap_recv(&bs, 1, 3, &v, 4, LONG_NS), 0);
	assert_int_equal(v, 12);
	/* a finished context is refused */
	dvx_bootstrap_fini(&b1);
	assert_int_equal(dvx_bootstrap_send(&b1, 0, 3, &v, 4, 0), -EINVAL);
	dvx_bootstrap_fini(&b1);	/* twice is harmless */
	assert_int_equal(dvx_bootstrap_thread_init(&b1, g, 1), -EBUSY);	/* gone for good */
	assert_int_equal(dvx_bootstrap_send(&bs, 1, 3, &v, 4, LONG_NS), -ECONNRESET);
	dvx_bootstrap_fini(&bs);
	assert_int_equal(dvx_bootstrap_tgroup_fini(g), 0);
	assert_int_equal(dvx_bootstrap_tgroup_fini(g), -EINVAL);
	free(mem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_allgather),
		cmocka_unit_test(test_barrier),
		cmocka_unit_test(test_p2p),
		cmocka_unit_test(test_dup),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_leave),
		cmocka_unit_test(test_abort),
		cmocka_unit_test(test_abort_all),
		cmocka_unit_test(test_bad_args),
	};

	return cmocka_run_group_tests_name("bootstrap-thread", tests, NULL, NULL);
}
