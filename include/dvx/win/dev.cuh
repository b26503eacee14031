/* SPDX-License-Identifier: MIT */
/*
 * dvx/win/dev.cuh - the window in kernels: struct dvx_win_dev (dvx/win/layout.h),
 * passed by value, at thread, warp and block scope. Header-only CUDA.
 *
 * A group is the one scope argument of every device call (struct dvx_dev_grp,
 * dvx/gpu/grp.cuh): a thread (dvx_dev_thread()), a warp (dvx_dev_warp()), a block
 * (dvx_dev_block()) or a caller-sized tile of a warp (dvx_dev_tile()); every thread of
 * a group calls a group operation with the same arguments, and every thread gets the
 * same return value. Operations dispatch on the
 * peer's transport with one meaning on both: NVL peers through the mapping (copies by
 * the whole group, signals as system-scope releases), IB peers through the P2P lanes
 * (the group's leader posts). One signal per call per group, after all of the group's
 * data, on both transports.
 *
 * Return values: 0; -EPROTO (a window of another layout version or size: rebuild the
 * kernel against the library's headers); -EINVAL (bad peer, id, offset, self); -ENOTSUP
 * (SET on an IB peer; send/recv on a window without slots); -ETIMEDOUT (a wait; the
 * wait leaves the words alone, waiting again is safe); -EMSGSIZE (a receive of another
 * size than the send: nothing consumed); -EPROTO also for a slot whose header is not the
 * chunk due; an IB lane's error. Never a trap, never a print. A send or recv that
 * fails part-way (a timeout after some chunks, a lane error) leaves that pair's stream
 * out of step: the pair needs a new window. A barrier whose arrivals fail part-way
 * leaves the peers it reached one arrival ahead: the window is unusable for that id.
 * The read functions answer 0 for a bad peer or id (check them beforehand).
 *
 * State that outlives launches (in the window's device region): each barrier's
 * expectation, each peer's send and receive cursor. A barrier id is used by one group
 * at a time; a peer's send (receive) by one group at a time.
 */
#ifndef DVX_WIN_DEV_CUH
#define DVX_WIN_DEV_CUH

#include <dvx/win/layout.h>
#include <dvx/nvl/ops.h>
#include <dvx/nvl/dev.cuh>
#include <dvx/p2p/dev.cuh>

/** dvx_win_dev_check() - 0 when @d is of these headers' layout, else -EPROTO. */
DVX_DEV int dvx_win_dev_check(const struct dvx_win_dev &d)
{
	return d.version == DVX_WIN_DEV_VERSION && d.size == sizeof(struct dvx_win_dev) ? 0
											: -EPROTO;
}

/* ---- metadata (O(1)) ---- */

/**
 * dvx_win_rank(), dvx_win_n_ranks(), dvx_win_num_peers(), dvx_win_num_nvl_peers(),
 * dvx_win_num_ib_peers() - this rank, the group size, its peers, NVL and IB peers.
 * Context: device. Return: the number.
 */
DVX_DEV int dvx_win_rank(const struct dvx_win_dev &d) { return d.rank; }
DVX_DEV int dvx_win_n_ranks(const struct dvx_win_dev &d) { return d.nranks; }
DVX_DEV int dvx_win_num_peers(const struct dvx_win_dev &d) { return d.nranks - 1; }
DVX_DEV int dvx_win_num_nvl_peers(const struct dvx_win_dev &d) { return d.nnvl_peers; }
DVX_DEV int dvx_win_num_ib_peers(const struct dvx_win_dev &d) { return d.nib; }

/**
 * dvx_win_peer() - rank @r's entry, or NULL (out of range, self, another layout).
 * Context: device. Return: the entry or NULL.
 */
DVX_DEV const struct dvx_win_dev_peer *dvx_win_peer(const struct dvx_win_dev &d, int r)
{
	if (dvx_win_dev_check(d) || r < 0 || r >= d.nranks || r == d.rank)
		return nullptr;
	return (const struct dvx_win_dev_peer *)d.peers + r;
}

/** dvx_win_kind() - how rank @r is reached (enum dvx_mp_kind), DVX_MP_NONE if out of range. */
DVX_DEV uint32_t dvx_win_kind(const struct dvx_win_dev &d, int r)
{
	if (r == d.rank)
		return DVX_MP_SELF;
	const struct dvx_win_dev_peer *e = dvx_win_peer(d, r);

	return e ? e->kind : (uint32_t)DVX_MP_NONE;
}

/** dvx_win_dev_nvlink_address() - rank @r's window buffer at @off through NVLink, or 0. */
DVX_DEV uint64_t dvx_win_dev_nvlink_address(const struct dvx_win_dev &d, int r, uint64_t off)
{
	const struct dvx_win_dev_peer *e = dvx_win_peer(d, r);

	if (!e || e->kind != DVX_MP_NVL || !e->nvl_data || off >= e->data_len)
		return 0;
	return e->nvl_data + off;
}

/* ---- this rank's words ---- */

/**
 * dvx_win_my_sig(), dvx_win_my_ctr() - this rank's word of signal (counter) @id in @e's row.
 * Context: device. Return: its address.
 */

DVX_DEV uint64_t *dvx_win_my_sig(const struct dvx_win_dev &d, const struct dvx_win_dev_peer *e,
				 uint32_t id)
{
	return e->kind == DVX_MP_NVL ?
		(uint64_t *)(d.nvl_base + dvx_win_nvl_sig_off(&d.geom, (uint32_t)e->row, id)) :
		(uint64_t *)(d.ib_base + dvx_win_ib_sig_off(&d.geom, (uint32_t)e->row, id));
}

DVX_DEV uint64_t *dvx_win_my_ctr(const struct dvx_win_dev &d, const struct dvx_win_dev_peer *e,
				 uint32_t id)
{
	return e->kind == DVX_MP_NVL ?
		(uint64_t *)(d.nvl_base + dvx_win_nvl_ctr_off(&d.geom, (uint32_t)e->row, id)) :
		(uint64_t *)(d.ib_base + dvx_win_ib_ctr_off(&d.geom, (uint32_t)e->row, id));
}

/**
 * dvx_win_ib_lbuf() - this rank's IB region as a local buffer (the send slots' source,
 * the counters' target).
 * Context: device. Return: the buffer.
 */
