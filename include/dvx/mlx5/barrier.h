/* SPDX-License-Identifier: MIT */
/*
 * dvx/mlx5/barrier.h - the memory orderings the device protocol needs, named by what
 * they order, for the CPU and for GPU threads alike, and the MMIO stores.
 *
 * The NIC is another agent that reads our rings and doorbell records through PCIe DMA
 * and receives our doorbell writes as MMIO. Each barrier below is named for the pair
 * of accesses it orders; each call site says which pair it means (prm 3.2, 3.5, 4.2).
 *
 *   barrier                            x86-64        aarch64      GPU (PTX)
 *   dvx_wmb_wqe_before_dbr(scope)      compiler      dmb oshst    fence.acq_rel.<scope>
 *   dvx_wmb_dbr_before_mmio(scope)     sfence        dsb st       fence.acq_rel.<scope>
 *   dvx_wmb_mmio_flush()               sfence        dsb st       (nothing)
 *   dvx_rmb_owner_before_cqe()         lfence        dmb oshld    (the owner load acquires)
 *   dvx_mb_cqe_reads_before_ci()       compiler      dmb oshld    (nothing, see below)
 *   dvx_wmb_ci_before_reuse(scope)     compiler      compiler     fence.acq_rel.<scope>
 *
 * The CPU mapping follows rdma-core's util/udma_barrier.h: x86-64 keeps cacheable
 * stores in order and DMA is coherent, so ordering WQE stores before the
 * doorbell-record store needs only the compiler; write-combining MMIO (BlueFlame)
 * needs sfence both to order it after the record and to flush it out. The GPU mapping
 * is NVSHMEM's and DOCA GPUNetIO's: fences at GPU scope when the rings live in GPU
 * memory (only the NIC reads them), at system scope when they live in host memory.
 *
 * Scope: GPU code orders for the observers of a scope, DVX_SCOPE_GPU (threads of this
 * GPU, and the NIC reading GPU memory) or DVX_SCOPE_SYS (also the CPU and other
 * devices). On the CPU every ordering is system-wide and the scope is ignored; the
 * argument is a constant at every call site, so it costs nothing.
 *
 * Posting counters shared by several posters (dvx/mlx5/sq.h) use the atomics at the
 * end of this file: C11-style builtins on the CPU, PTX atomics on the GPU.
 */
#ifndef DVX_MLX5_BARRIER_H
#define DVX_MLX5_BARRIER_H

#include <dvx/byteorder.h>

#if !defined(__CUDA_ARCH__) && !defined(__x86_64__) && !defined(__aarch64__)
#error "dvx supports x86-64 and aarch64 hosts"
#endif

/*
 * ThreadSanitizer does not model __atomic_thread_fence (GCC refuses it under
 * -fsanitize=thread with -Werror=tsan); under it the CPU full barrier is the
 * instruction itself. The ordering is the same; TSan learns it from the atomics the
 * fence pairs with (every word another thread reads is accessed atomically).
 */
#if defined(__SANITIZE_THREAD__)
#define DVX_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define DVX_TSAN 1
#endif
#endif

/* who must observe an ordering made by GPU code (ignored on the CPU) */
#define DVX_SCOPE_GPU 0u
#define DVX_SCOPE_SYS 1u

/**
 * dvx_fence() - order this thread's earlier accesses (and those it observed) before
 * its later ones, for the observers of @scope.
 * @scope:	DVX_SCOPE_GPU or DVX_SCOPE_SYS (GPU code); ignored on the CPU
 *
 * CPU: a full barrier (mfence / dmb ish). GPU: fence.acq_rel.gpu or .sys.
 *
 * Context: any, host or device. Return: nothing.
 */
