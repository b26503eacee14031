// SPDX-License-Identifier: MIT
/*
 * tests/p2p/test_p2p.c - the P2P IBGDA transport end to end on the software NIC,
 * ranks as threads (2, 4 and 8), through the real core objects, the mlx5 builders
 * and encoders, and the sim executing their bytes.
 */
#include <string.h>
#include <unistd.h>

#include "../lib/dvx_test.h"
#include "../lib/p2p_world.h"

#include <dvx/mlx5/prm.h>

#define T_OUT (20 * W_SEC)

static void fill(struct wrank *r, int to, uint32_t round, uint64_t len)
{
	uint8_t *p = r->data + wsend_off(r, to);
	uint64_t i;

	for (i = 0; i < len; i++)
		p[i] = wpat(r->rank, to, round, i);
}

/* 0 when the slot from @from holds round @round's pattern for @len bytes */
static int check_slot(struct wrank *r, int from, uint32_t round, uint64_t len, uint64_t *bad)
{
	const uint8_t *p = wrecv(r, from);
	uint64_t i;

	for (i = 0; i < len; i++)
		if (p[i] != wpat(from, r->rank, round, i)) {
			*bad = i;
			return -1;
		}
	return 0;
}

/* ---- put + signal with verification, ready-then-put, all peers at once ---- */

struct rounds_arg {
	uint64_t len;
	uint32_t rounds;
	uint32_t channel;
	int scrub;
	int fenced;
};

/*
 * Every rank sends to every peer each round and receives from every peer:
 *   sender:   wait until peer says ready (>= round), fill, put_signal(slot 0, +1)
 *   receiver: wait signal (from, 0) >= round + 1 (cumulative), verify, scrub,
 *             signal ready to the sender (slot 1 at the sender, cumulative)
 */
static void body_rounds(struct wrank *r)
{
	const struct rounds_arg *a = r->user;
	int n = r->w->cfg.nranks, p;
	uint32_t k;
	struct dvx_p2p_ticket tk;
	struct dvx_p2p_wait_report rep;
	uint64_t bad;

	for (k = 0; k < a->rounds; k++) {
		for (p = 0; p < n; p++) {
			if (p == r->rank)
				continue;
			if (k > 0)
				W_OK(r, dvx_p2p_wait_signal(&r->t, &r->sig_l, wsig_off(r, p, 1),
							    DVX_CMP_GE, k, T_OUT, &rep));
			fill(r, p, k, a->len);
			W_OK(r,
			     dvx_p2p_put_signal(&r->t, p, a->channel,
						&(struct dvx_p2p_xfer){
							&r->data_l, wsend_off(r, p), &r->data_r[p],
							wrecv_off(r, r->rank), a->len },
						&(struct dvx_p2p_notify){
							&r->sig_r[p], wsig_off(r, r->rank, 0), 1,
							NULL, 0, a->fenced ? DVX_P2P_FENCE : 0 },
						T_OUT, &tk));
			/* the send area is reused next round: wait for its completion */
			W_OK(r, dvx_p2p_wait_local(&r->t, &tk, T_OUT, &rep));
		}
		for (p = 0; p < n; p++) {
			if (p == r->rank)
				continue;
			W_OK(r, dvx_p2p_wait_signal(&r->t, &r->sig_l, wsig_off(r, p, 0), DVX_CMP_GE,
						    k + 1, T_OUT, &rep));
			W_CHECK(r, dvx_p2p_read_signal(&r->sig_l, wsig_off(r, p, 0)) == k + 1,
				"signal from %d is %llu after round %u", p,
				(unsigned long long)dvx_p2p_read_signal(&r->sig_l, wsig_off(r, p, 0)),
				k);
			W_CHECK(r, check_slot(r, p, k, a->len, &bad) == 0,
				"round %u from %d: byte %llu wrong (len %llu)", k, p,
				(unsigned long long)bad, (unsigned long long)a->len);
			if (a->scrub)
				memset(wrecv(r, p), 0, a->len);
			W_OK(r, dvx_p2p_signal(&r->t, p, a->channel,
					       &(struct dvx_p2p_notify){ &r->sig_r[p],
									 wsig_off(r, r->rank, 1), 1,
									 NULL, 0, 0 },
					       T_OUT, NULL));
		}
	}
}

static void run_rounds_cfg(int nranks, uint64_t len, uint32_t rounds, int scrub, int dev)
{
	struct world_cfg c;
	struct rounds_arg a = { .len = len, .rounds = rounds, .scrub = scrub };

	world_cfg_default(&c);
	c.nranks = nranks;
	c.slot_bytes = len < 4096 ? 4096 : len;
	c.dev_data = dev;
	assert_int_equal(world_run(&c, body_rounds, &a), 0);
}

static void run_rounds(int nranks, uint64_t len, uint32_t rounds, int scrub)
{
	run_rounds_cfg(nranks, len, rounds, scrub, 0);
}

/* the same with every rank's data buffer in device memory behind DMA callbacks (the
 * puts gathered from it and placed into it through them; docs/sim.md "Data in GPU
 * memory") */
static void test_put_signal_dev_2(void **s)
{
	static const uint64_t sizes[] = { 8, 4096, 64 << 10, 1 << 20 };
	size_t i;

	(void)s;
	for (i = 0; i < DVX_ARRAY_SIZE(sizes); i++)
		run_rounds_cfg(2, sizes[i], 3, 1, 1);
	run_rounds_cfg(4, 4096, 2, 1, 1);
}

static void test_put_signal_sizes_2(void **s)
{
	static const uint64_t sizes[] = { 8, 1024, 64 << 10, 1 << 20, 16 << 20 };
	size_t i;

	(void)s;
	for (i = 0; i < DVX_ARRAY_SIZE(sizes); i++)
		run_rounds(2, sizes[i], sizes[i] >= (1 << 20) ? 2 : 4, 0);
}

static void test_all_to_all_4(void **s)
{
	(void)s;
	run_rounds(4, 64 << 10, 4, 1);
	run_rounds(4, 1 << 20, 2, 0);
}

static void test_all_to_all_8(void **s)
{
	(void)s;
	run_rounds(8, 8, 4, 1);
	run_rounds(8, 64 << 10, 3, 1);
}

/* lanes to some ranks only: puts and signals to those, -EINVAL to the others */
static void body_subset(struct wrank *r)
{
	const struct world_cfg *c = &r->w->cfg;
	int n = c->nranks, p, np = 0;
	struct dvx_p2p_ticket tk;
	struct dvx_p2p_wait_report rep;
	uint64_t bad;

	for (p = 0; p < n; p++)
		np += p != r->rank && c->link[r->rank][p];
	W_CHECK(r, r->t.npeers == (uint32_t)np, "npeers %u, want %d", r->t.npeers, np);
	W_CHECK(r, r->t.all_peers == (np == n - 1), "all_peers %u", r->t.all_peers);
	for (p = 0; p < n; p++) {
		if (p == r->rank)
			continue;
		if (!c->link[r->rank][p]) {
			W_CHECK(r, r->t.peer_idx[p] == -1, "rank %d has a lane index", p);
			W_CHECK(r,
				dvx_p2p_put(&r->t, p, 0,
					    &(struct dvx_p2p_xfer){ &r->data_l, wsend_off(r, p),
								    &r->data_r[p],
								    wrecv_off(r, r->rank), 8 },
					    T_OUT, &tk) == -EINVAL,
				"put to unlinked rank %d", p);
			continue;
		}
		W_CHECK(r, r->t.peer_rank[r->t.peer_idx[p]] == p, "maps disagree for %d", p);
		fill(r, p, 0, 4096);
		W_OK(r, dvx_p2p_put_signal(&r->t, p, 0,
					   &(struct dvx_p2p_xfer){ &r->data_l, wsend_off(r, p),
								   &r->data_r[p],
								   wrecv_off(r, r->rank), 4096 },
					   &(struct dvx_p2p_notify){ &r->sig_r[p],
								     wsig_off(r, r->rank, 0), 1,
								     NULL, 0, 0 },
					   T_OUT, &tk));
		W_OK(r, dvx_p2p_wait_local(&r->t, &tk, T_OUT, &rep));
	}
	for (p = 0; p < n; p++) {
		if (p == r->rank || !c->link[r->rank][p])
			continue;
		W_OK(r, dvx_p2p_wait_signal(&r->t, &r->sig_l, wsig_off(r, p, 0), DVX_CMP_GE, 1,
					    T_OUT, &rep));
		W_CHECK(r, check_slot(r, p, 0, 4096, &bad) == 0, "from %d: byte %llu", p,
			(unsigned long long)bad);
	}
}

