// SPDX-License-Identifier: MIT
/*
 * tests/ht/test_ht_recover.c - dvx_ht_recover() on the software NIC (docs/ht.md
 * "Recovery of a failed channel"). Faults are injected in the middle of transfers (the
 * link down while chunks stream on every channel, a bad remote key, drops beyond the
 * retry count); then both ends recover, each from its own thread, and every request
 * issued before is done, the channels are healthy at both ends, and whole transfers
 * in both directions on every channel move every byte again. Also: a healthy channel
 * is a no-op; one end alone times out and leaves the channel failed, and calling
 * again on both ends finishes it; control messages that waited unread are dropped
 * and counted; a relapse (the device reports the QP out of RTS after its reset) is
 * -EAGAIN with the channel failed (-EIO), never 0, and a second call recovers it.
 */
#include <errno.h>
#include <pthread.h>

#include <dvx/mlx5/cmd.h>
#include <dvx/mlx5/ifc.h>

#include "../lib/dvx_test.h"
#include "hworld.h"

#define MIB (1ull << 20)
#define T_OUT (30 * HW_SEC)
#define SHORT (20 * 1000000ull)	/* 20 ms: a recovery expected to time out */

static struct hw W;

static void up(uint32_t mode, uint32_t nch)
{
	struct dvx_ht_ib_cfg c;

	assert_int_equal(hw_init(&W, 2, 4 * MIB), 0);
	memset(&c, 0, sizeof(c));
	c.mode = mode;
	c.nchannels = nch;
	if (mode == DVX_HT_CB)
		c.cb_slot_bytes = 16384;
	assert_int_equal(hw_pair(&W, 0, 1, &c), 0);
	assert_int_equal(hw_connect(&W, 0, 1, T_OUT), 0);
}

static void check(void)
{
	const char *why = NULL;

	if (dvx_ht_ib_check(&W.r[0].ib[1], &why))
		fail_msg("rank 0: %s", why);
	if (dvx_ht_ib_check(&W.r[1].ib[0], &why))
		fail_msg("rank 1: %s", why);
}

/* ---- both ends recover, each from its own thread --------------------------------- */

struct rec_arg {
	int me;
	uint32_t first, last;	/* channels, in this order at both ends */
	uint64_t timeout;
	int err[DVX_HT_MAX_CHANNELS];
};

static void *rec_main(void *p)
{
	struct rec_arg *a = p;
	uint32_t ch;

	for (ch = a->first; ch <= a->last; ch++)
		a->err[ch] = dvx_ht_recover(hw_t(&W, a->me, !a->me), ch, a->timeout);
	return NULL;
}

/* rank 0 here, rank 1 in a thread: each end's result per channel in a[] */
static void recover_both(uint32_t first, uint32_t last, uint64_t timeout, struct rec_arg a[2])
{
	pthread_t th;
	int i;

	memset(a, 0, 2 * sizeof(*a));
	for (i = 0; i < 2; i++) {
		a[i].me = i;
		a[i].first = first;
		a[i].last = last;
		a[i].timeout = timeout;
	}
	assert_int_equal(pthread_create(&th, NULL, rec_main, &a[1]), 0);
	rec_main(&a[0]);
	pthread_join(th, NULL);
}

static void recover_ok(uint32_t nch)
{
	struct rec_arg a[2];
	uint32_t ch;

	recover_both(0, nch - 1, T_OUT, a);
	for (ch = 0; ch < nch; ch++) {
		if (a[0].err[ch] || a[1].err[ch])
			fail_msg("channel %u: recover %d / %d", ch, a[0].err[ch], a[1].err[ch]);
		assert_int_equal(dvx_ht_status(hw_t(&W, 0, 1), (int32_t)ch), 0);
		assert_int_equal(dvx_ht_status(hw_t(&W, 1, 0), (int32_t)ch), 0);
	}
}

/* whether every request of a side is done (none still in flight) */
static int side_idle(const struct hw_side *s)
{
	uint32_t c, k;

	for (c = 0; c < s->nch; c++)
		for (k = 0; k < HW_WIN; k++)
			if (s->req[c][k].state == DVX_HT_RS_BUSY)
				return 0;
	return s->ctrl.state != DVX_HT_RS_BUSY;
}

/* whole transfers both ways on every channel, every byte checked */
static void traffic(uint32_t nch, uint32_t salt)
{
	uint64_t chunk = hw_t(&W, 0, 1)->mode == DVX_HT_ZC ? 65536 : 16384;

	assert_int_equal(hw_xfer(&W, 0, 1, 2 * MIB - 5, chunk, nch, salt), 0);
	assert_int_equal(hw_xfer2(&W, 0, 1, MIB + 3, chunk, nch, salt + 1), 0);
	check();
}

