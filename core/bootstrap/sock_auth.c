// SPDX-License-Identifier: MIT
/*
 * core/bootstrap/sock_auth.c - the handshake that opens every connection of the sockets
 * adapter's set-up, so that only ranks of the job get in.
 *
 *	acceptor				connector
 *	CHALLENGE {rank a, n} nonce_a	->
 *					<-	HELLO / PEER {rank c, n} nonce_c, proof_c
 *						[HELLO: its listening address]
 *	WELCOME {rank a, n} proof_a	->	(or REFUSE {reason}, then close)
 *
 * proof_c = HMAC-SHA-256(secret, "DVXB2 connector " ver type c a n nonce_a nonce_c [addr])
 * proof_a = HMAC-SHA-256(secret, "DVXB2 acceptor  " ver type c a n nonce_a nonce_c)
 *
 * The secret never travels. A proof answers one fresh random challenge, so a recorded
 * one is worth nothing on another connection, and each side's label differs, so a
 * connector's proof cannot be reflected back as an acceptor's. The connector checks the
 * acceptor's proof too: what answers at an address is let in only if it knows the
 * secret. In the open mode (no secret) the key is empty and the nonces are zeros: the
 * same records, which then only check that both ends run this protocol for the same
 * job shape.
 *
 * The acceptor serves up to DVX_BOOTSTRAP_SOCK_HS_SLOTS handshakes at once, each with
 * its own deadline (DVX_BOOTSTRAP_SOCK_HANDSHAKE_NS after its accept), so a stranger
 * that connects and stays silent, trickles bytes or sends garbage holds up nobody: it
 * is refused (REFUSE when it sent a whole record or a bad head; a plain close when it
 * was slow or hung up), counted in st->stats, logged, and the wait for the real rank
 * goes on until the set-up's own deadline. Errors the other end can cause (a reset, a
 * hang-up) refuse that connection; any other failure of a hal call is this process's
 * and ends the set-up with its errno.
 */
#include <errno.h>
#include <string.h>

#include <dvx/byteorder.h>

#include "sock_priv.h"

static const char label_c[16] = "DVXB2 connector ";
static const char label_a[16] = "DVXB2 acceptor  ";

int dvx_bs_sock_remote_err(int err)
{
	switch (err) {
	case -ECONNRESET:
	case -EPIPE:
	case -ECONNABORTED:
	case -ETIMEDOUT:
	case -EHOSTUNREACH:
	case -EHOSTDOWN:
	case -ENETUNREACH:
	case -ENETRESET:
	case -ENETDOWN:
		return 1;
	default:
		return 0;
	}
}

void dvx_bs_sock_proof(const struct bs_sock *st, uint8_t out[AUTH_MAC], int acceptor,
		       uint32_t type, uint32_t c_rank, uint32_t a_rank,
		       const uint8_t *nonce_a, const uint8_t *nonce_c, const struct bs_waddr *w)
{
	struct dvx_bs_sha256 c = st->key.inner;
	uint8_t f[16];

	dvx_put_be16(f, WIRE_VERSION);
	dvx_put_be16(f + 2, (uint16_t)type);
	dvx_put_be32(f + 4, c_rank);
	dvx_put_be32(f + 8, a_rank);
	dvx_put_be32(f + 12, (uint32_t)st->nranks);
	dvx_bs_sha256_update(&c, acceptor ? label_a : label_c, 16);
	dvx_bs_sha256_update(&c, f, sizeof(f));
	dvx_bs_sha256_update(&c, nonce_a, AUTH_NONCE);
	dvx_bs_sha256_update(&c, nonce_c, AUTH_NONCE);
	if (w)
		dvx_bs_sha256_update(&c, w, sizeof(*w));
	dvx_bs_hmac_final(&st->key, &c, out);
}

int dvx_bs_sock_nonce(struct bs_sock *st, uint8_t nonce[AUTH_NONCE])
{
	if (!st->has_secret) {
		memset(nonce, 0, AUTH_NONCE);
		return 0;
	}
	return dvx_hal_random_bytes(st->hal, nonce, AUTH_NONCE);
}

