// SPDX-License-Identifier: MIT
/*
 * core/win/ops.c - the window's operations from host threads (dvx/win/win.h): IB peers
 * through the P2P host engine on the window's channel, NVL peers queued on the
 * configuration's stream (a copy engine's copy, a stream-ordered store or add), this
 * rank's words read with acquire loads where the CPU reaches them and through the GPU
 * otherwise. The kernels' twins are dvx/win/dev.cuh; the address arithmetic is
 * dvx/win/layout.h for both.
 */
#include <errno.h>
#include <string.h>

#include <dvx/hal/hal.h>
#include <dvx/nvl/ops.h>
#include <dvx/win/win.h>

#include "win_priv.h"

DVX_STATIC_ASSERT(DVX_WIN_LL_MAX == DVX_NVL_LL_MAX, "the window's threshold is the NVL path's");

/* the peer's entry, or NULL (not exchanged, out of range, self) */
static const struct dvx_win_dev_peer *peer_of(const struct dvx_win *w, int p)
{
	if (!w || w->live != DVX_WIN_LIVE || !w->exchanged || p < 0 || p >= w->nranks ||
	    p == w->rank)
		return NULL;
	return &w->peers[p];
}

static int ok(const struct dvx_win *w)
{
	return w && w->live == DVX_WIN_LIVE && w->exchanged;
}

/* what a refused call names in the window's diagnostic */
enum { K_NONE, K_SIG, K_CTR, K_BAR };
#define NO_PEER (-1)

/*
 * A refused call: -EINVAL, with the first thing wrong in @w's diagnostic when @w is a
 * live window: not exchanged yet, @peer (unless NO_PEER) not another rank, @id not one
 * of the window's ids of @kind, else @other.
 */
static int refuse(struct dvx_win *w, const char *op, int peer, uint32_t id, int kind,
		  const char *other)
{
	static const char *const kname[] = { "", "signal", "counter", "barrier" };
	uint32_t n;

	if (!w || w->live != DVX_WIN_LIVE)
		return -EINVAL;	/* not a window: nowhere to say so */
	n = kind == K_SIG ? w->geom.signals : kind == K_CTR ? w->geom.counters : w->geom.barriers;
	if (!w->exchanged)
		return dvx_hal_diag_set(&w->diag, -EINVAL, DVX_DIAG_STATE, op,
					"exchange the window first (dvx_win_exchange())");
	if (peer != NO_PEER && (peer < 0 || peer >= w->nranks || peer == w->rank))
		return dvx_hal_diag_set(&w->diag, -EINVAL, DVX_DIAG_ARG, op,
					"peer %d: another rank of the %d", peer, w->nranks);
	if (kind != K_NONE && id >= n)
		return dvx_hal_diag_set(&w->diag, -EINVAL, DVX_DIAG_ARG, op,
					"%s id %u: the window has %u", kname[kind], id, n);
	return dvx_hal_diag_set(&w->diag, -EINVAL, DVX_DIAG_ARG, op, "%s",
				other ? other : "a bad argument");
}

static uint64_t *nvl_word(const struct dvx_win *w, uint64_t off)
{
	return (uint64_t *)(void *)((uint8_t *)w->mem.nvl + off);
}

static uint64_t *ib_word(const struct dvx_win *w, uint64_t off)
{
	return (uint64_t *)(void *)((uint8_t *)w->mem.ib + off);
}

/* one of this rank's words: an acquire load, or an 8-byte copy from the GPU */
static int rd(const struct dvx_win *w, const uint64_t *word, uint64_t *v)
{
	if (dvx_win_cpu_at(w, word)) {
		*v = __atomic_load_n(word, __ATOMIC_ACQUIRE);
		return 0;
	}
	return dvx_gpu_memcpy_dtoh(w->mp->gpu, v, (uint64_t)(uintptr_t)word, 8);
}

static uint64_t now(const struct dvx_win *w)
{
	return dvx_hal_now_ns(w->mp->hal);
}

/* the lane the window's traffic to IB peer @p takes */
static struct dvx_p2p_lane *lane(const struct dvx_win *w, int p)
{
	const struct dvx_p2p *t = &w->mp->ib;
	int pi;

	if (!w->mp->ib_live || !t->nlanes || p < 0 || p >= t->nranks)
		return NULL;
	pi = t->peer_idx[p];
	return pi < 0 ? NULL : &t->lanes[(uint32_t)pi * t->nlanes + w->cfg.channel % t->nlanes];
}

/* let the NICs make progress (a stepped backend needs it) */
static void progress(const struct dvx_win *w)
{
	uint32_t i;

	if (!w->mp->ib_live)
		return;
	for (i = 0; i < w->mp->ib.nnics; i++)
		if (w->mp->ib.nics[i])
			dvx_hal_nic_progress(w->mp->ib.nics[i]);
}

/* what a wait looks at */
struct look {
	int kind;		/* LOOK_* */
	int peer;		/* LOOK_ONE: the word's peer (IB: its lane is watched) */
	uint32_t id;
	const uint64_t *word;	/* LOOK_ONE */
};

enum { LOOK_ONE, LOOK_SIG_SUM, LOOK_BAR_SUM };

