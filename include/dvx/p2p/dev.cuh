/* SPDX-License-Identifier: MIT */
/*
 * dvx/p2p/dev.cuh - the P2P transport's operations posted by GPU threads (CUDA C++,
 * nvcc; header-only). Kernels take the struct dvx_p2p_dev of dvx_p2p_gpu_export() by
 * value and post on its lanes with the very code the host engine runs: the operations'
 * checks and WQEs (dvx/p2p/ops.h), the lane queues' reserve, publish, ring and consume
 * steps (dvx/p2p/queue.h), the SQ and CQ protocol under them (dvx/mlx5/sq.h, cqe.h).
 * What this file adds is what only GPU code has: waits on %globaltimer, and the warp
 * and block scopes.
 *
 * Every WQE is one WQEBB and requests a CQE (CQ index == WQE index), as on the host.
 * Completions are consumed by whichever GPU thread needs room or waits (a try-lock per
 * queue); an error CQE is recorded in the queue's state (first error kept), freezes its
 * watermark, and every later post or wait on the lane returns that errno. Timeouts are
 * nanoseconds of %globaltimer and return -ETIMEDOUT, never success. The channel is
 * always an explicit argument (lane = channel mod lanes per peer).
 *
 * Scopes: the calls below are thread scope (each calling thread posts its own
 * operation: one signal and one counter increment per thread). The group scopes follow
 * one rule, one signal per call per calling group after all of that group's data:
 * dvx_p2p_dev_post_warp() (warp scope: lane 0 reserves for the warp on one lane, every
 * lane builds its own WRITEs, lane 0 adds ONE signal and at most one counter
 * increment, publishes and rings once) and dvx_p2p_dev_post_block() (block scope: the
 * same with thread 0 and the whole block).
 */
#ifndef DVX_P2P_DEV_CUH
#define DVX_P2P_DEV_CUH

#include <dvx/gpu/post.cuh>
#include <dvx/p2p/dev.h>

/**
 * dvx_p2p_dev_waiter() - a %globaltimer waiter of @timeout_ns.
 * @w:		filled
 * @timeout_ns:	the bound
 *
 * Context: device, any thread. Return: nothing.
 */
