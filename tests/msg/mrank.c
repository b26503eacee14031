// SPDX-License-Identifier: MIT
/*
 * tests/msg/mrank.c - see mrank.h.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "mrank.h"
#include "mworld.h"

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* the size of the message @from sends @to on comm @k, buffer @b, round @round */
static size_t msg_len(int from, int to, int k, int b, uint32_t round)
{
	uint64_t x = mix(((uint64_t)from << 40) ^ ((uint64_t)to << 32) ^ ((uint64_t)k << 16) ^
			 ((uint64_t)b << 12) ^ round);

	switch (x & 3u) {
	case 0:
		return x >> 60;		/* 0 .. 15 */
	case 1:
		return (x >> 40) % 4096;
	default:
		return (x >> 40) % MR_SLOT;
	}
}

static uint8_t msg_byte(int from, int to, int k, int b, uint32_t round, uint64_t i)
{
	return (uint8_t)(from * 37 + to * 11 + k * 5 + b * 3 + round * 7 + i * 13 + (i >> 8));
}

/* where this rank receives from @from on comm @k, buffer @b */
static uint64_t rx_off(const struct mrank *r, int from, int k, int b)
{
	return (((uint64_t)from * (uint64_t)r->K + (uint64_t)k) * MR_NB + (uint64_t)b) * MR_SLOT;
}

/* where this rank keeps what it sends @to on comm @k, buffer @b */
static uint64_t tx_off(const struct mrank *r, int to, int k, int b)
{
	return ((uint64_t)r->n * r->K * MR_NB + ((uint64_t)to * r->K + (uint64_t)k) * MR_NB +
		(uint64_t)b) *
	       MR_SLOT;
}

uint64_t mr_buf_bytes(int n, int K)
{
	return (uint64_t)2 * (uint64_t)n * (uint64_t)K * MR_NB * MR_SLOT;
}

int mr_listen(struct mrank *r)
{
	int q, k, err;

	for (q = 0; q < r->n; q++)
		for (k = 0; q != r->me && k < r->K; k++) {
			err = dvx_msg_listen(r->m, 0, &r->hout[q][k], &r->lc[q][k]);
			if (err) {
				MR_FAIL(r, "listen = %d", err);
				return err;
			}
		}
	return 0;
}

int mr_connect(struct mrank *r)
{
	int me = r->me, n = r->n, K = r->K, q, k, i, left, err;
	uint64_t end = mw_now() + r->timeout_ns;
	const char *why = NULL;

	/* connect and accept, interleaved, peers visited in a rank-dependent order */
	do {
		left = 0;
		for (i = 0; i < n; i++) {
			/* even ranks walk the peers up, odd ones down */
			q = (me & 1) ? (me + n - 1 - i) % n : (me + 1 + i) % n;
			if (q == me)
				continue;
			for (k = 0; k < K; k++) {
				if (!r->sc[q][k]) {
					err = dvx_msg_connect(r->m, 0, 0, &r->hin[q][k], &r->sc[q][k]);
					if (err) {
						MR_FAIL(r, "connect to %d/%d = %d", q, k, err);
						return err;
					}
					left += !r->sc[q][k];
				}
				if (!r->rc[q][k]) {
					err = dvx_msg_accept(r->lc[q][k], &r->rc[q][k]);
					if (err) {
						MR_FAIL(r, "accept = %d", err);
						return err;
					}
					left += !r->rc[q][k];
				}
			}
		}
		if (mw_now() > end) {
			MR_FAIL(r, "connections: %d left", left);
			return -ETIMEDOUT;
		}
	} while (left);
	for (q = 0; q < n; q++)
		for (k = 0; q != me && k < K; k++) {
			dvx_msg_close(r->lc[q][k]);
			r->lc[q][k] = NULL;
		}
	if (dvx_msg_check(r->m, &why)) {
		MR_FAIL(r, "after connecting: %s", why);
		return -EUCLEAN;
	}
	return 0;
}

