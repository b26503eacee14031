// SPDX-License-Identifier: MIT
/*
 * The bootstrap's MPI adapter (core/bootstrap/mpi.c) under mpirun.
 *
 * Run without arguments (as make check does), this binary is a cmocka suite whose cases
 * launch it again as 2, 4 and 8 MPI processes through scripts/mpirun.sh (which sets what
 * the MPI here needs: oversubscription, root, transports) and check that every process
 * passed. Run with --rank (by mpirun), each process runs the rank's cases below and
 * exits 0, or prints its first failed check and exits 1; it prints no cmocka lines, so
 * the runner counts the outer suite only. Without mpirun the binary skips itself whole
 * (exit 77) with the line that says how to get MPI.
 *
 * The rank's cases: the first context is made with DVX_BOOTSTRAP_MPI_F_INIT (the adapter
 * initialises MPI, and finalises it with that context at the very end); allgathers of
 * 8 B, 4 KiB and 1 MiB blocks checked byte by byte, barriers; a ring of tagged messages
 * received out of tag order (same tag in order), the largest tag and the first one
 * beyond; a duplicate whose messages and collectives never match the original's; even
 * and odd subgroups; a length mismatch (-EMSGSIZE, the next message intact); a receive
 * that times out with no effect; bad arguments; tag spaces exhausted (-ENOSPC); a rank
 * that leaves (its last message received, then -ECONNRESET); a collective whose ranks
 * disagree on the length (every rank fails with -EMSGSIZE or -ECONNRESET, the poison,
 * never a timeout); and the fault sweep of dvx_bootstrap_mpi_init(): every MPI call it
 * makes fails in turn on every rank at once (so the collective duplicates stay matched),
 * and each time the call returns a negative errno, leaves the caller's context as it was
 * and holds no communicator (a context that finished keeps its two until MPI_Finalize).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "../lib/dvx_test.h"

#include <dvx/bootstrap/bootstrap.h>

#ifndef DVX_SRCTREE
#error "DVX_SRCTREE: the source tree, for scripts/mpirun.sh"
#endif

#define LONG_NS (60ull * 1000000000ull)
#define SHORT_NS (50ull * 1000000ull)
#define MAXR 64

static int g_rank, g_n;
static uint64_t g_mem[MAXR][DVX_BOOTSTRAP_MPI_MEM_SIZE(MAXR) / 8];

#define CHECK(cond) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", g_rank, __FILE__, \
				__LINE__, #cond); \
			return __LINE__; \
		} \
	} while (0)
#define CHECK_RET(expr, want) \
	do { \
		int ret_ = (expr); \
		if (ret_ != (want)) { \
			fprintf(stderr, "rank %d: %s:%d: %s = %d, want %d\n", g_rank, __FILE__, \
				__LINE__, #expr, ret_, (want)); \
			return __LINE__; \
		} \
	} while (0)

/* ---- fault injection: the MPI calls of dvx_bootstrap_mpi_init() (-Wl,--wrap) ---- */

int __real_MPI_Initialized(int *flag);
int __real_MPI_Finalized(int *flag);
int __real_MPI_Comm_size(MPI_Comm comm, int *size);
int __real_MPI_Comm_rank(MPI_Comm comm, int *rank);
int __real_MPI_Comm_get_attr(MPI_Comm comm, int key, void *val, int *flag);
int __real_MPI_Comm_dup(MPI_Comm comm, MPI_Comm *out);
int __real_MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler eh);
int __real_MPI_Comm_free(MPI_Comm *comm);
int __real_MPI_Allgather(const void *in, int icount, MPI_Datatype itype, void *out, int ocount,
			 MPI_Datatype otype, MPI_Comm comm);
int __wrap_MPI_Allgather(const void *in, int icount, MPI_Datatype itype, void *out, int ocount,
			 MPI_Datatype otype, MPI_Comm comm);
