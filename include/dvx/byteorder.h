/* SPDX-License-Identifier: MIT */
/*
 * dvx/byteorder.h - typed big-endian values, as the mlx5 hardware reads them; the
 * little-endian order of dvx's own exchanged records.
 *
 * dvx_be16/32/64 are plain integers to the compiler and "bitwise" types to sparse
 * (make C=1 with sparse installed), which then rejects arithmetic on a big-endian
 * field and mixing it with CPU-order values. Conversions compile on x86-64, aarch64
 * and in CUDA device code (one PRMT per 32 bits there).
 */
#ifndef DVX_BYTEORDER_H
#define DVX_BYTEORDER_H

#include <dvx/compiler.h>

#ifdef __CHECKER__
#define DVX_BITWISE __attribute__((bitwise))
#define DVX_FORCE __attribute__((force))
#else
#define DVX_BITWISE
#define DVX_FORCE
#endif

typedef uint16_t DVX_BITWISE dvx_be16;
typedef uint32_t DVX_BITWISE dvx_be32;
typedef uint64_t DVX_BITWISE dvx_be64;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ && !defined(__CUDA_ARCH__)
#define DVX_HOST_BIG_ENDIAN 1
#else
#define DVX_HOST_BIG_ENDIAN 0
#endif

/**
 * dvx_swab16(), dvx_swab32(), dvx_swab64() - reverse the byte order of a value.
 * @x:		the value
 *
 * Unconditional swaps (whatever the host order is): __builtin_bswap*() on the host, one
 * PRMT (__byte_perm) per 32 bits in CUDA device code.
 *
 * Context: any, host or device; pure. Return: @x with its bytes reversed.
 */
DVX_INLINE uint16_t dvx_swab16(uint16_t x)
{
#ifdef __CUDA_ARCH__
	return (uint16_t)__byte_perm((unsigned)x, 0u, 0x3201u);
#else
	return __builtin_bswap16(x);
#endif
}

DVX_INLINE uint32_t dvx_swab32(uint32_t x)
{
#ifdef __CUDA_ARCH__
	return __byte_perm(x, 0u, 0x0123u);
#else
	return __builtin_bswap32(x);
#endif
}

DVX_INLINE uint64_t dvx_swab64(uint64_t x)
{
#ifdef __CUDA_ARCH__
	uint32_t lo = (uint32_t)x, hi = (uint32_t)(x >> 32);
	return ((uint64_t)__byte_perm(lo, 0u, 0x0123u) << 32) | __byte_perm(hi, 0u, 0x0123u);
#else
	return __builtin_bswap64(x);
#endif
}

/**
 * dvx_cpu_to_be16(), dvx_cpu_to_be32(), dvx_cpu_to_be64(), dvx_be16_to_cpu(),
 * dvx_be32_to_cpu(), dvx_be64_to_cpu() - convert between CPU order and the typed
 * big-endian values the hardware reads.
 * @x:		the value to convert
 *
 * dvx_cpu_to_be*() take a CPU-order integer and return a dvx_be* value;
 * dvx_be*_to_cpu() the reverse. On a little-endian host (and in CUDA device code)
 * they swap the bytes, on a big-endian host they only change the type. Under sparse
 * the dvx_be* types are bitwise, so mixing them with CPU-order values is reported.
 *
 * Context: any, host or device; pure. Return: the converted value.
 */
#if DVX_HOST_BIG_ENDIAN
DVX_INLINE dvx_be16 dvx_cpu_to_be16(uint16_t x) { return (DVX_FORCE dvx_be16)x; }
DVX_INLINE dvx_be32 dvx_cpu_to_be32(uint32_t x) { return (DVX_FORCE dvx_be32)x; }
DVX_INLINE dvx_be64 dvx_cpu_to_be64(uint64_t x) { return (DVX_FORCE dvx_be64)x; }
DVX_INLINE uint16_t dvx_be16_to_cpu(dvx_be16 x) { return (DVX_FORCE uint16_t)x; }
DVX_INLINE uint32_t dvx_be32_to_cpu(dvx_be32 x) { return (DVX_FORCE uint32_t)x; }
DVX_INLINE uint64_t dvx_be64_to_cpu(dvx_be64 x) { return (DVX_FORCE uint64_t)x; }
#else
DVX_INLINE dvx_be16 dvx_cpu_to_be16(uint16_t x) { return (DVX_FORCE dvx_be16)dvx_swab16(x); }
DVX_INLINE dvx_be32 dvx_cpu_to_be32(uint32_t x) { return (DVX_FORCE dvx_be32)dvx_swab32(x); }
DVX_INLINE dvx_be64 dvx_cpu_to_be64(uint64_t x) { return (DVX_FORCE dvx_be64)dvx_swab64(x); }
DVX_INLINE uint16_t dvx_be16_to_cpu(dvx_be16 x) { return dvx_swab16((DVX_FORCE uint16_t)x); }
DVX_INLINE uint32_t dvx_be32_to_cpu(dvx_be32 x) { return dvx_swab32((DVX_FORCE uint32_t)x); }
DVX_INLINE uint64_t dvx_be64_to_cpu(dvx_be64 x) { return dvx_swab64((DVX_FORCE uint64_t)x); }
#endif

