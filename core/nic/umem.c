// SPDX-License-Identifier: MIT
/*
 * core/nic/umem.c - DEVX umems over caller memory (prm 1.5).
 */
#include <errno.h>
#include <string.h>

#include <dvx/nic/umem.h>

#include "priv.h"

/* what the kernel's DEVX umem registration takes: any other bit is EINVAL there
 * (drivers/infiniband/hw/mlx5/devx.c devx_umem_get(), docs/mlx5.md field table) */
#define UMEM_ACCESS_OK                                                                  \
	(DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_WRITE | DVX_ACCESS_REMOTE_READ)

static int bad(struct dvx_nic *nic, const char *what)
{
	return dvx_core_fail(nic, -EINVAL, DVX_DIAG_ARG, "dvx_umem_reg", "%s", what);
}

/* largest page size in @bitmap, the alignment a ring offset then needs */
static uint64_t ring_align_of(uint64_t bitmap)
{
	uint64_t top = 1ull << 63;

	if (bitmap <= DVX_UMEM_PGSZ_DEFAULT * 2 - 1)
		return DVX_RING_MIN_ALIGN;	/* pages of at most 4 KiB */
	while (!(bitmap & top))
		top >>= 1;
	return top;
}

static int umem_reg_do(struct dvx_nic *nic, const struct dvx_umem_cfg *attr, struct dvx_umem *umem)
{
	struct dvx_hal_umem_req req;
	struct dvx_umem u;
	uint32_t access;
	int dmabuf, err;

	if (!nic || !nic->open)
		return -EINVAL;
	if (!attr || !umem)
		return bad(nic, "attr or umem is NULL");
	if (umem->live == DVX_LIVE)
		return dvx_core_fail(nic, -EBUSY, DVX_DIAG_ARG, "dvx_umem_reg",
				     "the umem is live: deregister it first");
	dmabuf = !!(attr->flags & DVX_UMEM_F_DMABUF);
	if (dmabuf && attr->dmabuf_fd < 0)
		return bad(nic, "DVX_UMEM_F_DMABUF without a dma-buf fd");
	access = attr->access ? attr->access : DVX_ACCESS_LOCAL_WRITE;
	if (!attr->len)
		return bad(nic, "length 0");
	if (access & ~UMEM_ACCESS_OK)
		return bad(nic, "access bits a umem does not take (only local write, remote "
				"write, remote read)");
	if (!(access & DVX_ACCESS_LOCAL_WRITE))
		return bad(nic, "queue memory needs DVX_ACCESS_LOCAL_WRITE");
	if (attr->flags & ~(uint32_t)(DVX_UMEM_F_CPU | DVX_UMEM_F_DMABUF))
		return bad(nic, "unknown flags");
	if (!dmabuf && !attr->addr)
		return bad(nic, "host umem without an address");
	if ((uintptr_t)attr->addr % DVX_UMEM_BASE_ALIGN)
		return bad(nic, "umem address not 4 KiB aligned");
	if (dmabuf && attr->dmabuf_offset % DVX_UMEM_BASE_ALIGN)
		return bad(nic, "dma-buf offset not 4 KiB aligned");
	if (!dmabuf && attr->dmabuf_offset)
		return bad(nic, "dma-buf offset without a dma-buf fd");
	if (!dmabuf && (attr->flags & DVX_UMEM_F_CPU))
		return bad(nic, "DVX_UMEM_F_CPU is for dma-buf umems");
	if (attr->pgsz_bitmap && !(attr->pgsz_bitmap & DVX_UMEM_PGSZ_DEFAULT))
		return bad(nic, "page-size bitmap without 4 KiB pages");
	if ((uintptr_t)attr->addr + attr->len < (uintptr_t)attr->addr)
		return bad(nic, "region wraps the address space");

	memset(&req, 0, sizeof(req));
	req.addr = dmabuf ? NULL : attr->addr;
	req.len = attr->len;
	req.access = access;
	req.dmabuf_fd = dmabuf ? attr->dmabuf_fd : -1;
	req.dmabuf_offset = dmabuf ? attr->dmabuf_offset : 0;
	req.pgsz_bitmap = attr->pgsz_bitmap ? attr->pgsz_bitmap : DVX_UMEM_PGSZ_DEFAULT;

	memset(&u, 0, sizeof(u));
	err = dvx_hal_umem_reg(&nic->hal, &req, &u.hal);
	if (err)
		return dvx_core_hal_failed(nic, err, 0, dmabuf ? "umem_reg(dma-buf)" : "umem_reg");
	u.nic = nic;
	u.addr = (uint8_t *)attr->addr;
	u.len = attr->len;
	u.id = u.hal.id;
	u.access = access;
	u.ring_align = ring_align_of(req.pgsz_bitmap);
	u.cpu = !dmabuf || (attr->flags & DVX_UMEM_F_CPU);
	u.via_dmabuf = (uint8_t)dmabuf;
	u.live = DVX_LIVE;
	*umem = u;
	nic->nobjs++;
	return 0;
}

int dvx_umem_reg(struct dvx_nic *nic, const struct dvx_umem_cfg *attr, struct dvx_umem *umem)
{
	struct dvx_nic *n = nic;
	int err = umem_reg_do(nic, attr, umem);

	if (!err && n)
		dvx_core_ok(n);
	return err;
}

static int umem_dereg_do(struct dvx_umem *umem)
{
	struct dvx_nic *nic;
	int err;

	if (!umem || !umem->live || !umem->nic)
		return -EINVAL;
	nic = umem->nic;
	if (umem->users)
		return dvx_core_fail(nic, -EBUSY, DVX_DIAG_STATE, "dvx_umem_dereg",
				     "umem 0x%x still holds %u CQ/QP rings or records", umem->id,
				     umem->users);
	err = dvx_hal_umem_dereg(&nic->hal, &umem->hal);
	if (err)
		return dvx_core_hal_failed(nic, err, 0, "umem_dereg");
	umem->live = 0;
	umem->exts = NULL;
	nic->nobjs--;
	return 0;
}

int dvx_umem_dereg(struct dvx_umem *umem)
{
	struct dvx_nic *n = umem ? umem->nic : NULL;
	int err = umem_dereg_do(umem);

	if (!err && n)
		dvx_core_ok(n);
	return err;
}

static int ranges_meet(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return alen && blen && a < b + blen && b < a + alen;
}

const struct dvx_umem_ext *dvx_core_umem_overlap(const struct dvx_umem *u, uint64_t off,
						 uint64_t len)
{
	const struct dvx_umem_ext *e;

	for (e = u->exts; e; e = e->next)
		if (ranges_meet(off, len, e->off, e->len))
			return e;
	return NULL;
}

void dvx_core_umem_link(struct dvx_umem *u, struct dvx_umem_ext *e, uint64_t off, uint64_t len)
{
	e->off = off;
	e->len = len;
	e->next = u->exts;
	u->exts = e;
}

void dvx_core_umem_unlink(struct dvx_umem *u, struct dvx_umem_ext *e)
{
	struct dvx_umem_ext **pp;

	/* by address: live objects are never moved (dvx/nic/post.h) */
	for (pp = &u->exts; *pp; pp = &(*pp)->next)
		if (*pp == e)
			break;
	if (*pp)
		*pp = (*pp)->next;
	e->next = NULL;
}
