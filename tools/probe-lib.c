// SPDX-License-Identifier: MIT
/*
 * tools/probe-lib.c - dvx-probe: what the mlx5 devices of this host can do for dvx.
 *
 * The probe first collects everything (through the hal only, so the tests drive it
 * with the mock), then prints it as a table or as one JSON document. A failing hal
 * call is recorded next to the device it belongs to and the probe goes on with the
 * next step; every device opened is closed again.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <dvx/hal.h>
#include <dvx/mlx5/caps.h>
#include <dvx/mlx5/cmd.h>

#include "probe-lib.h"
#include "tool.h"

#define MAX_PORTS 4
#define MAX_GIDS 64
#define MAX_ERRS 16
#define GID_TBL_LIMIT 1024u	/* never walk more entries than this per port */
#define VENDOR_NVIDIA 0x10deu

/* one failed hal call, in the vendor's words (from dev->diag where there is one) */
struct perr {
	char op[32];
	char ctx[64];
	int err;
	int sys_errno;
	uint16_t src;
	uint16_t cmd_opcode;
	uint8_t status;
	uint32_t syndrome;
	char msg[96];
};

struct perrs {
	struct perr e[MAX_ERRS];
	unsigned n;
	unsigned dropped;
};

struct pport {
	uint8_t num;
	int ok;
	struct dvx_hal_port_attr attr;
	struct dvx_hal_gid gid[MAX_GIDS];
	unsigned ngid;
	unsigned gid_dropped;
};

enum { GPU_UNKNOWN = 0, GPU_NONE, GPU_FOUND };

struct pdev {
	struct dvx_hal_nic_info info;
	int opened;
	int attr_ok;
	struct dvx_hal_nic_attr attr;
	struct dvx_mlx5_caps caps;
	int gpu_state;
	struct dvx_hal_pci_dev gpu;
	const char *gpu_rel;
	unsigned gpu_common;
	unsigned nports;
	struct pport port[MAX_PORTS];
	struct perrs errs;
};

struct probe {
	const struct dvx_hal *hal;
	const struct dvx_probe_opts *o;
	FILE *out;
	FILE *msg;
	uint64_t memlock_warn;
	int limits_ok;
	struct dvx_hal_limits lim;
	int list_ok;
	unsigned nlisted;
	struct dvx_hal_pci_dev *pci;
	unsigned npci;
	int pci_ok;
	struct pdev *dev;
	unsigned ndev;
	struct dvx_hal_nic_info *other;
	unsigned nother;
	struct perrs errs;	/* not tied to a device: limits, dev_list, pci_list */
	int status;
};

/* ---- small helpers ---- */

static void copy_str(char *dst, size_t n, const char *src)
{
	size_t l = src ? strlen(src) : 0;

	if (l >= n)
		l = n - 1;
	if (l)
		memcpy(dst, src, l);
	dst[l] = '\0';
}

static const char *errno_name(int e)
{
	static const struct {
		int e;
		const char *name;
	} names[] = {
		{ EPERM, "EPERM" },
		{ ENOENT, "ENOENT" },
		{ EIO, "EIO" },
		{ ENXIO, "ENXIO" },
		{ EBADF, "EBADF" },
		{ EAGAIN, "EAGAIN" },
		{ ENOMEM, "ENOMEM" },
		{ EACCES, "EACCES" },
		{ EFAULT, "EFAULT" },
		{ EBUSY, "EBUSY" },
		{ EEXIST, "EEXIST" },
		{ ENODEV, "ENODEV" },
		{ EINVAL, "EINVAL" },
		{ ENOSPC, "ENOSPC" },
		{ ERANGE, "ERANGE" },
		{ ENOSYS, "ENOSYS" },
		{ ENODATA, "ENODATA" },
		{ ETIMEDOUT, "ETIMEDOUT" },
		{ EOPNOTSUPP, "EOPNOTSUPP" },
		{ EPROTONOSUPPORT, "EPROTONOSUPPORT" },
		{ ENETUNREACH, "ENETUNREACH" },
		{ EREMOTEIO, "EREMOTEIO" },
		{ ENAMETOOLONG, "ENAMETOOLONG" },
	};
	size_t i;

	if (e < 0)
		e = -e;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].e == e)
			return names[i].name;
	return "E?";
}

static void add_err(struct perrs *es, const char *op, const char *ctx, int err,
		    const struct dvx_diag *d)
{
	struct perr *e;

	if (es->n >= MAX_ERRS) {
		es->dropped++;
		return;
	}
	e = &es->e[es->n++];
	memset(e, 0, sizeof(*e));
	copy_str(e->op, sizeof(e->op), d && d->err && d->op[0] ? d->op : op);
	copy_str(e->ctx, sizeof(e->ctx), ctx);
	/* a command the NIC refused: the errno is its status's (the hal keeps it raw) */
	if (err == -EREMOTEIO && d && d->src == DVX_DIAG_DEVX && d->status)
		err = dvx_mlx5_cmd_status_errno(d->status);
	e->err = err;
	if (d && d->err) {
		e->sys_errno = d->sys_errno;
		e->src = d->src;
		e->cmd_opcode = d->cmd_opcode;
		e->status = d->status;
		e->syndrome = d->syndrome;
		copy_str(e->msg, sizeof(e->msg), d->msg);
	}
	if (!e->msg[0])
		copy_str(e->msg, sizeof(e->msg), strerror(err < 0 ? -err : err));
}

/* "3b:00.0" and "0000:3B:00.0" both become "0000:3b:00.0"; anything else is copied */
static void pci_canon(const char *in, char *out, size_t n)
{
	size_t i, l = strlen(in);

	if (l == 7 && in[2] == ':' && in[5] == '.')
		snprintf(out, n, "0000:%s", in);
	else
		copy_str(out, n, in);
	for (i = 0; out[i]; i++)
		out[i] = (char)tolower((unsigned char)out[i]);
}

static int dev_matches(const struct dvx_hal_nic_info *info, const char *want)
{
	char a[DVX_HAL_PCI_MAX + 8], b[DVX_HAL_PCI_MAX + 8];

	if (strcmp(info->name, want) == 0)
		return 1;
	if (!info->pci[0])
		return 0;
	pci_canon(want, a, sizeof(a));
	pci_canon(info->pci, b, sizeof(b));
	return strcmp(a, b) == 0;
}

