// SPDX-License-Identifier: MIT
/*
 * hal/sim/exec.c - the software NIC's data path: decode and execute the WQE bytes of
 * a send queue, move data between MRs, write CQEs, raise error CQEs, flush.
 *
 * Everything runs under fab->lock, synchronously and in order: when a WQE executes,
 * every earlier WQE of its SQ has fully completed (data, read responses and atomic
 * results landed, CQE written). Hence fences (ctrl fm) are always satisfied and are
 * decoded but not acted on; the delay fault delays whole WQEs in order, so it does
 * not reorder anything either.
 *
 * Decoders follow docs/prm.md sections 2, 4, 6 and 7 (constants in exec.h); no
 * dvx/mlx5/ header is included.
 *
 * Memory: WQEs are read from the ring after control's acquire load of the doorbell
 * record; the RQ and CQ doorbell records are read here with acquire loads; a CQE's
 * op_own byte is written last with a release store. Target memory of atomics is
 * updated with host atomics when naturally aligned, so CPU threads polling or
 * updating the same word with atomics see a consistent value.
 */
#include <errno.h>
#include <string.h>

#include "sim.h"
#include "exec.h"

#define X_LIKELY(x) __builtin_expect(!!(x), 1)
#define X_UNLIKELY(x) __builtin_expect(!!(x), 0)

#define SIM_MAX_WQE_BYTES (63u * 16u)	/* ds is 6 bits (prm 2.1) */
#define SIM_MAX_SGE 62u

/* what executing one WQE came to */
enum { X_DONE, X_STALL, X_ERR };

/** one WQE, its bytes contiguous (copied out when it wraps past the ring's end) */
struct sim_wqe {
	const uint8_t *b;
	uint32_t ds;
	uint32_t nwqebb;
	uint16_t idx;		/* position: the SQ counter of its first WQEBB */
	uint8_t opcode;
	uint8_t opmod;
	uint8_t fm_ce_se;
};

/** the outcome of a WQE that did not simply succeed */
struct sim_xres {
	uint8_t synd;		/* requester error CQE syndrome */
	uint8_t vendor;		/* enum sim_exec_vendor */
	uint8_t peer_err;	/* the responder QP goes to ERR as well */
	uint8_t rsvd;
	uint32_t byte_cnt;	/* success: byte count for the requester CQE */
};

/* a piece of a message: host bytes at @p, or device memory at @dptr behind @dma */
struct sim_sge {
	uint8_t *p;		/* NULL when @dma */
	uint64_t len;
	const struct dvx_sim_dma *dma;	/* device memory (an MR over a DMA dma-buf) */
	uint64_t dptr;
};

static inline void sge_host(struct sim_sge *s, const uint8_t *p, uint64_t len)
{
	s->p = (uint8_t *)(uintptr_t)p;
	s->len = len;
	s->dma = NULL;
	s->dptr = 0;
}

static int x_fail(struct sim_xres *r, uint8_t synd, uint8_t vendor)
{
	r->synd = synd;
	r->vendor = vendor;
	return X_ERR;
}

/* ---- device memory through the DMA callbacks ------------------------------------ */

int dvx_sim_dma_read(struct sim_fabric *fab, const struct dvx_sim_dma *dma, void *dst,
		     uint64_t dptr, uint64_t len)
{
	if (!len)
		return 0;
	fab->dma_reads++;
	if (X_UNLIKELY(dma->read(dma->arg, dst, dptr, len))) {
		fab->dma_errors++;
		return -EIO;
	}
	return 0;
}

int dvx_sim_dma_write(struct sim_fabric *fab, const struct dvx_sim_dma *dma, uint64_t dptr,
		      const void *src, uint64_t len)
{
	if (!len)
		return 0;
	fab->dma_writes++;
	if (X_UNLIKELY(dma->write(dma->arg, dptr, src, len))) {
		fab->dma_errors++;
		return -EIO;
	}
	return 0;
}

/* which end of a copy failed (CP_LATE: a payload still arriving stopped coming) */
enum { CP_OK = 0, CP_SRC = 1, CP_DST = 2, CP_LATE = 3 };

/* device to device goes through a bounce buffer of this size on the stack */
#define SIM_DMA_BOUNCE 16384u

/* bytes [soff, soff + len) of @s to [doff, doff + len) of @d */
static int seg_copy(struct sim_fabric *fab, const struct sim_sge *d, uint64_t doff,
		    const struct sim_sge *s, uint64_t soff, uint64_t len)
{
	uint8_t bb[SIM_DMA_BOUNCE];

	if (X_LIKELY(!d->dma && !s->dma)) {
		memmove(d->p + doff, s->p + soff, len);
		return CP_OK;
	}
	if (!d->dma)
		return dvx_sim_dma_read(fab, s->dma, d->p + doff, s->dptr + soff, len) ? CP_SRC :
											   CP_OK;
	if (!s->dma)
		return dvx_sim_dma_write(fab, d->dma, d->dptr + doff, s->p + soff, len) ? CP_DST :
											    CP_OK;
	while (len) {
		uint64_t k = len < sizeof(bb) ? len : sizeof(bb);

		if (dvx_sim_dma_read(fab, s->dma, bb, s->dptr + soff, k))
			return CP_SRC;
		if (dvx_sim_dma_write(fab, d->dma, d->dptr + doff, bb, k))
			return CP_DST;
		soff += k;
		doff += k;
		len -= k;
	}
	return CP_OK;
}

/*
 * @len bytes from byte @soff of the list @s to byte @doff of the list @d, in order
 * (each list's pieces in order, as a NIC's DMA engine walks them). CP_OK, or the end
 * whose copy failed (what came before it is in place).
 */
static int sgl_copy(struct sim_fabric *fab, const struct sim_sge *d, uint32_t nd, uint64_t doff,
		    const struct sim_sge *s, uint32_t ns, uint64_t soff, uint64_t len)
{
	uint32_t di = 0, si = 0;
	int rc;

	while (di < nd && doff >= d[di].len) {
		doff -= d[di].len;
		di++;
	}
	while (si < ns && soff >= s[si].len) {
		soff -= s[si].len;
		si++;
	}
	while (len && di < nd && si < ns) {
		uint64_t k = len;

		if (d[di].len - doff < k)
			k = d[di].len - doff;
		if (s[si].len - soff < k)
			k = s[si].len - soff;
		if (k) {
			rc = seg_copy(fab, &d[di], doff, &s[si], soff, k);
			if (X_UNLIKELY(rc))
				return rc;
		}
		len -= k;
		doff += k;
		soff += k;
		if (doff == d[di].len) {
			di++;
			doff = 0;
		}
		if (soff == s[si].len) {
			si++;
			soff = 0;
		}
	}
	return CP_OK;
}

/* a copy of the data path failed: the requester's own memory (LOCAL_PROT_ERR, as for a
 * buffer the NIC cannot reach) or the responder's (REMOTE_ACCESS_ERR, class C: the
 * responder goes to ERR too) */
static int dma_fail(struct sim_xres *r, int remote)
{
	if (remote) {
		r->peer_err = 1;
		return x_fail(r, SIM_SYND_REMOTE_ACCESS_ERR, SIM_VS_DMA_REMOTE);
	}
	return x_fail(r, SIM_SYND_LOCAL_PROT_ERR, SIM_VS_DMA_LOCAL);
}

/* ---- memory keys ---------------------------------------------------------- */

static inline struct sim_mr *key_lookup(struct sim_qp *qp, struct sim_nic *nic, uint32_t key)
{
	struct sim_exec_key *e = &qp->exec.keys[(key ^ (key >> 8)) & (SIM_EXEC_KEYS - 1)];
	struct sim_mr *mr = e->mr;

	/* the entry stays valid while its slot still holds this key (a freed slot has
	 * key 0, and keys are not reused while the fabric lives) */
	if (X_LIKELY(mr && e->key == key && e->nic == nic && mr->lkey == key))
		return mr;
	mr = dvx_sim_mr_find(nic, key);
	if (mr) {
		e->key = key;
		e->nic = nic;
		e->mr = mr;
	}
	return mr;
}

/* [addr, addr + len) inside @mr as a piece @s (host address, or device memory); 0 when
 * out of bounds */
static inline int mr_range(const struct sim_mr *mr, uint64_t addr, uint64_t len,
			   struct sim_sge *s)
{
	uint64_t off = addr - mr->iova;

	if (X_UNLIKELY(addr < mr->iova || off > mr->len || len > mr->len - off))
		return 0;
	s->len = len;
	if (X_UNLIKELY(mr->dma)) {
		s->p = NULL;
		s->dma = mr->dma;
		s->dptr = mr->dptr + off;
	} else {
		s->p = mr->base + off;
		s->dma = NULL;
		s->dptr = 0;
	}
	return 1;
}

/* a local buffer of @qp: lkey on its NIC, same PD, in bounds, LOCAL_WRITE if @write */
static inline int local_buf(struct sim_qp *qp, uint32_t lkey, uint64_t addr, uint32_t len,
			    int write, struct sim_sge *p, struct sim_xres *r)
{
	struct sim_mr *mr = key_lookup(qp, qp->nic, lkey);

	if (X_UNLIKELY(!mr))
		return x_fail(r, SIM_SYND_LOCAL_PROT_ERR, SIM_VS_LKEY);
	if (X_UNLIKELY(mr->pdn != qp->pdn))
		return x_fail(r, SIM_SYND_LOCAL_PROT_ERR, SIM_VS_LKEY_PD);
	if (X_UNLIKELY(write && !(mr->access & DVX_ACCESS_LOCAL_WRITE)))
		return x_fail(r, SIM_SYND_LOCAL_PROT_ERR, SIM_VS_LKEY_ACCESS);
	if (X_UNLIKELY(!mr_range(mr, addr, len, p)))
		return x_fail(r, SIM_SYND_LOCAL_PROT_ERR, SIM_VS_LKEY_BOUNDS);
	return X_DONE;
}

/* a remote buffer at the responder @peer: rkey on its NIC, its PD, bounds, @acc */
static inline int remote_buf(struct sim_qp *qp, struct sim_qp *peer, uint32_t rkey,
			     uint64_t addr, uint64_t len, uint32_t acc, struct sim_sge *p,
			     struct sim_xres *r)
{
	struct sim_mr *mr = key_lookup(qp, peer->nic, rkey);

	r->peer_err = 1;	/* class C errors: the responder goes to ERR too */
	if (X_UNLIKELY(!mr))
		return x_fail(r, SIM_SYND_REMOTE_ACCESS_ERR, SIM_VS_RKEY);
	if (X_UNLIKELY(mr->pdn != peer->pdn))
		return x_fail(r, SIM_SYND_REMOTE_ACCESS_ERR, SIM_VS_RKEY_PD);
	if (X_UNLIKELY(!(mr->access & acc)))
		return x_fail(r, SIM_SYND_REMOTE_ACCESS_ERR, SIM_VS_RKEY_ACCESS);
	if (X_UNLIKELY(!mr_range(mr, addr, len, p)))
		return x_fail(r, SIM_SYND_REMOTE_ACCESS_ERR, SIM_VS_RKEY_BOUNDS);
	r->peer_err = 0;
	return X_DONE;
}

/*
 * The data segments of @w from segment @first on, as a gather (@write 0) or scatter
 * (@write 1) list of @qp's memory. An inline segment is accepted as the first one
 * when @inl_ok; it must fill the rest of ds exactly. Zero-length entries are skipped.
 */
static int local_sgl(struct sim_qp *qp, const struct sim_wqe *w, uint32_t first, int write,
		     int inl_ok, struct sim_sge *sg, uint32_t *nsg, uint64_t *total,
		     struct sim_xres *r)
{
	const uint8_t *d = w->b + first * 16u;
	uint32_t i, n = 0;
	uint64_t t = 0;

	for (i = first; i < w->ds; i++, d += 16) {
		uint32_t bc = dvx_get_be32(d);

		if (bc & SIM_INLINE_SEG) {
			uint32_t len = bc & ~SIM_INLINE_SEG;

			if (i != first || !inl_ok)
				return x_fail(r, SIM_SYND_LOCAL_QP_OP_ERR,
					      i != first ? SIM_VS_SEG : SIM_VS_INLINE);
			if ((4u + (uint64_t)len + 15u) / 16u != w->ds - i)
				return x_fail(r, SIM_SYND_LOCAL_QP_OP_ERR, SIM_VS_INLINE);
			sge_host(&sg[0], d + 4, len);	/* from the WQE itself */
			*nsg = len ? 1 : 0;
			*total = len;
			return X_DONE;
		}
		if (!bc)
			continue;
		if (local_buf(qp, dvx_get_be32(d + 4), dvx_get_be64(d + 8), bc, write, &sg[n], r) !=
		    X_DONE)
			return X_ERR;
		n++;
		t += bc;
	}
	*nsg = n;
	*total = t;
	return X_DONE;
}

/* the list @sg gathered into the contiguous @dst; CP_OK or the end that failed */
static inline int copy_gather(struct sim_fabric *fab, const struct sim_sge *dst,
			      const struct sim_sge *sg, uint32_t n, uint64_t total)
{
	return sgl_copy(fab, dst, 1, 0, sg, n, 0, total);
}

