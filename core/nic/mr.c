// SPDX-License-Identifier: MIT
/*
 * core/nic/mr.c - memory regions: iova = address or 0, dma-buf, the sink (prm 5).
 */
#include <errno.h>
#include <string.h>

#include <dvx/nic/mr.h>

#include "priv.h"

#define MR_ACCESS_OK                                                                    \
	(DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_WRITE | DVX_ACCESS_REMOTE_READ |    \
	 DVX_ACCESS_REMOTE_ATOMIC | DVX_ACCESS_RELAXED_ORDERING)
#define MR_PAGE 4096u

static int bad(struct dvx_nic *nic, const char *op, const char *what)
{
	return dvx_core_fail(nic, -EINVAL, DVX_DIAG_ARG, op, "%s", what);
}

static int mr_reg(struct dvx_nic *nic, const struct dvx_mr_cfg *attr, struct dvx_mr *mr,
		  const char *op)
{
	struct dvx_hal_mr_req req;
	struct dvx_mr m;
	uint32_t access = attr->access, flags = 0;
	int dmabuf = !!(attr->flags & DVX_MR_F_DMABUF);
	int zero = (attr->flags & DVX_MR_IOVA_ZERO) != 0;
	int err;

	if (!attr->len)
		return bad(nic, op, "length 0");
	if (access & ~MR_ACCESS_OK)
		return bad(nic, op, "unknown access bits");
	if ((access & (DVX_ACCESS_REMOTE_WRITE | DVX_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & DVX_ACCESS_LOCAL_WRITE))
		return bad(nic, op, "remote write/atomic access needs DVX_ACCESS_LOCAL_WRITE");
	if (attr->flags & ~(uint32_t)(DVX_MR_IOVA_ZERO | DVX_MR_F_DATA_DIRECT | DVX_MR_F_DMABUF))
		return bad(nic, op, "unknown flags");
	if (dmabuf && attr->dmabuf_fd < 0)
		return bad(nic, op, "DVX_MR_F_DMABUF without a dma-buf fd");
	if ((attr->flags & DVX_MR_F_DATA_DIRECT) && !dmabuf)
		return bad(nic, op, "Data Direct applies to dma-buf MRs only");
	if (!dmabuf && !attr->addr)
		return bad(nic, op, "host MR without an address");
	if (!dmabuf && attr->dmabuf_offset)
		return bad(nic, op, "dma-buf offset without a dma-buf fd");
	if (dmabuf && !zero && !attr->addr)
		return bad(nic, op, "dma-buf MR with iova = address needs the address");
	/* ibv_reg_dmabuf_mr: iova and offset share their offset inside a page */
	if (dmabuf && !zero && ((uintptr_t)attr->addr % MR_PAGE) != attr->dmabuf_offset % MR_PAGE)
		return bad(nic, op, "dma-buf iova and offset differ inside a 4 KiB page");
	if (dmabuf && zero && attr->dmabuf_offset % MR_PAGE)
		return bad(nic, op, "iova-0 dma-buf MR needs a 4 KiB aligned offset");
	if ((uintptr_t)attr->addr + attr->len < (uintptr_t)attr->addr)
		return bad(nic, op, "region wraps the address space");
	if ((access & DVX_ACCESS_REMOTE_ATOMIC) && !(nic->features & DVX_NIC_FEAT_ATOMIC))
		return dvx_nic_require(nic, DVX_NIC_FEAT_ATOMIC, "a remote-atomic MR");
	if ((access & DVX_ACCESS_RELAXED_ORDERING) &&
	    !(nic->features & DVX_NIC_FEAT_RELAXED_ORDERING)) {
		/* a hint: registered without it, reported in mr->flags */
		access &= ~(uint32_t)DVX_ACCESS_RELAXED_ORDERING;
		flags |= DVX_MR_RO_DROPPED;
		dvx_hal_log(&nic->hal.log, DVX_LOG_INFO,
			    "%s: relaxed ordering dropped (device lacks it)", op);
	}

	if (dmabuf)
		flags |= DVX_MR_DEVMEM;
	memset(&req, 0, sizeof(req));
	req.addr = attr->addr;
	req.len = attr->len;
	req.iova = zero ? 0 : (uint64_t)(uintptr_t)attr->addr;
	req.access = access;
	req.flags = (dmabuf ? DVX_MR_DMABUF : 0) |
		    ((attr->flags & DVX_MR_F_DATA_DIRECT) ? DVX_MR_DATA_DIRECT : 0);
	req.dmabuf_fd = dmabuf ? attr->dmabuf_fd : -1;
	req.dmabuf_offset = dmabuf ? attr->dmabuf_offset : 0;

	memset(&m, 0, sizeof(m));
	err = dvx_hal_mr_reg(&nic->hal, &nic->pd, &req, &m.hal);
	if (err)
		return dvx_core_hal_failed(nic, err, 0, dmabuf ? "mr_reg(dma-buf)" : "mr_reg");
	m.nic = nic;
	m.addr = attr->addr;
	m.len = attr->len;
	m.iova = req.iova;
	m.lkey = m.hal.lkey;
	m.rkey = m.hal.rkey;
	m.access = access;
	m.flags = flags;
	m.live = DVX_LIVE;
	*mr = m;
	nic->nobjs++;
	return 0;
}

static int mr_reg_do(struct dvx_nic *nic, const struct dvx_mr_cfg *attr, struct dvx_mr *mr)
{
	if (!nic || !nic->open)
		return -EINVAL;
	if (!attr || !mr)
		return bad(nic, "dvx_mr_reg", "attr or mr is NULL");
	if (mr->live == DVX_LIVE)
		return dvx_core_fail(nic, -EBUSY, DVX_DIAG_ARG, "dvx_mr_reg",
				     "the MR is live: deregister it first");
	return mr_reg(nic, attr, mr, "dvx_mr_reg");
}

int dvx_mr_reg(struct dvx_nic *nic, const struct dvx_mr_cfg *attr, struct dvx_mr *mr)
{
	struct dvx_nic *n = nic;
	int err = mr_reg_do(nic, attr, mr);

	if (!err && n)
		dvx_core_ok(n);
	return err;
}

static int mr_sink_do(struct dvx_nic *nic, void *buf, int dmabuf_fd, uint64_t dmabuf_offset,
		struct dvx_mr *mr)
{
	struct dvx_mr_cfg a;

	if (!nic || !nic->open)
		return -EINVAL;
	if (!mr || (dmabuf_fd < 0 && !buf))
		return bad(nic, "dvx_mr_sink", "sink buffer or mr is NULL");
	if (mr->live == DVX_LIVE)
		return dvx_core_fail(nic, -EBUSY, DVX_DIAG_ARG, "dvx_mr_sink",
				     "the MR is live: deregister it first");
	if ((uintptr_t)buf % 8 || (dmabuf_fd >= 0 && dmabuf_offset % 8))
		return bad(nic, "dvx_mr_sink", "sink is not 8-byte aligned");
	memset(&a, 0, sizeof(a));
	a.addr = buf;
	a.len = 8;
	/* only the NIC writes here (fetched values nobody reads): no remote right */
	a.access = DVX_ACCESS_LOCAL_WRITE;
	a.flags = DVX_MR_IOVA_ZERO;
	a.dmabuf_fd = dmabuf_fd >= 0 ? dmabuf_fd : -1;
	if (dmabuf_fd >= 0)
		a.flags |= DVX_MR_F_DMABUF;
	a.dmabuf_offset = dmabuf_fd >= 0 ? dmabuf_offset : 0;
	if (dmabuf_fd >= 0 && dmabuf_offset % MR_PAGE) {
		/* an 8-byte sink inside a page of a dma-buf: zero-based MRs need a page
		 * aligned offset; the caller should give the sink its own page */
		return bad(nic, "dvx_mr_sink", "dma-buf sink offset must be 4 KiB aligned");
	}
	return mr_reg(nic, &a, mr, "dvx_mr_sink");
}

int dvx_mr_sink(struct dvx_nic *nic, void *buf, int dmabuf_fd, uint64_t dmabuf_offset,
		struct dvx_mr *mr)
{
	struct dvx_nic *n = nic;
	int err = mr_sink_do(nic, buf, dmabuf_fd, dmabuf_offset, mr);

	if (!err && n)
		dvx_core_ok(n);
	return err;
}

static int mr_dereg_do(struct dvx_mr *mr)
{
	struct dvx_nic *nic;
	int err;

	if (!mr || !mr->live || !mr->nic)
		return -EINVAL;
	nic = mr->nic;
	err = dvx_hal_mr_dereg(&nic->hal, &mr->hal);
	if (err)
		return dvx_core_hal_failed(nic, err, 0, "mr_dereg");
	mr->live = 0;
	nic->nobjs--;
	return 0;
}

int dvx_mr_dereg(struct dvx_mr *mr)
{
	struct dvx_nic *n = mr ? mr->nic : NULL;
	int err = mr_dereg_do(mr);

	if (!err && n)
		dvx_core_ok(n);
	return err;
}
