/* SPDX-License-Identifier: MIT */
/*
 * hal/sim/ring.h - a byte stream in shared memory between two processes of one host:
 * the wire's same-host data path (docs/sim-wire.md, "The shared-memory ring").
 *
 * One direction of a pair: a producer that appends bytes and a consumer that takes them
 * in order. The shared part is a header (the producer's head, the consumer's tail, the
 * consumer's waiting flag, each on a line of its own) and a data area of a power of two
 * bytes; indices run free (64 bits) and are taken modulo the size. Each side keeps its
 * own index privately and only publishes it: what it reads of the other side's (and of
 * the flag) is untrusted, since the peer may write anything there at any time, and is
 * checked before any byte is touched: a head the consumer sees must be at most size
 * bytes ahead of its tail and never behind it, a tail the producer sees at most size
 * bytes behind its head and never ahead of it. Anything else is -EPROTO (the wire then
 * drops the peer). Bytes are copied out before they are parsed, so a peer that writes
 * into the data area meanwhile changes only bytes it could have sent anyway. A consumer
 * may also look at bytes in place (dvx_sim_ring_avail(), _peek(), _span(), then
 * _consume()): it copies a header out with _peek() and decides on that copy only, and
 * takes a payload's bytes once from the pieces _span() gives; the pieces lie inside the
 * data area whatever the peer writes (they are computed from this side's own index and
 * lengths it checked).
 */
#ifndef DVX_HAL_SIM_RING_H
#define DVX_HAL_SIM_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SIM_RING_HDR 256u	/* the shared header of one direction */
#define SIM_RING_MIN 4096u	/* the least data area */

/** struct sim_ring_shm - the shared header of one direction (SIM_RING_HDR bytes) */
struct sim_ring_shm {
	uint64_t head;		/* written by the producer: bytes appended so far */
	uint64_t pad0[7];
	uint64_t tail;		/* written by the consumer: bytes taken so far */
	uint64_t pad1[7];
	uint32_t waiting;	/* the consumer: 1 while it waits (wake it on the socket) */
	uint32_t pad2[15];
	uint64_t pad3[8];
};

/** struct sim_ring - one side's private view of one direction */
struct sim_ring {
	struct sim_ring_shm *shm;
	uint8_t *data;
	uint64_t size;		/* a power of two, >= SIM_RING_MIN */
	uint64_t pos;		/* producer: its head; consumer: its tail (the true ones) */
	uint64_t pub;		/* producer: the head last published */
};

void dvx_sim_ring_attach(struct sim_ring *r, void *shm, void *data, uint64_t size);
int dvx_sim_ring_room(const struct sim_ring *r, uint64_t *room);
int dvx_sim_ring_write(struct sim_ring *r, const void *b, uint64_t len);
bool dvx_sim_ring_publish(struct sim_ring *r);
int dvx_sim_ring_read(struct sim_ring *r, void *dst, uint64_t cap, uint64_t *got);
int dvx_sim_ring_avail(const struct sim_ring *r, uint64_t *avail);
void dvx_sim_ring_peek(const struct sim_ring *r, uint64_t off, void *dst, uint64_t len);
void dvx_sim_ring_span(const struct sim_ring *r, uint64_t off, uint64_t len, const uint8_t **p0,
		       uint64_t *n0, const uint8_t **p1);
void dvx_sim_ring_consume(struct sim_ring *r, uint64_t len);
bool dvx_sim_ring_arm_at(struct sim_ring *r, uint64_t seen);
/* not in ring.c: a fence inlined into it is one ThreadSanitizer's compiler refuses */
static inline bool dvx_sim_ring_arm(struct sim_ring *r)
{
	return dvx_sim_ring_arm_at(r, r->pos);
}
void dvx_sim_ring_disarm(struct sim_ring *r);

#endif /* DVX_HAL_SIM_RING_H */
