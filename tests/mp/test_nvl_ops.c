// SPDX-License-Identifier: MIT
/*
 * The NVLink operations written once for host and GPU (dvx/nvl/ops.h), on the host:
 * the cooperative copy for every length up to 300 bytes and larger ones, every pair of
 * source and destination alignments, 1 to 64 lanes run one after another and as
 * threads (each byte written once, nothing outside the range touched); signals (SET,
 * ADD, an unknown operation); waits for every comparison, a timeout that is an error
 * and leaves the word alone; put-then-signal between threads (the data is there when
 * the signal is); counters; flagged lines (every length to 300 and around
 * DVX_NVL_LL_MAX, every alignment, 1 to 64 lanes, the refusals, a timeout, a line half
 * written, a tagged header, two threads ping-ponging 5000 rounds on the same lines).
 */
#include <errno.h>
#include <pthread.h>

#include "../lib/dvx_test.h"

#include <dvx/nvl/ops.h>

#define CAP 4096

static uint8_t srcb[CAP + 64], dstb[CAP + 64];

static void check_copy(uint64_t len, unsigned so, unsigned dof, uint32_t nlanes)
{
	uint64_t i;
	uint32_t l;

	for (i = 0; i < sizeof(srcb); i++) {
		srcb[i] = (uint8_t)(i * 7 + 3);
		dstb[i] = 0xee;
	}
	for (l = 0; l < nlanes; l++)
		dvx_nvl_copy(dstb + dof, srcb + so, len, l, nlanes);
	for (i = 0; i < sizeof(dstb); i++) {
		uint8_t want = (i >= dof && i < dof + len) ? srcb[so + (i - dof)] : 0xee;

		if (dstb[i] != want)
			fail_msg("len %llu src+%u dst+%u lanes %u: byte %llu is %#x, want %#x",
				 (unsigned long long)len, so, dof, nlanes, (unsigned long long)i,
				 dstb[i], want);
	}
}

static void test_copy(void **state)
{
	static const uint32_t lanes[] = { 1, 2, 3, 7, 32, 64 };
	uint64_t len;
	unsigned so, dof;
	size_t k;

	(void)state;
	for (len = 0; len <= 300; len++)
		for (so = 0; so < 17; so += (len < 40 ? 1 : 4))
			for (dof = 0; dof < 17; dof += (len < 40 ? 1 : 5))
				for (k = 0; k < DVX_ARRAY_SIZE(lanes); k++)
					check_copy(len, so, dof, lanes[k]);
	for (k = 0; k < DVX_ARRAY_SIZE(lanes); k++) {
		check_copy(CAP, 0, 0, lanes[k]);
		check_copy(CAP - 16, 16, 32, lanes[k]);
		check_copy(CAP - 24, 8, 0, lanes[k]);
		check_copy(CAP - 40, 3, 35, lanes[k]);
	}
}

/* ---- threads as lanes, and put-then-signal between threads ---- */

struct lane_arg {
	uint8_t *dst;
	const uint8_t *src;
	uint64_t len;
	uint32_t lane, nlanes;
};

static void *lane_run(void *arg)
{
	struct lane_arg *a = arg;

	dvx_nvl_copy(a->dst, a->src, a->len, a->lane, a->nlanes);
	return NULL;
}

