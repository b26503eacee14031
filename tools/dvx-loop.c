// SPDX-License-Identifier: MIT
/*
 * tools/dvx-loop.c - two ranks over the fabric: every data-path operation dvx drives,
 * each checked byte for byte (or value for value) and timed; and measured runs as
 * perftest's (loop-perf.c), in one process or between a client and a server over TCP
 * (loop-net.c).
 *
 *   dvx-loop [--iters N] [--ib] [--trace] [--no-thread] [--timeout-ms MS] [--json]
 *            [--record FILE]
 *   dvx-loop --dev NAME [--dev NAME2] [--iters N] [--timeout-ms MS] [--json] [--record FILE]
 *   dvx-loop --bw|--lat [--op OP] [-s SIZE | -a] [-n N | -D S] [--listen | --connect]
 *
 * Default: the software NIC (hal/sim). A fabric with two simulated NICs lives in this
 * program's memory; rank 0 opens sim_0, rank 1 sim_1, and the fabric's progress thread
 * executes what they post (--no-thread: this thread steps it through dev_progress).
 * With --dev the ranks are two QPs on real mlx5 NICs opened through the linux hal:
 * rank 0 on the first NIC named, rank 1 on the second (or the same one: loopback).
 *
 * Everything is built with dvx's own objects (core nic/umem/mr/cq/qp), WQE builders,
 * SQ/RQ helpers and CQ poller; the library prints nothing, this program formats.
 *
 * Exit status (tools/tool.h): 0 every row passed (rows skipped for a missing device
 * feature included), 1 a row failed (or set-up failed on a device that exists), 2 usage
 * error, 3 no such device.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "loop.h"

#include <dvx/bootstrap/bootstrap.h>

#include <dvx/hal.h>
#ifdef CONFIG_DVX_SIM
#include <dvx/hal/sim.h>
#endif
#include <dvx/mlx5/cqe.h>
#include <dvx/mlx5/decode.h>
#include <dvx/mlx5/rq.h>
#include <dvx/mlx5/sq.h>
#include <dvx/mlx5/wqe.h>
#include <dvx/nic/mr.h>
#include <dvx/nic/qp.h>

#define EXIT_FAIL DVX_EXIT_FAIL
#define EXIT_USAGE DVX_EXIT_USAGE
#define EXIT_NOTFOUND DVX_EXIT_NOTFOUND

#define prog loop_prog

#define BATCH 4u			/* data WQEs per companion counter raise */
#define BATCH_BYTES (4u * KiB)

/* ---- helpers ---- */

static uint64_t *word(struct rank *r, uint32_t off)
{
	return (uint64_t *)(void *)(r->buf + off);
}

/* compare @len bytes; on a difference say where */
static int same(struct row *w, const char *what, const uint8_t *got, const uint8_t *want,
		uint32_t len, uint32_t iter)
{
	uint32_t i;

	if (!memcmp(got, want, len))
		return 1;
	for (i = 0; i < len && got[i] == want[i]; i++)
		;
	loop_rfail(w, "iteration %u: %s differs at byte %u (0x%02x, expected 0x%02x)", iter, what,
		   i, got[i], want[i]);
	return 0;
}

static int guard_ok(struct row *w, const char *what, const uint8_t *p, uint32_t iter)
{
	if (*p == GUARD)
		return 1;
	loop_rfail(w, "iteration %u: %s: byte past the message overwritten (0x%02x)", iter, what,
		   *p);
	return 0;
}

/* the requester CQE of the WQE at @idx on @qp (send CQ @cq); frees its SQ slots */
static int wait_req(struct loop *L, struct rank *r, struct dvx_qp *qp, struct dvx_cq *cq,
		    uint64_t idx, struct row *w, const char *what, uint32_t iter,
		    struct dvx_mlx5_cqe_info *info)
{
	int rc = loop_wait_cqe(L, r, cq, info);

	if (rc) {
		loop_cqe_fail(w, what, iter, rc, info);
		return -1;
	}
	if (info->opcode != DVX_MLX5_CQE_REQ || info->qpn != qp->qpn ||
	    info->wqe_counter != (uint16_t)idx) {
		loop_rfail(w, "iteration %u: %s: CQE %s qpn 0x%x wqe_counter %u, expected REQ qpn "
			   "0x%x wqe_counter %u", iter, what,
			   dvx_mlx5_cqe_opcode_name(info->opcode), info->qpn, info->wqe_counter,
			   qp->qpn, (uint16_t)idx);
		return -1;
	}
	if (dvx_mlx5_sq_completed(&qp->sq, &qp->sqc, info->wqe_counter) < 0) {
		loop_rfail(w, "iteration %u: %s: CQE names no WQE in flight", iter, what);
		return -1;
	}
	return 0;
}

/* reserve one WQEBB of rank @r's data QP */
static int reserve1(struct rank *r, struct row *w, uint64_t *idx)
{
	int rc = dvx_mlx5_sq_reserve(&r->qp.sq, &r->qp.sqc, 1, DVX_MLX5_SQ_SINGLE, idx);

	if (rc)
		loop_rfail(w, "send queue reserve: %s", strerror(-rc));
	return rc;
}

static void ring1(struct rank *r, uint64_t idx)
{
	dvx_mlx5_sq_ring(&r->qp.sq, &r->qp.sqc, idx);
	r->scq_cqes++;
}

/* ---- set-up ---- */

/* the two ranks exchange their connection info and connect their data QPs */
static int connect_ranks(struct loop *L)
{
	struct dvx_qp_conn c0, c1;
	struct dvx_qp_connect_cfg ca;
	int err;

	loop_conn_attr(L->atomics, &ca);
	if ((err = dvx_qp_export(&L->r[0].qp, &c0)) || (err = dvx_qp_export(&L->r[1].qp, &c1)))
		return loop_setup_fail(&L->r[0], "dvx_qp_export", err);
	err = dvx_qp_connect(&L->r[0].qp, &c1, &ca);
	if (err)
		return loop_setup_fail(&L->r[0], "dvx_qp_connect", err);
	err = dvx_qp_connect(&L->r[1].qp, &c0, &ca);
	if (err)
		return loop_setup_fail(&L->r[1], "dvx_qp_connect", err);
	return 0;
}

/*
 * Rank 0's companion: a cd_master QP sharing the data QP's UAR, connected to itself
 * (force-loopback) or, on a device without it, to a local partner QP. Return: 0,
 * -EOPNOTSUPP when the NIC lacks core-direct or atomics, or the error.
 */
static int companion_open(struct loop *L, struct rank *r)
{
	struct dvx_qp_connect_cfg ca;
	int err;

	if ((r->nic.features & (DVX_NIC_FEAT_CD | DVX_NIC_FEAT_ATOMIC)) !=
	    (DVX_NIC_FEAT_CD | DVX_NIC_FEAT_ATOMIC))
		return -EOPNOTSUPP;
	err = loop_make_cq(r, COMP_DEPTH, &r->ccq);
	if (!err)
		err = loop_make_qp(r, COMP_DEPTH, 0, &r->ccq, NULL, r->qp.uar, DVX_QP_F_CD_MASTER,
			      0x3000u, &r->cqp);
	if (err)
		return loop_setup_fail(r, "companion create", err);
	dvx_qp_connect_cfg_init(&ca);
	ca.access = DVX_ACCESS_REMOTE_WRITE | DVX_ACCESS_REMOTE_READ | DVX_ACCESS_REMOTE_ATOMIC;
	err = dvx_qp_connect_loopback(&r->cqp, &ca);
	if (err == -EOPNOTSUPP) {
		r->partner = 1;
		err = loop_make_cq(r, PART_DEPTH, &r->pcq);
		if (!err)
			err = loop_make_qp(r, PART_DEPTH, 0, &r->pcq, NULL, NULL, 0, 0x4000u, &r->pqp);
		if (!err)
			err = dvx_qp_connect_pair(&r->cqp, &r->pqp, &ca);
	}
	if (err)
		return loop_setup_fail(r, r->partner ? "companion pair connect" :
				  "companion loopback connect", err);
	r->comp = 1;
	return 0;
}

