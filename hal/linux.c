// SPDX-License-Identifier: MIT
/*
 * hal/linux.c - the hardware backend: rdma-core's mlx5dv/DEVX interface, sysfs, and
 * the shared host-side ops (hal/hostmem.c, hal/dpdk.c).
 *
 * Only mlx5dv/DEVX and the verbs calls DEVX needs are used (device list and open,
 * queries, PD, MR, AH for the RoCE MAC); dvx builds its own CQs and QPs from PRM
 * mailboxes, so nothing here creates a verbs CQ or QP or posts through verbs.
 *
 * rdma-core reports failures in errno; each op translates once, here, and records
 * the vendor's words in dev->diag (DEVX status and syndrome from the output mailbox
 * for mailbox commands).
 *
 * Header features that differ between rdma-core releases, detected without a
 * configure step:
 *  - MLX5DV_UAR_ALLOC_TYPE_NC_DEDICATED (rdma-core >= 45) is a macro: #ifdef.
 *  - dma-buf umems (MLX5DV_UMEM_MASK_DMABUF, rdma-core >= 44) are an enum and cannot
 *    be tested by the preprocessor; they are assumed, and building with
 *    EXTRA_CFLAGS=-DDVX_NO_MLX5DV_UMEM_DMABUF against older headers turns the path
 *    into -EOPNOTSUPP.
 *  - mlx5dv_reg_dmabuf_mr() (Data Direct) is declared weak below, with the prototype
 *    of its manual page, so a libdvx built against older headers uses it when the
 *    libmlx5 it runs with has it, and says -EOPNOTSUPP otherwise.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include <dvx/byteorder.h>
#include <dvx/hal.h>

#include "host_priv.h"
#ifdef CONFIG_DVX_GPU
#include "cudaops.h"
#endif
#include "sysfs.h"

/* dvx's access bits, link layers and GID types are rdma-core's numbers */
DVX_STATIC_ASSERT((int)DVX_ACCESS_LOCAL_WRITE == (int)IBV_ACCESS_LOCAL_WRITE, "access bits");
DVX_STATIC_ASSERT((int)DVX_ACCESS_REMOTE_WRITE == (int)IBV_ACCESS_REMOTE_WRITE, "access bits");
DVX_STATIC_ASSERT((int)DVX_ACCESS_REMOTE_READ == (int)IBV_ACCESS_REMOTE_READ, "access bits");
DVX_STATIC_ASSERT((int)DVX_ACCESS_REMOTE_ATOMIC == (int)IBV_ACCESS_REMOTE_ATOMIC, "access bits");
DVX_STATIC_ASSERT((int)DVX_ACCESS_RELAXED_ORDERING == (int)IBV_ACCESS_RELAXED_ORDERING,
		  "access bits");
DVX_STATIC_ASSERT((int)DVX_LINK_LAYER_UNSPECIFIED == (int)IBV_LINK_LAYER_UNSPECIFIED, "link layer");
DVX_STATIC_ASSERT((int)DVX_LINK_LAYER_IB == (int)IBV_LINK_LAYER_INFINIBAND, "link layer");
DVX_STATIC_ASSERT((int)DVX_LINK_LAYER_ETHERNET == (int)IBV_LINK_LAYER_ETHERNET, "link layer");
DVX_STATIC_ASSERT((int)DVX_GID_TYPE_IB == (int)IBV_GID_TYPE_IB, "gid type");
DVX_STATIC_ASSERT((int)DVX_GID_TYPE_ROCE_V1 == (int)IBV_GID_TYPE_ROCE_V1, "gid type");
DVX_STATIC_ASSERT((int)DVX_GID_TYPE_ROCE_V2 == (int)IBV_GID_TYPE_ROCE_V2, "gid type");

/* rdma-core >= 54 (man mlx5dv_reg_dmabuf_mr); weak so older libmlx5 leaves it NULL */
struct ibv_mr *mlx5dv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
				    uint64_t iova, int fd, int access, int mlx5_access)
	__attribute__((weak));
