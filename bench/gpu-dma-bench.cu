// SPDX-License-Identifier: MIT
/*
 * bench/gpu-dma-bench.cu - the kernel of bench/gpu-dma-bench: it runs for @ns of
 * %globaltimer; @poll_mask picks the threads that spend it reading @flag (host memory
 * the GPU maps, as a wait on a counter or a CQ in host memory reads it) until it is
 * set; the others only read the clock.
 */
#include <dvx/gpu/post.cuh>

extern "C" __global__ void d_spin(const volatile uint32_t *flag, uint64_t ns, uint32_t all_poll)
{
	uint64_t t0 = dvx_dev_now_ns();
	int poll = all_poll == 2 ? 0 : (all_poll == 1 || threadIdx.x == 0);

	while (dvx_dev_now_ns() - t0 < ns)
		if (poll && *flag)
			break;
}
