/* SPDX-License-Identifier: MIT */
/*
 * dvx/p2p/queue.h - the lane queue under every P2P transport lane: a send queue that
 * any number of posters share (the SQ protocol of dvx/mlx5/sq.h in shared mode), its
 * CQ, and the completion watermark that tickets, flushes and health records are
 * answered from. The same state and the same steps serve the host engine (core/) and
 * GPU threads (dvx/p2p/dev.cuh); only the wait loops' clock and relax differ.
 *
 * The rules the transport depends on (docs/p2p.md):
 *  - every WQE posted here is one WQEBB long and requests a CQE, so the CQE index of a
 *    WQE equals its WQE index (offset by @cq_base);
 *  - a reservation that cannot get room claims nothing; WQEs are published in order and
 *    one doorbell covers everything published so far (dvx_mlx5_sq_publish());
 *  - completions are consumed under a try-lock by whichever poster or waiter polls
 *    (dvx_p2p_q_consume()); an error CQE freezes the watermark at the failed WQE and
 *    marks the queue failed: the first error is kept (errno, syndrome, opcode, QPN,
 *    index) and every later post reports it; a wait reports it for a ticket whose fate
 *    it decides (dvx_p2p_q_fate_known()), else it takes the WQE's own CQE first.
 *
 * A queue is two parts: struct dvx_p2p_qdesc (constant: the SQ and CQ descriptions,
 * where its state is) and struct dvx_p2p_qstate (the counters, the watermark, the
 * error), which lives where its posters are: host memory while the host engine drives
 * the lane, GPU memory while kernels do (dvx/p2p/dev.h). A queue is driven from the
 * host or from the GPU, never both at once.
 */
#ifndef DVX_P2P_QUEUE_H
#define DVX_P2P_QUEUE_H

#include <dvx/mlx5/sq.h>
#include <dvx/mlx5/cqe.h>

#ifndef __CUDA_ARCH__
#include <sched.h>
#endif

DVX_BEGIN_DECLS

struct dvx_hal_nic;

/** enum dvx_p2p_q_state - health of a queue (and of the lane it belongs to). */
enum dvx_p2p_q_state {
	DVX_P2P_Q_UNUSED = 0,	/* not set up */
	DVX_P2P_Q_OK = 1,	/* posting and completing */
	DVX_P2P_Q_FAILED = 2,	/* an error CQE was seen (or a post could not publish) */
};

/**
 * struct dvx_p2p_qstate - the mutable part of a lane queue.
 * @ctrs:	the SQ's posting counters: resv (reserved), ready (published), db_pi
 *		(rung), ci (CQEs consumed: the next WQE to complete; slots below it free)
 * @completed:	WQEs [0, @completed) completed successfully; frozen at the failed WQE
 *		once an error CQE was consumed (@frozen); a queue failed by other means (a
 *		peer's word, a recovery's stop, a timeout) still counts the good CQEs
 *		that arrive before its flushes: each is a WQE the responder executed
 * @cq_ci:	the CQ's free-running consumer index
 * @poll_lock:	1 while a thread consumes CQEs
 * @state:	enum dvx_p2p_q_state
 * @err:	the first error's errno (the CQE syndrome's, or -EPROTO for a CQE that
 *		names an unexpected index or is compressed), 0 if none; on a queue failed
 *		by other means first, the first error CQE that is not a flush replaces it
 *		(dvx_p2p_q_record())
 * @syndrome, @vendor_syndrome, @wqe_opcode: of that error CQE (0 when the error did
 *		not come from a CQE)
 * @is_cqe:	1 when @err came from a CQE
 * @err_wqe:	its 16-bit WQE counter
 * @frozen:	1 once an error CQE (or one that names an unexpected index) was
 *		consumed, whether or not it was the first error: @completed stays
 * @err_qpn:	its QPN
 * @gate:	GPU-driven queues: 1 while the host recovers the lane (posters and
 *		pollers stay out: -EAGAIN); written by the host only (docs/gpu.md,
 *		"Recovering a lane the GPU drives")
 * @lost_lo, @lost_hi: WQEs [@lost_lo, @lost_hi) were given up by the last restart of
 *		a GPU-driven queue: their tickets answer @lost_err
 * @inside:	GPU-driven queues: device threads posting on or polling the queue now
 *		(each adds 1 before it looks at @gate and takes it back when done)
 * @lost_err:	the error those tickets answer (0: none lost)
 *
 * Every field is fixed-width: the host copies it to and from GPU memory as it is.
 */
