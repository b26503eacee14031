// SPDX-License-Identifier: MIT
/*
 * hal/mock/nic.c - the mock's NIC table: devices, DEVX commands and objects, umems, UARs, PDs, EQs, MRs.
 */
#include "priv.h"

/* ---- devices ---- */

static int mock_dev_list(const struct dvx_hal *hal, struct dvx_hal_nic_info *info, unsigned max,
			 unsigned *count)
{
	struct dvx_mock *m = dvx_mockp_mock_of(hal);
	struct dvx_mock_call *c = dvx_mockp_begin(m, DVX_MOCK_OP_NIC_LIST, -1);
	unsigned i;
	int err;

	c->len = max;
	err = dvx_mockp_injected_err(m, c);
	if (err)
		return dvx_mockp_end(m, c, err);
	for (i = 0; i < m->ndevs && i < max; i++)
		info[i] = m->dev[i].cfg.info;
	*count = m->ndevs;
	return dvx_mockp_end(m, c, 0);
}

static int find_dev(const struct dvx_mock *m, const char *name)
{
	char pci[DVX_HAL_PCI_MAX];
	int have_pci = dvx_sysfs_pci_normalize(name, pci) == 0;
	unsigned i;

	for (i = 0; i < m->ndevs; i++) {
		const struct dvx_hal_nic_info *in = &m->dev[i].cfg.info;

		if (strcmp(in->name, name) == 0 || (have_pci && strcmp(in->pci, pci) == 0))
			return (int)i;
	}
	return -1;
}

static int mock_dev_open(const struct dvx_hal *hal, const char *name, struct dvx_hal_nic *dev)
{
	struct dvx_mock *m = dvx_mockp_mock_of(hal);
	int idx = find_dev(m, name);
	struct dvx_mock_call *c = dvx_mockp_begin(m, DVX_MOCK_OP_NIC_OPEN, idx);
	struct dvx_mock_nic *d;
	int err;

	dvx_mockp_copy_str(c->name, sizeof(c->name), name);
	err = dvx_mockp_inject_dev(m, c, dev);
	if (err)
		return dvx_mockp_end(m, c, err);
	if (idx < 0)
		return dvx_mockp_end(m, c, dvx_hal_diag_set(&dev->diag, -ENODEV, DVX_DIAG_ARG, "nic_open",
						  "no RDMA device named or at \"%s\"", name));
	d = &m->dev[idx];
	if (!d->cfg.info.is_mlx5) {
		err = dvx_hal_diag_set(&dev->diag, -ENODEV, DVX_DIAG_ARG, "nic_open",
				       "%s is driven by %s, not mlx5: dvx drives mlx5 only",
				       d->cfg.info.name,
				       d->cfg.info.driver[0] ? d->cfg.info.driver : "unknown");
		return dvx_mockp_end(m, c, err);
	}
	if (d->cfg.open_err) {
		err = dvx_hal_diag_set(&dev->diag, dvx_mockp_neg(d->cfg.open_err), DVX_DIAG_OS, "nic_open",
				       "DEVX open failed: no DEVX support or no permission (mock)");
		dev->diag.sys_errno = -err;
		return dvx_mockp_end(m, c, err);
	}
	d->opens++;
	m->live[DVX_MOCK_RES_DEV]++;
	dev->priv = d;
	dev->info = d->cfg.info;
	return dvx_mockp_end(m, c, 0);
}

static int dev_holds(const struct dvx_mock *m, int idx)
{
	size_t i;

	for (i = 0; i < DVX_MOCK_MAX_OBJS; i++)
		if (m->obj[i].live && m->obj[i].dev == idx)
			return 1;
	for (i = 0; i < DVX_MOCK_MAX_UMEMS; i++)
		if (m->umem[i].live && m->umem[i].dev == idx)
			return 1;
	for (i = 0; i < DVX_MOCK_MAX_UARS; i++)
		if (m->uar[i].live && m->uar[i].dev == idx)
			return 1;
	for (i = 0; i < DVX_MOCK_MAX_PDS; i++)
		if (m->pd[i].live && m->pd[i].dev == idx)
			return 1;
	for (i = 0; i < DVX_MOCK_MAX_MRS; i++)
		if (m->mr[i].live && m->mr[i].dev == idx)
			return 1;
	return 0;
}

