// SPDX-License-Identifier: MIT
/*
 * hal/mock.c - the stateful fake backend (see dvx/testing/mock.h).
 *
 * Every op follows the same shape:
 *   begin()   take the next seq, open a log record, fill in the arguments;
 *   inject()  run the check hook, fail_at and fail_op (and say so in dev->diag);
 *   the op    validate handles, hand out or take back a resource, answer;
 *   end()     store the return value in the record.
 * Failures fill dev->diag the way the linux backend does, so the code under test
 * sees the same diagnostics from both.
 */
#include <errno.h>
#include <string.h>

#include <dvx/byteorder.h>
#include <dvx/testing/mock.h>

#include "host.h"
#include "sysfs.h"

#define MOCK_CMD_QUERY_HCA_CAP 0x100u	/* PRM opcode answered from the cap pages */
#define MOCK_STATUS_BAD_PARAM 0x03u
#define MOCK_SYNDROME_NO_CAP 0x4d4f434bu	/* "MOCK": no page configured for that op_mod */
#define MOCK_UAR_BF_OFFSET 0x800u		/* first register of a UAR page */

static const char *const op_names[DVX_MOCK_OP_COUNT] = {
	[DVX_MOCK_OP_NONE] = "none",
	[DVX_MOCK_OP_NIC_LIST] = "nic_list",
	[DVX_MOCK_OP_NIC_OPEN] = "nic_open",
	[DVX_MOCK_OP_NIC_CLOSE] = "nic_close",
	[DVX_MOCK_OP_NIC_QUERY] = "nic_query",
	[DVX_MOCK_OP_QUERY_PORT] = "query_port",
	[DVX_MOCK_OP_QUERY_GID] = "query_gid",
	[DVX_MOCK_OP_DEVX_CMD] = "devx_cmd",
	[DVX_MOCK_OP_OBJ_CREATE] = "obj_create",
	[DVX_MOCK_OP_OBJ_MODIFY] = "obj_modify",
	[DVX_MOCK_OP_OBJ_QUERY] = "obj_query",
	[DVX_MOCK_OP_OBJ_DESTROY] = "obj_destroy",
	[DVX_MOCK_OP_UMEM_REG] = "umem_reg",
	[DVX_MOCK_OP_UMEM_DEREG] = "umem_dereg",
	[DVX_MOCK_OP_UAR_ALLOC] = "uar_alloc",
	[DVX_MOCK_OP_UAR_FREE] = "uar_free",
	[DVX_MOCK_OP_PD_ALLOC] = "pd_alloc",
	[DVX_MOCK_OP_PD_FREE] = "pd_free",
	[DVX_MOCK_OP_EQN_QUERY] = "eqn_query",
	[DVX_MOCK_OP_MR_REG] = "mr_reg",
	[DVX_MOCK_OP_MR_DEREG] = "mr_dereg",
	[DVX_MOCK_OP_ROCE_RMAC] = "roce_rmac",
	[DVX_MOCK_OP_NIC_PROGRESS] = "nic_progress",
	[DVX_MOCK_OP_MEM_ALLOC] = "mem_alloc",
	[DVX_MOCK_OP_MEM_FREE] = "mem_free",
	[DVX_MOCK_OP_PCI_LIST] = "pci_list",
	[DVX_MOCK_OP_LIMITS] = "limits",
	[DVX_MOCK_OP_NOW_NS] = "now_ns",
	[DVX_MOCK_OP_GPU_INIT] = "gpu_init",
	[DVX_MOCK_OP_GPU_COUNT] = "gpu_count",
	[DVX_MOCK_OP_GPU_GET] = "gpu_get",
	[DVX_MOCK_OP_GPU_QUERY] = "gpu_query",
	[DVX_MOCK_OP_GPU_CTX_RETAIN] = "gpu_ctx_retain",
	[DVX_MOCK_OP_GPU_CTX_RELEASE] = "gpu_ctx_release",
	[DVX_MOCK_OP_GPU_CTX_SET_CURRENT] = "gpu_ctx_set_current",
	[DVX_MOCK_OP_GPU_MEM_CREATE] = "gpu_mem_create",
	[DVX_MOCK_OP_GPU_MEM_FREE] = "gpu_mem_free",
	[DVX_MOCK_OP_GPU_MEM_EXPORT] = "gpu_mem_export",
	[DVX_MOCK_OP_GPU_DMABUF_FD] = "gpu_dmabuf_fd",
	[DVX_MOCK_OP_GPU_HOST_REGISTER] = "gpu_host_register",
	[DVX_MOCK_OP_GPU_HOST_UNREGISTER] = "gpu_host_unregister",
	[DVX_MOCK_OP_GPU_MODULE_LOAD] = "gpu_module_load",
	[DVX_MOCK_OP_GPU_MODULE_UNLOAD] = "gpu_module_unload",
	[DVX_MOCK_OP_GPU_MODULE_FUNCTION] = "gpu_module_function",
	[DVX_MOCK_OP_GPU_LAUNCH] = "gpu_launch",
	[DVX_MOCK_OP_GPU_STREAM_CREATE] = "gpu_stream_create",
	[DVX_MOCK_OP_GPU_STREAM_DESTROY] = "gpu_stream_destroy",
	[DVX_MOCK_OP_GPU_STREAM_QUERY] = "gpu_stream_query",
	[DVX_MOCK_OP_GPU_MEMCPY_HTOD] = "gpu_memcpy_htod",
	[DVX_MOCK_OP_GPU_MEMCPY_DTOH] = "gpu_memcpy_dtoh",
};

static const char *const res_names[DVX_MOCK_RES_COUNT] = {
	[DVX_MOCK_RES_DEV] = "dev", [DVX_MOCK_RES_OBJ] = "obj",   [DVX_MOCK_RES_UMEM] = "umem",
	[DVX_MOCK_RES_UAR] = "uar", [DVX_MOCK_RES_PD] = "pd",	  [DVX_MOCK_RES_MR] = "mr",
	[DVX_MOCK_RES_MEM] = "mem",
	[DVX_MOCK_RES_GPU_CTX] = "gpu_ctx", [DVX_MOCK_RES_GPU_MEM] = "gpu_mem",
	[DVX_MOCK_RES_GPU_HOSTREG] = "gpu_hostreg", [DVX_MOCK_RES_GPU_MODULE] = "gpu_module",
	[DVX_MOCK_RES_GPU_STREAM] = "gpu_stream",
};

const char *dvx_mock_op_name(enum dvx_mock_op op)
{
	return (unsigned)op < DVX_MOCK_OP_COUNT ? op_names[op] : "?";
}

const char *dvx_mock_res_name(enum dvx_mock_res res)
{
	return (unsigned)res < DVX_MOCK_RES_COUNT ? res_names[res] : "?";
}

static void copy_str(char *dst, size_t n, const char *src)
{
	size_t l = src ? strlen(src) : 0;

	if (l >= n)
		l = n - 1;
	if (l)
		memcpy(dst, src, l);
	dst[l] = '\0';
}

static struct dvx_mock *mock_of(const struct dvx_hal *hal)
{
	return (struct dvx_mock *)hal->ctx;
}

static struct dvx_mock *mock_dev(const struct dvx_hal_nic *dev)
{
	return mock_of(dev->hal);
}

/* index of the device a handle was opened on, -1 for a handle the mock did not open */
static int dev_index(const struct dvx_mock *m, const struct dvx_hal_nic *dev)
{
	const struct dvx_mock_nic *d = (const struct dvx_mock_nic *)dev->priv;
	size_t i;

	for (i = 0; i < m->ndevs; i++)
		if (d == &m->dev[i])
			return m->dev[i].opens ? (int)i : -1;
	return -1;
}

