// SPDX-License-Identifier: MIT
/*
 * tools/replay.c - a trace (docs/trace.md) replayed on the software NIC.
 *
 * Every recorded call is made again on a fresh software NIC set up with the recorded
 * device's capabilities, doorbells ring the replayed queues with the recorded WQE bytes,
 * receive WQEs are published as recorded, and every recorded CQE is awaited on the
 * replayed CQ and compared. The numbers a device hands out (PDs, UAR pages, EQs, umem
 * ids, keys, CQ and QP numbers) differ between the two, so the replay maps each
 * recorded number to its own and rewrites mailboxes and WQEs with it; a connection is
 * re-addressed to the software NIC's own ports. The first difference stops the replay:
 * a command one side refused, a different CQE, a CQE that never comes, one too many, a
 * doorbell the software NIC faults, a QP in another state.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <dvx/hal.h>
#include <dvx/mlx5/caps.h>
#include <dvx/mlx5/cmd.h>
#include <dvx/mlx5/cqe.h>
#include <dvx/mlx5/decode.h>
#include <dvx/hal/sim.h>

#include "replay.h"

#define R_DEVS DVX_TRACE_MAX_NICS
#define R_MAX 128		/* objects of each kind */
#define R_STEPS 64		/* sim passes without the awaited CQE: missing */
#define R_MAX_LOG 24		/* the largest queue a mailbox may name */

struct r_rec {
	unsigned type, dev;
	uint64_t seq;
	const uint8_t *p;	/* the payload */
	uint32_t len;
};

struct r_call {
	unsigned op;
	int ret;
	uint32_t id, id2;
	uint64_t a[4];
	const uint8_t *in, *out;
	uint32_t in_len, out_len;
};

/* the head of every replayed object: live, its device, its recorded number */
struct r_head {
	int live;
	unsigned dev;
	uint32_t rec;
};

/* an object the software NIC took: the recorded call r/c now stands for it */
static void hold(struct r_head *h0, const struct r_rec *r, uint32_t rec)
{
	h0->live = 1;
	h0->dev = r->dev;
	h0->rec = rec;
}

struct r_umem {
	struct r_head h0;
	uint64_t rec_addr, len;
	uint8_t *mem;
	struct dvx_hal_umem h;
};

struct r_mr {
	struct r_head h0;	/* rec: the lkey */
	uint32_t rec_rkey;
	uint8_t *own;
	struct dvx_hal_mr h;
};

struct r_uar {
	struct r_head h0;	/* rec: the page id */
	struct dvx_hal_uar h;
};

struct r_pd {
	struct r_head h0;	/* rec: the pdn */
	struct dvx_hal_pd h;
};

struct r_obj {
	struct r_head h0;	/* rec: the CQ or QP number */
	unsigned opcode;
	struct dvx_hal_obj h;
	uint8_t *ring, *sq, *rq, *dbrec;	/* CQ ring; QP rings; either's record */
	unsigned log, log_rq, rq_stride;	/* CQ or SQ size, RQ size and stride */
	uint64_t next_cqe;			/* CQ: the entry after the last awaited */
};

struct r_dev {
	int used, open;
	struct dvx_hal_nic nic;
	uint8_t link_layer;
	uint16_t lid;
	uint8_t gid[16][16];		/* the recorded device's GIDs, by index */
	uint8_t gid_valid[16];
	uint32_t eqn_rec[4], eqn_rep[4];
	unsigned neqn;
	struct dvx_mlx5_caps caps;
};

struct replay {
	FILE *out;
	unsigned flags;
	struct replay_stats st;
	void *fab_mem;
	struct dvx_sim_fabric *fab;
	const struct dvx_hal *hal;
	struct r_dev dev[R_DEVS];
	struct r_umem umem[R_MAX];
	struct r_mr mr[R_MAX];
	struct r_uar uar[R_MAX];
	struct r_pd pd[R_MAX];
	struct r_obj obj[R_MAX];
	uint8_t scratch[64 * 1024];
	uint8_t mb_in[8192], mb_out[8192];	/* a mailbox (QUERY_HCA_CAP's out: 4112) */
};

/* ---- reading the trace ---- */

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return le32(p) | (uint64_t)le32(p + 4) << 32;
}

/* the record at *@off, moved past it: 1, 0 at the end, -1 for a cut or bad record */
static int next_rec(const uint8_t *buf, size_t len, size_t *off, struct r_rec *r)
{
	const uint8_t *h = buf + *off;

	if (*off == len)
		return 0;
	if (len - *off < DVX_TRACE_REC_HDR_BYTES)
		return -1;
	r->type = (unsigned)(h[0] | h[1] << 8);
	r->dev = (unsigned)(h[2] | h[3] << 8);
	r->len = le32(h + 4);
	r->seq = le64(h + 8);
	if (len - *off - DVX_TRACE_REC_HDR_BYTES < r->len || r->dev >= R_DEVS)
		return -1;
	r->p = h + DVX_TRACE_REC_HDR_BYTES;
	*off += DVX_TRACE_REC_HDR_BYTES + r->len;
	return 1;
}

static int parse_call(const struct r_rec *r, struct r_call *c)
{
	unsigned i;

	if (r->len < DVX_TRACE_CALL_BYTES)
		return -1;
	c->op = (unsigned)(r->p[0] | r->p[1] << 8);
	c->ret = (int)le32(r->p + 4);
	c->id = le32(r->p + 8);
	c->id2 = le32(r->p + 12);
	for (i = 0; i < 4; i++)
		c->a[i] = le64(r->p + 16 + 8 * i);
	c->in_len = le32(r->p + 48);
	c->out_len = le32(r->p + 52);
	if ((uint64_t)c->in_len + c->out_len != r->len - DVX_TRACE_CALL_BYTES)
		return -1;
	c->in = r->p + DVX_TRACE_CALL_BYTES;
	c->out = c->in + c->in_len;
	return 0;
}

static const char *const op_names[DVX_TRACE_OP_COUNT] = {
	[DVX_TRACE_OP_NIC_OPEN] = "nic_open",	[DVX_TRACE_OP_NIC_CLOSE] = "nic_close",
	[DVX_TRACE_OP_NIC_QUERY] = "nic_query",	[DVX_TRACE_OP_QUERY_PORT] = "query_port",
	[DVX_TRACE_OP_QUERY_GID] = "query_gid",	[DVX_TRACE_OP_DEVX_CMD] = "devx_cmd",
	[DVX_TRACE_OP_OBJ_CREATE] = "obj_create", [DVX_TRACE_OP_OBJ_MODIFY] = "obj_modify",
	[DVX_TRACE_OP_OBJ_QUERY] = "obj_query",	[DVX_TRACE_OP_OBJ_DESTROY] = "obj_destroy",
	[DVX_TRACE_OP_UMEM_REG] = "umem_reg",	[DVX_TRACE_OP_UMEM_DEREG] = "umem_dereg",
	[DVX_TRACE_OP_UAR_ALLOC] = "uar_alloc",	[DVX_TRACE_OP_UAR_FREE] = "uar_free",
	[DVX_TRACE_OP_PD_ALLOC] = "pd_alloc",	[DVX_TRACE_OP_PD_FREE] = "pd_free",
	[DVX_TRACE_OP_EQN_QUERY] = "eqn_query",	[DVX_TRACE_OP_MR_REG] = "mr_reg",
	[DVX_TRACE_OP_MR_DEREG] = "mr_dereg",	[DVX_TRACE_OP_ROCE_RMAC] = "roce_rmac",
};

