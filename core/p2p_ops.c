// SPDX-License-Identifier: MIT
/*
 * core/p2p_ops.c - the P2P transport's operations, posted from host threads
 * (see dvx/p2p/p2p.h and docs/p2p.md). The WQE encodings are the mlx5 builders'; the
 * GPU device API posts the same ones.
 */
#include <errno.h>
#include <string.h>

#include <dvx/p2p/p2p.h>
#include <dvx/mlx5/wqe.h>

#define LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)

/* every transport WQE asks for a CQE: CQ index == WQE index */
#define CE DVX_MLX5_WQE_CTRL_CQ_UPDATE
/* DVX_P2P_FENCE: rdma-core's IBV_SEND_FENCE (facts 2.2, 9.3) */
#define FENCE DVX_MLX5_WQE_CTRL_FM(DVX_MLX5_FM_FENCE_AND_INITIATOR_SMALL)

/* What one call posts on a lane. */
struct post {
	/* data: WRITE(s) */
	const struct dvx_p2p_lbuf *src;
	uint64_t soff;
	const struct dvx_p2p_rbuf *dst;
	uint64_t doff;
	uint64_t len;
	/* signal: fetch-add on the main QP */
	const struct dvx_p2p_rbuf *sig;
	uint64_t sigoff;
	uint64_t add;
	uint32_t flags;
	/* counter: companion WAIT + loopback fetch-add */
	const struct dvx_p2p_lbuf *ctr;
	uint64_t ctroff;
	/* reset: one inline write of 8 zero bytes */
	int reset;
};

static struct dvx_p2p_lane *lane_of(struct dvx_p2p *t, int peer, uint32_t channel)
{
	int pi;

	if (!t || !t->lanes || peer < 0 || peer >= t->nranks || !t->nlanes)
		return NULL;
	pi = dvx_p2p_peer_index(t->rank, peer);
	if (pi < 0)
		return NULL;
	return &t->lanes[(uint32_t)pi * t->nlanes + channel % t->nlanes];
}

