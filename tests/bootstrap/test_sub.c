// SPDX-License-Identifier: MIT
/*
 * Subgroup contexts (core/bootstrap/sub.c) over both adapters. The ranks are threads of
 * this process, each with a context of its own: from the threads adapter (one tgroup)
 * or from the sockets adapter over UNIX sockets in a fresh mkdtemp() directory.
 *
 * Every rank creates the subgroups it belongs to in the same order as the other
 * members, and only those. The shapes are chosen so that every member of a subgroup has
 * drawn the same number of tag spaces before it (docs/bootstrap.md, Subgroups).
 *
 * Rank threads never call cmocka's asserts (they are not thread-safe): a rank records
 * the line of its first failed check and the main thread asserts that every rank
 * passed. After each run the main thread also checks that every rank left its group:
 * dvx_bootstrap_tgroup_fini() succeeds (no rank attached), or no socket descriptor is
 * left open and no socket file remains. So finishing the last context of a subgroup
 * finished the duplicate of the parent that it held. Timeouts are short only where a
 * timeout is the expected outcome; everything that must succeed gets 20 s.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "../lib/dvx_test.h"

#include <dvx/bootstrap/bootstrap.h>

#define LONG_NS (20ull * 1000000000ull)
#define SHORT_NS (100ull * 1000000ull)
#define MAXR 6
#define NSLOTS 16
#define SLOT_BYTES 256
#define BIG 300			/* an allgather block larger than a slot */

enum { THREADS, SOCKETS, NKINDS };

struct run;
typedef int (*rank_fn)(struct run *run, struct dvx_bootstrap *bs, int rank);

struct rank_arg {
	struct run *run;
	int rank;
};

struct run {
	int kind;
	int nranks;
	rank_fn fn;
	const void *arg;
	struct dvx_bootstrap_tgroup *g;
	void *gmem;
	char dir[64];
	char addr[128];
	pthread_barrier_t pb;		/* out-of-band sync between the rank threads */
	atomic_int counter[MAXR];
	int fail_line[MAXR];
	struct rank_arg ra[MAXR];
	pthread_t tid[MAXR];
};

/* A failed check in a rank thread: return the line. */
#define CHECK(cond) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			return __LINE__; \
		} \
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
/* A helper's failed check: pass its line on. */
#define TRY(expr) \
	do { \
		int line_ = (expr); \
		if (line_) \
			return line_; \
	} while (0)

