// SPDX-License-Identifier: MIT
/*
 * The software NIC's data path (hal/sim/exec.c) on its own: two simulated NICs, QPs,
 * CQs and MRs set up by hand (no control half), the lookups the control half would
 * provide stubbed below with a fake clock. WQEs are built with the project's builders
 * (dvx/mlx5/wqe.h, rq.h) and CQEs read back with its decoder (dvx/mlx5/cqe.h): the
 * model and the builders check each other (the sim has its own decoders).
 */
#include "../../lib/dvx_test.h"

#include <errno.h>
#include <dvx/mlx5/cqe.h>
#include <dvx/mlx5/rq.h>
#include <dvx/mlx5/wqe.h>

#include "../../../hal/sim/sim.h"
#include "../../../hal/sim/exec.h"

#define T_SQ_LOG 4u		/* 16 WQEBBs */
#define T_RQ_LOG 3u		/* 8 receives */
#define T_RQ_STRIDE 2u		/* 64-byte slots: 4 scatter entries */
#define T_CQ_LOG 4u		/* 16 CQEs */
#define T_NQP 4
#define T_NCQ 4
#define T_NMR 8
#define T_NLOG 64

#define IOVA_A 0x10000ull
#define IOVA_B 0x20000ull
#define IOVA_RO 0x30000ull
#define KEY_A 0x1001u		/* nic 0, PD 1, mem_a, all access */
#define KEY_SINK 0x1002u	/* nic 0, PD 1, sink, iova 0 */
#define KEY_A_PD9 0x1003u	/* nic 0, PD 9 */
#define KEY_A_RO 0x1004u	/* nic 0, PD 1, no LOCAL_WRITE */
#define KEY_B 0x2001u		/* nic 1, PD 2, mem_b, all access */
#define KEY_B_RO 0x2002u	/* nic 1, PD 2, mem_ro, REMOTE_READ only */
#define KEY_B_PD9 0x2003u	/* nic 1, PD 9 */

#define ALL_ACCESS (DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_WRITE | \
		    DVX_ACCESS_REMOTE_READ | DVX_ACCESS_REMOTE_ATOMIC)
#define SIG DVX_MLX5_WQE_CTRL_CQ_UPDATE

struct tq {
	_Alignas(64) uint8_t sq[64u << T_SQ_LOG];
	_Alignas(64) uint8_t rq[(16u << T_RQ_STRIDE) << T_RQ_LOG];
	_Alignas(8) uint8_t dbrec[8];
	struct sim_qp *qp;
	struct dvx_mlx5_wq wq;
	struct dvx_mlx5_rq rqs;
	uint32_t pi;
};

struct tc {
	_Alignas(64) uint8_t ring[64u << T_CQ_LOG];
	_Alignas(8) uint8_t dbrec[8];
	struct sim_cq *cq;
	struct dvx_mlx5_cq poll;
};

static struct {
	struct sim_fabric fab;
	struct sim_nic nic[2];
	struct sim_mr mrs[2][T_NMR];
	struct sim_cq cqs[2][T_NCQ];
	struct sim_qp qps[2][T_NQP];
	struct tq a, b, m, s;	/* a <-> b; m: cd master on nic 0 (self loop); s: cd slave */
	struct tc acq, arcq, bcq, brcq, mcq;
	_Alignas(64) uint8_t mem_a[4096];
	_Alignas(64) uint8_t mem_b[4096];
	_Alignas(64) uint8_t mem_ro[256];
	_Alignas(64) uint8_t sink[64];
	uint64_t now;
	unsigned trace_wqes, trace_cqes;
	/* device memory (DMA tests): contents, copies made, a failing engine */
	_Alignas(64) uint8_t dev[65536];
	uint64_t pulls[T_NLOG][2], pushes[T_NLOG][2];
	unsigned npulls, npushes;
	int dma_fail;		/* 1: every copy fails; 2: reads from number dma_fail_after on */
	unsigned dma_fail_after;
} T;

/* ---- the control half's lookups, stubbed ---------------------------------- */

struct sim_cq *dvx_sim_cq_find(struct sim_nic *nic, uint32_t cqn)
{
	int i;

	for (i = 0; i < T_NCQ; i++)
		if (cqn && nic->cqs[i].cqn == cqn)
			return &nic->cqs[i];
	return NULL;
}

struct sim_qp *dvx_sim_qp_find(struct sim_nic *nic, uint32_t qpn)
{
	int i;

	for (i = 0; i < T_NQP; i++)
		if (qpn && nic->qps[i].qpn == qpn)
			return &nic->qps[i];
	return NULL;
}

struct sim_qp *dvx_sim_qp_peer(struct sim_fabric *fab, struct sim_qp *qp)
{
	return qp->peer;
}

struct sim_mr *dvx_sim_mr_find(struct sim_nic *nic, uint32_t key)
{
	int i;

	for (i = 0; i < T_NMR; i++)
		if (key && nic->mrs[i].lkey == key)
			return &nic->mrs[i];
	return NULL;
}

uint64_t dvx_sim_now_ns(void)
{
	return T.now;
}

/* device memory behind DMA callbacks: the umem's dptr indexes T.dev */
int dvx_sim_dma_pull(struct sim_fabric *fab, const struct sim_umem *u, const void *p,
		     uint64_t len)
{
	uint64_t off = (uint64_t)((const uint8_t *)p - u->base);

	fab->dma_reads++;
	if (T.dma_fail == 1 || (T.dma_fail == 2 && T.npulls >= T.dma_fail_after) ||
	    off + len > u->len) {
		fab->dma_errors++;
		return -EIO;
	}
	memcpy((void *)(uintptr_t)p, T.dev + u->dptr + off, len);
	T.pulls[T.npulls % T_NLOG][0] = u->dptr + off;
	T.pulls[T.npulls++ % T_NLOG][1] = len;
	return 0;
}

int dvx_sim_dma_push(struct sim_fabric *fab, const struct sim_umem *u, const void *p,
		     uint64_t len)
{
	uint64_t off = (uint64_t)((const uint8_t *)p - u->base);

	fab->dma_writes++;
	if (T.dma_fail == 1 || off + len > u->len) {
		fab->dma_errors++;
		return -EIO;
	}
	memcpy(T.dev + u->dptr + off, p, len);
	T.pushes[T.npushes % T_NLOG][0] = u->dptr + off;
	T.pushes[T.npushes++ % T_NLOG][1] = len;
	return 0;
}

/* ---- fixture ---------------------------------------------------------------- */

static void mr_add(int nic, int slot, uint32_t key, uint32_t pdn, uint32_t access, uint64_t iova,
		   void *base, uint64_t len)
{
	struct sim_mr *mr = &T.mrs[nic][slot];

	mr->lkey = mr->rkey = key;
	mr->pdn = pdn;
	mr->access = access;
	mr->iova = iova;
	mr->base = base;
	mr->len = len;
}

static struct sim_cq *cq_add(int nic, int slot, struct tc *c, uint32_t cqn)
{
	struct sim_cq *cq = &T.cqs[nic][slot];

	cq->cqn = cqn;
	cq->log_sz = T_CQ_LOG;
	cq->ring = c->ring;
	cq->dbrec = c->dbrec;
	cq->oi = 1;
	cq->nic = &T.nic[nic];
	c->cq = cq;
	dvx_mlx5_cq_ring_init(c->ring, T_CQ_LOG);
	assert_int_equal(dvx_mlx5_cq_init(&c->poll, c->ring, T_CQ_LOG, (void *)c->dbrec, cqn), 0);
	return cq;
}

static struct sim_qp *qp_add(int nic, int slot, struct tq *q, uint32_t qpn, uint32_t pdn,
			     uint32_t scqn, uint32_t rcqn)
{
	struct sim_qp *qp = &T.qps[nic][slot];

	qp->qpn = qpn;
	qp->state = SIM_QPS_RTS;
	qp->pdn = pdn;
	qp->user_index = qpn + 0x50000;
	qp->cqn_snd = scqn;
	qp->cqn_rcv = rcqn;
	qp->sq = q->sq;
	qp->rq = q->rq;
	qp->dbrec = q->dbrec;
	qp->log_sq_size = T_SQ_LOG;
	qp->log_rq_size = T_RQ_LOG;
	qp->log_rq_stride = T_RQ_STRIDE;
	qp->access = DVX_ACCESS_REMOTE_WRITE | DVX_ACCESS_REMOTE_READ | DVX_ACCESS_REMOTE_ATOMIC;
	qp->port = 1;
	qp->mtu = 5;
	qp->retry_cnt = 7;
	qp->rnr_retry = 7;
	qp->min_rnr_nak = 12;
	qp->atomic_mode = 3;
	qp->nic = &T.nic[nic];
	q->qp = qp;
	q->pi = 0;
	assert_int_equal(dvx_mlx5_wq_init(&q->wq, q->sq, 1u << T_SQ_LOG, qpn, 64), 0);
	assert_int_equal(dvx_mlx5_rq_init(&q->rqs, q->rq, 1u << T_RQ_LOG, 4 + T_RQ_STRIDE,
					  (void *)q->dbrec), 0);
	return qp;
}

static void set_host_endian(int nic, int on)
{
	dvx_put_be32(T.nic[nic].cap_atomic + 8, on ? 1u << 30 : 0);
}

