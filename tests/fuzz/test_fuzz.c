// SPDX-License-Identifier: MIT
/*
 * tests/fuzz/test_fuzz.c - every decoder and parser fed garbage (TESTING.md, ring 5).
 *
 * Deterministic (a fixed-seed xorshift; DVX_FUZZ_SEED and DVX_FUZZ_ITERS override),
 * short enough for every CI run, and meant to run under ASan+UBSan (make sanitize),
 * which turns any out-of-bounds access into a failure. Properties checked beyond "does
 * not crash":
 *  - WQE decoder: a decode that succeeds formats, and re-encodes (when a builder can
 *    reproduce it) to bytes that decode to the same description;
 *  - CQE parser: an error CQE never parses as a completion;
 *  - hex parser: what it accepts round-trips through printing;
 *  - PRM output decoders and the capability parser: any bytes, any length;
 *  - the software NIC: random DEVX mailboxes are refused or executed, never crash; a
 *    loopback QP in RTS fed random WQE bytes (mutated from real WQEs) completes,
 *    refuses or stalls, and never touches memory outside its MRs.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/dvx_test.h"
#include "../../tools/hexparse.h"

#include <dvx/nic/cq.h>
#include <dvx/hal/sim.h>
#include <dvx/mlx5/caps.h>
#include <dvx/mlx5/cmd.h>
#include <dvx/mlx5/cqe.h>
#include <dvx/mlx5/decode.h>
#include <dvx/mlx5/sq.h>
#include <dvx/nic/mr.h>
#include <dvx/nic/nic.h>
#include <dvx/nic/qp.h>
#include <dvx/nic/umem.h>

static uint64_t rng_state;
static unsigned iters;

static uint64_t rnd(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

static void rnd_bytes(void *p, size_t n)
{
	uint8_t *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = (uint8_t)rnd();
}

static int setup_rng(void **s)
{
	const char *seed = getenv("DVX_FUZZ_SEED"), *it = getenv("DVX_FUZZ_ITERS");

	(void)s;
	rng_state = seed ? strtoull(seed, NULL, 0) : 0x9e3779b97f4a7c15ull;
	if (!rng_state)
		rng_state = 1;
	iters = it ? (unsigned)strtoul(it, NULL, 0) : 20000;
	print_message("fuzz seed 0x%llx, %u iterations per target\n",
		      (unsigned long long)rng_state, iters);
	return 0;
}

/* a valid WQE of a random kind at @idx, built by the builders */
static void valid_wqe(struct dvx_mlx5_wq *wq, uint32_t idx)
{
	uint8_t data[256];
	struct dvx_mlx5_sge sg[3] = { { rnd(), (uint32_t)rnd() & 0xffff, (uint32_t)rnd() },
				      { rnd(), 16, 7 }, { rnd(), 1, 9 } };

	rnd_bytes(data, sizeof(data));
	switch (rnd() % 12) {
	case 0: dvx_mlx5_wqe_nop(wq, idx, (uint8_t)rnd()); break;
	case 1: dvx_mlx5_wqe_rdma_write(wq, idx, 8, rnd(), 1, rnd(), 2, (uint32_t)rnd() >> 2); break;
	case 2: dvx_mlx5_wqe_rdma_read(wq, idx, 8, rnd(), 1, rnd(), 2, 64); break;
	case 3: dvx_mlx5_wqe_atomic_fa(wq, idx, 8, rnd() & ~7ull, 1, rnd(), 0, 3); break;
	case 4:
		dvx_mlx5_wqe_atomic_cs(wq, idx, 8, &(struct dvx_mlx5_raddr){ rnd() & ~7ull, 1 },
				       rnd(), rnd(), 0, 3);
		break;
	case 5:
		dvx_mlx5_wqe_masked_cs64(wq, idx, 8, &(struct dvx_mlx5_raddr){ rnd(), 1 },
					 &(struct dvx_mlx5_masked_cs){ rnd(), rnd(), rnd(), rnd() },
					 0, 3);
		break;
	case 6:
		dvx_mlx5_wqe_masked_fa32(wq, idx, 8, &(struct dvx_mlx5_raddr){ rnd(), 1 },
					 (uint32_t)rnd(), (uint32_t)rnd(), 0, 3);
		break;
	case 7:
		dvx_mlx5_wqe_rdma_write_inline(wq, idx, DVX_MLX5_OPCODE_RDMA_WRITE, 8, 0,
					       &(struct dvx_mlx5_raddr){ rnd(), 1 }, data,
					       (uint32_t)(rnd() % (wq->max_inline + 1)));
		break;
	case 8: dvx_mlx5_wqe_send_sgl(wq, idx, DVX_MLX5_OPCODE_SEND_IMM, 8, (uint32_t)rnd(), sg,
				      1 + (uint32_t)(rnd() % 3)); break;
	case 9: dvx_mlx5_wqe_wait_cq(wq, idx, 8, (uint32_t)rnd() & 0xffffff, (uint32_t)rnd()); break;
	case 10: dvx_mlx5_wqe_send_en(wq, idx, 8, (uint32_t)rnd() & 0xffffff, (uint32_t)rnd()); break;
	default:
		dvx_mlx5_wqe_masked_fa64(wq, idx, 8, &(struct dvx_mlx5_raddr){ rnd(), 1 }, rnd(),
					 rnd(), 0, 3);
		break;
	}
}

