// SPDX-License-Identifier: MIT
/*
 * The software NIC end to end: a fabric of two NICs opened through dvx_sim_hal() and
 * the hal wrappers, CQs and QPs created and connected with the project's PRM encoders
 * (dvx/mlx5/cmd.h), WQEs posted with dvx/mlx5/sq.h (doorbell record, then the UAR
 * write), the model run with dvx_sim_step(), CQEs read with dvx/mlx5/cqe.h.
 */
#include "../../lib/dvx_test.h"

#include <errno.h>
#include <dvx/hal.h>
#include <dvx/hal/sim.h>
#include <dvx/mlx5/cmd.h>
#include <dvx/mlx5/cqe.h>
#include <dvx/mlx5/rq.h>
#include <dvx/mlx5/sq.h>
#include <dvx/mlx5/wqe.h>

#define E_MEM (256u << 10)	/* per NIC: rings, doorbell records, data */
#define E_LOG_CQ 6u
#define E_LOG_SQ 6u
#define E_LOG_RQ 4u
#define E_RQ_STRIDE_LOG 2u	/* 64-byte receive slots */
#define E_DATA_OFF (128u << 10)
#define E_DATA_LEN (64u << 10)
#define E_IOVA 0x7000000ull

struct e_cq {
	struct dvx_hal_obj obj;
	uint32_t cqn;
	struct dvx_mlx5_cq poll;
};

struct e_qp {
	struct dvx_hal_obj obj;
	uint32_t qpn;
	struct dvx_mlx5_sq sq;
	struct dvx_mlx5_sq_ctrs sqc;
	struct dvx_mlx5_rq rq;
};

struct e_nic {
	struct dvx_hal_nic hal;
	struct dvx_hal_pd pd;
	struct dvx_hal_uar uar;
	struct dvx_hal_umem umem;
	struct dvx_hal_mr mr, sink;
	uint32_t eqn;
	uint8_t *mem;
	uint32_t used;		/* bump allocator over mem[0, E_DATA_OFF) */
	uint16_t lid;
};

static struct {
	void *storage;
	struct dvx_sim_fabric *fab;
	const struct dvx_hal *hal;
	struct e_nic nic[2];
	uint8_t sink[64];
} E;

static uint32_t e_take(struct e_nic *n, uint32_t bytes, uint32_t align)
{
	uint32_t at = (n->used + align - 1) & ~(align - 1);

	n->used = at + bytes;
	assert_true(n->used <= E_DATA_OFF);
	return at;
}

static void e_nic_open(int i)
{
	struct e_nic *n = &E.nic[i];
	struct dvx_hal_umem_req ureq;
	struct dvx_hal_mr_req mreq;
	char name[16];

	snprintf(name, sizeof(name), "sim_%d", i);
	assert_int_equal(dvx_hal_nic_open(E.hal, name, &n->hal), 0);
	assert_int_equal(dvx_hal_pd_alloc(&n->hal, &n->pd), 0);
	assert_int_equal(dvx_hal_eqn_query(&n->hal, 0, &n->eqn), 0);
	assert_int_equal(dvx_hal_uar_alloc(&n->hal, DVX_UAR_NC_DEDICATED, &n->uar), 0);
	n->mem = aligned_alloc(4096, E_MEM);
	assert_non_null(n->mem);
	memset(n->mem, 0, E_MEM);
	memset(&ureq, 0, sizeof(ureq));
	ureq.addr = n->mem;
	ureq.len = E_DATA_OFF;
	ureq.access = DVX_ACCESS_LOCAL_WRITE;
	ureq.dmabuf_fd = -1;
	ureq.pgsz_bitmap = 4096;	/* 4 KiB pages, as dvx registers: rings at any 64 B */
	assert_int_equal(dvx_hal_umem_reg(&n->hal, &ureq, &n->umem), 0);
	memset(&mreq, 0, sizeof(mreq));
	mreq.addr = n->mem + E_DATA_OFF;
	mreq.len = E_DATA_LEN;
	mreq.iova = E_IOVA;
	mreq.access = DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_WRITE | DVX_ACCESS_REMOTE_READ |
		      DVX_ACCESS_REMOTE_ATOMIC;
	mreq.dmabuf_fd = -1;
	assert_int_equal(dvx_hal_mr_reg(&n->hal, &n->pd, &mreq, &n->mr), 0);
	/* the iova-0 sink for atomic results nobody reads */
	mreq.addr = E.sink;
	mreq.len = sizeof(E.sink);
	mreq.iova = 0;
	assert_int_equal(dvx_hal_mr_reg(&n->hal, &n->pd, &mreq, &n->sink), 0);
	n->used = 0;
}

