// SPDX-License-Identifier: MIT
/*
 * tools/loop-common.c - what every part of dvx-loop shares: the data pattern, rows and
 * their failures, waiting for completions, opening and closing a rank, the table's
 * head and rows. The bottom of the program: dvx-loop.c (the checked rows), loop-perf.c
 * (perftest's runs) and loop-procs.c (ranks as processes) use it, and it calls none of
 * them (scripts/check-cycles.sh).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "loop.h"

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

const char *loop_prog = "dvx-loop";
#define prog loop_prog

/* the next @bytes of @r's ring region, @align-aligned, at *@off */
static int carve(struct rank *r, uint64_t bytes, uint64_t align, uint64_t *off)
{
	uint64_t at = (r->carved + align - 1) & ~(align - 1);

	if (at + bytes > RING_BYTES)
		return -ENOSPC;
	*off = at;
	r->carved = at + bytes;
	return 0;
}

int loop_make_cq(struct rank *r, uint32_t depth, struct dvx_cq *cq)
{
	struct dvx_cq_cfg a;
	int err;

	memset(&a, 0, sizeof(a));
	a.depth = depth;
	a.ring_umem = &r->umem;
	a.dbr_umem = &r->umem;
	err = carve(r, DVX_CQ_RING_BYTES(depth), DVX_RING_ALIGN, &a.ring_offset);
	if (!err)
		err = carve(r, DVX_DBR_BYTES, 64, &a.dbr_offset);
	return err ? err : dvx_cq_create(&r->nic, &a, cq);
}

int loop_make_qp(struct rank *r, uint32_t sq_depth, uint32_t rq_depth, struct dvx_cq *scq,
		   struct dvx_cq *rcq, struct dvx_uar *uar, uint32_t flags, uint32_t psn,
		   struct dvx_qp *qp)
{
	struct dvx_qp_cfg a;
	struct dvx_mem_req wq, dbr;
	int err;

	memset(&a, 0, sizeof(a));
	a.sq_depth = sq_depth;
	a.rq_depth = rq_depth;
	a.rq_max_sge = rq_depth ? RQ_SGE : 0;
	a.send_cq = scq;
	a.recv_cq = rq_depth ? rcq : NULL;
	a.uar = uar;
	a.flags = flags;
	a.psn = psn;
	a.user_index = (uint32_t)r->id + 1;
	a.wq_umem = &r->umem;
	a.dbr_umem = &r->umem;
	err = dvx_qp_mem_req(&a, &wq, &dbr);
	if (!err)
		err = carve(r, wq.bytes, wq.align, &a.wq_offset);
	if (!err)
		err = carve(r, dbr.bytes, 64, &a.dbr_offset);
	return err ? err : dvx_qp_create(&r->nic, &a, qp);
}

void *loop_zalloc(size_t align, size_t len)
{
	void *p = NULL;

	if (posix_memalign(&p, align, len))
		return NULL;
	memset(p, 0, len);
	return p;
}

int loop_setup_fail(struct rank *r, const char *what, int err)
{
	fprintf(stderr, "%s: rank %d (%s): %s failed: %s%s%s\n", prog, r->id, r->dev, what,
		strerror(err < 0 ? -err : err), r->nic.hal.diag.msg[0] ? ": " : "",
		r->nic.hal.diag.msg);
	return err ? err : -EIO;
}

/* a deterministic pattern, different for every (seed, offset) */
void loop_fill(uint8_t *p, uint64_t len, uint64_t seed)
{
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
	uint64_t i;

	for (i = 0; i < len; i++) {
		if ((i & 7) == 0) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
		p[i] = (uint8_t)(x >> ((i & 7) * 8));
	}
}

void loop_rfail(struct row *w, const char *fmt, ...)
{
	va_list ap;

	if (w->result == RES_FAIL)
		return;
	w->result = RES_FAIL;
	va_start(ap, fmt);
	vsnprintf(w->why, sizeof(w->why), fmt, ap);
	va_end(ap);
}

