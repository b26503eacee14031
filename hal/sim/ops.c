// SPDX-License-Identifier: MIT
/*
 * hal/sim/ops.c - the sim's hal ops: devices, queries, DEVX mailboxes, umems, UARs,
 * PDs, MRs, the RoCE MAC, progress, and the host-side ops (shared with the other
 * backends through hal/hostmem.c and hal/net.c).
 *
 * Errors are reported as the linux backend reports them for the same failure: an
 * errno with dev->diag filled; a refused DEVX command keeps its status and syndrome
 * (dvx_hal_diag_devx()), so the status translation is the hardware one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../host_priv.h"
#include "ctrl.h"

/* rdma-core answers a failed DEVX command with this errno (the status says why) */
#define SIM_DEVX_ERRNO EREMOTEIO

static struct sim_fabric *hal_fab(const struct dvx_hal *hal)
{
	return hal ? (struct sim_fabric *)hal->ctx : NULL;
}

static void copy_str(char *dst, size_t n, const char *src)
{
	size_t l = strlen(src);

	if (l >= n)
		l = n - 1;
	memcpy(dst, src, l);
	dst[l] = '\0';
}

static int arg_fail(struct dvx_hal_nic *dev, int err, const char *op, const char *what)
{
	return dvx_hal_diag_set(&dev->diag, err, DVX_DIAG_ARG, op, "%s", what);
}

static int os_fail(struct dvx_hal_nic *dev, int err, const char *op, const char *what)
{
	dvx_hal_diag_set(&dev->diag, err, DVX_DIAG_OS, op, "%s", what);
	dev->diag.sys_errno = -err;
	return err;
}

/* the opened NIC of @dev, locked; NULL (diag set) if @dev is not open on a sim */
static struct sim_nic *lock_nic(struct dvx_hal_nic *dev, const char *op)
{
	struct sim_nic *nic = dev->priv;

	if (!nic || !nic->fab || nic->fab != hal_fab(dev->hal)) {
		arg_fail(dev, -EINVAL, op, "device is not open on this sim");
		return NULL;
	}
	pthread_mutex_lock(&nic->fab->lock);
	return nic;
}

/* lock_nic() for a command: the doorbells written before it are taken first (posted
 * MMIO writes reach the NIC ahead of the command interface's) */
static struct sim_nic *lock_cmd(struct dvx_hal_nic *dev, const char *op)
{
	struct sim_nic *nic = lock_nic(dev, op);

	if (nic)
		dvx_sim_nic_doorbells(nic->fab, nic);
	return nic;
}

static void unlock_nic(struct sim_nic *nic)
{
	pthread_mutex_unlock(&nic->fab->lock);
}

/* ---- devices ------------------------------------------------------------------- */

static void fill_info(const struct sim_nic *nic, struct dvx_hal_nic_info *info)
{
	const struct dvx_sim_nic_cfg *c = &nic->cfg;

	memset(info, 0, sizeof(*info));
	copy_str(info->name, sizeof(info->name), c->name);
	copy_str(info->pci, sizeof(info->pci), c->pci);
	copy_str(info->driver, sizeof(info->driver), "mlx5_core");
	if (c->port[0].link_layer == DVX_LINK_LAYER_ETHERNET)
		snprintf(info->netdev, sizeof(info->netdev), "simeth%u", nic->index);
	info->numa_node = c->numa_node;
	info->vendor_id = 0x15b3;
	info->device_id = c->vendor_part_id;
	info->node_guid = c->node_guid;
	info->nports = c->nports;
	info->is_mlx5 = 1;
}

static int sim_dev_list(const struct dvx_hal *hal, struct dvx_hal_nic_info *info, unsigned max,
			unsigned *count)
{
	struct sim_fabric *f = hal_fab(hal);
	uint32_t i;

	if (!f)
		return -EINVAL;
	pthread_mutex_lock(&f->lock);
	for (i = 0; i < f->nnics && i < max; i++)
		fill_info(&f->nics[i], &info[i]);
	*count = f->nnics;
	pthread_mutex_unlock(&f->lock);
	return 0;
}

/* "0000:3b:00.0" or "3b:00.0" against a configured (full) address */
static bool pci_match(const char *cfg, const char *name)
{
	if (!cfg[0])
		return false;
	if (!strcmp(cfg, name))
		return true;
	return strlen(cfg) == strlen(name) + 5 && !strncmp(cfg, "0000:", 5) &&
	       !strcmp(cfg + 5, name);
}

