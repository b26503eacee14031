// SPDX-License-Identifier: MIT
/*
 * bench/sim-rate.c - how many WQEs per second the software NIC's data path
 * (hal/sim/exec.c, dvx_sim_exec_qp()) executes on one core, against a plain memcpy loop
 * of the same payload bytes in the same run (the floor: what moving the data costs
 * with no WQE decoding, key checks or CQEs).
 *
 * The sim objects (two NICs, a connected QP pair, CQs, MRs) are set up by hand as in
 * tests/hal/sim/test_sim_exec.c, with the control half's lookups stubbed here, so only
 * the execution path is timed: WQEs are built (untimed) with the project's builders
 * one ring lap at a time, then executed (timed) by dvx_sim_exec_qp(). Doorbell watching
 * and the progress loop (hal/sim/fabric.c) are not part of the number.
 *
 * Workloads, each signaled on every WQE and on every 16th:
 *   nop      NOP (ds 1)
 *   write8   RDMA WRITE of 8 bytes (ds 3)
 *   write4k  RDMA WRITE of 4 KiB (ds 3)
 *   fa       ATOMIC fetch-add 8 B on one counter, result to an iova-0 sink (ds 4)
 *
 *   sim-rate [-n WQES] [-r RUNS] [-c CPU]
 * prints, per workload, the median of RUNS runs of WQES WQEs.
 */
#include <dvx/mlx5/cqe.h>
#include <dvx/mlx5/wqe.h>

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../hal/sim/sim.h"

#define SR_LOG_SQ 12u			/* 4096 WQEBBs: one lap per timed batch */
#define SR_NSQ (1u << SR_LOG_SQ)
#define SR_LOG_CQ 12u
#define SR_BUF (1u << 20)		/* 1 MiB source and destination windows */
#define SR_QPN_A 0x100u
#define SR_QPN_B 0x200u
#define SR_KEY_A 0x1001u
#define SR_KEY_SINK 0x1002u
#define SR_KEY_B 0x2001u
#define SR_ALL (DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_WRITE | DVX_ACCESS_REMOTE_READ | \
		DVX_ACCESS_REMOTE_ATOMIC)

static struct {
	struct sim_fabric fab;
	struct sim_nic nic[2];
	struct sim_mr mrs[2][2];
	struct sim_cq cq;
	struct sim_qp qp[2];
	struct dvx_mlx5_wq wq;
	uint32_t pi;
} S;

static _Alignas(64) uint8_t sr_sq[64u * SR_NSQ];
static _Alignas(64) uint8_t sr_cq[64u << SR_LOG_CQ];
static _Alignas(8) uint8_t sr_dbrec[2][8];
static _Alignas(64) uint8_t sr_src[SR_BUF];
static _Alignas(64) uint8_t sr_dst[SR_BUF];
static _Alignas(64) uint8_t sr_sink[64];

/* ---- the control half's lookups, for these hand-built objects ------------------ */

struct sim_cq *dvx_sim_cq_find(struct sim_nic *nic, uint32_t cqn)
{
	return cqn == S.cq.cqn && nic == &S.nic[0] ? &S.cq : NULL;
}

struct sim_qp *dvx_sim_qp_find(struct sim_nic *nic, uint32_t qpn)
{
	int i;

	for (i = 0; i < 2; i++)
		if (S.qp[i].qpn == qpn && S.qp[i].nic == nic)
			return &S.qp[i];
	return NULL;
}

struct sim_qp *dvx_sim_qp_peer(struct sim_fabric *fab, struct sim_qp *qp)
{
	return qp->peer;
}

struct sim_mr *dvx_sim_mr_find(struct sim_nic *nic, uint32_t key)
{
	int i;

	for (i = 0; i < 2; i++)
		if (nic->mrs[i].lkey == key)
			return &nic->mrs[i];
	return NULL;
}

uint64_t dvx_sim_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* no queue here lives in device memory (dvx_sim_dmabuf_export_dma()) */
int dvx_sim_dma_pull(struct sim_fabric *fab, const struct sim_umem *u, const void *p,
		     uint64_t len)
{
	(void)fab, (void)u, (void)p, (void)len;
	return -EIO;
}

int dvx_sim_dma_push(struct sim_fabric *fab, const struct sim_umem *u, const void *p,
		     uint64_t len)
{
	(void)fab, (void)u, (void)p, (void)len;
	return -EIO;
}

/* ---- setup --------------------------------------------------------------------- */

static void sr_mr(int nic, int slot, uint32_t key, uint32_t pdn, uint64_t iova, void *base,
		  uint64_t len)
{
	struct sim_mr *mr = &S.mrs[nic][slot];

	mr->lkey = mr->rkey = key;
	mr->pdn = pdn;
	mr->access = SR_ALL;
	mr->iova = iova;
	mr->base = base;
	mr->len = len;
}

