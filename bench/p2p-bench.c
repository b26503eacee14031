// SPDX-License-Identifier: MIT
/*
 * bench/p2p-bench.c - latency and message rate of the P2P transport (dvx/p2p/p2p.h) between
 * two ranks (threads of this process, each with its own NIC), against the same traffic
 * posted with the raw mlx5 builders on plain dvx_qp objects in the same run.
 *
 * Transport side: dvx_p2p_init() over a thread bootstrap, 4 lanes per peer (one NIC,
 * 4 QPs), SQ depth 256, companions of depth 512. Reference side: per NIC one RC QP
 * (depth 256) with its CQ, the two connected to each other (dvx_qp_connect_pair()), and
 * on NIC 0 a core-direct companion QP connected to itself (force-loopback) for the
 * counter; posted with dvx_mlx5_sq_reserve() + builders + dvx_mlx5_sq_ring_db(), reaped
 * with dvx_mlx5_cq_poll_one(). Both sides request a CQE on every WQE and ring the
 * doorbell once per operation, so the NIC does the same work for both.
 *
 * Rows:
 *   latency, ping-pong: rank 0 posts, rank 1 waits for the signal and answers the same
 *	way, rank 0 waits for it; half the round trip. put_signal (8 B, 4 KiB, 64 KiB)
 *	and signal.
 *   latency, one-sided: put_counter then wait for the counter; put, get (8 B READ),
 *	fetch_add then wait_local (reference: the WQE's CQE on a plain QP).
 *   message rate: rank 0 posts N operations of 8 B back to back, then flushes; 1 thread,
 *	4 threads on one lane, 4 threads on 4 lanes (channels 0-3). The reference is one
 *	thread on one QP.
 * ratio = transport cost / reference cost (time per operation): 1.00 means no overhead.
 *
 *   p2p-bench [--iters N] [--quick] [--dev NAME[,NAME2]] [--procs 2] [--help]
 *
 * Default: the software NIC (hal/sim) with its progress thread. --dev runs the same
 * over hardware through the linux hal (two NICs, or one NIC used by both ranks).
 * --procs 2 (or 2 processes under mpirun / srun): the ranks as processes, each with its
 * own NIC (on the software NIC its own fabric, the two joined by the wire,
 * docs/sim-wire.md), the reference QPs connected across, the sockets or MPI bootstrap.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include <dvx/bootstrap/wire.h>
#include <dvx/hal/sim.h>
#include <dvx/mlx5/cqe.h>
#include <dvx/mlx5/sq.h>
#include <dvx/mlx5/wqe.h>
#include <dvx/p2p/setup.h>

#define PB_SEC 1000000000ull
#define PB_TMO (10 * PB_SEC)		/* every wait of the benchmark */
#define PB_SQ 256u			/* main SQ depth, both sides */
#define PB_COMP 512u			/* companion SQ depth (2 WQEs per counter) */
#define PB_LANES 4u			/* QPs per (peer, NIC) on the transport */
#define PB_THREADS 4u
#define PB_MAX_REPS 15u
#define PB_SLICE 50000ull		/* waits spin this long, then sched_yield() */

/* the registered buffer of a rank */
#define PB_SEND_OFF 0u
#define PB_RECV_OFF (64u << 10)
#define PB_SIG_OFF (128u << 10)		/* PB_SLOTS signal words */
#define PB_CTR_OFF (PB_SIG_OFF + 8u * PB_SLOTS)
#define PB_SINK_OFF (PB_CTR_OFF + 8u * PB_SLOTS)
#define PB_SLOTS 64u
#define PB_BUF (PB_SINK_OFF + 64u)
#define PB_MAX_LEN (64u << 10)

#define CE DVX_MLX5_WQE_CTRL_CQ_UPDATE

enum pb_op { OP_PUT, OP_PUT_SIGNAL, OP_PUT_COUNTER, OP_SIGNAL, OP_GET, OP_FADD };

static const char *const pb_op_name[] = {
	[OP_PUT] = "put",
	[OP_PUT_SIGNAL] = "put_signal",
	[OP_PUT_COUNTER] = "put_counter",
	[OP_SIGNAL] = "signal",
	[OP_GET] = "get",
	[OP_FADD] = "fetch_add",
};

/* a raw QP and its CQ */
struct refq {
	struct dvx_cq cq;
	struct dvx_qp qp;
};

struct rank {
	int rank;
	pthread_t thread;
	struct dvx_nic nic;
	struct dvx_bootstrap bs;
	struct dvx_p2p t;
	void *state, *rings;
	uint8_t *buf;
	struct dvx_mr mr;
	struct dvx_p2p_lbuf l;
	struct dvx_p2p_rbuf rall[2];
	/* reference objects */
	void *ref_mem;
	uint64_t ref_len;
	struct dvx_umem ref_umem;
	struct refq ref;		/* to the other rank */
	struct refq comp;		/* rank 0: cd_master loopback companion */
	int have_comp;
	uint32_t slot;		/* next signal/counter slot (the same sequence on both ranks) */
};

/* one table row */
struct pb_row {
	const char *op;
	char size[24];
	char par[16];
	int rate;		/* 1: ops/s, else latency in ns */
	double t, ref;		/* ns per operation (both kinds) */
};

#define PB_MAX_ROWS 32

static struct {
	const struct dvx_hal *hal;
	void *fab_mem;
	struct dvx_sim_fabric *fab;
	char dev[2][64];
	int hw;
	uint64_t iters;
	uint32_t reps;		/* chunks (latency) or runs (rate) per row; median */
	void *grp_mem;
	struct dvx_bootstrap_tgroup *grp;
	struct rank r[2];
	volatile int failed;
	int procs;		/* the ranks are processes (run_procs()) */
	char fail_msg[256];
	struct pb_row rows[PB_MAX_ROWS];
	int nrows;
} B;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * PB_SEC + (uint64_t)ts.tv_nsec;
}

static int pb_fail(struct rank *r, int err, const char *what)
{
	if (!B.failed) {
		B.failed = 1;
		snprintf(B.fail_msg, sizeof(B.fail_msg), "rank %d: %s: %d (%s)", r ? r->rank : -1,
			 what, err, strerror(err < 0 ? -err : err));
		if (B.grp)
			dvx_bootstrap_tgroup_abort(B.grp, r ? r->rank : 0);
	}
	return err ? err : -EIO;
}

