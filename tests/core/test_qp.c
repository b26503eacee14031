// SPDX-License-Identifier: MIT
/*
 * core-qp-test: dvx_cq and dvx_qp (create, connect IB/RoCE/loopback/pair, 2ERR,
 * recovery, query, destroy) against the mock ConnectX-7: the mailboxes the hal got,
 * decoded field by field, bad input, and every hal call / DEVX command failed in turn.
 */
#include "fixture.h"

static struct dvx_nic nic;
static struct dvx_umem um;
static struct dvx_cq cq, cq2;
static struct dvx_qp qp, qp2;

/* layout inside the 256 KiB umem */
#define RING_OFF 0x0u		/* CQ ring, 64 x 64 B */
#define RING2_OFF 0x1000u
#define WQ_OFF 0x4000u		/* QP work queues */
#define WQ2_OFF 0x10000u
#define DBR_OFF 0x3f000u	/* records, 8 B apart */

/* on the mock as it is (setup() makes a RoCE one; fx_mock(0) an IB one) */
static void base(int roce)
{
	assert_int_equal(fx_open(&nic), 0);
	assert_int_equal(nic.roce, roce);
	fx_umem(&nic, &um, 0, 0x40000);
}

static void base_cq(int roce)
{
	struct dvx_cq_cfg a;

	base(roce);
	fx_cq_attr(&a, &um, RING_OFF, DBR_OFF, 64);
	assert_int_equal(dvx_cq_create(&nic, &a, &cq), 0);
	fx_cq_attr(&a, &um, RING2_OFF, DBR_OFF + 8, 64);
	assert_int_equal(dvx_cq_create(&nic, &a, &cq2), 0);
}

static void base_qps(int roce)
{
	struct dvx_qp_cfg a;

	base_cq(roce);
	fx_qp_attr(&a, &cq, &um, WQ_OFF, DBR_OFF + 16);
	assert_int_equal(dvx_qp_create(&nic, &a, &qp), 0);
	fx_qp_attr(&a, &cq2, &um, WQ2_OFF, DBR_OFF + 24);
	assert_int_equal(dvx_qp_create(&nic, &a, &qp2), 0);
}

static void teardown_all(void)
{
	if (qp2.live)
		assert_int_equal(dvx_qp_destroy(&qp2), 0);
	if (qp.live)
		assert_int_equal(dvx_qp_destroy(&qp), 0);
	if (cq2.live)
		assert_int_equal(dvx_cq_destroy(&cq2), 0);
	if (cq.live)
		assert_int_equal(dvx_cq_destroy(&cq), 0);
	if (um.live)
		assert_int_equal(dvx_umem_dereg(&um), 0);
	if (nic.open)
		assert_int_equal(dvx_nic_close(&nic), 0);
	assert_int_equal(dvx_mock_live_total(&M), 0);
	assert_int_equal(M.closed_with_live, 0);
}

static int setup(void **state)
{
	(void)state;
	memset(&qp, 0, sizeof(qp));
	memset(&qp2, 0, sizeof(qp2));
	memset(&cq, 0, sizeof(cq));
	memset(&cq2, 0, sizeof(cq2));
	memset(&um, 0, sizeof(um));
	memset(&nic, 0, sizeof(nic));
	fx_mock(1);
	return 0;
}

#define GET(mb, f) dvx_mlx5_get(mb, f)
/* a field of the context a mailbox carries */
#define CQC_GET(mb, f) dvx_mlx5_get(DVX_MLX5_CQC_IN(mb), f)
#define QPC_GET(mb, f) dvx_mlx5_get(DVX_MLX5_QPC_IN(mb), f)
#define ADS_GET(mb, f) dvx_mlx5_get(DVX_MLX5_ADS_IN(mb), f)

/* ---- CQ ---- */

static void test_cq_create(void **state)
{
	struct dvx_cq_cfg a;
	struct dvx_mem_req ring, dbr;
	const uint8_t *in;
	uint32_t i;

	(void)state;
	base(1);
	memset(fx_mem + RING_OFF, 0x5a, 64 * 64);
	memset(fx_mem + DBR_OFF, 0x5a, 8);
	fx_cq_attr(&a, &um, RING_OFF, DBR_OFF, 64);
	a.flags = DVX_CQ_F_OI;
	assert_int_equal(dvx_cq_mem_req(&a, &ring, &dbr), 0);
	assert_int_equal(ring.bytes, 4096);
	assert_int_equal(ring.bytes, DVX_CQ_RING_BYTES(64));
	assert_int_equal(ring.align, DVX_RING_ALIGN);
	assert_int_equal(dbr.bytes, 8);
	assert_int_equal(dbr.align, 8);
	assert_int_equal(dvx_cq_create(&nic, &a, &cq), 0);

	in = fx_mbox_last(DVX_MLX5_CMD_CREATE_CQ);
	assert_non_null(in);
	assert_int_equal(dvx_mock_last(&M, DVX_MOCK_OP_OBJ_CREATE)->inlen,
			 DVX_MLX5_CREATE_CQ_IN_BYTES);
	assert_int_equal(CQC_GET(in, DVX_MLX5_CQC_LOG_CQ_SIZE), 6);
	assert_int_equal(CQC_GET(in, DVX_MLX5_CQC_UAR_PAGE), nic.uar.page_id);
	assert_int_equal(CQC_GET(in, DVX_MLX5_CQC_C_EQN), 7);
	assert_int_equal(CQC_GET(in, DVX_MLX5_CQC_CQE_SZ), DVX_MLX5_CQE_SZ_64);
	assert_int_equal(CQC_GET(in, DVX_MLX5_CQC_OI), 1);
	assert_int_equal(CQC_GET(in, DVX_MLX5_CQC_CC), 0);
	assert_int_equal(CQC_GET(in, DVX_MLX5_CQC_DBR_UMEM_VALID), 1);
	assert_int_equal(CQC_GET(in, DVX_MLX5_CQC_DBR_UMEM_ID), um.id);
	assert_int_equal(dvx_mlx5_get64(DVX_MLX5_CQC_IN(in), DVX_MLX5_CQC_DBR_ADDR), DBR_OFF);
	assert_int_equal(GET(in, DVX_MLX5_CREATE_CQ_IN_CQ_UMEM_ID), um.id);
	assert_int_equal(dvx_mlx5_get64(in, DVX_MLX5_CREATE_CQ_IN_CQ_UMEM_OFFSET), RING_OFF);
	assert_int_equal(GET(in, DVX_MLX5_CREATE_CQ_IN_CQ_UMEM_VALID), 1);
	assert_int_equal(CQC_GET(in, DVX_MLX5_CQC_LOG_PAGE_SIZE), 0);
	assert_int_equal(CQC_GET(in, DVX_MLX5_CQC_PAGE_OFFSET), 0);

	/* ring state and caller memory */
	assert_int_equal(cq.cqn, dvx_mock_last(&M, DVX_MOCK_OP_OBJ_CREATE)->id);
	assert_int_equal(cq.mcq.cqn, cq.cqn);
	assert_ptr_equal(cq.mcq.buf, fx_mem + RING_OFF);
	assert_int_equal(cq.mcq.log_size, 6);
	assert_int_equal(cq.mcq.ci, 0);
	assert_ptr_equal(cq.mcq.dbrec, (void *)(fx_mem + DBR_OFF));
	for (i = 0; i < 64; i++)
		assert_int_equal(fx_mem[RING_OFF + i * 64 + 63], DVX_MLX5_CQE_INIT_OP_OWN);
	assert_int_equal(fx_mem[RING_OFF + 62], 0x5a);	/* only op_own is written */
	/* the record: consumer index 0, the arm word of a polled CQ (sequence 2) */
	assert_bytes_equal(fx_mem + DBR_OFF, "\0\0\0\0\x20\0\0\0", 8);
	assert_int_equal(um.users, 2);
	assert_int_equal(nic.uar.users, 1);
	assert_int_equal(dvx_umem_dereg(&um), -EBUSY);
	assert_int_equal(dvx_cq_destroy(&cq), 0);
	assert_int_equal(dvx_cq_destroy(&cq), -EINVAL);
	assert_int_equal(um.users, 0);

	/* collapsed: one entry */
	a.flags = DVX_CQ_F_OI | DVX_CQ_F_COLLAPSED;
	assert_int_equal(dvx_cq_mem_req(&a, &ring, NULL), 0);
	assert_int_equal(ring.bytes, 64);
	assert_int_equal(dvx_cq_create(&nic, &a, &cq), 0);
	in = fx_mbox_last(DVX_MLX5_CMD_CREATE_CQ);
	assert_int_equal(CQC_GET(in, DVX_MLX5_CQC_CC), 1);
	assert_int_equal(CQC_GET(in, DVX_MLX5_CQC_OI), 1);
	assert_int_equal(CQC_GET(in, DVX_MLX5_CQC_LOG_CQ_SIZE), 6);
	assert_int_equal(cq.mcq.log_size, 0);
	assert_int_equal(dvx_cq_destroy(&cq), 0);

	/* the CQ's own UAR */
	{
		struct dvx_uar u;

		assert_int_equal(dvx_uar_alloc(&nic, DVX_UAR_PREF_NC, &u), 0);
		a.uar = &u;
		a.flags = 0;
		assert_int_equal(dvx_cq_create(&nic, &a, &cq), 0);
		assert_int_equal(CQC_GET(fx_mbox_last(DVX_MLX5_CMD_CREATE_CQ), DVX_MLX5_CQC_UAR_PAGE),
				 u.page_id);
		assert_int_equal(dvx_uar_free(&u), -EBUSY);
		assert_int_equal(dvx_cq_destroy(&cq), 0);
		assert_int_equal(dvx_uar_free(&u), 0);
	}
	teardown_all();
}