/* enum mlx5dv_reg_dmabuf_access: MLX5DV_REG_DMABUF_ACCESS_DATA_DIRECT = 1 << 0 */
#define LX_REG_DMABUF_ACCESS_DATA_DIRECT (1 << 0)

#define LX_DEVX_MSG \
	"DEVX open failed: no DEVX support or no permission (/dev/infiniband, CAP_NET_RAW/IPC_LOCK)"

static struct ibv_context *ctx_of(struct dvx_hal_nic *dev)
{
	return (struct ibv_context *)dev->priv;
}

/* errno after an rdma-core call that returned NULL or -1; never 0 */
static int lx_errno(void)
{
	return errno > 0 ? errno : EIO;
}

static int os_fail(struct dvx_hal_nic *dev, const char *op, int sys_errno, const char *what)
{
	int err = dvx_hal_diag_set(&dev->diag, -sys_errno, DVX_DIAG_OS, op, "%s: %s", what,
				   strerror(sys_errno));

	dev->diag.sys_errno = sys_errno;
	return err;
}

/* Registration failures with ENOMEM/EFAULT are nearly always RLIMIT_MEMLOCK: say it. */
static int reg_fail(struct dvx_hal_nic *dev, const char *op, int sys_errno, const char *what)
{
	struct rlimit rl;
	int err;

	if ((sys_errno != ENOMEM && sys_errno != EFAULT) || getrlimit(RLIMIT_MEMLOCK, &rl))
		return os_fail(dev, op, sys_errno, what);
	if (rl.rlim_cur == RLIM_INFINITY)
		err = dvx_hal_diag_set(&dev->diag, -sys_errno, DVX_DIAG_OS, op,
				       "%s: %s (RLIMIT_MEMLOCK unlimited)", what,
				       strerror(sys_errno));
	else
		err = dvx_hal_diag_set(&dev->diag, -sys_errno, DVX_DIAG_OS, op,
				       "%s: %s; RLIMIT_MEMLOCK %llu KiB: raise ulimit -l", what,
				       strerror(sys_errno), (unsigned long long)rl.rlim_cur / 1024);
	dev->diag.sys_errno = sys_errno;
	return err;
}

static void copy_str(char *dst, size_t n, const char *src)
{
	size_t l = strlen(src);

	if (l >= n)
		l = n - 1;
	memcpy(dst, src, l);
	dst[l] = '\0';
}

/* identity of one verbs device: sysfs facts refined by what libibverbs knows */
static void lx_fill_info(struct ibv_device *d, struct dvx_hal_nic_info *info)
{
	const char *name = ibv_get_device_name(d);
	uint64_t guid;

	if (dvx_sysfs_ib_dev_info(d->ibdev_path, name ? name : "", info)) {
		memset(info, 0, sizeof(*info));
		copy_str(info->name, sizeof(info->name), name ? name : "");
		info->numa_node = -1;
	}
	guid = dvx_be64_to_cpu((DVX_FORCE dvx_be64)(DVX_FORCE uint64_t)ibv_get_device_guid(d));
	if (guid)
		info->node_guid = guid;
	/* no driver link to decide by: ask rdma-core whether its mlx5 provider drives it */
	if (!info->driver[0])
		info->is_mlx5 = mlx5dv_is_supported(d) ? 1 : 0;
}

static int lx_dev_list(const struct dvx_hal *hal, struct dvx_hal_nic_info *info, unsigned max,
		       unsigned *count)
{
	struct ibv_device **list;
	int i, n = 0;

	(void)hal;
	errno = 0;
	list = ibv_get_device_list(&n);
	if (!list) {
		/* no verbs support in this kernel (or no sysfs class): no devices */
		if (errno == ENOSYS || errno == ENOENT || errno == 0) {
			*count = 0;
			return 0;
		}
		return -lx_errno();
	}
	for (i = 0; i < n; i++)
		if ((unsigned)i < max)
			lx_fill_info(list[i], &info[i]);
	ibv_free_device_list(list);
	*count = (unsigned)n;
	return 0;
}

