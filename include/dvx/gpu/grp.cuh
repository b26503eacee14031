/* SPDX-License-Identifier: MIT */
/*
 * dvx/gpu/grp.cuh - the one scope argument of every device call (CUDA C++, nvcc;
 * header-only): a struct dvx_dev_grp names the threads that make one call together,
 * and the few group steps the device APIs are written with (barrier, broadcast from
 * the leader, any, first error, exclusive prefix sum), over the warp and block
 * primitives they need (lane, linear thread index, prefix sums). Every device header
 * of dvx builds on it (DVX_DEV is defined here).
 *
 * Scopes:
 *  - thread (dvx_dev_thread()): the calling thread alone;
 *  - warp (dvx_dev_warp()): all 32 lanes of a warp, converged;
 *  - block (dvx_dev_block()): every thread of the block, like __syncthreads();
 *  - tile (dvx_dev_tile(size)): a caller-sized group, @size (1, 2, 4, 8, 16 or 32)
 *    consecutive lanes of a warp starting at a multiple of @size; all of the tile's
 *    lanes call together.
 * The leader is the group's thread 0 (g.lane == 0). A device call made at a group
 * scope posts once for the group (one signal, one counter increment per call per
 * group) after all of the group's data (docs/gpu.md).
 *
 * The group steps use static shared memory at block scope (a few words each); every
 * one ends so that the next may follow at once. With a scope known at compile time
 * (the usual: dvx_dev_warp() at the call), the other scopes' code folds away.
 */
#ifndef DVX_GPU_GRP_CUH
#define DVX_GPU_GRP_CUH

#ifndef __CUDACC__
#error "dvx/gpu/grp.cuh is CUDA C++: compile it with nvcc"
#endif

#include <stdint.h>
#include <string.h>

#define DVX_DEV __device__ __forceinline__
#define DVX_DEV_FULL_MASK 0xffffffffu

/* ---- the threads of a warp and a block ---- */

/**
 * dvx_dev_lane() - the calling thread's lane index within its warp (%laneid).
 *
 * Context: device, any thread. Return: 0..31.
 */
DVX_DEV uint32_t dvx_dev_lane(void)
{
	uint32_t l;

	asm("mov.u32 %0, %%laneid;" : "=r"(l));
	return l;
}

/**
 * dvx_dev_warp_scan() - inclusive prefix sum of @v over the lanes of @mask.
 * @mask:	the participating lanes, which must be lanes 0..k-1
 * @lane:	the caller's lane (dvx_dev_lane())
 * @v:		this lane's value
 *
 * Context: device; every lane of @mask calls it together (__shfl_up_sync). Return: the
 * sum of @v over lanes 0..@lane.
 */
DVX_DEV uint32_t dvx_dev_warp_scan(uint32_t mask, uint32_t lane, uint32_t v)
{
	for (uint32_t d = 1; d < 32; d <<= 1) {
		uint32_t o = __shfl_up_sync(mask, v, d);

		if (lane >= d)
			v += o;
	}
	return v;
}

/**
 * dvx_dev_block_tid() - this thread's linear index in its block (x fastest).
 *
 * Context: device, any thread. Return: the index.
 */