static int look_value(const struct dvx_win *w, const struct look *k, uint64_t *v)
{
	const struct dvx_win_geom *g = &w->geom;
	uint64_t sum = 0, x;
	uint32_t r;
	int err;

	if (k->kind == LOOK_ONE)
		return rd(w, k->word, v);
	if (k->kind == LOOK_BAR_SUM) {
		if (w->mem.nvl) {
			err = rd(w, nvl_word(w, dvx_win_nvl_bar_off(g, k->id)), &x);
			if (err)
				return err;
			sum += x;
		}
		if (w->mem.ib) {
			err = rd(w, ib_word(w, dvx_win_ib_bar_off(g, k->id)), &x);
			if (err)
				return err;
			sum += x;
		}
		*v = sum;
		return 0;
	}
	/* a signal's sum over every peer's row: only rows of real peers (an NVL row of a
	 * domain member reached over IB stays zero) */
	for (r = 0; w->mem.nvl && r + 1 < (uint32_t)w->mp->topo.nnvl; r++) {
		err = rd(w, nvl_word(w, dvx_win_nvl_sig_off(g, r, k->id)), &x);
		if (err)
			return err;
		sum += x;
	}
	for (r = 0; w->mem.ib && r < (uint32_t)w->mp->topo.nib; r++) {
		err = rd(w, ib_word(w, dvx_win_ib_sig_off(g, r, k->id)), &x);
		if (err)
			return err;
		sum += x;
	}
	*v = sum;
	return 0;
}

/* the IB lane's first error (and its completions consumed), 0 if healthy or not IB */
static int lane_err(const struct dvx_win *w, int p)
{
	struct dvx_p2p_lane *l;
	int e;

	if (p < 0 || w->peers[p].kind != DVX_MP_IB)
		return 0;
	l = lane(w, p);
	if (!l)
		return 0;
	/* consumed completions free ring room and bring errors to light (the
	 * companion's too: counters); an unused companion polls as nothing */
	dvx_p2p_q_poll(&l->main);
	dvx_p2p_q_poll(&l->comp);
	e = dvx_p2p_q_err(&l->main.s);
	return e ? e : dvx_p2p_q_err(&l->comp.s);
}

static int wait_look(struct dvx_win *w, const struct look *k, uint32_t cmp, uint64_t value,
		     uint64_t timeout_ns, struct dvx_p2p_wait_report *rep)
{
	uint64_t v = 0, deadline = 0, t;
	int err = 0, holds;

	if (dvx_p2p_cmp_holds(cmp, 0, 0) < 0)
		return refuse(w, "dvx_win_wait", NO_PEER, 0, K_NONE, "cmp is not a DVX_CMP_*");
	for (;;) {
		err = look_value(w, k, &v);
		if (err)
			break;
		holds = dvx_p2p_cmp_holds(cmp, v, value);
		if (holds)
			break;
		err = k->kind == LOOK_ONE ? lane_err(w, k->peer) : 0;
		if (err)
			break;
		t = now(w);
		if (!deadline) {
			deadline = timeout_ns > UINT64_MAX - t ? UINT64_MAX : t + timeout_ns;
		} else if (t >= deadline) {
			err = look_value(w, k, &v);
			if (!err && !dvx_p2p_cmp_holds(cmp, v, value))
				err = -ETIMEDOUT;
			break;
		}
		progress(w);
		dvx_cpu_relax();
	}
	if (rep) {
		memset(rep, 0, sizeof(*rep));
		rep->err = err;
		rep->peer = k->kind == LOOK_ONE ? k->peer : -1;
		rep->lane = w->cfg.channel;
		rep->cmp = cmp;
		rep->slot = k->word;
		rep->expected = value;
		rep->observed = v;
	}
	if (err == -ETIMEDOUT)
		dvx_hal_diag_set(&w->diag, err, DVX_DIAG_ARG, "win_wait",
				 "%s %u%s%d: %llu seen, waited for cmp %u of %llu",
				 k->kind == LOOK_BAR_SUM ? "barrier" :
				 k->kind == LOOK_SIG_SUM ? "signal (sum)" : "word",
				 k->id, k->kind == LOOK_ONE ? " of peer " : "",
				 k->kind == LOOK_ONE ? k->peer : -1, (unsigned long long)v, cmp,
				 (unsigned long long)value);
	return err;
}

static void *stream_of(const struct dvx_win *w)
{
	return w->cfg.stream;
}

/* ---- signals ------------------------------------------------------------------ */

static int signal_one(struct dvx_win *w, int p, uint32_t id, uint32_t op, uint64_t value)
{
	const struct dvx_win_dev_peer *e = peer_of(w, p);

	if (!e || id >= w->geom.signals || (op != DVX_WIN_SIG_SET && op != DVX_WIN_SIG_ADD))
		return refuse(w, "dvx_win_signal", p, id, K_SIG, "op: DVX_WIN_SIG_SET or DVX_WIN_SIG_ADD");
	if (e->kind == DVX_MP_NVL)
		return dvx_mp_nvl_signal(w->mp, stream_of(w),
					 e->nvl_base + dvx_win_nvl_sig_off(&w->geom, (uint32_t)e->row_at, id),
					 op, value);
	if (op == DVX_WIN_SIG_SET)
		return dvx_hal_diag_set(&w->diag, -ENOTSUP, DVX_DIAG_ARG, "win_signal",
					"SET on IB peer %d: a NIC only adds to a word", p);
	return dvx_p2p_signal(&w->mp->ib, p, w->cfg.channel,
			      &(struct dvx_p2p_notify){
				      &e->ib_region,
				      dvx_win_ib_sig_off(&w->geom, (uint32_t)e->row_at, id), value,
				      NULL, 0, DVX_P2P_FENCE },
			      w->cfg.timeout_ns, NULL);
}

