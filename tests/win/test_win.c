// SPDX-License-Identifier: MIT
/*
 * The window (core/win): its layout and address arithmetic against hand-computed
 * tables, every configuration at 0 and the ones it refuses, and the host operations
 * end to end with ranks as threads on the software NIC and its software GPUs, in
 * injected topologies - one host (all NVL), every rank its own host (all IB), NVL and
 * IB peers interleaved in rank order (the indexing the reference got wrong), blocks,
 * forced IB. Each rank lays a window out in its regions, exchanges it (twice: the
 * second is -EALREADY), checks the peer table against every other rank's (my row at
 * p is p's row for me) and against the formulas of the topology, then runs rounds of
 * put_signal into every peer's window buffer (every byte checked), signal_all with
 * per-sender values (sums and single slots exact), put_counter (counters exact),
 * send/recv of 0 B to several slots' worth through four small slots (many pipeline
 * turns), barrier 0 reused every round and barrier_peer; then the refusals (SET on an
 * IB peer, bad ids and peers, out-of-bounds puts, a receive of the wrong size, a wait
 * that times out and says what it waited for) and the device window's tables.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "../lib/dvx_test.h"

#include <dvx/win/win.h>
#include <dvx/p2p/gpu.h>
#include <dvx/hal/sim.h>

#include "../lib/sim_world.h"

#define MAXR 6
#define SEC 1000000000ull
#define SLOT 2048u
#define DATA_LEN ((uint64_t)MAXR * SLOT)
#define NSIG 4
#define NCTR 2
#define NBAR 2
#define NSLOTS 4
#define SLOT_BYTES 256u

/* ---- layout against hand-computed numbers ---- */

static void test_layout(void **state)
{
	struct dvx_win_geom g;

	(void)state;
	/* signals 3, counters 2, barriers 2, 4 slots of 256 B */
	assert_int_equal(dvx_win_geom_init(&g, 3, 2, 2, 4, 256), 0);
	/* NVL: 3 x 128 signals, 16 B of counters padded to 128, 4 x 128 ready, 128
	 * credit, 4 x 256 slots */
	assert_int_equal(g.nvl_ctr, 384);
	assert_int_equal(g.nvl_ready, 512);
	assert_int_equal(g.nvl_credit, 1024);
	assert_int_equal(g.nvl_slots, 1152);
	assert_int_equal(g.nvl_row, 2176);
	assert_int_equal(g.nvl_rows0, 256);
	assert_int_equal(DVX_WIN_NVL_ROW_BYTES(3, 2, 4, 256), 2176);
	assert_int_equal(DVX_WIN_NVL_BYTES(3, 3, 2, 2, 4, 256), 256 + 2 * 2176);
	assert_int_equal(DVX_WIN_NVL_BYTES(1, 3, 2, 2, 4, 256), 0);
	/* IB: 24 B signals, 16 B counters, 32 B ready, 8 B credit = 80, padded to 128,
	 * then 4 x 256 receive and 4 x 256 send slots */
	assert_int_equal(g.ib_ctr, 24);
	assert_int_equal(g.ib_ready, 40);
	assert_int_equal(g.ib_credit, 72);
	assert_int_equal(g.ib_rslots, 128);
	assert_int_equal(g.ib_sslots, 1152);
	assert_int_equal(g.ib_row, 2176);
	assert_int_equal(g.ib_rows0, 64);
	assert_int_equal(DVX_WIN_IB_BYTES(3, 3, 2, 2, 4, 256), 64 + 3 * 2176);
	assert_int_equal(DVX_WIN_IB_BYTES(0, 3, 2, 2, 4, 256), 0);
	/* addresses: row 1, id 2 / slot 3 */
	assert_int_equal(dvx_win_nvl_sig_off(&g, 1, 2), 256 + 2176 + 256);
	assert_int_equal(dvx_win_nvl_bar_off(&g, 1), 128);
	assert_int_equal(dvx_win_nvl_ctr_off(&g, 1, 1), 256 + 2176 + 384 + 8);
	assert_int_equal(dvx_win_nvl_ready_off(&g, 1, 3), 256 + 2176 + 512 + 384);
	assert_int_equal(dvx_win_nvl_credit_off(&g, 1), 256 + 2176 + 1024);
	assert_int_equal(dvx_win_nvl_slot_off(&g, 1, 3), 256 + 2176 + 1152 + 768);
	assert_int_equal(dvx_win_ib_sig_off(&g, 2, 2), 64 + 2 * 2176 + 16);
	assert_int_equal(dvx_win_ib_bar_off(&g, 1), 8);
	assert_int_equal(dvx_win_ib_ctr_off(&g, 2, 1), 64 + 2 * 2176 + 32);
	assert_int_equal(dvx_win_ib_ready_off(&g, 2, 3), 64 + 2 * 2176 + 64);
	assert_int_equal(dvx_win_ib_credit_off(&g, 2), 64 + 2 * 2176 + 72);
	assert_int_equal(dvx_win_ib_rslot_off(&g, 2, 1), 64 + 2 * 2176 + 128 + 256);
	assert_int_equal(dvx_win_ib_sslot_off(&g, 2, 1), 64 + 2 * 2176 + 1152 + 256);
	/* NVL words 128 B apart, IB words 8 B apart */
	assert_int_equal(dvx_win_nvl_sig_off(&g, 0, 1) - dvx_win_nvl_sig_off(&g, 0, 0), 128);
	assert_int_equal(dvx_win_ib_sig_off(&g, 0, 1) - dvx_win_ib_sig_off(&g, 0, 0), 8);

	/* everything at 0: rows of nothing, no regions */
	assert_int_equal(dvx_win_geom_init(&g, 0, 0, 0, 0, 0), 0);
	assert_int_equal(g.nvl_row, 0);
	assert_int_equal(g.ib_row, 0);
	assert_int_equal(DVX_WIN_NVL_BYTES(4, 0, 0, 0, 0, 0), 0);
	assert_int_equal(DVX_WIN_IB_BYTES(4, 0, 0, 0, 0, 0), 0);
	assert_int_equal(DVX_WIN_DEV_BYTES(4, 0), 4 * 128 + 64);
	/* counters only: an NVL row is one padded line; an IB row 64 B */
	assert_int_equal(dvx_win_geom_init(&g, 0, 1, 0, 0, 0), 0);
	assert_int_equal(g.nvl_row, 128);
	assert_int_equal(g.ib_row, 64);

	/* refused, and @g untouched */
	memset(&g, 0x5a, sizeof(g));
	assert_int_equal(dvx_win_geom_init(&g, 1, 0, 0, 4, 200), -EINVAL);	/* not x128 */
	assert_int_equal(dvx_win_geom_init(&g, 1, 0, 0, 4, 0), -EINVAL);	/* slots, no bytes */
	assert_int_equal(dvx_win_geom_init(&g, 1, 0, 0, 0, 256), -EINVAL);	/* bytes, no slots */
	assert_int_equal(dvx_win_geom_init(&g, DVX_WIN_MAX_IDS + 1, 0, 0, 0, 0), -EINVAL);
	assert_int_equal(dvx_win_geom_init(&g, 0, 0, 0, DVX_WIN_MAX_SLOTS + 1, 256), -EINVAL);
	assert_int_equal(dvx_win_geom_init(&g, 0, 0, 0, 1, 2ull << 30), -EINVAL);
	assert_int_equal(g.signals, 0x5a5a5a5a);

	/* peer index <-> rank, O(1) */
	assert_int_equal(dvx_win_peer_index(2, 5, 0), 0);
	assert_int_equal(dvx_win_peer_index(2, 5, 2), -1);
	assert_int_equal(dvx_win_peer_index(2, 5, 4), 3);
	assert_int_equal(dvx_win_peer_index(2, 5, 5), -1);
	assert_int_equal(dvx_win_peer_rank(2, 5, 2), 3);
	assert_int_equal(dvx_win_peer_rank(2, 5, 1), 1);
	assert_int_equal(dvx_win_peer_rank(2, 5, 4), -1);
}

