/* SPDX-License-Identifier: MIT */
/*
 * tests/gpu/gpu_ranks.h - which GPU a rank of a GPU test runs on: rank r on GPU
 * r mod the number of GPUs (one GPU: every rank shares it; two: ranks alternate, so
 * peer mappings and NVLink really cross GPUs), and the facts an injected topology
 * needs for that (the GPUs' UUIDs).
 */
#ifndef DVX_TEST_GPU_RANKS_H
#define DVX_TEST_GPU_RANKS_H

#include <string.h>

#include <dvx/gpu/gpu.h>

#define GPU_RANKS_MAX 8

/* the number of GPUs (0: none, or no driver) */
static inline int gpu_ranks_count(void)
{
	unsigned cnt = 0;

	if (!dvx_hal_cuda() || dvx_gpu_count(dvx_hal_cuda(), &cnt))
		return 0;
	return cnt > GPU_RANKS_MAX ? GPU_RANKS_MAX : (int)cnt;
}

/* rank @r's GPU ordinal: r mod the number of GPUs (0 without any) */
static inline int gpu_of_rank(int r)
{
	int n = gpu_ranks_count();

	return n ? r % n : 0;
}

/*
 * The UUIDs of GPUs 0 .. n-1 into @uuid (each opened and closed once; call before the
 * ranks' threads start). Returns the number of GPUs, 0 when none, a negative errno.
 */
static inline int gpu_ranks_uuids(uint8_t uuid[GPU_RANKS_MAX][16])
{
	int n = gpu_ranks_count(), o, err;

	for (o = 0; o < n; o++) {
		struct dvx_gpu g;

		memset(&g, 0, sizeof(g));
		err = dvx_gpu_open(&g, dvx_hal_cuda(), o, NULL);
		if (err)
			return err;
		memcpy(uuid[o], g.attr.uuid, 16);
		dvx_gpu_close(&g);
	}
	return n;
}

#endif