DVX_DEV void dvx_p2p_dev_waiter(struct dvx_p2p_waiter *w, uint64_t timeout_ns)
{
	dvx_p2p_waiter_init(w, timeout_ns, nullptr, nullptr, nullptr);
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

/**
 * dvx_p2p_dev_q_poll() - consume the CQEs of published WQEs, if no other thread is
 * (dvx_p2p_q_consume()).
 * @q:		the queue
 *
 * Context: device, any thread. Return: CQEs consumed (0 when none, or another thread
 * polls).
 */
DVX_DEV int dvx_p2p_dev_q_poll(const struct dvx_p2p_qdesc &q)
{
	return dvx_p2p_q_consume(&q);
}

/**
 * dvx_p2p_dev_q_wait() - wait until WQE @idx of the queue completed.
 * @q:		the queue
 * @idx:	a ticket of this queue
 * @timeout_ns:	the bound
 *
 * Context: device, any thread. Return: 0; the error CQE's errno if it or an earlier WQE
 * failed; -ETIMEDOUT; -EINVAL for an index never handed out.
 */
DVX_DEV int dvx_p2p_dev_q_wait(const struct dvx_p2p_qdesc &q, uint64_t idx, uint64_t timeout_ns)
{
	struct dvx_p2p_qstate *st = q.st;
	struct dvx_p2p_waiter w;
	int err;

	if (idx >= dvx_ld_relaxed_u64(&st->ctrs.resv))
		return -EINVAL;
	dvx_p2p_dev_waiter(&w, timeout_ns);
	for (;;) {
		if (dvx_ld_acquire_u64(&st->completed, DVX_SCOPE_GPU) > idx)
			return 0;
		err = dvx_p2p_q_err(st);
		if (err)
			return err;
		if (dvx_p2p_q_consume(&q))
			continue;
		if (dvx_p2p_waiter_step(&w))
			return dvx_ld_acquire_u64(&st->completed, DVX_SCOPE_GPU) > idx ? 0 : -ETIMEDOUT;
	}
}

/**
 * dvx_p2p_dev_q_drain() - wait until everything published on @q so far has completed.
 * @q:		the lane queue (its CQ is polled while waiting)
 * @w:		the wait (shared by a flush's queues)
 *
 * Context: device, any thread. Return: 0; the queue's error; -ETIMEDOUT.
 */
DVX_DEV int dvx_p2p_dev_q_drain(const struct dvx_p2p_qdesc &q, struct dvx_p2p_waiter *w)
{
	struct dvx_p2p_qstate *st = q.st;
	uint64_t end = dvx_ld_acquire_u64(&st->ctrs.ready, DVX_SCOPE_GPU);
	int err;

	for (;;) {
		if (dvx_ld_acquire_u64(&st->completed, DVX_SCOPE_GPU) >= end)
			return 0;
		err = dvx_p2p_q_err(st);
		if (err)
			return err;
		if (dvx_p2p_q_consume(&q))
			continue;
		if (dvx_p2p_waiter_step(w))
			return -ETIMEDOUT;
	}
}

/**
 * dvx_p2p_dev_post() - the common front of the thread-scope calls: find the lane
 * (@peer, @channel), resolve the operation (dvx_p2p_op_make()) and post it
 * (dvx_p2p_lane_post()).
 * @d:		the device handle of the transport
 * @peer:	the target rank
 * @channel:	selects the lane (modulo the lanes per peer)
 * @src:	local source buffer, or NULL (no data)
 * @soff:	offset into @src
 * @dst:	remote destination buffer, or NULL (no data)
 * @doff:	offset into @dst
 * @len:	data bytes (0: none)
 * @sig:	the peer's signal buffer, or NULL
 * @sigoff:	offset of the signal word
 * @add:	the signal's addend
 * @flags:	DVX_P2P_FENCE or 0
 * @ctr:	the local counter buffer, or NULL
 * @ctroff:	offset of the counter word
 * @timeout_ns:	bound for each wait (room, publish order)
 * @tk:		optional: receives the ticket (lane, last main WQE)
 *
 * Context: device, any thread. Return: 0; -EINVAL (a bad peer or operation);
 * -EOPNOTSUPP (a counter without companions); -ETIMEDOUT (no room: nothing posted; or
 * an earlier poster never published: the lane is failed); the lane's error.
 */
DVX_DEV int dvx_p2p_dev_post(const struct dvx_p2p_dev &d, int peer, uint32_t channel,
			     const struct dvx_p2p_lbuf *src, uint64_t soff,
			     const struct dvx_p2p_rbuf *dst, uint64_t doff, uint64_t len,
			     const struct dvx_p2p_rbuf *sig, uint64_t sigoff, uint64_t add,
			     uint32_t flags, const struct dvx_p2p_lbuf *ctr, uint64_t ctroff,
			     uint64_t timeout_ns, struct dvx_p2p_ticket *tk)
{
	const struct dvx_p2p_dev_lane *l = dvx_p2p_dev_lane_of(d, peer, channel);
	struct dvx_p2p_waiter w, pw;
	struct dvx_p2p_op op;
	uint64_t last;
	int err;

	if (!l)
		return -EINVAL;
	err = dvx_p2p_op_make(l->nic, l->has_comp, src, soff, dst, doff, len, sig, sigoff, add,
			      flags, ctr, ctroff, 0, &op);
	if (err)
		return err;
	dvx_p2p_dev_waiter(&w, timeout_ns);
	dvx_p2p_dev_waiter(&pw, timeout_ns);
	err = dvx_p2p_lane_post(&l->main, &l->comp, l->sink_lkey, &op, &w, &pw, &last);
	if (err)
		return err;
	if (tk) {
		tk->peer = l->peer;
		tk->lane = l->index;
		tk->idx = last;
	}
	return 0;
}

/**
 * dvx_p2p_dev_put() - RDMA WRITE @len bytes (split at 1 GiB); as dvx_p2p_put().
 * @d, @peer, @channel, @src, @soff, @dst, @doff, @len, @timeout_ns, @tk: as
 *		dvx_p2p_dev_post()
 *
 * Context: device, any thread. Return: as dvx_p2p_dev_post(); -EINVAL for @len 0.
 */
DVX_DEV int dvx_p2p_dev_put(const struct dvx_p2p_dev &d, int peer, uint32_t channel,
			    const struct dvx_p2p_lbuf *src, uint64_t soff,
			    const struct dvx_p2p_rbuf *dst, uint64_t doff, uint64_t len,
			    uint64_t timeout_ns, struct dvx_p2p_ticket *tk)
{
	if (!len)
		return -EINVAL;
	return dvx_p2p_dev_post(d, peer, channel, src, soff, dst, doff, len, nullptr, 0, 0, 0,
				nullptr, 0, timeout_ns, tk);
}

/**
 * dvx_p2p_dev_put_signal() - put, then fetch-add @add on the peer's signal.
 * @d, @peer, @channel, @src, @soff, @dst, @doff, @len, @sig, @sigoff, @add, @flags,
 * @timeout_ns, @tk: as dvx_p2p_dev_post()
 *
 * Context: device, any thread. Return: as dvx_p2p_dev_post().
 */
DVX_DEV int dvx_p2p_dev_put_signal(const struct dvx_p2p_dev &d, int peer, uint32_t channel,
				   const struct dvx_p2p_lbuf *src, uint64_t soff,
				   const struct dvx_p2p_rbuf *dst, uint64_t doff, uint64_t len,
				   const struct dvx_p2p_rbuf *sig, uint64_t sigoff, uint64_t add,
				   uint32_t flags, uint64_t timeout_ns, struct dvx_p2p_ticket *tk)
{
	if (!len || !sig)
		return -EINVAL;
	return dvx_p2p_dev_post(d, peer, channel, src, soff, dst, doff, len, sig, sigoff, add,
				flags, nullptr, 0, timeout_ns, tk);
}

/**
 * dvx_p2p_dev_signal() - fetch-add @add on the peer's signal (DVX_P2P_FENCE: fenced).
 * @d, @peer, @channel, @sig, @sigoff, @add, @flags, @timeout_ns, @tk: as
 *		dvx_p2p_dev_post()
 *
 * Context: device, any thread. Return: as dvx_p2p_dev_post().
 */
DVX_DEV int dvx_p2p_dev_signal(const struct dvx_p2p_dev &d, int peer, uint32_t channel,
			       const struct dvx_p2p_rbuf *sig, uint64_t sigoff, uint64_t add,
			       uint32_t flags, uint64_t timeout_ns, struct dvx_p2p_ticket *tk)
{
	if (!sig)
		return -EINVAL;
	return dvx_p2p_dev_post(d, peer, channel, nullptr, 0, nullptr, 0, 0, sig, sigoff, add,
				flags, nullptr, 0, timeout_ns, tk);
}

/**
 * dvx_p2p_dev_put_counter() - put, then +1 on the local counter once acknowledged.
 * @d, @peer, @channel, @src, @soff, @dst, @doff, @len, @ctr, @ctroff, @timeout_ns, @tk:
 *		as dvx_p2p_dev_post()
 *
 * Context: device, any thread. Return: as dvx_p2p_dev_post().
 */
DVX_DEV int dvx_p2p_dev_put_counter(const struct dvx_p2p_dev &d, int peer, uint32_t channel,
				    const struct dvx_p2p_lbuf *src, uint64_t soff,
				    const struct dvx_p2p_rbuf *dst, uint64_t doff, uint64_t len,
				    const struct dvx_p2p_lbuf *ctr, uint64_t ctroff,
				    uint64_t timeout_ns, struct dvx_p2p_ticket *tk)
{
	if (!len || !ctr)
		return -EINVAL;
	return dvx_p2p_dev_post(d, peer, channel, src, soff, dst, doff, len, nullptr, 0, 0, 0,
				ctr, ctroff, timeout_ns, tk);
}

/**
 * dvx_p2p_dev_put_signal_counter() - put_signal, then the counter.
 * @d, @peer, @channel, @src, @soff, @dst, @doff, @len, @sig, @sigoff, @add, @flags,
 * @ctr, @ctroff, @timeout_ns, @tk: as dvx_p2p_dev_post()
 *
 * Context: device, any thread. Return: as dvx_p2p_dev_post().
 */
DVX_DEV int dvx_p2p_dev_put_signal_counter(const struct dvx_p2p_dev &d, int peer,
					   uint32_t channel, const struct dvx_p2p_lbuf *src,
					   uint64_t soff, const struct dvx_p2p_rbuf *dst,
					   uint64_t doff, uint64_t len,
					   const struct dvx_p2p_rbuf *sig, uint64_t sigoff,
					   uint64_t add, uint32_t flags,
					   const struct dvx_p2p_lbuf *ctr, uint64_t ctroff,
					   uint64_t timeout_ns, struct dvx_p2p_ticket *tk)
{
	if (!len || !sig || !ctr)
		return -EINVAL;
	return dvx_p2p_dev_post(d, peer, channel, src, soff, dst, doff, len, sig, sigoff, add,
				flags, ctr, ctroff, timeout_ns, tk);
}

/**
 * dvx_p2p_dev_signal_counter() - signal, then the counter once it completed.
 * @d, @peer, @channel, @sig, @sigoff, @add, @flags, @ctr, @ctroff, @timeout_ns, @tk:
 *		as dvx_p2p_dev_post()
 *
 * Context: device, any thread. Return: as dvx_p2p_dev_post().
 */
DVX_DEV int dvx_p2p_dev_signal_counter(const struct dvx_p2p_dev &d, int peer, uint32_t channel,
				       const struct dvx_p2p_rbuf *sig, uint64_t sigoff,
				       uint64_t add, uint32_t flags,
				       const struct dvx_p2p_lbuf *ctr, uint64_t ctroff,
				       uint64_t timeout_ns, struct dvx_p2p_ticket *tk)
{
	if (!sig || !ctr)
		return -EINVAL;
	return dvx_p2p_dev_post(d, peer, channel, nullptr, 0, nullptr, 0, 0, sig, sigoff, add,
				flags, ctr, ctroff, timeout_ns, tk);
}

/**
 * dvx_p2p_dev_wait_local() - wait for the post behind @tk to complete locally.
 * @d:		the device handle
 * @tk:		a ticket from a post
 * @timeout_ns:	the bound
 *
 * Context: device, any thread. Return: 0; the lane's error CQE errno; -ETIMEDOUT (wait
 * again if you like); -EINVAL.
 */
DVX_DEV int dvx_p2p_dev_wait_local(const struct dvx_p2p_dev &d, const struct dvx_p2p_ticket &tk,
				   uint64_t timeout_ns)
{
	const struct dvx_p2p_dev_lane *l = tk.lane < d.nlanes ?
		dvx_p2p_dev_lane_of(d, (int)tk.peer, tk.lane) : nullptr;

	return l ? dvx_p2p_dev_q_wait(l->main, tk.idx, timeout_ns) : -EINVAL;
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
 * Context: device, any thread. Return: 0; -ETIMEDOUT; the lane's error; -EINVAL.
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
		dvx_p2p_q_consume(&l->main);
		if (l->has_comp)
			dvx_p2p_q_consume(&l->comp);
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
 * Context: device, any thread. Return: 0; the first lane error; -ETIMEDOUT.
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
	if (gop.has_sig)
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
 * dvx_p2p_dev_post_warp() - warp scope: the warp posts its lanes' data and ONE signal
 * (and at most one counter increment) for all of it, on the one lane (@peer, @channel).
 * @d:		warp-uniform: the device handle
 * @peer:	warp-uniform: the peer
 * @channel:	warp-uniform: selects the lane
 * @src, @soff, @dst, @doff, @len: this GPU lane's own data (len 0 and NULL buffers:
 *		none; split at 1 GiB)
 * @sig, @sigoff, @add, @flags: warp-uniform (GPU lane 0's are used): the signal
 *		fetch-add, posted after every WRITE of the warp on the same QP (NULL: none;
 *		DVX_P2P_FENCE: fenced)
 * @ctr, @ctroff: warp-uniform (lane 0's): the local counter raised by one when the
 *		warp's last main WQE completed (companion WAIT + loopback fetch-add; NULL:
 *		none)
 * @timeout_ns:	bound for each wait (room, publish order)
 * @tk:		every GPU lane receives the warp's ticket (its last main WQE: the signal,
 *		else the last WRITE)
 *
 * Lane 0 checks the group part and reserves the warp's main (and companion) slots,
 * every lane with data builds its WRITE(s) at its place (a warp prefix sum), lane 0
 * builds the signal after the last WRITE, __syncwarp(), lane 0 publishes and rings
 * once, then posts the companion's WAIT and fetch-add. A put_signal at warp scope
 * therefore raises the signal once per call per warp (not once per GPU lane); for one
 * signal per thread, use the thread-scope calls. The warp's WQEs (WRITEs + 1) must fit
 * the lane's ring (else -EINVAL).
 *
 * Bad input changes nothing: when any lane's data or the group part is invalid, nothing
 * is posted, that lane gets its -EINVAL and the others -ECANCELED; no data and no signal
 * in the whole warp is -EINVAL.
 * Context: all 32 lanes of the warp, converged (full mask). Return: 0; -ETIMEDOUT (no
 * room: nothing posted; or publish order: the lane is failed); the lane's error;
 * -EINVAL; -EOPNOTSUPP (a counter without companions); -ECANCELED (see above); a build
 * error (its slots hold NOPs, published).
 */
DVX_DEV int dvx_p2p_dev_post_warp(const struct dvx_p2p_dev &d, int peer, uint32_t channel,
				  const struct dvx_p2p_lbuf *src, uint64_t soff,
				  const struct dvx_p2p_rbuf *dst, uint64_t doff, uint64_t len,
				  const struct dvx_p2p_rbuf *sig, uint64_t sigoff, uint64_t add,
				  uint32_t flags, const struct dvx_p2p_lbuf *ctr, uint64_t ctroff,
				  uint64_t timeout_ns, struct dvx_p2p_ticket *tk)
{
	const struct dvx_p2p_dev_lane *l = dvx_p2p_dev_lane_of(d, peer, channel);
	struct dvx_p2p_op op, gop;
	uint32_t lane = dvx_dev_lane(), n = 0, incl, total, nmain = 0, nc = 0;
	uint64_t t = 0, c = 0;
	int oerr = 0, gerr = 0, err = 0, berr = 0;

	if (!l)
		return -EINVAL;		/* warp-uniform: every lane returns */
	memset(&op, 0, sizeof(op));
	oerr = dvx_p2p_op_make_data(l->nic, src, soff, dst, doff, len, &op);
	if (!oerr)
		n = dvx_p2p_op_nwrites(&op);
	memset(&gop, 0, sizeof(gop));
	if (lane == 0)
		gerr = dvx_p2p_op_make_group(l->nic, l->has_comp, sig, sigoff, add, flags, ctr,
					     ctroff, 0, &gop);
	incl = dvx_dev_warp_scan(DVX_DEV_FULL_MASK, lane, n);
	total = __shfl_sync(DVX_DEV_FULL_MASK, incl, 31);
	gerr = __shfl_sync(DVX_DEV_FULL_MASK, gerr, 0);
	if (__any_sync(DVX_DEV_FULL_MASK, oerr != 0) || gerr)
		return oerr ? oerr : (gerr ? gerr : -ECANCELED);
	if (lane == 0) {
		nmain = total + gop.has_sig;
		nc = gop.has_ctr ? 2 : 0;
		err = dvx_p2p_dev_group_reserve(*l, nmain, nc, timeout_ns, &t, &c);
	}
	err = __shfl_sync(DVX_DEV_FULL_MASK, err, 0);
	if (err)
		return err;
	t = __shfl_sync(DVX_DEV_FULL_MASK, t, 0);
	nmain = __shfl_sync(DVX_DEV_FULL_MASK, nmain, 0);
	if (n)
		berr = dvx_p2p_op_build_main(&l->main.sq.wq, l->sink_lkey, &op, t + (incl - n));
	/* every lane's WQE stores before lane 0's signal, fence and publish */
	__syncwarp();
	if (lane == 0)
		err = dvx_p2p_dev_group_finish(*l, gop, t, total, nmain, c, timeout_ns);
	err = __shfl_sync(DVX_DEV_FULL_MASK, err, 0);
	if (tk) {
		tk->peer = l->peer;
		tk->lane = l->index;
		tk->idx = t + nmain - 1;
	}
	return err ? err : berr;
}

/**
 * dvx_p2p_dev_put_signal_warp() - warp scope: each lane's put, one signal after.
 * @d, @peer, @channel, @src, @soff, @dst, @doff, @len, @sig, @sigoff, @add, @flags,
 * @timeout_ns, @tk: as dvx_p2p_dev_post_warp()
 *
 * Context: all 32 lanes of the warp, converged. Return: as dvx_p2p_dev_post_warp().
 */
DVX_DEV int dvx_p2p_dev_put_signal_warp(const struct dvx_p2p_dev &d, int peer, uint32_t channel,
					const struct dvx_p2p_lbuf *src, uint64_t soff,
					const struct dvx_p2p_rbuf *dst, uint64_t doff,
					uint64_t len, const struct dvx_p2p_rbuf *sig,
					uint64_t sigoff, uint64_t add, uint32_t flags,
					uint64_t timeout_ns, struct dvx_p2p_ticket *tk)
{
	return dvx_p2p_dev_post_warp(d, peer, channel, src, soff, dst, doff, len, sig, sigoff,
				     add, flags, nullptr, 0, timeout_ns, tk);
}

/**
 * dvx_p2p_dev_post_block() - block scope: the block posts its threads' data and ONE
 * signal (and counter) for all of it, on the one lane (@peer, @channel).
 * @d:		block-uniform: the device handle
 * @peer:	block-uniform: the peer
 * @channel:	block-uniform: selects the lane
 * @src, @soff, @dst, @doff, @len: this thread's own data (len 0: none; split at 1 GiB)
 * @sig, @sigoff, @add, @flags: block-uniform: the signal fetch-add, posted after every
 *		WRITE of the block on the same QP (NULL: none; DVX_P2P_FENCE: fenced)
 * @ctr, @ctroff: block-uniform: the local counter raised once, when the block's last
 *		main WQE completed (companion WAIT + loopback fetch-add; NULL: none)
 * @timeout_ns:	bound for each wait (room, publish order)
 * @tk:		every thread receives the block's ticket (its last main WQE: the signal,
 *		else the last WRITE), so any thread may dvx_p2p_dev_wait_local() on it
 *
 * Thread 0 checks the group part and reserves the block's main (and companion) slots
 * (companion first, as dvx_p2p_lane_post()); every thread with data builds its
 * WRITE(s) at its place in the reserved range (a block prefix sum); thread 0 builds
 * the signal after the last WRITE; a block barrier; thread 0 publishes and rings once,
 * then builds and publishes the companion's WAIT and fetch-add. The block's WQEs
 * (WRITEs + 1) must fit the lane's ring (else -EINVAL).
 *
 * Bad input changes nothing: when any thread's data or the group part is invalid,
 * nothing is posted, that thread gets its -EINVAL and the others -ECANCELED.
 * Context: every thread of the block, like __syncthreads() (any block shape). Uses
 * static shared memory (a few hundred bytes). Return: 0; -ETIMEDOUT (no room: nothing
 * posted; or publish order: the lane is failed); the lane's error; -EINVAL;
 * -EOPNOTSUPP (a counter without companions); -ECANCELED (see above); a build error
 * (its slots hold NOPs, published).
 */
DVX_DEV int dvx_p2p_dev_post_block(const struct dvx_p2p_dev &d, int peer, uint32_t channel,
				   const struct dvx_p2p_lbuf *src, uint64_t soff,
				   const struct dvx_p2p_rbuf *dst, uint64_t doff, uint64_t len,
				   const struct dvx_p2p_rbuf *sig, uint64_t sigoff, uint64_t add,
				   uint32_t flags, const struct dvx_p2p_lbuf *ctr, uint64_t ctroff,
				   uint64_t timeout_ns, struct dvx_p2p_ticket *tk)
{
	__shared__ uint64_t s_t, s_c;
	__shared__ int s_err;
	__shared__ uint32_t s_nmain;
	const struct dvx_p2p_dev_lane *l = dvx_p2p_dev_lane_of(d, peer, channel);
	struct dvx_p2p_op op, gop;
	uint32_t tid = dvx_dev_block_tid(), n = 0, total, excl, nmain;
	int oerr = 0, gerr = 0, err, berr = 0;

	if (!l)
		return -EINVAL;		/* block-uniform: every thread returns */
	memset(&op, 0, sizeof(op));
	oerr = dvx_p2p_op_make_data(l->nic, src, soff, dst, doff, len, &op);
	if (!oerr)
		n = dvx_p2p_op_nwrites(&op);
	memset(&gop, 0, sizeof(gop));
	if (tid == 0)
		s_err = dvx_p2p_op_make_group(l->nic, l->has_comp, sig, sigoff, add, flags, ctr,
					      ctroff, 0, &gop);
	excl = dvx_dev_block_scan(n, &total);	/* its barriers publish s_err */
	gerr = s_err;
	if (__syncthreads_or(oerr != 0) || gerr)
		return oerr ? oerr : (gerr ? gerr : -ECANCELED);
	if (tid == 0) {
		nmain = total + gop.has_sig;
		s_err = dvx_p2p_dev_group_reserve(*l, nmain, gop.has_ctr ? 2 : 0, timeout_ns,
						  &s_t, &s_c);
		s_nmain = nmain;
	}
	__syncthreads();
	err = s_err;
	if (err)
		return err;
	if (n)
		berr = dvx_p2p_op_build_main(&l->main.sq.wq, l->sink_lkey, &op, s_t + excl);
	/* every thread's WQE stores before thread 0's signal, fence and publish */
	__syncthreads();
	if (tid == 0)
		s_err = dvx_p2p_dev_group_finish(*l, gop, s_t, total, s_nmain, s_c, timeout_ns);
	__syncthreads();
	err = s_err;
	if (tk) {
		tk->peer = l->peer;
		tk->lane = l->index;
		tk->idx = s_t + s_nmain - 1;
	}
	__syncthreads();	/* every read of the shared state before a next call */
	return err ? err : berr;
}

/**
 * dvx_p2p_dev_put_signal_block() - block scope: each thread's put, one signal after.
 * @d, @peer, @channel, @src, @soff, @dst, @doff, @len, @sig, @sigoff, @add, @flags,
 * @timeout_ns, @tk: as dvx_p2p_dev_post_block()
 *
 * Context: every thread of the block. Return: as dvx_p2p_dev_post_block().
 */
DVX_DEV int dvx_p2p_dev_put_signal_block(const struct dvx_p2p_dev &d, int peer, uint32_t channel,
					 const struct dvx_p2p_lbuf *src, uint64_t soff,
					 const struct dvx_p2p_rbuf *dst, uint64_t doff,
					 uint64_t len, const struct dvx_p2p_rbuf *sig,
					 uint64_t sigoff, uint64_t add, uint32_t flags,
					 uint64_t timeout_ns, struct dvx_p2p_ticket *tk)
{
	return dvx_p2p_dev_post_block(d, peer, channel, src, soff, dst, doff, len, sig, sigoff,
				      add, flags, nullptr, 0, timeout_ns, tk);
}

#endif /* DVX_P2P_DEV_CUH */
