// SPDX-License-Identifier: MIT
/*
 * tests/ht/test_ht_cb.c - the copy-based mode's staging slots, one transition at a time:
 * copy hooks that hold their copies until the test lets them finish make every state
 * visible (send: FREE -> FILLING -> IN_FLIGHT -> FREE, and no slot: -EAGAIN; receive:
 * FREE -> LANDED -> DRAINING -> FREE), then the error transitions (a prepare that
 * fails at once or later: the sender's request gets its error and the receiver's
 * -EREMOTEIO; a process that fails; a receive too small) each followed by a good
 * chunk, so a failure never costs the channel its order; the invariant checker after
 * every step. Two ranks, one thread.
 */
#include <errno.h>

#include "../lib/dvx_test.h"
#include "hworld.h"

#define T_OUT (30 * HW_SEC)
#define SLOT 4096u

static struct hw W;

/* the hooks: each copy either finishes at once or is held until released */
struct hook {
	int hold_prep, hold_proc;	/* answer "started", finish when released */
	int prep_err, proc_err;		/* fail the start with this */
	int late_err;			/* fail the held copy with this when asked */
	int prepares, processes, polls;
};

static struct hook H;

static int h_prepare(void *arg, const struct dvx_ht_cb_op *op)
{
	struct hook *h = arg;

	h->prepares++;
	if (h->prep_err)
		return h->prep_err;
	if (h->hold_prep)
		return 1;
	memcpy(op->staging, op->user, op->len);
	return 0;
}

static int h_prepared(void *arg, const struct dvx_ht_cb_op *op)
{
	struct hook *h = arg;

	h->polls++;
	if (h->hold_prep)
		return 0;
	if (h->late_err)
		return h->late_err;
	memcpy(op->staging, op->user, op->len);
	return 1;
}

static int h_process(void *arg, const struct dvx_ht_cb_op *op)
{
	struct hook *h = arg;

	h->processes++;
	if (h->proc_err)
		return h->proc_err;
	if (h->hold_proc)
		return 1;
	memcpy(op->user, op->staging, op->len);
	return 0;
}

static int h_processed(void *arg, const struct dvx_ht_cb_op *op)
{
	struct hook *h = arg;

	h->polls++;
	if (h->hold_proc)
		return 0;
	memcpy(op->user, op->staging, op->len);
	return 1;
}

static struct dvx_ht *tx, *rx;
static struct dvx_ht_ib *txi, *rxi;

static void check(void)
{
	const char *why = NULL;

	if (dvx_ht_ib_check(txi, &why))
		fail_msg("sender: %s", why);
	if (dvx_ht_ib_check(rxi, &why))
		fail_msg("receiver: %s", why);
}

static void steps(int n)
{
	while (n-- > 0) {
		hw_progress(&W);
		check();
	}
}

static void up(uint32_t depth)
{
	struct dvx_ht_ib_cfg c;

	memset(&H, 0, sizeof(H));
	assert_int_equal(hw_init(&W, 2, 1 << 20), 0);
	memset(&c, 0, sizeof(c));
	c.mode = DVX_HT_CB;
	c.cb_depth = depth;
	c.cb_slot_bytes = SLOT;
	c.hooks.prepare = h_prepare;
	c.hooks.prepared = h_prepared;
	c.hooks.process = h_process;
	c.hooks.processed = h_processed;
	c.hooks.arg = &H;
	assert_int_equal(hw_pair(&W, 0, 1, &c), 0);
	assert_int_equal(hw_connect(&W, 0, 1, T_OUT), 0);
	tx = hw_t(&W, 0, 1);
	rx = hw_t(&W, 1, 0);
	txi = &W.r[0].ib[1];
	rxi = &W.r[1].ib[0];
	hw_fill(W.r[0].sbuf, 1 << 20, 77);
	memset(W.r[1].rbuf, 0, 1 << 20);
}

static int send_n(uint32_t i, struct dvx_ht_req *q)
{
	struct dvx_ht_chunk k;

	memset(&k, 0, sizeof(k));
	k.buf = W.r[0].sbuf + (uint64_t)i * SLOT;
	k.len = SLOT - i;
	return dvx_ht_send_chunk(tx, &k, q);
}

static int recv_n(uint32_t i, uint64_t room, struct dvx_ht_req *q)
{
	struct dvx_ht_chunk k;

	memset(&k, 0, sizeof(k));
	k.buf = W.r[1].rbuf + (uint64_t)i * SLOT;
	k.len = room;
	return dvx_ht_recv_chunk(rx, &k, q);
}

static void got_n(uint32_t i)
{
	assert_memory_equal(W.r[1].rbuf + (uint64_t)i * SLOT, W.r[0].sbuf + (uint64_t)i * SLOT,
			    SLOT - i);
}

static int tx_state(uint32_t s)
{
	return dvx_ht_ib_slot_state(txi, DVX_HT_SEND, 0, s);
}