static int lx_dev_open(const struct dvx_hal *hal, const char *name, struct dvx_hal_nic *dev)
{
	struct mlx5dv_context_attr attr;
	struct dvx_hal_nic_info info;
	struct ibv_device **list, *found = NULL;
	struct ibv_context *ctx;
	char pci[DVX_HAL_PCI_MAX];
	int i, n = 0, have_pci, err = 0;

	(void)hal;
	have_pci = dvx_sysfs_pci_normalize(name, pci) == 0;
	errno = 0;
	list = ibv_get_device_list(&n);
	if (!list)
		return dvx_hal_diag_set(&dev->diag, -ENODEV, DVX_DIAG_OS, "nic_open",
					"no RDMA devices (ibv_get_device_list: %s)",
					strerror(lx_errno()));
	for (i = 0; i < n && !found; i++) {
		lx_fill_info(list[i], &info);
		if (strcmp(info.name, name) == 0 || (have_pci && strcmp(info.pci, pci) == 0))
			found = list[i];
	}
	if (!found) {
		err = dvx_hal_diag_set(&dev->diag, -ENODEV, DVX_DIAG_ARG, "nic_open",
				       "no RDMA device named or at \"%s\"", name);
		goto free_list;
	}
	if (!info.is_mlx5) {
		err = dvx_hal_diag_set(&dev->diag, -ENODEV, DVX_DIAG_ARG, "nic_open",
				       "%s is driven by %s, not mlx5: dvx drives mlx5 only",
				       info.name,
				       info.driver[0] ? info.driver : "an unknown driver");
		goto free_list;
	}
	memset(&attr, 0, sizeof(attr));
	attr.flags = MLX5DV_CONTEXT_FLAGS_DEVX;
	errno = 0;
	ctx = mlx5dv_open_device(found, &attr);
	if (!ctx) {
		int e = lx_errno();

		err = dvx_hal_diag_set(&dev->diag, -e, DVX_DIAG_OS, "nic_open", "%s", LX_DEVX_MSG);
		dev->diag.sys_errno = e;
		goto free_list;
	}
	dev->priv = ctx;
	dev->info = info;
	dvx_hal_log(&dev->log, DVX_LOG_DEBUG, "opened %s (%s) with DEVX", info.name, info.pci);
free_list:
	ibv_free_device_list(list);
	return err;
}

static int lx_dev_close(struct dvx_hal_nic *dev)
{
	errno = 0;
	if (ibv_close_device(ctx_of(dev)))
		return os_fail(dev, "nic_close", lx_errno(), "ibv_close_device");
	return 0;
}

static int lx_nic_query(struct dvx_hal_nic *dev, struct dvx_hal_nic_attr *a)
{
	struct ibv_device_attr at;
	int rc;

	memset(&at, 0, sizeof(at));
	rc = ibv_query_device(ctx_of(dev), &at);
	if (rc)
		return os_fail(dev, "nic_query", rc > 0 ? rc : lx_errno(), "ibv_query_device");
	memset(a, 0, sizeof(*a));
	copy_str(a->fw_ver, sizeof(a->fw_ver), at.fw_ver);
	a->node_guid = dvx_be64_to_cpu((DVX_FORCE dvx_be64)(DVX_FORCE uint64_t)at.node_guid);
	a->sys_image_guid = dvx_be64_to_cpu((DVX_FORCE dvx_be64)(DVX_FORCE uint64_t)at.sys_image_guid);
	a->max_mr_size = at.max_mr_size;
	a->page_size_cap = at.page_size_cap;
	a->vendor_id = at.vendor_id;
	a->vendor_part_id = at.vendor_part_id;
	a->hw_ver = at.hw_ver;
	a->max_qp = (uint32_t)at.max_qp;
	a->max_qp_wr = (uint32_t)at.max_qp_wr;
	a->max_cq = (uint32_t)at.max_cq;
	a->max_cqe = (uint32_t)at.max_cqe;
	a->max_mr = (uint32_t)at.max_mr;
	a->max_pd = (uint32_t)at.max_pd;
	a->max_qp_rd_atom = (uint32_t)at.max_qp_rd_atom;
	a->max_qp_init_rd_atom = (uint32_t)at.max_qp_init_rd_atom;
	a->phys_port_cnt = at.phys_port_cnt;
	a->atomic_cap = (uint8_t)at.atomic_cap;
	return 0;
}

