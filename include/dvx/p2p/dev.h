/* SPDX-License-Identifier: MIT */
/*
 * dvx/p2p/dev.h - the device view of a P2P transport (dvx/p2p/p2p.h): what kernels need to
 * post the transport's operations on its lanes from GPU threads (dvx/p2p/dev.cuh), and
 * the host calls that make it. Shared by host C and CUDA; fixed-width, size-asserted.
 *
 * Model (docs/gpu.md, "GPU-initiated P2P"):
 *  - the lanes' rings, doorbell records and CQs stay where dvx_p2p_init() put them (the
 *    caller's ring region, host memory) and the UAR pages stay where the NIC put them;
 *    dvx_p2p_gpu_register() registers both for the GPU (page-granular, caller storage
 *    for the registrations);
 *  - the GPU-side posting state of every queue (struct dvx_p2p_dev_qstate: the
 *    dvx_gpu_sq_ctrs of dvx/gpu/queue.h, the consumer index, the success watermark,
 *    the first error) and the lane table live in caller-provided GPU memory
 *    (dvx_p2p_gpu_mem_req());
 *  - dvx_p2p_gpu_export() drains every lane, copies each queue's host indices into its
 *    GPU state and fills the by-value struct dvx_p2p_dev that kernels take;
 *    dvx_p2p_gpu_import() hands the lanes back to the host engine afterwards.
 *
 * Between export and import the GPU owns every lane of the transport: the host must not
 * post to them, poll them, flush or wait on them (the host engine's indices are stale
 * and its doorbell record would go backwards). Signals and counters may be read by
 * anyone. Nothing here allocates.
 */
#ifndef DVX_P2P_DEV_H
#define DVX_P2P_DEV_H

#include <dvx/gpu/queue.h>
#include <dvx/p2p/p2p.h>

DVX_BEGIN_DECLS

#define DVX_P2P_DEV_VERSION 1u

/**
 * struct dvx_p2p_dev_qstate - a lane queue's GPU-side state, in GPU memory.
 * @ctrs:	reservation/publish counters (dvx/gpu/post.cuh); resv == ready when idle
 * @ci:		WQEs whose CQEs were consumed (the SQ's consumer index; the view's @ci)
 * @completed:	WQEs [0, @completed) completed successfully; frozen at a failed WQE
 * @cq_ci:	the CQ's free-running consumer index
 * @poll_lock:	1 while a GPU thread consumes CQEs
 * @err:	0, or the errno of the first error CQE (-EPROTO: an unexpected CQE)
 * @syndrome, @vendor_syndrome, @wqe_opcode: of that CQE
 * @err_wqe:	its 16-bit WQE counter
 * @err_qpn:	its QPN
 */
struct dvx_p2p_dev_qstate {
	struct dvx_gpu_sq_ctrs ctrs;
	uint64_t ci;
	uint64_t completed;
	uint64_t cq_ci;
	uint32_t poll_lock;
	int32_t err;
	uint8_t syndrome;
	uint8_t vendor_syndrome;
	uint8_t wqe_opcode;
	uint8_t rsvd0;
	uint32_t err_wqe;
	uint32_t err_qpn;
	uint32_t rsvd1[5];
};
#define DVX_P2P_DEV_QSTATE_BYTES 320u

/**
 * struct dvx_p2p_dev_q - one lane QP as kernels see it.
 * @sq:		the SQ view (ring, QP doorbell record, UAR register, @state's ctrs and ci)
 * @cq:		the send CQ view (ring, CQ doorbell record)
 * @state:	device address of the struct dvx_p2p_dev_qstate
 * @cq_base:	the CQ's 24-bit producer count at which WQE 0 completes (the index a
 *		companion's WAIT names is (@cq_base + wqe) & 0xffffff)
 * @cqn:	CQ number (the WAIT's target)
 */
struct dvx_p2p_dev_q {
	struct dvx_gpu_sq sq;
	struct dvx_gpu_cq cq;
	uint64_t state;
	uint32_t cq_base;
	uint32_t cqn;
	uint64_t rsvd[2];
};

/**
 * struct dvx_p2p_dev_lane - a lane: main QP, companion (@has_comp), NIC, sink.
 */
struct dvx_p2p_dev_lane {
	struct dvx_p2p_dev_q main;
	struct dvx_p2p_dev_q comp;
	uint32_t nic;
	uint32_t peer;
	uint32_t index;
	uint32_t sink_lkey;
	uint32_t has_comp;
	uint32_t rsvd[11];
};

/**
 * struct dvx_p2p_dev - the transport as a kernel parameter (by value).
 * @lanes:	device address of (@nranks - 1) * @nlanes struct dvx_p2p_dev_lane, by
 *		skip-self peer index, then lane (the host's order)
 * The lane table is in GPU memory rather than in the parameter: a kernel parameter
 * block is limited to a few KiB and a transport may have hundreds of lanes.
 */
struct dvx_p2p_dev {
	uint32_t version;
	int32_t rank;
	int32_t nranks;
	uint32_t nlanes;
	uint32_t companions;
	uint32_t flags;
	uint64_t lanes;
	uint64_t rsvd[4];
};

DVX_ASSERT_SIZE(struct dvx_p2p_dev_qstate, DVX_P2P_DEV_QSTATE_BYTES);
DVX_ASSERT_SIZE(struct dvx_p2p_dev_q, 128);
DVX_ASSERT_SIZE(struct dvx_p2p_dev_lane, 320);
DVX_ASSERT_SIZE(struct dvx_p2p_dev, 64);

/* GPU memory layout of the export: the lane table, then two qstates per lane */
#define DVX_P2P_DEV_LANE_BYTES 320u
#define DVX_P2P_DEV_MEM_BYTES(nlanes_total) \
	((uint64_t)(nlanes_total) * (DVX_P2P_DEV_LANE_BYTES + 2u * DVX_P2P_DEV_QSTATE_BYTES))

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

#endif /* DVX_P2P_DEV_H */
