/* SPDX-License-Identifier: MIT */
/*
 * dvx/p2p/dev.cuh - the P2P transport's operations posted by GPU threads (CUDA C++,
 * nvcc; header-only). Kernels take the struct dvx_p2p_dev of dvx_p2p_gpu_export() by
 * value and post on its lanes with the same WQE encodings as core/p2p_ops.c (the
 * dvx/mlx5 builders), through the reservation/publish/doorbell primitives of
 * dvx/gpu/post.cuh:
 *
 *   put                WRITE x ceil(len / 1 GiB)
 *   put_signal         WRITEs, FETCH_ADD(signal) (DVX_P2P_FENCE: fenced)
 *   signal             FETCH_ADD(signal)
 *   *_counter          main WQEs, then on the companion WAIT(main CQ, last main WQE)
 *                      and a loopback FETCH_ADD(counter, 1) into the sink
 *
 * Every WQE is one WQEBB and requests a CQE (CQ index == WQE index), as on the host.
 * Completions are consumed by whichever GPU thread needs room or waits (a try-lock per
 * queue, dvx_p2p_dev_q_poll()); an error CQE is recorded in the queue's GPU state
 * (first error kept), freezes its watermark, and every later post or wait on the lane
 * returns that errno. Timeouts are nanoseconds of %globaltimer and return -ETIMEDOUT,
 * never success. The channel is always an explicit argument (lane = channel mod
 * lanes per peer).
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

#define DVX_P2P_DEV_CE DVX_MLX5_WQE_CTRL_CQ_UPDATE
#define DVX_P2P_DEV_FENCE DVX_MLX5_WQE_CTRL_FM(DVX_MLX5_FM_FENCE_AND_INITIATOR_SMALL)

/**
 * struct dvx_p2p_dev_op - one operation, resolved to a lane's NIC (addresses, keys).
 * Made by dvx_p2p_dev_op_make() from the same buffer descriptions the host uses.
 */
struct dvx_p2p_dev_op {
	uint64_t laddr, raddr, len;	/* data (len 0: none) */
	uint64_t sig_addr, add;		/* signal fetch-add (has_sig) */
	uint64_t ctr_addr;		/* counter fetch-add (has_ctr) */
	uint32_t lkey, rkey, sig_rkey, ctr_rkey;
	uint32_t flags, has_sig, has_ctr, rsvd;
};

/**
 * dvx_p2p_dev_ld_acquire32() - acquire load (GPU scope) of a 32-bit word.
 * @p:		the word (4-byte aligned), e.g. a queue state's error
 *
 * Context: device, any thread. Return: the value.
 */
DVX_DEV int32_t dvx_p2p_dev_ld_acquire32(const int32_t *p)
{
	int32_t v;

	asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
	return v;
}

/**
 * dvx_p2p_dev_qst() - the shared state of a lane queue.
 * @q:		the queue view
 *
 * Context: device, any thread. Return: the queue's struct dvx_p2p_dev_qstate (in GPU
 * memory, owned by the transport that made the view).
 */
DVX_DEV struct dvx_p2p_dev_qstate *dvx_p2p_dev_qst(const struct dvx_p2p_dev_q &q)
{
	return (struct dvx_p2p_dev_qstate *)q.state;
}

/** dvx_p2p_dev_lane_of() - the lane of (@peer, @channel), or NULL (self, bad peer). */
DVX_DEV const struct dvx_p2p_dev_lane *dvx_p2p_dev_lane_of(const struct dvx_p2p_dev &d, int peer,
							   uint32_t channel)
{
	int pi;

	if (peer < 0 || peer >= d.nranks || peer == d.rank || !d.nlanes)
		return nullptr;
	pi = peer < d.rank ? peer : peer - 1;
	return (const struct dvx_p2p_dev_lane *)d.lanes + (uint32_t)pi * d.nlanes +
	       channel % d.nlanes;
}

/** dvx_p2p_dev_q_err() - the queue's first error (0 if none). */
DVX_DEV int dvx_p2p_dev_q_err(const struct dvx_p2p_dev_q &q)
{
	return dvx_p2p_dev_ld_acquire32(&dvx_p2p_dev_qst(q)->err);
}

/**
 * dvx_p2p_dev_q_poll() - consume the CQEs of published WQEs, if no other thread is.
 * A good CQE must name the next WQE (else -EPROTO is recorded); an error CQE is
 * recorded (first one kept) and freezes the watermark. The CQ record is updated before
 * the SQ slots are freed (consumer index), as on the host.
 * Return: CQEs consumed (0 when none, or another thread polls).
 */
