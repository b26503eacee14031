// SPDX-License-Identifier: MIT
/*
 * core/bootstrap/sub.c - subgroup contexts: a context over some of the ranks of another,
 * with local ranks 0..nranks-1 and a map to the parent's ranks.
 *
 * A subgroup keeps a duplicate of its parent in the caller's struct dvx_bootstrap_sub;
 * that duplicate's tag space is the subgroup's, so the subgroup's messages and
 * collectives match no other context's. Its ops wrap the duplicate's: post_send and
 * post_recv turn the local peer into the parent's rank and post on the duplicate (the
 * adapter finds its state and this rank's number there); wait, cancel, new_space and the
 * clock pass through. get and put count the subgroup's contexts (the first one and its
 * duplicates); the last put finishes the duplicate, which lets the rank leave if that
 * was its last context. Everything else (send, recv, allgather, barrier, dup, fini, the
 * pending-call rules) is the generic layer's (bootstrap.c), run with local ranks on the
 * subgroup context's own fields. A subgroup of a subgroup stacks: its duplicate is a
 * subgroup context, whose ops translate once more.
 *
 * The duplicate is only ever handed to the adapter's primitives, which read its priv and
 * rank and nothing else, so contexts of one subgroup used from different threads share
 * it without a lock; the count is atomic.
 */
#include <errno.h>
#include <string.h>

#include "bs_priv.h"

#define SUB_MAGIC 0x53554247u	/* "SUBG" */

static const struct dvx_bootstrap_ops sub_ops;

static int sub_post_send(struct dvx_bootstrap *bs, struct dvx_bootstrap_req *req, int peer,
			 uint32_t space, uint32_t tag, const void *buf, size_t len)
{
	struct dvx_bootstrap_sub *st = bs->priv;
	struct dvx_bootstrap *d = &st->dup;

	/* the generic layer checked 0 <= peer < nranks */
	return d->ops->post_send(d, req, st->ranks[peer], space, tag, buf, len);
}

static int sub_post_recv(struct dvx_bootstrap *bs, struct dvx_bootstrap_req *req, int peer,
			 uint32_t space, uint32_t tag, void *buf, size_t len)
{
	struct dvx_bootstrap_sub *st = bs->priv;
	struct dvx_bootstrap *d = &st->dup;

	return d->ops->post_recv(d, req, st->ranks[peer], space, tag, buf, len);
}

/*
 * The adapter waits on the duplicate. With @all_ranks it looks at every rank of its
 * group, not only the members: a failed non-member fails the subgroup's collectives too.
 */
static int sub_wait(struct dvx_bootstrap *bs, struct dvx_bootstrap_req *const *reqs, int nreqs,
		    uint64_t deadline_ns, int all_ranks)
{
	struct dvx_bootstrap_sub *st = bs->priv;
	struct dvx_bootstrap *d = &st->dup;

	return d->ops->wait(d, reqs, nreqs, deadline_ns, all_ranks);
}

static int sub_cancel(struct dvx_bootstrap *bs, struct dvx_bootstrap_req *req, int force)
{
	struct dvx_bootstrap_sub *st = bs->priv;
	struct dvx_bootstrap *d = &st->dup;

	return d->ops->cancel(d, req, force);
}

/* A duplicate of a subgroup draws from the rank's one counter, as every duplicate does. */
static uint32_t sub_new_space(struct dvx_bootstrap *bs)
{
	struct dvx_bootstrap_sub *st = bs->priv;
	struct dvx_bootstrap *d = &st->dup;

	return d->ops->new_space(d);
}

static void sub_get(struct dvx_bootstrap *bs)
{
	struct dvx_bootstrap_sub *st = bs->priv;

	__atomic_fetch_add(&st->refs, 1, __ATOMIC_RELAXED);
}