DVX_DEV struct dvx_p2p_lbuf dvx_win_ib_lbuf(const struct dvx_win_dev &d)
{
	struct dvx_p2p_lbuf b;
	uint32_t k;

	b.ptr = (void *)d.ib_base;
	b.addr = d.ib_addr;
	b.len = DVX_WIN_IB_BYTES(d.nib, d.geom.signals, d.geom.counters, d.geom.barriers,
				 d.geom.slots, d.geom.slot_bytes);
	for (k = 0; k < DVX_P2P_MAX_NICS; k++) {
		b.lkey[k] = d.ib_lkey[k];
		b.rkey[k] = d.ib_rkey[k];
	}
	return b;
}

/**
 * dvx_win_remote_add() - one add (or NVL set) into @e's region by one thread, after
 * its group's writes (the caller synchronised the group): NVL a fence, then a relaxed
 * write (one fence for the group); IB a fenced fetch-add on the window's channel.
 * Context: device, one thread. Return: 0, -ENOTSUP (SET on IB), or the lane's error.
 */
DVX_DEV int dvx_win_remote_add(const struct dvx_win_dev &d, int r, const struct dvx_win_dev_peer *e,
			       uint64_t nvl_off, uint64_t ib_off, uint32_t op, uint64_t value)
{
	if (e->kind == DVX_MP_NVL) {
		dvx_nvl_flush();
		return dvx_nvl_signal_relaxed((uint64_t *)(e->nvl_base + nvl_off), op, value);
	}
	if (op != DVX_NVL_SIG_ADD)
		return -ENOTSUP;
	{
		struct dvx_p2p_notify n = { &e->ib_region, ib_off, value, nullptr, 0, DVX_P2P_FENCE };

		return dvx_p2p_dev_signal(dvx_dev_thread(), d.ib, r, d.channel, &n,
					  d.post_timeout_ns, nullptr);
	}
}

/* ---- signals ---- */

/**
 * dvx_win_dev_signal_peer() - add @value to (or set, NVL peers only) signal @id of this
 * rank's row at @target, after the group's earlier writes.
 * Context: device, every thread of @g. Return: see the file comment.
 */
DVX_DEV int dvx_win_dev_signal_peer(const struct dvx_dev_grp &g, const struct dvx_win_dev &d, int target,
				uint32_t id, uint32_t op, uint64_t value)
{
	const struct dvx_win_dev_peer *e = dvx_win_peer(d, target);
	int err = 0;

	if (dvx_win_dev_check(d))
		return -EPROTO;
	if (!e || id >= d.geom.signals || (op != DVX_NVL_SIG_SET && op != DVX_NVL_SIG_ADD))
		return -EINVAL;
	if (e->kind == DVX_MP_IB && op == DVX_NVL_SIG_SET)
		return -ENOTSUP;
	dvx_dev_grp_sync(g);
	if (g.lane == 0)
		err = dvx_win_remote_add(d, target, e,
					 dvx_win_nvl_sig_off(&d.geom, (uint32_t)e->row_at, id),
					 dvx_win_ib_sig_off(&d.geom, (uint32_t)e->row_at, id), op, value);
	return dvx_dev_grp_bcast(g, err);
}

/**
 * dvx_win_dev_signal_all() - dvx_win_dev_signal_peer() to every peer exactly once, the peers
 * spread over the group's threads. SET with any IB peer is -ENOTSUP before anything
 * is sent.
 * Context: device, every thread of @g. Return: the first error of any thread.
 */
DVX_DEV int dvx_win_dev_signal_all(const struct dvx_dev_grp &g, const struct dvx_win_dev &d, uint32_t id,
			       uint32_t op, uint64_t value)
{
	int r, err = 0;

	if (dvx_win_dev_check(d))
		return -EPROTO;
	if (id >= d.geom.signals || (op != DVX_NVL_SIG_SET && op != DVX_NVL_SIG_ADD))
		return -EINVAL;
	if (op == DVX_NVL_SIG_SET && d.nib)
		return -ENOTSUP;
	dvx_dev_grp_sync(g);
	for (r = (int)g.lane; r < d.nranks; r += (int)g.size) {
		const struct dvx_win_dev_peer *e = dvx_win_peer(d, r);
		int e2;

		if (!e)
			continue;
		e2 = dvx_win_remote_add(d, r, e, dvx_win_nvl_sig_off(&d.geom, (uint32_t)e->row_at, id),
					dvx_win_ib_sig_off(&d.geom, (uint32_t)e->row_at, id), op, value);
		if (e2 && !err)
			err = e2;
	}
	return dvx_dev_grp_first_err(g, err);
}

/** dvx_win_read_signal_from() - signal @id of @peer's row here (acquire); 0 for a bad peer or id. */
DVX_DEV uint64_t dvx_win_read_signal_from(const struct dvx_win_dev &d, int peer, uint32_t id)
{
	const struct dvx_win_dev_peer *e = dvx_win_peer(d, peer);

	return e && id < d.geom.signals ? dvx_nvl_read(dvx_win_my_sig(d, e, id)) : 0;
}

#define DVX_WIN_LOOK_ONE 0
#define DVX_WIN_LOOK_SIG 1
#define DVX_WIN_LOOK_BAR 2

/**
 * dvx_win_look() - what a wait looks at: one word, a signal's sum over every row, or a
 * barrier's sum over the NVL and IB words (acquire loads).
 * Context: device. Return: the value.
 */
DVX_DEV uint64_t dvx_win_look(const struct dvx_win_dev &d, int kind, uint32_t id, const uint64_t *word)
{
	uint64_t s = 0;
	int32_t r;

	if (kind == DVX_WIN_LOOK_ONE)
		return dvx_nvl_read(word);
	if (kind == DVX_WIN_LOOK_BAR) {
		if (d.nvl_base)
			s += dvx_nvl_read((const uint64_t *)(d.nvl_base + dvx_win_nvl_bar_off(&d.geom, id)));
		if (d.ib_base)
			s += dvx_nvl_read((const uint64_t *)(d.ib_base + dvx_win_ib_bar_off(&d.geom, id)));
		return s;
	}
	for (r = 0; d.nvl_base && r < d.nvl_rows; r++)
		s += dvx_nvl_read((const uint64_t *)(d.nvl_base +
						     dvx_win_nvl_sig_off(&d.geom, (uint32_t)r, id)));
	for (r = 0; d.ib_base && r < d.nib; r++)
		s += dvx_nvl_read((const uint64_t *)(d.ib_base +
						     dvx_win_ib_sig_off(&d.geom, (uint32_t)r, id)));
	return s;
}

/**
 * dvx_win_wait_sum() - wait until dvx_win_look() @cmp @value, bounded by %globaltimer
 * (read only after 64 looks).
 * Context: device, one thread. Return: 0, -ETIMEDOUT, -EINVAL (bad @cmp).
 */
