// SPDX-License-Identifier: MIT
/*
 * plugins/nccl/handle.c - the listen handle: see handle.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "abi.h"
#include "handle.h"
#include "say.h"

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)v);
	put16(p + 2, (uint16_t)(v >> 16));
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) | (uint32_t)get16(p + 2) << 16;
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

void dvxn_sw_id_put(uint8_t out[16], const struct dvxn_sw_id *id)
{
	out[0] = id->kind;
	out[1] = 0;
	put16(out + 2, id->nic);
	put32(out + 4, (uint32_t)id->rank);
	put64(out + 8, id->fabric);
}

void dvxn_sw_id_get(struct dvxn_sw_id *id, const uint8_t in[16])
{
	memset(id, 0, sizeof(*id));
	id->kind = in[0];
	id->rsvd = in[1];
	id->nic = get16(in + 2);
	id->rank = (int32_t)get32(in + 4);
	id->fabric = get64(in + 8);
}

void dvxn_sw_at_encode(uint8_t out[DVXN_SW_AT_BYTES], const struct dvx_hal_sock_addr *a)
{
	memset(out, 0, DVXN_SW_AT_BYTES);
	if (a->family == DVX_HAL_SOCK_ABSTRACT) {
		/* only names exactly as dvxn_sw_at_decode() makes them; else family 0 */
		unsigned long long token = 0;
		char canon[sizeof(DVXN_SW_AT_NAME) + 16];

		if (sscanf(a->path, DVXN_SW_AT_NAME "%16llx", &token) != 1)
			return;
		snprintf(canon, sizeof(canon), DVXN_SW_AT_NAME "%016llx", token);
		if (strcmp(canon, a->path))
			return;
		out[0] = DVXN_SW_AT_ABSTRACT;
		put64(out + 4, token);
		return;
	}
	out[0] = DVXN_SW_AT_IP4;
	put16(out + 2, a->port);
	memcpy(out + 8, a->ip, 4);
}

int dvxn_sw_at_decode(struct dvx_hal_sock_addr *a, const uint8_t at[DVXN_SW_AT_BYTES])
{
	unsigned i;

	if (at[0] == DVXN_SW_AT_ABSTRACT) {
		if (at[1] || at[2] || at[3])
			return -EINVAL;
		memset(a, 0, sizeof(*a));
		a->family = DVX_HAL_SOCK_ABSTRACT;
		snprintf(a->path, sizeof(a->path), DVXN_SW_AT_NAME "%016llx",
			 (unsigned long long)get64(at + 4));
		return 0;
	}
	for (i = 1; i < 8; i++)
		if (i != 2 && i != 3 && at[i])
			return -EINVAL;
	if (at[0] != DVXN_SW_AT_IP4 || !get16(at + 2))
		return -EINVAL;
	memset(a, 0, sizeof(*a));
	a->family = DVX_HAL_SOCK_IP4;
	a->port = get16(at + 2);
	memcpy(a->ip, at + 8, 4);
	return 0;
}

void dvxn_handle_put(uint8_t out[DVXN_HANDLE_BYTES], const struct dvxn_handle *h)
{
	memset(out, 0, DVXN_HANDLE_BYTES);
	memcpy(out, h->msg, DVXN_HANDLE_MSG_BYTES);
	put32(out + 104, DVXN_HANDLE_MAGIC);
	out[108] = DVXN_HANDLE_VERSION;
	out[109] = h->dev;
	if (!h->sw)
		return;
	dvxn_sw_id_put(out + 112, &h->id);
	if (h->id.kind == DVXN_SW_ONDEMAND)
		memcpy(out + DVXN_HANDLE_AT, h->at, DVXN_SW_AT_BYTES);
}

int dvxn_handle_get(struct dvxn_handle *h, const uint8_t in[DVXN_HANDLE_BYTES], int sw,
		    char *why, size_t len)
{
	if (get32(in + 104) != DVXN_HANDLE_MAGIC || in[108] != DVXN_HANDLE_VERSION || in[110] ||
	    in[111]) {
		dvxn_say(why, len, "the handle is not a dvx listen handle (magic %08x, version %u)",
		    get32(in + 104), in[108]);
		return -EINVAL;
	}
	memset(h, 0, sizeof(*h));
	memcpy(h->msg, in, DVXN_HANDLE_MSG_BYTES);
	h->dev = in[109];
	h->sw = sw != 0;
	if (sw) {
		dvxn_sw_id_get(&h->id, in + 112);
		memcpy(h->at, in + DVXN_HANDLE_AT, DVXN_SW_AT_BYTES);
	}
	return 0;
}

