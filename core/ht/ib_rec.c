// SPDX-License-Identifier: MIT
/*
 * core/ht/ib_rec.c - the IB host transport's recovery of a failed channel
 * (dvx_ht_recover(), docs/ht.md "Recovery of a failed channel"): both ends meet over
 * the bootstrap, stop and drain the channel, reset and reconnect its QP, agree, and
 * start the channel anew. Blocking, bounded by the caller's timeout, as the P2P
 * transport's lane recovery is.
 */
#include "ht_priv.h"

#include <dvx/byteorder.h>
#include <dvx/hal.h>

#define REC_SLICE_NS 1000000ull	/* bootstrap waits are cut into slices: the NIC progresses */

static uint64_t rec_now(const struct dvx_ht_ib_state *st)
{
	return dvx_hal_now_ns(st->hal);
}

static uint64_t rec_left(const struct dvx_ht_ib_state *st, uint64_t deadline)
{
	uint64_t now = rec_now(st);

	return now >= deadline ? 0 : deadline - now;
}

int dvx_ht_rec_decode(const struct ht_rec *m, struct ht_rec *out)
{
	uint32_t i;

	memset(out, 0, sizeof(*out));
	out->magic = dvx_le32(m->magic);
	out->version = m->version;
	out->kind = m->kind;
	out->channel = dvx_le16(m->channel);
	out->att = dvx_le32(m->att);
	out->echo = dvx_le32(m->echo);
	out->failed = dvx_le32(m->failed);
	out->err = (int32_t)dvx_le32((uint32_t)m->err);
	if (out->magic != HT_REC_MAGIC || out->version != HT_REC_VERSION ||
	    out->kind < HT_REC_HELLO || out->kind > HT_REC_READY ||
	    out->channel >= DVX_HT_MAX_CHANNELS || out->failed > 1 || out->err > 0 ||
	    out->err < -4095)
		return -EBADMSG;
	for (i = 0; i < sizeof(m->pad); i++)
		if (m->pad[i])
			return -EBADMSG;
	return 0;
}

static int rec_send(struct dvx_ht_ib_state *st, uint32_t ch, uint32_t kind, uint32_t att,
		    uint32_t echo, uint32_t failed, int32_t err, uint64_t deadline)
{
	struct ht_rec m;

	memset(&m, 0, sizeof(m));
	m.magic = dvx_le32(HT_REC_MAGIC);
	m.version = HT_REC_VERSION;
	m.kind = (uint8_t)kind;
	m.channel = dvx_le16((uint16_t)ch);
	m.att = dvx_le32(att);
	m.echo = dvx_le32(echo);
	m.failed = dvx_le32(failed);
	m.err = (int32_t)dvx_le32((uint32_t)err);
	return dvx_bootstrap_send(st->cfg.bs, st->cfg.peer, st->cfg.tag, &m, sizeof(m),
				  rec_left(st, deadline) ? rec_left(st, deadline) : 1);
}

/* the next recovery message about channel @ch before @deadline (the NIC progresses);
 * anything else on the tag is read past */
static int rec_recv(struct dvx_ht_ib_state *st, uint32_t ch, struct ht_rec *m,
		    uint64_t deadline)
{
	struct ht_rec raw;
	int err;

	for (;;) {
		uint64_t left = rec_left(st, deadline);

		if (!left)
			return -ETIMEDOUT;
		err = dvx_bootstrap_recv(st->cfg.bs, st->cfg.peer, st->cfg.tag, &raw, sizeof(raw),
					 left < REC_SLICE_NS ? left : REC_SLICE_NS);
		if (err == -ETIMEDOUT) {
			dvx_hal_nic_progress(&st->cfg.nic->hal);
			continue;
		}
		if (err == -EMSGSIZE)
			continue;	/* not ours: dropped */
		if (err)
			return err;
		if (dvx_ht_rec_decode(&raw, m) || m->channel != ch)
			continue;	/* malformed, or about another channel: read past */
		return 0;
	}
}

/*
 * Meet the peer: send HELLO(@att), answer every HELLO with an ACK carrying this end's
 * status, and finish on the ACK of our HELLO, which names the peer's attempt.
 */
static int rec_meet(struct dvx_ht_ib_state *st, uint32_t ch, uint32_t att, uint32_t failed,
		    int32_t lerr, uint64_t deadline, uint32_t *patt, uint32_t *pfailed,
		    int32_t *perr)
{
	struct ht_rec m;
	uint32_t acked = 0;
	int have_acked = 0, err;

	err = rec_send(st, ch, HT_REC_HELLO, att, 0, 0, 0, deadline);
	for (;;) {
		if (err)
			return err;
		err = rec_recv(st, ch, &m, deadline);
		if (err)
			return err;
		if (m.kind == HT_REC_HELLO) {
			acked = m.att;
			have_acked = 1;
			err = rec_send(st, ch, HT_REC_ACK, att, m.att, failed, lerr, deadline);
			continue;
		}
		if (m.kind != HT_REC_ACK || m.echo != att)
			continue;	/* left over from an attempt that timed out */
		/* its HELLO may have been read by one of our attempts that timed out */
		if (!have_acked || acked != m.att) {
			err = rec_send(st, ch, HT_REC_ACK, att, m.att, failed, lerr, deadline);
			if (err)
				return err;
		}
		*patt = m.att;
		*pfailed = m.failed;
		*perr = m.err;
		return 0;
	}
}

