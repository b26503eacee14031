/* SPDX-License-Identifier: MIT */
/*
 * dvx/mlx5/caps.h - QUERY_HCA_CAP: the command and the capability pages dvx reads.
 *
 * query_hca_cap_in is 16 bytes: opcode 0x100, op_mod = (cap_type << 1) | current.
 * The output is 4112 bytes with the capability page at byte 16 (prm 1.2). Field
 * positions below are relative to the page, the structure they belong to, as every
 * field macro of dvx/mlx5 is (dvx/mlx5/cmd.h); the page sits at
 * DVX_MLX5_QUERY_HCA_CAP_OUT_CAPABILITY of the output mailbox. Written "dw@B [hi:lo]"
 * as in docs/prm.md's tables.
 */
#ifndef DVX_MLX5_CAPS_H
#define DVX_MLX5_CAPS_H

#include <dvx/mlx5/ifc.h>

DVX_BEGIN_DECLS

#define DVX_MLX5_QUERY_HCA_CAP_IN_BYTES 16u
#define DVX_MLX5_QUERY_HCA_CAP_OUT_BYTES 4112u
#define DVX_MLX5_QUERY_HCA_CAP_OUT_CAPABILITY 16u	/* the page: bytes 16-4111 */

/* cap_type values (op_mod = cap_type << 1 | current) */
enum dvx_mlx5_cap_type {
	DVX_MLX5_CAP_TYPE_GENERAL = 0x0,
	DVX_MLX5_CAP_TYPE_ODP = 0x2,
	DVX_MLX5_CAP_TYPE_ATOMIC = 0x3,
	DVX_MLX5_CAP_TYPE_ROCE = 0x4,
	DVX_MLX5_CAP_TYPE_GENERAL_2 = 0x20,
};

/* general device caps (cmd_hca_cap), page-relative */
#define DVX_MLX5_CAP_HCA_CAP_2 4, 31, 31
#define DVX_MLX5_CAP_LOG_MAX_QP_SZ 16, 23, 16
#define DVX_MLX5_CAP_LOG_MAX_QP 16, 4, 0
#define DVX_MLX5_CAP_LOG_MAX_CQ_SZ 24, 23, 16
#define DVX_MLX5_CAP_RELAXED_ORDERING_WRITE 28, 23, 23
/* reads may be relaxed when PCIe relaxed ordering is enabled on the function (the
 * kernel's name since 2024; older headers called this bit relaxed_ordering_read) */
#define DVX_MLX5_CAP_RELAXED_ORDERING_READ_PCI_ENABLED 28, 22, 22
#define DVX_MLX5_CAP_LOG_MAX_RA_REQ_QP 40, 21, 16
#define DVX_MLX5_CAP_LOG_MAX_RA_RES_QP 40, 5, 0
#define DVX_MLX5_CAP_PORT_TYPE 52, 9, 8
#define DVX_MLX5_CAP_NUM_PORTS 52, 7, 0
#define DVX_MLX5_CAP_LOG_MAX_MSG 56, 28, 24
#define DVX_MLX5_CAP_CQE_VERSION 60, 3, 0
#define DVX_MLX5_CAP_ROCE 64, 2, 2
#define DVX_MLX5_CAP_ATOMIC 64, 1, 1
#define DVX_MLX5_CAP_CQ_OI 68, 31, 31
#define DVX_MLX5_CAP_CD 68, 19, 19
#define DVX_MLX5_CAP_RC 68, 0, 0
#define DVX_MLX5_CAP_UAR_4K 72, 31, 31
#define DVX_MLX5_CAP_UAR_SZ 72, 21, 16
#define DVX_MLX5_CAP_LOG_PG_SZ 72, 7, 0
#define DVX_MLX5_CAP_BF 76, 31, 31
#define DVX_MLX5_CAP_LOG_BF_REG_SIZE 76, 20, 16
#define DVX_MLX5_CAP_MAX_WQE_SZ_SQ 80, 15, 0
#define DVX_MLX5_CAP_MAX_WQE_SZ_RQ 84, 15, 0
/* reads may be relaxed whatever the PCIe setting (a separate, newer bit) */
#define DVX_MLX5_CAP_RELAXED_ORDERING_READ 100, 21, 21
#define DVX_MLX5_CAP_LOG_MAX_PD 100, 20, 16
#define DVX_MLX5_CAP_LOG_MAX_ATOMIC_SIZE_QP 176, 31, 24
/* timestamp formats the SQ and RQ contexts take: enum dvx_mlx5_ts_cap (prm 1.2) */
#define DVX_MLX5_CAP_SQ_TS_FORMAT 136, 31, 30
#define DVX_MLX5_CAP_RQ_TS_FORMAT 136, 29, 28
#define DVX_MLX5_CAP_CQE_COMPRESSION 180, 0, 0
#define DVX_MLX5_CAP_WAIT_ON_DATA 208, 20, 20
#define DVX_MLX5_CAP_WAIT_ON_TIME 208, 19, 19

