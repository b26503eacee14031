// SPDX-License-Identifier: MIT
/*
 * testing/ht_mock.c - the mock of the host transport's interface (dvx/testing/ht_mock.h):
 * two ends in one process, matched in order per channel like the IB transport, copied
 * on progress, with injected failures and a virtual clock.
 */
#include <errno.h>
#include <string.h>

#include <dvx/testing/ht_mock.h>

#define MOCK_KEY 0x4b434f4du	/* "MOCK": the key of an exported buffer */

/* req->priv[0]: [63:32] the tick its copy is due (0: not matched yet), [31:0] the
 * error an injected failure completes it with (negated); priv[1]: a zero-copy send's
 * destination */
#define DUE(r) ((r)->priv[0] >> 32)
#define FAILS(r) (-(int32_t)(uint32_t)(r)->priv[0])

static struct dvx_ht_mock *end_of(const struct dvx_ht *t)
{
	return (struct dvx_ht_mock *)t->priv;
}

static void push(struct dvx_ht_req *q[2], struct dvx_ht_req *r)
{
	r->next = NULL;
	if (q[1])
		q[1]->next = r;
	else
		q[0] = r;
	q[1] = r;
}

static struct dvx_ht_req *pop(struct dvx_ht_req *q[2])
{
	struct dvx_ht_req *r = q[0];

	if (r) {
		q[0] = r->next;
		if (!q[0])
			q[1] = NULL;
	}
	return r;
}

/* count the call; the armed failure answers it */
static int call(struct dvx_ht_mock *m, uint32_t op)
{
	m->calls[op]++;
	if (m->fail_call == op && m->fail_call_nth && !--m->fail_call_nth) {
		m->fail_call = DVX_HT_MOCK_OP_COUNT;
		return m->fail_call_err;
	}
	return 0;
}

/* a request is issued: mark it if the armed failure is for it */
static void issued(struct dvx_ht_mock *m, uint32_t op, struct dvx_ht_req *r)
{
	m->reqs[op]++;
	r->priv[0] = 0;
	if (m->fail_req == op && m->fail_req_nth && !--m->fail_req_nth) {
		m->fail_req = DVX_HT_MOCK_OP_COUNT;
		r->priv[0] = (uint32_t)-m->fail_req_err;
	}
}

static int connected(const struct dvx_ht_mock *m)
{
	return *m->ticks >= m->cfg.connect_after;
}

static int can_issue(const struct dvx_ht_mock *m, uint32_t ch)
{
	if (!connected(m))
		return -ENOTCONN;
	return m->ch_err[ch];
}

static int m_send_ctrl(struct dvx_ht *t, const void *buf, size_t len, struct dvx_ht_req *req)
{
	struct dvx_ht_mock *m = end_of(t);
	int err = call(m, DVX_HT_MOCK_SEND_CTRL);

	if (!err)
		err = can_issue(m, 0);
	if (err)
		return err;
	if (m->ctrl_busy >= DVX_HT_MOCK_CTRL_SLOTS)
		return -EAGAIN;
	req->seq = m->cseq[0]++;
	if (len)
		memcpy(m->ctrl[req->seq % DVX_HT_MOCK_CTRL_SLOTS], buf, len);
	m->ctrl_busy++;
	issued(m, DVX_HT_MOCK_SEND_CTRL, req);
	push(m->csq, req);
	return 0;
}

static int m_recv_ctrl(struct dvx_ht *t, void *buf, size_t len, struct dvx_ht_req *req)
{
	struct dvx_ht_mock *m = end_of(t);
	int err = call(m, DVX_HT_MOCK_RECV_CTRL);

	(void)buf;
	(void)len;
	if (!err)
		err = can_issue(m, 0);
	if (err)
		return err;
	req->seq = m->cseq[1]++;
	issued(m, DVX_HT_MOCK_RECV_CTRL, req);
	push(m->crq, req);
	return 0;
}

static int m_send_chunk(struct dvx_ht *t, const struct dvx_ht_chunk *c, struct dvx_ht_req *req)
{
	struct dvx_ht_mock *m = end_of(t);
	int err = call(m, DVX_HT_MOCK_SEND_CHUNK);

	if (!err)
		err = can_issue(m, c->channel);
	if (err)
		return err;
	if (t->mode == DVX_HT_ZC) {
		/* as the IB transport: a registration and a target that holds the chunk */
		if (!c->mr || !c->remote || c->offset > c->remote->len ||
		    c->len > c->remote->len - c->offset)
			return -EINVAL;
	} else if (c->remote) {
		return -EINVAL;
	}
	if (m->inflight[c->channel] >= m->cfg.depth)
		return -EAGAIN;
	req->seq = m->seq[c->channel][0]++;
	issued(m, DVX_HT_MOCK_SEND_CHUNK, req);
	req->priv[1] = t->mode == DVX_HT_ZC ? c->remote->addr + c->offset : 0;
	m->inflight[c->channel]++;
	push(m->sq[c->channel], req);
	return 0;
}

