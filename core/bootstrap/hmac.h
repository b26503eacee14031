/* SPDX-License-Identifier: MIT */
/*
 * core/bootstrap/hmac.h - SHA-256 (FIPS 180-4) and HMAC-SHA-256 (RFC 2104), written
 * from the specifications for the sockets adapter's handshake (sock_auth.c): a rank
 * proves it knows the job's secret by answering a random challenge with an HMAC, so
 * the secret never travels. Pure code: no OS call, no allocation, caller storage only.
 * Checked against the published vectors (FIPS 180-2 appendix B, RFC 4231) by
 * bootstrap-auth-test.
 */
#ifndef DVX_CORE_BS_HMAC_H
#define DVX_CORE_BS_HMAC_H

#include <stddef.h>
#include <stdint.h>

#define DVX_BS_SHA256_BYTES 32	/* a digest */
#define DVX_BS_SHA256_BLOCK 64	/* the block the compression function takes */

/* A SHA-256 computation under way. */
struct dvx_bs_sha256 {
	uint32_t h[8];		/* the chaining value */
	uint64_t bytes;		/* message bytes taken so far */
	uint32_t fill;		/* bytes waiting in @buf */
	uint8_t buf[DVX_BS_SHA256_BLOCK];
};

/* An HMAC key made ready: both hashes after their padded key block, so a message costs
 * no key processing. As good as the key itself: wipe it (dvx_bs_wipe()) when done. */
struct dvx_bs_hmac {
	struct dvx_bs_sha256 inner;	/* after K ^ ipad */
	struct dvx_bs_sha256 outer;	/* after K ^ opad */
};

void dvx_bs_sha256_init(struct dvx_bs_sha256 *c);
void dvx_bs_sha256_update(struct dvx_bs_sha256 *c, const void *data, size_t len);
/* The digest; @c is spent (init it again to reuse it). */
void dvx_bs_sha256_final(struct dvx_bs_sha256 *c, uint8_t out[DVX_BS_SHA256_BYTES]);
void dvx_bs_sha256(const void *data, size_t len, uint8_t out[DVX_BS_SHA256_BYTES]);

/* Key of any length (0 included: the empty key); a key longer than a block is hashed
 * first, as RFC 2104 says. */
void dvx_bs_hmac_init(struct dvx_bs_hmac *k, const void *key, size_t len);
/* One message: *@c = @k->inner, update @c with the message, then finish it here. */
void dvx_bs_hmac_final(const struct dvx_bs_hmac *k, struct dvx_bs_sha256 *c,
		       uint8_t out[DVX_BS_SHA256_BYTES]);
void dvx_bs_hmac_sha256(const void *key, size_t klen, const void *msg, size_t len,
			uint8_t out[DVX_BS_SHA256_BYTES]);

/* 1 when the @n bytes at @a and @b are equal; the time taken does not depend on where
 * they differ. */
int dvx_bs_ct_equal(const void *a, const void *b, size_t n);

/* Zero @n bytes at @p in a way the compiler does not drop (keys, pads, secrets). */
void dvx_bs_wipe(void *p, size_t n);

#endif /* DVX_CORE_BS_HMAC_H */