static int sim_dev_open(const struct dvx_hal *hal, const char *name, struct dvx_hal_nic *dev)
{
	struct sim_fabric *f = hal_fab(hal);
	struct sim_nic *nic = NULL;
	uint32_t i;
	int err = 0;

	if (!f)
		return arg_fail(dev, -EINVAL, "dev_open", "the hal is not a software NIC's");
	pthread_mutex_lock(&f->lock);
	for (i = 0; i < f->nnics && !nic; i++)
		if (!strcmp(f->nics[i].cfg.name, name) || pci_match(f->nics[i].cfg.pci, name))
			nic = &f->nics[i];
	if (!nic) {
		err = dvx_hal_diag_set(&dev->diag, -ENODEV, DVX_DIAG_ARG, "nic_open",
				       "no sim NIC named or at \"%s\"", name);
	} else if (!nic->cfg.devx) {
		err = os_fail(dev, -EOPNOTSUPP, "nic_open",
			      "DEVX open failed: no DEVX support or no permission (sim NIC "
			      "configured without DEVX)");
	} else {
		nic->open_count++;
		dev->priv = nic;
		fill_info(nic, &dev->info);
	}
	pthread_mutex_unlock(&f->lock);
	return err;
}

static int sim_dev_close(struct dvx_hal_nic *dev)
{
	struct sim_nic *nic = lock_nic(dev, "nic_close");

	if (!nic)
		return -EINVAL;
	if (nic->open_count)
		nic->open_count--;
	unlock_nic(nic);
	return 0;
}

static int sim_query_device(struct dvx_hal_nic *dev, struct dvx_hal_nic_attr *a)
{
	struct sim_nic *nic = lock_nic(dev, "nic_query");
	const struct dvx_sim_fabric_cfg *fc;
	const struct dvx_sim_nic_cfg *c;

	if (!nic)
		return -EINVAL;
	c = &nic->cfg;
	fc = &nic->fab->cfg;
	memset(a, 0, sizeof(*a));
	copy_str(a->fw_ver, sizeof(a->fw_ver), c->fw_ver);
	a->node_guid = c->node_guid;
	a->sys_image_guid = c->node_guid;
	a->max_mr_size = ~0ull;
	a->page_size_cap = ~0xfffull;
	a->vendor_id = 0x15b3;
	a->vendor_part_id = c->vendor_part_id;
	a->max_qp = c->log_max_qp < 31 && (1u << c->log_max_qp) < fc->max_qps ?
			    1u << c->log_max_qp : fc->max_qps;
	a->max_qp_wr = 1u << c->log_max_qp_sz;
	a->max_cq = c->log_max_cq < 31 && (1u << c->log_max_cq) < fc->max_cqs ?
			    1u << c->log_max_cq : fc->max_cqs;
	a->max_cqe = (uint32_t)((1ull << c->log_max_cq_sz) - 1);
	a->max_mr = c->log_max_mr < 31 && (1u << c->log_max_mr) < fc->max_mrs ?
			    1u << c->log_max_mr : fc->max_mrs;
	a->max_pd = fc->max_pds;
	a->max_qp_rd_atom = 1u << c->log_max_ra_res_qp;
	a->max_qp_init_rd_atom = 1u << c->log_max_ra_req_qp;
	a->phys_port_cnt = c->nports;
	a->atomic_cap = c->atomic ? 1 : 0;
	unlock_nic(nic);
	return 0;
}

static int sim_query_port(struct dvx_hal_nic *dev, uint8_t port, struct dvx_hal_port_attr *a)
{
	struct sim_nic *nic = lock_nic(dev, "query_port");
	const struct dvx_sim_port_cfg *p;
	bool up;

	if (!nic)
		return -EINVAL;
	if (port < 1 || port > nic->cfg.nports) {
		unlock_nic(nic);
		return os_fail(dev, -EINVAL, "query_port", "no such port");
	}
	p = &nic->cfg.port[port - 1];
	up = p->up && !nic->fab->faults.link_down;
	memset(a, 0, sizeof(*a));
	a->state = up ? 4 : 1;
	a->phys_state = up ? 5 : 3;
	a->link_layer = p->link_layer;
	a->active_mtu = p->active_mtu;
	a->max_mtu = 5;
	a->active_width = 2;
	a->active_speed = 128;
	a->gid_tbl_len = dvx_sim_gid_tbl_len(nic, port);
	if (p->link_layer == DVX_LINK_LAYER_IB) {
		a->lid = p->lid;
		a->sm_lid = 1;
		a->pkey_tbl_len = 128;
	} else {
		a->pkey_tbl_len = 1;
	}
	unlock_nic(nic);
	return 0;
}

static int sim_query_gid(struct dvx_hal_nic *dev, uint8_t port, uint32_t index,
			 struct dvx_hal_gid *gid)
{
	struct sim_nic *nic = lock_nic(dev, "query_gid");
	int err = 0;

