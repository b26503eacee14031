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
 * anyone. The one exception is dvx_p2p_gpu_lane_recover(): it shuts the GPU out of one
 * lane (a gate in the lane's state that device posts and polls respect), recovers it
 * with the host engine and hands it back, while kernels run. Nothing here allocates.
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
 * to @dmem; with DVX_P2P_F_GPU_RECOVER in the transport's flags the queues are gated
 * (struct dvx_p2p_qdesc.gated: dvx_p2p_gpu_lane_recover() can take a lane back while
 * kernels run). From then on the GPU owns the lanes (see the file comment) until
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

/**
 * dvx_p2p_gpu_lane_recover() - recover the exported lane (@peer, @lane) while kernels
 * may be running on the transport: the host side of docs/gpu.md "Recovering a lane the
 * GPU drives". The peer calls dvx_p2p_lane_recover() (or this, if its lanes are
 * exported too) for the same lane at the same time.
 * @t:		the transport, exported by dvx_p2p_gpu_export() into @dev
 * @gpu:	the GPU of the export (the copies go through it, beside running kernels:
 *		its streams are non-blocking)
 * @dev:	the device handle of the export
 * @peer:	the rank at the other end
 * @lane:	the lane index within the peer
 * @timeout_ns:	bound for the whole recovery (the device threads leaving the lane, the
 *		two ends agreeing, the drains)
 *
 * Steps: close the lane's gate (its queues' states in GPU memory); wait until no device
 * thread is inside a post or a poll of the lane (each counts itself in before it looks
 * at the gate, so none is missed); copy the lane's state back to the host queues (a
 * reservation never published, its poster dead or cut off, fails the queue: the restart
 * gives it up); run
 * dvx_p2p_lane_recover() (both ends agree, stop, drain, reset, reconnect, agree again);
 * write the resulting state, the new CQ base and the WQEs given up back into GPU
 * memory; open the gate. Meanwhile device posts and waits on the lane return -EAGAIN
 * (dvx_p2p_dev_wait_lane() waits for the end). Tickets of WQEs the restart gave up
 * answer its error on the GPU too, never 0.
 *
 * The kernels must run on non-blocking streams (dvx_gpu_stream_create() makes them):
 * the copies wait for the default stream, and a kernel on a blocking stream waiting for
 * the recovery would wait for ever.
 *
 * Context: host, one call per lane at a time, no other host call on @t's lanes.
 * Return: 0 (the lane is usable at this end: every QP of it in RTS, the GPU may post);
 * -EOPNOTSUPP (@t was made without DVX_P2P_F_GPU_RECOVER: its device posts keep no
 * gate);
 * -EAGAIN (device threads did not leave the lane in time: nothing changed, the gate is
 * open again; or the recovery could not finish: call again at both ends); -EINVAL;
 * dvx_p2p_lane_recover()'s errors (-ETIMEDOUT when the peer did not join: the lane
 * then stays failed, on the GPU too); a copy's error (after the lane's state was read
 * back, the gate stays closed and the next call writes the host's state out).
 */
int dvx_p2p_gpu_lane_recover(struct dvx_p2p *t, struct dvx_gpu *gpu, const struct dvx_p2p_dev *dev,
			     int peer, uint32_t lane, uint64_t timeout_ns);

DVX_END_DECLS

#endif /* DVX_P2P_GPU_H */
