// SPDX-License-Identifier: MIT
/*
 * hal/nic.c - the NIC wrappers every layer above calls (dvx/hal/nic.h).
 *
 * Each wrapper checks its arguments, answers -ENOSYS for a table or an entry the
 * backend does not provide, and makes sure a failure leaves nic->diag naming the
 * operation (the backend fills in the vendor's own details: errno, DEVX status and
 * syndrome).
 */
#include <errno.h>
#include <string.h>

#include <dvx/hal/nic.h>

/* the backend's NIC table: NULL for no backend or a backend without one */
#define HAL_NIC(hal) ((hal) ? (hal)->nic : NULL)
#define NIC_OPS(nic) ((nic) && (nic)->hal ? (nic)->hal->nic : NULL)

/* After a failed backend call: keep the backend's record, or write a plain one. */
static int failed(struct dvx_hal_nic *nic, int err, const char *op)
{
	if (err >= 0)
		err = -EIO;
	if (nic && nic->diag.err == 0)
		dvx_hal_diag_set(&nic->diag, err, DVX_DIAG_OS, op, NULL);
	else if (nic)
		nic->diag.err = err;
	return err;
}

static int nosys(struct dvx_hal_nic *nic, const char *op)
{
	if (nic)
		dvx_hal_diag_set(&nic->diag, -ENOSYS, DVX_DIAG_ARG, op,
				 "the %s backend does not provide this call",
				 nic->hal && nic->hal->name ? nic->hal->name : "?");
	return -ENOSYS;
}

static int badarg(struct dvx_hal_nic *nic, const char *op, const char *what)
{
	if (nic)
		dvx_hal_diag_set(&nic->diag, -EINVAL, DVX_DIAG_ARG, op, "%s", what);
	return -EINVAL;
}