int dvx_win_signal(struct dvx_win *w, int peer, uint32_t id, uint32_t op, uint64_t value)
{
	return signal_one(w, peer, id, op, value);
}

int dvx_win_signal_all(struct dvx_win *w, uint32_t id, uint32_t op, uint64_t value)
{
	int p, err;

	if (!ok(w) || id >= w->geom.signals || (op != DVX_WIN_SIG_SET && op != DVX_WIN_SIG_ADD))
		return refuse(w, "dvx_win_signal_all", NO_PEER, id, K_SIG, "op: DVX_WIN_SIG_SET or DVX_WIN_SIG_ADD");
	/* SET on any IB peer fails the whole call before anything is sent */
	if (op == DVX_WIN_SIG_SET && w->mp->topo.nib)
		return dvx_hal_diag_set(&w->diag, -ENOTSUP, DVX_DIAG_ARG, "win_signal_all",
					"SET with IB peers: a NIC only adds to a word");
	for (p = 0; p < w->nranks; p++) {
		if (p == w->rank)
			continue;
		err = signal_one(w, p, id, op, value);
		if (err)
			return err;
	}
	return 0;
}

/* this rank's word of signal @id for @p (its row here) */
static const uint64_t *sig_word(const struct dvx_win *w, const struct dvx_win_dev_peer *e,
				uint32_t id)
{
	if (e->kind == DVX_MP_NVL)
		return nvl_word(w, dvx_win_nvl_sig_off(&w->geom, (uint32_t)e->row, id));
	return ib_word(w, dvx_win_ib_sig_off(&w->geom, (uint32_t)e->row, id));
}

int dvx_win_read_signal(struct dvx_win *w, uint32_t id, uint64_t *v)
{
	struct look k = { LOOK_SIG_SUM, -1, id, NULL };

	if (!ok(w) || id >= w->geom.signals || !v)
		return refuse(w, "dvx_win_read_signal", NO_PEER, id, K_SIG, "v is NULL");
	return look_value(w, &k, v);
}

int dvx_win_read_signal_from(struct dvx_win *w, int peer, uint32_t id, uint64_t *v)
{
	const struct dvx_win_dev_peer *e = peer_of(w, peer);

	if (!e || id >= w->geom.signals || !v)
		return refuse(w, "dvx_win_read_signal_from", peer, id, K_SIG, "v is NULL");
	return rd(w, sig_word(w, e, id), v);
}

int dvx_win_wait_signal(struct dvx_win *w, uint32_t id, uint32_t cmp, uint64_t value,
			uint64_t timeout_ns, struct dvx_p2p_wait_report *rep)
{
	struct look k = { LOOK_SIG_SUM, -1, id, NULL };

	if (!ok(w) || id >= w->geom.signals)
		return refuse(w, "dvx_win_wait_signal", NO_PEER, id, K_SIG, NULL);
	return wait_look(w, &k, cmp, value, timeout_ns, rep);
}

int dvx_win_wait_signal_from(struct dvx_win *w, int peer, uint32_t id, uint32_t cmp,
			     uint64_t value, uint64_t timeout_ns, struct dvx_p2p_wait_report *rep)
{
	const struct dvx_win_dev_peer *e = peer_of(w, peer);
	struct look k;

	if (!e || id >= w->geom.signals)
		return refuse(w, "dvx_win_wait_signal_from", peer, id, K_SIG, NULL);
	k.kind = LOOK_ONE;
	k.peer = peer;
	k.id = id;
	k.word = sig_word(w, e, id);
	return wait_look(w, &k, cmp, value, timeout_ns, rep);
}

/* ---- counters ----------------------------------------------------------------- */

static uint64_t *ctr_word(const struct dvx_win *w, const struct dvx_win_dev_peer *e, uint32_t id)
{
	if (e->kind == DVX_MP_NVL)
		return nvl_word(w, dvx_win_nvl_ctr_off(&w->geom, (uint32_t)e->row, id));
	return ib_word(w, dvx_win_ib_ctr_off(&w->geom, (uint32_t)e->row, id));
}

int dvx_win_read_counter(struct dvx_win *w, int peer, uint32_t id, uint64_t *v)
{
	const struct dvx_win_dev_peer *e = peer_of(w, peer);

	if (!e || id >= w->geom.counters || !v)
		return refuse(w, "dvx_win_read_counter", peer, id, K_CTR, "v is NULL");
	return rd(w, ctr_word(w, e, id), v);
}

int dvx_win_wait_counter(struct dvx_win *w, int peer, uint32_t id, uint32_t cmp, uint64_t value,
			 uint64_t timeout_ns, struct dvx_p2p_wait_report *rep)
{
	const struct dvx_win_dev_peer *e = peer_of(w, peer);
	struct look k;

	if (!e || id >= w->geom.counters)
		return refuse(w, "dvx_win_wait_counter", peer, id, K_CTR, NULL);
	k.kind = LOOK_ONE;
	k.peer = peer;
	k.id = id;
	k.word = ctr_word(w, e, id);
	return wait_look(w, &k, cmp, value, timeout_ns, rep);
}

int dvx_win_reset_counter(struct dvx_win *w, int peer, uint32_t id)
{
	const struct dvx_win_dev_peer *e = peer_of(w, peer);
	static const uint64_t zero;
	uint64_t *word;

	if (!e || id >= w->geom.counters)
		return refuse(w, "dvx_win_reset_counter", peer, id, K_CTR, NULL);
	word = ctr_word(w, e, id);
	if (dvx_win_cpu_at(w, word)) {
		__atomic_store_n(word, 0, __ATOMIC_RELEASE);
		return 0;
	}
	return dvx_gpu_memcpy_htod(w->mp->gpu, (uint64_t)(uintptr_t)word, &zero, 8);
}