/* ---- log and injection ---- */

static struct dvx_mock_call *begin(struct dvx_mock *m, enum dvx_mock_op op, int dev)
{
	struct dvx_mock_call *c;

	m->seq++;
	m->op_calls[op]++;
	c = &m->log[(m->seq - 1) % DVX_MOCK_LOG_MAX];
	memset(c, 0, sizeof(*c));
	c->seq = m->seq;
	c->op = (uint16_t)op;
	c->dev = (int16_t)dev;
	c->dmabuf_fd = -1;
	c->numa_node = -1;
	return c;
}

static int end(struct dvx_mock *m, struct dvx_mock_call *c, int ret)
{
	c->ret = ret;
	if (ret < 0)
		m->op_fails[c->op]++;
	return ret;
}

static int neg(int err)
{
	return err > 0 ? -err : (err ? err : -EIO);
}

/* the failure the hook or the fault knobs ask for, 0 for none */
static int injected_err(struct dvx_mock *m, struct dvx_mock_call *c)
{
	int err = 0;

	if (m->check) {
		err = m->check(m->check_arg, c);
		if (err)
			err = neg(err);
	}
	if (!err && m->fail_at && c->seq == m->fail_at)
		err = neg(m->fail_at_err);
	if (!err && m->fail_op_err[c->op])
		err = neg(m->fail_op_err[c->op]);
	if (err)
		c->injected = 1;
	return err;
}

/* injection for calls on an open device: the failure also goes into dev->diag */
static int inject_dev(struct dvx_mock *m, struct dvx_mock_call *c, struct dvx_hal_nic *dev)
{
	int err = injected_err(m, c);

	if (err && dev) {
		dvx_hal_diag_set(&dev->diag, err, DVX_DIAG_OS, dvx_mock_op_name(c->op),
				 "mock: injected failure of call %u", c->seq);
		dev->diag.sys_errno = -err;
	}
	return err;
}

static int bad_handle(struct dvx_hal_nic *dev, enum dvx_mock_op op, const char *what)
{
	return dvx_hal_diag_set(&dev->diag, -EINVAL, DVX_DIAG_ARG, dvx_mock_op_name(op),
				"mock: %s", what);
}

static uint32_t fresh_id(struct dvx_mock *m)
{
	m->next_id = (m->next_id + 1) & 0xffffffu;
	if (m->next_id == 0)
		m->next_id = 1;
	return m->next_id;
}

/* ---- public configuration and accessors ---- */

static const struct dvx_hal_ops mock_ops;

int dvx_mock_init(struct dvx_mock *m)
{
	if (!m)
		return -EINVAL;
	memset(m, 0, sizeof(*m));
	m->hal.ops = &mock_ops;
	m->hal.ctx = m;
	m->hal.name = "mock";
	m->limits.memlock_cur = UINT64_MAX;
	m->limits.memlock_max = UINT64_MAX;
	m->limits.page_size = 4096;
	m->next_id = 0x100;
	return 0;
}

const struct dvx_hal *dvx_mock_hal(struct dvx_mock *m)
{
	return m ? &m->hal : NULL;
}

void dvx_mock_nic_cfg_init(struct dvx_mock_nic_cfg *cfg, const char *name, const char *pci)
{
	memset(cfg, 0, sizeof(*cfg));
	copy_str(cfg->info.name, sizeof(cfg->info.name), name);
	if (pci)
		copy_str(cfg->info.pci, sizeof(cfg->info.pci), pci);
	copy_str(cfg->info.driver, sizeof(cfg->info.driver), "mlx5_core");
	cfg->info.numa_node = -1;
	cfg->info.vendor_id = DVX_PCI_VENDOR_MELLANOX;
	cfg->info.nports = 1;
	cfg->info.is_mlx5 = 1;
	copy_str(cfg->attr.fw_ver, sizeof(cfg->attr.fw_ver), "0.0.0");
	cfg->attr.vendor_id = DVX_PCI_VENDOR_MELLANOX;
	cfg->attr.phys_port_cnt = 1;
	cfg->port[0].state = 4;		/* ACTIVE */
	cfg->port[0].phys_state = 5;	/* LinkUp */
	cfg->port[0].link_layer = DVX_LINK_LAYER_ETHERNET;
	cfg->port[0].active_mtu = 5;
	cfg->port[0].max_mtu = 5;
	cfg->port[0].gid_tbl_len = DVX_MOCK_MAX_GIDS;
	cfg->port[0].pkey_tbl_len = 1;
}

int dvx_mock_nic_cfg_set_cap(struct dvx_mock_nic_cfg *cfg, uint16_t op_mod, const void *page)
{
	struct dvx_mock_cap *slot = NULL;
	size_t i;

	if (!cfg || !page)
		return -EINVAL;
	for (i = 0; i < DVX_MOCK_MAX_CAPS; i++) {
		if (cfg->caps[i].valid && cfg->caps[i].op_mod == op_mod) {
			slot = &cfg->caps[i];
			break;
		}
		if (!cfg->caps[i].valid && !slot)
			slot = &cfg->caps[i];
	}
	if (!slot)
		return -ENOSPC;
	slot->op_mod = op_mod;
	slot->valid = 1;
	memcpy(slot->page, page, DVX_MOCK_CAP_BYTES);
	return 0;
}

int dvx_mock_nic_cfg_add_gid(struct dvx_mock_nic_cfg *cfg, uint8_t port, uint32_t index,
			     const uint8_t raw[16], enum dvx_gid_type type, const char *netdev)
{
	struct dvx_hal_gid *g;

	if (!cfg || !raw || port == 0 || port > DVX_MOCK_MAX_PORTS || index >= DVX_MOCK_MAX_GIDS)
		return -EINVAL;
	g = &cfg->gid[port - 1][index];
	memset(g, 0, sizeof(*g));
	memcpy(g->raw, raw, 16);
	g->index = index;
	g->type = (uint8_t)type;
	g->valid = 1;
	if (netdev) {
		copy_str(g->netdev, sizeof(g->netdev), netdev);
		g->ifindex = 2 + port;
	}
	return 0;
}

int dvx_mock_add_nic(struct dvx_mock *m, const struct dvx_mock_nic_cfg *cfg)
{
	if (!m || !cfg)
		return -EINVAL;
	if (m->ndevs >= DVX_MOCK_MAX_DEVS)
		return -ENOSPC;
	memset(&m->dev[m->ndevs], 0, sizeof(m->dev[0]));
	m->dev[m->ndevs].cfg = *cfg;
	return (int)m->ndevs++;
}

struct dvx_mock_nic_cfg *dvx_mock_nic_cfg(struct dvx_mock *m, int idx)
{
	if (!m || idx < 0 || (unsigned)idx >= m->ndevs)
		return NULL;
	return &m->dev[idx].cfg;
}

int dvx_mock_add_pci(struct dvx_mock *m, const struct dvx_hal_pci_dev *pci)
{
	if (!m || !pci)
		return -EINVAL;
	if (m->npci >= DVX_MOCK_MAX_PCI)
		return -ENOSPC;
	m->pci[m->npci++] = *pci;
	return 0;
}

void dvx_mock_fail_at(struct dvx_mock *m, uint32_t seq, int err)
{
	m->fail_at = seq;
	m->fail_at_err = err;
}

void dvx_mock_fail_op(struct dvx_mock *m, enum dvx_mock_op op, int err)
{
	if ((unsigned)op < DVX_MOCK_OP_COUNT)
		m->fail_op_err[op] = err;
}

