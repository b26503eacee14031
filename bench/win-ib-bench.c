// SPDX-License-Identifier: MIT
/*
 * bench/win-ib-bench - GPU-initiated put_signal through the window to an IB peer on the
 * software NIC, with the window buffer and the source in GPU memory (the software NIC
 * reaches them through its DMA callbacks: cuMemcpyAsync on its own stream, waited for,
 * tests/lib/gpu_dma.h) beside the same with both in host memory the GPU maps (the NIC
 * addresses it: memcpy). Two ranks as threads of this process on two injected hosts
 * (IB), rank r on GPU r mod the GPUs; one GPU thread a rank posts.
 *
 * These are the software NIC's copy rates (a CPU thread executing the WQEs and moving
 * the bytes), not a ConnectX's: what the table compares is the cost of reaching GPU
 * memory through the driver's copies against host memory, the same WQEs either way.
 *
 * Bandwidth: host wall time of rank 0's launch of N put_signal calls of one size and
 * the peer's answer (one signal once all N landed). Latency: half the round trip of
 * put_signal + wait ping-pong (host wall time over the launch, so launch cost is spread
 * over the round trips).
 *
 *   win-ib-bench [--quick]
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dvx/gpu/gpu.h>
#include <dvx/win/win.h>
#include <dvx/p2p/gpu.h>
#include <dvx/hal/sim.h>

#include "../tests/lib/sim_world.h"
#include "../tests/lib/gpu_dma.h"

extern const unsigned char dvx_fatbin_bench_win_ib_bench[];
extern const size_t dvx_fatbin_bench_win_ib_bench_len;

#define SEC 1000000000ull
#define TMO (60 * SEC)
#define MAXLEN (4ull << 20)
#define NSIZES 5
#define NLAT 2

static const uint64_t sizes[NSIZES] = { 4096, 65536, 262144, 1u << 20, 4u << 20 };
static const uint64_t lat_sizes[NLAT] = { 8, 4096 };
static int quick, ngpus;

/* [mode][size]: GB/s, ns */
static double bw[2][NSIZES], lat[2][NLAT];
static uint64_t copies[2], copy_bytes[2];

struct world {
	struct dvx_tw tw;
	struct dvx_gdma gdma;
	int gpu_data;
	int ret[2];
	char why[2][160];
};

#define CK(e) do { int e_ = (e); if (e_) { snprintf(W->why[me], sizeof(W->why[me]), "%s = %d", #e, e_); return 1; } } while (0)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
}

