// SPDX-License-Identifier: MIT
/*
 * tools/loop-procs.c - dvx-loop's check table with its two ranks as processes: forked
 * (--procs 2, the sockets bootstrap over a UNIX socket) or one rank per process under an
 * MPI launcher (the MPI bootstrap). On the software NIC each process has a fabric of its
 * own with its NIC, joined by the wire (docs/sim-wire.md); with --dev each opens its
 * NIC on the linux hal.
 *
 * A process touches only its own memory. Rank 0 posts and prints the table; rank 1
 * serves: it prepares and checks its own buffer, posts its receives and reads its
 * responder CQEs when rank 0 asks, over the bootstrap (a 48-byte command, tag 1, a
 * 16-byte answer, tag 2). Rows: RDMA WRITE and READ (8 B, 4 KiB, 1 MiB), WRITE with
 * immediate, SEND/RECV into a two-buffer receive, fetch-add and compare-swap on a word
 * of rank 1; each checked byte for byte (guard byte after the message included) or value
 * for value by the process that owns the memory. The companion row is local to one
 * process: it runs in the one-process table.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "loop.h"

#include <dvx/bootstrap/bootstrap.h>
#include <dvx/bootstrap/wire.h>
#include <dvx/mlx5/decode.h>
#include <dvx/mlx5/sq.h>
#include <dvx/mlx5/rq.h>
#include <dvx/mlx5/wqe.h>
#include <dvx/hal/sim.h>

#define T_CMD 1u
#define T_ANS 2u
#define RECV2 (16u * KiB)	/* the second receive buffer, after the first */

enum { C_CLEAR = 1, C_FILL, C_CHECK, C_RECV, C_RESP, C_WORD_SET, C_WORD_GET, C_DONE };

struct pcmd {
	uint64_t op, off, len, seed, a, b;
};

struct pans {
	int64_t status;		/* 0, or what went wrong (a negative errno, or the bad byte + 1) */
	uint64_t value;
};

/* what the ranks tell each other */
struct pinfo {
	struct dvx_qp_conn conn;
	uint64_t addr;
	uint32_t rkey;
	uint32_t atomics;
};

struct procs {
	struct loop *L;
	struct dvx_bootstrap bs;
	int rank;
	struct pinfo peer;
	uint8_t *scratch;	/* rank 1: the expected bytes */
};

static uint64_t timeout(const struct procs *P)
{
	return P->L->timeout_ns;
}

/* rank 0: one command to rank 1 and its answer */
static int cmd(struct procs *P, uint64_t op, uint64_t off, uint64_t len, uint64_t seed,
	       uint64_t a, uint64_t b, struct pans *ans)
{
	struct pcmd c = { op, off, len, seed, a, b };
	int err = dvx_bootstrap_send(&P->bs, 1, T_CMD, &c, sizeof(c), timeout(P));

	if (!err)
		err = dvx_bootstrap_recv(&P->bs, 1, T_ANS, ans, sizeof(*ans), timeout(P));
	return err;
}

