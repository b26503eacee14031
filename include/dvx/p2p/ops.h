/* SPDX-License-Identifier: MIT */
/*
 * dvx/p2p/ops.h - the P2P transport's operations as WQEs, one definition for the host
 * engine (core/p2p/ops.c) and GPU threads (dvx/p2p/dev.cuh):
 *
 *   put                WRITE x ceil(len / 1 GiB)
 *   put_signal         WRITEs, FETCH_ADD(signal) (DVX_P2P_FENCE: fenced)
 *   signal             FETCH_ADD(signal)
 *   reset_signal       an inline WRITE of 8 zero bytes to the signal
 *   *_counter          main WQEs, then on the companion WAIT(main CQ, last main WQE)
 *                      and a loopback FETCH_ADD(counter, 1) whose old value lands in
 *                      the NIC's iova-0 sink
 *   get                READ x ceil(len / 1 GiB) into a local buffer (struct
 *                      dvx_p2p_rxfer; the peer's buffer registered with remote read,
 *                      the lane connected with it: DVX_P2P_F_READ)
 *   put_value          an inline WRITE of one 8-byte value (struct dvx_p2p_amo)
 *   add                FETCH_ADD, the old value into the sink
 *   fetch_add          FETCH_ADD, the old value into the caller's result word
 *   compare_swap       CMP_SWAP, the old value into the caller's result word
 *
 * dvx_p2p_op_make() checks an operation and resolves it to one NIC's addresses and
 * keys; dvx_p2p_op_build_main() and dvx_p2p_op_build_comp() write its WQEs;
 * dvx_p2p_lane_post() posts one operation on a lane (thread scope). Every WQE is one
 * WQEBB and requests a CQE.
 */
#ifndef DVX_P2P_OPS_H
#define DVX_P2P_OPS_H

#include <dvx/p2p/queue.h>

#ifndef __CUDACC__
#include <string.h>
#endif

DVX_BEGIN_DECLS

#define DVX_P2P_MAX_NICS 4
#define DVX_P2P_MAX_SPLIT (1ull << 30)	/* one RDMA WRITE carries at most 1 GiB */

/** flags of struct dvx_p2p_notify */
enum {
	DVX_P2P_FENCE = 1u << 0,	/* the signal's fetch-add waits for earlier WQEs (IBV_SEND_FENCE) */
	DVX_P2P_RESET = 1u << 1,	/* dvx_p2p_op_make() only: zero the signal word instead */
};

/** struct dvx_p2p_amo.op: the one-word operations */
enum {
	DVX_P2P_AMO_SET = 0,	/* put_value: an inline WRITE of @value */
	DVX_P2P_AMO_ADD = 1,	/* fetch-add of @value, the old value discarded (the sink) */
	DVX_P2P_AMO_FADD = 2,	/* fetch-add of @value, the old value into @res */
	DVX_P2P_AMO_CSWAP = 3,	/* @value if the word equals @compare; the old value into @res */
};

/* struct dvx_p2p_op.kind: what its data WQEs are */
enum {
	DVX_P2P_K_WRITE = 0,	/* RDMA WRITEs from laddr to raddr (put) */
	DVX_P2P_K_READ = 1,	/* RDMA READs from raddr into laddr (get) */
	DVX_P2P_K_SET = 2,	/* one inline WRITE of value (put_value) */
	DVX_P2P_K_FADD = 3,	/* one FETCH_ADD of value, old value into laddr/lkey */
	DVX_P2P_K_CSWAP = 4,	/* one CMP_SWAP(compare, value), old value into laddr/lkey */
};

/* every transport WQE asks for a CQE: CQ index == WQE index */
#define DVX_P2P_CE DVX_MLX5_WQE_CTRL_CQ_UPDATE
/* DVX_P2P_FENCE: rdma-core's IBV_SEND_FENCE (prm 2.2, 9.3) */
#define DVX_P2P_WQE_FENCE DVX_MLX5_WQE_CTRL_FM(DVX_MLX5_FM_FENCE_AND_INITIATOR_SMALL)

