// SPDX-License-Identifier: MIT
/*
 * tests/fuzz/lf/sim_cmd.c - libFuzzer harness: the software NIC's command mailboxes
 * (hal/sim ctrl.c and ops.c), through the hal entries the NIC objects use for commands:
 * dvx_hal_devx_cmd(), dvx_hal_obj_create(), _modify(), _query() and _destroy().
 *
 * Feeds: a script of commands to one software NIC, made fresh for every input (so ids
 * and the answer to an input never depend on the inputs before it) with a PD, a UAR, the
 * EQ and a 256 KiB umem a command can name. Each command is 7 bytes and its mailbox:
 *   op       b % 5: 0 devx_cmd, 1 obj_create, 2 obj_modify, 3 obj_query, 4 obj_destroy
 *   sel      [2:0] the object slot (of 8) the command is about; [6:4] for a create_qp
 *            the slot whose CQ the ids fix-up names as cqn_snd and cqn_rcv
 *   fix      bit 0: for create_cq / create_qp, write the real UAR page, EQN, PD, umem
 *            ids and CQNs over the mailbox's fields (offsets and sizes stay the
 *            input's); bit 1: write the slot's object number at dw@8 (modify, query)
 *   inlen    16 bits, taken modulo 4400 (also under the hal's 8-byte minimum)
 *   outlen   16 bits, taken modulo 4400 (also under 16 and under every answer's size)
 *   in       inlen bytes of input mailbox (zero-filled when the input is short)
 * Both mailboxes are heap blocks of exactly their length, so a read or write past them
 * is an ASan report; at most 48 commands per input.
 *
 * Checks: every call answers 0, -EINVAL or -EREMOTEIO; mailboxes under the hal's
 * minimum are -EINVAL with the output untouched and no command counted; 0 comes with
 * status 0 in the output and no refusal counted; -EREMOTEIO with a non-zero status the
 * PRM names, recorded in the handle's diag with the command's opcode, and exactly one
 * refusal counted by the NIC (dvx_sim_get_stats()); -EINVAL with no refusal counted; the
 * input mailbox is only read; a create that succeeds fills the object (its id is the
 * number at dw@8 of the output), a destroy that succeeds empties it and one that fails
 * leaves it; commands on an empty slot are -EINVAL. At the end every live object is
 * destroyed (QPs first), which must succeed, the NIC counts no live CQ or QP, and the
 * UAR, PD, umem, handle and fabric are released without error.
 */
#include <dvx/hal/nic.h>
#include <dvx/mlx5/caps.h>
#include <dvx/mlx5/cmd.h>
#include <dvx/hal/sim.h>

#include "lf.h"

#define NOBJ 8
#define MAX_CMDS 48
#define MAX_MBOX 4400u
#define UMEM_BYTES (256u << 10)

struct world {
	void *storage;
	struct dvx_sim_fabric *fab;
	struct dvx_hal_nic dev;
	struct dvx_hal_pd pd;
	struct dvx_hal_uar uar;
	struct dvx_hal_umem umem;
	uint32_t eqn;
	uint8_t *mem;
	struct dvx_hal_obj obj[NOBJ];
	uint8_t is_qp[NOBJ];
};

