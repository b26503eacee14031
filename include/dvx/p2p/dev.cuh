/* SPDX-License-Identifier: MIT */
/*
 * dvx/p2p/dev.cuh - the P2P transport's operations posted by GPU threads (CUDA C++,
 * nvcc; header-only). Kernels take the struct dvx_p2p_dev of dvx_p2p_gpu_export() by
 * value and post on its lanes with the very code the host engine runs: the operations'
 * checks and WQEs (dvx/p2p/ops.h), the lane queues' reserve, publish, ring and consume
 * steps (dvx/p2p/queue.h), the SQ and CQ protocol under them (dvx/mlx5/sq.h, cqe.h).
 * What this file adds is what only GPU code has: waits on %globaltimer, and posts by
 * a group of threads.
 *
 * Every WQE is one WQEBB and requests a CQE (CQ index == WQE index), as on the host.
 * Completions are consumed by whichever GPU thread needs room or waits (a try-lock per
 * queue); an error CQE is recorded in the queue's state (first error kept), freezes its
 * watermark, and every later post or wait on the lane returns that errno. Timeouts are
 * nanoseconds of %globaltimer and return -ETIMEDOUT, never success; a timeout of 0
 * means the default, DVX_P2P_DEV_TIMEOUT_NS (5 s, the seed's kDefaultDeviceTimeoutCycles
 * as time), and it too ends in -ETIMEDOUT. The channel is always an explicit argument
 * (lane = channel mod lanes per peer).
 *
 * Beside the puts and notifications: gets (RDMA READs into local memory), the one-word
 * operations (put_value, add, fetch_add, compare_swap: struct dvx_p2p_amo), a device
 * reset of a peer's signal word (a fenced inline WRITE of zero) and quiet (every lane of
 * every channel drained), each at the same scopes with the same group argument.
 *
 * Scopes: every post takes the group that makes it (struct dvx_dev_grp,
 * dvx/gpu/grp.cuh: a thread, a warp, a block or a caller-sized tile of a warp), and one
 * body serves them all (dvx_p2p_dev_post()): the group's leader checks the
 * notification and reserves on the one lane for the whole group, every member builds
 * its own WRITEs at its place (a prefix sum), the leader adds ONE signal after all of
 * them and at most one counter increment, publishes and rings once. At thread scope
 * that is each thread's own operation; for one signal per thread, post at thread
 * scope.
 */
#ifndef DVX_P2P_DEV_CUH
#define DVX_P2P_DEV_CUH

#include <dvx/gpu/post.cuh>
#include <dvx/p2p/dev.h>

/* a device wait's bound when the caller passes 0: about 5 s of %globaltimer */
#define DVX_P2P_DEV_TIMEOUT_NS 5000000000ull

/**
 * dvx_p2p_dev_timeout() - the bound a device wait uses for @timeout_ns.
 * @timeout_ns:	the caller's bound; 0 means DVX_P2P_DEV_TIMEOUT_NS
 *
 * Context: device, any thread. Return: the bound in nanoseconds.
 */
DVX_DEV uint64_t dvx_p2p_dev_timeout(uint64_t timeout_ns)
{
	return timeout_ns ? timeout_ns : DVX_P2P_DEV_TIMEOUT_NS;
}

/**
 * dvx_p2p_dev_waiter() - a %globaltimer waiter of @timeout_ns.
 * @w:		filled
 * @timeout_ns:	the bound (0: DVX_P2P_DEV_TIMEOUT_NS)
 *
 * Context: device, any thread. Return: nothing.
 */
DVX_DEV void dvx_p2p_dev_waiter(struct dvx_p2p_waiter *w, uint64_t timeout_ns)
{
	dvx_p2p_waiter_init(w, dvx_p2p_dev_timeout(timeout_ns), nullptr, nullptr, nullptr);
}

/**
 * dvx_p2p_dev_lane_of() - the lane of (@peer, @channel).
 * @d:		the transport's device handle
 * @peer:	the rank
 * @channel:	selects the lane (modulo the lanes per peer)
 *
 * Context: device, any thread. Return: the lane, or NULL (self, a bad peer, a handle of
 * another layout version).
 */
DVX_DEV const struct dvx_p2p_dev_lane *dvx_p2p_dev_lane_of(const struct dvx_p2p_dev &d, int peer,
							   uint32_t channel)
{
	int pi;

	if (d.version != DVX_P2P_DEV_VERSION || peer < 0 || peer >= d.nranks ||
	    peer == d.rank || !d.nlanes)
		return nullptr;
	/* every other rank: the index is arithmetic; a subset reads the map */
	pi = (d.flags & DVX_P2P_DEV_ALL_PEERS) ? dvx_p2p_peer_index(d.rank, peer) :
						 ((const int32_t *)d.peer_idx)[peer];
	if (pi < 0)
		return nullptr;
	return (const struct dvx_p2p_dev_lane *)d.lanes + (uint32_t)pi * d.nlanes +
	       channel % d.nlanes;
}

/**
 * dvx_p2p_dev_q_err() - a lane queue's first error.
 * @q:		the queue
 *
 * Context: device, any thread. Return: 0, or its negative errno.
 */
DVX_DEV int dvx_p2p_dev_q_err(const struct dvx_p2p_qdesc &q)
{
	return dvx_p2p_q_err(q.st);
}

/* ---- the recovery gate (docs/gpu.md, "Recovering a lane the GPU drives") ---- */

/**
 * dvx_p2p_dev_q_enter() - count this thread in on queue @q unless the host is
 * recovering its lane: add 1 to @q's @inside, a sequentially consistent fence, then
 * look at @gate. The host sets @gate and then reads @inside, so either this thread
 * sees the gate or the host sees this thread (and waits for it). Both words are in GPU
 * memory, whose one point of coherence (the L2) the host's copies go through too: GPU
 * scope is enough, and much cheaper than system scope in a thread with writes to host
 * memory in flight.
 * @q:		the queue
 *
 * Context: device, any thread; every 0 must be matched by dvx_p2p_dev_q_leave().
 * Return: 0 (counted in, or a queue without a gate: @q.gated 0); -EAGAIN (the lane is
 * being recovered: not counted, nothing touched; dvx_p2p_dev_wait_lane() waits).
 */