static void test_cq_bad(void **state)
{
	struct dvx_cq_cfg a;
	struct dvx_umem_cfg ua;
	struct dvx_umem gpu;
	uint32_t calls;

	(void)state;
	base(1);
	calls = dvx_mock_calls(&M);
	fx_cq_attr(&a, &um, RING_OFF, DBR_OFF, 64);
	assert_int_equal(dvx_cq_create(&nic, NULL, &cq), -EINVAL);
	a.depth = 0;
	assert_int_equal(dvx_cq_create(&nic, &a, &cq), -EINVAL);
	assert_non_null(strstr(nic.hal.diag.msg, "power of two"));
	a.depth = 48;
	assert_int_equal(dvx_cq_create(&nic, &a, &cq), -EINVAL);
	assert_int_equal(dvx_cq_mem_req(&a, NULL, NULL), -EINVAL);
	a.depth = 64;
	a.flags = DVX_CQ_F_COLLAPSED;		/* without overrun ignore */
	assert_int_equal(dvx_cq_create(&nic, &a, &cq), -EINVAL);
	a.flags = 0x100;
	assert_int_equal(dvx_cq_create(&nic, &a, &cq), -EINVAL);
	a.flags = 0;
	a.ring_offset = 32;			/* misaligned */
	assert_int_equal(dvx_cq_create(&nic, &a, &cq), -EINVAL);
	assert_non_null(strstr(nic.hal.diag.msg, "ring: offset misaligned"));
	a.ring_offset = 0x40000 - 2048;		/* runs past the umem */
	assert_int_equal(dvx_cq_create(&nic, &a, &cq), -EINVAL);
	assert_non_null(strstr(nic.hal.diag.msg, "past the end"));
	a.ring_offset = RING_OFF;
	a.dbr_offset = DBR_OFF + 4;
	assert_int_equal(dvx_cq_create(&nic, &a, &cq), -EINVAL);
	assert_non_null(strstr(nic.hal.diag.msg, "doorbell record"));
	a.dbr_offset = 0x40000;
	assert_int_equal(dvx_cq_create(&nic, &a, &cq), -EINVAL);
	a.dbr_offset = DBR_OFF;
	a.ring_umem = NULL;
	assert_int_equal(dvx_cq_create(&nic, &a, &cq), -EINVAL);
	a.ring_umem = &um;
	a.depth = 1u << 23;			/* above the CX-7's 2^22 */
	assert_int_equal(dvx_cq_create(&nic, &a, &cq), -EOPNOTSUPP);
	a.depth = 64;
	assert_int_equal(dvx_mock_calls(&M), calls);
	assert_int_equal(cq.live, 0);

	/* a ring the CPU cannot write must come initialised */
	memset(&ua, 0, sizeof(ua));
	ua.addr = (void *)(uintptr_t)0x7f0000000000ull;
	ua.len = 1u << 16;
	ua.dmabuf_fd = 11;
	ua.flags = DVX_UMEM_F_DMABUF;
	assert_int_equal(dvx_umem_reg(&nic, &ua, &gpu), 0);
	a.ring_umem = &gpu;
	a.dbr_umem = &gpu;
	a.dbr_offset = 0x8000;
	assert_int_equal(dvx_cq_create(&nic, &a, &cq), -EINVAL);
	assert_non_null(strstr(nic.hal.diag.msg, "DVX_CQ_F_PREINIT"));
	a.flags = DVX_CQ_F_PREINIT;
	assert_int_equal(dvx_cq_create(&nic, &a, &cq), 0);	/* and nothing written */
	assert_int_equal(dvx_cq_destroy(&cq), 0);
	assert_int_equal(dvx_umem_dereg(&gpu), 0);

	/* overrun ignore on a device without it */
	assert_int_equal(dvx_umem_dereg(&um), 0);
	assert_int_equal(dvx_nic_close(&nic), 0);
	fx_cap(GENERAL, DVX_MLX5_CAP_CQ_OI, 0);
	base(1);
	fx_cq_attr(&a, &um, RING_OFF, DBR_OFF, 64);
	a.flags = DVX_CQ_F_OI;
	assert_int_equal(dvx_cq_create(&nic, &a, &cq), -EOPNOTSUPP);
	assert_non_null(strstr(nic.hal.diag.msg, "overrun"));
	teardown_all();
}

/* ---- QP create ---- */

