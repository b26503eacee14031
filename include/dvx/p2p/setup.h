/* SPDX-License-Identifier: MIT */
/*
 * dvx/p2p/setup.h - creating the P2P transport (dvx/p2p/p2p.h) over opened NICs and a
 * bootstrap: configuration, the memory it needs, init and fini, and the helpers that
 * describe and exchange the caller's buffers.
 */
#ifndef DVX_P2P_SETUP_H
#define DVX_P2P_SETUP_H

#include <dvx/p2p/p2p.h>
#include <dvx/bootstrap/bootstrap.h>
#include <dvx/nic/nic.h>
#include <dvx/nic/umem.h>
#include <dvx/nic/mr.h>
#include <dvx/nic/cq.h>
#include <dvx/nic/qp.h>

DVX_BEGIN_DECLS

/* struct dvx_p2p_cfg.flags */
enum {
	/* companions talk to a local partner QP even where force-loopback would do */
	DVX_P2P_F_LOCAL_PAIR = 1u << 0,
	/* main QPs let the peer READ (gets); without it a get fails with -EPERM on the
	 * lane, whatever the buffer's registration (least privilege: off by default) */
	DVX_P2P_F_READ = 1u << 1,
	/* lanes exported to a GPU can be recovered while kernels run
	 * (dvx_p2p_gpu_lane_recover(), docs/gpu.md "Recovering a lane the GPU drives"):
	 * device posts and CQ polls then count themselves in at the lane's gate, an
	 * atomic, a fence and a load each; without it they do not, and the recovery is
	 * -EOPNOTSUPP */
	DVX_P2P_F_GPU_RECOVER = 1u << 2,
};

/**
 * struct dvx_p2p_cfg - what the transport is made of.
 * @rank, @nranks:	this rank and the group size (>= 2); must match @bs
 * @nnics:		NICs to spread lanes over (1 ... DVX_P2P_MAX_NICS)
 * @nics:		the opened NICs (caller's; they outlive the transport)
 * @qps_per_nic:	main QPs per (peer, NIC), 1 ... 256; lanes per peer = @nnics * @qps_per_nic
 * @sq_depth:		main SQ depth in WQEBBs (power of two); the main CQ has as many
 * @comp_depth:		companion SQ depth (power of two >= 2), 0 for no companions
 *			(then the *_counter operations return -EOPNOTSUPP)
 * @max_inline:		inline bytes on main QPs (>= 8; 0 means 8)
 * @flags:		DVX_P2P_F_*
 * @conn:		connection attributes (zero: dvx_qp_connect_cfg_init()'s); the
 *			remote access is the transport's own, whatever @conn says:
 *			REMOTE_WRITE | REMOTE_ATOMIC on main QPs (puts, signals,
 *			atomics), REMOTE_READ too only with DVX_P2P_F_READ (gets),
 *			REMOTE_ATOMIC on companions and partners (counters)
 * @bs:			the bootstrap used for the exchange (caller's)
 * @timeout_ns:		bound on the exchange and the closing barrier
 * @peers:		NULL: lanes to every other rank. Else the ranks to connect,
 *			strictly increasing, not this rank (caller's memory, read during
 *			dvx_p2p_init() only); the relation must be symmetric (r lists this
 *			rank when this rank lists r). A rank with no peers (@npeers 0) still
 *			takes part in the collective exchange.
 * @npeers:		entries in @peers
 */
struct dvx_p2p_cfg {
	int32_t rank;
	int32_t nranks;
	uint32_t nnics;
	uint32_t qps_per_nic;
	struct dvx_nic *nics[DVX_P2P_MAX_NICS];
	uint32_t sq_depth;
	uint32_t comp_depth;
	uint32_t max_inline;
	uint32_t flags;
	struct dvx_qp_connect_cfg conn;
	struct dvx_bootstrap *bs;
	uint64_t timeout_ns;
	const int32_t *peers;
	uint32_t npeers;
	uint32_t rsvd;
};

/**
 * dvx_p2p_mem_req() - the memory dvx_p2p_init() needs.
 * @state:	bytes/alignment of the state region (lanes, objects, exchange tables);
 *		ordinary host memory
 * @rings:	bytes/alignment of the ring region (CQ and SQ rings, doorbell records,
 *		the sinks): memory the NICs read and write, registered as one umem per NIC
 * Return: 0 or -EINVAL for a bad configuration (its cause in @cfg->nics[0]'s diagnostic,
 * nics[0]->hal.diag, when that NIC is given).
 */
int dvx_p2p_mem_req(const struct dvx_p2p_cfg *cfg, struct dvx_mem_req *state,
		    struct dvx_mem_req *rings);

/**
 * dvx_p2p_init() - create the lanes to every other rank and connect them.
 * @t:		caller storage for the transport
 * @cfg:	configuration (copied)
 * @state, @state_len:	the state region (dvx_p2p_mem_req()), 64-byte aligned
 * @rings, @rings_len:	the ring region, 4096-byte aligned
 *
 * Collective over @cfg->bs: every rank calls it (also one whose @cfg->peers is empty).
 * Per peer (every other rank, or those @cfg->peers lists) and lane it creates the main
 * CQ and QP, the companion CQ and QP (core-direct master, sharing the main QP's UAR)
 * and, where the NIC has no force-loopback (or DVX_P2P_F_LOCAL_PAIR), the companion's
 * local partner; one iova-0 sink MR per NIC; exchanges the main QPs' connection info
 * with one allgather (no pairwise ordering to deadlock on) and connects, then meets the
 * others in a barrier so nobody posts to a QP that is not ready.
 * Context: one thread per rank. Return: 0; -EINVAL (configuration, regions: the cause in
 * nics[0]'s diagnostic); the NIC's
 * missing-feature error; a hal or bootstrap error (-ETIMEDOUT for a peer that never
 * came). On error everything created is destroyed and @t is zeroed.
 */