static int mock_dev_close(struct dvx_hal_nic *dev)
{
	struct dvx_mock *m = dvx_mockp_mock_dev(dev);
	int idx = dvx_mockp_dev_index(m, dev);
	struct dvx_mock_call *c = dvx_mockp_begin(m, DVX_MOCK_OP_NIC_CLOSE, idx);
	int err = dvx_mockp_inject_dev(m, c, dev);

	if (err)
		return dvx_mockp_end(m, c, err);	/* the device stays open */
	if (idx < 0)
		return dvx_mockp_end(m, c, dvx_mockp_bad_handle(dev, DVX_MOCK_OP_NIC_CLOSE, "device is not open"));
	/* like ibv_close_device: succeeds, the kernel would reap what is left */
	if (dev_holds(m, idx))
		m->closed_with_live++;
	m->dev[idx].opens--;
	m->live[DVX_MOCK_RES_DEV]--;
	return dvx_mockp_end(m, c, 0);
}

#define DEV_CALL_BEGIN(op)                                                                 \
	struct dvx_mock *m = dvx_mockp_mock_dev(dev);                                                \
	int idx = dvx_mockp_dev_index(m, dev);                                                       \
	struct dvx_mock_call *c = dvx_mockp_begin(m, op, idx);                                       \
	int err

#define DEV_CALL_CHECK(op)                                                                 \
	do {                                                                               \
		err = dvx_mockp_inject_dev(m, c, dev);                                               \
		if (err)                                                                   \
			return dvx_mockp_end(m, c, err);                                             \
		if (idx < 0)                                                               \
			return dvx_mockp_end(m, c, dvx_mockp_bad_handle(dev, op, "device is not open"));       \
	} while (0)

static int mock_nic_query(struct dvx_hal_nic *dev, struct dvx_hal_nic_attr *attr)
{
	DEV_CALL_BEGIN(DVX_MOCK_OP_NIC_QUERY);

	DEV_CALL_CHECK(DVX_MOCK_OP_NIC_QUERY);
	*attr = m->dev[idx].cfg.attr;
	return dvx_mockp_end(m, c, 0);
}

static int port_ok(const struct dvx_mock *m, int idx, uint8_t port)
{
	const struct dvx_mock_nic_cfg *cfg = &m->dev[idx].cfg;
	unsigned n = cfg->attr.phys_port_cnt ? cfg->attr.phys_port_cnt : cfg->info.nports;

	return port >= 1 && port <= n && port <= DVX_MOCK_MAX_PORTS;
}

static int mock_query_port(struct dvx_hal_nic *dev, uint8_t port, struct dvx_hal_port_attr *attr)
{
	DEV_CALL_BEGIN(DVX_MOCK_OP_QUERY_PORT);

	c->port = port;
	DEV_CALL_CHECK(DVX_MOCK_OP_QUERY_PORT);
	if (!port_ok(m, idx, port))
		return dvx_mockp_end(m, c, dvx_hal_diag_set(&dev->diag, -EINVAL, DVX_DIAG_OS, "query_port",
						  "mock: no port %u", port));
	*attr = m->dev[idx].cfg.port[port - 1];
	return dvx_mockp_end(m, c, 0);
}

static int mock_query_gid(struct dvx_hal_nic *dev, uint8_t port, uint32_t index,
			  struct dvx_hal_gid *gid)
{
	DEV_CALL_BEGIN(DVX_MOCK_OP_QUERY_GID);

	c->port = port;
	c->index = index;
	DEV_CALL_CHECK(DVX_MOCK_OP_QUERY_GID);
	if (!port_ok(m, idx, port) || index >= m->dev[idx].cfg.port[port - 1].gid_tbl_len)
		return dvx_mockp_end(m, c, dvx_hal_diag_set(&dev->diag, -EINVAL, DVX_DIAG_OS, "query_gid",
						  "mock: no GID %u on port %u", index, port));
	memset(gid, 0, sizeof(*gid));
	if (index < DVX_MOCK_MAX_GIDS)
		*gid = m->dev[idx].cfg.gid[port - 1][index];
	gid->index = index;
	return dvx_mockp_end(m, c, 0);
}