	if (!nic)
		return -EINVAL;
	memset(gid, 0, sizeof(*gid));
	gid->index = index;
	if (port < 1 || port > nic->cfg.nports || index >= dvx_sim_gid_tbl_len(nic, port)) {
		err = os_fail(dev, -EINVAL, "query_gid", "no such port or GID index");
	} else if (dvx_sim_gid_of(nic, port, index, gid->raw, &gid->type)) {
		gid->valid = 1;
		if (nic->cfg.port[port - 1].link_layer == DVX_LINK_LAYER_ETHERNET)
			snprintf(gid->netdev, sizeof(gid->netdev), "simeth%u", nic->index);
	}
	unlock_nic(nic);
	return err;
}

/* ---- DEVX mailboxes ------------------------------------------------------------- */

static void clear_out_hdr(void *out, size_t outlen)
{
	memset(out, 0, outlen < 16 ? outlen : 16);
}

static int devx_result(struct dvx_hal_nic *dev, const char *op, int rc, const void *in,
		       const void *out)
{
	if (rc == 0)
		return 0;
	return dvx_hal_diag_devx(&dev->diag, op, in, out, rc < 0 ? -rc : SIM_DEVX_ERRNO);
}

static int sim_devx_cmd(struct dvx_hal_nic *dev, const void *in, size_t inlen, void *out,
			size_t outlen)
{
	struct sim_nic *nic = lock_cmd(dev, "devx_cmd");
	int rc;

	if (!nic)
		return -EINVAL;
	clear_out_hdr(out, outlen);
	rc = dvx_sim_cmd_general(nic, in, inlen, out, outlen);
	unlock_nic(nic);
	return devx_result(dev, "devx_cmd", rc, in, out);
}

static int sim_obj_create(struct dvx_hal_nic *dev, const void *in, size_t inlen, void *out,
			  size_t outlen, struct dvx_hal_obj *obj)
{
	struct sim_nic *nic = lock_cmd(dev, "obj_create");
	int rc;

	if (!nic)
		return -EINVAL;
	clear_out_hdr(out, outlen);
	obj->priv = NULL;
	rc = dvx_sim_cmd_create(nic, in, inlen, out, outlen, obj);
	unlock_nic(nic);
	return devx_result(dev, "obj_create", rc, in, out);
}

static int sim_obj_modify(struct dvx_hal_nic *dev, struct dvx_hal_obj *obj, const void *in,
			  size_t inlen, void *out, size_t outlen)
{
	struct sim_nic *nic;
	int rc;

	if (!obj->priv)
		return arg_fail(dev, -EINVAL, "obj_modify", "object was not created");
	nic = lock_cmd(dev, "obj_modify");
	if (!nic)
		return -EINVAL;
	clear_out_hdr(out, outlen);
	rc = dvx_sim_cmd_modify(nic, obj, in, inlen, out, outlen);
	unlock_nic(nic);
	return devx_result(dev, "obj_modify", rc, in, out);
}

static int sim_obj_query(struct dvx_hal_nic *dev, struct dvx_hal_obj *obj, const void *in,
			 size_t inlen, void *out, size_t outlen)
{
	struct sim_nic *nic;
	int rc;

	if (!obj->priv)
		return arg_fail(dev, -EINVAL, "obj_query", "object was not created");
	nic = lock_cmd(dev, "obj_query");
	if (!nic)
		return -EINVAL;
	clear_out_hdr(out, outlen);
	rc = dvx_sim_cmd_query(nic, obj, in, inlen, out, outlen);
	unlock_nic(nic);
	return devx_result(dev, "obj_query", rc, in, out);
}

static int sim_obj_destroy(struct dvx_hal_nic *dev, struct dvx_hal_obj *obj)
{
	uint8_t in[16], out[16];
	struct sim_nic *nic;
	int rc;

	if (!obj->priv)
		return arg_fail(dev, -EINVAL, "obj_destroy",
				"object was not created or is already destroyed");
	nic = lock_cmd(dev, "obj_destroy");
	if (!nic)
		return -EINVAL;
	rc = dvx_sim_cmd_destroy(nic, obj, in, out);
	unlock_nic(nic);
	if (rc)	/* the object stays, as when the kernel's destroy fails */
		return devx_result(dev, "obj_destroy", rc, in, out);
	obj->priv = NULL;
	return 0;
}

/* ---- umems --------------------------------------------------------------------- */

#define SIM_ACCESS_KNOWN                                                              \
	(DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_WRITE | DVX_ACCESS_REMOTE_READ |   \
	 DVX_ACCESS_REMOTE_ATOMIC | DVX_ACCESS_RELAXED_ORDERING)

#define SIM_UMEM_ACCESS                                                               \
	(DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_WRITE | DVX_ACCESS_REMOTE_READ)

/* resolve a dma-buf registration to host bytes; 0 or a negative errno (diag set) */
static int dmabuf_range(struct dvx_hal_nic *dev, struct sim_nic *nic, const char *op, int fd,
			uint64_t off, uint64_t len, struct sim_dmabuf **out, uint8_t **base)
{
	struct sim_dmabuf *d = dvx_sim_dmabuf_find(nic->fab, fd);

	if (!d)
		return os_fail(dev, -EBADF, op,
			       "dma-buf fd not exported by this sim (dvx_sim_dmabuf_export)");
	if (off > d->len || len > d->len - off)
		return os_fail(dev, -EINVAL, op, "range beyond the dma-buf");
	*out = d;
	*base = d->dma ? NULL : d->base + off;
	return 0;
}