static int lx_query_port(struct dvx_hal_nic *dev, uint8_t port, struct dvx_hal_port_attr *a)
{
	struct ibv_port_attr pa;
	int rc;

	memset(&pa, 0, sizeof(pa));
	rc = ibv_query_port(ctx_of(dev), port, &pa);
	if (rc)
		return os_fail(dev, "query_port", rc > 0 ? rc : lx_errno(), "ibv_query_port");
	memset(a, 0, sizeof(*a));
	a->state = (uint8_t)pa.state;
	a->link_layer = pa.link_layer;
	a->active_mtu = (uint8_t)pa.active_mtu;
	a->max_mtu = (uint8_t)pa.max_mtu;
	a->lid = pa.lid;
	a->sm_lid = pa.sm_lid;
	a->lmc = pa.lmc;
	a->sm_sl = pa.sm_sl;
	a->active_width = pa.active_width;
	a->active_speed = pa.active_speed;
	a->phys_state = pa.phys_state;
	a->gid_tbl_len = pa.gid_tbl_len > 0 ? (uint32_t)pa.gid_tbl_len : 0;
	a->pkey_tbl_len = pa.pkey_tbl_len;
	a->port_cap_flags = pa.port_cap_flags;
	a->active_speed_ex = 0;	/* not in every rdma-core's struct ibv_port_attr */
	return 0;
}

static int lx_query_gid(struct dvx_hal_nic *dev, uint8_t port, uint32_t index,
			struct dvx_hal_gid *gid)
{
	struct ibv_gid_entry e;
	int rc;

	memset(&e, 0, sizeof(e));
	memset(gid, 0, sizeof(*gid));
	gid->index = index;
	rc = ibv_query_gid_ex(ctx_of(dev), port, index, &e, 0);
	if (rc == ENODATA)
		return 0;	/* an empty table entry: valid stays 0 */
	if (rc)
		return os_fail(dev, "query_gid", rc > 0 ? rc : lx_errno(), "ibv_query_gid_ex");
	memcpy(gid->raw, e.gid.raw, sizeof(gid->raw));
	gid->type = (uint8_t)e.gid_type;
	gid->valid = 1;
	gid->ifindex = e.ndev_ifindex;
	if (e.ndev_ifindex) {
		char ifname[IF_NAMESIZE];

		if (if_indextoname(e.ndev_ifindex, ifname))
			copy_str(gid->netdev, sizeof(gid->netdev), ifname);
	}
	return 0;
}

/* the output's status and syndrome are only meaningful if the command wrote them */
static void clear_out_hdr(void *out, size_t outlen)
{
	memset(out, 0, outlen < 16 ? outlen : 16);
}

static int out_status(const void *out)
{
	return *(const uint8_t *)out;
}

static int lx_devx_cmd(struct dvx_hal_nic *dev, const void *in, size_t inlen, void *out,
		       size_t outlen)
{
	int rc;

	clear_out_hdr(out, outlen);
	rc = mlx5dv_devx_general_cmd(ctx_of(dev), in, inlen, out, outlen);
	if (rc || out_status(out))
		return dvx_hal_diag_devx(&dev->diag, "devx_cmd", in, out, rc > 0 ? rc : 0);
	return 0;
}

static int lx_obj_create(struct dvx_hal_nic *dev, const void *in, size_t inlen, void *out,
			 size_t outlen, struct dvx_hal_obj *obj)
{
	struct mlx5dv_devx_obj *o;

	clear_out_hdr(out, outlen);
	errno = 0;
	o = mlx5dv_devx_obj_create(ctx_of(dev), in, inlen, out, outlen);
	if (!o)
		return dvx_hal_diag_devx(&dev->diag, "obj_create", in, out, lx_errno());
	obj->priv = o;
	obj->cmd_opcode = dvx_get_be16(in);
	return 0;
}