DVX_DEV int dvx_p2p_dev_q_enter(const struct dvx_p2p_qdesc &q)
{
	uint32_t *in = &q.st->inside, gate;

	if (!q.gated)
		return 0;	/* a transport without DVX_P2P_F_GPU_RECOVER: no gate */
	/* a gate seen closed refuses at once: threads retrying while the host waits for
	 * the count to fall do not keep it up */
	asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(gate) : "l"(&q.st->gate) : "memory");
	if (gate)
		return -EAGAIN;
	asm volatile("red.relaxed.gpu.global.add.u32 [%0], 1;" ::"l"(in) : "memory");
	asm volatile("fence.sc.gpu;" ::: "memory");
	asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(gate) : "l"(&q.st->gate) : "memory");
	if (!gate)
		return 0;
	asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(in), "r"(0xffffffffu) : "memory");
	return -EAGAIN;
}

/**
 * dvx_p2p_dev_q_leave() - count this thread out of @q: its writes to the queue's
 * state, then @inside less 1 (release, GPU scope: the host's copies read the state
 * through the same L2). Its writes to host memory (WQEs, doorbell records, the
 * doorbell, the CQ's record) were ordered at system scope by the steps that made them.
 * @q:		the queue
 *
 * Context: device, a thread that dvx_p2p_dev_q_enter() let in. Return: nothing.
 */
DVX_DEV void dvx_p2p_dev_q_leave(const struct dvx_p2p_qdesc &q)
{
	if (!q.gated)
		return;
	asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(&q.st->inside),
		     "r"(0xffffffffu) : "memory");
}

/**
 * dvx_p2p_dev_q_poll() - consume the CQEs of published WQEs, if no other thread is
 * (dvx_p2p_q_consume()), unless the lane is being recovered.
 * @q:		the queue
 *
 * Context: device, any thread. Return: CQEs consumed (0 when none, or another thread
 * polls); -EAGAIN while the host recovers the lane.
 */
DVX_DEV int dvx_p2p_dev_q_poll(const struct dvx_p2p_qdesc &q)
{
	int n = dvx_p2p_dev_q_enter(q);

	if (n)
		return n;
	n = dvx_p2p_q_consume(&q);
	dvx_p2p_dev_q_leave(q);
	return n;
}

/**
 * dvx_p2p_dev_q_verdict() - what a ticket below the watermark answers: 0, unless a
 * restart of the lane gave its WQE up (the last restart's error) or it is from before
 * the restart before that (-ESTALE). Read after an acquire of the watermark: the host
 * writes the lane's descriptor and lost range before the watermark that passes them.
 * @q:		the queue
 * @idx:	the WQE (below the watermark)
 *
 * Context: device, any thread. Return: 0, the lost range's error, or -ESTALE.
 */
DVX_DEV int dvx_p2p_dev_q_verdict(const struct dvx_p2p_qdesc &q, uint64_t idx)
{
	const struct dvx_p2p_qstate *st = q.st;
	int lerr = *(volatile const int32_t *)&st->lost_err;

	if (lerr && idx >= *(volatile const uint64_t *)&st->lost_lo &&
	    idx < *(volatile const uint64_t *)&st->lost_hi)
		return lerr;
	return idx < *(volatile const uint64_t *)&q.lost_base ? -ESTALE : 0;
}

/**
 * dvx_p2p_dev_q_wait() - wait until WQE @idx of the queue completed.
 * @q:		the queue
 * @idx:	a ticket of this queue
 * @timeout_ns:	the bound
 *
 * A ticket whose WQE a recovery of the lane gave up answers the error that failed the
 * lane (the last recovery's; one from before the recovery before it, -ESTALE), never 0.
 *
 * Context: device, any thread. Return: 0; the error CQE's errno if it or an earlier WQE
 * failed; -ETIMEDOUT; -EINVAL for an index never handed out; -EAGAIN while the host
 * recovers the lane; the error (or -ESTALE) of a WQE a recovery gave up.
 */
DVX_DEV int dvx_p2p_dev_q_wait(const struct dvx_p2p_qdesc &q, uint64_t idx, uint64_t timeout_ns)
{
	struct dvx_p2p_qstate *st = q.st;
	struct dvx_p2p_waiter w;
	int err, n;

	if (idx >= dvx_ld_relaxed_u64(&st->ctrs.resv))
		return -EINVAL;
	dvx_p2p_dev_waiter(&w, timeout_ns);
	for (;;) {
		/* below the watermark: done, unless a recovery gave it up (the host writes
		 * the lost range before the watermark that passes it) */
		if (dvx_ld_acquire_u64(&st->completed, DVX_SCOPE_GPU) > idx)
			return dvx_p2p_dev_q_verdict(q, idx);
		/* a failed queue answers with its error only where the WQE's fate is
		 * known; else its own CQE is still to come (dvx_p2p_q_fate_known()) */
		err = dvx_p2p_q_err(st);
		if (err && dvx_p2p_q_fate_known(st, idx))
			return dvx_ld_acquire_u64(&st->completed, DVX_SCOPE_GPU) > idx ?
				dvx_p2p_dev_q_verdict(q, idx) : err;
		n = dvx_p2p_dev_q_poll(q);
		if (n < 0)
			return n;
		if (n)
			continue;
		if (dvx_p2p_waiter_step(&w)) {
			if (dvx_ld_acquire_u64(&st->completed, DVX_SCOPE_GPU) > idx)
				return dvx_p2p_dev_q_verdict(q, idx);
			err = dvx_p2p_q_err(st);
			return err ? err : -ETIMEDOUT;
		}
	}
}


/**
 * dvx_p2p_dev_q_drain() - wait until everything published on @q so far has completed.
 * @q:		the lane queue (its CQ is polled while waiting)
 * @w:		the wait (shared by a flush's queues)
 *
 * Context: device, any thread. Return: 0; the queue's error; -ETIMEDOUT; -EAGAIN while
 * the host recovers the lane; the error (or -ESTALE) of WQEs a recovery gave up.
 */
