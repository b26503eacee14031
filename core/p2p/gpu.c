// SPDX-License-Identifier: MIT
/*
 * core/p2p/gpu.c - handing a P2P transport's lanes to GPU threads (dvx/p2p/gpu.h):
 * registration of its host memory for the GPU, the device handle, the way back. The
 * lanes' states travel as they are: the GPU runs the same lane-queue steps
 * (dvx/p2p/queue.h) on the same state layout.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <dvx/p2p/gpu.h>
#include <dvx/p2p/setup.h>
#include <dvx/gpu/gpu.h>
#include <dvx/hal/host.h>
#include <dvx/hal/nic.h>

#define LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

static uint32_t total_lanes(const struct dvx_p2p *t)
{
	if (!t || !t->lanes || t->nranks < 2 || !t->nlanes)
		return 0;
	return t->npeers * t->nlanes;
}

int dvx_p2p_gpu_mem_req(const struct dvx_p2p *t, uint64_t *bytes)
{
	uint32_t n = total_lanes(t);

	if (!n || !bytes)
		return -EINVAL;
	*bytes = DVX_P2P_DEV_MEM_BYTES(n, t->nranks);
	return 0;
}

uint32_t dvx_p2p_gpu_nregs(const struct dvx_p2p *t)
{
	uint32_t n = total_lanes(t);

	return n ? n + 1 : 0;
}

/* the registration holding [@p, @p + @len), or NULL */
static const struct dvx_gpu_hostreg *reg_of(const struct dvx_gpu_hostreg *regs, uint32_t nregs,
					    const void *p, uint64_t len)
{
	uintptr_t a = (uintptr_t)p;
	uint32_t i;

	for (i = 0; i < nregs; i++) {
		uintptr_t b = (uintptr_t)regs[i].base;

		if (a >= b && a - b <= regs[i].base_len && len <= regs[i].base_len - (a - b))
			return &regs[i];
	}
	return NULL;
}

static uint64_t dptr_of(const struct dvx_gpu_hostreg *regs, uint32_t nregs, const void *p,
			uint64_t len)
{
	const struct dvx_gpu_hostreg *r = reg_of(regs, nregs, p, len);

	if (!r)
		return 0;
	return r->dptr + (uint64_t)((uintptr_t)p - (uintptr_t)r->addr);
}

int dvx_p2p_gpu_unregister(struct dvx_gpu_hostreg *regs, uint32_t nregs)
{
	int err = 0, e;

	while (nregs-- > 0) {
		e = dvx_gpu_host_unregister(&regs[nregs]);
		if (e && !err)
			err = e;
	}
	return err;
}

int dvx_p2p_gpu_register(const struct dvx_p2p *t, struct dvx_gpu *gpu, void *rings,
			 uint64_t rings_len, int iomem, struct dvx_gpu_hostreg *regs,
			 uint32_t *nregs)
{
	uint32_t n = total_lanes(t), i, k = 0;
	int err;

	if (!n || !gpu || !rings || !rings_len || !regs || !nregs)
		return -EINVAL;
	*nregs = 0;
	err = dvx_gpu_host_register(gpu, rings, rings_len, 0, &regs[k]);
	if (err)
		return err;
	k++;
	for (i = 0; i < n; i++) {
		uint8_t *reg = t->lanes[i].main.d.sq.uar_reg;

		if (!reg) {
			err = -EINVAL;
			break;
		}
		if (reg_of(regs, k, reg, 8))
			continue;	/* the page is registered already */
		err = dvx_gpu_host_register(gpu, reg, 8, iomem ? DVX_GPU_HOST_IOMEM : 0, &regs[k]);
		if (err)
			break;
		k++;
	}
	if (err) {
		dvx_p2p_gpu_unregister(regs, k);
		return err;
	}
	*nregs = k;
	return 0;
}

