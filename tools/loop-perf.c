// SPDX-License-Identifier: MIT
/*
 * tools/loop-perf.c - dvx-loop's measured runs, what perftest's ib_write_bw and
 * ib_write_lat users expect: a size or a sweep of sizes (-s, -a), a count (-n) or a
 * duration (-D) per size, bandwidth (pipelined, --tx-depth WQEs in flight, one
 * signaled WQE in --cq-mod) or latency (one operation in flight, post to completion),
 * for WRITE, WRITE_IMM, READ, SEND, fetch-add and compare-swap; a table or --json;
 * a progress line on stderr.
 *
 * The client (rank 0) posts; the responder (rank 1) prepares its buffer for each size,
 * keeps receives posted for SEND and WRITE_IMM and checks what arrived once the size
 * is done. The responder is driven in the client's own thread when both ranks are in
 * this program and no TCP is asked for (perf_run_local()), or runs as a server on the
 * other end of a TCP connection (perf_run_tcp(): --listen, --connect, or both at once
 * with the server in a second thread of this process).
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loop.h"

#include <dvx/hal/host.h>
#include <dvx/mlx5/decode.h>
#include <dvx/mlx5/rq.h>
#include <dvx/mlx5/sq.h>
#include <dvx/mlx5/wqe.h>

#define prog loop_prog
#define SEC 1000000000ull
#define LAT_SAMPLES (1u << 20)		/* kept for the median and p99 (a reservoir) */

static const struct {
	const char *arg, *arg2, *name;
} op_tab[LOOP_OP_COUNT] = {
	[LOOP_OP_WRITE] = { "write", "write", "RDMA WRITE" },
	[LOOP_OP_WRITE_IMM] = { "write_imm", "write-imm", "RDMA WRITE_IMM" },
	[LOOP_OP_READ] = { "read", "read", "RDMA READ" },
	[LOOP_OP_SEND] = { "send", "send", "SEND" },
	[LOOP_OP_FETCH_ADD] = { "fetch_add", "fetch-add", "ATOMIC fetch-add" },
	[LOOP_OP_CMP_SWAP] = { "cmp_swap", "cmp-swap", "ATOMIC compare-swap" },
};

const char *perf_op_name(int op)
{
	return op >= 0 && op < LOOP_OP_COUNT ? op_tab[op].name : "?";
}

const char *perf_op_arg(int op)
{
	return op >= 0 && op < LOOP_OP_COUNT ? op_tab[op].arg : "?";
}

int perf_op_parse(const char *s)
{
	int i;

	for (i = 0; i < LOOP_OP_COUNT; i++)
		if (!strcmp(s, op_tab[i].arg) || !strcmp(s, op_tab[i].arg2))
			return i;
	return -1;
}

int perf_op_atomic(int op)
{
	return op == LOOP_OP_FETCH_ADD || op == LOOP_OP_CMP_SWAP;
}

static int op_recv(int op)
{
	return op == LOOP_OP_SEND || op == LOOP_OP_WRITE_IMM;
}

static uint64_t seed_of(uint32_t bytes)
{
	return 0x700000ull + bytes;
}

static const char *mode_name(int mode)
{
	return mode == LOOP_LAT ? "lat" : "bw";
}

/* one measured row */
struct prow {
	struct row v;		/* result and why */
	uint32_t bytes;
	uint64_t iters;		/* operations completed */
	double secs, mbps, mpps;
	double tmin, ttyp, tp99, tmax, tavg;	/* microseconds */
};

/* ---- the responder: rank 1 in this thread, or the server ---- */

struct resp {
	const struct loop *L;
	struct rank *r;
	int op;
	uint32_t bytes;		/* the size in progress */
	uint64_t got;		/* receive completions of this size */
	uint64_t last_cqe;	/* when the last one came */
	struct row v;		/* a failure seen while pumping */
};

/* keep every receive slot posted: SEND lands at the start of the destination half (a
 * buffer of the whole half, so any size fits), WRITE_IMM needs a receive without one */
static int resp_fill_rq(struct resp *p)
{
	struct rank *r = p->r;
	struct dvx_mlx5_sge sge = { loop_va(perf_dst(r)), (uint32_t)r->cap, r->mr.lkey };
	int64_t rc;
	int n = 0;

	if (!op_recv(p->op))
		return 0;
	while ((rc = dvx_mlx5_rq_post(&r->qp.rq, &sge, p->op == LOOP_OP_SEND)) >= 0)
		n++;
	if (rc != -ENOSPC) {
		loop_rfail(&p->v, "receive post: %s", strerror((int)-rc));
		return -1;
	}
	if (n)
		dvx_mlx5_rq_ring(&r->qp.rq);
	return 0;
}

static int resp_begin(struct resp *p, uint32_t bytes)
{
	struct rank *r = p->r;

	p->bytes = bytes;
	p->got = 0;
	p->last_cqe = loop_now_ns();
	memset(&p->v, 0, sizeof(p->v));
	switch (p->op) {
	case LOOP_OP_READ:
		loop_fill(perf_src(r), bytes, seed_of(bytes));
		break;
	case LOOP_OP_FETCH_ADD:
	case LOOP_OP_CMP_SWAP:
		loop_store64((uint64_t *)(void *)perf_dst(r), 0);
		break;
	default:
		memset(perf_dst(r), 0, bytes);
		perf_dst(r)[bytes] = GUARD;
		break;
	}
	return resp_fill_rq(p);
}

/* take the receive completions there are and post the receives again; -1 on a failure */
static int resp_pump(struct resp *p)
{
	struct rank *r = p->r;
	struct dvx_mlx5_cqe_info i;
	uint8_t want = p->op == LOOP_OP_SEND ? DVX_MLX5_CQE_RESP_SEND : DVX_MLX5_CQE_RESP_WR_IMM;
	int rc, n = 0;

	if (!op_recv(p->op) || p->v.result == RES_FAIL)
		return p->v.result == RES_FAIL ? -1 : 0;
	while (n < 64 && (rc = dvx_mlx5_cq_poll_one(&r->rcq.mcq, &i)) != 0) {
		n++;
		if (rc < 0) {
			loop_cqe_fail(&p->v, "receive", p->got, rc, &i);
			break;
		}
		if (i.opcode != want || i.qpn != r->qp.qpn || i.byte_cnt != p->bytes) {
			loop_rfail(&p->v, "receive %llu: CQE %s qpn 0x%x byte_cnt %u; expected %s "
				   "qpn 0x%x byte_cnt %u", (unsigned long long)p->got,
				   dvx_mlx5_cqe_opcode_name(i.opcode), i.qpn, i.byte_cnt,
				   dvx_mlx5_cqe_opcode_name(want), r->qp.qpn, p->bytes);
			break;
		}
		if (dvx_mlx5_rq_completed(&r->qp.rq) < 0) {
			loop_rfail(&p->v, "receive %llu: a CQE without a posted receive",
				   (unsigned long long)p->got);
			break;
		}
		p->got++;
	}
	if (n) {
		dvx_mlx5_cq_update_ci(&r->rcq.mcq);
		p->last_cqe = loop_now_ns();
	}
	if (p->v.result == RES_FAIL)
		return -1;
	return resp_fill_rq(p);
}