/* ---- barriers ----------------------------------------------------------------- */

static int arrive(struct dvx_win *w, int p, uint32_t id)
{
	const struct dvx_win_dev_peer *e = &w->peers[p];

	if (e->kind == DVX_MP_NVL)
		return dvx_mp_nvl_signal(w->mp, stream_of(w),
					 e->nvl_base + dvx_win_nvl_bar_off(&w->geom, id),
					 DVX_NVL_SIG_ADD, 1);
	return dvx_p2p_signal(&w->mp->ib, p, w->cfg.channel,
			      &(struct dvx_p2p_notify){ &e->ib_region,
							dvx_win_ib_bar_off(&w->geom, id), 1, NULL,
							0, DVX_P2P_FENCE },
			      w->cfg.timeout_ns, NULL);
}

static int bar_wait(struct dvx_win *w, uint32_t id, uint64_t add, uint64_t timeout_ns,
		    struct dvx_p2p_wait_report *rep)
{
	struct look k = { LOOK_BAR_SUM, -1, id, NULL };
	int err;

	/* the expectation moves whatever the wait says: the arrivals were sent, and a
	 * wait that timed out is waited for again by the same barrier's next call */
	w->bar_expected[id] += add;
	err = wait_look(w, &k, DVX_CMP_GE, w->bar_expected[id], timeout_ns, rep);
	return err;
}

int dvx_win_barrier(struct dvx_win *w, uint32_t id, uint64_t timeout_ns,
		    struct dvx_p2p_wait_report *rep)
{
	int p, err;

	if (!ok(w) || id >= w->geom.barriers)
		return refuse(w, "dvx_win_barrier", NO_PEER, id, K_BAR, NULL);
	for (p = 0; p < w->nranks; p++) {
		if (p == w->rank)
			continue;
		err = arrive(w, p, id);
		if (err)
			return err;
	}
	return bar_wait(w, id, (uint64_t)(w->nranks - 1), timeout_ns, rep);
}

int dvx_win_barrier_peer(struct dvx_win *w, int peer, uint32_t id, uint64_t timeout_ns,
			 struct dvx_p2p_wait_report *rep)
{
	int err;

	if (!peer_of(w, peer) || id >= w->geom.barriers)
		return refuse(w, "dvx_win_barrier_peer", peer, id, K_BAR, NULL);
	err = arrive(w, peer, id);
	if (err)
		return err;
	return bar_wait(w, id, 1, timeout_ns, rep);
}

/* ---- puts --------------------------------------------------------------------- */

/* the channel of the next host put to an IB peer: the window's channels in turn */
static uint32_t put_chan(struct dvx_win *w)
{
	uint32_t n = w->cfg.nchannels ? w->cfg.nchannels : 1;

	return w->cfg.channel + w->next_chan++ % n;
}

static int put_any(struct dvx_win *w, int p, const struct dvx_win_xfer *wx, int has_sig,
		   uint32_t sig, uint64_t value, int has_ctr, uint32_t ctr)
{
	const struct dvx_p2p_lbuf *src = wx->src;
	uint64_t soff = wx->soff, doff = wx->doff, len = wx->len;
	const struct dvx_win_dev_peer *e = peer_of(w, p);
	struct dvx_p2p *t = &w->mp->ib;
	struct dvx_p2p_notify n = { 0 };
	struct dvx_p2p_xfer x;
	int err;

	if (!e)
		return refuse(w, "dvx_win_put", p, 0, K_NONE, NULL);
	if (has_sig && sig >= w->geom.signals)
		return refuse(w, "dvx_win_put", p, sig, K_SIG, NULL);
	if (has_ctr && ctr >= w->geom.counters)
		return refuse(w, "dvx_win_put", p, ctr, K_CTR, NULL);
	if (!src || !len)
		return refuse(w, "dvx_win_put", p, 0, K_NONE, "no source, or length 0");
	if (!dvx_p2p_in_bounds(soff, len, src->len))
		return refuse(w, "dvx_win_put", p, 0, K_NONE, "[soff, soff + len) outside the source");
	if (!dvx_p2p_in_bounds(doff, len, e->data_len))
		return dvx_hal_diag_set(&w->diag, -EINVAL, DVX_DIAG_ARG, "dvx_win_put",
					"[%llu, +%llu) outside peer %d's buffer of %llu bytes",
					(unsigned long long)doff, (unsigned long long)len, p,
					(unsigned long long)e->data_len);
	if (e->kind == DVX_MP_NVL) {
		uint64_t dst = e->nvl_data + doff, s = (uint64_t)(uintptr_t)src->ptr + soff;

		if (!e->nvl_data)
			return refuse(w, "dvx_win_put", p, 0, K_NONE,
				      "no window buffer: none was given at the exchange");
		if (has_sig)
			err = dvx_mp_nvl_put_signal(w->mp, stream_of(w), dst, s, len,
						    e->nvl_base + dvx_win_nvl_sig_off(&w->geom,
										  (uint32_t)e->row_at, sig),
						    DVX_NVL_SIG_ADD, value);
		else
			err = dvx_mp_nvl_put(w->mp, stream_of(w), dst, s, len);
		if (!err && has_ctr)	/* after the copy on the same stream: visible */
			err = dvx_mp_nvl_signal(w->mp, stream_of(w),
						(uint64_t)(uintptr_t)ctr_word(w, e, ctr),
						DVX_NVL_SIG_ADD, 1);
		return err;
	}
	x = (struct dvx_p2p_xfer){ .src = src, .soff = soff, .dst = &e->ib_data, .doff = doff,
				   .len = len };
	if (has_sig) {
		n.sig = &e->ib_region;
		n.sigoff = dvx_win_ib_sig_off(&w->geom, (uint32_t)e->row_at, sig);
		n.add = value;
	}
	if (has_ctr) {
		n.ctr = &w->ib_lbuf;
		n.ctroff = dvx_win_ib_ctr_off(&w->geom, (uint32_t)e->row, ctr);
	}
	return dvx_p2p_post(t, p, put_chan(w), &x, &n, w->cfg.timeout_ns, NULL);
}

