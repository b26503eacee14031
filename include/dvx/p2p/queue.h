/* SPDX-License-Identifier: MIT */
/*
 * dvx/p2p/queue.h - the host engine under every P2P transport lane: a send queue that
 * several threads post to, with the completion watermark that tickets, flushes and
 * health records are answered from.
 *
 * The rules the transport depends on (docs/p2p.md):
 *  - every WQE posted here is one WQEBB long and requests a CQE, so the CQE index of
 *    a WQE equals its WQE index (offset by @cq_base, see below);
 *  - slots are reserved with a compare-and-swap that checks for room first, so a
 *    reservation that times out leaves nothing behind; WQEs are published in order
 *    (a poster waits until every earlier reservation is published) and one doorbell
 *    covers everything published so far (the last publisher rings; the doorbell lock
 *    keeps the record monotonic);
 *  - completions are consumed under a try-lock by whichever thread polls; an error
 *    CQE freezes the watermark at the failed WQE and marks the queue failed: the error
 *    is kept (syndrome, opcode, QPN, index) and every later wait or post reports it.
 *
 * Layout and threading: a struct dvx_p2p_q lives in caller storage (inside the
 * transport); its counters are accessed with atomics, so any number of host threads
 * may post and wait at the same time. It is not for GPU threads: a queue is posted to
 * from the host or from the GPU, not both at once.
 */
#ifndef DVX_P2P_QUEUE_H
#define DVX_P2P_QUEUE_H

#include <dvx/hal.h>
#include <dvx/mlx5/cqe.h>
#include <dvx/mlx5/wqe.h>

DVX_BEGIN_DECLS

/* restarts whose lost WQE ranges a queue remembers (older tickets answer -ESTALE) */
#define DVX_P2P_Q_LOST_KEEP 4

/**
 * struct dvx_p2p_q_lost - WQEs [@lo, @hi) were given up by a restart; their tickets
 * answer @err (the error that failed the queue).
 */
struct dvx_p2p_q_lost {
	uint64_t lo;
	uint64_t hi;
	int32_t err;
	uint32_t rsvd;
};

/** enum dvx_p2p_q_state - health of a queue (and of the lane it belongs to). */
enum dvx_p2p_q_state {
	DVX_P2P_Q_UNUSED = 0,	/* not set up */
	DVX_P2P_Q_OK = 1,	/* posting and completing */
	DVX_P2P_Q_FAILED = 2,	/* an error CQE was seen: see @err */
};

/**
 * struct dvx_p2p_q - a send queue shared by threads, and its CQ.
 * @wq:		the ring (base, size, QPN); every WQE is one WQEBB
 * @dbrec:	the QP's doorbell record
 * @uar_reg:	the UAR register the 8-byte doorbell goes to
 * @db_qpn:	the QPN half of the doorbell value (dvx_mlx5_sq_db_value(0, qpn))
 * @nwqebb:	ring size in WQEBBs (== WQEs in flight at most)
 * @qpn:	QP number
 * @cq:		the QP's send CQ as the poller sees it (entries >= @nwqebb)
 * @cqn:	its CQ number (the target of a companion's WAIT)
 * @cq_base:	the CQ's 24-bit producer count at which this QP's WQE 0 completes
 *		(non-zero after a recovery reused the CQ)
 * @state:	enum dvx_p2p_q_state
 * @reserved:	next free WQE index (free-running, atomic)
 * @published:	WQEs [0, @published) are written (atomic)
 * @rung:	the doorbell record says @rung (under @db_lock)
 * @polled:	CQEs consumed, good or not (== WQE index of the next CQE)
 * @completed:	WQEs [0, @completed) completed successfully (atomic); frozen at the
 *		failed WQE once @state is FAILED
 * @err:	the first error CQE (valid when @state is FAILED)
 * @err_errno:	its errno (dvx_mlx5_cqe_syndrome_errno), or -EPROTO for a CQE that
 *		names an unexpected index or is compressed
 * @last_progress_ns: time (hal clock) of the last consumed CQE
 * @nic:	the NIC: its hal clock and progress hook are used while waiting
 * @db_lock, @poll_lock: spin locks (0 free, 1 held)
 * @lost:	the WQE ranges the last DVX_P2P_Q_LOST_KEEP restarts (recoveries) gave
 *		up, with the error their tickets answer; entry (@recoveries - 1) mod
 *		DVX_P2P_Q_LOST_KEEP is the latest (atomic fields)
 * @recoveries:	restarts so far (atomic)
 * @last_err:	the error that failed the queue before its last restart (0 if none)
 */
