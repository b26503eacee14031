// SPDX-License-Identifier: MIT
/*
 * mlx5/cmd.c - PRM command encoders/decoders for CQs and RC QPs (prm 1.1, 1.6-1.8).
 *
 * Every encoder checks its whole input first, against the widths of the very field
 * macros it then writes with (so a limit cannot drift from its field), and only then
 * zeroes and fills the mailbox: a refused input leaves the caller's mailbox as it was.
 * Fields are written one at a time with dvx_mlx5_set(), which touches only the field's
 * own bits; 64-bit fields with dvx_mlx5_set64() on their own naturally aligned bytes.
 */
#include <errno.h>
#include <string.h>

#include <dvx/mlx5/cmd.h>
#include <dvx/mlx5/prm.h>

/* ---- validation against a field macro: FITS(DVX_MLX5_QPC_PD, v) ---- */

static inline int field_fits(unsigned byte, unsigned hi, unsigned lo, uint64_t v)
{
	(void)byte;
	return v <= (uint64_t)(dvx_mlx5_field_mask(hi, lo) >> lo);
}
#define FITS(field, v) field_fits(field, (uint64_t)(v))

static int all_zero(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

static void set_opcode(void *in, size_t bytes, unsigned opcode)
{
	memset(in, 0, bytes);
	dvx_mlx5_set(in, DVX_MLX5_HDR_OPCODE, opcode);
}

/* ---- names ---- */

const char *dvx_mlx5_cmd_name(unsigned opcode)
{
	switch (opcode) {
	case DVX_MLX5_CMD_QUERY_HCA_CAP:
		return "QUERY_HCA_CAP";
	case DVX_MLX5_CMD_CREATE_MKEY:
		return "CREATE_MKEY";
	case DVX_MLX5_CMD_CREATE_CQ:
		return "CREATE_CQ";
	case DVX_MLX5_CMD_DESTROY_CQ:
		return "DESTROY_CQ";
	case DVX_MLX5_CMD_QUERY_CQ:
		return "QUERY_CQ";
	case DVX_MLX5_CMD_CREATE_QP:
		return "CREATE_QP";
	case DVX_MLX5_CMD_DESTROY_QP:
		return "DESTROY_QP";
	case DVX_MLX5_CMD_RST2INIT_QP:
		return "RST2INIT_QP";
	case DVX_MLX5_CMD_INIT2RTR_QP:
		return "INIT2RTR_QP";
	case DVX_MLX5_CMD_RTR2RTS_QP:
		return "RTR2RTS_QP";
	case DVX_MLX5_CMD_RTS2RTS_QP:
		return "RTS2RTS_QP";
	case DVX_MLX5_CMD_2ERR_QP:
		return "2ERR_QP";
	case DVX_MLX5_CMD_2RST_QP:
		return "2RST_QP";
	case DVX_MLX5_CMD_QUERY_QP:
		return "QUERY_QP";
	case DVX_MLX5_CMD_ALLOC_PD:
		return "ALLOC_PD";
	default:
		return "UNKNOWN";
	}
}

const char *dvx_mlx5_qp_state_name(unsigned state)
{
	switch (state) {
	case DVX_MLX5_QP_STATE_RST:
		return "RST";
	case DVX_MLX5_QP_STATE_INIT:
		return "INIT";
	case DVX_MLX5_QP_STATE_RTR:
		return "RTR";
	case DVX_MLX5_QP_STATE_RTS:
		return "RTS";
	case DVX_MLX5_QP_STATE_SQER:
		return "SQER";
	case DVX_MLX5_QP_STATE_SQD:
		return "SQD";
	case DVX_MLX5_QP_STATE_ERR:
		return "ERR";
	case DVX_MLX5_QP_STATE_SQ_DRAINING:
		return "SQ_DRAINING";
	case DVX_MLX5_QP_STATE_SUSPENDED:
		return "SUSPENDED";
	default:
		return "UNKNOWN";
	}
}

static const struct {
	uint8_t status;
	int8_t err;
	const char *name;
} cmd_status[] = {
	{ DVX_MLX5_CMD_STAT_OK, 0, "OK" },
	{ DVX_MLX5_CMD_STAT_INT_ERR, -EIO, "INTERNAL_ERR" },
	{ DVX_MLX5_CMD_STAT_BAD_OP_ERR, -EINVAL, "BAD_OP" },
	{ DVX_MLX5_CMD_STAT_BAD_PARAM_ERR, -EINVAL, "BAD_PARAM" },
	{ DVX_MLX5_CMD_STAT_BAD_SYS_STATE_ERR, -EIO, "BAD_SYS_STATE" },
	{ DVX_MLX5_CMD_STAT_BAD_RES_ERR, -EINVAL, "BAD_RESOURCE" },
	{ DVX_MLX5_CMD_STAT_RES_BUSY, -EBUSY, "RESOURCE_BUSY" },
	{ DVX_MLX5_CMD_STAT_NOT_READY, -EAGAIN, "NOT_READY" },
	{ DVX_MLX5_CMD_STAT_LIM_ERR, -ENOMEM, "EXCEED_LIM" },
	{ DVX_MLX5_CMD_STAT_BAD_RES_STATE_ERR, -EINVAL, "BAD_RES_STATE" },
	{ DVX_MLX5_CMD_STAT_IX_ERR, -EINVAL, "BAD_INDEX" },
	{ DVX_MLX5_CMD_STAT_NO_RES_ERR, -EAGAIN, "NO_RESOURCES" },
	{ DVX_MLX5_CMD_STAT_BAD_QP_STATE_ERR, -EINVAL, "BAD_QP_STATE" },
	{ DVX_MLX5_CMD_STAT_BAD_PKT_ERR, -EINVAL, "BAD_PKT" },
	{ DVX_MLX5_CMD_STAT_BAD_SIZE_OUTS_CQES_ERR, -EINVAL, "BAD_SIZE_OUTS_CQES" },
	{ DVX_MLX5_CMD_STAT_BAD_INP_LEN_ERR, -EIO, "BAD_INPUT_LEN" },
	{ DVX_MLX5_CMD_STAT_BAD_OUTP_LEN_ERR, -EIO, "BAD_OUTPUT_LEN" },
};

int dvx_mlx5_cmd_status_errno(uint8_t status)
{
	size_t i;

	for (i = 0; i < DVX_ARRAY_SIZE(cmd_status); i++)
		if (cmd_status[i].status == status)
			return cmd_status[i].err;
	return -EIO;
}

const char *dvx_mlx5_cmd_status_name(uint8_t status)
{
	size_t i;

	for (i = 0; i < DVX_ARRAY_SIZE(cmd_status); i++)
		if (cmd_status[i].status == status)
			return cmd_status[i].name;
	return "UNKNOWN";
}

int dvx_mlx5_cmd_out_status(const void *out, uint8_t *status, uint32_t *syndrome)
{
	uint8_t st;

	if (!out)
		return -EINVAL;
	st = (uint8_t)dvx_mlx5_get(out, DVX_MLX5_OUT_STATUS);
	if (status)
		*status = st;
	if (syndrome)
		*syndrome = dvx_mlx5_get(out, DVX_MLX5_OUT_SYNDROME);
	return st ? dvx_mlx5_cmd_status_errno(st) : 0;
}

/* common head of every decoder: arguments, length, status */
static int out_check(const void *out, size_t outlen, size_t need, const void *dst)
{
	if (!out || !dst || outlen < need)
		return -EINVAL;
	return dvx_mlx5_cmd_out_status(out, NULL, NULL);
}

/* encoders whose only argument is an object number at dw@8 [23:0] */
static int encode_objnum(void *in, size_t bytes, unsigned opcode, uint32_t num)
{
	if (!in || !FITS(DVX_MLX5_MODIFY_QP_IN_QPN, num))
		return -EINVAL;
	set_opcode(in, bytes, opcode);
	dvx_mlx5_set(in, DVX_MLX5_MODIFY_QP_IN_QPN, num);	/* cqn and qpn share dw@8 [23:0] */
	return 0;
}

/* ---- CQ (prm 1.6) ---- */

static int cq_attr_check(const struct dvx_mlx5_cq_cfg *a)
{
	if (a->cqe_size != 0 && a->cqe_size != 64 && a->cqe_size != 128)
		return -EINVAL;
	if (!FITS(DVX_MLX5_CQC_LOG_CQ_SIZE, a->log_cq_size) ||
	    !FITS(DVX_MLX5_CQC_UAR_PAGE, a->uar_page) ||
	    !FITS(DVX_MLX5_CQC_C_EQN, a->eqn) ||
	    !FITS(DVX_MLX5_CQC_OI, a->oi) ||
	    !FITS(DVX_MLX5_CQC_CC, a->cc) ||
	    !FITS(DVX_MLX5_CQC_LOG_PAGE_SIZE, a->log_page_size) ||
	    !FITS(DVX_MLX5_CQC_CQ_TIMESTAMP_FORMAT, a->ts_format))
		return -EINVAL;
	if (a->cq_umem_offset % DVX_MLX5_UMEM_QUEUE_ALIGN ||
	    a->dbr_offset % DVX_MLX5_UMEM_DBR_ALIGN)
		return -EINVAL;
	return 0;
}

int dvx_mlx5_create_cq_in(void *in, const struct dvx_mlx5_cq_cfg *attr)
{
	uint8_t *cqc;

	if (!in || !attr || cq_attr_check(attr))
		return -EINVAL;

	cqc = (uint8_t *)in + DVX_MLX5_CREATE_CQ_IN_CQC;
	set_opcode(in, DVX_MLX5_CREATE_CQ_IN_BYTES, DVX_MLX5_CMD_CREATE_CQ);
	dvx_mlx5_set(cqc, DVX_MLX5_CQC_DBR_UMEM_VALID, 1);
	dvx_mlx5_set(cqc, DVX_MLX5_CQC_CQE_SZ,
		     attr->cqe_size == 128 ? DVX_MLX5_CQE_SZ_128 : DVX_MLX5_CQE_SZ_64);
	dvx_mlx5_set(cqc, DVX_MLX5_CQC_CC, attr->cc);
	dvx_mlx5_set(cqc, DVX_MLX5_CQC_OI, attr->oi);
	dvx_mlx5_set(cqc, DVX_MLX5_CQC_DBR_UMEM_ID, attr->dbr_umem_id);
	dvx_mlx5_set(cqc, DVX_MLX5_CQC_CQ_TIMESTAMP_FORMAT, attr->ts_format);
	dvx_mlx5_set(cqc, DVX_MLX5_CQC_LOG_CQ_SIZE, attr->log_cq_size);
	dvx_mlx5_set(cqc, DVX_MLX5_CQC_UAR_PAGE, attr->uar_page);
	dvx_mlx5_set(cqc, DVX_MLX5_CQC_C_EQN, attr->eqn);
	dvx_mlx5_set(cqc, DVX_MLX5_CQC_LOG_PAGE_SIZE, attr->log_page_size);
	dvx_mlx5_set64(cqc, DVX_MLX5_CQC_DBR_ADDR, attr->dbr_offset);
	dvx_mlx5_set64(in, DVX_MLX5_CREATE_CQ_IN_CQ_UMEM_OFFSET, attr->cq_umem_offset);
	dvx_mlx5_set(in, DVX_MLX5_CREATE_CQ_IN_CQ_UMEM_ID, attr->cq_umem_id);
	dvx_mlx5_set(in, DVX_MLX5_CREATE_CQ_IN_CQ_UMEM_VALID, 1);
	return 0;
}

int dvx_mlx5_create_cq_out(const void *out, size_t outlen, uint32_t *cqn)
{
	int err = out_check(out, outlen, DVX_MLX5_CREATE_CQ_OUT_BYTES, cqn);

	if (err)
		return err;
	*cqn = dvx_mlx5_get(out, DVX_MLX5_CREATE_CQ_OUT_CQN);
	return 0;
}

int dvx_mlx5_destroy_cq_in(void *in, uint32_t cqn)
{
	return encode_objnum(in, DVX_MLX5_DESTROY_CQ_IN_BYTES, DVX_MLX5_CMD_DESTROY_CQ, cqn);
}

int dvx_mlx5_query_cq_in(void *in, uint32_t cqn)
{
	return encode_objnum(in, DVX_MLX5_QUERY_CQ_IN_BYTES, DVX_MLX5_CMD_QUERY_CQ, cqn);
}

int dvx_mlx5_query_cq_out(const void *out, size_t outlen, struct dvx_mlx5_cq_query *q)
{
	const uint8_t *cqc;
	int err = out_check(out, outlen, DVX_MLX5_QUERY_CQ_OUT_BYTES, q);

	if (err)
		return err;
	cqc = (const uint8_t *)out + DVX_MLX5_QUERY_CQ_OUT_CQC;
	memset(q, 0, sizeof(*q));
	q->status = (uint8_t)dvx_mlx5_get(cqc, DVX_MLX5_CQC_STATUS);
	q->cqe_sz = (uint8_t)dvx_mlx5_get(cqc, DVX_MLX5_CQC_CQE_SZ);
	q->cc = (uint8_t)dvx_mlx5_get(cqc, DVX_MLX5_CQC_CC);
	q->oi = (uint8_t)dvx_mlx5_get(cqc, DVX_MLX5_CQC_OI);
	q->st = (uint8_t)dvx_mlx5_get(cqc, DVX_MLX5_CQC_ST);
	q->log_cq_size = (uint8_t)dvx_mlx5_get(cqc, DVX_MLX5_CQC_LOG_CQ_SIZE);
	q->c_eqn = (uint8_t)dvx_mlx5_get(cqc, DVX_MLX5_CQC_C_EQN);
	q->uar_page = dvx_mlx5_get(cqc, DVX_MLX5_CQC_UAR_PAGE);
	q->consumer_counter = dvx_mlx5_get(cqc, DVX_MLX5_CQC_CONSUMER_COUNTER);
	q->producer_counter = dvx_mlx5_get(cqc, DVX_MLX5_CQC_PRODUCER_COUNTER);
	q->last_notified_index = dvx_mlx5_get(cqc, DVX_MLX5_CQC_LAST_NOTIFIED_INDEX);
	q->last_solicit_index = dvx_mlx5_get(cqc, DVX_MLX5_CQC_LAST_SOLICIT_INDEX);
	return 0;
}

/* ---- QP creation (prm 1.7) ---- */

static int qp_attr_check(const struct dvx_mlx5_qp_cfg *a)
{
	if (!FITS(DVX_MLX5_QPC_PD, a->pdn) ||
	    !FITS(DVX_MLX5_QPC_UAR_PAGE, a->uar_page) ||
	    !FITS(DVX_MLX5_QPC_USER_INDEX, a->user_index) ||
	    !FITS(DVX_MLX5_QPC_CQN_SND, a->cqn_snd) ||
	    !FITS(DVX_MLX5_QPC_CQN_RCV, a->cqn_rcv) ||
	    !FITS(DVX_MLX5_QPC_SRQN_RMPN_XRQN, a->srqn) ||
	    !FITS(DVX_MLX5_QPC_LOG_SQ_SIZE, a->log_sq_size) ||
	    !FITS(DVX_MLX5_QPC_LOG_RQ_SIZE, a->log_rq_size) ||
	    !FITS(DVX_MLX5_QPC_LOG_RQ_STRIDE, a->log_rq_stride) ||
	    !FITS(DVX_MLX5_QPC_LOG_MSG_MAX, a->log_msg_max) ||
	    !FITS(DVX_MLX5_QPC_TS_FORMAT, a->ts_format) ||
	    !FITS(DVX_MLX5_QPC_SEND_DBR_MODE, a->send_dbr_mode) ||
	    !FITS(DVX_MLX5_QPC_CD_MASTER, a->cd_master) ||
	    !FITS(DVX_MLX5_QPC_CD_SLAVE_SEND, a->cd_slave_send) ||
	    !FITS(DVX_MLX5_QPC_CD_SLAVE_RECEIVE, a->cd_slave_receive))
		return -EINVAL;

	switch (a->rq_type) {
	case DVX_MLX5_RQ_TYPE_REGULAR:
		/* at least one WQEBB of RQ, so the SQ behind it is WQEBB-aligned */
		if (4u + a->log_rq_stride + a->log_rq_size < DVX_MLX5_SEND_WQE_SHIFT)
			return -EINVAL;
		break;
	case DVX_MLX5_RQ_TYPE_SRQ:
	case DVX_MLX5_RQ_TYPE_ZERO:
		if (a->log_rq_size || a->log_rq_stride)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	if (a->rq_type != DVX_MLX5_RQ_TYPE_SRQ && a->srqn)
		return -EINVAL;

	if (a->wq_umem_offset % DVX_MLX5_UMEM_QUEUE_ALIGN ||
	    a->dbr_offset % DVX_MLX5_UMEM_DBR_ALIGN)
		return -EINVAL;
	return 0;
}

static void qp_layout(const struct dvx_mlx5_qp_cfg *a, struct dvx_mlx5_qp_wq_layout *l)
{
	l->rq_offset = a->wq_umem_offset;
	l->rq_bytes = a->rq_type == DVX_MLX5_RQ_TYPE_REGULAR ?
		      (uint64_t)16 << (a->log_rq_size + a->log_rq_stride) : 0;
	l->sq_offset = l->rq_offset + l->rq_bytes;
	l->sq_bytes = (uint64_t)DVX_MLX5_SEND_WQE_BB << a->log_sq_size;
	l->end = l->sq_offset + l->sq_bytes;
}

/* the whole WQ must fit in a 64-bit umem offset space */
static int qp_layout_fits(const struct dvx_mlx5_qp_cfg *a)
{
	struct dvx_mlx5_qp_wq_layout l;

	qp_layout(a, &l);
	return l.end > a->wq_umem_offset;
}

int dvx_mlx5_qp_wq_layout(const struct dvx_mlx5_qp_cfg *attr, struct dvx_mlx5_qp_wq_layout *l)
{
	if (!attr || !l || qp_attr_check(attr) || !qp_layout_fits(attr))
		return -EINVAL;
	qp_layout(attr, l);
	return 0;
}

int dvx_mlx5_create_qp_in(void *in, const struct dvx_mlx5_qp_cfg *attr)
{
	uint8_t *qpc;

	if (!in || !attr || qp_attr_check(attr) || !qp_layout_fits(attr))
		return -EINVAL;

	qpc = (uint8_t *)in + DVX_MLX5_CREATE_QP_IN_QPC;
	set_opcode(in, DVX_MLX5_CREATE_QP_IN_BYTES, DVX_MLX5_CMD_CREATE_QP);
	dvx_mlx5_set(qpc, DVX_MLX5_QPC_ST, DVX_MLX5_QP_ST_RC);
	dvx_mlx5_set(qpc, DVX_MLX5_QPC_PM_STATE, DVX_MLX5_QP_PM_STATE_MIGRATED);
	dvx_mlx5_set(qpc, DVX_MLX5_QPC_PD, attr->pdn);
	dvx_mlx5_set(qpc, DVX_MLX5_QPC_LOG_MSG_MAX, attr->log_msg_max);
	dvx_mlx5_set(qpc, DVX_MLX5_QPC_LOG_RQ_SIZE, attr->log_rq_size);
	dvx_mlx5_set(qpc, DVX_MLX5_QPC_LOG_RQ_STRIDE, attr->log_rq_stride);
	dvx_mlx5_set(qpc, DVX_MLX5_QPC_LOG_SQ_SIZE, attr->log_sq_size);
	dvx_mlx5_set(qpc, DVX_MLX5_QPC_TS_FORMAT, attr->ts_format);
	dvx_mlx5_set(qpc, DVX_MLX5_QPC_UAR_PAGE, attr->uar_page);
	dvx_mlx5_set(qpc, DVX_MLX5_QPC_SEND_DBR_MODE, attr->send_dbr_mode);
	dvx_mlx5_set(qpc, DVX_MLX5_QPC_USER_INDEX, attr->user_index);
	dvx_mlx5_set(qpc, DVX_MLX5_QPC_CQN_SND, attr->cqn_snd);
	/* one bit each, read-modify-write of qpc dw@144 only: never a 64-bit store here,
	 * which would land on next_rcv_psn (prm 0, the DOCA DEVX_SET64 bug) */
	dvx_mlx5_set(qpc, DVX_MLX5_QPC_CD_SLAVE_RECEIVE, attr->cd_slave_receive);
	dvx_mlx5_set(qpc, DVX_MLX5_QPC_CD_SLAVE_SEND, attr->cd_slave_send);
	dvx_mlx5_set(qpc, DVX_MLX5_QPC_CD_MASTER, attr->cd_master);
	dvx_mlx5_set(qpc, DVX_MLX5_QPC_CQN_RCV, attr->cqn_rcv);
	dvx_mlx5_set64(qpc, DVX_MLX5_QPC_DBR_ADDR, attr->dbr_offset);
	dvx_mlx5_set(qpc, DVX_MLX5_QPC_RQ_TYPE, attr->rq_type);
	dvx_mlx5_set(qpc, DVX_MLX5_QPC_SRQN_RMPN_XRQN, attr->srqn);
	dvx_mlx5_set(qpc, DVX_MLX5_QPC_DBR_UMEM_VALID, 1);
	dvx_mlx5_set(qpc, DVX_MLX5_QPC_DBR_UMEM_ID, attr->dbr_umem_id);
	dvx_mlx5_set64(in, DVX_MLX5_CREATE_QP_IN_WQ_UMEM_OFFSET, attr->wq_umem_offset);
	dvx_mlx5_set(in, DVX_MLX5_CREATE_QP_IN_WQ_UMEM_ID, attr->wq_umem_id);
	dvx_mlx5_set(in, DVX_MLX5_CREATE_QP_IN_WQ_UMEM_VALID, 1);
	return 0;
}

int dvx_mlx5_create_qp_out(const void *out, size_t outlen, uint32_t *qpn)
{
	int err = out_check(out, outlen, DVX_MLX5_CREATE_QP_OUT_BYTES, qpn);

	if (err)
		return err;
	*qpn = dvx_mlx5_get(out, DVX_MLX5_CREATE_QP_OUT_QPN);
	return 0;
}

int dvx_mlx5_destroy_qp_in(void *in, uint32_t qpn)
{
	return encode_objnum(in, DVX_MLX5_DESTROY_QP_IN_BYTES, DVX_MLX5_CMD_DESTROY_QP, qpn);
}

/* ---- the address path (prm 1.8 table) ---- */

static int path_check(const struct dvx_mlx5_path *p)
{
	if (p->roce > 1 ||
	    !FITS(DVX_MLX5_ADS_ACK_TIMEOUT, p->ack_timeout) ||
	    !FITS(DVX_MLX5_ADS_STAT_RATE, p->stat_rate) ||
	    !FITS(DVX_MLX5_ADS_FL, p->fl) ||
	    !FITS(DVX_MLX5_ADS_FLOW_LABEL, p->flow_label))
		return -EINVAL;
	if (p->roce) {
		/* RoCE: no LID routing; priority travels as eth_prio/dscp */
		if (p->rlid || p->sl || p->grh || p->mlid ||
		    !FITS(DVX_MLX5_ADS_DSCP, p->dscp) ||
		    !FITS(DVX_MLX5_ADS_ETH_PRIO, p->eth_prio))
			return -EINVAL;
		return 0;
	}
	/* IB: no Ethernet fields; GRH fields only with grh = 1 */
	if (p->dscp || p->eth_prio || p->udp_sport || !all_zero(p->rmac, sizeof(p->rmac)) ||
	    !FITS(DVX_MLX5_ADS_SL, p->sl) ||
	    !FITS(DVX_MLX5_ADS_GRH, p->grh) ||
	    !FITS(DVX_MLX5_ADS_MLID, p->mlid))
		return -EINVAL;
	if (!p->grh && (p->src_addr_index || p->hop_limit || p->tclass || p->flow_label ||
			!all_zero(p->rgid, sizeof(p->rgid))))
		return -EINVAL;
	return 0;
}

/* @ads: the primary address path inside a modify command's qpc */
static void path_write(uint8_t *ads, const struct dvx_mlx5_path *p)
{
	int grh_fields = p->roce || p->grh;

	dvx_mlx5_set(ads, DVX_MLX5_ADS_FL, p->fl);
	dvx_mlx5_set(ads, DVX_MLX5_ADS_PKEY_INDEX, p->pkey_index);
	dvx_mlx5_set(ads, DVX_MLX5_ADS_ACK_TIMEOUT, p->ack_timeout);
	dvx_mlx5_set(ads, DVX_MLX5_ADS_STAT_RATE, p->stat_rate);
	dvx_mlx5_set(ads, DVX_MLX5_ADS_VHCA_PORT_NUM, p->vhca_port_num);
	if (!p->roce) {
		dvx_mlx5_set(ads, DVX_MLX5_ADS_GRH, p->grh);
		dvx_mlx5_set(ads, DVX_MLX5_ADS_MLID, p->mlid);
		dvx_mlx5_set(ads, DVX_MLX5_ADS_RLID, p->rlid);
		dvx_mlx5_set(ads, DVX_MLX5_ADS_SL, p->sl);
	} else {
		dvx_mlx5_set(ads, DVX_MLX5_ADS_DSCP, p->dscp);
		dvx_mlx5_set(ads, DVX_MLX5_ADS_UDP_SPORT, p->udp_sport);
		dvx_mlx5_set(ads, DVX_MLX5_ADS_ETH_PRIO, p->eth_prio);
		/* rmac_47_32 (dw@36 [15:0]) and rmac_31_0 (bytes 40-43) are the six
		 * big-endian bytes 38-43: the MAC in wire order */
		memcpy(ads + DVX_MLX5_ADS_RMAC, p->rmac, sizeof(p->rmac));
	}
	if (grh_fields) {
		dvx_mlx5_set(ads, DVX_MLX5_ADS_SRC_ADDR_INDEX, p->src_addr_index);
		dvx_mlx5_set(ads, DVX_MLX5_ADS_HOP_LIMIT, p->hop_limit);
		dvx_mlx5_set(ads, DVX_MLX5_ADS_TCLASS, p->tclass);
		dvx_mlx5_set(ads, DVX_MLX5_ADS_FLOW_LABEL, p->flow_label);
		memcpy(ads + DVX_MLX5_ADS_RGID_RIP, p->rgid, sizeof(p->rgid));
	}
}

/* ---- state transitions (prm 1.8) ---- */

static int access_check(uint8_t rre, uint8_t rwe, uint8_t rae, uint8_t atomic_mode)
{
	if (!FITS(DVX_MLX5_QPC_RRE, rre) || !FITS(DVX_MLX5_QPC_RWE, rwe) ||
	    !FITS(DVX_MLX5_QPC_RAE, rae) || !FITS(DVX_MLX5_QPC_ATOMIC_MODE, atomic_mode))
		return -EINVAL;
	return 0;
}

/* @qpc: the qpc inside a modify command */
static void access_write(uint8_t *qpc, uint8_t rre, uint8_t rwe, uint8_t rae, uint8_t atomic_mode)
{
	dvx_mlx5_set(qpc, DVX_MLX5_QPC_ATOMIC_MODE, atomic_mode);
	dvx_mlx5_set(qpc, DVX_MLX5_QPC_RRE, rre);
	dvx_mlx5_set(qpc, DVX_MLX5_QPC_RWE, rwe);
	dvx_mlx5_set(qpc, DVX_MLX5_QPC_RAE, rae);
}

static void modify_head(void *in, unsigned opcode, uint32_t qpn)
{
	set_opcode(in, DVX_MLX5_MODIFY_QP_IN_BYTES, opcode);
	dvx_mlx5_set(in, DVX_MLX5_MODIFY_QP_IN_QPN, qpn);
}

int dvx_mlx5_rst2init_qp_in(void *in, uint32_t qpn, const struct dvx_mlx5_rst2init_cfg *attr)
{
	uint8_t *qpc;
	uint8_t *ads;

	if (!in || !attr || !FITS(DVX_MLX5_MODIFY_QP_IN_QPN, qpn) ||
	    access_check(attr->rre, attr->rwe, attr->rae, attr->atomic_mode))
		return -EINVAL;

	qpc = (uint8_t *)in + DVX_MLX5_MODIFY_QP_IN_QPC;
	ads = qpc + DVX_MLX5_QPC_PRIMARY_ADDRESS_PATH;
	modify_head(in, DVX_MLX5_CMD_RST2INIT_QP, qpn);
	dvx_mlx5_set(qpc, DVX_MLX5_QPC_PM_STATE, DVX_MLX5_QP_PM_STATE_MIGRATED);
	access_write(qpc, attr->rre, attr->rwe, attr->rae, attr->atomic_mode);
	dvx_mlx5_set(ads, DVX_MLX5_ADS_PKEY_INDEX, attr->pkey_index);
	dvx_mlx5_set(ads, DVX_MLX5_ADS_VHCA_PORT_NUM, attr->vhca_port_num);
	return 0;
}

static int mtu_ok(unsigned mtu)
{
	return mtu >= DVX_MLX5_MTU_256 && mtu <= DVX_MLX5_MTU_4096;
}

int dvx_mlx5_init2rtr_qp_in(void *in, uint32_t qpn, const struct dvx_mlx5_init2rtr_cfg *attr)
{
	uint8_t *qpc;

	if (!in || !attr || !FITS(DVX_MLX5_MODIFY_QP_IN_QPN, qpn) || !mtu_ok(attr->mtu) ||
	    !FITS(DVX_MLX5_QPC_REMOTE_QPN, attr->remote_qpn) ||
	    !FITS(DVX_MLX5_QPC_NEXT_RCV_PSN, attr->next_rcv_psn) ||
	    !FITS(DVX_MLX5_QPC_LOG_MSG_MAX, attr->log_msg_max) ||
	    !FITS(DVX_MLX5_QPC_MIN_RNR_NAK, attr->min_rnr_nak) ||
	    !FITS(DVX_MLX5_QPC_LOG_RRA_MAX, attr->log_rra_max) ||
	    attr->resend_access > 1 ||
	    access_check(attr->rre, attr->rwe, attr->rae, attr->atomic_mode) ||
	    path_check(&attr->path))
		return -EINVAL;
	/* access bits given without resend_access would be dropped silently */
	if (!attr->resend_access && (attr->rre || attr->rwe || attr->rae || attr->atomic_mode))
		return -EINVAL;

	qpc = (uint8_t *)in + DVX_MLX5_MODIFY_QP_IN_QPC;
	modify_head(in, DVX_MLX5_CMD_INIT2RTR_QP, qpn);
	dvx_mlx5_set(qpc, DVX_MLX5_QPC_MTU, attr->mtu);
	dvx_mlx5_set(qpc, DVX_MLX5_QPC_LOG_MSG_MAX, attr->log_msg_max);
	dvx_mlx5_set(qpc, DVX_MLX5_QPC_REMOTE_QPN, attr->remote_qpn);
	path_write(qpc + DVX_MLX5_QPC_PRIMARY_ADDRESS_PATH, &attr->path);
	dvx_mlx5_set(qpc, DVX_MLX5_QPC_LOG_RRA_MAX, attr->log_rra_max);
	dvx_mlx5_set(qpc, DVX_MLX5_QPC_MIN_RNR_NAK, attr->min_rnr_nak);
	dvx_mlx5_set(qpc, DVX_MLX5_QPC_NEXT_RCV_PSN, attr->next_rcv_psn);
	if (attr->resend_access) {
		access_write(qpc, attr->rre, attr->rwe, attr->rae, attr->atomic_mode);
		dvx_mlx5_set(in, DVX_MLX5_MODIFY_QP_IN_OPT_PARAM_MASK,
			     DVX_MLX5_QP_OPTPAR_RRE | DVX_MLX5_QP_OPTPAR_RAE |
			     DVX_MLX5_QP_OPTPAR_RWE);
	}
	return 0;
}

int dvx_mlx5_init2rtr_loopback_qp_in(void *in, uint32_t qpn, uint8_t vhca_port_num, uint8_t mtu)
{
	struct dvx_mlx5_init2rtr_cfg a;

	memset(&a, 0, sizeof(a));
	a.remote_qpn = qpn;
	a.mtu = mtu;
	a.path.fl = 1;
	a.path.vhca_port_num = vhca_port_num;
	return dvx_mlx5_init2rtr_qp_in(in, qpn, &a);
}

int dvx_mlx5_rtr2rts_qp_in(void *in, uint32_t qpn, const struct dvx_mlx5_rtr2rts_cfg *attr)
{
	uint8_t *qpc;
	uint8_t *ads;

	if (!in || !attr || !FITS(DVX_MLX5_MODIFY_QP_IN_QPN, qpn) ||
	    !FITS(DVX_MLX5_QPC_NEXT_SEND_PSN, attr->next_send_psn) ||
	    !FITS(DVX_MLX5_QPC_RETRY_COUNT, attr->retry_count) ||
	    !FITS(DVX_MLX5_QPC_RNR_RETRY, attr->rnr_retry) ||
	    !FITS(DVX_MLX5_ADS_ACK_TIMEOUT, attr->ack_timeout) ||
	    !FITS(DVX_MLX5_QPC_LOG_SRA_MAX, attr->log_sra_max) ||
	    !FITS(DVX_MLX5_QPC_LOG_ACK_REQ_FREQ, attr->log_ack_req_freq))
		return -EINVAL;

	qpc = (uint8_t *)in + DVX_MLX5_MODIFY_QP_IN_QPC;
	ads = qpc + DVX_MLX5_QPC_PRIMARY_ADDRESS_PATH;
	modify_head(in, DVX_MLX5_CMD_RTR2RTS_QP, qpn);
	dvx_mlx5_set(ads, DVX_MLX5_ADS_ACK_TIMEOUT, attr->ack_timeout);
	dvx_mlx5_set(qpc, DVX_MLX5_QPC_LOG_ACK_REQ_FREQ, attr->log_ack_req_freq);
	dvx_mlx5_set(qpc, DVX_MLX5_QPC_LOG_SRA_MAX, attr->log_sra_max);
	dvx_mlx5_set(qpc, DVX_MLX5_QPC_RETRY_COUNT, attr->retry_count);
	dvx_mlx5_set(qpc, DVX_MLX5_QPC_RNR_RETRY, attr->rnr_retry);
	dvx_mlx5_set(qpc, DVX_MLX5_QPC_NEXT_SEND_PSN, attr->next_send_psn);
	return 0;
}

int dvx_mlx5_qp_2err_in(void *in, uint32_t qpn)
{
	return encode_objnum(in, DVX_MLX5_QP_2ERR_IN_BYTES, DVX_MLX5_CMD_2ERR_QP, qpn);
}

int dvx_mlx5_qp_2rst_in(void *in, uint32_t qpn)
{
	return encode_objnum(in, DVX_MLX5_QP_2RST_IN_BYTES, DVX_MLX5_CMD_2RST_QP, qpn);
}

int dvx_mlx5_query_qp_in(void *in, uint32_t qpn)
{
	return encode_objnum(in, DVX_MLX5_QUERY_QP_IN_BYTES, DVX_MLX5_CMD_QUERY_QP, qpn);
}

int dvx_mlx5_query_qp_out(const void *out, size_t outlen, struct dvx_mlx5_qp_query *q)
{
	const uint8_t *qpc;
	const uint8_t *ads;
	int err = out_check(out, outlen, DVX_MLX5_QUERY_QP_OUT_BYTES, q);

	if (err)
		return err;
	qpc = (const uint8_t *)out + DVX_MLX5_QUERY_QP_OUT_QPC;
	ads = qpc + DVX_MLX5_QPC_PRIMARY_ADDRESS_PATH;
	memset(q, 0, sizeof(*q));
	q->state = (uint8_t)dvx_mlx5_get(qpc, DVX_MLX5_QPC_STATE);
	q->st = (uint8_t)dvx_mlx5_get(qpc, DVX_MLX5_QPC_ST);
	q->pm_state = (uint8_t)dvx_mlx5_get(qpc, DVX_MLX5_QPC_PM_STATE);
	q->mtu = (uint8_t)dvx_mlx5_get(qpc, DVX_MLX5_QPC_MTU);
	q->log_sq_size = (uint8_t)dvx_mlx5_get(qpc, DVX_MLX5_QPC_LOG_SQ_SIZE);
	q->rq_type = (uint8_t)dvx_mlx5_get(qpc, DVX_MLX5_QPC_RQ_TYPE);
	q->retry_count = (uint8_t)dvx_mlx5_get(qpc, DVX_MLX5_QPC_RETRY_COUNT);
	q->rnr_retry = (uint8_t)dvx_mlx5_get(qpc, DVX_MLX5_QPC_RNR_RETRY);
	q->ack_timeout = (uint8_t)dvx_mlx5_get(ads, DVX_MLX5_ADS_ACK_TIMEOUT);
	q->vhca_port_num = (uint8_t)dvx_mlx5_get(ads, DVX_MLX5_ADS_VHCA_PORT_NUM);
	q->cd_master = (uint8_t)dvx_mlx5_get(qpc, DVX_MLX5_QPC_CD_MASTER);
	q->hw_sq_wqebb_counter = (uint16_t)dvx_mlx5_get(qpc, DVX_MLX5_QPC_HW_SQ_WQEBB_COUNTER);
	q->sw_sq_wqebb_counter = (uint16_t)dvx_mlx5_get(qpc, DVX_MLX5_QPC_SW_SQ_WQEBB_COUNTER);
	q->pdn = dvx_mlx5_get(qpc, DVX_MLX5_QPC_PD);
	q->uar_page = dvx_mlx5_get(qpc, DVX_MLX5_QPC_UAR_PAGE);
	q->user_index = dvx_mlx5_get(qpc, DVX_MLX5_QPC_USER_INDEX);
	q->remote_qpn = dvx_mlx5_get(qpc, DVX_MLX5_QPC_REMOTE_QPN);
	q->next_send_psn = dvx_mlx5_get(qpc, DVX_MLX5_QPC_NEXT_SEND_PSN);
	q->next_rcv_psn = dvx_mlx5_get(qpc, DVX_MLX5_QPC_NEXT_RCV_PSN);
	q->cqn_snd = dvx_mlx5_get(qpc, DVX_MLX5_QPC_CQN_SND);
	q->cqn_rcv = dvx_mlx5_get(qpc, DVX_MLX5_QPC_CQN_RCV);
	q->opt_param_mask = dvx_mlx5_get(out, DVX_MLX5_QUERY_QP_OUT_OPT_PARAM_MASK);
	return 0;
}
