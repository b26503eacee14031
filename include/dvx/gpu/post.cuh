/* SPDX-License-Identifier: MIT */
/*
 * dvx/gpu/post.cuh - posting WQEs and polling CQs from GPU threads (CUDA C++, nvcc).
 *
 * Header-only device API over the views of dvx/gpu/queue.h. WQEs are built with the
 * very builders of dvx/mlx5/wqe.h, so any WQE kind can be posted on any SQ; the
 * posting protocol is the one NVSHMEM and DOCA GPUNetIO use (facts 3.4-3.5):
 *
 *   1. reserve  a poster claims n consecutive WQEBBs: ctrs->resv is advanced by CAS
 *               only once the ring has room for them against *ci, so a timed-out
 *               reservation claims nothing (dvx_dev_sq_reserve()); or by fetch-add
 *               first and a wait for room after (dvx_dev_sq_reserve_faa() +
 *               dvx_dev_sq_wait_room());
 *   2. build    each poster writes its WQE(s) at its tickets with the builders;
 *   3. publish  in ticket order: a poster waits until ctrs->ready equals its ticket
 *               (it then holds "the publish token": everything before it is
 *               published), rings the doorbell if nobody has reserved after it, and
 *               passes the token on by storing ready = ticket + n.
 *
 * Doorbells are therefore written by one thread at a time, in increasing producer
 * order, and coalesced: under contention only the poster at the tail of the chain
 * rings, for everything published before it. A poster whose FAA reservation waits
 * for room while it holds the token rings for what is published (so a ring that is
 * full of unrung WQEs cannot deadlock).
 *
 * Memory ordering (PTX memory model):
 *   - a poster's WQE stores -> fence (sys scope with DVX_GPU_Q_SYS, else gpu) -> its
 *     st.release.gpu of ready; the ringer's ld.acquire.gpu of ready makes every
 *     published WQE causally before its doorbell;
 *   - doorbell: fence -> st.relaxed.sys dbrec[SQ] = BE32(pi & 0xffff) -> fence ->
 *     one 8-byte st.mmio.relaxed.sys {BE32(pi << 8), BE32(qpn << 8)} to the UAR
 *     (the record is visible before the register write that makes the NIC read it);
 *   - the consumer index is read with ld.acquire.sys (the host or another GPU thread
 *     writes it) by one waiter at a time, which publishes it to ctrs->ci_seen after a
 *     fence; posters acquire ci_seen, so slots are rewritten only after their
 *     completion was seen;
 *   - CQ poll: ld.acquire (sys or gpu) of the entry's last word (owner bit), then the
 *     other fields.
 * Counters (struct dvx_gpu_sq_ctrs) must be in GPU memory (GPU atomics on host memory
 * are not atomic everywhere); rings, records, the consumer index and CQs may be in
 * host or GPU memory.
 *
 * Scopes: dvx_dev_sq_post() (each calling thread posts its own WQE),
 * dvx_dev_sq_post_warp() (all 32 lanes call it; lane 0 reserves and publishes for the
 * warp, every lane with n > 0 builds its WQE(s)), dvx_dev_sq_post_block() (every
 * thread of the block calls it; thread 0 reserves and publishes for the block).
 * Builders are callables `int build(const struct dvx_mlx5_wq *wq, uint32_t idx)`
 * returning the WQEBBs written (they must write exactly the n they announced) or a
 * negative errno; a failed build leaves NOPs in its slots so the ring stays valid.
 *
 * Every wait takes a timeout in nanoseconds of %globaltimer and returns -ETIMEDOUT,
 * never success. A reservation timeout (dvx_dev_sq_reserve) leaves the SQ unchanged;
 * a publish timeout means an earlier poster never published (it died or was never
 * scheduled) and the SQ must be reset.
 */
#ifndef DVX_GPU_POST_CUH
#define DVX_GPU_POST_CUH

#ifndef __CUDACC__
#error "dvx/gpu/post.cuh is CUDA C++: compile it with nvcc"
#endif

