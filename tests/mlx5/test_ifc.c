// SPDX-License-Identifier: MIT
/*
 * Mailbox field accessors: every setter writes exactly its own bits; the byte order
 * helpers as bytes in memory.
 */
#include "../lib/dvx_test.h"

#include <dvx/byteorder.h>
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

/* the byte order helpers, as bytes in memory: big-endian for the hardware, little-endian
 * for dvx's exchanged records, the same both ways */
static void test_byteorder_bytes(void **state)
{
	static const uint8_t be[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	static const uint8_t le[8] = { 8, 7, 6, 5, 4, 3, 2, 1 };
	const uint64_t v64 = 0x0102030405060708ull;
	const uint32_t v32 = 0x01020304u;
	const uint16_t v16 = 0x0102u;
	dvx_be64 b64 = dvx_cpu_to_be64(v64);
	dvx_be32 b32 = dvx_cpu_to_be32(v32);
	dvx_be16 b16 = dvx_cpu_to_be16(v16);
	uint64_t l64 = dvx_le64(v64);
	uint32_t l32 = dvx_le32(v32);
	uint16_t l16 = dvx_le16(v16);

	(void)state;
	assert_bytes_equal(&b64, be, 8);
	assert_bytes_equal(&b32, be, 4);
	assert_bytes_equal(&b16, be, 2);
	assert_bytes_equal(&l64, le, 8);
	assert_bytes_equal(&l32, le + 4, 4);
	assert_bytes_equal(&l16, le + 6, 2);
	assert_true(dvx_be64_to_cpu(b64) == v64 && dvx_le64(l64) == v64);
	assert_int_equal(dvx_be32_to_cpu(b32), v32);
	assert_int_equal(dvx_le32(l32), v32);
	assert_int_equal(dvx_be16_to_cpu(b16), v16);
	assert_int_equal(dvx_le16(l16), v16);
	assert_int_equal(dvx_get_be32(be), v32);
	assert_true(dvx_swab64(v64) == 0x0807060504030201ull);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_field_isolation),
		cmocka_unit_test(test_value_masked),
		cmocka_unit_test(test_byteorder_bytes),
	};

	return cmocka_run_group_tests_name("mlx5-ifc", tests, NULL, NULL);
}
