// SPDX-License-Identifier: MIT
/*
 * The sockets adapter's fault sweep (core/bootstrap/sock_*.c through the hal's socket
 * entries): in a 2-rank and a 3-rank group, over UNIX and over TCP on 127.0.0.1, in the
 * open mode and (3 ranks over UNIX, 2 over TCP) with a secret, so that the handshake's
 * random nonces and proofs are swept too, the n-th hal call of one rank (rank 0, then
 * rank 1) fails with -EIO, for every n from 1 until n passes the calls that rank makes
 * in a clean run of dvx_bootstrap_sock_init(), a first allgather, a barrier and
 * dvx_bootstrap_fini(). Every case checks:
 *
 *  - the failing rank's call in which the failure struck (init, allgather or barrier)
 *    returns a negative errno, never 0; a failure in fini is swallowed, and a failure
 *    that did not strike (n landed on the clock, which cannot fail, or past the end)
 *    leaves a clean run: every call of every rank returns 0. The one exception: a
 *    failed close after set-up (of a peer that left or failed: the socket is gone
 *    whatever close answers) changes nothing;
 *  - when it struck in init or the allgather, every other rank ends with an error or
 *    -ETIMEDOUT (a barrier needs every rank), and each call returns within its timeout;
 *  - afterwards no rank holds a socket (dvx_mock_live_total() == 0 after fini or a failed
 *    init) and no UNIX socket file is left.
 *
 * Ranks are threads of this process, each driving a struct dvx_mock of its own (on the
 * real clock) whose hal it passes in dvx_bootstrap_sock_cfg.hal. Threads rather than
 * forked processes (as test_sock.c has): once the ranks are joined, the main thread reads
 * every rank's mock directly (the call log says whether and in which call the failure
 * struck, the live counters whether a socket leaked) with no shared memory or exit-code
 * protocol; the mock is not thread-safe, but each instance is only driven by its own
 * rank's thread; and many groups of one sweep run side by side in one process, which is
 * what keeps the sweep short while failed cases make the other ranks wait out their
 * short timeout. A case whose outcome is wrong where time played a part (a rank timed
 * out, or a call overran its bound) is run again alone with long timeouts, so a slow
 * machine cannot make the test flaky; a leaked socket or file fails at once.
 *
 * Rank threads never call cmocka's asserts; the main thread checks the results.
 */
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../lib/dvx_test.h"

#include <dvx/bootstrap/bootstrap.h>
#include <dvx/testing/mock.h>

#define MAXR 3
#define NSLOTS 4
#define SLOT_BYTES 64
#define MS 1000000ull
#define SHORT_NS (300 * MS)		/* init and collectives in the sweep */
#define LONG_NS (8000 * MS)		/* a case run again alone */
#define SLACK_NS (3000 * MS)		/* how far past its timeout a call may return */
#define PAR 16				/* groups run side by side */
#define JOIN_S 60			/* a rank not back by then hangs: the test fails */
#define NO_CALL 1			/* a result slot of a call not made */

enum { UNIX_ADDR, TCP_ADDR };

struct rank_res {
	int init, ag, bar;		/* results, NO_CALL when not called */
	uint64_t t_init, t_ag, t_bar;	/* how long each took */
	uint32_t seq_init, seq_ag, seq_bar, seq_end;	/* the mock's calls after each */
	int live;			/* dvx_mock_live_total() at the end */
	int fired;			/* the failure struck */
	uint32_t fired_seq;		/* in this rank's call number fired_seq */
	uint16_t fired_op;		/* of this op */
	uint32_t op_calls[DVX_MOCK_OP_COUNT];	/* calls per op */
	uint8_t ag_ok;			/* the allgather's blocks were right */
};

struct group {
	int nranks;
	int kind;
	int fail_rank;			/* -1: a clean run */
	uint32_t fail_n;		/* that rank's n-th call fails, or */
	uint16_t fail_op;		/* its first call of this op (with fail_n 0) */
	uint8_t fail_op_done;
	uint8_t late_root;		/* rank 0 starts late: the others retry their connect */
	const char *secret;		/* the job's secret (attr), NULL: the open mode */
	uint64_t timeout_ns;
	char addr[128];
	char base[96];			/* UNIX: rank 0's path */
	int probe_fd;			/* TCP: holds the port while the group runs */
	struct dvx_mock *m[MAXR];
	void *mem[MAXR];
	struct rank_res res[MAXR];
	int rank_of[MAXR];
	pthread_t th[MAXR];
};

