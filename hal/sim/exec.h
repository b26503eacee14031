/* SPDX-License-Identifier: MIT */
/*
 * hal/sim/exec.h - constants of the sim's data path (not installed).
 *
 * The PRM values below are restated from docs/prm.md (sections 2, 4, 6, 7) on their
 * own: hal/sim never includes dvx/mlx5/ headers, so the builders there and this
 * model check each other.
 *
 * Vendor syndromes: real NICs put a firmware-specific code in an error CQE's
 * vendor_err_synd byte; the sim puts the reason it raised the error there
 * (enum sim_exec_vendor), so a test or a log can tell which check failed.
 */
#ifndef DVX_HAL_SIM_EXEC_H
#define DVX_HAL_SIM_EXEC_H

#include <stdint.h>

/* ctrl segment opcodes (prm 2.2) */
enum sim_wqe_opcode {
	SIM_OP_NOP = 0x00,
	SIM_OP_SEND_INVAL = 0x01,
	SIM_OP_RDMA_WRITE = 0x08,
	SIM_OP_RDMA_WRITE_IMM = 0x09,
	SIM_OP_SEND = 0x0a,
	SIM_OP_SEND_IMM = 0x0b,
	SIM_OP_WAIT = 0x0f,
	SIM_OP_RDMA_READ = 0x10,
	SIM_OP_ATOMIC_CS = 0x11,
	SIM_OP_ATOMIC_FA = 0x12,
	SIM_OP_ATOMIC_MASKED_CS = 0x14,
	SIM_OP_ATOMIC_MASKED_FA = 0x15,
	SIM_OP_RECV_EN = 0x16,
	SIM_OP_SEND_EN = 0x17,
};

/* extended atomic opmods (prm 2.4): 0x08 | (log2(size) - 2) */
#define SIM_OPMOD_EXT_ATOMIC_4B 0x08u
#define SIM_OPMOD_EXT_ATOMIC_8B 0x09u
/* WAIT opmod 0: wait on a CQ's producer index (prm 2.7) */
#define SIM_OPMOD_WAIT_CQ 0x00u

/* fm_ce_se (prm 2.2): completion mode [3:2], solicited [1] */
#define SIM_CTRL_CE(fm_ce_se) (((fm_ce_se) >> 2) & 3u)
#define SIM_CTRL_CE_ALWAYS 2u		/* CQ_UPDATE (0x08) */
#define SIM_CTRL_CE_ALWAYS_EQE 3u
#define SIM_CTRL_SOLICITED 0x02u

#define SIM_INLINE_SEG 0x80000000u	/* data segment byte_count[31] (prm 2.6) */
#define SIM_INVALID_LKEY 0x100u		/* closes a receive scatter list (prm 2.5) */

/* CQE opcodes, op_own[7:4] (prm 4.1) */
enum sim_cqe_opcode {
	SIM_CQE_REQ = 0,
	SIM_CQE_RESP_WR_IMM = 1,
	SIM_CQE_RESP_SEND = 2,
	SIM_CQE_RESP_SEND_IMM = 3,
	SIM_CQE_REQ_ERR = 13,
	SIM_CQE_RESP_ERR = 14,
};

/* error CQE syndromes (prm 4.5) */
enum sim_cqe_syndrome {
	SIM_SYND_LOCAL_LENGTH_ERR = 0x01,
	SIM_SYND_LOCAL_QP_OP_ERR = 0x02,
	SIM_SYND_LOCAL_PROT_ERR = 0x04,
	SIM_SYND_WR_FLUSH_ERR = 0x05,
	SIM_SYND_MW_BIND_ERR = 0x06,
	SIM_SYND_BAD_RESP_ERR = 0x10,
	SIM_SYND_LOCAL_ACCESS_ERR = 0x11,
	SIM_SYND_REMOTE_INVAL_REQ_ERR = 0x12,
	SIM_SYND_REMOTE_ACCESS_ERR = 0x13,
	SIM_SYND_REMOTE_OP_ERR = 0x14,
	SIM_SYND_TRANSPORT_RETRY_EXC_ERR = 0x15,
	SIM_SYND_RNR_RETRY_EXC_ERR = 0x16,
	SIM_SYND_REMOTE_ABORTED_ERR = 0x22,
};

