// SPDX-License-Identifier: MIT
/*
 * core/bootstrap/sock_ops.c - the sockets adapter's struct dvx_bootstrap_ops: post a
 * send or a receive, wait, cancel, duplicates' tag spaces and references, and the clock.
 *
 * Every primitive holds the rank's lock for its whole duration (docs/bootstrap.md,
 * Threads), so the progress engine (sock_io.c) and the hal below it are driven by one
 * thread at a time.
 */
#include <errno.h>
#include <string.h>

#include "sock_priv.h"

static int sk_post_send(struct dvx_bootstrap *bs, struct dvx_bootstrap_req *req, int peer,
			uint32_t space, uint32_t tag, const void *buf, size_t len)
{
	struct bs_sock *st = bs->priv;
	struct bs_speer *pe = &st->peers[peer];
	struct bs_req *r = bs_req(req);

	pthread_mutex_lock(&st->lock);
	bs_req_init(r, 1, peer, space, tag, buf, NULL, len);
	if (len != BS_LEN_POISON && len > st->max_msg) {
		bs_req_done(r, -EMSGSIZE);	/* the peer would refuse it */
	} else if (pe->err || pe->fd < 0) {
		bs_req_done(r, pe->err ? pe->err : -ECONNRESET);
	} else {
		bs_list_add(&pe->txq, r);
		dvx_bs_sock_tx_progress(st, peer);
	}
	pthread_mutex_unlock(&st->lock);
	return 0;
}

static int sk_post_recv(struct dvx_bootstrap *bs, struct dvx_bootstrap_req *req, int peer,
			uint32_t space, uint32_t tag, void *buf, size_t len)
{
	struct bs_sock *st = bs->priv;
	struct bs_speer *pe = &st->peers[peer];
	struct bs_req *r = bs_req(req);
	struct bs_sslot *best = NULL, *s;
	uint32_t i;
	int bi = -1;

	pthread_mutex_lock(&st->lock);
	bs_req_init(r, 0, peer, space, tag, NULL, buf, len);
	if (len > st->max_msg) {
		/* no peer may send that much: nothing could ever match it */
		bs_req_done(r, -EMSGSIZE);
		pthread_mutex_unlock(&st->lock);
		return 0;
	}
	for (i = 0; i < st->nslots; i++) {
		s = &st->slots[i];
		if (s->used && s->peer == peer && s->space == space && s->tag == tag &&
		    (!best || s->seq < best->seq)) {
			best = s;
			bi = (int)i;
		}
	}
	if (best && best->complete) {
		if (best->len == BS_LEN_POISON) {
			bs_req_done(r, -ECONNRESET);
		} else if (best->len != len) {
			bs_req_done(r, -EMSGSIZE);
		} else {
			if (len)
				memcpy(buf, dvx_bs_sock_slot_data(st, bi), len);
			r->moved = len;
			bs_req_done(r, 0);
		}
		best->used = 0;
		dvx_bs_sock_unstall(st);
	} else if (best) {
		/* the reader is filling this slot right now: take it over */
		if (best->len != len) {
			bs_req_done(r, -EMSGSIZE);
			pe->rx_discard = 1;
		} else {
			if (best->got)
				memcpy(buf, dvx_bs_sock_slot_data(st, bi), (size_t)best->got);
			r->moved = best->got;
			if (best->got)
				r->state = DVX_BOOTSTRAP_REQ_ACTIVE;
			pe->rx_req = r;
		}
		best->used = 0;
		pe->rx_slot = -1;
		dvx_bs_sock_unstall(st);
	} else if (pe->err || pe->fd < 0) {
		bs_req_done(r, pe->err ? pe->err : -ECONNRESET);
	} else {
		bs_list_add(&pe->rxq, r);
		if (pe->rx_state == RX_STALL && !dvx_bs_sock_rx_dispatch(st, pe, peer))
			dvx_bs_sock_rx_progress(st, peer);
	}
	pthread_mutex_unlock(&st->lock);
	return 0;
}