DVX_INLINE void dvx_fence(unsigned scope)
{
#ifdef __CUDA_ARCH__
	if (scope == DVX_SCOPE_SYS)
		asm volatile("fence.acq_rel.sys;" ::: "memory");
	else
		asm volatile("fence.acq_rel.gpu;" ::: "memory");
#elif defined(DVX_TSAN) && defined(__x86_64__)
	(void)scope;
	__asm__ __volatile__("mfence" ::: "memory");
#elif defined(DVX_TSAN)
	(void)scope;
	__asm__ __volatile__("dmb ish" ::: "memory");
#else
	(void)scope;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

/**
 * dvx_wmb_wqe_before_dbr() - order WQE stores before the doorbell-record store.
 * @scope:	GPU code: where the ring lives (DVX_SCOPE_SYS: host memory)
 *
 * WQE (and receive WQE) stores become visible to the device before the doorbell-record
 * store that publishes them: a compiler barrier on x86-64 (stores are not reordered
 * with stores), dmb oshst on aarch64, a fence at @scope on the GPU.
 *
 * Context: any, host or device. Return: nothing.
 */
DVX_INLINE void dvx_wmb_wqe_before_dbr(unsigned scope)
{
#ifdef __CUDA_ARCH__
	dvx_fence(scope);
#elif defined(__x86_64__)
	(void)scope;
	__asm__ __volatile__("" ::: "memory");
#else
	(void)scope;
	__asm__ __volatile__("dmb oshst" ::: "memory");
#endif
}

/**
 * dvx_wmb_dbr_before_mmio() - order the doorbell-record store before the MMIO doorbell.
 * @scope:	GPU code: where the record lives
 *
 * The doorbell-record store is visible before the MMIO doorbell/BlueFlame write that
 * follows (the device may read the record when the doorbell arrives), and any earlier
 * write-combining stores are drained first: sfence on x86-64, dsb st on aarch64, a
 * fence at @scope on the GPU.
 *
 * Context: any, host or device. Return: nothing.
 */
DVX_INLINE void dvx_wmb_dbr_before_mmio(unsigned scope)
{
#ifdef __CUDA_ARCH__
	dvx_fence(scope);
#elif defined(__x86_64__)
	(void)scope;
	__asm__ __volatile__("sfence" ::: "memory");
#else
	(void)scope;
	__asm__ __volatile__("dsb st" ::: "memory");
#endif
}

/**
 * dvx_wmb_mmio_flush() - drain the write-combining buffer after a doorbell.
 *
 * Pushes the MMIO doorbell/BlueFlame stores out of the write-combining buffer before
 * anything that follows (the next doorbell to the same register in particular):
 * sfence on x86-64, dsb st on aarch64. GPU MMIO stores are not write-combined:
 * nothing.
 *
 * Context: any, host or device. Return: nothing.
 */
DVX_INLINE void dvx_wmb_mmio_flush(void)
{
#ifdef __CUDA_ARCH__
#elif defined(__x86_64__)
	__asm__ __volatile__("sfence" ::: "memory");
#else
	__asm__ __volatile__("dsb st" ::: "memory");
#endif
}

/**
 * dvx_rmb_owner_before_cqe() - order the CQE owner-bit load before the CQE's other loads.
 *
 * The load that saw a CQE's owner bit flip is ordered before the loads of the CQE's
 * other fields (otherwise they could be read from before the device wrote them):
 * lfence on x86-64, dmb oshld on aarch64. On the GPU the owner load itself is an
 * acquire (dvx_cqe_owner_load()): nothing.
 *
 * Context: any, host or device. Return: nothing.
 */
DVX_INLINE void dvx_rmb_owner_before_cqe(void)
{
#ifdef __CUDA_ARCH__
#elif defined(__x86_64__)
	__asm__ __volatile__("lfence" ::: "memory");
#else
	__asm__ __volatile__("dmb oshld" ::: "memory");
#endif
}

/**
 * dvx_mb_cqe_reads_before_ci() - order CQE loads before the consumer-index store.
 *
 * Every load from consumed CQEs completes before the consumer-index store that lets
 * the device overwrite them: a compiler barrier on x86-64 (loads are not reordered
 * with later stores), dmb oshld on aarch64. On the GPU the consumed entries' fields
 * were read into registers before the store is issued and the NIC overwrites an entry
 * only a full ring later: nothing (as NVSHMEM and DOCA do).
 *
 * Context: any, host or device. Return: nothing.
 */
DVX_INLINE void dvx_mb_cqe_reads_before_ci(void)
{
#ifdef __CUDA_ARCH__
#elif defined(__x86_64__)
	__asm__ __volatile__("" ::: "memory");
#else
	__asm__ __volatile__("dmb oshld" ::: "memory");
#endif
}

/**
 * dvx_wmb_ci_before_reuse() - order a CQ consumer-index store before the store that
 * frees the completed WQEs' SQ slots to other posters.
 * @scope:	GPU code: where the CQ's record lives
 *
 * A slot reused before the NIC sees the consumer index could complete into an entry
 * the NIC still counts as unconsumed (a CQ overrun). CPU: a compiler barrier (both are
 * release stores, kept in program order). GPU: a fence at @scope (the slots are freed
 * by a GPU-scope release the NIC does not observe).
 *
 * Context: any, host or device. Return: nothing.
 */
DVX_INLINE void dvx_wmb_ci_before_reuse(unsigned scope)
{
#ifdef __CUDA_ARCH__
	dvx_fence(scope);
#else
	(void)scope;
	__asm__ __volatile__("" ::: "memory");
#endif
}

/**
 * dvx_store_dbrec() - store a big-endian word the device reads (a doorbell record, the
 * CQ consumer index), ordered by the barriers around it.
 * @p:		the word, 4-byte aligned
 * @v:		the value, big-endian
 *
 * CPU: a release store (also orders it for a software device running on another
 * thread, hal/sim). GPU: st.relaxed.sys.u32, a single untorn store the fences around
 * it order.
 *
 * Context: any, host or device. Return: nothing.
 */
DVX_INLINE void dvx_store_dbrec(dvx_be32 *p, dvx_be32 v)
{
#ifdef __CUDA_ARCH__
	asm volatile("st.relaxed.sys.u32 [%0], %1;" ::"l"(p), "r"((uint32_t)v) : "memory");
#else
	__atomic_store_n((DVX_FORCE uint32_t *)p, (DVX_FORCE uint32_t)v, __ATOMIC_RELEASE);
#endif
}

/**
 * dvx_mmio_write64() - one 64-bit store to a UAR register.
 * @reg:	the register (8-byte aligned, mapped from the UAR page)
 * @raw:	the value, already in the byte order the device expects
 *
 * The doorbell must reach the device as a single 8-byte write (never two 4-byte
 * halves). No barrier: callers order it with dvx_wmb_dbr_before_mmio() and
 * dvx_wmb_mmio_flush(). GPU: st.mmio.relaxed.sys.global.u64.
 *
 * Context: any, host or device. Return: nothing.
 */
DVX_INLINE void dvx_mmio_write64(void *reg, uint64_t raw)
{
#ifdef __CUDA_ARCH__
	asm volatile("st.mmio.relaxed.sys.global.u64 [%0], %1;" ::"l"(reg), "l"(raw) : "memory");
#else
	/* volatile: never merged or dropped; atomic: one untorn access that a software
	 * device (hal/sim) polling from another thread may read without a data race. */
	__atomic_store_n((volatile uint64_t *)reg, raw, __ATOMIC_RELAXED);
#endif
}

/**
 * dvx_cqe_owner_load() - load the byte of a CQE that holds its opcode and owner bit,
 * ordered before every later load of the entry.
 * @cqe:	the 64-byte entry (64-byte aligned)
 * @scope:	GPU code: DVX_SCOPE_SYS when the CQ is in host memory
 *
 * CPU: an acquire load of byte 63 then dvx_rmb_owner_before_cqe(). GPU: an acquire
 * load (at @scope) of bytes 60-63 as one word, whose top byte is byte 63 (the GPU is
 * little-endian).
 *
 * Context: any, host or device. Return: the op_own byte.
 */
DVX_INLINE uint8_t dvx_cqe_owner_load(const void *cqe, unsigned scope)
{
#ifdef __CUDA_ARCH__
	const uint32_t *tail = (const uint32_t *)((const uint8_t *)cqe + 60);
	uint32_t w;

	if (scope == DVX_SCOPE_SYS)
		asm volatile("ld.acquire.sys.u32 %0, [%1];" : "=r"(w) : "l"(tail) : "memory");
	else
		asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(w) : "l"(tail) : "memory");
	return (uint8_t)(w >> 24);
#else
	uint8_t v = __atomic_load_n((const uint8_t *)cqe + 63, __ATOMIC_ACQUIRE);

	(void)scope;
	/* The owner bit was seen before any other byte of the entry is read. */
	dvx_rmb_owner_before_cqe();
	return v;
#endif
}