int __wrap_MPI_Initialized(int *flag);
int __wrap_MPI_Finalized(int *flag);
int __wrap_MPI_Comm_size(MPI_Comm comm, int *size);
int __wrap_MPI_Comm_rank(MPI_Comm comm, int *rank);
int __wrap_MPI_Comm_get_attr(MPI_Comm comm, int key, void *val, int *flag);
int __wrap_MPI_Comm_dup(MPI_Comm comm, MPI_Comm *out);
int __wrap_MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler eh);
int __wrap_MPI_Comm_free(MPI_Comm *comm);

static int g_fail_at;	/* the n-th wrapped call fails (0: none) */
static int g_calls;	/* wrapped calls so far */
static int g_live;	/* communicators duplicated and not freed */

/* Runs the real call first, so that every rank enters the same collectives. */
static int inject(int real)
{
	g_calls++;
	if (real != MPI_SUCCESS || !g_fail_at || g_calls != g_fail_at)
		return real;
	return MPI_ERR_INTERN;
}

int __wrap_MPI_Initialized(int *flag)
{
	return inject(__real_MPI_Initialized(flag));
}

int __wrap_MPI_Finalized(int *flag)
{
	return inject(__real_MPI_Finalized(flag));
}

int __wrap_MPI_Comm_size(MPI_Comm comm, int *size)
{
	return inject(__real_MPI_Comm_size(comm, size));
}

int __wrap_MPI_Comm_rank(MPI_Comm comm, int *rank)
{
	return inject(__real_MPI_Comm_rank(comm, rank));
}

int __wrap_MPI_Comm_get_attr(MPI_Comm comm, int key, void *val, int *flag)
{
	return inject(__real_MPI_Comm_get_attr(comm, key, val, flag));
}

int __wrap_MPI_Comm_dup(MPI_Comm comm, MPI_Comm *out)
{
	int e = __real_MPI_Comm_dup(comm, out);

	if (e == MPI_SUCCESS)
		g_live++;
	e = inject(e);
	if (e != MPI_SUCCESS && *out != MPI_COMM_NULL) {
		/* the duplicate was made: undo it, as a failed dup leaves none */
		__real_MPI_Comm_free(out);
		g_live--;
	}
	return e;
}

int __wrap_MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler eh)
{
	return inject(__real_MPI_Comm_set_errhandler(comm, eh));
}

int __wrap_MPI_Allgather(const void *in, int icount, MPI_Datatype itype, void *out, int ocount,
			 MPI_Datatype otype, MPI_Comm comm)
{
	return inject(__real_MPI_Allgather(in, icount, itype, out, ocount, otype, comm));
}

int __wrap_MPI_Comm_free(MPI_Comm *comm)
{
	int e = __real_MPI_Comm_free(comm);

	if (e == MPI_SUCCESS)
		g_live--;
	return e;
}

/* ---- the rank's cases ---- */

static int init_ctx(struct dvx_bootstrap *bs, int slot)
{
	struct dvx_bootstrap_mpi_cfg a = { 0 };

	return dvx_bootstrap_mpi_init(bs, &a, g_mem[slot], sizeof(g_mem[slot]));
}

static uint8_t pat(int rank, size_t i, int salt)
{
	return (uint8_t)(rank * 131 + i * 7 + (size_t)salt * 13 + (i >> 8));
}

static int case_allgather(struct dvx_bootstrap *bs)
{
	static const size_t lens[] = { 8, 4096, 1 << 20 };
	size_t li, i;
	int r;

	CHECK(dvx_bootstrap_rank(bs) == g_rank && dvx_bootstrap_nranks(bs) == g_n);
	for (li = 0; li < 3; li++) {
		size_t len = lens[li];
		uint8_t *in = malloc(len), *out = malloc(len * (size_t)g_n);

		CHECK(in && out);
		for (i = 0; i < len; i++)
			in[i] = pat(g_rank, i, (int)li);
		memset(out, 0xee, len * (size_t)g_n);
		CHECK_RET(dvx_bootstrap_allgather(bs, in, out, len, LONG_NS), 0);
		for (r = 0; r < g_n; r++)
			for (i = 0; i < len; i++)
				CHECK(out[(size_t)r * len + i] == pat(r, i, (int)li));
		/* in place: this rank's block inside out */
		memset(out, 0, len * (size_t)g_n);
		memcpy(out + (size_t)g_rank * len, in, len);
		CHECK_RET(dvx_bootstrap_allgather(bs, out + (size_t)g_rank * len, out, len,
						  LONG_NS), 0);
		for (r = 0; r < g_n; r++)
			CHECK(out[(size_t)r * len + len - 1] == pat(r, len - 1, (int)li));
		free(in);
		free(out);
	}
	for (i = 0; i < 3; i++)
		CHECK_RET(dvx_bootstrap_barrier(bs, LONG_NS), 0);
	return 0;
}