static const char *op_name(unsigned op)
{
	return op < DVX_TRACE_OP_COUNT && op_names[op] ? op_names[op] : "unknown";
}

static unsigned mb_opcode(const uint8_t *in, uint32_t len)
{
	return len >= 4 ? dvx_mlx5_get(in, DVX_MLX5_HDR_OPCODE) : 0;
}

/* ---- printing ---- */

/* a CQE parsed from bytes at any alignment (a trace's are not aligned) */
static int parse_cqe(const uint8_t *bytes, struct dvx_mlx5_cqe_info *info)
{
	struct dvx_mlx5_cqe64 cqe;

	memcpy(&cqe, bytes, sizeof(cqe));
	return dvx_mlx5_cqe_parse(&cqe, info);
}

static void print_cqe(FILE *out, const char *indent, const uint8_t *cqe)
{
	struct dvx_mlx5_cqe_info info;
	char text[2048], *line, *save = NULL;
	int err = parse_cqe(cqe, &info);

	dvx_mlx5_cqe_format(&info, err, text, sizeof(text));
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		fprintf(out, "%s%s\n", indent, line);
}

static void print_wqes(FILE *out, const uint8_t *bbs, uint32_t n)
{
	struct dvx_mlx5_wqe_desc d;
	char text[4096], *line, *save;
	uint32_t i = 0;
	int w;

	while (i < n) {
		w = dvx_mlx5_wqe_decode(bbs, n * 64, i, &d);
		dvx_mlx5_wqe_format(&d, text, sizeof(text));
		fprintf(out, "    --- wqebb %u ---\n", i);
		save = NULL;
		for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
			fprintf(out, "    %s\n", line);
		i += w > 0 ? (uint32_t)w : 1;
	}
}

static void print_rec(FILE *out, const struct r_rec *r)
{
	struct r_call c;

	fprintf(out, "#%llu dev %u ", (unsigned long long)r->seq, r->dev);
	switch (r->type) {
	case DVX_TRACE_REC_CALL:
		if (parse_call(r, &c)) {
			fprintf(out, "call (malformed)\n");
			return;
		}
		fprintf(out, "%s ret %d id 0x%x", op_name(c.op), c.ret, c.id);
		if (c.op >= DVX_TRACE_OP_DEVX_CMD && c.op <= DVX_TRACE_OP_OBJ_QUERY &&
		    c.in_len >= 4)
			fprintf(out, " %s", dvx_mlx5_cmd_name(mb_opcode(c.in, c.in_len)));
		if (c.op == DVX_TRACE_OP_NIC_OPEN)
			fprintf(out, " %.*s", (int)c.in_len, (const char *)c.in);
		if (c.ret && c.out_len >= 8 && c.op >= DVX_TRACE_OP_DEVX_CMD &&
		    c.op <= DVX_TRACE_OP_OBJ_QUERY)
			fprintf(out, " (%s syndrome 0x%08x)", dvx_mlx5_cmd_status_name(c.out[0]),
				dvx_get_be32(c.out + 4));
		fputc('\n', out);
		return;
	case DVX_TRACE_REC_DOORBELL:
		if (r->len < DVX_TRACE_DB_BYTES)
			break;
		fprintf(out, "doorbell qpn 0x%06x page 0x%x+0x%x value %016llx record %u: "
			     "%u WQEBBs from %u%s\n", le32(r->p + 8), le32(r->p), le32(r->p + 4),
			(unsigned long long)le64(r->p + 16), le32(r->p + 12), le32(r->p + 28),
			le32(r->p + 24),
			le32(r->p + 32) & DVX_TRACE_DB_FROM_RECORD ? " (from the record)" : "");
		if (r->len >= DVX_TRACE_DB_BYTES + le32(r->p + 28) * 64ull)
			print_wqes(out, r->p + DVX_TRACE_DB_BYTES, le32(r->p + 28));
		return;
	case DVX_TRACE_REC_RECV:
		if (r->len < DVX_TRACE_RECV_BYTES)
			break;
		fprintf(out, "receive qpn 0x%06x record %u: %u WQEs from %u\n", le32(r->p),
			le32(r->p + 4), le32(r->p + 12), le32(r->p + 8));
		return;
	case DVX_TRACE_REC_CQE:
		if (r->len < DVX_TRACE_CQE_BYTES)
			break;
		fprintf(out, "cqe cqn 0x%06x index %u\n", le32(r->p), le32(r->p + 4));
		print_cqe(out, "    ", r->p + 8);
		return;
	default:
		fprintf(out, "record type %u (not known, skipped)\n", r->type);
		return;
	}
	fprintf(out, "record type %u (malformed)\n", r->type);
}

