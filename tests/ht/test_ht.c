// SPDX-License-Identifier: MIT
/*
 * tests/ht/test_ht.c - the host transport on the software NIC, every rank driven from
 * one thread: round trips and bidirectional round trips in both modes over 1, 2 and 4
 * channels from 8 B to 64 MiB (every byte checked), the copy-based mode with a staging
 * area far smaller than the message, control messages interleaved with chunks, the
 * zero-copy mode's receive accounting (receives issued after the chunks landed, a
 * receive too small), the handshake (any creation order among four ranks, mode and
 * geometry mismatches), and bad input (an error, nothing changed); the invariant
 * checker after each phase. Last, the two ranks as threads, each driving its own ends
 * of a bidirectional transfer, in both modes over 1, 2 and 4 channels.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>

#include "../lib/dvx_test.h"
#include "hworld.h"

#define MIB (1ull << 20)
#define T_OUT (30 * HW_SEC)

static struct hw W;

static void cfg_of(struct dvx_ht_ib_cfg *c, uint32_t mode, uint32_t nch)
{
	memset(c, 0, sizeof(*c));
	c->mode = mode;
	c->nchannels = nch;
}

static void check_all(struct hw *w)
{
	int i, j;

	for (i = 0; i < w->n; i++)
		for (j = 0; j < w->n; j++) {
			const char *why = NULL;

			if (w->r[i].ib[j].live != DVX_LIVE)
				continue;
			if (dvx_ht_ib_check(&w->r[i].ib[j], &why))
				fail_msg("rank %d's transport to %d: %s", i, j, why);
		}
}

static void pair_up(int n, uint32_t mode, uint32_t nch, uint64_t buf)
{
	struct dvx_ht_ib_cfg c;

	assert_int_equal(hw_init(&W, n, buf), 0);
	cfg_of(&c, mode, nch);
	assert_int_equal(hw_pair(&W, 0, 1, &c), 0);
	assert_int_equal(hw_connect(&W, 0, 1, T_OUT), 0);
}

/* 8 B, 64 B, ... 16 MiB, then 64 MiB: one way each way, then both ways at once */
static void sweep(uint32_t mode, uint32_t nch)
{
	uint64_t chunk = mode == DVX_HT_ZC ? MIB : 65536, size;
	struct dvx_ht_ib_stats s0, s1;

	pair_up(2, mode, nch, 64 * MIB);
	for (size = 8;; size = size * 8 > 64 * MIB ? 64 * MIB : size * 8) {
		assert_int_equal(hw_xfer(&W, 0, 1, size, chunk, nch, (uint32_t)size), 0);
		assert_int_equal(hw_xfer(&W, 1, 0, size, chunk, nch, (uint32_t)size + 7), 0);
		assert_int_equal(hw_xfer2(&W, 0, 1, size, chunk, nch, (uint32_t)size + 99), 0);
		check_all(&W);
		if (size == 64 * MIB)
			break;
	}
	dvx_ht_ib_get_stats(&W.r[0].ib[1], &s0);
	dvx_ht_ib_get_stats(&W.r[1].ib[0], &s1);
	assert_int_equal(s0.chunks_sent, s1.chunks_recv);
	assert_int_equal(s0.bytes_sent, s1.bytes_recv);
	assert_int_equal(s0.errors + s1.errors, 0);
	if (mode == DVX_HT_CB)
		assert_int_equal(s1.credits_sent, s1.chunks_recv);
	assert_int_equal(hw_fini(&W), 0);
}

/* the sweeps' cases: the mode and the channels */
struct sweep_case {
	uint32_t mode, nch;
};

static const struct sweep_case cases[] = {
	{ DVX_HT_ZC, 1 }, { DVX_HT_ZC, 2 }, { DVX_HT_ZC, 4 },
	{ DVX_HT_CB, 1 }, { DVX_HT_CB, 2 }, { DVX_HT_CB, 4 },
};

static void test_sweep(void **state)
{
	const struct sweep_case *k = *state;

	sweep(k->mode, k->nch);
}