int dvx_mock_fail_devx(struct dvx_mock *m, int dev, uint16_t opcode, int op_mod,
		       uint8_t status, uint32_t syndrome, uint32_t count)
{
	size_t i;

	if (!m || !status)
		return -EINVAL;
	for (i = 0; i < DVX_MOCK_MAX_DEVX_FAULTS; i++) {
		struct dvx_mock_devx_fault *f = &m->devx_fault[i];

		if (f->active)
			continue;
		memset(f, 0, sizeof(*f));
		f->dev = dev;
		f->opcode = opcode;
		f->op_mod = op_mod;
		f->status = status;
		f->syndrome = syndrome;
		f->count = count;
		f->active = 1;
		return 0;
	}
	return -ENOSPC;
}

void dvx_mock_clear_faults(struct dvx_mock *m)
{
	m->fail_at = 0;
	m->fail_at_err = 0;
	memset(m->fail_op_err, 0, sizeof(m->fail_op_err));
	memset(m->devx_fault, 0, sizeof(m->devx_fault));
}

void dvx_mock_set_check(struct dvx_mock *m, dvx_mock_check_fn fn, void *arg)
{
	m->check = fn;
	m->check_arg = arg;
}

void dvx_mock_reset_log(struct dvx_mock *m)
{
	m->seq = 0;
	memset(m->op_calls, 0, sizeof(m->op_calls));
	memset(m->op_fails, 0, sizeof(m->op_fails));
	memset(m->log, 0, sizeof(m->log));
}

uint32_t dvx_mock_calls(const struct dvx_mock *m)
{
	return m->seq;
}

uint32_t dvx_mock_count(const struct dvx_mock *m, enum dvx_mock_op op)
{
	return (unsigned)op < DVX_MOCK_OP_COUNT ? m->op_calls[op] : 0;
}

uint32_t dvx_mock_fails(const struct dvx_mock *m, enum dvx_mock_op op)
{
	return (unsigned)op < DVX_MOCK_OP_COUNT ? m->op_fails[op] : 0;
}

const struct dvx_mock_call *dvx_mock_call_at(const struct dvx_mock *m, uint32_t seq)
{
	const struct dvx_mock_call *c;

	if (!seq || seq > m->seq || m->seq - seq >= DVX_MOCK_LOG_MAX)
		return NULL;
	c = &m->log[(seq - 1) % DVX_MOCK_LOG_MAX];
	return c->seq == seq ? c : NULL;
}

static uint32_t first_seq(const struct dvx_mock *m)
{
	return m->seq > DVX_MOCK_LOG_MAX ? m->seq - DVX_MOCK_LOG_MAX + 1 : 1;
}

const struct dvx_mock_call *dvx_mock_find(const struct dvx_mock *m, enum dvx_mock_op op,
					  unsigned nth)
{
	uint32_t s;

	for (s = first_seq(m); s && s <= m->seq; s++) {
		const struct dvx_mock_call *c = dvx_mock_call_at(m, s);

		if (c && c->op == op && nth-- == 0)
			return c;
	}
	return NULL;
}

const struct dvx_mock_call *dvx_mock_last(const struct dvx_mock *m, enum dvx_mock_op op)
{
	uint32_t s;

	for (s = m->seq; s >= first_seq(m) && s; s--) {
		const struct dvx_mock_call *c = dvx_mock_call_at(m, s);

		if (c && c->op == op)
			return c;
	}
	return NULL;
}

int dvx_mock_live(const struct dvx_mock *m, enum dvx_mock_res res)
{
	return (unsigned)res < DVX_MOCK_RES_COUNT ? m->live[res] : 0;
}

int dvx_mock_live_total(const struct dvx_mock *m)
{
	int i, n = 0;

	for (i = 0; i < DVX_MOCK_RES_COUNT; i++)
		n += m->live[i];
	return n;
}

const struct dvx_mock_obj *dvx_mock_obj_by_id(const struct dvx_mock *m, uint32_t id)
{
	size_t i;

	for (i = 0; i < DVX_MOCK_MAX_OBJS; i++)
		if (m->obj[i].live && m->obj[i].id == id)
			return &m->obj[i];
	return NULL;
}

/* ---- devices ---- */

static int mock_dev_list(const struct dvx_hal *hal, struct dvx_hal_nic_info *info, unsigned max,
			 unsigned *count)
{
	struct dvx_mock *m = mock_of(hal);
	struct dvx_mock_call *c = begin(m, DVX_MOCK_OP_NIC_LIST, -1);
	unsigned i;
	int err;

	c->len = max;
	err = injected_err(m, c);
	if (err)
		return end(m, c, err);
	for (i = 0; i < m->ndevs && i < max; i++)
		info[i] = m->dev[i].cfg.info;
	*count = m->ndevs;
	return end(m, c, 0);
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
	struct dvx_mock *m = mock_of(hal);
	int idx = find_dev(m, name);
	struct dvx_mock_call *c = begin(m, DVX_MOCK_OP_NIC_OPEN, idx);
	struct dvx_mock_nic *d;
	int err;

	copy_str(c->name, sizeof(c->name), name);
	err = inject_dev(m, c, dev);
	if (err)
		return end(m, c, err);
	if (idx < 0)
		return end(m, c, dvx_hal_diag_set(&dev->diag, -ENODEV, DVX_DIAG_ARG, "nic_open",
						  "no RDMA device named or at \"%s\"", name));
	d = &m->dev[idx];
	if (!d->cfg.info.is_mlx5) {
		err = dvx_hal_diag_set(&dev->diag, -ENODEV, DVX_DIAG_ARG, "nic_open",
				       "%s is driven by %s, not mlx5: dvx drives mlx5 only",
				       d->cfg.info.name,
				       d->cfg.info.driver[0] ? d->cfg.info.driver : "unknown");
		return end(m, c, err);
	}
	if (d->cfg.open_err) {
		err = dvx_hal_diag_set(&dev->diag, neg(d->cfg.open_err), DVX_DIAG_OS, "nic_open",
				       "DEVX open failed: no DEVX support or no permission (mock)");
		dev->diag.sys_errno = -err;
		return end(m, c, err);
	}
	d->opens++;
	m->live[DVX_MOCK_RES_DEV]++;
	dev->priv = d;
	dev->info = d->cfg.info;
	return end(m, c, 0);
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
	struct dvx_mock *m = mock_dev(dev);
	int idx = dev_index(m, dev);
	struct dvx_mock_call *c = begin(m, DVX_MOCK_OP_NIC_CLOSE, idx);
	int err = inject_dev(m, c, dev);

	if (err)
		return end(m, c, err);	/* the device stays open */
	if (idx < 0)
		return end(m, c, bad_handle(dev, DVX_MOCK_OP_NIC_CLOSE, "device is not open"));
	/* like ibv_close_device: succeeds, the kernel would reap what is left */
	if (dev_holds(m, idx))
		m->closed_with_live++;
	m->dev[idx].opens--;
	m->live[DVX_MOCK_RES_DEV]--;
	return end(m, c, 0);
}

#define DEV_CALL_BEGIN(op)                                                                 \
	struct dvx_mock *m = mock_dev(dev);                                                \
	int idx = dev_index(m, dev);                                                       \
	struct dvx_mock_call *c = begin(m, op, idx);                                       \
	int err

#define DEV_CALL_CHECK(op)                                                                 \
	do {                                                                               \
		err = inject_dev(m, c, dev);                                               \
		if (err)                                                                   \
			return end(m, c, err);                                             \
		if (idx < 0)                                                               \
			return end(m, c, bad_handle(dev, op, "device is not open"));       \
	} while (0)