static void fmt_guid(uint64_t g, char *buf, size_t n)
{
	snprintf(buf, n, "%04x:%04x:%04x:%04x", (unsigned)(g >> 48) & 0xffff,
		 (unsigned)(g >> 32) & 0xffff, (unsigned)(g >> 16) & 0xffff, (unsigned)g & 0xffff);
}

static void fmt_gid(const uint8_t raw[16], char *buf, size_t n)
{
	static const uint8_t v4pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (memcmp(raw, v4pfx, 12) == 0)
		snprintf(buf, n, "::ffff:%u.%u.%u.%u", raw[12], raw[13], raw[14], raw[15]);
	else if (!inet_ntop(AF_INET6, raw, buf, (socklen_t)n))
		copy_str(buf, n, "?");
}

static const char *gid_type_name(uint8_t t)
{
	switch (t) {
	case DVX_GID_TYPE_IB:
		return "IB";
	case DVX_GID_TYPE_ROCE_V1:
		return "RoCE v1";
	case DVX_GID_TYPE_ROCE_V2:
		return "RoCE v2";
	default:
		return "?";
	}
}

static const char *port_state_name(uint8_t s)
{
	static const char *const n[] = { "NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER" };

	return s < sizeof(n) / sizeof(n[0]) ? n[s] : "?";
}

static const char *link_layer_name(uint8_t l)
{
	switch (l) {
	case DVX_LINK_LAYER_IB:
		return "InfiniBand";
	case DVX_LINK_LAYER_ETHERNET:
		return "Ethernet";
	default:
		return "unspecified";
	}
}

static unsigned mtu_bytes(uint8_t mtu)
{
	return mtu >= 1 && mtu <= 5 ? 128u << mtu : 0;
}

static const char *cap_type_name(unsigned t)
{
	switch (t) {
	case DVX_MLX5_CAP_TYPE_GENERAL:
		return "general";
	case DVX_MLX5_CAP_TYPE_ATOMIC:
		return "atomic";
	case DVX_MLX5_CAP_TYPE_ROCE:
		return "roce";
	case DVX_MLX5_CAP_TYPE_GENERAL_2:
		return "general2";
	default:
		return "?";
	}
}

/* ---- PCI distance: sysfs paths list the bridges from the host bridge down ---- */

/* the path from its host-bridge component ("pci0000:00/...") on, or NULL */
static const char *topo_of(const char *path)
{
	const char *p = path;

	while ((p = strstr(p, "/pci")) != NULL) {
		if (p[4] && isxdigit((unsigned char)p[4]))
			return p + 1;
		p++;
	}
	return strncmp(path, "pci", 3) == 0 ? path : NULL;
}

static unsigned depth_of(const char *t)
{
	unsigned n = 1;

	for (; *t; t++)
		if (*t == '/' && t[1])
			n++;
	return n;
}

/* number of leading path components two topologies share */
static unsigned common_of(const char *a, const char *b)
{
	unsigned n = 0;

	for (;;) {
		size_t la = strcspn(a, "/"), lb = strcspn(b, "/");

		if (la != lb || la == 0 || memcmp(a, b, la))
			return n;
		n++;
		if (!a[la] || !b[lb])
			return n;
		a += la + 1;
		b += lb + 1;
	}
}

/*
 * nvidia-smi topo's words: PIX at most one bridge between them, PXB several bridges
 * below one host bridge, PHB through the host bridge, NODE between host bridges of
 * one NUMA node, SYS across NUMA nodes.
 */
static const char *relation(const char *nic, const char *gpu, unsigned c, int nic_node,
			    int gpu_node)
{
	unsigned dn = depth_of(nic), dg = depth_of(gpu);

	if (c >= 2 && c < dn && c < dg)
		return (dn - 1 - c) + (dg - 1 - c) + 1 <= 1 ? "PIX" : "PXB";
	if (c >= 1)
		return "PHB";
	return nic_node >= 0 && nic_node == gpu_node ? "NODE" : "SYS";
}

static int is_gpu(const struct dvx_hal_pci_dev *d)
{
	uint32_t cls = d->class_code >> 8;

	return d->vendor_id == VENDOR_NVIDIA && (cls == 0x0302 || cls == 0x0300);
}

static void nearest_gpu(struct probe *p, struct pdev *d)
{
	const struct dvx_hal_pci_dev *nic = NULL, *best = NULL;
	const char *nt;
	unsigned i, best_c = 0;
	int best_same_node = 0, ngpu = 0;

	d->gpu_state = GPU_UNKNOWN;
	if (!p->pci_ok)
		return;
	for (i = 0; i < p->npci; i++)
		ngpu += is_gpu(&p->pci[i]);
	if (!ngpu) {
		d->gpu_state = GPU_NONE;
		return;
	}
	if (d->info.pci[0]) {
		char want[DVX_HAL_PCI_MAX + 8], have[DVX_HAL_PCI_MAX + 8];

		pci_canon(d->info.pci, want, sizeof(want));
		for (i = 0; i < p->npci && !nic; i++) {
			pci_canon(p->pci[i].pci, have, sizeof(have));
			if (strcmp(want, have) == 0)
				nic = &p->pci[i];
		}
	}
	nt = nic ? topo_of(nic->path) : NULL;
	for (i = 0; i < p->npci; i++) {
		const struct dvx_hal_pci_dev *g = &p->pci[i];
		const char *gt = topo_of(g->path);
		unsigned c = nt && gt ? common_of(nt, gt) : 0;
		int same = g->numa_node >= 0 && g->numa_node == d->info.numa_node;

		if (!is_gpu(g))
			continue;
		if (!best || c > best_c || (c == best_c && same && !best_same_node)) {
			best = g;
			best_c = c;
			best_same_node = same;
		}
	}
	d->gpu = *best;
	d->gpu_state = GPU_FOUND;
	d->gpu_common = best_c;
	/* without both PCI paths only the NUMA node guided the choice */
	if (nt && topo_of(best->path))
		d->gpu_rel = relation(nt, topo_of(best->path), best_c, d->info.numa_node,
				      best->numa_node);
	else
		d->gpu_rel = "path unknown";
}

