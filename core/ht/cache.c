// SPDX-License-Identifier: MIT
/*
 * core/ht/cache.c - the per-peer transport cache (dvx/ht/cache.h): one IB transport
 * per peer in slices of the caller's regions, made on first use or to answer a peer's
 * handshake, finished in reverse order of making (docs/ht.md "The per-peer cache").
 */
#include "ht_priv.h"

#define HT_CACHE_MAGIC 0x48434854u	/* "THCH" */
#define HT_CACHE_TICK 16

struct ht_cache_peer {
	struct dvx_ht_ib ib;
};

struct dvx_ht_cache_state {
	uint32_t magic;
	int32_t rank;
	int32_t nranks;
	uint32_t bs_live;
	struct dvx_ht_cache_cfg cfg;	/* tmpl normalised; tick_every filled */
	struct dvx_bootstrap bs;	/* the duplicate the handshakes run in */
	uint64_t st_stride, rings_stride, data_stride;	/* one transport's regions */
	uint8_t *tstate, *rings, *data;
	struct ht_cache_peer *peers;	/* by rank (this rank's entry unused) */
	int32_t *order;		/* ranks in the order their transports were made */
	uint32_t n;		/* transports alive */
	uint32_t next;		/* the next peer to look at for a handshake */
	struct dvx_ht_cache_stats cnt;
};

/* the cache's layout: its header, the peer table, the order, each transport's state */
struct cache_layout {
	uint64_t o_peers, o_order, o_tstate, state_bytes;
	struct dvx_mem_req ts, tr, td;
};

static int cache_layout(const struct dvx_ht_cache_cfg *cfg, struct dvx_ht_ib_cfg *tmpl,
			struct cache_layout *l)
{
	struct dvx_ht_ib_cfg sz;
	uint64_t n, o;
	int err;

	if (!cfg || !cfg->bs || dvx_bootstrap_nranks(cfg->bs) < 2)
		return -EINVAL;
	n = (uint64_t)dvx_bootstrap_nranks(cfg->bs);
	/* room for either mode: the copy-based one has the staging besides */
	sz = cfg->tmpl;
	sz.mode = DVX_HT_CB;
	err = dvx_ht_ib_cfg_norm(&sz, tmpl, 0);
	if (err)
		return err;
	err = dvx_ht_ib_mem_req(tmpl, &l->ts, &l->tr, &l->td);
	if (err)
		return err;
	o = dvx_ht_align(sizeof(struct dvx_ht_cache_state), 64);
	l->o_peers = o;
	o = dvx_ht_align(o + n * sizeof(struct ht_cache_peer), 64);
	l->o_order = o;
	o = dvx_ht_align(o + n * sizeof(int32_t), 64);
	l->o_tstate = o;
	l->ts.bytes = dvx_ht_align(l->ts.bytes, 64);
	l->state_bytes = o + (n - 1) * l->ts.bytes;
	return 0;
}

int dvx_ht_cache_mem_req(const struct dvx_ht_cache_cfg *cfg, struct dvx_mem_req *state,
			 struct dvx_mem_req *rings, struct dvx_mem_req *data)
{
	struct dvx_ht_ib_cfg tmpl;
	struct cache_layout l;
	uint64_t peers;
	int err;

	if (!state || !rings || !data)
		return -EINVAL;
	err = cache_layout(cfg, &tmpl, &l);
	if (err)
		return err;
	peers = (uint64_t)dvx_bootstrap_nranks(cfg->bs) - 1;
	*state = (struct dvx_mem_req){ l.state_bytes, 64 };
	*rings = (struct dvx_mem_req){ peers * l.tr.bytes, l.tr.align };
	*data = (struct dvx_mem_req){ peers * l.td.bytes, l.td.align };
	return 0;
}

static int cache_valid(const struct dvx_ht_cache *c)
{
	return c && c->live == DVX_LIVE && c->st && c->st->magic == HT_CACHE_MAGIC;
}