static void e_cq_create(struct e_nic *n, struct e_cq *c)
{
	uint8_t in[DVX_MLX5_CREATE_CQ_IN_BYTES], out[DVX_MLX5_CREATE_CQ_OUT_BYTES];
	struct dvx_mlx5_cq_cfg a;
	uint32_t ring = e_take(n, 64u << E_LOG_CQ, 4096), dbr = e_take(n, 64, 64);

	dvx_mlx5_cq_ring_init(n->mem + ring, E_LOG_CQ);
	memset(&a, 0, sizeof(a));
	a.log_cq_size = E_LOG_CQ;
	a.uar_page = n->uar.page_id;
	a.eqn = n->eqn;
	a.cq_umem_id = n->umem.id;
	a.cq_umem_offset = ring;
	a.dbr_umem_id = n->umem.id;
	a.dbr_offset = dbr;
	a.cqe_size = 64;
	a.oi = 1;
	assert_int_equal(dvx_mlx5_create_cq_in(in, &a), 0);
	memset(&c->obj, 0, sizeof(c->obj));
	assert_int_equal(dvx_hal_obj_create(&n->hal, in, sizeof(in), out, sizeof(out), &c->obj), 0);
	assert_int_equal(dvx_mlx5_create_cq_out(out, sizeof(out), &c->cqn), 0);
	c->obj.id = c->cqn;
	assert_int_equal(dvx_mlx5_cq_init(&c->poll, n->mem + ring, E_LOG_CQ,
					  (dvx_be32 *)(void *)(n->mem + dbr), c->cqn), 0);
}

static void e_qp_create(struct e_nic *n, struct e_qp *q, const struct e_cq *scq,
			const struct e_cq *rcq, int cd_master)
{
	uint8_t in[DVX_MLX5_CREATE_QP_IN_BYTES], out[DVX_MLX5_CREATE_QP_OUT_BYTES];
	struct dvx_mlx5_qp_cfg a;
	struct dvx_mlx5_qp_wq_layout l;
	uint32_t wq, dbr = e_take(n, 64, 64);

	memset(&a, 0, sizeof(a));
	a.pdn = n->pd.pdn;
	a.uar_page = n->uar.page_id;
	a.user_index = 0x77;
	a.cqn_snd = scq->cqn;
	a.cqn_rcv = rcq->cqn;
	a.wq_umem_id = n->umem.id;
	a.dbr_umem_id = n->umem.id;
	a.dbr_offset = dbr;
	a.log_sq_size = E_LOG_SQ;
	a.rq_type = DVX_MLX5_RQ_TYPE_REGULAR;
	a.log_rq_size = E_LOG_RQ;
	a.log_rq_stride = E_RQ_STRIDE_LOG;
	a.log_msg_max = 30;
	a.cd_master = (uint8_t)cd_master;
	assert_int_equal(dvx_mlx5_qp_wq_layout(&a, &l), 0);
	wq = e_take(n, (uint32_t)l.end, 4096);
	a.wq_umem_offset = wq;
	assert_int_equal(dvx_mlx5_qp_wq_layout(&a, &l), 0);
	assert_int_equal(dvx_mlx5_create_qp_in(in, &a), 0);
	memset(&q->obj, 0, sizeof(q->obj));
	assert_int_equal(dvx_hal_obj_create(&n->hal, in, sizeof(in), out, sizeof(out), &q->obj), 0);
	assert_int_equal(dvx_mlx5_create_qp_out(out, sizeof(out), &q->qpn), 0);
	q->obj.id = q->qpn;
	assert_int_equal(dvx_mlx5_sq_init(&q->sq, &q->sqc,
					  &(struct dvx_mlx5_sq_cfg){
						  n->mem + l.sq_offset, 1u << E_LOG_SQ, q->qpn, 64,
						  (dvx_be32 *)(void *)(n->mem + dbr),
						  n->uar.reg_addr, 0, 0 }),
			 0);
	assert_int_equal(dvx_mlx5_rq_init(&q->rq, n->mem + l.rq_offset, 1u << E_LOG_RQ,
					  4 + E_RQ_STRIDE_LOG, (dvx_be32 *)(void *)(n->mem + dbr)),
			 0);
}