/* ---- collection ---- */

static void query_cap(struct pdev *d, struct dvx_hal_nic *dev, unsigned type)
{
	uint8_t in[DVX_MLX5_QUERY_HCA_CAP_IN_BYTES];
	uint8_t out[DVX_MLX5_QUERY_HCA_CAP_OUT_BYTES];
	char ctx[64];
	int err;

	dvx_mlx5_query_hca_cap_in(in, type, 1);
	err = dvx_hal_devx_cmd(dev, in, sizeof(in), out, sizeof(out));
	if (!err)
		err = dvx_mlx5_caps_parse(&d->caps, type, out, sizeof(out));
	if (err) {
		snprintf(ctx, sizeof(ctx), "QUERY_HCA_CAP %s (op_mod 0x%x)", cap_type_name(type),
			 type << 1 | 1);
		add_err(&d->errs, "devx_cmd", ctx, err, &dev->diag);
	}
}

static void probe_port(struct pdev *d, struct dvx_hal_nic *dev, struct pport *pp)
{
	char ctx[64];
	uint32_t i, n;
	int err;

	err = dvx_hal_query_port(dev, pp->num, &pp->attr);
	if (err) {
		snprintf(ctx, sizeof(ctx), "port %u", pp->num);
		add_err(&d->errs, "query_port", ctx, err, &dev->diag);
		return;
	}
	pp->ok = 1;
	n = pp->attr.gid_tbl_len < GID_TBL_LIMIT ? pp->attr.gid_tbl_len : GID_TBL_LIMIT;
	for (i = 0; i < n; i++) {
		struct dvx_hal_gid g;

		err = dvx_hal_query_gid(dev, pp->num, i, &g);
		if (err) {
			/* one report per port; the next entries would say the same */
			snprintf(ctx, sizeof(ctx), "port %u GID %u", pp->num, i);
			add_err(&d->errs, "query_gid", ctx, err, &dev->diag);
			break;
		}
		if (!g.valid)
			continue;
		if (pp->ngid < MAX_GIDS)
			pp->gid[pp->ngid++] = g;
		else
			pp->gid_dropped++;
	}
}

static void probe_dev(struct probe *p, struct pdev *d)
{
	struct dvx_hal_nic dev;
	unsigned i, nports;
	int err;

	memset(&dev, 0, sizeof(dev));
	err = dvx_hal_nic_open(p->hal, d->info.name, &dev);
	if (err) {
		add_err(&d->errs, "nic_open", "", err, &dev.diag);
		return;
	}
	d->opened = 1;

	err = dvx_hal_nic_query(&dev, &d->attr);
	if (err)
		add_err(&d->errs, "nic_query", "", err, &dev.diag);
	else
		d->attr_ok = 1;

	/* capability pages: skip those the general page says do not exist */
	query_cap(d, &dev, DVX_MLX5_CAP_TYPE_GENERAL);
	if (!d->caps.general_valid || d->caps.atomic)
		query_cap(d, &dev, DVX_MLX5_CAP_TYPE_ATOMIC);
	if (!d->caps.general_valid || d->caps.roce)
		query_cap(d, &dev, DVX_MLX5_CAP_TYPE_ROCE);
	if (!d->caps.general_valid || d->caps.hca_cap_2)
		query_cap(d, &dev, DVX_MLX5_CAP_TYPE_GENERAL_2);

	nports = d->attr_ok ? d->attr.phys_port_cnt : d->info.nports;
	if (nports == 0)
		nports = 1;
	if (nports > MAX_PORTS)
		nports = MAX_PORTS;
	d->nports = nports;
	for (i = 0; i < nports; i++) {
		d->port[i].num = (uint8_t)(i + 1);
		probe_port(d, &dev, &d->port[i]);
	}

	err = dvx_hal_nic_close(&dev);
	if (err) {
		add_err(&d->errs, "nic_close", "", err, &dev.diag);
		/* rdma-core's close does not fail; if a backend says it did, try once more
		 * rather than leave the context behind */
		if (dev.priv)
			dvx_hal_nic_close(&dev);
	}
}

static int collect(struct probe *p)
{
	struct dvx_hal_nic_info *infos = NULL;
	unsigned i, n = 0, n2 = 0;
	int err;

	err = dvx_hal_limits(p->hal, &p->lim);
	if (err)
		add_err(&p->errs, "limits", "RLIMIT_MEMLOCK", err, NULL);
	else
		p->limits_ok = 1;

	err = dvx_hal_nic_list(p->hal, NULL, 0, &n);
	if (!err && n) {
		infos = calloc(n, sizeof(*infos));
		if (!infos)
			err = -ENOMEM;
		else
			err = dvx_hal_nic_list(p->hal, infos, n, &n2);
		if (n2 < n)
			n = n2;
	}
	if (err) {
		add_err(&p->errs, "nic_list", "", err, NULL);
		free(infos);
		return err;
	}
	p->list_ok = 1;
	p->nlisted = n;
	p->dev = calloc(n ? n : 1, sizeof(*p->dev));
	p->other = calloc(n ? n : 1, sizeof(*p->other));
	if (!p->dev || !p->other) {
		add_err(&p->errs, "nic_list", "out of memory", -ENOMEM, NULL);
		free(infos);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		if (p->o->dev && !dev_matches(&infos[i], p->o->dev))
			continue;
		if (infos[i].is_mlx5)
			p->dev[p->ndev++].info = infos[i];
		else
			p->other[p->nother++] = infos[i];
	}
	free(infos);
	if (!p->ndev)
		return 0;

	/* the PCI tree, for the GPU nearest to each NIC */
	n = 0;
	err = dvx_hal_pci_list(p->hal, 0, 0, NULL, 0, &n);
	if (!err && n) {
		p->pci = calloc(n, sizeof(*p->pci));
		if (!p->pci)
			err = -ENOMEM;
		else
			err = dvx_hal_pci_list(p->hal, 0, 0, p->pci, n, &n2);
		if (n2 < n)
			n = n2;
	}
	if (err) {
		add_err(&p->errs, "pci_list", "nearest GPU", err, NULL);
	} else {
		p->pci_ok = 1;
		p->npci = n;
	}

	for (i = 0; i < p->ndev; i++) {
		nearest_gpu(p, &p->dev[i]);
		probe_dev(p, &p->dev[i]);
	}
	return 0;
}

