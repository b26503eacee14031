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

/*
 * dvx put, block scope, each block one share of the range: the range is cut into
 * gridDim.x shares of dvx_nvl_put_share() bytes (16-byte multiples), block b copies
 * share b with one dvx_nvl_dev_put(dvx_dev_block(), ): the launch sized to the transfer.
 */
extern "C" __global__ void b_put_share(uint8_t *dst, const uint8_t *src, uint64_t len)
{
	uint64_t share = dvx_nvl_put_share(len, gridDim.x), off = blockIdx.x * share;

	if (off < len)
		dvx_nvl_dev_put(dvx_dev_block(), dst + off, src + off, off + share > len ? len - off : share);
}

/* dvx put by the whole grid (dvx_nvl_dev_put_grid()), launched with dvx_nvl_put_blocks() */
extern "C" __global__ void b_put_grid(uint8_t *dst, const uint8_t *src, uint64_t len)
{
	dvx_nvl_dev_put_grid(dst, src, len);
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

__device__ static void st8(uint64_t *data, uint64_t v)
{
	if (data)
		*(volatile uint64_t *)data = v;
}

/* one signal by implementation @how (the variants table) */
__device__ static void sig_variant(int how, uint64_t *w, uint64_t r, uint64_t *data = nullptr)
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
	case 8: asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(w), "l"(r) : "memory"); break;
	/* a release signal after an 8-byte put (*data, through the mapping): what orders it */
	case 9: st8(data, r); asm volatile("fence.acq_rel.sys;" ::: "memory"); sig_variant(0, w, r); break;
	case 10: st8(data, r); sig_variant(4, w, r); break;
	case 11: st8(data, r); sig_variant(5, w, r); break;
	case 12: st8(data, r); asm volatile("fence.sc.sys;" ::: "memory"); sig_variant(0, w, r); break;
	case 13: st8(data, r); asm volatile("atom.release.sys.global.exch.b64 _, [%0], %1;" ::"l"(w), "l"(r) : "memory"); break;
	case 14: st8(data, r); asm volatile("fence.acq_rel.sys;" ::: "memory"); sig_variant(2, w, r); break;
	case 15: st8(data, r); __threadfence_system(); sig_variant(0, w, r); break;
	/* the data itself as one flagged line (the LL path): no ordering needed */
	default: dvx_nvl_ll_store(w, (r & 0xffffffffu) | (r << 32), r << 32 | r); break;
	}
}

/* the wait of variant @how: an acquire look at the word, or (the LL line) a relaxed
 * look at both flagged halves */
__device__ static bool sig_arrived(int how, const uint64_t *w, uint32_t r)
{
	uint64_t a, b;

	if (how < 16)
		return dvx_nvl_read(w) >= r;
	dvx_nvl_ll_load(w, &a, &b);
	return (uint32_t)(a >> 32) == r && (uint32_t)(b >> 32) == r;
}

/* ping-pong of signal variant @how (every variant leaves the word >= the round);
 * the waits are plain acquire spins */
extern "C" __global__ void b_sigvar(int how, int rank, uint64_t *peer_word, uint64_t *my_word,
				    uint32_t iters, uint64_t *out, uint64_t *peer_data)
{
	uint64_t t0 = dvx_nvl_now_ns();
	uint32_t r;

	for (r = 1; r <= iters; r++) {
		if (rank == 1)
			while (!sig_arrived(how, my_word, r))
				;
		sig_variant(how, peer_word, r, peer_data);
		if (rank == 0)
			while (!sig_arrived(how, my_word, r))
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

/*
 * Small messages, ping-pong of @len bytes at @scope (0 thread, 1 warp, 2 block: launch 1,
 * 32 or 128 threads), @iters round trips; out[rank] the nanoseconds of the loop.
 *  ll 1: dvx_nvl_dev_put_ll() into the peer's lines, dvx_nvl_dev_wait_ll() on this rank's
 *        (payload and flag in the same stores; sequence = round)
 *  ll 0: dvx_nvl_put_signal_*() (SET to the round, release) into the peer's buffer,
 *        dvx_nvl_wait_*() on this rank's word, then the payload read into @dst
 */
extern "C" __global__ void b_small(int ll, int scope, int rank, uint8_t *peer_lines,
				   const uint8_t *my_lines, uint64_t *peer_word,
				   const uint64_t *my_word, const uint8_t *src, uint8_t *dst,
				   uint64_t len, uint32_t iters, uint64_t *out)
{
	uint64_t t0 = dvx_nvl_now_ns(), tmo = 10000000000ull;
	uint32_t r;
	int err = 0;

	for (r = 1; r <= iters && !err; r++) {
		for (int turn = 0; turn < 2 && !err; turn++) {
			if ((turn == 0) == (rank == 1)) {	/* rank 1 receives first */
				if (ll)
					err = scope == 0 ? dvx_nvl_dev_wait_ll(dvx_dev_thread(), my_lines, dst, len, r, tmo) :
					      scope == 1 ? dvx_nvl_dev_wait_ll(dvx_dev_warp(), my_lines, dst, len, r, tmo) :
					      dvx_nvl_dev_wait_ll(dvx_dev_block(), my_lines, dst, len, r, tmo);
				else {
					err = scope == 0 ? dvx_nvl_wait(my_word, DVX_CMP_GE, r, tmo, nullptr) :
					      scope == 1 ? dvx_nvl_dev_wait(dvx_dev_warp(), my_word, DVX_CMP_GE, r, tmo) :
					      dvx_nvl_dev_wait(dvx_dev_block(), my_word, DVX_CMP_GE, r, tmo);
					if (!err)
						scope == 0 ? dvx_nvl_dev_put(dvx_dev_thread(), dst, my_lines, len) :
						scope == 1 ? dvx_nvl_dev_put(dvx_dev_warp(), dst, my_lines, len) :
						dvx_nvl_dev_put(dvx_dev_block(), dst, my_lines, len);
				}
			} else if (ll) {
				err = scope == 0 ? dvx_nvl_dev_put_ll(dvx_dev_thread(), peer_lines, src, len, r) :
				      scope == 1 ? dvx_nvl_dev_put_ll(dvx_dev_warp(), peer_lines, src, len, r) :
				      dvx_nvl_dev_put_ll(dvx_dev_block(), peer_lines, src, len, r);
			} else {
				err = scope == 0 ? dvx_nvl_dev_put_signal(dvx_dev_thread(), peer_lines, src, len, peer_word, DVX_NVL_SIG_SET, r) :
				      scope == 1 ? dvx_nvl_dev_put_signal(dvx_dev_warp(), peer_lines, src, len, peer_word, DVX_NVL_SIG_SET, r) :
				      dvx_nvl_dev_put_signal(dvx_dev_block(), peer_lines, src, len, peer_word, DVX_NVL_SIG_SET, r);
			}
		}
	}
	if (dvx_dev_block().lane == 0)
		out[rank] = err ? 0 : dvx_nvl_now_ns() - t0;
}
