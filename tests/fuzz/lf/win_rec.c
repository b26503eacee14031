// SPDX-License-Identifier: MIT
/*
 * tests/fuzz/lf/win_rec.c - libFuzzer harness: the window's exchange records
 * (core/win/win.c), what the other ranks publish in dvx_win_exchange()'s allgathers:
 * their configuration records, the statuses each step agrees on, and an IB peer's
 * region and buffer records.
 *
 * White box: the three decoders dvx_win_exchange() runs on what it gathered are pure
 * functions of core/win/win.c (core/win/win_priv.h): dvx_win_recs_check(),
 * dvx_win_status_of() and dvx_win_ib_rec_check(); this rank's record comes from the
 * encoder, dvx_win_rec_make(). (A window end to end needs a GPU and a connected
 * multi-peer transport per input: win-test runs that path, with its refusals.)
 *
 * Feeds:
 *   byte 0  nranks 2 + b % 7; byte 1: this rank (b % nranks); byte 2: which records
 *           (b % 3: 0 configurations, 1 statuses, 2 an IB peer's region and buffer)
 *   bytes 3-15  this rank's window: signals, counters, barriers, slots (a byte each,
 *           4 x), slot_bytes (128 * a byte), channel (a byte), a buffer of the length
 *           in the next 6 bytes (0: none), then a byte: bit 0 DVX_WIN_F_READ, bits 1-3
 *           nchannels (0-7); a geometry dvx_win_geom_init() refuses is made empty
 *           (this rank's lanes: 0, as a rank without a transport)
 *   the rest: the other ranks' records as they arrived (this rank's own is put at its
 *           index, as the allgather does); an IB record: the region's need in bytes 0-3,
 *           then a region and a buffer record.
 *
 * Checks: each decoder's answer is its contract, restated here independently: 0
 * exactly when every record is good; otherwise the first bad rank named, with the
 * errno the exchange returns (a status that is not a negative errno becomes -EPROTO,
 * never a positive return); the records are unchanged (the decoders only read).
 *
 * Seeds: 'DVX_FUZZ_WRITE_SEEDS=DIR': records of equal windows made by the encoder
 * (several shapes, with and without a buffer), all-zero statuses, IB records of the
 * exact length ('scripts/fuzz.sh --seeds').
 */
#include <dvx/byteorder.h>
#include <dvx/p2p/ops.h>

#include "../../../core/win/win_priv.h"
#include "lf.h"

#define MAXR 8

static void mine_of(struct lf_in *in, struct dvx_win *w, struct dvx_win_rec *mine)
{
	uint32_t sig = lf_u8(in), ctr = lf_u8(in), bar = lf_u8(in), slots = lf_u8(in) % 9;
	uint64_t sb = 128ull * lf_u8(in), len;
	uint8_t lb[6];

	memset(w, 0, sizeof(*w));
	if (dvx_win_geom_init(&w->geom, sig, ctr, bar, slots, slots ? sb : 0))
		LF_CHECK(!dvx_win_geom_init(&w->geom, 0, 0, 0, 0, 0));
	w->cfg.channel = lf_u8(in);
	lf_bytes(in, lb, sizeof(lb));
	len = (uint64_t)lb[0] | (uint64_t)lb[1] << 8 | (uint64_t)lb[2] << 16 |
	      (uint64_t)lb[3] << 24 | (uint64_t)lb[4] << 32 | (uint64_t)lb[5] << 40;
	{
		uint8_t f = lf_u8(in);

		w->cfg.flags = (f & 1) ? DVX_WIN_F_READ : 0;
		w->cfg.nchannels = (f >> 1) & 7;
	}
	dvx_win_rec_make(w, len, len != 0, mine);
}

static void run_configs(struct lf_in *in, int n, int me, const struct dvx_win_rec *mine)
{
	struct dvx_win_rec recs[MAXR], keep[MAXR];
	int r, bad = -1, want = 0, want_bad = -1, ret;

	for (r = 0; r < n; r++)
		if (r == me)
			recs[r] = *mine;
		else
			lf_bytes(in, &recs[r], sizeof(recs[r]));
	memcpy(keep, recs, sizeof(recs));
	ret = dvx_win_recs_check(recs, n, mine, &bad);
	LF_CHECK(!memcmp(keep, recs, sizeof(recs)));	/* read only */
	/* the contract: a status first, then the first record that is another window */
	for (r = 0; r < n && !want; r++)
		if (recs[r].status) {
			want = DVX_WIN_REC_BAD_ARGS;
			want_bad = r;
		}
	for (r = 0; r < n && !want; r++) {
		struct dvx_win_rec a = recs[r];

		a.data_len = mine->data_len;
		a.lanes = mine->lanes;
		if (a.nchannels != mine->nchannels) {
			want = DVX_WIN_REC_CHANNELS;
			want_bad = r;
		} else if (memcmp(&a, mine, sizeof(a))) {
			want = DVX_WIN_REC_DIFFERS;
			want_bad = r;
		}
	}
	/* then a rank with IB lanes fewer than the channels */
	for (r = 0; r < n && !want; r++)
		if (dvx_le32(recs[r].lanes) && dvx_le32(recs[r].lanes) < dvx_le32(mine->nchannels)) {
			want = DVX_WIN_REC_LANES;
			want_bad = r;
		}
	LF_CHECK(ret == want);
	if (ret)
		LF_CHECK(bad == want_bad && bad != me);
	if (!ret) {
		/* every rank agrees on the shape this rank has */
		for (r = 0; r < n; r++) {
			LF_CHECK(dvx_le32(recs[r].magic) == DVX_WIN_REC_MAGIC);
			LF_CHECK(recs[r].signals == mine->signals && recs[r].slots == mine->slots &&
				 recs[r].slot_bytes == mine->slot_bytes &&
				 recs[r].has_data == mine->has_data);
		}
	}
}

