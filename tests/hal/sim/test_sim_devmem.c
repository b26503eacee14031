// SPDX-License-Identifier: MIT
/*
 * Data in device memory on the software NIC: MRs over dvx_sim_dmabuf_export_dma()
 * dma-bufs, whose bytes the sim reaches only through the caller's DMA callbacks
 * (docs/sim.md "Data in GPU memory"). The "device" here is a host arena behind
 * callbacks whose device addresses are no host addresses: DEV_BASE + offset, a range
 * the test maps PROT_NONE where it can, so a direct dereference by the sim faults.
 *
 * Through the core objects (dvx_mr_reg() with DVX_MR_F_DMABUF, dvx_qp_post_*(),
 * dvx_cq_poll()) between two NICs of one fabric, stepped: WRITE (host to device, device
 * to host, device to device, a mixed gather list), WRITE_IMM, SEND from a mixed gather
 * list into a mixed scatter list, READ (every combination, a mixed scatter list), FA,
 * CS, masked FA/CS of 4 and 8 bytes with results in device memory, inline WRITE and SEND
 * into device memory; every byte checked, and the bytes around untouched. Failure
 * injection (a device range whose copies fail): the gather, the placement, a READ's
 * source and scatter, an atomic's target and result, a SEND's receive buffers; each an
 * error completion with the syndrome hardware reports, counted in dma_errors, never a
 * success. The reorder mode over device memory (chunked placement, early gathers).
 * The wire (processes) is in sim-wire-test (test_dev_ops, test_dev_fail).
 */
#include "../../lib/dvx_test.h"

#include <errno.h>
#include <sys/mman.h>

#include <dvx/hal/sim.h>
#include <dvx/mlx5/wqe.h>
#include <dvx/nic/cq.h>
#include <dvx/nic/mr.h>
#include <dvx/nic/nic.h>
#include <dvx/nic/post.h>
#include <dvx/nic/qp.h>
#include <dvx/nic/umem.h>

#include "../../../hal/sim/exec.h"	/* the sim's vendor syndromes (enum sim_exec_vendor) */

#define DEV_BASE 0x7e0000000000ull	/* device addresses: no host address */
#define DEV_PER (256u << 10)		/* device memory per NIC */
#define H_LEN (256u << 10)		/* host data per NIC */
#define Q_MEM (1u << 20)
#define DEPTH 64u
#define ALL_ACCESS (DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_WRITE | \
		    DVX_ACCESS_REMOTE_READ | DVX_ACCESS_REMOTE_ATOMIC)
#define SPINS 200000

/* the "device": an arena the callbacks copy from and to */
static struct {
	uint8_t *arena;			/* 2 * DEV_PER */
	void *guard;			/* PROT_NONE over the device addresses, or NULL */
	uint64_t fail_lo, fail_hi;	/* a copy touching [lo, hi) fails */
	unsigned reads, writes, fails;
} D;

static int dev_range(uint64_t a, uint64_t len)
{
	return a >= DEV_BASE && a - DEV_BASE <= 2ull * DEV_PER && len <= 2ull * DEV_PER - (a - DEV_BASE);
}

static int dev_poisoned(uint64_t a, uint64_t len)
{
	return a < D.fail_hi && a + len > D.fail_lo;
}

static int dev_read(void *arg, void *dst, uint64_t src, uint64_t len)
{
	assert_ptr_equal(arg, &D);
	assert_true(len > 0);
	if (!dev_range(src, len))
		return -EFAULT;
	if (dev_poisoned(src, len)) {
		D.fails++;
		return -EIO;
	}
	memcpy(dst, D.arena + (src - DEV_BASE), len);
	D.reads++;
	return 0;
}

static int dev_write(void *arg, uint64_t dst, const void *src, uint64_t len)
{
	assert_ptr_equal(arg, &D);
	assert_true(len > 0);
	if (!dev_range(dst, len))
		return -EFAULT;
	if (dev_poisoned(dst, len)) {
		D.fails++;
		return -EIO;
	}
	memcpy(D.arena + (dst - DEV_BASE), src, len);
	D.writes++;
	return 0;
}

static const struct dvx_sim_dma dma = { dev_read, dev_write, &D };

struct rk {
	struct dvx_nic nic;
	struct dvx_umem umem;
	struct dvx_mr hmr;	/* host data */
	struct dvx_mr dmr;	/* device data, iova = device address */
	struct dvx_cq scq, rcq;
	struct dvx_qp qp;
	uint8_t *mem, *h;
	int fd;
	uint64_t sq_ids[DEPTH], rq_ids[16];
};

static struct {
	void *storage;
	struct dvx_sim_fabric *fab;
	struct rk r[2];
} W;

static uint64_t dptr(int r, uint64_t off)
{
	return DEV_BASE + (uint64_t)r * DEV_PER + off;
}

/* the device's bytes as the device sees them (the test stands for the GPU) */
static uint8_t *dmem(int r, uint64_t off)
{
	return D.arena + (uint64_t)r * DEV_PER + off;
}

static uint64_t hva(int r, uint64_t off)
{
	return (uint64_t)(uintptr_t)(W.r[r].h + off);
}

static uint8_t pat(unsigned seed, size_t i)
{
	return (uint8_t)(seed * 29u + i * 7u + (i >> 8));
}

static void fill(uint8_t *p, size_t len, unsigned seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pat(seed, i);
}

static void expect_pat(const uint8_t *p, size_t len, unsigned seed, size_t from)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pat(seed, from + i))
			fail_msg("byte %zu: %#x, want %#x", i, p[i], pat(seed, from + i));
}

