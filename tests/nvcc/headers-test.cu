// SPDX-License-Identifier: MIT
/*
 * The mlx5 headers compiled as CUDA: the device pass must accept every builder and
 * decoder helper (so GPU threads can build WQEs with the same code), and the host pass
 * (nvcc's host compiler, in C++) must produce the same bytes as the C build. The
 * kernel is compiled (-fatbin, device code only) for sm_80 and sm_90 but not launched:
 * dvx never links the CUDA runtime, and GPU runs belong to the GPU suite. The host
 * pass is compiled by nvcc too (-c), and the runnable check below is the same file
 * built by the C++ compiler.
 */
#include <dvx/mlx5/wqe.h>
#include <dvx/mlx5/sq.h>
#include <dvx/mlx5/rq.h>
#include <dvx/mlx5/cqe.h>
#include <dvx/mlx5/ifc.h>
#include <dvx/nvl/dev.cuh>
#include <dvx/win/layout.h>
#ifdef DVX_NVCC_DEVICE_PASS
#include <dvx/win/dev.cuh>
#endif

#include <cstdio>
#include <cstring>

#ifdef DVX_NVCC_DEVICE_PASS
/* built with -fatbin: device code only */
__global__ void dvx_build_on_gpu(uint8_t *ring, uint32_t nwqebb, struct dvx_mlx5_cqe_info *out,
				 const struct dvx_mlx5_cqe64 *cqe)
{
	struct dvx_mlx5_wq wq;
	struct dvx_mlx5_raddr r = { 0x1000, 1 }, r16 = { 0x10, 1 };
	struct dvx_mlx5_masked_cs cs = { 2, 3, 4, 5 };
	uint32_t i = threadIdx.x;

	dvx_mlx5_wq_init(&wq, ring, nwqebb, 0x123, 64);
	switch (i % 6) {
	case 0: dvx_mlx5_wqe_rdma_write(&wq, i, DVX_MLX5_WQE_CTRL_CQ_UPDATE, 0x1000, 0x5678, 0x40, 0x1234, 4096); break;
	case 1: dvx_mlx5_wqe_atomic_fa(&wq, i, DVX_MLX5_WQE_CTRL_CQ_UPDATE, 0x1000, 0x5678, 1, 0, 0x99); break;
	case 2: dvx_mlx5_wqe_wait_cq(&wq, i, DVX_MLX5_WQE_CTRL_CQ_UPDATE, 0x4a, 5); break;
	case 3: dvx_mlx5_wqe_masked_cs64(&wq, i, 0, &r, &cs, 0, 7); break;
	case 4: { uint64_t v = 0x1122334455667788ull; dvx_mlx5_wqe_rdma_write_inline(&wq, i, DVX_MLX5_OPCODE_RDMA_WRITE, 0, 0, &r16, &v, 8); break; }
	default: dvx_mlx5_wqe_nop(&wq, i, 0); break;
	}
	if (i == 0)
		dvx_mlx5_cqe_parse(cqe, out);
}

/* the NVLink device API at every scope (compiled, not run) */
__device__ int dvx_nvl_ops(const struct dvx_dev_grp &g, uint8_t *dst, const uint8_t *src,
			   uint64_t len, uint64_t *sig, uint64_t *ctr)
{
	struct dvx_nvl_notify n = { sig, DVX_NVL_SIG_SET, 2, ctr, 1 };
	int e = 0;

	e |= dvx_nvl_dev_put(g, dst, src, len);
	e |= dvx_nvl_dev_put_signal(g, dst, src, len, sig, DVX_NVL_SIG_ADD, 1);
	e |= dvx_nvl_dev_put_counter(g, dst, src, len, ctr, 1);
	e |= dvx_nvl_dev_put_signal_counter(g, dst, src, len, &n);
	e |= dvx_nvl_dev_post(g, dst, src, len, &n);
	e |= dvx_nvl_dev_signal(g, sig, DVX_NVL_SIG_ADD, 1);
	e |= dvx_nvl_dev_wait(g, sig, DVX_CMP_GE, 1, 1000);
	return e;
}