static void e_modify(struct e_nic *n, struct e_qp *q, const uint8_t *in)
{
	uint8_t out[DVX_MLX5_MODIFY_QP_OUT_BYTES];

	assert_int_equal(dvx_hal_obj_modify(&n->hal, &q->obj, in, DVX_MLX5_MODIFY_QP_IN_BYTES, out,
					    sizeof(out)), 0);
}

/* RST -> RTS, connected to @remote_qpn behind LID @rlid (or force-loopback to itself) */
static void e_connect(struct e_nic *n, struct e_qp *q, uint32_t remote_qpn, uint16_t rlid,
		      int loopback, uint8_t rnr_retry)
{
	uint8_t in[DVX_MLX5_MODIFY_QP_IN_BYTES];
	struct dvx_mlx5_rst2init_cfg ri;
	struct dvx_mlx5_init2rtr_cfg rr;
	struct dvx_mlx5_rtr2rts_cfg rs;

	memset(&ri, 0, sizeof(ri));
	ri.rre = ri.rwe = ri.rae = 1;
	ri.atomic_mode = DVX_MLX5_ATOMIC_MODE_UP_TO_8B;
	ri.vhca_port_num = 1;
	assert_int_equal(dvx_mlx5_rst2init_qp_in(in, q->qpn, &ri), 0);
	e_modify(n, q, in);
	if (loopback) {
		assert_int_equal(dvx_mlx5_init2rtr_loopback_qp_in(in, q->qpn, 1, 5), 0);
	} else {
		memset(&rr, 0, sizeof(rr));
		rr.remote_qpn = remote_qpn;
		rr.mtu = 5;
		rr.log_msg_max = 30;
		rr.min_rnr_nak = 12;
		rr.log_rra_max = 2;
		rr.path.vhca_port_num = 1;
		rr.path.rlid = rlid;
		assert_int_equal(dvx_mlx5_init2rtr_qp_in(in, q->qpn, &rr), 0);
	}
	e_modify(n, q, in);
	memset(&rs, 0, sizeof(rs));
	rs.retry_count = 7;
	rs.rnr_retry = rnr_retry;
	rs.ack_timeout = 14;
	rs.log_sra_max = 2;
	assert_int_equal(dvx_mlx5_rtr2rts_qp_in(in, q->qpn, &rs), 0);
	e_modify(n, q, in);
}

static int setup(void **state)
{
	struct dvx_sim_fabric_cfg fc;
	struct dvx_sim_nic_cfg nc;
	size_t len;
	int i;

	(void)state;
	memset(&E, 0, sizeof(E));
	dvx_sim_fabric_cfg_default(&fc);
	len = dvx_sim_fabric_mem_size(&fc);
	assert_true(len > 0);
	E.storage = aligned_alloc(64, (len + 63) & ~(size_t)63);
	assert_non_null(E.storage);
	assert_int_equal(dvx_sim_fabric_init(E.storage, len, &fc, &E.fab), 0);
	assert_int_equal(dvx_sim_set_reorder(E.fab, 0, 0), 0);	/* the in-order model's counts */
	for (i = 0; i < 2; i++) {
		dvx_sim_nic_cfg_default(&nc, (unsigned)i);
		nc.port[0].link_layer = DVX_LINK_LAYER_IB;
		nc.port[1].link_layer = DVX_LINK_LAYER_IB;
		nc.port[0].lid = (uint16_t)(0x21 + i);
		E.nic[i].lid = nc.port[0].lid;
		assert_int_equal(dvx_sim_add_nic(E.fab, &nc), i);
	}
	E.hal = dvx_sim_hal(E.fab);
	assert_non_null(E.hal);
	e_nic_open(0);
	e_nic_open(1);
	return 0;
}