static int memlock_low(const struct probe *p)
{
	return p->limits_ok && p->lim.memlock_cur != UINT64_MAX &&
	       p->lim.memlock_cur < p->memlock_warn;
}

static void fmt_bytes(uint64_t v, char *buf, size_t n)
{
	if (v == UINT64_MAX)
		copy_str(buf, n, "unlimited");
	else if (v >= (1ull << 30) && !(v & ((1ull << 30) - 1)))
		snprintf(buf, n, "%" PRIu64 " GiB", v >> 30);
	else if (v >= (1ull << 20) && !(v & ((1ull << 20) - 1)))
		snprintf(buf, n, "%" PRIu64 " MiB", v >> 20);
	else if (v >= 1024 && !(v & 1023))
		snprintf(buf, n, "%" PRIu64 " KiB", v >> 10);
	else
		snprintf(buf, n, "%" PRIu64 " bytes", v);
}

static void memlock_warning(const struct probe *p, char *buf, size_t n)
{
	char cur[32], thr[32];

	fmt_bytes(p->lim.memlock_cur, cur, sizeof(cur));
	fmt_bytes(p->memlock_warn, thr, sizeof(thr));
	snprintf(buf, n,
		 "RLIMIT_MEMLOCK is %s, below %s: memory registrations (MRs, umems) may fail "
		 "with ENOMEM; raise it (ulimit -l unlimited, limits.conf, docker --ulimit "
		 "memlock=-1)",
		 cur, thr);
}

static unsigned total_errors(const struct probe *p)
{
	unsigned i, n = p->errs.n + p->errs.dropped;

	for (i = 0; i < p->ndev; i++)
		n += p->dev[i].errs.n + p->dev[i].errs.dropped;
	return n;
}

/* ---- the table ---- */

#define ROW(f, label, ...)                                                                 \
	do {                                                                               \
		fprintf(f, "  %-26s ", label);                                             \
		fprintf(f, __VA_ARGS__);                                                   \
		fputc('\n', f);                                                            \
	} while (0)

static const char *yn(int v)
{
	return v ? "yes" : "no";
}

static void table_err(FILE *f, const struct perr *e)
{
	fprintf(f, "  error: %s%s%s: %s (%d)", e->op, e->ctx[0] ? " " : "", e->ctx,
		errno_name(e->err), e->err < 0 ? -e->err : e->err);
	if (e->src == DVX_DIAG_DEVX && e->status)	/* the message would only repeat these */
		fprintf(f, ", DEVX status 0x%02x (%s) syndrome 0x%08x", e->status,
			dvx_mlx5_cmd_status_name(e->status), e->syndrome);
	else if (e->msg[0])
		fprintf(f, ": %s", e->msg);
	fputc('\n', f);
}

static void table_caps(FILE *f, const struct pdev *d)
{
	const struct dvx_mlx5_caps *c = &d->caps;

	if (c->general_valid) {
		ROW(f, "core-direct (cd)", "%s", yn(c->cd));
		ROW(f, "max SQ size", "%u WQEBBs (log_max_qp_sz %u)", 1u << (c->log_max_qp_sz & 31),
		    c->log_max_qp_sz);
		ROW(f, "max CQ size", "%u CQEs (log_max_cq_sz %u)", 1u << (c->log_max_cq_sz & 31),
		    c->log_max_cq_sz);
		ROW(f, "max_wqe_sz_sq", "%u bytes", c->max_wqe_sz_sq);
		if (c->bf)
			ROW(f, "BlueFlame", "yes, %u-byte registers (log_bf_reg_size %u)",
			    1u << (c->log_bf_reg_size & 31), c->log_bf_reg_size);
		else
			ROW(f, "BlueFlame", "no");
		ROW(f, "port type", "%s",
		    c->port_type == DVX_MLX5_PORT_TYPE_ETH	  ? "Ethernet (RoCE)"
		    : c->port_type == DVX_MLX5_PORT_TYPE_IB ? "InfiniBand"
							     : "?");
		ROW(f, "cqe_version", "%u", c->cqe_version);
		ROW(f, "relaxed ordering", "write %s, read %s, read with PCIe RO %s",
		    yn(c->relaxed_ordering_write), yn(c->relaxed_ordering_read),
		    yn(c->relaxed_ordering_read_pci_enabled));
		ROW(f, "WAIT on data / on time", "%s / %s", yn(c->wait_on_data),
		    yn(c->wait_on_time));
	} else {
		ROW(f, "general caps", "unknown (QUERY_HCA_CAP failed)");
	}
	if (c->atomic_valid) {
		ROW(f, "atomic operations", "%s%s%s%s(0x%04x)",
		    c->atomic_operations & DVX_MLX5_ATOMIC_OPS_CMP_SWAP ? "CS " : "",
		    c->atomic_operations & DVX_MLX5_ATOMIC_OPS_FETCH_ADD ? "FA " : "",
		    c->atomic_operations & DVX_MLX5_ATOMIC_OPS_MASKED_CMP_SWAP ? "masked-CS " : "",
		    c->atomic_operations & DVX_MLX5_ATOMIC_OPS_MASKED_FETCH_ADD ? "masked-FA " : "",
		    c->atomic_operations);
		ROW(f, "atomic sizes (QP)", "%s%s(0x%04x)",
		    c->atomic_size_qp & DVX_MLX5_ATOMIC_SIZE_4B ? "4B " : "",
		    c->atomic_size_qp & DVX_MLX5_ATOMIC_SIZE_8B ? "8B " : "", c->atomic_size_qp);
		ROW(f, "8B atomic result order", "%s (mode %u); mode 1 supported: %s",
		    c->atomic_req_8B_endianness_mode == 1 ? "host endian" : "big-endian",
		    c->atomic_req_8B_endianness_mode,
		    yn(c->supported_atomic_req_8B_endianness_mode_1));
	} else if (c->general_valid && !c->atomic) {
		ROW(f, "atomic operations", "none (no atomic caps)");
	} else {
		ROW(f, "atomic caps", "unknown (QUERY_HCA_CAP failed)");
	}
	if (c->roce_valid)
		ROW(f, "force-loopback RC QP", "RoCE enabled: %s, RoCE disabled: %s",
		    yn(c->fl_rc_qp_when_roce_enabled), yn(c->fl_rc_qp_when_roce_disabled));
	if (c->general2_valid)
		ROW(f, "send_dbr_mode_no_dbr_ext", "%s", yn(c->send_dbr_mode_no_dbr_ext));
}

