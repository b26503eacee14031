/* SPDX-License-Identifier: MIT */
/*
 * dvx/mlx5/prm.h - mlx5 data-path hardware layouts (ConnectX-6/7).
 *
 * Send WQE segments, the 64-byte CQE, doorbell record and UAR offsets, each as the
 * PRM lays it out: big-endian typed fields, reserved gaps named by their byte offset,
 * sizes and offsets asserted below for gcc, clang and nvcc. The section numbers in the
 * comments ("prm N.M") refer to docs/prm.md, which gives each fact with its public
 * sources (rdma-core mlx5dv.h, the kernel's mlx5_ifc.h, DPDK mlx5_prm.h, NVSHMEM, DOCA
 * GPUNetIO).
 *
 * No C bitfields: every sub-byte field is reached through the shift/mask constants.
 */
#ifndef DVX_MLX5_PRM_H
#define DVX_MLX5_PRM_H

#include <dvx/byteorder.h>

/* ---- send queue geometry (prm 2.1) ---- */
#define DVX_MLX5_SEND_WQE_BB 64u		/* one WQE basic block */
#define DVX_MLX5_SEND_WQE_SHIFT 6u
#define DVX_MLX5_DS_BYTES 16u			/* the unit of ctrl.ds */
#define DVX_MLX5_DS_PER_WQEBB 4u
#define DVX_MLX5_MAX_DS 63u			/* ds is 6 bits */
#define DVX_MLX5_MAX_WQE_BYTES (DVX_MLX5_MAX_DS * DVX_MLX5_DS_BYTES)
#define DVX_MLX5_MAX_WQEBB_PER_WQE DVX_DIV_ROUND_UP(DVX_MLX5_MAX_WQE_BYTES, DVX_MLX5_SEND_WQE_BB)
#define DVX_MLX5_WQE_INDEX_MASK 0xffffu		/* 16 bits of index are visible to hardware */
#define DVX_MLX5_LOG_MAX_SQ 15u			/* qpc.log_sq_size is 4 bits, max 15 */

/* ---- send opcodes, ctrl.opmod_idx_opcode[7:0] (prm 2.2) ---- */
enum dvx_mlx5_opcode {
	DVX_MLX5_OPCODE_NOP = 0x00,
	DVX_MLX5_OPCODE_SEND_INVAL = 0x01,
	DVX_MLX5_OPCODE_RDMA_WRITE = 0x08,
	DVX_MLX5_OPCODE_RDMA_WRITE_IMM = 0x09,
	DVX_MLX5_OPCODE_SEND = 0x0a,
	DVX_MLX5_OPCODE_SEND_IMM = 0x0b,
	DVX_MLX5_OPCODE_WAIT = 0x0f,		/* core-direct: wait on a CQ index */
	DVX_MLX5_OPCODE_RDMA_READ = 0x10,
	DVX_MLX5_OPCODE_ATOMIC_CS = 0x11,
	DVX_MLX5_OPCODE_ATOMIC_FA = 0x12,
	DVX_MLX5_OPCODE_ATOMIC_MASKED_CS = 0x14,
	DVX_MLX5_OPCODE_ATOMIC_MASKED_FA = 0x15,
	DVX_MLX5_OPCODE_RECV_EN = 0x16,		/* core-direct: enable a slave RQ */
	DVX_MLX5_OPCODE_SEND_EN = 0x17,		/* core-direct: enable a slave SQ */
	DVX_MLX5_OPCODE_DUMP = 0x23,
	DVX_MLX5_OPCODE_UMR = 0x25,
};

/* opmod of the extended (masked) atomics: 0x08 | (log2(size) - 2) (prm 2.4) */
#define DVX_MLX5_OPMOD_EXT_ATOMIC_4B 0x08u
#define DVX_MLX5_OPMOD_EXT_ATOMIC_8B 0x09u
/* opmod of WAIT (prm 2.7) */
#define DVX_MLX5_OPMOD_WAIT_CQ_PI 0x00u
#define DVX_MLX5_OPMOD_WAIT_DATA 0x01u
#define DVX_MLX5_OPMOD_WAIT_TIME 0x02u

