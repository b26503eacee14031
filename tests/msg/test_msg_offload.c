// SPDX-License-Identifier: MIT
/*
 * tests/msg/test_msg_offload.c - the CTS receiver offload (DVX_MSG_F_CTS_OFFLOAD,
 * docs/msg.md "CTS receiver offload") between contexts driven from one thread on the
 * software NIC: eager and rendezvous sizes around the eager size, sends before their
 * receives (parked, matched later in sequence order, a sender stopped by its credits),
 * tags matched at the receiver in posting order, messages larger than the receive on
 * both paths, both ends agreeing or falling back, a shared receive queue's credit
 * reservations, closes on either end, a header that breaks the sequence, a rendezvous
 * answer's sequence where it once was 0, and the refusals; the invariant checker after
 * every step.
 */
#include <errno.h>

#include "../lib/dvx_test.h"
#include "mworld.h"
#include "../../core/msg/msg_priv.h"	/* white box: a context's flags, a comm's head */

#define T_OUT (10 * MW_SEC)
#define TRY (MW_SEC / 5)	/* "no request" is the answer: a short bound */

static void cfg_off(struct dvx_msg_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->max_comms = 32;
	c->max_reqs = 8;
	c->max_recvs = 4;
	c->flags = DVX_MSG_F_CTS_OFFLOAD;
	c->eager_bytes = 4096;
}

static void check_bytes(const uint8_t *p, uint64_t len, uint32_t seed)
{
	int64_t i = mw_verify(p, len, seed);

	if (i >= 0)
		fail_msg("byte %lld of %llu: %02x, want %02x", (long long)i,
			 (unsigned long long)len, p[i], mw_pat(seed, (uint64_t)i));
}

/* one message of @len from rank 0 to rank 1, the receive posted first or after */
static void one(struct mw *w, struct dvx_msg_comm *s, struct dvx_msg_comm *r, uint64_t len,
		uint32_t seed, int recv_first)
{
	uint8_t *src = w->r[0].buf, *dst = w->r[1].buf;
	struct dvx_mr *rm = &w->r[1].mr;
	struct dvx_msg_req *sq, *rq;
	void *bufs[1] = { dst };
	size_t sizes[1] = { len + 64 }, got[1] = { 99 }, sent[1] = { 99 };
	uint32_t tags[1] = { 7 };

	mw_fill(src, len, seed);
	memset(dst, 0, len + 65);
	if (recv_first)
		assert_int_equal(mw_irecv(w, r, 1, bufs, sizes, tags, &rm, &rq, T_OUT), 0);
	assert_int_equal(mw_isend(w, s, src, len, 7, &w->r[0].mr, &sq, T_OUT), 0);
	if (!recv_first)
		assert_int_equal(mw_irecv(w, r, 1, bufs, sizes, tags, &rm, &rq, T_OUT), 0);
	assert_int_equal(mw_wait(w, sq, sent, T_OUT), 0);
	assert_int_equal(mw_wait(w, rq, got, T_OUT), 0);
	assert_int_equal(sent[0], len);
	assert_int_equal(got[0], len);
	check_bytes(dst, len, seed);
	assert_int_equal(dst[len], 0);
	assert_int_equal(mw_check(w), 0);
}

/* sizes around the eager size, receive first and send first, many laps of the ring */
static void test_sizes(void **state)
{
	static const uint64_t sizes[] = { 0, 1, 8, 63, 4095, 4096, 4097, 65536, 1u << 20 };
	struct dvx_msg_cfg c;
	struct dvx_msg_stats a, b;
	struct dvx_msg_comm *s, *r;
	struct mw w;
	uint32_t i;

	(void)state;
	cfg_off(&c);
	assert_int_equal(mw_init(&w, 2, &c, 2u << 20, 0), 0);
	assert_int_equal(mw_pair(&w, 0, 1, 0, &s, &r), 0);
	dvx_msg_get_stats(&w.r[0].m, &a);
	dvx_msg_get_stats(&w.r[1].m, &b);
	assert_int_equal(a.offloads, 1);
	assert_int_equal(b.offloads, 1);
	assert_int_equal(a.cts_fallbacks + b.cts_fallbacks, 0);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		one(&w, s, r, sizes[i], i + 1, 1);
		one(&w, s, r, sizes[i], i + 101, 0);
	}
	for (i = 0; i < 40; i++)	/* 5 laps of an 8-slot ring */
		one(&w, s, r, (i * 977u) % 6000, 200 + i, (int)(i & 1));
	dvx_msg_get_stats(&w.r[0].m, &a);
	dvx_msg_get_stats(&w.r[1].m, &b);
	assert_int_equal(a.eager + a.rts, 18 + 40);
	assert_int_equal(a.rts, 6 + 12);	/* 4097 and up; 40 laps: 12 sizes above 4096 */
	assert_true(b.credits > 0);
	assert_int_equal(a.late + b.late, 0);
	assert_int_equal(dvx_msg_close(s), 0);
	assert_int_equal(dvx_msg_close(r), 0);
	assert_int_equal(mw_settle(&w), 0);
	dvx_msg_get_stats(&w.r[0].m, &a);
	assert_int_equal(a.comms, 0);
	assert_int_equal(a.sets, 0);
	assert_int_equal(mw_fini(&w), 0);
}