/* describe host queue @q for kernels; its state goes to @state_dptr as it is */
static int export_q(const struct dvx_p2p_q *q, const struct dvx_gpu_hostreg *regs,
		    uint32_t nregs, uint64_t state_dptr, uint32_t gated, struct dvx_p2p_qdesc *dq,
		    struct dvx_p2p_qstate *st)
{
	const struct dvx_p2p_qdesc *d = &q->d;
	uint64_t ring = dptr_of(regs, nregs, d->sq.wq.buf,
				(uint64_t)d->sq.nwqebb * DVX_MLX5_SEND_WQE_BB);
	uint64_t dbrec = dptr_of(regs, nregs, d->sq.dbrec, 8);
	uint64_t uar = dptr_of(regs, nregs, d->sq.uar_reg, 8);
	uint64_t cq = dptr_of(regs, nregs, d->cq.buf, (uint64_t)DVX_MLX5_CQE_SIZE << d->cq.log_size);
	uint64_t cq_dbrec = dptr_of(regs, nregs, d->cq.dbrec, 8);
	int err;

	if (!ring || !dbrec || !uar || !cq || !cq_dbrec)
		return -EINVAL;
	memset(dq, 0, sizeof(*dq));
	/* the rings, records and CQs are host memory: the GPU orders at system scope */
	err = dvx_mlx5_sq_init(&dq->sq, NULL,
			       &(struct dvx_mlx5_sq_cfg){
				       (void *)(uintptr_t)ring, d->sq.nwqebb, d->sq.wq.qpn,
				       d->sq.wq.max_inline, (dvx_be32 *)(uintptr_t)dbrec,
				       (void *)(uintptr_t)uar, 0, DVX_MLX5_SQ_SYS });
	if (err)
		return err;
	dq->cq = d->cq;
	dq->cq.buf = (uint8_t *)(uintptr_t)cq;
	dq->cq.dbrec = (dvx_be32 *)(uintptr_t)cq_dbrec;
	dq->cq.flags = DVX_MLX5_CQ_SYS;
	dq->cq_base = d->cq_base;
	dq->cqn = d->cqn;
	dq->gated = gated;
	dq->st = (struct dvx_p2p_qstate *)(uintptr_t)state_dptr;
	*st = q->s;
	st->poll_lock = 0;
	st->ctrs.ci_poll = 0;
	st->gate = 0;
	st->inside = 0;
	return 0;
}

int dvx_p2p_gpu_export(struct dvx_p2p *t, struct dvx_gpu *gpu,
		       const struct dvx_gpu_hostreg *regs, uint32_t nregs, uint64_t dmem,
		       uint64_t dmem_len, uint64_t timeout_ns, struct dvx_p2p_dev *dev)
{
	uint32_t n = total_lanes(t), i, gated = (t && (t->flags & DVX_P2P_F_GPU_RECOVER)) ? 1 : 0;
	uint64_t qs_base;
	int err;

	if (!n || !gpu || !regs || !nregs || !dmem || (dmem & 63) ||
	    dmem_len < DVX_P2P_DEV_MEM_BYTES(n, t->nranks) || !dev)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		struct dvx_p2p_lane *l = &t->lanes[i];

		err = dvx_p2p_q_err(&l->main.s);
		if (!err)
			err = dvx_p2p_q_err(&l->comp.s);
		if (err)
			return err;
		err = dvx_p2p_q_drain(&l->main, timeout_ns);
		if (!err && l->comp.s.state != DVX_P2P_Q_UNUSED)
			err = dvx_p2p_q_drain(&l->comp, timeout_ns);
		if (err)
			return err;
	}
	qs_base = dmem + (uint64_t)n * DVX_P2P_DEV_LANE_BYTES;
	for (i = 0; i < n; i++) {
		const struct dvx_p2p_lane *l = &t->lanes[i];
		struct dvx_p2p_dev_lane dl;
		struct dvx_p2p_qstate st[2];
		uint64_t sd = qs_base + (uint64_t)i * 2 * DVX_P2P_QSTATE_BYTES;

		memset(&dl, 0, sizeof(dl));
		memset(st, 0, sizeof(st));
		err = export_q(&l->main, regs, nregs, sd, gated, &dl.main, &st[0]);
		if (!err && l->comp.s.state != DVX_P2P_Q_UNUSED) {
			err = export_q(&l->comp, regs, nregs, sd + DVX_P2P_QSTATE_BYTES, gated,
				       &dl.comp, &st[1]);
			dl.has_comp = 1;
		}
		if (err)
			return err;
		dl.nic = l->nic;
		dl.peer = l->peer;
		dl.index = l->index;
		dl.sink_lkey = l->sink_lkey;
		err = dvx_gpu_memcpy_htod(gpu, dmem + (uint64_t)i * DVX_P2P_DEV_LANE_BYTES, &dl,
					  sizeof(dl));
		if (!err)
			err = dvx_gpu_memcpy_htod(gpu, sd, st, sizeof(st));
		if (err)
			return err;
	}
	/* the rank -> lane peer index map, after the states */
	err = dvx_gpu_memcpy_htod(gpu, qs_base + (uint64_t)n * 2 * DVX_P2P_QSTATE_BYTES,
				  t->peer_idx, (uint64_t)t->nranks * sizeof(int32_t));
	if (err)
		return err;
	memset(dev, 0, sizeof(*dev));
	dev->version = DVX_P2P_DEV_VERSION;
	dev->rank = t->rank;
	dev->nranks = t->nranks;
	dev->nlanes = t->nlanes;
	dev->companions = t->companions;
	dev->flags = t->all_peers ? DVX_P2P_DEV_ALL_PEERS : 0;
	dev->lanes = dmem;
	dev->peer_idx = qs_base + (uint64_t)n * 2 * DVX_P2P_QSTATE_BYTES;
	dev->npeers = t->npeers;
	return 0;
}

