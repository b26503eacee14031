// SPDX-License-Identifier: MIT
/*
 * tests/msg/test_msg_edges.c - the messaging layer's edges, one thread on the software
 * NIC: a connection joining a set while the set's last other user closes; a QP of a
 * shared set destroyed with its completions still in the CQ; closes finished by the
 * calls a network plugin makes (no dvx_msg_progress()); a sender that closes with
 * buffers announced and unused revokes them; no comm starves another on a shared
 * receive queue; a flush request done and never tested; a listen comm closed with
 * connections not yet accepted; connects nobody collects; a failed QP of two fails
 * exactly the comms on it.
 */
#include <errno.h>

#include "../lib/dvx_test.h"
#include "mworld.h"
#include "../../core/msg/msg_priv.h"	/* white box: sets, counts */

#define T_OUT (10 * MW_SEC)

static void cfg_base(struct dvx_msg_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->max_comms = 32;
	c->max_reqs = 8;
	c->max_recvs = 4;
}

static void fill(uint8_t *p, uint64_t len, uint32_t seed)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(seed * 7u + i * 3u + 1u);
}

static void verify(const uint8_t *p, uint64_t len, uint32_t seed)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		assert_int_equal(p[i], (uint8_t)(seed * 7u + i * 3u + 1u));
}

/* one message 0 -> 1 of @len, checked */
static void msg(struct mw *w, struct dvx_msg_comm *s, struct dvx_msg_comm *r, uint64_t len,
		uint32_t seed)
{
	void *bufs[1] = { w->r[1].buf };
	size_t sz[1] = { len }, got[1];
	uint32_t tg[1] = { 1 };
	struct dvx_mr *mr = &w->r[1].mr;
	struct dvx_msg_req *rq, *sq;

	fill(w->r[0].buf, len, seed);
	assert_int_equal(mw_irecv(w, r, 1, bufs, sz, tg, &mr, &rq, T_OUT), 0);
	assert_int_equal(mw_isend(w, s, w->r[0].buf, len, 1, &w->r[0].mr, &sq, T_OUT), 0);
	assert_int_equal(mw_wait(w, sq, NULL, T_OUT), 0);
	assert_int_equal(mw_wait(w, rq, got, T_OUT), 0);
	assert_int_equal(got[0], len);
	verify(w->r[1].buf, len, seed);
}

/* the connect of a JOIN is under way (its proposal made) when the set's only other
 * connection closes on both ends: the pinned QPs survive, the join completes */
static void test_join_while_primary_closes(void **state)
{
	struct dvx_msg_cfg c;
	struct mw w;
	struct dvx_msg_handle h;
	struct dvx_msg_comm *s0, *r0, *l, *s1 = NULL, *r1 = NULL;
	struct dvx_msg_stats a;
	uint64_t end = mw_now() + T_OUT;
	int shared;

	(void)state;
	cfg_base(&c);
	c.groups = 1;
	c.nqps = 2;
	assert_int_equal(mw_init(&w, 2, &c, 1u << 20, 0), 0);
	assert_int_equal(mw_pair(&w, 0, 1, 0, &s0, &r0), 0);
	assert_int_equal(dvx_msg_listen(&w.r[1].m, 0, &h, &l), 0);
	assert_int_equal(dvx_msg_connect(&w.r[0].m, 0, 1, &h, &s1), 0);	/* proposes JOIN */
	assert_null(s1);
	assert_int_equal(dvx_msg_close(s0), 0);
	assert_int_equal(dvx_msg_close(r0), 0);
	assert_int_equal(mw_check(&w), 0);
	while ((!s1 || !r1) && mw_now() < end) {
		if (!s1)
			assert_int_equal(dvx_msg_connect(&w.r[0].m, 0, 1, &h, &s1), 0);
		if (!r1)
			assert_int_equal(dvx_msg_accept(l, &r1), 0);
	}
	assert_non_null(s1);
	assert_non_null(r1);
	dvx_msg_close(l);
	assert_int_equal(mw_check(&w), 0);
	assert_int_equal(dvx_msg_comm_info(s1, &shared, NULL, NULL), 0);
	dvx_msg_get_stats(&w.r[0].m, &a);
	assert_true(a.qps >= 1);
	msg(&w, s1, r1, 5000, 1);
	dvx_msg_close(s1);
	dvx_msg_close(r1);
	assert_int_equal(mw_fini(&w), 0);
}

