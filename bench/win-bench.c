// SPDX-License-Identifier: MIT
/*
 * bench/win-bench - the window's device API on the NVLink path: put_signal bandwidth
 * (one block, and one block per SM, one signal per block per call) beside a plain copy
 * by every SM into the same mapping; send/recv bandwidth through the staging slots;
 * signal round trip; barrier latency in one launch and reused launch after launch, at
 * 2, 4 and 8 ranks.
 *
 * Bandwidth: host wall time of one launch that does the operation @reps times (dvx:
 * until the receiver's answer; the reference: a plain copy kernel, 16-byte vectors,
 * four in flight per thread, one block of 256 per SM), after a warm-up round.
 * Ranks are threads of this process on GPU 0 (the multi-peer transport classifies them
 * NVL, windows are exchanged as between processes: POSIX-fd imports). On one GPU a
 * "peer" write lands in the same HBM through a second mapping: the figures are the
 * GPU's, not NVLink's (two GPUs: the NVLink issue). Latency: %globaltimer inside the
 * kernels (rank 0's); "per launch": host wall time of back-to-back launches.
 *
 *   win-bench [--quick]
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dvx/gpu/gpu.h>
#include <dvx/win/win.h>

extern const unsigned char dvx_fatbin_bench_win_bench[];
extern const size_t dvx_fatbin_bench_win_bench_len;

#define SEC 1000000000ull
#define TMO (30 * SEC)
#define MAXR 8
#define BIG (256ull << 20)
#define SLOT_BYTES (256u << 10)

struct rank {
	int id, n;
	struct dvx_bootstrap bs;
	struct dvx_gpu g;
	struct dvx_mp mp;
	struct dvx_win w;
	struct dvx_win_dev d;
	struct dvx_gpu_mem nvl, dev, data, src, sr, out;
	struct dvx_gpu_stream s;
	struct dvx_gpu_module mod;
	void *k_bar, *k_pp, *k_put, *k_ref, *k_sr;
	void *state, *wstate;
	uint64_t res[2];
};

static struct rank R[MAXR];
static int N;
static struct dvx_bootstrap_tgroup *grp;
static pthread_barrier_t bar;
static int quick;

static void die(struct rank *r, int err, const char *what)
{
	if (err) {
		fprintf(stderr, "win-bench: rank %d: %s: %d (%s / %s)\n", r->id, what, err,
			r->g.hg.diag.msg, r->w.diag.msg);
		exit(1);
	}
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
}

static void setup(struct rank *r)
{
	struct dvx_mp_cfg c;
	struct dvx_win_cfg wc;
	struct dvx_mem_req req[DVX_WIN_MEM_N];
	struct dvx_win_regions mem;
	uint64_t dlen = N == 2 ? BIG : 4096;

	die(r, dvx_bootstrap_thread_init(&r->bs, grp, r->id), "bootstrap");
	memset(&r->g, 0, sizeof(r->g));
	die(r, dvx_gpu_open(&r->g, dvx_hal_cuda(), 0, NULL), "gpu_open");
	memset(&c, 0, sizeof(c));
	c.rank = r->id;
	c.nranks = N;
	c.bs = &r->bs;
	c.gpu = &r->g;
	c.timeout_ns = TMO;
	r->state = aligned_alloc(64, (dvx_mp_mem_size(&c) + 63) & ~(size_t)63);
	die(r, dvx_mp_init(&r->mp, &c, r->state, dvx_mp_mem_size(&c)), "mp_init");
	die(r, dvx_mp_connect(&r->mp, NULL, 0, NULL, 0), "mp_connect");
	die(r, dvx_gpu_module_load(&r->g, dvx_fatbin_bench_win_bench, dvx_fatbin_bench_win_bench_len,
				   &r->mod), "module");
	die(r, dvx_gpu_module_function(&r->mod, "wb_barrier", &r->k_bar), "wb_barrier");
	die(r, dvx_gpu_module_function(&r->mod, "wb_pingpong", &r->k_pp), "wb_pingpong");
	die(r, dvx_gpu_module_function(&r->mod, "wb_put", &r->k_put), "wb_put");
	die(r, dvx_gpu_module_function(&r->mod, "wb_ref_copy", &r->k_ref), "wb_ref_copy");
	die(r, dvx_gpu_module_function(&r->mod, "wb_sendrecv", &r->k_sr), "wb_sendrecv");
	die(r, dvx_gpu_stream_create(&r->g, &r->s), "stream");
	memset(&wc, 0, sizeof(wc));
	wc.signals = 4;
	wc.barriers = 1;
	wc.slots = 4;
	wc.slot_bytes = SLOT_BYTES;
	wc.stream = &r->s;
	wc.timeout_ns = TMO;
	die(r, dvx_win_mem_req(&r->mp, &wc, req), "mem_req");
	r->wstate = aligned_alloc(64, (req[DVX_WIN_MEM_STATE].bytes + 63) & ~(uint64_t)63);
	die(r, dvx_gpu_mem_alloc(&r->g, req[DVX_WIN_MEM_NVL].bytes, DVX_GPU_MEM_EXPORT, &r->nvl), "nvl region");
	die(r, dvx_gpu_mem_alloc(&r->g, req[DVX_WIN_MEM_DEV].bytes, 0, &r->dev), "dev region");
	die(r, dvx_gpu_mem_alloc(&r->g, dlen, DVX_GPU_MEM_EXPORT, &r->data), "data");
	die(r, dvx_gpu_mem_alloc(&r->g, dlen, 0, &r->src), "src");
	die(r, dvx_gpu_mem_alloc(&r->g, 2 * dlen + 128, 0, &r->sr), "send/recv buffers");
	die(r, dvx_gpu_mem_alloc(&r->g, 64, 0, &r->out), "out");
	memset(&mem, 0, sizeof(mem));
	mem.state = r->wstate;
	mem.state_len = req[DVX_WIN_MEM_STATE].bytes;
	mem.nvl = (void *)(uintptr_t)r->nvl.dptr;
	mem.nvl_len = req[DVX_WIN_MEM_NVL].bytes;
	mem.dev = r->dev.dptr;
	mem.dev_len = req[DVX_WIN_MEM_DEV].bytes;
	memset(&r->w, 0, sizeof(r->w));
	die(r, dvx_win_init(&r->w, &r->mp, &wc, &mem), "win_init");
	die(r, dvx_win_exchange(&r->w, (void *)(uintptr_t)r->data.dptr, dlen), "win_exchange");
	die(r, dvx_win_dev_make(&r->w, NULL, &r->d), "dev_make");
	die(r, dvx_bootstrap_barrier(&r->bs, TMO), "barrier");
}

static void teardown(struct rank *r)
{
	die(r, dvx_gpu_make_current(&r->g), "current");
	die(r, dvx_bootstrap_barrier(&r->bs, TMO), "barrier");
	die(r, dvx_win_fini(&r->w), "win_fini");
	die(r, dvx_bootstrap_barrier(&r->bs, TMO), "barrier");
	dvx_gpu_mem_free(&r->out);
	dvx_gpu_mem_free(&r->sr);
	dvx_gpu_mem_free(&r->src);
	dvx_gpu_mem_free(&r->data);
	dvx_gpu_mem_free(&r->dev);
	dvx_gpu_mem_free(&r->nvl);
	dvx_gpu_stream_destroy(&r->s);
	dvx_gpu_module_unload(&r->mod);
	die(r, dvx_mp_fini(&r->mp), "mp_fini");
	dvx_bootstrap_fini(&r->bs);
	dvx_gpu_close(&r->g);
	free(r->wstate);
	free(r->state);
}

/* what every rank's thread runs next */
static int job;		/* 0 setup, 1 barrier in one launch, 2 barrier per launch, 3 ping-pong,
			 * 4 put_signal, 5 reference copy, 6 send/recv, 7 teardown */