/* after a failed row: drop what is left in the CQs and bring every QP back to RTS */
static void recover(struct loop *L)
{
	struct dvx_mlx5_cqe_info i;
	struct dvx_qp *qps[5];
	int n = 0, k, err;

	for (k = 0; k < 2; k++) {
		struct rank *r = &L->r[k];
		struct dvx_cq *cqs[] = { &r->scq, &r->rcq, &r->ccq, &r->pcq };
		size_t c;

		for (c = 0; c < 4; c++)
			if (cqs[c]->live) {
				loop_progress(L, r);
				while (dvx_mlx5_cq_poll_one(&cqs[c]->mcq, &i))
					;
				dvx_mlx5_cq_update_ci(&cqs[c]->mcq);
			}
		qps[n++] = &r->qp;
	}
	if (L->r[0].comp) {
		qps[n++] = &L->r[0].cqp;
		if (L->r[0].partner)
			qps[n++] = &L->r[0].pqp;
	}
	for (k = 0; k < n; k++) {
		err = dvx_qp_recover(qps[k]);
		if (err) {
			L->broken = 1;
			snprintf(L->broken_why, sizeof(L->broken_why),
				 "not run: QP 0x%x could not be recovered: %s", qps[k]->qpn,
				 qps[k]->nic->hal.diag.msg);
			return;
		}
	}
	/* recovery re-based the CQs (cq->index_base): count CQEs from there again */
	L->r[0].scq_cqes = 0;
	L->r[1].scq_cqes = 0;
}

/* ---- the operations ---- */

static struct row *row_new(struct loop *L, const char *op, const char *size)
{
	struct row *w = &L->rows[L->nrows++];

	memset(w, 0, sizeof(*w));
	snprintf(w->op, sizeof(w->op), "%s", op);
	snprintf(w->size, sizeof(w->size), "%s", size);
	w->iters = L->iters;
#ifdef CONFIG_DVX_SIM
	if (L->sim && (uint32_t)L->nrows == L->fault_row)
		dvx_sim_set_port(L->fab, 1, 1, 0);	/* requests to rank 1 get lost */
#endif
	if (L->broken) {
		w->result = RES_FAIL;
		snprintf(w->why, sizeof(w->why), "%s", L->broken_why);
	}
	return w;
}

/* RDMA WRITE of @len bytes from rank 0's SRC to rank 1's DST */
static void op_write(struct loop *L, struct row *w, uint32_t len)
{
	struct rank *a = &L->r[0], *b = &L->r[1];
	struct dvx_mlx5_cqe_info i;
	uint64_t spent = 0, t0;
	uint32_t k;
	uint64_t idx;

	for (k = 0; k < L->iters && w->result != RES_FAIL; k++) {
		loop_fill(a->buf + OFF_SRC, len, 0x100000ull + (uint64_t)len * 7 + k);
		memset(b->buf + OFF_DST, 0, len);
		b->buf[OFF_DST + len] = GUARD;
		t0 = loop_now_ns();
		if (reserve1(a, w, &idx))
			break;
		dvx_mlx5_wqe_rdma_write(&a->qp.sq.wq, idx, DVX_MLX5_WQE_CTRL_CQ_UPDATE,
					loop_va(b->buf + OFF_DST), b->mr.rkey,
					loop_va(a->buf + OFF_SRC), a->mr.lkey, len);
		ring1(a, idx);
		if (wait_req(L, a, &a->qp, &a->scq, idx, w, "WRITE", k, &i))
			break;
		spent += loop_now_ns() - t0;
		if (!same(w, "remote buffer", b->buf + OFF_DST, a->buf + OFF_SRC, len, k) ||
		    !guard_ok(w, "remote buffer", b->buf + OFF_DST + len, k))
			break;
	}
	w->us = k ? (double)spent / 1000.0 / k : 0;
}

/* RDMA READ of @len bytes of rank 1's DST into rank 0's RD */
static void op_read(struct loop *L, struct row *w, uint32_t len)
{
	struct rank *a = &L->r[0], *b = &L->r[1];
	struct dvx_mlx5_cqe_info i;
	uint64_t spent = 0, t0;
	uint32_t k;
	uint64_t idx;

	for (k = 0; k < L->iters && w->result != RES_FAIL; k++) {
		loop_fill(b->buf + OFF_DST, len, 0x200000ull + (uint64_t)len * 5 + k);
		memset(a->buf + OFF_RD, 0, len);
		a->buf[OFF_RD + len] = GUARD;
		t0 = loop_now_ns();
		if (reserve1(a, w, &idx))
			break;
		dvx_mlx5_wqe_rdma_read(&a->qp.sq.wq, idx, DVX_MLX5_WQE_CTRL_CQ_UPDATE,
				       loop_va(b->buf + OFF_DST), b->mr.rkey,
				       loop_va(a->buf + OFF_RD), a->mr.lkey, len);
		ring1(a, idx);
		if (wait_req(L, a, &a->qp, &a->scq, idx, w, "READ", k, &i))
			break;
		spent += loop_now_ns() - t0;
		if (i.byte_cnt != len) {
			loop_rfail(w, "iteration %u: READ CQE byte count %u, expected %u", k,
				   i.byte_cnt, len);
			break;
		}
		if (!same(w, "read-back buffer", a->buf + OFF_RD, b->buf + OFF_DST, len, k) ||
		    !guard_ok(w, "read-back buffer", a->buf + OFF_RD + len, k))
			break;
	}
	w->us = k ? (double)spent / 1000.0 / k : 0;
}

/* the responder CQE of rank 1's receive queue */
static int wait_resp(struct loop *L, struct rank *b, uint8_t opcode, uint32_t imm,
		     uint32_t bytes, uint32_t rqpn, struct row *w, const char *what, uint32_t k)
{
	struct dvx_mlx5_cqe_info i;
	int rc = loop_wait_cqe(L, b, &b->rcq, &i);

	if (rc) {
		loop_cqe_fail(w, what, k, rc, &i);
		return -1;
	}
	if (i.opcode != opcode || i.qpn != b->qp.qpn || i.byte_cnt != bytes ||
	    (opcode != DVX_MLX5_CQE_RESP_SEND && i.imm != imm) ||
	    (L->sim && i.rqpn != rqpn)) {
		loop_rfail(w, "iteration %u: %s: responder CQE %s qpn 0x%x byte_cnt %u imm 0x%x "
			   "rqpn 0x%x; expected %s qpn 0x%x byte_cnt %u imm 0x%x rqpn 0x%x", k,
			   what,
			   dvx_mlx5_cqe_opcode_name(i.opcode), i.qpn, i.byte_cnt, i.imm, i.rqpn,
			   dvx_mlx5_cqe_opcode_name(opcode), b->qp.qpn, bytes, imm, rqpn);
		return -1;
	}
	if (dvx_mlx5_rq_completed(&b->qp.rq) < 0) {
		loop_rfail(w, "iteration %u: %s: responder CQE without a posted receive", k, what);
		return -1;
	}
	return 0;
}