static int mock_nic_query(struct dvx_hal_nic *dev, struct dvx_hal_nic_attr *attr)
{
	DEV_CALL_BEGIN(DVX_MOCK_OP_NIC_QUERY);

	DEV_CALL_CHECK(DVX_MOCK_OP_NIC_QUERY);
	*attr = m->dev[idx].cfg.attr;
	return end(m, c, 0);
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
		return end(m, c, dvx_hal_diag_set(&dev->diag, -EINVAL, DVX_DIAG_OS, "query_port",
						  "mock: no port %u", port));
	*attr = m->dev[idx].cfg.port[port - 1];
	return end(m, c, 0);
}

static int mock_query_gid(struct dvx_hal_nic *dev, uint8_t port, uint32_t index,
			  struct dvx_hal_gid *gid)
{
	DEV_CALL_BEGIN(DVX_MOCK_OP_QUERY_GID);

	c->port = port;
	c->index = index;
	DEV_CALL_CHECK(DVX_MOCK_OP_QUERY_GID);
	if (!port_ok(m, idx, port) || index >= m->dev[idx].cfg.port[port - 1].gid_tbl_len)
		return end(m, c, dvx_hal_diag_set(&dev->diag, -EINVAL, DVX_DIAG_OS, "query_gid",
						  "mock: no GID %u on port %u", index, port));
	memset(gid, 0, sizeof(*gid));
	if (index < DVX_MOCK_MAX_GIDS)
		*gid = m->dev[idx].cfg.gid[port - 1][index];
	gid->index = index;
	return end(m, c, 0);
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

static int mock_devx_cmd(struct dvx_hal_nic *dev, const void *in, size_t inlen, void *out,
			 size_t outlen)
{
	const struct dvx_mock_cap *cap = NULL;
	size_t i, n;

	DEV_CALL_BEGIN(DVX_MOCK_OP_DEVX_CMD);

	note_mailbox(c, in, inlen, outlen);
	DEV_CALL_CHECK(DVX_MOCK_OP_DEVX_CMD);
	err = devx_fault(m, c, dev, in, out, outlen);
	if (err)
		return end(m, c, err);
	memset(out, 0, outlen);
	if (c->prm_opcode != MOCK_CMD_QUERY_HCA_CAP)
		return end(m, c, 0);	/* any other command: status 0, empty output */
	for (i = 0; i < DVX_MOCK_MAX_CAPS; i++) {
		const struct dvx_mock_cap *k = &m->dev[idx].cfg.caps[i];

		if (k->valid && k->op_mod == c->prm_op_mod)
			cap = k;
	}
	if (!cap) {
		((uint8_t *)out)[0] = MOCK_STATUS_BAD_PARAM;
		dvx_put_be32((uint8_t *)out + 4, MOCK_SYNDROME_NO_CAP);
		return end(m, c, dvx_hal_diag_devx(&dev->diag, "devx_cmd", in, out, EREMOTEIO));
	}
	n = outlen < 16 ? 0 : outlen - 16;
	if (n > DVX_MOCK_CAP_BYTES)
		n = DVX_MOCK_CAP_BYTES;
	memcpy((uint8_t *)out + 16, cap->page, n);
	return end(m, c, 0);
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

static int mock_obj_create(struct dvx_hal_nic *dev, const void *in, size_t inlen, void *out,
			   size_t outlen, struct dvx_hal_obj *obj)
{
	struct dvx_mock_obj *o = NULL;
	size_t i;

	DEV_CALL_BEGIN(DVX_MOCK_OP_OBJ_CREATE);

	note_mailbox(c, in, inlen, outlen);
	DEV_CALL_CHECK(DVX_MOCK_OP_OBJ_CREATE);
	err = devx_fault(m, c, dev, in, out, outlen);
	if (err)
		return end(m, c, err);
	for (i = 0; i < DVX_MOCK_MAX_OBJS && !o; i++)
		if (!m->obj[i].live)
			o = &m->obj[i];
	if (!o)
		return end(m, c, dvx_hal_diag_set(&dev->diag, -ENOMEM, DVX_DIAG_OS, "obj_create",
						  "mock: all %d object slots in use",
						  DVX_MOCK_MAX_OBJS));
	memset(o, 0, sizeof(*o));
	o->live = 1;
	o->dev = (int8_t)idx;
	o->opcode = c->prm_opcode;
	o->id = fresh_id(m);
	c->id = o->id;
	memset(out, 0, outlen);
	dvx_put_be32((uint8_t *)out + 8, o->id);	/* out dw@8 [23:0]: the new object */
	obj->priv = o;
	obj->cmd_opcode = o->opcode;
	m->live[DVX_MOCK_RES_OBJ]++;
	return end(m, c, 0);
}

static int mock_obj_modify(struct dvx_hal_nic *dev, struct dvx_hal_obj *obj, const void *in,
			   size_t inlen, void *out, size_t outlen)
{
	struct dvx_mock_obj *o;

	DEV_CALL_BEGIN(DVX_MOCK_OP_OBJ_MODIFY);

	note_mailbox(c, in, inlen, outlen);
	c->id = obj->id;
	DEV_CALL_CHECK(DVX_MOCK_OP_OBJ_MODIFY);
	o = obj_of(m, obj);
	if (!o)
		return end(m, c, bad_handle(dev, DVX_MOCK_OP_OBJ_MODIFY,
					    "unknown or destroyed object"));
	err = devx_fault(m, c, dev, in, out, outlen);
	if (err)
		return end(m, c, err);
	o->modifies++;
	o->last_modify_opcode = c->prm_opcode;
	memset(out, 0, outlen);
	return end(m, c, 0);
}

static int mock_obj_query(struct dvx_hal_nic *dev, struct dvx_hal_obj *obj, const void *in,
			  size_t inlen, void *out, size_t outlen)
{
	struct dvx_mock_obj *o;

	DEV_CALL_BEGIN(DVX_MOCK_OP_OBJ_QUERY);

	note_mailbox(c, in, inlen, outlen);
	c->id = obj->id;
	DEV_CALL_CHECK(DVX_MOCK_OP_OBJ_QUERY);
	o = obj_of(m, obj);
	if (!o)
		return end(m, c, bad_handle(dev, DVX_MOCK_OP_OBJ_QUERY,
					    "unknown or destroyed object"));
	err = devx_fault(m, c, dev, in, out, outlen);
	if (err)
		return end(m, c, err);
	o->queries++;
	memset(out, 0, outlen);
	return end(m, c, 0);
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
		return end(m, c, bad_handle(dev, DVX_MOCK_OP_OBJ_DESTROY,
					    "unknown or already destroyed object"));
	o->live = 0;
	obj->priv = NULL;
	m->live[DVX_MOCK_RES_OBJ]--;
	return end(m, c, 0);
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
		return end(m, c, dvx_hal_diag_set(&dev->diag, -ENOMEM, DVX_DIAG_OS, "umem_reg",
						  "mock: all umem slots in use"));
	memset(u, 0, sizeof(*u));
	u->live = 1;
	u->dev = (int8_t)idx;
	u->id = fresh_id(m);
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
	return end(m, c, 0);
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
		return end(m, c, bad_handle(dev, DVX_MOCK_OP_UMEM_DEREG, "umem is not registered"));
	u->live = 0;
	umem->priv = NULL;
	m->live[DVX_MOCK_RES_UMEM]--;
	return end(m, c, 0);
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
		return end(m, c, dvx_hal_diag_set(&dev->diag, -ENOMEM, DVX_DIAG_OS, "uar_alloc",
						  "mock: all UAR pages in use"));
	memset(u, 0, sizeof(*u));
	u->live = 1;
	u->dev = (int8_t)idx;
	u->type = (uint32_t)type;
	u->page_id = fresh_id(m);
	memset(m->uar_page[slot], 0, DVX_MOCK_UAR_BYTES);
	memset(uar, 0, sizeof(*uar));
	uar->priv = u;
	uar->base_addr = m->uar_page[slot];
	uar->reg_addr = (uint8_t *)m->uar_page[slot] + MOCK_UAR_BF_OFFSET;
	uar->page_id = u->page_id;
	uar->type = (uint32_t)type;
	uar->mmap_off = (uint64_t)(slot + 1) * DVX_MOCK_UAR_BYTES;
	c->id = u->page_id;
	m->live[DVX_MOCK_RES_UAR]++;
	return end(m, c, 0);
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
		return end(m, c, bad_handle(dev, DVX_MOCK_OP_UAR_FREE, "UAR is not allocated"));
	u->live = 0;
	uar->priv = NULL;
	m->live[DVX_MOCK_RES_UAR]--;
	return end(m, c, 0);
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
		return end(m, c, dvx_hal_diag_set(&dev->diag, -ENOMEM, DVX_DIAG_OS, "pd_alloc",
						  "mock: all PD slots in use"));
	memset(p, 0, sizeof(*p));
	p->live = 1;
	p->dev = (int8_t)idx;
	p->pdn = fresh_id(m);
	memset(pd, 0, sizeof(*pd));
	pd->priv = p;
	pd->pdn = p->pdn;
	c->id = p->pdn;
	m->live[DVX_MOCK_RES_PD]++;
	return end(m, c, 0);
}

static int mock_pd_free(struct dvx_hal_nic *dev, struct dvx_hal_pd *pd)
{
	struct dvx_mock_pd *p;

	DEV_CALL_BEGIN(DVX_MOCK_OP_PD_FREE);

	c->id = pd->pdn;
	DEV_CALL_CHECK(DVX_MOCK_OP_PD_FREE);
	FIND_HANDLE(m->pd, DVX_MOCK_MAX_PDS, pd->priv, p);
	if (!p)
		return end(m, c, bad_handle(dev, DVX_MOCK_OP_PD_FREE, "PD is not allocated"));
	if (p->mrs) {	/* like ibv_dealloc_pd with MRs on it */
		err = dvx_hal_diag_set(&dev->diag, -EBUSY, DVX_DIAG_OS, "pd_free",
				       "mock: %u MRs still registered on PD 0x%x", p->mrs, p->pdn);
		dev->diag.sys_errno = EBUSY;
		return end(m, c, err);
	}
	p->live = 0;
	pd->priv = NULL;
	m->live[DVX_MOCK_RES_PD]--;
	return end(m, c, 0);
}

static int mock_eqn_query(struct dvx_hal_nic *dev, uint32_t vector, uint32_t *eqn)
{
	DEV_CALL_BEGIN(DVX_MOCK_OP_EQN_QUERY);

	c->index = vector;
	DEV_CALL_CHECK(DVX_MOCK_OP_EQN_QUERY);
	*eqn = m->dev[idx].cfg.eqn;
	c->id = *eqn;
	return end(m, c, 0);
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
		return end(m, c, bad_handle(dev, DVX_MOCK_OP_MR_REG, "PD is not allocated"));
	if ((req->flags & DVX_MR_DATA_DIRECT) && !(req->flags & DVX_MR_DMABUF))
		return end(m, c, bad_handle(dev, DVX_MOCK_OP_MR_REG,
					    "Data Direct applies to dma-buf MRs only"));
	for (i = 0; i < DVX_MOCK_MAX_MRS && !r; i++)
		if (!m->mr[i].live)
			r = &m->mr[i];
	if (!r)
		return end(m, c, dvx_hal_diag_set(&dev->diag, -ENOMEM, DVX_DIAG_OS, "mr_reg",
						  "mock: all MR slots in use"));
	memset(r, 0, sizeof(*r));
	r->live = 1;
	r->dev = (int8_t)idx;
	r->pd = (int8_t)(p - m->pd);
	r->lkey = fresh_id(m) << 8 | 0x42;	/* index and key byte, as mlx5 mkeys are */
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
	return end(m, c, 0);
}

static int mock_mr_dereg(struct dvx_hal_nic *dev, struct dvx_hal_mr *mr)
{
	struct dvx_mock_mr *r;

	DEV_CALL_BEGIN(DVX_MOCK_OP_MR_DEREG);

	c->id = mr->lkey;
	DEV_CALL_CHECK(DVX_MOCK_OP_MR_DEREG);
	FIND_HANDLE(m->mr, DVX_MOCK_MAX_MRS, mr->priv, r);
	if (!r)
		return end(m, c, bad_handle(dev, DVX_MOCK_OP_MR_DEREG, "MR is not registered"));
	r->live = 0;
	if (m->pd[r->pd].mrs)
		m->pd[r->pd].mrs--;
	mr->priv = NULL;
	m->live[DVX_MOCK_RES_MR]--;
	return end(m, c, 0);
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
		return end(m, c, bad_handle(dev, DVX_MOCK_OP_ROCE_RMAC, "PD is not allocated"));
	if (!port_ok(m, idx, port))
		return end(m, c, dvx_hal_diag_set(&dev->diag, -EINVAL, DVX_DIAG_OS, "roce_rmac",
						  "mock: no port %u", port));
	memcpy(mac, m->dev[idx].cfg.rmac, 6);
	return end(m, c, 0);
}

static void mock_dev_progress(struct dvx_hal_nic *dev)
{
	struct dvx_mock *m = mock_dev(dev);
	struct dvx_mock_call *c = begin(m, DVX_MOCK_OP_NIC_PROGRESS, dev_index(m, dev));

	if (m->check)
		(void)m->check(m->check_arg, c);	/* observed, cannot fail */
	m->progress_calls++;
	end(m, c, 0);
}

/* ---- host side ---- */

static int mock_mem_alloc(const struct dvx_hal *hal, uint64_t len, uint64_t align, int numa_node,
			  uint32_t flags, struct dvx_hal_mem *mem)
{
	struct dvx_mock *m = mock_of(hal);
	struct dvx_mock_call *c = begin(m, DVX_MOCK_OP_MEM_ALLOC, -1);
	struct dvx_mock_mem *s = NULL;
	size_t i;
	int err;

	c->len = len;
	c->align = align;
	c->numa_node = numa_node;
	c->flags = flags;
	err = injected_err(m, c);
	if (err)
		return end(m, c, err);
	for (i = 0; i < DVX_MOCK_MAX_MEMS && !s; i++)
		if (!m->mem[i].live)
			s = &m->mem[i];
	if (!s)
		return end(m, c, -ENOMEM);
	err = dvx_host_mem_alloc(hal, len, align, numa_node, flags, mem);
	if (err)
		return end(m, c, err);
	s->live = 1;
	s->addr = mem->addr;
	c->addr = (uint64_t)(uintptr_t)mem->addr;
	m->live[DVX_MOCK_RES_MEM]++;
	return end(m, c, 0);
}

static int mock_mem_free(const struct dvx_hal *hal, struct dvx_hal_mem *mem)
{
	struct dvx_mock *m = mock_of(hal);
	struct dvx_mock_call *c = begin(m, DVX_MOCK_OP_MEM_FREE, -1);
	struct dvx_mock_mem *s = NULL;
	size_t i;
	int err;

	c->addr = (uint64_t)(uintptr_t)mem->addr;
	c->len = mem->len;
	err = injected_err(m, c);
	if (err)
		return end(m, c, err);	/* the memory stays allocated */
	for (i = 0; i < DVX_MOCK_MAX_MEMS && !s; i++)
		if (m->mem[i].live && mem->addr && m->mem[i].addr == mem->addr)
			s = &m->mem[i];
	if (!s)
		return end(m, c, -EINVAL);
	err = dvx_host_mem_free(hal, mem);
	if (err)
		return end(m, c, err);
	s->live = 0;
	m->live[DVX_MOCK_RES_MEM]--;
	return end(m, c, 0);
}

static int mock_pci_list(const struct dvx_hal *hal, uint32_t class_mask, uint32_t class_value,
			 struct dvx_hal_pci_dev *devs, unsigned max, unsigned *count)
{
	struct dvx_mock *m = mock_of(hal);
	struct dvx_mock_call *c = begin(m, DVX_MOCK_OP_PCI_LIST, -1);
	unsigned i, n = 0;
	int err;

	c->flags = class_mask;
	c->id = class_value;
	c->len = max;
	err = injected_err(m, c);
	if (err)
		return end(m, c, err);
	for (i = 0; i < m->npci; i++) {
		if ((m->pci[i].class_code & class_mask) != class_value)
			continue;
		if (n < max)
			devs[n] = m->pci[i];
		n++;
	}
	*count = n;
	return end(m, c, 0);
}

static int mock_limits(const struct dvx_hal *hal, struct dvx_hal_limits *lim)
{
	struct dvx_mock *m = mock_of(hal);
	struct dvx_mock_call *c = begin(m, DVX_MOCK_OP_LIMITS, -1);
	int err = injected_err(m, c);

	if (err)
		return end(m, c, err);
	if (m->limits_err)
		return end(m, c, neg(m->limits_err));
	*lim = m->limits;
	return end(m, c, 0);
}

static uint64_t mock_now_ns(const struct dvx_hal *hal)
{
	struct dvx_mock *m = mock_of(hal);
	struct dvx_mock_call *c = begin(m, DVX_MOCK_OP_NOW_NS, -1);
	uint64_t now = m->now_ns;

	m->now_ns += m->now_step;
	c->len = now;
	if (m->check)
		(void)m->check(m->check_arg, c);	/* observed, cannot fail */
	end(m, c, 0);
	return now;
}

/* ---- GPU fakes (see dvx_mock_add_gpu()) ---- */

int dvx_mock_add_gpu(struct dvx_mock *m, const struct dvx_hal_gpu_attr *attr)
{
	if (!m || !attr)
		return -EINVAL;
	if (m->ngpus >= DVX_MOCK_MAX_GPUS)
		return -ENOSPC;
	m->gpu[m->ngpus] = *attr;
	m->gpu[m->ngpus].ordinal = (int32_t)m->ngpus;
	return (int)m->ngpus++;
}

void dvx_mock_gpu_attr_h100(struct dvx_hal_gpu_attr *attr, const char *pci)
{
	memset(attr, 0, sizeof(*attr));
	copy_str(attr->name, sizeof(attr->name), "Mock H100");
	copy_str(attr->pci, sizeof(attr->pci), pci ? pci : "0000:19:00.0");
	attr->driver_version = 13000;
	attr->cc_major = 9;
	attr->cc_minor = 0;
	attr->sm_count = 132;
	attr->max_threads_per_block = 1024;
	attr->warp_size = 32;
	attr->gdr_writes_ordering = 100;
	attr->total_mem = 80ull << 30;
	attr->gdr = 1;
	attr->dmabuf = 1;
	attr->vmm = 1;
	attr->vmm_rdma = 1;
	attr->posix_fd = 1;
	attr->host_register = 1;
	attr->can_map_host = 1;
	attr->unified_addressing = 1;
}

static struct dvx_mock *mock_gpu(const struct dvx_hal_gpu *gpu)
{
	return mock_of(gpu->hal);
}

/* a GPU call's log record; injected failures also go into gpu->diag */
static struct dvx_mock_call *gbegin(struct dvx_mock *m, enum dvx_mock_op op,
				    const struct dvx_hal_gpu *gpu)
{
	return begin(m, op, gpu->ordinal);
}

static int ginject(struct dvx_mock *m, struct dvx_mock_call *c, struct dvx_hal_gpu *gpu)
{
	int err = injected_err(m, c);

	if (err) {
		dvx_hal_diag_set(&gpu->diag, err, DVX_DIAG_CUDA, dvx_mock_op_name(c->op),
				 "mock: injected failure of call %u", c->seq);
		gpu->diag.cu_result = 999;	/* CUDA_ERROR_UNKNOWN */
	}
	return err;
}

static int gbad(struct dvx_mock *m, struct dvx_mock_call *c, struct dvx_hal_gpu *gpu, int err,
		const char *what)
{
	dvx_hal_diag_set(&gpu->diag, err, DVX_DIAG_CUDA, dvx_mock_op_name(c->op), "mock: %s", what);
	return end(m, c, err);
}

/* the device a handle was opened on, or NULL */
static int gpu_ok(const struct dvx_mock *m, const struct dvx_hal_gpu *gpu)
{
	return gpu->handle >= 0 && (unsigned)gpu->handle < m->ngpus;
}

#define GPU_OP_BEGIN(op_)                                                           \
	struct dvx_mock *m = mock_gpu(gpu);                                          \
	struct dvx_mock_call *c = gbegin(m, op_, gpu);                               \
	int err

#define GPU_OP_INJECT()                                                             \
	do {                                                                        \
		err = ginject(m, c, gpu);                                           \
		if (err)                                                            \
			return end(m, c, err);                                      \
	} while (0)

static int mock_gpu_init(struct dvx_hal_gpu *gpu)
{
	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_INIT);
	GPU_OP_INJECT();
	if (m->gpu_init_err)
		return gbad(m, c, gpu, neg(m->gpu_init_err), "gpu_init_err set (no driver)");
	return end(m, c, 0);
}

static int mock_gpu_count(struct dvx_hal_gpu *gpu, int *count)
{
	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_COUNT);
	GPU_OP_INJECT();
	*count = (int)m->ngpus;
	return end(m, c, 0);
}

