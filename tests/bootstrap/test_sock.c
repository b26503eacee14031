// SPDX-License-Identifier: MIT
/*
 * The bootstrap's sockets adapter (core/bootstrap/sock_*.c): every rank is a forked child
 * process; UNIX sockets in a fresh mkdtemp() directory and TCP on 127.0.0.1 (on a port
 * the test finds free).
 *
 * A child reports the line of its first failed check as its exit status (0 = passed).
 * The parent waits for all children with a deadline and kills (SIGKILL, by pid) any that
 * is left; children also die with the parent (PR_SET_PDEATHSIG). Only timeouts that are
 * the expected outcome are short; everything that must succeed gets 20 s.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

#include "../lib/dvx_test.h"

#include <dvx/bootstrap/bootstrap.h>

#define LONG_NS (20ull * 1000000000ull)
#define SHORT_NS (300ull * 1000000ull)
#define MAXR 8

enum { UNIX_ADDR, TCP_ADDR };

struct job {
	int nranks;
	int kind;
	uint32_t slots;
	uint32_t slot_bytes;
	uint64_t init_ns;
	int skip_rank;		/* this rank never starts (-1: all start) */
	int expect_init;	/* what init must return */
	int (*fn)(struct dvx_bootstrap *bs, int rank, int nranks);
	char dir[64];
	char addr[128];
};

#define CHECK(cond) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			return __LINE__ % 250 + 1; \
		} \
	} while (0)
#define CHECK_RET(expr, want) \
	do { \
		int ret_ = (expr); \
		if (ret_ != (want)) { \
			fprintf(stderr, "%s:%d: %s = %d, want %d\n", __FILE__, __LINE__, #expr, \
				ret_, (want)); \
			return __LINE__ % 250 + 1; \
		} \
	} while (0)

static uint8_t pat(int rank, size_t i, int salt)
{
	return (uint8_t)(rank * 31 + (int)(i % 251) * 7 + salt);
}

static int free_tcp_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t l = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	assert_true(fd >= 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &l), 0);
	port = ntohs(a.sin_port);
	close(fd);
	return port;
}

static int child(struct job *j, int rank)
{
	struct dvx_bootstrap_sock_attr attr = {
		.addr = j->addr, .rank = rank, .nranks = j->nranks,
		.max_unexpected = j->slots, .slot_bytes = j->slot_bytes, .timeout_ns = j->init_ns,
	};
	size_t sz = dvx_bootstrap_sock_mem_size(j->nranks, j->slots, j->slot_bytes);
	void *mem = aligned_alloc(64, DVX_ALIGN_UP(sz, 64));
	struct dvx_bootstrap bs;
	int ret;

	CHECK(mem);
	CHECK(sz == DVX_BOOTSTRAP_SOCK_MEM_SIZE(j->nranks, j->slots, j->slot_bytes));
	ret = dvx_bootstrap_sock_init(&bs, &attr, mem, sz);
	if (j->expect_init == -ETIMEDOUT && rank && ret == -ECONNRESET)
		ret = -ETIMEDOUT;	/* rank 0 timed out first and hung up on this rank */
	CHECK_RET(ret, j->expect_init);
	if (j->expect_init)
		return 0;
	CHECK(dvx_bootstrap_rank(&bs) == rank && dvx_bootstrap_nranks(&bs) == j->nranks);
	ret = j->fn ? j->fn(&bs, rank, j->nranks) : 0;
	dvx_bootstrap_fini(&bs);
	free(mem);
	return ret;
}

