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

struct sim_sge {
	uint8_t *p;
	uint32_t len;
};

static int x_fail(struct sim_xres *r, uint8_t synd, uint8_t vendor)
{
	r->synd = synd;
	r->vendor = vendor;
	return X_ERR;
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

/* host address of [addr, addr + len) inside @mr, or NULL */
static inline uint8_t *mr_range(const struct sim_mr *mr, uint64_t addr, uint64_t len)
{
	uint64_t off = addr - mr->iova;

	if (X_UNLIKELY(addr < mr->iova || off > mr->len || len > mr->len - off))
		return NULL;
	return mr->base + off;
}

/* a local buffer of @qp: lkey on its NIC, same PD, in bounds, LOCAL_WRITE if @write */
static inline int local_buf(struct sim_qp *qp, uint32_t lkey, uint64_t addr, uint32_t len,
			    int write, uint8_t **p, struct sim_xres *r)
{
	struct sim_mr *mr = key_lookup(qp, qp->nic, lkey);

	if (X_UNLIKELY(!mr))
		return x_fail(r, SIM_SYND_LOCAL_PROT_ERR, SIM_VS_LKEY);
	if (X_UNLIKELY(mr->pdn != qp->pdn))
		return x_fail(r, SIM_SYND_LOCAL_PROT_ERR, SIM_VS_LKEY_PD);
	if (X_UNLIKELY(write && !(mr->access & DVX_ACCESS_LOCAL_WRITE)))
		return x_fail(r, SIM_SYND_LOCAL_PROT_ERR, SIM_VS_LKEY_ACCESS);
	*p = mr_range(mr, addr, len);
	if (X_UNLIKELY(!*p))
		return x_fail(r, SIM_SYND_LOCAL_PROT_ERR, SIM_VS_LKEY_BOUNDS);
	return X_DONE;
}

/* a remote buffer at the responder @peer: rkey on its NIC, its PD, bounds, @acc */
static inline int remote_buf(struct sim_qp *qp, struct sim_qp *peer, uint32_t rkey,
			     uint64_t addr, uint64_t len, uint32_t acc, uint8_t **p,
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
	*p = mr_range(mr, addr, len);
	if (X_UNLIKELY(!*p))
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
			sg[0].p = (uint8_t *)(uintptr_t)(d + 4);
			sg[0].len = len;
			*nsg = len ? 1 : 0;
			*total = len;
			return X_DONE;
		}
		if (!bc)
			continue;
		if (local_buf(qp, dvx_get_be32(d + 4), dvx_get_be64(d + 8), bc, write, &sg[n].p,
			      r) != X_DONE)
			return X_ERR;
		sg[n++].len = bc;
		t += bc;
	}
	*nsg = n;
	*total = t;
	return X_DONE;
}

static inline void copy_gather(uint8_t *dst, const struct sim_sge *sg, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		memmove(dst, sg[i].p, sg[i].len);
		dst += sg[i].len;
	}
}