/* rank 1: what rank 0 asks, on this rank's own memory and queues */
static int serve(struct procs *P)
{
	struct rank *r = &P->L->r[1];
	struct dvx_mlx5_cqe_info i;
	struct dvx_mlx5_sge sgl[2];
	struct pcmd c;
	struct pans a;
	uint64_t k;
	int err;

	for (;;) {
		err = dvx_bootstrap_recv(&P->bs, 0, T_CMD, &c, sizeof(c), 600ull * 1000000000ull);
		if (err)
			return err;
		memset(&a, 0, sizeof(a));
		switch (c.op) {
		case C_CLEAR:	/* zeros, and the guard byte after the message */
			memset(r->buf + c.off, 0, c.len);
			r->buf[c.off + c.len] = GUARD;
			break;
		case C_FILL:
			loop_fill(r->buf + c.off, c.len, c.seed);
			break;
		case C_CHECK:	/* the message as rank 0 made it (from its byte @a on), and the
				 * guard intact */
			loop_fill(P->scratch, c.a + c.len, c.seed);
			for (k = 0; k < c.len && r->buf[c.off + k] == P->scratch[c.a + k]; k++)
				;
			if (k < c.len || r->buf[c.off + c.len] != GUARD)
				a.status = (int64_t)k + 1;
			break;
		case C_RECV:	/* a receive of buffers (off, len) and (a, b), or none */
			sgl[0].addr = loop_va(r->buf + c.off);
			sgl[0].length = (uint32_t)c.len;
			sgl[0].lkey = r->mr.lkey;
			sgl[1].addr = loop_va(r->buf + c.a);
			sgl[1].length = (uint32_t)c.b;
			sgl[1].lkey = r->mr.lkey;
			if (dvx_mlx5_rq_post(&r->qp.rq, c.len ? sgl : NULL, c.len ? 2 : 0) < 0)
				a.status = -ENOSPC;
			else
				dvx_mlx5_rq_ring(&r->qp.rq);
			break;
		case C_RESP:	/* the responder CQE: opcode @seed, immediate @a, @len bytes */
			err = loop_wait_cqe(P->L, r, &r->rcq, &i);
			if (err)
				a.status = err;
			else if (i.opcode != c.seed || i.byte_cnt != c.len ||
				 (c.seed != DVX_MLX5_CQE_RESP_SEND && i.imm != (uint32_t)c.a))
				a.status = -EPROTO;
			else if (dvx_mlx5_rq_completed(&r->qp.rq) < 0)
				a.status = -EPROTO;
			a.value = i.opcode;
			break;
		case C_WORD_SET:
			loop_store64((uint64_t *)(void *)(r->buf + c.off), c.a);
			break;
		case C_WORD_GET:
			a.value = loop_load64((uint64_t *)(void *)(r->buf + c.off));
			break;
		case C_DONE:
			return dvx_bootstrap_send(&P->bs, 0, T_ANS, &a, sizeof(a), timeout(P));
		default:
			a.status = -EINVAL;
		}
		err = dvx_bootstrap_send(&P->bs, 0, T_ANS, &a, sizeof(a), timeout(P));
		if (err)
			return err;
	}
}

/* rank 0: post one WQE built by @build at the reserved index, wait for its CQE */
static int post_wait(struct procs *P, struct row *w, const char *what, uint32_t k,
		     uint64_t *idx, struct dvx_mlx5_cqe_info *i)
{
	struct rank *r = &P->L->r[0];
	int rc;

	dvx_mlx5_sq_ring(&r->qp.sq, &r->qp.sqc, *idx);
	rc = loop_wait_cqe(P->L, r, &r->scq, i);
	if (rc) {
		loop_cqe_fail(w, what, k, rc, i);
		return -1;
	}
	if (i->opcode != DVX_MLX5_CQE_REQ || dvx_mlx5_sq_completed(&r->qp.sq, &r->qp.sqc,
								   i->wqe_counter) < 0) {
		loop_rfail(w, "iteration %u: %s: CQE %s, not the WQE's", k, what,
			   dvx_mlx5_cqe_opcode_name(i->opcode));
		return -1;
	}
	return 0;
}

static int reserve(struct procs *P, struct row *w, uint64_t *idx)
{
	struct rank *r = &P->L->r[0];
	int rc = dvx_mlx5_sq_reserve(&r->qp.sq, &r->qp.sqc, 1, DVX_MLX5_SQ_SINGLE, idx);

	if (rc)
		loop_rfail(w, "send queue reserve: %s", strerror(-rc));
	return rc;
}

/* a command that must succeed; a row failure otherwise */
static int need(struct procs *P, struct row *w, uint32_t k, const char *what, uint64_t op,
		uint64_t off, uint64_t len, uint64_t seed, uint64_t a, uint64_t b, uint64_t *val)
{
	struct pans ans;
	int err = cmd(P, op, off, len, seed, a, b, &ans);

	if (err || ans.status) {
		if (err)
			loop_rfail(w, "iteration %u: rank 1 (%s): %s", k, what, strerror(-err));
		else if (op == C_CHECK)
			loop_rfail(w, "iteration %u: %s at rank 1 differs at byte %lld (or its "
				   "guard byte was overwritten)", k, what, (long long)ans.status - 1);
		else
			loop_rfail(w, "iteration %u: rank 1 (%s): %s", k, what,
				   strerror((int)-ans.status));
		return -1;
	}
	if (val)
		*val = ans.value;
	return 0;
}