static int diverge(struct replay *R, const struct r_rec *r, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int diverge(struct replay *R, const struct r_rec *r, const char *fmt, ...)
{
	va_list ap;

	fprintf(R->out, "divergence at record #%llu (device %u): ", (unsigned long long)r->seq,
		r->dev);
	va_start(ap, fmt);
	vfprintf(R->out, fmt, ap);
	va_end(ap);
	fputc('\n', R->out);
	return REPLAY_DIVERGED;
}

/* a registration the software NIC refused: its bytes go, the divergence says why */
static int refused(struct replay *R, const struct r_rec *r, const char *what, uint8_t **own)
{
	free(*own);
	*own = NULL;
	return diverge(R, r, "%s refused by the software NIC: %s", what,
		       R->dev[r->dev].nic.diag.msg);
}

/* ---- the software NIC, shaped after the recorded devices ---- */

/* what the trace says about each device, before anything runs */
static int prescan(struct replay *R, const uint8_t *buf, size_t len)
{
	size_t off = DVX_TRACE_FILE_HDR_BYTES;
	struct r_rec r;
	struct r_call c;
	int rc;

	while ((rc = next_rec(buf, len, &off, &r)) > 0) {
		struct r_dev *d = &R->dev[r.dev];

		if (r.type != DVX_TRACE_REC_CALL)
			continue;
		if (parse_call(&r, &c))
			return -1;
		if (c.op == DVX_TRACE_OP_NIC_OPEN && !c.ret)
			d->used = 1;
		if (c.op == DVX_TRACE_OP_QUERY_PORT && !c.ret) {
			d->link_layer = (uint8_t)c.a[1];
			d->lid = (uint16_t)c.id;
		}
		if (c.op == DVX_TRACE_OP_QUERY_GID && !c.ret && c.id && c.a[1] < 16 &&
		    c.out_len == 16) {
			memcpy(d->gid[c.a[1]], c.out, 16);
			d->gid_valid[c.a[1]] = 1;
		}
		if (c.op == DVX_TRACE_OP_DEVX_CMD && !c.ret &&
		    mb_opcode(c.in, c.in_len) == DVX_MLX5_CMD_QUERY_HCA_CAP)
			dvx_mlx5_caps_parse(&d->caps, dvx_mlx5_get(c.in, 4, 15, 1), c.out,
					    c.out_len);
	}
	return rc;
}

/* the recorded device's capabilities where they shape what the software NIC accepts */
static void sim_caps(const struct r_dev *d, struct dvx_sim_nic_cfg *nc)
{
	const struct dvx_mlx5_caps *c = &d->caps;

	if (d->link_layer == DVX_LINK_LAYER_IB)
		nc->port[0].link_layer = DVX_LINK_LAYER_IB;
	if (!c->general_valid)
		return;
	nc->cd = c->cd;
	nc->cq_oi = c->cq_oi;
	nc->bf = c->bf;
	nc->atomic = c->atomic && c->atomic_valid;
	nc->atomic_be_only = c->atomic_valid && c->atomic_req_8B_endianness_mode != 1;
	nc->force_loopback = c->roce_valid &&
			     (c->fl_rc_qp_when_roce_enabled || c->fl_rc_qp_when_roce_disabled);
	nc->log_max_qp_sz = c->log_max_qp_sz;
	nc->log_max_cq_sz = c->log_max_cq_sz;
	nc->log_max_msg = c->log_max_msg;
	nc->log_max_ra_req_qp = c->log_max_ra_req_qp;
	nc->log_max_ra_res_qp = c->log_max_ra_res_qp;
	if (c->max_wqe_sz_sq)
		nc->max_wqe_sz_sq = c->max_wqe_sz_sq;
	if (c->max_wqe_sz_rq)
		nc->max_wqe_sz_rq = c->max_wqe_sz_rq;
	/* free-running, real-time or both, as the timestamp caps say (ts_cap 0, 1, 2) */
	nc->ts_cap = c->sq_ts_format == 1 ? 1 : c->sq_ts_format ? 2 : 0;
}

static int sim_open(struct replay *R)
{
	struct dvx_sim_fabric_cfg fc;
	struct dvx_sim_nic_cfg nc;
	size_t len;
	unsigned i;

	dvx_sim_fabric_cfg_default(&fc);
	fc.max_nics = R_DEVS;
	fc.max_qps = fc.max_cqs = fc.max_mrs = fc.max_umems = R_MAX;
	fc.max_uars = 64;
	len = dvx_sim_fabric_mem_size(&fc);
	R->fab_mem = malloc(len);
	if (!R->fab_mem || dvx_sim_fabric_init(R->fab_mem, len, &fc, &R->fab))
		return -1;
	for (i = 0; i < R_DEVS; i++) {
		dvx_sim_nic_cfg_default(&nc, i);
		sim_caps(&R->dev[i], &nc);
		if (dvx_sim_add_nic(R->fab, &nc) < 0)
			return -1;
	}
	R->hal = dvx_sim_hal(R->fab);
	return 0;
}

/* ---- the maps from recorded numbers to the replay's ---- */

/* the live entry of @dev (with recorded number @rec unless @any) in an array of R_MAX
 * structs that start with a struct r_head */
static void *find(void *arr, size_t size, unsigned dev, uint32_t rec, int any)
{
	uint8_t *p = arr;
	unsigned i;

	for (i = 0; i < R_MAX; i++, p += size) {
		const struct r_head *h = (const void *)p;

		if (h->live && h->dev == dev && (any || h->rec == rec))
			return p;
	}
	return NULL;
}

#define FIND(R, arr, dev, rec) find((R)->arr, sizeof((R)->arr[0]), dev, rec, 0)

static struct r_obj *obj_of(struct replay *R, unsigned dev, unsigned opcode, uint32_t rec_id)
{
	unsigned i;

	/* a CQ and a QP may share a number: the creating opcode tells them apart */
	for (i = 0; i < R_MAX; i++)
		if (R->obj[i].h0.live && R->obj[i].h0.dev == dev && R->obj[i].opcode == opcode &&
		    R->obj[i].h0.rec == rec_id)
			return &R->obj[i];
	return NULL;
}

static struct r_umem *umem_of(struct replay *R, unsigned dev, uint32_t rec_id)
{
	return FIND(R, umem, dev, rec_id);
}

static struct r_uar *uar_of(struct replay *R, unsigned dev, uint32_t rec_page)
{
	return FIND(R, uar, dev, rec_page);
}

static struct r_pd *pd_of(struct replay *R, unsigned dev, uint32_t rec_pdn)
{
	return FIND(R, pd, dev, rec_pdn);
}

/* a recorded key of @dev's MRs to the replay's (a key not recorded stays) */
static uint32_t key_of(struct replay *R, unsigned dev, uint32_t key, int remote)
{
	unsigned i;

	for (i = 0; i < R_MAX; i++) {
		struct r_mr *m = &R->mr[i];

		if (m->h0.live && (remote || m->h0.dev == dev) &&
		    (remote ? m->rec_rkey : m->h0.rec) == key)
			return remote ? m->h.rkey : m->h.lkey;
	}
	return key;
}

static uint32_t qpn_of(struct replay *R, unsigned dev, uint32_t rec_qpn)
{
	struct r_obj *o = obj_of(R, dev, DVX_MLX5_CMD_CREATE_QP, rec_qpn);

	return o ? o->h.id : rec_qpn;
}

static uint32_t cqn_of(struct replay *R, unsigned dev, uint32_t rec_cqn)
{
	struct r_obj *o = obj_of(R, dev, DVX_MLX5_CMD_CREATE_CQ, rec_cqn);

	return o ? o->h.id : rec_cqn;
}

static uint32_t eqn_of(struct replay *R, unsigned dev, uint32_t rec)
{
	struct r_dev *d = &R->dev[dev];
	unsigned i;

	for (i = 0; i < d->neqn; i++)
		if (d->eqn_rec[i] == rec)
			return d->eqn_rep[i];
	return rec;
}

/* replay memory behind a recorded address in one of @dev's umems, NULL if none */
static uint8_t *mem_of(struct replay *R, unsigned dev, uint64_t addr, uint64_t len)
{
	unsigned i;

	for (i = 0; i < R_MAX; i++) {
		struct r_umem *u = &R->umem[i];

		if (u->h0.live && u->h0.dev == dev && u->rec_addr && addr >= u->rec_addr &&
		    addr - u->rec_addr <= u->len && len <= u->len - (addr - u->rec_addr))
			return u->mem + (addr - u->rec_addr);
	}
	return NULL;
}

/* @bytes at @off in a replayed umem, NULL when they are not all inside it */
static uint8_t *umem_ptr(struct replay *R, unsigned dev, uint32_t rec_id, uint64_t off,
			 uint64_t bytes)
{
	struct r_umem *u = umem_of(R, dev, rec_id);

	return u && off <= u->len && bytes <= u->len - off ? u->mem + off : NULL;
}

static struct r_pd *any_pd(struct replay *R, unsigned dev)
{
	return find(R->pd, sizeof(R->pd[0]), dev, 0, 1);
}

/* a free entry of an array of R_MAX structs whose first member is int live, zeroed */
static void *free_slot(void *arr, size_t size)
{
	uint8_t *p = arr;
	unsigned i;

	for (i = 0; i < R_MAX; i++, p += size)
		if (!*(int *)(void *)p) {
			memset(p, 0, size);
			return p;
		}
	return NULL;
}

/* ---- WQEs: the recorded keys and numbers to the replay's ---- */

static void map32(uint8_t *p, uint32_t v)
{
	dvx_put_be32(p, v);
}

static void rewrite_data(struct replay *R, unsigned dev, uint8_t *seg)
{
	uint32_t lkey = dvx_get_be32(seg + 4);

	if (lkey != DVX_MLX5_INVALID_LKEY)
		map32(seg + 4, key_of(R, dev, lkey, 0));
}

/* one WQE at @w (@nbb WQEBBs available, contiguous): keys, QPN, CQN */
static uint32_t rewrite_wqe(struct replay *R, unsigned dev, uint8_t *w, uint32_t nbb)
{
	uint8_t opcode = w[3];
	uint32_t ds = w[7] & 0x3f, qpn_ds = dvx_get_be32(w + 4), u, first_data = 1;
	uint32_t bbs = (ds + 3) / 4;

	if (!ds || bbs > nbb)
		return 1;
	map32(w + 4, qpn_of(R, dev, qpn_ds >> 8) << 8 | (qpn_ds & 0xff));
	switch (opcode) {
	case DVX_MLX5_OPCODE_RDMA_WRITE:
	case DVX_MLX5_OPCODE_RDMA_WRITE_IMM:
	case DVX_MLX5_OPCODE_RDMA_READ:
		map32(w + 16 + 8, key_of(R, dev, dvx_get_be32(w + 16 + 8), 1));
		first_data = 2;
		break;
	case DVX_MLX5_OPCODE_ATOMIC_CS:
	case DVX_MLX5_OPCODE_ATOMIC_FA:
	case DVX_MLX5_OPCODE_ATOMIC_MASKED_CS:
	case DVX_MLX5_OPCODE_ATOMIC_MASKED_FA:
		map32(w + 16 + 8, key_of(R, dev, dvx_get_be32(w + 16 + 8), 1));
		rewrite_data(R, dev, w + (ds - 1) * 16);	/* the result's segment, last */
		return bbs;
	case DVX_MLX5_OPCODE_WAIT:
		map32(w + 16 + 12, cqn_of(R, dev, dvx_get_be32(w + 16 + 12)));
		return bbs;
	case DVX_MLX5_OPCODE_SEND_EN:
	case DVX_MLX5_OPCODE_RECV_EN:
		map32(w + 16 + 12, qpn_of(R, dev, dvx_get_be32(w + 16 + 12)));
		return bbs;
	case DVX_MLX5_OPCODE_SEND:
	case DVX_MLX5_OPCODE_SEND_IMM:
		break;
	default:
		return bbs;
	}
	for (u = first_data; u < ds; u++) {
		if (dvx_get_be32(w + u * 16) & DVX_MLX5_INLINE_SEG)
			break;		/* inline data to the end */
		rewrite_data(R, dev, w + u * 16);
	}
	return bbs;
}

/* ---- records ---- */

/* two answers to the same command: the same outcome, or the divergence */
static int same_outcome(struct replay *R, const struct r_rec *r, const struct r_call *c,
			int ret, const uint8_t *out, const struct dvx_hal_nic *nic)
{
	unsigned opcode = mb_opcode(c->in, c->in_len);

	if (!c->ret == !ret)
		return 0;
	if (ret)
		return diverge(R, r, "%s refused by the software NIC: %s syndrome 0x%08x (%s); "
				  "the device accepted it", dvx_mlx5_cmd_name(opcode),
			       dvx_mlx5_cmd_status_name(nic->diag.status), nic->diag.syndrome,
			       nic->diag.msg);
	(void)out;
	return diverge(R, r, "%s accepted by the software NIC; the device refused it: %s "
			  "syndrome 0x%08x", dvx_mlx5_cmd_name(opcode),
		       c->out_len >= 8 ? dvx_mlx5_cmd_status_name(c->out[0]) : "?",
		       c->out_len >= 8 ? dvx_get_be32(c->out + 4) : 0);
}

/* the recorded device that owns @gid (RoCE) or @lid (IB) */
static int peer_dev(struct replay *R, const uint8_t *gid, uint16_t lid, int roce)
{
	unsigned d, i;

	for (d = 0; d < R_DEVS; d++) {
		if (!R->dev[d].used)
			continue;
		if (!roce && R->dev[d].lid == lid)
			return (int)d;
		for (i = 0; roce && i < 16; i++)
			if (R->dev[d].gid_valid[i] && !memcmp(R->dev[d].gid[i], gid, 16))
				return (int)d;
	}
	return -1;
}

/* INIT2RTR: the remote QP to the replay's, and the path to the software NIC's port */
static int readdress(struct replay *R, const struct r_rec *r, uint8_t *in)
{
	uint8_t *qpc = DVX_MLX5_QPC_IN(in);
	uint8_t *ads = DVX_MLX5_ADS_IN(in);
	struct r_dev *me = &R->dev[r->dev];
	uint32_t rqpn = dvx_mlx5_get(qpc, DVX_MLX5_QPC_REMOTE_QPN);
	int roce = me->link_layer != DVX_LINK_LAYER_IB, peer;
	struct dvx_hal_port_attr pa;
	struct dvx_hal_gid g;
	struct r_pd *pd;

	if (dvx_mlx5_get(ads, DVX_MLX5_ADS_FL)) {	/* force-loopback: to itself */
		dvx_mlx5_set(qpc, DVX_MLX5_QPC_REMOTE_QPN, qpn_of(R, r->dev, rqpn));
		return 0;
	}
	peer = peer_dev(R, ads + DVX_MLX5_ADS_RGID_RIP,
			(uint16_t)dvx_mlx5_get(ads, DVX_MLX5_ADS_RLID), roce);
	if (peer < 0 || !R->dev[peer].open)
		return diverge(R, r, "INIT2RTR: the peer (%s) is not a device of this trace "
				  "(another host's?): the connection cannot be replayed",
			       roce ? "GID" : "LID");
	dvx_mlx5_set(qpc, DVX_MLX5_QPC_REMOTE_QPN, qpn_of(R, (unsigned)peer, rqpn));
	if (!roce) {
		if (dvx_hal_query_port(&R->dev[peer].nic, 1, &pa))
			return diverge(R, r, "INIT2RTR: no port on the software NIC");
		dvx_mlx5_set(ads, DVX_MLX5_ADS_RLID, pa.lid);
		return 0;
	}
	/* the software NIC's RoCE v2 GID is index 3 (docs/sim.md); its MAC through an AH */
	pd = any_pd(R, r->dev);
	if (!pd || dvx_hal_query_gid(&R->dev[peer].nic, 1, 3, &g) ||
	    dvx_hal_roce_rmac(&me->nic, &pd->h, 1, 3, g.raw, ads + DVX_MLX5_ADS_RMAC))
		return diverge(R, r, "INIT2RTR: the software NIC has no address for the peer");
	memcpy(ads + DVX_MLX5_ADS_RGID_RIP, g.raw, 16);
	dvx_mlx5_set(ads, DVX_MLX5_ADS_SRC_ADDR_INDEX, 3);
	return 0;
}

/* CREATE_CQ / CREATE_QP: the numbers in the mailbox to the replay's */
static void rewrite_create(struct replay *R, unsigned dev, uint8_t *in, unsigned opcode)
{
	uint8_t *cqc = DVX_MLX5_CQC_IN(in);
	uint8_t *qpc = DVX_MLX5_QPC_IN(in);
	struct r_umem *u;
	struct r_uar *ua;
	struct r_pd *pd;

	if (opcode == DVX_MLX5_CMD_CREATE_CQ) {
		ua = uar_of(R, dev, dvx_mlx5_get(cqc, DVX_MLX5_CQC_UAR_PAGE));
		if (ua)
			dvx_mlx5_set(cqc, DVX_MLX5_CQC_UAR_PAGE, ua->h.page_id);
		dvx_mlx5_set(cqc, DVX_MLX5_CQC_C_EQN,
			     eqn_of(R, dev, dvx_mlx5_get(cqc, DVX_MLX5_CQC_C_EQN)));
		if ((u = umem_of(R, dev, dvx_mlx5_get(cqc, DVX_MLX5_CQC_DBR_UMEM_ID))))
			dvx_mlx5_set(cqc, DVX_MLX5_CQC_DBR_UMEM_ID, u->h.id);
		if ((u = umem_of(R, dev, dvx_mlx5_get(in, DVX_MLX5_CREATE_CQ_IN_CQ_UMEM_ID))))
			dvx_mlx5_set(in, DVX_MLX5_CREATE_CQ_IN_CQ_UMEM_ID, u->h.id);
		return;
	}
	if ((pd = pd_of(R, dev, dvx_mlx5_get(qpc, DVX_MLX5_QPC_PD))))
		dvx_mlx5_set(qpc, DVX_MLX5_QPC_PD, pd->h.pdn);
	if ((ua = uar_of(R, dev, dvx_mlx5_get(qpc, DVX_MLX5_QPC_UAR_PAGE))))
		dvx_mlx5_set(qpc, DVX_MLX5_QPC_UAR_PAGE, ua->h.page_id);
	dvx_mlx5_set(qpc, DVX_MLX5_QPC_CQN_SND,
		     cqn_of(R, dev, dvx_mlx5_get(qpc, DVX_MLX5_QPC_CQN_SND)));
	if (dvx_mlx5_get(qpc, DVX_MLX5_QPC_CQN_RCV))
		dvx_mlx5_set(qpc, DVX_MLX5_QPC_CQN_RCV,
			     cqn_of(R, dev, dvx_mlx5_get(qpc, DVX_MLX5_QPC_CQN_RCV)));
	if ((u = umem_of(R, dev, dvx_mlx5_get(qpc, DVX_MLX5_QPC_DBR_UMEM_ID))))
		dvx_mlx5_set(qpc, DVX_MLX5_QPC_DBR_UMEM_ID, u->h.id);
	if ((u = umem_of(R, dev, dvx_mlx5_get(in, DVX_MLX5_CREATE_QP_IN_WQ_UMEM_ID))))
		dvx_mlx5_set(in, DVX_MLX5_CREATE_QP_IN_WQ_UMEM_ID, u->h.id);
}

/* where a created queue's rings and records are in the replay's memory */
static void learn(struct replay *R, unsigned dev, const uint8_t *in, struct r_obj *o)
{
	const uint8_t *cqc = DVX_MLX5_CQC_IN(in);
	const uint8_t *qpc = DVX_MLX5_QPC_IN(in);
	uint64_t rq_bytes = 0, wq_off;
	uint32_t wq_id;

	if (o->opcode == DVX_MLX5_CMD_CREATE_CQ) {
		o->log = dvx_mlx5_get(cqc, DVX_MLX5_CQC_LOG_CQ_SIZE);
		o->ring = umem_ptr(R, dev, dvx_mlx5_get(in, DVX_MLX5_CREATE_CQ_IN_CQ_UMEM_ID),
				   dvx_mlx5_get64(in, DVX_MLX5_CREATE_CQ_IN_CQ_UMEM_OFFSET),
				   64ull << o->log);
		o->dbrec = umem_ptr(R, dev, dvx_mlx5_get(cqc, DVX_MLX5_CQC_DBR_UMEM_ID),
				    dvx_mlx5_get64(cqc, DVX_MLX5_CQC_DBR_ADDR), 8);
		return;
	}
	if (o->opcode != DVX_MLX5_CMD_CREATE_QP)
		return;
	wq_id = dvx_mlx5_get(in, DVX_MLX5_CREATE_QP_IN_WQ_UMEM_ID);
	wq_off = dvx_mlx5_get64(in, DVX_MLX5_CREATE_QP_IN_WQ_UMEM_OFFSET);
	o->log = dvx_mlx5_get(qpc, DVX_MLX5_QPC_LOG_SQ_SIZE);
	if (dvx_mlx5_get(qpc, DVX_MLX5_QPC_RQ_TYPE) == DVX_MLX5_RQ_TYPE_REGULAR) {
		o->log_rq = dvx_mlx5_get(qpc, DVX_MLX5_QPC_LOG_RQ_SIZE);
		o->rq_stride = 16u << dvx_mlx5_get(qpc, DVX_MLX5_QPC_LOG_RQ_STRIDE);
		rq_bytes = (uint64_t)o->rq_stride << o->log_rq;
		o->rq = umem_ptr(R, dev, wq_id, wq_off, rq_bytes);
	}
	o->sq = umem_ptr(R, dev, wq_id, wq_off + rq_bytes, 64ull << o->log);
	o->dbrec = umem_ptr(R, dev, dvx_mlx5_get(qpc, DVX_MLX5_QPC_DBR_UMEM_ID),
			    dvx_mlx5_get64(qpc, DVX_MLX5_QPC_DBR_ADDR), 8);
}

static int call_cmd(struct replay *R, const struct r_rec *r, const struct r_call *c)
{
	struct r_dev *d = &R->dev[r->dev];
	uint8_t *in = R->mb_in, *out = R->mb_out;
	unsigned opcode = mb_opcode(c->in, c->in_len);
	struct r_obj *o = NULL;
	int ret;

	if (c->in_len > sizeof(R->mb_in) || c->out_len > sizeof(R->mb_out))
		return diverge(R, r, "a mailbox larger than any command's");
	memcpy(in, c->in, c->in_len);
	memset(out, 0, c->out_len);
	switch (c->op) {
	case DVX_TRACE_OP_DEVX_CMD:
		ret = dvx_hal_devx_cmd(&d->nic, in, c->in_len, out, c->out_len);
		break;
	case DVX_TRACE_OP_OBJ_CREATE:
		rewrite_create(R, r->dev, in, opcode);
		o = free_slot(R->obj, sizeof(R->obj[0]));
		if (!o)
			return diverge(R, r, "more live objects than the replay holds (%u)", R_MAX);
		o->opcode = opcode;
		learn(R, r->dev, c->in, o);
		/* a fresh CQ as the PRM wants it and dvx writes it before CREATE_CQ (prm 1.6,
		 * 4.4); the trace holds what the device wrote, not what was there before */
		if (opcode == DVX_MLX5_CMD_CREATE_CQ && o->ring && o->dbrec &&
		    o->log <= R_MAX_LOG) {
			dvx_mlx5_cq_ring_init(o->ring, o->log);
			dvx_mlx5_cq_dbr_init((dvx_be32 *)(void *)o->dbrec);
		}
		ret = dvx_hal_obj_create(&d->nic, in, c->in_len, out, c->out_len, &o->h);
		if (!ret) {
			hold(&o->h0, r, c->id);
			/* the CQN sits where the QPN does */
			o->h.id = dvx_mlx5_get(out, DVX_MLX5_CREATE_QP_OUT_QPN);
		}
		break;
	default:	/* modify and query name the object created before */
		o = obj_of(R, r->dev, (unsigned)c->a[1], (uint32_t)c->a[0]);
		if (!o)
			return c->ret ? 0 : diverge(R, r, "%s on an object the replay does not "
							   "have", dvx_mlx5_cmd_name(opcode));
		dvx_mlx5_set(in, DVX_MLX5_MODIFY_QP_IN_QPN, o->h.id);	/* cqn and qpn alike */
		if (opcode == DVX_MLX5_CMD_INIT2RTR_QP && (ret = readdress(R, r, in)))
			return ret;
		if (c->op == DVX_TRACE_OP_OBJ_MODIFY)
			ret = dvx_hal_obj_modify(&d->nic, &o->h, in, c->in_len, out, c->out_len);
		else
			ret = dvx_hal_obj_query(&d->nic, &o->h, in, c->in_len, out, c->out_len);
		break;
	}
	if ((ret = same_outcome(R, r, c, ret, out, &d->nic)))
		return ret;
	/* a QP the device reports in one state and the software NIC in another */
	if (!c->ret && opcode == DVX_MLX5_CMD_QUERY_QP && c->out_len >= 28) {
		uint32_t was = dvx_mlx5_get(DVX_MLX5_QPC_IN(c->out), DVX_MLX5_QPC_STATE);
		uint32_t is = dvx_mlx5_get(DVX_MLX5_QPC_IN(out), DVX_MLX5_QPC_STATE);

		if (was != is)
			return diverge(R, r,
				       "QUERY_QP: the QP is %s on the device, %s on the software NIC",
				       dvx_mlx5_qp_state_name(was), dvx_mlx5_qp_state_name(is));
	}
	return 0;
}

static const uint8_t *cqe_at(const struct r_obj *cq, uint64_t idx);

/* a CQ about to go (or the trace's end): nothing on it the device did not write too */
static int extra_cqe(struct replay *R, const struct r_rec *r, const struct r_obj *cq)
{
	const uint8_t *e;
	unsigned i;

	for (i = 0; i < 8; i++)
		dvx_sim_step(R->fab);
	e = cq->ring ? cqe_at(cq, cq->next_cqe) : NULL;
	if (!e)
		return 0;
	diverge(R, r, "an extra completion: CQE %llu on CQ 0x%06x, which the device never "
		      "wrote:", (unsigned long long)cq->next_cqe, cq->h0.rec);
	print_cqe(R->out, "    software: ", e);
	return REPLAY_DIVERGED;
}

static int call_destroy(struct replay *R, const struct r_rec *r, const struct r_call *c)
{
	struct r_obj *o = obj_of(R, r->dev, (unsigned)c->a[1], (uint32_t)c->a[0]);
	int ret;

	if (!o)
		return c->ret ? 0 : diverge(R, r, "destroy of an object the replay does not have");
	if (o->opcode == DVX_MLX5_CMD_CREATE_CQ && (ret = extra_cqe(R, r, o)))
		return ret;
	ret = dvx_hal_obj_destroy(&R->dev[r->dev].nic, &o->h);
	if (!c->ret != !ret)
		return diverge(R, r, "obj_destroy answered %d on the software NIC, %d on the "
				  "device", ret, c->ret);
	if (!ret)
		o->h0.live = 0;
	return 0;
}

static int call_umem(struct replay *R, const struct r_rec *r, const struct r_call *c)
{
	struct dvx_hal_umem_req q;
	struct r_umem *u;
	int ret;

	if (c->op == DVX_TRACE_OP_UMEM_DEREG) {
		u = umem_of(R, r->dev, (uint32_t)c->a[0]);
		if (!u)
			return 0;
		ret = dvx_hal_umem_dereg(&R->dev[r->dev].nic, &u->h);
		if (!ret) {
			free(u->mem);
			u->mem = NULL;
			u->h0.live = 0;
		}
		return !c->ret == !ret ? 0 : diverge(R, r, "umem_dereg answered %d, the device "
							   "%d", ret, c->ret);
	}
	if (c->ret)
		return 0;	/* refused on the device: nothing to stand for */
	u = free_slot(R->umem, sizeof(R->umem[0]));
	if (!u)
		return diverge(R, r, "more umems than the replay holds (%u)", R_MAX);
	u->len = c->a[1];
	u->mem = aligned_alloc(4096, (u->len + 4095) & ~4095ull);
	if (!u->mem)
		return diverge(R, r, "no memory for a umem of %llu bytes",
			       (unsigned long long)u->len);
	memset(u->mem, 0, (u->len + 4095) & ~4095ull);
	/* host memory stands for the device's (a dma-buf's too), same rights and pages */
	memset(&q, 0, sizeof(q));
	q.addr = u->mem;
	q.len = u->len;
	q.access = (uint32_t)c->a[2];
	q.dmabuf_fd = -1;
	q.pgsz_bitmap = c->a[3];
	ret = dvx_hal_umem_reg(&R->dev[r->dev].nic, &q, &u->h);
	if (ret)
		return refused(R, r, "umem_reg", &u->mem);
	hold(&u->h0, r, c->id);
	u->rec_addr = c->id2 ? 0 : c->a[0];
	return 0;
}

static int call_mr(struct replay *R, const struct r_rec *r, const struct r_call *c)
{
	struct dvx_hal_mr_req q;
	struct r_mr *m;
	struct r_pd *pd = any_pd(R, r->dev);
	int ret;

	if (c->op == DVX_TRACE_OP_MR_DEREG) {
		unsigned i;

		for (i = 0; i < R_MAX; i++) {
			m = &R->mr[i];
			if (!m->h0.live || m->h0.dev != r->dev || m->h0.rec != (uint32_t)c->a[0])
				continue;
			if (!dvx_hal_mr_dereg(&R->dev[r->dev].nic, &m->h)) {
				free(m->own);
				m->own = NULL;
				m->h0.live = 0;
			}
		}
		return 0;
	}
	if (c->ret)
		return 0;
	m = free_slot(R->mr, sizeof(R->mr[0]));
	if (!m || !pd)
		return diverge(R, r, "an MR the replay cannot hold (no PD, or more than %u)",
			       R_MAX);
	memset(&q, 0, sizeof(q));
	q.len = c->a[1];
	q.iova = c->a[2];
	q.access = (uint32_t)c->a[3];
	q.dmabuf_fd = -1;
	/* the bytes: inside a replayed umem where the recorded ones were, else our own */
	q.addr = mem_of(R, r->dev, c->a[0], q.len);
	if (!q.addr) {
		m->own = calloc(1, q.len ? q.len : 1);
		q.addr = m->own;
	}
	if (!q.addr)
		return diverge(R, r, "no memory for an MR of %llu bytes",
			       (unsigned long long)q.len);
	ret = dvx_hal_mr_reg(&R->dev[r->dev].nic, &pd->h, &q, &m->h);
	if (ret)
		return refused(R, r, "mr_reg", &m->own);
	hold(&m->h0, r, c->id);
	m->rec_rkey = c->id2;
	return 0;
}

static int call_other(struct replay *R, const struct r_rec *r, const struct r_call *c)
{
	struct r_dev *d = &R->dev[r->dev];
	char name[16];
	struct r_uar *ua;
	struct r_pd *pd;
	uint32_t eqn;
	int ret = 0;

	switch (c->op) {
	case DVX_TRACE_OP_NIC_OPEN:
		if (c->ret)
			return 0;
		snprintf(name, sizeof(name), "sim_%u", r->dev);
		if (dvx_hal_nic_open(R->hal, name, &d->nic))
			return diverge(R, r, "the software NIC %s does not open", name);
		d->open = 1;
		return 0;
	case DVX_TRACE_OP_NIC_CLOSE:
		if (d->open && !dvx_hal_nic_close(&d->nic))
			d->open = 0;
		return 0;
	case DVX_TRACE_OP_UAR_ALLOC:
		if (c->ret)
			return 0;
		ua = free_slot(R->uar, sizeof(R->uar[0]));
		if (!ua || dvx_hal_uar_alloc(&d->nic, (enum dvx_uar_type)c->a[0], &ua->h))
			return diverge(R, r, "uar_alloc refused by the software NIC");
		hold(&ua->h0, r, c->id);
		return 0;
	case DVX_TRACE_OP_UAR_FREE:
		ua = uar_of(R, r->dev, (uint32_t)c->a[0]);
		if (ua && !dvx_hal_uar_free(&d->nic, &ua->h))
			ua->h0.live = 0;
		return 0;
	case DVX_TRACE_OP_PD_ALLOC:
		if (c->ret)
			return 0;
		pd = free_slot(R->pd, sizeof(R->pd[0]));
		if (!pd || dvx_hal_pd_alloc(&d->nic, &pd->h))
			return diverge(R, r, "pd_alloc refused by the software NIC");
		hold(&pd->h0, r, c->id);
		return 0;
	case DVX_TRACE_OP_PD_FREE:
		if ((pd = pd_of(R, r->dev, (uint32_t)c->a[0])) && !dvx_hal_pd_free(&d->nic, &pd->h))
			pd->h0.live = 0;
		return 0;
	case DVX_TRACE_OP_EQN_QUERY:
		if (c->ret || dvx_hal_eqn_query(&d->nic, (uint32_t)c->a[0], &eqn))
			return 0;
		if (d->neqn < 4) {
			d->eqn_rec[d->neqn] = c->id;
			d->eqn_rep[d->neqn++] = eqn;
		}
		return 0;
	default:	/* queries and addresses: what the software NIC has instead */
		(void)ret;
		return 0;
	}
}

static int rec_call(struct replay *R, const struct r_rec *r)
{
	struct r_call c;

	if (parse_call(r, &c))
		return REPLAY_BAD_TRACE;
	R->st.calls++;
	if (c.op != DVX_TRACE_OP_NIC_OPEN && !R->dev[r->dev].open)
		return 0;	/* a call on a device the trace failed to open */
	switch (c.op) {
	case DVX_TRACE_OP_DEVX_CMD:
	case DVX_TRACE_OP_OBJ_CREATE:
	case DVX_TRACE_OP_OBJ_MODIFY:
	case DVX_TRACE_OP_OBJ_QUERY:
		return call_cmd(R, r, &c);
	case DVX_TRACE_OP_OBJ_DESTROY:
		return call_destroy(R, r, &c);
	case DVX_TRACE_OP_UMEM_REG:
	case DVX_TRACE_OP_UMEM_DEREG:
		return call_umem(R, r, &c);
	case DVX_TRACE_OP_MR_REG:
	case DVX_TRACE_OP_MR_DEREG:
		return call_mr(R, r, &c);
	default:
		return call_other(R, r, &c);
	}
}

static void store64(void *reg, const uint8_t b[8])
{
	uint64_t v;

	memcpy(&v, b, 8);
	__atomic_store_n((volatile uint64_t *)reg, v, __ATOMIC_RELEASE);
}

static int rec_doorbell(struct replay *R, const struct r_rec *r)
{
	uint32_t page = le32(r->p), off = le32(r->p + 4), qpn = le32(r->p + 8);
	uint32_t rec = le32(r->p + 12), first = le32(r->p + 24), n = le32(r->p + 28), i, w;
	uint64_t raw = le64(r->p + 16);
	struct r_obj *q = obj_of(R, r->dev, DVX_MLX5_CMD_CREATE_QP, qpn);
	struct r_uar *ua = uar_of(R, r->dev, page);
	uint8_t b[8];

	if (r->len < DVX_TRACE_DB_BYTES + n * 64ull || n * 64ull > sizeof(R->scratch))
		return REPLAY_BAD_TRACE;
	R->st.doorbells++;
	R->st.wqebbs += n;
	if (!q || !q->sq || !ua)
		return diverge(R, r, "a doorbell for QP 0x%06x on UAR page 0x%x, which the replay "
				  "does not have", qpn, page);
	if (off + 8 > 4096 || n > (1u << q->log))
		return REPLAY_BAD_TRACE;
	memcpy(R->scratch, r->p + DVX_TRACE_DB_BYTES, n * 64);
	for (i = 0; i < n; i += w)
		w = rewrite_wqe(R, r->dev, R->scratch + i * 64, n - i);
	for (i = 0; i < n; i++)
		memcpy(q->sq + ((first + i) & ((1u << q->log) - 1)) * 64, R->scratch + i * 64, 64);
	/* the record, then the doorbell with the replay's QPN (prm 3.2) */
	if (q->dbrec)
		__atomic_store_n((uint32_t *)(void *)(q->dbrec + 4), dvx_cpu_to_be32(rec),
				 __ATOMIC_RELEASE);
	for (i = 0; i < 8; i++)
		b[i] = (uint8_t)(raw >> (56 - 8 * i));
	b[4] = (uint8_t)(q->h.id >> 16);
	b[5] = (uint8_t)(q->h.id >> 8);
	b[6] = (uint8_t)q->h.id;
	store64((uint8_t *)ua->h.base_addr + off, b);
	dvx_sim_step(R->fab);
	return 0;
}

static int rec_recv(struct replay *R, const struct r_rec *r)
{
	uint32_t qpn = le32(r->p), rec = le32(r->p + 4), first = le32(r->p + 8);
	uint32_t n = le32(r->p + 12), stride = le32(r->p + 16), i, s;
	struct r_obj *q = obj_of(R, r->dev, DVX_MLX5_CMD_CREATE_QP, qpn);

	if (r->len < DVX_TRACE_RECV_BYTES + (uint64_t)n * stride)
		return REPLAY_BAD_TRACE;
	R->st.recvs++;
	if (!q || !q->rq || stride != q->rq_stride || n > (1u << q->log_rq))
		return diverge(R, r, "receive WQEs for QP 0x%06x, whose RQ the replay does not "
				  "have", qpn);
	for (i = 0; i < n; i++) {
		uint8_t *w = q->rq + ((first + i) & ((1u << q->log_rq) - 1)) * stride;

		memcpy(w, r->p + DVX_TRACE_RECV_BYTES + (uint64_t)i * stride, stride);
		for (s = 0; s < stride; s += 16)
			rewrite_data(R, r->dev, w + s);
	}
	if (q->dbrec)
		__atomic_store_n((uint32_t *)(void *)q->dbrec, dvx_cpu_to_be32(rec),
				 __ATOMIC_RELEASE);
	return 0;
}

/* the entry at free-running index @idx of a CQ, if the device (software NIC) wrote it */
static const uint8_t *cqe_at(const struct r_obj *cq, uint64_t idx)
{
	const uint8_t *e = cq->ring + (idx & ((1ull << cq->log) - 1)) * 64;
	uint8_t op_own = __atomic_load_n(e + 63, __ATOMIC_ACQUIRE);

	return (op_own >> 4) != 0xf && (op_own & 1) == ((idx >> cq->log) & 1) ? e : NULL;
}

static int cqe_differs(struct replay *R, unsigned dev, const uint8_t *rec, const uint8_t *got)
{
	struct dvx_mlx5_cqe_info a, b;
	int ea = parse_cqe(rec, &a), eb = parse_cqe(got, &b);
	int resp = a.opcode != DVX_MLX5_CQE_REQ && a.opcode != DVX_MLX5_CQE_REQ_ERR;

	/* what the protocol makes the same on any device; not timestamps, not the vendor
	 * syndrome; byte counts of responder completions (a requester's are the device's
	 * business) */
	return ea != eb || a.opcode != b.opcode || a.syndrome != b.syndrome ||
	       a.wqe_counter != b.wqe_counter || qpn_of(R, dev, a.qpn) != b.qpn ||
	       (!a.is_error && a.wqe_opcode != b.wqe_opcode) ||
	       (resp && !a.is_error && (a.byte_cnt != b.byte_cnt || a.imm != b.imm));
}

static int rec_cqe(struct replay *R, const struct r_rec *r)
{
	uint32_t cqn = le32(r->p), idx = le32(r->p + 4), step;
	struct r_obj *cq = obj_of(R, r->dev, DVX_MLX5_CMD_CREATE_CQ, cqn);
	const uint8_t *want = r->p + 8, *got = NULL;

	if (r->len < DVX_TRACE_CQE_BYTES)
		return REPLAY_BAD_TRACE;
	R->st.cqes++;
	if (!cq || !cq->ring)
		return diverge(R, r, "a CQE on CQ 0x%06x, which the replay does not have", cqn);
	for (step = 0; step < R_STEPS && !(got = cqe_at(cq, idx)); step++)
		dvx_sim_step(R->fab);
	if (!got) {
		diverge(R, r, "missing completion: the device wrote CQE %u on CQ 0x%06x, the "
			       "software NIC did not:", idx, cqn);
		print_cqe(R->out, "    device:   ", want);
		return REPLAY_DIVERGED;
	}
	if (cqe_differs(R, r->dev, want, got)) {
		diverge(R, r, "different CQE %u on CQ 0x%06x:", idx, cqn);
		print_cqe(R->out, "    device:   ", want);
		print_cqe(R->out, "    software: ", got);
		return REPLAY_DIVERGED;
	}
	/* the consumer index the traced code stored as it polled */
	if (cq->dbrec)
		__atomic_store_n((uint32_t *)(void *)cq->dbrec,
				 dvx_cpu_to_be32((idx + 1) & 0xffffff), __ATOMIC_RELEASE);
	cq->next_cqe = (uint64_t)idx + 1;
	return 0;
}

/* after the last record: nothing more on any CQ, no doorbell the software NIC faulted */
static int at_end(struct replay *R)
{
	struct dvx_sim_db_fault f;
	struct r_rec end;
	unsigned i;
	int n;

	memset(&end, 0, sizeof(end));
	end.seq = R->st.records;
	for (i = 0; i < R_MAX; i++) {
		struct r_obj *cq = &R->obj[i];

		if (!cq->h0.live || cq->opcode != DVX_MLX5_CMD_CREATE_CQ)
			continue;
		end.dev = cq->h0.dev;
		if ((n = extra_cqe(R, &end, cq)))
			return n;
	}
	n = dvx_sim_db_faults(R->fab, &f);
	if (n > 0)
		return diverge(R, &end, "%d doorbell fault(s) on the software NIC, the first of "
				       "kind %u for QP 0x%06x at index %u", n, f.kind, f.qpn,
			       f.index);
	return 0;
}

static void cleanup(struct replay *R)
{
	unsigned i;

	/* QPs before the CQs they use */
	for (i = 0; i < R_MAX; i++)
		if (R->obj[i].h0.live && R->obj[i].opcode == DVX_MLX5_CMD_CREATE_QP)
			dvx_hal_obj_destroy(&R->dev[R->obj[i].h0.dev].nic, &R->obj[i].h);
	for (i = 0; i < R_MAX; i++)
		if (R->obj[i].h0.live && R->obj[i].opcode != DVX_MLX5_CMD_CREATE_QP)
			dvx_hal_obj_destroy(&R->dev[R->obj[i].h0.dev].nic, &R->obj[i].h);
	for (i = 0; i < R_MAX; i++) {
		if (R->mr[i].h0.live)
			dvx_hal_mr_dereg(&R->dev[R->mr[i].h0.dev].nic, &R->mr[i].h);
		free(R->mr[i].own);
		if (R->umem[i].h0.live) {
			dvx_hal_umem_dereg(&R->dev[R->umem[i].h0.dev].nic, &R->umem[i].h);
			free(R->umem[i].mem);
		}
		if (R->uar[i].h0.live)
			dvx_hal_uar_free(&R->dev[R->uar[i].h0.dev].nic, &R->uar[i].h);
		if (R->pd[i].h0.live)
			dvx_hal_pd_free(&R->dev[R->pd[i].h0.dev].nic, &R->pd[i].h);
	}
	for (i = 0; i < R_DEVS; i++)
		if (R->dev[i].open)
			dvx_hal_nic_close(&R->dev[i].nic);
	if (R->fab) {
		struct dvx_sim_db_fault f;

		dvx_sim_db_faults(R->fab, &f);
		dvx_sim_fini(R->fab);
	}
	free(R->fab_mem);
}

int replay_run(const uint8_t *buf, size_t len, unsigned flags, FILE *out,
	       struct replay_stats *st)
{
	struct replay *R;
	size_t off = DVX_TRACE_FILE_HDR_BYTES;
	struct r_rec r;
	int rc = 0, more;

	if (st)
		memset(st, 0, sizeof(*st));
	if (len < DVX_TRACE_FILE_HDR_BYTES || memcmp(buf, DVX_TRACE_MAGIC, 8)) {
		fprintf(out, "not a dvx trace (no %s header)\n", DVX_TRACE_MAGIC);
		return REPLAY_BAD_TRACE;
	}
	if (le32(buf + 8) != DVX_TRACE_VERSION || le32(buf + 12) != DVX_TRACE_FILE_HDR_BYTES) {
		fprintf(out, "trace format version %u, this replay reads version %u\n",
			le32(buf + 8), DVX_TRACE_VERSION);
		return REPLAY_BAD_TRACE;
	}
	R = calloc(1, sizeof(*R));
	if (!R)
		return REPLAY_NO_SIM;
	R->out = out;
	R->flags = flags;
	if (prescan(R, buf, len)) {
		fprintf(out, "the trace is cut short or has a malformed record\n");
		free(R);
		return REPLAY_BAD_TRACE;
	}
	if (!(flags & REPLAY_DUMP) && sim_open(R)) {
		fprintf(out, "the software NIC could not be set up\n");
		cleanup(R);
		free(R);
		return REPLAY_NO_SIM;
	}
	while (!rc && (more = next_rec(buf, len, &off, &r)) > 0) {
		R->st.records++;
		if (flags & (REPLAY_DUMP | REPLAY_VERBOSE))
			print_rec(out, &r);
		if (flags & REPLAY_DUMP)
			continue;
		switch (r.type) {
		case DVX_TRACE_REC_CALL:
			rc = rec_call(R, &r);
			break;
		case DVX_TRACE_REC_DOORBELL:
			rc = r.len < DVX_TRACE_DB_BYTES ? REPLAY_BAD_TRACE : rec_doorbell(R, &r);
			break;
		case DVX_TRACE_REC_RECV:
			rc = r.len < DVX_TRACE_RECV_BYTES ? REPLAY_BAD_TRACE : rec_recv(R, &r);
			break;
		case DVX_TRACE_REC_CQE:
			rc = rec_cqe(R, &r);
			break;
		default:	/* a newer record kind: skipped */
			break;
		}
		if (rc == REPLAY_BAD_TRACE)
			fprintf(out, "record #%llu is malformed\n", (unsigned long long)r.seq);
	}
	if (!rc && more < 0) {
		fprintf(out, "the trace is cut short after record %llu\n",
			(unsigned long long)R->st.records);
		rc = REPLAY_BAD_TRACE;
	}
	if (!rc && !(flags & REPLAY_DUMP))
		rc = at_end(R);
	if (st)
		*st = R->st;
	if (!(flags & REPLAY_DUMP))
		cleanup(R);
	free(R);
	return rc;
}
