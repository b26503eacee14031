// SPDX-License-Identifier: MIT
/*
 * Ring wrap (prm 2.1): a WQE occupying several WQEBBs that starts near the end of
 * the ring continues at WQEBB 0. For rings of 1 ... 1024 WQEBBs, every multi-WQEBB
 * WQE kind is built at each of the last positions (and, free-running, just before
 * 2^16 and 2^32), and byte off of the WQE must be at ring[(idx * 64 + off) mod size]
 * with every other ring byte untouched. The ctrl carries idx & 0xffff.
 *
 * The expected linear WQE comes from the reference encoders of mlx5_test.h.
 */
#include "mlx5_test.h"

#include <errno.h>
#include <dvx/mlx5/wqe.h>

#define QPN 0x00c0ffeeu
#define RADDR 0xfedcba9876543210ull
#define RKEY 0x0badf00du
#define LADDR 0x1020304050607080ull
#define LKEY 0x0a0b0c0du
#define IMM 0x76543210u

static const uint32_t ring_sizes[] = { 1, 2, 4, 8, 16, 64, 1024 };

/* free-running bases: positions are base + nwqebb - k, so indices cross 2^16 and 2^32 */
static const uint64_t bases[] = { 0, 0x10000, 0x100000000ull, 0x1234560000ull };

enum kind {
	K_NOP,
	K_WRITE,
	K_FA,
	K_MASKED_CS64,
	K_SGL5,		/* write, 5 data segments: ds 7, 2 WQEBBs */
	K_SGL61,	/* write, 61 data segments: ds 63, 16 WQEBBs */
	K_SEND_SGL14,	/* send_imm, 14 data segments: ds 15, 4 WQEBBs */
	K_INLINE100,	/* write inline 100 B: ds 9, 3 WQEBBs */
	K_INLINE_MAX,	/* write_imm inline 972 B: ds 63, 16 WQEBBs */
	K_SEND_INLINE45, /* send inline 45 B: ds 5, 2 WQEBBs */
	K_NKINDS,
};

static const char *const kind_name[K_NKINDS] = {
	"nop", "write", "fa", "masked_cs64", "sgl5", "sgl61", "send_sgl14", "inline100",
	"inline_max", "send_inline45",
};

static struct dvx_mlx5_sge sgl[61];
static uint8_t payload[1024];

static void init_data(void)
{
	uint64_t seed = 0x5eed0100;
	uint32_t i;

	for (i = 0; i < DVX_ARRAY_SIZE(sgl); i++) {
		sgl[i].addr = t_rand64(&seed);
		sgl[i].lkey = t_rand32(&seed);
		sgl[i].length = (t_rand32(&seed) & 0x7fffffffu) | 1u;
	}
	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(t_rand32(&seed) | 1u);	/* never 0: padding shows */
}

/* build @k at @idx with dvx; return its WQEBBs */
static int build(const struct dvx_mlx5_wq *wq, enum kind k, uint32_t idx)
{
	switch (k) {
	case K_NOP:
		return dvx_mlx5_wqe_nop(wq, idx, 0x08);
	case K_WRITE:
		return dvx_mlx5_wqe_rdma_write(wq, idx, 0x08, RADDR, RKEY, LADDR, LKEY, 0x1000);
	case K_FA:
		return dvx_mlx5_wqe_atomic_fa(wq, idx, 0x08, RADDR, RKEY, 0x0102030405060708ull,
					      LADDR, LKEY);
	case K_MASKED_CS64:
		return dvx_mlx5_wqe_masked_cs64(wq, idx, 0x08,
						&(struct dvx_mlx5_raddr){ RADDR, RKEY },
						&(struct dvx_mlx5_masked_cs){
							0x1111111111111111ull,
							0x2222222222222222ull,
							0x3333333333333333ull,
							0x4444444444444444ull },
						LADDR, LKEY);
	case K_SGL5:
		return dvx_mlx5_wqe_rdma_sgl(wq, idx, DVX_MLX5_OPCODE_RDMA_WRITE, 0x08, 0,
					     &(struct dvx_mlx5_raddr){ RADDR, RKEY }, sgl, 5);
	case K_SGL61:
		return dvx_mlx5_wqe_rdma_sgl(wq, idx, DVX_MLX5_OPCODE_RDMA_READ, 0x08, 0,
					     &(struct dvx_mlx5_raddr){ RADDR, RKEY }, sgl, 61);
	case K_SEND_SGL14:
		return dvx_mlx5_wqe_send_sgl(wq, idx, DVX_MLX5_OPCODE_SEND_IMM, 0x08, IMM, sgl, 14);
	case K_INLINE100:
		return dvx_mlx5_wqe_rdma_write_inline(wq, idx, DVX_MLX5_OPCODE_RDMA_WRITE, 0x08, 0,
						      &(struct dvx_mlx5_raddr){ RADDR, RKEY },
						      payload, 100);
	case K_INLINE_MAX:
		return dvx_mlx5_wqe_rdma_write_inline(wq, idx, DVX_MLX5_OPCODE_RDMA_WRITE_IMM, 0x08,
						      IMM, &(struct dvx_mlx5_raddr){ RADDR, RKEY },
						      payload, DVX_MLX5_MAX_INLINE);
	case K_SEND_INLINE45:
		return dvx_mlx5_wqe_send_inline(wq, idx, DVX_MLX5_OPCODE_SEND, 0x08, 0, payload,
						45);
	default:
		return -1;
	}
}

