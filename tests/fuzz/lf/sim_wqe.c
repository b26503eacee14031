// SPDX-License-Identifier: MIT
/*
 * tests/fuzz/lf/sim_wqe.c - libFuzzer harness: the software NIC's WQE execution
 * (hal/sim exec.c) on a QP set up through the core objects.
 *
 * The world, fresh for every input (so keys, numbers and answers never depend on the
 * inputs before): a software NIC, a 64 KiB umem for the rings and doorbell records, a
 * CQ of 256 entries, a loopback RC QP in RTS (SQ of 64 WQEBBs, inline up to 128 bytes,
 * an RQ of 16, core-direct master) and two MRs at a fixed address, DATA_BASE
 * (0x200000000000), so inputs can name them:
 *   DATA_BASE + 1 * 16 KiB   MR A, 16 KiB: local write, remote read, write and atomic
 *   DATA_BASE + 3 * 16 KiB   MR B, 16 KiB: remote read only (nothing may ever change it)
 * with 16 KiB guard bands before, between and after them, and guard pages around the
 * umem. The keys of a fresh world are always the same: the seeds carry them.
 *
 * Device memory (byte 0 [4:3]): MR A (bit 3) and MR B (bit 4) can be MRs over a
 * dvx_sim_dmabuf_export_dma() dma-buf instead, at the same iova, whose bytes the NIC
 * reaches only through host-backed DMA callbacks at device addresses DEV_BASE + offset
 * (0x300000000000, never mapped: a dereference by the sim faults) that copy from and to
 * the same arena; byte 0 bit 5 makes every copy touching MR A's [0x1000, 0x1100) fail.
 * The callbacks check each copy lies inside MR A or MR B and never writes MR B; after a
 * round in which a copy failed (dma_errors grew) an error CQE must have come.
 *
 * Feeds: byte 0: [2:0] how many receives to post (each 256 bytes into MR A); [4:3] and
 * [5] where MR A and MR B live and whether copies fail (above); [6] the software NIC's
 * seeded reorder mode on (docs/sim-datapath.md "Reorder mode": chunked placement, early
 * gathers before READ/atomic responses unless fenced, counted) with seed
 * 1 + ([7] << 3 | [2:0]), so every input is one deterministic run and both modes are
 * explored; then
 * up to 8 rounds, each a header byte ([3:0] WQEBBs - 1; bit 4: write this round's
 * wqe_index and QPN into its first ctrl segment, as a driver would) and that many
 * 64-byte WQEBBs of fuzzer bytes, copied into the send ring at the producer index
 * (reserved with the SQ protocol of dvx/mlx5/sq.h), then the doorbell is rung and the
 * NIC stepped until idle; the CQ is polled empty; a QP that went to ERR is recovered.
 *
 * Checks: the guard bands and MR B keep their bytes (ASan also poisons the guards, so a
 * read there is a report too); the QP is in RTS or ERR after every round and recovers
 * from ERR; every CQE polled is this QP's, parses as a completion or a named error, and
 * a requester completion's wqe_counter is a WQEBB the harness posted and not yet saw
 * completed; the NIC never reports more CQEs than there are WQEs and receives; at the
 * end every object is destroyed without error and the NIC counts none alive.
 */
#include <sys/mman.h>

#include <sanitizer/asan_interface.h>

#include <dvx/mlx5/cqe.h>
#include <dvx/mlx5/decode.h>
#include <dvx/mlx5/rq.h>
#include <dvx/mlx5/sq.h>
#include <dvx/nic/cq.h>
#include <dvx/nic/mr.h>
#include <dvx/nic/nic.h>
#include <dvx/nic/qp.h>
#include <dvx/nic/umem.h>
#include <dvx/hal/sim.h>

#include "lf.h"

#define DATA_BASE 0x200000000000ull
#define DEV_BASE 0x300000000000ull	/* the dma-buf's device addresses: no mapping */
#define SPAN (16u << 10)
#define DATA_BYTES (5 * SPAN)	/* guard, A, guard, B, guard */
#define MR_A (DATA_BASE + 1 * SPAN)
#define MR_B (DATA_BASE + 3 * SPAN)
#define QMEM (64u << 10)
#define GUARD 0xa5
#define MAX_ROUNDS 8
#define SQ_DEPTH 64u
#define RQ_DEPTH 16u

