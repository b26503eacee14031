/* SPDX-License-Identifier: MIT */
/*
 * dvx/nvl/ops.h - the NVLink path's operations on mapped peer memory, written once for
 * the host and the GPU: the copy a lane of a cooperating group does, signals (a
 * system-scope release store or add on the peer's word), acquire reads, waits with a
 * timeout, counters raised once a copy is visible, and the flush.
 *
 * The GPU wrappers that run these at thread, warp and block scope are in
 * dvx/nvl/dev.cuh; host code (tests, a software GPU's ranks, host-driven protocols
 * over mappings the CPU can reach) calls these directly with its own lanes.
 *
 * Words: 8-byte aligned uint64_t. NVL words are never the NIC's words: GPU atomics and
 * NIC atomics are not atomic with each other (docs/mp.md).
 */
#ifndef DVX_NVL_OPS_H
#define DVX_NVL_OPS_H

#include <errno.h>

#include <dvx/mlx5/barrier.h>
#include <dvx/p2p/p2p.h>

#ifndef __CUDA_ARCH__
#include <time.h>
#endif

DVX_BEGIN_DECLS

/** enum dvx_nvl_sig_op - what a signal does to the peer's word. */
enum dvx_nvl_sig_op {
	DVX_NVL_SIG_SET = 1,	/* store the value (release) */
	DVX_NVL_SIG_ADD = 2,	/* add the value (release) */
};

/* or'ed into the operation: no ordering (a signal that publishes no data of this
 * thread's; cheaper by a system-scope fence) */
#define DVX_NVL_SIG_RELAXED 0x100u

/* 16-byte vector of the copy */
#ifdef __CUDA_ARCH__
typedef ulonglong2 dvx_nvl_v16;
#else
typedef struct {
	uint64_t a, b;
} DVX_ALIGNED(16) dvx_nvl_v16;
#endif

#define DVX_NVL_COPY_UNROLL 4

/**
 * dvx_nvl_now_ns() - the clock waits are measured with: %globaltimer on the GPU,
 * CLOCK_MONOTONIC on the host.
 *
 * Context: any, host or device. Return: nanoseconds from an arbitrary origin.
 */
DVX_INLINE uint64_t dvx_nvl_now_ns(void)
{
#ifdef __CUDA_ARCH__
	uint64_t t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
#else
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
#endif
}

/**
 * dvx_nvl_copy() - lane @lane's share of copying [@src, @src + @len) to @dst: the group
 * of @nlanes lanes together copies everything, each byte once.
 * @dst:	destination (a peer's mapping, or local)
 * @src:	source
 * @len:	bytes (0 copies nothing)
 * @lane:	this lane, 0 ... @nlanes - 1
 * @nlanes:	lanes of the group (>= 1)
 *
 * Where @dst and @src are equally aligned mod 16 the body moves in 16-byte vectors
 * (mod 8: 8-byte words), lanes interleaved so a warp's accesses coalesce, unrolled
 * DVX_NVL_COPY_UNROLL times so each lane has several loads in flight; the unaligned
 * head and tail, and buffers of other alignments, go by bytes. Nothing is ordered:
 * the group synchronises and fences after (dvx_nvl_flush(), a signal).
 *
 * Context: any, host or device. Return: nothing.
 */
DVX_INLINE void dvx_nvl_copy(void *dst, const void *src, uint64_t len, uint32_t lane,
			     uint32_t nlanes)
{
	uint8_t *d = (uint8_t *)dst;
	const uint8_t *s = (const uint8_t *)src;
	uint64_t head, body, i, n = nlanes;

	if ((((uintptr_t)d ^ (uintptr_t)s) & 15) == 0) {
		head = (16 - ((uintptr_t)d & 15)) & 15;
		if (head > len)
			head = len;
		for (i = lane; i < head; i += n)
			d[i] = s[i];
		body = (len - head) / 16;
		{
			dvx_nvl_v16 *dv = (dvx_nvl_v16 *)(void *)(d + head);
			const dvx_nvl_v16 *sv = (const dvx_nvl_v16 *)(const void *)(s + head);

			i = lane;
			for (; i + (DVX_NVL_COPY_UNROLL - 1) * n < body; i += DVX_NVL_COPY_UNROLL * n) {
				dvx_nvl_v16 v0 = sv[i], v1 = sv[i + n], v2 = sv[i + 2 * n],
					    v3 = sv[i + 3 * n];

				dv[i] = v0;
				dv[i + n] = v1;
				dv[i + 2 * n] = v2;
				dv[i + 3 * n] = v3;
			}
			for (; i < body; i += n)
				dv[i] = sv[i];
		}
		for (i = head + body * 16 + lane; i < len; i += n)
			d[i] = s[i];
		return;
	}
	if ((((uintptr_t)d ^ (uintptr_t)s) & 7) == 0) {
		head = (8 - ((uintptr_t)d & 7)) & 7;
		if (head > len)
			head = len;
		for (i = lane; i < head; i += n)
			d[i] = s[i];
		body = (len - head) / 8;
		for (i = lane; i < body; i += n)
			((uint64_t *)(void *)(d + head))[i] = ((const uint64_t *)(const void *)(s + head))[i];
		for (i = head + body * 8 + lane; i < len; i += n)
			d[i] = s[i];
		return;
	}
	for (i = lane; i < len; i += n)
		d[i] = s[i];
}

/**
 * dvx_nvl_flush() - order this thread's earlier writes (and those it observed: a
 * group's, after the group synchronised) before its later ones for every agent of the
 * system: fence.acq_rel.sys on the GPU (a later relaxed write after it is a release),
 * a full barrier on the host.
 *
 * Context: any, host or device. Return: nothing.
 */