/* ---- DEVX ---- */

static void note_mailbox(struct dvx_mock_call *c, const void *in, size_t inlen, size_t outlen)
{
	c->prm_opcode = dvx_get_be16(in);
	c->prm_op_mod = (uint16_t)(dvx_get_be32((const uint8_t *)in + 4) & 0xffffu);
	c->inlen = (uint32_t)inlen;
	c->outlen = (uint32_t)outlen;
}

/* an armed DEVX fault for this command: fill the mailbox, fail like rdma-core does */
static int devx_fault(struct dvx_mock *m, struct dvx_mock_call *c, struct dvx_hal_nic *dev,
		      const void *in, void *out, size_t outlen)
{
	size_t i;

	for (i = 0; i < DVX_MOCK_MAX_DEVX_FAULTS; i++) {
		struct dvx_mock_devx_fault *f = &m->devx_fault[i];

		if (!f->active || f->opcode != c->prm_opcode ||
		    (f->op_mod >= 0 && (uint16_t)f->op_mod != c->prm_op_mod) ||
		    (f->dev >= 0 && f->dev != c->dev))
			continue;
		memset(out, 0, outlen);
		((uint8_t *)out)[0] = f->status;
		dvx_put_be32((uint8_t *)out + 4, f->syndrome);
		if (f->count && --f->count == 0)
			f->active = 0;
		c->injected = 1;
		return dvx_hal_diag_devx(&dev->diag, dvx_mock_op_name(c->op), in, out, EREMOTEIO);
	}
	return 0;
}

static int mock_devx_cmd_do(struct dvx_hal_nic *dev, const void *in, size_t inlen, void *out,
			 size_t outlen)
{
	const struct dvx_mock_cap *cap = NULL;
	size_t i, n;

	DEV_CALL_BEGIN(DVX_MOCK_OP_DEVX_CMD);

	note_mailbox(c, in, inlen, outlen);
	DEV_CALL_CHECK(DVX_MOCK_OP_DEVX_CMD);
	err = devx_fault(m, c, dev, in, out, outlen);
	if (err)
		return dvx_mockp_end(m, c, err);
	memset(out, 0, outlen);
	if (c->prm_opcode != MOCK_CMD_QUERY_HCA_CAP)
		return dvx_mockp_end(m, c, 0);	/* any other command: status 0, empty output */
	for (i = 0; i < DVX_MOCK_MAX_CAPS; i++) {
		const struct dvx_mock_cap *k = &m->dev[idx].cfg.caps[i];

		if (k->valid && k->op_mod == c->prm_op_mod)
			cap = k;
	}
	if (!cap) {
		((uint8_t *)out)[0] = MOCK_STATUS_BAD_PARAM;
		dvx_put_be32((uint8_t *)out + 4, MOCK_SYNDROME_NO_CAP);
		return dvx_mockp_end(m, c, dvx_hal_diag_devx(&dev->diag, "devx_cmd", in, out, EREMOTEIO));
	}
	n = outlen < 16 ? 0 : outlen - 16;
	if (n > DVX_MOCK_CAP_BYTES)
		n = DVX_MOCK_CAP_BYTES;
	memcpy((uint8_t *)out + 16, cap->page, n);
	return dvx_mockp_end(m, c, 0);
}

/* the mock's record behind an object handle, NULL if it is not one it holds */
static struct dvx_mock_obj *obj_of(struct dvx_mock *m, const struct dvx_hal_obj *obj)
{
	struct dvx_mock_obj *o = (struct dvx_mock_obj *)obj->priv;
	size_t i;

	for (i = 0; i < DVX_MOCK_MAX_OBJS; i++)
		if (o == &m->obj[i])
			return o->live && (!obj->id || obj->id == o->id) ? o : NULL;
	return NULL;
}