static void rank_up(int i)
{
	struct rk *r = &W.r[i];
	struct dvx_nic_cfg na;
	struct dvx_umem_cfg ua;
	struct dvx_mr_cfg ma;
	struct dvx_cq_cfg ca;
	struct dvx_qp_cfg qa;
	struct dvx_mem_req wq, dbr;
	char name[16];

	snprintf(name, sizeof(name), "sim_%d", i);
	memset(&na, 0, sizeof(na));
	na.name = name;
	na.gid_index = -1;
	assert_int_equal(dvx_nic_open(&r->nic, dvx_sim_hal(W.fab), &na), 0);
	assert_int_equal(posix_memalign((void **)&r->mem, 4096, Q_MEM), 0);
	assert_int_equal(posix_memalign((void **)&r->h, 4096, H_LEN), 0);
	memset(r->mem, 0, Q_MEM);
	memset(r->h, 0, H_LEN);
	memset(&ua, 0, sizeof(ua));
	ua.addr = r->mem;
	ua.len = Q_MEM;
	ua.dmabuf_fd = -1;
	assert_int_equal(dvx_umem_reg(&r->nic, &ua, &r->umem), 0);
	memset(&ma, 0, sizeof(ma));
	ma.addr = r->h;
	ma.len = H_LEN;
	ma.access = ALL_ACCESS;
	ma.dmabuf_fd = -1;
	assert_int_equal(dvx_mr_reg(&r->nic, &ma, &r->hmr), 0);
	/* the device memory: a dma-buf the sim reaches through the callbacks only */
	assert_int_equal(dvx_sim_dmabuf_export_dma(W.fab, dptr(i, 0), DEV_PER, &dma, &r->fd), 0);
	memset(&ma, 0, sizeof(ma));
	ma.addr = (void *)(uintptr_t)dptr(i, 0);
	ma.len = DEV_PER;
	ma.access = ALL_ACCESS;
	ma.flags = DVX_MR_F_DMABUF;
	ma.dmabuf_fd = r->fd;
	assert_int_equal(dvx_mr_reg(&r->nic, &ma, &r->dmr), 0);
	assert_int_equal(r->dmr.iova, dptr(i, 0));

	memset(&ca, 0, sizeof(ca));
	ca.depth = 4 * DEPTH;
	ca.ring_umem = &r->umem;
	ca.ring_offset = 0;
	ca.dbr_umem = &r->umem;
	ca.dbr_offset = Q_MEM - 64;
	assert_int_equal(dvx_cq_create(&r->nic, &ca, &r->scq), 0);
	ca.ring_offset = DVX_CQ_RING_BYTES(4 * DEPTH);
	ca.dbr_offset = Q_MEM - 128;
	assert_int_equal(dvx_cq_create(&r->nic, &ca, &r->rcq), 0);
	memset(&qa, 0, sizeof(qa));
	qa.sq_depth = DEPTH;
	qa.max_inline = 256;
	qa.rq_depth = 16;
	qa.rq_max_sge = 4;
	qa.send_cq = &r->scq;
	qa.recv_cq = &r->rcq;
	qa.sq_wr_ids = r->sq_ids;
	qa.rq_wr_ids = r->rq_ids;
	assert_int_equal(dvx_qp_mem_req(&qa, &wq, &dbr), 0);
	qa.wq_umem = &r->umem;
	qa.wq_offset = 2 * DVX_CQ_RING_BYTES(4 * DEPTH);
	qa.dbr_umem = &r->umem;
	qa.dbr_offset = Q_MEM - 192;
	assert_true(qa.wq_offset % wq.align == 0 && qa.wq_offset + wq.bytes < Q_MEM - 256);
	assert_int_equal(dvx_qp_create(&r->nic, &qa, &r->qp), 0);
}

static void rank_down(struct rk *r)
{
	assert_int_equal(dvx_qp_destroy(&r->qp), 0);
	assert_int_equal(dvx_cq_destroy(&r->rcq), 0);
	assert_int_equal(dvx_cq_destroy(&r->scq), 0);
	assert_int_equal(dvx_mr_dereg(&r->dmr), 0);
	assert_int_equal(dvx_mr_dereg(&r->hmr), 0);
	assert_int_equal(dvx_sim_dmabuf_release(W.fab, r->fd), 0);
	assert_int_equal(dvx_umem_dereg(&r->umem), 0);
	assert_int_equal(dvx_nic_close(&r->nic), 0);
	free(r->mem);
	free(r->h);
}