/* ---- ctrl.fm_ce_se (prm 2.2) ---- */
#define DVX_MLX5_WQE_CTRL_SOLICITED 0x02u
#define DVX_MLX5_WQE_CTRL_CE_SHIFT 2u
#define DVX_MLX5_WQE_CTRL_CE_MASK (3u << DVX_MLX5_WQE_CTRL_CE_SHIFT)
#define DVX_MLX5_WQE_CTRL_FM_SHIFT 5u
#define DVX_MLX5_WQE_CTRL_FM_MASK (7u << DVX_MLX5_WQE_CTRL_FM_SHIFT)

/** enum dvx_mlx5_ce - completion mode, fm_ce_se[3:2]. */
enum dvx_mlx5_ce {
	DVX_MLX5_CE_ERROR_ONLY = 0,	/* a CQE only if the WQE fails */
	DVX_MLX5_CE_FIRST_ERROR = 1,	/* a CQE on the first error */
	DVX_MLX5_CE_ALWAYS = 2,		/* always a CQE (CQ_UPDATE) */
	DVX_MLX5_CE_CQE_AND_EQE = 3,	/* a CQE and an event */
};

/**
 * enum dvx_mlx5_fm - fence mode, fm_ce_se[7:5]: what the WQE waits for (docs/prm.md 10.3,
 * with sources). Mode 1 orders the WQE after earlier *local* memory operations of the SQ
 * (a UMR or memory-window bind: rdma-core and the kernel put it on the WQE that follows
 * one); nothing says it waits for READ or atomic responses, so the software NIC's
 * reorder mode lets a mode-1 WQE gather early, as mode 0.
 */
enum dvx_mlx5_fm {
	DVX_MLX5_FM_NONE = 0,
	DVX_MLX5_FM_INITIATOR_SMALL = 1,	/* after earlier UMR / memory-window binds */
	DVX_MLX5_FM_FENCE = 2,			/* wait for earlier RDMA read/atomic responses */
	DVX_MLX5_FM_STRONG_ORDERING = 3,	/* wait for every earlier WQE */
	DVX_MLX5_FM_FENCE_AND_INITIATOR_SMALL = 4, /* 1 and 2: rdma-core's IBV_SEND_FENCE */
};

#define DVX_MLX5_WQE_CTRL_CE(ce) ((uint8_t)((ce) << DVX_MLX5_WQE_CTRL_CE_SHIFT))
#define DVX_MLX5_WQE_CTRL_FM(fm) ((uint8_t)((fm) << DVX_MLX5_WQE_CTRL_FM_SHIFT))
#define DVX_MLX5_WQE_CTRL_CQ_UPDATE DVX_MLX5_WQE_CTRL_CE(DVX_MLX5_CE_ALWAYS)	/* 0x08 */

/* ---- segments (prm 2.2-2.7) ---- */

/** struct dvx_mlx5_wqe_ctrl_seg - the control segment, first in every WQE (16 B). */
struct dvx_mlx5_wqe_ctrl_seg {
	dvx_be32 opmod_idx_opcode;	/* [31:24] opmod, [23:8] wqe index, [7:0] opcode */
	dvx_be32 qpn_ds;		/* [31:8] QPN, [5:0] ds (16-byte units incl. ctrl) */
	uint8_t signature;
	uint8_t dci_stream_channel_id[2];	/* BE16 at byte 9, unaligned */
	uint8_t fm_ce_se;
	dvx_be32 imm;			/* immediate (*_IMM), invalidate rkey (SEND_INVAL) */
};

/** struct dvx_mlx5_wqe_raddr_seg - remote address segment (16 B). */
struct dvx_mlx5_wqe_raddr_seg {
	dvx_be64 raddr;
	dvx_be32 rkey;
	dvx_be32 rsvd12;
};

/** struct dvx_mlx5_wqe_data_seg - a pointer (scatter/gather) segment (16 B). */
struct dvx_mlx5_wqe_data_seg {
	dvx_be32 byte_count;		/* bit 31 must be 0 */
	dvx_be32 lkey;
	dvx_be64 addr;
};

/** struct dvx_mlx5_wqe_inl_seg - inline data header; the payload follows (4 B). */
struct dvx_mlx5_wqe_inl_seg {
	dvx_be32 byte_count;		/* length | DVX_MLX5_INLINE_SEG */
};

/** struct dvx_mlx5_wqe_atomic_seg - standard 8-byte CS/FA operands (16 B). */
struct dvx_mlx5_wqe_atomic_seg {
	dvx_be64 swap_add;		/* FA: addend; CS: new value */
	dvx_be64 compare;		/* CS: expected value; FA: ignored */
};