static int in_bounds(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

/* the 8-byte word at @off must be inside and 8-byte aligned (atomics) */
static int word_ok(uint64_t addr, uint64_t off, uint64_t size)
{
	return in_bounds(off, 8, size) && ((addr + off) & 7u) == 0;
}

static int check(const struct dvx_p2p *t, const struct dvx_p2p_lane *l, const struct post *p)
{
	uint32_t nic = l->nic;

	if (p->src || p->dst || p->len) {
		if (!p->src || !p->dst || p->len == 0 || !in_bounds(p->soff, p->len, p->src->len) ||
		    !in_bounds(p->doff, p->len, p->dst->len) || !p->src->lkey[nic] ||
		    !p->dst->rkey[nic])
			return -EINVAL;
	}
	if (p->sig && (!word_ok(p->sig->addr, p->sigoff, p->sig->len) || !p->sig->rkey[nic]))
		return -EINVAL;
	if (p->ctr) {
		if (!t->companions || l->comp.state == DVX_P2P_Q_UNUSED)
			return -EOPNOTSUPP;
		if (!word_ok(p->ctr->addr, p->ctroff, p->ctr->len) || !p->ctr->rkey[nic])
			return -EINVAL;
	}
	return 0;
}

static uint32_t n_writes(uint64_t len)
{
	return (uint32_t)DVX_DIV_ROUND_UP(len, DVX_P2P_MAX_SPLIT);
}

/* Fill slots the caller reserved but cannot use with signaled NOPs, so the ring and
 * the CQ stay in step (CQ index == WQE index). */
static void fill_nops(struct dvx_p2p_q *q, uint64_t idx, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		dvx_mlx5_wqe_nop(&q->wq, (uint32_t)(idx + i), CE);
	dvx_p2p_q_publish(q, idx, n);
}

static int lane_post(struct dvx_p2p *t, struct dvx_p2p_lane *l, const struct post *p,
		     uint64_t timeout_ns, struct dvx_p2p_ticket *tk)
{
	uint32_t nic = l->nic, nw = p->len ? n_writes(p->len) : 0, n, i, w = 0;
	uint64_t idx, cidx = 0, last;
	int err;

	err = check(t, l, p);
	if (err)
		return err;
	n = nw + (p->sig ? 1u : 0u);	/* a reset's inline write takes the signal's slot */
	if (n == 0 || n > l->main.nwqebb)
		return -EINVAL;
	if (p->ctr && LOAD(&l->comp.state) == DVX_P2P_Q_FAILED)
		return l->comp.err_errno;
	/*
	 * The companion's slots are reserved first. The other order can deadlock when
	 * threads share a lane: a thread holding main slots and waiting for companion
	 * room blocks the in-order publish of later main slots, whose threads may
	 * hold the companion slots it waits for. Reserved this way, a thread waits for
	 * main room only while holding companion slots, and main room comes back from
	 * main completions alone.
	 */
	if (p->ctr) {
		err = dvx_p2p_q_reserve(&l->comp, 2, timeout_ns, &cidx);
		if (err)
			return err;
	}
	err = dvx_p2p_q_reserve(&l->main, n, timeout_ns, &idx);
	if (err) {
		/* nothing may be posted without its counter, nor a counter without
		 * its data: keep the companion's slots in step with NOPs */
		if (p->ctr)
			fill_nops(&l->comp, cidx, 2);
		return err;
	}
	for (i = 0; i < nw; i++) {
		uint64_t off = (uint64_t)i * DVX_P2P_MAX_SPLIT;
		uint64_t chunk = p->len - off < DVX_P2P_MAX_SPLIT ? p->len - off : DVX_P2P_MAX_SPLIT;

		dvx_mlx5_wqe_rdma_write(&l->main.wq, (uint32_t)(idx + w++), CE,
					p->dst->addr + p->doff + off, p->dst->rkey[nic],
					p->src->addr + p->soff + off, p->src->lkey[nic],
					(uint32_t)chunk);
	}
	if (p->reset) {
		static const uint64_t zero;

		dvx_mlx5_wqe_rdma_write_inline(&l->main.wq, (uint32_t)(idx + w++),
					       DVX_MLX5_OPCODE_RDMA_WRITE, CE, 0,
					       p->sig->addr + p->sigoff, p->sig->rkey[nic], &zero,
					       sizeof(zero));
	} else if (p->sig) {
		dvx_mlx5_wqe_atomic_fa(&l->main.wq, (uint32_t)(idx + w++),
				       CE | ((p->flags & DVX_P2P_FENCE) ? FENCE : 0),
				       p->sig->addr + p->sigoff, p->sig->rkey[nic], p->add, 0,
				       l->sink_lkey);
	}
	last = idx + n - 1;
	dvx_p2p_q_publish(&l->main, idx, n);
	if (p->ctr) {
		/* WAIT until the main CQ produced the CQE of the last main WQE (its
		 * 0-based CQ index), then +1 on the counter through the loopback pair */
		dvx_mlx5_wqe_wait_cq(&l->comp.wq, (uint32_t)cidx, CE, l->main.cqn,
				     dvx_p2p_q_cq_index(&l->main, last));
		dvx_mlx5_wqe_atomic_fa(&l->comp.wq, (uint32_t)(cidx + 1), CE,
				       p->ctr->addr + p->ctroff, p->ctr->rkey[nic], 1, 0,
				       l->sink_lkey);
		dvx_p2p_q_publish(&l->comp, cidx, 2);
	}
	if (tk) {
		tk->peer = l->peer;
		tk->lane = l->index;
		tk->idx = last;
	}
	return 0;
}

int dvx_p2p_put(struct dvx_p2p *t, int peer, uint32_t channel, const struct dvx_p2p_lbuf *src,
		uint64_t soff, const struct dvx_p2p_rbuf *dst, uint64_t doff, uint64_t len,
		uint64_t timeout_ns, struct dvx_p2p_ticket *tk)
{
	struct dvx_p2p_lane *l = lane_of(t, peer, channel);
	struct post p = { .src = src, .soff = soff, .dst = dst, .doff = doff, .len = len };

	if (!l || len == 0)
		return -EINVAL;
	return lane_post(t, l, &p, timeout_ns, tk);
}

int dvx_p2p_put_signal(struct dvx_p2p *t, int peer, uint32_t channel,
		       const struct dvx_p2p_lbuf *src, uint64_t soff,
		       const struct dvx_p2p_rbuf *dst, uint64_t doff, uint64_t len,
		       const struct dvx_p2p_rbuf *sig, uint64_t sigoff, uint64_t add,
		       uint32_t flags, uint64_t timeout_ns, struct dvx_p2p_ticket *tk)
{
	struct dvx_p2p_lane *l = lane_of(t, peer, channel);
	struct post p = { .src = src, .soff = soff, .dst = dst, .doff = doff, .len = len,
			  .sig = sig, .sigoff = sigoff, .add = add, .flags = flags };

	if (!l || len == 0 || !sig || (flags & ~DVX_P2P_FENCE))
		return -EINVAL;
	return lane_post(t, l, &p, timeout_ns, tk);
}

int dvx_p2p_signal(struct dvx_p2p *t, int peer, uint32_t channel,
		   const struct dvx_p2p_rbuf *sig, uint64_t sigoff, uint64_t add, uint32_t flags,
		   uint64_t timeout_ns, struct dvx_p2p_ticket *tk)
{
	struct dvx_p2p_lane *l = lane_of(t, peer, channel);
	struct post p = { .sig = sig, .sigoff = sigoff, .add = add, .flags = flags };

	if (!l || !sig || (flags & ~DVX_P2P_FENCE))
		return -EINVAL;
	return lane_post(t, l, &p, timeout_ns, tk);
}

int dvx_p2p_put_counter(struct dvx_p2p *t, int peer, uint32_t channel,
			const struct dvx_p2p_lbuf *src, uint64_t soff,
			const struct dvx_p2p_rbuf *dst, uint64_t doff, uint64_t len,
			const struct dvx_p2p_lbuf *ctr, uint64_t ctroff, uint64_t timeout_ns,
			struct dvx_p2p_ticket *tk)
{
	struct dvx_p2p_lane *l = lane_of(t, peer, channel);
	struct post p = { .src = src, .soff = soff, .dst = dst, .doff = doff, .len = len,
			  .ctr = ctr, .ctroff = ctroff };

	if (!l || len == 0 || !ctr)
		return -EINVAL;
	return lane_post(t, l, &p, timeout_ns, tk);
}

int dvx_p2p_put_signal_counter(struct dvx_p2p *t, int peer, uint32_t channel,
			       const struct dvx_p2p_lbuf *src, uint64_t soff,
			       const struct dvx_p2p_rbuf *dst, uint64_t doff, uint64_t len,
			       const struct dvx_p2p_rbuf *sig, uint64_t sigoff, uint64_t add,
			       uint32_t flags, const struct dvx_p2p_lbuf *ctr, uint64_t ctroff,
			       uint64_t timeout_ns, struct dvx_p2p_ticket *tk)
{
	struct dvx_p2p_lane *l = lane_of(t, peer, channel);
	struct post p = { .src = src, .soff = soff, .dst = dst, .doff = doff, .len = len,
			  .sig = sig, .sigoff = sigoff, .add = add, .flags = flags,
			  .ctr = ctr, .ctroff = ctroff };

	if (!l || len == 0 || !sig || !ctr || (flags & ~DVX_P2P_FENCE))
		return -EINVAL;
	return lane_post(t, l, &p, timeout_ns, tk);
}

int dvx_p2p_signal_counter(struct dvx_p2p *t, int peer, uint32_t channel,
			   const struct dvx_p2p_rbuf *sig, uint64_t sigoff, uint64_t add,
			   uint32_t flags, const struct dvx_p2p_lbuf *ctr, uint64_t ctroff,
			   uint64_t timeout_ns, struct dvx_p2p_ticket *tk)
{
	struct dvx_p2p_lane *l = lane_of(t, peer, channel);
	struct post p = { .sig = sig, .sigoff = sigoff, .add = add, .flags = flags,
			  .ctr = ctr, .ctroff = ctroff };

	if (!l || !sig || !ctr || (flags & ~DVX_P2P_FENCE))
		return -EINVAL;
	return lane_post(t, l, &p, timeout_ns, tk);
}

static uint64_t clock_ns(const struct dvx_p2p *t)
{
	return dvx_hal_now_ns(t->devs[0]->hal);
}

static void report_lane(struct dvx_p2p_wait_report *rep, const struct dvx_p2p_lane *l, int err,
			uint64_t ticket)
{
	if (!rep)
		return;
	memset(rep, 0, sizeof(*rep));
	rep->err = err;
	rep->peer = (int32_t)l->peer;
	rep->lane = l->index;
	rep->ticket = ticket;
	rep->completed = LOAD(&l->main.completed);
}

int dvx_p2p_reset_signal(struct dvx_p2p *t, int peer, uint32_t channel,
			 const struct dvx_p2p_rbuf *sig, uint64_t sigoff, uint64_t timeout_ns)
{
	struct dvx_p2p_lane *l = lane_of(t, peer, channel);
	struct post p = { .sig = sig, .sigoff = sigoff, .reset = 1 };
	struct dvx_p2p_ticket tk;
	uint64_t start;
	int err;

	if (!l || !sig)
		return -EINVAL;
	if (l->main.wq.max_inline < sizeof(uint64_t))
		return -EOPNOTSUPP;
	start = clock_ns(t);
	/* drain first: the zero must land after every earlier update on this lane */
	err = dvx_p2p_q_drain(&l->main, timeout_ns);
	if (err)
		return err;
	err = lane_post(t, l, &p, timeout_ns, &tk);
	if (err)
		return err;
	{
		uint64_t used = clock_ns(t) - start;

		return dvx_p2p_q_wait(&l->main, tk.idx, used >= timeout_ns ? 0 : timeout_ns - used);
	}
}

int dvx_p2p_reset_local_signal(const struct dvx_p2p_lbuf *sig, uint64_t sigoff)
{
	if (!sig || !sig->ptr || !in_bounds(sigoff, 8, sig->len) ||
	    ((uintptr_t)sig->ptr + sigoff) & 7u)
		return -EINVAL;
	__atomic_store_n((uint64_t *)(void *)((uint8_t *)sig->ptr + sigoff), 0, __ATOMIC_RELEASE);
	return 0;
}

static const uint64_t *word_ptr(const struct dvx_p2p_lbuf *b, uint64_t off)
{
	if (!b || !b->ptr || !in_bounds(off, 8, b->len) || (((uintptr_t)b->ptr + off) & 7u))
		return NULL;
	return (const uint64_t *)(const void *)((const uint8_t *)b->ptr + off);
}

uint64_t dvx_p2p_read_signal(const struct dvx_p2p_lbuf *sig, uint64_t sigoff)
{
	const uint64_t *w = word_ptr(sig, sigoff);

	return w ? __atomic_load_n(w, __ATOMIC_ACQUIRE) : 0;
}

uint64_t dvx_p2p_read_counter(const struct dvx_p2p_lbuf *ctr, uint64_t ctroff)
{
	return dvx_p2p_read_signal(ctr, ctroff);
}

static void progress_all(struct dvx_p2p *t)
{
	uint32_t i;

	if (!t)
		return;
	for (i = 0; i < t->nnics; i++)
		if (t->devs[i])
			dvx_hal_nic_progress(t->devs[i]);
}

/* the lane's first error (main, then companion), 0 if healthy */
static int lane_err(const struct dvx_p2p_lane *l)
{
	if (LOAD(&l->main.state) == DVX_P2P_Q_FAILED)
		return l->main.err_errno;
	if (LOAD(&l->comp.state) == DVX_P2P_Q_FAILED)
		return l->comp.err_errno;
	return 0;
}

static int wait_word(struct dvx_p2p *t, struct dvx_p2p_lane *l, const uint64_t *w,
		     enum dvx_p2p_cmp cmp, uint64_t expected, uint64_t timeout_ns,
		     struct dvx_p2p_wait_report *rep)
{
	uint64_t v, deadline = 0, now;
	int err = 0, ok;

	if (!w || dvx_p2p_cmp_holds(cmp, 0, 0) < 0)
		return -EINVAL;
	for (;;) {
		v = __atomic_load_n(w, __ATOMIC_ACQUIRE);
		ok = dvx_p2p_cmp_holds(cmp, v, expected);
		if (ok)
			break;
		if (l) {
			/* the counter's companion completions must be consumed too, so
			 * its ring frees and its errors are seen */
			dvx_p2p_q_poll(&l->main);
			dvx_p2p_q_poll(&l->comp);
			err = lane_err(l);
			if (err)
				break;
		}
		now = t ? clock_ns(t) : 0;
		if (!t) {
			/* without a transport there is no clock: one look only */
			err = -ETIMEDOUT;
			break;
		}
		if (!deadline) {
			deadline = now + timeout_ns;
		} else if (now >= deadline) {
			v = __atomic_load_n(w, __ATOMIC_ACQUIRE);
			if (dvx_p2p_cmp_holds(cmp, v, expected))
				break;
			err = -ETIMEDOUT;
			break;
		}
		progress_all(t);
	}
	if (rep) {
		memset(rep, 0, sizeof(*rep));
		rep->err = err;
		rep->peer = l ? (int32_t)l->peer : -1;
		rep->lane = l ? l->index : 0;
		rep->completed = l ? LOAD(&l->main.completed) : 0;
		rep->cmp = cmp;
		rep->slot = w;
		rep->expected = expected;
		rep->observed = v;
	}
	return err;
}

int dvx_p2p_wait_signal(struct dvx_p2p *t, const struct dvx_p2p_lbuf *sig, uint64_t sigoff,
			enum dvx_p2p_cmp cmp, uint64_t expected, uint64_t timeout_ns,
			struct dvx_p2p_wait_report *rep)
{
	return wait_word(t, NULL, word_ptr(sig, sigoff), cmp, expected, timeout_ns, rep);
}

int dvx_p2p_wait_counter(struct dvx_p2p *t, int peer, uint32_t channel,
			 const struct dvx_p2p_lbuf *ctr, uint64_t ctroff, enum dvx_p2p_cmp cmp,
			 uint64_t expected, uint64_t timeout_ns, struct dvx_p2p_wait_report *rep)
{
	struct dvx_p2p_lane *l = lane_of(t, peer, channel);

	if (!l)
		return -EINVAL;
	return wait_word(t, l, word_ptr(ctr, ctroff), cmp, expected, timeout_ns, rep);
}

int dvx_p2p_wait_local(struct dvx_p2p *t, const struct dvx_p2p_ticket *tk, uint64_t timeout_ns,
		       struct dvx_p2p_wait_report *rep)
{
	struct dvx_p2p_lane *l;
	int err;

	if (!tk || !t || tk->lane >= t->nlanes)
		return -EINVAL;
	l = lane_of(t, (int)tk->peer, tk->lane);
	if (!l)
		return -EINVAL;
	err = dvx_p2p_q_wait(&l->main, tk->idx, timeout_ns);
	report_lane(rep, l, err, tk->idx);
	return err;
}

int dvx_p2p_flush(struct dvx_p2p *t, uint32_t channel, uint64_t timeout_ns,
		  struct dvx_p2p_wait_report *rep)
{
	uint64_t start, used;
	uint32_t p;
	int err;

	if (!t || !t->lanes || !t->nlanes)
		return -EINVAL;
	start = clock_ns(t);
	for (p = 0; p + 1 < (uint32_t)t->nranks; p++) {
		struct dvx_p2p_lane *l = &t->lanes[p * t->nlanes + channel % t->nlanes];
		struct dvx_p2p_q *qs[2] = { &l->main, &l->comp };
		int k;

		for (k = 0; k < 2; k++) {
			uint64_t pub = LOAD(&qs[k]->published);

			if (qs[k]->state == DVX_P2P_Q_UNUSED)
				continue;
			used = clock_ns(t) - start;
			err = dvx_p2p_q_drain(qs[k], used >= timeout_ns ? 0 : timeout_ns - used);
			if (err) {
				report_lane(rep, l, err, pub ? pub - 1 : 0);
				return err;
			}
		}
	}
	if (rep)
		memset(rep, 0, sizeof(*rep));
	return 0;
}

int dvx_p2p_lane_health(struct dvx_p2p *t, int peer, uint32_t lane,
			struct dvx_p2p_lane_health *h)
{
	const struct dvx_p2p_lane *l;
	const struct dvx_p2p_q *fq = NULL;

	if (!t || !h || lane >= t->nlanes)
		return -EINVAL;
	l = lane_of(t, peer, lane);
	if (!l)
		return -EINVAL;
	memset(h, 0, sizeof(*h));
	h->state = LOAD(&l->main.state);
	h->comp_state = LOAD(&l->comp.state);
	if (h->state == DVX_P2P_Q_FAILED)
		fq = &l->main;
	else if (h->comp_state == DVX_P2P_Q_FAILED)
		fq = &l->comp;
	if (fq) {
		h->err = fq->err_errno;
		h->syndrome = fq->err.syndrome;
		h->vendor_syndrome = fq->err.vendor_syndrome;
		h->wqe_opcode = fq->err.wqe_opcode;
		h->qpn = fq->err.qpn ? fq->err.qpn : fq->qpn;
		h->wqe_index = fq->err.wqe_counter;
	}
	h->completed = LOAD(&l->main.completed);
	h->in_flight = LOAD(&l->main.published) - LOAD(&l->main.polled);
	h->comp_in_flight = LOAD(&l->comp.published) - LOAD(&l->comp.polled);
	h->last_progress_ns = l->main.last_progress_ns > l->comp.last_progress_ns ?
				      l->main.last_progress_ns : l->comp.last_progress_ns;
	h->recoveries = LOAD(&l->main.recoveries);
	h->last_err = LOAD(&l->main.last_err);
	return 0;
}