static inline void copy_scatter(const struct sim_sge *sg, uint32_t n, const uint8_t *src)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		memmove(sg[i].p, src, sg[i].len);
		src += sg[i].len;
	}
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
			    !(dst[nd].p = mr_range(mr, dvx_get_be64(d + 8), bc))) {
				resp_synd = SIM_SYND_LOCAL_PROT_ERR;
				vs = SIM_VS_RECV_PROT;
				break;
			}
			dst[nd++].len = bc;
			room += bc;
		}
		if (!resp_synd && len > room) {
			resp_synd = SIM_SYND_LOCAL_LENGTH_ERR;
			vs = SIM_VS_RECV_LEN;
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
	if (sg) {
		/* gather -> scatter, both lists in order */
		uint32_t si = 0, di = 0, so = 0, dof = 0;

		while (si < nsg && di < nd) {
			uint32_t k = sg[si].len - so;

			if (dst[di].len - dof < k)
				k = dst[di].len - dof;
			memmove(dst[di].p + dof, sg[si].p + so, k);
			so += k;
			dof += k;
			if (so == sg[si].len) {
				si++;
				so = 0;
			}
			if (dof == dst[di].len) {
				di++;
				dof = 0;
			}
		}
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

/* 8-byte atomic replies in host order? the NIC's atomic cap atomic_req_8B_endianness_mode
 * (page dword 8 [31:30]) == 1 (prm 6); otherwise, and always for 4 bytes, big-endian */
static int atomic_reply_host(const struct sim_nic *nic)
{
	return ((dvx_get_be32(nic->cap_atomic + 8) >> 30) & 3u) == 1;
}

static int exec_atomic(struct sim_fabric *fab, struct sim_qp *qp, struct sim_qp *peer,
		       const struct sim_wqe *w, struct sim_xres *r)
{
	const uint8_t *s = w->b + 32;	/* the operand segment */
	struct sim_atomic_op o;
	uint32_t size = 8, opseg = 1, bc;
	uint8_t *res = NULL, *t;
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
	old = atomic_apply(t, size, &o);
	if (res) {
		if (size == 4)
			dvx_put_be32(res, (uint32_t)old);
		else if (atomic_reply_host(qp->nic))
			memcpy(res, &old, 8);
		else
			dvx_put_be64(res, old);
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
	struct sim_sge sg[SIM_MAX_SGE];
	uint64_t total;
	uint8_t *t = NULL;

	if (X_UNLIKELY(w->ds < first))
		return x_fail(r, SIM_SYND_LOCAL_QP_OP_ERR, SIM_VS_DS);
	if (local_sgl(qp, w, first, 0, 1, sg, &nsg, &total, r) != X_DONE)
		return X_ERR;
	if (X_UNLIKELY(msg_too_long(qp, total)))
		return x_fail(r, SIM_SYND_LOCAL_LENGTH_ERR, SIM_VS_MSG_LEN);
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
		if (X_LIKELY(nsg == 1 && total))
			memmove(t, sg[0].p, sg[0].len);
		else if (total)
			copy_gather(t, sg, nsg);
		if (!needs_recv)
			return X_DONE;
		return recv_complete(fab, qp->qpn, qp_lid(qp), peer, w, NULL, 0, total, r);
	}
	return recv_complete(fab, qp->qpn, qp_lid(qp), peer, w, sg, nsg, total, r);
}

static int exec_read(struct sim_fabric *fab, struct sim_qp *qp, struct sim_qp *peer,
		     const struct sim_wqe *w, struct sim_xres *r)
{
	struct sim_sge sg[SIM_MAX_SGE];
	uint32_t nsg;
	uint64_t total;
	uint8_t *s = NULL;

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
	copy_scatter(sg, nsg, s);
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
	qp->sq_ci += nwqebb;
	qp->exec.rnr_active = 0;
	qp->exec.retry_active = 0;
	qp->exec.delay_done = 0;
}

static unsigned flush_pending(struct sim_fabric *fab, struct sim_qp *qp);

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
	if (X_UNLIKELY(qp->stall_until_ns)) {
		if (dvx_sim_now_ns() < qp->stall_until_ns)
			return 0;
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
		fab->wqes_executed++;
		n++;
		req_err_cqe(fab, qp, w.opcode, w.idx, r.synd, r.vendor);
		if (r.peer_err && peer)
			set_err(fab, peer);
		set_err(fab, qp);
		break;
	}
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
}

/* ---- the wire: requester and responder halves (docs/sim-wire.md) --------------------- */

/*
 * A responder in another process (qp->exec.w_rank). The WQE's local half ran above
 * (local keys, lengths); here its request goes out as a frame with a PSN and the QP
 * stalls until the response comes back (dvx_sim_exec_wire_response() wakes it) or the
 * transport time-out passes: then it is sent again, with the same PSN, retry_cnt
 * times, and fails with TRANSPORT_RETRY_EXC_ERR after that, as on a real fabric. One
 * request per QP is on the wire at a time, so WQEs still complete in order.
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

static int wire_transmit(struct sim_fabric *fab, struct sim_qp *qp, const struct sim_wqe *w,
			 const struct sim_sge *sg, uint32_t nsg, uint64_t total,
			 const struct sim_atomic_op *o)
{
	int again = qp->exec.w_state;
	struct sim_qp_exec *x = &qp->exec;
	struct sim_wire_frame f;
	struct sim_wseg seg[SIM_MAX_SGE];
	uint64_t now = dvx_sim_now_ns();
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
		f.psn = x->w_psn;
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
				seg[i].len = sg[i].len;
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
		if (rc == -EAGAIN && !again) {
			/* no room towards that process yet: not sent, so no retry spent */
			qp->stall_until_ns = now + 20000u;
			return X_STALL;
		}
		/* -ENOTCONN (the process is gone) or no room for a retransmission: lost */
	}
	x->w_state = 1;
	x->w_resp = 0;
	x->w_deadline = sim_wire_now(fab) + wire_retry_ns(fab, qp);
	qp->stall_until_ns = now + wire_retry_ns(fab, qp);
	return X_STALL;
}