int dvxn_handle_stage_get(const uint8_t in[DVXN_HANDLE_BYTES], unsigned *slot, uint32_t *gen)
{
	if (get16(in + 96) != DVXN_STAGE_MAGIC || get16(in + 98) >= DVXN_MAX_PEND)
		return 0;
	*slot = get16(in + 98);
	*gen = get32(in + 100);
	return 1;
}

void dvxn_handle_stage_put(uint8_t io[DVXN_HANDLE_BYTES], unsigned slot, uint32_t gen)
{
	put16(io + 96, DVXN_STAGE_MAGIC);
	put16(io + 98, (uint16_t)slot);
	put32(io + 100, gen);
}

void dvxn_handle_stage_clear(uint8_t io[DVXN_HANDLE_BYTES])
{
	memset(io + 96, 0, 8);
}

static const char *kind_name(unsigned k)
{
	return k == DVXN_SW_MESH ? "a mesh" : k == DVXN_SW_ONDEMAND ? "on demand" :
	       k == DVXN_SW_LOCAL ? "none" : "unknown";
}

/* a NIC of the job: rank @r's, whose NICs are r * nnics ... r * nnics + nnics - 1 */
static int in_job(const struct dvxn_sw_self *self, const struct dvxn_sw_id *id)
{
	return self->nnics && id->rank >= 0 && id->rank < self->nranks &&
	       id->nic / self->nnics == (unsigned)id->rank;
}

int dvxn_sw_check(const struct dvxn_sw_self *self, const struct dvxn_sw_id *id,
		  const uint8_t at[DVXN_SW_AT_BYTES], struct dvx_hal_sock_addr *join, char *why,
		  size_t len)
{
	if (id->kind < DVXN_SW_LOCAL || id->kind > DVXN_SW_ONDEMAND) {
		dvxn_say(why, len, "the handle names a NIC of unknown kind %u", id->kind);
		return -EINVAL;
	}
	if (id->kind != self->kind) {
		dvxn_say(why, len, "the listener's wire is %s and this process's %s: set DVX_NET_WIRE "
			      "alike on every rank", kind_name(id->kind), kind_name(self->kind));
		return -EHOSTUNREACH;
	}
	if (self->kind == DVXN_SW_LOCAL) {
		if (id->fabric != self->fabric || id->nic >= self->nnics) {
			dvxn_say(why, len, "the listener's software NIC sim_%u is in another process and "
				      "no wire joins them (DVX_NET_WIRE)", id->nic);
			return -EHOSTUNREACH;
		}
		return 0;
	}
	/* a mesh or on demand: every process of the job has self->nnics NICs */
	if (!in_job(self, id)) {
		dvxn_say(why, len, "the handle names NIC sim_%u of rank %d, which a job of %d ranks "
			      "with %u NICs each does not have", id->nic, id->rank, self->nranks,
		    self->nnics);
		return -EINVAL;
	}
	if (id->rank == self->rank) {
		if (id->fabric != self->fabric) {
			dvxn_say(why, len, "the handle names rank %d, this process's rank, from another "
				      "process", id->rank);
			return -EINVAL;
		}
		return 0;
	}
	if (self->kind == DVXN_SW_MESH)
		return 0;	/* joined at start-up */
	if (dvxn_sw_at_decode(join, at)) {
		dvxn_say(why, len, "the handle's wire address of rank %d is not one (family %u, bytes "
			      "%02x %02x %02x)", id->rank, at[0], at[1], at[2], at[3]);
		return -EINVAL;
	}
	/* one host: the listener's name is made from its fabric identity, which the handle
	 * names too; a token that is not that identity names some other process's wire */
	if (at[0] == DVXN_SW_AT_ABSTRACT && get64(at + 4) != id->fabric) {
		dvxn_say(why, len, "the handle's wire name of rank %d is not its listener's (token "
			      "and fabric identity differ)", id->rank);
		return -EINVAL;
	}
	return 1;
}

int dvxn_handle_code(int err)
{
	return err == -EINVAL ? DVX_NCCL_INTERNAL_ERROR : DVX_NCCL_SYSTEM_ERROR;
}