/** struct dvx_mlx5_wqe_masked_fa32_seg - masked fetch-add, 4 bytes (16 B). */
struct dvx_mlx5_wqe_masked_fa32_seg {
	dvx_be32 add_data;
	dvx_be32 field_boundary;	/* bit i set: no carry out of bit i (0: one field) */
	uint8_t rsvd8[8];
};

/** struct dvx_mlx5_wqe_masked_fa64_seg - masked fetch-add, 8 bytes (16 B). */
struct dvx_mlx5_wqe_masked_fa64_seg {
	dvx_be64 add_data;
	dvx_be64 field_boundary;
};

/** struct dvx_mlx5_wqe_masked_cs32_seg - masked compare-swap, 4 bytes (16 B). */
struct dvx_mlx5_wqe_masked_cs32_seg {
	dvx_be32 swap_data;
	dvx_be32 compare_data;
	dvx_be32 swap_mask;
	dvx_be32 compare_mask;
};

/** struct dvx_mlx5_wqe_masked_cs64_seg - masked compare-swap, 8 bytes (32 B). */
struct dvx_mlx5_wqe_masked_cs64_seg {
	dvx_be64 swap_data;
	dvx_be64 compare_data;
	dvx_be64 swap_mask;
	dvx_be64 compare_mask;
};

/** struct dvx_mlx5_wqe_wait_seg - WAIT / SEND_EN / RECV_EN segment (16 B). */
struct dvx_mlx5_wqe_wait_seg {
	uint8_t rsvd0[8];
	dvx_be32 max_index;		/* CQE index to wait for / slave index to enable up to */
	dvx_be32 qpn_cqn;		/* CQN for WAIT, slave QPN for SEND_EN/RECV_EN */
};

#define DVX_MLX5_INLINE_SEG 0x80000000u		/* inline byte_count flag */
#define DVX_MLX5_INVALID_LKEY 0x100u		/* closes an unused receive scatter slot */
#define DVX_MLX5_MAX_BYTE_COUNT 0x7fffffffu	/* data segment byte_count limit (bit 31 = 0) */

/* ---- doorbell records and UAR (prm 3.1, 1.4) ---- */
#define DVX_MLX5_RCV_DBR 0	/* QP DBR word 0: RQ counter */
#define DVX_MLX5_SND_DBR 1	/* QP DBR word 1: SQ counter */
#define DVX_MLX5_CQ_SET_CI 0	/* CQ DBR word 0: consumer index (24 bits) */
#define DVX_MLX5_CQ_ARM_DB 1	/* CQ DBR word 1: arm */
/* the arm word of a CQ that is only polled: arm sequence 2, no request (prm 4.4) */
#define DVX_MLX5_CQ_ARM_POLLED (2u << 28)
#define DVX_MLX5_DBR_BYTES 8u	/* one QP or CQ doorbell record */
#define DVX_MLX5_CQ_CI_MASK 0xffffffu
#define DVX_MLX5_UAR_BF_OFFSET 0x800u	/* first doorbell/BlueFlame register in a UAR page */
#define DVX_MLX5_UAR_CQ_DOORBELL 0x20u	/* CQ arm doorbell */
#define DVX_MLX5_UAR_DBR_LESS_DB 0x600u	/* send doorbell for send_dbr_mode = 1 */
#define DVX_MLX5_UAR_PAGE_SIZE 4096u

/* ---- completion queue entries (prm 4) ---- */
#define DVX_MLX5_CQE_SIZE 64u

/** enum dvx_mlx5_cqe_opcode - CQE opcode, op_own[7:4]. */
enum dvx_mlx5_cqe_opcode {
	DVX_MLX5_CQE_REQ = 0,
	DVX_MLX5_CQE_RESP_WR_IMM = 1,
	DVX_MLX5_CQE_RESP_SEND = 2,
	DVX_MLX5_CQE_RESP_SEND_IMM = 3,
	DVX_MLX5_CQE_RESP_SEND_INV = 4,
	DVX_MLX5_CQE_RESIZE_CQ = 5,
	DVX_MLX5_CQE_NO_PACKET = 6,
	DVX_MLX5_CQE_SIG_ERR = 12,
	DVX_MLX5_CQE_REQ_ERR = 13,
	DVX_MLX5_CQE_RESP_ERR = 14,
	DVX_MLX5_CQE_INVALID = 15,
};