DVX_DEV int dvx_win_wait_sum(const struct dvx_win_dev &d, int kind, uint32_t id, const uint64_t *word,
			     uint32_t cmp, uint64_t value, uint64_t timeout_ns, uint64_t *seen)
{
	uint64_t v, deadline = 0;
	uint32_t k = 0;
	int ok;

	for (;;) {
		v = dvx_win_look(d, kind, id, word);
		ok = dvx_p2p_cmp_holds(cmp, v, value);
		if (ok < 0)
			return -EINVAL;
		if (ok)
			break;
		if ((++k & 63) == 0) {
			uint64_t now = dvx_nvl_now_ns();

			if (!deadline) {
				deadline = timeout_ns > UINT64_MAX - now ? UINT64_MAX : now + timeout_ns;
			} else if (now >= deadline) {
				if (seen)
					*seen = v;
				return -ETIMEDOUT;
			}
		}
	}
	if (seen)
		*seen = v;
	return 0;
}

/** dvx_win_read_signal() - the sum of signal @id over every peer's row here; 0 for a bad id. */
DVX_DEV uint64_t dvx_win_read_signal(const struct dvx_win_dev &d, uint32_t id)
{
	if (dvx_win_dev_check(d) || id >= d.geom.signals)
		return 0;
	return dvx_win_look(d, DVX_WIN_LOOK_SIG, id, nullptr);
}

/**
 * dvx_win_dev_wait_signal() - wait until the sum of signal @id over all peers @cmp @value.
 * @seen:	optional: the leader's last sum (what a timed-out wait saw)
 * Context: device, every thread of @g. Return: see the file comment.
 */
DVX_DEV int dvx_win_dev_wait_signal(const struct dvx_dev_grp &g, const struct dvx_win_dev &d, uint32_t id,
				uint32_t cmp, uint64_t value, uint64_t timeout_ns, uint64_t *seen)
{
	int err = 0;

	if (dvx_win_dev_check(d))
		return -EPROTO;
	if (id >= d.geom.signals)
		return -EINVAL;
	if (g.lane == 0)
		err = dvx_win_wait_sum(d, DVX_WIN_LOOK_SIG, id, nullptr, cmp, value, timeout_ns, seen);
	return dvx_dev_grp_bcast(g, err);
}

/**
 * dvx_win_dev_wait_signal_from() - wait until @peer's signal @id @cmp @value (one word, O(1)).
 * Context: device, every thread of @g. Return: see the file comment.
 */
DVX_DEV int dvx_win_dev_wait_signal_from(const struct dvx_dev_grp &g, const struct dvx_win_dev &d, int peer,
				     uint32_t id, uint32_t cmp, uint64_t value, uint64_t timeout_ns,
				     uint64_t *seen)
{
	const struct dvx_win_dev_peer *e = dvx_win_peer(d, peer);
	int err = 0;

	if (dvx_win_dev_check(d))
		return -EPROTO;
	if (!e || id >= d.geom.signals)
		return -EINVAL;
	if (g.lane == 0)
		err = dvx_win_wait_sum(d, DVX_WIN_LOOK_ONE, id, dvx_win_my_sig(d, e, id), cmp, value,
				       timeout_ns, seen);
	return dvx_dev_grp_bcast(g, err);
}

/* ---- counters ---- */

/** dvx_win_read_counter() - counter @id of @peer (acquire); 0 for a bad peer or id. */
DVX_DEV uint64_t dvx_win_read_counter(const struct dvx_win_dev &d, int peer, uint32_t id)
{
	const struct dvx_win_dev_peer *e = dvx_win_peer(d, peer);

	return e && id < d.geom.counters ? dvx_nvl_read(dvx_win_my_ctr(d, e, id)) : 0;
}

/**
 * dvx_win_dev_wait_counter() - wait until counter @id of @peer @cmp @value; on an IB peer
 * the lane that raises it is watched (its error is returned).
 * Context: device, every thread of @g. Return: see the file comment.
 */
DVX_DEV int dvx_win_dev_wait_counter(const struct dvx_dev_grp &g, const struct dvx_win_dev &d, int peer,
				 uint32_t id, uint32_t cmp, uint64_t value, uint64_t timeout_ns)
{
	const struct dvx_win_dev_peer *e = dvx_win_peer(d, peer);
	int err = 0;

	if (dvx_win_dev_check(d))
		return -EPROTO;
	if (!e || id >= d.geom.counters)
		return -EINVAL;
	if (g.lane == 0) {
		uint64_t *w = dvx_win_my_ctr(d, e, id);

		if (e->kind == DVX_MP_IB)
			err = dvx_p2p_dev_wait_counter(d.ib, peer, d.channel, w, cmp, value, timeout_ns);
		else
			err = dvx_nvl_wait(w, cmp, value, timeout_ns, nullptr);
	}
	return dvx_dev_grp_bcast(g, err);
}

/** dvx_win_reset_counter() - store 0 (only while none of @peer's puts is in flight). */
DVX_DEV int dvx_win_reset_counter(const struct dvx_win_dev &d, int peer, uint32_t id)
{
	const struct dvx_win_dev_peer *e = dvx_win_peer(d, peer);

	if (dvx_win_dev_check(d))
		return -EPROTO;
	if (!e || id >= d.geom.counters)
		return -EINVAL;
	dvx_st_release_u64(dvx_win_my_ctr(d, e, id), 0, DVX_SCOPE_SYS);
	return 0;
}

/* ---- barriers ---- */

/**
 * dvx_win_arrive() - raise @r's barrier word @id by one (one thread).
 * Context: device. Return: as dvx_win_remote_add().
 */
DVX_DEV int dvx_win_arrive(const struct dvx_win_dev &d, int r, const struct dvx_win_dev_peer *e,
			   uint32_t id)
{
	return dvx_win_remote_add(d, r, e, dvx_win_nvl_bar_off(&d.geom, id),
				  dvx_win_ib_bar_off(&d.geom, id), DVX_NVL_SIG_ADD, 1);
}

/**
 * dvx_win_dev_bar_wait() - the leader moves barrier @id's expectation by @add (kept in the
 * device region across launches) and waits for it, unless @err already failed the call.
 * Context: device, every thread of @g. Return: 0, @err, -ETIMEDOUT.
 */
