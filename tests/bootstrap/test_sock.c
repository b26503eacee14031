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
 *
 * The job's secret (docs/bootstrap.md, The handshake): a job may run with a secret, from
 * the attr or the environment, and may have one more process beside its ranks: a
 * stranger that connects to rank 0's port (or a rank's listener) and stays silent,
 * trickles, sends garbage, an old version's record, a HELLO without the secret, with
 * another secret's proof or with a proof of another challenge; an impostor that runs
 * dvx_bootstrap_sock_init() with another secret or none; or a rogue last rank that
 * knows the secret and speaks the set-up itself (written here from the documented wire
 * format, so it also checks that format) and then sends bad frames. Ranks the job
 * marks early start first, then the other process, then (once it says so through a
 * pipe) the rest. Each refusal is checked where it happens (rank 0's or rank 1's
 * struct dvx_bootstrap_sock_stats, the stranger's REFUSE record or closed connection,
 * the impostor's -EACCES) and the job's own ranks must complete their set-up and their
 * collectives and messages.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

#include "../lib/dvx_test.h"

#include <dvx/bootstrap/bootstrap.h>

#include "../../core/bootstrap/hmac.h"

#define LONG_NS (20ull * 1000000000ull)
#define SHORT_NS (300ull * 1000000ull)
#define MAXR 8

enum { UNIX_ADDR, TCP_ADDR };

/* which count of struct dvx_bootstrap_sock_stats a job expects to see once */
enum { WHY_NONE, WHY_AUTH, WHY_PROTO, WHY_SLOW, WHY_HANGUP, WHY_LATE, WHY_AUTH_OR_LATE, WHY_ANY };

struct job {
	int nranks;
	int kind;
	uint32_t slots;
	uint32_t slot_bytes;
	uint64_t init_ns;
	int skip_rank;		/* this rank never starts (-1: all start) */
	int expect_init;	/* what init must return */
	int (*fn)(struct dvx_bootstrap *bs, int rank, int nranks);
	const char *secret;	/* the job's secret; NULL: the open mode */
	uint32_t env_mask;	/* ranks that take it from DVX_BOOTSTRAP_SECRET, not the attr */
	uint64_t max_msg;	/* attr.max_msg_bytes */
	/* another process beside the ranks (a stranger, an impostor, a rogue rank): it
	 * writes a byte on @ready once the ranks not in @early_mask may start */
	int (*other)(struct job *j, int ready);
	uint32_t early_mask;
	int stats_rank;		/* the rank whose refusals are checked (-1: none) */
	int want_why;		/* WHY_*: one refusal of that kind (WHY_NONE: none at all) */
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

/* @rank's refusals as the job expects them: one of the kind it names, or none */
static int check_stats(const struct job *j, int rank, const struct dvx_bootstrap_sock_stats *s)
{
	uint32_t want = j->want_why == WHY_NONE ? 0 : 1;

	CHECK(s->admitted == (uint32_t)(rank ? j->nranks - 1 - rank : j->nranks - 1));
	if (rank != j->stats_rank) {
		CHECK(s->refused == 0 && s->last_refusal == 0);
		return 0;
	}
	if (s->refused != want)
		fprintf(stderr, "rank %d refused %u (auth %u proto %u slow %u hangup %u late %u)\n",
			rank, s->refused, s->refused_auth, s->refused_proto, s->refused_slow,
			s->refused_hangup, s->refused_late);
	CHECK(s->refused == want);
	CHECK(s->refused == s->refused_auth + s->refused_proto + s->refused_slow +
			    s->refused_hangup + s->refused_late);
	switch (j->want_why) {
	case WHY_NONE:
		CHECK(s->last_refusal == 0);
		break;
	case WHY_AUTH:
		CHECK(s->refused_auth == 1 && s->last_refusal == -EACCES);
		break;
	case WHY_PROTO:
		CHECK(s->refused_proto == 1 && s->last_refusal == -EPROTO);
		break;
	case WHY_SLOW:
		CHECK(s->refused_slow == 1 && s->last_refusal == -ETIMEDOUT);
		break;
	case WHY_HANGUP:
		CHECK(s->refused_hangup == 1 && s->last_refusal == -ECONNRESET);
		break;
	case WHY_LATE:
		CHECK(s->refused_late == 1 && s->last_refusal == -ECANCELED);
		break;
	case WHY_AUTH_OR_LATE:
		CHECK(s->refused_auth + s->refused_late == 1);
		break;
	default:
		CHECK(s->last_refusal < 0);
		break;
	}
	return 0;
}

static int child(struct job *j, int rank)
{
	struct dvx_bootstrap_sock_stats stats;
	struct dvx_bootstrap_sock_cfg attr = {
		.addr = j->addr, .rank = rank, .nranks = j->nranks,
		.max_unexpected = j->slots, .slot_bytes = j->slot_bytes, .timeout_ns = j->init_ns,
		.max_msg_bytes = j->max_msg, .stats = &stats,
	};
	size_t sz = dvx_bootstrap_sock_mem_size(j->nranks, j->slots, j->slot_bytes);
	void *mem = aligned_alloc(64, DVX_ALIGN_UP(sz, 64));
	struct dvx_bootstrap bs;
	int ret;

	CHECK(mem);
	CHECK(sz == DVX_BOOTSTRAP_SOCK_MEM_SIZE(j->nranks, j->slots, j->slot_bytes));
	/* the secret from the attr, or from the environment (which is this test's alone) */
	unsetenv(DVX_BOOTSTRAP_SECRET_ENV);
	if (j->secret && (j->env_mask & (1u << rank))) {
		CHECK(setenv(DVX_BOOTSTRAP_SECRET_ENV, j->secret, 1) == 0);
	} else if (j->secret) {
		attr.secret = j->secret;
		attr.secret_len = strlen(j->secret);
	}
	memset(&stats, 0xee, sizeof(stats));
	ret = dvx_bootstrap_sock_init(&bs, &attr, mem, sz);
	if (j->expect_init == -ETIMEDOUT && rank && ret == -ECONNRESET)
		ret = -ETIMEDOUT;	/* rank 0 timed out first and hung up on this rank */
	CHECK_RET(ret, j->expect_init);
	if (j->expect_init)
		return 0;
	ret = check_stats(j, rank, &stats);
	if (ret)
		return ret;
	CHECK(dvx_bootstrap_rank(&bs) == rank && dvx_bootstrap_nranks(&bs) == j->nranks);
	ret = j->fn ? j->fn(&bs, rank, j->nranks) : 0;
	dvx_bootstrap_fini(&bs);
	free(mem);
	return ret;
}

/* Fork rank @i (or, -1, the other process writing on @ready). */
static pid_t start(struct job *j, int i, int ready, pid_t parent)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(99);
		_exit(i < 0 ? j->other(j, ready) : child(j, i));
	}
	return pid;
}