/* a shared set where one comm uses 2 QPs and another 1: the 2-QP comm sends a message
 * too large (its notices complete unpolled) and closes; the other comm goes on, no QP
 * failed, and the QP only the first one used goes once its completions are in */
static void test_close_with_unpolled_completions(void **state)
{
	struct dvx_msg_cfg c;
	struct mw w;
	struct dvx_msg_comm *sa, *ra, *sb, *rb;
	struct dvx_msg_req *rq, *sq;
	struct dvx_msg_stats a;
	void *bufs[1];
	size_t sz[1] = { 100000 };
	uint32_t tg[1] = { 1 };
	struct dvx_mr *mr;
	int k;

	(void)state;
	mw_fifo_only = 1;	/* the FIFO clear-to-send's own behaviour */
	cfg_base(&c);
	c.groups = 1;
	c.nqps = 2;
	c.split_bytes = 1024;
	assert_int_equal(mw_init(&w, 2, &c, 1u << 20, 0), 0);
	assert_int_equal(mw_pair(&w, 0, 1, 2, &sa, &ra), 0);	/* primary: 2 QPs */
	assert_int_equal(mw_pair(&w, 0, 1, 1, &sb, &rb), 0);	/* joins, on QP 0 */
	bufs[0] = w.r[1].buf;
	mr = &w.r[1].mr;
	assert_int_equal(mw_irecv(&w, ra, 1, bufs, sz, tg, &mr, &rq, T_OUT), 0);	/* striped */
	assert_int_equal(mw_isend(&w, sa, w.r[0].buf, 200000, 1, &w.r[0].mr, &sq, T_OUT),
			 -EMSGSIZE);
	assert_int_equal(dvx_msg_close(sa), 0);	/* its notices' completions not polled */
	assert_int_equal(mw_check(&w), 0);
	msg(&w, sb, rb, 3000, 2);
	assert_int_equal(mw_wait(&w, rq, NULL, T_OUT), -EMSGSIZE);
	dvx_msg_close(ra);
	assert_int_equal(mw_settle(&w), 0);
	for (k = 0; k < 5; k++)
		msg(&w, sb, rb, 3000, 3 + k);
	dvx_msg_get_stats(&w.r[0].m, &a);
	assert_int_equal(a.qp_errors, 0);
	assert_int_equal(a.qps, 1);	/* QP 1 went with its last user */
	assert_int_equal(a.comms, 1);
	assert_int_equal(mw_check(&w), 0);
	dvx_msg_close(sb);
	dvx_msg_close(rb);
	assert_int_equal(mw_fini(&w), 0);
	mw_fifo_only = 0;
}

/* one message on the long-lived pair, driven by test calls and NIC steps only */
static void keep_talking(struct mw *w, struct dvx_msg_comm *ks, struct dvx_msg_comm *kr)
{
	void *kb[1] = { w->r[1].buf + 4096 };
	size_t sz[1] = { 64 };
	uint32_t tg[1] = { 1 };
	struct dvx_mr *mr = &w->r[1].mr;
	struct dvx_msg_req *rq, *sq;
	int done = 0;
	uint64_t end = mw_now() + T_OUT;

	assert_int_equal(dvx_msg_irecv(kr, 1, kb, sz, tg, &mr, &rq), 0);
	assert_non_null(rq);
	do {
		/* a NIC moves on its own; the software NIC needs a step */
		dvx_hal_nic_progress(&w->r[0].nic.hal);
		assert_int_equal(dvx_msg_isend(ks, w->r[0].buf, 64, 1, &w->r[0].mr, &sq), 0);
	} while (!sq && mw_now() < end);
	assert_non_null(sq);
	do
		assert_int_equal(dvx_msg_test(sq, &done, NULL), 0);
	while (!done);
	do
		assert_int_equal(dvx_msg_test(rq, &done, NULL), 0);
	while (!done);
}

/* closes finish from the calls a plugin makes (test, connect, accept), without
 * dvx_msg_progress(): 20 rounds of irecv + close on private sets never run out. A
 * close's last message rides its own QP, the long-lived pair's another, and nothing
 * orders two QPs (docs/prm.md 10.2): the last closes may finish a few rounds of the
 * long-lived pair's traffic later (the software NIC's reorder mode, DVX_SIM_REORDER=1).
 * And a sender that has seen the receiver's close marker placed frees its set while
 * the marker's WRITE still waits for its ACK: the receiver's QP then retries into a
 * QP that is gone and its close ends with the transport error, a retry time-out later
 * (found by the reorder mode, seed 1; hardware can do the same) */