static int post_recv(struct rank *b, const struct dvx_mlx5_sge *sgl, uint32_t n,
		     struct row *w)
{
	int64_t rc = dvx_mlx5_rq_post(&b->qp.rq, sgl, n);

	if (rc < 0) {
		loop_rfail(w, "receive post: %s", strerror((int)-rc));
		return -1;
	}
	dvx_mlx5_rq_ring(&b->qp.rq);
	return 0;
}

/* WRITE with immediate: rank 1 posts a receive (no buffers), the data lands by rkey,
 * rank 1's CQE carries the immediate and the byte count */
static void op_write_imm(struct loop *L, struct row *w, uint32_t len)
{
	struct rank *a = &L->r[0], *b = &L->r[1];
	struct dvx_mlx5_cqe_info i;
	uint64_t spent = 0, t0;
	uint32_t k, imm;
	uint64_t idx;

	for (k = 0; k < L->iters && w->result != RES_FAIL; k++) {
		imm = 0xd1000000u | k;
		loop_fill(a->buf + OFF_SRC, len, 0x300000ull + k);
		memset(b->buf + OFF_DST, 0, len);
		b->buf[OFF_DST + len] = GUARD;
		if (post_recv(b, NULL, 0, w))
			break;
		t0 = loop_now_ns();
		if (reserve1(a, w, &idx))
			break;
		dvx_mlx5_wqe_rdma_write_imm(&a->qp.sq.wq, idx, DVX_MLX5_WQE_CTRL_CQ_UPDATE, imm,
					    &(struct dvx_mlx5_raddr){ loop_va(b->buf + OFF_DST),
								      b->mr.rkey },
					    &(struct dvx_mlx5_sge){ loop_va(a->buf + OFF_SRC), len,
								    a->mr.lkey });
		ring1(a, idx);
		if (wait_req(L, a, &a->qp, &a->scq, idx, w, "WRITE_IMM", k, &i) ||
		    wait_resp(L, b, DVX_MLX5_CQE_RESP_WR_IMM, imm, len, a->qp.qpn, w,
			      "WRITE_IMM receive", k))
			break;
		spent += loop_now_ns() - t0;
		if (!same(w, "remote buffer", b->buf + OFF_DST, a->buf + OFF_SRC, len, k) ||
		    !guard_ok(w, "remote buffer", b->buf + OFF_DST + len, k))
			break;
	}
	w->us = k ? (double)spent / 1000.0 / k : 0;
}

/* SEND of @len bytes into a receive of two buffers: the first @first bytes land in
 * the first, the rest at the start of the second (which is larger than needed) */
static void op_send(struct loop *L, struct row *w, uint32_t len, uint32_t first)
{
	struct rank *a = &L->r[0], *b = &L->r[1];
	struct dvx_mlx5_cqe_info i;
	struct dvx_mlx5_sge sgl[2];
	uint8_t *r0 = b->buf + OFF_RECV, *r1 = b->buf + OFF_RECV + 16u * KiB;
	uint64_t spent = 0, t0;
	uint32_t k, rest = len - first;
	uint64_t idx;

	sgl[0].addr = loop_va(r0);
	sgl[0].length = first;
	sgl[0].lkey = b->mr.lkey;
	sgl[1].addr = loop_va(r1);
	sgl[1].length = rest + 4u * KiB;
	sgl[1].lkey = b->mr.lkey;
	for (k = 0; k < L->iters && w->result != RES_FAIL; k++) {
		loop_fill(a->buf + OFF_SRC, len, 0x400000ull + k);
		memset(r0, 0, first + 64);
		memset(r1, 0, rest + 64);
		r0[first] = GUARD;
		r1[rest] = GUARD;
		if (post_recv(b, sgl, 2, w))
			break;
		t0 = loop_now_ns();
		if (reserve1(a, w, &idx))
			break;
		dvx_mlx5_wqe_send(&a->qp.sq.wq, idx, DVX_MLX5_WQE_CTRL_CQ_UPDATE,
				  loop_va(a->buf + OFF_SRC), a->mr.lkey, len);
		ring1(a, idx);
		if (wait_req(L, a, &a->qp, &a->scq, idx, w, "SEND", k, &i) ||
		    wait_resp(L, b, DVX_MLX5_CQE_RESP_SEND, 0, len, a->qp.qpn, w, "RECV", k))
			break;
		spent += loop_now_ns() - t0;
		if (!same(w, "receive buffer 1", r0, a->buf + OFF_SRC, first, k) ||
		    !guard_ok(w, "receive buffer 1", r0 + first, k) ||
		    !same(w, "receive buffer 2", r1, a->buf + OFF_SRC + first, rest, k) ||
		    !guard_ok(w, "receive buffer 2", r1 + rest, k))
			break;
	}
	w->us = k ? (double)spent / 1000.0 / k : 0;
}

/* fetch-add 1 into rank 1's signal word, the old value into rank 0's RES word */
static void op_fetch_add(struct loop *L, struct row *w)
{
	struct rank *a = &L->r[0], *b = &L->r[1];
	struct dvx_mlx5_cqe_info i;
	uint64_t *sig = word(b, OFF_SIG), *res = word(a, OFF_RES);
	const uint64_t base = 0x0102030400000000ull;
	uint64_t spent = 0, t0;
	uint32_t k;
	uint64_t idx;

	loop_store64(sig, base);
	for (k = 0; k < L->iters && w->result != RES_FAIL; k++) {
		loop_store64(res, ~0ull);
		t0 = loop_now_ns();
		if (reserve1(a, w, &idx))
			break;
		dvx_mlx5_wqe_atomic_fa(&a->qp.sq.wq, idx, DVX_MLX5_WQE_CTRL_CQ_UPDATE, loop_va(sig),
				       b->mr.rkey, 1, loop_va(res), a->mr.lkey);
		ring1(a, idx);
		if (wait_req(L, a, &a->qp, &a->scq, idx, w, "ATOMIC_FA", k, &i))
			break;
		spent += loop_now_ns() - t0;
		if (!loop_fetched_ok(w, a, res, base + k, k))
			break;
	}
	w->us = k ? (double)spent / 1000.0 / k : 0;
	if (w->result != RES_FAIL && loop_load64(sig) != base + L->iters)
		loop_rfail(w, "final signal word 0x%016llx, expected 0x%016llx",
			   (unsigned long long)loop_load64(sig),
			   (unsigned long long)(base + L->iters));
}