/* the contiguous @src scattered into the list @sg */
static inline int copy_scatter(struct sim_fabric *fab, const struct sim_sge *sg, uint32_t n,
			       const struct sim_sge *src, uint64_t total)
{
	return sgl_copy(fab, sg, n, 0, src, 1, 0, total);
}

/* ---- the reorder mode (docs/sim-datapath.md "Reorder mode") ------------------------ */

/* bytes [off, off + len) of a message between @buf (@nbuf pieces, its byte 0 at the
 * first one's start; one, or a wire payload in two) and the list @sg: @to_sg 1 copies
 * buf -> list, 0 list -> buf */
static int sgl_range(struct sim_fabric *fab, const struct sim_sge *sg, uint32_t n,
		     const struct sim_sge *buf, uint32_t nbuf, uint64_t off, uint64_t len,
		     int to_sg)
{
	if (to_sg)
		return sgl_copy(fab, sg, n, off, buf, nbuf, off, len);
	return sgl_copy(fab, buf, nbuf, off, sg, n, off, len);
}

static uint64_t gcd64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/*
 * Reorder mode: place a random part of a message of @total bytes (>= 16) in a random
 * chunk order, its last 8 bytes a chunk of their own, and leave the rest for a later
 * generation (the next dvx_sim_step() or thread pass; on the wire, the next pass over
 * the frame, which stays in the receive buffer): nothing promises when a byte is
 * visible before the completion, nor in which order (docs/prm.md 10.2). 1 when it did
 * (the caller's re-run places the whole message and completes it), 0 when the
 * message is to be placed whole now, -CP_SRC or -CP_DST when a copy through the DMA
 * callbacks failed. @to_sg: the message goes from @buf into @sg (a READ's response),
 * else from @sg into @buf (a WRITE).
 */
static int ro_place_part(struct sim_fabric *fab, const struct sim_sge *sg, uint32_t nsg,
			 const struct sim_sge *buf, uint32_t nbuf, uint64_t total, int to_sg)
{
	static const uint32_t csz[4] = { 8, 64, 512, 4096 };
	uint64_t cs, body = total - 8, nch, step, mask = 0, all, j, k;
	int cp;

	if (total < 16 || sim_ro_rand(fab, 4))
		return 0;
	cs = csz[sim_ro_rand(fab, 4)];
	while ((body + cs - 1) / cs > 63)
		cs <<= 1;
	nch = (body + cs - 1) / cs + 1;		/* body chunks, then the tail */
	all = nch == 64 ? ~0ull : (1ull << nch) - 1;
	for (j = 0; j < nch; j++)
		if (sim_ro_rand(fab, 4) < (j + 1 == nch ? 3u : 2u))
			mask |= 1ull << j;
	if (mask == all)
		mask &= ~(1ull << sim_ro_rand(fab, (uint32_t)nch));
	step = 1 + sim_ro_rand(fab, (uint32_t)nch);
	while (gcd64(step, nch) != 1)
		step++;
	j = sim_ro_rand(fab, (uint32_t)nch);
	for (k = 0; k < nch; k++, j = (j + step) % nch) {
		uint64_t off = j * cs, len;

		if (!(mask >> j & 1))
			continue;
		if (j + 1 == nch) {
			off = body;
			len = 8;
		} else {
			len = off + cs > body ? body - off : cs;
		}
		cp = sgl_range(fab, sg, nsg, buf, nbuf, off, len, to_sg);
		if (X_UNLIKELY(cp))
			return -cp;
	}
	fab->ro_splits++;
	fab->ro_tail_first += mask >> (nch - 1) & 1;
	return 1;
}

/* ro_place_part() for the WQE at @qp's sq_ci, once: the WQE stalls after a part and its
 * re-run in a later generation places the whole message */
static int ro_split(struct sim_fabric *fab, struct sim_qp *qp, const struct sim_sge *sg,
		    uint32_t nsg, const struct sim_sge *buf, uint64_t total, int to_sg)
{
	int rc;

	if (X_LIKELY(!fab->ro_on) || qp->exec.ro_split)
		return 0;
	rc = ro_place_part(fab, sg, nsg, buf, 1, total, to_sg);
	if (rc > 0) {
		qp->exec.ro_split = 1;
		qp->exec.ro_gen = fab->ro_gen;
	}
	return rc;
}

/* the stage holds @qp's WQE @idx, gathered early */
static inline int ro_staged(const struct sim_fabric *fab, const struct sim_qp *qp, uint16_t idx)
{
	return X_UNLIKELY(fab->ro_stage_qp == qp) && fab->ro_stage_qpn == qp->qpn &&
	       fab->ro_stage_idx == idx;
}

static void ro_release(struct sim_fabric *fab, const struct sim_qp *qp)
{
	if (fab->ro_stage_qp == qp)
		fab->ro_stage_qp = NULL;
}

static int local_sgl(struct sim_qp *qp, const struct sim_wqe *w, uint32_t first, int write,
		     int inl_ok, struct sim_sge *sg, uint32_t *nsg, uint64_t *total,
		     struct sim_xres *r);

/*
 * Reorder mode, before a READ or atomic @w of @qp runs: the WQE after it (a WRITE or
 * SEND already covered by doorbells) may gather its local data now, before the response
 * lands, unless its fence mode says wait (docs/prm.md 10.2, 10.3): modes 2 (fence), 3
 * (strong ordering) and 4 (fence and small fence) hold it, 0 and 1 do not. The data
 * goes to the fabric's stage, which that WQE then sends instead of its buffers.
 */
static void ro_gather_early(struct sim_fabric *fab, struct sim_qp *qp, const struct sim_wqe *w,
			    uint32_t avail)
{
	uint32_t nring = 1u << qp->log_sq_size, mask = nring - 1, ci2 = w->idx + w->nwqebb;
	struct sim_sge sg[SIM_MAX_SGE], stage;
	struct sim_wqe w2;
	struct sim_xres r;
	uint32_t ctrl, nsg, first, fm;
	uint64_t total;

	if (!fab->ro_stage || avail <= w->nwqebb || qp->cd_slave_send || sim_ro_rand(fab, 2))
		return;
	if (fab->ro_stage_qp && fab->ro_stage_qp->qpn == fab->ro_stage_qpn)
		return;		/* the stage is taken (also by this QP's next WQE already) */
	w2.b = qp->sq + ((size_t)(ci2 & mask) << 6);
	ctrl = dvx_get_be32(w2.b);
	w2.ds = dvx_get_be32(w2.b + 4) & 0x3fu;
	w2.nwqebb = w2.ds ? (w2.ds + 3u) >> 2 : 1u;
	w2.idx = (uint16_t)ci2;
	w2.opcode = (uint8_t)ctrl;
	w2.opmod = (uint8_t)(ctrl >> 24);
	w2.fm_ce_se = w2.b[11];
	if (w2.nwqebb > avail - w->nwqebb || (ci2 & mask) + w2.nwqebb > nring || w2.opmod ||
	    ((ctrl >> 8) & 0xffffu) != (ci2 & 0xffffu))
		return;
	if (w2.opcode == SIM_OP_RDMA_WRITE || w2.opcode == SIM_OP_RDMA_WRITE_IMM)
		first = 2;
	else if (w2.opcode == SIM_OP_SEND || w2.opcode == SIM_OP_SEND_IMM)
		first = 1;
	else
		return;
	fm = w2.fm_ce_se >> 5;
	if (fm == 2 || fm == 3 || fm == 4) {
		fab->ro_fenced++;	/* the fence holds it until the response has landed */
		return;
	}
	if (w2.ds < first || local_sgl(qp, &w2, first, 0, 1, sg, &nsg, &total, &r) != X_DONE ||
	    total > fab->ro_stage_cap)
		return;		/* its own checks fail it when it runs */
	sge_host(&stage, fab->ro_stage, total);
	/* a gather from device memory that failed fails that WQE when it runs */
	fab->ro_stage_err = copy_gather(fab, &stage, sg, nsg, total) != CP_OK;
	fab->ro_stage_qp = qp;
	fab->ro_stage_qpn = qp->qpn;
	fab->ro_stage_idx = w2.idx;
	fab->ro_stage_len = total;
	fab->ro_early++;
}

/* ---- completion queues ---------------------------------------------------- */

static struct sim_cq *qp_cq(struct sim_qp *qp, int recv)
{
	struct sim_cq **c = recv ? &qp->exec.rcq : &qp->exec.scq;
	uint32_t cqn = recv ? qp->cqn_rcv : qp->cqn_snd;

	if (X_LIKELY(*c && (*c)->cqn == cqn && (*c)->nic == qp->nic))
		return *c;
	*c = cqn ? dvx_sim_cq_find(qp->nic, cqn) : NULL;
	return *c;
}

static inline uint32_t load_be32_acquire(const uint8_t *p)
{
	uint32_t v = __atomic_load_n((const uint32_t *)(const void *)p, __ATOMIC_ACQUIRE);

	return dvx_be32_to_cpu((DVX_FORCE dvx_be32)v);
}

/*
 * Write one CQE (@c: 64 bytes, op_own holding the opcode and flags without the
 * owner bit) into @cq. Return: 0, or -1 when the CQ is (now) in overrun: a CQ without
 * overrun-ignore whose next entry software has not consumed yet (its doorbell
 * record's consumer index) takes no more CQEs (prm 4.4; IB: the CQ enters error).
 */
static int cq_push(struct sim_fabric *fab, struct sim_cq *cq, uint8_t *c, uint32_t qpn)
{
	uint32_t n = 1u << cq->log_sz;
	uint8_t *e;

	if (X_UNLIKELY(cq->overrun))
		return -1;
	if (!cq->oi && !cq->cc) {
		uint32_t ci;

		if (X_UNLIKELY(sim_pull(fab, cq->dbr_umem, cq->dbrec, 4)))
			return -1;
		ci = load_be32_acquire(cq->dbrec) & 0xffffffu;

		if (X_UNLIKELY(((cq->pi - ci) & 0xffffffu) >= n)) {
			cq->overrun = 1;
			return -1;
		}
	}
	e = cq->ring + (cq->cc ? 0 : (size_t)(cq->pi & (n - 1)) * 64u);
	c[SIM_CQE_OP_OWN] |= (uint8_t)((cq->pi >> cq->log_sz) & 1u);
	memcpy(e, c, 63);
	/* every other byte of the entry before the owner byte that hands it over */
	if (X_UNLIKELY(sim_push(fab, cq->ring_umem, e, 63)))
		return -1;
	__atomic_store_n(e + SIM_CQE_OP_OWN, c[SIM_CQE_OP_OWN], __ATOMIC_RELEASE);
	if (X_UNLIKELY(sim_push(fab, cq->ring_umem, e + SIM_CQE_OP_OWN, 1)))
		return -1;
	cq->pi++;
	fab->cqes_written++;
	if (fab->trace)
		fab->trace(fab->trace_arg, cq->nic ? cq->nic->index : 0, qpn, 1, e, 64);
	return 0;
}

static void cqe_req(uint8_t *c, const struct sim_qp *qp, uint8_t opcode, uint16_t idx,
		    uint32_t byte_cnt)
{
	memset(c, 0, 64);
	dvx_put_be32(c + SIM_CQE_SRQN_UIDX, qp->user_index & 0xffffffu);
	dvx_put_be32(c + SIM_CQE_BYTE_CNT, byte_cnt);
	dvx_put_be32(c + SIM_CQE_SOP_QPN, ((uint32_t)opcode << 24) | (qp->qpn & 0xffffffu));
	dvx_put_be16(c + SIM_CQE_WQE_COUNTER, idx);
	c[SIM_CQE_OP_OWN] = SIM_CQE_REQ << 4;
}

static void cqe_err(uint8_t *c, const struct sim_qp *qp, uint8_t cqe_op, uint8_t wqe_opcode,
		    uint16_t idx, uint8_t synd, uint8_t vendor)
{
	memset(c, 0, 64);
	dvx_put_be32(c + SIM_CQE_SRQN_UIDX, qp->user_index & 0xffffffu);
	c[SIM_CQE_VENDOR_SYND] = vendor;
	c[SIM_CQE_SYNDROME] = synd;
	dvx_put_be32(c + SIM_CQE_SOP_QPN, ((uint32_t)wqe_opcode << 24) | (qp->qpn & 0xffffffu));
	dvx_put_be16(c + SIM_CQE_WQE_COUNTER, idx);
	c[SIM_CQE_OP_OWN] = (uint8_t)(cqe_op << 4);
}

/* an error CQE of @qp's send side (always written, signaled or not) */
static void req_err_cqe(struct sim_fabric *fab, struct sim_qp *qp, uint8_t wqe_opcode,
			uint16_t idx, uint8_t synd, uint8_t vendor)
{
	struct sim_cq *cq = qp_cq(qp, 0);
	uint8_t c[64];

	if (!cq)
		return;
	cqe_err(c, qp, SIM_CQE_REQ_ERR, wqe_opcode, idx, synd, vendor);
	(void)cq_push(fab, cq, c, qp->qpn);
}

static void set_err(struct sim_fabric *fab, struct sim_qp *qp)
{
	if (qp->state != SIM_QPS_ERR)
		dvx_sim_qp_set_err(fab, qp);
}

