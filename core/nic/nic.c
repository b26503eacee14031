// SPDX-License-Identifier: MIT
/*
 * core/nic/nic.c - open a NIC: caps, port, GID, PD, EQ, UARs (prm 1.1-1.4).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <dvx/nic/nic.h>
#include <dvx/mlx5/cmd.h>

#include "priv.h"

/* ---- diagnostics shared by the core objects ---- */

static void put(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

int dvx_core_fail(struct dvx_nic *nic, int err, enum dvx_diag_src src, const char *op,
		  const char *fmt, ...)
{
	struct dvx_diag *d = &nic->hal.diag;
	va_list ap;

	dvx_hal_diag_set(d, err, src, op, NULL);
	va_start(ap, fmt);
	vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
	va_end(ap);
	dvx_hal_log(&nic->hal.log, DVX_LOG_ERR, "%s: %s", d->op, d->msg);
	return err;
}

int dvx_core_hal_failed(struct dvx_nic *nic, int err, unsigned cmd_opcode, const char *op)
{
	struct dvx_diag *d = &nic->hal.diag;
	char msg[sizeof(d->msg)];

	if (err >= 0)
		err = -EIO;
	if (d->err == 0)	/* a hal that left no record */
		dvx_hal_diag_set(d, err, DVX_DIAG_OS, op, "failed with %d", err);
	/* the NIC refused a command: its status says which errno (translated here once) */
	if (err == -EREMOTEIO && d->src == DVX_DIAG_DEVX && d->status)
		err = dvx_mlx5_cmd_status_errno(d->status);
	d->err = err;
	if (cmd_opcode) {
		const char *name = dvx_mlx5_cmd_name(cmd_opcode);

		if (d->src == DVX_DIAG_DEVX)
			put(msg, sizeof(msg), "%s: %s syndrome 0x%08x", name,
			    dvx_mlx5_cmd_status_name(d->status), d->syndrome);
		else
			put(msg, sizeof(msg), "%s: %s", name, d->msg);
		memcpy(d->msg, msg, sizeof(msg));
		d->cmd_opcode = (uint16_t)cmd_opcode;
		snprintf(d->op, sizeof(d->op), "%s", name);
	}
	dvx_hal_log(&nic->hal.log, DVX_LOG_ERR, "%s (%s): %s (%d)", op, d->op, d->msg, err);
	return err;
}

static unsigned mbox_opcode(const void *in)
{
	return dvx_mlx5_get(in, DVX_MLX5_HDR_OPCODE);
}

int dvx_core_obj_create(struct dvx_nic *nic, const void *in, size_t inlen, void *out,
			size_t outlen, struct dvx_hal_obj *obj)
{
	int err = dvx_hal_obj_create(&nic->hal, in, inlen, out, outlen, obj);

	return err ? dvx_core_hal_failed(nic, err, mbox_opcode(in), "obj_create") : 0;
}

int dvx_core_obj_modify(struct dvx_nic *nic, struct dvx_hal_obj *obj, const void *in,
			size_t inlen, void *out, size_t outlen)
{
	int err = dvx_hal_obj_modify(&nic->hal, obj, in, inlen, out, outlen);

	return err ? dvx_core_hal_failed(nic, err, mbox_opcode(in), "obj_modify") : 0;
}

int dvx_core_obj_query(struct dvx_nic *nic, struct dvx_hal_obj *obj, const void *in,
		       size_t inlen, void *out, size_t outlen)
{
	int err = dvx_hal_obj_query(&nic->hal, obj, in, inlen, out, outlen);

	return err ? dvx_core_hal_failed(nic, err, mbox_opcode(in), "obj_query") : 0;
}

int dvx_core_devx_cmd(struct dvx_nic *nic, const void *in, size_t inlen, void *out,
		      size_t outlen)
{
	int err = dvx_hal_devx_cmd(&nic->hal, in, inlen, out, outlen);

	return err ? dvx_core_hal_failed(nic, err, mbox_opcode(in), "devx_cmd") : 0;
}

/* ---- features ---- */

const char *dvx_nic_feature_name(uint32_t feature)
{
	switch (feature) {
	case DVX_NIC_FEAT_CD:
		return "core-direct";
	case DVX_NIC_FEAT_ATOMIC:
		return "atomic";
	case DVX_NIC_FEAT_ATOMIC_HOST_ENDIAN:
		return "host-endian atomic results";
	case DVX_NIC_FEAT_EXT_ATOMIC:
		return "extended atomic";
	case DVX_NIC_FEAT_LOOPBACK:
		return "force-loopback";
	case DVX_NIC_FEAT_RELAXED_ORDERING:
		return "relaxed ordering";
	case DVX_NIC_FEAT_BF:
		return "BlueFlame";
	case DVX_NIC_FEAT_CQ_OI:
		return "CQ overrun ignore";
	default:
		return "unknown";
	}
}

static uint32_t features_of(const struct dvx_mlx5_caps *c, int roce)
{
	uint32_t f = 0;
	int std_ops = (c->atomic_operations & DVX_MLX5_ATOMIC_OPS_CMP_SWAP) &&
		      (c->atomic_operations & DVX_MLX5_ATOMIC_OPS_FETCH_ADD);
	int ext_ops = (c->atomic_operations & DVX_MLX5_ATOMIC_OPS_MASKED_CMP_SWAP) &&
		      (c->atomic_operations & DVX_MLX5_ATOMIC_OPS_MASKED_FETCH_ADD);

	if (c->cd)
		f |= DVX_NIC_FEAT_CD;
	if (c->atomic && c->atomic_valid && std_ops && (c->atomic_size_qp & DVX_MLX5_ATOMIC_SIZE_8B)) {
		f |= DVX_NIC_FEAT_ATOMIC;
		if (c->atomic_req_8B_endianness_mode == 1)
			f |= DVX_NIC_FEAT_ATOMIC_HOST_ENDIAN;
		if (ext_ops && (c->atomic_size_qp & DVX_MLX5_ATOMIC_SIZE_4B))
			f |= DVX_NIC_FEAT_EXT_ATOMIC;
	}
	if (c->roce_valid &&
	    (roce ? c->fl_rc_qp_when_roce_enabled : c->fl_rc_qp_when_roce_disabled))
		f |= DVX_NIC_FEAT_LOOPBACK;
	/* the kernel sets the MR's relaxed-ordering bits from these when it registers with
	 * IBV_ACCESS_RELAXED_ORDERING: write from relaxed_ordering_write, read from
	 * relaxed_ordering_read or (relaxed_ordering_read_pci_enabled and PCIe RO on) */
	if (c->relaxed_ordering_write || c->relaxed_ordering_read ||
	    c->relaxed_ordering_read_pci_enabled)
		f |= DVX_NIC_FEAT_RELAXED_ORDERING;
	if (c->bf)
		f |= DVX_NIC_FEAT_BF;
	if (c->cq_oi)
		f |= DVX_NIC_FEAT_CQ_OI;
	return f;
}

/* vsnprintf: messages are cut to the diag's size on purpose */
static void put(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, n, fmt, ap);
	va_end(ap);
}

