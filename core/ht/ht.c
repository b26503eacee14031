// SPDX-License-Identifier: MIT
/*
 * core/ht/ht.c - the host transport's interface (dvx/ht/ht.h): the checks every
 * backend shares, the request's common fields, and the waits (docs/ht.md).
 */
#include <errno.h>
#include <string.h>

#include <dvx/byteorder.h>
#include <dvx/ht/ht.h>

static int ht_valid(const struct dvx_ht *t)
{
	return t && t->live == DVX_LIVE && t->ops;
}

/*
 * Fill the request's common fields and mark it busy, run the backend's issue, and put
 * the request back as it was when the backend refuses (an issue that fails changes
 * nothing).
 */
static int issue(struct dvx_ht *t, struct dvx_ht_req *req, uint8_t kind, uint32_t channel,
		 void *buf, uint64_t len, int (*op)(struct dvx_ht *, struct dvx_ht_req *,
						    const void *), const void *arg)
{
	struct dvx_ht_req keep;
	int err;

	if (req->state == DVX_HT_RS_BUSY)
		return -EBUSY;
	keep = *req;
	memset(req, 0, sizeof(*req));
	req->kind = kind;
	req->state = DVX_HT_RS_BUSY;
	req->channel = (uint16_t)channel;
	req->t = t;
	req->buf = buf;
	req->len = len;
	err = op(t, req, arg);
	if (err)
		*req = keep;
	return err;
}

struct ctrl_arg {
	const void *buf;
	size_t len;
};

static int op_send_ctrl(struct dvx_ht *t, struct dvx_ht_req *req, const void *a)
{
	const struct ctrl_arg *c = a;

	return t->ops->send_ctrl(t, c->buf, c->len, req);
}

static int op_recv_ctrl(struct dvx_ht *t, struct dvx_ht_req *req, const void *a)
{
	const struct ctrl_arg *c = a;

	return t->ops->recv_ctrl(t, (void *)(uintptr_t)c->buf, c->len, req);
}

static int op_send_chunk(struct dvx_ht *t, struct dvx_ht_req *req, const void *a)
{
	return t->ops->send_chunk(t, a, req);
}

static int op_recv_chunk(struct dvx_ht *t, struct dvx_ht_req *req, const void *a)
{
	return t->ops->recv_chunk(t, a, req);
}

int dvx_ht_send_ctrl(struct dvx_ht *t, const void *buf, size_t len, struct dvx_ht_req *req)
{
	struct ctrl_arg a = { buf, len };

	if (!ht_valid(t) || !req || (!buf && len))
		return -EINVAL;
	if (len > t->max_ctrl)
		return req->state == DVX_HT_RS_BUSY ? -EBUSY : -EMSGSIZE;
	return issue(t, req, DVX_HT_REQ_CTRL_SEND, 0, (void *)(uintptr_t)buf, len, op_send_ctrl,
		     &a);
}

int dvx_ht_recv_ctrl(struct dvx_ht *t, void *buf, size_t len, struct dvx_ht_req *req)
{
	struct ctrl_arg a = { buf, len };

	if (!ht_valid(t) || !req || (!buf && len))
		return -EINVAL;
	return issue(t, req, DVX_HT_REQ_CTRL_RECV, 0, buf, len, op_recv_ctrl, &a);
}

int dvx_ht_send_chunk(struct dvx_ht *t, const struct dvx_ht_chunk *c, struct dvx_ht_req *req)
{
	if (!ht_valid(t) || !req || !c || !c->buf || !c->len || c->flags ||
	    c->channel >= t->nchannels)
		return -EINVAL;
	if (c->len > t->max_chunk)
		return req->state == DVX_HT_RS_BUSY ? -EBUSY : -EMSGSIZE;
	return issue(t, req, DVX_HT_REQ_SEND, c->channel, c->buf, c->len, op_send_chunk, c);
}

int dvx_ht_recv_chunk(struct dvx_ht *t, const struct dvx_ht_chunk *c, struct dvx_ht_req *req)
{
	if (!ht_valid(t) || !req || !c || c->flags || c->channel >= t->nchannels)
		return -EINVAL;
	return issue(t, req, DVX_HT_REQ_RECV, c->channel, c->buf, c->len, op_recv_chunk, c);
}

