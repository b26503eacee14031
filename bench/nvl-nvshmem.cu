// SPDX-License-Identifier: MIT
/*
 * bench/nvl-nvshmem - dvx's NVLink device API beside NVSHMEM in one program, on the same
 * memory and in the same run: two processes (one PE a GPU; both on GPU 0 when there is
 * one), NVSHMEM's symmetric heap mapped to the peer by NVSHMEM itself (nvshmem_ptr()),
 * dvx's device calls (dvx/nvl/dev.cuh, header-only) on that mapping, NVSHMEM's on the
 * symmetric addresses. Each row prints dvx's figure and NVSHMEM's equivalent.
 *
 * Built only where NVSHMEM is found (bench/nvl-nvshmem.sh; never part of the library,
 * its tests or the default build). It is a comparison program outside the library, so
 * unlike dvx it uses the CUDA runtime, which NVSHMEM needs.
 *
 * Latency (two GPUs only: kernels of two processes on one GPU take turns): one thread
 * per PE (a block for the _block rows), 10000 round trips timed with %globaltimer inside
 * the kernel, half a round trip reported (a barrier: per barrier). The one-thread rows
 * run five times interleaved and report their medians (one run of each moved by up to
 * 90 ns between runs of the program); the rows "written out" are dvx's parts without
 * the call (a relaxed store and relaxed looks; one flagged line of constants; one
 * flagged line of the payload), so a row's distance to them is the call's cost.
 * Bandwidth: PE 0 puts into PE 1's heap, back-to-back launches between CUDA events
 * after a warm-up (below), GB/s = 1e9 B/s.
 *
 *   nvl-nvshmem [--quick] [--grids]
 *
 * --grids: then 256 KiB-16 MiB put by dvx and by the reference copy on eight grids each
 * (16-528 blocks of 512 threads), the medians of seven interleaved trials: whether the
 * grid dvx_nvl_put_blocks() picks is the one to pick, for dvx and the reference alike.
 *
 * Bandwidth: each size's four puts (dvx sized, NVSHMEM putmem_block over all SMs and on
 * dvx's grid, the reference SM copy on dvx's grid) measured in turn, seven times, each
 * time ~64 MiB of back-to-back launches (20-400): the medians, and the median of the
 * seven dvx/ref ratios (one 20-launch sample moved 64 KiB-1 MiB rows by 5-20%).
 */
#include <dvx/nvl/dev.cuh>

#include <nvshmem.h>
#include <nvshmemx.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CK(x)                                                                                   \
	do {                                                                                    \
		cudaError_t e_ = (x);                                                           \
		if (e_ != cudaSuccess) {                                                        \
			fprintf(stderr, "nvl-nvshmem: %s: %s\n", #x, cudaGetErrorString(e_));   \
			exit(1);                                                                \
		}                                                                               \
	} while (0)

#define BIG (256ull << 20)
#define TMO 10000000000ull

/* symmetric layout after the BIG data area */
#define W_SIG 0		/* signal word */
#define W_BAR 64	/* barrier word */
#define W_DATA 4096	/* put_signal payloads */
#define W_LINES 65536	/* flagged lines */
#define W_END (W_LINES + 65536)

enum {
	L_SIG_DVX, L_SIG_SHM,		/* relaxed signal SET + wait */
	L_PS8_LL, L_PS8_DVX, L_PS8_SHM,	/* 8 B put_signal + wait */
	L_PSB_LL, L_PSB_DVX, L_PSB_SHM,	/* @len at block scope */
	L_BAR_DVX, L_BAR_SHM,		/* barrier of two */
	/* the parts of the rows above, written out: where their time goes */
	L_SIG_RLXW,			/* relaxed SET, the wait's looks relaxed */
	L_PS8_RAW,			/* one flagged line of constants, no payload read */
	L_PS8_SRC,			/* one flagged line of the payload, written out */
	L_NROWS
};

/* the written-out forms' looks: relaxed system-scope loads until @v */
__device__ static void poll_u64(const uint64_t *w, uint64_t v)
{
	uint64_t x;

	do
		asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(x) : "l"(w) : "memory");
	while (x < v);
}

__device__ static void poll_line(const void *line, uint32_t seq, uint64_t *pay)
{
	uint64_t a, b;

	do
		dvx_nvl_ll_load(line, &a, &b);
	while ((uint32_t)(a >> 32) != seq || (uint32_t)(b >> 32) != seq);
	*pay = (a & 0xffffffffu) | (b << 32);
}