struct dvx_p2p_qstate {
	struct dvx_mlx5_sq_ctrs ctrs;
	uint64_t completed;
	uint32_t cq_ci;
	uint32_t poll_lock;
	uint32_t state;
	int32_t err;
	uint8_t syndrome;
	uint8_t vendor_syndrome;
	uint8_t wqe_opcode;
	uint8_t is_cqe;
	uint16_t err_wqe;
	uint16_t frozen;
	uint32_t err_qpn;
	uint32_t gate;
	uint64_t lost_lo;
	uint64_t lost_hi;
	uint32_t inside;
	int32_t lost_err;
};
#define DVX_P2P_QSTATE_BYTES 320u
DVX_ASSERT_SIZE(struct dvx_p2p_qstate, DVX_P2P_QSTATE_BYTES);

/**
 * struct dvx_p2p_qdesc - a lane queue's constant part.
 * @sq:		the QP's SQ (every WQE one WQEBB)
 * @cq:		its send CQ (entries >= the SQ's WQEBBs; @cq.ci is not used: the
 *		consumer index is in the state)
 * @cq_base:	the CQ's 24-bit producer count at which this QP's WQE 0 completes
 *		(non-zero after a recovery reused the CQ)
 * @cqn:	the CQ number (the target of a companion's WAIT)
 * @st:		the state (a host or a device address, as the queue is driven)
 * @lost_base:	GPU-driven queues: where the run of WQEs that the last restart ended
 *		began (the restart before it); the GPU does not know the fate of tickets
 *		below it: they answer -ESTALE. 0 on the host, and before a second restart
 * @gated:	1: device threads count themselves in at the state's @gate before they
 *		post or poll (the transport made with DVX_P2P_F_GPU_RECOVER); 0 on the host
 * @rsvd:	zero
 */
struct dvx_p2p_qdesc {
	struct dvx_mlx5_sq sq;
	struct dvx_mlx5_cq cq;
	uint32_t cq_base;
	uint32_t cqn;
	struct dvx_p2p_qstate *st;
	uint64_t lost_base;
	uint32_t gated;
	uint32_t rsvd;
};
DVX_ASSERT_SIZE(struct dvx_p2p_qdesc, 128);

/**
 * struct dvx_p2p_waiter - how a wait loop of the caller's waits: a timeout, the clock
 * it is measured with and what to do between two looks.
 * @timeout_ns:	the bound, from the first wait
 * @deadline:	0 until the first wait, then its clock time
 * @now:	host: the clock in nanoseconds (the hal's, so a simulated backend keeps its
 *		own time); GPU code uses %globaltimer and ignores it
 * @progress:	host: called between two looks (a stepped software NIC's progress), or
 *		NULL to relax the CPU and, every DVX_P2P_WAIT_SPINS looks, give it away
 *		(the thread that would end the wait may need it); ignored on the GPU (it
 *		sleeps briefly)
 * @arg:	passed to @now and @progress
 * @spins:	looks so far
 */
struct dvx_p2p_waiter {
	uint64_t timeout_ns;
	uint64_t deadline;
	uint64_t (*now)(void *arg);
	void (*progress)(void *arg);
	void *arg;
	uint32_t spins;
	uint32_t rsvd;
};

