// SPDX-License-Identifier: MIT
/*
 * tests/testing/test_ht_mock.c - the host transport's interface mock
 * (dvx/testing/ht_mock.h) used as an algorithm author uses it: a small "algorithm"
 * written against dvx/ht/ht.h only (a buffer exchanged between two ends, striped over
 * the channels, zero-copy ends trading their buffer's description first) runs on a
 * mock pair and is checked for its data, the calls it made, and how it handles what a
 * transport can answer: -EAGAIN (a bounded window), -ENOTCONN (a pair that connects
 * late), an issue refused, a request failed (and its partner's -EREMOTEIO), a failed
 * channel, and timeouts (on the mock's virtual clock, so they are exact).
 */
#include <errno.h>

#include "../lib/dvx_test.h"

#include <dvx/testing/ht_mock.h>

/* ---- the algorithm under test: exchange @len bytes both ways ---- */

#define CHUNK 1000u
#define MAXQ 64

struct algo {
	struct dvx_ht *t;
	const uint8_t *src;
	uint8_t *dst;
	uint64_t len;
	int phase;		/* 0 describe, 1 described, 2 chunks, 3 done */
	int err;
	struct dvx_ht_desc mine, theirs;
	struct dvx_ht_rbuf remote;
	struct dvx_ht_req cs, cr;
	uint64_t sent, recvd, sdone, rdone;
	struct dvx_ht_req sq[MAXQ], rq[MAXQ];
};

static uint64_t nchunks(const struct algo *a)
{
	return (a->len + CHUNK - 1) / CHUNK;
}

static void chunk_of(const struct algo *a, uint64_t i, int send, struct dvx_ht_chunk *k)
{
	memset(k, 0, sizeof(*k));
	k->offset = i * CHUNK;
	k->len = a->len - k->offset < CHUNK ? a->len - k->offset : CHUNK;
	k->channel = (uint32_t)(i % a->t->nchannels);
	k->buf = send ? (void *)(uintptr_t)(a->src + k->offset) : a->dst + k->offset;
	if (send && a->t->mode == DVX_HT_ZC) {
		k->mr = (const struct dvx_mr *)a;	/* the mock has no NIC: any non-NULL */
		k->remote = &a->remote;
	}
}

/* one step of the algorithm: 1 done, 0 not yet, or the error it ran into */
static int algo_step(struct algo *a)
{
	struct dvx_ht_chunk k;
	int err, done;

	if (a->err || a->phase == 3)
		return a->err ? a->err : 1;
	err = dvx_ht_progress(a->t);
	if (a->phase == 0) {
		if (!dvx_ht_connected(a->t))
			return 0;
		if (a->t->mode != DVX_HT_ZC) {
			a->phase = 2;
			return 0;
		}
		err = dvx_ht_export(a->t, a->dst, a->len, NULL, &a->mine);
		if (!err)
			err = dvx_ht_recv_ctrl(a->t, &a->theirs, sizeof(a->theirs), &a->cr);
		if (!err)
			err = dvx_ht_send_ctrl(a->t, &a->mine, sizeof(a->mine), &a->cs);
		if (err)
			return a->err = err;
		a->phase = 1;
	}
	if (a->phase == 1) {
		err = dvx_ht_test(&a->cr, &done);
		if (!done)
			return 0;
		if (!err)
			err = dvx_ht_import(a->t, &a->theirs, &a->remote);
		if (err)
			return a->err = err;
		a->phase = 2;
	}
	/* receives first, then sends, each within the window, -EAGAIN meaning "later" */
	while (a->recvd < nchunks(a) && a->recvd - a->rdone < MAXQ) {
		chunk_of(a, a->recvd, 0, &k);
		err = dvx_ht_recv_chunk(a->t, &k, &a->rq[a->recvd % MAXQ]);
		if (err)
			return a->err = err;
		a->recvd++;
	}
	while (a->sent < nchunks(a) && a->sent - a->sdone < MAXQ) {
		chunk_of(a, a->sent, 1, &k);
		err = dvx_ht_send_chunk(a->t, &k, &a->sq[a->sent % MAXQ]);
		if (err == -EAGAIN)
			break;
		if (err)
			return a->err = err;
		a->sent++;
	}
	while (a->sdone < a->sent && (err = dvx_ht_test(&a->sq[a->sdone % MAXQ], &done), done)) {
		if (err)
			return a->err = err;
		a->sdone++;
	}
	while (a->rdone < a->recvd && (err = dvx_ht_test(&a->rq[a->rdone % MAXQ], &done), done)) {
		if (err)
			return a->err = err;
		a->rdone++;
	}
	if (a->sdone == nchunks(a) && a->rdone == nchunks(a))
		a->phase = 3;
	return a->phase == 3;
}