/* RDMA WRITE (@read 0) or READ of @len bytes between rank 0's buffer and rank 1's DST */
static void op_rw(struct procs *P, struct row *w, uint32_t len, int read)
{
	struct rank *a = &P->L->r[0];
	struct dvx_mlx5_cqe_info i;
	uint64_t spent = 0, t0, idx, seed;
	uint32_t k;

	for (k = 0; k < P->L->iters && w->result != RES_FAIL; k++) {
		seed = (read ? 0x200000ull : 0x100000ull) + (uint64_t)len * 7 + k;
		if (read) {
			if (need(P, w, k, "fill", C_FILL, OFF_DST, len, seed, 0, 0, NULL))
				break;
			memset(a->buf + OFF_RD, 0, len);
			a->buf[OFF_RD + len] = GUARD;
		} else {
			loop_fill(a->buf + OFF_SRC, len, seed);
			if (need(P, w, k, "clear", C_CLEAR, OFF_DST, len, 0, 0, 0, NULL))
				break;
		}
		t0 = loop_now_ns();
		if (reserve(P, w, &idx))
			break;
		if (read)
			dvx_mlx5_wqe_rdma_read(&a->qp.sq.wq, idx, DVX_MLX5_WQE_CTRL_CQ_UPDATE,
					       P->peer.addr + OFF_DST, P->peer.rkey,
					       loop_va(a->buf + OFF_RD), a->mr.lkey, len);
		else
			dvx_mlx5_wqe_rdma_write(&a->qp.sq.wq, idx, DVX_MLX5_WQE_CTRL_CQ_UPDATE,
						P->peer.addr + OFF_DST, P->peer.rkey,
						loop_va(a->buf + OFF_SRC), a->mr.lkey, len);
		if (post_wait(P, w, read ? "READ" : "WRITE", k, &idx, &i))
			break;
		spent += loop_now_ns() - t0;
		if (read) {
			uint64_t j;

			loop_fill(a->buf + OFF_SRC, len, seed);	/* what rank 1 holds */
			for (j = 0; j < len && a->buf[OFF_RD + j] == a->buf[OFF_SRC + j]; j++)
				;
			if (j < len || a->buf[OFF_RD + len] != GUARD || i.byte_cnt != len) {
				loop_rfail(w, "iteration %u: read-back buffer differs at byte %llu "
					   "(byte count %u)", k, (unsigned long long)j, i.byte_cnt);
				break;
			}
		} else if (need(P, w, k, "remote buffer", C_CHECK, OFF_DST, len, seed, 0, 0,
				NULL)) {
			break;
		}
	}
	w->us = k ? (double)spent / 1000.0 / k : 0;
}

/* WRITE with immediate (@send 0) or SEND into rank 1's receive of two buffers: the
 * first @first bytes land in the first, the rest at the start of the second */
static void op_msg(struct procs *P, struct row *w, uint32_t len, int send)
{
	struct rank *a = &P->L->r[0];
	struct dvx_mlx5_cqe_info i;
	uint64_t spent = 0, t0, idx, seed;
	uint32_t k, imm, first = 1000, rest = len - first;
	const uint64_t b1 = OFF_RECV, b2 = OFF_RECV + RECV2;

	for (k = 0; k < P->L->iters && w->result != RES_FAIL; k++) {
		seed = (send ? 0x400000ull : 0x300000ull) + k;
		imm = 0xd1000000u | k;
		loop_fill(a->buf + OFF_SRC, len, seed);
		if (send ? need(P, w, k, "clear", C_CLEAR, b1, first, 0, 0, 0, NULL) ||
			   need(P, w, k, "clear", C_CLEAR, b2, rest, 0, 0, 0, NULL) ||
			   need(P, w, k, "receive", C_RECV, b1, first, 0, b2, rest + 4u * KiB,
				NULL) :
			   need(P, w, k, "clear", C_CLEAR, OFF_DST, len, 0, 0, 0, NULL) ||
			   need(P, w, k, "receive", C_RECV, 0, 0, 0, 0, 0, NULL))
			break;
		t0 = loop_now_ns();
		if (reserve(P, w, &idx))
			break;
		if (send)
			dvx_mlx5_wqe_send(&a->qp.sq.wq, idx, DVX_MLX5_WQE_CTRL_CQ_UPDATE,
					  loop_va(a->buf + OFF_SRC), a->mr.lkey, len);
		else
			dvx_mlx5_wqe_rdma_write_imm(&a->qp.sq.wq, idx, DVX_MLX5_WQE_CTRL_CQ_UPDATE,
						    imm,
						    &(struct dvx_mlx5_raddr){
							    P->peer.addr + OFF_DST, P->peer.rkey },
						    &(struct dvx_mlx5_sge){
							    loop_va(a->buf + OFF_SRC), len,
							    a->mr.lkey });
		if (post_wait(P, w, send ? "SEND" : "WRITE_IMM", k, &idx, &i) ||
		    need(P, w, k, "responder CQE", C_RESP, 0, len,
			 send ? DVX_MLX5_CQE_RESP_SEND : DVX_MLX5_CQE_RESP_WR_IMM, imm, 0, NULL))
			break;
		spent += loop_now_ns() - t0;
		if (send ? need(P, w, k, "receive buffer 1", C_CHECK, b1, first, seed, 0, 0, NULL) ||
			   need(P, w, k, "receive buffer 2", C_CHECK, b2, rest, seed, first, 0, NULL) :
			   need(P, w, k, "remote buffer", C_CHECK, OFF_DST, len, seed, 0, 0, NULL))
			break;
	}
	w->us = k ? (double)spent / 1000.0 / k : 0;
}