/*
 * The page size the kernel gives a DEVX umem, as drivers/infiniband/hw/mlx5/devx.c
 * (devx_umem_find_best_pgsize()) chooses it: the page sizes the caller allows (rdma-core's
 * plain registration allows every size from 4 KiB), none above the umem's length rounded
 * up to a power of two (or the CPU page), the largest left; then halved while the umem
 * does not start on a page or its length is not a whole number of pages, down to the CPU
 * page, below which the umem may start inside its first page. The sim takes the bytes
 * as physically contiguous, so it picks the largest page the kernel could pick (what it
 * does for huge pages and GPU memory): the strictest placement rule hardware can show.
 * @dma_addr is where the umem starts as the device sees it: the host address, or the
 * offset into a dma-buf (whose first byte is taken as aligned to any page).
 */
static int umem_pages(uint64_t dma_addr, uint64_t len, uint64_t bitmap, uint64_t *page,
		      uint64_t *page_off)
{
	uint64_t cpu_page = (uint64_t)sysconf(_SC_PAGESIZE), cap = cpu_page, p;

	if (!bitmap)
		bitmap = ~0xfffull;
	while (cap < len && cap < (1ull << 62))
		cap <<= 1;
	bitmap &= ~0xfffull & (cap | (cap - 1));
	if (!bitmap)
		return -EINVAL;
	for (p = 1ull << 62; !(bitmap & p); p >>= 1)
		;
	while ((dma_addr % p || len % p) && p > cpu_page)
		p >>= 1;
	*page = p;
	*page_off = dma_addr % p;
	return 0;
}

static int sim_umem_reg(struct dvx_hal_nic *dev, const struct dvx_hal_umem_req *req,
			struct dvx_hal_umem *umem)
{
	struct sim_nic *nic = lock_nic(dev, "umem_reg");
	struct sim_dmabuf *d = NULL;
	struct sim_umem *u = NULL;
	uint8_t *base = req->addr;
	uint64_t page, page_off;
	uint32_t i;
	int err = 0;

	if (!nic)
		return -EINVAL;
	memset(umem, 0, sizeof(*umem));
	/* the kernel's DEVX umem takes local write, remote write and remote read only
	 * (devx_umem_get()), remote write needing local write (ib_check_mr_access()) */
	if ((req->access & ~(uint32_t)SIM_UMEM_ACCESS) ||
	    ((req->access & DVX_ACCESS_REMOTE_WRITE) && !(req->access & DVX_ACCESS_LOCAL_WRITE))) {
		err = os_fail(dev, -EINVAL, "umem_reg", "access bits a DEVX umem does not take");
		goto unlock;
	}
	if (umem_pages(req->dmabuf_fd >= 0 ? req->dmabuf_offset : (uint64_t)(uintptr_t)req->addr,
		       req->len, req->pgsz_bitmap, &page, &page_off)) {
		err = os_fail(dev, -EINVAL, "umem_reg",
			      "no page size >= 4 KiB in pgsz_bitmap fits the umem");
		goto unlock;
	}
	if (req->dmabuf_fd >= 0) {
		err = dmabuf_range(dev, nic, "umem_reg", req->dmabuf_fd, req->dmabuf_offset,
				   req->len, &d, &base);
		if (err)
			goto unlock;
	} else if ((uintptr_t)req->addr + req->len < (uintptr_t)req->addr) {
		err = os_fail(dev, -EFAULT, "umem_reg", "range wraps");
		goto unlock;
	}
	for (i = 0; i < nic->fab->cfg.max_umems && !u; i++)
		if (!nic->umems[i].id)
			u = &nic->umems[i];
	if (!u) {
		err = os_fail(dev, -ENOMEM, "umem_reg", "umem table full (max_umems)");
		goto unlock;
	}
	if (d && d->dma) {
		/* device memory: the sim works on its own host copy, filled and drained
		 * through the caller's DMA callbacks (dvx_sim_dma_pull/push) */
		void *shadow = NULL;

		if (posix_memalign(&shadow, 4096, (size_t)req->len)) {
			err = os_fail(dev, -ENOMEM, "umem_reg", "no host memory for the DMA copy");
			goto unlock;
		}
		memset(shadow, 0, (size_t)req->len);
		base = shadow;
	}
	memset(u, 0, sizeof(*u));
	u->id = dvx_sim_make_id(nic, (uint32_t)(u - nic->umems), nic->fab->cfg.max_umems, 24);
	if (d && d->dma) {
		u->dma = d->dma;
		u->dptr = d->dptr + req->dmabuf_offset;
	}
	u->access = req->access;
	u->base = base;
	u->len = req->len;
	u->page = page;
	u->page_off = page_off;
	u->dmabuf = d;
	if (d)
		d->users++;
	umem->priv = u;
	umem->id = u->id;
	umem->len = req->len;
	umem->via_dmabuf = d ? 1 : 0;
unlock:
	unlock_nic(nic);
	return err;
}

