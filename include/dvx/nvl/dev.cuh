/* SPDX-License-Identifier: MIT */
/*
 * dvx/nvl/dev.cuh - the NVLink path's device API: put, signal, put_signal, counters,
 * waits and reads on peer memory mapped by dvx_nvl_exchange(), at thread, warp and
 * block scope (the operations themselves are dvx/nvl/ops.h, shared with the host).
 *
 * Scopes: a _thread call is made by one thread on its own; a _warp call by all 32
 * threads of a warp together (converged); a _block call by every thread of the block
 * together. A group call copies cooperatively (each lane a share, 16-byte vectors,
 * coalesced), then synchronises the group; what follows the copy (one signal, one
 * counter add) is done once, by the group's leader (lane 0 / thread 0), after the
 * whole group's data is visible at system scope: one signal per call per group, the
 * same rule as the IB path (dvx/p2p/dev.cuh).
 *
 * Waits: the leader polls with acquire loads until the comparison holds or the
 * timeout (%globaltimer) passes; the group learns the result; a timeout is
 * -ETIMEDOUT, never a satisfied wait.
 */
#ifndef DVX_NVL_DEV_CUH
#define DVX_NVL_DEV_CUH

#include <dvx/nvl/ops.h>

#ifdef __CUDACC__

#ifndef DVX_NVL_DEV
#define DVX_NVL_DEV __device__ __forceinline__
#endif

/**
 * dvx_nvl_warp_lane(), dvx_nvl_block_lane(), dvx_nvl_block_lanes() - this thread's
 * lane in its warp and in its block, and the lanes of the block (threads in x, y, z).
 *
 * Context: device. Return: the lane, or the count.
 */
DVX_NVL_DEV uint32_t dvx_nvl_warp_lane(void)
{
	return threadIdx.x & 31u;
}

DVX_NVL_DEV uint32_t dvx_nvl_block_lane(void)
{
	return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

DVX_NVL_DEV uint32_t dvx_nvl_block_lanes(void)
{
	return blockDim.x * blockDim.y * blockDim.z;
}

/**
 * dvx_nvl_put_thread(), dvx_nvl_put_warp(), dvx_nvl_put_block() - copy @len bytes from
 * @src to @dst (a peer's mapped buffer) at the scope's group, then synchronise it.
 * @dst:	destination
 * @src:	source (this GPU's memory, or another mapping)
 * @len:	bytes; every thread of the group passes the same arguments
 *
 * Nothing is fenced: follow with a signal, a counter or dvx_nvl_flush() to order the
 * data before anything else.
 * Context: device; the scope's whole group. Return: nothing.
 */
DVX_NVL_DEV void dvx_nvl_put_thread(void *dst, const void *src, uint64_t len)
{
	dvx_nvl_copy(dst, src, len, 0, 1);
}

DVX_NVL_DEV void dvx_nvl_put_warp(void *dst, const void *src, uint64_t len)
{
	dvx_nvl_copy(dst, src, len, dvx_nvl_warp_lane(), 32);
	__syncwarp();
}

DVX_NVL_DEV void dvx_nvl_put_block(void *dst, const void *src, uint64_t len)
{
	dvx_nvl_copy(dst, src, len, dvx_nvl_block_lane(), dvx_nvl_block_lanes());
	__syncthreads();
}

/**
 * dvx_nvl_put_grid() - copy @len bytes from @src to @dst with every thread of the
 * launch: the threads' 16-byte vectors interleaved across the whole grid (coalesced,
 * each thread DVX_NVL_COPY_UNROLL loads in flight once it has that many), the launch
 * sized to the transfer with dvx_nvl_put_blocks(). Nothing is synchronised or fenced
 * (a grid cannot synchronise): the kernel's end, or a counter per block after
 * __syncthreads() and dvx_nvl_flush(), says the data is there.
 * @dst, @src, @len: as dvx_nvl_put_thread(); every thread passes the same
 *
 * Context: device; every thread of the grid. Return: nothing.
 */
DVX_NVL_DEV void dvx_nvl_put_grid(void *dst, const void *src, uint64_t len)
{
	uint32_t lanes = dvx_nvl_block_lanes();
	uint32_t block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);

	dvx_nvl_copy(dst, src, len, block * lanes + dvx_nvl_block_lane(),
		     gridDim.x * gridDim.y * gridDim.z * lanes);
}

