// SPDX-License-Identifier: MIT
/*
 * tests/ht/test_ht_mock.c - the host transport's set-up paths on the mock hal (two
 * ConnectX-7 models, ranks of a threads bootstrap driven from one thread), with every
 * hal call failing in turn (dvx_test_sweep()): two IB transports made and connected
 * (both modes, one and four channels), and two per-peer caches whose transports are
 * made by one rank's get and the other's answer. Every run returns an error and
 * leaves nothing live, or absorbs the failure and connects. Plus the DEVX commands a
 * transport costs, and the order in which a cache's fini releases its transports.
 */
#include <errno.h>

#include "../lib/dvx_test.h"

#include <dvx/ht/ib.h>
#include <dvx/ht/cache.h>
#include <dvx/mlx5/cmd.h>
#include <dvx/testing/cx7.h>
#include <dvx/testing/sweep.h>

#define LOOP_MAX 2000
#define NR 4

static struct dvx_mock mock;

struct side {
	struct dvx_nic nic;
	struct dvx_bootstrap bs;
	struct dvx_ht_ib ib;
	struct dvx_ht_cache cache;
	void *s, *r, *d;
	uint64_t sl, rl, dl;
};

struct ctx {
	int n;			/* ranks */
	int use_cache;
	struct dvx_ht_ib_cfg cfg;
	struct side s[NR];
	void *gmem;
	struct dvx_bootstrap_tgroup *g;
	int only0;		/* caches: only rank 0's pairs are made */
	int hung;
};

static struct ctx C;

static void *big(uint64_t n)
{
	void *p = NULL;

	assert_int_equal(posix_memalign(&p, 4096, n ? n : 64), 0);
	return p;
}

/* rank @i's cache configuration */
static void cache_cfg(const struct ctx *c, int i, struct dvx_ht_cache_cfg *cc)
{
	memset(cc, 0, sizeof(*cc));
	cc->bs = (struct dvx_bootstrap *)&c->s[i].bs;
	cc->tmpl = c->cfg;
	cc->tmpl.nic = (struct dvx_nic *)&c->s[i].nic;
}

static void regions(struct ctx *c, int i)
{
	struct side *x = &c->s[i];
	struct dvx_mem_req a, b, d;

	if (x->s)
		return;
	if (c->use_cache) {
		struct dvx_ht_cache_cfg cc;

		cache_cfg(c, i, &cc);
		assert_int_equal(dvx_ht_cache_mem_req(&cc, &a, &b, &d), 0);
	} else {
		assert_int_equal(dvx_ht_ib_mem_req(&c->cfg, &a, &b, &d), 0);
	}
	x->s = big(a.bytes);
	x->r = big(b.bytes);
	x->d = big(d.bytes);
	x->sl = a.bytes;
	x->rl = b.bytes;
	x->dl = d.bytes;
}

/* the NICs and a fresh bootstrap group (no message of an earlier run survives) */
static void setup(void *p)
{
	struct ctx *c = p;
	struct dvx_bootstrap_tgroup_cfg ga;
	size_t gsz;
	int i;

	memset(&ga, 0, sizeof(ga));
	ga.nranks = c->n;
	ga.max_unexpected = 16;
	ga.slot_bytes = DVX_HT_HELLO_BYTES;
	gsz = dvx_bootstrap_tgroup_mem_size(c->n, 16, DVX_HT_HELLO_BYTES);
	if (!c->gmem)
		c->gmem = big(gsz);
	assert_int_equal(dvx_bootstrap_tgroup_init(&c->g, &ga, c->gmem, gsz), 0);
	for (i = 0; i < c->n; i++) {
		struct dvx_nic_cfg na;
		char name[16];

		memset(&c->s[i].nic, 0, sizeof(c->s[i].nic));
		memset(&na, 0, sizeof(na));
		snprintf(name, sizeof(name), "mlx5_%d", i);
		na.name = name;
		assert_int_equal(dvx_nic_open(&c->s[i].nic, dvx_mock_hal(&mock), &na), 0);
		assert_int_equal(dvx_bootstrap_thread_init(&c->s[i].bs, c->g, i), 0);
		regions(c, i);
	}
}

static void teardown(void *p)
{
	struct ctx *c = p;
	int i;

	for (i = 0; i < c->n; i++) {
		dvx_bootstrap_fini(&c->s[i].bs);
		assert_int_equal(dvx_nic_close(&c->s[i].nic), 0);
	}
	assert_int_equal(dvx_bootstrap_tgroup_fini(c->g), 0);
}

