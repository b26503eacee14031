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
#include <sched.h>
#include <string.h>
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
#define RMA_K 24		/* fetch-adds and lock turns per rank */
#define RMA_GETS 40		/* random gets per peer */

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
	int mismatch;			/* 1: rank 1 configures another shape; 2: bad args;
					 * 3: rank 1 another channel count */
	int read;			/* 1: DVX_WIN_F_READ (and the lanes' DVX_P2P_F_READ) */
	uint32_t nch;			/* the window's nchannels (and the lanes per peer) */
	uint64_t olds[MAXR][2][RMA_K];	/* every rank's fetch-add old values, by kind */
	struct dvx_tw tw;		/* hosts, facts, fabric, bootstrap group */
	struct dvx_win *wins[MAXR];	/* published for the cross-check */
	struct wrank r[MAXR];
};

#define RFAIL(r, ...) do { if (!(r)->why[0]) snprintf((r)->why, sizeof((r)->why), __VA_ARGS__); \
	dvx_bootstrap_tgroup_abort((r)->w->tw.g, (r)->rank); } while (0)
/* in a phase: a failed check fails the rank and ends the phase */
#define ROK(r, e) do { int e_ = (e); if (e_) { RFAIL(r, "%.140s = %d (line %d)", #e, e_, __LINE__); \
	return -1; } } while (0)
