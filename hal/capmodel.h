/* SPDX-License-Identifier: MIT */
/*
 * hal/capmodel.h - private to hal/: QUERY_HCA_CAP pages of a modelled ConnectX, the one
 * builder the software NIC (hal/sim) and the mock's default device (hal/mock) share.
 *
 * The bit positions are docs/prm.md 1.2's, written here on their own (the hal includes
 * no dvx/mlx5 header), so dvx_mlx5_caps_parse() reading these pages back is a check of
 * both sides.
 */
#ifndef DVX_HAL_CAPMODEL_H
#define DVX_HAL_CAPMODEL_H

#include <stdint.h>

/* capability page types (QUERY_HCA_CAP op_mod = type << 1 | current) */
enum {
	DVX_HAL_CAP_GENERAL = 0x0,
	DVX_HAL_CAP_ATOMIC = 0x3,
	DVX_HAL_CAP_ROCE = 0x4,
	DVX_HAL_CAP_GENERAL_2 = 0x20,
};

#define DVX_HAL_CAP_PAGE_BYTES 4096u

/* struct dvx_hal_cap_model.flags: what the device announces */
enum {
	DVX_HAL_CAP_F_ETH = 1u << 0,		/* port type Ethernet (RoCE), else InfiniBand */
	DVX_HAL_CAP_F_CD = 1u << 1,		/* core-direct */
	DVX_HAL_CAP_F_ATOMIC = 1u << 2,
	DVX_HAL_CAP_F_ATOMIC_BE = 1u << 3,	/* 8-byte atomic results big-endian only */
	DVX_HAL_CAP_F_LOOPBACK = 1u << 4,	/* force-loopback RC QPs */
	DVX_HAL_CAP_F_CQ_OI = 1u << 5,		/* overrun-ignore CQs */
	DVX_HAL_CAP_F_BF = 1u << 6,		/* BlueFlame */
};

/**
 * struct dvx_hal_cap_model - what a modelled device announces.
 * @flags:	DVX_HAL_CAP_F_*
 * @nports:	ports
 * @ts_cap:	timestamp formats: 0 free-running only, 1 real-time only, 2 both
 *		(sq_ts_format, rq_ts_format and the RoCE page's qp_ts_format)
 * @log_*:	the log2 limits of that name
 * @max_wqe_sz_sq, @max_wqe_sz_rq: bytes
 */
struct dvx_hal_cap_model {
	uint32_t flags;
	uint8_t nports;
	uint8_t ts_cap;
	uint8_t log_max_qp_sz;
	uint8_t log_max_qp;
	uint8_t log_max_cq_sz;
	uint8_t log_max_msg;
	uint8_t log_max_ra_req_qp;
	uint8_t log_max_ra_res_qp;
	uint8_t log_max_pd;
	uint8_t log_bf_reg_size;
	uint16_t max_wqe_sz_sq;
	uint16_t max_wqe_sz_rq;
	uint16_t rsvd;
};

/**
 * dvx_hal_cap_model_cx7() - a ConnectX-7 like device: one RoCE port, core-direct,
 * atomics with host-endian 8-byte results, force-loopback, overrun-ignore CQs,
 * BlueFlame (512-byte registers), free-running timestamps only, the limits of the
 * software NIC's default NIC.
 * @m:		overwritten
 */
void dvx_hal_cap_model_cx7(struct dvx_hal_cap_model *m);

/**
 * dvx_hal_cap_page() - build one capability page.
 * @m:		the device
 * @type:	DVX_HAL_CAP_*
 * @page:	DVX_HAL_CAP_PAGE_BYTES, overwritten (all zero for an unknown @type)
 *
 * Return: 0, or -ENOENT for a page type the model does not have.
 */
int dvx_hal_cap_page(const struct dvx_hal_cap_model *m, unsigned type, uint8_t *page);

#endif /* DVX_HAL_CAPMODEL_H */
