// SPDX-License-Identifier: MIT
/*
 * bench/nvl-bench - the NVLink path: put bandwidth from 8 B to 1 GiB (dvx's device put at
 * block and warp scope over all SMs and one block, dvx's host put on a copy engine)
 * beside a plain SM copy kernel and cuMemcpyAsync in the same run, then the latency of
 * signal, put_signal (8 B) and a barrier of two ranks, beside a plain relaxed
 * atomicAdd_system ping-pong.
 *
 * Two ranks are threads of this process on the GPU(s) given (default: both on GPU 0):
 * the multi-peer transport classifies them NVL, dvx_nvl_exchange() maps rank 1's buffer
 * into the process for rank 0 (a POSIX-fd import, the path between processes), and rank
 * 0 puts into that mapping. On one GPU a "peer" write is a write to the same HBM
 * through a second mapping: the figures are the GPU's copy rates, not NVLink's.
 * Bandwidth: host wall time of 20 back-to-back launches (or copies) after a warm-up,
 * per operation, GB/s = 1e9 B/s; latency: %globaltimer around 10000 round trips inside
 * the kernels (two kernels running at once), half a round trip reported.
 *
 *   nvl-bench [gpu of rank 1 (default 0)] [--quick]
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dvx/gpu/gpu.h>
#include <dvx/mp/mp.h>
#include <dvx/nvl/ops.h>

extern const unsigned char dvx_fatbin_bench_nvl_bench[];
extern const size_t dvx_fatbin_bench_nvl_bench_len;

#define SEC 1000000000ull
#define TMO (30 * SEC)
#define MAXLEN (1ull << 30)
#define REPS 20
#define EXTRA (64u << 10)	/* after MAXLEN: words [0, 4 KiB), small-message lines after */
#define LINES 4096u

struct rank {
	int id, ordinal;
	struct dvx_bootstrap bs;
	struct dvx_gpu g;
	struct dvx_mp mp;
	struct dvx_gpu_mem buf, src;
	struct dvx_nvl_peer peers[2];
	struct dvx_nvl_buf nb;
	struct dvx_gpu_stream s;
	struct dvx_gpu_module mod;
	void *k_block, *k_warp, *k_ref, *k_pp, *k_var, *k_share, *k_small, *k_grid;
	void *state;
	struct dvx_gpu_mem out;
};

static struct rank R[2];
static struct dvx_bootstrap_tgroup *grp;
static pthread_barrier_t bar;
static int quick;