static uint64_t p_len, p_want, p_want3, p_base;
static uint32_t p_iters, p_grid;

static void run_job(struct rank *r)
{
	uint64_t t0;
	uint32_t i, one = 1;
	int peer = 1 - r->id;

	if (job == 0) {
		setup(r);
		return;
	}
	if (job == 7) {
		teardown(r);
		return;
	}
	die(r, dvx_gpu_make_current(&r->g), "current");
	pthread_barrier_wait(&bar);
	if (job == 1) {
		void *a[] = { &r->d, &p_iters, &r->out.dptr };

		die(r, dvx_gpu_launch(&r->g, r->k_bar, 1, 128, 0, &r->s, a), "launch");
	} else if (job == 2) {
		void *a[] = { &r->d, &one, &r->out.dptr };

		t0 = now_ns();
		for (i = 0; i < p_iters; i++)
			die(r, dvx_gpu_launch(&r->g, r->k_bar, 1, 128, 0, &r->s, a), "launch");
		die(r, dvx_gpu_stream_wait(&r->s, TMO), "wait");
		r->res[0] = now_ns() - t0;
		pthread_barrier_wait(&bar);
		return;
	} else if (job == 3 && r->id < 2) {
		void *a[] = { &r->d, &peer, &p_iters, &p_base, &r->out.dptr };

		die(r, dvx_gpu_launch(&r->g, r->k_pp, 1, 1, 0, &r->s, a), "launch");
	} else if (job == 4 && r->id < 2) {
		struct dvx_p2p_lbuf src;
		void *a[] = { &r->d, &src, &p_len, &p_iters, &p_want, &p_want3, &r->out.dptr };

		memset(&src, 0, sizeof(src));
		src.ptr = (void *)(uintptr_t)r->src.dptr;
		src.addr = r->src.dptr;
		src.len = r->src.len;
		/* host wall time of the one launch (all blocks, rank 1's answer included),
		 * timed the same way as the reference */
		t0 = now_ns();
		die(r, dvx_gpu_launch(&r->g, r->k_put, r->id ? 1 : p_grid, 256, 0, &r->s, a), "launch");
		die(r, dvx_gpu_stream_wait(&r->s, TMO), "kernel");
		t0 = now_ns() - t0;
		die(r, dvx_gpu_memcpy_dtoh(&r->g, r->res, r->out.dptr, 16), "out");
		if (r->res[1])
			die(r, (int)(int64_t)r->res[1], "the kernel's error");
		r->res[0] = t0;
		pthread_barrier_wait(&bar);
		return;
	} else if (job == 5 && r->id == 0) {
		uint64_t dst = dvx_win_nvlink_address(&r->w, 1, 0);
		void *a[] = { &dst, &r->src.dptr, &p_len, &p_iters };

		t0 = now_ns();
		die(r, dvx_gpu_launch(&r->g, r->k_ref, p_grid, 256, 0, &r->s, a), "launch");
		die(r, dvx_gpu_stream_wait(&r->s, TMO), "wait");
		r->res[0] = now_ns() - t0;
		r->res[1] = 0;
		pthread_barrier_wait(&bar);
		return;
	} else if (job == 6 && r->id < 2) {
		uint64_t sb = r->sr.dptr, rb = r->sr.dptr + r->data.len + 64;
		void *a[] = { &r->d, &sb, &rb, &p_len, &p_iters, &r->out.dptr };

		die(r, dvx_gpu_launch(&r->g, r->k_sr, 1, 512, 0, &r->s, a), "launch");
	} else {
		pthread_barrier_wait(&bar);
		return;
	}
	die(r, dvx_gpu_stream_wait(&r->s, TMO), "kernel");
	die(r, dvx_gpu_memcpy_dtoh(&r->g, r->res, r->out.dptr, 16), "out");
	if (r->res[1])
		die(r, (int)(int64_t)r->res[1], "the kernel's error");
	pthread_barrier_wait(&bar);
}

