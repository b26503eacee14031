// SPDX-License-Identifier: MIT
/*
 * tests/ht/test_ht_fault.c - the host transport under the software NIC's faults, two
 * ranks from one thread: dropped packets (retried: transfers complete, every byte
 * checked), the link down (the request it hits fails with -EHOSTUNREACH, the ones
 * behind it are flushed, the receiver's waits time out and may wait again; a channel
 * that was not used meanwhile still works once the link is back), a bad remote key
 * (-EPERM on the send, the receiver's waiting receives on that channel fail, the other
 * channels go on), an RNR in zero-copy mode (a sender more than rq_depth chunks ahead
 * of the receives: -ENOBUFS after the finite retries, never a hang; the chunks that
 * landed are still received), a peer that went away, and timeouts (a timed-out wait
 * leaves the request in flight; the handshake waits for a late peer).
 */
#include <errno.h>

#include "../lib/dvx_test.h"
#include "hworld.h"

#define MIB (1ull << 20)
#define T_OUT (30 * HW_SEC)
#define SHORT (2 * 1000000ull)	/* 2 ms: a wait expected to time out */

static struct hw W;

static void up(uint32_t mode, uint32_t nch, uint32_t rq)
{
	struct dvx_ht_ib_cfg c;

	assert_int_equal(hw_init(&W, 2, 4 * MIB), 0);
	memset(&c, 0, sizeof(c));
	c.mode = mode;
	c.nchannels = nch;
	c.rq_depth = rq;
	assert_int_equal(hw_pair(&W, 0, 1, &c), 0);
	assert_int_equal(hw_connect(&W, 0, 1, T_OUT), 0);
}

static void check(void)
{
	const char *why = NULL;

	if (W.r[0].ib[1].live && dvx_ht_ib_check(&W.r[0].ib[1], &why))
		fail_msg("rank 0: %s", why);
	if (W.r[1].ib[0].live && dvx_ht_ib_check(&W.r[1].ib[0], &why))
		fail_msg("rank 1: %s", why);
}

static void faults(const struct dvx_sim_faults *f)
{
	dvx_sim_set_faults(W.fab, f);
}

static void drops(uint32_t mode)
{
	struct dvx_sim_faults f;

	up(mode, 2, 0);
	memset(&f, 0, sizeof(f));
	f.drop_every = 2;	/* every other packet: each retried once */
	faults(&f);
	assert_int_equal(hw_xfer(&W, 0, 1, 4 * MIB - 3, mode == DVX_HT_ZC ? 256 << 10 : 65536, 2,
				 1),
			 0);
	assert_int_equal(hw_xfer2(&W, 0, 1, MIB, 65536, 2, 2), 0);
	memset(&f, 0, sizeof(f));
	f.drop_count = 3;	/* three in a row: within the retry count */
	faults(&f);
	assert_int_equal(hw_xfer(&W, 1, 0, MIB, 65536, 2, 3), 0);
	faults(NULL);
	check();
	assert_int_equal(hw_fini(&W), 0);
}

static void test_drop_zc(void **state)
{
	(void)state;
	drops(DVX_HT_ZC);
}

static void test_drop_cb(void **state)
{
	(void)state;
	drops(DVX_HT_CB);
}

static struct dvx_ht_rbuf RB;

/* a chunk of 4 KiB from rank 0's send buffer at @off on @ch, and its receive */
static int chunk(int send, uint32_t ch, uint64_t off, struct dvx_ht_req *q)
{
	struct dvx_ht *t = send ? hw_t(&W, 0, 1) : hw_t(&W, 1, 0);
	struct dvx_ht_chunk k;

	memset(&k, 0, sizeof(k));
	k.buf = send ? W.r[0].sbuf + off : W.r[1].rbuf + off;
	k.len = 4096;
	k.offset = off;
	k.channel = ch;
	if (send && t->mode == DVX_HT_ZC) {
		k.mr = &W.r[0].smr;
		k.remote = &RB;
	}
	return send ? dvx_ht_send_chunk(t, &k, q) : dvx_ht_recv_chunk(t, &k, q);
}

