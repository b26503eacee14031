/* SPDX-License-Identifier: MIT */
/*
 * dvx/gpu/post.cuh - posting WQEs and polling CQs from GPU threads (CUDA C++, nvcc).
 *
 * Header-only device API over the views of dvx/gpu/queue.h. The protocol is the mlx5
 * layer's, the same the CPU runs (dvx/mlx5/sq.h, prm 3.4-3.5): a shared SQ whose
 * posters reserve by compare-and-swap against the consumer index, build with the
 * builders of dvx/mlx5/wqe.h (any WQE kind on any SQ), publish in ticket order and
 * ring at the tail; the CQ is polled with the owner-bit rule of dvx/mlx5/cqe.h. What
 * this file adds is what only GPU code has: waits on %globaltimer with a back-off,
 * the consumer index read into GPU memory by one poster at a time, and posting by a
 * group of threads.
 *
 * Reservations: dvx_dev_sq_reserve() claims n WQEBBs only once the ring has room for
 * them (a timed-out reservation claims nothing); dvx_dev_sq_reserve_faa() claims by
 * fetch-add first and waits for room after (dvx_dev_sq_wait_room()): while it waits
 * holding the publish token it rings for what is published, so a ring full of unrung
 * WQEs cannot deadlock.
 *
 * Counters (struct dvx_mlx5_sq_ctrs) must be in GPU memory (GPU atomics on host memory
 * are not atomic everywhere); rings, records, the consumer index and CQs may be in
 * host or GPU memory (DVX_GPU_Q_SYS for host memory).
 *
 * Scopes: dvx_dev_sq_post() takes the one scope argument of every device call (struct
 * dvx_dev_grp, dvx/gpu/grp.cuh): at thread scope each calling thread posts its own
 * WQE(s); at warp, tile and block scope the group's leader reserves and publishes for
 * the group and every thread with n > 0 builds its WQE(s).
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

#include <dvx/gpu/grp.cuh>
#include <dvx/gpu/queue.h>

/* ---- clocks ---- */

/**
 * dvx_dev_now_ns() - %globaltimer: nanoseconds, the same on every SM.
 *
 * Context: device, any thread. Return: the time.
 */
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
 * dvx_dev_backoff() - sleep the current back-off and double it, up to 1 us.
 * @backoff:	nanoseconds, updated
 *
 * Context: device, a waiting thread. Return: nothing.
 */
DVX_DEV void dvx_dev_backoff(uint32_t *backoff)
{
	__nanosleep(*backoff);
	*backoff = *backoff < 1024 ? *backoff * 2 : *backoff;
}

/* ---- SQ ---- */

/**
 * dvx_dev_sq_wq() - the builders' description of the view's ring.
 * @v:		the view
 *
 * Context: device, any thread. Return: the ring.
 */
DVX_DEV struct dvx_mlx5_wq dvx_dev_sq_wq(const struct dvx_gpu_sq &v)
{
	return v.sq.wq;
}

/**
 * dvx_dev_sq_ctrs() - the posting counters of an SQ view.
 * @v:		the view
 *
 * Context: device, any thread. Return: the view's struct dvx_mlx5_sq_ctrs (in GPU
 * memory, owned by whoever set up the view).
 */
DVX_DEV struct dvx_mlx5_sq_ctrs *dvx_dev_sq_ctrs(const struct dvx_gpu_sq &v)
{
	return (struct dvx_mlx5_sq_ctrs *)v.ctrs;
}

/**
 * dvx_dev_sq_ci_refresh() - read the view's consumer index into its counters, if no
 * other poster is doing so (dvx_mlx5_sq_ci_refresh()).
 * @v:		the view
 *
 * Context: device, any thread. Return: the freshest index known.
 */
DVX_DEV uint64_t dvx_dev_sq_ci_refresh(const struct dvx_gpu_sq &v)
{
	return dvx_mlx5_sq_ci_refresh(dvx_dev_sq_ctrs(v), (const uint64_t *)v.ci,
				      dvx_mlx5_sq_scope(&v.sq));
}

