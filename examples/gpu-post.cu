// SPDX-License-Identifier: MIT
/*
 * examples/gpu-post.cu - the device half of examples/gpu-post.c: a kernel whose threads
 * each post one RDMA WRITE on a QP the host created, then one thread waits for every
 * completion on the CQ. Compiled to a fatbin that the host program loads:
 *
 *   nvcc -fatbin -gencode arch=compute_90,code=sm_90 \
 *        $(pkg-config --cflags dvx) gpu-post.cu -o gpu-post.fatbin
 */
#include <dvx/gpu/post.cuh>

/*
 * Thread i writes @len bytes from @laddr + i * @len (@lkey) to @raddr + i * @len
 * (@rkey), signaled. result[0]: the number of good completions, or the first error
 * (a failed post, or the errno of an error completion; result[1] its syndrome).
 */
extern "C" __global__ void ex_post(struct dvx_gpu_sq sq, struct dvx_gpu_cq cq, uint64_t laddr,
				   uint32_t lkey, uint64_t raddr, uint32_t rkey, uint32_t len,
				   uint64_t timeout_ns, int32_t *result)
{
	__shared__ int failed;
	uint32_t i = threadIdx.x;
	int err;

	if (i == 0)
		failed = 0;
	__syncthreads();
	/* many threads, one QP: reservations, in-order publish and one doorbell for all
	 * (thread scope here; dvx_dev_warp() or dvx_dev_block() as the scope aggregates
	 * further: one reservation and one doorbell per group) */
	err = dvx_dev_sq_post(dvx_dev_thread(), sq, 1, timeout_ns,
			      [=](const struct dvx_mlx5_wq *wq, uint32_t idx) {
				      return dvx_mlx5_wqe_rdma_write(
					      wq, idx, DVX_MLX5_WQE_CTRL_CQ_UPDATE,
					      raddr + (uint64_t)i * len, rkey,
					      laddr + (uint64_t)i * len, lkey, len);
			      });
	if (err)
		atomicCAS(&failed, 0, err);
	__syncthreads();
	if (i != 0)
		return;
	if (failed) {
		result[0] = failed;
		return;
	}
	/* one poller: an error completion is an error, never a completion */
	uint64_t ci = 0;
	struct dvx_mlx5_cqe_info info = {};
	int n = 0;

	for (uint32_t k = 0; k < blockDim.x; k++) {
		int rc = dvx_dev_cq_poll(cq, &ci, &info, timeout_ns);

		if (rc != 1) {
			result[0] = rc;
			result[1] = info.syndrome;
			return;
		}
		n++;
	}
	result[0] = n;
}
