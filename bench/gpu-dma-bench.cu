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

/*
 * d_wait - what a collective's kernel does while the NIC moves its bytes: spin on a
 * word of device memory until the NIC's copy sets it or @ns of %globaltimer pass; then
 * out[0] = ns waited, out[1] = the word (0: it gave up).
 */
extern "C" __global__ void d_wait(const volatile uint32_t *word, uint64_t ns, uint64_t *out)
{
	uint64_t t0 = dvx_dev_now_ns();
	uint32_t w;

	while (!(w = *word) && dvx_dev_now_ns() - t0 < ns)
		;
	out[0] = dvx_dev_now_ns() - t0;
	out[1] = w;
}