/* why a feature is missing, in the caps' own words */
static void missing_why(const struct dvx_nic *nic, uint32_t feat, char *buf, size_t n)
{
	const struct dvx_mlx5_caps *c = &nic->caps;

	switch (feat) {
	case DVX_NIC_FEAT_CD:
		put(buf, n, "no core-direct (cap cd = 0)");
		break;
	case DVX_NIC_FEAT_ATOMIC:
		if (!c->atomic || !c->atomic_valid)
			put(buf, n, "no atomics (cap atomic = 0)");
		else
			put(buf, n, "no 8-byte CS/FA on RC (atomic_operations 0x%x, "
				 "atomic_size_qp 0x%x)", c->atomic_operations, c->atomic_size_qp);
		break;
	case DVX_NIC_FEAT_ATOMIC_HOST_ENDIAN:
		if (!(nic->features & DVX_NIC_FEAT_ATOMIC))
			put(buf, n, "no atomics at all");
		else
			put(buf, n, "big-endian atomic mode (8B endianness mode %u, "
				 "mode 1 %s): not usable",
				 c->atomic_req_8B_endianness_mode,
				 c->supported_atomic_req_8B_endianness_mode_1 ?
					 "not set" : "unsupported");
		break;
	case DVX_NIC_FEAT_EXT_ATOMIC:
		put(buf, n, "no extended atomics (atomic_operations 0x%x, size 0x%x)",
			 c->atomic_operations, c->atomic_size_qp);
		break;
	case DVX_NIC_FEAT_LOOPBACK:
		put(buf, n, "force-loopback RC QPs not allowed (roce caps %s)",
			 c->roce_valid ? "say no" : "not present");
		break;
	default:
		put(buf, n, "no %s", dvx_nic_feature_name(feat));
		break;
	}
}

