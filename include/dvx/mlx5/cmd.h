/* SPDX-License-Identifier: MIT */
/*
 * dvx/mlx5/cmd.h - the PRM commands that create, connect and tear down dvx's CQs and QPs.
 *
 * Encoders fill an input mailbox for mlx5dv_devx_obj_create/_modify/_destroy/_query;
 * decoders read the output mailbox. They are pure: no allocation, no system calls, no
 * printing. Every encoder validates its whole attribute set first and returns -EINVAL
 * with the mailbox untouched when a value does not fit its field; only then does it
 * zero the mailbox and write the fields.
 *
 * Field macros are positions RELATIVE TO THE PRM STRUCTURE their prefix names, written
 * "byte, hi, lo" exactly as docs/prm.md's tables write "dw@B [hi:lo]" (prm 1.6-1.8), the
 * way the kernel's mlx5_ifc.h lays each structure out on its own: DVX_MLX5_CREATE_CQ_IN_*
 * in create_cq_in, DVX_MLX5_CQC_* in the cq context, DVX_MLX5_QPC_* in the qp context,
 * DVX_MLX5_ADS_* in an address path, and dvx/mlx5/caps.h's DVX_MLX5_CAP_* in a capability
 * page. A structure carried inside another is reached once, through its placement
 * constant (DVX_MLX5_CREATE_QP_IN_QPC, DVX_MLX5_QPC_PRIMARY_ADDRESS_PATH, ...):
 *
 *	uint8_t *qpc = (uint8_t *)in + DVX_MLX5_CREATE_QP_IN_QPC;
 *	dvx_mlx5_set(qpc, DVX_MLX5_QPC_PD, pdn);
 *
 * Whole 64-bit fields ("bytes B-E") and byte strings (rgid, rmac) are plain byte offsets
 * in the same structure, used with dvx_mlx5_set64()/memcpy.
 *
 * Context placement, the same in every command that carries one:
 *  - cq_context (cqc, 64 B) at byte 16 of create_cq_in AND of query_cq_out
 *    [prm 1.6; KL include/linux/mlx5/mlx5_ifc.h query_cq_out_bits: status, syndrome,
 *    reserved_at_40[0x40], cq_context].
 *  - qpc (232 B) at byte 24 of create_qp_in, rst2init/init2rtr/rtr2rts/rts2rts_qp_in
 *    AND query_qp_out [prm 1.7-1.8; KL mlx5_ifc.h query_qp_out_bits: status, syndrome,
 *    reserved_at_40[0x40], opt_param_mask (byte 16), ece/reserved (byte 20), qpc at
 *    bit 0xc0 = byte 24, reserved_at_800[0x80]; 272 B without PAS].
 *  - the primary address path (ads, 44 B) at byte 24 of the qpc [KL qpc_bits
 *    primary_address_path at bit 0xc0].
 */
#ifndef DVX_MLX5_CMD_H
#define DVX_MLX5_CMD_H

#include <dvx/mlx5/ifc.h>

DVX_BEGIN_DECLS

/* ---- mailbox sizes (no PAS: DEVX queues always live in umems, prm 1.1) ---- */
#define DVX_MLX5_CREATE_CQ_IN_BYTES 272u	/* prm 1.6 */
#define DVX_MLX5_CREATE_CQ_OUT_BYTES 16u
#define DVX_MLX5_DESTROY_CQ_IN_BYTES 16u
#define DVX_MLX5_DESTROY_CQ_OUT_BYTES 16u
#define DVX_MLX5_QUERY_CQ_IN_BYTES 16u
#define DVX_MLX5_QUERY_CQ_OUT_BYTES 272u	/* 16 hdr + 64 cqc + 192 reserved (KL) */
#define DVX_MLX5_CREATE_QP_IN_BYTES 272u	/* prm 1.7 */
#define DVX_MLX5_CREATE_QP_OUT_BYTES 16u
#define DVX_MLX5_DESTROY_QP_IN_BYTES 16u
#define DVX_MLX5_DESTROY_QP_OUT_BYTES 16u
#define DVX_MLX5_MODIFY_QP_IN_BYTES 272u	/* rst2init/init2rtr/rtr2rts/rts2rts, prm 1.8 */
#define DVX_MLX5_MODIFY_QP_OUT_BYTES 16u
#define DVX_MLX5_QP_2ERR_IN_BYTES 16u
#define DVX_MLX5_QP_2RST_IN_BYTES 16u
#define DVX_MLX5_QUERY_QP_IN_BYTES 16u
#define DVX_MLX5_QUERY_QP_OUT_BYTES 272u	/* 24 hdr + 232 qpc + 16 reserved (KL) */
/* the largest input/output mailbox of this header, for stack buffers */
#define DVX_MLX5_CMD_MAX_BYTES 272u

/* ---- CREATE_CQ / DESTROY_CQ / QUERY_CQ (prm 1.6) ---- */
#define DVX_MLX5_CREATE_CQ_IN_CQC 16u			/* cqc: bytes 16-79 */
#define DVX_MLX5_CREATE_CQ_IN_CQ_UMEM_OFFSET 80u	/* bytes 80-87, 64-bit */
#define DVX_MLX5_CREATE_CQ_IN_CQ_UMEM_ID 88, 31, 0	/* bytes 88-91 */
#define DVX_MLX5_CREATE_CQ_IN_CQ_UMEM_VALID 92, 31, 31	/* dw@92 [31] */
#define DVX_MLX5_CREATE_CQ_OUT_CQN 8, 23, 0		/* dw@8 [23:0] */
#define DVX_MLX5_DESTROY_CQ_IN_CQN 8, 23, 0		/* dw@8 [23:0] (KL destroy_cq_in) */
#define DVX_MLX5_QUERY_CQ_IN_CQN 8, 23, 0		/* dw@8 [23:0] (KL query_cq_in) */
#define DVX_MLX5_QUERY_CQ_OUT_CQC 16u			/* cqc: bytes 16-79 (KL) */

/*
 * The context a mailbox carries, from a byte pointer @mb to the mailbox (uint8_t * or
 * const uint8_t *, which it keeps): the cqc of create_cq_in and query_cq_out, the qpc of
 * create_qp_in, every *2*_qp_in and query_qp_out, and that qpc's primary address path.
 * The placement is the same in every command that carries the context (above).
 */
#define DVX_MLX5_CQC_IN(mb) ((mb) + DVX_MLX5_CREATE_CQ_IN_CQC)
#define DVX_MLX5_QPC_IN(mb) ((mb) + DVX_MLX5_CREATE_QP_IN_QPC)
#define DVX_MLX5_ADS_IN(mb) ((mb) + DVX_MLX5_CREATE_QP_IN_QPC + DVX_MLX5_QPC_PRIMARY_ADDRESS_PATH)