/* continue host queue @q with the state the GPU left (its CQEs left unconsumed are the
 * host's to poll; an error the GPU saw keeps the queue failed) */
static void import_q(struct dvx_p2p_q *q, const struct dvx_p2p_qstate *st)
{
	int err = dvx_p2p_q_err(&q->s);

	q->s = *st;
	q->s.poll_lock = 0;
	q->s.ctrs.ci_poll = 0;
	q->s.gate = 0;
	q->s.inside = 0;
	q->s.lost_lo = q->s.lost_hi = 0;
	q->s.lost_err = 0;
	if (err && q->s.state != DVX_P2P_Q_FAILED) {
		/* failed on the host before the export: keep that */
		q->s.err = err;
		q->s.state = DVX_P2P_Q_FAILED;
	}
}

int dvx_p2p_gpu_import(struct dvx_p2p *t, struct dvx_gpu *gpu, const struct dvx_p2p_dev *dev)
{
	uint32_t n = total_lanes(t), i;
	uint64_t qs_base;
	int err;

	if (!n || !gpu || !dev || dev->version != DVX_P2P_DEV_VERSION || !dev->lanes ||
	    dev->nlanes != t->nlanes || dev->nranks != t->nranks || dev->npeers != t->npeers)
		return -EINVAL;
	qs_base = dev->lanes + (uint64_t)n * DVX_P2P_DEV_LANE_BYTES;
	/* check first, change nothing on -EBUSY */
	for (i = 0; i < n; i++) {
		struct dvx_p2p_qstate st[2];

		err = dvx_gpu_memcpy_dtoh(gpu, st, qs_base + (uint64_t)i * 2 *
					  DVX_P2P_QSTATE_BYTES, sizeof(st));
		if (err)
			return err;
		if (st[0].ctrs.resv != st[0].ctrs.ready ||
		    (t->lanes[i].comp.s.state != DVX_P2P_Q_UNUSED &&
		     st[1].ctrs.resv != st[1].ctrs.ready))
			return -EBUSY;
	}
	for (i = 0; i < n; i++) {
		struct dvx_p2p_lane *l = &t->lanes[i];
		struct dvx_p2p_qstate st[2];

		err = dvx_gpu_memcpy_dtoh(gpu, st, qs_base + (uint64_t)i * 2 *
					  DVX_P2P_QSTATE_BYTES, sizeof(st));
		if (err)
			return err;
		import_q(&l->main, &st[0]);
		if (l->comp.s.state != DVX_P2P_Q_UNUSED)
			import_q(&l->comp, &st[1]);
	}
	return 0;
}

/* ---- recovering a lane the GPU drives ---- */

#define QS_GATE offsetof(struct dvx_p2p_qstate, gate)
#define QS_INSIDE offsetof(struct dvx_p2p_qstate, inside)

