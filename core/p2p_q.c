// SPDX-License-Identifier: MIT
/*
 * core/p2p_q.c - a send queue shared by host threads (see dvx/p2p/queue.h).
 */
#include <errno.h>
#include <sched.h>
#include <string.h>

#include <dvx/p2p/queue.h>
#include <dvx/mlx5/sq.h>

#define LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

static inline int spin_trylock(uint32_t *l)
{
	return __atomic_exchange_n(l, 1u, __ATOMIC_ACQUIRE) == 0;
}

static inline void spin_lock(uint32_t *l)
{
	while (!spin_trylock(l))
		while (__atomic_load_n(l, __ATOMIC_RELAXED))
			cpu_relax();
}

static inline void spin_unlock(uint32_t *l)
{
	__atomic_store_n(l, 0u, __ATOMIC_RELEASE);
}

static uint64_t now_ns(const struct dvx_p2p_q *q)
{
	return dvx_hal_now_ns(q->nic->hal);
}

int dvx_p2p_q_init(struct dvx_p2p_q *q, const struct dvx_p2p_q_desc *d)
{
	struct dvx_p2p_q n;
	int err;

	if (!q || !d || !d->sq_buf || !d->dbrec || !d->uar_reg || !d->cq_buf || !d->cq_dbrec ||
	    !d->nic || !DVX_IS_POW2(d->nwqebb) || d->cq_log_size > 24 ||
	    (1u << d->cq_log_size) < d->nwqebb || d->qpn > 0xffffffu || d->cqn > 0xffffffu)
		return -EINVAL;
	memset(&n, 0, sizeof(n));
	err = dvx_mlx5_wq_init(&n.wq, d->sq_buf, d->nwqebb, d->qpn, d->max_inline);
	if (err)
		return err;
	n.dbrec = d->dbrec;
	n.uar_reg = d->uar_reg;
	n.db_qpn = dvx_mlx5_sq_db_value(0, d->qpn);
	n.nwqebb = d->nwqebb;
	n.qpn = d->qpn;
	n.cq.buf = d->cq_buf;
	n.cq.log_size = d->cq_log_size;
	n.cq.ci = d->cq_ci;
	n.cq.dbrec = d->cq_dbrec;
	n.cq.cqn = d->cqn;
	n.cqn = d->cqn;
	n.cq_base = d->cq_ci & 0xffffffu;
	n.state = DVX_P2P_Q_OK;
	n.nic = d->nic;
	n.last_progress_ns = dvx_hal_now_ns(d->nic->hal);
	*q = n;
	return 0;
}

/* Record the first error; later errors (flushes) only advance @polled. */
static void q_fail(struct dvx_p2p_q *q, const struct dvx_mlx5_cqe_info *info, int err)
{
	if (LOAD(&q->state) == DVX_P2P_Q_FAILED)
		return;
	q->err = *info;
	q->err_errno = err;
	STORE(&q->state, (uint32_t)DVX_P2P_Q_FAILED);
}

int dvx_p2p_q_poll(struct dvx_p2p_q *q)
{
	struct dvx_mlx5_cqe_info info;
	uint64_t polled, published;
	int n = 0, r;

	if (!spin_trylock(&q->poll_lock))
		return 0;
	polled = q->polled;
	published = LOAD(&q->published);
	/* with nothing in flight, whatever the ring holds is not ours */
	while (polled != published) {
		r = dvx_mlx5_cq_poll_one(&q->cq, &info);
		if (r == 0)
			break;
		n++;
		if (r == 1 && info.wqe_counter != (uint16_t)polled) {
			/* one CQE per one-WQEBB WQE, in order: anything else is a broken
			 * invariant, never a completion */
			info.is_error = 1;
			r = -EPROTO;
		}
		if (r < 0)
			q_fail(q, &info, r);	/* RC completes in order: it is WQE @polled */
		else if (LOAD(&q->state) != DVX_P2P_Q_FAILED)
			STORE(&q->completed, polled + 1);
		polled++;
	}
	if (n) {
		/* The CQ entries go back to the NIC before their SQ slots can be reused:
		 * a slot freed first could complete into an entry the NIC still counts as
		 * unconsumed (a CQ overrun). */
		dvx_mlx5_cq_update_ci(&q->cq);
		STORE(&q->polled, polled);
		q->last_progress_ns = now_ns(q);
	}
	spin_unlock(&q->poll_lock);
	return n;
}