/**
 * dvx_nvl_put_signal_thread(), dvx_nvl_put_signal_warp(), dvx_nvl_put_signal_block() -
 * put, then one signal on the peer's word once all of the group's data is visible.
 * @dst, @src, @len: as dvx_nvl_put_thread()
 * @sig:	the peer's signal word (through the mapping)
 * @op:		DVX_NVL_SIG_SET or DVX_NVL_SIG_ADD
 * @value:	what is stored or added
 *
 * Context: device; the scope's whole group. Return: 0, -EINVAL for an unknown @op (the
 * data is copied either way).
 */
DVX_NVL_DEV int dvx_nvl_put_signal_thread(void *dst, const void *src, uint64_t len, uint64_t *sig,
					  uint32_t op, uint64_t value)
{
	dvx_nvl_copy(dst, src, len, 0, 1);
	return dvx_nvl_signal(sig, op, value);
}

DVX_NVL_DEV int dvx_nvl_put_signal_warp(void *dst, const void *src, uint64_t len, uint64_t *sig,
					uint32_t op, uint64_t value)
{
	int err = 0;

	dvx_nvl_put_warp(dst, src, len);
	if (dvx_nvl_warp_lane() == 0) {
		dvx_nvl_flush();	/* the other lanes' stores, observed through the sync */
		err = dvx_nvl_signal_relaxed(sig, op & ~DVX_NVL_SIG_RELAXED, value);
	}
	return __shfl_sync(0xffffffffu, err, 0);
}

DVX_NVL_DEV int dvx_nvl_put_signal_block(void *dst, const void *src, uint64_t len, uint64_t *sig,
					 uint32_t op, uint64_t value)
{
	__shared__ int err;

	dvx_nvl_put_block(dst, src, len);
	if (dvx_nvl_block_lane() == 0) {
		dvx_nvl_flush();
		err = dvx_nvl_signal_relaxed(sig, op & ~DVX_NVL_SIG_RELAXED, value);
	}
	__syncthreads();
	return err;
}

/**
 * dvx_nvl_put_counter_thread(), dvx_nvl_put_counter_warp(), dvx_nvl_put_counter_block() -
 * put, then raise this rank's counter by @value once the group's data is visible (an
 * NVL counter means what an IB one does: this rank's data has landed).
 * @dst, @src, @len: as dvx_nvl_put_thread()
 * @ctr:	this rank's counter word
 * @value:	the addend
 *
 * Context: device; the scope's whole group. Return: nothing.
 */
DVX_NVL_DEV void dvx_nvl_put_counter_thread(void *dst, const void *src, uint64_t len,
					    uint64_t *ctr, uint64_t value)
{
	dvx_nvl_copy(dst, src, len, 0, 1);
	dvx_nvl_counter_add(ctr, value);
}

DVX_NVL_DEV void dvx_nvl_put_counter_warp(void *dst, const void *src, uint64_t len, uint64_t *ctr,
					  uint64_t value)
{
	dvx_nvl_put_warp(dst, src, len);
	if (dvx_nvl_warp_lane() == 0) {
		dvx_nvl_flush();
		dvx_nvl_signal_relaxed(ctr, DVX_NVL_SIG_ADD, value);
	}
	__syncwarp();
}

DVX_NVL_DEV void dvx_nvl_put_counter_block(void *dst, const void *src, uint64_t len,
					   uint64_t *ctr, uint64_t value)
{
	dvx_nvl_put_block(dst, src, len);
	if (dvx_nvl_block_lane() == 0) {
		dvx_nvl_flush();
		dvx_nvl_signal_relaxed(ctr, DVX_NVL_SIG_ADD, value);
	}
	__syncthreads();
}

/**
 * dvx_nvl_put_signal_counter_thread(), dvx_nvl_put_signal_counter_warp(),
 * dvx_nvl_put_signal_counter_block() - put, one signal, and this
 * rank's counter, both after the group's data is visible.
 * @dst, @src, @len, @sig, @op, @value: as dvx_nvl_put_signal_thread()
 * @ctr, @ctr_value: as dvx_nvl_put_counter_thread()
 *
 * Context: device; the scope's whole group. Return: 0 or -EINVAL (unknown @op).
 */