/* Call nic->hal->ops->NAME(args) with the usual checks. */
#define NIC_CALL(nic, name, ...)                                                   \
	do {                                                                       \
		const struct dvx_hal_nic_ops *ops_ = NIC_OPS(nic);                     \
		int err_;                                                          \
		if (!(nic) || !(nic)->hal)                                         \
			return -EINVAL;                                            \
		if (!ops_ || !ops_->name)                                          \
			return nosys(nic, #name);                                  \
		(nic)->diag.err = 0;                                               \
		err_ = ops_->name(__VA_ARGS__);                                    \
		return err_ ? failed(nic, err_, #name) : 0;                        \
	} while (0)

int dvx_hal_nic_list(const struct dvx_hal *hal, struct dvx_hal_nic_info *info, unsigned max,
		     unsigned *count)
{
	const struct dvx_hal_nic_ops *ops = HAL_NIC(hal);

	if (!hal || !count || (max && !info))
		return -EINVAL;
	if (!ops || !ops->nic_list)
		return -ENOSYS;
	*count = 0;
	return ops->nic_list(hal, info, max, count);
}

int dvx_hal_nic_open(const struct dvx_hal *hal, const char *name, struct dvx_hal_nic *nic)
{
	const struct dvx_hal_nic_ops *ops = HAL_NIC(hal);
	struct dvx_log log;
	int err;

	if (!hal || !name || !*name || !nic)
		return -EINVAL;
	log = nic->log;		/* the caller may set the log sink before opening */
	memset(nic, 0, sizeof(*nic));
	nic->log = log;
	nic->hal = hal;
	if (!ops || !ops->nic_open)
		return nosys(nic, "nic_open");
	err = ops->nic_open(hal, name, nic);
	if (err) {
		err = failed(nic, err, "nic_open");
		nic->priv = NULL;
		nic->hal = hal;
	}
	return err;
}

int dvx_hal_nic_close(struct dvx_hal_nic *nic)
{
	const struct dvx_hal_nic_ops *ops = NIC_OPS(nic);
	int err;

	if (!nic || !nic->hal)
		return -EINVAL;
	if (!ops || !ops->nic_close)
		return nosys(nic, "nic_close");
	nic->diag.err = 0;
	err = ops->nic_close(nic);
	if (err)
		return failed(nic, err, "nic_close");
	nic->priv = NULL;
	return 0;
}

int dvx_hal_nic_query(struct dvx_hal_nic *nic, struct dvx_hal_nic_attr *attr)
{
	if (!attr)
		return badarg(nic, "nic_query", "attr is NULL");
	NIC_CALL(nic, nic_query, nic, attr);
}

int dvx_hal_query_port(struct dvx_hal_nic *nic, uint8_t port, struct dvx_hal_port_attr *attr)
{
	if (!attr || port == 0)
		return badarg(nic, "query_port", "attr is NULL or port is 0 (ports count from 1)");
	NIC_CALL(nic, query_port, nic, port, attr);
}

uint32_t dvx_hal_port_mbps(const struct dvx_hal_port_attr *attr)
{
	uint32_t lane, lanes;

	if (!attr)
		return 0;
	switch (attr->active_speed) {
	case 1: lane = 2500; break;
	case 2: lane = 5000; break;
	case 4: lane = 10000; break;
	case 8: lane = 10000; break;
	case 16: lane = 14000; break;
	case 32: lane = 25000; break;
	case 64: lane = 50000; break;
	case 128: lane = 100000; break;
	case 0: lane = attr->active_speed_ex == 256 ? 200000 : 0; break;
	default: lane = 0; break;
	}
	switch (attr->active_width) {
	case 1: lanes = 1; break;
	case 16: lanes = 2; break;
	case 2: lanes = 4; break;
	case 4: lanes = 8; break;
	case 8: lanes = 12; break;
	default: lanes = 0; break;
	}
	return lane * lanes;
}

int dvx_hal_query_gid(struct dvx_hal_nic *nic, uint8_t port, uint32_t index,
		      struct dvx_hal_gid *gid)
{
	if (!gid || port == 0)
		return badarg(nic, "query_gid", "gid is NULL or port is 0");
	NIC_CALL(nic, query_gid, nic, port, index, gid);
}

int dvx_hal_devx_cmd(struct dvx_hal_nic *nic, const void *in, size_t inlen, void *out,
		     size_t outlen)
{
	if (!in || inlen < 8 || !out || outlen < 16)
		return badarg(nic, "devx_cmd", "mailboxes missing or too short");
	NIC_CALL(nic, devx_cmd, nic, in, inlen, out, outlen);
}

int dvx_hal_obj_create(struct dvx_hal_nic *nic, const void *in, size_t inlen, void *out,
		       size_t outlen, struct dvx_hal_obj *obj)
{
	if (!in || inlen < 8 || !out || outlen < 16 || !obj)
		return badarg(nic, "obj_create", "mailboxes missing or too short");
	NIC_CALL(nic, obj_create, nic, in, inlen, out, outlen, obj);
}

int dvx_hal_obj_modify(struct dvx_hal_nic *nic, struct dvx_hal_obj *obj, const void *in,
		       size_t inlen, void *out, size_t outlen)
{
	if (!obj || !in || inlen < 8 || !out || outlen < 16)
		return badarg(nic, "obj_modify", "object or mailboxes missing");
	NIC_CALL(nic, obj_modify, nic, obj, in, inlen, out, outlen);
}

int dvx_hal_obj_query(struct dvx_hal_nic *nic, struct dvx_hal_obj *obj, const void *in,
		      size_t inlen, void *out, size_t outlen)
{
	if (!obj || !in || inlen < 8 || !out || outlen < 16)
		return badarg(nic, "obj_query", "object or mailboxes missing");
	NIC_CALL(nic, obj_query, nic, obj, in, inlen, out, outlen);
}

int dvx_hal_obj_destroy(struct dvx_hal_nic *nic, struct dvx_hal_obj *obj)
{
	if (!obj)
		return badarg(nic, "obj_destroy", "object is NULL");
	NIC_CALL(nic, obj_destroy, nic, obj);
}

int dvx_hal_umem_reg(struct dvx_hal_nic *nic, const struct dvx_hal_umem_req *req,
		     struct dvx_hal_umem *umem)
{
	if (!req || !umem || !req->len || (req->dmabuf_fd < 0 && !req->addr))
		return badarg(nic, "umem_reg", "no memory described");
	NIC_CALL(nic, umem_reg, nic, req, umem);
}

int dvx_hal_umem_dereg(struct dvx_hal_nic *nic, struct dvx_hal_umem *umem)
{
	if (!umem)
		return badarg(nic, "umem_dereg", "umem is NULL");
	NIC_CALL(nic, umem_dereg, nic, umem);
}

int dvx_hal_uar_alloc(struct dvx_hal_nic *nic, enum dvx_uar_type type, struct dvx_hal_uar *uar)
{
	if (!uar || (unsigned)type > DVX_UAR_BF)
		return badarg(nic, "uar_alloc", "uar is NULL or type unknown");
	NIC_CALL(nic, uar_alloc, nic, type, uar);
}

int dvx_hal_uar_free(struct dvx_hal_nic *nic, struct dvx_hal_uar *uar)
{
	if (!uar)
		return badarg(nic, "uar_free", "uar is NULL");
	NIC_CALL(nic, uar_free, nic, uar);
}

int dvx_hal_pd_alloc(struct dvx_hal_nic *nic, struct dvx_hal_pd *pd)
{
	if (!pd)
		return badarg(nic, "pd_alloc", "pd is NULL");
	NIC_CALL(nic, pd_alloc, nic, pd);
}

int dvx_hal_pd_free(struct dvx_hal_nic *nic, struct dvx_hal_pd *pd)
{
	if (!pd)
		return badarg(nic, "pd_free", "pd is NULL");
	NIC_CALL(nic, pd_free, nic, pd);
}

int dvx_hal_eqn_query(struct dvx_hal_nic *nic, uint32_t vector, uint32_t *eqn)
{
	if (!eqn)
		return badarg(nic, "eqn_query", "eqn is NULL");
	NIC_CALL(nic, eqn_query, nic, vector, eqn);
}

int dvx_hal_mr_reg(struct dvx_hal_nic *nic, struct dvx_hal_pd *pd,
		   const struct dvx_hal_mr_req *req, struct dvx_hal_mr *mr)
{
	if (!pd || !req || !mr || !req->len ||
	    ((req->flags & DVX_MR_DMABUF) ? req->dmabuf_fd < 0 : !req->addr))
		return badarg(nic, "mr_reg", "no memory described");
	NIC_CALL(nic, mr_reg, nic, pd, req, mr);
}

int dvx_hal_mr_dereg(struct dvx_hal_nic *nic, struct dvx_hal_mr *mr)
{
	if (!mr)
		return badarg(nic, "mr_dereg", "mr is NULL");
	NIC_CALL(nic, mr_dereg, nic, mr);
}

int dvx_hal_roce_rmac(struct dvx_hal_nic *nic, struct dvx_hal_pd *pd, uint8_t port,
		      uint32_t sgid_index, const uint8_t dgid[16], uint8_t mac[6])
{
	if (!pd || !dgid || !mac || port == 0)
		return badarg(nic, "roce_rmac", "missing argument");
	NIC_CALL(nic, roce_rmac, nic, pd, port, sgid_index, dgid, mac);
}

void dvx_hal_nic_progress(struct dvx_hal_nic *nic)
{
	const struct dvx_hal_nic_ops *ops = NIC_OPS(nic);

	if (ops && ops->nic_progress)
		ops->nic_progress(nic);
}

void dvx_hal_nic_kick(struct dvx_hal_nic *nic)
{
	const struct dvx_hal_nic_ops *ops = NIC_OPS(nic);

	if (ops && ops->nic_kick)
		ops->nic_kick(nic);
}

int dvx_hal_nic_kicks(const struct dvx_hal_nic *nic)
{
	const struct dvx_hal_nic_ops *ops = NIC_OPS(nic);

	return ops && ops->nic_kick ? 1 : 0;
}

int dvx_hal_uar_mmap_is_nc(uint64_t mmap_off, uint64_t page_size)
{
	if (!page_size)
		return 0;
	return ((mmap_off / page_size) >> 8 & 0xffu) == 3;
}
