// SPDX-License-Identifier: MIT
/*
 * Kernels of bench/win-ib-bench: GPU-initiated put_signal through the window to an IB
 * peer (the software NIC), one thread a rank. out[0] receives the first error.
 */
#include <dvx/win/dev.cuh>

/*
 * Bandwidth. role 0: @iters put_signal of @len bytes (signal 0), then wait for the
 * peer's answer (signal 1 >= @ack); role 1: wait until signal 0 >= @want, then answer.
 */
extern "C" __global__ void wib_stream(const struct dvx_win_dev d, const struct dvx_p2p_lbuf src,
				      uint64_t len, uint32_t iters, uint64_t want, uint64_t ack,
				      int role, int32_t *out)
{
	struct dvx_dev_grp g = dvx_dev_thread();
	int peer = 1 - d.rank, err = 0;
	uint32_t i;

	if (role == 0) {
		struct dvx_win_xfer x = { &src, 0, 0, len };

		for (i = 0; i < iters && !err; i++)
			err = dvx_win_dev_put_signal(g, d, peer, &x, 0, 1);
		if (!err)
			err = dvx_win_dev_wait_signal_from(g, d, peer, 1, DVX_CMP_GE, ack, 60000000000ull,
							   nullptr);
	} else {
		err = dvx_win_dev_wait_signal_from(g, d, peer, 0, DVX_CMP_GE, want, 60000000000ull,
						   nullptr);
		if (!err)
			err = dvx_win_dev_signal_peer(g, d, peer, 1, DVX_NVL_SIG_ADD, 1);
	}
	out[0] = err;
}

/*
 * Latency: @iters round trips of a put_signal of @len bytes; role 0 starts (signal 2 to
 * the peer, waits for signal 3), role 1 answers. @base: the round trips before.
 */
extern "C" __global__ void wib_pingpong(const struct dvx_win_dev d, const struct dvx_p2p_lbuf src,
					uint64_t len, uint32_t iters, uint64_t base, int role,
					int32_t *out)
{
	struct dvx_dev_grp g = dvx_dev_thread();
	struct dvx_win_xfer x = { &src, 0, 0, len };
	int peer = 1 - d.rank, err = 0;
	uint32_t i;

	for (i = 0; i < iters && !err; i++) {
		if (role == 0) {
			err = dvx_win_dev_put_signal(g, d, peer, &x, 2, 1);
			if (!err)
				err = dvx_win_dev_wait_signal_from(g, d, peer, 3, DVX_CMP_GE, base + i + 1,
								   60000000000ull, nullptr);
		} else {
			err = dvx_win_dev_wait_signal_from(g, d, peer, 2, DVX_CMP_GE, base + i + 1,
							   60000000000ull, nullptr);
			if (!err)
				err = dvx_win_dev_put_signal(g, d, peer, &x, 3, 1);
		}
	}
	out[0] = err;
}
