// SPDX-License-Identifier: MIT
/*
 * The multi-peer transport end to end, ranks as threads in one process on the software
 * NIC and its software GPUs (whose memory is shared memory: the NVLink path runs on
 * the host through dvx/nvl/ops.h, the IB path through the P2P transport executing on
 * the software NIC). Injected topologies: one host (all NVL), every rank its own host
 * (all IB), two hosts with ranks interleaved (mixed), forced IB, and IB disabled where
 * a rank is out of NVLink's reach (every rank fails, the ranks named). Each rank:
 * registers one GPU buffer for IB (a dma-buf on the software NIC), exchanges it over
 * IB and over NVLink, then sends every peer a slot of data and a signal - NVL peers by
 * a copy and a release add into their memory, IB peers by put_signal - and the host
 * path too (a copy on a stream, then a stream-ordered add), waits on the NVL and IB
 * words (never the same word), checks every byte, and exports the device handle (the
 * peer table read back: kinds, indexes, NVL pointers). A fault sweep over dvx_mp_init
 * against the mock closes the file.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "../lib/dvx_test.h"

#include <dvx/mp/mp.h>
#include <dvx/mp/dev.h>
#include <dvx/nvl/ops.h>
#include <dvx/p2p/gpu.h>
#include <dvx/hal/sim.h>
#include <dvx/testing/mock.h>

#include "../lib/sim_world.h"

#define MAXR 6
#define SEC 1000000000ull
#define SLOT 4096u
#define CH 0

struct world;

struct mrank {
	struct world *w;
	int rank;
	char why[200];
};

struct world {
	int n;
	uint32_t flags;
	int want_err;			/* dvx_mp_init must fail with this on every rank */
	struct dvx_tw tw;		/* hosts, facts, fabric, bootstrap group */
	struct mrank r[MAXR];
};

/* layout of each rank's GPU buffer: slots, then NVL words, then IB words */
static uint64_t slot_off(int from) { return (uint64_t)from * SLOT; }
static uint64_t nvl_sig_off(int from) { return (uint64_t)MAXR * SLOT + (uint64_t)from * 64; }
static uint64_t ib_sig_off(int from) { return (uint64_t)MAXR * SLOT + 4096 + (uint64_t)from * 64; }
#define BUF_LEN ((uint64_t)MAXR * SLOT + 8192)

static uint8_t pat(int from, int to, unsigned i, int round)
{
	return (uint8_t)(from * 31 + to * 7 + i + round * 101);
}

#define RFAIL(r, ...) do { if (!(r)->why[0]) snprintf((r)->why, sizeof((r)->why), __VA_ARGS__); \
	dvx_bootstrap_tgroup_abort((r)->w->tw.g, (r)->rank); } while (0)
/* in a phase: a failed call fails the rank and ends the phase */
#define ROK(r, e) do { int e_ = (e); if (e_) { RFAIL(r, "%.120s = %d (line %d)", #e, e_, __LINE__); \
	return -1; } } while (0)
#define RBAD(r, ...) do { RFAIL(r, __VA_ARGS__); return -1; } while (0)

/* one rank's objects, built up by the phases below and torn down by mr_close() */
struct mctx {
	struct mrank *r;
	int me, n;
	struct dvx_bootstrap bs;
	struct dvx_nic nic;
	struct dvx_gpu gpu;
	struct dvx_gpu_mem mem;
	struct dvx_mp mp;
	struct dvx_mp_cfg c;
	struct dvx_mem_req sreq, rreq;
	struct dvx_p2p_lbuf lb;
	struct dvx_p2p_rbuf all[MAXR], ib[MAXR];
	struct dvx_nvl_peer peers[MAXR];
	struct dvx_nvl_buf nb;
	struct dvx_gpu_stream st;
	void *state, *ist, *irings;
	uint8_t *buf;
	int bs_up, mp_up, nvl_up, reg_up, mem_up, gpu_up, nic_up, st_up;
};

