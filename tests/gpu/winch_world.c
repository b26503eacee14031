// SPDX-License-Identifier: MIT
/*
 * tests/gpu/winch_world.c - see winch_world.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dvx/gpu/gpu.h>
#include <dvx/win/win.h>
#include <dvx/p2p/gpu.h>
#include <dvx/hal/sim.h>

#include "../lib/sim_world.h"
#include "../lib/gpu_dma.h"
#include "winch_world.h"

extern const unsigned char dvx_fatbin_tests_gpu_winch_kernels[];
extern const size_t dvx_fatbin_tests_gpu_winch_kernels_len;

#define SEC 1000000000ull
#define TMO (60 * SEC)
#define PUTMAX (4ull << 20)		/* the put area of the window buffer */
#define FWORD PUTMAX			/* the fetch-add word */
#define GOFF (PUTMAX + 4096)		/* the get area */
#define GETMAX 65536ull
#define DLEN (GOFF + GETMAX)
#define RESMAX (32ull * 1024 * 8)	/* fetch-add results: 32 lanes x 1024 calls */
#define LOCLEN (GETMAX + RESMAX)
#define THREADS 128

struct world {
	struct dvx_tw tw;
	struct dvx_gdma gdma;		/* gpu_data: the GPUs' hal whose dma-bufs the fabric reaches */
	const struct winch_opts *o;
	struct winch_res *res;
	int ngpus;
	int ret[2];
	char why[2][200];
};

#define CK(e) do { int e_ = (e); if (e_) { snprintf(W->why[me], sizeof(W->why[me]), "line %d: %s = %d", \
	__LINE__, #e, e_); return 1; } } while (0)
#define CHECK(c, ...) do { if (!(c)) { snprintf(W->why[me], sizeof(W->why[me]), __VA_ARGS__); return 1; } } while (0)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
}

static uint8_t ppat(uint32_t run, uint64_t i)
{
	return (uint8_t)(run * 29u + (uint32_t)(i * 7u) + (uint32_t)(i >> 12) + 3u);
}