static void test_subset(void **s)
{
	static const int pairs[][2] = { { 0, 1 }, { 2, 3 }, { 0, 3 }, { 1, 4 }, { 4, 2 } };
	struct world_cfg c;
	size_t i;

	(void)s;
	world_cfg_default(&c);
	c.nranks = 6;		/* rank 5 has no lanes at all, yet joins the exchange */
	c.subset = 1;
	for (i = 0; i < DVX_ARRAY_SIZE(pairs); i++) {
		c.link[pairs[i][0]][pairs[i][1]] = 1;
		c.link[pairs[i][1]][pairs[i][0]] = 1;
	}
	assert_int_equal(world_run(&c, body_subset, NULL), 0);
	/* lists that are not sorted, name this rank or a rank out of range */
	{
		static const int32_t bad[][3] = { { 2, 1, 3 }, { 1, 0, 3 }, { 1, 2, 9 }, { 1, 1, 2 } };
		struct dvx_p2p_cfg pc;
		struct dvx_mem_req a, b;
		struct dvx_nic fake;

		memset(&pc, 0, sizeof(pc));
		memset(&fake, 0, sizeof(fake));
		pc.rank = 0;
		pc.nranks = 4;
		pc.nnics = 1;
		pc.nics[0] = &fake;
		pc.qps_per_nic = 1;
		pc.sq_depth = 64;
		pc.npeers = 3;
		pc.peers = bad[0];
		for (i = 0; i < DVX_ARRAY_SIZE(bad); i++) {
			pc.peers = bad[i];
			assert_int_equal(dvx_p2p_mem_req(&pc, &a, &b), -EINVAL);
			/* the cause, in the first NIC's diagnostic */
			assert_int_equal(fake.hal.diag.src, DVX_DIAG_ARG);
			assert_string_equal(fake.hal.diag.op, "dvx_p2p_mem_req");
			assert_non_null(strstr(fake.hal.diag.msg, "other ranks, ascending"));
		}
		pc.peers = &bad[2][0];
		pc.npeers = 2;		/* { 1, 2 } */
		assert_int_equal(dvx_p2p_mem_req(&pc, &a, &b), 0);
		pc.npeers = 4;		/* more than the other ranks */
		assert_int_equal(dvx_p2p_mem_req(&pc, &a, &b), -EINVAL);
		assert_non_null(strstr(fake.hal.diag.msg, "npeers 4"));
		pc.npeers = 2;
		pc.sq_depth = 96;
		assert_int_equal(dvx_p2p_mem_req(&pc, &a, &b), -EINVAL);
		assert_non_null(strstr(fake.hal.diag.msg, "sq_depth 96"));
		pc.sq_depth = 64;
		pc.qps_per_nic = 0;
		assert_int_equal(dvx_p2p_mem_req(&pc, &a, &b), -EINVAL);
		assert_non_null(strstr(fake.hal.diag.msg, "qps_per_nic 0"));
	}
	/* everybody linked through the list: the same as no list */
	memset(c.link, 1, sizeof(c.link));
	c.nranks = 3;
	assert_int_equal(world_run(&c, body_subset, NULL), 0);
}

static void test_stress_1000(void **s)
{
	(void)s;
	run_rounds(2, 4096, 1000, 1);
}

static void test_fenced_and_local_pair(void **s)
{
	struct world_cfg c;
	struct rounds_arg a = { .len = 4096, .rounds = 20, .scrub = 1, .fenced = 1 };

	(void)s;
	world_cfg_default(&c);
	c.nranks = 3;
	c.local_pair = 1;	/* companions with a partner QP */
	c.ib = 1;		/* and IB ports (LID path) */
	assert_int_equal(world_run(&c, body_rounds, &a), 0);
}

/* ---- several slots with distinct values; reset_signal; cmp modes ---- */

/* slots' phase values: four slots with distinct values (odd ones fenced), each waited
 * for with every comparison */
static void slots_values(struct wrank *r)
{
	int peer = r->rank ^ 1;
	uint32_t sl;
	struct dvx_p2p_wait_report rep;

	for (sl = 0; sl < 4; sl++)
		W_OK(r, dvx_p2p_signal(&r->t, peer, sl,
				       &(struct dvx_p2p_notify){
					       &r->sig_r[peer], wsig_off(r, r->rank, sl),
					       (sl + 1) * 10 + (uint64_t)r->rank, NULL, 0,
					       sl & 1 ? DVX_P2P_FENCE : 0 },
				       T_OUT, NULL));
	for (sl = 0; sl < 4; sl++) {
		uint64_t want = (sl + 1) * 10 + (uint64_t)peer;

		W_OK(r, dvx_p2p_wait_signal(&r->t, &r->sig_l, wsig_off(r, peer, sl), DVX_CMP_EQ,
					    want, T_OUT, &rep));
		W_CHECK(r, dvx_p2p_wait_signal(&r->t, &r->sig_l, wsig_off(r, peer, sl),
					       DVX_CMP_GT, want, 0, &rep) == -ETIMEDOUT &&
				   rep.observed == want && rep.expected == want &&
				   rep.cmp == DVX_CMP_GT,
			   "GT must time out and report observed %llu",
			   (unsigned long long)rep.observed);
		W_OK(r, dvx_p2p_wait_signal(&r->t, &r->sig_l, wsig_off(r, peer, sl), DVX_CMP_LE,
					    want, 0, NULL));
		W_OK(r, dvx_p2p_wait_signal(&r->t, &r->sig_l, wsig_off(r, peer, sl), DVX_CMP_LT,
					    want + 1, 0, NULL));
		W_OK(r, dvx_p2p_wait_signal(&r->t, &r->sig_l, wsig_off(r, peer, sl), DVX_CMP_NE,
					    0, 0, NULL));
		W_OK(r, dvx_p2p_wait_signal(&r->t, &r->sig_l, wsig_off(r, peer, sl), DVX_CMP_GE,
					    want, 0, NULL));
	}
}

/* slots' phase reset: the peer's slot 2 through the network, a timed-out wait waited
 * again, the local reset */
static void slots_reset(struct wrank *r)
{
	int peer = r->rank ^ 1;
	struct dvx_p2p_wait_report rep;

	W_OK(r, dvx_bootstrap_barrier(&r->bs, T_OUT));
	/* reset the peer's slot 2 (what I raised there) through the network */
	{
		int e = dvx_p2p_reset_signal(&r->t, peer, 0, &r->sig_r[peer],
					     wsig_off(r, r->rank, 2), T_OUT);
		struct dvx_p2p_lane_health h;

		dvx_p2p_lane_health(&r->t, peer, 0, &h);
		W_CHECK(r, e == 0, "reset_signal = %d: lane state %u err %d synd 0x%x vendor 0x%x op 0x%x idx %u",
			e, h.state, h.err, h.syndrome, h.vendor_syndrome, h.wqe_opcode, h.wqe_index);
	}
	W_OK(r, dvx_bootstrap_barrier(&r->bs, T_OUT));
	W_CHECK(r, dvx_p2p_read_signal(&r->sig_l, wsig_off(r, peer, 2)) == 0,
		"reset_signal did not clear the slot");
	W_CHECK(r, dvx_p2p_read_signal(&r->sig_l, wsig_off(r, peer, 3)) == 40 + (uint64_t)peer,
		"reset_signal touched a neighbour");
	/* a timed-out wait can be waited again */
	W_CHECK(r, dvx_p2p_wait_signal(&r->t, &r->sig_l, wsig_off(r, peer, 2), DVX_CMP_GE, 7,
				       50 * W_MS, &rep) == -ETIMEDOUT && rep.observed == 0 &&
			   rep.expected == 7,
		"wait for a value nobody sends must time out");
	W_OK(r, dvx_bootstrap_barrier(&r->bs, T_OUT));
	W_OK(r, dvx_p2p_signal(&r->t, peer, 0,
			       &(struct dvx_p2p_notify){ &r->sig_r[peer], wsig_off(r, r->rank, 2),
							 7, NULL, 0, 0 },
			       T_OUT, NULL));
	W_OK(r, dvx_p2p_wait_signal(&r->t, &r->sig_l, wsig_off(r, peer, 2), DVX_CMP_GE, 7, T_OUT,
				    &rep));
	W_OK(r, dvx_bootstrap_barrier(&r->bs, T_OUT));
	W_OK(r, dvx_p2p_reset_local_signal(&r->sig_l, wsig_off(r, peer, 2)));
	W_CHECK(r, dvx_p2p_read_signal(&r->sig_l, wsig_off(r, peer, 2)) == 0, "local reset");
}