static void table_dev(const struct probe *p, const struct pdev *d)
{
	FILE *f = p->out;
	char buf[64];
	unsigned i, j;

	fprintf(f, "\n%s\n", d->info.name);
	ROW(f, "PCI address", "%s", d->info.pci[0] ? d->info.pci : "?");
	ROW(f, "NUMA node", "%d", d->info.numa_node);
	ROW(f, "driver", "%s (%04x:%04x)", d->info.driver[0] ? d->info.driver : "?",
	    d->info.vendor_id, d->info.device_id);
	ROW(f, "netdev", "%s", d->info.netdev[0] ? d->info.netdev : "none");
	if (d->gpu_state == GPU_FOUND)
		ROW(f, "nearest GPU", "%s (%04x:%04x, NUMA %d, %s)", d->gpu.pci, d->gpu.vendor_id,
		    d->gpu.device_id, d->gpu.numa_node, d->gpu_rel);
	else
		ROW(f, "nearest GPU", "%s", d->gpu_state == GPU_NONE ? "none" : "unknown");
	fmt_guid(d->attr_ok && d->attr.node_guid ? d->attr.node_guid : d->info.node_guid, buf,
		 sizeof(buf));
	ROW(f, "node GUID", "%s", buf);
	if (!d->opened) {
		ROW(f, "status", "could not be opened");
	} else {
		ROW(f, "firmware", "%s", d->attr_ok ? d->attr.fw_ver : "?");
		if (d->attr_ok)
			ROW(f, "max_qp_rd_atom", "%u", d->attr.max_qp_rd_atom);
		table_caps(f, d);
		for (i = 0; i < d->nports; i++) {
			const struct pport *pp = &d->port[i];
			char label[32];

			snprintf(label, sizeof(label), "port %u", pp->num);
			if (!pp->ok) {
				ROW(f, label, "unknown (query failed)");
				continue;
			}
			if (pp->attr.link_layer == DVX_LINK_LAYER_IB)
				ROW(f, label, "%s, %s, LID %u, MTU %u",
				    port_state_name(pp->attr.state),
				    link_layer_name(pp->attr.link_layer), pp->attr.lid,
				    mtu_bytes(pp->attr.active_mtu));
			else
				ROW(f, label, "%s, %s, MTU %u", port_state_name(pp->attr.state),
				    link_layer_name(pp->attr.link_layer),
				    mtu_bytes(pp->attr.active_mtu));
			for (j = 0; j < pp->ngid; j++) {
				char gid[INET6_ADDRSTRLEN + 8];

				snprintf(label, sizeof(label), "  GID %u", pp->gid[j].index);
				fmt_gid(pp->gid[j].raw, gid, sizeof(gid));
				ROW(f, label, "%-40s %-8s %s", gid, gid_type_name(pp->gid[j].type),
				    pp->gid[j].netdev[0] ? pp->gid[j].netdev : "-");
			}
			if (pp->gid_dropped)
				ROW(f, "  GIDs", "%u more not shown", pp->gid_dropped);
		}
	}
	for (i = 0; i < d->errs.n; i++)
		table_err(f, &d->errs.e[i]);
	if (d->errs.dropped)
		fprintf(f, "  (%u more errors)\n", d->errs.dropped);
}

static void emit_table(const struct probe *p)
{
	FILE *f = p->out;
	char buf[320];
	unsigned i;

	fprintf(f, "dvx-probe: %s backend, %u RDMA device%s, %u mlx5%s\n",
		p->hal->name ? p->hal->name : "?", p->nlisted, p->nlisted == 1 ? "" : "s",
		p->ndev, p->o->dev ? " matching --dev" : "");
	if (p->limits_ok) {
		char cur[32], max[32];

		fmt_bytes(p->lim.memlock_cur, cur, sizeof(cur));
		fmt_bytes(p->lim.memlock_max, max, sizeof(max));
		fprintf(f, "RLIMIT_MEMLOCK: %s (hard %s)\n", cur, max);
		if (memlock_low(p)) {
			memlock_warning(p, buf, sizeof(buf));
			fprintf(f, "WARNING: %s\n", buf);
		}
	} else {
		fprintf(f, "RLIMIT_MEMLOCK: unknown\n");
	}
	for (i = 0; i < p->errs.n; i++)
		table_err(f, &p->errs.e[i]);
	for (i = 0; i < p->ndev; i++)
		table_dev(p, &p->dev[i]);
	if (p->nother) {
		fprintf(f, "\nnot mlx5 (dvx drives mlx5 only):\n");
		for (i = 0; i < p->nother; i++)
			fprintf(f, "  %-12s %s driver %s (%04x:%04x)\n", p->other[i].name,
				p->other[i].pci[0] ? p->other[i].pci : "-",
				p->other[i].driver[0] ? p->other[i].driver : "?",
				p->other[i].vendor_id, p->other[i].device_id);
	}
}

/* ---- JSON: a small writer with proper string escaping ---- */

struct jw {
	FILE *f;
	int depth;
	int first;
};

static void jstr(FILE *f, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;

	fputc('"', f);
	for (; *u; u++) {
		switch (*u) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		case '\b':
			fputs("\\b", f);
			break;
		case '\f':
			fputs("\\f", f);
			break;
		default:
			/* control characters, and bytes outside ASCII (names from sysfs are
			 * not promised to be UTF-8): escaped, so the document stays valid */
			if (*u < 0x20 || *u >= 0x7f)
				fprintf(f, "\\u%04x", *u);
			else
				fputc(*u, f);
		}
	}
	fputc('"', f);
}

