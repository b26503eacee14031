// SPDX-License-Identifier: MIT
/*
 * hal/capmodel.c - QUERY_HCA_CAP pages of a modelled device (hal/capmodel.h), for the
 * software NIC and the mock's default device. Positions: docs/prm.md 1.2, page-relative
 * (the page starts at byte 16 of query_hca_cap_out).
 */
#include <errno.h>
#include <string.h>

#include <dvx/byteorder.h>

#include "capmodel.h"

/* field [hi:lo] of the big-endian dword at byte @b of @p: a read-modify-write */
static void put(uint8_t *p, unsigned b, unsigned hi, unsigned lo, uint32_t v)
{
	uint32_t m = (hi - lo == 31 ? 0xffffffffu : (1u << (hi - lo + 1)) - 1u) << lo;
	uint32_t d = dvx_get_be32(p + b);

	dvx_put_be32(p + b, (d & ~m) | ((v << lo) & m));
}

void dvx_hal_cap_model_cx7(struct dvx_hal_cap_model *m)
{
	memset(m, 0, sizeof(*m));
	m->flags = DVX_HAL_CAP_F_ETH | DVX_HAL_CAP_F_CD | DVX_HAL_CAP_F_ATOMIC |
		   DVX_HAL_CAP_F_LOOPBACK | DVX_HAL_CAP_F_CQ_OI | DVX_HAL_CAP_F_BF;
	m->nports = 1;
	m->log_max_qp_sz = 15;
	m->log_max_qp = 17;
	m->log_max_cq_sz = 22;
	m->log_max_msg = 30;
	m->log_max_ra_req_qp = m->log_max_ra_res_qp = 4;
	m->log_max_pd = 23;
	m->log_bf_reg_size = 9;
	m->max_wqe_sz_sq = 1024;
	m->max_wqe_sz_rq = 512;
}

static unsigned has(const struct dvx_hal_cap_model *m, uint32_t flag)
{
	return (m->flags & flag) != 0;
}

static void general(const struct dvx_hal_cap_model *c, uint8_t *g)
{
	put(g, 4, 31, 31, 1);				/* hca_cap_2 */
	put(g, 16, 23, 16, c->log_max_qp_sz);
	put(g, 16, 4, 0, c->log_max_qp);
	put(g, 24, 23, 16, c->log_max_cq_sz);
	put(g, 28, 23, 23, 1);				/* relaxed_ordering_write */
	put(g, 28, 22, 22, 1);				/* relaxed_ordering_read_pci_enabled */
	put(g, 40, 21, 16, c->log_max_ra_req_qp);
	put(g, 40, 5, 0, c->log_max_ra_res_qp);
	put(g, 52, 9, 8, has(c, DVX_HAL_CAP_F_ETH));		/* port_type */
	put(g, 52, 7, 0, c->nports);
	put(g, 56, 28, 24, c->log_max_msg);
	put(g, 60, 3, 0, 1);				/* cqe_version */
	put(g, 64, 2, 2, has(c, DVX_HAL_CAP_F_ETH));		/* roce */
	put(g, 64, 1, 1, has(c, DVX_HAL_CAP_F_ATOMIC));
	put(g, 68, 31, 31, has(c, DVX_HAL_CAP_F_CQ_OI));
	put(g, 68, 19, 19, has(c, DVX_HAL_CAP_F_CD));
	put(g, 68, 0, 0, 1);				/* rc */
	put(g, 72, 31, 31, 1);				/* uar_4k */
	put(g, 72, 21, 16, 6);				/* uar_sz */
	put(g, 72, 7, 0, 12);				/* log_pg_sz */
	put(g, 76, 31, 31, has(c, DVX_HAL_CAP_F_BF));
	put(g, 76, 20, 16, c->log_bf_reg_size);
	put(g, 80, 15, 0, c->max_wqe_sz_sq);
	put(g, 84, 15, 0, c->max_wqe_sz_rq);
	put(g, 100, 20, 16, c->log_max_pd);
	/* log_max_atomic_size_qp: 8 B */
	put(g, 176, 31, 24, has(c, DVX_HAL_CAP_F_ATOMIC) ? 3 : 0);
	put(g, 136, 31, 30, c->ts_cap);		/* sq_ts_format */
	put(g, 136, 29, 28, c->ts_cap);		/* rq_ts_format */
	/* cqe_compression, wait_on_data, wait_on_time: 0 (not modelled) */
}

int dvx_hal_cap_page(const struct dvx_hal_cap_model *m, unsigned type, uint8_t *page)
{
	memset(page, 0, DVX_HAL_CAP_PAGE_BYTES);
	switch (type) {
	case DVX_HAL_CAP_GENERAL:
		general(m, page);
		return 0;
	case DVX_HAL_CAP_ATOMIC:
		/* the kernel selects host endianness when the device supports it */
		if (has(m, DVX_HAL_CAP_F_ATOMIC)) {
			put(page, 8, 31, 30, !has(m, DVX_HAL_CAP_F_ATOMIC_BE));
			put(page, 8, 25, 25, !has(m, DVX_HAL_CAP_F_ATOMIC_BE));
			put(page, 16, 15, 0, 0xf);	/* CAS, FA, masked CAS, masked FA */
			put(page, 20, 15, 0, 0xc);	/* 4 B and 8 B */
			put(page, 24, 15, 0, 0xc);
		}
		return 0;
	case DVX_HAL_CAP_ROCE:
		put(page, 0, 26, 26, has(m, DVX_HAL_CAP_F_LOOPBACK));
		put(page, 0, 25, 25, has(m, DVX_HAL_CAP_F_LOOPBACK));
		put(page, 0, 1, 0, m->ts_cap);		/* qp_ts_format */
		put(page, 24, 31, 16, 0xffff);		/* r_roce_max_src_udp_port */
		put(page, 24, 15, 0, 0xc000);		/* r_roce_min_src_udp_port */
		return 0;
	case DVX_HAL_CAP_GENERAL_2:
		/* send_dbr_mode_no_dbr_ext 0 (not modelled) */
		return 0;
	default:
		return -ENOENT;
	}
}