static int m_recv_chunk(struct dvx_ht *t, const struct dvx_ht_chunk *c, struct dvx_ht_req *req)
{
	struct dvx_ht_mock *m = end_of(t);
	int err = call(m, DVX_HT_MOCK_RECV_CHUNK);

	if (!err)
		err = can_issue(m, c->channel);
	if (err)
		return err;
	if (t->mode == DVX_HT_CB && c->len && !c->buf)
		return -EINVAL;
	req->seq = m->seq[c->channel][1]++;
	issued(m, DVX_HT_MOCK_RECV_CHUNK, req);
	push(m->rq[c->channel], req);
	return 0;
}

/* a matched pair: an injected failure fails its request and the partner with
 * -EREMOTEIO; else the bytes move (a receive too small: -EMSGSIZE, nothing copied) */
static void finish(struct dvx_ht_req *s, struct dvx_ht_req *r, void *dst, const void *src)
{
	uint64_t len = s->len;

	if (FAILS(s) || FAILS(r)) {
		dvx_ht_req_done(s, FAILS(s) ? FAILS(s) : -EREMOTEIO, 0);
		dvx_ht_req_done(r, FAILS(r) ? FAILS(r) : -EREMOTEIO, 0);
		return;
	}
	dvx_ht_req_done(s, 0, len);
	if (len > r->len) {
		dvx_ht_req_done(r, -EMSGSIZE, len);
		return;
	}
	if (len)
		memcpy(dst, src, len);
	dvx_ht_req_done(r, 0, len);
}

/* is the head pair due? (matched now if not yet, due after the delay) */
static int due(const struct dvx_ht_mock *from, struct dvx_ht_req *s)
{
	if (!DUE(s))
		s->priv[0] |= (*from->ticks + from->cfg.delay) << 32;
	return *from->ticks >= DUE(s);
}

static void deliver(struct dvx_ht_mock *from, struct dvx_ht_mock *to)
{
	uint32_t c;

	for (c = 0; c < from->cfg.nchannels; c++) {
		while (from->sq[c][0] && to->rq[c][0] && due(from, from->sq[c][0])) {
			struct dvx_ht_req *s = pop(from->sq[c]), *r = pop(to->rq[c]);
			void *dst = from->ht.mode == DVX_HT_ZC ? (void *)(uintptr_t)s->priv[1] :
								  r->buf;

			finish(s, r, dst, s->buf);
			from->inflight[c]--;
			if (!s->err)
				from->bytes_sent += s->bytes;
		}
	}
	while (from->csq[0] && to->crq[0] && due(from, from->csq[0])) {
		struct dvx_ht_req *s = pop(from->csq), *r = pop(to->crq);

		finish(s, r, r->buf, from->ctrl[s->seq % DVX_HT_MOCK_CTRL_SLOTS]);
		from->ctrl_busy--;
	}
}

static int m_progress(struct dvx_ht *t)
{
	struct dvx_ht_mock *m = end_of(t);

	m->calls[DVX_HT_MOCK_PROGRESS]++;
	(*m->ticks)++;
	if (!connected(m))
		return 0;
	deliver(m, m->peer);
	deliver(m->peer, m);
	return 0;
}

static int m_connected(const struct dvx_ht *t)
{
	return connected(end_of(t));
}

static int m_ready(const struct dvx_ht *t, uint32_t channel, uint32_t dir)
{
	const struct dvx_ht_mock *m = end_of(t);

	if (can_issue(m, channel))
		return 0;
	return dir == DVX_HT_RECV || m->inflight[channel] < m->cfg.depth;
}

static int m_status(const struct dvx_ht *t, int32_t channel)
{
	return channel < 0 ? 0 : end_of(t)->ch_err[channel];
}

static int m_export(struct dvx_ht *t, void *buf, uint64_t len, const struct dvx_mr *mr,
		    struct dvx_ht_desc *d)
{
	int err = call(end_of(t), DVX_HT_MOCK_EXPORT);

