// SPDX-License-Identifier: MIT
/*
 * core/bootstrap/thread.c - the bootstrap adapter for ranks that are threads of one
 * process.
 *
 * One group lock and one condition variable (CLOCK_MONOTONIC) cover the group. Every rank
 * owns a mailbox of max_unexpected slots in the group memory. A send is delivered at once
 * if the receiver already posted a matching receive, else copied into a free slot of the
 * receiver's mailbox, else it waits on the sender's list until the receiver takes it
 * (copying straight from the sender's buffer). Copies happen under the lock, so a request
 * is never part-done. Every message carries its sender's number, and a receive takes the
 * oldest match among the slots and the sender's waiting list.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "bs_priv.h"

#define TG_MAGIC 0x54475250u

enum {
	TR_NEW = 0,	/* never attached */
	TR_ATTACHED,
	TR_GONE,	/* left: its last context was finished */
};

struct bs_tslot {
	uint64_t seq;
	uint64_t len;
	int32_t src;
	uint32_t space;
	uint32_t tag;
	uint32_t used;
};
DVX_STATIC_ASSERT(sizeof(struct bs_tslot) <= DVX_BOOTSTRAP_SLOT_BYTES, "slot record");

struct bs_trank {
	int32_t state;
	int32_t refs;
	int32_t aborted;
	uint32_t next_space;
	uint64_t seq;			/* messages this rank sent */
	struct bs_list posted;		/* receives this rank posted, oldest first */
	struct bs_list waiting;		/* sends of this rank that wait for their receiver */
};
DVX_STATIC_ASSERT(sizeof(struct bs_trank) <= DVX_BOOTSTRAP_TGROUP_RANK_BYTES, "rank record");

struct dvx_bootstrap_tgroup {
	uint32_t magic;
	int32_t nranks;
	uint32_t nslots;
	uint32_t slot_bytes;
	size_t stride;
	int32_t aborted_all;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct dvx_log log;
	struct bs_trank *ranks;
	struct bs_tslot *slots;		/* nranks * nslots, rank-major */
	uint8_t *data;
};
DVX_STATIC_ASSERT(sizeof(struct dvx_bootstrap_tgroup) <= DVX_BOOTSTRAP_TGROUP_HDR_BYTES,
		  "group header");

static const struct dvx_bootstrap_ops tg_ops;

size_t dvx_bootstrap_tgroup_mem_size(int nranks, uint32_t max_unexpected, uint32_t slot_bytes)
{
	if (nranks < 1 || nranks > DVX_BOOTSTRAP_MAX_RANKS ||
	    max_unexpected > DVX_BOOTSTRAP_MAX_SLOTS || slot_bytes > DVX_BOOTSTRAP_MAX_SLOT_BYTES)
		return 0;
	return DVX_BOOTSTRAP_TGROUP_MEM_SIZE(nranks, max_unexpected, slot_bytes);
}

int dvx_bootstrap_tgroup_init(struct dvx_bootstrap_tgroup **group,
			      const struct dvx_bootstrap_tgroup_cfg *attr, void *mem,
			      size_t mem_size)
{
	struct dvx_bootstrap_tgroup *g = mem;
	pthread_condattr_t ca;
	size_t need, n;
	uint8_t *p;
	int ret;

	if (!group || !attr || !mem || ((uintptr_t)mem & 7))
		return -EINVAL;
	need = dvx_bootstrap_tgroup_mem_size(attr->nranks, attr->max_unexpected,
					     attr->slot_bytes);
	if (!need || mem_size < need)
		return -EINVAL;

	memset(mem, 0, need);
	n = (size_t)attr->nranks;
	p = (uint8_t *)mem + DVX_BOOTSTRAP_TGROUP_HDR_BYTES;
	g->ranks = (struct bs_trank *)(void *)p;
	p += n * DVX_BOOTSTRAP_TGROUP_RANK_BYTES;
	g->slots = (struct bs_tslot *)(void *)p;
	p += n * attr->max_unexpected * sizeof(struct bs_tslot);
	g->data = p;
	g->nranks = attr->nranks;
	g->nslots = attr->max_unexpected;
	g->slot_bytes = attr->slot_bytes;
	g->stride = ((size_t)attr->slot_bytes + 7) & ~(size_t)7;
	g->log = attr->log;

	ret = pthread_condattr_init(&ca);
	if (ret)
		return -ret;
	ret = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (ret)
		goto out_attr;
	ret = pthread_cond_init(&g->cond, &ca);
	if (ret)
		goto out_attr;
	ret = pthread_mutex_init(&g->lock, NULL);
	if (ret)
		goto out_cond;
	pthread_condattr_destroy(&ca);
	g->magic = TG_MAGIC;
	*group = g;
	return 0;

out_cond:
	pthread_cond_destroy(&g->cond);
out_attr:
	pthread_condattr_destroy(&ca);
	return -ret;
}