/* One round of waiting: poll, and let a stepped backend (the software NIC without
 * its thread) make progress. */
static void q_progress(struct dvx_p2p_q *q)
{
	if (dvx_p2p_q_poll(q) == 0) {
		dvx_hal_nic_progress(q->nic);
		cpu_relax();
	}
}

int dvx_p2p_q_reserve(struct dvx_p2p_q *q, uint32_t n, uint64_t timeout_ns, uint64_t *idx)
{
	uint64_t deadline = 0, r;

	if (!q || !idx || n == 0 || n > q->nwqebb)
		return -EINVAL;
	for (;;) {
		if (LOAD(&q->state) == DVX_P2P_Q_FAILED)
			return q->err_errno;
		r = LOAD(&q->reserved);
		/* room: slots are free once their CQEs were consumed */
		if (r + n - LOAD(&q->polled) <= q->nwqebb) {
			if (__atomic_compare_exchange_n(&q->reserved, &r, r + n, 0,
							__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
				*idx = r;
				return 0;
			}
			continue;
		}
		if (!deadline)
			deadline = now_ns(q) + timeout_ns;
		else if (now_ns(q) >= deadline)
			return -ETIMEDOUT;
		q_progress(q);
	}
}

static void q_ring(struct dvx_p2p_q *q)
{
	uint64_t p;
	uint64_t db;

	spin_lock(&q->db_lock);
	p = LOAD(&q->published);
	if (p != q->rung) {
		db = q->db_qpn | dvx_mlx5_sq_db_value((uint32_t)p, 0);
		/* WQE stores (ours, and other threads' made visible by their release of
		 * @published, which our acquire load saw) before the doorbell record. */
		dvx_wmb_wqe_before_dbr();
		dvx_store_release_be32(&q->dbrec[DVX_MLX5_SND_DBR],
				       dvx_cpu_to_be32((uint32_t)p & DVX_MLX5_WQE_INDEX_MASK));
		/* The record before the doorbell that makes the NIC read it. */
		dvx_wmb_dbr_before_mmio();
		dvx_mmio_write64(q->uar_reg, db);
		/* Out of the write-combining buffer before the next doorbell. */
		dvx_wmb_mmio_flush();
		q->rung = p;
	}
	spin_unlock(&q->db_lock);
}

void dvx_p2p_q_publish(struct dvx_p2p_q *q, uint64_t idx, uint32_t n)
{
	uint64_t end = idx + n;

	unsigned spins = 0;

	/* earlier reservations are being written now; building cannot fail, but their
	 * threads may have lost the CPU: after a while, give it to them */
	while (LOAD(&q->published) != idx) {
		if (++spins < 256)
			cpu_relax();
		else
			sched_yield();
	}
	STORE(&q->published, end);
	/* a later reservation publishes after us and rings for both */
	if (LOAD(&q->reserved) == end)
		q_ring(q);
}

/*
 * A ticket from before a restart: 1 with *@err set when a lost range (or the end of
 * the history) answers it, 0 when the watermark does. Newest restart first: a ticket
 * at or above its range's end was posted after it.
 */
static int lost_answer(const struct dvx_p2p_q *q, uint64_t idx, int *err)
{
	uint32_t n = LOAD(&q->recoveries), k;

	for (k = 0; k < n && k < DVX_P2P_Q_LOST_KEEP; k++) {
		const struct dvx_p2p_q_lost *e = &q->lost[(n - 1 - k) % DVX_P2P_Q_LOST_KEEP];

		if (idx >= LOAD(&e->hi))
			return 0;
		if (idx >= LOAD(&e->lo)) {
			*err = LOAD(&e->err);
			return 1;
		}
	}
	if (n > DVX_P2P_Q_LOST_KEEP) {
		*err = -ESTALE;	/* older than the history: not known */
		return 1;
	}
	return 0;	/* before every lost range: it completed */
}

int dvx_p2p_q_wait(struct dvx_p2p_q *q, uint64_t idx, uint64_t timeout_ns)
{
	uint64_t deadline = 0;
	int lerr;

	if (!q)
		return -EINVAL;
	if (idx >= LOAD(&q->reserved))
		return -EINVAL;
	for (;;) {
		if (LOAD(&q->recoveries) && lost_answer(q, idx, &lerr))
			return lerr;
		if (LOAD(&q->completed) > idx)
			return 0;
		if (LOAD(&q->state) == DVX_P2P_Q_FAILED && LOAD(&q->completed) <= idx)
			return q->err_errno;
		if (!deadline) {
			deadline = now_ns(q) + timeout_ns;
		} else if (now_ns(q) >= deadline) {
			/* one last look, so a completion that raced the clock counts */
			dvx_p2p_q_poll(q);
			if (LOAD(&q->completed) > idx)
				return 0;
			return -ETIMEDOUT;
		}
		q_progress(q);
	}
}

int dvx_p2p_q_drain(struct dvx_p2p_q *q, uint64_t timeout_ns)
{
	uint64_t p;

	if (!q)
		return -EINVAL;
	p = LOAD(&q->published);
	if (p == 0 || LOAD(&q->completed) >= p) {
		if (LOAD(&q->state) == DVX_P2P_Q_FAILED)
			return q->err_errno;
		return 0;
	}
	return dvx_p2p_q_wait(q, p - 1, timeout_ns);
}

int dvx_p2p_q_mark_failed(struct dvx_p2p_q *q, int err)
{
	struct dvx_mlx5_cqe_info info;
	int r;

	if (!q || err >= 0)
		return -EINVAL;
	spin_lock(&q->poll_lock);
	memset(&info, 0, sizeof(info));
	info.is_error = 1;
	info.qpn = q->qpn;
	info.wqe_counter = (uint16_t)q->polled;
	q_fail(q, &info, err);
	r = q->err_errno;
	spin_unlock(&q->poll_lock);
	return r;
}

int dvx_p2p_q_quiesce(struct dvx_p2p_q *q, uint64_t timeout_ns)
{
	uint64_t deadline = 0;

	if (!q)
		return -EINVAL;
	for (;;) {
		if (LOAD(&q->polled) == LOAD(&q->published))
			return 0;
		if (!deadline)
			deadline = now_ns(q) + timeout_ns;
		else if (now_ns(q) >= deadline)
			return -ETIMEDOUT;
		q_progress(q);
	}
}

int dvx_p2p_q_restart(struct dvx_p2p_q *q, uint32_t cq_ci, uint32_t cq_index_base)
{
	struct dvx_p2p_q_lost *e;
	uint64_t done, end, base;
	uint32_t n;
	int32_t err;

	if (!q || q->state == DVX_P2P_Q_UNUSED)
		return -EINVAL;
	spin_lock(&q->poll_lock);
	spin_lock(&q->db_lock);
	done = LOAD(&q->completed);
	end = LOAD(&q->reserved);
	/* hardware index 0 == ring slot 0 == 16-bit WQE index 0 (nwqebb divides 65536) */
	base = (end + 0xffffu) & ~(uint64_t)0xffffu;
	err = LOAD(&q->state) == DVX_P2P_Q_FAILED ? q->err_errno : -ECANCELED;
	n = q->recoveries;
	/* the lost range first: a waiter that sees the raised watermark sees it too */
	e = &q->lost[n % DVX_P2P_Q_LOST_KEEP];
	__atomic_store_n(&e->lo, done, __ATOMIC_RELAXED);
	__atomic_store_n(&e->hi, base, __ATOMIC_RELAXED);
	__atomic_store_n(&e->err, err, __ATOMIC_RELAXED);
	STORE(&q->recoveries, n + 1);
	STORE(&q->last_err, err);
	q->cq.ci = cq_ci;
	q->cq_base = (cq_index_base - (uint32_t)base) & 0xffffffu;
	q->rung = base;
	STORE(&q->polled, base);
	STORE(&q->published, base);
	STORE(&q->completed, base);
	STORE(&q->reserved, base);
	q->last_progress_ns = now_ns(q);
	STORE(&q->state, (uint32_t)DVX_P2P_Q_OK);
	spin_unlock(&q->db_lock);
	spin_unlock(&q->poll_lock);
	return 0;
}