/* slots' phase refusals: bad arguments change nothing and name their cause */
static void slots_refusals(struct wrank *r)
{
	int peer = r->rank ^ 1;

	/* bad arguments change nothing */
	W_CHECK(r,
		dvx_p2p_signal(&r->t, r->rank, 0,
			       &(struct dvx_p2p_notify){ &r->sig_r[peer], 0, 1, NULL, 0, 0 }, T_OUT,
			       NULL) == -EINVAL,
		"signal to self");
	W_CHECK(r, strstr(r->nic.hal.diag.msg, "no lanes to it"), "diag: %s", r->nic.hal.diag.msg);
	W_CHECK(r,
		dvx_p2p_signal(&r->t, peer, 0,
			       &(struct dvx_p2p_notify){ &r->sig_r[peer], 4, 1, NULL, 0, 0 }, T_OUT,
			       NULL) == -EINVAL,
		"misaligned signal");
	W_CHECK(r, strstr(r->nic.hal.diag.msg, "not 8-byte aligned"), "diag: %s", r->nic.hal.diag.msg);
	W_CHECK(r,
		dvx_p2p_put(&r->t, peer, 0,
			    &(struct dvx_p2p_xfer){ &r->data_l, 0, &r->data_r[peer], 0, 0 }, T_OUT,
			    NULL) == -EINVAL,
		"zero-length put");
	W_CHECK(r, strstr(r->nic.hal.diag.msg, "len 0"), "diag: %s", r->nic.hal.diag.msg);
	W_CHECK(r,
		dvx_p2p_put(&r->t, peer, 0,
			    &(struct dvx_p2p_xfer){ &r->data_l, 0, &r->data_r[peer],
						    r->data_r[peer].len, 1 },
			    T_OUT, NULL) == -EINVAL,
		"out-of-bounds put");
	W_CHECK(r, strstr(r->nic.hal.diag.msg, "outside the destination"), "diag: %s", r->nic.hal.diag.msg);
	W_CHECK(r, dvx_p2p_wait_signal(&r->t, &r->sig_l, 0, (enum dvx_p2p_cmp)9, 0, 0, NULL) ==
			   -EINVAL, "bad cmp");
}

/* slots' phase as data: the one entry dvx_p2p_post() and the shapes of its wrappers */
static void slots_as_data(struct wrank *r)
{
	int peer = r->rank ^ 1;

	/* operations as data: the one entry and the shapes of its wrappers */
	{
		struct dvx_p2p_xfer x = { &r->data_l, 0, &r->data_r[peer], 0, 8 };
		struct dvx_p2p_xfer half = { &r->data_l, 0, NULL, 0, 8 };
		struct dvx_p2p_notify sig = { &r->sig_r[peer], wsig_off(r, r->rank, 3), 1, NULL, 0,
					      0 };
		struct dvx_p2p_notify both = sig, reset = sig, flags = sig;
		uint64_t before = dvx_p2p_read_signal(&r->sig_l, wsig_off(r, peer, 3));

		both.ctr = &r->ctr_l;
		reset.flags = DVX_P2P_RESET;
		flags.flags = 1u << 7;
		W_CHECK(r, dvx_p2p_post(&r->t, peer, 0, NULL, NULL, T_OUT, NULL) == -EINVAL,
			"post of nothing");
		W_CHECK(r, dvx_p2p_post(&r->t, peer, 0, &half, NULL, T_OUT, NULL) == -EINVAL,
			"data without a destination");
		W_CHECK(r, dvx_p2p_post(&r->t, peer, 0, NULL, &reset, T_OUT, NULL) == -EINVAL,
			"DVX_P2P_RESET is dvx_p2p_reset_signal()'s");
		W_CHECK(r, dvx_p2p_post(&r->t, peer, 0, &x, &flags, T_OUT, NULL) == -EINVAL,
			"unknown flag");
		W_CHECK(r, dvx_p2p_put_signal(&r->t, peer, 0, &x, NULL, T_OUT, NULL) == -EINVAL,
			"put_signal without a signal");
		W_CHECK(r, dvx_p2p_put_signal(&r->t, peer, 0, &x, &both, T_OUT, NULL) == -EINVAL,
			"put_signal with a counter");
		W_CHECK(r, dvx_p2p_signal(&r->t, peer, 0, &both, T_OUT, NULL) == -EINVAL,
			"signal with a counter");
		W_CHECK(r, dvx_p2p_put_counter(&r->t, peer, 0, &x, &sig, T_OUT, NULL) == -EINVAL,
			"put_counter without a counter");
		W_CHECK(r, dvx_p2p_wait_counter(&r->t, peer, 0, NULL, DVX_CMP_GE, 0, 0, NULL) ==
				   -EINVAL, "wait_counter without a notification");
		W_OK(r, dvx_bootstrap_barrier(&r->bs, T_OUT));
		W_CHECK(r, dvx_p2p_read_signal(&r->sig_l, wsig_off(r, peer, 3)) == before,
			"a refused post changed a signal");
		W_OK(r, dvx_bootstrap_barrier(&r->bs, T_OUT));	/* both read before either posts */
		/* the one entry posts what the wrappers post: a put and a signal */
		W_OK(r, dvx_p2p_post(&r->t, peer, 0, &x, &sig, T_OUT, NULL));
		W_OK(r, dvx_p2p_wait_signal(&r->t, &r->sig_l, wsig_off(r, peer, 3), DVX_CMP_EQ,
					    before + 1, T_OUT, NULL));
		W_OK(r, dvx_bootstrap_barrier(&r->bs, T_OUT));
	}
}

/* several slots with distinct values, reset_signal, the comparisons, in phases */
static void body_slots(struct wrank *r)
{
	static void (*const phase[])(struct wrank *) = {
		slots_values, slots_reset, slots_refusals, slots_as_data,
	};
	size_t k;

	for (k = 0; k < sizeof(phase) / sizeof(phase[0]) && !r->fail_line; k++)
		phase[k](r);
}

static void test_slots_reset_cmp(void **s)
{
	struct world_cfg c;

	(void)s;
	world_cfg_default(&c);
	c.qps_per_nic = 2;	/* channels 0..3 map onto two lanes */
	assert_int_equal(world_run(&c, body_slots, NULL), 0);
}

/* ---- counters: exactly once per put, never before the data is there ---- */

#define CTR_PUTS 200
#define CTR_CHUNK 256

static void body_counter(struct wrank *r)
{
	int peer = r->rank ^ 1;
	struct world *w = r->w;
	const uint8_t *remote = w->r[peer].data + wrecv_off(&w->r[peer], r->rank);
	uint64_t ctroff = wsig_off(r, peer, 0), seen = 0, c2off = wsig_off(r, peer, 1);
	uint32_t i;
	struct dvx_p2p_ticket tk;

	for (i = 0; i < CTR_PUTS; i++) {
		uint64_t off = (uint64_t)i * CTR_CHUNK, j;
		uint8_t *src = r->data + wsend_off(r, peer) + off;

		for (j = 0; j < CTR_CHUNK; j++)
			src[j] = wpat(r->rank, peer, i, j);
		W_OK(r, dvx_p2p_put_counter(&r->t, peer, 0,
					    &(struct dvx_p2p_xfer){
						    &r->data_l, wsend_off(r, peer) + off,
						    &r->data_r[peer], wrecv_off(r, r->rank) + off,
						    CTR_CHUNK },
					    &(struct dvx_p2p_notify){ NULL, 0, 0, &r->ctr_l, ctroff,
								      0 },
					    T_OUT, &tk));
		/* whenever the counter says c, the first c puts' data is at the peer */
		for (;;) {
			uint64_t c = dvx_p2p_read_counter(&r->ctr_l, ctroff);

			for (; seen < c; seen++) {
				const uint8_t *d = remote + seen * CTR_CHUNK;

				for (j = 0; j < CTR_CHUNK; j++)
					W_CHECK(r, d[j] == wpat(r->rank, peer, (uint32_t)seen, j),
						"counter %llu before put %llu's data",
						(unsigned long long)c, (unsigned long long)seen);
			}
			if (i % 16 != 15 || c > i)
				break;
			W_OK(r, dvx_p2p_wait_counter(&r->t, peer, 0,
						     &(struct dvx_p2p_notify){ .ctr = &r->ctr_l,
									       .ctroff = ctroff },
						     DVX_CMP_GT, i, T_OUT, NULL));
		}
	}
	W_OK(r, dvx_p2p_wait_counter(&r->t, peer, 0,
				     &(struct dvx_p2p_notify){ .ctr = &r->ctr_l, .ctroff = ctroff },
				     DVX_CMP_EQ, CTR_PUTS, T_OUT, NULL));
	/* signal_counter and put_signal_counter: one each */
	W_OK(r, dvx_p2p_signal_counter(&r->t, peer, 0,
				       &(struct dvx_p2p_notify){ &r->sig_r[peer],
								 wsig_off(r, r->rank, 3), 1,
								 &r->ctr_l, c2off, 0 },
				       T_OUT, NULL));
	W_OK(r, dvx_p2p_put_signal_counter(&r->t, peer, 0,
					   &(struct dvx_p2p_xfer){ &r->data_l, wsend_off(r, peer),
								   &r->data_r[peer],
								   wrecv_off(r, r->rank), 8 },
					   &(struct dvx_p2p_notify){
						   &r->sig_r[peer], wsig_off(r, r->rank, 3), 1,
						   &r->ctr_l, c2off, DVX_P2P_FENCE },
					   T_OUT, NULL));
	W_OK(r, dvx_p2p_wait_counter(&r->t, peer, 0,
				     &(struct dvx_p2p_notify){ .ctr = &r->ctr_l, .ctroff = c2off },
				     DVX_CMP_EQ, 2, T_OUT, NULL));
	W_OK(r, dvx_p2p_wait_signal(&r->t, &r->sig_l, wsig_off(r, peer, 3), DVX_CMP_EQ, 2, T_OUT,
				    NULL));
	W_OK(r, dvx_p2p_flush(&r->t, 0, T_OUT, NULL));
	/* exactly once: nothing more arrives */
	W_CHECK(r, dvx_p2p_read_counter(&r->ctr_l, ctroff) == CTR_PUTS &&
			   dvx_p2p_read_counter(&r->ctr_l, c2off) == 2,
		"counters %llu/%llu after flush",
		(unsigned long long)dvx_p2p_read_counter(&r->ctr_l, ctroff),
		(unsigned long long)dvx_p2p_read_counter(&r->ctr_l, c2off));
}