static int mock_gpu_get(struct dvx_hal_gpu *gpu, int ordinal, const char *pci)
{
	unsigned i;

	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_GET);
	c->index = (uint32_t)ordinal;
	copy_str(c->name, sizeof(c->name), pci);
	GPU_OP_INJECT();
	if (pci && *pci) {
		for (i = 0; i < m->ngpus; i++)
			if (!strcmp(m->gpu[i].pci, pci) || !strcmp(m->gpu[i].pci + 5, pci))
				break;
	} else {
		i = (unsigned)ordinal;
	}
	if (i >= m->ngpus)
		return gbad(m, c, gpu, -ENODEV, "no such GPU");
	gpu->ordinal = (int32_t)i;
	gpu->handle = (int32_t)i;
	c->dev = (int16_t)i;
	return end(m, c, 0);
}

static int mock_gpu_query(struct dvx_hal_gpu *gpu, struct dvx_hal_gpu_attr *attr)
{
	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_QUERY);
	GPU_OP_INJECT();
	if (!gpu_ok(m, gpu))
		return gbad(m, c, gpu, -ENODEV, "bad GPU handle");
	*attr = m->gpu[gpu->handle];
	return end(m, c, 0);
}

static int mock_gpu_ctx_retain(struct dvx_hal_gpu *gpu)
{
	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_CTX_RETAIN);
	GPU_OP_INJECT();
	if (!gpu_ok(m, gpu))
		return gbad(m, c, gpu, -ENODEV, "bad GPU handle");
	m->gpu_ctx_refs[gpu->handle]++;
	m->live[DVX_MOCK_RES_GPU_CTX]++;
	gpu->priv = &m->gpu[gpu->handle];
	gpu->ctx_retained = 1;
	return end(m, c, 0);
}