__global__ void dvx_nvl_on_gpu(uint8_t *dst, const uint8_t *src, uint64_t len, uint64_t *sig,
			       uint64_t *ctr, int *err)
{
	int e = 0;

	if (threadIdx.x == 0) {
		e |= dvx_nvl_ops(dvx_dev_thread(), dst, src, len, sig, ctr);
		e |= dvx_nvl_signal(sig, DVX_NVL_SIG_ADD, 1);
		e |= dvx_nvl_wait(sig, DVX_CMP_GE, 1, 1000, nullptr);
	}
	__syncthreads();
	if (threadIdx.x < 32)
		e |= dvx_nvl_ops(dvx_dev_warp(), dst, src, len, sig, ctr);
	if (threadIdx.x < 32)
		e |= dvx_nvl_ops(dvx_dev_tile(8), dst, src, len, sig, ctr);
	e |= dvx_nvl_ops(dvx_dev_block(), dst, src, len, sig, ctr);
	if (threadIdx.x < 32)
		e |= dvx_nvl_dev_get(dvx_dev_warp(), dst, src, len);
	e |= dvx_nvl_dev_amo(dvx_dev_block(), sig, DVX_NVL_AMO_FADD, 1, 0, ctr);
	if (threadIdx.x < 32)
		e |= dvx_nvl_dev_amo(dvx_dev_tile(4), sig, DVX_NVL_AMO_CSWAP, 1, 0, ctr);
	e |= dvx_nvl_dev_quiet(dvx_dev_thread());
	dvx_nvl_flush();
	err[threadIdx.x] = e + (int)dvx_nvl_read(ctr);
}

/* the P2P device API at every scope (compiled, not run) */
__device__ int dvx_p2p_ops(const struct dvx_dev_grp &g, const struct dvx_p2p_dev &d,
			   const struct dvx_p2p_lbuf &src, const struct dvx_p2p_rbuf &dst,
			   const struct dvx_p2p_lbuf &ctr)
{
	struct dvx_p2p_xfer x = { &src, 64 * g.lane, &dst, 64 * g.lane, 64 };
	struct dvx_p2p_notify n = { &dst, 0, 1, &ctr, 0, DVX_P2P_FENCE };
	struct dvx_p2p_notify s = { &dst, 8, 1, nullptr, 0, 0 };
	struct dvx_p2p_notify c = { nullptr, 0, 0, &ctr, 8, 0 };
	struct dvx_p2p_ticket tk;
	int e = 0;

	e |= dvx_p2p_dev_post(g, d, 1, 0, &x, &n, 1000, &tk);
	e |= dvx_p2p_dev_put(g, d, 1, 0, &x, 1000, &tk);
	e |= dvx_p2p_dev_put_signal(g, d, 1, 0, &x, &s, 1000, nullptr);
	e |= dvx_p2p_dev_signal(g, d, 1, 0, &s, 1000, nullptr);
	e |= dvx_p2p_dev_put_counter(g, d, 1, 0, &x, &c, 1000, nullptr);
	e |= dvx_p2p_dev_put_signal_counter(g, d, 1, 0, &x, &n, 1000, nullptr);
	e |= dvx_p2p_dev_signal_counter(g, d, 1, 0, &n, 1000, nullptr);
	if (g.lane == 0) {
		e |= dvx_p2p_dev_wait_local(d, tk, 1000);
		e |= dvx_p2p_dev_wait_signal((const uint64_t *)src.ptr, DVX_CMP_GE, 1, 1000);
		e |= dvx_p2p_dev_wait_counter(d, 1, 0, (const uint64_t *)ctr.ptr, DVX_CMP_GE, 1,
					      1000);
		e |= dvx_p2p_dev_flush(d, 0, 1000);
	}
	{
		struct dvx_p2p_rxfer gx = { &dst, 8 * g.lane, &src, 8 * g.lane, 8 };
		struct dvx_p2p_amo fa = { &dst, 8 * g.lane, DVX_P2P_AMO_FADD, 1, 0, &src, 0 };
		struct dvx_p2p_amo cs = { &dst, 0, DVX_P2P_AMO_CSWAP, 1, 0, &src, 8 };
		struct dvx_p2p_amo pv = { &dst, 8, DVX_P2P_AMO_SET, 42, 0, nullptr, 0 };
		struct dvx_p2p_amo ad = { &dst, 8, DVX_P2P_AMO_ADD, 1, 0, nullptr, 0 };

		e |= dvx_p2p_dev_get(g, d, 1, 0, &gx, 0, &tk);
		e |= dvx_p2p_dev_amo(g, d, 1, 1, &fa, 0, &tk);
		e |= dvx_p2p_dev_fetch_add(g, d, 1, 1, &fa, 0, &tk);
		e |= dvx_p2p_dev_compare_swap(g, d, 1, 2, &cs, 0, nullptr);
		e |= dvx_p2p_dev_put_value(g, d, 1, 3, &pv, 0, nullptr);
		e |= dvx_p2p_dev_add(g, d, 1, 3, &ad, 0, nullptr);
		e |= dvx_p2p_dev_reset_signal(g, d, 1, 0, &dst, 16, 0, nullptr);
		e |= dvx_p2p_dev_quiet(g, d, 0);
	}
	return e;
}

