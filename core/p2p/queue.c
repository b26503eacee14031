// SPDX-License-Identifier: MIT
/*
 * core/p2p/queue.c - the host side of a P2P lane queue (dvx/p2p/queue.h): set-up, the
 * waits on the NIC's clock, the tickets a recovery gave up, restart. Reserving,
 * publishing, ringing and consuming completions are the shared steps of
 * dvx/p2p/queue.h, the same the GPU runs.
 */
#include <errno.h>
#include <string.h>

#include <dvx/p2p/queue.h>
#include <dvx/hal/nic.h>
#include <dvx/hal/host.h>

#define LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

static uint64_t q_clock(void *arg)
{
	return dvx_hal_now_ns(((const struct dvx_hal_nic *)arg)->hal);
}

static void q_progress(void *arg)
{
	dvx_hal_nic_progress((struct dvx_hal_nic *)arg);
	dvx_cpu_relax();
}

void dvx_p2p_q_waiter(struct dvx_p2p_q *q, struct dvx_p2p_waiter *w, uint64_t timeout_ns,
		      int progress)
{
	dvx_p2p_waiter_init(w, timeout_ns, q_clock, progress ? q_progress : NULL, q->nic);
}

int dvx_p2p_q_init(struct dvx_p2p_q *q, const struct dvx_p2p_q_cfg *cfg)
{
	struct dvx_mlx5_sq sq;
	struct dvx_mlx5_cq cq;
	int err;

	if (!q || !cfg || !cfg->sq_buf || !cfg->dbrec || !cfg->uar_reg || !cfg->cq_buf ||
	    !cfg->cq_dbrec || !cfg->nic || !DVX_IS_POW2(cfg->nwqebb) || cfg->cq_log_size > 24 ||
	    (1u << cfg->cq_log_size) < cfg->nwqebb || cfg->qpn > 0xffffffu ||
	    cfg->cqn > 0xffffffu)
		return -EINVAL;
	err = dvx_mlx5_sq_init(&sq, NULL,
			       &(struct dvx_mlx5_sq_cfg){ cfg->sq_buf, cfg->nwqebb, cfg->qpn,
							  cfg->max_inline, cfg->dbrec, cfg->uar_reg,
							  0, 0 });
	if (!err)
		err = dvx_mlx5_cq_init(&cq, cfg->cq_buf, cfg->cq_log_size, cfg->cq_dbrec,
				       cfg->cqn);
	if (err)
		return err;
	memset(q, 0, sizeof(*q));
	dvx_mlx5_sq_ctrs_set(&q->s.ctrs, 0);
	q->s.cq_ci = cfg->cq_ci;
	q->s.state = DVX_P2P_Q_OK;
	q->d.sq = sq;
	q->d.cq = cq;
	q->d.cq_base = cfg->cq_ci & 0xffffffu;
	q->d.cqn = cfg->cqn;
	q->d.st = &q->s;
	q->nic = cfg->nic;
	q->last_progress_ns = dvx_hal_now_ns(cfg->nic->hal);
	return 0;
}

int dvx_p2p_q_poll(struct dvx_p2p_q *q)
{
	int n = dvx_p2p_q_consume(&q->d);

	if (n)
		__atomic_store_n(&q->last_progress_ns, dvx_hal_now_ns(q->nic->hal),
				 __ATOMIC_RELAXED);
	return n;
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
	struct dvx_p2p_waiter w;
	int err;

	if (!q)
		return -EINVAL;
	if (idx >= LOAD(&q->s.ctrs.resv))
		return -EINVAL;
	dvx_p2p_q_waiter(q, &w, timeout_ns, 1);
	for (;;) {
		if (LOAD(&q->recoveries) && lost_answer(q, idx, &err))
			return err;
		if (LOAD(&q->s.completed) > idx) {
			/* a restart raises the watermark after its lost range: look again */
			if (LOAD(&q->recoveries) && lost_answer(q, idx, &err))
				return err;
			return 0;
		}
		err = dvx_p2p_q_err(&q->s);
		/* a failed queue answers with its error only where the WQE's fate is known;
		 * else its own CQE is still to come (dvx_p2p_q_fate_known()) */
		if (err && LOAD(&q->s.completed) <= idx && dvx_p2p_q_fate_known(&q->s, idx))
			return err;
		if (dvx_p2p_q_poll(q))
			continue;
		if (dvx_p2p_waiter_step(&w)) {
			/* one last look, so a completion that raced the clock counts */
			dvx_p2p_q_poll(q);
			if (LOAD(&q->s.completed) > idx)
				return LOAD(&q->recoveries) && lost_answer(q, idx, &err) ? err : 0;
			err = dvx_p2p_q_err(&q->s);
			return err ? err : -ETIMEDOUT;
		}
	}
}

