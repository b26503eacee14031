// SPDX-License-Identifier: MIT
/*
 * hal/mock/mock.c - the stateful fake backend (see dvx/testing/mock.h): the instance,
 * its configuration, the call log, fault injection and the accessors tests read.
 * The NIC, host and GPU tables are in nic.c, host.c (with the sockets) and gpu.c;
 * dvx_mock_init() joins them in init.c.
 */
#include <unistd.h>

#include "priv.h"
#include "../capmodel.h"

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
	[DVX_MOCK_OP_SOCK_LISTEN] = "sock_listen",
	[DVX_MOCK_OP_SOCK_CONNECT] = "sock_connect",
	[DVX_MOCK_OP_SOCK_ERROR] = "sock_error",
	[DVX_MOCK_OP_SOCK_ACCEPT] = "sock_accept",
	[DVX_MOCK_OP_SOCK_NAME] = "sock_name",
	[DVX_MOCK_OP_SOCK_SEND] = "sock_send",
	[DVX_MOCK_OP_SOCK_RECV] = "sock_recv",
	[DVX_MOCK_OP_SOCK_POLL] = "sock_poll",
	[DVX_MOCK_OP_SOCK_CLOSE] = "sock_close",
	[DVX_MOCK_OP_SOCK_UNLINK] = "sock_unlink",
	[DVX_MOCK_OP_SLEEP] = "sleep",
	[DVX_MOCK_OP_SOCK_SEND_FDS] = "sock_send_fds",
	[DVX_MOCK_OP_SOCK_RECV_FDS] = "sock_recv_fds",
	[DVX_MOCK_OP_SOCK_CRED] = "sock_cred",
	[DVX_MOCK_OP_FD_CLOSE] = "fd_close",
	[DVX_MOCK_OP_HOST_IDENT] = "host_ident",
	[DVX_MOCK_OP_RANDOM_BYTES] = "random_bytes",
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
	[DVX_MOCK_OP_GPU_MEM_IMPORT] = "gpu_mem_import",
	[DVX_MOCK_OP_GPU_MEM_LOOKUP] = "gpu_mem_lookup",
	[DVX_MOCK_OP_GPU_PEER_ACCESS] = "gpu_peer_access",
	[DVX_MOCK_OP_GPU_MEMCPY_ASYNC] = "gpu_memcpy_async",
	[DVX_MOCK_OP_GPU_STREAM_ATOMIC] = "gpu_stream_atomic",
};

static const char *const res_names[DVX_MOCK_RES_COUNT] = {
	[DVX_MOCK_RES_DEV] = "dev", [DVX_MOCK_RES_OBJ] = "obj",   [DVX_MOCK_RES_UMEM] = "umem",
	[DVX_MOCK_RES_UAR] = "uar", [DVX_MOCK_RES_PD] = "pd",	  [DVX_MOCK_RES_MR] = "mr",
	[DVX_MOCK_RES_MEM] = "mem", [DVX_MOCK_RES_SOCK] = "sock",
	[DVX_MOCK_RES_GPU_CTX] = "gpu_ctx", [DVX_MOCK_RES_GPU_MEM] = "gpu_mem",
	[DVX_MOCK_RES_GPU_HOSTREG] = "gpu_hostreg", [DVX_MOCK_RES_GPU_MODULE] = "gpu_module",
	[DVX_MOCK_RES_GPU_STREAM] = "gpu_stream",
	[DVX_MOCK_RES_FD] = "fd",
};

const char *dvx_mock_op_name(enum dvx_mock_op op)
{
	return (unsigned)op < DVX_MOCK_OP_COUNT ? op_names[op] : "?";
}

const char *dvx_mock_res_name(enum dvx_mock_res res)
{
	return (unsigned)res < DVX_MOCK_RES_COUNT ? res_names[res] : "?";
}

void dvx_mockp_copy_str(char *dst, size_t n, const char *src)
{
	size_t l = src ? strlen(src) : 0;

	if (l >= n)
		l = n - 1;
	if (l)
		memcpy(dst, src, l);
	dst[l] = '\0';
}

struct dvx_mock *dvx_mockp_mock_of(const struct dvx_hal *hal)
{
	return (struct dvx_mock *)hal->ctx;
}

struct dvx_mock *dvx_mockp_mock_dev(const struct dvx_hal_nic *dev)
{
	return dvx_mockp_mock_of(dev->hal);
}