/* the device addresses of lane @idx's descriptor and its two queue states */
static void lane_addrs(const struct dvx_p2p *t, const struct dvx_p2p_dev *dev, uint32_t idx,
		       uint64_t *desc, uint64_t *st)
{
	uint64_t qs_base = dev->lanes + (uint64_t)total_lanes(t) * DVX_P2P_DEV_LANE_BYTES;

	*desc = dev->lanes + (uint64_t)idx * DVX_P2P_DEV_LANE_BYTES;
	*st = qs_base + (uint64_t)idx * 2 * DVX_P2P_QSTATE_BYTES;
}

static int set_gates(struct dvx_gpu *gpu, uint64_t st, int comp, uint32_t v)
{
	int err = dvx_gpu_memcpy_htod(gpu, st + QS_GATE, &v, sizeof(v));

	if (!err && comp)
		err = dvx_gpu_memcpy_htod(gpu, st + DVX_P2P_QSTATE_BYTES + QS_GATE, &v, sizeof(v));
	return err;
}

/* wait until no device thread is inside the lane's queues (they saw the gate) */
static int wait_outside(struct dvx_gpu *gpu, const struct dvx_hal *clk, uint64_t st, int comp,
			uint64_t deadline)
{
	uint32_t in[2];
	int err;

	for (;;) {
		in[1] = 0;
		err = dvx_gpu_memcpy_dtoh(gpu, &in[0], st + QS_INSIDE, sizeof(in[0]));
		if (!err && comp)
			err = dvx_gpu_memcpy_dtoh(gpu, &in[1], st + DVX_P2P_QSTATE_BYTES + QS_INSIDE,
						  sizeof(in[1]));
		if (err)
			return err;
		if (!in[0] && !in[1])
			return 0;
		if (dvx_hal_now_ns(clk) >= deadline)
			return -EAGAIN;
		dvx_cpu_relax();
	}
}

/* the GPU's copy of host queue @q after a recovery: its state with the gate still
 * closed and the WQEs the last restart gave up; @lost_base where the restart before it
 * put the queue */
static void recovered_state(const struct dvx_p2p_q *q, struct dvx_p2p_qstate *st,
			    uint64_t *lost_base)
{
	uint32_t n = __atomic_load_n(&q->recoveries, __ATOMIC_ACQUIRE);

	*st = q->s;
	st->poll_lock = 0;
	st->ctrs.ci_poll = 0;
	st->gate = 1;
	st->inside = 0;
	st->lost_lo = st->lost_hi = 0;
	st->lost_err = 0;
	*lost_base = 0;
	if (n) {
		const struct dvx_p2p_q_lost *lo = &q->lost[(n - 1) % DVX_P2P_Q_LOST_KEEP];

		st->lost_lo = lo->lo;
		st->lost_hi = lo->hi;
		st->lost_err = lo->err ? lo->err : -ECANCELED;
	}
	if (n > 1)
		*lost_base = q->lost[(n - 2) % DVX_P2P_Q_LOST_KEEP].hi;
}

/*
 * write queue state @st to @addr while device threads may look at it: the lost range
 * first, then everything below the gate (a thread that sees the new watermark sees the
 * range it passes); never @inside (device threads count themselves there) nor the gate
 */
static int put_state(struct dvx_gpu *gpu, uint64_t addr, const struct dvx_p2p_qstate *st)
{
	int err = dvx_gpu_memcpy_htod(gpu, addr + offsetof(struct dvx_p2p_qstate, lost_lo),
				      &st->lost_lo, 2 * sizeof(uint64_t));

	if (!err)
		err = dvx_gpu_memcpy_htod(gpu, addr + offsetof(struct dvx_p2p_qstate, lost_err),
					  &st->lost_err, sizeof(st->lost_err));
	if (!err)
		err = dvx_gpu_memcpy_htod(gpu, addr, st, QS_GATE);
	return err;
}