static void sub_put(struct dvx_bootstrap *bs)
{
	struct dvx_bootstrap_sub *st = bs->priv;

	/* acquire-release: the last one sees every other context's use of the duplicate */
	if (__atomic_sub_fetch(&st->refs, 1, __ATOMIC_ACQ_REL))
		return;
	st->magic = 0;
	dvx_bootstrap_fini(&st->dup);
}

/* The adapter's clock: deadlines must be measured on the one its wait uses. */
static uint64_t sub_now_ns(struct dvx_bootstrap *bs)
{
	struct dvx_bootstrap_sub *st = bs->priv;
	struct dvx_bootstrap *d = &st->dup;

	return d->ops->now_ns ? d->ops->now_ns(d) : bs_now_ns();
}

static const struct dvx_bootstrap_ops sub_ops = {
	.post_send = sub_post_send,
	.post_recv = sub_post_recv,
	.wait = sub_wait,
	.cancel = sub_cancel,
	.new_space = sub_new_space,
	.get = sub_get,
	.put = sub_put,
	.now_ns = sub_now_ns,
};

/* A live subgroup context (the first one or a duplicate), or NULL. */
static const struct dvx_bootstrap_sub *sub_of(const struct dvx_bootstrap *bs)
{
	const struct dvx_bootstrap_sub *st;

	if (!bs || bs->magic != BS_CTX_MAGIC || bs->ops != &sub_ops || !bs->priv)
		return NULL;
	st = bs->priv;
	return st->magic == SUB_MAGIC ? st : NULL;
}

int dvx_bootstrap_sub_init(struct dvx_bootstrap *sub, struct dvx_bootstrap_sub *st,
			   struct dvx_bootstrap *parent, const int32_t *ranks, int nranks)
{
	int i, me = -1, ret;

	if (!sub || !st || !parent || !ranks || sub == parent || sub == &st->dup ||
	    parent == &st->dup)
		return -EINVAL;
	if (parent->magic != BS_CTX_MAGIC || !parent->ops || parent->nranks < 1)
		return -EINVAL;
	/* @st still serves @parent (a subgroup context made with it) */
	if (parent->ops == &sub_ops && parent->priv == st)
		return -EINVAL;
	if (nranks < 1 || nranks > parent->nranks)
		return -EINVAL;
	for (i = 0; i < nranks; i++) {
		if (ranks[i] < 0 || ranks[i] >= parent->nranks || (i && ranks[i] <= ranks[i - 1]))
			return -EINVAL;
		if (ranks[i] == parent->rank)
			me = i;
	}
	if (me < 0)
		return -EINVAL;
	/* -EBUSY (a pending call on @parent), -ENOSPC: nothing taken, @st untouched */
	ret = dvx_bootstrap_dup(parent, &st->dup);
	if (ret)
		return ret;
	st->ranks = ranks;
	st->nranks = nranks;
	st->refs = 1;
	st->magic = SUB_MAGIC;
	st->reserved = 0;

	memset(sub, 0, sizeof(*sub));
	sub->ops = &sub_ops;
	sub->priv = st;
	sub->rank = me;
	sub->nranks = nranks;
	sub->space = st->dup.space;
	sub->magic = BS_CTX_MAGIC;
	return 0;
}

int dvx_bootstrap_sub_global(const struct dvx_bootstrap *sub, int local)
{
	const struct dvx_bootstrap_sub *st = sub_of(sub);

	if (!st || local < 0 || local >= st->nranks)
		return -1;
	return st->ranks[local];
}

int dvx_bootstrap_sub_local(const struct dvx_bootstrap *sub, int global)
{
	const struct dvx_bootstrap_sub *st = sub_of(sub);
	int lo = 0, hi, mid;

	if (!st)
		return -1;
	/* the map is strictly increasing (checked at init) */
	hi = st->nranks - 1;
	while (lo <= hi) {
		mid = lo + (hi - lo) / 2;
		if (st->ranks[mid] == global)
			return mid;
		if (st->ranks[mid] < global)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}