static void world_init(struct world *w)
{
	struct dvx_sim_fabric_cfg fc;
	struct dvx_sim_nic_cfg nc;
	struct dvx_hal_umem_req req;
	size_t len;

	memset(w, 0, sizeof(*w));
	dvx_sim_fabric_cfg_default(&fc);
	fc.max_nics = 1;
	fc.max_qps = 4;		/* small tables: the limits are reachable too */
	fc.max_cqs = 4;
	fc.max_mrs = 2;
	fc.max_umems = 2;
	fc.max_uars = 2;
	fc.max_pds = 2;
	fc.max_dmabufs = 1;
	fc.max_gpus = 0;
	fc.max_gpu_mems = 0;
	len = dvx_sim_fabric_mem_size(&fc);
	LF_CHECK(len > 0);
	w->storage = malloc(len);
	LF_CHECK(w->storage != NULL);
	LF_CHECK(dvx_sim_fabric_init(w->storage, len, &fc, &w->fab) == 0);
	dvx_sim_nic_cfg_default(&nc, 0);
	LF_CHECK(dvx_sim_add_nic(w->fab, &nc) == 0);
	LF_CHECK(dvx_hal_nic_open(dvx_sim_hal(w->fab), "sim_0", &w->dev) == 0);
	LF_CHECK(dvx_hal_pd_alloc(&w->dev, &w->pd) == 0);
	LF_CHECK(dvx_hal_uar_alloc(&w->dev, DVX_UAR_NC_DEDICATED, &w->uar) == 0);
	LF_CHECK(dvx_hal_eqn_query(&w->dev, 0, &w->eqn) == 0);
	w->mem = aligned_alloc(4096, UMEM_BYTES);
	LF_CHECK(w->mem != NULL);
	memset(w->mem, 0, UMEM_BYTES);
	memset(&req, 0, sizeof(req));
	req.addr = w->mem;
	req.len = UMEM_BYTES;
	req.access = DVX_ACCESS_LOCAL_WRITE;
	req.dmabuf_fd = -1;
	req.pgsz_bitmap = 4096;	/* 4 KiB pages, as dvx registers: rings at any 64 B */
	LF_CHECK(dvx_hal_umem_reg(&w->dev, &req, &w->umem) == 0);
}

static void world_fini(struct world *w)
{
	struct dvx_sim_stats st;
	int pass, i;

	/* everything still alive goes: QPs before the CQs they use */
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < NOBJ; i++)
			if (w->obj[i].priv && w->is_qp[i] == !pass)
				LF_CHECK(dvx_hal_obj_destroy(&w->dev, &w->obj[i]) == 0);
	LF_CHECK(dvx_sim_get_stats(w->fab, &st) == 0);
	LF_CHECK(st.live[DVX_SIM_LIVE_CQ] == 0 && st.live[DVX_SIM_LIVE_QP] == 0);
	LF_CHECK(dvx_hal_umem_dereg(&w->dev, &w->umem) == 0);
	LF_CHECK(dvx_hal_uar_free(&w->dev, &w->uar) == 0);
	LF_CHECK(dvx_hal_pd_free(&w->dev, &w->pd) == 0);
	LF_CHECK(dvx_hal_nic_close(&w->dev) == 0);
	LF_CHECK(dvx_sim_get_stats(w->fab, &st) == 0);
	for (i = 0; i < DVX_SIM_LIVE_GPU_MEM; i++)
		LF_CHECK(st.live[i] == 0);
	LF_CHECK(dvx_sim_fini(w->fab) == 0);
	free(w->mem);
	free(w->storage);
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* the ids fix-up: the world's real numbers over a create mailbox's id fields */
static void fix_ids(struct world *w, uint8_t *in, size_t inlen, unsigned cq_slot)
{
	uint16_t op;
	uint32_t cqn = w->obj[cq_slot].priv && !w->is_qp[cq_slot] ? w->obj[cq_slot].id : 0;

	if (inlen < DVX_MLX5_CREATE_QP_IN_BYTES)
		return;
	op = (uint16_t)(in[0] << 8 | in[1]);
	if (op == DVX_MLX5_CMD_CREATE_CQ) {
		dvx_mlx5_set(DVX_MLX5_CQC_IN(in), DVX_MLX5_CQC_UAR_PAGE, w->uar.page_id);
		dvx_mlx5_set(DVX_MLX5_CQC_IN(in), DVX_MLX5_CQC_C_EQN, w->eqn);
		dvx_mlx5_set(DVX_MLX5_CQC_IN(in), DVX_MLX5_CQC_DBR_UMEM_ID, w->umem.id);
		dvx_mlx5_set(in, DVX_MLX5_CREATE_CQ_IN_CQ_UMEM_ID, w->umem.id);
	} else if (op == DVX_MLX5_CMD_CREATE_QP) {
		dvx_mlx5_set(DVX_MLX5_QPC_IN(in), DVX_MLX5_QPC_PD, w->pd.pdn);
		dvx_mlx5_set(DVX_MLX5_QPC_IN(in), DVX_MLX5_QPC_UAR_PAGE, w->uar.page_id);
		dvx_mlx5_set(DVX_MLX5_QPC_IN(in), DVX_MLX5_QPC_CQN_SND, cqn);
		dvx_mlx5_set(DVX_MLX5_QPC_IN(in), DVX_MLX5_QPC_CQN_RCV, cqn);
		dvx_mlx5_set(DVX_MLX5_QPC_IN(in), DVX_MLX5_QPC_DBR_UMEM_ID, w->umem.id);
		dvx_mlx5_set(in, DVX_MLX5_CREATE_QP_IN_WQ_UMEM_ID, w->umem.id);
	}
}