static void jw_nl(struct jw *w)
{
	int i;

	fputc('\n', w->f);
	for (i = 0; i < w->depth; i++)
		fputs("  ", w->f);
}

static void jw_sep(struct jw *w)
{
	if (!w->first)
		fputc(',', w->f);
	w->first = 0;
	jw_nl(w);
}

/* a key inside an object, or a separator inside an array (k NULL) */
static void jw_key(struct jw *w, const char *k)
{
	jw_sep(w);
	if (k) {
		jstr(w->f, k);
		fputs(": ", w->f);
	}
}

static void jw_open(struct jw *w, const char *k, char c)
{
	if (w->depth || !w->first)
		jw_key(w, k);
	fputc(c, w->f);
	w->depth++;
	w->first = 1;
}

static void jw_close(struct jw *w, char c)
{
	w->depth--;
	if (!w->first)
		jw_nl(w);
	fputc(c, w->f);
	w->first = 0;
}

static void jw_str(struct jw *w, const char *k, const char *v)
{
	jw_key(w, k);
	if (v)
		jstr(w->f, v);
	else
		fputs("null", w->f);
}

static void jw_u64(struct jw *w, const char *k, uint64_t v)
{
	jw_key(w, k);
	fprintf(w->f, "%" PRIu64, v);
}

static void jw_int(struct jw *w, const char *k, int64_t v)
{
	jw_key(w, k);
	fprintf(w->f, "%" PRId64, v);
}

static void jw_bool(struct jw *w, const char *k, int v)
{
	jw_key(w, k);
	fputs(v ? "true" : "false", w->f);
}

static void jw_null(struct jw *w, const char *k)
{
	jw_key(w, k);
	fputs("null", w->f);
}

static void jw_hex(struct jw *w, const char *k, uint32_t v, int width)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "0x%0*x", width, v);
	jw_str(w, k, buf);
}

/* a field of a capability page that may not have been read */
static void jw_capb(struct jw *w, const char *k, int valid, int v)
{
	if (valid)
		jw_bool(w, k, v);
	else
		jw_null(w, k);
}

static void jw_capu(struct jw *w, const char *k, int valid, uint64_t v)
{
	if (valid)
		jw_u64(w, k, v);
	else
		jw_null(w, k);
}

static void json_errs(struct jw *w, const struct perrs *es)
{
	unsigned i;

	jw_open(w, "errors", '[');
	for (i = 0; i < es->n; i++) {
		const struct perr *e = &es->e[i];

		jw_open(w, NULL, '{');
		jw_str(w, "op", e->op);
		jw_str(w, "context", e->ctx);
		jw_int(w, "errno", e->err < 0 ? -e->err : e->err);
		jw_str(w, "errno_name", errno_name(e->err));
		jw_str(w, "message", e->msg);
		if (e->sys_errno)
			jw_int(w, "sys_errno", e->sys_errno);
		if (e->src == DVX_DIAG_DEVX) {
			jw_hex(w, "devx_opcode", e->cmd_opcode, 3);
			jw_hex(w, "devx_status", e->status, 2);
			jw_str(w, "devx_status_name", dvx_mlx5_cmd_status_name(e->status));
			jw_hex(w, "devx_syndrome", e->syndrome, 8);
		}
		jw_close(w, '}');
	}
	jw_close(w, ']');
	if (es->dropped)
		jw_u64(w, "errors_not_shown", es->dropped);
}

static void json_caps(struct jw *w, const struct dvx_mlx5_caps *c)
{
	int g = c->general_valid, a = c->atomic_valid;

	jw_open(w, "caps", '{');
	jw_bool(w, "general_valid", g);
	jw_bool(w, "atomic_valid", a);
	jw_bool(w, "roce_valid", c->roce_valid);
	jw_bool(w, "general2_valid", c->general2_valid);
	jw_capb(w, "cd", g, c->cd);
	jw_capb(w, "atomic", g, c->atomic);
	if (a) {
		uint16_t ops = c->atomic_operations;

		jw_open(w, "atomic_ops", '{');
		jw_bool(w, "cs", ops & DVX_MLX5_ATOMIC_OPS_CMP_SWAP);
		jw_bool(w, "fa", ops & DVX_MLX5_ATOMIC_OPS_FETCH_ADD);
		jw_bool(w, "masked_cs", ops & DVX_MLX5_ATOMIC_OPS_MASKED_CMP_SWAP);
		jw_bool(w, "masked_fa", ops & DVX_MLX5_ATOMIC_OPS_MASKED_FETCH_ADD);
		jw_close(w, '}');
		jw_hex(w, "atomic_operations", c->atomic_operations, 4);
		jw_open(w, "atomic_sizes_qp", '{');
		jw_bool(w, "4B", c->atomic_size_qp & DVX_MLX5_ATOMIC_SIZE_4B);
		jw_bool(w, "8B", c->atomic_size_qp & DVX_MLX5_ATOMIC_SIZE_8B);
		jw_close(w, '}');
		jw_u64(w, "atomic_8B_endianness_mode", c->atomic_req_8B_endianness_mode);
		jw_str(w, "atomic_8B_result_order",
		       c->atomic_req_8B_endianness_mode == 1 ? "host" : "big-endian");
		jw_bool(w, "atomic_8B_endianness_mode_1_supported",
			c->supported_atomic_req_8B_endianness_mode_1);
	} else {
		jw_null(w, "atomic_ops");
		jw_null(w, "atomic_sizes_qp");
	}
	jw_capu(w, "log_max_qp_sz", g, c->log_max_qp_sz);
	jw_capu(w, "max_sq_wqebbs", g, 1ull << (c->log_max_qp_sz & 63));
	jw_capu(w, "log_max_cq_sz", g, c->log_max_cq_sz);
	jw_capu(w, "max_cqes", g, 1ull << (c->log_max_cq_sz & 63));
	jw_capb(w, "bf", g, c->bf);
	jw_capu(w, "log_bf_reg_size", g, c->log_bf_reg_size);
	jw_capu(w, "bf_reg_size", g && c->bf, 1ull << (c->log_bf_reg_size & 31));
	if (g)
		jw_str(w, "port_type", c->port_type == DVX_MLX5_PORT_TYPE_ETH ? "Ethernet"
				       : c->port_type == DVX_MLX5_PORT_TYPE_IB ? "InfiniBand"
										: "unknown");
	else
		jw_null(w, "port_type");
	jw_capu(w, "cqe_version", g, c->cqe_version);
	jw_capu(w, "max_wqe_sz_sq", g, c->max_wqe_sz_sq);
	jw_capb(w, "relaxed_ordering_write", g, c->relaxed_ordering_write);
	jw_capb(w, "relaxed_ordering_read", g, c->relaxed_ordering_read);
	jw_capb(w, "relaxed_ordering_read_pci_enabled", g, c->relaxed_ordering_read_pci_enabled);
	jw_capb(w, "wait_on_data", g, c->wait_on_data);
	jw_capb(w, "wait_on_time", g, c->wait_on_time);
	jw_capb(w, "fl_rc_qp_when_roce_enabled", c->roce_valid, c->fl_rc_qp_when_roce_enabled);
	jw_capb(w, "fl_rc_qp_when_roce_disabled", c->roce_valid, c->fl_rc_qp_when_roce_disabled);
	jw_capb(w, "send_dbr_mode_no_dbr_ext", c->general2_valid, c->send_dbr_mode_no_dbr_ext);
	jw_close(w, '}');
}