int dvx_win_put(struct dvx_win *w, int peer, const struct dvx_win_xfer *x)
{
	return x ? put_any(w, peer, x, 0, 0, 0, 0, 0) : -EINVAL;
}

int dvx_win_put_signal(struct dvx_win *w, int peer, const struct dvx_win_xfer *x, uint32_t sig,
		       uint64_t value)
{
	return x ? put_any(w, peer, x, 1, sig, value, 0, 0) : -EINVAL;
}

int dvx_win_put_counter(struct dvx_win *w, int peer, const struct dvx_win_xfer *x, uint32_t ctr)
{
	return x ? put_any(w, peer, x, 0, 0, 0, 1, ctr) : -EINVAL;
}

int dvx_win_put_signal_counter(struct dvx_win *w, int peer, const struct dvx_win_xfer *x,
			       uint32_t sig, uint64_t value, uint32_t ctr)
{
	return x ? put_any(w, peer, x, 1, sig, value, 1, ctr) : -EINVAL;
}

/* ---- send / recv -------------------------------------------------------------- */

/* the header of a slot: the message's bytes and the chunk's number in the pair's
 * stream (LE): a stale slot never passes for the chunk due */
struct slot_hdr {
	uint64_t bytes;
	uint64_t chunk;
};

static uint64_t nchunks(const struct dvx_win_geom *g, uint64_t n)
{
	uint64_t pay = g->slot_bytes - DVX_WIN_HDR;

	return n ? (n + pay - 1) / pay : 1;
}

static int sr_check(struct dvx_win *w, int p, const void *buf, uint64_t n, const char *op)
{
	if (!peer_of(w, p) || (n && !buf))
		return refuse(w, op, p, 0, K_NONE, "a length without a buffer");
	if (!w->geom.slots)
		return dvx_hal_diag_set(&w->diag, -EINVAL, DVX_DIAG_ARG, op,
					"the window has no send/recv slots");
	if (!dvx_win_cpu(w))
		return dvx_hal_diag_set(&w->diag, -ENOTSUP, DVX_DIAG_ARG, op,
					"host send/recv needs a window the CPU reaches (DVX_WIN_F_CPU); kernels use the device form");
	return 0;
}

int dvx_win_send(struct dvx_win *w, int peer, const void *src, uint64_t n, uint64_t timeout_ns,
		 struct dvx_p2p_wait_report *rep)
{
	const struct dvx_win_geom *g;
	const struct dvx_win_dev_peer *e;
	uint64_t c, nc, pay, *cursor;
	int err = sr_check(w, peer, src, n, "win_send");

	if (err)
		return err;
	g = &w->geom;
	e = &w->peers[peer];
	pay = g->slot_bytes - DVX_WIN_HDR;
	nc = nchunks(g, n);
	cursor = &w->cursors[2 * peer];
	for (c = 0; c < nc; c++) {
		uint64_t k = *cursor, len = n - c * pay < pay ? n - c * pay : pay;
		uint32_t slot = (uint32_t)(k % g->slots);
		struct slot_hdr h = { dvx_le64(n), dvx_le64(k) };
		struct look lk = { LOOK_ONE, peer, slot, NULL };
		uint64_t soff;
		uint8_t *dst;

		/* the slot is free once the receiver returned credit for its last use */
		lk.word = e->kind == DVX_MP_NVL ?
			  nvl_word(w, dvx_win_nvl_credit_off(g, (uint32_t)e->row)) :
			  ib_word(w, dvx_win_ib_credit_off(g, (uint32_t)e->row));
		if (k >= g->slots) {
			err = wait_look(w, &lk, DVX_CMP_GE, k + 1 - g->slots, timeout_ns, rep);
			if (err)
				return err;
		}
		/* the chunk goes into the peer's receive slot (NVL, through the mapping) or
		 * this rank's send slot (IB, put from there with the ready signal) */
		soff = dvx_win_ib_sslot_off(g, (uint32_t)e->row, slot);
		dst = e->kind == DVX_MP_NVL ?
		      (uint8_t *)(uintptr_t)(e->nvl_base +
					     dvx_win_nvl_slot_off(g, (uint32_t)e->row_at, slot)) :
		      (uint8_t *)w->mem.ib + soff;
		if (e->kind == DVX_MP_NVL && n <= dvx_win_ll_max(g)) {
			/* a small message: header and payload as flagged lines, no fence; the
			 * ready word counts the slot's use (relaxed: nobody waits for it) */
			err = dvx_nvl_ll_put_tagged(dst, n, src, n, dvx_win_ll_seq(k),
						    0, 1);
			if (!err)
				err = dvx_nvl_signal_relaxed((uint64_t *)(uintptr_t)(e->nvl_base +
										 dvx_win_nvl_ready_off(g, (uint32_t)e->row_at, slot)),
							     DVX_NVL_SIG_ADD, 1);
			if (err)
				return err;
			*cursor = k + 1;
			continue;
		}
		if (e->kind == DVX_MP_NVL)	/* the header as a flagged line */
			(void)dvx_nvl_ll_put_tagged(dst, n, NULL, 0, dvx_win_ll_seq(k), 0, 1);
		else
			memcpy(dst, &h, sizeof(h));
		if (len)
			memcpy(dst + DVX_WIN_HDR, (const uint8_t *)src + c * pay, len);
		if (e->kind == DVX_MP_NVL)
			err = dvx_nvl_signal((uint64_t *)(uintptr_t)(e->nvl_base +
								    dvx_win_nvl_ready_off(g, (uint32_t)e->row_at, slot)),
					     DVX_NVL_SIG_ADD, 1);
		else
			err = dvx_p2p_put_signal(&w->mp->ib, peer, w->cfg.channel,
						 &(struct dvx_p2p_xfer){
							 &w->ib_lbuf, soff, &e->ib_region,
							 dvx_win_ib_rslot_off(g,
									      (uint32_t)e->row_at,
									      slot),
							 DVX_WIN_HDR + len },
						 &(struct dvx_p2p_notify){
							 &e->ib_region,
							 dvx_win_ib_ready_off(g,
									      (uint32_t)e->row_at,
									      slot),
							 1, NULL, 0, 0 },
						 timeout_ns, NULL);
		if (err)
			return err;
		*cursor = k + 1;
	}
	return 0;
}