/* wait for the peer's @kind of the pair (@patt, @att) */
static int rec_expect(struct dvx_ht_ib_state *st, uint32_t ch, uint32_t kind, uint32_t att,
		      uint32_t patt, uint64_t deadline)
{
	struct ht_rec m;
	int err;

	for (;;) {
		err = rec_recv(st, ch, &m, deadline);
		if (err)
			return err;
		if (m.kind == kind && m.att == patt && m.echo == att)
			return 0;
	}
}

/* whether this end of the channel needs recovery: its error, or its QP out of RTS as
 * the device reports it (a responder's remote access error leaves its QP in ERR) */
static int chan_failed(struct ht_chan *c, int *bad)
{
	uint32_t hw;
	int err = dvx_qp_query(&c->qp, NULL, &hw);

	if (err)
		return err;
	*bad = c->err || hw != DVX_MLX5_QP_STATE_RTS;
	return 0;
}

/* take completions until nothing of @c is outstanding, or the deadline */
static int chan_drain(struct dvx_ht_ib_state *st, struct ht_chan *c, uint64_t deadline)
{
	for (;;) {
		if (dvx_ht_chan_drained(st, c))
			return 0;
		if (!rec_left(st, deadline))
			return -ETIMEDOUT;
		dvx_hal_nic_progress(&st->cfg.nic->hal);
	}
}

int dvx_ht_ib_recover_chan(struct dvx_ht *t, uint32_t ch, uint64_t timeout_ns)
{
	struct dvx_ht_ib_state *st = dvx_ht_st(t);
	struct ht_chan *c = &st->ch[ch];
	uint32_t att = ++c->rec_att, patt = 0, pfailed = 0, hw;
	uint64_t deadline = rec_now(st);
	int32_t lerr, perr = 0, mark;
	int bad, err;

	if (st->hs != HT_HS_CONNECTED)
		return st->hs == HT_HS_FAILED ? st->err : -ENOTCONN;
	deadline = timeout_ns > UINT64_MAX - deadline ? UINT64_MAX : deadline + timeout_ns;
	err = chan_failed(c, &bad);
	if (err)
		return err;
	lerr = c->err;
	err = rec_meet(st, ch, att, (uint32_t)bad, lerr, deadline, &patt, &pfailed, &perr);
	if (err)
		return err;
	if (!bad && !pfailed)
		return 0;	/* healthy at both ends: nothing changes */

	/* stop: the QP in ERR, every request of the channel done, nothing outstanding */
	mark = lerr ? lerr : (perr < 0 ? perr : -ECONNRESET);
	dvx_ht_chan_fail(st, c, mark);
	if (dvx_qp_query(&c->qp, NULL, &hw) == 0 && hw != DVX_MLX5_QP_STATE_ERR &&
	    hw != DVX_MLX5_QP_STATE_RST) {
		err = dvx_qp_to_err(&c->qp);
		if (err)
			return err;
	}
	err = chan_drain(st, c, deadline);
	if (!err)
		err = rec_send(st, ch, HT_REC_QUIET, att, patt, 0, 0, deadline);
	if (!err)
		err = rec_expect(st, ch, HT_REC_QUIET, att, patt, deadline);
	if (err)
		return err;	/* the channel stays failed: a later call on both ends resumes */

	/* neither end has anything of the old connection in flight: start anew */
	st->cnt.rec_dropped += dvx_ht_chan_clear(st, c);
	err = dvx_qp_recover(&c->qp);
	if (err)
		return err;
	c->err = 0;
	c->syndrome = 0;
	c->vendor_syndrome = 0;
	dvx_ht_rx_fill(st, c);
	/* nobody writes before the other's receives are posted */
	err = rec_send(st, ch, HT_REC_READY, att, patt, 0, 0, deadline);
	if (!err)
		err = rec_expect(st, ch, HT_REC_READY, att, patt, deadline);
	if (err) {
		dvx_ht_chan_fail(st, c, mark);
		return err;
	}
	/* the last look: 0 promises a channel whose QP the device has in RTS */
	err = chan_failed(c, &bad);
	if (!err && bad) {
		dvx_ht_chan_fail(st, c, c->err ? c->err : -EIO);
		err = -EAGAIN;
	}
	if (!err)
		st->cnt.recoveries++;
	return err;
}