#define PB_TRY(r, expr)                                         \
	do {                                                    \
		int pb_err_ = (expr);                           \
		if (pb_err_)                                    \
			return pb_fail((r), pb_err_, #expr);    \
	} while (0)

static uint64_t iova(const struct rank *r, uint64_t off)
{
	return r->mr.iova + off;
}

/* ---- reference: raw builders on plain QPs ---------------------------------------- */

/* consume every CQE there is; -errno for an error CQE */
static int ref_reap(struct refq *q)
{
	struct dvx_mlx5_cqe_info info;
	int n = 0, rc;

	while ((rc = dvx_mlx5_cq_poll_one(&q->cq.mcq, &info)) != 0) {
		if (rc < 0)
			return rc;
		if (dvx_mlx5_sq_completed(&q->qp.sq, &q->qp.sqc, info.wqe_counter) < 0)
			return -EPROTO;
		n++;
	}
	if (n)
		dvx_mlx5_cq_update_ci(&q->cq.mcq);
	return 0;
}

static int ref_reserve(struct refq *q, uint32_t n, uint64_t *idx)
{
	uint64_t deadline = 0;
	int err;

	while ((err = dvx_mlx5_sq_reserve(&q->qp.sq, &q->qp.sqc, n, DVX_MLX5_SQ_SINGLE, idx)) == -ENOSPC) {
		err = ref_reap(q);
		if (err)
			return err;
		dvx_hal_nic_progress(&q->qp.nic->hal);
		if (!deadline)
			deadline = now_ns() + PB_TMO;
		else if (now_ns() > deadline)
			return -ETIMEDOUT;
	}
	return err;
}

static int ref_drain(struct refq *q)
{
	uint64_t deadline = now_ns() + PB_TMO;
	int err;

	while (q->qp.sqc.ci != q->qp.sqc.resv) {
		err = ref_reap(q);
		if (err)
			return err;
		dvx_hal_nic_progress(&q->qp.nic->hal);
		if (now_ns() > deadline)
			return -ETIMEDOUT;
	}
	return 0;
}

/* one operation from @r to the other rank, as the transport would post it */
static int ref_post(struct rank *r, enum pb_op op, uint64_t len, uint32_t slot)
{
	struct rank *p = &B.r[1 - r->rank];
	struct refq *q = &r->ref;
	uint32_t n = op == OP_PUT_SIGNAL ? 2 : 1, w = 0;
	uint64_t idx, cidx;
	int err;

	err = ref_reserve(q, n, &idx);
	if (err)
		return err;
	if (op == OP_PUT_COUNTER) {
		err = ref_reserve(&r->comp, 2, &cidx);
		if (err) {
			/* keep ring and CQ in step, as the transport does */
			dvx_mlx5_wqe_nop(&q->qp.sq.wq, idx, CE);
			dvx_mlx5_sq_ring_db(&q->qp.sq, &q->qp.sqc, q->qp.sqc.resv);
			return err;
		}
	}
	if (op == OP_GET)
		dvx_mlx5_wqe_rdma_read(&q->qp.sq.wq, idx + w++, CE, iova(p, PB_SEND_OFF), p->mr.rkey,
				       iova(r, PB_RECV_OFF), r->mr.lkey, (uint32_t)len);
	else if (op == OP_FADD)
		dvx_mlx5_wqe_atomic_fa(&q->qp.sq.wq, idx + w++, CE, iova(p, PB_SIG_OFF + 8u * slot),
				       p->mr.rkey, 1, iova(r, PB_CTR_OFF + 8u * slot), r->mr.lkey);
	else if (op != OP_SIGNAL)
		dvx_mlx5_wqe_rdma_write(&q->qp.sq.wq, idx + w++, CE, iova(p, PB_RECV_OFF), p->mr.rkey,
					iova(r, PB_SEND_OFF), r->mr.lkey, (uint32_t)len);
	if (op == OP_SIGNAL || op == OP_PUT_SIGNAL)
		dvx_mlx5_wqe_atomic_fa(&q->qp.sq.wq, idx + w++, CE, iova(p, PB_SIG_OFF + 8u * slot),
				       p->mr.rkey, 1, iova(r, PB_SINK_OFF), r->mr.lkey);
	dvx_mlx5_sq_ring_db(&q->qp.sq, &q->qp.sqc, q->qp.sqc.resv);
	if (op == OP_PUT_COUNTER) {
		uint32_t last = idx + n - 1;

		dvx_mlx5_wqe_wait_cq(&r->comp.qp.sq.wq, cidx, CE, q->cq.cqn,
				     (q->cq.index_base + last) & 0xffffffu);
		dvx_mlx5_wqe_atomic_fa(&r->comp.qp.sq.wq, cidx + 1, CE,
				       iova(r, PB_CTR_OFF + 8u * slot), r->mr.rkey, 1,
				       iova(r, PB_SINK_OFF), r->mr.lkey);
		dvx_mlx5_sq_ring_db(&r->comp.qp.sq, &r->comp.qp.sqc, r->comp.qp.sqc.resv);
	}
	return 0;
}

/* wait until the word at @off of @r's buffer is >= @v, reaping the reference CQs */
static int ref_wait_word(struct rank *r, uint64_t off, uint64_t v)
{
	const uint64_t *w = (const uint64_t *)(void *)(r->buf + off);
	uint64_t deadline = now_ns() + PB_TMO, slice = now_ns() + PB_SLICE, t;
	int err;

	while (__atomic_load_n(w, __ATOMIC_ACQUIRE) < v) {
		err = ref_reap(&r->ref);
		if (!err && r->have_comp)
			err = ref_reap(&r->comp);
		if (err)
			return err;
		t = now_ns();
		if (t > deadline)
			return -ETIMEDOUT;
		if (t > slice) {
			/* as t_wait(): a slice, then let others run */
			sched_yield();
			slice = now_ns() + PB_SLICE;
		}
		dvx_hal_nic_progress(&r->nic.hal);
	}
	return 0;
}

/* ---- transport side ------------------------------------------------------------- */

static int t_post(struct rank *r, enum pb_op op, uint32_t ch, uint64_t len, uint32_t slot,
		  struct dvx_p2p_ticket *tk)
{
	int peer = 1 - r->rank;
	const struct dvx_p2p_rbuf *d = &r->rall[peer];

	switch (op) {
	case OP_PUT:
		return dvx_p2p_put(&r->t, peer, ch,
				   &(struct dvx_p2p_xfer){ &r->l, PB_SEND_OFF, d, PB_RECV_OFF,
							   len },
				   PB_TMO, tk);
	case OP_PUT_SIGNAL:
		return dvx_p2p_put_signal(&r->t, peer, ch,
					  &(struct dvx_p2p_xfer){ &r->l, PB_SEND_OFF, d,
								  PB_RECV_OFF, len },
					  &(struct dvx_p2p_notify){ d, PB_SIG_OFF + 8u * slot, 1,
								    NULL, 0, 0 },
					  PB_TMO, tk);
	case OP_PUT_COUNTER:
		return dvx_p2p_put_counter(&r->t, peer, ch,
					   &(struct dvx_p2p_xfer){ &r->l, PB_SEND_OFF, d,
								   PB_RECV_OFF, len },
					   &(struct dvx_p2p_notify){ NULL, 0, 0, &r->l,
								     PB_CTR_OFF + 8u * slot, 0 },
					   PB_TMO, tk);
	case OP_SIGNAL:
		return dvx_p2p_signal(&r->t, peer, ch,
				      &(struct dvx_p2p_notify){ d, PB_SIG_OFF + 8u * slot, 1, NULL,
								0, 0 },
				      PB_TMO, tk);
	case OP_GET:
		return dvx_p2p_get(&r->t, peer, ch,
				   &(struct dvx_p2p_rxfer){ d, PB_SEND_OFF, &r->l, PB_RECV_OFF, len },
				   PB_TMO, tk);
	case OP_FADD:
		return dvx_p2p_fetch_add(&r->t, peer, ch,
					 &(struct dvx_p2p_amo){ d, PB_SIG_OFF + 8u * slot,
								DVX_P2P_AMO_FADD, 1, 0, &r->l,
								PB_CTR_OFF + 8u * slot },
					 PB_TMO, tk);
	}
	return -EINVAL;
}

/* ---- latency ---------------------------------------------------------------------- */

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, uint32_t n)
{
	qsort(v, n, sizeof(v[0]), cmp_dbl);
	return n & 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * The transport's wait_signal / wait_counter in slices of PB_SLICE ns with a
 * sched_yield() between them (a timed-out wait consumes nothing): on a machine with
 * fewer cores than spinning threads the peer gets to run. The reference waits the same.
 */

static int t_wait(struct rank *r, int ctr, uint64_t off, uint64_t v)
{
	uint64_t deadline = now_ns() + PB_TMO;
	int err;

	for (;;) {
		if (ctr)
			err = dvx_p2p_wait_counter(&r->t, 1 - r->rank, 0,
						   &(struct dvx_p2p_notify){ .ctr = &r->l,
									     .ctroff = off },
						   DVX_CMP_GE, v, PB_SLICE, NULL);
		else
			err = dvx_p2p_wait_signal(&r->t, &r->l, off, DVX_CMP_GE, v, PB_SLICE, NULL);
		if (err != -ETIMEDOUT || now_ns() > deadline)
			return err;
		sched_yield();
	}
}

/*
 * Ping-pong of @op (put_signal or signal) of @len bytes: n/10 + 1 warm-up round trips,
 * then B.reps chunks of @n; both ranks call it. Rank 0 gets the median over the chunks
 * of the half round trip.
 */
static int lat_pingpong(struct rank *r, int ref, enum pb_op op, uint64_t len, uint64_t n,
			double *half_ns)
{
	uint32_t slot = r->slot++, c = 0;
	uint64_t off = PB_SIG_OFF + 8u * slot, warm = n / 10 + 1, i, t0 = 0;
	double v[PB_MAX_REPS];

	PB_TRY(r, dvx_bootstrap_barrier(&r->bs, PB_TMO));
	for (i = 0; i < warm + n * B.reps; i++) {
		if (i >= warm && (i - warm) % n == 0) {
			uint64_t t = now_ns();

			if (i > warm)
				v[c++] = (double)(t - t0) / (double)n / 2.0;
			t0 = t;
		}
		if (r->rank == 0) {
			if (ref) {
				PB_TRY(r, ref_post(r, op, len, slot));
				PB_TRY(r, ref_wait_word(r, off, i + 1));
			} else {
				PB_TRY(r, t_post(r, op, 0, len, slot, NULL));
				PB_TRY(r, t_wait(r, 0, off, i + 1));
			}
		} else {
			if (ref) {
				PB_TRY(r, ref_wait_word(r, off, i + 1));
				PB_TRY(r, ref_post(r, op, len, slot));
			} else {
				PB_TRY(r, t_wait(r, 0, off, i + 1));
				PB_TRY(r, t_post(r, op, 0, len, slot, NULL));
			}
		}
	}
	v[c++] = (double)(now_ns() - t0) / (double)n / 2.0;
	*half_ns = median(v, c);
	if (ref)
		PB_TRY(r, ref_drain(&r->ref));
	else
		PB_TRY(r, dvx_p2p_flush(&r->t, 0, PB_TMO, NULL));
	return dvx_bootstrap_barrier(&r->bs, PB_TMO);
}

/* rank 0 alone: post one @op and wait for its local outcome; chunks as above */
static int lat_local(struct rank *r, int ref, enum pb_op op, uint64_t n, double *ns)
{
	uint32_t slot = r->slot++, c = 0;
	uint64_t off = PB_CTR_OFF + 8u * slot, warm = n / 10 + 1, i, t0 = 0;
	double v[PB_MAX_REPS];

	PB_TRY(r, dvx_bootstrap_barrier(&r->bs, PB_TMO));
	if (r->rank != 0)
		return dvx_bootstrap_barrier(&r->bs, PB_TMO);
	for (i = 0; i < warm + n * B.reps; i++) {
		struct dvx_p2p_ticket tk;

		if (i >= warm && (i - warm) % n == 0) {
			uint64_t t = now_ns();

			if (i > warm)
				v[c++] = (double)(t - t0) / (double)n;
			t0 = t;
		}
		if (ref) {
			PB_TRY(r, ref_post(r, op, 8, slot));
			if (op == OP_PUT_COUNTER) {
				PB_TRY(r, ref_wait_word(r, off, i + 1));
			} else {
				uint32_t want = r->ref.qp.sqc.resv;
				uint64_t deadline = now_ns() + PB_TMO;

				while ((int32_t)(want - r->ref.qp.sqc.ci) > 0) {
					PB_TRY(r, ref_reap(&r->ref));
					if (now_ns() > deadline)
						return pb_fail(r, -ETIMEDOUT, "reference wait_local");
					dvx_hal_nic_progress(&r->nic.hal);
				}
			}
		} else {
			PB_TRY(r, t_post(r, op, 0, 8, slot, &tk));
			if (op == OP_PUT_COUNTER)
				PB_TRY(r, t_wait(r, 1, off, i + 1));
			else
				PB_TRY(r, dvx_p2p_wait_local(&r->t, &tk, PB_TMO, NULL));
		}
	}
	v[c++] = (double)(now_ns() - t0) / (double)n;
	*ns = median(v, c);
	if (ref) {
		PB_TRY(r, ref_drain(&r->ref));
		if (r->have_comp)
			PB_TRY(r, ref_drain(&r->comp));
	} else {
		PB_TRY(r, dvx_p2p_flush(&r->t, 0, PB_TMO, NULL));
	}
	return dvx_bootstrap_barrier(&r->bs, PB_TMO);
}

/* ---- message rate ----------------------------------------------------------------- */

struct rate_thr {
	struct rank *r;
	enum pb_op op;
	uint32_t ch;
	uint32_t slot;
	uint64_t n;
	pthread_barrier_t *go;
	int err;
};

static void *rate_thread(void *arg)
{
	struct rate_thr *a = arg;
	uint64_t i;

	pthread_barrier_wait(a->go);
	for (i = 0; i < a->n && !a->err; i++)
		a->err = t_post(a->r, a->op, a->ch, 8, a->slot, NULL);
	return NULL;
}

/*
 * Rank 0 posts @n operations of 8 B and flushes; the reference does it on one thread
 * and one QP; the transport with @nthr threads on @nlanes channels. ns per operation.
 * Rank 1 then checks that every signal arrived (@total on the slot so far); rank 0
 * checks its counter.
 */
static int rate_once(struct rank *r, int ref, enum pb_op op, uint32_t nthr, uint32_t nlanes,
		     uint64_t n, uint32_t slot, uint64_t total, double *ns)
{
	uint32_t k;
	uint64_t t0, got;

	PB_TRY(r, dvx_bootstrap_barrier(&r->bs, PB_TMO));
	if (r->rank == 0) {
		t0 = now_ns();
		if (ref) {
			uint64_t i;

			for (i = 0; i < n; i++)
				PB_TRY(r, ref_post(r, op, 8, slot));
			PB_TRY(r, ref_drain(&r->ref));
			if (op == OP_PUT_COUNTER)
				PB_TRY(r, ref_drain(&r->comp));
		} else {
			struct rate_thr a[PB_THREADS];
			pthread_t th[PB_THREADS];
			pthread_barrier_t go;
			int err = 0;

			if (nthr == 1) {
				uint64_t i;

				for (i = 0; i < n; i++)
					PB_TRY(r, t_post(r, op, 0, 8, slot, NULL));
			} else {
				pthread_barrier_init(&go, NULL, nthr + 1);
				for (k = 0; k < nthr; k++) {
					a[k] = (struct rate_thr){ r, op, k % nlanes, slot,
								  n / nthr + (k < n % nthr), &go, 0 };
					if (pthread_create(&th[k], NULL, rate_thread, &a[k]))
						return pb_fail(r, -EAGAIN, "pthread_create");
				}
				t0 = now_ns();
				pthread_barrier_wait(&go);
				for (k = 0; k < nthr; k++) {
					pthread_join(th[k], NULL);
					if (a[k].err && !err)
						err = a[k].err;
				}
				pthread_barrier_destroy(&go);
				if (err)
					return pb_fail(r, err, "transport post (rate thread)");
			}
			for (k = 0; k < nlanes; k++)
				PB_TRY(r, dvx_p2p_flush(&r->t, k, PB_TMO, NULL));
		}
		*ns = (double)(now_ns() - t0) / (double)n;
		got = __atomic_load_n((uint64_t *)(void *)(r->buf + PB_CTR_OFF + 8u * slot),
				      __ATOMIC_ACQUIRE);
		if (op == OP_PUT_COUNTER && got != total)
			return pb_fail(r, -EIO, "counter after flush != operations posted");
	}
	PB_TRY(r, dvx_bootstrap_barrier(&r->bs, PB_TMO));
	if (r->rank == 1 && (op == OP_SIGNAL || op == OP_PUT_SIGNAL)) {
		got = __atomic_load_n((uint64_t *)(void *)(r->buf + PB_SIG_OFF + 8u * slot),
				      __ATOMIC_ACQUIRE);
		if (got != total)
			return pb_fail(r, -EIO, "signal after flush != operations posted");
	}
	return 0;
}

/* B.reps runs of rate_once() on one slot; rank 0 gets the median ns per operation */
static int rate_run(struct rank *r, int ref, enum pb_op op, uint32_t nthr, uint32_t nlanes,
		    uint64_t n, double *ns)
{
	uint32_t slot = r->slot++, k;
	double v[PB_MAX_REPS];

	for (k = 0; k < B.reps; k++) {
		v[k] = 0;
		PB_TRY(r, rate_once(r, ref, op, nthr, nlanes, n, slot, n * (k + 1), &v[k]));
	}
	*ns = median(v, B.reps);
	return 0;
}

/* ---- the sequence both ranks run ------------------------------------------------- */

static struct pb_row *row_add(const char *op, uint64_t size, const char *par, int rate)
{
	struct pb_row *w = &B.rows[B.nrows++];

	w->op = op;
	if (size >= 1024)
		snprintf(w->size, sizeof(w->size), "%llu KiB", (unsigned long long)(size >> 10));
	else if (size)
		snprintf(w->size, sizeof(w->size), "%llu B", (unsigned long long)size);
	else
		snprintf(w->size, sizeof(w->size), "-");
	snprintf(w->par, sizeof(w->par), "%s", par);
	w->rate = rate;
	return w;
}

static int bench_body(struct rank *r)
{
	static const uint64_t pp_sizes[] = { 8, 4096, 64u << 10 };
	static const struct {
		uint32_t thr, lanes;
		const char *name;
	} par[] = { { 1, 1, "1/1" }, { PB_THREADS, 1, "4/1" }, { PB_THREADS, PB_LANES, "4/4" } };
	static const enum pb_op rate_ops[] = { OP_PUT, OP_PUT_SIGNAL, OP_PUT_COUNTER, OP_SIGNAL,
					       OP_GET, OP_FADD };
	uint64_t n = B.iters, nrate = 10 * B.iters;
	struct pb_row *w = NULL;
	double t, ref;
	size_t i, j;

	/* latency: ping-pong */
	for (i = 0; i < 3; i++) {
		PB_TRY(r, lat_pingpong(r, 0, OP_PUT_SIGNAL, pp_sizes[i], n, &t));
		PB_TRY(r, lat_pingpong(r, 1, OP_PUT_SIGNAL, pp_sizes[i], n, &ref));
		if (r->rank == 0) {
			w = row_add("put_signal ping-pong", pp_sizes[i], "1/1", 0);
			w->t = t;
			w->ref = ref;
		}
	}
	PB_TRY(r, lat_pingpong(r, 0, OP_SIGNAL, 0, n, &t));
	PB_TRY(r, lat_pingpong(r, 1, OP_SIGNAL, 0, n, &ref));
	if (r->rank == 0) {
		w = row_add("signal ping-pong", 8, "1/1", 0);
		w->t = t;
		w->ref = ref;
	}
	/* latency: post and wait locally */
	PB_TRY(r, lat_local(r, 0, OP_PUT_COUNTER, n, &t));
	ref = 0;
	if (B.r[0].have_comp)
		PB_TRY(r, lat_local(r, 1, OP_PUT_COUNTER, n, &ref));
	if (r->rank == 0) {
		w = row_add("put_counter + wait_counter", 8, "1/1", 0);
		w->t = t;
		w->ref = ref;
	}
	PB_TRY(r, lat_local(r, 0, OP_PUT, n, &t));
	PB_TRY(r, lat_local(r, 1, OP_PUT, n, &ref));
	if (r->rank == 0) {
		w = row_add("put + wait_local", 8, "1/1", 0);
		w->t = t;
		w->ref = ref;
	}
	PB_TRY(r, lat_local(r, 0, OP_GET, n, &t));
	PB_TRY(r, lat_local(r, 1, OP_GET, n, &ref));
	if (r->rank == 0) {
		w = row_add("get + wait_local", 8, "1/1", 0);
		w->t = t;
		w->ref = ref;
	}
	PB_TRY(r, lat_local(r, 0, OP_FADD, n, &t));
	PB_TRY(r, lat_local(r, 1, OP_FADD, n, &ref));
	if (r->rank == 0) {
		w = row_add("fetch_add + wait_local", 8, "1/1", 0);
		w->t = t;
		w->ref = ref;
	}
	/* message rate */
	for (i = 0; i < sizeof(rate_ops) / sizeof(rate_ops[0]); i++) {
		enum pb_op op = rate_ops[i];

		ref = 0;
		if (op != OP_PUT_COUNTER || B.r[0].have_comp)
			PB_TRY(r, rate_run(r, 1, op, 1, 1, nrate, &ref));
		for (j = 0; j < sizeof(par) / sizeof(par[0]); j++) {
			PB_TRY(r, rate_run(r, 0, op, par[j].thr, par[j].lanes, nrate, &t));
			if (r->rank == 0) {
				w = row_add(pb_op_name[op], 8, par[j].name, 1);
				w->t = t;
				w->ref = ref;
			}
		}
	}
	return 0;
}

/* ---- set-up ----------------------------------------------------------------------- */

static void *zalloc(size_t align, size_t len)
{
	void *p = NULL;

	if (posix_memalign(&p, align, len ? len : align))
		return NULL;
	memset(p, 0, len);
	return p;
}

static int ref_make(struct rank *r, struct refq *q, uint32_t depth, uint32_t flags,
		    struct dvx_uar *uar, uint64_t *cur)
{
	struct dvx_cq_cfg ca;
	struct dvx_qp_cfg qa;
	struct dvx_mem_req ring, dbr;
	int err;

	memset(&ca, 0, sizeof(ca));
	ca.depth = depth;
	err = dvx_cq_mem_req(&ca, &ring, &dbr);
	if (err)
		return err;
	ca.ring_umem = ca.dbr_umem = &r->ref_umem;
	ca.ring_offset = (*cur + ring.align - 1) & ~(ring.align - 1);
	ca.dbr_offset = ca.ring_offset + ring.bytes;
	*cur = ca.dbr_offset + 64;
	err = dvx_cq_create(&r->nic, &ca, &q->cq);
	if (err)
		return err;
	memset(&qa, 0, sizeof(qa));
	qa.sq_depth = depth;
	qa.send_cq = &q->cq;
	qa.uar = uar;
	qa.flags = flags;
	qa.psn = 0x1000u + (uint32_t)r->rank;
	err = dvx_qp_mem_req(&qa, &ring, &dbr);
	if (err)
		return err;
	qa.wq_umem = qa.dbr_umem = &r->ref_umem;
	qa.wq_offset = (*cur + ring.align - 1) & ~(ring.align - 1);
	qa.dbr_offset = qa.wq_offset + ring.bytes;
	*cur = qa.dbr_offset + 64;
	if (*cur > r->ref_len)
		return -ENOSPC;
	return dvx_qp_create(&r->nic, &qa, &q->qp);
}

/* the reference QPs' connection attributes */
static void ref_conn_attr(struct dvx_qp_connect_cfg *ca)
{
	dvx_qp_connect_cfg_init(ca);
	ca->access |= DVX_ACCESS_REMOTE_WRITE | DVX_ACCESS_REMOTE_READ | DVX_ACCESS_REMOTE_ATOMIC;
}

/* rank @i: open its NIC, register its buffers, build its reference QP (and rank 0's
 * companion); 2 when the NIC cannot be opened */
static int setup_rank(int i)
{
	struct rank *r = &B.r[i];
	struct dvx_qp_connect_cfg ca;
	struct dvx_nic_cfg na;
	struct dvx_umem_cfg ua;
	struct dvx_mr_cfg ma;
	uint64_t cur = 0;
	int err;

	r->rank = i;
	memset(&na, 0, sizeof(na));
	na.name = B.dev[i];
	na.gid_index = -1;
	err = dvx_nic_open(&r->nic, B.hal, &na);
	if (err) {
		fprintf(stderr, "p2p-bench: cannot open NIC \"%s\" through the %s hal: %s%s%s "
			"(%d)\n", B.dev[i], B.hal->name, r->nic.hal.diag.op,
			r->nic.hal.diag.msg[0] ? ": " : "", r->nic.hal.diag.msg, err);
		return 2;
	}
	ref_conn_attr(&ca);
	r->buf = zalloc(4096, PB_BUF);
	r->ref_len = 256u << 10;
	r->ref_mem = zalloc(4096, r->ref_len);
	if (!r->buf || !r->ref_mem)
		return pb_fail(r, -ENOMEM, "out of memory");
	memset(&ma, 0, sizeof(ma));
	ma.addr = r->buf;
	ma.len = PB_BUF;
	ma.access = DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_WRITE |
		    DVX_ACCESS_REMOTE_READ | DVX_ACCESS_REMOTE_ATOMIC;
	ma.dmabuf_fd = -1;
	PB_TRY(r, dvx_mr_reg(&r->nic, &ma, &r->mr));
	memset(&ua, 0, sizeof(ua));
	ua.addr = r->ref_mem;
	ua.len = r->ref_len;
	ua.access = DVX_ACCESS_LOCAL_WRITE;
	ua.dmabuf_fd = -1;
	PB_TRY(r, dvx_umem_reg(&r->nic, &ua, &r->ref_umem));
	PB_TRY(r, ref_make(r, &r->ref, PB_SQ, 0, NULL, &cur));
	if (i == 0 && (r->nic.features & DVX_NIC_FEAT_CD) &&
	    (r->nic.features & DVX_NIC_FEAT_LOOPBACK)) {
		PB_TRY(r, ref_make(r, &r->comp, PB_COMP, DVX_QP_F_CD_MASTER, r->ref.qp.uar, &cur));
		PB_TRY(r, dvx_qp_connect_loopback(&r->comp.qp, &ca));
		r->have_comp = 1;
	}
	return 0;
}

/* both ranks in this process: open them, connect the reference QPs */
static int setup_nics(void)
{
	struct dvx_qp_connect_cfg ca;
	int i, err;

	for (i = 0; i < 2; i++) {
		err = setup_rank(i);
		if (err == 2 && i)
			dvx_nic_close(&B.r[0].nic);
		if (err)
			return err;
	}
	ref_conn_attr(&ca);
	PB_TRY(&B.r[0], dvx_qp_connect_pair(&B.r[0].ref.qp, &B.r[1].ref.qp, &ca));
	return 0;
}

static void teardown_nics(void)
{
	int i;

	for (i = 1; i >= 0; i--) {
		struct rank *r = &B.r[i];

		if (r->comp.qp.live)
			dvx_qp_destroy(&r->comp.qp);
		if (r->ref.qp.live)
			dvx_qp_destroy(&r->ref.qp);
		if (r->comp.cq.live)
			dvx_cq_destroy(&r->comp.cq);
		if (r->ref.cq.live)
			dvx_cq_destroy(&r->ref.cq);
		if (r->ref_umem.live)
			dvx_umem_dereg(&r->ref_umem);
		if (r->mr.live)
			dvx_mr_dereg(&r->mr);
		dvx_nic_close(&r->nic);
		free(r->ref_mem);
		free(r->buf);
	}
}

/* one rank whose bootstrap is up: the transport, the benchmark, the closing flush */
static void rank_run(struct rank *r)
{
	struct dvx_p2p_cfg pc;
	struct dvx_mem_req sreq, rreq;
	struct dvx_mr *mrs[1] = { &r->mr };
	int err;

	memset(&pc, 0, sizeof(pc));
	pc.rank = r->rank;
	pc.nranks = 2;
	pc.nnics = 1;
	pc.nics[0] = &r->nic;
	pc.qps_per_nic = PB_LANES;
	pc.sq_depth = PB_SQ;
	pc.comp_depth = PB_COMP;
	pc.flags = DVX_P2P_F_READ;	/* the get rows */
	pc.bs = &r->bs;
	pc.timeout_ns = 30 * PB_SEC;
	err = dvx_p2p_mem_req(&pc, &sreq, &rreq);
	if (err) {
		pb_fail(r, err, "dvx_p2p_mem_req");
		return;
	}
	r->state = zalloc(64, sreq.bytes);
	r->rings = zalloc(4096, rreq.bytes);
	if (!r->state || !r->rings) {
		pb_fail(r, -ENOMEM, "out of memory");
		goto mem;
	}
	err = dvx_p2p_init(&r->t, &pc, r->state, sreq.bytes, r->rings, rreq.bytes);
	if (err) {
		pb_fail(r, err, "dvx_p2p_init");
		goto mem;
	}
	err = dvx_p2p_lbuf_init(&r->l, r->buf, PB_BUF, mrs, 1);
	if (!err)
		err = dvx_p2p_exchange(&r->t, &r->bs, &r->l, r->rall, pc.timeout_ns);
	if (err)
		pb_fail(r, err, "buffer description/exchange");
	else if (bench_body(r) == 0) {
		uint32_t ch;

		/* nobody tears down while its peer still posts */
		for (ch = 0; ch < r->t.nlanes && !err; ch++)
			err = dvx_p2p_flush(&r->t, ch, PB_TMO, NULL);
		if (!err)
			err = dvx_bootstrap_barrier(&r->bs, 30 * PB_SEC);
		if (err)
			pb_fail(r, err, "closing flush/barrier");
	}
	dvx_p2p_fini(&r->t);
mem:
	free(r->rings);
	free(r->state);
}

static void *rank_thread(void *arg)
{
	struct rank *r = arg;
	int err = dvx_bootstrap_thread_init(&r->bs, B.grp, r->rank);

	if (err) {
		pb_fail(r, err, "dvx_bootstrap_thread_init");
		return NULL;
	}
	rank_run(r);
	dvx_bootstrap_fini(&r->bs);
	return NULL;
}

/* ---- the ranks as processes (--procs, or under an MPI launcher) -------------------- */

static void print_table(void);

/* what a rank tells the other */
struct pinfo {
	struct dvx_qp_conn ref;
	uint64_t iova;		/* its buffer, as the reference side addresses it */
	uint32_t rkey;
	uint32_t have_comp;
};

/*
 * The software NIC's strict doorbell model refuses a wrong doorbell and starts nothing
 * (docs/sim.md), so a run would show only a timeout: say what was refused, and fail.
 */
static void pb_db_check(struct rank *r)
{
	struct dvx_sim_db_fault f;
	int n;

	if (!B.fab || (n = dvx_sim_db_faults(B.fab, &f)) <= 0)
		return;
	fprintf(stderr, "p2p-bench: the software NIC refused %d doorbell(s); the first: kind %u, "
		"qpn 0x%x, index %u, record %u, last %u\n", n, f.kind, f.qpn, f.index, f.record,
		f.last);
	pb_fail(r, -EPROTO, "doorbells refused by the software NIC");
}

/* one rank in this process, its bootstrap up: its fabric and the wire (software NIC),
 * its objects, the reference QP connected across, the benchmark */
static int proc_rank(int me, struct dvx_bootstrap *bs)
{
	struct rank *r = &B.r[me];
	struct dvx_qp_connect_cfg ca;
	struct pinfo mine, all[2];
	void *wire_mem = NULL;
	int err, rc = 0;

	if (!B.hw) {
		struct dvx_sim_fabric_cfg fc;
		struct dvx_sim_nic_cfg nc;
		struct dvx_bootstrap_wire_cfg wa;
		size_t len;

		dvx_sim_fabric_cfg_default(&fc);
		fc.max_nics = 1;
		fc.max_qps = 2 * PB_LANES * 3 + 8;
		fc.max_cqs = fc.max_qps;
		fc.max_umems = 16;
		len = dvx_sim_fabric_mem_size(&fc);
		B.fab_mem = malloc(len);
		if (!B.fab_mem || dvx_sim_fabric_init(B.fab_mem, len, &fc, &B.fab))
			return pb_fail(r, -ENOMEM, "fabric");
		dvx_sim_nic_cfg_default(&nc, (unsigned)me);
		if (dvx_sim_add_nic(B.fab, &nc) < 0)
			return pb_fail(r, -EINVAL, "dvx_sim_add_nic");
		snprintf(B.dev[me], sizeof(B.dev[me]), "sim_%d", me);
		snprintf(B.dev[1 - me], sizeof(B.dev[1 - me]), "sim_%d", 1 - me);
		memset(&wa, 0, sizeof(wa));
		wa.fab = B.fab;
		wa.max_msg = PB_MAX_LEN;
		len = dvx_bootstrap_wire_mem_size(2, PB_MAX_LEN);
		wire_mem = malloc(len);
		err = wire_mem ? dvx_bootstrap_wire_join(bs, &wa, wire_mem, len, 60 * PB_SEC) :
				 -ENOMEM;
		if (!err)
			err = dvx_sim_start(B.fab);
		if (err)
			return pb_fail(r, err, "the wire");
		B.hal = dvx_sim_hal(B.fab);
	}
	err = setup_rank(me);
	if (err == 2)
		return 2;
	if (err)
		goto out;
	memset(&mine, 0, sizeof(mine));
	err = dvx_qp_export(&r->ref.qp, &mine.ref);
	mine.have_comp = (uint32_t)r->have_comp;
	mine.iova = r->mr.iova;
	mine.rkey = r->mr.rkey;
	if (!err)
		err = dvx_bootstrap_allgather(bs, &mine, all, sizeof(mine), 60 * PB_SEC);
	ref_conn_attr(&ca);
	if (!err)
		err = dvx_qp_connect(&r->ref.qp, &all[1 - me].ref, &ca);
	if (!err)
		err = dvx_bootstrap_barrier(bs, 60 * PB_SEC);
	if (err) {
		pb_fail(r, err, "reference QP exchange");
		goto out;
	}
	B.r[0].have_comp = (int)all[0].have_comp;	/* the other's, for the rows */
	/* the reference side names the other rank's buffer by these two (ref_post()) */
	B.r[1 - me].mr.iova = all[1 - me].iova;
	B.r[1 - me].mr.rkey = all[1 - me].rkey;
	/* the transport's own context: a duplicate, in the same order on both ranks */
	err = dvx_bootstrap_dup(bs, &r->bs);
	if (err) {
		pb_fail(r, err, "dvx_bootstrap_dup");
		goto out;
	}
	rank_run(r);
	dvx_bootstrap_fini(&r->bs);
	rc = B.failed;
out:
	if (B.fab)
		dvx_sim_stop(B.fab);
	pb_db_check(r);
	rc = rc ? rc : B.failed;
	teardown_nics();
	if (B.fab)
		dvx_sim_fini(B.fab);
	free(B.fab_mem);
	free(wire_mem);
	return rc;
}

/* --procs: rank 1 in a fork, rank 0 here, the sockets bootstrap; or, under an MPI
 * launcher (@mpi), this process is the job's rank */
static int run_procs(int mpi)
{
	static uint64_t mpi_mem[DVX_BOOTSTRAP_MPI_MEM_SIZE(2) / 8 + 1];
	struct dvx_bootstrap bs;
	char dir[64], addr[96];
	void *bs_mem = NULL;
	pid_t pid = -1;
	int me, st, err, rc;

	B.procs = 1;
	if (mpi) {
		struct dvx_bootstrap_mpi_cfg ma = { .flags = DVX_BOOTSTRAP_MPI_F_INIT };

		err = dvx_bootstrap_mpi_init(&bs, &ma, mpi_mem, sizeof(mpi_mem));
		if (!err && dvx_bootstrap_nranks(&bs) != 2) {
			fprintf(stderr, "p2p-bench: under a launcher it takes 2 processes\n");
			dvx_bootstrap_fini(&bs);
			return 2;
		}
		me = err ? 0 : dvx_bootstrap_rank(&bs);
	} else {
		struct dvx_bootstrap_sock_cfg ba;
		size_t len = dvx_bootstrap_sock_mem_size(2, 64, 4096);

		snprintf(dir, sizeof(dir), "/tmp/p2p-bench-XXXXXX");
		if (!mkdtemp(dir))
			return 1;
		snprintf(addr, sizeof(addr), "unix:%s/bootstrap", dir);
		fflush(NULL);
		pid = fork();
		if (pid < 0)
			return 1;
		me = pid == 0;
		memset(&ba, 0, sizeof(ba));
		ba.addr = addr;
		ba.rank = me;
		ba.nranks = 2;
		ba.max_unexpected = 64;
		ba.slot_bytes = 4096;
		ba.timeout_ns = 60 * PB_SEC;
		bs_mem = zalloc(8, len);
		err = bs_mem ? dvx_bootstrap_sock_init(&bs, &ba, bs_mem, len) : -ENOMEM;
	}
	if (err) {
		fprintf(stderr, "p2p-bench: rank %d: the bootstrap: %d\n", me, err);
		rc = 1;
	} else {
		rc = proc_rank(me, &bs);
		dvx_bootstrap_fini(&bs);
	}
	free(bs_mem);
	if (pid == 0) {
		fflush(NULL);
		_exit(rc ? 1 : 0);
	}
	if (pid > 0) {
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
			rc = rc ? rc : 1;
		rmdir(dir);
	}
	if (rc == 2)
		return 2;
	if (rc || B.failed) {
		fprintf(stderr, "p2p-bench: failed: %s\n", B.fail_msg[0] ? B.fail_msg : "rank 1");
		return 1;
	}
	if (me == 0)
		print_table();
	return 0;
}

/* ---- output ----------------------------------------------------------------------- */

static void cpu_model(char *out, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];

	snprintf(out, len, "unknown CPU");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');

		if (!strncmp(line, "model name", 10) && c) {
			c++;
			while (*c == ' ' || *c == '\t')
				c++;
			c[strcspn(c, "\n")] = 0;
			snprintf(out, len, "%s", c);
			break;
		}
	}
	fclose(f);
}