static void test_closes_finish_without_progress(void **state)
{
	struct dvx_msg_cfg c;
	struct mw w;
	struct dvx_msg_comm *s, *r, *ks, *kr;
	struct dvx_msg_stats b;
	int i, k;

	(void)state;
	cfg_base(&c);
	c.max_comms = 8;
	c.max_private_sets = 6;
	assert_int_equal(mw_init(&w, 2, &c, 1u << 20, 0), 0);
	assert_int_equal(mw_pair(&w, 0, 1, 0, &ks, &kr), 0);	/* a comm that keeps talking */
	for (i = 0; i < 20; i++) {
		void *bufs[1] = { w.r[1].buf };
		size_t sz[1] = { 64 };
		uint32_t tg[1] = { 1 };
		struct dvx_mr *mr = &w.r[1].mr;
		struct dvx_msg_req *q = NULL;

		assert_int_equal(mw_pair(&w, 0, 1, 0, &s, &r), 0);
		assert_int_equal(mw_irecv(&w, r, 1, bufs, sz, tg, &mr, &q, T_OUT), 0);
		/* the sender closes first (it revokes the announced buffer), then the receiver */
		for (k = 0; k < 20; k++)
			dvx_hal_nic_progress(&w.r[0].nic.hal);	/* the CTS lands */
		assert_int_equal(dvx_msg_close(s), 0);
		assert_int_equal(dvx_msg_close(r), 0);
		/* only the long-lived comm's traffic drives both contexts from here */
		keep_talking(&w, ks, kr);
	}
	{
		uint64_t end = mw_now() + T_OUT;

		do {
			dvx_msg_get_stats(&w.r[1].m, &b);
			if (b.comms == 1)
				break;
			keep_talking(&w, ks, kr);
		} while (mw_now() < end);
	}
	assert_int_equal(b.comms, 1);
	assert_int_equal(mw_check(&w), 0);
	dvx_msg_close(ks);
	dvx_msg_close(kr);
	assert_int_equal(mw_fini(&w), 0);
}

/* receivers that close with buffers announced, then senders that close without
 * sending: the buffers are revoked, the receive queue of the shared set is whole
 * again, and a comm that lives on posts as much as before; a live receiver whose
 * sender closes gets -ECONNRESET for the revoked buffer */
static void test_revoke(void **state)
{
	struct dvx_msg_cfg c;
	struct mw w;
	struct dvx_msg_comm *s[8], *r[8], *ks, *kr;
	struct dvx_msg_req *q;
	struct dvx_msg_stats b;
	void *bufs[1] = { NULL };
	size_t sz[1] = { 64 }, got[1];
	uint32_t tg[1] = { 1 };
	struct dvx_mr *mr;
	int i, k;

	(void)state;
	cfg_base(&c);
	c.groups = 1;
	c.max_reqs = 4;
	c.max_recvs = 2;	/* a shared receive queue of 8 */
	assert_int_equal(mw_init(&w, 2, &c, 1u << 20, 0), 0);
	mr = &w.r[1].mr;
	bufs[0] = w.r[1].buf;
	assert_int_equal(mw_pair(&w, 0, 1, 0, &ks, &kr), 0);
	for (i = 0; i < 7; i++) {
		assert_int_equal(mw_pair(&w, 0, 1, 0, &s[i], &r[i]), 0);
		assert_int_equal(mw_irecv(&w, r[i], 1, bufs, sz, tg, &mr, &q, T_OUT), 0);
		assert_int_equal(dvx_msg_close(r[i]), 0);
	}
	for (k = 0; k < 50; k++)
		mw_progress(&w);
	assert_int_equal(mw_check(&w), 0);
	for (i = 0; i < 7; i++)
		assert_int_equal(dvx_msg_close(s[i]), 0);
	for (k = 0; k < 50; k++)
		mw_progress(&w);
	dvx_msg_get_stats(&w.r[1].m, &b);
	assert_int_equal(b.comms, 1);	/* the 7 closing recv comms are gone */
	assert_int_equal(mw_check(&w), 0);
	/* the long-lived comm posts a full window, several times over */
	for (i = 0; i < 12; i++) {
		struct dvx_msg_req *rq[4], *sq;

		for (k = 0; k < 4; k++) {
			bufs[0] = w.r[1].buf + k * 4096;
			assert_int_equal(mw_irecv(&w, kr, 1, bufs, sz, tg, &mr, &rq[k], T_OUT), 0);
		}
		for (k = 0; k < 4; k++) {
			assert_int_equal(mw_isend(&w, ks, w.r[0].buf, 64, 1, &w.r[0].mr, &sq, T_OUT),
					 0);
			assert_int_equal(mw_wait(&w, sq, NULL, T_OUT), 0);
		}
		for (k = 0; k < 4; k++)
			assert_int_equal(mw_wait(&w, rq[k], got, T_OUT), 0);
	}
	/* a live receiver: its sender closes without sending */
	assert_int_equal(mw_pair(&w, 0, 1, 0, &s[0], &r[0]), 0);
	assert_int_equal(mw_irecv(&w, r[0], 1, bufs, sz, tg, &mr, &q, T_OUT), 0);
	for (k = 0; k < 50; k++)
		mw_progress(&w);
	assert_int_equal(dvx_msg_close(s[0]), 0);
	assert_int_equal(mw_wait(&w, q, got, T_OUT), -ECONNRESET);
	assert_int_equal(got[0], 0);
	dvx_msg_close(r[0]);
	assert_int_equal(mw_check(&w), 0);
	dvx_msg_close(ks);
	dvx_msg_close(kr);
	assert_int_equal(mw_fini(&w), 0);
}