struct dvx_p2p_q {
	struct dvx_mlx5_wq wq;
	dvx_be32 *dbrec;
	uint8_t *uar_reg;
	uint64_t db_qpn;
	uint32_t nwqebb;
	uint32_t qpn;
	struct dvx_mlx5_cq cq;
	uint32_t cqn;
	uint32_t cq_base;
	uint32_t state;
	uint32_t db_lock;
	uint32_t poll_lock;
	uint32_t rsvd;
	uint64_t reserved;
	uint64_t published;
	uint64_t rung;
	uint64_t polled;
	uint64_t completed;
	struct dvx_mlx5_cqe_info err;
	int32_t err_errno;
	uint32_t rsvd2;
	uint64_t last_progress_ns;
	struct dvx_hal_nic *nic;
	/* added for recovery (keep at the end: core/p2p_dev.c reads the fields above) */
	struct dvx_p2p_q_lost lost[DVX_P2P_Q_LOST_KEEP];
	uint32_t recoveries;
	int32_t last_err;
};

/**
 * struct dvx_p2p_q_desc - what dvx_p2p_q_init() needs: a QP's SQ and its send CQ.
 * All memory belongs to the QP and CQ objects the caller created; the queue only
 * points at it.
 */
struct dvx_p2p_q_desc {
	void *sq_buf;		/* the SQ ring, @nwqebb WQEBBs */
	uint32_t nwqebb;	/* power of two */
	uint32_t qpn;
	dvx_be32 *dbrec;	/* the QP's doorbell record */
	uint8_t *uar_reg;	/* its UAR register */
	void *cq_buf;		/* the CQ ring, 64-byte CQEs */
	uint32_t cq_log_size;	/* log2 CQ entries; entries >= @nwqebb */
	uint32_t cqn;
	dvx_be32 *cq_dbrec;	/* the CQ's doorbell record */
	uint32_t cq_ci;		/* the CQ's current consumer index (its producer count: the
				 * CQ holds nothing unconsumed when the queue starts) */
	uint32_t max_inline;	/* the QP's inline limit in bytes */
	struct dvx_hal_nic *nic;
};

/**
 * dvx_p2p_q_init() - set up a shared queue over an RC QP in RTS and its send CQ.
 * @q:		caller storage, overwritten
 * @d:		the QP's and CQ's memory
 *
 * The CQ must belong to this QP alone and hold nothing unconsumed.
 * Context: the queue is not yet shared. Return: 0, or -EINVAL (bad sizes, a CQ
 * smaller than the SQ, missing pointers); @q is then unchanged.
 */
int dvx_p2p_q_init(struct dvx_p2p_q *q, const struct dvx_p2p_q_desc *d);

/**
 * dvx_p2p_q_reserve() - claim @n consecutive WQE slots, waiting for room.
 * @q:		queue
 * @n:		slots (1 ... @q->nwqebb)
 * @timeout_ns:	how long to wait for room (completions are polled meanwhile)
 * @idx:	first claimed index (free-running) on success
 *
 * The caller must build exactly @n one-WQEBB WQEs at @idx ... @idx + @n - 1, each
 * requesting a CQE, and then call dvx_p2p_q_publish(): other posters wait for it.
 * Building is pure computation, so nothing can fail in between.
 * Context: any thread. Return: 0; -EINVAL for a bad @n; -ETIMEDOUT when no room
 * appeared in time (nothing claimed); the queue's error (@q->err_errno) when it has
 * failed (nothing claimed).
 */
int dvx_p2p_q_reserve(struct dvx_p2p_q *q, uint32_t n, uint64_t timeout_ns, uint64_t *idx);

/**
 * dvx_p2p_q_publish() - make reserved slots [@idx, @idx + @n) visible to the NIC.
 *
 * Waits until every earlier reservation is published (they are being written by
 * other threads right now), publishes, and rings the doorbell unless a later
 * reservation exists (its publisher will ring, covering these WQEs too).
 * Context: any thread, after dvx_p2p_q_reserve() returned @idx.
 */
