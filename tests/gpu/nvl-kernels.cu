// SPDX-License-Identifier: MIT
/*
 * Kernels of gpu-nvl-test: the NVLink device API (dvx/nvl/dev.cuh) at thread, warp and
 * block scope on peer buffers mapped by dvx_nvl_exchange(), and one kernel that reaches
 * an NVL peer and an IB peer through the multi-peer device handle (dvx/mp/dev.h).
 * status[i] receives thread i's first error (0 when everything went well).
 */
#include <dvx/nvl/dev.cuh>
#include <dvx/mp/dev.h>
#include <dvx/p2p/dev.cuh>

enum { S_THREAD = 0, S_WARP = 1, S_BLOCK = 2 };
enum { OP_PUT_THEN_SIGNAL = 0, OP_PUT_SIGNAL = 1, OP_PUT_COUNTER = 2, OP_PUT_SIGNAL_COUNTER = 3 };

/* the scope's group of this thread */
__device__ static struct dvx_dev_grp grp_of(uint32_t scope)
{
	return scope == S_THREAD ? dvx_dev_thread() : scope == S_WARP ? dvx_dev_warp() : dvx_dev_block();
}

/* the group this thread belongs to, and how many groups there are */
__device__ static uint32_t group_of(uint32_t scope)
{
	uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;

	return scope == S_THREAD ? t : scope == S_WARP ? t / 32 : blockIdx.x;
}

/*
 * Every group copies its chunk (group g: bytes [g * chunk, +chunk) of @src) to the same
 * place of @dst and then, by @op: signals the peer's word once (ADD 1), and/or raises
 * this rank's counter once.
 */
extern "C" __global__ void k_send(uint32_t scope, uint32_t op, uint8_t *dst, const uint8_t *src,
				  uint64_t chunk, uint64_t *sig, uint64_t *ctr, int32_t *status)
{
	uint32_t t = blockIdx.x * blockDim.x + threadIdx.x, g = group_of(scope);
	uint8_t *d = dst + (uint64_t)g * chunk;
	const uint8_t *s = src + (uint64_t)g * chunk;
	int err = 0;

	struct dvx_dev_grp gr = grp_of(scope);
	struct dvx_nvl_notify sc = { sig, DVX_NVL_SIG_ADD, 1, ctr, 1 };

	if (scope > S_BLOCK)
		op = ~0u;
	switch (op) {
	case OP_PUT_THEN_SIGNAL:
		err = dvx_nvl_dev_put(gr, d, s, chunk);
		if (!err)
			err = dvx_nvl_dev_signal(gr, sig, DVX_NVL_SIG_ADD, 1);
		break;
	case OP_PUT_SIGNAL:
		err = dvx_nvl_dev_put_signal(gr, d, s, chunk, sig, DVX_NVL_SIG_ADD, 1);
		break;
	case OP_PUT_COUNTER:
		err = dvx_nvl_dev_put_counter(gr, d, s, chunk, ctr, 1);
		if (!err)
			err = dvx_nvl_dev_signal(gr, sig, DVX_NVL_SIG_ADD, 1);
		break;
	case OP_PUT_SIGNAL_COUNTER:
		err = dvx_nvl_dev_put_signal_counter(gr, d, s, chunk, &sc);
		break;
	default:
		err = -EINVAL;
	}
	status[t] = err;
}

/* the group's leader waits for @w @cmp @value; every thread gets the answer */
extern "C" __global__ void k_wait(uint32_t scope, const uint64_t *w, uint32_t cmp, uint64_t value,
				  uint64_t timeout_ns, int32_t *status)
{
	uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
	int err;

	err = dvx_nvl_dev_wait(grp_of(scope), w, cmp, value, timeout_ns);
	status[t] = err;
}

/*
 * Ping-pong between two ranks (threads of one process, kernels running at once):
 * rank 0 puts @len bytes and signals (SET to the round), then waits for the answer on
 * its own word; rank 1 waits, checks the first and last byte, answers the same way.
 * @rounds rounds at @scope; status[0] the first error.
 */
extern "C" __global__ void k_pingpong(uint32_t scope, int rank, uint8_t *peer_buf,
				      const uint8_t *src, uint64_t len, uint64_t *peer_word,
				      const uint64_t *my_word, uint32_t rounds, uint64_t timeout_ns,
				      int32_t *status)
{
	struct dvx_dev_grp g = grp_of(scope);
	int err = 0;
	uint32_t r;

	for (r = 1; r <= rounds && !err; r++) {
		if (rank == 1) {
			err = dvx_nvl_dev_wait(g, my_word, DVX_CMP_GE, r, timeout_ns);
			if (err)
				break;
		}
		err = dvx_nvl_dev_put_signal(g, peer_buf, src, len, peer_word, DVX_NVL_SIG_SET, r);
		if (!err && rank == 0)
			err = dvx_nvl_dev_wait(g, my_word, DVX_CMP_GE, r, timeout_ns);
	}
	status[blockIdx.x * blockDim.x + threadIdx.x] = err;
}

/*
 * One kernel, every peer through the multi-peer handle: an NVL peer gets a block-scope
 * put_signal through its mapping (into its buffer's window for this rank, signal on
 * its NVL word for this rank); an IB peer a block-scope put_signal on its lane (into
 * its IB buffer's window, fetch-add on its IB word). Block b serves peer b.
 */
