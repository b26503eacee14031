/* SPDX-License-Identifier: MIT */
/*
 * tests/lib/gpu_dma.h - a real GPU beside the software NIC: a hal with the CUDA backend's
 * GPU table in which a dma-buf of device memory (gpu_dmabuf_fd, what dvx asks for to
 * register GPU memory on a NIC: GPUDirect RDMA) is one of the fabric's fake dma-bufs
 * over that memory (dvx_sim_dmabuf_export_dma()), its DMA callbacks copying with the
 * CUDA driver on the NIC's own stream of the memory's GPU (cuMemcpyAsync, then the
 * stream waited for: done, in order, when a callback returns). So the window's buffer,
 * the P2P transport's data and any MR dvx registers on the software NIC can live in
 * GPU memory as they would on a ConnectX. A GPU opened on dvx_gdma_hal() is otherwise
 * the CUDA backend's; descriptors close through the fabric's hal (a fake dma-buf closes
 * as a dma-buf does).
 *
 * The copies are driver calls in the application's own process, so they wait for
 * whatever holds the driver (bench/gpu-dma-bench, bench/RESULTS.md 2026-11-29, one
 * H200, driver 580): a module load or a host unregister by any thread of the process
 * waits for the running kernels and holds every copy meanwhile, in any context of the
 * process and under any CUDA_MODULE_LOADING; a copy made by another process is not
 * held. A kernel that waits for such a copy then waits for its own bound. So a program
 * that runs kernels against the NIC must load its modules before those kernels start
 * and unregister host memory only after they end. Under compute-sanitizer a
 * plain launch holds the copies the same way. Measured too: a kernel whose threads on
 * every SM read host memory makes each copy 40-300 times slower. Not measured: whether
 * CUDA's default of 8 hardware queues (CUDA_DEVICE_MAX_CONNECTIONS) can put the copies'
 * stream behind a spinning kernel's; the GPU tests and win-ib-bench set 32 to be sure.
 */
#ifndef DVX_TEST_GPU_DMA_H
#define DVX_TEST_GPU_DMA_H

#include <pthread.h>
#include <stdint.h>

#include <dvx/gpu/gpu.h>
#include <dvx/hal/sim.h>

#define DVX_GDMA_GPUS 8

/**
 * struct dvx_gdma - the hal and its copy engines.
 * @hal:	the hal to open GPUs on (dvx_gdma_hal())
 * @fab:	the fabric whose NICs register the memory
 * @eng:	per GPU ordinal: the NIC's own handle on it and its stream (opened at the
 *		first dma-buf of that GPU's memory), the copies and bytes it made, the
 *		first failure, the slowest copy (ns) and the copies that took over 100 ms
 */
struct dvx_gdma {
	struct dvx_hal hal;
	struct dvx_hal_gpu_ops gops;
	struct dvx_hal_host_ops hops;
	struct dvx_sim_fabric *fab;
	pthread_mutex_t lock;
	struct dvx_gdma_eng {
		struct dvx_gdma *x;
		struct dvx_gpu g;
		struct dvx_gpu_stream s;
		struct dvx_sim_dma dma;
		int up;
		uint64_t reads, writes, bytes;
		uint64_t max_ns, slow;
		int err;
	} eng[DVX_GDMA_GPUS];
};

/* dvx_gdma_init() - set @x up over @fab (started or not). Returns 0 or -ENODEV (no CUDA). */
int dvx_gdma_init(struct dvx_gdma *x, struct dvx_sim_fabric *fab);

/* dvx_gdma_hal() - the hal to open the ranks' GPUs on. */
const struct dvx_hal *dvx_gdma_hal(struct dvx_gdma *x);

/*
 * dvx_gdma_engine() - GPU @ordinal's copy engine as DMA callbacks, for a caller that
 * exports its own dma-bufs (dvx_sim_dmabuf_export_dma()); the calling thread's current
 * context may change. NULL when the GPU cannot be opened.
 */
const struct dvx_sim_dma *dvx_gdma_engine(struct dvx_gdma *x, int ordinal);

/* dvx_gdma_fini() - close the copy engines (after every registration is gone). */
void dvx_gdma_fini(struct dvx_gdma *x);

#endif