/* Fork the ranks, wait for them (killing stragglers), assert every one passed. */
static void run_job(struct job *j)
{
	pid_t pid[MAXR], parent = getpid();
	int status[MAXR], i, left;
	time_t end;

	if (j->kind == UNIX_ADDR) {
		strcpy(j->dir, "/tmp/dvx-bs-XXXXXX");
		assert_non_null(mkdtemp(j->dir));
		snprintf(j->addr, sizeof(j->addr), "unix:%s/rv", j->dir);
	} else {
		snprintf(j->addr, sizeof(j->addr), "tcp:127.0.0.1:%d", free_tcp_port());
	}
	if (!j->init_ns)
		j->init_ns = LONG_NS;
	fflush(NULL);
	for (i = 0; i < j->nranks; i++) {
		pid[i] = -1;
		status[i] = -1;
		if (i == j->skip_rank)
			continue;
		pid[i] = fork();
		assert_true(pid[i] >= 0);
		if (pid[i] == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != parent)
				_exit(99);
			_exit(child(j, i));
		}
	}
	end = time(NULL) + 60;
	for (left = 0, i = 0; i < j->nranks; i++)
		left += pid[i] > 0;
	while (left) {
		int st;
		pid_t w = waitpid(-1, &st, WNOHANG);

		if (w > 0) {
			for (i = 0; i < j->nranks; i++) {
				if (pid[i] == w) {
					status[i] = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
					pid[i] = -1;
					left--;
				}
			}
			continue;
		}
		if (time(NULL) > end) {
			for (i = 0; i < j->nranks; i++)
				if (pid[i] > 0)
					kill(pid[i], SIGKILL);
			end = time(NULL) + 3600;
		}
		usleep(2000);
	}
	for (i = 0; i < j->nranks; i++) {
		if (i == j->skip_rank)
			continue;
		if (status[i])
			fprintf(stderr, "rank %d exited with %d\n", i, status[i]);
	}
	if (j->kind == UNIX_ADDR) {
		/* no socket file is left behind (the directory goes in any case) */
		int empty = rmdir(j->dir) == 0;

		if (!empty) {
			char cmd[96];

			snprintf(cmd, sizeof(cmd), "rm -rf '%s'", j->dir);
			if (system(cmd))
				fprintf(stderr, "cannot remove %s\n", j->dir);
		}
		for (i = 0; i < j->nranks; i++)
			if (i != j->skip_rank)
				assert_int_equal(status[i], 0);
		assert_true(empty);
	}
	for (i = 0; i < j->nranks; i++)
		if (i != j->skip_rank)
			assert_int_equal(status[i], 0);
}

static void run(int nranks, int kind, uint32_t slots, uint32_t slot_bytes,
		int (*fn)(struct dvx_bootstrap *, int, int))
{
	struct job j = { .nranks = nranks, .kind = kind, .slots = slots,
			 .slot_bytes = slot_bytes, .skip_rank = -1, .fn = fn };

	run_job(&j);
}

/* ------------------------------------------------------------------------------------ */

static int do_basic(struct dvx_bootstrap *bs, int rank, int n)
{
	static const size_t lens[] = { 1, 100, 70000 };
	uint32_t v, t;
	size_t li, i;
	int r, d, p, k;

	for (li = 0; li < DVX_ARRAY_SIZE(lens); li++) {
		size_t len = lens[li];
		uint8_t *in = malloc(len), *out = malloc(len * (size_t)n);

		CHECK(in && out);
		for (k = 0; k < 3; k++) {
			for (i = 0; i < len; i++)
				in[i] = pat(rank, i, k);
			CHECK_RET(dvx_bootstrap_allgather(bs, in, out, len, LONG_NS), 0);
			for (r = 0; r < n; r++)
				for (i = 0; i < len; i++)
					CHECK(out[(size_t)r * len + i] == pat(r, i, k));
		}
		free(in);
		free(out);
	}
	for (k = 0; k < 20; k++)
		CHECK_RET(dvx_bootstrap_barrier(bs, LONG_NS), 0);
	/* every pair, small messages */
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
	/* out-of-order tags, same-tag order, empty messages, a length mismatch */
	if (rank == 0) {
		for (t = 1; t <= 5; t++)
			CHECK_RET(dvx_bootstrap_send(bs, 1, t, &t, sizeof(t), LONG_NS), 0);
		for (t = 0; t < 3; t++)
			CHECK_RET(dvx_bootstrap_send(bs, 1, 77, &t, sizeof(t), LONG_NS), 0);
		CHECK_RET(dvx_bootstrap_send(bs, 1, 78, NULL, 0, LONG_NS), 0);
		CHECK_RET(dvx_bootstrap_send(bs, 1, 9, &v, 2, LONG_NS), 0);
		v = 99;
		CHECK_RET(dvx_bootstrap_send(bs, 1, 9, &v, sizeof(v), LONG_NS), 0);
	} else if (rank == 1) {
		static const uint32_t order[] = { 5, 3, 1, 2, 4 };

		CHECK_RET(dvx_bootstrap_recv(bs, 0, 78, NULL, 0, LONG_NS), 0);
		for (i = 0; i < DVX_ARRAY_SIZE(order); i++) {
			CHECK_RET(dvx_bootstrap_recv(bs, 0, order[i], &v, sizeof(v), LONG_NS), 0);
			CHECK(v == order[i]);
		}
		for (t = 0; t < 3; t++) {
			CHECK_RET(dvx_bootstrap_recv(bs, 0, 77, &v, sizeof(v), LONG_NS), 0);
			CHECK(v == t);
		}
		CHECK_RET(dvx_bootstrap_recv(bs, 0, 9, &v, sizeof(v), LONG_NS), -EMSGSIZE);
		CHECK_RET(dvx_bootstrap_recv(bs, 0, 9, &v, sizeof(v), LONG_NS), 0);
		CHECK(v == 99);
	}
	CHECK_RET(dvx_bootstrap_barrier(bs, LONG_NS), 0);
	return 0;
}