/* atomic caps (op_mod 0x7), page-relative */
#define DVX_MLX5_CAP_ATOMIC_REQ_8B_ENDIANNESS_MODE 8, 31, 30
#define DVX_MLX5_CAP_SUPPORTED_ATOMIC_REQ_8B_ENDIANNESS_MODE_1 8, 25, 25
#define DVX_MLX5_CAP_ATOMIC_OPERATIONS 16, 15, 0
#define DVX_MLX5_CAP_ATOMIC_SIZE_QP 20, 15, 0
#define DVX_MLX5_CAP_ATOMIC_SIZE_DC 24, 15, 0
#define DVX_MLX5_CAP_FETCH_ADD_PCI_ATOMIC 80, 31, 16
#define DVX_MLX5_CAP_SWAP_PCI_ATOMIC 80, 15, 0
#define DVX_MLX5_CAP_COMPARE_SWAP_PCI_ATOMIC 84, 31, 16

/* atomic_operations bits */
#define DVX_MLX5_ATOMIC_OPS_CMP_SWAP (1u << 0)
#define DVX_MLX5_ATOMIC_OPS_FETCH_ADD (1u << 1)
#define DVX_MLX5_ATOMIC_OPS_MASKED_CMP_SWAP (1u << 2)
#define DVX_MLX5_ATOMIC_OPS_MASKED_FETCH_ADD (1u << 3)
/* atomic_size_qp bits */
#define DVX_MLX5_ATOMIC_SIZE_4B (1u << 2)
#define DVX_MLX5_ATOMIC_SIZE_8B (1u << 3)

/* RoCE caps (op_mod 0x9), page-relative */
#define DVX_MLX5_CAP_FL_RC_QP_WHEN_ROCE_DISABLED 0, 26, 26
#define DVX_MLX5_CAP_FL_RC_QP_WHEN_ROCE_ENABLED 0, 25, 25
#define DVX_MLX5_CAP_QP_TS_FORMAT 0, 1, 0
#define DVX_MLX5_CAP_R_ROCE_MAX_SRC_UDP_PORT 24, 31, 16
#define DVX_MLX5_CAP_R_ROCE_MIN_SRC_UDP_PORT 24, 15, 0

/* general caps 2 (op_mod 0x41), page-relative */
#define DVX_MLX5_CAP_SEND_DBR_MODE_NO_DBR_EXT 92, 30, 30

/**
 * enum dvx_mlx5_ts_cap - the timestamp formats a context may take (sq_ts_format,
 * rq_ts_format, roce qp_ts_format).
 */
enum dvx_mlx5_ts_cap {
	DVX_MLX5_TS_CAP_FREE_RUNNING = 0,
	DVX_MLX5_TS_CAP_REAL_TIME = 1,
	DVX_MLX5_TS_CAP_BOTH = 2,
};

