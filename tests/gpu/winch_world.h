/* SPDX-License-Identifier: MIT */
/*
 * tests/gpu/winch_world.h - two ranks as threads on two injected hosts (IB over the
 * software NIC), rank r on GPU r mod the GPUs, a window spreading its device puts over
 * @nch channels: puts from 1 ... 128 blocks to one peer checked exactly (every byte,
 * the peer's signal and this rank's counter exact whatever the channel) and timed,
 * gets and fetch-adds checked and timed. gpu-winch-test asserts it, bench/win-chan-bench
 * prints its figures. The window buffer, sources and results are host memory the GPU
 * maps (the software NIC reaches it with memcpy) or, with @gpu_data, GPU memory (the
 * software NIC's copies through tests/lib/gpu_dma.h, as on a ConnectX's dma-bufs).
 */
#ifndef DVX_TESTS_GPU_WINCH_WORLD_H
#define DVX_TESTS_GPU_WINCH_WORLD_H

#include <stddef.h>
#include <stdint.h>

#define WINCH_MAXB 8		/* block counts a run puts from */

struct winch_opts {
	uint32_t nch;			/* the window's channels (and the lanes per peer) */
	const uint32_t *blocks;		/* [nblocks] blocks of each put launch */
	int nblocks;
	uint64_t put_bytes;		/* bytes of one launch's round (split over the blocks) */
	uint32_t put_iters;		/* rounds per launch */
	uint32_t lat_iters;		/* gets / fetch-adds waited for one by one */
	uint32_t rate_iters;		/* calls of the rate runs (fetch-adds: x 32 lanes) */
	int gpu_data;			/* the window buffer, sources, gets' destination and
					 * results in GPU memory (the software NIC reaches them
					 * through its DMA callbacks, tests/lib/gpu_dma.h);
					 * else host memory the GPU maps */
};

struct winch_res {
	double put_gbs[WINCH_MAXB];	/* GB/s of the put launch of blocks[i] */
	double get_lat_ns[2];		/* a get of 8 B, of 4 KiB, waited for */
	double get_rate;		/* gets of 8 B per second, one flush at the end */
	double fadd_lat_ns;		/* a fetch-add waited for */
	double fadd_rate;		/* fetch-adds per second, 32 lanes a call */
	uint64_t checked;		/* values and bytes checked */
	char why[240];			/* the first failure */
};

/*
 * winch_run() - one world: set up, every phase, tear down. Return: 0; 77 (no GPU, no
 * driver, or built without nvcc: @res->why says which); 1 (a failure: @res->why).
 */
int winch_run(const struct winch_opts *o, struct winch_res *res);

#endif