/* fetch-add 1 (@cs 0) or a compare-swap chain k -> k + 1 on rank 1's signal word */
static void op_atomic(struct procs *P, struct row *w, int cs)
{
	struct rank *a = &P->L->r[0];
	struct dvx_mlx5_cqe_info i;
	uint64_t *res = (uint64_t *)(void *)(a->buf + OFF_RES);
	const uint64_t base = 0x0102030400000000ull;
	uint64_t spent = 0, t0, idx, fin = 0;
	uint32_t k;

	if (need(P, w, 0, "word", C_WORD_SET, OFF_SIG, 0, 0, base, 0, NULL))
		return;
	for (k = 0; k < P->L->iters && w->result != RES_FAIL; k++) {
		loop_store64(res, ~0ull);
		t0 = loop_now_ns();
		if (reserve(P, w, &idx))
			break;
		if (cs)
			dvx_mlx5_wqe_atomic_cs(&a->qp.sq.wq, idx, DVX_MLX5_WQE_CTRL_CQ_UPDATE,
					       &(struct dvx_mlx5_raddr){ P->peer.addr + OFF_SIG,
									 P->peer.rkey },
					       base + k, base + k + 1, loop_va(res), a->mr.lkey);
		else
			dvx_mlx5_wqe_atomic_fa(&a->qp.sq.wq, idx, DVX_MLX5_WQE_CTRL_CQ_UPDATE,
					       P->peer.addr + OFF_SIG, P->peer.rkey, 1, loop_va(res),
					       a->mr.lkey);
		if (post_wait(P, w, cs ? "ATOMIC_CS" : "ATOMIC_FA", k, &idx, &i))
			break;
		spent += loop_now_ns() - t0;
		if (!loop_fetched_ok(w, a, res, base + k, k))
			break;
	}
	w->us = k ? (double)spent / 1000.0 / k : 0;
	if (w->result != RES_FAIL &&
	    !need(P, w, k, "word", C_WORD_GET, OFF_SIG, 0, 0, 0, 0, &fin) &&
	    fin != base + P->L->iters)
		loop_rfail(w, "final word at rank 1 0x%016llx, expected 0x%016llx",
			   (unsigned long long)fin, (unsigned long long)(base + P->L->iters));
}

static struct row *row_add(struct loop *L, const char *op, const char *size)
{
	struct row *w = &L->rows[L->nrows++];

	memset(w, 0, sizeof(*w));
	snprintf(w->op, sizeof(w->op), "%s", op);
	snprintf(w->size, sizeof(w->size), "%s", size);
	w->iters = L->iters;
	return w;
}