static void test_basic_unix(void **state)
{
	(void)state;
	run(1, UNIX_ADDR, 16, 256, NULL);
	run(2, UNIX_ADDR, 16, 256, do_basic);
	run(4, UNIX_ADDR, 16, 256, do_basic);
}

static void test_basic_tcp(void **state)
{
	(void)state;
	run(3, TCP_ADDR, 16, 256, do_basic);
}

/* Several MiB: one message each way in a fixed order, and a big allgather. */
static int do_large(struct dvx_bootstrap *bs, int rank, int n)
{
	size_t len = 6u << 20, blk = 1u << 20, i;
	uint8_t *b = malloc(len), *out = malloc(blk * (size_t)n);
	int r;

	CHECK(b && out);
	if (rank == 0) {
		for (i = 0; i < len; i++)
			b[i] = pat(0, i, 1);
		CHECK_RET(dvx_bootstrap_send(bs, 1, 5, b, len, LONG_NS), 0);
		CHECK_RET(dvx_bootstrap_recv(bs, 1, 6, b, len, LONG_NS), 0);
		for (i = 0; i < len; i++)
			CHECK(b[i] == pat(1, i, 2));
	} else if (rank == 1) {
		CHECK_RET(dvx_bootstrap_recv(bs, 0, 5, b, len, LONG_NS), 0);
		for (i = 0; i < len; i++)
			CHECK(b[i] == pat(0, i, 1));
		for (i = 0; i < len; i++)
			b[i] = pat(1, i, 2);
		CHECK_RET(dvx_bootstrap_send(bs, 0, 6, b, len, LONG_NS), 0);
	}
	for (i = 0; i < blk; i++)
		out[(size_t)rank * blk + i] = pat(rank, i, 3);
	CHECK_RET(dvx_bootstrap_allgather(bs, out + (size_t)rank * blk, out, blk, LONG_NS), 0);
	for (r = 0; r < n; r++)
		for (i = 0; i < blk; i++)
			CHECK(out[(size_t)r * blk + i] == pat(r, i, 3));
	free(b);
	free(out);
	return 0;
}

static void test_large(void **state)
{
	(void)state;
	run(2, UNIX_ADDR, 4, 64, do_large);
	run(4, TCP_ADDR, 4, 64, do_large);
}

