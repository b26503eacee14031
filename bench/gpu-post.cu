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
			err = dvx_dev_sq_post(dvx_dev_thread(), sq, 1, timeout_ns, w);
		} else if (scope == 1) {
			err = dvx_dev_sq_post(dvx_dev_warp(), sq, 1, timeout_ns, w);
		} else if (scope == 2) {
			err = dvx_dev_sq_post(dvx_dev_block(), sq, 1, timeout_ns, w);
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

/*
 * b_post_q: as b_post, but block b posts on its own SQ, sqs[b] (one QP per block); the
 * WQEs of block b carry the ids b * blockDim.x * per_thread + ...
 */
extern "C" __global__ void b_post_q(const struct dvx_gpu_sq *sqs, uint32_t scope,
				    uint32_t per_thread, uint64_t timeout_ns, int32_t *status)
{
	struct dvx_gpu_sq sq = sqs[blockIdx.x];
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

		if (scope == 0)
			err = dvx_dev_sq_post(dvx_dev_thread(), sq, 1, timeout_ns, w);
		else if (scope == 1)
			err = dvx_dev_sq_post(dvx_dev_warp(), sq, 1, timeout_ns, w);
		else
			err = dvx_dev_sq_post(dvx_dev_block(), sq, 1, timeout_ns, w);
		if (err) {
			first = err;
			if (scope == 0)
				break;
		}
	}
	(void)wq;
	status[tid] = first;
}

/*
 * b_recycle: the consumer of GPU-resident SQs, itself on the GPU (not behind PCIe):
 * thread q follows SQ q's doorbell record and frees every WQEBB below it at once, by a
 * release store of the view's consumer index, until the host raises *stop (host
 * memory) and nothing is left; it leaves the number consumed in done[q].
 */
extern "C" __global__ void b_recycle(const struct dvx_gpu_sq *sqs, uint32_t nq,
				     const uint32_t *stop, uint64_t *done)
{
	uint32_t q = blockIdx.x * blockDim.x + threadIdx.x;
	uint64_t consumed = 0;

	if (q >= nq)
		return;
	const struct dvx_gpu_sq sq = sqs[q];
	uint64_t *ci = (uint64_t *)sq.ci;
	const volatile uint32_t *rec = (const volatile uint32_t *)sq.sq.dbrec;

	for (;;) {
		uint32_t r = __byte_perm(rec[DVX_MLX5_SND_DBR], 0, 0x0123);
		uint64_t pi = consumed + (uint16_t)((uint16_t)r - (uint16_t)consumed);

		if (pi != consumed) {
			consumed = pi;
			dvx_st_release_u64(ci, pi, DVX_SCOPE_GPU);
		} else if (*(const volatile uint32_t *)stop) {
			/* the posters finished before stop was raised: one more look */
			__threadfence_system();
			r = __byte_perm(rec[DVX_MLX5_SND_DBR], 0, 0x0123);
			if ((uint16_t)r == (uint16_t)consumed)
				break;
		}
	}
	done[q] = consumed;
}