static void test_qp_create(void **state)
{
	struct dvx_qp_cfg a;
	struct dvx_mem_req wq, dbr;
	const uint8_t *in;

	(void)state;
	base_cq(1);
	memset(fx_mem + DBR_OFF + 16, 0x77, 8);
	fx_qp_attr(&a, &cq, &um, WQ_OFF, DBR_OFF + 16);
	a.user_index = 0xabcdef;
	a.psn = 0x123456;
	a.flags = DVX_QP_F_CD_MASTER;
	assert_int_equal(dvx_qp_mem_req(&a, &wq, &dbr), 0);
	assert_int_equal(wq.bytes, 64 * 64);
	assert_int_equal(wq.bytes, DVX_QP_WQ_BYTES(64, 0, 0));
	assert_int_equal(dbr.bytes, DVX_DBR_BYTES);
	assert_int_equal(dvx_qp_create(&nic, &a, &qp), 0);

	in = fx_mbox_last(DVX_MLX5_CMD_CREATE_QP);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_ST), DVX_MLX5_QP_ST_RC);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_PM_STATE), DVX_MLX5_QP_PM_STATE_MIGRATED);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_PD), nic.pdn);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_UAR_PAGE), nic.uar.page_id);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_USER_INDEX), 0xabcdef);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_CQN_SND), cq.cqn);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_CQN_RCV), 0);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_LOG_SQ_SIZE), 6);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_RQ_TYPE), DVX_MLX5_RQ_TYPE_ZERO);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_LOG_RQ_SIZE), 0);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_LOG_MSG_MAX), 30);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_CD_MASTER), 1);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_CD_SLAVE_SEND), 0);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_CD_SLAVE_RECEIVE), 0);
	/* cd_master did not spill */
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_NEXT_RCV_PSN), 0);
	/* reserved with the WQ in a umem (prm 1.5.1) */
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_LOG_PAGE_SIZE), 0);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_PAGE_OFFSET), 0);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_DBR_UMEM_VALID), 1);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_DBR_UMEM_ID), um.id);
	assert_int_equal(dvx_mlx5_get64(DVX_MLX5_QPC_IN(in), DVX_MLX5_QPC_DBR_ADDR), DBR_OFF + 16);
	assert_int_equal(GET(in, DVX_MLX5_CREATE_QP_IN_WQ_UMEM_ID), um.id);
	assert_int_equal(dvx_mlx5_get64(in, DVX_MLX5_CREATE_QP_IN_WQ_UMEM_OFFSET), WQ_OFF);
	assert_int_equal(GET(in, DVX_MLX5_CREATE_QP_IN_WQ_UMEM_VALID), 1);
	assert_int_equal(GET(in, DVX_MLX5_CREATE_QP_IN_OPT_PARAM_MASK), 0);

	/* ring state users post with */
	assert_int_equal(qp.qpn, dvx_mock_last(&M, DVX_MOCK_OP_OBJ_CREATE)->id);
	assert_int_equal(qp.sq.wq.qpn, qp.qpn);
	assert_ptr_equal(qp.sq.wq.buf, fx_mem + WQ_OFF);
	assert_int_equal(qp.sq.nwqebb, 64);
	assert_int_equal(qp.sq.wq.max_inline, 28);
	assert_ptr_equal(qp.sq.dbrec, (void *)(fx_mem + DBR_OFF + 16));
	assert_ptr_equal(qp.sq.uar_reg, nic.uar.reg);
	assert_int_equal(qp.sq.bf_half, 0);
	assert_int_equal(qp.sq.db_qpn, dvx_mlx5_sq_db_value(0, qp.qpn));
	assert_int_equal(qp.rq.nwqe, 0);
	assert_int_equal(qp.state, DVX_MLX5_QP_STATE_RST);
	assert_int_equal(qp.max_wqe_bytes, 64);	/* 16 + 16 + 4 + 28 */
	assert_int_equal(fx_mem[DBR_OFF + 16], 0);	/* record zeroed */
	assert_int_equal(fx_mem[DBR_OFF + 23], 0);
	assert_int_equal(cq.users, 1);
	assert_int_equal(dvx_cq_destroy(&cq), -EBUSY);

	/* with a receive queue (RQ first, SQ behind), a receive CQ, larger inline */
	fx_qp_attr(&a, &cq2, &um, WQ2_OFF, DBR_OFF + 24);
	a.rq_depth = 16;
	a.rq_max_sge = 3;
	a.recv_cq = &cq;
	a.max_inline = 200;
	a.flags = DVX_QP_F_CD_SLAVE_SEND | DVX_QP_F_CD_SLAVE_RECV;
	assert_int_equal(dvx_qp_mem_req(&a, &wq, NULL), 0);
	assert_int_equal(wq.bytes, 16 * 64 + 64 * 64);
	assert_int_equal(wq.bytes, DVX_QP_WQ_BYTES(64, 16, DVX_RQ_STRIDE(3)));
	assert_int_equal(dvx_qp_create(&nic, &a, &qp2), 0);
	in = fx_mbox_last(DVX_MLX5_CMD_CREATE_QP);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_RQ_TYPE), DVX_MLX5_RQ_TYPE_REGULAR);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_LOG_RQ_SIZE), 4);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_LOG_RQ_STRIDE), 2);	/* 64 B = 16 << 2 */
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_CQN_RCV), cq.cqn);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_CQN_SND), cq2.cqn);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_CD_MASTER), 0);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_CD_SLAVE_SEND), 1);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_CD_SLAVE_RECEIVE), 1);
	assert_ptr_equal(qp2.rq.buf, fx_mem + WQ2_OFF);
	assert_int_equal(qp2.rq.nwqe, 16);
	assert_int_equal(qp2.rq.max_sge, 4);
	assert_ptr_equal(qp2.sq.wq.buf, fx_mem + WQ2_OFF + 16 * 64);
	assert_int_equal(qp2.max_wqe_bytes, 240);	/* 36 + 200 rounded to 16 */
	assert_int_equal(cq.users, 2);
	teardown_all();
}

static void test_qp_bad(void **state)
{
	struct dvx_qp_cfg a;
	uint32_t calls;

	(void)state;
	base_cq(1);
	calls = dvx_mock_calls(&M);
	fx_qp_attr(&a, &cq, &um, WQ_OFF, DBR_OFF + 16);
	a.sq_depth = 0;
	assert_int_equal(dvx_qp_create(&nic, &a, &qp), -EINVAL);
	a.sq_depth = 96;
	assert_int_equal(dvx_qp_create(&nic, &a, &qp), -EINVAL);
	assert_int_equal(dvx_qp_mem_req(&a, NULL, NULL), -EINVAL);
	a.sq_depth = 1 << 16;
	assert_int_equal(dvx_qp_create(&nic, &a, &qp), -EINVAL);
	a.sq_depth = 2;
	a.max_inline = 500;			/* one WQE bigger than the ring */
	assert_int_equal(dvx_qp_create(&nic, &a, &qp), -EINVAL);
	a.sq_depth = 64;
	a.max_inline = 2000;
	assert_int_equal(dvx_qp_create(&nic, &a, &qp), -EINVAL);
	a.max_inline = 28;
	a.rq_depth = 8;				/* without SGEs */
	assert_int_equal(dvx_qp_create(&nic, &a, &qp), -EINVAL);
	a.rq_depth = 0;
	a.rq_max_sge = 1;			/* SGEs without an RQ */
	assert_int_equal(dvx_qp_create(&nic, &a, &qp), -EINVAL);
	a.rq_max_sge = 0;
	a.recv_cq = &cq2;			/* receive CQ without an RQ */
	assert_int_equal(dvx_qp_create(&nic, &a, &qp), -EINVAL);
	a.recv_cq = NULL;
	a.flags = DVX_QP_F_CD_SLAVE_RECV;
	assert_int_equal(dvx_qp_create(&nic, &a, &qp), -EINVAL);
	a.flags = 0;
	a.send_cq = NULL;
	assert_int_equal(dvx_qp_create(&nic, &a, &qp), -EINVAL);
	a.send_cq = &cq;
	a.wq_offset = WQ_OFF + 32;
	assert_int_equal(dvx_qp_create(&nic, &a, &qp), -EINVAL);
	assert_non_null(strstr(nic.hal.diag.msg, "work queue"));
	a.wq_offset = 0x40000 - 2048;
	assert_int_equal(dvx_qp_create(&nic, &a, &qp), -EINVAL);
	a.wq_offset = WQ_OFF;
	a.dbr_offset = DBR_OFF + 20;
	assert_int_equal(dvx_qp_create(&nic, &a, &qp), -EINVAL);
	a.dbr_offset = DBR_OFF + 16;
	a.user_index = 1u << 24;
	assert_int_equal(dvx_qp_create(&nic, &a, &qp), -EINVAL);
	a.user_index = 0;
	a.rq_depth = 8;
	a.rq_max_sge = 40;			/* 640 B receives on a 512 B device */
	assert_int_equal(dvx_qp_create(&nic, &a, &qp), -EOPNOTSUPP);
	assert_int_equal(dvx_mock_calls(&M), calls);
	teardown_all();

	/* core-direct bits on a device without core-direct */
	fx_mock(1);
	fx_cap(GENERAL, DVX_MLX5_CAP_CD, 0);
	base_cq(1);
	fx_qp_attr(&a, &cq, &um, WQ_OFF, DBR_OFF + 16);
	a.flags = DVX_QP_F_CD_MASTER;
	assert_int_equal(dvx_qp_create(&nic, &a, &qp), -EOPNOTSUPP);
	assert_non_null(strstr(nic.hal.diag.msg, "core-direct"));
	a.flags = 0;
	assert_int_equal(dvx_qp_create(&nic, &a, &qp), 0);
	teardown_all();
}

