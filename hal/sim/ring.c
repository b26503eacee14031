// SPDX-License-Identifier: MIT
/*
 * hal/sim/ring.c - a byte stream in shared memory between two processes of one host,
 * every index read from the peer's side checked before use (ring.h, docs/sim-wire.md).
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "ring.h"

/* the shared words: atomics on memory the other process writes too */
static uint64_t ld64(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void st64(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* Attach to one direction: @shm its header, @data its data area of @size bytes (a power
 * of two). The private indices start from zero, as the header does when it is made. */
void dvx_sim_ring_attach(struct sim_ring *r, void *shm, void *data, uint64_t size)
{
	r->shm = shm;
	r->data = data;
	r->size = size;
	r->pos = 0;
	r->pub = 0;
}

/* Producer: bytes free to write; -EPROTO when the consumer's tail is not one it can have
 * (ahead of this side's head, or more than the size behind it). */
int dvx_sim_ring_room(const struct sim_ring *r, uint64_t *room)
{
	uint64_t tail = ld64(&r->shm->tail), used = r->pub - tail;

	/* the consumer has seen at most what was published */
	if (used > r->size)
		return -EPROTO;
	*room = r->size - (r->pos - tail);
	if (r->pos - tail > r->size)
		return -EPROTO;
	return 0;
}

/* Producer: append @len bytes (the caller checked the room), not yet published. */
int dvx_sim_ring_write(struct sim_ring *r, const void *b, uint64_t len)
{
	uint64_t room, off, first;
	int rc = dvx_sim_ring_room(r, &room);

	if (rc)
		return rc;
	if (len > room)
		return -EAGAIN;
	off = r->pos & (r->size - 1);
	first = len < r->size - off ? len : r->size - off;
	memcpy(r->data + off, b, first);
	memcpy(r->data, (const uint8_t *)b + first, len - first);
	r->pos += len;
	return 0;
}

/* Producer: make what was written visible; true when the consumer waits and must be
 * woken (this side took its flag down: one wake-up per wait). */
bool dvx_sim_ring_publish(struct sim_ring *r)
{
	if (r->pub == r->pos)
		return false;
	st64(&r->shm->head, r->pos);
	r->pub = r->pos;
	/* the head before the flag is read; the consumer raises the flag before it reads
	 * the head: one of the two sees the other */
	atomic_thread_fence(memory_order_seq_cst);
	if (!__atomic_load_n(&r->shm->waiting, __ATOMIC_RELAXED))
		return false;
	return __atomic_exchange_n(&r->shm->waiting, 0, __ATOMIC_ACQ_REL) != 0;
}

/* Consumer: take up to @cap bytes into @dst; *@got 0 when there are none. -EPROTO when
 * the producer's head is not one it can have (behind this side's tail, or more than the
 * size ahead of it). */
int dvx_sim_ring_read(struct sim_ring *r, void *dst, uint64_t cap, uint64_t *got)
{
	uint64_t head = ld64(&r->shm->head), avail = head - r->pos, off, n, first;

	*got = 0;
	if (avail > r->size)
		return -EPROTO;
	n = avail < cap ? avail : cap;
	if (!n)
		return 0;
	off = r->pos & (r->size - 1);
	first = n < r->size - off ? n : r->size - off;
	memcpy(dst, r->data + off, first);
	memcpy((uint8_t *)dst + first, r->data, n - first);
	r->pos += n;
	st64(&r->shm->tail, r->pos);
	*got = n;
	return 0;
}

/* Consumer, before it waits: raise the flag, then look again; false (flag down) when
 * the head is not @seen, a head this side looked at already (its tail; or beyond it,
 * where a frame waits to be whole): bytes are there already, or the head is bad (the
 * next read says so), so no wait. dvx_sim_ring_arm() (ring.h): @seen the tail. */
bool dvx_sim_ring_arm_at(struct sim_ring *r, uint64_t seen)
{
	__atomic_store_n(&r->shm->waiting, 1, __ATOMIC_SEQ_CST);
	atomic_thread_fence(memory_order_seq_cst);
	if (ld64(&r->shm->head) != seen) {
		__atomic_store_n(&r->shm->waiting, 0, __ATOMIC_RELAXED);
		return false;
	}
	return true;
}

void dvx_sim_ring_disarm(struct sim_ring *r)
{
	__atomic_store_n(&r->shm->waiting, 0, __ATOMIC_RELAXED);
}

/* Consumer, in place: the bytes the producer has published beyond this side's tail
 * (read once: the caller keeps it); -EPROTO as dvx_sim_ring_read(). Nothing taken. */
int dvx_sim_ring_avail(const struct sim_ring *r, uint64_t *avail)
{
	uint64_t head = ld64(&r->shm->head);

	*avail = head - r->pos;
	if (*avail > r->size) {
		*avail = 0;
		return -EPROTO;
	}
	return 0;
}

/* Consumer: the pieces of bytes [tail + @off, tail + @off + @len) in the data area, the
 * first @n0 bytes at @p0, the rest at @p1 (the area's start: they wrap its end). The
 * caller checked @off + @len against what dvx_sim_ring_avail() said (so both are at most
 * the size); the pointers are inside the area whatever the peer writes. */
void dvx_sim_ring_span(const struct sim_ring *r, uint64_t off, uint64_t len, const uint8_t **p0,
		       uint64_t *n0, const uint8_t **p1)
{
	uint64_t at = (r->pos + off) & (r->size - 1);

	*p0 = r->data + at;
	*n0 = len < r->size - at ? len : r->size - at;
	*p1 = r->data;
}

/* Consumer: a private copy of bytes [tail + @off, tail + @off + @len) (checked by the
 * caller, as for dvx_sim_ring_span()); nothing taken */
void dvx_sim_ring_peek(const struct sim_ring *r, uint64_t off, void *dst, uint64_t len)
{
	const uint8_t *p0, *p1;
	uint64_t n0;

	dvx_sim_ring_span(r, off, len, &p0, &n0, &p1);
	memcpy(dst, p0, n0);
	memcpy((uint8_t *)dst + n0, p1, len - n0);
}

/* Consumer: @len bytes (at most what dvx_sim_ring_avail() said) are done with: the tail
 * moves on and is published, and the producer may write over them */
void dvx_sim_ring_consume(struct sim_ring *r, uint64_t len)
{
	r->pos += len;
	st64(&r->shm->tail, r->pos);
}