/*
 * Sends before any receive: they go until the credits run out (the next isend is "try
 * later", counted), park at the receiver, and each irecv then takes the oldest; a
 * rendezvous among them waits for its receive like the others.
 */
static void test_send_first(void **state)
{
	struct dvx_msg_cfg c;
	struct dvx_msg_stats a;
	struct dvx_msg_comm *s, *r;
	struct dvx_msg_req *sq[8], *rq, *x;
	struct dvx_mr *rm;
	struct mw w;
	uint32_t i, tag = 3;
	int k;

	(void)state;
	cfg_off(&c);
	assert_int_equal(mw_init(&w, 2, &c, 1u << 20, 0), 0);
	assert_int_equal(mw_pair(&w, 0, 1, 0, &s, &r), 0);
	rm = &w.r[1].mr;
	for (i = 0; i < 8; i++) {	/* C = 8 credits; message 5 is a rendezvous */
		uint64_t len = i == 5 ? 20000 : 100 + i;

		mw_fill(w.r[0].buf + i * 32768, len, 30 + i);
		assert_int_equal(mw_isend(&w, s, w.r[0].buf + i * 32768, len, tag, &w.r[0].mr,
					  &sq[i], T_OUT),
				 0);
	}
	for (k = 0; k < 20; k++)
		mw_progress(&w);
	assert_int_equal(mw_isend(&w, s, w.r[0].buf, 8, tag, &w.r[0].mr, &x, TRY), -ETIMEDOUT);
	dvx_msg_get_stats(&w.r[0].m, &a);
	assert_true(a.credit_waits > 0);
	assert_int_equal(mw_check(&w), 0);
	for (i = 0; i < 8; i++) {
		uint64_t len = i == 5 ? 20000 : 100 + i;
		void *bufs[1] = { w.r[1].buf + i * 32768 };
		size_t sizes[1] = { 32768 }, got[1];

		assert_int_equal(mw_irecv(&w, r, 1, bufs, sizes, &tag, &rm, &rq, T_OUT), 0);
		assert_int_equal(mw_wait(&w, rq, got, T_OUT), 0);
		assert_int_equal(got[0], len);
		check_bytes(bufs[0], len, 30 + i);
		assert_int_equal(mw_check(&w), 0);
	}
	for (i = 0; i < 8; i++)
		assert_int_equal(mw_wait(&w, sq[i], NULL, T_OUT), 0);
	one(&w, s, r, 50, 9, 1);	/* and the connection goes on */
	dvx_msg_close(s);
	dvx_msg_close(r);
	assert_int_equal(mw_settle(&w), 0);
	assert_int_equal(mw_fini(&w), 0);
}

/*
 * Tags at the receiver: a grouped irecv of four tags filled by sends in another
 * order; a message whose tag no receive has waits parked (later messages of other tags
 * pass it) and the next irecv with its tag takes it; two messages of one tag go to two
 * receives in posting order.
 */