static char dir[64];
static unsigned case_id;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* the check hook of the failing rank in an op case: its first call of the op fails */
static int fail_first(void *arg, const struct dvx_mock_call *c)
{
	struct group *g = arg;

	if (c->op != g->fail_op || g->fail_op_done)
		return 0;
	g->fail_op_done = 1;
	return -EIO;
}

static void *rank_main(void *p)
{
	int r = *(int *)p;
	struct group *g = (struct group *)(void *)((char *)p - offsetof(struct group, rank_of) -
						   (size_t)r * sizeof(int));
	struct dvx_bootstrap_sock_cfg attr = {
		.addr = g->addr, .rank = r, .nranks = g->nranks, .max_unexpected = NSLOTS,
		.slot_bytes = SLOT_BYTES, .timeout_ns = g->timeout_ns,
		.secret = g->secret, .secret_len = g->secret ? strlen(g->secret) : 0,
	};
	size_t sz = dvx_bootstrap_sock_mem_size(g->nranks, NSLOTS, SLOT_BYTES);
	struct rank_res *res = &g->res[r];
	struct dvx_mock *m = g->m[r];
	const struct dvx_mock_call *c;
	uint32_t in = 100u + (uint32_t)r, out[MAXR];
	struct dvx_bootstrap bs;
	uint64_t t;
	uint32_t s;
	int i;

	dvx_mock_init(m);
	m->now_real = 1;
	if (r == g->fail_rank && g->fail_n)
		dvx_mock_fail_at(m, g->fail_n, -EIO);
	else if (r == g->fail_rank)
		dvx_mock_set_check(m, fail_first, g);
	attr.hal = dvx_mock_hal(m);
	res->init = res->ag = res->bar = NO_CALL;
	if (r == 0 && g->late_root)
		usleep(50000);

	t = mono_ns();
	res->init = dvx_bootstrap_sock_init(&bs, &attr, g->mem[r], sz);
	res->t_init = mono_ns() - t;
	res->seq_init = dvx_mock_calls(m);
	res->seq_ag = res->seq_bar = res->seq_init;
	if (!res->init) {
		t = mono_ns();
		res->ag = dvx_bootstrap_allgather(&bs, &in, out, sizeof(in), g->timeout_ns);
		res->t_ag = mono_ns() - t;
		res->seq_ag = res->seq_bar = dvx_mock_calls(m);
		if (!res->ag) {
			res->ag_ok = 1;
			for (i = 0; i < g->nranks; i++)
				if (out[i] != 100u + (uint32_t)i)
					res->ag_ok = 0;
			t = mono_ns();
			res->bar = dvx_bootstrap_barrier(&bs, g->timeout_ns);
			res->t_bar = mono_ns() - t;
			res->seq_bar = dvx_mock_calls(m);
		}
		dvx_bootstrap_fini(&bs);
	}
	res->seq_end = dvx_mock_calls(m);
	res->live = dvx_mock_live_total(m);
	for (i = 0; i < DVX_MOCK_OP_COUNT; i++)
		res->op_calls[i] = dvx_mock_count(m, (enum dvx_mock_op)i);
	for (s = 1; s <= res->seq_end && !res->fired; s++) {
		c = dvx_mock_call_at(m, s);
		if (c && c->injected) {
			res->fired = 1;
			res->fired_seq = s;
			res->fired_op = c->op;
		}
	}
	return NULL;
}

/* A port on 127.0.0.1 held by a bound (not listening) SO_REUSEADDR socket: rank 0 can
 * listen there too, nobody else gets it while the group runs. */
