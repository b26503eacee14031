/* SPDX-License-Identifier: MIT */
/*
 * plugins/nccl/gdr.h - GPU buffers behind the plugin's software NICs (docs/nccl.md,
 * "GPU buffers"): what the plugin offers NCCL as NCCL_PTR_CUDA.
 *
 * The software NIC reaches a GPU's memory as a ConnectX does through dma-buf: not by
 * address but through a DMA engine, here the CUDA driver's copies on the memory's own
 * device, on a non-blocking stream of the plugin's own (gdr.c). A registration of NCCL_PTR_CUDA memory
 * exports the range as a software dma-buf over those copies
 * (dvx_sim_dmabuf_export_dma()) and registers an MR over it; every byte the NIC moves
 * for that MR (sends gathered, receives placed, on this process's side of the wire)
 * then goes through the copies, in order per QP, before the completion is written.
 *
 * Modes (DVX_NET_GDR): "0" (the default: host memory only), "1" or "cuda" (on; a GPU
 * is required), "auto" (on when this libdvx has CUDA and the driver finds a GPU), "host"
 * (tests without a GPU: NCCL_PTR_CUDA pointers are host memory, reached through the
 * same software dma-bufs by memcpy, so that every step but the driver's copy runs).
 *
 * Off by default because on two H200s (2026-11-28) NCCL's traffic through it ran exact
 * and then stalled: the copies are CUDA calls made by the NIC's progress thread in the
 * application's own context, and the run's logs fit a copy blocked behind the driver
 * (an implicit synchronisation with a kernel that waits for the very bytes the NIC is
 * moving); a NIC's DMA has no such dependence. docs/nccl.md says what was seen.
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
};

/*
 * decide the mode from @env (DVX_NET_GDR; NULL or "" is "auto"): 0 with *@mode set, or
 * -EINVAL (an unknown value, or "cuda" asked for and no GPU) with @why saying why
 */
int dvxn_gdr_probe(const char *env, enum dvxn_gdr_mode *mode, char *why, size_t len);
/* start serving registrations over @fab in @mode; undone by dvxn_gdr_down(). With
 * @trace, the first @trace copies are told to it (DVX_NET_GDR_TRACE=N): direction,
 * device address, length, result and time */
void dvxn_gdr_up(struct dvx_sim_fabric *fab, enum dvxn_gdr_mode mode,
		 void (*trace)(const char *fmt, ...), unsigned ntrace);
void dvxn_gdr_down(void);
enum dvxn_gdr_mode dvxn_gdr_mode(void);
/*
 * export [@data, @data + @size) of GPU memory as a software dma-buf of the fabric:
 * 0 with *@fd set (register with DVX_MR_DMABUF, offset 0), or a negative errno with @why
 * saying why (-ENOENT: not GPU memory; -ENODEV: its device cannot be opened; -ENOSPC:
 * the fabric's dma-bufs are all in use)
 */
int dvxn_gdr_export(void *data, size_t size, int *fd, char *why, size_t len);
/* forget a dma-buf of dvxn_gdr_export() (after its MR is deregistered) */
int dvxn_gdr_release(int fd);
/* copies the NIC made through the callbacks, and those that failed */
void dvxn_gdr_counts(uint64_t *copies, uint64_t *failed);

#endif /* DVX_PLUGINS_NCCL_GDR_H */