/**
 * dvx_dev_sq_set_ci() - advance the consumer index to @ci (a GPU CQ poller frees
 * slots). Monotonic: a smaller value than the current one is ignored. The caller is
 * the only writer of the index (the host writes it otherwise).
 * @v:		the view
 * @ci:		the new index
 *
 * Context: device, the view's one consumer. Return: nothing.
 */
DVX_DEV void dvx_dev_sq_set_ci(const struct dvx_gpu_sq &v, uint64_t ci)
{
	uint64_t *p = (uint64_t *)v.ci;
	unsigned scope = dvx_mlx5_sq_scope(&v.sq);

	if (ci > dvx_ld_acquire_u64(p, scope))
		dvx_st_release_u64(p, ci, scope);
}

/**
 * dvx_dev_sq_ring_db() - write the doorbell record and the UAR for producer index @pi
 * (dvx_mlx5_sq_ring_db()). Only the holder of the publish token may call it (ready ==
 * its ticket); the posting functions do. Everything below @pi must be published.
 * @v:		the view
 * @pi:		the producer index
 *
 * Context: device, the token's holder. Return: nothing.
 */
DVX_DEV void dvx_dev_sq_ring_db(const struct dvx_gpu_sq &v, uint64_t pi)
{
	dvx_mlx5_sq_ring_db(&v.sq, dvx_dev_sq_ctrs(v), pi);
}

/**
 * dvx_dev_sq_reserve() - claim @n consecutive WQEBBs once the ring has room for them.
 * @v:		the view
 * @n:		WQEBBs (1 .. nwqebb)
 * @timeout_ns:	how long to wait for room (0: do not wait)
 * @ticket:	the first claimed WQEBB (free-running) on success
 *
 * Room is checked against the counters' copy of the consumer index, refreshed from
 * the view's index by one waiter at a time.
 *
 * Context: device, any thread. Return: 0; -EINVAL for a bad @n; -ETIMEDOUT when the
 * ring did not get room for @n WQEBBs in time (nothing is claimed, the SQ is
 * unchanged).
 */
DVX_DEV int dvx_dev_sq_reserve(const struct dvx_gpu_sq &v, uint32_t n, uint64_t timeout_ns,
			       uint64_t *ticket)
{
	struct dvx_mlx5_sq_ctrs *c = dvx_dev_sq_ctrs(v);
	uint64_t deadline = 0;
	uint32_t backoff = 32;
	int err;

	for (;;) {
		err = dvx_mlx5_sq_reserve(&v.sq, c, n, DVX_MLX5_SQ_SHARED, ticket);
		if (err != -ENOSPC)
			return err;
		if (dvx_dev_sq_ci_refresh(v) + v.sq.nwqebb >= dvx_ld_relaxed_u64(&c->resv) + n)
			continue;	/* room appeared */
		if (!deadline)
			deadline = dvx_dev_deadline(timeout_ns);
		else if (dvx_dev_now_ns() >= deadline)
			return -ETIMEDOUT;
		dvx_dev_backoff(&backoff);
	}
}

/**
 * dvx_dev_sq_reserve_faa() - claim @n WQEBBs at once with one fetch-add, room or not.
 * The caller must then dvx_dev_sq_wait_room() before building, and must eventually
 * build and publish the claimed WQEBBs (they cannot be given back).
 * @v:		the view
 * @n:		WQEBBs (1 .. nwqebb)
 *
 * Context: device, any thread. Return: the ticket.
 */
DVX_DEV uint64_t dvx_dev_sq_reserve_faa(const struct dvx_gpu_sq &v, uint32_t n)
{
	return dvx_mlx5_sq_reserve_faa(dvx_dev_sq_ctrs(v), n);
}

/**
 * dvx_dev_sq_wait_room() - wait until the WQEBBs [@ticket, @ticket + @n) are free.
 * @v:		the view
 * @ticket:	from dvx_dev_sq_reserve_faa()
 * @n:		its WQEBBs
 * @timeout_ns:	the bound
 *
 * While waiting, a poster that holds the publish token rings the doorbell for what is
 * published and not yet rung (the slots it waits for may need that to complete).
 *
 * Context: device, the claim's thread. Return: 0, or -ETIMEDOUT; the claim stays held
 * and the call may be repeated.
 */