/* a staging area of 2 slots of 4 KiB per channel carries 8 MiB: 2048 rounds */
static void test_cb_small_staging(void **state)
{
	struct dvx_ht_ib_cfg c;
	uint32_t nch;

	(void)state;
	for (nch = 1; nch <= 4; nch *= 2) {
		struct dvx_ht_ib_stats s;

		assert_int_equal(hw_init(&W, 2, 8 * MIB), 0);
		cfg_of(&c, DVX_HT_CB, nch);
		c.cb_depth = 2;
		c.cb_slot_bytes = 4096;
		c.sq_depth = 16;
		c.rq_depth = 16;
		assert_int_equal(hw_pair(&W, 0, 1, &c), 0);
		assert_int_equal(hw_connect(&W, 0, 1, T_OUT), 0);
		assert_int_equal(hw_xfer(&W, 0, 1, 8 * MIB, 4096, nch, 3), 0);
		assert_int_equal(hw_xfer2(&W, 0, 1, 8 * MIB - 5, 4096, nch, 4), 0);
		check_all(&W);
		dvx_ht_ib_get_stats(&W.r[0].ib[1], &s);
		assert_true(s.chunks_sent >= 2 * 2048);
		assert_true(s.credit_waits > 0);	/* the window outran the slots */
		assert_int_equal(hw_fini(&W), 0);
	}
}

/* a chunk on each channel, then a control message, alternating, each waited for by
 * the receiver in the same order; sizes of control messages 0 ... max_ctrl */
static void interleave(uint32_t mode)
{
	struct dvx_ht *tx, *rx;
	struct dvx_ht_desc d;
	struct dvx_ht_rbuf rb;
	struct dvx_ht_req q[2];
	uint8_t msg[256], got[256];
	uint32_t i, nch = 2;

	pair_up(2, mode, nch, MIB);
	tx = hw_t(&W, 0, 1);
	rx = hw_t(&W, 1, 0);
	memset(q, 0, sizeof(q));
	if (mode == DVX_HT_ZC) {
		assert_int_equal(dvx_ht_export(rx, W.r[1].rbuf, MIB, &W.r[1].rmr, &d), 0);
		assert_int_equal(dvx_ht_import(tx, &d, &rb), 0);
	}
	hw_fill(W.r[0].sbuf, MIB, 11);
	for (i = 0; i < 64; i++) {
		struct dvx_ht_chunk k;
		uint32_t len = (i * 37) % (tx->max_ctrl + 1);

		memset(&k, 0, sizeof(k));
		k.buf = W.r[0].sbuf + i * 4096;
		k.len = 4096;
		k.offset = i * 4096;
		k.channel = i % nch;
		if (mode == DVX_HT_ZC) {
			k.mr = &W.r[0].smr;
			k.remote = &rb;
		}
		assert_int_equal(dvx_ht_send_chunk(tx, &k, &q[0]), 0);
		k.buf = W.r[1].rbuf + i * 4096;
		assert_int_equal(dvx_ht_recv_chunk(rx, &k, &q[1]), 0);
		assert_int_equal(hw_wait(&W, &q[0], T_OUT), 0);
		assert_int_equal(hw_wait(&W, &q[1], T_OUT), 0);
		assert_int_equal(q[1].bytes, 4096);
		memset(msg, (int)i, sizeof(msg));
		assert_int_equal(dvx_ht_send_ctrl(tx, msg, len, &q[0]), 0);
		memset(msg, 0, sizeof(msg));	/* copied: the buffer is free at once */
		/* every other message waits for its receive */
		if (i & 1)
			assert_int_equal(hw_wait(&W, &q[0], T_OUT), 0);
		memset(got, 0xee, sizeof(got));
		assert_int_equal(dvx_ht_recv_ctrl(rx, got, sizeof(got), &q[1]), 0);
		assert_int_equal(hw_wait(&W, &q[1], T_OUT), 0);
		assert_int_equal(hw_wait(&W, &q[0], T_OUT), 0);
		assert_int_equal(q[1].bytes, len);
		memset(msg, (int)i, len);
		assert_bytes_equal(got, msg, len);
		check_all(&W);
	}
	assert_int_equal(hw_verify(W.r[1].rbuf, 64 * 4096, 11, NULL), 0);
	assert_int_equal(hw_fini(&W), 0);
}

static void test_ctrl_interleaved_zc(void **state)
{
	(void)state;
	interleave(DVX_HT_ZC);
}

static void test_ctrl_interleaved_cb(void **state)
{
	(void)state;
	interleave(DVX_HT_CB);
}

/* control messages sent before their receives; more than the slots in flight; one
 * larger than its receive */
