// SPDX-License-Identifier: MIT
/*
 * The hash under the sockets bootstrap's handshake (core/bootstrap/hmac.c): SHA-256
 * against the examples of FIPS 180-2 appendix B and NIST's empty message, HMAC-SHA-256
 * against the seven test cases of RFC 4231 section 4; the same digests when the message
 * comes in pieces of every size across the block boundaries; a prepared key used for
 * many messages; the constant-time compare and the wipe.
 */
#include <errno.h>

#include "../lib/dvx_test.h"

#include <dvx/compiler.h>

#include "../../core/bootstrap/hmac.h"

static void unhex(const char *h, uint8_t *out, size_t n)
{
	size_t i;

	assert_int_equal(strlen(h), 2 * n);
	for (i = 0; i < n; i++) {
		unsigned v;

		assert_int_equal(sscanf(h + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
}

static void check_digest(const uint8_t *got, const char *want_hex, size_t n)
{
	uint8_t want[DVX_BS_SHA256_BYTES];

	unhex(want_hex, want, n);
	assert_memory_equal(got, want, n);
}

/* FIPS 180-2 appendix B.1-B.3, the empty message, and the two-block message of
 * FIPS 180-4's examples (896 bits). */
static void test_sha256_vectors(void **state)
{
	static const struct {
		const char *msg;
		const char *digest;
	} v[] = {
		{ "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
		{ "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
		{ "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnop"
		  "qklmnopqrlmnopqrsmnopqrstnopqrstu",
		  "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1" },
	};
	uint8_t out[DVX_BS_SHA256_BYTES];
	struct dvx_bs_sha256 c;
	size_t i, k;

	(void)state;
	for (i = 0; i < DVX_ARRAY_SIZE(v); i++) {
		dvx_bs_sha256(v[i].msg, strlen(v[i].msg), out);
		check_digest(out, v[i].digest, sizeof(out));
		/* a byte at a time */
		dvx_bs_sha256_init(&c);
		for (k = 0; k < strlen(v[i].msg); k++)
			dvx_bs_sha256_update(&c, v[i].msg + k, 1);
		dvx_bs_sha256_final(&c, out);
		check_digest(out, v[i].digest, sizeof(out));
	}
}

/* B.3: one million 'a', fed in uneven pieces (1, 2, ... 127 bytes, then the rest). */
static void test_sha256_million(void **state)
{
	uint8_t chunk[1000], out[DVX_BS_SHA256_BYTES];
	struct dvx_bs_sha256 c;
	size_t left = 1000000, n = 1;

	(void)state;
	memset(chunk, 'a', sizeof(chunk));
	dvx_bs_sha256_init(&c);
	while (left) {
		size_t k = n < left ? n : left;

		if (k > sizeof(chunk))
			k = sizeof(chunk);
		dvx_bs_sha256_update(&c, chunk, k);
		left -= k;
		n = n % 127 + 1;
		if (left < 200000)
			n = 1000;	/* the rest in big pieces */
	}
	dvx_bs_sha256_final(&c, out);
	check_digest(out, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
		     sizeof(out));
}

/* Every length from 0 to 200 (the padding's one- and two-block cases, 55, 56, 63, 64,
 * 119, 120 ...), every split point: the same digest as in one piece. */
static void test_sha256_splits(void **state)
{
	uint8_t msg[200], one[DVX_BS_SHA256_BYTES], two[DVX_BS_SHA256_BYTES];
	struct dvx_bs_sha256 c;
	size_t len, cut;

	(void)state;
	for (len = 0; len < sizeof(msg); len++)
		msg[len] = (uint8_t)(len * 7 + 3);
	for (len = 0; len <= sizeof(msg); len++) {
		dvx_bs_sha256(msg, len, one);
		for (cut = 0; cut <= len; cut += (len > 130 ? 7 : 1)) {
			dvx_bs_sha256_init(&c);
			dvx_bs_sha256_update(&c, msg, cut);
			dvx_bs_sha256_update(&c, NULL, 0);
			dvx_bs_sha256_update(&c, msg + cut, len - cut);
			dvx_bs_sha256_final(&c, two);
			assert_memory_equal(one, two, sizeof(one));
		}
	}
	/* and two different messages differ (the digests are not all the same) */
	dvx_bs_sha256(msg, 10, one);
	dvx_bs_sha256(msg, 11, two);
	assert_memory_not_equal(one, two, sizeof(one));
}

/* RFC 4231 section 4: test cases 1 to 7 (case 5 is checked on its first 128 bits, as
 * the RFC gives it truncated). */
static void test_hmac_rfc4231(void **state)
{
	uint8_t key[131], data[160], out[DVX_BS_SHA256_BYTES], out2[DVX_BS_SHA256_BYTES];
	struct dvx_bs_hmac k;
	struct dvx_bs_sha256 c;
	size_t klen, dlen, i;
	int tc;

	(void)state;
	for (tc = 1; tc <= 7; tc++) {
		const char *want = NULL;
		size_t wlen = DVX_BS_SHA256_BYTES;

		switch (tc) {
		case 1:
			klen = 20;
			memset(key, 0x0b, klen);
			dlen = 8;
			memcpy(data, "Hi There", dlen);
			want = "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7";
			break;
		case 2:
			klen = 4;
			memcpy(key, "Jefe", klen);
			dlen = 28;
			memcpy(data, "what do ya want for nothing?", dlen);
			want = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843";
			break;
		case 3:
			klen = 20;
			memset(key, 0xaa, klen);
			dlen = 50;
			memset(data, 0xdd, dlen);
			want = "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe";
			break;
		case 4:
			klen = 25;
			for (i = 0; i < klen; i++)
				key[i] = (uint8_t)(i + 1);
			dlen = 50;
			memset(data, 0xcd, dlen);
			want = "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b";
			break;
		case 5:
			klen = 20;
			memset(key, 0x0c, klen);
			dlen = 20;
			memcpy(data, "Test With Truncation", dlen);
			want = "a3b6167473100ee06e0c796c2955552b";
			wlen = 16;
			break;
		case 6:
			klen = 131;
			memset(key, 0xaa, klen);
			dlen = 54;
			memcpy(data, "Test Using Larger Than Block-Size Key - Hash Key First", dlen);
			want = "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54";
			break;
		default:
			klen = 131;
			memset(key, 0xaa, klen);
			dlen = 152;
			memcpy(data, "This is a test using a larger than block-size key and a larger "
				     "than block-size data. The key needs to be hashed before being "
				     "used by the HMAC algorithm.", dlen);
			want = "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2";
			break;
		}
		dvx_bs_hmac_sha256(key, klen, data, dlen, out);
		check_digest(out, want, wlen);
		/* the prepared key, the message in two pieces, twice with the same key */
		dvx_bs_hmac_init(&k, key, klen);
		for (i = 0; i < 2; i++) {
			c = k.inner;
			dvx_bs_sha256_update(&c, data, dlen / 3);
			dvx_bs_sha256_update(&c, data + dlen / 3, dlen - dlen / 3);
			dvx_bs_hmac_final(&k, &c, out2);
			assert_memory_equal(out, out2, sizeof(out));
		}
		dvx_bs_wipe(&k, sizeof(k));
	}
}

/* The empty key (the handshake's open mode) is the 64 zero bytes RFC 2104 pads it to;
 * another key gives another tag. */
static void test_hmac_keys(void **state)
{
	static const uint8_t zeros[64];
	uint8_t a[DVX_BS_SHA256_BYTES], b[DVX_BS_SHA256_BYTES];

	(void)state;
	dvx_bs_hmac_sha256(NULL, 0, "m", 1, a);
	dvx_bs_hmac_sha256(zeros, sizeof(zeros), "m", 1, b);
	assert_memory_equal(a, b, sizeof(a));
	dvx_bs_hmac_sha256("k", 1, "m", 1, b);
	assert_memory_not_equal(a, b, sizeof(a));
	dvx_bs_hmac_sha256("k", 1, "n", 1, a);
	assert_memory_not_equal(a, b, sizeof(a));
}

static void test_ct_equal_wipe(void **state)
{
	uint8_t a[40], b[40];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(a); i++)
		a[i] = b[i] = (uint8_t)(i * 13);
	assert_true(dvx_bs_ct_equal(a, b, sizeof(a)));
	assert_true(dvx_bs_ct_equal(a, b, 0));
	for (i = 0; i < sizeof(a); i++) {
		b[i] ^= 0x80;
		assert_false(dvx_bs_ct_equal(a, b, sizeof(a)));
		b[i] ^= 0x80;
	}
	dvx_bs_wipe(a, sizeof(a));
	for (i = 0; i < sizeof(a); i++)
		assert_int_equal(a[i], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha256_vectors),
		cmocka_unit_test(test_sha256_million),
		cmocka_unit_test(test_sha256_splits),
		cmocka_unit_test(test_hmac_rfc4231),
		cmocka_unit_test(test_hmac_keys),
		cmocka_unit_test(test_ct_equal_wipe),
	};

	return cmocka_run_group_tests_name("bootstrap-auth", tests, NULL, NULL);
}
