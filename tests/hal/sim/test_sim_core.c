// SPDX-License-Identifier: MIT
/*
 * The software NIC end to end through the real core objects: dvx_nic_open() on
 * dvx_sim_hal(), dvx_umem_reg(), dvx_mr_reg()/dvx_mr_sink(), dvx_cq_create(),
 * dvx_qp_create() and dvx_qp_connect*() (the driver's own builders and encoders behind
 * them); WQEs posted on qp->sq / qp->rq with the dvx/mlx5 builders, rung with
 * dvx_mlx5_sq_ring_db() / dvx_mlx5_rq_ring(), completions read with
 * dvx_mlx5_cq_poll_one() on cq->mcq. Every opcode, every refusal the model shares with
 * hardware (exact syndrome, errno, failed opcode and WQE index, QP in ERR afterwards,
 * later WQEs flushed), recovery, and two ranks as threads with and without the sim's
 * progress thread.
 */
#include "../../lib/dvx_test.h"

#include <errno.h>
#include <pthread.h>

#include <dvx/nic/cq.h>
#include <dvx/hal/sim.h>
#include <dvx/nic/mr.h>
#include <dvx/nic/nic.h>
#include <dvx/nic/qp.h>
#include <dvx/nic/post.h>
#include <dvx/nic/umem.h>
#include <dvx/mlx5/cqe.h>
#include <dvx/mlx5/rq.h>
#include <dvx/mlx5/sq.h>
#include <dvx/mlx5/wqe.h>

#include "../../../hal/sim/exec.h"	/* the sim's vendor syndromes (enum sim_exec_vendor) */

#define NNIC 3			/* sim_0, sim_1: ConnectX-7 like; sim_2: without core-direct */
#define Q_MEM (1u << 20)	/* per rank: queue memory (one umem) */
#define D_LEN (64u << 10)	/* per rank: data */
#define D_MR (32u << 10)	/* data[0, 32K): the all-access MR, iova = address */
#define D_RO (16u << 10)	/* data[32K, 48K): REMOTE_READ only, iova 0 */
#define D_PD2 (48u << 10)	/* data[48K, 64K): an MR under a second PD */
#define MAXOBJ 8
#define SIG DVX_MLX5_WQE_CTRL_CQ_UPDATE
#define ALL_ACCESS (DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_WRITE | \
		    DVX_ACCESS_REMOTE_READ | DVX_ACCESS_REMOTE_ATOMIC)
#define SPINS 2000000		/* bound on step/poll rounds while a back-off runs */

struct rk {
	struct dvx_nic nic;
	struct dvx_nic nic2;	/* the same sim NIC opened again: a second PD */
	struct dvx_umem umem;
	struct dvx_mr mr, ro, sink, pd2;
	uint8_t *mem;		/* Q_MEM, registered as the umem */
	uint8_t *data;		/* D_LEN */
	uint64_t used;		/* bump allocator over mem */
	uint64_t sinkbuf;
	struct dvx_cq cq[MAXOBJ];
	struct dvx_qp qp[MAXOBJ];
	unsigned ncq, nqp;
	int open, open2;
};

static struct {
	void *storage;
	struct dvx_sim_fabric *fab;
	const struct dvx_hal *hal;
	struct rk r[NNIC];
	/* two-rank scenario */
	pthread_barrier_t bar;
	struct dvx_qp_conn conn[2];
	uint64_t raddr[2];
	uint32_t rkey[2];
	int progress_thread;
	int fail_line[2];
} W;

/* ---- setup ------------------------------------------------------------------------ */

static uint64_t take(struct rk *r, uint64_t bytes, uint64_t align)
{
	uint64_t at = (r->used + align - 1) & ~(align - 1);

	r->used = at + bytes;
	assert_true(r->used <= Q_MEM);
	return at;
}

static void *zalloc(size_t align, size_t len)
{
	void *p = NULL;

	assert_int_equal(posix_memalign(&p, align, len), 0);
	memset(p, 0, len);
	return p;
}

static void mr_reg(struct dvx_nic *nic, void *addr, uint64_t len, uint32_t access,
		   uint32_t flags, struct dvx_mr *mr)
{
	struct dvx_mr_cfg a;

	memset(&a, 0, sizeof(a));
	a.addr = addr;
	a.len = len;
	a.access = access;
	a.flags = flags;
	a.dmabuf_fd = -1;
	assert_int_equal(dvx_mr_reg(nic, &a, mr), 0);
}

static void rank_open(int i)
{
	struct rk *r = &W.r[i];
	struct dvx_nic_cfg na;
	struct dvx_umem_cfg ua;
	char name[16];

	snprintf(name, sizeof(name), "sim_%d", i);
	memset(&na, 0, sizeof(na));
	na.name = name;
	na.gid_index = -1;
	assert_int_equal(dvx_nic_open(&r->nic, W.hal, &na), 0);
	r->open = 1;
	r->mem = zalloc(4096, Q_MEM);
	r->data = zalloc(4096, D_LEN);
	memset(&ua, 0, sizeof(ua));
	ua.addr = r->mem;
	ua.len = Q_MEM;
	ua.dmabuf_fd = -1;
	assert_int_equal(dvx_umem_reg(&r->nic, &ua, &r->umem), 0);
	mr_reg(&r->nic, r->data, D_MR, ALL_ACCESS, 0, &r->mr);
	mr_reg(&r->nic, r->data + D_MR, D_RO, DVX_ACCESS_REMOTE_READ, DVX_MR_IOVA_ZERO, &r->ro);
	assert_int_equal(dvx_mr_sink(&r->nic, &r->sinkbuf, -1, 0, &r->sink), 0);
	assert_int_equal(r->sink.iova, 0);
}

/* a second dvx_nic on the same sim NIC: its own PD, and an MR under it */
static void rank_open_pd2(int i)
{
	struct rk *r = &W.r[i];
	struct dvx_nic_cfg na;
	char name[16];

	snprintf(name, sizeof(name), "sim_%d", i);
	memset(&na, 0, sizeof(na));
	na.name = name;
	na.gid_index = -1;
	assert_int_equal(dvx_nic_open(&r->nic2, W.hal, &na), 0);
	r->open2 = 1;
	assert_int_not_equal(r->nic2.pdn, r->nic.pdn);
	mr_reg(&r->nic2, r->data + D_PD2, D_LEN - D_PD2, ALL_ACCESS, 0, &r->pd2);
}

static void rank_close(struct rk *r)
{
	while (r->nqp)
		assert_int_equal(dvx_qp_destroy(&r->qp[--r->nqp]), 0);
	while (r->ncq)
		assert_int_equal(dvx_cq_destroy(&r->cq[--r->ncq]), 0);
	if (r->open2) {
		assert_int_equal(dvx_mr_dereg(&r->pd2), 0);
		assert_int_equal(dvx_nic_close(&r->nic2), 0);
	}
	if (r->open) {
		assert_int_equal(dvx_mr_dereg(&r->sink), 0);
		assert_int_equal(dvx_mr_dereg(&r->ro), 0);
		assert_int_equal(dvx_mr_dereg(&r->mr), 0);
		assert_int_equal(dvx_umem_dereg(&r->umem), 0);
		assert_int_equal(dvx_nic_close(&r->nic), 0);
	}
	free(r->mem);
	free(r->data);
	memset(r, 0, sizeof(*r));
}

static int setup(void **state)
{
	struct dvx_sim_fabric_cfg fc;
	struct dvx_sim_nic_cfg nc;
	size_t len;
	int i;

	(void)state;
	memset(&W, 0, sizeof(W));
	dvx_sim_fabric_cfg_default(&fc);
	len = dvx_sim_fabric_mem_size(&fc);
	assert_true(len > 0);
	W.storage = malloc(len);
	assert_non_null(W.storage);
	assert_int_equal(dvx_sim_fabric_init(W.storage, len, &fc, &W.fab), 0);
	assert_int_equal(dvx_sim_set_reorder(W.fab, 0, 0), 0);	/* the in-order model's counts */
	for (i = 0; i < NNIC; i++) {
		dvx_sim_nic_cfg_default(&nc, (unsigned)i);
		if (i == 2)
			nc.cd = 0;
		assert_int_equal(dvx_sim_add_nic(W.fab, &nc), i);
	}
	W.hal = dvx_sim_hal(W.fab);
	assert_non_null(W.hal);
	rank_open(0);
	rank_open(1);
	return 0;
}

static int teardown(void **state)
{
	struct dvx_sim_stats st;
	int i;

	(void)state;
	dvx_sim_stop(W.fab);
	for (i = 0; i < NNIC; i++)
		rank_close(&W.r[i]);
	/* everything the core objects created was released through them */
	assert_int_equal(dvx_sim_get_stats(W.fab, &st), 0);
	for (i = 0; i < DVX_SIM_LIVE_OPEN; i++)
		assert_int_equal(st.live[i], 0);
	assert_int_equal(dvx_sim_fini(W.fab), 0);
	free(W.storage);
	return 0;
}

/* ---- objects ---------------------------------------------------------------------- */

static struct dvx_cq *mk_cq(struct rk *r, uint32_t depth)
{
	struct dvx_cq_cfg a;
	struct dvx_cq *cq;

	assert_true(r->ncq < MAXOBJ);
	cq = &r->cq[r->ncq];
	memset(&a, 0, sizeof(a));
	a.depth = depth;
	a.ring_umem = &r->umem;
	a.ring_offset = take(r, DVX_CQ_RING_BYTES(depth), DVX_RING_ALIGN);
	a.dbr_umem = &r->umem;
	a.dbr_offset = take(r, DVX_DBR_BYTES, DVX_DBR_ALIGN);
	assert_int_equal(dvx_cq_create(&r->nic, &a, cq), 0);
	r->ncq++;
	return cq;
}

struct qpo {
	uint32_t sq_depth;	/* 0: 64 */
	uint32_t max_inline;
	uint32_t rq_depth;
	uint32_t rq_sge;
	uint32_t flags;
	struct dvx_uar *uar;
};

/* wr_id arrays (dvx/nic/post.h) the next mk_qp() passes, then forgets */
static uint64_t *next_sq_ids, *next_rq_ids;

static struct dvx_qp *mk_qp(struct rk *r, struct dvx_cq *cq, const struct qpo *o)
{
	struct dvx_qp_cfg a;
	struct dvx_mem_req wq, dbr;
	struct dvx_qp *qp;

	assert_true(r->nqp < MAXOBJ);
	qp = &r->qp[r->nqp];
	memset(&a, 0, sizeof(a));
	a.sq_depth = o && o->sq_depth ? o->sq_depth : 64;
	a.max_inline = o ? o->max_inline : 0;
	a.rq_depth = o ? o->rq_depth : 0;
	a.rq_max_sge = o && o->rq_depth ? (o->rq_sge ? o->rq_sge : 1) : 0;
	a.send_cq = cq;
	a.uar = o ? o->uar : NULL;
	a.user_index = 0x100 + r->nqp;
	a.flags = o ? o->flags : 0;
	a.sq_wr_ids = next_sq_ids;
	a.rq_wr_ids = next_rq_ids;
	next_sq_ids = next_rq_ids = NULL;
	assert_int_equal(dvx_qp_mem_req(&a, &wq, &dbr), 0);
	a.wq_umem = &r->umem;
	a.wq_offset = take(r, wq.bytes, wq.align);
	a.dbr_umem = &r->umem;
	a.dbr_offset = take(r, dbr.bytes, dbr.align);
	assert_int_equal(dvx_qp_create(&r->nic, &a, qp), 0);
	assert_int_equal(qp->state, DVX_MLX5_QP_STATE_RST);
	r->nqp++;
	return qp;
}

static const struct qpo RQ8 = { 0, 0, 8, 2, 0, NULL };

/* A on sim_0 and B on sim_1, each with its own CQ and an 8-deep RQ, connected */
static void mk_pair(struct dvx_qp **a, struct dvx_qp **b, uint8_t rnr_retry)
{
	struct dvx_qp_connect_cfg ca;

	*a = mk_qp(&W.r[0], mk_cq(&W.r[0], 64), &RQ8);
	*b = mk_qp(&W.r[1], mk_cq(&W.r[1], 64), &RQ8);
	dvx_qp_connect_cfg_init(&ca);
	ca.access = DVX_ACCESS_REMOTE_WRITE | DVX_ACCESS_REMOTE_READ | DVX_ACCESS_REMOTE_ATOMIC;
	ca.rnr_retry = rnr_retry;
	assert_int_equal(dvx_qp_connect_pair(*a, *b, &ca), 0);
	assert_int_equal((*a)->state, DVX_MLX5_QP_STATE_RTS);
	assert_int_equal((*b)->state, DVX_MLX5_QP_STATE_RTS);
}

