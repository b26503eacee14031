// SPDX-License-Identifier: MIT
/*
 * tests/gpu/test_gpu_winch.c - the window's channels on a real GPU (tests/gpu/winch_world.h):
 * two ranks as threads on two injected hosts, IB over the software NIC; rank 0's kernel
 * puts from 1, 8, 32 and 128 blocks (block scope) to rank 1 through a window of 1
 * channel and of 8 (block b on channel b mod 8, a QP each): every byte lands, rank 1's
 * signal and rank 0's counter are exact whatever the channel (and stay so after the
 * barrier); then gets of 8 B and 4 KiB (every byte) and fetch-adds one at a time (old
 * values 0, 1, ... in order) and 32 lanes a call (a permutation), the word exact. The
 * 8-channel case runs again with every buffer in GPU memory (the software NIC's copies
 * through tests/lib/gpu_dma.h, as a ConnectX reaches dma-bufs).
 *
 * Without a GPU it skips (exit 77); 'make gpu-check' runs it and fails instead.
 * DVX_GPU_TEST_QUICK=1: fewer rounds.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../lib/dvx_test.h"

#include "winch_world.h"

static int quick, skipped;

static void one(uint32_t nch, int gpu_data)
{
	static const uint32_t blocks[] = { 1, 8, 32, 128 };
	struct winch_opts o = { nch, blocks, 4, 1u << 20, quick ? 2 : 8, quick ? 16 : 64,
				quick ? 64 : 256, gpu_data };
	struct winch_res res;
	int rc = winch_run(&o, &res);

	if (rc == 77) {
		skipped = 1;
		skip();
	}
	if (rc)
		fail_msg("%s", res.why);
	printf("%u channel(s), %s memory: %llu values and bytes checked; put GB/s (1/8/32/128 blocks) "
	       "%.3f %.3f %.3f %.3f, get 8 B %.2f us, fetch-add %.2f us (software NIC)\n", nch,
	       gpu_data ? "GPU" : "host",
	       (unsigned long long)res.checked, res.put_gbs[0], res.put_gbs[1], res.put_gbs[2],
	       res.put_gbs[3], res.get_lat_ns[0] / 1e3, res.fadd_lat_ns / 1e3);
}

static void test_one_channel(void **state)
{
	(void)state;
	one(1, 0);
}

static void test_eight_channels(void **state)
{
	(void)state;
	one(8, 0);
}

/* the same with the window buffer, sources, gets' destination and results in GPU
 * memory: the software NIC reaches them through its DMA callbacks (gpu_dma.h) */
static void test_eight_channels_gpu_data(void **state)
{
	(void)state;
	one(8, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_channel),
		cmocka_unit_test(test_eight_channels),
		cmocka_unit_test(test_eight_channels_gpu_data),
	};
	const char *q = getenv("DVX_GPU_TEST_QUICK");
	const char *req = getenv("DVX_GPU_REQUIRED");
	int rc;

	setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
	quick = q && *q == '1';
	rc = cmocka_run_group_tests_name("gpu-winch", tests, NULL, NULL);
	if (skipped) {
		printf("no NVIDIA GPU, driver or nvcc; run 'make gpu-check' on a machine with one\n");
		return req && *req == '1' ? 1 : DVX_TEST_SKIP_ALL;
	}
	return rc;
}