extern "C" __global__ void k_mixed(struct dvx_mp_dev d, const uint8_t *nvl_src, uint64_t len,
				   uint64_t win, uint64_t nvl_sig_base,
				   struct dvx_p2p_lbuf ib_src, struct dvx_p2p_rbuf *ib_dst,
				   uint64_t ib_sig_base, uint64_t timeout_ns, int32_t *status)
{
	int peer = (int)blockIdx.x, err = 0;
	const struct dvx_mp_dev_peer *p = dvx_mp_dev_peer_of(d, peer);

	if (!p)
		err = -EINVAL;
	else if (p->kind == DVX_MP_NVL)
		err = dvx_nvl_dev_put_signal(dvx_dev_block(),
					     (uint8_t *)p->nvl_ptr + (uint64_t)d.rank * win, nvl_src,
					     len, (uint64_t *)(p->nvl_ptr + nvl_sig_base +
							       (uint64_t)d.rank * 128),
					     DVX_NVL_SIG_ADD, 1);
	else if (p->kind == DVX_MP_IB) {
		struct dvx_p2p_ticket tk;
		const struct dvx_p2p_rbuf *dst = &ib_dst[p->index];
		uint64_t share = len / blockDim.x, off = (uint64_t)threadIdx.x * share;

		struct dvx_p2p_xfer x = { &ib_src, off, dst, (uint64_t)d.rank * win + off,
					  threadIdx.x + 1 == blockDim.x ? len - off : share };
		struct dvx_p2p_notify n = { dst, ib_sig_base + (uint64_t)d.rank * 8, 1, nullptr, 0, 0 };

		err = dvx_p2p_dev_put_signal(dvx_dev_block(), d.ib, peer, 0, &x, &n, timeout_ns, &tk);
		if (!err && threadIdx.x == 0)
			err = dvx_p2p_dev_wait_local(d.ib, tk, timeout_ns);
	}
	status[blockIdx.x * blockDim.x + threadIdx.x] = err;
}

/* byte @i of the small message of round @r from rank @from */
__device__ static uint8_t ll_pat(int from, uint32_t r, uint64_t i)
{
	return (uint8_t)(from * 97 + r * 31 + i * 5 + (i >> 8));
}

/*
 * Small messages as flagged lines (dvx_nvl_dev_put_ll() / dvx_nvl_dev_wait_ll()), @rounds
 * back-to-back round trips at @scope reusing the same lines (sequence = round): each
 * round the sender's group writes its payload into its @src, puts it into the peer's
 * lines; the receiver's group waits and checks every byte of what it took (-EBADMSG
 * for a wrong one). @rank >= 0: one block, this rank of two processes (@lines0: the
 * peer's lines through the mapping, @lines1: this rank's). @rank < 0: both ranks in
 * this launch, block b rank b (@lines0 rank 0's, @lines1 rank 1's lines; @src and @dst
 * 64 KiB apart per block). status[thread] the first error.
 */
extern "C" __global__ void k_llpp(uint32_t scope, int rank, uint8_t *lines0, uint8_t *lines1,
				  uint8_t *src, uint8_t *dst, uint64_t len, uint32_t rounds,
				  uint64_t timeout_ns, int32_t *status)
{
	uint32_t lane = scope == S_THREAD ? 0 : threadIdx.x, nl = scope == S_THREAD ? 1 : blockDim.x;
	uint8_t *peer_lines = lines0, *my_lines = lines1;
	uint32_t r;
	uint64_t i;
	int err = 0;

	if (rank < 0) {
		rank = (int)blockIdx.x;
		peer_lines = rank ? lines0 : lines1;
		my_lines = rank ? lines1 : lines0;
		src += (uint64_t)rank << 16;
		dst += (uint64_t)rank << 16;
	}
	if (scope == S_WARP)
		nl = 32, lane = threadIdx.x & 31;
	for (r = 1; r <= rounds && !err; r++) {
		for (int turn = 0; turn < 2 && !err; turn++) {
			if ((turn == 0) == (rank == 1)) {
				err = dvx_nvl_dev_wait_ll(grp_of(scope), my_lines, dst, len, r, timeout_ns);
				for (i = lane; !err && i < len; i += nl)
					if (dst[i] != ll_pat(1 - rank, r, i))
						err = -EBADMSG;
			} else {
				for (i = lane; i < len; i += nl)
					src[i] = ll_pat(rank, r, i);
				if (scope == S_BLOCK)
					__syncthreads();
				else if (scope == S_WARP)
					__syncwarp();
				err = dvx_nvl_dev_put_ll(grp_of(scope), peer_lines, src, len, r);
			}
			if (scope == S_BLOCK)
				err = __syncthreads_or(err) ? (err ? err : -EAGAIN) : 0;
			else if (scope == S_WARP)
				err = __any_sync(0xffffffffu, err) ? (err ? err : -EAGAIN) : 0;
		}
	}
	status[blockIdx.x * blockDim.x + threadIdx.x] = err;
}

/* the refusals and the timeout of the flagged lines, thread 0 of 4: status[0..3] */
extern "C" __global__ void k_llbad(uint8_t *lines, uint8_t *dst, int32_t *status)
{
	if (threadIdx.x)
		return;
	status[0] = dvx_nvl_dev_put_ll(dvx_dev_thread(), lines, dst, 8, 0);		/* seq 0: -EINVAL */
	status[1] = dvx_nvl_dev_put_ll(dvx_dev_thread(), lines + 8, dst, 8, 1);	/* misaligned */
	status[2] = dvx_nvl_dev_wait_ll(dvx_dev_thread(), lines + 8, dst, 8, 1, 1000000);
	status[3] = dvx_nvl_dev_wait_ll(dvx_dev_thread(), lines, dst, 64, 0x7fffffffu, 2000000); /* never comes */
}