static int teardown(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < 2; i++) {
		assert_int_equal(dvx_hal_nic_close(&E.nic[i].hal), 0);
	}
	assert_int_equal(dvx_sim_fini(E.fab), 0);
	for (i = 0; i < 2; i++)
		free(E.nic[i].mem);
	free(E.storage);
	return 0;
}

static uint8_t *data(int nic)
{
	return E.nic[nic].mem + E_DATA_OFF;
}

static void poll_ok(struct e_cq *c, struct dvx_mlx5_cqe_info *i)
{
	assert_int_equal(dvx_mlx5_cq_poll_one(&c->poll, i), 1);
}

/* A -> B over IB: RDMA WRITE 4 KiB, WRITE_IMM into a posted receive, READ back */
static void test_e2e_write_read(void **state)
{
	struct e_cq acq, bcq;
	struct e_qp a, b;
	struct dvx_mlx5_cqe_info i;
	struct dvx_mlx5_sge sge;
	struct dvx_sim_stats st;
	uint32_t k;
	uint64_t idx = 0, rnd[2] = { 0, 0 };

	(void)state;
	/* the host table's random bytes (a bootstrap with a job secret runs on this hal) */
	assert_int_equal(dvx_hal_random_bytes(E.hal, rnd, sizeof(rnd)), 0);
	assert_true(rnd[0] || rnd[1]);
	e_cq_create(&E.nic[0], &acq);
	e_cq_create(&E.nic[1], &bcq);
	e_qp_create(&E.nic[0], &a, &acq, &acq, 0);
	e_qp_create(&E.nic[1], &b, &bcq, &bcq, 0);
	e_connect(&E.nic[0], &a, b.qpn, E.nic[1].lid, 0, 7);
	e_connect(&E.nic[1], &b, a.qpn, E.nic[0].lid, 0, 7);
	for (k = 0; k < 4096; k++)
		data(0)[k] = (uint8_t)(k * 13 + 5);

	sge.addr = 0;
	sge.length = 0;
	sge.lkey = E.nic[1].mr.lkey;
	assert_true(dvx_mlx5_rq_post(&b.rq, &sge, 0) >= 0);
	dvx_mlx5_rq_ring(&b.rq);

	assert_int_equal(dvx_mlx5_sq_reserve(&a.sq, &a.sqc, 3, DVX_MLX5_SQ_SINGLE, &idx), 0);
	dvx_mlx5_wqe_rdma_write(&a.sq.wq, idx, DVX_MLX5_WQE_CTRL_CQ_UPDATE, E_IOVA + 8192,
				E.nic[1].mr.rkey, E_IOVA, E.nic[0].mr.lkey, 4096);
	dvx_mlx5_wqe_rdma_write_imm(&a.sq.wq, idx + 1, DVX_MLX5_WQE_CTRL_CQ_UPDATE, 0xfeed,
				    &(struct dvx_mlx5_raddr){ E_IOVA + 8192 + 4096,
							      E.nic[1].mr.rkey },
				    &(struct dvx_mlx5_sge){ E_IOVA, 16, E.nic[0].mr.lkey });
	dvx_mlx5_wqe_rdma_read(&a.sq.wq, idx + 2, DVX_MLX5_WQE_CTRL_CQ_UPDATE, E_IOVA + 8192,
			       E.nic[1].mr.rkey, E_IOVA + 16384, E.nic[0].mr.lkey, 4096);
	dvx_mlx5_sq_ring(&a.sq, &a.sqc, idx + 2);
	assert_true(dvx_sim_step(E.fab) >= 3);

	assert_memory_equal(data(1) + 8192, data(0), 4096);
	assert_memory_equal(data(1) + 8192 + 4096, data(0), 16);
	assert_memory_equal(data(0) + 16384, data(0), 4096);
	for (k = 0; k < 3; k++) {
		poll_ok(&acq, &i);
		assert_int_equal(i.opcode, DVX_MLX5_CQE_REQ);
		assert_int_equal(i.wqe_counter, k);
		assert_int_equal(i.qpn, a.qpn);
		assert_int_equal(i.srqn_uidx, 0x77);
	}
	assert_int_equal(i.byte_cnt, 4096);
	poll_ok(&bcq, &i);
	assert_int_equal(i.opcode, DVX_MLX5_CQE_RESP_WR_IMM);
	assert_int_equal(i.imm, 0xfeed);
	assert_int_equal(i.byte_cnt, 16);
	assert_int_equal(i.qpn, b.qpn);
	assert_int_equal(i.rqpn, a.qpn);
	assert_int_equal(dvx_sim_get_stats(E.fab, &st), 0);
	assert_int_equal(st.wqes_executed, 3);
	assert_int_equal(st.cqes_written, 4);
}