static void stats(int a, uint64_t *rec, uint64_t *dropped)
{
	struct dvx_ht_ib_stats s;

	dvx_ht_ib_get_stats(&W.r[a].ib[!a], &s);
	*rec = s.recoveries;
	if (dropped)
		*dropped = s.rec_dropped;
}

/* ---- faults in the middle of a transfer -------------------------------------------- */

/*
 * A stream from rank 0 to rank 1 on every channel; once a quarter of it has moved,
 * @f hits. The sender's requests fail (the first with the fault's error, the ones
 * behind it flushed); the receiver hears nothing and its receives stay in flight until
 * the recovery fails them with the peer's error. Both ends recover every channel, then
 * whole transfers work again.
 */
static void mid_transfer(uint32_t mode, uint32_t nch, const struct dvx_sim_faults *f)
{
	static struct hw_side tx, rx;
	uint64_t size = 4 * MIB - 7, end, rec, rec1, dropped;
	int faulted = 0;

	up(mode, nch);
	hw_fill(W.r[0].sbuf, size, 21);
	/* 16 KiB chunks: a window of requests per channel is far from the whole */
	hw_side_init(&tx, hw_t(&W, 0, 1), 1, W.r[0].sbuf, &W.r[0].smr, size, 16384, nch, 0);
	hw_side_init(&rx, hw_t(&W, 1, 0), 0, W.r[1].rbuf, &W.r[1].rmr, size, 16384, nch, 0);
	end = hw_now() + T_OUT;
	while (!tx.err && tx.phase != 3) {
		hw_side_step(&tx);
		hw_side_step(&rx);
		if (!faulted && tx.moved >= size / 4) {
			dvx_sim_set_faults(W.fab, f);
			faulted = 1;

		}
		assert_true(hw_now() < end);
	}
	assert_true(faulted);
	assert_int_not_equal(tx.err, 0);	/* the fault reached a request */
	assert_int_not_equal(tx.phase, 3);
	/* with the fault on, every write still in flight fails (retry exhausted) */
	while (!side_idle(&tx)) {
		hw_progress(&W);
		assert_true(hw_now() < end);
	}
	check();
	dvx_sim_set_faults(W.fab, NULL);
	recover_ok(nch);
	/* every request issued before the recovery is done, with its result */
	assert_true(side_idle(&tx));
	assert_true(side_idle(&rx));
	stats(0, &rec, &dropped);
	assert_true(dropped <= 512 * nch);	/* at most what the receive rings held */
	stats(1, &rec1, &dropped);
	assert_true(dropped <= 512 * nch);
	assert_true(rec >= 1 && rec <= nch);
	assert_int_equal(rec, rec1);
	check();
	traffic(nch, 30);
	assert_int_equal(hw_fini(&W), 0);
}

static void test_link_down_zc(void **state)
{
	struct dvx_sim_faults f;

	(void)state;
	memset(&f, 0, sizeof(f));
	f.link_down = 1;
	mid_transfer(DVX_HT_ZC, 1, &f);
	mid_transfer(DVX_HT_ZC, 4, &f);
}

static void test_link_down_cb(void **state)
{
	struct dvx_sim_faults f;

	(void)state;
	memset(&f, 0, sizeof(f));
	f.link_down = 1;
	mid_transfer(DVX_HT_CB, 1, &f);
	mid_transfer(DVX_HT_CB, 4, &f);
}

/* more drops in a row than the retry count: retry exhausted on the channel's QPs */
static void test_drop_burst(void **state)
{
	struct dvx_sim_faults f;

	(void)state;
	memset(&f, 0, sizeof(f));
	f.drop_count = 64;
	mid_transfer(DVX_HT_CB, 1, &f);
	mid_transfer(DVX_HT_ZC, 1, &f);
}

/* ---- a remote access error: both ends' QPs fail ----------------------------------- */