/* index of the device a handle was opened on, -1 for a handle the mock did not open */
int dvx_mockp_dev_index(const struct dvx_mock *m, const struct dvx_hal_nic *dev)
{
	const struct dvx_mock_nic *d = (const struct dvx_mock_nic *)dev->priv;
	size_t i;

	for (i = 0; i < m->ndevs; i++)
		if (d == &m->dev[i])
			return m->dev[i].opens ? (int)i : -1;
	return -1;
}

/* ---- log and injection ---- */

struct dvx_mock_call *dvx_mockp_begin(struct dvx_mock *m, enum dvx_mock_op op, int dev)
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
	c->fd = -1;
	return c;
}

int dvx_mockp_end(struct dvx_mock *m, struct dvx_mock_call *c, int ret)
{
	c->ret = ret;
	if (ret < 0)
		m->op_fails[c->op]++;
	return ret;
}

int dvx_mockp_neg(int err)
{
	return err > 0 ? -err : (err ? err : -EIO);
}

/* the failure the hook or the fault knobs ask for, 0 for none */
int dvx_mockp_injected_err(struct dvx_mock *m, struct dvx_mock_call *c)
{
	int err = 0;

	if (m->check) {
		err = m->check(m->check_arg, c);
		if (err)
			err = dvx_mockp_neg(err);
	}
	if (!err && m->fail_at && c->seq == m->fail_at)
		err = dvx_mockp_neg(m->fail_at_err);
	if (!err && m->fail_op_err[c->op])
		err = dvx_mockp_neg(m->fail_op_err[c->op]);
	if (err)
		c->injected = 1;
	return err;
}

/* injection for calls on an open device: the failure also goes into dev->diag */
int dvx_mockp_inject_dev(struct dvx_mock *m, struct dvx_mock_call *c, struct dvx_hal_nic *dev)
{
	int err = dvx_mockp_injected_err(m, c);

	if (err && dev) {
		dvx_hal_diag_set(&dev->diag, err, DVX_DIAG_OS, dvx_mock_op_name(c->op),
				 "mock: injected failure of call %u", c->seq);
		dev->diag.sys_errno = -err;
	}
	return err;
}

int dvx_mockp_bad_handle(struct dvx_hal_nic *dev, enum dvx_mock_op op, const char *what)
{
	return dvx_hal_diag_set(&dev->diag, -EINVAL, DVX_DIAG_ARG, dvx_mock_op_name(op),
				"mock: %s", what);
}

uint32_t dvx_mockp_fresh_id(struct dvx_mock *m)
{
	m->next_id = (m->next_id + 1) & 0xffffffu;
	if (m->next_id == 0)
		m->next_id = 1;
	return m->next_id;
}

/* ---- public configuration and accessors ---- */


int dvx_mockp_fd_keep(struct dvx_mock *m, int fd)
{
	size_t i;

	for (i = 0; i < DVX_MOCK_MAX_FDS; i++)
		if (!m->fds[i].live) {
			m->fds[i].live = 1;
			m->fds[i].fd = fd;
			m->live[DVX_MOCK_RES_FD]++;
			return 0;
		}
	close(fd);
	return -EMFILE;
}

struct dvx_mock_fd *dvx_mockp_fd_find(struct dvx_mock *m, int fd)
{
	size_t i;

	for (i = 0; i < DVX_MOCK_MAX_FDS; i++)
		if (m->fds[i].live && m->fds[i].fd == fd)
			return &m->fds[i];
	return NULL;
}

const struct dvx_hal *dvx_mock_hal(struct dvx_mock *m)
{
	return m ? &m->hal : NULL;
}

/*
 * The default device's capability pages: the hal's ConnectX-7 model (hal/capmodel.c, the
 * software NIC's builder), so dvx_nic_open() works on a bare mock. Pages set later with
 * dvx_mock_nic_cfg_set_cap() replace these by op_mod.
 */
static void default_caps(struct dvx_mock_nic_cfg *cfg)
{
	static const unsigned types[] = { DVX_HAL_CAP_GENERAL, DVX_HAL_CAP_ATOMIC,
					  DVX_HAL_CAP_ROCE, DVX_HAL_CAP_GENERAL_2 };
	struct dvx_hal_cap_model model;
	size_t i;

	dvx_hal_cap_model_cx7(&model);
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		cfg->caps[i].op_mod = (uint16_t)(types[i] << 1 | 1);	/* current */
		cfg->caps[i].valid = 1;
		dvx_hal_cap_page(&model, types[i], cfg->caps[i].page);
	}
}