/* ---- the responder's receive queue ---------------------------------------- */

/* the LID of @qp's port, for the responder CQE's slid */
static uint16_t qp_lid(const struct sim_qp *qp)
{
	if (qp->nic && qp->port >= 1 && qp->port <= DVX_SIM_MAX_PORTS)
		return qp->nic->cfg.port[qp->port - 1].lid;
	return 0;
}

/* receive WQEs posted (and, for cd_slave_recv, enabled) and not consumed */
static uint32_t rq_avail(const struct sim_qp *peer)
{
	uint32_t n;

	if (X_UNLIKELY(peer->dbr_umem && peer->dbr_umem->dma) &&
	    dvx_sim_dma_pull(peer->nic->fab, peer->dbr_umem, peer->dbrec, 4))
		return 0;	/* the record could not be read: nothing posted, as far as known */
	n = (uint16_t)(load_be32_acquire(peer->dbrec) - peer->rq_ci);

	if (peer->cd_slave_recv) {
		uint32_t en = (uint16_t)(peer->recv_en - peer->rq_ci);

		if (en >= 0x8000u)
			en = 0;
		if (en < n)
			n = en;
	}
	return n;
}

static int has_rq(const struct sim_qp *peer)
{
	return peer->rq && peer->rq_type == 0;
}

/*
 * Complete the receive at peer->rq_ci for an incoming message of @len bytes from QP
 * @src_qpn (LID @slid, for the CQE): scatter the message (SEND; @sg/@nsg the requester's gather list) or just
 * consume it (WRITE_IMM, @sg NULL), then write the responder CQE. On a receive-side
 * error the receive completes with a responder error CQE and both QPs go to ERR.
 */
static int recv_complete(struct sim_fabric *fab, uint32_t src_qpn, uint16_t slid,
			 struct sim_qp *peer, const struct sim_wqe *w, const struct sim_sge *sg,
			 uint32_t nsg, uint64_t len, struct sim_xres *r)
{
	uint32_t stride = 4u + peer->log_rq_stride;
	uint32_t nslot = 1u << peer->log_rq_stride;
	uint16_t ridx = (uint16_t)peer->rq_ci;
	const uint8_t *d = peer->rq + ((size_t)(peer->rq_ci & ((1u << peer->log_rq_size) - 1))
				       << stride);
	struct sim_sge dst[64];
	struct sim_cq *cq = qp_cq(peer, 1);
	uint8_t c[64], op, resp_synd = 0, vs = 0;
	uint32_t i, nd = 0;
	uint64_t room = 0;

	(void)sim_pull(fab, peer->wq_umem, d, 16u << peer->log_rq_stride);	/* the receive WQE */
	if (sg) {
		for (i = 0; i < nslot && i < 64; i++, d += 16) {
			uint32_t bc = dvx_get_be32(d), lkey = dvx_get_be32(d + 4);
			struct sim_mr *mr;

			if (lkey == SIM_INVALID_LKEY)
				break;
			if (!bc)
				continue;
			mr = key_lookup(peer, peer->nic, lkey);
			if (!mr || mr->pdn != peer->pdn || !(mr->access & DVX_ACCESS_LOCAL_WRITE) ||
			    !mr_range(mr, dvx_get_be64(d + 8), bc, &dst[nd])) {
				resp_synd = SIM_SYND_LOCAL_PROT_ERR;
				vs = SIM_VS_RECV_PROT;
				break;
			}
			nd++;
			room += bc;
		}
		if (!resp_synd && len > room) {
			resp_synd = SIM_SYND_LOCAL_LENGTH_ERR;
			vs = SIM_VS_RECV_LEN;
		}
	}
	if (sg && !resp_synd) {
		/* gather -> scatter, both lists in order */
		int cp = sgl_copy(fab, dst, nd, 0, sg, nsg, 0, len);

		if (X_UNLIKELY(cp == CP_SRC))
			/* the requester could not read its own data: nothing was sent, the
			 * receive stays posted */
			return dma_fail(r, 0);
		if (X_UNLIKELY(cp == CP_DST)) {
			resp_synd = SIM_SYND_LOCAL_PROT_ERR;
			vs = SIM_VS_DMA_REMOTE;
		}
	}
	if (resp_synd) {
		cqe_err(c, peer, SIM_CQE_RESP_ERR, 0, ridx, resp_synd, vs);
		peer->rq_ci++;
		if (cq)
			(void)cq_push(fab, cq, c, peer->qpn);
		r->peer_err = 1;
		/* IB: a local error at the responder is a remote operational error to the
		 * requester; a receive too small for the message an invalid request */
		return x_fail(r, resp_synd == SIM_SYND_LOCAL_LENGTH_ERR ?
				 SIM_SYND_REMOTE_INVAL_REQ_ERR : SIM_SYND_REMOTE_OP_ERR, vs);
	}
	op = w->opcode == SIM_OP_RDMA_WRITE_IMM ? SIM_CQE_RESP_WR_IMM :
	     w->opcode == SIM_OP_SEND_IMM ? SIM_CQE_RESP_SEND_IMM : SIM_CQE_RESP_SEND;
	memset(c, 0, 64);
	dvx_put_be16(c + SIM_CQE_SLID, slid);
	dvx_put_be32(c + SIM_CQE_FLAGS_RQPN, src_qpn & 0xffffffu);
	dvx_put_be32(c + SIM_CQE_SRQN_UIDX, peer->user_index & 0xffffffu);
	if (op != SIM_CQE_RESP_SEND)
		memcpy(c + SIM_CQE_IMM, w->b + 12, 4);	/* the immediate, as on the wire */
	dvx_put_be32(c + SIM_CQE_BYTE_CNT, (uint32_t)len);
	dvx_put_be32(c + SIM_CQE_SOP_QPN, peer->qpn & 0xffffffu);
	dvx_put_be16(c + SIM_CQE_WQE_COUNTER, ridx);
	c[SIM_CQE_OP_OWN] = (uint8_t)((op << 4) | (w->fm_ce_se & SIM_CTRL_SOLICITED));
	peer->rq_ci++;
	if (!cq || cq_push(fab, cq, c, peer->qpn)) {
		/* the responder's CQ overran: it goes to ERR without acknowledging, so the
		 * requester's retries find it in ERR (transport retry exhausted) */
		set_err(fab, peer);
		return X_STALL;
	}
	return X_DONE;
}

/* ---- transport: loss, retries, RNR ------------------------------------------ */

static int port_up(const struct sim_nic *nic, uint8_t port)
{
	uint32_t i = port ? port - 1u : 0;

	return i < DVX_SIM_MAX_PORTS && nic->cfg.port[i].up;
}

/* is the request from @qp lost on its way (link, drops, responder not receiving)? */
static int request_lost(struct sim_fabric *fab, struct sim_qp *qp, struct sim_qp *peer)
{
	if (X_UNLIKELY(!peer))
		return 1;
	if (X_UNLIKELY(!qp->fl && (fab->faults.link_down || !port_up(qp->nic, qp->port) ||
				   !port_up(peer->nic, peer->port))))
		return 1;
	/* a QP in RST, INIT or ERR silently drops what arrives (IB) */
	if (X_UNLIKELY(peer->state < SIM_QPS_RTR || peer->state == SIM_QPS_ERR))
		return 1;
	if (X_UNLIKELY(fab->faults.drop_count)) {
		fab->faults.drop_count--;
		return 1;
	}
	/* every n-th request of each QP: a retry of a dropped request is the next one,
	 * so with n >= 2 retries always get through (a fabric-wide count could drop
	 * the same QP every time while others retry in step) */
	if (X_UNLIKELY(fab->faults.drop_every)) {
		fab->exec_pkts++;
		if (++qp->exec.pkts % fab->faults.drop_every == 0)
			return 1;
	}
	return 0;
}

/*
 * The transport time-out before a lost request is retried: 4.096 us * 2^ack_timeout on
 * hardware (IB spec 9.7.6.1.3), here in nanoseconds instead of microseconds, as the RNR
 * timer is (the model runs a thousand times faster than a link's timers), bounded to
 * [SIM_EXEC_RETRY_NS, 50 ms]. ack_timeout 0 ("infinite" on hardware, a QP that never
 * times out) is modelled as SIM_EXEC_RETRY_NS so a lost request cannot hang a test.
 */
static uint64_t sim_exec_retry_ns(const struct sim_qp *qp)
{
	uint64_t ns;

	if (!qp->ack_timeout)
		return SIM_EXEC_RETRY_NS;
	ns = (4096ull << (qp->ack_timeout > 24 ? 24 : qp->ack_timeout)) / 1000u;
	if (ns < SIM_EXEC_RETRY_NS)
		ns = SIM_EXEC_RETRY_NS;
	return ns > 50000000ull ? 50000000ull : ns;
}

/* the request was lost: retry after a time-out, retry_cnt times, then fail */
static int retry_later(struct sim_qp *qp, struct sim_xres *r)
{
	if (!qp->exec.retry_active) {
		qp->exec.retry_active = 1;
		qp->exec.retry_left = qp->retry_cnt;
	}
	if (!qp->exec.retry_left)
		return x_fail(r, SIM_SYND_TRANSPORT_RETRY_EXC_ERR, SIM_VS_RETRY);
	qp->exec.retry_left--;
	qp->stall_until_ns = dvx_sim_now_ns() + sim_exec_retry_ns(qp);
	return X_STALL;
}

/* IB min RNR NAK timer (table of 9.7.5.2.8) in units of 10 ns: the IB value in us,
 * read as ns (see exec.h) */
static const uint16_t rnr_timer_10ns[32] = {
	65535, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384,
	512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152,
};

/* RNR NAK with the responder's min_rnr_nak @timer: back off, rnr_retry times (7:
 * forever), then fail */
static int rnr_wait(struct sim_qp *qp, uint8_t timer, struct sim_xres *r)
{
	if (!qp->exec.rnr_active) {
		qp->exec.rnr_active = 1;
		qp->rnr_left = qp->rnr_retry;
	}
	if (qp->rnr_retry != 7) {
		if (!qp->rnr_left)
			return x_fail(r, SIM_SYND_RNR_RETRY_EXC_ERR, SIM_VS_RNR);
		qp->rnr_left--;
	}
	qp->stall_until_ns = dvx_sim_now_ns() + 10u * rnr_timer_10ns[timer & 31u];
	return X_STALL;
}

/* RNR NAK from @peer */
static int rnr_later(struct sim_qp *qp, struct sim_qp *peer, struct sim_xres *r)
{
	return rnr_wait(qp, peer->min_rnr_nak, r);
}

/* ---- operations ------------------------------------------------------------ */

struct sim_atomic_op;
static int wire_req(struct sim_fabric *fab, struct sim_qp *qp, const struct sim_wqe *w,
		    const struct sim_sge *sg, uint32_t nsg, uint64_t total,
		    const struct sim_atomic_op *o, struct sim_xres *r);

/* sum of each field of @a and @b, carries stopping at the set bits of @boundary */
static inline uint64_t add_fields(uint64_t a, uint64_t b, uint64_t boundary)
{
	return ((a & ~boundary) + (b & ~boundary)) ^ ((a ^ b) & boundary);
}

struct sim_atomic_op {
	int cs;			/* compare-swap (else fetch-add) */
	uint64_t a;		/* FA: add; CS: swap */
	uint64_t b;		/* FA: field boundary; CS: compare */
	uint64_t swap_mask;	/* CS */
	uint64_t cmp_mask;	/* CS */
	uint32_t size;		/* the wire: 4 or 8 */
};

static inline uint64_t atomic_new(const struct sim_atomic_op *o, uint64_t old)
{
	if (!o->cs)
		return add_fields(old, o->a, o->b);
	if ((old ^ o->b) & o->cmp_mask)
		return old;
	return (old & ~o->swap_mask) | (o->a & o->swap_mask);
}

/* apply @o to the native-order word of @size bytes at @t; returns the old value */
static uint64_t atomic_apply(uint8_t *t, uint32_t size, const struct sim_atomic_op *o)
{
	if (size == 8 && !((uintptr_t)t & 7u)) {
		uint64_t *q = (uint64_t *)(void *)t, old, nv;

		if (!o->cs && !o->b)
			return __atomic_fetch_add(q, o->a, __ATOMIC_SEQ_CST);
		old = __atomic_load_n(q, __ATOMIC_RELAXED);
		do {
			nv = atomic_new(o, old);
		} while (nv != old && !__atomic_compare_exchange_n(q, &old, nv, 1, __ATOMIC_SEQ_CST,
								   __ATOMIC_RELAXED));
		return old;
	}
	if (size == 4 && !((uintptr_t)t & 3u)) {
		uint32_t *q = (uint32_t *)(void *)t, old, nv;

		old = __atomic_load_n(q, __ATOMIC_RELAXED);
		do {
			nv = (uint32_t)atomic_new(o, old);
		} while (nv != old && !__atomic_compare_exchange_n(q, &old, nv, 1, __ATOMIC_SEQ_CST,
								   __ATOMIC_RELAXED));
		return old;
	}
	/* host address not naturally aligned (iova aligned, base not): plain RMW */
	if (size == 8) {
		uint64_t old, nv;

		memcpy(&old, t, 8);
		nv = atomic_new(o, old);
		memcpy(t, &nv, 8);
		return old;
	} else {
		uint32_t old, nv;

		memcpy(&old, t, 4);
		nv = (uint32_t)atomic_new(o, old);
		memcpy(t, &nv, 4);
		return old;
	}
}

