// SPDX-License-Identifier: MIT
/*
 * Mailbox field accessors: every setter writes exactly its own bits.
 */
#include "../lib/dvx_test.h"

#include <dvx/mlx5/ifc.h>

/* set every possible (hi, lo) field in a dword to all-ones over a background of
 * zeros and of ones, and check nothing else moved */
static void test_field_isolation(void **state)
{
	uint8_t buf[16], want[16];
	unsigned hi, lo;

	(void)state;
	for (hi = 0; hi < 32; hi++) {
		for (lo = 0; lo <= hi; lo++) {
			uint32_t mask = dvx_mlx5_field_mask(hi, lo);

			memset(buf, 0, sizeof(buf));
			dvx_mlx5_set(buf, 4, hi, lo, 0xffffffffu);
			memset(want, 0, sizeof(want));
			dvx_put_be32(want + 4, mask);
			assert_bytes_equal(buf, want, sizeof(buf));
			assert_int_equal(dvx_mlx5_get(buf, 4, hi, lo), mask >> lo);

			memset(buf, 0xff, sizeof(buf));
			dvx_mlx5_set(buf, 4, hi, lo, 0);
			memset(want, 0xff, sizeof(want));
			dvx_put_be32(want + 4, ~mask);
			assert_bytes_equal(buf, want, sizeof(buf));
		}
	}
}

/* a value wider than the field is truncated to it, not spilled into neighbours */
static void test_value_masked(void **state)
{
	uint8_t buf[8] = { 0 };

	(void)state;
	dvx_mlx5_set(buf, 0, 0, 0, 0xfffffffeu);	/* cd_master-style 1-bit field, even value */
	assert_int_equal(dvx_get_be32(buf), 0);
	dvx_mlx5_set(buf, 0, 23, 0, 0x12345678u);	/* 24-bit field */
	assert_int_equal(dvx_get_be32(buf), 0x00345678u);
	dvx_mlx5_set(buf, 0, 31, 24, 0xab);
	assert_int_equal(dvx_get_be32(buf), 0xab345678u);
	dvx_mlx5_set64(buf, 0, 0x0102030405060708ull);
	assert_int_equal(buf[0], 1);
	assert_int_equal(buf[7], 8);
	assert_true(dvx_mlx5_get64(buf, 0) == 0x0102030405060708ull);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_field_isolation),
		cmocka_unit_test(test_value_masked),
	};

	return cmocka_run_group_tests_name("mlx5-ifc", tests, NULL, NULL);
}