static int mock_gpu_ctx_release(struct dvx_hal_gpu *gpu)
{
	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_CTX_RELEASE);
	GPU_OP_INJECT();
	if (!gpu_ok(m, gpu) || !m->gpu_ctx_refs[gpu->handle])
		return gbad(m, c, gpu, -EINVAL, "no context retained");
	m->gpu_ctx_refs[gpu->handle]--;
	m->live[DVX_MOCK_RES_GPU_CTX]--;
	gpu->priv = NULL;
	gpu->ctx_retained = 0;
	return end(m, c, 0);
}

static int mock_gpu_ctx_set_current(struct dvx_hal_gpu *gpu)
{
	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_CTX_SET_CURRENT);
	GPU_OP_INJECT();
	if (!gpu_ok(m, gpu) || !m->gpu_ctx_refs[gpu->handle])
		return gbad(m, c, gpu, -EINVAL, "context not retained");
	return end(m, c, 0);
}

static struct dvx_mock_gpu_mem *gmem_of(struct dvx_mock *m, uint64_t dptr)
{
	size_t i;

	for (i = 0; i < DVX_MOCK_MAX_GPU_MEMS; i++)
		if (m->gpu_mem[i].live && (uint64_t)(uintptr_t)m->gpu_mem[i].host.addr == dptr)
			return &m->gpu_mem[i];
	return NULL;
}

