// SPDX-License-Identifier: MIT
/*
 * core/bootstrap/sock_io.c - the sockets adapter's progress engine, once the mesh is up.
 *
 * Framing: a 24-byte big-endian header (magic, version, flags, space, tag, length), then
 * the payload. Each peer has a send queue (one message on the wire at a time, in order)
 * and a reader: a header is matched against the receives posted for that peer (in post
 * order); a message nobody waits for goes to a free unexpected slot; if there is none (or
 * it is too big) the reader stops on that peer until a receive for it is posted or a slot
 * frees ("stalled"). Receives check the slots first, oldest first (sock_ops.c).
 *
 * A reader also stops once it has finished a posted receive, so that every hal call a
 * request makes is one its result depends on: a failure of any of them fails it. A
 * failed send or receive (or end of stream) ends the connection: every request on it
 * finishes with -ECONNRESET (-EPROTO for a header that breaks the frame's bounds:
 * sk_rx_header()).
 */
#include <errno.h>
#include <string.h>

#include <dvx/byteorder.h>

#include "sock_priv.h"

/* Wait for @events on @fd until @deadline: 1 ready, -ETIMEDOUT, or the poll's errno. */
int dvx_bs_sock_poll1(struct bs_sock *st, int fd, short events, uint64_t deadline)
{
	struct dvx_hal_pollfd p = { .fd = fd, .events = events };
	uint64_t now;
	int n;

	for (;;) {
		now = dvx_hal_now_ns(st->hal);
		if (now >= deadline)
			return -ETIMEDOUT;
		n = dvx_hal_sock_poll(st->hal, &p, 1, deadline - now);
		if (n > 0)
			return 1;
		if (n < 0)
			return n;
	}
}

int dvx_bs_sock_io_full(struct bs_sock *st, int fd, void *buf, size_t len, int wr,
			uint64_t deadline)
{
	uint8_t *p = buf;
	size_t done = 0, n;
	int ret;

	while (done < len) {
		if (wr) {
			struct dvx_hal_iov iov = { .base = p + done, .len = len - done };

			ret = dvx_hal_sock_send(st->hal, fd, &iov, 1, &n);
		} else {
			ret = dvx_hal_sock_recv(st->hal, fd, p + done, len - done, &n);
		}
		if (!ret && n) {
			done += n;
			continue;
		}
		if (!ret || ret == -EPIPE || ret == -ECONNRESET)
			return -ECONNRESET;	/* end of stream, or the peer hung up */
		if (ret != -EAGAIN)
			return ret;
		ret = dvx_bs_sock_poll1(st, fd, wr ? DVX_HAL_POLL_OUT : DVX_HAL_POLL_IN, deadline);
		if (ret < 0)
			return ret;
	}
	return 0;
}

void dvx_bs_sock_fail_peer(struct bs_sock *st, int p, int err)
{
	struct bs_speer *pe = &st->peers[p];
	struct bs_req *r;

	if (pe->fd >= 0)
		(void)dvx_hal_sock_close(st->hal, pe->fd);	/* gone whatever it says */
	pe->fd = -1;
	if (!pe->err) {
		pe->err = err;
		if (!pe->left)
			st->nfailed++;
		bs_log(&st->log, DVX_LOG_WARN, "bootstrap: rank %d lost rank %d: %d", st->rank, p,
		       err);
	}
	while ((r = pe->txq.head)) {
		pe->txq.head = r->next;
		bs_req_done(r, pe->err);
	}
	pe->txq.tail = NULL;
	while ((r = pe->rxq.head)) {
		pe->rxq.head = r->next;
		bs_req_done(r, pe->err);
	}
	pe->rxq.tail = NULL;
	if (pe->rx_req)
		bs_req_done(pe->rx_req, pe->err);
	pe->rx_req = NULL;
	if (pe->rx_slot >= 0 && !st->slots[pe->rx_slot].complete)
		st->slots[pe->rx_slot].used = 0;
	pe->rx_slot = -1;
	pe->rx_state = RX_HDR;
	pe->rx_discard = 0;
	pe->rx_hgot = 0;
}