static void json_dev(struct jw *w, const struct pdev *d)
{
	char buf[64];
	unsigned i, j;

	jw_open(w, NULL, '{');
	jw_str(w, "name", d->info.name);
	jw_str(w, "pci", d->info.pci[0] ? d->info.pci : NULL);
	jw_int(w, "numa_node", d->info.numa_node);
	jw_str(w, "driver", d->info.driver[0] ? d->info.driver : NULL);
	jw_hex(w, "vendor_id", d->info.vendor_id, 4);
	jw_hex(w, "device_id", d->info.device_id, 4);
	jw_str(w, "netdev", d->info.netdev[0] ? d->info.netdev : NULL);
	fmt_guid(d->attr_ok && d->attr.node_guid ? d->attr.node_guid : d->info.node_guid, buf,
		 sizeof(buf));
	jw_str(w, "node_guid", buf);
	jw_bool(w, "nearest_gpu_known", d->gpu_state != GPU_UNKNOWN);
	if (d->gpu_state == GPU_FOUND) {
		jw_open(w, "nearest_gpu", '{');
		jw_str(w, "pci", d->gpu.pci);
		jw_hex(w, "vendor_id", d->gpu.vendor_id, 4);
		jw_hex(w, "device_id", d->gpu.device_id, 4);
		jw_int(w, "numa_node", d->gpu.numa_node);
		jw_str(w, "relation", d->gpu_rel);
		jw_u64(w, "common_depth", d->gpu_common);
		jw_close(w, '}');
	} else {
		jw_null(w, "nearest_gpu");
	}
	jw_bool(w, "opened", d->opened);
	jw_str(w, "fw_ver", d->attr_ok ? d->attr.fw_ver : NULL);
	if (d->attr_ok)
		jw_u64(w, "max_qp_rd_atom", d->attr.max_qp_rd_atom);
	else
		jw_null(w, "max_qp_rd_atom");
	if (d->opened)
		json_caps(w, &d->caps);
	else
		jw_null(w, "caps");
	jw_open(w, "ports", '[');
	for (i = 0; i < d->nports; i++) {
		const struct pport *pp = &d->port[i];

		jw_open(w, NULL, '{');
		jw_u64(w, "port", pp->num);
		jw_bool(w, "ok", pp->ok);
		if (pp->ok) {
			jw_str(w, "state", port_state_name(pp->attr.state));
			jw_str(w, "link_layer", link_layer_name(pp->attr.link_layer));
			if (pp->attr.link_layer == DVX_LINK_LAYER_IB)
				jw_u64(w, "lid", pp->attr.lid);
			else
				jw_null(w, "lid");
			jw_u64(w, "active_mtu", mtu_bytes(pp->attr.active_mtu));
			jw_u64(w, "gid_tbl_len", pp->attr.gid_tbl_len);
			jw_open(w, "gids", '[');
			for (j = 0; j < pp->ngid; j++) {
				char gid[INET6_ADDRSTRLEN + 8];

				fmt_gid(pp->gid[j].raw, gid, sizeof(gid));
				jw_open(w, NULL, '{');
				jw_u64(w, "index", pp->gid[j].index);
				jw_str(w, "gid", gid);
				jw_str(w, "type", gid_type_name(pp->gid[j].type));
				jw_str(w, "netdev",
				       pp->gid[j].netdev[0] ? pp->gid[j].netdev : NULL);
				jw_close(w, '}');
			}
			jw_close(w, ']');
			if (pp->gid_dropped)
				jw_u64(w, "gids_not_shown", pp->gid_dropped);
		}
		jw_close(w, '}');
	}
	jw_close(w, ']');
	json_errs(w, &d->errs);
	jw_close(w, '}');
}

