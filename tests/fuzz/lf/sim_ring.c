// SPDX-License-Identifier: MIT
/*
 * tests/fuzz/lf/sim_ring.c - libFuzzer harness: the wire's shared-memory ring
 * (hal/sim/ring.c, docs/sim-wire.md "The shared-memory ring"), with the peer's side of
 * the shared memory written by the input at any time.
 *
 * One direction of a ring: this harness is both the producer and the consumer, as the
 * two processes are, and the input is also the peer that may scribble on what both of
 * them read from shared memory (the head, the tail, the waiting flag, the data area).
 * The data area is allocated at exactly its size, so AddressSanitizer catches any byte
 * touched outside it.
 *
 * Feeds:
 *   byte 0  the ring's size: 4096 << (b % 3)
 *   then commands, a byte each (b % 8) and their operands:
 *     0 read:  cap (u16): the consumer takes up to cap bytes
 *     1 write: len (u16 % 8192): the producer appends that many input bytes if room
 *     2 publish
 *     3 the head scribbled (u64, or a small offset from the true one: u8 selector)
 *     4 the tail scribbled (the same)
 *     5 the data area scribbled: offset (u16), byte
 *     6 the waiting flag scribbled (u32); then the consumer arms, and disarms
 *     7 the head and tail put back to the true ones (a peer that behaves again)
 *     8 the consumer takes a frame in place, as the wire's direct path does: len (u16),
 *       hdr (u8); what is there (dvx_sim_ring_avail()), its first hdr bytes (at most
 *       len) copied out (_peek()), the rest taken from the pieces _span() gives while
 *       the peer scribbles the data area between the two pieces (offset u16, byte),
 *       then _consume(); len more than there is takes nothing
 *     9 a span at any offset and length within what is there (off u16, len u16): its
 *       pieces lie inside the data area
 *
 * Checks: a read takes at most cap bytes and at most the size, and a refused one
 * (-EPROTO) takes nothing and moves nothing; what is there in place is at most the
 * size, 0 when refused; a span's pieces lie inside the data area and add up to its
 * length, the second at the area's start, the first one whole when it does not wrap;
 * a consume moves the tail by exactly its length and publishes it; the consumer's and the producer's own
 * indices never go back; a write never makes room exceed the size; the room reported
 * is at most the size; while nothing was scribbled, the bytes read are exactly the
 * bytes written, in order (a model of the stream).
 *
 * Seeds: 'DVX_FUZZ_WRITE_SEEDS=DIR': writes and reads of several sizes, one wrapping
 * the end, one with a head beyond the size, one with a tail ahead of the head; frames
 * taken in place, one wrapping the end, one scribbled while it is taken.
 */
#include "../../../hal/sim/ring.h"
#include "lf.h"

#define MODEL (1u << 16)

/* a span's pieces: inside the area, adding up to @len, the second at the start */
static void span_check(const struct sim_ring *r, const uint8_t *area, uint64_t rsize,
		       uint64_t off, uint64_t len, const uint8_t *p0, uint64_t n0,
		       const uint8_t *p1)
{
	LF_CHECK(len <= rsize && n0 <= len);
	LF_CHECK(p0 >= area && p0 < area + rsize && n0 <= (uint64_t)(area + rsize - p0));
	LF_CHECK(p1 == area && len - n0 <= rsize);
	LF_CHECK(p0 == area + ((r->pos + off) & (rsize - 1)));
	LF_CHECK(n0 == len || p0 + n0 == area + rsize);
}