int dvx_p2p_q_drain(struct dvx_p2p_q *q, uint64_t timeout_ns)
{
	uint64_t p;

	if (!q)
		return -EINVAL;
	p = LOAD(&q->s.ctrs.ready);
	if (p == 0 || LOAD(&q->s.completed) >= p)
		return dvx_p2p_q_err(&q->s);
	return dvx_p2p_q_wait(q, p - 1, timeout_ns);
}

int dvx_p2p_q_mark_failed(struct dvx_p2p_q *q, int err)
{
	if (!q || err >= 0)
		return -EINVAL;
	return dvx_p2p_q_fail(&q->d, err);
}

int dvx_p2p_q_quiesce(struct dvx_p2p_q *q, uint64_t timeout_ns)
{
	struct dvx_p2p_waiter w;

	if (!q)
		return -EINVAL;
	dvx_p2p_q_waiter(q, &w, timeout_ns, 1);
	for (;;) {
		if (LOAD(&q->s.ctrs.ci) == LOAD(&q->s.ctrs.ready))
			return 0;
		if (dvx_p2p_q_poll(q))
			continue;
		if (dvx_p2p_waiter_step(&w))
			return -ETIMEDOUT;
	}
}

static void lock_spin(uint32_t *l)
{
	while (!dvx_trylock(l))
		dvx_cpu_relax();
}

int dvx_p2p_q_restart(struct dvx_p2p_q *q, uint32_t cq_ci, uint32_t cq_index_base)
{
	struct dvx_p2p_q_lost *e;
	uint64_t done, end, base;
	uint32_t n;
	int32_t err;

	if (!q || q->s.state == DVX_P2P_Q_UNUSED)
		return -EINVAL;
	lock_spin(&q->s.poll_lock);
	done = LOAD(&q->s.completed);
	end = LOAD(&q->s.ctrs.resv);
	/* hardware index 0 == ring slot 0 == 16-bit WQE index 0 (nwqebb divides 65536) */
	base = (end + 0xffffu) & ~(uint64_t)0xffffu;
	err = LOAD(&q->s.state) == DVX_P2P_Q_FAILED ? q->s.err : -ECANCELED;
	n = q->recoveries;
	/* the lost range first: a waiter that sees the raised watermark sees it too */
	e = &q->lost[n % DVX_P2P_Q_LOST_KEEP];
	__atomic_store_n(&e->lo, done, __ATOMIC_RELAXED);
	__atomic_store_n(&e->hi, base, __ATOMIC_RELAXED);
	__atomic_store_n(&e->err, err, __ATOMIC_RELAXED);
	STORE(&q->recoveries, n + 1);
	STORE(&q->last_err, err);
	q->s.cq_ci = cq_ci;
	q->d.cq_base = (cq_index_base - (uint32_t)base) & 0xffffffu;
	q->s.ctrs.db_pi = base;
	q->s.ctrs.bf_offset = 0;
	STORE(&q->s.ctrs.ci, base);
	STORE(&q->s.ctrs.ready, base);
	STORE(&q->s.completed, base);
	STORE(&q->s.ctrs.resv, base);
	q->last_progress_ns = dvx_hal_now_ns(q->nic->hal);
	q->s.err = 0;
	q->s.is_cqe = 0;
	q->s.frozen = 0;
	STORE(&q->s.state, (uint32_t)DVX_P2P_Q_OK);
	dvx_unlock(&q->s.poll_lock);
	return 0;
}
