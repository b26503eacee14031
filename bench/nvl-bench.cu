// SPDX-License-Identifier: MIT
/*
 * Kernels of bench/nvl-bench: dvx's NVLink device API (dvx/nvl/dev.cuh) against a
 * plain SM copy and a plain relaxed-atomic ping-pong written here, in the same run.
 */
#include <dvx/nvl/dev.cuh>

/*
 * dvx put, block scope: the range is cut into tiles of @tile bytes that the blocks
 * take round-robin (block b: tiles b, b + grid, ...), each tile one dvx_nvl_dev_put() at block scope:
 * the way a kernel streams a large buffer through the group put.
 */
extern "C" __global__ void b_put_block(uint8_t *dst, const uint8_t *src, uint64_t len,
				       uint64_t tile)
{
	uint64_t off;

	for (off = blockIdx.x * tile; off < len; off += (uint64_t)gridDim.x * tile)
		dvx_nvl_dev_put(dvx_dev_block(), dst + off, src + off, off + tile > len ? len - off : tile);
}

/* dvx put, warp scope: the same with warps taking the tiles */
extern "C" __global__ void b_put_warp(uint8_t *dst, const uint8_t *src, uint64_t len,
				      uint64_t tile)
{
	uint64_t nw = (uint64_t)gridDim.x * blockDim.x / 32;
	uint64_t w = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) / 32, off;

	for (off = w * tile; off < len; off += nw * tile)
		dvx_nvl_dev_put(dvx_dev_warp(), dst + off, src + off, off + tile > len ? len - off : tile);
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

/* one signal by implementation @how (the variants table) */
__device__ static void sig_variant(int how, uint64_t *w, uint64_t r)
{
	switch (how) {
	case 0: asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(w), "l"(r) : "memory"); break;
	case 1: asm volatile("atom.relaxed.sys.global.exch.b64 _, [%0], %1;" ::"l"(w), "l"(r) : "memory"); break;
	case 2: asm volatile("red.relaxed.sys.global.add.u64 [%0], 1;" ::"l"(w) : "memory"); break;
	case 3: atomicAdd_system((unsigned long long *)w, 1ull); break;
	case 4: asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(w), "l"(r) : "memory"); break;
	case 5: asm volatile("red.release.sys.global.add.u64 [%0], 1;" ::"l"(w) : "memory"); break;
	case 6: asm volatile("fence.acq_rel.sys;" ::: "memory"); atomicAdd_system((unsigned long long *)w, 1ull); break;
	case 7: asm volatile("fence.acq_rel.gpu;" ::: "memory"); atomicAdd_system((unsigned long long *)w, 1ull); break;
	default: asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(w), "l"(r) : "memory"); break;
	}
}

/* ping-pong of signal variant @how (every variant leaves the word >= the round);
 * the waits are plain acquire spins */
extern "C" __global__ void b_sigvar(int how, int rank, uint64_t *peer_word, uint64_t *my_word,
				    uint32_t iters, uint64_t *out)
{
	uint64_t t0 = dvx_nvl_now_ns();
	uint32_t r;

	for (r = 1; r <= iters; r++) {
		if (rank == 1)
			while (dvx_nvl_read(my_word) < r)
				;
		sig_variant(how, peer_word, r);
		if (rank == 0)
			while (dvx_nvl_read(my_word) < r)
				;
	}
	out[rank] = dvx_nvl_now_ns() - t0;
}

/*
 * Ping-pong, one thread per rank (rank 0 starts), @iters round trips; out[0] receives
 * the %globaltimer nanoseconds of the loop (rank 0).
 *  mode 0: dvx signal SET (release) + dvx wait (acquire)
 *  mode 1: dvx put_signal of 8 bytes (SET) + dvx wait
 *  mode 2: dvx signal ADD (release) + dvx wait
 *  mode 3: reference: atomicAdd_system (relaxed) + ld.acquire.sys spin
 *  mode 4: dvx barrier of two: ADD on the peer's word, wait own >= round
 *  mode 5: dvx signal SET relaxed (DVX_NVL_SIG_RELAXED) + dvx wait
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
			dvx_nvl_dev_put_signal(dvx_dev_thread(), peer_buf, src, 8, peer_word, DVX_NVL_SIG_SET, r);
		else if (mode == 2)
			dvx_nvl_signal(peer_word, DVX_NVL_SIG_ADD, 1);
		else if (mode == 5)
			dvx_nvl_signal(peer_word, DVX_NVL_SIG_SET | DVX_NVL_SIG_RELAXED, r);
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