int dvx_nic_require(struct dvx_nic *nic, uint32_t features, const char *what)
{
	uint32_t missing, bit;
	char why[96];

	if (!nic || !nic->open)
		return -EINVAL;
	missing = features & ~nic->features;
	if (!missing)
		return 0;
	bit = missing & (0u - missing);
	missing_why(nic, bit, why, sizeof(why));
	return dvx_core_fail(nic, -EOPNOTSUPP, DVX_DIAG_ARG, "dvx_nic_require",
			     "%s (%s needs %s)", why, what ? what : "the caller",
			     dvx_nic_feature_name(bit));
}

/* ---- UARs ---- */

static int uar_get(struct dvx_nic *nic, enum dvx_uar_type type, struct dvx_uar *uar)
{
	int err = dvx_hal_uar_alloc(&nic->hal, type, &uar->hal);

	if (err)
		return err;
	uar->nic = nic;
	uar->reg = (uint8_t *)uar->hal.reg_addr;
	uar->page_id = uar->hal.page_id;
	uar->type = uar->hal.type;
	uar->bf_half = 0;
	/* BlueFlame only on a write-combining mapping: the kernel may map a BlueFlame
	 * request non-cached (hal.nc, read from its mmap offset) */
	if (uar->type == DVX_UAR_BF && !uar->hal.nc && nic->caps.log_bf_reg_size)
		uar->bf_half = (1u << nic->caps.log_bf_reg_size) / 2;
	uar->users = 0;
	uar->live = DVX_LIVE;
	return 0;
}

static int uar_alloc(struct dvx_nic *nic, enum dvx_uar_pref pref, struct dvx_uar *uar)
{
	struct dvx_uar u;
	int err, bf_err = 0;

	memset(&u, 0, sizeof(u));
	if ((unsigned)pref > DVX_UAR_PREF_BF_OR_NC)
		return dvx_core_fail(nic, -EINVAL, DVX_DIAG_ARG, "dvx_uar_alloc",
				     "unknown UAR preference %u", (unsigned)pref);
	if (pref == DVX_UAR_PREF_BF && !(nic->features & DVX_NIC_FEAT_BF))
		return dvx_core_fail(nic, -EOPNOTSUPP, DVX_DIAG_ARG, "dvx_uar_alloc",
				     "BlueFlame UAR asked for, device has no BlueFlame (cap bf 0)");
	if (pref == DVX_UAR_PREF_BF) {
		err = uar_get(nic, DVX_UAR_BF, &u);
		if (err)
			return dvx_core_hal_failed(nic, err, 0, "dvx_uar_alloc(BF)");
	} else if (pref == DVX_UAR_PREF_BF_OR_NC && (nic->features & DVX_NIC_FEAT_BF) &&
		   !(bf_err = uar_get(nic, DVX_UAR_BF, &u))) {
		/* BlueFlame (a failed BlueFlame allocation falls through to non-cached) */
	} else if (pref == DVX_UAR_PREF_NC_SHARED) {
		err = uar_get(nic, DVX_UAR_NC_SHARED, &u);
		if (err)
			return dvx_core_hal_failed(nic, err, 0, "dvx_uar_alloc(NC shared)");
	} else {
		err = uar_get(nic, DVX_UAR_NC_DEDICATED, &u);
		if (err) {
			/* no dedicated register: the per-context shared one (prm 1.4) */
			int err2 = uar_get(nic, DVX_UAR_NC_SHARED, &u);

			if (err2)
				return dvx_core_hal_failed(nic, err2, 0, "dvx_uar_alloc(NC)");
			u.fallback_err = err;
			dvx_hal_log(&nic->hal.log, DVX_LOG_INFO,
				    "no dedicated non-cached UAR (%d: %s), using the shared one",
				    err, nic->hal.diag.msg);
		}
		if (bf_err) {
			u.fallback_err = bf_err;
			dvx_hal_log(&nic->hal.log, DVX_LOG_INFO,
				    "no BlueFlame UAR (%d), using a non-cached one", bf_err);
		}
	}
	*uar = u;
	return 0;
}