/* a force-loopback QP on @r with its own CQ (companions, core-direct masters) */
static struct dvx_qp *mk_loop(struct rk *r, uint32_t flags, struct dvx_uar *uar)
{
	struct qpo o = { 0, 0, 0, 0, flags, uar };
	struct dvx_qp_connect_cfg ca;
	struct dvx_qp *qp = mk_qp(r, mk_cq(r, 64), &o);

	dvx_qp_connect_cfg_init(&ca);
	ca.access = DVX_ACCESS_REMOTE_WRITE | DVX_ACCESS_REMOTE_READ | DVX_ACCESS_REMOTE_ATOMIC;
	assert_int_equal(dvx_qp_connect_loopback(qp, &ca), 0);
	return qp;
}

/* ---- posting and polling ------------------------------------------------------------ */

static uint64_t va(const struct rk *r, uint32_t off)
{
	return (uint64_t)(uintptr_t)(r->data + off);
}

static uint32_t reserve(struct dvx_qp *qp, uint32_t n)
{
	uint64_t idx = 0;

	assert_int_equal(dvx_mlx5_sq_reserve(&qp->sq, &qp->sqc, n, DVX_MLX5_SQ_SINGLE, &idx), 0);
	return idx;
}

static uint32_t post_write(struct dvx_qp *qp, uint8_t fl, uint64_t raddr, uint32_t rkey,
			   uint64_t laddr, uint32_t lkey, uint32_t len)
{
	uint32_t i = reserve(qp, 1);

	assert_int_equal(dvx_mlx5_wqe_rdma_write(&qp->sq.wq, i, fl, raddr, rkey, laddr, lkey,
						 len), 1);
	return i;
}

static uint32_t post_nop(struct dvx_qp *qp, uint8_t fl)
{
	uint32_t i = reserve(qp, 1);

	assert_int_equal(dvx_mlx5_wqe_nop(&qp->sq.wq, i, fl), 1);
	return i;
}

static void post_recv(struct dvx_qp *qp, const struct dvx_mlx5_sge *sgl, uint32_t n)
{
	assert_true(dvx_mlx5_rq_post(&qp->rq, sgl, n) >= 0);
	dvx_mlx5_rq_ring(&qp->rq);
}

static void post_recv1(struct dvx_qp *qp, uint64_t addr, uint32_t lkey, uint32_t len)
{
	struct dvx_mlx5_sge s = { addr, len, lkey };

	post_recv(qp, &s, 1);
}

static void ring(struct dvx_qp *qp)
{
	dvx_mlx5_sq_ring_db(&qp->sq, &qp->sqc, qp->sqc.resv);
}

static unsigned step(void)
{
	return dvx_sim_step(W.fab);
}

/* take one CQE: poll_one's result; the CI record follows (the CQs do not ignore overrun) */
static int take_cqe(struct dvx_cq *cq, struct dvx_mlx5_cqe_info *i)
{
	int rc = dvx_mlx5_cq_poll_one(&cq->mcq, i);

	if (rc)
		dvx_mlx5_cq_update_ci(&cq->mcq);
	return rc;
}

/* step the model until @cq has a CQE (bounded: for back-offs on the real clock) */
static int wait_cqe(struct dvx_cq *cq, struct dvx_mlx5_cqe_info *i)
{
	int k, rc = 0;

	for (k = 0; k < SPINS && !rc; k++) {
		rc = take_cqe(cq, i);
		if (!rc)
			step();
	}
	return rc;
}

/* a successful requester CQE of @qp for the WQE at @idx; the SQ slots are freed */
static void expect_req(struct dvx_qp *qp, uint8_t wqe_op, uint32_t idx)
{
	struct dvx_mlx5_cqe_info i;

	assert_int_equal(wait_cqe(qp->send_cq, &i), 1);
	assert_int_equal(i.opcode, DVX_MLX5_CQE_REQ);
	assert_int_equal(i.wqe_opcode, wqe_op);
	assert_int_equal(i.wqe_counter, (uint16_t)idx);
	assert_int_equal(i.qpn, qp->qpn);
	assert_int_equal(i.srqn_uidx, qp->user_index);
	assert_true(dvx_mlx5_sq_completed(&qp->sq, &qp->sqc, i.wqe_counter) > 0);
}

/* an error CQE: syndrome, errno from dvx_mlx5_cqe_parse, the sim's reason, the WQE */
static void expect_err(struct dvx_cq *cq, uint32_t qpn, int err, uint8_t synd, uint8_t vendor,
		       uint8_t wqe_op, uint32_t idx)
{
	struct dvx_mlx5_cqe_info i;

	assert_int_equal(wait_cqe(cq, &i), err);
	assert_int_equal(i.is_error, 1);
	assert_int_equal(i.opcode, DVX_MLX5_CQE_REQ_ERR);
	assert_int_equal(i.syndrome, synd);
	assert_int_equal(dvx_mlx5_cqe_syndrome_errno(i.syndrome), err);
	assert_int_equal(i.vendor_syndrome, vendor);
	assert_int_equal(i.wqe_opcode, wqe_op);
	assert_int_equal(i.wqe_counter, (uint16_t)idx);
	assert_int_equal(i.qpn, qpn);
}

static void expect_flush(struct dvx_cq *cq, uint32_t qpn, uint8_t wqe_op, uint32_t idx)
{
	expect_err(cq, qpn, -ECANCELED, DVX_MLX5_CQE_SYNDROME_WR_FLUSH_ERR, SIM_VS_FLUSH, wqe_op,
		   idx);
}

static void expect_empty(struct dvx_cq *cq)
{
	struct dvx_mlx5_cqe_info i;

	step();
	assert_int_equal(take_cqe(cq, &i), 0);
}

static uint32_t qstate(struct dvx_qp *qp, struct dvx_mlx5_qp_query *q)
{
	struct dvx_mlx5_qp_query tmp;
	uint32_t s = 0xff;

	assert_int_equal(dvx_qp_query(qp, q ? q : &tmp, &s), 0);
	return s;
}