static uint8_t *data;		/* DATA_BASE, mapped once */
static uint8_t *qarea;		/* guard page, QMEM, guard page */

/* byte 0's bits for where the MRs live */
#define DEV_A 0x08u
#define DEV_B 0x10u
#define DEV_FAIL 0x20u
#define REORDER 0x40u	/* byte 0: the reorder mode (seed from [7] and [2:0]) */

struct world {
	void *storage;
	struct dvx_sim_fabric *fab;
	struct dvx_nic nic;
	struct dvx_umem umem;
	struct dvx_mr mra, mrb;
	struct dvx_cq cq;
	struct dvx_qp qp;
	int fd;			/* the device dma-buf (-1: none) */
};

/* the device memory: the same arena as the host MRs, reached at DEV_BASE + offset */
static struct {
	uint32_t fail;		/* copies touching MR A's [0x1000, 0x1100) fail */
} dev;

static void dev_check(uint64_t a, uint64_t len, int write)
{
	uint64_t off = a - DEV_BASE;

	LF_CHECK(len > 0 && a >= DEV_BASE && off < DATA_BYTES && len <= DATA_BYTES - off);
	/* inside MR A or MR B, never a guard band; MR B is never written */
	LF_CHECK((off >= SPAN && off + len <= 2 * SPAN) ||
		 (!write && off >= 3 * SPAN && off + len <= 4 * SPAN));
}

static int dev_failing(uint64_t a, uint64_t len)
{
	uint64_t lo = DEV_BASE + SPAN + 0x1000;

	return dev.fail && a < lo + 0x100 && a + len > lo;
}

static int dev_read(void *arg, void *dst, uint64_t src, uint64_t len)
{
	(void)arg;
	dev_check(src, len, 0);
	if (dev_failing(src, len))
		return -EIO;
	memcpy(dst, data + (src - DEV_BASE), len);
	return 0;
}

static int dev_write(void *arg, uint64_t dst, const void *src, uint64_t len)
{
	(void)arg;
	dev_check(dst, len, 1);
	if (dev_failing(dst, len))
		return -EIO;
	memcpy(data + (dst - DEV_BASE), src, len);
	return 0;
}

static const struct dvx_sim_dma dev_dma = { dev_read, dev_write, NULL };

static uint8_t pattern_b(size_t i)
{
	return (uint8_t)(i * 13 + 7);
}

static void guards(int poison)
{
	size_t g;

	for (g = 0; g < DATA_BYTES; g += 2 * SPAN) {
		if (poison)
			ASAN_POISON_MEMORY_REGION(data + g, SPAN);
		else
			ASAN_UNPOISON_MEMORY_REGION(data + g, SPAN);
	}
	if (poison) {
		ASAN_POISON_MEMORY_REGION(qarea, 4096);
		ASAN_POISON_MEMORY_REGION(qarea + 4096 + QMEM, 4096);
	} else {
		ASAN_UNPOISON_MEMORY_REGION(qarea, 4096);
		ASAN_UNPOISON_MEMORY_REGION(qarea + 4096 + QMEM, 4096);
	}
}

/* what the guard bands and MR B must hold */
static uint8_t want_guard[SPAN], want_b[SPAN];

static void check_memory(void)
{
	size_t g;

	guards(0);
	for (g = 0; g < DATA_BYTES; g += 2 * SPAN)
		if (memcmp(data + g, want_guard, SPAN))
			lf_fail(__FILE__, __LINE__, "a guard band of the MRs changed");
	if (memcmp(data + 3 * SPAN, want_b, SPAN))
		lf_fail(__FILE__, __LINE__, "MR B (remote read only) changed");
	if (memcmp(qarea, want_guard, 4096) || memcmp(qarea + 4096 + QMEM, want_guard, 4096))
		lf_fail(__FILE__, __LINE__, "a guard page of the queue umem changed");
	guards(1);
}