DVX_DEV int dvx_p2p_dev_q_drain(const struct dvx_p2p_qdesc &q, struct dvx_p2p_waiter *w)
{
	struct dvx_p2p_qstate *st = q.st;
	uint64_t end;
	int err, n;

	end = dvx_ld_acquire_u64(&st->ctrs.ready, DVX_SCOPE_GPU);
	if (dvx_ld_acquire_u64(&st->completed, DVX_SCOPE_GPU) >= end)
		return 0;	/* nothing in flight (as on the host) */
	for (;;) {
		/* the last WQE published when the drain began: done, or given up by a
		 * recovery that came in between */
		if (dvx_ld_acquire_u64(&st->completed, DVX_SCOPE_GPU) >= end)
			return dvx_p2p_dev_q_verdict(q, end - 1);
		err = dvx_p2p_q_err(st);
		if (err && dvx_p2p_q_fate_known(st, end - 1))
			return dvx_ld_acquire_u64(&st->completed, DVX_SCOPE_GPU) >= end ?
				dvx_p2p_dev_q_verdict(q, end - 1) : err;
		n = dvx_p2p_dev_q_poll(q);
		if (n < 0)
			return n;
		if (n)
			continue;
		if (dvx_p2p_waiter_step(w)) {
			if (dvx_ld_acquire_u64(&st->completed, DVX_SCOPE_GPU) >= end)
				return dvx_p2p_dev_q_verdict(q, end - 1);
			err = dvx_p2p_q_err(st);
			return err ? err : -ETIMEDOUT;
		}
	}
}

/**
 * dvx_p2p_dev_wait_local() - wait for the post behind @tk to complete locally.
 * @d:		the device handle
 * @tk:		a ticket from a post
 * @timeout_ns:	the bound
 *
 * Context: device, any thread. Return: 0; the lane's error CQE errno; -ETIMEDOUT (wait
 * again if you like); -EINVAL; on a gated lane (DVX_P2P_F_GPU_RECOVER) also -EAGAIN
 * while the host recovers it, and the error or -ESTALE of a WQE a recovery gave up
 * (dvx_p2p_dev_q_wait()).
 */
DVX_DEV int dvx_p2p_dev_wait_local(const struct dvx_p2p_dev &d, const struct dvx_p2p_ticket &tk,
				   uint64_t timeout_ns)
{
	const struct dvx_p2p_dev_lane *l = tk.lane < d.nlanes ?
		dvx_p2p_dev_lane_of(d, (int)tk.peer, tk.lane) : nullptr;

	return l ? dvx_p2p_dev_q_wait(l->main, tk.idx, timeout_ns) : -EINVAL;
}

/**
 * dvx_p2p_dev_lane_health() - the lane (@peer, @channel) as posts would find it: 0
 * healthy; -EAGAIN while the host recovers it (dvx_p2p_gpu_lane_recover()); else its
 * first error (the main queue's, then the companion's).
 * @d:		the device handle
 * @peer:	the rank
 * @channel:	selects the lane
 *
 * Context: device, any thread. Return: as above; -EINVAL for a bad peer.
 */
DVX_DEV int dvx_p2p_dev_lane_health(const struct dvx_p2p_dev &d, int peer, uint32_t channel)
{
	const struct dvx_p2p_dev_lane *l = dvx_p2p_dev_lane_of(d, peer, channel);
	int err;

	if (!l)
		return -EINVAL;
	if (dvx_ld_acquire_u32(&l->main.st->gate) ||
	    (l->has_comp && dvx_ld_acquire_u32(&l->comp.st->gate)))
		return -EAGAIN;
	err = dvx_p2p_q_err(l->main.st);
	if (!err && l->has_comp)
		err = dvx_p2p_q_err(l->comp.st);
	return err;
}

/**
 * dvx_p2p_dev_wait_lane() - wait until the lane (@peer, @channel) is healthy again: a
 * kernel whose post or wait met the lane's error (or -EAGAIN) waits here while the
 * host recovers the lane at both ends (dvx_p2p_gpu_lane_recover(), docs/gpu.md), then
 * posts again. Tickets of WQEs the recovery gave up keep answering its error.
 * @d:		the device handle
 * @peer:	the rank
 * @channel:	selects the lane
 * @timeout_ns:	the bound (0: DVX_P2P_DEV_TIMEOUT_NS)
 *
 * Context: device, any thread. Return: 0 (healthy); -ETIMEDOUT (still failed or being
 * recovered); -EINVAL.
 */
DVX_DEV int dvx_p2p_dev_wait_lane(const struct dvx_p2p_dev &d, int peer, uint32_t channel,
				  uint64_t timeout_ns)
{
	struct dvx_p2p_waiter w;
	int err;

	dvx_p2p_dev_waiter(&w, timeout_ns);
	for (;;) {
		err = dvx_p2p_dev_lane_health(d, peer, channel);
		if (err == 0 || err == -EINVAL)
			return err;
		if (dvx_p2p_waiter_step(&w))
			return dvx_p2p_dev_lane_health(d, peer, channel) ? -ETIMEDOUT : 0;
	}
}

/**
 * dvx_p2p_dev_read_signal(), dvx_p2p_dev_read_counter() - acquire load (system scope)
 * of a signal or counter word.
 * @word:	the word's device address
 *
 * Context: device, any thread. Return: its value.
 */
DVX_DEV uint64_t dvx_p2p_dev_read_signal(const uint64_t *word)
{
	return dvx_ld_acquire_u64(word, DVX_SCOPE_SYS);
}

DVX_DEV uint64_t dvx_p2p_dev_read_counter(const uint64_t *word)
{
	return dvx_ld_acquire_u64(word, DVX_SCOPE_SYS);
}

/**
 * dvx_p2p_dev_wait_signal() - wait until (*@word @cmp @expected) holds.
 * @word:	the device address of a local signal word (registered host or GPU memory)
 * @cmp:	DVX_CMP_*
 * @expected:	the value compared with
 * @timeout_ns:	the bound
 * @observed:	optional: the last value read
 *
 * Context: device, any thread. Return: 0; -ETIMEDOUT; -EINVAL (bad comparison,
 * NULL/misaligned word).
 */
