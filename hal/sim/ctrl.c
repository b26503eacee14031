// SPDX-License-Identifier: MIT
/*
 * hal/sim/ctrl.c - the sim's DEVX commands: QUERY_HCA_CAP, CREATE/DESTROY/QUERY of
 * CQs and QPs, and the QP state transitions, decoded from the mailbox bytes.
 *
 * Every field position is the one docs/prm.md section 1 gives ("dw@B [hi:lo]",
 * absolute in the command mailbox), read with the sim's own accessors (ctrl.h). What
 * firmware refuses, the sim refuses with a PRM status and a syndrome of its own
 * (enum dvx_sim_syndrome) in the output mailbox, so the hal's status translation runs
 * as it does for hardware. What the kernel's DEVX layer refuses before the device sees
 * a command (an object command through the general-command path, a modify naming
 * another object) is a plain -EINVAL, as rdma-core reports it.
 *
 * All functions run with the fabric lock held.
 */
#include <errno.h>
#include <string.h>

#include "ctrl.h"
#include "../capmodel.h"

/* ---- helpers ------------------------------------------------------------------- */

static int refuse(struct sim_nic *nic, void *out, uint8_t status, uint32_t syndrome)
{
	uint8_t *o = out;

	memset(o, 0, 16);
	o[0] = status;
	dvx_put_be32(o + 4, syndrome);
	nic->fab->cmd_errors++;
	return 1;
}

#define REFUSE(st, synd) return refuse(nic, out, SIM_ST_##st, DVX_SIM_SYND_##synd)

static void answer(void *out, size_t outlen, size_t n)
{
	memset(out, 0, outlen < n ? outlen : n);
}

static const struct dvx_sim_port_cfg *port_cfg(const struct sim_nic *nic, unsigned port)
{
	return port >= 1 && port <= nic->cfg.nports ? &nic->cfg.port[port - 1] : NULL;
}

/*
 * A queue of @bytes at @off in umem @u: the offset aligned to @align both as an offset
 * and as an address, and the whole range inside the umem. Returns 0 or the syndrome.
 */
static uint32_t check_range(const struct sim_umem *u, uint64_t off, uint64_t bytes,
			    uint64_t align)
{
	if ((off & (align - 1)) || (((uintptr_t)u->base + off) & (align - 1)))
		return DVX_SIM_SYND_ALIGN;
	if (off > u->len || bytes > u->len - off)
		return DVX_SIM_SYND_UMEM_RANGE;
	return 0;
}

/*
 * A ring at @off in umem @u: the device reaches it as one of the umem's pages plus a
 * page_offset of 6 bits in 64-byte units (cqc/qpc page_offset, prm 1.5.1), so the ring
 * must start at a multiple of 64 B less than 4 KiB into its page. With 4 KiB pages
 * every 64 B offset is reachable; with larger pages only those near a page's start
 * (UCX bounds its pages to 4 KiB for this; the kernel's DEVX comment says the page
 * size bounds object placement). Then its length and alignment (check_range()).
 */
static uint32_t check_ring(const struct sim_umem *u, uint64_t off, uint64_t bytes)
{
	uint32_t synd = check_range(u, off, bytes, SIM_RING_ALIGN);

	if (!synd && (u->page_off + off) % u->page >= SIM_RING_ALIGN << 6)
		return DVX_SIM_SYND_PAGE_OFFSET;
	return synd;
}

/* ---- QUERY_HCA_CAP ------------------------------------------------------------- */

void dvx_sim_caps_build(struct sim_nic *nic)
{
	const struct dvx_sim_nic_cfg *c = &nic->cfg;
	/* the pages come from the hal's one builder (hal/capmodel.c), shared with the
	 * mock's default device; the sim's decoders below stay its own */
	struct dvx_hal_cap_model m = {
		.flags = (c->port[0].link_layer == DVX_LINK_LAYER_ETHERNET ?
			  DVX_HAL_CAP_F_ETH : 0) |
			 (c->cd ? DVX_HAL_CAP_F_CD : 0) | (c->atomic ? DVX_HAL_CAP_F_ATOMIC : 0) |
			 (c->atomic_be_only ? DVX_HAL_CAP_F_ATOMIC_BE : 0) |
			 (c->force_loopback ? DVX_HAL_CAP_F_LOOPBACK : 0) |
			 (c->cq_oi ? DVX_HAL_CAP_F_CQ_OI : 0) | (c->bf ? DVX_HAL_CAP_F_BF : 0),
		.nports = c->nports, .ts_cap = c->ts_cap,
		.log_max_qp_sz = c->log_max_qp_sz, .log_max_qp = c->log_max_qp,
		.log_max_cq_sz = c->log_max_cq_sz, .log_max_msg = c->log_max_msg,
		.log_max_ra_req_qp = c->log_max_ra_req_qp,
		.log_max_ra_res_qp = c->log_max_ra_res_qp, .log_max_pd = c->log_max_pd,
		.log_bf_reg_size = DVX_SIM_LOG_BF_REG_SIZE,
		.max_wqe_sz_sq = c->max_wqe_sz_sq, .max_wqe_sz_rq = c->max_wqe_sz_rq,
	};

	dvx_hal_cap_page(&m, DVX_HAL_CAP_GENERAL, nic->cap_general);
	dvx_hal_cap_page(&m, DVX_HAL_CAP_ATOMIC, nic->cap_atomic);
	dvx_hal_cap_page(&m, DVX_HAL_CAP_ROCE, nic->cap_roce);
	dvx_hal_cap_page(&m, DVX_HAL_CAP_GENERAL_2, nic->cap_general2);
}

