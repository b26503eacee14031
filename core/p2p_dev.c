// SPDX-License-Identifier: MIT
/*
 * core/p2p_dev.c - handing a P2P transport's lanes to GPU threads (dvx/p2p/dev.h):
 * registration of its host memory for the GPU, the device view, the way back.
 */
#include <errno.h>
#include <string.h>

#include <dvx/p2p/dev.h>
#include <dvx/gpu/gpu.h>

#define LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

static uint32_t total_lanes(const struct dvx_p2p *t)
{
	if (!t || !t->lanes || t->nranks < 2 || !t->nlanes)
		return 0;
	return (uint32_t)(t->nranks - 1) * t->nlanes;
}

int dvx_p2p_gpu_mem_req(const struct dvx_p2p *t, uint64_t *bytes)
{
	uint32_t n = total_lanes(t);

	if (!n || !bytes)
		return -EINVAL;
	*bytes = DVX_P2P_DEV_MEM_BYTES(n);
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
		uint8_t *reg = t->lanes[i].main.uar_reg;

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

/* describe host queue @q for kernels; its GPU state goes to @state_dptr */
static int export_q(const struct dvx_p2p_q *q, const struct dvx_gpu_hostreg *regs,
		    uint32_t nregs, uint64_t state_dptr, struct dvx_p2p_dev_q *dq,
		    struct dvx_p2p_dev_qstate *st)
{
	uint64_t ring = dptr_of(regs, nregs, q->wq.buf, (uint64_t)q->nwqebb * DVX_MLX5_SEND_WQE_BB);
	uint64_t dbrec = dptr_of(regs, nregs, q->dbrec, 8);
	uint64_t uar = dptr_of(regs, nregs, q->uar_reg, 8);
	uint64_t cq = dptr_of(regs, nregs, q->cq.buf, (uint64_t)DVX_MLX5_CQE_SIZE << q->cq.log_size);
	uint64_t cq_dbrec = dptr_of(regs, nregs, q->cq.dbrec, 8);
	int err;

	if (!ring || !dbrec || !uar || !cq || !cq_dbrec)
		return -EINVAL;
	memset(dq, 0, sizeof(*dq));
	err = dvx_gpu_sq_view_init(&dq->sq, DVX_GPU_Q_SYS, ring, q->nwqebb, q->qpn,
				   q->wq.max_inline, dbrec, uar, state_dptr,
				   state_dptr + offsetof(struct dvx_p2p_dev_qstate, ci));
	if (!err)
		err = dvx_gpu_cq_view_init(&dq->cq, DVX_GPU_Q_SYS, cq, q->cq.log_size, q->cqn,
					   cq_dbrec);
	if (err)
		return err;
	dq->state = state_dptr;
	dq->cq_base = q->cq_base;
	dq->cqn = q->cqn;
	memset(st, 0, sizeof(*st));
	st->ctrs.resv = st->ctrs.ready = st->ctrs.db_pi = LOAD(&q->reserved);
	st->ctrs.ci_seen = st->ci = LOAD(&q->polled);
	st->completed = LOAD(&q->completed);
	st->cq_ci = q->cq.ci;
	return 0;
}

int dvx_p2p_gpu_export(struct dvx_p2p *t, struct dvx_gpu *gpu,
		       const struct dvx_gpu_hostreg *regs, uint32_t nregs, uint64_t dmem,
		       uint64_t dmem_len, uint64_t timeout_ns, struct dvx_p2p_dev *dev)
{
	uint32_t n = total_lanes(t), i;
	uint64_t qs_base;
	int err;

	if (!n || !gpu || !regs || !nregs || !dmem || (dmem & 63) ||
	    dmem_len < DVX_P2P_DEV_MEM_BYTES(n) || !dev)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		struct dvx_p2p_lane *l = &t->lanes[i];

		if (LOAD(&l->main.state) == DVX_P2P_Q_FAILED)
			return l->main.err_errno;
		if (LOAD(&l->comp.state) == DVX_P2P_Q_FAILED)
			return l->comp.err_errno;
		err = dvx_p2p_q_drain(&l->main, timeout_ns);
		if (!err && l->comp.state != DVX_P2P_Q_UNUSED)
			err = dvx_p2p_q_drain(&l->comp, timeout_ns);
		if (err)
			return err;
	}
	qs_base = dmem + (uint64_t)n * DVX_P2P_DEV_LANE_BYTES;
	for (i = 0; i < n; i++) {
		const struct dvx_p2p_lane *l = &t->lanes[i];
		struct dvx_p2p_dev_lane dl;
		struct dvx_p2p_dev_qstate st[2];
		uint64_t sd = qs_base + (uint64_t)i * 2 * DVX_P2P_DEV_QSTATE_BYTES;

		memset(&dl, 0, sizeof(dl));
		memset(st, 0, sizeof(st));
		err = export_q(&l->main, regs, nregs, sd, &dl.main, &st[0]);
		if (!err && l->comp.state != DVX_P2P_Q_UNUSED) {
			err = export_q(&l->comp, regs, nregs, sd + DVX_P2P_DEV_QSTATE_BYTES,
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
	memset(dev, 0, sizeof(*dev));
	dev->version = DVX_P2P_DEV_VERSION;
	dev->rank = t->rank;
	dev->nranks = t->nranks;
	dev->nlanes = t->nlanes;
	dev->companions = t->companions;
	dev->lanes = dmem;
	return 0;
}

/* continue host queue @q at the GPU's indices */
static void import_q(struct dvx_p2p_q *q, const struct dvx_p2p_dev_qstate *st)
{
	q->reserved = st->ctrs.ready;
	q->published = st->ctrs.ready;
	q->rung = st->ctrs.db_pi;
	q->polled = st->ci;
	q->cq.ci = (uint32_t)st->cq_ci;
	STORE(&q->completed, st->completed);
	if (st->err && LOAD(&q->state) != DVX_P2P_Q_FAILED) {
		memset(&q->err, 0, sizeof(q->err));
		q->err.is_error = 1;
		q->err.syndrome = st->syndrome;
		q->err.vendor_syndrome = st->vendor_syndrome;
		q->err.wqe_opcode = st->wqe_opcode;
		q->err.wqe_counter = (uint16_t)st->err_wqe;
		q->err.qpn = st->err_qpn;
		q->err_errno = st->err;
		STORE(&q->state, (uint32_t)DVX_P2P_Q_FAILED);
	}
}

int dvx_p2p_gpu_import(struct dvx_p2p *t, struct dvx_gpu *gpu, const struct dvx_p2p_dev *dev)
{
	uint32_t n = total_lanes(t), i;
	uint64_t qs_base;
	int err;

	if (!n || !gpu || !dev || dev->version != DVX_P2P_DEV_VERSION || !dev->lanes ||
	    dev->nlanes != t->nlanes || dev->nranks != t->nranks)
		return -EINVAL;
	qs_base = dev->lanes + (uint64_t)n * DVX_P2P_DEV_LANE_BYTES;
	/* check first, change nothing on -EBUSY */
	for (i = 0; i < n; i++) {
		struct dvx_p2p_dev_qstate st[2];

		err = dvx_gpu_memcpy_dtoh(gpu, st, qs_base + (uint64_t)i * 2 *
					  DVX_P2P_DEV_QSTATE_BYTES, sizeof(st));
		if (err)
			return err;
		if (st[0].ctrs.resv != st[0].ctrs.ready ||
		    (t->lanes[i].comp.state != DVX_P2P_Q_UNUSED &&
		     st[1].ctrs.resv != st[1].ctrs.ready))
			return -EBUSY;
	}
	for (i = 0; i < n; i++) {
		struct dvx_p2p_lane *l = &t->lanes[i];
		struct dvx_p2p_dev_qstate st[2];

		err = dvx_gpu_memcpy_dtoh(gpu, st, qs_base + (uint64_t)i * 2 *
					  DVX_P2P_DEV_QSTATE_BYTES, sizeof(st));
		if (err)
			return err;
		import_q(&l->main, &st[0]);
		if (l->comp.state != DVX_P2P_Q_UNUSED)
			import_q(&l->comp, &st[1]);
	}
	return 0;
}