/* flip a few random bits and bytes of @len bytes */
static void mutate(uint8_t *b, size_t len)
{
	unsigned n = 1 + (unsigned)(rnd() % 6), i;

	for (i = 0; i < n; i++) {
		size_t at = (size_t)(rnd() % len);

		if (rnd() & 1)
			b[at] ^= (uint8_t)(1u << (rnd() % 8));
		else
			b[at] = (uint8_t)rnd();
	}
}

static void test_wqe_decoder(void **s)
{
	static uint8_t ring[8 * 64] __attribute__((aligned(64)));
	static uint8_t ring2[8 * 64] __attribute__((aligned(64)));
	struct dvx_mlx5_wq wq, wq2;
	struct dvx_mlx5_wqe_desc d, d2;
	char text[4096];
	unsigned i, ok = 0, reenc = 0;

	(void)s;
	assert_int_equal(dvx_mlx5_wq_init(&wq, ring, 8, 0x1234, 128), 0);
	assert_int_equal(dvx_mlx5_wq_init(&wq2, ring2, 8, 0x1234, 128), 0);
	for (i = 0; i < iters; i++) {
		uint32_t idx = (uint32_t)rnd();
		int r;

		if (rnd() % 4 == 0) {
			rnd_bytes(ring, sizeof(ring));
		} else {
			memset(ring, 0, sizeof(ring));
			valid_wqe(&wq, idx);
			if (rnd() & 1)
				mutate(ring, sizeof(ring));
		}
		r = dvx_mlx5_wqe_decode(ring, sizeof(ring), idx, &d);
		dvx_mlx5_wqe_format(&d, text, sizeof(text));
		if (r < 0) {
			assert_true(r == -EBADMSG);
			continue;
		}
		ok++;
		assert_true(r >= 1 && r <= 8);
		/* what decodes and can be rebuilt must describe the same WQE */
		memset(ring2, 0, sizeof(ring2));
		if (dvx_mlx5_wqe_encode(&wq2, idx, &d) > 0) {
			reenc++;
			assert_true(dvx_mlx5_wqe_decode(ring2, sizeof(ring2), idx, &d2) == r);
			/* the ring supplies index and QPN (and so the raw ctrl bytes) */
			d2.error = d.error;
			d2.idx = d.idx;
			d2.qpn = d.qpn;
			assert_memory_equal(&d, &d2, offsetof(struct dvx_mlx5_wqe_desc, raw));
		}
	}
	print_message("wqe: %u decoded, %u re-encoded, of %u\n", ok, reenc, iters);
	assert_true(ok > iters / 4);
	assert_true(reenc > 0);
}

static void test_cqe_parser(void **s)
{
	uint8_t cqe[64] __attribute__((aligned(64)));
	struct dvx_mlx5_cqe_info info;
	char text[2048];
	unsigned i, errs = 0;

	(void)s;
	for (i = 0; i < iters; i++) {
		int r;
		uint8_t op;

		rnd_bytes(cqe, sizeof(cqe));
		if (rnd() & 1)	/* an error opcode half the time */
			cqe[63] = (uint8_t)((rnd() & 1 ? 0xd0 : 0xe0) | (cqe[63] & 0x0f));
		op = cqe[63] >> 4;
		r = dvx_mlx5_cqe_parse((const struct dvx_mlx5_cqe64 *)(const void *)cqe, &info);
		dvx_mlx5_cqe_format(&info, r, text, sizeof(text));
		if ((op == 0xd || op == 0xe) && ((cqe[63] >> 2) & 3) != 3) {
			/* an error CQE is an error, never a completion */
			assert_true(r < 0);
			assert_true(info.is_error);
			errs++;
		}
		if (((cqe[63] >> 2) & 3) == 3)
			assert_int_equal(r, -EPROTO);	/* compressed: refused, never misread */
	}
	assert_true(errs > 0);
}

