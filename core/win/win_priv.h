/* SPDX-License-Identifier: MIT */
/* core/win/win_priv.h - what the window's files share. */
#ifndef DVX_CORE_WIN_PRIV_H
#define DVX_CORE_WIN_PRIV_H

#include <dvx/win/win.h>

#define DVX_WIN_REC_MAGIC 0x4e495744u	/* "DWIN" */

/* what every rank publishes before the exchange: its configuration */
struct dvx_win_rec {
	uint32_t magic;
	uint32_t version;
	uint32_t signals;
	uint32_t counters;
	uint32_t barriers;
	uint32_t slots;
	uint64_t slot_bytes;
	uint32_t channel;
	uint32_t has_data;
	uint64_t data_len;
	int32_t status;		/* this rank's arguments: 0 or -EINVAL */
	uint32_t read;		/* 1: DVX_WIN_F_READ (the same on every rank) */
	uint32_t nchannels;	/* IB channels of the puts (cfg.nchannels, 0 as 1): the same
				 * on every rank */
	uint32_t lanes;		/* the rank's lanes per IB peer (0: no IB peers): at least
				 * nchannels (may differ between ranks) */
};

/* the flags a configuration may have */
#define WIN_FLAGS (DVX_WIN_F_CPU | DVX_WIN_F_IB_HOST | DVX_WIN_F_READ)

/* the record of this rank's window (the exchange's first allgather; the encoder) */
void dvx_win_rec_make(const struct dvx_win *w, uint64_t data_len, int has_data,
		      struct dvx_win_rec *r);

/* dvx_win_recs_check()'s answers besides 0 */
enum { DVX_WIN_REC_BAD_ARGS = 1, DVX_WIN_REC_DIFFERS = 2, DVX_WIN_REC_CHANNELS = 3,
       DVX_WIN_REC_LANES = 4 };

/*
 * The gathered records against this rank's (@mine, also at its own index): 0 when
 * every rank gave good arguments and the same window (the buffers' lengths and the
 * lanes may differ); else DVX_WIN_REC_BAD_ARGS (a rank's status says its arguments
 * were bad), DVX_WIN_REC_CHANNELS (another channel count), DVX_WIN_REC_DIFFERS
 * (another window) or DVX_WIN_REC_LANES (a rank with IB peers has fewer lanes per
 * peer than the channel count), with the first such rank in *@bad. Reads only.
 */
int dvx_win_recs_check(const struct dvx_win_rec *recs, int nranks, const struct dvx_win_rec *mine,
		       int *bad);

/*
 * The gathered statuses of a step (little-endian int32 per rank): 0 when every one is
 * 0; else the first non-zero one's rank in *@bad and its errno, or -EPROTO when it is
 * not a negative errno (-4095 ... -1). Reads only.
 */
int dvx_win_status_of(const int32_t *all, int nranks, int *bad);

/*
 * An IB peer's published region (and buffer, when @data): 0, or -EPROTO for none
 * (address 0), a region shorter than @need bytes, or one that wraps. Reads only.
 */
int dvx_win_ib_rec_check(const struct dvx_p2p_rbuf *region, uint64_t need,
			 const struct dvx_p2p_rbuf *data);

/* the CPU reaches the window's words (DVX_WIN_F_CPU, or a rank without a GPU) */
int dvx_win_cpu(const struct dvx_win *w);

/* the CPU reaches the word at @p (in the IB region with DVX_WIN_F_IB_HOST too) */
int dvx_win_cpu_at(const struct dvx_win *w, const void *p);

#endif