DVX_DEV int dvx_p2p_dev_wait_signal(const uint64_t *word, uint32_t cmp, uint64_t expected,
				    uint64_t timeout_ns, uint64_t *observed = nullptr)
{
	struct dvx_p2p_waiter w;
	uint64_t v;
	int h;

	if (!word || ((uintptr_t)word & 7u) || cmp > DVX_CMP_LT)
		return -EINVAL;
	dvx_p2p_dev_waiter(&w, timeout_ns);
	for (;;) {
		v = dvx_p2p_dev_read_signal(word);
		if (observed)
			*observed = v;
		h = dvx_p2p_cmp_holds(cmp, v, expected);
		if (h)
			return h < 0 ? h : 0;
		if (dvx_p2p_waiter_step(&w))
			return -ETIMEDOUT;
	}
}

/**
 * dvx_p2p_dev_wait_counter() - wait until (*@word @cmp @expected) holds while watching
 * the lane (@peer, @channel) that raises it: its queues are polled and its (or its
 * companion's) error is returned instead of waiting on.
 * @d:		the device handle
 * @peer:	the lane's peer
 * @channel:	selects the lane
 * @word:	the counter word's device address
 * @cmp:	DVX_CMP_*
 * @expected:	the value compared with
 * @timeout_ns:	the bound
 * @observed:	optional: the last value read
 *
 * Context: device, any thread. Return: 0; -ETIMEDOUT; the lane's error; -EINVAL;
 * -EAGAIN while the host recovers the lane.
 */
DVX_DEV int dvx_p2p_dev_wait_counter(const struct dvx_p2p_dev &d, int peer, uint32_t channel,
				     const uint64_t *word, uint32_t cmp, uint64_t expected,
				     uint64_t timeout_ns, uint64_t *observed = nullptr)
{
	const struct dvx_p2p_dev_lane *l = dvx_p2p_dev_lane_of(d, peer, channel);
	struct dvx_p2p_waiter w;
	uint64_t v;
	int h, err;

	if (!l || !word || ((uintptr_t)word & 7u) || cmp > DVX_CMP_LT)
		return -EINVAL;
	dvx_p2p_dev_waiter(&w, timeout_ns);
	for (;;) {
		v = dvx_p2p_dev_read_counter(word);
		if (observed)
			*observed = v;
		h = dvx_p2p_cmp_holds(cmp, v, expected);
		if (h)
			return h < 0 ? h : 0;
		err = dvx_p2p_q_err(l->main.st);
		if (!err && l->has_comp)
			err = dvx_p2p_q_err(l->comp.st);
		if (err)
			return err;
		err = dvx_p2p_dev_q_poll(l->main);
		if (err >= 0 && l->has_comp)
			err = dvx_p2p_dev_q_poll(l->comp);
		if (err < 0)
			return err;
		if (dvx_p2p_waiter_step(&w))
			return -ETIMEDOUT;
	}
}

/**
 * dvx_p2p_dev_flush() - wait until every operation published so far on @channel's lanes
 * (to every peer), companions included, has completed.
 * @d:		the device handle
 * @channel:	selects the lanes
 * @timeout_ns:	bound for the whole flush
 *
 * Context: device, any thread. Return: 0; the first lane error; -ETIMEDOUT; on gated
 * lanes also -EAGAIN and the error of WQEs a recovery gave up (dvx_p2p_dev_q_drain()).
 */
DVX_DEV int dvx_p2p_dev_flush(const struct dvx_p2p_dev &d, uint32_t channel, uint64_t timeout_ns)
{
	struct dvx_p2p_waiter w;
	int err;

	dvx_p2p_dev_waiter(&w, timeout_ns);
	for (int p = 0; p < d.nranks; p++) {
		const struct dvx_p2p_dev_lane *l = dvx_p2p_dev_lane_of(d, p, channel);

		if (!l)
			continue;
		err = dvx_p2p_dev_q_drain(l->main, &w);
		if (!err && l->has_comp)
			err = dvx_p2p_dev_q_drain(l->comp, &w);
		if (err)
			return err;
	}
	return 0;
}

/**
 * dvx_p2p_dev_group_reserve() - the leader's reservation for a group call.
 * @l:		the lane
 * @nmain:	main slots: the group's WRITEs and its signal (not 0)
 * @nc:		companion slots (2 with a counter, else 0)
 * @timeout_ns:	bound for each wait for room
 * @t:		set to the first main slot
 * @c:		set to the first companion slot (when @nc)
 *
 * The companion is reserved first, as dvx_p2p_lane_post() does; when the main SQ then
 * has no room the companion slots are given back as published NOPs.
 *
 * Context: device, the group's leader only. Return: 0; -EINVAL (nothing to do, more
 * than a ring); the companion's error; -ETIMEDOUT (nothing reserved).
 */
DVX_DEV int dvx_p2p_dev_group_reserve(const struct dvx_p2p_dev_lane &l, uint32_t nmain,
				      uint32_t nc, uint64_t timeout_ns, uint64_t *t, uint64_t *c)
{
	struct dvx_p2p_waiter w, pw;
	int err;

	if (!nmain)
		return -EINVAL;		/* nothing to do */
	if (nmain > l.main.sq.nwqebb || (nc && nc > l.comp.sq.nwqebb))
		return -EINVAL;
	dvx_p2p_dev_waiter(&w, timeout_ns);
	if (nc && (err = dvx_p2p_q_err(l.comp.st)))
		return err;
	if (nc && (err = dvx_p2p_q_reserve(&l.comp, nc, &w, c)))
		return err;
	err = dvx_p2p_q_reserve(&l.main, nmain, &w, t);
	if (err && nc) {
		dvx_p2p_dev_waiter(&pw, timeout_ns);
		dvx_p2p_q_nop_fill(&l.comp, *c, nc);
		dvx_p2p_q_publish(&l.comp, *c, nc, &pw);
	}
	return err;
}

/**
 * dvx_p2p_dev_group_finish() - the leader's end of a group call, after every member's
 * WRITE stores.
 * @l:		the lane
 * @gop:	the group operation (dvx_p2p_op_make_group())
 * @t:		the first main slot of the reservation
 * @total:	the group's WRITE WQEs; the signal goes at @t + @total, after them all
 * @nmain:	main slots reserved
 * @c:		the first companion slot (with a counter)
 * @timeout_ns:	bound for the publish waits
 *
 * Builds the signal, publishes [@t, @t + @nmain) and rings once, then writes and
 * publishes the companion's WAIT on the last main WQE and the counter fetch-add at @c.
 *
 * Context: device, the group's leader only, after the group's barrier. Return: 0;
 * -ETIMEDOUT (an earlier poster never published: the lane is failed); the builder's
 * error (its slots then hold NOPs, which are published).
 */