static void zc_import(void)
{
	struct dvx_ht_desc d;

	assert_int_equal(dvx_ht_export(hw_t(&W, 1, 0), W.r[1].rbuf, 4 * MIB, &W.r[1].rmr, &d), 0);
	assert_int_equal(dvx_ht_import(hw_t(&W, 0, 1), &d, &RB), 0);
}

static void link_down(uint32_t mode)
{
	struct dvx_sim_faults f;
	struct dvx_ht_req s[3], r[3], s1, r1;
	struct dvx_ht *tx;
	int i;

	up(mode, 2, 0);
	tx = hw_t(&W, 0, 1);
	if (mode == DVX_HT_ZC)
		zc_import();
	hw_fill(W.r[0].sbuf, 4 * MIB, 9);
	memset(s, 0, sizeof(s));
	memset(r, 0, sizeof(r));
	memset(&f, 0, sizeof(f));
	f.link_down = 1;
	faults(&f);
	for (i = 0; i < 3; i++) {
		assert_int_equal(chunk(0, 0, (uint64_t)i * 4096, &r[i]), 0);
		assert_int_equal(chunk(1, 0, (uint64_t)i * 4096, &s[i]), 0);
	}
	/* the first write runs out of retries; what was posted behind it is flushed */
	assert_int_equal(hw_wait(&W, &s[0], T_OUT), -EHOSTUNREACH);
	for (i = 1; i < 3; i++) {
		int err = hw_wait(&W, &s[i], T_OUT);

		/* copy-based: the second chunk may still be in its prepare step when the
		 * channel fails; it never goes out and gets the channel's error */
		assert_true(err == -ECANCELED || err == -EHOSTUNREACH);
	}
	assert_int_equal(dvx_ht_status(tx, 0), -EHOSTUNREACH);
	assert_int_equal(dvx_ht_status(tx, 1), 0);
	assert_false(dvx_ht_ready(tx, 0, DVX_HT_SEND));
	assert_int_equal(chunk(1, 0, 0, &s[0]), -EHOSTUNREACH);
	/* the receiver heard nothing: its waits time out, and stay in flight */
	assert_int_equal(dvx_ht_wait(&r[0], SHORT), -ETIMEDOUT);
	assert_int_equal(r[0].state, DVX_HT_RS_BUSY);
	assert_int_equal(dvx_ht_wait(&r[0], SHORT), -ETIMEDOUT);
	check();
	/* the link back: channel 1 was not used while it was down, and works */
	faults(NULL);
	memset(&s1, 0, sizeof(s1));
	memset(&r1, 0, sizeof(r1));
	assert_int_equal(chunk(0, 1, 3 * 4096, &r1), 0);
	assert_int_equal(chunk(1, 1, 3 * 4096, &s1), 0);
	assert_int_equal(hw_wait(&W, &s1, T_OUT), 0);
	assert_int_equal(hw_wait(&W, &r1, T_OUT), 0);
	assert_memory_equal(W.r[1].rbuf + 3 * 4096, W.r[0].sbuf + 3 * 4096, 4096);
	check();
	assert_int_equal(hw_fini(&W), 0);
}

static void test_link_down_zc(void **state)
{
	(void)state;
	link_down(DVX_HT_ZC);
}

static void test_link_down_cb(void **state)
{
	(void)state;
	link_down(DVX_HT_CB);
}

/* a bad rkey: the write fails with -EPERM; the responder's QP fails too (a remote
 * access error), so the receiver's waiting receives on that channel fail; channel 1
 * is not touched */
