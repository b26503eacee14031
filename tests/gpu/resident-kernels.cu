// SPDX-License-Identifier: MIT
/*
 * Kernels of gpu-resident-test: posters put 8-byte RDMA WRITEs on an SQ whose ring,
 * doorbell record and counters are in GPU memory (GPU-scope ordering), at thread, warp
 * or block scope; a poller kernel consumes the CQ, also in GPU memory, and frees the
 * SQ's slots as completions arrive.
 */
#include <dvx/gpu/post.cuh>

/*
 * Every thread posts @per_thread signaled WRITEs; WQE id k (global, from @id0) moves
 * 8 bytes from @laddr + 8k (@lkey) to @raddr + 8k (@rkey). status[tid]: the first
 * error, 0 if none.
 */
extern "C" __global__ void r_post(struct dvx_gpu_sq sq, uint32_t scope, uint32_t per_thread,
				  uint64_t id0, uint64_t laddr, uint32_t lkey, uint64_t raddr,
				  uint32_t rkey, uint64_t timeout_ns, int32_t *status)
{
	uint32_t tid = blockIdx.x * blockDim.x + threadIdx.x;
	int first = 0;

	for (uint32_t i = 0; i < per_thread; i++) {
		uint64_t id = id0 + (uint64_t)tid * per_thread + i;
		auto w = [=](const struct dvx_mlx5_wq *q, uint32_t idx) {
			return dvx_mlx5_wqe_rdma_write(q, idx, DVX_MLX5_WQE_CTRL_CQ_UPDATE,
						       raddr + 8 * id, rkey, laddr + 8 * id, lkey, 8);
		};
		int err;

		if (scope == 0)
			err = dvx_dev_sq_post(dvx_dev_thread(), sq, 1, timeout_ns, w);
		else if (scope == 1)
			err = dvx_dev_sq_post(dvx_dev_warp(), sq, 1, timeout_ns, w);
		else
			err = dvx_dev_sq_post(dvx_dev_block(), sq, 1, timeout_ns, w);
		if (err && !first)
			first = err;
		if (err && scope == 0)
			break;
	}
	status[tid] = first;
}

/*
 * One thread: consume @n CQEs from index *@ci (kept in @ci across launches), freeing
 * the SQ's WQEBBs up to each completed WQE (every WQE is one WQEBB and signaled, so
 * the k-th completion frees k WQEBBs). Stops at the first error: rc[0] the result of
 * the last poll (1 or an errno), info[0] its entry, ci advanced past what was consumed.
 */
extern "C" __global__ void r_poll(struct dvx_gpu_cq cq, struct dvx_gpu_sq sq, uint64_t *ci,
				  uint64_t *sq_done, uint32_t n, uint64_t timeout_ns, int32_t *rc,
				  struct dvx_mlx5_cqe_info *info)
{
	uint64_t c = *ci, done = *sq_done;
	int r = 1;

	for (uint32_t i = 0; i < n; i++) {
		r = dvx_dev_cq_poll(cq, &c, info, timeout_ns);
		if (r != 1)
			break;
		dvx_dev_sq_set_ci(sq, ++done);
	}
	*ci = c;
	*sq_done = done;
	rc[0] = r;
}