static uint8_t gpat(uint64_t i)
{
	return (uint8_t)(i * 13u + (i >> 8) + 0x41u);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* spin on one of this rank's words (read with the window's host reads: the lanes are
 * the GPU's, so no host wait that polls them) until it is @want; -ETIMEDOUT, or
 * -EOVERFLOW when it passed @want */
static int spin(struct dvx_win *w, int ctr, int peer, uint64_t want, uint64_t *seen)
{
	uint64_t t0 = now_ns(), v = 0;
	int err;

	for (;;) {
		err = ctr ? dvx_win_read_counter(w, peer, 0, &v) :
			    dvx_win_read_signal_from(w, peer, 0, &v);
		*seen = v;
		if (err)
			return err;
		if (v == want)
			return 0;
		if (v > want)
			return -EOVERFLOW;
		if (now_ns() - t0 > TMO)
			return -ETIMEDOUT;
	}
}

/* host bytes into a buffer of the run (host memory, or GPU memory by a copy) */
static int wr(struct dvx_gpu *g, int gpu_data, uint8_t *dst, const void *src, uint64_t len)
{
	if (!gpu_data) {
		memcpy(dst, src, len);
		return 0;
	}
	return dvx_gpu_memcpy_htod(g, (uint64_t)(uintptr_t)dst, src, len);
}

/* a buffer's bytes into host memory (a copy of GPU memory, or the bytes themselves) */
static int rdb(struct dvx_gpu *g, int gpu_data, void *dst, const uint8_t *src, uint64_t len)
{
	if (!gpu_data) {
		memcpy(dst, src, len);
		return 0;
	}
	return dvx_gpu_memcpy_dtoh(g, dst, (uint64_t)(uintptr_t)src, len);
}

static int launch(struct dvx_gpu *g, void *f, uint32_t grid, uint32_t block,
		  struct dvx_gpu_stream *s, void **a, uint64_t *ns)
{
	uint64_t t0 = now_ns();
	int err = dvx_gpu_launch(g, f, grid, block, 0, s, a);

	if (!err)
		err = dvx_gpu_stream_wait(s, 2 * TMO);
	*ns = now_ns() - t0;
	return err;
}

static int rank_run(struct world *W, int me)
{
	const struct winch_opts *o = W->o;
	struct winch_res *res = W->res;
	struct dvx_bootstrap bs;
	struct dvx_gpu g;
	struct dvx_nic nic;
	struct dvx_nic_cfg na;
	struct dvx_mp mp;
	struct dvx_mp_cfg c;
	struct dvx_mem_req sreq, rreq;
	struct dvx_win win;
	struct dvx_win_cfg wc;
	struct dvx_mem_req req[DVX_WIN_MEM_N];
	struct dvx_win_regions mem;
	struct dvx_win_dev d;
	struct dvx_gpu_mem nvl, dev, dm, gdata, gsrc, gloc;
	struct dvx_gpu_hostreg *regs, hr, hdata, hsrc, hloc, hst;
	struct dvx_mp_dev mpdev;
	struct dvx_gpu_stream s;
	struct dvx_gpu_module mod;
	struct dvx_p2p_lbuf src, loc;
	void *k_put, *k_get, *k_fadd, *state, *wstate, *ist, *irings, *ibmem;
	uint8_t *data, *srcp, *locp, *hb;	/* hb: host staging for GPU-memory runs */
	int gd = o->gpu_data;
	int32_t *st;
	uint64_t need, out, cum = 0, seen, ns, i, fadds = 0;
	uint32_t nregs = 0;
	char name[16];
	int k, e;

	CK(dvx_bootstrap_thread_init(&bs, W->tw.g, me));
	memset(&g, 0, sizeof(g));
	CK(dvx_gpu_open(&g, gd ? dvx_gdma_hal(&W->gdma) : dvx_hal_cuda(), me % W->ngpus, NULL));
	memset(&na, 0, sizeof(na));
	snprintf(name, sizeof(name), "sim_%d", me);
	na.name = name;
	na.gid_index = -1;
	CK(dvx_nic_open(&nic, dvx_sim_hal(W->tw.fab), &na));
	memset(&c, 0, sizeof(c));
	c.rank = me;
	c.nranks = 2;
	c.bs = &bs;
	c.gpu = &g;
	c.ib.nnics = 1;
	c.ib.nics[0] = &nic;
	c.ib.qps_per_nic = o->nch;
	c.ib.sq_depth = 256;
	c.ib.comp_depth = 256;
	c.ib.flags = DVX_P2P_F_READ;
	c.inject = W->tw.inf;
	c.timeout_ns = TMO;
	state = aligned_alloc(64, (dvx_mp_mem_size(&c) + 63) & ~(size_t)63);
	CK(dvx_mp_init(&mp, &c, state, dvx_mp_mem_size(&c)));
	CK(dvx_mp_ib_mem_req(&mp, &sreq, &rreq));
	ist = aligned_alloc(64, (sreq.bytes + 63) & ~(uint64_t)63);
	irings = aligned_alloc(4096, (rreq.bytes + 4095) & ~(uint64_t)4095);
	CK(dvx_mp_connect(&mp, ist, sreq.bytes, irings, rreq.bytes));
	CK(dvx_gpu_module_load(&g, dvx_fatbin_tests_gpu_winch_kernels,
			       dvx_fatbin_tests_gpu_winch_kernels_len, &mod));
	CK(dvx_gpu_module_function(&mod, "wch_put", &k_put));
	CK(dvx_gpu_module_function(&mod, "wch_get", &k_get));
	CK(dvx_gpu_module_function(&mod, "wch_fadd", &k_fadd));
	CK(dvx_gpu_stream_create(&g, &s));
	st = aligned_alloc(4096, 4096);
	CK(dvx_gpu_host_register(&g, st, 4096, 0, &hst));
	out = hst.dptr;

	memset(&wc, 0, sizeof(wc));
	wc.signals = 1;
	wc.counters = 1;
	wc.barriers = 1;
	wc.flags = DVX_WIN_F_IB_HOST | DVX_WIN_F_READ;
	wc.stream = &s;
	wc.timeout_ns = TMO;
	wc.nchannels = o->nch;
	CK(dvx_win_mem_req(&mp, &wc, req));
	wstate = aligned_alloc(64, (req[DVX_WIN_MEM_STATE].bytes + 63) & ~(uint64_t)63);
	memset(&mem, 0, sizeof(mem));
	mem.state = wstate;
	mem.state_len = req[DVX_WIN_MEM_STATE].bytes;
	if (req[DVX_WIN_MEM_NVL].bytes) {
		CK(dvx_gpu_mem_alloc(&g, req[DVX_WIN_MEM_NVL].bytes, DVX_GPU_MEM_EXPORT, &nvl));
		mem.nvl = (void *)(uintptr_t)nvl.dptr;
		mem.nvl_len = req[DVX_WIN_MEM_NVL].bytes;
	}
	ibmem = aligned_alloc(4096, (req[DVX_WIN_MEM_IB].bytes + 4095) & ~(uint64_t)4095);
	CK(dvx_gpu_host_register(&g, ibmem, req[DVX_WIN_MEM_IB].bytes, 0, &hr));
	mem.ib = ibmem;
	mem.ib_len = req[DVX_WIN_MEM_IB].bytes;
	CK(dvx_gpu_mem_alloc(&g, req[DVX_WIN_MEM_DEV].bytes, 0, &dev));
	mem.dev = dev.dptr;
	mem.dev_len = req[DVX_WIN_MEM_DEV].bytes;
	memset(&win, 0, sizeof(win));
	CK(dvx_win_init(&win, &mp, &wc, &mem));
	hb = aligned_alloc(4096, DLEN);
	CHECK(hb, "no host memory");
	if (gd) {
		CK(dvx_gpu_mem_alloc(&g, DLEN, 0, &gdata));
		CK(dvx_gpu_mem_alloc(&g, PUTMAX, 0, &gsrc));
		CK(dvx_gpu_mem_alloc(&g, LOCLEN, 0, &gloc));
		data = (uint8_t *)(uintptr_t)gdata.dptr;
		srcp = (uint8_t *)(uintptr_t)gsrc.dptr;
		locp = (uint8_t *)(uintptr_t)gloc.dptr;
	} else {
		data = aligned_alloc(4096, DLEN);
		srcp = aligned_alloc(4096, PUTMAX);
		locp = aligned_alloc(4096, LOCLEN);
		CK(dvx_gpu_host_register(&g, data, DLEN, 0, &hdata));
		CK(dvx_gpu_host_register(&g, srcp, PUTMAX, 0, &hsrc));
		CK(dvx_gpu_host_register(&g, locp, LOCLEN, 0, &hloc));
	}
	memset(hb, 0, DLEN);
	for (i = 0; i < GETMAX; i++)
		hb[GOFF + i] = gpat(i);
	CK(wr(&g, gd, data, hb, DLEN));
	memset(hb, 0, LOCLEN);
	CK(wr(&g, gd, locp, hb, LOCLEN));
	CK(dvx_win_exchange(&win, data, DLEN));
	CK(dvx_win_register_src(&win, srcp, PUTMAX, &src));
	CK(dvx_win_register_src(&win, locp, LOCLEN, &loc));
	/* the ring region and a UAR page per lane at most */
	regs = calloc(dvx_p2p_gpu_nregs(&mp.ib), sizeof(*regs));
	CHECK(regs, "calloc of %u registrations", dvx_p2p_gpu_nregs(&mp.ib));
	CK(dvx_p2p_gpu_register(&mp.ib, &g, irings, rreq.bytes, 0, regs, &nregs));
	CK(dvx_mp_dev_mem_req(&mp, &need));
	CK(dvx_gpu_mem_alloc(&g, need, 0, &dm));
	CK(dvx_mp_dev_export(&mp, NULL, regs, nregs, dm.dptr, dm.len, TMO, &mpdev));
	CK(dvx_win_dev_make(&win, &mpdev, &d));
	CHECK(d.nchannels == o->nch, "the device window has %u channels", d.nchannels);
	CK(dvx_bootstrap_barrier(&bs, TMO));

	/* 1. puts from each block count: rank 0 to rank 1 */
	for (k = 0; k < o->nblocks; k++) {
		uint32_t nb = o->blocks[k], iters = o->put_iters;
		uint64_t share = (o->put_bytes / nb) & ~(uint64_t)63, want = cum + (uint64_t)nb * iters;
		void *a[] = { &d, &src, &share, &iters, &out };

		CHECK(share && nb * share <= PUTMAX && nb <= 1024, "put of %u blocks: share %llu", nb,
		      (unsigned long long)share);
		if (me == 0) {
			for (i = 0; i < nb * share; i++)
				hb[i] = ppat((uint32_t)k + 1, i);
			CK(wr(&g, gd, srcp, hb, nb * share));
		}
		CK(dvx_bootstrap_barrier(&bs, TMO));
		if (me == 0) {
			uint64_t t0 = now_ns();

			for (i = 0; i < nb; i++)
				st[i] = 0x7f7f7f7f;
			CK(launch(&g, k_put, nb, THREADS, &s, a, &ns));
			for (i = 0; i < nb; i++)
				CHECK(st[i] == 0, "%u blocks, %u channels: block %llu says %d", nb, o->nch,
				      (unsigned long long)i, st[i]);
			/* every put acknowledged: the counter, exact */
			e = spin(&win, 1, 1, want, &seen);
			CHECK(!e, "%u blocks, %u channels: counter %llu, want %llu (%d)", nb, o->nch,
			      (unsigned long long)seen, (unsigned long long)want, e);
			ns = now_ns() - t0;
			res->put_gbs[k] = (double)(nb * share) * iters / (double)ns;
			res->checked++;
		} else {
			e = spin(&win, 0, 0, want, &seen);
			CHECK(!e, "%u blocks, %u channels: signal %llu, want %llu (%d)", nb, o->nch,
			      (unsigned long long)seen, (unsigned long long)want, e);
			CK(rdb(&g, gd, hb, data, nb * share));
			for (i = 0; i < nb * share; i++)
				CHECK(hb[i] == ppat((uint32_t)k + 1, i),
				      "%u blocks, %u channels: byte %llu is %#x, want %#x", nb, o->nch,
				      (unsigned long long)i, hb[i], ppat((uint32_t)k + 1, i));
			res->checked += nb * share;
		}
		CK(dvx_bootstrap_barrier(&bs, TMO));
		/* nothing more came: the signal and the counter stay exact */
		if (me == 1) {
			CK(dvx_win_read_signal_from(&win, 0, 0, &seen));
			CHECK(seen == want, "signal %llu after the barrier, want %llu",
			      (unsigned long long)seen, (unsigned long long)want);
		} else {
			CK(dvx_win_read_counter(&win, 1, 0, &seen));
			CHECK(seen == want, "counter %llu after the barrier, want %llu",
			      (unsigned long long)seen, (unsigned long long)want);
		}
		cum = want;
	}

	/* 2. gets by rank 0: 8 B and 4 KiB waited for one by one, then 8 B for the rate */
	if (me == 0) {
		static const uint64_t lens[3] = { 8, 4096, 8 };

		for (k = 0; k < 3; k++) {
			uint64_t len = lens[k], soff = GOFF + 8 + 64 * (uint64_t)k;
			uint32_t iters = k < 2 ? o->lat_iters : o->rate_iters;
			int each = k < 2;
			void *a[] = { &d, &loc, &soff, &len, &iters, &each, &out };

			memset(hb, 0, GETMAX);
			CK(wr(&g, gd, locp, hb, GETMAX));
			st[0] = 0x7f7f7f7f;
			CK(launch(&g, k_get, 1, 1, &s, a, &ns));
			CHECK(st[0] == 0, "get of %llu B: %d", (unsigned long long)len, st[0]);
			CK(rdb(&g, gd, hb, locp, len));
			for (i = 0; i < len; i++)
				CHECK(hb[i] == gpat(soff - GOFF + i), "get of %llu B: byte %llu",
				      (unsigned long long)len, (unsigned long long)i);
			res->checked += len;
			if (k < 2)
				res->get_lat_ns[k] = (double)ns / iters;
			else
				res->get_rate = (double)iters * 1e9 / (double)ns;
		}
	}
	CK(dvx_bootstrap_barrier(&bs, TMO));

	/* 3. fetch-adds by rank 0 on rank 1's word: one at a time (old values 0, 1, ...),
	 * then 32 lanes a call (old values a permutation of the next ones) */
	if (me == 0) {
		uint32_t lat = o->lat_iters, rate = o->rate_iters, lanes;
		uint64_t *r = (uint64_t *)(void *)hb, *v;
		uint64_t doff = FWORD, roff = GETMAX;
		int each;

		CHECK(rate <= RESMAX / 256 && lat <= RESMAX / 256, "too many fetch-adds");
		for (k = 0; k < 2; k++) {
			uint32_t iters = k ? rate : lat;
			void *a[] = { &d, &loc, &roff, &doff, &iters, &lanes, &each, &out };

			lanes = k ? 32 : 1;
			each = !k;
			memset(r, 0xff, RESMAX);
			CK(wr(&g, gd, locp + GETMAX, r, RESMAX));
			st[0] = 0x7f7f7f7f;
			CK(launch(&g, k_fadd, 1, 32, &s, a, &ns));
			CHECK(st[0] == 0, "fetch-adds: %d", st[0]);
			CK(rdb(&g, gd, r, locp + GETMAX, RESMAX));
			v = malloc((size_t)iters * lanes * 8);
			CHECK(v, "malloc");
			for (i = 0; i < (uint64_t)iters * lanes; i++)
				v[i] = r[(i / lanes) * 32 + i % lanes];
			if (k) {
				qsort(v, (size_t)iters * lanes, 8, cmp_u64);
			}
			for (i = 0; i < (uint64_t)iters * lanes; i++)
				if (v[i] != fadds + i)
					break;
			e = i < (uint64_t)iters * lanes;
			if (e)
				snprintf(W->why[me], sizeof(W->why[me]),
					 "fetch-adds (%u lanes): old value %llu is %llu", lanes,
					 (unsigned long long)i, (unsigned long long)v[i]);
			free(v);
			if (e)
				return 1;
			fadds += (uint64_t)iters * lanes;
			res->checked += (uint64_t)iters * lanes;
			if (k)
				res->fadd_rate = (double)iters * lanes * 1e9 / (double)ns;
			else
				res->fadd_lat_ns = (double)ns / iters;
		}
		st[1] = (int32_t)fadds;
	}
	CK(dvx_bootstrap_barrier(&bs, TMO));
	if (me == 1) {
		uint64_t want = (uint64_t)o->lat_iters + 32ull * o->rate_iters, w;

		if (gd)
			CK(rdb(&g, gd, &w, data + FWORD, 8));
		else
			w = __atomic_load_n((uint64_t *)(void *)(data + FWORD), __ATOMIC_ACQUIRE);
		CHECK(w == want, "the fetch-add word is %llu, want %llu", (unsigned long long)w,
		      (unsigned long long)want);
	}

	CK(dvx_bootstrap_barrier(&bs, TMO));
	CK(dvx_mp_dev_import(&mp, &mpdev));
	CK(dvx_p2p_gpu_unregister(regs, nregs));
	free(regs);
	CK(dvx_win_flush(&win, TMO, NULL));
	CK(dvx_bootstrap_barrier(&bs, TMO));
	CK(dvx_win_deregister_src(&win, locp));
	CK(dvx_win_deregister_src(&win, srcp));
	CK(dvx_win_fini(&win));
	CK(dvx_bootstrap_barrier(&bs, TMO));
	CK(dvx_gpu_host_unregister(&hr));
	if (gd) {
		dvx_gpu_mem_free(&gloc);
		dvx_gpu_mem_free(&gsrc);
		dvx_gpu_mem_free(&gdata);
	} else {
		CK(dvx_gpu_host_unregister(&hdata));
		CK(dvx_gpu_host_unregister(&hsrc));
		CK(dvx_gpu_host_unregister(&hloc));
		free(data);
		free(srcp);
		free(locp);
	}
	dvx_gpu_mem_free(&dm);
	dvx_gpu_mem_free(&dev);
	if (req[DVX_WIN_MEM_NVL].bytes)
		dvx_gpu_mem_free(&nvl);
	CK(dvx_gpu_host_unregister(&hst));
	dvx_gpu_stream_destroy(&s);
	dvx_gpu_module_unload(&mod);
	CK(dvx_mp_fini(&mp));
	dvx_nic_close(&nic);
	dvx_bootstrap_fini(&bs);
	CK(dvx_gpu_close(&g));
	free(st);
	free(hb);
	free(ibmem);
	free(irings);
	free(ist);
	free(wstate);
	free(state);
	return 0;
}

struct rarg {
	struct world *w;
	int rank;
};

static void *rank_main(void *arg)
{
	struct rarg *a = arg;

	a->w->ret[a->rank] = rank_run(a->w, a->rank);
	if (a->w->ret[a->rank])
		dvx_bootstrap_tgroup_abort(a->w->tw.g, a->rank);
	return NULL;
}

int winch_run(const struct winch_opts *o, struct winch_res *res)
{
	static const int hosts[2] = { 0, 1 };
	static struct world W;
	uint8_t uuid[8][16];
	struct rarg ra[2];
	struct dvx_gpu g;
	unsigned cnt = 0;
	int i;

	memset(res, 0, sizeof(*res));
	if (!dvx_hal_cuda() || !dvx_fatbin_tests_gpu_winch_kernels_len ||
	    dvx_gpu_count(dvx_hal_cuda(), &cnt) || !cnt) {
		snprintf(res->why, sizeof(res->why), "no NVIDIA GPU, driver or nvcc");
		return 77;
	}
	if (o->nblocks > WINCH_MAXB) {
		snprintf(res->why, sizeof(res->why), "at most %d block counts", WINCH_MAXB);
		return 1;
	}
	memset(&W, 0, sizeof(W));
	W.o = o;
	W.res = res;
	W.ngpus = cnt > 8 ? 8 : (int)cnt;
	for (i = 0; i < W.ngpus; i++) {
		memset(&g, 0, sizeof(g));
		if (dvx_gpu_open(&g, dvx_hal_cuda(), i, NULL)) {
			snprintf(res->why, sizeof(res->why), "opening GPU %d", i);
			return 1;
		}
		memcpy(uuid[i], g.attr.uuid, 16);
		dvx_gpu_close(&g);
	}
	if (dvx_tw_init_lanes(&W.tw, 2, hosts, uuid[0], o->nch)) {
		snprintf(res->why, sizeof(res->why), "the world");
		return 1;
	}
	dvx_tw_gpus(&W.tw, (const uint8_t (*)[16])uuid, W.ngpus);
	if (o->gpu_data && dvx_gdma_init(&W.gdma, W.tw.fab)) {
		snprintf(res->why, sizeof(res->why), "the software NIC's DMA callbacks");
		dvx_tw_fini(&W.tw, NULL);
		return 1;
	}
	for (i = 0; i < 2; i++) {
		ra[i].w = &W;
		ra[i].rank = i;
	}
	dvx_tw_run(&W.tw, rank_main, ra, sizeof(ra[0]));
	for (i = 0; i < 2; i++)
		if (W.ret[i]) {
			snprintf(res->why, sizeof(res->why), "%u channels, %s memory, rank %d: %s",
				 o->nch, o->gpu_data ? "GPU" : "host", i, W.why[i]);
			if (o->gpu_data)
				dvx_gdma_fini(&W.gdma);
			dvx_tw_fini(&W.tw, NULL);
			return 1;
		}
	if (o->gpu_data)
		dvx_gdma_fini(&W.gdma);
	if (dvx_tw_fini(&W.tw, NULL)) {
		snprintf(res->why, sizeof(res->why), "objects left in the world");
		return 1;
	}
	return 0;
}