/*
 * A RoCE port always has its link-local GID (from the port's MAC, modified EUI-64) at
 * index 0 (RoCE v1) and 1 (RoCE v2), before any IP address is configured.
 */
static void default_gids(struct dvx_mock_nic_cfg *cfg)
{
	static const uint8_t ll[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0,
					0x00, 0x00, 0x00, 0xff, 0xfe, 0x00, 0x00, 0x01 };

	dvx_mock_nic_cfg_add_gid(cfg, 1, 0, ll, DVX_GID_TYPE_ROCE_V1, NULL);
	dvx_mock_nic_cfg_add_gid(cfg, 1, 1, ll, DVX_GID_TYPE_ROCE_V2, NULL);
}

void dvx_mock_nic_cfg_init(struct dvx_mock_nic_cfg *cfg, const char *name, const char *pci)
{
	memset(cfg, 0, sizeof(*cfg));
	dvx_mockp_copy_str(cfg->info.name, sizeof(cfg->info.name), name);
	if (pci)
		dvx_mockp_copy_str(cfg->info.pci, sizeof(cfg->info.pci), pci);
	dvx_mockp_copy_str(cfg->info.driver, sizeof(cfg->info.driver), "mlx5_core");
	cfg->info.numa_node = -1;
	cfg->info.vendor_id = DVX_PCI_VENDOR_MELLANOX;
	cfg->info.nports = 1;
	cfg->info.is_mlx5 = 1;
	dvx_mockp_copy_str(cfg->attr.fw_ver, sizeof(cfg->attr.fw_ver), "0.0.0");
	cfg->attr.vendor_id = DVX_PCI_VENDOR_MELLANOX;
	cfg->attr.phys_port_cnt = 1;
	cfg->port[0].state = 4;		/* ACTIVE */
	cfg->port[0].phys_state = 5;	/* LinkUp */
	cfg->port[0].link_layer = DVX_LINK_LAYER_ETHERNET;
	cfg->port[0].active_mtu = 5;
	cfg->port[0].max_mtu = 5;
	cfg->port[0].gid_tbl_len = DVX_MOCK_MAX_GIDS;
	cfg->port[0].pkey_tbl_len = 1;
	default_caps(cfg);
	default_gids(cfg);
}

void dvx_mock_nic_cfg_clear_caps(struct dvx_mock_nic_cfg *cfg)
{
	if (cfg)
		memset(cfg->caps, 0, sizeof(cfg->caps));
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
		dvx_mockp_copy_str(g->netdev, sizeof(g->netdev), netdev);
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

int dvx_mock_capture(struct dvx_mock *m, uint16_t opcode, int op_mod, void *in, size_t in_cap,
		     void *out, size_t out_cap)
{
	size_t i;

	for (i = 0; i < DVX_MOCK_MAX_CAPTURES; i++) {
		struct dvx_mock_capture *k = &m->capture[i];

		if (k->active)
			continue;
		memset(k, 0, sizeof(*k));
		k->active = 1;
		k->opcode = opcode;
		k->op_mod = op_mod;
		k->in = in;
		k->in_cap = in ? (uint32_t)in_cap : 0;
		k->out = out;
		k->out_cap = out ? (uint32_t)out_cap : 0;
		return (int)i;
	}
	return -ENOSPC;
}

void dvx_mock_capture_clear(struct dvx_mock *m)
{
	memset(m->capture, 0, sizeof(m->capture));
}

void dvx_mockp_capture(struct dvx_mock *m, const void *in, size_t inlen, const void *out,
		       size_t outlen)
{
	uint16_t opcode = dvx_get_be16(in);
	uint16_t op_mod = (uint16_t)(dvx_get_be32((const uint8_t *)in + 4) & 0xffffu);
	size_t i, n;

	for (i = 0; i < DVX_MOCK_MAX_CAPTURES; i++) {
		struct dvx_mock_capture *k = &m->capture[i];

		if (!k->active || k->opcode != opcode || (k->op_mod >= 0 && k->op_mod != op_mod))
			continue;
		k->count++;
		k->in_len = (uint32_t)inlen;
		k->out_len = (uint32_t)outlen;
		n = inlen < k->in_cap ? inlen : k->in_cap;
		if (n)
			memcpy(k->in, in, n);
		n = outlen < k->out_cap ? outlen : k->out_cap;
		if (n)
			memcpy(k->out, out, n);
	}
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