DVX_DEV int dvx_dev_sq_wait_room(const struct dvx_gpu_sq &v, uint64_t ticket, uint32_t n,
				 uint64_t timeout_ns)
{
	struct dvx_mlx5_sq_ctrs *c = dvx_dev_sq_ctrs(v);
	uint64_t deadline = 0;
	uint32_t backoff = 32;

	for (;;) {
		dvx_dev_sq_ci_refresh(v);
		if (dvx_mlx5_sq_has_room(&v.sq, c, ticket, n))
			return 0;
		if (dvx_mlx5_sq_turn(c, ticket) && c->db_pi != ticket)
			dvx_mlx5_sq_ring_db(&v.sq, c, ticket);
		if (!deadline)
			deadline = dvx_dev_deadline(timeout_ns);
		else if (dvx_dev_now_ns() >= deadline)
			return -ETIMEDOUT;
		dvx_dev_backoff(&backoff);
	}
}

/**
 * dvx_dev_sq_pad_nop() - fill [@ticket, @ticket + @n) with 1-WQEBB NOPs (what a failed
 * build leaves behind, so the NIC still finds valid WQEs there).
 * @wq:		the ring
 * @ticket:	first slot
 * @n:		slots
 *
 * Context: device, the reservation's thread. Return: nothing.
 */
DVX_DEV void dvx_dev_sq_pad_nop(const struct dvx_mlx5_wq *wq, uint64_t ticket, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		dvx_mlx5_wqe_nop(wq, (uint32_t)(ticket + i), 0);
}

/**
 * dvx_dev_sq_publish() - publish [@ticket, @ticket + @n) in order and ring if last
 * (dvx_mlx5_sq_built(), dvx_mlx5_sq_turn(), dvx_mlx5_sq_publish()).
 * @v:		the view
 * @ticket:	from a reservation
 * @n:		WQEBBs of that reservation, all built
 * @timeout_ns:	how long to wait for the earlier posters to publish
 *
 * Context: device, the reservation's thread (after its group's barrier for a group
 * reservation). Return: 0, or -ETIMEDOUT (an earlier poster never published; the SQ
 * must be reset).
 */
DVX_DEV int dvx_dev_sq_publish(const struct dvx_gpu_sq &v, uint64_t ticket, uint32_t n,
			       uint64_t timeout_ns)
{
	struct dvx_mlx5_sq_ctrs *c = dvx_dev_sq_ctrs(v);
	uint64_t deadline = 0;

	dvx_mlx5_sq_built(&v.sq);
	while (!dvx_mlx5_sq_turn(c, ticket)) {
		if (!deadline)
			deadline = dvx_dev_deadline(timeout_ns);
		else if (dvx_dev_now_ns() >= deadline)
			return -ETIMEDOUT;
	}
	dvx_mlx5_sq_publish(&v.sq, c, ticket, n, DVX_MLX5_SQ_SHARED);
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
 * dvx_dev_sq_post() - the group @g posts: every thread @n WQEBBs of its own (0: none);
 * the leader reserves the group's total, every thread builds at its own index, and the
 * leader publishes for the group: one reservation and one doorbell at most per call.
 * @g:		the scope (dvx/gpu/grp.cuh): dvx_dev_thread() posts this thread's WQE(s),
 *		dvx_dev_warp(), dvx_dev_tile() and dvx_dev_block() aggregate
 * @v:		the view
 * @n:		WQEBBs this thread's @build writes (0 .. nwqebb; the group's total at most
 *		nwqebb)
 * @timeout_ns:	bound for each wait (room, then publish order)
 * @build:	int(const struct dvx_mlx5_wq *wq, uint32_t idx): writes this thread's
 *		WQE(s) at idx; called only where @n > 0
 * @ticket:	optional: receives this thread's first WQEBB index
 *
 * Context: device, every thread of @g together (dvx/gpu/grp.cuh). Return: 0;
 * -ETIMEDOUT (no room: nothing posted; or publish: see the file comment); -EINVAL; the
 * builder's error (its slots then hold NOPs, which are published). A build error is the
 * thread's own; reservation and publish errors are the group's, on every thread.
 */
