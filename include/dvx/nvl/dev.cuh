/* SPDX-License-Identifier: MIT */
/*
 * dvx/nvl/dev.cuh - the NVLink path's device API: put, signal, put_signal, counters
 * and waits on peer memory mapped by dvx_nvl_exchange(), for any group (the operations
 * themselves are dvx/nvl/ops.h, shared with the host).
 *
 * Scopes: every call takes the group that makes it (struct dvx_dev_grp,
 * dvx/gpu/grp.cuh: dvx_dev_thread(), dvx_dev_warp(), dvx_dev_block(), dvx_dev_tile()),
 * and every thread of the group passes the same arguments. One body serves every
 * scope (dvx_nvl_dev_post()): the group copies cooperatively (each thread a share,
 * 16-byte vectors, coalesced), then synchronises; what follows the copy (one signal,
 * one counter add) is done once, by the group's leader, after the whole group's data
 * is visible at system scope: one signal per call per group, the same rule as the IB
 * path (dvx/p2p/dev.cuh). A thread alone signals with a release; a group's leader
 * fences once for the group, then writes relaxed.
 *
 * Waits: the leader polls with acquire loads until the comparison holds or the
 * timeout (%globaltimer) passes; the group learns the result; a timeout is
 * -ETIMEDOUT, never a satisfied wait.
 */
#ifndef DVX_NVL_DEV_CUH
#define DVX_NVL_DEV_CUH

#include <dvx/nvl/ops.h>

#ifdef __CUDACC__

#include <dvx/gpu/post.cuh>

/**
 * struct dvx_nvl_notify - what follows a group's copy: one signal on the peer's word
 * and this rank's counter, each once for the group.
 * @sig:	the peer's signal word (through the mapping), or NULL
 * @op:		DVX_NVL_SIG_SET or DVX_NVL_SIG_ADD (DVX_NVL_SIG_RELAXED: no ordering, at
 *		thread scope)
 * @value:	what is stored or added
 * @ctr:	this rank's counter word, or NULL (an NVL counter means what an IB one
 *		does: this rank's data has landed)
 * @ctr_value:	the counter's addend
 */
struct dvx_nvl_notify {
	uint64_t *sig;
	uint32_t op;
	uint64_t value;
	uint64_t *ctr;
	uint64_t ctr_value;
};

/**
 * dvx_nvl_dev_post() - the group copies @len bytes from @src to @dst (a peer's mapped
 * buffer), synchronises, then its leader signals and raises the counter of @n once
 * all of the group's data is visible.
 * @g:		the group (every thread passes the same arguments)
 * @dst:	destination
 * @src:	source (this GPU's memory, or another mapping)
 * @len:	bytes (0: none)
 * @n:		the signal and counter, or NULL (a plain put: nothing is fenced; follow
 *		with a signal, a counter or dvx_nvl_flush() to order the data)
 *
 * Context: device; every thread of @g together. Return: 0, -EINVAL for an unknown
 * signal op (the data is copied and the counter raised either way).
 */
DVX_DEV int dvx_nvl_dev_post(const struct dvx_dev_grp &g, void *dst, const void *src,
			     uint64_t len, const struct dvx_nvl_notify *n)
{
	uint32_t relaxed = g.scope == DVX_DEV_THREAD ? 0u : DVX_NVL_SIG_RELAXED;
	int err = 0;

	dvx_nvl_copy(dst, src, len, g.lane, g.size);
	dvx_dev_grp_sync(g);
	if (!n)
		return 0;
	if (g.lane == 0) {
		if (relaxed)
			dvx_nvl_flush();	/* the group's stores, observed through the sync */
		if (n->sig)
			err = dvx_nvl_signal(n->sig, n->op | relaxed, n->value);
		if (n->ctr)
			(void)dvx_nvl_signal(n->ctr, DVX_NVL_SIG_ADD | relaxed, n->ctr_value);
	}
	return dvx_dev_grp_bcast(g, err);
}

/**
 * dvx_nvl_dev_put_grid() - copy @len bytes from @src to @dst with every thread of the
 * launch: the threads' 16-byte vectors interleaved across the whole grid (coalesced,
 * each thread DVX_NVL_COPY_UNROLL loads in flight once it has that many), the launch
 * sized to the transfer with dvx_nvl_put_blocks(). Nothing is synchronised or fenced
 * (a grid cannot synchronise): the kernel's end, or a counter per block after
 * __syncthreads() and dvx_nvl_flush(), says the data is there.
 * @dst, @src, @len: as dvx_nvl_dev_post(); every thread passes the same
 *
 * Context: device; every thread of the grid. Return: nothing.
 */