static void one_command(struct world *w, struct lf_in *s)
{
	unsigned op = lf_u8(s) % 5, sel = lf_u8(s), fix = lf_u8(s), slot = sel % NOBJ;
	size_t inlen = lf_u16(s) % MAX_MBOX, outlen = lf_u16(s) % MAX_MBOX, i;
	uint8_t *in = malloc(inlen ? inlen : 1), *out = malloc(outlen ? outlen : 1), *copy;
	struct dvx_hal_obj *obj = &w->obj[slot], fresh;
	struct dvx_sim_stats before, after;
	int r, was_live = obj->priv != NULL, short_mbox = inlen < 8 || outlen < 16;
	uint16_t opcode;

	LF_CHECK(in && out);
	lf_bytes(s, in, inlen);
	if ((fix & 1) && (op == 1))
		fix_ids(w, in, inlen, (sel >> 4) % NOBJ);
	if ((fix & 2) && inlen >= 12 && obj->priv)
		dvx_mlx5_set(in, DVX_MLX5_MODIFY_QP_IN_QPN, obj->id);
	copy = malloc(inlen ? inlen : 1);
	LF_CHECK(copy != NULL);
	memcpy(copy, in, inlen);
	memset(out, 0xa5, outlen);
	opcode = inlen >= 2 ? (uint16_t)(in[0] << 8 | in[1]) : 0;
	LF_CHECK(dvx_sim_get_stats(w->fab, &before) == 0);

	switch (op) {
	case 0:
		r = dvx_hal_devx_cmd(&w->dev, in, inlen, out, outlen);
		break;
	case 1:
		if (was_live) {		/* the slot's object stays; make another elsewhere */
			memset(&fresh, 0, sizeof(fresh));
			obj = &fresh;
		}
		r = dvx_hal_obj_create(&w->dev, in, inlen, out, outlen, obj);
		break;
	case 2:
		r = dvx_hal_obj_modify(&w->dev, obj, in, inlen, out, outlen);
		break;
	case 3:
		r = dvx_hal_obj_query(&w->dev, obj, in, inlen, out, outlen);
		break;
	default:
		r = dvx_hal_obj_destroy(&w->dev, obj);
		short_mbox = 0;		/* destroy takes no mailbox */
		break;
	}
	LF_CHECK(dvx_sim_get_stats(w->fab, &after) == 0);
	LF_CHECK(!memcmp(in, copy, inlen));		/* the input mailbox is only read */
	if (lf_verbose())
		fprintf(stderr, "sim-cmd: %s slot %u opcode 0x%03x in %zu out %zu: %d status 0x%02x\n",
			(const char *[]){ "devx_cmd", "create", "modify", "query", "destroy" }[op],
			slot, opcode, inlen, outlen, r, r == -EREMOTEIO ? w->dev.diag.status : 0);

	LF_CHECK(r == 0 || r == -EINVAL || r == -EREMOTEIO);
	if (short_mbox) {
		LF_CHECK(r == -EINVAL);
		LF_CHECK(after.cmds == before.cmds);
		for (i = 0; i < outlen; i++)
			LF_CHECK(out[i] == 0xa5);
	} else if (r == -EREMOTEIO) {
		uint8_t status = op == 4 ? w->dev.diag.status : out[0];

		LF_CHECK(status != 0);
		LF_CHECK(strcmp(dvx_mlx5_cmd_status_name(status), "UNKNOWN") != 0);
		LF_CHECK(w->dev.diag.status == status && w->dev.diag.err == -EREMOTEIO);
		if (op != 4)
			LF_CHECK(w->dev.diag.cmd_opcode == opcode &&
				 w->dev.diag.syndrome == be32(out + 4));
		LF_CHECK(after.cmd_errors == before.cmd_errors + 1);
	} else {
		LF_CHECK(after.cmd_errors == before.cmd_errors);
		if (r == 0 && op != 4)
			LF_CHECK(out[0] == 0);
	}

	switch (op) {
	case 1:
		if (r == 0) {
			LF_CHECK(obj->priv != NULL && obj->id == (be32(out + 8) & 0xffffff));
			LF_CHECK(after.cmds == before.cmds + 1);
			if (obj == &fresh) {	/* no room for it: it goes again at once */
				LF_CHECK(dvx_hal_obj_destroy(&w->dev, obj) == 0);
			} else {
				w->is_qp[slot] = opcode == DVX_MLX5_CMD_CREATE_QP;
				LF_CHECK(opcode == DVX_MLX5_CMD_CREATE_QP ||
					 opcode == DVX_MLX5_CMD_CREATE_CQ);
			}
		} else if (obj == &w->obj[slot]) {
			LF_CHECK(obj->priv == NULL);
		}
		break;
	case 2:
	case 3:
	case 4:
		if (!was_live)
			LF_CHECK(r == -EINVAL);
		if (op == 4)
			LF_CHECK((obj->priv == NULL) == (r == 0 || !was_live));
		break;
	default:
		break;
	}
	free(copy);
	free(out);
	free(in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lf_in s = { data, size };
	struct world w;
	int n;

	world_init(&w);
	for (n = 0; n < MAX_CMDS && s.n; n++)
		one_command(&w, &s);
	world_fini(&w);
	return 0;
}

/* ---- seeds: the builders' mailboxes, a CQ and a QP taken through their lives ---- */

static uint8_t script[16384];
static size_t slen;

static void cmd(unsigned op, unsigned sel, unsigned fix, const void *in, size_t inlen,
		size_t outlen)
{
	LF_CHECK(slen + 7 + inlen <= sizeof(script));
	script[slen++] = (uint8_t)op;
	script[slen++] = (uint8_t)sel;
	script[slen++] = (uint8_t)fix;
	script[slen++] = (uint8_t)inlen;
	script[slen++] = (uint8_t)(inlen >> 8);
	script[slen++] = (uint8_t)outlen;
	script[slen++] = (uint8_t)(outlen >> 8);
	memcpy(script + slen, in, inlen);
	slen += inlen;
}

static void write_seeds(void)
{
	static uint8_t in[DVX_MLX5_CREATE_QP_IN_BYTES];
	struct dvx_mlx5_rst2init_cfg ri;
	struct dvx_mlx5_rtr2rts_cfg rr;
	struct dvx_mlx5_cq_cfg ca;
	struct dvx_mlx5_qp_cfg qa;
	struct world w;
	uint32_t cqn, qpn;
	unsigned t;

	/* the numbers a fresh world hands out, as every input sees them */
	world_init(&w);
	cqn = 0;	/* the fix-up writes the CQN; the seeds leave it to it */

	/* QUERY_HCA_CAP of every type */
	slen = 0;
	for (t = 0; t < 5; t++) {
		static const unsigned types[] = { DVX_MLX5_CAP_TYPE_GENERAL, DVX_MLX5_CAP_TYPE_ATOMIC,
						  DVX_MLX5_CAP_TYPE_ROCE, DVX_MLX5_CAP_TYPE_GENERAL_2,
						  DVX_MLX5_CAP_TYPE_ODP };

		dvx_mlx5_query_hca_cap_in(in, types[t], 1);
		cmd(0, 0, 0, in, DVX_MLX5_QUERY_HCA_CAP_IN_BYTES, DVX_MLX5_QUERY_HCA_CAP_OUT_BYTES);
	}
	lf_seed("query-hca-cap", script, slen);

	/* a CQ in slot 0, a QP over it in slot 1, through every state, then gone */
	slen = 0;
	memset(&ca, 0, sizeof(ca));
	ca.log_cq_size = 6;
	ca.uar_page = w.uar.page_id;
	ca.eqn = w.eqn;
	ca.cq_umem_id = w.umem.id;
	ca.cq_umem_offset = 0;
	ca.dbr_umem_id = w.umem.id;
	ca.dbr_offset = 128u << 10;
	LF_CHECK(dvx_mlx5_create_cq_in(in, &ca) == 0);
	cmd(1, 0, 1, in, DVX_MLX5_CREATE_CQ_IN_BYTES, 16);
	memset(&qa, 0, sizeof(qa));
	qa.pdn = w.pd.pdn;
	qa.uar_page = w.uar.page_id;
	qa.cqn_snd = cqn;
	qa.cqn_rcv = cqn;
	qa.wq_umem_id = w.umem.id;
	qa.wq_umem_offset = 64u << 10;
	qa.dbr_umem_id = w.umem.id;
	qa.dbr_offset = (128u << 10) + 64;
	qa.log_sq_size = 6;
	qa.rq_type = 3;		/* zero-length RQ */
	qa.cd_master = 1;
	LF_CHECK(dvx_mlx5_create_qp_in(in, &qa) == 0);
	cmd(1, 1, 1, in, DVX_MLX5_CREATE_QP_IN_BYTES, 16);
	qpn = 0;	/* the target fix-up writes the QPN */
	memset(&ri, 0, sizeof(ri));
	ri.rre = ri.rwe = ri.rae = 1;
	ri.atomic_mode = 3;
	ri.vhca_port_num = 1;
	LF_CHECK(dvx_mlx5_rst2init_qp_in(in, qpn, &ri) == 0);
	cmd(2, 1, 2, in, DVX_MLX5_MODIFY_QP_IN_BYTES, 16);
	LF_CHECK(dvx_mlx5_init2rtr_loopback_qp_in(in, qpn, 1, 5) == 0);
	cmd(2, 1, 2, in, DVX_MLX5_MODIFY_QP_IN_BYTES, 16);
	memset(&rr, 0, sizeof(rr));
	rr.retry_count = 7;
	rr.rnr_retry = 7;
	rr.ack_timeout = 14;
	LF_CHECK(dvx_mlx5_rtr2rts_qp_in(in, qpn, &rr) == 0);
	cmd(2, 1, 2, in, DVX_MLX5_MODIFY_QP_IN_BYTES, 16);
	LF_CHECK(dvx_mlx5_query_qp_in(in, qpn) == 0);
	cmd(3, 1, 2, in, DVX_MLX5_QUERY_QP_IN_BYTES, DVX_MLX5_QUERY_QP_OUT_BYTES);
	LF_CHECK(dvx_mlx5_query_cq_in(in, cqn) == 0);
	cmd(3, 0, 2, in, DVX_MLX5_QUERY_CQ_IN_BYTES, DVX_MLX5_QUERY_CQ_OUT_BYTES);
	LF_CHECK(dvx_mlx5_qp_2err_in(in, qpn) == 0);
	cmd(2, 1, 2, in, DVX_MLX5_QP_2ERR_IN_BYTES, 16);
	LF_CHECK(dvx_mlx5_qp_2rst_in(in, qpn) == 0);
	cmd(2, 1, 2, in, DVX_MLX5_QP_2RST_IN_BYTES, 16);
	cmd(4, 0, 0, in, 0, 0);	/* the CQ first: refused, the QP uses it */
	cmd(4, 1, 0, in, 0, 0);
	cmd(4, 0, 0, in, 0, 0);
	lf_seed("cq-qp-lifecycle", script, slen);

	/* the same CQ, created until the table is full */
	slen = 0;
	LF_CHECK(dvx_mlx5_create_cq_in(in, &ca) == 0);
	for (t = 0; t < 6; t++)
		cmd(1, t, 1, in, DVX_MLX5_CREATE_CQ_IN_BYTES, 16);
	lf_seed("cq-exceed-limit", script, slen);
	world_fini(&w);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	lf_seed_mode(write_seeds);
	return 0;
}
