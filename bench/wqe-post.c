// SPDX-License-Identifier: MIT
/*
 * bench/wqe-post.c - host cost of building and posting send WQEs in batches:
 * dvx (dvx/mlx5/sq.h + wqe.h) against the same WQEs built with rdma-core's public
 * mlx5dv.h setters, in one run.
 *
 * Workloads (both signaled, fm_ce_se = CQ_UPDATE):
 * Sides: dvx (one dvx_mlx5_sq_reserve per WQE), dvxb (one per batch, as a batching
 * caller uses dvx) and ref (rdma-core's idiom: a room check per WQE).
 *
 *   write  RDMA_WRITE: ctrl + raddr + one data segment (ds 3, 1 WQEBB)
 *   fa     ATOMIC_FA:  ctrl + raddr + atomic + 8-byte data segment (ds 4, 1 WQEBB)
 * Batches of 1, 8, 32 and 128 WQEs per doorbell, into one 64-byte aligned host ring
 * of WP_NWQEBB WQEBBs that both sides share. The "UAR register" is a host buffer:
 * the doorbell-record store, the barriers and the 8-byte doorbell store all execute,
 * but sfence drains into cacheable memory, not a write-combining MMIO window, so a
 * real NIC's doorbell costs more (and the same on both sides).
 *
 * After each batch the batch's last WQE is accounted complete (as if its CQE had
 * arrived), so the ring never fills.
 *
 * Modes:
 *   wqe-post [--time] [-n WQES] [-r RUNS] [-c CPU]
 *	ns per WQE: a warm-up run, then RUNS timed runs of WQES WQEs per (workload,
 *	batch, side), dvx and reference interleaved; the median is printed.
 *   wqe-post --callgrind [-n WQES] [-b BATCH]
 *	run WQES WQEs once per (workload, side, batch) for valgrind --tool=callgrind.
 *	With <valgrind/callgrind.h> each run is bracketed by client requests and dumped
 *	as "wqe-post:<workload>:<side>:<batch>" (run with --instr-atstart=no); without
 *	it, the per-(workload, side) noinline functions wp_<workload>_<side> carry the
 *	totals for callgrind_annotate --inclusive=yes, one process per batch (-b).
 *   wqe-post --check
 *	only the byte comparison below.
 * Every mode first checks that both sides write identical ring bytes (except the
 * callgrind fallback, where the check's own calls would pollute the totals).
 *
 * bench/run-wqe-post.sh runs the timing and callgrind modes and prints one table.
 */
#include <dvx/mlx5/sq.h>
#include <dvx/mlx5/wqe.h>
#include <dvx/nic/post.h>

#include <infiniband/mlx5dv.h>

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* -DWP_HAVE_CALLGRIND=0 forces the callgrind_annotate fallback */
#ifndef WP_HAVE_CALLGRIND
#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#define WP_HAVE_CALLGRIND 1
#endif
#endif
#endif
#ifndef WP_HAVE_CALLGRIND
#define WP_HAVE_CALLGRIND 0
#endif
#if WP_HAVE_CALLGRIND
#include <valgrind/callgrind.h>
#endif

#define WP_NWQEBB 1024u			/* ring size (WQEBBs) */
#define WP_QPN 0x000123u
#define WP_RKEY 0x00005678u
#define WP_LKEY 0x00001234u
#define WP_NARGS 128u			/* per-WQE argument table, indexed by WQE index */
#define WP_BF_HALF 256u			/* a 512-byte BlueFlame register: two halves */
#define WP_NOINLINE __attribute__((noinline))

/* an SQ held as a QP holds it (struct dvx_qp: the description and its counters in one
 * object), so the posting functions see both through one pointer */
struct wp_dsq {
	struct dvx_mlx5_sq sq;
	struct dvx_mlx5_sq_ctrs c;
	uint64_t *ids;		/* the dvxw side: the caller's own wr_id per slot */
};

static const uint32_t wp_batches[] = { 1, 8, 32, 128 };

/* What one WQE is built from; the same table feeds both sides. */
struct wp_arg {
	uint64_t raddr;
	uint64_t laddr;
	uint64_t add;
	uint32_t len;
	uint32_t rsvd;
};

/* ------------------------------------------------------------------------------
 * Reference: a post loop as an rdma-core mlx5dv user writes it (the structure of
 * rdma-core's own _mlx5_post_send / post_send_db), with the public setters.
 *
 * State kept like dvx's (free-running pi/ci over a power-of-two ring) so that both
 * sides do the same index arithmetic and the same bookkeeping.
 */