/* CQE format, op_own[3:2] */
#define DVX_MLX5_CQE_FORMAT_NORMAL 0u
#define DVX_MLX5_CQE_FORMAT_INLINE32 1u
#define DVX_MLX5_CQE_FORMAT_INLINE64 2u
#define DVX_MLX5_CQE_FORMAT_COMPRESSED 3u
#define DVX_MLX5_CQE_OWNER_MASK 0x01u
#define DVX_MLX5_CQE_SE_MASK 0x02u
/* what dvx writes into a fresh CQ ring: opcode INVALID, owner 1 (prm 1.6) */
#define DVX_MLX5_CQE_INIT_OP_OWN 0xf1u

/** enum dvx_mlx5_cqe_syndrome - error CQE syndrome, byte 55 (prm 4.5). */
enum dvx_mlx5_cqe_syndrome {
	DVX_MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR = 0x01,
	DVX_MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR = 0x02,
	DVX_MLX5_CQE_SYNDROME_LOCAL_PROT_ERR = 0x04,
	DVX_MLX5_CQE_SYNDROME_WR_FLUSH_ERR = 0x05,
	DVX_MLX5_CQE_SYNDROME_MW_BIND_ERR = 0x06,
	DVX_MLX5_CQE_SYNDROME_BAD_RESP_ERR = 0x10,
	DVX_MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR = 0x11,
	DVX_MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR = 0x12,
	DVX_MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR = 0x13,
	DVX_MLX5_CQE_SYNDROME_REMOTE_OP_ERR = 0x14,
	DVX_MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR = 0x15,
	DVX_MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR = 0x16,
	DVX_MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR = 0x22,
};

/** struct dvx_mlx5_cqe64 - a 64-byte completion queue entry (prm 4.1). */
struct dvx_mlx5_cqe64 {
	uint8_t rsvd0[2];
	dvx_be16 wqe_id;		/* striding RQ */
	uint8_t rsvd4[13];
	uint8_t ml_path;
	uint8_t rsvd18[4];
	dvx_be16 slid;			/* responder, IB */
	dvx_be32 flags_rqpn;		/* [23:0] remote QPN, [26:24] RoCE L3 type */
	uint8_t hds_ip_ext;
	uint8_t l4_hdr_type_etc;
	dvx_be16 vlan_info;
	dvx_be32 srqn_uidx;		/* [23:0] user_index (cqe_version 1) or SRQN */
	dvx_be32 imm_inval_pkey;	/* immediate of *_IMM */
	uint8_t app;
	uint8_t app_op;
	dvx_be16 app_info;
	dvx_be32 byte_cnt;
	dvx_be64 timestamp;
	dvx_be32 sop_drop_qpn;		/* [31:24] opcode of the completed WQE, [23:0] QPN */
	dvx_be16 wqe_counter;		/* index of the completed WQE's first WQEBB */
	uint8_t signature;
	uint8_t op_own;			/* [7:4] opcode, [3:2] format, [1] se, [0] owner */
};

/** struct dvx_mlx5_err_cqe - the same 64 bytes when the opcode is REQ_ERR/RESP_ERR (prm 4.5). */
struct dvx_mlx5_err_cqe {
	uint8_t rsvd0[32];
	dvx_be32 srqn;
	uint8_t rsvd36[16];
	uint8_t hw_err_synd;
	uint8_t hw_synd_type;
	uint8_t vendor_err_synd;
	uint8_t syndrome;
	dvx_be32 s_wqe_opcode_qpn;	/* [31:24] opcode of the failed WQE, [23:0] QPN */
	dvx_be16 wqe_counter;		/* index of the failed WQE */
	uint8_t signature;
	uint8_t op_own;
};