static int sim_umem_dereg(struct dvx_hal_nic *dev, struct dvx_hal_umem *umem)
{
	struct sim_nic *nic;
	struct sim_umem *u = umem->priv;
	int err = 0;

	if (!u)
		return arg_fail(dev, -EINVAL, "umem_dereg", "umem was not registered");
	nic = lock_nic(dev, "umem_dereg");
	if (!nic)
		return -EINVAL;
	if (u != dvx_sim_umem_find(nic, umem->id)) {
		err = arg_fail(dev, -EINVAL, "umem_dereg", "umem was not registered here");
	} else if (u->users) {
		err = os_fail(dev, -EBUSY, "umem_dereg", "a CQ or QP still uses the umem");
	} else {
		if (u->dmabuf)
			dvx_sim_dmabuf_put(u->dmabuf);
		if (u->dma)
			free(u->base);	/* the DMA copy */
		memset(u, 0, sizeof(*u));
		umem->priv = NULL;
	}
	unlock_nic(nic);
	return err;
}

/* ---- UARs ---------------------------------------------------------------------- */

static int sim_uar_alloc(struct dvx_hal_nic *dev, enum dvx_uar_type type, struct dvx_hal_uar *uar)
{
	struct sim_nic *nic = lock_nic(dev, "uar_alloc");
	struct sim_fabric *f;
	struct sim_uar *u = NULL;
	uint32_t i;
	int err = 0;

	if (!nic)
		return -EINVAL;
	f = nic->fab;
	memset(uar, 0, sizeof(*uar));
	if (type == DVX_UAR_BF && !nic->cfg.bf) {
		err = os_fail(dev, -EOPNOTSUPP, "uar_alloc", "the NIC has no BlueFlame");
		goto unlock;
	}
	if (type == DVX_UAR_NC_SHARED && nic->shared_uar) {
		/* the per-context NC singleton: every caller gets the same page */
		u = &nic->uars[nic->shared_uar - 1];
		u->refs++;
		goto fill;
	}
	for (i = 0; i < f->cfg.max_uars && !u; i++)
		if (!nic->uars[i].page_id)
			u = &nic->uars[i];
	if (!u) {
		err = os_fail(dev, -ENOMEM, "uar_alloc", "UAR table full (max_uars)");
		goto unlock;
	}
	i = (uint32_t)(u - nic->uars);
	memset(u, 0, sizeof(*u));
	u->page = f->uar_pages + ((size_t)nic->index * f->cfg.max_uars + i) * DVX_SIM_UAR_PAGE_SIZE;
	memset(u->page, 0, DVX_SIM_UAR_PAGE_SIZE);
	u->type = (uint32_t)type;
	u->reg_off = DVX_SIM_UAR_REG_OFFSET;
	u->refs = 1;
	u->page_id = dvx_sim_make_id(nic, i, f->cfg.max_uars, 24);
	if (i >= nic->uar_hi)
		nic->uar_hi = i + 1;
	if (type == DVX_UAR_NC_SHARED)
		nic->shared_uar = i + 1;
fill:
	uar->priv = u;
	uar->base_addr = u->page;
	uar->reg_addr = u->page + u->reg_off;
	uar->page_id = u->page_id;
	uar->type = u->type;
	uar->nc = u->type != DVX_UAR_BF;
unlock:
	unlock_nic(nic);
	return err;
}

static int sim_uar_free(struct dvx_hal_nic *dev, struct dvx_hal_uar *uar)
{
	struct sim_nic *nic;
	struct sim_uar *u = uar->priv;
	int err = 0;

	if (!u)
		return arg_fail(dev, -EINVAL, "uar_free", "UAR was not allocated");
	nic = lock_nic(dev, "uar_free");
	if (!nic)
		return -EINVAL;
	if (u != dvx_sim_uar_find(nic, uar->page_id)) {
		err = arg_fail(dev, -EINVAL, "uar_free", "UAR was not allocated here");
	} else {
		if (--u->refs == 0) {
			if (nic->shared_uar == (uint32_t)(u - nic->uars) + 1)
				nic->shared_uar = 0;
			memset(u->page, 0, DVX_SIM_UAR_PAGE_SIZE);
			memset(u, 0, sizeof(*u));
			while (nic->uar_hi && !nic->uars[nic->uar_hi - 1].page_id)
				nic->uar_hi--;
		}
		uar->priv = NULL;
	}
	unlock_nic(nic);
	return err;
}