static int mock_obj_create_do(struct dvx_hal_nic *dev, const void *in, size_t inlen, void *out,
			   size_t outlen, struct dvx_hal_obj *obj)
{
	struct dvx_mock_obj *o = NULL;
	size_t i;

	DEV_CALL_BEGIN(DVX_MOCK_OP_OBJ_CREATE);

	note_mailbox(c, in, inlen, outlen);
	DEV_CALL_CHECK(DVX_MOCK_OP_OBJ_CREATE);
	err = devx_fault(m, c, dev, in, out, outlen);
	if (err)
		return dvx_mockp_end(m, c, err);
	for (i = 0; i < DVX_MOCK_MAX_OBJS && !o; i++)
		if (!m->obj[i].live)
			o = &m->obj[i];
	if (!o)
		return dvx_mockp_end(m, c, dvx_hal_diag_set(&dev->diag, -ENOMEM, DVX_DIAG_OS, "obj_create",
						  "mock: all %d object slots in use",
						  DVX_MOCK_MAX_OBJS));
	memset(o, 0, sizeof(*o));
	o->live = 1;
	o->dev = (int8_t)idx;
	o->opcode = c->prm_opcode;
	o->id = dvx_mockp_fresh_id(m);
	c->id = o->id;
	memset(out, 0, outlen);
	dvx_put_be32((uint8_t *)out + 8, o->id);	/* out dw@8 [23:0]: the new object */
	obj->priv = o;
	obj->cmd_opcode = o->opcode;
	m->live[DVX_MOCK_RES_OBJ]++;
	return dvx_mockp_end(m, c, 0);
}

static int mock_obj_modify_do(struct dvx_hal_nic *dev, struct dvx_hal_obj *obj, const void *in,
			   size_t inlen, void *out, size_t outlen)
{
	struct dvx_mock_obj *o;

	DEV_CALL_BEGIN(DVX_MOCK_OP_OBJ_MODIFY);

	note_mailbox(c, in, inlen, outlen);
	c->id = obj->id;
	DEV_CALL_CHECK(DVX_MOCK_OP_OBJ_MODIFY);
	o = obj_of(m, obj);
	if (!o)
		return dvx_mockp_end(m, c, dvx_mockp_bad_handle(dev, DVX_MOCK_OP_OBJ_MODIFY,
					    "unknown or destroyed object"));
	err = devx_fault(m, c, dev, in, out, outlen);
	if (err)
		return dvx_mockp_end(m, c, err);
	o->modifies++;
	o->last_modify_opcode = c->prm_opcode;
	memset(out, 0, outlen);
	return dvx_mockp_end(m, c, 0);
}

static int mock_obj_query_do(struct dvx_hal_nic *dev, struct dvx_hal_obj *obj, const void *in,
			  size_t inlen, void *out, size_t outlen)
{
	struct dvx_mock_obj *o;

	DEV_CALL_BEGIN(DVX_MOCK_OP_OBJ_QUERY);

	note_mailbox(c, in, inlen, outlen);
	c->id = obj->id;
	DEV_CALL_CHECK(DVX_MOCK_OP_OBJ_QUERY);
	o = obj_of(m, obj);
	if (!o)
		return dvx_mockp_end(m, c, dvx_mockp_bad_handle(dev, DVX_MOCK_OP_OBJ_QUERY,
					    "unknown or destroyed object"));
	err = devx_fault(m, c, dev, in, out, outlen);
	if (err)
		return dvx_mockp_end(m, c, err);
	o->queries++;
	memset(out, 0, outlen);
	return dvx_mockp_end(m, c, 0);
}

/* the four mailbox calls: the work, then the captures (dvx_mock_capture()) */
static int mock_devx_cmd(struct dvx_hal_nic *dev, const void *in, size_t inlen, void *out,
			 size_t outlen)
{
	int err = mock_devx_cmd_do(dev, in, inlen, out, outlen);

	if (in && inlen >= 8 && out)
		dvx_mockp_capture(dvx_mockp_mock_dev(dev), in, inlen, out, outlen);
	return err;
}

static int mock_obj_create(struct dvx_hal_nic *dev, const void *in, size_t inlen, void *out,
			   size_t outlen, struct dvx_hal_obj *obj)
{
	int err = mock_obj_create_do(dev, in, inlen, out, outlen, obj);

	if (in && inlen >= 8 && out)
		dvx_mockp_capture(dvx_mockp_mock_dev(dev), in, inlen, out, outlen);
	return err;
}