static void run_statuses(struct lf_in *in, int n, int me)
{
	int32_t all[MAXR], keep[MAXR];
	int r, bad = -1, ret;

	for (r = 0; r < n; r++)
		all[r] = r == me ? 0 : (int32_t)lf_u32(in);
	memcpy(keep, all, sizeof(all));
	ret = dvx_win_status_of(all, n, &bad);
	LF_CHECK(!memcmp(keep, all, sizeof(all)));
	LF_CHECK(ret <= 0 && ret >= -4095);	/* 0 or a negative errno, whatever came */
	for (r = 0; r < n; r++)
		if (all[r])
			break;
	if (r == n) {
		LF_CHECK(ret == 0);
	} else {
		int32_t v = (int32_t)dvx_le32((uint32_t)all[r]);

		LF_CHECK(bad == r && ret != 0);
		LF_CHECK(ret == (v < 0 && v >= -4095 ? v : -EPROTO));
	}
}

static void run_ib(struct lf_in *in)
{
	struct dvx_p2p_rbuf rr[2], keep[2];
	uint64_t need = lf_u32(in);
	int with_data = (int)(need & 1), ret, good;

	need >>= 1;
	lf_bytes(in, rr, sizeof(rr));
	memcpy(keep, rr, sizeof(rr));
	ret = dvx_win_ib_rec_check(&rr[0], need, with_data ? &rr[1] : NULL);
	LF_CHECK(!memcmp(keep, rr, sizeof(rr)));
	good = rr[0].addr && rr[0].len >= need && rr[0].addr + need >= rr[0].addr &&
	       (!with_data || (rr[1].addr && rr[1].addr + rr[1].len >= rr[1].addr));
	LF_CHECK(ret == (good ? 0 : -EPROTO));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lf_in in = { data, size };
	struct dvx_win w;
	struct dvx_win_rec mine;
	int n = 2 + lf_u8(&in) % (MAXR - 1), me = lf_u8(&in) % n, kind = lf_u8(&in) % 3;

	mine_of(&in, &w, &mine);
	if (kind == 0)
		run_configs(&in, n, me, &mine);
	else if (kind == 1)
		run_statuses(&in, n, me);
	else
		run_ib(&in);
	return 0;
}

/* ---- seeds: the encoder's records ---- */

static void seed_configs(const char *name, int n, int me, const uint8_t shape[13])
{
	uint8_t buf[16 + MAXR * sizeof(struct dvx_win_rec)];
	struct lf_in in = { shape, 13 };
	struct dvx_win w;
	struct dvx_win_rec mine;
	size_t o = 16;
	int r;

	buf[0] = (uint8_t)(n - 2);
	buf[1] = (uint8_t)me;
	buf[2] = 0;
	memcpy(buf + 3, shape, 13);
	mine_of(&in, &w, &mine);
	for (r = 0; r < n; r++)
		if (r != me) {
			/* another rank's own buffer length: still the same window */
			struct dvx_win_rec other;

			dvx_win_rec_make(&w, dvx_le64(mine.data_len) + (uint64_t)r * 4096,
					 mine.has_data != 0, &other);
			memcpy(buf + o, &other, sizeof(other));
			o += sizeof(other);
		}
	lf_seed(name, buf, o);
}

static void write_seeds(void)
{
	static const uint8_t plain[13] = { 4, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
	static const uint8_t slots[13] = { 4, 2, 2, 4, 2, 1, 0, 0x10, 0, 0, 0, 0, 1 | 4 << 1 };
	static const uint8_t big[13] = { 255, 255, 255, 8, 255, 3, 0, 0, 0x10, 0, 0, 0, 7 << 1 };
	uint8_t b[256];
	struct dvx_p2p_rbuf rr[2];
	int i;

	seed_configs("configs-2-plain", 2, 0, plain);
	seed_configs("configs-4-slots-buffer", 4, 2, slots);
	seed_configs("configs-8-big", 8, 7, big);
	memset(b, 0, sizeof(b));
	b[0] = 6;
	b[1] = 3;
	b[2] = 1;	/* statuses: all 0 */
	lf_seed("statuses-ok", b, 16 + 7 * 4);
	b[16] = 0xea;	/* -22 from rank 0 */
	b[17] = b[18] = b[19] = 0xff;
	lf_seed("statuses-einval", b, 16 + 7 * 4);
	memset(b, 0, sizeof(b));
	b[0] = 0;
	b[2] = 2;
	/* need 2 * 4096 + with_data, then the region and the buffer */
	i = 16;
	b[i++] = 1;
	b[i++] = 0x20;
	memset(rr, 0, sizeof(rr));
	rr[0].addr = 0x10000;
	rr[0].len = 4096;
	rr[0].rkey[0] = 0x1234;
	rr[1].addr = 0x20000;
	rr[1].len = 12288;
	rr[1].rkey[0] = 0x5678;
	memcpy(b + i + 2, rr, sizeof(rr));
	lf_seed("ib-exact", b, (size_t)i + 2 + sizeof(rr));
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	lf_seed_mode(write_seeds);
	return 0;
}