int dvx_win_recv(struct dvx_win *w, int peer, void *dst, uint64_t n, uint64_t timeout_ns,
		 struct dvx_p2p_wait_report *rep)
{
	const struct dvx_win_geom *g;
	const struct dvx_win_dev_peer *e;
	uint64_t c, nc, pay, *cursor;
	int err = sr_check(w, peer, dst, n, "win_recv");

	if (err)
		return err;
	g = &w->geom;
	e = &w->peers[peer];
	pay = g->slot_bytes - DVX_WIN_HDR;
	nc = nchunks(g, n);
	cursor = &w->cursors[2 * peer + 1];
	for (c = 0; c < nc; c++) {
		uint64_t k = *cursor, len = n - c * pay < pay ? n - c * pay : pay;
		uint32_t slot = (uint32_t)(k % g->slots);
		struct look lk = { LOOK_ONE, peer, slot, NULL };
		const uint8_t *s;
		struct slot_hdr h;

		if (e->kind == DVX_MP_NVL) {
			lk.word = nvl_word(w, dvx_win_nvl_ready_off(g, (uint32_t)e->row, slot));
			s = (const uint8_t *)nvl_word(w, dvx_win_nvl_slot_off(g, (uint32_t)e->row, slot));
		} else {
			lk.word = ib_word(w, dvx_win_ib_ready_off(g, (uint32_t)e->row, slot));
			s = (const uint8_t *)ib_word(w, dvx_win_ib_rslot_off(g, (uint32_t)e->row, slot));
		}
		if (e->kind == DVX_MP_NVL && n <= dvx_win_ll_max(g)) {
			/* a small message: the flagged lines themselves, no ready word */
			err = dvx_nvl_ll_get_tagged(s, n, dst, n, dvx_win_ll_seq(k), 0, 1,
						    timeout_ns);
			if (err == -EMSGSIZE)
				return dvx_hal_diag_set(&w->diag, -EMSGSIZE, DVX_DIAG_ARG, "win_recv",
							"peer %d sent another size than the %llu bytes asked for",
							peer, (unsigned long long)n);
			if (err)
				return dvx_hal_diag_set(&w->diag, err, DVX_DIAG_OS, "win_recv",
							"peer %d: no message of %llu bytes came",
							peer, (unsigned long long)n);
			len = 0;	/* taken */
		} else {
			/* the slot's k / slots + 1-th fill is chunk k */
			err = wait_look(w, &lk, DVX_CMP_GE, k / g->slots + 1, timeout_ns, rep);
			if (err)
				return err;
		}
		if (e->kind == DVX_MP_NVL && n > dvx_win_ll_max(g)) {
			/* the flagged header (a small message's relaxed ready word may come
			 * before it) */
			err = dvx_nvl_ll_wait_hdr(s, n, dvx_win_ll_seq(k),
						  timeout_ns < DVX_WIN_HDR_NS ? timeout_ns : DVX_WIN_HDR_NS);
			if (err == -EMSGSIZE)
				return dvx_hal_diag_set(&w->diag, -EMSGSIZE, DVX_DIAG_ARG, "win_recv",
							"peer %d sent another size than the %llu bytes asked for",
							peer, (unsigned long long)n);
			if (err)
				return dvx_hal_diag_set(&w->diag, -EPROTO, DVX_DIAG_ARG, "win_recv",
							"peer %d: chunk %llu's header is not there",
							peer, (unsigned long long)k);
		} else if (e->kind != DVX_MP_NVL) {
			memcpy(&h, s, sizeof(h));
			if (dvx_le64(h.bytes) != n)
				return dvx_hal_diag_set(&w->diag, -EMSGSIZE, DVX_DIAG_ARG, "win_recv",
							"peer %d sent %llu bytes, %llu were asked for", peer,
							(unsigned long long)dvx_le64(h.bytes),
							(unsigned long long)n);
			if (dvx_le64(h.chunk) != k)
				return dvx_hal_diag_set(&w->diag, -EPROTO, DVX_DIAG_ARG, "win_recv",
							"peer %d: chunk %llu where %llu was due", peer,
							(unsigned long long)dvx_le64(h.chunk),
							(unsigned long long)k);
		}
		if (len)
			memcpy((uint8_t *)dst + c * pay, s + DVX_WIN_HDR, len);
		/* the slot is read: its credit goes back to the sender */
		if (e->kind == DVX_MP_NVL)
			err = dvx_nvl_signal((uint64_t *)(uintptr_t)(e->nvl_base +
								    dvx_win_nvl_credit_off(g, (uint32_t)e->row_at)),
					     DVX_NVL_SIG_ADD, 1);
		else
			err = dvx_p2p_signal(&w->mp->ib, peer, w->cfg.channel,
					     &(struct dvx_p2p_notify){
						     &e->ib_region,
						     dvx_win_ib_credit_off(g, (uint32_t)e->row_at),
						     1, NULL, 0, 0 },
					     timeout_ns, NULL);
		if (err)
			return err;
		*cursor = k + 1;
	}
	return 0;
}