struct ref_sq {
	uint8_t *buf;		/* WQEBB 0 */
	uint32_t nwqebb;	/* power of two */
	uint32_t pi;		/* next free WQEBB, free-running */
	uint32_t ci;		/* first WQEBB not known complete */
	uint32_t qpn;
	__be32 *dbrec;		/* QP doorbell record: [MLX5_RCV_DBR], [MLX5_SND_DBR] */
	uint8_t *bf_reg;	/* UAR register */
	uint32_t bf_offset;	/* which BlueFlame half the next doorbell goes to */
	uint32_t bf_half;
};

/* WQEBB @idx of the ring (a 1-WQEBB WQE's segments are at +16, +32, +48). */
static inline uint8_t *ref_slot(const struct ref_sq *r, uint32_t idx)
{
	return r->buf + ((idx & (r->nwqebb - 1)) << MLX5_SEND_WQE_SHIFT);
}

/*
 * One batch's doorbell, rdma-core's sequence: WQE stores before the record (x86:
 * compiler barrier), the record, sfence, the 8-byte doorbell = the first 8 bytes of
 * the last WQE's ctrl segment, sfence, flip the BlueFlame half.
 */
static inline void ref_ring_db(struct ref_sq *r, const struct mlx5_wqe_ctrl_seg *last,
			       uint32_t nreq)
{
	uint64_t db;

	if (!nreq)
		return;
	__asm__ __volatile__("" ::: "memory");
	*(volatile __be32 *)&r->dbrec[MLX5_SND_DBR] = htobe32(r->pi & 0xffff);
	__asm__ __volatile__("sfence" ::: "memory");
	memcpy(&db, last, sizeof(db));
	*(volatile uint64_t *)(void *)(r->bf_reg + r->bf_offset) = db;
	__asm__ __volatile__("sfence" ::: "memory");
	r->bf_offset ^= r->bf_half;
}

/*
 * The completion of the WQE whose CQE carries @wqe_counter: the same checks and
 * arithmetic as dvx_mlx5_sq_completed() (extend the 16-bit counter, reject one not
 * in flight, read the WQE's size from its ctrl segment, move ci past it, return the
 * WQEBBs freed).
 */
static inline int ref_completed(struct ref_sq *r, uint16_t wqe_counter)
{
	uint32_t idx = r->pi - (uint16_t)((uint16_t)r->pi - wqe_counter);
	const struct mlx5_wqe_ctrl_seg *c;
	uint32_t end, freed;

	if (idx - r->ci >= r->pi - r->ci)
		return -EPROTO;
	c = (const struct mlx5_wqe_ctrl_seg *)(void *)ref_slot(r, idx);
	end = idx + ((be32toh(c->qpn_ds) & 0x3f) + 3) / 4;
	if (end - r->ci > r->pi - r->ci)
		return -EPROTO;
	freed = end - r->ci;
	r->ci = end;
	return (int)freed;
}

/* ------------------------------------------------------------------------------
 * The measured loops. Per WQE, each side:
 *   - checks the ring has room for one WQEBB and takes index pi (pi += 1);
 *   - picks the argument entry args[idx % WP_NARGS];
 *   - writes the whole WQE (every byte of its ds 16-byte units) into the ring.
 * Per batch: one doorbell (record store, sfence, 8-byte store, sfence, half flip)
 * and one completion (ci moves past the batch's last WQE, index pi - 1 on both
 * sides, as a CQE's wqe_counter would name it).
 *
 * dvx: dvx_mlx5_sq_reserve(), dvx_mlx5_wqe_rdma_write() / _atomic_fa() (which also
 *      validate their arguments and return the WQEBB count, checked here),
 *      dvx_mlx5_sq_ring_db(), dvx_mlx5_sq_completed().
 * ref: room check, slot address, mlx5dv_set_ctrl_seg() + dci_stream_channel_id = 0
 *      (the setter leaves bytes 9-10 alone; rdma-core's post_send zeroes bytes 8-11),
 *      raddr (and atomic) segment by field assignment with htobe64/htobe32,
 *      mlx5dv_set_data_seg(), ref_ring_db(), ref_completed().
 */

static WP_NOINLINE int wp_write_dvx(struct wp_dsq *q, const struct wp_arg *args,
				    uint32_t nwqe, uint32_t batch)
{
	struct dvx_mlx5_sq *sq = &q->sq;
	struct dvx_mlx5_sq_ctrs *c = &q->c;
	uint32_t done, i;
	uint64_t idx;

	for (done = 0; done < nwqe; done += batch) {
		for (i = 0; i < batch; i++) {
			const struct wp_arg *a;

			if (dvx_mlx5_sq_reserve(sq, c, 1, DVX_MLX5_SQ_SINGLE, &idx))
				return -1;
			a = &args[idx & (WP_NARGS - 1)];
			if (dvx_mlx5_wqe_rdma_write(&sq->wq, idx, DVX_MLX5_WQE_CTRL_CQ_UPDATE,
						    a->raddr, WP_RKEY, a->laddr, WP_LKEY,
						    a->len) < 0)
				return -1;
		}
		dvx_mlx5_sq_ring_db(sq, c, c->resv);
		if (dvx_mlx5_sq_completed(sq, c, (uint16_t)(c->resv - 1)) < 0)
			return -1;
	}
	return 0;
}