static void die(struct rank *r, int err, const char *what)
{
	if (err) {
		fprintf(stderr, "nvl-bench: rank %d: %s: %d (%s: %s)\n", r->id, what, err,
			r->g.hg.diag.op, r->g.hg.diag.msg);
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
	static uint8_t zero[EXTRA];

	die(r, dvx_bootstrap_thread_init(&r->bs, grp, r->id), "bootstrap");
	die(r, dvx_gpu_open(&r->g, dvx_hal_cuda(), r->ordinal, NULL), "gpu_open");
	memset(&c, 0, sizeof(c));
	c.rank = r->id;
	c.nranks = 2;
	c.bs = &r->bs;
	c.gpu = &r->g;
	c.timeout_ns = TMO;
	r->state = aligned_alloc(64, (dvx_mp_mem_size(&c) + 63) & ~(size_t)63);
	die(r, dvx_mp_init(&r->mp, &c, r->state, dvx_mp_mem_size(&c)), "mp_init");
	die(r, dvx_mp_connect(&r->mp, NULL, 0, NULL, 0), "mp_connect");
	die(r, dvx_gpu_module_load(&r->g, dvx_fatbin_bench_nvl_bench, dvx_fatbin_bench_nvl_bench_len,
				   &r->mod), "module");
	die(r, dvx_gpu_module_function(&r->mod, "b_put_block", &r->k_block), "b_put_block");
	die(r, dvx_gpu_module_function(&r->mod, "b_put_warp", &r->k_warp), "b_put_warp");
	die(r, dvx_gpu_module_function(&r->mod, "b_ref_copy", &r->k_ref), "b_ref_copy");
	die(r, dvx_gpu_module_function(&r->mod, "b_pingpong", &r->k_pp), "b_pingpong");
	die(r, dvx_gpu_module_function(&r->mod, "b_sigvar", &r->k_var), "b_sigvar");
	die(r, dvx_gpu_module_function(&r->mod, "b_put_share", &r->k_share), "b_put_share");
	die(r, dvx_gpu_module_function(&r->mod, "b_small", &r->k_small), "b_small");
	die(r, dvx_gpu_module_function(&r->mod, "b_put_grid", &r->k_grid), "b_put_grid");
	die(r, dvx_gpu_stream_create(&r->g, &r->s), "stream");
	die(r, dvx_gpu_mem_alloc(&r->g, MAXLEN + EXTRA, DVX_GPU_MEM_EXPORT, &r->buf), "buffer");
	die(r, dvx_gpu_mem_alloc(&r->g, MAXLEN, 0, &r->src), "source");
	die(r, dvx_gpu_mem_alloc(&r->g, 4096, 0, &r->out), "out");
	die(r, dvx_gpu_memcpy_htod(&r->g, r->buf.dptr + MAXLEN, zero, EXTRA), "zero");
	die(r,
	    dvx_nvl_exchange(&r->nb, r->peers, dvx_mp_nvl_bootstrap(&r->mp), &r->mp.topo, &r->g,
			     &(struct dvx_nvl_cfg){ (void *)(uintptr_t)r->buf.dptr, MAXLEN + EXTRA,
						    NULL, TMO }),
	    "exchange");
}

/* GB/s of @reps back-to-back launches of @k (grid x block) or, with k NULL, copies */
static double bw(struct rank *r, void *k, uint32_t grid, uint32_t block, uint64_t dst,
		 uint64_t len, int host_put, uint64_t tile)
{
	void *args[] = { &dst, &r->src.dptr, &len, &tile };	/* b_put_share, b_ref_copy: 3 */
	uint64_t t0 = 0;
	int i;

	for (i = -1; i < REPS; i++) {
		if (i == 0) {
			die(r, dvx_gpu_stream_wait(&r->s, TMO), "warm-up");
			t0 = now_ns();
		}
		if (host_put)
			die(r, dvx_mp_nvl_put(&r->mp, &r->s, dst, r->src.dptr, len), "host put");
		else if (k)
			die(r, dvx_gpu_launch(&r->g, k, grid, block, 0, &r->s, args), "launch");
		else
			die(r, dvx_hal_gpu_memcpy_async(&r->g.hg, dst, r->src.dptr, len, r->s.handle),
			    "memcpy");
	}
	die(r, dvx_gpu_stream_wait(&r->s, TMO), "wait");
	return (double)len * REPS / (double)(now_ns() - t0);
}

static void table_bw(void)
{
	struct rank *r = &R[0];
	uint64_t dst = dvx_nvl_peer_ptr(&r->nb, 1), len;
	uint32_t sms = r->g.attr.sm_count;

	printf("\nput bandwidth, rank 0 -> rank 1's mapped buffer (GB/s; %u SMs)\n", sms);
	printf("%10s %12s %12s %12s %12s %12s | %12s %12s %7s\n", "size", "dvx sized", "dvx block",
	       "dvx warp", "dvx 1 block", "dvx host CE", "ref SM copy", "ref memcpy", "sz/ref");
	for (len = 8; len <= MAXLEN; len *= (len < 4096 ? 8 : 4)) {
		uint32_t blocks = len < (1u << 20) ? (uint32_t)((len + 65535) / 65536) : sms * 4;
		uint64_t tile;

		if (quick && len > (64ull << 20))
			break;
		if (blocks > sms * 4)
			blocks = sms * 4;
		/* tiles: every block busy, at most 64 KiB (blocks then interleave in memory) */
		tile = (len / blocks + 15) & ~15ull;
		tile = tile < 4096 ? 4096 : tile > (64 << 10) ? (64 << 10) : tile;
		double sized = bw(r, r->k_grid, dvx_nvl_put_blocks(len, sms, 512), 512, dst, len, 0, 0);
		double ref = bw(r, r->k_ref, blocks, 512, dst, len, 0, 0);

		printf("%10llu %12.2f %12.2f %12.2f %12.2f %12.2f | %12.2f %12.2f %7.3f\n",
		       (unsigned long long)len, sized,
		       bw(r, r->k_block, blocks, 512, dst, len, 0, tile),
		       bw(r, r->k_warp, blocks, 512, dst, len, 0, tile / 4 < 512 ? 512 : tile / 4),
		       bw(r, r->k_block, 1, 1024, dst, len, 0, len),
		       bw(r, NULL, 0, 0, dst, len, 1, 0), ref,
		       bw(r, NULL, 0, 0, dst, len, 0, 0), sized / ref);
		fflush(stdout);
	}
}

/* the sizing of dvx_nvl_put_blocks(): the grid put at 1 to 8 vectors per thread, and a
 * block put of 16 KiB shares, against the reference */
static void table_sweep(void)
{
	struct rank *r = &R[0];
	uint64_t dst = dvx_nvl_peer_ptr(&r->nb, 1), len;
	uint32_t sms = r->g.attr.sm_count, m;

	printf("\nput sizing sweep (GB/s): grid put (512 threads) with m times fewer blocks than "
	       "dvx_nvl_put_blocks() (m = 1), block put of 16 KiB shares\n");
	printf("%10s %12s %10s %10s %10s %10s %12s\n", "size", "ref SM copy", "m=1", "m=2", "m=4", "m=8",
	       "share 16K");
	for (len = 64 << 10; len <= (16 << 20); len *= 2) {
		uint32_t blocks = len < (1u << 20) ? (uint32_t)((len + 65535) / 65536) : sms * 4;

		printf("%10llu %12.2f", (unsigned long long)len, bw(r, r->k_ref, blocks, 512, dst, len, 0, 0));
		for (m = 1; m <= 8; m *= 2)
			printf(" %10.2f", bw(r, r->k_grid, dvx_nvl_put_blocks(len, sms, 512 * m), 512, dst, len, 0, 0));
		printf(" %12.2f\n", bw(r, r->k_share, (uint32_t)((len + 16383) / 16384), 512, dst, len, 0, 0));
		fflush(stdout);
	}
}

static int pp_mode, pp_var, pp_small, pp_ll, pp_scope;
static uint64_t pp_len;
static uint32_t pp_iters;
static uint64_t pp_ns[2];

static void *pp_thread(void *arg)
{
	struct rank *r = arg;
	int peer = 1 - r->id, mode = pp_mode, rank = r->id;
	uint64_t pw = dvx_nvl_peer_ptr(&r->nb, peer) + MAXLEN, mw = r->buf.dptr + MAXLEN;
	uint64_t pbuf = dvx_nvl_peer_ptr(&r->nb, peer) + MAXLEN + 256, out[2];
	void *args[] = { &mode, &rank, &pw, &mw, &pbuf, &r->src.dptr, &pp_iters, &r->out.dptr };
	uint64_t pdata = dvx_nvl_peer_ptr(&r->nb, peer) + MAXLEN + 512;
	void *vargs[] = { &mode, &rank, &pw, &mw, &pp_iters, &r->out.dptr, &pdata };
	uint64_t plines = dvx_nvl_peer_ptr(&r->nb, peer) + MAXLEN + LINES, mlines = mw + LINES;
	uint64_t sdst = r->src.dptr + MAXLEN / 2;
	void *sargs[] = { &pp_ll, &pp_scope, &rank, &plines, &mlines, &pw, &mw, &r->src.dptr, &sdst,
			  &pp_len, &pp_iters, &r->out.dptr };
	static uint8_t zero[EXTRA];

	die(r, dvx_gpu_make_current(&r->g), "current");
	die(r, dvx_gpu_memcpy_htod(&r->g, mw, zero, EXTRA), "reset");
	pthread_barrier_wait(&bar);
	if (pp_small)
		die(r, dvx_gpu_launch(&r->g, r->k_small, 1, pp_scope == 0 ? 1 : pp_scope == 1 ? 32 : 128, 0,
				      &r->s, sargs), "small");
	else if (pp_var)
		die(r, dvx_gpu_launch(&r->g, r->k_var, 1, 1, 0, &r->s, vargs), "sigvar");
	else
		die(r, dvx_gpu_launch(&r->g, r->k_pp, 1, 1, 0, &r->s, args), "pingpong");
	die(r, dvx_gpu_stream_wait(&r->s, TMO), "pingpong wait");
	die(r, dvx_gpu_memcpy_dtoh(&r->g, out, r->out.dptr, 16), "out");
	pp_ns[rank] = out[rank];
	pthread_barrier_wait(&bar);
	return NULL;
}

static double pingpong(int mode)
{
	pthread_t t;

	pp_mode = mode;
	pp_iters = quick ? 1000 : 10000;
	pthread_create(&t, NULL, pp_thread, &R[1]);
	pp_thread(&R[0]);
	pthread_join(t, NULL);
	if (!pp_ns[0])
		return -1;
	/* a barrier round is one crossing each way at once: report per barrier */
	return !pp_var && !pp_small && mode == 4 ? (double)pp_ns[0] / pp_iters : (double)pp_ns[0] / (2.0 * pp_iters);
}

static void *setup_thread(void *arg)
{
	setup(arg);
	return NULL;
}

int main(int argc, char **argv)
{
	struct dvx_bootstrap_tgroup_cfg ga;
	pthread_t t;
	unsigned n = 0;
	size_t sz;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick"))
			quick = 1;
		else
			R[1].ordinal = atoi(argv[i]);
	}
	if (!dvx_hal_cuda() || !dvx_fatbin_bench_nvl_bench_len || dvx_gpu_count(dvx_hal_cuda(), &n) ||
	    !n) {
		printf("nvl-bench: no NVIDIA GPU (or a build without CUDA/nvcc): skipped\n");
		return 77;
	}
	memset(&ga, 0, sizeof(ga));
	ga.nranks = 2;
	ga.max_unexpected = 16;
	ga.slot_bytes = 8192;
	sz = dvx_bootstrap_tgroup_mem_size(2, 16, 8192);
	if (dvx_bootstrap_tgroup_init(&grp, &ga, calloc(1, sz), sz))
		return 1;
	pthread_barrier_init(&bar, NULL, 2);
	R[0].id = 0;
	R[1].id = 1;
	pthread_create(&t, NULL, setup_thread, &R[1]);
	setup(&R[0]);
	pthread_join(t, NULL);
	die(&R[0], dvx_gpu_make_current(&R[0].g), "current");
	printf("nvl-bench: rank 0 on GPU %d (%s, %s), rank 1 on GPU %d; buffers shared as %s\n",
	       R[0].ordinal, R[0].g.attr.name, R[0].g.attr.pci, R[1].ordinal,
	       R[0].nb.mode == DVX_NVL_FD ? "POSIX fd" : "fabric/IPC");
	table_bw();
	table_sweep();
	printf("\nlatency (ns, half round trip; barrier: per barrier of 2 ranks), one thread per rank\n");
	printf("%-38s %10.0f\n", "dvx signal SET + wait (release/acquire)", pingpong(0));
	printf("%-38s %10.0f\n", "dvx signal ADD + wait", pingpong(2));
	printf("%-38s %10.0f\n", "dvx signal SET relaxed + wait", pingpong(5));
	printf("%-38s %10.0f\n", "dvx put_signal 8 B + wait", pingpong(1));
	printf("%-38s %10.0f\n", "dvx barrier (ADD + wait), 2 ranks", pingpong(4));
	printf("%-38s %10.0f\n", "ref atomicAdd_system (relaxed) + acquire", pingpong(3));
	{
		static const char *const how[] = {
			"st.relaxed.sys", "atom.exch.relaxed.sys", "red.add.relaxed.sys",
			"atomicAdd_system", "st.release.sys", "red.add.release.sys",
			"fence.acq_rel.sys + atomicAdd_system", "fence.acq_rel.gpu + atomicAdd_system",
			"st.release.gpu",
			"put 8 B, fence.acq_rel.sys, st.relaxed.sys",
			"put 8 B, st.release.sys",
			"put 8 B, red.add.release.sys",
			"put 8 B, fence.sc.sys, st.relaxed.sys",
			"put 8 B, atom.exch.release.sys",
			"put 8 B, fence.acq_rel.sys, red.add.relaxed",
			"put 8 B, __threadfence_system, st.relaxed",
			"8 B as one flagged line (LL; relaxed look)",
		};

		printf("\nsignal implementations (ns, half round trip, acquire-spin waits)\n");
		pp_var = 1;
		for (i = 0; i < 17; i++)
			printf("%-38s %10.0f\n", how[i], pingpong(i));
		pp_var = 0;
	}
	{
		static const uint64_t lens[] = { 8, 64, 256, 1024, 2048, 4096, 8192 };
		unsigned j;

		printf("\nsmall messages (ns, half round trip; payload copied out at the receiver):\n"
		       "flagged lines (LL) against put_signal (release) + wait, thread / warp / block (128)\n");
		printf("%8s %10s %10s %10s | %10s %10s %10s\n", "bytes", "LL thread", "LL warp", "LL block",
		       "ps thread", "ps warp", "ps block");
		pp_small = 1;
		for (j = 0; j < sizeof(lens) / sizeof(lens[0]); j++) {
			double v[6];

			pp_len = lens[j];
			for (i = 0; i < 6; i++) {
				pp_ll = i < 3;
				pp_scope = i % 3;
				v[i] = pingpong(0);
			}
			printf("%8llu %10.0f %10.0f %10.0f | %10.0f %10.0f %10.0f\n",
			       (unsigned long long)pp_len, v[0], v[1], v[2], v[3], v[4], v[5]);
			fflush(stdout);
		}
		pp_small = 0;
	}
	return 0;
}