static void world_init(struct world *w, unsigned b0)
{
	struct dvx_sim_fabric_cfg fc;
	struct dvx_sim_nic_cfg nc;
	struct dvx_nic_cfg na;
	struct dvx_umem_cfg ua;
	struct dvx_mr_cfg ma;
	struct dvx_cq_cfg ca;
	struct dvx_qp_cfg qa;
	struct dvx_qp_connect_cfg conn;
	size_t len, i;

	memset(w, 0, sizeof(*w));
	w->fd = -1;
	dev.fail = (b0 & DEV_FAIL) != 0;
	guards(0);
	memset(data, GUARD, DATA_BYTES);
	for (i = 0; i < SPAN; i++)
		data[SPAN + i] = (uint8_t)i;
	memcpy(data + 3 * SPAN, want_b, SPAN);
	memset(qarea, GUARD, QMEM + 2 * 4096);
	memset(qarea + 4096, 0, QMEM);
	guards(1);

	dvx_sim_fabric_cfg_default(&fc);
	fc.max_nics = 1;
	fc.max_qps = 2;
	fc.max_cqs = 2;
	fc.max_mrs = 4;
	fc.max_umems = 2;
	fc.max_uars = 4;
	fc.max_pds = 2;
	fc.max_dmabufs = 1;
	fc.max_gpus = 0;
	fc.max_gpu_mems = 0;
	fc.reorder = (b0 & REORDER) != 0;
	fc.reorder_seed = 1 + ((b0 >> 7) << 3 | (b0 & 7));
	len = dvx_sim_fabric_mem_size(&fc);
	w->storage = malloc(len);
	LF_CHECK(w->storage != NULL);
	LF_CHECK(dvx_sim_fabric_init(w->storage, len, &fc, &w->fab) == 0);
	dvx_sim_nic_cfg_default(&nc, 0);
	LF_CHECK(dvx_sim_add_nic(w->fab, &nc) == 0);
	memset(&na, 0, sizeof(na));
	na.name = "sim_0";
	LF_CHECK(dvx_nic_open(&w->nic, dvx_sim_hal(w->fab), &na) == 0);

	memset(&ua, 0, sizeof(ua));
	ua.addr = qarea + 4096;
	ua.len = QMEM;
	ua.access = DVX_ACCESS_LOCAL_WRITE;
	LF_CHECK(dvx_umem_reg(&w->nic, &ua, &w->umem) == 0);
	if (b0 & (DEV_A | DEV_B))
		LF_CHECK(dvx_sim_dmabuf_export_dma(w->fab, DEV_BASE, DATA_BYTES, &dev_dma, &w->fd) ==
			 0);
	memset(&ma, 0, sizeof(ma));
	ma.addr = (void *)(uintptr_t)MR_A;
	ma.len = SPAN;
	ma.access = DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_WRITE | DVX_ACCESS_REMOTE_READ |
		    DVX_ACCESS_REMOTE_ATOMIC;
	ma.dmabuf_fd = -1;
	if (b0 & DEV_A) {
		ma.flags = DVX_MR_F_DMABUF;
		ma.dmabuf_fd = w->fd;
		ma.dmabuf_offset = MR_A - DATA_BASE;
	}
	LF_CHECK(dvx_mr_reg(&w->nic, &ma, &w->mra) == 0);
	ma.addr = (void *)(uintptr_t)MR_B;
	ma.access = DVX_ACCESS_REMOTE_READ;
	ma.flags = 0;
	ma.dmabuf_fd = -1;
	ma.dmabuf_offset = 0;
	if (b0 & DEV_B) {
		ma.flags = DVX_MR_F_DMABUF;
		ma.dmabuf_fd = w->fd;
		ma.dmabuf_offset = MR_B - DATA_BASE;
	}
	LF_CHECK(dvx_mr_reg(&w->nic, &ma, &w->mrb) == 0);

	memset(&ca, 0, sizeof(ca));
	ca.depth = 256;
	ca.ring_umem = &w->umem;
	ca.ring_offset = 0;
	ca.dbr_umem = &w->umem;
	ca.dbr_offset = 48u << 10;
	LF_CHECK(dvx_cq_create(&w->nic, &ca, &w->cq) == 0);
	memset(&qa, 0, sizeof(qa));
	qa.sq_depth = SQ_DEPTH;
	qa.max_inline = 128;
	qa.rq_depth = RQ_DEPTH;
	qa.rq_max_sge = 1;
	qa.send_cq = &w->cq;
	qa.recv_cq = &w->cq;
	qa.flags = DVX_QP_F_CD_MASTER;
	qa.wq_umem = &w->umem;
	qa.wq_offset = 16u << 10;
	qa.dbr_umem = &w->umem;
	qa.dbr_offset = (48u << 10) + 64;
	LF_CHECK(dvx_qp_create(&w->nic, &qa, &w->qp) == 0);
	dvx_qp_connect_cfg_init(&conn);
	conn.access = DVX_ACCESS_REMOTE_WRITE | DVX_ACCESS_REMOTE_READ | DVX_ACCESS_REMOTE_ATOMIC;
	conn.rnr_retry = 0;
	LF_CHECK(dvx_qp_connect_loopback(&w->qp, &conn) == 0);
}