static int reserve_port(int *fd)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t l = sizeof(a);
	int one = 1;

	*fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*fd < 0)
		return -1;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (setsockopt(*fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(*fd, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(*fd, (struct sockaddr *)&a, &l))
		return -1;
	return ntohs(a.sin_port);
}

/* the secret of the configuration under way (NULL: the open mode) */
static const char *sweep_secret;

static void group_prepare(struct group *g, int nranks, int kind, int fail_rank, uint32_t n,
			  uint16_t op, uint64_t timeout_ns)
{
	size_t sz = DVX_BOOTSTRAP_SOCK_MEM_SIZE(MAXR, NSLOTS, SLOT_BYTES);
	int i, port;

	g->nranks = nranks;
	g->secret = sweep_secret;
	g->kind = kind;
	g->fail_rank = fail_rank;
	g->fail_n = n;
	g->fail_op = op;
	g->fail_op_done = 0;
	/* a connect retried after a pause, to fail that pause */
	g->late_root = op == DVX_MOCK_OP_SLEEP && fail_rank > 0;
	g->timeout_ns = timeout_ns;
	g->probe_fd = -1;
	memset(g->res, 0, sizeof(g->res));
	for (i = 0; i < nranks; i++) {
		if (!g->m[i])
			g->m[i] = calloc(1, sizeof(struct dvx_mock));
		if (!g->mem[i])
			g->mem[i] = aligned_alloc(64, DVX_ALIGN_UP(sz, 64));
		assert_non_null(g->m[i]);
		assert_non_null(g->mem[i]);
		g->rank_of[i] = i;
	}
	if (kind == UNIX_ADDR) {
		snprintf(g->base, sizeof(g->base), "%s/c%u", dir, case_id++);
		snprintf(g->addr, sizeof(g->addr), "unix:%s", g->base);
	} else {
		port = reserve_port(&g->probe_fd);
		assert_true(port > 0);
		snprintf(g->addr, sizeof(g->addr), "tcp:127.0.0.1:%d", port);
	}
}

static void group_start(struct group *g)
{
	int i;

	for (i = 0; i < g->nranks; i++)
		assert_int_equal(pthread_create(&g->th[i], NULL, rank_main, &g->rank_of[i]), 0);
}

static void group_join(struct group *g)
{
	struct timespec until;
	int i;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += JOIN_S;
	for (i = 0; i < g->nranks; i++) {
		if (pthread_timedjoin_np(g->th[i], NULL, &until)) {
			fprintf(stderr, "%s: rank %d hangs (fail rank %d, call %u, op %s)\n",
				g->addr, i, g->fail_rank, g->fail_n, dvx_mock_op_name(g->fail_op));
			fail();
		}
	}
	if (g->probe_fd >= 0)
		close(g->probe_fd);
	g->probe_fd = -1;
}

static void group_free(struct group *g)
{
	int i;

	for (i = 0; i < MAXR; i++) {
		free(g->m[i]);
		free(g->mem[i]);
		g->m[i] = NULL;
		g->mem[i] = NULL;
	}
}

/* Socket files of the group that are left (rank 0's and the listeners "<path>.<r>"),
 * removed. */
static int files_left(const struct group *g)
{
	char p[128];
	int i, left = 0;

	if (g->kind != UNIX_ADDR)
		return 0;
	for (i = 0; i < g->nranks; i++) {
		if (i)
			snprintf(p, sizeof(p), "%s.%d", g->base, i);
		else
			snprintf(p, sizeof(p), "%s", g->base);
		if (access(p, F_OK) == 0) {
			unlink(p);
			left++;
		}
	}
	return left;
}

/* The last call a rank made: its result (0 when all succeeded). */
static int last_result(const struct rank_res *res)
{
	if (res->init)
		return res->init;
	if (res->ag)
		return res->ag;
	return res->bar;
}

/* Was time part of the outcome: a rank timed out, or a call took longer than its bound? */
static int slow(const struct group *g)
{
	uint64_t lim = g->timeout_ns + SLACK_NS;
	int i;

	for (i = 0; i < g->nranks; i++) {
		const struct rank_res *r = &g->res[i];

		if (r->init == -ETIMEDOUT || r->ag == -ETIMEDOUT || r->bar == -ETIMEDOUT ||
		    r->t_init > lim || r->t_ag > lim || r->t_bar > lim)
			return 1;
	}
	return 0;
}

#define VERIFY(cond) \
	do { \
		if (!(cond)) { \
			snprintf(why, whylen, "line %d: %s", __LINE__, #cond); \
			return 0; \
		} \
	} while (0)

/* Nothing is left behind, whatever happened: no socket, no socket file. 1 yes; 0 no,
 * with the reason in @why. */
static int verify_clean(struct group *g, char *why, size_t whylen)
{
	const struct rank_res *f = g->fail_rank >= 0 ? &g->res[g->fail_rank] : NULL;
	int i;

	for (i = 0; i < g->nranks; i++) {
		VERIFY(g->res[i].live == 0);
		VERIFY(g->res[i].seq_end < DVX_MOCK_LOG_MAX);
	}
	/* the one file a failed unlink could not remove */
	if (f && f->fired && f->fired_op == DVX_MOCK_OP_SOCK_UNLINK)
		VERIFY(files_left(g) <= 1);
	else
		VERIFY(files_left(g) == 0);
	return 1;
}

/* Do the results of @g hold? 1 yes; 0 no, with the reason in @why. */
static int verify(struct group *g, char *why, size_t whylen)
{
	const struct rank_res *f = g->fail_rank >= 0 ? &g->res[g->fail_rank] : NULL;
	uint64_t lim = g->timeout_ns + SLACK_NS;
	int i, phase = 0;	/* where it struck: 0 nowhere, 1 init, 2 ag, 3 barrier, 4 fini */

	if (f && f->fired) {
		if (f->fired_seq <= f->seq_init)
			phase = 1;
		else if (f->fired_seq <= f->seq_ag)
			phase = 2;
		else if (f->fired_seq <= f->seq_bar)
			phase = 3;
		else
			phase = 4;
	}
	for (i = 0; i < g->nranks; i++) {
		const struct rank_res *r = &g->res[i];

		VERIFY(r->init <= 0 && (r->ag <= 0 || r->ag == NO_CALL) &&
		       (r->bar <= 0 || r->bar == NO_CALL));
		VERIFY(r->t_init <= lim && r->t_ag <= lim && r->t_bar <= lim);
		/*
		 * Once the mesh is up, the adapter closes a socket only for a peer that
		 * left or failed; the socket is gone whatever close answers, so its failure
		 * changes nothing (in set-up it does fail the init).
		 */
		if (phase >= 2 && f->fired_op == DVX_MOCK_OP_SOCK_CLOSE)
			continue;
		if (phase == 0 || (phase == 4 && r == f)) {
			VERIFY(r->init == 0 && r->ag == 0 && r->ag_ok && r->bar == 0);
			continue;
		}
		if (phase == 4) {
			/* without its goodbye the failing rank looks crashed right after the
			 * barrier, which may fail the others' copy (docs/bootstrap.md) */
			VERIFY(r->init == 0 && r->ag == 0 && r->ag_ok);
			continue;
		}
		if (r == f) {
			if (phase == 1)
				VERIFY(r->init < 0);
			else if (phase == 2)
				VERIFY(r->init == 0 && r->ag < 0);
			else
				VERIFY(r->init == 0 && r->ag == 0 && r->bar < 0);
			continue;
		}
		if (phase <= 2)
			VERIFY(last_result(r) < 0);	/* a barrier needs every rank */
		else
			VERIFY(r->init == 0 && r->ag == 0 && r->ag_ok);
	}
	return 1;
}

/* Both checks; a failure of the first is final, of the second maybe a slow machine. */
static int check(struct group *g, char *why, size_t whylen, int *hard)
{
	*hard = !verify_clean(g, why, whylen);
	return !*hard && verify(g, why, whylen);
}

static void report(const struct group *g, const char *why)
{
	const struct rank_res *f = g->fail_rank >= 0 ? &g->res[g->fail_rank] : NULL;
	int i;

	fprintf(stderr, "%s, %d ranks, rank %d fails call %u / first %s (struck: %s %u): %s\n",
		g->addr, g->nranks, g->fail_rank, g->fail_n, dvx_mock_op_name(g->fail_op),
		f && f->fired ? dvx_mock_op_name(f->fired_op) : "no", f ? f->fired_seq : 0, why);
	for (i = 0; i < g->nranks; i++)
		fprintf(stderr, "  rank %d: init %d (%u calls, %llu ms) ag %d (%u) bar %d (%u) "
			"end %u live %d\n", i, g->res[i].init, g->res[i].seq_init,
			(unsigned long long)(g->res[i].t_init / MS), g->res[i].ag, g->res[i].seq_ag,
			g->res[i].bar, g->res[i].seq_bar, g->res[i].seq_end, g->res[i].live);
}

/* One clean run alone: how many calls each rank makes, in all and per op. */
static void clean_run(int nranks, int kind, struct rank_res *out)
{
	struct group g = { 0 };
	char why[160];
	int hard;

	group_prepare(&g, nranks, kind, -1, 0, 0, LONG_NS);
	group_start(&g);
	group_join(&g);
	if (!check(&g, why, sizeof(why), &hard)) {
		report(&g, why);
		fail();
	}
	memcpy(out, g.res, sizeof(g.res));
	group_free(&g);
}

/* One case of a sweep: rank @fr's call @n fails, or (@n 0) its first call of @op. */
struct fcase {
	int fr;
	uint32_t n;
	uint16_t op;
};

/* Run @count cases, PAR groups at a time; count what struck, by op, in @ops. Returns
 * the cases whose failure struck. */
static unsigned run_cases(int nranks, int kind, const struct fcase *cs, unsigned count,
			  unsigned *ops)
{
	static struct group gs[PAR];
	unsigned struck = 0, next = 0;
	char why[160];
	int k, batch, hard;

	while (next < count) {
		for (batch = 0; batch < PAR && next < count; batch++, next++) {
			group_prepare(&gs[batch], nranks, kind, cs[next].fr, cs[next].n,
				      cs[next].op, SHORT_NS);
			group_start(&gs[batch]);
		}
		for (k = 0; k < batch; k++)
			group_join(&gs[k]);
		for (k = 0; k < batch; k++) {
			struct group *g = &gs[k];
			const struct rank_res *f = &g->res[g->fail_rank];

			if (!check(g, why, sizeof(why), &hard)) {
				if (hard || !slow(g)) {
					report(g, why);
					fail();
				}
				/* a loaded machine? the same case alone, with time to spare */
				group_prepare(g, nranks, kind, g->fail_rank, g->fail_n, g->fail_op,
					      LONG_NS);
				group_start(g);
				group_join(g);
				if (!check(g, why, sizeof(why), &hard)) {
					report(g, why);
					fail();
				}
			}
			struck += f->fired;
			if (f->fired)
				ops[f->fired_op]++;
		}
	}
	for (k = 0; k < PAR; k++)
		group_free(&gs[k]);
	return struck;
}

/* the calls the adapter makes that can fail (the clock cannot) */
static const uint16_t sock_ops[] = {
	DVX_MOCK_OP_SOCK_LISTEN, DVX_MOCK_OP_SOCK_CONNECT, DVX_MOCK_OP_SOCK_ERROR,
	DVX_MOCK_OP_SOCK_ACCEPT, DVX_MOCK_OP_SOCK_NAME, DVX_MOCK_OP_SOCK_SEND,
	DVX_MOCK_OP_SOCK_RECV, DVX_MOCK_OP_SOCK_POLL, DVX_MOCK_OP_SOCK_CLOSE,
	DVX_MOCK_OP_SOCK_UNLINK, DVX_MOCK_OP_SLEEP, DVX_MOCK_OP_RANDOM_BYTES,
};

/*
 * Every rank of the group in turn (rank 0 the root; 1 a middle rank, or the last one;
 * 2 the last, which also connects to a rank other than 0): its n-th call fails, for
 * every n until n passes the calls of the longer of two clean runs. The calls of a
 * run depend a little on timing (how often a poll or a connect comes back empty), so
 * the sweep is followed by one case per kind of call a clean run makes on that rank:
 * its first call of that kind fails (a rank > 0 also gets its first pause between two
 * connects failed, with rank 0 starting late). Every kind must have struck.
 */
static void run_config(int nranks, int kind)
{
	static struct fcase cs[1024];
	struct rank_res clean[2][MAXR];
	unsigned ops[DVX_MOCK_OP_COUNT] = { 0 }, count, struck, kinds, i;
	uint64_t t = mono_ns();
	uint32_t upto, n;
	char list[256];
	size_t l = 0;
	int fr, op;

	clean_run(nranks, kind, clean[0]);
	clean_run(nranks, kind, clean[1]);
	for (fr = 0; fr < nranks; fr++) {
		const struct rank_res *a = &clean[0][fr], *b = &clean[1][fr];

		upto = (a->seq_end > b->seq_end ? a->seq_end : b->seq_end) + 3;
		count = 0;
		for (n = 1; n <= upto && count < DVX_ARRAY_SIZE(cs); n++)
			cs[count++] = (struct fcase){ .fr = fr, .n = n };
		struck = run_cases(nranks, kind, cs, count, ops);
		count = 0;
		for (i = 0; i < DVX_ARRAY_SIZE(sock_ops); i++)
			if (a->op_calls[sock_ops[i]] || b->op_calls[sock_ops[i]] ||
			    (sock_ops[i] == DVX_MOCK_OP_SLEEP && fr > 0))
				cs[count++] = (struct fcase){ .fr = fr, .op = sock_ops[i] };
		kinds = count;
		struck += run_cases(nranks, kind, cs, count, ops);
		print_message("%d ranks over %s%s, rank %d: calls 1..%u failed in turn (clean "
			      "runs make %u and %u), then the first call of each of %u kinds; %u "
			      "struck\n", nranks, kind == UNIX_ADDR ? "unix" : "tcp",
			      sweep_secret ? " with a secret" : "", fr, upto, a->seq_end,
			      b->seq_end, kinds, struck);
	}
	list[0] = 0;
	for (op = 0; op < DVX_MOCK_OP_COUNT && l < sizeof(list) - 32; op++)
		if (ops[op])
			l += (size_t)snprintf(list + l, sizeof(list) - l, " %s:%u",
					      dvx_mock_op_name((enum dvx_mock_op)op), ops[op]);
	print_message("  struck:%s; %.1f s\n", list, (double)(mono_ns() - t) / 1e9);
	for (i = 0; i < DVX_ARRAY_SIZE(sock_ops); i++) {
		for (fr = 0; fr < nranks; fr++)
			if (clean[0][fr].op_calls[sock_ops[i]] ||
			    clean[1][fr].op_calls[sock_ops[i]])
				break;
		if ((fr < nranks || sock_ops[i] == DVX_MOCK_OP_SLEEP) && !ops[sock_ops[i]]) {
			fprintf(stderr, "%s was never failed\n", dvx_mock_op_name(sock_ops[i]));
			fail();
		}
	}
}

static void test_two_unix(void **state)
{
	(void)state;
	run_config(2, UNIX_ADDR);
}

static void test_three_unix(void **state)
{
	(void)state;
	run_config(3, UNIX_ADDR);
}

static void test_two_tcp(void **state)
{
	(void)state;
	run_config(2, TCP_ADDR);
}

static void test_three_tcp(void **state)
{
	(void)state;
	run_config(3, TCP_ADDR);
}

/* With a secret: every rank draws nonces (random_bytes) and proves itself both ways. */
static void test_three_unix_secret(void **state)
{
	(void)state;
	sweep_secret = "the sweep's secret";
	run_config(3, UNIX_ADDR);
	sweep_secret = NULL;
}

static void test_two_tcp_secret(void **state)
{
	(void)state;
	sweep_secret = "the sweep's secret";
	run_config(2, TCP_ADDR);
	sweep_secret = NULL;
}

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/dvx-bsf-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return rmdir(dir);	/* fails when a socket file is left */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_unix),
		cmocka_unit_test(test_three_unix),
		cmocka_unit_test(test_two_tcp),
		cmocka_unit_test(test_three_tcp),
		cmocka_unit_test(test_three_unix_secret),
		cmocka_unit_test(test_two_tcp_secret),
	};

	return cmocka_run_group_tests_name("bootstrap-sock-fault", tests, setup, teardown);
}