int loop_fetched_ok(struct row *w, const struct rank *r, const uint64_t *res, uint64_t want,
		    uint32_t iter)
{
	uint64_t old = loop_atomic_result(r, res);

	if (old == want)
		return 1;
	loop_rfail(w, "iteration %u: fetched 0x%016llx, expected 0x%016llx", iter,
		   (unsigned long long)old, (unsigned long long)want);
	return 0;
}

void loop_progress(const struct loop *L, struct rank *r)
{
	if (!L->thread)
		dvx_hal_nic_progress(&r->nic.hal);	/* sim step, or a CPU pause */
}

/*
 * Wait for the next CQE of @cq (bounded by the timeout). Return: 0 with @info for a
 * good completion, -ETIMEDOUT, or the error CQE's errno (@info filled).
 */
int loop_wait_cqe(const struct loop *L, struct rank *r, struct dvx_cq *cq,
		  struct dvx_mlx5_cqe_info *info)
{
	uint64_t deadline = 0;
	uint32_t spins = 0;
	int rc;

	for (;;) {
		rc = dvx_mlx5_cq_poll_one(&cq->mcq, info);
		if (rc) {
			dvx_mlx5_cq_update_ci(&cq->mcq);
			return rc > 0 ? 0 : rc;
		}
		if ((++spins & 255) == 0) {
			uint64_t t = loop_now_ns();

			if (!deadline)
				deadline = t + L->timeout_ns;
			else if (t > deadline)
				return -ETIMEDOUT;
		}
		loop_progress(L, r);
	}
}

void loop_cqe_fail(struct row *w, const char *what, uint64_t iter, int rc,
		   const struct dvx_mlx5_cqe_info *i)
{
	unsigned long long k = (unsigned long long)iter;

	if (rc == -ETIMEDOUT)
		loop_rfail(w, "iteration %llu: %s: no CQE (-ETIMEDOUT)", k, what);
	else if (i->is_error)
		loop_rfail(w, "iteration %llu: %s: error CQE %s (0x%02x), vendor syndrome 0x%02x, "
			   "WQE %s index %u, qpn 0x%x (%s)", k, what,
			   dvx_mlx5_syndrome_name(i->syndrome), i->syndrome, i->vendor_syndrome,
			   dvx_mlx5_opcode_name(i->wqe_opcode), i->wqe_counter, i->qpn,
			   strerror(-rc));
	else
		loop_rfail(w, "iteration %llu: %s: unexpected CQE opcode %s (%d)", k, what,
			   dvx_mlx5_cqe_opcode_name(i->opcode), rc);
}

/*
 * Open the NIC and create this rank's memory, MRs, CQs and data QP; with r->cap set
 * (the measured runs) the buffer also holds the perf region and the receive queue is
 * deeper.
 */
int loop_rank_open(struct loop *L, struct rank *r)
{
	struct dvx_nic_cfg na;
	struct dvx_umem_cfg ua;
	struct dvx_mr_cfg ma;
	int err;

	memset(&na, 0, sizeof(na));
	na.name = r->dev;
	na.gid_index = -1;
	err = dvx_nic_open(&r->nic, L->hal, &na);
	if (err)
		return loop_setup_fail(r, "dvx_nic_open", err);
	r->rings = loop_zalloc(4096, RING_BYTES);
	r->buf_bytes = r->cap ? PERF_OFF + 2 * r->cap + 4096 : BUF_BYTES;
	r->buf = loop_zalloc(4096, r->buf_bytes);
	r->sinkbuf = loop_zalloc(64, 64);
	if (!r->rings || !r->buf || !r->sinkbuf)
		return loop_setup_fail(r, "memory", -ENOMEM);
	memset(&ua, 0, sizeof(ua));
	ua.addr = r->rings;
	ua.len = RING_BYTES;
	ua.access = DVX_ACCESS_LOCAL_WRITE;
	ua.dmabuf_fd = -1;
	err = dvx_umem_reg(&r->nic, &ua, &r->umem);
	if (err)
		return loop_setup_fail(r, "dvx_umem_reg", err);
	memset(&ma, 0, sizeof(ma));
	ma.addr = r->buf;
	ma.len = r->buf_bytes;
	ma.access = DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_WRITE | DVX_ACCESS_REMOTE_READ;
	if (r->nic.features & DVX_NIC_FEAT_ATOMIC)
		ma.access |= DVX_ACCESS_REMOTE_ATOMIC;
	ma.dmabuf_fd = -1;
	err = dvx_mr_reg(&r->nic, &ma, &r->mr);
	if (err)
		return loop_setup_fail(r, "dvx_mr_reg", err);
	err = dvx_mr_sink(&r->nic, r->sinkbuf, -1, 0, &r->sink);
	if (err)
		return loop_setup_fail(r, "dvx_mr_sink", err);
	err = loop_make_cq(r, CQ_DEPTH, &r->scq);
	if (!err)
		err = loop_make_cq(r, CQ_DEPTH, &r->rcq);
	if (err)
		return loop_setup_fail(r, "CQ create", err);
	err = loop_make_qp(r, SQ_DEPTH, r->cap ? PERF_RQ_DEPTH : RQ_DEPTH, &r->scq, &r->rcq, NULL, 0,
		      0x1000u + (uint32_t)r->id * 0x111u, &r->qp);
	if (err)
		return loop_setup_fail(r, "QP create", err);
	return 0;
}