/* struct dvx_p2p_lbuf.access, struct dvx_p2p_rbuf.access: the remote rights a buffer
 * was registered with on every NIC (the values of DVX_ACCESS_REMOTE_*, dvx/hal/nic.h),
 * valid with DVX_P2P_ACC_KNOWN. Without it (0: a description made by hand) nothing
 * is refused early and the responder decides, as for any bad key. */
enum {
	DVX_P2P_ACC_WRITE = 1u << 1,
	DVX_P2P_ACC_READ = 1u << 2,
	DVX_P2P_ACC_ATOMIC = 1u << 3,
	DVX_P2P_ACC_KNOWN = 1u << 31,
};

/**
 * struct dvx_p2p_lbuf - a local buffer registered on the transport's NICs.
 * @ptr:	where the host (or the GPU) reads it; signals and counters are read here
 * @addr:	the address WQEs use for byte 0 (the MR's iova for it)
 * @len:	bytes
 * @lkey:	per-NIC lkeys (source of puts)
 * @rkey:	per-NIC rkeys (target of the companion's loopback fetch-add: counters)
 * @access:	DVX_P2P_ACC_*: the remote rights of every NIC's registration
 *		(dvx_p2p_lbuf_init() sets it; 0: unknown)
 */
struct dvx_p2p_lbuf {
	void *ptr;
	uint64_t addr;
	uint64_t len;
	uint32_t lkey[DVX_P2P_MAX_NICS];
	uint32_t rkey[DVX_P2P_MAX_NICS];
	uint32_t access;
	uint32_t rsvd;
};

/**
 * struct dvx_p2p_rbuf - a peer's buffer as exchanged: address, per-NIC rkeys and the
 * remote rights its owner registered it with (@access, DVX_P2P_ACC_*; 0: unknown).
 * Fixed size (40 bytes), little-endian on the wire (dvx_p2p_exchange(),
 * dvx_mp_exchange_ib()). A get from a buffer whose known rights lack
 * DVX_P2P_ACC_READ is refused before posting (-EPERM).
 */
struct dvx_p2p_rbuf {
	uint64_t addr;
	uint64_t len;
	uint32_t rkey[DVX_P2P_MAX_NICS];
	uint32_t access;
	uint32_t rsvd;
};

DVX_ASSERT_SIZE(struct dvx_p2p_rbuf, 40);

/**
 * struct dvx_p2p_op - one operation, resolved to a NIC's addresses and keys.
 * @laddr, @raddr, @len: the data (@len 0: none)
 * @sig_addr, @add: the signal fetch-add (@has_sig), or the signal word a reset zeroes
 *		(@reset)
 * @ctr_addr:	the counter fetch-add (@has_ctr)
 * @lkey, @rkey, @sig_rkey, @ctr_rkey: their keys on the lane's NIC
 * @flags:	DVX_P2P_FENCE
 * @has_sig, @has_ctr, @reset: which parts it has
 * @kind:	DVX_P2P_K_*: what the data WQEs are (0: WRITEs)
 * @value, @compare: the one-word operations' operands (DVX_P2P_K_SET, _FADD, _CSWAP)
 */
struct dvx_p2p_op {
	uint64_t laddr;
	uint64_t raddr;
	uint64_t len;
	uint64_t sig_addr;
	uint64_t add;
	uint64_t ctr_addr;
	uint32_t lkey;
	uint32_t rkey;
	uint32_t sig_rkey;
	uint32_t ctr_rkey;
	uint32_t flags;
	uint32_t has_sig;
	uint32_t has_ctr;
	uint32_t reset;
	uint32_t kind;
	uint64_t value;
	uint64_t compare;
};

/**
 * dvx_p2p_in_bounds() - whether [@off, @off + @len) lies inside a buffer of @size bytes,
 * without overflowing.
 * @off:	offset into the buffer
 * @len:	bytes
 * @size:	the buffer's length
 *
 * Context: any, host or device. Return: true when it does.
 */