/*
 * DVX_MMIO_COPY64: 1 where the CPU has a store sequence that writes 64 bytes as one
 * write-combining burst, 0 where it has none (device code, a port to another
 * architecture). Without it there is no BlueFlame: dvx_mlx5_sq_ring() rings the plain
 * 8-byte doorbell (docs/mlx5.md, "BlueFlame copies").
 */
#if defined(__CUDA_ARCH__)
#define DVX_MMIO_COPY64 0
#elif defined(__x86_64__) || defined(__aarch64__)
#define DVX_MMIO_COPY64 1
#else
#define DVX_MMIO_COPY64 0
#endif

/**
 * dvx_mmio_copy_wqebb() - copy one 64-byte WQE basic block into a BlueFlame register
 * as one 64-byte write.
 * @reg:	the BlueFlame register (64-byte aligned, write-combining mapping)
 * @src:	the WQEBB in the ring, 8-byte aligned
 *
 * A BlueFlame write is worth its cost only when the device receives the WQEBB as one
 * 64-byte PCIe write; eight separate 8-byte stores need not become one (on aarch64
 * they do not). So the copy is a single store sequence per architecture (prm 3.3):
 *
 *  - x86-64: four 16-byte SSE2 stores (movdqu) to offsets 0, 16, 32 and 48, back to
 *    back in ascending order inside one asm statement. They fill the register's one
 *    64-byte line in the write-combining buffer, which leaves as one 64-byte burst at
 *    the flush that follows (dvx_wmb_mmio_flush()). SSE2 is part of x86-64, so this is
 *    right on every x86-64 CPU; a single 64-byte store (AVX-512, MOVDIR64B) would need
 *    a CPU check at run time and buys nothing a full WC line does not.
 *  - aarch64: one NEON st1 of four 128-bit registers, a single instruction writing the
 *    64 bytes in ascending order, as rdma-core's mmio_memcpy_x64 does (vst4q_u64).
 *  - elsewhere DVX_MMIO_COPY64 is 0 and this is not called.
 *
 * No barrier: callers order it with dvx_wmb_dbr_before_mmio() and dvx_wmb_mmio_flush().
 * CPU only: GPU posters never use BlueFlame. tests/mlx5/test_bf_asm.c compiles this
 * for both architectures and checks the instructions.
 *
 * Context: any host thread. Return: nothing.
 */