static int sk_wait(struct dvx_bootstrap *bs, struct dvx_bootstrap_req *const *reqs, int n,
		   uint64_t deadline, int all_ranks)
{
	struct bs_sock *st = bs->priv;
	uint32_t failed0;
	int i, ret, pending;

	pthread_mutex_lock(&st->lock);
	failed0 = st->nfailed;
	for (;;) {
		dvx_bs_sock_unstall(st);
		pending = 0;
		ret = 0;
		for (i = 0; i < n; i++) {
			struct bs_req *r = bs_req(reqs[i]);

			if (r->state == DVX_BOOTSTRAP_REQ_DONE) {
				if (r->err && !ret)
					ret = r->err;
				continue;
			}
			pending++;
			/* the reader of that peer is stuck on a message nobody takes */
			if (!r->is_send && st->peers[r->peer].rx_state == RX_STALL &&
			    st->peers[r->peer].rx_req != r && !ret)
				ret = -ENOBUFS;
		}
		if (ret || (!pending && (!all_ranks || st->nfailed == failed0)))
			break;
		if (all_ranks) {
			/* a failed rank dooms a collective (also one found failed while this
			 * rank's part of it finished); one that left may have finished it */
			for (i = 0; i < st->nranks; i++)
				if (st->peers[i].err && !st->peers[i].left)
					break;
			if (i < st->nranks) {
				ret = st->peers[i].err;
				break;
			}
			if (!pending)
				break;
		}
		if (dvx_hal_now_ns(st->hal) >= deadline) {
			ret = -ETIMEDOUT;
			break;
		}
		/* a poll that fails (not one that is interrupted) ends the wait with its errno */
		ret = dvx_bs_sock_progress(st, deadline);
		if (ret)
			break;
	}
	pthread_mutex_unlock(&st->lock);
	return ret;
}

static int sk_cancel(struct dvx_bootstrap *bs, struct dvx_bootstrap_req *req, int force)
{
	struct bs_sock *st = bs->priv;
	struct bs_req *r = bs_req(req);
	struct bs_speer *pe;
	int ret = 0;

	pthread_mutex_lock(&st->lock);
	if (r->state == DVX_BOOTSTRAP_REQ_DONE) {
		ret = 1;
		goto out;
	}
	if (r->state == DVX_BOOTSTRAP_REQ_IDLE)
		goto out;
	pe = &st->peers[r->peer];
	if (r->is_send) {
		if (r->state == DVX_BOOTSTRAP_REQ_QUEUED) {
			bs_list_del(&pe->txq, r);
		} else if (!force) {
			ret = -EBUSY;
			goto out;
		} else {
			/* half a message is on the wire: the stream cannot be framed again */
			bs_list_del(&pe->txq, r);
			dvx_bs_sock_fail_peer(st, r->peer, -ECONNRESET);
		}
	} else if (pe->rx_req == r) {
		if (r->state == DVX_BOOTSTRAP_REQ_QUEUED && pe->rx_got == 0) {
			/* header read, nothing copied: leave the message for someone else */
			pe->rx_req = NULL;
			pe->rx_state = RX_STALL;
		} else if (!force) {
			ret = -EBUSY;
			goto out;
		} else {
			pe->rx_req = NULL;
			pe->rx_discard = 1;	/* drop the rest of this message */
		}
	} else {
		bs_list_del(&pe->rxq, r);
	}
	r->next = NULL;
	r->state = DVX_BOOTSTRAP_REQ_IDLE;
out:
	pthread_mutex_unlock(&st->lock);
	return ret;
}

static uint32_t sk_new_space(struct dvx_bootstrap *bs)
{
	struct bs_sock *st = bs->priv;
	uint32_t s;

	pthread_mutex_lock(&st->lock);
	s = ++st->next_space;
	pthread_mutex_unlock(&st->lock);
	return s;
}

static void sk_get(struct dvx_bootstrap *bs)
{
	struct bs_sock *st = bs->priv;

	pthread_mutex_lock(&st->lock);
	st->refs++;
	pthread_mutex_unlock(&st->lock);
}

static void sk_put(struct dvx_bootstrap *bs)
{
	struct bs_sock *st = bs->priv;
	int last;

	pthread_mutex_lock(&st->lock);
	last = --st->refs == 0;
	if (last) {
		dvx_bs_sock_say_bye(st);
		dvx_bs_sock_close_all(st);
	}
	pthread_mutex_unlock(&st->lock);
	if (last) {
		st->magic = 0;
		pthread_mutex_destroy(&st->lock);
	}
}

/* The hal's clock (thread-safe in every backend but the mock, which is driven by one
 * thread), read without the lock so that a deadline starts when the call does. */
static uint64_t sk_now_ns(struct dvx_bootstrap *bs)
{
	struct bs_sock *st = bs->priv;

	return dvx_hal_now_ns(st->hal);
}

const struct dvx_bootstrap_ops dvx_bs_sock_ops = {
	.post_send = sk_post_send,
	.post_recv = sk_post_recv,
	.wait = sk_wait,
	.cancel = sk_cancel,
	.new_space = sk_new_space,
	.get = sk_get,
	.put = sk_put,
	.now_ns = sk_now_ns,
};