static void test_bad_rkey(void **state)
{
	struct dvx_ht_req s[2], r[3];
	struct dvx_ht *tx, *rx;
	struct dvx_ht_ib_stats st;

	(void)state;
	up(DVX_HT_ZC, 2, 0);
	tx = hw_t(&W, 0, 1);
	rx = hw_t(&W, 1, 0);
	zc_import();
	RB.key ^= 0x5500;
	hw_fill(W.r[0].sbuf, 4 * MIB, 10);
	memset(s, 0, sizeof(s));
	memset(r, 0, sizeof(r));
	assert_int_equal(chunk(0, 0, 0, &r[0]), 0);
	assert_int_equal(chunk(0, 0, 4096, &r[1]), 0);
	assert_int_equal(chunk(1, 0, 0, &s[0]), 0);
	assert_int_equal(hw_wait(&W, &s[0], T_OUT), -EPERM);
	assert_int_equal(hw_wait(&W, &r[0], T_OUT), -ECANCELED);
	assert_int_equal(hw_wait(&W, &r[1], T_OUT), -ECANCELED);
	assert_int_equal(dvx_ht_status(rx, 0), -ECANCELED);
	assert_int_equal(dvx_ht_status(tx, 0), -EPERM);
	assert_int_equal(dvx_ht_ib_chan_syndrome(&W.r[0].ib[1], 0, NULL), 0x13);
	assert_int_equal(dvx_ht_ib_chan_syndrome(&W.r[0].ib[1], 1, NULL), 0);
	dvx_ht_ib_get_stats(&W.r[0].ib[1], &st);
	assert_true(st.errors >= 1);
	/* the channel stays failed: new receives get its error at once */
	assert_int_equal(chunk(0, 0, 0, &r[2]), -ECANCELED);
	RB.key ^= 0x5500;
	assert_int_equal(chunk(0, 1, 8192, &r[2]), 0);
	assert_int_equal(chunk(1, 1, 8192, &s[1]), 0);
	assert_int_equal(hw_wait(&W, &s[1], T_OUT), 0);
	assert_int_equal(hw_wait(&W, &r[2], T_OUT), 0);
	assert_memory_equal(W.r[1].rbuf + 8192, W.r[0].sbuf + 8192, 4096);
	check();
	assert_int_equal(hw_fini(&W), 0);
}

/*
 * RNR: 16 receives per channel and a receiver that issues none. The sender's first 16
 * chunks land (they wait for receives); the 17th finds no receive posted and fails
 * with -ENOBUFS once its RNR retries are spent (finite: the transport refuses
 * rnr_retry 7); the one behind it is flushed. The receives issued afterwards take the
 * 16 that landed, in order.
 */
static void test_rnr(void **state)
{
	struct dvx_ht_req s[18], r[16];
	struct dvx_ht *tx;
	int i;

	(void)state;
	up(DVX_HT_ZC, 1, 16);
	tx = hw_t(&W, 0, 1);
	zc_import();
	hw_fill(W.r[0].sbuf, 4 * MIB, 12);
	memset(s, 0, sizeof(s));
	memset(r, 0, sizeof(r));
	for (i = 0; i < 18; i++)
		assert_int_equal(chunk(1, 0, (uint64_t)i * 4096, &s[i]), 0);
	for (i = 0; i < 16; i++)
		assert_int_equal(hw_wait(&W, &s[i], T_OUT), 0);
	assert_int_equal(hw_wait(&W, &s[16], T_OUT), -ENOBUFS);
	assert_int_equal(hw_wait(&W, &s[17], T_OUT), -ECANCELED);
	assert_int_equal(dvx_ht_status(tx, 0), -ENOBUFS);
	assert_int_equal(dvx_ht_ib_chan_syndrome(&W.r[0].ib[1], 0, NULL), 0x16);	/* RNR */
	check();
	for (i = 0; i < 16; i++) {
		assert_int_equal(chunk(0, 0, (uint64_t)i * 4096, &r[i]), 0);
		assert_int_equal(hw_wait(&W, &r[i], T_OUT), 0);
	}
	assert_memory_equal(W.r[1].rbuf, W.r[0].sbuf, 16 * 4096);
	check();
	assert_int_equal(hw_fini(&W), 0);
}