/* Duplicates: separate tag spaces and collectives. */
static int do_dup(struct dvx_bootstrap *bs, int rank, int n)
{
	struct dvx_bootstrap d1;
	uint32_t v, in, out[MAXR];
	int i, p;

	CHECK_RET(dvx_bootstrap_dup(bs, &d1), 0);
	if (rank == 0) {
		v = 1;
		CHECK_RET(dvx_bootstrap_send(&d1, 1, 7, &v, sizeof(v), LONG_NS), 0);
		v = 0;
		CHECK_RET(dvx_bootstrap_send(bs, 1, 7, &v, sizeof(v), LONG_NS), 0);
	} else if (rank == 1) {
		CHECK_RET(dvx_bootstrap_recv(bs, 0, 7, &v, sizeof(v), LONG_NS), 0);
		CHECK(v == 0);
		CHECK_RET(dvx_bootstrap_recv(&d1, 0, 7, &v, sizeof(v), LONG_NS), 0);
		CHECK(v == 1);
	}
	for (i = 0; i < 10; i++) {
		in = (uint32_t)(rank + 100 + i);
		CHECK_RET(dvx_bootstrap_allgather(&d1, &in, out, sizeof(in), LONG_NS), 0);
		for (p = 0; p < n; p++)
			CHECK(out[p] == (uint32_t)(p + 100 + i));
		in = (uint32_t)(rank + 200 + i);
		CHECK_RET(dvx_bootstrap_allgather(bs, &in, out, sizeof(in), LONG_NS), 0);
		for (p = 0; p < n; p++)
			CHECK(out[p] == (uint32_t)(p + 200 + i));
	}
	dvx_bootstrap_fini(&d1);
	CHECK_RET(dvx_bootstrap_barrier(bs, LONG_NS), 0);
	return 0;
}

static void test_dup(void **state)
{
	(void)state;
	run(3, UNIX_ADDR, 8, 64, do_dup);
}

/* The last rank joins the barrier only after the others told it (on a duplicate) that
 * they timed out; they then resume their pending barrier. */
static int do_timeout(struct dvx_bootstrap *bs, int rank, int n)
{
	struct dvx_bootstrap d;
	int last = n - 1, p;
	uint32_t v = 1;

	CHECK_RET(dvx_bootstrap_dup(bs, &d), 0);
	if (rank != last) {
		CHECK_RET(dvx_bootstrap_barrier(bs, SHORT_NS), -ETIMEDOUT);
		CHECK_RET(dvx_bootstrap_send(bs, last, 1, &v, sizeof(v), LONG_NS), -EBUSY);
		CHECK_RET(dvx_bootstrap_dup(bs, &d), -EBUSY);
		CHECK_RET(dvx_bootstrap_send(&d, last, 1, &v, sizeof(v), LONG_NS), 0);
		CHECK_RET(dvx_bootstrap_barrier(bs, LONG_NS), 0);
	} else {
		for (p = 0; p < last; p++)
			CHECK_RET(dvx_bootstrap_recv(&d, p, 1, &v, sizeof(v), LONG_NS), 0);
		CHECK_RET(dvx_bootstrap_barrier(bs, LONG_NS), 0);
	}
	/* a receive nobody answers times out and leaves nothing behind */
	if (rank == 0) {
		CHECK_RET(dvx_bootstrap_recv(bs, 1, 3, &v, sizeof(v), SHORT_NS), -ETIMEDOUT);
		CHECK_RET(dvx_bootstrap_send(&d, 1, 2, &v, sizeof(v), LONG_NS), 0);
		CHECK_RET(dvx_bootstrap_recv(bs, 1, 3, &v, sizeof(v), LONG_NS), 0);
		CHECK(v == 33);
	} else if (rank == 1) {
		CHECK_RET(dvx_bootstrap_recv(&d, 0, 2, &v, sizeof(v), LONG_NS), 0);
		v = 33;
		CHECK_RET(dvx_bootstrap_send(bs, 0, 3, &v, sizeof(v), LONG_NS), 0);
	}
	dvx_bootstrap_fini(&d);
	CHECK_RET(dvx_bootstrap_barrier(bs, LONG_NS), 0);
	return 0;
}

static void test_timeout(void **state)
{
	(void)state;
	run(2, UNIX_ADDR, 8, 64, do_timeout);
	run(4, TCP_ADDR, 8, 64, do_timeout);
}

/* No slot for a message nobody waits for: -ENOBUFS, not a hang; order it and it works. */
static int do_nobufs(struct dvx_bootstrap *bs, int rank, int n)
{
	uint32_t v;

	if (rank == 0) {
		v = 1;
		CHECK_RET(dvx_bootstrap_send(bs, 1, 1, &v, sizeof(v), LONG_NS), 0);
		v = 2;
		CHECK_RET(dvx_bootstrap_send(bs, 1, 2, &v, sizeof(v), LONG_NS), 0);
	} else {
		CHECK_RET(dvx_bootstrap_recv(bs, 0, 2, &v, sizeof(v), LONG_NS), -ENOBUFS);
		CHECK_RET(dvx_bootstrap_recv(bs, 0, 1, &v, sizeof(v), LONG_NS), 0);
		CHECK(v == 1);
		CHECK_RET(dvx_bootstrap_recv(bs, 0, 2, &v, sizeof(v), LONG_NS), 0);
		CHECK(v == 2);
	}
	CHECK_RET(dvx_bootstrap_barrier(bs, LONG_NS), 0);
	return 0;
}