int dvx_bootstrap_tgroup_fini(struct dvx_bootstrap_tgroup *g)
{
	int i;

	if (!g || g->magic != TG_MAGIC)
		return -EINVAL;
	pthread_mutex_lock(&g->lock);
	for (i = 0; i < g->nranks; i++) {
		if (g->ranks[i].state == TR_ATTACHED) {
			pthread_mutex_unlock(&g->lock);
			return -EBUSY;
		}
	}
	g->magic = 0;
	pthread_mutex_unlock(&g->lock);
	pthread_mutex_destroy(&g->lock);
	pthread_cond_destroy(&g->cond);
	return 0;
}

void dvx_bootstrap_tgroup_abort(struct dvx_bootstrap_tgroup *g, int rank)
{
	if (!g || g->magic != TG_MAGIC || rank >= g->nranks)
		return;
	pthread_mutex_lock(&g->lock);
	if (rank < 0)
		g->aborted_all = 1;
	else
		g->ranks[rank].aborted = 1;
	bs_log(&g->log, DVX_LOG_WARN, "bootstrap: thread group rank %d aborted", rank);
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
}

int dvx_bootstrap_thread_init(struct dvx_bootstrap *bs, struct dvx_bootstrap_tgroup *g,
			      int rank)
{
	struct bs_trank *tr;

	if (!bs || !g || g->magic != TG_MAGIC || rank < 0 || rank >= g->nranks)
		return -EINVAL;
	pthread_mutex_lock(&g->lock);
	tr = &g->ranks[rank];
	if (tr->state != TR_NEW) {
		pthread_mutex_unlock(&g->lock);
		return -EBUSY;
	}
	tr->state = TR_ATTACHED;
	tr->refs = 1;
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);

	memset(bs, 0, sizeof(*bs));
	bs->ops = &tg_ops;
	bs->priv = g;
	bs->rank = rank;
	bs->nranks = g->nranks;
	bs->magic = BS_CTX_MAGIC;
	return 0;
}

/* ------------------------------------------------------------------------------------ */

/* Failed: aborted, alone or with the whole group. */
static int tg_dead(const struct dvx_bootstrap_tgroup *g, int rank)
{
	return g->aborted_all || g->ranks[rank].aborted;
}

/* Failed or left (its last context finished). */
static int tg_gone(const struct dvx_bootstrap_tgroup *g, int rank)
{
	return tg_dead(g, rank) || g->ranks[rank].state == TR_GONE;
}

static struct bs_tslot *tg_slot(struct dvx_bootstrap_tgroup *g, int rank, uint32_t i)
{
	return &g->slots[(size_t)rank * g->nslots + i];
}

static uint8_t *tg_slot_data(struct dvx_bootstrap_tgroup *g, int rank, uint32_t i)
{
	return g->data + ((size_t)rank * g->nslots + i) * g->stride;
}

/* Copy a message into a receive request, or fail it on a length mismatch. */
static void tg_deliver(struct bs_req *rr, const void *src, uint64_t len)
{
	if (len == BS_LEN_POISON) {
		bs_req_done(rr, -ECONNRESET);
		return;
	}
	if (rr->len != len) {
		bs_req_done(rr, -EMSGSIZE);
		return;
	}
	if (len)
		memcpy(rr->rbuf, src, len);
	rr->moved = len;
	bs_req_done(rr, 0);
}