static int case_messages(struct dvx_bootstrap *bs, uint32_t max_tag)
{
	int right = (g_rank + 1) % g_n, left = (g_rank + g_n - 1) % g_n;
	uint32_t v, tags[] = { 1, 2, 2, 3, max_tag };
	size_t i;

	for (i = 0; i < 5; i++) {
		v = (uint32_t)(g_rank * 100 + (int)i);
		CHECK_RET(dvx_bootstrap_send(bs, right, tags[i], &v, sizeof(v), LONG_NS), 0);
	}
	/* out of tag order; the two messages of tag 2 in order */
	CHECK_RET(dvx_bootstrap_recv(bs, left, max_tag, &v, sizeof(v), LONG_NS), 0);
	CHECK(v == (uint32_t)(left * 100 + 4));
	CHECK_RET(dvx_bootstrap_recv(bs, left, 3, &v, sizeof(v), LONG_NS), 0);
	CHECK(v == (uint32_t)(left * 100 + 3));
	CHECK_RET(dvx_bootstrap_recv(bs, left, 2, &v, sizeof(v), LONG_NS), 0);
	CHECK(v == (uint32_t)(left * 100 + 1));
	CHECK_RET(dvx_bootstrap_recv(bs, left, 2, &v, sizeof(v), LONG_NS), 0);
	CHECK(v == (uint32_t)(left * 100 + 2));
	CHECK_RET(dvx_bootstrap_recv(bs, left, 1, &v, sizeof(v), LONG_NS), 0);
	CHECK(v == (uint32_t)(left * 100 + 0));
	/* zero-length messages */
	CHECK_RET(dvx_bootstrap_send(bs, right, 9, NULL, 0, LONG_NS), 0);
	CHECK_RET(dvx_bootstrap_recv(bs, left, 9, NULL, 0, LONG_NS), 0);
	/* a tag beyond the space's bits, self, out of range: refused, nothing sent */
	if (max_tag < UINT32_MAX)
		CHECK_RET(dvx_bootstrap_send(bs, right, max_tag + 1, &v, sizeof(v), LONG_NS),
			  -EINVAL);
	CHECK_RET(dvx_bootstrap_send(bs, g_rank, 1, &v, sizeof(v), LONG_NS), -EINVAL);
	CHECK_RET(dvx_bootstrap_recv(bs, g_n, 1, &v, sizeof(v), LONG_NS), -EINVAL);
	CHECK_RET(dvx_bootstrap_allgather(bs, &v, &v, 0, LONG_NS), -EINVAL);
	/* a receive nobody answers times out and changes nothing */
	CHECK_RET(dvx_bootstrap_recv(bs, left, 77, &v, sizeof(v), SHORT_NS), -ETIMEDOUT);
	/* a length mismatch drops that message; the next one is intact */
	if (g_rank == 0) {
		uint64_t big[2] = { 1, 2 };

		CHECK_RET(dvx_bootstrap_send(bs, 1, 5, big, sizeof(big), LONG_NS), 0);
		v = 55;
		CHECK_RET(dvx_bootstrap_send(bs, 1, 5, &v, sizeof(v), LONG_NS), 0);
	} else if (g_rank == 1) {
		CHECK_RET(dvx_bootstrap_recv(bs, 0, 5, &v, sizeof(v), LONG_NS), -EMSGSIZE);
		CHECK_RET(dvx_bootstrap_recv(bs, 0, 5, &v, sizeof(v), LONG_NS), 0);
		CHECK(v == 55);
	}
	CHECK_RET(dvx_bootstrap_barrier(bs, LONG_NS), 0);
	return 0;
}