/* bootstrap, this rank's software NIC and its host's GPU, the transport's config */
static int mr_open(struct mctx *x)
{
	struct world *w = x->r->w;
	struct dvx_nic_cfg na;
	char name[16];

	ROK(x->r, dvx_bootstrap_thread_init(&x->bs, w->tw.g, x->me));
	x->bs_up = 1;
	memset(&na, 0, sizeof(na));
	snprintf(name, sizeof(name), "sim_%d", x->me);
	na.name = name;
	na.gid_index = -1;
	ROK(x->r, dvx_nic_open(&x->nic, dvx_sim_hal(w->tw.fab), &na));
	x->nic_up = 1;
	/* each host's ranks share that host's GPU 0, 1 ...: ordinal = host */
	ROK(x->r, dvx_gpu_open(&x->gpu, dvx_sim_hal(w->tw.fab), w->tw.host[x->me], NULL));
	x->gpu_up = 1;

	dvx_tw_mp_cfg(&w->tw, x->me, &x->bs, &x->gpu, &x->nic, w->flags, &x->c);
	x->state = aligned_alloc(64, (dvx_mp_mem_size(&x->c) + 63) & ~(size_t)63);
	if (!x->state)
		RBAD(x->r, "no memory for the state");
	return 0;
}

/* refusals name their cause; then the init (or the failure the world expects) */
static int mr_init(struct mctx *x)
{
	struct world *w = x->r->w;
	struct dvx_mp_cfg bad = x->c;
	int err;

	bad.flags |= 1u << 5;
	if (dvx_mp_init(&x->mp, &bad, x->state, dvx_mp_mem_size(&x->c)) != -EINVAL ||
	    !strstr(x->mp.diag.msg, "known flags") ||
	    dvx_mp_init(&x->mp, &x->c, x->state, 64) != -EINVAL ||
	    !strstr(x->mp.diag.msg, "state:"))
		RBAD(x->r, "a refused init names no cause: %s", x->mp.diag.msg);
	memset(&x->mp, 0, sizeof(x->mp));
	err = dvx_mp_init(&x->mp, &x->c, x->state, dvx_mp_mem_size(&x->c));
	if (w->want_err) {
		if (err != w->want_err)
			RBAD(x->r, "dvx_mp_init = %d, want %d", err, w->want_err);
		if (!strstr(x->mp.diag.msg, "rank"))
			RBAD(x->r, "the error names no rank: %s", x->mp.diag.msg);
		return 1;	/* the expected failure: nothing more to do */
	}
	ROK(x->r, err);
	x->mp_up = 1;
	return 0;
}

/* the views agree with the hosts; the IB transport connects */
static int mr_connect(struct mctx *x)
{
	struct world *w = x->r->w;
	int p;

	for (p = 0; p < x->n; p++) {
		int want = p == x->me ? DVX_MP_SELF :
			   (!(w->flags & DVX_MP_F_FORCE_IB) && w->tw.host[p] == w->tw.host[x->me]) ?
			   DVX_MP_NVL : DVX_MP_IB;

		if (dvx_mp_kind(&x->mp, p) != (enum dvx_mp_kind)want)
			RBAD(x->r, "rank %d is %d, want %d", p, dvx_mp_kind(&x->mp, p), want);
	}
	ROK(x->r, dvx_mp_ib_mem_req(&x->mp, &x->sreq, &x->rreq));
	if (x->sreq.bytes) {
		x->ist = aligned_alloc(64, (x->sreq.bytes + 63) & ~(uint64_t)63);
		x->irings = aligned_alloc(4096, (x->rreq.bytes + 4095) & ~(uint64_t)4095);
		if (!x->ist || !x->irings)
			RBAD(x->r, "no memory for the IB regions");
	}
	ROK(x->r, dvx_mp_connect(&x->mp, x->ist, x->sreq.bytes, x->irings, x->rreq.bytes));
	return 0;
}

