// SPDX-License-Identifier: MIT
/*
 * core/nic/cq.c - CREATE_CQ in caller umems (prm 1.6, 4).
 */
#include <errno.h>
#include <string.h>

#include <dvx/nic/cq.h>
#include <dvx/mlx5/cmd.h>

#include "priv.h"

#define CQ_FLAGS_OK (DVX_CQ_F_OI | DVX_CQ_F_COLLAPSED | DVX_CQ_F_PREINIT)
#define CQ_LOG_MAX 24u	/* the 24-bit CQ counters; dvx_mlx5_cq_init's limit */

static int cq_sizes(const struct dvx_cq_cfg *a, struct dvx_mem_req *ring,
		    struct dvx_mem_req *dbr)
{
	if (!a || !DVX_IS_POW2(a->depth) || a->depth > (1u << CQ_LOG_MAX) ||
	    (a->flags & ~(uint32_t)CQ_FLAGS_OK) ||
	    ((a->flags & DVX_CQ_F_COLLAPSED) && !(a->flags & DVX_CQ_F_OI)))
		return -EINVAL;
	if (ring) {
		ring->bytes = (a->flags & DVX_CQ_F_COLLAPSED) ? DVX_CQE_BYTES :
								DVX_CQ_RING_BYTES(a->depth);
		ring->align = DVX_RING_ALIGN;
	}
	if (dbr) {
		dbr->bytes = DVX_DBR_BYTES;
		dbr->align = DVX_DBR_ALIGN;
	}
	return 0;
}

int dvx_cq_mem_req(const struct dvx_cq_cfg *attr, struct dvx_mem_req *ring,
		   struct dvx_mem_req *dbr)
{
	return cq_sizes(attr, ring, dbr);
}

static int bad(struct dvx_nic *nic, const char *what)
{
	return dvx_core_fail(nic, -EINVAL, DVX_DIAG_ARG, "dvx_cq_create", "%s", what);
}

/* @umem holds @bytes at @off with @align; 0 or the reason */
static const char *placement(const struct dvx_umem *umem, uint64_t off, uint64_t bytes,
			     uint64_t align)
{
	if (!umem || !umem->live)
		return "umem missing or not registered";
	if (off % align)
		return "offset misaligned";
	if (off > umem->len || bytes > umem->len - off)
		return "region runs past the end of its umem";
	return NULL;
}