	(void)mr;	/* no NIC: nothing to check it against */
	if (err)
		return err;
	if (t->mode != DVX_HT_ZC)
		return -EOPNOTSUPP;
	dvx_ht_desc_pack(d, (uint64_t)(uintptr_t)buf, len, MOCK_KEY);
	return 0;
}

static int m_import(struct dvx_ht *t, const struct dvx_ht_desc *d, struct dvx_ht_rbuf *r)
{
	int err = call(end_of(t), DVX_HT_MOCK_IMPORT);

	if (err)
		return err;
	if (t->mode != DVX_HT_ZC)
		return -EOPNOTSUPP;
	return dvx_ht_desc_unpack(d, r);
}

static uint64_t m_now(const struct dvx_ht *t)
{
	return *end_of(t)->ticks * 1000ull;
}

static const struct dvx_ht_ops mock_ops = {
	.send_ctrl = m_send_ctrl,
	.recv_ctrl = m_recv_ctrl,
	.send_chunk = m_send_chunk,
	.recv_chunk = m_recv_chunk,
	.progress = m_progress,
	.connected = m_connected,
	.ready = m_ready,
	.status = m_status,
	.export_buf = m_export,
	.import_buf = m_import,
	.now_ns = m_now,
};

static void end_init(struct dvx_ht_mock *m, struct dvx_ht_mock *peer,
		     const struct dvx_ht_mock_cfg *c, int32_t peer_rank, uint64_t *ticks)
{
	memset(m, 0, sizeof(*m));
	m->peer = peer;
	m->cfg = *c;
	m->ticks = ticks;
	m->fail_call = m->fail_req = DVX_HT_MOCK_OP_COUNT;
	m->ht.ops = &mock_ops;
	m->ht.priv = m;
	m->ht.peer = peer_rank;
	m->ht.mode = c->mode;
	m->ht.nchannels = c->nchannels;
	m->ht.max_ctrl = c->max_ctrl;
	m->ht.max_chunk = c->max_chunk;
	m->ht.depth = c->mode == DVX_HT_CB ? c->depth : 0;
	m->ht.live = DVX_LIVE;
}

int dvx_ht_mock_pair(struct dvx_ht_mock *a, struct dvx_ht_mock *b,
		     const struct dvx_ht_mock_cfg *cfg)
{
	struct dvx_ht_mock_cfg c;

	if (!a || !b || a == b)
		return -EINVAL;
	memset(&c, 0, sizeof(c));
	if (cfg)
		c = *cfg;
	if (!c.mode)
		c.mode = DVX_HT_CB;
	if (!c.nchannels)
		c.nchannels = 1;
	if (!c.max_ctrl)
		c.max_ctrl = DVX_HT_MOCK_CTRL_BYTES;
	if (!c.max_chunk)
		c.max_chunk = 65536;
	if (!c.depth)
		c.depth = 8;
	if ((c.mode != DVX_HT_ZC && c.mode != DVX_HT_CB) || c.nchannels > DVX_HT_MAX_CHANNELS ||
	    c.max_ctrl > DVX_HT_MOCK_CTRL_BYTES)
		return -EINVAL;
	if (!cfg || (!cfg->rank_a && !cfg->rank_b))
		c.rank_b = 1;
	end_init(a, b, &c, c.rank_b, &a->tick_store);
	end_init(b, a, &c, c.rank_a, &a->tick_store);
	return 0;
}

void dvx_ht_mock_fail_call(struct dvx_ht_mock *m, uint32_t op, uint32_t nth, int err)
{
	m->fail_call = nth ? op : DVX_HT_MOCK_OP_COUNT;
	m->fail_call_nth = nth;
	m->fail_call_err = err;
}

void dvx_ht_mock_fail_req(struct dvx_ht_mock *m, uint32_t op, uint32_t nth, int err)
{
	m->fail_req = nth ? op : DVX_HT_MOCK_OP_COUNT;
	m->fail_req_nth = nth;
	m->fail_req_err = err;
}

static void fail_all(struct dvx_ht_req *q[2], int err)
{
	struct dvx_ht_req *r;

	while ((r = pop(q)))
		dvx_ht_req_done(r, err, 0);
}

void dvx_ht_mock_fail_channel(struct dvx_ht_mock *m, uint32_t channel, int err)
{
	if (channel >= m->cfg.nchannels || m->ch_err[channel])
		return;
	m->ch_err[channel] = err;
	fail_all(m->sq[channel], err);
	fail_all(m->rq[channel], err);
	m->inflight[channel] = 0;
	if (channel == 0) {
		fail_all(m->csq, err);
		fail_all(m->crq, err);
		m->ctrl_busy = 0;
	}
}
