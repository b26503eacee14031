// SPDX-License-Identifier: MIT
/*
 * Kernels of bench/win-bench: the window's device API timed with %globaltimer inside
 * the kernels; out[0] = nanoseconds, out[1] = the first error.
 */
#include <dvx/win/dev.cuh>

#define TMO (20ull * 1000000000ull)

__device__ static uint64_t wb_now(void)
{
	return dvx_nvl_now_ns();
}

/* @iters barriers on id 0 by one block */
extern "C" __global__ void wb_barrier(const struct dvx_win_dev d, uint32_t iters, uint64_t *out)
{
	struct dvx_dev_grp g = dvx_dev_block();
	uint64_t t0 = wb_now();
	uint32_t i;
	int err = 0;

	for (i = 0; i < iters && !err; i++)
		err = dvx_win_dev_barrier(g, d, 0, TMO);
	if (g.lane == 0) {
		out[0] = wb_now() - t0;
		out[1] = (uint64_t)(int64_t)err;
	}
}

/* @iters round trips of signal 0 between ranks 0 and @peer (one thread); @base: the
 * round trips done before (the words keep counting) */
extern "C" __global__ void wb_pingpong(const struct dvx_win_dev d, int peer, uint32_t iters,
				       uint64_t base, uint64_t *out)
{
	struct dvx_dev_grp g = dvx_dev_thread();
	uint64_t t0 = wb_now(), i;
	int err = 0;

	for (i = base + 1; i <= base + iters && !err; i++) {
		if (d.rank == 0) {
			err = dvx_win_dev_signal_peer(g, d, peer, 0, DVX_NVL_SIG_ADD, 1);
			if (!err)
				err = dvx_win_dev_wait_signal_from(g, d, peer, 0, DVX_CMP_GE, i, TMO, nullptr);
		} else {
			err = dvx_win_dev_wait_signal_from(g, d, peer, 0, DVX_CMP_GE, i, TMO, nullptr);
			if (!err)
				err = dvx_win_dev_signal_peer(g, d, peer, 0, DVX_NVL_SIG_ADD, 1);
		}
	}
	out[0] = wb_now() - t0;
	out[1] = (uint64_t)(int64_t)err;
}

/*
 * Bandwidth of put_signal: rank 0's gridDim.x blocks each put their tile of @len
 * (@len / blocks) into rank 1's window buffer @reps times, one signal per call per
 * block; rank 1 waits for all of them (signal 2 reaching @want) and answers on signal
 * 3; rank 0 times until the answer (@want3).
 */
extern "C" __global__ void wb_put(const struct dvx_win_dev d, const struct dvx_p2p_lbuf src,
				  uint64_t len, uint32_t reps, uint64_t want, uint64_t want3,
				  uint64_t *out)
{
	struct dvx_dev_grp g = dvx_dev_block();
	uint64_t tile = len / gridDim.x, off = tile * blockIdx.x, t0 = wb_now();
	uint32_t r;
	int err = 0;

	if (d.rank == 0) {
		struct dvx_win_xfer x = { &src, off, off, tile };

		for (r = 0; r < reps && !err; r++)
			err = dvx_win_dev_put_signal(g, d, 1, &x, 2, 1);
		if (!err && blockIdx.x == 0)
			err = dvx_win_dev_wait_signal_from(g, d, 1, 3, DVX_CMP_GE, want3, TMO, nullptr);
	} else if (blockIdx.x == 0) {
		err = dvx_win_dev_wait_signal_from(g, d, 0, 2, DVX_CMP_GE, want, TMO, nullptr);
		if (!err)
			err = dvx_win_dev_signal_peer(g, d, 0, 3, DVX_NVL_SIG_ADD, 1);
	}
	if (g.lane == 0 && blockIdx.x == 0) {
		out[0] = wb_now() - t0;
		out[1] = (uint64_t)(int64_t)err;
	}
}

/* the reference: @reps plain copies by every thread of the grid into the peer's mapping
 * (16-byte vectors, four in flight per thread), the grid synchronised by nothing: each
 * thread copies its own words @reps times */
extern "C" __global__ void wb_ref_copy(uint8_t *dst, const uint8_t *src, uint64_t len, uint32_t reps)
{
	uint64_t n = (uint64_t)gridDim.x * blockDim.x, t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
	uint64_t words = len / 16, i;
	uint32_t r;

	for (r = 0; r < reps; r++) {
		for (i = t; i + 3 * n < words; i += 4 * n) {
			ulonglong2 a = ((const ulonglong2 *)src)[i], b = ((const ulonglong2 *)src)[i + n];
			ulonglong2 c = ((const ulonglong2 *)src)[i + 2 * n];
			ulonglong2 e = ((const ulonglong2 *)src)[i + 3 * n];

			((ulonglong2 *)dst)[i] = a;
			((ulonglong2 *)dst)[i + n] = b;
			((ulonglong2 *)dst)[i + 2 * n] = c;
			((ulonglong2 *)dst)[i + 3 * n] = e;
		}
		for (; i < words; i += n)
			((ulonglong2 *)dst)[i] = ((const ulonglong2 *)src)[i];
	}
}

/* send/recv by one block: rank 0 sends @len and receives 8 B back, @reps times */
extern "C" __global__ void __launch_bounds__(512) wb_sendrecv(const struct dvx_win_dev d, uint8_t *sbuf, uint8_t *rbuf,
				       uint64_t len, uint32_t reps, uint64_t *out)
{
	struct dvx_dev_grp g = dvx_dev_block();
	uint64_t t0 = wb_now();
	uint32_t r;
	int err = 0;

	for (r = 0; r < reps && !err; r++) {
		if (d.rank == 0) {
			err = dvx_win_dev_send(g, d, 1, sbuf, len, TMO);
			if (!err)
				err = dvx_win_dev_recv(g, d, 1, rbuf, 8, TMO);
		} else {
			err = dvx_win_dev_recv(g, d, 0, rbuf, len, TMO);
			if (!err)
				err = dvx_win_dev_send(g, d, 0, sbuf, 8, TMO);
		}
	}
	if (g.lane == 0) {
		out[0] = wb_now() - t0;
		out[1] = (uint64_t)(int64_t)err;
	}
}
