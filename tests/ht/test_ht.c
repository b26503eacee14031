// SPDX-License-Identifier: MIT
/*
 * tests/ht/test_ht.c - the host transport on the software NIC, every rank driven from
 * one thread.
 */
#include <errno.h>

#include "../lib/dvx_test.h"
#include "hworld.h"

#define MIB (1ull << 20)

static struct hw W;

static void cfg_of(struct dvx_ht_ib_cfg *c, uint32_t mode, uint32_t nch)
{
	memset(c, 0, sizeof(*c));
	c->mode = mode;
	c->nchannels = nch;
}

static void round_trip(uint32_t mode, uint32_t nch, uint64_t max, uint64_t chunk)
{
	struct dvx_ht_ib_cfg c;
	uint64_t size;

	assert_int_equal(hw_init(&W, 2, max), 0);
	cfg_of(&c, mode, nch);
	assert_int_equal(hw_pair(&W, 0, 1, &c), 0);
	assert_int_equal(hw_connect(&W, 0, 1, 10 * HW_SEC), 0);
	for (size = 8; size <= max; size *= 8) {
		assert_int_equal(hw_xfer(&W, 0, 1, size, chunk, nch, (uint32_t)size), 0);
		assert_int_equal(hw_xfer(&W, 1, 0, size, chunk, nch, (uint32_t)size + 1), 0);
	}
	assert_int_equal(hw_fini(&W), 0);
}

static void test_zc_1(void **state)
{
	(void)state;
	round_trip(DVX_HT_ZC, 1, 8 * MIB, MIB);
}

static void test_cb_1(void **state)
{
	(void)state;
	round_trip(DVX_HT_CB, 1, 8 * MIB, 65536);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_zc_1),
		cmocka_unit_test(test_cb_1),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
