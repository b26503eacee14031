// SPDX-License-Identifier: MIT
/*
 * gpu/devlib.cu - libdvx's own device code: compiled by nvcc for sm_80 and sm_90 into
 * a fatbin that is embedded in libdvx.a and loaded with dvx_gpu_lib_load().
 */
#include <dvx/gpu/post.cuh>

#include "devlib.h"

extern "C" __global__ void dvx_devlib_cq_init(uint64_t buf, uint32_t log_size)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < (1u << log_size))
		dvx_mlx5_cqe_at((uint8_t *)buf, log_size, i)->op_own = DVX_MLX5_CQE_INIT_OP_OWN;
}

extern "C" __global__ void dvx_devlib_sq_ctrs_init(uint64_t ctrs)
{
	((uint64_t *)ctrs)[threadIdx.x] = 0;
}

/* post per_thread NOPs from every thread, at thread, warp or block scope */
extern "C" __global__ void dvx_devlib_post_nop(struct dvx_gpu_sq sq, uint32_t scope,
					       uint32_t per_thread, uint64_t timeout_ns,
					       uint64_t status)
{
	uint32_t tid = blockIdx.x * blockDim.x + threadIdx.x;
	auto nop = [](const struct dvx_mlx5_wq *wq, uint32_t idx) {
		return dvx_mlx5_wqe_nop(wq, idx, 0);
	};
	int first = 0;

	for (uint32_t i = 0; i < per_thread; i++) {
		int err;

		if (scope == 0)
			err = dvx_dev_sq_post(dvx_dev_thread(), sq, 1, timeout_ns, nop);
		else if (scope == 1)
			err = dvx_dev_sq_post(dvx_dev_warp(), sq, 1, timeout_ns, nop);
		else
			err = dvx_dev_sq_post(dvx_dev_block(), sq, 1, timeout_ns, nop);
		if (err && !first)
			first = err;
		if (err == -ETIMEDOUT && scope == 0)
			break;	/* warp and block scopes keep their group converged */
	}
	((int32_t *)status)[tid] = first;
}