DVX_INLINE void dvx_nvl_flush(void)
{
	dvx_fence(DVX_SCOPE_SYS);
}

/**
 * dvx_nvl_signal_relaxed() - a relaxed system-scope store or add on a peer's word:
 * after a dvx_nvl_flush() it is a release (the group paths use it so); on its own it
 * orders nothing (what a DVX_NVL_SIG_RELAXED signal is).
 * @w:		the word
 * @op:		DVX_NVL_SIG_SET or DVX_NVL_SIG_ADD
 * @value:	what is stored or added
 *
 * Context: any, host or device. Return: 0, or -EINVAL for an unknown @op.
 */
DVX_INLINE int dvx_nvl_signal_relaxed(uint64_t *w, uint32_t op, uint64_t value)
{
#ifdef __CUDA_ARCH__
	if (op == DVX_NVL_SIG_SET)
		asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(w), "l"(value) : "memory");
	else if (op == DVX_NVL_SIG_ADD)
		asm volatile("red.relaxed.sys.global.add.u64 [%0], %1;" ::"l"(w), "l"(value) : "memory");
	else
		return -EINVAL;
#else
	if (op == DVX_NVL_SIG_SET)
		__atomic_store_n(w, value, __ATOMIC_RELAXED);
	else if (op == DVX_NVL_SIG_ADD)
		__atomic_fetch_add(w, value, __ATOMIC_RELAXED);
	else
		return -EINVAL;
#endif
	return 0;
}

/**
 * dvx_nvl_signal() - set or raise a peer's signal word, after this thread's earlier
 * writes (and those it observed) are visible: a system-scope release (st.release.sys,
 * red.release.sys.add on the GPU; a release store or add on the host).
 * @w:		the word in the peer's memory, through this process's mapping
 * @op:		enum dvx_nvl_sig_op, with DVX_NVL_SIG_RELAXED for no ordering
 * @value:	what is stored or added
 *
 * Context: any, host or device. Return: 0, or -EINVAL for an unknown @op.
 */
DVX_INLINE int dvx_nvl_signal(uint64_t *w, uint32_t op, uint64_t value)
{
	if (op & DVX_NVL_SIG_RELAXED)
		return dvx_nvl_signal_relaxed(w, op & ~DVX_NVL_SIG_RELAXED, value);
	if (op == DVX_NVL_SIG_SET) {
		dvx_st_release_u64(w, value, DVX_SCOPE_SYS);
		return 0;
	}
	if (op != DVX_NVL_SIG_ADD)
		return -EINVAL;
#ifdef __CUDA_ARCH__
	asm volatile("red.release.sys.global.add.u64 [%0], %1;" ::"l"(w), "l"(value) : "memory");
#else
	__atomic_fetch_add(w, value, __ATOMIC_RELEASE);
#endif
	return 0;
}

/**
 * dvx_nvl_read() - a signal or counter word's value, with acquire semantics at system
 * scope (what the writer published before it is visible after).
 * @w:		the word
 *
 * Context: any, host or device. Return: the value.
 */
DVX_INLINE uint64_t dvx_nvl_read(const uint64_t *w)
{
	return dvx_ld_acquire_u64(w, DVX_SCOPE_SYS);
}

/**
 * dvx_nvl_wait() - wait until a word compares true against @value.
 * @w:		the word (a signal in this rank's memory, or a counter)
 * @cmp:	enum dvx_p2p_cmp: the word GE, GT, EQ, NE, LE or LT @value
 * @value:	the value compared with
 * @timeout_ns:	how long (dvx_nvl_now_ns()); the clock is read only after the first 64
 *		looks, so a wait that is satisfied soon costs no clock reads
 * @seen:	optional: the last value read
 *
 * Every look is an acquire load at system scope (dvx_nvl_read(); on the H200 one
 * ld.acquire.sys per look costs less than relaxed looks and one acquire fence after
 * them), so what the writer published before the word is visible after the wait. A
 * timeout is an error, never a satisfied wait; the word is left as it is, so waiting
 * again is safe.
 *
 * Context: any, host or device. Return: 0; -ETIMEDOUT; -EINVAL for an unknown @cmp.
 */
DVX_INLINE int dvx_nvl_wait(const uint64_t *w, uint32_t cmp, uint64_t value, uint64_t timeout_ns,
			    uint64_t *seen)
{
	uint64_t v, deadline = 0;
	uint32_t k = 0;
	int ok;

	for (;;) {
		v = dvx_nvl_read(w);
		ok = dvx_p2p_cmp_holds(cmp, v, value);
		if (ok) {
			if (ok < 0)
				return -EINVAL;
			break;
		}
		if ((++k & 63) == 0) {
			uint64_t now = dvx_nvl_now_ns();

			if (!deadline)
				deadline = timeout_ns > UINT64_MAX - now ? UINT64_MAX : now + timeout_ns;
			else if (now >= deadline) {
				if (seen)
					*seen = v;
				return -ETIMEDOUT;
			}
		}
#ifndef __CUDA_ARCH__
		dvx_cpu_relax();
#endif
	}
	if (seen)
		*seen = v;
	return 0;
}

/**
 * dvx_nvl_counter_add() - raise this rank's counter once its earlier copies are
 * visible: the same system-scope release add as a signal, on a local word, so code
 * waits on NVL counters as it waits on IB ones (dvx_nvl_wait()).
 * @ctr:	the counter word
 * @value:	the addend
 *
 * Context: any, host or device. Return: nothing.
 */
DVX_INLINE void dvx_nvl_counter_add(uint64_t *ctr, uint64_t value)
{
	(void)dvx_nvl_signal(ctr, DVX_NVL_SIG_ADD, value);
}

DVX_END_DECLS

#endif /* DVX_NVL_OPS_H */