int dvx_ht_cache_init(struct dvx_ht_cache *c, const struct dvx_ht_cache_cfg *cfg, void *state,
		      uint64_t state_len, void *rings, uint64_t rings_len, void *data,
		      uint64_t data_len)
{
	struct dvx_ht_cache_state *st = state;
	struct dvx_ht_ib_cfg tmpl;
	struct cache_layout l;
	uint64_t peers;
	uint8_t *s8 = state;
	int err;

	if (!c)
		return -EINVAL;
	if (c->live == DVX_LIVE)
		return -EBUSY;
	err = cache_layout(cfg, &tmpl, &l);
	if (err)
		return err;
	if (!cfg->tmpl.nic || cfg->tmpl.nic->open != DVX_LIVE || cfg->rsvd)
		return -EINVAL;
	peers = (uint64_t)dvx_bootstrap_nranks(cfg->bs) - 1;
	{
		/* each transport zeroes its own slices when it is made */
		const struct dvx_ht_region r[3] = {
			{ state, state_len, l.state_bytes, 64, 1 },
			{ rings, rings_len, peers * l.tr.bytes, l.tr.align, 0 },
			{ data, data_len, peers * l.td.bytes, l.td.align, 0 },
		};

		err = dvx_ht_regions_take(r, 3);
		if (err)
			return err;
	}
	st->magic = HT_CACHE_MAGIC;
	st->rank = dvx_bootstrap_rank(cfg->bs);
	st->nranks = dvx_bootstrap_nranks(cfg->bs);
	st->cfg = *cfg;
	st->cfg.tmpl = cfg->tmpl;
	if (!st->cfg.tick_every)
		st->cfg.tick_every = HT_CACHE_TICK;
	st->st_stride = l.ts.bytes;
	st->rings_stride = l.tr.bytes;
	st->data_stride = l.td.bytes;
	st->tstate = s8 + l.o_tstate;
	st->rings = rings;
	st->data = data;
	st->peers = (struct ht_cache_peer *)(void *)(s8 + l.o_peers);
	st->order = (int32_t *)(void *)(s8 + l.o_order);
	/* the handshakes talk in a tag space of their own */
	err = dvx_bootstrap_dup(cfg->bs, &st->bs);
	if (err) {
		st->magic = 0;
		memset(c, 0, sizeof(*c));
		return err;
	}
	st->bs_live = 1;
	c->st = st;
	c->live = DVX_LIVE;
	return 0;
}

static uint32_t slice_of(const struct dvx_ht_cache_state *st, int peer)
{
	return (uint32_t)(peer < st->rank ? peer : peer - 1);
}

/* make @peer's transport in @mode, answering @hello when the peer asked first */
static void cache_turn(struct dvx_ht_cache *c, int looks);

/* the cache's turn inside one of its transports' progress (struct ht_idle) */
static void cache_idle(void *arg)
{
	cache_turn(arg, 1);
}

static int cache_make(struct dvx_ht_cache *c, int peer, uint32_t mode,
		      const struct ht_hello *hello)
{
	struct dvx_ht_cache_state *st = c->st;
	struct dvx_ht_ib_cfg tc = st->cfg.tmpl;
	uint32_t i = slice_of(st, peer);
	const struct ht_idle idle = { cache_idle, c, st->cfg.tick_every };
	int err;

	tc.bs = &st->bs;
	tc.peer = peer;
	tc.tag = DVX_HT_CACHE_TAG;
	tc.mode = mode;
	err = dvx_ht_ib_setup(&st->peers[peer].ib, &tc, st->tstate + i * st->st_stride,
			      st->st_stride, st->rings + i * st->rings_stride, st->rings_stride,
			      st->data + i * st->data_stride, st->data_stride, &idle, hello);
	if (err)
		return err;
	st->order[st->n++] = peer;
	return 0;
}

int dvx_ht_cache_get(struct dvx_ht_cache *c, int peer, uint32_t mode, struct dvx_ht **t)
{
	struct dvx_ht_cache_state *st;
	struct dvx_ht_ib *ib;
	int err;

	if (!cache_valid(c) || !t || (mode != DVX_HT_ZC && mode != DVX_HT_CB))
		return -EINVAL;
	st = c->st;
	if (peer < 0 || peer >= st->nranks || peer == st->rank)
		return -EINVAL;
	ib = &st->peers[peer].ib;
	if (ib->live == DVX_LIVE) {
		if (ib->ht.mode != mode) {
			st->cnt.refused++;	/* one mode per peer for the cache's life */
			return -EEXIST;
		}
		st->cnt.hits++;
		*t = &ib->ht;
		return 0;
	}
	err = cache_make(c, peer, mode, NULL);
	if (err)
		return err;
	st->cnt.asked++;
	*t = &ib->ht;
	return 0;
}