/* ---- the connector ---- */

int dvx_bs_sock_join(struct bs_sock *st, int fd, uint32_t type, int a_rank,
		     const struct bs_waddr *w, uint64_t deadline)
{
	uint8_t chal[REC_CHALLENGE], rec[REC_HELLO], head[SETUP_HEAD], mac[AUTH_MAC];
	uint8_t want[AUTH_MAC], *nonce_c = rec + SETUP_HEAD;
	size_t len = type == MSG_HELLO ? REC_HELLO : REC_PEER;
	uint32_t reason;
	int ret;

	ret = dvx_bs_sock_io_full(st, fd, chal, sizeof(chal), 0, deadline);
	if (ret)
		return ret;
	if (dvx_bs_sock_setup_check(chal, MSG_CHALLENGE, st->nranks) != a_rank) {
		bs_log(&st->log, DVX_LOG_ERR,
		       "bootstrap: rank %d: no challenge of rank %d of %d ranks (v%u) at its "
		       "address: magic %#x version %u type %u rank %u nranks %u", st->rank,
		       a_rank, st->nranks, WIRE_VERSION, dvx_get_be32(chal),
		       dvx_get_be16(chal + 4), dvx_get_be16(chal + 6), dvx_get_be32(chal + 8),
		       dvx_get_be32(chal + 12));
		return -EPROTO;
	}
	ret = dvx_bs_sock_nonce(st, nonce_c);
	if (ret)
		return ret;
	dvx_bs_sock_setup_head(rec, type, (uint32_t)st->rank, (uint32_t)st->nranks);
	dvx_bs_sock_proof(st, rec + SETUP_HEAD + AUTH_NONCE, 0, type, (uint32_t)st->rank,
			  (uint32_t)a_rank, chal + SETUP_HEAD, nonce_c,
			  type == MSG_HELLO ? w : NULL);
	if (type == MSG_HELLO)
		memcpy(rec + REC_PEER, w, sizeof(*w));
	ret = dvx_bs_sock_io_full(st, fd, rec, len, 1, deadline);
	if (!ret)
		ret = dvx_bs_sock_io_full(st, fd, head, sizeof(head), 0, deadline);
	if (ret)
		return ret;
	if (dvx_bs_sock_setup_check(head, MSG_REFUSE, st->nranks) == a_rank) {
		ret = dvx_bs_sock_io_full(st, fd, mac, 4, 0, deadline);
		if (ret)
			return ret;
		reason = dvx_get_be32(mac);
		bs_log(&st->log, DVX_LOG_ERR, "bootstrap: rank %d refused rank %d: %s", a_rank,
		       st->rank, reason == REFUSE_AUTH ? "its proof does not verify (another "
		       "secret, or none on one side)" : reason == REFUSE_TAKEN ?
		       "that rank is already there" : "not a record of this job");
		return reason == REFUSE_AUTH ? -EACCES : -EPROTO;
	}
	if (dvx_bs_sock_setup_check(head, MSG_WELCOME, st->nranks) != a_rank)
		return -EPROTO;
	ret = dvx_bs_sock_io_full(st, fd, mac, sizeof(mac), 0, deadline);
	if (ret)
		return ret;
	dvx_bs_sock_proof(st, want, 1, type, (uint32_t)st->rank, (uint32_t)a_rank,
			  chal + SETUP_HEAD, nonce_c, NULL);
	ret = dvx_bs_ct_equal(mac, want, sizeof(mac)) ? 0 : -EACCES;
	if (ret)
		bs_log(&st->log, DVX_LOG_ERR, "bootstrap: rank %d: what answers as rank %d "
		       "cannot prove it knows the job's secret", st->rank, a_rank);
	dvx_bs_wipe(want, sizeof(want));
	return ret;
}

/* ---- the acceptor ---- */