static int wire_req(struct sim_fabric *fab, struct sim_qp *qp, const struct sim_wqe *w,
		    const struct sim_sge *sg, uint32_t nsg, uint64_t total,
		    const struct sim_atomic_op *o, struct sim_xres *r)
{
	struct sim_qp_exec *x = &qp->exec;
	uint64_t wnow;
	uint8_t resp;

	if (X_UNLIKELY(total > fab->wire_max_msg))
		return x_fail(r, SIM_SYND_LOCAL_LENGTH_ERR, SIM_VS_MSG_LEN);
	if (!x->w_state) {
		/* a new request: the next PSN (the first one from the clock, so that a QP
		 * that went through RST never repeats the PSN its responder saw last) */
		if (!x->w_seeded) {
			x->w_psn = (uint32_t)dvx_sim_now_ns() & 0xffffffu;
			x->w_seeded = 1;
		} else {
			x->w_psn = (x->w_psn + 1) & 0xffffffu;
		}
		return wire_transmit(fab, qp, w, sg, nsg, total, o);
	}
	resp = x->w_resp;
	if (resp) {
		x->w_state = 0;
		x->w_resp = 0;
		if (resp == SIM_WIRE_ACK) {
			r->byte_cnt = x->w_bytes;
			return X_DONE;
		}
		if (resp == SIM_WIRE_RNR)
			return rnr_wait(qp, x->w_rnr, r);
		/* the responder has set its own QP to ERR where IB says so */
		return x_fail(r, x->w_synd, x->w_vendor);
	}
	wnow = sim_wire_now(fab);
	if (wnow < x->w_deadline) {
		/* woken early, or the process stood still meanwhile (SIM_WIRE_GAP_NS) */
		qp->stall_until_ns = dvx_sim_now_ns() + (x->w_deadline - wnow);
		return X_STALL;
	}
	/* lost (or its response was): again, with the same PSN */
	if (!x->retry_active) {
		x->retry_active = 1;
		x->retry_left = qp->retry_cnt;
	}
	if (!x->retry_left) {
		x->w_state = 0;
		return x_fail(r, SIM_SYND_TRANSPORT_RETRY_EXC_ERR, SIM_VS_RETRY);
	}
	x->retry_left--;
	return wire_transmit(fab, qp, w, sg, nsg, total, o);
}