/* The payload is all in: 1 when that finished a posted receive. */
static int sk_rx_body_done(struct bs_sock *st, struct bs_speer *pe)
{
	int done = 0;

	if (pe->rx_req) {
		pe->rx_req->moved = pe->rx_len;
		bs_req_done(pe->rx_req, 0);
		done = 1;
	} else if (pe->rx_slot >= 0) {
		st->slots[pe->rx_slot].complete = 1;
		st->slots[pe->rx_slot].got = pe->rx_len;
	}
	pe->rx_req = NULL;
	pe->rx_slot = -1;
	pe->rx_discard = 0;
	pe->rx_state = RX_HDR;
	return done;
}

int dvx_bs_sock_rx_dispatch(struct bs_sock *st, struct bs_speer *pe, int p)
{
	struct bs_req *r;
	uint32_t i;
	int done = 0;

	for (r = pe->rxq.head; r; r = r->next)
		if (r->space == pe->rx_space && r->tag == pe->rx_tag)
			break;
	pe->rx_req = NULL;
	pe->rx_slot = -1;
	pe->rx_discard = 0;
	if (r) {
		bs_list_del(&pe->rxq, r);
		if (pe->rx_len == BS_LEN_POISON) {
			bs_req_done(r, -ECONNRESET);
			pe->rx_state = RX_HDR;
			return 1;
		}
		if (r->len != pe->rx_len) {
			bs_req_done(r, -EMSGSIZE);
			pe->rx_discard = 1;
			done = 1;
		} else {
			pe->rx_req = r;
		}
		goto body;
	}
	if (pe->rx_len <= st->slot_bytes || pe->rx_len == BS_LEN_POISON) {
		for (i = 0; i < st->nslots; i++) {
			struct bs_sslot *s = &st->slots[i];

			if (s->used)
				continue;
			s->used = 1;
			s->complete = 0;
			s->got = 0;
			s->seq = ++st->seq;
			s->len = pe->rx_len;
			s->peer = p;
			s->space = pe->rx_space;
			s->tag = pe->rx_tag;
			if (pe->rx_len == BS_LEN_POISON) {
				s->complete = 1;
				pe->rx_state = RX_HDR;
				return 0;
			}
			pe->rx_slot = (int32_t)i;
			goto body;
		}
	}
	pe->rx_state = RX_STALL;
	return 0;
body:
	pe->rx_state = RX_BODY;
	pe->rx_got = 0;
	if (!pe->rx_len)
		done |= sk_rx_body_done(st, pe);
	return done;
}

/* A header that breaks the frame's rules: say why, and fail the peer with -EPROTO. */
static int sk_rx_bad(struct bs_sock *st, int p, const char *why, uint64_t v)
{
	bs_log(&st->log, DVX_LOG_ERR, "bootstrap: rank %d: bad frame from rank %d: %s (%llu)",
	       st->rank, p, why, (unsigned long long)v);
	dvx_bs_sock_fail_peer(st, p, -EPROTO);
	return -1;
}

/*
 * A header is in: check it and find where its payload goes. 1 when that finished a
 * posted receive, -1 when it ended the connection, else 0. Every field a peer sends is
 * checked before it is used: another magic or version, unknown flags, a goodbye or a
 * poison that carries a length, a length above the context's largest message: the
 * peer is failed (-EPROTO) and nothing more is read from it, so a claimed length is
 * never waited for.
 */
static int sk_rx_header(struct bs_sock *st, struct bs_speer *pe, int p)
{
	uint16_t flags = dvx_get_be16(pe->rxhdr + 6);
	uint64_t len = dvx_get_be64(pe->rxhdr + 16);

	pe->rx_hgot = 0;
	if (dvx_get_be32(pe->rxhdr) != WIRE_MAGIC)
		return sk_rx_bad(st, p, "magic", dvx_get_be32(pe->rxhdr));
	if (dvx_get_be16(pe->rxhdr + 4) != WIRE_VERSION)
		return sk_rx_bad(st, p, "version", dvx_get_be16(pe->rxhdr + 4));
	if ((flags & ~WIRE_F_ALL) || flags == WIRE_F_ALL)
		return sk_rx_bad(st, p, "flags", flags);
	if (flags && len)
		return sk_rx_bad(st, p, "a goodbye or poison with a length", len);
	if (len > st->max_msg)
		return sk_rx_bad(st, p, "a length above the largest message", len);
	if (flags & WIRE_F_BYE) {
		pe->left = 1;
		dvx_bs_sock_fail_peer(st, p, -ECONNRESET);
		return -1;
	}
	pe->rx_space = dvx_get_be32(pe->rxhdr + 8);
	pe->rx_tag = dvx_get_be32(pe->rxhdr + 12);
	pe->rx_len = len;
	if (flags & WIRE_F_POISON)
		pe->rx_len = BS_LEN_POISON;
	return dvx_bs_sock_rx_dispatch(st, pe, p);
}