/* rank 0: the table */
static int table(struct procs *P)
{
	static const uint32_t sizes[] = { 8, 4 * KiB, MAX_MSG };
	struct loop *L = P->L;
	struct pans ans;
	char sz[16];
	struct row *w;
	int s, nfail = 0;

	printf("dvx-loop: %s, 2 ranks as processes (%s -> %s%s), %u iterations\n",
	       loop_backend_name(L), L->r[0].dev, L->r[1].dev,
	       L->sim ? ", over the wire" : "", L->iters);
	loop_print_head(L);
	for (s = 0; s < 3; s++) {
		loop_size_name(sizes[s], sz, sizeof(sz));
		op_rw(P, w = row_add(L, "RDMA WRITE", sz), sizes[s], 0);
		loop_print_row(L, w);
		op_rw(P, w = row_add(L, "RDMA READ", sz), sizes[s], 1);
		loop_print_row(L, w);
	}
	op_msg(P, w = row_add(L, "RDMA WRITE_IMM", "4 KiB"), 4 * KiB, 0);
	loop_print_row(L, w);
	op_msg(P, w = row_add(L, "SEND/RECV (2 SGEs)", "4 KiB"), 4 * KiB, 1);
	loop_print_row(L, w);
	w = row_add(L, "ATOMIC fetch-add", "8 B");
	if (P->peer.atomics && (L->r[0].nic.features & DVX_NIC_FEAT_ATOMIC))
		op_atomic(P, w, 0);
	else
		w->result = RES_SKIP, snprintf(w->why, sizeof(w->why), "no 8-byte atomics");
	loop_print_row(L, w);
	w = row_add(L, "ATOMIC compare-swap", "8 B");
	if (P->peer.atomics && (L->r[0].nic.features & DVX_NIC_FEAT_ATOMIC))
		op_atomic(P, w, 1);
	else
		w->result = RES_SKIP, snprintf(w->why, sizeof(w->why), "no 8-byte atomics");
	loop_print_row(L, w);
	w = row_add(L, "companion counter", "-");
	w->result = RES_SKIP;
	snprintf(w->why, sizeof(w->why), "local to one process: dvx-loop without --procs");
	loop_print_row(L, w);
	cmd(P, C_DONE, 0, 0, 0, 0, 0, &ans);
	for (s = 0; s < L->nrows; s++)
		nfail += L->rows[s].result == RES_FAIL;
	if (nfail) {
		fprintf(stderr, "%s: %d of %d rows FAILED\n", loop_prog, nfail, L->nrows);
		return DVX_EXIT_FAIL;
	}
	printf("dvx-loop: all %d rows passed\n", L->nrows);
	return 0;
}

/* one rank in this process: fabric and wire (software NIC), its rank's objects, the
 * exchange, then the table (rank 0) or the service (rank 1) */
static int rank_run(struct procs *P)
{
	struct loop *L = P->L;
	struct rank *r = &L->r[P->rank];
	struct dvx_sim_fabric_cfg fc;
	struct dvx_sim_nic_cfg nc;
	struct dvx_bootstrap_wire_cfg wa;
	struct dvx_qp_connect_cfg ca;
	struct pinfo me, all[2];
	void *wire_mem = NULL;
	size_t len;
	int err, rc = DVX_EXIT_FAIL;
	static char name[16];

	if (L->sim) {
		dvx_sim_fabric_cfg_default(&fc);
		fc.max_nics = 1;
		len = dvx_sim_fabric_mem_size(&fc);
		L->fab_mem = calloc(1, len);
		if (!L->fab_mem || dvx_sim_fabric_init(L->fab_mem, len, &fc, &L->fab))
			return DVX_EXIT_FAIL;
		dvx_sim_nic_cfg_default(&nc, (unsigned)P->rank);
		if (L->ib)
			nc.port[0].link_layer = DVX_LINK_LAYER_IB;
		if (dvx_sim_add_nic(L->fab, &nc) < 0)
			return DVX_EXIT_FAIL;
		memset(&wa, 0, sizeof(wa));
		wa.fab = L->fab;
		wa.addr = L->wire_addr;
		len = dvx_bootstrap_wire_mem_size(2, 0);
		wire_mem = malloc(len);
		err = wire_mem ? dvx_bootstrap_wire_join(&P->bs, &wa, wire_mem, len, 60ull * 1000000000ull) :
				 -ENOMEM;
		if (!err)
			err = dvx_sim_start(L->fab);
		if (err) {
			fprintf(stderr, "%s: rank %d: the wire: %s\n", loop_prog, P->rank, strerror(-err));
			goto fab;
		}
		L->hal = dvx_sim_hal(L->fab);
		snprintf(name, sizeof(name), "sim_%d", P->rank);
		r->dev = name;
		L->r[1 - P->rank].dev = P->rank ? "sim_0" : "sim_1";
	}
	err = loop_rank_open(L, r);
	if (err)
		goto close;
	memset(&me, 0, sizeof(me));
	if (dvx_qp_export(&r->qp, &me.conn))
		goto close;
	me.addr = loop_va(r->buf);
	me.rkey = r->mr.rkey;
	me.atomics = (r->nic.features & DVX_NIC_FEAT_ATOMIC) != 0;
	err = dvx_bootstrap_allgather(&P->bs, &me, all, sizeof(me), 60ull * 1000000000ull);
	if (err) {
		fprintf(stderr, "%s: rank %d: exchange: %s\n", loop_prog, P->rank, strerror(-err));
		goto close;
	}
	P->peer = all[1 - P->rank];
	loop_conn_attr(me.atomics && P->peer.atomics, &ca);
	err = dvx_qp_connect(&r->qp, &P->peer.conn, &ca);
	if (!err)
		err = dvx_bootstrap_barrier(&P->bs, 60ull * 1000000000ull);
	if (err) {
		fprintf(stderr, "%s: rank %d: connect: %s (%s)\n", loop_prog, P->rank, strerror(-err),
			r->nic.hal.diag.msg);
		goto close;
	}
	if (P->rank == 0) {
		rc = table(P);
	} else {
		P->scratch = malloc(MAX_MSG + 64);
		rc = P->scratch && !serve(P) ? 0 : DVX_EXIT_FAIL;
		free(P->scratch);
	}
	/* nobody leaves while the other may still reach its memory */
	if (dvx_bootstrap_barrier(&P->bs, 60ull * 1000000000ull))
		rc = DVX_EXIT_FAIL;
close:
	if (L->sim && L->fab)
		dvx_sim_stop(L->fab);
	loop_rank_close(r);
fab:
	if (L->sim && L->fab)
		dvx_sim_fini(L->fab);
	free(L->fab_mem);
	free(wire_mem);
	return rc;
}