DVX_DEV int dvx_p2p_dev_q_poll(const struct dvx_p2p_dev_q &q)
{
	struct dvx_p2p_dev_qstate *st = dvx_p2p_dev_qst(q);
	struct dvx_mlx5_cqe_info info;
	uint64_t ci, ready, cq_ci;
	int n = 0, r;

	if (atomicCAS(&st->poll_lock, 0u, 1u) != 0u)
		return 0;
	ci = dvx_dev_ld_relaxed_gpu(&st->ci);
	cq_ci = dvx_dev_ld_relaxed_gpu(&st->cq_ci);
	ready = dvx_dev_ld_acquire_gpu(&st->ctrs.ready);
	while (ci < ready) {
		r = dvx_dev_cq_poll(q.cq, &cq_ci, &info, 0);
		if (r == -ETIMEDOUT)
			break;
		if (r == 1 && info.wqe_counter != (uint16_t)ci)
			r = -EPROTO;	/* one CQE per WQE, in order: a broken invariant */
		if (r < 0) {
			if (!st->err) {
				st->syndrome = info.syndrome;
				st->vendor_syndrome = info.vendor_syndrome;
				st->wqe_opcode = info.wqe_opcode;
				st->err_wqe = info.wqe_counter;
				st->err_qpn = info.qpn;
				dvx_dev_fence(false);
				*(volatile int32_t *)&st->err = r;
			}
		} else if (!st->err) {
			dvx_dev_st_release_gpu(&st->completed, ci + 1);
		}
		ci++;
		n++;
	}
	if (n) {
		st->cq_ci = cq_ci;
		/* the CQ record (written by dvx_dev_cq_poll) before the slots are freed */
		dvx_dev_fence(true);
		dvx_dev_st_release_sys(&st->ci, ci);
	}
	dvx_dev_fence(false);
	atomicExch(&st->poll_lock, 0u);
	return n;
}

/**
 * dvx_p2p_dev_q_reserve() - claim @n slots of a lane queue, polling its CQ for room.
 * Return: 0 and *@ticket; -ETIMEDOUT (nothing claimed); the queue's error; -EINVAL.
 */
DVX_DEV int dvx_p2p_dev_q_reserve(const struct dvx_p2p_dev_q &q, uint32_t n, uint64_t timeout_ns,
				  uint64_t *ticket)
{
	uint64_t deadline = 0;
	int err;

	for (;;) {
		err = dvx_p2p_dev_q_err(q);
		if (err)
			return err;
		err = dvx_dev_sq_reserve(q.sq, n, 0, ticket);
		if (err != -ETIMEDOUT)
			return err;
		if (dvx_p2p_dev_q_poll(q))
			continue;
		if (!deadline)
			deadline = dvx_dev_deadline(timeout_ns);
		else if (dvx_dev_now_ns() >= deadline)
			return -ETIMEDOUT;
		__nanosleep(128);
	}
}

/**
 * dvx_p2p_dev_q_wait() - wait until WQE @idx of the queue completed.
 * Return: 0; the error CQE's errno if it or an earlier WQE failed; -ETIMEDOUT;
 * -EINVAL for an index never handed out.
 */
DVX_DEV int dvx_p2p_dev_q_wait(const struct dvx_p2p_dev_q &q, uint64_t idx, uint64_t timeout_ns)
{
	struct dvx_p2p_dev_qstate *st = dvx_p2p_dev_qst(q);
	uint64_t deadline = 0;
	int err;

	if (idx >= dvx_dev_ld_relaxed_gpu(&st->ctrs.resv))
		return -EINVAL;
	for (;;) {
		if (dvx_dev_ld_acquire_gpu(&st->completed) > idx)
			return 0;
		err = dvx_p2p_dev_q_err(q);
		if (err)
			return err;
		if (dvx_p2p_dev_q_poll(q))
			continue;
		if (!deadline)
			deadline = dvx_dev_deadline(timeout_ns);
		else if (dvx_dev_now_ns() >= deadline)
			return -ETIMEDOUT;
		__nanosleep(128);
	}
}

/* ---- making an operation (the host's checks, core/p2p_ops.c check()) ---- */

/**
 * dvx_p2p_dev_in_bounds() - whether [@off, @off + @len) lies inside a buffer of @size
 * bytes, without overflowing.
 * @off:	offset into the buffer
 * @len:	bytes
 * @size:	the buffer's length
 *
 * Context: device, any thread. Return: true when it does.
 */