/* fair share: one comm holding many receives of a shared queue does not keep another
 * from posting its own */
static void test_fair_share(void **state)
{
	struct dvx_msg_cfg c;
	struct mw w;
	struct dvx_msg_comm *s[2], *r[2];
	struct dvx_msg_req *q[8], *q1 = NULL, *sq;
	void *bufs[1];
	size_t sz[1] = { 64 };
	uint32_t tg[1] = { 1 };
	struct dvx_mr *mr;
	int i, n = 0;

	(void)state;
	mw_fifo_only = 1;	/* the FIFO clear-to-send's own behaviour */
	cfg_base(&c);
	c.groups = 1;
	c.max_reqs = 8;
	c.max_recvs = 1;	/* a shared receive queue of 8 */
	assert_int_equal(mw_init(&w, 2, &c, 1u << 20, 0), 0);
	mr = &w.r[1].mr;
	for (i = 0; i < 2; i++)
		assert_int_equal(mw_pair(&w, 0, 1, 0, &s[i], &r[i]), 0);
	/* comm 0 posts as much as it may: its half */
	for (i = 0; i < 8; i++) {
		bufs[0] = w.r[1].buf + i * 64;
		assert_int_equal(dvx_msg_irecv(r[0], 1, bufs, sz, tg, &mr, &q[n]), 0);
		if (!q[n])
			break;
		n++;
	}
	assert_int_equal(n, 4);
	/* comm 1 still gets in */
	bufs[0] = w.r[1].buf + 4096;
	assert_int_equal(dvx_msg_irecv(r[1], 1, bufs, sz, tg, &mr, &q1), 0);
	assert_non_null(q1);
	assert_int_equal(mw_check(&w), 0);
	assert_int_equal(mw_isend(&w, s[1], w.r[0].buf, 64, 1, &w.r[0].mr, &sq, T_OUT), 0);
	assert_int_equal(mw_wait(&w, sq, NULL, T_OUT), 0);
	assert_int_equal(mw_wait(&w, q1, NULL, T_OUT), 0);
	for (i = 0; i < n; i++) {
		assert_int_equal(mw_isend(&w, s[0], w.r[0].buf, 64, 1, &w.r[0].mr, &sq, T_OUT), 0);
		assert_int_equal(mw_wait(&w, sq, NULL, T_OUT), 0);
		assert_int_equal(mw_wait(&w, q[i], NULL, T_OUT), 0);
	}
	for (i = 0; i < 2; i++) {
		dvx_msg_close(s[i]);
		dvx_msg_close(r[i]);
	}
	assert_int_equal(mw_fini(&w), 0);
	mw_fifo_only = 0;
}