void dvx_bs_sock_rx_progress(struct bs_sock *st, int p)
{
	struct bs_speer *pe = &st->peers[p];
	uint8_t scratch[512];
	uint8_t *dst;
	size_t want, n;
	int ret;

	while (pe->fd >= 0 && pe->rx_state != RX_STALL) {
		if (pe->rx_state == RX_HDR) {
			dst = pe->rxhdr + pe->rx_hgot;
			want = WIRE_HDR - pe->rx_hgot;
		} else if (pe->rx_req) {
			dst = (uint8_t *)pe->rx_req->rbuf + pe->rx_got;
			want = (size_t)(pe->rx_len - pe->rx_got);
		} else if (pe->rx_slot >= 0) {
			dst = dvx_bs_sock_slot_data(st, pe->rx_slot) + pe->rx_got;
			want = (size_t)(pe->rx_len - pe->rx_got);
		} else {
			dst = scratch;
			want = (size_t)(pe->rx_len - pe->rx_got);
			if (want > sizeof(scratch))
				want = sizeof(scratch);
		}
		ret = dvx_hal_sock_recv(st->hal, pe->fd, dst, want, &n);
		if (ret == -EAGAIN)
			return;
		if (ret || !n) {
			/* an error, or the end of the stream without a goodbye */
			dvx_bs_sock_fail_peer(st, p, -ECONNRESET);
			return;
		}
		if (pe->rx_state == RX_HDR) {
			pe->rx_hgot += (uint32_t)n;
			if (pe->rx_hgot < WIRE_HDR)
				continue;
			if (sk_rx_header(st, pe, p))
				return;
			continue;
		}
		pe->rx_got += (uint64_t)n;
		if (pe->rx_req) {
			pe->rx_req->moved = pe->rx_got;
			pe->rx_req->state = DVX_BOOTSTRAP_REQ_ACTIVE;
		} else if (pe->rx_slot >= 0) {
			st->slots[pe->rx_slot].got = pe->rx_got;
		}
		if (pe->rx_got == pe->rx_len && sk_rx_body_done(st, pe))
			return;
	}
}

void dvx_bs_sock_tx_progress(struct bs_sock *st, int p)
{
	struct bs_speer *pe = &st->peers[p];
	struct dvx_hal_iov iov[2];
	struct bs_req *r;
	unsigned k;
	size_t n;
	int ret;

	while (pe->fd >= 0 && (r = pe->txq.head)) {
		if (r->state == DVX_BOOTSTRAP_REQ_QUEUED) {
			int poison = r->len == BS_LEN_POISON;

			dvx_put_be32(pe->txhdr, WIRE_MAGIC);
			dvx_put_be16(pe->txhdr + 4, WIRE_VERSION);
			dvx_put_be16(pe->txhdr + 6, poison ? WIRE_F_POISON : 0);
			dvx_put_be32(pe->txhdr + 8, r->space);
			dvx_put_be32(pe->txhdr + 12, r->tag);
			dvx_put_be64(pe->txhdr + 16, poison ? 0 : r->len);
			if (poison)
				r->len = 0;	/* nothing follows the header */
			pe->tx_hsent = 0;
			r->moved = 0;
		}
		k = 0;
		if (pe->tx_hsent < WIRE_HDR) {
			iov[k].base = pe->txhdr + pe->tx_hsent;
			iov[k].len = WIRE_HDR - pe->tx_hsent;
			k++;
		}
		if (r->moved < r->len) {
			iov[k].base = (const uint8_t *)r->sbuf + r->moved;
			iov[k].len = (size_t)(r->len - r->moved);
			k++;
		}
		ret = dvx_hal_sock_send(st->hal, pe->fd, iov, k, &n);
		if (ret == -EAGAIN)
			return;
		if (ret) {
			dvx_bs_sock_fail_peer(st, p, -ECONNRESET);
			return;
		}
		r->state = DVX_BOOTSTRAP_REQ_ACTIVE;
		if (pe->tx_hsent < WIRE_HDR) {
			size_t h = WIRE_HDR - pe->tx_hsent;

			if (n < h) {
				pe->tx_hsent += (uint32_t)n;
				continue;
			}
			pe->tx_hsent = WIRE_HDR;
			n -= h;
		}
		r->moved += (uint64_t)n;
		if (r->moved == r->len) {
			pe->txq.head = r->next;
			if (!pe->txq.head)
				pe->txq.tail = NULL;
			bs_req_done(r, 0);
			pe->tx_hsent = 0;
		}
	}
}