static uint64_t rd64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static uint32_t rd32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static void wr64(void *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static void wr32(void *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void fill(uint8_t *p, uint32_t len, uint8_t seed)
{
	uint32_t k;

	for (k = 0; k < len; k++)
		p[k] = (uint8_t)(seed + k * 7);
}

/* ---- every opcode ----------------------------------------------------------------- */

/* NOP, RDMA WRITE, WRITE_IMM, SEND, SEND_IMM (2-entry lists), RDMA READ (also from the
 * read-only MR at iova 0), and the responder CQEs */
static void test_opcodes(void **state)
{
	struct rk *r0 = &W.r[0], *r1 = &W.r[1];
	struct dvx_mlx5_cqe_info i;
	struct dvx_mlx5_sge sg[2], rs[2];
	struct dvx_qp *a, *b;
	uint32_t n;

	(void)state;
	mk_pair(&a, &b, 7);
	fill(r0->data, 4096, 1);
	fill(r1->data + D_MR, 256, 99);		/* the read-only region */

	/* receives on B: one for WRITE_IMM (no buffer needed), one for SEND, two-entry
	 * scatter list for SEND_IMM (16 + 64 bytes) */
	post_recv(b, NULL, 0);
	post_recv1(b, va(r1, 0x4000), r1->mr.lkey, 256);
	rs[0].addr = va(r1, 0x5000);
	rs[0].length = 16;
	rs[0].lkey = r1->mr.lkey;
	rs[1].addr = va(r1, 0x5100);
	rs[1].length = 64;
	rs[1].lkey = r1->mr.lkey;
	post_recv(b, rs, 2);

	n = post_nop(a, SIG);
	assert_int_equal(n, 0);
	post_write(a, SIG, va(r1, 0x1000), r1->mr.rkey, va(r0, 0), r0->mr.lkey, 4096);
	n = reserve(a, 1);
	assert_int_equal(dvx_mlx5_wqe_rdma_write_imm(&a->sq.wq, n, SIG, 0xc0ffee,
						     &(struct dvx_mlx5_raddr){ va(r1, 0x3000),
									       r1->mr.rkey },
						     &(struct dvx_mlx5_sge){ va(r0, 100), 33,
									     r0->mr.lkey }),
			 1);
	n = reserve(a, 1);
	assert_int_equal(dvx_mlx5_wqe_send(&a->sq.wq, n, SIG | DVX_MLX5_WQE_CTRL_SOLICITED,
					   va(r0, 200), r0->mr.lkey, 100), 1);
	sg[0].addr = va(r0, 300);
	sg[0].length = 24;
	sg[0].lkey = r0->mr.lkey;
	sg[1].addr = va(r0, 600);
	sg[1].length = 40;
	sg[1].lkey = r0->mr.lkey;
	n = reserve(a, 1);
	assert_int_equal(dvx_mlx5_wqe_send_sgl(&a->sq.wq, n, DVX_MLX5_OPCODE_SEND_IMM, SIG,
					       0x5eed, sg, 2), 1);
	n = reserve(a, 1);
	assert_int_equal(dvx_mlx5_wqe_rdma_read(&a->sq.wq, n, SIG, va(r1, 0x1000), r1->mr.rkey,
						va(r0, 0x2000), r0->mr.lkey, 4096), 1);
	/* READ of the read-only MR (iova 0: the address is an offset) */
	n = reserve(a, 1);
	assert_int_equal(dvx_mlx5_wqe_rdma_read(&a->sq.wq, n, SIG, 16, r1->ro.rkey,
						va(r0, 0x3000), r0->mr.lkey, 128), 1);
	ring(a);
	assert_int_equal(step(), 7);

	expect_req(a, DVX_MLX5_OPCODE_NOP, 0);
	expect_req(a, DVX_MLX5_OPCODE_RDMA_WRITE, 1);
	expect_req(a, DVX_MLX5_OPCODE_RDMA_WRITE_IMM, 2);
	expect_req(a, DVX_MLX5_OPCODE_SEND, 3);
	expect_req(a, DVX_MLX5_OPCODE_SEND_IMM, 4);
	assert_int_equal(take_cqe(a->send_cq, &i), 1);
	assert_int_equal(i.wqe_opcode, DVX_MLX5_OPCODE_RDMA_READ);
	assert_int_equal(i.byte_cnt, 4096);
	assert_int_equal(take_cqe(a->send_cq, &i), 1);
	assert_int_equal(i.wqe_counter, 6);
	assert_int_equal(i.byte_cnt, 128);
	assert_int_equal(take_cqe(a->send_cq, &i), 0);

	assert_memory_equal(r1->data + 0x1000, r0->data, 4096);
	assert_memory_equal(r1->data + 0x3000, r0->data + 100, 33);
	assert_memory_equal(r1->data + 0x4000, r0->data + 200, 100);
	/* 24 + 40 bytes gathered, scattered as 16 + 48 */
	assert_memory_equal(r1->data + 0x5000, r0->data + 300, 16);
	assert_memory_equal(r1->data + 0x5100, r0->data + 300 + 16, 8);
	assert_memory_equal(r1->data + 0x5100 + 8, r0->data + 600, 40);
	assert_memory_equal(r0->data + 0x2000, r1->data + 0x1000, 4096);
	assert_memory_equal(r0->data + 0x3000, r1->data + D_MR + 16, 128);

	/* responder CQEs, one per consumed receive, in order */
	assert_int_equal(take_cqe(b->send_cq, &i), 1);
	assert_int_equal(i.opcode, DVX_MLX5_CQE_RESP_WR_IMM);
	assert_int_equal(i.imm, 0xc0ffee);
	assert_int_equal(i.byte_cnt, 33);
	assert_int_equal(i.wqe_counter, 0);
	assert_int_equal(i.qpn, b->qpn);
	assert_int_equal(i.rqpn, a->qpn);
	assert_int_equal(i.srqn_uidx, b->user_index);
	assert_int_equal(dvx_mlx5_rq_completed(&b->rq), 0);
	assert_int_equal(take_cqe(b->send_cq, &i), 1);
	assert_int_equal(i.opcode, DVX_MLX5_CQE_RESP_SEND);
	assert_int_equal(i.byte_cnt, 100);
	assert_int_equal(i.wqe_counter, 1);
	assert_int_equal(i.se, 1);
	assert_int_equal(dvx_mlx5_rq_completed(&b->rq), 1);
	assert_int_equal(take_cqe(b->send_cq, &i), 1);
	assert_int_equal(i.opcode, DVX_MLX5_CQE_RESP_SEND_IMM);
	assert_int_equal(i.imm, 0x5eed);
	assert_int_equal(i.byte_cnt, 64);
	assert_int_equal(i.wqe_counter, 2);
	assert_int_equal(i.se, 0);
	assert_int_equal(dvx_mlx5_rq_completed(&b->rq), 2);
	assert_int_equal(take_cqe(b->send_cq, &i), 0);
	assert_int_equal(qstate(a, NULL), DVX_MLX5_QP_STATE_RTS);
	assert_int_equal(qstate(b, NULL), DVX_MLX5_QP_STATE_RTS);
}

/* CS, FA, masked CS/FA of 4 and 8 bytes (8-byte masked CS: 2 WQEBBs) */
/* ---- dvx/nic/post.h: posts with wr_ids, dvx_cq_poll() ---- */

/* step the model until @cq yields a completion (1) or an error (< 0) */
static int poll_wc(struct dvx_cq *cq, struct dvx_wc *wc)
{
	int k, rc = 0;

	for (k = 0; k < SPINS && !rc; k++) {
		rc = dvx_cq_poll(cq, wc);
		if (!rc)
			step();
	}
	return rc;
}

static void expect_wc(struct dvx_cq *cq, int rc, uint64_t wr_id, uint32_t opcode,
		      struct dvx_qp *qp)
{
	struct dvx_wc wc;

	memset(&wc, 0xa5, sizeof(wc));
	assert_int_equal(poll_wc(cq, &wc), rc);
	assert_int_equal(wc.wr_id, wr_id);
	assert_int_equal(wc.opcode, opcode);
	assert_int_equal(wc.status, rc > 0 ? 0 : rc);
	assert_ptr_equal(wc.qp, qp);
	assert_int_equal(wc.qpn, qp->qpn);
}

/* ---- queues in device memory (dvx_sim_dmabuf_export_dma()) ---- */

/* "device memory": reached by the sim only through these copies, at device addresses
 * that are no host address; the host (standing in for the GPU) writes it directly */
#define DEV_BASE 0x7f0000000000ull
#define DEV_LEN (64u << 10)
static struct {
	uint8_t *mem;
	unsigned reads, writes;
} D;

static int dev_read(void *arg, void *dst, uint64_t src, uint64_t len)
{
	(void)arg;
	if (src < DEV_BASE || src - DEV_BASE > DEV_LEN || len > DEV_LEN - (src - DEV_BASE))
		return -EFAULT;
	memcpy(dst, D.mem + (src - DEV_BASE), len);
	D.reads++;
	return 0;
}

static int dev_write(void *arg, uint64_t dst, const void *src, uint64_t len)
{
	(void)arg;
	if (dst < DEV_BASE || dst - DEV_BASE > DEV_LEN || len > DEV_LEN - (dst - DEV_BASE))
		return -EFAULT;
	memcpy(D.mem + (dst - DEV_BASE), src, len);
	D.writes++;
	return 0;
}

/*
 * A QP whose SQ, doorbell record and CQ live in device memory talks to an ordinary
 * QP: every operation completes, the bytes arrive, the CQEs reach the device copy the
 * poller reads, and the copies are counted; an MR over such memory is taken; bad
 * export arguments are refused.
 */
static void test_device_queues(void **state)
{
	static const struct dvx_sim_dma dma = { dev_read, dev_write, NULL };
	static uint64_t ids[64];
	struct rk *r0 = &W.r[0], *r1 = &W.r[1];
	struct dvx_umem_cfg ua;
	struct dvx_mr_cfg ma;
	struct dvx_cq_cfg ca;
	struct dvx_qp_cfg qa;
	struct dvx_qp_connect_cfg cn;
	struct dvx_mem_req wq, dbr;
	struct dvx_sim_stats st;
	struct dvx_umem du;
	struct dvx_mr mr;
	struct dvx_cq dcq;
	struct dvx_qp dqp, *b;
	uint64_t old = 0;
	int fd;

	(void)state;
	memset(&du, 0, sizeof(du));
	memset(&mr, 0, sizeof(mr));
	memset(&dcq, 0, sizeof(dcq));
	memset(&dqp, 0, sizeof(dqp));
	D.mem = zalloc(4096, DEV_LEN);
	D.reads = D.writes = 0;
	assert_int_equal(dvx_sim_dmabuf_export_dma(W.fab, DEV_BASE + 8, DEV_LEN, &dma, &fd), -EINVAL);
	assert_int_equal(dvx_sim_dmabuf_export_dma(W.fab, DEV_BASE, 0, &dma, &fd), -EINVAL);
	assert_int_equal(dvx_sim_dmabuf_export_dma(W.fab, DEV_BASE, DEV_LEN, NULL, &fd), -EINVAL);
	assert_int_equal(dvx_sim_dmabuf_export_dma(W.fab, DEV_BASE, DEV_LEN, &dma, &fd), 0);

	/* the umem: known by the address the poster uses (here the host's view) */
	memset(&ua, 0, sizeof(ua));
	ua.addr = D.mem;
	ua.len = DEV_LEN;
	ua.flags = DVX_UMEM_F_DMABUF | DVX_UMEM_F_CPU;
	ua.dmabuf_fd = fd;
	assert_int_equal(dvx_umem_reg(&r0->nic, &ua, &du), 0);
	/* data there is taken too (test_device_mrs runs the data path over it) */
	memset(&ma, 0, sizeof(ma));
	ma.addr = (void *)(uintptr_t)(DEV_BASE + 0xc000);
	ma.len = 4096;
	ma.access = DVX_ACCESS_LOCAL_WRITE;
	ma.flags = DVX_MR_F_DMABUF;
	ma.dmabuf_fd = fd;
	ma.dmabuf_offset = 0xc000;
	assert_int_equal(dvx_mr_reg(&r0->nic, &ma, &mr), 0);
	assert_int_equal(dvx_mr_dereg(&mr), 0);

	memset(&ca, 0, sizeof(ca));
	ca.depth = 64;
	ca.ring_umem = &du;
	ca.ring_offset = 0;
	ca.dbr_umem = &du;
	ca.dbr_offset = 0x8000;
	assert_int_equal(dvx_cq_create(&r0->nic, &ca, &dcq), 0);
	memset(&qa, 0, sizeof(qa));
	qa.sq_depth = 64;
	qa.send_cq = &dcq;
	qa.sq_wr_ids = ids;
	assert_int_equal(dvx_qp_mem_req(&qa, &wq, &dbr), 0);
	qa.wq_umem = &du;
	qa.wq_offset = 0x2000;
	qa.dbr_umem = &du;
	qa.dbr_offset = 0x8040;
	assert_int_equal(dvx_qp_create(&r0->nic, &qa, &dqp), 0);
	b = mk_qp(r1, mk_cq(r1, 64), NULL);
	dvx_qp_connect_cfg_init(&cn);
	cn.access = DVX_ACCESS_REMOTE_WRITE | DVX_ACCESS_REMOTE_READ | DVX_ACCESS_REMOTE_ATOMIC;
	assert_int_equal(dvx_qp_connect_pair(&dqp, b, &cn), 0);

	fill(r0->data, 4096, 9);
	wr64(r1->data + 0x3000, 40);
	assert_int_equal(dvx_qp_post_write(&dqp, 1, va(r0, 0), r0->mr.lkey, 4096, va(r1, 0x1000),
					   r1->mr.rkey, DVX_POST_MORE), 0);
	assert_int_equal(dvx_qp_post_read(&dqp, 2, va(r0, 0x2000), r0->mr.lkey, 64, va(r1, 0x1000),
					  r1->mr.rkey, DVX_POST_SIGNALED | DVX_POST_MORE), 0);
	assert_int_equal(dvx_qp_post_fetch_add(&dqp, 3, va(r1, 0x3000), r1->mr.rkey, 2,
					       va(r0, 0x3000), r0->mr.lkey,
					       DVX_POST_SIGNALED | DVX_POST_FENCE), 0);
	expect_wc(&dcq, 1, 2, DVX_WC_RDMA_READ, &dqp);
	expect_wc(&dcq, 1, 3, DVX_WC_FETCH_ADD, &dqp);
	assert_memory_equal(r1->data + 0x1000, r0->data, 4096);
	assert_memory_equal(r0->data + 0x2000, r0->data, 64);
	memcpy(&old, r0->data + 0x3000, 8);
	assert_int_equal(old, 40);
	assert_int_equal(rd64(r1->data + 0x3000), 42);
	assert_int_equal(dvx_sim_get_stats(W.fab, &st), 0);
	assert_int_equal(st.dma_errors, 0);
	assert_true(st.dma_reads >= 3 && st.dma_reads == D.reads);
	assert_true(st.dma_writes >= 4 && st.dma_writes == D.writes);	/* 2 per CQE */

	/* an error completion travels the same way: a bad rkey */
	assert_int_equal(dvx_qp_post_write(&dqp, 4, va(r0, 0), r0->mr.lkey, 8, va(r1, 0),
					   r1->mr.rkey ^ 0x100, DVX_POST_SIGNALED), 0);
	expect_wc(&dcq, -EPERM, 4, DVX_WC_RDMA_WRITE, &dqp);

	assert_int_equal(dvx_qp_destroy(&dqp), 0);
	assert_int_equal(dvx_cq_destroy(&dcq), 0);
	assert_int_equal(dvx_sim_dmabuf_release(W.fab, fd), -EBUSY);	/* the umem holds it */
	assert_int_equal(dvx_umem_dereg(&du), 0);
	assert_int_equal(dvx_sim_dmabuf_release(W.fab, fd), 0);
	assert_int_equal(dvx_sim_dmabuf_release(W.fab, fd), -EBADF);
	free(D.mem);
}

static void test_post_helpers(void **state)
{
	static uint64_t a_sq[64], b_sq[64], a_rq[8], b_rq[8];
	struct rk *r0 = &W.r[0], *r1 = &W.r[1];
	struct qpo o = { 0, 64, 8, 1, 0, NULL };
	struct dvx_qp_connect_cfg ca;
	struct dvx_cq *ca_cq, *cb_cq;
	struct dvx_qp *a, *b;
	struct dvx_wc wc;
	uint8_t msg[40];
	uint32_t i;

	(void)state;
	ca_cq = mk_cq(r0, 64);
	cb_cq = mk_cq(r1, 64);
	next_sq_ids = a_sq;
	next_rq_ids = a_rq;
	a = mk_qp(r0, ca_cq, &o);
	next_sq_ids = b_sq;
	next_rq_ids = b_rq;
	b = mk_qp(r1, cb_cq, &o);
	dvx_qp_connect_cfg_init(&ca);
	ca.access = DVX_ACCESS_REMOTE_WRITE | DVX_ACCESS_REMOTE_READ | DVX_ACCESS_REMOTE_ATOMIC;
	assert_int_equal(dvx_qp_connect_pair(a, b, &ca), 0);
	assert_ptr_equal(ca_cq->qps, a);
	fill(r0->data, 4096, 3);
	fill(r1->data + 0x2000, 64, 4);
	wr64(r1->data + 0x3000, 40);

	/* receives on B: one for the WRITE_IMM, one for the SEND (two posts, published
	 * only by dvx_qp_ring()) */
	assert_int_equal(dvx_qp_post_recv(b, 100, 0, 0, 0, DVX_POST_MORE), 0);
	assert_int_equal(dvx_qp_post_recv(b, 101, va(r1, 0x4000), r1->mr.lkey, 256, DVX_POST_MORE),
			 0);
	assert_int_equal(b->dbrec[DVX_MLX5_RCV_DBR], 0);
	dvx_qp_ring(b);
	assert_int_equal(dvx_be32_to_cpu(b->dbrec[DVX_MLX5_RCV_DBR]), 2);
	/* every kind of post on A */
	assert_int_equal(dvx_qp_post_write(a, 1, va(r0, 0), r0->mr.lkey, 4096, va(r1, 0x1000),
					   r1->mr.rkey, DVX_POST_SIGNALED), 0);
	assert_int_equal(dvx_qp_post_write_imm(a, 2,
					       &(struct dvx_mlx5_sge){ va(r0, 0), 16, r0->mr.lkey },
					       &(struct dvx_mlx5_raddr){ va(r1, 0x1800),
									 r1->mr.rkey },
					       0xabc, DVX_POST_SIGNALED),
			 0);
	for (i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(0x30 + i);
	assert_int_equal(dvx_qp_post_send(a, 3, (uint64_t)(uintptr_t)msg, 0, sizeof(msg),
					  DVX_POST_SIGNALED | DVX_POST_INLINE), 0);
	memset(msg, 0, sizeof(msg));	/* inline: the bytes were copied at the post */
	assert_int_equal(dvx_qp_post_read(a, 4, va(r0, 0x2000), r0->mr.lkey, 64, va(r1, 0x2000),
					  r1->mr.rkey, DVX_POST_SIGNALED), 0);
	assert_int_equal(dvx_qp_post_fetch_add(a, 5, va(r1, 0x3000), r1->mr.rkey, 2,
					       va(r0, 0x3000), r0->mr.lkey, DVX_POST_SIGNALED), 0);
	assert_int_equal(dvx_qp_post_comp_swap(a, 6,
					       &(struct dvx_mlx5_raddr){ va(r1, 0x3000),
									 r1->mr.rkey },
					       42, 7, va(r0, 0x3008), r0->mr.lkey,
					       DVX_POST_SIGNALED | DVX_POST_FENCE),
			 0);
	/* a batch: two unsignaled and a signaled one, one doorbell */
	assert_int_equal(dvx_qp_post_write(a, 7, va(r0, 0), r0->mr.lkey, 8, va(r1, 0x5000),
					   r1->mr.rkey, DVX_POST_MORE), 0);
	assert_int_equal(dvx_qp_post_write(a, 8, va(r0, 8), r0->mr.lkey, 8, va(r1, 0x5008),
					   r1->mr.rkey, DVX_POST_MORE), 0);
	assert_int_equal(dvx_qp_post_write(a, 9, va(r0, 16), r0->mr.lkey, 8, va(r1, 0x5010),
					   r1->mr.rkey, DVX_POST_MORE | DVX_POST_SIGNALED), 0);
	dvx_qp_ring(a);

	expect_wc(ca_cq, 1, 1, DVX_WC_RDMA_WRITE, a);
	expect_wc(ca_cq, 1, 2, DVX_WC_RDMA_WRITE, a);
	expect_wc(ca_cq, 1, 3, DVX_WC_SEND, a);
	expect_wc(ca_cq, 1, 4, DVX_WC_RDMA_READ, a);
	expect_wc(ca_cq, 1, 5, DVX_WC_FETCH_ADD, a);
	expect_wc(ca_cq, 1, 6, DVX_WC_COMP_SWAP, a);
	expect_wc(ca_cq, 1, 9, DVX_WC_RDMA_WRITE, a);	/* 7 and 8 completed with it */
	assert_int_equal(dvx_cq_poll(ca_cq, &wc), 0);
	assert_int_equal(a->sqc.ci, a->sqc.resv);	/* every slot free again */
	memset(&wc, 0, sizeof(wc));
	assert_int_equal(poll_wc(cb_cq, &wc), 1);
	assert_int_equal(wc.wr_id, 100);
	assert_int_equal(wc.opcode, DVX_WC_RECV_RDMA_WITH_IMM);
	assert_int_equal(wc.imm, 0xabc);
	assert_int_equal(poll_wc(cb_cq, &wc), 1);
	assert_int_equal(wc.wr_id, 101);
	assert_int_equal(wc.opcode, DVX_WC_RECV);
	assert_int_equal(wc.byte_len, 40);
	assert_ptr_equal(wc.qp, b);
	/* the bytes */
	assert_memory_equal(r1->data + 0x1000, r0->data, 4096);
	assert_memory_equal(r0->data + 0x2000, r1->data + 0x2000, 64);
	for (i = 0; i < 40; i++)
		assert_int_equal(r1->data[0x4000 + i], 0x30 + i);
	assert_int_equal(rd64(r0->data + 0x3000), 40);	/* fetch-add's old value */
	assert_int_equal(rd64(r0->data + 0x3008), 42);	/* compare-swap saw 40 + 2 */
	assert_int_equal(rd64(r1->data + 0x3000), 7);
	assert_memory_equal(r1->data + 0x5000, r0->data, 24);

	/* a full ring is -ENOSPC until completions are polled */
	for (i = 0; i < 64; i++)
		assert_int_equal(dvx_qp_post_write(a, 200 + i, va(r0, 0), r0->mr.lkey, 8,
						   va(r1, 0x6000), r1->mr.rkey,
						   DVX_POST_MORE | (i == 63 ? DVX_POST_SIGNALED : 0)),
				 0);
	assert_int_equal(dvx_qp_post_write(a, 999, va(r0, 0), r0->mr.lkey, 8, va(r1, 0x6000),
					   r1->mr.rkey, 0), -ENOSPC);
	dvx_qp_ring(a);
	expect_wc(ca_cq, 1, 263, DVX_WC_RDMA_WRITE, a);
	/* refusals that post nothing */
	assert_int_equal(dvx_qp_post_write(a, 0, (uint64_t)(uintptr_t)msg, 0, 65, va(r1, 0),
					   r1->mr.rkey, DVX_POST_INLINE), -EMSGSIZE);
	assert_int_equal(dvx_qp_post_read(a, 0, (uint64_t)(uintptr_t)msg, 0, 8, va(r1, 0),
					  r1->mr.rkey, DVX_POST_INLINE), -EINVAL);
	assert_int_equal(dvx_qp_post_write(a, 0, va(r0, 0), r0->mr.lkey, 1u << 31, va(r1, 0),
					   r1->mr.rkey, 0), -EINVAL);
	assert_int_equal(a->sqc.resv, a->sqc.ci);
	/* an error completion carries its wr_id and errno; the next WQE is flushed */
	assert_int_equal(dvx_qp_post_write(a, 50, va(r0, 0), r0->mr.lkey, 8, va(r1, 0),
					   r1->mr.rkey ^ 0x5a00, DVX_POST_SIGNALED), 0);
	expect_wc(ca_cq, -EPERM, 50, DVX_WC_RDMA_WRITE, a);
	assert_int_equal(dvx_qp_post_write(a, 51, va(r0, 0), r0->mr.lkey, 8, va(r1, 0),
					   r1->mr.rkey, DVX_POST_SIGNALED), 0);
	expect_wc(ca_cq, -ECANCELED, 51, DVX_WC_RDMA_WRITE, a);
}

static void test_atomics(void **state)
{
	struct rk *r0 = &W.r[0], *r1 = &W.r[1];
	uint8_t *t = r1->data + 0x100, *res = r0->data + 0x800;
	struct dvx_qp *a, *b;
	uint32_t n;

	(void)state;
	mk_pair(&a, &b, 7);
	assert_int_equal(r0->nic.atomic_be_results, 0);
	assert_true(r0->nic.features & DVX_NIC_FEAT_EXT_ATOMIC);
	assert_int_equal(r1->nic.atomic_mode, 3);
	wr64(t, 1000);				/* FA, CS */
	wr32(t + 8, 0x0000ffffu);		/* masked FA 4 B */
	wr32(t + 12, 0xaabbccddu);		/* masked CS 4 B */
	wr64(t + 16, 0x00000000ffffffffull);	/* masked FA 8 B */
	wr64(t + 24, 0x1111222233334444ull);	/* masked CS 8 B */

	n = reserve(a, 1);
	assert_int_equal(dvx_mlx5_wqe_atomic_fa(&a->sq.wq, n, SIG, va(r1, 0x100), r1->mr.rkey, 5,
						va(r0, 0x800), r0->mr.lkey), 1);
	n = reserve(a, 1);	/* matches: 1005 -> 77 */
	assert_int_equal(dvx_mlx5_wqe_atomic_cs(&a->sq.wq, n, SIG,
						&(struct dvx_mlx5_raddr){ va(r1, 0x100),
									  r1->mr.rkey },
						1005, 77, va(r0, 0x808), r0->mr.lkey),
			 1);
	n = reserve(a, 1);	/* does not match: stays 77 */
	assert_int_equal(dvx_mlx5_wqe_atomic_cs(&a->sq.wq, n, SIG,
						&(struct dvx_mlx5_raddr){ va(r1, 0x100),
									  r1->mr.rkey },
						1005, 5, va(r0, 0x810), r0->mr.lkey),
			 1);
	n = reserve(a, 1);	/* two 16-bit fields: ffff+1 does not carry into the next */
	assert_int_equal(dvx_mlx5_wqe_masked_fa32(&a->sq.wq, n, SIG,
						  &(struct dvx_mlx5_raddr){ va(r1, 0x108),
									    r1->mr.rkey },
						  0x00010001u, 0x00008000u, va(r0, 0x818),
						  r0->mr.lkey),
			 1);
	n = reserve(a, 1);
	assert_int_equal(dvx_mlx5_wqe_masked_cs32(&a->sq.wq, n, SIG,
						  &(struct dvx_mlx5_raddr){ va(r1, 0x10c),
									    r1->mr.rkey },
						  &(struct dvx_mlx5_masked_cs){
							  0x0000ccddu, 0x0000ffffu, 0x11220000u,
							  0xffff0000u },
						  va(r0, 0x81c), r0->mr.lkey),
			 1);
	n = reserve(a, 1);
	assert_int_equal(dvx_mlx5_wqe_masked_fa64(&a->sq.wq, n, SIG,
						  &(struct dvx_mlx5_raddr){ va(r1, 0x110),
									    r1->mr.rkey },
						  0x0000000100000001ull, 0x8000000080000000ull,
						  va(r0, 0x820), r0->mr.lkey),
			 1);
	n = reserve(a, 2);
	assert_int_equal(dvx_mlx5_wqe_masked_cs64(&a->sq.wq, n, SIG,
						  &(struct dvx_mlx5_raddr){ va(r1, 0x118),
									    r1->mr.rkey },
						  &(struct dvx_mlx5_masked_cs){
							  0x1111000000000000ull,
							  0xffff000000000000ull, 0x5555ull,
							  0xffffull },
						  va(r0, 0x828), r0->mr.lkey),
			 2);
	/* a result nobody reads: the iova-0 sink */
	n = reserve(a, 1);
	assert_int_equal(dvx_mlx5_wqe_atomic_fa(&a->sq.wq, n, SIG, va(r1, 0x100), r1->mr.rkey, 1,
						0, r0->sink.lkey), 1);
	ring(a);
	assert_int_equal(step(), 8);
	expect_req(a, DVX_MLX5_OPCODE_ATOMIC_FA, 0);
	expect_req(a, DVX_MLX5_OPCODE_ATOMIC_CS, 1);
	expect_req(a, DVX_MLX5_OPCODE_ATOMIC_CS, 2);
	expect_req(a, DVX_MLX5_OPCODE_ATOMIC_MASKED_FA, 3);
	expect_req(a, DVX_MLX5_OPCODE_ATOMIC_MASKED_CS, 4);
	expect_req(a, DVX_MLX5_OPCODE_ATOMIC_MASKED_FA, 5);
	expect_req(a, DVX_MLX5_OPCODE_ATOMIC_MASKED_CS, 6);
	expect_req(a, DVX_MLX5_OPCODE_ATOMIC_FA, 8);	/* the 2-WQEBB WQE took 6 and 7 */
	assert_int_equal(a->sqc.ci, a->sqc.resv);

	/* targets in host order; 8-byte results in host order (endianness mode 1), 4-byte
	 * results big-endian */
	assert_int_equal(rd64(t), 78);
	assert_int_equal(rd64(res), 1000);
	assert_int_equal(rd64(res + 8), 1005);
	assert_int_equal(rd64(res + 16), 77);
	assert_int_equal(rd32(t + 8), 0x00010000u);
	assert_int_equal(dvx_be32_to_cpu((dvx_be32)rd32(res + 24)), 0x0000ffffu);
	assert_int_equal(rd32(t + 12), 0x1122ccddu);
	assert_int_equal(dvx_be32_to_cpu((dvx_be32)rd32(res + 28)), 0xaabbccddu);
	assert_int_equal(rd64(t + 16), 0x0000000100000000ull);
	assert_int_equal(rd64(res + 32), 0x00000000ffffffffull);
	assert_int_equal(rd64(t + 24), 0x1111222233335555ull);
	assert_int_equal(rd64(res + 40), 0x1111222233334444ull);
	assert_int_equal(r0->sinkbuf, 77);
}

/* inline WRITE (4 WQEBBs) and inline SEND_IMM */
static void test_inline(void **state)
{
	struct rk *r0 = &W.r[0], *r1 = &W.r[1];
	struct qpo o = { 64, 256, 8, 1, 0, NULL };
	struct dvx_qp_connect_cfg ca;
	struct dvx_mlx5_cqe_info i;
	struct dvx_qp *a, *b;
	uint8_t buf[256];
	uint32_t n;

	(void)state;
	a = mk_qp(r0, mk_cq(r0, 64), &o);
	b = mk_qp(r1, mk_cq(r1, 64), &o);
	dvx_qp_connect_cfg_init(&ca);
	ca.access = DVX_ACCESS_REMOTE_WRITE;
	assert_int_equal(dvx_qp_connect_pair(a, b, &ca), 0);
	assert_int_equal(a->max_inline, 256);
	fill(buf, sizeof(buf), 17);
	post_recv1(b, va(r1, 0x2000), r1->mr.lkey, 64);

	n = reserve(a, 4);
	assert_int_equal(dvx_mlx5_wqe_rdma_write_inline(&a->sq.wq, n, DVX_MLX5_OPCODE_RDMA_WRITE,
							SIG, 0,
							&(struct dvx_mlx5_raddr){ va(r1, 0x1000),
										  r1->mr.rkey },
							buf, 200),
			 4);
	n = reserve(a, 1);
	assert_int_equal(dvx_mlx5_wqe_send_inline(&a->sq.wq, n, DVX_MLX5_OPCODE_SEND_IMM, SIG,
						  0xabcd, buf + 7, 40), 1);
	ring(a);
	/* the payload is in the WQE: change the source, the result must not */
	memset(buf, 0, sizeof(buf));
	assert_int_equal(step(), 2);
	expect_req(a, DVX_MLX5_OPCODE_RDMA_WRITE, 0);
	expect_req(a, DVX_MLX5_OPCODE_SEND_IMM, 4);
	fill(buf, sizeof(buf), 17);
	assert_memory_equal(r1->data + 0x1000, buf, 200);
	assert_memory_equal(r1->data + 0x2000, buf + 7, 40);
	assert_int_equal(take_cqe(b->send_cq, &i), 1);
	assert_int_equal(i.opcode, DVX_MLX5_CQE_RESP_SEND_IMM);
	assert_int_equal(i.imm, 0xabcd);
	assert_int_equal(i.byte_cnt, 40);
}

/* multi-WQEBB WQEs wrapping the ring's end, unsignaled WQEs freed by a later CQE */
static void test_wrap_unsignaled(void **state)
{
	struct rk *r0 = &W.r[0], *r1 = &W.r[1];
	struct qpo o = { 8, 120, 0, 0, 0, NULL };
	struct dvx_mlx5_cqe_info i;
	struct dvx_qp *a, *b;
	uint8_t pay[120];
	uint32_t round, n, nop, wrapped_inl = 0, wrapped_cs = 0;

	(void)state;
	a = mk_qp(r0, mk_cq(r0, 64), &o);
	b = mk_qp(r1, mk_cq(r1, 64), &o);
	assert_int_equal(dvx_qp_connect_pair(a, b, NULL), 0);
	wr64(r1->data + 0x800, 0);
	for (round = 0; round < 16; round++) {
		/* 3 + 2 + 1 + 1 WQEBBs: the start moves by 7 of 8 each round, so over 8
		 * rounds every WQE starts at every slot */
		fill(pay, sizeof(pay), (uint8_t)round);
		n = reserve(a, 3);
		wrapped_inl += (n & 7) >= 6;
		assert_int_equal(dvx_mlx5_wqe_rdma_write_inline(&a->sq.wq, n,
								DVX_MLX5_OPCODE_RDMA_WRITE, 0, 0,
								&(struct dvx_mlx5_raddr){
									va(r1,
									   0x1000 + round * 128),
									r1->mr.rkey },
								pay, 120),
				 3);
		n = reserve(a, 2);
		wrapped_cs += (n & 7) == 7;
		assert_int_equal(dvx_mlx5_wqe_masked_cs64(&a->sq.wq, n, 0,
							  &(struct dvx_mlx5_raddr){ va(r1, 0x800),
										    r1->mr.rkey },
							  &(struct dvx_mlx5_masked_cs){
								  0, 0, round + 1, ~0ull },
							  va(r0, 0x800 + round * 8), r0->mr.lkey),
				 2);
		wr64(r0->data + 0x100, round * 3);
		post_write(a, 0, va(r1, 0x900 + round * 8), r1->mr.rkey, va(r0, 0x100),
			   r0->mr.lkey, 8);
		nop = post_nop(a, SIG);
		assert_int_equal(dvx_mlx5_sq_room(&a->sq, &a->sqc), 1);
		ring(a);
		assert_int_equal(step(), 4);
		/* one CQE, for the NOP; it frees the unsignaled WQEs before it too */
		assert_int_equal(take_cqe(a->send_cq, &i), 1);
		assert_int_equal(i.wqe_opcode, DVX_MLX5_OPCODE_NOP);
		assert_int_equal(i.wqe_counter, (uint16_t)nop);
		assert_int_equal(dvx_mlx5_sq_completed(&a->sq, &a->sqc, i.wqe_counter), 7);
		assert_int_equal(take_cqe(a->send_cq, &i), 0);
		assert_memory_equal(r1->data + 0x1000 + round * 128, pay, 120);
		assert_int_equal(rd64(r0->data + 0x800 + round * 8), round);
		assert_int_equal(rd64(r1->data + 0x900 + round * 8), round * 3);
	}
	assert_int_equal(rd64(r1->data + 0x800), 16);
	assert_true(wrapped_inl >= 2);
	assert_true(wrapped_cs >= 2);
	assert_int_equal(a->sqc.resv, 16 * 7);
}

/* the core-direct companion: WAIT on the main QP's CQ index, then a loopback FA into a
 * counter with its result into the iova-0 sink; the companion shares the main QP's UAR */
static void test_companion_wait(void **state)
{
	struct rk *r0 = &W.r[0], *r1 = &W.r[1];
	struct dvx_qp *a, *b, *c;
	uint32_t k, n;

	(void)state;
	mk_pair(&a, &b, 7);
	c = mk_loop(r0, DVX_QP_F_CD_MASTER, a->uar);
	assert_ptr_equal(c->uar, a->uar);
	assert_ptr_equal(c->uar_reg, a->uar_reg);
	wr64(r0->data + 0x200, 0);
	for (k = 0; k < 5; k++) {
		n = reserve(c, 2);
		assert_int_equal(dvx_mlx5_wqe_wait_cq(&c->sq.wq, n, 0, a->send_cq->cqn,
						      a->send_cq->index_base + k), 1);
		assert_int_equal(dvx_mlx5_wqe_atomic_fa(&c->sq.wq, n + 1, k == 4 ? SIG : 0,
							va(r0, 0x200), r0->mr.rkey, 1, 0,
							r0->sink.lkey), 1);
		ring(c);
		assert_int_equal(step(), 0);	/* blocked on the WAIT */
		assert_int_equal(rd64(r0->data + 0x200), k);
		post_write(a, SIG, va(r1, 64 * k), r1->mr.rkey, va(r0, 0), r0->mr.lkey, 64);
		ring(a);
		assert_int_equal(step(), 3);
		expect_req(a, DVX_MLX5_OPCODE_RDMA_WRITE, k);
		assert_int_equal(rd64(r0->data + 0x200), k + 1);
		assert_int_equal(r0->sinkbuf, k);
	}
	expect_req(c, DVX_MLX5_OPCODE_ATOMIC_FA, 9);
}

/* SEND_EN / RECV_EN: a cd_slave_send SQ and a cd_slave_recv RQ run only as far as the
 * masters enabled them */
static void test_send_en_recv_en(void **state)
{
	struct rk *r0 = &W.r[0], *r1 = &W.r[1];
	struct qpo os = { 0, 0, 0, 0, DVX_QP_F_CD_SLAVE_SEND, NULL };
	struct qpo ot = { 0, 0, 4, 1, DVX_QP_F_CD_SLAVE_RECV, NULL };
	struct dvx_mlx5_cqe_info i;
	struct dvx_qp *s, *t, *m0, *m1;
	struct dvx_mlx5_qp_query q;
	uint32_t n;
	int k;

	(void)state;
	s = mk_qp(r0, mk_cq(r0, 64), &os);
	t = mk_qp(r1, mk_cq(r1, 64), &ot);
	assert_int_equal(dvx_qp_connect_pair(s, t, NULL), 0);
	m0 = mk_loop(r0, DVX_QP_F_CD_MASTER, NULL);
	m1 = mk_loop(r1, DVX_QP_F_CD_MASTER, NULL);
	fill(r0->data, 64, 3);
	post_recv1(t, va(r1, 0x400), r1->mr.lkey, 64);

	n = reserve(s, 1);
	assert_int_equal(dvx_mlx5_wqe_send(&s->sq.wq, n, SIG, va(r0, 0), r0->mr.lkey, 64), 1);
	ring(s);
	assert_int_equal(step(), 0);		/* not enabled */
	assert_int_equal(take_cqe(s->send_cq, &i), 0);

	n = reserve(m0, 1);
	assert_int_equal(dvx_mlx5_wqe_send_en(&m0->sq.wq, n, SIG, s->qpn, 1), 1);
	ring(m0);
	step();
	expect_req(m0, DVX_MLX5_OPCODE_SEND_EN, 0);
	/* the SEND runs now, but the receive is not enabled: RNR back-off (retry 7) */
	for (k = 0; k < 1000; k++)
		step();
	assert_int_equal(take_cqe(s->send_cq, &i), 0);
	assert_int_equal(take_cqe(t->send_cq, &i), 0);
	assert_int_equal(qstate(s, &q), DVX_MLX5_QP_STATE_RTS);
	assert_int_equal(q.sw_sq_wqebb_counter, 1);
	assert_int_equal(q.hw_sq_wqebb_counter, 0);	/* posted, enabled, not done */

	n = reserve(m1, 1);
	assert_int_equal(dvx_mlx5_wqe_recv_en(&m1->sq.wq, n, SIG, t->qpn, 1), 1);
	ring(m1);
	expect_req(m1, DVX_MLX5_OPCODE_RECV_EN, 0);
	expect_req(s, DVX_MLX5_OPCODE_SEND, 0);
	assert_int_equal(take_cqe(t->send_cq, &i), 1);
	assert_int_equal(i.opcode, DVX_MLX5_CQE_RESP_SEND);
	assert_int_equal(i.byte_cnt, 64);
	assert_memory_equal(r1->data + 0x400, r0->data, 64);
}

/* ---- refusals ------------------------------------------------------------------------ */

enum bad {
	BAD_RKEY,
	BAD_RBOUNDS,
	BAD_LBOUNDS,
	BAD_RO_WRITE,
	BAD_RO_ATOMIC,
	BAD_RO_LOCAL,
	BAD_ALIGN_FA,
	BAD_ALIGN_MFA32,
	BAD_PD_REMOTE,
	BAD_PD_LOCAL,
	BAD_WAIT_NOT_MASTER,
};

/*
 * A good WRITE (index 0), then the refused WQE (index 1, unsignaled: errors complete
 * anyway), a signaled NOP and an unsignaled WRITE behind it; then the refusal's CQE,
 * the two flushes, A in ERR (QUERY_QP, adopted by dvx_qp_query), B in ERR for the
 * responder's (class C) errors with its posted receives flushed, else still RTS; a WQE
 * posted after the error is flushed too.
 */
static void refusal(enum bad what, int err, uint8_t synd, uint8_t vendor, uint8_t op,
		    int peer_err)
{
	struct rk *r0 = &W.r[0], *r1 = &W.r[1];
	struct dvx_mlx5_cqe_info i;
	struct dvx_qp *a, *b;
	uint32_t n;

	mk_pair(&a, &b, 7);
	if (what == BAD_PD_REMOTE)
		rank_open_pd2(1);
	if (what == BAD_PD_LOCAL)
		rank_open_pd2(0);
	post_recv1(b, va(r1, 0x6000), r1->mr.lkey, 64);
	post_recv1(b, va(r1, 0x6100), r1->mr.lkey, 64);
	post_write(a, SIG, va(r1, 0), r1->mr.rkey, va(r0, 0), r0->mr.lkey, 8);
	ring(a);
	step();
	expect_req(a, DVX_MLX5_OPCODE_RDMA_WRITE, 0);

	n = reserve(a, 1);
	switch (what) {
	case BAD_RKEY:		/* the key byte differs: no such MR */
		dvx_mlx5_wqe_rdma_write(&a->sq.wq, n, 0, va(r1, 0), r1->mr.rkey ^ 0x5a, va(r0, 0),
					r0->mr.lkey, 8);
		break;
	case BAD_RBOUNDS:	/* runs 32 bytes past the MR's end */
		dvx_mlx5_wqe_rdma_write(&a->sq.wq, n, 0, va(r1, D_MR - 32), r1->mr.rkey,
					va(r0, 0), r0->mr.lkey, 64);
		break;
	case BAD_LBOUNDS:
		dvx_mlx5_wqe_rdma_write(&a->sq.wq, n, 0, va(r1, 0), r1->mr.rkey,
					va(r0, D_MR - 8), r0->mr.lkey, 64);
		break;
	case BAD_RO_WRITE:	/* the MR allows REMOTE_READ only */
		dvx_mlx5_wqe_rdma_write(&a->sq.wq, n, 0, 0, r1->ro.rkey, va(r0, 0), r0->mr.lkey,
					8);
		break;
	case BAD_RO_ATOMIC:
		dvx_mlx5_wqe_atomic_fa(&a->sq.wq, n, 0, 8, r1->ro.rkey, 1, va(r0, 0x40),
				       r0->mr.lkey);
		break;
	case BAD_RO_LOCAL:	/* a READ lands in a local MR without LOCAL_WRITE */
		dvx_mlx5_wqe_rdma_read(&a->sq.wq, n, 0, va(r1, 0), r1->mr.rkey, 0, r0->ro.lkey, 8);
		break;
	case BAD_ALIGN_FA:
		dvx_mlx5_wqe_atomic_fa(&a->sq.wq, n, 0, va(r1, 0x104), r1->mr.rkey, 1,
				       va(r0, 0x40), r0->mr.lkey);
		break;
	case BAD_ALIGN_MFA32:
		dvx_mlx5_wqe_masked_fa32(&a->sq.wq, n, 0,
					 &(struct dvx_mlx5_raddr){ va(r1, 0x102), r1->mr.rkey }, 1,
					 0, va(r0, 0x40), r0->mr.lkey);
		break;
	case BAD_PD_REMOTE:	/* an MR of sim_1 registered under another PD */
		dvx_mlx5_wqe_rdma_write(&a->sq.wq, n, 0, va(r1, D_PD2), r1->pd2.rkey, va(r0, 0),
					r0->mr.lkey, 8);
		break;
	case BAD_PD_LOCAL:
		dvx_mlx5_wqe_rdma_write(&a->sq.wq, n, 0, va(r1, 0), r1->mr.rkey, va(r0, D_PD2),
					r0->pd2.lkey, 8);
		break;
	case BAD_WAIT_NOT_MASTER:	/* a cd NIC, but the QP is no cd_master */
		dvx_mlx5_wqe_wait_cq(&a->sq.wq, n, 0, a->send_cq->cqn, 0);
		break;
	}
	assert_int_equal(n, 1);
	post_nop(a, SIG);
	post_write(a, 0, va(r1, 0), r1->mr.rkey, va(r0, 0), r0->mr.lkey, 8);
	ring(a);
	step();
	expect_err(a->send_cq, a->qpn, err, synd, vendor, op, 1);
	expect_flush(a->send_cq, a->qpn, DVX_MLX5_OPCODE_NOP, 2);
	expect_flush(a->send_cq, a->qpn, DVX_MLX5_OPCODE_RDMA_WRITE, 3);
	expect_empty(a->send_cq);

	assert_int_equal(a->state, DVX_MLX5_QP_STATE_RTS);	/* dvx has not looked yet */
	assert_int_equal(qstate(a, NULL), DVX_MLX5_QP_STATE_ERR);
	assert_int_equal(a->state, DVX_MLX5_QP_STATE_ERR);
	if (peer_err) {
		assert_int_equal(qstate(b, NULL), DVX_MLX5_QP_STATE_ERR);
		for (n = 0; n < 2; n++) {
			assert_int_equal(take_cqe(b->send_cq, &i), -ECANCELED);
			assert_int_equal(i.opcode, DVX_MLX5_CQE_RESP_ERR);
			assert_int_equal(i.syndrome, DVX_MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
			assert_int_equal(i.wqe_counter, n);
		}
	} else {
		assert_int_equal(qstate(b, NULL), DVX_MLX5_QP_STATE_RTS);
	}
	assert_int_equal(take_cqe(b->send_cq, &i), 0);

	/* posted after the error: flushed as well */
	n = post_nop(a, 0);
	ring(a);
	step();
	expect_flush(a->send_cq, a->qpn, DVX_MLX5_OPCODE_NOP, n);
	expect_empty(a->send_cq);
}

static void test_bad_rkey(void **state)
{
	(void)state;
	refusal(BAD_RKEY, -EPERM, DVX_MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR, SIM_VS_RKEY,
		DVX_MLX5_OPCODE_RDMA_WRITE, 1);
}

static void test_out_of_bounds_remote(void **state)
{
	(void)state;
	refusal(BAD_RBOUNDS, -EPERM, DVX_MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR, SIM_VS_RKEY_BOUNDS,
		DVX_MLX5_OPCODE_RDMA_WRITE, 1);
}

static void test_out_of_bounds_local(void **state)
{
	(void)state;
	refusal(BAD_LBOUNDS, -EACCES, DVX_MLX5_CQE_SYNDROME_LOCAL_PROT_ERR, SIM_VS_LKEY_BOUNDS,
		DVX_MLX5_OPCODE_RDMA_WRITE, 0);
}

static void test_write_read_only_mr(void **state)
{
	(void)state;
	refusal(BAD_RO_WRITE, -EPERM, DVX_MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR, SIM_VS_RKEY_ACCESS,
		DVX_MLX5_OPCODE_RDMA_WRITE, 1);
}

static void test_atomic_read_only_mr(void **state)
{
	(void)state;
	refusal(BAD_RO_ATOMIC, -EPERM, DVX_MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR,
		SIM_VS_RKEY_ACCESS, DVX_MLX5_OPCODE_ATOMIC_FA, 1);
}

static void test_read_into_read_only_mr(void **state)
{
	(void)state;
	refusal(BAD_RO_LOCAL, -EACCES, DVX_MLX5_CQE_SYNDROME_LOCAL_PROT_ERR, SIM_VS_LKEY_ACCESS,
		DVX_MLX5_OPCODE_RDMA_READ, 0);
}

static void test_misaligned_atomic(void **state)
{
	(void)state;
	refusal(BAD_ALIGN_FA, -EREMOTEIO, DVX_MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR,
		SIM_VS_ALIGN, DVX_MLX5_OPCODE_ATOMIC_FA, 1);
}

static void test_misaligned_masked_atomic(void **state)
{
	(void)state;
	refusal(BAD_ALIGN_MFA32, -EREMOTEIO, DVX_MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR,
		SIM_VS_ALIGN, DVX_MLX5_OPCODE_ATOMIC_MASKED_FA, 1);
}

static void test_wrong_pd_remote(void **state)
{
	(void)state;
	refusal(BAD_PD_REMOTE, -EPERM, DVX_MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR, SIM_VS_RKEY_PD,
		DVX_MLX5_OPCODE_RDMA_WRITE, 1);
}

static void test_wrong_pd_local(void **state)
{
	(void)state;
	refusal(BAD_PD_LOCAL, -EACCES, DVX_MLX5_CQE_SYNDROME_LOCAL_PROT_ERR, SIM_VS_LKEY_PD,
		DVX_MLX5_OPCODE_RDMA_WRITE, 0);
}

static void test_wait_not_master(void **state)
{
	(void)state;
	refusal(BAD_WAIT_NOT_MASTER, -EINVAL, DVX_MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR,
		SIM_VS_NOT_CD, DVX_MLX5_OPCODE_WAIT, 0);
}

/* a NIC without core-direct: the core refuses cd QPs before the device hears of them;
 * told otherwise, the sim refuses CREATE_QP; a WAIT posted anyway fails its WQE */
static void test_no_cd_nic(void **state)
{
	struct rk *r2 = &W.r[2];
	struct dvx_qp_cfg qa;
	struct dvx_mem_req wq, dbr;
	struct dvx_sim_stats s0, s1;
	struct dvx_qp qp;
	struct dvx_cq *cq;
	struct dvx_qp *c;
	uint32_t n, f;

	(void)state;
	rank_open(2);
	assert_false(r2->nic.features & DVX_NIC_FEAT_CD);
	assert_int_equal(dvx_nic_require(&r2->nic, DVX_NIC_FEAT_CD, "test"), -EOPNOTSUPP);
	cq = mk_cq(r2, 64);
	memset(&qa, 0, sizeof(qa));
	qa.sq_depth = 64;
	qa.send_cq = cq;
	qa.flags = DVX_QP_F_CD_MASTER;
	assert_int_equal(dvx_qp_mem_req(&qa, &wq, &dbr), 0);
	qa.wq_umem = &r2->umem;
	qa.wq_offset = take(r2, wq.bytes, wq.align);
	qa.dbr_umem = &r2->umem;
	qa.dbr_offset = take(r2, dbr.bytes, dbr.align);
	assert_int_equal(dvx_sim_get_stats(W.fab, &s0), 0);
	assert_int_equal(dvx_qp_create(&r2->nic, &qa, &qp), -EOPNOTSUPP);
	assert_non_null(strstr(r2->nic.hal.diag.msg, "core-direct"));
	assert_int_equal(dvx_sim_get_stats(W.fab, &s1), 0);
	assert_int_equal(s1.cmds, s0.cmds);	/* nothing reached the device */

	/* the same QP with the core's feature check defeated: the device refuses */
	f = r2->nic.features;
	r2->nic.features |= DVX_NIC_FEAT_CD;
	assert_int_equal(dvx_qp_create(&r2->nic, &qa, &qp), -EINVAL);
	r2->nic.features = f;
	assert_int_equal(r2->nic.hal.diag.status, 0x03);	/* BAD_PARAM */
	assert_int_equal(r2->nic.hal.diag.syndrome, DVX_SIM_SYND_NO_CAP);
	assert_non_null(strstr(r2->nic.hal.diag.msg, "CREATE_QP"));
	assert_int_equal(dvx_sim_get_stats(W.fab, &s1), 0);
	assert_int_equal(s1.cmd_errors, s0.cmd_errors + 1);
	assert_int_equal(s1.live[DVX_SIM_LIVE_QP], s0.live[DVX_SIM_LIVE_QP]);

	/* WAIT and SEND_EN from a plain QP on that NIC: LOCAL_QP_OP_ERR */
	c = mk_loop(r2, 0, NULL);
	n = reserve(c, 1);
	dvx_mlx5_wqe_wait_cq(&c->sq.wq, n, SIG, c->send_cq->cqn, 0);
	n = reserve(c, 1);
	dvx_mlx5_wqe_send_en(&c->sq.wq, n, SIG, c->qpn, 1);
	ring(c);
	step();
	expect_err(c->send_cq, c->qpn, -EINVAL, DVX_MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR,
		   SIM_VS_NOT_CD, DVX_MLX5_OPCODE_WAIT, 0);
	expect_flush(c->send_cq, c->qpn, DVX_MLX5_OPCODE_SEND_EN, 1);
	assert_int_equal(qstate(c, NULL), DVX_MLX5_QP_STATE_ERR);
}

/* modify a QP by hand with the driver's encoders (the core only goes RST -> RTS) */
static void modify(struct dvx_qp *qp, const uint8_t *in)
{
	uint8_t out[DVX_MLX5_MODIFY_QP_OUT_BYTES];

	assert_int_equal(dvx_hal_obj_modify(&qp->nic->hal, &qp->obj, in,
					    DVX_MLX5_MODIFY_QP_IN_BYTES, out, sizeof(out)), 0);
}

/* QP not in RTS: RST ignores doorbells; INIT and RTR keep the WQEs (no CQE, no error)
 * and run them once in RTS (docs/sim.md "Doorbells", sim-datapath.md) */
static void test_not_rts(void **state)
{
	struct rk *r0 = &W.r[0];
	uint8_t in[DVX_MLX5_MODIFY_QP_IN_BYTES];
	struct dvx_mlx5_rst2init_cfg ri;
	struct dvx_mlx5_rtr2rts_cfg rs;
	struct dvx_mlx5_cqe_info i;
	struct dvx_mlx5_qp_query q;
	struct dvx_qp *rst, *qp;

	(void)state;
	/* RST: never connected */
	rst = mk_qp(r0, mk_cq(r0, 64), NULL);
	post_nop(rst, SIG);
	ring(rst);
	assert_int_equal(step(), 0);
	assert_int_equal(take_cqe(rst->send_cq, &i), 0);
	assert_int_equal(qstate(rst, &q), DVX_MLX5_QP_STATE_RST);
	assert_int_equal(q.sw_sq_wqebb_counter, 0);	/* the doorbell was ignored */
	assert_int_equal(q.hw_sq_wqebb_counter, 0);

	qp = mk_qp(r0, mk_cq(r0, 64), NULL);
	memset(&ri, 0, sizeof(ri));
	ri.rwe = ri.rre = 1;
	ri.vhca_port_num = 1;
	assert_int_equal(dvx_mlx5_rst2init_qp_in(in, qp->qpn, &ri), 0);
	modify(qp, in);
	post_nop(qp, SIG);
	ring(qp);
	assert_int_equal(step(), 0);
	assert_int_equal(take_cqe(qp->send_cq, &i), 0);
	assert_int_equal(qstate(qp, &q), DVX_MLX5_QP_STATE_INIT);
	assert_int_equal(q.sw_sq_wqebb_counter, 1);	/* seen, not executed */
	assert_int_equal(q.hw_sq_wqebb_counter, 0);

	assert_int_equal(dvx_mlx5_init2rtr_loopback_qp_in(in, qp->qpn, 1, 5), 0);
	modify(qp, in);
	post_write(qp, SIG, va(r0, 0x100), r0->mr.rkey, va(r0, 0), r0->mr.lkey, 8);
	ring(qp);
	assert_int_equal(step(), 0);
	assert_int_equal(take_cqe(qp->send_cq, &i), 0);
	assert_int_equal(qstate(qp, &q), DVX_MLX5_QP_STATE_RTR);
	assert_int_equal(q.sw_sq_wqebb_counter, 2);
	assert_int_equal(q.hw_sq_wqebb_counter, 0);

	memset(&rs, 0, sizeof(rs));
	rs.retry_count = 7;
	rs.rnr_retry = 7;
	rs.ack_timeout = 14;
	assert_int_equal(dvx_mlx5_rtr2rts_qp_in(in, qp->qpn, &rs), 0);
	modify(qp, in);
	fill(r0->data, 8, 5);
	assert_int_equal(step(), 2);		/* no new doorbell needed */
	expect_req(qp, DVX_MLX5_OPCODE_NOP, 0);
	expect_req(qp, DVX_MLX5_OPCODE_RDMA_WRITE, 1);
	assert_memory_equal(r0->data + 0x100, r0->data, 8);
	assert_int_equal(qstate(qp, &q), DVX_MLX5_QP_STATE_RTS);
	assert_int_equal(q.hw_sq_wqebb_counter, 2);

	/* dvx still thinks RST (the QP was moved behind its back): its RST2INIT is
	 * refused by the device with BAD_QP_STATE; the failed first transition leaves
	 * dvx's state at RST, so no 2RST follows and the device's QP stays in RTS */
	assert_int_equal(qp->state, DVX_MLX5_QP_STATE_RST);
	assert_int_equal(dvx_qp_connect_loopback(qp, NULL), -EINVAL);
	assert_int_equal(qp->nic->hal.diag.status, 0x10);
	assert_int_equal(qp->nic->hal.diag.syndrome, DVX_SIM_SYND_QP_STATE);
	assert_int_equal(qp->state, DVX_MLX5_QP_STATE_RST);
	assert_int_equal(qstate(qp, NULL), DVX_MLX5_QP_STATE_RTS);
}

/* RNR: SEND with no receive posted; rnr_retry 0 fails at once, 7 waits for a receive */
static void test_rnr(void **state)
{
	struct rk *r0 = &W.r[0], *r1 = &W.r[1];
	struct dvx_mlx5_cqe_info i;
	struct dvx_qp *a, *b, *c, *d;
	uint32_t n;
	int k;

	(void)state;
	mk_pair(&a, &b, 0);
	n = reserve(a, 1);
	dvx_mlx5_wqe_send(&a->sq.wq, n, SIG, va(r0, 0), r0->mr.lkey, 16);
	post_nop(a, SIG);
	ring(a);
	expect_err(a->send_cq, a->qpn, -ENOBUFS, DVX_MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR,
		   SIM_VS_RNR, DVX_MLX5_OPCODE_SEND, 0);
	expect_flush(a->send_cq, a->qpn, DVX_MLX5_OPCODE_NOP, 1);
	assert_int_equal(qstate(a, NULL), DVX_MLX5_QP_STATE_ERR);
	assert_int_equal(qstate(b, NULL), DVX_MLX5_QP_STATE_RTS);	/* not the responder's fault */

	/* WRITE_IMM needs a receive too */
	mk_pair(&c, &d, 7);
	fill(r0->data, 16, 9);
	n = reserve(c, 1);
	dvx_mlx5_wqe_rdma_write_imm(&c->sq.wq, n, SIG, 42,
				    &(struct dvx_mlx5_raddr){ va(r1, 0x700), r1->mr.rkey },
				    &(struct dvx_mlx5_sge){ va(r0, 0), 16, r0->mr.lkey });
	ring(c);
	for (k = 0; k < 1000; k++)
		step();
	assert_int_equal(take_cqe(c->send_cq, &i), 0);
	assert_int_equal(rd64(r1->data + 0x700), 0);	/* nothing lands before the receive */
	post_recv(d, NULL, 0);
	expect_req(c, DVX_MLX5_OPCODE_RDMA_WRITE_IMM, 0);
	assert_memory_equal(r1->data + 0x700, r0->data, 16);
	assert_int_equal(take_cqe(d->send_cq, &i), 1);
	assert_int_equal(i.opcode, DVX_MLX5_CQE_RESP_WR_IMM);
	assert_int_equal(i.imm, 42);
}

/* retries exhausted (port down, then drop faults), dvx_qp_recover(), index_base */
static void test_retry_recover(void **state)
{
	struct rk *r0 = &W.r[0], *r1 = &W.r[1];
	struct dvx_sim_faults f;
	struct dvx_qp *a, *b, *c;
	uint32_t n;

	(void)state;
	mk_pair(&a, &b, 7);
	c = mk_loop(r0, DVX_QP_F_CD_MASTER, a->uar);
	wr64(r0->data + 0x200, 0);
	post_write(a, SIG, va(r1, 0), r1->mr.rkey, va(r0, 0), r0->mr.lkey, 8);
	ring(a);
	expect_req(a, DVX_MLX5_OPCODE_RDMA_WRITE, 0);

	/* port down at the responder: 1 + retry_count (7) tries, then the error */
	assert_int_equal(dvx_sim_set_port(W.fab, 1, 1, 0), 0);
	post_write(a, SIG, va(r1, 0), r1->mr.rkey, va(r0, 0), r0->mr.lkey, 8);
	post_nop(a, 0);
	ring(a);
	expect_err(a->send_cq, a->qpn, -EHOSTUNREACH,
		   DVX_MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR, SIM_VS_RETRY,
		   DVX_MLX5_OPCODE_RDMA_WRITE, 1);
	expect_flush(a->send_cq, a->qpn, DVX_MLX5_OPCODE_NOP, 2);
	assert_int_equal(qstate(a, NULL), DVX_MLX5_QP_STATE_ERR);
	assert_int_equal(qstate(b, NULL), DVX_MLX5_QP_STATE_RTS);
	assert_int_equal(dvx_sim_set_port(W.fab, 1, 1, 1), 0);

	/* recover both sides; A's CQ (its alone) skips the 3 CQEs it produced */
	assert_int_equal(a->send_cq->index_base, 0);
	assert_int_equal(dvx_qp_recover(a), 0);
	assert_int_equal(dvx_qp_recover(b), 0);
	assert_int_equal(a->state, DVX_MLX5_QP_STATE_RTS);
	assert_int_equal(a->recoveries, 1);
	assert_int_equal(a->sqc.resv, 0);
	assert_int_equal(a->send_cq->index_base, 3);
	assert_int_equal(a->send_cq->mcq.ci, 3);
	assert_int_equal(b->send_cq->index_base, 0);
	assert_int_equal(qstate(a, NULL), DVX_MLX5_QP_STATE_RTS);

	/* WAIT on "the new WQE 0" = CQ index index_base + 0 */
	n = reserve(c, 2);
	dvx_mlx5_wqe_wait_cq(&c->sq.wq, n, 0, a->send_cq->cqn, a->send_cq->index_base + 0);
	dvx_mlx5_wqe_atomic_fa(&c->sq.wq, n + 1, SIG, va(r0, 0x200), r0->mr.rkey, 1, 0,
			       r0->sink.lkey);
	ring(c);
	assert_int_equal(step(), 0);
	fill(r0->data, 8, 0x40);
	post_write(a, SIG, va(r1, 8), r1->mr.rkey, va(r0, 0), r0->mr.lkey, 8);
	ring(a);
	expect_req(a, DVX_MLX5_OPCODE_RDMA_WRITE, 0);
	expect_req(c, DVX_MLX5_OPCODE_ATOMIC_FA, 1);
	assert_int_equal(rd64(r0->data + 0x200), 1);
	assert_memory_equal(r1->data + 8, r0->data, 8);

	/* drops: 7 lost requests are retried away, 8 exhaust retry_count 7 */
	memset(&f, 0, sizeof(f));
	f.drop_count = 7;
	dvx_sim_set_faults(W.fab, &f);
	post_write(a, SIG, va(r1, 16), r1->mr.rkey, va(r0, 0), r0->mr.lkey, 8);
	ring(a);
	expect_req(a, DVX_MLX5_OPCODE_RDMA_WRITE, 1);
	f.drop_count = 8;
	dvx_sim_set_faults(W.fab, &f);
	post_write(a, SIG, va(r1, 24), r1->mr.rkey, va(r0, 0), r0->mr.lkey, 8);
	ring(a);
	expect_err(a->send_cq, a->qpn, -EHOSTUNREACH,
		   DVX_MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR, SIM_VS_RETRY,
		   DVX_MLX5_OPCODE_RDMA_WRITE, 2);
	dvx_sim_set_faults(W.fab, NULL);
	assert_int_equal(qstate(a, NULL), DVX_MLX5_QP_STATE_ERR);
	assert_int_equal(dvx_qp_recover(a), 0);
	assert_int_equal(dvx_qp_recover(b), 0);
	assert_int_equal(a->recoveries, 2);
	assert_int_equal(a->send_cq->index_base, 3 + 3);
	post_write(a, SIG, va(r1, 32), r1->mr.rkey, va(r0, 0), r0->mr.lkey, 8);
	ring(a);
	expect_req(a, DVX_MLX5_OPCODE_RDMA_WRITE, 0);
	assert_memory_equal(r1->data + 32, r0->data, 8);
}

/* ---- ranks as threads ---------------------------------------------------------------- */

#define T_MSGS 200
#define T_SLOTS 8
#define T_MSG 64

#define T_BARRIERS 3

#define T_CHECK(r, cond)                                                                \
	do {                                                                            \
		if (!(cond)) {                                                          \
			__atomic_store_n(&W.fail_line[r], __LINE__, __ATOMIC_RELEASE);  \
			goto out;                                                       \
		}                                                                       \
	} while (0)

static void t_barrier(int *passed)
{
	pthread_barrier_wait(&W.bar);
	(*passed)++;
}

static void t_progress(struct rk *r)
{
	if (!W.progress_thread)
		dvx_hal_nic_progress(&r->nic.hal);
}

/*
 * Each rank: its NIC (opened by the fixture), a CQ and a QP created on its own thread,
 * connection info and buffer keys exchanged through memory and a barrier, then
 * T_MSGS WRITE_IMMs to the peer while receiving the peer's: message k lands in slot
 * k % T_SLOTS of the peer's data; the receiver checks it and reposts the receive, so
 * with T_SLOTS receives a slot is never overwritten before it was read.
 */
/* rank_thread()'s phase queues: a CQ and a QP in the rank's umem, T_SLOTS receives
 * posted, the QP exported (0, or -1 with the failed line recorded) */
static int rt_queues(int me, struct rk *r)
{
	struct dvx_cq *cq = &r->cq[0];
	struct dvx_qp *qp = &r->qp[0];
	struct qpo o = { 64, 0, T_SLOTS, 1, 0, NULL };
	struct dvx_cq_cfg ca;
	struct dvx_qp_cfg qa;
	struct dvx_mem_req wq, dbr;
	uint32_t k;

	memset(&ca, 0, sizeof(ca));
	ca.depth = 64;
	ca.ring_umem = &r->umem;
	ca.ring_offset = 0;
	ca.dbr_umem = &r->umem;
	ca.dbr_offset = 64 * 64;
	T_CHECK(me, dvx_cq_create(&r->nic, &ca, cq) == 0);
	r->ncq = 1;
	memset(&qa, 0, sizeof(qa));
	qa.sq_depth = o.sq_depth;
	qa.rq_depth = o.rq_depth;
	qa.rq_max_sge = o.rq_sge;
	qa.send_cq = cq;
	T_CHECK(me, dvx_qp_mem_req(&qa, &wq, &dbr) == 0);
	qa.wq_umem = &r->umem;
	qa.wq_offset = 8192;
	qa.dbr_umem = &r->umem;
	qa.dbr_offset = 64 * 64 + 8;
	T_CHECK(me, wq.bytes <= Q_MEM - 8192);
	T_CHECK(me, dvx_qp_create(&r->nic, &qa, qp) == 0);
	r->nqp = 1;
	for (k = 0; k < T_SLOTS; k++)
		T_CHECK(me, dvx_mlx5_rq_post(&qp->rq, NULL, 0) >= 0);
	dvx_mlx5_rq_ring(&qp->rq);
	T_CHECK(me, dvx_qp_export(qp, &W.conn[me]) == 0);
	return 0;
out:
	return -1;
}

/* rank_thread()'s traffic, one completion: a requester CQE in order, or the peer's
 * message k checked and its receive posted again (0, or -1 with the line recorded) */
static int rt_completion(int me, struct rk *r, const struct dvx_mlx5_cqe_info *i,
			 uint32_t *done, uint32_t *got)
{
	struct dvx_qp *qp = &r->qp[0];
	int peer = 1 - me;
	uint8_t want[T_MSG];

	if (i->opcode == DVX_MLX5_CQE_REQ) {
		T_CHECK(me, i->wqe_counter == (uint16_t)*done);
		T_CHECK(me, dvx_mlx5_sq_completed(&qp->sq, &qp->sqc, i->wqe_counter) == 1);
		(*done)++;
		return 0;
	}
	T_CHECK(me, i->opcode == DVX_MLX5_CQE_RESP_WR_IMM);
	T_CHECK(me, i->imm == ((uint32_t)(peer << 16) | *got));
	T_CHECK(me, i->byte_cnt == T_MSG);
	memset(want, (int)(peer * 128 + *got % 128), T_MSG);
	T_CHECK(me, !memcmp(r->data + (*got % T_SLOTS) * T_MSG, want, T_MSG));
	T_CHECK(me, dvx_mlx5_rq_completed(&qp->rq) == *got);
	T_CHECK(me, dvx_mlx5_rq_post(&qp->rq, NULL, 0) >= 0);
	dvx_mlx5_rq_ring(&qp->rq);
	(*got)++;
	return 0;
out:
	return -1;
}

/* rank_thread()'s phase traffic: T_MSGS WRITE_IMMs out (at most T_SLOTS unanswered) and
 * the peer's T_MSGS in, until both are done, the peer failed, or the spins run out */
static int rt_traffic(int me, struct rk *r)
{
	struct dvx_cq *cq = &r->cq[0];
	struct dvx_qp *qp = &r->qp[0];
	struct dvx_mlx5_cqe_info i;
	uint32_t sent = 0, done = 0, got = 0;
	uint64_t n = 0;
	long spins = 0;
	int peer = 1 - me, rc;

	while ((done < T_MSGS || got < T_MSGS) && spins < 50L * SPINS &&
	       !__atomic_load_n(&W.fail_line[peer], __ATOMIC_ACQUIRE)) {
		uint8_t *src = r->data + 0x4000 + (sent % T_SLOTS) * T_MSG;

		if (sent < T_MSGS && dvx_mlx5_sq_room(&qp->sq, &qp->sqc) >= 1 && sent - done < T_SLOTS) {
			memset(src, (int)(me * 128 + sent % 128), T_MSG);
			T_CHECK(me, dvx_mlx5_sq_reserve(&qp->sq, &qp->sqc, 1, DVX_MLX5_SQ_SINGLE, &n) == 0);
			dvx_mlx5_wqe_rdma_write_imm(&qp->sq.wq, n, SIG, (uint32_t)(me << 16) | sent,
						    &(struct dvx_mlx5_raddr){
							    W.raddr[peer] +
								    (sent % T_SLOTS) * T_MSG,
							    W.rkey[peer] },
						    &(struct dvx_mlx5_sge){
							    va(r,
							       0x4000 + (sent % T_SLOTS) * T_MSG),
							    T_MSG, r->mr.lkey });
			ring(qp);
			sent++;
		}
		rc = take_cqe(cq, &i);
		if (!rc) {
			t_progress(r);
			spins++;
			continue;
		}
		T_CHECK(me, rc == 1);
		if (rt_completion(me, r, &i, &done, &got))
			return -1;
	}
	T_CHECK(me, done == T_MSGS && got == T_MSGS);
	return 0;
out:
	return -1;
}

/* one rank as a thread, in its phases: queues, connect (through memory and barriers),
 * traffic, and the barriers not met yet (cmocka's asserts are not for threads: failures
 * are recorded, T_CHECK, and reported by the main thread) */
static void *rank_thread(void *arg)
{
	int me = (int)(intptr_t)arg, peer = 1 - me;
	struct rk *r = &W.r[me];
	int bars = 0;

	if (rt_queues(me, r))
		goto out;
	W.raddr[me] = va(r, 0);
	W.rkey[me] = r->mr.rkey;
	t_barrier(&bars);
	T_CHECK(me, dvx_qp_connect(&r->qp[0], &W.conn[peer], NULL) == 0);
	t_barrier(&bars);	/* both in RTS before anything is sent */
	(void)rt_traffic(me, r);
out:
	/* nobody tears down while the peer may still send to it; after a failure the
	 * barriers not passed yet are still met, so the peer never hangs on one */
	while (bars < T_BARRIERS)
		t_barrier(&bars);
	return NULL;
}

static void two_ranks(int progress_thread)
{
	pthread_t t[2];
	int i;

	W.progress_thread = progress_thread;
	assert_int_equal(pthread_barrier_init(&W.bar, NULL, 2), 0);
	if (progress_thread)
		assert_int_equal(dvx_sim_start(W.fab), 0);
	for (i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, rank_thread, (void *)(intptr_t)i), 0);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	if (progress_thread)
		assert_int_equal(dvx_sim_stop(W.fab), 0);
	pthread_barrier_destroy(&W.bar);
	for (i = 0; i < 2; i++) {
		if (W.fail_line[i])
			fail_msg("rank %d failed at line %d", i, W.fail_line[i]);
		assert_int_equal(W.r[i].nqp, 1);
		assert_int_equal(qstate(&W.r[i].qp[0], NULL), DVX_MLX5_QP_STATE_RTS);
	}
}

static void test_two_ranks_stepped(void **state)
{
	(void)state;
	two_ranks(0);
}

static void test_two_ranks_progress_thread(void **state)
{
	(void)state;
	two_ranks(1);
}

/* ---- the reorder mode: each hazard of docs/prm.md 10.2, planted ---------------------- */

#define RO_TRIALS 48u		/* seeds 1..RO_TRIALS (reorder) or trials in order */
#define RO_LEN 4096u

static void ro_mode(unsigned trial, int on)
{
	assert_int_equal(dvx_sim_set_reorder(W.fab, on, 0x5eed0000u + trial), 0);
}

static void ro_fill(uint8_t *p, uint32_t len, unsigned trial)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(1 + (i + trial) % 251);
}

/*
 * Polling a message's last byte instead of its completion: one step after the WRITE was
 * rung, a consumer that sees the last 8 bytes takes the message. In order the whole
 * message is there whenever they are; the reorder mode places the last 8 bytes first
 * and leaves the rest for a later step. Either way the completion implies all of it.
 */
static int plant_last_byte(struct dvx_qp *a, unsigned trial)
{
	struct rk *r0 = &W.r[0], *r1 = &W.r[1];
	uint8_t *src = r0->data, *dst = r1->data + 0x2000;
	uint32_t n;
	int caught;

	ro_fill(src, RO_LEN, trial);
	memset(dst, 0, RO_LEN);
	n = post_write(a, SIG, va(r1, 0x2000), r1->mr.rkey, va(r0, 0), r0->mr.lkey, RO_LEN);
	ring(a);
	step();
	caught = !memcmp(dst + RO_LEN - 8, src + RO_LEN - 8, 8) && memcmp(dst, src, RO_LEN);
	expect_req(a, DVX_MLX5_OPCODE_RDMA_WRITE, n);
	assert_memory_equal(dst, src, RO_LEN);	/* the completion implies the data */
	return caught;
}

static void test_reorder_last_byte(void **state)
{
	struct dvx_sim_stats st;
	struct dvx_qp *a, *b;
	unsigned t, caught = 0;

	(void)state;
	mk_pair(&a, &b, 7);
	for (t = 0; t < RO_TRIALS; t++)
		assert_false(plant_last_byte(a, t));	/* in order: never */
	for (t = 1; t <= RO_TRIALS; t++) {
		ro_mode(t, 1);
		caught += (unsigned)plant_last_byte(a, t);
	}
	ro_mode(0, 0);
	assert_true(caught > 0);
	assert_int_equal(dvx_sim_get_stats(W.fab, &st), 0);
	assert_true(st.ro_splits >= caught && st.ro_tail_first >= caught);
}

/*
 * A put_signal whose signal rides another QP without a WAIT on the data's completion:
 * data on A, then the signal on C (another QP to the same peer). In order both have
 * landed by the time a step returns; in the reorder mode the signal can be there while
 * the data is not. (With a WAIT, the companion pattern, test_companion_wait.)
 */
static int plant_signal_other_qp(struct dvx_qp *a, struct dvx_qp *c, unsigned trial)
{
	struct rk *r0 = &W.r[0], *r1 = &W.r[1];
	uint8_t *src = r0->data, *dst = r1->data + 0x2000, *sig = r1->data + 0x4000;
	uint32_t n, m;
	int caught;

	ro_fill(src, RO_LEN, trial);
	memset(dst, 0, RO_LEN);
	wr64(sig, 0);
	wr64(r0->data + 0x1000, 0x5151000000000000ull + trial + 1);
	n = post_write(a, SIG, va(r1, 0x2000), r1->mr.rkey, va(r0, 0), r0->mr.lkey, RO_LEN);
	ring(a);
	m = post_write(c, SIG, va(r1, 0x4000), r1->mr.rkey, va(r0, 0x1000), r0->mr.lkey, 8);
	ring(c);
	step();
	caught = rd64(sig) == 0x5151000000000000ull + trial + 1 && memcmp(dst, src, RO_LEN);
	expect_req(a, DVX_MLX5_OPCODE_RDMA_WRITE, n);
	expect_req(c, DVX_MLX5_OPCODE_RDMA_WRITE, m);
	assert_memory_equal(dst, src, RO_LEN);
	return caught;
}

static void test_reorder_signal_other_qp(void **state)
{
	struct dvx_qp *a, *b, *c, *d;
	unsigned t, caught = 0;

	(void)state;
	mk_pair(&a, &b, 7);
	mk_pair(&c, &d, 7);
	for (t = 0; t < RO_TRIALS; t++)
		assert_false(plant_signal_other_qp(a, c, t));
	for (t = 1; t <= RO_TRIALS; t++) {
		ro_mode(t, 1);
		caught += (unsigned)plant_signal_other_qp(a, c, t);
	}
	ro_mode(0, 0);
	assert_true(caught > 0);
}

/*
 * A READ into a buffer that the next WQE sends: READ X from the peer into L, then WRITE
 * L to the peer's T. Unfenced (or fence mode 1), the WRITE may gather L before the
 * READ's response landed and send the old bytes; fence modes 2, 3 and 4 make it wait.
 */
static int plant_read_then_write(struct dvx_qp *a, unsigned fm, unsigned trial)
{
	struct rk *r0 = &W.r[0], *r1 = &W.r[1];
	uint8_t *x = r1->data + 0x5000, *l = r0->data + 0x5000, *t = r1->data + 0x6000;
	uint32_t n;

	ro_fill(x, 256, trial);
	memset(l, 0xee, 256);
	memset(t, 0, 256);
	n = reserve(a, 1);
	assert_int_equal(dvx_mlx5_wqe_rdma_read(&a->sq.wq, n, 0, va(r1, 0x5000), r1->mr.rkey,
						va(r0, 0x5000), r0->mr.lkey, 256), 1);
	n = post_write(a, (uint8_t)(SIG | fm << 5), va(r1, 0x6000), r1->mr.rkey, va(r0, 0x5000),
		       r0->mr.lkey, 256);
	ring(a);
	expect_req(a, DVX_MLX5_OPCODE_RDMA_WRITE, n);
	assert_memory_equal(l, x, 256);		/* the READ landed */
	return memcmp(t, x, 256) != 0;		/* what the WRITE sent */
}

static void test_reorder_read_then_write(void **state)
{
	struct dvx_sim_stats st;
	struct dvx_qp *a, *b;
	unsigned t, fm, caught[5] = { 0 };

	(void)state;
	mk_pair(&a, &b, 7);
	for (fm = 0; fm < 5; fm++)
		for (t = 0; t < RO_TRIALS; t++)
			assert_false(plant_read_then_write(a, fm, t));	/* in order: never */
	for (fm = 0; fm < 5; fm++)
		for (t = 1; t <= RO_TRIALS; t++) {
			ro_mode(t, 1);
			caught[fm] += (unsigned)plant_read_then_write(a, fm, t);
		}
	ro_mode(0, 0);
	assert_true(caught[DVX_MLX5_FM_NONE] > 0);
	assert_true(caught[DVX_MLX5_FM_INITIATOR_SMALL] > 0);	/* orders no READ (prm 10.3) */
	assert_int_equal(caught[DVX_MLX5_FM_FENCE], 0);
	assert_int_equal(caught[DVX_MLX5_FM_STRONG_ORDERING], 0);
	assert_int_equal(caught[DVX_MLX5_FM_FENCE_AND_INITIATOR_SMALL], 0);
	assert_int_equal(dvx_sim_get_stats(W.fab, &st), 0);
	assert_true(st.ro_early >= caught[0] + caught[1]);
	assert_true(st.ro_fenced > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_opcodes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_post_helpers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_device_queues, setup, teardown),
		cmocka_unit_test_setup_teardown(test_atomics, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrap_unsignaled, setup, teardown),
		cmocka_unit_test_setup_teardown(test_companion_wait, setup, teardown),
		cmocka_unit_test_setup_teardown(test_send_en_recv_en, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_rkey, setup, teardown),
		cmocka_unit_test_setup_teardown(test_out_of_bounds_remote, setup, teardown),
		cmocka_unit_test_setup_teardown(test_out_of_bounds_local, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_read_only_mr, setup, teardown),
		cmocka_unit_test_setup_teardown(test_atomic_read_only_mr, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_into_read_only_mr, setup, teardown),
		cmocka_unit_test_setup_teardown(test_misaligned_atomic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_misaligned_masked_atomic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_pd_remote, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_pd_local, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wait_not_master, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_cd_nic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_rts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rnr, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retry_recover, setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_ranks_stepped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_ranks_progress_thread, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reorder_last_byte, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reorder_signal_other_qp, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reorder_read_then_write, setup, teardown),
	};

	return cmocka_run_group_tests_name("sim-core", tests, NULL, NULL);
}