/*
 * @o on the target word @t of @size bytes; *@old its value before. Host memory: a host
 * atomic (atomic_apply()). Device memory: read, modify and write through the DMA
 * callbacks (the write left out when the value stays), all under fab->lock, which every
 * atomic of the fabric's NICs holds: atomic with respect to them, as a NIC's atomics are
 * with respect to each other, and never with respect to the device's own atomics. 0, or
 * -EIO when a copy failed (a failed write leaves the word as it was).
 */
static int atomic_at(struct sim_fabric *fab, const struct sim_sge *t, uint32_t size,
		     const struct sim_atomic_op *o, uint64_t *old)
{
	uint64_t v = 0, nv;
	uint32_t v4 = 0;

	if (X_LIKELY(!t->dma)) {
		*old = atomic_apply(t->p, size, o);
		return 0;
	}
	if (size == 4) {
		if (dvx_sim_dma_read(fab, t->dma, &v4, t->dptr, 4))
			return -EIO;
		v = v4;
		nv = (uint32_t)atomic_new(o, v4);
		v4 = (uint32_t)nv;
		if (nv != v && dvx_sim_dma_write(fab, t->dma, t->dptr, &v4, 4))
			return -EIO;
	} else {
		if (dvx_sim_dma_read(fab, t->dma, &v, t->dptr, 8))
			return -EIO;
		nv = atomic_new(o, v);
		if (nv != v && dvx_sim_dma_write(fab, t->dma, t->dptr, &nv, 8))
			return -EIO;
	}
	*old = v;
	return 0;
}

/* 8-byte atomic replies in host order? the NIC's atomic cap atomic_req_8B_endianness_mode
 * (page dword 8 [31:30]) == 1 (prm 6); otherwise, and always for 4 bytes, big-endian */
static int atomic_reply_host(const struct sim_nic *nic)
{
	return ((dvx_get_be32(nic->cap_atomic + 8) >> 30) & 3u) == 1;
}

/* the fetched value @old into the result buffer @res of the requester @nic; 0 or -EIO */
static int atomic_result(struct sim_fabric *fab, const struct sim_nic *nic,
			 const struct sim_sge *res, uint32_t size, uint64_t old)
{
	uint8_t v[8];

	if (size == 4)
		dvx_put_be32(v, (uint32_t)old);
	else if (atomic_reply_host(nic))
		memcpy(v, &old, 8);
	else
		dvx_put_be64(v, old);
	if (X_LIKELY(!res->dma)) {
		memcpy(res->p, v, size);
		return 0;
	}
	return dvx_sim_dma_write(fab, res->dma, res->dptr, v, size);
}

static int exec_atomic(struct sim_fabric *fab, struct sim_qp *qp, struct sim_qp *peer,
		       const struct sim_wqe *w, struct sim_xres *r)
{
	const uint8_t *s = w->b + 32;	/* the operand segment */
	struct sim_atomic_op o;
	uint32_t size = 8, opseg = 1, bc;
	struct sim_sge res, t;
	int has_res = 0;
	uint64_t raddr, old;
	int ext = w->opcode == SIM_OP_ATOMIC_MASKED_CS || w->opcode == SIM_OP_ATOMIC_MASKED_FA;

	if (!qp->nic->cfg.atomic)
		return x_fail(r, SIM_SYND_LOCAL_QP_OP_ERR, SIM_VS_OPCODE);
	if (ext) {
		if (w->opmod == SIM_OPMOD_EXT_ATOMIC_4B)
			size = 4;
		else if (w->opmod != SIM_OPMOD_EXT_ATOMIC_8B)
			return x_fail(r, SIM_SYND_LOCAL_QP_OP_ERR, SIM_VS_OPCODE);
		if (size == 8 && w->opcode == SIM_OP_ATOMIC_MASKED_CS)
			opseg = 2;
	} else if (w->opmod) {
		return x_fail(r, SIM_SYND_LOCAL_QP_OP_ERR, SIM_VS_OPCODE);
	}
	/* ctrl, raddr, operands, and the result's data segment (optional) */
	if (w->ds != 2 + opseg + 1 && w->ds != 2 + opseg)
		return x_fail(r, SIM_SYND_LOCAL_QP_OP_ERR, SIM_VS_DS);
	memset(&o, 0, sizeof(o));
	o.cs = w->opcode == SIM_OP_ATOMIC_CS || w->opcode == SIM_OP_ATOMIC_MASKED_CS;
	if (!ext) {
		o.a = dvx_get_be64(s);
		o.b = o.cs ? dvx_get_be64(s + 8) : 0;
		o.swap_mask = o.cmp_mask = ~(uint64_t)0;
	} else if (size == 8) {
		o.a = dvx_get_be64(s);
		o.b = dvx_get_be64(s + 8);
		if (o.cs) {
			o.swap_mask = dvx_get_be64(s + 16);
			o.cmp_mask = dvx_get_be64(s + 24);
		}
	} else {
		o.a = dvx_get_be32(s);
		o.b = dvx_get_be32(s + 4);
		if (o.cs) {
			o.swap_mask = dvx_get_be32(s + 8);
			o.cmp_mask = dvx_get_be32(s + 12);
		}
	}
	if (w->ds == 3 + opseg) {
		const uint8_t *d = w->b + (2 + opseg) * 16u;

		bc = dvx_get_be32(d);
		if (bc & SIM_INLINE_SEG)
			return x_fail(r, SIM_SYND_LOCAL_QP_OP_ERR, SIM_VS_INLINE);
		if (bc < size)
			return x_fail(r, SIM_SYND_LOCAL_LENGTH_ERR, SIM_VS_RESULT_LEN);
		if (local_buf(qp, dvx_get_be32(d + 4), dvx_get_be64(d + 8), size, 1, &res, r) !=
		    X_DONE)
			return X_ERR;
		has_res = 1;
	}
	if (X_UNLIKELY(!peer && qp->exec.w_rank)) {
		o.size = size;
		return wire_req(fab, qp, w, NULL, 0, size, &o, r);
	}
	if (request_lost(fab, qp, peer))
		return retry_later(qp, r);
	/* responder: operation enabled (class C: invalid request), then the rkey */
	raddr = dvx_get_be64(w->b + 16);
	if (!(peer->access & DVX_ACCESS_REMOTE_ATOMIC)) {
		r->peer_err = 1;
		return x_fail(r, SIM_SYND_REMOTE_INVAL_REQ_ERR, SIM_VS_QP_ACCESS);
	}
	if (ext && peer->atomic_mode < 3) {
		r->peer_err = 1;
		return x_fail(r, SIM_SYND_REMOTE_INVAL_REQ_ERR, SIM_VS_ATOMIC_MODE);
	}
	if (raddr & (size - 1)) {
		r->peer_err = 1;
		return x_fail(r, SIM_SYND_REMOTE_INVAL_REQ_ERR, SIM_VS_ALIGN);
	}
	if (remote_buf(qp, peer, dvx_get_be32(w->b + 24), raddr, size, DVX_ACCESS_REMOTE_ATOMIC,
		       &t, r) != X_DONE)
		return X_ERR;
	if (X_LIKELY(!t.dma))
		old = atomic_apply(t.p, size, &o);
	else if (atomic_at(fab, &t, size, &o, &old))
		return dma_fail(r, 1);
	if (has_res) {
		if (X_UNLIKELY(res.dma)) {
			if (atomic_result(fab, qp->nic, &res, size, old))
				return dma_fail(r, 0);
		} else if (size == 4) {
			dvx_put_be32(res.p, (uint32_t)old);
		} else if (atomic_reply_host(qp->nic)) {
			memcpy(res.p, &old, 8);
		} else {
			dvx_put_be64(res.p, old);
		}
	}
	r->byte_cnt = size;
	return X_DONE;
}

static int msg_too_long(const struct sim_qp *qp, uint64_t len)
{
	uint32_t lm = qp->nic->cfg.log_max_msg;

	return lm && lm < 63 && len > (1ull << lm);
}

static int exec_write_send(struct sim_fabric *fab, struct sim_qp *qp, struct sim_qp *peer,
			   const struct sim_wqe *w, struct sim_xres *r)
{
	int is_write = w->opcode == SIM_OP_RDMA_WRITE || w->opcode == SIM_OP_RDMA_WRITE_IMM;
	int needs_recv = w->opcode != SIM_OP_RDMA_WRITE;
	uint32_t first = is_write ? 2 : 1, nsg;
	struct sim_sge sg[SIM_MAX_SGE], t;
	uint64_t total;
	int cp;

	if (X_UNLIKELY(w->ds < first))
		return x_fail(r, SIM_SYND_LOCAL_QP_OP_ERR, SIM_VS_DS);
	if (local_sgl(qp, w, first, 0, 1, sg, &nsg, &total, r) != X_DONE)
		return X_ERR;
	if (X_UNLIKELY(msg_too_long(qp, total)))
		return x_fail(r, SIM_SYND_LOCAL_LENGTH_ERR, SIM_VS_MSG_LEN);
	if (ro_staged(fab, qp, w->idx) && fab->ro_stage_len == total) {
		/* reorder mode: gathered before an earlier READ/atomic response landed */
		if (X_UNLIKELY(fab->ro_stage_err))
			return dma_fail(r, 0);
		sge_host(&sg[0], fab->ro_stage, total);
		nsg = total ? 1 : 0;
	}
	if (X_UNLIKELY(!peer && qp->exec.w_rank))
		return wire_req(fab, qp, w, sg, nsg, total, NULL, r);
	if (X_UNLIKELY(request_lost(fab, qp, peer)))
		return retry_later(qp, r);
	/* responder checks in IB order: operation valid, resources (RNR), rkey */
	if (is_write && X_UNLIKELY(!(peer->access & DVX_ACCESS_REMOTE_WRITE))) {
		r->peer_err = 1;
		return x_fail(r, SIM_SYND_REMOTE_INVAL_REQ_ERR, SIM_VS_QP_ACCESS);
	}
	if (needs_recv) {
		if (!has_rq(peer)) {
			r->peer_err = 1;
			return x_fail(r, SIM_SYND_REMOTE_INVAL_REQ_ERR, SIM_VS_NO_RQ);
		}
		if (!rq_avail(peer))
			return rnr_later(qp, peer, r);
	}
	if (is_write && total &&
	    remote_buf(qp, peer, dvx_get_be32(w->b + 24), dvx_get_be64(w->b + 16), total,
		       DVX_ACCESS_REMOTE_WRITE, &t, r) != X_DONE)
		return X_ERR;
	if (is_write) {
		if (X_UNLIKELY(fab->ro_on) && total) {
			cp = ro_split(fab, qp, sg, nsg, &t, total, 0);
			if (cp > 0)
				return X_STALL;
			if (X_UNLIKELY(cp < 0))
				return dma_fail(r, -cp == CP_DST);
		}
		if (X_LIKELY(nsg == 1 && total && !sg[0].dma && !t.dma)) {
			memmove(t.p, sg[0].p, sg[0].len);
		} else if (total) {
			cp = copy_gather(fab, &t, sg, nsg, total);
			if (X_UNLIKELY(cp))
				return dma_fail(r, cp == CP_DST);
		}
		if (!needs_recv)
			return X_DONE;
		return recv_complete(fab, qp->qpn, qp_lid(qp), peer, w, NULL, 0, total, r);
	}
	return recv_complete(fab, qp->qpn, qp_lid(qp), peer, w, sg, nsg, total, r);
}

static int exec_read(struct sim_fabric *fab, struct sim_qp *qp, struct sim_qp *peer,
		     const struct sim_wqe *w, struct sim_xres *r)
{
	struct sim_sge sg[SIM_MAX_SGE], s;
	uint32_t nsg;
	uint64_t total;
	int cp;

	if (w->ds < 2)
		return x_fail(r, SIM_SYND_LOCAL_QP_OP_ERR, SIM_VS_DS);
	if (local_sgl(qp, w, 2, 1, 0, sg, &nsg, &total, r) != X_DONE)
		return X_ERR;
	if (msg_too_long(qp, total))
		return x_fail(r, SIM_SYND_LOCAL_LENGTH_ERR, SIM_VS_MSG_LEN);
	if (X_UNLIKELY(!peer && qp->exec.w_rank))
		return wire_req(fab, qp, w, NULL, 0, total, NULL, r);
	if (request_lost(fab, qp, peer))
		return retry_later(qp, r);
	if (!(peer->access & DVX_ACCESS_REMOTE_READ)) {
		r->peer_err = 1;
		return x_fail(r, SIM_SYND_REMOTE_INVAL_REQ_ERR, SIM_VS_QP_ACCESS);
	}
	if (total && remote_buf(qp, peer, dvx_get_be32(w->b + 24), dvx_get_be64(w->b + 16),
				total, DVX_ACCESS_REMOTE_READ, &s, r) != X_DONE)
		return X_ERR;
	if (X_UNLIKELY(fab->ro_on) && total) {
		cp = ro_split(fab, qp, sg, nsg, &s, total, 1);
		if (cp > 0)
			return X_STALL;
		if (X_UNLIKELY(cp < 0))
			return dma_fail(r, -cp == CP_SRC);
	}
	if (total) {
		cp = copy_scatter(fab, sg, nsg, &s, total);
		if (X_UNLIKELY(cp))
			return dma_fail(r, cp == CP_SRC);
	}
	r->byte_cnt = (uint32_t)total;
	return X_DONE;
}