__global__ void k_lat(int which, int me, uint8_t *heap, uint8_t *peer, const uint8_t *src,
		      uint8_t *dst, uint64_t len, uint32_t iters, uint64_t *out)
{
	uint64_t *sig = (uint64_t *)(heap + BIG + W_SIG), *psig = (uint64_t *)(peer + BIG + W_SIG);
	uint64_t *bar = (uint64_t *)(heap + BIG + W_BAR), *pbar = (uint64_t *)(peer + BIG + W_BAR);
	uint8_t *data = heap + BIG + W_DATA, *pdata = peer + BIG + W_DATA;
	uint8_t *lines = heap + BIG + W_LINES, *plines = peer + BIG + W_LINES;
	int other = 1 - me, err = 0;
	uint64_t t0 = dvx_nvl_now_ns();
	uint32_t r;

	for (r = 1; r <= iters && !err; r++) {
		if (which == L_BAR_DVX) {
			if (threadIdx.x == 0) {
				dvx_nvl_signal(pbar, DVX_NVL_SIG_ADD, 1);
				err = dvx_nvl_wait(bar, DVX_CMP_GE, r, TMO, nullptr);
			}
			continue;
		}
		if (which == L_BAR_SHM) {
			nvshmem_barrier_all();
			continue;
		}
		for (int turn = 0; turn < 2 && !err; turn++) {
			bool recv = (turn == 0) == (me == 1);

			switch (which * 2 + recv) {
			case L_SIG_DVX * 2:
			case L_SIG_RLXW * 2:
				dvx_nvl_signal(psig, DVX_NVL_SIG_SET | DVX_NVL_SIG_RELAXED, r);
				break;
			case L_SIG_RLXW * 2 + 1:
				poll_u64(sig, r);
				break;
			case L_PS8_RAW * 2:
				dvx_nvl_ll_store(plines, (uint64_t)r << 32 | r, (uint64_t)r << 32 | r);
				break;
			case L_PS8_SRC * 2: {
				uint64_t v = *(const uint64_t *)src;

				dvx_nvl_ll_store(plines, (v & 0xffffffffu) | (uint64_t)r << 32,
						 (v >> 32) | (uint64_t)r << 32);
				break;
			}
			case L_PS8_RAW * 2 + 1:
			case L_PS8_SRC * 2 + 1: {
				uint64_t v;

				poll_line(lines, r, &v);
				if (which == L_PS8_SRC)
					*(uint64_t *)dst = v;
				break;
			}
			case L_SIG_DVX * 2 + 1:
			case L_PS8_DVX * 2 + 1:
				err = dvx_nvl_wait(sig, DVX_CMP_GE, r, TMO, nullptr);
				if (!err && which == L_PS8_DVX)
					*(volatile uint64_t *)dst = *(volatile uint64_t *)data;
				break;
			case L_SIG_SHM * 2:
				nvshmemx_signal_op(sig, r, NVSHMEM_SIGNAL_SET, other);
				break;
			case L_SIG_SHM * 2 + 1:
			case L_PS8_SHM * 2 + 1:
				nvshmem_signal_wait_until(sig, NVSHMEM_CMP_GE, r);
				if (which == L_PS8_SHM)
					*(volatile uint64_t *)dst = *(volatile uint64_t *)data;
				break;
			case L_PS8_LL * 2:
				err = dvx_nvl_dev_put_ll(dvx_dev_thread(), plines, src, 8, r);
				break;
			case L_PS8_LL * 2 + 1:
				err = dvx_nvl_dev_wait_ll(dvx_dev_thread(), lines, dst, 8, r, TMO);
				break;
			case L_PS8_DVX * 2:
				err = dvx_nvl_dev_put_signal(dvx_dev_thread(), pdata, src, 8, psig, DVX_NVL_SIG_SET, r);
				break;
			case L_PS8_SHM * 2:
				nvshmem_putmem_signal_nbi(data, src, 8, sig, r, NVSHMEM_SIGNAL_SET, other);
				break;
			case L_PSB_LL * 2:
				err = dvx_nvl_dev_put_ll(dvx_dev_block(), plines, src, len, r);
				break;
			case L_PSB_LL * 2 + 1:
				err = dvx_nvl_dev_wait_ll(dvx_dev_block(), lines, dst, len, r, TMO);
				break;
			case L_PSB_DVX * 2:
				err = dvx_nvl_dev_put_signal(dvx_dev_block(), pdata, src, len, psig, DVX_NVL_SIG_SET, r);
				break;
			case L_PSB_DVX * 2 + 1:
				err = dvx_nvl_dev_wait(dvx_dev_block(), sig, DVX_CMP_GE, r, TMO);
				if (!err)
					dvx_nvl_dev_put(dvx_dev_block(), dst, data, len);
				break;
			case L_PSB_SHM * 2:
				nvshmemx_putmem_signal_nbi_block(data, src, len, sig, r, NVSHMEM_SIGNAL_SET,
								 other);
				break;
			case L_PSB_SHM * 2 + 1:
				if (threadIdx.x == 0)
					nvshmem_signal_wait_until(sig, NVSHMEM_CMP_GE, r);
				__syncthreads();
				dvx_nvl_dev_put(dvx_dev_block(), dst, data, len);
				break;
			}
		}
	}
	if (threadIdx.x == 0)
		out[me] = err ? 0 : dvx_nvl_now_ns() - t0;
}