static int query_hca_cap(struct sim_nic *nic, const uint8_t *in, size_t inlen, void *out,
			 size_t outlen)
{
	unsigned type;
	const uint8_t *page;

	if (inlen < 16)
		REFUSE(BAD_INPUT_LEN, INLEN);
	if (outlen < SIM_CAP_OUT_BYTES)
		REFUSE(BAD_OUTPUT_LEN, OUTLEN);
	type = sim_get(in, 4, 15, 0) >> 1;
	switch (type) {
	case SIM_CAP_GENERAL:
		page = nic->cap_general;
		break;
	case SIM_CAP_ATOMIC:
		page = nic->cap_atomic;
		break;
	case SIM_CAP_ROCE:
		page = nic->cap_roce;
		break;
	case SIM_CAP_GENERAL_2:
		page = nic->cap_general2;
		break;
	default:
		REFUSE(BAD_PARAM, BAD_OP_MOD);
	}
	answer(out, outlen, SIM_CAP_OUT_BYTES);
	memcpy((uint8_t *)out + SIM_CAP_PAGE_OFF, page, 4096);
	return 0;
}

static bool is_object_cmd(unsigned op)
{
	return (op >= 0x400 && op <= 0x403) || (op >= 0x500 && op <= 0x50f);
}

int dvx_sim_cmd_general(struct sim_nic *nic, const void *in, size_t inlen, void *out,
		    size_t outlen)
{
	unsigned op = dvx_get_be16(in);

	nic->fab->cmds++;
	if (op == SIM_CMD_QUERY_HCA_CAP)
		return query_hca_cap(nic, in, inlen, out, outlen);
	if (is_object_cmd(op))
		return -EINVAL;	/* DEVX: object commands go through the object calls */
	REFUSE(BAD_OP, BAD_OPCODE);
}

/* ---- CQs ----------------------------------------------------------------------- */

static uint32_t count_cqs(const struct sim_nic *nic)
{
	uint32_t i, n = 0;

	for (i = 0; i < nic->fab->cfg.max_cqs; i++)
		n += nic->cqs[i].cqn != 0;
	return n;
}

static int create_cq(struct sim_nic *nic, const uint8_t *in, size_t inlen, void *out,
		     size_t outlen, struct dvx_hal_obj *obj)
{
	const struct dvx_sim_nic_cfg *c = &nic->cfg;
	uint32_t log, uar, eqn, slot, max, synd;
	struct sim_umem *ring, *dbr;
	uint64_t ring_off, dbr_off;
	struct sim_cq *cq;

	if (inlen < SIM_CQ_IN_BYTES)
		REFUSE(BAD_INPUT_LEN, INLEN);
	log = sim_get(in, 28, 28, 24);
	uar = sim_get(in, 28, 23, 0);
	eqn = sim_get(in, 36, 7, 0);
	dbr_off = sim_get64(in, 72);
	ring_off = sim_get64(in, 80);
	if (sim_get(in, 16, 23, 21) != 0)	/* cqe_sz: 128-byte CQEs */
		REFUSE(BAD_PARAM, NOT_MODELLED);
	/* With the ring in a umem the firmware takes the page size from the umem
	 * (prm 1.5.1): log_page_size is not read (NVSHMEM writes 4, DPDK log2(page) - 12,
	 * both run); a page_offset no source sends there is refused, not guessed at */
	if (sim_get(in, 24, 11, 6))		/* page_offset */
		REFUSE(BAD_PARAM, FIELD);
	if (sim_get(in, 16, 14, 14))		/* cqe_comp_en: cap cqe_compression 0 */
		REFUSE(BAD_PARAM, NO_CAP);
	if (sim_get(in, 16, 17, 17) && !c->cq_oi)
		REFUSE(BAD_PARAM, NO_CAP);
	if (log > c->log_max_cq_sz)
		REFUSE(BAD_PARAM, LOG_SIZE);
	if (!dvx_sim_uar_find(nic, uar))
		REFUSE(BAD_RESOURCE, BAD_UAR);
	if (eqn < DVX_SIM_EQN_BASE || eqn >= DVX_SIM_EQN_BASE + DVX_SIM_NUM_EQS)
		REFUSE(BAD_RESOURCE, BAD_EQ);
	/* the kernel forces cq_umem_valid and dbr_umem_valid (prm 1.1) */
	ring = dvx_sim_umem_find(nic, sim_get(in, 88, 31, 0));
	dbr = dvx_sim_umem_find(nic, sim_get(in, 20, 31, 0));
	if (!ring || !dbr)
		REFUSE(BAD_RESOURCE, BAD_UMEM);
	synd = check_ring(ring, ring_off, 64ull << log);
	if (!synd)
		synd = check_range(dbr, dbr_off, 8, 8);
	if (synd)
		return refuse(nic, out, SIM_ST_BAD_PARAM, synd);
	max = nic->fab->cfg.max_cqs;
	if (c->log_max_cq < 31 && (1u << c->log_max_cq) < max)
		max = 1u << c->log_max_cq;
	if (count_cqs(nic) >= max)
		REFUSE(EXCEED_LIM, LIMIT);
	for (slot = 0; nic->cqs[slot].cqn; slot++)
		;
	cq = &nic->cqs[slot];
	memset(cq, 0, sizeof(*cq));
	cq->cqn = dvx_sim_make_id(nic, slot, nic->fab->cfg.max_cqs, 24);
	cq->log_sz = log;
	cq->ring = ring->base + ring_off;
	cq->dbrec = dbr->base + dbr_off;
	cq->uar_page = uar;
	cq->eqn = eqn;
	cq->oi = (uint8_t)sim_get(in, 16, 17, 17);
	cq->cc = (uint8_t)sim_get(in, 16, 20, 20);
	cq->nic = nic;
	memcpy(cq->cqc, in + SIM_CQC_OFF, SIM_CQC_BYTES);
	sim_set(cq->cqc, 0, 31, 28, 0);		/* status */
	cq->ring_umem = ring;
	cq->dbr_umem = dbr;
	ring->users++;
	dbr->users++;
	answer(out, outlen, 16);
	sim_set(out, 8, 23, 0, cq->cqn);
	obj->priv = cq;
	obj->id = cq->cqn;
	obj->cmd_opcode = SIM_CMD_CREATE_CQ;
	return 0;
}