static void test_hexparse(void **s)
{
	static const char alphabet[] = "0123456789abcdefABCDEFxX: \n\t,|#0x00";
	char text[256], back[1024];
	uint8_t out[128], out2[128];
	char err[128];
	unsigned i, ok = 0;

	(void)s;
	for (i = 0; i < iters; i++) {
		size_t n = (size_t)(rnd() % sizeof(text)), k, nout = 0, nout2 = 0, pos = 0;

		for (k = 0; k < n; k++)
			text[k] = alphabet[rnd() % (sizeof(alphabet) - 1)];
		if (dvx_hexparse(text, n, out, sizeof(out), &nout, err, sizeof(err)) != 0)
			continue;
		ok++;
		assert_true(nout <= sizeof(out));
		/* what it accepted prints back and parses to the same bytes */
		for (k = 0; k < nout; k++)
			pos += (size_t)snprintf(back + pos, sizeof(back) - pos, "%02x ", out[k]);
		assert_int_equal(dvx_hexparse(back, pos, out2, sizeof(out2), &nout2, err,
					      sizeof(err)), 0);
		assert_int_equal(nout2, nout);
		assert_memory_equal(out, out2, nout);
	}
	assert_true(ok > 0);
}

/*
 * Every PRM output decoder on random mailboxes of random lengths, against its
 * contract: the answer is 0 or a negative errno; a mailbox shorter than the layout is
 * -EINVAL and a non-zero status is exactly that status's errno
 * (dvx_mlx5_cmd_status_errno()), both leaving the caller's output untouched; with
 * status 0 and room, the object number read back is the 24 bits at dw@8 (read here
 * byte-wise, independently of the decoder's field accessors).
 */
static void check_out(int r, size_t len, size_t need, const uint8_t *out, const void *dst,
		      const void *poison, size_t dlen)
{
	if (len < need) {
		assert_int_equal(r, -EINVAL);
	} else if (out[0]) {
		assert_int_equal(r, dvx_mlx5_cmd_status_errno(out[0]));
		assert_true(r < 0);
	} else {
		assert_int_equal(r, 0);
		return;
	}
	assert_memory_equal(dst, poison, dlen);	/* nothing written on error */
}

static void test_prm_outputs(void **s)
{
	static uint8_t out[DVX_MLX5_QUERY_HCA_CAP_OUT_BYTES + 64];
	struct dvx_mlx5_caps caps, caps0;
	struct dvx_mlx5_qp_query qq, qq0;
	struct dvx_mlx5_cq_query cq, cq0;
	uint32_t num, num0 = 0xa5a5a5a5u, want;
	unsigned i, decoded = 0, refused = 0;
	int r;

	(void)s;
	memset(&qq0, 0xa5, sizeof(qq0));
	memset(&cq0, 0xa5, sizeof(cq0));
	memset(&caps0, 0xa5, sizeof(caps0));
	for (i = 0; i < iters / 4; i++) {
		size_t len = (size_t)(rnd() % sizeof(out));
		unsigned type = (unsigned)(rnd() % 24);

		rnd_bytes(out, sizeof(out));
		if (rnd() & 1)
			out[0] = 0;	/* status OK, so the payload gets read */
		want = dvx_get_be32(out + 8) & 0xffffffu;

		num = num0;
		r = dvx_mlx5_create_cq_out(out, len, &num);
		check_out(r, len, DVX_MLX5_CREATE_CQ_OUT_BYTES, out, &num, &num0, sizeof(num));
		if (!r)
			assert_int_equal(num, want);
		num = num0;
		r = dvx_mlx5_create_qp_out(out, len, &num);
		check_out(r, len, DVX_MLX5_CREATE_QP_OUT_BYTES, out, &num, &num0, sizeof(num));
		if (!r)
			assert_int_equal(num, want);
		qq = qq0;
		r = dvx_mlx5_query_qp_out(out, len, &qq);
		check_out(r, len, DVX_MLX5_QUERY_QP_OUT_BYTES, out, &qq, &qq0, sizeof(qq));
		cq = cq0;
		r = dvx_mlx5_query_cq_out(out, len, &cq);
		check_out(r, len, DVX_MLX5_QUERY_CQ_OUT_BYTES, out, &cq, &cq0, sizeof(cq));
		if (!r)	/* cqc.log_cq_size dw@(16 + 12) [28:24] */
			assert_int_equal(cq.log_cq_size, (dvx_get_be32(out + 28) >> 24) & 0x1f);
		caps = caps0;
		r = dvx_mlx5_caps_parse(&caps, type, out, len);
		assert_true(r <= 0);
		if (len < DVX_MLX5_QUERY_HCA_CAP_OUT_BYTES)
			assert_int_equal(r, -EINVAL);
		else if (out[0])
			assert_int_equal(r, dvx_mlx5_cmd_status_errno(out[0]));
		if (r)
			assert_memory_equal(&caps, &caps0, sizeof(caps));
		decoded += r == 0;
		refused += r < 0;
	}
	/* both sides of every contract were exercised */
	assert_true(decoded > 0);
	assert_true(refused > 0);
}