DVX_INLINE bool dvx_p2p_in_bounds(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

/**
 * dvx_p2p_word_ok() - whether the 8-byte word at @off of a buffer is inside it and
 * 8-byte aligned (a signal or counter target).
 * @addr:	the buffer's address
 * @off:	offset of the word
 * @size:	the buffer's length
 *
 * Context: any, host or device. Return: true when it is.
 */
DVX_INLINE bool dvx_p2p_word_ok(uint64_t addr, uint64_t off, uint64_t size)
{
	return dvx_p2p_in_bounds(off, 8, size) && ((addr + off) & 7u) == 0;
}

/**
 * struct dvx_p2p_xfer - the data part of an operation: @len bytes from @src + @soff to
 * the peer's @dst + @doff (WRITEs, split at 1 GiB).
 * @src:	local source (registered on the lane's NIC), or NULL (no data)
 * @soff:	offset into @src
 * @dst:	the peer's buffer as exchanged, or NULL (no data)
 * @doff:	offset into @dst
 * @len:	bytes (0 with no data)
 *
 * Data is all or nothing: a source, a destination and a length, or none of them. The
 * caller owns the struct and the buffers it names; calls read it during the call only.
 * A GPU thread of a group describes its own part (dvx_p2p_dev_post()).
 */
struct dvx_p2p_xfer {
	const struct dvx_p2p_lbuf *src;
	uint64_t soff;
	const struct dvx_p2p_rbuf *dst;
	uint64_t doff;
	uint64_t len;
};

/**
 * struct dvx_p2p_notify - the notification part of an operation: a fetch-add of @add on
 * the peer's signal word after the data, and a local counter raised by one once the
 * responder acknowledged it.
 * @sig:	the peer's signal buffer, or NULL (no signal)
 * @sigoff:	offset of the signal word (8-byte aligned, inside @sig)
 * @add:	the signal's addend
 * @ctr:	the local counter buffer, or NULL (no counter; needs companions)
 * @ctroff:	offset of the counter word (8-byte aligned, inside @ctr)
 * @flags:	DVX_P2P_FENCE (the signal's fetch-add waits for the earlier WQEs) or 0;
 *		DVX_P2P_RESET only through dvx_p2p_op_make() (dvx_p2p_reset_signal())
 *
 * The caller owns the struct; calls read it during the call only. In a GPU group it is
 * group-uniform (the leader's is used).
 */
struct dvx_p2p_notify {
	const struct dvx_p2p_rbuf *sig;
	uint64_t sigoff;
	uint64_t add;
	const struct dvx_p2p_lbuf *ctr;
	uint64_t ctroff;
	uint32_t flags;
};

/**
 * struct dvx_p2p_rxfer - a get: @len bytes from the peer's @src + @soff into the local
 * @dst + @doff (RDMA READs, split at 1 GiB).
 * @src:	the peer's buffer as exchanged (registered there with remote read)
 * @soff:	offset into @src
 * @dst:	the local destination (registered on the lane's NIC with local write)
 * @doff:	offset into @dst
 * @len:	bytes (at least 1)
 *
 * The caller owns the struct and the buffers; calls read it during the call only. The
 * bytes are in @dst once the get's ticket completed (wait_local, flush, quiet).
 */
struct dvx_p2p_rxfer {
	const struct dvx_p2p_rbuf *src;
	uint64_t soff;
	const struct dvx_p2p_lbuf *dst;
	uint64_t doff;
	uint64_t len;
};

/**
 * struct dvx_p2p_amo - a one-word operation on the peer's 8-byte word @dst + @doff.
 * @dst:	the peer's buffer as exchanged (remote atomic for DVX_P2P_AMO_ADD, _FADD
 *		and _CSWAP, remote write for _SET)
 * @doff:	offset of the word (8-byte aligned, inside @dst)
 * @op:		DVX_P2P_AMO_SET, _ADD, _FADD or _CSWAP
 * @value:	the value written (SET), the addend (ADD, FADD), the swap value (CSWAP)
 * @compare:	CSWAP: the value the word must hold for the swap
 * @res:	FADD and CSWAP: the local buffer that receives the word's old value
 *		(registered with local write); NULL for SET and ADD
 * @resoff:	offset of the result word in @res (8-byte aligned)
 *
 * The caller owns the struct and the buffers; calls read it during the call only. The
 * old value is in @res once the operation's ticket completed.
 */
struct dvx_p2p_amo {
	const struct dvx_p2p_rbuf *dst;
	uint64_t doff;
	uint32_t op;
	uint64_t value;
	uint64_t compare;
	const struct dvx_p2p_lbuf *res;
	uint64_t resoff;
};

/* what an operation carries (dvx_p2p_shape()): the familiar names each post one shape */
enum {
	DVX_P2P_HAS_DATA = 1u << 0,
	DVX_P2P_HAS_SIG = 1u << 1,
	DVX_P2P_HAS_CTR = 1u << 2,
};

/**
 * dvx_p2p_shape() - which parts an operation's description has.
 * @x:		the data part, or NULL
 * @n:		the notification part, or NULL
 *
 * Data counts when @x has a length; signal and counter when @n names their buffers.
 *
 * Context: any, host or device. Return: DVX_P2P_HAS_DATA, _SIG and _CTR or-ed.
 */
DVX_INLINE uint32_t dvx_p2p_shape(const struct dvx_p2p_xfer *x, const struct dvx_p2p_notify *n)
{
	return (x && x->len ? (uint32_t)DVX_P2P_HAS_DATA : 0u) |
	       (n && n->sig ? (uint32_t)DVX_P2P_HAS_SIG : 0u) |
	       (n && n->ctr ? (uint32_t)DVX_P2P_HAS_CTR : 0u);
}

/**
 * dvx_p2p_op_make_data() - check an operation's data part and resolve it for NIC @nic.
 * @nic:	the lane's NIC index (< DVX_P2P_MAX_NICS)
 * @x:		the data part, or NULL (no data)
 * @op:		its data fields are set (@op->len stays 0 with no data)
 *
 * Data is all or nothing: a source, a destination and a length, inside both buffers,
 * with keys on @nic.
 *
 * Context: any, host or device. Return: 0 or -EINVAL.
 */
DVX_INLINE int dvx_p2p_op_make_data(uint32_t nic, const struct dvx_p2p_xfer *x,
				    struct dvx_p2p_op *op)
{
	if (!x || (!x->src && !x->dst && !x->len))
		return 0;
	if (!x->src || !x->dst || !x->len || !dvx_p2p_in_bounds(x->soff, x->len, x->src->len) ||
	    !dvx_p2p_in_bounds(x->doff, x->len, x->dst->len) || !x->src->lkey[nic] ||
	    !x->dst->rkey[nic])
		return -EINVAL;
	op->laddr = x->src->addr + x->soff;
	op->lkey = x->src->lkey[nic];
	op->raddr = x->dst->addr + x->doff;
	op->rkey = x->dst->rkey[nic];
	op->len = x->len;
	return 0;
}

/**
 * dvx_p2p_op_make_get() - check a get and resolve it for NIC @nic.
 * @nic:	the lane's NIC index (< DVX_P2P_MAX_NICS)
 * @x:		the get, or NULL (nothing: @op stays without data)
 * @op:		its data fields are set (kind DVX_P2P_K_READ)
 *
 * Context: any, host or device. Return: 0; -EINVAL (a missing buffer, a length of 0,
 * outside a buffer, a missing key); -EPERM (the peer's buffer is known to be
 * registered without remote read: posting it would fail the lane).
 */
DVX_INLINE int dvx_p2p_op_make_get(uint32_t nic, const struct dvx_p2p_rxfer *x,
				   struct dvx_p2p_op *op)
{
	if (!x)
		return 0;
	if (nic >= DVX_P2P_MAX_NICS || !x->src || !x->dst || !x->len ||
	    !dvx_p2p_in_bounds(x->soff, x->len, x->src->len) ||
	    !dvx_p2p_in_bounds(x->doff, x->len, x->dst->len) || !x->src->rkey[nic] ||
	    !x->dst->lkey[nic])
		return -EINVAL;
	if ((x->src->access & DVX_P2P_ACC_KNOWN) && !(x->src->access & DVX_P2P_ACC_READ))
		return -EPERM;
	op->kind = DVX_P2P_K_READ;
	op->raddr = x->src->addr + x->soff;
	op->rkey = x->src->rkey[nic];
	op->laddr = x->dst->addr + x->doff;
	op->lkey = x->dst->lkey[nic];
	op->len = x->len;
	return 0;
}

/**
 * dvx_p2p_op_make_amo() - check a one-word operation and resolve it for NIC @nic.
 * @nic:	the lane's NIC index
 * @a:		the operation, or NULL (nothing)
 * @sink_lkey:	the lane NIC's sink lkey (DVX_P2P_AMO_ADD's old value goes there)
 * @op:		its data fields are set (@op->len 8)
 *
 * The peer's word must be inside its buffer and 8-byte aligned; FADD and CSWAP need a
 * result word (inside @a->res, aligned, with an lkey), SET and ADD take none.
 *
 * Context: any, host or device. Return: 0 or -EINVAL.
 */
DVX_INLINE int dvx_p2p_op_make_amo(uint32_t nic, const struct dvx_p2p_amo *a,
				   uint32_t sink_lkey, struct dvx_p2p_op *op)
{
	uint32_t fetch;

	if (!a)
		return 0;
	if (nic >= DVX_P2P_MAX_NICS || a->op > DVX_P2P_AMO_CSWAP || !a->dst ||
	    !dvx_p2p_word_ok(a->dst->addr, a->doff, a->dst->len) || !a->dst->rkey[nic])
		return -EINVAL;
	fetch = a->op == DVX_P2P_AMO_FADD || a->op == DVX_P2P_AMO_CSWAP;
	if (fetch != (a->res != NULL))
		return -EINVAL;
	if (fetch && (!dvx_p2p_word_ok(a->res->addr, a->resoff, a->res->len) ||
		      !a->res->lkey[nic]))
		return -EINVAL;
	op->kind = a->op == DVX_P2P_AMO_SET ? DVX_P2P_K_SET :
		   a->op == DVX_P2P_AMO_CSWAP ? DVX_P2P_K_CSWAP : DVX_P2P_K_FADD;
	op->raddr = a->dst->addr + a->doff;
	op->rkey = a->dst->rkey[nic];
	op->laddr = fetch ? a->res->addr + a->resoff : 0;
	op->lkey = fetch ? a->res->lkey[nic] : sink_lkey;
	op->len = 8;
	op->value = a->value;
	op->compare = a->compare;
	return 0;
}

/**
 * dvx_p2p_op_make_group() - check an operation's signal and counter parts (what a
 * GPU group posts once for all its members' data) and resolve them for @nic.
 * @nic:	the lane's NIC index
 * @has_comp:	whether the lane has a companion (counters need one)
 * @n:		the notification part, or NULL (none); DVX_P2P_RESET in its flags zeroes
 *		the signal word with an inline WRITE instead of the fetch-add
 * @op:		its signal and counter fields are set (zero it first)
 *
 * Signal and counter words must be inside their buffers, 8-byte aligned, with keys.
 *
 * Context: any, host or device. Return: 0; -EINVAL (bounds, alignment, a missing key,
 * bad flags, a bad NIC, a reset without a signal); -EOPNOTSUPP (a counter on a lane
 * without companion).
 */
DVX_INLINE int dvx_p2p_op_make_group(uint32_t nic, uint32_t has_comp,
				     const struct dvx_p2p_notify *n, struct dvx_p2p_op *op)
{
	uint32_t reset;

	if (nic >= DVX_P2P_MAX_NICS)
		return -EINVAL;
	if (!n)
		return 0;
	if (n->flags & ~(uint32_t)(DVX_P2P_FENCE | DVX_P2P_RESET))
		return -EINVAL;
	reset = (n->flags & DVX_P2P_RESET) ? 1u : 0u;
	if (n->sig) {
		if (!dvx_p2p_word_ok(n->sig->addr, n->sigoff, n->sig->len) || !n->sig->rkey[nic])
			return -EINVAL;
		op->has_sig = !reset;
		op->reset = reset;
		op->sig_addr = n->sig->addr + n->sigoff;
		op->sig_rkey = n->sig->rkey[nic];
		op->add = n->add;
		op->flags = n->flags & (uint32_t)DVX_P2P_FENCE;
	} else if (reset) {
		return -EINVAL;
	}
	if (n->ctr) {
		if (!has_comp)
			return -EOPNOTSUPP;
		if (!dvx_p2p_word_ok(n->ctr->addr, n->ctroff, n->ctr->len) || !n->ctr->rkey[nic])
			return -EINVAL;
		op->has_ctr = 1;
		op->ctr_addr = n->ctr->addr + n->ctroff;
		op->ctr_rkey = n->ctr->rkey[nic];
	}
	return 0;
}

/**
 * dvx_p2p_op_make() - check a whole operation and resolve it for NIC @nic
 * (dvx_p2p_op_make_data(), then dvx_p2p_op_make_group()).
 * @nic:	the lane's NIC index
 * @has_comp:	whether the lane has a companion (counters need one)
 * @x:		the data part, or NULL (no data)
 * @n:		the notification part, or NULL (none)
 * @op:		filled
 *
 * Context: any, host or device. Return: 0; -EINVAL (as the two parts, or nothing to
 * do: no data, no signal); -EOPNOTSUPP (a counter on a lane without companion).
 */
DVX_INLINE int dvx_p2p_op_make(uint32_t nic, uint32_t has_comp, const struct dvx_p2p_xfer *x,
			       const struct dvx_p2p_notify *n, struct dvx_p2p_op *op)
{
	int err;

	memset(op, 0, sizeof(*op));
	if (nic >= DVX_P2P_MAX_NICS)
		return -EINVAL;
	err = dvx_p2p_op_make_data(nic, x, op);
	if (!err)
		err = dvx_p2p_op_make_group(nic, has_comp, n, op);
	if (!err && !op->len && !op->has_sig && !op->reset)
		err = -EINVAL;
	return err;
}

/**
 * dvx_p2p_op_nwrites() - the data WQEs an operation takes: WRITEs or READs split at
 * 1 GiB, one for a one-word operation.
 * @op:		the operation
 *
 * Context: any, host or device. Return: 0 ... ceil(len / 1 GiB).
 */
DVX_INLINE uint32_t dvx_p2p_op_nwrites(const struct dvx_p2p_op *op)
{
	if (op->kind >= DVX_P2P_K_SET)
		return 1;
	return (uint32_t)((op->len + DVX_P2P_MAX_SPLIT - 1) / DVX_P2P_MAX_SPLIT);
}

/**
 * dvx_p2p_op_nmain() - main-QP WQEs of an operation: its WRITEs, then its signal or
 * reset.
 * @op:		the operation
 *
 * Context: any, host or device. Return: the count.
 */
DVX_INLINE uint32_t dvx_p2p_op_nmain(const struct dvx_p2p_op *op)
{
	return dvx_p2p_op_nwrites(op) + op->has_sig + op->reset;
}

/**
 * dvx_p2p_op_build_main() - write an operation's main-QP WQEs at [@t, @t + nmain).
 * @wq:		the main SQ's ring
 * @sink_lkey:	lkey of the NIC's sink (receives the signal fetch-add's old value)
 * @op:		the resolved operation: WRITEs split at DVX_P2P_MAX_SPLIT, then the
 *		signal's fetch-add (fenced with DVX_P2P_FENCE) or the reset's inline WRITE
 * @t:		the first reserved slot (dvx_p2p_op_nmain() slots reserved)
 *
 * Every WQE is signaled. A failed builder leaves signaled NOPs in all the slots, so the
 * ring and the CQ stay in step.
 *
 * Context: any, host or device: the reservation's holder. Return: 0 or the builder's
 * negative errno.
 */
DVX_INLINE int dvx_p2p_op_build_main(const struct dvx_mlx5_wq *wq, uint32_t sink_lkey,
				     const struct dvx_p2p_op *op, uint64_t t)
{
	uint64_t zero = 0;
	uint32_t nw = dvx_p2p_op_nwrites(op), w = 0, i;
	int r = 0;

	if (op->kind == DVX_P2P_K_SET) {
		struct dvx_mlx5_raddr ra = { op->raddr, op->rkey };
		uint64_t v = op->value;	/* the word's bytes as the host (and GPU) store it */

		r = dvx_mlx5_wqe_rdma_write_inline(wq, (uint32_t)(t + w++),
						   DVX_MLX5_OPCODE_RDMA_WRITE, DVX_P2P_CE, 0, &ra,
						   &v, sizeof(v));
	} else if (op->kind == DVX_P2P_K_FADD) {
		r = dvx_mlx5_wqe_atomic_fa(wq, (uint32_t)(t + w++), DVX_P2P_CE, op->raddr,
					   op->rkey, op->value, op->laddr, op->lkey);
	} else if (op->kind == DVX_P2P_K_CSWAP) {
		struct dvx_mlx5_raddr ra = { op->raddr, op->rkey };

		r = dvx_mlx5_wqe_atomic_cs(wq, (uint32_t)(t + w++), DVX_P2P_CE, &ra, op->compare,
					   op->value, op->laddr, op->lkey);
	}
	for (i = 0; op->kind <= DVX_P2P_K_READ && i < nw && r >= 0; i++) {
		uint64_t off = (uint64_t)i * DVX_P2P_MAX_SPLIT;
		uint64_t chunk = op->len - off < DVX_P2P_MAX_SPLIT ? op->len - off : DVX_P2P_MAX_SPLIT;

		r = op->kind == DVX_P2P_K_READ ?
			dvx_mlx5_wqe_rdma_read(wq, (uint32_t)(t + w++), DVX_P2P_CE, op->raddr + off,
					       op->rkey, op->laddr + off, op->lkey, (uint32_t)chunk) :
			dvx_mlx5_wqe_rdma_write(wq, (uint32_t)(t + w++), DVX_P2P_CE, op->raddr + off,
						op->rkey, op->laddr + off, op->lkey, (uint32_t)chunk);
	}
	if (r >= 0 && op->reset) {
		struct dvx_mlx5_raddr sig = { op->sig_addr, op->sig_rkey };

		r = dvx_mlx5_wqe_rdma_write_inline(wq, (uint32_t)(t + w++),
						   DVX_MLX5_OPCODE_RDMA_WRITE,
						   DVX_P2P_CE |
						   ((op->flags & DVX_P2P_FENCE) ? DVX_P2P_WQE_FENCE : 0),
						   0, &sig, &zero, sizeof(zero));
	} else if (r >= 0 && op->has_sig) {
		r = dvx_mlx5_wqe_atomic_fa(wq, (uint32_t)(t + w++),
					   DVX_P2P_CE |
					   ((op->flags & DVX_P2P_FENCE) ? DVX_P2P_WQE_FENCE : 0),
					   op->sig_addr, op->sig_rkey, op->add, 0, sink_lkey);
	}
	if (r < 0) {
		for (i = 0; i < nw + op->has_sig + op->reset; i++)
			dvx_mlx5_wqe_nop(wq, (uint32_t)(t + i), DVX_P2P_CE);
		return r;
	}
	return 0;
}

/**
 * dvx_p2p_op_build_comp() - write the companion's two WQEs at [@c, @c + 2): a WAIT on
 * the main CQ for main WQE @last, then the loopback fetch-add of 1 on the counter.
 * @cwq:	the companion SQ's ring
 * @main:	the main queue (its CQ number and CQ index base)
 * @sink_lkey:	lkey of the NIC's sink
 * @op:		the operation (counter address and rkey)
 * @c:		the first of two reserved companion slots
 * @last:	the main SQ index of the operation's last WQE
 *
 * Context: any, host or device: the reservation's holder. Return: nothing.
 */
DVX_INLINE void dvx_p2p_op_build_comp(const struct dvx_mlx5_wq *cwq,
				      const struct dvx_p2p_qdesc *main, uint32_t sink_lkey,
				      const struct dvx_p2p_op *op, uint64_t c, uint64_t last)
{
	/* WAIT until the main CQ produced the CQE of the last main WQE (its 0-based CQ
	 * index), then +1 on the counter through the loopback pair */
	dvx_mlx5_wqe_wait_cq(cwq, (uint32_t)c, DVX_P2P_CE, main->cqn,
			     dvx_p2p_q_cq_index(main, last));
	dvx_mlx5_wqe_atomic_fa(cwq, (uint32_t)(c + 1), DVX_P2P_CE, op->ctr_addr, op->ctr_rkey, 1,
			       0, sink_lkey);
}

/**
 * dvx_p2p_lane_post() - post one operation on a lane (thread scope): the companion's
 * two slots first (when the operation has a counter), the main slots, the main WQEs
 * published and rung, then the companion's WAIT and fetch-add.
 * @main:	the lane's main queue
 * @comp:	its companion queue (used only for a counter)
 * @sink_lkey:	lkey of the lane NIC's sink
 * @op:		the resolved operation (dvx_p2p_op_make())
 * @w:		bound and progress hook for waiting for room
 * @pw:		bound for waiting for the earlier posters to publish
 * @last:	set to the main index of the operation's last WQE (the ticket)
 *
 * The companion is reserved first: the other order can deadlock when threads share a
 * lane (a thread holding main slots and waiting for companion room blocks the in-order
 * publish of later main slots, whose threads may hold the companion slots it waits
 * for). When the main SQ then has no room, the companion's slots are given back as
 * published NOPs, so nothing is posted without its counter, nor a counter without its
 * data.
 *
 * Context: any thread, host or device. Return: 0; -EINVAL (too many WQEs for the ring);
 * -ETIMEDOUT (no room: nothing posted; or an earlier poster never published: the
 * queue is then failed); a queue's error.
 */
DVX_INLINE int dvx_p2p_lane_post(const struct dvx_p2p_qdesc *main, const struct dvx_p2p_qdesc *comp,
				 uint32_t sink_lkey, const struct dvx_p2p_op *op,
				 struct dvx_p2p_waiter *w, struct dvx_p2p_waiter *pw,
				 uint64_t *last)
{
	uint32_t n = dvx_p2p_op_nmain(op);
	uint64_t t, c = 0;
	int err, berr;

	if (!n || n > main->sq.nwqebb)
		return -EINVAL;
	if (op->has_ctr) {
		err = dvx_p2p_q_err(comp->st);
		if (err)
			return err;
		err = dvx_p2p_q_reserve(comp, 2, w, &c);
		if (err)
			return err;
	}
	err = dvx_p2p_q_reserve(main, n, w, &t);
	if (err) {
		if (op->has_ctr) {
			dvx_p2p_q_nop_fill(comp, c, 2);
			dvx_p2p_q_publish(comp, c, 2, pw);
		}
		return err;
	}
	berr = dvx_p2p_op_build_main(&main->sq.wq, sink_lkey, op, t);
	err = dvx_p2p_q_publish(main, t, n, pw);
	if (op->has_ctr) {
		int cerr;

		dvx_p2p_op_build_comp(&comp->sq.wq, main, sink_lkey, op, c, t + n - 1);
		cerr = dvx_p2p_q_publish(comp, c, 2, pw);
		err = err ? err : cerr;
	}
	*last = t + n - 1;
	return err ? err : berr;
}

DVX_END_DECLS

#endif /* DVX_P2P_OPS_H */