/* the same WQE, linear, from prm 2; returns its byte length (ds * 16) */
static size_t reference(uint8_t *lin, enum kind k, uint32_t idx)
{
	uint32_t i;

	switch (k) {
	case K_NOP:
		t_ctrl(lin, 0, idx, 0x00, QPN, 1, 0x08, 0);
		return 16;
	case K_WRITE:
		t_ctrl(lin, 0, idx, 0x08, QPN, 3, 0x08, 0);
		t_raddr(lin + 16, RADDR, RKEY);
		t_data(lin + 32, 0x1000, LKEY, LADDR);
		return 48;
	case K_FA:
		t_ctrl(lin, 0, idx, 0x12, QPN, 4, 0x08, 0);
		t_raddr(lin + 16, RADDR, RKEY);
		t_be64(lin + 32, 0x0102030405060708ull);
		t_be64(lin + 40, 0);
		t_data(lin + 48, 8, LKEY, LADDR);
		return 64;
	case K_MASKED_CS64:
		t_ctrl(lin, 0x09, idx, 0x14, QPN, 5, 0x08, 0);
		t_raddr(lin + 16, RADDR, RKEY);
		t_be64(lin + 32, 0x3333333333333333ull);	/* swap */
		t_be64(lin + 40, 0x1111111111111111ull);	/* compare */
		t_be64(lin + 48, 0x4444444444444444ull);	/* swap mask */
		t_be64(lin + 56, 0x2222222222222222ull);	/* compare mask */
		t_data(lin + 64, 8, LKEY, LADDR);
		return 80;
	case K_SGL5:
	case K_SGL61:
		t_ctrl(lin, 0, idx, k == K_SGL5 ? 0x08 : 0x10, QPN, k == K_SGL5 ? 7 : 63, 0x08, 0);
		t_raddr(lin + 16, RADDR, RKEY);
		for (i = 0; i < (k == K_SGL5 ? 5u : 61u); i++)
			t_data(lin + 32 + 16 * i, sgl[i].length, sgl[i].lkey, sgl[i].addr);
		return k == K_SGL5 ? 7 * 16 : 63 * 16;
	case K_SEND_SGL14:
		t_ctrl(lin, 0, idx, 0x0b, QPN, 15, 0x08, IMM);
		for (i = 0; i < 14; i++)
			t_data(lin + 16 + 16 * i, sgl[i].length, sgl[i].lkey, sgl[i].addr);
		return 15 * 16;
	case K_INLINE100:
		t_ctrl(lin, 0, idx, 0x08, QPN, 9, 0x08, 0);
		t_raddr(lin + 16, RADDR, RKEY);
		assert_int_equal(t_inline(lin + 32, payload, 100), 7);
		return 9 * 16;
	case K_INLINE_MAX:
		t_ctrl(lin, 0, idx, 0x09, QPN, 63, 0x08, IMM);
		t_raddr(lin + 16, RADDR, RKEY);
		assert_int_equal(t_inline(lin + 32, payload, DVX_MLX5_MAX_INLINE), 61);
		return 63 * 16;
	case K_SEND_INLINE45:
		t_ctrl(lin, 0, idx, 0x0a, QPN, 5, 0x08, 0);
		assert_int_equal(t_inline(lin + 16, payload, 45), 4);
		return 5 * 16;
	default:
		fail();
		return 0;
	}
}