DVX_DEV void dvx_nvl_dev_put_grid(void *dst, const void *src, uint64_t len)
{
	const struct dvx_dev_grp b = dvx_dev_block();
	uint32_t block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);

	dvx_nvl_copy(dst, src, len, block * b.size + b.lane, gridDim.x * gridDim.y * gridDim.z * b.size);
}

/**
 * dvx_nvl_dev_put(), dvx_nvl_dev_put_signal(), dvx_nvl_dev_put_counter(),
 * dvx_nvl_dev_put_signal_counter(), dvx_nvl_dev_signal() - dvx_nvl_dev_post() of one
 * shape each: the copy alone; the copy and one signal; the copy and this rank's
 * counter; the copy, one signal and the counter (@n names both); one signal after the
 * group's earlier writes (no copy).
 * @g, @dst, @src, @len: as dvx_nvl_dev_post()
 * @sig, @op, @value: the signal (struct dvx_nvl_notify)
 * @ctr, @ctr_value: the counter and its addend
 * @n:		the signal and the counter
 *
 * Context: device; every thread of @g together. Return: 0 or -EINVAL (unknown @op).
 */
DVX_DEV int dvx_nvl_dev_put(const struct dvx_dev_grp &g, void *dst, const void *src,
			    uint64_t len)
{
	return dvx_nvl_dev_post(g, dst, src, len, nullptr);
}

DVX_DEV int dvx_nvl_dev_put_signal(const struct dvx_dev_grp &g, void *dst, const void *src,
				   uint64_t len, uint64_t *sig, uint32_t op, uint64_t value)
{
	struct dvx_nvl_notify n = { sig, op, value, nullptr, 0 };

	return dvx_nvl_dev_post(g, dst, src, len, &n);
}

DVX_DEV int dvx_nvl_dev_put_counter(const struct dvx_dev_grp &g, void *dst, const void *src,
				    uint64_t len, uint64_t *ctr, uint64_t ctr_value)
{
	struct dvx_nvl_notify n = { nullptr, 0, 0, ctr, ctr_value };

	return dvx_nvl_dev_post(g, dst, src, len, &n);
}

DVX_DEV int dvx_nvl_dev_put_signal_counter(const struct dvx_dev_grp &g, void *dst,
					   const void *src, uint64_t len,
					   const struct dvx_nvl_notify *n)
{
	return n && n->sig && n->ctr ? dvx_nvl_dev_post(g, dst, src, len, n) : -EINVAL;
}

DVX_DEV int dvx_nvl_dev_signal(const struct dvx_dev_grp &g, uint64_t *sig, uint32_t op,
			       uint64_t value)
{
	struct dvx_nvl_notify n = { sig, op, value, nullptr, 0 };

	return dvx_nvl_dev_post(g, nullptr, nullptr, 0, &n);
}

/**
 * dvx_nvl_dev_wait() - the group waits for a word: the leader polls (dvx_nvl_wait()),
 * the group gets its answer and, after it, what the writer published.
 * @g:		the group
 * @w, @cmp, @value, @timeout_ns: as dvx_nvl_wait()
 *
 * Context: device; every thread of @g together. Return: 0, -ETIMEDOUT or -EINVAL.
 */
DVX_DEV int dvx_nvl_dev_wait(const struct dvx_dev_grp &g, const uint64_t *w, uint32_t cmp,
			     uint64_t value, uint64_t timeout_ns)
{
	int err = 0;

	if (g.lane == 0)
		err = dvx_nvl_wait(w, cmp, value, timeout_ns, nullptr);
	return dvx_dev_grp_bcast(g, err);
}

/**
 * dvx_nvl_dev_put_ll() - a small
 * message as flagged lines (dvx_nvl_ll_put(); docs/mp.md, "Small messages"): the data
 * and its signal in the same stores, no fence. The peer takes it with
 * dvx_nvl_dev_wait_ll() on the same lines and sequence.
 * @g:		the group (dvx/gpu/grp.cuh), its lanes sharing the lines
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
DVX_DEV int dvx_nvl_dev_put_ll(const struct dvx_dev_grp &g, void *lines, const void *src,
			       uint64_t len, uint32_t seq)
{
	int err = dvx_nvl_ll_put(lines, src, len, seq, g.lane, g.size);

	dvx_dev_grp_sync(g);
	return err;
}

/**
 * dvx_nvl_dev_wait_ll() - wait for
 * message @seq in flagged lines of this rank's memory and copy its payload to @dst:
 * every lane polls its share of the lines (dvx_nvl_ll_get()); the group returns
 * together, @dst complete for all of it on success.
 * @g:		the group (dvx/gpu/grp.cuh), its lanes sharing the lines
 * @lines:	the lines, 16-byte aligned
 * @dst:	@len bytes
 * @len:	payload bytes, as the writer's
 * @seq:	the sequence waited for
 * @timeout_ns:	how long
 *
 * Context: device; the scope's whole group. Return: 0; -ETIMEDOUT (some line never
 * came: the lines are left as they are, waiting again is safe); -EINVAL.
 */