static int rank_run(struct world *W, int me)
{
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
	struct dvx_gpu_mem nvl, dev, dm, gdata, gsrc;
	struct dvx_gpu_hostreg regs[16], hr, hdata, hsrc, hst;
	struct dvx_mp_dev mpdev;
	struct dvx_gpu_stream s;
	struct dvx_gpu_module mod;
	struct dvx_p2p_lbuf src;
	void *k_stream, *k_pp, *state, *wstate, *ist, *irings, *ibmem, *data, *srcp;
	void *hd = NULL, *hs = NULL;
	volatile int32_t *st;
	uint64_t need, out, sent = 0, acks = 0, rts = 0;
	uint32_t nregs = 0;
	char name[16];
	int role = me, i;

	CK(dvx_bootstrap_thread_init(&bs, W->tw.g, me));
	memset(&g, 0, sizeof(g));
	CK(dvx_gpu_open(&g, W->gpu_data ? dvx_gdma_hal(&W->gdma) : dvx_hal_cuda(), me % ngpus, NULL));
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
	c.ib.qps_per_nic = 1;
	c.ib.sq_depth = 256;
	c.ib.comp_depth = 16;
	c.inject = W->tw.inf;
	c.timeout_ns = TMO;
	state = aligned_alloc(64, (dvx_mp_mem_size(&c) + 63) & ~(size_t)63);
	CK(dvx_mp_init(&mp, &c, state, dvx_mp_mem_size(&c)));
	CK(dvx_mp_ib_mem_req(&mp, &sreq, &rreq));
	ist = aligned_alloc(64, (sreq.bytes + 63) & ~(uint64_t)63);
	irings = aligned_alloc(4096, (rreq.bytes + 4095) & ~(uint64_t)4095);
	CK(dvx_mp_connect(&mp, ist, sreq.bytes, irings, rreq.bytes));
	CK(dvx_gpu_module_load(&g, dvx_fatbin_bench_win_ib_bench, dvx_fatbin_bench_win_ib_bench_len,
			       &mod));
	CK(dvx_gpu_module_function(&mod, "wib_stream", &k_stream));
	CK(dvx_gpu_module_function(&mod, "wib_pingpong", &k_pp));
	CK(dvx_gpu_stream_create(&g, &s));
	st = aligned_alloc(4096, 4096);
	CK(dvx_gpu_host_register(&g, (void *)st, 4096, 0, &hst));
	out = hst.dptr;

	memset(&wc, 0, sizeof(wc));
	wc.signals = 4;
	wc.counters = 1;
	wc.barriers = 1;
	wc.slots = 1;
	wc.slot_bytes = 4096;
	wc.flags = DVX_WIN_F_IB_HOST;
	wc.stream = &s;
	wc.timeout_ns = TMO;
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
	if (W->gpu_data) {
		CK(dvx_gpu_mem_alloc(&g, MAXLEN, 0, &gdata));
		CK(dvx_gpu_mem_alloc(&g, MAXLEN, 0, &gsrc));
		data = (void *)(uintptr_t)gdata.dptr;
		srcp = (void *)(uintptr_t)gsrc.dptr;
	} else {
		hd = aligned_alloc(4096, MAXLEN);
		hs = aligned_alloc(4096, MAXLEN);
		memset(hd, 0, MAXLEN);
		memset(hs, 0x5a, MAXLEN);
		CK(dvx_gpu_host_register(&g, hd, MAXLEN, 0, &hdata));
		CK(dvx_gpu_host_register(&g, hs, MAXLEN, 0, &hsrc));
		data = hd;
		srcp = hs;
	}
	CK(dvx_win_exchange(&win, data, MAXLEN));
	CK(dvx_win_register_src(&win, srcp, MAXLEN, &src));
	CK(dvx_p2p_gpu_register(&mp.ib, &g, irings, rreq.bytes, 0, regs, &nregs));
	CK(dvx_mp_dev_mem_req(&mp, &need));
	CK(dvx_gpu_mem_alloc(&g, need, 0, &dm));
	CK(dvx_mp_dev_export(&mp, NULL, regs, nregs, dm.dptr, dm.len, TMO, &mpdev));
	CK(dvx_win_dev_make(&win, &mpdev, &d));
	CK(dvx_bootstrap_barrier(&bs, TMO));

	/* bandwidth: a warm-up launch, then one launch a size */
	for (i = -1; i < NSIZES; i++) {
		uint64_t len = i < 0 ? 4096 : sizes[i];
		uint64_t total = quick ? (16ull << 20) : (128ull << 20), t0, want, ack;
		uint32_t iters = (uint32_t)(total / len);
		void *a[] = { &d, &src, &len, &iters, &want, &ack, &role, &out };

		if (iters > 4096)
			iters = 4096;
		if (i < 0)
			iters = 16;
		want = sent + iters;
		ack = acks + 1;
		st[0] = 0x7f7f7f7f;
		CK(dvx_bootstrap_barrier(&bs, TMO));
		t0 = now_ns();
		CK(dvx_gpu_launch(&g, k_stream, 1, 1, 0, &s, a));
		CK(dvx_gpu_stream_wait(&s, 2 * TMO));
		t0 = now_ns() - t0;
		CK(st[0]);
		sent = want;
		acks = ack;
		if (me == 0 && i >= 0)
			bw[W->gpu_data][i] = (double)len * iters / (double)t0;
	}
	/* latency */
	for (i = -1; i < NLAT; i++) {
		uint64_t len = i < 0 ? 8 : lat_sizes[i], t0;
		uint32_t iters = i < 0 ? 10 : quick ? 100 : 1000;
		void *a[] = { &d, &src, &len, &iters, &rts, &role, &out };

		st[0] = 0x7f7f7f7f;
		CK(dvx_bootstrap_barrier(&bs, TMO));
		t0 = now_ns();
		CK(dvx_gpu_launch(&g, k_pp, 1, 1, 0, &s, a));
		CK(dvx_gpu_stream_wait(&s, 2 * TMO));
		t0 = now_ns() - t0;
		CK(st[0]);
		rts += iters;
		if (me == 0 && i >= 0)
			lat[W->gpu_data][i] = (double)t0 / (2.0 * iters);
	}

	CK(dvx_bootstrap_barrier(&bs, TMO));
	CK(dvx_mp_dev_import(&mp, &mpdev));
	CK(dvx_p2p_gpu_unregister(regs, nregs));
	CK(dvx_p2p_flush(&mp.ib, 0, TMO, NULL));
	CK(dvx_bootstrap_barrier(&bs, TMO));
	CK(dvx_win_deregister_src(&win, srcp));
	CK(dvx_win_fini(&win));
	CK(dvx_bootstrap_barrier(&bs, TMO));
	CK(dvx_gpu_host_unregister(&hr));
	if (hd) {
		CK(dvx_gpu_host_unregister(&hdata));
		CK(dvx_gpu_host_unregister(&hsrc));
	} else {
		dvx_gpu_mem_free(&gsrc);
		dvx_gpu_mem_free(&gdata);
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
	free((void *)st);
	free(hd);
	free(hs);
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
	return NULL;
}

static int one_mode(int gpu_data, uint8_t (*uuid)[16])
{
	static const int hosts[2] = { 0, 1 };
	static struct world W;
	struct rarg ra[2];
	int i;

	memset(&W, 0, sizeof(W));
	W.gpu_data = gpu_data;
	if (dvx_tw_init(&W.tw, 2, hosts, uuid[0]))
		return 1;
	dvx_tw_gpus(&W.tw, (const uint8_t (*)[16])uuid, ngpus);
	if (gpu_data && dvx_gdma_init(&W.gdma, W.tw.fab))
		return 1;
	for (i = 0; i < 2; i++) {
		ra[i].w = &W;
		ra[i].rank = i;
	}
	dvx_tw_run(&W.tw, rank_main, ra, sizeof(ra[0]));
	for (i = 0; i < 2; i++)
		if (W.ret[i]) {
			fprintf(stderr, "win-ib-bench: %s memory: rank %d: %s\n",
				gpu_data ? "GPU" : "host", i, W.why[i]);
			return 1;
		}
	if (gpu_data) {
		for (i = 0; i < DVX_GDMA_GPUS; i++) {
			copies[1] += W.gdma.eng[i].reads + W.gdma.eng[i].writes;
			copy_bytes[1] += W.gdma.eng[i].bytes;
		}
		dvx_gdma_fini(&W.gdma);
	}
	return dvx_tw_fini(&W.tw, NULL) ? 1 : 0;
}

int main(int argc, char **argv)
{
	uint8_t uuid[8][16];
	struct dvx_gpu g;
	unsigned cnt = 0;
	int i;

	setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);	/* the NIC's copy streams: gpu_dma.h */
	quick = argc > 1 && !strcmp(argv[1], "--quick");
	if (!dvx_hal_cuda() || !dvx_fatbin_bench_win_ib_bench_len ||
	    dvx_gpu_count(dvx_hal_cuda(), &cnt) || !cnt) {
		printf("win-ib-bench: no NVIDIA GPU, driver or nvcc; run it on a machine with one\n");
		return 77;
	}
	ngpus = cnt > 8 ? 8 : (int)cnt;
	for (i = 0; i < ngpus; i++) {
		memset(&g, 0, sizeof(g));
		if (dvx_gpu_open(&g, dvx_hal_cuda(), i, NULL))
			return 1;
		memcpy(uuid[i], g.attr.uuid, 16);
		if (!i)
			printf("win-ib-bench: %d x %s (%s), rank r on GPU r %% %d; two ranks on two injected "
			       "hosts (IB over the software NIC), one GPU thread a rank\n",
			       ngpus, g.attr.name, g.attr.pci, ngpus);
		dvx_gpu_close(&g);
	}
	if (one_mode(0, uuid) || one_mode(1, uuid))
		return 1;
	printf("\nput_signal bandwidth, GB/s (the software NIC's copy rates, not a ConnectX's)\n");
	printf("| size | data in GPU memory (NIC: cuMemcpyAsync) | data in host memory (NIC: memcpy) | GPU / host |\n");
	printf("|---|---|---|---|\n");
	for (i = 0; i < NSIZES; i++)
		printf("| %llu KiB | %.3f | %.3f | %.2f |\n", (unsigned long long)(sizes[i] >> 10),
		       bw[1][i], bw[0][i], bw[0][i] > 0 ? bw[1][i] / bw[0][i] : 0.0);
	printf("\nput_signal + wait ping-pong, half round trip, us\n");
	printf("| size | data in GPU memory | data in host memory | GPU - host |\n");
	printf("|---|---|---|---|\n");
	for (i = 0; i < NLAT; i++)
		printf("| %llu B | %.2f | %.2f | %+.2f |\n", (unsigned long long)lat_sizes[i],
		       lat[1][i] / 1e3, lat[0][i] / 1e3, (lat[1][i] - lat[0][i]) / 1e3);
	printf("\nthe software NIC's device-memory copies: %llu, %llu bytes\n",
	       (unsigned long long)copies[1], (unsigned long long)copy_bytes[1]);
	return 0;
}