static void world_fini(struct world *w)
{
	struct dvx_sim_stats st;
	unsigned i;

	LF_CHECK(dvx_qp_destroy(&w->qp) == 0);
	LF_CHECK(dvx_cq_destroy(&w->cq) == 0);
	LF_CHECK(dvx_mr_dereg(&w->mrb) == 0);
	LF_CHECK(dvx_mr_dereg(&w->mra) == 0);
	if (w->fd >= 0)
		LF_CHECK(dvx_sim_dmabuf_release(w->fab, w->fd) == 0);
	LF_CHECK(dvx_umem_dereg(&w->umem) == 0);
	LF_CHECK(dvx_nic_close(&w->nic) == 0);
	LF_CHECK(dvx_sim_get_stats(w->fab, &st) == 0);
	for (i = 0; i < DVX_SIM_LIVE_GPU_MEM; i++)
		LF_CHECK(st.live[i] == 0);
	LF_CHECK(dvx_sim_fini(w->fab) == 0);
	free(w->storage);
}

/* step the NIC until it has nothing left to do (bounded: a WAIT may wait forever) */
static void run_nic(struct world *w)
{
	unsigned i;

	for (i = 0; i < 64; i++)
		if (!dvx_sim_step(w->fab))
			break;
}

struct tally {
	uint64_t posted;	/* WQEBBs rung, all rounds */
	uint64_t wqes;		/* WQE starts rung (upper bound on requester CQEs) */
	uint64_t recvs;		/* receives posted */
	uint64_t cqes;
	uint64_t errors;	/* error CQEs */
	uint16_t done;		/* the oldest WQEBB not yet seen completed */
};

static void poll_all(struct world *w, struct tally *t)
{
	struct dvx_mlx5_cqe_info info;
	int r;

	while ((r = dvx_mlx5_cq_poll_one(&w->cq.mcq, &info)) != 0) {
		t->cqes++;
		LF_CHECK(t->cqes <= t->wqes + t->recvs);
		LF_CHECK(info.qpn == w->qp.qpn);
		if (r < 0) {
			LF_CHECK(info.is_error || info.opcode == DVX_MLX5_CQE_SIG_ERR ||
				 info.format == DVX_MLX5_CQE_FORMAT_COMPRESSED);
			LF_CHECK(!info.is_error ||
				 strcmp(dvx_mlx5_syndrome_name(info.syndrome), "UNKNOWN") != 0);
			t->errors += info.is_error;
			continue;
		}
		LF_CHECK(r == 1);
		if (info.opcode == DVX_MLX5_CQE_REQ) {
			/* a WQEBB posted and not yet completed */
			uint16_t ahead = (uint16_t)(info.wqe_counter - t->done);

			LF_CHECK(ahead < (uint16_t)(t->posted - t->done));
			t->done = (uint16_t)(info.wqe_counter + 1);
			dvx_mlx5_sq_completed(&w->qp.sq, &w->qp.sqc, info.wqe_counter);
		}
	}
	dvx_mlx5_cq_update_ci(&w->cq.mcq);
}