static void test_tags(void **state)
{
	static const uint32_t tags[4] = { 10, 11, 12, 13 };
	static const uint32_t order[4] = { 2, 0, 3, 1 };
	static const size_t lens[4] = { 1000, 0, 70000, 33 };
	struct dvx_msg_cfg c;
	struct dvx_msg_comm *s, *r;
	struct dvx_msg_req *rq, *rq2, *sq[6];
	struct dvx_mr *mrs[4];
	void *bufs[4];
	size_t sizes[4], got[4];
	uint32_t i, t99 = 99;
	struct mw w;

	(void)state;
	cfg_off(&c);
	assert_int_equal(mw_init(&w, 2, &c, 1u << 20, 0), 0);
	assert_int_equal(mw_pair(&w, 0, 1, 0, &s, &r), 0);
	for (i = 0; i < 4; i++) {
		bufs[i] = w.r[1].buf + i * 131072;
		sizes[i] = 131072;
		mrs[i] = &w.r[1].mr;
		mw_fill(w.r[0].buf + i * 131072, lens[i], 20 + i);
	}
	mw_fill(w.r[0].buf + 4 * 131072, 77, 99);
	/* tag 99 first: nobody waits for it */
	assert_int_equal(mw_isend(&w, s, w.r[0].buf + 4 * 131072, 77, 99, &w.r[0].mr, &sq[4],
				  T_OUT),
			 0);
	assert_int_equal(mw_irecv(&w, r, 4, bufs, sizes, tags, mrs, &rq, T_OUT), 0);
	for (i = 0; i < 4; i++) {
		uint32_t b = order[i];

		assert_int_equal(mw_isend(&w, s, w.r[0].buf + b * 131072, lens[b], tags[b],
					  &w.r[0].mr, &sq[i], T_OUT),
				 0);
	}
	assert_int_equal(mw_wait(&w, rq, got, T_OUT), 0);
	for (i = 0; i < 4; i++) {
		assert_int_equal(got[i], lens[i]);
		check_bytes(bufs[i], lens[i], 20 + i);
		assert_int_equal(mw_wait(&w, sq[i], NULL, T_OUT), 0);
	}
	assert_int_equal(mw_check(&w), 0);
	/* the parked one, taken by the irecv that names its tag */
	bufs[0] = w.r[1].buf + 600000;
	assert_int_equal(mw_irecv(&w, r, 1, bufs, sizes, &t99, mrs, &rq, T_OUT), 0);
	assert_int_equal(mw_wait(&w, rq, got, T_OUT), 0);
	assert_int_equal(got[0], 77);
	check_bytes(bufs[0], 77, 99);
	assert_int_equal(mw_wait(&w, sq[4], NULL, T_OUT), 0);
	/* one tag, two messages, two receives: in posting order */
	mw_fill(w.r[0].buf, 500, 61);
	mw_fill(w.r[0].buf + 8192, 600, 62);
	bufs[1] = w.r[1].buf + 700000;
	assert_int_equal(mw_irecv(&w, r, 1, &bufs[0], sizes, &tags[0], mrs, &rq, T_OUT), 0);
	assert_int_equal(mw_irecv(&w, r, 1, &bufs[1], sizes, &tags[0], mrs, &rq2, T_OUT), 0);
	assert_int_equal(mw_isend(&w, s, w.r[0].buf, 500, tags[0], &w.r[0].mr, &sq[0], T_OUT), 0);
	assert_int_equal(mw_isend(&w, s, w.r[0].buf + 8192, 600, tags[0], &w.r[0].mr, &sq[1],
				  T_OUT),
			 0);
	assert_int_equal(mw_wait(&w, rq2, got, T_OUT), 0);
	assert_int_equal(got[0], 600);
	check_bytes(bufs[1], 600, 62);
	assert_int_equal(mw_wait(&w, rq, got, T_OUT), 0);
	assert_int_equal(got[0], 500);
	check_bytes(bufs[0], 500, 61);
	assert_int_equal(mw_wait(&w, sq[0], NULL, T_OUT), 0);
	assert_int_equal(mw_wait(&w, sq[1], NULL, T_OUT), 0);
	assert_int_equal(mw_check(&w), 0);
	dvx_msg_close(s);
	dvx_msg_close(r);
	assert_int_equal(mw_settle(&w), 0);
	assert_int_equal(mw_fini(&w), 0);
}

/*
 * Larger than the receive: an eager message completes at the sender (it cannot know)
 * and its buffer ends with -EMSGSIZE at the receiver, size 0, nothing written, the
 * request's other buffer intact; a rendezvous learns it from the answer and both ends
 * fail that message. The connection goes on.
 */