/* one GPU buffer: registered for IB, exchanged over both; a stream for the host path */
static int mr_exchange(struct mctx *x)
{
	unsigned i;

	ROK(x->r, dvx_gpu_mem_alloc(&x->gpu, BUF_LEN, DVX_GPU_MEM_RDMA | DVX_GPU_MEM_EXPORT,
				    &x->mem));
	x->mem_up = 1;
	x->buf = (uint8_t *)(uintptr_t)x->mem.dptr;
	memset(x->buf, 0, BUF_LEN);
	ROK(x->r, dvx_mp_register(&x->mp, x->buf, BUF_LEN, DVX_MP_REG_WRITE | DVX_MP_REG_ATOMIC,
				  &x->lb));
	x->reg_up = 1;
	if (!(x->mp.reg.e[0].flags & DVX_MP_REG_DMABUF))
		RBAD(x->r, "the GPU buffer was not registered as a dma-buf");
	ROK(x->r, dvx_mp_exchange_ib(&x->mp, &x->lb, x->all, x->ib, x->c.timeout_ns));
	for (i = 0; i < (unsigned)x->mp.topo.nib; i++)
		if (x->ib[i].addr != x->all[x->mp.topo.ib_ranks[i]].addr || !x->ib[i].rkey[0])
			RBAD(x->r, "IB view %u is not rank %d's", i, x->mp.topo.ib_ranks[i]);
	ROK(x->r, dvx_nvl_exchange(&x->nb, x->peers, dvx_mp_nvl_bootstrap(&x->mp), &x->mp.topo,
				   &x->gpu, &(struct dvx_nvl_cfg){ x->buf, BUF_LEN, NULL,
								   x->c.timeout_ns }));
	x->nvl_up = 1;
	ROK(x->r, dvx_gpu_stream_create(&x->gpu, &x->st));
	x->st_up = 1;
	return 0;
}

/* a slot of data and a signal to NVL peer @p: round 0 by the device operations' host
 * form (four lanes, one after another), round 1 by the host path (a stream) */
static int mr_send_nvl(struct mctx *x, int p, int round, const uint8_t *src)
{
	uint8_t *pb = (uint8_t *)(uintptr_t)dvx_nvl_peer_ptr(&x->nb, x->mp.topo.nvl_local[p]);
	int me = x->me, l;

	if (!pb)
		RBAD(x->r, "NVL peer %d not mapped", p);
	if (round == 0) {
		for (l = 0; l < 4; l++)
			dvx_nvl_copy(pb + slot_off(me), src, SLOT, (uint32_t)l, 4);
		ROK(x->r, dvx_nvl_signal((uint64_t *)(void *)(pb + nvl_sig_off(me)),
					 DVX_NVL_SIG_ADD, 1));
		return 0;
	}
	/* the source must be device memory of this rank: stage it in this rank's own
	 * slot of its buffer (unused by peers) */
	memcpy(x->buf + slot_off(me), src, SLOT);
	ROK(x->r, dvx_mp_nvl_put_signal(&x->mp, &x->st, (uint64_t)(uintptr_t)(pb + slot_off(me)),
					(uint64_t)(uintptr_t)(x->buf + slot_off(me)), SLOT,
					(uint64_t)(uintptr_t)(pb + nvl_sig_off(me)),
					DVX_NVL_SIG_ADD, 1));
	ROK(x->r, dvx_gpu_stream_wait(&x->st, 10 * SEC));
	return 0;
}

/* a slot of data and a signal to IB peer @p by put_signal */
static int mr_send_ib(struct mctx *x, int p, const uint8_t *src)
{
	struct dvx_p2p_ticket tk;
	struct dvx_p2p_wait_report rep;
	int ix = x->mp.topo.ib_idx[p], me = x->me;

	memcpy(x->buf + slot_off(me), src, SLOT);
	ROK(x->r, dvx_p2p_put_signal(&x->mp.ib, p, CH,
				     &(struct dvx_p2p_xfer){ &x->lb, slot_off(me), &x->ib[ix],
							     slot_off(me), SLOT },
				     &(struct dvx_p2p_notify){ &x->ib[ix], ib_sig_off(me), 1,
							       NULL, 0, 0 },
				     10 * SEC, &tk));
	ROK(x->r, dvx_p2p_wait_local(&x->mp.ib, &tk, 10 * SEC, &rep));
	return 0;
}