static void test_counters(void **s)
{
	struct world_cfg c;

	(void)s;
	world_cfg_default(&c);
	if (world_mode(&c) != WORLD_THREADS)
		skip();	/* a rank checks the peer's memory against its counter: one process */
	c.slot_bytes = CTR_PUTS * CTR_CHUNK;
	c.sq_depth = 64;	/* the main ring wraps several times */
	c.comp_depth = 16;	/* and the companion's far more */
	assert_int_equal(world_run(&c, body_counter, NULL), 0);
	c.local_pair = 1;
	c.no_loopback = 1;
	assert_int_equal(world_run(&c, body_counter, NULL), 0);
}

/* ---- tickets and rings wrapping with several posting threads per lane ---- */

#define POSTERS 4
#define POSTS 1000

struct poster {
	struct wrank *r;
	int id;
	pthread_t th;
	int err;
	int line;
};

static void *poster_thread(void *arg)
{
	struct poster *ps = arg;
	struct wrank *r = ps->r;
	int peer = r->rank ^ 1;
	struct dvx_p2p_ticket first, tk;
	int i, err;

	for (i = 0; i < POSTS; i++) {
		uint64_t off = ((uint64_t)ps->id * POSTS + (uint64_t)i) * 8;

		err = dvx_p2p_put_signal(&r->t, peer, 0,
					 &(struct dvx_p2p_xfer){
						 &r->data_l, wsend_off(r, peer) + off,
						 &r->data_r[peer], wrecv_off(r, r->rank) + off, 8 },
					 &(struct dvx_p2p_notify){ &r->sig_r[peer],
								   wsig_off(r, r->rank, 0), 1, NULL,
								   0, 0 },
					 T_OUT, &tk);
		if (err) {
			ps->err = err;
			ps->line = __LINE__;
			return NULL;
		}
		if (i == 0)
			first = tk;
	}
	/* the first ticket is many rings old by now: answered from the watermark */
	err = dvx_p2p_wait_local(&r->t, &tk, T_OUT, NULL);
	if (!err)
		err = dvx_p2p_wait_local(&r->t, &first, 0, NULL);
	if (err) {
		ps->err = err;
		ps->line = __LINE__;
	}
	return NULL;
}

static void body_wrap(struct wrank *r)
{
	struct poster ps[POSTERS];
	int peer = r->rank ^ 1, i;
	uint64_t *src = (uint64_t *)(void *)(r->data + wsend_off(r, peer));
	const uint64_t *dst = (const uint64_t *)(const void *)wrecv(r, peer);
	struct dvx_p2p_lane_health h;

	for (i = 0; i < POSTERS * POSTS; i++)
		src[i] = ((uint64_t)r->rank << 32) | (uint64_t)i;
	for (i = 0; i < POSTERS; i++) {
		ps[i].r = r;
		ps[i].id = i;
		ps[i].err = 0;
		W_CHECK(r, pthread_create(&ps[i].th, NULL, poster_thread, &ps[i]) == 0, "thread");
	}
	for (i = 0; i < POSTERS; i++)
		pthread_join(ps[i].th, NULL);
	for (i = 0; i < POSTERS; i++) {
		if (ps[i].err) {
			dvx_p2p_lane_health(&r->t, peer, 0, &h);
			wfail(r, __LINE__, ps[i].err,
			      "poster %d failed at line %d: %d; lane state %u err %d synd 0x%x "
			      "vendor 0x%x op 0x%x idx %u completed %llu in flight %llu",
			      i, ps[i].line, ps[i].err, h.state, h.err, h.syndrome,
			      h.vendor_syndrome, h.wqe_opcode, h.wqe_index,
			      (unsigned long long)h.completed, (unsigned long long)h.in_flight);
			return;
		}
	}
	W_OK(r, dvx_p2p_wait_signal(&r->t, &r->sig_l, wsig_off(r, peer, 0), DVX_CMP_EQ,
				    POSTERS * POSTS, T_OUT, NULL));
	for (i = 0; i < POSTERS * POSTS; i++)
		W_CHECK(r, dst[i] == (((uint64_t)peer << 32) | (uint64_t)i), "word %d wrong", i);
	W_OK(r, dvx_p2p_flush(&r->t, 0, T_OUT, NULL));
	W_OK(r, dvx_p2p_lane_health(&r->t, peer, 0, &h));
	W_CHECK(r, h.state == DVX_P2P_Q_OK && h.in_flight == 0 &&
			   h.completed == 2ull * POSTERS * POSTS,
		"health: state %u in flight %llu completed %llu", h.state,
		(unsigned long long)h.in_flight, (unsigned long long)h.completed);
}

static void test_wrap_threads(void **s)
{
	struct world_cfg c;

	(void)s;
	world_cfg_default(&c);
	c.sq_depth = 32;	/* every poster waits for room: the ring wraps 125 times */
	c.slot_bytes = POSTERS * POSTS * 8;
	assert_int_equal(world_run(&c, body_wrap, NULL), 0);
	c.sq_depth = 4096;	/* thousands of operations in flight at once */
	assert_int_equal(world_run(&c, body_wrap, NULL), 0);
}

/* ---- recovery of a failed lane ---- */

/* put_signal (round @round, signal slot 3) both ways on @ch between ranks 0 and 1 and
 * verify the data; then a put_counter each way and its counter */
static void recovered_traffic(struct wrank *r, uint32_t ch, uint32_t round, uint64_t sig_want,
			      uint64_t ctr_want, struct dvx_p2p_ticket *tk)
{
	int peer = r->rank ^ 1;
	uint64_t bad;

	fill(r, peer, round, 1024);
	W_OK(r,
	     dvx_p2p_put_signal(&r->t, peer, ch,
				&(struct dvx_p2p_xfer){ &r->data_l, wsend_off(r, peer),
							&r->data_r[peer], wrecv_off(r, r->rank),
							1024 },
				&(struct dvx_p2p_notify){ &r->sig_r[peer], wsig_off(r, r->rank, 3),
							  1, NULL, 0, 0 },
				T_OUT, tk));
	W_OK(r, dvx_p2p_wait_local(&r->t, tk, T_OUT, NULL));
	W_OK(r, dvx_p2p_wait_signal(&r->t, &r->sig_l, wsig_off(r, peer, 3), DVX_CMP_EQ, sig_want,
				    T_OUT, NULL));
	W_CHECK(r, check_slot(r, peer, round, 1024, &bad) == 0,
		"data from %d after recovery: byte %llu wrong", peer, (unsigned long long)bad);
	W_OK(r, dvx_p2p_put_counter(&r->t, peer, ch,
				    &(struct dvx_p2p_xfer){ &r->data_l, wsend_off(r, peer),
							    &r->data_r[peer],
							    wrecv_off(r, r->rank) + 2048, 512 },
				    &(struct dvx_p2p_notify){ NULL, 0, 0, &r->ctr_l,
							      wsig_off(r, peer, 0), 0 },
				    T_OUT, NULL));
	W_OK(r, dvx_p2p_wait_counter(&r->t, peer, ch,
				     &(struct dvx_p2p_notify){ .ctr = &r->ctr_l,
							       .ctroff = wsig_off(r, peer, 0) },
				     DVX_CMP_EQ, ctr_want, T_OUT, NULL));
	W_OK(r, dvx_p2p_flush(&r->t, ch, T_OUT, NULL));
	/* nobody's next round overwrites what the peer still checks */
	W_OK(r, dvx_bootstrap_barrier(&r->bs, T_OUT));
}