static int lx_obj_modify(struct dvx_hal_nic *dev, struct dvx_hal_obj *obj, const void *in,
			 size_t inlen, void *out, size_t outlen)
{
	int rc;

	if (!obj->priv)
		return dvx_hal_diag_set(&dev->diag, -EINVAL, DVX_DIAG_ARG, "obj_modify",
					"object was not created");
	clear_out_hdr(out, outlen);
	rc = mlx5dv_devx_obj_modify(obj->priv, in, inlen, out, outlen);
	if (rc || out_status(out))
		return dvx_hal_diag_devx(&dev->diag, "obj_modify", in, out, rc > 0 ? rc : 0);
	return 0;
}

static int lx_obj_query(struct dvx_hal_nic *dev, struct dvx_hal_obj *obj, const void *in,
			size_t inlen, void *out, size_t outlen)
{
	int rc;

	if (!obj->priv)
		return dvx_hal_diag_set(&dev->diag, -EINVAL, DVX_DIAG_ARG, "obj_query",
					"object was not created");
	clear_out_hdr(out, outlen);
	rc = mlx5dv_devx_obj_query(obj->priv, in, inlen, out, outlen);
	if (rc || out_status(out))
		return dvx_hal_diag_devx(&dev->diag, "obj_query", in, out, rc > 0 ? rc : 0);
	return 0;
}

static int lx_obj_destroy(struct dvx_hal_nic *dev, struct dvx_hal_obj *obj)
{
	int rc;

	if (!obj->priv)
		return dvx_hal_diag_set(&dev->diag, -EINVAL, DVX_DIAG_ARG, "obj_destroy",
					"object was not created or is already destroyed");
	rc = mlx5dv_devx_obj_destroy(obj->priv);
	if (rc) {
		/* the kernel keeps the object; the destroy mailbox is not handed back */
		rc = rc > 0 ? rc : lx_errno();
		dvx_hal_diag_set(&dev->diag, -rc, DVX_DIAG_DEVX, "obj_destroy",
				 "destroy of object 0x%x (created by 0x%03x) failed: %s", obj->id,
				 obj->cmd_opcode, strerror(rc));
		dev->diag.sys_errno = rc;
		dev->diag.cmd_opcode = obj->cmd_opcode;
		return -rc;
	}
	obj->priv = NULL;
	return 0;
}

static int lx_umem_reg(struct dvx_hal_nic *dev, const struct dvx_hal_umem_req *req,
		       struct dvx_hal_umem *umem)
{
	struct mlx5dv_devx_umem *u;

	memset(umem, 0, sizeof(*umem));
	errno = 0;
	if (req->dmabuf_fd >= 0) {
#ifndef DVX_NO_MLX5DV_UMEM_DMABUF
		struct mlx5dv_devx_umem_in in;

		memset(&in, 0, sizeof(in));
		/* with the dma-buf mask, addr is the offset into the dma-buf */
		in.addr = (void *)(uintptr_t)req->dmabuf_offset;
		in.size = (size_t)req->len;
		in.access = req->access;
		in.pgsz_bitmap = req->pgsz_bitmap ? req->pgsz_bitmap
						  : ~(uint64_t)(sysconf(_SC_PAGESIZE) - 1);
		in.comp_mask = MLX5DV_UMEM_MASK_DMABUF;
		in.dmabuf_fd = req->dmabuf_fd;
		u = mlx5dv_devx_umem_reg_ex(ctx_of(dev), &in);
		if (!u)
			return reg_fail(dev, "umem_reg", lx_errno(), "dma-buf umem_reg_ex");
		umem->via_dmabuf = 1;
#else
		return dvx_hal_diag_set(&dev->diag, -EOPNOTSUPP, DVX_DIAG_OS, "umem_reg",
					"built against rdma-core without dma-buf umems (< 44)");
#endif
	} else if (req->pgsz_bitmap) {
		struct mlx5dv_devx_umem_in in;

		memset(&in, 0, sizeof(in));
		in.addr = req->addr;
		in.size = (size_t)req->len;
		in.access = req->access;
		in.pgsz_bitmap = req->pgsz_bitmap;
		u = mlx5dv_devx_umem_reg_ex(ctx_of(dev), &in);
		if (!u)
			return reg_fail(dev, "umem_reg", lx_errno(), "umem_reg_ex");
	} else {
		u = mlx5dv_devx_umem_reg(ctx_of(dev), req->addr, (size_t)req->len, req->access);
		if (!u)
			return reg_fail(dev, "umem_reg", lx_errno(), "mlx5dv_devx_umem_reg");
	}
	umem->priv = u;
	umem->id = u->umem_id;
	umem->len = req->len;
	return 0;
}