static void test_nobufs(void **state)
{
	(void)state;
	run(2, UNIX_ADDR, 0, 0, do_nobufs);
}

/* The last rank dies (no goodbye) after a barrier: the others get errors, not hangs,
 * and still talk to each other. */
static int do_death(struct dvx_bootstrap *bs, int rank, int n)
{
	int last = n - 1, p;
	uint32_t v = 5, outs[MAXR];


	CHECK_RET(dvx_bootstrap_barrier(bs, LONG_NS), 0);
	/* a crash right after a barrier may fail the others' barrier: the last rank dies
	 * only once everybody is out of it */
	if (rank == last) {
		for (p = 0; p < last; p++)
			CHECK_RET(dvx_bootstrap_recv(bs, p, 50, NULL, 0, LONG_NS), 0);
		if (n > 2)
			CHECK_RET(dvx_bootstrap_send(bs, 0, 1, &v, sizeof(v), LONG_NS), 0);
		_exit(0);	/* no dvx_bootstrap_fini(): a crash */
	}
	CHECK_RET(dvx_bootstrap_send(bs, last, 50, NULL, 0, LONG_NS), 0);
	CHECK_RET(dvx_bootstrap_barrier(bs, LONG_NS), -ECONNRESET);
	if (rank == 0 && n > 2) {
		/* what it sent before dying is still there */
		CHECK_RET(dvx_bootstrap_recv(bs, last, 1, &v, sizeof(v), LONG_NS), 0);
		CHECK(v == 5);
	}
	CHECK_RET(dvx_bootstrap_recv(bs, last, 1, &v, sizeof(v), LONG_NS), -ECONNRESET);
	CHECK_RET(dvx_bootstrap_send(bs, last, 1, &v, sizeof(v), LONG_NS), -ECONNRESET);
	CHECK_RET(dvx_bootstrap_allgather(bs, &v, outs, sizeof(v), LONG_NS), -ECONNRESET);
	if (n > 2) {
		if (rank == 0) {
			CHECK_RET(dvx_bootstrap_send(bs, 1, 8, &v, sizeof(v), LONG_NS), 0);
			CHECK_RET(dvx_bootstrap_recv(bs, 1, 8, &v, sizeof(v), LONG_NS), 0);
		} else if (rank == 1) {
			CHECK_RET(dvx_bootstrap_recv(bs, 0, 8, &v, sizeof(v), LONG_NS), 0);
			CHECK_RET(dvx_bootstrap_send(bs, 0, 8, &v, sizeof(v), LONG_NS), 0);
		}
	}
	return 0;
}

static void test_death(void **state)
{
	(void)state;
	run(2, UNIX_ADDR, 8, 64, do_death);
	run(4, UNIX_ADDR, 8, 64, do_death);
	run(3, TCP_ADDR, 8, 64, do_death);
}

/* A rank that never comes: every other rank's init times out, and cleans up. */
static void test_never_comes(void **state)
{
	struct job j = { .nranks = 3, .kind = UNIX_ADDR, .slots = 4, .slot_bytes = 64,
			 .init_ns = SHORT_NS, .expect_init = -ETIMEDOUT };

	(void)state;
	j.skip_rank = 2;
	run_job(&j);
	j.skip_rank = 0;	/* no rank 0: the others never get a table */
	run_job(&j);
	j.kind = TCP_ADDR;
	j.skip_rank = 1;
	run_job(&j);
}