/* compare-swap chain on rank 1's signal word: k -> k + 1; then one that must miss */
static void op_cmp_swap(struct loop *L, struct row *w)
{
	struct rank *a = &L->r[0], *b = &L->r[1];
	struct dvx_mlx5_cqe_info i;
	uint64_t *sig = word(b, OFF_SIG), *res = word(a, OFF_RES);
	const uint64_t base = 0x1122334400000000ull;
	uint64_t spent = 0, t0, old;
	uint32_t k;
	uint64_t idx;

	loop_store64(sig, base);
	for (k = 0; k < L->iters && w->result != RES_FAIL; k++) {
		loop_store64(res, ~0ull);
		t0 = loop_now_ns();
		if (reserve1(a, w, &idx))
			break;
		dvx_mlx5_wqe_atomic_cs(&a->qp.sq.wq, idx, DVX_MLX5_WQE_CTRL_CQ_UPDATE,
				       &(struct dvx_mlx5_raddr){ loop_va(sig), b->mr.rkey },
				       base + k, base + k + 1, loop_va(res), a->mr.lkey);
		ring1(a, idx);
		if (wait_req(L, a, &a->qp, &a->scq, idx, w, "ATOMIC_CS", k, &i))
			break;
		spent += loop_now_ns() - t0;
		if (!loop_fetched_ok(w, a, res, base + k, k))
			break;
	}
	w->us = k ? (double)spent / 1000.0 / k : 0;
	if (w->result == RES_FAIL)
		return;
	if (loop_load64(sig) != base + L->iters) {
		loop_rfail(w, "final signal word 0x%016llx, expected 0x%016llx",
			   (unsigned long long)loop_load64(sig),
			   (unsigned long long)(base + L->iters));
		return;
	}
	/* a compare that does not match: the old value comes back, nothing changes */
	loop_store64(res, 0);
	if (reserve1(a, w, &idx))
		return;
	dvx_mlx5_wqe_atomic_cs(&a->qp.sq.wq, idx, DVX_MLX5_WQE_CTRL_CQ_UPDATE,
			       &(struct dvx_mlx5_raddr){ loop_va(sig), b->mr.rkey },
			       base + L->iters + 7, 0xdeadull, loop_va(res), a->mr.lkey);
	ring1(a, idx);
	if (wait_req(L, a, &a->qp, &a->scq, idx, w, "ATOMIC_CS (mismatch)", L->iters, &i))
		return;
	old = loop_atomic_result(a, res);
	if (old != base + L->iters || loop_load64(sig) != base + L->iters)
		loop_rfail(w, "mismatching compare: fetched 0x%016llx, word 0x%016llx, both "
			   "expected 0x%016llx", (unsigned long long)old,
			   (unsigned long long)loop_load64(sig),
			   (unsigned long long)(base + L->iters));
}

/* hold the companion's WAIT open for a while: nothing may be raised meanwhile */
static void hold(struct loop *L, struct rank *a, uint64_t ns)
{
	uint64_t end = loop_now_ns() + ns;
	int n;

	if (!L->thread && L->sim) {
		for (n = 0; n < 4; n++)
			loop_progress(L, a);
		return;
	}
	while (loop_now_ns() < end)
		loop_progress(L, a);
}

/*
 * The companion counter: per iteration, rank 0's companion posts WAIT(data CQ, index
 * of the batch's last WQE) + fetch-add 1 into rank 0's counter word (through its
 * loopback), the old value to the iova-0 sink; then the data QP posts BATCH WRITEs.
 * The counter must stay put until the batch completed, and when it moves the data
 * must be at rank 1 already.
 */
static void op_companion(struct loop *L, struct row *w)
{
	struct rank *a = &L->r[0], *b = &L->r[1];
	struct dvx_mlx5_cqe_info i;
	uint64_t *ctr = word(a, OFF_CTR);
	uint64_t spent = 0, t0, v;
	uint32_t k, j, last_cq;
	uint64_t cidx;
	uint64_t idx;
	int rc;

	loop_store64(ctr, 0);
	loop_store64(a->sinkbuf, ~0ull);
	for (k = 0; k < L->iters && w->result != RES_FAIL; k++) {
		loop_fill(a->buf + OFF_SRC, BATCH * BATCH_BYTES, 0x500000ull + k);
		memset(b->buf + OFF_DST, 0, BATCH * BATCH_BYTES);
		/* the CQ index the last data WQE of this batch will complete at */
		last_cq = (a->scq.index_base + a->scq_cqes + BATCH - 1) & 0xffffffu;
		rc = dvx_mlx5_sq_reserve(&a->cqp.sq, &a->cqp.sqc, 2, DVX_MLX5_SQ_SINGLE, &cidx);
		if (rc) {
			loop_rfail(w, "companion reserve: %s", strerror(-rc));
			break;
		}
		dvx_mlx5_wqe_wait_cq(&a->cqp.sq.wq, cidx, 0, a->scq.cqn, last_cq);
		dvx_mlx5_wqe_atomic_fa(&a->cqp.sq.wq, cidx + 1, DVX_MLX5_WQE_CTRL_CQ_UPDATE,
				       loop_va(ctr), a->mr.rkey, 1, 0, a->sink.lkey);
		dvx_mlx5_sq_ring(&a->cqp.sq, &a->cqp.sqc, cidx + 1);
		/* the first time, give the NIC ample time to (wrongly) run past the WAIT */
		hold(L, a, k == 0 ? 2000000ull : 0);
		v = loop_load64(ctr);
		if (v != k || dvx_mlx5_cq_peek(&a->ccq.mcq)) {
			loop_rfail(w, "iteration %u: counter %llu (or a companion CQE) before the "
				   "data was posted: the WAIT did not hold", k,
				   (unsigned long long)v);
			break;
		}
		t0 = loop_now_ns();
		rc = dvx_mlx5_sq_reserve(&a->qp.sq, &a->qp.sqc, BATCH, DVX_MLX5_SQ_SINGLE, &idx);
		if (rc) {
			loop_rfail(w, "send queue reserve: %s", strerror(-rc));
			break;
		}
		for (j = 0; j < BATCH; j++)
			dvx_mlx5_wqe_rdma_write(&a->qp.sq.wq, idx + j, DVX_MLX5_WQE_CTRL_CQ_UPDATE,
						loop_va(b->buf + OFF_DST + j * BATCH_BYTES),
						b->mr.rkey,
						loop_va(a->buf + OFF_SRC + j * BATCH_BYTES),
						a->mr.lkey, BATCH_BYTES);
		dvx_mlx5_sq_ring(&a->qp.sq, &a->qp.sqc, idx + BATCH - 1);
		a->scq_cqes += BATCH;
		/* the counter's raise completes on the companion CQ */
		if (wait_req(L, a, &a->cqp, &a->ccq, cidx + 1, w, "companion FA", k, &i))
			break;
		spent += loop_now_ns() - t0;
		if (!same(w, "data when the counter rose", b->buf + OFF_DST, a->buf + OFF_SRC,
			  BATCH * BATCH_BYTES, k))
			break;
		v = loop_load64(ctr);
		if (v != k + 1) {
			loop_rfail(w, "iteration %u: counter %llu, expected %u", k,
				   (unsigned long long)v, k + 1);
			break;
		}
		v = loop_atomic_result(a, a->sinkbuf);
		if (v != k) {
			loop_rfail(w, "iteration %u: sink holds %llu, expected the old value %u", k,
				   (unsigned long long)v, k);
			break;
		}
		for (j = 0; j < BATCH; j++)
			if (wait_req(L, a, &a->qp, &a->scq, idx + j, w, "batch WRITE", k, &i))
				break;
	}
	w->us = k ? (double)spent / 1000.0 / k : 0;
	if (w->result != RES_FAIL && loop_load64(ctr) != L->iters)
		loop_rfail(w, "final counter %llu, expected %u batches",
			   (unsigned long long)loop_load64(ctr), L->iters);
}

/* ---- trace (software NIC) ---- */