static int setup(void **state)
{
	struct dvx_sim_fabric_cfg fc;
	struct dvx_sim_nic_cfg nc;
	struct dvx_qp_connect_cfg cn;
	size_t len;
	int i;

	(void)state;
	memset(&W, 0, sizeof(W));
	memset(&D, 0, sizeof(D));
	assert_int_equal(posix_memalign((void **)&D.arena, 4096, 2 * DEV_PER), 0);
	memset(D.arena, 0, 2 * DEV_PER);
	/* the device addresses fault in this process, where the range is free */
	D.guard = mmap((void *)(uintptr_t)DEV_BASE, 2 * DEV_PER, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (D.guard == MAP_FAILED || D.guard != (void *)(uintptr_t)DEV_BASE) {
		if (D.guard != MAP_FAILED)
			munmap(D.guard, 2 * DEV_PER);
		D.guard = NULL;
	}
	dvx_sim_fabric_cfg_default(&fc);
	len = dvx_sim_fabric_mem_size(&fc);
	W.storage = malloc(len);
	assert_non_null(W.storage);
	assert_int_equal(dvx_sim_fabric_init(W.storage, len, &fc, &W.fab), 0);
	assert_int_equal(dvx_sim_set_reorder(W.fab, 0, 0), 0);
	for (i = 0; i < 2; i++) {
		dvx_sim_nic_cfg_default(&nc, (unsigned)i);
		assert_int_equal(dvx_sim_add_nic(W.fab, &nc), i);
	}
	rank_up(0);
	rank_up(1);
	dvx_qp_connect_cfg_init(&cn);
	cn.access = DVX_ACCESS_REMOTE_WRITE | DVX_ACCESS_REMOTE_READ | DVX_ACCESS_REMOTE_ATOMIC;
	assert_int_equal(dvx_qp_connect_pair(&W.r[0].qp, &W.r[1].qp, &cn), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	rank_down(&W.r[0]);
	rank_down(&W.r[1]);
	assert_int_equal(dvx_sim_fini(W.fab), 0);
	free(W.storage);
	if (D.guard)
		munmap(D.guard, 2 * DEV_PER);
	free(D.arena);
	return 0;
}

/* ---- posting and polling -------------------------------------------------------- */

static int poll_wc(struct dvx_cq *cq, struct dvx_wc *wc)
{
	int k, rc = 0;

	for (k = 0; k < SPINS && !rc; k++) {
		rc = dvx_cq_poll(cq, wc);
		if (!rc)
			dvx_sim_step(W.fab);
	}
	return rc;
}

static void expect_ok(struct dvx_cq *cq, uint64_t wr_id, uint32_t opcode, uint32_t bytes)
{
	struct dvx_wc wc;

	memset(&wc, 0xa5, sizeof(wc));
	assert_int_equal(poll_wc(cq, &wc), 1);
	assert_int_equal(wc.status, 0);
	assert_int_equal(wc.wr_id, wr_id);
	assert_int_equal(wc.opcode, opcode);
	if (opcode != DVX_WC_RDMA_WRITE && opcode != DVX_WC_SEND)
		assert_int_equal(wc.byte_len, bytes);
}

/* an error completion on @cq: the WQE, the syndrome, the sim's reason */
static void expect_fail(struct dvx_cq *cq, uint64_t wr_id, uint8_t synd, uint8_t vendor)
{
	struct dvx_wc wc;

	memset(&wc, 0xa5, sizeof(wc));
	assert_true(poll_wc(cq, &wc) < 0);
	assert_int_equal(wc.wr_id, wr_id);
	assert_int_equal(wc.syndrome, synd);
	assert_int_equal(wc.vendor_syndrome, vendor);
}

/* a WQE of the mlx5 builders posted through the core's claim and done */
#define POST(qp, nbb, id, flags, build)                                                 \
	do {                                                                             \
		uint64_t t_ = 0;                                                         \
		assert_int_equal(dvx_post_claim((qp), (nbb), &t_), 0);                   \
		assert_int_equal(dvx_post_done((qp), t_, build, (id), (flags)), 0);      \
	} while (0)

static uint64_t dma_errors(void)
{
	struct dvx_sim_stats st;

	assert_int_equal(dvx_sim_get_stats(W.fab, &st), 0);
	return st.dma_errors;
}

static uint32_t qp_state(struct dvx_qp *qp)
{
	uint32_t s = 0;

	assert_int_equal(dvx_qp_query(qp, NULL, &s), 0);
	return s;
}

/* ---- the operations ------------------------------------------------------------ */

/* WRITE in every combination, a mixed gather list, WRITE_IMM into a receive */
static void test_write(void **state)
{
	struct dvx_qp *a = &W.r[0].qp, *b = &W.r[1].qp;
	uint32_t dl = W.r[0].dmr.lkey, hl = W.r[0].hmr.lkey;
	uint32_t drk = W.r[1].dmr.rkey, hrk = W.r[1].hmr.rkey;
	struct dvx_mlx5_sge g[4] = {
		{ hva(0, 0x9000), 100, hl },
		{ dptr(0, 0x9000), 200, dl },
		{ hva(0, 0x9100), 300, hl },
		{ dptr(0, 0xa000), 5000, dl },
	};
	struct dvx_sim_stats st;
	uint8_t *o;

	(void)state;
	fill(W.r[0].h, H_LEN, 1);
	fill(dmem(0, 0), DEV_PER, 2);
	memset(dmem(1, 0), 0xee, DEV_PER);
	memset(W.r[1].h, 0xee, H_LEN);

	/* host -> device, device -> host, device -> device (40000 B: the bounce, in pieces) */
	assert_int_equal(dvx_qp_post_write(a, 1, hva(0, 0), hl, 1000, dptr(1, 0x100), drk,
					   DVX_POST_SIGNALED), 0);
	assert_int_equal(dvx_qp_post_write(a, 2, dptr(0, 0x1000), dl, 4096, hva(1, 0x2000), hrk,
					   DVX_POST_SIGNALED), 0);
	assert_int_equal(dvx_qp_post_write(a, 3, dptr(0, 0x3000), dl, 40000, dptr(1, 0x10000),
					   drk, DVX_POST_SIGNALED), 0);
	/* a gather list of host and device pieces into device memory */
	POST(a, 2, 4, DVX_POST_SIGNALED,
	     dvx_mlx5_wqe_rdma_sgl(&a->sq.wq, (uint32_t)t_, DVX_MLX5_OPCODE_RDMA_WRITE,
				   DVX_MLX5_WQE_CTRL_CQ_UPDATE, 0,
				   &(struct dvx_mlx5_raddr){ dptr(1, 0x20000), drk }, g, 4));
	/* WRITE_IMM from device memory into device memory, consuming a receive */
	assert_int_equal(dvx_qp_post_recv(b, 50, 0, 0, 0, 0), 0);
	assert_int_equal(dvx_qp_post_write_imm(a, 5,
					       &(struct dvx_mlx5_sge){ dptr(0, 0x30000), 777, dl },
					       &(struct dvx_mlx5_raddr){ dptr(1, 0x30000), drk },
					       0x12345678, DVX_POST_SIGNALED), 0);
	expect_ok(&W.r[0].scq, 1, DVX_WC_RDMA_WRITE, 0);
	expect_ok(&W.r[0].scq, 2, DVX_WC_RDMA_WRITE, 0);
	expect_ok(&W.r[0].scq, 3, DVX_WC_RDMA_WRITE, 0);
	expect_ok(&W.r[0].scq, 4, DVX_WC_RDMA_WRITE, 0);
	expect_ok(&W.r[0].scq, 5, DVX_WC_RDMA_WRITE, 0);
	{
		struct dvx_wc wc;

		assert_int_equal(poll_wc(&W.r[1].rcq, &wc), 1);
		assert_int_equal(wc.opcode, DVX_WC_RECV_RDMA_WITH_IMM);
		assert_int_equal(wc.imm, 0x12345678);
		assert_int_equal(wc.byte_len, 777);
	}

	expect_pat(dmem(1, 0x100), 1000, 1, 0);
	assert_int_equal(*dmem(1, 0xff), 0xee);
	assert_int_equal(*dmem(1, 0x100 + 1000), 0xee);
	expect_pat(W.r[1].h + 0x2000, 4096, 2, 0x1000);
	assert_int_equal(W.r[1].h[0x1fff], 0xee);
	assert_int_equal(W.r[1].h[0x3000], 0xee);
	expect_pat(dmem(1, 0x10000), 40000, 2, 0x3000);
	assert_int_equal(*dmem(1, 0x10000 + 40000), 0xee);
	o = dmem(1, 0x20000);
	expect_pat(o, 100, 1, 0x9000);
	expect_pat(o + 100, 200, 2, 0x9000);
	expect_pat(o + 300, 300, 1, 0x9100);
	expect_pat(o + 600, 5000, 2, 0xa000);
	assert_int_equal(o[5600], 0xee);
	expect_pat(dmem(1, 0x30000), 777, 2, 0x30000);
	assert_int_equal(*dmem(1, 0x30000 + 777), 0xee);

	assert_int_equal(dvx_sim_get_stats(W.fab, &st), 0);
	assert_int_equal(st.dma_errors, 0);
	assert_true(st.dma_reads >= 5 && st.dma_writes >= 5);
	assert_int_equal(D.fails, 0);
}

/* SEND (and SEND_IMM) from a mixed gather list into a mixed scatter list */
static void test_send_scatter(void **state)
{
	struct dvx_qp *a = &W.r[0].qp, *b = &W.r[1].qp;
	uint32_t dl0 = W.r[0].dmr.lkey, hl0 = W.r[0].hmr.lkey;
	uint32_t dl1 = W.r[1].dmr.lkey, hl1 = W.r[1].hmr.lkey;
	struct dvx_mlx5_sge g[3] = {
		{ dptr(0, 0x1000), 1000, dl0 },
		{ hva(0, 0x2000), 1500, hl0 },
		{ dptr(0, 0x5000), 630, dl0 },
	};
	struct dvx_mlx5_sge s[4] = {
		{ dptr(1, 0x100), 10, dl1 },
		{ hva(1, 0x200), 20, hl1 },
		{ dptr(1, 0x1000), 3000, dl1 },
		{ hva(1, 0x4000), 200, hl1 },
	};
	struct dvx_wc wc;
	uint8_t msg[3130];

	(void)state;
	fill(W.r[0].h, H_LEN, 3);
	fill(dmem(0, 0), DEV_PER, 4);
	memset(dmem(1, 0), 0xee, DEV_PER);
	memset(W.r[1].h, 0xee, H_LEN);
	memcpy(msg, dmem(0, 0x1000), 1000);
	memcpy(msg + 1000, W.r[0].h + 0x2000, 1500);
	memcpy(msg + 2500, dmem(0, 0x5000), 630);

	assert_true(dvx_mlx5_rq_post(&b->rq, s, 4) >= 0);
	assert_true(dvx_mlx5_rq_post(&b->rq, s, 4) >= 0);
	dvx_mlx5_rq_ring(&b->rq);
	POST(a, 1, 7, DVX_POST_SIGNALED,
	     dvx_mlx5_wqe_send_sgl(&a->sq.wq, (uint32_t)t_, DVX_MLX5_OPCODE_SEND,
				   DVX_MLX5_WQE_CTRL_CQ_UPDATE, 0, g, 3));
	expect_ok(&W.r[0].scq, 7, DVX_WC_SEND, 0);
	assert_int_equal(poll_wc(&W.r[1].rcq, &wc), 1);
	assert_int_equal(wc.opcode, DVX_WC_RECV);
	assert_int_equal(wc.byte_len, 3130);
	assert_memory_equal(dmem(1, 0x100), msg, 10);
	assert_memory_equal(W.r[1].h + 0x200, msg + 10, 20);
	assert_memory_equal(dmem(1, 0x1000), msg + 30, 3000);
	assert_memory_equal(W.r[1].h + 0x4000, msg + 3030, 100);
	assert_int_equal(*dmem(1, 0xff), 0xee);
	assert_int_equal(*dmem(1, 0x10a), 0xee);
	assert_int_equal(*dmem(1, 0x1000 + 3000), 0xee);
	assert_int_equal(W.r[1].h[0x4000 + 100], 0xee);

	/* SEND_IMM of device bytes only, into the second receive */
	memset(dmem(1, 0), 0xee, DEV_PER);
	POST(a, 1, 8, DVX_POST_SIGNALED,
	     dvx_mlx5_wqe_send_sgl(&a->sq.wq, (uint32_t)t_, DVX_MLX5_OPCODE_SEND_IMM,
				   DVX_MLX5_WQE_CTRL_CQ_UPDATE, 0xfeed, &g[2], 1));
	expect_ok(&W.r[0].scq, 8, DVX_WC_SEND, 0);
	assert_int_equal(poll_wc(&W.r[1].rcq, &wc), 1);
	assert_int_equal(wc.byte_len, 630);
	assert_int_equal(wc.imm, 0xfeed);
	assert_memory_equal(dmem(1, 0x100), msg + 2500, 10);
	assert_memory_equal(W.r[1].h + 0x200, msg + 2510, 20);
	assert_memory_equal(dmem(1, 0x1000), msg + 2530, 600);
	assert_int_equal(*dmem(1, 0x1000 + 600), 0xee);
	assert_int_equal(dma_errors(), 0);
}

/* READ in every combination, into a mixed scatter list */
static void test_read(void **state)
{
	struct dvx_qp *a = &W.r[0].qp;
	uint32_t dl = W.r[0].dmr.lkey, hl = W.r[0].hmr.lkey;
	uint32_t drk = W.r[1].dmr.rkey, hrk = W.r[1].hmr.rkey;
	struct dvx_mlx5_sge s[3] = {
		{ dptr(0, 0x30000), 7, dl },
		{ hva(0, 0x30000), 1000, hl },
		{ dptr(0, 0x31000), 2000, dl },
	};

	(void)state;
	fill(W.r[1].h, H_LEN, 5);
	fill(dmem(1, 0), DEV_PER, 6);
	memset(dmem(0, 0), 0xee, DEV_PER);
	memset(W.r[0].h, 0xee, H_LEN);

	assert_int_equal(dvx_qp_post_read(a, 1, dptr(0, 0x100), dl, 5000, dptr(1, 0x300), drk,
					  DVX_POST_SIGNALED), 0);
	assert_int_equal(dvx_qp_post_read(a, 2, dptr(0, 0x8000), dl, 4096, hva(1, 0x1000), hrk,
					  DVX_POST_SIGNALED), 0);
	assert_int_equal(dvx_qp_post_read(a, 3, hva(0, 0x8000), hl, 3333, dptr(1, 0x7000), drk,
					  DVX_POST_SIGNALED), 0);
	POST(a, 2, 4, DVX_POST_SIGNALED,
	     dvx_mlx5_wqe_rdma_sgl(&a->sq.wq, (uint32_t)t_, DVX_MLX5_OPCODE_RDMA_READ,
				   DVX_MLX5_WQE_CTRL_CQ_UPDATE, 0,
				   &(struct dvx_mlx5_raddr){ dptr(1, 0x20000), drk }, s, 3));
	expect_ok(&W.r[0].scq, 1, DVX_WC_RDMA_READ, 5000);
	expect_ok(&W.r[0].scq, 2, DVX_WC_RDMA_READ, 4096);
	expect_ok(&W.r[0].scq, 3, DVX_WC_RDMA_READ, 3333);
	expect_ok(&W.r[0].scq, 4, DVX_WC_RDMA_READ, 3007);
	expect_pat(dmem(0, 0x100), 5000, 6, 0x300);
	assert_int_equal(*dmem(0, 0x100 + 5000), 0xee);
	expect_pat(dmem(0, 0x8000), 4096, 5, 0x1000);
	expect_pat(W.r[0].h + 0x8000, 3333, 6, 0x7000);
	assert_int_equal(W.r[0].h[0x8000 + 3333], 0xee);
	expect_pat(dmem(0, 0x30000), 7, 6, 0x20000);
	expect_pat(W.r[0].h + 0x30000, 1000, 6, 0x20007);
	expect_pat(dmem(0, 0x31000), 2000, 6, 0x20007 + 1000);
	assert_int_equal(*dmem(0, 0x30007), 0xee);
	assert_int_equal(*dmem(0, 0x31000 + 2000), 0xee);
	assert_int_equal(dma_errors(), 0);
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

/* FA, CS, masked FA/CS of 4 and 8 bytes on device words, results in device memory */
static void test_atomics(void **state)
{
	struct dvx_qp *a = &W.r[0].qp;
	uint32_t dl = W.r[0].dmr.lkey, hl = W.r[0].hmr.lkey, drk = W.r[1].dmr.rkey;
	uint8_t *t = dmem(1, 0x100), *res = dmem(0, 0x800);
	const uint8_t C = DVX_MLX5_WQE_CTRL_CQ_UPDATE;

	(void)state;
	assert_int_equal(W.r[1].nic.atomic_mode, 3);
	memset(dmem(0, 0), 0xee, DEV_PER);
	wr64(t, 1000);
	wr32(t + 8, 0x0000ffffu);
	wr32(t + 12, 0xaabbccddu);
	wr64(t + 16, 0x00000000ffffffffull);
	wr64(t + 24, 0x1111222233334444ull);

	assert_int_equal(dvx_qp_post_fetch_add(a, 1, dptr(1, 0x100), drk, 5, dptr(0, 0x800), dl,
					       DVX_POST_SIGNALED), 0);
	assert_int_equal(dvx_qp_post_comp_swap(a, 2, &(struct dvx_mlx5_raddr){ dptr(1, 0x100), drk },
					       1005, 77, dptr(0, 0x808), dl, DVX_POST_SIGNALED), 0);
	assert_int_equal(dvx_qp_post_comp_swap(a, 3, &(struct dvx_mlx5_raddr){ dptr(1, 0x100), drk },
					       1005, 5, hva(0, 0x810), hl, DVX_POST_SIGNALED), 0);
	POST(a, 1, 4, DVX_POST_SIGNALED,
	     dvx_mlx5_wqe_masked_fa32(&a->sq.wq, (uint32_t)t_, C,
				      &(struct dvx_mlx5_raddr){ dptr(1, 0x108), drk }, 0x00010001u,
				      0x00008000u, dptr(0, 0x818), dl));
	POST(a, 1, 5, DVX_POST_SIGNALED,
	     dvx_mlx5_wqe_masked_cs32(&a->sq.wq, (uint32_t)t_, C,
				      &(struct dvx_mlx5_raddr){ dptr(1, 0x10c), drk },
				      &(struct dvx_mlx5_masked_cs){ 0x0000ccddu, 0x0000ffffu,
								    0x11220000u, 0xffff0000u },
				      dptr(0, 0x81c), dl));
	POST(a, 1, 6, DVX_POST_SIGNALED,
	     dvx_mlx5_wqe_masked_fa64(&a->sq.wq, (uint32_t)t_, C,
				      &(struct dvx_mlx5_raddr){ dptr(1, 0x110), drk },
				      0x0000000100000001ull, 0x8000000080000000ull, dptr(0, 0x820),
				      dl));
	POST(a, 2, 7, DVX_POST_SIGNALED,
	     dvx_mlx5_wqe_masked_cs64(&a->sq.wq, (uint32_t)t_, C,
				      &(struct dvx_mlx5_raddr){ dptr(1, 0x118), drk },
				      &(struct dvx_mlx5_masked_cs){ 0x1111000000000000ull,
								    0xffff000000000000ull, 0x5555ull,
								    0xffffull },
				      dptr(0, 0x828), dl));
	expect_ok(&W.r[0].scq, 1, DVX_WC_FETCH_ADD, 8);
	expect_ok(&W.r[0].scq, 2, DVX_WC_COMP_SWAP, 8);
	expect_ok(&W.r[0].scq, 3, DVX_WC_COMP_SWAP, 8);
	expect_ok(&W.r[0].scq, 4, DVX_WC_FETCH_ADD, 4);
	expect_ok(&W.r[0].scq, 5, DVX_WC_COMP_SWAP, 4);
	expect_ok(&W.r[0].scq, 6, DVX_WC_FETCH_ADD, 8);
	expect_ok(&W.r[0].scq, 7, DVX_WC_COMP_SWAP, 8);

	/* targets in host order; 8-byte results in host order, 4-byte big-endian */
	assert_int_equal(rd64(t), 77);
	assert_int_equal(rd64(res), 1000);
	assert_int_equal(rd64(res + 8), 1005);
	assert_int_equal(rd64(W.r[0].h + 0x810), 77);
	assert_int_equal(rd32(t + 8), 0x00010000u);
	assert_int_equal(dvx_be32_to_cpu((dvx_be32)rd32(res + 24)), 0x0000ffffu);
	assert_int_equal(rd32(t + 12), 0x1122ccddu);
	assert_int_equal(dvx_be32_to_cpu((dvx_be32)rd32(res + 28)), 0xaabbccddu);
	assert_int_equal(rd64(t + 16), 0x0000000100000000ull);
	assert_int_equal(rd64(res + 32), 0x00000000ffffffffull);
	assert_int_equal(rd64(t + 24), 0x1111222233335555ull);
	assert_int_equal(rd64(res + 40), 0x1111222233334444ull);
	assert_int_equal(res[48], 0xee);
	assert_int_equal(dma_errors(), 0);
}

/* inline WRITE and SEND: the source is the WQE, the destination device memory */
static void test_inline(void **state)
{
	struct dvx_qp *a = &W.r[0].qp, *b = &W.r[1].qp;
	uint8_t src[200];
	struct dvx_wc wc;

	(void)state;
	fill(src, sizeof(src), 9);
	memset(dmem(1, 0), 0xee, DEV_PER);
	assert_int_equal(dvx_qp_post_recv(b, 60, dptr(1, 0x5000), W.r[1].dmr.lkey, 256, 0), 0);
	assert_int_equal(dvx_qp_post_write(a, 1, (uintptr_t)src, 0, 200, dptr(1, 0x1234),
					   W.r[1].dmr.rkey, DVX_POST_SIGNALED | DVX_POST_INLINE), 0);
	assert_int_equal(dvx_qp_post_send(a, 2, (uintptr_t)src + 50, 0, 100,
					  DVX_POST_SIGNALED | DVX_POST_INLINE), 0);
	memset(src, 0, sizeof(src));	/* the payload is in the WQEs */
	expect_ok(&W.r[0].scq, 1, DVX_WC_RDMA_WRITE, 0);
	expect_ok(&W.r[0].scq, 2, DVX_WC_SEND, 0);
	assert_int_equal(poll_wc(&W.r[1].rcq, &wc), 1);
	assert_int_equal(wc.byte_len, 100);
	expect_pat(dmem(1, 0x1234), 200, 9, 0);
	assert_int_equal(*dmem(1, 0x1233), 0xee);
	assert_int_equal(*dmem(1, 0x1234 + 200), 0xee);
	expect_pat(dmem(1, 0x5000), 100, 9, 50);
	assert_int_equal(*dmem(1, 0x5000 + 100), 0xee);
	assert_int_equal(dma_errors(), 0);
}

/* ---- failed copies: error completions --------------------------------------------- */

static void poison(int r, uint64_t off, uint64_t len)
{
	D.fail_lo = dptr(r, off);
	D.fail_hi = dptr(r, off) + len;
}

/* the gather from the requester's device memory fails: LOCAL_PROT_ERR; then flushed */
static void test_fail_gather(void **state)
{
	struct dvx_qp *a = &W.r[0].qp;
	uint64_t e0 = dma_errors();

	(void)state;
	memset(dmem(1, 0), 0xee, DEV_PER);
	poison(0, 0x1000, 1);
	assert_int_equal(dvx_qp_post_write(a, 1, dptr(0, 0x1000), W.r[0].dmr.lkey, 64,
					   dptr(1, 0), W.r[1].dmr.rkey, DVX_POST_SIGNALED), 0);
	assert_int_equal(dvx_qp_post_write(a, 2, hva(0, 0), W.r[0].hmr.lkey, 64, dptr(1, 0x100),
					   W.r[1].dmr.rkey, DVX_POST_SIGNALED), 0);
	expect_fail(&W.r[0].scq, 1, DVX_MLX5_CQE_SYNDROME_LOCAL_PROT_ERR, SIM_VS_DMA_LOCAL);
	expect_fail(&W.r[0].scq, 2, DVX_MLX5_CQE_SYNDROME_WR_FLUSH_ERR, SIM_VS_FLUSH);
	assert_int_equal(dma_errors(), e0 + 1);
	assert_int_equal(D.fails, 1);
	assert_int_equal(*dmem(1, 0x100), 0xee);	/* the later WQE never ran */
	assert_int_equal(qp_state(&W.r[1].qp), DVX_MLX5_QP_STATE_RTS);
}

/* the placement into the responder's device memory fails: REMOTE_ACCESS_ERR, the
 * responder in ERR; the bytes before the failed piece may have landed */
static void test_fail_place(void **state)
{
	struct dvx_qp *a = &W.r[0].qp;
	uint64_t e0 = dma_errors();

	(void)state;
	poison(1, 0x2000, 8);
	assert_int_equal(dvx_qp_post_write(a, 1, hva(0, 0), W.r[0].hmr.lkey, 4096,
					   dptr(1, 0x1800), W.r[1].dmr.rkey, DVX_POST_SIGNALED), 0);
	expect_fail(&W.r[0].scq, 1, DVX_MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR, SIM_VS_DMA_REMOTE);
	assert_int_equal(dma_errors(), e0 + 1);
	assert_int_equal(qp_state(&W.r[1].qp), DVX_MLX5_QP_STATE_ERR);
}

/* a READ whose source in the responder's device memory fails */
static void test_fail_read_source(void **state)
{
	uint64_t e0 = dma_errors();

	(void)state;
	poison(1, 0x3000, 4096);
	assert_int_equal(dvx_qp_post_read(&W.r[0].qp, 1, hva(0, 0), W.r[0].hmr.lkey, 100,
					  dptr(1, 0x3000), W.r[1].dmr.rkey, DVX_POST_SIGNALED), 0);
	expect_fail(&W.r[0].scq, 1, DVX_MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR, SIM_VS_DMA_REMOTE);
	assert_int_equal(dma_errors(), e0 + 1);
	assert_int_equal(qp_state(&W.r[1].qp), DVX_MLX5_QP_STATE_ERR);
}

/* a READ whose scatter into the requester's device memory fails */
static void test_fail_read_scatter(void **state)
{
	uint64_t e0 = dma_errors();

	(void)state;
	poison(0, 0x3000, 4096);
	assert_int_equal(dvx_qp_post_read(&W.r[0].qp, 1, dptr(0, 0x3000), W.r[0].dmr.lkey, 100,
					  hva(1, 0), W.r[1].hmr.rkey, DVX_POST_SIGNALED), 0);
	expect_fail(&W.r[0].scq, 1, DVX_MLX5_CQE_SYNDROME_LOCAL_PROT_ERR, SIM_VS_DMA_LOCAL);
	assert_int_equal(dma_errors(), e0 + 1);
	assert_int_equal(qp_state(&W.r[1].qp), DVX_MLX5_QP_STATE_RTS);
}

/* an atomic whose target word cannot be read: REMOTE_ACCESS_ERR, the word unchanged */
static void test_fail_atomic_target(void **state)
{
	uint64_t e0 = dma_errors();

	(void)state;
	wr64(dmem(1, 0x100), 41);
	poison(1, 0x100, 8);
	assert_int_equal(dvx_qp_post_fetch_add(&W.r[0].qp, 1, dptr(1, 0x100), W.r[1].dmr.rkey, 1,
					       hva(0, 0), W.r[0].hmr.lkey, DVX_POST_SIGNALED), 0);
	expect_fail(&W.r[0].scq, 1, DVX_MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR, SIM_VS_DMA_REMOTE);
	assert_int_equal(dma_errors(), e0 + 1);
	assert_int_equal(rd64(dmem(1, 0x100)), 41);
	assert_int_equal(qp_state(&W.r[1].qp), DVX_MLX5_QP_STATE_ERR);
}

/* an atomic whose result cannot be written: LOCAL_PROT_ERR (the target was updated) */
static void test_fail_atomic_result(void **state)
{
	uint64_t e0 = dma_errors();

	(void)state;
	wr64(dmem(1, 0x100), 41);
	poison(0, 0x800, 8);
	assert_int_equal(dvx_qp_post_comp_swap(&W.r[0].qp, 1,
					       &(struct dvx_mlx5_raddr){ dptr(1, 0x100),
									 W.r[1].dmr.rkey },
					       41, 99, dptr(0, 0x800), W.r[0].dmr.lkey,
					       DVX_POST_SIGNALED), 0);
	expect_fail(&W.r[0].scq, 1, DVX_MLX5_CQE_SYNDROME_LOCAL_PROT_ERR, SIM_VS_DMA_LOCAL);
	assert_int_equal(dma_errors(), e0 + 1);
	assert_int_equal(rd64(dmem(1, 0x100)), 99);
}

/* a SEND whose receive buffer in device memory fails: the responder's receive
 * completes with LOCAL_PROT_ERR, the requester gets REMOTE_OP_ERR, both in ERR */
static void test_fail_send_place(void **state)
{
	struct dvx_qp *b = &W.r[1].qp;
	uint64_t e0 = dma_errors();

	(void)state;
	poison(1, 0x5000, 16);
	assert_int_equal(dvx_qp_post_recv(b, 70, dptr(1, 0x5000), W.r[1].dmr.lkey, 256, 0), 0);
	assert_int_equal(dvx_qp_post_send(&W.r[0].qp, 1, dptr(0, 0), W.r[0].dmr.lkey, 100,
					  DVX_POST_SIGNALED), 0);
	expect_fail(&W.r[0].scq, 1, DVX_MLX5_CQE_SYNDROME_REMOTE_OP_ERR, SIM_VS_DMA_REMOTE);
	expect_fail(&W.r[1].rcq, 70, DVX_MLX5_CQE_SYNDROME_LOCAL_PROT_ERR, SIM_VS_DMA_REMOTE);
	assert_int_equal(dma_errors(), e0 + 1);
	assert_int_equal(qp_state(b), DVX_MLX5_QP_STATE_ERR);
}

/* a SEND whose gather from device memory fails: nothing sent, the receive stays */
static void test_fail_send_gather(void **state)
{
	struct dvx_qp *b = &W.r[1].qp;
	struct dvx_wc wc;
	uint64_t e0 = dma_errors();

	(void)state;
	poison(0, 0, 16);
	assert_int_equal(dvx_qp_post_recv(b, 70, hva(1, 0), W.r[1].hmr.lkey, 256, 0), 0);
	assert_int_equal(dvx_qp_post_send(&W.r[0].qp, 1, dptr(0, 0), W.r[0].dmr.lkey, 100,
					  DVX_POST_SIGNALED), 0);
	expect_fail(&W.r[0].scq, 1, DVX_MLX5_CQE_SYNDROME_LOCAL_PROT_ERR, SIM_VS_DMA_LOCAL);
	assert_int_equal(dma_errors(), e0 + 1);
	dvx_sim_step(W.fab);
	assert_int_equal(dvx_cq_poll(&W.r[1].rcq, &wc), 0);
	assert_int_equal(qp_state(b), DVX_MLX5_QP_STATE_RTS);
}

/* ---- the reorder mode ---------------------------------------------------------- */

/*
 * WRITEs and READs of device memory in the seeded reorder mode: messages placed in
 * part and in a random chunk order across steps, WRITEs after a READ gathered early;
 * after each completion every byte is in place.
 */
static void test_reorder(void **state)
{
	struct dvx_qp *a = &W.r[0].qp;
	uint32_t dl = W.r[0].dmr.lkey, drk = W.r[1].dmr.rkey;
	struct dvx_sim_stats st;
	unsigned k;

	(void)state;
	assert_int_equal(dvx_sim_set_reorder(W.fab, 1, 0x5eed), 0);
	for (k = 0; k < 200; k++) {
		uint32_t len = 16 + (k * 2654435761u) % 30000u;

		fill(dmem(0, 0), 0x10000, k);
		memset(dmem(1, 0), 0, 0x10000);
		memset(dmem(0, 0x20000), 0, 0x10000);
		/* WRITE device -> device, READ it back, and a WRITE after the READ */
		assert_int_equal(dvx_qp_post_write(a, 1, dptr(0, 0), dl, len, dptr(1, 0), drk,
						   DVX_POST_SIGNALED), 0);
		assert_int_equal(dvx_qp_post_read(a, 2, dptr(0, 0x20000), dl, len, dptr(1, 0), drk,
						  DVX_POST_SIGNALED), 0);
		assert_int_equal(dvx_qp_post_write(a, 3, dptr(0, 0x8000), dl, 64, dptr(1, 0xf000),
						   drk, DVX_POST_SIGNALED), 0);
		expect_ok(&W.r[0].scq, 1, DVX_WC_RDMA_WRITE, 0);
		expect_pat(dmem(1, 0), len, k, 0);
		expect_ok(&W.r[0].scq, 2, DVX_WC_RDMA_READ, len);
		expect_pat(dmem(0, 0x20000), len, k, 0);
		expect_ok(&W.r[0].scq, 3, DVX_WC_RDMA_WRITE, 0);
		expect_pat(dmem(1, 0xf000), 64, k, 0x8000);
	}
	assert_int_equal(dvx_sim_get_stats(W.fab, &st), 0);
	assert_true(st.ro_splits > 0);
	assert_true(st.ro_early > 0);
	assert_int_equal(st.dma_errors, 0);
	assert_int_equal(dvx_sim_set_reorder(W.fab, 0, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_send_scatter, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_atomics, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fail_gather, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fail_place, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fail_read_source, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fail_read_scatter, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fail_atomic_target, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fail_atomic_result, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fail_send_place, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fail_send_gather, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reorder, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