/* ---- gets, one-word operations, resets, flush ---------------------------------- */

/* an NVL operation the CPU does itself comes after the host work queued on the stream */
static int nvl_cpu_ready(struct dvx_win *w)
{
	if (!w->cfg.stream)
		return 0;
	return dvx_gpu_stream_wait(w->cfg.stream, w->cfg.timeout_ns);
}

int dvx_win_get(struct dvx_win *w, int peer, const struct dvx_win_rxfer *x)
{
	const struct dvx_win_dev_peer *e = peer_of(w, peer);
	struct dvx_p2p_ticket tk;
	uint8_t *dst;
	int err;

	if (!e)
		return refuse(w, "dvx_win_get", peer, 0, K_NONE, NULL);
	if (!x || !x->dst || !x->len)
		return refuse(w, "dvx_win_get", peer, 0, K_NONE, "no get, no destination, or length 0");
	if (!dvx_p2p_in_bounds(x->doff, x->len, x->dst->len))
		return refuse(w, "dvx_win_get", peer, 0, K_NONE,
			      "[doff, doff + len) outside the destination");
	if (!dvx_p2p_in_bounds(x->soff, x->len, e->data_len))
		return dvx_hal_diag_set(&w->diag, -EINVAL, DVX_DIAG_ARG, "dvx_win_get",
					"[%llu, +%llu) outside peer %d's buffer of %llu bytes",
					(unsigned long long)x->soff, (unsigned long long)x->len, peer,
					(unsigned long long)e->data_len);
	if (e->kind == DVX_MP_NVL) {
		if (!e->nvl_data)
			return refuse(w, "dvx_win_get", peer, 0, K_NONE,
				      "no window buffer: none was given at the exchange");
		dst = (uint8_t *)x->dst->ptr + x->doff;
		if (dvx_win_cpu(w)) {
			err = nvl_cpu_ready(w);
			if (!err)
				memcpy(dst, (const void *)(uintptr_t)(e->nvl_data + x->soff), x->len);
			return err;
		}
		if (!w->cfg.stream)
			return dvx_hal_diag_set(&w->diag, -ENOTSUP, DVX_DIAG_ARG, "dvx_win_get",
						"a host get from an NVL peer needs DVX_WIN_F_CPU or a stream (cfg.stream)");
		err = dvx_mp_nvl_put(w->mp, w->cfg.stream, (uint64_t)(uintptr_t)dst,
				     e->nvl_data + x->soff, x->len);
		return err ? err : dvx_gpu_stream_wait(w->cfg.stream, w->cfg.timeout_ns);
	}
	if (!(w->cfg.flags & DVX_WIN_F_READ))
		return dvx_hal_diag_set(&w->diag, -EPERM, DVX_DIAG_ARG, "dvx_win_get",
					"peer %d is an IB peer and the window has no remote read (DVX_WIN_F_READ)",
					peer);
	err = dvx_p2p_get(&w->mp->ib, peer, w->cfg.channel,
			  &(struct dvx_p2p_rxfer){ &e->ib_data, x->soff, x->dst, x->doff, x->len },
			  w->cfg.timeout_ns, &tk);
	if (err)
		return dvx_hal_diag_set(&w->diag, err, DVX_DIAG_ARG, "dvx_win_get", "%s",
					w->mp->ib.nics[0] ? w->mp->ib.nics[0]->diag.msg :
							    "the transport refused");
	return dvx_p2p_wait_local(&w->mp->ib, &tk, w->cfg.timeout_ns, NULL);
}