#ifdef CONFIG_DVX_SIM
static void trace_print(void *arg, uint32_t nic, uint32_t qpn, int is_cqe, const void *bytes,
			size_t len)
{
	struct loop *L = arg;
	static struct dvx_mlx5_wqe_desc d;	/* large; runs under the sim's lock */
	static uint8_t ring[1024];		/* holds the largest WQE (ds 63) */
	static char buf[4096];

	if (is_cqe) {
		struct dvx_mlx5_cqe_info info;
		int err;

		L->trace_cqes++;
		if (len < sizeof(struct dvx_mlx5_cqe64))
			return;
		err = dvx_mlx5_cqe_parse((const struct dvx_mlx5_cqe64 *)bytes, &info);
		dvx_mlx5_cqe_format(&info, err, buf, sizeof(buf));
		printf("trace: sim_%u qp 0x%06x CQE\n%s\n", nic, qpn, buf);
		return;
	}
	L->trace_wqes++;
	memset(ring, 0, sizeof(ring));
	memcpy(ring, bytes, len < sizeof(ring) ? len : sizeof(ring));
	if (dvx_mlx5_wqe_decode(ring, sizeof(ring), 0, &d) == -EBADMSG)
		L->trace_bad++;
	dvx_mlx5_wqe_format(&d, buf, sizeof(buf));
	printf("trace: sim_%u qp 0x%06x WQE (%zu bytes)\n%s\n", nic, qpn, len, buf);
}

static int sim_open(struct loop *L)
{
	struct dvx_sim_fabric_cfg fc;
	struct dvx_sim_nic_cfg nc;
	size_t len;
	int i, err;

	dvx_sim_fabric_cfg_default(&fc);
	fc.max_nics = 2;
	fc.max_qps = 8;
	fc.max_cqs = 8;
	fc.max_mrs = 8;
	fc.max_umems = 8;
	len = dvx_sim_fabric_mem_size(&fc);
	L->fab_mem = len ? malloc(len) : NULL;
	if (!L->fab_mem) {
		fprintf(stderr, "%s: out of memory for the software NIC\n", prog);
		return -ENOMEM;
	}
	err = dvx_sim_fabric_init(L->fab_mem, len, &fc, &L->fab);
	for (i = 0; i < 2 && !err; i++) {
		dvx_sim_nic_cfg_default(&nc, (unsigned)i);
		if (L->ib)
			nc.port[0].link_layer = DVX_LINK_LAYER_IB;
		err = dvx_sim_add_nic(L->fab, &nc);
		err = err < 0 ? err : 0;
	}
	if (err) {
		fprintf(stderr, "%s: software NIC set-up failed: %s\n", prog, strerror(-err));
		return err;
	}
	L->hal = dvx_sim_hal(L->fab);
	L->r[0].dev = "sim_0";
	L->r[1].dev = "sim_1";
	return 0;
}
#endif

/* ---- output ---- */

/* ---- main ---- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [--iters N] [--ib] [--trace] [--no-thread] [--timeout-ms MS] [--json]\n"
		"                [--record FILE]\n"
		"       %s --dev NAME [--dev NAME2] [--iters N] [--timeout-ms MS] [--json]\n"
		"                [--record FILE]\n"
		"       %s --procs 2 [--wire ADDR] [--dev NAME] [--iters N]   (or under mpirun)\n"
		"       %s --bw|--lat [--op OP] [-s SIZE | -a [-s MAX]] [-n N | -D SECONDS]\n"
		"                [--tx-depth N] [--cq-mod N] [--json] [--progress]\n"
		"                [--listen [ADDR:]PORT] [--connect HOST[:PORT]] [--dev NAME ...]\n"
		"\n"
		"Without --bw/--lat (or any other option of a measured run) two ranks run every\n"
		"data-path operation dvx drives and check each one byte for byte (or value for\n"
		"value): RDMA WRITE and READ (8 B, 4 KiB, 1 MiB), WRITE with immediate,\n"
		"SEND/RECV with a two-buffer scatter, fetch-add and compare-swap on a remote\n"
		"8-byte word, and the companion counter (a core-direct WAIT on the data CQ, then a\n"
		"loopback fetch-add). One table row per operation: size, iterations,\n"
		"OK/FAIL/SKIP, microseconds per operation.\n"
		"\n"
		"  (default)        the software NIC: a fabric of two simulated ConnectX NICs in\n"
		"                   this process, executed by the fabric's progress thread\n"
		"  --dev NAME       real mlx5 NICs through the linux hal (ibdev name or PCI\n"
		"                   address); once: both ranks on NAME (loopback), twice: rank 0\n"
		"                   on the first, rank 1 on the second\n"
		"  -n, --iters N    iterations per row (default 100) or, measured, per size\n"
		"                   (default 1000)\n"
		"  --ib             software NIC with InfiniBand ports (default RoCE v2)\n"
		"  --trace          print every WQE and CQE the software NIC executes, decoded\n"
		"  --no-thread      software NIC without its progress thread: this thread steps it\n"
		"  --timeout-ms MS  bound on every completion wait and every TCP exchange\n"
		"                   (default 5000)\n"
		"  --fault-row N    software NIC: run row N with rank 1's port down (a self-test\n"
		"                   of the failure path: that row fails, the QPs are recovered\n"
		"                   and the later rows run again)\n"
		"  --json           one JSON object on stdout instead of the table\n"
		"  --procs 2        the ranks as two processes (this one and a fork), joined by\n"
		"                   the sockets bootstrap; on the software NIC each process has\n"
		"                   its own NIC and the two meet over the wire, each touching\n"
		"                   only its own memory (rank 1 checks what landed there). Under\n"
		"                   mpirun or srun with 2 processes the same runs by itself, one\n"
		"                   rank per process (the MPI bootstrap). The companion row is\n"
		"                   local to one process and skipped\n"
		"  --wire ADDR      with --procs or a launcher: where this rank's software NIC\n"
		"                   listens for the other's: unix:DIR, or tcp:A.B.C.D (an address\n"
		"                   of this host; across hosts); default an abstract UNIX socket\n"
		"  --record FILE    trace the run through dvx's tracing backend into FILE (every\n"
		"                   hal call, mailbox, doorbell with its WQEs, receive and CQE;\n"
		"                   docs/trace.md), for dvx-replay to run again on the software\n"
		"                   NIC; the software NIC then runs without its progress thread\n"
		"\n"
		"Measured runs (as perftest's ib_write_bw, ib_write_lat); rank 0 posts to rank 1:\n"
		"  --bw             bandwidth (the default once any option below is given): up to\n"
		"                   --tx-depth WQEs in flight; MB/s (10^6 bytes/s) and Mpps\n"
		"  --lat            latency: one operation in flight, each timed from post to its\n"
		"                   completion; t_min, t_typical (median), t_p99, t_max, t_avg\n"
		"                   in microseconds\n"
		"  --op OP          write (default), write_imm, read, send, fetch_add, cmp_swap\n"
		"  -s, --size SIZE  message bytes (K, M, G: KiB, MiB, GiB; up to 1G); default\n"
		"                   65536 with --bw, 2 with --lat; atomics are 8 bytes\n"
		"  -a, --all        every power of two from 2 to 8M (or to -s), one row each\n"
		"  -D, --duration S run each size for S seconds instead of -n iterations\n"
		"  -t, --tx-depth N --bw: WQEs in flight, 1 to 256 (default 128)\n"
		"  --cq-mod N       --bw: one signaled WQE in N (default 16, at most the depth)\n"
		"  --progress       a progress line on stderr every second (the default when\n"
		"                   stderr is a terminal); never on stdout\n"
		"  --listen [ADDR:]PORT  be the server: wait for one client (port 0: any free\n"
		"                   port; 'listening on ADDR:PORT' goes to stderr)\n"
		"  --connect HOST[:PORT] be the client of the server there (port %u by default)\n"
		"  --accept-timeout S    how long the server waits for its client (default %u)\n"
		"\n"
		"Client and server exchange QPN, PSN, GID/LID, MTU, buffer address, rkey and size\n"
		"over TCP, then the client runs the test against the server's QP and buffer. On\n"
		"hardware they are two processes (two hosts, each with --dev). The software NIC\n"
		"lives inside one process, so there --listen and --connect go together: the\n"
		"server runs in a second thread, the exchange goes over TCP, the data path over\n"
		"the one software fabric.\n"
		"\n"
		"  --help           this text\n"
		"  --version        the version\n"
		"\n"
		"Exit status: 0 every row passed (or was skipped for a missing device feature),\n"
		"1 a row or the set-up failed, 2 usage error, 3 no such device.\n",
		prog, prog, prog, prog, PERF_PORT, PERF_ACCEPT_S);
}

static int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *v)
{
	char *end;
	unsigned long long x;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	x = strtoull(s, &end, 0);
	if (errno || *end || x < min || x > max)
		return -1;
	*v = x;
	return 0;
}

static int parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *v)
{
	uint64_t x;

	if (parse_u64(s, min, max, &x))
		return -1;
	*v = (uint32_t)x;
	return 0;
}

/* bytes with an optional K/M/G (binary) suffix */
static int parse_size(const char *s, uint32_t *v)
{
	char num[32];
	size_t n = s ? strlen(s) : 0;
	uint64_t x, mul = 1;

	if (!n || n >= sizeof(num))
		return -1;
	memcpy(num, s, n + 1);
	switch (num[n - 1]) {
	case 'k': case 'K': mul = KiB; break;
	case 'm': case 'M': mul = MiB; break;
	case 'g': case 'G': mul = 1024ull * MiB; break;
	default: break;
	}
	if (mul > 1)
		num[n - 1] = '\0';
	if (parse_u64(num, 1, PERF_SIZE_MAX, &x) || x * mul > PERF_SIZE_MAX)
		return -1;
	*v = (uint32_t)(x * mul);
	return 0;
}