static void sr_setup(void)
{
	int i;

	memset(&S, 0, sizeof(S));
	memset(sr_dbrec, 0, sizeof(sr_dbrec));
	S.fab.nics = S.nic;
	S.fab.nnics = 2;
	for (i = 0; i < 2; i++) {
		struct sim_nic *n = &S.nic[i];
		struct sim_qp *qp = &S.qp[i];

		n->fab = &S.fab;
		n->index = (uint32_t)i;
		n->cfg.nports = 1;
		n->cfg.atomic = 1;
		n->cfg.log_max_msg = 30;
		n->cfg.port[0].up = 1;
		n->mrs = S.mrs[i];
		n->qps = &S.qp[i];
		n->cqs = i ? NULL : &S.cq;
		dvx_put_be32(n->cap_atomic + 8, 1u << 30);	/* 8 B replies in host order */

		qp->qpn = i ? SR_QPN_B : SR_QPN_A;
		qp->state = SIM_QPS_RTS;
		qp->pdn = (uint32_t)i + 1;
		qp->cqn_snd = i ? 0 : 0x10;
		qp->sq = i ? NULL : sr_sq;
		qp->dbrec = sr_dbrec[i];
		qp->log_sq_size = SR_LOG_SQ;
		qp->access = DVX_ACCESS_REMOTE_WRITE | DVX_ACCESS_REMOTE_READ |
			     DVX_ACCESS_REMOTE_ATOMIC;
		qp->port = 1;
		qp->retry_cnt = 7;
		qp->rnr_retry = 7;
		qp->atomic_mode = 3;
		qp->nic = n;
	}
	S.qp[0].peer = &S.qp[1];
	S.qp[1].peer = &S.qp[0];
	sr_mr(0, 0, SR_KEY_A, 1, 0, sr_src, SR_BUF);
	sr_mr(0, 1, SR_KEY_SINK, 1, 0, sr_sink, sizeof(sr_sink));
	sr_mr(1, 0, SR_KEY_B, 2, 0, sr_dst, SR_BUF);
	S.cq.cqn = 0x10;
	S.cq.log_sz = SR_LOG_CQ;
	S.cq.ring = sr_cq;
	S.cq.dbrec = sr_dbrec[1];	/* unused: overrun-ignore */
	S.cq.oi = 1;
	S.cq.nic = &S.nic[0];
	dvx_mlx5_cq_ring_init(sr_cq, SR_LOG_CQ);
	if (dvx_mlx5_wq_init(&S.wq, sr_sq, SR_NSQ, SR_QPN_A, 64)) {
		fprintf(stderr, "sim-rate: wq_init failed\n");
		exit(1);
	}
	S.pi = 0;
}

/* ---- workloads ------------------------------------------------------------------ */

enum sr_kind { SR_NOP, SR_WRITE8, SR_WRITE4K, SR_FA };

static const struct {
	const char *name;
	uint32_t bytes;		/* payload per WQE (the reference copies this much) */
} sr_kinds[] = {
	[SR_NOP] = { "nop", 0 },
	[SR_WRITE8] = { "write8", 8 },
	[SR_WRITE4K] = { "write4k", 4096 },
	[SR_FA] = { "fa", 8 },
};

static uint64_t sr_ns(void)
{
	return dvx_sim_now_ns();
}

/* build one lap of @n WQEs (untimed) */
static void sr_build(enum sr_kind k, uint32_t n, uint32_t sig_every)
{
	uint32_t i, bytes = sr_kinds[k].bytes;

	for (i = 0; i < n; i++) {
		uint8_t f = (S.pi % sig_every) == sig_every - 1 ? DVX_MLX5_WQE_CTRL_CQ_UPDATE : 0;
		uint64_t off = ((uint64_t)S.pi * (bytes ? bytes : 8)) % (SR_BUF - 4096);

		switch (k) {
		case SR_NOP:
			S.pi += (uint32_t)dvx_mlx5_wqe_nop(&S.wq, S.pi, f);
			break;
		case SR_WRITE8:
		case SR_WRITE4K:
			S.pi += (uint32_t)dvx_mlx5_wqe_rdma_write(&S.wq, S.pi, f, off, SR_KEY_B, off,
								  SR_KEY_A, bytes);
			break;
		case SR_FA:
			S.pi += (uint32_t)dvx_mlx5_wqe_atomic_fa(&S.wq, S.pi, f, 0, SR_KEY_B, 1, 0,
								 SR_KEY_SINK);
			break;
		}
	}
	S.qp[0].sq_db = S.pi;
}

