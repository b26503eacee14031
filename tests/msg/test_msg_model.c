// SPDX-License-Identifier: MIT
/*
 * tests/msg/test_msg_model.c - the messaging layer against a reference model: seeded
 * random sequences of connect, accept, irecv, isend, test, progress and close over
 * many communicators between three contexts (closes of idle connections and of
 * connections with work in flight among them), driven from one thread on the software
 * NIC (stepped, so a seed replays exactly), each call's result checked against what
 * the model expects (which buffer a send matches, sizes, bytes, -EMSGSIZE on both
 * ends) and the invariant checker (dvx_msg_check()) run after every step. Every seed
 * runs with another configuration: sharing off or 1, 2, 4 groups, 1, 2 or 4 QPs, depth
 * multiplier 1 or 2. DVX_MSG_MODEL_SEED=n runs one seed, DVX_MSG_MODEL_STEPS=n more
 * steps (make soak-style runs); a failure prints the seed and step to replay.
 */
#include <errno.h>
#include <inttypes.h>

#include "../lib/dvx_test.h"
#include "mworld.h"
#include "../../core/msg/msg_priv.h"

#define NR 3		/* contexts */
#define MAXP 16		/* connections alive at once */
#define REQS 4		/* max_reqs */
#define RECVS 4		/* max_recvs */
#define BUF 2048	/* bytes per buffer */
#define T_OUT (10 * MW_SEC)

struct ment {		/* one buffer of a posted irecv */
	uint32_t tag;
	uint32_t size;
	int matched;	/* a send took it */
	int toobig;	/* that send was larger than size */
	uint32_t len;	/* bytes it sent */
	uint32_t seed;	/* their pattern */
};

struct mslot {		/* one posted irecv */
	struct dvx_msg_req *req;
	int n;
	int matched;	/* buffers taken */
	struct ment e[RECVS];
};

struct msend {
	struct dvx_msg_req *req;
	uint32_t len;
};

struct mpair {
	int live;
	int from, to;
	struct dvx_msg_comm *s, *r;
	/* posted irecvs, oldest first (the sender matches in this order) */
	struct mslot slot[REQS];
	int head, count;	/* ring of posted, not yet completed irecvs */
	uint32_t rpos;		/* irecvs ever posted: the receiver's request index */
	struct msend send[REQS * RECVS];
	int nsend;
};

struct model {
	struct mw w;
	struct mpair p[MAXP];
	uint64_t rng;
	uint32_t seed, step;
	uint64_t ops[8];
};

static uint32_t rnd(struct model *m, uint32_t n)
{
	m->rng ^= m->rng << 13;
	m->rng ^= m->rng >> 7;
	m->rng ^= m->rng << 17;
	return n ? (uint32_t)(m->rng % n) : 0;
}

static uint8_t pat(uint32_t seed, uint32_t i)
{
	return (uint8_t)(seed * 29u + i * 13u + 5u);
}

#define MFAIL(m, ...)                                                                 \
	do {                                                                          \
		fprintf(stderr, "model seed %u step %u: ", (m)->seed, (m)->step);     \
		fprintf(stderr, __VA_ARGS__);                                         \
		fprintf(stderr, "\n");                                                \
		fail();                                                               \
	} while (0)

/* where a pair's receive buffer (slot position, buffer) and send buffer live */
static uint8_t *rbuf(struct model *m, int pi, uint32_t pos, int b)
{
	struct mpair *p = &m->p[pi];

	return m->w.r[p->to].buf + (((uint64_t)pi * REQS + pos % REQS) * RECVS + (uint64_t)b) * BUF;
}

static uint8_t *sbuf(struct model *m, int pi, int k)
{
	struct mpair *p = &m->p[pi];

	return m->w.r[p->from].buf + (uint64_t)MAXP * REQS * RECVS * BUF +
	       ((uint64_t)pi * REQS * RECVS + (uint64_t)k) * BUF;
}

