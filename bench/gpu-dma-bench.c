// SPDX-License-Identifier: MIT
/*
 * bench/gpu-dma-bench - what the software NIC's copies into and out of GPU memory cost
 * while a kernel runs beside them. The copies are made as tests/lib/gpu_dma.c makes
 * them for the software NIC (GPUDirect RDMA on the sim): dvx_hal_gpu_memcpy_async() on
 * a non-blocking stream of their own, then the stream waited for; 50 round trips of
 * 64 B to 24 KiB (device -> host, host -> device) per sample, 10 samples a row, host
 * buffers pageable (as the sim's MR memory is) and registered. The reference, in the
 * same run, is the same copies with no kernel. The kernels (bench/gpu-dma-bench.cu)
 * spin for up to 1 s on the GPU's clock; in the polling rows some of their threads read
 * a word of host memory the GPU maps instead, as device waits on counters, signals or
 * CQs in host memory do.
 *
 * Prints one table; exits 77 without a GPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dvx/gpu/gpu.h>
#include <dvx/hal/gpu.h>

extern const unsigned char dvx_fatbin_bench_gpu_dma_bench[];
extern const size_t dvx_fatbin_bench_gpu_dma_bench_len;

#define SEC 1000000000ull
#define BYTES 65536u
#define SAMPLES 10
#define TRIPS 50

static struct dvx_gpu g;

static void die(int err, const char *what)
{
	if (err) {
		fprintf(stderr, "gpu-dma-bench: %s: %d (%s: %s)\n", what, err, g.hg.diag.op,
			g.hg.diag.msg);
		exit(1);
	}
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
}

/* one sample: TRIPS round trips, the mean time of one copy in us */
static double sample(struct dvx_gpu_stream *cs, uint64_t dev, void *host)
{
	uint64_t t0 = now_ns();
	int k;

	for (k = 0; k < TRIPS; k++) {
		uint64_t n = (uint64_t)(k % 7) * 4096 + 64;

		die(dvx_hal_gpu_memcpy_async(&g.hg, (uint64_t)(uintptr_t)host, dev, n, cs->handle),
		    "copy out");
		die(dvx_gpu_stream_wait(cs, 30 * SEC), "copy out, wait");
		die(dvx_hal_gpu_memcpy_async(&g.hg, dev, (uint64_t)(uintptr_t)host, n, cs->handle),
		    "copy in");
		die(dvx_gpu_stream_wait(cs, 30 * SEC), "copy in, wait");
	}
	return (double)(now_ns() - t0) / 1e3 / (2 * TRIPS);
}

int main(void)
{
	static const struct {
		const char *what;
		int kernel;
		uint32_t blocks, threads, poll;	/* poll 1: every thread, 0: thread 0, 2: none */
	} rows[] = {
		{ "no kernel (the reference)", 0, 0, 0, 0 },
		{ "all SMs x 128, the clock only", 1, 0, 128, 2 },
		{ "1 thread polling host memory", 1, 1, 1, 1 },
		{ "8 blocks x 128 polling", 1, 8, 128, 1 },
		{ "all SMs, 1 poller a block", 1, 0, 128, 0 },
		{ "all SMs x 128 polling", 1, 0, 128, 1 },
	};
	const struct dvx_hal *hal = dvx_hal_cuda();
	struct dvx_gpu_stream ks, cs;
	struct dvx_gpu_module mod;
	struct dvx_gpu_hostreg fr, pr;
	struct dvx_gpu_mem dm;
	uint32_t *flag, r, bufk;
	uint8_t *pageable, *pinned;
	void *k;
	unsigned n = 0;
	double base[2] = { 0, 0 };

	if (!hal || !dvx_fatbin_bench_gpu_dma_bench_len || dvx_gpu_count(hal, &n) || !n) {
		printf("gpu-dma-bench: needs CUDA (CONFIG_DVX_GPU=y, nvcc) and an NVIDIA GPU; skipped\n");
		return 77;
	}
	die(dvx_gpu_open(&g, hal, 0, NULL), "open");
	die(dvx_gpu_module_load(&g, dvx_fatbin_bench_gpu_dma_bench,
				dvx_fatbin_bench_gpu_dma_bench_len, &mod), "module");
	die(dvx_gpu_module_function(&mod, "d_spin", &k), "function");
	die(dvx_gpu_stream_create(&g, &ks), "kernel stream");
	die(dvx_gpu_stream_create(&g, &cs), "copy stream");
	flag = aligned_alloc(4096, 4096);
	pageable = aligned_alloc(4096, BYTES);
	pinned = aligned_alloc(4096, BYTES);
	if (!flag || !pageable || !pinned)
		die(-12, "host memory");
	memset(flag, 0, 4096);
	memset(pageable, 0, BYTES);
	memset(pinned, 0, BYTES);
	die(dvx_gpu_host_register(&g, flag, 4096, 0, &fr), "register the flag");
	die(dvx_gpu_host_register(&g, pinned, BYTES, 0, &pr), "register a buffer");
	die(dvx_gpu_mem_alloc(&g, BYTES, 0, &dm), "device memory");
	printf("gpu-dma-bench: %s, %u SMs; one copy of 64 B - 24 KiB on a stream of its own, "
	       "waited for (the software NIC's GPU copies), while a kernel runs\n\n",
	       g.attr.name, g.attr.sm_count);
	printf("| beside the copies | pageable: us a copy, mean (worst) | x ref | registered: us (worst) | x ref |\n");
	printf("|---|---|---|---|---|\n");
	for (r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		double mean[2] = { 0, 0 }, worst[2] = { 0, 0 };
		int s;

		for (bufk = 0; bufk < 2; bufk++) {
			for (s = 0; s < SAMPLES; s++) {
				uint32_t blocks = rows[r].blocks ? rows[r].blocks : g.attr.sm_count;
				uint64_t ns = SEC;
				uint32_t poll = rows[r].poll;
				void *args[] = { &fr.dptr, &ns, &poll };
				double t;

				__atomic_store_n(flag, 0, __ATOMIC_RELEASE);
				if (rows[r].kernel) {
					die(dvx_gpu_launch(&g, k, blocks, rows[r].threads, 0, &ks, args),
					    "launch");
					t = (double)now_ns();
					while ((double)now_ns() - t < 5e6)	/* 5 ms: it runs */
						;
				}
				t = sample(&cs, dm.dptr, bufk ? (void *)pinned : (void *)pageable);
				__atomic_store_n(flag, 1, __ATOMIC_RELEASE);
				if (rows[r].kernel)
					die(dvx_gpu_stream_wait(&ks, 30 * SEC), "kernel");
				mean[bufk] += t / SAMPLES;
				if (t > worst[bufk])
					worst[bufk] = t;
			}
			if (r == 0)
				base[bufk] = mean[bufk];
		}
		printf("| %s | %.1f (%.1f) | %.1f | %.1f (%.1f) | %.1f |\n", rows[r].what, mean[0],
		       worst[0], mean[0] / base[0], mean[1], worst[1], mean[1] / base[1]);
	}
	dvx_gpu_mem_free(&dm);
	dvx_gpu_host_unregister(&pr);
	dvx_gpu_host_unregister(&fr);
	dvx_gpu_stream_destroy(&cs);
	dvx_gpu_stream_destroy(&ks);
	dvx_gpu_module_unload(&mod);
	dvx_gpu_close(&g);
	free(flag);
	free(pageable);
	free(pinned);
	return 0;
}