/* the size is done: @ops operations completed at the client; check what arrived */
static int resp_end(struct resp *p, uint64_t ops)
{
	struct rank *r = p->r;
	uint64_t *word = (uint64_t *)(void *)perf_dst(r);
	uint32_t k;

	/* the requester's CQE follows the responder's, so the receives are due now */
	while (op_recv(p->op) && p->got < ops && p->v.result != RES_FAIL) {
		if (resp_pump(p))
			break;
		if (p->got < ops && loop_now_ns() - p->last_cqe > p->L->timeout_ns)
			loop_rfail(&p->v, "%llu of %llu receive completions, then none for %llu ms",
				   (unsigned long long)p->got, (unsigned long long)ops,
				   (unsigned long long)(p->L->timeout_ns / 1000000));
		loop_progress(p->L, r);
	}
	if (p->v.result == RES_FAIL)
		return -1;
	if (op_recv(p->op) && p->got != ops) {
		loop_rfail(&p->v, "%llu receive completions for %llu operations",
			   (unsigned long long)p->got, (unsigned long long)ops);
		return -1;
	}
	switch (p->op) {
	case LOOP_OP_READ:
		return 0;	/* the client checks what it read */
	case LOOP_OP_FETCH_ADD:
	case LOOP_OP_CMP_SWAP:
		if (loop_load64(word) != ops) {
			loop_rfail(&p->v, "the target word is %llu after %llu %s",
				   (unsigned long long)loop_load64(word), (unsigned long long)ops,
				   p->op == LOOP_OP_FETCH_ADD ? "fetch-adds of 1" :
				   "compare-swaps k -> k + 1");
			return -1;
		}
		return 0;
	default:
		if (!ops)
			return 0;
		/* the source half is free on this side: the expected bytes go there */
		loop_fill(perf_src(r), p->bytes, seed_of(p->bytes));
		if (memcmp(perf_dst(r), perf_src(r), p->bytes)) {
			for (k = 0; perf_dst(r)[k] == perf_src(r)[k]; k++)
				;
			loop_rfail(&p->v, "%u-byte messages: the destination differs at byte %u "
				   "(0x%02x, expected 0x%02x)", p->bytes, k, perf_dst(r)[k],
				   perf_src(r)[k]);
			return -1;
		}
		if (perf_dst(r)[p->bytes] != GUARD) {
			loop_rfail(&p->v, "%u-byte messages: the byte after them was overwritten",
				   p->bytes);
			return -1;
		}
		return 0;
	}
}

/* ---- the client ---- */

struct client {
	struct loop *L;
	struct rank *a;
	struct perf_cfg cfg;
	struct net_ep peer;	/* the responder's perf region */
	int atomics;		/* both sides do 8-byte atomics */
	/* the responder: in this thread, or over TCP */
	struct resp *resp;
	const struct dvx_hal *hal;
	int fd;
	uint64_t last_beat;
	/* description and output */
	const char *transport;	/* "in-process" or "tcp" */
	char where[160];	/* the header's description of the two sides */
	char peer_addr[80];	/* tcp: the server's address */
	const char *devs[2];
	uint32_t mtu;
	/* progress */
	uint64_t prog_next;
	struct prow rows[PERF_MAX_ROWS];
	uint32_t nrows;
};

static int client_begin(struct client *c, uint32_t bytes, struct row *w)
{
	struct net_msg m;
	int rc;

	if (c->resp) {
		if (!resp_begin(c->resp, bytes))
			return 0;
		loop_rfail(w, "responder: %s", c->resp->v.why);
		return -1;
	}
	memset(&m, 0, sizeof(m));
	m.type = NET_BEGIN;
	m.size = bytes;
	rc = net_send(c->hal, c->fd, &m, c->L->timeout_ns);
	if (!rc)
		rc = net_recv(c->hal, c->fd, &m, c->L->timeout_ns);
	if (!rc && m.type != NET_READY)
		rc = -EPROTO;
	if (rc) {
		loop_rfail(w, "the server did not get ready: %s", strerror(-rc));
		return -1;
	}
	if (m.status) {
		loop_rfail(w, "the server: %s", m.text);
		return -1;
	}
	c->last_beat = loop_now_ns();
	return 0;
}

/* called between polls: the local responder's receives, or a heartbeat to the server */
static int client_pump(struct client *c, uint64_t done, struct row *w)
{
	struct net_msg m;
	uint64_t t;

	if (c->resp) {
		if (!op_recv(c->cfg.op) || !resp_pump(c->resp))
			return 0;
		loop_rfail(w, "responder: %s", c->resp->v.why);
		return -1;
	}
	t = loop_now_ns();
	if (t - c->last_beat < SEC)
		return 0;
	c->last_beat = t;
	memset(&m, 0, sizeof(m));
	m.type = NET_BEAT;
	m.iters = done;
	if (net_send(c->hal, c->fd, &m, c->L->timeout_ns)) {
		loop_rfail(w, "the server's connection broke");
		return -1;
	}
	return 0;
}

static int client_end(struct client *c, uint32_t bytes, uint64_t done, struct row *w)
{
	struct net_msg m;
	int ok = w->result != RES_FAIL, rc;

	if (c->resp) {
		if (!ok || !resp_end(c->resp, done))
			return 0;
		loop_rfail(w, "responder: %s", c->resp->v.why);
		return -1;
	}
	memset(&m, 0, sizeof(m));
	m.type = NET_END;
	m.size = bytes;
	m.iters = done;
	m.status = ok ? 0 : -EIO;
	rc = net_send(c->hal, c->fd, &m, c->L->timeout_ns);
	if (!rc)
		rc = net_recv(c->hal, c->fd, &m, c->L->timeout_ns);
	if (!rc && m.type != NET_VERDICT)
		rc = -EPROTO;
	if (rc) {
		loop_rfail(w, "no verdict from the server: %s", strerror(-rc));
		return -1;
	}
	if (m.status && ok) {
		loop_rfail(w, "the server: %s", m.text);
		return -1;
	}
	return 0;
}