static int setup(void **state)
{
	int i;

	memset(&T, 0, sizeof(T));
	T.fab.nics = T.nic;
	T.fab.nnics = 2;
	for (i = 0; i < 2; i++) {
		struct sim_nic *n = &T.nic[i];

		n->fab = &T.fab;
		n->index = (uint32_t)i;
		n->cfg.nports = 1;
		n->cfg.cd = 1;
		n->cfg.atomic = 1;
		n->cfg.log_max_msg = 30;
		n->cfg.port[0].up = 1;
		n->cfg.port[0].lid = (uint16_t)(0x11 + i);
		n->mrs = T.mrs[i];
		n->cqs = T.cqs[i];
		n->qps = T.qps[i];
		set_host_endian(i, 1);
	}
	mr_add(0, 0, KEY_A, 1, ALL_ACCESS, IOVA_A, T.mem_a, sizeof(T.mem_a));
	mr_add(0, 1, KEY_SINK, 1, ALL_ACCESS, 0, T.sink, sizeof(T.sink));
	mr_add(0, 2, KEY_A_PD9, 9, ALL_ACCESS, IOVA_A, T.mem_a, sizeof(T.mem_a));
	mr_add(0, 3, KEY_A_RO, 1, DVX_ACCESS_REMOTE_READ, IOVA_A, T.mem_a, sizeof(T.mem_a));
	mr_add(1, 0, KEY_B, 2, ALL_ACCESS, IOVA_B, T.mem_b, sizeof(T.mem_b));
	mr_add(1, 1, KEY_B_RO, 2, DVX_ACCESS_REMOTE_READ, IOVA_RO, T.mem_ro, sizeof(T.mem_ro));
	mr_add(1, 2, KEY_B_PD9, 9, ALL_ACCESS, IOVA_B, T.mem_b, sizeof(T.mem_b));
	cq_add(0, 0, &T.acq, 0x10);
	cq_add(0, 1, &T.arcq, 0x11);
	cq_add(0, 2, &T.mcq, 0x12);
	cq_add(1, 0, &T.bcq, 0x20);
	cq_add(1, 1, &T.brcq, 0x21);
	qp_add(0, 0, &T.a, 0x100, 1, 0x10, 0x11);
	qp_add(1, 0, &T.b, 0x200, 2, 0x20, 0x21);
	qp_add(0, 1, &T.m, 0x101, 1, 0x12, 0x12);
	qp_add(0, 2, &T.s, 0x102, 1, 0x10, 0x11);
	T.a.qp->peer = T.b.qp;
	T.b.qp->peer = T.a.qp;
	T.m.qp->peer = T.m.qp;		/* self loop */
	T.m.qp->cd_master = 1;
	T.s.qp->peer = T.b.qp;
	T.s.qp->cd_slave_send = 1;
	for (i = 0; i < (int)sizeof(T.mem_a); i++) {
		T.mem_a[i] = (uint8_t)(i * 7 + 1);
		T.mem_b[i] = 0;
	}
	for (i = 0; i < (int)sizeof(T.mem_ro); i++)
		T.mem_ro[i] = (uint8_t)(0xa0 + i);
	(void)state;
	return 0;
}

/* publish the SQ through the doorbell record, as control would see it */
static void ring(struct tq *q)
{
	__atomic_store_n((uint32_t *)(void *)(q->dbrec + 4),
			 (uint32_t)dvx_cpu_to_be32(q->pi & 0xffffu), __ATOMIC_RELEASE);
	q->qp->sq_db = q->pi;	/* control extends the record's 16 bits to 32 */
}

static unsigned run(struct tq *q)
{
	return dvx_sim_exec_qp(&T.fab, q->qp, 1000);
}

static void post_recv(struct tq *q, uint64_t addr, uint32_t lkey, uint32_t len)
{
	struct dvx_mlx5_sge sge = { addr, len, lkey };

	assert_true(dvx_mlx5_rq_post(&q->rqs, &sge, 1) >= 0);
	dvx_mlx5_rq_ring(&q->rqs);
}

/* the next CQE of @c: returns its parse result, @i filled; fails if there is none */
static int next_cqe(struct tc *c, struct dvx_mlx5_cqe_info *i)
{
	int rc = dvx_mlx5_cq_poll_one(&c->poll, i);

	assert_int_not_equal(rc, 0);
	return rc;
}

static void assert_empty(struct tc *c)
{
	struct dvx_mlx5_cqe_info i;

	assert_int_equal(dvx_mlx5_cq_poll_one(&c->poll, &i), 0);
}

static void expect_ok(struct tc *c, uint8_t wqe_opcode, uint16_t idx, uint32_t qpn)
{
	struct dvx_mlx5_cqe_info i;

	assert_int_equal(next_cqe(c, &i), 1);
	assert_int_equal(i.opcode, DVX_MLX5_CQE_REQ);
	assert_int_equal(i.wqe_opcode, wqe_opcode);
	assert_int_equal(i.wqe_counter, idx);
	assert_int_equal(i.qpn, qpn);
	assert_int_equal(i.srqn_uidx, qpn + 0x50000);
}

static void expect_err(struct tc *c, uint8_t cqe_op, uint8_t wqe_opcode, uint16_t idx,
		       uint8_t synd, uint8_t vendor)
{
	struct dvx_mlx5_cqe_info i;

	assert_int_equal(next_cqe(c, &i), dvx_mlx5_cqe_syndrome_errno(synd));
	assert_int_equal(i.is_error, 1);
	assert_int_equal(i.opcode, cqe_op);
	assert_int_equal(i.syndrome, synd);
	assert_int_equal(i.vendor_syndrome, vendor);
	if (cqe_op == DVX_MLX5_CQE_REQ_ERR)
		assert_int_equal(i.wqe_opcode, wqe_opcode);
	assert_int_equal(i.wqe_counter, idx);
}

static void write8(struct tq *q, uint8_t sig, uint64_t raddr, uint32_t rkey, uint64_t laddr,
		   uint32_t lkey)
{
	q->pi += (uint32_t)dvx_mlx5_wqe_rdma_write(&q->wq, q->pi, sig, raddr, rkey, laddr, lkey, 8);
}

/* ---- success paths ---------------------------------------------------------- */

static void test_nop(void **state)
{
	(void)state;
	T.a.pi += (uint32_t)dvx_mlx5_wqe_nop(&T.a.wq, T.a.pi, SIG);
	T.a.pi += (uint32_t)dvx_mlx5_wqe_nop(&T.a.wq, T.a.pi, 0);
	T.a.pi += (uint32_t)dvx_mlx5_wqe_nop(&T.a.wq, T.a.pi, SIG | DVX_MLX5_WQE_CTRL_FM(2));
	assert_int_equal(run(&T.a), 0);		/* nothing rung yet */
	ring(&T.a);
	assert_int_equal(run(&T.a), 3);
	expect_ok(&T.acq, DVX_MLX5_OPCODE_NOP, 0, 0x100);
	expect_ok(&T.acq, DVX_MLX5_OPCODE_NOP, 2, 0x100);
	assert_empty(&T.acq);
	assert_int_equal(T.fab.wqes_executed, 3);
	assert_int_equal(T.fab.cqes_written, 2);
	assert_int_equal(T.a.qp->sq_ci, 3);
	assert_int_equal(run(&T.a), 0);
}

static void test_rdma_write(void **state)
{
	(void)state;
	write8(&T.a, SIG, IOVA_B + 16, KEY_B, IOVA_A + 8, KEY_A);
	T.a.pi += (uint32_t)dvx_mlx5_wqe_rdma_write(&T.a.wq, T.a.pi, SIG, IOVA_B + 1024, KEY_B,
						    IOVA_A, KEY_A, 4096 - 1024);
	T.a.pi += (uint32_t)dvx_mlx5_wqe_rdma_write(&T.a.wq, T.a.pi, SIG, IOVA_B, KEY_B, 0, 0, 0);
	ring(&T.a);
	assert_int_equal(run(&T.a), 3);
	assert_memory_equal(T.mem_b + 16, T.mem_a + 8, 8);
	assert_memory_equal(T.mem_b + 1024, T.mem_a, 4096 - 1024);
	expect_ok(&T.acq, DVX_MLX5_OPCODE_RDMA_WRITE, 0, 0x100);
	expect_ok(&T.acq, DVX_MLX5_OPCODE_RDMA_WRITE, 1, 0x100);
	expect_ok(&T.acq, DVX_MLX5_OPCODE_RDMA_WRITE, 2, 0x100);
	assert_empty(&T.bcq);
	assert_empty(&T.brcq);
}

static void test_rdma_write_sgl_and_inline(void **state)
{
	struct dvx_mlx5_sge sgl[6];
	uint8_t want[128], data[60];
	uint32_t i, off = 0;
	int k;

	(void)state;
	for (i = 0; i < 6; i++) {
		sgl[i].addr = IOVA_A + 100 * i;
		sgl[i].length = 5 + i;
		sgl[i].lkey = KEY_A;
		memcpy(want + off, T.mem_a + 100 * i, 5 + i);
		off += 5 + i;
	}
	k = dvx_mlx5_wqe_rdma_sgl(&T.a.wq, T.a.pi, DVX_MLX5_OPCODE_RDMA_WRITE, SIG, 0,
				  &(struct dvx_mlx5_raddr){ IOVA_B + 64, KEY_B }, sgl, 6);
	assert_int_equal(k, 2);		/* ds 8: two WQEBBs */
	T.a.pi += (uint32_t)k;
	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(0x80 + i);
	k = dvx_mlx5_wqe_rdma_write_inline(&T.a.wq, T.a.pi, DVX_MLX5_OPCODE_RDMA_WRITE, SIG, 0,
					   &(struct dvx_mlx5_raddr){ IOVA_B + 512, KEY_B }, data,
					   sizeof(data));
	assert_int_equal(k, 2);
	T.a.pi += (uint32_t)k;
	ring(&T.a);
	assert_int_equal(run(&T.a), 2);
	assert_memory_equal(T.mem_b + 64, want, off);
	assert_memory_equal(T.mem_b + 512, data, sizeof(data));
	expect_ok(&T.acq, DVX_MLX5_OPCODE_RDMA_WRITE, 0, 0x100);
	expect_ok(&T.acq, DVX_MLX5_OPCODE_RDMA_WRITE, 2, 0x100);
}