static void *rank_thread(void *arg)
{
	run_job(arg);
	return NULL;
}

/* every rank runs the job; rank 0's result */
static uint64_t all(int j)
{
	pthread_t t[MAXR];
	int i;

	job = j;
	for (i = 1; i < N; i++)
		pthread_create(&t[i], NULL, rank_thread, &R[i]);
	run_job(&R[0]);
	for (i = 1; i < N; i++)
		pthread_join(t[i], NULL);
	return R[0].res[0];
}

static void world(int n)
{
	struct dvx_bootstrap_tgroup_cfg ga;
	size_t sz;
	int i;

	N = n;
	memset(R, 0, sizeof(R));
	for (i = 0; i < n; i++) {
		R[i].id = i;
		R[i].n = n;
	}
	memset(&ga, 0, sizeof(ga));
	ga.nranks = n;
	ga.max_unexpected = 16;
	ga.slot_bytes = 8192;
	sz = dvx_bootstrap_tgroup_mem_size(n, 16, 8192);
	if (dvx_bootstrap_tgroup_init(&grp, &ga, calloc(1, sz), sz))
		exit(1);
	pthread_barrier_init(&bar, NULL, (unsigned)n);
	all(0);
}

static void world_end(void)
{
	all(7);
	pthread_barrier_destroy(&bar);
	dvx_bootstrap_tgroup_fini(grp);
}