static void test_companion_shares_uar(void **state)
{
	struct dvx_qp_cfg a;
	struct dvx_cq_cfg ca;
	struct dvx_uar bf;

	(void)state;
	base_cq(1);
	assert_int_equal(dvx_uar_alloc(&nic, DVX_UAR_PREF_BF, &bf), 0);
	fx_qp_attr(&a, &cq, &um, WQ_OFF, DBR_OFF + 16);
	a.uar = &bf;
	assert_int_equal(dvx_qp_create(&nic, &a, &qp), 0);
	assert_int_equal(qp.sq.bf_half, 256);		/* the first user rings BlueFlame */
	/* a second QP on a BlueFlame register: refused (BlueFlame copies and its
	 * doorbells on one write-combining register would need a common lock) */
	fx_qp_attr(&a, &cq2, &um, WQ2_OFF, DBR_OFF + 24);
	a.uar = qp.uar;
	a.flags = DVX_QP_F_CD_MASTER;
	assert_int_equal(dvx_qp_create(&nic, &a, &qp2), -EBUSY);
	assert_non_null(strstr(nic.hal.diag.msg, "serves one QP"));
	assert_int_equal(qp2.live, 0);
	assert_int_equal(bf.qps, 1);
	/* a non-cached register is shared: the companion shares its main QP's */
	assert_int_equal(dvx_qp_destroy(&qp), 0);
	assert_int_equal(dvx_uar_free(&bf), 0);
	assert_int_equal(dvx_uar_alloc(&nic, DVX_UAR_PREF_NC, &bf), 0);
	fx_qp_attr(&a, &cq, &um, WQ_OFF, DBR_OFF + 16);
	a.uar = &bf;
	assert_int_equal(dvx_qp_create(&nic, &a, &qp), 0);
	fx_qp_attr(&a, &cq2, &um, WQ2_OFF, DBR_OFF + 24);
	a.uar = qp.uar;					/* the companion shares it */
	a.flags = DVX_QP_F_CD_MASTER;
	assert_int_equal(dvx_qp_create(&nic, &a, &qp2), 0);
	assert_int_equal(QPC_GET(fx_mbox_last(DVX_MLX5_CMD_CREATE_QP), DVX_MLX5_QPC_UAR_PAGE),
			 bf.page_id);
	assert_ptr_equal(qp2.sq.uar_reg, qp.sq.uar_reg);
	assert_int_equal(qp.sq.bf_half, 0);
	assert_int_equal(qp2.sq.bf_half, 0);
	assert_int_equal(bf.users, 2);
	assert_int_equal(bf.qps, 2);
	assert_int_equal(dvx_uar_free(&bf), -EBUSY);
	assert_int_equal(dvx_nic_close(&nic), -EBUSY);
	assert_int_equal(dvx_qp_destroy(&qp2), 0);
	assert_int_equal(dvx_qp_destroy(&qp), 0);
	assert_int_equal(dvx_uar_free(&bf), 0);
	teardown_all();
	/* the NIC's default register, BlueFlame or not, is shared: plain doorbells */
	fx_mock(1);
	assert_int_equal(fx_open_attr(&nic, DVX_UAR_PREF_BF, 0, -1), 0);
	assert_int_equal(nic.uar.bf_half, 256);
	fx_umem(&nic, &um, 0, 0x40000);
	fx_cq_attr(&ca, &um, RING_OFF, DBR_OFF, 64);
	assert_int_equal(dvx_cq_create(&nic, &ca, &cq), 0);
	fx_qp_attr(&a, &cq, &um, WQ_OFF, DBR_OFF + 16);
	assert_int_equal(dvx_qp_create(&nic, &a, &qp), 0);
	assert_int_equal(qp.sq.bf_half, 0);
	teardown_all();
}

/* ---- connect ---- */

static void check_rst2init(const uint8_t *in, uint32_t qpn, unsigned atomic_mode)
{
	assert_non_null(in);
	assert_int_equal(GET(in, DVX_MLX5_MODIFY_QP_IN_QPN), qpn);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_PM_STATE), DVX_MLX5_QP_PM_STATE_MIGRATED);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_RRE), 1);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_RWE), 1);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_RAE), atomic_mode != 0);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_ATOMIC_MODE), atomic_mode);
	assert_int_equal(ADS_GET(in, DVX_MLX5_ADS_VHCA_PORT_NUM), 1);
	assert_int_equal(ADS_GET(in, DVX_MLX5_ADS_PKEY_INDEX), 0);
	assert_int_equal(GET(in, DVX_MLX5_MODIFY_QP_IN_OPT_PARAM_MASK), 0);
}

static void check_rtr2rts(const uint8_t *in, uint32_t qpn, uint32_t psn)
{
	assert_non_null(in);
	assert_int_equal(GET(in, DVX_MLX5_MODIFY_QP_IN_QPN), qpn);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_NEXT_SEND_PSN), psn);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_RETRY_COUNT), 7);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_RNR_RETRY), 7);
	assert_int_equal(ADS_GET(in, DVX_MLX5_ADS_ACK_TIMEOUT), 20);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_LOG_SRA_MAX), 4);	/* 16 outstanding */
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_LOG_ACK_REQ_FREQ), 0);
}

static void test_connect_roce(void **state)
{
	static const uint8_t peer_gid[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
					      192, 168, 1, 20 };
	struct dvx_qp_conn me, peer;
	const struct dvx_mock_call *c;
	const uint8_t *in;
	uint32_t calls;

	(void)state;
	base_qps(1);
	qp.psn = 0x111;
	assert_int_equal(dvx_qp_export(&qp, &me), 0);
	assert_int_equal(me.version, DVX_QP_CONN_VERSION);
	assert_int_equal(me.link_layer, DVX_LINK_LAYER_ETHERNET);
	assert_int_equal(dvx_be32_to_cpu(me.qpn), qp.qpn);
	assert_int_equal(dvx_be32_to_cpu(me.psn), 0x111);
	assert_int_equal(((const uint8_t *)&me.qpn)[3], qp.qpn & 0xff);	/* big-endian */
	assert_memory_equal(me.gid, nic.gid.raw, 16);
	assert_int_equal(me.mtu, nic.mtu);

	peer = me;
	peer.qpn = dvx_cpu_to_be32(0x4242);
	peer.psn = dvx_cpu_to_be32(0xabcdef);
	peer.mtu = DVX_MLX5_MTU_1024;
	memcpy(peer.gid, peer_gid, 16);
	fx_mbox_reset();
	assert_int_equal(dvx_qp_connect(&qp, &peer, NULL), 0);
	assert_int_equal(qp.state, DVX_MLX5_QP_STATE_RTS);
	assert_int_equal(qp.conn_kind, DVX_QP_CONN_REMOTE);
	assert_int_equal(dvx_mock_count(&M, DVX_MOCK_OP_ROCE_RMAC), 1);
	c = dvx_mock_last(&M, DVX_MOCK_OP_ROCE_RMAC);
	assert_int_equal(c->port, 1);
	assert_int_equal(c->index, 3);		/* our GID index */

	check_rst2init(fx_mbox_last(DVX_MLX5_CMD_RST2INIT_QP), qp.qpn, 3);
	in = fx_mbox_last(DVX_MLX5_CMD_INIT2RTR_QP);
	assert_non_null(in);
	assert_int_equal(GET(in, DVX_MLX5_MODIFY_QP_IN_QPN), qp.qpn);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_MTU), DVX_MLX5_MTU_1024);	/* min of both */
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_LOG_MSG_MAX), 30);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_REMOTE_QPN), 0x4242);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_NEXT_RCV_PSN), 0xabcdef);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_MIN_RNR_NAK), 12);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_LOG_RRA_MAX), 4);
	assert_int_equal(ADS_GET(in, DVX_MLX5_ADS_FL), 0);
	assert_int_equal(ADS_GET(in, DVX_MLX5_ADS_GRH), 0);
	assert_int_equal(ADS_GET(in, DVX_MLX5_ADS_RLID), 0);
	assert_int_equal(ADS_GET(in, DVX_MLX5_ADS_SRC_ADDR_INDEX), 3);
	assert_int_equal(ADS_GET(in, DVX_MLX5_ADS_HOP_LIMIT), 255);
	assert_int_equal(ADS_GET(in, DVX_MLX5_ADS_VHCA_PORT_NUM), 1);
	assert_memory_equal(DVX_MLX5_ADS_IN(in) + DVX_MLX5_ADS_RGID_RIP, peer_gid, 16);
	assert_memory_equal(DVX_MLX5_ADS_IN(in) + DVX_MLX5_ADS_RMAC, "\x02\x00\x00\xc7\x00\x01", 6);
	assert_true(ADS_GET(in, DVX_MLX5_ADS_UDP_SPORT) >= 0xc000);
	assert_int_equal(GET(in, DVX_MLX5_MODIFY_QP_IN_OPT_PARAM_MASK), 0);
	check_rtr2rts(fx_mbox_last(DVX_MLX5_CMD_RTR2RTS_QP), qp.qpn, 0x111);

	/* connecting again: not in RST, nothing sent */
	calls = dvx_mock_calls(&M);
	assert_int_equal(dvx_qp_connect(&qp, &peer, NULL), -EINVAL);
	assert_int_equal(nic.hal.diag.src, DVX_DIAG_STATE);
	assert_int_equal(dvx_mock_calls(&M), calls);

	/* a traffic class and an MTU cap */
	{
		struct dvx_qp_connect_cfg ca;

		dvx_qp_connect_cfg_init(&ca);
		ca.traffic_class = 0x68;
		ca.max_mtu = DVX_MLX5_MTU_512;
		ca.udp_sport = 0xd00d;
		ca.max_dest_rd_atomic = 2;
		ca.max_rd_atomic = 1;
		ca.access = DVX_ACCESS_REMOTE_WRITE | DVX_ACCESS_REMOTE_READ;
		assert_int_equal(dvx_qp_connect(&qp2, &peer, &ca), 0);
		in = fx_mbox_last(DVX_MLX5_CMD_INIT2RTR_QP);
		assert_int_equal(ADS_GET(in, DVX_MLX5_ADS_TCLASS), 0x68);
		assert_int_equal(ADS_GET(in, DVX_MLX5_ADS_DSCP), 0x68 >> 2);
		assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_MTU), DVX_MLX5_MTU_512);
		assert_int_equal(ADS_GET(in, DVX_MLX5_ADS_UDP_SPORT), 0xd00d);
		assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_LOG_RRA_MAX), 1);
		assert_int_equal(QPC_GET(fx_mbox_last(DVX_MLX5_CMD_RTR2RTS_QP), DVX_MLX5_QPC_LOG_SRA_MAX), 0);
		in = fx_mbox_last(DVX_MLX5_CMD_RST2INIT_QP);
		assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_RAE), 0);
		assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_ATOMIC_MODE), 0);
	}
	teardown_all();
}

