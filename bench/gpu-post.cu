// SPDX-License-Identifier: MIT
/*
 * bench/gpu-post.cu - the posting kernel of bench/gpu-post: every thread posts
 * per_thread one-WQEBB RDMA WRITEs at thread, warp or block scope (or with fetch-add
 * reservations), through dvx/gpu/post.cuh.
 */
#include <dvx/gpu/post.cuh>

extern "C" __global__ void b_post(struct dvx_gpu_sq sq, uint32_t scope, uint32_t per_thread,
				  uint64_t timeout_ns, int32_t *status)
{
	uint32_t tid = blockIdx.x * blockDim.x + threadIdx.x;
	struct dvx_mlx5_wq wq = dvx_dev_sq_wq(sq);
	int first = 0;

	for (uint32_t i = 0; i < per_thread; i++) {
		uint64_t id = (uint64_t)tid * per_thread + i;
		auto w = [id](const struct dvx_mlx5_wq *q, uint32_t idx) {
			return dvx_mlx5_wqe_rdma_write(q, idx, DVX_MLX5_WQE_CTRL_CQ_UPDATE,
						       0x100000 + 8 * id, 0x1234, id, 0x55, 8);
		};
		int err;

		if (scope == 0) {
			err = dvx_dev_sq_post(sq, 1, timeout_ns, w);
		} else if (scope == 1) {
			err = dvx_dev_sq_post_warp(sq, 1, timeout_ns, w);
		} else if (scope == 2) {
			err = dvx_dev_sq_post_block(sq, 1, timeout_ns, w);
		} else {
			uint64_t t = dvx_dev_sq_reserve_faa(sq, 1);

			err = dvx_dev_sq_wait_room(sq, t, 1, timeout_ns);
			if (!err)
				err = dvx_dev_sq_build(&wq, t, 1, w);
			if (!err)
				err = dvx_dev_sq_publish(sq, t, 1, timeout_ns);
		}
		if (err) {
			first = err;
			if (scope == 0 || scope == 3)
				break;
		}
	}
	status[tid] = first;
}
