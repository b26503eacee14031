/* SPDX-License-Identifier: MIT */
/*
 * dvx/compiler.h - compiler glue shared by every layer, for gcc, clang and nvcc.
 *
 * Everything here compiles as C11 and as CUDA C++ (host and device passes), so the
 * mlx5/ fast paths can be built for the CPU and for the GPU from one source.
 */
#ifndef DVX_COMPILER_H
#define DVX_COMPILER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define DVX_HOST_DEVICE __host__ __device__
#define DVX_INLINE __host__ __device__ __forceinline__
#else
#define DVX_HOST_DEVICE
#define DVX_INLINE static inline __attribute__((always_inline))
#endif

/* Functions that are inline on both sides but may stay out of line when large. */
#ifdef __CUDACC__
#define DVX_FUNC __host__ __device__ inline
#else
#define DVX_FUNC static inline
#endif

#define DVX_COLD __attribute__((cold, noinline))
#define DVX_PURE __attribute__((pure))
#define DVX_UNUSED __attribute__((unused))
/* a switch case that goes on into the next one, said so for GCC and clang */
#define DVX_FALLTHROUGH __attribute__((__fallthrough__))
#define DVX_WARN_UNUSED __attribute__((warn_unused_result))
#define DVX_PACKED __attribute__((packed))
#define DVX_ALIGNED(n) __attribute__((aligned(n)))

#define dvx_likely(x) __builtin_expect(!!(x), 1)
#define dvx_unlikely(x) __builtin_expect(!!(x), 0)

#ifdef __cplusplus
#define DVX_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#define DVX_BEGIN_DECLS extern "C" {
#define DVX_END_DECLS }
#else
#define DVX_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#define DVX_BEGIN_DECLS
#define DVX_END_DECLS
#endif

/* Size and offset assertions for hardware and host/GPU shared layouts. */
/*
 * The value of an object's live (or open) word between its create (open, register) and
 * its destroy (close, deregister). Creating into storage whose word holds it is
 * -EBUSY and changes nothing: zero an object's storage before its first create (any
 * other value is taken as dead storage), and destroy it before creating it again.
 */
#define DVX_LIVE 0x4556494cu	/* "LIVE" */

#define DVX_ASSERT_SIZE(type, size) \
	DVX_STATIC_ASSERT(sizeof(type) == (size), "sizeof(" #type ") != " #size)
#define DVX_ASSERT_OFFSET(type, member, off) \
	DVX_STATIC_ASSERT(offsetof(type, member) == (off), #type "." #member " not at " #off)

#define DVX_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define DVX_ALIGN_UP(x, a) (((x) + ((a) - 1)) & ~((__typeof__(x))(a) - 1))
#define DVX_IS_POW2(x) ((x) != 0 && (((x) & ((x) - 1)) == 0))
#define DVX_DIV_ROUND_UP(n, d) (((n) + (d) - 1) / (d))

/* A compiler-only barrier: orders nothing for other agents. */
#define dvx_compiler_barrier() __asm__ __volatile__("" ::: "memory")

#define DVX_READ_ONCE(x) (*(const volatile __typeof__(x) *)&(x))
#define DVX_WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))

#endif /* DVX_COMPILER_H */
