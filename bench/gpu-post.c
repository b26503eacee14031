// SPDX-License-Identifier: MIT
/*
 * bench/gpu-post - WQEs posted per second from GPU threads into one host-resident SQ
 * (ring, doorbell record and consumer index in host memory registered for the GPU,
 * posting counters in GPU memory), while a host thread plays the NIC's consumer: it
 * follows the doorbell record and frees the slots at once. Rows: 1 thread, 1 warp,
 * 1 block and all SMs, at thread, warp and block scope, and fetch-add reservations.
 * Every WQE is a one-WQEBB RDMA WRITE built by dvx's builders; the time is host wall
 * clock from launch to the end of the kernel (module load and warm-up excluded).
 *
 *   gpu-post [ring WQEBBs, default 4096]
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dvx/gpu/gpu.h>
#include <dvx/gpu/queue.h>
#include <dvx/mlx5/sq.h>

extern const unsigned char dvx_fatbin_bench_gpu_post[];
extern const size_t dvx_fatbin_bench_gpu_post_len;

#define SEC 1000000000ull

static struct dvx_gpu g;
static uint32_t *dbrec;
static uint64_t *ci;
static uint32_t nwqebb = 4096;
static int stop;
static uint64_t consumed;

static void die(int err, const char *what)
{
	if (err) {
		fprintf(stderr, "gpu-post: %s: %d (%s: %s)\n", what, err, g.hg.diag.op, g.hg.diag.msg);
		exit(1);
	}
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
}

/* the consumer: free every slot below the doorbell record as soon as it is seen */
static void *consumer(void *arg)
{
	(void)arg;
	for (;;) {
		uint32_t rec = dvx_be32_to_cpu(__atomic_load_n(&dbrec[DVX_MLX5_SND_DBR],
							       __ATOMIC_ACQUIRE));
		uint64_t pi = consumed + (uint16_t)((uint16_t)rec - (uint16_t)consumed);

		if (pi != consumed) {
			consumed = pi;
			__atomic_store_n(ci, pi, __ATOMIC_RELEASE);
		} else if (__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
			return NULL;
		}
	}
}