static int case_dup_sub(struct dvx_bootstrap *bs)
{
	int right = (g_rank + 1) % g_n, left = (g_rank + g_n - 1) % g_n;
	struct dvx_bootstrap d, sub;
	struct dvx_bootstrap_sub st;
	int32_t ranks[MAXR], nr = 0, i;
	uint32_t v, out[MAXR];

	CHECK_RET(dvx_bootstrap_dup(bs, &d), 0);
	CHECK(d.space != bs->space);
	v = 1000 + (uint32_t)g_rank;
	CHECK_RET(dvx_bootstrap_send(bs, right, 4, &v, sizeof(v), LONG_NS), 0);
	v = 2000 + (uint32_t)g_rank;
	CHECK_RET(dvx_bootstrap_send(&d, right, 4, &v, sizeof(v), LONG_NS), 0);
	/* the duplicate's message first, though the original's was sent before it */
	CHECK_RET(dvx_bootstrap_recv(&d, left, 4, &v, sizeof(v), LONG_NS), 0);
	CHECK(v == 2000 + (uint32_t)left);
	CHECK_RET(dvx_bootstrap_recv(bs, left, 4, &v, sizeof(v), LONG_NS), 0);
	CHECK(v == 1000 + (uint32_t)left);
	v = (uint32_t)g_rank * 3;
	CHECK_RET(dvx_bootstrap_allgather(&d, &v, out, sizeof(v), LONG_NS), 0);
	for (i = 0; i < g_n; i++)
		CHECK(out[i] == (uint32_t)i * 3);

	/* evens and odds: disjoint subgroups drawn at the same point */
	for (i = g_rank % 2; i < g_n; i += 2)
		ranks[nr++] = i;
	CHECK_RET(dvx_bootstrap_sub_init(&sub, &st, bs, ranks, nr), 0);
	CHECK(dvx_bootstrap_nranks(&sub) == nr && dvx_bootstrap_rank(&sub) == g_rank / 2);
	CHECK(dvx_bootstrap_sub_global(&sub, dvx_bootstrap_rank(&sub)) == g_rank);
	v = 7u * (uint32_t)g_rank;
	CHECK_RET(dvx_bootstrap_allgather(&sub, &v, out, sizeof(v), LONG_NS), 0);
	for (i = 0; i < nr; i++)
		CHECK(out[i] == 7u * (uint32_t)ranks[i]);
	CHECK_RET(dvx_bootstrap_barrier(&sub, LONG_NS), 0);
	dvx_bootstrap_fini(&sub);
	CHECK_RET(dvx_bootstrap_barrier(&d, LONG_NS), 0);
	/* the length mismatch above was MPI's truncation, kept for the caller */
	CHECK_RET(dvx_bootstrap_mpi_error_class(&d), g_rank == 1 ? MPI_ERR_TRUNCATE : 0);
	dvx_bootstrap_fini(&d);
	return 0;
}