int dvx_bs_sock_progress(struct bs_sock *st, uint64_t deadline)
{
	uint64_t now;
	int i, n;

	for (i = 0; i < st->nranks; i++) {
		struct bs_speer *pe = &st->peers[i];
		short ev = 0;

		if (pe->rx_state != RX_STALL)
			ev |= DVX_HAL_POLL_IN;
		if (pe->txq.head)
			ev |= DVX_HAL_POLL_OUT;
		/* a stalled reader with nothing to send would spin on a hang-up */
		st->pfd[i].fd = ev ? pe->fd : -1;
		st->pfd[i].events = ev;
		st->pfd[i].revents = 0;
	}
	now = dvx_hal_now_ns(st->hal);
	if (now >= deadline)
		return 0;
	n = dvx_hal_sock_poll(st->hal, st->pfd, (unsigned)st->nranks, deadline - now);
	if (n <= 0)
		return n;	/* time up or interrupted (0: the caller loops), or failed */
	for (i = 0; i < st->nranks; i++) {
		short re = st->pfd[i].revents;

		if (!re || st->pfd[i].fd < 0)
			continue;
		if (re & (DVX_HAL_POLL_OUT | DVX_HAL_POLL_ERR | DVX_HAL_POLL_HUP))
			dvx_bs_sock_tx_progress(st, i);
		if (re & (DVX_HAL_POLL_IN | DVX_HAL_POLL_ERR | DVX_HAL_POLL_HUP))
			dvx_bs_sock_rx_progress(st, i);
	}
	return 0;
}

void dvx_bs_sock_unstall(struct bs_sock *st)
{
	int i;

	for (i = 0; i < st->nranks; i++) {
		if (st->peers[i].rx_state == RX_STALL && st->peers[i].fd >= 0) {
			if (!dvx_bs_sock_rx_dispatch(st, &st->peers[i], i))
				dvx_bs_sock_rx_progress(st, i);
		}
	}
}

/* Whatever does not fit is skipped, and that peer then sees a failure rather than a
 * departure. */
void dvx_bs_sock_say_bye(struct bs_sock *st)
{
	uint8_t h[WIRE_HDR];
	struct dvx_hal_iov iov = { .base = h, .len = sizeof(h) };
	size_t n;
	int i;

	memset(h, 0, sizeof(h));
	dvx_put_be32(h, WIRE_MAGIC);
	dvx_put_be16(h + 4, WIRE_VERSION);
	dvx_put_be16(h + 6, WIRE_F_BYE);
	for (i = 0; i < st->nranks; i++) {
		struct bs_speer *pe = &st->peers[i];

		if (pe->fd < 0 || pe->txq.head)
			continue;
		(void)dvx_hal_sock_send(st->hal, pe->fd, &iov, 1, &n);
	}
}

void dvx_bs_sock_close_all(struct bs_sock *st)
{
	int i;

	for (i = 0; i < st->nranks; i++) {
		if (st->peers[i].fd >= 0)
			(void)dvx_hal_sock_close(st->hal, st->peers[i].fd);
		st->peers[i].fd = -1;
	}
}