static void recover_after_bad_rkey(struct wrank *r, const struct dvx_p2p_ticket *good,
				   const struct dvx_p2p_ticket *failed)
{
	struct dvx_p2p_lane_health h;
	struct dvx_p2p_ticket tk;
	int peer = r->rank ^ 1;

	/* rank 0 alone: the peer never comes, the lane stays failed */
	if (r->rank == 0) {
		W_CHECK(r, dvx_p2p_lane_recover(&r->t, 1, 0, 50 * W_MS) == -ETIMEDOUT,
			"recover without the peer must time out");
		W_OK(r, dvx_p2p_lane_health(&r->t, 1, 0, &h));
		W_CHECK(r, h.state == DVX_P2P_Q_FAILED && h.err == -EPERM && h.recoveries == 0,
			"after a timed-out recover: state %u err %d recoveries %u", h.state, h.err,
			h.recoveries);
		W_CHECK(r, dvx_p2p_lane_recover(&r->t, 0, 0, T_OUT) == -EINVAL, "recover to self");
		W_CHECK(r, dvx_p2p_lane_recover(&r->t, 1, r->t.nlanes, T_OUT) == -EINVAL,
			"recover of a lane that does not exist");
	}
	W_OK(r, dvx_bootstrap_barrier(&r->bs, T_OUT));
	/* 0 and 2: a healthy lane, a no-op on both ends */
	if (r->rank != 1) {
		W_OK(r, dvx_p2p_lane_recover(&r->t, r->rank ? 0 : 2, 0, T_OUT));
		W_OK(r, dvx_p2p_lane_health(&r->t, r->rank ? 0 : 2, 0, &h));
		W_CHECK(r, h.state == DVX_P2P_Q_OK && h.recoveries == 0, "healthy lane touched");
	}
	if (r->rank == 2) {
		/* the barriers of the two rounds below */
		W_OK(r, dvx_bootstrap_barrier(&r->bs, T_OUT));
		W_OK(r, dvx_bootstrap_barrier(&r->bs, T_OUT));
		r->no_final_flush = 0;
		return;
	}
	/* both ends of the failed lane (rank 1's side had not failed) */
	W_OK(r, dvx_p2p_lane_recover(&r->t, peer, 0, T_OUT));
	W_OK(r, dvx_p2p_lane_health(&r->t, peer, 0, &h));
	W_CHECK(r, h.state == DVX_P2P_Q_OK && h.comp_state == DVX_P2P_Q_OK && h.err == 0 &&
			   h.recoveries == 1 && h.last_err == -EPERM && h.in_flight == 0,
		"health after recovery: state %u/%u err %d recoveries %u last_err %d", h.state,
		h.comp_state, h.err, h.recoveries, h.last_err);
	if (r->rank == 0) {
		/* the old tickets: the failed one keeps its error, the completed one 0 */
		W_CHECK(r, dvx_p2p_wait_local(&r->t, failed, 0, NULL) == -EPERM,
			"failed ticket after recovery");
		W_OK(r, dvx_p2p_wait_local(&r->t, good, 0, NULL));
	}
	recovered_traffic(r, 0, 11, 1, 1, &tk);
	if (r->rank == 0)
		W_CHECK(r, tk.idx >> 16 == 1 && (tk.idx & 0xffff) == 1,
			"first ticket after recovery is %llu", (unsigned long long)tk.idx);
	recovered_traffic(r, 0, 12, 2, 2, &tk);
	if (r->rank == 0) {
		W_CHECK(r, dvx_p2p_wait_local(&r->t, failed, 0, NULL) == -EPERM, "failed ticket");
		W_OK(r, dvx_p2p_wait_local(&r->t, good, 0, NULL));
	}
	/* a healthy lane: a no-op on both ends */
	W_OK(r, dvx_p2p_lane_recover(&r->t, peer, 1, T_OUT));
	W_OK(r, dvx_p2p_lane_health(&r->t, peer, 1, &h));
	W_CHECK(r, h.state == DVX_P2P_Q_OK && h.recoveries == 0, "healthy lane touched");
	r->no_final_flush = 0;	/* every lane is healthy again */
}

/* retry exhausted: the port of rank 1 goes down while both post on lane 0 */
static void body_port_down(struct wrank *r)
{
	struct dvx_p2p_ticket before, lost, tk;
	struct dvx_p2p_lane_health h;
	int peer = r->rank ^ 1, e;

	recovered_traffic(r, 0, 1, 1, 1, &before);
	if (r->rank == 0)
		W_OK(r, dvx_sim_set_port(wfab(r), wnic_index(&r->w->r[1]), 1, 0));
	W_OK(r, dvx_bootstrap_barrier(&r->bs, T_OUT));
	fill(r, peer, 2, 1024);
	W_OK(r, dvx_p2p_put(&r->t, peer, 0,
			    &(struct dvx_p2p_xfer){ &r->data_l, wsend_off(r, peer),
						    &r->data_r[peer], wrecv_off(r, r->rank), 1024 },
			    T_OUT, &lost));
	e = dvx_p2p_wait_local(&r->t, &lost, T_OUT, NULL);
	W_CHECK(r, e == -EHOSTUNREACH, "put with the port down: %d", e);
	W_OK(r, dvx_bootstrap_barrier(&r->bs, T_OUT));
	if (r->rank == 0)
		W_OK(r, dvx_sim_set_port(wfab(r), wnic_index(&r->w->r[1]), 1, 1));
	W_OK(r, dvx_bootstrap_barrier(&r->bs, T_OUT));
	W_OK(r, dvx_p2p_lane_recover(&r->t, peer, 0, T_OUT));
	W_OK(r, dvx_p2p_lane_health(&r->t, peer, 0, &h));
	W_CHECK(r, h.state == DVX_P2P_Q_OK && h.recoveries == 1 && h.last_err == -EHOSTUNREACH,
		"health: state %u recoveries %u last_err %d", h.state, h.recoveries, h.last_err);
	W_CHECK(r, dvx_p2p_wait_local(&r->t, &lost, 0, NULL) == -EHOSTUNREACH, "lost ticket");
	W_OK(r, dvx_p2p_wait_local(&r->t, &before, 0, NULL));
	recovered_traffic(r, 0, 3, 2, 2, &tk);
	W_CHECK(r, tk.idx > lost.idx && (tk.idx & 0xffff) == 1, "ticket %llu after recovery",
		(unsigned long long)tk.idx);
	/* a second failure and recovery of the same lane */
	if (r->rank == 0)
		W_OK(r, dvx_sim_set_port(wfab(r), wnic_index(&r->w->r[1]), 1, 0));
	W_OK(r, dvx_bootstrap_barrier(&r->bs, T_OUT));
	if (r->rank == 1) {
		W_OK(r, dvx_p2p_put(&r->t, peer, 0,
				    &(struct dvx_p2p_xfer){ &r->data_l, wsend_off(r, peer),
							    &r->data_r[peer], wrecv_off(r, r->rank),
							    64 },
				    T_OUT, &lost));
		W_CHECK(r, dvx_p2p_wait_local(&r->t, &lost, T_OUT, NULL) == -EHOSTUNREACH,
			"second failure");
	}
	W_OK(r, dvx_bootstrap_barrier(&r->bs, T_OUT));
	if (r->rank == 0)
		W_OK(r, dvx_sim_set_port(wfab(r), wnic_index(&r->w->r[1]), 1, 1));
	W_OK(r, dvx_bootstrap_barrier(&r->bs, T_OUT));
	W_OK(r, dvx_p2p_lane_recover(&r->t, peer, 0, T_OUT));
	W_OK(r, dvx_p2p_lane_health(&r->t, peer, 0, &h));
	W_CHECK(r, h.state == DVX_P2P_Q_OK && h.recoveries == 2, "second recovery: %u",
		h.recoveries);
	W_OK(r, dvx_p2p_wait_local(&r->t, &before, 0, NULL));
	if (r->rank == 1)
		W_CHECK(r, dvx_p2p_wait_local(&r->t, &lost, 0, NULL) == -EHOSTUNREACH,
			"second lost ticket");
	recovered_traffic(r, 0, 4, 3, 3, &tk);
}