/* a flush done and never tested, then its comm closed: later flushes still work */
static void test_flush_done_then_close(void **state)
{
	struct dvx_msg_cfg c;
	struct mw w;
	struct dvx_msg_comm *s, *r;
	struct dvx_msg_req *q;
	void *bufs[1];
	size_t sz[1] = { 64 };
	struct dvx_mr *mrs[1];
	int i, k;

	(void)state;
	cfg_base(&c);
	c.flags = DVX_MSG_F_FLUSH;
	assert_int_equal(mw_init(&w, 2, &c, 1u << 20, 0), 0);
	bufs[0] = w.r[1].buf;
	mrs[0] = &w.r[1].mr;
	for (i = 0; i < 3 * (int)c.max_reqs; i++) {
		assert_int_equal(mw_pair(&w, 0, 1, 0, &s, &r), 0);
		assert_int_equal(dvx_msg_iflush(r, 1, bufs, sz, mrs, &q), 0);
		assert_non_null(q);
		for (k = 0; k < 20; k++)
			mw_progress(&w);	/* done, never tested */
		dvx_msg_close(s);
		dvx_msg_close(r);
	}
	assert_int_equal(mw_fini(&w), 0);
}

/* a listen comm closed with connections that completed but were not accepted: they go
 * with it, nothing is left */
static void test_listen_close_parked(void **state)
{
	struct dvx_msg_cfg c;
	struct mw w;
	struct dvx_msg_handle h[3];
	struct dvx_msg_comm *l, *s[3] = { NULL };
	struct dvx_msg_stats b;
	uint64_t end = mw_now() + T_OUT;
	int i, left;

	(void)state;
	cfg_base(&c);
	c.groups = 1;
	assert_int_equal(mw_init(&w, 2, &c, 1u << 20, 0), 0);
	assert_int_equal(dvx_msg_listen(&w.r[1].m, 0, &h[0], &l), 0);
	h[1] = h[0];
	h[2] = h[0];	/* three connects to one listen comm */
	do {
		left = 0;
		for (i = 0; i < 3; i++)
			if (!s[i]) {
				assert_int_equal(dvx_msg_connect(&w.r[0].m, 0, 0, &h[i], &s[i]), 0);
				left += !s[i];
			}
		dvx_msg_progress(&w.r[1].m);	/* rank 1 runs its handshakes, accepts none */
	} while (left && mw_now() < end);
	assert_int_equal(left, 0);
	dvx_msg_get_stats(&w.r[1].m, &b);
	assert_int_equal(b.comms, 4);
	assert_int_equal(dvx_msg_close(l), 0);
	dvx_msg_get_stats(&w.r[1].m, &b);
	assert_int_equal(b.comms, 0);
	assert_int_equal(b.sets, 0);
	assert_int_equal(mw_check(&w), 0);
	for (i = 0; i < 3; i++)
		dvx_msg_close(s[i]);
	assert_int_equal(mw_fini(&w), 0);
}

/* connects whose callers never come back: once a timeout passed after they finished
 * (or failed), what they hold is released and connects can start again */
static void test_abandoned_connects(void **state)
{
	struct dvx_msg_cfg c;
	struct mw w;
	struct dvx_msg_handle h[4];
	struct dvx_msg_comm *l, *x, *s, *r;
	struct dvx_msg_stats a;
	uint64_t end;
	int i;

	(void)state;
	cfg_base(&c);
	c.max_pending = 4;	/* two connects at a time */
	c.timeout_ns = MW_SEC / 5;
	assert_int_equal(mw_init(&w, 2, &c, 1u << 20, 0), 0);
	assert_int_equal(dvx_msg_listen(&w.r[1].m, 0, &h[0], &l), 0);
	h[1] = h[0];
	for (i = 0; i < 2; i++) {
		assert_int_equal(dvx_msg_connect(&w.r[0].m, 0, 0, &h[i], &x), 0);
		assert_null(x);	/* started, never called again with this handle */
	}
	h[2] = h[0];
	assert_int_equal(dvx_msg_connect(&w.r[0].m, 0, 0, &h[2], &x), 0);
	assert_null(x);	/* the table's half for connects is taken */
	end = mw_now() + T_OUT;
	do {
		dvx_msg_progress(&w.r[1].m);
		dvx_msg_accept(l, &r);
		if (r)
			dvx_msg_close(r);
		dvx_msg_progress(&w.r[0].m);
		dvx_msg_get_stats(&w.r[0].m, &a);
	} while ((a.pending || a.comms) && mw_now() < end);
	assert_int_equal(a.pending, 0);
	assert_int_equal(a.comms, 0);
	assert_int_equal(a.sets, 0);
	dvx_msg_close(l);
	assert_int_equal(mw_pair(&w, 0, 1, 0, &s, &r), 0);	/* connects work again */
	msg(&w, s, r, 100, 1);
	dvx_msg_close(s);
	dvx_msg_close(r);
	assert_int_equal(mw_fini(&w), 0);
}