static int mock_obj_modify(struct dvx_hal_nic *dev, struct dvx_hal_obj *obj, const void *in,
			   size_t inlen, void *out, size_t outlen)
{
	int err = mock_obj_modify_do(dev, obj, in, inlen, out, outlen);

	if (in && inlen >= 8 && out)
		dvx_mockp_capture(dvx_mockp_mock_dev(dev), in, inlen, out, outlen);
	return err;
}

static int mock_obj_query(struct dvx_hal_nic *dev, struct dvx_hal_obj *obj, const void *in,
			  size_t inlen, void *out, size_t outlen)
{
	int err = mock_obj_query_do(dev, obj, in, inlen, out, outlen);

	if (in && inlen >= 8 && out)
		dvx_mockp_capture(dvx_mockp_mock_dev(dev), in, inlen, out, outlen);
	return err;
}

static int mock_obj_destroy(struct dvx_hal_nic *dev, struct dvx_hal_obj *obj)
{
	struct dvx_mock_obj *o;

	DEV_CALL_BEGIN(DVX_MOCK_OP_OBJ_DESTROY);

	c->id = obj->id;
	c->prm_opcode = obj->cmd_opcode;
	DEV_CALL_CHECK(DVX_MOCK_OP_OBJ_DESTROY);	/* an injected failure keeps the object */
	o = obj_of(m, obj);
	if (!o)
		return dvx_mockp_end(m, c, dvx_mockp_bad_handle(dev, DVX_MOCK_OP_OBJ_DESTROY,
					    "unknown or already destroyed object"));
	o->live = 0;
	obj->priv = NULL;
	m->live[DVX_MOCK_RES_OBJ]--;
	return dvx_mockp_end(m, c, 0);
}

/* ---- umems, UARs, PDs, EQs ---- */

static int mock_umem_reg(struct dvx_hal_nic *dev, const struct dvx_hal_umem_req *req,
			 struct dvx_hal_umem *umem)
{
	struct dvx_mock_umem *u = NULL;
	size_t i;

	DEV_CALL_BEGIN(DVX_MOCK_OP_UMEM_REG);

	c->addr = (uint64_t)(uintptr_t)req->addr;
	c->len = req->len;
	c->access = req->access;
	c->dmabuf_fd = req->dmabuf_fd;
	c->offset = req->dmabuf_offset;
	c->pgsz_bitmap = req->pgsz_bitmap;
	DEV_CALL_CHECK(DVX_MOCK_OP_UMEM_REG);
	for (i = 0; i < DVX_MOCK_MAX_UMEMS && !u; i++)
		if (!m->umem[i].live)
			u = &m->umem[i];
	if (!u)
		return dvx_mockp_end(m, c, dvx_hal_diag_set(&dev->diag, -ENOMEM, DVX_DIAG_OS, "umem_reg",
						  "mock: all umem slots in use"));
	memset(u, 0, sizeof(*u));
	u->live = 1;
	u->dev = (int8_t)idx;
	u->id = dvx_mockp_fresh_id(m);
	u->addr = c->addr;
	u->len = req->len;
	u->access = req->access;
	u->dmabuf_fd = req->dmabuf_fd;
	u->via_dmabuf = req->dmabuf_fd >= 0;
	memset(umem, 0, sizeof(*umem));
	umem->priv = u;
	umem->id = u->id;
	umem->len = req->len;
	umem->via_dmabuf = u->via_dmabuf;
	c->id = u->id;
	m->live[DVX_MOCK_RES_UMEM]++;
	return dvx_mockp_end(m, c, 0);
}

#define FIND_HANDLE(arr, max, p, out)                                                      \
	do {                                                                               \
		size_t i_;                                                                 \
		(out) = NULL;                                                              \
		for (i_ = 0; i_ < (max); i_++)                                             \
			if ((p) == (void *)&(arr)[i_] && (arr)[i_].live)                   \
				(out) = &(arr)[i_];                                        \
	} while (0)