/* cqc fields, relative to the cqc (prm 1.6 table, row named) */
#define DVX_MLX5_CQC_STATUS 0, 31, 28			/* status dw@0 [31:28] */
#define DVX_MLX5_CQC_DBR_UMEM_VALID 0, 25, 25		/* dbr_umem_valid dw@0 [25] */
#define DVX_MLX5_CQC_CQE_SZ 0, 23, 21			/* cqe_sz dw@0 [23:21] */
#define DVX_MLX5_CQC_CC 0, 20, 20			/* cc dw@0 [20] */
#define DVX_MLX5_CQC_OI 0, 17, 17			/* oi dw@0 [17] */
#define DVX_MLX5_CQC_CQ_PERIOD_MODE 0, 16, 15		/* cq_period_mode dw@0 [16:15] */
#define DVX_MLX5_CQC_CQE_COMP_EN 0, 14, 14		/* cqe_comp_en dw@0 [14] */
#define DVX_MLX5_CQC_MINI_CQE_RES_FORMAT 0, 13, 12	/* mini_cqe_res_format dw@0 [13:12] */
#define DVX_MLX5_CQC_ST 0, 11, 8			/* st dw@0 [11:8] */
#define DVX_MLX5_CQC_CQE_COMP_LAYOUT 0, 1, 0		/* cqe_comp_layout dw@0 [1:0] */
#define DVX_MLX5_CQC_DBR_UMEM_ID 4, 31, 0		/* dbr_umem_id bytes 4-7 */
#define DVX_MLX5_CQC_PAGE_OFFSET 8, 11, 6		/* page_offset dw@8 [11:6] */
#define DVX_MLX5_CQC_CQ_TIMESTAMP_FORMAT 8, 1, 0	/* cq_timestamp_format dw@8 [1:0] */
#define DVX_MLX5_CQC_LOG_CQ_SIZE 12, 28, 24		/* log_cq_size dw@12 [28:24] */
#define DVX_MLX5_CQC_UAR_PAGE 12, 23, 0			/* uar_page dw@12 [23:0] */
#define DVX_MLX5_CQC_CQ_PERIOD 16, 27, 16		/* cq_period dw@16 [27:16] */
#define DVX_MLX5_CQC_CQ_MAX_COUNT 16, 15, 0		/* cq_max_count dw@16 [15:0] */
#define DVX_MLX5_CQC_C_EQN 20, 7, 0			/* c_eqn dw@20 [7:0] */
#define DVX_MLX5_CQC_LOG_PAGE_SIZE 24, 28, 24		/* log_page_size dw@24 [28:24] */
#define DVX_MLX5_CQC_LAST_NOTIFIED_INDEX 32, 23, 0	/* last_notified_index dw@32 [23:0] */
#define DVX_MLX5_CQC_LAST_SOLICIT_INDEX 36, 23, 0	/* last_solicit_index dw@36 [23:0] */
#define DVX_MLX5_CQC_CONSUMER_COUNTER 40, 23, 0		/* consumer_counter dw@40 [23:0] */
#define DVX_MLX5_CQC_PRODUCER_COUNTER 44, 23, 0		/* producer_counter dw@44 [23:0] */
#define DVX_MLX5_CQC_DBR_ADDR 56u			/* dbr_addr bytes 56-63, 64-bit */

/* cqc.cqe_sz values (prm 1.6) */
#define DVX_MLX5_CQE_SZ_64 0u
#define DVX_MLX5_CQE_SZ_128 1u

/* ---- CREATE_QP / DESTROY_QP (prm 1.7) ---- */
#define DVX_MLX5_CREATE_QP_IN_QPC_EXT 8, 31, 31		/* qpc_ext dw@8 [31] */
#define DVX_MLX5_CREATE_QP_IN_OPT_PARAM_MASK 16, 31, 0	/* bytes 16-19 */
#define DVX_MLX5_CREATE_QP_IN_QPC 24u			/* qpc: bytes 24-255 */
#define DVX_MLX5_CREATE_QP_IN_WQ_UMEM_OFFSET 256u	/* bytes 256-263, 64-bit */
#define DVX_MLX5_CREATE_QP_IN_WQ_UMEM_ID 264, 31, 0	/* bytes 264-267 */
#define DVX_MLX5_CREATE_QP_IN_WQ_UMEM_VALID 268, 31, 31	/* dw@268 [31] */
#define DVX_MLX5_CREATE_QP_OUT_QPN 8, 23, 0		/* dw@8 [23:0] */
#define DVX_MLX5_DESTROY_QP_IN_QPN 8, 23, 0		/* dw@8 [23:0] (KL destroy_qp_in) */

/* ---- the modify commands (prm 1.8) ---- */
#define DVX_MLX5_MODIFY_QP_IN_QPN 8, 23, 0		/* *2*_qp_in qpn dw@8 [23:0] */
#define DVX_MLX5_MODIFY_QP_IN_OPT_PARAM_MASK 16, 31, 0	/* bytes 16-19 */
#define DVX_MLX5_MODIFY_QP_IN_ECE 20, 31, 0		/* bytes 20-23 */
#define DVX_MLX5_MODIFY_QP_IN_QPC 24u			/* qpc: bytes 24-255 */
#define DVX_MLX5_QP_2ERR_IN_QPN 8, 23, 0		/* qp_2err_in qpn dw@8 [23:0] */
#define DVX_MLX5_QP_2RST_IN_QPN 8, 23, 0		/* qp_2rst_in qpn dw@8 [23:0] */

/* ---- QUERY_QP (KL mlx5_ifc.h query_qp_in/out; see the file comment) ---- */
#define DVX_MLX5_QUERY_QP_IN_QPN 8, 23, 0		/* dw@8 [23:0] */
#define DVX_MLX5_QUERY_QP_OUT_OPT_PARAM_MASK 16, 31, 0	/* bytes 16-19 */
#define DVX_MLX5_QUERY_QP_OUT_QPC 24u			/* qpc: bytes 24-255 */