/* the companion pattern: WAIT on the main QP's CQ index, then a loopback fetch-add */
static void test_e2e_companion(void **state)
{
	struct e_cq acq, bcq, ccq;
	struct e_qp a, b, c;
	uint32_t k, n = 5;
	uint64_t idx = 0;
	uint64_t counter;

	(void)state;
	e_cq_create(&E.nic[0], &acq);
	e_cq_create(&E.nic[0], &ccq);
	e_cq_create(&E.nic[1], &bcq);
	e_qp_create(&E.nic[0], &a, &acq, &acq, 0);
	e_qp_create(&E.nic[0], &c, &ccq, &ccq, 1);
	e_qp_create(&E.nic[1], &b, &bcq, &bcq, 0);
	e_connect(&E.nic[0], &a, b.qpn, E.nic[1].lid, 0, 7);
	e_connect(&E.nic[1], &b, a.qpn, E.nic[0].lid, 0, 7);
	e_connect(&E.nic[0], &c, c.qpn, 0, 1, 7);
	memset(data(0) + 512, 0, 8);

	for (k = 0; k < n; k++) {
		/* companion first: it must wait for the main QP's CQE #k */
		assert_int_equal(dvx_mlx5_sq_reserve(&c.sq, &c.sqc, 2, DVX_MLX5_SQ_SINGLE, &idx), 0);
		dvx_mlx5_wqe_wait_cq(&c.sq.wq, idx, 0, acq.cqn, k);
		dvx_mlx5_wqe_atomic_fa(&c.sq.wq, idx + 1, 0, E_IOVA + 512, E.nic[0].mr.rkey, 1, 0,
				       E.nic[0].sink.lkey);
		dvx_mlx5_sq_ring(&c.sq, &c.sqc, idx + 1);
		assert_int_equal(dvx_sim_step(E.fab), 0);	/* blocked on the WAIT */
		memcpy(&counter, data(0) + 512, 8);
		assert_int_equal(counter, k);

		assert_int_equal(dvx_mlx5_sq_reserve(&a.sq, &a.sqc, 1, DVX_MLX5_SQ_SINGLE, &idx), 0);
		dvx_mlx5_wqe_rdma_write(&a.sq.wq, idx, DVX_MLX5_WQE_CTRL_CQ_UPDATE, E_IOVA + 64 * k,
					E.nic[1].mr.rkey, E_IOVA, E.nic[0].mr.lkey, 64);
		dvx_mlx5_sq_ring(&a.sq, &a.sqc, idx);
		assert_true(dvx_sim_step(E.fab) >= 3);
		memcpy(&counter, data(0) + 512, 8);
		assert_int_equal(counter, k + 1);
	}
	/* the sink got the old values, in host order (NIC in endianness mode 1) */
	memcpy(&counter, E.sink, 8);
	assert_int_equal(counter, n - 1);
}