static void test_bad_args(void **state)
{
	static const char *const bad[] = {
		"", "unix:", "foo:/x", "tcp:", "tcp:127.0.0.1", "tcp:127.0.0.1:0",
		"tcp:127.0.0.1:65536", "tcp:127.0.0.1:12a", "tcp:localhost:1000", "tcp:[::1:1000",
		"tcp:[::1]1000",
		("unix:/tmp/0123456789012345678901234567890123456789012345678901234567890123456789"
		 "0123456789012345678901234567890123456789"),
	};
	struct dvx_bootstrap_sock_attr attr = { .addr = "unix:/nonexistent/rv", .rank = 0,
						 .nranks = 2, .max_unexpected = 4,
						 .slot_bytes = 64, .timeout_ns = SHORT_NS };
	size_t sz = dvx_bootstrap_sock_mem_size(2, 4, 64), i;
	uint64_t *mem = calloc(1, sz + 8);
	struct dvx_bootstrap bs;
	uint32_t v = 7, out;

	(void)state;
	assert_non_null(mem);
	assert_int_equal(dvx_bootstrap_sock_mem_size(0, 4, 64), 0);
	assert_int_equal(dvx_bootstrap_sock_mem_size(2, 4, DVX_BOOTSTRAP_MAX_SLOT_BYTES + 1), 0);
	for (i = 0; i < DVX_ARRAY_SIZE(bad); i++) {
		attr.addr = bad[i];
		assert_int_equal(dvx_bootstrap_sock_init(&bs, &attr, mem, sz), -EINVAL);
	}
	attr.addr = "tcp:127.0.0.1:1";
	assert_int_equal(dvx_bootstrap_sock_init(NULL, &attr, mem, sz), -EINVAL);
	assert_int_equal(dvx_bootstrap_sock_init(&bs, NULL, mem, sz), -EINVAL);
	assert_int_equal(dvx_bootstrap_sock_init(&bs, &attr, NULL, sz), -EINVAL);
	assert_int_equal(dvx_bootstrap_sock_init(&bs, &attr, mem, sz - 1), -EINVAL);
	assert_int_equal(dvx_bootstrap_sock_init(&bs, &attr, (char *)mem + 4, sz), -EINVAL);
	attr.rank = 2;
	assert_int_equal(dvx_bootstrap_sock_init(&bs, &attr, mem, sz), -EINVAL);
	attr.rank = -1;
	assert_int_equal(dvx_bootstrap_sock_init(&bs, &attr, mem, sz), -EINVAL);
	/* rank 0's address cannot be bound: the directory does not exist */
	attr.rank = 0;
	attr.addr = "unix:/nonexistent-dvx-dir/rv";
	assert_true(dvx_bootstrap_sock_init(&bs, &attr, mem, sz) < 0);
	attr.addr = "tcp:127.0.0.1:1";
	attr.rank = 1;
	/* rank 1 with nobody at rank 0's address: times out */
	assert_int_equal(dvx_bootstrap_sock_init(&bs, &attr, mem, sz), -ETIMEDOUT);

	/* one rank: nothing to connect; collectives are local */
	attr.nranks = 1;
	attr.rank = 0;
	attr.addr = "tcp:127.0.0.1:1";
	assert_int_equal(dvx_bootstrap_sock_init(&bs, &attr, mem, sz), 0);
	assert_int_equal(dvx_bootstrap_allgather(&bs, &v, &out, sizeof(v), 0), 0);
	assert_int_equal(out, 7);
	assert_int_equal(dvx_bootstrap_barrier(&bs, 0), 0);
	assert_int_equal(dvx_bootstrap_send(&bs, 0, 1, &v, 4, 0), -EINVAL);
	assert_int_equal(dvx_bootstrap_recv(&bs, 1, 1, &v, 4, 0), -EINVAL);
	dvx_bootstrap_fini(&bs);
	assert_int_equal(dvx_bootstrap_barrier(&bs, 0), -EINVAL);
	free(mem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_args),
		cmocka_unit_test(test_basic_unix),
		cmocka_unit_test(test_basic_tcp),
		cmocka_unit_test(test_large),
		cmocka_unit_test(test_dup),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_nobufs),
		cmocka_unit_test(test_death),
		cmocka_unit_test(test_never_comes),
	};

	signal(SIGPIPE, SIG_DFL);	/* dvx must never raise it */
	return cmocka_run_group_tests_name("bootstrap-sock", tests, NULL, NULL);
}