enum { WHY_AUTH, WHY_PROTO, WHY_SLOW, WHY_HANGUP, WHY_LATE };

static const char *const why_text[] = {
	[WHY_AUTH] = "its proof does not verify: no secret or another one",
	[WHY_PROTO] = "not a set-up record of this job",
	[WHY_SLOW] = "not through within the handshake's time",
	[WHY_HANGUP] = "it hung up",
	[WHY_LATE] = "unfinished when every rank had come",
};

static void hs_free(struct bs_hs *s)
{
	s->fd = -1;
	s->state = HS_FREE;
}

/*
 * Turn a connection away: count and log it, tell it why when @reply (best effort: one
 * non-blocking send), close it. Neither result matters: the socket is gone whatever
 * close answers, and the reply is a courtesy that must not let a stranger fail the
 * set-up.
 */
static void hs_refuse(struct bs_sock *st, struct bs_hs *s, int why, uint32_t reply)
{
	struct dvx_bootstrap_sock_stats *t = &st->stats;
	uint8_t r[REC_REFUSE];
	struct dvx_hal_iov iov = { .base = r, .len = sizeof(r) };
	size_t n;

	t->refused++;
	switch (why) {
	case WHY_AUTH:
		t->refused_auth++;
		t->last_refusal = -EACCES;
		break;
	case WHY_PROTO:
		t->refused_proto++;
		t->last_refusal = -EPROTO;
		break;
	case WHY_SLOW:
		t->refused_slow++;
		t->last_refusal = -ETIMEDOUT;
		break;
	case WHY_HANGUP:
		t->refused_hangup++;
		t->last_refusal = -ECONNRESET;
		break;
	default:
		t->refused_late++;
		t->last_refusal = -ECANCELED;
		break;
	}
	bs_log(&st->log, DVX_LOG_WARN, "bootstrap: rank %d refused a connection (%s); %u "
	       "refused so far", st->rank, why_text[why], t->refused);
	if (reply) {
		dvx_bs_sock_setup_head(r, MSG_REFUSE, (uint32_t)st->rank, (uint32_t)st->nranks);
		dvx_put_be32(r + SETUP_HEAD, reply);
		(void)dvx_hal_sock_send(st->hal, s->fd, &iov, 1, &n);
	}
	(void)dvx_hal_sock_close(st->hal, s->fd);
	hs_free(s);
}

/* Is @rank proven already, here or in another handshake? */
static int hs_taken(struct bs_sock *st, int rank)
{
	int i;

	if (st->peers[rank].fd >= 0)
		return 1;
	for (i = 0; i < DVX_BOOTSTRAP_SOCK_HS_SLOTS; i++)
		if (st->hs[i].state == HS_WELCOME && st->hs[i].rank == rank)
			return 1;
	return 0;
}

/* A whole record is in: check the proof and what it says. 0 (welcomed or refused), or
 * -EPROTO when a proven rank came twice. */
static int hs_record(struct bs_sock *st, struct bs_hs *s, uint32_t type)
{
	const uint8_t *nonce_c = s->in + SETUP_HEAD, *mac = nonce_c + AUTH_NONCE;
	const struct bs_waddr *w = type == MSG_HELLO ? (const void *)(s->in + REC_PEER) : NULL;
	uint8_t want[AUTH_MAC];
	struct dvx_hal_sock_addr a;
	int rank = (int)dvx_get_be32(s->in + 8), ok;

	dvx_bs_sock_proof(st, want, 0, type, (uint32_t)rank, (uint32_t)st->rank, s->nonce,
			  nonce_c, w);
	ok = dvx_bs_ct_equal(mac, want, sizeof(want));
	dvx_bs_wipe(want, sizeof(want));
	if (!ok) {
		hs_refuse(st, s, WHY_AUTH, REFUSE_AUTH);
		return 0;
	}
	/* a rank that others connect to advertises where it listens */
	if (w && rank < st->nranks - 1 && dvx_bs_sock_waddr_to(&a, w)) {
		hs_refuse(st, s, WHY_PROTO, REFUSE_PROTO);
		return 0;
	}
	if (hs_taken(st, rank)) {
		bs_log(&st->log, DVX_LOG_ERR, "bootstrap: rank %d: rank %d proved itself twice",
		       st->rank, rank);
		hs_refuse(st, s, WHY_PROTO, REFUSE_TAKEN);
		return -EPROTO;
	}
	if (w)
		memcpy(&st->table[rank], w, sizeof(*w));
	s->rank = rank;
	s->state = HS_WELCOME;
	dvx_bs_sock_setup_head(s->out, MSG_WELCOME, (uint32_t)st->rank, (uint32_t)st->nranks);
	dvx_bs_sock_proof(st, s->out + SETUP_HEAD, 1, type, (uint32_t)rank, (uint32_t)st->rank,
			  s->nonce, nonce_c, NULL);
	s->out_len = REC_WELCOME;
	s->out_sent = 0;
	return 0;
}