void loop_conn_attr(int atomics, struct dvx_qp_connect_cfg *ca)
{
	dvx_qp_connect_cfg_init(ca);
	ca->access = DVX_ACCESS_REMOTE_WRITE | DVX_ACCESS_REMOTE_READ;
	if (atomics)
		ca->access |= DVX_ACCESS_REMOTE_ATOMIC;
}

void loop_rank_close(struct rank *r)
{
	struct dvx_qp *qps[] = { &r->pqp, &r->cqp, &r->qp };
	struct dvx_cq *cqs[] = { &r->pcq, &r->ccq, &r->rcq, &r->scq };
	size_t i;

	for (i = 0; i < sizeof(qps) / sizeof(qps[0]); i++)
		if (qps[i]->live)
			dvx_qp_destroy(qps[i]);
	for (i = 0; i < sizeof(cqs) / sizeof(cqs[0]); i++)
		if (cqs[i]->live)
			dvx_cq_destroy(cqs[i]);
	if (r->sink.live)
		dvx_mr_dereg(&r->sink);
	if (r->mr.live)
		dvx_mr_dereg(&r->mr);
	if (r->umem.live)
		dvx_umem_dereg(&r->umem);
	if (r->nic.open && dvx_nic_close(&r->nic))
		fprintf(stderr, "%s: rank %d: dvx_nic_close: %s\n", prog, r->id,
			r->nic.hal.diag.msg);
	free(r->sinkbuf);
	free(r->buf);
	free(r->rings);
}

void loop_size_name(uint64_t len, char *buf, size_t n)
{
	if (len >= MiB && len % MiB == 0)
		snprintf(buf, n, "%llu MiB", (unsigned long long)(len / MiB));
	else if (len >= KiB && len % KiB == 0)
		snprintf(buf, n, "%llu KiB", (unsigned long long)(len / KiB));
	else
		snprintf(buf, n, "%llu B", (unsigned long long)len);
}

void loop_json_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	for (; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

const char *loop_backend_name(const struct loop *L)
{
	return L->sim ? "software NIC" : "mlx5";
}

void loop_print_head(const struct loop *L)
{
	if (!L->json)
		printf("%-22s %-8s %8s  %-6s %10s\n", "operation", "size", "iters", "result",
		       "us/op");
}

void loop_print_row(const struct loop *L, const struct row *w)
{
	static const char *const res[] = { "OK", "FAIL", "SKIP" };

	if (L->json)
		return;
	if (w->result == RES_SKIP || (w->result == RES_FAIL && !w->us))
		printf("%-22s %-8s %8u  %-6s %10s\n", w->op, w->size, w->iters, res[w->result],
		       "-");
	else
		printf("%-22s %-8s %8u  %-6s %10.2f\n", w->op, w->size, w->iters,
		       res[w->result], w->us);
	if (w->result != RES_OK)
		printf("    %s\n", w->why);
	fflush(stdout);
}