static int query_cq(struct sim_nic *nic, struct sim_cq *cq, const uint8_t *in, size_t inlen,
		    void *out, size_t outlen)
{
	uint32_t ci;

	if (inlen < 16)
		REFUSE(BAD_INPUT_LEN, INLEN);
	if (outlen < SIM_QUERY_OUT_BYTES)
		REFUSE(BAD_OUTPUT_LEN, OUTLEN);
	answer(out, outlen, SIM_QUERY_OUT_BYTES);
	memcpy((uint8_t *)out + SIM_CQC_OFF, cq->cqc, SIM_CQC_BYTES);
	(void)sim_pull(nic->fab, cq->dbr_umem, cq->dbrec, 4);
	ci = __atomic_load_n((const uint32_t *)(const void *)cq->dbrec, __ATOMIC_ACQUIRE);
	/* status 0x9: CQ overflow (the kernel's MLX5_CQ_STATUS_OVERFLOW) */
	sim_set(out, 16, 31, 28, cq->overrun ? 0x9 : 0);
	sim_set(out, 56, 23, 0, dvx_be32_to_cpu((DVX_FORCE dvx_be32)ci) & 0xffffff);
	sim_set(out, 60, 23, 0, cq->pi & 0xffffff);
	return 0;
}

static int destroy_cq(struct sim_nic *nic, struct sim_cq *cq, void *out)
{
	if (cq->qp_users)
		REFUSE(BAD_RES_STATE, CQ_IN_USE);
	cq->ring_umem->users--;
	cq->dbr_umem->users--;
	memset(cq, 0, sizeof(*cq));
	memset(out, 0, 16);
	return 0;
}

/* ---- QPs ----------------------------------------------------------------------- */

static uint32_t count_qps(const struct sim_nic *nic)
{
	uint32_t i, n = 0;

	for (i = 0; i < nic->fab->cfg.max_qps; i++)
		n += nic->qps[i].qpn != 0;
	return n;
}

