// SPDX-License-Identifier: MIT
/*
 * core/bootstrap/bootstrap.c - send, recv, allgather, barrier and dup, built on an
 * adapter's primitives (post a send or a receive, wait, cancel).
 *
 * A call that times out with part of its data moved stays pending on the context
 * (bs->pend); only the same call may resume it. Collectives are a ring: in step k rank r
 * forwards block (r - k) to rank r + 1 and receives block (r - k - 1) from rank r - 1, in
 * the internal tag space DVX_BOOTSTRAP_SPACE_INTERNAL | space, tagged with the number of
 * collectives this context completed. A barrier is the same ring with empty blocks.
 */
#include <errno.h>
#include <string.h>

#include "bs_priv.h"

enum {
	PEND_NONE = 0,
	PEND_SEND,
	PEND_RECV,
	PEND_COLL,
};

#define COLL_POSTED 1u

static int bs_valid(const struct dvx_bootstrap *bs)
{
	return bs && bs->magic == BS_CTX_MAGIC && bs->ops && bs->nranks > 0;
}

/* The request ended (or could be taken back) after a timeout: what does the call return? */
static int bs_p2p_finish(struct dvx_bootstrap *bs, int kind, struct dvx_bootstrap_req *req,
			 uint64_t deadline, int peer, uint32_t tag, const void *in, void *out,
			 size_t len)
{
	struct dvx_bootstrap_req *const reqs[1] = { req };
	int ret, c;

	ret = bs->ops->wait(bs, reqs, 1, deadline, 0);
	if (ret != -ETIMEDOUT) {
		if (ret) {
			/* failed, or wait gave up early (-ENOBUFS): take it back */
			c = bs->ops->cancel(bs, req, 1);
			if (c == 1 && bs_req(req)->err == 0)
				ret = 0;
		}
		bs->pend = PEND_NONE;
		bs_req(req)->state = DVX_BOOTSTRAP_REQ_IDLE;
		return ret;
	}
	c = bs->ops->cancel(bs, req, 0);
	if (c == 0) {
		bs->pend = PEND_NONE;
		return -ETIMEDOUT;
	}
	if (c == 1) {
		/* finished while we were giving up */
		bs->pend = PEND_NONE;
		ret = bs_req(req)->err;
		bs_req(req)->state = DVX_BOOTSTRAP_REQ_IDLE;
		return ret;
	}
	bs->pend = (uint32_t)kind;
	bs->pend_peer = peer;
	bs->pend_tag = tag;
	bs->pend_in = in;
	bs->pend_out = out;
	bs->pend_len = len;
	return -ETIMEDOUT;
}

int dvx_bootstrap_send(struct dvx_bootstrap *bs, int peer, uint32_t tag, const void *buf,
		       size_t len, uint64_t timeout_ns)
{
	uint64_t deadline;
	int ret;

	if (!bs_valid(bs) || peer < 0 || peer >= bs->nranks || peer == bs->rank ||
	    (!buf && len))
		return -EINVAL;
	deadline = bs_deadline(bs, timeout_ns);
	if (bs->pend) {
		if (bs->pend != PEND_SEND || bs->pend_peer != peer || bs->pend_tag != tag ||
		    bs->pend_in != buf || bs->pend_len != len)
			return -EBUSY;
	} else {
		ret = bs->ops->post_send(bs, &bs->req[0], peer, bs->space, tag, buf, len);
		if (ret)
			return ret;
	}
	return bs_p2p_finish(bs, PEND_SEND, &bs->req[0], deadline, peer, tag, buf, NULL, len);
}

int dvx_bootstrap_recv(struct dvx_bootstrap *bs, int peer, uint32_t tag, void *buf, size_t len,
		       uint64_t timeout_ns)
{
	uint64_t deadline;
	int ret;

	if (!bs_valid(bs) || peer < 0 || peer >= bs->nranks || peer == bs->rank ||
	    (!buf && len))
		return -EINVAL;
	deadline = bs_deadline(bs, timeout_ns);
	if (bs->pend) {
		if (bs->pend != PEND_RECV || bs->pend_peer != peer || bs->pend_tag != tag ||
		    bs->pend_out != buf || bs->pend_len != len)
			return -EBUSY;
	} else {
		ret = bs->ops->post_recv(bs, &bs->req[1], peer, bs->space, tag, buf, len);
		if (ret)
			return ret;
	}
	return bs_p2p_finish(bs, PEND_RECV, &bs->req[1], deadline, peer, tag, NULL, buf, len);
}

/* Best effort: tell the ring successor that this collective failed (see BS_LEN_POISON). */
static void bs_coll_poison(struct dvx_bootstrap *bs)
{
	int right = (bs->rank + 1) % bs->nranks;

	if (bs->nranks < 2)
		return;
	if (!bs->ops->post_send(bs, &bs->req[0], right, DVX_BOOTSTRAP_SPACE_INTERNAL | bs->space,
				bs->coll_seq, NULL, BS_LEN_POISON))
		bs->ops->cancel(bs, &bs->req[0], 1);
	bs_req(&bs->req[0])->state = DVX_BOOTSTRAP_REQ_IDLE;
}

