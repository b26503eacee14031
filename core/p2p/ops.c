// SPDX-License-Identifier: MIT
/*
 * core/p2p/ops.c - the P2P transport's operations, posted from host threads
 * (see dvx/p2p/p2p.h and docs/p2p.md). The WQE encodings are the mlx5 builders'; the
 * GPU device API posts the same ones.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
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

/* a refused operation: the cause in the transport's first NIC's diagnostic */
static int __attribute__((format(printf, 3, 4)))
op_bad(struct dvx_p2p *t, const char *op, const char *fmt, ...)
{
	struct dvx_diag *d;
	va_list ap;

	if (!t || !t->nnics || !t->nics[0])
		return -EINVAL;
	d = &t->nics[0]->diag;
	dvx_hal_diag_set(d, -EINVAL, DVX_DIAG_ARG, op, NULL);
	va_start(ap, fmt);
	vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* no lane for (@peer, @channel): why */
static int lane_bad(struct dvx_p2p *t, const char *op, int peer)
{
	if (!t || !t->lanes)
		return -EINVAL;
	return op_bad(t, op, "peer %d: no lanes to it (itself, out of the %d ranks, or not in cfg.peers)",
		      peer, t->nranks);
}

/* dvx_p2p_op_make() refused (@x, @n): which part */
static int post_bad(struct dvx_p2p *t, const char *op, const struct dvx_p2p_xfer *x,
		    const struct dvx_p2p_notify *n)
{
	if (!x && !n)
		return op_bad(t, op, "neither a transfer nor a notification");
	if (x && x->len && (!x->src || !x->dst))
		return op_bad(t, op, "no source or no destination buffer");
	if (x && x->len && !dvx_p2p_in_bounds(x->soff, x->len, x->src->len))
		return op_bad(t, op, "[%llu, +%llu) outside the source of %llu bytes",
			      (unsigned long long)x->soff, (unsigned long long)x->len,
			      (unsigned long long)x->src->len);
	if (x && x->len && !dvx_p2p_in_bounds(x->doff, x->len, x->dst->len))
		return op_bad(t, op, "[%llu, +%llu) outside the destination of %llu bytes",
			      (unsigned long long)x->doff, (unsigned long long)x->len,
			      (unsigned long long)x->dst->len);
	if (x && !x->len && (x->src || x->dst))
		return op_bad(t, op, "len 0: a transfer carries at least a byte (a signal alone: no transfer)");
	if (n && n->sig && !dvx_p2p_word_ok(n->sig->addr, n->sigoff, n->sig->len))
		return op_bad(t, op, "signal word at %llu: outside its buffer or not 8-byte aligned",
			      (unsigned long long)n->sigoff);
	if (n && n->ctr && !dvx_p2p_word_ok(n->ctr->addr, n->ctroff, n->ctr->len))
		return op_bad(t, op, "counter word at %llu: outside its buffer or not 8-byte aligned",
			      (unsigned long long)n->ctroff);
	if (n && !n->sig && !n->ctr && !x)
		return op_bad(t, op, "a notification with neither a signal nor a counter");
	return op_bad(t, op, "a buffer without a key for the lane's NIC (registered on it?)");
}

/*
 * Check and post (@x, @n) on lane @l: the operation is resolved and its WQEs are built,
 * reserved, published and rung by the steps the GPU runs too (dvx/p2p/ops.h). Those
 * steps know nothing of the hal; waiting for room is this loop's business, and it
 * lets the NIC progress as every other wait of the transport does (a stepped software
 * NIC runs in the waiting thread; hardware only relaxes the CPU).
 */
static int lane_post_op(struct dvx_p2p_lane *l, const struct dvx_p2p_op *op,
			uint64_t timeout_ns, struct dvx_p2p_ticket *tk);

static int lane_post(struct dvx_p2p *t, struct dvx_p2p_lane *l, const struct dvx_p2p_xfer *x,
		     const struct dvx_p2p_notify *n, uint64_t timeout_ns,
		     struct dvx_p2p_ticket *tk, const char *opname)
{
	struct dvx_p2p_op op;
	int err;

	err = dvx_p2p_op_make(l->nic, (uint32_t)lane_has_comp(t, l), x, n, &op);
	if (err == -EINVAL)
		return post_bad(t, opname, x, n);
	if (err)
		return err;
	return lane_post_op(l, &op, timeout_ns, tk);
}

/* post a resolved operation on @l: the steps the GPU runs too */
static int lane_post_op(struct dvx_p2p_lane *l, const struct dvx_p2p_op *op,
			uint64_t timeout_ns, struct dvx_p2p_ticket *tk)
{
	struct dvx_p2p_waiter w, pw;
	uint64_t last;
	int err;

	dvx_p2p_q_waiter(&l->main, &w, timeout_ns, 1);
	dvx_p2p_q_waiter(&l->main, &pw, timeout_ns > DVX_P2P_PUBLISH_TIMEOUT_NS ?
						timeout_ns : DVX_P2P_PUBLISH_TIMEOUT_NS, 0);
	err = dvx_p2p_lane_post(&l->main.d, &l->comp.d, l->sink_lkey, op, &w, &pw, &last);
	if (err)
		return err;
	if (tk) {
		tk->peer = l->peer;
		tk->lane = l->index;
		tk->idx = last;
	}
	return 0;
}

static void shape_name(uint32_t sh, char *b, size_t n)
{
	snprintf(b, n, "%s%s%s%s", sh & DVX_P2P_HAS_DATA ? "data " : "",
		 sh & DVX_P2P_HAS_SIG ? "signal " : "", sh & DVX_P2P_HAS_CTR ? "counter " : "",
		 sh ? "" : "nothing ");
	if (b[0])
		b[strlen(b) - 1] = 0;
}

int dvx_p2p_refuse_shape(struct dvx_p2p *t, const char *op, uint32_t want,
			 const struct dvx_p2p_xfer *x, const struct dvx_p2p_notify *n)
{
	char w[32], h[32];

	if ((want & DVX_P2P_HAS_DATA) && x && !x->len)
		return op_bad(t, op, "len 0: a put carries at least a byte (a signal alone: dvx_p2p_signal())");
	shape_name(want, w, sizeof(w));
	shape_name(dvx_p2p_shape(x, n), h, sizeof(h));
	return op_bad(t, op, "posts %s; the description has %s", w, h);
}

int dvx_p2p_post(struct dvx_p2p *t, int peer, uint32_t channel, const struct dvx_p2p_xfer *x,
		 const struct dvx_p2p_notify *n, uint64_t timeout_ns, struct dvx_p2p_ticket *tk)
{
	struct dvx_p2p_lane *l = lane_of(t, peer, channel);

	if (!l)
		return lane_bad(t, "dvx_p2p_post", peer);
	/* DVX_P2P_RESET is dvx_p2p_reset_signal()'s: it drains the lane first */
	if (n && (n->flags & ~(uint32_t)DVX_P2P_FENCE))
		return op_bad(t, "dvx_p2p_post", "flags %#x: DVX_P2P_FENCE only (a reset is dvx_p2p_reset_signal()'s)",
			      n->flags);
	return lane_post(t, l, x, n, timeout_ns, tk, "dvx_p2p_post");
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

	if (!l)
		return lane_bad(t, "dvx_p2p_reset_signal", peer);
	if (!sig)
		return op_bad(t, "dvx_p2p_reset_signal", "no signal buffer");
	if (l->main.d.sq.wq.max_inline < sizeof(uint64_t))
		return -EOPNOTSUPP;
	start = clock_ns(t);
	/* drain first: the zero must land after every earlier update on this lane */
	err = dvx_p2p_q_drain(&l->main, timeout_ns);
	if (err)
		return err;
	err = lane_post(t, l, NULL, &n, timeout_ns, &tk, "dvx_p2p_reset_signal");
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

int dvx_p2p_quiet(struct dvx_p2p *t, uint64_t timeout_ns, struct dvx_p2p_wait_report *rep)
{
	uint64_t start, used;
	uint32_t c;
	int err;

	if (!t || !t->lanes || !t->nlanes)
		return -EINVAL;
	start = clock_ns(t);
	for (c = 0; c < t->nlanes; c++) {
		used = clock_ns(t) - start;
		err = dvx_p2p_flush(t, c, used >= timeout_ns ? 0 : timeout_ns - used, rep);
		if (err)
			return err;
	}
	return 0;
}

/* dvx_p2p_op_make_get() refused @x: which part */
static int get_bad(struct dvx_p2p *t, const struct dvx_p2p_rxfer *x)
{
	const char *op = "dvx_p2p_get";

	if (!x || !x->src || !x->dst)
		return op_bad(t, op, "no get, or no source or no destination buffer");
	if (!x->len)
		return op_bad(t, op, "len 0: a get reads at least a byte");
	if (!dvx_p2p_in_bounds(x->soff, x->len, x->src->len))
		return op_bad(t, op, "[%llu, +%llu) outside the peer's buffer of %llu bytes",
			      (unsigned long long)x->soff, (unsigned long long)x->len,
			      (unsigned long long)x->src->len);
	if (!dvx_p2p_in_bounds(x->doff, x->len, x->dst->len))
		return op_bad(t, op, "[%llu, +%llu) outside the destination of %llu bytes",
			      (unsigned long long)x->doff, (unsigned long long)x->len,
			      (unsigned long long)x->dst->len);
	return op_bad(t, op, "a buffer without a key for the lane's NIC (registered on it?)");
}

int dvx_p2p_get(struct dvx_p2p *t, int peer, uint32_t channel, const struct dvx_p2p_rxfer *x,
		uint64_t timeout_ns, struct dvx_p2p_ticket *tk)
{
	struct dvx_p2p_lane *l = lane_of(t, peer, channel);
	struct dvx_p2p_op op;
	int err;

	if (!l)
		return lane_bad(t, "dvx_p2p_get", peer);
	memset(&op, 0, sizeof(op));
	if (!x)
		return get_bad(t, x);
	err = dvx_p2p_op_make_get(l->nic, x, &op);
	if (err == -EPERM)
		return dvx_hal_diag_set(&t->nics[0]->diag, -EPERM, DVX_DIAG_ARG, "dvx_p2p_get",
					"the peer's buffer was registered without remote read: nothing posted");
	if (err)
		return get_bad(t, x);
	return lane_post_op(l, &op, timeout_ns, tk);
}

/* dvx_p2p_op_make_amo() refused @a: which part */
static int amo_bad(struct dvx_p2p *t, const struct dvx_p2p_amo *a)
{
	const char *op = "dvx_p2p_amo";
	uint32_t fetch;

	if (!a || !a->dst)
		return op_bad(t, op, "no operation, or no target buffer");
	if (a->op > DVX_P2P_AMO_CSWAP)
		return op_bad(t, op, "op %u: DVX_P2P_AMO_SET, _ADD, _FADD or _CSWAP", a->op);
	if (!dvx_p2p_word_ok(a->dst->addr, a->doff, a->dst->len))
		return op_bad(t, op, "target word at %llu: outside its buffer or not 8-byte aligned",
			      (unsigned long long)a->doff);
	fetch = a->op == DVX_P2P_AMO_FADD || a->op == DVX_P2P_AMO_CSWAP;
	if (fetch && !a->res)
		return op_bad(t, op, "a fetching operation without a result buffer");
	if (!fetch && a->res)
		return op_bad(t, op, "a result buffer for an operation that returns nothing");
	if (fetch && !dvx_p2p_word_ok(a->res->addr, a->resoff, a->res->len))
		return op_bad(t, op, "result word at %llu: outside its buffer or not 8-byte aligned",
			      (unsigned long long)a->resoff);
	return op_bad(t, op, "a buffer without a key for the lane's NIC (registered on it?)");
}

int dvx_p2p_amo(struct dvx_p2p *t, int peer, uint32_t channel, const struct dvx_p2p_amo *a,
		uint64_t timeout_ns, struct dvx_p2p_ticket *tk)
{
	struct dvx_p2p_lane *l = lane_of(t, peer, channel);
	struct dvx_p2p_op op;

	if (!l)
		return lane_bad(t, "dvx_p2p_amo", peer);
	memset(&op, 0, sizeof(op));
	if (!a || dvx_p2p_op_make_amo(l->nic, a, l->sink_lkey, &op))
		return amo_bad(t, a);
	if (op.kind == DVX_P2P_K_SET && l->main.d.sq.wq.max_inline < sizeof(uint64_t))
		return -EOPNOTSUPP;
	return lane_post_op(l, &op, timeout_ns, tk);
}

int dvx_p2p_amo_of(struct dvx_p2p *t, int peer, uint32_t channel, const struct dvx_p2p_amo *a,
		   uint32_t kind, uint64_t timeout_ns, struct dvx_p2p_ticket *tk)
{
	static const char *const names[] = { "dvx_p2p_put_value", "dvx_p2p_add",
					     "dvx_p2p_fetch_add", "dvx_p2p_compare_swap" };

	if (kind > DVX_P2P_AMO_CSWAP)
		return op_bad(t, "dvx_p2p_amo_of", "kind %u: DVX_P2P_AMO_SET, _ADD, _FADD or _CSWAP",
			      kind);
	if (a && a->op != kind)
		return op_bad(t, names[kind], "op %u: this call posts op %u only", a->op, kind);
	return dvx_p2p_amo(t, peer, channel, a, timeout_ns, tk);
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