/* CQE byte offsets (prm 4.1, 4.5) */
#define SIM_CQE_SLID 22
#define SIM_CQE_FLAGS_RQPN 24
#define SIM_CQE_SRQN_UIDX 32
#define SIM_CQE_IMM 36
#define SIM_CQE_BYTE_CNT 44
#define SIM_CQE_VENDOR_SYND 54
#define SIM_CQE_SYNDROME 55
#define SIM_CQE_SOP_QPN 56
#define SIM_CQE_WQE_COUNTER 60
#define SIM_CQE_OP_OWN 63

/** enum sim_exec_vendor - why the sim raised an error CQE (its vendor_err_synd). */
enum sim_exec_vendor {
	SIM_VS_NONE = 0x00,
	/* malformed or unsupported WQE: LOCAL_QP_OP_ERR */
	SIM_VS_OPCODE = 0x01,		/* opcode/opmod not modelled or not enabled (caps) */
	SIM_VS_DS = 0x02,		/* ds 0, shorter/longer than the layout, past the doorbell */
	SIM_VS_WQE_INDEX = 0x03,	/* ctrl wqe_index differs from the WQE's position */
	SIM_VS_INLINE = 0x04,		/* inline segment misplaced or longer than ds */
	SIM_VS_SEG = 0x05,		/* byte_count[31] set on a later data segment */
	SIM_VS_NOT_CD = 0x06,		/* WAIT/SEND_EN/RECV_EN without cd (NIC, master or slave) */
	SIM_VS_NO_OBJ = 0x07,		/* WAIT's CQ or SEND_EN/RECV_EN's QP does not exist */
	/* local memory: LOCAL_PROT_ERR / LOCAL_LENGTH_ERR */
	SIM_VS_LKEY = 0x10,		/* no MR with this lkey on the NIC */
	SIM_VS_LKEY_PD = 0x11,		/* MR of another PD */
	SIM_VS_LKEY_BOUNDS = 0x12,	/* [addr, addr+len) not inside the MR */
	SIM_VS_LKEY_ACCESS = 0x13,	/* written locally without LOCAL_WRITE */
	SIM_VS_MSG_LEN = 0x14,		/* message longer than 2^log_max_msg */
	SIM_VS_RESULT_LEN = 0x15,	/* atomic result segment shorter than the operand */
	SIM_VS_DMA_LOCAL = 0x16,	/* a DMA callback copy of the requester's memory failed */
	/* responder: REMOTE_ACCESS_ERR / REMOTE_INVAL_REQ_ERR / REMOTE_OP_ERR */
	SIM_VS_RKEY = 0x20,		/* no MR with this rkey on the responder's NIC */
	SIM_VS_RKEY_PD = 0x21,		/* MR of another PD than the responder QP's */
	SIM_VS_RKEY_BOUNDS = 0x22,	/* remote range not inside the MR */
	SIM_VS_RKEY_ACCESS = 0x23,	/* MR lacks REMOTE_WRITE/READ/ATOMIC */
	SIM_VS_QP_ACCESS = 0x24,	/* responder QP lacks rwe/rre/rae */
	SIM_VS_ATOMIC_MODE = 0x25,	/* extended atomic, responder atomic_mode < 3 */
	SIM_VS_ALIGN = 0x26,		/* atomic target not naturally aligned */
	SIM_VS_NO_RQ = 0x27,		/* SEND/WRITE_IMM to a QP without a regular RQ */
	SIM_VS_RECV_LEN = 0x28,		/* message longer than the receive WQE */
	SIM_VS_RECV_PROT = 0x29,	/* receive WQE scatter entry fails its lkey checks */
	SIM_VS_DMA_REMOTE = 0x2a,	/* a DMA callback copy of the responder's memory failed */
	/* transport */
	SIM_VS_RNR = 0x30,		/* RNR retries exhausted */
	SIM_VS_RETRY = 0x31,		/* transport retries exhausted (drops, link, peer state) */
	/* flush */
	SIM_VS_FLUSH = 0x40,		/* WR_FLUSH_ERR after the QP entered ERR */
};

/*
 * Back-off times, scaled down from the IB timers so that tests and runs stay fast:
 * an RNR NAK waits the IB min_rnr_nak table value read as nanoseconds instead of
 * microseconds (min_rnr_nak 12 = 640 us in IB, 640 ns here); a lost request is
 * retried after SIM_EXEC_RETRY_NS.
 */
#define SIM_EXEC_RETRY_NS 4096u

#endif /* DVX_HAL_SIM_EXEC_H */