static int uar_alloc_do(struct dvx_nic *nic, enum dvx_uar_pref pref, struct dvx_uar *uar)
{
	int err;

	if (!nic || !nic->open)
		return -EINVAL;
	if (!uar)
		return dvx_core_fail(nic, -EINVAL, DVX_DIAG_ARG, "dvx_uar_alloc", "uar is NULL");
	if (uar->live == DVX_LIVE)
		return dvx_core_fail(nic, -EBUSY, DVX_DIAG_ARG, "dvx_uar_alloc",
				     "the UAR is live: free it first");
	err = uar_alloc(nic, pref, uar);
	if (!err)
		nic->nobjs++;
	return err;
}

int dvx_uar_alloc(struct dvx_nic *nic, enum dvx_uar_pref pref, struct dvx_uar *uar)
{
	struct dvx_nic *n = nic;
	int err = uar_alloc_do(nic, pref, uar);

	if (!err && n)
		dvx_core_ok(n);
	return err;
}

static int uar_release(struct dvx_uar *uar)
{
	struct dvx_nic *nic = uar->nic;
	int err = dvx_hal_uar_free(&nic->hal, &uar->hal);

	if (err)
		return dvx_core_hal_failed(nic, err, 0, "dvx_uar_free");
	uar->live = 0;
	return 0;
}

static int uar_free_do(struct dvx_uar *uar)
{
	int err;

	if (!uar || !uar->live || !uar->nic)
		return -EINVAL;
	if (uar == &uar->nic->uar)
		return dvx_core_fail(uar->nic, -EINVAL, DVX_DIAG_ARG, "dvx_uar_free",
				     "the NIC's default UAR goes with dvx_nic_close()");
	if (uar->users)
		return dvx_core_fail(uar->nic, -EBUSY, DVX_DIAG_STATE, "dvx_uar_free",
				     "UAR page 0x%x still used by %u CQs/QPs", uar->page_id,
				     uar->users);
	err = uar_release(uar);
	if (!err)
		uar->nic->nobjs--;
	return err;
}

int dvx_uar_free(struct dvx_uar *uar)
{
	struct dvx_nic *n = uar ? uar->nic : NULL;
	int err = uar_free_do(uar);

	if (!err && n)
		dvx_core_ok(n);
	return err;
}

/* ---- open ---- */