/* the argument after option @i, or NULL */
#define NEXT() (i + 1 < argc ? argv[++i] : NULL)

static int usage_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_err(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

static int parse_args(struct loop *L, int argc, char **argv)
{
	struct perf_cfg *P = &L->perf;
	int perf = 0, bw = 0, lat = 0, op_given = 0, depth_given = 0, mod_given = 0;
	int accept_given = 0, progress = 0;
	uint64_t n;
	uint32_t v;
	int i, op;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			exit(0);
		} else if (!strcmp(a, "--version")) {
			dvx_tool_version(stdout, prog);
			exit(0);
		} else if (!strcmp(a, "--iters") || !strcmp(a, "-n")) {
			if (parse_u64(NEXT(), 1, 1000000000ull, &n))
				return usage_err("%s wants a number from 1 to 1000000000", a);
			P->iters = n;
			L->iters_given = 1;
		} else if (!strcmp(a, "--timeout-ms")) {
			if (parse_u32(NEXT(), 1, 3600000, &v))
				return usage_err("--timeout-ms wants a number from 1 to 3600000");
			L->timeout_ns = (uint64_t)v * 1000000ull;
		} else if (!strcmp(a, "--dev")) {
			if (i + 1 >= argc || !argv[i + 1][0])
				return usage_err("--dev wants a device name");
			if (L->ndevs == 2)
				return usage_err("at most two --dev");
			L->devs[L->ndevs++] = argv[++i];
		} else if (!strcmp(a, "--procs")) {
			if (parse_u32(NEXT(), 2, 2, &v))
				return usage_err("--procs wants 2 (the table's two ranks)");
			L->procs = (int)v;
		} else if (!strcmp(a, "--wire")) {
			L->wire_addr = NEXT();
			if (!L->wire_addr)
				return usage_err("--wire wants unix:DIR or tcp:ADDRESS");
		} else if (!strcmp(a, "--ib")) {
			L->ib = 1;
		} else if (!strcmp(a, "--trace")) {
			L->trace = 1;
		} else if (!strcmp(a, "--no-thread")) {
			L->thread = 0;
		} else if (!strcmp(a, "--fault-row")) {
			if (parse_u32(NEXT(), 1, 64, &L->fault_row))
				return usage_err("--fault-row wants a row number (1 ...)");
		} else if (!strcmp(a, "--record")) {
			L->record = i + 1 < argc ? argv[++i] : NULL;
			if (!L->record || !*L->record)
				return usage_err("--record wants a file name");
		} else if (!strcmp(a, "--json")) {
			L->json = 1;
		} else if (!strcmp(a, "--progress")) {
			progress = 1;
		} else if (!strcmp(a, "--bw")) {
			bw = perf = 1;
		} else if (!strcmp(a, "--lat")) {
			lat = perf = 1;
		} else if (!strcmp(a, "--op")) {
			const char *o = NEXT();

			op = o ? perf_op_parse(o) : -1;
			if (op < 0)
				return usage_err("--op wants write, write_imm, read, send, "
						 "fetch_add or cmp_swap");
			P->op = op;
			op_given = perf = 1;
		} else if (!strcmp(a, "-s") || !strcmp(a, "--size")) {
			if (parse_size(NEXT(), &P->size))
				return usage_err("%s wants a size from 1 to 1G (bytes, or with "
						 "K, M, G)", a);
			L->size_given = perf = 1;
		} else if (!strcmp(a, "-a") || !strcmp(a, "--all")) {
			P->sweep = perf = 1;
		} else if (!strcmp(a, "-D") || !strcmp(a, "--duration")) {
			if (parse_u32(NEXT(), 1, 86400, &P->duration_s))
				return usage_err("%s wants seconds, 1 to 86400", a);
			perf = 1;
		} else if (!strcmp(a, "-t") || !strcmp(a, "--tx-depth")) {
			if (parse_u32(NEXT(), 1, SQ_DEPTH, &P->tx_depth))
				return usage_err("%s wants a number from 1 to %u", a, SQ_DEPTH);
			depth_given = perf = 1;
		} else if (!strcmp(a, "--cq-mod")) {
			if (parse_u32(NEXT(), 1, SQ_DEPTH, &P->cq_mod))
				return usage_err("--cq-mod wants a number from 1 to %u", SQ_DEPTH);
			mod_given = perf = 1;
		} else if (!strcmp(a, "--listen")) {
			L->listen = NEXT();
			if (!L->listen)
				return usage_err("--listen wants [ADDR:]PORT");
			perf = 1;
		} else if (!strcmp(a, "--connect")) {
			L->connect = NEXT();
			if (!L->connect)
				return usage_err("--connect wants HOST[:PORT]");
			perf = 1;
		} else if (!strcmp(a, "--accept-timeout")) {
			if (parse_u32(NEXT(), 1, 86400, &L->accept_s))
				return usage_err("--accept-timeout wants seconds, 1 to 86400");
			accept_given = 1;
		} else {
			return usage_err("unknown argument '%s' (see --help)", a);
		}
	}
	if (L->ndevs && (L->ib || L->trace || !L->thread || L->fault_row))
		return usage_err("--ib, --trace, --no-thread and --fault-row are for the software "
				 "NIC, not with --dev");
	if (L->trace && L->json)
		return usage_err("--trace prints to stdout: not with --json");
	L->progress = progress || (perf && isatty(2));
	if (!perf) {
		if (progress)
			return usage_err("--progress is for the measured runs (--bw, --lat)");
		if (accept_given)
			return usage_err("--accept-timeout is for --listen");
		if (L->iters_given && P->iters > 10000000)
			return usage_err("the check table runs at most 10000000 iterations per "
					 "row");
		if (L->iters_given)
			L->iters = (uint32_t)P->iters;
		L->mode = LOOP_CHECK;
		return 0;
	}

	/* a measured run */
	if (bw && lat)
		return usage_err("--bw or --lat, not both");
	L->mode = lat ? LOOP_LAT : LOOP_BW;
	P->mode = L->mode;
	if (L->fault_row)
		return usage_err("--fault-row is for the check table, not a measured run");
	if (L->iters_given && P->duration_s)
		return usage_err("-n and -D exclude each other: a count or a duration per size");
	if (!L->iters_given && !P->duration_s)
		P->iters = PERF_ITERS;
	if (L->mode == LOOP_LAT && (depth_given || mod_given))
		return usage_err("--tx-depth and --cq-mod are for --bw (--lat has one operation "
				 "in flight)");
	if (!depth_given)
		P->tx_depth = PERF_TX_DEPTH;
	if (!mod_given)
		P->cq_mod = PERF_CQ_MOD;
	if (op_given && perf_op_atomic(P->op)) {
		if (P->sweep || (L->size_given && P->size != 8))
			return usage_err("atomics are 8 bytes: no -a, and -s only as 8");
		P->size = 8;
	} else if (P->sweep) {
		if (!L->size_given)
			P->size = PERF_SWEEP_MAX;
		else if (P->size < PERF_SWEEP_MIN || (P->size & (P->size - 1)))
			return usage_err("-a sweeps powers of two: -s must be one (2 ... 1G)");
	} else if (!L->size_given) {
		P->size = L->mode == LOOP_LAT ? 2 : 65536;
	}
	if (accept_given && !L->listen)
		return usage_err("--accept-timeout is for --listen");
	if (!L->ndevs && (!L->listen != !L->connect))
		return usage_err("the software NIC lives inside this process: a lone %s could "
				 "never reach its peer; give --listen and --connect together (the "
				 "server then runs in a second thread, over TCP) or use --dev",
				 L->listen ? "--listen" : "--connect");
	if (L->ndevs == 2 && (!L->listen != !L->connect))
		return usage_err("a lone server or client opens one NIC: one --dev");
	if (L->listen || L->connect) {
		struct dvx_hal_sock_addr sa;
		char err[160];

		if (L->listen && net_parse_addr(L->listen, 1, &sa, err, sizeof(err)))
			return usage_err("--listen %s", err);
		if (L->connect && net_parse_addr(L->connect, 0, &sa, err, sizeof(err)))
			return usage_err("--connect %s", err);
	}
	return 0;
}