static int create_qp(struct sim_nic *nic, const uint8_t *in, size_t inlen, void *out,
		     size_t outlen, struct dvx_hal_obj *obj)
{
	const struct dvx_sim_nic_cfg *c = &nic->cfg;
	uint32_t log_sq, log_rq = 0, stride = 0, rq_type, cd, cqn_rcv, slot, max, synd;
	uint64_t rq_bytes = 0, sq_bytes, wq_off, dbr_off;
	struct sim_cq *cq_snd, *cq_rcv = NULL;
	struct sim_umem *wq, *dbr;
	struct sim_qp *qp;

	if (inlen < SIM_QP_IN_BYTES)
		REFUSE(BAD_INPUT_LEN, INLEN);
	if (sim_get(in, 24, 23, 16) != 0)	/* st: only RC is modelled */
		REFUSE(BAD_PARAM, NOT_MODELLED);
	if (sim_get(in, 32, 15, 15))		/* no_sq */
		REFUSE(BAD_PARAM, NOT_MODELLED);
	if (sim_get(in, 168, 11, 6))		/* page_offset: as for CQs (create_cq) */
		REFUSE(BAD_PARAM, FIELD);
	if (sim_get(in, 32, 7, 6) == 3)		/* ts_format 3 is reserved */
		REFUSE(BAD_PARAM, FIELD);
	/* a format the device does not have: FREE_RUNNING on a real-time-only device,
	 * REAL_TIME on a free-running-only one (DEFAULT is always one it has) */
	if ((sim_get(in, 32, 7, 6) == 0 && c->ts_cap == 1) ||
	    (sim_get(in, 32, 7, 6) == 2 && c->ts_cap == 0))
		REFUSE(BAD_PARAM, NO_CAP);
	if (sim_get(in, 40, 31, 30) != 0)	/* send_dbr_mode: no_dbr_ext cap is 0 */
		REFUSE(BAD_PARAM, NO_CAP);
	if (sim_get(in, 32, 28, 24) > c->log_max_msg)
		REFUSE(BAD_PARAM, LOG_SIZE);
	log_sq = sim_get(in, 32, 14, 11);
	if (log_sq > c->log_max_qp_sz)
		REFUSE(BAD_PARAM, LOG_SIZE);
	cd = sim_get(in, 168, 2, 0);		/* cd_slave_receive, cd_slave_send, cd_master */
	if (cd && !c->cd)
		REFUSE(BAD_PARAM, NO_CAP);
	if (!dvx_sim_pd_find(nic, sim_get(in, 28, 23, 0)))
		REFUSE(BAD_RESOURCE, BAD_PD);
	if (!dvx_sim_uar_find(nic, sim_get(in, 36, 23, 0)))
		REFUSE(BAD_RESOURCE, BAD_UAR);
	cq_snd = dvx_sim_cq_find(nic, sim_get(in, 148, 23, 0));
	if (!cq_snd)
		REFUSE(BAD_RESOURCE, BAD_CQ);
	rq_type = sim_get(in, 196, 26, 24);
	cqn_rcv = sim_get(in, 180, 23, 0);
	switch (rq_type) {
	case 0:		/* regular RQ, ahead of the SQ in the WQ umem */
		log_rq = sim_get(in, 32, 22, 19);
		stride = sim_get(in, 32, 18, 16);
		if (log_rq > c->log_max_qp_sz || (16u << stride) > c->max_wqe_sz_rq)
			REFUSE(BAD_PARAM, LOG_SIZE);
		rq_bytes = (16ull << stride) << log_rq;
		if (rq_bytes < 64)	/* the SQ behind it must start on a WQEBB */
			REFUSE(BAD_PARAM, FIELD);
		cq_rcv = dvx_sim_cq_find(nic, cqn_rcv);
		if (!cq_rcv)
			REFUSE(BAD_RESOURCE, BAD_CQ);
		break;
	case 1:		/* SRQ: the sim has none, so srqn cannot name one */
		REFUSE(BAD_RESOURCE, NOT_MODELLED);
	case 3:		/* zero-length RQ: cqn_rcv unused, but must be real if given */
		if (cqn_rcv) {
			cq_rcv = dvx_sim_cq_find(nic, cqn_rcv);
			if (!cq_rcv)
				REFUSE(BAD_RESOURCE, BAD_CQ);
		}
		break;
	default:
		REFUSE(BAD_PARAM, FIELD);
	}
	/* the kernel forces wq_umem_valid and qpc.dbr_umem_valid (prm 1.1) */
	wq = dvx_sim_umem_find(nic, sim_get(in, 264, 31, 0));
	dbr = dvx_sim_umem_find(nic, sim_get(in, 252, 31, 0));
	if (!wq || !dbr)
		REFUSE(BAD_RESOURCE, BAD_UMEM);
	wq_off = sim_get64(in, 256);
	dbr_off = sim_get64(in, 184);
	sq_bytes = 64ull << log_sq;
	synd = check_ring(wq, wq_off, rq_bytes + sq_bytes);
	if (!synd)
		synd = check_range(dbr, dbr_off, 8, 8);
	if (synd)
		return refuse(nic, out, SIM_ST_BAD_PARAM, synd);
	max = nic->fab->cfg.max_qps;
	if (c->log_max_qp < 31 && (1u << c->log_max_qp) < max)
		max = 1u << c->log_max_qp;
	if (count_qps(nic) >= max)
		REFUSE(EXCEED_LIM, LIMIT);

	for (slot = 0; nic->qps[slot].qpn; slot++)
		;
	qp = &nic->qps[slot];
	memset(qp, 0, sizeof(*qp));
	qp->qpn = dvx_sim_make_id(nic, slot, nic->fab->cfg.max_qps, 24);
	if (slot >= nic->qp_hi)
		nic->qp_hi = slot + 1;
	qp->state = SIM_QPS_RST;
	qp->pdn = sim_get(in, 28, 23, 0);
	qp->uar_page = sim_get(in, 36, 23, 0);
	qp->user_index = sim_get(in, 40, 23, 0);
	qp->cqn_snd = cq_snd->cqn;
	qp->cqn_rcv = cq_rcv ? cq_rcv->cqn : cqn_rcv;
	qp->rq = rq_type == 0 ? wq->base + wq_off : NULL;
	qp->sq = wq->base + wq_off + rq_bytes;
	qp->dbrec = dbr->base + dbr_off;
	qp->log_sq_size = (uint8_t)log_sq;
	qp->log_rq_size = (uint8_t)log_rq;
	qp->log_rq_stride = (uint8_t)stride;
	qp->rq_type = (uint8_t)rq_type;
	qp->cd_master = cd & 1;
	qp->cd_slave_send = (cd >> 1) & 1;
	qp->cd_slave_recv = (cd >> 2) & 1;
	qp->nic = nic;
	memcpy(qp->qpc, in + SIM_QPC_OFF, SIM_QPC_BYTES);
	qp->wq_umem = wq;
	qp->dbr_umem = dbr;
	qp->cq_snd = cq_snd;
	qp->cq_rcv = cq_rcv;
	wq->users++;
	dbr->users++;
	cq_snd->qp_users++;
	if (cq_rcv)
		cq_rcv->qp_users++;
	answer(out, outlen, 16);
	sim_set(out, 8, 23, 0, qp->qpn);
	obj->priv = qp;
	obj->id = qp->qpn;
	obj->cmd_opcode = SIM_CMD_CREATE_QP;
	return 0;
}