DVX_DEV int dvx_p2p_dev_group_finish(const struct dvx_p2p_dev_lane &l,
				     const struct dvx_p2p_op &gop, uint64_t t, uint32_t total,
				     uint32_t nmain, uint64_t c, uint64_t timeout_ns)
{
	struct dvx_p2p_waiter pw;
	int berr = 0, err;

	dvx_p2p_dev_waiter(&pw, timeout_ns);
	if (gop.has_sig || gop.reset)
		berr = dvx_p2p_op_build_main(&l.main.sq.wq, l.sink_lkey, &gop, t + total);
	err = dvx_p2p_q_publish(&l.main, t, nmain, &pw);
	if (gop.has_ctr) {
		int cerr;

		dvx_p2p_op_build_comp(&l.comp.sq.wq, &l.main, l.sink_lkey, &gop, c,
				      t + nmain - 1);
		cerr = dvx_p2p_q_publish(&l.comp, c, 2, &pw);
		err = err ? err : cerr;
	}
	return err ? err : berr;
}

/**
 * struct dvx_p2p_dev_resv - what a group's leader reserved, as the group learns it.
 * @t:		the first main slot
 * @c:		the first companion slot (with a counter)
 * @nmain:	main slots: the group's WRITEs and its signal
 * @err:	the reservation's error
 */
struct dvx_p2p_dev_resv {
	uint64_t t;
	uint64_t c;
	uint32_t nmain;
	int32_t err;
};

/**
 * dvx_p2p_dev_post_op() - the body of every group post: each member's resolved data
 * operation (WRITEs, READs or one-word operations) at its place, then one signal (or
 * the reset of one) and at most one counter increment for the group.
 * @g:		the group that posts together; group-uniform
 * @l:		group-uniform: the lane (dvx_p2p_dev_lane_of(), not NULL)
 * @op:		this member's resolved operation (zeroed: none); its signal fields unused
 * @oerr:	this member's resolve error (0, or -EINVAL or -EPERM: nothing is posted)
 * @n:		the notification (the leader's; NULL: none)
 * @timeout_ns:	bound for each wait (0: DVX_P2P_DEV_TIMEOUT_NS)
 * @tk:		optional: the group's ticket, to every member
 *
 * Context: device; every thread of @g together. Return: as dvx_p2p_dev_post().
 */
DVX_DEV int dvx_p2p_dev_post_op(const struct dvx_dev_grp &g, const struct dvx_p2p_dev_lane *l,
				const struct dvx_p2p_op &op, int oerr, const struct dvx_p2p_notify *n,
				uint64_t timeout_ns, struct dvx_p2p_ticket *tk)
{
	struct dvx_p2p_dev_resv r = { 0, 0, 0, 0 };
	struct dvx_p2p_op gop;
	uint32_t nw = 0, excl, total;
	int gerr = 0, err = 0, berr = 0;

	if (!oerr)
		nw = dvx_p2p_op_nwrites(&op);
	memset(&gop, 0, sizeof(gop));
	if (g.lane == 0)
		gerr = dvx_p2p_op_make_group(l->nic, l->has_comp, n, &gop);
	excl = dvx_dev_grp_scan(g, nw, &total);
	if (dvx_dev_grp_any(g, oerr != 0 || gerr != 0)) {
		gerr = dvx_dev_grp_bcast(g, gerr);
		return oerr ? oerr : (gerr ? gerr : -ECANCELED);
	}
	if (g.lane == 0) {
		r.nmain = total + gop.has_sig + gop.reset;
		/* counted in on the queues it touches until it published (the recovery gate) */
		r.err = dvx_p2p_dev_q_enter(l->main);
		if (!r.err && gop.has_ctr && (r.err = dvx_p2p_dev_q_enter(l->comp)))
			dvx_p2p_dev_q_leave(l->main);
		if (!r.err) {
			r.err = dvx_p2p_dev_group_reserve(*l, r.nmain, gop.has_ctr ? 2 : 0,
							  timeout_ns, &r.t, &r.c);
			if (r.err) {
				if (gop.has_ctr)
					dvx_p2p_dev_q_leave(l->comp);
				dvx_p2p_dev_q_leave(l->main);
			}
		}
	}
	r = dvx_dev_grp_bcast(g, r);
	if (r.err)
		return r.err;
	if (nw)
		berr = dvx_p2p_op_build_main(&l->main.sq.wq, l->sink_lkey, &op, r.t + excl);
	/* every member's WQE stores before the leader's signal, fence and publish; a
	 * member's failed build (its slots hold NOPs) turns the signal into a NOP too: no
	 * signal without its data */
	if (dvx_dev_grp_sync_any(g, berr != 0) && g.lane == 0 && (gop.has_sig || gop.reset)) {
		dvx_mlx5_wqe_nop(&l->main.sq.wq, (uint32_t)(r.t + total), DVX_P2P_CE);
		gop.has_sig = 0;
		gop.reset = 0;
	}
	if (g.lane == 0) {
		err = dvx_p2p_dev_group_finish(*l, gop, r.t, total, r.nmain, r.c, timeout_ns);
		/* gated: the doorbells (MMIO) done before the host can see the count fall
		 * and reset the QP */
		if (l->main.gated)
			asm volatile("fence.sc.sys;" ::: "memory");
		if (gop.has_ctr)
			dvx_p2p_dev_q_leave(l->comp);
		dvx_p2p_dev_q_leave(l->main);
	}
	err = dvx_dev_grp_bcast(g, err);
	if (tk) {
		tk->peer = l->peer;
		tk->lane = l->index;
		tk->idx = r.t + r.nmain - 1;
	}
	return err ? err : berr;
}