/* a big-endian dword at byte @b of @m, ORed in: the expected images are written from
 * docs/prm.md's positions with shifts of their own, not with the field macros */
static void put_dw(uint8_t *m, unsigned b, uint32_t v)
{
	dvx_put_be32(m + b, dvx_get_be32(m + b) | v);
}

/*
 * A RoCE v1 path (GRH over Ethernet, no IP or UDP header) carries no DSCP and no UDP
 * source port (the kernel's mlx5_set_path sets them for RoCE v2 only); the traffic
 * class stays in the GRH's tclass. The whole INIT2RTR mailbox, byte for byte.
 */
static void test_connect_roce_v1(void **state)
{
	static const uint8_t peer_gid[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
					      192, 168, 1, 20 };
	uint8_t want[DVX_MLX5_MODIFY_QP_IN_BYTES];
	struct dvx_qp_connect_cfg ca;
	struct dvx_cq_cfg cqa;
	struct dvx_qp_cfg qa;
	struct dvx_qp_conn peer;

	(void)state;
	assert_int_equal(fx_open_attr(&nic, DVX_UAR_PREF_NC, 0, 2), 0);	/* RoCE v1 */
	assert_int_equal(nic.gid.type, DVX_GID_TYPE_ROCE_V1);
	fx_umem(&nic, &um, 0, 0x40000);
	fx_cq_attr(&cqa, &um, RING_OFF, DBR_OFF, 64);
	assert_int_equal(dvx_cq_create(&nic, &cqa, &cq), 0);
	fx_qp_attr(&qa, &cq, &um, WQ_OFF, DBR_OFF + 16);
	assert_int_equal(dvx_qp_create(&nic, &qa, &qp), 0);

	assert_int_equal(dvx_qp_export(&qp, &peer), 0);
	peer.qpn = dvx_cpu_to_be32(0x4242);
	peer.psn = dvx_cpu_to_be32(0xabcdef);
	peer.mtu = DVX_MLX5_MTU_1024;
	memcpy(peer.gid, peer_gid, 16);
	dvx_qp_connect_cfg_init(&ca);
	ca.traffic_class = 0x68;
	ca.sl = 3;
	fx_mbox_reset();
	assert_int_equal(dvx_qp_connect(&qp, &peer, &ca), 0);

	memset(want, 0, sizeof(want));
	put_dw(want, 0, 0x503u << 16);			/* INIT2RTR_QP */
	put_dw(want, 8, qp.qpn);
	put_dw(want, 32, DVX_MLX5_MTU_1024 << 29 | 30u << 24);	/* mtu, log_msg_max */
	put_dw(want, 44, 0x4242);				/* remote_qpn */
	put_dw(want, 56, 2u << 16 | 255);			/* src_addr_index, hop_limit */
	put_dw(want, 60, 0x68u << 20);				/* tclass, flow_label 0 */
	memcpy(want + 64, peer_gid, 16);			/* rgid */
	/* dw@80: dscp and udp_sport 0 on RoCE v1 */
	put_dw(want, 84, 3u << 28 | 1u << 16);			/* eth_prio, vhca_port_num */
	memcpy(want + 86, "\x02\x00\x00\xc7\x00\x01", 6);	/* rmac */
	put_dw(want, 168, 4u << 21);				/* log_rra_max */
	put_dw(want, 172, 12u << 24 | 0xabcdef);		/* min_rnr_nak, next_rcv_psn */
	assert_bytes_equal(fx_mbox_last(DVX_MLX5_CMD_INIT2RTR_QP), want, sizeof(want));

	/* the same connection over RoCE v2 carries both */
	teardown_all();
	assert_int_equal(fx_open_attr(&nic, DVX_UAR_PREF_NC, 0, 3), 0);	/* RoCE v2 */
	fx_umem(&nic, &um, 0, 0x40000);
	assert_int_equal(dvx_cq_create(&nic, &cqa, &cq), 0);
	fx_qp_attr(&qa, &cq, &um, WQ_OFF, DBR_OFF + 16);
	assert_int_equal(dvx_qp_create(&nic, &qa, &qp), 0);
	ca.udp_sport = 0xd00d;
	fx_mbox_reset();
	assert_int_equal(dvx_qp_connect(&qp, &peer, &ca), 0);
	dvx_put_be32(want + 8, qp.qpn);
	dvx_put_be32(want + 56, 3u << 16 | 255);
	put_dw(want, 80, (0x68u >> 2) << 16 | 0xd00d);		/* dscp, udp_sport */
	assert_bytes_equal(fx_mbox_last(DVX_MLX5_CMD_INIT2RTR_QP), want, sizeof(want));
	teardown_all();
}

static void test_connect_ib(void **state)
{
	struct dvx_qp_conn peer;
	const uint8_t *in;

	(void)state;
	fx_mock(0);
	base_qps(0);
	assert_int_equal(dvx_qp_export(&qp2, &peer), 0);
	assert_int_equal(dvx_be16_to_cpu(peer.lid), 0x11);
	assert_int_equal(peer.link_layer, DVX_LINK_LAYER_IB);
	peer.lid = dvx_cpu_to_be16(0x22);
	{
		struct dvx_qp_connect_cfg ca;

		dvx_qp_connect_cfg_init(&ca);
		ca.sl = 5;
		assert_int_equal(dvx_qp_connect(&qp, &peer, &ca), 0);
	}
	assert_int_equal(dvx_mock_count(&M, DVX_MOCK_OP_ROCE_RMAC), 0);
	in = fx_mbox_last(DVX_MLX5_CMD_INIT2RTR_QP);
	assert_int_equal(ADS_GET(in, DVX_MLX5_ADS_RLID), 0x22);
	assert_int_equal(ADS_GET(in, DVX_MLX5_ADS_SL), 5);
	assert_int_equal(ADS_GET(in, DVX_MLX5_ADS_GRH), 0);
	assert_int_equal(ADS_GET(in, DVX_MLX5_ADS_UDP_SPORT), 0);
	assert_int_equal(ADS_GET(in, DVX_MLX5_ADS_HOP_LIMIT), 0);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_REMOTE_QPN), qp2.qpn);
	teardown_all();
}