static void fmt_val(char *out, size_t len, const struct pb_row *w, double ns)
{
	if (ns <= 0)
		snprintf(out, len, "-");
	else if (w->rate)
		snprintf(out, len, "%.3f Mop/s", 1e3 / ns);
	else
		snprintf(out, len, "%.2f us", ns / 1e3);
}

static void print_table(void)
{
	char cpu[128], when[64], a[32], b[32], c[16];
	time_t now = time(NULL);
	struct tm tmv;
	int i;

	cpu_model(cpu, sizeof(cpu));
	gmtime_r(&now, &tmv);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", &tmv);
	printf("p2p-bench: P2P transport vs raw mlx5 builders on plain QPs, 2 ranks as %s\n",
	       B.procs ? "processes" : "threads");
	printf("machine: %s, %ld CPUs online; date: %s\n", cpu, sysconf(_SC_NPROCESSORS_ONLN),
	       when);
	if (B.hw)
		printf("NIC: %s / %s through the linux hal (hardware)\n", B.dev[0], B.dev[1]);
	else
		printf("NIC: the software NIC (hal/sim, progress thread%s): regression figures, "
		       "not hardware figures\n", B.procs ? "; the ranks as 2 processes, over the "
		       "wire" : "");
	printf("latency: median of %u chunks of %llu (ping-pong: half round trip); rate: median "
	       "of %u runs of %llu ops of 8 B, then flush\n", B.reps,
	       (unsigned long long)B.iters, B.reps, (unsigned long long)(10 * B.iters));
	printf("threads/lanes: transport posting threads / lanes used; the reference is one "
	       "thread on one QP\n");
	printf("ratio = transport cost / reference cost per operation (1.00: no overhead)\n\n");
	printf("%-28s %-7s %-8s %14s %14s %6s\n", "operation", "size", "thr/lane", "transport",
	       "reference", "ratio");
	for (i = 0; i < B.nrows; i++) {
		const struct pb_row *w = &B.rows[i];

		fmt_val(a, sizeof(a), w, w->t);
		fmt_val(b, sizeof(b), w, w->ref);
		if (w->t > 0 && w->ref > 0)
			snprintf(c, sizeof(c), "%.2f", w->t / w->ref);
		else
			snprintf(c, sizeof(c), "-");
		printf("%-28s %-7s %-8s %14s %14s %6s\n", w->op, w->size, w->par, a, b, c);
	}
	if (!B.r[0].have_comp)
		printf("(no counter reference: the NIC lacks core-direct or force-loopback)\n");
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: p2p-bench [--iters N] [--quick] [--dev NAME[,NAME2]] [--procs 2] [--help]\n"
		"  latency and message rate of the P2P transport (put, put_signal, put_counter,\n"
		"  signal, get, fetch_add) between two ranks as threads, against raw posting on\n"
		"  plain QPs.\n"
		"  --procs 2   the ranks as two processes (a fork, the sockets bootstrap); on the\n"
		"              software NIC each has its own NIC and they meet over the wire. Under\n"
		"              mpirun or srun with 2 processes the same runs by itself (MPI)\n"
		"  --iters N   round trips per latency chunk (default 1000); a rate run posts 10*N\n"
		"              ops; every row is the median of 5 chunks or runs\n"
		"  --quick     N = 100 and 3 chunks or runs (a smoke run)\n"
		"  --dev NAME  hardware through the linux hal: one mlx5 device used by both ranks\n"
		"              (looped back), or NAME,NAME2 (one per rank); exits 2 without it\n"
		"  default     the software NIC (hal/sim) with its progress thread\n");
}

