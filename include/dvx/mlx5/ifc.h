/* SPDX-License-Identifier: MIT */
/*
 * dvx/mlx5/ifc.h - field access in PRM command mailboxes.
 *
 * A mailbox is an array of big-endian 32-bit dwords. A field is named the way the
 * docs/prm.md's tables write it, "dw@B [hi:lo]": the dword starting at byte B of the PRM
 * structure it belongs to (the mailbox itself, or a context inside it reached through
 * its placement constant), bits hi..lo with bit 31 the most significant. Field macros
 * expand to those three numbers:
 *
 *	#define DVX_MLX5_QPC_CD_MASTER 144, 0, 0	(in the qpc, dvx/mlx5/cmd.h)
 *	dvx_mlx5_set(qpc, DVX_MLX5_QPC_CD_MASTER, 1);
 *
 * dvx_mlx5_set() does a read-modify-write of exactly one dword and masks the value to
 * the field's width, so a 1-bit field never touches its neighbours (DOCA once set
 * cd_master with a 64-bit store and hit next_rcv_psn instead; prm 0).
 * Whole 64-bit fields ("bytes B-E") use dvx_mlx5_set64() on an 8-byte aligned offset.
 */
#ifndef DVX_MLX5_IFC_H
#define DVX_MLX5_IFC_H

#include <dvx/byteorder.h>

/**
 * dvx_mlx5_field_mask() - the mask of bits @hi..@lo of a 32-bit dword.
 * @hi:		most significant bit of the field (31 is the dword's top bit)
 * @lo:		least significant bit, @lo <= @hi
 *
 * Context: any, host or device; pure. Return: the mask, in CPU order, with the
 * field's bits set in place (0xffffffff for a whole dword).
 */
DVX_INLINE uint32_t dvx_mlx5_field_mask(unsigned hi, unsigned lo)
{
	return (hi - lo == 31) ? 0xffffffffu : (((1u << (hi - lo + 1)) - 1) << lo);
}

/** dvx_mlx5_set() - set field dw@@byte [@hi:@lo] of @mbox to @v (masked to its width). */
DVX_INLINE void dvx_mlx5_set(void *mbox, unsigned byte, unsigned hi, unsigned lo, uint32_t v)
{
	uint8_t *p = (uint8_t *)mbox + byte;
	uint32_t mask = dvx_mlx5_field_mask(hi, lo);
	uint32_t dw = dvx_get_be32(p);

	dw = (dw & ~mask) | ((v << lo) & mask);
	dvx_put_be32(p, dw);
}

/** dvx_mlx5_get() - read field dw@@byte [@hi:@lo] of @mbox. */
DVX_INLINE uint32_t dvx_mlx5_get(const void *mbox, unsigned byte, unsigned hi, unsigned lo)
{
	return (dvx_get_be32((const uint8_t *)mbox + byte) & dvx_mlx5_field_mask(hi, lo)) >> lo;
}

/** dvx_mlx5_set64() - set the whole big-endian 64-bit field at @byte (8-byte aligned). */
DVX_INLINE void dvx_mlx5_set64(void *mbox, unsigned byte, uint64_t v)
{
	dvx_put_be64((uint8_t *)mbox + byte, v);
}

/** dvx_mlx5_get64() - read the whole big-endian 64-bit field at @byte. */
DVX_INLINE uint64_t dvx_mlx5_get64(const void *mbox, unsigned byte)
{
	return dvx_get_be64((const uint8_t *)mbox + byte);
}

/* ---- the command envelope shared by every mailbox (prm 1.1) ---- */
#define DVX_MLX5_HDR_OPCODE 0, 31, 16		/* in: dw@0 [31:16] */
#define DVX_MLX5_HDR_UID 0, 15, 0		/* in: dw@0 [15:0], filled by the kernel */
#define DVX_MLX5_HDR_OP_MOD 4, 15, 0		/* in: dw@4 [15:0] */
#define DVX_MLX5_OUT_STATUS 0, 31, 24		/* out: byte 0 */
#define DVX_MLX5_OUT_SYNDROME 4, 31, 0		/* out: bytes 4-7 */
#define DVX_MLX5_HDR_BYTES 16u

/* PRM command opcodes (prm 1.1) */
enum dvx_mlx5_cmd {
	DVX_MLX5_CMD_QUERY_HCA_CAP = 0x100,
	DVX_MLX5_CMD_CREATE_MKEY = 0x200,
	DVX_MLX5_CMD_CREATE_CQ = 0x400,
	DVX_MLX5_CMD_DESTROY_CQ = 0x401,
	DVX_MLX5_CMD_QUERY_CQ = 0x402,
	DVX_MLX5_CMD_CREATE_QP = 0x500,
	DVX_MLX5_CMD_DESTROY_QP = 0x501,
	DVX_MLX5_CMD_RST2INIT_QP = 0x502,
	DVX_MLX5_CMD_INIT2RTR_QP = 0x503,
	DVX_MLX5_CMD_RTR2RTS_QP = 0x504,
	DVX_MLX5_CMD_RTS2RTS_QP = 0x505,
	DVX_MLX5_CMD_2ERR_QP = 0x507,
	DVX_MLX5_CMD_2RST_QP = 0x50a,
	DVX_MLX5_CMD_QUERY_QP = 0x50b,
	DVX_MLX5_CMD_ALLOC_PD = 0x800,
};

#endif /* DVX_MLX5_IFC_H */