static void *rank_main(void *p)
{
	struct rank_arg *a = p;
	struct run *run = a->run;
	int rank = a->rank, line;
	struct dvx_bootstrap bs;
	void *mem = NULL;

	if (run->kind == THREADS) {
		line = dvx_bootstrap_thread_init(&bs, run->g, rank);
	} else {
		struct dvx_bootstrap_sock_cfg attr = {
			.addr = run->addr, .rank = rank, .nranks = run->nranks,
			.max_unexpected = NSLOTS, .slot_bytes = SLOT_BYTES, .timeout_ns = LONG_NS,
		};
		size_t sz = dvx_bootstrap_sock_mem_size(run->nranks, NSLOTS, SLOT_BYTES);

		mem = aligned_alloc(64, DVX_ALIGN_UP(sz, 64));
		line = mem ? dvx_bootstrap_sock_init(&bs, &attr, mem, sz) : -ENOMEM;
	}
	if (line) {
		fprintf(stderr, "rank %d: init = %d\n", rank, line);
		run->fail_line[rank] = -1;
		free(mem);
		return NULL;
	}
	/* the rank function finishes every context it made; the parent may be finished */
	line = run->fn(run, &bs, rank);
	dvx_bootstrap_fini(&bs);
	free(mem);
	run->fail_line[rank] = line;
	return NULL;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* Run @fn on @nranks threads, each a rank of a fresh group of adapter @kind. */
static void run_ranks(int kind, int nranks, rank_fn fn, const void *arg)
{
	struct run *run = calloc(1, sizeof(*run));
	int fds = count_fds(), i;

	assert_non_null(run);
	assert_true(nranks >= 1 && nranks <= MAXR);
	run->kind = kind;
	run->nranks = nranks;
	run->fn = fn;
	run->arg = arg;
	if (kind == THREADS) {
		struct dvx_bootstrap_tgroup_cfg attr = {
			.nranks = nranks, .max_unexpected = NSLOTS, .slot_bytes = SLOT_BYTES,
		};
		size_t sz = dvx_bootstrap_tgroup_mem_size(nranks, NSLOTS, SLOT_BYTES);

		run->gmem = aligned_alloc(64, DVX_ALIGN_UP(sz, 64));
		assert_non_null(run->gmem);
		assert_int_equal(dvx_bootstrap_tgroup_init(&run->g, &attr, run->gmem, sz), 0);
	} else {
		strcpy(run->dir, "/tmp/dvx-bs-sub-XXXXXX");
		assert_non_null(mkdtemp(run->dir));
		snprintf(run->addr, sizeof(run->addr), "unix:%s/rv", run->dir);
	}
	for (i = 0; i < MAXR; i++)
		atomic_init(&run->counter[i], 0);
	pthread_barrier_init(&run->pb, NULL, (unsigned)nranks);
	for (i = 0; i < nranks; i++) {
		run->ra[i].run = run;
		run->ra[i].rank = i;
		assert_int_equal(pthread_create(&run->tid[i], NULL, rank_main, &run->ra[i]), 0);
	}
	for (i = 0; i < nranks; i++)
		pthread_join(run->tid[i], NULL);
	for (i = 0; i < nranks; i++)
		if (run->fail_line[i])
			fprintf(stderr, "%s, %d ranks: rank %d failed at line %d\n",
				kind == THREADS ? "threads" : "sockets", nranks, i,
				run->fail_line[i]);
	for (i = 0; i < nranks; i++)
		assert_int_equal(run->fail_line[i], 0);
	/* every rank left: its last context, a subgroup's duplicate of the parent included,
	 * was finished */
	if (kind == THREADS) {
		assert_int_equal(dvx_bootstrap_tgroup_fini(run->g), 0);
		free(run->gmem);
	} else {
		assert_int_equal(rmdir(run->dir), 0);
		assert_int_equal(count_fds(), fds);
	}
	pthread_barrier_destroy(&run->pb);
	free(run);
}

static uint8_t pat(int rank, size_t i, int salt)
{
	return (uint8_t)(rank * 31 + (int)i * 7 + salt * 13);
}

/* Position of @x in @v[0..n-1], or -1. */
static int index_of(const int32_t *v, int n, int x)
{
	int i;

	for (i = 0; i < n; i++)
		if (v[i] == x)
			return i;
	return -1;
}

/* The maps of @sub, made over @ranks of a parent of @pn ranks, both ways. */
static int check_map(const struct dvx_bootstrap *sub, const int32_t *ranks, int n, int pn)
{
	int i, g;

	CHECK(dvx_bootstrap_nranks(sub) == n);
	for (i = 0; i < n; i++)
		CHECK(dvx_bootstrap_sub_global(sub, i) == ranks[i]);
	CHECK(dvx_bootstrap_sub_global(sub, -1) == -1);
	CHECK(dvx_bootstrap_sub_global(sub, n) == -1);
	for (g = -2; g <= pn + 1; g++)
		CHECK(dvx_bootstrap_sub_local(sub, g) == index_of(ranks, n, g));
	return 0;
}

/*
 * Allgather @len bytes per rank on @bs, whose local rank r is @glob[r] (NULL: r), and
 * check every block: the data says which rank and which context (@salt) it came from.
 */
static int gather_check(struct dvx_bootstrap *bs, const int32_t *glob, size_t len, int salt)
{
	int n = dvx_bootstrap_nranks(bs), me = dvx_bootstrap_rank(bs), r;
	uint8_t in[BIG], out[MAXR * BIG];
	size_t i;

	for (i = 0; i < len; i++)
		in[i] = pat(glob ? glob[me] : me, i, salt);
	memset(out, 0xee, sizeof(out));
	CHECK_RET(dvx_bootstrap_allgather(bs, in, out, len, LONG_NS), 0);
	for (r = 0; r < n; r++)
		for (i = 0; i < len; i++)
			CHECK(out[(size_t)r * len + i] == pat(glob ? glob[r] : r, i, salt));
	return 0;
}

/* Every member sends to its ring successor, then receives from its predecessor. */
static int ring_p2p(struct dvx_bootstrap *bs, const int32_t *glob, uint32_t tag, int salt)
{
	int n = dvx_bootstrap_nranks(bs), me = dvx_bootstrap_rank(bs);
	uint32_t v;

	if (n < 2)
		return 0;
	v = (uint32_t)salt << 16 | (uint32_t)glob[me];
	CHECK_RET(dvx_bootstrap_send(bs, (me + 1) % n, tag, &v, sizeof(v), LONG_NS), 0);
	CHECK_RET(dvx_bootstrap_recv(bs, (me + n - 1) % n, tag, &v, sizeof(v), LONG_NS), 0);
	CHECK(v == ((uint32_t)salt << 16 | (uint32_t)glob[(me + n - 1) % n]));
	return 0;
}

/* Barriers that hold: everybody counted round k before anybody leaves it. */
static int barrier_check(struct dvx_bootstrap *bs, atomic_int *counter, int rounds)
{
	int n = dvx_bootstrap_nranks(bs), k;

	for (k = 0; k < rounds; k++) {
		atomic_fetch_add(counter, 1);
		CHECK_RET(dvx_bootstrap_barrier(bs, LONG_NS), 0);
		CHECK(atomic_load(counter) >= (k + 1) * n);
		CHECK_RET(dvx_bootstrap_barrier(bs, LONG_NS), 0);
	}
	return 0;
}

/* ------------------------------------------------------------------------------------ */

/* Subgroups of a group; each rank makes the ones it is in, in this order. */
struct shape {
	const char *name;
	int nsubs;
	int n[MAXR];
	int32_t r[MAXR][MAXR];
};

static void shape_add(struct shape *sh, int from, int to, int step)
{
	int g, k = sh->nsubs++;

	sh->n[k] = 0;
	for (g = from; g < to; g += step)
		sh->r[k][sh->n[k]++] = g;
	assert_true(sh->n[k] > 0);
}

/*
 * Each rank: make its subgroups and check their maps; allgathers of small and large
 * blocks on the parent and each subgroup in turn (the n-th collective of each has the
 * same number, in different tag spaces); a ring of messages in each; barriers; then
 * finish the subgroups (half the ranks in the order they were made, half the other
 * way) and check that the parent still works (the rank is still in the group).
 */
static int do_shapes(struct run *run, struct dvx_bootstrap *bs, int rank)
{
	static const size_t lens[] = { 4, BIG };
	const struct shape *sh = run->arg;
	struct dvx_bootstrap sub[MAXR];
	struct dvx_bootstrap_sub st[MAXR];
	int mine[MAXR], nmine = 0, s, k, me;
	size_t li;

	for (s = 0; s < sh->nsubs; s++) {
		me = index_of(sh->r[s], sh->n[s], rank);
		if (me < 0)
			continue;
		CHECK_RET(dvx_bootstrap_sub_init(&sub[nmine], &st[nmine], bs, sh->r[s], sh->n[s]),
			  0);
		CHECK(dvx_bootstrap_rank(&sub[nmine]) == me);
		TRY(check_map(&sub[nmine], sh->r[s], sh->n[s], run->nranks));
		/* the parent is no subgroup */
		CHECK(dvx_bootstrap_sub_global(bs, 0) == -1);
		CHECK(dvx_bootstrap_sub_local(bs, 0) == -1);
		mine[nmine++] = s;
	}
	for (k = 0; k < 2; k++) {
		for (li = 0; li < DVX_ARRAY_SIZE(lens); li++) {
			TRY(gather_check(bs, NULL, lens[li], 10 * k));
			for (s = 0; s < nmine; s++)
				TRY(gather_check(&sub[s], sh->r[mine[s]], lens[li],
						 10 * k + 1 + mine[s]));
		}
	}
	for (s = 0; s < nmine; s++)
		TRY(ring_p2p(&sub[s], sh->r[mine[s]], 7, 1 + mine[s]));
	for (s = 0; s < nmine; s++)
		TRY(barrier_check(&sub[s], &run->counter[mine[s]], 4));
	for (s = 0; s < nmine; s++)
		dvx_bootstrap_fini(&sub[rank % 2 ? nmine - 1 - s : s]);
	CHECK_RET(dvx_bootstrap_barrier(bs, LONG_NS), 0);
	return 0;
}

static void test_shapes(void **state)
{
	int kind, n, i;

	(void)state;
	for (kind = 0; kind < NKINDS; kind++) {
		for (n = 1; n <= MAXR; n++) {
			struct shape shapes[7];
			int ns = 0;

			memset(shapes, 0, sizeof(shapes));
			shapes[ns].name = "all";
			shape_add(&shapes[ns++], 0, n, 1);
			shapes[ns].name = "every other";
			shape_add(&shapes[ns++], 0, n, 2);
			shapes[ns].name = "one rank";
			shape_add(&shapes[ns++], n - 1, n, 1);
			if (n >= 2) {
				/* two disjoint subgroups at the same time, with different data */
				shapes[ns].name = "evens and odds";
				shape_add(&shapes[ns], 0, n, 2);
				shape_add(&shapes[ns++], 1, n, 2);
				shapes[ns].name = "halves";
				shape_add(&shapes[ns], 0, n / 2, 1);
				shape_add(&shapes[ns++], n / 2, n, 1);
			}
			/* overlapping: the members of each drew as many spaces before it */
			shapes[ns].name = "all, evens, rank 0";
			shape_add(&shapes[ns], 0, n, 1);
			shape_add(&shapes[ns], 0, n, 2);
			shape_add(&shapes[ns++], 0, 1, 1);
			shapes[ns].name = "each rank alone";
			for (i = 0; i < n; i++)
				shape_add(&shapes[ns], i, i + 1, 1);
			ns++;
			for (i = 0; i < ns; i++)
				run_ranks(kind, n, do_shapes, &shapes[i]);
		}
	}
}

/*
 * The same pair of ranks in three contexts, the same tag: the parent, X (every rank)
 * and Y (the ranks of this rank's parity). Rank r sends to r + 2 in the parent, X and
 * Y, in that order, and receives from r - 2 in the opposite order: a receive that
 * matched another context's message would get the wrong value. Meanwhile the other
 * parity's Y does the same, and allgathers run on all three by turns.
 */
static int do_xtalk(struct run *run, struct dvx_bootstrap *bs, int rank)
{
	int n = run->nranks, dst = (rank + 2) % n, src = (rank + n - 2) % n, k;
	int32_t all[MAXR], par[MAXR];
	struct dvx_bootstrap x, y;
	struct dvx_bootstrap_sub xs, ys;
	int np = 0, i;
	uint32_t v;

	for (i = 0; i < n; i++) {
		all[i] = i;
		if (i % 2 == rank % 2)
			par[np++] = i;
	}
	CHECK_RET(dvx_bootstrap_sub_init(&x, &xs, bs, all, n), 0);
	CHECK_RET(dvx_bootstrap_sub_init(&y, &ys, bs, par, np), 0);
	CHECK(x.space != 0 && y.space != 0 && x.space != y.space);
	CHECK(dvx_bootstrap_rank(&x) == rank && dvx_bootstrap_rank(&y) == rank / 2);
	TRY(check_map(&y, par, np, n));

	v = 0x100u | (uint32_t)rank;
	CHECK_RET(dvx_bootstrap_send(bs, dst, 7, &v, sizeof(v), LONG_NS), 0);
	v = 0x200u | (uint32_t)rank;
	CHECK_RET(dvx_bootstrap_send(&x, dvx_bootstrap_sub_local(&x, dst), 7, &v, sizeof(v),
				     LONG_NS), 0);
	v = 0x300u | (uint32_t)rank;
	CHECK_RET(dvx_bootstrap_send(&y, dvx_bootstrap_sub_local(&y, dst), 7, &v, sizeof(v),
				     LONG_NS), 0);
	CHECK_RET(dvx_bootstrap_recv(&y, dvx_bootstrap_sub_local(&y, src), 7, &v, sizeof(v),
				     LONG_NS), 0);
	CHECK(v == (0x300u | (uint32_t)src));
	CHECK_RET(dvx_bootstrap_recv(&x, dvx_bootstrap_sub_local(&x, src), 7, &v, sizeof(v),
				     LONG_NS), 0);
	CHECK(v == (0x200u | (uint32_t)src));
	CHECK_RET(dvx_bootstrap_recv(bs, src, 7, &v, sizeof(v), LONG_NS), 0);
	CHECK(v == (0x100u | (uint32_t)src));

	for (k = 0; k < 3; k++) {
		TRY(gather_check(&y, par, 4, 30 + k));
		TRY(gather_check(bs, NULL, 4, 40 + k));
		TRY(gather_check(&x, all, BIG, 50 + k));
	}
	dvx_bootstrap_fini(&y);
	dvx_bootstrap_fini(&x);
	return 0;
}

static void test_xtalk(void **state)
{
	int kind;

	(void)state;
	for (kind = 0; kind < NKINDS; kind++) {
		run_ranks(kind, 4, do_xtalk, NULL);
		run_ranks(kind, 6, do_xtalk, NULL);
	}
}

/*
 * A subgroup of a subgroup. Everyone duplicates the parent (P); ranks 1..n-1 make S
 * from P and finish P at once (S holds it); S's even local ranks make A, its odd ones
 * B (disjoint, at the same time); A and B map to S's local ranks. Then S is finished
 * before A and B, which still work; and finally the original parent still works.
 */
static int do_nested(struct run *run, struct dvx_bootstrap *bs, int rank)
{
	int n = run->nranks, ns = n - 1, i, k, me, na = 0, g;
	int32_t s_ranks[MAXR], a_ranks[MAXR], a_glob[MAXR];
	struct dvx_bootstrap p, s, a;
	struct dvx_bootstrap_sub s_st, a_st;
	uint32_t v;

	CHECK_RET(dvx_bootstrap_dup(bs, &p), 0);
	if (rank == 0) {
		dvx_bootstrap_fini(&p);
		CHECK_RET(dvx_bootstrap_barrier(bs, LONG_NS), 0);
		return 0;
	}
	for (i = 0; i < ns; i++)
		s_ranks[i] = i + 1;
	CHECK_RET(dvx_bootstrap_sub_init(&s, &s_st, &p, s_ranks, ns), 0);
	dvx_bootstrap_fini(&p);
	me = dvx_bootstrap_rank(&s);
	CHECK(me == rank - 1);
	for (i = me % 2; i < ns; i += 2) {
		a_ranks[na] = i;
		a_glob[na++] = i + 1;
	}
	CHECK_RET(dvx_bootstrap_sub_init(&a, &a_st, &s, a_ranks, na), 0);
	CHECK(dvx_bootstrap_rank(&a) == me / 2);
	TRY(check_map(&a, a_ranks, na, ns));
	/* composed: A's local rank -> S's -> the group's */
	for (i = 0; i < na; i++)
		CHECK(dvx_bootstrap_sub_global(&s, dvx_bootstrap_sub_global(&a, i)) == a_glob[i]);
	for (g = 0; g < n; g++)
		CHECK(dvx_bootstrap_sub_local(&a, dvx_bootstrap_sub_local(&s, g)) ==
		      index_of(a_glob, na, g));

	for (k = 0; k < 2; k++) {
		TRY(gather_check(&a, a_glob, BIG, 60 + k + 10 * (me % 2)));
		TRY(gather_check(&s, s_ranks, 4, 70 + k));
	}
	TRY(ring_p2p(&a, a_glob, 7, 80 + me % 2));
	/* S goes first: A keeps S's state (and through it P's) alive */
	dvx_bootstrap_fini(&s);
	CHECK(dvx_bootstrap_sub_global(&s, 0) == -1);
	TRY(gather_check(&a, a_glob, 4, 90 + me % 2));
	TRY(barrier_check(&a, &run->counter[me % 2], 3));
	if (na > 1) {
		/* a message on A between two of its ranks, A's local ranks */
		int peer = dvx_bootstrap_rank(&a) ? 0 : 1;

		if (dvx_bootstrap_rank(&a) < 2) {
			v = (uint32_t)rank;
			CHECK_RET(dvx_bootstrap_send(&a, peer, 9, &v, sizeof(v), LONG_NS), 0);
			CHECK_RET(dvx_bootstrap_recv(&a, peer, 9, &v, sizeof(v), LONG_NS), 0);
			CHECK(v == (uint32_t)a_glob[peer]);
		}
	}
	dvx_bootstrap_fini(&a);
	CHECK_RET(dvx_bootstrap_barrier(bs, LONG_NS), 0);
	return 0;
}

static void test_nested(void **state)
{
	int kind, n;

	(void)state;
	for (kind = 0; kind < NKINDS; kind++)
		for (n = 3; n <= MAXR; n++)
			run_ranks(kind, n, do_nested, NULL);
}

/*
 * Duplicates of a subgroup, and the order of fini. The subgroup is ranks 1..n-1 (all
 * ranks when n = 2). *arg 0: the subgroup first, then its duplicates, then the parent.
 * *arg 1: rank 0 (a non-member when n > 2) finishes its context and leaves, which does
 * not disturb the subgroup; the members finish their parent first and go on with the
 * subgroup and its duplicates, and leave with the last of them.
 */
static int do_dup_fini(struct run *run, struct dvx_bootstrap *bs, int rank)
{
	int order = *(const int *)run->arg, n = run->nranks, m, i, me;
	int32_t ranks[MAXR];
	struct dvx_bootstrap sub, d, d2;
	struct dvx_bootstrap_sub st;
	uint32_t v;

	m = 0;
	for (i = n > 2 ? 1 : 0; i < n; i++)
		ranks[m++] = i;
	me = index_of(ranks, m, rank);
	if (me < 0) {
		if (order == 1)
			dvx_bootstrap_fini(bs);
		pthread_barrier_wait(&run->pb);
		pthread_barrier_wait(&run->pb);
		if (order == 0)
			CHECK_RET(dvx_bootstrap_barrier(bs, LONG_NS), 0);
		return 0;
	}
	CHECK_RET(dvx_bootstrap_sub_init(&sub, &st, bs, ranks, m), 0);
	CHECK_RET(dvx_bootstrap_dup(&sub, &d), 0);
	CHECK_RET(dvx_bootstrap_dup(&d, &d2), 0);
	CHECK(d.space != sub.space && d2.space != sub.space && d2.space != d.space);
	CHECK(dvx_bootstrap_rank(&d) == me && dvx_bootstrap_nranks(&d2) == m);
	TRY(check_map(&d, ranks, m, n));
	TRY(check_map(&d2, ranks, m, n));
	/* the duplicate's message and the subgroup's, same tag, never meet */
	if (me == 0) {
		v = 1;
		CHECK_RET(dvx_bootstrap_send(&d, 1, 7, &v, sizeof(v), LONG_NS), 0);
		v = 0;
		CHECK_RET(dvx_bootstrap_send(&sub, 1, 7, &v, sizeof(v), LONG_NS), 0);
	} else if (me == 1) {
		CHECK_RET(dvx_bootstrap_recv(&sub, 0, 7, &v, sizeof(v), LONG_NS), 0);
		CHECK(v == 0);
		CHECK_RET(dvx_bootstrap_recv(&d, 0, 7, &v, sizeof(v), LONG_NS), 0);
		CHECK(v == 1);
	}
	for (i = 0; i < 3; i++) {
		TRY(gather_check(&d, ranks, 4, 100 + i));
		TRY(gather_check(&sub, ranks, BIG, 110 + i));
		CHECK_RET(dvx_bootstrap_barrier(&d2, LONG_NS), 0);
	}
	if (order == 0) {
		pthread_barrier_wait(&run->pb);
		dvx_bootstrap_fini(&sub);
		CHECK(dvx_bootstrap_sub_global(&sub, 0) == -1);
		TRY(gather_check(&d, ranks, 4, 120));
		dvx_bootstrap_fini(&d2);
		TRY(barrier_check(&d, &run->counter[0], 2));
		dvx_bootstrap_fini(&d);
		pthread_barrier_wait(&run->pb);
		/* still in the group: the parent works */
		CHECK_RET(dvx_bootstrap_barrier(bs, LONG_NS), 0);
		return 0;
	}
	/* rank 0 may be gone now (n > 2); the members go on without their parent */
	dvx_bootstrap_fini(bs);
	pthread_barrier_wait(&run->pb);
	TRY(barrier_check(&sub, &run->counter[0], 2));
	TRY(gather_check(&d, ranks, BIG, 130));
	dvx_bootstrap_fini(&sub);
	dvx_bootstrap_fini(&d2);
	TRY(gather_check(&d, ranks, 4, 140));
	pthread_barrier_wait(&run->pb);
	dvx_bootstrap_fini(&d);		/* the last context: the rank leaves */
	return 0;
}

static void test_dup_fini(void **state)
{
	static const int order[2] = { 0, 1 };
	int kind, n, o;

	(void)state;
	for (kind = 0; kind < NKINDS; kind++)
		for (o = 0; o < 2; o++)
			for (n = 2; n <= MAXR; n += 2)
				run_ranks(kind, n, do_dup_fini, &order[o]);
}

/*
 * The subgroup is ranks 1..n-1; its last member stays away from an allgather until the
 * others timed out. The others' allgather is pending (-EBUSY for anything else on the
 * subgroup, dup and sub_init included) while the parent still works; then they resume
 * it with the same arguments and it finishes. Then a receive that times out cleanly.
 */
static int do_timeout(struct run *run, struct dvx_bootstrap *bs, int rank)
{
	int n = run->nranks, m = n - 1, last = m - 1, me, i, r;
	int32_t ranks[MAXR], self;
	struct dvx_bootstrap sub, x;
	struct dvx_bootstrap_sub st, xst;
	uint32_t in, out[MAXR], v = 1;

	for (i = 0; i < m; i++)
		ranks[i] = i + 1;
	if (rank == 0) {
		/* the parent's barrier: the members join it while their allgather is pending */
		CHECK_RET(dvx_bootstrap_barrier(bs, LONG_NS), 0);
		pthread_barrier_wait(&run->pb);
		pthread_barrier_wait(&run->pb);
		return 0;
	}
	CHECK_RET(dvx_bootstrap_sub_init(&sub, &st, bs, ranks, m), 0);
	me = dvx_bootstrap_rank(&sub);
	self = me;
	in = 500u + (uint32_t)me;
	if (me != last) {
		CHECK_RET(dvx_bootstrap_allgather(&sub, &in, out, sizeof(in), SHORT_NS),
			  -ETIMEDOUT);
		CHECK_RET(dvx_bootstrap_barrier(&sub, LONG_NS), -EBUSY);
		CHECK_RET(dvx_bootstrap_send(&sub, last, 1, &v, sizeof(v), LONG_NS), -EBUSY);
		CHECK_RET(dvx_bootstrap_dup(&sub, &x), -EBUSY);
		CHECK_RET(dvx_bootstrap_sub_init(&x, &xst, &sub, &self, 1), -EBUSY);
		CHECK_RET(dvx_bootstrap_allgather(&sub, &in, out, sizeof(in), 0), -ETIMEDOUT);
	}
	/* the parent is another context: it works while the subgroup's call is pending */
	CHECK_RET(dvx_bootstrap_barrier(bs, LONG_NS), 0);
	CHECK_RET(dvx_bootstrap_allgather(&sub, &in, out, sizeof(in), LONG_NS), 0);
	for (r = 0; r < m; r++)
		CHECK(out[r] == 500u + (uint32_t)r);
	/* a receive nobody answers yet times out and leaves nothing behind */
	if (me == 0) {
		CHECK_RET(dvx_bootstrap_recv(&sub, 1, 3, &v, sizeof(v), SHORT_NS), -ETIMEDOUT);
		pthread_barrier_wait(&run->pb);
		CHECK_RET(dvx_bootstrap_recv(&sub, 1, 3, &v, sizeof(v), LONG_NS), 0);
		CHECK(v == 33);
	} else if (me == 1) {
		pthread_barrier_wait(&run->pb);
		v = 33;
		CHECK_RET(dvx_bootstrap_send(&sub, 0, 3, &v, sizeof(v), LONG_NS), 0);
	} else {
		pthread_barrier_wait(&run->pb);
	}
	CHECK_RET(dvx_bootstrap_barrier(&sub, LONG_NS), 0);
	pthread_barrier_wait(&run->pb);
	dvx_bootstrap_fini(&sub);
	return 0;
}

static void test_timeout(void **state)
{
	int kind, n;

	(void)state;
	for (kind = 0; kind < NKINDS; kind++)
		for (n = 3; n <= MAXR; n++)
			run_ranks(kind, n, do_timeout, NULL);
}

/*
 * A member leaves (finishes its subgroup and its parent, its last contexts) after a
 * barrier and a message: the others' next barrier fails with -ECONNRESET, the message
 * it sent before leaving is still received, then receive and send fail; the remaining
 * members still talk. The subgroup is ranks 1..n-1; rank 0 only watches.
 */
static int do_leave(struct run *run, struct dvx_bootstrap *bs, int rank)
{
	int n = run->nranks, m = n - 1, gone = m - 1, i, me;
	int32_t ranks[MAXR];
	struct dvx_bootstrap sub;
	struct dvx_bootstrap_sub st;
	uint32_t v = 5;

	for (i = 0; i < m; i++)
		ranks[i] = i + 1;
	if (rank == 0) {
		pthread_barrier_wait(&run->pb);
		return 0;
	}
	CHECK_RET(dvx_bootstrap_sub_init(&sub, &st, bs, ranks, m), 0);
	me = dvx_bootstrap_rank(&sub);
	if (me == gone) {
		CHECK_RET(dvx_bootstrap_send(&sub, 0, 1, &v, sizeof(v), LONG_NS), 0);
		CHECK_RET(dvx_bootstrap_barrier(&sub, LONG_NS), 0);
		dvx_bootstrap_fini(&sub);
		dvx_bootstrap_fini(bs);
		pthread_barrier_wait(&run->pb);
		return 0;
	}
	CHECK_RET(dvx_bootstrap_barrier(&sub, LONG_NS), 0);
	pthread_barrier_wait(&run->pb);
	CHECK_RET(dvx_bootstrap_barrier(&sub, LONG_NS), -ECONNRESET);
	if (me == 0) {
		CHECK_RET(dvx_bootstrap_recv(&sub, gone, 1, &v, sizeof(v), LONG_NS), 0);
		CHECK(v == 5);
		CHECK_RET(dvx_bootstrap_recv(&sub, gone, 1, &v, sizeof(v), LONG_NS), -ECONNRESET);
		CHECK_RET(dvx_bootstrap_send(&sub, gone, 1, &v, sizeof(v), LONG_NS), -ECONNRESET);
	}
	if (m > 2 && me < 2) {
		v = (uint32_t)rank;
		CHECK_RET(dvx_bootstrap_send(&sub, !me, 8, &v, sizeof(v), LONG_NS), 0);
		CHECK_RET(dvx_bootstrap_recv(&sub, !me, 8, &v, sizeof(v), LONG_NS), 0);
		CHECK(v == (uint32_t)ranks[!me]);
	}
	dvx_bootstrap_fini(&sub);
	return 0;
}

static void test_leave(void **state)
{
	int kind, n;

	(void)state;
	for (kind = 0; kind < NKINDS; kind++)
		for (n = 3; n <= MAXR; n++)
			run_ranks(kind, n, do_leave, NULL);
}

/*
 * Threads adapter: a member aborted (dvx_bootstrap_tgroup_abort()) fails the calls of the
 * others that need it, and its own. Subgroup ranks 0..2 of 4; rank 0 aborts rank 2.
 */
static int do_abort_member(struct run *run, struct dvx_bootstrap *bs, int rank)
{
	static const int32_t ranks[3] = { 0, 1, 2 };
	struct dvx_bootstrap sub;
	struct dvx_bootstrap_sub st;
	uint32_t v;

	if (rank == 3) {
		pthread_barrier_wait(&run->pb);
		return 0;
	}
	CHECK_RET(dvx_bootstrap_sub_init(&sub, &st, bs, ranks, 3), 0);
	pthread_barrier_wait(&run->pb);
	if (rank == 0) {
		dvx_bootstrap_tgroup_abort(run->g, 2);
		CHECK_RET(dvx_bootstrap_barrier(&sub, LONG_NS), -ECONNRESET);
	} else if (rank == 1) {
		/* rank 2 never sends: the abort ends the wait */
		CHECK_RET(dvx_bootstrap_recv(&sub, 2, 1, &v, sizeof(v), LONG_NS), -ECONNRESET);
		CHECK_RET(dvx_bootstrap_barrier(&sub, LONG_NS), -ECONNRESET);
	} else {
		CHECK_RET(dvx_bootstrap_recv(&sub, 0, 1, &v, sizeof(v), LONG_NS), -ECONNRESET);
	}
	dvx_bootstrap_fini(&sub);
	return 0;
}

/*
 * Threads adapter: rank 2, no member of subgroup {0, 1}, is aborted while rank 0 waits
 * in a subgroup barrier that rank 1 never enters: the barrier fails with -ECONNRESET
 * (the adapter checks the whole group), but messages between the members still flow.
 */
static int do_abort_other(struct run *run, struct dvx_bootstrap *bs, int rank)
{
	static const int32_t ranks[2] = { 0, 1 };
	struct dvx_bootstrap sub;
	struct dvx_bootstrap_sub st;
	uint32_t v = 44;

	if (rank == 2) {
		pthread_barrier_wait(&run->pb);
		dvx_bootstrap_tgroup_abort(run->g, 2);
		pthread_barrier_wait(&run->pb);
		return 0;
	}
	CHECK_RET(dvx_bootstrap_sub_init(&sub, &st, bs, ranks, 2), 0);
	pthread_barrier_wait(&run->pb);
	if (rank == 0)
		CHECK_RET(dvx_bootstrap_barrier(&sub, LONG_NS), -ECONNRESET);
	pthread_barrier_wait(&run->pb);
	if (rank == 0) {
		CHECK_RET(dvx_bootstrap_send(&sub, 1, 2, &v, sizeof(v), LONG_NS), 0);
	} else {
		v = 0;
		CHECK_RET(dvx_bootstrap_recv(&sub, 0, 2, &v, sizeof(v), LONG_NS), 0);
		CHECK(v == 44);
	}
	dvx_bootstrap_fini(&sub);
	return 0;
}

static void test_abort(void **state)
{
	(void)state;
	run_ranks(THREADS, 4, do_abort_member, NULL);
	run_ranks(THREADS, 3, do_abort_other, NULL);
}

/* ------------------------------------------------------------------------------------ */

/* Each bad call to dvx_bootstrap_sub_init() returns -EINVAL and leaves both storages
 * (filled with 0x5a) as they were. */
static void expect_einval(struct dvx_bootstrap *parent, const int32_t *ranks, int n)
{
	struct dvx_bootstrap sub, sub0;
	struct dvx_bootstrap_sub st, st0;

	memset(&sub, 0x5a, sizeof(sub));
	memset(&st, 0x5a, sizeof(st));
	sub0 = sub;
	st0 = st;
	assert_int_equal(dvx_bootstrap_sub_init(&sub, &st, parent, ranks, n), -EINVAL);
	assert_memory_equal(&sub, &sub0, sizeof(sub));
	assert_memory_equal(&st, &st0, sizeof(st));
}

/*
 * Bad arguments on a 2-rank thread group driven from this thread alone, then a pending
 * parent (-EBUSY), then the subgroup that the first good call makes: it got the first
 * tag space (the bad calls took none) and works, including a timed-out allgather that
 * the other rank's call completes.
 */
static void test_bad_args(void **state)
{
	static const int32_t r01[] = { 0, 1 }, r10[] = { 1, 0 }, r00[] = { 0, 0 },
			     r1[] = { 1 }, rneg[] = { -1, 0 }, rbig[] = { 0, 2 },
			     r012[] = { 0, 1, 2 };
	struct dvx_bootstrap_tgroup_cfg attr = { .nranks = 2, .max_unexpected = 4,
						   .slot_bytes = 16 };
	struct dvx_bootstrap_tgroup *g;
	struct dvx_bootstrap b0, b1, s0, s1, fin;
	struct dvx_bootstrap_sub st0, st1, st2;
	size_t sz = dvx_bootstrap_tgroup_mem_size(2, 4, 16);
	void *mem = aligned_alloc(64, DVX_ALIGN_UP(sz, 64));
	uint32_t v = 0, in, out[2], in1, out1[2];

	(void)state;
	assert_non_null(mem);
	assert_int_equal(dvx_bootstrap_tgroup_init(&g, &attr, mem, sz), 0);
	assert_int_equal(dvx_bootstrap_thread_init(&b0, g, 0), 0);
	assert_int_equal(dvx_bootstrap_thread_init(&b1, g, 1), 0);

	expect_einval(NULL, r01, 2);
	expect_einval(&b0, NULL, 2);
	expect_einval(&b0, r01, 0);
	expect_einval(&b0, r01, -1);
	expect_einval(&b0, r012, 3);		/* more ranks than the parent has */
	expect_einval(&b0, r10, 2);		/* not increasing */
	expect_einval(&b0, r00, 2);		/* not strictly */
	expect_einval(&b0, rneg, 2);		/* out of range */
	expect_einval(&b0, rbig, 2);
	expect_einval(&b0, r1, 1);		/* without the parent's rank */
	expect_einval(&b1, r01, 1);
	assert_int_equal(dvx_bootstrap_sub_init(NULL, &st0, &b0, r01, 2), -EINVAL);
	assert_int_equal(dvx_bootstrap_sub_init(&s0, NULL, &b0, r01, 2), -EINVAL);
	assert_int_equal(dvx_bootstrap_sub_init(&b0, &st0, &b0, r01, 2), -EINVAL);
	assert_int_equal(dvx_bootstrap_sub_init(&st0.dup, &st0, &b0, r01, 2), -EINVAL);
	assert_int_equal(dvx_bootstrap_sub_init(&s0, &st0, &st0.dup, r01, 2), -EINVAL);
	/* a finished context is no parent */
	memset(&fin, 0, sizeof(fin));
	expect_einval(&fin, r01, 2);
	/* the maps refuse what is no live subgroup */
	assert_int_equal(dvx_bootstrap_sub_global(NULL, 0), -1);
	assert_int_equal(dvx_bootstrap_sub_local(NULL, 0), -1);
	assert_int_equal(dvx_bootstrap_sub_global(&b0, 0), -1);
	assert_int_equal(dvx_bootstrap_sub_local(&b0, 0), -1);

	/* a parent with a pending call: -EBUSY, nothing taken */
	assert_int_equal(dvx_bootstrap_barrier(&b0, 0), -ETIMEDOUT);
	assert_int_equal(dvx_bootstrap_sub_init(&s0, &st0, &b0, r01, 2), -EBUSY);
	assert_int_equal(dvx_bootstrap_barrier(&b1, LONG_NS), 0);
	assert_int_equal(dvx_bootstrap_barrier(&b0, LONG_NS), 0);

	/* the good ones: rank 0 and rank 1 of a subgroup of both */
	assert_int_equal(dvx_bootstrap_sub_init(&s0, &st0, &b0, r01, 2), 0);
	assert_int_equal(dvx_bootstrap_sub_init(&s1, &st1, &b1, r01, 2), 0);
	assert_int_equal(s0.space, 1);
	assert_int_equal(s1.space, 1);
	assert_int_equal(dvx_bootstrap_rank(&s1), 1);
	assert_int_equal(dvx_bootstrap_nranks(&s0), 2);
	/* the storage of a live subgroup cannot serve a subgroup of it */
	assert_int_equal(dvx_bootstrap_sub_init(&fin, &st0, &s0, r01, 2), -EINVAL);
	assert_int_equal(dvx_bootstrap_barrier(&fin, 0), -EINVAL);	/* untouched */
	/* send to self, peer out of range: the generic rules, with local ranks */
	assert_int_equal(dvx_bootstrap_send(&s0, 0, 1, &v, 4, 0), -EINVAL);
	assert_int_equal(dvx_bootstrap_send(&s0, 2, 1, &v, 4, 0), -EINVAL);
	/* rank 1 sends eagerly, rank 0 receives; the parent's same tag stays apart */
	v = 12;
	assert_int_equal(dvx_bootstrap_send(&b1, 0, 3, &v, 4, LONG_NS), 0);
	v = 13;
	assert_int_equal(dvx_bootstrap_send(&s1, 0, 3, &v, 4, LONG_NS), 0);
	assert_int_equal(dvx_bootstrap_recv(&s0, 1, 3, &v, 4, LONG_NS), 0);
	assert_int_equal(v, 13);
	assert_int_equal(dvx_bootstrap_recv(&s0, 1, 3, &v, 4, 0), -ETIMEDOUT);
	assert_int_equal(dvx_bootstrap_recv(&b0, 1, 3, &v, 4, LONG_NS), 0);
	assert_int_equal(v, 12);
	/* an allgather that times out on rank 0 and resumes once rank 1 came */
	in = 70;
	assert_int_equal(dvx_bootstrap_allgather(&s0, &in, out, 4, 0), -ETIMEDOUT);
	assert_int_equal(dvx_bootstrap_dup(&s0, &fin), -EBUSY);
	assert_int_equal(dvx_bootstrap_sub_init(&fin, &st2, &s0, r01, 1), -EBUSY);
	assert_int_equal(dvx_bootstrap_barrier(&fin, 0), -EINVAL);	/* untouched */
	in1 = 71;
	assert_int_equal(dvx_bootstrap_allgather(&s1, &in1, out1, 4, LONG_NS), 0);
	assert_int_equal(out1[0], 70);
	assert_int_equal(out1[1], 71);
	assert_int_equal(dvx_bootstrap_allgather(&s0, &in, out, 4, LONG_NS), 0);
	assert_int_equal(out[0], 70);
	assert_int_equal(out[1], 71);
	/* a one-rank subgroup: collectives are local, it has no peers */
	assert_int_equal(dvx_bootstrap_sub_init(&fin, &st2, &s1, r1, 1), 0);
	assert_int_equal(dvx_bootstrap_rank(&fin), 0);
	assert_int_equal(dvx_bootstrap_sub_global(&fin, 0), 1);
	assert_int_equal(dvx_bootstrap_sub_local(&fin, 1), 0);
	assert_int_equal(dvx_bootstrap_sub_local(&fin, 0), -1);
	in = 9;
	assert_int_equal(dvx_bootstrap_allgather(&fin, &in, out, 4, 0), 0);
	assert_int_equal(out[0], 9);
	assert_int_equal(dvx_bootstrap_barrier(&fin, 0), 0);
	assert_int_equal(dvx_bootstrap_send(&fin, 0, 1, &v, 4, 0), -EINVAL);

	/* fini: the parents first, then the subgroups; the ranks leave with the last */
	dvx_bootstrap_fini(&b0);
	dvx_bootstrap_fini(&b1);
	assert_int_equal(dvx_bootstrap_tgroup_fini(g), -EBUSY);
	dvx_bootstrap_fini(&s0);
	dvx_bootstrap_fini(&s0);	/* twice is harmless */
	assert_int_equal(dvx_bootstrap_sub_global(&s0, 0), -1);
	assert_int_equal(dvx_bootstrap_barrier(&s0, 0), -EINVAL);
	dvx_bootstrap_fini(&s1);	/* fin still holds rank 1 */
	assert_int_equal(dvx_bootstrap_tgroup_fini(g), -EBUSY);
	dvx_bootstrap_fini(&fin);
	assert_int_equal(dvx_bootstrap_tgroup_fini(g), 0);
	free(mem);
}

/* The map of a 4-of-6 subgroup made by rank 0 alone (making it does not communicate),
 * and a one-rank sockets group. */
static void test_map(void **state)
{
	static const int32_t ranks[] = { 0, 2, 3, 5 };
	struct dvx_bootstrap_tgroup_cfg attr = { .nranks = 6 };
	struct dvx_bootstrap_sock_cfg sattr = { .addr = "tcp:127.0.0.1:1", .rank = 0,
						  .nranks = 1, .max_unexpected = 2,
						  .slot_bytes = 16, .timeout_ns = LONG_NS };
	struct dvx_bootstrap_tgroup *g;
	struct dvx_bootstrap bs, sub, d;
	struct dvx_bootstrap_sub st;
	size_t sz = dvx_bootstrap_tgroup_mem_size(6, 0, 0);
	void *mem = aligned_alloc(64, DVX_ALIGN_UP(sz, 64));
	uint32_t in = 3, out;
	int i;

	(void)state;
	assert_non_null(mem);
	assert_int_equal(dvx_bootstrap_tgroup_init(&g, &attr, mem, sz), 0);
	assert_int_equal(dvx_bootstrap_thread_init(&bs, g, 0), 0);
	assert_int_equal(dvx_bootstrap_sub_init(&sub, &st, &bs, ranks, 4), 0);
	assert_int_equal(dvx_bootstrap_dup(&sub, &d), 0);
	for (i = 0; i < 4; i++) {
		assert_int_equal(dvx_bootstrap_sub_global(&sub, i), ranks[i]);
		assert_int_equal(dvx_bootstrap_sub_global(&d, i), ranks[i]);
	}
	assert_int_equal(dvx_bootstrap_sub_global(&sub, 4), -1);
	assert_int_equal(dvx_bootstrap_sub_global(&sub, -1), -1);
	assert_int_equal(dvx_bootstrap_sub_global(&sub, INT32_MIN), -1);
	for (i = -1; i <= 6; i++)
		assert_int_equal(dvx_bootstrap_sub_local(&d, i), index_of(ranks, 4, i));
	assert_int_equal(dvx_bootstrap_sub_local(&sub, INT32_MAX), -1);
	dvx_bootstrap_fini(&sub);
	assert_int_equal(dvx_bootstrap_sub_local(&d, 5), 3);	/* the duplicate keeps it */
	dvx_bootstrap_fini(&bs);
	dvx_bootstrap_fini(&d);
	assert_int_equal(dvx_bootstrap_tgroup_fini(g), 0);
	free(mem);

	/* one rank over sockets: nothing to connect, collectives are local */
	sz = dvx_bootstrap_sock_mem_size(1, 2, 16);
	mem = aligned_alloc(64, DVX_ALIGN_UP(sz, 64));
	assert_non_null(mem);
	assert_int_equal(dvx_bootstrap_sock_init(&bs, &sattr, mem, sz), 0);
	expect_einval(&bs, &ranks[1], 1);
	assert_int_equal(dvx_bootstrap_sub_init(&sub, &st, &bs, ranks, 1), 0);
	assert_int_equal(dvx_bootstrap_allgather(&sub, &in, &out, 4, 0), 0);
	assert_int_equal(out, 3);
	dvx_bootstrap_fini(&bs);
	assert_int_equal(dvx_bootstrap_barrier(&sub, LONG_NS), 0);
	dvx_bootstrap_fini(&sub);
	free(mem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_args),
		cmocka_unit_test(test_map),
		cmocka_unit_test(test_shapes),
		cmocka_unit_test(test_xtalk),
		cmocka_unit_test(test_nested),
		cmocka_unit_test(test_dup_fini),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_leave),
		cmocka_unit_test(test_abort),
	};

	return cmocka_run_group_tests_name("bootstrap-sub", tests, NULL, NULL);
}
