// SPDX-License-Identifier: MIT
/*
 * mlx5/caps.c - QUERY_HCA_CAP encoding and capability-page parsing (prm 1.2).
 */
#include <errno.h>
#include <string.h>

#include <dvx/mlx5/caps.h>
#include <dvx/mlx5/cmd.h>

void dvx_mlx5_query_hca_cap_in(void *in, unsigned cap_type, int current)
{
	memset(in, 0, DVX_MLX5_QUERY_HCA_CAP_IN_BYTES);
	dvx_mlx5_set(in, DVX_MLX5_HDR_OPCODE, DVX_MLX5_CMD_QUERY_HCA_CAP);
	dvx_mlx5_set(in, DVX_MLX5_HDR_OP_MOD, (cap_type << 1) | (current ? 1u : 0u));
}

/* page-relative field -> value */
#define CAP(page, f) ((uint8_t)dvx_mlx5_get(page, f))
#define CAP16(page, f) ((uint16_t)dvx_mlx5_get(page, f))

static void parse_general(struct dvx_mlx5_caps *c, const uint8_t *p)
{
	c->hca_cap_2 = CAP(p, DVX_MLX5_CAP_HCA_CAP_2);
	c->log_max_qp_sz = CAP(p, DVX_MLX5_CAP_LOG_MAX_QP_SZ);
	c->log_max_qp = CAP(p, DVX_MLX5_CAP_LOG_MAX_QP);
	c->log_max_cq_sz = CAP(p, DVX_MLX5_CAP_LOG_MAX_CQ_SZ);
	c->relaxed_ordering_write = CAP(p, DVX_MLX5_CAP_RELAXED_ORDERING_WRITE);
	c->relaxed_ordering_read_pci_enabled = CAP(p, DVX_MLX5_CAP_RELAXED_ORDERING_READ_PCI_ENABLED);
	c->relaxed_ordering_read = CAP(p, DVX_MLX5_CAP_RELAXED_ORDERING_READ);
	c->log_max_ra_req_qp = CAP(p, DVX_MLX5_CAP_LOG_MAX_RA_REQ_QP);
	c->log_max_ra_res_qp = CAP(p, DVX_MLX5_CAP_LOG_MAX_RA_RES_QP);
	c->port_type = CAP(p, DVX_MLX5_CAP_PORT_TYPE);
	c->num_ports = CAP(p, DVX_MLX5_CAP_NUM_PORTS);
	c->log_max_msg = CAP(p, DVX_MLX5_CAP_LOG_MAX_MSG);
	c->cqe_version = CAP(p, DVX_MLX5_CAP_CQE_VERSION);
	c->roce = CAP(p, DVX_MLX5_CAP_ROCE);
	c->atomic = CAP(p, DVX_MLX5_CAP_ATOMIC);
	c->cq_oi = CAP(p, DVX_MLX5_CAP_CQ_OI);
	c->cd = CAP(p, DVX_MLX5_CAP_CD);
	c->rc = CAP(p, DVX_MLX5_CAP_RC);
	c->uar_4k = CAP(p, DVX_MLX5_CAP_UAR_4K);
	c->uar_sz = CAP(p, DVX_MLX5_CAP_UAR_SZ);
	c->log_pg_sz = CAP(p, DVX_MLX5_CAP_LOG_PG_SZ);
	c->bf = CAP(p, DVX_MLX5_CAP_BF);
	c->log_bf_reg_size = CAP(p, DVX_MLX5_CAP_LOG_BF_REG_SIZE);
	c->max_wqe_sz_sq = CAP16(p, DVX_MLX5_CAP_MAX_WQE_SZ_SQ);
	c->max_wqe_sz_rq = CAP16(p, DVX_MLX5_CAP_MAX_WQE_SZ_RQ);
	c->log_max_pd = CAP(p, DVX_MLX5_CAP_LOG_MAX_PD);
	c->log_max_atomic_size_qp = CAP(p, DVX_MLX5_CAP_LOG_MAX_ATOMIC_SIZE_QP);
	c->sq_ts_format = CAP(p, DVX_MLX5_CAP_SQ_TS_FORMAT);
	c->rq_ts_format = CAP(p, DVX_MLX5_CAP_RQ_TS_FORMAT);
	c->cqe_compression = CAP(p, DVX_MLX5_CAP_CQE_COMPRESSION);
	c->wait_on_data = CAP(p, DVX_MLX5_CAP_WAIT_ON_DATA);
	c->wait_on_time = CAP(p, DVX_MLX5_CAP_WAIT_ON_TIME);
	c->general_valid = 1;
}