DVX_DEV uint32_t dvx_dev_block_tid(void)
{
	return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

/**
 * dvx_dev_block_nthreads() - threads in the block.
 *
 * Context: device, any thread. Return: the count.
 */
DVX_DEV uint32_t dvx_dev_block_nthreads(void)
{
	return blockDim.x * blockDim.y * blockDim.z;
}

/**
 * dvx_dev_block_scan() - exclusive prefix sum of @v over the block's threads in
 * linear order; *@total receives the block's sum.
 * @v:		this thread's value
 * @total:	set to the sum over the block
 *
 * Context: every thread of the block, like __syncthreads() (any block shape, partial
 * last warp included); it ends with a barrier, so it may be called again at once.
 * Uses 132 bytes of static shared memory. Return: the sum of @v over the threads
 * before this one.
 */
DVX_DEV uint32_t dvx_dev_block_scan(uint32_t v, uint32_t *total)
{
	__shared__ uint32_t warp_sum[33];
	uint32_t tid = dvx_dev_block_tid(), nthr = dvx_dev_block_nthreads();
	uint32_t lane = tid & 31, warp = tid >> 5, nwarps = (nthr + 31) >> 5;
	uint32_t left = nthr - (warp << 5);
	uint32_t mask = left >= 32 ? DVX_DEV_FULL_MASK : (1u << left) - 1;
	uint32_t incl = dvx_dev_warp_scan(mask, lane, v), excl;

	if (lane == (left >= 32 ? 31u : left - 1))
		warp_sum[warp] = incl;
	__syncthreads();
	if (tid == 0) {
		uint32_t acc = 0;

		for (uint32_t w = 0; w < nwarps; w++) {
			uint32_t s = warp_sum[w];

			warp_sum[w] = acc;
			acc += s;
		}
		warp_sum[32] = acc;
	}
	__syncthreads();
	excl = warp_sum[warp] + incl - v;
	*total = warp_sum[32];
	__syncthreads();	/* everyone has read before a next call writes */
	return excl;
}

/* ---- scopes ---- */

/* scopes of struct dvx_dev_grp */
#define DVX_DEV_THREAD 0u
#define DVX_DEV_WARP 1u
#define DVX_DEV_BLOCK 2u
#define DVX_DEV_TILE 3u

/**
 * struct dvx_dev_grp - a cooperating group of threads: the scope of a device call.
 * @scope:	DVX_DEV_THREAD, DVX_DEV_WARP, DVX_DEV_BLOCK or DVX_DEV_TILE
 * @lane:	this thread's index in the group (0: the leader)
 * @size:	threads in the group
 * @mask:	warp and tile: the group's lanes in the warp (the shuffles' mask)
 *
 * Make it with dvx_dev_thread(), dvx_dev_warp(), dvx_dev_block() or dvx_dev_tile();
 * device calls take it by reference and never keep it.
 */
struct dvx_dev_grp {
	uint32_t scope;
	uint32_t lane;
	uint32_t size;
	uint32_t mask;
};

/**
 * dvx_dev_thread(), dvx_dev_warp(), dvx_dev_block() - this thread's group at thread,
 * warp or block scope. A warp group is a full warp (32 threads, %laneid 0 leads):
 * every thread of it calls, or the behaviour is undefined (launch blocks whose size is
 * a multiple of 32). A block group is every thread of the block in linear order.
 *
 * Context: device, any thread. Return: the group.
 */
DVX_DEV struct dvx_dev_grp dvx_dev_thread(void)
{
	struct dvx_dev_grp g = { DVX_DEV_THREAD, 0, 1, 0 };

	return g;
}

DVX_DEV struct dvx_dev_grp dvx_dev_warp(void)
{
	struct dvx_dev_grp g = { DVX_DEV_WARP, dvx_dev_lane(), 32, DVX_DEV_FULL_MASK };

	return g;
}

DVX_DEV struct dvx_dev_grp dvx_dev_block(void)
{
	struct dvx_dev_grp g = { DVX_DEV_BLOCK, dvx_dev_block_tid(), dvx_dev_block_nthreads(), 0 };

	return g;
}

/**
 * dvx_dev_tile() - this thread's caller-sized group: the @size consecutive lanes of its
 * warp that start at a multiple of @size.
 * @size:	1, 2, 4, 8, 16 or 32 (32 is the warp; 1 the thread)
 *
 * Context: device, any thread; every lane of the tile calls device functions with it
 * together. Return: the group (a thread group for a @size that is no power of two up
 * to 32).
 */
DVX_DEV struct dvx_dev_grp dvx_dev_tile(uint32_t size)
{
	uint32_t lane = dvx_dev_lane();
	struct dvx_dev_grp g = { DVX_DEV_THREAD, 0, 1, 0 };

	if (size < 2 || size > 32 || (size & (size - 1)))
		return g;
	g.scope = DVX_DEV_TILE;
	g.lane = lane & (size - 1);
	g.size = size;
	g.mask = size == 32 ? DVX_DEV_FULL_MASK : ((1u << size) - 1) << (lane & ~(size - 1));
	return g;
}

/**
 * dvx_dev_grp_shfl() - whether @g's steps are warp shuffles (a warp or a tile).
 * @g:		the group
 *
 * Context: device, any thread. Return: true for a warp or a tile.
 */
DVX_DEV bool dvx_dev_grp_shfl(const struct dvx_dev_grp &g)
{
	return g.scope == DVX_DEV_WARP || g.scope == DVX_DEV_TILE;
}

/**
 * dvx_dev_grp_sync() - the group's barrier: every thread's earlier memory accesses are
 * ordered before every thread's later ones.
 * @g:		the group
 *
 * Context: device, every thread of @g. Return: nothing.
 */
DVX_DEV void dvx_dev_grp_sync(const struct dvx_dev_grp &g)
{
	if (dvx_dev_grp_shfl(g))
		__syncwarp(g.mask);
	else if (g.scope == DVX_DEV_BLOCK)
		__syncthreads();
}

/**
 * dvx_dev_grp_any() - whether @pred holds on any thread of the group.
 * @g:		the group
 * @pred:	this thread's predicate
 *
 * Context: device, every thread of @g. Return: the same answer on every thread.
 */
DVX_DEV bool dvx_dev_grp_any(const struct dvx_dev_grp &g, bool pred)
{
	if (dvx_dev_grp_shfl(g))
		return __any_sync(g.mask, pred) != 0;
	if (g.scope == DVX_DEV_BLOCK)
		return __syncthreads_or(pred) != 0;
	return pred;
}

/**
 * dvx_dev_grp_sync_any() - the group's barrier (as dvx_dev_grp_sync()) that also
 * answers whether @pred held on any thread of the group.
 * @g:		the group
 * @pred:	this thread's predicate
 *
 * Context: device, every thread of @g. Return: the same answer on every thread.
 */
DVX_DEV bool dvx_dev_grp_sync_any(const struct dvx_dev_grp &g, bool pred)
{
	if (dvx_dev_grp_shfl(g)) {
		bool any = __any_sync(g.mask, pred) != 0;

		__syncwarp(g.mask);	/* __any_sync orders no memory */
		return any;
	}
	if (g.scope == DVX_DEV_BLOCK)
		return __syncthreads_or(pred) != 0;
	return pred;
}

/**
 * dvx_dev_grp_bcast() - the leader's @v, to every thread of the group; what the
 * leader stored before it is visible to the group after it.
 * @g:		the group
 * @v:		the value (the leader's is used; any trivially copyable type)
 *
 * Context: device, every thread of @g. Return: the leader's @v.
 */
template <typename T>
DVX_DEV T dvx_dev_grp_bcast(const struct dvx_dev_grp &g, T v)
{
	if (dvx_dev_grp_shfl(g)) {
		uint32_t w[(sizeof(T) + 3) / 4] = {};

		memcpy(w, &v, sizeof(T));
		for (uint32_t i = 0; i < (sizeof(T) + 3) / 4; i++)
			w[i] = __shfl_sync(g.mask, w[i], 0, (int)g.size);
		memcpy(&v, w, sizeof(T));
		__syncwarp(g.mask);	/* orders memory too: what the leader saw, the group sees */
	} else if (g.scope == DVX_DEV_BLOCK) {
		__shared__ T s;

		if (g.lane == 0)
			s = v;
		__syncthreads();
		v = s;
		__syncthreads();	/* every read before a next write */
	}
	return v;
}

/**
 * dvx_dev_grp_first_err() - the first non-zero @err of the group's threads (lowest
 * lane first at warp and tile scope, any at block scope), to every thread.
 * @g:		the group
 * @err:	this thread's error, or 0
 *
 * Context: device, every thread of @g. Return: that error, or 0.
 */
DVX_DEV int dvx_dev_grp_first_err(const struct dvx_dev_grp &g, int err)
{
	if (dvx_dev_grp_shfl(g)) {
		uint32_t some = __ballot_sync(g.mask, err != 0);

		/* the lowest such lane's, so every thread gets the same one */
		return some ? __shfl_sync(g.mask, err, __ffs((int)some) - 1) : 0;
	}
	if (g.scope == DVX_DEV_BLOCK) {
		__shared__ int s;

		__syncthreads();
		if (g.lane == 0)
			s = 0;
		__syncthreads();
		if (err)
			atomicCAS(&s, 0, err);
		__syncthreads();
		err = s;
		__syncthreads();
	}
	return err;
}

/**
 * dvx_dev_grp_scan() - exclusive prefix sum of @v over the group's threads in lane
 * order; *@total receives the group's sum.
 * @g:		the group
 * @v:		this thread's value
 * @total:	set to the sum over the group
 *
 * Context: device, every thread of @g (block scope: dvx_dev_block_scan(), any block
 * shape). Return: the sum of @v over the threads before this one.
 */
DVX_DEV uint32_t dvx_dev_grp_scan(const struct dvx_dev_grp &g, uint32_t v, uint32_t *total)
{
	if (dvx_dev_grp_shfl(g)) {
		uint32_t incl = v;

		for (uint32_t d = 1; d < g.size; d <<= 1) {
			uint32_t o = __shfl_up_sync(g.mask, incl, d, (int)g.size);

			if (g.lane >= d)
				incl += o;
		}
		*total = __shfl_sync(g.mask, incl, (int)g.size - 1, (int)g.size);
		return incl - v;
	}
	if (g.scope == DVX_DEV_BLOCK)
		return dvx_dev_block_scan(v, total);
	*total = v;
	return 0;
}

#endif /* DVX_GPU_GRP_CUH */