int dvx_p2p_init(struct dvx_p2p *t, const struct dvx_p2p_cfg *cfg, void *state,
		 uint64_t state_len, void *rings, uint64_t rings_len);

/**
 * dvx_p2p_fini() - destroy every QP, CQ, sink and umem, in reverse order. The
 * regions are the caller's again afterwards. Not collective; peers see their QPs to
 * this rank fail (retry exhausted) if they keep posting. Return: 0 or -EINVAL.
 */
int dvx_p2p_fini(struct dvx_p2p *t);

/**
 * dvx_p2p_lbuf_init() - describe a local buffer registered on every NIC.
 * @mrs:	one MR per NIC (in the transport's NIC order) that contains [@ptr, +@len);
 *		all must know the buffer by the same address (iova)
 * Return: 0 or -EINVAL.
 */
int dvx_p2p_lbuf_init(struct dvx_p2p_lbuf *b, void *ptr, uint64_t len,
		      struct dvx_mr *const *mrs, uint32_t nmrs);

/**
 * dvx_p2p_exchange() - allgather buffer descriptors: @all[r] is rank r's @mine as a
 * remote buffer (address, length, per-NIC rkeys). Collective over @bs.
 * Return: 0 or the bootstrap's error.
 */
int dvx_p2p_exchange(struct dvx_p2p *t, struct dvx_bootstrap *bs, const struct dvx_p2p_lbuf *mine,
		     struct dvx_p2p_rbuf *all, uint64_t timeout_ns);

/**
 * dvx_p2p_lane_recover() - bring a failed lane back: both ends reset and reconnect.
 * @t:		transport
 * @peer:	the rank at the other end
 * @lane:	lane index within the peer (0 ... @t->nlanes - 1)
 * @timeout_ns:	bound on the whole call (flushes and the handshakes with @peer)
 *
 * Pairwise collective: @peer calls it for (this rank, @lane) too. The two ends meet
 * over the transport's private duplicate of the bootstrap given to dvx_p2p_init()
 * (its own tag space; the caller's messages never match). Each end says whether its
 * side is failed: a main or companion queue that saw an error, or a main QP,
 * companion or partner the hardware (QUERY_QP) has out of RTS (the responder of a
 * remote access error, say). If neither is, nothing changes and both return 0.
 * Otherwise both recover: a side that had not failed marks its queues failed with
 * the peer's error; each side moves its main QP to ERR, consumes every outstanding
 * CQE of the lane (the flushes), tells the peer it is quiescent and waits for the
 * peer's word; then dvx_qp_recover() on the main QP (and on the companion and its
 * partner where one of them failed or is out of RTS), a "ready" handshake so that
 * nobody posts before the other's responder is ready, and the queues restart
 * (dvx_p2p_q_restart()): new tickets continue at the next multiple of 65536; tickets
 * of WQEs that never completed keep answering the error that failed the lane (a side
 * that had not failed: the peer's error, -ECONNRESET if none was given), tickets that
 * completed still answer 0; the health record counts the recovery and keeps the error.
 * Work in flight on either end of the lane is lost (counters may still have moved
 * for it: a WAIT is satisfied by a flush); repost what matters.
 *
 * Context: control path, one call at a time per transport (-EBUSY otherwise); nothing
 * may post to the lane meanwhile; not while the lanes are exported to the GPU. Calls
 * on several lanes must be made in an order the peers agree on (each waits for its
 * peer). Return: 0; -EINVAL (bad arguments); -ETIMEDOUT when the peer did not take
 * part in time: the lane is left failed (or as it was, if it was healthy and nothing
 * was done yet) and the call may be repeated on both ends; -EBUSY; a bootstrap error;
 * a core error of the reset (the lane stays failed; calling again retries); -EAGAIN
 * when the last look finds a queue of the lane failed again, or a QP of it (main,
 * companion, partner) out of RTS, after the reset: that queue is marked failed and
 * the call may be repeated on both ends. 0 always means every queue of this end of
 * the lane is running and every QP of it is in RTS as QUERY_QP reads it: whether to
 * reset the companion is decided after the lane is quiescent, so a companion that
 * fails while the main QP's flushes drain it is reset in the same call. -EAGAIN is
 * one end's answer: the other end may have returned 0 and has no local sign that it
 * must call again, so callers agree on what to recover next over their own channel
 * (as the soak test's status allgather does) before calling again on both ends. It
 * does not come from the peer's valid traffic after its own call returned (this end
 * posts nothing before its last look, and its responder stays in RTS); it comes from a
 * fault or an invalid request (a remote access error) meeting the lane again.
 */
int dvx_p2p_lane_recover(struct dvx_p2p *t, int peer, uint32_t lane, uint64_t timeout_ns);

DVX_END_DECLS

#endif /* DVX_P2P_SETUP_H */