static int mock_umem_dereg(struct dvx_hal_nic *dev, struct dvx_hal_umem *umem)
{
	struct dvx_mock_umem *u;

	DEV_CALL_BEGIN(DVX_MOCK_OP_UMEM_DEREG);

	c->id = umem->id;
	DEV_CALL_CHECK(DVX_MOCK_OP_UMEM_DEREG);
	FIND_HANDLE(m->umem, DVX_MOCK_MAX_UMEMS, umem->priv, u);
	if (!u)
		return dvx_mockp_end(m, c, dvx_mockp_bad_handle(dev, DVX_MOCK_OP_UMEM_DEREG, "umem is not registered"));
	u->live = 0;
	umem->priv = NULL;
	m->live[DVX_MOCK_RES_UMEM]--;
	return dvx_mockp_end(m, c, 0);
}

static int mock_uar_alloc(struct dvx_hal_nic *dev, enum dvx_uar_type type, struct dvx_hal_uar *uar)
{
	struct dvx_mock_uar *u = NULL;
	size_t i, slot = 0;

	DEV_CALL_BEGIN(DVX_MOCK_OP_UAR_ALLOC);

	c->flags = (uint32_t)type;
	DEV_CALL_CHECK(DVX_MOCK_OP_UAR_ALLOC);
	for (i = 0; i < DVX_MOCK_MAX_UARS && !u; i++)
		if (!m->uar[i].live) {
			u = &m->uar[i];
			slot = i;
		}
	if (!u)
		return dvx_mockp_end(m, c, dvx_hal_diag_set(&dev->diag, -ENOMEM, DVX_DIAG_OS, "uar_alloc",
						  "mock: all UAR pages in use"));
	memset(u, 0, sizeof(*u));
	u->live = 1;
	u->dev = (int8_t)idx;
	u->type = (uint32_t)type;
	u->page_id = dvx_mockp_fresh_id(m);
	memset(m->uar_page[slot], 0, DVX_MOCK_UAR_BYTES);
	memset(uar, 0, sizeof(*uar));
	uar->priv = u;
	uar->base_addr = m->uar_page[slot];
	uar->reg_addr = (uint8_t *)m->uar_page[slot] + MOCK_UAR_BF_OFFSET;
	uar->page_id = u->page_id;
	uar->type = (uint32_t)type;
	uar->mmap_off = (uint64_t)(slot + 1) * DVX_MOCK_UAR_BYTES;
	uar->nc = type != DVX_UAR_BF || m->uar_bf_nc;
	c->id = u->page_id;
	m->live[DVX_MOCK_RES_UAR]++;
	return dvx_mockp_end(m, c, 0);
}

static int mock_uar_free(struct dvx_hal_nic *dev, struct dvx_hal_uar *uar)
{
	struct dvx_mock_uar *u;

	DEV_CALL_BEGIN(DVX_MOCK_OP_UAR_FREE);

	c->id = uar->page_id;
	c->flags = uar->type;
	DEV_CALL_CHECK(DVX_MOCK_OP_UAR_FREE);
	FIND_HANDLE(m->uar, DVX_MOCK_MAX_UARS, uar->priv, u);
	if (!u)
		return dvx_mockp_end(m, c, dvx_mockp_bad_handle(dev, DVX_MOCK_OP_UAR_FREE, "UAR is not allocated"));
	u->live = 0;
	uar->priv = NULL;
	m->live[DVX_MOCK_RES_UAR]--;
	return dvx_mockp_end(m, c, 0);
}

static int mock_pd_alloc(struct dvx_hal_nic *dev, struct dvx_hal_pd *pd)
{
	struct dvx_mock_pd *p = NULL;
	size_t i;

	DEV_CALL_BEGIN(DVX_MOCK_OP_PD_ALLOC);

	DEV_CALL_CHECK(DVX_MOCK_OP_PD_ALLOC);
	for (i = 0; i < DVX_MOCK_MAX_PDS && !p; i++)
		if (!m->pd[i].live)
			p = &m->pd[i];
	if (!p)
		return dvx_mockp_end(m, c, dvx_hal_diag_set(&dev->diag, -ENOMEM, DVX_DIAG_OS, "pd_alloc",
						  "mock: all PD slots in use"));
	memset(p, 0, sizeof(*p));
	p->live = 1;
	p->dev = (int8_t)idx;
	p->pdn = dvx_mockp_fresh_id(m);
	memset(pd, 0, sizeof(*pd));
	pd->priv = p;
	pd->pdn = p->pdn;
	c->id = p->pdn;
	m->live[DVX_MOCK_RES_PD]++;
	return dvx_mockp_end(m, c, 0);
}