static void test_connect_bad(void **state)
{
	struct dvx_qp_conn good, r;
	struct dvx_qp_connect_cfg ca;
	uint32_t calls;

	(void)state;
	base_qps(1);
	assert_int_equal(dvx_qp_export(&qp2, &good), 0);
	calls = dvx_mock_calls(&M);
	r = good;
	r.version = 2;
	assert_int_equal(dvx_qp_connect(&qp, &r, NULL), -EINVAL);
	assert_non_null(strstr(nic.hal.diag.msg, "version"));
	r = good;
	r.link_layer = DVX_LINK_LAYER_IB;
	assert_int_equal(dvx_qp_connect(&qp, &r, NULL), -EINVAL);
	assert_non_null(strstr(nic.hal.diag.msg, "link layer"));
	r = good;
	r.qpn = 0;
	assert_int_equal(dvx_qp_connect(&qp, &r, NULL), -EINVAL);
	r.qpn = dvx_cpu_to_be32(1u << 24);
	assert_int_equal(dvx_qp_connect(&qp, &r, NULL), -EINVAL);
	r = good;
	r.psn = dvx_cpu_to_be32(1u << 24);
	assert_int_equal(dvx_qp_connect(&qp, &r, NULL), -EINVAL);
	r = good;
	r.mtu = 0;
	assert_int_equal(dvx_qp_connect(&qp, &r, NULL), -EINVAL);
	r.mtu = 6;
	assert_int_equal(dvx_qp_connect(&qp, &r, NULL), -EINVAL);
	r = good;
	memset(r.gid, 0, 16);
	assert_int_equal(dvx_qp_connect(&qp, &r, NULL), -EINVAL);
	assert_non_null(strstr(nic.hal.diag.msg, "GID"));
	assert_int_equal(dvx_qp_connect(&qp, NULL, NULL), -EINVAL);
	dvx_qp_connect_cfg_init(&ca);
	ca.retry_count = 8;
	assert_int_equal(dvx_qp_connect(&qp, &good, &ca), -EINVAL);
	dvx_qp_connect_cfg_init(&ca);
	ca.access = DVX_ACCESS_LOCAL_WRITE;
	assert_int_equal(dvx_qp_connect(&qp, &good, &ca), -EINVAL);
	dvx_qp_connect_cfg_init(&ca);
	ca.max_dest_rd_atomic = 3;
	assert_int_equal(dvx_qp_connect(&qp, &good, &ca), -EINVAL);
	ca.max_dest_rd_atomic = 64;		/* above the device's 2^4 */
	assert_int_equal(dvx_qp_connect(&qp, &good, &ca), -EINVAL);
	assert_int_equal(dvx_mock_calls(&M), calls);
	assert_int_equal(qp.state, DVX_MLX5_QP_STATE_RST);
	teardown_all();

	/* remote atomics on a device without atomics */
	fx_mock(1);
	fx_cap(GENERAL, DVX_MLX5_CAP_ATOMIC, 0);
	base_qps(1);
	assert_int_equal(dvx_qp_export(&qp2, &good), 0);
	assert_int_equal(dvx_qp_connect(&qp, &good, NULL), -EOPNOTSUPP);
	assert_non_null(strstr(nic.hal.diag.msg, "atomic"));
	dvx_qp_connect_cfg_init(&ca);
	ca.access = DVX_ACCESS_REMOTE_WRITE;
	assert_int_equal(dvx_qp_connect(&qp, &good, &ca), 0);
	teardown_all();
}

static void test_loopback_and_pair(void **state)
{
	const uint8_t *in;

	(void)state;
	base_qps(1);
	assert_int_equal(dvx_qp_connect_loopback(&qp, NULL), 0);
	assert_int_equal(qp.conn_kind, DVX_QP_CONN_LOOPBACK);
	in = fx_mbox_last(DVX_MLX5_CMD_INIT2RTR_QP);
	assert_int_equal(ADS_GET(in, DVX_MLX5_ADS_FL), 1);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_REMOTE_QPN), qp.qpn);
	assert_int_equal(ADS_GET(in, DVX_MLX5_ADS_VHCA_PORT_NUM), 1);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_LOG_MSG_MAX), 30);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_LOG_RRA_MAX), 4);
	assert_int_equal(ADS_GET(in, DVX_MLX5_ADS_HOP_LIMIT), 0);
	assert_true(dvx_mlx5_get(DVX_MLX5_ADS_IN(in), DVX_MLX5_ADS_RGID_RIP, 31, 0) == 0);
	assert_int_equal(dvx_mock_count(&M, DVX_MOCK_OP_ROCE_RMAC), 0);
	check_rtr2rts(fx_mbox_last(DVX_MLX5_CMD_RTR2RTS_QP), qp.qpn, 0);
	assert_int_equal(qp.state, DVX_MLX5_QP_STATE_RTS);
	teardown_all();

	/* a device that refuses force-loopback: a clear error, then a local pair */
	fx_mock(1);
	fx_cap(ROCE, DVX_MLX5_CAP_FL_RC_QP_WHEN_ROCE_ENABLED, 0);
	base_qps(1);
	assert_int_equal(dvx_qp_connect_loopback(&qp, NULL), -EOPNOTSUPP);
	assert_non_null(strstr(nic.hal.diag.msg, "dvx_qp_connect_pair"));
	assert_int_equal(qp.state, DVX_MLX5_QP_STATE_RST);
	assert_int_equal(dvx_qp_connect_pair(&qp, &qp2, NULL), 0);
	assert_int_equal(qp.state, DVX_MLX5_QP_STATE_RTS);
	assert_int_equal(qp2.state, DVX_MLX5_QP_STATE_RTS);
	in = fx_mbox(DVX_MLX5_CMD_INIT2RTR_QP, 0);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_REMOTE_QPN), qp2.qpn);
	assert_memory_equal(DVX_MLX5_ADS_IN(in) + DVX_MLX5_ADS_RGID_RIP, nic.gid.raw, 16);
	in = fx_mbox(DVX_MLX5_CMD_INIT2RTR_QP, 1);
	assert_int_equal(GET(in, DVX_MLX5_MODIFY_QP_IN_QPN), qp2.qpn);
	assert_int_equal(QPC_GET(in, DVX_MLX5_QPC_REMOTE_QPN), qp.qpn);
	assert_int_equal(dvx_qp_connect_pair(&qp, &qp, NULL), -EINVAL);
	teardown_all();
}

static void test_err_recover_query(void **state)
{
	struct dvx_mlx5_qp_query q;
	uint32_t st;
	uint64_t idx;
	const uint8_t *in;

	(void)state;
	base_qps(1);
	assert_int_equal(dvx_qp_recover(&qp), -EINVAL);	/* never connected */
	assert_int_equal(dvx_qp_connect_pair(&qp, &qp2, NULL), 0);

	/* post something so there is state to reset */
	assert_int_equal(dvx_mlx5_sq_reserve(&qp.sq, &qp.sqc, 3, DVX_MLX5_SQ_SINGLE, &idx), 0);
	dvx_mlx5_sq_ring_db(&qp.sq, &qp.sqc, qp.sqc.resv);
	assert_int_equal(dvx_be32_to_cpu(qp.dbrec[DVX_MLX5_SND_DBR]), 3);
	cq.mcq.ci = 1;

	fx_qp_state_answer = DVX_MLX5_QP_STATE_ERR;	/* the device moved it */
	assert_int_equal(dvx_qp_query(&qp, &q, &st), 0);
	assert_int_equal(st, DVX_MLX5_QP_STATE_ERR);
	assert_int_equal(q.state, DVX_MLX5_QP_STATE_ERR);
	assert_int_equal(qp.state, DVX_MLX5_QP_STATE_ERR);
	in = fx_mbox_last(DVX_MLX5_CMD_QUERY_QP);
	assert_int_equal(GET(in, DVX_MLX5_QUERY_QP_IN_QPN), qp.qpn);
	fx_qp_state_answer = -1;

	assert_int_equal(dvx_qp_to_err(&qp2), 0);
	assert_int_equal(qp2.state, DVX_MLX5_QP_STATE_ERR);
	assert_int_equal(GET(fx_mbox_last(DVX_MLX5_CMD_2ERR_QP), DVX_MLX5_QP_2ERR_IN_QPN), qp2.qpn);

	/* recover: 2RST, skip the 4 flushes left in the CQ, then INIT, RTR, RTS */
	fx_mbox_reset();
	fx_cq_producer_answer = 5;
	assert_int_equal(dvx_qp_recover(&qp), 0);
	assert_int_equal(qp.state, DVX_MLX5_QP_STATE_RTS);
	assert_int_equal(qp.recoveries, 1);
	assert_int_equal(fx_mbox_count(DVX_MLX5_CMD_2RST_QP), 1);
	assert_int_equal(GET(fx_mbox_last(DVX_MLX5_CMD_2RST_QP), DVX_MLX5_QP_2RST_IN_QPN), qp.qpn);
	assert_int_equal(GET(fx_mbox_last(DVX_MLX5_CMD_QUERY_CQ), DVX_MLX5_QUERY_CQ_IN_CQN), cq.cqn);
	assert_int_equal(fx_mbox_count(DVX_MLX5_CMD_RST2INIT_QP), 1);
	assert_int_equal(fx_mbox_count(DVX_MLX5_CMD_INIT2RTR_QP), 1);
	assert_int_equal(fx_mbox_count(DVX_MLX5_CMD_RTR2RTS_QP), 1);
	assert_int_equal(QPC_GET(fx_mbox_last(DVX_MLX5_CMD_INIT2RTR_QP), DVX_MLX5_QPC_REMOTE_QPN),
			 qp2.qpn);
	assert_int_equal(qp.sqc.resv, 0);
	assert_int_equal(qp.sqc.ci, 0);
	assert_int_equal(qp.sqc.db_pi, 0);
	assert_int_equal(qp.dbrec[DVX_MLX5_SND_DBR], 0);
	assert_int_equal(qp.dbrec[DVX_MLX5_RCV_DBR], 0);
	assert_int_equal(cq.mcq.ci, 5);
	assert_int_equal(cq.index_base, 5);
	assert_int_equal(dvx_be32_to_cpu(cq.mcq.dbrec[DVX_MLX5_CQ_SET_CI]), 5);
	teardown_all();
}