static void test_too_big(void **state)
{
	static const uint32_t tags[2] = { 1, 2 };
	struct dvx_msg_cfg c;
	struct dvx_msg_comm *s, *r;
	struct dvx_msg_req *rq, *sq;
	struct dvx_mr *mrs[2];
	void *bufs[2];
	size_t sizes[2] = { 100, 4096 }, got[2];
	struct mw w;

	(void)state;
	cfg_off(&c);
	assert_int_equal(mw_init(&w, 2, &c, 1u << 20, 0), 0);
	assert_int_equal(mw_pair(&w, 0, 1, 0, &s, &r), 0);
	bufs[0] = w.r[1].buf;
	bufs[1] = w.r[1].buf + 8192;
	mrs[0] = mrs[1] = &w.r[1].mr;
	memset(w.r[1].buf, 0xee, 8192 + 4096);
	mw_fill(w.r[0].buf, 65536, 3);
	assert_int_equal(mw_irecv(&w, r, 2, bufs, sizes, tags, mrs, &rq, T_OUT), 0);
	assert_int_equal(mw_isend(&w, s, w.r[0].buf, 101, 1, &w.r[0].mr, &sq, T_OUT), 0);
	assert_int_equal(mw_wait(&w, sq, NULL, T_OUT), 0);
	assert_int_equal(mw_isend(&w, s, w.r[0].buf, 4096, 2, &w.r[0].mr, &sq, T_OUT), 0);
	assert_int_equal(mw_wait(&w, sq, NULL, T_OUT), 0);
	got[0] = got[1] = 7;
	assert_int_equal(mw_wait(&w, rq, got, T_OUT), -EMSGSIZE);
	assert_int_equal(got[0], 0);
	assert_int_equal(got[1], 4096);
	assert_int_equal(w.r[1].buf[0], 0xee);
	check_bytes(bufs[1], 4096, 3);
	/* a rendezvous into 100 bytes */
	assert_int_equal(mw_irecv(&w, r, 1, bufs, sizes, tags, mrs, &rq, T_OUT), 0);
	assert_int_equal(mw_isend(&w, s, w.r[0].buf, 65536, 1, &w.r[0].mr, &sq, T_OUT), 0);
	assert_int_equal(mw_wait(&w, sq, NULL, T_OUT), -EMSGSIZE);
	assert_int_equal(mw_wait(&w, rq, got, T_OUT), -EMSGSIZE);
	assert_int_equal(got[0], 0);
	assert_int_equal(w.r[1].buf[0], 0xee);
	assert_int_equal(mw_check(&w), 0);
	one(&w, s, r, 3000, 4, 1);
	one(&w, s, r, 30000, 5, 0);
	dvx_msg_close(s);
	dvx_msg_close(r);
	assert_int_equal(mw_settle(&w), 0);
	assert_int_equal(mw_fini(&w), 0);
}

/* one end without the flag: the connection runs with the FIFO clear-to-send, both ends
 * counting the fallback, whichever end connects */
static void test_fallback(void **state)
{
	struct dvx_msg_cfg c;
	struct dvx_msg_stats a, b;
	struct dvx_msg_comm *s, *r, *s2, *r2;
	struct mw w;

	(void)state;
	cfg_off(&c);
	assert_int_equal(mw_init(&w, 2, &c, 1u << 20, 0), 0);
	w.r[1].m.st->cfg.flags &= ~(uint32_t)DVX_MSG_F_CTS_OFFLOAD;	/* rank 1 never asks */
	assert_int_equal(mw_pair(&w, 0, 1, 0, &s, &r), 0);
	assert_int_equal(mw_pair(&w, 1, 0, 0, &s2, &r2), 0);
	assert_false(s->offload || r->offload || s2->offload || r2->offload);
	dvx_msg_get_stats(&w.r[0].m, &a);
	dvx_msg_get_stats(&w.r[1].m, &b);
	assert_int_equal(a.offloads + b.offloads, 0);
	assert_int_equal(a.cts_fallbacks, 2);	/* it asked both times */
	assert_int_equal(b.cts_fallbacks, 1);	/* asked once (as the acceptor) */
	one(&w, s, r, 2000, 1, 1);
	one(&w, s, r, 20000, 2, 1);
	dvx_msg_get_stats(&w.r[0].m, &a);
	assert_int_equal(a.eager + a.rts, 0);
	dvx_msg_close(s);
	dvx_msg_close(r);
	dvx_msg_close(s2);
	dvx_msg_close(r2);
	assert_int_equal(mw_settle(&w), 0);
	w.r[1].m.st->cfg.flags |= DVX_MSG_F_CTS_OFFLOAD;
	assert_int_equal(mw_fini(&w), 0);
}