/* ---- the tests ---- */

#define LEN 100000u

static struct dvx_ht_mock A, B;
static uint8_t src[2][LEN], dst[2][LEN];
static struct algo X[2];

static void setup(const struct dvx_ht_mock_cfg *cfg)
{
	int i;
	uint32_t k;

	assert_int_equal(dvx_ht_mock_pair(&A, &B, cfg), 0);
	for (i = 0; i < 2; i++) {
		for (k = 0; k < LEN; k++)
			src[i][k] = (uint8_t)(k * 7 + (uint32_t)i * 100 + k / 251);
		memset(dst[i], 0, LEN);
		memset(&X[i], 0, sizeof(X[i]));
		X[i].t = i ? &B.ht : &A.ht;
		X[i].src = src[i];
		X[i].dst = dst[i];
		X[i].len = LEN;
	}
}

/* run both ends until done, an error, or @max steps: 0, the error, or -ETIMEDOUT */
static int run(int max)
{
	int n, r0, r1;

	for (n = 0; n < max; n++) {
		r0 = algo_step(&X[0]);
		r1 = algo_step(&X[1]);
		if (r0 < 0 || r1 < 0)
			return r0 < 0 ? r0 : r1;
		if (r0 == 1 && r1 == 1)
			return 0;
	}
	return -ETIMEDOUT;
}

static void exchanged(void)
{
	assert_memory_equal(dst[0], src[1], LEN);
	assert_memory_equal(dst[1], src[0], LEN);
}

static void test_copy_based(void **state)
{
	struct dvx_ht_mock_cfg c = { .mode = DVX_HT_CB, .nchannels = 3, .depth = 4 };

	(void)state;
	setup(&c);
	assert_int_equal(run(10000), 0);
	exchanged();
	/* what the algorithm called: one send and one receive per chunk, no control
	 * message in copy-based mode */
	assert_int_equal(A.calls[DVX_HT_MOCK_SEND_CHUNK] >= 100, 1);
	assert_int_equal(A.reqs[DVX_HT_MOCK_SEND_CHUNK], 100);
	assert_int_equal(A.reqs[DVX_HT_MOCK_RECV_CHUNK], 100);
	assert_int_equal(A.calls[DVX_HT_MOCK_SEND_CTRL], 0);
	assert_int_equal(A.bytes_sent, LEN);
	/* the window of 4 per channel made some sends wait (-EAGAIN) */
	assert_true(A.calls[DVX_HT_MOCK_SEND_CHUNK] > 100);
}

static void test_zero_copy(void **state)
{
	struct dvx_ht_mock_cfg c = { .mode = DVX_HT_ZC, .nchannels = 2, .delay = 3 };

	(void)state;
	setup(&c);
	assert_int_equal(run(10000), 0);
	exchanged();
	assert_int_equal(A.calls[DVX_HT_MOCK_EXPORT], 1);
	assert_int_equal(B.calls[DVX_HT_MOCK_IMPORT], 1);
	assert_int_equal(B.reqs[DVX_HT_MOCK_SEND_CTRL], 1);
}

static void test_connects_late(void **state)
{
	struct dvx_ht_mock_cfg c = { .mode = DVX_HT_ZC, .connect_after = 50 };
	struct dvx_ht_req q;
	uint8_t b = 1;

	(void)state;
	setup(&c);
	memset(&q, 0, sizeof(q));
	assert_int_equal(dvx_ht_send_ctrl(&A.ht, &b, 1, &q), -ENOTCONN);
	assert_int_equal(q.state, DVX_HT_RS_IDLE);
	assert_int_equal(run(10000), 0);
	exchanged();
	assert_true(A.calls[DVX_HT_MOCK_PROGRESS] >= 25);
}