DVX_DEV int dvx_win_dev_bar_wait(const struct dvx_dev_grp &g, const struct dvx_win_dev &d, uint32_t id,
			     uint64_t add, uint64_t timeout_ns, int err)
{
	if (g.lane == 0 && !err) {
		uint64_t *exp = (uint64_t *)d.bar_expected + id;
		uint64_t want = *exp + add;

		*exp = want;
		err = dvx_win_wait_sum(d, DVX_WIN_LOOK_BAR, id, nullptr, DVX_CMP_GE, want, timeout_ns,
				       nullptr);
	}
	return dvx_dev_grp_bcast(g, err);
}

/**
 * dvx_win_dev_barrier() - every peer's barrier word @id raised by one (the peers spread
 * over the group's threads, after the group's writes), then wait until this rank's
 * words have been raised by every peer once more than at the last barrier @id of any
 * launch. One group per barrier id at a time.
 * Context: device, every thread of @g. Return: see the file comment.
 */
DVX_DEV int dvx_win_dev_barrier(const struct dvx_dev_grp &g, const struct dvx_win_dev &d, uint32_t id,
			    uint64_t timeout_ns)
{
	int r, err = 0;

	if (dvx_win_dev_check(d))
		return -EPROTO;
	if (id >= d.geom.barriers)
		return -EINVAL;
	dvx_dev_grp_sync(g);
	for (r = (int)g.lane; r < d.nranks; r += (int)g.size) {
		const struct dvx_win_dev_peer *e = dvx_win_peer(d, r);
		int e2;

		if (!e)
			continue;
		e2 = dvx_win_arrive(d, r, e, id);
		if (e2 && !err)
			err = e2;
	}
	err = dvx_dev_grp_first_err(g, err);
	return dvx_win_dev_bar_wait(g, d, id, (uint64_t)(d.nranks - 1), timeout_ns, err);
}

/**
 * dvx_win_dev_barrier_peer() - dvx_win_dev_barrier() with one peer (an id used so is used with
 * one peer at a time, on both sides).
 * Context: device, every thread of @g. Return: see the file comment.
 */
DVX_DEV int dvx_win_dev_barrier_peer(const struct dvx_dev_grp &g, const struct dvx_win_dev &d, int target,
				 uint32_t id, uint64_t timeout_ns)
{
	const struct dvx_win_dev_peer *e = dvx_win_peer(d, target);
	int err = 0;

	if (dvx_win_dev_check(d))
		return -EPROTO;
	if (!e || id >= d.geom.barriers)
		return -EINVAL;
	dvx_dev_grp_sync(g);
	if (g.lane == 0)
		err = dvx_win_arrive(d, target, e, id);
	err = dvx_dev_grp_bcast(g, err);
	return dvx_win_dev_bar_wait(g, d, id, 1, timeout_ns, err);
}

/* ---- puts ---- */

#define DVX_WIN_PUT_SIG 1u
#define DVX_WIN_PUT_CTR 2u

/**
 * dvx_win_dev_chan() - the IB channel a put of group @g takes: the window's channel
 * plus the group's index (its block at block scope, its global warp otherwise) modulo
 * the window's channel count (struct dvx_win_cfg.nchannels).
 * @g:		the group
 * @d:		the window
 *
 * Context: device, any thread. Return: the channel (the same for the whole group).
 */
DVX_DEV uint32_t dvx_win_dev_chan(const struct dvx_dev_grp &g, const struct dvx_win_dev &d)
{
	uint32_t blk = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
	uint32_t idx;

	if (d.nchannels <= 1)
		return d.channel;
	idx = g.scope == DVX_DEV_BLOCK ? blk :
	      blk * ((dvx_dev_block_nthreads() + 31) / 32) + dvx_dev_block_tid() / 32;
	return d.channel + idx % d.nchannels;
}

/**
 * dvx_win_dev_flush() - wait until every IB operation published so far on the window's
 * channels (all of them: @d.channel ... + nchannels - 1, to every peer) completed, and
 * make this thread's NVL stores visible system-wide; the group's leader waits, the
 * group learns the result.
 * @g:		the group
 * @d:		the window
 * @timeout_ns:	bound for the whole flush (0: DVX_P2P_DEV_TIMEOUT_NS)
 *
 * Context: device; every thread of @g together. Return: 0; the first lane error;
 * -ETIMEDOUT; -EPROTO (a window of other headers).
 */
DVX_DEV int dvx_win_dev_flush(const struct dvx_dev_grp &g, const struct dvx_win_dev &d,
			      uint64_t timeout_ns)
{
	int err = 0;

	if (dvx_win_dev_check(d))
		return -EPROTO;
	dvx_nvl_flush();
	dvx_dev_grp_sync(g);
	if (g.lane == 0 && d.nib) {
		uint32_t n = d.nchannels ? d.nchannels : 1;
		struct dvx_p2p_waiter w;

		dvx_p2p_dev_waiter(&w, timeout_ns);
		for (int p = 0; p < d.nranks && !err; p++)
			for (uint32_t c = 0; c < n && !err; c++) {
				const struct dvx_p2p_dev_lane *l =
					dvx_p2p_dev_lane_of(d.ib, p, d.channel + c);

				if (!l)
					break;
				err = dvx_p2p_dev_q_drain(l->main, &w);
				if (!err && l->has_comp)
					err = dvx_p2p_dev_q_drain(l->comp, &w);
			}
	}
	return dvx_dev_grp_bcast(g, err);
}

/**
 * dvx_win_dev_quiet() - dvx_win_dev_flush() of everything: every lane of the window's
 * IB transport (every channel, every peer) and this thread's NVL stores.
 * @g:		the group
 * @d:		the window
 * @timeout_ns:	bound (0: DVX_P2P_DEV_TIMEOUT_NS)
 *
 * Context: device; every thread of @g together. Return: as dvx_win_dev_flush().
 */
DVX_DEV int dvx_win_dev_quiet(const struct dvx_dev_grp &g, const struct dvx_win_dev &d,
			      uint64_t timeout_ns)
{
	if (dvx_win_dev_check(d))
		return -EPROTO;
	dvx_nvl_flush();
	dvx_dev_grp_sync(g);
	if (!d.nib)
		return 0;
	return dvx_p2p_dev_quiet(g, d.ib, timeout_ns);
}

/**
 * dvx_win_dev_put_ex() - copy @wx->len bytes from @wx->src + @wx->soff into @target's window
 * buffer at @wx->doff (struct dvx_win_xfer); with DVX_WIN_PUT_SIG then add @value to signal @sig of this rank's row there,
 * with DVX_WIN_PUT_CTR raise this rank's counter @ctr of @target once the data is
 * complete (IB: acknowledged; NVL: visible). NVL: the group copies through the mapping
 * (@src readable by this GPU); IB: the leader posts (@src registered: its lkeys).
 * Context: device, every thread of @g. Return: see the file comment.
 */