/*
 * A shared receive queue: its comms reserve credits up to half of it, the comms past
 * that run in FIFO mode (both ends agreeing); every comm moves its messages, and the
 * reservations go with the comms.
 */
static void test_shared_credits(void **state)
{
	struct dvx_msg_cfg c;
	struct dvx_msg_stats a, b;
	struct dvx_msg_comm *s[8], *r[8];
	struct mw w;
	uint32_t i, off = 0;

	(void)state;
	cfg_off(&c);
	c.groups = 1;
	c.max_reqs = 4;
	c.max_recvs = 2;	/* a shared receive queue of 8: one credit each, 4 comms */
	assert_int_equal(mw_init(&w, 2, &c, 1u << 20, 0), 0);
	for (i = 0; i < 8; i++) {
		assert_int_equal(mw_pair(&w, 0, 1, 0, &s[i], &r[i]), 0);
		assert_int_equal(s[i]->offload, r[i]->offload);
		off += r[i]->offload;
	}
	assert_int_equal(off, 4);
	dvx_msg_get_stats(&w.r[1].m, &b);
	assert_int_equal(b.cts_fallbacks, 4);
	assert_int_equal(w.r[1].m.st->sets[r[0]->set].cr_res[0], 4);
	for (i = 0; i < 8; i++) {
		one(&w, s[i], r[i], 100 + i, i, 1);
		one(&w, s[i], r[i], 5000 + i, i + 10, !r[i]->offload);	/* FIFO: receive first */
	}
	for (i = 0; i < 8; i++) {
		dvx_msg_close(s[i]);
		dvx_msg_close(r[i]);
	}
	assert_int_equal(mw_settle(&w), 0);
	dvx_msg_get_stats(&w.r[0].m, &a);
	assert_int_equal(a.comms, 0);
	assert_int_equal(mw_check(&w), 0);
	/* the reservations went: a new comm gets offload again */
	assert_int_equal(mw_pair(&w, 0, 1, 0, &s[0], &r[0]), 0);
	assert_true(r[0]->offload);
	one(&w, s[0], r[0], 10, 1, 1);
	dvx_msg_close(s[0]);
	dvx_msg_close(r[0]);
	assert_int_equal(mw_settle(&w), 0);
	assert_int_equal(mw_fini(&w), 0);
}

/*
 * Closes: a sender closing tells its receiver (a posted receive ends with -ECONNRESET,
 * later ones too); a receiver closing with parked messages drops them (counted late);
 * a sender closing with an answered rendezvous it did not send revokes it (the
 * receive ends with -ECONNRESET).
 */
static void test_closes(void **state)
{
	struct dvx_msg_cfg c;
	struct dvx_msg_stats b;
	struct dvx_msg_comm *s, *r;
	struct dvx_msg_req *rq, *sq;
	struct dvx_mr *rm;
	void *bufs[1];
	size_t sizes[1] = { 65536 }, got[1];
	uint32_t tag = 4;
	uint64_t late;
	int k;
	struct mw w;

	(void)state;
	cfg_off(&c);
	assert_int_equal(mw_init(&w, 2, &c, 1u << 20, 0), 0);
	rm = &w.r[1].mr;
	bufs[0] = w.r[1].buf;
	/* the sender goes */
	assert_int_equal(mw_pair(&w, 0, 1, 0, &s, &r), 0);
	assert_int_equal(mw_irecv(&w, r, 1, bufs, sizes, &tag, &rm, &rq, T_OUT), 0);
	assert_int_equal(dvx_msg_close(s), 0);
	assert_int_equal(mw_wait(&w, rq, got, T_OUT), -ECONNRESET);
	assert_int_equal(mw_irecv(&w, r, 1, bufs, sizes, &tag, &rm, &rq, T_OUT), 0);
	assert_int_equal(mw_wait(&w, rq, got, T_OUT), -ECONNRESET);
	assert_int_equal(dvx_msg_close(r), 0);
	assert_int_equal(mw_settle(&w), 0);
	assert_int_equal(mw_check(&w), 0);
	/* the receiver goes with three messages parked */
	assert_int_equal(mw_pair(&w, 0, 1, 0, &s, &r), 0);
	for (k = 0; k < 3; k++) {
		assert_int_equal(mw_isend(&w, s, w.r[0].buf, 64, tag, &w.r[0].mr, &sq, T_OUT), 0);
		assert_int_equal(mw_wait(&w, sq, NULL, T_OUT), 0);
	}
	dvx_msg_get_stats(&w.r[1].m, &b);
	late = b.late;
	assert_int_equal(dvx_msg_close(r), 0);
	dvx_msg_get_stats(&w.r[1].m, &b);
	assert_int_equal(b.late, late + 3);
	assert_int_equal(dvx_msg_isend(s, w.r[0].buf, 8, tag, &w.r[0].mr, &sq) == -ECONNRESET ||
				 mw_isend(&w, s, w.r[0].buf, 8, tag, &w.r[0].mr, &sq, T_OUT) ==
					 -ECONNRESET,
			 1);
	assert_int_equal(dvx_msg_close(s), 0);
	assert_int_equal(mw_settle(&w), 0);
	assert_int_equal(mw_check(&w), 0);
	/* an answered rendezvous the sender closes on: revoked */
	assert_int_equal(mw_pair(&w, 0, 1, 0, &s, &r), 0);
	assert_int_equal(mw_isend(&w, s, w.r[0].buf, 30000, tag, &w.r[0].mr, &sq, T_OUT), 0);
	assert_int_equal(mw_irecv(&w, r, 1, bufs, sizes, &tag, &rm, &rq, T_OUT), 0);
	for (k = 0; k < 20; k++)	/* the receiver only: its answer lands, unread */
		dvx_msg_progress(&w.r[1].m);
	assert_int_equal(s->rts_n, 1);
	assert_int_equal(dvx_msg_close(s), 0);
	assert_int_equal(mw_wait(&w, rq, got, T_OUT), -ECONNRESET);
	assert_int_equal(got[0], 0);
	assert_int_equal(dvx_msg_close(r), 0);
	assert_int_equal(mw_settle(&w), 0);
	assert_int_equal(mw_check(&w), 0);
	assert_int_equal(mw_fini(&w), 0);
}