#define RWANT(r, e, want) do { int e_ = (e); if (e_ != (want)) { \
	RFAIL(r, "%.140s = %d, want %d (line %d)", #e, e_, (want), __LINE__); return -1; } } while (0)
#define RCHECK(r, c, ...) do { if (!(c)) { RFAIL(r, __VA_ARGS__); return -1; } } while (0)

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

/* one rank's objects, built up by the phases below and torn down by wr_close() */
struct wctx {
	struct wrank *r;
	int me, n;
	struct dvx_bootstrap bs;
	struct dvx_nic nic;
	struct dvx_nic_cfg na;
	struct dvx_gpu gpu;
	struct dvx_gpu_mem m_nvl, m_ib, m_dev, m_data, m_src, m_get;
	struct dvx_p2p_lbuf gsrc;	/* gets' destination, fetches' results */
	uint8_t *gbuf;
	int getm_up, get_up;
	struct dvx_mp mp;
	struct dvx_mp_cfg c;
	struct dvx_mem_req sreq, rreq;
	struct dvx_win win;
	struct dvx_win_cfg wc;
	struct dvx_mem_req req[DVX_WIN_MEM_N];
	struct dvx_win_regions mem;
	struct dvx_p2p_lbuf src;
	struct dvx_p2p_wait_report rep;
	struct dvx_gpu_stream st;
	void *state, *ist, *irings, *wstate;
	uint8_t *data, *sbuf, *rbuf, *sendb;
	char name[16];
	int mp_up, gpu_up, nic_up, st_up, win_up, src_up;
	int nvl_up, ib_up, dev_up, data_up, srcm_up, bs_up;
};

/* bootstrap, this rank's software NIC and its host's GPU, the transport connected, a stream */
static int wr_open(struct wctx *x)
{
	struct world *w = x->r->w;
	struct wrank *r = x->r;
	int me = x->me;

	memset(&x->win, 0, sizeof(x->win));
	ROK(r, dvx_bootstrap_thread_init(&x->bs, w->tw.g, me));
	memset(&x->na, 0, sizeof(x->na));
	snprintf(x->name, sizeof(x->name), "sim_%d", me);
	x->na.name = x->name;
	x->na.gid_index = -1;
	ROK(r, dvx_nic_open(&x->nic, dvx_sim_hal(w->tw.fab), &x->na));
	x->nic_up = 1;
	memset(&x->gpu, 0, sizeof(x->gpu));
	ROK(r, dvx_gpu_open(&x->gpu, dvx_sim_hal(w->tw.fab), w->tw.host[me], NULL));
	x->gpu_up = 1;

	dvx_tw_mp_cfg(&w->tw, me, &x->bs, &x->gpu, &x->nic, w->flags, &x->c);
	if (w->read)
		x->c.ib.flags |= DVX_P2P_F_READ;
	if (w->nch > 1)
		x->c.ib.qps_per_nic = w->nch;
	x->state = aligned_alloc(64, (dvx_mp_mem_size(&x->c) + 63) & ~(size_t)63);
	ROK(r, dvx_mp_init(&x->mp, &x->c, x->state, dvx_mp_mem_size(&x->c)));
	x->mp_up = 1;
	ROK(r, dvx_mp_ib_mem_req(&x->mp, &x->sreq, &x->rreq));
	if (x->sreq.bytes) {
		x->ist = aligned_alloc(64, (x->sreq.bytes + 63) & ~(uint64_t)63);
		x->irings = aligned_alloc(4096, (x->rreq.bytes + 4095) & ~(uint64_t)4095);
	}
	ROK(r, dvx_mp_connect(&x->mp, x->ist, x->sreq.bytes, x->irings, x->rreq.bytes));
	ROK(r, dvx_gpu_stream_create(&x->gpu, &x->st));
	x->st_up = 1;
	return 0;
}

/* the window's regions, sized by dvx_win_mem_req() and checked against the size macros */
static int wr_regions(struct wctx *x)
{
	struct world *w = x->r->w;
	struct wrank *r = x->r;
	int me = x->me;
	int n = x->n;

	memset(&x->wc, 0, sizeof(x->wc));
	x->wc.signals = NSIG + (w->mismatch == 1 && me == 1);
	x->wc.counters = NCTR;
	x->wc.barriers = NBAR;
	x->wc.slots = NSLOTS;
	x->wc.slot_bytes = SLOT_BYTES;
	x->wc.flags = DVX_WIN_F_CPU | (w->read ? DVX_WIN_F_READ : 0u);
	x->wc.nchannels = w->nch - (w->mismatch == 3 && me == 1);
	x->wc.stream = &x->st;
	x->wc.timeout_ns = 10 * SEC;
	ROK(r, dvx_win_mem_req(&x->mp, &x->wc, x->req));
	RCHECK(r, x->req[DVX_WIN_MEM_NVL].bytes == DVX_WIN_NVL_BYTES(x->mp.topo.nnvl, x->wc.signals, NCTR, NBAR, NSLOTS,
						  SLOT_BYTES) &&
		  x->req[DVX_WIN_MEM_IB].bytes == DVX_WIN_IB_BYTES(x->mp.topo.nib, x->wc.signals, NCTR, NBAR, NSLOTS,
						SLOT_BYTES) &&
		  x->req[DVX_WIN_MEM_DEV].bytes == DVX_WIN_DEV_BYTES(n, NBAR),
	       "mem_req disagrees with the size macros");
	memset(&x->mem, 0, sizeof(x->mem));
	x->wstate = aligned_alloc(64, (x->req[DVX_WIN_MEM_STATE].bytes + 63) & ~(uint64_t)63);
	x->mem.state = x->wstate;
	x->mem.state_len = x->req[DVX_WIN_MEM_STATE].bytes;
	if (x->req[DVX_WIN_MEM_NVL].bytes) {
		ROK(r, dvx_gpu_mem_alloc(&x->gpu, x->req[DVX_WIN_MEM_NVL].bytes, DVX_GPU_MEM_EXPORT, &x->m_nvl));
		x->nvl_up = 1;
		x->mem.nvl = (void *)(uintptr_t)x->m_nvl.dptr;
		x->mem.nvl_len = x->req[DVX_WIN_MEM_NVL].bytes;
	}
	if (x->req[DVX_WIN_MEM_IB].bytes) {
		ROK(r, dvx_gpu_mem_alloc(&x->gpu, x->req[DVX_WIN_MEM_IB].bytes, DVX_GPU_MEM_RDMA, &x->m_ib));
		x->ib_up = 1;
		x->mem.ib = (void *)(uintptr_t)x->m_ib.dptr;
		x->mem.ib_len = x->req[DVX_WIN_MEM_IB].bytes;
	}
	ROK(r, dvx_gpu_mem_alloc(&x->gpu, x->req[DVX_WIN_MEM_DEV].bytes, 0, &x->m_dev));
	x->dev_up = 1;
	x->mem.dev = x->m_dev.dptr;
	x->mem.dev_len = x->req[DVX_WIN_MEM_DEV].bytes;
	return 0;
}

/* undersized or misaligned regions and bad configurations change nothing */
static int wr_refusals(struct wctx *x)
{
	struct wrank *r = x->r;

	{
		struct dvx_win_regions bad = x->mem;

		bad.state_len--;
		RWANT(r, dvx_win_init(&x->win, &x->mp, &x->wc, &bad), -EINVAL);
		RCHECK(r, strstr(x->win.diag.msg, "state region"), "diag: %s", x->win.diag.msg);
		bad = x->mem;
		bad.state = (uint8_t *)x->mem.state + 8;
		RWANT(r, dvx_win_init(&x->win, &x->mp, &x->wc, &bad), -EINVAL);
		RCHECK(r, strstr(x->win.diag.msg, "state region"), "diag: %s", x->win.diag.msg);
		if (x->req[DVX_WIN_MEM_NVL].bytes) {
			bad = x->mem;
			bad.nvl_len--;
			RWANT(r, dvx_win_init(&x->win, &x->mp, &x->wc, &bad), -EINVAL);
			RCHECK(r, strstr(x->win.diag.msg, "NVL region"), "diag: %s", x->win.diag.msg);
		}
		if (x->req[DVX_WIN_MEM_IB].bytes) {
			bad = x->mem;
			bad.ib_len--;
			RWANT(r, dvx_win_init(&x->win, &x->mp, &x->wc, &bad), -EINVAL);
			RCHECK(r, strstr(x->win.diag.msg, "IB region"), "diag: %s", x->win.diag.msg);
		}
		bad = x->mem;
		bad.dev_len--;
		RWANT(r, dvx_win_init(&x->win, &x->mp, &x->wc, &bad), -EINVAL);
		RCHECK(r, strstr(x->win.diag.msg, "device region"), "diag: %s", x->win.diag.msg);
		{
			struct dvx_win_cfg bc = x->wc;

			bc.slot_bytes = 100;
			RWANT(r, dvx_win_init(&x->win, &x->mp, &bc, &x->mem), -EINVAL);
			RCHECK(r, strstr(x->win.diag.msg, "geometry"), "diag: %s", x->win.diag.msg);
			if (x->mp.topo.nib) {
				bc = x->wc;
				bc.nchannels = x->mp.ib.nlanes + 1;
				RWANT(r, dvx_win_init(&x->win, &x->mp, &bc, &x->mem), -EINVAL);
				RCHECK(r, strstr(x->win.diag.msg, "nchannels"), "diag: %s", x->win.diag.msg);
			}
			bc = x->wc;
			bc.flags |= 1u << 9;
			RWANT(r, dvx_win_init(&x->win, &x->mp, &bc, &x->mem), -EINVAL);
			RCHECK(r, strstr(x->win.diag.msg, "unknown flags"), "diag: %s", x->win.diag.msg);
		}
		RCHECK(r, x->win.live != DVX_WIN_LIVE, "a refused init left the window live");
	}
	return 0;
}

/* the window up; not over a live one; nothing before the exchange */
static int wr_init(struct wctx *x)
{
	struct wrank *r = x->r;
	int me = x->me;
	int n = x->n;

	ROK(r, dvx_win_init(&x->win, &x->mp, &x->wc, &x->mem));
	x->win_up = 1;
	RWANT(r, dvx_win_init(&x->win, &x->mp, &x->wc, &x->mem), -EBUSY);	/* live: not over it */
	RWANT(r, dvx_win_signal(&x->win, (me + 1) % n, 0, DVX_WIN_SIG_ADD, 1), -EINVAL); /* not yet */
	RCHECK(r, strstr(x->win.diag.msg, "exchange the window first"), "diag: %s", x->win.diag.msg);
	return 0;
}

/* the window buffer exchanged (the mismatch worlds end here: 1) */
static int wr_exchange(struct wctx *x)
{
	struct world *w = x->r->w;
	struct wrank *r = x->r;
	int me = x->me;
	int err;

	ROK(r, dvx_gpu_mem_alloc(&x->gpu, DATA_LEN, DVX_GPU_MEM_RDMA | DVX_GPU_MEM_EXPORT, &x->m_data));
	x->data_up = 1;
	x->data = (uint8_t *)(uintptr_t)x->m_data.dptr;
	memset(x->data, 0, DATA_LEN);
	/* mismatch 2: rank 1 gives a buffer without a length - every rank refuses */
	err = dvx_win_exchange(&x->win, x->data, w->mismatch == 2 && me == 1 ? 0 : DATA_LEN);
	if (w->mismatch == 1) {
		RCHECK(r, err == -EINVAL && strstr(x->win.diag.msg, "differs"),
		       "a differing window: exchange = %d (%s)", err, x->win.diag.msg);
		return 1;	/* refused as it must be: this world ends here */
	}
	if (w->mismatch == 3) {
		RCHECK(r, err == -EINVAL && strstr(x->win.diag.msg, "nchannels"),
		       "another channel count: exchange = %d (%s)", err, x->win.diag.msg);
		return 1;
	}
	if (w->mismatch == 2) {
		RCHECK(r, err == -EINVAL && (me == 1 || strstr(x->win.diag.msg, "rank 1")),
		       "bad arguments on rank 1: exchange = %d (%s)", err, x->win.diag.msg);
		return 1;
	}
	ROK(r, err);
	RWANT(r, dvx_win_exchange(&x->win, x->data, DATA_LEN), -EALREADY);
	return 0;
}

/* the peer table: kinds, rows, and each row as its peer sees it */
static int wr_peers(struct wctx *x)
{
	struct world *w = x->r->w;
	struct wrank *r = x->r;
	int me = x->me;
	int n = x->n;
	int p;

	/* the peer table: kinds, rows by the topology's own maps, and my row at every
	 * peer equal to that peer's row for me (its own table) */
	w->wins[me] = &x->win;
	ROK(r, dvx_bootstrap_barrier(&x->bs, x->c.timeout_ns));
	for (p = 0; p < n; p++) {
		const struct dvx_win_dev_peer *e = &x->win.peers[p];
		int k = dvx_mp_kind(&x->mp, p);

		RCHECK(r, e->kind == (uint32_t)k, "peer %d kind %u, want %d", p, e->kind, k);
		if (p == me) {
			RCHECK(r, e->nvl_data == (uint64_t)(uintptr_t)x->data && e->data_len == DATA_LEN,
			       "self entry");
			continue;
		}
		RCHECK(r, e->row == (k == DVX_MP_NVL ? x->mp.topo.nvl_peer[p] : x->mp.topo.ib_idx[p]),
		       "peer %d: row %d", p, e->row);
		RCHECK(r, e->row_at == w->wins[p]->peers[me].row,
		       "peer %d: my row there %d, its row for me %d", p, e->row_at,
		       w->wins[p]->peers[me].row);
		RCHECK(r, e->row_at == want_row_at(w, p, me), "peer %d: row_at %d, formula %d", p,
		       e->row_at, want_row_at(w, p, me));
		RCHECK(r, e->data_len == DATA_LEN, "peer %d: data_len", p);
		if (k == DVX_MP_NVL)
			RCHECK(r, e->nvl_base && e->nvl_data &&
				  dvx_win_nvlink_address(&x->win, p, 16) == e->nvl_data + 16 &&
				  !e->ib_region.addr,
			       "NVL peer %d: pointers", p);
		else
			RCHECK(r, !e->nvl_base && e->ib_region.addr && e->ib_region.rkey[0] &&
				  e->ib_data.addr && !dvx_win_nvlink_address(&x->win, p, 0),
			       "IB peer %d: views", p);
		if (k == DVX_MP_IB)
			RCHECK(r, e->ib_region.access == (DVX_P2P_ACC_KNOWN | DVX_P2P_ACC_WRITE |
							  DVX_P2P_ACC_ATOMIC) &&
				  e->ib_data.access == (DVX_P2P_ACC_KNOWN | DVX_P2P_ACC_WRITE |
							DVX_P2P_ACC_ATOMIC |
							(w->read ? DVX_P2P_ACC_READ : 0u)),
			       "IB peer %d: rights %#x, %#x", p, e->ib_region.access, e->ib_data.access);
	}
	RCHECK(r, !dvx_win_nvlink_address(&x->win, me, 0), "nvlink_address of self");
	ROK(r, dvx_bootstrap_barrier(&x->bs, x->c.timeout_ns));
	return 0;
}

/* a source buffer in GPU memory, registered for IB peers */
static int wr_source(struct wctx *x)
{
	struct wrank *r = x->r;

	ROK(r, dvx_gpu_mem_alloc(&x->gpu, SLOT, DVX_GPU_MEM_RDMA, &x->m_src));
	x->srcm_up = 1;
	x->sbuf = (uint8_t *)(uintptr_t)x->m_src.dptr;
	if (x->mp.topo.nib) {
		ROK(r, dvx_win_register_src(&x->win, x->sbuf, SLOT, &x->src));
		x->src_up = 1;
	} else {
		/* NVL puts need no keys: where it is and how long */
		memset(&x->src, 0, sizeof(x->src));
		x->src.ptr = x->sbuf;
		x->src.addr = (uint64_t)(uintptr_t)x->sbuf;
		x->src.len = SLOT;
	}
	x->sendb = malloc(4096 + MAXR);
	x->rbuf = malloc(4096 + MAXR);
	return 0;
}

/* the rounds: put_signal, signal_all, put_counter, send/recv, barriers */
static int wr_rounds(struct wctx *x)
{
	struct world *w = x->r->w;
	struct wrank *r = x->r;
	int me = x->me;
	int n = x->n;
	int p;
	int q;
	int round;
	uint64_t sum;
	uint64_t v;
	unsigned i;

	for (round = 0; round < w->rounds; round++) {
		/* 1. put_signal into every peer's buffer at my offset, signal 0 += 1 */
		for (p = 0; p < n; p++) {
			if (p == me)
				continue;
			for (i = 0; i < SLOT; i++)
				x->sbuf[i] = pat(me, p, i, round);
			ROK(r, dvx_win_put_signal(&x->win, p, &(struct dvx_win_xfer){ &x->src, 0, (uint64_t)me * SLOT, SLOT }, 0, 1));
			/* the source is reused: let the IB write read it first */
			ROK(r, dvx_win_flush(&x->win, 10 * SEC, &x->rep));
		}
		ROK(r, dvx_win_wait_signal(&x->win, 0, DVX_CMP_GE, (uint64_t)(round + 1) * (uint64_t)(n - 1),
					   10 * SEC, &x->rep));
		for (p = 0; p < n; p++) {
			if (p == me)
				continue;
			ROK(r, dvx_win_read_signal_from(&x->win, p, 0, &v));
			RCHECK(r, v == (uint64_t)round + 1, "round %d: signal 0 from %d is %llu", round,
			       p, (unsigned long long)v);
			for (i = 0; i < SLOT; i++)
				RCHECK(r, x->data[(uint64_t)p * SLOT + i] == pat(p, me, i, round),
				       "round %d: byte %u from %d", round, i, p);
		}
		/* 2. signal_all: signal 1 += my rank + 1; every slot exact, the sum exact */
		ROK(r, dvx_win_signal_all(&x->win, 1, DVX_WIN_SIG_ADD, (uint64_t)me + 1));
		sum = 0;
		for (p = 0; p < n; p++)
			if (p != me)
				sum += (uint64_t)p + 1;
		ROK(r, dvx_win_wait_signal(&x->win, 1, DVX_CMP_EQ, sum * (uint64_t)(round + 1), 10 * SEC,
					   &x->rep));
		for (p = 0; p < n; p++)
			if (p != me) {
				ROK(r, dvx_win_wait_signal_from(&x->win, p, 1, DVX_CMP_EQ,
								(uint64_t)(p + 1) * (uint64_t)(round + 1),
								10 * SEC, &x->rep));
			}
		ROK(r, dvx_win_read_signal(&x->win, 1, &v));
		RCHECK(r, v == sum * (uint64_t)(round + 1), "signal 1 sum %llu", (unsigned long long)v);
		/* 3. put_counter: counter 1 of every peer counts my completed puts */
		for (p = 0; p < n; p++) {
			if (p == me)
				continue;
			ROK(r, dvx_win_put_counter(&x->win, p, &(struct dvx_win_xfer){ &x->src, 0, (uint64_t)me * SLOT, 64 }, 1));
			ROK(r, dvx_win_wait_counter(&x->win, p, 1, DVX_CMP_GE, (uint64_t)round + 1, 10 * SEC,
						    &x->rep));
			ROK(r, dvx_win_read_counter(&x->win, p, 1, &v));
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
					x->sendb[i] = pat(me, other, i, round + 7);
				memset(x->rbuf, 0xee, nr + 1);
				for (int step = 0; step < 2; step++) {
					if ((step == 0) == s_first)
						ROK(r, dvx_win_send(&x->win, other, x->sendb, ns, 10 * SEC, &x->rep));
					else
						ROK(r, dvx_win_recv(&x->win, other, x->rbuf, nr, 10 * SEC, &x->rep));
				}
				for (i = 0; i < nr; i++)
					RCHECK(r, x->rbuf[i] == pat(other, me, i, round + 7),
					       "round %d: recv byte %u of %llu from %d", round, i,
					       (unsigned long long)nr, other);
				RCHECK(r, x->rbuf[nr] == 0xee, "recv wrote past its end");
			}
		/* 5. the barrier, same id every round; a pairwise one on id 1 */
		ROK(r, dvx_win_barrier(&x->win, 0, 10 * SEC, &x->rep));
		if (round % 3 == 0) {
			int partner = me ^ 1;

			if (partner < n)
				ROK(r, dvx_win_barrier_peer(&x->win, partner, 1, 10 * SEC, &x->rep));
		}
	}
	return 0;
}

/* refusals: nothing sent, nothing changed; a timed-out wait is an error */
static int wr_checks(struct wctx *x)
{
	struct wrank *r = x->r;
	int me = x->me;
	int n = x->n;
	int p;
	uint64_t v;

	for (p = 0; p < n; p++) {
		if (p == me)
			continue;
		if (dvx_mp_kind(&x->mp, p) == DVX_MP_IB)
			RWANT(r, dvx_win_signal(&x->win, p, 2, DVX_WIN_SIG_SET, 5), -ENOTSUP);
		else
			ROK(r, dvx_win_signal(&x->win, p, 2, DVX_WIN_SIG_SET, 1000 + (uint64_t)me));
		RWANT(r, dvx_win_signal(&x->win, p, NSIG, DVX_WIN_SIG_ADD, 1), -EINVAL);
		RCHECK(r, strstr(x->win.diag.msg, "signal id 4"), "diag: %s", x->win.diag.msg);
		RWANT(r, dvx_win_signal(&x->win, p, 0, 7, 1), -EINVAL);
		RCHECK(r, strstr(x->win.diag.msg, "DVX_WIN_SIG_SET or"), "diag: %s", x->win.diag.msg);
		RWANT(r, dvx_win_put(&x->win, p, &(struct dvx_win_xfer){ &x->src, 0, DATA_LEN - 8, 16 }), -EINVAL);
		RCHECK(r, strstr(x->win.diag.msg, "buffer of"), "diag: %s", x->win.diag.msg);
		RWANT(r, dvx_win_put(&x->win, p, &(struct dvx_win_xfer){ &x->src, SLOT - 8, 0, 16 }), -EINVAL);
		RCHECK(r, strstr(x->win.diag.msg, "outside the source"), "diag: %s", x->win.diag.msg);
		RWANT(r, dvx_win_put(&x->win, p, &(struct dvx_win_xfer){ &x->src, 0, 0, 0 }), -EINVAL);
		RCHECK(r, strstr(x->win.diag.msg, "length 0"), "diag: %s", x->win.diag.msg);
		RWANT(r, dvx_win_put_counter(&x->win, p, &(struct dvx_win_xfer){ &x->src, 0, 0, 8 }, NCTR), -EINVAL);
		RCHECK(r, strstr(x->win.diag.msg, "counter id 2"), "diag: %s", x->win.diag.msg);
		RWANT(r, dvx_win_read_counter(&x->win, p, NCTR, &v), -EINVAL);
		RCHECK(r, strstr(x->win.diag.msg, "counter id 2"), "diag: %s", x->win.diag.msg);
		RWANT(r, dvx_win_barrier_peer(&x->win, p, NBAR, SEC, &x->rep), -EINVAL);
		RCHECK(r, strstr(x->win.diag.msg, "barrier id 2"), "diag: %s", x->win.diag.msg);
	}
	RWANT(r, dvx_win_signal(&x->win, me, 0, DVX_WIN_SIG_ADD, 1), -EINVAL);
	RCHECK(r, strstr(x->win.diag.msg, "another rank"), "diag: %s", x->win.diag.msg);
	RWANT(r, dvx_win_signal(&x->win, n, 0, DVX_WIN_SIG_ADD, 1), -EINVAL);
	RWANT(r, dvx_win_signal(&x->win, -1, 0, DVX_WIN_SIG_ADD, 1), -EINVAL);
	RWANT(r, dvx_win_wait_signal(&x->win, NSIG, DVX_CMP_GE, 0, SEC, &x->rep), -EINVAL);
	RWANT(r, dvx_win_wait_signal(&x->win, 0, 99, 0, SEC, &x->rep), -EINVAL);
	RCHECK(r, strstr(x->win.diag.msg, "DVX_CMP_"), "diag: %s", x->win.diag.msg);
	RWANT(r, dvx_win_barrier(&x->win, NBAR, SEC, &x->rep), -EINVAL);
	RCHECK(r, strstr(x->win.diag.msg, "barrier id 2"), "diag: %s", x->win.diag.msg);
	if (x->mp.topo.nib)
		RWANT(r, dvx_win_signal_all(&x->win, 2, DVX_WIN_SIG_SET, 1), -ENOTSUP);
	/* a wait that times out says what it waited for, and is an error */
	p = (me + 1) % n;
	RWANT(r, dvx_win_wait_signal_from(&x->win, p, 3, DVX_CMP_GE, 1, 2000000, &x->rep), -ETIMEDOUT);
	RCHECK(r, x->rep.err == -ETIMEDOUT && x->rep.peer == p && x->rep.expected == 1 && x->rep.observed == 0 &&
		  strstr(x->win.diag.msg, "waited for"),
	       "the timed-out wait's report: %d %d %llu %llu (%s)", x->rep.err, x->rep.peer,
	       (unsigned long long)x->rep.expected, (unsigned long long)x->rep.observed, x->win.diag.msg);
	ROK(r, dvx_bootstrap_barrier(&x->bs, x->c.timeout_ns));
	/* SET landed on NVL peers' slot 2 */
	for (p = 0; p < n; p++)
		if (p != me && dvx_mp_kind(&x->mp, p) == DVX_MP_NVL) {
			ROK(r, dvx_win_read_signal_from(&x->win, p, 2, &v));
			RCHECK(r, v == 1000 + (uint64_t)p, "SET from %d: %llu", p, (unsigned long long)v);
		}
	return 0;
}

/* a word at @off of rank @p's buffer, from the slot nobody's puts write (p's own) */
#define RMA_WORD(p, off) ((uint64_t)(p) * SLOT + (off))
#define RMA_VAL(from, to) (0x5100000000000000ull | (uint64_t)(from) << 16 | (uint64_t)(to))

static uint64_t ld64(const uint8_t *p)
{
	return __atomic_load_n((const uint64_t *)(const void *)p, __ATOMIC_ACQUIRE);
}

/*
 * gets, one-word operations, resets: put_value into every peer (exact), fetch-adds by
 * every rank into rank 0's word (one word per transport: NIC and GPU atomics are not
 * atomic with each other) summing exactly with the old values a permutation,
 * compare_swap as a lock around a get + put_value counter, gets of random ranges
 * (every byte), reset_peer_signal, and the refusals
 */
static int wr_rma(struct wctx *x)
{
	struct world *w = x->r->w;
	struct wrank *r = x->r;
	int me = x->me;
	int n = x->n;
	int p, q, k;
	unsigned i;
	uint64_t v, *scratch;
	unsigned seed = 12345u + (unsigned)me * 77u;

	ROK(r, dvx_gpu_mem_alloc(&x->gpu, SLOT + 64, DVX_GPU_MEM_RDMA, &x->m_get));
	x->getm_up = 1;
	x->gbuf = (uint8_t *)(uintptr_t)x->m_get.dptr;
	if (x->mp.topo.nib) {
		ROK(r, dvx_win_register_src(&x->win, x->gbuf, SLOT + 64, &x->gsrc));
		x->get_up = 1;
	} else {
		memset(&x->gsrc, 0, sizeof(x->gsrc));
		x->gsrc.ptr = x->gbuf;
		x->gsrc.addr = (uint64_t)(uintptr_t)x->gbuf;
		x->gsrc.len = SLOT + 64;
	}
	/* my own slot's words start at 0; fresh data in my slot at every peer */
	memset(x->data + (uint64_t)me * SLOT, 0, SLOT);
	for (p = 0; p < n; p++) {
		if (p == me)
			continue;
		for (i = 0; i < SLOT; i++)
			x->sbuf[i] = pat(me, p, i, 999);
		ROK(r, dvx_win_put(&x->win, p, &(struct dvx_win_xfer){ &x->src, 0, (uint64_t)me * SLOT, SLOT }));
		ROK(r, dvx_win_flush(&x->win, 10 * SEC, &x->rep));
	}
	ROK(r, dvx_win_barrier(&x->win, 0, 10 * SEC, &x->rep));

	/* 1. put_value: my value into every peer's slot, word 8 + me */
	for (p = 0; p < n; p++)
		if (p != me)
			ROK(r, dvx_win_put_value(&x->win, p, &(struct dvx_win_amo){
					RMA_WORD(p, 64 + 8 * (uint64_t)me), RMA_VAL(me, p), 0, NULL, 0 }));
	ROK(r, dvx_win_flush(&x->win, 10 * SEC, &x->rep));
	ROK(r, dvx_win_barrier(&x->win, 0, 10 * SEC, &x->rep));
	for (q = 0; q < n; q++)
		if (q != me) {
			v = ld64(x->data + RMA_WORD(me, 64 + 8 * (uint64_t)q));
			RCHECK(r, v == RMA_VAL(q, me), "put_value from %d: %#llx", q, (unsigned long long)v);
		}

	/* 2. fetch-adds into rank 0's word of my transport (0: IB, 8: NVL) */
	if (me) {
		int kind = dvx_mp_kind(&x->mp, 0) == DVX_MP_NVL;

		for (k = 0; k < RMA_K; k++) {
			ROK(r, dvx_win_fetch_add(&x->win, 0, &(struct dvx_win_amo){
						RMA_WORD(0, 8 * (uint64_t)kind), 1, 0, &x->gsrc, SLOT }));
			w->olds[me][kind][k] = ld64(x->gbuf + SLOT);
			/* a plain add in between: counted by the old values too */
			if (k % 6 == 5)
				ROK(r, dvx_win_add(&x->win, 0, &(struct dvx_win_amo){
						RMA_WORD(0, 8 * (uint64_t)kind), 1000, 0, NULL, 0 }));
		}
	}
	ROK(r, dvx_win_flush(&x->win, 10 * SEC, &x->rep));
	ROK(r, dvx_win_barrier(&x->win, 0, 10 * SEC, &x->rep));
	/* olds[] is this process's memory, written by the other ranks' threads: the
	 * bootstrap's barrier orders those writes before rank 0 reads them (the window's
	 * barrier orders the NIC's words, not the threads' plain stores; TSan) */
	ROK(r, dvx_bootstrap_barrier(&x->bs, x->c.timeout_ns));
	if (me == 0) {
		for (k = 0; k < 2; k++) {
			uint64_t want = 0, adds = 0, seen[MAXR * RMA_K];
			int m = 0, a, b;

			for (q = 1; q < n; q++)
				if ((dvx_mp_kind(&x->mp, q) == DVX_MP_NVL) == k) {
					for (a = 0; a < RMA_K; a++)
						seen[m++] = w->olds[q][k][a];
					adds += RMA_K / 6;
				}
			want = (uint64_t)m + adds * 1000;
			v = ld64(x->data + RMA_WORD(0, 8 * (uint64_t)k));
			RCHECK(r, v == want, "fetch-add word %d: %llu, want %llu", k,
			       (unsigned long long)v, (unsigned long long)want);
			/* the old values without the adds' thousands are 0 ... m - 1, once each */
			for (a = 0; a < m; a++) {
				uint64_t o = seen[a] % 1000;

				for (b = 0; b < a; b++)
					RCHECK(r, seen[b] % 1000 != o, "old value %llu twice",
					       (unsigned long long)o);
				RCHECK(r, o < (uint64_t)m, "old value %llu", (unsigned long long)seen[a]);
			}
		}
	}

	/* 3. compare_swap as a lock (word 16 IB, 24 NVL) around a counter (32, 40) read
	 * with a get and written with put_value; needs remote read over IB */
	if (me) {
		int kind = dvx_mp_kind(&x->mp, 0) == DVX_MP_NVL;
		uint64_t lockw = RMA_WORD(0, 16 + 8 * (uint64_t)kind);
		uint64_t ctrw = RMA_WORD(0, 32 + 8 * (uint64_t)kind);

		for (k = 0; (kind || w->read) && k < RMA_K; k++) {
			uint64_t t0 = dvx_hal_now_ns(x->mp.hal);

			for (;;) {
				ROK(r, dvx_win_compare_swap(&x->win, 0, &(struct dvx_win_amo){
							lockw, (uint64_t)me, 0, &x->gsrc, SLOT }));
				if (ld64(x->gbuf + SLOT) == 0)
					break;
				RCHECK(r, dvx_hal_now_ns(x->mp.hal) - t0 < 20 * SEC, "lock never free");
				sched_yield();
			}
			ROK(r, dvx_win_get(&x->win, 0, &(struct dvx_win_rxfer){ &x->gsrc, 0, ctrw, 8 }));
			v = ld64(x->gbuf);
			ROK(r, dvx_win_put_value(&x->win, 0, &(struct dvx_win_amo){ ctrw, v + 1, 0, NULL, 0 }));
			/* the release: compare_swap(me -> 0) after the counter (one QP: in order) */
			ROK(r, dvx_win_compare_swap(&x->win, 0, &(struct dvx_win_amo){
						lockw, 0, (uint64_t)me, &x->gsrc, SLOT }));
			RCHECK(r, ld64(x->gbuf + SLOT) == (uint64_t)me, "lock held by %llu",
			       (unsigned long long)ld64(x->gbuf + SLOT));
		}
	}
	ROK(r, dvx_win_flush(&x->win, 10 * SEC, &x->rep));
	ROK(r, dvx_win_barrier(&x->win, 0, 10 * SEC, &x->rep));
	if (me == 0)
		for (k = 0; k < 2; k++) {
			uint64_t want = 0;

			for (q = 1; q < n; q++)
				if ((dvx_mp_kind(&x->mp, q) == DVX_MP_NVL) == k && (k || w->read))
					want += RMA_K;
			v = ld64(x->data + RMA_WORD(0, 32 + 8 * (uint64_t)k));
			RCHECK(r, v == want, "locked counter %d: %llu, want %llu", k,
			       (unsigned long long)v, (unsigned long long)want);
			RCHECK(r, ld64(x->data + RMA_WORD(0, 16 + 8 * (uint64_t)k)) == 0, "lock %d held", k);
		}

	/* 4. gets of random ranges of the peers' slots of other ranks (every byte), or
	 * -EPERM with nothing written where the window has no remote read */
	for (p = 0; p < n; p++) {
		if (p == me)
			continue;
		for (k = 0; k < RMA_GETS; k++) {
			uint64_t off, len;

			do
				q = (int)(rand_r(&seed) % (unsigned)n);
			while (q == p);
			len = 1 + rand_r(&seed) % SLOT;
			off = rand_r(&seed) % (SLOT - len + 1);
			memset(x->gbuf, 0xc3, SLOT + 64);
			if (dvx_mp_kind(&x->mp, p) == DVX_MP_IB && !w->read) {
				RWANT(r, dvx_win_get(&x->win, p, &(struct dvx_win_rxfer){
							&x->gsrc, 0, (uint64_t)q * SLOT + off, len }), -EPERM);
				RCHECK(r, strstr(x->win.diag.msg, "DVX_WIN_F_READ"), "diag: %s", x->win.diag.msg);
				for (i = 0; i < SLOT + 64; i++)
					RCHECK(r, x->gbuf[i] == 0xc3, "a refused get wrote byte %u", i);
				break;
			}
			ROK(r, dvx_win_get(&x->win, p, &(struct dvx_win_rxfer){
						&x->gsrc, 7, (uint64_t)q * SLOT + off, len }));
			for (i = 0; i < len; i++)
				RCHECK(r, x->gbuf[7 + i] == pat(q, p, (unsigned)off + i, 999),
				       "get from %d of %d's slot [%llu, +%llu): byte %u", p, q,
				       (unsigned long long)off, (unsigned long long)len, i);
			RCHECK(r, x->gbuf[6] == 0xc3 && x->gbuf[7 + len] == 0xc3, "a get wrote outside");
		}
	}

	/* 5. reset_peer_signal: signal 3 raised at every peer, then reset by me */
	for (p = 0; p < n; p++)
		if (p != me)
			ROK(r, dvx_win_signal(&x->win, p, 3, DVX_WIN_SIG_ADD, 5));
	ROK(r, dvx_win_flush(&x->win, 10 * SEC, &x->rep));
	ROK(r, dvx_win_barrier(&x->win, 0, 10 * SEC, &x->rep));
	for (p = 0; p < n; p++)
		if (p != me) {
			ROK(r, dvx_win_read_signal_from(&x->win, p, 3, &v));
			RCHECK(r, v == 5, "signal 3 from %d: %llu", p, (unsigned long long)v);
		}
	ROK(r, dvx_win_barrier(&x->win, 0, 10 * SEC, &x->rep));
	for (p = 0; p < n; p++)
		if (p != me)
			ROK(r, dvx_win_reset_peer_signal(&x->win, p, 3));
	ROK(r, dvx_win_barrier(&x->win, 0, 10 * SEC, &x->rep));
	for (p = 0; p < n; p++)
		if (p != me) {
			ROK(r, dvx_win_read_signal_from(&x->win, p, 3, &v));
			RCHECK(r, v == 0, "signal 3 from %d after its reset: %llu", p, (unsigned long long)v);
		}

	/* 6. refusals: nothing posted, nothing written */
	p = (me + 1) % n;
	scratch = (uint64_t *)(void *)(x->gbuf + SLOT);
	*scratch = 77;
	RWANT(r, dvx_win_fetch_add(&x->win, p, &(struct dvx_win_amo){ 4, 1, 0, &x->gsrc, SLOT }), -EINVAL);
	RCHECK(r, strstr(x->win.diag.msg, "aligned"), "diag: %s", x->win.diag.msg);
	RWANT(r, dvx_win_fetch_add(&x->win, p, &(struct dvx_win_amo){ DATA_LEN, 1, 0, &x->gsrc, SLOT }), -EINVAL);
	RWANT(r, dvx_win_fetch_add(&x->win, p, &(struct dvx_win_amo){ 0, 1, 0, NULL, 0 }), -EINVAL);
	RCHECK(r, strstr(x->win.diag.msg, "result"), "diag: %s", x->win.diag.msg);
	RWANT(r, dvx_win_add(&x->win, p, &(struct dvx_win_amo){ 0, 1, 0, &x->gsrc, SLOT }), -EINVAL);
	RWANT(r, dvx_win_compare_swap(&x->win, p, &(struct dvx_win_amo){ 0, 1, 0, &x->gsrc, SLOT + 60 }), -EINVAL);
	RWANT(r, dvx_win_amo(&x->win, p, 9, &(struct dvx_win_amo){ 0, 1, 0, NULL, 0 }), -EINVAL);
	RWANT(r, dvx_win_amo(&x->win, me, DVX_WIN_AMO_ADD, &(struct dvx_win_amo){ 0, 1, 0, NULL, 0 }), -EINVAL);
	RCHECK(r, *scratch == 77, "a refused fetch wrote its result");
	RWANT(r, dvx_win_get(&x->win, p, &(struct dvx_win_rxfer){ &x->gsrc, 0, 0, 0 }), -EINVAL);
	RWANT(r, dvx_win_get(&x->win, p, &(struct dvx_win_rxfer){ &x->gsrc, 0, DATA_LEN - 8, 16 }), -EINVAL);
	RCHECK(r, strstr(x->win.diag.msg, "outside"), "diag: %s", x->win.diag.msg);
	RWANT(r, dvx_win_get(&x->win, p, &(struct dvx_win_rxfer){ &x->gsrc, SLOT, 0, 65 }), -EINVAL);
	RWANT(r, dvx_win_reset_peer_signal(&x->win, p, NSIG), -EINVAL);
	RWANT(r, dvx_win_get(&x->win, me, &(struct dvx_win_rxfer){ &x->gsrc, 0, 0, 8 }), -EINVAL);
	ROK(r, dvx_win_barrier(&x->win, 0, 10 * SEC, &x->rep));
	return 0;
}

/* a receive of another size: -EMSGSIZE, nothing consumed, then the right one */
static int wr_msgsize(struct wctx *x)
{
	struct wrank *r = x->r;
	int me = x->me;
	int n = x->n;

	if (n >= 2 && me < 2) {
		if (me == 0) {
			ROK(r, dvx_win_send(&x->win, 1, x->sendb, 100, 10 * SEC, &x->rep));
		} else {
			RWANT(r, dvx_win_recv(&x->win, 0, x->rbuf, 50, 10 * SEC, &x->rep), -EMSGSIZE);
			ROK(r, dvx_win_recv(&x->win, 0, x->rbuf, 100, 10 * SEC, &x->rep));
		}
		/* NVL: a small message (flagged lines) met by a receive of a large one, and
		 * the other way round: -EMSGSIZE both, nothing consumed */
		if (me == 0) {
			ROK(r, dvx_win_send(&x->win, 1, x->sendb, 100, 10 * SEC, &x->rep));
			ROK(r, dvx_win_send(&x->win, 1, x->sendb, 200, 10 * SEC, &x->rep));
		} else {
			RWANT(r, dvx_win_recv(&x->win, 0, x->rbuf, 200, 10 * SEC, &x->rep), -EMSGSIZE);
			ROK(r, dvx_win_recv(&x->win, 0, x->rbuf, 100, 10 * SEC, &x->rep));
			RWANT(r, dvx_win_recv(&x->win, 0, x->rbuf, 100, 10 * SEC, &x->rep), -EMSGSIZE);
			ROK(r, dvx_win_recv(&x->win, 0, x->rbuf, 200, 10 * SEC, &x->rep));
		}
	}
	return 0;
}

/* reset_signals zeroes both inboxes' signals */
static int wr_reset(struct wctx *x)
{
	struct wrank *r = x->r;
	uint64_t v;

	ROK(r, dvx_bootstrap_barrier(&x->bs, x->c.timeout_ns));
	ROK(r, dvx_win_reset_signals(&x->win, &x->st));
	ROK(r, dvx_win_read_signal(&x->win, 1, &v));
	RCHECK(r, v == 0, "signals after reset: %llu", (unsigned long long)v);
	return 0;
}

/* the device window: its header and the tables it wrote */
static int wr_devwin(struct wctx *x)
{
	struct wrank *r = x->r;
	int me = x->me;
	int n = x->n;

	/* the device window: the header and the tables it wrote */
	{
		struct dvx_win_dev d;
		struct dvx_win_dev_peer tab[MAXR];

		if (!x->mp.topo.nib) {
			ROK(r, dvx_win_dev_make(&x->win, NULL, &d));
			RCHECK(r, d.version == DVX_WIN_DEV_VERSION && d.size == sizeof(d) && d.rank == me &&
				  d.nranks == n && d.nnvl_peers == x->mp.topo.nnvl_peers && d.nib == 0 &&
				  d.geom.signals == NSIG && d.peers == x->m_dev.dptr,
			       "device window header");
			ROK(r, dvx_gpu_memcpy_dtoh(&x->gpu, tab, d.peers, (uint64_t)n * sizeof(tab[0])));
			RCHECK(r, !memcmp(tab, x->win.peers, (size_t)n * sizeof(tab[0])),
			       "device peer table differs from the host's");
			RWANT(r, dvx_win_dev_make(&x->win, NULL, &d), -EALREADY);	/* once */
		} else {
			RWANT(r, dvx_win_dev_make(&x->win, NULL, &d), -EINVAL);	/* IB needs lanes */
		}
	}
	return 0;
}

/* nobody leaves while a peer may still post to it */
static int wr_leave(struct wctx *x)
{
	struct wrank *r = x->r;

	if (x->mp.ib_live)
		ROK(r, dvx_p2p_flush(&x->mp.ib, x->wc.channel, 10 * SEC, &x->rep));
	ROK(r, dvx_bootstrap_barrier(&x->bs, x->c.timeout_ns));
	return 0;
}

/* everything the phases built, in reverse, whatever phase failed */
static void wr_close(struct wctx *x)
{
	struct wrank *r = x->r;
	int err;

	free(x->sendb);
	free(x->rbuf);
	if (x->get_up && (err = dvx_win_deregister_src(&x->win, x->gbuf)))
		RFAIL(r, "deregister gets' buffer %d", err);
	if (x->src_up && (err = dvx_win_deregister_src(&x->win, x->sbuf)))
		RFAIL(r, "deregister_src %d", err);
	if (x->win_up && (err = dvx_win_fini(&x->win)))
		RFAIL(r, "win_fini %d", err);
	if (x->win_up && dvx_win_fini(&x->win) != -EINVAL)
		RFAIL(r, "a second fini is not -EINVAL");
	if (x->win_up && !r->why[0])
		dvx_bootstrap_barrier(&x->bs, x->c.timeout_ns);	/* unmapped everywhere */
	if (x->getm_up)
		dvx_gpu_mem_free(&x->m_get);
	if (x->srcm_up)
		dvx_gpu_mem_free(&x->m_src);
	if (x->data_up)
		dvx_gpu_mem_free(&x->m_data);
	if (x->dev_up)
		dvx_gpu_mem_free(&x->m_dev);
	if (x->ib_up)
		dvx_gpu_mem_free(&x->m_ib);
	if (x->nvl_up)
		dvx_gpu_mem_free(&x->m_nvl);
	if (x->st_up)
		dvx_gpu_stream_destroy(&x->st);
	if (x->mp_up && (err = dvx_mp_fini(&x->mp)))
		RFAIL(r, "mp_fini %d", err);
	if (x->gpu_up)
		dvx_gpu_close(&x->gpu);
	if (x->nic_up)
		dvx_nic_close(&x->nic);
	dvx_bootstrap_fini(&x->bs);
	free(x->irings);
	free(x->ist);
	free(x->wstate);
	free(x->state);
}

static void rank_run(struct wrank *r)
{
	struct wctx x;
	int (*const phase[])(struct wctx *) = {
		wr_open, wr_regions, wr_refusals, wr_init, wr_exchange, wr_peers, wr_source,
		wr_rounds, wr_checks, wr_rma, wr_msgsize, wr_reset, wr_devwin, wr_leave,
	};
	size_t k;

	memset(&x, 0, sizeof(x));
	x.r = r;
	x.me = r->rank;
	x.n = r->w->n;
	for (k = 0; k < sizeof(phase) / sizeof(phase[0]); k++)
		if (phase[k](&x))
			break;	/* failed (r->why says where), or the world ends here */
	wr_close(&x);
}

static void *rank_thread(void *arg)
{
	rank_run(arg);
	return NULL;
}

static void run_ex(int n, const int *host, uint32_t flags, int rounds, int mismatch, int read,
		   uint32_t nch)
{
	struct world *w = calloc(1, sizeof(*w));
	unsigned what = 0;
	int r, err;

	assert_non_null(w);
	w->n = n;
	w->flags = flags;
	w->rounds = rounds;
	w->mismatch = mismatch;
	w->read = read;
	w->nch = nch;
	assert_int_equal(dvx_tw_init_lanes(&w->tw, n, host, NULL, nch), 0);
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

static void run(int n, const int *host, uint32_t flags, int rounds, int mismatch)
{
	run_ex(n, host, flags, rounds, mismatch, 1, 1);
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
	run_ex(3, h, 0, 4, 0, 0, 1);	/* no remote read: gets to IB peers -EPERM */
	run_ex(3, h, 0, 4, 0, 1, 4);	/* host puts over 4 channels */
	run_ex(2, h, 0, 2, 0, 1, 32);	/* and 32, the fabric sized for them */
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
	run_ex(4, inter, 0, 4, 0, 1, 2);
}

static void test_mismatch(void **state)
{
	static const int h[] = { 0, 1, 0 };

	(void)state;
	run(3, h, 0, 0, 1);	/* rank 1 has another shape: every rank refuses */
	run(3, h, 0, 0, 2);	/* rank 1's arguments are bad: every rank refuses */
	run_ex(3, h, 0, 0, 3, 1, 2);	/* rank 1 puts on 1 channel, the others 2: all refuse */
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