struct dvx_ht *dvx_ht_cache_lookup(const struct dvx_ht_cache *c, int peer)
{
	const struct dvx_ht_cache_state *st;

	if (!cache_valid(c))
		return NULL;
	st = c->st;
	if (peer < 0 || peer >= st->nranks || st->peers[peer].ib.live != DVX_LIVE)
		return NULL;
	return &st->peers[peer].ib.ht;
}

/*
 * Look at one peer that has no transport here for its HELLO; if one came, make the
 * transport in the mode the peer asked for and let it answer. A peer whose HELLO
 * cannot be answered (no room, a failed create) is told so.
 */
static void cache_answer(struct dvx_ht_cache *c, int peer)
{
	struct dvx_ht_cache_state *st = c->st;
	struct ht_hello raw, m;
	int err;

	err = dvx_bootstrap_recv(&st->bs, peer, DVX_HT_CACHE_TAG, &raw, sizeof(raw),
				 HT_BS_TRY_NS);
	if (err || dvx_ht_hello_decode(&raw, &m) || m.kind != HT_HELLO)
		return;	/* nothing yet, or not a handshake's opening: dropped */
	err = (m.mode == DVX_HT_ZC || m.mode == DVX_HT_CB) ? cache_make(c, peer, m.mode, &raw) :
							      -EPROTO;
	if (!err) {
		st->cnt.answered++;
		return;
	}
	memset(&m, 0, sizeof(m));
	m.magic = dvx_le32(HT_HELLO_MAGIC);
	m.version = HT_HELLO_VERSION;
	m.kind = HT_FAIL;
	m.err = (int32_t)dvx_le32((uint32_t)err);
	dvx_bootstrap_send(&st->bs, peer, DVX_HT_CACHE_TAG, &m, sizeof(m), HT_BS_TRY_NS);
}

/* move the handshakes in progress, then answer up to @looks peers */
static void cache_turn(struct dvx_ht_cache *c, int looks)
{
	struct dvx_ht_cache_state *st = c->st;
	uint32_t i;

	for (i = 0; i < st->n; i++) {
		struct dvx_ht_ib_state *ts = st->peers[st->order[i]].ib.st;

		if (ts->hs != HT_HS_CONNECTED && ts->hs != HT_HS_FAILED)
			dvx_ht_hs_step(ts);
	}
	while (looks-- > 0) {
		int p = (int)(st->next++ % (uint32_t)st->nranks);

		if (p != st->rank && st->peers[p].ib.live != DVX_LIVE)
			cache_answer(c, p);
	}
}

int dvx_ht_cache_progress(struct dvx_ht_cache *c)
{
	struct dvx_ht_cache_state *st;
	uint32_t i;

	if (!cache_valid(c))
		return -EINVAL;
	st = c->st;
	cache_turn(c, st->nranks);
	for (i = 0; i < st->n; i++)
		dvx_ht_progress(&st->peers[st->order[i]].ib.ht);
	return 0;
}

void dvx_ht_cache_get_stats(const struct dvx_ht_cache *c, struct dvx_ht_cache_stats *s)
{
	if (!s)
		return;
	memset(s, 0, sizeof(*s));
	if (!cache_valid(c))
		return;
	*s = c->st->cnt;
	s->live = c->st->n;
}

int dvx_ht_cache_fini(struct dvx_ht_cache *c)
{
	struct dvx_ht_cache_state *st;
	int first = 0, err;

	if (!cache_valid(c))
		return -EINVAL;
	st = c->st;
	/* the last made first, as every unwind in dvx */
	while (st->n) {
		err = dvx_ht_ib_fini(&st->peers[st->order[--st->n]].ib);
		if (err && !first)
			first = err;
	}
	if (st->bs_live)
		dvx_bootstrap_fini(&st->bs);
	st->magic = 0;
	memset(c, 0, sizeof(*c));
	return first;
}
