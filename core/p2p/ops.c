// SPDX-License-Identifier: MIT
/*
 * core/p2p/ops.c - the P2P transport's operations, posted from host threads
 * (see dvx/p2p/p2p.h and docs/p2p.md). The WQE encodings are the mlx5 builders'; the
 * GPU device API posts the same ones.
 */
#include <errno.h>
#include <string.h>

#include <dvx/p2p/p2p.h>
#include <dvx/hal/nic.h>
#include <dvx/hal/host.h>

#define LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)

static struct dvx_p2p_lane *lane_of(struct dvx_p2p *t, int peer, uint32_t channel)
{
	int pi;

	if (!t || !t->lanes || peer < 0 || peer >= t->nranks || !t->nlanes)
		return NULL;
	pi = t->peer_idx[peer];
	if (pi < 0)
		return NULL;
	return &t->lanes[(uint32_t)pi * t->nlanes + channel % t->nlanes];
}

static int lane_has_comp(const struct dvx_p2p *t, const struct dvx_p2p_lane *l)
{
	return t->companions && l->comp.s.state != DVX_P2P_Q_UNUSED;
}

/*
 * Check and post (@x, @n) on lane @l: the operation is resolved and its WQEs are built,
 * reserved, published and rung by the steps the GPU runs too (dvx/p2p/ops.h). Those
 * steps know nothing of the hal; waiting for room is this loop's business, and it
 * lets the NIC progress as every other wait of the transport does (a stepped software
 * NIC runs in the waiting thread; hardware only relaxes the CPU).
 */
static int lane_post(struct dvx_p2p *t, struct dvx_p2p_lane *l, const struct dvx_p2p_xfer *x,
		     const struct dvx_p2p_notify *n, uint64_t timeout_ns,
		     struct dvx_p2p_ticket *tk)
{
	struct dvx_p2p_waiter w, pw;
	struct dvx_p2p_op op;
	uint64_t last;
	int err;

	err = dvx_p2p_op_make(l->nic, (uint32_t)lane_has_comp(t, l), x, n, &op);
	if (err)
		return err;
	dvx_p2p_q_waiter(&l->main, &w, timeout_ns, 1);
	dvx_p2p_q_waiter(&l->main, &pw, timeout_ns > DVX_P2P_PUBLISH_TIMEOUT_NS ?
						timeout_ns : DVX_P2P_PUBLISH_TIMEOUT_NS, 0);
	err = dvx_p2p_lane_post(&l->main.d, &l->comp.d, l->sink_lkey, &op, &w, &pw, &last);
	if (err)
		return err;
	if (tk) {
		tk->peer = l->peer;
		tk->lane = l->index;
		tk->idx = last;
	}
	return 0;
}

int dvx_p2p_post(struct dvx_p2p *t, int peer, uint32_t channel, const struct dvx_p2p_xfer *x,
		 const struct dvx_p2p_notify *n, uint64_t timeout_ns, struct dvx_p2p_ticket *tk)
{
	struct dvx_p2p_lane *l = lane_of(t, peer, channel);

	/* DVX_P2P_RESET is dvx_p2p_reset_signal()'s: it drains the lane first */
	if (!l || (n && (n->flags & ~(uint32_t)DVX_P2P_FENCE)))
		return -EINVAL;
	return lane_post(t, l, x, n, timeout_ns, tk);
}

static uint64_t clock_ns(const struct dvx_p2p *t)
{
	return dvx_hal_now_ns(t->nics[0]->hal);
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
	rep->completed = LOAD(&l->main.s.completed);
}