/* ---- PDs, EQs ------------------------------------------------------------------- */

static int sim_pd_alloc(struct dvx_hal_nic *dev, struct dvx_hal_pd *pd)
{
	struct sim_nic *nic = lock_nic(dev, "pd_alloc");
	uint32_t i, n = 0, max;
	struct sim_pd *p = NULL;
	int err = 0;

	if (!nic)
		return -EINVAL;
	memset(pd, 0, sizeof(*pd));
	max = nic->fab->cfg.max_pds;
	for (i = 0; i < nic->fab->cfg.max_pds; i++) {
		if (nic->pds[i].pdn)
			n++;
		else if (!p)
			p = &nic->pds[i];
	}
	if (nic->cfg.log_max_pd < 31 && (1u << nic->cfg.log_max_pd) < max)
		max = 1u << nic->cfg.log_max_pd;
	if (!p || n >= max) {
		err = os_fail(dev, -ENOMEM, "pd_alloc", "PD table full");
		goto unlock;
	}
	memset(p, 0, sizeof(*p));
	p->pdn = dvx_sim_make_id(nic, (uint32_t)(p - nic->pds), nic->fab->cfg.max_pds, 24);
	pd->priv = p;
	pd->pdn = p->pdn;
unlock:
	unlock_nic(nic);
	return err;
}

static int sim_pd_free(struct dvx_hal_nic *dev, struct dvx_hal_pd *pd)
{
	struct sim_nic *nic;
	struct sim_pd *p = pd->priv;
	int err = 0;

	if (!p)
		return arg_fail(dev, -EINVAL, "pd_free", "PD was not allocated");
	nic = lock_nic(dev, "pd_free");
	if (!nic)
		return -EINVAL;
	if (p != dvx_sim_pd_find(nic, pd->pdn))
		err = arg_fail(dev, -EINVAL, "pd_free", "PD was not allocated here");
	else if (p->mrs)
		err = os_fail(dev, -EBUSY, "pd_free", "MRs still use the PD");
	else {
		memset(p, 0, sizeof(*p));
		pd->priv = NULL;
	}
	unlock_nic(nic);
	return err;
}

static int sim_eqn_query(struct dvx_hal_nic *dev, uint32_t vector, uint32_t *eqn)
{
	if (!dev->priv)
		return arg_fail(dev, -EINVAL, "eqn_query", "device is not open");
	if (vector >= DVX_SIM_NUM_EQS)
		return os_fail(dev, -EINVAL, "eqn_query", "no such completion vector");
	*eqn = DVX_SIM_EQN_BASE + vector;
	return 0;
}

/* ---- MRs ----------------------------------------------------------------------- */

static int sim_mr_reg(struct dvx_hal_nic *dev, struct dvx_hal_pd *pd,
		      const struct dvx_hal_mr_req *req, struct dvx_hal_mr *mr)
{
	struct sim_nic *nic = lock_nic(dev, "mr_reg");
	struct sim_dmabuf *d = NULL;
	struct sim_mr *m = NULL;
	uint8_t *base = req->addr;
	uint32_t i, n = 0, max, id;
	struct sim_pd *p;
	int err = 0;

	if (!nic)
		return -EINVAL;
	memset(mr, 0, sizeof(*mr));
	p = pd->priv;
	if (!p || p != dvx_sim_pd_find(nic, pd->pdn)) {
		err = arg_fail(dev, -EINVAL, "mr_reg", "PD was not allocated on this device");
		goto unlock;
	}
	if ((req->flags & DVX_MR_DATA_DIRECT) && !(req->flags & DVX_MR_DMABUF)) {
		err = arg_fail(dev, -EINVAL, "mr_reg", "Data Direct applies to dma-buf MRs only");
		goto unlock;
	}
	/* ibv_reg_mr: remote write/atomic need local write */
	if ((req->access & ~(uint32_t)SIM_ACCESS_KNOWN) ||
	    ((req->access & (DVX_ACCESS_REMOTE_WRITE | DVX_ACCESS_REMOTE_ATOMIC)) &&
	     !(req->access & DVX_ACCESS_LOCAL_WRITE))) {
		err = os_fail(dev, -EINVAL, "mr_reg", "invalid access flags");
		goto unlock;
	}
	if (req->iova + req->len < req->iova) {
		err = os_fail(dev, -EINVAL, "mr_reg", "iova range wraps");
		goto unlock;
	}
	if (req->flags & DVX_MR_DMABUF) {
		err = dmabuf_range(dev, nic, "mr_reg", req->dmabuf_fd, req->dmabuf_offset,
				   req->len, &d, &base);
		if (err)
			goto unlock;
	}
	max = nic->fab->cfg.max_mrs;
	for (i = 0; i < nic->fab->cfg.max_mrs; i++) {
		if (nic->mrs[i].lkey)
			n++;
		else if (!m)
			m = &nic->mrs[i];
	}
	if (nic->cfg.log_max_mr < 31 && (1u << nic->cfg.log_max_mr) < max)
		max = 1u << nic->cfg.log_max_mr;
	if (!m || n >= max) {
		err = os_fail(dev, -ENOMEM, "mr_reg", "MR table full");
		goto unlock;
	}
	memset(m, 0, sizeof(*m));
	id = dvx_sim_make_id(nic, (uint32_t)(m - nic->mrs), nic->fab->cfg.max_mrs, 24);
	m->lkey = (id << 8) | ((id & 0xff) ^ 0x5a);	/* index << 8 | key byte, as mlx5 */
	m->rkey = m->lkey;
	m->pdn = p->pdn;
	m->access = req->access;
	m->iova = req->iova;
	m->len = req->len;
	m->base = base;
	m->dmabuf = d;
	m->pd = p;
	if (d && d->dma) {
		/* device memory: the data path moves its bytes through the DMA callbacks */
		m->dma = d->dma;
		m->dptr = d->dptr + req->dmabuf_offset;
	}
	p->mrs++;
	if (d)
		d->users++;
	mr->priv = m;
	mr->lkey = m->lkey;
	mr->rkey = m->rkey;
	mr->addr = req->addr;
	mr->len = req->len;
	mr->iova = req->iova;
	mr->access = req->access;
	mr->via_dmabuf = d ? 1 : 0;
unlock:
	unlock_nic(nic);
	return err;
}