static void test_bad_rkey(void **state)
{
	struct dvx_ht_desc d;
	struct dvx_ht_rbuf rb;
	struct dvx_ht_chunk k;
	struct dvx_ht_req s, r;
	uint64_t rec;

	(void)state;
	up(DVX_HT_ZC, 2);
	assert_int_equal(dvx_ht_export(hw_t(&W, 1, 0), W.r[1].rbuf, MIB, &W.r[1].rmr, &d), 0);
	assert_int_equal(dvx_ht_import(hw_t(&W, 0, 1), &d, &rb), 0);
	rb.key ^= 0x5500;
	memset(&k, 0, sizeof(k));
	memset(&s, 0, sizeof(s));
	memset(&r, 0, sizeof(r));
	k.buf = W.r[1].rbuf;
	k.len = 4096;
	k.channel = 1;
	assert_int_equal(dvx_ht_recv_chunk(hw_t(&W, 1, 0), &k, &r), 0);
	k.buf = W.r[0].sbuf;
	k.mr = &W.r[0].smr;
	k.remote = &rb;
	assert_int_equal(dvx_ht_send_chunk(hw_t(&W, 0, 1), &k, &s), 0);
	assert_int_equal(hw_wait(&W, &s, T_OUT), -EPERM);
	assert_int_equal(hw_wait(&W, &r, T_OUT), -ECANCELED);
	assert_int_equal(dvx_ht_status(hw_t(&W, 0, 1), 1), -EPERM);
	assert_int_equal(dvx_ht_ib_chan_syndrome(&W.r[0].ib[1], 1, NULL), 0x13);
	recover_ok(2);
	assert_int_equal(dvx_ht_ib_chan_syndrome(&W.r[0].ib[1], 1, NULL), 0);
	stats(0, &rec, NULL);
	assert_int_equal(rec, 1);	/* channel 0 was healthy at both ends */
	traffic(2, 40);
	assert_int_equal(hw_fini(&W), 0);
}

/* ---- healthy channels, one end alone, control messages --------------------------- */

static void test_healthy(void **state)
{
	uint64_t rec;

	(void)state;
	up(DVX_HT_CB, 2);
	traffic(2, 50);
	recover_ok(2);
	stats(0, &rec, NULL);
	assert_int_equal(rec, 0);
	stats(1, &rec, NULL);
	assert_int_equal(rec, 0);
	traffic(2, 52);
	/* bad arguments */
	assert_int_equal(dvx_ht_recover(NULL, 0, T_OUT), -EINVAL);
	assert_int_equal(dvx_ht_recover(hw_t(&W, 0, 1), 2, T_OUT), -EINVAL);
	assert_int_equal(hw_fini(&W), 0);
}

/* not connected yet: nothing to recover */
static void test_not_connected(void **state)
{
	struct dvx_ht_ib_cfg c;

	(void)state;
	assert_int_equal(hw_init(&W, 2, MIB), 0);
	memset(&c, 0, sizeof(c));
	c.mode = DVX_HT_ZC;
	assert_int_equal(hw_end(&W, 0, 1, &c), 0);
	assert_int_equal(dvx_ht_recover(hw_t(&W, 0, 1), 0, SHORT), -ENOTCONN);
	assert_int_equal(hw_end(&W, 1, 0, &c), 0);
	assert_int_equal(hw_connect(&W, 0, 1, T_OUT), 0);
	assert_int_equal(hw_fini(&W), 0);
}

/*
 * Channel 0 fails with a control message waiting unread at rank 1. Rank 0 recovers
 * alone: it times out and the channel stays failed (its issues still refused). Then
 * both ends: rank 1's waiting message is dropped and counted, control messages and
 * chunks flow again.
 */
static void test_alone_then_both(void **state)
{
	struct dvx_sim_faults f;
	struct dvx_ht_req s, r;
	struct rec_arg a[2];
	uint32_t v = 7, got = 0;
	uint64_t rec, dropped;
	int err;

	(void)state;
	up(DVX_HT_CB, 1);
	memset(&s, 0, sizeof(s));
	memset(&r, 0, sizeof(r));
	assert_int_equal(dvx_ht_send_ctrl(hw_t(&W, 0, 1), &v, sizeof(v), &s), 0);
	assert_int_equal(hw_wait(&W, &s, T_OUT), 0);
	/* the link down, then a control message that runs out of retries */
	memset(&f, 0, sizeof(f));
	f.link_down = 1;
	dvx_sim_set_faults(W.fab, &f);
	assert_int_equal(dvx_ht_send_ctrl(hw_t(&W, 0, 1), &v, sizeof(v), &s), 0);
	assert_int_equal(hw_wait(&W, &s, T_OUT), -EHOSTUNREACH);
	dvx_sim_set_faults(W.fab, NULL);
	assert_int_equal(dvx_ht_recover(hw_t(&W, 0, 1), 0, SHORT), -ETIMEDOUT);
	assert_int_equal(dvx_ht_status(hw_t(&W, 0, 1), 0), -EHOSTUNREACH);
	assert_int_equal(dvx_ht_send_ctrl(hw_t(&W, 0, 1), &v, sizeof(v), &s), -EHOSTUNREACH);
	check();
	/* both: rank 1 had not failed; it learns the peer's error */
	recover_both(0, 0, T_OUT, a);
	assert_int_equal(a[0].err[0], 0);
	assert_int_equal(a[1].err[0], 0);
	stats(1, &rec, &dropped);
	assert_int_equal(rec, 1);
	assert_int_equal(dropped, 1);	/* the first message, never received */
	check();
	/* control messages both ways again */
	v = 11;
	assert_int_equal(dvx_ht_recv_ctrl(hw_t(&W, 1, 0), &got, sizeof(got), &r), 0);
	assert_int_equal(dvx_ht_send_ctrl(hw_t(&W, 0, 1), &v, sizeof(v), &s), 0);
	assert_int_equal(hw_wait(&W, &r, T_OUT), 0);
	assert_int_equal(got, 11);
	err = hw_wait(&W, &s, T_OUT);
	assert_int_equal(err, 0);
	traffic(1, 60);
	assert_int_equal(hw_fini(&W), 0);
}