/* ---- the software NIC ---------------------------------------------------------- */

#define S_QMEM (256u << 10)
#define S_DATA (64u << 10)

static void test_sim_mailboxes(void **s)
{
	static const uint16_t ops[] = { 0x100, 0x400, 0x401, 0x402, 0x500, 0x501, 0x502, 0x503,
					0x504, 0x505, 0x506, 0x507, 0x50b, 0x50a, 0x123, 0x0 };
	struct dvx_sim_fabric_cfg fc;
	struct dvx_sim_nic_cfg nc;
	struct dvx_sim_fabric *fab;
	struct dvx_hal_nic dev;
	struct dvx_sim_stats st;
	uint8_t in[1024], out[4200];
	void *storage;
	size_t len;
	unsigned i, created = 0;

	(void)s;
	dvx_sim_fabric_cfg_default(&fc);
	len = dvx_sim_fabric_mem_size(&fc);
	storage = malloc(len);
	assert_non_null(storage);
	assert_int_equal(dvx_sim_fabric_init(storage, len, &fc, &fab), 0);
	dvx_sim_nic_cfg_default(&nc, 0);
	assert_int_equal(dvx_sim_add_nic(fab, &nc), 0);
	memset(&dev, 0, sizeof(dev));
	assert_int_equal(dvx_hal_nic_open(dvx_sim_hal(fab), "sim_0", &dev), 0);
	for (i = 0; i < iters / 4; i++) {
		size_t inlen = 16 + (size_t)(rnd() % (sizeof(in) - 16));
		struct dvx_hal_obj obj;
		uint16_t op = ops[rnd() % DVX_ARRAY_SIZE(ops)];

		rnd_bytes(in, sizeof(in));
		in[0] = (uint8_t)(op >> 8);
		in[1] = (uint8_t)op;
		if (rnd() & 1) {
			dvx_hal_devx_cmd(&dev, in, inlen, out, sizeof(out));
			continue;
		}
		memset(&obj, 0, sizeof(obj));
		if (dvx_hal_obj_create(&dev, in, inlen, out, 16, &obj) == 0) {
			created++;
			/* whatever was made goes away again */
			assert_int_equal(dvx_hal_obj_destroy(&dev, &obj), 0);
		}
	}
	assert_int_equal(dvx_sim_get_stats(fab, &st), 0);
	print_message("sim mailboxes: %u random creates accepted\n", created);
	assert_int_equal(dvx_hal_nic_close(&dev), 0);
	assert_int_equal(dvx_sim_fini(fab), 0);
	free(storage);
}