DVX_DEV int dvx_nvl_dev_wait_ll(const struct dvx_dev_grp &g, const void *lines, void *dst,
				uint64_t len, uint32_t seq, uint64_t timeout_ns)
{
	int err = dvx_nvl_ll_get(lines, dst, len, seq, g.lane, g.size, timeout_ns);
	/* every lane's share of @dst, to the whole group, and one answer for all */
	bool late = dvx_dev_grp_sync_any(g, err == -ETIMEDOUT);

	return err == -EINVAL ? -EINVAL : late ? -ETIMEDOUT : 0;
}


/* the one-word operations of dvx_nvl_dev_amo(): the values of the IB path's
 * DVX_P2P_AMO_* (dvx/p2p/ops.h) */
#define DVX_NVL_AMO_SET 0u	/* put_value: a system-scope exchange of @value */
#define DVX_NVL_AMO_ADD 1u	/* a system-scope add, the old value not returned */
#define DVX_NVL_AMO_FADD 2u	/* a system-scope fetch-add, the old value into *@old */
#define DVX_NVL_AMO_CSWAP 3u	/* a system-scope compare-swap, the old value into *@old */

/**
 * dvx_nvl_dev_get() - the group copies @len bytes from a peer's mapped buffer @src
 * into @dst (loads through the peer mapping), then synchronises: the bytes are in
 * @dst when it returns.
 * @g:		the group (every thread passes the same arguments)
 * @dst:	destination (this GPU's memory)
 * @src:	the peer's buffer as mapped (dvx_nvl_exchange())
 * @len:	bytes (0: none)
 *
 * The loads see what the peer made visible before the caller's acquire of its signal
 * (dvx_nvl_dev_wait()); nothing else is ordered.
 *
 * Context: device; every thread of @g together. Return: 0.
 */
DVX_DEV int dvx_nvl_dev_get(const struct dvx_dev_grp &g, void *dst, const void *src, uint64_t len)
{
	dvx_nvl_copy(dst, src, len, g.lane, g.size);
	dvx_dev_grp_sync(g);
	return 0;
}

/**
 * dvx_nvl_dev_amo() - each member's one-word operation on a peer's 8-byte word through
 * the mapping: system-scope atomics (atomic with every GPU thread's system-scope
 * atomics on the word, not with a NIC's), then the group synchronises.
 * @g:		the group
 * @word:	this member's word (8-byte aligned; NULL: none)
 * @op:		DVX_NVL_AMO_SET, _ADD, _FADD or _CSWAP
 * @value:	the value written, the addend, or the swap value
 * @compare:	_CSWAP: the value the word must hold
 * @old:	_FADD, _CSWAP (and _SET): where the old value goes (NULL: dropped)
 *
 * Context: device; every thread of @g together. Return: 0; -EINVAL (a misaligned word
 * or an unknown @op on any member: the group's first such error, that member's
 * operation not done).
 */
DVX_DEV int dvx_nvl_dev_amo(const struct dvx_dev_grp &g, uint64_t *word, uint32_t op,
			    uint64_t value, uint64_t compare, uint64_t *old)
{
	unsigned long long *w = (unsigned long long *)word, o = 0;
	int err = 0;

	if (word && (((uintptr_t)word & 7u) || op > DVX_NVL_AMO_CSWAP)) {
		err = -EINVAL;
	} else if (word) {
		switch (op) {
		case DVX_NVL_AMO_SET:
			o = atomicExch_system(w, (unsigned long long)value);
			break;
		case DVX_NVL_AMO_ADD:
		case DVX_NVL_AMO_FADD:
			o = atomicAdd_system(w, (unsigned long long)value);
			break;
		default:
			o = atomicCAS_system(w, (unsigned long long)compare,
					     (unsigned long long)value);
			break;
		}
		if (old && op != DVX_NVL_AMO_ADD)
			*old = (uint64_t)o;
	}
	return dvx_dev_grp_first_err(g, err);
}

/**
 * dvx_nvl_dev_quiet() - this thread's NVL stores and atomics visible at system scope
 * (a system fence), for the group.
 * @g:		the group
 *
 * Context: device; every thread of @g together. Return: 0.
 */
DVX_DEV int dvx_nvl_dev_quiet(const struct dvx_dev_grp &g)
{
	dvx_nvl_flush();
	dvx_dev_grp_sync(g);
	return 0;
}

#endif /* __CUDACC__ */

#endif /* DVX_NVL_DEV_CUH */