/* a round's phase fill: every message this rank sends in @round, in its send area */
static void mr_fill(struct mrank *r, uint32_t round)
{
	int me = r->me, q, k, b;

	for (q = 0; q < r->n; q++)
		for (k = 0; q != me && !r->dead[q] && k < r->K; k++)
			for (b = 0; b < MR_NB; b++) {
				uint8_t *src = r->buf + tx_off(r, q, k, b);
				size_t len = msg_len(me, q, k, b, round), j;

				for (j = 0; j < len; j++)
					src[j] = msg_byte(me, q, k, b, round, j);
			}
}

/* the grouped receive from @q on comm @k came: every byte, into the digest (a sum: the
 * order of completions must not matter) */
static int mr_check_recv(struct mrank *r, int q, int k, uint32_t round, const size_t *got)
{
	int me = r->me, b;

	for (b = 0; b < MR_NB; b++) {
		const uint8_t *d = r->buf + rx_off(r, q, k, b);
		size_t len = msg_len(q, me, k, b, round), j;

		if (got[b] != len) {
			MR_FAIL(r, "from %d/%d/%d: %zu bytes, want %zu", q, k, b, got[b], len);
			return -1;
		}
		for (j = 0; j < len; j++)
			if (d[j] != msg_byte(q, me, k, b, round, j)) {
				MR_FAIL(r, "from %d/%d/%d: byte %zu", q, k, b, j);
				return -1;
			}
		r->digest += mix(got[b] + ((uint64_t)q << 48) + ((uint64_t)k << 40) +
				 ((uint64_t)b << 36) + round +
				 (len ? ((uint64_t)d[len - 1] << 20 | (uint64_t)d[len / 2] << 28) : 0));
	}
	return 0;
}

/* one step of the receive from @q on comm @k: post it, or test it. -1 failed, 1 it
 * completed now (checked), else 0 */
static int mr_recv_step(struct mrank *r, int q, int k, uint32_t round)
{
	size_t got[MR_NB];
	int done = 0, b, err;

	if (!r->rposted[q][k]) {
		void *bufs[MR_NB];
		size_t sz[MR_NB];
		uint32_t tags[MR_NB];
		struct dvx_mr *mrs[MR_NB];

		for (b = 0; b < MR_NB; b++) {
			bufs[b] = r->buf + rx_off(r, q, k, b);
			sz[b] = MR_SLOT;
			tags[b] = (uint32_t)(k * 16 + b);
			mrs[b] = r->mr;
		}
		err = dvx_msg_irecv(r->rc[q][k], MR_NB, bufs, sz, tags, mrs, &r->rq[q][k]);
		if (err) {
			MR_FAIL(r, "irecv from %d/%d = %d", q, k, err);
			return -1;
		}
		r->rposted[q][k] = r->rq[q][k] != NULL;
		return 0;
	}
	if (r->rdone[q][k])
		return 0;
	err = dvx_msg_test(r->rq[q][k], &done, got);
	if (err) {
		MR_FAIL(r, "receive from %d/%d round %u = %d", q, k, round, err);
		return -1;
	}
	if (!done)
		return 0;
	r->rdone[q][k] = 1;
	return mr_check_recv(r, q, k, round, got) ? -1 : 1;
}

/* one step of the send of buffer @b to @q on comm @k: as mr_recv_step() */
static int mr_send_step(struct mrank *r, int q, int k, int b, uint32_t round)
{
	int done = 0, err;

	if (!r->sposted[q][k][b]) {
		err = dvx_msg_isend(r->sc[q][k], r->buf + tx_off(r, q, k, b),
				    msg_len(r->me, q, k, b, round), (uint32_t)(k * 16 + b), r->mr,
				    &r->sq[q][k][b]);
		if (err) {
			MR_FAIL(r, "isend to %d/%d = %d", q, k, err);
			return -1;
		}
		r->sposted[q][k][b] = r->sq[q][k][b] != NULL;
		return 0;
	}
	if (r->sdone[q][k][b])
		return 0;
	err = dvx_msg_test(r->sq[q][k][b], &done, NULL);
	if (err) {
		MR_FAIL(r, "send to %d/%d = %d", q, k, err);
		return -1;
	}
	r->sdone[q][k][b] = done;
	return done;
}