/* Fork the ranks (and the other process), wait for them (killing stragglers), assert
 * every one passed. */
static void run_job(struct job *j)
{
	pid_t pid[MAXR + 1], parent = getpid();
	int status[MAXR + 1], i, left, pp[2] = { -1, -1 };
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
	if (!j->other)
		j->early_mask = ~0u;
	else if (!j->early_mask)
		j->early_mask = 1;
	for (i = 0; i <= j->nranks; i++) {
		pid[i] = -1;
		status[i] = -1;
	}
	for (i = 0; i < j->nranks; i++)
		if (i != j->skip_rank && (j->early_mask & (1u << i)))
			pid[i] = start(j, i, -1, parent);
	if (j->other) {
		struct pollfd p;
		char c;

		assert_int_equal(pipe(pp), 0);
		pid[j->nranks] = start(j, -1, pp[1], parent);
		close(pp[1]);
		/* the other process says when the rest may come (or dies: end of file) */
		p.fd = pp[0];
		p.events = POLLIN;
		if (poll(&p, 1, 60000) != 1 || read(pp[0], &c, 1) != 1)
			fprintf(stderr, "the other process never said go\n");
		close(pp[0]);
	}
	for (i = 0; i < j->nranks; i++)
		if (i != j->skip_rank && !(j->early_mask & (1u << i)))
			pid[i] = start(j, i, -1, parent);
	end = time(NULL) + 60;
	for (left = 0, i = 0; i <= j->nranks; i++)
		left += pid[i] > 0;
	while (left) {
		int st;
		pid_t w = waitpid(-1, &st, WNOHANG);

		if (w > 0) {
			for (i = 0; i <= j->nranks; i++) {
				if (pid[i] == w) {
					status[i] = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
					pid[i] = -1;
					left--;
				}
			}
			continue;
		}
		if (time(NULL) > end) {
			for (i = 0; i <= j->nranks; i++)
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
	if (j->other && status[j->nranks])
		fprintf(stderr, "the other process exited with %d\n", status[j->nranks]);
	if (j->other)
		assert_int_equal(status[j->nranks], 0);
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
			 .slot_bytes = slot_bytes, .skip_rank = -1, .fn = fn, .stats_rank = -1 };

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
			 .init_ns = SHORT_NS, .expect_init = -ETIMEDOUT, .stats_rank = -1 };

	(void)state;
	j.skip_rank = 2;
	run_job(&j);
	j.skip_rank = 0;	/* no rank 0: the others never get a table */
	run_job(&j);
	j.kind = TCP_ADDR;
	j.skip_rank = 1;
	run_job(&j);
}

/* ------------------------------------------------------------------------------------
 * The set-up's wire, written here from docs/bootstrap.md (not from the library's code):
 * a record head {be32 magic "DVXB", be16 version 2, be16 type, be32 rank, be32 nranks},
 * the handshake's records and proofs, and the frames after set-up.
 */

#define W_MAGIC 0x44565842u
#define W_VERSION 2
#define W_HEAD 16
#define W_NONCE 32
#define W_MAC 32
#define W_ADDR 128
enum { T_HELLO = 1, T_TABLE, T_PEER, T_CHALLENGE, T_WELCOME, T_REFUSE };
enum { R_AUTH = 1, R_PROTO, R_TAKEN };
#define JOB_SECRET "the job's secret, 24+ bytes"
#define MS_NS 1000000ull

static void put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v & 0xffff);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

static uint32_t get16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

static uint32_t get32(const uint8_t *p)
{
	return get16(p) << 16 | get16(p + 2);
}

static void w_head(uint8_t *h, uint32_t type, uint32_t rank, uint32_t nranks)
{
	put32(h, W_MAGIC);
	put16(h + 4, W_VERSION);
	put16(h + 6, type);
	put32(h + 8, rank);
	put32(h + 12, nranks);
}

