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
#define ROK(r, e) do { int e_ = (e); if (e_) { RFAIL(r, "%.120s = %d (line %d)", #e, e_, __LINE__); \
	goto out; } } while (0)

static void rank_run(struct mrank *r)
{
	struct world *w = r->w;
	int me = r->rank, n = w->n, p, l;
	struct dvx_bootstrap bs;
	struct dvx_nic nic;
	struct dvx_nic_cfg na;
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
	void *state = NULL, *ist = NULL, *irings = NULL;
	char name[16];
	uint8_t *buf, src[SLOT];
	int mp_up = 0, nvl_up = 0, reg_up = 0, mem_up = 0, gpu_up = 0, nic_up = 0, st_up = 0;
	unsigned i;
	int err;

	ROK(r, dvx_bootstrap_thread_init(&bs, w->tw.g, me));
	memset(&na, 0, sizeof(na));
	snprintf(name, sizeof(name), "sim_%d", me);
	na.name = name;
	na.gid_index = -1;
	ROK(r, dvx_nic_open(&nic, dvx_sim_hal(w->tw.fab), &na));
	nic_up = 1;
	/* each host's ranks share that host's GPU 0, 1 ...: ordinal = host */
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
	err = dvx_mp_init(&mp, &c, state, dvx_mp_mem_size(&c));
	if (w->want_err) {
		if (err != w->want_err)
			RFAIL(r, "dvx_mp_init = %d, want %d", err, w->want_err);
		else if (!strstr(mp.diag.msg, "rank"))
			RFAIL(r, "the error names no rank: %s", mp.diag.msg);
		goto out;
	}
	ROK(r, err);
	mp_up = 1;
	/* the views agree with the hosts */
	for (p = 0; p < n; p++) {
		int want = p == me ? DVX_MP_SELF :
			   (!(w->flags & DVX_MP_F_FORCE_IB) && w->tw.host[p] == w->tw.host[me]) ?
			   DVX_MP_NVL : DVX_MP_IB;

		if (dvx_mp_kind(&mp, p) != (enum dvx_mp_kind)want) {
			RFAIL(r, "rank %d is %d, want %d", p, dvx_mp_kind(&mp, p), want);
			goto out;
		}
	}
	ROK(r, dvx_mp_ib_mem_req(&mp, &sreq, &rreq));
	if (sreq.bytes) {
		ist = aligned_alloc(64, (sreq.bytes + 63) & ~(uint64_t)63);
		irings = aligned_alloc(4096, (rreq.bytes + 4095) & ~(uint64_t)4095);
	}
	ROK(r, dvx_mp_connect(&mp, ist, sreq.bytes, irings, rreq.bytes));

	/* one GPU buffer: registered for IB, exchanged over both */
	ROK(r, dvx_gpu_mem_alloc(&gpu, BUF_LEN, DVX_GPU_MEM_RDMA | DVX_GPU_MEM_EXPORT, &mem));
	mem_up = 1;
	buf = (uint8_t *)(uintptr_t)mem.dptr;
	memset(buf, 0, BUF_LEN);
	ROK(r, dvx_mp_register(&mp, buf, BUF_LEN, DVX_MP_REG_WRITE | DVX_MP_REG_ATOMIC, &lb));
	reg_up = 1;
	if (!(mp.reg.e[0].flags & DVX_MP_REG_DMABUF)) {
		RFAIL(r, "the GPU buffer was not registered as a dma-buf");
		goto out;
	}
	ROK(r, dvx_mp_exchange_ib(&mp, &lb, all, ib, c.timeout_ns));
	for (i = 0; i < (unsigned)mp.topo.nib; i++)
		if (ib[i].addr != all[mp.topo.ib_ranks[i]].addr || !ib[i].rkey[0]) {
			RFAIL(r, "IB view %u is not rank %d's", i, mp.topo.ib_ranks[i]);
			goto out;
		}
	ROK(r, dvx_nvl_exchange(&nb, peers, dvx_mp_nvl_bootstrap(&mp), &mp.topo, &gpu,
				&(struct dvx_nvl_cfg){ buf, BUF_LEN, NULL, c.timeout_ns }));
	nvl_up = 1;
	ROK(r, dvx_gpu_stream_create(&gpu, &st));
	st_up = 1;

	/* two rounds: round 0 by the device operations' host form, round 1 by the
	 * host-initiated path (a stream) for NVL peers */
	for (int round = 0; round < 2; round++) {
		for (p = 0; p < n; p++) {
			if (p == me)
				continue;
			for (i = 0; i < SLOT; i++)
				src[i] = pat(me, p, i, round);
			if (dvx_mp_kind(&mp, p) == DVX_MP_NVL) {
				uint8_t *pb = (uint8_t *)(uintptr_t)dvx_nvl_peer_ptr(&nb,
									      mp.topo.nvl_local[p]);

				if (!pb) {
					RFAIL(r, "NVL peer %d not mapped", p);
					goto out;
				}
				if (round == 0) {
					for (l = 0; l < 4; l++)	/* four lanes, one after another */
						dvx_nvl_copy(pb + slot_off(me), src, SLOT, (uint32_t)l, 4);
					ROK(r, dvx_nvl_signal((uint64_t *)(void *)(pb + nvl_sig_off(me)),
							      DVX_NVL_SIG_ADD, 1));
				} else {
					/* the source must be device memory of this rank: stage it
					 * in this rank's own slot of its buffer (unused by peers) */
					memcpy(buf + slot_off(me), src, SLOT);
					ROK(r, dvx_mp_nvl_put_signal(&mp, &st,
								     (uint64_t)(uintptr_t)(pb + slot_off(me)),
								     (uint64_t)(uintptr_t)(buf + slot_off(me)),
								     SLOT,
								     (uint64_t)(uintptr_t)(pb + nvl_sig_off(me)),
								     DVX_NVL_SIG_ADD, 1));
					ROK(r, dvx_gpu_stream_wait(&st, 10 * SEC));
				}
			} else {
				struct dvx_p2p_ticket tk;
				struct dvx_p2p_wait_report rep;
				int ix = mp.topo.ib_idx[p];

				memcpy(buf + slot_off(me), src, SLOT);
				ROK(r, dvx_p2p_put_signal(&mp.ib, p, CH,
							  &(struct dvx_p2p_xfer){
								  &lb, slot_off(me), &ib[ix],
								  slot_off(me), SLOT },
							  &(struct dvx_p2p_notify){ &ib[ix],
										    ib_sig_off(me),
										    1, NULL, 0, 0 },
							  10 * SEC, &tk));
				ROK(r, dvx_p2p_wait_local(&mp.ib, &tk, 10 * SEC, &rep));
			}
		}
		/* each peer's signal on its own word, then its bytes */
		for (p = 0; p < n; p++) {
			const uint64_t *word;

			if (p == me)
				continue;
			if (dvx_mp_kind(&mp, p) == DVX_MP_NVL) {
				word = (const uint64_t *)(const void *)(buf + nvl_sig_off(p));
				ROK(r, dvx_nvl_wait(word, DVX_CMP_GE, (uint64_t)round + 1, 10 * SEC,
						    NULL));
			} else {
				struct dvx_p2p_wait_report rep;

				ROK(r, dvx_p2p_wait_signal(&mp.ib, &lb, ib_sig_off(p), DVX_CMP_GE,
							   (uint64_t)round + 1, 10 * SEC, &rep));
				/* the NVL word of an IB peer is never touched */
				if (*(const uint64_t *)(const void *)(buf + nvl_sig_off(p))) {
					RFAIL(r, "IB peer %d raised an NVL word", p);
					goto out;
				}
			}
			for (i = 0; i < SLOT; i++)
				if (buf[slot_off(p) + i] != pat(p, me, i, round)) {
					RFAIL(r, "round %d: byte %u from %d is %u", round, i, p,
					      buf[slot_off(p) + i]);
					goto out;
				}
		}
		/* nobody overwrites a slot before its owner read it */
		ROK(r, dvx_bootstrap_barrier(&bs, c.timeout_ns));
	}

	/* the device handle: the peer table as kernels would see it */
	{
		struct dvx_gpu_hostreg regs[16];
		uint32_t nregs = 0;
		struct dvx_gpu_mem dm;
		struct dvx_mp_dev dev;
		struct dvx_mp_dev_peer tab[MAXR];
		uint64_t need;

		ROK(r, dvx_mp_dev_mem_req(&mp, &need));
		ROK(r, dvx_gpu_mem_alloc(&gpu, need, 0, &dm));
		if (mp.ib_live && mp.ib.npeers) {
			if (dvx_p2p_gpu_nregs(&mp.ib) > 16) {
				RFAIL(r, "too many registrations");
				goto out;
			}
			ROK(r, dvx_p2p_gpu_register(&mp.ib, &gpu, irings, rreq.bytes, 0, regs,
						    &nregs));
		}
		ROK(r, dvx_mp_dev_export(&mp, &nb, regs, nregs, dm.dptr, dm.len, 10 * SEC, &dev));
		ROK(r, dvx_gpu_memcpy_dtoh(&gpu, tab, dev.peers, (uint64_t)n * sizeof(tab[0])));
		for (p = 0; p < n; p++) {
			int k = dvx_mp_kind(&mp, p);
			int idx = k == DVX_MP_IB ? mp.topo.ib_idx[p] : mp.topo.nvl_local[p];
			uint64_t ptr = k == DVX_MP_IB ? 0 : dvx_nvl_peer_ptr(&nb, mp.topo.nvl_local[p]);

			if (tab[p].kind != (uint32_t)k || tab[p].index != idx || tab[p].nvl_ptr != ptr) {
				RFAIL(r, "device table entry %d: %u/%d/%llx", p, tab[p].kind,
				      tab[p].index, (unsigned long long)tab[p].nvl_ptr);
				goto out;
			}
		}
		if (dev.has_ib != (mp.topo.nib > 0) || dev.nnvl != mp.topo.nnvl ||
		    (dev.has_ib && dev.ib.npeers != (uint32_t)mp.topo.nib)) {
			RFAIL(r, "device handle header");
			goto out;
		}
		ROK(r, dvx_mp_dev_import(&mp, &dev));
		if (nregs)
			ROK(r, dvx_p2p_gpu_unregister(regs, nregs));
		ROK(r, dvx_gpu_mem_free(&dm));
	}
	/* nobody leaves while a peer may still post to it */
	if (mp.ib_live)
		ROK(r, dvx_p2p_flush(&mp.ib, CH, 10 * SEC, NULL));
	ROK(r, dvx_bootstrap_barrier(&bs, c.timeout_ns));
out:
	if (st_up)
		dvx_gpu_stream_destroy(&st);
	if (nvl_up)
		dvx_nvl_unmap(&nb);
	if (nvl_up && !r->why[0])
		dvx_bootstrap_barrier(&bs, c.timeout_ns);	/* unmapped everywhere */
	if (reg_up && (err = dvx_mp_deregister(&mp, buf)))
		RFAIL(r, "deregister %d", err);
	if (mem_up && (err = dvx_gpu_mem_free(&mem)))
		RFAIL(r, "mem_free %d", err);
	if (mp_up && (err = dvx_mp_fini(&mp)))
		RFAIL(r, "fini %d", err);
	if (gpu_up)
		dvx_gpu_close(&gpu);
	if (nic_up)
		dvx_nic_close(&nic);
	dvx_bootstrap_fini(&bs);
	free(irings);
	free(ist);
	free(state);
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
