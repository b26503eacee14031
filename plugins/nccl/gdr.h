/* SPDX-License-Identifier: MIT */
/*
 * plugins/nccl/gdr.h - GPU buffers behind the plugin's software NICs (docs/nccl.md,
 * "GPU buffers"): what the plugin offers NCCL as NCCL_PTR_CUDA.
 *
 * The software NIC reaches a GPU's memory as a ConnectX does through dma-buf: not by
 * address but through a DMA engine. A registration of NCCL_PTR_CUDA memory exports the
 * range as a software dma-buf over that engine (dvx_sim_dmabuf_export_dma()) and
 * registers an MR over it; every byte the NIC moves for that MR (sends gathered,
 * receives placed, on this process's side of the wire) then goes through the engine, in
 * order per QP, before the completion is written.
 *
 * The engine (DVX_NET_GDR_ENGINE):
 *  - "process" (the default): dvx-copier, a process of the plugin's own that maps the
 *    allocation by a CUDA IPC handle or POSIX fd and copies through a shared staging
 *    area (copier.h). CUDA holds a process's copies while any of its threads loads a
 *    module or unregisters host memory and kernels run (bench/gpu-dma-bench "calls",
 *    measured on an H200); a kernel of the application that waits for the NIC's bytes
 *    would then wait for ever. Another process's copies are not held. The price: each
 *    copy is a round trip to that process, and while a kernel of the application runs
 *    the GPU time-slices between the two contexts (about 250-450 us a copy then,
 *    against 15-25 us in-process, measured the same way).
 *  - "thread": the CUDA driver's copies on the memory's own device, on a non-blocking
 *    stream of the plugin's own, made by the NIC's progress thread in the application's
 *    process: fast, and exposed to the hold above. On two H200s NCCL's traffic
 *    through it ran exact and then stalled (2026-11-28), and failed at the first
 *    all_gather (2026-11-29), where dvx-copier ran every collective exact.
 *
 * Modes (DVX_NET_GDR): "0" (the default: host memory only), "1" or "cuda" (on; a GPU
 * is required, and dvx-copier for the process engine), "auto" (on when this libdvx has
 * CUDA, the driver finds a GPU and the engine can run), "host" (tests without a GPU:
 * NCCL_PTR_CUDA pointers are host memory, reached through the same software dma-bufs
 * by memcpy, so that every step but the engine runs), "hostproc" (tests without a GPU
 * of the process engine: NCCL_PTR_CUDA pointers are host memory mapped shared from a
 * memfd the process holds open, exported by fd to dvx-copier --sim, which copies as it
 * would on a GPU). docs/nccl.md says what was seen.
 */
#ifndef DVX_PLUGINS_NCCL_GDR_H
#define DVX_PLUGINS_NCCL_GDR_H

#include <stddef.h>
#include <stdint.h>

struct dvx_sim_fabric;

enum dvxn_gdr_mode {
	DVXN_GDR_OFF = 0,
	DVXN_GDR_CUDA = 1,	/* the CUDA driver's copies */
	DVXN_GDR_HOST = 2,	/* memcpy over host memory: tests */
	DVXN_GDR_HOSTPROC = 3,	/* dvx-copier --sim over memfd-backed host memory: tests */
};

enum dvxn_gdr_engine {
	DVXN_GDR_PROCESS = 0,	/* dvx-copier */
	DVXN_GDR_THREAD = 1,	/* the NIC's progress thread, in this process */
};

/*
 * decide the mode from @env (DVX_NET_GDR; NULL or "" is off) and the engine from
 * @engine_env (DVX_NET_GDR_ENGINE; NULL or "" is process): 0 with *@mode and *@engine
 * set, or -EINVAL (an unknown value; "cuda" asked for and no GPU, or no dvx-copier for
 * the process engine) with @why saying why
 */
int dvxn_gdr_probe(const char *env, const char *engine_env, enum dvxn_gdr_mode *mode,
		   enum dvxn_gdr_engine *engine, char *why, size_t len);
/*
 * start serving registrations over @fab in @mode through @engine (dvx-copier, with a
 * staging area of @stage_bytes, starts here); undone by dvxn_gdr_down(). With @trace,
 * the first @ntrace copies are told to it (DVX_NET_GDR_TRACE=N): direction, device
 * address, length, result and time; @warn is told once when dvx-copier fails. Return:
 * 0 (with "auto" also when the engine could not start: the mode is then off, and @why
 * says why), or a negative errno with @why saying why (the mode is off)
 */
int dvxn_gdr_up(struct dvx_sim_fabric *fab, enum dvxn_gdr_mode mode,
		enum dvxn_gdr_engine engine, size_t stage_bytes,
		void (*trace)(const char *fmt, ...), void (*warn)(const char *fmt, ...),
		unsigned ntrace, char *why, size_t len);
void dvxn_gdr_down(void);
enum dvxn_gdr_mode dvxn_gdr_mode(void);
/*
 * export [@data, @data + @size) of GPU memory as a software dma-buf of the fabric:
 * 0 with *@fd set (register with DVX_MR_DMABUF, offset 0), or a negative errno with @why
 * saying why (-ENOENT: not GPU memory; -ENODEV: its device cannot be opened; -ENOSPC:
 * the fabric's dma-bufs are all in use; -EOPNOTSUPP: the process engine cannot share
 * the allocation; -EIO: dvx-copier failed or could not start)
 */
int dvxn_gdr_export(void *data, size_t size, int *fd, char *why, size_t len);
/* forget a dma-buf of dvxn_gdr_export() (after its MR is deregistered) */
int dvxn_gdr_release(int fd);
/* copies the NIC made through the callbacks, and those that failed */
void dvxn_gdr_counts(uint64_t *copies, uint64_t *failed);

#endif /* DVX_PLUGINS_NCCL_GDR_H */