static void test_recover_port_down(void **s)
{
	struct world_cfg c;

	(void)s;
	world_cfg_default(&c);
	assert_int_equal(world_run(&c, body_port_down, NULL), 0);
	c.local_pair = 1;	/* companions with a partner QP */
	c.progress_thread = 0;	/* ranks step the sim */
	assert_int_equal(world_run(&c, body_port_down, NULL), 0);
}

/*
 * a lane failed while its poster polled nothing: rank 0 posts UP_GOOD put_signals, a
 * put under a wrong key and UP_AFTER more, and waits for none of them, so their CQEs
 * are still in its CQ when both ends recover. Rank 1's responder is out of RTS and
 * says so; rank 0 marks its queue failed for that word before its drain consumes the
 * good CQEs: those WQEs were executed at the peer and their tickets must answer 0
 * (answering the error would have the caller post again what the peer already has),
 * the bad put's and those after it the lane's error; the peer's signal counts exactly
 * the good ones.
 */
#define UP_GOOD 8
#define UP_AFTER 4
#define UP_SIG 4	/* the signal slot */

static void body_unpolled(struct wrank *r)
{
	struct dvx_p2p_ticket good[UP_GOOD], after[UP_AFTER], bad_tk, tk;
	struct dvx_p2p_lane_health h;
	int peer = r->rank ^ 1, i, e;

	if (r->rank == 0) {
		struct dvx_p2p_rbuf bad = r->data_r[1];
		struct dvx_p2p_xfer x = { &r->data_l, wsend_off(r, 1), &r->data_r[1],
					  wrecv_off(r, 0), 256 };
		struct dvx_p2p_notify n = { &r->sig_r[1], wsig_off(r, 0, UP_SIG), 1, NULL, 0, 0 };

		bad.rkey[0] ^= 0x00a5a500u;	/* the responder refuses the key */
		fill(r, 1, 21, 256);
		for (i = 0; i < UP_GOOD; i++)
			W_OK(r, dvx_p2p_put_signal(&r->t, 1, 0, &x, &n, T_OUT, &good[i]));
		W_OK(r, dvx_p2p_put(&r->t, 1, 0,
				    &(struct dvx_p2p_xfer){ &r->data_l, wsend_off(r, 1), &bad,
							    wrecv_off(r, 0), 64 },
				    T_OUT, &bad_tk));
		for (i = 0; i < UP_AFTER; i++)
			W_OK(r, dvx_p2p_put_signal(&r->t, 1, 0, &x, &n, T_OUT, &after[i]));
	} else {
		/* the good ones land; the bad one stops the rest */
		W_OK(r, dvx_p2p_wait_signal(&r->t, &r->sig_l, wsig_off(r, 0, UP_SIG), DVX_CMP_GE,
					    UP_GOOD, T_OUT, NULL));
	}
	W_OK(r, dvx_bootstrap_barrier(&r->bs, T_OUT));
	W_OK(r, dvx_p2p_lane_recover(&r->t, peer, 0, T_OUT));
	W_OK(r, dvx_p2p_lane_health(&r->t, peer, 0, &h));
	W_CHECK(r, h.state == DVX_P2P_Q_OK && h.recoveries == 1 && h.last_err < 0,
		"after recovery: state %u recoveries %u last_err %d", h.state, h.recoveries,
		h.last_err);
	if (r->rank == 0) {
		for (i = 0; i < UP_GOOD; i++) {
			e = dvx_p2p_wait_local(&r->t, &good[i], 0, NULL);
			W_CHECK(r, e == 0, "put_signal %d before the bad put: %d", i, e);
		}
		e = dvx_p2p_wait_local(&r->t, &bad_tk, 0, NULL);
		W_CHECK(r, e < 0 && e != -ETIMEDOUT, "the bad put: %d", e);
		for (i = 0; i < UP_AFTER; i++) {
			e = dvx_p2p_wait_local(&r->t, &after[i], 0, NULL);
			W_CHECK(r, e < 0 && e != -ETIMEDOUT, "put_signal %d after the bad put: %d",
				i, e);
		}
	} else {
		W_CHECK(r, r->sig[wsig_off(r, 0, UP_SIG) / 8] == UP_GOOD,
			"the signal: %llu, want %d",
			(unsigned long long)r->sig[wsig_off(r, 0, UP_SIG) / 8], UP_GOOD);
	}
	recovered_traffic(r, 0, 22, 1, 1, &tk);
}

static void test_recover_unpolled(void **s)
{
	struct world_cfg c;

	(void)s;
	world_cfg_default(&c);
	assert_int_equal(world_run(&c, body_unpolled, NULL), 0);
	c.progress_thread = 0;	/* ranks step the sim */
	assert_int_equal(world_run(&c, body_unpolled, NULL), 0);
}

/*
 * The NIC's reason kept: rank 0's put under a wrong key fails at its responder, and
 * rank 0 waits until its NIC has written the error CQE, polls nothing, and recovers.
 * The recovery marks its queue failed for the peer's word before its drain consumes
 * that CQE; the record takes the CQE's errno and syndrome then (not the word's
 * -ECONNRESET), so the bad put's ticket and the lane's last error say why it failed.
 */
static void body_reason_kept(struct wrank *r)
{
	struct dvx_p2p_lane_health h;
	struct dvx_p2p_ticket bad_tk, tk;
	struct dvx_sim_stats st;
	int peer = r->rank ^ 1, e, i;

	if (r->rank == 0) {
		struct dvx_p2p_rbuf bad = r->data_r[1];
		uint64_t before;

		bad.rkey[0] ^= 0x00a5a500u;
		W_OK(r, dvx_sim_get_stats(wfab(r), &st));
		before = st.cqes_written;
		W_OK(r, dvx_p2p_put(&r->t, 1, 0,
				    &(struct dvx_p2p_xfer){ &r->data_l, wsend_off(r, 1), &bad,
							    wrecv_off(r, 0), 64 },
				    T_OUT, &bad_tk));
		/* the only CQE of the fabric now: the bad put's */
		for (i = 0; i < 10000; i++) {
			W_OK(r, dvx_sim_get_stats(wfab(r), &st));
			if (st.cqes_written > before)
				break;
			if (!r->w->cfg.progress_thread)
				dvx_sim_step(wfab(r));
			usleep(100);
		}
		W_CHECK(r, st.cqes_written > before, "no CQE for the bad put");
	}
	W_OK(r, dvx_bootstrap_barrier(&r->bs, T_OUT));
	W_OK(r, dvx_p2p_lane_recover(&r->t, peer, 0, T_OUT));
	W_OK(r, dvx_p2p_lane_health(&r->t, peer, 0, &h));
	if (r->rank == 0) {
		W_CHECK(r, h.state == DVX_P2P_Q_OK && h.recoveries == 1 && h.last_err == -EPERM,
			"after recovery: state %u recoveries %u last_err %d (want -EPERM, the "
			"CQE's)", h.state, h.recoveries, h.last_err);
		e = dvx_p2p_wait_local(&r->t, &bad_tk, 0, NULL);
		W_CHECK(r, e == -EPERM, "the bad put: %d (want -EPERM, the CQE's)", e);
	}
	recovered_traffic(r, 0, 23, 1, 1, &tk);
}

static void test_recover_reason_kept(void **s)
{
	struct world_cfg c;

	(void)s;
	world_cfg_default(&c);
	assert_int_equal(world_run(&c, body_reason_kept, NULL), 0);
	c.progress_thread = 0;
	assert_int_equal(world_run(&c, body_reason_kept, NULL), 0);
}