/* every kind, at every position from which it touches the ring's last WQEBB */
static void test_wrap_all_kinds(void **state)
{
	uint8_t lin[1024];
	size_t s, b;
	int k;

	(void)state;
	init_data();
	for (s = 0; s < DVX_ARRAY_SIZE(ring_sizes); s++) {
		uint32_t n = ring_sizes[s];
		size_t bytes = (size_t)n * 64;
		uint8_t *ring = t_ring_alloc(bytes, T_POISON);
		struct dvx_mlx5_wq wq;

		memset(&wq, 0, sizeof(wq));
		assert_int_equal(dvx_mlx5_wq_init(&wq, ring, n, QPN, DVX_MLX5_MAX_INLINE), 0);
		for (k = 0; k < K_NKINDS; k++) {
			uint32_t w = (uint32_t)(reference(lin, (enum kind)k, 0) + 63) / 64;
			uint32_t back;

			if (w > n)
				continue;	/* does not fit this ring */
			for (b = 0; b < DVX_ARRAY_SIZE(bases); b++) {
				for (back = 1; back <= w + 1 && back <= n; back++) {
					uint32_t idx = (uint32_t)(bases[b] + n - back);
					uint8_t fill = (idx & 1) ? T_POISON2 : T_POISON;
					size_t len;

					memset(ring, fill, bytes);
					assert_int_equal(build(&wq, (enum kind)k, idx), (int)w);
					len = reference(lin, (enum kind)k, idx & 0xffff);
					t_assert_ring_wqe(ring, bytes, idx, lin, len, fill,
							  kind_name[k], __FILE__, __LINE__);
				}
			}
		}
		dvx_test_free(ring);
	}
}

/* a write-imm inline and a send-imm inline of @len bytes at @idx, each where it fits */
static void check_inline_at(uint8_t *ring, size_t bytes, const struct dvx_mlx5_wq *wq,
			    uint32_t n, uint32_t idx, uint32_t len)
{
	uint32_t wds = 2 + (4 + len + 15) / 16, sds = 1 + (4 + len + 15) / 16;
	uint8_t lin[1024];

	if ((wds + 3) / 4 <= n) {
		memset(ring, T_POISON, bytes);
		assert_int_equal(dvx_mlx5_wqe_rdma_write_inline(wq, idx, 0x09, 0x0a, IMM,
								&(struct dvx_mlx5_raddr){ RADDR,
											  RKEY },
								payload, len),
				 (int)(wds + 3) / 4);
		t_ctrl(lin, 0, idx, 0x09, QPN, (uint8_t)wds, 0x0a, IMM);
		t_raddr(lin + 16, RADDR, RKEY);
		t_inline(lin + 32, payload, len);
		assert_ring_wqe(ring, bytes, idx, lin, wds * 16, T_POISON);
	}
	if ((sds + 3) / 4 <= n) {
		memset(ring, T_POISON2, bytes);
		assert_int_equal(dvx_mlx5_wqe_send_inline(wq, idx, 0x0b, 0x02, IMM, payload, len),
				 (int)(sds + 3) / 4);
		t_ctrl(lin, 0, idx, 0x0b, QPN, (uint8_t)sds, 0x02, IMM);
		t_inline(lin + 16, payload, len);
		assert_ring_wqe(ring, bytes, idx, lin, sds * 16, T_POISON2);
	}
}

/* inline lengths 0 ... 300 at the last three positions of every ring that holds them:
 * the payload and its padding cross the end at every possible distance */
static void test_wrap_inline_lengths(void **state)
{
	size_t s, b;

	(void)state;
	init_data();
	for (s = 0; s < DVX_ARRAY_SIZE(ring_sizes); s++) {
		uint32_t n = ring_sizes[s];
		size_t bytes = (size_t)n * 64;
		uint8_t *ring = t_ring_alloc(bytes, T_POISON);
		struct dvx_mlx5_wq wq;
		uint32_t len, back;

		memset(&wq, 0, sizeof(wq));
		assert_int_equal(dvx_mlx5_wq_init(&wq, ring, n, QPN, DVX_MLX5_MAX_INLINE), 0);
		for (len = 0; len <= 300; len++) {
			for (b = 0; b < DVX_ARRAY_SIZE(bases); b++) {
				if (n == 1024 && b > 1)
					continue;	/* keep the big ring's share small */
				for (back = 1; back <= 3 && back <= n; back++)
					check_inline_at(ring, bytes, &wq, n,
							(uint32_t)(bases[b] + n - back), len);
			}
		}
		dvx_test_free(ring);
	}
}