/* two QPs in a set: comm A uses both, comm B only QP 0; QP 1 fails (the link goes down
 * while only A's message on QP 1 is out): A fails, B goes on */
static void test_fault_one_qp_of_two(void **state)
{
	struct dvx_msg_cfg c;
	struct mw w;
	struct dvx_msg_comm *sa, *ra, *sb, *rb;
	struct dvx_msg_req *rq[2], *sq;
	struct dvx_sim_faults f;
	struct dvx_msg_stats a;
	void *bufs[1];
	size_t sz[1] = { 64 };
	uint32_t tg[1] = { 1 };
	struct dvx_mr *mr;
	int k;

	(void)state;
	mw_fifo_only = 1;	/* the FIFO clear-to-send's own behaviour */
	cfg_base(&c);
	c.groups = 1;
	c.nqps = 2;
	c.conn.retry_count = 2;
	c.conn.ack_timeout = 10;
	c.conn.rnr_retry = 7;
	c.conn.min_rnr_nak = 12;
	c.conn.hop_limit = 255;
	assert_int_equal(mw_init(&w, 2, &c, 1u << 20, 0), 0);
	assert_int_equal(mw_pair(&w, 0, 1, 2, &sa, &ra), 0);
	assert_int_equal(mw_pair(&w, 0, 1, 1, &sb, &rb), 0);
	mr = &w.r[1].mr;
	for (k = 0; k < 2; k++) {	/* small buffers: QP slot 0, then slot 1 */
		bufs[0] = w.r[1].buf + k * 4096;
		assert_int_equal(mw_irecv(&w, ra, 1, bufs, sz, tg, &mr, &rq[k], T_OUT), 0);
	}
	assert_int_equal(mw_isend(&w, sa, w.r[0].buf, 64, 1, &w.r[0].mr, &sq, T_OUT), 0);
	assert_int_equal(mw_wait(&w, sq, NULL, T_OUT), 0);
	assert_int_equal(mw_wait(&w, rq[0], NULL, T_OUT), 0);
	for (k = 0; k < 50; k++)
		mw_progress(&w);
	memset(&f, 0, sizeof(f));
	f.link_down = 1;
	dvx_sim_set_faults(w.fab, &f);
	assert_int_equal(mw_isend(&w, sa, w.r[0].buf, 64, 1, &w.r[0].mr, &sq, T_OUT), 0);
	assert_int_equal(mw_wait(&w, sq, NULL, T_OUT), -EHOSTUNREACH);
	dvx_sim_set_faults(w.fab, NULL);
	dvx_msg_get_stats(&w.r[0].m, &a);
	assert_int_equal(a.qp_errors, 1);
	assert_int_equal(w.r[0].m.st->sets[sb->set].failed_mask, 2);
	/* B, on QP 0 only, is untouched */
	msg(&w, sb, rb, 2000, 5);
	assert_true(dvx_msg_isend(sa, w.r[0].buf, 8, 1, &w.r[0].mr, &sq) < 0);
	assert_int_equal(mw_check(&w), 0);
	dvx_msg_close(sa);
	dvx_msg_close(ra);
	dvx_msg_close(sb);
	dvx_msg_close(rb);
	assert_int_equal(mw_fini(&w), 0);
	mw_fifo_only = 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_join_while_primary_closes),
		cmocka_unit_test(test_close_with_unpolled_completions),
		cmocka_unit_test(test_closes_finish_without_progress),
		cmocka_unit_test(test_revoke),
		cmocka_unit_test(test_fair_share),
		cmocka_unit_test(test_flush_done_then_close),
		cmocka_unit_test(test_listen_close_parked),
		cmocka_unit_test(test_abandoned_connects),
		cmocka_unit_test(test_fault_one_qp_of_two),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