/* WAIT (opmod 0): until CQ qpn_cqn has produced CQE max_index (24-bit index space) */
static int exec_wait(struct sim_qp *qp, const struct sim_wqe *w, struct sim_xres *r)
{
	uint32_t idx = dvx_get_be32(w->b + 24) & 0xffffffu;
	uint32_t cqn = dvx_get_be32(w->b + 28) & 0xffffffu;
	struct sim_cq *cq;

	if (!qp->nic->cfg.cd || !qp->cd_master)
		return x_fail(r, SIM_SYND_LOCAL_QP_OP_ERR, SIM_VS_NOT_CD);
	if (w->opmod != SIM_OPMOD_WAIT_CQ)
		return x_fail(r, SIM_SYND_LOCAL_QP_OP_ERR, SIM_VS_OPCODE);
	if (w->ds != 2)
		return x_fail(r, SIM_SYND_LOCAL_QP_OP_ERR, SIM_VS_DS);
	cq = dvx_sim_cq_find(qp->nic, cqn);
	if (!cq)
		return x_fail(r, SIM_SYND_LOCAL_QP_OP_ERR, SIM_VS_NO_OBJ);
	/* produced CQE idx <=> pi - 1 is at or after idx, cyclically in 24 bits */
	if (((cq->pi - 1u - idx) & 0xffffffu) >= 0x800000u) {
		qp->wait_cqn = cqn;
		qp->wait_index = idx;
		return X_STALL;
	}
	qp->wait_cqn = 0;
	qp->wait_index = 0;
	return X_DONE;
}

/* SEND_EN / RECV_EN: raise a cd slave's limit to max_index (16-bit counter space) */
static int exec_enable(struct sim_qp *qp, const struct sim_wqe *w, struct sim_xres *r)
{
	uint32_t idx = dvx_get_be32(w->b + 24) & 0xffffu;
	uint32_t qpn = dvx_get_be32(w->b + 28) & 0xffffffu;
	struct sim_qp *s;
	uint32_t *lim;

	if (!qp->nic->cfg.cd || !qp->cd_master)
		return x_fail(r, SIM_SYND_LOCAL_QP_OP_ERR, SIM_VS_NOT_CD);
	if (w->ds != 2)
		return x_fail(r, SIM_SYND_LOCAL_QP_OP_ERR, SIM_VS_DS);
	s = dvx_sim_qp_find(qp->nic, qpn);
	if (!s)
		return x_fail(r, SIM_SYND_LOCAL_QP_OP_ERR, SIM_VS_NO_OBJ);
	if (w->opcode == SIM_OP_SEND_EN ? !s->cd_slave_send : !s->cd_slave_recv)
		return x_fail(r, SIM_SYND_LOCAL_QP_OP_ERR, SIM_VS_NOT_CD);
	lim = w->opcode == SIM_OP_SEND_EN ? &s->send_en : &s->recv_en;
	if ((uint16_t)(idx - *lim) < 0x8000u)
		*lim = idx;
	return X_DONE;
}

static int exec_one(struct sim_fabric *fab, struct sim_qp *qp, struct sim_qp *peer,
		    const struct sim_wqe *w, struct sim_xres *r)
{
	switch (w->opcode) {
	case SIM_OP_NOP:
		return X_DONE;
	case SIM_OP_RDMA_WRITE:
	case SIM_OP_RDMA_WRITE_IMM:
	case SIM_OP_SEND:
	case SIM_OP_SEND_IMM:
		if (X_UNLIKELY(w->opmod))
			return x_fail(r, SIM_SYND_LOCAL_QP_OP_ERR, SIM_VS_OPCODE);
		return exec_write_send(fab, qp, peer, w, r);
	case SIM_OP_RDMA_READ:
		if (w->opmod)
			return x_fail(r, SIM_SYND_LOCAL_QP_OP_ERR, SIM_VS_OPCODE);
		return exec_read(fab, qp, peer, w, r);
	case SIM_OP_ATOMIC_CS:
	case SIM_OP_ATOMIC_FA:
	case SIM_OP_ATOMIC_MASKED_CS:
	case SIM_OP_ATOMIC_MASKED_FA:
		return exec_atomic(fab, qp, peer, w, r);
	case SIM_OP_WAIT:
		return exec_wait(qp, w, r);
	case SIM_OP_SEND_EN:
	case SIM_OP_RECV_EN:
		return exec_enable(qp, w, r);
	default:
		/* SEND_INVAL, UMR, DUMP, ASO, MMO ... are not modelled */
		return x_fail(r, SIM_SYND_LOCAL_QP_OP_ERR, SIM_VS_OPCODE);
	}
}

/* ---- the send queue ---------------------------------------------------------- */

static void wqe_done(struct sim_qp *qp, uint32_t nwqebb)
{
	if (X_UNLIKELY(qp->exec.dma_fail) && qp->exec.dma_fail_ci == qp->sq_ci)
		qp->exec.dma_fail = 0;
	qp->sq_ci += nwqebb;
	qp->exec.ro_split = 0;
	qp->exec.rnr_active = 0;
	qp->exec.retry_active = 0;
	qp->exec.delay_done = 0;
}

static unsigned flush_pending(struct sim_fabric *fab, struct sim_qp *qp);
static void wire_ahead(struct sim_fabric *fab, struct sim_qp *qp);

/*
 * An SQ in device memory (dvx_sim_dmabuf_export_dma()): read the WQEBBs [from, to) that
 * doorbells cover into the sim's copy, as a NIC fetches WQEs over PCIe only after the
 * doorbell. 0, or -1 when the copy failed (the QP does not run in this pass).
 */
static int sq_fetch(struct sim_fabric *fab, struct sim_qp *qp, uint32_t from, uint32_t to)
{
	uint32_t nring = 1u << qp->log_sq_size, mask = nring - 1, n = (uint16_t)(to - from);
	uint32_t first = nring - (from & mask);

	if (n > nring)
		n = nring;
	if (first > n)
		first = n;
	if (first && sim_pull(fab, qp->wq_umem, qp->sq + ((size_t)(from & mask) << 6),
			      (uint64_t)first << 6))
		return -1;
	if (n > first && sim_pull(fab, qp->wq_umem, qp->sq, (uint64_t)(n - first) << 6))
		return -1;
	return 0;
}

unsigned dvx_sim_exec_qp(struct sim_fabric *fab, struct sim_qp *qp, unsigned budget)
{
	uint32_t mask, nring;
	struct sim_cq *scq;
	struct sim_qp *peer = NULL;
	int peer_known = 0;
	unsigned n = 0;
	uint8_t lin[SIM_MAX_WQE_BYTES];

	if (X_UNLIKELY(qp->state != SIM_QPS_RTS)) {
		/* hardware flushes what is posted to a QP in ERR; RST..RTR, SQD hold */
		if (qp->state == SIM_QPS_ERR)
			return flush_pending(fab, qp);
		return 0;
	}
	if (X_UNLIKELY(!qp->sq))
		return 0;
	if (X_UNLIKELY(qp->exec.ro_split) && qp->exec.ro_gen == fab->ro_gen)
		return 0;	/* reorder mode: the rest of its message comes later */
	if (X_UNLIKELY(qp->stall_until_ns)) {
		if (dvx_sim_now_ns() < qp->stall_until_ns) {
			/* the wire: the head waits for its answer, the WQEs after it go */
			if (qp->exec.w_cnt && qp->state == SIM_QPS_RTS)
				wire_ahead(fab, qp);
			return 0;
		}
		qp->stall_until_ns = 0;
	} else {
		/* the per-WQE retry state is only ever kept across a back-off; without one
		 * (e.g. the QP went through RST meanwhile) the WQE at sq_ci starts afresh */
		qp->exec.rnr_active = 0;
		qp->exec.retry_active = 0;
		qp->exec.delay_done = 0;
	}
	scq = qp_cq(qp, 0);
	if (X_UNLIKELY(scq && scq->overrun)) {
		/* its CQ is in error: the QP goes to error (async CQ error) */
		set_err(fab, qp);
		return 0;
	}
	nring = 1u << qp->log_sq_size;
	mask = nring - 1;
	if (X_UNLIKELY(qp->wq_umem && qp->wq_umem->dma) && sq_fetch(fab, qp, qp->sq_ci, qp->sq_db))
		return 0;

	while (n < budget) {
		uint32_t ci = qp->sq_ci;	/* free running; hardware sees 16 bits */
		uint32_t avail = (uint16_t)(qp->sq_db - ci);
		const uint8_t *b = qp->sq + ((size_t)(ci & mask) << 6);
		struct sim_wqe w;
		struct sim_xres r;
		uint32_t ctrl, ds, tlen;
		int rc;

		if (!avail)
			break;
		if (qp->cd_slave_send) {
			uint32_t en = (uint16_t)(qp->send_en - ci);

			if (en >= 0x8000u || !en)
				break;
			if (en < avail)
				avail = en;
		}
		ctrl = dvx_get_be32(b);
		ds = dvx_get_be32(b + 4) & 0x3fu;
		w.b = b;
		w.ds = ds;
		w.nwqebb = ds ? (ds + 3u) >> 2 : 1u;
		w.idx = (uint16_t)ci;
		w.opcode = (uint8_t)ctrl;
		w.opmod = (uint8_t)(ctrl >> 24);
		w.fm_ce_se = b[11];
		r.synd = 0;
		r.vendor = 0;
		r.peer_err = 0;
		r.byte_cnt = 0;

		tlen = 16;	/* bytes of the WQE readable at w.b, for the trace */
		if (X_UNLIKELY(w.nwqebb > avail || w.nwqebb > nring)) {
			if (qp->cd_slave_send && w.nwqebb <= nring &&
			    w.nwqebb <= (uint16_t)(qp->sq_db - ci))
				break;	/* enabled only in part: wait for the rest */
			rc = x_fail(&r, SIM_SYND_LOCAL_QP_OP_ERR, SIM_VS_DS);
			w.nwqebb = avail < w.nwqebb ? avail : w.nwqebb;
			goto fail;
		}
		if (X_UNLIKELY((ci & mask) + w.nwqebb > nring)) {
			/* runs past the ring's end: continue at WQEBB 0 (prm 2.1) */
			uint32_t first = (nring - (ci & mask)) << 6;

			memcpy(lin, b, first);
			memcpy(lin + first, qp->sq, (w.nwqebb << 6) - first);
			w.b = lin;
		}
		tlen = ds * 16u;
		if (X_UNLIKELY(!ds)) {
			tlen = 16;
			rc = x_fail(&r, SIM_SYND_LOCAL_QP_OP_ERR, SIM_VS_DS);
			goto fail;
		}
		if (X_UNLIKELY(((ctrl >> 8) & 0xffffu) != (ci & 0xffffu))) {
			rc = x_fail(&r, SIM_SYND_LOCAL_QP_OP_ERR, SIM_VS_WQE_INDEX);
			goto fail;
		}
		if (X_UNLIKELY(fab->faults.delay_ns) && !qp->exec.delay_done) {
			qp->exec.delay_done = 1;
			qp->stall_until_ns = dvx_sim_now_ns() + fab->faults.delay_ns;
			break;
		}
		if (!peer_known && w.opcode != SIM_OP_NOP) {
			peer = dvx_sim_qp_peer(fab, qp);
			peer_known = 1;
		}
		if (X_UNLIKELY(fab->ro_on) && peer &&
		    (w.opcode == SIM_OP_RDMA_READ || (w.opcode >= SIM_OP_ATOMIC_CS &&
						      w.opcode <= SIM_OP_ATOMIC_MASKED_FA)))
			ro_gather_early(fab, qp, &w, avail);
		rc = exec_one(fab, qp, peer, &w, &r);
		if (rc == X_STALL)
			break;
		if (X_UNLIKELY(qp->state != SIM_QPS_RTS))
			break;	/* a loopback responder error flushed this SQ too */
		if (X_UNLIKELY(rc != X_DONE))
			goto fail;
		if (fab->trace)
			fab->trace(fab->trace_arg, qp->nic->index, qp->qpn, 0, w.b, w.ds * 16u);
		wqe_done(qp, w.nwqebb);
		if (ro_staged(fab, qp, w.idx))
			ro_release(fab, qp);
		fab->wqes_executed++;
		n++;
		if (SIM_CTRL_CE(w.fm_ce_se) >= SIM_CTRL_CE_ALWAYS) {
			uint8_t c[64];

			if (X_UNLIKELY(!scq)) {
				scq = qp_cq(qp, 0);
				if (!scq)
					continue;
			}
			cqe_req(c, qp, w.opcode, w.idx, r.byte_cnt);
			if (X_UNLIKELY(cq_push(fab, scq, c, qp->qpn))) {
				set_err(fab, qp);
				break;
			}
		}
		continue;
fail:
		if (fab->trace)
			fab->trace(fab->trace_arg, qp->nic->index, qp->qpn, 0, w.b, tlen);
		wqe_done(qp, w.nwqebb);
		ro_release(fab, qp);
		fab->wqes_executed++;
		n++;
		req_err_cqe(fab, qp, w.opcode, w.idx, r.synd, r.vendor);
		if (r.peer_err && peer)
			set_err(fab, peer);
		set_err(fab, qp);
		break;
	}
	/* the wire: the WQEs after a head that waits for its answer go out meanwhile */
	if (X_UNLIKELY(qp->exec.w_cnt) && qp->state == SIM_QPS_RTS)
		wire_ahead(fab, qp);
	return n;
}

