// SPDX-License-Identifier: MIT
/*
 * examples/ht-mock-test.c - a user's cmocka test of code written against the host
 * transport's interface (dvx/ht/ht.h), run on the interface mock of libdvx-test.a:
 * two ends in one process, no NIC, a virtual clock.
 *
 *   cc ht-mock-test.c $(pkg-config --cflags --libs dvx-test) -lcmocka -o ht-mock-test
 *
 * The "user code" is ask() (a question and its answer as control messages) and push()
 * (a buffer as chunks on channel 0). In one thread the test posts the other end's
 * side first, then calls the user code, and checks what it returns for an answer, a
 * failed request, a silent peer (a timeout, exact on the mock's clock) and a peer not
 * connected yet.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <dvx/ht/ht.h>
#include <dvx/testing/ht_mock.h>

/* ---- the user's code under test ---- */

/* what ask() keeps in flight: the caller's, as requests must not move while the
 * transport has them (a timed-out ask() leaves them there: wait on them again) */
struct ask {
	struct dvx_ht_req s, r;
};

/* send @q, receive the answer into @a; 0, or the first error */
static int ask(struct dvx_ht *t, struct ask *x, const void *q, size_t qlen, void *a,
	       size_t alen, uint64_t timeout_ns)
{
	int err;

	err = dvx_ht_recv_ctrl(t, a, alen, &x->r);
	if (err)
		return err;
	err = dvx_ht_send_ctrl(t, q, qlen, &x->s);
	if (!err)
		err = dvx_ht_wait(&x->s, timeout_ns);
	if (!err)
		err = dvx_ht_wait(&x->r, timeout_ns);
	return err;
}

/* @len bytes as chunks of the transport's largest size on channel 0, one at a time */
static int push(struct dvx_ht *t, const uint8_t *buf, uint64_t len, uint64_t timeout_ns)
{
	struct dvx_ht_chunk k;
	struct dvx_ht_req s;
	uint64_t off;
	int err;

	memset(&s, 0, sizeof(s));
	for (off = 0; off < len; off += k.len) {
		memset(&k, 0, sizeof(k));
		k.buf = (void *)(uintptr_t)(buf + off);
		k.len = len - off < t->max_chunk ? len - off : t->max_chunk;
		err = dvx_ht_send_chunk(t, &k, &s);
		if (!err)
			err = dvx_ht_wait(&s, timeout_ns);
		if (err)
			return err;
	}
	return 0;
}

/* ---- the tests ---- */

static struct dvx_ht_mock a, b;
static struct ask x;

static void pair(uint32_t connect_after)
{
	struct dvx_ht_mock_cfg c = { .mode = DVX_HT_CB, .max_chunk = 4096,
				     .connect_after = connect_after };

	assert_int_equal(dvx_ht_mock_pair(&a, &b, &c), 0);
	memset(&x, 0, sizeof(x));
}

static void test_answer(void **state)
{
	struct dvx_ht_req sr, ss;
	char q[16] = "", ans[16] = "";

	(void)state;
	pair(0);
	memset(&sr, 0, sizeof(sr));
	memset(&ss, 0, sizeof(ss));
	/* the other end: ready for the question, the answer on its way */
	assert_int_equal(dvx_ht_recv_ctrl(&b.ht, q, sizeof(q), &sr), 0);
	assert_int_equal(dvx_ht_send_ctrl(&b.ht, "42", 3, &ss), 0);
	assert_int_equal(ask(&a.ht, &x, "answer?", 8, ans, sizeof(ans), 1000000), 0);
	assert_string_equal(ans, "42");
	assert_int_equal(dvx_ht_wait(&sr, 0), 0);
	assert_string_equal(q, "answer?");
	assert_int_equal(a.calls[DVX_HT_MOCK_SEND_CTRL], 1);
}

static void test_failed(void **state)
{
	struct dvx_ht_req sr;
	char q[16], ans[16];

	(void)state;
	pair(0);
	memset(&sr, 0, sizeof(sr));
	assert_int_equal(dvx_ht_recv_ctrl(&b.ht, q, sizeof(q), &sr), 0);
	dvx_ht_mock_fail_req(&a, DVX_HT_MOCK_SEND_CTRL, 1, -EIO);
	assert_int_equal(ask(&a.ht, &x, "answer?", 8, ans, sizeof(ans), 1000000), -EIO);
	assert_int_equal(dvx_ht_wait(&sr, 0), -EREMOTEIO);	/* its partner */
}

static void test_silent_peer(void **state)
{
	char ans[16];

	(void)state;
	pair(0);
	/* nobody answers: 50 us on the mock's clock are 50 progress calls */
	assert_int_equal(ask(&a.ht, &x, "anyone?", 8, ans, sizeof(ans), 50000), -ETIMEDOUT);
	assert_true(a.calls[DVX_HT_MOCK_PROGRESS] >= 50);
}

static void test_not_connected(void **state)
{
	char ans[16];

	(void)state;
	pair(100);
	assert_int_equal(ask(&a.ht, &x, "early?", 7, ans, sizeof(ans), 1000000), -ENOTCONN);
	assert_int_equal(dvx_ht_wait_connected(&a.ht, 1000000), 0);
}

static void test_push(void **state)
{
	static uint8_t src[10000], dst[10000];
	struct dvx_ht_req r[3];
	struct dvx_ht_chunk k;
	int i;

	(void)state;
	pair(0);
	for (i = 0; i < (int)sizeof(src); i++)
		src[i] = (uint8_t)(i * 13);
	memset(r, 0, sizeof(r));
	for (i = 0; i < 3; i++) {	/* 4096 + 4096 + 1808 */
		memset(&k, 0, sizeof(k));
		k.buf = dst + i * 4096;
		k.len = 4096;
		assert_int_equal(dvx_ht_recv_chunk(&b.ht, &k, &r[i]), 0);
	}
	assert_int_equal(push(&a.ht, src, sizeof(src), 1000000), 0);
	for (i = 0; i < 3; i++)
		assert_int_equal(dvx_ht_wait(&r[i], 0), 0);
	assert_int_equal(r[2].bytes, 10000 - 2 * 4096);
	assert_memory_equal(dst, src, sizeof(src));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_answer),
		cmocka_unit_test(test_failed),
		cmocka_unit_test(test_silent_peer),
		cmocka_unit_test(test_not_connected),
		cmocka_unit_test(test_push),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