static int cq_create_do(struct dvx_nic *nic, const struct dvx_cq_cfg *attr, struct dvx_cq *cq)
{
	uint8_t in[DVX_MLX5_CREATE_CQ_IN_BYTES], out[DVX_MLX5_CREATE_CQ_OUT_BYTES];
	struct dvx_mlx5_cq_cfg ma;
	struct dvx_mem_req ring;
	struct dvx_uar *uar;
	struct dvx_cq c;
	const char *why;
	unsigned log_depth;
	int err;

	if (!nic || !nic->open)
		return -EINVAL;
	if (!attr || !cq)
		return bad(nic, "attr or cq is NULL");
	if (cq->live == DVX_LIVE)
		return dvx_core_fail(nic, -EBUSY, DVX_DIAG_ARG, "dvx_cq_create",
				     "the CQ is live: destroy it first");
	if (cq_sizes(attr, &ring, NULL))
		return bad(nic, "depth must be a power of two (1 .. 2^24); flags known; "
				"collapsed needs overrun-ignore");
	log_depth = dvx_core_log2(attr->depth);
	if (log_depth > nic->caps.log_max_cq_sz)
		return dvx_core_fail(nic, -EOPNOTSUPP, DVX_DIAG_ARG, "dvx_cq_create",
				     "depth %u above the device's 2^%u", attr->depth,
				     nic->caps.log_max_cq_sz);
	if ((attr->flags & DVX_CQ_F_OI) && !(nic->features & DVX_NIC_FEAT_CQ_OI))
		return dvx_nic_require(nic, DVX_NIC_FEAT_CQ_OI, "an overrun-ignore CQ");
	why = placement(attr->ring_umem, attr->ring_offset, ring.bytes,
			attr->ring_umem ? attr->ring_umem->ring_align : 1);
	if (why)
		return dvx_core_fail(nic, -EINVAL, DVX_DIAG_ARG, "dvx_cq_create", "ring: %s", why);
	why = placement(attr->dbr_umem, attr->dbr_offset, DVX_DBR_BYTES, DVX_DBR_ALIGN);
	if (why)
		return dvx_core_fail(nic, -EINVAL, DVX_DIAG_ARG, "dvx_cq_create",
				     "doorbell record: %s", why);
	if (attr->ring_umem->nic != nic || attr->dbr_umem->nic != nic)
		return bad(nic, "umem registered on another NIC");
	if (!attr->ring_umem->addr || !attr->dbr_umem->addr)
		return bad(nic, "umem has no address for the ring state");
	/* never over a live object's ring or record: the ring is written just below */
	if (dvx_core_umem_overlap(attr->ring_umem, attr->ring_offset, ring.bytes) ||
	    dvx_core_umem_overlap(attr->dbr_umem, attr->dbr_offset, DVX_DBR_BYTES) ||
	    (attr->ring_umem == attr->dbr_umem &&
	     attr->dbr_offset < attr->ring_offset + ring.bytes &&
	     attr->ring_offset < attr->dbr_offset + DVX_DBR_BYTES))
		return dvx_core_fail(nic, -EBUSY, DVX_DIAG_ARG, "dvx_cq_create",
				     "ring [%#llx, +%llu) or doorbell record at %#llx overlaps a "
				     "live CQ's or QP's range in the same umem (or each other)",
				     (unsigned long long)attr->ring_offset,
				     (unsigned long long)ring.bytes,
				     (unsigned long long)attr->dbr_offset);
	if ((!attr->ring_umem->cpu || !attr->dbr_umem->cpu) && !(attr->flags & DVX_CQ_F_PREINIT))
		return bad(nic, "ring or record not CPU-writable: initialise them and pass "
				"DVX_CQ_F_PREINIT");
	uar = attr->uar ? attr->uar : &nic->uar;
	if (!uar->live || uar->nic != nic)
		return bad(nic, "UAR not allocated on this NIC");

	memset(&ma, 0, sizeof(ma));
	ma.log_cq_size = log_depth;
	ma.uar_page = uar->page_id;
	ma.eqn = nic->eqn;
	ma.cq_umem_id = attr->ring_umem->id;
	ma.cq_umem_offset = attr->ring_offset;
	ma.dbr_umem_id = attr->dbr_umem->id;
	ma.dbr_offset = attr->dbr_offset;
	ma.cqe_size = DVX_CQE_BYTES;
	ma.oi = (attr->flags & DVX_CQ_F_OI) != 0;
	ma.cc = (attr->flags & DVX_CQ_F_COLLAPSED) != 0;
	err = dvx_mlx5_create_cq_in(in, &ma);
	if (err)
		return dvx_core_fail(nic, err, DVX_DIAG_ARG, "dvx_cq_create",
				     "CREATE_CQ: a value does not fit its field (eqn %u, uar page 0x%x)",
				     nic->eqn, uar->page_id);

	memset(&c, 0, sizeof(c));
	c.nic = nic;
	c.ring_umem = attr->ring_umem;
	c.dbr_umem = attr->dbr_umem;
	c.uar = uar;
	c.ring = attr->ring_umem->addr + attr->ring_offset;
	c.dbrec = (dvx_be32 *)(void *)(attr->dbr_umem->addr + attr->dbr_offset);
	c.ring_offset = attr->ring_offset;
	c.dbr_offset = attr->dbr_offset;
	c.depth = attr->depth;
	c.flags = attr->flags;
	err = dvx_mlx5_cq_init(&c.mcq, c.ring, ma.cc ? 0 : log_depth, c.dbrec, 0);
	if (err)
		return bad(nic, "ring or record address misaligned for the ring state");

	/* the ring starts all INVALID/owner 1, the record with consumer index 0 and the
	 * arm word of a polled CQ, before the device knows the CQ (prm 1.6, 4.4) */
	if (!(attr->flags & DVX_CQ_F_PREINIT)) {
		dvx_mlx5_cq_ring_init(c.ring, ma.cc ? 0 : log_depth);
		dvx_mlx5_cq_dbr_init(c.dbrec);
	}

	err = dvx_core_obj_create(nic, in, sizeof(in), out, sizeof(out), &c.obj);
	if (err)
		return err;
	err = dvx_mlx5_create_cq_out(out, sizeof(out), &c.cqn);
	if (err) {
		/* cannot happen after a successful create; keep the object accounted */
		dvx_core_fail(nic, err, DVX_DIAG_DEVX, "dvx_cq_create", "CREATE_CQ output unreadable");
		goto destroy;
	}
	c.obj.id = c.cqn;
	c.mcq.cqn = c.cqn;
	c.live = DVX_LIVE;
	c.ring_umem->users++;
	c.dbr_umem->users++;
	uar->users++;
	nic->nobjs++;
	*cq = c;
	dvx_core_umem_link(cq->ring_umem, &cq->ring_ext, cq->ring_offset, ring.bytes);
	dvx_core_umem_link(cq->dbr_umem, &cq->dbr_ext, cq->dbr_offset, DVX_DBR_BYTES);
	return 0;

destroy:
	{
		struct dvx_diag keep = nic->hal.diag;

		if (dvx_hal_obj_destroy(&nic->hal, &c.obj))
			dvx_hal_log(&nic->hal.log, DVX_LOG_ERR, "unwinding: DESTROY_CQ failed");
		nic->hal.diag = keep;
	}
	return err;
}

int dvx_cq_create(struct dvx_nic *nic, const struct dvx_cq_cfg *attr, struct dvx_cq *cq)
{
	struct dvx_nic *n = nic;
	int err = cq_create_do(nic, attr, cq);

	if (!err && n)
		dvx_core_ok(n);
	return err;
}

static int cq_destroy_do(struct dvx_cq *cq)
{
	struct dvx_nic *nic;
	int err;

	if (!cq || !cq->live || !cq->nic)
		return -EINVAL;
	nic = cq->nic;
	if (cq->users)
		return dvx_core_fail(nic, -EBUSY, DVX_DIAG_STATE, "dvx_cq_destroy",
				     "CQ 0x%x still bound to %u QPs", cq->cqn, cq->users);
	err = dvx_hal_obj_destroy(&nic->hal, &cq->obj);
	if (err)
		return dvx_core_hal_failed(nic, err, DVX_MLX5_CMD_DESTROY_CQ, "obj_destroy");
	cq->live = 0;
	dvx_core_umem_unlink(cq->ring_umem, &cq->ring_ext);
	dvx_core_umem_unlink(cq->dbr_umem, &cq->dbr_ext);
	cq->ring_umem->users--;
	cq->dbr_umem->users--;
	cq->uar->users--;
	nic->nobjs--;
	return 0;
}

int dvx_cq_destroy(struct dvx_cq *cq)
{
	struct dvx_nic *n = cq ? cq->nic : NULL;
	int err = cq_destroy_do(cq);

	if (!err && n)
		dvx_core_ok(n);
	return err;
}