#include <dvx/gpu/queue.h>
#include <dvx/mlx5/sq.h>
#include <dvx/mlx5/cqe.h>

#define DVX_DEV __device__ __forceinline__
#define DVX_DEV_FULL_MASK 0xffffffffu

/* ---- clocks, loads, stores, fences (each names the scope it orders at) ---- */

/** dvx_dev_now_ns() - %globaltimer: nanoseconds, the same on every SM. */
DVX_DEV uint64_t dvx_dev_now_ns(void)
{
	uint64_t t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

/**
 * dvx_dev_deadline() - the %globaltimer deadline of a timeout that starts now.
 * @timeout_ns:	the timeout in nanoseconds
 *
 * Context: device, any thread. Return: now + @timeout_ns, saturated at ~0 instead of
 * wrapping.
 */
DVX_DEV uint64_t dvx_dev_deadline(uint64_t timeout_ns)
{
	uint64_t now = dvx_dev_now_ns();

	return now + timeout_ns < now ? ~0ull : now + timeout_ns;
}

/**
 * dvx_dev_ld_acquire_gpu(), dvx_dev_ld_acquire_sys(), dvx_dev_ld_relaxed_gpu(),
 * dvx_dev_st_release_gpu(), dvx_dev_st_release_sys(), dvx_dev_st_relaxed_sys32() -
 * single loads and stores with a PTX memory-model order and scope.
 * @p:		the (naturally aligned) word, in GPU memory or host memory mapped into the GPU
 * @v:		the value to store
 *
 * ld.acquire / st.release at gpu scope order against other threads of this GPU, at
 * sys scope also against the host and peer devices. The relaxed forms order nothing;
 * they are single untorn accesses the compiler neither drops nor merges
 * (ld.relaxed.gpu for counters only this GPU writes, st.relaxed.sys.u32 for the
 * doorbell record, which the caller orders with fences).
 *
 * Context: device, any thread. Return: the loaded value (loads), nothing (stores).
 */
DVX_DEV uint64_t dvx_dev_ld_acquire_gpu(const uint64_t *p)
{
	uint64_t v;

	asm volatile("ld.acquire.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
	return v;
}

DVX_DEV uint64_t dvx_dev_ld_acquire_sys(const uint64_t *p)
{
	uint64_t v;

	asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
	return v;
}

DVX_DEV uint64_t dvx_dev_ld_relaxed_gpu(const uint64_t *p)
{
	uint64_t v;

	asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
	return v;
}

DVX_DEV void dvx_dev_st_release_gpu(uint64_t *p, uint64_t v)
{
	asm volatile("st.release.gpu.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

DVX_DEV void dvx_dev_st_release_sys(uint64_t *p, uint64_t v)
{
	asm volatile("st.release.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

DVX_DEV void dvx_dev_st_relaxed_sys32(uint32_t *p, uint32_t v)
{
	asm volatile("st.relaxed.sys.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

/** dvx_dev_fence() - order this thread's (and what it observed) earlier accesses
 * before its later ones, for observers at system scope (@sys) or on this GPU. */
DVX_DEV void dvx_dev_fence(bool sys)
{
	if (sys)
		asm volatile("fence.acq_rel.sys;" ::: "memory");
	else
		asm volatile("fence.acq_rel.gpu;" ::: "memory");
}

/** dvx_dev_mmio_write64() - one 8-byte store to a UAR register (never split). */
DVX_DEV void dvx_dev_mmio_write64(uint64_t *reg, uint64_t v)
{
	asm volatile("st.mmio.relaxed.sys.global.u64 [%0], %1;" ::"l"(reg), "l"(v) : "memory");
}

/* ---- SQ ---- */

/** dvx_dev_sq_wq() - the builders' description of the view's ring. */
DVX_DEV struct dvx_mlx5_wq dvx_dev_sq_wq(const struct dvx_gpu_sq &sq)
{
	struct dvx_mlx5_wq wq;

	wq.buf = (uint8_t *)sq.ring;
	wq.size_mask = sq.nwqebb * DVX_MLX5_SEND_WQE_BB - 1;
	wq.qpn = sq.qpn;
	wq.max_inline = sq.max_inline;
	wq.qpn_be8 = dvx_cpu_to_be32(sq.qpn << 8);
	return wq;
}

/**
 * dvx_dev_sq_ctrs() - the posting counters of an SQ view.
 * @sq:		the view
 *
 * Context: device, any thread. Return: the view's struct dvx_gpu_sq_ctrs (in GPU
 * memory, owned by whoever set up the view).
 */
DVX_DEV struct dvx_gpu_sq_ctrs *dvx_dev_sq_ctrs(const struct dvx_gpu_sq &sq)
{
	return (struct dvx_gpu_sq_ctrs *)sq.ctrs;
}

/** dvx_dev_sq_ci() - the consumer index as last advanced (acquire, system scope). */
DVX_DEV uint64_t dvx_dev_sq_ci(const struct dvx_gpu_sq &sq)
{
	return dvx_dev_ld_acquire_sys((const uint64_t *)sq.ci);
}

/**
 * dvx_dev_sq_set_ci() - advance the consumer index to @ci (a GPU CQ poller frees slots).
 * Monotonic: a smaller value than the current one is ignored. The caller is the only
 * writer of the index (the host writes it otherwise).
 */
DVX_DEV void dvx_dev_sq_set_ci(const struct dvx_gpu_sq &sq, uint64_t ci)
{
	uint64_t *p = (uint64_t *)sq.ci;

	if (ci > dvx_dev_ld_acquire_sys(p))
		dvx_dev_st_release_sys(p, ci);
}

/**
 * dvx_dev_sq_ring_db() - write the doorbell record and the UAR for producer index @pi.
 * Only the holder of the publish token may call it (ready == its ticket); the
 * posting functions do. Everything below @pi must be published.
 */
DVX_DEV void dvx_dev_sq_ring_db(const struct dvx_gpu_sq &sq, uint64_t pi)
{
	bool sys = sq.flags & DVX_GPU_Q_SYS;
	uint32_t *rec = (uint32_t *)sq.dbrec + DVX_MLX5_SND_DBR;

	/* every published WQE before the doorbell-record store */
	dvx_dev_fence(sys);
	dvx_dev_st_relaxed_sys32(rec, (uint32_t)dvx_cpu_to_be32((uint32_t)pi &
								 DVX_MLX5_WQE_INDEX_MASK));
	if (!(sq.flags & DVX_GPU_Q_NO_UAR)) {
		/* the record before the register write that makes the NIC read it */
		dvx_dev_fence(sys);
		dvx_dev_mmio_write64((uint64_t *)sq.uar,
				     dvx_mlx5_sq_db_value((uint32_t)pi, sq.qpn));
	}
	dvx_dev_sq_ctrs(sq)->db_pi = pi;
}

/**
 * dvx_dev_sq_ci_refresh() - read the view's consumer index into ctrs->ci_seen, if no
 * other poster is doing so right now. Return: the freshest index known.
 */
DVX_DEV uint64_t dvx_dev_sq_ci_refresh(const struct dvx_gpu_sq &sq)
{
	struct dvx_gpu_sq_ctrs *c = dvx_dev_sq_ctrs(sq);
	uint64_t ci;

	if (atomicCAS(&c->ci_poll, 0u, 1u) != 0u)
		return dvx_dev_ld_acquire_gpu(&c->ci_seen);
	ci = dvx_dev_sq_ci(sq);
	/* the acquire of the real index before the copy others acquire (slot reuse
	 * happens after the consumer freed the slot) */
	dvx_dev_fence(false);
	atomicMax((unsigned long long *)&c->ci_seen, (unsigned long long)ci);
	atomicExch(&c->ci_poll, 0u);
	return dvx_dev_ld_acquire_gpu(&c->ci_seen);
}

/**
 * dvx_dev_sq_reserve() - claim @n consecutive WQEBBs once the ring has room for them.
 * @sq:		the view
 * @n:		WQEBBs (1 .. nwqebb)
 * @timeout_ns:	how long to wait for room (0: do not wait)
 * @ticket:	the first claimed WQEBB (free-running) on success
 *
 * Room is checked against ctrs->ci_seen, refreshed from the view's consumer index by
 * one waiter at a time (dvx_dev_sq_ci_refresh()).
 *
 * Context: any thread. Return: 0; -EINVAL for a bad @n; -ETIMEDOUT when the ring did
 * not get room for @n WQEBBs in time (nothing is claimed, the SQ is unchanged).
 */
DVX_DEV int dvx_dev_sq_reserve(const struct dvx_gpu_sq &sq, uint32_t n, uint64_t timeout_ns,
			       uint64_t *ticket)
{
	struct dvx_gpu_sq_ctrs *c = dvx_dev_sq_ctrs(sq);
	uint64_t r = dvx_dev_ld_relaxed_gpu(&c->resv);
	uint64_t ci = dvx_dev_ld_acquire_gpu(&c->ci_seen), deadline = 0;
	uint32_t backoff = 32;

	if (n - 1u >= sq.nwqebb)
		return -EINVAL;
	for (;;) {
		if (r + n - ci <= sq.nwqebb) {
			unsigned long long old = atomicCAS((unsigned long long *)&c->resv,
							   (unsigned long long)r,
							   (unsigned long long)(r + n));
			if (old == r) {
				*ticket = r;
				return 0;
			}
			r = old;
			continue;
		}
		ci = dvx_dev_sq_ci_refresh(sq);
		if (r + n - ci <= sq.nwqebb)
			continue;
		if (!deadline)
			deadline = dvx_dev_deadline(timeout_ns);
		else if (dvx_dev_now_ns() >= deadline)
			return -ETIMEDOUT;
		__nanosleep(backoff);
		backoff = backoff < 1024 ? backoff * 2 : backoff;
		r = dvx_dev_ld_relaxed_gpu(&c->resv);
	}
}

/**
 * dvx_dev_sq_reserve_faa() - claim @n WQEBBs at once with one fetch-add, room or not.
 * The caller must then dvx_dev_sq_wait_room() before building, and must eventually
 * build and publish the claimed WQEBBs (they cannot be given back).
 * Return: the ticket.
 */
DVX_DEV uint64_t dvx_dev_sq_reserve_faa(const struct dvx_gpu_sq &sq, uint32_t n)
{
	return atomicAdd((unsigned long long *)&dvx_dev_sq_ctrs(sq)->resv, (unsigned long long)n);
}

/**
 * dvx_dev_sq_wait_room() - wait until the WQEBBs [@ticket, @ticket + @n) are free.
 *
 * While waiting, a poster that holds the publish token rings the doorbell for what is
 * published and not yet rung (the slots it waits for may need that to complete).
 * Return: 0, or -ETIMEDOUT; the claim stays held and the call may be repeated.
 */
DVX_DEV int dvx_dev_sq_wait_room(const struct dvx_gpu_sq &sq, uint64_t ticket, uint32_t n,
				 uint64_t timeout_ns)
{
	struct dvx_gpu_sq_ctrs *c = dvx_dev_sq_ctrs(sq);
	uint64_t deadline = 0;

	uint32_t backoff = 32;

	while (ticket + n - dvx_dev_sq_ci_refresh(sq) > sq.nwqebb) {
		if (dvx_dev_ld_acquire_gpu(&c->ready) == ticket && c->db_pi != ticket)
			dvx_dev_sq_ring_db(sq, ticket);
		if (!deadline)
			deadline = dvx_dev_deadline(timeout_ns);
		else if (dvx_dev_now_ns() >= deadline)
			return -ETIMEDOUT;
		__nanosleep(backoff);
		backoff = backoff < 1024 ? backoff * 2 : backoff;
	}
	return 0;
}

/**
 * dvx_dev_sq_pad_nop() - fill [@ticket, @ticket + @n) with 1-WQEBB NOPs (what a failed
 * build leaves behind, so the NIC still finds valid WQEs there).
 */
DVX_DEV void dvx_dev_sq_pad_nop(const struct dvx_mlx5_wq *wq, uint64_t ticket, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		dvx_mlx5_wqe_nop(wq, (uint32_t)(ticket + i), 0);
}

/**
 * dvx_dev_sq_publish() - publish [@ticket, @ticket + @n) in order and ring if last.
 * @sq:		the view
 * @ticket:	from a reservation
 * @n:		WQEBBs of that reservation, all built
 * @timeout_ns:	how long to wait for the earlier posters to publish
 *
 * Return: 0, or -ETIMEDOUT (an earlier poster never published; the SQ must be reset).
 */
DVX_DEV int dvx_dev_sq_publish(const struct dvx_gpu_sq &sq, uint64_t ticket, uint32_t n,
			       uint64_t timeout_ns)
{
	struct dvx_gpu_sq_ctrs *c = dvx_dev_sq_ctrs(sq);
	uint64_t end = ticket + n, deadline = 0;

	/* this poster's WQE stores (and those of its group, after the group's barrier)
	 * before the release of ready that hands them to the ringer */
	dvx_dev_fence(sq.flags & DVX_GPU_Q_SYS);
	while (dvx_dev_ld_acquire_gpu(&c->ready) != ticket) {
		if (!deadline)
			deadline = dvx_dev_deadline(timeout_ns);
		else if (dvx_dev_now_ns() >= deadline)
			return -ETIMEDOUT;
	}
	/* the token is ours: ring unless a later poster has claimed slots (it will ring,
	 * or ring for us while it waits for room) */
	if (dvx_dev_ld_relaxed_gpu(&c->resv) == end)
		dvx_dev_sq_ring_db(sq, end);
	dvx_dev_st_release_gpu(&c->ready, end);
	return 0;
}

/**
 * dvx_dev_sq_build() - run a builder over its reserved slots.
 * @wq:		the builders' description of the ring (dvx_dev_sq_wq())
 * @ticket:	the first reserved WQEBB
 * @n:		WQEBBs reserved
 * @build:	int(const struct dvx_mlx5_wq *wq, uint32_t idx): writes the WQE(s) at idx
 *
 * A builder that fails, or writes another count than @n, leaves 1-WQEBB NOPs in all
 * @n slots (dvx_dev_sq_pad_nop()), so the ring stays valid when they are published.
 *
 * Context: device, the thread that holds the reservation. Return: 0; the builder's
 * negative errno; -EINVAL when it wrote another count than @n.
 */
template <class Build>
DVX_DEV int dvx_dev_sq_build(const struct dvx_mlx5_wq *wq, uint64_t ticket, uint32_t n,
			     Build &build)
{
	int w = build(wq, (uint32_t)ticket);

	if (w == (int)n)
		return 0;
	dvx_dev_sq_pad_nop(wq, ticket, n);
	return w < 0 ? w : -EINVAL;
}

/**
 * dvx_dev_sq_post() - thread scope: this thread posts one WQE (or a batch) of @n WQEBBs.
 * @sq:		the view
 * @n:		WQEBBs @build will write (1 .. nwqebb)
 * @timeout_ns:	bound for each wait (room, then publish order)
 * @build:	int(const struct dvx_mlx5_wq *wq, uint32_t idx): writes the WQE(s) at idx
 * @ticket:	optional: receives the first WQEBB index of the post
 *
 * Return: 0; -ETIMEDOUT (no room: nothing posted; or publish: see the file comment);
 * -EINVAL; the builder's error (its slots then hold NOPs, which are published).
 */
template <class Build>
DVX_DEV int dvx_dev_sq_post(const struct dvx_gpu_sq &sq, uint32_t n, uint64_t timeout_ns,
			    Build build, uint64_t *ticket = nullptr)
{
	struct dvx_mlx5_wq wq = dvx_dev_sq_wq(sq);
	uint64_t t;
	int err = dvx_dev_sq_reserve(sq, n, timeout_ns, &t), berr;

	if (err)
		return err;
	berr = dvx_dev_sq_build(&wq, t, n, build);
	err = dvx_dev_sq_publish(sq, t, n, timeout_ns);
	if (ticket)
		*ticket = t;
	return err ? err : berr;
}

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

/** dvx_dev_block_tid() - this thread's linear index in its block (x fastest). */
DVX_DEV uint32_t dvx_dev_block_tid(void)
{
	return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

/** dvx_dev_block_nthreads() - threads in the block. */
DVX_DEV uint32_t dvx_dev_block_nthreads(void)
{
	return blockDim.x * blockDim.y * blockDim.z;
}

/**
 * dvx_dev_block_scan() - exclusive prefix sum of @v over the block's threads in
 * linear order; *@total receives the block's sum.
 * Context: every thread of the block, like __syncthreads() (any block shape, partial
 * last warp included); it ends with a barrier, so it may be called again at once.
 * Uses 132 bytes of static shared memory.
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

/**
 * dvx_dev_sq_post_warp() - warp scope: every lane posts @n WQEBBs (0: none), lane 0
 * reserves and publishes for the whole warp, one doorbell at most.
 * @n:		this lane's WQEBBs
 * @build:	called on lanes with @n > 0, each at its own index
 *
 * Context: all 32 lanes of the warp, converged. Return: as dvx_dev_sq_post(), per
 * lane (a build error is the lane's own; reservation and publish errors are the warp's).
 */
template <class Build>
DVX_DEV int dvx_dev_sq_post_warp(const struct dvx_gpu_sq &sq, uint32_t n, uint64_t timeout_ns,
				 Build build, uint64_t *ticket = nullptr)
{
	struct dvx_mlx5_wq wq = dvx_dev_sq_wq(sq);
	uint32_t lane = dvx_dev_lane();
	uint32_t incl = dvx_dev_warp_scan(DVX_DEV_FULL_MASK, lane, n);
	uint32_t total = __shfl_sync(DVX_DEV_FULL_MASK, incl, 31);
	uint64_t t = 0;
	int err = 0, berr = 0;

	if (!total)
		return 0;
	if (lane == 0)
		err = dvx_dev_sq_reserve(sq, total, timeout_ns, &t);
	err = __shfl_sync(DVX_DEV_FULL_MASK, err, 0);
	if (err)
		return err;
	t = __shfl_sync(DVX_DEV_FULL_MASK, t, 0) + (incl - n);
	if (n)
		berr = dvx_dev_sq_build(&wq, t, n, build);
	/* every lane's WQE stores before lane 0's fence and publish */
	__syncwarp();
	if (lane == 0)
		err = dvx_dev_sq_publish(sq, t, total, timeout_ns);
	err = __shfl_sync(DVX_DEV_FULL_MASK, err, 0);
	if (ticket)
		*ticket = t;
	return err ? err : berr;
}

/**
 * dvx_dev_sq_post_block() - block scope: every thread posts @n WQEBBs (0: none),
 * thread 0 reserves and publishes for the block, one doorbell at most.
 *
 * Context: every thread of the block, like __syncthreads() (any block shape; the
 * block's threads are taken in linear order). Uses a few hundred bytes of static
 * shared memory. Return: as dvx_dev_sq_post_warp().
 */
template <class Build>
DVX_DEV int dvx_dev_sq_post_block(const struct dvx_gpu_sq &sq, uint32_t n, uint64_t timeout_ns,
				  Build build, uint64_t *ticket = nullptr)
{
	__shared__ uint32_t warp_sum[32];
	__shared__ uint64_t s_ticket;
	__shared__ int s_err;
	__shared__ uint32_t s_total;
	struct dvx_mlx5_wq wq = dvx_dev_sq_wq(sq);
	uint32_t tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
	uint32_t nthr = blockDim.x * blockDim.y * blockDim.z;
	uint32_t lane = tid & 31, warp = tid >> 5, nwarps = (nthr + 31) >> 5;
	uint32_t left = nthr - (warp << 5);
	uint32_t mask = left >= 32 ? DVX_DEV_FULL_MASK : (1u << left) - 1;
	uint32_t incl = dvx_dev_warp_scan(mask, lane, n);
	uint64_t t = 0;
	int err, berr = 0;

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
		s_total = acc;
		s_err = acc ? dvx_dev_sq_reserve(sq, acc, timeout_ns, &t) : 0;
		s_ticket = acc ? t : 0;
	}
	__syncthreads();
	err = s_err;
	if (err || !s_total)
		return err;
	t = s_ticket + warp_sum[warp] + (incl - n);
	if (n)
		berr = dvx_dev_sq_build(&wq, t, n, build);
	/* every thread's WQE stores before thread 0's fence and publish */
	__syncthreads();
	if (tid == 0)
		s_err = dvx_dev_sq_publish(sq, s_ticket, s_total, timeout_ns);
	__syncthreads();
	err = s_err;
	if (ticket)
		*ticket = t;
	return err ? err : berr;
}

/* ---- CQ ---- */

/**
 * dvx_dev_cq_poll() - wait for the CQE at *@ci and consume it.
 * @cq:		the view
 * @ci:		the caller's consumer index (free-running); advanced by one when an entry
 *		is consumed. One thread polls a CQ at a time.
 * @info:	the decoded entry (also for an error CQE)
 * @timeout_ns:	how long to wait for the entry
 *
 * The owner bit is read with an acquire load of the entry's last 4 bytes; the rest of
 * the entry is read after it. An error CQE is consumed and returned as an error,
 * never as a completion. When the view has a doorbell record, SET_CI is updated.
 *
 * Return: 1 for a good completion; the syndrome's negative errno for an error CQE
 * (@info->syndrome, vendor_syndrome, wqe_counter, qpn, wqe_opcode say which);
 * -EPROTO for a compressed or unexpected entry; -ETIMEDOUT when none came (nothing
 * consumed).
 */
DVX_DEV int dvx_dev_cq_poll(const struct dvx_gpu_cq &cq, uint64_t *ci,
			    struct dvx_mlx5_cqe_info *info, uint64_t timeout_ns)
{
	struct dvx_mlx5_cqe64 *cqe = dvx_mlx5_cqe_at((uint8_t *)cq.buf, cq.log_size, (uint32_t)*ci);
	const uint32_t *tail = (const uint32_t *)((const uint8_t *)cqe + 60);
	uint64_t deadline = 0;
	uint32_t w;
	int err;

	for (;;) {
		if (cq.flags & DVX_GPU_Q_SYS)
			asm volatile("ld.acquire.sys.u32 %0, [%1];" : "=r"(w) : "l"(tail) : "memory");
		else
			asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(w) : "l"(tail) : "memory");
		/* bytes 60-63 little-endian: op_own is the top byte */
		if (dvx_mlx5_cqe_sw_owned((uint8_t)(w >> 24), (uint32_t)*ci, cq.log_size))
			break;
		if (!deadline)
			deadline = dvx_dev_deadline(timeout_ns);
		else if (dvx_dev_now_ns() >= deadline)
			return -ETIMEDOUT;
	}
	err = dvx_mlx5_cqe_parse(cqe, info);
	(*ci)++;
	if (cq.dbrec)
		dvx_dev_st_relaxed_sys32((uint32_t *)cq.dbrec + DVX_MLX5_CQ_SET_CI,
					 (uint32_t)dvx_cpu_to_be32((uint32_t)*ci &
								   DVX_MLX5_CQ_CI_MASK));
	return err ? err : 1;
}

#endif /* DVX_GPU_POST_CUH */