int dvx_p2p_gpu_lane_recover(struct dvx_p2p *t, struct dvx_gpu *gpu, const struct dvx_p2p_dev *dev,
			     int peer, uint32_t lane, uint64_t timeout_ns)
{
	const struct dvx_hal *clk;
	struct dvx_p2p_dev_lane dl;
	struct dvx_p2p_qstate st[2];
	struct dvx_p2p_lane *l;
	uint64_t desc, sd, deadline, now, base[2] = { 0, 0 };
	uint32_t n = total_lanes(t), idx, gate = 0;
	int pi, comp, err, e;

	if (!n || !gpu || !dev || dev->version != DVX_P2P_DEV_VERSION || !dev->lanes ||
	    dev->nlanes != t->nlanes || dev->nranks != t->nranks || dev->npeers != t->npeers ||
	    peer < 0 || peer >= t->nranks || lane >= t->nlanes || !t->nics[0])
		return -EINVAL;
	if (!(t->flags & DVX_P2P_F_GPU_RECOVER))
		return -EOPNOTSUPP;
	pi = t->peer_idx[peer];
	if (pi < 0)
		return -EINVAL;
	idx = (uint32_t)pi * t->nlanes + lane;
	l = &t->lanes[idx];
	comp = l->comp.s.state != DVX_P2P_Q_UNUSED;
	lane_addrs(t, dev, idx, &desc, &sd);
	clk = t->nics[0]->hal;
	now = dvx_hal_now_ns(clk);
	deadline = timeout_ns > UINT64_MAX - now ? UINT64_MAX : now + timeout_ns;

	/* a gate still closed: the last call's write-back failed, the GPU's copy of the
	 * lane is not to be trusted and the host's is the lane (it is written out below) */
	err = dvx_gpu_memcpy_dtoh(gpu, &gate, sd + QS_GATE, sizeof(gate));
	if (err)
		return err;
	if (!gate) {
		/* close the gate, then wait for the device threads inside to leave */
		err = set_gates(gpu, sd, comp, 1);
		if (!err)
			err = wait_outside(gpu, clk, sd, comp, deadline);
		if (!err)
			err = dvx_gpu_memcpy_dtoh(gpu, st, sd, sizeof(st));
		if (err) {
			/* the lane stays as it was: open the gate again */
			e = set_gates(gpu, sd, comp, 0);
			return e ? e : err;
		}
		/* the host engine recovers the lane from the GPU's state, as after an
		 * import; a reservation that will never be published (its poster died or
		 * was cut off: dvx_p2p_q_publish()'s timeout) fails the queue, and the
		 * restart gives those slots up with the rest */
		import_q(&l->main, &st[0]);
		if (comp)
			import_q(&l->comp, &st[1]);
		if (st[0].ctrs.resv != st[0].ctrs.ready)
			dvx_p2p_q_mark_failed(&l->main, -ETIMEDOUT);
		if (comp && st[1].ctrs.resv != st[1].ctrs.ready)
			dvx_p2p_q_mark_failed(&l->comp, -ETIMEDOUT);
	}
	err = dvx_gpu_memcpy_dtoh(gpu, &dl, desc, sizeof(dl));
	if (err)
		return err;	/* the gate stays closed: the next call writes the lane out */
	now = dvx_hal_now_ns(clk);
	err = dvx_p2p_lane_recover(t, peer, lane, deadline > now ? deadline - now : 0);

	/* whatever came of it, the GPU continues from the host's state: a lane that did
	 * not come back stays failed there too */
	recovered_state(&l->main, &st[0], &base[0]);
	if (comp)
		recovered_state(&l->comp, &st[1], &base[1]);
	dl.main.cq_base = l->main.d.cq_base;
	dl.main.lost_base = base[0];
	if (comp) {
		dl.comp.cq_base = l->comp.d.cq_base;
		dl.comp.lost_base = base[1];
	}
	e = dvx_gpu_memcpy_htod(gpu, desc, &dl, sizeof(dl));
	if (!e)
		e = put_state(gpu, sd, &st[0]);
	if (!e && comp)
		e = put_state(gpu, sd + DVX_P2P_QSTATE_BYTES, &st[1]);
	if (!e)
		e = set_gates(gpu, sd, comp, 0);
	/* a failed copy leaves the gate closed: the next call writes the host's state */
	return e ? e : err;
}