/* qpc fields, relative to the qpc (prm 1.7 table) */
#define DVX_MLX5_QPC_STATE 0, 31, 28			/* state dw@0 [31:28], read-only */
#define DVX_MLX5_QPC_ST 0, 23, 16			/* st dw@0 [23:16] */
#define DVX_MLX5_QPC_PM_STATE 0, 12, 11		/* pm_state dw@0 [12:11] */
#define DVX_MLX5_QPC_PD 4, 23, 0			/* pd dw@4 [23:0] */
#define DVX_MLX5_QPC_MTU 8, 31, 29			/* mtu dw@8 [31:29] */
#define DVX_MLX5_QPC_LOG_MSG_MAX 8, 28, 24		/* log_msg_max dw@8 [28:24] */
#define DVX_MLX5_QPC_LOG_RQ_SIZE 8, 22, 19		/* log_rq_size dw@8 [22:19] */
#define DVX_MLX5_QPC_LOG_RQ_STRIDE 8, 18, 16		/* log_rq_stride dw@8 [18:16] */
#define DVX_MLX5_QPC_NO_SQ 8, 15, 15			/* no_sq dw@8 [15] */
#define DVX_MLX5_QPC_LOG_SQ_SIZE 8, 14, 11		/* log_sq_size dw@8 [14:11] */
#define DVX_MLX5_QPC_TS_FORMAT 8, 7, 6			/* ts_format dw@8 [7:6] */
#define DVX_MLX5_QPC_COUNTER_SET_ID 12, 31, 24		/* counter_set_id dw@12 [31:24] */
#define DVX_MLX5_QPC_UAR_PAGE 12, 23, 0			/* uar_page dw@12 [23:0] */
#define DVX_MLX5_QPC_SEND_DBR_MODE 16, 31, 30		/* send_dbr_mode dw@16 [31:30] (DOCA ifc) */
#define DVX_MLX5_QPC_USER_INDEX 16, 23, 0		/* user_index dw@16 [23:0] */
#define DVX_MLX5_QPC_LOG_PAGE_SIZE 20, 28, 24		/* log_page_size dw@20 [28:24] */
#define DVX_MLX5_QPC_REMOTE_QPN 20, 23, 0		/* remote_qpn dw@20 [23:0] */
#define DVX_MLX5_QPC_PRIMARY_ADDRESS_PATH 24u		/* ads: qpc bytes 24-67 */
#define DVX_MLX5_QPC_LOG_ACK_REQ_FREQ 112, 31, 28	/* log_ack_req_freq dw@112 [31:28] */
#define DVX_MLX5_QPC_LOG_SRA_MAX 112, 23, 21		/* log_sra_max dw@112 [23:21] */
#define DVX_MLX5_QPC_RETRY_COUNT 112, 18, 16		/* retry_count dw@112 [18:16] */
#define DVX_MLX5_QPC_RNR_RETRY 112, 15, 13		/* rnr_retry dw@112 [15:13] */
#define DVX_MLX5_QPC_NEXT_SEND_PSN 120, 23, 0		/* next_send_psn dw@120 [23:0] */
#define DVX_MLX5_QPC_CQN_SND 124, 23, 0			/* cqn_snd dw@124 [23:0] */
#define DVX_MLX5_QPC_LOG_RRA_MAX 144, 23, 21		/* log_rra_max dw@144 [23:21] */
#define DVX_MLX5_QPC_ATOMIC_MODE 144, 19, 16		/* atomic_mode dw@144 [19:16] */
#define DVX_MLX5_QPC_RRE 144, 15, 15			/* rre dw@144 [15] */
#define DVX_MLX5_QPC_RWE 144, 14, 14			/* rwe dw@144 [14] */
#define DVX_MLX5_QPC_RAE 144, 13, 13			/* rae dw@144 [13] */
#define DVX_MLX5_QPC_PAGE_OFFSET 144, 11, 6		/* page_offset dw@144 [11:6] */
#define DVX_MLX5_QPC_CD_SLAVE_RECEIVE 144, 2, 2		/* cd_slave_receive dw@144 [2] */
#define DVX_MLX5_QPC_CD_SLAVE_SEND 144, 1, 1		/* cd_slave_send dw@144 [1] */
#define DVX_MLX5_QPC_CD_MASTER 144, 0, 0		/* cd_master dw@144 [0] */
#define DVX_MLX5_QPC_MIN_RNR_NAK 148, 28, 24		/* min_rnr_nak dw@148 [28:24] */
#define DVX_MLX5_QPC_NEXT_RCV_PSN 148, 23, 0		/* next_rcv_psn dw@148 [23:0] */
#define DVX_MLX5_QPC_CQN_RCV 156, 23, 0			/* cqn_rcv dw@156 [23:0] */
#define DVX_MLX5_QPC_DBR_ADDR 160u			/* dbr_addr bytes 160-167, 64-bit */
#define DVX_MLX5_QPC_RQ_TYPE 172, 26, 24		/* rq_type dw@172 [26:24] */
#define DVX_MLX5_QPC_SRQN_RMPN_XRQN 172, 23, 0		/* srqn_rmpn_xrqn dw@172 [23:0] */
#define DVX_MLX5_QPC_HW_SQ_WQEBB_COUNTER 180, 31, 16	/* hw_sq_wqebb_counter dw@180 [31:16] */
#define DVX_MLX5_QPC_SW_SQ_WQEBB_COUNTER 180, 15, 0	/* sw_sq_wqebb_counter dw@180 [15:0] */
#define DVX_MLX5_QPC_CS_REQ 196, 15, 8			/* cs_req dw@196 [15:8] */
#define DVX_MLX5_QPC_CS_RES 196, 7, 0			/* cs_res dw@196 [7:0] */
#define DVX_MLX5_QPC_DBR_UMEM_VALID 208, 28, 28		/* dbr_umem_valid dw@208 [28] */
#define DVX_MLX5_QPC_DBR_UMEM_ID 228, 31, 0		/* dbr_umem_id bytes 228-231 */

/* address path (ads) fields, relative to the ads (prm 1.8 table, row named) */
#define DVX_MLX5_ADS_FL 0, 31, 31			/* fl dw@0 [31] */
#define DVX_MLX5_ADS_PKEY_INDEX 0, 15, 0		/* pkey_index dw@0 [15:0] */
#define DVX_MLX5_ADS_GRH 4, 23, 23			/* grh dw@4 [23] */
#define DVX_MLX5_ADS_MLID 4, 22, 16			/* mlid dw@4 [22:16] */
#define DVX_MLX5_ADS_RLID 4, 15, 0			/* rlid dw@4 [15:0] */
#define DVX_MLX5_ADS_ACK_TIMEOUT 8, 31, 27		/* ack_timeout dw@8 [31:27] */
#define DVX_MLX5_ADS_SRC_ADDR_INDEX 8, 23, 16		/* src_addr_index dw@8 [23:16] */
#define DVX_MLX5_ADS_STAT_RATE 8, 11, 8		/* stat_rate dw@8 [11:8] */
#define DVX_MLX5_ADS_HOP_LIMIT 8, 7, 0			/* hop_limit dw@8 [7:0] */
#define DVX_MLX5_ADS_TCLASS 12, 27, 20			/* tclass dw@12 [27:20] */
#define DVX_MLX5_ADS_FLOW_LABEL 12, 19, 0		/* flow_label dw@12 [19:0] */
#define DVX_MLX5_ADS_RGID_RIP 16u			/* rgid_rip bytes 16-31, 16 B */
#define DVX_MLX5_ADS_DSCP 32, 21, 16			/* dscp dw@32 [21:16] */
#define DVX_MLX5_ADS_UDP_SPORT 32, 15, 0		/* udp_sport dw@32 [15:0] */
#define DVX_MLX5_ADS_ETH_PRIO 36, 30, 28		/* eth_prio dw@36 [30:28] */
#define DVX_MLX5_ADS_SL 36, 27, 24			/* sl dw@36 [27:24] */
#define DVX_MLX5_ADS_VHCA_PORT_NUM 36, 23, 16		/* vhca_port_num dw@36 [23:16] */
#define DVX_MLX5_ADS_RMAC_47_32 36, 15, 0		/* rmac_47_32 dw@36 [15:0] */
#define DVX_MLX5_ADS_RMAC_31_0 40, 31, 0		/* rmac_31_0 bytes 40-43 */
#define DVX_MLX5_ADS_RMAC 38u				/* rmac as 6 bytes at 38-43 */