static void progress_line(struct client *c, uint32_t bytes, uint64_t done, uint64_t t0,
			  uint64_t now, uint64_t lat_sum)
{
	double s = (double)(now - t0) / 1e9;

	if (!c->L->progress || now < c->prog_next)
		return;
	c->prog_next = now + SEC;
	if (c->cfg.mode == LOOP_LAT)
		fprintf(stderr, "%s: %s %u B: %.1f s, %llu operations, %.2f us average\n", prog,
			op_tab[c->cfg.op].arg, bytes, s, (unsigned long long)done,
			done ? (double)lat_sum / 1e3 / (double)done : 0.0);
	else
		fprintf(stderr, "%s: %s %u B: %.1f s, %llu operations, %.2f MB/s\n", prog,
			op_tab[c->cfg.op].arg, bytes, s, (unsigned long long)done,
			s > 0 ? (double)done * bytes / s / 1e6 : 0.0);
}

static void build(struct client *c, uint64_t idx, uint8_t fl, uint32_t bytes, uint64_t k)
{
	struct rank *a = c->a;
	const struct dvx_mlx5_wq *wq = &a->qp.sq.wq;
	uint64_t rsrc = c->peer.addr, rdst = c->peer.addr + c->peer.cap;
	uint32_t i = (uint32_t)idx;

	switch (c->cfg.op) {
	case LOOP_OP_WRITE:
		dvx_mlx5_wqe_rdma_write(wq, i, fl, rdst, c->peer.rkey, loop_va(perf_src(a)),
					a->mr.lkey, bytes);
		break;
	case LOOP_OP_WRITE_IMM:
		dvx_mlx5_wqe_rdma_write_imm(wq, i, fl, (uint32_t)k,
					    &(struct dvx_mlx5_raddr){ rdst, c->peer.rkey },
					    &(struct dvx_mlx5_sge){ loop_va(perf_src(a)), bytes,
								    a->mr.lkey });
		break;
	case LOOP_OP_READ:
		dvx_mlx5_wqe_rdma_read(wq, i, fl, rsrc, c->peer.rkey, loop_va(perf_dst(a)),
				       a->mr.lkey, bytes);
		break;
	case LOOP_OP_SEND:
		dvx_mlx5_wqe_send(wq, i, fl, loop_va(perf_src(a)), a->mr.lkey, bytes);
		break;
	case LOOP_OP_FETCH_ADD:
		dvx_mlx5_wqe_atomic_fa(wq, i, fl, rdst, c->peer.rkey, 1, loop_va(perf_dst(a)),
				       a->mr.lkey);
		break;
	default:
		dvx_mlx5_wqe_atomic_cs(wq, i, fl, &(struct dvx_mlx5_raddr){ rdst, c->peer.rkey }, k,
				       k + 1, loop_va(perf_dst(a)), a->mr.lkey);
		break;
	}
}

/* a requester CQE of the data QP: check it and free its slots; 0 or -1 (@w failed) */
static int req_cqe(struct client *c, const struct dvx_mlx5_cqe_info *i, uint32_t bytes,
		   uint64_t k, struct row *w)
{
	struct dvx_qp *qp = &c->a->qp;

	if (i->opcode != DVX_MLX5_CQE_REQ || i->qpn != qp->qpn) {
		loop_rfail(w, "operation %llu: CQE %s qpn 0x%x, expected REQ qpn 0x%x",
			   (unsigned long long)k, dvx_mlx5_cqe_opcode_name(i->opcode), i->qpn,
			   qp->qpn);
		return -1;
	}
	if (c->cfg.op == LOOP_OP_READ && i->byte_cnt != bytes) {
		loop_rfail(w, "operation %llu: READ CQE byte count %u, expected %u",
			   (unsigned long long)k, i->byte_cnt, bytes);
		return -1;
	}
	if (dvx_mlx5_sq_completed(&qp->sq, &qp->sqc, i->wqe_counter) < 0) {
		loop_rfail(w, "operation %llu: the CQE names no WQE in flight (wqe_counter %u)",
			   (unsigned long long)k, i->wqe_counter);
		return -1;
	}
	return 0;
}