static void emit_json(const struct probe *p)
{
	struct jw w = { p->out, 0, 1 };
	char buf[320];
	unsigned i;

	jw_open(&w, NULL, '{');
	jw_str(&w, "tool", "dvx-probe");
	jw_str(&w, "backend", p->hal->name);
	jw_str(&w, "status", p->status == DVX_PROBE_OK	  ? "ok"
			     : p->status == DVX_PROBE_ERROR ? "error"
							    : "no_device");
	jw_int(&w, "exit_code", p->status);
	if (p->limits_ok) {
		jw_open(&w, "memlock", '{');
		jw_bool(&w, "unlimited", p->lim.memlock_cur == UINT64_MAX);
		if (p->lim.memlock_cur == UINT64_MAX)
			jw_null(&w, "soft_bytes");
		else
			jw_u64(&w, "soft_bytes", p->lim.memlock_cur);
		if (p->lim.memlock_max == UINT64_MAX)
			jw_null(&w, "hard_bytes");
		else
			jw_u64(&w, "hard_bytes", p->lim.memlock_max);
		if (memlock_low(p)) {
			memlock_warning(p, buf, sizeof(buf));
			jw_str(&w, "warning", buf);
		} else {
			jw_null(&w, "warning");
		}
		jw_close(&w, '}');
	} else {
		jw_null(&w, "memlock");
	}
	jw_u64(&w, "rdma_devices", p->nlisted);
	jw_open(&w, "devices", '[');
	for (i = 0; i < p->ndev; i++)
		json_dev(&w, &p->dev[i]);
	jw_close(&w, ']');
	jw_open(&w, "other_devices", '[');
	for (i = 0; i < p->nother; i++) {
		jw_open(&w, NULL, '{');
		jw_str(&w, "name", p->other[i].name);
		jw_str(&w, "pci", p->other[i].pci[0] ? p->other[i].pci : NULL);
		jw_str(&w, "driver", p->other[i].driver[0] ? p->other[i].driver : NULL);
		jw_hex(&w, "vendor_id", p->other[i].vendor_id, 4);
		jw_bool(&w, "is_mlx5", 0);
		jw_close(&w, '}');
	}
	jw_close(&w, ']');
	json_errs(&w, &p->errs);
	jw_close(&w, '}');
	fputc('\n', p->out);
}

/* ---- entry points ---- */

static void no_device_message(const struct probe *p)
{
	unsigned i;

	if (!p->o->dev) {
		fprintf(p->msg, "dvx-probe: no mlx5 device found (%u other RDMA device%s)\n",
			p->nother, p->nother == 1 ? "" : "s");
		return;
	}
	for (i = 0; i < p->nother; i++) {
		fprintf(p->msg,
			"dvx-probe: %s is driven by %s, not mlx5: no mlx5 device matches \"%s\"\n",
			p->other[i].name, p->other[i].driver[0] ? p->other[i].driver : "?",
			p->o->dev);
		return;
	}
	fprintf(p->msg, "dvx-probe: no mlx5 device named or at \"%s\"\n", p->o->dev);
}

int dvx_probe_run(const struct dvx_hal *hal, const struct dvx_probe_opts *opts)
{
	struct probe p;
	int err;

	if (!hal || !opts)
		return DVX_PROBE_ERROR;
	memset(&p, 0, sizeof(p));
	p.hal = hal;
	p.o = opts;
	p.out = opts->out ? opts->out : stdout;
	p.msg = opts->err ? opts->err : stderr;
	p.memlock_warn = opts->memlock_warn ? opts->memlock_warn : DVX_PROBE_MEMLOCK_WARN;

	err = collect(&p);
	if (err) {
		p.status = DVX_PROBE_ERROR;
		fprintf(p.msg, "dvx-probe: cannot list RDMA devices: %s\n", strerror(-err));
	} else if (!p.ndev) {
		p.status = DVX_PROBE_NO_DEVICE;
		no_device_message(&p);
	} else {
		p.status = total_errors(&p) ? DVX_PROBE_ERROR : DVX_PROBE_OK;
	}
	if (opts->json)
		emit_json(&p);
	else
		emit_table(&p);
	if (memlock_low(&p) && opts->json)
		fprintf(p.msg, "dvx-probe: warning: RLIMIT_MEMLOCK below %" PRIu64 " MiB\n",
			p.memlock_warn >> 20);
	fflush(p.out);
	free(p.pci);
	free(p.dev);
	free(p.other);
	return p.status;
}

static void usage(FILE *f)
{
	fputs("usage: dvx-probe [--json] [--dev NAME|PCI] [--help] [--version]\n"
	      "\n"
	      "List the mlx5 RDMA devices of this host (identified by their kernel driver,\n"
	      "not by name) and what dvx needs to know about each: PCI address, NUMA node,\n"
	      "nearest NVIDIA GPU, firmware, core-direct and atomic capabilities, queue\n"
	      "limits, BlueFlame, ports and GID tables; and the process's RLIMIT_MEMLOCK.\n"
	      "\n"
	      "  --json            one JSON document instead of the table\n"
	      "  --dev NAME|PCI    only this device (mlx5_0, 0000:3b:00.0 or 3b:00.0)\n"
	      "  --help            this text\n"
	      "  --version         the version\n"
	      "\n"
	      "Exit status: 0 devices listed and probed, 1 a device that could not be opened\n"
	      "or queried (see its report), 2 usage error, 3 no mlx5 device (or none of the\n"
	      "name given).\n",
	      f);
}

int dvx_probe_main(const struct dvx_hal *hal, int argc, char **argv, FILE *out, FILE *err)
{
	struct dvx_probe_opts o;
	int i;

	memset(&o, 0, sizeof(o));
	o.out = out;
	o.err = err;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage(out);
			return DVX_PROBE_OK;
		} else if (strcmp(a, "--version") == 0) {
			dvx_tool_version(out, "dvx-probe");
			return DVX_PROBE_OK;
		} else if (strcmp(a, "--json") == 0) {
			o.json = 1;
		} else if (strcmp(a, "--dev") == 0 || strcmp(a, "-d") == 0) {
			if (i + 1 >= argc || !argv[i + 1][0]) {
				fprintf(err, "dvx-probe: %s needs a device name or PCI address\n",
					a);
				return DVX_PROBE_USAGE;
			}
			o.dev = argv[++i];
		} else if (strncmp(a, "--dev=", 6) == 0 && a[6]) {
			o.dev = a + 6;
		} else {
			fprintf(err, "dvx-probe: unknown argument \"%s\" (try --help)\n", a);
			return DVX_PROBE_USAGE;
		}
	}
	if (!hal) {
		fprintf(err, "dvx-probe: this dvx was built without rdma-core (CONFIG_DVX_RDMA=n): "
			     "no hardware backend, so no mlx5 device can be listed\n");
		return DVX_PROBE_NO_DEVICE;
	}
	return dvx_probe_run(hal, &o);
}