static void reset_exec_state(struct sim_qp *qp)
{
	dvx_sim_exec_reset_qp(qp);
	qp->peer = NULL;
	qp->flush_db = 0;
	qp->flush_rq = 0;
}

static void forget_peer(struct sim_fabric *fab, const struct sim_qp *gone)
{
	uint32_t i, k;

	for (i = 0; i < fab->nnics; i++)
		for (k = 0; k < fab->cfg.max_qps; k++)
			if (fab->nics[i].qps[k].peer == gone)
				fab->nics[i].qps[k].peer = NULL;
}

static int destroy_qp(struct sim_nic *nic, struct sim_qp *qp, void *out)
{
	qp->wq_umem->users--;
	qp->dbr_umem->users--;
	qp->cq_snd->qp_users--;
	if (qp->cq_rcv)
		qp->cq_rcv->qp_users--;
	forget_peer(nic->fab, qp);
	memset(qp, 0, sizeof(*qp));
	while (nic->qp_hi && !nic->qps[nic->qp_hi - 1].qpn)
		nic->qp_hi--;
	memset(out, 0, 16);
	return 0;
}

/* the parsed copies of what the stored qpc says (after every modify) */
static void qp_parse(struct sim_qp *qp)
{
	const uint8_t *q = qp->qpc;
	unsigned port;

	qp->pdn = sim_get(q, 28 - SIM_QPC_OFF, 23, 0);
	qp->mtu = (uint8_t)sim_get(q, 32 - SIM_QPC_OFF, 31, 29);
	qp->remote_qpn = sim_get(q, 44 - SIM_QPC_OFF, 23, 0);
	qp->fl = (uint8_t)sim_get(q, 48 - SIM_QPC_OFF, 31, 31);
	qp->rlid = (uint16_t)sim_get(q, 52 - SIM_QPC_OFF, 15, 0);
	memcpy(qp->rgid, q + 64 - SIM_QPC_OFF, 16);
	qp->udp_sport = (uint16_t)sim_get(q, 80 - SIM_QPC_OFF, 15, 0);
	port = sim_get(q, 84 - SIM_QPC_OFF, 23, 16);
	qp->port = (uint8_t)port;
	memcpy(qp->rmac, q + 86 - SIM_QPC_OFF, 6);
	qp->grh = (uint8_t)sim_get(q, 52 - SIM_QPC_OFF, 23, 23);
	if (port_cfg(qp->nic, port) &&
	    port_cfg(qp->nic, port)->link_layer == DVX_LINK_LAYER_ETHERNET)
		qp->grh = 1;		/* RoCE always routes by GID */
	qp->log_sra_max = (uint8_t)sim_get(q, 136 - SIM_QPC_OFF, 23, 21);
	qp->retry_cnt = (uint8_t)sim_get(q, 136 - SIM_QPC_OFF, 18, 16);
	qp->rnr_retry = (uint8_t)sim_get(q, 136 - SIM_QPC_OFF, 15, 13);
	qp->log_rra_max = (uint8_t)sim_get(q, 168 - SIM_QPC_OFF, 23, 21);
	qp->atomic_mode = (uint8_t)sim_get(q, 168 - SIM_QPC_OFF, 19, 16);
	qp->access = (sim_get(q, 168 - SIM_QPC_OFF, 15, 15) ? DVX_ACCESS_REMOTE_READ : 0) |
		     (sim_get(q, 168 - SIM_QPC_OFF, 14, 14) ? DVX_ACCESS_REMOTE_WRITE : 0) |
		     (sim_get(q, 168 - SIM_QPC_OFF, 13, 13) ? DVX_ACCESS_REMOTE_ATOMIC : 0);
	qp->min_rnr_nak = (uint8_t)sim_get(q, 172 - SIM_QPC_OFF, 28, 24);
	qp->ack_timeout = (uint8_t)sim_get(q, 56 - SIM_QPC_OFF, 31, 27);
}

