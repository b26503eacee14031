// SPDX-License-Identifier: MIT
/*
 * bench/gpu-p2p-bench.cu - kernels of bench/gpu-p2p-bench: the P2P transport's put
 * posted from GPU threads (dvx/p2p/dev.cuh) at thread, warp and block scope, and a
 * put + wait_local latency loop on one thread.
 */
#include <dvx/p2p/dev.cuh>

/* every thread posts @per 8-byte puts on channel (block % nchan) at @scope (0 thread,
 * 1 warp, 2 block); thread 0 of each block then flushes its channel */
extern "C" __global__ void b_p2p_put(struct dvx_p2p_dev d, int peer, struct dvx_p2p_lbuf src,
				     uint64_t soff, struct dvx_p2p_rbuf dst, uint64_t doff,
				     uint32_t scope, uint32_t per, uint32_t nchan,
				     uint64_t timeout_ns, int32_t *status)
{
	uint32_t tid = blockIdx.x * blockDim.x + threadIdx.x, ch = blockIdx.x % nchan;
	uint64_t off = ((uint64_t)tid * 8) & 0xfff8;
	int first = 0;

	struct dvx_p2p_xfer x = { &src, soff + off, &dst, doff + off, 8 };

	for (uint32_t i = 0; i < per; i++) {
		int err;

		if (scope == 0)
			err = dvx_p2p_dev_put(dvx_dev_thread(), d, peer, ch, &x, timeout_ns, nullptr);
		else if (scope == 1)
			err = dvx_p2p_dev_put(dvx_dev_warp(), d, peer, ch, &x, timeout_ns, nullptr);
		else
			err = dvx_p2p_dev_put(dvx_dev_block(), d, peer, ch, &x, timeout_ns, nullptr);
		if (err && !first)
			first = err;
		if (err && scope == 0)
			break;
	}
	if (scope == 2)
		__syncthreads();
	if (!first && threadIdx.x == 0)
		first = dvx_p2p_dev_flush(d, ch, timeout_ns);
	status[tid] = first;
}

/* one thread: @iters times put(8 B) then wait_local; out[0] total ns, out[1] min ns */
extern "C" __global__ void b_p2p_lat(struct dvx_p2p_dev d, int peer, struct dvx_p2p_lbuf src,
				     uint64_t soff, struct dvx_p2p_rbuf dst, uint64_t doff,
				     uint32_t iters, uint64_t timeout_ns, uint64_t *out,
				     int32_t *status)
{
	uint64_t t0 = dvx_dev_now_ns(), best = ~0ull;
	struct dvx_p2p_xfer x = { &src, soff, &dst, doff, 8 };
	struct dvx_p2p_ticket tk;
	int err = 0;

	for (uint32_t i = 0; i < iters && !err; i++) {
		uint64_t a = dvx_dev_now_ns();

		err = dvx_p2p_dev_put(dvx_dev_thread(), d, peer, 0, &x, timeout_ns, &tk);
		if (!err)
			err = dvx_p2p_dev_wait_local(d, tk, timeout_ns);
		a = dvx_dev_now_ns() - a;
		best = a < best ? a : best;
	}
	out[0] = dvx_dev_now_ns() - t0;
	out[1] = best;
	status[0] = err;
}
