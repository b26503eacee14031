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
 * The second table gives every block a QP of its own (ring, doorbell record, consumer
 * index, counters and a UAR word each) and compares, in one run, the two places the
 * queues can live:
 *  - host-resident: rings, records and consumer indexes in registered host memory
 *    (DVX_GPU_Q_SYS: system-scope ordering), a host thread consuming every QP;
 *  - GPU-resident: rings, records, consumer indexes and counters in device memory
 *    (GPU-scope ordering, as NVSHMEM orders queues in GPU memory), consumed by a
 *    recycler kernel running beside the posters (b_recycle), so nothing but the UAR
 *    doorbell word (host memory, as a NIC's UAR is behind PCIe) leaves the GPU.
 * Rows double the blocks from 1 to all SMs at thread, warp and block scope.
 *
 *   gpu-post [ring WQEBBs, default 4096]
 *   GPU_POST_RECYCLER_TPB=n: QPs per recycler block (threads; default 32)
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

static struct {
	uint8_t *ctl;		/* host-resident mode: records and consumer indexes */
	uint32_t nq;
	uint64_t consumed[1024];
} hq;

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

/* host-resident mode's consumer: every QP's slots freed as soon as its record shows them */
static void *consumer_q(void *arg)
{
	(void)arg;
	for (;;) {
		int moved = 0;
		uint32_t q;

		for (q = 0; q < hq.nq; q++) {
			uint8_t *c = hq.ctl + (size_t)q * 512;
			uint32_t rec = dvx_be32_to_cpu(__atomic_load_n(
				&((uint32_t *)(void *)c)[DVX_MLX5_SND_DBR], __ATOMIC_ACQUIRE));
			uint64_t pi = hq.consumed[q] +
				      (uint16_t)((uint16_t)rec - (uint16_t)hq.consumed[q]);

			if (pi != hq.consumed[q]) {
				hq.consumed[q] = pi;
				__atomic_store_n((uint64_t *)(void *)(c + 64), pi, __ATOMIC_RELEASE);
				moved = 1;
			}
		}
		if (!moved && __atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
			/* the posters are done: one more pass finds whatever is left */
			for (q = 0; q < hq.nq; q++) {
				uint32_t rec = dvx_be32_to_cpu(__atomic_load_n(
					&((uint32_t *)(void *)(hq.ctl + (size_t)q * 512))[DVX_MLX5_SND_DBR],
					__ATOMIC_ACQUIRE));

				if ((uint16_t)rec != (uint16_t)hq.consumed[q])
					break;
			}
			if (q == hq.nq)
				return NULL;
		}
	}
}

/*
 * One QP per block, host-resident against GPU-resident, in one table (see the top of
 * the file). Returns nothing: any failure ends the program.
 */
static void per_block_table(const struct dvx_hal *hal, struct dvx_gpu_module *mod,
			    struct dvx_gpu_stream *s)
{
	static const char *const scope_name[] = { "thread", "warp", "block" };
	uint32_t nq = g.attr.sm_count, q, R = nwqebb * 64;
	struct dvx_gpu_sq *v[2];
	struct dvx_hal_mem hring, hctl, huar;
	struct dvx_gpu_hostreg rr, cr, ur;
	struct dvx_gpu_mem dring, dctl, dctrs, dviews[2], dst, ddone;
	struct dvx_gpu_stream s2;
	uint64_t *done;
	uint8_t *zero;
	int32_t *st;
	void *kp, *kr;
	unsigned sc, b;

	const char *tpb = getenv("GPU_POST_RECYCLER_TPB");
	uint32_t rtpb = tpb ? (uint32_t)strtoul(tpb, NULL, 0) : 32;

	if (!rtpb || rtpb > 1024)
		rtpb = 32;
	if (nq > 1024)
		nq = 1024;
	die(dvx_gpu_module_function(mod, "b_post_q", &kp), "function b_post_q");
	die(dvx_gpu_module_function(mod, "b_recycle", &kr), "function b_recycle");
	die(dvx_gpu_stream_create(&g, &s2), "stream");
	/* host-resident: rings and control in host memory, counters in device memory */
	die(dvx_hal_mem_alloc(hal, (uint64_t)nq * R, 4096, -1, DVX_MEM_F_ZERO, &hring), "ring");
	die(dvx_hal_mem_alloc(hal, (uint64_t)nq * 512, 4096, -1, DVX_MEM_F_ZERO, &hctl), "ctl");
	/* the UAR words of both modes (64 bytes per QP) and, after them, the stop flag */
	die(dvx_hal_mem_alloc(hal, (uint64_t)nq * 64 + 4096, 4096, -1, DVX_MEM_F_ZERO, &huar),
	    "uar");
	die(dvx_gpu_host_register(&g, hring.addr, (uint64_t)nq * R, 0, &rr), "reg ring");
	die(dvx_gpu_host_register(&g, hctl.addr, (uint64_t)nq * 512, 0, &cr), "reg ctl");
	die(dvx_gpu_host_register(&g, huar.addr, (uint64_t)nq * 64 + 4096, 0, &ur), "reg uar");
	/* GPU-resident: rings and control (record at 0, consumer index at 64, counters
	 * at 256 of each QP's 512 bytes) in device memory */
	die(dvx_gpu_mem_alloc(&g, (uint64_t)nq * R, 0, &dring), "device ring");
	die(dvx_gpu_mem_alloc(&g, (uint64_t)nq * 512, 0, &dctl), "device ctl");
	die(dvx_gpu_mem_alloc(&g, (uint64_t)nq * 256, 0, &dctrs), "device ctrs");
	die(dvx_gpu_mem_alloc(&g, (uint64_t)nq * sizeof(struct dvx_gpu_sq), 0, &dviews[0]), "views");
	die(dvx_gpu_mem_alloc(&g, (uint64_t)nq * sizeof(struct dvx_gpu_sq), 0, &dviews[1]), "views");
	die(dvx_gpu_mem_alloc(&g, (uint64_t)nq * 256 * 4, 0, &dst), "status");
	die(dvx_gpu_mem_alloc(&g, (uint64_t)nq * 8, 0, &ddone), "done");
	v[0] = calloc(nq, sizeof(*v[0]));
	v[1] = calloc(nq, sizeof(*v[1]));
	st = calloc((size_t)nq * 256, sizeof(*st));
	done = calloc(nq, sizeof(*done));
	zero = calloc(nq, 512);
	if (!v[0] || !v[1] || !st || !done || !zero)
		die(-ENOMEM, "host memory");
	for (q = 0; q < nq; q++) {
		die(dvx_gpu_sq_view_init(&v[0][q],
					 &(struct dvx_gpu_sq_cfg){
						 DVX_GPU_Q_SYS, rr.dptr + (uint64_t)q * R, nwqebb,
						 0x100 + q, 64, cr.dptr + q * 512ull,
						 ur.dptr + q * 64ull, dctrs.dptr + q * 256ull,
						 cr.dptr + q * 512ull + 64 }),
		    "view");
		die(dvx_gpu_sq_view_init(&v[1][q],
					 &(struct dvx_gpu_sq_cfg){
						 0, dring.dptr + (uint64_t)q * R, nwqebb, 0x100 + q,
						 64, dctl.dptr + q * 512ull, ur.dptr + q * 64ull,
						 dctl.dptr + q * 512ull + 256,
						 dctl.dptr + q * 512ull + 64 }),
		    "view");
	}
	die(dvx_gpu_memcpy_htod(&g, dviews[0].dptr, v[0], (uint64_t)nq * sizeof(*v[0])), "views");
	die(dvx_gpu_memcpy_htod(&g, dviews[1].dptr, v[1], (uint64_t)nq * sizeof(*v[1])), "views");
	hq.ctl = hctl.addr;

	printf("\ngpu-post: one QP per block (%u-WQEBB rings), host-resident vs GPU-resident "
	       "queues (recycler: %u QPs per block)\n", nwqebb, rtpb);
	printf("%-7s %-7s %6s %8s %10s %14s %14s %7s %14s\n", "scope", "blocks", "thr/b",
	       "WQEs", "per thread", "host WQEs/s", "GPU WQEs/s", "GPU/host", "GPU/s/block");
	for (sc = 0; sc < 3; sc++) {
		for (b = 0; b <= nq; b = b ? (b * 2 > nq && b < nq ? nq : b * 2) : 1) {
			uint32_t grid = b ? b : 1, block = 256, per = sc == 0 ? 64 : 256;
			uint32_t nthr, m;
			double rate[2];

			if (!b && sc)
				continue;	/* the lone thread row: thread scope only */
			if (!b)
				block = 1, per = 20000;
			nthr = grid * block;
			for (m = 0; m < 2; m++) {
				uint64_t timeout = 30 * SEC, status = dst.dptr, total, t0, t1, got = 0;
				uint64_t views = dviews[m].dptr, stopp = ur.dptr + (uint64_t)nq * 64;
				uint32_t *stopf = (uint32_t *)(void *)((uint8_t *)huar.addr + (size_t)nq * 64);
				void *args[] = { &views, &sc, &per, &timeout, &status };
				void *rargs[] = { &views, &grid, &stopp, &ddone.dptr };
				uint32_t rgrid = (grid + rtpb - 1) / rtpb, rblock = rtpb;
				pthread_t thr;
				unsigned j, rep;

				total = (uint64_t)nthr * per;
				for (rep = 0; rep < 2; rep++) {	/* the first is the warm-up */
					__atomic_store_n(stopf, 0, __ATOMIC_RELEASE);
					if (m == 0) {
						memset(hctl.addr, 0, (size_t)nq * 512);
						memset(hq.consumed, 0, sizeof(hq.consumed));
						hq.nq = grid;
						__atomic_store_n(&stop, 0, __ATOMIC_RELEASE);
						die(dvx_gpu_memcpy_htod(&g, dctrs.dptr, zero, nq * 256ull),
						    "zero ctrs");
						pthread_create(&thr, NULL, consumer_q, NULL);
					} else {
						die(dvx_gpu_memcpy_htod(&g, dctl.dptr, zero, nq * 512ull),
						    "zero ctl");
						die(dvx_gpu_launch(&g, kr, rgrid, rblock, 0, &s2, rargs),
						    "launch recycler");
					}
					t0 = now_ns();
					die(dvx_gpu_launch(&g, kp, grid, block, 0, s, args), "launch");
					die(dvx_gpu_stream_wait(s, 300 * SEC), "wait");
					t1 = now_ns();
					__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
					__atomic_store_n(stopf, 1, __ATOMIC_RELEASE);
					if (m == 0) {
						pthread_join(thr, NULL);
					} else {
						die(dvx_gpu_stream_wait(&s2, 60 * SEC), "recycler");
						die(dvx_gpu_memcpy_dtoh(&g, done, ddone.dptr, grid * 8ull),
						    "done");
					}
					__atomic_store_n(&stop, 0, __ATOMIC_RELEASE);
					die(dvx_gpu_memcpy_dtoh(&g, st, status, nthr * 4ull), "status");
					for (j = 0; j < nthr; j++)
						if (st[j])
							die(st[j], "a poster failed");
					for (got = 0, j = 0; j < grid; j++)
						got += m ? done[j] : hq.consumed[j];
					if (got != total) {
						fprintf(stderr, "gpu-post: %s mode consumed %llu of %llu\n",
							m ? "GPU" : "host", (unsigned long long)got,
							(unsigned long long)total);
						exit(1);
					}
				}
				rate[m] = total * 1e9 / (double)(t1 - t0);
			}
			printf("%-7s %-7u %6u %8llu %10u %14.0f %14.0f %7.2f %14.0f\n", scope_name[sc],
			       grid, block, (unsigned long long)nthr * per, per, rate[0], rate[1],
			       rate[1] / rate[0], rate[1] / grid);
			if (b == nq)
				break;
		}
	}
	free(zero);
	free(done);
	free(st);
	free(v[1]);
	free(v[0]);
	dvx_gpu_mem_free(&ddone);
	dvx_gpu_mem_free(&dst);
	dvx_gpu_mem_free(&dviews[1]);
	dvx_gpu_mem_free(&dviews[0]);
	dvx_gpu_mem_free(&dctrs);
	dvx_gpu_mem_free(&dctl);
	dvx_gpu_mem_free(&dring);
	dvx_gpu_host_unregister(&ur);
	dvx_gpu_host_unregister(&cr);
	dvx_gpu_host_unregister(&rr);
	dvx_hal_mem_free(hal, &huar);
	dvx_hal_mem_free(hal, &hctl);
	dvx_hal_mem_free(hal, &hring);
	dvx_gpu_stream_destroy(&s2);
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
	die(dvx_gpu_sq_view_init(&sq, &(struct dvx_gpu_sq_cfg){ DVX_GPU_Q_SYS, rr.dptr, nwqebb,
								0x123, 64, cr.dptr, cr.dptr + 64,
								dm.dptr, cr.dptr + 128 }),
	    "view");

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
	per_block_table(hal, &mod, &s);
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