/* copy field @b [hi:lo] of the command @in into the stored qpc */
static void take(struct sim_qp *qp, const uint8_t *in, unsigned b, unsigned hi, unsigned lo)
{
	sim_set(qp->qpc, b - SIM_QPC_OFF, hi, lo, sim_get(in, b, hi, lo));
}

static uint32_t check_atomic_mode(const struct sim_nic *nic, unsigned mode)
{
	if (mode && !nic->cfg.atomic)
		return DVX_SIM_SYND_NO_CAP;
	if (mode > 3)	/* above "up to 8 B": log_max_atomic_size_qp is 3 */
		return DVX_SIM_SYND_FIELD;
	return 0;
}

static uint32_t pkey_tbl_len(const struct dvx_sim_port_cfg *p)
{
	return p->link_layer == DVX_LINK_LAYER_IB ? 128 : 1;
}

static int rst2init(struct sim_nic *nic, struct sim_qp *qp, const uint8_t *in, void *out)
{
	const struct dvx_sim_port_cfg *p = port_cfg(nic, sim_get(in, 84, 23, 16));
	uint32_t synd;

	if (!p || sim_get(in, 48, 15, 0) >= pkey_tbl_len(p))
		REFUSE(BAD_PARAM, PORT);
	synd = check_atomic_mode(nic, sim_get(in, 168, 19, 16));
	if (synd)
		return refuse(nic, out, SIM_ST_BAD_PARAM, synd);
	take(qp, in, 168, 15, 13);	/* rre, rwe, rae */
	take(qp, in, 168, 19, 16);	/* atomic_mode */
	take(qp, in, 84, 23, 16);	/* vhca_port_num */
	take(qp, in, 48, 15, 0);	/* pkey_index */
	take(qp, in, 24, 12, 11);	/* pm_state */
	take(qp, in, 36, 31, 24);	/* counter_set_id */
	qp_parse(qp);
	qp->state = SIM_QPS_INIT;
	return 0;
}

static int init2rtr(struct sim_nic *nic, struct sim_qp *qp, const uint8_t *in, void *out)
{
	const struct dvx_sim_nic_cfg *c = &nic->cfg;
	uint32_t opt = sim_get(in, 16, 31, 0), mtu = sim_get(in, 32, 31, 29);
	unsigned port = sim_get(in, 84, 23, 16);
	const struct dvx_sim_port_cfg *p;
	uint8_t keep[4];
	uint32_t synd;

	if (!port)	/* the port given at RST2INIT stays */
		port = sim_get(qp->qpc, 84 - SIM_QPC_OFF, 23, 16);
	p = port_cfg(nic, port);
	if (!p)
		REFUSE(BAD_PARAM, PORT);
	if (mtu < 1 || mtu > 5)
		REFUSE(BAD_PARAM, FIELD);
	if (sim_get(in, 32, 28, 24) > c->log_max_msg || sim_get(in, 168, 23, 21) > c->log_max_ra_res_qp)
		REFUSE(BAD_PARAM, LOG_SIZE);
	if (sim_get(in, 48, 31, 31) && !c->force_loopback)
		REFUSE(BAD_PARAM, NO_CAP);
	if ((p->link_layer == DVX_LINK_LAYER_ETHERNET || sim_get(in, 52, 23, 23)) &&
	    sim_get(in, 56, 23, 16) >= dvx_sim_gid_tbl_len(nic, port))
		REFUSE(BAD_PARAM, PORT);
	if ((opt & (1u << 4)) && sim_get(in, 48, 15, 0) >= pkey_tbl_len(p))
		REFUSE(BAD_PARAM, PORT);
	if (opt & (1u << 2)) {
		synd = check_atomic_mode(nic, sim_get(in, 168, 19, 16));
		if (synd)
			return refuse(nic, out, SIM_ST_BAD_PARAM, synd);
	}
	take(qp, in, 32, 31, 29);	/* mtu */
	take(qp, in, 32, 28, 24);	/* log_msg_max */
	take(qp, in, 44, 23, 0);	/* remote_qpn */
	take(qp, in, 172, 28, 0);	/* min_rnr_nak, next_rcv_psn */
	take(qp, in, 168, 23, 21);	/* log_rra_max */
	/* the primary address path as a whole, but pkey_index only with its mask bit */
	memcpy(keep, qp->qpc + (48 - SIM_QPC_OFF), 4);
	memcpy(qp->qpc + (48 - SIM_QPC_OFF), in + 48, 44);
	if (!(opt & (1u << 4)))
		sim_copy_field(qp->qpc + (48 - SIM_QPC_OFF), keep, 0, 15, 0);
	sim_set(qp->qpc, 84 - SIM_QPC_OFF, 23, 16, port);
	if (opt & (1u << 1))
		take(qp, in, 168, 15, 15);
	if (opt & (1u << 3))
		take(qp, in, 168, 14, 14);
	if (opt & (1u << 2)) {
		take(qp, in, 168, 13, 13);
		take(qp, in, 168, 19, 16);
	}
	qp_parse(qp);
	qp->next_rcv_psn = sim_get(in, 172, 23, 0);
	qp->state = SIM_QPS_RTR;
	return 0;
}