/* qpc.st (prm 1.7), qpc.pm_state (KL MLX5_QPC_PM_STATE_*), qpc.rq_type (prm 1.7) */
#define DVX_MLX5_QP_ST_RC 0x0u
#define DVX_MLX5_QP_ST_DCI 0x5u
#define DVX_MLX5_QP_PM_STATE_MIGRATED 0x3u
enum dvx_mlx5_rq_type {
	DVX_MLX5_RQ_TYPE_REGULAR = 0,	/* the QP's own RQ, ahead of the SQ in the WQ umem */
	DVX_MLX5_RQ_TYPE_SRQ = 1,	/* receives from a shared RQ (srqn) */
	DVX_MLX5_RQ_TYPE_ZERO = 3,	/* zero-length RQ: no receives at all */
};

/* qpc.mtu: the IB MTU enum (prm 1.7) */
enum dvx_mlx5_mtu {
	DVX_MLX5_MTU_256 = 1,
	DVX_MLX5_MTU_512 = 2,
	DVX_MLX5_MTU_1024 = 3,
	DVX_MLX5_MTU_2048 = 4,
	DVX_MLX5_MTU_4096 = 5,
};

/* qpc.atomic_mode (prm 1.7, KL MLX5_QPC_ATOMIC_MODE_*) */
enum dvx_mlx5_atomic_mode {
	DVX_MLX5_ATOMIC_MODE_IB_SPEC = 1,	/* standard 8 B CS/FA, IB semantics */
	DVX_MLX5_ATOMIC_MODE_ONLY_8B = 2,	/* "CX" mode */
	DVX_MLX5_ATOMIC_MODE_UP_TO_8B = 3,	/* extended atomics of 4 and 8 B */
	DVX_MLX5_ATOMIC_MODE_UP_TO_256B = 8,
};

/*
 * qpc.state as QUERY_QP reports it. Source: KL include/linux/mlx5/qp.h enum
 * mlx5_qp_state and mlx5_ifc.h MLX5_QPC_STATE_* (UCX dv/ib_mlx5_ifc.h agrees).
 * These are NOT the ibv_qp_state numbers (verbs: SQD 4, SQE 5): the PRM has SQER at 4,
 * ERR at 6, 5 = SQ drained and 7 = SQ draining (mlx5_ifc.h names 7 "SQD", qp.h names
 * 5 "SQD" and 7 "SQ_DRAINING"; the kernel maps both to IB SQD), 9 = suspended.
 */
enum dvx_mlx5_qp_state {
	DVX_MLX5_QP_STATE_RST = 0x0,
	DVX_MLX5_QP_STATE_INIT = 0x1,
	DVX_MLX5_QP_STATE_RTR = 0x2,
	DVX_MLX5_QP_STATE_RTS = 0x3,
	DVX_MLX5_QP_STATE_SQER = 0x4,
	DVX_MLX5_QP_STATE_SQD = 0x5,
	DVX_MLX5_QP_STATE_ERR = 0x6,
	DVX_MLX5_QP_STATE_SQ_DRAINING = 0x7,
	DVX_MLX5_QP_STATE_SUSPENDED = 0x9,
};

/* opt_param_mask bits of the modify commands (prm 1.8; KL include/linux/mlx5/qp.h) */
#define DVX_MLX5_QP_OPTPAR_ALT_ADDR_PATH (1u << 0)
#define DVX_MLX5_QP_OPTPAR_RRE (1u << 1)
#define DVX_MLX5_QP_OPTPAR_RAE (1u << 2)
#define DVX_MLX5_QP_OPTPAR_RWE (1u << 3)
#define DVX_MLX5_QP_OPTPAR_PKEY_INDEX (1u << 4)
#define DVX_MLX5_QP_OPTPAR_Q_KEY (1u << 5)
#define DVX_MLX5_QP_OPTPAR_RNR_TIMEOUT (1u << 6)	/* min_rnr_nak */
#define DVX_MLX5_QP_OPTPAR_PRIMARY_ADDR_PATH (1u << 7)
#define DVX_MLX5_QP_OPTPAR_SRA_MAX (1u << 8)
#define DVX_MLX5_QP_OPTPAR_RRA_MAX (1u << 9)
#define DVX_MLX5_QP_OPTPAR_PM_STATE (1u << 10)
#define DVX_MLX5_QP_OPTPAR_RETRY_COUNT (1u << 12)
#define DVX_MLX5_QP_OPTPAR_RNR_RETRY (1u << 13)
#define DVX_MLX5_QP_OPTPAR_ACK_TIMEOUT (1u << 14)
#define DVX_MLX5_QP_OPTPAR_LAG_TX_AFF (1u << 15)
#define DVX_MLX5_QP_OPTPAR_PRI_PORT (1u << 16)
#define DVX_MLX5_QP_OPTPAR_DSCP (1u << 17)		/* DOCA */
#define DVX_MLX5_QP_OPTPAR_SGID_INDEX (1u << 23)	/* DOCA */

/* ---- alignment rules the encoders enforce ---- */
/*
 * Queue offsets inside a umem: 64 B. The qpc/cqc page_offset fields count 64 B units
 * (KL drivers/infiniband/hw/mlx5/qp.c quantises the QP page offset to 64 B), UCX packs
 * rings into one umem at 64 B-aligned offsets so they stay expressible (prm 1.5), one
 * WQEBB and one CQE are 64 B. Doorbell records: 8 B (a QP or CQ DBR is 8 B, NVSHMEM packs
 * them at 8 B strides, prm 1.5).
 */
#define DVX_MLX5_UMEM_QUEUE_ALIGN 64u
#define DVX_MLX5_UMEM_DBR_ALIGN 8u

/**
 * struct dvx_mlx5_cq_cfg - what CREATE_CQ needs (prm 1.6).
 * @log_cq_size:	log2(number of CQEs), 0..31 (5-bit field; the device max is
 *			cap log_max_cq_sz)
 * @uar_page:		UAR page id (24 bits); needed even for a never-armed CQ
 * @eqn:		completion EQ from mlx5dv_devx_query_eqn, 0..255 (c_eqn [7:0])
 * @cq_umem_id:		umem holding the CQE ring
 * @cq_umem_offset:	ring offset inside that umem, multiple of 64
 * @dbr_umem_id:	umem holding the CQ doorbell record
 * @dbr_offset:		DBR offset inside @dbr_umem_id (-> cqc.dbr_addr), multiple of 8
 * @cqe_size:		CQE size in bytes: 64 (or 0, meaning 64) or 128
 * @oi:			overrun ignore (0/1); needs cap cq_oi
 * @cc:			collapsed CQ: every CQE lands in entry 0 (0/1)
 * @log_page_size:	cqc.log_page_size, 0..31 (log2(page) - 12; DOCA 0, NVSHMEM 4)
 * @ts_format:		cqc.cq_timestamp_format, 0..3 (0 free-running, §1.2)
 */
struct dvx_mlx5_cq_cfg {
	uint32_t log_cq_size;
	uint32_t uar_page;
	uint32_t eqn;
	uint32_t cq_umem_id;
	uint64_t cq_umem_offset;
	uint32_t dbr_umem_id;
	uint32_t cqe_size;
	uint64_t dbr_offset;
	uint8_t oi;
	uint8_t cc;
	uint8_t log_page_size;
	uint8_t ts_format;
	uint8_t rsvd[4];
};