/* ---- fault sweeps ---- */

struct sw {
	int roce;
	int what;
};

static void sw_setup(void *ctx)
{
	struct sw *s = ctx;

	setup(NULL);
	fx_mock(s->roce);
	if (s->what <= 1)
		base_cq(s->roce);
	else
		base_qps(s->roce);
	if (s->what == 0)		/* CQ create: make room for it */
		assert_int_equal(dvx_cq_destroy(&cq2), 0);
	if (s->what == 5) {		/* recover: connected, then in error */
		assert_int_equal(dvx_qp_connect_pair(&qp, &qp2, NULL), 0);
		assert_int_equal(dvx_qp_to_err(&qp), 0);
	}
}

static int sw_action(void *ctx)
{
	struct sw *s = ctx;
	struct dvx_qp_cfg qa;
	struct dvx_cq_cfg ca;
	struct dvx_qp_conn peer;

	switch (s->what) {
	case 0:
		fx_cq_attr(&ca, &um, RING2_OFF, DBR_OFF + 8, 64);
		return dvx_cq_create(&nic, &ca, &cq2);
	case 1:
		fx_qp_attr(&qa, &cq, &um, WQ_OFF, DBR_OFF + 16);
		return dvx_qp_create(&nic, &qa, &qp);
	case 2:
		assert_int_equal(dvx_qp_export(&qp2, &peer), 0);
		return dvx_qp_connect(&qp, &peer, NULL);
	case 3:
		return dvx_qp_connect_loopback(&qp, NULL);
	case 4:
		return dvx_qp_connect_pair(&qp, &qp2, NULL);
	default:
		return dvx_qp_recover(&qp);
	}
}

static void sw_undo(void *ctx)
{
	(void)ctx;
}

static void sw_teardown(void *ctx)
{
	(void)ctx;
	teardown_all();
}

static void sw_after(void *ctx, int err)
{
	struct sw *s = ctx;

	assert_int_equal(nic.hal.diag.err, err);
	if (s->what == 0)
		assert_int_equal(cq2.live, 0);
	if (s->what == 1)
		assert_int_equal(qp.live, 0);
	if (s->what >= 2 && s->what <= 4) {	/* connect: back in RST, may retry */
		assert_int_equal(qp.state, DVX_MLX5_QP_STATE_RST);
		if (s->what == 4)
			assert_int_equal(qp2.state, DVX_MLX5_QP_STATE_RST);
	}
}

static void test_faults(void **state)
{
	static const unsigned expect[6] = { 1, 1, 4, 3, 8, 6 };
	unsigned what;

	(void)state;
	for (what = 0; what < 6; what++) {
		struct sw s = { 1, (int)what };
		struct fx_sweep fs = { sw_setup, sw_action, sw_undo, sw_teardown, sw_after, &s };
		unsigned n = fx_sweep_calls(&fs);

		if (n != expect[what])
			fail_msg("action %u: %u injected failures reached the error path, "
				 "expected %u", what, n, expect[what]);
	}
}

/* the NIC's diagnostic right after the failed action (later successful calls clear it) */
static struct dvx_diag fail_diag;

static void keep_diag(void *ctx, int err)
{
	(void)ctx;
	(void)err;
	fail_diag = nic.hal.diag;
}

static void test_devx_faults(void **state)
{
	static const struct {
		int what;
		unsigned opcode;
		const char *name;
	} cases[] = {
		{ 0, DVX_MLX5_CMD_CREATE_CQ, "CREATE_CQ" },
		{ 1, DVX_MLX5_CMD_CREATE_QP, "CREATE_QP" },
		{ 2, DVX_MLX5_CMD_RST2INIT_QP, "RST2INIT_QP" },
		{ 2, DVX_MLX5_CMD_INIT2RTR_QP, "INIT2RTR_QP" },
		{ 2, DVX_MLX5_CMD_RTR2RTS_QP, "RTR2RTS_QP" },
		{ 3, DVX_MLX5_CMD_INIT2RTR_QP, "INIT2RTR_QP" },
		{ 4, DVX_MLX5_CMD_RTR2RTS_QP, "RTR2RTS_QP" },
		{ 5, DVX_MLX5_CMD_2RST_QP, "2RST_QP" },
		{ 5, DVX_MLX5_CMD_QUERY_CQ, "QUERY_CQ" },
		{ 5, DVX_MLX5_CMD_RTR2RTS_QP, "RTR2RTS_QP" },
	};
	unsigned i;

	(void)state;
	for (i = 0; i < DVX_ARRAY_SIZE(cases); i++) {
		struct sw s = { 1, cases[i].what };
		struct fx_sweep fs = { sw_setup, sw_action, sw_undo, sw_teardown, keep_diag, &s };
		char want[64];
		int err;

		/* count 0 = every matching command fails: the 2RST a failed connect sends
		 * to get back goes through (another opcode) */
		err = fx_sweep_devx(&fs, cases[i].opcode);
		assert_int_equal(err, -EINVAL);
		assert_string_equal(fail_diag.op, cases[i].name);
		snprintf(want, sizeof(want), "%s: BAD_PARAM syndrome 0x00c0ffee", cases[i].name);
		if (!strstr(fail_diag.msg, want))
			fail_msg("case %u: diag \"%s\" lacks \"%s\"", i, fail_diag.msg, want);
		/* the teardown's successful calls cleared it */
		assert_int_equal(nic.hal.diag.err, 0);
		assert_non_null(strstr(fx_log_last, cases[i].name));
	}
}

static void test_destroy_faults(void **state)
{
	(void)state;
	base_qps(1);
	dvx_mock_fail_op(&M, DVX_MOCK_OP_OBJ_DESTROY, -EIO);
	assert_int_equal(dvx_qp_destroy(&qp), -EIO);
	assert_int_equal(qp.live, DVX_LIVE);
	assert_string_equal(nic.hal.diag.op, "DESTROY_QP");
	assert_int_equal(dvx_cq_destroy(&cq2), -EBUSY);
	assert_int_equal(dvx_qp_destroy(&qp2), -EIO);
	dvx_mock_clear_faults(&M);
	assert_int_equal(dvx_qp_destroy(&qp2), 0);
	dvx_mock_fail_op(&M, DVX_MOCK_OP_OBJ_DESTROY, -EIO);
	assert_int_equal(dvx_cq_destroy(&cq2), -EIO);
	assert_int_equal(cq2.live, DVX_LIVE);
	dvx_mock_clear_faults(&M);
	teardown_all();
}

/* a create, open or registration into a live object: -EBUSY, the object untouched and
 * still usable, nothing new on the device; after its destroy the same storage works */
/*
 * qpc.ts_format as the kernel chooses it: the RoCE page's qp_ts_format on a RoCE port,
 * the general page's sq_ts_format on IB; DEFAULT (1) when that cap is non-zero, else
 * FREE_RUNNING (0). The other page's value never decides (it is set opposite).
 */
static void test_ts_format(void **state)
{
	unsigned roce, cap;

	(void)state;
	for (roce = 0; roce < 2; roce++)
		for (cap = 0; cap < 3; cap++) {
			const uint8_t *mb;

			fx_mock((int)roce);
			if (roce) {
				fx_cap(ROCE, DVX_MLX5_CAP_QP_TS_FORMAT, cap);
				fx_cap(GENERAL, DVX_MLX5_CAP_SQ_TS_FORMAT, cap ? 0 : 2);
			} else {
				fx_cap(GENERAL, DVX_MLX5_CAP_SQ_TS_FORMAT, cap);
			}
			base_qps((int)roce);
			mb = fx_mbox_last(DVX_MLX5_CMD_CREATE_QP);
			assert_non_null(mb);
			/* qpc.ts_format: create_qp_in dw@32 [7:6], read byte-wise: byte 35 */
			assert_int_equal((mb[35] >> 6) & 3, cap ? DVX_MLX5_TS_DEFAULT :
							      DVX_MLX5_TS_FREE_RUNNING);
			assert_int_equal(nic.caps.sq_ts_format, roce ? (cap ? 0u : 2u) : cap);
			teardown_all();
		}
}