void dvx_p2p_q_publish(struct dvx_p2p_q *q, uint64_t idx, uint32_t n);

/**
 * dvx_p2p_q_poll() - consume the CQEs the NIC has written, if no other thread is.
 * Context: any thread. Return: CQEs consumed (0 when none or another thread polls).
 */
int dvx_p2p_q_poll(struct dvx_p2p_q *q);

/**
 * dvx_p2p_q_wait() - wait until the WQE at @idx has completed.
 * @idx:	a WQE index this queue handed out (a ticket); an index older than one
 *		ring is answered from the watermark
 * @timeout_ns:	0 polls once
 *
 * Return: 0 when it completed successfully; the error CQE's errno when that WQE or
 * an earlier one failed (details in @q->err); for a WQE a restart gave up, the error
 * that failed the queue then (see dvx_p2p_q_restart()); -ESTALE for a WQE from
 * before the last DVX_P2P_Q_LOST_KEEP restarts that is not known to have completed;
 * -ETIMEDOUT when neither happened in time (the caller may wait again); -EINVAL for
 * an index never handed out.
 */
int dvx_p2p_q_wait(struct dvx_p2p_q *q, uint64_t idx, uint64_t timeout_ns);

/**
 * dvx_p2p_q_drain() - wait until everything published so far has completed.
 * Return: as dvx_p2p_q_wait(); 0 at once when nothing is in flight.
 */
int dvx_p2p_q_drain(struct dvx_p2p_q *q, uint64_t timeout_ns);

/**
 * dvx_p2p_q_mark_failed() - mark the queue FAILED with @err unless it already is
 * (the recorded error then has no syndrome: it did not come from a CQE). Posts are
 * refused from now on; waits answer @err for what has not completed.
 * Context: any thread (takes the poll lock). Return: the queue's error after the call.
 */
int dvx_p2p_q_mark_failed(struct dvx_p2p_q *q, int err);

/**
 * dvx_p2p_q_quiesce() - consume CQEs until every published WQE has its CQE (good,
 * error or flush), so that nothing of the queue is left in the CQ. For a QP in ERR
 * this consumes its flushes.
 * Return: 0; -ETIMEDOUT (call again); -EINVAL.
 */
int dvx_p2p_q_quiesce(struct dvx_p2p_q *q, uint64_t timeout_ns);

/**
 * dvx_p2p_q_restart() - start the queue again after its QP was reset and brought
 * back to RTS (dvx_qp_recover()), which restarted the hardware WQE index at 0.
 * @q:		a quiescent queue (dvx_p2p_q_quiesce()); nobody posts meanwhile
 * @cq_ci:	the CQ's consumer index after the reset (dvx_cq.mcq.ci)
 * @cq_index_base: the CQ index of the new hardware WQE 0 (dvx_cq.index_base)
 *
 * The free-running index continues at the next multiple of 65536 (so the ring slot
 * and the 16-bit WQE index restart at 0 with it); @cq_base maps it to
 * @cq_index_base; the watermark rises to it. WQEs from the last good one up to there
 * are recorded as lost with the queue's error (-ECANCELED if it had none); tickets
 * that completed still answer 0. The state goes back to OK, @recoveries counts it
 * and @last_err keeps the error.
 * Context: control path. Return: 0 or -EINVAL.
 */
int dvx_p2p_q_restart(struct dvx_p2p_q *q, uint32_t cq_ci, uint32_t cq_index_base);

/**
 * dvx_p2p_q_cq_index() - the 24-bit CQ index at which WQE @idx of @q completes.
 * @q:		the queue
 * @idx:	the free-running WQE index
 *
 * Context: any; pure. Return: (q->cq_base + @idx) modulo 2^24.
 */
DVX_INLINE uint32_t dvx_p2p_q_cq_index(const struct dvx_p2p_q *q, uint64_t idx)
{
	return (q->cq_base + (uint32_t)idx) & 0xffffffu;
}

/** dvx_p2p_q_completed() - the success watermark (acquire). */
static inline uint64_t dvx_p2p_q_completed(const struct dvx_p2p_q *q)
{
	return __atomic_load_n(&q->completed, __ATOMIC_ACQUIRE);
}

DVX_END_DECLS

#endif /* DVX_P2P_QUEUE_H */