static void test_sim_wqes(void **s)
{
	struct dvx_sim_fabric_cfg fc;
	struct dvx_sim_nic_cfg nc;
	struct dvx_sim_fabric *fab;
	struct dvx_nic nic;
	struct dvx_nic_cfg na;
	struct dvx_umem umem;
	struct dvx_umem_cfg ua;
	struct dvx_mr mr;
	struct dvx_mr_cfg ma;
	struct dvx_cq cq;
	struct dvx_cq_cfg ca;
	struct dvx_qp qp;
	struct dvx_qp_cfg qa;
	struct dvx_qp_connect_cfg conn;
	struct dvx_mlx5_cqe_info info;
	uint8_t *qmem, *data, *guard;
	void *storage;
	size_t len;
	unsigned i, cqes = 0, errs = 0, recoveries = 0, rounds = iters / 40 + 1;
	uint32_t st;

	(void)s;
	dvx_sim_fabric_cfg_default(&fc);
	len = dvx_sim_fabric_mem_size(&fc);
	storage = malloc(len);
	assert_non_null(storage);
	assert_int_equal(dvx_sim_fabric_init(storage, len, &fc, &fab), 0);
	dvx_sim_nic_cfg_default(&nc, 0);
	assert_int_equal(dvx_sim_add_nic(fab, &nc), 0);
	memset(&na, 0, sizeof(na));
	na.name = "sim_0";
	na.gid_index = -1;
	assert_int_equal(dvx_nic_open(&nic, dvx_sim_hal(fab), &na), 0);
	assert_int_equal(posix_memalign((void **)&qmem, 4096, S_QMEM), 0);
	/* the data MR with a guard band either side that must never change */
	assert_int_equal(posix_memalign((void **)&guard, 4096, S_DATA * 3), 0);
	memset(qmem, 0, S_QMEM);
	memset(guard, 0xa5, S_DATA * 3);
	data = guard + S_DATA;
	memset(&ua, 0, sizeof(ua));
	ua.addr = qmem;
	ua.len = S_QMEM;
	ua.access = DVX_ACCESS_LOCAL_WRITE;
	ua.dmabuf_fd = -1;
	assert_int_equal(dvx_umem_reg(&nic, &ua, &umem), 0);
	memset(&ma, 0, sizeof(ma));
	ma.addr = data;
	ma.len = S_DATA;
	ma.access = DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_WRITE | DVX_ACCESS_REMOTE_READ |
		    DVX_ACCESS_REMOTE_ATOMIC;
	ma.dmabuf_fd = -1;
	assert_int_equal(dvx_mr_reg(&nic, &ma, &mr), 0);
	memset(&ca, 0, sizeof(ca));
	ca.depth = 256;
	ca.ring_umem = &umem;
	ca.ring_offset = 0;
	ca.dbr_umem = &umem;
	ca.dbr_offset = 128u << 10;
	assert_int_equal(dvx_cq_create(&nic, &ca, &cq), 0);
	memset(&qa, 0, sizeof(qa));
	qa.sq_depth = 64;
	qa.max_inline = 128;
	qa.send_cq = &cq;
	qa.flags = DVX_QP_F_CD_MASTER;
	qa.wq_umem = &umem;
	qa.wq_offset = 64u << 10;
	qa.dbr_umem = &umem;
	qa.dbr_offset = (128u << 10) + 64;
	assert_int_equal(dvx_qp_create(&nic, &qa, &qp), 0);
	dvx_qp_connect_cfg_init(&conn);
	conn.access = DVX_ACCESS_REMOTE_WRITE | DVX_ACCESS_REMOTE_READ | DVX_ACCESS_REMOTE_ATOMIC;
	conn.rnr_retry = 0;
	assert_int_equal(dvx_qp_connect_loopback(&qp, &conn), 0);

	for (i = 0; i < rounds; i++) {
		uint32_t n = 1 + (uint32_t)(rnd() % 8), k;
		uint64_t idx = 0;

		if (dvx_mlx5_sq_room(&qp.sq, &qp.sqc) < 16) {
			/* the ring is clogged (stalled WAITs, unsignaled WQEs): start over */
			dvx_qp_to_err(&qp);
			dvx_sim_step(fab);
			while (dvx_mlx5_cq_poll_one(&cq.mcq, &info) != 0)
				;
			dvx_mlx5_cq_update_ci(&cq.mcq);
			assert_int_equal(dvx_qp_recover(&qp), 0);
			recoveries++;
		}
		for (k = 0; k < n && dvx_mlx5_sq_room(&qp.sq, &qp.sqc) >= 8; k++) {
			struct dvx_mlx5_wqe_ctrl_seg *c;

			assert_int_equal(dvx_mlx5_sq_reserve(&qp.sq, &qp.sqc, 1, DVX_MLX5_SQ_SINGLE, &idx), 0);
			memset(dvx_mlx5_wq_wqebb(&qp.sq.wq, idx), 0, 64);
			valid_wqe(&qp.sq.wq, idx);
			/* aim keys and addresses at the real MR part of the time */
			if (rnd() % 4) {
				uint8_t *w = dvx_mlx5_wq_wqebb(&qp.sq.wq, idx);
				uint64_t base = (uint64_t)(uintptr_t)data;
				uint32_t n8 = 1 + (uint32_t)(rnd() % 4096);
				uint8_t op = w[3];

				dvx_put_be64(w + 16, base + ((rnd() % (S_DATA - 4096)) & ~7ull));
				dvx_put_be32(w + 24, rnd() % 8 ? mr.rkey : mr.lkey);
				if (op == DVX_MLX5_OPCODE_RDMA_WRITE || op == DVX_MLX5_OPCODE_RDMA_READ ||
				    op == DVX_MLX5_OPCODE_RDMA_WRITE_IMM) {
					dvx_put_be32(w + 32, n8);
					dvx_put_be32(w + 36, mr.lkey);
					dvx_put_be64(w + 40, base + (rnd() % (S_DATA - 4096)));
				} else {
					dvx_put_be32(w + 52, mr.lkey);
					dvx_put_be64(w + 56, base + ((rnd() % (S_DATA - 8)) & ~7ull));
				}
			}
			if (rnd() % 8 == 0)
				mutate(dvx_mlx5_wq_wqebb(&qp.sq.wq, idx), 64);
			c = (struct dvx_mlx5_wqe_ctrl_seg *)dvx_mlx5_wq_wqebb(&qp.sq.wq, idx);
			/* now and then a ds that lies about the one WQEBB we own */
			if (rnd() % 8 == 0) {
				uint32_t qd = dvx_be32_to_cpu(c->qpn_ds);

				c->qpn_ds = dvx_cpu_to_be32((qd & ~0x3fu) | (1 + (uint32_t)(rnd() % 4)));
			}
		}
		dvx_mlx5_sq_ring_db(&qp.sq, &qp.sqc, qp.sqc.resv);
		dvx_sim_step(fab);
		for (;;) {
			int r = dvx_mlx5_cq_poll_one(&cq.mcq, &info);

			if (r == 0)
				break;
			cqes++;
			if (r < 0)
				errs++;
			else
				dvx_mlx5_sq_completed(&qp.sq, &qp.sqc, info.wqe_counter);
		}
		dvx_mlx5_cq_update_ci(&cq.mcq);
		assert_int_equal(dvx_qp_query(&qp, NULL, &st), 0);
		if (st != 6 /* ERR */ && cqes == 0 && i > 8)
			continue;
		if (st == 6) {
			dvx_sim_step(fab);
			while (dvx_mlx5_cq_poll_one(&cq.mcq, &info) != 0)
				;
			dvx_mlx5_cq_update_ci(&cq.mcq);
			assert_int_equal(dvx_qp_recover(&qp), 0);
			recoveries++;
		}
	}
	/* nothing outside the MR moved */
	for (i = 0; i < S_DATA; i++) {
		assert_int_equal(guard[i], 0xa5);
		assert_int_equal(guard[2 * S_DATA + i], 0xa5);
	}
	print_message("sim wqes: %u rounds, %u CQEs (%u errors), %u recoveries\n", rounds, cqes,
		      errs, recoveries);
	assert_true(cqes > 0);
	assert_int_equal(dvx_qp_destroy(&qp), 0);
	assert_int_equal(dvx_cq_destroy(&cq), 0);
	assert_int_equal(dvx_mr_dereg(&mr), 0);
	assert_int_equal(dvx_umem_dereg(&umem), 0);
	assert_int_equal(dvx_nic_close(&nic), 0);
	assert_int_equal(dvx_sim_fini(fab), 0);
	free(guard);
	free(qmem);
	free(storage);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wqe_decoder),
		cmocka_unit_test(test_cqe_parser),
		cmocka_unit_test(test_hexparse),
		cmocka_unit_test(test_prm_outputs),
		cmocka_unit_test(test_sim_mailboxes),
		cmocka_unit_test(test_sim_wqes),
	};

	return cmocka_run_group_tests(tests, setup_rng, NULL);
}