/**
 * struct dvx_mlx5_qp_cfg - what CREATE_QP needs for an RC QP (prm 1.7).
 * @pdn:		protection domain number (24 bits)
 * @uar_page:		page id of the UAR whose register rings this QP (24 bits)
 * @user_index:		echoed in the CQE's srqn_uidx with cqe_version 1 (24 bits)
 * @cqn_snd:		send CQ (24 bits)
 * @cqn_rcv:		receive CQ (24 bits); may equal @cqn_snd; not needed by a
 *			zero-length RQ (written as given in every case)
 * @srqn:		shared RQ number for @rq_type SRQ, else 0 (24 bits)
 * @wq_umem_id:		umem holding the work queue(s)
 * @dbr_umem_id:	umem holding the QP's 8-byte doorbell record
 * @wq_umem_offset:	start of the WQ inside @wq_umem_id, multiple of 64. With a
 *			regular RQ the RQ comes first and the SQ follows it
 *			(see dvx_mlx5_qp_wq_layout())
 * @dbr_offset:		DBR offset inside @dbr_umem_id (-> qpc.dbr_addr), multiple of 8
 * @log_sq_size:	log2(SQ WQEBBs), 0..15 (4-bit field, prm 1.7)
 * @rq_type:		enum dvx_mlx5_rq_type
 * @log_rq_size:	log2(RQ WQEs), 0..15; regular RQ only, else 0
 * @log_rq_stride:	RQ WQE stride = 16 << n bytes, 0..7; regular RQ only, else 0.
 *			A regular RQ must be at least 64 B (stride * count >= 64) so the
 *			SQ behind it starts on a WQEBB boundary
 * @log_msg_max:	log2(max message), 0..31 (all sources use 30)
 * @ts_format:		qpc.ts_format, 0..3 (prm 1.2)
 * @send_dbr_mode:	0 = doorbell record in use, 1 = NO_DBR_EXT (0..3 fit)
 * @cd_master:		may post WAIT / SEND_EN / RECV_EN (core-direct), 0/1
 * @cd_slave_send:	SQ gated by SEND_EN, 0/1
 * @cd_slave_receive:	RQ gated by RECV_EN, 0/1
 *
 * The encoder always writes st = RC, pm_state = MIGRATED, wq_umem_valid = 1 and
 * qpc.dbr_umem_valid = 1 (the kernel forces both valid bits anyway, prm 1.1).
 */
struct dvx_mlx5_qp_cfg {
	uint32_t pdn;
	uint32_t uar_page;
	uint32_t user_index;
	uint32_t cqn_snd;
	uint32_t cqn_rcv;
	uint32_t srqn;
	uint32_t wq_umem_id;
	uint32_t dbr_umem_id;
	uint64_t wq_umem_offset;
	uint64_t dbr_offset;
	uint8_t log_sq_size;
	uint8_t rq_type;
	uint8_t log_rq_size;
	uint8_t log_rq_stride;
	uint8_t log_msg_max;
	uint8_t ts_format;
	uint8_t send_dbr_mode;
	uint8_t cd_master;
	uint8_t cd_slave_send;
	uint8_t cd_slave_receive;
	uint8_t rsvd[6];
};

/**
 * struct dvx_mlx5_qp_wq_layout - where the RQ and the SQ sit in the WQ umem.
 * @rq_offset:	byte offset of the RQ inside the umem (= wq_umem_offset)
 * @rq_bytes:	RQ size (0 without a regular RQ)
 * @sq_offset:	byte offset of the SQ inside the umem (= wq_umem_offset + rq_bytes)
 * @sq_bytes:	SQ size (64 << log_sq_size)
 * @end:	first byte after the SQ: the umem must be at least this long
 */
struct dvx_mlx5_qp_wq_layout {
	uint64_t rq_offset;
	uint64_t rq_bytes;
	uint64_t sq_offset;
	uint64_t sq_bytes;
	uint64_t end;
};

/**
 * struct dvx_mlx5_path - the primary address path (ads) of a QP (prm 1.8 table).
 * @roce:		0 = InfiniBand (LID routed), 1 = RoCE v2 (GID + MAC)
 * @vhca_port_num:	port, 1-based (8 bits)
 * @pkey_index:		P_Key table index (16 bits; 0 on RoCE)
 * @rlid:		IB: destination LID (16 bits); RoCE: must be 0
 * @sl:			IB: service level (4 bits); RoCE: must be 0 (use @eth_prio)
 * @grh:		IB: 1 = send a GRH (then the GRH fields are written); RoCE: must be 0
 *			(RoCE always carries the GRH fields; the grh bit stays 0, prm 1.8)
 * @mlid:		IB: source path bits (7 bits); RoCE: must be 0
 * @src_addr_index:	local GID index (8 bits): RoCE, or IB with @grh
 * @hop_limit:		GRH hop limit (8 bits): RoCE (255 usual), or IB with @grh
 * @tclass:		GRH traffic class (8 bits): RoCE, or IB with @grh
 * @flow_label:		GRH flow label (20 bits): RoCE, or IB with @grh
 * @rgid:		peer GID, network order: RoCE, or IB with @grh
 * @dscp:		RoCE: DSCP (6 bits, conventionally tclass >> 2); IB: must be 0
 * @eth_prio:		RoCE: Ethernet priority / PCP (3 bits); IB: must be 0
 * @udp_sport:		RoCE: UDP source port (>= 0xC000 by convention, or within the
 *			roce cap range); IB: must be 0
 * @rmac:		RoCE: peer MAC; IB: must be all zero
 * @ack_timeout:	4.096 us * 2^n (5 bits); mostly set at RTR2RTS
 * @stat_rate:		static rate (4 bits), 0 = port rate
 * @fl:			force loopback (0/1): the packet never leaves the port
 *
 * GRH-only fields given while they are not written (IB without @grh) must be 0 too:
 * the encoders refuse values they would silently drop.
 */
struct dvx_mlx5_path {
	uint8_t roce;
	uint8_t vhca_port_num;
	uint16_t pkey_index;
	uint16_t rlid;
	uint8_t sl;
	uint8_t grh;
	uint8_t mlid;
	uint8_t src_addr_index;
	uint8_t hop_limit;
	uint8_t tclass;
	uint32_t flow_label;
	uint8_t rgid[16];
	uint8_t dscp;
	uint8_t eth_prio;
	uint16_t udp_sport;
	uint8_t rmac[6];
	uint8_t ack_timeout;
	uint8_t stat_rate;
	uint8_t fl;
	uint8_t rsvd[7];
};

/**
 * struct dvx_mlx5_rst2init_cfg - RST2INIT (prm 1.8).
 * @rre:		remote read enable (0/1)
 * @rwe:		remote write enable (0/1)
 * @rae:		remote atomic enable (0/1)
 * @atomic_mode:	enum dvx_mlx5_atomic_mode, 0..15 (4-bit field)
 * @vhca_port_num:	port (8 bits, into the ads)
 * @pkey_index:		P_Key index (16 bits, into the ads)
 *
 * pm_state is always written as MIGRATED (3), as every source does (prm 1.8).
 */