DVX_DEV int dvx_win_dev_put_ex(const struct dvx_dev_grp &g, const struct dvx_win_dev &d, int target,
			   const struct dvx_win_xfer *wx, uint32_t what, uint32_t sig, uint64_t value,
			   uint32_t ctr)
{
	const struct dvx_win_dev_peer *e = dvx_win_peer(d, target);
	int err = 0;

	if (dvx_win_dev_check(d))
		return -EPROTO;
	if (!wx || !wx->src)
		return -EINVAL;

	const struct dvx_p2p_lbuf &src = *wx->src;
	uint64_t soff = wx->soff, doff = wx->doff, len = wx->len;

	if (!e || !len || !dvx_p2p_in_bounds(soff, len, src.len) ||
	    !dvx_p2p_in_bounds(doff, len, e->data_len) ||
	    ((what & DVX_WIN_PUT_SIG) && sig >= d.geom.signals) ||
	    ((what & DVX_WIN_PUT_CTR) && ctr >= d.geom.counters))
		return -EINVAL;
	dvx_dev_grp_sync(g);	/* the group's writes of @src are done */
	if (e->kind == DVX_MP_NVL) {
		if (!e->nvl_data)
			return -EINVAL;
		dvx_nvl_copy((void *)(e->nvl_data + doff), (const uint8_t *)src.ptr + soff, len, g.lane,
			     g.size);
		dvx_dev_grp_sync(g);
		if (g.lane == 0 && what) {
			dvx_nvl_flush();
			if (what & DVX_WIN_PUT_SIG)
				err = dvx_nvl_signal_relaxed(
					(uint64_t *)(e->nvl_base +
						     dvx_win_nvl_sig_off(&d.geom, (uint32_t)e->row_at, sig)),
					DVX_NVL_SIG_ADD, value);
			if (what & DVX_WIN_PUT_CTR)
				(void)dvx_nvl_signal_relaxed(dvx_win_my_ctr(d, e, ctr), DVX_NVL_SIG_ADD, 1);
		}
		return dvx_dev_grp_bcast(g, err);
	}
	uint32_t chan = dvx_win_dev_chan(g, d);

	if (g.lane == 0) {
		struct dvx_p2p_lbuf me = dvx_win_ib_lbuf(d);
		uint64_t so = dvx_win_ib_sig_off(&d.geom, (uint32_t)e->row_at, sig);
		uint64_t co = dvx_win_ib_ctr_off(&d.geom, (uint32_t)e->row, ctr);
		struct dvx_p2p_xfer x = { &src, soff, &e->ib_data, doff, len };
		struct dvx_p2p_notify n = { nullptr, 0, 0, nullptr, 0, 0 };

		if (what & DVX_WIN_PUT_SIG) {
			n.sig = &e->ib_region;
			n.sigoff = so;
			n.add = value;
		}
		if (what & DVX_WIN_PUT_CTR) {
			n.ctr = &me;
			n.ctroff = co;
		}
		dvx_nvl_flush();	/* the group's writes of @src before the NIC reads them */
		err = dvx_p2p_dev_post(dvx_dev_thread(), d.ib, target, chan, &x, &n,
				       d.post_timeout_ns, nullptr);
	}
	return dvx_dev_grp_bcast(g, err);
}

/**
 * dvx_win_dev_put(), dvx_win_dev_put_signal(), dvx_win_dev_put_counter(),
 * dvx_win_dev_put_signal_counter() - dvx_win_dev_put_ex() with data only; with one signal
 * after the group's data; with this rank's counter raised after; with both.
 * Context: device, every thread of @g. Return: see the file comment.
 */
DVX_DEV int dvx_win_dev_put(const struct dvx_dev_grp &g, const struct dvx_win_dev &d, int target,
			const struct dvx_win_xfer *x)
{
	return dvx_win_dev_put_ex(g, d, target, x, 0, 0, 0, 0);
}

DVX_DEV int dvx_win_dev_put_signal(const struct dvx_dev_grp &g, const struct dvx_win_dev &d,
			       int target, const struct dvx_win_xfer *x, uint32_t sig,
			       uint64_t value)
{
	return dvx_win_dev_put_ex(g, d, target, x, DVX_WIN_PUT_SIG, sig, value, 0);
}

DVX_DEV int dvx_win_dev_put_counter(const struct dvx_dev_grp &g, const struct dvx_win_dev &d,
				int target, const struct dvx_win_xfer *x, uint32_t ctr)
{
	return dvx_win_dev_put_ex(g, d, target, x, DVX_WIN_PUT_CTR, 0, 0, ctr);
}

DVX_DEV int dvx_win_dev_put_signal_counter(const struct dvx_dev_grp &g, const struct dvx_win_dev &d,
				       int target, const struct dvx_win_xfer *x, uint32_t sig,
				       uint64_t value, uint32_t ctr)
{
	return dvx_win_dev_put_ex(g, d, target, x, DVX_WIN_PUT_SIG | DVX_WIN_PUT_CTR, sig, value,
			      ctr);
}

/* ---- gets, one-word operations, resets ---- */

/**
 * dvx_win_dev_get() - read @x->len bytes of @target's window buffer at @x->soff into
 * @x->dst + @x->doff (struct dvx_win_rxfer, the same for the whole group). NVL: the
 * group loads through the mapping, the bytes are there on return; IB: the leader posts
 * RDMA READs on the group's channel (dvx_win_dev_chan()), the bytes are there after
 * dvx_win_dev_flush() or dvx_win_dev_quiet().
 * @g:		the group
 * @d:		the window
 * @target:	the rank read from (group-uniform)
 * @x:		the get (group-uniform): @x->dst registered for IB peers
 *
 * Context: device, every thread of @g together. Return: 0; -EINVAL (a length of 0,
 * out of bounds, a bad peer or destination); -EPERM (an IB peer and a window without
 * DVX_WIN_F_READ, or a peer buffer registered without remote read: nothing posted);
 * -EPROTO (a window of other headers); the lane's error.
 */
