// SPDX-License-Identifier: MIT
/*
 * hal/cuda-kernels.cu - the hal's own device code (CONFIG_DVX_GPU): the stream atomic of
 * gpu_stream_atomic. Compiled ahead of time by nvcc into a fatbin embedded in libdvx.a
 * (hal/cuda.c loads it with the context); a build without nvcc falls back to the same
 * kernel as PTX text the driver compiles.
 *
 * One thread: a system-scope fence (the stream's earlier work, complete when a kernel
 * starts, ordered before), then a release store or add of the word.
 */
#include <stdint.h>

extern "C" __global__ void dvx_hal_stream_atomic(uint64_t addr, uint32_t op, uint64_t value)
{
	asm volatile("fence.sc.sys;" ::: "memory");
	if (op == 1)
		asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(addr), "l"(value) : "memory");
	else
		asm volatile("red.release.sys.global.add.u64 [%0], %1;" ::"l"(addr), "l"(value)
			     : "memory");
}