static void op_connect(struct model *m)
{
	int i, a = (int)rnd(m, NR), b = (int)((a + 1 + rnd(m, NR - 1)) % NR);
	struct mpair *p = NULL;
	uint32_t nqps = 1 + rnd(m, m->w.cfg.nqps);

	for (i = 0; i < MAXP; i++)
		if (!m->p[i].live) {
			p = &m->p[i];
			break;
		}
	if (!p)
		return;
	memset(p, 0, sizeof(*p));
	if (mw_pair(&m->w, a, b, nqps, &p->s, &p->r))
		MFAIL(m, "connect %d -> %d failed", a, b);
	p->live = 1;
	p->from = a;
	p->to = b;
	m->ops[0]++;
}

static void op_irecv(struct model *m, int pi)
{
	struct mpair *p = &m->p[pi];
	struct mslot *sl;
	void *bufs[RECVS];
	size_t sizes[RECVS];
	uint32_t tags[RECVS];
	struct dvx_mr *mrs[RECVS];
	struct dvx_msg_req *q = NULL;
	int n = 1 + (int)rnd(m, RECVS), b, err;

	if (p->count == REQS)
		return;
	sl = &p->slot[(p->head + p->count) % REQS];
	memset(sl, 0, sizeof(*sl));
	for (b = 0; b < n; b++) {
		sl->e[b].tag = rnd(m, 3);	/* repeats: the first unmatched one wins */
		sl->e[b].size = rnd(m, 4) ? rnd(m, BUF + 1) : 0;
		bufs[b] = rbuf(m, pi, p->rpos, b);
		sizes[b] = sl->e[b].size;
		tags[b] = sl->e[b].tag;
		mrs[b] = &m->w.r[p->to].mr;
		memset(bufs[b], 0xa5, BUF);
	}
	err = dvx_msg_irecv(p->r, n, bufs, sizes, tags, mrs, &q);
	if (err)
		MFAIL(m, "irecv = %d", err);
	if (!q)
		return;		/* no room now: fine, the model posts nothing */
	sl->req = q;
	sl->n = n;
	p->count++;
	p->rpos++;
	m->ops[1]++;
}

/* the buffer a send with @tag must match: the oldest slot not fully matched, its first
 * unmatched buffer with the tag; NULL when that slot has none */
static struct ment *expect_match(struct mpair *p, uint32_t tag, struct mslot **slp)
{
	int i, b;

	for (i = 0; i < p->count; i++) {
		struct mslot *sl = &p->slot[(p->head + i) % REQS];

		if (sl->matched == sl->n)
			continue;
		for (b = 0; b < sl->n; b++)
			if (!sl->e[b].matched && sl->e[b].tag == tag) {
				*slp = sl;
				return &sl->e[b];
			}
		return NULL;	/* only the oldest unfinished slot can match */
	}
	return NULL;
}

static void op_isend(struct model *m, int pi)
{
	struct mpair *p = &m->p[pi];
	struct mslot *sl = NULL;
	struct ment *e;
	struct dvx_msg_req *q = NULL;
	uint32_t tag = rnd(m, 3), len, seed = m->step, i;
	uint8_t *src;
	int k, err;

	if (p->nsend == REQS * RECVS)
		return;
	e = expect_match(p, tag, &sl);
	len = e && !rnd(m, 8) ? e->size + 1 + rnd(m, 64) : rnd(m, (e ? e->size : BUF) + 1);
	if (len > BUF)
		len = BUF;
	for (k = 0; k < REQS * RECVS; k++)
		if (!p->send[k].req)
			break;
	src = sbuf(m, pi, k);
	for (i = 0; i < len; i++)
		src[i] = pat(seed, i);
	err = dvx_msg_isend(p->s, src, len, tag, &m->w.r[p->from].mr, &q);
	if (!e) {
		if (err || q)
			MFAIL(m, "isend of tag %u matched nothing in the model, got %d/%p", tag, err,
			      (void *)q);
		return;
	}
	if (!err && !q)
		return;	/* the clear-to-send has not arrived yet: fine */
	if (e->size < len) {
		if (err != -EMSGSIZE || q)
			MFAIL(m, "isend of %u into %u: %d, want -EMSGSIZE", len, e->size, err);
		e->toobig = 1;
	} else if (err || !q) {
		MFAIL(m, "isend = %d", err);
	} else {
		p->send[k].req = q;
		p->send[k].len = len;
		p->nsend++;
	}
	e->matched = 1;
	e->len = len;
	e->seed = seed;
	sl->matched++;
	m->ops[2]++;
}