DVX_DEV int dvx_win_dev_get(const struct dvx_dev_grp &g, const struct dvx_win_dev &d, int target,
			    const struct dvx_win_rxfer *x)
{
	const struct dvx_win_dev_peer *e = dvx_win_peer(d, target);

	if (dvx_win_dev_check(d))
		return -EPROTO;
	if (!e || !x || !x->dst || !x->len || !dvx_p2p_in_bounds(x->doff, x->len, x->dst->len) ||
	    !dvx_p2p_in_bounds(x->soff, x->len, e->data_len))
		return -EINVAL;
	if (e->kind == DVX_MP_NVL) {
		if (!e->nvl_data)
			return -EINVAL;
		return dvx_nvl_dev_get(g, (uint8_t *)x->dst->ptr + x->doff,
				       (const void *)(e->nvl_data + x->soff), x->len);
	}
	if (!(d.flags & DVX_WIN_F_READ))
		return -EPERM;

	struct dvx_p2p_rxfer rx = { &e->ib_data, x->soff, x->dst, x->doff, x->len };

	/* only the leader has a get: its answer is the group's */
	return dvx_dev_grp_bcast(g, dvx_p2p_dev_get(g, d.ib, target, dvx_win_dev_chan(g, d),
						    g.lane == 0 ? &rx : nullptr, d.post_timeout_ns,
						    nullptr));
}

/**
 * dvx_win_dev_amo() - each member of @g its own one-word operation on @target's window
 * buffer: put_value (DVX_WIN_AMO_SET), add (_ADD), fetch_add (_FADD), compare_swap
 * (_CSWAP) on the word at @a->doff (struct dvx_win_amo). NVL: system-scope atomics
 * through the mapping (dvx_nvl_dev_amo()), a fetching one's old value in its result
 * word on return; IB: inline WRITE, FETCH_ADD or CMP_SWAP posted for the group at once
 * on the group's channel (dvx_win_dev_chan()), complete (and the old values in place)
 * after dvx_win_dev_flush() or dvx_win_dev_quiet(). NIC atomics are atomic with each
 * other, GPU system-scope atomics with each other: use one kind of peer per word.
 * @g:		the group
 * @d:		the window
 * @target:	the target rank (group-uniform)
 * @op:		enum dvx_win_amo_op (group-uniform)
 * @a:		this member's operation (NULL: none); @a->res for FADD and CSWAP (IB:
 *		registered; NVL: its @ptr written), none for SET and ADD
 *
 * Context: device, every thread of @g together. Return: 0; -EINVAL (a member's word
 * misaligned or out of bounds, a result buffer missing or extra, a bad op or peer, no
 * member with an operation: nothing done for the group); -EPROTO; the lane's error.
 */
DVX_DEV int dvx_win_dev_amo(const struct dvx_dev_grp &g, const struct dvx_win_dev &d, int target,
			    uint32_t op, const struct dvx_win_amo *a)
{
	const struct dvx_win_dev_peer *e = dvx_win_peer(d, target);
	uint32_t fetch = op == DVX_WIN_AMO_FADD || op == DVX_WIN_AMO_CSWAP;
	int err = 0;

	if (dvx_win_dev_check(d))
		return -EPROTO;
	if (!e || op > DVX_WIN_AMO_CSWAP || (e->kind == DVX_MP_NVL && !e->nvl_data))
		return -EINVAL;
	if (a && (!dvx_p2p_in_bounds(a->doff, 8, e->data_len) || (a->doff & 7u) ||
		  fetch != (a->res != nullptr) ||
		  (fetch && (!dvx_p2p_in_bounds(a->resoff, 8, a->res->len) || (a->resoff & 7u) ||
			     (((uintptr_t)a->res->ptr + a->resoff) & 7u)))))
		err = -EINVAL;
	err = dvx_dev_grp_first_err(g, err);
	if (err)
		return err;
	if (e->kind == DVX_MP_NVL)
		return dvx_nvl_dev_amo(g, a ? (uint64_t *)(e->nvl_data + a->doff) : nullptr, op,
				       a ? a->value : 0, a ? a->compare : 0,
				       a && fetch ? (uint64_t *)((uint8_t *)a->res->ptr + a->resoff) :
						    nullptr);

	struct dvx_p2p_amo pa = { &e->ib_data, a ? a->doff : 0, op, a ? a->value : 0,
				  a ? a->compare : 0, a ? a->res : nullptr, a ? a->resoff : 0 };

	err = dvx_p2p_dev_amo(g, d.ib, target, dvx_win_dev_chan(g, d), a ? &pa : nullptr,
			      d.post_timeout_ns, nullptr);
	/* the members that were refused say why, not the ones cancelled with them */
	return dvx_dev_grp_first_err(g, err == -ECANCELED ? 0 : err);
}

/**
 * dvx_win_dev_put_value(), dvx_win_dev_add(), dvx_win_dev_fetch_add(),
 * dvx_win_dev_compare_swap() - dvx_win_dev_amo() with op DVX_WIN_AMO_SET, _ADD, _FADD,
 * _CSWAP.
 * @g, @d, @target, @a: as dvx_win_dev_amo()
 *
 * Context: device, every thread of @g together. Return: as dvx_win_dev_amo().
 */
DVX_DEV int dvx_win_dev_put_value(const struct dvx_dev_grp &g, const struct dvx_win_dev &d,
				  int target, const struct dvx_win_amo *a)
{
	return dvx_win_dev_amo(g, d, target, DVX_WIN_AMO_SET, a);
}

DVX_DEV int dvx_win_dev_add(const struct dvx_dev_grp &g, const struct dvx_win_dev &d, int target,
			    const struct dvx_win_amo *a)
{
	return dvx_win_dev_amo(g, d, target, DVX_WIN_AMO_ADD, a);
}

DVX_DEV int dvx_win_dev_fetch_add(const struct dvx_dev_grp &g, const struct dvx_win_dev &d,
				  int target, const struct dvx_win_amo *a)
{
	return dvx_win_dev_amo(g, d, target, DVX_WIN_AMO_FADD, a);
}

DVX_DEV int dvx_win_dev_compare_swap(const struct dvx_dev_grp &g, const struct dvx_win_dev &d,
				     int target, const struct dvx_win_amo *a)
{
	return dvx_win_dev_amo(g, d, target, DVX_WIN_AMO_CSWAP, a);
}

/**
 * dvx_win_dev_reset_peer_signal() - set signal @id of this rank's row at @target to 0,
 * after the group's earlier operations: IB one fenced RDMA inline WRITE of zero on the
 * window's channel (signals are only ever changed by the NIC; 0 at the peer after
 * dvx_win_dev_flush()); NVL a fence and a store through the mapping. Only while this
 * rank has no signal to that word in flight.
 * @g:		the group
 * @d:		the window
 * @target:	the target rank (group-uniform)
 * @id:		the signal (group-uniform)
 *
 * Context: device, every thread of @g together. Return: 0; -EINVAL (bad peer or id);
 * -EPROTO; the lane's error.
 */