struct dvx_mlx5_rst2init_cfg {
	uint8_t rre;
	uint8_t rwe;
	uint8_t rae;
	uint8_t atomic_mode;
	uint8_t vhca_port_num;
	uint8_t rsvd;
	uint16_t pkey_index;
};

/**
 * struct dvx_mlx5_init2rtr_cfg - INIT2RTR (prm 1.8).
 * @remote_qpn:		peer QP number (24 bits)
 * @next_rcv_psn:	first PSN expected from the peer (24 bits; = its next_send_psn)
 * @mtu:		path MTU, enum dvx_mlx5_mtu (1..5)
 * @log_msg_max:	log2(max message), 0..31
 * @min_rnr_nak:	RNR NAK timer code, 0..31 (sources use 12)
 * @log_rra_max:	log2(responder RDMA-read/atomic depth), 0..7
 * @resend_access:	1: also write @rre/@rwe/@rae/@atomic_mode and set
 *			opt_param_mask = RRE | RAE | RWE (what UCX does); 0 (default,
 *			NVSHMEM): leave them and the mask 0
 * @rre:		with @resend_access only, 0/1
 * @rwe:		with @resend_access only, 0/1
 * @rae:		with @resend_access only, 0/1
 * @atomic_mode:	with @resend_access only, 0..15
 * @path:		the primary address path
 */
struct dvx_mlx5_init2rtr_cfg {
	uint32_t remote_qpn;
	uint32_t next_rcv_psn;
	uint8_t mtu;
	uint8_t log_msg_max;
	uint8_t min_rnr_nak;
	uint8_t log_rra_max;
	uint8_t resend_access;
	uint8_t rre;
	uint8_t rwe;
	uint8_t rae;
	uint8_t atomic_mode;
	uint8_t rsvd[7];
	struct dvx_mlx5_path path;
};

/**
 * struct dvx_mlx5_rtr2rts_cfg - RTR2RTS (prm 1.8).
 * @next_send_psn:	first PSN this QP sends (24 bits)
 * @retry_count:	transport retries, 0..7 (sources: 7)
 * @rnr_retry:		RNR retries, 0..7 (7 = infinite)
 * @ack_timeout:	local ACK timeout 4.096 us * 2^n, 0..31 (into the ads)
 * @log_sra_max:	log2(initiator RDMA-read/atomic depth), 0..7
 * @log_ack_req_freq:	0..15 (0 = request an ACK on every packet)
 */
struct dvx_mlx5_rtr2rts_cfg {
	uint32_t next_send_psn;
	uint8_t retry_count;
	uint8_t rnr_retry;
	uint8_t ack_timeout;
	uint8_t log_sra_max;
	uint8_t log_ack_req_freq;
	uint8_t rsvd[3];
};

/**
 * struct dvx_mlx5_qp_query - the part of query_qp_out's qpc dvx looks at.
 * @state:		enum dvx_mlx5_qp_state
 * @st:			service type (0 = RC)
 * @pm_state:		path migration state
 * @mtu:		IB MTU enum
 * @log_sq_size:	log2(SQ WQEBBs)
 * @rq_type:		enum dvx_mlx5_rq_type
 * @retry_count:	transport retries
 * @rnr_retry:		RNR retries
 * @ack_timeout:	from the primary path
 * @vhca_port_num:	from the primary path
 * @cd_master:		core-direct master bit
 * @hw_sq_wqebb_counter: WQEBBs the hardware has consumed (16 bits)
 * @sw_sq_wqebb_counter: WQEBBs software has posted, as the device saw the doorbell
 * @pdn:		protection domain
 * @uar_page:		UAR page
 * @user_index:		user index
 * @remote_qpn:		connected peer
 * @next_send_psn:	next PSN to send
 * @next_rcv_psn:	next PSN expected
 * @cqn_snd:		send CQ
 * @cqn_rcv:		receive CQ
 * @opt_param_mask:	query_qp_out.opt_param_mask
 */
struct dvx_mlx5_qp_query {
	uint8_t state;
	uint8_t st;
	uint8_t pm_state;
	uint8_t mtu;
	uint8_t log_sq_size;
	uint8_t rq_type;
	uint8_t retry_count;
	uint8_t rnr_retry;
	uint8_t ack_timeout;
	uint8_t vhca_port_num;
	uint8_t cd_master;
	uint8_t rsvd;
	uint16_t hw_sq_wqebb_counter;
	uint16_t sw_sq_wqebb_counter;
	uint32_t pdn;
	uint32_t uar_page;
	uint32_t user_index;
	uint32_t remote_qpn;
	uint32_t next_send_psn;
	uint32_t next_rcv_psn;
	uint32_t cqn_snd;
	uint32_t cqn_rcv;
	uint32_t opt_param_mask;
};

/**
 * struct dvx_mlx5_cq_query - the part of query_cq_out's cqc dvx looks at.
 * @status:		cqc.status (0 = OK, non-zero after an overrun or a write error)
 * @cqe_sz:		0 = 64 B, 1 = 128 B
 * @cc:			collapsed
 * @oi:			overrun ignore
 * @st:			arm state
 * @log_cq_size:	log2(#CQE)
 * @c_eqn:		completion EQ
 * @uar_page:		UAR page
 * @consumer_counter:	consumer index as the device last saw it (24 bits)
 * @producer_counter:	CQEs written (24 bits)
 * @last_notified_index: index of the last event (24 bits)
 * @last_solicit_index:	index of the last solicited event (24 bits)
 */
struct dvx_mlx5_cq_query {
	uint8_t status;
	uint8_t cqe_sz;
	uint8_t cc;
	uint8_t oi;
	uint8_t st;
	uint8_t log_cq_size;
	uint8_t c_eqn;
	uint8_t rsvd;
	uint32_t uar_page;
	uint32_t consumer_counter;
	uint32_t producer_counter;
	uint32_t last_notified_index;
	uint32_t last_solicit_index;
};

/* ---- the generic parts ---- */

/**
 * dvx_mlx5_cmd_name() - the PRM name of a command opcode (prm 1.1 table).
 * @opcode:	enum dvx_mlx5_cmd value (or any other)
 *
 * Return: a static string such as "CREATE_QP", "UNKNOWN" for an opcode dvx never sends.
 */
const char *dvx_mlx5_cmd_name(unsigned opcode);

/**
 * dvx_mlx5_qp_state_name() - a QUERY_QP state's name ("RTS"); see enum dvx_mlx5_qp_state.
 * Return: a static string, "UNKNOWN" for values the PRM does not name.
 */
const char *dvx_mlx5_qp_state_name(unsigned state);

/**
 * enum dvx_mlx5_cmd_status - the command delivery statuses of an output mailbox's
 * byte 0 (prm 1.1).
 */
