// SPDX-License-Identifier: MIT
/*
 * The NVLink operations written once for host and GPU (dvx/nvl/ops.h), on the host:
 * the cooperative copy for every length up to 300 bytes and larger ones, every pair of
 * source and destination alignments, 1 to 64 lanes run one after another and as
 * threads (each byte written once, nothing outside the range touched); signals (SET,
 * ADD, an unknown operation); waits for every comparison, a timeout that is an error
 * and leaves the word alone; put-then-signal between threads (the data is there when
 * the signal is); counters.
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copy),
		cmocka_unit_test(test_copy_threads),
		cmocka_unit_test(test_put_signal_threads),
		cmocka_unit_test(test_signal_wait),
	};

	return cmocka_run_group_tests_name("mp-nvl-ops", tests, NULL, NULL);
}