static void test_ctrl_queueing(void **state)
{
	struct dvx_ht *tx, *rx;
	struct dvx_ht_req s[9], r[9];
	uint32_t i, v;
	uint8_t big[64], small[8];

	(void)state;
	memset(s, 0, sizeof(s));
	memset(r, 0, sizeof(r));
	pair_up(2, DVX_HT_ZC, 1, MIB);
	tx = hw_t(&W, 0, 1);
	rx = hw_t(&W, 1, 0);
	for (i = 0; i < 8; i++)
		assert_int_equal(dvx_ht_send_ctrl(tx, &i, sizeof(i), &s[i]), 0);
	/* eight in flight: the ninth waits for a slot */
	assert_int_equal(dvx_ht_send_ctrl(tx, &i, sizeof(i), &s[8]), -EAGAIN);
	assert_int_equal(s[8].state, DVX_HT_RS_IDLE);
	for (i = 0; i < 8; i++)
		assert_int_equal(hw_wait(&W, &s[i], T_OUT), 0);
	check_all(&W);
	for (i = 0; i < 8; i++) {
		assert_int_equal(dvx_ht_recv_ctrl(rx, &v, sizeof(v), &r[i]), 0);
		assert_int_equal(hw_wait(&W, &r[i], T_OUT), 0);
		assert_int_equal(v, i);
	}
	/* a message larger than its receive: that receive fails, the next one is fine */
	memset(big, 7, sizeof(big));
	assert_int_equal(dvx_ht_send_ctrl(tx, big, sizeof(big), &s[0]), 0);
	assert_int_equal(dvx_ht_send_ctrl(tx, big, 4, &s[1]), 0);
	assert_int_equal(dvx_ht_recv_ctrl(rx, small, sizeof(small), &r[0]), 0);
	assert_int_equal(hw_wait(&W, &r[0], T_OUT), -EMSGSIZE);
	assert_int_equal(r[0].bytes, sizeof(big));
	assert_int_equal(dvx_ht_recv_ctrl(rx, small, sizeof(small), &r[1]), 0);
	assert_int_equal(hw_wait(&W, &r[1], T_OUT), 0);
	assert_int_equal(r[1].bytes, 4);
	check_all(&W);
	assert_int_equal(hw_fini(&W), 0);
}

/* zero-copy: chunks land before their receives are issued; a receive too small; the
 * chunk arguments checked against the registration and the remote buffer */