static int rx_state(uint32_t s)
{
	return dvx_ht_ib_slot_state(rxi, DVX_HT_RECV, 0, s);
}

static void test_transitions(void **state)
{
	struct dvx_ht_req s[4], r[4];
	struct dvx_ht_ib_stats st;

	(void)state;
	up(2);
	memset(s, 0, sizeof(s));
	memset(r, 0, sizeof(r));
	H.hold_prep = H.hold_proc = 1;
	assert_int_equal(tx_state(0), DVX_HT_SLOT_FREE);
	assert_int_equal(rx_state(0), DVX_HT_SLOT_FREE);
	/* FREE -> FILLING: the prepare step runs and has not finished */
	assert_int_equal(send_n(0, &s[0]), 0);
	assert_int_equal(tx_state(0), DVX_HT_SLOT_FILLING);
	steps(4);
	assert_int_equal(tx_state(0), DVX_HT_SLOT_FILLING);
	assert_int_equal(rx_state(0), DVX_HT_SLOT_FREE);
	assert_int_equal(s[0].state, DVX_HT_RS_BUSY);
	assert_true(dvx_ht_ready(tx, 0, DVX_HT_SEND));	/* slot 1 is free */
	/* FILLING -> IN_FLIGHT; the chunk lands: receiver FREE -> LANDED */
	H.hold_prep = 0;
	steps(4);
	assert_int_equal(tx_state(0), DVX_HT_SLOT_IN_FLIGHT);
	assert_int_equal(rx_state(0), DVX_HT_SLOT_LANDED);
	/* the write completed, but the slot stays the peer's until its credit */
	assert_int_equal(s[0].state, DVX_HT_RS_DONE);
	assert_int_equal(s[0].err, 0);
	/* the second slot, then none: -EAGAIN, nothing changed */
	assert_int_equal(send_n(1, &s[1]), 0);
	steps(4);
	assert_int_equal(tx_state(1), DVX_HT_SLOT_IN_FLIGHT);
	assert_int_equal(rx_state(1), DVX_HT_SLOT_LANDED);
	assert_false(dvx_ht_ready(tx, 0, DVX_HT_SEND));
	assert_int_equal(send_n(2, &s[2]), -EAGAIN);
	assert_int_equal(s[2].state, DVX_HT_RS_IDLE);
	dvx_ht_ib_get_stats(txi, &st);
	assert_int_equal(st.credit_waits, 1);
	/* LANDED -> DRAINING: a receive takes the oldest chunk, its copy held */
	assert_int_equal(recv_n(0, SLOT, &r[0]), 0);
	assert_int_equal(rx_state(0), DVX_HT_SLOT_DRAINING);
	assert_int_equal(rx_state(1), DVX_HT_SLOT_LANDED);
	steps(4);
	assert_int_equal(rx_state(0), DVX_HT_SLOT_DRAINING);
	assert_int_equal(r[0].state, DVX_HT_RS_BUSY);
	assert_int_equal(tx_state(0), DVX_HT_SLOT_IN_FLIGHT);
	/* DRAINING -> FREE: the copy finishes, the receive completes, the credit goes
	 * back; the sender's slot is FREE once it sees the credit */
	H.hold_proc = 0;
	steps(4);
	assert_int_equal(rx_state(0), DVX_HT_SLOT_FREE);
	assert_int_equal(r[0].state, DVX_HT_RS_DONE);
	assert_int_equal(r[0].err, 0);
	assert_int_equal(r[0].bytes, SLOT);
	got_n(0);
	assert_int_equal(tx_state(0), DVX_HT_SLOT_FREE);
	assert_int_equal(tx_state(1), DVX_HT_SLOT_IN_FLIGHT);
	assert_true(dvx_ht_ready(tx, 0, DVX_HT_SEND));
	/* the next receive takes slot 1, and the third chunk goes into slot 0 */
	assert_int_equal(recv_n(1, SLOT, &r[1]), 0);
	assert_int_equal(send_n(2, &s[2]), 0);
	assert_int_equal(hw_wait(&W, &r[1], T_OUT), 0);
	got_n(1);
	assert_int_equal(recv_n(2, SLOT, &r[2]), 0);
	assert_int_equal(hw_wait(&W, &r[2], T_OUT), 0);
	got_n(2);
	steps(4);
	assert_int_equal(tx_state(0), DVX_HT_SLOT_FREE);
	assert_int_equal(tx_state(1), DVX_HT_SLOT_FREE);
	assert_int_equal(rx_state(0), DVX_HT_SLOT_FREE);
	assert_int_equal(rx_state(1), DVX_HT_SLOT_FREE);
	dvx_ht_ib_get_stats(rxi, &st);
	assert_int_equal(st.credits_sent, 3);
	assert_int_equal(st.chunks_recv, 3);
	assert_int_equal(dvx_ht_ib_slot_state(txi, DVX_HT_SEND, 0, 2), -EINVAL);
	assert_int_equal(dvx_ht_ib_slot_state(txi, 2, 0, 0), -EINVAL);
	assert_int_equal(hw_fini(&W), 0);
}