/**
 * dvx_p2p_dev_post() - post one operation per group on the lane (@peer, @channel): each
 * member's data, then ONE signal and at most one counter increment for all of it.
 * @g:		the group that posts together (dvx_dev_thread(), dvx_dev_warp(),
 *		dvx_dev_block(), dvx_dev_tile()); group-uniform
 * @d:		group-uniform: the transport's device handle
 * @peer:	group-uniform: the target rank
 * @channel:	group-uniform: selects the lane (modulo the lanes per peer)
 * @x:		this member's own data (struct dvx_p2p_xfer: NULL or a zero length: none;
 *		split at 1 GiB)
 * @n:		the notification (struct dvx_p2p_notify; the leader's is used, NULL:
 *		none): the signal's fetch-add after every WRITE of the group on the same QP
 *		(DVX_P2P_FENCE: fenced), then the local counter raised by one when the
 *		group's last main WQE completed (companion WAIT + loopback fetch-add)
 * @timeout_ns:	bound for each wait (room, publish order)
 * @tk:		optional: every member receives the group's ticket (its last main WQE:
 *		the signal, else the last WRITE), so any may dvx_p2p_dev_wait_local() on it
 *
 * The leader checks the notification and reserves the group's main (and companion)
 * slots, companion first as dvx_p2p_lane_post() does; every member with data builds
 * its WRITE(s) at its place in the reserved range (the group's prefix sum); a group
 * barrier; the leader builds the signal after the last WRITE (a NOP when a member's
 * build failed), publishes and rings once, then builds and publishes the companion's WAIT and fetch-add. The group's WQEs
 * (WRITEs + 1) must fit the lane's ring (else -EINVAL). A put_signal at warp scope
 * therefore raises the signal once per call per warp, not once per thread.
 *
 * Bad input changes nothing: when any member's data or the notification is invalid,
 * nothing is posted, that member gets its -EINVAL (the notification's error goes to
 * all) and the others -ECANCELED; no data and no signal in the whole group is -EINVAL.
 *
 * Context: device; every thread of @g together (block: like __syncthreads(), any
 * block shape; static shared memory of a few words). Return: 0; -EINVAL (a bad peer
 * or operation); -EOPNOTSUPP (a counter without companions); -ECANCELED (see above);
 * -ETIMEDOUT (no room: nothing posted; or an earlier poster never published: the lane
 * is failed); the lane's error; a build error (its slots hold NOPs, published); -EAGAIN
 * on a gated lane while the host recovers it (nothing posted).
 */
DVX_DEV int dvx_p2p_dev_post(const struct dvx_dev_grp &g, const struct dvx_p2p_dev &d, int peer,
			     uint32_t channel, const struct dvx_p2p_xfer *x,
			     const struct dvx_p2p_notify *n, uint64_t timeout_ns,
			     struct dvx_p2p_ticket *tk)
{
	const struct dvx_p2p_dev_lane *l = dvx_p2p_dev_lane_of(d, peer, channel);
	struct dvx_p2p_op op;
	int oerr;

	if (!l)
		return -EINVAL;		/* group-uniform: every member returns */
	memset(&op, 0, sizeof(op));
	oerr = dvx_p2p_op_make_data(l->nic, x, &op);
	return dvx_p2p_dev_post_op(g, l, op, oerr, n, timeout_ns, tk);
}

/**
 * dvx_p2p_dev_shape_ok() - whether a device post has the shape a familiar name
 * promises: at thread scope the parts of (@x, @n) are exactly @want (dvx_p2p_shape());
 * at a group scope, where members' data differ and only the leader's notification
 * counts, nothing is checked here (dvx_p2p_dev_post() checks every part).
 * @g:		the group
 * @x:		the data part, or NULL
 * @n:		the notification part, or NULL
 * @want:	DVX_P2P_HAS_DATA, _SIG and _CTR or-ed
 *
 * Context: device, any thread. Return: true when the post may go ahead.
 */
DVX_DEV bool dvx_p2p_dev_shape_ok(const struct dvx_dev_grp &g, const struct dvx_p2p_xfer *x,
				  const struct dvx_p2p_notify *n, uint32_t want)
{
	return g.scope != DVX_DEV_THREAD || dvx_p2p_shape(x, n) == want;
}

/**
 * dvx_p2p_dev_put(), dvx_p2p_dev_put_signal(), dvx_p2p_dev_signal(),
 * dvx_p2p_dev_put_counter(), dvx_p2p_dev_put_signal_counter(),
 * dvx_p2p_dev_signal_counter() - dvx_p2p_dev_post() of one shape each, as the host's
 * dvx_p2p_put() and its siblings.
 * @g, @d, @peer, @channel, @timeout_ns, @tk: as dvx_p2p_dev_post()
 * @x:		the data part (put*)
 * @n:		the notification part: a signal (*signal*), a counter (*counter)
 *
 * Context: device; every thread of @g together. Return: as dvx_p2p_dev_post();
 * -EINVAL at thread scope when the description has another shape (a put of 0 bytes,
 * a put_signal without a signal or with a counter, ...).
 */
DVX_DEV int dvx_p2p_dev_put(const struct dvx_dev_grp &g, const struct dvx_p2p_dev &d, int peer,
			    uint32_t channel, const struct dvx_p2p_xfer *x, uint64_t timeout_ns,
			    struct dvx_p2p_ticket *tk)
{
	return dvx_p2p_dev_shape_ok(g, x, nullptr, DVX_P2P_HAS_DATA) ?
		dvx_p2p_dev_post(g, d, peer, channel, x, nullptr, timeout_ns, tk) : -EINVAL;
}

DVX_DEV int dvx_p2p_dev_put_signal(const struct dvx_dev_grp &g, const struct dvx_p2p_dev &d,
				   int peer, uint32_t channel, const struct dvx_p2p_xfer *x,
				   const struct dvx_p2p_notify *n, uint64_t timeout_ns,
				   struct dvx_p2p_ticket *tk)
{
	return dvx_p2p_dev_shape_ok(g, x, n, DVX_P2P_HAS_DATA | DVX_P2P_HAS_SIG) ?
		dvx_p2p_dev_post(g, d, peer, channel, x, n, timeout_ns, tk) : -EINVAL;
}