/** enum dvx_mlx5_ts_format - qpc.ts_format (and sqc/rqc) values. */
enum dvx_mlx5_ts_format {
	DVX_MLX5_TS_FREE_RUNNING = 0,
	DVX_MLX5_TS_DEFAULT = 1,	/* the device's default among those it supports */
	DVX_MLX5_TS_REAL_TIME = 2,
};

/** port_type values */
#define DVX_MLX5_PORT_TYPE_IB 0u
#define DVX_MLX5_PORT_TYPE_ETH 1u

/**
 * struct dvx_mlx5_caps - the capabilities dvx decides with, in CPU order.
 * The *_valid flags say which pages were read.
 */
struct dvx_mlx5_caps {
	uint8_t general_valid;
	uint8_t atomic_valid;
	uint8_t roce_valid;
	uint8_t general2_valid;

	/* general */
	uint8_t hca_cap_2;
	uint8_t log_max_qp_sz;
	uint8_t log_max_qp;
	uint8_t log_max_cq_sz;
	uint8_t relaxed_ordering_write;
	uint8_t relaxed_ordering_read_pci_enabled;
	uint8_t relaxed_ordering_read;
	uint8_t log_max_ra_req_qp;
	uint8_t log_max_ra_res_qp;
	uint8_t port_type;
	uint8_t num_ports;
	uint8_t log_max_msg;
	uint8_t cqe_version;
	uint8_t roce;
	uint8_t atomic;
	uint8_t cq_oi;
	uint8_t cd;
	uint8_t rc;
	uint8_t uar_4k;
	uint8_t uar_sz;
	uint8_t log_pg_sz;
	uint8_t bf;
	uint8_t log_bf_reg_size;
	uint8_t log_max_pd;
	uint8_t log_max_atomic_size_qp;
	uint8_t cqe_compression;
	uint8_t wait_on_data;
	uint8_t wait_on_time;
	uint8_t sq_ts_format;	/* enum dvx_mlx5_ts_cap */
	uint8_t rq_ts_format;
	uint16_t max_wqe_sz_sq;
	uint16_t max_wqe_sz_rq;

	/* atomic */
	uint8_t atomic_req_8B_endianness_mode;
	uint8_t supported_atomic_req_8B_endianness_mode_1;
	uint16_t atomic_operations;
	uint16_t atomic_size_qp;
	uint16_t atomic_size_dc;
	uint16_t fetch_add_pci_atomic;
	uint16_t swap_pci_atomic;
	uint16_t compare_swap_pci_atomic;
	uint16_t rsvd1;

	/* RoCE */
	uint8_t fl_rc_qp_when_roce_disabled;
	uint8_t fl_rc_qp_when_roce_enabled;
	uint8_t qp_ts_format;
	uint8_t rsvd2;
	uint16_t r_roce_min_src_udp_port;
	uint16_t r_roce_max_src_udp_port;

	/* general 2 */
	uint8_t send_dbr_mode_no_dbr_ext;
	uint8_t rsvd3[5];
};

/**
 * dvx_mlx5_query_hca_cap_in() - encode query_hca_cap_in.
 * @in:		16-byte mailbox, overwritten
 * @cap_type:	enum dvx_mlx5_cap_type
 * @current:	1 for the current values, 0 for the maximum ones
 */
void dvx_mlx5_query_hca_cap_in(void *in, unsigned cap_type, int current);

/**
 * dvx_mlx5_caps_parse() - read one capability page out of a query_hca_cap_out mailbox.
 * @caps:	filled for the page of @cap_type; its *_valid flag is set
 * @cap_type:	which page the output holds
 * @out:	the output mailbox
 * @outlen:	its length (at least DVX_MLX5_QUERY_HCA_CAP_OUT_BYTES)
 *
 * Return: 0, -EINVAL (unknown @cap_type, short @outlen) or the status's errno when
 * the output carries a non-zero status.
 */
int dvx_mlx5_caps_parse(struct dvx_mlx5_caps *caps, unsigned cap_type, const void *out,
			size_t outlen);

DVX_END_DECLS

#endif /* DVX_MLX5_CAPS_H */