/* a chunk @i whose sender and receiver expect errors @serr and @rerr, then a good one */
static void bad_then_good(uint32_t i, uint64_t room, int serr, int rerr)
{
	struct dvx_ht_req s, r;

	memset(&s, 0, sizeof(s));
	memset(&r, 0, sizeof(r));
	assert_int_equal(send_n(i, &s), 0);
	assert_int_equal(recv_n(i, room, &r), 0);
	assert_int_equal(hw_wait(&W, &s, T_OUT), serr);
	assert_int_equal(hw_wait(&W, &r, T_OUT), rerr);
	memset(&H, 0, sizeof(H));
	steps(4);
	assert_int_equal(tx_state(0), DVX_HT_SLOT_FREE);
	assert_int_equal(rx_state(0), DVX_HT_SLOT_FREE);
	assert_int_equal(send_n(i + 1, &s), 0);
	assert_int_equal(recv_n(i + 1, SLOT, &r), 0);
	assert_int_equal(hw_wait(&W, &s, T_OUT), 0);
	assert_int_equal(hw_wait(&W, &r, T_OUT), 0);
	got_n(i + 1);
	steps(4);	/* the sender sees the credit: its slot is free again */
}

static void test_errors(void **state)
{
	(void)state;
	up(1);	/* one slot: every chunk reuses it */
	/* a prepare that fails at once: the sender gets its error, the receiver
	 * -EREMOTEIO (the chunk never came), in the channel's order */
	H.prep_err = -EIO;
	bad_then_good(0, SLOT, -EIO, -EREMOTEIO);
	/* a held prepare that fails later */
	H.hold_prep = 1;
	{
		struct dvx_ht_req s, r;

		memset(&s, 0, sizeof(s));
		memset(&r, 0, sizeof(r));
		assert_int_equal(send_n(2, &s), 0);
		assert_int_equal(recv_n(2, SLOT, &r), 0);
		steps(3);
		assert_int_equal(tx_state(0), DVX_HT_SLOT_FILLING);
		H.hold_prep = 0;
		H.late_err = -EFAULT;
		assert_int_equal(hw_wait(&W, &s, T_OUT), -EFAULT);
		assert_int_equal(hw_wait(&W, &r, T_OUT), -EREMOTEIO);
		memset(&H, 0, sizeof(H));
		steps(4);
		assert_int_equal(tx_state(0), DVX_HT_SLOT_FREE);
	}
	/* a process that fails: the receive gets the error, the slot goes back */
	H.proc_err = -ENOMEM;
	bad_then_good(4, SLOT, 0, -ENOMEM);
	/* a receive too small for the chunk: -EMSGSIZE, nothing copied */
	memset(W.r[1].rbuf + 6 * SLOT, 0x5a, 16);
	bad_then_good(6, 100, 0, -EMSGSIZE);
	assert_int_equal(W.r[1].rbuf[6 * SLOT], 0x5a);
	assert_int_equal(hw_fini(&W), 0);
}

/* receives issued before the chunks exist wait in order; chunks that land before their
 * receives wait in their slots */
static void test_orders(void **state)
{
	struct dvx_ht_req s[8], r[8];
	uint32_t i;

	(void)state;
	up(4);
	memset(s, 0, sizeof(s));
	memset(r, 0, sizeof(r));
	for (i = 0; i < 4; i++)
		assert_int_equal(recv_n(i, SLOT, &r[i]), 0);
	steps(2);
	for (i = 0; i < 4; i++)
		assert_int_equal(r[i].state, DVX_HT_RS_BUSY);
	for (i = 0; i < 4; i++)
		assert_int_equal(send_n(i, &s[i]), 0);
	for (i = 0; i < 4; i++) {
		assert_int_equal(hw_wait(&W, &r[i], T_OUT), 0);
		got_n(i);
	}
	steps(4);
	for (i = 4; i < 8; i++)
		assert_int_equal(send_n(i, &s[i]), 0);
	steps(4);
	for (i = 0; i < 4; i++)
		assert_int_equal(rx_state(i), DVX_HT_SLOT_LANDED);
	for (i = 4; i < 8; i++) {
		assert_int_equal(recv_n(i, SLOT, &r[i]), 0);
		assert_int_equal(hw_wait(&W, &r[i], T_OUT), 0);
		got_n(i);
	}
	for (i = 0; i < 8; i++)
		assert_int_equal(hw_wait(&W, &s[i], T_OUT), 0);
	steps(4);
	assert_int_equal(hw_fini(&W), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_transitions),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_orders),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