/* bandwidth: up to tx_depth WQEs in flight, one in cq_mod signaled (and the last) */
static void run_bw(struct client *c, uint32_t bytes, struct prow *p)
{
	struct row *w = &p->v;
	struct rank *a = c->a;
	struct dvx_qp *qp = &a->qp;
	struct dvx_mlx5_cqe_info i;
	uint64_t target = c->cfg.iters ? c->cfg.iters : UINT64_MAX;
	uint32_t depth = c->cfg.tx_depth;
	uint32_t mod = c->cfg.cq_mod < depth ? c->cfg.cq_mod : depth;
	uint64_t posted = 0, done = 0, signaled = 0, first = qp->sqc.resv;
	uint64_t t0, t_last, now, stop_at, idx, last = 0;
	unsigned pass = 0;
	int stop = 0, rc, any;
	uint8_t fl;

	t0 = now = t_last = loop_now_ns();
	c->prog_next = t0 + SEC;
	stop_at = c->cfg.duration_s ? t0 + (uint64_t)c->cfg.duration_s * SEC : UINT64_MAX;
	while (w->result != RES_FAIL) {
		any = 0;
		while (posted - done < depth &&
		       ((!stop && posted < target) || (stop && signaled < posted))) {
			rc = dvx_mlx5_sq_reserve(&qp->sq, &qp->sqc, 1, DVX_MLX5_SQ_SINGLE, &idx);
			if (rc) {
				loop_rfail(w, "send queue reserve: %s", strerror(-rc));
				break;
			}
			fl = (posted + 1) % mod == 0 || posted + 1 == target || stop ?
			     DVX_MLX5_WQE_CTRL_CQ_UPDATE : 0;
			build(c, idx, fl, bytes, posted);
			posted++;
			if (fl)
				signaled = posted;
			last = idx;
			any = 1;
		}
		if (any)
			dvx_mlx5_sq_ring(&qp->sq, &qp->sqc, last);
		if (w->result == RES_FAIL || (done == posted && (stop || posted >= target)))
			break;
		rc = dvx_mlx5_cq_poll_one(&a->scq.mcq, &i);
		if (rc > 0) {
			uint64_t at = dvx_mlx5_sq_index(&qp->sqc, i.wqe_counter);

			if (req_cqe(c, &i, bytes, at - first, w))
				break;
			dvx_mlx5_cq_update_ci(&a->scq.mcq);
			done = at - first + 1;
			t_last = now = loop_now_ns();
		} else if (rc < 0) {
			loop_cqe_fail(w, op_tab[c->cfg.op].name, done, rc, &i);
			break;
		} else {
			loop_progress(c->L, a);
		}
		if (client_pump(c, done, w))
			break;
		if ((++pass & 63) && rc > 0)
			continue;
		now = loop_now_ns();
		if (!stop && now >= stop_at)
			stop = 1;
		if (now - t_last > c->L->timeout_ns) {
			loop_rfail(w, "no CQE for %llu ms (%llu of %llu operations completed)",
				   (unsigned long long)(c->L->timeout_ns / 1000000),
				   (unsigned long long)done, (unsigned long long)posted);
			break;
		}
		progress_line(c, bytes, done, t0, now, 0);
	}
	p->iters = done;
	p->secs = (double)(t_last - t0) / 1e9;
	if (p->secs > 0) {
		p->mbps = (double)done * bytes / p->secs / 1e6;
		p->mpps = (double)done / p->secs / 1e6;
	}
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* latency: one operation in flight, each timed from before the reserve to its CQE */
static void run_lat(struct client *c, uint32_t bytes, struct prow *p)
{
	struct row *w = &p->v;
	struct rank *a = c->a;
	struct dvx_qp *qp = &a->qp;
	struct dvx_mlx5_cqe_info i;
	uint64_t *res = (uint64_t *)(void *)perf_dst(a);
	uint64_t target = c->cfg.iters ? c->cfg.iters : UINT64_MAX;
	uint64_t cap = c->cfg.iters && c->cfg.iters < LAT_SAMPLES ? c->cfg.iters : LAT_SAMPLES;
	uint64_t *s = malloc(cap * sizeof(*s));
	uint64_t k, t0, t1, start, stop_at, deadline, d, sum = 0, mn = UINT64_MAX, mx = 0;
	uint64_t rnd = 0x9E3779B97F4A7C15ull, kept, idx, got;
	uint32_t spins;
	int rc;

	if (!s) {
		loop_rfail(w, "out of memory for %llu samples", (unsigned long long)cap);
		return;
	}
	start = loop_now_ns();
	c->prog_next = start + SEC;
	stop_at = c->cfg.duration_s ? start + (uint64_t)c->cfg.duration_s * SEC : UINT64_MAX;
	for (k = 0; k < target && w->result != RES_FAIL; k++) {
		if (perf_op_atomic(c->cfg.op))
			loop_store64(res, ~0ull);
		t0 = loop_now_ns();
		rc = dvx_mlx5_sq_reserve(&qp->sq, &qp->sqc, 1, DVX_MLX5_SQ_SINGLE, &idx);
		if (rc) {
			loop_rfail(w, "send queue reserve: %s", strerror(-rc));
			break;
		}
		build(c, idx, DVX_MLX5_WQE_CTRL_CQ_UPDATE, bytes, k);
		dvx_mlx5_sq_ring(&qp->sq, &qp->sqc, idx);
		deadline = 0;
		spins = 0;
		while ((rc = dvx_mlx5_cq_poll_one(&a->scq.mcq, &i)) == 0) {
			if ((++spins & 255) == 0) {
				t1 = loop_now_ns();
				if (!deadline) {
					deadline = t1 + c->L->timeout_ns;
				} else if (t1 > deadline) {
					rc = -ETIMEDOUT;
					break;
				}
			}
			loop_progress(c->L, a);
		}
		t1 = loop_now_ns();
		if (rc < 0) {
			loop_cqe_fail(w, op_tab[c->cfg.op].name, k, rc, &i);
			break;
		}
		dvx_mlx5_cq_update_ci(&a->scq.mcq);
		if (i.wqe_counter != (uint16_t)idx) {
			loop_rfail(w, "operation %llu: CQE wqe_counter %u, expected %u",
				   (unsigned long long)k, i.wqe_counter, (uint16_t)idx);
			break;
		}
		if (req_cqe(c, &i, bytes, k, w))
			break;
		if (perf_op_atomic(c->cfg.op) && (got = loop_atomic_result(a, res)) != k) {
			loop_rfail(w, "operation %llu: fetched %llu, expected %llu",
				   (unsigned long long)k, (unsigned long long)got,
				   (unsigned long long)k);
			break;
		}
		d = t1 - t0;
		sum += d;
		mn = d < mn ? d : mn;
		mx = d > mx ? d : mx;
		if (k < cap) {
			s[k] = d;
		} else {	/* reservoir: every sample kept with the same chance */
			rnd ^= rnd << 13;
			rnd ^= rnd >> 7;
			rnd ^= rnd << 17;
			if (rnd % (k + 1) < cap)
				s[rnd % cap] = d;
		}
		progress_line(c, bytes, k + 1, start, t1, sum);
		if (client_pump(c, k + 1, w) || t1 >= stop_at) {
			k++;
			break;
		}
	}
	p->iters = k;		/* the operations that completed (and were checked) */
	p->secs = (double)(loop_now_ns() - start) / 1e9;
	kept = p->iters < cap ? p->iters : cap;
	if (kept) {
		qsort(s, kept, sizeof(*s), cmp_u64);
		p->tmin = (double)mn / 1e3;
		p->tmax = (double)mx / 1e3;
		p->tavg = (double)sum / 1e3 / (double)p->iters;
		p->ttyp = (double)s[(kept - 1) / 2] / 1e3;
		p->tp99 = (double)s[(kept * 99 + 99) / 100 - 1] / 1e3;
	}
	free(s);
}

/* the sizes of this run: 2, 4, ... up to -s with -a; else -s alone */
static uint32_t sizes_of(const struct perf_cfg *cfg, uint32_t *out)
{
	uint32_t n = 0, s;

	if (perf_op_atomic(cfg->op)) {
		out[0] = 8;
		return 1;
	}
	if (!cfg->sweep) {
		out[0] = cfg->size;
		return 1;
	}
	for (s = PERF_SWEEP_MIN; s <= cfg->size && n < PERF_MAX_ROWS; s *= 2)
		out[n++] = s;
	return n;
}

static void print_header(const struct client *c)
{
	char iters[64];

	if (c->cfg.duration_s)
		snprintf(iters, sizeof(iters), "%u s per size", c->cfg.duration_s);
	else
		snprintf(iters, sizeof(iters), "%llu iterations per size",
			 (unsigned long long)c->cfg.iters);
	if (c->cfg.mode == LOOP_LAT) {
		printf("%s: lat, %s, %s, %s, one operation in flight\n", prog,
		       op_tab[c->cfg.op].name, c->where, iters);
		printf("%10s %12s %10s %14s %10s %10s %10s  %s\n", "bytes", "iterations",
		       "t_min[us]", "t_typical[us]", "t_p99[us]", "t_max[us]", "t_avg[us]",
		       "result");
	} else {
		printf("%s: bw, %s, %s, tx depth %u, cq-mod %u, %s\n", prog, op_tab[c->cfg.op].name,
		       c->where, c->cfg.tx_depth,
		       c->cfg.cq_mod < c->cfg.tx_depth ? c->cfg.cq_mod : c->cfg.tx_depth, iters);
		printf("%10s %12s %10s %12s %10s  %s\n", "bytes", "iterations", "seconds", "MB/s",
		       "Mpps", "result");
	}
	fflush(stdout);
}

static const char *res_name(int r)
{
	return r == RES_OK ? "OK" : r == RES_FAIL ? "FAIL" : "SKIP";
}

static void print_row(const struct client *c, const struct prow *p)
{
	if (c->cfg.mode == LOOP_LAT)
		printf("%10u %12llu %10.2f %14.2f %10.2f %10.2f %10.2f  %s\n", p->bytes,
		       (unsigned long long)p->iters, p->tmin, p->ttyp, p->tp99, p->tmax, p->tavg,
		       res_name(p->v.result));
	else
		printf("%10u %12llu %10.6f %12.2f %10.4f  %s\n", p->bytes,
		       (unsigned long long)p->iters, p->secs, p->mbps, p->mpps,
		       res_name(p->v.result));
	if (p->v.result != RES_OK)
		printf("    %s\n", p->v.why);
	fflush(stdout);
}

static void json_num(const char *key, double v)
{
	/* finite by construction (divisions are guarded); JSON has no NaN */
	printf(",\"%s\":%.6g", key, v == v ? v : 0.0);
}

static void print_json(const struct client *c, int fail)
{
	uint32_t k;

	printf("{\"tool\":\"dvx-loop\",\"version\":");
	loop_json_str(stdout, DVX_VERSION);
	printf(",\"role\":\"client\",\"mode\":\"%s\",\"op\":\"%s\",\"backend\":",
	       mode_name(c->cfg.mode), op_tab[c->cfg.op].arg);
	loop_json_str(stdout, loop_backend_name(c->L));
	printf(",\"link\":\"%s\",\"transport\":\"%s\"",
	       c->a->nic.roce ? "RoCE" : "InfiniBand", c->transport);
	if (c->peer_addr[0]) {
		printf(",\"server\":");
		loop_json_str(stdout, c->peer_addr);
	}
	printf(",\"devices\":[");
	loop_json_str(stdout, c->devs[0]);
	if (c->devs[1]) {
		printf(",");
		loop_json_str(stdout, c->devs[1]);
	}
	printf("],\"mtu\":%u", c->mtu);
	if (c->cfg.mode == LOOP_BW)
		printf(",\"tx_depth\":%u,\"cq_mod\":%u", c->cfg.tx_depth,
		       c->cfg.cq_mod < c->cfg.tx_depth ? c->cfg.cq_mod : c->cfg.tx_depth);
	if (c->cfg.duration_s)
		printf(",\"iters\":null,\"duration_s\":%u,\"rows\":[", c->cfg.duration_s);
	else
		printf(",\"iters\":%llu,\"duration_s\":null,\"rows\":[",
		       (unsigned long long)c->cfg.iters);
	for (k = 0; k < c->nrows; k++) {
		const struct prow *p = &c->rows[k];

		printf("%s{\"bytes\":%u,\"iters\":%llu", k ? "," : "", p->bytes,
		       (unsigned long long)p->iters);
		if (c->cfg.mode == LOOP_LAT) {
			json_num("t_min_us", p->tmin);
			json_num("t_typical_us", p->ttyp);
			json_num("t_p99_us", p->tp99);
			json_num("t_max_us", p->tmax);
			json_num("t_avg_us", p->tavg);
		} else {
			json_num("seconds", p->secs);
			json_num("mb_per_s", p->mbps);
			json_num("mpps", p->mpps);
		}
		printf(",\"result\":\"%s\"", res_name(p->v.result));
		if (p->v.result != RES_OK) {
			printf(",\"why\":");
			loop_json_str(stdout, p->v.why);
		}
		printf("}");
	}
	printf("],\"result\":\"%s\"}\n", fail ? "FAIL" : "OK");
	fflush(stdout);
}

/* every size of the run; the exit status */
static int client_run(struct client *c)
{
	struct rank *a = c->a;
	uint32_t sizes[PERF_MAX_ROWS], n = sizes_of(&c->cfg, sizes), k;
	int fail = 0;

	if (!c->L->json)
		print_header(c);
	for (k = 0; k < n && !fail; k++) {
		struct prow *p = &c->rows[c->nrows++];
		struct row *w = &p->v;
		uint32_t bytes = sizes[k];

		memset(p, 0, sizeof(*p));
		p->bytes = bytes;
		if (perf_op_atomic(c->cfg.op) && !c->atomics) {
			w->result = RES_SKIP;
			snprintf(w->why, sizeof(w->why), "the NICs do not do 8-byte atomics");
		} else {
			/* what this side sends, or where what it reads lands */
			if (c->cfg.op == LOOP_OP_READ) {
				memset(perf_dst(a), 0, bytes);
				perf_dst(a)[bytes] = GUARD;
			} else if (!perf_op_atomic(c->cfg.op)) {
				loop_fill(perf_src(a), bytes, seed_of(bytes));
			}
			if (!client_begin(c, bytes, w)) {
				if (c->cfg.mode == LOOP_LAT)
					run_lat(c, bytes, p);
				else
					run_bw(c, bytes, p);
				client_end(c, bytes, p->iters, w);
			}
			if (w->result != RES_FAIL && c->cfg.op == LOOP_OP_READ && p->iters) {
				loop_fill(perf_src(a), bytes, seed_of(bytes));
				if (memcmp(perf_dst(a), perf_src(a), bytes))
					loop_rfail(w, "the bytes read differ from the server's");
				else if (perf_dst(a)[bytes] != GUARD)
					loop_rfail(w, "the byte after the bytes read was "
						   "overwritten");
			}
		}
		fail = w->result == RES_FAIL;
		if (!c->L->json)
			print_row(c, p);
	}
	if (c->L->json)
		print_json(c, fail);
	if (fail) {
		fprintf(stderr, "%s: %u-byte %s FAILED: %s\n", prog, c->rows[c->nrows - 1].bytes,
			op_tab[c->cfg.op].name, c->rows[c->nrows - 1].v.why);
		if (c->nrows < n)
			fprintf(stderr, "%s: stopped there: %u larger sizes not run\n", prog,
				n - c->nrows);
		return DVX_EXIT_FAIL;
	}
	if (!c->L->json)
		printf("%s: every size passed (%u row%s)\n", prog, c->nrows,
		       c->nrows == 1 ? "" : "s");
	return DVX_EXIT_OK;
}

static uint32_t mtu_bytes(uint8_t mtu)
{
	return mtu >= 1 && mtu <= 5 ? 128u << mtu : 0;
}

/* ---- both ranks here, the responder driven in this thread ---- */

int perf_run_local(struct loop *L)
{
	struct client c;
	struct resp resp;
	struct rank *b = &L->r[1];

	memset(&c, 0, sizeof(c));
	memset(&resp, 0, sizeof(resp));
	c.L = L;
	c.a = &L->r[0];
	c.cfg = L->perf;
	c.atomics = L->atomics;
	c.peer.addr = loop_va(perf_src(b));
	c.peer.cap = b->cap;
	c.peer.rkey = b->mr.rkey;
	c.resp = &resp;
	c.fd = -1;
	c.transport = "in-process";
	c.devs[0] = c.a->dev;
	c.devs[1] = b->dev;
	c.mtu = mtu_bytes(c.a->qp.remote.mtu < b->qp.remote.mtu ? c.a->qp.remote.mtu :
			  b->qp.remote.mtu);
	snprintf(c.where, sizeof(c.where), "%s %s -> %s (%s%s), one process",
		 loop_backend_name(L), c.a->dev, b->dev, c.a->nic.roce ? "RoCE" : "InfiniBand",
		 L->sim ? (L->thread ? ", progress thread" : ", stepped") : "");
	resp.L = L;
	resp.r = b;
	resp.op = L->perf.op;
	return client_run(&c);
}

/* ---- over TCP ---- */

struct server {
	struct loop *L;
	struct rank *r;
	const struct dvx_hal *hal;
	int lfd, fd;
	int quiet;		/* the server thread beside a client: no stdout */
	uint64_t accept_ns;	/* how long it waits for its client */
	int cancel;		/* set when the client beside it gave up */
	char where[80];		/* the listening address */
	int rc;			/* exit status */
};

static void srv_err(const struct server *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void srv_err(const struct server *s, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: server: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	(void)s;
}

/* what the client asks for, checked; NULL or why not */
static const char *hello_bad(const struct server *s, const struct net_msg *m, char *buf,
			     size_t n)
{
	if (m->type != NET_HELLO)
		return "the first frame is no HELLO";
	if (m->mode != LOOP_BW && m->mode != LOOP_LAT)
		return "unknown mode";
	if (m->op >= LOOP_OP_COUNT)
		return "unknown operation";
	if (!m->size || m->size > s->r->cap) {
		snprintf(buf, n, "messages of %u bytes do not fit the server's buffer of %llu "
			 "(start the server with -s %u)", m->size,
			 (unsigned long long)s->r->cap, m->size);
		return buf;
	}
	if (!m->tx_depth || m->tx_depth > SQ_DEPTH || !m->cq_mod)
		return "tx depth or cq-mod out of range";
	if (!m->iters == !m->duration_s)
		return "neither (or both) an iteration count and a duration";
	if (m->ep.cap < m->size)
		return "the client's buffer is smaller than its messages";
	return NULL;
}

static int srv_reply(struct server *s, uint16_t type, int status, const char *text,
		     uint64_t iters)
{
	struct net_msg m;

	memset(&m, 0, sizeof(m));
	m.type = type;
	m.status = status;
	m.iters = iters;
	if (text)	/* cut to the frame's text field */
		snprintf(m.text, sizeof(m.text), "%.*s", (int)sizeof(m.text) - 1, text);
	return net_send(s->hal, s->fd, &m, s->L->timeout_ns);
}

/* the next frame from the client, pumping the receives meanwhile; bounded by the
 * timeout (at least 3 s: the client beats every second) since the last frame */
static int srv_next(struct server *s, struct resp *p, int active, struct net_msg *m)
{
	uint64_t bound = s->L->timeout_ns > 3 * SEC ? s->L->timeout_ns : 3 * SEC;
	uint64_t deadline = loop_now_ns() + bound;
	unsigned spins = 0;
	int rc;

	if (!active || !op_recv(p->op))
		return net_recv(s->hal, s->fd, m, bound);
	for (;;) {
		resp_pump(p);	/* a failure is kept in p->v for the verdict */
		loop_progress(s->L, s->r);
		if (++spins & 63)
			continue;
		rc = net_readable(s->hal, s->fd);
		if (rc)
			return rc < 0 ? rc : net_recv(s->hal, s->fd, m, s->L->timeout_ns);
		if (loop_now_ns() > deadline)
			return -ETIMEDOUT;
	}
}

static void srv_row(const struct server *s, const struct loop *L, uint32_t bytes,
		    uint64_t iters, const char *res, const char *why, int first)
{
	if (s->quiet)
		return;
	if (L->json) {
		printf("%s{\"bytes\":%u,\"iters\":%llu,\"result\":\"%s\"", first ? "" : ",", bytes,
		       (unsigned long long)iters, res);
		if (why && *why) {
			printf(",\"why\":");
			loop_json_str(stdout, why);
		}
		printf("}");
	} else {
		printf("%10u %12llu  %s\n", bytes, (unsigned long long)iters, res);
		if (why && *why)
			printf("    %s\n", why);
	}
	fflush(stdout);
}

/* serve one client on the accepted socket; the exit status */
static int serve(struct server *s)
{
	struct loop *L = s->L;
	struct rank *r = s->r;
	struct net_msg m, w;
	struct dvx_qp_connect_cfg ca;
	struct resp resp;
	const char *bad;
	char buf[256];
	int rc, atomics, active = 0, nrows = 0, fail = 0;

	rc = net_recv(s->hal, s->fd, &m, L->timeout_ns);
	if (rc) {
		srv_err(s, "no HELLO from the client: %s", rc == -EPROTO ?
			"not a dvx-loop client (bad magic or version)" : strerror(-rc));
		return DVX_EXIT_FAIL;
	}
	bad = hello_bad(s, &m, buf, sizeof(buf));
	if (bad) {
		srv_err(s, "refused the client: %s", bad);
		srv_reply(s, NET_WELCOME, -EINVAL, bad, 0);
		return DVX_EXIT_FAIL;
	}
	atomics = (r->nic.features & DVX_NIC_FEAT_ATOMIC) && m.ep.atomics;
	loop_conn_attr(atomics, &ca);
	rc = dvx_qp_connect(&r->qp, &m.ep.conn, &ca);
	if (rc) {
		snprintf(buf, sizeof(buf), "dvx_qp_connect: %s%s%s", strerror(-rc),
			 r->nic.hal.diag.msg[0] ? ": " : "", r->nic.hal.diag.msg);
		srv_err(s, "%s", buf);
		srv_reply(s, NET_WELCOME, rc, buf, 0);
		return DVX_EXIT_FAIL;
	}
	memset(&w, 0, sizeof(w));
	w.type = NET_WELCOME;
	w.ep.addr = loop_va(perf_src(r));
	w.ep.cap = r->cap;
	w.ep.rkey = r->mr.rkey;
	w.ep.atomics = (r->nic.features & DVX_NIC_FEAT_ATOMIC) != 0;
	rc = dvx_qp_export(&r->qp, &w.ep.conn);
	if (!rc)
		rc = net_send(s->hal, s->fd, &w, L->timeout_ns);
	if (rc) {
		srv_err(s, "WELCOME: %s", strerror(-rc));
		return DVX_EXIT_FAIL;
	}
	memset(&resp, 0, sizeof(resp));
	resp.L = L;
	resp.r = r;
	resp.op = m.op;
	if (!s->quiet && L->json) {
		printf("{\"tool\":\"dvx-loop\",\"version\":");
		loop_json_str(stdout, DVX_VERSION);
		printf(",\"role\":\"server\",\"mode\":\"%s\",\"op\":\"%s\",\"backend\":",
		       mode_name(m.mode), perf_op_arg(m.op));
		loop_json_str(stdout, loop_backend_name(L));
		printf(",\"listen\":");
		loop_json_str(stdout, s->where);
		printf(",\"devices\":[");
		loop_json_str(stdout, r->dev);
		printf("],\"rows\":[");
	} else if (!s->quiet) {
		printf("%s: server %s (%s, %s): %s %s, %s%u bytes, ", prog, s->where, r->dev,
		       r->nic.roce ? "RoCE" : "InfiniBand", mode_name(m.mode),
		       perf_op_name(m.op), m.sweep ? "2 .. " : "", m.size);
		if (m.duration_s)
			printf("%u s per size (the client's choice)\n", m.duration_s);
		else
			printf("%llu iterations per size (the client's choice)\n",
			       (unsigned long long)m.iters);
		printf("%10s %12s  %s\n", "bytes", "iterations",
		       "result (what the server checked)");
		fflush(stdout);
	}
	for (;;) {
		rc = srv_next(s, &resp, active, &m);
		if (rc) {
			srv_err(s, "the client went away: %s", rc == -EPROTO ?
				"a frame that is not dvx-loop's" : strerror(-rc));
			fail = 1;
			break;
		}
		if (m.type == NET_BYE)
			break;
		if (m.type == NET_BEAT) {
			if (L->progress && active && !s->quiet)
				fprintf(stderr, "%s: server: %u B: %llu operations\n", prog,
					resp.bytes, (unsigned long long)m.iters);
			continue;
		}
		if (m.type == NET_BEGIN && !active) {
			if (!m.size || m.size > r->cap) {
				srv_reply(s, NET_READY, -EINVAL, "size out of range", 0);
				fail = 1;
				break;
			}
			rc = resp_begin(&resp, m.size);
			active = 1;
			fail |= rc != 0;
			if (srv_reply(s, NET_READY, rc ? -EIO : 0, rc ? resp.v.why : NULL, 0))
				break;
			continue;
		}
		if (m.type == NET_END && active && m.size == resp.bytes) {
			const char *res = "OK";

			active = 0;
			if (m.status) {
				res = "FAIL (at the client)";
				fail = 1;
			} else if (resp_end(&resp, m.iters)) {
				res = "FAIL";
				fail = 1;
			}
			srv_row(s, L, m.size, m.iters, res, resp.v.why, !nrows++);
			if (srv_reply(s, NET_VERDICT, resp.v.result == RES_FAIL ? -EIO : 0,
				      resp.v.why, m.iters))
				break;
			if (fail)
				srv_err(s, "%u-byte %s: %s", m.size, perf_op_name(resp.op),
					m.status ? "the client failed" : resp.v.why);
			continue;
		}
		srv_err(s, "an unexpected frame (type %u) from the client", m.type);
		fail = 1;
		break;
	}
	if (!s->quiet && L->json)
		printf("],\"result\":\"%s\"}\n", fail ? "FAIL" : "OK");
	else if (!s->quiet)
		printf("%s: server: %s\n", prog, fail ? "FAILED" : "done");
	fflush(stdout);
	return fail ? DVX_EXIT_FAIL : DVX_EXIT_OK;
}

static int srv_accept_serve(struct server *s)
{
	int rc = net_accept(s->hal, s->lfd, s->accept_ns, &s->cancel, &s->fd);

	net_close(s->hal, &s->lfd);
	if (rc == -ECANCELED)
		return DVX_EXIT_FAIL;	/* the client said why */
	if (rc) {
		srv_err(s, "no client within %llu s: %s",
			(unsigned long long)(s->accept_ns / SEC), strerror(-rc));
		return DVX_EXIT_FAIL;
	}
	rc = serve(s);
	net_close(s->hal, &s->fd);
	return rc;
}

static void *srv_thread(void *arg)
{
	struct server *s = arg;

	s->rc = srv_accept_serve(s);
	return NULL;
}

/* connect to the server, agree, run; the exit status */
static int client_tcp(struct loop *L, const struct dvx_hal_sock_addr *to)
{
	struct client c;
	struct net_msg m;
	struct dvx_qp_connect_cfg ca;
	struct rank *a = &L->r[0];
	uint8_t my_mtu;
	int rc, status;

	memset(&c, 0, sizeof(c));
	c.L = L;
	c.a = a;
	c.cfg = L->perf;
	c.hal = L->hal;
	c.fd = -1;
	c.transport = "tcp";
	c.devs[0] = a->dev;
	net_addr_str(to, c.peer_addr, sizeof(c.peer_addr));
	rc = net_connect(L->hal, to, L->timeout_ns, &c.fd);
	if (rc) {
		fprintf(stderr, "%s: cannot connect to %s: %s\n", prog, c.peer_addr, strerror(-rc));
		return DVX_EXIT_FAIL;
	}
	memset(&m, 0, sizeof(m));
	m.type = NET_HELLO;
	m.mode = (uint8_t)c.cfg.mode;
	m.op = (uint8_t)c.cfg.op;
	m.sweep = (uint8_t)c.cfg.sweep;
	m.size = perf_op_atomic(c.cfg.op) ? 8 : c.cfg.size;
	m.duration_s = c.cfg.duration_s;
	m.tx_depth = c.cfg.tx_depth;
	m.cq_mod = c.cfg.cq_mod;
	m.iters = c.cfg.iters;
	m.ep.addr = loop_va(perf_src(a));
	m.ep.cap = a->cap;
	m.ep.rkey = a->mr.rkey;
	m.ep.atomics = (a->nic.features & DVX_NIC_FEAT_ATOMIC) != 0;
	rc = dvx_qp_export(&a->qp, &m.ep.conn);
	my_mtu = m.ep.conn.mtu;
	if (!rc)
		rc = net_send(L->hal, c.fd, &m, L->timeout_ns);
	if (!rc)
		rc = net_recv(L->hal, c.fd, &m, L->timeout_ns);
	if (!rc && m.type != NET_WELCOME)
		rc = -EPROTO;
	if (rc) {
		fprintf(stderr, "%s: no WELCOME from %s: %s\n", prog, c.peer_addr,
			rc == -EPROTO ? "not a dvx-loop server (bad magic, version or frame)" :
			strerror(-rc));
		net_close(L->hal, &c.fd);
		return DVX_EXIT_FAIL;
	}
	if (m.status) {
		fprintf(stderr, "%s: the server at %s refused: %s\n", prog, c.peer_addr, m.text);
		net_close(L->hal, &c.fd);
		return DVX_EXIT_FAIL;
	}
	c.peer = m.ep;
	c.atomics = (a->nic.features & DVX_NIC_FEAT_ATOMIC) && m.ep.atomics;
	loop_conn_attr(c.atomics, &ca);
	rc = dvx_qp_connect(&a->qp, &m.ep.conn, &ca);
	if (rc) {
		fprintf(stderr, "%s: dvx_qp_connect to the server's QP 0x%x: %s%s%s\n", prog,
			dvx_be32_to_cpu(m.ep.conn.qpn), strerror(-rc),
			a->nic.hal.diag.msg[0] ? ": " : "", a->nic.hal.diag.msg);
		net_close(L->hal, &c.fd);
		return DVX_EXIT_FAIL;
	}
	c.mtu = mtu_bytes(my_mtu < m.ep.conn.mtu ? my_mtu : m.ep.conn.mtu);
	snprintf(c.where, sizeof(c.where), "%s %s (%s) -> server %s over TCP, QP 0x%x -> 0x%x",
		 loop_backend_name(L), a->dev, a->nic.roce ? "RoCE" : "InfiniBand", c.peer_addr,
		 a->qp.qpn, dvx_be32_to_cpu(m.ep.conn.qpn));
	status = client_run(&c);
	memset(&m, 0, sizeof(m));
	m.type = NET_BYE;
	net_send(L->hal, c.fd, &m, L->timeout_ns);
	net_close(L->hal, &c.fd);
	return status;
}

int perf_run_tcp(struct loop *L)
{
	struct dvx_hal_sock_addr la, ca, bound;
	struct server s;
	pthread_t th;
	char err[160];
	int rc, status = DVX_EXIT_OK;

	memset(&s, 0, sizeof(s));
	s.lfd = s.fd = -1;
	if (L->listen && net_parse_addr(L->listen, 1, &la, err, sizeof(err))) {
		fprintf(stderr, "%s: --listen %s\n", prog, err);
		return DVX_EXIT_USAGE;
	}
	if (L->connect && net_parse_addr(L->connect, 0, &ca, err, sizeof(err))) {
		fprintf(stderr, "%s: --connect %s\n", prog, err);
		return DVX_EXIT_USAGE;
	}
	if (L->listen) {
		s.L = L;
		s.r = &L->r[1];
		s.hal = L->hal;
		s.quiet = L->connect != NULL;
		/* the client beside it connects at once, within its own timeout */
		s.accept_ns = L->connect ? L->timeout_ns + SEC : (uint64_t)L->accept_s * SEC;
		rc = net_listen(L->hal, &la, &s.lfd, &bound);
		if (rc) {
			net_addr_str(&la, err, sizeof(err));
			fprintf(stderr, "%s: cannot listen on %s: %s\n", prog, err, strerror(-rc));
			return DVX_EXIT_FAIL;
		}
		net_addr_str(&bound, s.where, sizeof(s.where));
		fprintf(stderr, "%s: listening on %s\n", prog, s.where);
		if (!L->connect) {
			status = srv_accept_serve(&s);
			net_close(L->hal, &s.lfd);
			return status;
		}
		if (!ca.port)
			ca.port = bound.port;	/* the server beside us: the port it got */
		rc = pthread_create(&th, NULL, srv_thread, &s);
		if (rc) {
			fprintf(stderr, "%s: server thread: %s\n", prog, strerror(rc));
			net_close(L->hal, &s.lfd);
			return DVX_EXIT_FAIL;
		}
	} else if (!ca.port) {
		ca.port = PERF_PORT;
	}
	status = client_tcp(L, &ca);
	if (L->listen) {
		/* a client that never reached the server thread: it stops waiting now */
		__atomic_store_n(&s.cancel, 1, __ATOMIC_RELEASE);
		pthread_join(th, NULL);
		if (s.rc != DVX_EXIT_OK && status == DVX_EXIT_OK)
			status = s.rc;
	}
	return status;
}