/* a companion that fails (its loopback fetch-add names a bad rkey) */
static void body_comp_fail(struct wrank *r)
{
	struct dvx_p2p_lane_health h;
	struct dvx_p2p_ticket tk;
	int peer = r->rank ^ 1, e;

	if (r->rank == 0) {
		struct dvx_p2p_lbuf badctr = r->ctr_l;

		badctr.rkey[0] ^= 0x5a5a00;
		W_OK(r, dvx_p2p_put_counter(&r->t, 1, 0,
					    &(struct dvx_p2p_xfer){ &r->data_l, wsend_off(r, 1),
								    &r->data_r[1], wrecv_off(r, 0),
								    64 },
					    &(struct dvx_p2p_notify){ NULL, 0, 0, &badctr,
								      wsig_off(r, 1, 0), 0 },
					    T_OUT, NULL));
		e = dvx_p2p_wait_counter(&r->t, 1, 0,
					 &(struct dvx_p2p_notify){ .ctr = &r->ctr_l,
								   .ctroff = wsig_off(r, 1, 0) },
					 DVX_CMP_GE, 1, T_OUT, NULL);
		W_CHECK(r, e == -EPERM, "counter with a bad rkey: %d", e);
		W_OK(r, dvx_p2p_lane_health(&r->t, 1, 0, &h));
		W_CHECK(r, h.state == DVX_P2P_Q_OK && h.comp_state == DVX_P2P_Q_FAILED,
			"companion failure: state %u/%u", h.state, h.comp_state);
	}
	W_OK(r, dvx_bootstrap_barrier(&r->bs, T_OUT));
	W_OK(r, dvx_p2p_lane_recover(&r->t, peer, 0, T_OUT));
	W_OK(r, dvx_p2p_lane_health(&r->t, peer, 0, &h));
	W_CHECK(r, h.state == DVX_P2P_Q_OK && h.comp_state == DVX_P2P_Q_OK && h.recoveries == 1,
		"after recovery: state %u/%u recoveries %u", h.state, h.comp_state, h.recoveries);
	recovered_traffic(r, 0, 5, 1, 1, &tk);
}

static void test_recover_companion(void **s)
{
	struct world_cfg c;

	(void)s;
	world_cfg_default(&c);
	assert_int_equal(world_run(&c, body_comp_fail, NULL), 0);
	c.local_pair = 1;
	c.no_loopback = 1;
	assert_int_equal(world_run(&c, body_comp_fail, NULL), 0);
}

/*
 * A lane that fails again inside its recovery: rank 0's device reports the main QP
 * out of RTS after the reset (the world's query hook rewrites QUERY_QP's answer). The
 * call must not return 0: -EAGAIN, the lane marked failed; called again on both ends
 * (the device truthful again), it recovers.
 */
static __thread uint32_t relapse_qpn;

static void relapse_hook(const void *in, void *out, size_t outlen)
{
	const uint8_t *b = in;
	uint32_t qpn = (uint32_t)b[9] << 16 | (uint32_t)b[10] << 8 | b[11];
	uint8_t *qpc;

	if (!relapse_qpn || qpn != relapse_qpn ||
	    ((uint32_t)b[0] << 8 | b[1]) != DVX_MLX5_CMD_QUERY_QP ||
	    outlen < DVX_MLX5_QUERY_QP_OUT_BYTES)
		return;
	qpc = DVX_MLX5_QPC_IN((uint8_t *)out);
	if (dvx_mlx5_get(qpc, DVX_MLX5_QPC_STATE) == DVX_MLX5_QP_STATE_RTS)
		dvx_mlx5_set(qpc, DVX_MLX5_QPC_STATE, DVX_MLX5_QP_STATE_ERR);
}

static void body_relapse(struct wrank *r)
{
	struct dvx_p2p_lane_health h;
	struct dvx_p2p_ticket tk;
	int peer = r->rank ^ 1, e;

	r->no_final_flush = 1;
	if (r->rank == 0) {
		struct dvx_p2p_rbuf bad = r->data_r[1];

		bad.rkey[0] ^= 0x5a5a00;
		W_OK(r, dvx_p2p_put(&r->t, 1, 0,
				    &(struct dvx_p2p_xfer){ &r->data_l, wsend_off(r, 1), &bad,
							    wrecv_off(r, 0), 64 },
				    T_OUT, &tk));
		W_CHECK(r, dvx_p2p_wait_local(&r->t, &tk, T_OUT, NULL) == -EPERM, "bad rkey");
		relapse_qpn = r->t.lanes[0].main.d.sq.wq.qpn;
	}
	W_OK(r, dvx_bootstrap_barrier(&r->bs, T_OUT));
	e = dvx_p2p_lane_recover(&r->t, peer, 0, T_OUT);
	W_CHECK(r, e == (r->rank == 0 ? -EAGAIN : 0), "recovery with a relapse: %d", e);
	W_OK(r, dvx_p2p_lane_health(&r->t, peer, 0, &h));
	if (r->rank == 0)
		W_CHECK(r, h.state == DVX_P2P_Q_FAILED && h.err == -EIO && h.recoveries == 1,
			"after the relapse: state %u err %d recoveries %u", h.state, h.err,
			h.recoveries);
	relapse_qpn = 0;
	W_OK(r, dvx_bootstrap_barrier(&r->bs, T_OUT));
	W_OK(r, dvx_p2p_lane_recover(&r->t, peer, 0, T_OUT));
	W_OK(r, dvx_p2p_lane_health(&r->t, peer, 0, &h));
	W_CHECK(r, h.state == DVX_P2P_Q_OK && h.comp_state == DVX_P2P_Q_OK && h.recoveries == 2,
		"second call: state %u/%u recoveries %u", h.state, h.comp_state, h.recoveries);
	recovered_traffic(r, 0, 5, 1, 1, &tk);
	r->no_final_flush = 0;
}

static void test_recover_relapse(void **s)
{
	struct world_cfg c;

	(void)s;
	world_cfg_default(&c);
	c.query_hook = relapse_hook;
	assert_int_equal(world_run(&c, body_relapse, NULL), 0);
}

/*
 * Least privilege (docs/security.md): rank 0 reaches into rank 1's memory with rights
 * rank 1 never gave - a put into its counter words (registered for fetch-add only), a
 * signal fetch-add into its data area (write only), a put into its sink (local write
 * only), a put past the end of its data MR. The software NIC refuses each with a remote
 * access error (-EPERM at rank 0), the bytes there and around stay as they were, and
 * the lane recovers for the next case.
 */
static void body_least_privilege(struct wrank *r)
{
	struct wrank *r1 = &r->w->r[1];
	uint64_t mrlen = r1->data_mr.len, ctr_before[4], *ctr1 = r1->ctr;
	static uint8_t tail_before[4096];
	struct dvx_p2p_ticket tk;
	struct dvx_p2p_lane_health h;
	int peer = r->rank ^ 1, c, e;

	r->no_final_flush = 1;
	for (c = 0; c < 4; c++) {
		if (r->rank == 0) {
			struct dvx_p2p_rbuf rb;
			const char *what = "";

			memcpy(ctr_before, ctr1, sizeof(ctr_before));
			memcpy(tail_before, r1->data + mrlen - sizeof(tail_before),
			       sizeof(tail_before));
			memset(&rb, 0, sizeof(rb));
			switch (c) {
			case 0:		/* a put into counter words: fetch-add only */
				what = "put into counters";
				rb.addr = (uint64_t)(uintptr_t)ctr1;
				rb.len = 32;
				rb.rkey[0] = r1->ctr_mr.rkey;
				e = dvx_p2p_put(&r->t, 1, 0,
						&(struct dvx_p2p_xfer){ &r->data_l, 0, &rb, 0, 32 },
						T_OUT, &tk);
				break;
			case 1:		/* a fetch-add into the data area: write only */
				what = "signal into data";
				e = dvx_p2p_signal(&r->t, 1, 0,
						   &(struct dvx_p2p_notify){
							   &r->data_r[1],
							   mrlen - sizeof(tail_before), 1, NULL, 0,
							   0 },
						   T_OUT, &tk);
				break;
			case 2:		/* a put into the sink: local write only */
				what = "put into the sink";
				rb.addr = 0;
				rb.len = 8;
				rb.rkey[0] = r1->t.lanes[0].sink_lkey;
				e = dvx_p2p_put(&r->t, 1, 0,
						&(struct dvx_p2p_xfer){ &r->data_l, 0, &rb, 0, 8 },
						T_OUT, &tk);
				break;
			default:	/* past the end of the data MR */
				what = "put past the MR";
				rb = r->data_r[1];
				rb.len += 4096;
				e = dvx_p2p_put(&r->t, 1, 0,
						&(struct dvx_p2p_xfer){ &r->data_l, 0, &rb,
									mrlen - 64, 128 },
						T_OUT, &tk);
				break;
			}
			W_CHECK(r, e == 0, "%s: post %d", what, e);
			e = dvx_p2p_wait_local(&r->t, &tk, T_OUT, NULL);
			W_CHECK(r, e == -EPERM, "%s: %d, want -EPERM (remote access)", what, e);
			W_OK(r, dvx_p2p_lane_health(&r->t, 1, 0, &h));
			W_CHECK(r, h.state == DVX_P2P_Q_FAILED && h.syndrome == 0x13,
				"%s: lane state %u syndrome %#x", what, h.state, h.syndrome);
			W_CHECK(r, !memcmp(ctr_before, ctr1, sizeof(ctr_before)) &&
					   !memcmp(tail_before,
						   r1->data + mrlen - sizeof(tail_before),
						   sizeof(tail_before)),
				"%s: rank 1's memory changed", what);
		}
		W_OK(r, dvx_bootstrap_barrier(&r->bs, T_OUT));
		e = dvx_p2p_lane_recover(&r->t, peer, 0, T_OUT);
		W_CHECK(r, e == 0, "case %d: recover %d", c, e);
		/* the next case's refused request must not meet rank 1's last look */
		W_OK(r, dvx_bootstrap_barrier(&r->bs, T_OUT));
	}
	recovered_traffic(r, 0, 7, 1, 1, &tk);
	r->no_final_flush = 0;
}