int main(int argc, char **argv)
{
	static const char *const scope_name[] = { "thread", "warp", "block", "thread-faa" };
	const struct dvx_hal *hal = dvx_hal_cuda();
	struct dvx_hal_mem ring, ctl;
	struct dvx_gpu_hostreg rr, cr;
	struct dvx_gpu_module mod;
	struct dvx_gpu_stream s;
	struct dvx_gpu_mem dm;
	struct dvx_gpu_sq sq;
	unsigned n = 0;
	void *k;
	struct { const char *who; uint32_t grid, block, scope, per; } rows[16];
	unsigned nrows = 0, r, sms;
	int32_t *st;

	if (argc > 1)
		nwqebb = (uint32_t)strtoul(argv[1], NULL, 0);
	if (!hal || !dvx_fatbin_bench_gpu_post_len || dvx_gpu_count(hal, &n) || !n) {
		printf("gpu-post: needs CUDA (CONFIG_DVX_GPU=y, nvcc) and an NVIDIA GPU; skipped\n");
		return 77;
	}
	die(dvx_gpu_open(&g, hal, 0, NULL), "open");
	die(dvx_gpu_module_load(&g, dvx_fatbin_bench_gpu_post, dvx_fatbin_bench_gpu_post_len, &mod),
	    "module");
	die(dvx_gpu_module_function(&mod, "b_post", &k), "function");
	die(dvx_gpu_stream_create(&g, &s), "stream");
	die(dvx_hal_mem_alloc(hal, nwqebb * 64ull, 4096, -1, DVX_MEM_F_ZERO, &ring), "ring");
	die(dvx_hal_mem_alloc(hal, 4096, 4096, -1, DVX_MEM_F_ZERO, &ctl), "ctl");
	die(dvx_gpu_host_register(&g, ring.addr, nwqebb * 64ull, 0, &rr), "reg ring");
	die(dvx_gpu_host_register(&g, ctl.addr, 4096, 0, &cr), "reg ctl");
	die(dvx_gpu_mem_alloc(&g, 64u << 20, 0, &dm), "device memory");
	dbrec = (uint32_t *)ctl.addr;
	ci = (uint64_t *)(void *)((uint8_t *)ctl.addr + 128);
	die(dvx_gpu_sq_view_init(&sq, DVX_GPU_Q_SYS, rr.dptr, nwqebb, 0x123, 64, cr.dptr,
				 cr.dptr + 64, dm.dptr, cr.dptr + 128), "view");

	sms = g.attr.sm_count;
#define ROW(w, gr, bl, sc, pe) rows[nrows++] = (__typeof__(rows[0])){ w, gr, bl, sc, pe }
	ROW("1 thread", 1, 1, 0, 200000);
	ROW("1 warp", 1, 32, 0, 10000);
	ROW("1 warp", 1, 32, 1, 20000);
	ROW("1 block (256)", 1, 256, 0, 1000);
	ROW("1 block (256)", 1, 256, 1, 2000);
	ROW("1 block (256)", 1, 256, 2, 4000);
	ROW("all SMs x 256", sms, 256, 0, 16);
	ROW("all SMs x 256", sms, 256, 3, 16);
	ROW("all SMs x 256", sms, 256, 1, 64);
	ROW("all SMs x 256", sms, 256, 2, 64);
	st = calloc((size_t)sms * 256, sizeof(*st));

	printf("gpu-post: %s (%s) sm_%d%d, %u SMs, driver %d; ring %u WQEBBs in host memory\n",
	       g.attr.name, g.attr.pci, g.attr.cc_major, g.attr.cc_minor, sms,
	       g.attr.driver_version, nwqebb);
	printf("%-16s %-10s %8s %10s %12s %9s\n", "posters", "scope", "threads", "WQEs",
	       "WQEs/s", "ns/WQE");
	for (r = 0; r < nrows + 1; r++) {
		unsigned i = r ? r - 1 : 0;	/* row 0 twice: the first run is the warm-up */
		uint32_t nthr = rows[i].grid * rows[i].block, per = rows[i].per;
		uint32_t sc = rows[i].scope;
		uint64_t timeout = 30 * SEC, status = dm.dptr + 4096, total, t0, t1;
		void *args[] = { &sq, &sc, &per, &timeout, &status };
		pthread_t thr;
		unsigned j;

		if (!r)
			per = 1000;
		total = (uint64_t)nthr * per;
		memset(ring.addr, 0, nwqebb * 64ull);
		memset(ctl.addr, 0, 4096);
		consumed = 0;
		stop = 0;
		die(dvx_gpu_memcpy_htod(&g, dm.dptr, ring.addr, DVX_MLX5_SQ_CTRS_BYTES), "zero ctrs");
		pthread_create(&thr, NULL, consumer, NULL);
		t0 = now_ns();
		die(dvx_gpu_launch(&g, k, rows[i].grid, rows[i].block, 0, &s, args), "launch");
		die(dvx_gpu_stream_wait(&s, 300 * SEC), "wait");
		t1 = now_ns();
		__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
		pthread_join(thr, NULL);
		die(dvx_gpu_memcpy_dtoh(&g, st, status, nthr * 4ull), "status");
		for (j = 0; j < nthr; j++)
			if (st[j])
				die(st[j], "a poster failed");
		if (consumed != total) {
			fprintf(stderr, "gpu-post: consumed %llu of %llu\n",
				(unsigned long long)consumed, (unsigned long long)total);
			return 1;
		}
		if (!r)
			continue;
		printf("%-16s %-10s %8u %10llu %12.0f %9.1f\n", rows[i].who, scope_name[sc], nthr,
		       (unsigned long long)total, total * 1e9 / (double)(t1 - t0),
		       (double)(t1 - t0) / (double)total);
	}
	free(st);
	dvx_gpu_mem_free(&dm);
	dvx_gpu_host_unregister(&cr);
	dvx_gpu_host_unregister(&rr);
	dvx_hal_mem_free(hal, &ctl);
	dvx_hal_mem_free(hal, &ring);
	dvx_gpu_stream_destroy(&s);
	dvx_gpu_module_unload(&mod);
	dvx_gpu_close(&g);
	return 0;
}