static int mock_gpu_mem_create(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_mem_req *req,
			       struct dvx_hal_gpu_mem *mem)
{
	struct dvx_mock_gpu_mem *s = NULL;
	uint64_t len;
	size_t i;

	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_MEM_CREATE);
	c->len = req->len;
	c->flags = req->flags;
	GPU_OP_INJECT();
	if (!gpu_ok(m, gpu) || !m->gpu_ctx_refs[gpu->handle])
		return gbad(m, c, gpu, -EINVAL, "no context");
	if ((req->flags & DVX_HAL_GPU_MEM_RDMA) && !m->gpu[gpu->handle].vmm_rdma)
		return gbad(m, c, gpu, -EOPNOTSUPP, "gpuDirectRDMACapable not supported");
	for (i = 0; i < DVX_MOCK_MAX_GPU_MEMS && !s; i++)
		if (!m->gpu_mem[i].live)
			s = &m->gpu_mem[i];
	if (!s)
		return gbad(m, c, gpu, -ENOMEM, "gpu_mem table full");
	len = DVX_ALIGN_UP(req->len, (uint64_t)(2u << 20));	/* the VMM granularity */
	err = dvx_host_mem_alloc(gpu->hal, len, 4096, -1, DVX_MEM_F_ZERO, &s->host);
	if (err)
		return gbad(m, c, gpu, err, "no host memory to stand in");
	s->live = 1;
	s->gpu = (int8_t)gpu->handle;
	memset(mem, 0, sizeof(*mem));
	mem->dptr = (uint64_t)(uintptr_t)s->host.addr;
	mem->len = len;
	mem->handle = (uint64_t)(s - m->gpu_mem) + 1;
	mem->flags = req->flags & (DVX_HAL_GPU_MEM_RDMA | DVX_HAL_GPU_MEM_EXPORT);
	c->addr = mem->dptr;
	m->live[DVX_MOCK_RES_GPU_MEM]++;
	return end(m, c, 0);
}

static int mock_gpu_mem_free(struct dvx_hal_gpu *gpu, struct dvx_hal_gpu_mem *mem)
{
	struct dvx_mock_gpu_mem *s;

	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_MEM_FREE);
	c->addr = mem->dptr;
	c->len = mem->len;
	GPU_OP_INJECT();
	s = gmem_of(m, mem->dptr);
	if (!s)
		return gbad(m, c, gpu, -EINVAL, "not device memory of the mock");
	dvx_host_mem_free(gpu->hal, &s->host);
	s->live = 0;
	memset(mem, 0, sizeof(*mem));
	m->live[DVX_MOCK_RES_GPU_MEM]--;
	return end(m, c, 0);
}

static int mock_gpu_mem_export(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_mem *mem, int *fd)
{
	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_MEM_EXPORT);
	c->addr = mem->dptr;
	GPU_OP_INJECT();
	if (!gmem_of(m, mem->dptr))
		return gbad(m, c, gpu, -EINVAL, "not device memory of the mock");
	if (!(mem->flags & DVX_HAL_GPU_MEM_EXPORT))
		return gbad(m, c, gpu, -EINVAL, "memory was not created exportable");
	*fd = DVX_MOCK_GPU_FD_BASE + m->gpu_next_fd++;
	c->dmabuf_fd = *fd;
	return end(m, c, 0);
}

static int mock_gpu_dmabuf_fd(struct dvx_hal_gpu *gpu, uint64_t dptr, uint64_t len, uint32_t flags,
			      int *fd)
{
	size_t i;

	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_DMABUF_FD);
	c->addr = dptr;
	c->len = len;
	c->flags = flags;
	GPU_OP_INJECT();
	if (!gpu_ok(m, gpu) || !m->gpu[gpu->handle].dmabuf)
		return gbad(m, c, gpu, -EOPNOTSUPP, "dma-buf not supported");
	if ((dptr | len) & 4095)
		return gbad(m, c, gpu, -EINVAL, "range not page aligned");
	for (i = 0; i < DVX_MOCK_MAX_GPU_MEMS; i++) {
		const struct dvx_mock_gpu_mem *s = &m->gpu_mem[i];
		uint64_t a = (uint64_t)(uintptr_t)s->host.addr;

		if (s->live && dptr >= a && dptr + len <= a + s->host.len)
			break;
	}
	if (i == DVX_MOCK_MAX_GPU_MEMS)
		return gbad(m, c, gpu, -EINVAL, "range not inside device memory");
	*fd = DVX_MOCK_GPU_FD_BASE + m->gpu_next_fd++;
	c->dmabuf_fd = *fd;
	return end(m, c, 0);
}

static int mock_gpu_host_register(struct dvx_hal_gpu *gpu, void *addr, uint64_t len,
				  uint32_t flags, uint64_t *dptr)
{
	struct dvx_mock_gpu_hostreg *s = NULL;
	size_t i;

	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_HOST_REGISTER);
	c->addr = (uint64_t)(uintptr_t)addr;
	c->len = len;
	c->flags = flags;
	GPU_OP_INJECT();
	if (!gpu_ok(m, gpu) || !m->gpu_ctx_refs[gpu->handle])
		return gbad(m, c, gpu, -EINVAL, "no context");
	for (i = 0; i < DVX_MOCK_MAX_GPU_HOSTREGS; i++) {
		const struct dvx_mock_gpu_hostreg *h = &m->gpu_hostreg[i];

		if (h->live && c->addr < h->addr + h->len && h->addr < c->addr + len)
			return gbad(m, c, gpu, -EEXIST, "range already registered");
		if (!h->live && !s)
			s = &m->gpu_hostreg[i];
	}
	if (!s)
		return gbad(m, c, gpu, -ENOMEM, "hostreg table full");
	s->live = 1;
	s->gpu = (int8_t)gpu->handle;
	s->flags = flags;
	s->addr = c->addr;
	s->len = len;
	*dptr = c->addr;	/* unified addressing: the device sees the host address */
	m->live[DVX_MOCK_RES_GPU_HOSTREG]++;
	return end(m, c, 0);
}

