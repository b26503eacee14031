// SPDX-License-Identifier: MIT
/*
 * hal/trace.c - the tracing backend (dvx/hal/trace.h, docs/trace.md): a NIC table that
 * records every call of the wrapped backend's, and UAR registers of its own through
 * which it sees the doorbells of the data path.
 *
 * The few mailbox fields the tracer needs to find the queues again (the rings of a
 * CREATE_CQ / CREATE_QP, the numbers the output returns) are read at docs/prm.md's
 * positions with accessors of its own: the hal includes no dvx/mlx5 header.
 */
#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <string.h>

#include <dvx/byteorder.h>
#include <dvx/hal/trace.h>

#define TR_CMD_CREATE_CQ 0x400u
#define TR_CMD_CREATE_QP 0x500u
#define TR_UMEM_NONE 0xffffffffu

static struct dvx_trace *of_hal(const struct dvx_hal *hal)
{
	return (struct dvx_trace *)(void *)((char *)hal - offsetof(struct dvx_trace, hal));
}

static struct dvx_trace_nic *slot_of(struct dvx_hal_nic *nic)
{
	return (struct dvx_trace_nic *)nic->priv;
}

static unsigned dev_of(const struct dvx_trace *t, const struct dvx_trace_nic *s)
{
	return (unsigned)(s - t->nic);
}

static void lock(struct dvx_trace *t)
{
	while (__atomic_exchange_n(&t->lock, 1, __ATOMIC_ACQUIRE))
		sched_yield();
}

static void unlock(struct dvx_trace *t)
{
	__atomic_store_n(&t->lock, 0, __ATOMIC_RELEASE);
}

/* field [hi:lo] of the big-endian dword at byte @b of a mailbox */
static uint32_t mb_get(const void *mb, unsigned b, unsigned hi, unsigned lo)
{
	uint32_t v = dvx_get_be32((const uint8_t *)mb + b) >> lo;

	return hi - lo == 31 ? v : v & ((1u << (hi - lo + 1)) - 1u);
}

/* ---- writing records ---- */

static void emit(struct dvx_trace *t, const void *buf, size_t len)
{
	if (len && t->sink.write(t->sink.arg, buf, len))
		t->lost++;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)v);
	put16(p + 2, (uint16_t)(v >> 16));
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

/* a record header, then its fixed part; the variable parts follow with sink() */
static void rec_begin(struct dvx_trace *t, unsigned type, unsigned dev, const void *fixed,
		      size_t fixed_len, size_t var_len)
{
	uint8_t h[DVX_TRACE_REC_HDR_BYTES];

	put16(h, (uint16_t)type);
	put16(h + 2, (uint16_t)dev);
	put32(h + 4, (uint32_t)(fixed_len + var_len));
	put64(h + 8, t->seq++);
	emit(t, h, sizeof(h));
	emit(t, fixed, fixed_len);
	t->records++;
}

struct call {
	unsigned op;
	int ret;
	uint32_t id, id2;
	uint64_t a[4];
	const void *in, *out;
	size_t in_len, out_len;
};

static void rec_call(struct dvx_trace *t, unsigned dev, const struct call *c)
{
	uint8_t f[DVX_TRACE_CALL_BYTES];
	unsigned i;

	memset(f, 0, sizeof(f));
	put16(f, (uint16_t)c->op);
	put32(f + 4, (uint32_t)c->ret);
	put32(f + 8, c->id);
	put32(f + 12, c->id2);
	for (i = 0; i < 4; i++)
		put64(f + 16 + 8 * i, c->a[i]);
	put32(f + 48, (uint32_t)c->in_len);
	put32(f + 52, (uint32_t)c->out_len);
	rec_begin(t, DVX_TRACE_REC_CALL, dev, f, sizeof(f), c->in_len + c->out_len);
	emit(t, c->in, c->in_len);
	emit(t, c->out, c->out_len);
}

static void record(struct dvx_trace *t, struct dvx_hal_nic *nic, const struct call *c)
{
	lock(t);
	rec_call(t, dev_of(t, slot_of(nic)), c);
	unlock(t);
}

/* after the wrapped backend's call: its diag becomes the caller's */
static int done(struct dvx_hal_nic *nic, int err)
{
	if (err)
		nic->diag = slot_of(nic)->inner.diag;
	return err;
}

/* record a call without mailboxes and hand its answer back */
static int rec_args(struct dvx_hal_nic *nic, unsigned op, int err, uint32_t id, uint32_t id2,
		    uint64_t a0, uint64_t a1)
{
	struct call c = { .op = op, .ret = err, .id = id, .id2 = id2, .a = { a0, a1 } };

	record(of_hal(nic->hal), nic, &c);
	return done(nic, err);
}