static int lx_umem_dereg(struct dvx_hal_nic *dev, struct dvx_hal_umem *umem)
{
	int rc;

	if (!umem->priv)
		return dvx_hal_diag_set(&dev->diag, -EINVAL, DVX_DIAG_ARG, "umem_dereg",
					"umem was not registered");
	rc = mlx5dv_devx_umem_dereg(umem->priv);
	if (rc)
		return os_fail(dev, "umem_dereg", rc > 0 ? rc : lx_errno(),
			       "mlx5dv_devx_umem_dereg");
	umem->priv = NULL;
	return 0;
}

static int lx_uar_alloc(struct dvx_hal_nic *dev, enum dvx_uar_type type, struct dvx_hal_uar *uar)
{
	struct mlx5dv_devx_uar *u;
	uint32_t flags;

	memset(uar, 0, sizeof(*uar));
	switch (type) {
	case DVX_UAR_NC_DEDICATED:
#ifdef MLX5DV_UAR_ALLOC_TYPE_NC_DEDICATED
		flags = MLX5DV_UAR_ALLOC_TYPE_NC_DEDICATED;
		break;
#else
		return dvx_hal_diag_set(&dev->diag, -EOPNOTSUPP, DVX_DIAG_OS, "uar_alloc",
					"built against rdma-core without NC_DEDICATED UARs (< 45)");
#endif
	case DVX_UAR_NC_SHARED:
		flags = MLX5DV_UAR_ALLOC_TYPE_NC;
		break;
	case DVX_UAR_BF:
		flags = MLX5DV_UAR_ALLOC_TYPE_BF;
		break;
	default:
		return dvx_hal_diag_set(&dev->diag, -EINVAL, DVX_DIAG_ARG, "uar_alloc",
					"unknown UAR type %u", (unsigned)type);
	}
	errno = 0;
	u = mlx5dv_devx_alloc_uar(ctx_of(dev), flags);
	if (!u)
		return os_fail(dev, "uar_alloc", lx_errno(), "mlx5dv_devx_alloc_uar");
	uar->priv = u;
	uar->reg_addr = u->reg_addr;
	uar->base_addr = u->base_addr;
	uar->page_id = u->page_id;
	uar->mmap_off = (uint64_t)u->mmap_off;
	uar->type = (uint32_t)type;
	/* how the kernel mapped it, not what was asked for */
	uar->nc = (uint32_t)dvx_hal_uar_mmap_is_nc(uar->mmap_off, (uint64_t)sysconf(_SC_PAGESIZE));
	return 0;
}

static int lx_uar_free(struct dvx_hal_nic *dev, struct dvx_hal_uar *uar)
{
	if (!uar->priv)
		return dvx_hal_diag_set(&dev->diag, -EINVAL, DVX_DIAG_ARG, "uar_free",
					"UAR was not allocated");
	mlx5dv_devx_free_uar(uar->priv);
	uar->priv = NULL;
	return 0;
}

static int lx_pd_alloc(struct dvx_hal_nic *dev, struct dvx_hal_pd *pd)
{
	struct mlx5dv_obj obj;
	struct mlx5dv_pd dvpd;
	struct ibv_pd *p;
	int rc;

	memset(pd, 0, sizeof(*pd));
	errno = 0;
	p = ibv_alloc_pd(ctx_of(dev));
	if (!p)
		return os_fail(dev, "pd_alloc", lx_errno(), "ibv_alloc_pd");
	memset(&obj, 0, sizeof(obj));
	memset(&dvpd, 0, sizeof(dvpd));
	obj.pd.in = p;
	obj.pd.out = &dvpd;
	rc = mlx5dv_init_obj(&obj, MLX5DV_OBJ_PD);
	if (rc) {
		os_fail(dev, "pd_alloc", rc > 0 ? rc : lx_errno(), "mlx5dv_init_obj(PD)");
		goto dealloc_pd;
	}
	pd->priv = p;
	pd->pdn = dvpd.pdn;
	return 0;

dealloc_pd:
	ibv_dealloc_pd(p);
	return dev->diag.err;
}