static int case_args(void)
{
	struct dvx_bootstrap_mpi_cfg a = { 0 };
	struct dvx_bootstrap bs, before;
	static uint64_t small[4];

	memset(&bs, 0x5a, sizeof(bs));
	before = bs;
	CHECK_RET(dvx_bootstrap_mpi_init(NULL, &a, g_mem[1], sizeof(g_mem[1])), -EINVAL);
	CHECK_RET(dvx_bootstrap_mpi_init(&bs, NULL, g_mem[1], sizeof(g_mem[1])), -EINVAL);
	CHECK_RET(dvx_bootstrap_mpi_init(&bs, &a, NULL, sizeof(g_mem[1])), -EINVAL);
	CHECK_RET(dvx_bootstrap_mpi_init(&bs, &a, (char *)g_mem[1] + 4, sizeof(g_mem[1]) - 8),
		  -EINVAL);
	CHECK_RET(dvx_bootstrap_mpi_init(&bs, &a, small, sizeof(small)), -EINVAL);
	a.reserved = 1;
	CHECK_RET(dvx_bootstrap_mpi_init(&bs, &a, g_mem[1], sizeof(g_mem[1])), -EINVAL);
	a.reserved = 0;
	a.flags = 0x80;
	CHECK_RET(dvx_bootstrap_mpi_init(&bs, &a, g_mem[1], sizeof(g_mem[1])), -EINVAL);
	CHECK(!memcmp(&bs, &before, sizeof(bs)));
	CHECK(dvx_bootstrap_mpi_mem_size(0) == 0 && dvx_bootstrap_mpi_mem_size(g_n) > 0);
	CHECK(dvx_bootstrap_mpi_mem_size(DVX_BOOTSTRAP_MAX_RANKS + 1) == 0);
	CHECK_RET(dvx_bootstrap_mpi_error_class(NULL), -EINVAL);
	CHECK(dvx_bootstrap_mpi_launched());
	return 0;
}

static int case_spaces(void)
{
	static struct dvx_bootstrap d[256];
	struct dvx_bootstrap bs;
	int i, made = 0, ret;

	CHECK_RET(init_ctx(&bs, 2), 0);
	for (i = 0; i < 256; i++) {
		ret = dvx_bootstrap_dup(&bs, &d[i]);
		if (ret)
			break;
		made++;
	}
	CHECK(made == 255);
	CHECK_RET(ret, -ENOSPC);
	/* the last space works */
	CHECK_RET(dvx_bootstrap_barrier(&d[254], LONG_NS), 0);
	for (i = 0; i < made; i++)
		dvx_bootstrap_fini(&d[i]);
	dvx_bootstrap_fini(&bs);
	return 0;
}