/*
 * The raw calls as wp_write_dvx, plus what a caller of the raw calls does to get its
 * work-request ids back with the completions: its own wr_id per slot (one masked store
 * per WQE, the mask from the ring's size, a property of the SQ as the dvx_qp side's
 * is). The like-for-like reference of the dvx_qp side, which keeps a wr_id per slot.
 */
static WP_NOINLINE int wp_write_dvxw(struct wp_dsq *q, const struct wp_arg *args,
				     uint32_t nwqe, uint32_t batch)
{
	struct dvx_mlx5_sq *sq = &q->sq;
	struct dvx_mlx5_sq_ctrs *c = &q->c;
	uint64_t *ids = q->ids;
	uint32_t done, i;
	uint64_t idx;

	for (done = 0; done < nwqe; done += batch) {
		for (i = 0; i < batch; i++) {
			const struct wp_arg *a;

			if (dvx_mlx5_sq_reserve(sq, c, 1, DVX_MLX5_SQ_SINGLE, &idx))
				return -1;
			a = &args[idx & (WP_NARGS - 1)];
			if (dvx_mlx5_wqe_rdma_write(&sq->wq, idx, DVX_MLX5_WQE_CTRL_CQ_UPDATE,
						    a->raddr, WP_RKEY, a->laddr, WP_LKEY,
						    a->len) < 0)
				return -1;
			ids[idx & (sq->nwqebb - 1)] = done + i;
		}
		dvx_mlx5_sq_ring_db(sq, c, c->resv);
		if (dvx_mlx5_sq_completed(sq, c, (uint16_t)(c->resv - 1)) < 0)
			return -1;
	}
	return 0;
}

/*
 * dvx as a batching caller uses it: one dvx_mlx5_sq_reserve() of the whole batch
 * (one room check and one producer update per batch), then the builders at
 * idx, idx + 1, ... Same bytes, doorbell and completion as above.
 */
static WP_NOINLINE int wp_write_dvxb(struct wp_dsq *q, const struct wp_arg *args,
				     uint32_t nwqe, uint32_t batch)
{
	struct dvx_mlx5_sq *sq = &q->sq;
	struct dvx_mlx5_sq_ctrs *c = &q->c;
	uint32_t done, i;
	uint64_t idx;

	for (done = 0; done < nwqe; done += batch) {
		if (dvx_mlx5_sq_reserve(sq, c, batch, DVX_MLX5_SQ_SINGLE, &idx))
			return -1;
		for (i = 0; i < batch; i++, idx++) {
			const struct wp_arg *a = &args[idx & (WP_NARGS - 1)];

			if (dvx_mlx5_wqe_rdma_write(&sq->wq, idx, DVX_MLX5_WQE_CTRL_CQ_UPDATE,
						    a->raddr, WP_RKEY, a->laddr, WP_LKEY,
						    a->len) < 0)
				return -1;
		}
		dvx_mlx5_sq_ring_db(sq, c, c->resv);
		if (dvx_mlx5_sq_completed(sq, c, (uint16_t)(c->resv - 1)) < 0)
			return -1;
	}
	return 0;
}

/*
 * The user's data path (dvx/nic/post.h) on a dvx_qp: dvx_qp_post_write() per WQE with a
 * wr_id kept per slot, DVX_POST_MORE, one dvx_qp_ring() per batch; the completion
 * accounted as the other sides do (dvx_cq_poll() would call dvx_mlx5_sq_completed()
 * for the CQE). Same bytes.
 */
static WP_NOINLINE int wp_write_qp(struct dvx_qp *qp, const struct wp_arg *args,
				   uint32_t nwqe, uint32_t batch)
{
	uint32_t done, i;

	for (done = 0; done < nwqe; done += batch) {
		for (i = 0; i < batch; i++) {
			const struct wp_arg *a = &args[(done + i) & (WP_NARGS - 1)];

			if (dvx_qp_post_write(qp, done + i, a->laddr, WP_LKEY, a->len, a->raddr,
					      WP_RKEY, DVX_POST_SIGNALED | DVX_POST_MORE))
				return -1;
		}
		dvx_qp_ring(qp);
		if (dvx_mlx5_sq_completed(&qp->sq, &qp->sqc, (uint16_t)(qp->sqc.resv - 1)) < 0)
			return -1;
	}
	return 0;
}