static void bs_coll_abandon(struct dvx_bootstrap *bs)
{
	if (bs->coll_flags & COLL_POSTED) {
		bs->ops->cancel(bs, &bs->req[0], 1);
		bs->ops->cancel(bs, &bs->req[1], 1);
	}
	bs_coll_poison(bs);
	bs_req(&bs->req[0])->state = DVX_BOOTSTRAP_REQ_IDLE;
	bs_req(&bs->req[1])->state = DVX_BOOTSTRAP_REQ_IDLE;
	bs->coll_flags = 0;
	bs->coll_step = 0;
	bs->pend = PEND_NONE;
}

static int bs_coll(struct dvx_bootstrap *bs, const void *in, void *out, size_t len,
		   uint64_t timeout_ns)
{
	struct dvx_bootstrap_req *const reqs[2] = { &bs->req[0], &bs->req[1] };
	uint32_t n = (uint32_t)bs->nranks, r = (uint32_t)bs->rank;
	uint32_t right = (r + 1) % n, left = (r + n - 1) % n;
	uint32_t space = DVX_BOOTSTRAP_SPACE_INTERNAL | bs->space;
	uint8_t *o = out;
	uint64_t deadline;
	int ret;

	deadline = bs_deadline(bs, timeout_ns);
	if (bs->pend) {
		if (bs->pend != PEND_COLL || bs->pend_in != in || bs->pend_out != out ||
		    bs->pend_len != len)
			return -EBUSY;
	} else {
		if (len && o + (size_t)r * len != (const uint8_t *)in)
			memmove(o + (size_t)r * len, in, len);
		bs->coll_step = 0;
		bs->coll_flags = 0;
	}
	while (bs->coll_step < n - 1) {
		if (!(bs->coll_flags & COLL_POSTED)) {
			uint32_t sblk = (r + n - bs->coll_step) % n;
			uint32_t rblk = (r + 2 * n - bs->coll_step - 1) % n;

			ret = bs->ops->post_send(bs, &bs->req[0], (int)right, space, bs->coll_seq,
						 len ? o + (size_t)sblk * len : NULL, len);
			if (ret)
				goto fail;
			ret = bs->ops->post_recv(bs, &bs->req[1], (int)left, space, bs->coll_seq,
						 len ? o + (size_t)rblk * len : NULL, len);
			if (ret) {
				bs->ops->cancel(bs, &bs->req[0], 1);
				goto fail;
			}
			bs->coll_flags |= COLL_POSTED;
		}
		ret = bs->ops->wait(bs, reqs, 2, deadline, 1);
		if (ret == -ETIMEDOUT) {
			bs->pend = PEND_COLL;
			bs->pend_in = in;
			bs->pend_out = out;
			bs->pend_len = len;
			return ret;
		}
		if (ret)
			goto fail;
		bs_req(&bs->req[0])->state = DVX_BOOTSTRAP_REQ_IDLE;
		bs_req(&bs->req[1])->state = DVX_BOOTSTRAP_REQ_IDLE;
		bs->coll_flags = 0;
		bs->coll_step++;
	}
	bs->coll_seq++;
	bs->coll_step = 0;
	bs->pend = PEND_NONE;
	return 0;
fail:
	bs_coll_abandon(bs);
	return ret;
}

int dvx_bootstrap_allgather(struct dvx_bootstrap *bs, const void *in, void *out, size_t len,
			    uint64_t timeout_ns)
{
	if (!bs_valid(bs) || !in || !out || !len || len > SIZE_MAX / (size_t)bs->nranks)
		return -EINVAL;
	return bs_coll(bs, in, out, len, timeout_ns);
}

int dvx_bootstrap_barrier(struct dvx_bootstrap *bs, uint64_t timeout_ns)
{
	if (!bs_valid(bs))
		return -EINVAL;
	return bs_coll(bs, NULL, NULL, 0, timeout_ns);
}

int dvx_bootstrap_dup(struct dvx_bootstrap *bs, struct dvx_bootstrap *out)
{
	uint32_t space;

	if (!bs_valid(bs) || !out || out == bs)
		return -EINVAL;
	if (bs->pend)
		return -EBUSY;
	space = bs->ops->new_space(bs);
	if (!space || (space & DVX_BOOTSTRAP_SPACE_INTERNAL))
		return -ENOSPC;
	memset(out, 0, sizeof(*out));
	out->ops = bs->ops;
	out->priv = bs->priv;
	out->rank = bs->rank;
	out->nranks = bs->nranks;
	out->space = space;
	out->magic = BS_CTX_MAGIC;
	bs->ops->get(bs);
	return 0;
}

int dvx_bootstrap_fini(struct dvx_bootstrap *bs)
{
	if (!bs_valid(bs))
		return -EINVAL;
	switch (bs->pend) {
	case PEND_SEND:
		bs->ops->cancel(bs, &bs->req[0], 1);
		break;
	case PEND_RECV:
		bs->ops->cancel(bs, &bs->req[1], 1);
		break;
	case PEND_COLL:
		bs_coll_abandon(bs);
		break;
	default:
		break;
	}
	bs->pend = PEND_NONE;
	bs->ops->put(bs);
	bs->magic = 0;
	bs->ops = NULL;
	bs->priv = NULL;
	return 0;
}