static int case_leave(void)
{
	struct dvx_bootstrap bs;
	uint32_t v = 0;
	int last = g_n - 1;

	CHECK_RET(init_ctx(&bs, 2), 0);
	CHECK_RET(dvx_bootstrap_barrier(&bs, LONG_NS), 0);
	if (g_rank == last) {
		v = 4242;
		CHECK_RET(dvx_bootstrap_send(&bs, 0, 1, &v, sizeof(v), LONG_NS), 0);
		dvx_bootstrap_fini(&bs);
	} else if (g_rank == 0) {
		CHECK_RET(dvx_bootstrap_recv(&bs, last, 1, &v, sizeof(v), LONG_NS), 0);
		CHECK(v == 4242);
		/* the rank left: never a timeout */
		CHECK_RET(dvx_bootstrap_recv(&bs, last, 1, &v, sizeof(v), LONG_NS), -ECONNRESET);
		CHECK_RET(dvx_bootstrap_send(&bs, last, 1, &v, sizeof(v), LONG_NS), -ECONNRESET);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (g_rank != last)
		dvx_bootstrap_fini(&bs);
	return 0;
}

static int case_poison(void)
{
	struct dvx_bootstrap bs;
	uint64_t in[2] = { 1, 2 }, out[2 * MAXR];
	int ret;

	CHECK_RET(init_ctx(&bs, 2), 0);
	/* rank 1 gives 16 bytes, the others 8: the ring fails everywhere */
	ret = dvx_bootstrap_allgather(&bs, in, out, g_rank == 1 ? 16 : 8, LONG_NS);
	if (ret != -EMSGSIZE && ret != -ECONNRESET) {
		fprintf(stderr, "rank %d: allgather of mixed lengths = %d\n", g_rank, ret);
		return __LINE__;
	}
	dvx_bootstrap_fini(&bs);
	MPI_Barrier(MPI_COMM_WORLD);
	return 0;
}

static int case_faults(void)
{
	struct dvx_bootstrap bs, before;
	int n, ret, all;

	for (n = 1; n < 64; n++) {
		memset(&bs, 0x3c, sizeof(bs));
		before = bs;
		g_calls = 0;
		g_live = 0;
		g_fail_at = n;
		ret = init_ctx(&bs, 3);
		g_fail_at = 0;
		if (!ret) {
			CHECK(g_calls < n);	/* every call was swept before */
			CHECK(n > 5);
			CHECK_RET(dvx_bootstrap_barrier(&bs, LONG_NS), 0);
			CHECK_RET(dvx_bootstrap_mpi_error_class(&bs), 0);
			dvx_bootstrap_fini(&bs);
			/* kept until MPI_Finalize, so that MPI never reuses their ids */
			CHECK(g_live == 2);
			break;
		}
		CHECK(ret < 0);
		CHECK(!memcmp(&bs, &before, sizeof(bs)));
		CHECK(g_live == 0);
		/* every rank failed at the same call */
		MPI_Allreduce(&ret, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
		CHECK(all == ret);
	}
	CHECK(n < 64);
	return 0;
}

static int rank_main(void)
{
	struct dvx_bootstrap_mpi_cfg a = { .flags = DVX_BOOTSTRAP_MPI_F_INIT };
	struct dvx_bootstrap root;
	int fin = 0, *ub, flag = 0, line = 0;
	uint32_t bits = 0, max_tag;

	CHECK(dvx_bootstrap_mpi_launched());
	/* MPI is not initialised yet: without F_INIT refused, with it started by dvx */
	a.flags = 0;
	CHECK_RET(dvx_bootstrap_mpi_init(&root, &a, g_mem[0], sizeof(g_mem[0])), -EINVAL);
	a.flags = DVX_BOOTSTRAP_MPI_F_INIT;
	CHECK_RET(dvx_bootstrap_mpi_init(&root, &a, g_mem[0], sizeof(g_mem[0])), 0);
	MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &g_n);
	CHECK(g_n <= MAXR);
	MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
	CHECK(flag);
	while (bits < 31 && ((1ull << (bits + 1)) - 1) <= (uint64_t)*ub)
		bits++;
	max_tag = (uint32_t)((1ull << (bits - 8)) - 1);

	if (!line)
		line = case_args();
	if (!line)
		line = case_allgather(&root);
	if (!line)
		line = case_messages(&root, max_tag);
	if (!line)
		line = case_dup_sub(&root);
	if (!line)
		line = case_spaces();
	if (!line)
		line = case_leave();
	if (!line)
		line = case_faults();
	if (!line)
		line = case_poison();
	if (line)
		return line;
	dvx_bootstrap_fini(&root);
	MPI_Finalized(&fin);
	CHECK(fin);
	printf("rank %d of %d: every case passed\n", g_rank, g_n);
	return 0;
}

/* ---- the outer suite ---- */

/* the ranks' output in a log, shown when the run fails; scripts/mpirun.sh runs them
 * without LeakSanitizer (Open MPI's memory at exit is not dvx's), every other check on */
static int launch(int np)
{
	return dvx_test_mpirun_self(DVX_SRCTREE, np, NULL, "--rank", 40, NULL);
}

static void test_np2(void **state)
{
	assert_int_equal(launch(2), 0);
}

static void test_np4(void **state)
{
	assert_int_equal(launch(4), 0);
}

static void test_np8(void **state)
{
	assert_int_equal(launch(8), 0);
}

/* Outside mpirun: MPI not initialised, and no F_INIT, is refused. */
static void test_not_initialised(void **state)
{
	struct dvx_bootstrap_mpi_cfg a = { 0 };
	struct dvx_bootstrap bs;

	assert_int_equal(dvx_bootstrap_mpi_init(&bs, &a, g_mem[0], sizeof(g_mem[0])), -EINVAL);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_not_initialised),
		cmocka_unit_test(test_np2),
		cmocka_unit_test(test_np4),
		cmocka_unit_test(test_np8),
	};
	if (argc > 1 && !strcmp(argv[1], "--rank"))
		return rank_main() ? 1 : 0;
	if (!dvx_test_mpirun_here(DVX_SRCTREE, 0))
		return DVX_TEST_SKIP_ALL;
	return cmocka_run_group_tests_name("bootstrap-mpi", tests, NULL, NULL);
}