static int rtr2rts(struct sim_nic *nic, struct sim_qp *qp, const uint8_t *in, void *out)
{
	if (sim_get(in, 136, 23, 21) > nic->cfg.log_max_ra_req_qp)
		REFUSE(BAD_PARAM, LOG_SIZE);
	take(qp, in, 144, 23, 0);	/* next_send_psn */
	take(qp, in, 136, 31, 13);	/* log_ack_req_freq, log_sra_max, retry_count, rnr_retry */
	take(qp, in, 56, 31, 27);	/* ack_timeout */
	qp_parse(qp);
	qp->next_send_psn = sim_get(in, 144, 23, 0);
	qp->rnr_left = qp->rnr_retry;
	qp->state = SIM_QPS_RTS;
	return 0;
}

/* RTS2RTS: only the optional parameters its opt_param_mask names */
static int rts2rts(struct sim_nic *nic, struct sim_qp *qp, const uint8_t *in, void *out)
{
	const uint32_t known = (1u << 1) | (1u << 2) | (1u << 3) | (1u << 6) | (1u << 8) |
			       (1u << 12) | (1u << 13) | (1u << 14);
	uint32_t opt = sim_get(in, 16, 31, 0), synd;

	if (opt & ~known)
		REFUSE(BAD_PARAM, FIELD);
	if ((opt & (1u << 8)) && sim_get(in, 136, 23, 21) > nic->cfg.log_max_ra_req_qp)
		REFUSE(BAD_PARAM, LOG_SIZE);
	if (opt & (1u << 2)) {
		synd = check_atomic_mode(nic, sim_get(in, 168, 19, 16));
		if (synd)
			return refuse(nic, out, SIM_ST_BAD_PARAM, synd);
		take(qp, in, 168, 13, 13);
		take(qp, in, 168, 19, 16);
	}
	if (opt & (1u << 1))
		take(qp, in, 168, 15, 15);
	if (opt & (1u << 3))
		take(qp, in, 168, 14, 14);
	if (opt & (1u << 6))
		take(qp, in, 172, 28, 24);
	if (opt & (1u << 8))
		take(qp, in, 136, 23, 21);
	if (opt & (1u << 12))
		take(qp, in, 136, 18, 16);
	if (opt & (1u << 13))
		take(qp, in, 136, 15, 13);
	if (opt & (1u << 14))
		take(qp, in, 56, 31, 27);
	qp_parse(qp);
	return 0;
}

static int query_qp(struct sim_nic *nic, struct sim_qp *qp, const uint8_t *in, size_t inlen,
		    void *out, size_t outlen)
{
	if (inlen < 16)
		REFUSE(BAD_INPUT_LEN, INLEN);
	if (outlen < SIM_QUERY_OUT_BYTES)
		REFUSE(BAD_OUTPUT_LEN, OUTLEN);
	answer(out, outlen, SIM_QUERY_OUT_BYTES);
	memcpy((uint8_t *)out + SIM_QPC_OFF, qp->qpc, SIM_QPC_BYTES);
	sim_set(out, 24, 31, 28, qp->state);
	sim_set(out, 144, 23, 0, qp->next_send_psn);
	sim_set(out, 172, 23, 0, qp->next_rcv_psn);
	sim_set(out, 204, 31, 16, qp->sq_ci & 0xffff);	/* hw_sq_wqebb_counter */
	sim_set(out, 204, 15, 0, qp->sq_db & 0xffff);	/* sw_sq_wqebb_counter */
	return 0;
}

/* ---- the object entry points ------------------------------------------------------ */

int dvx_sim_cmd_create(struct sim_nic *nic, const void *in, size_t inlen, void *out,
		   size_t outlen, struct dvx_hal_obj *obj)
{
	unsigned op = dvx_get_be16(in);

	nic->fab->cmds++;
	switch (op) {
	case SIM_CMD_CREATE_CQ:
		return create_cq(nic, in, inlen, out, outlen, obj);
	case SIM_CMD_CREATE_QP:
		return create_qp(nic, in, inlen, out, outlen, obj);
	default:
		if (is_object_cmd(op) || op == SIM_CMD_QUERY_HCA_CAP)
			return -EINVAL;	/* DEVX: not an object-create command */
		REFUSE(BAD_OP, BAD_OPCODE);	/* another object type: not modelled */
	}
}

static struct sim_qp *obj_qp(struct sim_nic *nic, struct dvx_hal_obj *obj)
{
	struct sim_qp *qp = obj->priv;

	if (obj->cmd_opcode != SIM_CMD_CREATE_QP || !qp || qp->nic != nic || !qp->qpn ||
	    qp->qpn != obj->id)
		return NULL;
	return qp;
}