/* ---- flush ------------------------------------------------------------------- */

static unsigned flush_pending(struct sim_fabric *fab, struct sim_qp *qp)
{
	unsigned n = 0;

	qp->stall_until_ns = 0;
	qp->wait_cqn = 0;
	qp->wait_index = 0;
	qp->exec.rnr_active = 0;
	qp->exec.retry_active = 0;
	qp->exec.delay_done = 0;
	qp->exec.ro_split = 0;
	ro_release(fab, qp);
	if (qp->sq && qp->dbrec && !sim_pull(fab, qp->dbr_umem, qp->dbrec, 8)) {
		uint32_t mask = (1u << qp->log_sq_size) - 1;
		uint16_t c = (uint16_t)load_be32_acquire(qp->dbrec + 4);

		/* extend the record's 16 bits to the free-running counter, as control does */
		qp->sq_db += (uint16_t)(c - (uint16_t)qp->sq_db);
		if (qp->wq_umem && qp->wq_umem->dma)
			(void)sq_fetch(fab, qp, qp->sq_ci, qp->sq_db);
		while ((uint16_t)(qp->sq_db - qp->sq_ci)) {
			uint32_t ci = qp->sq_ci, avail = (uint16_t)(qp->sq_db - ci);
			const uint8_t *b = qp->sq + ((size_t)(ci & mask) << 6);
			uint32_t ds = dvx_get_be32(b + 4) & 0x3fu;
			uint32_t nw = ds ? (ds + 3u) >> 2 : 1u;

			if (nw > avail)
				nw = avail;
			req_err_cqe(fab, qp, b[3], (uint16_t)ci, SIM_SYND_WR_FLUSH_ERR, SIM_VS_FLUSH);
			qp->sq_ci = ci + nw;
			n++;
		}
	}
	if (qp->rq && qp->dbrec && qp->rq_type == 0 && !sim_pull(fab, qp->dbr_umem, qp->dbrec, 4)) {
		uint32_t db = load_be32_acquire(qp->dbrec) & 0xffffu;
		struct sim_cq *cq = qp_cq(qp, 1);

		while ((uint16_t)(db - qp->rq_ci)) {
			uint8_t c[64];

			cqe_err(c, qp, SIM_CQE_RESP_ERR, 0, (uint16_t)qp->rq_ci, SIM_SYND_WR_FLUSH_ERR,
				SIM_VS_FLUSH);
			if (cq)
				(void)cq_push(fab, cq, c, qp->qpn);
			qp->rq_ci++;
			n++;
		}
	}
	return n;
}

void dvx_sim_exec_flush(struct sim_fabric *fab, struct sim_qp *qp)
{
	(void)flush_pending(fab, qp);
}

void dvx_sim_exec_reset_qp(struct sim_qp *qp)
{
	qp->sq_ci = 0;
	qp->sq_db = 0;
	qp->db_last = 0;
	qp->rq_ci = 0;
	qp->send_en = 0;
	qp->recv_en = 0;
	qp->rnr_left = 0;
	qp->stall_until_ns = 0;
	qp->wait_cqn = 0;
	qp->wait_index = 0;
	memset(&qp->exec, 0, sizeof(qp->exec));
	if (qp->nic && qp->nic->fab)
		ro_release(qp->nic->fab, qp);
}

/* ---- the wire: requester and responder halves (docs/sim-wire.md) --------------------- */

/*
 * A responder in another process (qp->exec.w_rank). The WQE's local half ran above
 * (local keys, lengths); here its request goes out as a frame with the next PSN. Up to
 * w_win requests (SIM_WIRE_WIN at most) of a QP are on the wire at once, as RC
 * pipelines them: the WQE at sq_ci (the head) waits for its answer, the ones after it
 * are sent ahead (wire_ahead()), and they complete in order as the answers come (an
 * answer to a later PSN acknowledges the WRITEs and SENDs before it). The head's
 * transport time-out sends everything from the head again (go-back-N, the same PSNs),
 * retry_cnt times, then TRANSPORT_RETRY_EXC_ERR; after a loss one request is on the wire
 * until it is answered, and the window then doubles up to SIM_WIRE_WIN.
 */
static uint64_t wire_retry_ns(const struct sim_fabric *fab, const struct sim_qp *qp)
{
	uint64_t ns = sim_exec_retry_ns(qp), min = fab->wire_min_retry_ns;

	return ns < min ? min : ns;
}

/* the requester's faults: the request never leaves (link down, port down, drops) */
static int wire_lost(struct sim_fabric *fab, struct sim_qp *qp)
{
	if (fab->faults.link_down || !port_up(qp->nic, qp->port))
		return 1;
	if (fab->faults.drop_count) {
		fab->faults.drop_count--;
		return 1;
	}
	if (fab->faults.drop_every) {
		fab->exec_pkts++;
		if (++qp->exec.pkts % fab->faults.drop_every == 0)
			return 1;
	}
	return 0;
}

static struct sim_wslot *wslot(struct sim_qp_exec *x, uint32_t psn)
{
	return &x->w_slot[psn % SIM_WIRE_WIN];
}

/* everything from the head again, one request at first (go-back-N) */
static void wire_rewind(struct sim_qp *qp)
{
	struct sim_qp_exec *x = &qp->exec;

	x->w_cnt = 0;
	x->w_nxt = x->w_una;
	x->w_next_ci = qp->sq_ci;
	x->w_win = 1;
}

/*
 * Send the request of @w (the WQE at w_next_ci: the head, or one ahead of it) with the
 * next PSN. X_STALL when it went (or was lost on its way: it then times out as any other);
 * X_DONE when there is no room towards that process now (nothing changed, no retry
 * spent: the caller tries again later); X_ERR when its data in device memory could not be
 * read (nothing sent; the WQE is marked to fail when it is the head).
 */
static int wire_transmit(struct sim_fabric *fab, struct sim_qp *qp, const struct sim_wqe *w,
			 const struct sim_sge *sg, uint32_t nsg, uint64_t total,
			 const struct sim_atomic_op *o)
{
	struct sim_qp_exec *x = &qp->exec;
	uint32_t psn = x->w_nxt & 0xffffffu;
	struct sim_wslot *sl = wslot(x, psn);
	int again = ((x->w_hi - psn) & 0xffffffu) - 1u < 0x7fffffu;
	struct sim_wire_frame f;
	struct sim_wseg seg[SIM_MAX_SGE];
	uint32_t i;
	int rc;

	if (!wire_lost(fab, qp)) {
		memset(&f, 0, sizeof(f));
		f.type = SIM_WIRE_REQ;
		f.opcode = w->opcode;
		f.opmod = w->opmod;
		f.fm_ce_se = w->fm_ce_se;
		f.link_layer = qp->nic->cfg.port[qp->port - 1].link_layer;
		f.src_nic = (uint8_t)qp->nic->index;
		f.dst_qpn = qp->remote_qpn;
		f.src_qpn = qp->qpn;
		f.psn = psn;
		f.una = (x->w_cnt ? x->w_una : psn) & 0xffffffu;
		f.len = total;
		f.dlid = qp->rlid;
		f.slid = qp_lid(qp);
		memcpy(f.dgid, qp->rgid, 16);
		memcpy(f.dmac, qp->rmac, 6);
		memcpy(f.imm, w->b + 12, 4);
		if (w->opcode != SIM_OP_RDMA_READ && !o) {
			f.payload = (uint32_t)total;
			for (i = 0; i < nsg; i++) {
				seg[i].p = sg[i].p;
				seg[i].len = (uint32_t)sg[i].len;
				seg[i].rsvd = 0;
				seg[i].dma = sg[i].dma;
				seg[i].dptr = sg[i].dptr;
			}
		} else {
			nsg = 0;
		}
		if (w->opcode != SIM_OP_SEND && w->opcode != SIM_OP_SEND_IMM) {
			f.raddr = dvx_get_be64(w->b + 16);
			f.rkey = dvx_get_be32(w->b + 24);
		}
		if (o) {
			f.a = o->a;
			f.b = o->b;
			f.swap_mask = o->swap_mask;
			f.cmp_mask = o->cmp_mask;
		}
		rc = fab->wire_ops->send(fab, x->w_rank - 1, &f, seg, nsg,
					 again ? SIM_WIRE_RETRANSMIT : 1);
		if (rc == -EAGAIN)
			return X_DONE;
		if (X_UNLIKELY(rc == -EIO)) {
			x->dma_fail = 1;
			x->dma_fail_ci = x->w_next_ci;
			return X_ERR;
		}
		/* -ENOTCONN (the process is gone): lost */
		sl->wend = rc || !fab->wire_ops->pos ? 0 :
			   fab->wire_ops->pos(fab, x->w_rank - 1, &sl->wgen);
	} else {
		sl->wend = 0;
	}
	if (!x->w_cnt)
		x->w_una = psn;
	sl->ci = x->w_next_ci;
	sl->bytes = 0;
	sl->resp = 0;
	sl->ro_held = 0;
	sl->data = w->opcode == SIM_OP_RDMA_READ || o;
	sl->deadline = sim_wire_now(fab) + wire_retry_ns(fab, qp);
	x->w_cnt++;
	if (x->w_cnt > fab->wire_window_max)
		fab->wire_window_max = x->w_cnt;
	x->w_nxt = (psn + 1) & 0xffffffu;
	if (!again)
		x->w_hi = x->w_nxt;
	x->w_next_ci += w->nwqebb;
	return X_STALL;
}

static int wire_req(struct sim_fabric *fab, struct sim_qp *qp, const struct sim_wqe *w,
		    const struct sim_sge *sg, uint32_t nsg, uint64_t total,
		    const struct sim_atomic_op *o, struct sim_xres *r)
{
	struct sim_qp_exec *x = &qp->exec;
	struct sim_wslot *sl;
	uint64_t wnow;
	int rc;

	if (X_UNLIKELY(total > fab->wire_max_msg))
		return x_fail(r, SIM_SYND_LOCAL_LENGTH_ERR, SIM_VS_MSG_LEN);
	if (!x->w_seeded) {
		/* the first PSN from the clock, so that a QP that went through RST never
		 * repeats the PSNs its responder saw last */
		x->w_nxt = (uint32_t)dvx_sim_now_ns() & 0xffffffu;
		x->w_una = x->w_nxt;
		x->w_next_ci = qp->sq_ci;
		x->w_win = SIM_WIRE_WIN;
		x->w_hi = x->w_nxt;
		x->w_seeded = 1;
	}
	if (x->w_ahead)		/* wire_ahead(): only its request */
		return wire_transmit(fab, qp, w, sg, nsg, total, o);
	if (X_UNLIKELY(x->dma_fail) && x->dma_fail_ci == qp->sq_ci) {
		/* its data could not be read when it was sent (ahead, or before a go-back):
		 * it fails, never a success */
		wire_rewind(qp);
		return dma_fail(r, 0);
	}
	if (!x->w_cnt) {
		/* the head is not on the wire (new, or sent again after a loss) */
		x->w_next_ci = qp->sq_ci;
		rc = wire_transmit(fab, qp, w, sg, nsg, total, o);
		if (X_UNLIKELY(rc == X_ERR)) {
			wire_rewind(qp);
			return dma_fail(r, 0);
		}
		if (rc == X_DONE) {
			/* no room towards that process yet: not sent, so no retry spent */
			qp->stall_until_ns = dvx_sim_now_ns() + 20000u;
			return X_STALL;
		}
		qp->stall_until_ns = dvx_sim_now_ns() + wire_retry_ns(fab, qp);
		return X_STALL;
	}
	sl = wslot(x, x->w_una);
	if (sl->resp == SIM_WIRE_RNR) {
		/* the responder dropped what came after it: all again after its timer */
		sl->resp = 0;
		wire_rewind(qp);
		return rnr_wait(qp, sl->synd, r);
	}
	if (sl->resp) {
		uint8_t resp = sl->resp;

		sl->resp = 0;
		x->w_una = (x->w_una + 1) & 0xffffffu;
		x->w_cnt--;
		if (resp == SIM_WIRE_ACK) {
			r->byte_cnt = sl->bytes;
			if (x->w_win < SIM_WIRE_WIN)
				x->w_win *= 2;
			return X_DONE;
		}
		/* the responder has set its own QP to ERR where IB says so */
		return x_fail(r, sl->synd, sl->vendor);
	}
	wnow = sim_wire_now(fab);
	if (wnow < sl->deadline) {
		/* woken early, or the process stood still meanwhile (SIM_WIRE_GAP_NS) */
		qp->stall_until_ns = dvx_sim_now_ns() + (sl->deadline - wnow);
		return X_STALL;
	}
	if (sl->wend && fab->wire_ops->unread &&
	    fab->wire_ops->unread(fab, x->w_rank - 1, sl->wend, sl->wgen)) {
		/* the responder's process has not read the request yet: it did not run,
		 * and a NIC, which runs while its host stands still, would have answered
		 * long ago. Not lost: no retry spent, nothing sent again */
		fab->wunread++;
		sl->deadline = wnow + wire_retry_ns(fab, qp);
		qp->stall_until_ns = dvx_sim_now_ns() + wire_retry_ns(fab, qp);
		return X_STALL;
	}
	/* lost (or its answer was): everything from the head again, with the same PSNs */
	if (!x->retry_active) {
		x->retry_active = 1;
		x->retry_left = qp->retry_cnt;
	}
	if (!x->retry_left) {
		fab->wretry_exc.qpn = qp->qpn;
		fab->wretry_exc.psn = x->w_una;
		fab->wretry_exc.rank = (int32_t)x->w_rank - 1;
		fab->wretry_exc.quiet_ms = fab->wire_ops->quiet ?
			(uint32_t)(fab->wire_ops->quiet(fab, x->w_rank - 1) / 1000000u) : 0;
		fab->wretry_exc_n++;
		wire_rewind(qp);
		return x_fail(r, SIM_SYND_TRANSPORT_RETRY_EXC_ERR, SIM_VS_RETRY);
	}
	x->retry_left--;
	wire_rewind(qp);
	rc = wire_transmit(fab, qp, w, sg, nsg, total, o);
	if (X_UNLIKELY(rc == X_ERR)) {
		wire_rewind(qp);
		return dma_fail(r, 0);
	}
	qp->stall_until_ns = dvx_sim_now_ns() + (rc == X_DONE ? 20000u : wire_retry_ns(fab, qp));
	return X_STALL;
}