/* host looks between two yields of the CPU in a wait without a progress hook */
#define DVX_P2P_WAIT_SPINS 64u

/**
 * dvx_p2p_waiter_init() - a waiter for one wait of @timeout_ns.
 * @w:		filled
 * @timeout_ns:	the bound (0: look once)
 * @now:	host clock (see struct dvx_p2p_waiter); NULL on the GPU
 * @progress:	host progress hook, or NULL
 * @arg:	their argument
 *
 * Context: any, host or device. Return: nothing.
 */
DVX_INLINE void dvx_p2p_waiter_init(struct dvx_p2p_waiter *w, uint64_t timeout_ns,
				    uint64_t (*now)(void *arg), void (*progress)(void *arg),
				    void *arg)
{
	w->timeout_ns = timeout_ns;
	w->deadline = 0;
	w->now = now;
	w->progress = progress;
	w->arg = arg;
	w->spins = 0;
	w->rsvd = 0;
}

/**
 * dvx_p2p_waiter_now() - the waiter's clock.
 * @w:		the waiter
 *
 * Context: any, host or device. Return: nanoseconds (host: @w->now, GPU: %globaltimer).
 */
DVX_INLINE uint64_t dvx_p2p_waiter_now(const struct dvx_p2p_waiter *w)
{
#ifdef __CUDA_ARCH__
	uint64_t t;

	(void)w;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
#else
	return w->now(w->arg);
#endif
}

/**
 * dvx_p2p_waiter_step() - one round of waiting: start the clock on the first call,
 * report expiry, else call the progress hook, or relax (every DVX_P2P_WAIT_SPINS rounds
 * on the CPU: yield it).
 * @w:		the waiter
 *
 * Context: any, host or device. Return: 0 to look again; -ETIMEDOUT when the timeout
 * has passed (the caller takes one last look and returns it).
 */
DVX_INLINE int dvx_p2p_waiter_step(struct dvx_p2p_waiter *w)
{
	uint64_t now = dvx_p2p_waiter_now(w);

	if (!w->deadline) {
		w->deadline = now + w->timeout_ns < now ? ~0ull : now + w->timeout_ns;
		if (!w->deadline)
			w->deadline = 1;
	} else if (now >= w->deadline) {
		return -ETIMEDOUT;
	}
#ifndef __CUDA_ARCH__
	if (w->progress) {
		w->progress(w->arg);
		return 0;
	}
	if (++w->spins % DVX_P2P_WAIT_SPINS == 0) {
		sched_yield();
		return 0;
	}
#endif
	dvx_cpu_relax();
	return 0;
}

/**
 * dvx_p2p_q_err() - the queue's error, 0 while it is healthy.
 * @s:		the state
 *
 * Context: any, host or device. Return: 0 or the first error's negative errno.
 */
DVX_INLINE int dvx_p2p_q_err(const struct dvx_p2p_qstate *s)
{
	if (dvx_ld_acquire_u32(&s->state) != DVX_P2P_Q_FAILED)
		return 0;
	return s->err;
}

/**
 * dvx_p2p_q_fate_known() - whether a failed queue's error is ticket @idx's answer now.
 * @s:		the state (its queue failed)
 * @idx:	a ticket not below the watermark
 *
 * It is once an error CQE was consumed (@s->frozen: RC fails the WQE it names and
 * flushes every later one) or when @idx was never published (it cannot execute). A
 * queue failed by other means (the peer's word in a recovery, a timeout) still has the
 * WQE's own CQE to come, good or not: a wait takes that instead of guessing.
 *
 * Context: any, host or device. Return: 1 or 0.
 */
DVX_INLINE int dvx_p2p_q_fate_known(const struct dvx_p2p_qstate *s, uint64_t idx)
{
	return *(const volatile uint16_t *)&s->frozen ||
	       idx >= dvx_ld_acquire_u64(&s->ctrs.ready, DVX_SCOPE_GPU);
}