static void test_copy_threads(void **state)
{
	enum { N = 8, LEN = 1 << 20 };
	static uint8_t s[LEN], d[LEN];
	pthread_t th[N];
	struct lane_arg a[N];
	uint32_t i;

	(void)state;
	for (i = 0; i < LEN; i++)
		s[i] = (uint8_t)(i * 13);
	for (i = 0; i < N; i++) {
		a[i] = (struct lane_arg){ d + 1, s + 1, LEN - 2, i, N };
		assert_int_equal(pthread_create(&th[i], NULL, lane_run, &a[i]), 0);
	}
	for (i = 0; i < N; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(d[0], 0);
	assert_memory_equal(d + 1, s + 1, LEN - 2);
	assert_int_equal(d[LEN - 1], 0);
}

static uint64_t sig, ctr;
static uint8_t box[4096];

static void *sender(void *arg)
{
	uint32_t r;
	uint8_t src[4096];

	(void)arg;
	for (r = 1; r <= 2000; r++) {
		memset(src, (int)(r & 0xff), sizeof(src));
		/* wait until the receiver took the last round */
		if (dvx_nvl_wait(&ctr, DVX_CMP_GE, r - 1, 10000000000ull, NULL))
			return (void *)1;
		dvx_nvl_copy(box, src, sizeof(box), 0, 1);
		dvx_nvl_signal(&sig, DVX_NVL_SIG_ADD, 1);
	}
	return NULL;
}

static void test_put_signal_threads(void **state)
{
	pthread_t th;
	uint32_t r, i;
	void *ret;

	(void)state;
	sig = 0;
	ctr = 0;
	assert_int_equal(pthread_create(&th, NULL, sender, NULL), 0);
	for (r = 1; r <= 2000; r++) {
		assert_int_equal(dvx_nvl_wait(&sig, DVX_CMP_GE, r, 10000000000ull, NULL), 0);
		for (i = 0; i < sizeof(box); i++)
			if (box[i] != (uint8_t)(r & 0xff))
				fail_msg("round %u: byte %u is %u", r, i, box[i]);
		dvx_nvl_counter_add(&ctr, 1);
	}
	pthread_join(th, &ret);
	assert_null(ret);
}

static void test_signal_wait(void **state)
{
	uint64_t w = 5, seen = 0, t0;

	(void)state;
	assert_int_equal(dvx_nvl_signal(&w, DVX_NVL_SIG_ADD, 3), 0);
	assert_int_equal(dvx_nvl_read(&w), 8);
	assert_int_equal(dvx_nvl_signal(&w, DVX_NVL_SIG_SET, 2), 0);
	assert_int_equal(w, 2);
	assert_int_equal(dvx_nvl_signal(&w, 9, 2), -EINVAL);
	assert_int_equal(w, 2);
	assert_int_equal(dvx_nvl_wait(&w, DVX_CMP_GE, 2, 0, &seen), 0);
	assert_int_equal(seen, 2);
	assert_int_equal(dvx_nvl_wait(&w, DVX_CMP_GT, 1, 0, NULL), 0);
	assert_int_equal(dvx_nvl_wait(&w, DVX_CMP_EQ, 2, 0, NULL), 0);
	assert_int_equal(dvx_nvl_wait(&w, DVX_CMP_NE, 3, 0, NULL), 0);
	assert_int_equal(dvx_nvl_wait(&w, DVX_CMP_LE, 2, 0, NULL), 0);
	assert_int_equal(dvx_nvl_wait(&w, DVX_CMP_LT, 3, 0, NULL), 0);
	assert_int_equal(dvx_nvl_wait(&w, 17, 3, 0, NULL), -EINVAL);
	/* not satisfied: a timeout, an error, the word untouched */
	t0 = dvx_nvl_now_ns();
	assert_int_equal(dvx_nvl_wait(&w, DVX_CMP_GT, 2, 20000000ull, &seen), -ETIMEDOUT);
	assert_true(dvx_nvl_now_ns() - t0 >= 20000000ull);
	assert_int_equal(seen, 2);
	assert_int_equal(w, 2);
	assert_int_equal(dvx_nvl_wait(&w, DVX_CMP_LT, 2, 0, NULL), -ETIMEDOUT);
	dvx_nvl_counter_add(&w, 40);
	assert_int_equal(w, 42);
	dvx_nvl_flush();
}

/* ---- flagged lines -------------------------------------------------------------- */

static uint64_t llbuf[2][(2 * CAP + 64) / 8] DVX_ALIGNED(16);

/* every length to 300 and around the threshold, every source and destination
 * alignment, 1 to 64 lanes: the lines carry the bytes, the flags the sequence, the
 * destination is written exactly where it should be */
static void check_ll(uint64_t len, unsigned so, unsigned dof, uint32_t nlanes, uint32_t seq)
{
	uint8_t *lines = (uint8_t *)llbuf[0];
	uint64_t i, n = dvx_nvl_ll_bytes(len) / DVX_NVL_LL_LINE;
	uint32_t l;

	for (i = 0; i < sizeof(srcb); i++) {
		srcb[i] = (uint8_t)(i * 7 + seq);
		dstb[i] = 0xee;
	}
	memset(lines, 0, sizeof(llbuf[0]));
	for (l = 0; l < nlanes; l++)
		assert_int_equal(dvx_nvl_ll_put(lines, srcb + so, len, seq, l, nlanes), 0);
	for (i = 0; i < n; i++) {
		uint64_t w0, w1;

		dvx_nvl_ll_load(lines + i * 16, &w0, &w1);
		assert_int_equal(w0 >> 32, seq);
		assert_int_equal(w1 >> 32, seq);
	}
	assert_int_equal(((uint64_t *)lines)[2 * n], 0);	/* nothing past the lines */
	for (l = 0; l < nlanes; l++)
		assert_int_equal(dvx_nvl_ll_get(lines, dstb + dof, len, seq, l, nlanes, 0), 0);
	for (i = 0; i < sizeof(dstb); i++) {
		uint8_t want = (i >= dof && i < dof + len) ? srcb[so + (i - dof)] : 0xee;

		if (dstb[i] != want)
			fail_msg("ll len %llu src+%u dst+%u lanes %u: byte %llu is %#x, want %#x",
				 (unsigned long long)len, so, dof, nlanes, (unsigned long long)i,
				 dstb[i], want);
	}
}

static void test_ll(void **state)
{
	static const uint32_t lanes[] = { 1, 2, 3, 7, 32, 64 };
	uint64_t len;
	unsigned so, dof;
	size_t k;

	(void)state;
	assert_int_equal(dvx_nvl_ll_bytes(0), 16);
	assert_int_equal(dvx_nvl_ll_bytes(1), 16);
	assert_int_equal(dvx_nvl_ll_bytes(8), 16);
	assert_int_equal(dvx_nvl_ll_bytes(9), 32);
	for (len = 0; len <= 300; len++)
		for (so = 0; so < 9; so += (len < 40 ? 1 : 4))
			for (dof = 0; dof < 9; dof += (len < 40 ? 1 : 3))
				for (k = 0; k < DVX_ARRAY_SIZE(lanes); k++)
					check_ll(len, so, dof, lanes[k], (uint32_t)(len * 3 + 1));
	for (k = 0; k < DVX_ARRAY_SIZE(lanes); k++) {
		check_ll(DVX_NVL_LL_MAX - 1, 1, 0, lanes[k], 0xffffffffu);
		check_ll(DVX_NVL_LL_MAX, 0, 0, lanes[k], 7);
		check_ll(DVX_NVL_LL_MAX + 1, 0, 3, lanes[k], 0x80000000u);
		check_ll(CAP, 8, 8, lanes[k], 2);
	}
}

static void test_ll_refusals(void **state)
{
	uint8_t *lines = (uint8_t *)llbuf[0];
	uint64_t t0;

	(void)state;
	memset(lines, 0, 64);
	srcb[0] = 1;
	/* sequence 0 and misaligned lines: -EINVAL, nothing written */
	assert_int_equal(dvx_nvl_ll_put(lines, srcb, 8, 0, 0, 1), -EINVAL);
	assert_int_equal(dvx_nvl_ll_put(lines + 8, srcb, 8, 1, 0, 1), -EINVAL);
	assert_int_equal(((uint64_t *)lines)[0] | ((uint64_t *)lines)[1] | ((uint64_t *)lines)[2], 0);
	assert_int_equal(dvx_nvl_ll_get(lines, dstb, 8, 0, 0, 1, 0), -EINVAL);
	assert_int_equal(dvx_nvl_ll_get(lines + 8, dstb, 8, 1, 0, 1, 0), -EINVAL);
	/* lines never written, or of another sequence: a timeout, lines untouched */
	t0 = dvx_nvl_now_ns();
	assert_int_equal(dvx_nvl_ll_get(lines, dstb, 8, 1, 0, 1, 10000000ull), -ETIMEDOUT);
	assert_true(dvx_nvl_now_ns() - t0 >= 10000000ull);
	assert_int_equal(dvx_nvl_ll_put(lines, srcb, 24, 5, 0, 1), 0);
	assert_int_equal(dvx_nvl_ll_get(lines, dstb, 24, 6, 0, 1, 1000000ull), -ETIMEDOUT);
	/* one word of a line carrying the sequence is not the line */
	((uint64_t *)lines)[3] &= 0xffffffffu;
	assert_int_equal(dvx_nvl_ll_get(lines, dstb, 24, 5, 0, 1, 1000000ull), -ETIMEDOUT);
	((uint64_t *)lines)[3] |= 5ull << 32;
	assert_int_equal(dvx_nvl_ll_get(lines, dstb, 24, 5, 0, 1, 0), 0);
}

/* a header line with a tag before the payload: taken only under the right tag */
static void test_ll_tagged(void **state)
{
	uint8_t *hdr = (uint8_t *)llbuf[0];	/* the lines follow it */
	uint64_t len;

	(void)state;
	for (len = 0; len <= 100; len++) {
		uint64_t i;

		memset(llbuf[0], 0, sizeof(llbuf[0]));
		memset(dstb, 0xee, sizeof(dstb));
		for (i = 0; i < len; i++)
			srcb[i] = (uint8_t)(i + len);
		assert_int_equal(dvx_nvl_ll_put_tagged(hdr, len | (len << 40), srcb, len, 9, 0, 1), 0);
		/* another tag: -EMSGSIZE, nothing taken */
		assert_int_equal(dvx_nvl_ll_get_tagged(hdr, len + 1, dstb, len, 9, 0, 1, 0),
				 -EMSGSIZE);
		assert_int_equal(dstb[0], 0xee);
		/* another sequence: not there */
		assert_int_equal(dvx_nvl_ll_get_tagged(hdr, len | (len << 40), dstb, len, 8, 0, 1,
						       1000000ull), -ETIMEDOUT);
		assert_int_equal(dvx_nvl_ll_get_tagged(hdr, len | (len << 40), dstb, len, 9, 0, 1,
						       0), 0);
		assert_memory_equal(dstb, srcb, len);
		assert_int_equal(dstb[len], 0xee);
		/* 16 lanes, each its share (a line a lane at most up to 128 bytes) */
		memset(dstb, 0xee, sizeof(dstb));
		for (i = 0; i < 16; i++)
			assert_int_equal(dvx_nvl_ll_get_tagged(hdr, len | (len << 40), dstb, len, 9,
							       (uint32_t)i, 16, 0), 0);
		assert_memory_equal(dstb, srcb, len);
		assert_int_equal(dstb[len], 0xee);
		for (i = 0; i < 16 && len; i++)
			assert_int_equal(dvx_nvl_ll_get_tagged(hdr, len, dstb, len, 9, (uint32_t)i, 16,
							       0), i * 8 < len ? -EMSGSIZE : 0);
	}
	assert_int_equal(dvx_nvl_ll_put_tagged(hdr + 8, 1, srcb, 8, 1, 0, 1), -EINVAL);
	assert_int_equal(dvx_nvl_ll_get_tagged(hdr + 8, 1, dstb, 8, 1, 0, 1, 0), -EINVAL);
}

/* two threads ping-pong 5000 rounds on the same lines (sequence = round, lengths
 * changing every round), each checking every byte it takes */
static void *ll_side(void *arg)
{
	int me = (int)(uintptr_t)arg;
	uint8_t *mine = (uint8_t *)llbuf[me], *peer = (uint8_t *)llbuf[1 - me];
	uint8_t out[600], in[600];
	uint32_t r, i;

	for (r = 1; r <= 5000; r++) {
		uint64_t len = (r * 37) % 600;

		if (me == 0) {
			for (i = 0; i < len; i++)
				out[i] = (uint8_t)(r + i);
			if (dvx_nvl_ll_put(peer, out, len, r, 0, 1) ||
			    dvx_nvl_ll_get(mine, in, len, r, 0, 1, 10000000000ull))
				return (void *)1;
		} else {
			if (dvx_nvl_ll_get(mine, in, len, r, 0, 1, 10000000000ull))
				return (void *)1;
			for (i = 0; i < len; i++)
				if (in[i] != (uint8_t)(r + i))
					return (void *)2;
			if (dvx_nvl_ll_put(peer, in, len, r, 0, 1))
				return (void *)1;
		}
		if (me == 0)
			for (i = 0; i < len; i++)
				if (in[i] != (uint8_t)(r + i))
					return (void *)2;
	}
	return NULL;
}

static void test_ll_threads(void **state)
{
	pthread_t th;
	void *ret, *ret0;

	(void)state;
	memset(llbuf, 0, sizeof(llbuf));
	assert_int_equal(pthread_create(&th, NULL, ll_side, (void *)(uintptr_t)1), 0);
	ret0 = ll_side((void *)(uintptr_t)0);
	pthread_join(th, &ret);
	assert_null(ret0);
	assert_null(ret);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copy),
		cmocka_unit_test(test_copy_threads),
		cmocka_unit_test(test_put_signal_threads),
		cmocka_unit_test(test_signal_wait),
		cmocka_unit_test(test_ll),
		cmocka_unit_test(test_ll_refusals),
		cmocka_unit_test(test_ll_tagged),
		cmocka_unit_test(test_ll_threads),
	};

	return cmocka_run_group_tests_name("mp-nvl-ops", tests, NULL, NULL);
}