static void print_json(const struct loop *L, int nfail)
{
	static const char *const res[] = { "OK", "FAIL", "SKIP" };
	int i;

	printf("{\"tool\":\"dvx-loop\",\"version\":");
	loop_json_str(stdout, DVX_VERSION);
	printf(",\"mode\":\"check\",\"backend\":");
	loop_json_str(stdout, loop_backend_name(L));
	printf(",\"link\":\"%s\",\"devices\":[", L->r[0].nic.roce ? "RoCE" : "InfiniBand");
	loop_json_str(stdout, L->r[0].dev);
	printf(",");
	loop_json_str(stdout, L->r[1].dev);
	printf("],\"iters\":%u,\"rows\":[", L->iters);
	for (i = 0; i < L->nrows; i++) {
		const struct row *w = &L->rows[i];

		printf("%s{\"op\":", i ? "," : "");
		loop_json_str(stdout, w->op);
		printf(",\"size\":");
		loop_json_str(stdout, w->size);
		printf(",\"iters\":%u,\"result\":\"%s\"", w->iters, res[w->result]);
		if (w->result == RES_SKIP || (w->result == RES_FAIL && !w->us))
			printf(",\"us_per_op\":null");
		else
			printf(",\"us_per_op\":%.3f", w->us);
		if (w->result != RES_OK) {
			printf(",\"why\":");
			loop_json_str(stdout, w->why);
		}
		printf("}");
	}
	printf("],\"result\":\"%s\"}\n", nfail ? "FAIL" : "OK");
	fflush(stdout);
}

static void run_row_end(struct loop *L, struct row *w)
{
#ifdef CONFIG_DVX_SIM
	if (L->sim && (uint32_t)L->nrows == L->fault_row)
		dvx_sim_set_port(L->fab, 1, 1, 1);
#endif
	loop_print_row(L, w);
	if (w->result == RES_FAIL && !L->broken)
		recover(L);
}

static void run_all(struct loop *L, int comp_err)
{
	static const uint32_t sizes[] = { 8, 4 * KiB, MAX_MSG };
	char sz[16];
	struct row *w;
	size_t s;

	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		loop_size_name(sizes[s], sz, sizeof(sz));
		w = row_new(L, "RDMA WRITE", sz);
		if (!L->broken)
			op_write(L, w, sizes[s]);
		run_row_end(L, w);
		w = row_new(L, "RDMA READ", sz);
		if (!L->broken)
			op_read(L, w, sizes[s]);
		run_row_end(L, w);
	}
	w = row_new(L, "RDMA WRITE_IMM", "4 KiB");
	if (!L->broken)
		op_write_imm(L, w, 4 * KiB);
	run_row_end(L, w);
	w = row_new(L, "SEND/RECV (2 SGEs)", "4 KiB");
	if (!L->broken)
		op_send(L, w, 4 * KiB, 1000);
	run_row_end(L, w);

	w = row_new(L, "ATOMIC fetch-add", "8 B");
	if (!L->atomics && !L->broken) {
		w->result = RES_SKIP;
		snprintf(w->why, sizeof(w->why), "the NICs do not do 8-byte atomics");
	} else if (!L->broken) {
		op_fetch_add(L, w);
	}
	run_row_end(L, w);
	w = row_new(L, "ATOMIC compare-swap", "8 B");
	if (!L->atomics && !L->broken) {
		w->result = RES_SKIP;
		snprintf(w->why, sizeof(w->why), "the NICs do not do 8-byte atomics");
	} else if (!L->broken) {
		op_cmp_swap(L, w);
	}
	run_row_end(L, w);

	snprintf(sz, sizeof(sz), "%ux%u KiB", BATCH, BATCH_BYTES / KiB);
	w = row_new(L, "companion counter", sz);
	if (comp_err == -EOPNOTSUPP && !L->broken) {
		w->result = RES_SKIP;
		snprintf(w->why, sizeof(w->why), "rank 0's NIC lacks core-direct or atomics");
	} else if (comp_err && !L->broken) {
		loop_rfail(w, "companion set-up failed: %s", strerror(-comp_err));
	} else if (!L->broken) {
		op_companion(L, w);
	}
	run_row_end(L, w);
}

/* the check table; the exit status */
static int run_check(struct loop *L, int comp_err)
{
	int i, nfail = 0;

	if (!L->json) {
		if (L->sim)
			printf("dvx-loop: software NIC, 2 ranks (sim_0 -> sim_1, %s%s), %u "
			       "iterations\n", L->ib ? "InfiniBand" : "RoCE v2",
			       L->thread ? ", progress thread" : ", stepped", L->iters);
		else
			printf("dvx-loop: %s -> %s (%s), %u iterations\n", L->r[0].dev, L->r[1].dev,
			       L->r[0].nic.roce ? "RoCE" : "InfiniBand", L->iters);
	}
	loop_print_head(L);
	run_all(L, comp_err);
	for (i = 0; i < L->nrows; i++)
		nfail += L->rows[i].result == RES_FAIL;
	if (L->json)
		print_json(L, nfail);
	if (nfail) {
		fprintf(stderr, "%s: %d of %d rows FAILED:", prog, nfail, L->nrows);
		for (i = 0; i < L->nrows; i++)
			if (L->rows[i].result == RES_FAIL)
				fprintf(stderr, " [%s %s]", L->rows[i].op, L->rows[i].size);
		fprintf(stderr, "\n");
		return EXIT_FAIL;
	}
	if (!L->json)
		printf("dvx-loop: all %d rows passed\n", L->nrows);
	return 0;
}

