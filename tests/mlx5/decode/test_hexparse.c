// SPDX-License-Identifier: MIT
/*
 * tools/hexparse.c: hex dumps as people paste them, and numbers on command lines.
 */
#include "../../lib/dvx_test.h"

#include <errno.h>

#include "../../../tools/hexparse.h"

static uint8_t out[256];
static char err[256];
static size_t n;

static int parse(const char *s)
{
	memset(out, 0xee, sizeof(out));
	return dvx_hexparse(s, strlen(s), out, sizeof(out), &n, err, sizeof(err));
}

static void expect_bytes(const char *s, const char *want_hex)
{
	uint8_t want[256];
	size_t wn = dvx_test_hex(want_hex, want, sizeof(want));

	if (parse(s)) {
		print_error("'%s': %s\n", s, err);
		fail();
	}
	assert_int_equal(n, wn);
	assert_bytes_equal(out, want, wn);
}

static void expect_error(const char *s, int rc, const char *msg_has)
{
	assert_int_equal(parse(s), rc);
	if (!strstr(err, msg_has)) {
		print_error("'%s': message '%s' lacks '%s'\n", s, err, msg_has);
		fail();
	}
}

static void test_accepted_forms(void **state)
{
	(void)state;
	expect_bytes("00 00 05 08", "00000508");
	expect_bytes("00000508", "00000508");
	expect_bytes("0x00 0x00 0x05 0x08", "00000508");
	expect_bytes("0x00000508 0X0001", "000005080001");
	expect_bytes("AbCdEf", "abcdef");
	expect_bytes("  \t00\n\n01\r\n02  ", "000102");
	expect_bytes("00,01, 02|03 | 04", "0001020304");
	expect_bytes("", "");
	expect_bytes("# only a comment\n", "");
	expect_bytes("00 01 # comment 0g zz\n02", "000102");
	expect_bytes("00#x\n01", "0001");
	/* offset labels: any first value, then byte counts */
	expect_bytes("00: 00 00 05 08\n04: 00 01 23 03", "0000050800012303");
	expect_bytes("0000: 00112233 44556677 8899aabb ccddeeff\n"
		     "0010: 00112233", "00112233445566778899aabbccddeeff00112233");
	expect_bytes("0x40: 01 02\n0x42: 03", "010203");
	expect_bytes("0140: 01 02 03 04\n0144: 05", "0102030405");	/* cut from a ring */
	expect_bytes("aa 10: bb", "aabb");	/* a first label may follow bytes */
	/* prm 2.8's worked-example style */
	expect_bytes("00: 00 00 05 08 | 04: 00 01 23 03 | 08: 00 00 00 08 | 0C: 00 00 00 00",
		     "00000508 00012303 00000008 00000000");
}

static void test_rejected_forms(void **state)
{
	(void)state;
	expect_error("00 0", -EINVAL, "odd number of hex digits in '0'");
	expect_error("000", -EINVAL, "odd number");
	expect_error("0x5", -EINVAL, "odd number");
	expect_error("00 zz", -EINVAL, "not hex: 'zz'");
	expect_error("00 0g", -EINVAL, "not hex");
	expect_error("0x", -EINVAL, "no hex digits");
	expect_error("00 :", -EINVAL, "no hex digits");
	expect_error("00 -1", -EINVAL, "not hex");
	expect_error("00 01:02", -EINVAL, "not hex");
	expect_error("00: 00 00\n08: 00", -EINVAL, "offset label is not the byte count 0x2");
	expect_error("00: 00 00\n00: 00", -EINVAL, "offset label");
	expect_error("00000000000000000: 00", -EINVAL, "label too long");
	/* where: line and column of the token */
	expect_error("00 01\n02 03 xyz", -EINVAL, "line 2, column 7");
	/* bytes before the bad token are reported */
	parse("01 02 zz");
	assert_int_equal(n, 2);
}

static void test_limits(void **state)
{
	uint8_t small[4];
	const char *s = "00 01 02 03 04";

	(void)state;
	assert_int_equal(dvx_hexparse(s, strlen(s), small, sizeof(small), &n, err, sizeof(err)),
			 -E2BIG);
	assert_int_equal(n, 4);
	assert_non_null(strstr(err, "more than 4 bytes"));
	assert_int_equal(dvx_hexparse(s, 11, small, sizeof(small), &n, NULL, 0), 0);
	assert_int_equal(n, 4);
	/* not NUL-terminated input: only @n bytes are read */
	assert_int_equal(dvx_hexparse("0102zz", 4, out, sizeof(out), &n, err, sizeof(err)), 0);
	assert_int_equal(n, 2);
	/* a long token is quoted shortened */
	{
		char big[200];

		memset(big, 'q', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		assert_int_equal(parse(big), -EINVAL);
		assert_non_null(strstr(err, "...'"));
		assert_true(strlen(err) < 120);
	}
}

static void test_numbers(void **state)
{
	uint64_t v = 7;

	(void)state;
	assert_int_equal(dvx_parse_u64("0", 10, &v), 0);
	assert_true(v == 0);
	assert_int_equal(dvx_parse_u64("4096", UINT64_MAX, &v), 0);
	assert_true(v == 4096);
	assert_int_equal(dvx_parse_u64("0x1000", UINT64_MAX, &v), 0);
	assert_true(v == 0x1000);
	assert_int_equal(dvx_parse_u64("0XfF", 0xff, &v), 0);
	assert_true(v == 0xff);
	assert_int_equal(dvx_parse_u64("0xffffffffffffffff", UINT64_MAX, &v), 0);
	assert_true(v == UINT64_MAX);
	assert_int_equal(dvx_parse_u64("18446744073709551615", UINT64_MAX, &v), 0);
	assert_true(v == UINT64_MAX);
	v = 7;
	assert_int_equal(dvx_parse_u64("18446744073709551616", UINT64_MAX, &v), -ERANGE);
	assert_int_equal(dvx_parse_u64("0x10000000000000000", UINT64_MAX, &v), -ERANGE);
	assert_int_equal(dvx_parse_u64("0x10000", 0xffff, &v), -ERANGE);
	assert_int_equal(dvx_parse_u64("16777216", 0xffffff, &v), -ERANGE);
	assert_true(v == 7);	/* untouched on error */
	assert_int_equal(dvx_parse_u64("", 10, &v), -EINVAL);
	assert_int_equal(dvx_parse_u64("0x", 10, &v), -EINVAL);
	assert_int_equal(dvx_parse_u64("-1", 10, &v), -EINVAL);
	assert_int_equal(dvx_parse_u64("12a", 1000, &v), -EINVAL);
	assert_int_equal(dvx_parse_u64("ff", 1000, &v), -EINVAL);	/* hex needs 0x */
	assert_int_equal(dvx_parse_u64(" 1", 10, &v), -EINVAL);
	assert_int_equal(dvx_parse_u64("1 ", 10, &v), -EINVAL);
	assert_int_equal(dvx_parse_u64(NULL, 10, &v), -EINVAL);
	/* too many digits, then not a number: not a number (found by the libFuzzer
	 * harness, tests/fuzz/regress/hex/u64-overflow-then-not-a-number) */
	assert_int_equal(dvx_parse_u64("99999999999999999999x", UINT64_MAX, &v), -EINVAL);
	assert_int_equal(dvx_parse_u64("0x1ffffffffffffffffg", UINT64_MAX, &v), -EINVAL);
	assert_true(v == 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepted_forms),
		cmocka_unit_test(test_rejected_forms),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_numbers),
	};

	return cmocka_run_group_tests_name("decode-hexparse", tests, NULL, NULL);
}