/*
 * Send the WQEs after the ones on the wire, while the window has room: each one's local
 * half runs (exec_one() with w_ahead) and its request goes. Stops at what only the head
 * may run (not a request, a fence, a WQE not whole, one whose local half fails: it
 * fails when it is the head, after the ones before it completed), at cd_slave_send's
 * limit, and when there is no room towards that process.
 */
static void wire_ahead(struct sim_fabric *fab, struct sim_qp *qp)
{
	struct sim_qp_exec *x = &qp->exec;
	uint32_t nring = 1u << qp->log_sq_size, mask = nring - 1;
	uint8_t lin[SIM_MAX_WQE_BYTES];

	if (fab->faults.delay_ns || !x->w_cnt || x->w_rank == 0)
		return;
	while (x->w_cnt < x->w_win && x->w_cnt < SIM_WIRE_WIN) {
		uint32_t ci = x->w_next_ci, avail = (uint16_t)(qp->sq_db - ci), cnt = x->w_cnt;
		const uint8_t *b = qp->sq + ((size_t)(ci & mask) << 6);
		struct sim_xres r = { 0 };
		struct sim_wqe w;
		uint32_t ctrl;
		int rc;

		if (!avail || avail >= 0x8000u)
			break;
		if (qp->cd_slave_send) {
			uint32_t en = (uint16_t)(qp->send_en - ci);

			if (en >= 0x8000u || !en)
				break;
			if (en < avail)
				avail = en;
		}
		ctrl = dvx_get_be32(b);
		w.b = b;
		w.ds = dvx_get_be32(b + 4) & 0x3fu;
		w.nwqebb = w.ds ? (w.ds + 3u) >> 2 : 1u;
		w.idx = (uint16_t)ci;
		w.opcode = (uint8_t)ctrl;
		w.opmod = (uint8_t)(ctrl >> 24);
		w.fm_ce_se = b[11];
		if (!w.ds || w.nwqebb > avail || ((ctrl >> 8) & 0xffffu) != (ci & 0xffffu) ||
		    (w.fm_ce_se >> 5) || (x->dma_fail && x->dma_fail_ci == ci))
			break;
		switch (w.opcode) {
		case SIM_OP_RDMA_WRITE:
		case SIM_OP_RDMA_WRITE_IMM:
		case SIM_OP_SEND:
		case SIM_OP_SEND_IMM:
		case SIM_OP_RDMA_READ:
		case SIM_OP_ATOMIC_CS:
		case SIM_OP_ATOMIC_FA:
		case SIM_OP_ATOMIC_MASKED_CS:
		case SIM_OP_ATOMIC_MASKED_FA:
			break;
		default:
			return;
		}
		if ((ci & mask) + w.nwqebb > nring) {
			uint32_t first = (nring - (ci & mask)) << 6;

			memcpy(lin, b, first);
			memcpy(lin + first, qp->sq, (w.nwqebb << 6) - first);
			w.b = lin;
		}
		x->w_ahead = 1;
		rc = exec_one(fab, qp, NULL, &w, &r);
		x->w_ahead = 0;
		if (rc != X_STALL || x->w_cnt == cnt)
			break;
	}
}

/* The WQE at @qp's SQ index @ci, its bytes contiguous in @lin if it wraps. */
static void wqe_at(const struct sim_qp *qp, uint32_t ci, struct sim_wqe *w, uint8_t *lin)
{
	uint32_t nring = 1u << qp->log_sq_size, mask = nring - 1;
	const uint8_t *b = qp->sq + ((size_t)(ci & mask) << 6);
	uint32_t ctrl = dvx_get_be32(b);

	w->b = b;
	w->ds = dvx_get_be32(b + 4) & 0x3fu;
	w->nwqebb = w->ds ? (w->ds + 3u) >> 2 : 1u;
	w->idx = (uint16_t)ci;
	w->opcode = (uint8_t)ctrl;
	w->opmod = (uint8_t)(ctrl >> 24);
	w->fm_ce_se = b[11];
	if ((ci & mask) + w->nwqebb > nring) {
		uint32_t first = (nring - (ci & mask)) << 6;

		memcpy(lin, b, first);
		memcpy(lin + first, qp->sq, (w->nwqebb << 6) - first);
		w->b = lin;
	}
}

/*
 * A WRITE's payload that is still arriving (cut-through, docs/sim-wire.md): its bytes
 * to @t as they come, each byte taken once, in order, as a NIC places a message's
 * packets. CP_OK; CP_DST when the destination could not be written; CP_LATE when the
 * rest did not come in time (what came is in place; the frame is executed again whole).
 */
static int wpay_stream(struct sim_fabric *fab, const struct sim_sge *t,
		       const struct sim_sge *pl, uint32_t npl, uint64_t len,
		       const struct sim_wpay *pay)
{
	uint64_t done = 0, have = pay->have;
	int rc;

	for (;;) {
		if (have > len)
			have = len;
		if (have > done) {
			rc = sgl_copy(fab, t, 1, done, pl, npl, done, have - done);
			if (X_UNLIKELY(rc))
				return rc;
			done = have;
		}
		if (done == len)
			return CP_OK;
		have = pay->more(pay, done);
		if (have <= done)
			return CP_LATE;
	}
}

/* a frame's payload as a list of host pieces (one, or two where it wraps a ring's end;
 * none when empty); the count */
static uint32_t wpay_sges(const struct sim_wpay *pay, struct sim_sge *s)
{
	uint32_t n = 0;

	if (pay->n[0])
		sge_host(&s[n++], pay->p[0], pay->n[0]);
	if (pay->n[1])
		sge_host(&s[n++], pay->p[1], pay->n[1]);
	return n;
}

/*
 * An ACK's data for the WQE of @sl: a READ's bytes, an atomic's old value. 0, or -EIO
 * when they could not be written to the requester's device memory (the WQE then fails).
 */
static int wire_ack_data(struct sim_fabric *fab, struct sim_qp *qp, struct sim_wslot *sl,
			 const struct sim_wire_frame *f, const struct sim_wpay *pay)
{
	uint8_t lin[SIM_MAX_WQE_BYTES];
	struct sim_sge sg[SIM_MAX_SGE], res, src[2];
	uint32_t nsrc;
	struct sim_wqe w;
	struct sim_xres r;
	uint64_t total;
	uint32_t nsg, size, opseg;
	const uint8_t *d;

	wqe_at(qp, sl->ci, &w, lin);
	if (w.opcode == SIM_OP_RDMA_READ) {
		/* the scatter list was checked before the request left */
		total = 0;
		if (local_sgl(qp, &w, 2, 1, 0, sg, &nsg, &total, &r) == X_DONE &&
		    total == f->payload) {
			nsrc = wpay_sges(pay, src);
			if (X_UNLIKELY(fab->ro_on) && !sl->ro_held) {
				/* reorder mode: a part now, the whole in the frame's next pass */
				int rc = ro_place_part(fab, sg, nsg, src, nsrc, total, 1);

				if (rc > 0) {
					sl->ro_held = 1;
					return 1;
				}
				if (rc < 0)
					return -EIO;
			}
			if (total && sgl_copy(fab, sg, nsg, 0, src, nsrc, 0, total))
				return -EIO;
		}
		sl->bytes = (uint32_t)total;
		return 0;
	}
	size = (w.opcode == SIM_OP_ATOMIC_MASKED_CS || w.opcode == SIM_OP_ATOMIC_MASKED_FA) &&
	       w.opmod == SIM_OPMOD_EXT_ATOMIC_4B ? 4 : 8;
	opseg = w.opcode == SIM_OP_ATOMIC_MASKED_CS && size == 8 ? 2 : 1;
	sl->bytes = size;
	if (w.ds != 3 + opseg)
		return 0;	/* no result segment: the value is discarded */
	d = w.b + (2 + opseg) * 16u;
	if (local_buf(qp, dvx_get_be32(d + 4), dvx_get_be64(d + 8), size, 1, &res, &r) != X_DONE)
		return 0;
	return atomic_result(fab, qp->nic, &res, size, f->a);
}

/*
 * An answer for @f->psn. Answers come in PSN order (one stream, a responder that
 * executes in order), so one to a PSN also acknowledges the requests before it that
 * carry no data (WRITE, SEND); a READ's or an atomic's answer that did not come is lost
 * and the head's time-out sends it again. An answer to nothing on the wire (a duplicate,
 * one before a go-back, a QP reset meanwhile) is dropped. In the reorder mode a READ's
 * data may be placed in part first (return 1: the frame is held and comes again).
 */
int dvx_sim_exec_wire_response(struct sim_fabric *fab, const struct sim_wire_frame *f,
			       const struct sim_wpay *pay)
{
	struct sim_qp_exec *x;
	struct sim_wslot *sl;
	struct sim_qp *qp;
	uint32_t off, i;
	int rc = 0;

	if (f->src_nic >= fab->nnics)
		return 0;
	qp = dvx_sim_qp_find(&fab->nics[f->src_nic], f->dst_qpn);
	if (!qp || qp->state != SIM_QPS_RTS || f->src_qpn != qp->remote_qpn) {
		fab->wstale++;
		return 0;
	}
	x = &qp->exec;
	off = (f->psn - x->w_una) & 0xffffffu;
	if (!x->w_cnt || off >= x->w_cnt || wslot(x, f->psn)->resp) {
		fab->wstale++;
		return 0;
	}
	sl = wslot(x, f->psn);
	for (i = 0; i < off; i++) {
		struct sim_wslot *e = wslot(x, (x->w_una + i) & 0xffffffu);

		if (!e->resp && !e->data) {
			e->resp = SIM_WIRE_ACK;
			e->bytes = 0;
		}
	}
	if (f->type == SIM_WIRE_ACK && sl->data)
		rc = wire_ack_data(fab, qp, sl, f, pay);
	if (rc > 0)
		return 1;	/* placed in part: the rest in the frame's next pass */
	if (X_UNLIKELY(rc)) {
		/* the data could not be placed: the WQE fails at the requester */
		sl->synd = SIM_SYND_LOCAL_PROT_ERR;
		sl->vendor = SIM_VS_DMA_LOCAL;
		sl->resp = SIM_WIRE_NAK;
	} else {
		sl->synd = f->synd;
		sl->vendor = f->vendor;
		sl->resp = f->type;
	}
	/* wake it now if its head is answered, keeping its retry state (a zero stall
	 * would reset it) */
	if (wslot(x, x->w_una)->resp)
		qp->stall_until_ns = 1;
	return 0;
}

/*
 * The responder's answer to @rq: @type with @synd/@vendor, @old, or a READ's bytes
 * (@data, host or device memory). 0, or -EIO when @data in device memory could not be
 * read (nothing was sent).
 */