int dvx_p2p_reset_signal(struct dvx_p2p *t, int peer, uint32_t channel,
			 const struct dvx_p2p_rbuf *sig, uint64_t sigoff, uint64_t timeout_ns)
{
	struct dvx_p2p_lane *l = lane_of(t, peer, channel);
	struct dvx_p2p_notify n = { .sig = sig, .sigoff = sigoff, .flags = DVX_P2P_RESET };
	struct dvx_p2p_ticket tk;
	uint64_t start;
	int err;

	if (!l || !sig)
		return -EINVAL;
	if (l->main.d.sq.wq.max_inline < sizeof(uint64_t))
		return -EOPNOTSUPP;
	start = clock_ns(t);
	/* drain first: the zero must land after every earlier update on this lane */
	err = dvx_p2p_q_drain(&l->main, timeout_ns);
	if (err)
		return err;
	err = lane_post(t, l, NULL, &n, timeout_ns, &tk);
	if (err)
		return err;
	{
		uint64_t used = clock_ns(t) - start;

		return dvx_p2p_q_wait(&l->main, tk.idx, used >= timeout_ns ? 0 : timeout_ns - used);
	}
}

int dvx_p2p_reset_local_signal(const struct dvx_p2p_lbuf *sig, uint64_t sigoff)
{
	if (!sig || !sig->ptr || !dvx_p2p_in_bounds(sigoff, 8, sig->len) ||
	    ((uintptr_t)sig->ptr + sigoff) & 7u)
		return -EINVAL;
	__atomic_store_n((uint64_t *)(void *)((uint8_t *)sig->ptr + sigoff), 0, __ATOMIC_RELEASE);
	return 0;
}

static const uint64_t *word_ptr(const struct dvx_p2p_lbuf *b, uint64_t off)
{
	if (!b || !b->ptr || !dvx_p2p_in_bounds(off, 8, b->len) || (((uintptr_t)b->ptr + off) & 7u))
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
		if (t->nics[i])
			dvx_hal_nic_progress(t->nics[i]);
}

/* the lane's first error (main, then companion), 0 if healthy */
static int lane_err(const struct dvx_p2p_lane *l)
{
	int err = dvx_p2p_q_err(&l->main.s);

	return err ? err : dvx_p2p_q_err(&l->comp.s);
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
		rep->completed = l ? LOAD(&l->main.s.completed) : 0;
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
			 const struct dvx_p2p_notify *n, enum dvx_p2p_cmp cmp, uint64_t expected,
			 uint64_t timeout_ns, struct dvx_p2p_wait_report *rep)
{
	struct dvx_p2p_lane *l = lane_of(t, peer, channel);

	if (!l || !n)
		return -EINVAL;
	return wait_word(t, l, word_ptr(n->ctr, n->ctroff), cmp, expected, timeout_ns, rep);
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
	for (p = 0; p < t->npeers; p++) {
		struct dvx_p2p_lane *l = &t->lanes[p * t->nlanes + channel % t->nlanes];
		struct dvx_p2p_q *qs[2] = { &l->main, &l->comp };
		int k;

		for (k = 0; k < 2; k++) {
			uint64_t pub = LOAD(&qs[k]->s.ctrs.ready);

			if (qs[k]->s.state == DVX_P2P_Q_UNUSED)
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
	h->state = LOAD(&l->main.s.state);
	h->comp_state = LOAD(&l->comp.s.state);
	if (h->state == DVX_P2P_Q_FAILED)
		fq = &l->main;
	else if (h->comp_state == DVX_P2P_Q_FAILED)
		fq = &l->comp;
	if (fq) {
		h->err = fq->s.err;
		h->syndrome = fq->s.syndrome;
		h->vendor_syndrome = fq->s.vendor_syndrome;
		h->wqe_opcode = fq->s.wqe_opcode;
		h->qpn = fq->s.err_qpn ? fq->s.err_qpn : fq->d.sq.wq.qpn;
		h->wqe_index = fq->s.err_wqe;
	}
	h->completed = LOAD(&l->main.s.completed);
	h->in_flight = LOAD(&l->main.s.ctrs.ready) - LOAD(&l->main.s.ctrs.ci);
	h->comp_in_flight = LOAD(&l->comp.s.ctrs.ready) - LOAD(&l->comp.s.ctrs.ci);
	h->last_progress_ns = LOAD(&l->main.last_progress_ns) > LOAD(&l->comp.last_progress_ns) ?
				      LOAD(&l->main.last_progress_ns) : LOAD(&l->comp.last_progress_ns);
	h->recoveries = LOAD(&l->main.recoveries);
	h->last_err = LOAD(&l->main.last_err);
	return 0;
}