DVX_NVL_DEV int dvx_nvl_put_signal_counter_thread(void *dst, const void *src, uint64_t len,
						  uint64_t *sig, uint32_t op, uint64_t value,
						  uint64_t *ctr, uint64_t ctr_value)
{
	int err;

	dvx_nvl_copy(dst, src, len, 0, 1);
	err = dvx_nvl_signal(sig, op, value);
	dvx_nvl_counter_add(ctr, ctr_value);
	return err;
}

DVX_NVL_DEV int dvx_nvl_put_signal_counter_warp(void *dst, const void *src, uint64_t len,
						uint64_t *sig, uint32_t op, uint64_t value,
						uint64_t *ctr, uint64_t ctr_value)
{
	int err = 0;

	dvx_nvl_put_warp(dst, src, len);
	if (dvx_nvl_warp_lane() == 0) {
		dvx_nvl_flush();
		err = dvx_nvl_signal_relaxed(sig, op & ~DVX_NVL_SIG_RELAXED, value);
		dvx_nvl_signal_relaxed(ctr, DVX_NVL_SIG_ADD, ctr_value);
	}
	return __shfl_sync(0xffffffffu, err, 0);
}

DVX_NVL_DEV int dvx_nvl_put_signal_counter_block(void *dst, const void *src, uint64_t len,
						 uint64_t *sig, uint32_t op, uint64_t value,
						 uint64_t *ctr, uint64_t ctr_value)
{
	__shared__ int err;

	dvx_nvl_put_block(dst, src, len);
	if (dvx_nvl_block_lane() == 0) {
		dvx_nvl_flush();
		err = dvx_nvl_signal_relaxed(sig, op & ~DVX_NVL_SIG_RELAXED, value);
		dvx_nvl_signal_relaxed(ctr, DVX_NVL_SIG_ADD, ctr_value);
	}
	__syncthreads();
	return err;
}

/**
 * dvx_nvl_signal_warp(), dvx_nvl_signal_block() - one signal for the group, after the
 * group's earlier writes are visible (dvx_nvl_signal() is the thread form).
 * @sig, @op, @value: as dvx_nvl_signal()
 *
 * Context: device; the scope's whole group. Return: 0 or -EINVAL.
 */
DVX_NVL_DEV int dvx_nvl_signal_warp(uint64_t *sig, uint32_t op, uint64_t value)
{
	int err = 0;

	__syncwarp();
	if (dvx_nvl_warp_lane() == 0) {
		dvx_nvl_flush();
		err = dvx_nvl_signal_relaxed(sig, op & ~DVX_NVL_SIG_RELAXED, value);
	}
	return __shfl_sync(0xffffffffu, err, 0);
}

DVX_NVL_DEV int dvx_nvl_signal_block(uint64_t *sig, uint32_t op, uint64_t value)
{
	__shared__ int err;

	__syncthreads();
	if (dvx_nvl_block_lane() == 0) {
		dvx_nvl_flush();
		err = dvx_nvl_signal_relaxed(sig, op & ~DVX_NVL_SIG_RELAXED, value);
	}
	__syncthreads();
	return err;
}

/**
 * dvx_nvl_wait_warp(), dvx_nvl_wait_block() - the group waits for a word: the leader
 * polls (dvx_nvl_wait()), the group gets its answer and, after it, what the writer
 * published (dvx_nvl_wait() is the thread form).
 * @w, @cmp, @value, @timeout_ns: as dvx_nvl_wait()
 *
 * Context: device; the scope's whole group. Return: 0, -ETIMEDOUT or -EINVAL.
 */
DVX_NVL_DEV int dvx_nvl_wait_warp(const uint64_t *w, uint32_t cmp, uint64_t value,
				  uint64_t timeout_ns)
{
	int err = 0;

	if (dvx_nvl_warp_lane() == 0)
		err = dvx_nvl_wait(w, cmp, value, timeout_ns, nullptr);
	err = __shfl_sync(0xffffffffu, err, 0);
	__syncwarp();
	return err;
}