/* does @h head a record of @type from @rank of a job of @nranks? */
static int w_is(const uint8_t *h, uint32_t type, uint32_t rank, uint32_t nranks)
{
	return get32(h) == W_MAGIC && get16(h + 4) == W_VERSION && get16(h + 6) == type &&
	       get32(h + 8) == rank && get32(h + 12) == nranks;
}

/* HMAC-SHA-256(secret, label ver type c a n nonce_a nonce_c [addr]); NULL secret: empty */
static void w_proof(uint8_t out[W_MAC], const char *secret, int acceptor, uint32_t type,
		    uint32_t c, uint32_t a, uint32_t n, const uint8_t *na, const uint8_t *nc,
		    const uint8_t *addr)
{
	uint8_t msg[16 + 16 + 2 * W_NONCE + W_ADDR], *p = msg;

	memcpy(p, acceptor ? "DVXB2 acceptor  " : "DVXB2 connector ", 16);
	put16(p + 16, W_VERSION);
	put16(p + 18, type);
	put32(p + 20, c);
	put32(p + 24, a);
	put32(p + 28, n);
	memcpy(p + 32, na, W_NONCE);
	memcpy(p + 32 + W_NONCE, nc, W_NONCE);
	if (addr)
		memcpy(p + 32 + 2 * W_NONCE, addr, W_ADDR);
	dvx_bs_hmac_sha256(secret, secret ? strlen(secret) : 0, msg,
			   addr ? sizeof(msg) : sizeof(msg) - W_ADDR, out);
}

/* A blocking socket to "unix:PATH" or "tcp:127.0.0.1:PORT", tried for up to 20 s while
 * nobody listens there; its reads give up after 20 s. -1 on failure. */