static int lx_pd_free(struct dvx_hal_nic *dev, struct dvx_hal_pd *pd)
{
	int rc;

	if (!pd->priv)
		return dvx_hal_diag_set(&dev->diag, -EINVAL, DVX_DIAG_ARG, "pd_free",
					"PD was not allocated");
	rc = ibv_dealloc_pd(pd->priv);
	if (rc)	/* EBUSY: MRs or AHs still use it */
		return os_fail(dev, "pd_free", rc > 0 ? rc : lx_errno(), "ibv_dealloc_pd");
	pd->priv = NULL;
	return 0;
}

static int lx_eqn_query(struct dvx_hal_nic *dev, uint32_t vector, uint32_t *eqn)
{
	int rc = mlx5dv_devx_query_eqn(ctx_of(dev), vector, eqn);

	if (rc)
		return os_fail(dev, "eqn_query", rc > 0 ? rc : lx_errno(), "mlx5dv_devx_query_eqn");
	return 0;
}

static int lx_mr_reg(struct dvx_hal_nic *dev, struct dvx_hal_pd *pd,
		     const struct dvx_hal_mr_req *req, struct dvx_hal_mr *mr)
{
	struct ibv_mr *m;
	int access = (int)req->access;

	memset(mr, 0, sizeof(*mr));
	if (!pd->priv)
		return dvx_hal_diag_set(&dev->diag, -EINVAL, DVX_DIAG_ARG, "mr_reg",
					"PD was not allocated");
	if ((req->flags & DVX_MR_DATA_DIRECT) && !(req->flags & DVX_MR_DMABUF))
		return dvx_hal_diag_set(&dev->diag, -EINVAL, DVX_DIAG_ARG, "mr_reg",
					"Data Direct applies to dma-buf MRs only");
	errno = 0;
	if (req->flags & DVX_MR_DATA_DIRECT) {
		if (!mlx5dv_reg_dmabuf_mr)
			return dvx_hal_diag_set(&dev->diag, -EOPNOTSUPP, DVX_DIAG_OS, "mr_reg",
						"libmlx5 lacks mlx5dv_reg_dmabuf_mr (Data Direct)");
		m = mlx5dv_reg_dmabuf_mr(pd->priv, req->dmabuf_offset, (size_t)req->len, req->iova,
					 req->dmabuf_fd, access, LX_REG_DMABUF_ACCESS_DATA_DIRECT);
		if (!m)
			return reg_fail(dev, "mr_reg", lx_errno(), "mlx5dv_reg_dmabuf_mr");
		mr->via_dmabuf = 1;
	} else if (req->flags & DVX_MR_DMABUF) {
		m = ibv_reg_dmabuf_mr(pd->priv, req->dmabuf_offset, (size_t)req->len, req->iova,
				      req->dmabuf_fd, access);
		if (!m)
			return reg_fail(dev, "mr_reg", lx_errno(), "ibv_reg_dmabuf_mr");
		mr->via_dmabuf = 1;
	} else {
		m = ibv_reg_mr_iova2(pd->priv, req->addr, (size_t)req->len, req->iova,
				     (unsigned)access);
		if (!m)
			return reg_fail(dev, "mr_reg", lx_errno(), "ibv_reg_mr_iova2");
	}
	mr->priv = m;
	mr->lkey = m->lkey;
	mr->rkey = m->rkey;
	mr->addr = req->addr;
	mr->len = req->len;
	mr->iova = req->iova;
	mr->access = req->access;
	return 0;
}