static void op_test(struct model *m, int pi)
{
	struct mpair *p = &m->p[pi];
	size_t sizes[RECVS];
	int done = 0, err, k, b;

	/* a send */
	k = (int)rnd(m, REQS * RECVS);
	if (p->send[k].req) {
		err = dvx_msg_test(p->send[k].req, &done, sizes);
		if (err)
			MFAIL(m, "test of a send = %d", err);
		if (done) {
			if (sizes[0] != p->send[k].len)
				MFAIL(m, "send size %zu, want %u", sizes[0], p->send[k].len);
			p->send[k].req = NULL;
			p->nsend--;
			m->ops[3]++;
		}
	}
	/* the oldest receive (requests complete in any order; testing the oldest keeps
	 * the model's ring simple) */
	if (p->count) {
		struct mslot *sl = &p->slot[p->head];
		int want_err = 0;

		err = dvx_msg_test(sl->req, &done, sizes);
		if (!done) {
			if (err)
				MFAIL(m, "test of a receive = %d, not done", err);
			return;
		}
		if (sl->matched != sl->n)
			MFAIL(m, "a receive done with %d of %d buffers sent", sl->matched, sl->n);
		for (b = 0; b < sl->n; b++) {
			const uint8_t *d = rbuf(m, pi, p->rpos - (uint32_t)p->count, b);
			uint32_t i;

			if (sl->e[b].toobig) {
				want_err = -EMSGSIZE;
				if (sizes[b] != 0)
					MFAIL(m, "a too-big buffer reports %zu", sizes[b]);
				continue;
			}
			if (sizes[b] != sl->e[b].len)
				MFAIL(m, "buffer %d: %zu bytes, want %u", b, sizes[b], sl->e[b].len);
			for (i = 0; i < sl->e[b].len; i++)
				if (d[i] != pat(sl->e[b].seed, i))
					MFAIL(m, "buffer %d byte %u", b, i);
			if (sl->e[b].len < BUF && d[sl->e[b].len] != 0xa5)
				MFAIL(m, "buffer %d: a byte past the message changed", b);
		}
		if (err != want_err)
			MFAIL(m, "receive = %d, want %d", err, want_err);
		p->head = (p->head + 1) % REQS;
		p->count--;
		m->ops[4]++;
	}
}

static void op_close(struct model *m, int pi)
{
	struct mpair *p = &m->p[pi];

	if (p->count || p->nsend)
		return;		/* closes of idle connections only: the model stays exact */
	if (rnd(m, 2)) {
		if (dvx_msg_close(p->s) || dvx_msg_close(p->r))
			MFAIL(m, "close");
	} else {
		if (dvx_msg_close(p->r) || dvx_msg_close(p->s))
			MFAIL(m, "close");
	}
	p->live = 0;
	m->ops[5]++;
}

/* close a connection whatever it has in flight (its requests are gone with it), then
 * drive both contexts until neither has a closing comm left: the closes must finish */
static void op_close_busy(struct model *m, int pi)
{
	struct mpair *p = &m->p[pi];
	struct dvx_msg_stats a, b;
	uint64_t end = mw_now() + T_OUT;

	if (rnd(m, 2)) {
		if (dvx_msg_close(p->s) || dvx_msg_close(p->r))
			MFAIL(m, "close");
	} else {
		if (dvx_msg_close(p->r) || dvx_msg_close(p->s))
			MFAIL(m, "close");
	}
	p->live = 0;
	do {
		mw_progress(&m->w);
		dvx_msg_get_stats(&m->w.r[p->from].m, &a);
		dvx_msg_get_stats(&m->w.r[p->to].m, &b);
		if (mw_now() > end) {
			int rr, i;
			for (rr = 0; rr < NR; rr++) {
				struct dvx_msg_state *st = m->w.r[rr].m.st;
				for (i = 0; i < (int)st->cfg.max_comms; i++) {
					struct dvx_msg_comm *c = &st->comms[i];
					if (c->state != MSG_CS_CLOSING) continue;
					fprintf(stderr, "rank %d comm %x kind %u wqe_out %u rx %u %u %u %u todo %u err %d marked %u set %u head %llu peer %x\n", rr, c->id, c->kind, c->wqe_out, c->rx_out[0], c->rx_out[1], c->rx_out[2], c->rx_out[3], c->todo, c->err, c->marked, c->set, (unsigned long long)c->head, c->peer_comm);
				}
			}
			MFAIL(m, "closes of a busy connection did not finish: %u/%u closing",
			      a.closing, b.closing);
		}
	} while (a.closing || b.closing);
	m->ops[6]++;
}