static struct sim_cq *obj_cq(struct sim_nic *nic, struct dvx_hal_obj *obj)
{
	struct sim_cq *cq = obj->priv;

	if (obj->cmd_opcode != SIM_CMD_CREATE_CQ || !cq || cq->nic != nic || !cq->cqn ||
	    cq->cqn != obj->id)
		return NULL;
	return cq;
}

int dvx_sim_cmd_modify(struct sim_nic *nic, struct dvx_hal_obj *obj, const void *in, size_t inlen,
		   void *out, size_t outlen)
{
	static const struct {
		uint16_t op;
		uint8_t from;	/* required state, 0xff = any */
		uint8_t full;	/* carries a qpc (272-byte mailbox) */
	} tr[] = {
		{ SIM_CMD_RST2INIT_QP, SIM_QPS_RST, 1 },
		{ SIM_CMD_INIT2RTR_QP, SIM_QPS_INIT, 1 },
		{ SIM_CMD_RTR2RTS_QP, SIM_QPS_RTR, 1 },
		{ SIM_CMD_RTS2RTS_QP, SIM_QPS_RTS, 1 },
		{ SIM_CMD_2ERR_QP, 0xff, 0 },
		{ SIM_CMD_2RST_QP, 0xff, 0 },
	};
	unsigned op = dvx_get_be16(in), i;
	struct sim_qp *qp;

	(void)outlen;
	nic->fab->cmds++;
	qp = obj_qp(nic, obj);
	if (!qp || op < 0x500 || op > 0x50f || op == SIM_CMD_DESTROY_QP || op == SIM_CMD_QUERY_QP)
		return -EINVAL;	/* DEVX: not a modify of this object */
	if (inlen < 16)
		REFUSE(BAD_INPUT_LEN, INLEN);
	if (sim_get(in, 8, 23, 0) != qp->qpn)
		return -EINVAL;	/* DEVX: the command names another object */
	for (i = 0; i < DVX_ARRAY_SIZE(tr); i++)
		if (tr[i].op == op)
			break;
	if (i == DVX_ARRAY_SIZE(tr))
		REFUSE(BAD_OP, BAD_OPCODE);	/* SQERR2RTS, INIT2INIT, ...: not modelled */
	if (tr[i].full && inlen < SIM_QP_IN_BYTES)
		REFUSE(BAD_INPUT_LEN, INLEN);
	if (tr[i].from != 0xff && qp->state != tr[i].from)
		REFUSE(BAD_QP_STATE, QP_STATE);
	switch (op) {
	case SIM_CMD_RST2INIT_QP:
		return rst2init(nic, qp, in, out);
	case SIM_CMD_INIT2RTR_QP:
		return init2rtr(nic, qp, in, out);
	case SIM_CMD_RTR2RTS_QP:
		return rtr2rts(nic, qp, in, out);
	case SIM_CMD_RTS2RTS_QP:
		return rts2rts(nic, qp, in, out);
	case SIM_CMD_2ERR_QP:
		dvx_sim_qp_set_err(nic->fab, qp);
		break;
	default:	/* 2RST */
		qp->state = SIM_QPS_RST;
		reset_exec_state(qp);
		break;
	}
	memset(out, 0, 16);
	return 0;
}

int dvx_sim_cmd_query(struct sim_nic *nic, struct dvx_hal_obj *obj, const void *in, size_t inlen,
		  void *out, size_t outlen)
{
	unsigned op = dvx_get_be16(in);
	struct sim_qp *qp;
	struct sim_cq *cq;

	nic->fab->cmds++;
	if (op == SIM_CMD_QUERY_QP && (qp = obj_qp(nic, obj)) != NULL) {
		if (inlen >= 12 && sim_get(in, 8, 23, 0) != qp->qpn)
			return -EINVAL;
		return query_qp(nic, qp, in, inlen, out, outlen);
	}
	if (op == SIM_CMD_QUERY_CQ && (cq = obj_cq(nic, obj)) != NULL) {
		if (inlen >= 12 && sim_get(in, 8, 23, 0) != cq->cqn)
			return -EINVAL;
		return query_cq(nic, cq, in, inlen, out, outlen);
	}
	return -EINVAL;	/* DEVX: not a query of this object */
}

int dvx_sim_cmd_destroy(struct sim_nic *nic, struct dvx_hal_obj *obj, uint8_t *in16, uint8_t *out16)
{
	struct sim_qp *qp = obj_qp(nic, obj);
	struct sim_cq *cq = obj_cq(nic, obj);
	uint8_t *out = out16;

	memset(in16, 0, 16);
	nic->fab->cmds++;
	if (qp) {
		dvx_put_be16(in16, SIM_CMD_DESTROY_QP);
		sim_set(in16, 8, 23, 0, qp->qpn);
		return destroy_qp(nic, qp, out);
	}
	if (cq) {
		dvx_put_be16(in16, SIM_CMD_DESTROY_CQ);
		sim_set(in16, 8, 23, 0, cq->cqn);
		return destroy_cq(nic, cq, out);
	}
	return -EINVAL;
}
