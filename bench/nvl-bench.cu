// SPDX-License-Identifier: MIT
/*
 * Kernels of bench/nvl-bench: dvx's NVLink device API (dvx/nvl/dev.cuh) against a
 * plain SM copy and a plain relaxed-atomic ping-pong written here, in the same run.
 */
#include <dvx/nvl/dev.cuh>

/* dvx put, block scope: block b puts its slice of [src, src + len) */
extern "C" __global__ void b_put_block(uint8_t *dst, const uint8_t *src, uint64_t len)
{
	uint64_t slice = (len / gridDim.x + 15) & ~(uint64_t)15, off = slice * blockIdx.x;

	if (off < len)
		dvx_nvl_put_block(dst + off, src + off, off + slice > len ? len - off : slice);
}

/* dvx put, warp scope: warp w of the grid puts its slice */
extern "C" __global__ void b_put_warp(uint8_t *dst, const uint8_t *src, uint64_t len)
{
	uint32_t nw = gridDim.x * blockDim.x / 32, w = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
	uint64_t slice = (len / nw + 15) & ~(uint64_t)15, off = slice * w;

	if (off < len)
		dvx_nvl_put_warp(dst + off, src + off, off + slice > len ? len - off : slice);
}

/* the reference: a plain grid-stride copy of 16-byte vectors (int4 stores) */
extern "C" __global__ void b_ref_copy(uint8_t *dst, const uint8_t *src, uint64_t len)
{
	uint64_t n = len / 16, i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
	uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
	int4 *d = (int4 *)dst;
	const int4 *s = (const int4 *)src;

	for (; i < n; i += stride)
		d[i] = s[i];
	if (blockIdx.x == 0 && threadIdx.x < len % 16)
		dst[n * 16 + threadIdx.x] = src[n * 16 + threadIdx.x];
}

/*
 * Ping-pong, one thread per rank (rank 0 starts), @iters round trips; out[0] receives
 * the %globaltimer nanoseconds of the loop (rank 0).
 *  mode 0: dvx signal SET (release) + dvx wait (acquire)
 *  mode 1: dvx put_signal of 8 bytes (SET) + dvx wait
 *  mode 2: dvx signal ADD (release) + dvx wait
 *  mode 3: reference: atomicAdd_system (relaxed) + ld.acquire.sys spin
 *  mode 4: dvx barrier of two: ADD on the peer's word, wait own >= round
 */
extern "C" __global__ void b_pingpong(int mode, int rank, uint64_t *peer_word, uint64_t *my_word,
				      uint8_t *peer_buf, const uint8_t *src, uint32_t iters,
				      uint64_t *out)
{
	uint64_t t0 = dvx_nvl_now_ns(), v;
	uint32_t r;

	for (r = 1; r <= iters; r++) {
		if (mode == 4) {
			dvx_nvl_signal(peer_word, DVX_NVL_SIG_ADD, 1);
			if (dvx_nvl_wait(my_word, DVX_CMP_GE, r, 10000000000ull, nullptr))
				break;
			continue;
		}
		if (rank == 1) {
			if (mode == 3) {
				do
					v = dvx_nvl_read(my_word);
				while (v < r);
			} else if (dvx_nvl_wait(my_word, DVX_CMP_GE, r, 10000000000ull, nullptr)) {
				break;
			}
		}
		if (mode == 0)
			dvx_nvl_signal(peer_word, DVX_NVL_SIG_SET, r);
		else if (mode == 1)
			dvx_nvl_put_signal_thread(peer_buf, src, 8, peer_word, DVX_NVL_SIG_SET, r);
		else if (mode == 2)
			dvx_nvl_signal(peer_word, DVX_NVL_SIG_ADD, 1);
		else
			atomicAdd_system((unsigned long long *)peer_word, 1ull);
		if (rank == 0) {
			if (mode == 3) {
				do
					v = dvx_nvl_read(my_word);
				while (v < r);
			} else if (dvx_nvl_wait(my_word, DVX_CMP_GE, r, 10000000000ull, nullptr)) {
				break;
			}
		}
	}
	out[rank] = r > iters ? dvx_nvl_now_ns() - t0 : 0;
}