/* The head is in: is it a record of @type from a rank in [@lo, @hi) of this job? */
static int hs_head_ok(const struct bs_sock *st, const struct bs_hs *s, uint32_t type, int lo,
		      int hi)
{
	int rank = dvx_bs_sock_setup_check(s->in, type, st->nranks);

	return rank >= lo && rank < hi;
}

/* Move one handshake on as far as it goes without waiting. 0, or a fatal errno. */
static int hs_step(struct bs_sock *st, struct bs_hs *s, uint32_t type, int lo, int hi,
		   int *have)
{
	struct dvx_hal_iov iov;
	size_t n;
	int ret;

	for (;;) {
		if (s->out_sent < s->out_len) {
			iov.base = s->out + s->out_sent;
			iov.len = s->out_len - s->out_sent;
			ret = dvx_hal_sock_send(st->hal, s->fd, &iov, 1, &n);
			if (ret == -EAGAIN)
				return 0;
			if (ret && dvx_bs_sock_remote_err(ret)) {
				hs_refuse(st, s, WHY_HANGUP, 0);
				return 0;
			}
			if (ret)
				return ret;
			s->out_sent += (uint32_t)n;
			if (s->out_sent < s->out_len)
				continue;
			if (s->state == HS_WELCOME) {
				st->peers[s->rank].fd = s->fd;
				st->stats.admitted++;
				(*have)++;
				bs_log(&st->log, DVX_LOG_DEBUG, "bootstrap: rank %d let rank %d in",
				       st->rank, s->rank);
				hs_free(s);
				return 0;
			}
			s->state = HS_READ;	/* the challenge is out: wait for the answer */
			return 0;
		}
		ret = dvx_hal_sock_recv(st->hal, s->fd, s->in + s->in_got, s->in_want - s->in_got,
					&n);
		if (ret == -EAGAIN)
			return 0;
		if (ret && !dvx_bs_sock_remote_err(ret))
			return ret;
		if (ret || !n) {
			hs_refuse(st, s, WHY_HANGUP, 0);
			return 0;
		}
		s->in_got += (uint32_t)n;
		if (s->in_got < s->in_want)
			continue;
		if (s->in_want == SETUP_HEAD) {
			/* nothing past a bad head is read: it cannot make us wait */
			if (!hs_head_ok(st, s, type, lo, hi)) {
				hs_refuse(st, s, WHY_PROTO, REFUSE_PROTO);
				return 0;
			}
			s->in_want = type == MSG_HELLO ? REC_HELLO : REC_PEER;
			continue;
		}
		ret = hs_record(st, s, type);
		if (ret || s->state != HS_WELCOME)
			return ret;
	}
}

/* Take the pending connections there are room for; each gets its challenge. 0, or a
 * fatal errno. */