/* dvx put by the whole grid, the launch sized to the transfer (dvx_nvl_put_blocks()) */
__global__ void k_dvx_put(uint8_t *dst, const uint8_t *src, uint64_t len)
{
	dvx_nvl_dev_put_grid(dst, src, len);
}

/* NVSHMEM put, one share per block (nvshmemx_putmem_block), then quiet */
__global__ void k_shm_put(uint8_t *dst, const uint8_t *src, uint64_t len, int pe)
{
	uint64_t share = dvx_nvl_put_share(len, gridDim.x), off = blockIdx.x * share;

	if (off < len)
		nvshmemx_putmem_block(dst + off, src + off, off + share > len ? len - off : share, pe);
	if (threadIdx.x == 0)
		nvshmem_quiet();
}

/* the reference: a plain grid-stride copy of 16-byte vectors through the mapping */
__global__ void k_ref(uint8_t *dst, const uint8_t *src, uint64_t len)
{
	uint64_t n = len / 16, i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
	uint64_t stride = (uint64_t)gridDim.x * blockDim.x;

	for (; i < n; i += stride)
		((int4 *)dst)[i] = ((const int4 *)src)[i];
}

static uint64_t *out_d;
static uint8_t *heap, *peer, *src, *dst;
static int me, quick, sms, grids;

static double lat(int which, uint64_t len, int threads)
{
	uint32_t iters = quick ? 1000 : 10000;
	uint64_t o[2] = { 0, 0 };

	CK(cudaMemset(heap + BIG, 0, W_END));
	CK(cudaDeviceSynchronize());
	nvshmem_barrier_all();
	k_lat<<<1, threads>>>(which, me, heap, peer, src, dst, len, iters, out_d);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(o, out_d, 16, cudaMemcpyDeviceToHost));
	nvshmem_barrier_all();
	if (!o[me])
		return -1;
	return which == L_BAR_DVX || which == L_BAR_SHM ? (double)o[me] / iters : (double)o[me] / (2.0 * iters);
}

/* GB/s of @reps back-to-back launches of kind @kind (after one to warm) */
static double bw(int kind, uint64_t len, int reps, uint32_t grid = 0)
{
	cudaEvent_t a, b;
	float ms;
	uint32_t g = grid ? grid : dvx_nvl_put_blocks(len, (uint32_t)sms, 512);
	int i;

	CK(cudaEventCreate(&a));
	CK(cudaEventCreate(&b));
	for (i = -1; i < reps; i++) {
		if (i == 0)
			CK(cudaEventRecord(a));
		if (kind == 0)
			k_dvx_put<<<g, 512>>>(peer, src, len);
		else if (kind == 1)
			k_shm_put<<<sms, 512>>>(heap, src, len, 1);
		else if (kind == 2)
			k_shm_put<<<g, 512>>>(heap, src, len, 1);
		else
			k_ref<<<g, 512>>>(peer, src, len);
	}
	CK(cudaEventRecord(b));
	CK(cudaGetLastError());
	CK(cudaEventSynchronize(b));
	CK(cudaEventElapsedTime(&ms, a, b));
	CK(cudaEventDestroy(a));
	CK(cudaEventDestroy(b));
	return (double)len * reps / (ms * 1e6);
}

