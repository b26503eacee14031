// SPDX-License-Identifier: MIT
/*
 * core/win/win.c - the host window: memory, layout, the exchange, the device window
 * (dvx/win/win.h, docs/win.md). Nothing here allocates: every table is in the
 * caller's regions.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <dvx/byteorder.h>
#include <dvx/hal/hal.h>
#include <dvx/win/win.h>

#include "win_priv.h"


static uint64_t up64(uint64_t x)
{
	return DVX_WIN_ALIGN_UP(x, 64u);
}

/* the host state's parts, in order */
struct state_lay {
	uint64_t peers, bar, cur, nvlp, datap, all, recs, total;
};

static void state_layout(const struct dvx_mp *mp, const struct dvx_win_geom *g, struct state_lay *l)
{
	uint64_t n = (uint64_t)mp->nranks, nnvl = (uint64_t)mp->topo.nnvl;

	l->peers = 0;
	l->bar = l->peers + n * DVX_WIN_PEER_BYTES;
	l->cur = l->bar + up64((uint64_t)g->barriers * 8u);
	l->nvlp = l->cur + up64(n * 16u);
	l->datap = l->nvlp + up64(nnvl * sizeof(struct dvx_nvl_peer));
	l->all = l->datap + up64(nnvl * sizeof(struct dvx_nvl_peer));
	l->recs = l->all + up64(n * sizeof(struct dvx_p2p_rbuf));
	l->total = l->recs + up64(n * sizeof(struct dvx_win_rec));
}

static int geom_of(const struct dvx_win_cfg *cfg, struct dvx_win_geom *g)
{
	if (!cfg)
		return -EINVAL;
	return dvx_win_geom_init(g, cfg->signals, cfg->counters, cfg->barriers, cfg->slots,
				 cfg->slot_bytes);
}

int dvx_win_mem_req(const struct dvx_mp *mp, const struct dvx_win_cfg *cfg,
		    struct dvx_mem_req req[DVX_WIN_MEM_N])
{
	struct dvx_win_geom g;
	struct state_lay l;

	if (!mp || !mp->infos || !req || geom_of(cfg, &g) ||
	    (cfg->flags & ~(uint32_t)WIN_FLAGS))
		return -EINVAL;
	state_layout(mp, &g, &l);
	req[DVX_WIN_MEM_STATE] = (struct dvx_mem_req){ l.total, 64 };
	req[DVX_WIN_MEM_NVL] = (struct dvx_mem_req){
		DVX_WIN_NVL_BYTES(mp->topo.nnvl, g.signals, g.counters, g.barriers, g.slots,
				  g.slot_bytes), 128 };
	req[DVX_WIN_MEM_IB] = (struct dvx_mem_req){
		DVX_WIN_IB_BYTES(mp->topo.nib, g.signals, g.counters, g.barriers, g.slots,
				 g.slot_bytes), 64 };
	/* kernels only: none for a transport without a GPU */
	req[DVX_WIN_MEM_DEV] = (struct dvx_mem_req){
		mp->gpu ? DVX_WIN_DEV_BYTES(mp->nranks, g.barriers) : 0, 64 };
	return 0;
}

int dvx_win_cpu(const struct dvx_win *w)
{
	return (w->cfg.flags & DVX_WIN_F_CPU) || !w->mp->gpu;
}

int dvx_win_cpu_at(const struct dvx_win *w, const void *p)
{
	const uint8_t *b = w->mem.ib;

	if (dvx_win_cpu(w))
		return 1;
	return (w->cfg.flags & DVX_WIN_F_IB_HOST) && b && (const uint8_t *)p >= b &&
	       (const uint8_t *)p < b + w->mem.ib_len;
}

/* zero [off, off + len) of a region: stores where the CPU reaches it, else copies */
static int zero_range(struct dvx_win *w, void *base, uint64_t off, uint64_t len)
{
	static const uint8_t zeros[4096];
	uint64_t done, n;
	int err;

	if (!len)
		return 0;
	if (dvx_win_cpu_at(w, (uint8_t *)base + off)) {
		memset((uint8_t *)base + off, 0, len);
		return 0;
	}
	for (done = 0; done < len; done += n) {
		n = len - done < sizeof(zeros) ? len - done : sizeof(zeros);
		err = dvx_gpu_memcpy_htod(w->mp->gpu, (uint64_t)(uintptr_t)base + off + done, zeros, n);
		if (err)
			return err;
	}
	return 0;
}