static int raw_connect(const char *addr)
{
	struct timeval tv = { .tv_sec = 20 };
	int fd = -1, k;

	for (k = 0; k < 2000; k++) {
		if (!strncmp(addr, "unix:", 5)) {
			struct sockaddr_un a = { .sun_family = AF_UNIX };

			snprintf(a.sun_path, sizeof(a.sun_path), "%s", addr + 5);
			fd = socket(AF_UNIX, SOCK_STREAM, 0);
			if (fd >= 0 && !connect(fd, (struct sockaddr *)&a, sizeof(a)))
				break;
		} else {
			struct sockaddr_in a = { .sin_family = AF_INET };

			a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			a.sin_port = htons((uint16_t)atoi(strrchr(addr, ':') + 1));
			fd = socket(AF_INET, SOCK_STREAM, 0);
			if (fd >= 0 && !connect(fd, (struct sockaddr *)&a, sizeof(a)))
				break;
		}
		if (fd >= 0)
			close(fd);
		fd = -1;
		usleep(10000);
	}
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

/* Read up to @n bytes: how many came before the end of the stream, an error or 20 s. */
static size_t raw_read(int fd, void *buf, size_t n)
{
	size_t got = 0;
	ssize_t k;

	while (got < n) {
		k = recv(fd, (uint8_t *)buf + got, n - got, 0);
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	return got;
}

static int raw_write(int fd, const void *buf, size_t n)
{
	return send(fd, buf, n, MSG_NOSIGNAL) == (ssize_t)n ? 0 : -1;
}

/* Is the stream over (the other end closed it), with nothing more on it? */
static int raw_eof(int fd)
{
	uint8_t b;
	ssize_t k = recv(fd, &b, 1, 0);

	return k == 0 || (k < 0 && errno == ECONNRESET);
}

static int go(int ready)
{
	return write(ready, "g", 1) == 1 ? 0 : -1;
}

/* Read rank @a's challenge on @fd: its nonce into @na. */
static int read_challenge(int fd, uint32_t a, uint32_t n, uint8_t na[W_NONCE])
{
	uint8_t c[W_HEAD + W_NONCE];

	CHECK(raw_read(fd, c, sizeof(c)) == sizeof(c));
	CHECK(w_is(c, T_CHALLENGE, a, n));
	memcpy(na, c + W_HEAD, W_NONCE);
	return 0;
}

/* The refusal rank @a sends, with @reason, and then the end of the stream. */
static int read_refusal(int fd, uint32_t a, uint32_t n, uint32_t reason)
{
	uint8_t r[W_HEAD + 4];

	CHECK(raw_read(fd, r, sizeof(r)) == sizeof(r));
	CHECK(w_is(r, T_REFUSE, a, n));
	CHECK(get32(r + W_HEAD) == reason);
	CHECK(raw_eof(fd));
	return 0;
}

/* A record of @type from rank @c to rank @a, proven with @secret (NULL: none) over the
 * nonce @na (the challenge's, or another one for a replay); a HELLO advertises @addr. */
static size_t make_record(uint8_t *rec, uint32_t type, uint32_t c, uint32_t a, uint32_t n,
			  const char *secret, const uint8_t *na, const uint8_t *addr)
{
	uint8_t *nc = rec + W_HEAD, *mac = nc + W_NONCE;

	w_head(rec, type, c, n);
	if (getrandom(nc, W_NONCE, 0) != W_NONCE)
		memset(nc, 7, W_NONCE);
	w_proof(mac, secret, 0, type, c, a, n, na, nc, type == T_HELLO ? addr : NULL);
	if (type == T_HELLO)
		memcpy(mac + W_MAC, addr, W_ADDR);
	return type == T_HELLO ? W_HEAD + W_NONCE + W_MAC + W_ADDR : W_HEAD + W_NONCE + W_MAC;
}

/* A stranger that tries HELLO as rank @c with @secret's proof: refused with @reason. */
static int hello_refused(struct job *j, int ready, uint32_t c, const char *secret, int replay,
			 uint32_t reason)
{
	uint8_t na[W_NONCE], rec[256], addr[W_ADDR];
	uint32_t n = (uint32_t)j->nranks;
	size_t len;
	int fd = raw_connect(j->addr), ret;

	CHECK(fd >= 0);
	ret = read_challenge(fd, 0, n, na);
	if (ret)
		return ret;
	memset(addr, 0, sizeof(addr));
	if (replay)
		na[0] ^= 1;	/* the proof of another challenge */
	len = make_record(rec, T_HELLO, c, 0, n, secret, na, addr);
	CHECK(raw_write(fd, rec, len) == 0);
	ret = read_refusal(fd, 0, n, reason);
	close(fd);
	return ret ? ret : go(ready);
}

static int st_no_secret(struct job *j, int ready)
{
	return hello_refused(j, ready, 1, NULL, 0, R_AUTH);
}

static int st_wrong_secret(struct job *j, int ready)
{
	return hello_refused(j, ready, 2, "another job's secret", 0, R_AUTH);
}

static int st_replay(struct job *j, int ready)
{
	return hello_refused(j, ready, 1, JOB_SECRET, 1, R_AUTH);
}


/* Connects and says nothing: refused only when every rank has come (the job did not
 * wait for it), the connection closed without a word. */
static int st_silent(struct job *j, int ready)
{
	uint8_t na[W_NONCE];
	int fd = raw_connect(j->addr), ret;

	CHECK(fd >= 0);
	CHECK(go(ready) == 0);
	ret = read_challenge(fd, 0, (uint32_t)j->nranks, na);
	if (ret)
		return ret;
	CHECK(raw_eof(fd));
	close(fd);
	return 0;
}

/* Ten bytes of a record, then silence: closed after the handshake's time. */
static int st_slow(struct job *j, int ready)
{
	uint8_t na[W_NONCE], rec[256], addr[W_ADDR] = { 0 };
	int fd = raw_connect(j->addr), ret;

	CHECK(fd >= 0);
	ret = read_challenge(fd, 0, (uint32_t)j->nranks, na);
	if (ret)
		return ret;
	make_record(rec, T_HELLO, 1, 0, (uint32_t)j->nranks, JOB_SECRET, na, addr);
	CHECK(raw_write(fd, rec, 10) == 0);
	CHECK(raw_eof(fd));
	close(fd);
	return go(ready);
}

/* A bad head (16 bytes that are no record of this job): refused on the head alone. */
static int head_refused(struct job *j, int ready, const uint8_t *h)
{
	uint8_t na[W_NONCE];
	int fd = raw_connect(j->addr), ret;

	CHECK(fd >= 0);
	ret = read_challenge(fd, 0, (uint32_t)j->nranks, na);
	if (ret)
		return ret;
	CHECK(raw_write(fd, h, W_HEAD) == 0);
	ret = read_refusal(fd, 0, (uint32_t)j->nranks, R_PROTO);
	close(fd);
	return ret ? ret : go(ready);
}

static int st_garbage(struct job *j, int ready)
{
	uint8_t h[W_HEAD];

	memset(h, 0xa5, sizeof(h));
	return head_refused(j, ready, h);
}

static int st_other_nranks(struct job *j, int ready)
{
	uint8_t h[W_HEAD];

	w_head(h, T_HELLO, 1, (uint32_t)j->nranks + 1);
	return head_refused(j, ready, h);
}

static int st_rank_out_of_range(struct job *j, int ready)
{
	uint8_t h[W_HEAD];

	w_head(h, T_HELLO, (uint32_t)j->nranks, (uint32_t)j->nranks);
	return head_refused(j, ready, h);
}

/* a rank 0 never hears from: itself */
static int st_rank_zero(struct job *j, int ready)
{
	uint8_t h[W_HEAD];

	w_head(h, T_HELLO, 0, (uint32_t)j->nranks);
	return head_refused(j, ready, h);
}

static int st_peer_at_rank0(struct job *j, int ready)
{
	uint8_t h[W_HEAD];

	w_head(h, T_PEER, 1, (uint32_t)j->nranks);
	return head_refused(j, ready, h);
}

/* version 1's HELLO head: {magic, be32 type 1, rank, nranks}, i.e. version 0 here */
static int st_old_version(struct job *j, int ready)
{
	uint8_t h[W_HEAD];

	put32(h, W_MAGIC);
	put32(h + 4, T_HELLO);
	put32(h + 8, 1);
	put32(h + 12, (uint32_t)j->nranks);
	return head_refused(j, ready, h);
}

/* A flood of junk without reading the challenge: refused (with or without a word, as
 * the close may reset a connection with unread bytes). */
static int st_junk_flood(struct job *j, int ready)
{
	uint8_t junk[4096];
	size_t i;
	int fd = raw_connect(j->addr);

	CHECK(fd >= 0);
	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 131 + 7);
	(void)raw_write(fd, junk, sizeof(junk));
	while (raw_read(fd, junk, sizeof(junk)) == sizeof(junk))
		;
	close(fd);
	return go(ready);
}

/* At rank 1's listener (UNIX: "<rv>.1"), a PEER as rank 2 with another secret's proof,
 * sent while the real rank 2 comes: refused (REFUSE, or closed if rank 1 was done
 * first). */
static int st_mesh(struct job *j, int ready)
{
	char a1[160];
	uint8_t na[W_NONCE], rec[256], r[W_HEAD + 4];
	uint32_t n = (uint32_t)j->nranks;
	size_t len, got;
	int fd, ret;

	snprintf(a1, sizeof(a1), "%s.1", j->addr);
	fd = raw_connect(a1);
	CHECK(fd >= 0);
	CHECK(go(ready) == 0);
	ret = read_challenge(fd, 1, n, na);
	if (ret)
		return ret;
	len = make_record(rec, T_PEER, 2, 1, n, "another job's secret", na, NULL);
	(void)raw_write(fd, rec, len);
	got = raw_read(fd, r, sizeof(r));
	CHECK(got == 0 || (got == sizeof(r) && w_is(r, T_REFUSE, 1, n) &&
			   get32(r + W_HEAD) == R_AUTH));
	close(fd);
	return 0;
}

/* dvx_bootstrap_sock_init() as rank 1 with another secret (or none): -EACCES, promptly. */
static int impostor(struct job *j, int ready, const char *secret)
{
	struct dvx_bootstrap_sock_cfg attr = {
		.addr = j->addr, .rank = 1, .nranks = j->nranks, .max_unexpected = 4,
		.slot_bytes = 64, .timeout_ns = LONG_NS,
	};
	size_t sz = dvx_bootstrap_sock_mem_size(j->nranks, 4, 64);
	void *mem = aligned_alloc(64, DVX_ALIGN_UP(sz, 64));
	struct dvx_bootstrap bs;

	CHECK(mem);
	unsetenv(DVX_BOOTSTRAP_SECRET_ENV);
	attr.secret = secret;
	attr.secret_len = secret ? strlen(secret) : 0;
	CHECK_RET(dvx_bootstrap_sock_init(&bs, &attr, mem, sz), -EACCES);
	free(mem);
	return go(ready);
}

static int imp_wrong(struct job *j, int ready)
{
	return impostor(j, ready, "another job's secret");
}

static int imp_open(struct job *j, int ready)
{
	return impostor(j, ready, NULL);
}

/* A job of 3 ranks with the secret and one more process; @why the refusal expected at
 * @at. */
static void run_other(int kind, int (*other)(struct job *, int), uint32_t early, int at,
		      int why)
{
	struct job j = { .nranks = 3, .kind = kind, .slots = 16, .slot_bytes = 256,
			 .skip_rank = -1, .fn = do_basic, .secret = JOB_SECRET,
			 .other = other, .early_mask = early, .stats_rank = at, .want_why = why };

	run_job(&j);
}

/* The right secret, from the attr, the environment, or both mixed: the job runs and
 * nothing is refused. */
static void test_secret_forms(void **state)
{
	struct job j = { .nranks = 3, .kind = UNIX_ADDR, .slots = 16, .slot_bytes = 256,
			 .skip_rank = -1, .fn = do_basic, .secret = JOB_SECRET,
			 .stats_rank = -1 };

	(void)state;
	run_job(&j);			/* attr */
	j.env_mask = ~0u;
	j.kind = TCP_ADDR;
	run_job(&j);			/* environment */
	j.env_mask = 0x6;		/* ranks 1 and 2 from the environment, 0 and 3 the attr */
	j.nranks = 4;
	j.kind = UNIX_ADDR;
	run_job(&j);
	j.secret = "";			/* an empty environment variable is no secret */
	j.nranks = 2;
	run_job(&j);
}

/* Strangers at rank 0's port: each refused, counted there, and the job completes. */
static void test_strangers(void **state)
{
	static const struct {
		int (*fn)(struct job *, int);
		int why;
	} cs[] = {
		{ st_no_secret, WHY_AUTH }, { st_wrong_secret, WHY_AUTH },
		{ st_replay, WHY_AUTH }, { st_rank_zero, WHY_PROTO },
		{ st_garbage, WHY_PROTO }, { st_other_nranks, WHY_PROTO },
		{ st_rank_out_of_range, WHY_PROTO }, { st_peer_at_rank0, WHY_PROTO },
		{ st_old_version, WHY_PROTO }, { st_silent, WHY_LATE },
	};
	size_t i;
	int kind;

	(void)state;
	for (kind = UNIX_ADDR; kind <= TCP_ADDR; kind++)
		for (i = 0; i < DVX_ARRAY_SIZE(cs); i++)
			run_other(kind, cs[i].fn, 1, 0, cs[i].why);
}

/* A flood of junk is refused however it ends; one that trickles is cut off after the
 * handshake's time (2 s) while the job waits for its real ranks. */
static void test_stranger_junk_slow(void **state)
{
	struct job j = { .nranks = 3, .kind = UNIX_ADDR, .slots = 16, .slot_bytes = 256,
			 .skip_rank = -1, .fn = do_basic, .secret = JOB_SECRET,
			 .other = st_junk_flood, .early_mask = 1, .stats_rank = -1 };
	int kind;

	(void)state;
	for (kind = UNIX_ADDR; kind <= TCP_ADDR; kind++) {
		/* rank 0 refuses it on its head (proto), or finds it reset (hang-up) */
		j.kind = kind;
		j.stats_rank = 0;
		j.want_why = WHY_ANY;
		run_job(&j);
	}
	run_other(UNIX_ADDR, st_slow, 1, 0, WHY_SLOW);
}

/* A stranger at rank 1's listener (the mesh's PEER handshake), and impostors that run
 * the library with another secret or none: refused, and the real ranks come after. */
static void test_mesh_and_impostors(void **state)
{
	(void)state;
	run_other(UNIX_ADDR, st_mesh, 0x3, 1, WHY_AUTH_OR_LATE);
	run_other(UNIX_ADDR, imp_wrong, 1, 0, WHY_AUTH);
	run_other(TCP_ADDR, imp_wrong, 1, 0, WHY_AUTH);
	run_other(UNIX_ADDR, imp_open, 1, 0, WHY_AUTH);
}

/* ------------------------------------------------------------------------------------
 * A rogue last rank: it knows the secret and joins as rank n-1 by the documented wire
 * format (checking both acceptors' proofs), then sends rank 0 what a case says. Ranks 0
 * and 1 are the library; rank 0 sees the error the case expects while 0 and 1 go on
 * exchanging messages.
 */

enum { RG_GARBAGE, RG_HUGE, RG_OVER_LIMIT, RG_FLAGS, RG_POISON_LEN, RG_HALF_HEADER,
       RG_HALF_BODY, RG_MISMATCH };
static int rogue_case;

#define RG_TAG 5
#define RG_BYE_TAG 99

static void w_frame(uint8_t *h, uint32_t flags, uint32_t space, uint32_t tag, uint64_t len)
{
	put32(h, W_MAGIC);
	put16(h + 4, W_VERSION);
	put16(h + 6, flags);
	put32(h + 8, space);
	put32(h + 12, tag);
	put64(h + 16, len);
}

/* The handshake as connector on @fd to rank @a (HELLO to 0, PEER to the others). */
static int rg_join(int fd, uint32_t type, uint32_t a, uint32_t c, uint32_t n)
{
	uint8_t na[W_NONCE], rec[256], w[W_HEAD + W_MAC], want[W_MAC], addr[W_ADDR] = { 0 };
	size_t len;
	int ret = read_challenge(fd, a, n, na);

	if (ret)
		return ret;
	len = make_record(rec, type, c, a, n, JOB_SECRET, na, addr);
	CHECK(raw_write(fd, rec, len) == 0);
	CHECK(raw_read(fd, w, sizeof(w)) == sizeof(w));
	CHECK(w_is(w, T_WELCOME, a, n));
	w_proof(want, JOB_SECRET, 1, type, c, a, n, na, rec + W_HEAD, NULL);
	CHECK(memcmp(want, w + W_HEAD, W_MAC) == 0);
	return 0;
}

static int rogue(struct job *j, int ready)
{
	uint32_t n = (uint32_t)j->nranks, me = n - 1, k;
	uint8_t head[W_HEAD], *table = malloc((size_t)n * W_ADDR), f[64], body[100];
	int fd[MAXR], ret;

	CHECK(table && go(ready) == 0);
	/* the rendezvous, the table, then PEER to ranks 1..n-2 */
	fd[0] = raw_connect(j->addr);
	CHECK(fd[0] >= 0);
	ret = rg_join(fd[0], T_HELLO, 0, me, n);
	if (ret)
		return ret;
	CHECK(raw_read(fd[0], head, W_HEAD) == W_HEAD && w_is(head, T_TABLE, 0, n));
	CHECK(raw_read(fd[0], table, (size_t)n * W_ADDR) == (size_t)n * W_ADDR);
	for (k = 1; k < me; k++) {
		const uint8_t *w = table + (size_t)k * W_ADDR;
		char a[160];

		if (get16(w) == 1)
			snprintf(a, sizeof(a), "unix:%.108s", (const char *)w + 20);
		else
			snprintf(a, sizeof(a), "tcp:127.0.0.1:%u", get16(w + 2));
		fd[k] = raw_connect(a);
		CHECK(fd[k] >= 0);
		ret = rg_join(fd[k], T_PEER, k, me, n);
		if (ret)
			return ret;
	}
	/* the case: what goes to rank 0 */
	memset(body, 0x3c, sizeof(body));
	switch (rogue_case) {
	case RG_GARBAGE:
		memset(f, 0x5a, 24);
		CHECK(raw_write(fd[0], f, 24) == 0);
		break;
	case RG_HUGE:		/* 4 GiB announced; nothing follows */
		w_frame(f, 0, 0, RG_TAG, 1ull << 32);
		CHECK(raw_write(fd[0], f, 24) == 0);
		break;
	case RG_OVER_LIMIT:	/* one byte above the job's largest message */
		w_frame(f, 0, 0, RG_TAG, j->max_msg + 1);
		CHECK(raw_write(fd[0], f, 24) == 0);
		break;
	case RG_FLAGS:
		w_frame(f, 0x8000, 0, RG_TAG, 4);
		memcpy(f + 24, body, 4);
		CHECK(raw_write(fd[0], f, 28) == 0);
		break;
	case RG_POISON_LEN:
		w_frame(f, 2, 0, RG_TAG, 4);
		memcpy(f + 24, body, 4);
		CHECK(raw_write(fd[0], f, 28) == 0);
		break;
	case RG_HALF_HEADER:
		w_frame(f, 0, 0, RG_TAG, 4);
		CHECK(raw_write(fd[0], f, 10) == 0);
		break;
	case RG_HALF_BODY:	/* in the first duplicate's space */
		w_frame(f, 0, 1, RG_TAG, sizeof(body));
		memcpy(f + 24, body, 10);
		CHECK(raw_write(fd[0], f, 34) == 0);
		break;
	default:		/* RG_MISMATCH: 8 bytes for a 4-byte receive, then 4 */
		w_frame(f, 0, 0, RG_TAG, 8);
		memcpy(f + 24, body, 8);
		w_frame(f + 32, 0, 0, RG_TAG, 4);
		k = 42;
		memcpy(f + 56, &k, 4);		/* the receiver's byte order */
		CHECK(raw_write(fd[0], f, 60) == 0);
		break;
	}
	/* until rank 0 says it is done (a frame of its own) or closes, then hang up
	 * without a goodbye */
	(void)raw_read(fd[0], f, 24);
	for (k = 0; k < me; k++)
		close(fd[k]);
	free(table);
	return 0;
}

/* Ranks 0 and 1 of a rogue job: rank 0 checks the case, then both trade messages. */
static int do_rogue(struct dvx_bootstrap *bs, int rank, int n)
{
	static uint8_t big[8192];
	uint32_t v = 0, big_len = 0;
	struct dvx_bootstrap d;
	int rg = n - 1;

	CHECK_RET(dvx_bootstrap_dup(bs, &d), 0);
	if (rank == 0) {
		switch (rogue_case) {
		case RG_GARBAGE:
		case RG_HUGE:
		case RG_OVER_LIMIT:
		case RG_FLAGS:
		case RG_POISON_LEN:
			CHECK_RET(dvx_bootstrap_recv(bs, rg, RG_TAG, &v, 4, LONG_NS), -EPROTO);
			/* failed for good */
			CHECK_RET(dvx_bootstrap_recv(bs, rg, RG_TAG, &v, 4, LONG_NS), -EPROTO);
			CHECK_RET(dvx_bootstrap_send(bs, rg, 1, &v, 4, LONG_NS), -EPROTO);
			break;
		case RG_HALF_HEADER:
			/* the header never completes: the receive times out, nothing moved */
			CHECK_RET(dvx_bootstrap_recv(bs, rg, RG_TAG, &v, 4, SHORT_NS), -ETIMEDOUT);
			break;
		case RG_HALF_BODY:
			/* part of the body moved: pending on the duplicate, the context free */
			big_len = 100;
			CHECK_RET(dvx_bootstrap_recv(&d, rg, RG_TAG, big, big_len, SHORT_NS),
				  -ETIMEDOUT);
			CHECK_RET(dvx_bootstrap_barrier(&d, LONG_NS), -EBUSY);
			break;
		default:
			CHECK_RET(dvx_bootstrap_recv(bs, rg, RG_TAG, &v, 4, LONG_NS), -EMSGSIZE);
			CHECK_RET(dvx_bootstrap_recv(bs, rg, RG_TAG, &v, 4, LONG_NS), 0);
			CHECK(v == 42);
			break;
		}
		if (rogue_case == RG_OVER_LIMIT) {
			/* nor does this rank send or take more than its largest message */
			CHECK_RET(dvx_bootstrap_send(bs, 1, 3, big, 4097, LONG_NS), -EMSGSIZE);
			CHECK_RET(dvx_bootstrap_recv(bs, 1, 3, big, 4097, LONG_NS), -EMSGSIZE);
		}
	}
	/* ranks 0 and 1 are not disturbed */
	if (rank == 0) {
		v = 7;
		CHECK_RET(dvx_bootstrap_send(bs, 1, 8, &v, 4, LONG_NS), 0);
		CHECK_RET(dvx_bootstrap_recv(bs, 1, 9, &v, 4, LONG_NS), 0);
		CHECK(v == 8);
		/* done: the rogue may hang up (a send that may find it failed already) */
		(void)dvx_bootstrap_send(bs, rg, RG_BYE_TAG, NULL, 0, LONG_NS);
		if (rogue_case == RG_HALF_HEADER || rogue_case == RG_HALF_BODY || rogue_case ==
		    RG_MISMATCH) {
			/* it hung up without a goodbye: failed, also for the pending receive */
			if (rogue_case == RG_HALF_BODY)
				CHECK_RET(dvx_bootstrap_recv(&d, rg, RG_TAG, big, big_len, LONG_NS),
					  -ECONNRESET);
			CHECK_RET(dvx_bootstrap_recv(bs, rg, RG_TAG, &v, 4, LONG_NS), -ECONNRESET);
		}
	} else if (rank == 1) {
		CHECK_RET(dvx_bootstrap_recv(bs, 0, 8, &v, 4, LONG_NS), 0);
		CHECK(v == 7);
		v = 8;
		CHECK_RET(dvx_bootstrap_send(bs, 0, 9, &v, 4, LONG_NS), 0);
	}
	dvx_bootstrap_fini(&d);
	return 0;
}

/* After set-up: garbage, a 4 GiB length, one above the job's limit, unknown flags, a
 * poison with a length (each fails the rogue at once with -EPROTO, nothing waited
 * for), half a header and half a body followed by silence (timeouts, then -ECONNRESET
 * when it hangs up), a length mismatch (-EMSGSIZE, the stream still framed). */
static void test_rogue_peer(void **state)
{
	struct job j = { .nranks = 3, .kind = UNIX_ADDR, .slots = 16, .slot_bytes = 256,
			 .skip_rank = 2, .fn = do_rogue, .secret = JOB_SECRET, .other = rogue,
			 .early_mask = 0x3, .stats_rank = -1, .max_msg = 4096 };
	int c;

	(void)state;
	for (c = RG_GARBAGE; c <= RG_MISMATCH; c++) {
		rogue_case = c;
		j.kind = c == RG_HUGE ? TCP_ADDR : UNIX_ADDR;
		run_job(&j);
	}
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
	struct dvx_bootstrap_sock_cfg attr = { .addr = "unix:/nonexistent/rv", .rank = 0,
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

	/* the secret and the limits: bad ones are refused before anything is opened */
	{
		static char longer[DVX_BOOTSTRAP_SECRET_MAX + 2];
		struct dvx_bootstrap_sock_stats stats;
		struct dvx_bootstrap_sock_cfg a2 = attr;

		memset(longer, 'k', sizeof(longer) - 1);
		a2.secret = NULL;
		a2.secret_len = 4;			/* a length without bytes */
		assert_int_equal(dvx_bootstrap_sock_init(&bs, &a2, mem, sz), -EINVAL);
		a2.secret = longer;
		a2.secret_len = DVX_BOOTSTRAP_SECRET_MAX + 1;
		assert_int_equal(dvx_bootstrap_sock_init(&bs, &a2, mem, sz), -EINVAL);
		a2.secret_len = 0;			/* from the environment, too long there */
		assert_int_equal(setenv(DVX_BOOTSTRAP_SECRET_ENV, longer, 1), 0);
		assert_int_equal(dvx_bootstrap_sock_init(&bs, &a2, mem, sz), -EINVAL);
		unsetenv(DVX_BOOTSTRAP_SECRET_ENV);
		a2.flags = DVX_BOOTSTRAP_SOCK_F_NEED_SECRET;	/* and no secret anywhere */
		assert_int_equal(dvx_bootstrap_sock_init(&bs, &a2, mem, sz), -EINVAL);
		assert_int_equal(setenv(DVX_BOOTSTRAP_SECRET_ENV, "", 1), 0);	/* empty: none */
		assert_int_equal(dvx_bootstrap_sock_init(&bs, &a2, mem, sz), -EINVAL);
		unsetenv(DVX_BOOTSTRAP_SECRET_ENV);
		a2.flags = 0x80;
		assert_int_equal(dvx_bootstrap_sock_init(&bs, &a2, mem, sz), -EINVAL);
		a2.flags = 0;
		a2.reserved = 1;
		assert_int_equal(dvx_bootstrap_sock_init(&bs, &a2, mem, sz), -EINVAL);
		a2.reserved = 0;
		a2.max_msg_bytes = DVX_BOOTSTRAP_SOCK_MAX_MSG_LIMIT + 1;
		assert_int_equal(dvx_bootstrap_sock_init(&bs, &a2, mem, sz), -EINVAL);
		/* a set-up that fails still reports what it let in and refused: nothing */
		a2.max_msg_bytes = DVX_BOOTSTRAP_SOCK_MAX_MSG_LIMIT;
		a2.secret = "s";
		a2.secret_len = 1;
		a2.flags = DVX_BOOTSTRAP_SOCK_F_NEED_SECRET;
		a2.stats = &stats;
		memset(&stats, 0xee, sizeof(stats));
		assert_int_equal(dvx_bootstrap_sock_init(&bs, &a2, mem, sz), -ETIMEDOUT);
		assert_int_equal(stats.admitted, 0);
		assert_int_equal(stats.refused, 0);
		assert_int_equal(stats.last_refusal, 0);
		/* with the secret in the environment, NEED_SECRET is satisfied */
		assert_int_equal(setenv(DVX_BOOTSTRAP_SECRET_ENV, "from the environment", 1), 0);
		a2.secret_len = 0;
		a2.nranks = 1;
		a2.rank = 0;
		assert_int_equal(dvx_bootstrap_sock_init(&bs, &a2, mem, sz), 0);
		unsetenv(DVX_BOOTSTRAP_SECRET_ENV);
		/* the secret is not kept in the context's memory */
		assert_null(memmem(mem, sz, "from the environment", 20));
		assert_int_equal(dvx_bootstrap_barrier(&bs, 0), 0);
		dvx_bootstrap_fini(&bs);
	}

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
		cmocka_unit_test(test_secret_forms),
		cmocka_unit_test(test_strangers),
		cmocka_unit_test(test_stranger_junk_slow),
		cmocka_unit_test(test_mesh_and_impostors),
		cmocka_unit_test(test_rogue_peer),
	};

	signal(SIGPIPE, SIG_DFL);	/* dvx must never raise it */
	return cmocka_run_group_tests_name("bootstrap-sock", tests, NULL, NULL);
}