enum dvx_mlx5_cmd_status {
	DVX_MLX5_CMD_STAT_OK = 0x00,
	DVX_MLX5_CMD_STAT_INT_ERR = 0x01,
	DVX_MLX5_CMD_STAT_BAD_OP_ERR = 0x02,
	DVX_MLX5_CMD_STAT_BAD_PARAM_ERR = 0x03,
	DVX_MLX5_CMD_STAT_BAD_SYS_STATE_ERR = 0x04,
	DVX_MLX5_CMD_STAT_BAD_RES_ERR = 0x05,
	DVX_MLX5_CMD_STAT_RES_BUSY = 0x06,
	DVX_MLX5_CMD_STAT_NOT_READY = 0x07,
	DVX_MLX5_CMD_STAT_LIM_ERR = 0x08,
	DVX_MLX5_CMD_STAT_BAD_RES_STATE_ERR = 0x09,
	DVX_MLX5_CMD_STAT_IX_ERR = 0x0a,
	DVX_MLX5_CMD_STAT_NO_RES_ERR = 0x0f,
	DVX_MLX5_CMD_STAT_BAD_QP_STATE_ERR = 0x10,
	DVX_MLX5_CMD_STAT_BAD_PKT_ERR = 0x30,
	DVX_MLX5_CMD_STAT_BAD_SIZE_OUTS_CQES_ERR = 0x40,
	DVX_MLX5_CMD_STAT_BAD_INP_LEN_ERR = 0x50,
	DVX_MLX5_CMD_STAT_BAD_OUTP_LEN_ERR = 0x51,
};

/**
 * dvx_mlx5_cmd_status_errno() - the errno dvx reports for a command status.
 * @status:	output mailbox byte 0 (enum dvx_mlx5_cmd_status)
 *
 * The one place a status becomes an errno. The choices are those the Linux mlx5 core
 * driver makes for the same status (prm 1.1), so an application sees what the kernel
 * would report: BAD_OP, BAD_PARAM, BAD_RES, BAD_RES_STATE, IX, BAD_QP_STATE, BAD_PKT,
 * BAD_SIZE_OUTS_CQES -EINVAL; RES_BUSY -EBUSY; LIM -ENOMEM; NOT_READY, NO_RES
 * -EAGAIN; INT_ERR, BAD_SYS_STATE, BAD_INP_LEN, BAD_OUTP_LEN and unknown values -EIO.
 *
 * Context: any; pure. Return: 0 for OK, else a negative errno.
 */
int dvx_mlx5_cmd_status_errno(uint8_t status);

/**
 * dvx_mlx5_cmd_status_name() - the PRM name of a command status ("BAD_PARAM").
 * @status:	output mailbox byte 0
 *
 * Context: any; pure. Return: a static string, "UNKNOWN" for values the PRM does not
 * name.
 */
const char *dvx_mlx5_cmd_status_name(uint8_t status);

/**
 * dvx_mlx5_cmd_out_status() - read the status and syndrome of any output mailbox.
 * @out:	output mailbox (at least 8 bytes): status byte 0, syndrome bytes 4-7
 *		(prm 1.1)
 * @status:	receives the status byte; may be NULL
 * @syndrome:	receives the syndrome; may be NULL
 *
 * Return: 0 for status 0, else the status's negative errno (dvx_mlx5_cmd_status_errno()).
 */
int dvx_mlx5_cmd_out_status(const void *out, uint8_t *status, uint32_t *syndrome);

/* ---- CQ ---- */

/**
 * dvx_mlx5_create_cq_in() - encode create_cq_in (opcode 0x400, prm 1.6).
 * @in:		DVX_MLX5_CREATE_CQ_IN_BYTES mailbox; zeroed then filled on success
 * @attr:	the CQ; every value is checked against its field first
 *
 * Writes cqc.cqe_sz, cc, oi, dbr_umem_valid = 1, dbr_umem_id, cq_timestamp_format,
 * log_cq_size, uar_page, c_eqn, log_page_size, dbr_addr, cq_umem_offset, cq_umem_id and
 * cq_umem_valid = 1.
 *
 * Return: 0, or -EINVAL (NULL argument, a value wider than its field, cqe_size not
 * 64/128, bool not 0/1, cq_umem_offset not a multiple of 64, dbr_offset not a multiple
 * of 8) with @in untouched.
 */
int dvx_mlx5_create_cq_in(void *in, const struct dvx_mlx5_cq_cfg *attr);

/**
 * dvx_mlx5_create_cq_out() - decode create_cq_out (prm 1.6).
 * @out:	output mailbox
 * @outlen:	its length, at least DVX_MLX5_CREATE_CQ_OUT_BYTES
 * @cqn:	receives cqn (dw@8 [23:0]) on success
 *
 * Return: 0, -EINVAL (NULL, short @outlen) or the status's errno (@cqn untouched).
 */
int dvx_mlx5_create_cq_out(const void *out, size_t outlen, uint32_t *cqn);

/**
 * dvx_mlx5_destroy_cq_in() - encode destroy_cq_in (opcode 0x401): cqn dw@8 [23:0].
 * @in:		DVX_MLX5_DESTROY_CQ_IN_BYTES mailbox
 * @cqn:	the CQ (24 bits)
 * Return: 0 or -EINVAL (@in untouched).
 */
int dvx_mlx5_destroy_cq_in(void *in, uint32_t cqn);

/**
 * dvx_mlx5_query_cq_in() - encode query_cq_in (opcode 0x402): cqn dw@8 [23:0].
 * @in:		DVX_MLX5_QUERY_CQ_IN_BYTES mailbox
 * @cqn:	the CQ (24 bits)
 * Return: 0 or -EINVAL (@in untouched).
 */
int dvx_mlx5_query_cq_in(void *in, uint32_t cqn);

/**
 * dvx_mlx5_query_cq_out() - decode query_cq_out: the cqc at byte 16.
 * @out:	output mailbox
 * @outlen:	at least DVX_MLX5_QUERY_CQ_OUT_BYTES
 * @q:		filled on success
 * Return: 0, -EINVAL or the status's errno (@q untouched on error).
 */
int dvx_mlx5_query_cq_out(const void *out, size_t outlen, struct dvx_mlx5_cq_query *q);

/* ---- QP ---- */

/**
 * dvx_mlx5_qp_wq_layout() - where the RQ and SQ of @attr sit in its WQ umem.
 * @attr:	a QP attribute set (validated like dvx_mlx5_create_qp_in() does)
 * @l:		filled on success
 *
 * The RQ comes first, at wq_umem_offset, and the SQ follows at wq_umem_offset + RQ
 * bytes: that is how mlx5 hardware reads one WQ buffer given a single wq_umem_offset
 * (rdma-core providers/mlx5/verbs.c mlx5_calc_wq_size: rq.offset = 0, sq.offset = RQ
 * size; the kernel's create_user_qp does the same; rdma-core dr_send.c rounds the RQ up
 * to at least one 64 B WQEBB). Without a regular RQ the SQ starts at wq_umem_offset.
 *
 * Return: 0 or -EINVAL.
 */
int dvx_mlx5_qp_wq_layout(const struct dvx_mlx5_qp_cfg *attr, struct dvx_mlx5_qp_wq_layout *l);