static int mock_pd_free(struct dvx_hal_nic *dev, struct dvx_hal_pd *pd)
{
	struct dvx_mock_pd *p;

	DEV_CALL_BEGIN(DVX_MOCK_OP_PD_FREE);

	c->id = pd->pdn;
	DEV_CALL_CHECK(DVX_MOCK_OP_PD_FREE);
	FIND_HANDLE(m->pd, DVX_MOCK_MAX_PDS, pd->priv, p);
	if (!p)
		return dvx_mockp_end(m, c, dvx_mockp_bad_handle(dev, DVX_MOCK_OP_PD_FREE, "PD is not allocated"));
	if (p->mrs) {	/* like ibv_dealloc_pd with MRs on it */
		err = dvx_hal_diag_set(&dev->diag, -EBUSY, DVX_DIAG_OS, "pd_free",
				       "mock: %u MRs still registered on PD 0x%x", p->mrs, p->pdn);
		dev->diag.sys_errno = EBUSY;
		return dvx_mockp_end(m, c, err);
	}
	p->live = 0;
	pd->priv = NULL;
	m->live[DVX_MOCK_RES_PD]--;
	return dvx_mockp_end(m, c, 0);
}

static int mock_eqn_query(struct dvx_hal_nic *dev, uint32_t vector, uint32_t *eqn)
{
	DEV_CALL_BEGIN(DVX_MOCK_OP_EQN_QUERY);

	c->index = vector;
	DEV_CALL_CHECK(DVX_MOCK_OP_EQN_QUERY);
	*eqn = m->dev[idx].cfg.eqn;
	c->id = *eqn;
	return dvx_mockp_end(m, c, 0);
}

/* ---- MRs and RoCE ---- */

static int mock_mr_reg(struct dvx_hal_nic *dev, struct dvx_hal_pd *pd,
		       const struct dvx_hal_mr_req *req, struct dvx_hal_mr *mr)
{
	struct dvx_mock_mr *r = NULL;
	struct dvx_mock_pd *p;
	size_t i;

	DEV_CALL_BEGIN(DVX_MOCK_OP_MR_REG);

	c->addr = (uint64_t)(uintptr_t)req->addr;
	c->len = req->len;
	c->iova = req->iova;
	c->access = req->access;
	c->flags = req->flags;
	c->dmabuf_fd = (req->flags & DVX_MR_DMABUF) ? req->dmabuf_fd : -1;
	c->offset = req->dmabuf_offset;
	DEV_CALL_CHECK(DVX_MOCK_OP_MR_REG);
	FIND_HANDLE(m->pd, DVX_MOCK_MAX_PDS, pd->priv, p);
	if (!p)
		return dvx_mockp_end(m, c, dvx_mockp_bad_handle(dev, DVX_MOCK_OP_MR_REG, "PD is not allocated"));
	if ((req->flags & DVX_MR_DATA_DIRECT) && !(req->flags & DVX_MR_DMABUF))
		return dvx_mockp_end(m, c, dvx_mockp_bad_handle(dev, DVX_MOCK_OP_MR_REG,
					    "Data Direct applies to dma-buf MRs only"));
	for (i = 0; i < DVX_MOCK_MAX_MRS && !r; i++)
		if (!m->mr[i].live)
			r = &m->mr[i];
	if (!r)
		return dvx_mockp_end(m, c, dvx_hal_diag_set(&dev->diag, -ENOMEM, DVX_DIAG_OS, "mr_reg",
						  "mock: all MR slots in use"));
	memset(r, 0, sizeof(*r));
	r->live = 1;
	r->dev = (int8_t)idx;
	r->pd = (int8_t)(p - m->pd);
	r->lkey = dvx_mockp_fresh_id(m) << 8 | 0x42;	/* index and key byte, as mlx5 mkeys are */
	r->addr = c->addr;
	r->len = req->len;
	r->iova = req->iova;
	r->access = req->access;
	r->flags = req->flags;
	r->via_dmabuf = (req->flags & DVX_MR_DMABUF) != 0;
	p->mrs++;
	memset(mr, 0, sizeof(*mr));
	mr->priv = r;
	mr->lkey = r->lkey;
	mr->rkey = r->lkey;
	mr->addr = req->addr;
	mr->len = req->len;
	mr->iova = req->iova;
	mr->access = req->access;
	mr->via_dmabuf = r->via_dmabuf;
	c->id = r->lkey;
	m->live[DVX_MOCK_RES_MR]++;
	return dvx_mockp_end(m, c, 0);
}

