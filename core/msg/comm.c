// SPDX-License-Identifier: MIT
/*
 * core/msg/comm.c - what every file of the layer uses: the clock, random words, and
 * communicator ids (slots with a generation, handed out round robin). The bottom of
 * the folder, beside set.c: it calls nothing else of core/msg.
 */
#include <string.h>

#include "msg_priv.h"

#include <dvx/hal.h>

uint64_t dvx_msg_now(const struct dvx_msg_state *st)
{
	return dvx_hal_now_ns(st->hal);
}

/* splitmix64: spreads a weak seed (clock, pid, address) when the hal has no random bytes */
static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

int dvx_msg_random64(struct dvx_msg_state *st, uint64_t *v)
{
	struct dvx_hal_host_ident id;
	uint64_t x;
	uint32_t i;
	int err = dvx_hal_random_bytes(st->hal, v, sizeof(*v));

	if (err != -ENOSYS)
		return err;
	/* a backend without random bytes (the software NIC's table): unpredictable enough
	 * to tell contexts and handles apart, not a secret (docs/msg.md) */
	x = dvx_hal_now_ns(st->hal) ^ (uint64_t)(uintptr_t)st ^ st->serial;
	memset(&id, 0, sizeof(id));
	if (!dvx_hal_host_ident(st->hal, &id)) {
		x ^= (uint64_t)id.pid << 32;
		for (i = 0; i < sizeof(id.boot_id); i++)
			x = mix64(x ^ (uint8_t)id.boot_id[i]);
	}
	st->serial++;
	*v = mix64(x);
	return 0;
}

/* ------------------------------------------------------------------------------
 * Communicator ids
 */
int dvx_msg_comm_alloc(struct dvx_msg_state *st, uint8_t kind, struct dvx_msg_comm **out)
{
	uint32_t n = st->cfg.max_comms, k;

	/* round robin from the last one handed out: a freed id is reused as late as the
	 * table allows, and then with the next generation */
	for (k = 0; k < n; k++) {
		uint32_t s = (st->next_slot + k) % n;
		struct dvx_msg_comm *c = &st->comms[s];
		uint32_t gen;

		if (c->kind != MSG_K_FREE)
			continue;
		gen = (st->gens[s] + 1u) & MSG_GEN_MASK;
		if (!gen)
			gen = 1;	/* generation 0 never names a live comm */
		st->gens[s] = (uint8_t)gen;
		st->epochs[s]++;
		memset(c, 0, sizeof(*c));
		c->epoch = st->epochs[s];
		c->magic = MSG_COMM_MAGIC;
		c->kind = kind;
		c->state = MSG_CS_PENDING;
		c->id = MSG_ID(s, gen);
		c->st = st;
		c->q_head = c->q_tail = c->q_next = -1;
		c->set = UINT32_MAX;
		c->fifo = st->fifo + (uint64_t)s * st->fifo_stride;
		c->stage = st->fifo + st->stage_off + (uint64_t)s * st->fifo_stride;
		c->reqs = st->reqs + (uint64_t)s * st->req_stride;
		memset(c->fifo, 0, st->fifo_stride);
		memset(c->stage, 0, st->fifo_stride);
		memset(c->reqs, 0, st->req_stride);
		/* offload: a recv comm's ring (what peers write; its headers are checked) or
		 * a send comm's staging, by kind */
		c->eager = !st->ring_stride ? NULL :
			   kind == MSG_K_RECV ? st->fifo + st->ring_off + (uint64_t)s * st->ring_stride :
						st->fifo + st->estage_off + (uint64_t)s * st->ring_stride;
		st->next_slot = (s + 1) % n;
		*out = c;
		return 0;
	}
	return -ENOSPC;
}

void dvx_msg_comm_free(struct dvx_msg_state *st, struct dvx_msg_comm *c)
{
	(void)st;
	memset(c, 0, sizeof(*c));	/* kind FREE; the slot's generation stays in gens[] */
}

/* any send/recv comm with this id, also one CLOSING (for accounting its completions) */
struct dvx_msg_comm *dvx_msg_comm_any(struct dvx_msg_state *st, uint32_t id)
{
	uint32_t s = MSG_ID_SLOT(id);
	struct dvx_msg_comm *c;

	if (s >= st->cfg.max_comms)
		return NULL;
	c = &st->comms[s];
	if ((c->kind != MSG_K_SEND && c->kind != MSG_K_RECV) || c->id != id ||
	    (c->state != MSG_CS_LIVE && c->state != MSG_CS_PARKED && c->state != MSG_CS_CLOSING))
		return NULL;
	return c;
}

/* the same, but not one CLOSING */
struct dvx_msg_comm *dvx_msg_comm_by_id(struct dvx_msg_state *st, uint32_t id)
{
	struct dvx_msg_comm *c = dvx_msg_comm_any(st, id);

	return c && c->state != MSG_CS_CLOSING ? c : NULL;
}