static int lx_mr_dereg(struct dvx_hal_nic *dev, struct dvx_hal_mr *mr)
{
	int rc;

	if (!mr->priv)
		return dvx_hal_diag_set(&dev->diag, -EINVAL, DVX_DIAG_ARG, "mr_dereg",
					"MR was not registered");
	rc = ibv_dereg_mr(mr->priv);
	if (rc)
		return os_fail(dev, "mr_dereg", rc > 0 ? rc : lx_errno(), "ibv_dereg_mr");
	mr->priv = NULL;
	return 0;
}

static int lx_roce_rmac(struct dvx_hal_nic *dev, struct dvx_hal_pd *pd, uint8_t port,
			uint32_t sgid_index, const uint8_t dgid[16], uint8_t mac[6])
{
	struct ibv_ah_attr attr;
	struct mlx5dv_obj obj;
	struct mlx5dv_ah dvah;
	struct ibv_ah *ah;
	int rc, err = 0;

	if (!pd->priv)
		return dvx_hal_diag_set(&dev->diag, -EINVAL, DVX_DIAG_ARG, "roce_rmac",
					"PD was not allocated");
	if (sgid_index > 255)
		return dvx_hal_diag_set(&dev->diag, -EINVAL, DVX_DIAG_ARG, "roce_rmac",
					"sgid_index %u out of range", sgid_index);
	/* every field zeroed: an uninitialised static_rate once cost NVSHMEM an EINVAL */
	memset(&attr, 0, sizeof(attr));
	attr.is_global = 1;
	attr.port_num = port;
	attr.grh.sgid_index = (uint8_t)sgid_index;
	attr.grh.hop_limit = 64;
	memcpy(attr.grh.dgid.raw, dgid, 16);
	errno = 0;
	ah = ibv_create_ah(pd->priv, &attr);
	if (!ah)
		return os_fail(dev, "roce_rmac", lx_errno(),
			       "ibv_create_ah (neighbour unresolved?)");
	memset(&obj, 0, sizeof(obj));
	memset(&dvah, 0, sizeof(dvah));
	obj.ah.in = ah;
	obj.ah.out = &dvah;
	rc = mlx5dv_init_obj(&obj, MLX5DV_OBJ_AH);
	if (rc || !dvah.av) {
		err = os_fail(dev, "roce_rmac", rc > 0 ? rc : EIO, "mlx5dv_init_obj(AH)");
		goto destroy_ah;
	}
	memcpy(mac, dvah.av->rmac, 6);
destroy_ah:
	ibv_destroy_ah(ah);
	return err;
}

static void lx_dev_progress(struct dvx_hal_nic *dev)
{
	(void)dev;
	dvx_host_cpu_relax();
}

static const struct dvx_hal_nic_ops linux_nic_ops = {
	.nic_list = lx_dev_list,
	.nic_open = lx_dev_open,
	.nic_close = lx_dev_close,
	.nic_query = lx_nic_query,
	.query_port = lx_query_port,
	.query_gid = lx_query_gid,
	.devx_cmd = lx_devx_cmd,
	.obj_create = lx_obj_create,
	.obj_modify = lx_obj_modify,
	.obj_query = lx_obj_query,
	.obj_destroy = lx_obj_destroy,
	.umem_reg = lx_umem_reg,
	.umem_dereg = lx_umem_dereg,
	.uar_alloc = lx_uar_alloc,
	.uar_free = lx_uar_free,
	.pd_alloc = lx_pd_alloc,
	.pd_free = lx_pd_free,
	.eqn_query = lx_eqn_query,
	.mr_reg = lx_mr_reg,
	.mr_dereg = lx_mr_dereg,
	.roce_rmac = lx_roce_rmac,
	.nic_progress = lx_dev_progress,
};

static const struct dvx_hal linux_hal = {
	.nic = &linux_nic_ops,
	.host = &dvx_host_ops,
#ifdef CONFIG_DVX_GPU
	/* one backend for NIC and GPU: dma-buf export and registration meet here */
	.gpu = &dvx_cuda_gpu_ops,
#endif
	.ctx = NULL,
	.name = "linux",
};

const struct dvx_hal *dvx_hal_linux(void)
{
	return &linux_hal;
}