/* ---- the queues the tracer follows ---- */

static const uint8_t *umem_at(struct dvx_trace *t, unsigned dev, uint32_t id, uint64_t off,
			      uint64_t bytes)
{
	unsigned i;

	for (i = 0; i < DVX_TRACE_MAX_UMEMS; i++) {
		struct dvx_trace_umem *u = &t->umem[i];

		if (u->live && u->dev == dev && u->id == id)
			return u->addr && off <= u->len && bytes <= u->len - off ?
				       u->addr + off : NULL;
	}
	return NULL;
}

static void learn_cq(struct dvx_trace *t, unsigned dev, const uint8_t *in, const uint8_t *out)
{
	struct dvx_trace_cq *c = NULL;
	unsigned i, log = mb_get(in, 28, 28, 24);

	for (i = 0; i < DVX_TRACE_MAX_CQS && !c; i++)
		if (!t->cq[i].live)
			c = &t->cq[i];
	if (!c)
		return;
	memset(c, 0, sizeof(*c));
	c->live = 1;
	c->dev = (uint8_t)dev;
	c->log_size = (uint8_t)log;
	c->cqn = mb_get(out, 8, 23, 0);
	/* cq_umem_offset bytes 80-87, cq_umem_id bytes 88-91 (prm 1.6) */
	c->ring = umem_at(t, dev, dvx_get_be32(in + 88), dvx_get_be64(in + 80), 64ull << log);
	c->skip = !c->ring || mb_get(in, 16, 20, 20);	/* unreadable, or collapsed */
}

static void learn_qp(struct dvx_trace *t, unsigned dev, const uint8_t *in, const uint8_t *out)
{
	struct dvx_trace_qp *q = NULL;
	uint64_t wq_off = dvx_get_be64(in + 256), rq_bytes = 0;
	uint32_t wq_id = dvx_get_be32(in + 264);
	unsigned i;

	for (i = 0; i < DVX_TRACE_MAX_QPS && !q; i++)
		if (!t->qp[i].live)
			q = &t->qp[i];
	if (!q)
		return;
	memset(q, 0, sizeof(*q));
	q->live = 1;
	q->dev = (uint8_t)dev;
	q->qpn = mb_get(out, 8, 23, 0);
	q->uar_page = mb_get(in, 36, 23, 0);
	q->log_sq = (uint8_t)mb_get(in, 32, 14, 11);
	q->log_rq = 0xff;
	if (mb_get(in, 196, 26, 24) == 0) {	/* a regular RQ, ahead of the SQ (prm 1.7) */
		q->log_rq = (uint8_t)mb_get(in, 32, 22, 19);
		q->rq_stride = 16u << mb_get(in, 32, 18, 16);
		rq_bytes = (uint64_t)q->rq_stride << q->log_rq;
		q->rq = umem_at(t, dev, wq_id, wq_off, rq_bytes);
	}
	q->sq = umem_at(t, dev, wq_id, wq_off + rq_bytes, 64ull << q->log_sq);
	/* dbr_addr bytes 184-191, dbr_umem_id bytes 252-255 */
	q->dbrec = umem_at(t, dev, dvx_get_be32(in + 252), dvx_get_be64(in + 184), 8);
}

static void forget(struct dvx_trace *t, unsigned dev, unsigned opcode, uint32_t id)
{
	unsigned i;

	for (i = 0; i < DVX_TRACE_MAX_CQS; i++)
		if (opcode == TR_CMD_CREATE_CQ && t->cq[i].live && t->cq[i].dev == dev &&
		    t->cq[i].cqn == id)
			t->cq[i].live = 0;
	for (i = 0; i < DVX_TRACE_MAX_QPS; i++)
		if (opcode == TR_CMD_CREATE_QP && t->qp[i].live && t->qp[i].dev == dev &&
		    t->qp[i].qpn == id)
			t->qp[i].live = 0;
}

/* ---- the data path ---- */

static uint32_t rd_be32(const uint8_t *p)
{
	return dvx_be32_to_cpu((DVX_FORCE dvx_be32)__atomic_load_n((const uint32_t *)(const void *)p,
							  __ATOMIC_ACQUIRE));
}

/* a 16-bit index extended to the free-running count nearest above @base - 2^15 */
static uint64_t extend16(uint64_t base, uint32_t idx16)
{
	return base + (uint16_t)(idx16 - (uint32_t)base);
}