/**
 * dvx_p2p_q_record() - record the queue's first error and mark it failed (later
 * errors, such as the flushes that follow, change nothing).
 * @s:		the state; the caller holds @s->poll_lock
 * @info:	the error CQE, or NULL for an error that did not come from one
 * @err:	negative errno
 * @qpn:	QP number to record when @info is NULL
 *
 * One later error does change the record: the first error CQE that is not a flush,
 * on a queue failed by other means before (a peer's word, a recovery's stop, a
 * time-out). The NIC's own reason replaces the word: its errno and syndrome are kept
 * (the WQEs it fails and those after it then answer it), never a flush, which only
 * says that the QP stopped.
 *
 * Context: the poll lock's holder, host or device. Return: nothing.
 */
DVX_INLINE void dvx_p2p_q_record(struct dvx_p2p_qstate *s, const struct dvx_mlx5_cqe_info *info,
				 int err, uint32_t qpn)
{
	if (dvx_ld_acquire_u32(&s->state) == DVX_P2P_Q_FAILED) {
		if (s->is_cqe || !info || err == -ECANCELED)
			return;
		/* the details first, the errno last: each field is read on its own */
		s->syndrome = info->syndrome;
		s->vendor_syndrome = info->vendor_syndrome;
		s->wqe_opcode = info->wqe_opcode;
		s->err_wqe = info->wqe_counter;
		s->err_qpn = info->qpn;
		s->is_cqe = 1;
		*(volatile int32_t *)&s->err = err;
		return;
	}
	s->err = err;
	s->is_cqe = info ? 1 : 0;
	s->syndrome = info ? info->syndrome : 0;
	s->vendor_syndrome = info ? info->vendor_syndrome : 0;
	s->wqe_opcode = info ? info->wqe_opcode : 0;
	s->err_wqe = info ? info->wqe_counter : (uint16_t)s->ctrs.ci;
	s->err_qpn = info ? info->qpn : qpn;
	/* the error's details before the state that says they are there */
	dvx_st_release_u32(&s->state, DVX_P2P_Q_FAILED);
}

/**
 * dvx_p2p_q_consume() - consume the CQEs the NIC has written for published WQEs, if no
 * other thread is doing so.
 * @d:		the queue
 *
 * A good CQE must name the next WQE (one CQE per one-WQEBB WQE, in order: anything
 * else is a broken invariant, recorded as -EPROTO, never a completion); an error CQE
 * is recorded (the first one kept) and freezes the watermark. The CQ's entries go back
 * to the NIC (consumer index) before the SQ's slots are freed: a slot freed first could
 * complete into an entry the NIC still counts as unconsumed (a CQ overrun).
 *
 * Context: any poster or waiter, host or device. Return: CQEs consumed (0 when none,
 * or another thread consumes).
 */
DVX_INLINE int dvx_p2p_q_consume(const struct dvx_p2p_qdesc *d)
{
	struct dvx_p2p_qstate *s = d->st;
	struct dvx_mlx5_cqe_info info;
	struct dvx_mlx5_cq cq;
	uint64_t polled, published;
	int n = 0, r;

	if (!dvx_trylock(&s->poll_lock))
		return 0;
	cq = d->cq;
	cq.ci = s->cq_ci;
	polled = s->ctrs.ci;	/* only the lock holder writes it */
	published = dvx_ld_acquire_u64(&s->ctrs.ready, DVX_SCOPE_GPU);
	/* with nothing in flight, whatever the ring holds is not ours */
	while (polled != published) {
		r = dvx_mlx5_cq_poll_one(&cq, &info);
		if (r == 0)
			break;
		n++;
		if (r == 1 && info.wqe_counter != (uint16_t)polled) {
			info.is_error = 1;
			r = -EPROTO;
		}
		if (r < 0) {
			/* frozen before the state that says failed (a waiter that sees the
			 * error and not this knows the WQE's CQE is still to come) */
			*(volatile uint16_t *)&s->frozen = 1;
			dvx_p2p_q_record(s, &info, r, 0);	/* RC in order: WQE @polled */
		} else if (!s->frozen) {
			/* a good CQE before any error CQE is a WQE done, also on a queue
			 * marked failed meanwhile (a recovery's stop marks it before it
			 * drains): giving it up would repost what the peer executed */
			dvx_st_release_u64(&s->completed, polled + 1, DVX_SCOPE_GPU);
		}
		polled++;
	}
	if (n) {
		dvx_mlx5_cq_update_ci(&cq);
		s->cq_ci = cq.ci;
		/* the consumer index reaches the NIC before the slots are reused */
		dvx_wmb_ci_before_reuse((d->cq.flags & DVX_MLX5_CQ_SYS) ? DVX_SCOPE_SYS :
									   DVX_SCOPE_GPU);
		dvx_st_release_u64(&s->ctrs.ci, polled, DVX_SCOPE_GPU);
	}
	dvx_unlock(&s->poll_lock);
	return n;
}