/* ---- layout assertions (every compiler that includes this header checks them) ---- */
DVX_ASSERT_SIZE(struct dvx_mlx5_wqe_ctrl_seg, 16);
DVX_ASSERT_OFFSET(struct dvx_mlx5_wqe_ctrl_seg, qpn_ds, 4);
DVX_ASSERT_OFFSET(struct dvx_mlx5_wqe_ctrl_seg, signature, 8);
DVX_ASSERT_OFFSET(struct dvx_mlx5_wqe_ctrl_seg, dci_stream_channel_id, 9);
DVX_ASSERT_OFFSET(struct dvx_mlx5_wqe_ctrl_seg, fm_ce_se, 11);
DVX_ASSERT_OFFSET(struct dvx_mlx5_wqe_ctrl_seg, imm, 12);
DVX_ASSERT_SIZE(struct dvx_mlx5_wqe_raddr_seg, 16);
DVX_ASSERT_OFFSET(struct dvx_mlx5_wqe_raddr_seg, rkey, 8);
DVX_ASSERT_SIZE(struct dvx_mlx5_wqe_data_seg, 16);
DVX_ASSERT_OFFSET(struct dvx_mlx5_wqe_data_seg, lkey, 4);
DVX_ASSERT_OFFSET(struct dvx_mlx5_wqe_data_seg, addr, 8);
DVX_ASSERT_SIZE(struct dvx_mlx5_wqe_inl_seg, 4);
DVX_ASSERT_SIZE(struct dvx_mlx5_wqe_atomic_seg, 16);
DVX_ASSERT_OFFSET(struct dvx_mlx5_wqe_atomic_seg, compare, 8);
DVX_ASSERT_SIZE(struct dvx_mlx5_wqe_masked_fa32_seg, 16);
DVX_ASSERT_SIZE(struct dvx_mlx5_wqe_masked_fa64_seg, 16);
DVX_ASSERT_SIZE(struct dvx_mlx5_wqe_masked_cs32_seg, 16);
DVX_ASSERT_OFFSET(struct dvx_mlx5_wqe_masked_cs32_seg, compare_mask, 12);
DVX_ASSERT_SIZE(struct dvx_mlx5_wqe_masked_cs64_seg, 32);
DVX_ASSERT_OFFSET(struct dvx_mlx5_wqe_masked_cs64_seg, swap_mask, 16);
DVX_ASSERT_SIZE(struct dvx_mlx5_wqe_wait_seg, 16);
DVX_ASSERT_OFFSET(struct dvx_mlx5_wqe_wait_seg, max_index, 8);
DVX_ASSERT_OFFSET(struct dvx_mlx5_wqe_wait_seg, qpn_cqn, 12);
DVX_ASSERT_SIZE(struct dvx_mlx5_cqe64, 64);
DVX_ASSERT_OFFSET(struct dvx_mlx5_cqe64, wqe_id, 2);
DVX_ASSERT_OFFSET(struct dvx_mlx5_cqe64, ml_path, 17);
DVX_ASSERT_OFFSET(struct dvx_mlx5_cqe64, slid, 22);
DVX_ASSERT_OFFSET(struct dvx_mlx5_cqe64, flags_rqpn, 24);
DVX_ASSERT_OFFSET(struct dvx_mlx5_cqe64, vlan_info, 30);
DVX_ASSERT_OFFSET(struct dvx_mlx5_cqe64, srqn_uidx, 32);
DVX_ASSERT_OFFSET(struct dvx_mlx5_cqe64, imm_inval_pkey, 36);
DVX_ASSERT_OFFSET(struct dvx_mlx5_cqe64, app_info, 42);
DVX_ASSERT_OFFSET(struct dvx_mlx5_cqe64, byte_cnt, 44);
DVX_ASSERT_OFFSET(struct dvx_mlx5_cqe64, timestamp, 48);
DVX_ASSERT_OFFSET(struct dvx_mlx5_cqe64, sop_drop_qpn, 56);
DVX_ASSERT_OFFSET(struct dvx_mlx5_cqe64, wqe_counter, 60);
DVX_ASSERT_OFFSET(struct dvx_mlx5_cqe64, signature, 62);
DVX_ASSERT_OFFSET(struct dvx_mlx5_cqe64, op_own, 63);
DVX_ASSERT_SIZE(struct dvx_mlx5_err_cqe, 64);
DVX_ASSERT_OFFSET(struct dvx_mlx5_err_cqe, srqn, 32);
DVX_ASSERT_OFFSET(struct dvx_mlx5_err_cqe, hw_err_synd, 52);
DVX_ASSERT_OFFSET(struct dvx_mlx5_err_cqe, vendor_err_synd, 54);
DVX_ASSERT_OFFSET(struct dvx_mlx5_err_cqe, syndrome, 55);
DVX_ASSERT_OFFSET(struct dvx_mlx5_err_cqe, s_wqe_opcode_qpn, 56);
DVX_ASSERT_OFFSET(struct dvx_mlx5_err_cqe, wqe_counter, 60);
DVX_ASSERT_OFFSET(struct dvx_mlx5_err_cqe, op_own, 63);

#endif /* DVX_MLX5_PRM_H */