/* a round's phase traffic: until every receive and send of @round completed */
static int mr_traffic(struct mrank *r, uint32_t round, int todo)
{
	int me = r->me, n = r->n, K = r->K, q, k, b, rc, pass = 0;
	uint64_t end = mw_now() + r->timeout_ns;

	while (todo) {
		/* receives posted and tested from the last comm to the first, sends from
		 * the first: completions of shared CQs reach every comm whichever is tested */
		for (q = n; q-- > 0;)
			for (k = K; q != me && !r->dead[q] && k-- > 0;) {
				rc = mr_recv_step(r, q, k, round);
				if (rc < 0)
					return -1;
				todo -= rc;
			}
		for (q = 0; q < n; q++)
			for (k = 0; q != me && !r->dead[q] && k < K; k++)
				for (b = MR_NB; b-- > 0;) {	/* buffers in reverse order */
					rc = mr_send_step(r, q, k, b, round);
					if (rc < 0)
						return -1;
					todo -= rc;
				}
		if (!(++pass & 255) && mw_now() > end) {
			MR_FAIL(r, "round %u: %d operations left", round, todo);
			return -1;
		}
	}
	return 0;
}

/*
 * Rounds of traffic on every comm, driven without ever blocking on one call: shared
 * QPs have room for only some comms' receives at a time (the depth multiplier decides
 * how many), so posts that find none are tried again while everything else progresses,
 * as a collective library's proxy does. Each round's phases: fill, traffic, check (the
 * layer's invariants), barrier (the peers reuse their send areas next round).
 */
int mr_rounds(struct mrank *r, uint32_t rounds)
{
	int q, live = 0;
	uint32_t round;
	const char *why = NULL;

	for (q = 0; q < r->n; q++)
		live += q != r->me && !r->dead[q];
	for (round = 0; round < rounds; round++) {
		memset(r->rposted, 0, sizeof(r->rposted));
		memset(r->rdone, 0, sizeof(r->rdone));
		memset(r->sposted, 0, sizeof(r->sposted));
		memset(r->sdone, 0, sizeof(r->sdone));
		mr_fill(r, round);
		if (mr_traffic(r, round, live * r->K * (1 + MR_NB)))
			return -1;
		if (dvx_msg_check(r->m, &why)) {
			MR_FAIL(r, "round %u: %s", round, why);
			return -1;
		}
		if (r->barrier && r->barrier(r->barrier_arg))
			return -1;
	}
	return 0;
}

int mr_close_all(struct mrank *r, uint64_t seed)
{
	int me = r->me, n = r->n, K = r->K, total = 0, c, q, k, b, err;
	uint64_t x = mix(seed ^ (uint64_t)me);
	const char *why = NULL;

	for (q = 0; q < n; q++)
		for (k = 0; k < K; k++)
			total += (r->sc[q][k] != NULL) + (r->rc[q][k] != NULL);
	for (c = 0; c < total; c++) {
		int pick = (int)(mix(x + (uint64_t)c) % (uint64_t)(total - c)), seen = 0;

		for (q = 0; q < n && pick >= 0; q++)
			for (k = 0; k < K && pick >= 0; k++)
				for (b = 0; b < 2 && pick >= 0; b++) {
					struct dvx_msg_comm **cc = b ? &r->rc[q][k] : &r->sc[q][k];

					if (!*cc)
						continue;
					if (seen++ == pick) {
						err = dvx_msg_close(*cc);
						*cc = NULL;
						pick = -1;
						if (err) {
							MR_FAIL(r, "close = %d", err);
							return err;
						}
					}
				}
		if (dvx_msg_check(r->m, &why)) {
			MR_FAIL(r, "closing: %s", why);
			return -EUCLEAN;
		}
	}
	for (q = 0; q < n; q++)
		for (k = 0; k < K; k++)
			if (r->lc[q][k]) {
				dvx_msg_close(r->lc[q][k]);
				r->lc[q][k] = NULL;
			}
	return 0;
}