/**
 * dvx_p2p_q_fail() - mark the queue failed with @err unless it already is.
 * @d:		the queue
 * @err:	negative errno (the recorded error has no syndrome)
 *
 * Spins for the poll lock (its holders never block).
 *
 * Context: any thread, host or device. Return: the queue's error after the call.
 */
DVX_INLINE int dvx_p2p_q_fail(const struct dvx_p2p_qdesc *d, int err)
{
	struct dvx_p2p_qstate *s = d->st;

	while (!dvx_trylock(&s->poll_lock))
		dvx_cpu_relax();
	dvx_p2p_q_record(s, NULL, err, d->sq.wq.qpn);
	err = s->err;
	dvx_unlock(&s->poll_lock);
	return err;
}

/**
 * dvx_p2p_q_reserve() - claim @n consecutive one-WQEBB slots, waiting for room.
 * @d:		the queue
 * @n:		slots (1 ... the SQ's WQEBBs)
 * @w:		the wait: the caller's clock, bound and progress hook (this step knows
 *		nothing of the hal; a host caller may let a stepped NIC run there)
 * @ticket:	first claimed index (free-running) on success
 *
 * The caller must build exactly @n one-WQEBB WQEs at @ticket ... @ticket + @n - 1, each
 * requesting a CQE, and then dvx_p2p_q_publish(): later posters wait for it. Building
 * is pure computation, so nothing can fail in between.
 *
 * Context: any thread, host or device. Return: 0; -EINVAL for a bad @n; -ETIMEDOUT
 * when no room appeared in time (nothing claimed); the queue's error when it has
 * failed (nothing claimed).
 */
DVX_INLINE int dvx_p2p_q_reserve(const struct dvx_p2p_qdesc *d, uint32_t n,
				 struct dvx_p2p_waiter *w, uint64_t *ticket)
{
	int err;

	for (;;) {
		err = dvx_p2p_q_err(d->st);
		if (err)
			return err;
		err = dvx_mlx5_sq_reserve(&d->sq, &d->st->ctrs, n, DVX_MLX5_SQ_SHARED, ticket);
		if (err != -ENOSPC)
			return err;
		if (dvx_p2p_q_consume(d))
			continue;
		if (dvx_p2p_waiter_step(w))
			return -ETIMEDOUT;
	}
}

/**
 * dvx_p2p_q_publish() - make reserved slots [@ticket, @ticket + @n) visible to the NIC,
 * in order, and ring unless a later reservation exists (its publisher rings for these
 * too).
 * @d:		the queue
 * @ticket:	from dvx_p2p_q_reserve()
 * @n:		slots of that reservation, all built
 * @w:		bound for waiting for the earlier reservations to be published (they are
 *		being written by other threads right now)
 *
 * A timeout means an earlier poster never published (it died, or was descheduled for
 * longer than @w allows): nothing can be published after it, so the queue is marked
 * failed with -ETIMEDOUT (the lane needs dvx_p2p_lane_recover()).
 *
 * Context: the reservation's poster, host or device. Return: 0 or -ETIMEDOUT.
 */