static int tg_post_send(struct dvx_bootstrap *bs, struct dvx_bootstrap_req *req, int peer,
			uint32_t space, uint32_t tag, const void *buf, size_t len)
{
	struct dvx_bootstrap_tgroup *g = bs->priv;
	struct bs_trank *me = &g->ranks[bs->rank], *dst = &g->ranks[peer];
	struct bs_req *r = bs_req(req), *rr;
	uint32_t i;

	pthread_mutex_lock(&g->lock);
	bs_req_init(r, 1, peer, space, tag, buf, NULL, len);
	r->seq = ++me->seq;
	if (tg_gone(g, peer) || tg_gone(g, bs->rank)) {
		bs_req_done(r, -ECONNRESET);
		goto out;
	}
	/* a posted receive exists only while nothing it matches is waiting */
	for (rr = dst->posted.head; rr; rr = rr->next)
		if (rr->peer == bs->rank && rr->space == space && rr->tag == tag)
			break;
	if (rr) {
		bs_list_del(&dst->posted, rr);
		tg_deliver(rr, buf, len);
		r->moved = len;
		bs_req_done(r, 0);
		goto out_wake;
	}
	if (len <= g->slot_bytes || len == BS_LEN_POISON) {
		for (i = 0; i < g->nslots; i++) {
			struct bs_tslot *s = tg_slot(g, peer, i);

			if (s->used)
				continue;
			s->used = 1;
			s->seq = r->seq;
			s->len = len;
			s->src = bs->rank;
			s->space = space;
			s->tag = tag;
			if (len && len != BS_LEN_POISON)
				memcpy(tg_slot_data(g, peer, i), buf, len);
			r->moved = len;
			bs_req_done(r, 0);
			goto out_wake;
		}
	}
	bs_list_add(&me->waiting, r);
out_wake:
	pthread_cond_broadcast(&g->cond);
out:
	pthread_mutex_unlock(&g->lock);
	return 0;
}

/* A slot of @rank's mailbox freed: move waiting sends to @rank into free slots, oldest
 * first, so their senders go on (as a socket buffer drains). */
static void tg_refill(struct dvx_bootstrap_tgroup *g, int rank)
{
	struct bs_req *sr, *best;
	uint32_t i;
	int j;

	for (i = 0; i < g->nslots; i++) {
		struct bs_tslot *s = tg_slot(g, rank, i);

		if (s->used)
			continue;
		best = NULL;
		for (j = 0; j < g->nranks; j++)
			for (sr = g->ranks[j].waiting.head; sr; sr = sr->next)
				if (sr->peer == rank && (!best || sr->seq < best->seq) &&
				    (sr->len <= g->slot_bytes || sr->len == BS_LEN_POISON))
					best = sr;
		if (!best)
			return;
		for (j = 0; j < g->nranks; j++)
			if (bs_list_del(&g->ranks[j].waiting, best))
				break;
		s->used = 1;
		s->seq = best->seq;
		s->len = best->len;
		s->src = j;
		s->space = best->space;
		s->tag = best->tag;
		if (best->len && best->len != BS_LEN_POISON)
			memcpy(tg_slot_data(g, rank, i), best->sbuf, best->len);
		best->moved = best->len;
		bs_req_done(best, 0);
	}
}

static int tg_post_recv(struct dvx_bootstrap *bs, struct dvx_bootstrap_req *req, int peer,
			uint32_t space, uint32_t tag, void *buf, size_t len)
{
	struct dvx_bootstrap_tgroup *g = bs->priv;
	struct bs_trank *me = &g->ranks[bs->rank], *src = &g->ranks[peer];
	struct bs_req *r = bs_req(req), *sr, *best_req = NULL;
	struct bs_tslot *best_slot = NULL;
	uint32_t i, best_i = 0;
	uint64_t best = UINT64_MAX;

	pthread_mutex_lock(&g->lock);
	bs_req_init(r, 0, peer, space, tag, NULL, buf, len);
	for (i = 0; i < g->nslots; i++) {
		struct bs_tslot *s = tg_slot(g, bs->rank, i);

		if (s->used && s->src == peer && s->space == space && s->tag == tag &&
		    s->seq < best) {
			best = s->seq;
			best_slot = s;
			best_i = i;
		}
	}
	for (sr = src->waiting.head; sr; sr = sr->next) {
		if (sr->peer == bs->rank && sr->space == space && sr->tag == tag) {
			if (sr->seq < best) {
				best = sr->seq;
				best_req = sr;
				best_slot = NULL;
			}
			break;	/* the list is oldest first */
		}
	}
	if (best_req) {
		bs_list_del(&src->waiting, best_req);
		tg_deliver(r, best_req->sbuf, best_req->len);
		best_req->moved = best_req->len;
		bs_req_done(best_req, 0);
		pthread_cond_broadcast(&g->cond);
	} else if (best_slot) {
		tg_deliver(r, tg_slot_data(g, bs->rank, best_i), best_slot->len);
		best_slot->used = 0;
		tg_refill(g, bs->rank);
		pthread_cond_broadcast(&g->cond);
	} else if (tg_gone(g, peer) || tg_gone(g, bs->rank)) {
		bs_req_done(r, -ECONNRESET);
	} else {
		bs_list_add(&me->posted, r);
	}
	pthread_mutex_unlock(&g->lock);
	return 0;
}