/* The WQE at @qp's sq_ci, its bytes contiguous in @lin if it wraps. */
static void wqe_at_ci(const struct sim_qp *qp, struct sim_wqe *w, uint8_t *lin)
{
	uint32_t nring = 1u << qp->log_sq_size, mask = nring - 1, ci = qp->sq_ci;
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

/* An ACK's data for the WQE at sq_ci: a READ's bytes, an atomic's old value. */
static void wire_ack_data(struct sim_qp *qp, const struct sim_wire_frame *f,
			  const uint8_t *payload)
{
	uint8_t lin[SIM_MAX_WQE_BYTES], *res;
	struct sim_sge sg[SIM_MAX_SGE];
	struct sim_wqe w;
	struct sim_xres r;
	uint64_t total;
	uint32_t nsg, size, opseg;
	const uint8_t *d;

	wqe_at_ci(qp, &w, lin);
	if (w.opcode == SIM_OP_RDMA_READ) {
		/* the scatter list was checked before the request left */
		if (local_sgl(qp, &w, 2, 1, 0, sg, &nsg, &total, &r) == X_DONE &&
		    total == f->payload)
			copy_scatter(sg, nsg, payload);
		qp->exec.w_bytes = (uint32_t)total;
		return;
	}
	size = (w.opcode == SIM_OP_ATOMIC_MASKED_CS || w.opcode == SIM_OP_ATOMIC_MASKED_FA) &&
	       w.opmod == SIM_OPMOD_EXT_ATOMIC_4B ? 4 : 8;
	opseg = w.opcode == SIM_OP_ATOMIC_MASKED_CS && size == 8 ? 2 : 1;
	qp->exec.w_bytes = size;
	if (w.ds != 3 + opseg)
		return;	/* no result segment: the value is discarded */
	d = w.b + (2 + opseg) * 16u;
	if (local_buf(qp, dvx_get_be32(d + 4), dvx_get_be64(d + 8), size, 1, &res, &r) != X_DONE)
		return;
	if (size == 4)
		dvx_put_be32(res, (uint32_t)f->a);
	else if (atomic_reply_host(qp->nic))
		memcpy(res, &f->a, 8);
	else
		dvx_put_be64(res, f->a);
}

void dvx_sim_exec_wire_response(struct sim_fabric *fab, const struct sim_wire_frame *f,
				const uint8_t *payload)
{
	struct sim_qp *qp;

	if (f->src_nic >= fab->nnics)
		return;
	qp = dvx_sim_qp_find(&fab->nics[f->src_nic], f->dst_qpn);
	/* a response to nothing that waits (a duplicate, a QP reset meanwhile): dropped */
	if (!qp || qp->state != SIM_QPS_RTS || !qp->exec.w_state || qp->exec.w_resp ||
	    f->psn != qp->exec.w_psn || f->src_qpn != qp->remote_qpn)
		return;
	if (f->type == SIM_WIRE_ACK)
		wire_ack_data(qp, f, payload);
	qp->exec.w_synd = f->synd;
	qp->exec.w_rnr = f->synd;
	qp->exec.w_vendor = f->vendor;
	qp->exec.w_resp = f->type;
	/* wake it now, keeping its retry state (a zero stall would reset it) */
	qp->stall_until_ns = 1;
}

/* The responder's answer to @rq: @type with @synd/@vendor, @old, or a READ's bytes. */
static void wire_answer(struct sim_fabric *fab, uint32_t rank, const struct sim_wire_frame *rq,
			struct sim_qp *peer, uint8_t type, uint8_t synd, uint8_t vendor,
			uint64_t old, const uint8_t *data, uint64_t len)
{
	struct sim_wire_frame f;
	struct sim_wseg seg;

	/* the responder's drop fault takes answers (an ACK lost on its way): the requester
	 * sends the request again, and the responder answers its duplicate */
	if (X_UNLIKELY(fab->faults.drop_every) &&
	    ++peer->exec.wr_answers % fab->faults.drop_every == 0) {
		fab->exec_pkts++;
		return;
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
	seg.p = data;
	seg.len = (uint32_t)len;
	/* room was checked before the request was executed */
	(void)fab->wire_ops->send(fab, rank, &f, &seg, data && len ? 1 : 0, 0);
}

/*
 * The responder half of a request from process @rank: the checks and the effects that
 * exec_write_send(), exec_read() and exec_atomic() make at an in-process responder, in
 * the same order, on this process's memory only; then the answer. A request that finds
 * no responder, a port down, a QP not receiving, or no room for its answer is dropped
 * (the requester retries). A retransmission of the request executed last is answered
 * again without running twice (an atomic's result is kept for it).
 */
int dvx_sim_exec_wire_request(struct sim_fabric *fab, uint32_t rank, struct sim_qp *peer,
			      const struct sim_wire_frame *f, const uint8_t *payload)
{
	uint8_t fake[16] = { 0 }, *t = NULL;
	struct sim_qp_exec *x;
	struct sim_sge sg;
	struct sim_xres r = { 0 };
	struct sim_wqe w;
	struct sim_atomic_op o;
	uint64_t old = 0;
	int is_write = f->opcode == SIM_OP_RDMA_WRITE || f->opcode == SIM_OP_RDMA_WRITE_IMM;
	int rc, dup;

	if (!peer || fab->faults.link_down || !port_up(peer->nic, peer->port) ||
	    peer->state < SIM_QPS_RTR || peer->state == SIM_QPS_ERR)
		return SIM_WIRE_DROPPED;
	if (!fab->wire_ops->room(fab, rank, f->opcode == SIM_OP_RDMA_READ ? f->len : 0))
		return SIM_WIRE_DROPPED;
	x = &peer->exec;
	dup = x->wr_valid && x->wr_psn == f->psn && x->wr_src == f->src_qpn;
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
				wire_answer(fab, rank, f, peer, SIM_WIRE_RNR, peer->min_rnr_nak, 0, 0,
					    NULL, 0);
				return SIM_WIRE_DONE;
			}
		}
		if (is_write && f->len &&
		    remote_buf(peer, peer, f->rkey, f->raddr, f->len, DVX_ACCESS_REMOTE_WRITE, &t,
			       &r) != X_DONE)
			goto nak;
		if (is_write && f->len)
			memmove(t, payload, f->len);
		if (f->opcode != SIM_OP_RDMA_WRITE) {
			memcpy(fake + 12, f->imm, 4);
			memset(&w, 0, sizeof(w));
			w.b = fake;
			w.opcode = f->opcode;
			w.fm_ce_se = f->fm_ce_se;
			sg.p = (uint8_t *)(uintptr_t)payload;
			sg.len = (uint32_t)f->len;
			rc = recv_complete(fab, f->src_qpn, f->slid, peer, &w,
					   is_write ? NULL : &sg, is_write || !f->len ? 0 : 1,
					   f->len, &r);
			if (rc == X_STALL)
				return SIM_WIRE_DROPPED;	/* its CQ overran: ERR, no answer */
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
		x->wr_valid = 1;
		x->wr_psn = f->psn;
		x->wr_src = f->src_qpn;
		wire_answer(fab, rank, f, peer, SIM_WIRE_ACK, 0, 0, 0, t, f->len);
		return dup ? SIM_WIRE_DUP : SIM_WIRE_DONE;
	case SIM_OP_ATOMIC_CS:
	case SIM_OP_ATOMIC_FA:
	case SIM_OP_ATOMIC_MASKED_CS:
	case SIM_OP_ATOMIC_MASKED_FA:
		if (dup) {
			old = x->wr_old;
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
		old = atomic_apply(t, o.size, &o);
		x->wr_old = old;
		goto ack;
	default:
		return SIM_WIRE_DROPPED;	/* the requester sends no other opcode */
	}
ack:
	x->wr_valid = 1;
	x->wr_psn = f->psn;
	x->wr_src = f->src_qpn;
	wire_answer(fab, rank, f, peer, SIM_WIRE_ACK, 0, 0, old, NULL, 0);
	return dup ? SIM_WIRE_DUP : SIM_WIRE_DONE;
nak:
	(void)rc;
	x->wr_valid = 1;
	x->wr_psn = f->psn;
	x->wr_src = f->src_qpn;
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