/* zero the words of a region (barriers, and each row up to its slots) */
static int zero_words(struct dvx_win *w)
{
	const struct dvx_win_geom *g = &w->geom;
	uint32_t r;
	int err = 0;

	if (w->mem.nvl) {
		err = zero_range(w, w->mem.nvl, 0, g->nvl_rows0);
		for (r = 0; !err && r + 1 < (uint32_t)w->mp->topo.nnvl; r++)
			err = zero_range(w, w->mem.nvl, g->nvl_rows0 + (uint64_t)r * g->nvl_row,
					 g->nvl_slots);
	}
	if (!err && w->mem.ib) {
		err = zero_range(w, w->mem.ib, 0, g->ib_rows0);
		for (r = 0; !err && r < (uint32_t)w->mp->topo.nib; r++)
			err = zero_range(w, w->mem.ib, g->ib_rows0 + (uint64_t)r * g->ib_row,
					 g->ib_rslots);
	}
	return err;
}

/* a refused init: the cause in @w's diagnostic (the rest of @w is untouched) */
static int __attribute__((format(printf, 2, 3))) bad_init(struct dvx_win *w, const char *fmt, ...)
{
	va_list ap;

	dvx_hal_diag_set(&w->diag, -EINVAL, DVX_DIAG_ARG, "dvx_win_init", NULL);
	va_start(ap, fmt);
	vsnprintf(w->diag.msg, sizeof(w->diag.msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int dvx_win_init(struct dvx_win *w, struct dvx_mp *mp, const struct dvx_win_cfg *cfg,
		 const struct dvx_win_regions *mem)
{
	struct dvx_mem_req req[DVX_WIN_MEM_N];
	struct dvx_win_geom g;
	struct state_lay l;
	uint8_t *st;
	int err, r;

	if (!w)
		return -EINVAL;
	if (w->live == DVX_WIN_LIVE)
		return -EBUSY;
	if (!mp || !mp->infos || !mem || !cfg)
		return bad_init(w, "mp, its topology, cfg or mem is missing");
	if (geom_of(cfg, &g))
		return bad_init(w, "geometry: ids up to %u each, slots up to %u, slot_bytes 128*k in [%u, %u] (0: no slots)",
				(unsigned)DVX_WIN_MAX_IDS, (unsigned)DVX_WIN_MAX_SLOTS,
				(unsigned)DVX_WIN_MIN_SLOT_BYTES, (unsigned)DVX_WIN_MAX_SLOT_BYTES);
	if (cfg->flags & ~(uint32_t)WIN_FLAGS)
		return bad_init(w, "unknown flags %#x",
				cfg->flags & ~(uint32_t)WIN_FLAGS);
	if (dvx_win_mem_req(mp, cfg, req))
		return bad_init(w, "the configuration");
	if (!mem->state || ((uintptr_t)mem->state & 63) || mem->state_len < req[DVX_WIN_MEM_STATE].bytes)
		return bad_init(w, "state region: NULL, under %llu bytes or not 64-byte aligned",
				(unsigned long long)req[DVX_WIN_MEM_STATE].bytes);
	if (req[DVX_WIN_MEM_NVL].bytes && !mp->gpu)
		return bad_init(w, "NVL peers without a GPU");
	if (req[DVX_WIN_MEM_NVL].bytes && (!mem->nvl || ((uintptr_t)mem->nvl & 127) || mem->nvl_len < req[DVX_WIN_MEM_NVL].bytes))
		return bad_init(w, "NVL region: NULL, under %llu bytes or not 128-byte aligned",
				(unsigned long long)req[DVX_WIN_MEM_NVL].bytes);
	if (req[DVX_WIN_MEM_IB].bytes && (!mem->ib || ((uintptr_t)mem->ib & 63) || mem->ib_len < req[DVX_WIN_MEM_IB].bytes))
		return bad_init(w, "IB region: NULL, under %llu bytes or not 64-byte aligned",
				(unsigned long long)req[DVX_WIN_MEM_IB].bytes);
	if (mem->dev && (!mp->gpu || (mem->dev & 63) ||
			 mem->dev_len < DVX_WIN_DEV_BYTES(mp->nranks, g.barriers)))
		return bad_init(w, "device region: without a GPU, under %llu bytes or not 64-byte aligned",
				(unsigned long long)DVX_WIN_DEV_BYTES(mp->nranks, g.barriers));
	if (req[DVX_WIN_MEM_IB].bytes && (!mp->ib_live || !mp->reg_live))
		return bad_init(w, "IB peers: connect the transport first (dvx_mp_connect())");
	if (req[DVX_WIN_MEM_IB].bytes && cfg->nchannels > mp->ib.nlanes)
		return bad_init(w, "nchannels %u: the transport has %u lanes per peer (a QP per channel)",
				cfg->nchannels, mp->ib.nlanes);

	memset(w, 0, sizeof(*w));
	w->rank = mp->rank;
	w->nranks = mp->nranks;
	w->geom = g;
	w->mp = mp;
	w->cfg = *cfg;
	w->mem = *mem;
	if (!req[DVX_WIN_MEM_NVL].bytes) {
		w->mem.nvl = NULL;
		w->mem.nvl_len = 0;
	}
	if (!req[DVX_WIN_MEM_IB].bytes) {
		w->mem.ib = NULL;
		w->mem.ib_len = 0;
	}
	state_layout(mp, &g, &l);
	st = mem->state;
	memset(st, 0, l.total);
	w->peers = (struct dvx_win_dev_peer *)(void *)(st + l.peers);
	w->bar_expected = (uint64_t *)(void *)(st + l.bar);
	w->cursors = (uint64_t *)(void *)(st + l.cur);
	w->nvl_peers = (struct dvx_nvl_peer *)(void *)(st + l.nvlp);
	w->data_peers = (struct dvx_nvl_peer *)(void *)(st + l.datap);
	w->all = (struct dvx_p2p_rbuf *)(void *)(st + l.all);
	w->recs = st + l.recs;
	for (r = 0; r < w->nranks; r++)
		dvx_win_dev_peer_clear(&w->peers[r]);

	if (mp->gpu) {
		err = dvx_gpu_make_current(mp->gpu);
		if (err)
			return dvx_hal_diag_set(&w->diag, err, DVX_DIAG_CUDA, "win_init",
						"the GPU's context");
	}
	err = zero_words(w);
	if (err)
		return dvx_hal_diag_set(&w->diag, err, DVX_DIAG_CUDA, "win_init",
					"zeroing the window's words");
	if (w->mem.ib) {
		/* IB signals and counters (fetch-adds) and the message receive slots (puts);
		 * nothing there is read remotely */
		err = dvx_mp_register(mp, w->mem.ib, req[DVX_WIN_MEM_IB].bytes,
				      DVX_MP_REG_WRITE | DVX_MP_REG_ATOMIC, &w->ib_lbuf);
		if (err)
			return dvx_hal_diag_set(&w->diag, err, DVX_DIAG_ARG, "win_init",
						"registering the IB region: %s", mp->diag.msg);
		w->ib_reg = 1;
	}
	w->live = DVX_WIN_LIVE;
	return 0;
}

/* rank @r's IB index in the view of rank @at (the IB peers of @at, in rank order) */
static int ib_index_at(const struct dvx_mp *mp, int at, int r)
{
	int q, n = 0;
	int force = !!(mp->cfg.flags & DVX_MP_F_FORCE_IB);

	for (q = 0; q < r; q++)
		if (q != at && (force || !dvx_mp_topo_nvl_edge(&mp->infos[at], &mp->infos[q])))
			n++;
	return n;
}

/*
 * Every rank's status of a step, agreed: the first failure any rank met, the same on
 * every rank (the ranks that did not fail say which rank did).
 */
static int agree(struct dvx_win *w, int err, const char *step)
{
	int32_t mine = (int32_t)dvx_le32((uint32_t)err), *all = (int32_t *)(void *)w->all;
	int r = 0, e;

	e = dvx_bootstrap_allgather(w->mp->cfg.bs, &mine, all, sizeof(mine), w->cfg.timeout_ns);
	if (e)
		return dvx_hal_diag_set(&w->diag, e, DVX_DIAG_OS, "win_exchange",
					"allgather of the statuses after %s", step);
	e = dvx_win_status_of(all, w->nranks, &r);
	if (e && r != w->rank)
		dvx_hal_diag_set(&w->diag, e, DVX_DIAG_ARG, "win_exchange", "rank %d failed %s",
				 r, step);
	return e;
}

static void undo_exchange(struct dvx_win *w, void *data)
{
	if (w->data_reg)
		(void)dvx_mp_deregister(w->mp, data);
	w->data_reg = 0;
	if (w->data_mapped)
		(void)dvx_nvl_unmap(&w->data_buf);
	w->data_mapped = 0;
	if (w->nvl_mapped)
		(void)dvx_nvl_unmap(&w->nvl_buf);
	w->nvl_mapped = 0;
}

int dvx_win_exchange(struct dvx_win *w, void *data, uint64_t data_len)
{
	struct dvx_mp *mp;
	struct dvx_win_rec mine, *recs;
	const struct dvx_mp_topo *t;
	uint64_t tmo;
	int r, err;

	if (!w || w->live != DVX_WIN_LIVE)
		return -EINVAL;
	if (w->exchanged)
		return dvx_hal_diag_set(&w->diag, -EALREADY, DVX_DIAG_ARG, "win_exchange",
					"a window is exchanged once");
	mp = w->mp;
	t = &mp->topo;
	tmo = w->cfg.timeout_ns;
	recs = w->recs;

	/* 1. every rank's arguments and configuration: good and the same, or nobody
	 * goes on (a rank's bad arguments fail every rank, after the allgather) */
	dvx_win_rec_make(w, data_len, !!data, &mine);
	if (!data != !data_len) {
		dvx_hal_diag_set(&w->diag, -EINVAL, DVX_DIAG_ARG, "win_exchange",
				 "a buffer needs a length and a length a buffer");
		mine.status = (int32_t)dvx_le32((uint32_t)-EINVAL);
	}
	err = dvx_bootstrap_allgather(mp->cfg.bs, &mine, recs, sizeof(mine), tmo);
	if (err)
		return dvx_hal_diag_set(&w->diag, err, DVX_DIAG_OS, "win_exchange",
					"allgather of the configurations");
	err = dvx_win_recs_check(recs, w->nranks, &mine, &r);
	if (err == DVX_WIN_REC_BAD_ARGS)
		return r == w->rank ? -EINVAL :
		       dvx_hal_diag_set(&w->diag, -EINVAL, DVX_DIAG_ARG, "win_exchange",
					"rank %d gave bad arguments", r);
	if (err == DVX_WIN_REC_CHANNELS)
		return dvx_hal_diag_set(&w->diag, -EINVAL, DVX_DIAG_ARG, "win_exchange",
					"rank %d's nchannels %u differs from rank %d's %u (the same on every rank)",
					r, dvx_le32(recs[r].nchannels), w->rank,
					dvx_le32(mine.nchannels));
	if (err == DVX_WIN_REC_LANES)
		return dvx_hal_diag_set(&w->diag, -EINVAL, DVX_DIAG_ARG, "win_exchange",
					"rank %d has %u lanes per IB peer, the window's nchannels is %u (a QP per channel)",
					r, dvx_le32(recs[r].lanes), dvx_le32(mine.nchannels));
	if (err)
		return dvx_hal_diag_set(&w->diag, -EINVAL, DVX_DIAG_ARG, "win_exchange",
					"rank %d's window differs from rank %d's (shape, channel, DVX_WIN_F_READ or whether a buffer is given)",
					r, w->rank);
	if (mp->gpu) {
		err = dvx_gpu_make_current(mp->gpu);
		if (err)
			return dvx_hal_diag_set(&w->diag, err, DVX_DIAG_CUDA, "win_exchange",
						"the GPU's context");
	}

	/* 2. the NVL domain: the region, then the buffer (failures agreed over the
	 * domain by the exchange, then over the group: the other domains must not go
	 * on to the IB steps alone) */
	err = 0;
	if (t->nnvl > 1) {
		err = dvx_nvl_exchange(&w->nvl_buf, w->nvl_peers, dvx_mp_nvl_bootstrap(mp), t,
				       mp->gpu,
				       &(struct dvx_nvl_cfg){ w->mem.nvl, w->mem.nvl_len, mp->hal,
							      tmo });
		if (err)
			dvx_hal_diag_set(&w->diag, err, DVX_DIAG_ARG, "win_exchange",
					 "NVL region: %s", w->nvl_buf.diag.msg);
		else
			w->nvl_mapped = 1;
		if (!err && data) {
			err = dvx_nvl_exchange(&w->data_buf, w->data_peers,
					       dvx_mp_nvl_bootstrap(mp), t, mp->gpu,
					       &(struct dvx_nvl_cfg){ data, data_len, mp->hal,
								      tmo });
			if (err)
				dvx_hal_diag_set(&w->diag, err, DVX_DIAG_ARG, "win_exchange",
						 "NVL buffer: %s", w->data_buf.diag.msg);
			else
				w->data_mapped = 1;
		}
	}
	err = agree(w, err, "the NVL exchange");
	if (err)
		goto fail;

	/* 3. the IB peers: the region, then the buffer (every rank of the group takes
	 * part when any pair uses IB) */
	if (t->any_ib) {
		err = dvx_mp_exchange_ib(mp, t->nib ? &w->ib_lbuf : NULL, w->all, NULL, tmo);
		if (err) {	/* the bootstrap failed: nobody can agree on anything */
			dvx_hal_diag_set(&w->diag, err, DVX_DIAG_OS, "win_exchange", "IB region");
			goto fail;
		}
		for (r = 0; r < t->nib; r++)
			w->peers[t->ib_ranks[r]].ib_region = w->all[t->ib_ranks[r]];
		if (data) {
			int lerr = 0;

			if (t->nib) {
				/* the destination of IB puts and the word of their atomics;
				 * read by peers only when the window says so (gets) */
				lerr = dvx_mp_register(mp, data, data_len,
						       DVX_MP_REG_WRITE | DVX_MP_REG_ATOMIC |
						       ((w->cfg.flags & DVX_WIN_F_READ) ?
							DVX_MP_REG_READ : 0u),
						       &w->data_lbuf);
				if (lerr)
					dvx_hal_diag_set(&w->diag, lerr, DVX_DIAG_ARG, "win_exchange",
							 "registering the buffer: %s", mp->diag.msg);
				else
					w->data_reg = 1;
			}
			/* a rank whose registration failed still takes part (publishing
			 * nothing); the statuses below fail everyone */
			err = dvx_mp_exchange_ib(mp, t->nib && !lerr ? &w->data_lbuf : NULL, w->all,
						 NULL, tmo);
			if (err) {
				dvx_hal_diag_set(&w->diag, err, DVX_DIAG_OS, "win_exchange", "IB buffer");
				goto fail;
			}
			for (r = 0; r < t->nib; r++) {
				int p = t->ib_ranks[r];

				w->peers[p].ib_data = w->all[p];
				w->peers[p].data_len = w->all[p].len;
			}
			err = lerr;
		}
		for (r = 0; !err && r < t->nib; r++) {
			int p = t->ib_ranks[r];

			/* p's region holds the rows up to this rank's */
			uint64_t need = DVX_WIN_IB_BYTES(ib_index_at(mp, p, w->rank) + 1,
							 w->geom.signals, w->geom.counters,
							 w->geom.barriers, w->geom.slots,
							 w->geom.slot_bytes);

			if (dvx_win_ib_rec_check(&w->peers[p].ib_region, need,
						 data ? &w->peers[p].ib_data : NULL))
				err = dvx_hal_diag_set(&w->diag, -EPROTO, DVX_DIAG_ARG, "win_exchange",
						       "IB peer %d published no window, or one too short (its NICs?)",
						       p);
		}
	}
	err = agree(w, err, "the IB exchange");
	if (err)
		goto fail;

	/* 4. the peer table */
	for (r = 0; r < w->nranks; r++) {
		struct dvx_win_dev_peer *e = &w->peers[r];
		int k = dvx_mp_kind(mp, r);

		e->kind = (uint32_t)k;
		if (k == DVX_MP_SELF) {
			e->nvl_data = (uint64_t)(uintptr_t)data;
			e->data_len = data_len;
		} else if (k == DVX_MP_NVL) {
			int lr = t->nvl_local[r];

			e->row = t->nvl_peer[r];
			e->row_at = dvx_p2p_peer_index(lr, t->nvl_me);
			e->nvl_base = dvx_nvl_peer_ptr(&w->nvl_buf, lr);
			if (data) {
				e->nvl_data = dvx_nvl_peer_ptr(&w->data_buf, lr);
				e->data_len = w->data_peers[lr].rec.len;
			}
		} else if (k == DVX_MP_IB) {
			e->row = t->ib_idx[r];
			e->row_at = ib_index_at(mp, r, w->rank);
		}
	}
	w->data = data;
	w->data_len = data_len;
	w->exchanged = 1;
	return 0;
fail:
	undo_exchange(w, data);
	for (r = 0; r < w->nranks; r++)
		dvx_win_dev_peer_clear(&w->peers[r]);
	return err;
}

int dvx_win_register_src(struct dvx_win *w, void *ptr, uint64_t len, struct dvx_p2p_lbuf *lb)
{
	int err;

	if (!w || w->live != DVX_WIN_LIVE || !ptr || !len || !lb)
		return -EINVAL;
	if (!w->mp->reg_live)
		return -ENODEV;
	err = dvx_mp_register(w->mp, ptr, len, 0, lb);	/* a source: local use only */
	if (err)
		dvx_hal_diag_set(&w->diag, err, DVX_DIAG_ARG, "win_register_src", "%s", w->mp->diag.msg);
	return err;
}

int dvx_win_deregister_src(struct dvx_win *w, void *ptr)
{
	if (!w || w->live != DVX_WIN_LIVE || !ptr)
		return -EINVAL;
	if (!w->mp->reg_live)
		return -ENODEV;
	return dvx_mp_deregister(w->mp, ptr);
}

/* copy host bytes into the device region */
static int dev_put(struct dvx_win *w, uint64_t dptr, const void *src, uint64_t len)
{
	if (!w->mp->gpu) {
		memcpy((void *)(uintptr_t)dptr, src, len);
		return 0;
	}
	return dvx_gpu_memcpy_htod(w->mp->gpu, dptr, src, len);
}

int dvx_win_dev_make(struct dvx_win *w, const struct dvx_mp_dev *ib, struct dvx_win_dev *dev)
{
	static const uint64_t zeros[64];
	struct dvx_win_dev d;
	uint64_t off, n, zlen;
	int err;

	if (!w || w->live != DVX_WIN_LIVE || !dev)
		return -EINVAL;
	if (!w->exchanged)
		return dvx_hal_diag_set(&w->diag, -EINVAL, DVX_DIAG_STATE, "win_dev_make",
					"exchange the window first (dvx_win_exchange())");
	if (!w->mem.dev)
		return dvx_hal_diag_set(&w->diag, -EINVAL, DVX_DIAG_ARG, "win_dev_make",
					"no device region (mem.dev): a window for kernels needs one");
	if (w->dev_made)
		return dvx_hal_diag_set(&w->diag, -EALREADY, DVX_DIAG_ARG, "win_dev_make",
					"the device window is made once (its state would restart)");
	if (w->mp->topo.nib && (!ib || !ib->has_ib || ib->version != DVX_MP_DEV_VERSION))
		return dvx_hal_diag_set(&w->diag, -EINVAL, DVX_DIAG_ARG, "win_dev_make",
					"IB peers need the transport's exported device handle");
	if (w->mp->gpu) {
		err = dvx_gpu_make_current(w->mp->gpu);
		if (err)
			return err;
	}
	memset(&d, 0, sizeof(d));
	d.version = DVX_WIN_DEV_VERSION;
	d.size = (uint32_t)sizeof(d);
	d.rank = w->rank;
	d.nranks = w->nranks;
	d.nnvl_peers = w->mp->topo.nnvl_peers;
	d.nib = w->mp->topo.nib;
	d.channel = w->cfg.channel;
	d.nchannels = w->cfg.nchannels ? w->cfg.nchannels : 1;
	d.flags = w->cfg.flags;
	d.geom = w->geom;
	d.nvl_base = (uint64_t)(uintptr_t)w->mem.nvl;
	d.ib_base = (uint64_t)(uintptr_t)w->mem.ib;
	d.ib_addr = w->ib_lbuf.addr;
	memcpy(d.ib_lkey, w->ib_lbuf.lkey, sizeof(d.ib_lkey));
	memcpy(d.ib_rkey, w->ib_lbuf.rkey, sizeof(d.ib_rkey));
	d.nvl_rows = w->mp->topo.nnvl > 1 ? w->mp->topo.nnvl - 1 : 0;
	d.post_timeout_ns = w->cfg.timeout_ns;
	d.data = (uint64_t)(uintptr_t)w->data;
	d.data_len = w->data_len;
	d.peers = w->mem.dev;
	d.bar_expected = w->mem.dev + (uint64_t)w->nranks * DVX_WIN_PEER_BYTES;
	d.cursors = d.bar_expected + up64((uint64_t)w->geom.barriers * 8u);
	if (w->mp->topo.nib)
		d.ib = ib->ib;
	err = dev_put(w, d.peers, w->peers, (uint64_t)w->nranks * DVX_WIN_PEER_BYTES);
	zlen = w->mem.dev + DVX_WIN_DEV_BYTES(w->nranks, w->geom.barriers) - d.bar_expected;
	for (off = 0; !err && off < zlen; off += n) {
		n = zlen - off < sizeof(zeros) ? zlen - off : sizeof(zeros);
		err = dev_put(w, d.bar_expected + off, zeros, n);
	}
	if (err)
		return dvx_hal_diag_set(&w->diag, err, DVX_DIAG_CUDA, "win_dev_make",
					"writing the device tables");
	*dev = d;
	w->dev_made = 1;
	return 0;
}

int dvx_win_reset_signals(struct dvx_win *w, struct dvx_gpu_stream *stream)
{
	const struct dvx_win_geom *g;
	uint32_t r, i;
	int err = 0;

	if (!w || w->live != DVX_WIN_LIVE)
		return -EINVAL;
	g = &w->geom;
	for (r = 0; !err && w->mem.nvl && r + 1 < (uint32_t)w->mp->topo.nnvl; r++)
		for (i = 0; !err && i < g->signals; i++) {
			uint64_t *word = (uint64_t *)(void *)((uint8_t *)w->mem.nvl +
							       dvx_win_nvl_sig_off(g, r, i));

			if (dvx_win_cpu(w))
				__atomic_store_n(word, 0, __ATOMIC_RELEASE);
			else
				err = dvx_mp_nvl_signal(w->mp, stream, (uint64_t)(uintptr_t)word,
							DVX_WIN_SIG_SET, 0);
		}
	for (r = 0; !err && w->mem.ib && r < (uint32_t)w->mp->topo.nib; r++)
		for (i = 0; !err && i < g->signals; i++) {
			uint64_t *word = (uint64_t *)(void *)((uint8_t *)w->mem.ib +
							       dvx_win_ib_sig_off(g, r, i));

			if (dvx_win_cpu_at(w, word))
				__atomic_store_n(word, 0, __ATOMIC_RELEASE);
			else
				err = dvx_mp_nvl_signal(w->mp, stream, (uint64_t)(uintptr_t)word,
							DVX_WIN_SIG_SET, 0);
		}
	return err;
}

uint64_t dvx_win_nvlink_address(const struct dvx_win *w, int peer, uint64_t offset)
{
	const struct dvx_win_dev_peer *e;

	if (!w || w->live != DVX_WIN_LIVE || !w->exchanged || peer < 0 || peer >= w->nranks ||
	    peer == w->rank)
		return 0;
	e = &w->peers[peer];
	if (e->kind != DVX_MP_NVL || !e->nvl_data || offset >= e->data_len)
		return 0;
	return e->nvl_data + offset;
}

int dvx_win_fini(struct dvx_win *w)
{
	int err = 0, e;

	if (!w || w->live != DVX_WIN_LIVE)
		return -EINVAL;
	if (w->data_reg) {
		e = dvx_mp_deregister(w->mp, w->data);
		err = err ? err : e;
		w->data_reg = 0;
	}
	if (w->data_mapped) {
		e = dvx_nvl_unmap(&w->data_buf);
		err = err ? err : e;
		w->data_mapped = 0;
	}
	if (w->nvl_mapped) {
		e = dvx_nvl_unmap(&w->nvl_buf);
		err = err ? err : e;
		w->nvl_mapped = 0;
	}
	if (w->ib_reg) {
		e = dvx_mp_deregister(w->mp, w->mem.ib);
		err = err ? err : e;
		w->ib_reg = 0;
	}
	w->exchanged = 0;
	w->live = 0;
	return err;
}