/* execute @total WQEs; returns the ns spent inside dvx_sim_exec_qp() */
static uint64_t sr_run_sim(enum sr_kind k, uint64_t total, uint32_t sig_every)
{
	uint64_t done = 0, ns = 0;

	sr_setup();
	while (done < total) {
		uint32_t lap = total - done < SR_NSQ ? (uint32_t)(total - done) : SR_NSQ;
		uint64_t t0;
		unsigned got;

		sr_build(k, lap, sig_every);
		t0 = sr_ns();
		got = dvx_sim_exec_qp(&S.fab, &S.qp[0], lap);
		ns += sr_ns() - t0;
		if (got != lap || S.qp[0].state != SIM_QPS_RTS) {
			fprintf(stderr, "sim-rate: %s: executed %u of %u (state %u)\n",
				sr_kinds[k].name, got, lap, S.qp[0].state);
			exit(1);
		}
		done += lap;
	}
	return ns;
}

/* the floor: the same payload bytes moved by memcpy, same offsets, same laps */
static uint64_t sr_run_ref(enum sr_kind k, uint64_t total)
{
	uint32_t bytes = sr_kinds[k].bytes;
	uint64_t done = 0, ns = 0, pi = 0;

	if (!bytes)
		return 0;
	while (done < total) {
		uint32_t lap = total - done < SR_NSQ ? (uint32_t)(total - done) : SR_NSQ, i;
		uint64_t t0 = sr_ns();

		for (i = 0; i < lap; i++, pi++) {
			uint64_t off = (pi * bytes) % (SR_BUF - 4096);

			if (k == SR_FA)
				off = 0;
			memcpy(sr_dst + off, sr_src + off, bytes);
			__asm__ __volatile__("" ::: "memory");
		}
		ns += sr_ns() - t0;
		done += lap;
	}
	return ns;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

#define SR_MAX_RUNS 31

int main(int argc, char **argv)
{
	uint64_t total = 4u << 20;
	int runs = 5, cpu = -1, i, r;
	uint32_t sigs[2] = { 1, 16 };

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc)
			total = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "-r") && i + 1 < argc)
			runs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-c") && i + 1 < argc)
			cpu = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: sim-rate [-n WQES] [-r RUNS] [-c CPU]\n");
			return 2;
		}
	}
	if (runs < 1 || runs > SR_MAX_RUNS || !total) {
		fprintf(stderr, "sim-rate: 1 <= RUNS <= %d, WQES > 0\n", SR_MAX_RUNS);
		return 2;
	}
	if (cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			perror("sim-rate: sched_setaffinity");
	}
	printf("sim-rate: dvx_sim_exec_qp() on one core, %llu WQEs per run, median of %d runs\n",
	       (unsigned long long)total, runs);
	printf("%-8s %-7s %14s %9s %16s %9s %7s\n", "workload", "signal", "sim WQE/s", "ns/WQE",
	       "memcpy ref op/s", "ns/op", "sim/ref");
	for (i = 0; i < 4; i++) {
		for (r = 0; r < 2; r++) {
			uint64_t ts[SR_MAX_RUNS], tr[SR_MAX_RUNS];
			double sim_ns, ref_ns;
			int k;

			/* warm-up, then sim and reference interleaved */
			(void)sr_run_sim((enum sr_kind)i, total / 8 + 1, sigs[r]);
			for (k = 0; k < runs; k++) {
				ts[k] = sr_run_sim((enum sr_kind)i, total, sigs[r]);
				tr[k] = sr_run_ref((enum sr_kind)i, total);
			}
			qsort(ts, (size_t)runs, sizeof(ts[0]), cmp_u64);
			qsort(tr, (size_t)runs, sizeof(tr[0]), cmp_u64);
			sim_ns = (double)ts[runs / 2] / (double)total;
			ref_ns = (double)tr[runs / 2] / (double)total;
			if (sr_kinds[i].bytes)
				printf("%-8s %-7s %14.0f %9.1f %16.0f %9.1f %7.1f\n", sr_kinds[i].name,
				       r ? "1/16" : "every", 1e9 / sim_ns, sim_ns, 1e9 / ref_ns,
				       ref_ns, sim_ns / ref_ns);
			else
				printf("%-8s %-7s %14.0f %9.1f %16s %9s %7s\n", sr_kinds[i].name,
				       r ? "1/16" : "every", 1e9 / sim_ns, sim_ns, "-", "-", "-");
		}
	}
	printf("CQEs written in the last run: %llu\n", (unsigned long long)S.fab.cqes_written);
	return 0;
}