static int cmp_d(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

/*
 * the four kinds at @len, TRIALS times interleaved (a drift of the clocks or the link
 * meets all four alike), each trial about 64 MiB of launches (20 to 400): the median
 * trial of each into @out, and the median of the per-trial dvx/ref ratios
 */
#define TRIALS 7
#define LTRIALS 5
static double bw_median(uint64_t len, double out[4])
{
	double v[4][TRIALS], r[TRIALS];
	int reps = (int)((64ull << 20) / len), k, t;

	reps = reps < 20 ? 20 : reps > 400 ? 400 : reps;
	for (t = 0; t < TRIALS; t++) {
		for (k = 0; k < 4; k++)
			v[k][t] = bw(k, len, reps);
		r[t] = v[0][t] / v[3][t];
	}
	for (k = 0; k < 4; k++) {
		qsort(v[k], TRIALS, sizeof(double), cmp_d);
		out[k] = v[k][TRIALS / 2];
	}
	qsort(r, TRIALS, sizeof(double), cmp_d);
	return r[TRIALS / 2];
}

static int pe_main(int rank, const nvshmemx_uniqueid_t *id)
{
	nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
	cudaDeviceProp prop;
	int ndev = 0, dev;
	uint64_t len;

	CK(cudaGetDeviceCount(&ndev));
	dev = rank % (ndev ? ndev : 1);
	CK(cudaSetDevice(dev));
	nvshmemx_set_attr_uniqueid_args(rank, 2, id, &attr);
	if (nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr)) {
		fprintf(stderr, "nvl-nvshmem: NVSHMEM init failed\n");
		return 1;
	}
	me = nvshmem_my_pe();
	CK(cudaGetDeviceProperties(&prop, dev));
	sms = prop.multiProcessorCount;
	heap = (uint8_t *)nvshmem_malloc(BIG + W_END);
	peer = (uint8_t *)nvshmem_ptr(heap, 1 - me);
	if (!heap || !peer) {
		fprintf(stderr, "nvl-nvshmem: PE %d: no symmetric heap or no NVLink mapping of the peer\n", me);
		return 1;
	}
	CK(cudaMalloc((void **)&src, BIG));
	CK(cudaMalloc((void **)&dst, 1 << 20));
	CK(cudaMalloc((void **)&out_d, 64));
	CK(cudaMemset(src, 0x5a, BIG));
	if (me == 0) {
		int maj = 0, min = 0;

		nvshmem_info_get_version(&maj, &min);
		printf("nvl-nvshmem: %d PEs, PE 0 on GPU %d (%s), PE 1 on GPU %d; NVSHMEM (spec %d.%d)\n",
		       nvshmem_n_pes(), dev, prop.name, 1 % (ndev ? ndev : 1), maj, min);
	}
	if (ndev < 2) {
		/* kernels of two processes on one GPU take turns (no MPS): a ping-pong
		 * between them measures the time slice, not the path */
		if (me == 0)
			printf("\nlatency rows skipped: one GPU (the PEs' kernels would take turns on it); "
			       "they need two GPUs\n");
	} else {
		/* the one-thread rows, LTRIALS times interleaved (a drift of the clocks or
		 * the link meets all alike): the median trial of each */
		static const int one[] = { L_SIG_DVX, L_SIG_SHM, L_PS8_LL, L_PS8_DVX, L_PS8_SHM,
					   L_BAR_DVX, L_BAR_SHM, L_SIG_RLXW, L_PS8_RAW, L_PS8_SRC };
		double v[L_NROWS], t[L_NROWS][LTRIALS];
		int k, tr;

		for (tr = 0; tr < LTRIALS; tr++)
			for (k = 0; k < (int)(sizeof(one) / sizeof(one[0])); k++)
				t[one[k]][tr] = lat(one[k], 8, 1);
		for (k = 0; k < (int)(sizeof(one) / sizeof(one[0])); k++) {
			qsort(t[one[k]], LTRIALS, sizeof(double), cmp_d);
			v[one[k]] = t[one[k]][LTRIALS / 2];
		}
		if (me == 0) {
			printf("\nlatency, ns (half round trip; barrier: per barrier of 2; the median of "
			       "%d interleaved trials)   dvx | NVSHMEM\n", LTRIALS);
			printf("%-44s %8.0f | %8.0f  signal_op(SET) + signal_wait_until\n",
			       "signal SET relaxed + wait", v[L_SIG_DVX], v[L_SIG_SHM]);
			printf("%-44s %8.0f | %8.0f  putmem_signal_nbi 8 B + wait\n",
			       "put_signal 8 B, flagged line (LL) + wait_ll", v[L_PS8_LL], v[L_PS8_SHM]);
			printf("%-44s %8.0f | %8.0f  putmem_signal_nbi 8 B + wait\n",
			       "put_signal 8 B, release + wait", v[L_PS8_DVX], v[L_PS8_SHM]);
			printf("%-44s %8.0f | %8.0f  barrier_all (device, 1 thread)\n",
			       "barrier, 2 ranks (ADD + wait)", v[L_BAR_DVX], v[L_BAR_SHM]);
			printf("written out (no dvx call), the parts of the rows above:\n");
			printf("%-44s %8.0f\n", "  relaxed SET + relaxed looks", v[L_SIG_RLXW]);
			printf("%-44s %8.0f\n", "  one flagged line of constants", v[L_PS8_RAW]);
			printf("%-44s %8.0f\n", "  one flagged line of the payload", v[L_PS8_SRC]);
		}
		for (len = 64; len <= 8192; len *= 4) {
			v[5] = lat(L_PSB_LL, len, 128);
			v[6] = lat(L_PSB_DVX, len, 128);
			v[7] = lat(L_PSB_SHM, len, 128);
			if (me == 0) {
				printf("put_signal %5llu B block(128), LL      %8.0f | %8.0f  putmem_signal_nbi_block\n",
				       (unsigned long long)len, v[5], v[7]);
				printf("put_signal %5llu B block(128), release %8.0f | %8.0f  putmem_signal_nbi_block\n",
				       (unsigned long long)len, v[6], v[7]);
			}
		}
	}
	nvshmem_barrier_all();
	if (me == 0) {
		printf("\nput 0 -> 1, GB/s, median of %d interleaved trials of ~64 MiB of launches each\n"
		       "                     dvx sized |  NVSHMEM putmem_block %d x 512  same grid | ref SM copy  dvx/ref (median ratio)\n",
		       TRIALS, sms);
		for (len = 64 << 10; len <= BIG; len *= 4) {
			double v[4], ratio = bw_median(len, v);

			printf("%10llu %14.2f | %22.2f %10.2f | %11.2f  %7.3f\n", (unsigned long long)len,
			       v[0], v[1], v[2], v[3], ratio);
			fflush(stdout);
		}
	}
	nvshmem_barrier_all();
	if (me == 0 && grids) {
		/* the grid the sized put picks against others, dvx and the reference alike */
		static const uint32_t gs[] = { 16, 32, 64, 96, 128, 192, 256, 528 };
		const int ng = (int)(sizeof(gs) / sizeof(gs[0]));

		printf("\nput 0 -> 1 by grid (x 512 threads), GB/s, median of %d interleaved trials: "
		       "dvx / ref SM copy\n", TRIALS);
		for (len = 256 << 10; len <= (16u << 20); len *= 2) {
			double v[2][8][TRIALS];
			int reps = (int)((64ull << 20) / len), k, t, j;

			reps = reps < 20 ? 20 : reps > 400 ? 400 : reps;
			for (t = 0; t < TRIALS; t++)
				for (j = 0; j < ng; j++)
					for (k = 0; k < 2; k++)
						v[k][j][t] = bw(k ? 3 : 0, len, reps, gs[j]);
			printf("%9llu  sized %3u:", (unsigned long long)len,
			       dvx_nvl_put_blocks(len, (uint32_t)sms, 512));
			for (j = 0; j < ng; j++) {
				for (k = 0; k < 2; k++)
					qsort(v[k][j], TRIALS, sizeof(double), cmp_d);
				printf("  %u: %.1f/%.1f", gs[j], v[0][j][TRIALS / 2], v[1][j][TRIALS / 2]);
			}
			printf("\n");
		}
	}
	nvshmem_barrier_all();
	nvshmem_free(heap);
	nvshmem_finalize();
	return 0;
}

int main(int argc, char **argv)
{
	nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
	int fd[2], st, i, bad = 0;
	pid_t pid[2];

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--quick"))
			quick = 1;
		else if (!strcmp(argv[i], "--grids"))
			grids = 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pipe(fd))
		return 1;
	for (i = 0; i < 2; i++) {
		pid[i] = fork();
		if (pid[i] == 0) {
			if (i == 0) {
				nvshmemx_get_uniqueid(&id);
				if (write(fd[1], &id, sizeof(id)) != (ssize_t)sizeof(id))
					_exit(1);
			} else if (read(fd[0], &id, sizeof(id)) != (ssize_t)sizeof(id)) {
				_exit(1);
			}
			fflush(stdout);
			_exit(pe_main(i, &id));
		}
	}
	for (i = 0; i < 2; i++) {
		waitpid(pid[i], &st, 0);
		bad |= !WIFEXITED(st) || WEXITSTATUS(st);
	}
	return bad;
}