/* Fail the requests that can no longer finish; under the lock. */
static void tg_reap(struct dvx_bootstrap *bs, struct dvx_bootstrap_req *const *reqs, int n)
{
	struct dvx_bootstrap_tgroup *g = bs->priv;
	struct bs_trank *me = &g->ranks[bs->rank];
	int i;

	for (i = 0; i < n; i++) {
		struct bs_req *r = bs_req(reqs[i]);

		if (r->state != DVX_BOOTSTRAP_REQ_QUEUED)
			continue;
		if (!tg_gone(g, r->peer) && !tg_gone(g, bs->rank))
			continue;
		bs_list_del(r->is_send ? &me->waiting : &me->posted, r);
		bs_req_done(r, -ECONNRESET);
	}
}

static int tg_wait(struct dvx_bootstrap *bs, struct dvx_bootstrap_req *const *reqs, int n,
		   uint64_t deadline, int all_ranks)
{
	struct dvx_bootstrap_tgroup *g = bs->priv;
	struct timespec ts;
	int i, ret, pending;

	pthread_mutex_lock(&g->lock);
	for (;;) {
		tg_reap(bs, reqs, n);
		pending = 0;
		ret = 0;
		for (i = 0; i < n; i++) {
			struct bs_req *r = bs_req(reqs[i]);

			if (r->state == DVX_BOOTSTRAP_REQ_DONE) {
				if (r->err && !ret)
					ret = r->err;
			} else {
				pending++;
			}
		}
		if (ret || !pending)
			break;
		if (all_ranks) {
			/* a failed rank dooms a collective; one that left may have finished it */
			for (i = 0; i < g->nranks; i++)
				if (tg_dead(g, i))
					break;
			if (i < g->nranks) {
				ret = -ECONNRESET;
				break;
			}
		}
		if (bs_now_ns() >= deadline) {
			ret = -ETIMEDOUT;
			break;
		}
		ts.tv_sec = (time_t)(deadline / 1000000000ull);
		ts.tv_nsec = (long)(deadline % 1000000000ull);
		if (deadline == UINT64_MAX)
			ts.tv_sec = (time_t)(UINT32_MAX);	/* far enough, and no overflow */
		pthread_cond_timedwait(&g->cond, &g->lock, &ts);
	}
	pthread_mutex_unlock(&g->lock);
	return ret;
}

static int tg_cancel(struct dvx_bootstrap *bs, struct dvx_bootstrap_req *req, int force)
{
	struct dvx_bootstrap_tgroup *g = bs->priv;
	struct bs_trank *me = &g->ranks[bs->rank];
	struct bs_req *r = bs_req(req);
	int ret = 0;

	pthread_mutex_lock(&g->lock);
	switch (r->state) {
	case DVX_BOOTSTRAP_REQ_DONE:
		ret = 1;
		break;
	case DVX_BOOTSTRAP_REQ_QUEUED:
		bs_list_del(r->is_send ? &me->waiting : &me->posted, r);
		r->state = DVX_BOOTSTRAP_REQ_IDLE;
		break;
	default:
		break;
	}
	pthread_mutex_unlock(&g->lock);
	return ret;
}

static uint32_t tg_new_space(struct dvx_bootstrap *bs)
{
	struct dvx_bootstrap_tgroup *g = bs->priv;
	uint32_t s;

	pthread_mutex_lock(&g->lock);
	s = ++g->ranks[bs->rank].next_space;
	pthread_mutex_unlock(&g->lock);
	return s;
}

static void tg_get(struct dvx_bootstrap *bs)
{
	struct dvx_bootstrap_tgroup *g = bs->priv;

	pthread_mutex_lock(&g->lock);
	g->ranks[bs->rank].refs++;
	pthread_mutex_unlock(&g->lock);
}

static void tg_put(struct dvx_bootstrap *bs)
{
	struct dvx_bootstrap_tgroup *g = bs->priv;
	struct bs_trank *me = &g->ranks[bs->rank];

	pthread_mutex_lock(&g->lock);
	if (--me->refs == 0) {
		me->state = TR_GONE;
		bs_log(&g->log, DVX_LOG_DEBUG, "bootstrap: thread group rank %d left", bs->rank);
		pthread_cond_broadcast(&g->cond);
	}
	pthread_mutex_unlock(&g->lock);
}

static const struct dvx_bootstrap_ops tg_ops = {
	.post_send = tg_post_send,
	.post_recv = tg_post_recv,
	.wait = tg_wait,
	.cancel = tg_cancel,
	.new_space = tg_new_space,
	.get = tg_get,
	.put = tg_put,
};