static void run_seed(uint32_t seed, uint32_t steps)
{
	static struct model m;
	struct dvx_msg_cfg c;
	static const uint32_t groups[] = { 0, 1, 2, 4 }, qps[] = { 1, 2, 4 };
	int i;

	memset(&m, 0, sizeof(m));
	m.seed = seed;
	m.rng = 0x9e3779b97f4a7c15ull ^ ((uint64_t)seed * 0x100000001b3ull);
	memset(&c, 0, sizeof(c));
	c.max_comms = 3 * MAXP;
	c.max_reqs = REQS;
	c.max_recvs = RECVS;
	c.groups = groups[seed % 4];
	c.nqps = qps[(seed / 4) % 3];
	c.depth_mult = 1 + (seed / 12) % 2;
	c.split_bytes = 512;
	c.max_shared_sets = c.groups ? 2 * NR * c.groups : 0;
	c.max_private_sets = 2 * MAXP;
	mw_fifo_only = 1;	/* the model is the FIFO clear-to-send's (the sender matches) */
	assert_int_equal(mw_init(&m.w, NR, &c, 2ull * MAXP * REQS * RECVS * BUF, 0), 0);
	mw_fifo_only = 0;
	for (m.step = 0; m.step < steps; m.step++) {
		uint32_t op = rnd(&m, 100);
		int pi = (int)rnd(&m, MAXP);

		if (op < 8 || !m.p[pi].live)
			op_connect(&m);
		else if (op < 30)
			op_irecv(&m, pi);
		else if (op < 55)
			op_isend(&m, pi);
		else if (op < 85)
			op_test(&m, pi);
		else if (op < 94)
			mw_progress(&m.w);
		else if (op < 98)
			op_close(&m, pi);
		else
			op_close_busy(&m, pi);
		if (mw_check(&m.w))
			MFAIL(&m, "invariants");
	}
	/* drain: everything posted completes and is checked */
	for (i = 0; i < MAXP; i++) {
		struct mpair *p = &m.p[i];
		uint64_t end = mw_now() + T_OUT;

		if (!p->live)
			continue;
		while (p->count || p->nsend) {
			uint32_t t;

			/* the receives of every slot get their sends */
			for (t = 0; t < 3; t++) {
				struct mslot *sl = NULL;

				if (expect_match(p, t, &sl))
					op_isend(&m, i);
			}
			op_test(&m, i);
			mw_progress(&m.w);
			if (mw_now() > end)
				MFAIL(&m, "drain of connection %d: %d receives, %d sends left", i,
				      p->count, p->nsend);
		}
		op_close(&m, i);
	}
	assert_int_equal(mw_check(&m.w), 0);
	assert_int_equal(mw_fini(&m.w), 0);
	printf("  seed %u (groups %u, %u QPs, depth x%u): %u steps, %" PRIu64 " connects, %" PRIu64
	       " irecvs, %" PRIu64 " isends, %" PRIu64 "/%" PRIu64 " tests done, %" PRIu64
	       " closes idle, %" PRIu64 " busy\n",
	       seed, c.groups, c.nqps, c.depth_mult, steps, m.ops[0], m.ops[1], m.ops[2], m.ops[3],
	       m.ops[4], m.ops[5], m.ops[6]);
}

static void test_model(void **state)
{
	const char *s = getenv("DVX_MSG_MODEL_SEED"), *n = getenv("DVX_MSG_MODEL_STEPS");
	uint32_t steps = n ? (uint32_t)strtoul(n, NULL, 0) : 3000, seed;

	(void)state;
	if (s) {
		run_seed((uint32_t)strtoul(s, NULL, 0), steps);
		return;
	}
	for (seed = 1; seed <= 24; seed++)
		run_seed(seed, steps);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