/* a header out of sequence (the sender's count moved under it): the receiver's comm
 * fails with -EPROTO, its receive with it, nothing else */
static void test_bad_sequence(void **state)
{
	struct dvx_msg_cfg c;
	struct dvx_msg_comm *s, *r, *s2, *r2;
	struct dvx_msg_req *rq, *sq;
	struct dvx_mr *rm;
	void *bufs[1];
	size_t sizes[1] = { 4096 }, got[1];
	uint32_t tag = 1;
	struct mw w;

	(void)state;
	cfg_off(&c);
	assert_int_equal(mw_init(&w, 2, &c, 1u << 20, 0), 0);
	assert_int_equal(mw_pair(&w, 0, 1, 0, &s, &r), 0);
	assert_int_equal(mw_pair(&w, 0, 1, 0, &s2, &r2), 0);
	one(&w, s, r, 10, 1, 1);
	rm = &w.r[1].mr;
	bufs[0] = w.r[1].buf;
	assert_int_equal(mw_irecv(&w, r, 1, bufs, sizes, &tag, &rm, &rq, T_OUT), 0);
	s->head++;	/* the next header names sequence 2 in slot 2; the receiver waits for 1 */
	s->lim++;
	assert_int_equal(mw_isend(&w, s, w.r[0].buf, 8, tag, &w.r[0].mr, &sq, T_OUT), 0);
	assert_int_equal(mw_wait(&w, rq, got, T_OUT), -EPROTO);
	assert_int_equal(dvx_msg_irecv(r, 1, bufs, sizes, &tag, &rm, &rq), -EPROTO);
	one(&w, s2, r2, 100, 2, 1);	/* the other connection is untouched */
	assert_int_equal(mw_check(&w), 0);
	dvx_msg_close(s);
	dvx_msg_close(r);
	dvx_msg_close(s2);
	dvx_msg_close(r2);
	assert_int_equal(mw_settle(&w), 0);
	assert_int_equal(mw_fini(&w), 0);
}

/*
 * A rendezvous answer's 16-bit sequence where the old numbering (base + s + 1) made it
 * 0, the value the sender leaves in a FIFO slot whose answer it took: message 8's slot
 * still held message 0's answer, its sequence cleared to 0, and the sender took that as
 * message 8's answer - message 0's smaller buffer (-EMSGSIZE at the sender, the receive
 * never filled; with a larger one, message 0's buffer written again). Answers now skip
 * 0. Three laps of an 8-slot ring, a rendezvous in slot 0 of each (5000, 5800, 6600
 * bytes, each into a receive 64 bytes larger), eager messages between: all arrive whole.
 */