int dvx_win_amo(struct dvx_win *w, int peer, uint32_t op, const struct dvx_win_amo *a)
{
	const struct dvx_win_dev_peer *e = peer_of(w, peer);
	uint32_t fetch = op == DVX_WIN_AMO_FADD || op == DVX_WIN_AMO_CSWAP;
	struct dvx_p2p_ticket tk;
	int err;

	if (!e)
		return refuse(w, "dvx_win_amo", peer, 0, K_NONE, NULL);
	if (!a || op > DVX_WIN_AMO_CSWAP)
		return refuse(w, "dvx_win_amo", peer, 0, K_NONE, "no operation, or op not a DVX_WIN_AMO_*");
	if (!dvx_p2p_in_bounds(a->doff, 8, e->data_len) || (a->doff & 7u))
		return dvx_hal_diag_set(&w->diag, -EINVAL, DVX_DIAG_ARG, "dvx_win_amo",
					"word %llu: not 8-byte aligned or outside peer %d's buffer of %llu bytes",
					(unsigned long long)a->doff, peer,
					(unsigned long long)e->data_len);
	if (fetch != (a->res != NULL))
		return refuse(w, "dvx_win_amo", peer, 0, K_NONE,
			      "fetch_add and compare_swap take a result buffer, put_value and add none");
	if (fetch && (!dvx_p2p_in_bounds(a->resoff, 8, a->res->len) || (a->resoff & 7u) ||
		      (((uintptr_t)a->res->ptr + a->resoff) & 7u)))
		return refuse(w, "dvx_win_amo", peer, 0, K_NONE,
			      "the result word: not 8-byte aligned or outside its buffer");
	if (e->kind == DVX_MP_NVL) {
		uint64_t *word = (uint64_t *)(uintptr_t)(e->nvl_data + a->doff), old;

		if (!e->nvl_data)
			return refuse(w, "dvx_win_amo", peer, 0, K_NONE,
				      "no window buffer: none was given at the exchange");
		if (!dvx_win_cpu(w)) {
			if (fetch)
				return dvx_hal_diag_set(&w->diag, -ENOTSUP, DVX_DIAG_ARG, "dvx_win_amo",
							"a fetching operation on NVL peer %d from the host needs DVX_WIN_F_CPU; kernels use the device form",
							peer);
			return dvx_mp_nvl_signal(w->mp, w->cfg.stream, (uint64_t)(uintptr_t)word,
						 op == DVX_WIN_AMO_SET ? DVX_WIN_SIG_SET : DVX_WIN_SIG_ADD,
						 a->value);
		}
		err = nvl_cpu_ready(w);
		if (err)
			return err;
		switch (op) {
		case DVX_WIN_AMO_SET:
			__atomic_store_n(word, a->value, __ATOMIC_SEQ_CST);
			return 0;
		case DVX_WIN_AMO_ADD:
		case DVX_WIN_AMO_FADD:
			old = __atomic_fetch_add(word, a->value, __ATOMIC_SEQ_CST);
			break;
		default:
			old = a->compare;
			(void)__atomic_compare_exchange_n(word, &old, a->value, 0, __ATOMIC_SEQ_CST,
							  __ATOMIC_SEQ_CST);
			break;
		}
		if (fetch)
			__atomic_store_n((uint64_t *)(void *)((uint8_t *)a->res->ptr + a->resoff), old,
					 __ATOMIC_RELEASE);
		return 0;
	}
	err = dvx_p2p_amo(&w->mp->ib, peer, w->cfg.channel,
			  &(struct dvx_p2p_amo){ &e->ib_data, a->doff, op, a->value, a->compare,
						 a->res, a->resoff },
			  w->cfg.timeout_ns, fetch ? &tk : NULL);
	if (err || !fetch)
		return err;
	return dvx_p2p_wait_local(&w->mp->ib, &tk, w->cfg.timeout_ns, NULL);
}

int dvx_win_reset_peer_signal(struct dvx_win *w, int peer, uint32_t id)
{
	const struct dvx_win_dev_peer *e = peer_of(w, peer);
	int err;

	if (!e || id >= w->geom.signals)
		return refuse(w, "dvx_win_reset_peer_signal", peer, id, K_SIG, NULL);
	if (e->kind == DVX_MP_NVL) {
		uint64_t *word = (uint64_t *)(uintptr_t)(e->nvl_base +
							 dvx_win_nvl_sig_off(&w->geom, (uint32_t)e->row_at, id));

		if (dvx_win_cpu(w)) {
			err = nvl_cpu_ready(w);
			if (!err)
				__atomic_store_n(word, 0, __ATOMIC_RELEASE);
			return err;
		}
		err = dvx_mp_nvl_signal(w->mp, w->cfg.stream, (uint64_t)(uintptr_t)word,
					DVX_WIN_SIG_SET, 0);
		return err || !w->cfg.stream ? err : dvx_gpu_stream_wait(w->cfg.stream, w->cfg.timeout_ns);
	}
	return dvx_p2p_reset_signal(&w->mp->ib, peer, w->cfg.channel, &e->ib_region,
				    dvx_win_ib_sig_off(&w->geom, (uint32_t)e->row_at, id),
				    w->cfg.timeout_ns);
}

int dvx_win_flush(struct dvx_win *w, uint64_t timeout_ns, struct dvx_p2p_wait_report *rep)
{
	uint32_t c, n;
	uint64_t t0, spent;
	int err = 0;

	if (!ok(w))
		return refuse(w, "dvx_win_flush", NO_PEER, 0, K_NONE, NULL);
	n = w->cfg.nchannels ? w->cfg.nchannels : 1;
	t0 = now(w);
	if (w->mp->ib_live && w->mp->topo.nib)
		for (c = 0; !err && c < n && c < w->mp->ib.nlanes; c++) {
			spent = now(w) - t0;
			err = dvx_p2p_flush(&w->mp->ib, w->cfg.channel + c,
					    spent < timeout_ns ? timeout_ns - spent : 0, rep);
		}
	if (!err && w->cfg.stream && w->mp->gpu) {
		spent = now(w) - t0;
		err = dvx_gpu_stream_wait(w->cfg.stream, spent < timeout_ns ? timeout_ns - spent : 0);
	}
	if (err == -ETIMEDOUT)
		dvx_hal_diag_set(&w->diag, err, DVX_DIAG_ARG, "win_flush",
				 "the window's channels did not complete in time");
	return err;
}