/**
 * dvx_mlx5_create_qp_in() - encode create_qp_in (opcode 0x500) for an RC QP (prm 1.7).
 * @in:		DVX_MLX5_CREATE_QP_IN_BYTES mailbox; zeroed then filled on success
 * @attr:	the QP
 *
 * Writes st = RC, pm_state = MIGRATED, pd, log_msg_max, log_rq_size, log_rq_stride,
 * log_sq_size, ts_format, uar_page, send_dbr_mode, user_index,
 * cqn_snd, cd_* bits (dw@168 bits 2..0 only, never the 64-bit word around them, prm 0),
 * cqn_rcv, dbr_addr, rq_type, srqn, dbr_umem_valid = 1, dbr_umem_id, wq_umem_offset,
 * wq_umem_id and wq_umem_valid = 1. qpc_ext and opt_param_mask stay 0.
 *
 * Return: 0, or -EINVAL (see struct dvx_mlx5_qp_cfg for each limit) with @in untouched.
 */
int dvx_mlx5_create_qp_in(void *in, const struct dvx_mlx5_qp_cfg *attr);

/**
 * dvx_mlx5_create_qp_out() - decode create_qp_out: qpn dw@8 [23:0] (prm 1.7).
 * @out:	output mailbox
 * @outlen:	at least DVX_MLX5_CREATE_QP_OUT_BYTES
 * @qpn:	receives the QP number on success
 * Return: 0, -EINVAL or the status's errno (@qpn untouched).
 */
int dvx_mlx5_create_qp_out(const void *out, size_t outlen, uint32_t *qpn);

/**
 * dvx_mlx5_destroy_qp_in() - encode destroy_qp_in (opcode 0x501): qpn dw@8 [23:0].
 * @in:		DVX_MLX5_DESTROY_QP_IN_BYTES mailbox
 * @qpn:	the QP (24 bits)
 * Return: 0 or -EINVAL (@in untouched).
 */
int dvx_mlx5_destroy_qp_in(void *in, uint32_t qpn);

/**
 * dvx_mlx5_rst2init_qp_in() - encode rst2init_qp_in (opcode 0x502, prm 1.8).
 * @in:		DVX_MLX5_MODIFY_QP_IN_BYTES mailbox
 * @qpn:	the QP (24 bits)
 * @attr:	access bits, atomic mode, port, P_Key index
 *
 * Writes qpn, qpc.pm_state = MIGRATED, rre, rwe, rae, atomic_mode, ads.vhca_port_num and
 * ads.pkey_index; opt_param_mask 0.
 *
 * Return: 0 or -EINVAL (@in untouched).
 */
int dvx_mlx5_rst2init_qp_in(void *in, uint32_t qpn, const struct dvx_mlx5_rst2init_cfg *attr);

/**
 * dvx_mlx5_init2rtr_qp_in() - encode init2rtr_qp_in (opcode 0x503, prm 1.8).
 * @in:		DVX_MLX5_MODIFY_QP_IN_BYTES mailbox
 * @qpn:	the QP (24 bits)
 * @attr:	connection and path
 *
 * Writes qpn, mtu, log_msg_max, remote_qpn, min_rnr_nak, next_rcv_psn, log_rra_max, the
 * primary path (struct dvx_mlx5_path), and with @attr->resend_access rre/rwe/rae/
 * atomic_mode plus opt_param_mask = RRE | RAE | RWE.
 *
 * Return: 0 or -EINVAL (@in untouched).
 */
int dvx_mlx5_init2rtr_qp_in(void *in, uint32_t qpn, const struct dvx_mlx5_init2rtr_cfg *attr);

/**
 * dvx_mlx5_init2rtr_loopback_qp_in() - INIT2RTR that connects a QP to itself.
 * @in:		DVX_MLX5_MODIFY_QP_IN_BYTES mailbox
 * @qpn:	the QP; also written as remote_qpn
 * @vhca_port_num: port (8 bits)
 * @mtu:	enum dvx_mlx5_mtu
 *
 * The DPDK self-loop recipe (prm 1.8 last bullet, 7): ads.fl = 1, vhca_port_num, mtu,
 * remote_qpn = own qpn, no addresses. Gate on roce cap fl_rc_qp_when_roce_enabled/
 * _disabled. Everything else is 0 (next_rcv_psn 0, log_rra_max 0 = one outstanding
 * read/atomic).
 *
 * Return: 0 or -EINVAL (@in untouched).
 */
int dvx_mlx5_init2rtr_loopback_qp_in(void *in, uint32_t qpn, uint8_t vhca_port_num, uint8_t mtu);

/**
 * dvx_mlx5_rtr2rts_qp_in() - encode rtr2rts_qp_in (opcode 0x504, prm 1.8).
 * @in:		DVX_MLX5_MODIFY_QP_IN_BYTES mailbox
 * @qpn:	the QP (24 bits)
 * @attr:	PSN, retries, timeout, read/atomic depth
 *
 * Writes qpn, next_send_psn, retry_count, rnr_retry, ads.ack_timeout, log_sra_max and
 * log_ack_req_freq; opt_param_mask 0.
 *
 * Return: 0 or -EINVAL (@in untouched).
 */
int dvx_mlx5_rtr2rts_qp_in(void *in, uint32_t qpn, const struct dvx_mlx5_rtr2rts_cfg *attr);

/**
 * dvx_mlx5_qp_2err_in() - encode qp_2err_in (opcode 0x507): qpn dw@8 [23:0].
 * @in:		DVX_MLX5_QP_2ERR_IN_BYTES mailbox
 * @qpn:	the QP (24 bits)
 * Return: 0 or -EINVAL (@in untouched).
 */
int dvx_mlx5_qp_2err_in(void *in, uint32_t qpn);

/**
 * dvx_mlx5_qp_2rst_in() - encode qp_2rst_in (opcode 0x50a): qpn dw@8 [23:0].
 * @in:		DVX_MLX5_QP_2RST_IN_BYTES mailbox
 * @qpn:	the QP (24 bits)
 * Return: 0 or -EINVAL (@in untouched).
 */
int dvx_mlx5_qp_2rst_in(void *in, uint32_t qpn);

/**
 * dvx_mlx5_query_qp_in() - encode query_qp_in (opcode 0x50b): qpn dw@8 [23:0].
 * @in:		DVX_MLX5_QUERY_QP_IN_BYTES mailbox
 * @qpn:	the QP (24 bits)
 * Return: 0 or -EINVAL (@in untouched).
 */
int dvx_mlx5_query_qp_in(void *in, uint32_t qpn);

/**
 * dvx_mlx5_query_qp_out() - decode query_qp_out: opt_param_mask at 16, qpc at 24.
 * @out:	output mailbox
 * @outlen:	at least DVX_MLX5_QUERY_QP_OUT_BYTES
 * @q:		filled on success (state, SQ WQEBB counters dw@204, PSNs, CQs, ...)
 * Return: 0, -EINVAL or the status's errno (@q untouched on error).
 */
int dvx_mlx5_query_qp_out(const void *out, size_t outlen, struct dvx_mlx5_qp_query *q);

DVX_END_DECLS

#endif /* DVX_MLX5_CMD_H */