static WP_NOINLINE int wp_write_ref(struct ref_sq *sq, const struct wp_arg *args,
				    uint32_t nwqe, uint32_t batch)
{
	uint32_t done, i;

	for (done = 0; done < nwqe; done += batch) {
		struct mlx5_wqe_ctrl_seg *ctrl = NULL;

		for (i = 0; i < batch; i++) {
			const struct wp_arg *a;
			struct mlx5_wqe_raddr_seg *rs;
			uint32_t idx;
			uint8_t *seg;

			if (sq->nwqebb - (sq->pi - sq->ci) < 1)
				return -1;
			idx = sq->pi;
			a = &args[idx & (WP_NARGS - 1)];
			seg = ref_slot(sq, idx);
			ctrl = (struct mlx5_wqe_ctrl_seg *)(void *)seg;
			rs = (struct mlx5_wqe_raddr_seg *)(void *)(seg + 16);
			mlx5dv_set_ctrl_seg(ctrl, (uint16_t)idx, MLX5_OPCODE_RDMA_WRITE, 0, sq->qpn,
					    MLX5_WQE_CTRL_CQ_UPDATE, 3, 0, 0);
			ctrl->dci_stream_channel_id = 0;
			rs->raddr = htobe64(a->raddr);
			rs->rkey = htobe32(WP_RKEY);
			rs->reserved = 0;
			mlx5dv_set_data_seg((struct mlx5_wqe_data_seg *)(void *)(seg + 32),
					    a->len, WP_LKEY, a->laddr);
			sq->pi = idx + 1;
		}
		ref_ring_db(sq, ctrl, batch);
		if (ref_completed(sq, (uint16_t)(sq->pi - 1)) < 0)
			return -1;
	}
	return 0;
}

static WP_NOINLINE int wp_fa_dvx(struct wp_dsq *q, const struct wp_arg *args,
				 uint32_t nwqe, uint32_t batch)
{
	struct dvx_mlx5_sq *sq = &q->sq;
	struct dvx_mlx5_sq_ctrs *c = &q->c;
	uint32_t done, i;
	uint64_t idx;

	for (done = 0; done < nwqe; done += batch) {
		for (i = 0; i < batch; i++) {
			const struct wp_arg *a;

			if (dvx_mlx5_sq_reserve(sq, c, 1, DVX_MLX5_SQ_SINGLE, &idx))
				return -1;
			a = &args[idx & (WP_NARGS - 1)];
			if (dvx_mlx5_wqe_atomic_fa(&sq->wq, idx, DVX_MLX5_WQE_CTRL_CQ_UPDATE,
						   a->raddr, WP_RKEY, a->add, a->laddr,
						   WP_LKEY) < 0)
				return -1;
		}
		dvx_mlx5_sq_ring_db(sq, c, c->resv);
		if (dvx_mlx5_sq_completed(sq, c, (uint16_t)(c->resv - 1)) < 0)
			return -1;
	}
	return 0;
}

/* ATOMIC_FA with the caller's own wr_id per slot (see wp_write_dvxw). */
static WP_NOINLINE int wp_fa_dvxw(struct wp_dsq *q, const struct wp_arg *args,
				  uint32_t nwqe, uint32_t batch)
{
	struct dvx_mlx5_sq *sq = &q->sq;
	struct dvx_mlx5_sq_ctrs *c = &q->c;
	uint64_t *ids = q->ids;
	uint32_t done, i;
	uint64_t idx;

	for (done = 0; done < nwqe; done += batch) {
		for (i = 0; i < batch; i++) {
			const struct wp_arg *a;

			if (dvx_mlx5_sq_reserve(sq, c, 1, DVX_MLX5_SQ_SINGLE, &idx))
				return -1;
			a = &args[idx & (WP_NARGS - 1)];
			if (dvx_mlx5_wqe_atomic_fa(&sq->wq, idx, DVX_MLX5_WQE_CTRL_CQ_UPDATE,
						   a->raddr, WP_RKEY, a->add, a->laddr,
						   WP_LKEY) < 0)
				return -1;
			ids[idx & (sq->nwqebb - 1)] = done + i;
		}
		dvx_mlx5_sq_ring_db(sq, c, c->resv);
		if (dvx_mlx5_sq_completed(sq, c, (uint16_t)(c->resv - 1)) < 0)
			return -1;
	}
	return 0;
}