/* WQEs across the ring's end and the 16-bit counter's wrap */
static void test_wrap(void **state)
{
	struct dvx_mlx5_sge sgl[6];
	uint8_t data[40];
	uint32_t i, rounds;
	int k;

	(void)state;
	/* start 2 WQEBBs before the 16-bit counter wraps, at ring slot 14 */
	T.a.pi = 0xfffe;
	T.a.qp->sq_ci = 0xfffe;
	for (rounds = 0; rounds < 3; rounds++) {
		/* pad with NOPs so that this round starts 2 WQEBBs before the ring's end */
		while ((T.a.pi & 15) != 14)
			T.a.pi += (uint32_t)dvx_mlx5_wqe_nop(&T.a.wq, T.a.pi, 0);
		ring(&T.a);
		run(&T.a);
		for (i = 0; i < 6; i++) {
			sgl[i].addr = IOVA_A + 8 * i + rounds;
			sgl[i].length = 8;
			sgl[i].lkey = KEY_A;
		}
		T.a.pi += (uint32_t)dvx_mlx5_wqe_nop(&T.a.wq, T.a.pi, 0);
		/* 2 WQEBBs from slot 15: the second is slot 0 */
		k = dvx_mlx5_wqe_rdma_sgl(&T.a.wq, T.a.pi, DVX_MLX5_OPCODE_RDMA_WRITE, SIG, 0,
					  &(struct dvx_mlx5_raddr){ IOVA_B + 256 * rounds, KEY_B },
					  sgl, 6);
		assert_int_equal(k, 2);
		T.a.pi += 2;
		for (i = 0; i < sizeof(data); i++)
			data[i] = (uint8_t)(rounds * 50 + i);
		k = dvx_mlx5_wqe_rdma_write_inline(&T.a.wq, T.a.pi, DVX_MLX5_OPCODE_RDMA_WRITE, SIG,
						   0,
						   &(struct dvx_mlx5_raddr){
							   IOVA_B + 256 * rounds + 100, KEY_B },
						   data, sizeof(data));
		T.a.pi += (uint32_t)k;
		/* a masked CS 8 B (2 WQEBBs) too */
		memset(T.mem_b + 200, 0, 8);
		T.a.pi += (uint32_t)dvx_mlx5_wqe_masked_cs64(&T.a.wq, T.a.pi, SIG,
							     &(struct dvx_mlx5_raddr){ IOVA_B + 200,
										       KEY_B },
							     &(struct dvx_mlx5_masked_cs){
								     0, 0, 0x1234 + rounds, ~0ull },
							     0, KEY_SINK);
		ring(&T.a);
		assert_int_equal(run(&T.a), 4);
		assert_int_equal(T.a.qp->state, SIM_QPS_RTS);
		assert_int_equal(T.a.qp->sq_ci & 0xffff, T.a.pi & 0xffff);
		for (i = 0; i < 6; i++)
			assert_memory_equal(T.mem_b + 256 * rounds + 8 * i,
					    T.mem_a + 8 * i + rounds, 8);
		assert_memory_equal(T.mem_b + 256 * rounds + 100, data, sizeof(data));
		{
			uint64_t v;

			memcpy(&v, T.mem_b + 200, 8);
			assert_int_equal(v, 0x1234 + rounds);
		}
	}
	/* every CQE came, in order, with the right counters */
	for (i = 0; i < 9; i++) {
		struct dvx_mlx5_cqe_info c;

		assert_int_equal(next_cqe(&T.acq, &c), 1);
		if (i == 0)
			assert_int_equal(c.wqe_counter, 0xffff);
	}
	assert_empty(&T.acq);
}

static void test_write_imm(void **state)
{
	struct dvx_mlx5_cqe_info i;

	(void)state;
	post_recv(&T.b, 0, 0x100, 0);	/* WRITE_IMM needs no scatter entries */
	post_recv(&T.b, IOVA_B, KEY_B, 64);
	T.a.pi +=
		(uint32_t)dvx_mlx5_wqe_rdma_write_imm(&T.a.wq, T.a.pi, SIG, 0xdeadbeef,
						      &(struct dvx_mlx5_raddr){ IOVA_B + 128,
										KEY_B },
						      &(struct dvx_mlx5_sge){ IOVA_A, 100, KEY_A });
	T.a.pi += (uint32_t)dvx_mlx5_wqe_rdma_write_imm(&T.a.wq, T.a.pi, 0, 0x01020304,
							&(struct dvx_mlx5_raddr){ IOVA_B, KEY_B },
							&(struct dvx_mlx5_sge){ 0, 0, 0 });
	ring(&T.a);
	assert_int_equal(run(&T.a), 2);
	assert_memory_equal(T.mem_b + 128, T.mem_a, 100);
	expect_ok(&T.acq, DVX_MLX5_OPCODE_RDMA_WRITE_IMM, 0, 0x100);
	assert_empty(&T.acq);
	assert_int_equal(next_cqe(&T.brcq, &i), 1);
	assert_int_equal(i.opcode, DVX_MLX5_CQE_RESP_WR_IMM);
	assert_int_equal(i.imm, 0xdeadbeef);
	assert_int_equal(i.byte_cnt, 100);
	assert_int_equal(i.qpn, 0x200);
	assert_int_equal(i.rqpn, 0x100);
	assert_int_equal(i.srqn_uidx, 0x200 + 0x50000);
	assert_int_equal(i.wqe_counter, 0);
	assert_int_equal(i.slid, 0x11);
	assert_int_equal(next_cqe(&T.brcq, &i), 1);
	assert_int_equal(i.opcode, DVX_MLX5_CQE_RESP_WR_IMM);
	assert_int_equal(i.imm, 0x01020304);
	assert_int_equal(i.byte_cnt, 0);
	assert_int_equal(i.wqe_counter, 1);
	assert_int_equal(T.b.qp->rq_ci, 2);
}

static void test_send(void **state)
{
	struct dvx_mlx5_cqe_info i;
	struct dvx_mlx5_sge rs[3] = {
		{ IOVA_B + 0, 10, KEY_B }, { IOVA_B + 100, 0, KEY_B }, { IOVA_B + 200, 300, KEY_B },
	};
	struct dvx_mlx5_sge ss[2] = { { IOVA_A + 50, 7, KEY_A }, { IOVA_A + 300, 200, KEY_A } };
	uint8_t want[207], data[20];
	int k;

	(void)state;
	memcpy(want, T.mem_a + 50, 7);
	memcpy(want + 7, T.mem_a + 300, 200);
	assert_true(dvx_mlx5_rq_post(&T.b.rqs, rs, 3) >= 0);
	post_recv(&T.b, IOVA_B + 1000, KEY_B, 64);
	k = dvx_mlx5_wqe_send_sgl(&T.a.wq, T.a.pi, DVX_MLX5_OPCODE_SEND, SIG | DVX_MLX5_WQE_CTRL_SOLICITED,
				  0, ss, 2);
	T.a.pi += (uint32_t)k;
	memset(data, 0x5a, sizeof(data));
	k = dvx_mlx5_wqe_send_inline(&T.a.wq, T.a.pi, DVX_MLX5_OPCODE_SEND_IMM, SIG, 77, data,
				     sizeof(data));
	T.a.pi += (uint32_t)k;
	ring(&T.a);
	assert_int_equal(run(&T.a), 2);
	assert_memory_equal(T.mem_b, want, 10);
	assert_memory_equal(T.mem_b + 200, want + 10, 197);
	assert_memory_equal(T.mem_b + 1000, data, sizeof(data));
	expect_ok(&T.acq, DVX_MLX5_OPCODE_SEND, 0, 0x100);
	expect_ok(&T.acq, DVX_MLX5_OPCODE_SEND_IMM, 1, 0x100);
	assert_int_equal(next_cqe(&T.brcq, &i), 1);
	assert_int_equal(i.opcode, DVX_MLX5_CQE_RESP_SEND);
	assert_int_equal(i.byte_cnt, 207);
	assert_int_equal(i.se, 1);
	assert_int_equal(next_cqe(&T.brcq, &i), 1);
	assert_int_equal(i.opcode, DVX_MLX5_CQE_RESP_SEND_IMM);
	assert_int_equal(i.imm, 77);
	assert_int_equal(i.byte_cnt, sizeof(data));
	assert_int_equal(i.wqe_counter, 1);
}