DVX_DEV int dvx_p2p_dev_signal(const struct dvx_dev_grp &g, const struct dvx_p2p_dev &d,
			       int peer, uint32_t channel, const struct dvx_p2p_notify *n,
			       uint64_t timeout_ns, struct dvx_p2p_ticket *tk)
{
	return dvx_p2p_dev_shape_ok(g, nullptr, n, DVX_P2P_HAS_SIG) ?
		dvx_p2p_dev_post(g, d, peer, channel, nullptr, n, timeout_ns, tk) : -EINVAL;
}

DVX_DEV int dvx_p2p_dev_put_counter(const struct dvx_dev_grp &g, const struct dvx_p2p_dev &d,
				    int peer, uint32_t channel, const struct dvx_p2p_xfer *x,
				    const struct dvx_p2p_notify *n, uint64_t timeout_ns,
				    struct dvx_p2p_ticket *tk)
{
	return dvx_p2p_dev_shape_ok(g, x, n, DVX_P2P_HAS_DATA | DVX_P2P_HAS_CTR) ?
		dvx_p2p_dev_post(g, d, peer, channel, x, n, timeout_ns, tk) : -EINVAL;
}

DVX_DEV int dvx_p2p_dev_put_signal_counter(const struct dvx_dev_grp &g,
					   const struct dvx_p2p_dev &d, int peer,
					   uint32_t channel, const struct dvx_p2p_xfer *x,
					   const struct dvx_p2p_notify *n, uint64_t timeout_ns,
					   struct dvx_p2p_ticket *tk)
{
	return dvx_p2p_dev_shape_ok(g, x, n,
				    DVX_P2P_HAS_DATA | DVX_P2P_HAS_SIG | DVX_P2P_HAS_CTR) ?
		dvx_p2p_dev_post(g, d, peer, channel, x, n, timeout_ns, tk) : -EINVAL;
}

DVX_DEV int dvx_p2p_dev_signal_counter(const struct dvx_dev_grp &g, const struct dvx_p2p_dev &d,
				       int peer, uint32_t channel, const struct dvx_p2p_notify *n,
				       uint64_t timeout_ns, struct dvx_p2p_ticket *tk)
{
	return dvx_p2p_dev_shape_ok(g, nullptr, n, DVX_P2P_HAS_SIG | DVX_P2P_HAS_CTR) ?
		dvx_p2p_dev_post(g, d, peer, channel, nullptr, n, timeout_ns, tk) : -EINVAL;
}

/**
 * dvx_p2p_dev_get() - each member of @g reads its own range of the peer's buffer into
 * local (host or GPU) memory: RDMA READs on the lane (@peer, @channel), posted for the
 * group at once (dvx_p2p_dev_post_op()); the bytes are there when the ticket completed
 * (dvx_p2p_dev_wait_local(), dvx_p2p_dev_flush(), dvx_p2p_dev_quiet()).
 * @g:		the group (thread, warp, block, tile)
 * @d:		group-uniform: the device handle
 * @peer:	group-uniform: the rank read from
 * @channel:	group-uniform: selects the lane
 * @x:		this member's get (NULL: none); the peer's buffer registered with remote
 *		read, the transport built with DVX_P2P_F_READ
 * @timeout_ns:	bound for each wait (0: DVX_P2P_DEV_TIMEOUT_NS)
 * @tk:		optional: the group's ticket (its last READ)
 *
 * A peer buffer known to be registered without remote read (struct
 * dvx_p2p_rbuf.access) is refused before posting: that member gets -EPERM, the others
 * -ECANCELED, nothing is posted for the group and no destination is written. One whose
 * rights are unknown fails at the responder: the ticket's wait returns -EPERM (the
 * lane is failed) and the destination is not written.
 *
 * Context: device; every thread of @g together. Return: as dvx_p2p_dev_post(); -EINVAL
 * when no member has a get; -EPERM (see above).
 */
DVX_DEV int dvx_p2p_dev_get(const struct dvx_dev_grp &g, const struct dvx_p2p_dev &d, int peer,
			    uint32_t channel, const struct dvx_p2p_rxfer *x, uint64_t timeout_ns,
			    struct dvx_p2p_ticket *tk)
{
	const struct dvx_p2p_dev_lane *l = dvx_p2p_dev_lane_of(d, peer, channel);
	struct dvx_p2p_op op;
	int oerr;

	if (!l)
		return -EINVAL;
	memset(&op, 0, sizeof(op));
	oerr = dvx_p2p_op_make_get(l->nic, x, &op);
	return dvx_p2p_dev_post_op(g, l, op, oerr, nullptr, timeout_ns, tk);
}

/**
 * dvx_p2p_dev_amo() - each member of @g posts its own one-word operation on the peer
 * (put_value, add, fetch_add, compare_swap: struct dvx_p2p_amo), for the group at once;
 * a fetching one's old value is in its result word (host or GPU memory) when the
 * ticket completed.
 * @g, @d, @peer, @channel, @timeout_ns, @tk: as dvx_p2p_dev_get()
 * @a:		this member's operation (NULL: none)
 *
 * Context: device; every thread of @g together. Return: as dvx_p2p_dev_post(); -EINVAL
 * when no member has an operation.
 */
DVX_DEV int dvx_p2p_dev_amo(const struct dvx_dev_grp &g, const struct dvx_p2p_dev &d, int peer,
			    uint32_t channel, const struct dvx_p2p_amo *a, uint64_t timeout_ns,
			    struct dvx_p2p_ticket *tk)
{
	const struct dvx_p2p_dev_lane *l = dvx_p2p_dev_lane_of(d, peer, channel);
	struct dvx_p2p_op op;
	int oerr;

	if (!l)
		return -EINVAL;
	memset(&op, 0, sizeof(op));
	oerr = dvx_p2p_op_make_amo(l->nic, a, l->sink_lkey, &op);
	return dvx_p2p_dev_post_op(g, l, op, oerr, nullptr, timeout_ns, tk);
}