static void parse_atomic(struct dvx_mlx5_caps *c, const uint8_t *p)
{
	c->atomic_req_8B_endianness_mode = CAP(p, DVX_MLX5_CAP_ATOMIC_REQ_8B_ENDIANNESS_MODE);
	c->supported_atomic_req_8B_endianness_mode_1 =
		CAP(p, DVX_MLX5_CAP_SUPPORTED_ATOMIC_REQ_8B_ENDIANNESS_MODE_1);
	c->atomic_operations = CAP16(p, DVX_MLX5_CAP_ATOMIC_OPERATIONS);
	c->atomic_size_qp = CAP16(p, DVX_MLX5_CAP_ATOMIC_SIZE_QP);
	c->atomic_size_dc = CAP16(p, DVX_MLX5_CAP_ATOMIC_SIZE_DC);
	c->fetch_add_pci_atomic = CAP16(p, DVX_MLX5_CAP_FETCH_ADD_PCI_ATOMIC);
	c->swap_pci_atomic = CAP16(p, DVX_MLX5_CAP_SWAP_PCI_ATOMIC);
	c->compare_swap_pci_atomic = CAP16(p, DVX_MLX5_CAP_COMPARE_SWAP_PCI_ATOMIC);
	c->atomic_valid = 1;
}

static void parse_roce(struct dvx_mlx5_caps *c, const uint8_t *p)
{
	c->fl_rc_qp_when_roce_disabled = CAP(p, DVX_MLX5_CAP_FL_RC_QP_WHEN_ROCE_DISABLED);
	c->fl_rc_qp_when_roce_enabled = CAP(p, DVX_MLX5_CAP_FL_RC_QP_WHEN_ROCE_ENABLED);
	c->qp_ts_format = CAP(p, DVX_MLX5_CAP_QP_TS_FORMAT);
	c->r_roce_min_src_udp_port = CAP16(p, DVX_MLX5_CAP_R_ROCE_MIN_SRC_UDP_PORT);
	c->r_roce_max_src_udp_port = CAP16(p, DVX_MLX5_CAP_R_ROCE_MAX_SRC_UDP_PORT);
	c->roce_valid = 1;
}

static void parse_general2(struct dvx_mlx5_caps *c, const uint8_t *p)
{
	c->send_dbr_mode_no_dbr_ext = CAP(p, DVX_MLX5_CAP_SEND_DBR_MODE_NO_DBR_EXT);
	c->general2_valid = 1;
}

int dvx_mlx5_caps_parse(struct dvx_mlx5_caps *caps, unsigned cap_type, const void *out,
			size_t outlen)
{
	const uint8_t *page;
	uint8_t status;

	if (!caps || !out || outlen < DVX_MLX5_QUERY_HCA_CAP_OUT_BYTES)
		return -EINVAL;
	page = (const uint8_t *)out + DVX_MLX5_QUERY_HCA_CAP_OUT_CAPABILITY;	/* not before: @out may be NULL */
	status = (uint8_t)dvx_mlx5_get(out, DVX_MLX5_OUT_STATUS);
	if (status)
		return dvx_mlx5_cmd_status_errno(status);
	switch (cap_type) {
	case DVX_MLX5_CAP_TYPE_GENERAL:
		parse_general(caps, page);
		return 0;
	case DVX_MLX5_CAP_TYPE_ATOMIC:
		parse_atomic(caps, page);
		return 0;
	case DVX_MLX5_CAP_TYPE_ROCE:
		parse_roce(caps, page);
		return 0;
	case DVX_MLX5_CAP_TYPE_GENERAL_2:
		parse_general2(caps, page);
		return 0;
	default:
		return -EINVAL;
	}
}