static int query_caps(struct dvx_nic *nic, unsigned cap_type)
{
	static const char *const what[] = { "general", "atomic", "RoCE", "general 2" };
	uint8_t in[DVX_MLX5_QUERY_HCA_CAP_IN_BYTES];
	/* 4 KiB output: static would not be reentrant across NICs; the control path
	 * stack holds it for the duration of one query */
	uint8_t out[DVX_MLX5_QUERY_HCA_CAP_OUT_BYTES];
	const char *name = cap_type == DVX_MLX5_CAP_TYPE_GENERAL ? what[0] :
			   cap_type == DVX_MLX5_CAP_TYPE_ATOMIC ? what[1] :
			   cap_type == DVX_MLX5_CAP_TYPE_ROCE ? what[2] : what[3];
	int err;

	dvx_mlx5_query_hca_cap_in(in, cap_type, 1);
	err = dvx_core_devx_cmd(nic, in, sizeof(in), out, sizeof(out));
	if (!err)
		err = dvx_mlx5_caps_parse(&nic->caps, cap_type, out, sizeof(out));
	if (err) {
		dvx_hal_log(&nic->hal.log, DVX_LOG_ERR,
			    "reading the %s capability page failed: %s%s", name, nic->hal.diag.msg,
			    cap_type == DVX_MLX5_CAP_TYPE_GENERAL ?
				    " (does the device and kernel support DEVX?)" : "");
		return err;
	}
	return 0;
}

static int gid_is_zero(const uint8_t *g)
{
	static const uint8_t zero[16];

	return memcmp(g, zero, 16) == 0;
}

/* RoCE v2 before v1, routable before link-local (fe80::/10), lowest index first */
static int gid_score(const struct dvx_hal_gid *g)
{
	int s;

	if (!g->valid || gid_is_zero(g->raw))
		return -1;
	s = g->type == DVX_GID_TYPE_ROCE_V2 ? 4 : g->type == DVX_GID_TYPE_ROCE_V1 ? 2 : 0;
	if (!(g->raw[0] == 0xfe && (g->raw[1] & 0xc0) == 0x80))
		s += 1;
	return s;
}

#define DVX_NIC_GID_SCAN_MAX 256u

static int choose_gid(struct dvx_nic *nic, int32_t want)
{
	struct dvx_hal_gid g;
	uint32_t i, n = nic->port_attr.gid_tbl_len;
	int best = -1, err;

	if (want >= 0) {
		if ((uint32_t)want >= n)
			return dvx_core_fail(nic, -EINVAL, DVX_DIAG_ARG, "dvx_nic_open",
					     "GID index %d beyond the table (%u entries)", want, n);
		err = dvx_hal_query_gid(&nic->hal, nic->port, (uint32_t)want, &nic->gid);
		if (err)
			return dvx_core_hal_failed(nic, err, 0, "query_gid");
		if (nic->roce && gid_score(&nic->gid) < 0)
			return dvx_core_fail(nic, -EINVAL, DVX_DIAG_ARG, "dvx_nic_open",
					     "GID index %d on port %u is empty", want, nic->port);
		nic->gid_index = (uint32_t)want;
		return 0;
	}
	if (!nic->roce) {
		/* IB: the LID path needs no GID; index 0 is the port GID */
		err = dvx_hal_query_gid(&nic->hal, nic->port, 0, &nic->gid);
		if (err)
			return dvx_core_hal_failed(nic, err, 0, "query_gid");
		nic->gid_index = 0;
		return 0;
	}
	if (n > DVX_NIC_GID_SCAN_MAX)
		n = DVX_NIC_GID_SCAN_MAX;
	for (i = 0; i < n; i++) {
		err = dvx_hal_query_gid(&nic->hal, nic->port, i, &g);
		if (err)
			return dvx_core_hal_failed(nic, err, 0, "query_gid");
		if (gid_score(&g) > best) {
			best = gid_score(&g);
			nic->gid = g;
			nic->gid_index = i;
		}
	}
	if (best < 0)
		return dvx_core_fail(nic, -EOPNOTSUPP, DVX_DIAG_ARG, "dvx_nic_open",
				     "no usable GID on port %u of %s (is an IP address set?)",
				     nic->port, nic->hal.info.name);
	return 0;
}