/**
 * dvx_le16(), dvx_le32(), dvx_le64() - convert between CPU order and little-endian, both
 * ways (the same operation each way).
 * @x:		the value to convert
 *
 * For dvx's own wire records, the descriptors ranks exchange through the bootstrap,
 * which are little-endian whatever the host is: identity on a little-endian host and in
 * CUDA device code, a swap on a big-endian host. Plain integers in and out (no hardware
 * reads these records).
 *
 * Context: any, host or device; pure. Return: the converted value.
 */
#if DVX_HOST_BIG_ENDIAN
DVX_INLINE uint16_t dvx_le16(uint16_t x) { return dvx_swab16(x); }
DVX_INLINE uint32_t dvx_le32(uint32_t x) { return dvx_swab32(x); }
DVX_INLINE uint64_t dvx_le64(uint64_t x) { return dvx_swab64(x); }
#else
DVX_INLINE uint16_t dvx_le16(uint16_t x) { return x; }
DVX_INLINE uint32_t dvx_le32(uint32_t x) { return x; }
DVX_INLINE uint64_t dvx_le64(uint64_t x) { return x; }
#endif

/**
 * dvx_get_be32(), dvx_get_be16(), dvx_get_be64() - load a big-endian value from any
 * byte address.
 * @p:		the first (most significant) byte; needs no alignment
 *
 * Byte-by-byte loads for mailboxes and decoders, where fields sit at arbitrary
 * offsets; 64 bits are read as two 32-bit halves, high half first. Not atomic.
 *
 * Context: any, host or device. Return: the value in CPU order.
 */
DVX_INLINE uint32_t dvx_get_be32(const void *p)
{
	const uint8_t *b = (const uint8_t *)p;
	return ((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) | ((uint32_t)b[2] << 8) | b[3];
}

DVX_INLINE uint16_t dvx_get_be16(const void *p)
{
	const uint8_t *b = (const uint8_t *)p;
	return (uint16_t)(((unsigned)b[0] << 8) | b[1]);
}

DVX_INLINE uint64_t dvx_get_be64(const void *p)
{
	const uint8_t *b = (const uint8_t *)p;
	return ((uint64_t)dvx_get_be32(b) << 32) | dvx_get_be32(b + 4);
}

/**
 * dvx_put_be32(), dvx_put_be16(), dvx_put_be64() - store a value big-endian at any
 * byte address.
 * @p:		where the first (most significant) byte goes; needs no alignment
 * @v:		the value, in CPU order
 *
 * Byte-by-byte stores for mailboxes; 64 bits are written as two 32-bit halves, high
 * half first. Not atomic: never use them for memory the device may be reading.
 *
 * Context: any, host or device.
 */
DVX_INLINE void dvx_put_be32(void *p, uint32_t v)
{
	uint8_t *b = (uint8_t *)p;
	b[0] = (uint8_t)(v >> 24);
	b[1] = (uint8_t)(v >> 16);
	b[2] = (uint8_t)(v >> 8);
	b[3] = (uint8_t)v;
}

DVX_INLINE void dvx_put_be16(void *p, uint16_t v)
{
	uint8_t *b = (uint8_t *)p;
	b[0] = (uint8_t)(v >> 8);
	b[1] = (uint8_t)v;
}

DVX_INLINE void dvx_put_be64(void *p, uint64_t v)
{
	dvx_put_be32(p, (uint32_t)(v >> 32));
	dvx_put_be32((uint8_t *)p + 4, (uint32_t)v);
}

#endif /* DVX_BYTEORDER_H */