static void recover(struct world *w, struct tally *t)
{
	run_nic(w);
	poll_all(w, t);
	LF_CHECK(dvx_qp_recover(&w->qp) == 0);
	t->posted = t->done = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *dp, size_t size)
{
	struct lf_in in = { dp, size };
	struct tally t = { 0, 0, 0, 0, 0, 0 };
	unsigned b0 = lf_u8(&in), nrecv = b0 & 7, round, i;
	struct dvx_sim_stats ss;
	uint64_t dma_err = 0, errs;
	struct world w;
	uint32_t st;

	world_init(&w, b0);
	for (i = 0; i < nrecv; i++) {
		struct dvx_mlx5_sge s = { MR_A + 256u * i, 256, w.mra.lkey };

		LF_CHECK(dvx_mlx5_rq_post(&w.qp.rq, &s, 1) >= 0);
		t.recvs++;
	}
	if (nrecv)
		dvx_mlx5_rq_ring(&w.qp.rq);

	for (round = 0; round < MAX_ROUNDS && in.n; round++) {
		uint8_t hdr = lf_u8(&in);
		uint32_t n = (hdr & 15u) + 1, k;
		uint64_t idx = 0;

		if (dvx_mlx5_sq_room(&w.qp.sq, &w.qp.sqc) < n) {
			/* clogged (a WAIT that never fires, unsignaled WQEs): start over */
			LF_CHECK(dvx_qp_to_err(&w.qp) == 0);
			recover(&w, &t);
		}
		LF_CHECK(dvx_mlx5_sq_reserve(&w.qp.sq, &w.qp.sqc, n, DVX_MLX5_SQ_SINGLE, &idx) == 0);
		for (k = 0; k < n; k++)
			lf_bytes(&in, dvx_mlx5_wq_wqebb(&w.qp.sq.wq, (uint32_t)idx + k), 64);
		if (hdr & 16) {
			struct dvx_mlx5_wqe_ctrl_seg *c = (struct dvx_mlx5_wqe_ctrl_seg *)
				dvx_mlx5_wq_wqebb(&w.qp.sq.wq, (uint32_t)idx);
			uint32_t oi = dvx_be32_to_cpu(c->opmod_idx_opcode);

			c->opmod_idx_opcode = dvx_cpu_to_be32((oi & 0xff0000ffu) |
							      ((uint32_t)(uint16_t)idx << 8));
			c->qpn_ds = dvx_cpu_to_be32(w.qp.qpn << 8 |
						    (dvx_be32_to_cpu(c->qpn_ds) & 0xff));
		}
		if (lf_verbose()) {
			static struct dvx_mlx5_wqe_desc d;
			uint8_t *ring = dvx_mlx5_wq_wqebb(&w.qp.sq.wq, 0);

			dvx_mlx5_wqe_decode(ring, SQ_DEPTH * 64, (uint32_t)idx, &d);
			fprintf(stderr, "sim-wqe: round %u: %u WQEBB(s) at %u: %s ds %u%s%s\n",
				round, n, (uint32_t)idx, dvx_mlx5_opcode_name(d.opcode), d.ds,
				d.error ? ", undecodable: " : "",
				d.error ? dvx_mlx5_wqe_error_str(d.error) : "");
		}
		t.posted += n;
		t.wqes += n;	/* each WQEBB may start a WQE, as far as the NIC knows */
		errs = t.errors;
		dvx_mlx5_sq_ring_db(&w.qp.sq, &w.qp.sqc, w.qp.sqc.resv);
		run_nic(&w);
		poll_all(&w, &t);
		check_memory();
		/* a failed copy is an error completion, never a success */
		LF_CHECK(dvx_sim_get_stats(w.fab, &ss) == 0);
		LF_CHECK(ss.dma_errors == dma_err || t.errors > errs);
		LF_CHECK(dev.fail || ss.dma_errors == 0);
		dma_err = ss.dma_errors;
		LF_CHECK(dvx_qp_query(&w.qp, NULL, &st) == 0);
		if (lf_verbose())
			fprintf(stderr, "sim-wqe: round %u: %llu CQEs so far, QP state %u\n", round,
				(unsigned long long)t.cqes, st);
		LF_CHECK(st == DVX_MLX5_QP_STATE_RTS || st == DVX_MLX5_QP_STATE_ERR);
		if (st == DVX_MLX5_QP_STATE_ERR)
			recover(&w, &t);
	}
	run_nic(&w);
	poll_all(&w, &t);
	check_memory();
	world_fini(&w);
	return 0;
}

/* ---- seeds: a WQE of every kind from the builders, aimed at MR A and MR B ---- */