/* ---- a relapse: the device reports the QP out of RTS after its reset ----------------- */

static uint32_t relapse_on;	/* rank 0's NIC (one transport, one channel) */
static const struct dvx_hal_nic_ops *sim_nic;
static struct dvx_hal_nic_ops hooked_nic;
static struct dvx_hal hooked;

static int relapse_query(struct dvx_hal_nic *nic, struct dvx_hal_obj *obj, const void *in,
			 size_t inlen, void *out, size_t outlen)
{
	const uint8_t *b = in;
	int err = sim_nic->obj_query(nic, obj, in, inlen, out, outlen);
	uint8_t *qpc = DVX_MLX5_QPC_IN((uint8_t *)out);

	if (err || !__atomic_load_n(&relapse_on, __ATOMIC_ACQUIRE) ||
	    ((uint32_t)b[0] << 8 | b[1]) != DVX_MLX5_CMD_QUERY_QP ||
	    outlen < DVX_MLX5_QUERY_QP_OUT_BYTES)
		return err;
	if (dvx_mlx5_get(qpc, DVX_MLX5_QPC_STATE) == DVX_MLX5_QP_STATE_RTS)
		dvx_mlx5_set(qpc, DVX_MLX5_QPC_STATE, DVX_MLX5_QP_STATE_ERR);
	return 0;
}

static void test_relapse(void **state)
{
	const struct dvx_hal *keep;
	struct dvx_ht_desc d;
	struct dvx_ht_rbuf rb;
	struct dvx_ht_chunk k;
	struct dvx_ht_req s;
	struct rec_arg a[2];
	uint64_t rec;

	(void)state;
	up(DVX_HT_ZC, 1);
	/* rank 0's NIC answers queries through the hook */
	keep = W.r[0].nic.hal.hal;
	hooked = *keep;
	sim_nic = keep->nic;
	hooked_nic = *keep->nic;
	hooked_nic.obj_query = relapse_query;
	hooked.nic = &hooked_nic;
	W.r[0].nic.hal.hal = &hooked;
	/* a bad rkey fails both ends */
	assert_int_equal(dvx_ht_export(hw_t(&W, 1, 0), W.r[1].rbuf, MIB, &W.r[1].rmr, &d), 0);
	assert_int_equal(dvx_ht_import(hw_t(&W, 0, 1), &d, &rb), 0);
	rb.key ^= 0x5500;
	memset(&k, 0, sizeof(k));
	memset(&s, 0, sizeof(s));
	k.buf = W.r[0].sbuf;
	k.len = 4096;
	k.mr = &W.r[0].smr;
	k.remote = &rb;
	assert_int_equal(dvx_ht_send_chunk(hw_t(&W, 0, 1), &k, &s), 0);
	assert_int_equal(hw_wait(&W, &s, T_OUT), -EPERM);
	__atomic_store_n(&relapse_on, 1u, __ATOMIC_RELEASE);
	recover_both(0, 0, T_OUT, a);
	assert_int_equal(a[0].err[0], -EAGAIN);	/* never 0 for a QP out of RTS */
	assert_int_equal(a[1].err[0], 0);
	assert_int_equal(dvx_ht_status(hw_t(&W, 0, 1), 0), -EIO);
	stats(0, &rec, NULL);
	assert_int_equal(rec, 0);
	__atomic_store_n(&relapse_on, 0u, __ATOMIC_RELEASE);
	recover_ok(1);
	stats(0, &rec, NULL);
	assert_int_equal(rec, 1);
	stats(1, &rec, NULL);
	assert_int_equal(rec, 2);
	traffic(1, 70);
	W.r[0].nic.hal.hal = keep;
	assert_int_equal(hw_fini(&W), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_link_down_zc),
		cmocka_unit_test(test_link_down_cb),
		cmocka_unit_test(test_drop_burst),
		cmocka_unit_test(test_bad_rkey),
		cmocka_unit_test(test_healthy),
		cmocka_unit_test(test_not_connected),
		cmocka_unit_test(test_alone_then_both),
		cmocka_unit_test(test_relapse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