static void ring_bytes(struct dvx_trace *t, const uint8_t *ring, uint64_t size, uint64_t unit,
		       uint64_t first, uint64_t n)
{
	uint64_t i;

	for (i = 0; i < n; i++)
		emit(t, ring + ((first + i) & (size - 1)) * unit, unit);
}

/* the receive WQEs published since the last look */
static void scan_rq(struct dvx_trace *t, struct dvx_trace_qp *q)
{
	uint8_t f[DVX_TRACE_RECV_BYTES];
	uint64_t pi, n;
	uint32_t rec;

	if (q->log_rq == 0xff || !q->rq || !q->dbrec)
		return;
	rec = rd_be32(q->dbrec);
	pi = extend16(q->rq_next, rec & 0xffff);
	n = pi - q->rq_next;
	if (!n || n > (1ull << q->log_rq))
		return;
	put32(f, q->qpn);
	put32(f + 4, rec);
	put32(f + 8, (uint32_t)q->rq_next);
	put32(f + 12, (uint32_t)n);
	put32(f + 16, q->rq_stride);
	rec_begin(t, DVX_TRACE_REC_RECV, q->dev, f, sizeof(f), n * q->rq_stride);
	ring_bytes(t, q->rq, 1ull << q->log_rq, q->rq_stride, q->rq_next, n);
	q->rq_next = pi;
}

static struct dvx_trace_qp *qp_find(struct dvx_trace *t, unsigned dev, uint32_t qpn)
{
	unsigned i;

	for (i = 0; i < DVX_TRACE_MAX_QPS; i++)
		if (t->qp[i].live && t->qp[i].dev == dev && t->qp[i].qpn == qpn)
			return &t->qp[i];
	return NULL;
}

