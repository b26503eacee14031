/* SPDX-License-Identifier: MIT */
/*
 * dvx/p2p/gpu.h - handing a P2P transport's lanes to GPU threads and back: the host
 * calls that register the transport's host memory for a GPU, write the device handle
 * (struct dvx_p2p_dev, dvx/p2p/dev.h) and the lanes' states into GPU memory, and take
 * them back.
 *
 * Model (docs/gpu.md, "GPU-initiated P2P"):
 *  - the lanes' rings, doorbell records and CQs stay where dvx_p2p_init() put them (the
 *    caller's ring region, host memory) and the UAR pages stay where the NIC put them;
 *    dvx_p2p_gpu_register() registers both for the GPU (page-granular, caller storage
 *    for the registrations);
 *  - each lane queue's state (struct dvx_p2p_qstate: its posting counters, consumer
 *    index, success watermark, first error) and the lane table live in caller-provided
 *    GPU memory (dvx_p2p_gpu_mem_req());
 *  - dvx_p2p_gpu_export() drains every lane, copies each queue's state as it is into
 *    GPU memory and fills the by-value struct dvx_p2p_dev that kernels take;
 *    dvx_p2p_gpu_import() copies the states back afterwards.
 *
 * Between export and import the GPU owns every lane of the transport: the host must not
 * post to them, poll them, flush or wait on them (the host's copy of the state is stale
 * and its doorbell record would go backwards). Signals and counters may be read by
 * anyone. Nothing here allocates.
 */
#ifndef DVX_P2P_GPU_H
#define DVX_P2P_GPU_H

#include <dvx/p2p/dev.h>

DVX_BEGIN_DECLS

struct dvx_gpu;
struct dvx_gpu_hostreg;

/**
 * dvx_p2p_gpu_mem_req() - GPU memory dvx_p2p_gpu_export() needs.
 * @t:		an initialised transport
 * @bytes:	receives DVX_P2P_DEV_MEM_BYTES(lanes), to be 64-byte aligned GPU memory
 * Return: 0 or -EINVAL.
 */
int dvx_p2p_gpu_mem_req(const struct dvx_p2p *t, uint64_t *bytes);

/**
 * dvx_p2p_gpu_nregs() - host registrations dvx_p2p_gpu_register() may make: one for
 * the ring region and one per NIC's UAR page at most (lanes of one NIC may use
 * several pages: one per lane at most). Return: the bound, or 0 for a bad @t.
 */
uint32_t dvx_p2p_gpu_nregs(const struct dvx_p2p *t);

/**
 * dvx_p2p_gpu_register() - register the transport's host memory for @gpu.
 * @t:		the transport
 * @gpu:	an open GPU
 * @rings, @rings_len: the ring region given to dvx_p2p_init()
 * @regs:	caller storage for dvx_p2p_gpu_nregs(@t) registrations
 * @nregs:	receives how many were made
 *
 * Registers the ring region (rings, doorbell records, CQs) and every distinct page
 * that holds a lane's UAR register (page-granular, DVX_GPU_HOST_IOMEM unless @iomem
 * is 0: the software NIC's UAR pages are ordinary memory in its fabric storage).
 * Context: host, before dvx_p2p_gpu_export(). Return: 0; -EINVAL; a registration's
 * error (everything registered so far is unregistered, *@nregs = 0).
 */
int dvx_p2p_gpu_register(const struct dvx_p2p *t, struct dvx_gpu *gpu, void *rings,
			 uint64_t rings_len, int iomem, struct dvx_gpu_hostreg *regs,
			 uint32_t *nregs);

/** dvx_p2p_gpu_unregister() - undo dvx_p2p_gpu_register(). Return: first error or 0. */
int dvx_p2p_gpu_unregister(struct dvx_gpu_hostreg *regs, uint32_t nregs);

/**
 * dvx_p2p_gpu_export() - hand every lane of @t to the GPU and describe it for kernels.
 * @t:		the transport; its lanes must not be failed
 * @gpu:	the GPU (copies go through it)
 * @regs, @nregs: from dvx_p2p_gpu_register() (every ring, record and UAR register of
 *		the lanes must lie in one of them)
 * @dmem, @dmem_len: GPU memory of dvx_p2p_gpu_mem_req() bytes, 64-byte aligned; owned
 *		by the caller, holds the lane table and the queues' state until import
 * @timeout_ns:	bound for draining the lanes first
 * @dev:	filled: pass it to kernels by value
 *
 * Drains every lane (host engine), then writes the lane table and each queue's state
 * (reservation counters at the host's next index, consumer index, watermark, CQ index)
 * to @dmem. From then on the GPU owns the lanes (see the file comment) until
 * dvx_p2p_gpu_import().
 * Context: host, no host thread posting to @t. Return: 0; -EINVAL (arguments, memory
 * not registered, too small); -ETIMEDOUT (a lane did not drain); a failed lane's
 * errno; a copy's error. @dev is filled only on success.
 */
int dvx_p2p_gpu_export(struct dvx_p2p *t, struct dvx_gpu *gpu,
		       const struct dvx_gpu_hostreg *regs, uint32_t nregs, uint64_t dmem,
		       uint64_t dmem_len, uint64_t timeout_ns, struct dvx_p2p_dev *dev);

/**
 * dvx_p2p_gpu_import() - take the lanes back from the GPU (no kernel may be running on
 * them): each host queue continues at the GPU's indices; CQEs the GPU left unconsumed
 * are the host's to poll; a GPU-seen error CQE marks the host queue failed with it.
 * Return: 0; -EINVAL; -EBUSY when a GPU reservation was never published (a kernel died
 * between reserve and publish: the lane needs a QP reset); a copy's error.
 */
int dvx_p2p_gpu_import(struct dvx_p2p *t, struct dvx_gpu *gpu, const struct dvx_p2p_dev *dev);

DVX_END_DECLS

#endif /* DVX_P2P_GPU_H */