static void test_least_privilege(void **s)
{
	struct world_cfg c;

	(void)s;
	world_cfg_default(&c);
	if (world_mode(&c) != WORLD_THREADS)
		skip();	/* rank 0 looks at rank 1's memory: one process only */
	assert_int_equal(world_run(&c, body_least_privilege, NULL), 0);
}

/* a failed init unwinds everything and leaves the failure's record on the NIC (the
 * unwind's own successful destroys must not clear it) */
static void body_none(struct wrank *r)
{
	(void)r;
}

static void test_init_failure_diag(void **s)
{
	struct world_cfg c;

	(void)s;
	world_cfg_default(&c);
	c.conn_mtu = 7;		/* no such IB MTU: the connect step refuses it */
	c.init_err = -EINVAL;
	assert_int_equal(world_run(&c, body_none, NULL), 0);
}

/* ---- a bad rkey: an error naming the operation; others carry on ---- */

static void body_bad_rkey(struct wrank *r)
{
	struct dvx_p2p_ticket tk;
	struct dvx_p2p_wait_report rep;
	struct dvx_p2p_lane_health h;
	int n = r->w->cfg.nranks, p;

	struct dvx_p2p_ticket good = { 0 }, failed = { 0 };

	r->no_final_flush = 1;
	if (r->rank == 0) {
		struct dvx_p2p_rbuf bad = r->data_r[1];

		/* a ticket that completes before the failure */
		W_OK(r, dvx_p2p_put(&r->t, 1, 0,
				    &(struct dvx_p2p_xfer){ &r->data_l, wsend_off(r, 1),
							    &r->data_r[1], wrecv_off(r, 0), 64 },
				    T_OUT, &good));
		W_OK(r, dvx_p2p_wait_local(&r->t, &good, T_OUT, NULL));
		bad.rkey[0] ^= 0x5a5a00;
		W_OK(r, dvx_p2p_put(&r->t, 1, 0,
				    &(struct dvx_p2p_xfer){ &r->data_l, wsend_off(r, 1), &bad,
							    wrecv_off(r, 0), 64 },
				    T_OUT, &tk));
		failed = tk;
		W_CHECK(r, dvx_p2p_wait_local(&r->t, &tk, T_OUT, &rep) == -EPERM &&
				   rep.err == -EPERM && rep.peer == 1,
			"bad rkey must surface as -EPERM (remote access), got %d", rep.err);
		W_OK(r, dvx_p2p_lane_health(&r->t, 1, 0, &h));
		W_CHECK(r, h.state == DVX_P2P_Q_FAILED && h.err == -EPERM &&
				   h.syndrome == DVX_MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR &&
				   h.wqe_opcode == DVX_MLX5_OPCODE_RDMA_WRITE &&
				   h.qpn == r->t.lanes[0].main.d.sq.wq.qpn && h.wqe_index == (uint16_t)tk.idx,
			"health: state %u err %d synd 0x%x op 0x%x qpn 0x%x idx %u", h.state,
			h.err, h.syndrome, h.wqe_opcode, h.qpn, h.wqe_index);
		/* the failed lane refuses new work with its error */
		W_CHECK(r,
			dvx_p2p_put(&r->t, 1, 0,
				    &(struct dvx_p2p_xfer){ &r->data_l, wsend_off(r, 1),
							    &r->data_r[1], wrecv_off(r, 0), 64 },
				    T_OUT, NULL) == -EPERM,
			"post on a failed lane");
	}
	W_OK(r, dvx_bootstrap_barrier(&r->bs, T_OUT));
	/* channel 1 (the other lane) between 0 and 1, and every lane to rank 2 */
	for (p = 0; p < n; p++) {
		uint32_t ch = (r->rank <= 1 && p <= 1) ? 1 : 0;

		if (p == r->rank)
			continue;
		fill(r, p, 7, 1024);
		W_OK(r, dvx_p2p_put_signal(&r->t, p, ch,
					   &(struct dvx_p2p_xfer){ &r->data_l, wsend_off(r, p),
								   &r->data_r[p],
								   wrecv_off(r, r->rank), 1024 },
					   &(struct dvx_p2p_notify){ &r->sig_r[p],
								     wsig_off(r, r->rank, 2), 1,
								     NULL, 0, 0 },
					   T_OUT, &tk));
		W_OK(r, dvx_p2p_wait_local(&r->t, &tk, T_OUT, NULL));
	}
	for (p = 0; p < n; p++) {
		uint64_t bad;

		if (p == r->rank)
			continue;
		W_OK(r, dvx_p2p_wait_signal(&r->t, &r->sig_l, wsig_off(r, p, 2), DVX_CMP_GE, 1,
					    T_OUT, NULL));
		W_CHECK(r, check_slot(r, p, 7, 1024, &bad) == 0, "data from %d after the error",
			p);
	}
	W_OK(r, dvx_p2p_flush(&r->t, 1, T_OUT, NULL));
	if (r->rank == 2)
		W_OK(r, dvx_p2p_flush(&r->t, 0, T_OUT, NULL));
	W_OK(r, dvx_bootstrap_barrier(&r->bs, T_OUT));
	recover_after_bad_rkey(r, &good, &failed);
}

static void test_bad_rkey(void **s)
{
	struct world_cfg c;

	(void)s;
	world_cfg_default(&c);
	c.nranks = 3;
	c.qps_per_nic = 2;
	assert_int_equal(world_run(&c, body_bad_rkey, NULL), 0);
}

/* ---- without companions, counters are refused ---- */

static void body_nocomp(struct wrank *r)
{
	int peer = r->rank ^ 1;

	W_CHECK(r,
		dvx_p2p_put_counter(&r->t, peer, 0,
				    &(struct dvx_p2p_xfer){ &r->data_l, 0, &r->data_r[peer], 0, 8 },
				    &(struct dvx_p2p_notify){ NULL, 0, 0, &r->ctr_l, 0, 0 }, T_OUT,
				    NULL) == -EOPNOTSUPP,
		"counter without companions");
	W_OK(r, dvx_p2p_put(&r->t, peer, 0,
			    &(struct dvx_p2p_xfer){ &r->data_l, wsend_off(r, peer),
						    &r->data_r[peer], wrecv_off(r, r->rank), 8 },
			    T_OUT, NULL));
}

static void test_no_companions(void **s)
{
	struct world_cfg c;

	(void)s;
	world_cfg_default(&c);
	c.comp_depth = 0;
	c.progress_thread = 0;	/* ranks step the sim from their wait loops */
	assert_int_equal(world_run(&c, body_nocomp, NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_signal_sizes_2),
		cmocka_unit_test(test_put_signal_dev_2),
		cmocka_unit_test(test_all_to_all_4),
		cmocka_unit_test(test_all_to_all_8),
		cmocka_unit_test(test_stress_1000),
		cmocka_unit_test(test_subset),
		cmocka_unit_test(test_fenced_and_local_pair),
		cmocka_unit_test(test_slots_reset_cmp),
		cmocka_unit_test(test_counters),
		cmocka_unit_test(test_wrap_threads),
		cmocka_unit_test(test_bad_rkey),
		cmocka_unit_test(test_no_companions),
		cmocka_unit_test(test_recover_port_down),
		cmocka_unit_test(test_recover_unpolled),
		cmocka_unit_test(test_recover_reason_kept),
		cmocka_unit_test(test_recover_companion),
		cmocka_unit_test(test_recover_relapse),
		cmocka_unit_test(test_least_privilege),
		cmocka_unit_test(test_init_failure_diag),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