DVX_DEV bool dvx_p2p_dev_in_bounds(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

/**
 * dvx_p2p_dev_word_ok() - whether the 8-byte word at @off of a buffer is inside it and
 * 8-byte aligned (a signal or counter target).
 * @addr:	the buffer's address
 * @off:	offset of the word
 * @size:	the buffer's length
 *
 * Context: device, any thread. Return: true when it is.
 */
DVX_DEV bool dvx_p2p_dev_word_ok(uint64_t addr, uint64_t off, uint64_t size)
{
	return dvx_p2p_dev_in_bounds(off, 8, size) && ((addr + off) & 7u) == 0;
}

/**
 * dvx_p2p_dev_op_make() - resolve an operation for lane @l. NULL buffers leave that
 * part out (src/dst: no data; sig: no signal; ctr: no counter).
 * Return: 0; -EINVAL (bounds, alignment, a missing key, nothing to do, bad flags);
 * -EOPNOTSUPP (a counter on a lane without companion).
 */
DVX_DEV int dvx_p2p_dev_op_make(const struct dvx_p2p_dev_lane &l, const struct dvx_p2p_lbuf *src,
				uint64_t soff, const struct dvx_p2p_rbuf *dst, uint64_t doff,
				uint64_t len, const struct dvx_p2p_rbuf *sig, uint64_t sigoff,
				uint64_t add, uint32_t flags, const struct dvx_p2p_lbuf *ctr,
				uint64_t ctroff, struct dvx_p2p_dev_op *op)
{
	uint32_t nic = l.nic;

	if (nic >= DVX_P2P_MAX_NICS || (flags & ~(uint32_t)DVX_P2P_FENCE))
		return -EINVAL;
	memset(op, 0, sizeof(*op));
	if (src || dst || len) {
		if (!src || !dst || !len || !dvx_p2p_dev_in_bounds(soff, len, src->len) ||
		    !dvx_p2p_dev_in_bounds(doff, len, dst->len) || !src->lkey[nic] ||
		    !dst->rkey[nic])
			return -EINVAL;
		op->laddr = src->addr + soff;
		op->lkey = src->lkey[nic];
		op->raddr = dst->addr + doff;
		op->rkey = dst->rkey[nic];
		op->len = len;
	}
	if (sig) {
		if (!dvx_p2p_dev_word_ok(sig->addr, sigoff, sig->len) || !sig->rkey[nic])
			return -EINVAL;
		op->has_sig = 1;
		op->sig_addr = sig->addr + sigoff;
		op->sig_rkey = sig->rkey[nic];
		op->add = add;
		op->flags = flags;
	}
	if (ctr) {
		if (!l.has_comp)
			return -EOPNOTSUPP;
		if (!dvx_p2p_dev_word_ok(ctr->addr, ctroff, ctr->len) || !ctr->rkey[nic])
			return -EINVAL;
		op->has_ctr = 1;
		op->ctr_addr = ctr->addr + ctroff;
		op->ctr_rkey = ctr->rkey[nic];
	}
	if (!op->len && !op->has_sig)
		return -EINVAL;
	return 0;
}

/** dvx_p2p_dev_op_nmain() - main-QP WQEs of @op. */
DVX_DEV uint32_t dvx_p2p_dev_op_nmain(const struct dvx_p2p_dev_op &op)
{
	return (uint32_t)((op.len + DVX_P2P_MAX_SPLIT - 1) / DVX_P2P_MAX_SPLIT) + op.has_sig;
}

/**
 * dvx_p2p_dev_build_main() - write an operation's main-QP WQEs at [@t, @t + nmain).
 * @wq:		the main SQ's ring (dvx_dev_sq_wq())
 * @l:		the lane (its sink lkey receives the signal fetch-add's old value)
 * @op:	the resolved operation: WRITEs split at DVX_P2P_MAX_SPLIT, then the signal
 * @t:		the first reserved slot (dvx_p2p_dev_op_nmain() slots reserved)
 *
 * Every WQE is signaled. A failed builder leaves signaled NOPs in all the slots, so the
 * ring and the CQ stay in step.
 *
 * Context: device, the thread holding the reservation. Return: 0 or the builder's
 * negative errno.
 */
DVX_DEV int dvx_p2p_dev_build_main(const struct dvx_mlx5_wq *wq, const struct dvx_p2p_dev_lane &l,
				   const struct dvx_p2p_dev_op &op, uint64_t t)
{
	uint32_t nw = (uint32_t)((op.len + DVX_P2P_MAX_SPLIT - 1) / DVX_P2P_MAX_SPLIT), w = 0, i;
	int r = 0;

	for (i = 0; i < nw && r >= 0; i++) {
		uint64_t off = (uint64_t)i * DVX_P2P_MAX_SPLIT;
		uint64_t chunk = op.len - off < DVX_P2P_MAX_SPLIT ? op.len - off : DVX_P2P_MAX_SPLIT;

		r = dvx_mlx5_wqe_rdma_write(wq, (uint32_t)(t + w++), DVX_P2P_DEV_CE,
					    op.raddr + off, op.rkey, op.laddr + off, op.lkey,
					    (uint32_t)chunk);
	}
	if (r >= 0 && op.has_sig)
		r = dvx_mlx5_wqe_atomic_fa(wq, (uint32_t)(t + w++),
					   DVX_P2P_DEV_CE |
					   ((op.flags & DVX_P2P_FENCE) ? DVX_P2P_DEV_FENCE : 0),
					   op.sig_addr, op.sig_rkey, op.add, 0, l.sink_lkey);
	if (r < 0) {
		for (i = 0; i < nw + op.has_sig; i++)
			dvx_mlx5_wqe_nop(wq, (uint32_t)(t + i), DVX_P2P_DEV_CE);
		return r;
	}
	return 0;
}

/**
 * dvx_p2p_dev_build_comp() - write the companion's two WQEs at [@c, @c + 2): a WAIT
 * on the main CQ for main WQE @last, then the loopback fetch-add of 1 on the counter.
 * @cwq:	the companion SQ's ring
 * @l:		the lane (main CQ number and base, sink lkey)
 * @op:	the operation (counter address and rkey)
 * @c:		the first of two reserved companion slots
 * @last:	the main SQ index of the operation's last WQE
 *
 * Context: device, the thread holding the reservation. Return: nothing.
 */
DVX_DEV void dvx_p2p_dev_build_comp(const struct dvx_mlx5_wq *cwq, const struct dvx_p2p_dev_lane &l,
				    const struct dvx_p2p_dev_op &op, uint64_t c, uint64_t last)
{
	dvx_mlx5_wqe_wait_cq(cwq, (uint32_t)c, DVX_P2P_DEV_CE, l.main.cqn,
			     (l.main.cq_base + (uint32_t)last) & 0xffffffu);
	dvx_mlx5_wqe_atomic_fa(cwq, (uint32_t)(c + 1), DVX_P2P_DEV_CE, op.ctr_addr, op.ctr_rkey, 1,
			       0, l.sink_lkey);
}

/**
 * dvx_p2p_dev_nop_fill() - fill reserved slots of @q with signaled NOPs and publish them.
 * @q:		the lane queue
 * @t:		the first reserved slot
 * @n:		slots reserved
 * @timeout_ns:	bound for the publish wait
 *
 * A counter post whose main QP had no room gives its companion slots back this way;
 * ring and CQ stay in step. The publish's result is not returned (a timeout there
 * means an earlier poster never published, which the queue's next user meets too).
 *
 * Context: device, the thread holding the reservation. Return: nothing.
 */
DVX_DEV void dvx_p2p_dev_nop_fill(const struct dvx_p2p_dev_q &q, uint64_t t, uint32_t n,
				  uint64_t timeout_ns)
{
	struct dvx_mlx5_wq wq = dvx_dev_sq_wq(q.sq);

	for (uint32_t i = 0; i < n; i++)
		dvx_mlx5_wqe_nop(&wq, (uint32_t)(t + i), DVX_P2P_DEV_CE);
	dvx_dev_sq_publish(q.sq, t, n, timeout_ns);
}

/**
 * dvx_p2p_dev_post_op() - thread scope: post @op on lane @l.
 * Return: 0 and the ticket (lane, last main WQE); -ETIMEDOUT (no room: nothing
 * posted; or an earlier poster never published: the lane needs a reset); the lane's
 * error; -EINVAL.
 */
DVX_DEV int dvx_p2p_dev_post_op(const struct dvx_p2p_dev_lane &l, const struct dvx_p2p_dev_op &op,
				uint64_t timeout_ns, struct dvx_p2p_ticket *tk)
{
	struct dvx_mlx5_wq wq = dvx_dev_sq_wq(l.main.sq);
	uint32_t n = dvx_p2p_dev_op_nmain(op);
	uint64_t t, c = 0;
	int err, berr;

	if (!n || n > l.main.sq.nwqebb)
		return -EINVAL;
	if (op.has_ctr && (err = dvx_p2p_dev_q_err(l.comp)))
		return err;
	/* the companion first: a poster holding main slots while it waits for companion
	 * room would deadlock (the companion's WAITs need those main WQEs published) */
	if (op.has_ctr) {
		err = dvx_p2p_dev_q_reserve(l.comp, 2, timeout_ns, &c);
		if (err)
			return err;
	}
	err = dvx_p2p_dev_q_reserve(l.main, n, timeout_ns, &t);
	if (err) {
		if (op.has_ctr)
			dvx_p2p_dev_nop_fill(l.comp, c, 2, timeout_ns);
		return err;
	}
	berr = dvx_p2p_dev_build_main(&wq, l, op, t);
	err = dvx_dev_sq_publish(l.main.sq, t, n, timeout_ns);
	if (op.has_ctr) {
		struct dvx_mlx5_wq cwq = dvx_dev_sq_wq(l.comp.sq);
		int cerr;

		dvx_p2p_dev_build_comp(&cwq, l, op, c, t + n - 1);
		cerr = dvx_dev_sq_publish(l.comp.sq, c, 2, timeout_ns);
		err = err ? err : cerr;
	}
	if (tk) {
		tk->peer = l.peer;
		tk->lane = l.index;
		tk->idx = t + n - 1;
	}
	return err ? err : berr;
}

/**
 * dvx_p2p_dev_post() - the common front of the thread-scope calls: find the lane
 * (@peer, @channel), resolve the operation and post it.
 * @d:		the device view of the transport
 * @peer:	the target rank
 * @channel:	selects the lane (modulo the lanes per peer)
 * @src:	local source buffer and @soff offset, or NULL (no data)
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
 * @timeout_ns:	bound for each wait
 * @tk:		optional: receives the ticket
 *
 * Context: device, any thread. Return: as dvx_p2p_dev_post_op(); -EINVAL for a bad
 * peer or operation (dvx_p2p_dev_op_make()).
 */
DVX_DEV int dvx_p2p_dev_post(const struct dvx_p2p_dev &d, int peer, uint32_t channel,
			     const struct dvx_p2p_lbuf *src, uint64_t soff,
			     const struct dvx_p2p_rbuf *dst, uint64_t doff, uint64_t len,
			     const struct dvx_p2p_rbuf *sig, uint64_t sigoff, uint64_t add,
			     uint32_t flags, const struct dvx_p2p_lbuf *ctr, uint64_t ctroff,
			     uint64_t timeout_ns, struct dvx_p2p_ticket *tk)
{
	const struct dvx_p2p_dev_lane *l = dvx_p2p_dev_lane_of(d, peer, channel);
	struct dvx_p2p_dev_op op;
	int err;

	if (!l)
		return -EINVAL;
	err = dvx_p2p_dev_op_make(*l, src, soff, dst, doff, len, sig, sigoff, add, flags, ctr,
				  ctroff, &op);
	return err ? err : dvx_p2p_dev_post_op(*l, op, timeout_ns, tk);
}

/** dvx_p2p_dev_put() - RDMA WRITE @len bytes (split at 1 GiB); as dvx_p2p_put(). */
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

/** dvx_p2p_dev_put_signal() - put, then fetch-add @add on the peer's signal. */
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

/** dvx_p2p_dev_signal() - fetch-add @add on the peer's signal (DVX_P2P_FENCE: fenced). */
DVX_DEV int dvx_p2p_dev_signal(const struct dvx_p2p_dev &d, int peer, uint32_t channel,
			       const struct dvx_p2p_rbuf *sig, uint64_t sigoff, uint64_t add,
			       uint32_t flags, uint64_t timeout_ns, struct dvx_p2p_ticket *tk)
{
	if (!sig)
		return -EINVAL;
	return dvx_p2p_dev_post(d, peer, channel, nullptr, 0, nullptr, 0, 0, sig, sigoff, add,
				flags, nullptr, 0, timeout_ns, tk);
}

/** dvx_p2p_dev_put_counter() - put, then +1 on the local counter once acknowledged. */
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

/** dvx_p2p_dev_put_signal_counter() - put_signal, then the counter. */
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

/** dvx_p2p_dev_signal_counter() - signal, then the counter once it completed. */
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
 * Return: 0; the lane's error CQE errno; -ETIMEDOUT (wait again if you like); -EINVAL.
 */
DVX_DEV int dvx_p2p_dev_wait_local(const struct dvx_p2p_dev &d, const struct dvx_p2p_ticket &tk,
				   uint64_t timeout_ns)
{
	const struct dvx_p2p_dev_lane *l = tk.lane < d.nlanes ?
		dvx_p2p_dev_lane_of(d, (int)tk.peer, tk.lane) : nullptr;

	return l ? dvx_p2p_dev_q_wait(l->main, tk.idx, timeout_ns) : -EINVAL;
}

/** dvx_p2p_dev_read_signal() - acquire load (system scope) of a signal word. */
DVX_DEV uint64_t dvx_p2p_dev_read_signal(const uint64_t *word)
{
	return dvx_dev_ld_acquire_sys(word);
}

/** dvx_p2p_dev_read_counter() - acquire load (system scope) of a counter word. */
DVX_DEV uint64_t dvx_p2p_dev_read_counter(const uint64_t *word)
{
	return dvx_dev_ld_acquire_sys(word);
}

/**
 * dvx_p2p_dev_cmp_holds() - evaluate (@v @cmp @e).
 * @cmp:	DVX_CMP_*
 * @v:		the observed value
 * @e:		the expected value
 *
 * Context: device, any thread. Return: 1 when it holds, 0 when not, -EINVAL for an
 * unknown @cmp.
 */
DVX_DEV int dvx_p2p_dev_cmp_holds(uint32_t cmp, uint64_t v, uint64_t e)
{
	switch (cmp) {
	case DVX_CMP_GE: return v >= e;
	case DVX_CMP_GT: return v > e;
	case DVX_CMP_EQ: return v == e;
	case DVX_CMP_NE: return v != e;
	case DVX_CMP_LE: return v <= e;
	case DVX_CMP_LT: return v < e;
	default: return -EINVAL;
	}
}

/**
 * dvx_p2p_dev_wait_signal() - wait until (*@word @cmp @expected) holds.
 * @word:	the device address of a local signal word (registered host or GPU memory)
 * @observed:	optional: the last value read
 * Return: 0; -ETIMEDOUT; -EINVAL (bad comparison, NULL/misaligned word).
 */
DVX_DEV int dvx_p2p_dev_wait_signal(const uint64_t *word, uint32_t cmp, uint64_t expected,
				    uint64_t timeout_ns, uint64_t *observed = nullptr)
{
	uint64_t deadline = 0, v;
	int h;

	if (!word || ((uintptr_t)word & 7u) || cmp > DVX_CMP_LT)
		return -EINVAL;
	for (;;) {
		v = dvx_p2p_dev_read_signal(word);
		if (observed)
			*observed = v;
		h = dvx_p2p_dev_cmp_holds(cmp, v, expected);
		if (h)
			return h < 0 ? h : 0;
		if (!deadline)
			deadline = dvx_dev_deadline(timeout_ns);
		else if (dvx_dev_now_ns() >= deadline)
			return -ETIMEDOUT;
		__nanosleep(128);
	}
}

/**
 * dvx_p2p_dev_wait_counter() - wait until (*@word @cmp @expected) holds while watching
 * the lane (@peer, @channel) that raises it: its queues are polled and its (or its
 * companion's) error is returned instead of waiting on.
 * Return: 0; -ETIMEDOUT; the lane's error; -EINVAL.
 */
DVX_DEV int dvx_p2p_dev_wait_counter(const struct dvx_p2p_dev &d, int peer, uint32_t channel,
				     const uint64_t *word, uint32_t cmp, uint64_t expected,
				     uint64_t timeout_ns, uint64_t *observed = nullptr)
{
	const struct dvx_p2p_dev_lane *l = dvx_p2p_dev_lane_of(d, peer, channel);
	uint64_t deadline = 0, v;
	int h, err;

	if (!l || !word || ((uintptr_t)word & 7u) || cmp > DVX_CMP_LT)
		return -EINVAL;
	for (;;) {
		v = dvx_p2p_dev_read_counter(word);
		if (observed)
			*observed = v;
		h = dvx_p2p_dev_cmp_holds(cmp, v, expected);
		if (h)
			return h < 0 ? h : 0;
		err = dvx_p2p_dev_q_err(l->main);
		if (!err && l->has_comp)
			err = dvx_p2p_dev_q_err(l->comp);
		if (err)
			return err;
		dvx_p2p_dev_q_poll(l->main);
		if (l->has_comp)
			dvx_p2p_dev_q_poll(l->comp);
		if (!deadline)
			deadline = dvx_dev_deadline(timeout_ns);
		else if (dvx_dev_now_ns() >= deadline)
			return -ETIMEDOUT;
		__nanosleep(128);
	}
}

/**
 * dvx_p2p_dev_q_drain() - wait until everything published on @q so far has completed.
 * @q:		the lane queue (its CQ is polled while waiting)
 * @deadline:	%globaltimer deadline (dvx_dev_deadline())
 *
 * Context: device, any thread. Return: 0; the queue's error; -ETIMEDOUT.
 */
DVX_DEV int dvx_p2p_dev_q_drain(const struct dvx_p2p_dev_q &q, uint64_t deadline)
{
	struct dvx_p2p_dev_qstate *st = dvx_p2p_dev_qst(q);
	uint64_t end = dvx_dev_ld_acquire_gpu(&st->ctrs.ready);
	int err;

	for (;;) {
		if (dvx_dev_ld_acquire_gpu(&st->completed) >= end)
			return 0;
		err = dvx_p2p_dev_q_err(q);
		if (err)
			return err;
		if (dvx_p2p_dev_q_poll(q))
			continue;
		if (dvx_dev_now_ns() >= deadline)
			return -ETIMEDOUT;
		__nanosleep(128);
	}
}

/**
 * dvx_p2p_dev_flush() - wait until every operation published so far on @channel's lanes
 * (to every peer), companions included, has completed.
 * Return: 0; the first lane error; -ETIMEDOUT.
 */
DVX_DEV int dvx_p2p_dev_flush(const struct dvx_p2p_dev &d, uint32_t channel, uint64_t timeout_ns)
{
	uint64_t deadline = dvx_dev_deadline(timeout_ns);
	int err;

	for (int p = 0; p < d.nranks; p++) {
		const struct dvx_p2p_dev_lane *l = dvx_p2p_dev_lane_of(d, p, channel);

		if (!l)
			continue;
		err = dvx_p2p_dev_q_drain(l->main, deadline);
		if (!err && l->has_comp)
			err = dvx_p2p_dev_q_drain(l->comp, deadline);
		if (err)
			return err;
	}
	return 0;
}

/**
 * dvx_p2p_dev_group_make() - resolve the group part of a warp- or block-scope call (a
 * signal and/or a counter), checked as the host does.
 * @l:		the lane
 * @sig:	the peer's signal buffer, or NULL
 * @sigoff:	offset of the signal word
 * @add:	the signal's addend
 * @flags:	DVX_P2P_FENCE or 0
 * @ctr:	the local counter buffer, or NULL
 * @ctroff:	offset of the counter word
 * @gop:	set to the group operation (no data part)
 *
 * Context: device, the group's leader only. Return: 0; -EINVAL (bounds, alignment,
 * a missing key, bad flags); -EOPNOTSUPP (a counter on a lane without companion).
 */
DVX_DEV int dvx_p2p_dev_group_make(const struct dvx_p2p_dev_lane &l, const struct dvx_p2p_rbuf *sig,
				   uint64_t sigoff, uint64_t add, uint32_t flags,
				   const struct dvx_p2p_lbuf *ctr, uint64_t ctroff,
				   struct dvx_p2p_dev_op *gop)
{
	uint32_t nic = l.nic;

	memset(gop, 0, sizeof(*gop));
	if (nic >= DVX_P2P_MAX_NICS || (flags & ~(uint32_t)DVX_P2P_FENCE))
		return -EINVAL;
	if (sig) {
		if (!dvx_p2p_dev_word_ok(sig->addr, sigoff, sig->len) || !sig->rkey[nic])
			return -EINVAL;
		gop->has_sig = 1;
		gop->sig_addr = sig->addr + sigoff;
		gop->sig_rkey = sig->rkey[nic];
		gop->add = add;
		gop->flags = flags;
	}
	if (ctr) {
		if (!l.has_comp)
			return -EOPNOTSUPP;
		if (!dvx_p2p_dev_word_ok(ctr->addr, ctroff, ctr->len) || !ctr->rkey[nic])
			return -EINVAL;
		gop->has_ctr = 1;
		gop->ctr_addr = ctr->addr + ctroff;
		gop->ctr_rkey = ctr->rkey[nic];
	}
	return 0;
}

/**
 * dvx_p2p_dev_group_reserve() - the leader's reservation for a group call.
 * @l:		the lane
 * @nmain:	main slots: the group's WRITEs and its signal (not 0)
 * @nc:	companion slots (2 with a counter, else 0)
 * @timeout_ns:	bound for each wait for room
 * @t:		set to the first main slot
 * @c:		set to the first companion slot (when @nc)
 *
 * The companion is reserved first, as dvx_p2p_dev_post_op() does; when the main SQ
 * then has no room the companion slots are given back as NOPs.
 *
 * Context: device, the group's leader only. Return: 0; -EINVAL (nothing to do, more
 * than a ring); the companion's error; -ETIMEDOUT (nothing reserved).
 */
DVX_DEV int dvx_p2p_dev_group_reserve(const struct dvx_p2p_dev_lane &l, uint32_t nmain, uint32_t nc,
				      uint64_t timeout_ns, uint64_t *t, uint64_t *c)
{
	int err;

	if (!nmain)
		return -EINVAL;		/* nothing to do */
	if (nmain > l.main.sq.nwqebb || (nc && nc > l.comp.sq.nwqebb))
		return -EINVAL;
	if (nc && (err = dvx_p2p_dev_q_err(l.comp)))
		return err;
	if (nc && (err = dvx_p2p_dev_q_reserve(l.comp, nc, timeout_ns, c)))
		return err;
	err = dvx_p2p_dev_q_reserve(l.main, nmain, timeout_ns, t);
	if (err && nc)
		dvx_p2p_dev_nop_fill(l.comp, *c, nc, timeout_ns);
	return err;
}

/**
 * dvx_p2p_dev_group_finish() - the leader's end of a group call, after every member's
 * WRITE stores.
 * @l:		the lane
 * @gop:	the group operation (dvx_p2p_dev_group_make())
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
 * -ETIMEDOUT (an earlier poster never published: the lane needs a reset); the
 * builder's error (its slots then hold NOPs, which are published).
 */
DVX_DEV int dvx_p2p_dev_group_finish(const struct dvx_p2p_dev_lane &l, const struct dvx_p2p_dev_op &gop,
				     uint64_t t, uint32_t total, uint32_t nmain, uint64_t c,
				     uint64_t timeout_ns)
{
	int berr = 0, err;

	if (gop.has_sig) {
		struct dvx_mlx5_wq wq = dvx_dev_sq_wq(l.main.sq);

		berr = dvx_p2p_dev_build_main(&wq, l, gop, t + total);
	}
	err = dvx_dev_sq_publish(l.main.sq, t, nmain, timeout_ns);
	if (gop.has_ctr) {
		struct dvx_mlx5_wq cwq = dvx_dev_sq_wq(l.comp.sq);
		int cerr;

		dvx_p2p_dev_build_comp(&cwq, l, gop, c, t + nmain - 1);
		cerr = dvx_dev_sq_publish(l.comp.sq, c, 2, timeout_ns);
		err = err ? err : cerr;
	}
	return err ? err : berr;
}

/**
 * dvx_p2p_dev_post_warp() - warp scope: the warp posts its lanes' data and ONE signal
 * (and at most one counter increment) for all of it, on the one lane (@peer, @channel).
 * @d, @peer, @channel:	warp-uniform: the lane
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
 * The same rule as dvx_p2p_dev_post_block(), for 32 threads: lane 0 checks the group
 * part and reserves the warp's main (and companion) slots, every lane with data builds
 * its WRITE(s) at its place (a warp prefix sum), lane 0 builds the signal after the
 * last WRITE, __syncwarp(), lane 0 publishes and rings once, then posts the companion's
 * WAIT and fetch-add. A put_signal at warp scope therefore raises the signal once per
 * call per warp (not once per GPU lane); for one signal per thread, use the thread-scope
 * calls. The warp's WQEs (WRITEs + 1) must fit the lane's ring (else -EINVAL).
 *
 * Bad input changes nothing: when any lane's data or the group part is invalid, nothing
 * is posted, that lane gets its -EINVAL and the others -ECANCELED; no data and no signal
 * in the whole warp is -EINVAL.
 * Context: all 32 lanes of the warp, converged (full mask). Return: 0; -ETIMEDOUT (no
 * room: nothing posted; or publish order: the lane needs a reset); the lane's error;
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
	struct dvx_p2p_dev_op op, gop;
	uint32_t lane = dvx_dev_lane(), n = 0, incl, total, nmain = 0, nc = 0;
	uint64_t t = 0, c = 0;
	int oerr = 0, gerr = 0, err = 0, berr = 0;

	if (!l)
		return -EINVAL;		/* warp-uniform: every lane returns */
	if (len || src || dst) {
		oerr = dvx_p2p_dev_op_make(*l, src, soff, dst, doff, len, nullptr, 0, 0, 0,
					   nullptr, 0, &op);
		if (!oerr)
			n = dvx_p2p_dev_op_nmain(op);
	}
	if (lane == 0)
		gerr = dvx_p2p_dev_group_make(*l, sig, sigoff, add, flags, ctr, ctroff, &gop);
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
	if (n) {
		struct dvx_mlx5_wq wq = dvx_dev_sq_wq(l->main.sq);

		berr = dvx_p2p_dev_build_main(&wq, *l, op, t + (incl - n));
	}
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

/** dvx_p2p_dev_put_signal_warp() - warp scope: each lane's put, one signal after. */
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
 * @d, @peer, @channel:	block-uniform: the lane
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
 * (companion first, as dvx_p2p_dev_post_op()); every thread with data builds its
 * WRITE(s) at its place in the reserved range (a block prefix sum); thread 0 builds
 * the signal after the last WRITE; a block barrier; thread 0 publishes and rings once,
 * then builds and publishes the companion's WAIT and fetch-add. The block's WQEs
 * (WRITEs + 1) must fit the lane's ring (else -EINVAL).
 *
 * Bad input changes nothing: when any thread's data or the group part is invalid,
 * nothing is posted, that thread gets its -EINVAL and the others -ECANCELED.
 * Context: every thread of the block, like __syncthreads() (any block shape). Uses
 * static shared memory (a few hundred bytes). Return: 0; -ETIMEDOUT (no room: nothing
 * posted; or publish order: the lane needs a reset); the lane's error; -EINVAL;
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
	struct dvx_p2p_dev_op op, gop;
	uint32_t tid = dvx_dev_block_tid(), n = 0, total, excl, nmain;
	int oerr = 0, gerr = 0, err, berr = 0;

	if (!l)
		return -EINVAL;		/* block-uniform: every thread returns */
	if (len || src || dst) {
		oerr = dvx_p2p_dev_op_make(*l, src, soff, dst, doff, len, nullptr, 0, 0, 0,
					   nullptr, 0, &op);
		if (!oerr)
			n = dvx_p2p_dev_op_nmain(op);
	}
	if (tid == 0)
		s_err = dvx_p2p_dev_group_make(*l, sig, sigoff, add, flags, ctr, ctroff, &gop);
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
	if (n) {
		struct dvx_mlx5_wq wq = dvx_dev_sq_wq(l->main.sq);

		berr = dvx_p2p_dev_build_main(&wq, *l, op, s_t + excl);
	}
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

/** dvx_p2p_dev_put_signal_block() - block scope: each thread's put, one signal after. */
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