DVX_DEV int dvx_win_dev_reset_peer_signal(const struct dvx_dev_grp &g, const struct dvx_win_dev &d,
					  int target, uint32_t id)
{
	const struct dvx_win_dev_peer *e = dvx_win_peer(d, target);
	int err = 0;

	if (dvx_win_dev_check(d))
		return -EPROTO;
	if (!e || id >= d.geom.signals)
		return -EINVAL;
	if (e->kind == DVX_MP_NVL) {
		dvx_dev_grp_sync(g);
		if (g.lane == 0) {
			dvx_nvl_flush();
			err = dvx_nvl_signal_relaxed(
				(uint64_t *)(e->nvl_base +
					     dvx_win_nvl_sig_off(&d.geom, (uint32_t)e->row_at, id)),
				DVX_NVL_SIG_SET, 0);
		}
		return dvx_dev_grp_bcast(g, err);
	}
	return dvx_p2p_dev_reset_signal(g, d.ib, target, d.channel, &e->ib_region,
					dvx_win_ib_sig_off(&d.geom, (uint32_t)e->row_at, id),
					d.post_timeout_ns, nullptr);
}

/* ---- send / recv ---- */

/**
 * dvx_win_ll_put(), dvx_win_ll_get() - the flagged-line halves of dvx_win_dev_send() and
 * dvx_win_dev_recv() for a small message (dvx_win_ll_max()): header and payload lines of
 * @slot under @seq (dvx_nvl_ll_put_tagged(), dvx_nvl_ll_get_tagged()); out of line.
 * @slot:	the slot (16-byte aligned)
 * @n:		the message's bytes (the header's tag)
 * @src, @dst:	the payload
 * @seq:	dvx_win_ll_seq() of the chunk
 * @lane, @nlanes: the group's
 * @timeout_ns:	get: how long
 *
 * Context: device, every thread of the group. Return: as the dvx_nvl_ll_* calls.
 */
__device__ __noinline__ static int dvx_win_ll_put(void *slot, uint64_t n, const void *src, uint32_t seq,
						 uint32_t lane, uint32_t nlanes)
{
	return dvx_nvl_ll_put_tagged(slot, n, src, n, seq, lane, nlanes);
}

__device__ __noinline__ static int dvx_win_ll_get(const void *slot, uint64_t n, void *dst, uint32_t seq,
						 uint32_t lane, uint32_t nlanes, uint64_t timeout_ns)
{
	return dvx_nvl_ll_get_tagged(slot, n, dst, n, seq, lane,
				     nlanes, timeout_ns);
}

/**
 * dvx_win_dev_send() - @n bytes (any size, 0 too) from @src to @target through the
 * staging slots: per chunk the leader waits for the slot's credit, the group copies
 * the chunk (NVL: into the peer's slot; IB: into this rank's send slot, then the
 * leader puts it with the slot's ready signal on one QP). @src: memory this GPU reads.
 * Context: device, every thread of @g. Return: see the file comment.
 */
DVX_DEV int dvx_win_dev_send(const struct dvx_dev_grp &g, const struct dvx_win_dev &d, int target,
			 const void *src, uint64_t n, uint64_t timeout_ns)
{
	const struct dvx_win_dev_peer *e = dvx_win_peer(d, target);
	const struct dvx_win_geom *ge = &d.geom;
	uint64_t *cursor, pay, nc, c, k0;
	int err = 0;

	if (dvx_win_dev_check(d))
		return -EPROTO;
	if (!e || (n && !src))
		return -EINVAL;
	if (!ge->slots)
		return -ENOTSUP;
	cursor = (uint64_t *)d.cursors + 2 * target;
	pay = ge->slot_bytes - DVX_WIN_HDR;
	nc = n ? (n + pay - 1) / pay : 1;
	k0 = *(volatile uint64_t *)cursor;	/* read by every thread before the leader moves it */
	dvx_dev_grp_sync(g);
	for (c = 0; c < nc && !err; c++) {
		uint64_t k = k0 + c;
		uint64_t len = n - c * pay < pay ? n - c * pay : pay;
		uint32_t slot = (uint32_t)(k % ge->slots);
		uint8_t *dst;

		if (g.lane == 0 && k >= ge->slots) {
			const uint64_t *cw = e->kind == DVX_MP_NVL ?
				(const uint64_t *)(d.nvl_base + dvx_win_nvl_credit_off(ge, (uint32_t)e->row)) :
				(const uint64_t *)(d.ib_base + dvx_win_ib_credit_off(ge, (uint32_t)e->row));

			err = e->kind == DVX_MP_IB ?
				dvx_p2p_dev_wait_counter(d.ib, target, d.channel, cw, DVX_CMP_GE,
							 k + 1 - ge->slots, timeout_ns) :
				dvx_nvl_wait(cw, DVX_CMP_GE, k + 1 - ge->slots, timeout_ns, nullptr);
		}
		err = dvx_dev_grp_bcast(g, err);
		if (err)
			break;
		dst = e->kind == DVX_MP_NVL ?
			(uint8_t *)(e->nvl_base + dvx_win_nvl_slot_off(ge, (uint32_t)e->row_at, slot)) :
			(uint8_t *)(d.ib_base + dvx_win_ib_sslot_off(ge, (uint32_t)e->row, slot));
		if (e->kind == DVX_MP_NVL && n <= dvx_win_ll_max(ge)) {
			/* a small message: header and payload as flagged lines, no fence;
			 * the ready word counts the slot's use (relaxed: nobody waits for
			 * it on this path) */
			err = dvx_win_ll_put(dst, n, src, dvx_win_ll_seq(k), g.lane, g.size);
			if (g.lane == 0 && !err) {
				err = dvx_nvl_signal_relaxed(
					(uint64_t *)(e->nvl_base +
						     dvx_win_nvl_ready_off(ge, (uint32_t)e->row_at, slot)),
					DVX_NVL_SIG_ADD, 1);
				if (!err)
					*(volatile uint64_t *)cursor = k + 1;
			}
			err = dvx_dev_grp_bcast(g, err);
			continue;
		}
		if (g.lane == 0) {
			if (e->kind == DVX_MP_NVL) {
				/* the header as a flagged line (the receiver of a small
				 * message reads it so), ordered before the ready word */
				dvx_nvl_ll_store(dst, (n & 0xffffffffu) | (uint64_t)dvx_win_ll_seq(k) << 32,
						 (n >> 32) | (uint64_t)dvx_win_ll_seq(k) << 32);
			} else {
				((uint64_t *)dst)[0] = n;
				((uint64_t *)dst)[1] = k;	/* the stream's chunk number */
			}
		}
		if (len)
			dvx_nvl_copy(dst + DVX_WIN_HDR, (const uint8_t *)src + c * pay, len, g.lane, g.size);
		dvx_dev_grp_sync(g);
		if (g.lane == 0) {
			if (e->kind == DVX_MP_NVL) {
				dvx_nvl_flush();
				err = dvx_nvl_signal_relaxed(
					(uint64_t *)(e->nvl_base +
						     dvx_win_nvl_ready_off(ge, (uint32_t)e->row_at, slot)),
					DVX_NVL_SIG_ADD, 1);
			} else {
				struct dvx_p2p_lbuf me = dvx_win_ib_lbuf(d);
				struct dvx_p2p_xfer x = {
					&me, dvx_win_ib_sslot_off(ge, (uint32_t)e->row, slot),
					&e->ib_region, dvx_win_ib_rslot_off(ge, (uint32_t)e->row_at, slot),
					DVX_WIN_HDR + len };
				struct dvx_p2p_notify sn = {
					&e->ib_region, dvx_win_ib_ready_off(ge, (uint32_t)e->row_at, slot),
					1, nullptr, 0, 0 };

				dvx_nvl_flush();	/* the slot's bytes before the NIC reads them */
				err = dvx_p2p_dev_put_signal(dvx_dev_thread(), d.ib, target, d.channel,
							     &x, &sn, d.post_timeout_ns, nullptr);
			}
			if (!err)
				*(volatile uint64_t *)cursor = k + 1;
		}
		err = dvx_dev_grp_bcast(g, err);
	}
	return err;
}