static int mock_gpu_host_unregister(struct dvx_hal_gpu *gpu, void *addr)
{
	size_t i;

	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_HOST_UNREGISTER);
	c->addr = (uint64_t)(uintptr_t)addr;
	GPU_OP_INJECT();
	for (i = 0; i < DVX_MOCK_MAX_GPU_HOSTREGS; i++)
		if (m->gpu_hostreg[i].live && m->gpu_hostreg[i].addr == c->addr)
			break;
	if (i == DVX_MOCK_MAX_GPU_HOSTREGS)
		return gbad(m, c, gpu, -ENOENT, "not registered");
	m->gpu_hostreg[i].live = 0;
	m->live[DVX_MOCK_RES_GPU_HOSTREG]--;
	return end(m, c, 0);
}

static int mock_gpu_module_load(struct dvx_hal_gpu *gpu, const void *image,
				struct dvx_hal_gpu_module *mod)
{
	size_t i;

	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_MODULE_LOAD);
	c->addr = (uint64_t)(uintptr_t)image;
	GPU_OP_INJECT();
	for (i = 0; i < DVX_MOCK_MAX_GPU_MODULES; i++)
		if (!m->gpu_module_live[i])
			break;
	if (i == DVX_MOCK_MAX_GPU_MODULES)
		return gbad(m, c, gpu, -ENOMEM, "module table full");
	m->gpu_module_live[i] = 1;
	mod->priv = &m->gpu_module_live[i];
	c->id = (uint32_t)i;
	m->live[DVX_MOCK_RES_GPU_MODULE]++;
	return end(m, c, 0);
}

static int module_index(const struct dvx_mock *m, const struct dvx_hal_gpu_module *mod)
{
	const uint8_t *p = (const uint8_t *)mod->priv;

	if (p < m->gpu_module_live || p >= m->gpu_module_live + DVX_MOCK_MAX_GPU_MODULES || !*p)
		return -1;
	return (int)(p - m->gpu_module_live);
}

static int mock_gpu_module_unload(struct dvx_hal_gpu *gpu, struct dvx_hal_gpu_module *mod)
{
	int i;

	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_MODULE_UNLOAD);
	GPU_OP_INJECT();
	i = module_index(m, mod);
	if (i < 0)
		return gbad(m, c, gpu, -EBADF, "not a loaded module");
	m->gpu_module_live[i] = 0;
	mod->priv = NULL;
	m->live[DVX_MOCK_RES_GPU_MODULE]--;
	return end(m, c, 0);
}

static int mock_gpu_module_function(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_module *mod,
				    const char *name, void **func)
{
	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_MODULE_FUNCTION);
	copy_str(c->name, sizeof(c->name), name);
	GPU_OP_INJECT();
	if (module_index(m, mod) < 0)
		return gbad(m, c, gpu, -EBADF, "not a loaded module");
	*func = (void *)name;	/* the launch hook can tell kernels apart by name */
	return end(m, c, 0);
}

static int mock_gpu_launch(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_launch *l)
{
	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_LAUNCH);
	c->len = (uint64_t)l->grid[0] * l->grid[1] * l->grid[2];
	c->index = l->block[0] * l->block[1] * l->block[2];
	copy_str(c->name, sizeof(c->name), (const char *)l->func);
	GPU_OP_INJECT();
	err = m->gpu_launch_fn ? m->gpu_launch_fn(m->gpu_launch_arg, l) : 0;
	return err ? gbad(m, c, gpu, neg(err), "the launch hook failed") : end(m, c, 0);
}

static int mock_gpu_stream_create(struct dvx_hal_gpu *gpu, void **stream)
{
	size_t i;

	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_STREAM_CREATE);
	GPU_OP_INJECT();
	for (i = 0; i < DVX_MOCK_MAX_GPU_STREAMS; i++)
		if (!m->gpu_stream_live[i])
			break;
	if (i == DVX_MOCK_MAX_GPU_STREAMS)
		return gbad(m, c, gpu, -ENOMEM, "stream table full");
	m->gpu_stream_live[i] = 1;
	*stream = &m->gpu_stream_live[i];
	m->live[DVX_MOCK_RES_GPU_STREAM]++;
	return end(m, c, 0);
}

static int stream_index(const struct dvx_mock *m, const void *stream)
{
	const uint8_t *p = (const uint8_t *)stream;

	if (p < m->gpu_stream_live || p >= m->gpu_stream_live + DVX_MOCK_MAX_GPU_STREAMS || !*p)
		return -1;
	return (int)(p - m->gpu_stream_live);
}

static int mock_gpu_stream_destroy(struct dvx_hal_gpu *gpu, void *stream)
{
	int i;

	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_STREAM_DESTROY);
	GPU_OP_INJECT();
	i = stream_index(m, stream);
	if (i < 0)
		return gbad(m, c, gpu, -EBADF, "not a live stream");
	m->gpu_stream_live[i] = 0;
	m->live[DVX_MOCK_RES_GPU_STREAM]--;
	return end(m, c, 0);
}

static int mock_gpu_stream_query(struct dvx_hal_gpu *gpu, void *stream)
{
	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_STREAM_QUERY);
	GPU_OP_INJECT();
	if (stream && stream_index(m, stream) < 0)
		return gbad(m, c, gpu, -EBADF, "not a live stream");
	if (m->gpu_stream_busy) {
		m->gpu_stream_busy--;
		return end(m, c, -EBUSY);
	}
	return end(m, c, 0);
}

static int mock_gpu_memcpy_htod(struct dvx_hal_gpu *gpu, uint64_t dptr, const void *src,
				uint64_t len)
{
	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_MEMCPY_HTOD);
	c->addr = dptr;
	c->len = len;
	GPU_OP_INJECT();
	memcpy((void *)(uintptr_t)dptr, src, len);
	return end(m, c, 0);
}

static int mock_gpu_memcpy_dtoh(struct dvx_hal_gpu *gpu, void *dst, uint64_t dptr, uint64_t len)
{
	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_MEMCPY_DTOH);
	c->addr = dptr;
	c->len = len;
	GPU_OP_INJECT();
	memcpy(dst, (const void *)(uintptr_t)dptr, len);
	return end(m, c, 0);
}

static const struct dvx_hal_ops mock_ops = {
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
	.mem_alloc = mock_mem_alloc,
	.mem_free = mock_mem_free,
	.pci_list = mock_pci_list,
	.limits = mock_limits,
	.now_ns = mock_now_ns,
	.gpu_init = mock_gpu_init,
	.gpu_count = mock_gpu_count,
	.gpu_get = mock_gpu_get,
	.gpu_query = mock_gpu_query,
	.gpu_ctx_retain = mock_gpu_ctx_retain,
	.gpu_ctx_release = mock_gpu_ctx_release,
	.gpu_ctx_set_current = mock_gpu_ctx_set_current,
	.gpu_mem_create = mock_gpu_mem_create,
	.gpu_mem_free = mock_gpu_mem_free,
	.gpu_mem_export = mock_gpu_mem_export,
	.gpu_dmabuf_fd = mock_gpu_dmabuf_fd,
	.gpu_host_register = mock_gpu_host_register,
	.gpu_host_unregister = mock_gpu_host_unregister,
	.gpu_module_load = mock_gpu_module_load,
	.gpu_module_unload = mock_gpu_module_unload,
	.gpu_module_function = mock_gpu_module_function,
	.gpu_launch = mock_gpu_launch,
	.gpu_stream_create = mock_gpu_stream_create,
	.gpu_stream_destroy = mock_gpu_stream_destroy,
	.gpu_stream_query = mock_gpu_stream_query,
	.gpu_memcpy_htod = mock_gpu_memcpy_htod,
	.gpu_memcpy_dtoh = mock_gpu_memcpy_dtoh,
};
