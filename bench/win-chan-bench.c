// SPDX-License-Identifier: MIT
/*
 * bench/win-chan-bench - the window's device put from 1, 8, 32 and 128 blocks to one
 * peer over 1 channel (every block on one QP) against N channels (block b on channel b
 * mod N, a QP each), beside get and fetch-add latency and rate, GPU-initiated; two
 * ranks as threads on two injected hosts, IB over the software NIC
 * (tests/gpu/winch_world.h: every byte and value is checked as the test does).
 *
 * On the software NIC the figures show the serialisation of one QP against many (a CPU
 * thread executes the WQEs), not link speed; on a ConnectX the same kernels measure the
 * link. Bandwidth: host wall time from rank 0's launch until its counter says every
 * put was acknowledged; latency: a launch of calls each waited for (dvx_win_dev_flush),
 * over their number; rate: a launch of calls waited for once at the end.
 *
 *   win-chan-bench [--quick] [--gpu-data] [N]
 *	N: the channels of the second column (default 32); --gpu-data: the window buffer,
 *	sources and results in GPU memory (the software NIC's copies, tests/lib/gpu_dma.h)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tests/gpu/winch_world.h"

int main(int argc, char **argv)
{
	static const uint32_t blocks[] = { 1, 8, 32, 128 };
	struct winch_res r1, rn;
	struct winch_opts o;
	uint32_t n = 32;
	int quick = 0, gpu_data = 0, i, rc;

	setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick"))
			quick = 1;
		else if (!strcmp(argv[i], "--gpu-data"))
			gpu_data = 1;
		else
			n = (uint32_t)atoi(argv[i]);
	}
	if (n < 2 || n > 128) {
		fprintf(stderr, "win-chan-bench: N in [2, 128]\n");
		return 2;
	}
	memset(&o, 0, sizeof(o));
	o.blocks = blocks;
	o.nblocks = 4;
	o.put_bytes = 4u << 20;
	o.put_iters = quick ? 2 : 8;
	o.lat_iters = quick ? 50 : 500;
	o.rate_iters = quick ? 128 : 1024;
	o.gpu_data = gpu_data;
	o.nch = 1;
	rc = winch_run(&o, &r1);
	if (rc == 77) {
		printf("win-chan-bench: %s; run it on a machine with an NVIDIA GPU\n", r1.why);
		return 77;
	}
	if (rc) {
		fprintf(stderr, "win-chan-bench: %s\n", r1.why);
		return 1;
	}
	o.nch = n;
	rc = winch_run(&o, &rn);
	if (rc) {
		fprintf(stderr, "win-chan-bench: %s\n", rn.why);
		return 1;
	}
	printf("win-chan-bench: 2 ranks on 2 injected hosts (IB over the software NIC), the window "
	       "buffer in %s; %llu MiB a launch round, %u rounds\n",
	       gpu_data ? "GPU memory (the NIC's copies: cuMemcpyAsync)" : "host memory the GPU maps",
	       (unsigned long long)(o.put_bytes >> 20), o.put_iters);
	printf("\nput_signal_counter bandwidth from B blocks to one peer, GB/s\n");
	printf("| blocks | 1 channel | %u channels | %u / 1 |\n", n, n);
	printf("|---|---|---|---|\n");
	for (i = 0; i < 4; i++)
		printf("| %u | %.3f | %.3f | %.2f |\n", blocks[i], r1.put_gbs[i], rn.put_gbs[i],
		       r1.put_gbs[i] > 0 ? rn.put_gbs[i] / r1.put_gbs[i] : 0.0);
	printf("\nget and fetch-add, one GPU thread (fetch-add rate: one warp, 32 a call)\n");
	printf("| operation | 1 channel | %u channels |\n", n);
	printf("|---|---|---|\n");
	printf("| get 8 B latency, us | %.2f | %.2f |\n", r1.get_lat_ns[0] / 1e3, rn.get_lat_ns[0] / 1e3);
	printf("| get 4 KiB latency, us | %.2f | %.2f |\n", r1.get_lat_ns[1] / 1e3, rn.get_lat_ns[1] / 1e3);
	printf("| get 8 B rate, M/s | %.3f | %.3f |\n", r1.get_rate / 1e6, rn.get_rate / 1e6);
	printf("| fetch-add latency, us | %.2f | %.2f |\n", r1.fadd_lat_ns / 1e3, rn.fadd_lat_ns / 1e3);
	printf("| fetch-add rate, M/s | %.3f | %.3f |\n", r1.fadd_rate / 1e6, rn.fadd_rate / 1e6);
	printf("\nchecked: %llu + %llu values and bytes\n", (unsigned long long)r1.checked,
	       (unsigned long long)rn.checked);
	return 0;
}