__global__ void dvx_p2p_on_gpu(const struct dvx_p2p_dev d, const struct dvx_p2p_lbuf src,
			       const struct dvx_p2p_rbuf dst, const struct dvx_p2p_lbuf ctr,
			       int *err)
{
	int e = 0;

	if (threadIdx.x == 0)
		e |= dvx_p2p_ops(dvx_dev_thread(), d, src, dst, ctr);
	__syncthreads();
	if (threadIdx.x < 32)
		e |= dvx_p2p_ops(dvx_dev_warp(), d, src, dst, ctr);
	if (threadIdx.x < 32)
		e |= dvx_p2p_ops(dvx_dev_tile(4), d, src, dst, ctr);
	e |= dvx_p2p_ops(dvx_dev_block(), d, src, dst, ctr);
	err[threadIdx.x] = e;
}

/* the window's device API at every scope (compiled, not run) */
__device__ int dvx_win_ops(const struct dvx_dev_grp &g, const struct dvx_win_dev &d,
			   const struct dvx_p2p_lbuf &src, uint8_t *buf)
{
	struct dvx_win_xfer x = { &src, 0, 0, 64 };
	uint64_t seen;
	int e = 0;

	e |= dvx_win_dev_signal_peer(g, d, 1, 0, DVX_NVL_SIG_ADD, 1);
	e |= dvx_win_dev_signal_all(g, d, 0, DVX_NVL_SIG_ADD, 1);
	e |= dvx_win_dev_wait_signal(g, d, 0, DVX_CMP_GE, 1, 1000, &seen);
	e |= dvx_win_dev_wait_signal_from(g, d, 1, 0, DVX_CMP_EQ, 1, 1000, &seen);
	e |= dvx_win_dev_wait_counter(g, d, 1, 0, DVX_CMP_GE, 1, 1000);
	e |= dvx_win_dev_barrier(g, d, 0, 1000);
	e |= dvx_win_dev_barrier_peer(g, d, 1, 1, 1000);
	e |= dvx_win_dev_put(g, d, 1, &x);
	e |= dvx_win_dev_put_signal(g, d, 1, &x, 0, 1);
	e |= dvx_win_dev_put_counter(g, d, 1, &x, 0);
	e |= dvx_win_dev_put_signal_counter(g, d, 1, &x, 0, 1, 0);
	e |= dvx_win_dev_put_ex(g, d, 1, &x, DVX_WIN_PUT_SIG, 0, 1, 0);
	e |= dvx_win_dev_flush(g, d, 0);
	e |= dvx_win_dev_quiet(g, d, 0);
	e |= (int)dvx_win_dev_chan(g, d);
	e |= dvx_win_dev_send(g, d, 1, buf, 1000, 1000);
	e |= dvx_win_dev_recv(g, d, 1, buf, 1000, 1000);
	{
		struct dvx_win_rxfer rx = { &src, 0, 0, 64 };
		struct dvx_win_amo a = { 8, 1, 0, nullptr, 0 };
		struct dvx_win_amo f = { 16, 1, 0, &src, 8 * (uint64_t)g.lane };

		e |= dvx_win_dev_get(g, d, 1, &rx);
		e |= dvx_win_dev_amo(g, d, 1, DVX_WIN_AMO_ADD, &a);
		e |= dvx_win_dev_put_value(g, d, 1, &a);
		e |= dvx_win_dev_add(g, d, 1, &a);
		e |= dvx_win_dev_fetch_add(g, d, 1, &f);
		e |= dvx_win_dev_compare_swap(g, d, 1, &f);
		e |= dvx_win_dev_reset_peer_signal(g, d, 1, 0);
	}
	return e + (int)dvx_win_read_signal(d, 0) + (int)dvx_win_read_signal_from(d, 1, 0) +
	       (int)dvx_win_read_counter(d, 1, 0) + dvx_win_reset_counter(d, 1, 0) +
	       (int)dvx_win_dev_nvlink_address(d, 1, 0) + (int)dvx_win_kind(d, 1);
}