/* each peer's signal on its own word (NVL and IB words never the same), then its bytes */
static int mr_check_from(struct mctx *x, int p, int round)
{
	const uint8_t *buf = x->buf;
	unsigned i;

	if (dvx_mp_kind(&x->mp, p) == DVX_MP_NVL) {
		ROK(x->r, dvx_nvl_wait((const uint64_t *)(const void *)(buf + nvl_sig_off(p)),
				       DVX_CMP_GE, (uint64_t)round + 1, 10 * SEC, NULL));
	} else {
		struct dvx_p2p_wait_report rep;

		ROK(x->r, dvx_p2p_wait_signal(&x->mp.ib, &x->lb, ib_sig_off(p), DVX_CMP_GE,
					      (uint64_t)round + 1, 10 * SEC, &rep));
		/* the NVL word of an IB peer is never touched */
		if (*(const uint64_t *)(const void *)(buf + nvl_sig_off(p)))
			RBAD(x->r, "IB peer %d raised an NVL word", p);
	}
	for (i = 0; i < SLOT; i++)
		if (buf[slot_off(p) + i] != pat(p, x->me, i, round))
			RBAD(x->r, "round %d: byte %u from %d is %u", round, i, p,
			     buf[slot_off(p) + i]);
	return 0;
}

/* two rounds: every peer gets a slot and a signal, every peer's slot is checked */
static int mr_rounds(struct mctx *x)
{
	uint8_t src[SLOT];
	int round, p;
	unsigned i;

	for (round = 0; round < 2; round++) {
		for (p = 0; p < x->n; p++) {
			if (p == x->me)
				continue;
			for (i = 0; i < SLOT; i++)
				src[i] = pat(x->me, p, i, round);
			if (dvx_mp_kind(&x->mp, p) == DVX_MP_NVL ? mr_send_nvl(x, p, round, src) :
								    mr_send_ib(x, p, src))
				return -1;
		}
		for (p = 0; p < x->n; p++)
			if (p != x->me && mr_check_from(x, p, round))
				return -1;
		/* nobody overwrites a slot before its owner read it */
		ROK(x->r, dvx_bootstrap_barrier(&x->bs, x->c.timeout_ns));
	}
	return 0;
}

/* the device handle: the peer table as kernels would see it */
static int mr_device_handle(struct mctx *x)
{
	struct dvx_gpu_hostreg regs[16];
	uint32_t nregs = 0;
	struct dvx_gpu_mem dm;
	struct dvx_mp_dev dev;
	struct dvx_mp_dev_peer tab[MAXR];
	uint64_t need;
	int p;

	ROK(x->r, dvx_mp_dev_mem_req(&x->mp, &need));
	ROK(x->r, dvx_gpu_mem_alloc(&x->gpu, need, 0, &dm));
	if (x->mp.ib_live && x->mp.ib.npeers) {
		if (dvx_p2p_gpu_nregs(&x->mp.ib) > 16)
			RBAD(x->r, "too many registrations");
		ROK(x->r, dvx_p2p_gpu_register(&x->mp.ib, &x->gpu, x->irings, x->rreq.bytes, 0,
					       regs, &nregs));
	}
	ROK(x->r, dvx_mp_dev_export(&x->mp, &x->nb, regs, nregs, dm.dptr, dm.len, 10 * SEC,
				    &dev));
	ROK(x->r, dvx_gpu_memcpy_dtoh(&x->gpu, tab, dev.peers, (uint64_t)x->n * sizeof(tab[0])));
	for (p = 0; p < x->n; p++) {
		int k = dvx_mp_kind(&x->mp, p);
		int idx = k == DVX_MP_IB ? x->mp.topo.ib_idx[p] : x->mp.topo.nvl_local[p];
		uint64_t ptr = k == DVX_MP_IB ? 0 :
			       dvx_nvl_peer_ptr(&x->nb, x->mp.topo.nvl_local[p]);

		if (tab[p].kind != (uint32_t)k || tab[p].index != idx || tab[p].nvl_ptr != ptr)
			RBAD(x->r, "device table entry %d: %u/%d/%llx", p, tab[p].kind,
			     tab[p].index, (unsigned long long)tab[p].nvl_ptr);
	}
	if (dev.has_ib != (x->mp.topo.nib > 0) || dev.nnvl != x->mp.topo.nnvl ||
	    (dev.has_ib && dev.ib.npeers != (uint32_t)x->mp.topo.nib))
		RBAD(x->r, "device handle header");
	ROK(x->r, dvx_mp_dev_import(&x->mp, &dev));
	if (nregs)
		ROK(x->r, dvx_p2p_gpu_unregister(regs, nregs));
	ROK(x->r, dvx_gpu_mem_free(&dm));
	return 0;
}