static int sim_mr_dereg(struct dvx_hal_nic *dev, struct dvx_hal_mr *mr)
{
	struct sim_nic *nic;
	struct sim_mr *m = mr->priv;
	int err = 0;

	if (!m)
		return arg_fail(dev, -EINVAL, "mr_dereg", "MR was not registered");
	nic = lock_nic(dev, "mr_dereg");
	if (!nic)
		return -EINVAL;
	if (m != dvx_sim_mr_find(nic, mr->lkey)) {
		err = arg_fail(dev, -EINVAL, "mr_dereg", "MR was not registered here");
	} else {
		m->pd->mrs--;
		if (m->dmabuf)
			dvx_sim_dmabuf_put(m->dmabuf);
		memset(m, 0, sizeof(*m));
		mr->priv = NULL;
	}
	unlock_nic(nic);
	return err;
}

/* ---- RoCE MAC -------------------------------------------------------------------- */

static int sim_roce_rmac(struct dvx_hal_nic *dev, struct dvx_hal_pd *pd, uint8_t port,
			 uint32_t sgid_index, const uint8_t dgid[16], uint8_t mac[6])
{
	struct sim_nic *nic = lock_nic(dev, "roce_rmac");
	struct sim_fabric *f;
	uint32_t i, p;
	int err = -EHOSTUNREACH;

	if (!nic)
		return -EINVAL;
	f = nic->fab;
	if (!pd->priv || pd->priv != dvx_sim_pd_find(nic, pd->pdn)) {
		err = arg_fail(dev, -EINVAL, "roce_rmac", "PD was not allocated");
		goto unlock;
	}
	if (port < 1 || port > nic->cfg.nports ||
	    nic->cfg.port[port - 1].link_layer != DVX_LINK_LAYER_ETHERNET ||
	    sgid_index >= dvx_sim_gid_tbl_len(nic, port)) {
		err = os_fail(dev, -EINVAL, "roce_rmac", "not a RoCE port or no such GID index");
		goto unlock;
	}
	for (i = 0; i < f->nnics && err; i++)
		for (p = 1; p <= f->nics[i].cfg.nports && err; p++)
			if (f->nics[i].cfg.port[p - 1].link_layer == DVX_LINK_LAYER_ETHERNET &&
			    dvx_sim_port_has_gid(&f->nics[i], p, dgid)) {
				memcpy(mac, f->nics[i].cfg.port[p - 1].mac, 6);
				err = 0;
			}
	/* a NIC of another process, across the wire */
	if (err && f->wire_ops && f->wire_ops->rmac(f, dgid, mac))
		err = 0;
	if (err)
		os_fail(dev, err, "roce_rmac", "ibv_create_ah (neighbour unresolved?)");
unlock:
	unlock_nic(nic);
	return err;
}

/* ---- progress and host side -------------------------------------------------------- */

static void sim_dev_progress(struct dvx_hal_nic *dev)
{
	struct sim_fabric *f = hal_fab(dev->hal);

	if (f)
		dvx_sim_help(f);
}

/* a doorbell was written: wake the progress thread if it sleeps (fabric.c) */
static void sim_dev_kick(struct dvx_hal_nic *dev)
{
	struct sim_fabric *f = hal_fab(dev->hal);

	if (f)
		dvx_sim_kick(f);
}