static int nic_open_do(struct dvx_nic *nic, const struct dvx_hal *hal, const struct dvx_nic_cfg *attr)
{
	struct dvx_diag keep;
	uint32_t missing;
	int err;

	if (!nic)
		return -EINVAL;
	if (nic->open == DVX_LIVE)
		return -EBUSY;	/* open: close it first (nothing is touched) */
	memset(nic, 0, sizeof(*nic));
	if (!hal || !attr || !attr->name || !*attr->name)
		return dvx_core_fail(nic, -EINVAL, DVX_DIAG_ARG, "dvx_nic_open",
				     "hal, attr or device name missing");
	nic->hal.log = attr->log;
	if (attr->flags & ~(uint32_t)DVX_NIC_CFG_F_GID_INDEX)
		return dvx_core_fail(nic, -EINVAL, DVX_DIAG_ARG, "dvx_nic_open", "unknown flags");
	if ((attr->flags & DVX_NIC_CFG_F_GID_INDEX) && attr->gid_index < 0)
		return dvx_core_fail(nic, -EINVAL, DVX_DIAG_ARG, "dvx_nic_open",
				     "DVX_NIC_CFG_F_GID_INDEX with a negative GID index");
	if (attr->uar_pref > DVX_UAR_PREF_BF_OR_NC)
		return dvx_core_fail(nic, -EINVAL, DVX_DIAG_ARG, "dvx_nic_open",
				     "unknown UAR preference %u", attr->uar_pref);
	nic->port = attr->port ? attr->port : 1;

	err = dvx_hal_nic_open(hal, attr->name, &nic->hal);
	if (err)
		return dvx_core_hal_failed(nic, err, 0, "nic_open");
	err = dvx_hal_nic_query(&nic->hal, &nic->attr);
	if (err) {
		dvx_core_hal_failed(nic, err, 0, "nic_query");
		goto close_dev;
	}
	if (nic->port > nic->attr.phys_port_cnt) {
		err = dvx_core_fail(nic, -EINVAL, DVX_DIAG_ARG, "dvx_nic_open",
				    "%s has %u ports, port %u asked for", nic->hal.info.name,
				    nic->attr.phys_port_cnt, nic->port);
		goto close_dev;
	}

	/* capability pages: general first; it says which others exist */
	err = query_caps(nic, DVX_MLX5_CAP_TYPE_GENERAL);
	if (err)
		goto close_dev;
	if (!nic->caps.rc) {
		err = dvx_core_fail(nic, -EOPNOTSUPP, DVX_DIAG_ARG, "dvx_nic_open",
				    "%s does not support RC QPs (cap rc = 0)", nic->hal.info.name);
		goto close_dev;
	}
	if (nic->caps.atomic && (err = query_caps(nic, DVX_MLX5_CAP_TYPE_ATOMIC)))
		goto close_dev;
	if (nic->caps.roce && (err = query_caps(nic, DVX_MLX5_CAP_TYPE_ROCE)))
		goto close_dev;
	if (nic->caps.hca_cap_2 && (err = query_caps(nic, DVX_MLX5_CAP_TYPE_GENERAL_2)))
		goto close_dev;

	/* the port and its address */
	err = dvx_hal_query_port(&nic->hal, nic->port, &nic->port_attr);
	if (err) {
		dvx_core_hal_failed(nic, err, 0, "query_port");
		goto close_dev;
	}
	nic->link_layer = nic->port_attr.link_layer;
	nic->roce = nic->link_layer == DVX_LINK_LAYER_ETHERNET;
	nic->lid = nic->port_attr.lid;
	nic->mtu = nic->port_attr.active_mtu;
	nic->port_state = nic->port_attr.state;
	if (nic->port_state != 4)
		dvx_hal_log(&nic->hal.log, DVX_LOG_WARN, "%s port %u is not active (state %u)",
			    nic->hal.info.name, nic->port, nic->port_state);

	nic->features = features_of(&nic->caps, nic->roce);
	nic->atomic_mode = (nic->features & DVX_NIC_FEAT_EXT_ATOMIC) ?
				   DVX_MLX5_ATOMIC_MODE_UP_TO_8B :
			   (nic->features & DVX_NIC_FEAT_ATOMIC) ? DVX_MLX5_ATOMIC_MODE_IB_SPEC : 0;
	nic->atomic_be_results = (nic->features & DVX_NIC_FEAT_ATOMIC) &&
				 !(nic->features & DVX_NIC_FEAT_ATOMIC_HOST_ENDIAN);
	nic->open = DVX_LIVE;	/* for dvx_nic_require(); undone below on failure */
	missing = attr->required & ~nic->features;
	if (missing) {
		err = dvx_nic_require(nic, attr->required, nic->hal.info.name);
		goto not_open;
	}

	err = choose_gid(nic, (attr->flags & DVX_NIC_CFG_F_GID_INDEX) ? attr->gid_index : -1);
	if (err)
		goto not_open;

	err = dvx_hal_pd_alloc(&nic->hal, &nic->pd);
	if (err) {
		dvx_core_hal_failed(nic, err, 0, "pd_alloc");
		goto not_open;
	}
	nic->pdn = nic->pd.pdn;
	err = dvx_hal_eqn_query(&nic->hal, 0, &nic->eqn);
	if (err) {
		dvx_core_hal_failed(nic, err, 0, "eqn_query");
		goto free_pd;
	}
	err = uar_alloc(nic, (enum dvx_uar_pref)attr->uar_pref, &nic->uar);
	if (err)
		goto free_pd;
	dvx_hal_log(&nic->hal.log, DVX_LOG_INFO,
		    "%s port %u: %s, mtu %u, gid index %u, pdn 0x%x, eqn %u, uar page 0x%x (%s)",
		    nic->hal.info.name, nic->port, nic->roce ? "RoCE" : "IB", nic->mtu,
		    nic->gid_index, nic->pdn, nic->eqn, nic->uar.page_id,
		    nic->uar.type == DVX_UAR_BF ? "BF" :
		    nic->uar.type == DVX_UAR_NC_DEDICATED ? "NC dedicated" : "NC shared");
	return 0;

free_pd:
	keep = nic->hal.diag;
	if (dvx_hal_pd_free(&nic->hal, &nic->pd))
		dvx_hal_log(&nic->hal.log, DVX_LOG_ERR, "unwinding: pd_free failed");
	nic->hal.diag = keep;
not_open:
	nic->open = 0;
close_dev:
	keep = nic->hal.diag;
	if (dvx_hal_nic_close(&nic->hal))
		dvx_hal_log(&nic->hal.log, DVX_LOG_ERR, "unwinding: dev_close failed");
	nic->hal.diag = keep;	/* the first failure is the one to report */
	return err;
}