static inline void dvx_mmio_copy_wqebb(void *reg, const void *src)
{
#if defined(__CUDA_ARCH__)
	(void)reg;
	(void)src;
#elif defined(__x86_64__)
	__asm__ __volatile__("movdqu (%1), %%xmm0\n\t"
			     "movdqu 16(%1), %%xmm1\n\t"
			     "movdqu 32(%1), %%xmm2\n\t"
			     "movdqu 48(%1), %%xmm3\n\t"
			     "movdqu %%xmm0, (%0)\n\t"
			     "movdqu %%xmm1, 16(%0)\n\t"
			     "movdqu %%xmm2, 32(%0)\n\t"
			     "movdqu %%xmm3, 48(%0)"
			     :
			     : "r"(reg), "r"(src)
			     : "xmm0", "xmm1", "xmm2", "xmm3", "memory");
#elif defined(__aarch64__)
	__asm__ __volatile__("ld1 {v16.2d, v17.2d, v18.2d, v19.2d}, [%1]\n\t"
			     "st1 {v16.2d, v17.2d, v18.2d, v19.2d}, [%0]"
			     :
			     : "r"(reg), "r"(src)
			     : "v16", "v17", "v18", "v19", "memory");
#else
	(void)reg;
	(void)src;
#endif
}

/* ---- atomics on posting counters (host memory for CPU posters, GPU memory for GPU
 * posters: GPU atomics on host memory are not atomic on every platform) ---- */

/**
 * dvx_ld_acquire_u64(), dvx_ld_relaxed_u64(), dvx_st_release_u64(), dvx_st_relaxed_u64()
 * - single untorn loads and stores of a counter, with an order and a scope.
 * @p:		the (8-byte aligned) word
 * @v:		the value to store
 * @scope:	GPU code: DVX_SCOPE_GPU or DVX_SCOPE_SYS; ignored on the CPU
 *
 * Acquire and release at @scope on the GPU (ld.acquire.gpu/.sys, st.release.gpu/.sys),
 * __ATOMIC_ACQUIRE / __ATOMIC_RELEASE on the CPU. The relaxed forms order nothing;
 * they are single accesses the compiler neither drops nor merges.
 *
 * Context: any, host or device. Return: the loaded value (loads), nothing (stores).
 */