__global__ void dvx_win_on_gpu(const struct dvx_win_dev d, const struct dvx_p2p_lbuf src, uint8_t *buf,
			       int *err)
{
	int e = 0;

	if (threadIdx.x == 0)
		e |= dvx_win_ops(dvx_dev_thread(), d, src, buf);
	__syncthreads();
	if (threadIdx.x < 32)
		e |= dvx_win_ops(dvx_dev_warp(), d, src, buf);
	if (threadIdx.x < 32)
		e |= dvx_win_ops(dvx_dev_tile(16), d, src, buf);
	e |= dvx_win_ops(dvx_dev_block(), d, src, buf);
	err[threadIdx.x] = e;
}
#else

static int fails;

static void expect(const char *name, const uint8_t *got, const char *hex)
{
	uint8_t want[64];
	size_t n = 0;
	unsigned v;

	while (*hex && n < sizeof(want)) {
		if (sscanf(hex, "%2x", &v) == 1) { want[n++] = (uint8_t)v; hex += 2; }
		while (*hex == ' ') hex++;
	}
	if (memcmp(got, want, n)) {
		std::printf("[  FAILED  ] %s: bytes differ\n", name);
		fails++;
	} else {
		std::printf("[       OK ] %s\n", name);
	}
}

int main()
{
	alignas(64) static uint8_t ring[64 * 8];
	struct dvx_mlx5_wq wq;

	std::memset(ring, 0, sizeof(ring));
	dvx_mlx5_wq_init(&wq, ring, 8, 0x123, 64);
	/* prm 2.8 example A (host pass of nvcc, C++) */
	dvx_mlx5_wqe_rdma_write(&wq, 5, DVX_MLX5_WQE_CTRL_CQ_UPDATE, 0x1000, 0x5678, 0x40, 0x1234, 4096);
	expect("nvcc-host-rdma-write", ring + 5 * 64,
	       "00000508 00012303 00000008 00000000 0000000000001000 00005678 00000000"
	       " 00001000 00001234 0000000000000040");
	/* example D */
	dvx_mlx5_wq_init(&wq, ring, 8, 0x234, 64);
	dvx_mlx5_wqe_wait_cq(&wq, 7, DVX_MLX5_WQE_CTRL_CQ_UPDATE, 0x4a, 5);
	expect("nvcc-host-wait", ring + 7 * 64,
	       "0000070f 00023402 00000008 00000000 0000000000000000 00000005 0000004a");
	std::printf("[==========] 2 test(s) run.\n");
	if (fails) {
		std::printf("[  FAILED  ] %d test(s), listed above\n", fails);
		return 1;
	}
	std::printf("[  PASSED  ] 2 test(s).\n");
	return 0;
}
#endif