int main(int argc, char **argv)
{
	struct dvx_bootstrap_tgroup_cfg ga;
	size_t gsz;
	int i, rc = 0, procs = 0;

	B.iters = 1000;
	B.reps = 5;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--iters") && i + 1 < argc) {
			char *end;

			B.iters = strtoull(argv[++i], &end, 0);
			if (*end || B.iters == 0 || B.iters > 100000000ull) {
				fprintf(stderr, "p2p-bench: --iters wants 1 .. 1e8\n");
				return 2;
			}
		} else if (!strcmp(argv[i], "--quick")) {
			B.iters = 100;
			B.reps = 3;
		} else if (!strcmp(argv[i], "--dev") && i + 1 < argc) {
			const char *s = argv[++i], *comma = strchr(s, ',');

			B.hw = 1;
			if (comma) {
				snprintf(B.dev[0], sizeof(B.dev[0]), "%.*s", (int)(comma - s), s);
				snprintf(B.dev[1], sizeof(B.dev[1]), "%s", comma + 1);
			} else {
				snprintf(B.dev[0], sizeof(B.dev[0]), "%s", s);
				snprintf(B.dev[1], sizeof(B.dev[1]), "%s", s);
			}
		} else if (!strcmp(argv[i], "--procs") && i + 1 < argc) {
			if (strcmp(argv[++i], "2")) {
				fprintf(stderr, "p2p-bench: --procs wants 2\n");
				return 2;
			}
			procs = 1;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (B.hw) {
		B.hal = dvx_hal_linux();
		if (!B.hal) {
			fprintf(stderr, "p2p-bench: --dev %s: this build has no linux hal "
				"(CONFIG_DVX_RDMA=n: rdma-core was not found)\n", B.dev[0]);
			return 2;
		}
	}
	/* one rank per process: --procs 2, or started so by mpirun / srun */
	if (procs || dvx_bootstrap_mpi_launched())
		return run_procs(!procs);
	if (!B.hw) {
		struct dvx_sim_fabric_cfg fc;
		size_t fsz;

		dvx_sim_fabric_cfg_default(&fc);
		fc.max_nics = 2;
		fc.max_qps = 2 * PB_LANES * 3 + 8;
		fc.max_cqs = fc.max_qps;
		fc.max_umems = 16;
		fsz = dvx_sim_fabric_mem_size(&fc);
		B.fab_mem = malloc(fsz);
		if (!B.fab_mem || dvx_sim_fabric_init(B.fab_mem, fsz, &fc, &B.fab)) {
			fprintf(stderr, "p2p-bench: software NIC fabric set-up failed\n");
			return 1;
		}
		for (i = 0; i < 2; i++) {
			struct dvx_sim_nic_cfg nc;

			dvx_sim_nic_cfg_default(&nc, (unsigned)i);
			if (dvx_sim_add_nic(B.fab, &nc) < 0) {
				fprintf(stderr, "p2p-bench: dvx_sim_add_nic failed\n");
				return 1;
			}
			snprintf(B.dev[i], sizeof(B.dev[i]), "sim_%d", i);
		}
		B.hal = dvx_sim_hal(B.fab);
	}
	rc = setup_nics();
	if (rc == 2)
		goto fab;
	if (rc)
		goto nics;
	memset(&ga, 0, sizeof(ga));
	ga.nranks = 2;
	ga.max_unexpected = 64;
	ga.slot_bytes = 4096;
	gsz = dvx_bootstrap_tgroup_mem_size(ga.nranks, ga.max_unexpected, ga.slot_bytes);
	B.grp_mem = zalloc(64, gsz);
	if (!B.grp_mem || (rc = dvx_bootstrap_tgroup_init(&B.grp, &ga, B.grp_mem, gsz))) {
		pb_fail(NULL, rc ? rc : -ENOMEM, "bootstrap group");
		goto nics;
	}
	if (B.fab && (rc = dvx_sim_start(B.fab))) {
		pb_fail(NULL, rc, "dvx_sim_start");
		goto grp;
	}
	for (i = 0; i < 2; i++)
		if (pthread_create(&B.r[i].thread, NULL, rank_thread, &B.r[i])) {
			pb_fail(&B.r[i], -EAGAIN, "pthread_create");
			break;
		}
	while (i-- > 0)
		pthread_join(B.r[i].thread, NULL);
	if (B.fab)
		dvx_sim_stop(B.fab);
	pb_db_check(NULL);
grp:
	dvx_bootstrap_tgroup_fini(B.grp);
nics:
	teardown_nics();
fab:
	if (B.fab)
		dvx_sim_fini(B.fab);
	free(B.fab_mem);
	free(B.grp_mem);
	if (rc == 2)
		return 2;
	if (B.failed) {
		fprintf(stderr, "p2p-bench: failed: %s\n", B.fail_msg);
		return 1;
	}
	print_table();
	return 0;
}
