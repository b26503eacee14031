// SPDX-License-Identifier: MIT
/*
 * core/win/rec.c - the window's exchange records: this rank's configuration record,
 * and the checks dvx_win_exchange() runs on what the other ranks published (their
 * records, the statuses of each step, an IB peer's region and buffer). Pure functions
 * of bytes a peer sends: fuzzed by tests/fuzz/lf/win_rec.c.
 */
#include <errno.h>
#include <string.h>

#include <dvx/byteorder.h>
#include <dvx/p2p/ops.h>
#include <dvx/mp/mp.h>

#include "win_priv.h"

void dvx_win_rec_make(const struct dvx_win *w, uint64_t data_len, int has_data,
		      struct dvx_win_rec *r)
{
	memset(r, 0, sizeof(*r));
	r->magic = dvx_le32(DVX_WIN_REC_MAGIC);
	r->version = dvx_le32(DVX_WIN_DEV_VERSION);
	r->signals = dvx_le32(w->geom.signals);
	r->counters = dvx_le32(w->geom.counters);
	r->barriers = dvx_le32(w->geom.barriers);
	r->slots = dvx_le32(w->geom.slots);
	r->slot_bytes = dvx_le64(w->geom.slot_bytes);
	r->channel = dvx_le32(w->cfg.channel);
	r->has_data = dvx_le32((uint32_t)has_data);
	r->data_len = dvx_le64(data_len);
	r->read = dvx_le32((w->cfg.flags & DVX_WIN_F_READ) ? 1u : 0u);
	r->nchannels = dvx_le32(w->cfg.nchannels ? w->cfg.nchannels : 1u);
	r->lanes = dvx_le32(w->mp && w->mp->topo.nib && w->mp->ib_live ? w->mp->ib.nlanes : 0u);
}

int dvx_win_recs_check(const struct dvx_win_rec *recs, int nranks, const struct dvx_win_rec *mine,
		       int *bad)
{
	int r;

	/* a rank's own refusal first: its arguments, not the window, are what is wrong */
	for (r = 0; r < nranks; r++)
		if (recs[r].status) {
			*bad = r;
			return DVX_WIN_REC_BAD_ARGS;
		}
	for (r = 0; r < nranks; r++) {
		struct dvx_win_rec a = recs[r];

		if (a.nchannels != mine->nchannels) {
			*bad = r;
			return DVX_WIN_REC_CHANNELS;
		}
		a.data_len = mine->data_len;	/* the buffers' lengths may differ */
		a.lanes = mine->lanes;		/* and the lanes */
		if (memcmp(&a, mine, sizeof(a))) {
			*bad = r;
			return DVX_WIN_REC_DIFFERS;
		}
	}
	/* every rank that posts over IB has a QP per channel to each peer (lanes pair
	 * by index, so the peer has them too) */
	for (r = 0; r < nranks; r++) {
		uint32_t l = dvx_le32(recs[r].lanes);

		if (l && l < dvx_le32(mine->nchannels)) {
			*bad = r;
			return DVX_WIN_REC_LANES;
		}
	}
	return 0;
}

int dvx_win_status_of(const int32_t *all, int nranks, int *bad)
{
	int r;

	for (r = 0; r < nranks; r++) {
		int32_t v = (int32_t)dvx_le32((uint32_t)all[r]);

		if (v) {
			*bad = r;
			/* a status is 0 or a negative errno: anything else is no status */
			return v < 0 && v >= -4095 ? v : -EPROTO;
		}
	}
	return 0;
}

int dvx_win_ib_rec_check(const struct dvx_p2p_rbuf *region, uint64_t need,
			 const struct dvx_p2p_rbuf *data)
{
	if (!region->addr || region->len < need || region->addr + need < region->addr)
		return -EPROTO;
	if (data && (!data->addr || data->addr + data->len < data->addr))
		return -EPROTO;
	return 0;
}