/**
 * dvx_p2p_dev_amo_of(), dvx_p2p_dev_put_value(), dvx_p2p_dev_add(),
 * dvx_p2p_dev_fetch_add(), dvx_p2p_dev_compare_swap() - dvx_p2p_dev_amo() of one kind
 * each: a member's @a must have op @kind (dvx_p2p_dev_amo_of()), DVX_P2P_AMO_SET,
 * _ADD, _FADD, _CSWAP respectively; every member its own word and values.
 * @g, @d, @peer, @channel, @timeout_ns, @tk: as dvx_p2p_dev_amo()
 * @a:		this member's operation (NULL: none)
 * @kind:	dvx_p2p_dev_amo_of(): the op a member's @a must have
 *
 * Context: device; every thread of @g together. Return: as dvx_p2p_dev_amo(); -EINVAL
 * for an operation of another kind (nothing is posted for the group).
 */
DVX_DEV int dvx_p2p_dev_amo_of(const struct dvx_dev_grp &g, const struct dvx_p2p_dev &d,
			       int peer, uint32_t channel, const struct dvx_p2p_amo *a,
			       uint32_t kind, uint64_t timeout_ns, struct dvx_p2p_ticket *tk)
{
	const struct dvx_p2p_dev_lane *l = dvx_p2p_dev_lane_of(d, peer, channel);
	struct dvx_p2p_op op;
	int oerr;

	if (!l)
		return -EINVAL;
	memset(&op, 0, sizeof(op));
	oerr = a && a->op != kind ? -EINVAL : dvx_p2p_op_make_amo(l->nic, a, l->sink_lkey, &op);
	return dvx_p2p_dev_post_op(g, l, op, oerr, nullptr, timeout_ns, tk);
}

DVX_DEV int dvx_p2p_dev_put_value(const struct dvx_dev_grp &g, const struct dvx_p2p_dev &d,
				  int peer, uint32_t channel, const struct dvx_p2p_amo *a,
				  uint64_t timeout_ns, struct dvx_p2p_ticket *tk)
{
	return dvx_p2p_dev_amo_of(g, d, peer, channel, a, DVX_P2P_AMO_SET, timeout_ns, tk);
}

DVX_DEV int dvx_p2p_dev_add(const struct dvx_dev_grp &g, const struct dvx_p2p_dev &d, int peer,
			    uint32_t channel, const struct dvx_p2p_amo *a, uint64_t timeout_ns,
			    struct dvx_p2p_ticket *tk)
{
	return dvx_p2p_dev_amo_of(g, d, peer, channel, a, DVX_P2P_AMO_ADD, timeout_ns, tk);
}

DVX_DEV int dvx_p2p_dev_fetch_add(const struct dvx_dev_grp &g, const struct dvx_p2p_dev &d,
				  int peer, uint32_t channel, const struct dvx_p2p_amo *a,
				  uint64_t timeout_ns, struct dvx_p2p_ticket *tk)
{
	return dvx_p2p_dev_amo_of(g, d, peer, channel, a, DVX_P2P_AMO_FADD, timeout_ns, tk);
}

DVX_DEV int dvx_p2p_dev_compare_swap(const struct dvx_dev_grp &g, const struct dvx_p2p_dev &d,
				     int peer, uint32_t channel, const struct dvx_p2p_amo *a,
				     uint64_t timeout_ns, struct dvx_p2p_ticket *tk)
{
	return dvx_p2p_dev_amo_of(g, d, peer, channel, a, DVX_P2P_AMO_CSWAP, timeout_ns, tk);
}

/**
 * dvx_p2p_dev_reset_signal() - set the peer's signal word to 0 from the GPU: one fenced
 * RDMA inline WRITE of 8 zero bytes per group on the lane (@peer, @channel), after
 * everything posted earlier on it (signals are only ever changed by the NIC, so the
 * reset is the NIC's too).
 * @g, @d, @peer, @channel, @timeout_ns, @tk: as dvx_p2p_dev_post() (@tk: the reset's WQE)
 * @sig:	group-uniform: the peer's signal buffer
 * @sigoff:	group-uniform: the word's offset (8-byte aligned)
 *
 * The word is 0 at the peer once the ticket completed.
 *
 * Context: device; every thread of @g together. Return: as dvx_p2p_dev_post().
 */
DVX_DEV int dvx_p2p_dev_reset_signal(const struct dvx_dev_grp &g, const struct dvx_p2p_dev &d,
				     int peer, uint32_t channel, const struct dvx_p2p_rbuf *sig,
				     uint64_t sigoff, uint64_t timeout_ns,
				     struct dvx_p2p_ticket *tk)
{
	struct dvx_p2p_notify n = { sig, sigoff, 0, nullptr, 0, DVX_P2P_RESET | DVX_P2P_FENCE };

	if (!sig)
		return -EINVAL;
	return dvx_p2p_dev_post(g, d, peer, channel, nullptr, &n, timeout_ns, tk);
}

/**
 * dvx_p2p_dev_quiet() - wait until everything published so far on every lane of the
 * handle (every channel, every peer, companions included) has completed: the
 * group's leader drains them all, the group learns the result.
 * @g:		the group (thread: the calling thread drains)
 * @d:		group-uniform: the device handle
 * @timeout_ns:	bound for the whole quiet (0: DVX_P2P_DEV_TIMEOUT_NS)
 *
 * Gets' bytes and fetching operations' old values are in place after it.
 *
 * Context: device; every thread of @g together. Return: 0; the first lane error;
 * -ETIMEDOUT; on gated lanes also -EAGAIN and the error of WQEs a recovery gave up
 * (dvx_p2p_dev_q_drain()).
 */
DVX_DEV int dvx_p2p_dev_quiet(const struct dvx_dev_grp &g, const struct dvx_p2p_dev &d,
			      uint64_t timeout_ns)
{
	struct dvx_p2p_waiter w;
	int err = 0;

	if (g.lane == 0) {
		dvx_p2p_dev_waiter(&w, timeout_ns);
		for (int p = 0; p < d.nranks && !err; p++) {
			for (uint32_t c = 0; c < d.nlanes && !err; c++) {
				const struct dvx_p2p_dev_lane *l = dvx_p2p_dev_lane_of(d, p, c);

				if (!l)
					break;
				err = dvx_p2p_dev_q_drain(l->main, &w);
				if (!err && l->has_comp)
					err = dvx_p2p_dev_q_drain(l->comp, &w);
			}
		}
	}
	return dvx_dev_grp_bcast(g, err);
}

#endif /* DVX_P2P_DEV_CUH */