static void down(struct ctx *c)
{
	int i;

	for (i = 0; i < c->n; i++) {
		if (c->s[i].ib.live == DVX_LIVE)
			dvx_ht_ib_fini(&c->s[i].ib);
		if (c->s[i].cache.live == DVX_LIVE)
			dvx_ht_cache_fini(&c->s[i].cache);
	}
}

/* every transport of @c connected: 1; not yet: 0; or an error */
static int all_connected(struct ctx *c)
{
	int i, j, err, up = 1;

	for (i = 0; i < c->n; i++) {
		if (!c->use_cache) {
			struct dvx_ht *t = &c->s[i].ib.ht;

			err = dvx_ht_progress(t);
			if (err)
				return err;
			up &= dvx_ht_connected(t);
			continue;
		}
		dvx_ht_cache_progress(&c->s[i].cache);
		for (j = 0; j < c->n; j++) {
			struct dvx_ht *t = j == i ? NULL : dvx_ht_cache_lookup(&c->s[i].cache, j);

			if (j == i || (c->only0 && i && j))
				continue;
			if (!t)
				return 0;
			err = dvx_ht_status(t, -1);
			if (err)
				return err;
			up &= dvx_ht_connected(t);
		}
	}
	return up;
}

static int action(void *p)
{
	struct ctx *c = p;
	int i, k, err = 0;

	for (i = 0; i < c->n; i++) {
		struct side *x = &c->s[i];

		memset(&x->ib, 0, sizeof(x->ib));
		memset(&x->cache, 0, sizeof(x->cache));
		if (c->use_cache) {
			struct dvx_ht_cache_cfg cc;

			cache_cfg(c, i, &cc);
			err = dvx_ht_cache_init(&x->cache, &cc, x->s, x->sl, x->r, x->rl, x->d, x->dl);
		} else {
			struct dvx_ht_ib_cfg tc = c->cfg;

			tc.nic = &x->nic;
			tc.bs = &x->bs;
			tc.peer = !i;
			tc.tag = 1;
			err = dvx_ht_ib_init(&x->ib, &tc, x->s, x->sl, x->r, x->rl, x->d, x->dl);
		}
		if (err)
			goto fail;
	}
	if (c->use_cache) {
		struct dvx_ht *t;

		/* rank 0 asks for every peer; the others only answer */
		for (i = 1; i < c->n; i++) {
			err = dvx_ht_cache_get(&c->s[0].cache, i, c->cfg.mode, &t);
			if (err)
				goto fail;
		}
	}
	for (k = 0; k < LOOP_MAX; k++) {
		err = all_connected(c);
		if (err < 0)
			goto fail;
		if (err)
			return 0;
	}
	c->hung++;
	err = -ETIMEDOUT;
fail:
	down(c);	/* the failed call is behind us: these succeed */
	return err;
}

static void undo(void *p)
{
	down(p);
}

static void regions_free(void)
{
	int i;

	for (i = 0; i < C.n; i++) {
		free(C.s[i].s);
		free(C.s[i].r);
		free(C.s[i].d);
	}
	free(C.gmem);
}

/* a fresh mock with @n ConnectX-7 models, mlx5_0 ... */
static void mock_up(int n)
{
	int i;

	memset(&C, 0, sizeof(C));
	assert_int_equal(dvx_mock_init(&mock), 0);
	for (i = 0; i < n; i++) {
		char name[16], pci[16];

		snprintf(name, sizeof(name), "mlx5_%d", i);
		snprintf(pci, sizeof(pci), "0000:0%d:00.0", i + 3);
		assert_true(dvx_test_mock_add_cx7(&mock, name, pci) >= 0);
	}
	C.n = n;
}

static void sweep(int use_cache, uint32_t mode, uint32_t nch)
{
	struct dvx_test_sweep s = { setup, action, undo, teardown, &C, 0, 5000 };
	struct dvx_test_sweep_report rep;
	int err;

	mock_up(2);
	C.use_cache = use_cache;
	C.cfg.mode = mode;
	C.cfg.nchannels = nch;
	C.cfg.sq_depth = 64;
	C.cfg.rq_depth = 64;
	C.cfg.cb_slot_bytes = 4096;
	err = dvx_test_sweep(&mock, &s, &rep);
	if (err)
		fail_msg("call %u (ret %d): %s", rep.bad_call, rep.bad_ret, rep.why);
	assert_int_equal(C.hung, 0);
	assert_int_equal(dvx_mock_live_total(&mock), 0);
	print_message("%s %s x%u: %u runs, %u failed, %u absorbed\n",
		      use_cache ? "cache" : "transport", mode == DVX_HT_ZC ? "zc" : "cb", nch,
		      rep.runs, rep.failed, rep.absorbed);
	regions_free();
}