/* --record: the trace goes to a file, sink write by sink write */
static int record_write(void *arg, const void *buf, size_t len)
{
	return fwrite(buf, 1, len, (FILE *)arg) == len ? 0 : -1;
}

/* wrap the chosen backend in the tracer: every rank opens its NIC through it */
static int record_open(struct loop *L)
{
	struct dvx_trace_sink sink;
	int err;

	L->record_f = fopen(L->record, "wb");
	L->tracer = calloc(1, sizeof(*L->tracer));
	if (!L->record_f || !L->tracer) {
		fprintf(stderr, "%s: cannot record to %s: %s\n", prog, L->record,
			strerror(L->record_f ? ENOMEM : errno));
		return -1;
	}
	sink.write = record_write;
	sink.arg = L->record_f;
	err = dvx_trace_init(L->tracer, L->hal, &sink);
	if (err) {
		fprintf(stderr, "%s: tracer: %s\n", prog, strerror(-err));
		return -1;
	}
	L->hal = dvx_trace_hal(L->tracer);
	/* doorbells reach the device through the tracer's progress, never behind it */
	L->thread = 0;
	return 0;
}

static int record_close(struct loop *L)
{
	int err = dvx_trace_fini(L->tracer), cerr = fclose(L->record_f);

	if (err || cerr)
		fprintf(stderr, "%s: the trace in %s is incomplete (%s)\n", prog, L->record,
			err ? strerror(-err) : strerror(errno));
	free(L->tracer);
	return err || cerr ? -1 : 0;
}

/* the perf region of each rank this process opens (0: none, the check table) */
static void perf_caps(struct loop *L, int want[2])
{
	uint64_t need = L->perf.size < 64 ? 64 : L->perf.size;
	int tcp = L->listen || L->connect;

	want[0] = !tcp || L->connect;
	want[1] = !tcp || L->listen;
	need = (need + 63) & ~63ull;
	L->r[0].cap = need;
	/* a server alone does not know the client's sizes yet: room for the default sweep
	 * at least (a client asking for more is refused with the -s to start it with) */
	L->r[1].cap = L->listen && !L->connect && need < PERF_SWEEP_MAX ? PERF_SWEEP_MAX : need;
	if (tcp && !(L->listen && L->connect)) {
		L->r[0].dev = L->r[1].dev = L->devs[0];
	}
}

int main(int argc, char **argv)
{
	static struct loop L;
	int want[2] = { 1, 1 };
	int i, err, comp_err = 0, rc = 0;

	memset(&L, 0, sizeof(L));
	L.iters = 100;
	L.timeout_ns = 5000000000ull;
	L.thread = 1;
	L.accept_s = PERF_ACCEPT_S;
	L.r[0].id = 0;
	L.r[1].id = 1;
	if (parse_args(&L, argc, argv))
		return EXIT_USAGE;
	/* one rank per process: forked with --procs, or started so by a launcher */
	if (L.procs || (L.mode == LOOP_CHECK && dvx_bootstrap_mpi_launched())) {
		if (L.mode != LOOP_CHECK || L.listen || L.connect || L.json || L.ndevs > 1) {
			fprintf(stderr, "%s: ranks as processes run the check table (one --dev at "
				"most, no --json)\n", prog);
			return EXIT_USAGE;
		}
		if (L.ndevs) {
			L.hal = dvx_hal_linux();
			if (!L.hal) {
				fprintf(stderr, "%s: built without rdma-core: no --dev\n", prog);
				return EXIT_USAGE;
			}
			L.r[0].dev = L.r[1].dev = L.devs[0];
			L.thread = 0;
		} else {
#ifdef CONFIG_DVX_SIM
			L.sim = 1;
#else
			fprintf(stderr, "%s: built without the software NIC: use --dev\n", prog);
			return EXIT_USAGE;
#endif
		}
		return loop_procs_run(&L, L.procs);
	}

	if (L.ndevs) {
		L.hal = dvx_hal_linux();
		if (!L.hal) {
			fprintf(stderr, "%s: built without rdma-core (CONFIG_DVX_RDMA): no hardware "
				"backend for --dev\n", prog);
			return EXIT_USAGE;
		}
		L.r[0].dev = L.devs[0];
		L.r[1].dev = L.devs[L.ndevs - 1];
		L.thread = 0;
	} else {
#ifdef CONFIG_DVX_SIM
		L.sim = 1;
		if (sim_open(&L))
			rc = EXIT_FAIL;
#else
		fprintf(stderr, "%s: built without the software NIC (CONFIG_DVX_SIM): use --dev\n",
			prog);
		return EXIT_USAGE;
#endif
	}
	if (!rc && L.record && record_open(&L))
		rc = EXIT_FAIL;
	if (L.mode != LOOP_CHECK)
		perf_caps(&L, want);

	for (i = 0; i < 2 && !rc; i++) {
		if (!want[i])
			continue;
		err = loop_rank_open(&L, &L.r[i]);
		if (err)
			rc = (err == -ENODEV && i == 0) || (err == -ENODEV && !L.r[i].nic.open) ?
			     EXIT_NOTFOUND : EXIT_FAIL;
	}
	/* both ranks here: connect them directly (over TCP each side connects its own) */
	if (!rc && want[0] && want[1] && !L.listen) {
		L.atomics = (L.r[0].nic.features & L.r[1].nic.features & DVX_NIC_FEAT_ATOMIC) != 0;
		if (connect_ranks(&L))
			rc = EXIT_FAIL;
	}
	if (!rc && L.mode == LOOP_CHECK) {
		comp_err = companion_open(&L, &L.r[0]);
		if (comp_err && comp_err != -EOPNOTSUPP)
			rc = EXIT_FAIL;
	}
#ifdef CONFIG_DVX_SIM
	if (!rc && L.sim) {
		if (L.trace)
			dvx_sim_set_trace(L.fab, trace_print, &L);
		if (L.thread && (err = dvx_sim_start(L.fab))) {
			fprintf(stderr, "%s: progress thread: %s\n", prog, strerror(-err));
			rc = EXIT_FAIL;
		}
	}
#endif
	if (!rc) {
		if (L.mode == LOOP_CHECK)
			rc = run_check(&L, comp_err);
		else if (L.listen || L.connect)
			rc = perf_run_tcp(&L);
		else
			rc = perf_run_local(&L);
	}
#ifdef CONFIG_DVX_SIM
	if (L.sim && L.fab) {
		if (L.thread)
			dvx_sim_stop(L.fab);
		dvx_sim_set_trace(L.fab, NULL, NULL);
		if (L.trace)
			printf("trace: %u WQEs, %u CQEs, %u WQEs the decoder refused\n",
			       L.trace_wqes, L.trace_cqes, L.trace_bad);
		if (L.trace_bad && !rc) {
			fprintf(stderr, "%s: the decoder refused %u executed WQEs\n", prog,
				L.trace_bad);
			rc = EXIT_FAIL;
		}
	}
#endif
	if (want[1])
		loop_rank_close(&L.r[1]);
	if (want[0])
		loop_rank_close(&L.r[0]);
	if (L.tracer && record_close(&L) && !rc)
		rc = EXIT_FAIL;
#ifdef CONFIG_DVX_SIM
	if (L.fab)
		dvx_sim_fini(L.fab);
	free(L.fab_mem);
#endif
	return rc;
}