/* ---- end to end ---- */

struct world;

struct wrank {
	struct world *w;
	int rank;
	char why[240];
};

struct world {
	int n;
	uint32_t flags;
	int rounds;
	int mismatch;			/* 1: rank 1 configures another shape; 2: bad args */
	struct dvx_tw tw;		/* hosts, facts, fabric, bootstrap group */
	struct dvx_win *wins[MAXR];	/* published for the cross-check */
	struct wrank r[MAXR];
};

#define RFAIL(r, ...) do { if (!(r)->why[0]) snprintf((r)->why, sizeof((r)->why), __VA_ARGS__); \
	dvx_bootstrap_tgroup_abort((r)->w->tw.g, (r)->rank); } while (0)
#define ROK(r, e) do { int e_ = (e); if (e_) { RFAIL(r, "%.140s = %d (line %d)", #e, e_, __LINE__); \
	goto out; } } while (0)
#define RWANT(r, e, want) do { int e_ = (e); if (e_ != (want)) { \
	RFAIL(r, "%.140s = %d, want %d (line %d)", #e, e_, (want), __LINE__); goto out; } } while (0)
#define RCHECK(r, c, ...) do { if (!(c)) { RFAIL(r, __VA_ARGS__); goto out; } } while (0)

static uint8_t pat(int from, int to, unsigned i, int round)
{
	return (uint8_t)(from * 37 + to * 11 + i * 3 + round * 101 + 1);
}

static const uint64_t sr_sizes[] = { 0, 1, 240, 241, 1000, 3001 };

static uint64_t sr_size(int from, int round)
{
	return sr_sizes[round % 6] + (uint64_t)from;
}

/* the hand formula of the row of rank r at rank p, for hosts given by world */
static int want_row_at(const struct world *w, int p, int r)
{
	int q, n = 0, local_p = 0, local_r = 0;
	int ib = (w->flags & DVX_MP_F_FORCE_IB) || w->tw.host[p] != w->tw.host[r];

	for (q = 0; q < w->n; q++) {
		int q_ib = (w->flags & DVX_MP_F_FORCE_IB) || w->tw.host[p] != w->tw.host[q];

		if (q == p)
			continue;
		if (ib && q_ib && q < r)
			n++;
	}
	if (ib)
		return n;
	for (q = 0; q < p; q++)
		local_p += w->tw.host[q] == w->tw.host[p];
	for (q = 0; q < r; q++)
		local_r += w->tw.host[q] == w->tw.host[r];
	return local_r < local_p ? local_r : local_r - 1;
}

static void rank_run(struct wrank *r)
{
	struct world *w = r->w;
	int me = r->rank, n = w->n, p, q, round;
	struct dvx_bootstrap bs;
	struct dvx_nic nic;
	struct dvx_nic_cfg na;
	struct dvx_gpu gpu;
	struct dvx_gpu_mem m_nvl, m_ib, m_dev, m_data, m_src;
	struct dvx_mp mp;
	struct dvx_mp_cfg c;
	struct dvx_mem_req sreq, rreq;
	struct dvx_win win;
	struct dvx_win_cfg wc;
	struct dvx_win_mem req, mem;
	struct dvx_p2p_lbuf src;
	struct dvx_p2p_wait_report rep;
	struct dvx_gpu_stream st;
	void *state = NULL, *ist = NULL, *irings = NULL, *wstate = NULL;
	uint8_t *data = NULL, *sbuf = NULL, *rbuf = NULL, *sendb = NULL;
	char name[16];
	int mp_up = 0, gpu_up = 0, nic_up = 0, st_up = 0, win_up = 0, src_up = 0;
	int nvl_up = 0, ib_up = 0, dev_up = 0, data_up = 0, srcm_up = 0;
	unsigned i;
	uint64_t v, sum;
	int err;

	memset(&win, 0, sizeof(win));
	ROK(r, dvx_bootstrap_thread_init(&bs, w->tw.g, me));
	memset(&na, 0, sizeof(na));
	snprintf(name, sizeof(name), "sim_%d", me);
	na.name = name;
	na.gid_index = -1;
	ROK(r, dvx_nic_open(&nic, dvx_sim_hal(w->tw.fab), &na));
	nic_up = 1;
	memset(&gpu, 0, sizeof(gpu));
	ROK(r, dvx_gpu_open(&gpu, dvx_sim_hal(w->tw.fab), w->tw.host[me], NULL));
	gpu_up = 1;

	memset(&c, 0, sizeof(c));
	c.rank = me;
	c.nranks = n;
	c.bs = &bs;
	c.gpu = &gpu;
	c.flags = w->flags;
	c.ib.nnics = 1;
	c.ib.nics[0] = &nic;
	c.ib.qps_per_nic = 1;
	c.ib.sq_depth = 64;
	c.ib.comp_depth = 16;
	c.inject = w->tw.inf;
	c.timeout_ns = 20 * SEC;
	state = aligned_alloc(64, (dvx_mp_mem_size(&c) + 63) & ~(size_t)63);
	ROK(r, dvx_mp_init(&mp, &c, state, dvx_mp_mem_size(&c)));
	mp_up = 1;
	ROK(r, dvx_mp_ib_mem_req(&mp, &sreq, &rreq));
	if (sreq.bytes) {
		ist = aligned_alloc(64, (sreq.bytes + 63) & ~(uint64_t)63);
		irings = aligned_alloc(4096, (rreq.bytes + 4095) & ~(uint64_t)4095);
	}
	ROK(r, dvx_mp_connect(&mp, ist, sreq.bytes, irings, rreq.bytes));
	ROK(r, dvx_gpu_stream_create(&gpu, &st));
	st_up = 1;

	memset(&wc, 0, sizeof(wc));
	wc.signals = NSIG + (w->mismatch == 1 && me == 1);
	wc.counters = NCTR;
	wc.barriers = NBAR;
	wc.slots = NSLOTS;
	wc.slot_bytes = SLOT_BYTES;
	wc.flags = DVX_WIN_F_CPU;
	wc.stream = &st;
	wc.timeout_ns = 10 * SEC;
	ROK(r, dvx_win_mem_req(&mp, &wc, &req));
	RCHECK(r, req.nvl_len == DVX_WIN_NVL_BYTES(mp.topo.nnvl, wc.signals, NCTR, NBAR, NSLOTS,
						  SLOT_BYTES) &&
		  req.ib_len == DVX_WIN_IB_BYTES(mp.topo.nib, wc.signals, NCTR, NBAR, NSLOTS,
						SLOT_BYTES) &&
		  req.dev_len == DVX_WIN_DEV_BYTES(n, NBAR),
	       "mem_req disagrees with the size macros");
	memset(&mem, 0, sizeof(mem));
	wstate = aligned_alloc(64, (req.state_len + 63) & ~(uint64_t)63);
	mem.state = wstate;
	mem.state_len = req.state_len;
	if (req.nvl_len) {
		ROK(r, dvx_gpu_mem_alloc(&gpu, req.nvl_len, DVX_GPU_MEM_EXPORT, &m_nvl));
		nvl_up = 1;
		mem.nvl = (void *)(uintptr_t)m_nvl.dptr;
		mem.nvl_len = req.nvl_len;
	}
	if (req.ib_len) {
		ROK(r, dvx_gpu_mem_alloc(&gpu, req.ib_len, DVX_GPU_MEM_RDMA, &m_ib));
		ib_up = 1;
		mem.ib = (void *)(uintptr_t)m_ib.dptr;
		mem.ib_len = req.ib_len;
	}
	ROK(r, dvx_gpu_mem_alloc(&gpu, req.dev_len, 0, &m_dev));
	dev_up = 1;
	mem.dev = m_dev.dptr;
	mem.dev_len = req.dev_len;

	/* undersized or misaligned regions change nothing */
	{
		struct dvx_win_mem bad = mem;

		bad.state_len--;
		RWANT(r, dvx_win_init(&win, &mp, &wc, &bad), -EINVAL);
		RCHECK(r, strstr(win.diag.msg, "state region"), "diag: %s", win.diag.msg);
		bad = mem;
		bad.state = (uint8_t *)mem.state + 8;
		RWANT(r, dvx_win_init(&win, &mp, &wc, &bad), -EINVAL);
		RCHECK(r, strstr(win.diag.msg, "state region"), "diag: %s", win.diag.msg);
		if (req.nvl_len) {
			bad = mem;
			bad.nvl_len--;
			RWANT(r, dvx_win_init(&win, &mp, &wc, &bad), -EINVAL);
			RCHECK(r, strstr(win.diag.msg, "NVL region"), "diag: %s", win.diag.msg);
		}
		if (req.ib_len) {
			bad = mem;
			bad.ib_len--;
			RWANT(r, dvx_win_init(&win, &mp, &wc, &bad), -EINVAL);
			RCHECK(r, strstr(win.diag.msg, "IB region"), "diag: %s", win.diag.msg);
		}
		bad = mem;
		bad.dev_len--;
		RWANT(r, dvx_win_init(&win, &mp, &wc, &bad), -EINVAL);
		RCHECK(r, strstr(win.diag.msg, "device region"), "diag: %s", win.diag.msg);
		{
			struct dvx_win_cfg bc = wc;

			bc.slot_bytes = 100;
			RWANT(r, dvx_win_init(&win, &mp, &bc, &mem), -EINVAL);
			RCHECK(r, strstr(win.diag.msg, "geometry"), "diag: %s", win.diag.msg);
			bc = wc;
			bc.flags |= 1u << 9;
			RWANT(r, dvx_win_init(&win, &mp, &bc, &mem), -EINVAL);
			RCHECK(r, strstr(win.diag.msg, "unknown flags"), "diag: %s", win.diag.msg);
		}
		RCHECK(r, win.live != DVX_WIN_LIVE, "a refused init left the window live");
	}
	ROK(r, dvx_win_init(&win, &mp, &wc, &mem));
	win_up = 1;
	RWANT(r, dvx_win_init(&win, &mp, &wc, &mem), -EBUSY);	/* live: not over it */
	RWANT(r, dvx_win_signal(&win, (me + 1) % n, 0, DVX_WIN_SIG_ADD, 1), -EINVAL); /* not yet */
	RCHECK(r, strstr(win.diag.msg, "exchange the window first"), "diag: %s", win.diag.msg);

	ROK(r, dvx_gpu_mem_alloc(&gpu, DATA_LEN, DVX_GPU_MEM_RDMA | DVX_GPU_MEM_EXPORT, &m_data));
	data_up = 1;
	data = (uint8_t *)(uintptr_t)m_data.dptr;
	memset(data, 0, DATA_LEN);
	/* mismatch 2: rank 1 gives a buffer without a length - every rank refuses */
	err = dvx_win_exchange(&win, data, w->mismatch == 2 && me == 1 ? 0 : DATA_LEN);
	if (w->mismatch == 1) {
		RCHECK(r, err == -EINVAL && strstr(win.diag.msg, "differs"),
		       "a differing window: exchange = %d (%s)", err, win.diag.msg);
		goto out;
	}
	if (w->mismatch == 2) {
		RCHECK(r, err == -EINVAL && (me == 1 || strstr(win.diag.msg, "rank 1")),
		       "bad arguments on rank 1: exchange = %d (%s)", err, win.diag.msg);
		goto out;
	}
	ROK(r, err);
	RWANT(r, dvx_win_exchange(&win, data, DATA_LEN), -EALREADY);

	/* the peer table: kinds, rows by the topology's own maps, and my row at every
	 * peer equal to that peer's row for me (its own table) */
	w->wins[me] = &win;
	ROK(r, dvx_bootstrap_barrier(&bs, c.timeout_ns));
	for (p = 0; p < n; p++) {
		const struct dvx_win_dev_peer *e = &win.peers[p];
		int k = dvx_mp_kind(&mp, p);

		RCHECK(r, e->kind == (uint32_t)k, "peer %d kind %u, want %d", p, e->kind, k);
		if (p == me) {
			RCHECK(r, e->nvl_data == (uint64_t)(uintptr_t)data && e->data_len == DATA_LEN,
			       "self entry");
			continue;
		}
		RCHECK(r, e->row == (k == DVX_MP_NVL ? mp.topo.nvl_peer[p] : mp.topo.ib_idx[p]),
		       "peer %d: row %d", p, e->row);
		RCHECK(r, e->row_at == w->wins[p]->peers[me].row,
		       "peer %d: my row there %d, its row for me %d", p, e->row_at,
		       w->wins[p]->peers[me].row);
		RCHECK(r, e->row_at == want_row_at(w, p, me), "peer %d: row_at %d, formula %d", p,
		       e->row_at, want_row_at(w, p, me));
		RCHECK(r, e->data_len == DATA_LEN, "peer %d: data_len", p);
		if (k == DVX_MP_NVL)
			RCHECK(r, e->nvl_base && e->nvl_data &&
				  dvx_win_nvlink_address(&win, p, 16) == e->nvl_data + 16 &&
				  !e->ib_region.addr,
			       "NVL peer %d: pointers", p);
		else
			RCHECK(r, !e->nvl_base && e->ib_region.addr && e->ib_region.rkey[0] &&
				  e->ib_data.addr && !dvx_win_nvlink_address(&win, p, 0),
			       "IB peer %d: views", p);
	}
	RCHECK(r, !dvx_win_nvlink_address(&win, me, 0), "nvlink_address of self");
	ROK(r, dvx_bootstrap_barrier(&bs, c.timeout_ns));

	/* a source buffer (GPU memory: NVL copies read it, IB registers it) */
	ROK(r, dvx_gpu_mem_alloc(&gpu, SLOT, DVX_GPU_MEM_RDMA, &m_src));
	srcm_up = 1;
	sbuf = (uint8_t *)(uintptr_t)m_src.dptr;
	if (mp.topo.nib) {
		ROK(r, dvx_win_register_src(&win, sbuf, SLOT, &src));
		src_up = 1;
	} else {
		/* NVL puts need no keys: where it is and how long */
		memset(&src, 0, sizeof(src));
		src.ptr = sbuf;
		src.addr = (uint64_t)(uintptr_t)sbuf;
		src.len = SLOT;
	}
	sendb = malloc(4096 + MAXR);
	rbuf = malloc(4096 + MAXR);

	for (round = 0; round < w->rounds; round++) {
		/* 1. put_signal into every peer's buffer at my offset, signal 0 += 1 */
		for (p = 0; p < n; p++) {
			if (p == me)
				continue;
			for (i = 0; i < SLOT; i++)
				sbuf[i] = pat(me, p, i, round);
			ROK(r, dvx_win_put_signal(&win, p, &(struct dvx_win_xfer){ &src, 0, (uint64_t)me * SLOT, SLOT }, 0, 1));
			/* the source is reused: let the IB write read it first */
			if (dvx_mp_kind(&mp, p) == DVX_MP_IB)
				ROK(r, dvx_p2p_flush(&mp.ib, wc.channel, 10 * SEC, &rep));
		}
		ROK(r, dvx_win_wait_signal(&win, 0, DVX_CMP_GE, (uint64_t)(round + 1) * (uint64_t)(n - 1),
					   10 * SEC, &rep));
		for (p = 0; p < n; p++) {
			if (p == me)
				continue;
			ROK(r, dvx_win_read_signal_from(&win, p, 0, &v));
			RCHECK(r, v == (uint64_t)round + 1, "round %d: signal 0 from %d is %llu", round,
			       p, (unsigned long long)v);
			for (i = 0; i < SLOT; i++)
				RCHECK(r, data[(uint64_t)p * SLOT + i] == pat(p, me, i, round),
				       "round %d: byte %u from %d", round, i, p);
		}
		/* 2. signal_all: signal 1 += my rank + 1; every slot exact, the sum exact */
		ROK(r, dvx_win_signal_all(&win, 1, DVX_WIN_SIG_ADD, (uint64_t)me + 1));
		sum = 0;
		for (p = 0; p < n; p++)
			if (p != me)
				sum += (uint64_t)p + 1;
		ROK(r, dvx_win_wait_signal(&win, 1, DVX_CMP_EQ, sum * (uint64_t)(round + 1), 10 * SEC,
					   &rep));
		for (p = 0; p < n; p++)
			if (p != me) {
				ROK(r, dvx_win_wait_signal_from(&win, p, 1, DVX_CMP_EQ,
								(uint64_t)(p + 1) * (uint64_t)(round + 1),
								10 * SEC, &rep));
			}
		ROK(r, dvx_win_read_signal(&win, 1, &v));
		RCHECK(r, v == sum * (uint64_t)(round + 1), "signal 1 sum %llu", (unsigned long long)v);
		/* 3. put_counter: counter 1 of every peer counts my completed puts */
		for (p = 0; p < n; p++) {
			if (p == me)
				continue;
			ROK(r, dvx_win_put_counter(&win, p, &(struct dvx_win_xfer){ &src, 0, (uint64_t)me * SLOT, 64 }, 1));
			ROK(r, dvx_win_wait_counter(&win, p, 1, DVX_CMP_GE, (uint64_t)round + 1, 10 * SEC,
						    &rep));
			ROK(r, dvx_win_read_counter(&win, p, 1, &v));
			RCHECK(r, v == (uint64_t)round + 1, "counter of %d is %llu", p,
			       (unsigned long long)v);
		}
		/* 4. send/recv with every peer, pairs in one global order (no deadlock with
		 * four slots and messages of many slots) */
		for (p = 0; p < n; p++)
			for (q = p + 1; q < n; q++) {
				int other = p == me ? q : q == me ? p : -1;
				uint64_t ns = sr_size(me, round), nr;
				int s_first = me == p;

				if (other < 0)
					continue;
				nr = sr_size(other, round);
				for (i = 0; i < ns; i++)
					sendb[i] = pat(me, other, i, round + 7);
				memset(rbuf, 0xee, nr + 1);
				for (int step = 0; step < 2; step++) {
					if ((step == 0) == s_first)
						ROK(r, dvx_win_send(&win, other, sendb, ns, 10 * SEC, &rep));
					else
						ROK(r, dvx_win_recv(&win, other, rbuf, nr, 10 * SEC, &rep));
				}
				for (i = 0; i < nr; i++)
					RCHECK(r, rbuf[i] == pat(other, me, i, round + 7),
					       "round %d: recv byte %u of %llu from %d", round, i,
					       (unsigned long long)nr, other);
				RCHECK(r, rbuf[nr] == 0xee, "recv wrote past its end");
			}
		/* 5. the barrier, same id every round; a pairwise one on id 1 */
		ROK(r, dvx_win_barrier(&win, 0, 10 * SEC, &rep));
		if (round % 3 == 0) {
			int partner = me ^ 1;

			if (partner < n)
				ROK(r, dvx_win_barrier_peer(&win, partner, 1, 10 * SEC, &rep));
		}
	}

	/* refusals: nothing sent, nothing changed */
	for (p = 0; p < n; p++) {
		if (p == me)
			continue;
		if (dvx_mp_kind(&mp, p) == DVX_MP_IB)
			RWANT(r, dvx_win_signal(&win, p, 2, DVX_WIN_SIG_SET, 5), -ENOTSUP);
		else
			ROK(r, dvx_win_signal(&win, p, 2, DVX_WIN_SIG_SET, 1000 + (uint64_t)me));
		RWANT(r, dvx_win_signal(&win, p, NSIG, DVX_WIN_SIG_ADD, 1), -EINVAL);
		RCHECK(r, strstr(win.diag.msg, "signal id 4"), "diag: %s", win.diag.msg);
		RWANT(r, dvx_win_signal(&win, p, 0, 7, 1), -EINVAL);
		RCHECK(r, strstr(win.diag.msg, "DVX_WIN_SIG_SET or"), "diag: %s", win.diag.msg);
		RWANT(r, dvx_win_put(&win, p, &(struct dvx_win_xfer){ &src, 0, DATA_LEN - 8, 16 }), -EINVAL);
		RCHECK(r, strstr(win.diag.msg, "buffer of"), "diag: %s", win.diag.msg);
		RWANT(r, dvx_win_put(&win, p, &(struct dvx_win_xfer){ &src, SLOT - 8, 0, 16 }), -EINVAL);
		RCHECK(r, strstr(win.diag.msg, "outside the source"), "diag: %s", win.diag.msg);
		RWANT(r, dvx_win_put(&win, p, &(struct dvx_win_xfer){ &src, 0, 0, 0 }), -EINVAL);
		RCHECK(r, strstr(win.diag.msg, "length 0"), "diag: %s", win.diag.msg);
		RWANT(r, dvx_win_put_counter(&win, p, &(struct dvx_win_xfer){ &src, 0, 0, 8 }, NCTR), -EINVAL);
		RCHECK(r, strstr(win.diag.msg, "counter id 2"), "diag: %s", win.diag.msg);
		RWANT(r, dvx_win_read_counter(&win, p, NCTR, &v), -EINVAL);
		RCHECK(r, strstr(win.diag.msg, "counter id 2"), "diag: %s", win.diag.msg);
		RWANT(r, dvx_win_barrier_peer(&win, p, NBAR, SEC, &rep), -EINVAL);
		RCHECK(r, strstr(win.diag.msg, "barrier id 2"), "diag: %s", win.diag.msg);
	}
	RWANT(r, dvx_win_signal(&win, me, 0, DVX_WIN_SIG_ADD, 1), -EINVAL);
	RCHECK(r, strstr(win.diag.msg, "another rank"), "diag: %s", win.diag.msg);
	RWANT(r, dvx_win_signal(&win, n, 0, DVX_WIN_SIG_ADD, 1), -EINVAL);
	RWANT(r, dvx_win_signal(&win, -1, 0, DVX_WIN_SIG_ADD, 1), -EINVAL);
	RWANT(r, dvx_win_wait_signal(&win, NSIG, DVX_CMP_GE, 0, SEC, &rep), -EINVAL);
	RWANT(r, dvx_win_wait_signal(&win, 0, 99, 0, SEC, &rep), -EINVAL);
	RCHECK(r, strstr(win.diag.msg, "DVX_CMP_"), "diag: %s", win.diag.msg);
	RWANT(r, dvx_win_barrier(&win, NBAR, SEC, &rep), -EINVAL);
	RCHECK(r, strstr(win.diag.msg, "barrier id 2"), "diag: %s", win.diag.msg);
	if (mp.topo.nib)
		RWANT(r, dvx_win_signal_all(&win, 2, DVX_WIN_SIG_SET, 1), -ENOTSUP);
	/* a wait that times out says what it waited for, and is an error */
	p = (me + 1) % n;
	RWANT(r, dvx_win_wait_signal_from(&win, p, 3, DVX_CMP_GE, 1, 2000000, &rep), -ETIMEDOUT);
	RCHECK(r, rep.err == -ETIMEDOUT && rep.peer == p && rep.expected == 1 && rep.observed == 0 &&
		  strstr(win.diag.msg, "waited for"),
	       "the timed-out wait's report: %d %d %llu %llu (%s)", rep.err, rep.peer,
	       (unsigned long long)rep.expected, (unsigned long long)rep.observed, win.diag.msg);
	ROK(r, dvx_bootstrap_barrier(&bs, c.timeout_ns));
	/* SET landed on NVL peers' slot 2 */
	for (p = 0; p < n; p++)
		if (p != me && dvx_mp_kind(&mp, p) == DVX_MP_NVL) {
			ROK(r, dvx_win_read_signal_from(&win, p, 2, &v));
			RCHECK(r, v == 1000 + (uint64_t)p, "SET from %d: %llu", p, (unsigned long long)v);
		}
	/* a receive of another size: -EMSGSIZE, nothing consumed; then the right one */
	if (n >= 2 && me < 2) {
		if (me == 0) {
			ROK(r, dvx_win_send(&win, 1, sendb, 100, 10 * SEC, &rep));
		} else {
			RWANT(r, dvx_win_recv(&win, 0, rbuf, 50, 10 * SEC, &rep), -EMSGSIZE);
			ROK(r, dvx_win_recv(&win, 0, rbuf, 100, 10 * SEC, &rep));
		}
		/* NVL: a small message (flagged lines) met by a receive of a large one, and
		 * the other way round: -EMSGSIZE both, nothing consumed */
		if (me == 0) {
			ROK(r, dvx_win_send(&win, 1, sendb, 100, 10 * SEC, &rep));
			ROK(r, dvx_win_send(&win, 1, sendb, 200, 10 * SEC, &rep));
		} else {
			RWANT(r, dvx_win_recv(&win, 0, rbuf, 200, 10 * SEC, &rep), -EMSGSIZE);
			ROK(r, dvx_win_recv(&win, 0, rbuf, 100, 10 * SEC, &rep));
			RWANT(r, dvx_win_recv(&win, 0, rbuf, 100, 10 * SEC, &rep), -EMSGSIZE);
			ROK(r, dvx_win_recv(&win, 0, rbuf, 200, 10 * SEC, &rep));
		}
	}
	/* reset_signals zeroes both inboxes' signals */
	ROK(r, dvx_bootstrap_barrier(&bs, c.timeout_ns));
	ROK(r, dvx_win_reset_signals(&win, &st));
	ROK(r, dvx_win_read_signal(&win, 1, &v));
	RCHECK(r, v == 0, "signals after reset: %llu", (unsigned long long)v);

	/* the device window: the header and the tables it wrote */
	{
		struct dvx_win_dev d;
		struct dvx_win_dev_peer tab[MAXR];

		if (!mp.topo.nib) {
			ROK(r, dvx_win_dev_make(&win, NULL, &d));
			RCHECK(r, d.version == DVX_WIN_DEV_VERSION && d.size == sizeof(d) && d.rank == me &&
				  d.nranks == n && d.nnvl_peers == mp.topo.nnvl_peers && d.nib == 0 &&
				  d.geom.signals == NSIG && d.peers == m_dev.dptr,
			       "device window header");
			ROK(r, dvx_gpu_memcpy_dtoh(&gpu, tab, d.peers, (uint64_t)n * sizeof(tab[0])));
			RCHECK(r, !memcmp(tab, win.peers, (size_t)n * sizeof(tab[0])),
			       "device peer table differs from the host's");
			RWANT(r, dvx_win_dev_make(&win, NULL, &d), -EALREADY);	/* once */
		} else {
			RWANT(r, dvx_win_dev_make(&win, NULL, &d), -EINVAL);	/* IB needs lanes */
		}
	}
	if (mp.ib_live)
		ROK(r, dvx_p2p_flush(&mp.ib, wc.channel, 10 * SEC, &rep));
	ROK(r, dvx_bootstrap_barrier(&bs, c.timeout_ns));
out:
	free(sendb);
	free(rbuf);
	if (src_up && (err = dvx_win_deregister_src(&win, sbuf)))
		RFAIL(r, "deregister_src %d", err);
	if (win_up && (err = dvx_win_fini(&win)))
		RFAIL(r, "win_fini %d", err);
	if (win_up && dvx_win_fini(&win) != -EINVAL)
		RFAIL(r, "a second fini is not -EINVAL");
	if (win_up && !r->why[0])
		dvx_bootstrap_barrier(&bs, c.timeout_ns);	/* unmapped everywhere */
	if (srcm_up)
		dvx_gpu_mem_free(&m_src);
	if (data_up)
		dvx_gpu_mem_free(&m_data);
	if (dev_up)
		dvx_gpu_mem_free(&m_dev);
	if (ib_up)
		dvx_gpu_mem_free(&m_ib);
	if (nvl_up)
		dvx_gpu_mem_free(&m_nvl);
	if (st_up)
		dvx_gpu_stream_destroy(&st);
	if (mp_up && (err = dvx_mp_fini(&mp)))
		RFAIL(r, "mp_fini %d", err);
	if (gpu_up)
		dvx_gpu_close(&gpu);
	if (nic_up)
		dvx_nic_close(&nic);
	dvx_bootstrap_fini(&bs);
	free(irings);
	free(ist);
	free(wstate);
	free(state);
}

static void *rank_thread(void *arg)
{
	rank_run(arg);
	return NULL;
}

static void run(int n, const int *host, uint32_t flags, int rounds, int mismatch)
{
	struct world *w = calloc(1, sizeof(*w));
	unsigned what = 0;
	int r, err;

	assert_non_null(w);
	w->n = n;
	w->flags = flags;
	w->rounds = rounds;
	w->mismatch = mismatch;
	assert_int_equal(dvx_tw_init(&w->tw, n, host, NULL), 0);
	for (r = 0; r < n; r++) {
		w->r[r].w = w;
		w->r[r].rank = r;
	}
	dvx_tw_run(&w->tw, rank_thread, w->r, sizeof(w->r[0]));
	for (r = 0; r < n; r++)
		if (w->r[r].why[0])
			fail_msg("%d ranks, rank %d: %s", n, r, w->r[r].why);
	err = dvx_tw_fini(&w->tw, &what);
	if (err)
		fail_msg("world: %d (objects of kind %u left?)", err, what);
	free(w);
}

static void test_one_host(void **state)
{
	static const int h[] = { 0, 0, 0, 0 };

	(void)state;
	run(2, h, 0, 6, 0);
	run(3, h, 0, 12, 0);
}

static void test_all_ib(void **state)
{
	static const int h[] = { 0, 1, 2, 3 };

	(void)state;
	run(2, h, 0, 6, 0);
	run(3, h, 0, 12, 0);
}

static void test_mixed(void **state)
{
	static const int inter[] = { 0, 1, 0, 1, 0, 1 };
	static const int blocks[] = { 0, 0, 0, 1, 1, 2 };

	(void)state;
	run(4, inter, 0, 12, 0);
	run(6, inter, 0, 6, 0);
	run(6, blocks, 0, 6, 0);
	run(4, inter, DVX_MP_F_FORCE_IB, 6, 0);
}

static void test_mismatch(void **state)
{
	static const int h[] = { 0, 1, 0 };

	(void)state;
	run(3, h, 0, 0, 1);	/* rank 1 has another shape: every rank refuses */
	run(3, h, 0, 0, 2);	/* rank 1's arguments are bad: every rank refuses */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_one_host),
		cmocka_unit_test(test_all_ib),
		cmocka_unit_test(test_mixed),
		cmocka_unit_test(test_mismatch),
	};

	return cmocka_run_group_tests_name("win", tests, NULL, NULL);
}