/* a bad rkey: error CQE on the requester, both QPs in ERR, later WQEs flushed */
static void test_e2e_error(void **state)
{
	struct e_cq acq, bcq;
	struct e_qp a, b;
	struct dvx_mlx5_cqe_info i;
	uint64_t idx = 0;
	uint8_t in[DVX_MLX5_QUERY_QP_IN_BYTES], out[DVX_MLX5_QUERY_QP_OUT_BYTES];
	struct dvx_mlx5_qp_query q;

	(void)state;
	e_cq_create(&E.nic[0], &acq);
	e_cq_create(&E.nic[1], &bcq);
	e_qp_create(&E.nic[0], &a, &acq, &acq, 0);
	e_qp_create(&E.nic[1], &b, &bcq, &bcq, 0);
	e_connect(&E.nic[0], &a, b.qpn, E.nic[1].lid, 0, 7);
	e_connect(&E.nic[1], &b, a.qpn, E.nic[0].lid, 0, 7);

	assert_int_equal(dvx_mlx5_sq_reserve(&a.sq, &a.sqc, 2, DVX_MLX5_SQ_SINGLE, &idx), 0);
	dvx_mlx5_wqe_rdma_write(&a.sq.wq, idx, 0, E_IOVA, E.nic[1].mr.rkey ^ 0x100, E_IOVA,
				E.nic[0].mr.lkey, 8);
	dvx_mlx5_wqe_nop(&a.sq.wq, idx + 1, 0);
	dvx_mlx5_sq_ring(&a.sq, &a.sqc, idx + 1);
	dvx_sim_step(E.fab);
	assert_int_equal(dvx_mlx5_cq_poll_one(&acq.poll, &i), -EPERM);
	assert_int_equal(i.syndrome, DVX_MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
	assert_int_equal(i.wqe_counter, 0);
	assert_int_equal(i.qpn, a.qpn);
	assert_int_equal(dvx_mlx5_cq_poll_one(&acq.poll, &i), -ECANCELED);
	assert_int_equal(i.wqe_counter, 1);
	assert_int_equal(dvx_mlx5_cq_poll_one(&acq.poll, &i), 0);

	/* QUERY_QP says ERR, for the requester and (remote access error) the responder */
	assert_int_equal(dvx_mlx5_query_qp_in(in, a.qpn), 0);
	assert_int_equal(dvx_hal_obj_query(&E.nic[0].hal, &a.obj, in, sizeof(in), out,
					   sizeof(out)), 0);
	assert_int_equal(dvx_mlx5_query_qp_out(out, sizeof(out), &q), 0);
	assert_int_equal(q.state, DVX_MLX5_QP_STATE_ERR);
	assert_int_equal(dvx_mlx5_query_qp_in(in, b.qpn), 0);
	assert_int_equal(dvx_hal_obj_query(&E.nic[1].hal, &b.obj, in, sizeof(in), out,
					   sizeof(out)), 0);
	assert_int_equal(dvx_mlx5_query_qp_out(out, sizeof(out), &q), 0);
	assert_int_equal(q.state, DVX_MLX5_QP_STATE_ERR);
}

/* link down (dvx_sim_set_port): retries exhausted, TRANSPORT_RETRY_EXC_ERR */
static void test_e2e_link_down(void **state)
{
	struct e_cq acq, bcq;
	struct e_qp a, b;
	struct dvx_mlx5_cqe_info i;
	uint64_t idx = 0;
	int k, rc = 0;

	(void)state;
	e_cq_create(&E.nic[0], &acq);
	e_cq_create(&E.nic[1], &bcq);
	e_qp_create(&E.nic[0], &a, &acq, &acq, 0);
	e_qp_create(&E.nic[1], &b, &bcq, &bcq, 0);
	e_connect(&E.nic[0], &a, b.qpn, E.nic[1].lid, 0, 7);
	e_connect(&E.nic[1], &b, a.qpn, E.nic[0].lid, 0, 7);
	assert_int_equal(dvx_sim_set_port(E.fab, 1, 1, 0), 0);
	assert_int_equal(dvx_mlx5_sq_reserve(&a.sq, &a.sqc, 1, DVX_MLX5_SQ_SINGLE, &idx), 0);
	dvx_mlx5_wqe_rdma_write(&a.sq.wq, idx, DVX_MLX5_WQE_CTRL_CQ_UPDATE, E_IOVA,
				E.nic[1].mr.rkey, E_IOVA, E.nic[0].mr.lkey, 8);
	dvx_mlx5_sq_ring(&a.sq, &a.sqc, idx);
	/* 8 tries, SIM_EXEC_RETRY_NS apart: step until the CQE shows up (bounded count) */
	for (k = 0; k < 1000000 && !rc; k++) {
		dvx_sim_step(E.fab);
		rc = dvx_mlx5_cq_poll_one(&acq.poll, &i);
	}
	assert_int_equal(rc, -EHOSTUNREACH);
	assert_int_equal(i.syndrome, DVX_MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_e2e_write_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_e2e_companion, setup, teardown),
		cmocka_unit_test_setup_teardown(test_e2e_error, setup, teardown),
		cmocka_unit_test_setup_teardown(test_e2e_link_down, setup, teardown),
	};

	return cmocka_run_group_tests_name("sim-e2e", tests, NULL, NULL);
}
