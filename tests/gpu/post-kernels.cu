// SPDX-License-Identifier: MIT
/*
 * Kernels of gpu-post-test (and bench/gpu-post): RDMA WRITE posting at thread, warp and
 * block scope with a unique id in every WQE, fetch-add reservations, a ring that never
 * drains (timeout), and a CQ poller that must surface an error CQE.
 */
#include <dvx/gpu/post.cuh>

/* every WQE names its poster: laddr = id, raddr = 0x100000 + 8 * id */
#define T_RKEY 0x1234u
#define T_LKEY 0x55u

struct t_write {
	uint64_t id;

	__device__ int operator()(const struct dvx_mlx5_wq *wq, uint32_t idx) const
	{
		return dvx_mlx5_wqe_rdma_write(wq, idx, DVX_MLX5_WQE_CTRL_CQ_UPDATE,
					       0x100000 + 8 * id, T_RKEY, id, T_LKEY, 8);
	}
};

extern "C" __global__ void t_post_write(struct dvx_gpu_sq sq, uint32_t scope, uint32_t per_thread,
					uint64_t timeout_ns, int32_t *status)
{
	uint32_t tid = blockIdx.x * blockDim.x + threadIdx.x;
	int first = 0;

	for (uint32_t i = 0; i < per_thread; i++) {
		struct t_write w = { (uint64_t)tid * per_thread + i };
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

/* fetch-add reservation, wait for room, build, publish (the never-give-up path) */
extern "C" __global__ void t_post_write_faa(struct dvx_gpu_sq sq, uint32_t per_thread,
					    uint64_t timeout_ns, int32_t *status)
{
	uint32_t tid = blockIdx.x * blockDim.x + threadIdx.x;
	struct dvx_mlx5_wq wq = dvx_dev_sq_wq(sq);
	int first = 0;

	for (uint32_t i = 0; i < per_thread && !first; i++) {
		struct t_write w = { (uint64_t)tid * per_thread + i };
		uint64_t t = dvx_dev_sq_reserve_faa(sq, 1);
		int err = dvx_dev_sq_wait_room(sq, t, 1, timeout_ns);

		if (!err)
			err = dvx_dev_sq_build(&wq, t, 1, w);
		if (!err)
			err = dvx_dev_sq_publish(sq, t, 1, timeout_ns);
		first = err;
	}
	status[tid] = first;
}

/* one thread posts NOPs until the ring is full and the next post times out */
extern "C" __global__ void t_post_until_timeout(struct dvx_gpu_sq sq, uint32_t n,
						uint64_t timeout_ns, int32_t *status)
{
	auto nop = [](const struct dvx_mlx5_wq *wq, uint32_t idx) {
		return dvx_mlx5_wqe_nop(wq, idx, 0);
	};

	for (uint32_t i = 0; i < n; i++) {
		status[i] = dvx_dev_sq_post(dvx_dev_thread(), sq, 1, timeout_ns, nop);
		if (status[i])
			break;
	}
}

/* poll n CQEs; record each result and the decoded entry */
extern "C" __global__ void t_cq_poll(struct dvx_gpu_cq cq, uint32_t n, uint64_t timeout_ns,
				     int32_t *rc, struct dvx_mlx5_cqe_info *info)
{
	uint64_t ci = 0;

	for (uint32_t i = 0; i < n; i++)
		rc[i] = dvx_dev_cq_poll(cq, &ci, &info[i], timeout_ns);
}