int dvx_ht_test(struct dvx_ht_req *req, int *done)
{
	struct dvx_ht *t;

	if (!req || !done || req->state == DVX_HT_RS_IDLE || !ht_valid(req->t))
		return -EINVAL;
	t = req->t;
	if (req->state == DVX_HT_RS_BUSY)
		t->ops->progress(t);
	*done = req->state == DVX_HT_RS_DONE;
	return *done ? req->err : 0;
}

int dvx_ht_wait(struct dvx_ht_req *req, uint64_t timeout_ns)
{
	struct dvx_ht *t;
	uint64_t start;
	int done, err;

	if (!req || req->state == DVX_HT_RS_IDLE || !ht_valid(req->t))
		return -EINVAL;
	t = req->t;
	start = t->ops->now_ns(t);
	for (;;) {
		done = 0;
		err = dvx_ht_test(req, &done);
		if (done || err)
			return err;
		/* a timed-out wait leaves the request in flight: wait again later */
		if (t->ops->now_ns(t) - start >= timeout_ns)
			return -ETIMEDOUT;
	}
}

int dvx_ht_progress(struct dvx_ht *t)
{
	if (!ht_valid(t))
		return -EINVAL;
	return t->ops->progress(t);
}

int dvx_ht_recover(struct dvx_ht *t, uint32_t channel, uint64_t timeout_ns)
{
	if (!ht_valid(t) || channel >= t->nchannels)
		return -EINVAL;
	if (!t->ops->recover)
		return -EOPNOTSUPP;
	return t->ops->recover(t, channel, timeout_ns);
}

int dvx_ht_connected(const struct dvx_ht *t)
{
	return ht_valid(t) && t->ops->connected(t);
}

int dvx_ht_wait_connected(struct dvx_ht *t, uint64_t timeout_ns)
{
	uint64_t start;
	int err;

	if (!ht_valid(t))
		return -EINVAL;
	start = t->ops->now_ns(t);
	for (;;) {
		err = t->ops->progress(t);
		if (err)
			return err;
		if (t->ops->connected(t))
			return 0;
		if (t->ops->now_ns(t) - start >= timeout_ns)
			return -ETIMEDOUT;
	}
}

int dvx_ht_ready(const struct dvx_ht *t, uint32_t channel, uint32_t dir)
{
	if (!ht_valid(t) || channel >= t->nchannels || dir > DVX_HT_RECV)
		return 0;
	return t->ops->ready(t, channel, dir);
}

int dvx_ht_status(const struct dvx_ht *t, int32_t channel)
{
	if (!ht_valid(t) || channel < -1 || (channel >= 0 && (uint32_t)channel >= t->nchannels))
		return -EINVAL;
	return t->ops->status(t, channel);
}

int dvx_ht_export(struct dvx_ht *t, void *buf, uint64_t len, const struct dvx_mr *mr,
		  struct dvx_ht_desc *d)
{
	if (!ht_valid(t) || !buf || !len || !d)
		return -EINVAL;
	if (!t->ops->export_buf)
		return -EOPNOTSUPP;
	return t->ops->export_buf(t, buf, len, mr, d);
}

int dvx_ht_import(struct dvx_ht *t, const struct dvx_ht_desc *d, struct dvx_ht_rbuf *r)
{
	if (!ht_valid(t) || !d || !r)
		return -EINVAL;
	if (!t->ops->import_buf)
		return -EOPNOTSUPP;
	return t->ops->import_buf(t, d, r);
}

void dvx_ht_desc_pack(struct dvx_ht_desc *d, uint64_t addr, uint64_t len, uint32_t key)
{
	memset(d, 0, sizeof(*d));
	d->magic = dvx_le32(DVX_HT_DESC_MAGIC);
	d->key = dvx_le32(key);
	d->addr = dvx_le64(addr);
	d->len = dvx_le64(len);
}

int dvx_ht_desc_unpack(const struct dvx_ht_desc *d, struct dvx_ht_rbuf *r)
{
	if (dvx_le32(d->magic) != DVX_HT_DESC_MAGIC || !d->len || d->rsvd)
		return -EBADMSG;
	memset(r, 0, sizeof(*r));
	r->addr = dvx_le64(d->addr);
	r->len = dvx_le64(d->len);
	r->key = dvx_le32(d->key);
	return 0;
}