static void test_zc_receives(void **state)
{
	struct dvx_ht *tx, *rx;
	struct dvx_ht_desc d, bad;
	struct dvx_ht_rbuf rb;
	struct dvx_ht_req s[4], r[4];
	struct dvx_ht_chunk k;
	int i;

	(void)state;
	pair_up(2, DVX_HT_ZC, 1, MIB);
	tx = hw_t(&W, 0, 1);
	rx = hw_t(&W, 1, 0);
	memset(s, 0, sizeof(s));
	memset(r, 0, sizeof(r));
	assert_int_equal(dvx_ht_export(rx, W.r[1].rbuf, MIB, &W.r[1].rmr, &d), 0);
	assert_int_equal(dvx_ht_export(rx, W.r[1].rbuf, MIB, &W.r[1].smr, &bad), -EINVAL);
	assert_int_equal(dvx_ht_export(rx, W.r[1].rbuf, 2 * MIB, &W.r[1].rmr, &bad), -EINVAL);
	bad = d;
	bad.magic ^= 1;
	assert_int_equal(dvx_ht_import(tx, &bad, &rb), -EBADMSG);
	bad = d;
	bad.len = 0;
	assert_int_equal(dvx_ht_import(tx, &bad, &rb), -EBADMSG);
	assert_int_equal(dvx_ht_import(tx, &d, &rb), 0);
	assert_int_equal(rb.len, MIB);
	hw_fill(W.r[0].sbuf, MIB, 5);
	memset(&k, 0, sizeof(k));
	k.mr = &W.r[0].smr;
	k.remote = &rb;
	k.len = 1000;
	/* outside the remote buffer, outside the registration, without either */
	k.buf = W.r[0].sbuf;
	k.offset = MIB - 999;
	assert_int_equal(dvx_ht_send_chunk(tx, &k, &s[0]), -EINVAL);
	k.offset = 0;
	k.buf = W.r[1].rbuf;
	assert_int_equal(dvx_ht_send_chunk(tx, &k, &s[0]), -EINVAL);
	k.buf = W.r[0].sbuf;
	k.remote = NULL;
	assert_int_equal(dvx_ht_send_chunk(tx, &k, &s[0]), -EINVAL);
	k.remote = &rb;
	k.mr = NULL;
	assert_int_equal(dvx_ht_send_chunk(tx, &k, &s[0]), -EINVAL);
	k.mr = &W.r[0].smr;
	assert_int_equal(s[0].state, DVX_HT_RS_IDLE);
	/* four chunks, no receive yet */
	for (i = 0; i < 4; i++) {
		k.buf = W.r[0].sbuf + i * 4096;
		k.offset = i * 4096;
		k.len = 4096 - (uint64_t)i;
		assert_int_equal(dvx_ht_send_chunk(tx, &k, &s[i]), 0);
	}
	for (i = 0; i < 4; i++)
		assert_int_equal(hw_wait(&W, &s[i], T_OUT), 0);
	for (i = 0; i < 16; i++)
		hw_progress(&W);
	check_all(&W);
	/* the receives take them in order, each with its length */
	for (i = 0; i < 4; i++) {
		memset(&k, 0, sizeof(k));
		k.len = i == 3 ? 100 : 4096;
		assert_int_equal(dvx_ht_recv_chunk(rx, &k, &r[i]), 0);
		assert_int_equal(r[i].state, DVX_HT_RS_DONE);	/* there already */
		assert_int_equal(r[i].err, i == 3 ? -EMSGSIZE : 0);
		assert_int_equal(r[i].bytes, 4096 - (uint64_t)i);
	}
	for (i = 0; i < 3; i++)
		assert_memory_equal(W.r[1].rbuf + i * 4096, W.r[0].sbuf + i * 4096, 4096 - i);
	check_all(&W);
	assert_int_equal(hw_fini(&W), 0);
}

/* four ranks make their transports in crossed orders, nobody waits before all are made
 * on its side; every pair connects and carries a transfer */
static void test_handshake_orders(void **state)
{
	static const int order[4][3] = { { 1, 2, 3 }, { 3, 2, 0 }, { 0, 3, 1 }, { 2, 1, 0 } };
	struct dvx_ht_ib_cfg c;
	int i, k, a, b;

	(void)state;
	assert_int_equal(hw_init(&W, 4, MIB), 0);
	cfg_of(&c, DVX_HT_CB, 2);
	c.cb_depth = 4;
	c.cb_slot_bytes = 8192;
	for (i = 0; i < 4; i++)
		for (k = 0; k < 3; k++) {
			assert_int_equal(hw_end(&W, i, order[i][k], &c), 0);
			assert_false(dvx_ht_connected(hw_t(&W, i, order[i][k])));
		}
	for (a = 0; a < 4; a++)
		for (b = a + 1; b < 4; b++)
			assert_int_equal(hw_connect(&W, a, b, T_OUT), 0);
	check_all(&W);
	for (a = 0; a < 4; a++)
		for (b = 0; b < 4; b++)
			if (a != b)
				assert_int_equal(hw_xfer(&W, a, b, 100000, 8192, 2,
							 (uint32_t)(a * 4 + b)),
						 0);
	assert_int_equal(hw_fini(&W), 0);
}

/* both ends must agree on the mode and the geometry: else both fail with -EPROTO */
static void mismatch(struct dvx_ht_ib_cfg *c0, struct dvx_ht_ib_cfg *c1)
{
	struct dvx_ht *t0, *t1;
	uint64_t end;
	int e0 = 0, e1 = 0;

	assert_int_equal(hw_init(&W, 2, MIB), 0);
	assert_int_equal(hw_end(&W, 0, 1, c0), 0);
	assert_int_equal(hw_end(&W, 1, 0, c1), 0);
	t0 = hw_t(&W, 0, 1);
	t1 = hw_t(&W, 1, 0);
	end = hw_now() + T_OUT;
	while ((!e0 || !e1) && hw_now() < end) {
		e0 = dvx_ht_progress(t0);
		e1 = dvx_ht_progress(t1);
	}
	assert_int_equal(e0, -EPROTO);
	assert_int_equal(e1, -EPROTO);
	assert_int_equal(dvx_ht_status(t0, -1), -EPROTO);
	assert_false(dvx_ht_connected(t0));
	check_all(&W);
	assert_int_equal(hw_fini(&W), 0);
}