DVX_INLINE int dvx_p2p_q_publish(const struct dvx_p2p_qdesc *d, uint64_t ticket, uint32_t n,
				 struct dvx_p2p_waiter *w)
{
	dvx_mlx5_sq_built(&d->sq);
	while (!dvx_mlx5_sq_turn(&d->st->ctrs, ticket)) {
		if (dvx_p2p_waiter_step(w) && !dvx_mlx5_sq_turn(&d->st->ctrs, ticket)) {
			dvx_p2p_q_fail(d, -ETIMEDOUT);
			return -ETIMEDOUT;
		}
	}
	dvx_mlx5_sq_publish(&d->sq, &d->st->ctrs, ticket, n, DVX_MLX5_SQ_SHARED);
	return 0;
}

/**
 * dvx_p2p_q_nop_fill() - fill reserved slots with signaled NOPs (what a post that
 * cannot use its slots leaves, so the ring and the CQ stay in step: CQ index == WQE
 * index).
 * @d:		the queue
 * @ticket:	the first reserved slot
 * @n:		slots
 *
 * Context: the reservation's poster. Return: nothing (publish them next).
 */
DVX_INLINE void dvx_p2p_q_nop_fill(const struct dvx_p2p_qdesc *d, uint64_t ticket, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		dvx_mlx5_wqe_nop(&d->sq.wq, (uint32_t)(ticket + i), DVX_MLX5_WQE_CTRL_CQ_UPDATE);
}

/**
 * dvx_p2p_q_cq_index() - the 24-bit CQ index at which WQE @idx of the queue completes.
 * @d:		the queue
 * @idx:	the free-running WQE index
 *
 * Context: any; pure. Return: (@d->cq_base + @idx) modulo 2^24.
 */
DVX_INLINE uint32_t dvx_p2p_q_cq_index(const struct dvx_p2p_qdesc *d, uint64_t idx)
{
	return (d->cq_base + (uint32_t)idx) & 0xffffffu;
}

/* ---- the host engine (core/p2p/queue.c) ---- */

/* the least a host poster waits for earlier posters to publish before it declares the
 * queue broken (they are threads of this library that were descheduled) */
#define DVX_P2P_PUBLISH_TIMEOUT_NS (10ull * 1000000000ull)

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

/**
 * struct dvx_p2p_q - a lane queue as the host engine drives it.
 * @s:		the state (@d.st points here while the host drives it)
 * @d:		the constant part
 * @nic:	the NIC: its hal clock measures the waits
 * @last_progress_ns: hal clock of the last consumed CQE
 * @lost:	the WQE ranges the last DVX_P2P_Q_LOST_KEEP restarts (recoveries) gave
 *		up, with the error their tickets answer; entry (@recoveries - 1) mod
 *		DVX_P2P_Q_LOST_KEEP is the latest (atomic fields)
 * @recoveries:	restarts so far (atomic)
 * @last_err:	the error that failed the queue before its last restart (0 if none)
 *
 * Lives in caller storage (inside the transport); its counters are accessed with
 * atomics, so any number of host threads may post and wait at the same time.
 */
struct dvx_p2p_q {
	struct dvx_p2p_qstate s;
	struct dvx_p2p_qdesc d;
	struct dvx_hal_nic *nic;
	uint64_t last_progress_ns;
	struct dvx_p2p_q_lost lost[DVX_P2P_Q_LOST_KEEP];
	uint32_t recoveries;
	int32_t last_err;
};

/**
 * struct dvx_p2p_q_cfg - what dvx_p2p_q_init() needs: a QP's SQ and its send CQ.
 * All memory belongs to the QP and CQ objects the caller created; the queue only
 * points at it.
 */