/**
 * dvx_win_dev_recv() - @n bytes from @peer into @dst through the staging slots, in order:
 * per chunk the leader waits for the slot's ready signal and checks its header (a
 * message of another size is -EMSGSIZE, nothing consumed), the group copies it out,
 * the leader returns the slot's credit.
 * Context: device, every thread of @g. Return: see the file comment.
 */
DVX_DEV int dvx_win_dev_recv(const struct dvx_dev_grp &g, const struct dvx_win_dev &d, int peer, void *dst,
			 uint64_t n, uint64_t timeout_ns)
{
	const struct dvx_win_dev_peer *e = dvx_win_peer(d, peer);
	const struct dvx_win_geom *ge = &d.geom;
	uint64_t *cursor, pay, nc, c, k0;
	int err = 0;

	if (dvx_win_dev_check(d))
		return -EPROTO;
	if (!e || (n && !dst))
		return -EINVAL;
	if (!ge->slots)
		return -ENOTSUP;
	cursor = (uint64_t *)d.cursors + 2 * peer + 1;
	pay = ge->slot_bytes - DVX_WIN_HDR;
	nc = n ? (n + pay - 1) / pay : 1;
	k0 = *(volatile uint64_t *)cursor;
	dvx_dev_grp_sync(g);
	for (c = 0; c < nc && !err; c++) {
		uint64_t k = k0 + c;
		uint64_t len = n - c * pay < pay ? n - c * pay : pay;
		uint32_t slot = (uint32_t)(k % ge->slots);
		const uint8_t *s = e->kind == DVX_MP_NVL ?
			(const uint8_t *)(d.nvl_base + dvx_win_nvl_slot_off(ge, (uint32_t)e->row, slot)) :
			(const uint8_t *)(d.ib_base + dvx_win_ib_rslot_off(ge, (uint32_t)e->row, slot));

		if (e->kind == DVX_MP_NVL && n <= dvx_win_ll_max(ge)) {
			/* a small message: the group polls the flagged lines themselves (no
			 * ready word, no acquire); another size is -EMSGSIZE, nothing taken */
			err = dvx_win_ll_get(s, n, dst, dvx_win_ll_seq(k), g.lane, g.size, timeout_ns);
			err = dvx_dev_grp_first_err(g, err);
			dvx_dev_grp_sync(g);	/* every lane's share of @dst, to the leader */
			if (err)
				break;
			if (g.lane == 0) {
				err = dvx_win_remote_add(d, peer, e,
							 dvx_win_nvl_credit_off(ge, (uint32_t)e->row_at),
							 0, DVX_NVL_SIG_ADD, 1);
				if (!err)
					*(volatile uint64_t *)cursor = k + 1;
			}
			err = dvx_dev_grp_bcast(g, err);
			continue;
		}
		if (g.lane == 0) {
			const uint64_t *rw = e->kind == DVX_MP_NVL ?
				(const uint64_t *)(d.nvl_base + dvx_win_nvl_ready_off(ge, (uint32_t)e->row, slot)) :
				(const uint64_t *)(d.ib_base + dvx_win_ib_ready_off(ge, (uint32_t)e->row, slot));

			err = e->kind == DVX_MP_IB ?
				dvx_p2p_dev_wait_counter(d.ib, peer, d.channel, rw, DVX_CMP_GE,
							 k / ge->slots + 1, timeout_ns) :
				dvx_nvl_wait(rw, DVX_CMP_GE, k / ge->slots + 1, timeout_ns, nullptr);
			if (!err && e->kind == DVX_MP_NVL) {
				/* the flagged header (a small message's relaxed ready may come
				 * before it): its sequence, then the size */
				err = dvx_nvl_ll_wait_hdr(s, n, dvx_win_ll_seq(k),
							  timeout_ns < DVX_WIN_HDR_NS ? timeout_ns :
							  DVX_WIN_HDR_NS);
				if (err == -ETIMEDOUT)
					err = -EPROTO;	/* a stale or foreign slot */
			} else if (!err && ((const volatile uint64_t *)s)[0] != n) {
				err = -EMSGSIZE;
			} else if (!err && ((const volatile uint64_t *)s)[1] != k) {
				err = -EPROTO;	/* a stale or foreign slot */
			}
		}
		err = dvx_dev_grp_bcast(g, err);
		if (err)
			break;
		if (len)
			dvx_nvl_copy((uint8_t *)dst + c * pay, s + DVX_WIN_HDR, len, g.lane, g.size);
		dvx_dev_grp_sync(g);
		if (g.lane == 0) {
			err = dvx_win_remote_add(d, peer, e, dvx_win_nvl_credit_off(ge, (uint32_t)e->row_at),
						 dvx_win_ib_credit_off(ge, (uint32_t)e->row_at),
						 DVX_NVL_SIG_ADD, 1);
			if (!err)
				*(volatile uint64_t *)cursor = k + 1;
		}
		err = dvx_dev_grp_bcast(g, err);
	}
	return err;
}

#endif /* DVX_WIN_DEV_CUH */
