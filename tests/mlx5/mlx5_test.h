/* SPDX-License-Identifier: MIT */
/*
 * tests/mlx5/mlx5_test.h - helpers shared by the mlx5 data-path tests.
 *
 * The reference encoders below write hardware layouts byte by byte from the tables of
 * docs/prm.md (docs/prm.md sections 2 and 4): they use no dvx code at all, so a
 * layout built here is an independent expectation, not a replay of the code under test.
 */
#ifndef DVX_TESTS_MLX5_TEST_H
#define DVX_TESTS_MLX5_TEST_H

#include "../lib/dvx_test.h"

#define T_POISON 0xa5u		/* fill for "nothing was written here" */
#define T_POISON2 0x5au		/* second fill, to catch a writer that stores T_POISON */

/* ---- big-endian byte stores, written out by hand ---- */
static inline void t_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void t_be24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

static inline void t_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline void t_be64(uint8_t *p, uint64_t v)
{
	t_be32(p, (uint32_t)(v >> 32));
	t_be32(p + 4, (uint32_t)v);
}

static inline uint32_t t_get_be32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

/* ---- reference WQE segments (prm 2.2 - 2.7) ---- */

/* ctrl (prm 2.2): byte 0 opmod, 1-2 wqe index (16 bits), 3 opcode, 4-6 QPN, 7 ds,
 * 8 signature 0, 9-10 dci stream 0, 11 fm_ce_se, 12-15 immediate */
static inline void t_ctrl(uint8_t *p, uint8_t opmod, uint32_t idx, uint8_t opcode, uint32_t qpn,
			  uint8_t ds, uint8_t fm_ce_se, uint32_t imm)
{
	p[0] = opmod;
	t_be16(p + 1, (uint16_t)idx);
	p[3] = opcode;
	t_be24(p + 4, qpn);
	p[7] = ds;
	p[8] = 0;
	p[9] = 0;
	p[10] = 0;
	p[11] = fm_ce_se;
	t_be32(p + 12, imm);
}

/* raddr (prm 2.3): 0-7 raddr, 8-11 rkey, 12-15 zero */
static inline void t_raddr(uint8_t *p, uint64_t raddr, uint32_t rkey)
{
	t_be64(p, raddr);
	t_be32(p + 8, rkey);
	memset(p + 12, 0, 4);
}

/* data (prm 2.5): 0-3 byte_count, 4-7 lkey, 8-15 addr */
static inline void t_data(uint8_t *p, uint32_t len, uint32_t lkey, uint64_t addr)
{
	t_be32(p, len);
	t_be32(p + 4, lkey);
	t_be64(p + 8, addr);
}

/* inline (prm 2.6): header BE32(len | 0x80000000), payload verbatim, zeros to 16 B.
 * Returns the 16-byte units used: ceil((4 + len) / 16). */
static inline uint32_t t_inline(uint8_t *p, const uint8_t *data, uint32_t len)
{
	uint32_t units = (4 + len + 15) / 16;

	t_be32(p, 0x80000000u | len);
	if (len)
		memcpy(p + 4, data, len);
	memset(p + 4 + len, 0, units * 16 - 4 - len);
	return units;
}

/* wait / enable (prm 2.7): 0-7 zero, 8-11 max_index, 12-15 qpn_cqn */
static inline void t_wait(uint8_t *p, uint32_t max_index, uint32_t qpn_cqn)
{
	memset(p, 0, 8);
	t_be32(p + 8, max_index);
	t_be32(p + 12, qpn_cqn);
}

/* ---- checks ---- */

#define assert_hex(got, hex)                                                        \
	do {                                                                        \
		uint8_t want_[1100];                                                \
		size_t n_ = dvx_test_hex((hex), want_, sizeof(want_));              \
		assert_true(n_ <= sizeof(want_));                                   \
		dvx_test_bytes_equal((got), want_, n_, #got, __FILE__, __LINE__);   \
	} while (0)

/* every byte of [from, to) equals @fill */
static inline void t_assert_fill(const uint8_t *buf, size_t from, size_t to, uint8_t fill,
				 const char *file, int line)
{
	size_t i;

	for (i = from; i < to; i++) {
		if (buf[i] != fill) {
			print_error("byte %zu is 0x%02x, expected untouched 0x%02x\n", i, buf[i],
				    fill);
			_fail(file, line);
		}
	}
}
#define assert_fill(buf, from, to, fill) \
	t_assert_fill((const uint8_t *)(buf), (from), (to), (fill), __FILE__, __LINE__)

/*
 * A WQE of @len linear bytes @lin placed at WQEBB @idx of a ring of @ring_bytes:
 * byte off must be at ring[(idx * 64 + off) mod ring_bytes] (prm 2.1), and every
 * other ring byte still @fill.
 */
static inline void t_assert_ring_wqe(const uint8_t *ring, size_t ring_bytes, uint32_t idx,
				     const uint8_t *lin, size_t len, uint8_t fill,
				     const char *what, const char *file, int line)
{
	static uint8_t want[64u << 15];	/* the largest ring: 2^15 WQEBBs */
	size_t off, i;

	assert_true(ring_bytes <= sizeof(want));
	assert_true(len <= ring_bytes);
	memset(want, fill, ring_bytes);
	for (off = 0; off < len; off++)
		want[((uint64_t)idx * 64u + off) % ring_bytes] = lin[off];
	for (i = 0; i < ring_bytes; i++)
		if (ring[i] != want[i])
			break;
	if (i < ring_bytes) {
		print_error("%s: ring of %zu bytes, WQE of %zu bytes at WQEBB %u (0x%x):\n", what,
			    ring_bytes, len, idx, idx);
		dvx_test_bytes_equal(ring, want, ring_bytes, "ring", file, line);
	}
}
#define assert_ring_wqe(ring, ring_bytes, idx, lin, len, fill) \
	t_assert_ring_wqe((ring), (ring_bytes), (idx), (lin), (len), (fill), #lin, __FILE__, \
			  __LINE__)

/* ---- a seeded PRNG (splitmix64): every run sees the same sequence ---- */
static inline uint64_t t_rand64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline uint32_t t_rand32(uint64_t *s)
{
	return (uint32_t)(t_rand64(s) >> 32);
}

/* 64-byte aligned, poisoned test memory (tests may allocate; the library may not) */
static inline uint8_t *t_ring_alloc(size_t bytes, uint8_t fill)
{
	return dvx_test_alloc(bytes, fill);
}

#endif /* DVX_TESTS_MLX5_TEST_H */