int dvx_nic_open(struct dvx_nic *nic, const struct dvx_hal *hal, const struct dvx_nic_cfg *attr)
{
	struct dvx_nic *n = nic;
	int err = nic_open_do(nic, hal, attr);

	if (!err && n)
		dvx_core_ok(n);
	return err;
}

int dvx_nic_close(struct dvx_nic *nic)
{
	int err;

	if (!nic || !nic->open)
		return -EINVAL;
	if (nic->nobjs)
		return dvx_core_fail(nic, -EBUSY, DVX_DIAG_STATE, "dvx_nic_close",
				     "%u objects (UARs, umems, MRs, CQs, QPs) still live on %s",
				     nic->nobjs, nic->hal.info.name);
	if (nic->uar.users)
		return dvx_core_fail(nic, -EBUSY, DVX_DIAG_STATE, "dvx_nic_close",
				     "default UAR still used");
	if (nic->uar.live) {
		err = uar_release(&nic->uar);
		if (err)
			return err;
	}
	if (nic->pd.priv) {
		err = dvx_hal_pd_free(&nic->hal, &nic->pd);
		if (err)
			return dvx_core_hal_failed(nic, err, 0, "pd_free");
		nic->pd.priv = NULL;
	}
	err = dvx_hal_nic_close(&nic->hal);
	if (err)
		return dvx_core_hal_failed(nic, err, 0, "nic_close");
	nic->open = 0;
	return 0;
}