DVX_INLINE uint64_t dvx_ld_acquire_u64(const uint64_t *p, unsigned scope)
{
#ifdef __CUDA_ARCH__
	uint64_t v;

	if (scope == DVX_SCOPE_SYS)
		asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
	else
		asm volatile("ld.acquire.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
	return v;
#else
	(void)scope;
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
#endif
}

DVX_INLINE uint64_t dvx_ld_relaxed_u64(const uint64_t *p)
{
#ifdef __CUDA_ARCH__
	uint64_t v;

	asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
	return v;
#else
	return __atomic_load_n(p, __ATOMIC_RELAXED);
#endif
}

DVX_INLINE void dvx_st_release_u64(uint64_t *p, uint64_t v, unsigned scope)
{
#ifdef __CUDA_ARCH__
	if (scope == DVX_SCOPE_SYS)
		asm volatile("st.release.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
	else
		asm volatile("st.release.gpu.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
#else
	(void)scope;
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
#endif
}

DVX_INLINE void dvx_st_relaxed_u64(uint64_t *p, uint64_t v)
{
#ifdef __CUDA_ARCH__
	asm volatile("st.relaxed.gpu.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
#else
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
#endif
}

/**
 * dvx_ld_acquire_u32(), dvx_st_release_u32() - acquire load and release store of a
 * 32-bit state word, at GPU scope on the GPU.
 * @p:		the (4-byte aligned) word
 * @v:		the value to store
 *
 * Context: any, host or device. Return: the loaded value (load), nothing (store).
 */
DVX_INLINE uint32_t dvx_ld_acquire_u32(const uint32_t *p)
{
#ifdef __CUDA_ARCH__
	uint32_t v;

	asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
	return v;
#else
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
#endif
}

DVX_INLINE void dvx_st_release_u32(uint32_t *p, uint32_t v)
{
#ifdef __CUDA_ARCH__
	asm volatile("st.release.gpu.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
#else
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
#endif
}

/**
 * dvx_cas_u64(), dvx_faa_u64(), dvx_max_u64() - read-modify-write a counter.
 * @p:		the (8-byte aligned) word
 * @expected:	cas: the value @p must hold
 * @v:		cas: the new value; faa: the addend; max: the candidate
 *
 * dvx_cas_u64() stores @v when *@p == @expected; dvx_faa_u64() adds @v; dvx_max_u64()
 * raises *@p to @v if it is larger. CPU: acquire-release; GPU: the atomic*() of CUDA
 * (relaxed, GPU scope): callers fence around them where they publish.
 *
 * Context: any, host or device. Return: the value *@p held before.
 */
DVX_INLINE uint64_t dvx_cas_u64(uint64_t *p, uint64_t expected, uint64_t v)
{
#ifdef __CUDA_ARCH__
	return (uint64_t)atomicCAS((unsigned long long *)p, (unsigned long long)expected,
				   (unsigned long long)v);
#else
	__atomic_compare_exchange_n(p, &expected, v, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	return expected;
#endif
}

DVX_INLINE uint64_t dvx_faa_u64(uint64_t *p, uint64_t v)
{
#ifdef __CUDA_ARCH__
	return (uint64_t)atomicAdd((unsigned long long *)p, (unsigned long long)v);
#else
	return __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL);
#endif
}

DVX_INLINE uint64_t dvx_max_u64(uint64_t *p, uint64_t v)
{
#ifdef __CUDA_ARCH__
	return (uint64_t)atomicMax((unsigned long long *)p, (unsigned long long)v);
#else
	uint64_t old = __atomic_load_n(p, __ATOMIC_RELAXED);

	while (old < v &&
	       !__atomic_compare_exchange_n(p, &old, v, 1, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		;
	return old;
#endif
}

/**
 * dvx_trylock(), dvx_unlock() - a one-word try-lock (0 free, 1 held).
 * @l:		the lock word (4-byte aligned)
 *
 * dvx_trylock() takes the lock with acquire order if it is free; dvx_unlock() releases
 * it (release order; GPU: a fence at GPU scope, then an exchange). Nothing spins here:
 * a caller that does not get the lock does something else.
 *
 * Context: any, host or device. Return: dvx_trylock(): 1 when taken, 0 when held by
 * another; dvx_unlock(): nothing.
 */
DVX_INLINE int dvx_trylock(uint32_t *l)
{
#ifdef __CUDA_ARCH__
	if (atomicCAS(l, 0u, 1u) != 0u)
		return 0;
	asm volatile("fence.acq_rel.gpu;" ::: "memory");
	return 1;
#else
	return __atomic_exchange_n(l, 1u, __ATOMIC_ACQUIRE) == 0;
#endif
}

DVX_INLINE void dvx_unlock(uint32_t *l)
{
#ifdef __CUDA_ARCH__
	asm volatile("fence.acq_rel.gpu;" ::: "memory");
	atomicExch(l, 0u);
#else
	__atomic_store_n(l, 0u, __ATOMIC_RELEASE);
#endif
}

/**
 * dvx_cpu_relax() - tell the processor this thread is spinning.
 *
 * CPU: pause (x86-64) or yield (aarch64). GPU: a short __nanosleep so other warps run.
 *
 * Context: any, host or device. Return: nothing.
 */
DVX_INLINE void dvx_cpu_relax(void)
{
#ifdef __CUDA_ARCH__
	__nanosleep(64);
#elif defined(__x86_64__)
	__builtin_ia32_pause();
#else
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

#endif /* DVX_MLX5_BARRIER_H */