/* ATOMIC_FA with one reservation per batch (see wp_write_dvxb). */
static WP_NOINLINE int wp_fa_dvxb(struct wp_dsq *q, const struct wp_arg *args,
				  uint32_t nwqe, uint32_t batch)
{
	struct dvx_mlx5_sq *sq = &q->sq;
	struct dvx_mlx5_sq_ctrs *c = &q->c;
	uint32_t done, i;
	uint64_t idx;

	for (done = 0; done < nwqe; done += batch) {
		if (dvx_mlx5_sq_reserve(sq, c, batch, DVX_MLX5_SQ_SINGLE, &idx))
			return -1;
		for (i = 0; i < batch; i++, idx++) {
			const struct wp_arg *a = &args[idx & (WP_NARGS - 1)];

			if (dvx_mlx5_wqe_atomic_fa(&sq->wq, idx, DVX_MLX5_WQE_CTRL_CQ_UPDATE,
						   a->raddr, WP_RKEY, a->add, a->laddr,
						   WP_LKEY) < 0)
				return -1;
		}
		dvx_mlx5_sq_ring_db(sq, c, c->resv);
		if (dvx_mlx5_sq_completed(sq, c, (uint16_t)(c->resv - 1)) < 0)
			return -1;
	}
	return 0;
}

/* ATOMIC_FA through dvx_qp_post_fetch_add() (see wp_write_qp). */
static WP_NOINLINE int wp_fa_qp(struct dvx_qp *qp, const struct wp_arg *args, uint32_t nwqe,
				uint32_t batch)
{
	uint32_t done, i;

	for (done = 0; done < nwqe; done += batch) {
		for (i = 0; i < batch; i++) {
			const struct wp_arg *a = &args[(done + i) & (WP_NARGS - 1)];

			if (dvx_qp_post_fetch_add(qp, done + i, a->raddr, WP_RKEY, a->add, a->laddr,
						  WP_LKEY, DVX_POST_SIGNALED | DVX_POST_MORE))
				return -1;
		}
		dvx_qp_ring(qp);
		if (dvx_mlx5_sq_completed(&qp->sq, &qp->sqc, (uint16_t)(qp->sqc.resv - 1)) < 0)
			return -1;
	}
	return 0;
}