static void test_sweep_zc(void **state)
{
	(void)state;
	sweep(0, DVX_HT_ZC, 1);
	sweep(0, DVX_HT_ZC, 4);
}

static void test_sweep_cb(void **state)
{
	(void)state;
	sweep(0, DVX_HT_CB, 1);
	sweep(0, DVX_HT_CB, 4);
}

static void test_sweep_cache(void **state)
{
	(void)state;
	sweep(1, DVX_HT_ZC, 2);
	sweep(1, DVX_HT_CB, 2);
}

/* what a transport costs: one CQ and a QP per channel, each QP taken to RTS once; no
 * command at all on the data path */
static void test_commands(void **state)
{
	static const struct {
		uint16_t op;
		uint32_t count;	/* for two ends of 3 channels */
	} want[] = {
		{ DVX_MLX5_CMD_CREATE_CQ, 2 },
		{ DVX_MLX5_CMD_CREATE_QP, 6 },
		{ DVX_MLX5_CMD_RTR2RTS_QP, 6 },
	};
	int slot[3], i;

	(void)state;
	mock_up(2);
	C.cfg.mode = DVX_HT_CB;
	C.cfg.nchannels = 3;
	setup(&C);
	for (i = 0; i < 3; i++) {
		slot[i] = dvx_mock_capture(&mock, want[i].op, -1, NULL, 0, NULL, 0);
		assert_true(slot[i] >= 0);
	}
	assert_int_equal(action(&C), 0);
	for (i = 0; i < 3; i++)
		assert_int_equal(mock.capture[slot[i]].count, want[i].count);
	undo(&C);
	teardown(&C);
	dvx_mock_capture_clear(&mock);
	assert_int_equal(dvx_mock_live_total(&mock), 0);
	regions_free();
}

/* a cache's fini releases its transports in reverse order of making: rank 0 asks for
 * peers 3, 1, 2; their umems go back 2, 1, 3 */
static void test_cache_fini_order(void **state)
{
	static const int asked[3] = { 3, 1, 2 };
	struct dvx_ht *t;
	uint32_t ids[3];
	int i, k, seen = 0;

	(void)state;
	mock_up(NR);
	C.use_cache = 1;
	C.only0 = 1;
	C.cfg.mode = DVX_HT_ZC;
	C.cfg.sq_depth = 64;
	C.cfg.rq_depth = 64;
	setup(&C);
	for (i = 0; i < NR; i++) {
		struct dvx_ht_cache_cfg cc;

		cache_cfg(&C, i, &cc);
		assert_int_equal(dvx_ht_cache_init(&C.s[i].cache, &cc, C.s[i].s, C.s[i].sl,
						   C.s[i].r, C.s[i].rl, C.s[i].d, C.s[i].dl),
				 0);
	}
	dvx_mock_reset_log(&mock);
	for (k = 0; k < 3; k++)
		assert_int_equal(dvx_ht_cache_get(&C.s[0].cache, asked[k], DVX_HT_ZC, &t), 0);
	/* the umem each transport registered (the log names dereg by id only) */
	for (i = 0, k = 0; i < (int)mock.seq && i < DVX_MOCK_LOG_MAX; i++)
		if (mock.log[i].op == DVX_MOCK_OP_UMEM_REG && mock.log[i].dev == 0)
			ids[k++] = mock.log[i].id;
	assert_int_equal(k, 3);
	for (k = 0; k < LOOP_MAX && all_connected(&C) != 1; k++)
		;
	assert_int_equal(all_connected(&C), 1);
	dvx_mock_reset_log(&mock);
	assert_int_equal(dvx_ht_cache_fini(&C.s[0].cache), 0);
	for (i = 0; i < (int)mock.seq && i < DVX_MOCK_LOG_MAX; i++) {
		const struct dvx_mock_call *c = &mock.log[i];
		int peer;

		if (c->op != DVX_MOCK_OP_UMEM_DEREG)
			continue;
		for (peer = 0; peer < 3 && ids[peer] != c->id; peer++)
			;
		assert_true(seen < 3 && peer < 3);
		assert_int_equal(peer, 2 - seen);	/* the last asked first */
		seen++;
	}
	assert_int_equal(seen, 3);
	down(&C);
	teardown(&C);
	assert_int_equal(dvx_mock_live_total(&mock), 0);
	regions_free();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sweep_zc),
		cmocka_unit_test(test_sweep_cb),
		cmocka_unit_test(test_sweep_cache),
		cmocka_unit_test(test_commands),
		cmocka_unit_test(test_cache_fini_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