int main(int argc, char **argv)
{
	static const uint64_t sizes[] = { 4096, 65536, 1u << 20, 16u << 20, BIG };
	uint64_t cum = 0, cum3 = 0, pp = 0;
	unsigned n = 0, s, sms;
	int i, nr;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--quick"))
			quick = 1;
	/* ranks are threads of one context whose kernels wait for each other: each stream
	 * needs its own hardware queue, or a kernel queued behind a spinning one never
	 * starts (with the default 8, eight ranks' barriers launched one per launch hang) */
	setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
	if (!dvx_hal_cuda() || !dvx_fatbin_bench_win_bench_len || dvx_gpu_count(dvx_hal_cuda(), &n) ||
	    !n) {
		printf("win-bench: no NVIDIA GPU (or a build without CUDA/nvcc): skipped\n");
		return 77;
	}
	world(2);
	sms = R[0].g.attr.sm_count ? R[0].g.attr.sm_count : 132;
	printf("win-bench: %d ranks as threads on GPU 0 (%s, %s), all NVL (POSIX-fd imports); %u SMs; "
	       "CUDA_DEVICE_MAX_CONNECTIONS=%s\n", N, R[0].g.attr.name, R[0].g.attr.pci, sms,
	       getenv("CUDA_DEVICE_MAX_CONNECTIONS"));
	printf("\nput_signal rank 0 -> 1 into the window buffer, GB/s (one signal per block per call)\n");
	printf("%12s %14s %14s %14s %8s\n", "bytes", "1 block", "1 block/SM", "ref copy", "ratio");
	for (s = 0; s < 5; s++) {
		uint32_t reps = sizes[s] >= (16u << 20) ? 10 : 200;
		double gb[3];
		int k;

		if (quick && sizes[s] > (16u << 20))
			continue;
		for (k = 0; k < 2; k++) {
			p_grid = k ? sms : 1;
			p_len = sizes[s];
			p_iters = 1;	/* warm-up */
			cum += p_grid;
			p_want = cum;
			p_want3 = ++cum3;
			all(4);
			p_len = sizes[s];
			p_iters = reps;
			cum += (uint64_t)reps * p_grid;
			p_want = cum;
			p_want3 = ++cum3;
			gb[k] = (double)sizes[s] * reps / (double)all(4);
		}
		p_grid = sms;
		p_iters = 1;
		all(5);
		p_iters = reps;
		gb[2] = (double)sizes[s] * reps / (double)all(5);
		printf("%12llu %14.1f %14.1f %14.1f %8.2f\n", (unsigned long long)sizes[s], gb[0], gb[1],
		       gb[2], gb[1] / gb[2]);
	}
	printf("\nsend/recv rank 0 -> 1 by one block of 512 (4 slots of %u KiB), GB/s\n", SLOT_BYTES >> 10);
	printf("%12s %14s\n", "bytes", "send/recv");
	for (s = 0; s < 5; s++) {
		uint32_t reps = sizes[s] >= (16u << 20) ? 4 : 100;

		if (quick && sizes[s] > (16u << 20))
			continue;
		p_len = sizes[s];
		p_iters = reps;
		printf("%12llu %14.1f\n", (unsigned long long)sizes[s],
		       (double)sizes[s] * reps / (double)all(6));
	}
	p_iters = quick ? 1000 : 10000;
	p_base = pp;
	printf("\nlatency, ns\n%-44s %10.0f\n", "signal_peer + wait_signal_from (half RT)",
	       (double)all(3) / (2.0 * p_iters));
	{
		static const uint64_t lens[] = { 8, 256, 2048, 4096 };

		for (s = 0; s < 4; s++) {
			p_len = lens[s];
			p_iters = quick ? 1000 : 10000;
			printf("send %4llu B + recv 8 B back, block (half RT)%s %6.0f\n",
			       (unsigned long long)lens[s], lens[s] <= 2048 ? ", LL   " : ", fence",
			       (double)all(6) / (2.0 * p_iters));
		}
	}
	world_end();
	printf("\nbarrier (one block per rank), ns\n%6s %16s %22s\n", "ranks", "in one launch",
	       "one per launch (host)");
	for (nr = 2; nr <= MAXR; nr *= 2) {
		double a, b;

		world(nr);
		p_iters = quick ? 100 : 2000;
		a = (double)all(1) / p_iters;
		p_iters = quick ? 50 : 500;
		b = (double)all(2) / p_iters;
		printf("%6d %16.0f %22.0f\n", nr, a, b);
		world_end();
	}
	return 0;
}
