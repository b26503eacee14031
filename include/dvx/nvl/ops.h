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

	/* the usual shapes first, in few instructions: a thread putting 8 bytes before its
	 * signal waits for every one of them, and so does each thread of a grid put
	 * before its first load (bench/RESULTS.md, 2026-11-29) */
	if (len == 8 && !(((uintptr_t)d | (uintptr_t)s) & 7)) {
		if (lane == 0)
			*(uint64_t *)(void *)d = *(const uint64_t *)(const void *)s;
		return;
	}
	if (!(((uintptr_t)d | (uintptr_t)s | len) & 15)) {
		dvx_nvl_v16 *dv = (dvx_nvl_v16 *)(void *)d;
		const dvx_nvl_v16 *sv = (const dvx_nvl_v16 *)(const void *)s;

		body = len / 16;
		for (i = lane; i + (DVX_NVL_COPY_UNROLL - 1) * n < body; i += DVX_NVL_COPY_UNROLL * n) {
			dvx_nvl_v16 v0 = sv[i], v1 = sv[i + n], v2 = sv[i + 2 * n], v3 = sv[i + 3 * n];

			dv[i] = v0;
			dv[i + n] = v1;
			dv[i + 2 * n] = v2;
			dv[i + 3 * n] = v3;
		}
		for (; i < body; i += n)
			dv[i] = sv[i];
		return;
	}
	if ((((uintptr_t)d ^ (uintptr_t)s) & 15) == 0) {
		head = (16 - ((uintptr_t)d & 15)) & 15;
		if (head > len)
			head = len;
		if (head == 8 && ((uintptr_t)d & 15) == 8) {
			/* 8-byte aligned (not a shorter copy's clamped head): one word, a
			 * store over the link, not eight */
			if (lane == 0)
				*(uint64_t *)(void *)d = *(const uint64_t *)(const void *)s;
		} else {
			for (i = lane; i < head; i += n)
				d[i] = s[i];
		}
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
		/* the tail, under 16 bytes from a 16-byte boundary: a word first if it has one
		 * (an 8-byte message is one store), then bytes */
		i = head + body * 16;
		if (len - i >= 8) {
			if (lane == 0)
				*(uint64_t *)(void *)(d + i) = *(const uint64_t *)(const void *)(s + i);
			i += 8;
		}
		for (i += lane; i < len; i += n)
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
 * dvx_nvl_put_blocks() - how many blocks a launch that puts @len bytes with every
 * thread (dvx_nvl_dev_put_grid()) should have: two 16-byte vectors per thread up to 1 MiB,
 * eight above, at most 4 blocks per SM (the sweep on two H200s over NVLink in
 * bench/RESULTS.md: fewer, fuller threads win from 1 MiB up).
 * @len:	bytes of the transfer
 * @sms:	the GPU's multiprocessors (dvx_gpu attr.sm_count)
 * @threads:	threads per block
 *
 * Context: any, host or device. Return: blocks, >= 1.
 */
DVX_INLINE uint32_t dvx_nvl_put_blocks(uint64_t len, uint32_t sms, uint32_t threads)
{
	uint64_t per = 16ull * (threads ? threads : 1) * (len <= (1u << 20) ? 2 : 8);
	uint64_t max = 4ull * (sms ? sms : 1), b = (len + per - 1) / per;

	return (uint32_t)(b < 1 ? 1 : b > max ? max : b);
}

/**
 * dvx_nvl_put_share() - bytes of each block's share when @len bytes are cut into
 * @parts shares (16-byte multiples, so every share starts 16-byte aligned when the
 * buffers do; the last share is the rest, maybe shorter or empty).
 * @len:	bytes of the transfer
 * @parts:	shares (>= 1; the launch's blocks)
 *
 * Context: any, host or device. Return: bytes of a share.
 */
DVX_INLINE uint64_t dvx_nvl_put_share(uint64_t len, uint32_t parts)
{
	uint64_t p = parts ? parts : 1;

	return ((len + p - 1) / p + 15) & ~15ull;
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

/*
 * The waits below (dvx_nvl_wait() above, the flagged-line waits) each write out their
 * look loop and its every-64th-look clock: one helper for the clock made each look a
 * few instructions longer and cost a wait 40-60 ns on two H200s (bench/RESULTS.md,
 * 2026-11-29), a twentieth of a round trip.
 */

/*
 * Flagged lines: the low-latency path for small messages (docs/mp.md, "Small messages").
 * A line is 16 bytes, two 8-byte words; each word carries 4 payload bytes (low half)
 * and the message's 32-bit sequence number (high half), so a line carries 8 payload
 * bytes. The writer stores each line with one relaxed system-scope 16-byte store; the
 * reader polls the lines with relaxed system-scope loads until every word carries the
 * sequence it expects and takes the payload from the same words. The payload and its
 * flag are one aligned 8-byte element, which the GPU reads and writes whole (never
 * torn), so nothing has to be ordered: no release fence after the data, no acquire
 * after the poll. Lines are reused with a new sequence each round (never 0: memory
 * that was never written reads 0); the caller's flow control decides when a line may
 * be written again (the reader has taken what it carried).
 */
#define DVX_NVL_LL_LINE 16u	/* bytes of a line */
#define DVX_NVL_LL_PAY 8u	/* payload bytes of a line */
/* the largest payload the window sends as flagged lines (its threshold; larger
 * messages go as a copy, a fence and a signal) */
#define DVX_NVL_LL_MAX 2048u
/* lines a lane reads or writes at once (their accesses in flight together) */
#define DVX_NVL_LL_BATCH 8u
#ifdef __CUDA_ARCH__
#define DVX_NVL_UNROLL _Pragma("unroll")
#else
#define DVX_NVL_UNROLL
#endif

/**
 * dvx_nvl_ll_bytes() - bytes of the lines that carry @len payload bytes (one line for
 * 0 bytes: the flag alone).
 * @len:	payload bytes
 *
 * Context: any, host or device. Return: bytes (a multiple of DVX_NVL_LL_LINE).
 */
DVX_INLINE uint64_t dvx_nvl_ll_bytes(uint64_t len)
{
	return (len ? (len + DVX_NVL_LL_PAY - 1) / DVX_NVL_LL_PAY : 1) * DVX_NVL_LL_LINE;
}

/**
 * dvx_nvl_ll_store(), dvx_nvl_ll_load() - one line's two flagged words, written or read
 * at once: a relaxed system-scope 16-byte vector access of two 8-byte elements on the
 * GPU (each element whole), two relaxed 8-byte atomic accesses on the host.
 * @line:	the line, 16-byte aligned
 * @w0, @w1:	its words (payload in the low half, sequence in the high half)
 *
 * Context: any, host or device. Return: nothing (the load: the words in *@w0, *@w1).
 */
DVX_INLINE void dvx_nvl_ll_store(void *line, uint64_t w0, uint64_t w1)
{
#ifdef __CUDA_ARCH__
	asm volatile("st.relaxed.sys.global.v2.u64 [%0], {%1, %2};" ::"l"(line), "l"(w0), "l"(w1)
		     : "memory");
#else
	__atomic_store_n((uint64_t *)line, w0, __ATOMIC_RELAXED);
	__atomic_store_n((uint64_t *)line + 1, w1, __ATOMIC_RELAXED);
#endif
}

DVX_INLINE void dvx_nvl_ll_load(const void *line, uint64_t *w0, uint64_t *w1)
{
#ifdef __CUDA_ARCH__
	uint64_t a, b;

	asm volatile("ld.relaxed.sys.global.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(line)
		     : "memory");
	*w0 = a;
	*w1 = b;
#else
	*w0 = __atomic_load_n((const uint64_t *)line, __ATOMIC_RELAXED);
	*w1 = __atomic_load_n((const uint64_t *)line + 1, __ATOMIC_RELAXED);
#endif
}

/**
 * dvx_nvl_ll_take_bytes(), dvx_nvl_ll_give_bytes() - the byte-wise ends of
 * dvx_nvl_ll_take() and dvx_nvl_ll_give() (unaligned buffers, the last line), from
 * byte offset @o.
 * @src, @dst, @len, @v: as dvx_nvl_ll_take() / dvx_nvl_ll_give()
 * @o:		the line's first byte
 *
 * Context: any, host or device. Return: the word (take), nothing (give).
 */
DVX_INLINE uint64_t dvx_nvl_ll_take_bytes(const uint8_t *src, uint64_t len, uint64_t o)
{
	uint64_t v = 0, k;

	for (k = 0; k < 8 && o + k < len; k++)
		v |= (uint64_t)src[o + k] << (8 * k);
	return v;
}

DVX_INLINE void dvx_nvl_ll_give_bytes(uint8_t *dst, uint64_t len, uint64_t o, uint64_t v)
{
	uint64_t k;

	for (k = 0; k < 8 && o + k < len; k++)
		dst[o + k] = (uint8_t)(v >> (8 * k));
}

/**
 * dvx_nvl_ll_take(), dvx_nvl_ll_give() - payload bytes [8 @i, 8 @i + 8) of a message of
 * @len bytes, read from @src as one little-endian word (past @len: zeros) or written
 * from @v to @dst (never past @len).
 * @src, @dst:	the message (any alignment: 8-byte aligned words go whole)
 * @len:	its bytes
 * @i:		the line
 * @v:		the line's 8 payload bytes
 *
 * Context: any, host or device. Return: the word (take), nothing (give).
 */
DVX_INLINE uint64_t dvx_nvl_ll_take(const uint8_t *src, uint64_t len, uint64_t i)
{
	uint64_t o = i * DVX_NVL_LL_PAY;

	if (o + 8 <= len && !(((uintptr_t)src + o) & 7))
		return *(const uint64_t *)(const void *)(src + o);
	return dvx_nvl_ll_take_bytes(src, len, o);
}

DVX_INLINE void dvx_nvl_ll_give(uint8_t *dst, uint64_t len, uint64_t i, uint64_t v)
{
	uint64_t o = i * DVX_NVL_LL_PAY;

	if (o + 8 <= len && !(((uintptr_t)dst + o) & 7)) {
		*(uint64_t *)(void *)(dst + o) = v;
		return;
	}
	dvx_nvl_ll_give_bytes(dst, len, o, v);
}

/**
 * dvx_nvl_ll_put() - lane @lane's share of writing @len bytes of @src as flagged lines
 * with sequence @seq at @lines (a peer's mapping, dvx_nvl_ll_bytes(@len) bytes): the
 * group of @nlanes lanes writes every line once, lanes interleaved.
 * @lines:	16-byte aligned
 * @src:	the payload (any alignment; 8-byte aligned reads go by words)
 * @len:	payload bytes (0: one line, the flag alone)
 * @seq:	the message's sequence number, not 0; a new one each time the lines are
 *		written (the reader waits for it)
 * @lane, @nlanes: as dvx_nvl_copy()
 *
 * No fence before or after: each line's store carries its own flag.
 * Context: any, host or device. Return: 0; -EINVAL (@seq 0, @lines misaligned:
 * nothing written).
 */
DVX_INLINE int dvx_nvl_ll_put(void *lines, const void *src, uint64_t len, uint32_t seq,
			      uint32_t lane, uint32_t nlanes)
{
	uint8_t *l = (uint8_t *)lines;
	uint64_t n = dvx_nvl_ll_bytes(len) / DVX_NVL_LL_LINE, f = (uint64_t)seq << 32, i;
	uint64_t step = (uint64_t)nlanes * DVX_NVL_LL_BATCH;

	if (!seq || ((uintptr_t)lines & 15))
		return -EINVAL;
	if (n <= nlanes) {
		/* a line a lane at most (8 bytes a thread, 256 a warp): no batch */
		if (lane < n) {
			uint64_t v = dvx_nvl_ll_take((const uint8_t *)src, len, lane);

			dvx_nvl_ll_store(l + (uint64_t)lane * DVX_NVL_LL_LINE, (v & 0xffffffffu) | f,
					 (v >> 32) | f);
		}
		return 0;
	}
	/* a batch of the lane's lines at a time: every payload read before the first
	 * store, so the reads overlap */
	for (i = lane; i < n; i += step) {
		uint64_t v[DVX_NVL_LL_BATCH];
		uint32_t j;

		DVX_NVL_UNROLL
		for (j = 0; j < DVX_NVL_LL_BATCH; j++)
			if (i + (uint64_t)j * nlanes < n)
				v[j] = dvx_nvl_ll_take((const uint8_t *)src, len, i + (uint64_t)j * nlanes);
		DVX_NVL_UNROLL
		for (j = 0; j < DVX_NVL_LL_BATCH; j++)
			if (i + (uint64_t)j * nlanes < n)
				dvx_nvl_ll_store(l + (i + (uint64_t)j * nlanes) * DVX_NVL_LL_LINE,
						 (v[j] & 0xffffffffu) | f, (v[j] >> 32) | f);
	}
	return 0;
}

/**
 * dvx_nvl_ll_wait_hdr() - wait for a tagged message's header alone (a message without
 * payload, or one whose payload came another way): dvx_nvl_ll_get_tagged() with no lines.
 * @hdr, @tag, @seq, @timeout_ns: as dvx_nvl_ll_get_tagged()
 *
 * Context: any, host or device. Return: 0; -EMSGSIZE (the header carries @seq and
 * another tag); -ETIMEDOUT; -EINVAL (@seq 0, @hdr misaligned).
 */
DVX_INLINE int dvx_nvl_ll_wait_hdr(const void *hdr, uint64_t tag, uint32_t seq, uint64_t timeout_ns)
{
	uint64_t h0, h1, deadline = 0;
	uint32_t k = 0;

	if (!seq || ((uintptr_t)hdr & 15))
		return -EINVAL;
	for (;;) {
		dvx_nvl_ll_load(hdr, &h0, &h1);
		if ((uint32_t)(h0 >> 32) == seq && (uint32_t)(h1 >> 32) == seq)
			return ((h0 & 0xffffffffu) | (h1 << 32)) == tag ? 0 : -EMSGSIZE;
		if ((++k & 63) == 0) {
			uint64_t now = dvx_nvl_now_ns();

			if (!deadline)
				deadline = timeout_ns > UINT64_MAX - now ? UINT64_MAX : now + timeout_ns;
			else if (now >= deadline)
				return -ETIMEDOUT;
		}
#ifndef __CUDA_ARCH__
		dvx_cpu_relax();
#endif
	}
}

/**
 * struct dvx_nvl_ll_at - what a wait for flagged lines looks at.
 * @hdr:	the header line, or NULL (no header: the lines alone)
 * @tag:	what the header must carry
 * @lines:	the payload's lines
 */
struct dvx_nvl_ll_at {
	const void *hdr;
	uint64_t tag;
	const void *lines;
};

/**
 * dvx_nvl_ll_get_one() - dvx_nvl_ll_get_at() for a lane whose share is the one line
 * @lane (a message of a line a lane at most): one load a look, the header's with it
 * while its tag is not known. A look of the batched loop cost about as much as the
 * line's flight (bench/RESULTS.md, 2026-11-29: 994 against 854 ns written out).
 * @at, @dst, @len, @seq, @timeout_ns: as dvx_nvl_ll_get_at()
 * @lane:	the line, < the message's lines
 *
 * Context: any, host or device. Return: as dvx_nvl_ll_get_tagged().
 */
DVX_INLINE int dvx_nvl_ll_get_one(const struct dvx_nvl_ll_at *at, void *dst, uint64_t len,
				  uint32_t seq, uint32_t lane, uint64_t timeout_ns)
{
	const void *line = (const uint8_t *)at->lines + (uint64_t)lane * DVX_NVL_LL_LINE;
	uint64_t w0, w1, h0 = 0, h1 = 0, deadline = 0;
	uint32_t k = 0;
	int known = !at->hdr;

	for (;;) {
		if (!known)
			dvx_nvl_ll_load(at->hdr, &h0, &h1);
		dvx_nvl_ll_load(line, &w0, &w1);
		if (!known && (uint32_t)(h0 >> 32) == seq && (uint32_t)(h1 >> 32) == seq) {
			/* nothing is taken before the header says it is this message */
			if (((h0 & 0xffffffffu) | (h1 << 32)) != at->tag)
				return -EMSGSIZE;
			known = 1;
		}
		if (known && (uint32_t)(w0 >> 32) == seq && (uint32_t)(w1 >> 32) == seq) {
			if (len)
				dvx_nvl_ll_give((uint8_t *)dst, len, lane,
						(w0 & 0xffffffffu) | (w1 << 32));
			return 0;
		}
		if ((++k & 63) == 0) {
			uint64_t now = dvx_nvl_now_ns();

			if (!deadline)
				deadline = timeout_ns > UINT64_MAX - now ? UINT64_MAX : now + timeout_ns;
			else if (now >= deadline)
				return -ETIMEDOUT;
		}
#ifndef __CUDA_ARCH__
		dvx_cpu_relax();
#endif
	}
}

/**
 * dvx_nvl_ll_get_at() - the body of dvx_nvl_ll_get() and dvx_nvl_ll_get_tagged(): lane
 * @lane's share of waiting for message @seq at @at and taking its payload into @dst.
 * @at:		the header (or none) and the lines
 * @dst, @len, @seq, @lane, @nlanes, @timeout_ns: as dvx_nvl_ll_get()
 *
 * Context: any, host or device. Return: as dvx_nvl_ll_get_tagged().
 */
DVX_INLINE int dvx_nvl_ll_get_at(const struct dvx_nvl_ll_at *at, void *dst, uint64_t len,
				 uint32_t seq, uint32_t lane, uint32_t nlanes, uint64_t timeout_ns)
{
	const void *hdr = at->hdr, *lines = at->lines;
	uint64_t tag = at->tag;
	const uint8_t *l = (const uint8_t *)lines;
	uint64_t n = dvx_nvl_ll_bytes(len) / DVX_NVL_LL_LINE, i, deadline = 0;
	uint64_t step = (uint64_t)nlanes * DVX_NVL_LL_BATCH, h0 = 0, h1 = 0;
	uint32_t k = 0;
	int known = !hdr;	/* the header's tag checked (or none) */

	if (!seq || ((uintptr_t)lines & 15) || ((uintptr_t)hdr & 15))
		return -EINVAL;
	if (hdr && !len)
		return dvx_nvl_ll_wait_hdr(hdr, tag, seq, timeout_ns);
	if (n <= nlanes)
		return lane < n ? dvx_nvl_ll_get_one(at, dst, len, seq, lane, timeout_ns) : 0;
	/* a batch of the lane's lines at a time: the looks at all of them in flight
	 * together, again at those not there yet */
	for (i = lane; i < n; i += step) {
		uint64_t w0[DVX_NVL_LL_BATCH], w1[DVX_NVL_LL_BATCH];
		uint32_t j, pend = 0;

		DVX_NVL_UNROLL
		for (j = 0; j < DVX_NVL_LL_BATCH; j++)
			if (i + (uint64_t)j * nlanes < n)
				pend |= 1u << j;
		for (;;) {
			if (!known)
				dvx_nvl_ll_load(hdr, &h0, &h1);
			DVX_NVL_UNROLL
			for (j = 0; j < DVX_NVL_LL_BATCH; j++)
				if (pend & (1u << j))
					dvx_nvl_ll_load(l + (i + (uint64_t)j * nlanes) * DVX_NVL_LL_LINE,
							&w0[j], &w1[j]);
			if (!known) {
				/* nothing is taken before the header says it is this message */
				if ((uint32_t)(h0 >> 32) == seq && (uint32_t)(h1 >> 32) == seq) {
					if (((h0 & 0xffffffffu) | (h1 << 32)) != tag)
						return -EMSGSIZE;
					known = 1;
				} else {
					goto again;
				}
			}
			DVX_NVL_UNROLL
			for (j = 0; j < DVX_NVL_LL_BATCH; j++)
				if ((pend & (1u << j)) && (uint32_t)(w0[j] >> 32) == seq &&
				    (uint32_t)(w1[j] >> 32) == seq) {
					pend &= ~(1u << j);
					if (len)
						dvx_nvl_ll_give((uint8_t *)dst, len, i + (uint64_t)j * nlanes,
								(w0[j] & 0xffffffffu) | (w1[j] << 32));
				}
			if (!pend)
				break;
again:
			if ((++k & 63) == 0) {
				uint64_t now = dvx_nvl_now_ns();

				if (!deadline)
					deadline = timeout_ns > UINT64_MAX - now ? UINT64_MAX :
										   now + timeout_ns;
				else if (now >= deadline)
					return -ETIMEDOUT;
			}
#ifndef __CUDA_ARCH__
			dvx_cpu_relax();
#endif
		}
	}
	return 0;
}

/**
 * dvx_nvl_ll_put_tagged(), dvx_nvl_ll_get_tagged() - a message whose first line is a
 * header carrying a 64-bit tag (the window's message size) under the same sequence:
 * the header at @hdr, the payload's lines at @lines (none for @len 0). The reader
 * takes nothing before the header carries @seq; a header with @seq and another tag is
 * -EMSGSIZE (nothing taken, the lines left as they are).
 * @hdr:	the header line (16-byte aligned); written by lane 0
 * @tag:	what the header carries (put), what it must carry (get)
 * @src, @dst, @len, @seq, @lane, @nlanes, @timeout_ns: as dvx_nvl_ll_put() and
 *		dvx_nvl_ll_get() (below: the same without a header), on the lines that
 *		follow the header line (@hdr + 16)
 *
 * Context: any, host or device. Return: as dvx_nvl_ll_put() / dvx_nvl_ll_get(), and
 * -EMSGSIZE (get: the header's tag is not @tag).
 */
DVX_INLINE int dvx_nvl_ll_put_tagged(void *hdr, uint64_t tag, const void *src, uint64_t len,
				     uint32_t seq, uint32_t lane, uint32_t nlanes)
{
	uint64_t f = (uint64_t)seq << 32;
	void *lines = (uint8_t *)hdr + 16;

	if (!seq || ((uintptr_t)hdr & 15) || ((uintptr_t)lines & 15))
		return -EINVAL;
	if (lane == 0)
		dvx_nvl_ll_store(hdr, (tag & 0xffffffffu) | f, (tag >> 32) | f);
	return len ? dvx_nvl_ll_put(lines, src, len, seq, lane, nlanes) : 0;
}

DVX_INLINE int dvx_nvl_ll_get_tagged(const void *hdr, uint64_t tag, void *dst, uint64_t len,
				     uint32_t seq, uint32_t lane, uint32_t nlanes, uint64_t timeout_ns)
{
	const struct dvx_nvl_ll_at at = { hdr, tag, (const uint8_t *)hdr + 16 };

	return hdr ? dvx_nvl_ll_get_at(&at, dst, len, seq, lane, nlanes, timeout_ns) : -EINVAL;
}

/**
 * dvx_nvl_ll_get() - lane @lane's share of waiting for the lines of message @seq at
 * @lines and taking their payload into @dst: each of the lane's lines is polled until
 * both its words carry @seq, then its 8 bytes are written to @dst.
 * @lines:	16-byte aligned, in this rank's memory
 * @dst:	where the payload goes (@len bytes, any alignment)
 * @len:	payload bytes, as the writer's
 * @seq:	the sequence waited for (not 0)
 * @lane, @nlanes: as dvx_nvl_copy()
 * @timeout_ns:	how long the lane waits in all (dvx_nvl_now_ns(); the clock is read
 *		after the first 64 looks at a line)
 *
 * A line that carries another sequence is not there yet (an old message, or memory
 * never written); the lines are left as they are, so waiting again is safe.
 * Context: any, host or device. Return: 0; -ETIMEDOUT (some of the lane's lines never
 * came; what did come may be in @dst); -EINVAL (@seq 0, @lines misaligned).
 */
DVX_INLINE int dvx_nvl_ll_get(const void *lines, void *dst, uint64_t len, uint32_t seq,
			      uint32_t lane, uint32_t nlanes, uint64_t timeout_ns)
{
	const struct dvx_nvl_ll_at at = { NULL, 0, lines };

	return dvx_nvl_ll_get_at(&at, dst, len, seq, lane, nlanes, timeout_ns);
}

DVX_END_DECLS

#endif /* DVX_NVL_OPS_H */