static void test_handshake_mismatch(void **state)
{
	struct dvx_ht_ib_cfg a, b;

	(void)state;
	cfg_of(&a, DVX_HT_ZC, 2);
	cfg_of(&b, DVX_HT_CB, 2);
	mismatch(&a, &b);
	cfg_of(&b, DVX_HT_ZC, 1);
	mismatch(&a, &b);
	cfg_of(&a, DVX_HT_CB, 1);
	cfg_of(&b, DVX_HT_CB, 1);
	b.cb_depth = 4;
	mismatch(&a, &b);
	cfg_of(&b, DVX_HT_CB, 1);
	b.max_ctrl = 512;
	mismatch(&a, &b);
}

/* an -EINVAL names its cause in the NIC's diagnostic */
static void diag_says(const struct dvx_nic *nic, const char *op, const char *what)
{
	assert_int_equal(nic->hal.diag.err, -EINVAL);
	assert_int_equal(nic->hal.diag.src, DVX_DIAG_ARG);
	assert_string_equal(nic->hal.diag.op, op);
	if (!strstr(nic->hal.diag.msg, what))
		fail_msg("diag \"%s\" does not name \"%s\"", nic->hal.diag.msg, what);
}

/* bad input: an error, the request and the transport unchanged */
static void test_bad_input(void **state)
{
	struct dvx_ht_ib_cfg c;
	struct dvx_ht *t;
	struct dvx_ht_req q, keep;
	struct dvx_ht_chunk k;
	struct dvx_mem_req s, g, d;
	uint8_t buf[8192];

	(void)state;
	assert_int_equal(hw_init(&W, 2, MIB), 0);
	cfg_of(&c, DVX_HT_CB, 2);
	c.nic = &W.r[0].nic;
	c.bs = &W.r[0].bs;
	c.peer = 1;
	assert_int_equal(dvx_ht_ib_mem_req(&c, &s, &g, &d), 0);
	/* configurations */
	c.conn.rnr_retry = 7;
	c.conn.retry_count = 7;
	assert_int_equal(dvx_ht_ib_mem_req(&c, &s, &g, &d), -EINVAL);
	diag_says(&W.r[0].nic, "dvx_ht_ib_mem_req", "rnr_retry");
	memset(&c.conn, 0, sizeof(c.conn));
	c.cb_depth = 16;	/* slots and control messages beyond the rings */
	c.sq_depth = 32;
	assert_int_equal(dvx_ht_ib_mem_req(&c, &s, &g, &d), -EINVAL);
	diag_says(&W.r[0].nic, "dvx_ht_ib_mem_req", "above sq_depth 32");
	c.sq_depth = 64;
	c.rq_depth = 16;
	assert_int_equal(dvx_ht_ib_mem_req(&c, &s, &g, &d), -EINVAL);
	diag_says(&W.r[0].nic, "dvx_ht_ib_mem_req", "above rq_depth 16");
	c.cb_depth = c.sq_depth = c.rq_depth = 0;
	c.nchannels = DVX_HT_MAX_CHANNELS + 1;
	assert_int_equal(dvx_ht_ib_mem_req(&c, &s, &g, &d), -EINVAL);
	diag_says(&W.r[0].nic, "dvx_ht_ib_mem_req", "nchannels");
	c.nchannels = 2;
	c.sq_depth = 100;
	assert_int_equal(dvx_ht_ib_mem_req(&c, &s, &g, &d), -EINVAL);
	diag_says(&W.r[0].nic, "dvx_ht_ib_mem_req", "sq_depth 100");
	c.sq_depth = 0;
	c.cb_slot_bytes = 1000;
	assert_int_equal(dvx_ht_ib_mem_req(&c, &s, &g, &d), -EINVAL);
	diag_says(&W.r[0].nic, "dvx_ht_ib_mem_req", "cb_slot_bytes 1000");
	c.cb_slot_bytes = 0;
	c.mode = 0;
	assert_int_equal(dvx_ht_ib_mem_req(&c, &s, &g, &d), -EINVAL);
	diag_says(&W.r[0].nic, "dvx_ht_ib_mem_req", "mode 0");
	c.mode = DVX_HT_CB;
	c.peer = 0;	/* itself */
	assert_int_equal(dvx_ht_ib_init(&W.r[0].ib[1], &c, buf, 0, NULL, 0, NULL, 0), -EINVAL);
	diag_says(&W.r[0].nic, "dvx_ht_ib_init", "peer 0");
	c.peer = 1;
	/* regions too small */
	assert_int_equal(posix_memalign(&W.r[0].ts[1], 64, s.bytes), 0);
	assert_int_equal(posix_memalign(&W.r[0].tr[1], 4096, g.bytes), 0);
	assert_int_equal(posix_memalign(&W.r[0].td[1], 4096, d.bytes), 0);
	assert_int_equal(dvx_ht_ib_init(&W.r[0].ib[1], &c, W.r[0].ts[1], s.bytes, W.r[0].tr[1],
					g.bytes, W.r[0].td[1], d.bytes - 1),
			 -EINVAL);
	diag_says(&W.r[0].nic, "dvx_ht_ib_init", "data region");
	assert_int_equal(W.r[0].ib[1].live, 0);
	hw_unpair(&W, 0, 1);
	cfg_of(&c, DVX_HT_CB, 2);
	assert_int_equal(hw_pair(&W, 0, 1, &c), 0);
	t = hw_t(&W, 0, 1);
	/* a live object cannot be made over */
	c.nic = &W.r[0].nic;
	c.bs = &W.r[0].bs;
	c.peer = 1;
	assert_int_equal(dvx_ht_ib_init(&W.r[0].ib[1], &c, W.r[0].ts[1], s.bytes, W.r[0].tr[1],
					g.bytes, W.r[0].td[1], d.bytes),
			 -EBUSY);
	memset(&q, 0, sizeof(q));
	memset(&k, 0, sizeof(k));
	k.buf = buf;
	k.len = 100;
	/* not connected yet */
	assert_int_equal(dvx_ht_send_chunk(t, &k, &q), -ENOTCONN);
	assert_int_equal(dvx_ht_recv_ctrl(t, buf, 8, &q), -ENOTCONN);
	assert_false(dvx_ht_ready(t, 0, DVX_HT_SEND));
	assert_int_equal(hw_connect(&W, 0, 1, T_OUT), 0);
	assert_true(dvx_ht_ready(t, 0, DVX_HT_SEND));
	assert_true(dvx_ht_ready(t, 1, DVX_HT_RECV));
	assert_false(dvx_ht_ready(t, 2, DVX_HT_RECV));
	assert_int_equal(t->max_chunk, 65536);
	assert_int_equal(t->depth, 8);
	assert_int_equal(t->mode, DVX_HT_CB);
	assert_int_equal(t->peer, 1);
	/* chunks */
	k.channel = 2;
	assert_int_equal(dvx_ht_send_chunk(t, &k, &q), -EINVAL);
	assert_int_equal(dvx_ht_recv_chunk(t, &k, &q), -EINVAL);
	k.channel = 0;
	k.len = 0;
	assert_int_equal(dvx_ht_send_chunk(t, &k, &q), -EINVAL);
	k.len = 65537;
	assert_int_equal(dvx_ht_send_chunk(t, &k, &q), -EMSGSIZE);
	k.len = 100;
	k.flags = 1;
	assert_int_equal(dvx_ht_send_chunk(t, &k, &q), -EINVAL);
	k.flags = 0;
	k.remote = (const struct dvx_ht_rbuf *)buf;	/* copy-based takes no remote */
	assert_int_equal(dvx_ht_send_chunk(t, &k, &q), -EINVAL);
	k.remote = NULL;
	assert_int_equal(dvx_ht_send_chunk(NULL, &k, &q), -EINVAL);
	assert_int_equal(dvx_ht_send_chunk(t, NULL, &q), -EINVAL);
	assert_int_equal(dvx_ht_send_chunk(t, &k, NULL), -EINVAL);
	assert_int_equal(dvx_ht_send_ctrl(t, buf, 257, &q), -EMSGSIZE);
	assert_int_equal(dvx_ht_send_ctrl(t, NULL, 1, &q), -EINVAL);
	assert_int_equal(dvx_ht_export(t, buf, 8, &W.r[0].rmr, (struct dvx_ht_desc *)buf),
			 -EOPNOTSUPP);
	assert_int_equal(q.state, DVX_HT_RS_IDLE);
	/* a busy request is not issued again, and stays as it is */
	assert_int_equal(dvx_ht_recv_chunk(t, &k, &q), 0);
	keep = q;
	assert_int_equal(dvx_ht_send_chunk(t, &k, &q), -EBUSY);
	assert_int_equal(dvx_ht_send_ctrl(t, buf, 999, &q), -EBUSY);
	assert_memory_equal(&q, &keep, sizeof(q));
	assert_int_equal(dvx_ht_test(NULL, NULL), -EINVAL);
	memset(&keep, 0, sizeof(keep));
	{
		int done = 5;

		assert_int_equal(dvx_ht_test(&keep, &done), -EINVAL);	/* never issued */
		assert_int_equal(done, 5);
	}
	assert_int_equal(dvx_ht_status(t, 0), 0);
	assert_int_equal(dvx_ht_status(t, -1), 0);
	assert_int_equal(dvx_ht_status(t, 2), -EINVAL);
	check_all(&W);
	/* fini abandons the receive in flight */
	assert_int_equal(hw_fini(&W), 0);
	assert_int_equal(dvx_ht_ib_fini(&W.r[0].ib[1]), -EINVAL);
}