static void test_refused_issue(void **state)
{
	struct dvx_ht_mock_cfg c = { .nchannels = 2 };

	(void)state;
	setup(&c);
	dvx_ht_mock_fail_call(&B, DVX_HT_MOCK_SEND_CHUNK, 17, -ENOMEM);
	assert_int_equal(run(10000), -ENOMEM);
	assert_int_equal(B.reqs[DVX_HT_MOCK_SEND_CHUNK], 16);	/* nothing issued by it */
}

static void test_failed_request(void **state)
{
	struct dvx_ht_mock_cfg c = { .nchannels = 2 };
	int err;

	(void)state;
	setup(&c);
	dvx_ht_mock_fail_req(&A, DVX_HT_MOCK_SEND_CHUNK, 9, -EHOSTUNREACH);
	/* whichever end looks first reports it: the request, or its partner */
	err = run(10000);
	assert_true(err == -EHOSTUNREACH || err == -EREMOTEIO);
	assert_int_equal(X[0].sq[8].state, DVX_HT_RS_DONE);
	assert_int_equal(X[0].sq[8].err, -EHOSTUNREACH);
	assert_int_equal(X[1].rq[8].state, DVX_HT_RS_DONE);
	assert_int_equal(X[1].rq[8].err, -EREMOTEIO);
}

static void test_failed_channel(void **state)
{
	struct dvx_ht_mock_cfg c = { .nchannels = 2, .delay = 1000 };

	(void)state;
	setup(&c);
	assert_int_equal(run(5), -ETIMEDOUT);	/* everything issued, nothing due */
	dvx_ht_mock_fail_channel(&A, 0, -ECANCELED);
	assert_int_equal(dvx_ht_status(&A.ht, 0), -ECANCELED);
	assert_int_equal(dvx_ht_status(&A.ht, 1), 0);
	assert_false(dvx_ht_ready(&A.ht, 0, DVX_HT_SEND));
	assert_true(dvx_ht_ready(&A.ht, 1, DVX_HT_RECV));
	assert_int_equal(run(10), -ECANCELED);
}

static void test_timeouts(void **state)
{
	struct dvx_ht_req q;
	struct dvx_ht_chunk k;
	uint8_t b[16];
	uint64_t before;

	(void)state;
	setup(NULL);
	memset(&q, 0, sizeof(q));
	memset(&k, 0, sizeof(k));
	k.buf = b;
	k.len = sizeof(b);
	assert_int_equal(dvx_ht_recv_chunk(&B.ht, &k, &q), 0);
	/* 10 us on the virtual clock: 10 progress calls, then -ETIMEDOUT, still in flight */
	before = B.calls[DVX_HT_MOCK_PROGRESS];
	assert_int_equal(dvx_ht_wait(&q, 10000), -ETIMEDOUT);
	assert_int_equal(B.calls[DVX_HT_MOCK_PROGRESS] - before, 10);
	assert_int_equal(q.state, DVX_HT_RS_BUSY);
	memset(b, 0, sizeof(b));
	{
		struct dvx_ht_req s;
		uint8_t v[16] = "the bytes";

		memset(&s, 0, sizeof(s));
		k.buf = v;
		assert_int_equal(dvx_ht_send_chunk(&A.ht, &k, &s), 0);
		assert_int_equal(dvx_ht_wait(&q, 10000), 0);
		assert_int_equal(dvx_ht_wait(&s, 0), 0);
		assert_memory_equal(b, v, sizeof(v));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copy_based),
		cmocka_unit_test(test_zero_copy),
		cmocka_unit_test(test_connects_late),
		cmocka_unit_test(test_refused_issue),
		cmocka_unit_test(test_failed_request),
		cmocka_unit_test(test_failed_channel),
		cmocka_unit_test(test_timeouts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