static WP_NOINLINE int wp_fa_ref(struct ref_sq *sq, const struct wp_arg *args, uint32_t nwqe,
				 uint32_t batch)
{
	uint32_t done, i;

	for (done = 0; done < nwqe; done += batch) {
		struct mlx5_wqe_ctrl_seg *ctrl = NULL;

		for (i = 0; i < batch; i++) {
			const struct wp_arg *a;
			struct mlx5_wqe_raddr_seg *rs;
			struct mlx5_wqe_atomic_seg *as;
			uint32_t idx;
			uint8_t *seg;

			if (sq->nwqebb - (sq->pi - sq->ci) < 1)
				return -1;
			idx = sq->pi;
			a = &args[idx & (WP_NARGS - 1)];
			seg = ref_slot(sq, idx);
			ctrl = (struct mlx5_wqe_ctrl_seg *)(void *)seg;
			rs = (struct mlx5_wqe_raddr_seg *)(void *)(seg + 16);
			as = (struct mlx5_wqe_atomic_seg *)(void *)(seg + 32);
			mlx5dv_set_ctrl_seg(ctrl, (uint16_t)idx, MLX5_OPCODE_ATOMIC_FA, 0, sq->qpn,
					    MLX5_WQE_CTRL_CQ_UPDATE, 4, 0, 0);
			ctrl->dci_stream_channel_id = 0;
			rs->raddr = htobe64(a->raddr);
			rs->rkey = htobe32(WP_RKEY);
			rs->reserved = 0;
			as->swap_add = htobe64(a->add);
			as->compare = 0;
			mlx5dv_set_data_seg((struct mlx5_wqe_data_seg *)(void *)(seg + 48), 8,
					    WP_LKEY, a->laddr);
			sq->pi = idx + 1;
		}
		ref_ring_db(sq, ctrl, batch);
		if (ref_completed(sq, (uint16_t)(sq->pi - 1)) < 0)
			return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------------------
 * Harness
 */
enum { WP_DVX, WP_DVXB, WP_REF, WP_QP, WP_DVXW, WP_NSIDES };

struct wp_workload {
	const char *name;
	int (*dvx)(struct wp_dsq *q, const struct wp_arg *args, uint32_t nwqe,
		   uint32_t batch);
	int (*dvxb)(struct wp_dsq *q, const struct wp_arg *args, uint32_t nwqe,
		    uint32_t batch);
	int (*ref)(struct ref_sq *sq, const struct wp_arg *args, uint32_t nwqe, uint32_t batch);
	int (*qp)(struct dvx_qp *qp, const struct wp_arg *args, uint32_t nwqe, uint32_t batch);
	int (*dvxw)(struct wp_dsq *q, const struct wp_arg *args, uint32_t nwqe,
		    uint32_t batch);
};

static const struct wp_workload wp_workloads[] = {
	{ "write", wp_write_dvx, wp_write_dvxb, wp_write_ref, wp_write_qp, wp_write_dvxw },
	{ "fa", wp_fa_dvx, wp_fa_dvxb, wp_fa_ref, wp_fa_qp, wp_fa_dvxw },
};

static const char *const wp_side_name[WP_NSIDES] = { "dvx", "dvxb", "ref", "qp", "dvxw" };

struct wp_env {
	uint8_t *ring;
	uint8_t *uar;
	dvx_be32 dvx_dbrec[2] DVX_ALIGNED(8);
	__be32 ref_dbrec[2] DVX_ALIGNED(8);
	struct wp_dsq dsq;
	struct ref_sq rsq;
	struct dvx_qp qp;			/* the post.h side: its own counters, same ring */
	dvx_be32 qp_dbrec[2] DVX_ALIGNED(8);
	uint64_t wr_ids[WP_NWQEBB];
	uint64_t raw_ids[WP_NWQEBB];		/* the dvxw side's own wr_ids */
	struct wp_arg args[WP_NARGS];
};

static void wp_reset(struct wp_env *e)
{
	/* both sides start at index 0 on a zeroed ring */
	memset(e->ring, 0, WP_NWQEBB * MLX5_SEND_WQE_BB);
	dvx_mlx5_sq_ctrs_set(&e->dsq.c, 0);
	dvx_mlx5_sq_ctrs_set(&e->qp.sqc, 0);
	e->rsq.pi = 0;
	e->rsq.ci = 0;
	e->rsq.bf_offset = 0;
}

static int wp_run(struct wp_env *e, const struct wp_workload *w, int side, uint32_t nwqe,
		  uint32_t batch)
{
	if (side == WP_DVX)
		return w->dvx(&e->dsq, e->args, nwqe, batch);
	if (side == WP_DVXB)
		return w->dvxb(&e->dsq, e->args, nwqe, batch);
	if (side == WP_DVXW)
		return w->dvxw(&e->dsq, e->args, nwqe, batch);
	if (side == WP_QP)
		return w->qp(&e->qp, e->args, nwqe, batch);
	return w->ref(&e->rsq, e->args, nwqe, batch);
}

static int wp_setup(struct wp_env *e)
{
	uint32_t i;
	int err;

	memset(e, 0, sizeof(*e));
	e->ring = aligned_alloc(MLX5_SEND_WQE_BB, WP_NWQEBB * MLX5_SEND_WQE_BB);
	e->uar = aligned_alloc(64, 2 * WP_BF_HALF);
	if (!e->ring || !e->uar)
		return -ENOMEM;
	memset(e->uar, 0, 2 * WP_BF_HALF);
	e->dsq.ids = e->raw_ids;
	err = dvx_mlx5_sq_init(&e->dsq.sq, &e->dsq.c,
			       &(struct dvx_mlx5_sq_cfg){ e->ring, WP_NWQEBB, WP_QPN, 0,
							  e->dvx_dbrec, e->uar, WP_BF_HALF, 0 });
	if (err)
		return err;
	err = dvx_mlx5_sq_init(&e->qp.sq, &e->qp.sqc,
			       &(struct dvx_mlx5_sq_cfg){ e->ring, WP_NWQEBB, WP_QPN, 0,
							  e->qp_dbrec, e->uar, WP_BF_HALF, 0 });
	if (err)
		return err;
	e->qp.sq_wr_ids = e->wr_ids;
	e->qp.sq_wr_slot = e->wr_ids;	/* as dvx_qp_create() sets them */
	e->qp.sq_wr_mask = WP_NWQEBB - 1;
	e->rsq.buf = e->ring;
	e->rsq.nwqebb = WP_NWQEBB;
	e->rsq.qpn = WP_QPN;
	e->rsq.dbrec = e->ref_dbrec;
	e->rsq.bf_reg = e->uar;
	e->rsq.bf_half = WP_BF_HALF;
	for (i = 0; i < WP_NARGS; i++) {
		e->args[i].raddr = 0x7f0000100000ull + (uint64_t)i * 4096;
		e->args[i].laddr = 0x7e0000200000ull + (uint64_t)i * 4096 + 64;
		e->args[i].add = i + 1;
		e->args[i].len = 64 + 64 * (i % 16);
	}
	wp_reset(e);
	return 0;
}

/*
 * Both sides must write the same bytes: post 2.5 rings' worth (so the index wraps)
 * with each side onto a zeroed ring and compare the rings, the doorbell records and
 * the final indices. The doorbell values differ by design (dvx writes {pi, qpn}, the
 * rdma-core convention writes the last ctrl's first 8 bytes; prm 3.2).
 */
static int wp_check(struct wp_env *e)
{
	const size_t bytes = WP_NWQEBB * MLX5_SEND_WQE_BB;
	const uint32_t nwqe = WP_NWQEBB * 5 / 2;
	uint8_t *snap = malloc(bytes);
	struct dvx_mlx5_sq_ctrs dsq;
	size_t w, b;
	int bad = 0;

	if (!snap)
		return -ENOMEM;
	for (w = 0; w < DVX_ARRAY_SIZE(wp_workloads); w++) {
		for (b = 0; b < DVX_ARRAY_SIZE(wp_batches); b++) {
			uint32_t batch = wp_batches[b];
			uint32_t n = nwqe / batch * batch;

			wp_reset(e);
			if (wp_run(e, &wp_workloads[w], WP_DVX, n, batch))
				bad = 1;
			memcpy(snap, e->ring, bytes);
			dsq = e->dsq.c;
			wp_reset(e);
			if (wp_run(e, &wp_workloads[w], WP_DVXB, n, batch))
				bad = 1;
			if (memcmp(snap, e->ring, bytes) || dsq.resv != e->dsq.c.resv ||
			    dsq.ci != e->dsq.c.ci || dsq.bf_offset != e->dsq.c.bf_offset) {
				fprintf(stderr, "wqe-post: %s batch %u: dvx per-WQE and per-batch "
					"reservation differ\n", wp_workloads[w].name, batch);
				bad = 1;
			}
			wp_reset(e);
			if (wp_run(e, &wp_workloads[w], WP_DVXW, n, batch))
				bad = 1;
			if (memcmp(snap, e->ring, bytes) || dsq.resv != e->dsq.c.resv ||
			    dsq.ci != e->dsq.c.ci ||
			    e->raw_ids[(dsq.resv - 1) & (WP_NWQEBB - 1)] != n - 1) {
				fprintf(stderr, "wqe-post: %s batch %u: dvx with wr_ids differs\n",
					wp_workloads[w].name, batch);
				bad = 1;
			}
			wp_reset(e);
			if (wp_run(e, &wp_workloads[w], WP_QP, n, batch))
				bad = 1;
			if (memcmp(snap, e->ring, bytes) || dsq.resv != e->qp.sqc.resv ||
			    dsq.ci != e->qp.sqc.ci ||
			    e->qp_dbrec[DVX_MLX5_SND_DBR] != e->dvx_dbrec[DVX_MLX5_SND_DBR] ||
			    e->wr_ids[(dsq.resv - 1) & (WP_NWQEBB - 1)] != n - 1) {
				fprintf(stderr, "wqe-post: %s batch %u: the dvx_qp post helpers and "
					"the raw calls differ\n", wp_workloads[w].name, batch);
				bad = 1;
			}
			wp_reset(e);
			if (wp_run(e, &wp_workloads[w], WP_REF, n, batch))
				bad = 1;
			if (memcmp(snap, e->ring, bytes) ||
			    e->dvx_dbrec[DVX_MLX5_SND_DBR] != e->ref_dbrec[MLX5_SND_DBR] ||
			    dsq.resv != e->rsq.pi || dsq.ci != e->rsq.ci ||
			    dsq.bf_offset != e->rsq.bf_offset) {
				fprintf(stderr, "wqe-post: %s batch %u: dvx and reference differ\n",
					wp_workloads[w].name, batch);
				bad = 1;
			}
		}
	}
	free(snap);
	wp_reset(e);
	return bad ? -EIO : 0;
}

static double wp_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int wp_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

#define WP_MAX_RUNS 101

static int wp_time(struct wp_env *e, uint32_t nwqe, unsigned int runs)
{
	double t[WP_NSIDES][WP_MAX_RUNS];
	size_t w, b;
	unsigned int r;
	int s;

	printf("# ns/WQE: median of %u runs of %u WQEs each (after one warm-up run),\n"
	       "# dvx and reference interleaved. Ring %u WQEBBs in host memory; the UAR\n"
	       "# register is a host buffer (plain memory): the record store, sfences and\n"
	       "# 8-byte doorbell store execute, but not as MMIO.\n",
	       runs, nwqe, WP_NWQEBB);
	printf("%-8s %6s %10s %10s %10s %10s %10s\n", "workload", "batch", "dvx_ns", "dvxb_ns",
	       "ref_ns", "qp_ns", "dvxw_ns");
	for (w = 0; w < DVX_ARRAY_SIZE(wp_workloads); w++) {
		for (b = 0; b < DVX_ARRAY_SIZE(wp_batches); b++) {
			uint32_t batch = wp_batches[b];
			uint32_t n = nwqe / batch * batch;

			wp_reset(e);
			for (s = 0; s < WP_NSIDES; s++)
				if (wp_run(e, &wp_workloads[w], s, n, batch))
					return -EIO;
			for (r = 0; r < runs; r++) {
				for (s = 0; s < WP_NSIDES; s++) {
					/* alternate which side goes first */
					int side = (int)((s + r) % WP_NSIDES);
					double t0 = wp_now_ns();

					if (wp_run(e, &wp_workloads[w], side, n, batch))
						return -EIO;
					t[side][r] = (wp_now_ns() - t0) / n;
				}
			}
			for (s = 0; s < WP_NSIDES; s++)
				qsort(t[s], runs, sizeof(double), wp_cmp_double);
			printf("%-8s %6u %10.2f %10.2f %10.2f %10.2f %10.2f\n", wp_workloads[w].name,
			       batch, t[WP_DVX][runs / 2], t[WP_DVXB][runs / 2], t[WP_REF][runs / 2],
			       t[WP_QP][runs / 2], t[WP_DVXW][runs / 2]);
		}
	}
	return 0;
}

static int wp_callgrind(struct wp_env *e, uint32_t nwqe, uint32_t only_batch)
{
	size_t w, b;
	int s;

	printf("callgrind-client-requests: %s\n", WP_HAVE_CALLGRIND ? "yes" : "no");
	printf("wqes-per-run: %u\n", nwqe);
	for (w = 0; w < DVX_ARRAY_SIZE(wp_workloads); w++) {
		for (b = 0; b < DVX_ARRAY_SIZE(wp_batches); b++) {
			uint32_t batch = wp_batches[b];

			if (only_batch && batch != only_batch)
				continue;
			if (nwqe % batch) {
				fprintf(stderr, "wqe-post: -n %u is not a multiple of %u\n", nwqe,
					batch);
				return -EINVAL;
			}
			for (s = 0; s < WP_NSIDES; s++) {
				char name[64];
				int err;

				snprintf(name, sizeof(name), "wqe-post:%s:%s:%u",
					 wp_workloads[w].name, wp_side_name[s], batch);
				wp_reset(e);
#if WP_HAVE_CALLGRIND
				CALLGRIND_START_INSTRUMENTATION;
				CALLGRIND_ZERO_STATS;
#endif
				err = wp_run(e, &wp_workloads[w], s, nwqe, batch);
#if WP_HAVE_CALLGRIND
				CALLGRIND_DUMP_STATS_AT(name);
				CALLGRIND_STOP_INSTRUMENTATION;
#endif
				if (err)
					return -EIO;
				printf("ran: %s\n", name);
			}
		}
	}
	return 0;
}

static void wp_usage(void)
{
	fprintf(stderr,
		"usage: wqe-post [--time] [-n WQES] [-r RUNS] [-c CPU]\n"
		"       wqe-post --callgrind [-n WQES] [-b BATCH]\n"
		"       wqe-post --check\n");
}

int main(int argc, char **argv)
{
	enum { TIME, CALLGRIND, CHECK } mode = TIME;
	uint32_t nwqe = 0, only_batch = 0;
	unsigned int runs = 15;
	int cpu = -1, i, err;
	static struct wp_env env;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--time")) {
			mode = TIME;
		} else if (!strcmp(a, "--callgrind")) {
			mode = CALLGRIND;
		} else if (!strcmp(a, "--check")) {
			mode = CHECK;
		} else if (v && !strcmp(a, "-n")) {
			nwqe = (uint32_t)strtoul(v, NULL, 0);
			i++;
		} else if (v && !strcmp(a, "-r")) {
			runs = (unsigned int)strtoul(v, NULL, 0);
			i++;
		} else if (v && !strcmp(a, "-b")) {
			only_batch = (uint32_t)strtoul(v, NULL, 0);
			i++;
		} else if (v && !strcmp(a, "-c")) {
			cpu = atoi(v);
			i++;
		} else {
			wp_usage();
			return 2;
		}
	}
	if (runs < 1 || runs > WP_MAX_RUNS) {
		fprintf(stderr, "wqe-post: -r must be 1..%d\n", WP_MAX_RUNS);
		return 2;
	}
	if (cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			perror("wqe-post: sched_setaffinity");
	}
	err = wp_setup(&env);
	if (err) {
		fprintf(stderr, "wqe-post: setup failed (%d)\n", err);
		return 1;
	}
	if (mode != CALLGRIND || WP_HAVE_CALLGRIND) {
		err = wp_check(&env);
		if (err)
			return 1;
		printf("# dvx and reference ring bytes identical: yes\n");
	}
	switch (mode) {
	case TIME:
		err = wp_time(&env, nwqe ? nwqe : 1u << 16, runs);
		break;
	case CALLGRIND:
		err = wp_callgrind(&env, nwqe ? nwqe : 128u * 64, only_batch);
		break;
	case CHECK:
		break;
	}
	free(env.ring);
	free(env.uar);
	return err ? 1 : 0;
}