/* ---- ranks as threads ------------------------------------------------------------- */

struct thr {
	int me;
	struct hw_side tx, rx;
	int err;
};

static void *thr_main(void *p)
{
	struct thr *a = p;
	uint64_t end = hw_now() + 120 * HW_SEC;

	while (a->tx.phase != 3 || a->rx.phase != 3) {
		int m = hw_side_step(&a->tx), k = hw_side_step(&a->rx);

		if (m < 0 || k < 0) {
			a->err = m < 0 ? m : k;
			return NULL;
		}
		if (hw_now() > end) {
			a->err = -ETIMEDOUT;
			return NULL;
		}
		if (!m && !k)
			sched_yield();	/* 2 cores: let the other rank run */
	}
	return NULL;
}

static void threads(uint32_t mode, uint32_t nch)
{
	static struct thr a[2];
	uint64_t size = 4 * MIB - 1, chunk = mode == DVX_HT_ZC ? 256 << 10 : 65536;
	pthread_t th[2];
	int i;

	pair_up(2, mode, nch, 4 * MIB);
	memset(a, 0, sizeof(a));
	for (i = 0; i < 2; i++) {
		hw_fill(W.r[i].sbuf, size, (uint32_t)(i + 40));
		a[i].me = i;
		hw_side_init(&a[i].tx, hw_t(&W, i, !i), 1, W.r[i].sbuf, &W.r[i].smr, size, chunk, nch,
			     0);
		hw_side_init(&a[i].rx, hw_t(&W, i, !i), 0, W.r[i].rbuf, &W.r[i].rmr, size, chunk, nch,
			     0);
	}
	for (i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, thr_main, &a[i]), 0);
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < 2; i++) {
		assert_int_equal(a[i].err, 0);
		assert_int_equal(hw_verify(W.r[i].rbuf, size, (uint32_t)(!i + 40), NULL), 0);
	}
	check_all(&W);
	assert_int_equal(hw_fini(&W), 0);
}

static void test_threads(void **state)
{
	uint32_t nch;

	(void)state;
	for (nch = 1; nch <= 4; nch *= 2) {
		threads(DVX_HT_ZC, nch);
		threads(DVX_HT_CB, nch);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_prestate(test_sweep, (void *)&cases[0]),
		cmocka_unit_test_prestate(test_sweep, (void *)&cases[1]),
		cmocka_unit_test_prestate(test_sweep, (void *)&cases[2]),
		cmocka_unit_test_prestate(test_sweep, (void *)&cases[3]),
		cmocka_unit_test_prestate(test_sweep, (void *)&cases[4]),
		cmocka_unit_test_prestate(test_sweep, (void *)&cases[5]),
		cmocka_unit_test(test_cb_small_staging),
		cmocka_unit_test(test_ctrl_interleaved_zc),
		cmocka_unit_test(test_ctrl_interleaved_cb),
		cmocka_unit_test(test_ctrl_queueing),
		cmocka_unit_test(test_zc_receives),
		cmocka_unit_test(test_handshake_orders),
		cmocka_unit_test(test_handshake_mismatch),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