static void write_seeds(void)
{
	static uint8_t buf[1 + MAX_ROUNDS * (1 + 16 * 64)];
	static uint8_t ring[SQ_DEPTH * 64] DVX_ALIGNED(64);
	uint8_t payload[96];
	struct dvx_mlx5_sge sg[2];
	struct dvx_mlx5_wq wq;
	struct world w;
	uint32_t a, b, la, qpn, cqn, k;
	char name[48];
	size_t len;

	world_init(&w, 0);
	a = w.mra.rkey;
	b = w.mrb.rkey;
	la = w.mra.lkey;
	qpn = w.qp.qpn;
	cqn = w.cq.mcq.cqn;
	world_fini(&w);
	/* the world with the MRs in device memory has the same keys and numbers */
	world_init(&w, DEV_A | DEV_B);
	LF_CHECK(w.mra.rkey == a && w.mrb.rkey == b && w.mra.lkey == la && w.qp.qpn == qpn &&
		 w.cq.mcq.cqn == cqn);
	world_fini(&w);
	for (k = 0; k < sizeof(payload); k++)
		payload[k] = (uint8_t)(0xc0 + k);
	sg[0] = (struct dvx_mlx5_sge){ MR_A + 0x1000, 64, la };
	sg[1] = (struct dvx_mlx5_sge){ MR_A + 0x2000, 32, la };

	for (k = 0; k < 15; k++) {
		const uint8_t sig = DVX_MLX5_WQE_CTRL_CQ_UPDATE;
		int n;

		memset(ring, 0, sizeof(ring));
		LF_CHECK(dvx_mlx5_wq_init(&wq, ring, SQ_DEPTH, qpn, 128) == 0);
		switch (k) {
		case 0: n = dvx_mlx5_wqe_nop(&wq, 0, sig); break;
		case 1: n = dvx_mlx5_wqe_rdma_write(&wq, 0, sig, MR_A + 0x3000, a, MR_A, la, 256);
			break;
		case 2: n = dvx_mlx5_wqe_rdma_read(&wq, 0, sig, MR_B + 0x100, b, MR_A + 0x800, la,
						   512); break;
		case 3: n = dvx_mlx5_wqe_atomic_fa(&wq, 0, sig, MR_A + 0x40, a, 5, MR_A + 0x48, la);
			break;
		case 4:
			n = dvx_mlx5_wqe_atomic_cs(&wq, 0, sig,
						   &(struct dvx_mlx5_raddr){ MR_A + 0x40, a },
						   0x4746454443424140ull, 9, MR_A + 0x50, la);
			break;
		case 5:
			n = dvx_mlx5_wqe_masked_fa64(&wq, 0, sig,
						     &(struct dvx_mlx5_raddr){ MR_A + 0x60, a }, 3,
						     0x80, MR_A + 0x68, la);
			break;
		case 6:
			n = dvx_mlx5_wqe_masked_cs32(&wq, 0, sig,
						     &(struct dvx_mlx5_raddr){ MR_A + 0x70, a },
						     &(struct dvx_mlx5_masked_cs){ 0, 0, 1, 0xff },
						     MR_A + 0x78, la);
			break;
		case 7:
			n = dvx_mlx5_wqe_rdma_write_inline(&wq, 0, DVX_MLX5_OPCODE_RDMA_WRITE_IMM,
							   sig, 0x1234,
							   &(struct dvx_mlx5_raddr){ MR_A + 0x3800,
										     a },
							   payload, sizeof(payload));
			break;
		case 8: n = dvx_mlx5_wqe_send_sgl(&wq, 0, DVX_MLX5_OPCODE_SEND_IMM, sig, 0x77, sg, 2);
			break;
		case 9: /* a NOP, a WAIT for its CQE, a NOP the WAIT held back */
			LF_CHECK(dvx_mlx5_wqe_nop(&wq, 0, sig) == 1);
			LF_CHECK(dvx_mlx5_wqe_wait_cq(&wq, 1, sig, cqn, 0) == 1);
			n = 2 + dvx_mlx5_wqe_nop(&wq, 2, sig);
			break;
		case 10: n = dvx_mlx5_wqe_send_en(&wq, 0, sig, qpn, 1); break;
		case 11: /* a WRITE into MR B: refused (remote read only) */
			n = dvx_mlx5_wqe_rdma_write(&wq, 0, sig, MR_B, b, MR_A, la, 64); break;
		case 12: /* a WRITE running past MR A's end: refused */
			n = dvx_mlx5_wqe_rdma_write(&wq, 0, sig, MR_A + SPAN - 32, a, MR_A, la, 64);
			break;
		case 13: /* a READ into MR B: refused (no local write) */
			n = dvx_mlx5_wqe_rdma_read(&wq, 0, sig, MR_A, a, MR_B, w.mrb.lkey, 64); break;
		default:
			n = dvx_mlx5_wqe_masked_cs64(&wq, 0, sig,
						     &(struct dvx_mlx5_raddr){ MR_A + 0x80, a },
						     &(struct dvx_mlx5_masked_cs){ 1, 0xff, 2,
										   0xf0 },
						     MR_A + 0x90, la);
			break;
		}
		LF_CHECK(n >= 1);
		buf[0] = (k == 7 || k == 8) ? 2 : 0;	/* WRITE_IMM and SEND find receives */
		buf[1] = (uint8_t)(n - 1);
		memcpy(buf + 2, ring, (size_t)n * 64);
		len = 2 + (size_t)n * 64;
		snprintf(name, sizeof(name), "builder-%02u", k);
		lf_seed(name, buf, len);
		/* the same with MR A and MR B in device memory (the keys are the same: the
		 * MRs take the same slots), and with MR A's copies at 0x1000 failing */
		buf[0] |= DEV_A | DEV_B;
		snprintf(name, sizeof(name), "builder-dev-%02u", k);
		lf_seed(name, buf, len);
		if (k >= 1 && k <= 8) {
			buf[0] |= DEV_FAIL;
			snprintf(name, sizeof(name), "builder-devfail-%02u", k);
			lf_seed(name, buf, len);
		}
	}
	/* reorder mode: a READ into a buffer the next WRITE sends, unfenced and fenced
	 * (the early gather may send the old bytes only without the fence), and a 4 KiB
	 * WRITE placed in chunks */
	for (k = 0; k < 3; k++) {
		uint8_t fence = k == 1 ? DVX_MLX5_WQE_CTRL_FM(DVX_MLX5_FM_FENCE) : 0;
		int n;

		memset(ring, 0, sizeof(ring));
		LF_CHECK(dvx_mlx5_wq_init(&wq, ring, SQ_DEPTH, qpn, 128) == 0);
		if (k < 2) {
			LF_CHECK(dvx_mlx5_wqe_rdma_read(&wq, 0, DVX_MLX5_WQE_CTRL_CQ_UPDATE,
							MR_A + 0x100, a, MR_A + 0x1000, la, 64) == 1);
			n = 1 + dvx_mlx5_wqe_rdma_write(&wq, 1, DVX_MLX5_WQE_CTRL_CQ_UPDATE | fence,
							MR_A + 0x2000, a, MR_A + 0x1000, la, 64);
		} else {
			n = dvx_mlx5_wqe_rdma_write(&wq, 0, DVX_MLX5_WQE_CTRL_CQ_UPDATE,
						    MR_A + 0x2000, a, MR_A, la, 4096);
		}
		LF_CHECK(n >= 1);
		buf[0] = (uint8_t)(REORDER | k);	/* seed k + 1, k receives */
		buf[1] = (uint8_t)(n - 1);
		memcpy(buf + 2, ring, (size_t)n * 64);
		len = 2 + (size_t)n * 64;
		snprintf(name, sizeof(name), "reorder-%02u", k);
		lf_seed(name, buf, len);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	size_t i;
	void *p;

	(void)argc;
	(void)argv;
	p = mmap((void *)(uintptr_t)DATA_BASE, DATA_BYTES, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p != (void *)(uintptr_t)DATA_BASE) {
		fprintf(stderr, "sim-wqe: cannot map the MRs at 0x%llx\n", DATA_BASE);
		exit(1);
	}
	data = p;
	memset(want_guard, GUARD, SPAN);
	for (i = 0; i < SPAN; i++)
		want_b[i] = pattern_b(i);
	qarea = aligned_alloc(4096, QMEM + 2 * 4096);
	LF_CHECK(qarea != NULL);
	lf_seed_mode(write_seeds);
	return 0;
}