struct dvx_p2p_q_cfg {
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
 * @cfg:	the QP's and CQ's memory
 *
 * The CQ must belong to this QP alone and hold nothing unconsumed.
 * Context: the queue is not yet shared. Return: 0, or -EINVAL (bad sizes, a CQ
 * smaller than the SQ, missing pointers); @q is then unchanged.
 */
int dvx_p2p_q_init(struct dvx_p2p_q *q, const struct dvx_p2p_q_cfg *cfg);

/**
 * dvx_p2p_q_poll() - consume the CQEs the NIC has written, if no other thread is
 * (dvx_p2p_q_consume(), and the time of progress).
 * @q:		the queue
 *
 * Context: any thread. Return: CQEs consumed (0 when none or another thread polls).
 */
int dvx_p2p_q_poll(struct dvx_p2p_q *q);

/**
 * dvx_p2p_q_waiter() - a waiter on @q's NIC clock.
 * @q:		the queue
 * @w:		filled
 * @timeout_ns:	the bound
 * @progress:	1 to let a stepped backend progress between looks (waits for
 *		room or completions); 0 to relax and yield only (waits for other
 *		threads, such as the publish turn)
 *
 * Context: any thread. Return: nothing.
 */
void dvx_p2p_q_waiter(struct dvx_p2p_q *q, struct dvx_p2p_waiter *w, uint64_t timeout_ns,
		      int progress);

/**
 * dvx_p2p_q_wait() - wait until the WQE at @idx has completed.
 * @q:		the queue
 * @idx:	a WQE index this queue handed out (a ticket); an index older than one
 *		ring is answered from the watermark
 * @timeout_ns:	0 polls once
 *
 * Return: 0 when it completed successfully; the error CQE's errno when that WQE or
 * an earlier one failed (details in @q->s); for a WQE a restart gave up, the error
 * that failed the queue then (see dvx_p2p_q_restart()); -ESTALE for a WQE from
 * before the last DVX_P2P_Q_LOST_KEEP restarts that is not known to have completed;
 * -ETIMEDOUT when neither happened in time (the caller may wait again); -EINVAL for
 * an index never handed out.
 */
int dvx_p2p_q_wait(struct dvx_p2p_q *q, uint64_t idx, uint64_t timeout_ns);

/**
 * dvx_p2p_q_drain() - wait until everything published so far has completed.
 * @q:		the queue
 * @timeout_ns:	the bound
 *
 * Return: as dvx_p2p_q_wait(); 0 at once when nothing is in flight.
 */
int dvx_p2p_q_drain(struct dvx_p2p_q *q, uint64_t timeout_ns);

/**
 * dvx_p2p_q_mark_failed() - mark the queue FAILED with @err unless it already is
 * (the recorded error then has no syndrome: it did not come from a CQE). Posts are
 * refused from now on; waits answer @err for what has not completed.
 * @q:		the queue
 * @err:	negative errno
 *
 * Context: any thread (takes the poll lock). Return: the queue's error after the call,
 * or -EINVAL for a bad argument.
 */
int dvx_p2p_q_mark_failed(struct dvx_p2p_q *q, int err);

/**
 * dvx_p2p_q_quiesce() - consume CQEs until every published WQE has its CQE (good,
 * error or flush), so that nothing of the queue is left in the CQ. For a QP in ERR
 * this consumes its flushes.
 * @q:		the queue
 * @timeout_ns:	the bound
 *
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
 * dvx_p2p_q_completed() - the success watermark (acquire).
 * @q:		the queue
 *
 * Context: any thread. Return: WQEs [0, result) completed successfully.
 */
static inline uint64_t dvx_p2p_q_completed(const struct dvx_p2p_q *q)
{
	return dvx_ld_acquire_u64(&q->s.completed, DVX_SCOPE_GPU);
}

DVX_END_DECLS

#endif /* DVX_P2P_QUEUE_H */
