/* SPDX-License-Identifier: MIT */
/*
 * dvx/p2p_setup.h - creating the P2P transport (dvx/p2p.h) over opened NICs and a
 * bootstrap: configuration, the memory it needs, init and fini, and the helpers that
 * describe and exchange the caller's buffers.
 */
#ifndef DVX_P2P_SETUP_H
#define DVX_P2P_SETUP_H

#include <dvx/p2p.h>
#include <dvx/bootstrap.h>
#include <dvx/nic.h>
#include <dvx/umem.h>
#include <dvx/mr.h>
#include <dvx/cq.h>
#include <dvx/qp.h>

DVX_BEGIN_DECLS

/* struct dvx_p2p_cfg.flags */
enum {
	/* companions talk to a local partner QP even where force-loopback would do */
	DVX_P2P_F_LOCAL_PAIR = 1u << 0,
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
 * @conn:		connection attributes (zero: dvx_qp_connect_attr_init()'s)
 * @bs:			the bootstrap used for the exchange (caller's)
 * @timeout_ns:		bound on the exchange and the closing barrier
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
	struct dvx_qp_connect_attr conn;
	struct dvx_bootstrap *bs;
	uint64_t timeout_ns;
};

/**
 * dvx_p2p_mem_req() - the memory dvx_p2p_init() needs.
 * @state:	bytes/alignment of the state region (lanes, objects, exchange tables);
 *		ordinary host memory
 * @rings:	bytes/alignment of the ring region (CQ and SQ rings, doorbell records,
 *		the sinks): memory the NICs read and write, registered as one umem per NIC
 * Return: 0 or -EINVAL for a bad configuration.
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
 * Collective over @cfg->bs: every rank calls it. Per peer and lane it creates the main
 * CQ and QP, the companion CQ and QP (core-direct master, sharing the main QP's UAR)
 * and, where the NIC has no force-loopback (or DVX_P2P_F_LOCAL_PAIR), the companion's
 * local partner; one iova-0 sink MR per NIC; exchanges the main QPs' connection info
 * with one allgather (no pairwise ordering to deadlock on) and connects, then meets the
 * others in a barrier so nobody posts to a QP that is not ready.
 * Context: one thread per rank. Return: 0; -EINVAL (configuration, regions); the NIC's
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

DVX_END_DECLS

#endif /* DVX_P2P_SETUP_H */
