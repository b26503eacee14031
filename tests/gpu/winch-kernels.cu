// SPDX-License-Identifier: MIT
/*
 * Kernels of gpu-winch-test and bench/win-chan-bench (tests/gpu/winch_world.c): the
 * window's device put from many blocks over one channel or many, gets and fetch-adds,
 * rank 0 to rank 1 over IB (the software NIC). out[] receives each group's first error.
 */
#include <dvx/win/dev.cuh>

/*
 * Puts: every block (block scope) puts its share [b * share, + share) of @src into the
 * peer's buffer at the same offset @iters times, each with signal 0 += 1 at the peer
 * after its data and this rank's counter 0 of the peer raised once the data was
 * acknowledged. Block b takes channel channel + b mod nchannels (dvx_win_dev_chan()).
 */
extern "C" __global__ void wch_put(const struct dvx_win_dev d, const struct dvx_p2p_lbuf src,
				   uint64_t share, uint32_t iters, int32_t *out)
{
	struct dvx_dev_grp g = dvx_dev_block();
	struct dvx_win_xfer x = { &src, (uint64_t)blockIdx.x * share, (uint64_t)blockIdx.x * share,
				  share };
	int peer = 1 - d.rank, err = 0;
	uint32_t i;

	for (i = 0; i < iters && !err; i++)
		err = dvx_win_dev_put_signal_counter(g, d, peer, &x, 0, 1, 0);
	if (threadIdx.x == 0)
		out[blockIdx.x] = err;
}

/*
 * Gets by one thread: @iters gets of @len bytes of the peer's buffer at @soff into
 * @dst (the same place each time), each waited for (@each: a flush after every get,
 * the latency) or only the last (the rate).
 */
extern "C" __global__ void wch_get(const struct dvx_win_dev d, const struct dvx_p2p_lbuf dst,
				   uint64_t soff, uint64_t len, uint32_t iters, int each, int32_t *out)
{
	struct dvx_dev_grp g = dvx_dev_thread();
	struct dvx_win_rxfer x = { &dst, 0, soff, len };
	int peer = 1 - d.rank, err = 0;
	uint32_t i;

	for (i = 0; i < iters && !err; i++) {
		err = dvx_win_dev_get(g, d, peer, &x);
		if (!err && (each || i + 1 == iters))
			err = dvx_win_dev_flush(g, d, 0);
	}
	out[0] = err;
}

/*
 * Fetch-adds of 1 on the peer's word @doff by one warp: @iters calls, each lane its own
 * fetch-add (32 at once; @lanes < 32: only the first @lanes lanes have one), the old
 * value of call i of lane l into @res at @roff + ((i * 32 + l) * 8); a flush after
 * every call (@each: the latency) or after the last (the rate).
 */
extern "C" __global__ void wch_fadd(const struct dvx_win_dev d, const struct dvx_p2p_lbuf res,
				    uint64_t roff, uint64_t doff, uint32_t iters, uint32_t lanes,
				    int each, int32_t *out)
{
	struct dvx_dev_grp g = dvx_dev_warp();
	int peer = 1 - d.rank, err = 0;
	uint32_t i, l = threadIdx.x % 32;

	for (i = 0; i < iters && !err; i++) {
		struct dvx_win_amo a = { doff, 1, 0, &res, roff + ((uint64_t)i * 32 + l) * 8 };

		err = dvx_win_dev_fetch_add(g, d, peer, l < lanes ? &a : nullptr);
		if (!err && (each || i + 1 == iters))
			err = dvx_win_dev_flush(g, d, 0);
	}
	if (l == 0)
		out[0] = err;
}