/* the peer finished its end: the next write has no responder and runs out of retries */
static void test_peer_gone(void **state)
{
	struct dvx_ht_req s;

	(void)state;
	up(DVX_HT_CB, 1, 0);
	memset(&s, 0, sizeof(s));
	assert_int_equal(dvx_ht_ib_fini(&W.r[1].ib[0]), 0);
	assert_int_equal(chunk(1, 0, 0, &s), 0);
	assert_int_equal(hw_wait(&W, &s, T_OUT), -EHOSTUNREACH);
	check();
	assert_int_equal(hw_fini(&W), 0);
}

/* timed-out waits change nothing: the request is waited for again and completes */
static void test_timeouts(void **state)
{
	struct dvx_ht_ib_cfg c;
	struct dvx_ht_req s, r, cr;
	struct dvx_ht *t;
	uint32_t v = 0, w = 42;

	(void)state;
	assert_int_equal(hw_init(&W, 2, MIB), 0);
	memset(&c, 0, sizeof(c));
	c.mode = DVX_HT_CB;
	/* the handshake waits for a peer that comes late */
	assert_int_equal(hw_end(&W, 0, 1, &c), 0);
	t = hw_t(&W, 0, 1);
	assert_int_equal(dvx_ht_wait_connected(t, SHORT), -ETIMEDOUT);
	assert_int_equal(dvx_ht_wait_connected(t, SHORT), -ETIMEDOUT);
	assert_int_equal(hw_end(&W, 1, 0, &c), 0);
	assert_int_equal(hw_connect(&W, 0, 1, T_OUT), 0);
	assert_int_equal(dvx_ht_wait_connected(t, SHORT), 0);
	memset(&s, 0, sizeof(s));
	memset(&r, 0, sizeof(r));
	memset(&cr, 0, sizeof(cr));
	hw_fill(W.r[0].sbuf, MIB, 13);
	/* a receive with no sender yet */
	assert_int_equal(chunk(0, 0, 0, &r), 0);
	assert_int_equal(dvx_ht_wait(&r, SHORT), -ETIMEDOUT);
	assert_int_equal(dvx_ht_wait(&r, SHORT), -ETIMEDOUT);
	assert_int_equal(r.state, DVX_HT_RS_BUSY);
	/* a control receive likewise */
	assert_int_equal(dvx_ht_recv_ctrl(hw_t(&W, 1, 0), &v, sizeof(v), &cr), 0);
	assert_int_equal(dvx_ht_wait(&cr, SHORT), -ETIMEDOUT);
	check();
	assert_int_equal(chunk(1, 0, 0, &s), 0);
	assert_int_equal(hw_wait(&W, &s, T_OUT), 0);
	assert_int_equal(dvx_ht_wait(&r, T_OUT), 0);
	assert_memory_equal(W.r[1].rbuf, W.r[0].sbuf, 4096);
	assert_int_equal(dvx_ht_send_ctrl(t, &w, sizeof(w), &s), 0);
	assert_int_equal(dvx_ht_wait(&cr, T_OUT), 0);
	assert_int_equal(v, 42);
	assert_int_equal(dvx_ht_wait(&s, T_OUT), 0);
	/* a done request answers the same again */
	assert_int_equal(dvx_ht_wait(&s, 0), 0);
	check();
	assert_int_equal(hw_fini(&W), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_drop_zc),
		cmocka_unit_test(test_drop_cb),
		cmocka_unit_test(test_link_down_zc),
		cmocka_unit_test(test_link_down_cb),
		cmocka_unit_test(test_bad_rkey),
		cmocka_unit_test(test_rnr),
		cmocka_unit_test(test_peer_gone),
		cmocka_unit_test(test_timeouts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