static int sim_pci_list(const struct dvx_hal *hal, uint32_t class_mask, uint32_t class_value,
			struct dvx_hal_pci_dev *devs, unsigned max, unsigned *count)
{
	struct sim_fabric *f = hal_fab(hal);
	unsigned n = 0;
	uint32_t i;

	if (!f)
		return -EINVAL;
	pthread_mutex_lock(&f->lock);
	for (i = 0; i < f->ngpus; i++) {
		const struct dvx_hal_gpu_attr *a = &f->gpus[i].cfg.attr;

		if ((0x030200 & class_mask) != class_value)
			continue;
		if (n < max) {
			memset(&devs[n], 0, sizeof(devs[n]));
			copy_str(devs[n].pci, sizeof(devs[n].pci), a->pci);
			devs[n].vendor_id = 0x10de;
			devs[n].device_id = 0x2335;	/* an H200 */
			devs[n].class_code = 0x030200;
			devs[n].numa_node = -1;
		}
		n++;
	}
	for (i = 0; i < f->nnics; i++) {
		const struct dvx_sim_nic_cfg *c = &f->nics[i].cfg;
		uint32_t cls = c->port[0].link_layer == DVX_LINK_LAYER_IB ? 0x020700 : 0x020000;

		if ((cls & class_mask) != class_value || !c->pci[0])
			continue;
		if (n < max) {
			memset(&devs[n], 0, sizeof(devs[n]));
			copy_str(devs[n].pci, sizeof(devs[n].pci), c->pci);
			devs[n].vendor_id = 0x15b3;
			devs[n].device_id = c->vendor_part_id;
			devs[n].class_code = cls;
			devs[n].numa_node = c->numa_node;
		}
		n++;
	}
	pthread_mutex_unlock(&f->lock);
	*count = n;
	return 0;
}

const struct dvx_hal_nic_ops dvx_sim_nic_ops = {
	.nic_list = sim_dev_list,
	.nic_open = sim_dev_open,
	.nic_close = sim_dev_close,
	.nic_query = sim_query_device,
	.query_port = sim_query_port,
	.query_gid = sim_query_gid,
	.devx_cmd = sim_devx_cmd,
	.obj_create = sim_obj_create,
	.obj_modify = sim_obj_modify,
	.obj_query = sim_obj_query,
	.obj_destroy = sim_obj_destroy,
	.umem_reg = sim_umem_reg,
	.umem_dereg = sim_umem_dereg,
	.uar_alloc = sim_uar_alloc,
	.uar_free = sim_uar_free,
	.pd_alloc = sim_pd_alloc,
	.pd_free = sim_pd_free,
	.eqn_query = sim_eqn_query,
	.mr_reg = sim_mr_reg,
	.mr_dereg = sim_mr_dereg,
	.roce_rmac = sim_roce_rmac,
	.nic_progress = sim_dev_progress,
	.nic_kick = sim_dev_kick,
};

/* the fabric's fake dma-bufs close as a dma-buf closes (registrations from it stay);
 * every other descriptor is the system's */
static int sim_fd_close(const struct dvx_hal *hal, int fd)
{
	struct sim_fabric *f = hal_fab(hal);
	struct sim_dmabuf *d;

	if (f && fd >= DVX_SIM_DMABUF_FD_BASE) {
		pthread_mutex_lock(&f->lock);
		d = dvx_sim_dmabuf_find(f, fd);
		if (d) {
			d->closed = 1;
			d->users++;
			dvx_sim_dmabuf_put(d);	/* frees it when nothing is registered from it */
		}
		pthread_mutex_unlock(&f->lock);
		if (d)
			return 0;
	}
	return dvx_host_fd_close(hal, fd);
}

const struct dvx_hal_host_ops dvx_sim_host_ops = {
	.mem_alloc = dvx_host_mem_alloc,
	.mem_free = dvx_host_mem_free,
	.pci_list = sim_pci_list,
	.limits = dvx_host_limits,
	.now_ns = dvx_host_now_ns,
	.sock_listen = dvx_host_sock_listen,
	.sock_connect = dvx_host_sock_connect,
	.sock_error = dvx_host_sock_error,
	.sock_accept = dvx_host_sock_accept,
	.sock_name = dvx_host_sock_name,
	.sock_send = dvx_host_sock_send,
	.sock_recv = dvx_host_sock_recv,
	.sock_poll = dvx_host_sock_poll,
	.sock_close = dvx_host_sock_close,
	.sock_unlink = dvx_host_sock_unlink,
	.sleep_ns = dvx_host_sleep_ns,
	.sock_send_fds = dvx_host_sock_send_fds,
	.sock_recv_fds = dvx_host_sock_recv_fds,
	.sock_cred = dvx_host_sock_cred,
	.fd_close = sim_fd_close,
	.host_ident = dvx_host_ident,
	.random_bytes = dvx_host_random_bytes,	/* a bootstrap with a job secret on this hal */
};