static int mock_mr_dereg(struct dvx_hal_nic *dev, struct dvx_hal_mr *mr)
{
	struct dvx_mock_mr *r;

	DEV_CALL_BEGIN(DVX_MOCK_OP_MR_DEREG);

	c->id = mr->lkey;
	DEV_CALL_CHECK(DVX_MOCK_OP_MR_DEREG);
	FIND_HANDLE(m->mr, DVX_MOCK_MAX_MRS, mr->priv, r);
	if (!r)
		return dvx_mockp_end(m, c, dvx_mockp_bad_handle(dev, DVX_MOCK_OP_MR_DEREG, "MR is not registered"));
	r->live = 0;
	if (m->pd[r->pd].mrs)
		m->pd[r->pd].mrs--;
	mr->priv = NULL;
	m->live[DVX_MOCK_RES_MR]--;
	return dvx_mockp_end(m, c, 0);
}

static int mock_roce_rmac(struct dvx_hal_nic *dev, struct dvx_hal_pd *pd, uint8_t port,
			  uint32_t sgid_index, const uint8_t dgid[16], uint8_t mac[6])
{
	struct dvx_mock_pd *p;

	DEV_CALL_BEGIN(DVX_MOCK_OP_ROCE_RMAC);

	c->port = port;
	c->index = sgid_index;
	c->id = sgid_index;
	memcpy(&c->addr, dgid + 8, 8);	/* the GID's interface id, for the check hook */
	DEV_CALL_CHECK(DVX_MOCK_OP_ROCE_RMAC);
	FIND_HANDLE(m->pd, DVX_MOCK_MAX_PDS, pd->priv, p);
	if (!p)
		return dvx_mockp_end(m, c, dvx_mockp_bad_handle(dev, DVX_MOCK_OP_ROCE_RMAC, "PD is not allocated"));
	if (!port_ok(m, idx, port))
		return dvx_mockp_end(m, c, dvx_hal_diag_set(&dev->diag, -EINVAL, DVX_DIAG_OS, "roce_rmac",
						  "mock: no port %u", port));
	memcpy(mac, m->dev[idx].cfg.rmac, 6);
	return dvx_mockp_end(m, c, 0);
}

static void mock_dev_progress(struct dvx_hal_nic *dev)
{
	struct dvx_mock *m = dvx_mockp_mock_dev(dev);
	struct dvx_mock_call *c = dvx_mockp_begin(m, DVX_MOCK_OP_NIC_PROGRESS, dvx_mockp_dev_index(m, dev));

	if (m->check)
		(void)m->check(m->check_arg, c);	/* observed, cannot fail */
	m->progress_calls++;
	dvx_mockp_end(m, c, 0);
}

const struct dvx_hal_nic_ops dvx_mock_nic_ops = {
	.nic_list = mock_dev_list,
	.nic_open = mock_dev_open,
	.nic_close = mock_dev_close,
	.nic_query = mock_nic_query,
	.query_port = mock_query_port,
	.query_gid = mock_query_gid,
	.devx_cmd = mock_devx_cmd,
	.obj_create = mock_obj_create,
	.obj_modify = mock_obj_modify,
	.obj_query = mock_obj_query,
	.obj_destroy = mock_obj_destroy,
	.umem_reg = mock_umem_reg,
	.umem_dereg = mock_umem_dereg,
	.uar_alloc = mock_uar_alloc,
	.uar_free = mock_uar_free,
	.pd_alloc = mock_pd_alloc,
	.pd_free = mock_pd_free,
	.eqn_query = mock_eqn_query,
	.mr_reg = mock_mr_reg,
	.mr_dereg = mock_mr_dereg,
	.roce_rmac = mock_roce_rmac,
	.nic_progress = mock_dev_progress,
};