DVX_NVL_DEV int dvx_nvl_wait_block(const uint64_t *w, uint32_t cmp, uint64_t value,
				   uint64_t timeout_ns)
{
	__shared__ int err;

	if (dvx_nvl_block_lane() == 0)
		err = dvx_nvl_wait(w, cmp, value, timeout_ns, nullptr);
	__syncthreads();
	return err;
}

/**
 * dvx_nvl_put_ll_thread(), dvx_nvl_put_ll_warp(), dvx_nvl_put_ll_block() - a small
 * message as flagged lines (dvx_nvl_ll_put(); docs/mp.md, "Small messages"): the data
 * and its signal in the same stores, no fence. The peer takes it with
 * dvx_nvl_wait_ll_*() on the same lines and sequence.
 * @lines:	the peer's lines (through the mapping), 16-byte aligned,
 *		dvx_nvl_ll_bytes(@len) bytes
 * @src:	the payload (any alignment)
 * @len:	payload bytes; the path pays two bytes of link per payload byte, so it is
 *		meant for messages up to a few KiB (DVX_NVL_LL_MAX)
 * @seq:	this message's sequence number, not 0, new each time the lines are reused
 *
 * Context: device; the scope's whole group, same arguments. Return: 0 or -EINVAL
 * (@seq 0, misaligned @lines: nothing written).
 */
DVX_NVL_DEV int dvx_nvl_put_ll_thread(void *lines, const void *src, uint64_t len, uint32_t seq)
{
	return dvx_nvl_ll_put(lines, src, len, seq, 0, 1);
}

DVX_NVL_DEV int dvx_nvl_put_ll_warp(void *lines, const void *src, uint64_t len, uint32_t seq)
{
	int err = dvx_nvl_ll_put(lines, src, len, seq, dvx_nvl_warp_lane(), 32);

	__syncwarp();
	return err;
}

DVX_NVL_DEV int dvx_nvl_put_ll_block(void *lines, const void *src, uint64_t len, uint32_t seq)
{
	int err = dvx_nvl_ll_put(lines, src, len, seq, dvx_nvl_block_lane(), dvx_nvl_block_lanes());

	__syncthreads();
	return err;
}

/**
 * dvx_nvl_wait_ll_thread(), dvx_nvl_wait_ll_warp(), dvx_nvl_wait_ll_block() - wait for
 * message @seq in flagged lines of this rank's memory and copy its payload to @dst:
 * every lane polls its share of the lines (dvx_nvl_ll_get()); the group returns
 * together, @dst complete for all of it on success.
 * @lines:	the lines, 16-byte aligned
 * @dst:	@len bytes
 * @len:	payload bytes, as the writer's
 * @seq:	the sequence waited for
 * @timeout_ns:	how long
 *
 * Context: device; the scope's whole group. Return: 0; -ETIMEDOUT (some line never
 * came: the lines are left as they are, waiting again is safe); -EINVAL.
 */
DVX_NVL_DEV int dvx_nvl_wait_ll_thread(const void *lines, void *dst, uint64_t len, uint32_t seq,
				       uint64_t timeout_ns)
{
	return dvx_nvl_ll_get(lines, dst, len, seq, 0, 1, timeout_ns);
}

DVX_NVL_DEV int dvx_nvl_wait_ll_warp(const void *lines, void *dst, uint64_t len, uint32_t seq,
				     uint64_t timeout_ns)
{
	int err = dvx_nvl_ll_get(lines, dst, len, seq, dvx_nvl_warp_lane(), 32, timeout_ns);
	int late = __any_sync(0xffffffffu, err == -ETIMEDOUT);

	__syncwarp();	/* every lane's share of @dst, to the whole warp */
	return err == -EINVAL ? -EINVAL : late ? -ETIMEDOUT : 0;
}

DVX_NVL_DEV int dvx_nvl_wait_ll_block(const void *lines, void *dst, uint64_t len, uint32_t seq,
				      uint64_t timeout_ns)
{
	int err = dvx_nvl_ll_get(lines, dst, len, seq, dvx_nvl_block_lane(), dvx_nvl_block_lanes(),
				 timeout_ns);
	int late = __syncthreads_or(err == -ETIMEDOUT);

	return err == -EINVAL ? -EINVAL : late ? -ETIMEDOUT : 0;
}

#endif /* __CUDACC__ */

#endif /* DVX_NVL_DEV_CUH */