/* nobody leaves while a peer may still post to it */
static int mr_leave(struct mctx *x)
{
	if (x->mp.ib_live)
		ROK(x->r, dvx_p2p_flush(&x->mp.ib, CH, 10 * SEC, NULL));
	ROK(x->r, dvx_bootstrap_barrier(&x->bs, x->c.timeout_ns));
	return 0;
}

/* everything the phases built, in reverse, whatever phase failed */
static void mr_close(struct mctx *x)
{
	struct mrank *r = x->r;
	int err;

	if (x->st_up)
		dvx_gpu_stream_destroy(&x->st);
	if (x->nvl_up)
		dvx_nvl_unmap(&x->nb);
	if (x->nvl_up && !r->why[0])
		dvx_bootstrap_barrier(&x->bs, x->c.timeout_ns);	/* unmapped everywhere */
	if (x->reg_up && (err = dvx_mp_deregister(&x->mp, x->buf)))
		RFAIL(r, "deregister %d", err);
	if (x->mem_up && (err = dvx_gpu_mem_free(&x->mem)))
		RFAIL(r, "mem_free %d", err);
	if (x->mp_up && (err = dvx_mp_fini(&x->mp)))
		RFAIL(r, "fini %d", err);
	if (x->gpu_up)
		dvx_gpu_close(&x->gpu);
	if (x->nic_up)
		dvx_nic_close(&x->nic);
	if (x->bs_up)
		dvx_bootstrap_fini(&x->bs);
	free(x->irings);
	free(x->ist);
	free(x->state);
}

static void rank_run(struct mrank *r)
{
	struct mctx x;

	memset(&x, 0, sizeof(x));
	x.r = r;
	x.me = r->rank;
	x.n = r->w->n;
	if (!mr_open(&x) && !mr_init(&x) && !mr_connect(&x) && !mr_exchange(&x) &&
	    !mr_rounds(&x) && !mr_device_handle(&x))
		mr_leave(&x);
	mr_close(&x);
}

static void *rank_thread(void *arg)
{
	rank_run(arg);
	return NULL;
}

static void run(int n, const int *host, uint32_t flags, int want_err)
{
	struct world *w = calloc(1, sizeof(*w));
	unsigned what = 0;
	int r, err;

	assert_non_null(w);
	w->n = n;
	w->flags = flags;
	w->want_err = want_err;
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
	run(1, h, 0, 0);
	run(2, h, 0, 0);
	run(4, h, 0, 0);
}

static void test_all_ib(void **state)
{
	static const int h[] = { 0, 1, 2, 3 };

	(void)state;
	run(2, h, 0, 0);
	run(4, h, 0, 0);
}

static void test_mixed(void **state)
{
	static const int inter[] = { 0, 1, 0, 1, 0, 1 };
	static const int blocks[] = { 0, 0, 0, 1, 1, 2 };

	(void)state;
	run(6, inter, 0, 0);
	run(6, blocks, 0, 0);
	run(4, inter, DVX_MP_F_FORCE_IB, 0);
}

static void test_no_ib(void **state)
{
	static const int h[] = { 0, 0, 1 };

	(void)state;
	run(3, h, DVX_MP_F_NO_IB, -EHOSTUNREACH);
	run(2, h, DVX_MP_F_NO_IB, 0);	/* one host: fine */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_host),
		cmocka_unit_test(test_all_ib),
		cmocka_unit_test(test_mixed),
		cmocka_unit_test(test_no_ib),
	};

	return cmocka_run_group_tests_name("mp-e2e", tests, NULL, NULL);
}