static int hs_accept(struct bs_sock *st, int lfd, uint32_t type, int lo, int hi, int *have,
		     uint64_t deadline)
{
	struct bs_hs *s;
	uint64_t now;
	int i, fd, ret;

	for (i = 0; i < DVX_BOOTSTRAP_SOCK_HS_SLOTS; i++) {
		s = &st->hs[i];
		if (s->state != HS_FREE)
			continue;
		ret = dvx_hal_sock_accept(st->hal, lfd, &fd);
		if (ret == -EAGAIN)
			return 0;
		if (ret)
			return ret;
		now = dvx_hal_now_ns(st->hal);
		memset(s, 0, sizeof(*s));
		s->fd = fd;
		s->rank = -1;
		s->state = HS_CHALLENGE;
		s->deadline = bs_deadline_at(now, DVX_BOOTSTRAP_SOCK_HANDSHAKE_NS);
		if (s->deadline > deadline)
			s->deadline = deadline;
		s->in_want = SETUP_HEAD;
		ret = dvx_bs_sock_nonce(st, s->nonce);
		if (ret)
			return ret;	/* the caller closes it */
		dvx_bs_sock_setup_head(s->out, MSG_CHALLENGE, (uint32_t)st->rank,
				       (uint32_t)st->nranks);
		memcpy(s->out + SETUP_HEAD, s->nonce, AUTH_NONCE);
		s->out_len = REC_CHALLENGE;
		ret = hs_step(st, s, type, lo, hi, have);
		if (ret)
			return ret;
	}
	return 0;
}

int dvx_bs_sock_admit(struct bs_sock *st, int lfd, uint32_t type, int lo, int hi, int count,
		      uint64_t deadline)
{
	struct dvx_hal_pollfd pfd[DVX_BOOTSTRAP_SOCK_HS_SLOTS + 1];
	struct bs_hs *slot[DVX_BOOTSTRAP_SOCK_HS_SLOTS + 1];
	uint64_t now, next;
	int have = 0, ret = 0, i, k, n, room;

	for (i = 0; i < DVX_BOOTSTRAP_SOCK_HS_SLOTS; i++)
		hs_free(&st->hs[i]);
	while (have < count) {
		now = dvx_hal_now_ns(st->hal);
		if (now >= deadline) {
			ret = -ETIMEDOUT;
			break;
		}
		next = deadline;
		k = 0;
		room = 0;
		for (i = 0; i < DVX_BOOTSTRAP_SOCK_HS_SLOTS; i++) {
			struct bs_hs *s = &st->hs[i];

			if (s->state == HS_FREE) {
				room = 1;
				continue;
			}
			if (now >= s->deadline) {
				hs_refuse(st, s, WHY_SLOW, 0);
				room = 1;
				continue;
			}
			if (s->deadline < next)
				next = s->deadline;
			pfd[k].fd = s->fd;
			pfd[k].events = s->out_sent < s->out_len ? DVX_HAL_POLL_OUT : DVX_HAL_POLL_IN;
			pfd[k].revents = 0;
			slot[k++] = s;
		}
		if (room) {
			/* the listener only while a handshake can be taken on */
			pfd[k].fd = lfd;
			pfd[k].events = DVX_HAL_POLL_IN;
			pfd[k].revents = 0;
			slot[k++] = NULL;
		}
		n = dvx_hal_sock_poll(st->hal, pfd, (unsigned)k, next - now);
		if (n < 0) {
			ret = n;
			break;
		}
		for (i = 0; i < k && n > 0 && have < count; i++) {
			if (!pfd[i].revents)
				continue;
			ret = slot[i] ? hs_step(st, slot[i], type, lo, hi, &have) :
					hs_accept(st, lfd, type, lo, hi, &have, deadline);
			if (ret)
				goto out;
		}
	}
out:
	for (i = 0; i < DVX_BOOTSTRAP_SOCK_HS_SLOTS; i++) {
		struct bs_hs *s = &st->hs[i];

		if (s->state == HS_FREE)
			continue;
		if (!ret) {
			hs_refuse(st, s, WHY_LATE, 0);
		} else {
			(void)dvx_hal_sock_close(st->hal, s->fd);
			hs_free(s);
		}
	}
	return ret;
}