static void test_rdma_read(void **state)
{
	struct dvx_mlx5_cqe_info i;

	(void)state;
	memset(T.mem_a, 0, 512);
	T.a.pi += (uint32_t)dvx_mlx5_wqe_rdma_read(&T.a.wq, T.a.pi, SIG, IOVA_RO + 16, KEY_B_RO,
						   IOVA_A + 64, KEY_A, 200);
	ring(&T.a);
	assert_int_equal(run(&T.a), 1);
	assert_memory_equal(T.mem_a + 64, T.mem_ro + 16, 200);
	assert_int_equal(next_cqe(&T.acq, &i), 1);
	assert_int_equal(i.wqe_opcode, DVX_MLX5_OPCODE_RDMA_READ);
	assert_int_equal(i.byte_cnt, 200);
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static void wr64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static void wr32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void test_atomics_8(void **state)
{
	int host;

	(void)state;
	for (host = 0; host < 2; host++) {
		setup(NULL);
		set_host_endian(0, host);
		/* the target holds a native word; the operands are big-endian in the WQE */
		wr64(T.mem_b + 8, 100);
		T.a.pi += (uint32_t)dvx_mlx5_wqe_atomic_fa(&T.a.wq, T.a.pi, SIG, IOVA_B + 8, KEY_B, 5,
							   0, KEY_SINK);
		T.a.pi += (uint32_t)dvx_mlx5_wqe_atomic_cs(&T.a.wq, T.a.pi, SIG,
							   &(struct dvx_mlx5_raddr){ IOVA_B + 8,
										     KEY_B },
							   105, 7, 8, KEY_SINK);
		T.a.pi += (uint32_t)dvx_mlx5_wqe_atomic_cs(&T.a.wq, T.a.pi, SIG,
							   &(struct dvx_mlx5_raddr){ IOVA_B + 8,
										     KEY_B },
							   999, 8, 16, KEY_SINK);
		ring(&T.a);
		assert_int_equal(run(&T.a), 3);
		assert_int_equal(rd64(T.mem_b + 8), 7);
		/* the fetched values: host order in mode 1, else big-endian */
		assert_int_equal(rd64(T.sink), host ? 100 : dvx_swab64(100));
		assert_int_equal(rd64(T.sink + 8), host ? 105 : dvx_swab64(105));
		assert_int_equal(rd64(T.sink + 16), host ? 7 : dvx_swab64(7));
		expect_ok(&T.acq, DVX_MLX5_OPCODE_ATOMIC_FA, 0, 0x100);
		expect_ok(&T.acq, DVX_MLX5_OPCODE_ATOMIC_CS, 1, 0x100);
		expect_ok(&T.acq, DVX_MLX5_OPCODE_ATOMIC_CS, 2, 0x100);
	}
}

static void test_atomics_masked(void **state)
{
	int host;

	(void)state;
	for (host = 0; host < 2; host++) {
		setup(NULL);
		set_host_endian(0, host);
		/* 8 B masked FA, two 32-bit fields: the carry stops at bit 31 */
		wr64(T.mem_b + 0, 0x00000001ffffffffull);
		T.a.pi += (uint32_t)dvx_mlx5_wqe_masked_fa64(&T.a.wq, T.a.pi, SIG,
							     &(struct dvx_mlx5_raddr){ IOVA_B,
										       KEY_B },
							     0x0000000100000001ull,
							     0x8000000080000000ull, 0, KEY_SINK);
		/* 8 B masked CS: compare the low byte, swap the high half */
		wr64(T.mem_b + 8, 0x11223344556677aaull);
		T.a.pi += (uint32_t)
			dvx_mlx5_wqe_masked_cs64(&T.a.wq, T.a.pi, SIG,
						 &(struct dvx_mlx5_raddr){ IOVA_B + 8, KEY_B },
						 &(struct dvx_mlx5_masked_cs){
							 0xaa, 0xff, 0xcafef00d00000000ull,
							 0xffffffff00000000ull },
						 8, KEY_SINK);
		/* 4 B masked FA and CS */
		wr32(T.mem_b + 16, 0xfffffff0u);
		T.a.pi += (uint32_t)dvx_mlx5_wqe_masked_fa32(&T.a.wq, T.a.pi, SIG,
							     &(struct dvx_mlx5_raddr){ IOVA_B + 16,
										       KEY_B },
							     0x20, 0, 16, KEY_SINK);
		wr32(T.mem_b + 20, 0x12345678u);
		T.a.pi += (uint32_t)
			dvx_mlx5_wqe_masked_cs32(&T.a.wq, T.a.pi, SIG,
						 &(struct dvx_mlx5_raddr){ IOVA_B + 20, KEY_B },
						 &(struct dvx_mlx5_masked_cs){
							 0x5678, 0xffff, 0xabcd0000u, 0xffff0000u },
						 20, KEY_SINK);
		/* a 4 B CS whose compare fails */
		T.a.pi += (uint32_t)dvx_mlx5_wqe_masked_cs32(&T.a.wq, T.a.pi, SIG,
							     &(struct dvx_mlx5_raddr){ IOVA_B + 20,
										       KEY_B },
							     &(struct dvx_mlx5_masked_cs){
								     0x1111, 0xffff, 0, ~0u },
							     24, KEY_SINK);
		ring(&T.a);
		assert_int_equal(run(&T.a), 5);
		assert_int_equal(T.a.qp->state, SIM_QPS_RTS);
		assert_int_equal(rd64(T.mem_b), 0x0000000200000000ull);
		assert_int_equal(rd64(T.mem_b + 8), 0xcafef00d556677aaull);
		assert_int_equal(rd32(T.mem_b + 16), 0x10u);
		assert_int_equal(rd32(T.mem_b + 20), 0xabcd5678u);
		assert_int_equal(rd64(T.sink), host ? 0x00000001ffffffffull :
						      dvx_swab64(0x00000001ffffffffull));
		assert_int_equal(rd64(T.sink + 8), host ? 0x11223344556677aaull :
							  dvx_swab64(0x11223344556677aaull));
		/* 4-byte results are big-endian in either mode (prm 6, 9) */
		assert_int_equal(rd32(T.sink + 16), dvx_swab32(0xfffffff0u));
		assert_int_equal(rd32(T.sink + 20), dvx_swab32(0x12345678u));
		assert_int_equal(rd32(T.sink + 24), dvx_swab32(0xabcd5678u));
		expect_ok(&T.acq, DVX_MLX5_OPCODE_ATOMIC_MASKED_FA, 0, 0x100);
		expect_ok(&T.acq, DVX_MLX5_OPCODE_ATOMIC_MASKED_CS, 1, 0x100);
		expect_ok(&T.acq, DVX_MLX5_OPCODE_ATOMIC_MASKED_FA, 3, 0x100);
		expect_ok(&T.acq, DVX_MLX5_OPCODE_ATOMIC_MASKED_CS, 4, 0x100);
		expect_ok(&T.acq, DVX_MLX5_OPCODE_ATOMIC_MASKED_CS, 5, 0x100);
	}
}

/* collapsed CQ: every CQE lands in entry 0 */
static void test_collapsed(void **state)
{
	struct dvx_mlx5_cqe_info i;
	int n;

	(void)state;
	T.acq.cq->cc = 1;
	for (n = 0; n < 40; n++) {
		T.a.pi += (uint32_t)dvx_mlx5_wqe_nop(&T.a.wq, T.a.pi, SIG);
		if (n % 10 == 9) {
			ring(&T.a);
			assert_int_equal(run(&T.a), 10);
		}
	}
	assert_int_equal(T.acq.cq->pi, 40);
	assert_int_equal(dvx_mlx5_cqe_parse(dvx_mlx5_cqe_at(T.acq.ring, T_CQ_LOG, 0), &i), 0);
	assert_int_equal(i.wqe_counter, 39);
	/* entry 1 was never written */
	assert_int_equal(dvx_mlx5_cqe_at(T.acq.ring, T_CQ_LOG, 1)->op_own, DVX_MLX5_CQE_INIT_OP_OWN);
}

/* the owner bit flips on every pass over the ring */
static void test_cq_owner_wrap(void **state)
{
	struct dvx_mlx5_cqe_info i;
	int n, round;

	(void)state;
	for (round = 0; round < 3; round++) {
		for (n = 0; n < 12; n++)
			T.a.pi += (uint32_t)dvx_mlx5_wqe_nop(&T.a.wq, T.a.pi, SIG);
		ring(&T.a);
		assert_int_equal(run(&T.a), 12);
		for (n = 0; n < 12; n++) {
			assert_int_equal(next_cqe(&T.acq, &i), 1);
			assert_int_equal(i.owner, ((T.acq.poll.ci - 1) >> T_CQ_LOG) & 1);
		}
		assert_empty(&T.acq);
	}
}

/* ---- errors ------------------------------------------------------------------- */

/* an error CQE, the QP in ERR, and the later WQEs flushed */
static void test_error_then_flush(void **state)
{
	(void)state;
	post_recv(&T.a, IOVA_A, KEY_A, 16);	/* a's own posted receive is flushed too */
	write8(&T.a, 0, IOVA_B, KEY_B, IOVA_A, KEY_A);		/* ok, unsignaled */
	write8(&T.a, 0, IOVA_B, KEY_B, IOVA_A, 0x7777);		/* bad lkey, unsignaled */
	write8(&T.a, SIG, IOVA_B, KEY_B, IOVA_A, KEY_A);
	T.a.pi += (uint32_t)dvx_mlx5_wqe_nop(&T.a.wq, T.a.pi, 0);
	ring(&T.a);
	assert_int_equal(run(&T.a), 2);
	assert_int_equal(T.a.qp->state, SIM_QPS_ERR);
	assert_int_equal(T.b.qp->state, SIM_QPS_RTS);	/* a local error stays local */
	expect_err(&T.acq, DVX_MLX5_CQE_REQ_ERR, DVX_MLX5_OPCODE_RDMA_WRITE, 1,
		   DVX_MLX5_CQE_SYNDROME_LOCAL_PROT_ERR, SIM_VS_LKEY);
	expect_err(&T.acq, DVX_MLX5_CQE_REQ_ERR, DVX_MLX5_OPCODE_RDMA_WRITE, 2,
		   DVX_MLX5_CQE_SYNDROME_WR_FLUSH_ERR, SIM_VS_FLUSH);
	expect_err(&T.acq, DVX_MLX5_CQE_REQ_ERR, DVX_MLX5_OPCODE_NOP, 3,
		   DVX_MLX5_CQE_SYNDROME_WR_FLUSH_ERR, SIM_VS_FLUSH);
	assert_empty(&T.acq);
	expect_err(&T.arcq, DVX_MLX5_CQE_RESP_ERR, 0, 0, DVX_MLX5_CQE_SYNDROME_WR_FLUSH_ERR,
		   SIM_VS_FLUSH);
	/* posted to a QP in ERR: flushed as well */
	T.a.pi += (uint32_t)dvx_mlx5_wqe_nop(&T.a.wq, T.a.pi, 0);
	ring(&T.a);
	assert_int_equal(run(&T.a), 1);
	expect_err(&T.acq, DVX_MLX5_CQE_REQ_ERR, DVX_MLX5_OPCODE_NOP, 4,
		   DVX_MLX5_CQE_SYNDROME_WR_FLUSH_ERR, SIM_VS_FLUSH);
}

struct err_case {
	const char *name;
	int op;			/* 0 write 8 B, 1 read 8 B, 2 FA, 3 masked FA 4 B */
	uint64_t raddr;
	uint32_t rkey;
	uint64_t laddr;
	uint32_t lkey;
	uint8_t synd, vendor, peer_err;
};

static const struct err_case err_cases[] = {
	{ "bad rkey", 0, IOVA_B, 0x9999, IOVA_A, KEY_A, 0x13, SIM_VS_RKEY, 1 },
	{ "rkey of another PD", 0, IOVA_B, KEY_B_PD9, IOVA_A, KEY_A, 0x13, SIM_VS_RKEY_PD, 1 },
	{ "remote out of bounds", 0, IOVA_B + 4090, KEY_B, IOVA_A, KEY_A, 0x13, SIM_VS_RKEY_BOUNDS, 1 },
	{ "remote below iova", 0, IOVA_B - 8, KEY_B, IOVA_A, KEY_A, 0x13, SIM_VS_RKEY_BOUNDS, 1 },
	{ "write to read-only MR", 0, IOVA_RO, KEY_B_RO, IOVA_A, KEY_A, 0x13, SIM_VS_RKEY_ACCESS, 1 },
	{ "local out of bounds", 0, IOVA_B, KEY_B, IOVA_A + 4092, KEY_A, 0x04, SIM_VS_LKEY_BOUNDS, 0 },
	{ "lkey of another PD", 0, IOVA_B, KEY_B, IOVA_A, KEY_A_PD9, 0x04, SIM_VS_LKEY_PD, 0 },
	{ "read into MR without local write", 1, IOVA_RO, KEY_B_RO, IOVA_A, KEY_A_RO, 0x04,
	  SIM_VS_LKEY_ACCESS, 0 },
	{ "atomic misaligned", 2, IOVA_B + 4, KEY_B, 0, KEY_SINK, 0x12, SIM_VS_ALIGN, 1 },
	{ "atomic 4 B misaligned", 3, IOVA_B + 2, KEY_B, 0, KEY_SINK, 0x12, SIM_VS_ALIGN, 1 },
	{ "atomic on read-only MR", 2, IOVA_RO, KEY_B_RO, 0, KEY_SINK, 0x13, SIM_VS_RKEY_ACCESS, 1 },
	{ "atomic result out of bounds", 2, IOVA_B, KEY_B, 60, KEY_SINK, 0x04, SIM_VS_LKEY_BOUNDS, 0 },
};

static void test_error_cases(void **state)
{
	size_t n;

	(void)state;
	for (n = 0; n < sizeof(err_cases) / sizeof(err_cases[0]); n++) {
		const struct err_case *e = &err_cases[n];
		uint8_t op;

		setup(NULL);
		post_recv(&T.b, IOVA_B, KEY_B, 64);	/* flushed if b goes to ERR */
		switch (e->op) {
		case 0:
			op = DVX_MLX5_OPCODE_RDMA_WRITE;
			write8(&T.a, 0, e->raddr, e->rkey, e->laddr, e->lkey);
			break;
		case 1:
			op = DVX_MLX5_OPCODE_RDMA_READ;
			T.a.pi += (uint32_t)dvx_mlx5_wqe_rdma_read(&T.a.wq, T.a.pi, 0, e->raddr,
								   e->rkey, e->laddr, e->lkey, 8);
			break;
		case 2:
			op = DVX_MLX5_OPCODE_ATOMIC_FA;
			T.a.pi += (uint32_t)dvx_mlx5_wqe_atomic_fa(&T.a.wq, T.a.pi, 0, e->raddr,
								   e->rkey, 1, e->laddr, e->lkey);
			break;
		default:
			op = DVX_MLX5_OPCODE_ATOMIC_MASKED_FA;
			T.a.pi += (uint32_t)dvx_mlx5_wqe_masked_fa32(&T.a.wq, T.a.pi, 0,
								     &(struct dvx_mlx5_raddr){
									     e->raddr, e->rkey },
								     1, 0, e->laddr, e->lkey);
			break;
		}
		ring(&T.a);
		print_message("case: %s\n", e->name);
		assert_int_equal(run(&T.a), 1);
		expect_err(&T.acq, DVX_MLX5_CQE_REQ_ERR, op, 0, e->synd, e->vendor);
		assert_int_equal(T.a.qp->state, SIM_QPS_ERR);
		assert_int_equal(T.b.qp->state, e->peer_err ? SIM_QPS_ERR : SIM_QPS_RTS);
		if (e->peer_err)
			expect_err(&T.brcq, DVX_MLX5_CQE_RESP_ERR, 0, 0,
				   DVX_MLX5_CQE_SYNDROME_WR_FLUSH_ERR, SIM_VS_FLUSH);
		assert_empty(&T.brcq);
		assert_int_equal(rd64(T.mem_b), 0);	/* nothing landed */
	}
}

/* the responder's QP access flags (rwe/rre/rae): invalid request */
static void test_qp_access(void **state)
{
	(void)state;
	T.b.qp->access = DVX_ACCESS_REMOTE_READ;
	write8(&T.a, SIG, IOVA_B, KEY_B, IOVA_A, KEY_A);
	ring(&T.a);
	assert_int_equal(run(&T.a), 1);
	expect_err(&T.acq, DVX_MLX5_CQE_REQ_ERR, DVX_MLX5_OPCODE_RDMA_WRITE, 0,
		   DVX_MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR, SIM_VS_QP_ACCESS);
	assert_int_equal(T.b.qp->state, SIM_QPS_ERR);

	setup(NULL);
	T.b.qp->atomic_mode = 1;	/* IB-compatible: standard 8 B atomics only */
	T.a.pi += (uint32_t)dvx_mlx5_wqe_atomic_fa(&T.a.wq, T.a.pi, SIG, IOVA_B, KEY_B, 1, 0,
						   KEY_SINK);
	T.a.pi += (uint32_t)dvx_mlx5_wqe_masked_fa64(&T.a.wq, T.a.pi, SIG,
						     &(struct dvx_mlx5_raddr){ IOVA_B, KEY_B }, 1,
						     0, 0, KEY_SINK);
	ring(&T.a);
	assert_int_equal(run(&T.a), 2);
	expect_ok(&T.acq, DVX_MLX5_OPCODE_ATOMIC_FA, 0, 0x100);
	expect_err(&T.acq, DVX_MLX5_CQE_REQ_ERR, DVX_MLX5_OPCODE_ATOMIC_MASKED_FA, 1,
		   DVX_MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR, SIM_VS_ATOMIC_MODE);
}

static void test_bad_wqe(void **state)
{
	(void)state;
	/* wqe_index in the ctrl segment must be the WQE's position */
	T.a.pi += (uint32_t)dvx_mlx5_wqe_nop(&T.a.wq, T.a.pi, SIG);
	T.a.sq[2] = 5;
	ring(&T.a);
	assert_int_equal(run(&T.a), 1);
	expect_err(&T.acq, DVX_MLX5_CQE_REQ_ERR, DVX_MLX5_OPCODE_NOP, 0,
		   DVX_MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR, SIM_VS_WQE_INDEX);

	/* an opcode the sim does not model */
	setup(NULL);
	T.a.pi += (uint32_t)dvx_mlx5_wqe_nop(&T.a.wq, 0, SIG);
	T.a.sq[3] = DVX_MLX5_OPCODE_UMR;
	ring(&T.a);
	assert_int_equal(run(&T.a), 1);
	expect_err(&T.acq, DVX_MLX5_CQE_REQ_ERR, DVX_MLX5_OPCODE_UMR, 0,
		   DVX_MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR, SIM_VS_OPCODE);

	/* ds 0 */
	setup(NULL);
	T.a.pi += (uint32_t)dvx_mlx5_wqe_nop(&T.a.wq, 0, SIG);
	T.a.sq[7] = 0;
	ring(&T.a);
	assert_int_equal(run(&T.a), 1);
	expect_err(&T.acq, DVX_MLX5_CQE_REQ_ERR, DVX_MLX5_OPCODE_NOP, 0,
		   DVX_MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR, SIM_VS_DS);

	/* a message above 2^log_max_msg */
	setup(NULL);
	T.nic[0].cfg.log_max_msg = 4;
	T.a.pi += (uint32_t)dvx_mlx5_wqe_rdma_write(&T.a.wq, T.a.pi, 0, IOVA_B, KEY_B, IOVA_A,
						    KEY_A, 17);
	ring(&T.a);
	assert_int_equal(run(&T.a), 1);
	expect_err(&T.acq, DVX_MLX5_CQE_REQ_ERR, DVX_MLX5_OPCODE_RDMA_WRITE, 0,
		   DVX_MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR, SIM_VS_MSG_LEN);

	/* an atomic result segment shorter than the operand */
	setup(NULL);
	T.a.pi += (uint32_t)dvx_mlx5_wqe_atomic_fa(&T.a.wq, T.a.pi, 0, IOVA_B, KEY_B, 1, 0,
						   KEY_SINK);
	dvx_put_be32(T.a.sq + 48, 4);
	ring(&T.a);
	assert_int_equal(run(&T.a), 1);
	expect_err(&T.acq, DVX_MLX5_CQE_REQ_ERR, DVX_MLX5_OPCODE_ATOMIC_FA, 0,
		   DVX_MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR, SIM_VS_RESULT_LEN);
}

/* a requester not in RTS holds its WQEs; they run once it is */
static void test_requester_not_rts(void **state)
{
	(void)state;
	T.a.qp->state = SIM_QPS_RTR;
	write8(&T.a, SIG, IOVA_B, KEY_B, IOVA_A, KEY_A);
	ring(&T.a);
	assert_int_equal(run(&T.a), 0);
	assert_empty(&T.acq);
	T.a.qp->state = SIM_QPS_RTS;
	assert_int_equal(run(&T.a), 1);
	expect_ok(&T.acq, DVX_MLX5_OPCODE_RDMA_WRITE, 0, 0x100);
}

/* a responder not in RTR/RTS drops requests: retried retry_cnt times, then an error */
static void test_responder_not_ready(void **state)
{
	int k;

	(void)state;
	T.b.qp->state = SIM_QPS_INIT;
	T.a.qp->retry_cnt = 3;
	write8(&T.a, SIG, IOVA_B, KEY_B, IOVA_A, KEY_A);
	write8(&T.a, SIG, IOVA_B, KEY_B, IOVA_A, KEY_A);
	ring(&T.a);
	for (k = 0; k < 3; k++) {
		assert_int_equal(run(&T.a), 0);
		assert_int_equal(run(&T.a), 0);		/* backing off: the clock has not moved */
		T.now += SIM_EXEC_RETRY_NS;
	}
	assert_int_equal(run(&T.a), 1);
	expect_err(&T.acq, DVX_MLX5_CQE_REQ_ERR, DVX_MLX5_OPCODE_RDMA_WRITE, 0,
		   DVX_MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR, SIM_VS_RETRY);
	expect_err(&T.acq, DVX_MLX5_CQE_REQ_ERR, DVX_MLX5_OPCODE_RDMA_WRITE, 1,
		   DVX_MLX5_CQE_SYNDROME_WR_FLUSH_ERR, SIM_VS_FLUSH);
	assert_int_equal(T.b.qp->state, SIM_QPS_INIT);
}

static void test_link_down_and_drops(void **state)
{
	int k;

	(void)state;
	/* link down: retries exhausted */
	T.fab.faults.link_down = 1;
	T.a.qp->retry_cnt = 2;
	write8(&T.a, SIG, IOVA_B, KEY_B, IOVA_A, KEY_A);
	ring(&T.a);
	for (k = 0; k < 3; k++) {
		T.now += SIM_EXEC_RETRY_NS;
		run(&T.a);
	}
	expect_err(&T.acq, DVX_MLX5_CQE_REQ_ERR, DVX_MLX5_OPCODE_RDMA_WRITE, 0,
		   DVX_MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR, SIM_VS_RETRY);

	/* drop_count within retry_cnt: the write gets through */
	setup(NULL);
	T.a.qp->retry_cnt = 3;
	T.fab.faults.drop_count = 3;
	write8(&T.a, SIG, IOVA_B, KEY_B, IOVA_A, KEY_A);
	ring(&T.a);
	for (k = 0; k < 3; k++) {
		assert_int_equal(run(&T.a), 0);
		T.now += SIM_EXEC_RETRY_NS;
	}
	assert_int_equal(run(&T.a), 1);
	expect_ok(&T.acq, DVX_MLX5_OPCODE_RDMA_WRITE, 0, 0x100);
	assert_memory_equal(T.mem_b, T.mem_a, 8);

	/* drop_count beyond retry_cnt: exhausted */
	setup(NULL);
	T.a.qp->retry_cnt = 1;
	T.fab.faults.drop_count = 5;
	write8(&T.a, SIG, IOVA_B, KEY_B, IOVA_A, KEY_A);
	ring(&T.a);
	for (k = 0; k < 3; k++) {
		run(&T.a);
		T.now += SIM_EXEC_RETRY_NS;
	}
	expect_err(&T.acq, DVX_MLX5_CQE_REQ_ERR, DVX_MLX5_OPCODE_RDMA_WRITE, 0,
		   DVX_MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR, SIM_VS_RETRY);

	/* every 3rd request dropped: 10 writes all arrive, each retry restarts its count */
	setup(NULL);
	T.a.qp->retry_cnt = 1;
	T.fab.faults.drop_every = 3;
	for (k = 0; k < 10; k++)
		write8(&T.a, SIG, IOVA_B + 8 * k, KEY_B, IOVA_A + 8 * k, KEY_A);
	ring(&T.a);
	for (k = 0; k < 20 && T.a.qp->sq_ci != 10; k++) {
		run(&T.a);
		T.now += SIM_EXEC_RETRY_NS;
	}
	assert_int_equal(T.a.qp->sq_ci, 10);
	assert_int_equal(T.a.qp->state, SIM_QPS_RTS);
	assert_memory_equal(T.mem_b, T.mem_a, 80);
	for (k = 0; k < 10; k++)
		expect_ok(&T.acq, DVX_MLX5_OPCODE_RDMA_WRITE, (uint16_t)k, 0x100);
}

static void test_delay(void **state)
{
	(void)state;
	T.fab.faults.delay_ns = 1000;
	T.now = 5000;
	write8(&T.a, SIG, IOVA_B, KEY_B, IOVA_A, KEY_A);
	write8(&T.a, SIG, IOVA_B + 8, KEY_B, IOVA_A + 8, KEY_A);
	ring(&T.a);
	assert_int_equal(run(&T.a), 0);
	assert_int_equal(T.a.qp->stall_until_ns, 6000);
	T.now = 5999;
	assert_int_equal(run(&T.a), 0);
	T.now = 6000;
	assert_int_equal(run(&T.a), 1);		/* then the second WQE's delay starts */
	assert_int_equal(T.a.qp->stall_until_ns, 7000);
	T.now = 7000;
	assert_int_equal(run(&T.a), 1);
	assert_memory_equal(T.mem_b, T.mem_a, 16);
}

static void test_rnr(void **state)
{
	struct dvx_mlx5_cqe_info i;
	int k;

	(void)state;
	/* infinite RNR retries: the SEND waits for a receive */
	T.a.pi += (uint32_t)dvx_mlx5_wqe_send(&T.a.wq, T.a.pi, SIG, IOVA_A, KEY_A, 16);
	ring(&T.a);
	for (k = 0; k < 50; k++) {
		assert_int_equal(run(&T.a), 0);
		T.now += 640;		/* min_rnr_nak 12: 640 ns here */
	}
	assert_int_equal(T.a.qp->state, SIM_QPS_RTS);
	post_recv(&T.b, IOVA_B + 32, KEY_B, 16);
	assert_int_equal(run(&T.a), 1);
	assert_memory_equal(T.mem_b + 32, T.mem_a, 16);
	expect_ok(&T.acq, DVX_MLX5_OPCODE_SEND, 0, 0x100);
	assert_int_equal(next_cqe(&T.brcq, &i), 1);
	assert_int_equal(i.opcode, DVX_MLX5_CQE_RESP_SEND);

	/* rnr_retry 2: three tries, then RNR_RETRY_EXC_ERR; the responder stays up */
	setup(NULL);
	T.a.qp->rnr_retry = 2;
	T.a.pi += (uint32_t)dvx_mlx5_wqe_rdma_write_imm(&T.a.wq, T.a.pi, SIG, 1,
							&(struct dvx_mlx5_raddr){ IOVA_B, KEY_B },
							&(struct dvx_mlx5_sge){ IOVA_A, 8, KEY_A });
	ring(&T.a);
	for (k = 0; k < 2; k++) {
		assert_int_equal(run(&T.a), 0);
		assert_int_equal(run(&T.a), 0);
		T.now += 640;
	}
	assert_int_equal(run(&T.a), 1);
	expect_err(&T.acq, DVX_MLX5_CQE_REQ_ERR, DVX_MLX5_OPCODE_RDMA_WRITE_IMM, 0,
		   DVX_MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR, SIM_VS_RNR);
	assert_int_equal(T.b.qp->state, SIM_QPS_RTS);
	assert_int_equal(rd64(T.mem_b), 0);	/* the data did not land */

	/* SEND to a QP without a regular RQ: invalid request */
	setup(NULL);
	T.b.qp->rq_type = 3;
	T.a.pi += (uint32_t)dvx_mlx5_wqe_send(&T.a.wq, T.a.pi, SIG, IOVA_A, KEY_A, 16);
	ring(&T.a);
	assert_int_equal(run(&T.a), 1);
	expect_err(&T.acq, DVX_MLX5_CQE_REQ_ERR, DVX_MLX5_OPCODE_SEND, 0,
		   DVX_MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR, SIM_VS_NO_RQ);
}

/* a QP reset while backing off starts its next WQE with fresh retry counts */
static void test_reset_during_backoff(void **state)
{
	(void)state;
	T.a.qp->rnr_retry = 1;
	T.a.pi += (uint32_t)dvx_mlx5_wqe_send(&T.a.wq, T.a.pi, SIG, IOVA_A, KEY_A, 16);
	ring(&T.a);
	assert_int_equal(run(&T.a), 0);		/* RNR: the one retry left is used */
	/* control's RST (as hal/sim/ctrl.c does it) and back to RTS */
	T.a.qp->sq_ci = 0;
	T.a.qp->sq_db = 0;
	T.a.qp->rnr_left = 0;
	T.a.qp->stall_until_ns = 0;
	T.a.pi = 0;
	T.a.pi += (uint32_t)dvx_mlx5_wqe_send(&T.a.wq, T.a.pi, SIG, IOVA_A, KEY_A, 16);
	ring(&T.a);
	assert_int_equal(run(&T.a), 0);		/* backs off again: not exhausted */
	assert_int_equal(T.a.qp->state, SIM_QPS_RTS);
	T.now += 640;
	assert_int_equal(run(&T.a), 1);
	expect_err(&T.acq, DVX_MLX5_CQE_REQ_ERR, DVX_MLX5_OPCODE_SEND, 0,
		   DVX_MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR, SIM_VS_RNR);
}

/* receive-side errors: too small (length), bad scatter key (protection) */
static void test_recv_errors(void **state)
{
	(void)state;
	post_recv(&T.b, IOVA_B, KEY_B, 8);
	post_recv(&T.b, IOVA_B, KEY_B, 8);
	T.a.pi += (uint32_t)dvx_mlx5_wqe_send(&T.a.wq, T.a.pi, SIG, IOVA_A, KEY_A, 16);
	ring(&T.a);
	assert_int_equal(run(&T.a), 1);
	expect_err(&T.acq, DVX_MLX5_CQE_REQ_ERR, DVX_MLX5_OPCODE_SEND, 0,
		   DVX_MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR, SIM_VS_RECV_LEN);
	expect_err(&T.brcq, DVX_MLX5_CQE_RESP_ERR, 0, 0, DVX_MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR,
		   SIM_VS_RECV_LEN);
	expect_err(&T.brcq, DVX_MLX5_CQE_RESP_ERR, 0, 1, DVX_MLX5_CQE_SYNDROME_WR_FLUSH_ERR,
		   SIM_VS_FLUSH);
	assert_int_equal(T.b.qp->state, SIM_QPS_ERR);

	setup(NULL);
	post_recv(&T.b, IOVA_B, 0x4242, 64);
	T.a.pi += (uint32_t)dvx_mlx5_wqe_send(&T.a.wq, T.a.pi, SIG, IOVA_A, KEY_A, 16);
	ring(&T.a);
	assert_int_equal(run(&T.a), 1);
	expect_err(&T.acq, DVX_MLX5_CQE_REQ_ERR, DVX_MLX5_OPCODE_SEND, 0,
		   DVX_MLX5_CQE_SYNDROME_REMOTE_OP_ERR, SIM_VS_RECV_PROT);
	expect_err(&T.brcq, DVX_MLX5_CQE_RESP_ERR, 0, 0, DVX_MLX5_CQE_SYNDROME_LOCAL_PROT_ERR,
		   SIM_VS_RECV_PROT);
}

/* a CQ without overrun-ignore whose consumer is behind: overrun, the QP to ERR */
static void test_overrun(void **state)
{
	int k;

	(void)state;
	T.acq.cq->oi = 0;
	for (k = 0; k < 16; k++)
		T.a.pi += (uint32_t)dvx_mlx5_wqe_nop(&T.a.wq, T.a.pi, SIG);
	ring(&T.a);
	assert_int_equal(run(&T.a), 16);
	assert_int_equal(T.acq.cq->overrun, 0);
	/* 16 entries, consumer index 0: the 17th CQE would overwrite entry 0 */
	for (k = 0; k < 3; k++)
		T.a.pi += (uint32_t)dvx_mlx5_wqe_nop(&T.a.wq, T.a.pi, SIG);
	ring(&T.a);
	assert_int_equal(run(&T.a), 1);
	assert_int_equal(T.acq.cq->overrun, 1);
	assert_int_equal(T.acq.cq->pi, 16);
	assert_int_equal(T.a.qp->state, SIM_QPS_ERR);
	/* the CQ stays in error: no flush CQEs land in it */
	assert_int_equal(T.acq.cq->pi, 16);

	/* a consumer that keeps up never overruns */
	setup(NULL);
	T.acq.cq->oi = 0;
	for (k = 0; k < 100; k++) {
		struct dvx_mlx5_cqe_info i;

		T.a.pi += (uint32_t)dvx_mlx5_wqe_nop(&T.a.wq, T.a.pi, SIG);
		ring(&T.a);
		assert_int_equal(run(&T.a), 1);
		assert_int_equal(next_cqe(&T.acq, &i), 1);
		dvx_mlx5_cq_update_ci(&T.acq.poll);
	}
	assert_int_equal(T.acq.cq->overrun, 0);

	/* another QP on an overrun CQ goes to ERR when it runs */
	setup(NULL);
	T.acq.cq->overrun = 1;
	T.s.qp->cd_slave_send = 0;
	T.s.pi += (uint32_t)dvx_mlx5_wqe_nop(&T.s.wq, T.s.pi, 0);
	ring(&T.s);
	assert_int_equal(run(&T.s), 0);
	assert_int_equal(T.s.qp->state, SIM_QPS_ERR);
}

/* core-direct: WAIT on a CQ index, then SEND_EN / RECV_EN of slaves */
static void test_wait(void **state)
{
	int k;

	(void)state;
	/* m waits for CQE #2 of a's send CQ, then fetch-adds a local counter (self loop) */
	wr64(T.mem_a, 0);
	T.m.pi += (uint32_t)dvx_mlx5_wqe_wait_cq(&T.m.wq, T.m.pi, SIG, 0x10, 2);
	T.m.pi += (uint32_t)dvx_mlx5_wqe_atomic_fa(&T.m.wq, T.m.pi, SIG, IOVA_A, KEY_A, 1, 0,
						   KEY_SINK);
	ring(&T.m);
	assert_int_equal(run(&T.m), 0);
	assert_int_equal(T.m.qp->wait_cqn, 0x10);
	assert_int_equal(T.m.qp->wait_index, 2);
	for (k = 0; k < 3; k++) {
		T.a.pi += (uint32_t)dvx_mlx5_wqe_nop(&T.a.wq, T.a.pi, SIG);
		ring(&T.a);
		assert_int_equal(run(&T.a), 1);
		assert_int_equal(run(&T.m), k == 2 ? 2 : 0);
		assert_int_equal(rd64(T.mem_a), k == 2 ? 1 : 0);
	}
	assert_int_equal(T.m.qp->wait_cqn, 0);
	expect_ok(&T.mcq, DVX_MLX5_OPCODE_WAIT, 0, 0x101);
	expect_ok(&T.mcq, DVX_MLX5_OPCODE_ATOMIC_FA, 1, 0x101);

	/* WAIT on a QP without cd_master: error */
	setup(NULL);
	T.a.pi += (uint32_t)dvx_mlx5_wqe_wait_cq(&T.a.wq, T.a.pi, SIG, 0x12, 0);
	ring(&T.a);
	assert_int_equal(run(&T.a), 1);
	expect_err(&T.acq, DVX_MLX5_CQE_REQ_ERR, DVX_MLX5_OPCODE_WAIT, 0,
		   DVX_MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR, SIM_VS_NOT_CD);

	/* WAIT on a CQ that does not exist */
	setup(NULL);
	T.m.pi += (uint32_t)dvx_mlx5_wqe_wait_cq(&T.m.wq, T.m.pi, SIG, 0x77, 0);
	ring(&T.m);
	assert_int_equal(run(&T.m), 1);
	expect_err(&T.mcq, DVX_MLX5_CQE_REQ_ERR, DVX_MLX5_OPCODE_WAIT, 0,
		   DVX_MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR, SIM_VS_NO_OBJ);
}

static void test_send_en_recv_en(void **state)
{
	struct dvx_mlx5_cqe_info i;

	(void)state;
	/* the slave s holds its WQEs until m enables them */
	write8(&T.s, SIG, IOVA_B, KEY_B, IOVA_A, KEY_A);
	write8(&T.s, SIG, IOVA_B + 8, KEY_B, IOVA_A + 8, KEY_A);
	ring(&T.s);
	assert_int_equal(run(&T.s), 0);
	T.m.pi += (uint32_t)dvx_mlx5_wqe_send_en(&T.m.wq, T.m.pi, SIG, 0x102, 1);
	ring(&T.m);
	assert_int_equal(run(&T.m), 1);
	assert_int_equal(T.s.qp->send_en, 1);
	assert_int_equal(run(&T.s), 1);
	assert_int_equal(run(&T.s), 0);
	T.m.pi += (uint32_t)dvx_mlx5_wqe_send_en(&T.m.wq, T.m.pi, SIG, 0x102, 2);
	ring(&T.m);
	assert_int_equal(run(&T.m), 1);
	assert_int_equal(run(&T.s), 1);
	assert_memory_equal(T.mem_b, T.mem_a, 16);
	expect_ok(&T.mcq, DVX_MLX5_OPCODE_SEND_EN, 0, 0x101);
	expect_ok(&T.acq, DVX_MLX5_OPCODE_RDMA_WRITE, 0, 0x102);

	/* RECV_EN: b's receives are usable only once enabled (else RNR) */
	setup(NULL);
	T.m.qp->peer = NULL;
	T.b.qp->cd_slave_recv = 1;
	post_recv(&T.b, IOVA_B, KEY_B, 64);
	T.a.pi += (uint32_t)dvx_mlx5_wqe_send(&T.a.wq, T.a.pi, SIG, IOVA_A, KEY_A, 16);
	ring(&T.a);
	assert_int_equal(run(&T.a), 0);		/* RNR */
	/* b is on nic 1: its master must be there too; use a nic-1 QP as master */
	T.qps[1][1] = *T.m.qp;
	T.qps[1][1].qpn = 0x201;
	T.qps[1][1].nic = &T.nic[1];
	T.qps[1][1].cqn_snd = 0x20;
	T.qps[1][1].sq_ci = 0;
	{
		struct tq *m1 = &T.m;	/* reuse m's ring for the nic-1 master */

		m1->qp = &T.qps[1][1];
		m1->pi = 0;
		assert_int_equal(dvx_mlx5_wq_init(&m1->wq, m1->sq, 1u << T_SQ_LOG, 0x201, 64), 0);
		m1->pi += (uint32_t)dvx_mlx5_wqe_recv_en(&m1->wq, m1->pi, SIG, 0x200, 1);
		ring(m1);
		assert_int_equal(run(m1), 1);
	}
	assert_int_equal(T.b.qp->recv_en, 1);
	T.now += 1000;
	assert_int_equal(run(&T.a), 1);
	expect_ok(&T.acq, DVX_MLX5_OPCODE_SEND, 0, 0x100);
	assert_int_equal(next_cqe(&T.brcq, &i), 1);

	/* SEND_EN of a QP that is not a cd slave: error */
	setup(NULL);
	T.m.pi += (uint32_t)dvx_mlx5_wqe_send_en(&T.m.wq, T.m.pi, SIG, 0x100, 1);
	ring(&T.m);
	assert_int_equal(run(&T.m), 1);
	expect_err(&T.mcq, DVX_MLX5_CQE_REQ_ERR, DVX_MLX5_OPCODE_SEND_EN, 0,
		   DVX_MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR, SIM_VS_NOT_CD);
}

static void trace_fn(void *arg, uint32_t nic, uint32_t qpn, int is_cqe, const void *bytes,
		     size_t len)
{
	const uint8_t *b = bytes;

	(void)arg;
	if (is_cqe) {
		assert_int_equal(len, 64);
		T.trace_cqes++;
	} else {
		assert_int_equal(nic, 0);
		assert_int_equal(qpn, 0x100);
		assert_int_equal(len, (size_t)(b[7] & 0x3f) * 16);
		T.trace_wqes++;
	}
}

static void test_trace_and_budget(void **state)
{
	int k;

	(void)state;
	T.fab.trace = trace_fn;
	for (k = 0; k < 10; k++)
		write8(&T.a, k & 1 ? SIG : 0, IOVA_B, KEY_B, IOVA_A, KEY_A);
	ring(&T.a);
	assert_int_equal(dvx_sim_exec_qp(&T.fab, T.a.qp, 4), 4);
	assert_int_equal(dvx_sim_exec_qp(&T.fab, T.a.qp, 100), 6);
	assert_int_equal(T.trace_wqes, 10);
	assert_int_equal(T.trace_cqes, 5);
	assert_int_equal(T.fab.wqes_executed, 10);
	assert_int_equal(T.fab.cqes_written, 5);
}

/* a loopback QP (responder == requester) with a remote access error */
static void test_loopback_error(void **state)
{
	(void)state;
	T.m.pi += (uint32_t)dvx_mlx5_wqe_rdma_write(&T.m.wq, T.m.pi, SIG, IOVA_A, 0x5555, IOVA_A,
						    KEY_A, 8);
	T.m.pi += (uint32_t)dvx_mlx5_wqe_nop(&T.m.wq, T.m.pi, 0);
	ring(&T.m);
	assert_int_equal(run(&T.m), 1);
	expect_err(&T.mcq, DVX_MLX5_CQE_REQ_ERR, DVX_MLX5_OPCODE_RDMA_WRITE, 0,
		   DVX_MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR, SIM_VS_RKEY);
	expect_err(&T.mcq, DVX_MLX5_CQE_REQ_ERR, DVX_MLX5_OPCODE_NOP, 1,
		   DVX_MLX5_CQE_SYNDROME_WR_FLUSH_ERR, SIM_VS_FLUSH);
	assert_empty(&T.mcq);
	assert_int_equal(T.m.qp->state, SIM_QPS_ERR);
}

/* ---- queues in device memory (DMA callbacks) ------------------------------------- */

#define DEV_SQ 0u
#define DEV_DBR 32768u
#define DEV_CQ 40960u
#define DEV_CQDBR 49152u

static const struct dvx_sim_dma dummy_dma;	/* never called here: the stubs stand in */
static struct sim_umem usq, udbr, ucq, ucdbr;

/* put QP a's SQ and record and its send CQ "in device memory" (T.dev behind the stubs) */
static void dev_queues(void)
{
	struct sim_umem *u[4] = { &usq, &udbr, &ucq, &ucdbr };
	uint8_t *base[4] = { T.a.sq, T.a.dbrec, T.acq.ring, T.acq.dbrec };
	uint64_t len[4] = { sizeof(T.a.sq), 8, sizeof(T.acq.ring), 8 };
	uint64_t dptr[4] = { DEV_SQ, DEV_DBR, DEV_CQ, DEV_CQDBR };
	int i;

	for (i = 0; i < 4; i++) {
		memset(u[i], 0, sizeof(*u[i]));
		u[i]->id = 0x77 + (uint32_t)i;
		u[i]->base = base[i];
		u[i]->len = len[i];
		u[i]->dma = &dummy_dma;
		u[i]->dptr = dptr[i];
	}
	T.a.qp->wq_umem = &usq;
	T.a.qp->dbr_umem = &udbr;
	T.acq.cq->ring_umem = &ucq;
	T.acq.cq->dbr_umem = &ucdbr;
	T.acq.cq->oi = 0;	/* the NIC reads the CQ's record before each CQE */
	memcpy(T.dev + DEV_CQ, T.acq.ring, sizeof(T.acq.ring));	/* initialised by software */
}

/* build @n WRITEs of 8 bytes on QP a into the device copy only (the sim's copy stays 0) */
static void dev_post(unsigned n)
{
	unsigned k;

	for (k = 0; k < n; k++) {
		uint32_t at = (T.a.pi & ((1u << T_SQ_LOG) - 1)) * 64u;

		T.a.pi += (uint32_t)dvx_mlx5_wqe_rdma_write(&T.a.wq, T.a.pi, SIG,
							    IOVA_B + 8 * T.a.pi, KEY_B,
							    IOVA_A + 8 * T.a.pi, KEY_A, 8);
		memcpy(T.dev + DEV_SQ + at, T.a.sq + at, 64);
		memset(T.a.sq + at, 0, 64);
	}
}

/*
 * WQEs, the SQ record and CQEs in device memory: the NIC reads only the WQEBBs the
 * doorbell covers, after it; reads the CQ record before each CQE; writes each CQE as
 * 63 bytes and then the owner byte; a failed copy stops the QP for that pass and is
 * counted, and the next pass runs it.
 */
static void test_dma_queues(void **state)
{
	struct dvx_mlx5_cqe_info i;
	unsigned k;

	(void)state;
	dev_queues();
	dev_post(3);		/* 3 built, the doorbell covers 2 */
	T.a.qp->sq_db = 2;
	assert_int_equal(run(&T.a), 2);
	assert_memory_equal(T.mem_b, T.mem_a, 16);
	assert_int_equal(T.mem_b[16], 0);
	/* one fetch of exactly the covered WQEBBs, nothing past them */
	assert_int_equal(T.pulls[0][0], DEV_SQ);
	assert_int_equal(T.pulls[0][1], 2 * 64);
	/* per CQE: the record (4 bytes), then 63 bytes, then the owner byte */
	for (k = 0; k < 2; k++) {
		assert_int_equal(T.pulls[1 + k][0], DEV_CQDBR);
		assert_int_equal(T.pulls[1 + k][1], 4);
		assert_int_equal(T.pushes[2 * k][0], DEV_CQ + 64 * k);
		assert_int_equal(T.pushes[2 * k][1], 63);
		assert_int_equal(T.pushes[2 * k + 1][0], DEV_CQ + 64 * k + 63);
		assert_int_equal(T.pushes[2 * k + 1][1], 1);
	}
	assert_int_equal(T.npulls, 3);
	assert_int_equal(T.npushes, 4);
	/* the device copy holds the CQEs a GPU poller reads */
	assert_memory_equal(T.dev + DEV_CQ, T.acq.ring, 128);
	expect_ok(&T.acq, DVX_MLX5_OPCODE_RDMA_WRITE, 0, 0x100);
	expect_ok(&T.acq, DVX_MLX5_OPCODE_RDMA_WRITE, 1, 0x100);
	assert_empty(&T.acq);

	/* the copy engine fails: nothing runs, the failure is counted */
	T.a.qp->sq_db = 3;
	T.dma_fail = 1;
	assert_int_equal(run(&T.a), 0);
	assert_int_equal(T.fab.dma_errors, 1);
	assert_int_equal(T.mem_b[16], 0);
	T.dma_fail = 0;
	assert_int_equal(run(&T.a), 1);
	assert_memory_equal(T.mem_b + 16, T.mem_a + 16, 8);
	assert_int_equal(next_cqe(&T.acq, &i), 1);
	assert_int_equal(i.wqe_counter, 2);
	assert_int_equal(T.fab.dma_errors, 1);

	/* a CQE the NIC cannot write is an overrun-like failure: the QP goes to error */
	dev_post(1);
	T.a.qp->sq_db = 4;
	T.fab.dma_errors = 0;
	T.dma_fail = 2;
	T.dma_fail_after = T.npulls + 1;	/* the WQE fetch works, the record read fails */
	assert_int_equal(run(&T.a), 1);
	assert_int_equal(T.a.qp->state, SIM_QPS_ERR);
	assert_true(T.fab.dma_errors >= 1);	/* and the flush's CQEs fail the same way */
	T.dma_fail = 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_nop, setup),
		cmocka_unit_test_setup(test_rdma_write, setup),
		cmocka_unit_test_setup(test_rdma_write_sgl_and_inline, setup),
		cmocka_unit_test_setup(test_wrap, setup),
		cmocka_unit_test_setup(test_write_imm, setup),
		cmocka_unit_test_setup(test_send, setup),
		cmocka_unit_test_setup(test_rdma_read, setup),
		cmocka_unit_test_setup(test_atomics_8, setup),
		cmocka_unit_test_setup(test_atomics_masked, setup),
		cmocka_unit_test_setup(test_collapsed, setup),
		cmocka_unit_test_setup(test_cq_owner_wrap, setup),
		cmocka_unit_test_setup(test_error_then_flush, setup),
		cmocka_unit_test_setup(test_error_cases, setup),
		cmocka_unit_test_setup(test_qp_access, setup),
		cmocka_unit_test_setup(test_bad_wqe, setup),
		cmocka_unit_test_setup(test_requester_not_rts, setup),
		cmocka_unit_test_setup(test_responder_not_ready, setup),
		cmocka_unit_test_setup(test_link_down_and_drops, setup),
		cmocka_unit_test_setup(test_delay, setup),
		cmocka_unit_test_setup(test_rnr, setup),
		cmocka_unit_test_setup(test_reset_during_backoff, setup),
		cmocka_unit_test_setup(test_recv_errors, setup),
		cmocka_unit_test_setup(test_overrun, setup),
		cmocka_unit_test_setup(test_wait, setup),
		cmocka_unit_test_setup(test_send_en_recv_en, setup),
		cmocka_unit_test_setup(test_trace_and_budget, setup),
		cmocka_unit_test_setup(test_loopback_error, setup),
		cmocka_unit_test_setup(test_dma_queues, setup),
	};

	return cmocka_run_group_tests_name("sim-exec", tests, NULL, NULL);
}