/* scatter lists of 0 ... 61 entries at the last positions of a 16- and a 64-WQEBB ring */
static void test_wrap_sgl_counts(void **state)
{
	static const uint32_t sizes[] = { 16, 64 };
	uint8_t lin[1024];
	size_t s;

	(void)state;
	init_data();
	for (s = 0; s < DVX_ARRAY_SIZE(sizes); s++) {
		uint32_t n = sizes[s];
		size_t bytes = (size_t)n * 64;
		uint8_t *ring = t_ring_alloc(bytes, T_POISON);
		struct dvx_mlx5_wq wq;
		uint32_t nsge, back, i;
		int ret;

		memset(&wq, 0, sizeof(wq));
		assert_int_equal(dvx_mlx5_wq_init(&wq, ring, n, QPN, 0), 0);
		for (nsge = 0; nsge <= 61; nsge++) {
			uint32_t ds = 2 + nsge;

			for (back = 1; back <= 17; back++) {
				uint32_t idx = 0xffffffffu - n + back + 3;	/* crosses 2^32 */

				memset(ring, T_POISON, bytes);
				ret = dvx_mlx5_wqe_rdma_sgl(&wq, idx, 0x08, 0x08, 0,
							    &(struct dvx_mlx5_raddr){ RADDR, RKEY },
							    sgl, nsge);
				assert_int_equal(ret, (int)(ds + 3) / 4);
				t_ctrl(lin, 0, idx, 0x08, QPN, (uint8_t)ds, 0x08, 0);
				t_raddr(lin + 16, RADDR, RKEY);
				for (i = 0; i < nsge; i++)
					t_data(lin + 32 + 16 * i, sgl[i].length, sgl[i].lkey,
					       sgl[i].addr);
				assert_ring_wqe(ring, bytes, idx, lin, ds * 16, T_POISON);
			}
		}
		dvx_test_free(ring);
	}
}

/* consecutive free-running WQEs across 2^16 and 2^32 fill the ring back to back */
static void test_free_running_sequence(void **state)
{
	static const uint32_t starts[] = { 0xfff0u, 0xfffffff0u, 0x7ffffffau };
	uint8_t *ring = t_ring_alloc(8 * 64, T_POISON);
	struct dvx_mlx5_wq wq;
	size_t i;

	(void)state;
	memset(&wq, 0, sizeof(wq));
	assert_int_equal(dvx_mlx5_wq_init(&wq, ring, 8, QPN, 64), 0);
	for (i = 0; i < DVX_ARRAY_SIZE(starts); i++) {
		uint32_t idx = starts[i];

		while (idx - starts[i] < 40) {
			int w = idx % 3 ? dvx_mlx5_wqe_nop(&wq, idx, 0)
					: dvx_mlx5_wqe_masked_cs64(&wq, idx, 0,
								   &(struct dvx_mlx5_raddr){ 0, 0 },
								   &(struct dvx_mlx5_masked_cs){
									   0, 0, 0, 0 },
								   0, 0);
			uint8_t *c = ring + (idx & 7) * 64;

			assert_true(w == 1 || w == 2);
			assert_int_equal(c[1], (idx >> 8) & 0xff);
			assert_int_equal(c[2], idx & 0xff);
			assert_int_equal(c[3], w == 2 ? 0x14 : 0x00);
			/* the data segment of the second WQEBB, wrapped or not */
			if (w == 2)
				assert_hex(ring + ((idx + 1) & 7) * 64,
					   "00 00 00 08 00 00 00 00 00 00 00 00 00 00 00 00");
			idx += (uint32_t)w;
		}
	}
	dvx_test_free(ring);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wrap_all_kinds),
		cmocka_unit_test(test_wrap_inline_lengths),
		cmocka_unit_test(test_wrap_sgl_counts),
		cmocka_unit_test(test_free_running_sequence),
	};

	return cmocka_run_group_tests_name("mlx5-ring", tests, NULL, NULL);
}