/* the doorbell's order after the record store, and out to the device */
static void mmio_flush(void)
{
#if defined(__x86_64__)
	__asm__ __volatile__("sfence" ::: "memory");
#elif defined(__aarch64__)
	__asm__ __volatile__("dsb st" ::: "memory");
#else
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

static struct dvx_trace_uar *uar_find(struct dvx_trace *t, unsigned dev, uint32_t page_id)
{
	unsigned i;

	for (i = 0; i < DVX_TRACE_MAX_UARS; i++)
		if (t->uar[i].live && t->uar[i].dev == dev && t->uar[i].page_id == page_id)
			return &t->uar[i];
	return NULL;
}

/*
 * One doorbell: recorded with the QP's SQ record and the WQEBBs from the last one
 * recorded up to where it points, then written to the device's register. @flags
 * DVX_TRACE_DB_FROM_RECORD: made by the tracer from the QP's record.
 */
static void doorbell(struct dvx_trace *t, struct dvx_trace_uar *u, unsigned off, uint64_t raw,
		     uint32_t flags)
{
	uint8_t b[8], f[DVX_TRACE_DB_BYTES];
	struct dvx_trace_qp *q;
	uint64_t first = 0, end = 0, n = 0;
	uint32_t qpn, idx, ds, rec = 0;
	unsigned i;

	memcpy(b, &raw, 8);	/* the bytes as the CPU stored them, device order */
	qpn = (uint32_t)b[4] << 16 | (uint32_t)b[5] << 8 | b[6];
	idx = (uint32_t)b[1] << 8 | b[2];
	ds = b[7];
	q = qp_find(t, u->dev, qpn);
	if (q) {
		/* index: the producer index ({pi << 8, qpn << 8} form, ds 0), or the WQE's
		 * own with its ds (rdma-core's form, a BlueFlame copy): docs/sim.md */
		first = q->sq_next;
		end = extend16(first, idx);
		if (ds)
			end += (ds + 3) / 4;
		if (end > first && end - first <= (1ull << q->log_sq))
			n = end - first;
		if (q->dbrec)
			rec = rd_be32(q->dbrec + 4);
		scan_rq(t, q);
	} else {
		t->unknown_db++;
	}
	memset(f, 0, sizeof(f));
	put32(f, u->page_id);
	put32(f + 4, u->reg_off + off);
	put32(f + 8, qpn);
	put32(f + 12, rec);
	for (i = 0; i < 8; i++)
		f[16 + 7 - i] = b[i];	/* most significant first, so raw reads as written */
	put32(f + 24, (uint32_t)first);
	put32(f + 28, q && q->sq ? (uint32_t)n : 0);
	put32(f + 32, flags);
	rec_begin(t, DVX_TRACE_REC_DOORBELL, u->dev, f, sizeof(f), q && q->sq ? n * 64 : 0);
	if (q && q->sq)
		ring_bytes(t, q->sq, 1ull << q->log_sq, 64, first, n);
	if (q && n)
		q->sq_next = end;
	/* to the device: the record was stored before the shadow register was written */
	__atomic_store_n((volatile uint64_t *)(void *)((uint8_t *)u->real_reg + off), raw,
			 __ATOMIC_RELAXED);
	mmio_flush();
}

/*
 * A QP whose record is ahead of the last doorbell taken for it: its own register write
 * was overwritten in the shared shadow register by another QP's before the tracer took
 * it (where the device would have received both), or is about to come. The tracer
 * passes on the doorbell the record calls for, as the software NIC rescues the same
 * case; a later write of the QP's own is then a repeat, which devices take.
 */
static void from_record(struct dvx_trace *t, struct dvx_trace_qp *q)
{
	struct dvx_trace_uar *u;
	uint8_t b[8];
	uint64_t pi, raw;

	if (!q->dbrec || !q->sq)
		return;
	pi = extend16(q->sq_next, rd_be32(q->dbrec + 4) & 0xffff);
	if (pi == q->sq_next || pi - q->sq_next > (1ull << q->log_sq))
		return;
	u = uar_find(t, q->dev, q->uar_page);
	if (!u)
		return;
	dvx_put_be32(b, (uint32_t)(pi & 0xffff) << 8);
	dvx_put_be32(b + 4, q->qpn << 8);
	memcpy(&raw, b, 8);
	t->from_record++;
	doorbell(t, u, 0, raw, DVX_TRACE_DB_FROM_RECORD);
}

static void scan_cq(struct dvx_trace *t, struct dvx_trace_cq *c)
{
	uint8_t f[8];

	if (c->skip)
		return;
	for (;;) {
		const uint8_t *e = c->ring + (c->ci & ((1ull << c->log_size) - 1)) * 64;
		uint8_t op_own = __atomic_load_n(e + 63, __ATOMIC_ACQUIRE);

		/* the owner rule (prm 4.2): opcode not INVALID, owner = pass parity */
		if ((op_own >> 4) == 0xf || (op_own & 1) != ((c->ci >> c->log_size) & 1))
			return;
		put32(f, c->cqn);
		put32(f + 4, (uint32_t)c->ci);
		rec_begin(t, DVX_TRACE_REC_CQE, c->dev, f, sizeof(f), 64);
		emit(t, e, 64);
		c->ci++;
	}
}

void dvx_trace_pump(struct dvx_trace *t)
{
	unsigned i;

	if (!t)
		return;
	lock(t);
	for (i = 0; i < DVX_TRACE_MAX_UARS; i++) {
		struct dvx_trace_uar *u = &t->uar[i];
		unsigned half;

		if (!u->live)
			continue;
		for (half = 0; half <= u->bf_half; half += u->bf_half ? u->bf_half : 1) {
			uint64_t *reg = &u->shadow[(u->reg_off + half) / 8];
			uint64_t v = __atomic_exchange_n(reg, 0, __ATOMIC_ACQUIRE);

			if (v)
				doorbell(t, u, half, v, 0);
		}
	}
	for (i = 0; i < DVX_TRACE_MAX_QPS; i++) {
		if (!t->qp[i].live)
			continue;
		from_record(t, &t->qp[i]);
		scan_rq(t, &t->qp[i]);
	}
	for (i = 0; i < DVX_TRACE_MAX_CQS; i++)
		if (t->cq[i].live)
			scan_cq(t, &t->cq[i]);
	unlock(t);
}

/* ---- the NIC table ---- */

static int tr_nic_list(const struct dvx_hal *hal, struct dvx_hal_nic_info *info, unsigned max,
		       unsigned *count)
{
	return dvx_hal_nic_list(of_hal(hal)->inner, info, max, count);
}

static int tr_nic_open(const struct dvx_hal *hal, const char *name, struct dvx_hal_nic *nic)
{
	struct dvx_trace *t = of_hal(hal);
	struct dvx_trace_nic *s = NULL;
	struct call c;
	unsigned i;
	int err;

	lock(t);
	for (i = 0; i < DVX_TRACE_MAX_NICS && !s; i++)
		if (!t->nic[i].live)
			s = &t->nic[i];
	if (s)
		s->live = 1;	/* claimed; released again below on failure */
	unlock(t);
	if (!s)
		return dvx_hal_diag_set(&nic->diag, -EMFILE, DVX_DIAG_ARG, "nic_open",
					"the tracer holds %u NICs at most", DVX_TRACE_MAX_NICS);
	memset(&s->inner, 0, sizeof(s->inner));
	s->inner.log = nic->log;
	err = dvx_hal_nic_open(t->inner, name, &s->inner);
	nic->priv = s;
	memset(&c, 0, sizeof(c));
	c.op = DVX_TRACE_OP_NIC_OPEN;
	c.ret = err;
	c.in = name;
	c.in_len = strlen(name);
	record(t, nic, &c);
	if (err) {
		nic->diag = s->inner.diag;
		s->live = 0;
		return err;
	}
	nic->info = s->inner.info;
	return 0;
}

static int tr_nic_close(struct dvx_hal_nic *nic)
{
	struct dvx_trace_nic *s = slot_of(nic);
	int err;

	dvx_trace_pump(of_hal(nic->hal));
	err = rec_args(nic, DVX_TRACE_OP_NIC_CLOSE, dvx_hal_nic_close(&s->inner), 0, 0, 0, 0);
	if (!err)
		s->live = 0;
	return err;
}

static int tr_nic_query(struct dvx_hal_nic *nic, struct dvx_hal_nic_attr *attr)
{
	struct call c;
	int err = dvx_hal_nic_query(&slot_of(nic)->inner, attr);

	memset(&c, 0, sizeof(c));
	c.op = DVX_TRACE_OP_NIC_QUERY;
	c.ret = err;
	c.a[0] = attr->phys_port_cnt;
	c.a[1] = attr->vendor_part_id;
	c.out = attr->fw_ver;
	c.out_len = err ? 0 : strnlen(attr->fw_ver, sizeof(attr->fw_ver));
	record(of_hal(nic->hal), nic, &c);
	return done(nic, err);
}

static int tr_query_port(struct dvx_hal_nic *nic, uint8_t port, struct dvx_hal_port_attr *attr)
{
	struct call c;
	int err = dvx_hal_query_port(&slot_of(nic)->inner, port, attr);

	memset(&c, 0, sizeof(c));
	c.op = DVX_TRACE_OP_QUERY_PORT;
	c.ret = err;
	c.id = attr->lid;
	c.a[0] = port;
	c.a[1] = attr->link_layer;
	c.a[2] = attr->state;
	c.a[3] = attr->active_mtu;
	record(of_hal(nic->hal), nic, &c);
	return done(nic, err);
}

/* a call with an input and an output of its own (a GID, a MAC, a mailbox) */
static int rec_io(struct dvx_hal_nic *nic, unsigned op, int err, uint64_t a0, uint64_t a1,
		  const void *in, size_t in_len, const void *out, size_t out_len)
{
	struct call c = { .op = op, .ret = err, .a = { a0, a1 }, .in = in, .out = out,
			  .in_len = in_len, .out_len = out_len };

	record(of_hal(nic->hal), nic, &c);
	return done(nic, err);
}

static int tr_query_gid(struct dvx_hal_nic *nic, uint8_t port, uint32_t index,
			struct dvx_hal_gid *gid)
{
	struct call c;
	int err = dvx_hal_query_gid(&slot_of(nic)->inner, port, index, gid);

	memset(&c, 0, sizeof(c));
	c.op = DVX_TRACE_OP_QUERY_GID;
	c.ret = err;
	c.id = gid->valid;
	c.id2 = gid->type;
	c.a[0] = port;
	c.a[1] = index;
	c.out = gid->raw;
	c.out_len = err ? 0 : 16;
	record(of_hal(nic->hal), nic, &c);
	return done(nic, err);
}

static int tr_devx_cmd(struct dvx_hal_nic *nic, const void *in, size_t inlen, void *out,
		       size_t outlen)
{
	int err = dvx_hal_devx_cmd(&slot_of(nic)->inner, in, inlen, out, outlen);

	return rec_io(nic, DVX_TRACE_OP_DEVX_CMD, err, 0, 0, in, inlen, out, outlen);
}

static int tr_obj_create(struct dvx_hal_nic *nic, const void *in, size_t inlen, void *out,
			 size_t outlen, struct dvx_hal_obj *obj)
{
	struct dvx_trace *t = of_hal(nic->hal);
	unsigned dev = dev_of(t, slot_of(nic)), op = mb_get(in, 0, 31, 16);
	struct call c;
	int err = dvx_hal_obj_create(&slot_of(nic)->inner, in, inlen, out, outlen, obj);

	memset(&c, 0, sizeof(c));
	c.op = DVX_TRACE_OP_OBJ_CREATE;
	c.ret = err;
	c.id = err ? 0 : mb_get(out, 8, 23, 0);
	c.in = in;
	c.in_len = inlen;
	c.out = out;
	c.out_len = outlen;
	lock(t);
	rec_call(t, dev, &c);
	if (!err && op == TR_CMD_CREATE_CQ && inlen >= 92 && outlen >= 12)
		learn_cq(t, dev, in, out);
	if (!err && op == TR_CMD_CREATE_QP && inlen >= 268 && outlen >= 12)
		learn_qp(t, dev, in, out);
	unlock(t);
	return done(nic, err);
}

typedef int (*obj_cmd_fn)(struct dvx_hal_nic *nic, struct dvx_hal_obj *obj, const void *in,
			  size_t inlen, void *out, size_t outlen);

/* modify and query: doorbells rung before them reach the device first */
static int obj_cmd(struct dvx_hal_nic *nic, unsigned op, obj_cmd_fn fn, struct dvx_hal_obj *obj,
		   const void *in, size_t inlen, void *out, size_t outlen)
{
	int err;

	dvx_trace_pump(of_hal(nic->hal));
	err = fn(&slot_of(nic)->inner, obj, in, inlen, out, outlen);
	return rec_io(nic, op, err, obj->id, obj->cmd_opcode, in, inlen, out, outlen);
}

static int tr_obj_modify(struct dvx_hal_nic *nic, struct dvx_hal_obj *obj, const void *in,
			 size_t inlen, void *out, size_t outlen)
{
	return obj_cmd(nic, DVX_TRACE_OP_OBJ_MODIFY, dvx_hal_obj_modify, obj, in, inlen, out,
		       outlen);
}

static int tr_obj_query(struct dvx_hal_nic *nic, struct dvx_hal_obj *obj, const void *in,
			size_t inlen, void *out, size_t outlen)
{
	return obj_cmd(nic, DVX_TRACE_OP_OBJ_QUERY, dvx_hal_obj_query, obj, in, inlen, out,
		       outlen);
}

static int tr_obj_destroy(struct dvx_hal_nic *nic, struct dvx_hal_obj *obj)
{
	struct dvx_trace *t = of_hal(nic->hal);
	unsigned dev = dev_of(t, slot_of(nic));
	uint32_t id = obj->id;
	unsigned opcode = obj->cmd_opcode;
	struct call c;
	int err;

	dvx_trace_pump(t);
	err = dvx_hal_obj_destroy(&slot_of(nic)->inner, obj);
	memset(&c, 0, sizeof(c));
	c.op = DVX_TRACE_OP_OBJ_DESTROY;
	c.ret = err;
	c.a[0] = id;
	c.a[1] = opcode;
	lock(t);
	rec_call(t, dev, &c);
	if (!err)
		forget(t, dev, opcode, id);
	unlock(t);
	return done(nic, err);
}

static int tr_umem_reg(struct dvx_hal_nic *nic, const struct dvx_hal_umem_req *req,
		       struct dvx_hal_umem *umem)
{
	struct dvx_trace *t = of_hal(nic->hal);
	unsigned dev = dev_of(t, slot_of(nic)), i;
	struct call c;
	int err = dvx_hal_umem_reg(&slot_of(nic)->inner, req, umem);

	memset(&c, 0, sizeof(c));
	c.op = DVX_TRACE_OP_UMEM_REG;
	c.ret = err;
	c.id = err ? 0 : umem->id;
	c.id2 = req->dmabuf_fd >= 0;
	c.a[0] = (uint64_t)(uintptr_t)req->addr;
	c.a[1] = req->len;
	c.a[2] = req->access | (req->dmabuf_fd >= 0 ? req->dmabuf_offset << 32 : 0);
	c.a[3] = req->pgsz_bitmap;
	lock(t);
	rec_call(t, dev, &c);
	for (i = 0; !err && i < DVX_TRACE_MAX_UMEMS; i++) {
		struct dvx_trace_umem *u = &t->umem[i];

		if (u->live)
			continue;
		u->live = 1;
		u->dev = (uint8_t)dev;
		u->id = umem->id;
		u->addr = req->dmabuf_fd >= 0 ? NULL : (uint8_t *)req->addr;
		u->len = req->len;
		break;
	}
	unlock(t);
	return done(nic, err);
}

static int tr_umem_dereg(struct dvx_hal_nic *nic, struct dvx_hal_umem *umem)
{
	struct dvx_trace *t = of_hal(nic->hal);
	unsigned dev = dev_of(t, slot_of(nic)), i;
	uint32_t id = umem->id;
	struct call c;
	int err = dvx_hal_umem_dereg(&slot_of(nic)->inner, umem);

	memset(&c, 0, sizeof(c));
	c.op = DVX_TRACE_OP_UMEM_DEREG;
	c.ret = err;
	c.a[0] = id;
	lock(t);
	rec_call(t, dev, &c);
	for (i = 0; !err && i < DVX_TRACE_MAX_UMEMS; i++)
		if (t->umem[i].live && t->umem[i].dev == dev && t->umem[i].id == id)
			t->umem[i].live = 0;
	unlock(t);
	return done(nic, err);
}

static int tr_uar_alloc(struct dvx_hal_nic *nic, enum dvx_uar_type type, struct dvx_hal_uar *uar)
{
	struct dvx_trace *t = of_hal(nic->hal);
	unsigned dev = dev_of(t, slot_of(nic)), i;
	struct dvx_trace_uar *u = NULL;
	struct call c;
	int err = dvx_hal_uar_alloc(&slot_of(nic)->inner, type, uar);

	lock(t);
	for (i = 0; !err && i < DVX_TRACE_MAX_UARS && !u; i++)
		if (!t->uar[i].live)
			u = &t->uar[i];
	if (!err && u) {
		uintptr_t off = (uintptr_t)uar->reg_addr - (uintptr_t)uar->base_addr;

		memset(u, 0, sizeof(*u));
		u->live = 1;
		u->dev = (uint8_t)dev;
		u->page_id = uar->page_id;
		u->reg_off = (uint32_t)(off < 4096 - 8 ? off : 0x800);
		/* a BlueFlame register has a second half the writers switch to */
		u->bf_half = uar->type == DVX_UAR_BF && !uar->nc && u->reg_off + 0x100 < 4096 ?
				     0x100 : 0;
		u->real_reg = uar->reg_addr;
		u->real_base = uar->base_addr;
		uar->base_addr = u->shadow;
		uar->reg_addr = (uint8_t *)u->shadow + u->reg_off;
	}
	memset(&c, 0, sizeof(c));
	c.op = DVX_TRACE_OP_UAR_ALLOC;
	c.ret = err;
	c.id = err ? 0 : uar->page_id;
	c.id2 = err ? 0 : uar->type | uar->nc << 8;
	c.a[0] = type;
	c.a[1] = u ? u->reg_off : 0;
	rec_call(t, dev, &c);
	unlock(t);
	if (!err && !u) {
		dvx_hal_uar_free(&slot_of(nic)->inner, uar);
		return dvx_hal_diag_set(&nic->diag, -ENOMEM, DVX_DIAG_ARG, "uar_alloc",
					"the tracer holds %u UARs at most", DVX_TRACE_MAX_UARS);
	}
	return done(nic, err);
}

static int tr_uar_free(struct dvx_hal_nic *nic, struct dvx_hal_uar *uar)
{
	struct dvx_trace *t = of_hal(nic->hal);
	unsigned dev = dev_of(t, slot_of(nic)), i;
	struct dvx_trace_uar *u = NULL;
	void *reg = uar->reg_addr, *base = uar->base_addr;
	struct call c;
	int err;

	dvx_trace_pump(t);
	for (i = 0; i < DVX_TRACE_MAX_UARS && !u; i++)
		if (t->uar[i].live && (void *)t->uar[i].shadow == uar->base_addr)
			u = &t->uar[i];
	if (u) {	/* the wrapped backend frees what it handed out */
		uar->reg_addr = u->real_reg;
		uar->base_addr = u->real_base;
	}
	err = dvx_hal_uar_free(&slot_of(nic)->inner, uar);
	if (err) {
		uar->reg_addr = reg;
		uar->base_addr = base;
	}
	memset(&c, 0, sizeof(c));
	c.op = DVX_TRACE_OP_UAR_FREE;
	c.ret = err;
	c.a[0] = uar->page_id;
	lock(t);
	rec_call(t, dev, &c);
	if (!err && u)
		u->live = 0;
	unlock(t);
	return done(nic, err);
}

static int tr_pd_alloc(struct dvx_hal_nic *nic, struct dvx_hal_pd *pd)
{
	int err = dvx_hal_pd_alloc(&slot_of(nic)->inner, pd);

	return rec_args(nic, DVX_TRACE_OP_PD_ALLOC, err, err ? 0 : pd->pdn, 0, 0, 0);
}

static int tr_pd_free(struct dvx_hal_nic *nic, struct dvx_hal_pd *pd)
{
	uint32_t pdn = pd->pdn;

	return rec_args(nic, DVX_TRACE_OP_PD_FREE, dvx_hal_pd_free(&slot_of(nic)->inner, pd), 0,
			0, pdn, 0);
}

static int tr_eqn_query(struct dvx_hal_nic *nic, uint32_t vector, uint32_t *eqn)
{
	int err = dvx_hal_eqn_query(&slot_of(nic)->inner, vector, eqn);

	return rec_args(nic, DVX_TRACE_OP_EQN_QUERY, err, err ? 0 : *eqn, 0, vector, 0);
}

static int tr_mr_reg(struct dvx_hal_nic *nic, struct dvx_hal_pd *pd,
		     const struct dvx_hal_mr_req *req, struct dvx_hal_mr *mr)
{
	struct call c;
	int err = dvx_hal_mr_reg(&slot_of(nic)->inner, pd, req, mr);

	memset(&c, 0, sizeof(c));
	c.op = DVX_TRACE_OP_MR_REG;
	c.ret = err;
	c.id = err ? 0 : mr->lkey;
	c.id2 = err ? 0 : mr->rkey;
	c.a[0] = (uint64_t)(uintptr_t)req->addr;
	c.a[1] = req->len;
	c.a[2] = req->iova;
	c.a[3] = req->access | (uint64_t)req->flags << 32;
	record(of_hal(nic->hal), nic, &c);
	return done(nic, err);
}

static int tr_mr_dereg(struct dvx_hal_nic *nic, struct dvx_hal_mr *mr)
{
	uint32_t lkey = mr->lkey;

	return rec_args(nic, DVX_TRACE_OP_MR_DEREG, dvx_hal_mr_dereg(&slot_of(nic)->inner, mr),
			0, 0, lkey, 0);
}

static int tr_roce_rmac(struct dvx_hal_nic *nic, struct dvx_hal_pd *pd, uint8_t port,
			uint32_t sgid_index, const uint8_t dgid[16], uint8_t mac[6])
{
	int err = dvx_hal_roce_rmac(&slot_of(nic)->inner, pd, port, sgid_index, dgid, mac);

	return rec_io(nic, DVX_TRACE_OP_ROCE_RMAC, err, port, sgid_index, dgid, 16, mac,
		      err ? 0 : 6);
}

static void tr_nic_progress(struct dvx_hal_nic *nic)
{
	struct dvx_trace *t = of_hal(nic->hal);

	dvx_trace_pump(t);	/* the doorbells out to the device ... */
	dvx_hal_nic_progress(&slot_of(nic)->inner);
	dvx_trace_pump(t);	/* ... and what it answered */
}

static const struct dvx_hal_nic_ops trace_nic_ops = {
	.nic_list = tr_nic_list,
	.nic_open = tr_nic_open,
	.nic_close = tr_nic_close,
	.nic_query = tr_nic_query,
	.query_port = tr_query_port,
	.query_gid = tr_query_gid,
	.devx_cmd = tr_devx_cmd,
	.obj_create = tr_obj_create,
	.obj_modify = tr_obj_modify,
	.obj_query = tr_obj_query,
	.obj_destroy = tr_obj_destroy,
	.umem_reg = tr_umem_reg,
	.umem_dereg = tr_umem_dereg,
	.uar_alloc = tr_uar_alloc,
	.uar_free = tr_uar_free,
	.pd_alloc = tr_pd_alloc,
	.pd_free = tr_pd_free,
	.eqn_query = tr_eqn_query,
	.mr_reg = tr_mr_reg,
	.mr_dereg = tr_mr_dereg,
	.roce_rmac = tr_roce_rmac,
	.nic_progress = tr_nic_progress,
};

int dvx_trace_init(struct dvx_trace *t, const struct dvx_hal *inner,
		   const struct dvx_trace_sink *sink)
{
	uint8_t h[DVX_TRACE_FILE_HDR_BYTES];

	if (!t || !inner || !inner->nic || !sink || !sink->write)
		return -EINVAL;
	memset(t, 0, sizeof(*t));
	t->inner = inner;
	t->sink = *sink;
	/* the host and GPU tables find their backend's state through ctx (shared) */
	t->hal.nic = &trace_nic_ops;
	t->hal.host = inner->host;
	t->hal.gpu = inner->gpu;
	t->hal.ctx = inner->ctx;
	t->hal.name = "trace";
	memcpy(h, DVX_TRACE_MAGIC, 8);
	put32(h + 8, DVX_TRACE_VERSION);
	put32(h + 12, DVX_TRACE_FILE_HDR_BYTES);
	emit(t, h, sizeof(h));
	return t->lost ? -EIO : 0;
}

const struct dvx_hal *dvx_trace_hal(struct dvx_trace *t)
{
	return t ? &t->hal : NULL;
}

int dvx_trace_fini(struct dvx_trace *t)
{
	unsigned i;

	if (!t)
		return -EINVAL;
	for (i = 0; i < DVX_TRACE_MAX_NICS; i++)
		if (t->nic[i].live)
			return -EBUSY;
	dvx_trace_pump(t);
	return t->lost ? -EIO : 0;
}