static int wire_answer(struct sim_fabric *fab, uint32_t rank, const struct sim_wire_frame *rq,
		       struct sim_qp *peer, uint8_t type, uint8_t synd, uint8_t vendor,
		       uint64_t old, const struct sim_sge *data, uint64_t len)
{
	struct sim_wire_frame f;
	struct sim_wseg seg;

	/* the responder's drop fault takes answers (an ACK lost on its way): the requester
	 * sends the request again, and the responder answers its duplicate */
	if (X_UNLIKELY(fab->faults.drop_every) &&
	    ++peer->exec.wr_answers % fab->faults.drop_every == 0) {
		fab->exec_pkts++;
		return 0;
	}
	memset(&f, 0, sizeof(f));
	f.type = type;
	f.opcode = rq->opcode;
	f.synd = synd;
	f.vendor = vendor;
	f.src_nic = rq->src_nic;
	f.dst_qpn = rq->src_qpn;
	f.src_qpn = peer->qpn;
	f.psn = rq->psn;
	f.len = len;
	f.a = old;
	f.payload = data ? (uint32_t)len : 0;
	memset(&seg, 0, sizeof(seg));
	if (data) {
		seg.p = data->p;
		seg.dma = data->dma;
		seg.dptr = data->dptr;
	}
	seg.len = (uint32_t)len;
	/* room was checked before the request was executed */
	return fab->wire_ops->send(fab, rank, &f, &seg, data && len ? 1 : 0, 0) == -EIO ? -EIO : 0;
}

/*
 * The responder half of a request from process @rank: the checks and the effects that
 * exec_write_send(), exec_read() and exec_atomic() make at an in-process responder, in
 * the same order, on this process's memory only; then the answer. Requests are executed
 * in PSN order: the next expected PSN (wr_epsn) is executed; one of the SIM_WIRE_WIN
 * before it is a retransmission, answered again without running twice (a READ is read
 * again, an atomic's result is kept for it); one after it came after a lost one and is
 * dropped (the requester goes back to the lost one). The first request of a requester
 * (its una, the oldest PSN it has on the wire, is its own PSN) sets the expected PSN. A
 * request that finds no responder, a port down, a QP not receiving, or no room for its
 * answer is dropped (the requester retries).
 */
/* @f dropped for @why (enum dvx_sim_wire_drop): kept for the wire's counters */
static int wdrop(struct sim_fabric *fab, const struct sim_wire_frame *f,
		 const struct sim_qp *peer, uint32_t why)
{
	fab->wdrop.why = why;
	fab->wdrop.qpn = f->dst_qpn;
	fab->wdrop.psn = f->psn;
	fab->wdrop.epsn = peer ? peer->exec.wr_epsn : 0;
	fab->wdrop.state = peer ? peer->state : 0xffu;
	return SIM_WIRE_DROPPED;
}

int dvx_sim_exec_wire_request(struct sim_fabric *fab, uint32_t rank, struct sim_qp *peer,
			      const struct sim_wire_frame *f, const struct sim_wpay *pay)
{
	uint8_t fake[16] = { 0 };
	struct sim_qp_exec *x;
	struct sim_whist *h;
	struct sim_sge t, pl[2];
	uint32_t npl;
	struct sim_xres r = { 0 };
	struct sim_wqe w;
	struct sim_atomic_op o;
	uint64_t old = 0;
	uint32_t back;
	int is_write = f->opcode == SIM_OP_RDMA_WRITE || f->opcode == SIM_OP_RDMA_WRITE_IMM;
	int rc, dup;

	/* only a WRITE's payload is taken as it arrives (the wire streams no other) */
	if (X_UNLIKELY(pay->more) && (!is_write || fab->ro_on))
		return SIM_WIRE_LATER;
	if (!peer)
		return wdrop(fab, f, peer, DVX_SIM_WDROP_NO_QP);
	if (fab->faults.link_down || !port_up(peer->nic, peer->port))
		return wdrop(fab, f, peer, DVX_SIM_WDROP_LINK);
	if (peer->state < SIM_QPS_RTR)
		return wdrop(fab, f, peer, DVX_SIM_WDROP_NOT_RTR);
	if (peer->state == SIM_QPS_ERR)
		return wdrop(fab, f, peer, DVX_SIM_WDROP_QP_ERR);
	if (!fab->wire_ops->room(fab, rank, f->opcode == SIM_OP_RDMA_READ ? f->len : 0))
		return wdrop(fab, f, peer, DVX_SIM_WDROP_ROOM);
	x = &peer->exec;
	back = (x->wr_epsn - f->psn) & 0xffffffu;	/* 1..WIN: done already */
	dup = x->wr_valid && x->wr_src == f->src_qpn && back - 1u < SIM_WIRE_WIN;
	if (!dup && (!x->wr_valid || x->wr_src != f->src_qpn || f->psn != x->wr_epsn)) {
		/* a requester's first request, or one that went through RST (a new PSN
		 * from its clock): it names itself the oldest on the wire */
		if (f->una != f->psn)	/* one before it was lost */
			return wdrop(fab, f, peer, DVX_SIM_WDROP_ORDER);
		x->wr_valid = 1;
		x->wr_src = f->src_qpn;
		x->wr_epsn = f->psn;
		memset(x->wr_hist, 0, sizeof(x->wr_hist));
	}
	switch (f->opcode) {
	case SIM_OP_RDMA_WRITE:
	case SIM_OP_RDMA_WRITE_IMM:
	case SIM_OP_SEND:
	case SIM_OP_SEND_IMM:
		if (dup)
			goto ack;
		if (is_write && !(peer->access & DVX_ACCESS_REMOTE_WRITE)) {
			rc = x_fail(&r, SIM_SYND_REMOTE_INVAL_REQ_ERR, SIM_VS_QP_ACCESS);
			r.peer_err = 1;
			goto nak;
		}
		if (f->opcode != SIM_OP_RDMA_WRITE) {
			if (!has_rq(peer)) {
				rc = x_fail(&r, SIM_SYND_REMOTE_INVAL_REQ_ERR, SIM_VS_NO_RQ);
				r.peer_err = 1;
				goto nak;
			}
			if (!rq_avail(peer)) {
				/* not executed: the same PSN is expected again */
				wire_answer(fab, rank, f, peer, SIM_WIRE_RNR, peer->min_rnr_nak, 0, 0,
					    NULL, 0);
				return SIM_WIRE_DONE;
			}
		}
		if (is_write && f->len &&
		    remote_buf(peer, peer, f->rkey, f->raddr, f->len, DVX_ACCESS_REMOTE_WRITE, &t,
			       &r) != X_DONE)
			goto nak;
		if (is_write && f->len) {
			npl = wpay_sges(pay, pl);
			if (X_UNLIKELY(fab->ro_on)) {
				/* reorder mode: a part now; the frame stays, and its next pass
				 * (ro_wheld) places the whole message and goes on */
				if (x->ro_wheld && x->ro_wpsn == f->psn) {
					x->ro_wheld = 0;
				} else {
					rc = ro_place_part(fab, pl, npl, &t, 1, f->len, 0);
					if (rc > 0) {
						x->ro_wheld = 1;
						x->ro_wpsn = f->psn;
						return SIM_WIRE_HELD;
					}
					if (X_UNLIKELY(rc < 0)) {
						rc = dma_fail(&r, 1);
						goto nak;
					}
				}
			}
			if (X_UNLIKELY(pay->more)) {
				rc = wpay_stream(fab, &t, pl, npl, f->len, pay);
				if (rc == CP_LATE)
					return SIM_WIRE_LATER;
			} else {
				rc = sgl_copy(fab, &t, 1, 0, pl, npl, 0, f->len);
			}
			if (X_UNLIKELY(rc)) {
				rc = dma_fail(&r, 1);
				goto nak;
			}
		}
		if (f->opcode != SIM_OP_RDMA_WRITE) {
			memcpy(fake + 12, f->imm, 4);
			memset(&w, 0, sizeof(w));
			w.b = fake;
			w.opcode = f->opcode;
			w.fm_ce_se = f->fm_ce_se;
			npl = wpay_sges(pay, pl);
			rc = recv_complete(fab, f->src_qpn, f->slid, peer, &w,
					   is_write ? NULL : pl, is_write ? 0 : npl, f->len, &r);
			if (rc == X_STALL)	/* its CQ overran: ERR, no answer */
				return wdrop(fab, f, peer, DVX_SIM_WDROP_OVERRUN);
			if (rc != X_DONE)
				goto nak;
		}
		goto ack;
	case SIM_OP_RDMA_READ:
		if (!(peer->access & DVX_ACCESS_REMOTE_READ)) {
			rc = x_fail(&r, SIM_SYND_REMOTE_INVAL_REQ_ERR, SIM_VS_QP_ACCESS);
			r.peer_err = 1;
			goto nak;
		}
		if (f->len && remote_buf(peer, peer, f->rkey, f->raddr, f->len,
					 DVX_ACCESS_REMOTE_READ, &t, &r) != X_DONE)
			goto nak;
		if (X_UNLIKELY(wire_answer(fab, rank, f, peer, SIM_WIRE_ACK, 0, 0, 0,
					   f->len ? &t : NULL, f->len))) {
			/* its bytes could not be read from device memory: class C, the
			 * responder goes to ERR (a retransmission's re-read as well) */
			if (!dup)
				x->wr_epsn = (f->psn + 1) & 0xffffffu;
			set_err(fab, peer);
			(void)wire_answer(fab, rank, f, peer, SIM_WIRE_NAK, SIM_SYND_REMOTE_ACCESS_ERR,
					  SIM_VS_DMA_REMOTE, 0, NULL, 0);
			return SIM_WIRE_DONE;
		}
		if (!dup)
			x->wr_epsn = (f->psn + 1) & 0xffffffu;
		return dup ? SIM_WIRE_DUP : SIM_WIRE_DONE;
	case SIM_OP_ATOMIC_CS:
	case SIM_OP_ATOMIC_FA:
	case SIM_OP_ATOMIC_MASKED_CS:
	case SIM_OP_ATOMIC_MASKED_FA:
		h = &x->wr_hist[f->psn % SIM_WIRE_WIN];
		if (dup) {
			if (!h->valid || h->psn != f->psn)	/* not one it executed */
				return wdrop(fab, f, peer, DVX_SIM_WDROP_ATOMIC);
			old = h->old;
			goto ack;
		}
		if (!(peer->access & DVX_ACCESS_REMOTE_ATOMIC)) {
			rc = x_fail(&r, SIM_SYND_REMOTE_INVAL_REQ_ERR, SIM_VS_QP_ACCESS);
			r.peer_err = 1;
			goto nak;
		}
		o.size = f->len == 4 ? 4 : 8;
		if ((f->opcode == SIM_OP_ATOMIC_MASKED_CS || f->opcode == SIM_OP_ATOMIC_MASKED_FA) &&
		    peer->atomic_mode < 3) {
			rc = x_fail(&r, SIM_SYND_REMOTE_INVAL_REQ_ERR, SIM_VS_ATOMIC_MODE);
			r.peer_err = 1;
			goto nak;
		}
		if (f->raddr & (o.size - 1)) {
			rc = x_fail(&r, SIM_SYND_REMOTE_INVAL_REQ_ERR, SIM_VS_ALIGN);
			r.peer_err = 1;
			goto nak;
		}
		if (remote_buf(peer, peer, f->rkey, f->raddr, o.size, DVX_ACCESS_REMOTE_ATOMIC, &t,
			       &r) != X_DONE)
			goto nak;
		o.cs = f->opcode == SIM_OP_ATOMIC_CS || f->opcode == SIM_OP_ATOMIC_MASKED_CS;
		o.a = f->a;
		o.b = f->b;
		o.swap_mask = f->swap_mask;
		o.cmp_mask = f->cmp_mask;
		if (X_UNLIKELY(atomic_at(fab, &t, o.size, &o, &old))) {
			rc = dma_fail(&r, 1);
			goto nak;
		}
		h->psn = f->psn;
		h->valid = 1;
		h->old = old;
		goto ack;
	default:
		/* the requester sends no other opcode */
		return wdrop(fab, f, peer, DVX_SIM_WDROP_OPCODE);
	}
ack:
	if (!dup)
		x->wr_epsn = (f->psn + 1) & 0xffffffu;
	wire_answer(fab, rank, f, peer, SIM_WIRE_ACK, 0, 0, old, NULL, 0);
	return dup ? SIM_WIRE_DUP : SIM_WIRE_DONE;
nak:
	(void)rc;
	if (dup)	/* answered before; its QP is in ERR since */
		return wdrop(fab, f, peer, DVX_SIM_WDROP_QP_ERR);
	x->wr_epsn = (f->psn + 1) & 0xffffffu;
	if (r.peer_err)
		set_err(fab, peer);
	wire_answer(fab, rank, f, peer, SIM_WIRE_NAK, r.synd, r.vendor, 0, NULL, 0);
	return SIM_WIRE_DONE;
}

/* ---- a QP into the error state ------------------------------------------------ */

uint32_t dvx_sim_qp_rq_counter(const struct sim_qp *qp)
{
	uint32_t w;

	(void)sim_pull(qp->nic->fab, qp->dbr_umem, qp->dbrec, 4);
	w = __atomic_load_n((const uint32_t *)(const void *)qp->dbrec, __ATOMIC_ACQUIRE);

	return dvx_be32_to_cpu((DVX_FORCE dvx_be32)w) & 0xffff;
}

void dvx_sim_qp_set_err(struct sim_fabric *fab, struct sim_qp *qp)
{
	if (qp->state == SIM_QPS_ERR)
		return;
	qp->state = SIM_QPS_ERR;
	qp->flush_db = qp->sq_db;
	qp->flush_rq = dvx_sim_qp_rq_counter(qp);
	dvx_sim_exec_flush(fab, qp);
}
