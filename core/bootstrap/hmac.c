// SPDX-License-Identifier: MIT
/*
 * core/bootstrap/hmac.c - SHA-256 as FIPS 180-4 section 6.2 defines it (the constants
 * of section 4.2.2 and 5.3.3: the first 32 bits of the fractional parts of the cube
 * roots of the first 64 primes and of the square roots of the first 8), and HMAC as
 * RFC 2104 defines it: H((K ^ opad) || H((K ^ ipad) || m)), a key longer than the block
 * hashed first, a shorter one padded with zeros. Written from the documents; the
 * published vectors are checked in tests/bootstrap/test_auth.c.
 */
#include <string.h>

#include "hmac.h"

static const uint32_t K256[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
	0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
	0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
	0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
	0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
	0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
	0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
	0xc67178f2,
};

static const uint32_t H256[8] = {
	0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
	0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
};

static inline uint32_t ror(uint32_t x, unsigned n)
{
	return (x >> n) | (x << (32 - n));
}

static inline uint32_t ld_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void st_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* FIPS 180-4 6.2.2: one 512-bit block into the chaining value. */
static void sha256_block(uint32_t h[8], const uint8_t *blk)
{
	uint32_t w[64], a, b, c, d, e, f, g, hh, t1, t2, s0, s1;
	unsigned i;

	for (i = 0; i < 16; i++)
		w[i] = ld_be32(blk + 4 * i);
	for (i = 16; i < 64; i++) {
		s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
		s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	a = h[0];
	b = h[1];
	c = h[2];
	d = h[3];
	e = h[4];
	f = h[5];
	g = h[6];
	hh = h[7];
	for (i = 0; i < 64; i++) {
		/* T1 = h + Sigma1(e) + Ch(e,f,g) + K + W; T2 = Sigma0(a) + Maj(a,b,c) */
		t1 = hh + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K256[i] +
		     w[i];
		t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
		hh = g;
		g = f;
		f = e;
		e = d + t1;
		d = c;
		c = b;
		b = a;
		a = t1 + t2;
	}
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
	h[4] += e;
	h[5] += f;
	h[6] += g;
	h[7] += hh;
	dvx_bs_wipe(w, sizeof(w));
}

void dvx_bs_sha256_init(struct dvx_bs_sha256 *c)
{
	memcpy(c->h, H256, sizeof(c->h));
	c->bytes = 0;
	c->fill = 0;
	memset(c->buf, 0, sizeof(c->buf));
}

void dvx_bs_sha256_update(struct dvx_bs_sha256 *c, const void *data, size_t len)
{
	const uint8_t *p = data;
	size_t n;

	if (!len)
		return;		/* @data may be NULL */
	c->bytes += len;
	if (c->fill) {
		n = DVX_BS_SHA256_BLOCK - c->fill;
		if (n > len)
			n = len;
		memcpy(c->buf + c->fill, p, n);
		c->fill += (uint32_t)n;
		p += n;
		len -= n;
		if (c->fill < DVX_BS_SHA256_BLOCK)
			return;
		sha256_block(c->h, c->buf);
		c->fill = 0;
	}
	for (; len >= DVX_BS_SHA256_BLOCK; p += DVX_BS_SHA256_BLOCK, len -= DVX_BS_SHA256_BLOCK)
		sha256_block(c->h, p);
	if (len) {
		memcpy(c->buf, p, len);
		c->fill = (uint32_t)len;
	}
}

/* FIPS 180-4 5.1.1: a 1 bit, zeros up to 448 mod 512, the length in bits (64-bit BE). */
void dvx_bs_sha256_final(struct dvx_bs_sha256 *c, uint8_t out[DVX_BS_SHA256_BYTES])
{
	uint64_t bits = c->bytes * 8;
	unsigned i;

	c->buf[c->fill++] = 0x80;
	if (c->fill > DVX_BS_SHA256_BLOCK - 8) {
		memset(c->buf + c->fill, 0, DVX_BS_SHA256_BLOCK - c->fill);
		sha256_block(c->h, c->buf);
		c->fill = 0;
	}
	memset(c->buf + c->fill, 0, DVX_BS_SHA256_BLOCK - 8 - c->fill);
	st_be32(c->buf + 56, (uint32_t)(bits >> 32));
	st_be32(c->buf + 60, (uint32_t)bits);
	sha256_block(c->h, c->buf);
	for (i = 0; i < 8; i++)
		st_be32(out + 4 * i, c->h[i]);
	dvx_bs_wipe(c, sizeof(*c));
}

void dvx_bs_sha256(const void *data, size_t len, uint8_t out[DVX_BS_SHA256_BYTES])
{
	struct dvx_bs_sha256 c;

	dvx_bs_sha256_init(&c);
	dvx_bs_sha256_update(&c, data, len);
	dvx_bs_sha256_final(&c, out);
}

/* RFC 2104 section 2: K padded (or hashed, then padded) to B bytes, xored with ipad
 * (0x36 repeated) and opad (0x5c repeated). */
void dvx_bs_hmac_init(struct dvx_bs_hmac *k, const void *key, size_t len)
{
	uint8_t kb[DVX_BS_SHA256_BLOCK], pad[DVX_BS_SHA256_BLOCK];
	unsigned i;

	memset(kb, 0, sizeof(kb));
	if (len > DVX_BS_SHA256_BLOCK)
		dvx_bs_sha256(key, len, kb);
	else if (len)
		memcpy(kb, key, len);
	for (i = 0; i < sizeof(pad); i++)
		pad[i] = kb[i] ^ 0x36;
	dvx_bs_sha256_init(&k->inner);
	dvx_bs_sha256_update(&k->inner, pad, sizeof(pad));
	for (i = 0; i < sizeof(pad); i++)
		pad[i] = kb[i] ^ 0x5c;
	dvx_bs_sha256_init(&k->outer);
	dvx_bs_sha256_update(&k->outer, pad, sizeof(pad));
	dvx_bs_wipe(kb, sizeof(kb));
	dvx_bs_wipe(pad, sizeof(pad));
}

void dvx_bs_hmac_final(const struct dvx_bs_hmac *k, struct dvx_bs_sha256 *c,
		       uint8_t out[DVX_BS_SHA256_BYTES])
{
	uint8_t ih[DVX_BS_SHA256_BYTES];
	struct dvx_bs_sha256 o = k->outer;

	dvx_bs_sha256_final(c, ih);
	dvx_bs_sha256_update(&o, ih, sizeof(ih));
	dvx_bs_sha256_final(&o, out);
	dvx_bs_wipe(ih, sizeof(ih));
}

void dvx_bs_hmac_sha256(const void *key, size_t klen, const void *msg, size_t len,
			uint8_t out[DVX_BS_SHA256_BYTES])
{
	struct dvx_bs_hmac k;
	struct dvx_bs_sha256 c;

	dvx_bs_hmac_init(&k, key, klen);
	c = k.inner;
	dvx_bs_sha256_update(&c, msg, len);
	dvx_bs_hmac_final(&k, &c, out);
	dvx_bs_wipe(&k, sizeof(k));
}

int dvx_bs_ct_equal(const void *a, const void *b, size_t n)
{
	const volatile uint8_t *x = a, *y = b;
	uint8_t d = 0;
	size_t i;

	for (i = 0; i < n; i++)
		d |= (uint8_t)(x[i] ^ y[i]);
	return d == 0;
}

void dvx_bs_wipe(void *p, size_t n)
{
	volatile uint8_t *v = p;
	size_t i;

	for (i = 0; i < n; i++)
		v[i] = 0;
}
