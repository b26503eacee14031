/* SPDX-License-Identifier: MIT */
/*
 * dvx/mlx5/barrier.h - CPU memory barriers named by what they order, and MMIO stores.
 *
 * The NIC is another agent that reads our rings and doorbell records through PCIe DMA
 * and receives our doorbell writes as MMIO. Each barrier below is named for the pair
 * of accesses it orders; each call site says which pair it means. The mapping to
 * instructions follows rdma-core's util/udma_barrier.h (facts 3.2, 4.2):
 *
 *   barrier                            x86-64           aarch64
 *   dvx_wmb_wqe_before_dbr()           compiler only    dmb oshst
 *   dvx_wmb_dbr_before_mmio()          sfence           dsb st
 *   dvx_wmb_mmio_flush()               sfence           dsb st
 *   dvx_rmb_owner_before_cqe()         lfence           dmb oshld
 *   dvx_mb_cqe_reads_before_ci()       compiler only    dmb oshld
 *
 * x86-64 keeps cacheable stores in order and DMA is coherent, so ordering WQE stores
 * before the doorbell-record store needs only the compiler; write-combining MMIO
 * (BlueFlame) needs sfence both to order it after the record and to flush it out.
 *
 * These are host-only (CPU) functions. The GPU's own sequence, with fence.release at
 * gpu or system scope, lives in the gpu/ layer.
 */
#ifndef DVX_MLX5_BARRIER_H
#define DVX_MLX5_BARRIER_H

#include <dvx/byteorder.h>

#if !defined(__x86_64__) && !defined(__aarch64__)
#error "dvx supports x86-64 and aarch64 hosts"
#endif

/**
 * dvx_wmb_wqe_before_dbr() - order WQE stores before the doorbell-record store.
 *
 * WQE (and receive WQE) stores in cacheable memory become visible to the device
 * before the doorbell-record store that publishes them: a compiler barrier on x86-64
 * (stores are not reordered with stores), dmb oshst on aarch64.
 *
 * Context: any host thread. Return: nothing.
 */
static inline void dvx_wmb_wqe_before_dbr(void)
{
#if defined(__x86_64__)
	dvx_compiler_barrier();
#else
	__asm__ __volatile__("dmb oshst" ::: "memory");
#endif
}

/**
 * dvx_wmb_dbr_before_mmio() - order the doorbell-record store before the MMIO doorbell.
 *
 * The doorbell-record store is visible before the MMIO doorbell/BlueFlame write that
 * follows (the device may read the record when the doorbell arrives), and any earlier
 * write-combining stores are drained first: sfence on x86-64, dsb st on aarch64.
 *
 * Context: any host thread. Return: nothing.
 */
static inline void dvx_wmb_dbr_before_mmio(void)
{
#if defined(__x86_64__)
	__asm__ __volatile__("sfence" ::: "memory");
#else
	__asm__ __volatile__("dsb st" ::: "memory");
#endif
}

/**
 * dvx_wmb_mmio_flush() - drain the write-combining buffer after a doorbell.
 *
 * Pushes the MMIO doorbell/BlueFlame stores out of the write-combining buffer before
 * anything that follows (the next doorbell to the same register in particular):
 * sfence on x86-64, dsb st on aarch64.
 *
 * Context: any host thread. Return: nothing.
 */
static inline void dvx_wmb_mmio_flush(void)
{
#if defined(__x86_64__)
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
 * lfence on x86-64, dmb oshld on aarch64.
 *
 * Context: any host thread. Return: nothing.
 */
static inline void dvx_rmb_owner_before_cqe(void)
{
#if defined(__x86_64__)
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
 * with later stores), dmb oshld on aarch64.
 *
 * Context: any host thread. Return: nothing.
 */
static inline void dvx_mb_cqe_reads_before_ci(void)
{
#if defined(__x86_64__)
	dvx_compiler_barrier();
#else
	__asm__ __volatile__("dmb oshld" ::: "memory");
#endif
}

/**
 * dvx_mmio_write64() - one 64-bit store to a UAR register.
 * @reg:	the register (8-byte aligned, mapped from the UAR page)
 * @raw:	the value, already in the byte order the device expects
 *
 * The doorbell must reach the device as a single 8-byte write (never two 4-byte
 * halves). No barrier: callers order it with dvx_wmb_dbr_before_mmio() and
 * dvx_wmb_mmio_flush().
 *
 * Context: any host thread. Return: nothing.
 */
static inline void dvx_mmio_write64(void *reg, uint64_t raw)
{
	/* volatile: never merged or dropped; atomic: one untorn access that a software
	 * device (hal/sim) may read concurrently without a data race */
	__atomic_store_n((volatile uint64_t *)reg, raw, __ATOMIC_RELAXED);
}

/*
 * Stores software makes to hand memory to the device (doorbell records, the CQ
 * consumer index) are release stores, and the CQE owner byte is read with an acquire
 * load: on x86-64 and aarch64 these are the plain store/load (stlr/ldar on aarch64)
 * beside the barriers above, which still order them for DMA; what they add is the
 * C11 ordering a software device running on another thread (hal/sim) relies on.
 */

/**
 * dvx_store_release_be32() - release-store a big-endian word handed to the device.
 * @p:		the word (a doorbell record, the CQ consumer index), 4-byte aligned
 * @v:		the value, big-endian
 *
 * Context: any host thread. Return: nothing.
 */
static inline void dvx_store_release_be32(dvx_be32 *p, dvx_be32 v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/**
 * dvx_load_acquire_u8() - acquire-load a byte the device writes (the CQE owner byte).
 * @p:		the byte
 *
 * Context: any host thread. Return: the byte's value.
 */
static inline uint8_t dvx_load_acquire_u8(const uint8_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/**
 * dvx_mmio_copy_wqebb() - copy one 64-byte WQE basic block into a BlueFlame register.
 * @reg:	the BlueFlame register (64-byte aligned, write-combining mapping)
 * @src:	the WQEBB in the ring, 8-byte aligned
 *
 * Eight 8-byte stores, each untorn; no barrier (see dvx_mmio_write64()).
 *
 * Context: any host thread. Return: nothing.
 */
static inline void dvx_mmio_copy_wqebb(void *reg, const void *src)
{
	volatile uint64_t *d = (volatile uint64_t *)reg;
	const uint64_t *s = (const uint64_t *)src;
	int i;

	for (i = 0; i < 8; i++)
		__atomic_store_n(&d[i], s[i], __ATOMIC_RELAXED);
}

#endif /* DVX_MLX5_BARRIER_H */