static uint64_t scribble(struct lf_in *in, uint64_t truth)
{
	uint8_t sel = lf_u8(in);

	switch (sel % 4) {
	case 0:
		return lf_u64(in);
	case 1:
		return truth + lf_u8(in);
	case 2:
		return truth - lf_u8(in);
	default:
		return truth + ((uint64_t)lf_u16(in) << 4);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lf_in in = { data, size };
	uint64_t rsize = 4096ull << (lf_u8(&in) % 3), room, got, pos0, ppos0;
	static uint8_t model[MODEL], buf[1u << 16], src[8192];
	uint64_t m_w = 0, m_r = 0;	/* the stream's model: written, read */
	struct sim_ring_shm *shm = calloc(1, sizeof(*shm));
	uint8_t *area = malloc(rsize);
	struct sim_ring prod, cons;
	bool clean = true;
	unsigned steps = 0;
	int rc;

	LF_CHECK(shm && area);
	memset(area, 0, rsize);
	dvx_sim_ring_attach(&prod, shm, area, rsize);
	dvx_sim_ring_attach(&cons, shm, area, rsize);
	while (in.n && steps++ < 512) {
		uint8_t op = lf_u8(&in) % 10;

		switch (op) {
		case 0: {
			uint64_t cap = lf_u16(&in);

			pos0 = cons.pos;
			rc = dvx_sim_ring_read(&cons, buf, cap, &got);
			LF_CHECK(rc == 0 || rc == -EPROTO);
			LF_CHECK(got <= cap && got <= rsize);
			if (rc) {
				LF_CHECK(got == 0 && cons.pos == pos0);
				clean = false;
				break;
			}
			LF_CHECK(cons.pos == pos0 + got);
			if (clean && got) {
				uint64_t i;

				LF_CHECK(m_r + got <= m_w);
				for (i = 0; i < got; i++)
					LF_CHECK(buf[i] == model[(m_r + i) % MODEL]);
				m_r += got;
			}
			break;
		}
		case 1: {
			uint64_t len = lf_u16(&in) % sizeof(src), i;

			len = lf_bytes(&in, src, len);
			ppos0 = prod.pos;
			rc = dvx_sim_ring_room(&prod, &room);
			if (rc) {
				LF_CHECK(rc == -EPROTO);
				clean = false;
				rc = dvx_sim_ring_write(&prod, src, len);
				LF_CHECK(rc == -EPROTO && prod.pos == ppos0);
				break;
			}
			LF_CHECK(room <= rsize);
			rc = dvx_sim_ring_write(&prod, src, len);
			if (len > room) {
				LF_CHECK(rc == -EAGAIN && prod.pos == ppos0);
				break;
			}
			LF_CHECK(rc == 0 && prod.pos == ppos0 + len);
			if (clean && m_w - m_r + len <= MODEL)
				for (i = 0; i < len; i++)
					model[(m_w + i) % MODEL] = src[i];
			else
				clean = false;
			m_w += len;
			break;
		}
		case 2:
			(void)dvx_sim_ring_publish(&prod);
			LF_CHECK(prod.pub == prod.pos);
			break;
		case 3:
			__atomic_store_n(&shm->head, scribble(&in, prod.pub), __ATOMIC_RELAXED);
			clean = false;
			break;
		case 4:
			__atomic_store_n(&shm->tail, scribble(&in, cons.pos), __ATOMIC_RELAXED);
			clean = false;
			break;
		case 5: {
			uint16_t off = lf_u16(&in);

			area[off % rsize] = lf_u8(&in);
			clean = false;
			break;
		}
		case 8: {
			uint64_t len = lf_u16(&in), hdr = lf_u8(&in), avail, n0, i;
			uint16_t soff = lf_u16(&in);
			uint8_t sb = lf_u8(&in);
			const uint8_t *p0, *p1;

			pos0 = cons.pos;
			rc = dvx_sim_ring_avail(&cons, &avail);
			LF_CHECK(rc == 0 || rc == -EPROTO);
			LF_CHECK(avail <= rsize && cons.pos == pos0);
			if (rc) {
				LF_CHECK(avail == 0);
				clean = false;
				break;
			}
			if (len > avail)
				break;	/* not all there: nothing taken */
			if (hdr > len)
				hdr = len;
			/* the header: a private copy, decided on */
			dvx_sim_ring_peek(&cons, 0, buf, hdr);
			/* the payload in place, in one or two pieces */
			dvx_sim_ring_span(&cons, hdr, len - hdr, &p0, &n0, &p1);
			span_check(&cons, area, rsize, hdr, len - hdr, p0, n0, p1);
			memcpy(buf + hdr, p0, n0);
			if (sb & 1) {
				/* the peer rewrites the area while the payload is copied */
				area[soff % rsize] = sb;
				clean = false;
			}
			memcpy(buf + hdr + n0, p1, len - hdr - n0);
			LF_CHECK(cons.pos == pos0);
			dvx_sim_ring_consume(&cons, len);
			LF_CHECK(cons.pos == pos0 + len);
			LF_CHECK(__atomic_load_n(&shm->tail, __ATOMIC_RELAXED) == cons.pos);
			if (clean && len) {
				LF_CHECK(m_r + len <= m_w);
				for (i = 0; i < len; i++)
					LF_CHECK(buf[i] == model[(m_r + i) % MODEL]);
				m_r += len;
			}
			break;
		}
		case 9: {
			uint64_t off = lf_u16(&in), len = lf_u16(&in), avail, n0;
			const uint8_t *p0, *p1;

			if (dvx_sim_ring_avail(&cons, &avail)) {
				clean = false;
				break;
			}
			if (off > avail || len > avail - off)
				break;
			dvx_sim_ring_span(&cons, off, len, &p0, &n0, &p1);
			span_check(&cons, area, rsize, off, len, p0, n0, p1);
			break;
		}
		case 6:
			__atomic_store_n(&shm->waiting, lf_u32(&in), __ATOMIC_RELAXED);
			if (dvx_sim_ring_arm(&cons))
				LF_CHECK(__atomic_load_n(&shm->waiting, __ATOMIC_RELAXED) == 1);
			dvx_sim_ring_disarm(&cons);
			LF_CHECK(__atomic_load_n(&shm->waiting, __ATOMIC_RELAXED) == 0);
			break;
		default:
			__atomic_store_n(&shm->head, prod.pub, __ATOMIC_RELAXED);
			__atomic_store_n(&shm->tail, cons.pos, __ATOMIC_RELAXED);
			break;
		}
	}
	free(area);
	free(shm);
	return 0;
}

/* seeds: a write of @len bytes (a pattern) at @n (0: first, after the size byte) */
static size_t seed_write(uint8_t *b, size_t n, uint16_t len)
{
	uint16_t i;

	if (!n)
		b[n++] = 0;	/* 4 KiB */
	b[n++] = 1;
	b[n++] = (uint8_t)len;
	b[n++] = (uint8_t)(len >> 8);
	for (i = 0; i < len; i++)
		b[n++] = (uint8_t)(i * 7 + 3);
	return n;
}

static size_t seed_cmd(uint8_t *b, size_t n, const uint8_t *c, size_t len)
{
	memcpy(b + n, c, len);
	return n + len;
}

static void write_seeds(void)
{
	static const uint8_t plain[] = { 0, 1, 100, 0, 'a', 'b', 'c', 2, 0, 200, 0 };
	static const uint8_t wrap[] = { 0, 1, 0xff, 0x0f, 2, 0, 0xff, 0x0f, 1, 0xff, 0x0f, 2,
					0, 0xff, 0xff };
	static const uint8_t far_head[] = { 1, 3, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0xff, 0xff };
	static const uint8_t bad_tail[] = { 2, 1, 16, 0, 2, 4, 1, 200, 1, 4, 0, 7, 0, 16, 0 };
	static uint8_t b[16384];
	size_t n;

	lf_seed("plain", plain, sizeof(plain));
	lf_seed("wrap", wrap, sizeof(wrap));
	lf_seed("far-head", far_head, sizeof(far_head));
	lf_seed("bad-tail", bad_tail, sizeof(bad_tail));
	/* frames taken in place: 300 bytes written and published, a 120-byte header and
	 * the rest taken, a span inside what is there; then across the end of a 4 KiB
	 * area (3900 bytes read first: the payload wraps), once clean and once with the
	 * peer scribbling while the payload is copied */
	n = seed_write(b, 0, 300);
	n = seed_cmd(b, n, (const uint8_t[]){ 2, 8, 44, 1, 120, 0, 0, 0, 9, 10, 0, 100, 0 },
		     13);
	lf_seed("in-place", b, n);
	n = seed_write(b, 0, 3900);
	n = seed_cmd(b, n, (const uint8_t[]){ 2, 0, 0x3c, 0x0f }, 4);
	n = seed_write(b, n, 300);
	n = seed_cmd(b, n, (const uint8_t[]){ 2, 9, 0, 0, 44, 1, 8, 44, 1, 120, 0, 0, 0 }, 13);
	lf_seed("in-place-wrap", b, n);
	b[n - 1] = 0x55;	/* odd: area[16], in the second piece, scribbled meanwhile */
	b[n - 3] = 16;
	lf_seed("in-place-scribbled", b, n);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	lf_seed_mode(write_seeds);
	return 0;
}