static void test_answer_sequence_zero(void **state)
{
	struct dvx_msg_cfg c;
	struct dvx_msg_stats a;
	struct dvx_msg_comm *s, *r;
	struct mw w;
	uint32_t i;

	(void)state;
	cfg_off(&c);
	assert_int_equal(mw_init(&w, 2, &c, 1u << 20, 0), 0);
	assert_int_equal(mw_pair(&w, 0, 1, 0, &s, &r), 0);
	assert_int_equal(s->max_reqs, 8);
	s->seq_base = r->seq_base = (uint16_t)(65536 - 9);	/* base + 8 + 1 = 65536 */
	for (i = 0; i < 24; i++)
		one(&w, s, r, i % 8 ? 100 + i : 5000 + i * 100, 300 + i, (int)(i / 8) & 1);
	dvx_msg_get_stats(&w.r[0].m, &a);
	assert_int_equal(a.rts, 3);
	assert_int_equal(a.late, 0);
	assert_int_equal(dvx_msg_close(s), 0);
	assert_int_equal(dvx_msg_close(r), 0);
	assert_int_equal(mw_settle(&w), 0);
	assert_int_equal(mw_fini(&w), 0);
}

/* refused: an eager size that is not a multiple of 64 or above 64 KiB (the cause in
 * the diagnostic); a receive into device memory on an offload connection */
static void test_refusals(void **state)
{
	struct dvx_msg_cfg c;
	struct dvx_mem_req a, b, d;
	struct dvx_msg_comm *s, *r;
	struct dvx_msg_req *rq;
	struct dvx_mr dmr, *mrs[1];
	struct dvx_mr_cfg mc;
	void *bufs[1];
	size_t sizes[1] = { 64 };
	uint32_t tag = 1;
	int fd;
	struct mw w;

	(void)state;
	cfg_off(&c);
	assert_int_equal(mw_init(&w, 2, &c, 1u << 20, 0), 0);
	c.nnics = 1;
	c.nics[0] = &w.r[0].nic;
	c.eager_bytes = 100;
	assert_int_equal(dvx_msg_mem_req(&c, &a, &b, &d), -EINVAL);
	assert_non_null(strstr(w.r[0].nic.hal.diag.msg, "eager_bytes 100"));
	c.eager_bytes = 131072;
	assert_int_equal(dvx_msg_mem_req(&c, &a, &b, &d), -EINVAL);
	c.eager_bytes = 0;	/* the default */
	assert_int_equal(dvx_msg_mem_req(&c, &a, &b, &d), 0);
	assert_int_equal(mw_pair(&w, 0, 1, 0, &s, &r), 0);
	assert_int_equal(dvx_sim_dmabuf_export(w.fab, w.r[1].buf + 65536, 65536, &fd), 0);
	memset(&mc, 0, sizeof(mc));
	mc.addr = w.r[1].buf + 65536;
	mc.len = 65536;
	mc.access = DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_WRITE;
	mc.flags = DVX_MR_F_DMABUF;
	mc.dmabuf_fd = fd;
	if (dvx_msg_reg_mr(&w.r[1].m, 0, &mc, &dmr))
		fail_msg("reg_mr: %s", w.r[1].nic.hal.diag.msg);
	bufs[0] = w.r[1].buf + 65536;
	mrs[0] = &dmr;
	assert_int_equal(dvx_msg_irecv(r, 1, bufs, sizes, &tag, mrs, &rq), -EINVAL);
	assert_null(rq);
	assert_non_null(strstr(w.r[1].nic.hal.diag.msg, "device memory"));
	assert_int_equal(dvx_msg_dereg_mr(&w.r[1].m, &dmr), 0);
	assert_int_equal(dvx_sim_dmabuf_release(w.fab, fd), 0);
	one(&w, s, r, 64, 1, 1);
	dvx_msg_close(s);
	dvx_msg_close(r);
	assert_int_equal(mw_settle(&w), 0);
	assert_int_equal(mw_fini(&w), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_send_first),
		cmocka_unit_test(test_tags),
		cmocka_unit_test(test_too_big),
		cmocka_unit_test(test_fallback),
		cmocka_unit_test(test_shared_credits),
		cmocka_unit_test(test_closes),
		cmocka_unit_test(test_bad_sequence),
		cmocka_unit_test(test_answer_sequence_zero),
		cmocka_unit_test(test_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