template <class Build>
DVX_DEV int dvx_dev_sq_post(const struct dvx_dev_grp &g, const struct dvx_gpu_sq &v, uint32_t n,
			    uint64_t timeout_ns, Build build, uint64_t *ticket = nullptr)
{
	struct {
		uint64_t t;
		int err;
	} r = { 0, 0 };
	uint32_t total, excl;
	int berr = 0;

	if (g.scope == DVX_DEV_THREAD) {
		r.err = dvx_dev_sq_reserve(v, n, timeout_ns, &r.t);
		if (r.err)
			return r.err;
		berr = dvx_dev_sq_build(&v.sq.wq, r.t, n, build);
		r.err = dvx_dev_sq_publish(v, r.t, n, timeout_ns);
		if (ticket)
			*ticket = r.t;
		return r.err ? r.err : berr;
	}
	excl = dvx_dev_grp_scan(g, n, &total);
	if (!total)
		return 0;
	if (g.lane == 0)
		r.err = dvx_dev_sq_reserve(v, total, timeout_ns, &r.t);
	r = dvx_dev_grp_bcast(g, r);
	if (r.err)
		return r.err;
	if (n)
		berr = dvx_dev_sq_build(&v.sq.wq, r.t + excl, n, build);
	/* every thread's WQE stores before the leader's fence and publish */
	dvx_dev_grp_sync(g);
	if (g.lane == 0)
		r.err = dvx_dev_sq_publish(v, r.t, total, timeout_ns);
	r.err = dvx_dev_grp_bcast(g, r.err);
	if (ticket)
		*ticket = r.t + excl;
	return r.err ? r.err : berr;
}

/* ---- CQ ---- */

/**
 * dvx_dev_cq_poll() - wait for the CQE at *@ci and consume it (dvx_mlx5_cq_peek(),
 * dvx_mlx5_cqe_parse(), dvx_mlx5_cq_update_ci()).
 * @v:		the view
 * @ci:		the caller's consumer index (free-running); advanced by one when an entry
 *		is consumed. One thread polls a CQ at a time.
 * @info:	the decoded entry (also for an error CQE)
 * @timeout_ns:	how long to wait for the entry
 *
 * An error CQE is consumed and returned as an error, never as a completion. When the
 * view has a doorbell record, SET_CI is updated.
 *
 * Context: device, the CQ's one poller. Return: 1 for a good completion; the
 * syndrome's negative errno for an error CQE (@info->syndrome, vendor_syndrome,
 * wqe_counter, qpn, wqe_opcode say which); -EPROTO for a compressed or unexpected
 * entry; -ETIMEDOUT when none came (nothing consumed).
 */
DVX_DEV int dvx_dev_cq_poll(const struct dvx_gpu_cq &v, uint64_t *ci,
			    struct dvx_mlx5_cqe_info *info, uint64_t timeout_ns)
{
	struct dvx_mlx5_cq cq = v.cq;
	struct dvx_mlx5_cqe64 *cqe;
	uint64_t deadline = 0;
	int err;

	cq.ci = (uint32_t)*ci;
	while (!(cqe = dvx_mlx5_cq_peek(&cq))) {
		if (!deadline)
			deadline = dvx_dev_deadline(timeout_ns);
		else if (dvx_dev_now_ns() >= deadline)
			return -ETIMEDOUT;
	}
	err = dvx_mlx5_cqe_parse(cqe, info);
	dvx_mlx5_cq_pop(&cq);
	dvx_mlx5_cq_update_ci(&cq);
	(*ci)++;
	return err ? err : 1;
}

#endif /* DVX_GPU_POST_CUH */