int loop_procs_run(struct loop *L, int nprocs)
{
	static uint64_t mpi_mem[DVX_BOOTSTRAP_MPI_MEM_SIZE(2) / 8 + 1];
	struct procs P;
	char dir[64], addr[96];
	void *bs_mem = NULL;
	pid_t pid = -1;
	int st, rc, err;

	memset(&P, 0, sizeof(P));
	P.L = L;
	if (!nprocs) {
		/* under a launcher: this process is one rank of the job's two */
		struct dvx_bootstrap_mpi_cfg ma = { .flags = DVX_BOOTSTRAP_MPI_F_INIT };

		err = dvx_bootstrap_mpi_init(&P.bs, &ma, mpi_mem, sizeof(mpi_mem));
		if (err) {
			fprintf(stderr, "%s: the MPI bootstrap: %s%s\n", loop_prog, strerror(-err),
				err == -ENOSYS ? " (built without CONFIG_DVX_MPI: use --procs)" : "");
			return DVX_EXIT_FAIL;
		}
		if (dvx_bootstrap_nranks(&P.bs) != 2) {
			fprintf(stderr, "%s: under a launcher it takes 2 processes, not %d\n", loop_prog,
				dvx_bootstrap_nranks(&P.bs));
			dvx_bootstrap_fini(&P.bs);
			return DVX_EXIT_USAGE;
		}
		P.rank = dvx_bootstrap_rank(&P.bs);
		rc = rank_run(&P);
		dvx_bootstrap_fini(&P.bs);
		return rc;
	}
	snprintf(dir, sizeof(dir), "/tmp/dvx-loop-XXXXXX");
	if (!mkdtemp(dir)) {
		fprintf(stderr, "%s: mkdtemp: %s\n", loop_prog, strerror(errno));
		return DVX_EXIT_FAIL;
	}
	snprintf(addr, sizeof(addr), "unix:%s/bootstrap", dir);
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		rmdir(dir);
		return DVX_EXIT_FAIL;
	}
	P.rank = pid == 0 ? 1 : 0;
	{
		struct dvx_bootstrap_sock_cfg ba;
		size_t len = dvx_bootstrap_sock_mem_size(2, 8, 256);

		memset(&ba, 0, sizeof(ba));
		ba.addr = addr;
		ba.rank = P.rank;
		ba.nranks = 2;
		ba.max_unexpected = 8;
		ba.slot_bytes = 256;
		ba.timeout_ns = 60ull * 1000000000ull;
		bs_mem = aligned_alloc(8, (len + 7) & ~(size_t)7);
		err = bs_mem ? dvx_bootstrap_sock_init(&P.bs, &ba, bs_mem, len) : -ENOMEM;
	}
	if (err) {
		fprintf(stderr, "%s: rank %d: the bootstrap: %s\n", loop_prog, P.rank, strerror(-err));
		rc = DVX_EXIT_FAIL;
	} else {
		rc = rank_run(&P);
		dvx_bootstrap_fini(&P.bs);
	}
	free(bs_mem);
	if (pid == 0) {
		fflush(NULL);
		_exit(rc);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		rc = rc ? rc : DVX_EXIT_FAIL;
	rmdir(dir);
	return rc;
}