/*
 * A ring or doorbell record over a live object's range in the same umem is -EBUSY and
 * changes nothing: no command, the live ring's bytes as they were (a CQ's ring is
 * initialised before CREATE_CQ, so the check must come first).
 */
static void test_ring_overlap(void **state)
{
	static uint8_t ring_before[64 * 64];
	struct dvx_cq_cfg ca;
	struct dvx_qp_cfg qa;
	struct dvx_cq c3;
	struct dvx_qp q3;
	uint32_t nobjs;

	(void)state;
	base_qps(1);
	memset(&c3, 0, sizeof(c3));
	memset(&q3, 0, sizeof(q3));
	memcpy(ring_before, cq.ring, sizeof(ring_before));
	nobjs = nic.nobjs;
	dvx_mock_reset_log(&M);
	/* the same ring, its tail, a QP's work queue, a record, the ring on its own record */
	fx_cq_attr(&ca, &um, RING_OFF, DBR_OFF + 64, 64);
	assert_int_equal(dvx_cq_create(&nic, &ca, &c3), -EBUSY);
	assert_non_null(strstr(nic.hal.diag.msg, "overlaps a live"));
	fx_cq_attr(&ca, &um, RING2_OFF - 64, DBR_OFF + 64, 64);
	assert_int_equal(dvx_cq_create(&nic, &ca, &c3), -EBUSY);
	fx_cq_attr(&ca, &um, WQ_OFF + 0x800, DBR_OFF + 64, 64);
	assert_int_equal(dvx_cq_create(&nic, &ca, &c3), -EBUSY);
	fx_cq_attr(&ca, &um, 0x20000, DBR_OFF + 16, 64);	/* qp's record */
	assert_int_equal(dvx_cq_create(&nic, &ca, &c3), -EBUSY);
	fx_cq_attr(&ca, &um, 0x20000, 0x20000 + 64, 64);	/* inside its own ring */
	assert_int_equal(dvx_cq_create(&nic, &ca, &c3), -EBUSY);
	fx_qp_attr(&qa, &cq, &um, RING2_OFF, DBR_OFF + 64);	/* over cq2's ring */
	assert_int_equal(dvx_qp_create(&nic, &qa, &q3), -EBUSY);
	fx_qp_attr(&qa, &cq, &um, 0x20000, DBR_OFF);		/* over cq's record */
	assert_int_equal(dvx_qp_create(&nic, &qa, &q3), -EBUSY);
	assert_int_equal(dvx_mock_calls(&M), 0);
	assert_int_equal(nic.nobjs, nobjs);
	assert_int_equal(c3.live, 0);
	assert_int_equal(q3.live, 0);
	assert_memory_equal(cq.ring, ring_before, sizeof(ring_before));
	/* right beside them: fine; the success clears the NIC's last diagnostic */
	assert_int_equal(nic.hal.diag.err, -EBUSY);
	fx_cq_attr(&ca, &um, 0x20000, DBR_OFF + 64, 64);
	assert_int_equal(dvx_cq_create(&nic, &ca, &c3), 0);
	assert_int_equal(nic.hal.diag.err, 0);
	assert_string_equal(nic.hal.diag.msg, "");
	/* a destroyed object's range is free again */
	assert_int_equal(dvx_qp_destroy(&qp2), 0);
	assert_int_equal(dvx_cq_destroy(&cq2), 0);
	fx_qp_attr(&qa, &cq, &um, RING2_OFF, DBR_OFF + 8);
	assert_int_equal(dvx_qp_create(&nic, &qa, &q3), 0);
	assert_int_equal(dvx_qp_destroy(&q3), 0);
	assert_int_equal(dvx_cq_destroy(&c3), 0);
	teardown_all();
}

static void test_live_refused(void **state)
{
	struct dvx_nic_cfg na;
	struct dvx_umem_cfg ua;
	struct dvx_mr_cfg ma;
	struct dvx_cq_cfg ca;
	struct dvx_qp_cfg qa;
	struct dvx_uar uar;
	struct dvx_mr mr;
	struct dvx_qp before;
	struct dvx_cq cbefore;
	uint32_t nobjs, live;

	(void)state;
	base_qps(1);
	nobjs = nic.nobjs;
	live = dvx_mock_live_total(&M);
	memset(&na, 0, sizeof(na));
	na.name = "mlx5_0";
	na.gid_index = -1;
	assert_int_equal(dvx_nic_open(&nic, HAL, &na), -EBUSY);
	assert_int_equal(nic.open, DVX_LIVE);
	assert_int_equal(nic.nobjs, nobjs);

	memset(&uar, 0, sizeof(uar));
	assert_int_equal(dvx_uar_alloc(&nic, DVX_UAR_PREF_NC, &uar), 0);
	assert_int_equal(dvx_uar_alloc(&nic, DVX_UAR_PREF_NC, &uar), -EBUSY);
	assert_int_equal(dvx_uar_free(&uar), 0);
	assert_int_equal(dvx_uar_alloc(&nic, DVX_UAR_PREF_NC, &uar), 0);	/* again, freed */
	assert_int_equal(dvx_uar_free(&uar), 0);

	memset(&ua, 0, sizeof(ua));
	ua.addr = fx_mem;
	ua.len = 4096;
	ua.dmabuf_fd = -1;
	assert_int_equal(dvx_umem_reg(&nic, &ua, &um), -EBUSY);
	assert_int_equal(um.live, DVX_LIVE);

	memset(&ma, 0, sizeof(ma));
	ma.addr = fx_mem + 100;
	ma.len = 1000;
	ma.dmabuf_fd = -1;
	memset(&mr, 0, sizeof(mr));
	assert_int_equal(dvx_mr_reg(&nic, &ma, &mr), 0);
	assert_int_equal(dvx_mr_reg(&nic, &ma, &mr), -EBUSY);
	assert_int_equal(dvx_mr_sink(&nic, fx_mem, -1, 0, &mr), -EBUSY);
	assert_int_equal(dvx_mr_dereg(&mr), 0);

	cbefore = cq;
	fx_cq_attr(&ca, &um, RING_OFF, DBR_OFF + 32, 64);
	assert_int_equal(dvx_cq_create(&nic, &ca, &cq), -EBUSY);
	assert_memory_equal(&cq, &cbefore, sizeof(cq));
	before = qp;
	fx_qp_attr(&qa, &cq, &um, WQ_OFF, DBR_OFF + 40);
	assert_int_equal(dvx_qp_create(&nic, &qa, &qp), -EBUSY);
	assert_memory_equal(&qp, &before, sizeof(qp));
	assert_int_equal(nic.nobjs, nobjs);
	assert_int_equal(dvx_mock_live_total(&M), live);
	/* destroyed, the storage takes a new object */
	assert_int_equal(dvx_qp_destroy(&qp), 0);
	assert_int_equal(dvx_qp_create(&nic, &qa, &qp), 0);
	teardown_all();
	/* and a closed NIC opens again into the same storage */
	assert_int_equal(fx_open(&nic), 0);
	assert_int_equal(dvx_nic_close(&nic), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_cq_create, setup),
		cmocka_unit_test_setup(test_cq_bad, setup),
		cmocka_unit_test_setup(test_qp_create, setup),
		cmocka_unit_test_setup(test_qp_bad, setup),
		cmocka_unit_test_setup(test_companion_shares_uar, setup),
		cmocka_unit_test_setup(test_connect_roce, setup),
		cmocka_unit_test_setup(test_connect_roce_v1, setup),
		cmocka_unit_test_setup(test_connect_ib, setup),
		cmocka_unit_test_setup(test_connect_bad, setup),
		cmocka_unit_test_setup(test_loopback_and_pair, setup),
		cmocka_unit_test_setup(test_err_recover_query, setup),
		cmocka_unit_test_setup(test_faults, setup),
		cmocka_unit_test_setup(test_devx_faults, setup),
		cmocka_unit_test_setup(test_destroy_faults, setup),
		cmocka_unit_test_setup(test_ts_format, setup),
		cmocka_unit_test_setup(test_ring_overlap, setup),
		cmocka_unit_test_setup(test_live_refused, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
