/* SPDX-License-Identifier: MIT */
/*
 * dvx/p2p/p2p.h - the P2P IBGDA transport: per-peer RC lanes with core-direct companion
 * QPs, and the operations on them (put, signals, counters, tickets, flush).
 *
 * Ownership: signal, counter and data buffers belong to the caller (the window of a
 * later layer); the transport owns only its QPs, CQs, and one 8-byte iova-0 sink MR
 * per NIC. Everything lives in caller storage (docs/p2p.md).
 *
 * Semantics (SEMANTICS.md, "P2P IBGDA transport"):
 *  - every main-QP WQE is one WQEBB and requests a CQE (CQ index == WQE index);
 *  - put splits at 1 GiB and returns a ticket (lane, index of its last WQE);
 *  - put_signal: the writes, then a fetch-add of the remote signal on the same QP
 *    (fenced on request);
 *  - *_counter: after the main WQEs, the lane's companion QP posts WAIT(main CQ, index
 *    of the last main WQE) and a loopback fetch-add of 1 into the caller's counter
 *    (the old value goes to the sink): the counter means "my data was acknowledged by
 *    the responder";
 *  - every wait takes a timeout and returns -ETIMEDOUT when it expires, leaving state
 *    so the caller may wait again; an error CQE is an error, never a completion: the
 *    lane is marked failed, its health record keeps the syndrome, opcode, QPN and WQE
 *    index, other lanes keep working.
 */
#ifndef DVX_P2P_H
#define DVX_P2P_H

#include <dvx/p2p/ops.h>

DVX_BEGIN_DECLS

/** struct dvx_p2p_ticket - (lane, WQE index) of a post; wait on it with dvx_p2p_wait_local(). */
struct dvx_p2p_ticket {
	uint32_t peer;		/* rank */
	uint32_t lane;		/* lane index within the peer */
	uint64_t idx;		/* main-QP index of the post's last WQE */
};

/** enum dvx_p2p_cmp - comparisons for wait_signal / wait_counter: "value CMP expected". */
enum dvx_p2p_cmp {
	DVX_CMP_GE = 0,
	DVX_CMP_GT = 1,
	DVX_CMP_EQ = 2,
	DVX_CMP_NE = 3,
	DVX_CMP_LE = 4,
	DVX_CMP_LT = 5,
};

/**
 * struct dvx_p2p_lane - one main RC QP to a peer, its companion and their queues.
 * @main:	the main QP's shared queue
 * @comp:	the companion QP's queue (WAIT + loopback fetch-add), state UNUSED when
 *		the transport was built without companions
 * @nic:	index of the NIC (into the transport's NIC list)
 * @peer:	rank of the peer
 * @sink_lkey:	lkey of the NIC's 8-byte iova-0 sink MR
 * @index:	lane index within the peer
 */
struct dvx_p2p_lane {
	struct dvx_p2p_q main;
	struct dvx_p2p_q comp;
	uint32_t nic;
	uint32_t peer;
	uint32_t sink_lkey;
	uint32_t index;
};

/**
 * struct dvx_p2p_lane_health - what the host can read about a lane at any time.
 */
struct dvx_p2p_lane_health {
	uint32_t state;		/* enum dvx_p2p_q_state of the main QP */
	uint32_t comp_state;	/* ... and of the companion */
	int32_t err;		/* first error's errno, 0 if none */
	uint8_t syndrome;	/* error CQE syndrome (main, else companion) */
	uint8_t vendor_syndrome;
	uint8_t wqe_opcode;	/* the failed WQE's opcode */
	uint8_t rsvd;
	uint32_t qpn;		/* QP of the failed WQE */
	uint32_t wqe_index;	/* its 16-bit index as the CQE gave it */
	uint64_t completed;	/* main-QP WQEs completed successfully */
	uint64_t in_flight;	/* main WQEs published and not completed */
	uint64_t comp_in_flight;
	uint64_t last_progress_ns;	/* hal clock of the last consumed CQE */
	/* added with recovery (at the end: core/p2p/gpu.c reads the fields above) */
	uint32_t recoveries;	/* times dvx_p2p_lane_recover() restarted the main QP */
	int32_t last_err;	/* the error that failed the lane before the last one */
};

/**
 * struct dvx_p2p_wait_report - what a wait waited for, filled when it returns
 * -ETIMEDOUT or an error (and on success, for the curious).
 */
struct dvx_p2p_wait_report {
	int32_t err;		/* what the wait returned */
	int32_t peer;		/* rank, -1 if not tied to a peer */
	uint32_t lane;
	uint32_t cmp;		/* enum dvx_p2p_cmp, for signal/counter waits */
	uint64_t ticket;	/* WQE index waited for (ticket waits, flushes) */
	uint64_t completed;	/* the lane's watermark when the wait ended */
	const void *slot;	/* signal or counter word waited on, NULL for tickets */
	uint64_t expected;
	uint64_t observed;
};

/**
 * struct dvx_p2p - the transport: lanes to every other rank.
 * @rank, @nranks:	this rank and the group size
 * @nnics:		NICs the lanes are spread over
 * @qps_per_nic:	main QPs per (peer, NIC)
 * @nlanes:		lanes per peer (@nnics * @qps_per_nic)
 * @companions:		1 when every lane has a companion (counters work)
 * @npeers:		ranks it has lanes to
 * @all_peers:		1 when those are all the other ranks (then a rank's lane index
 *			is its skip-self index, dvx_p2p_peer_index())
 * @flags:		struct dvx_p2p_cfg.flags as given (DVX_P2P_F_*)
 * @lanes:		@npeers * @nlanes lanes, by lane peer index, then lane
 * @peer_idx:		[@nranks] rank -> lane peer index, -1 without lanes (self)
 * @peer_rank:		[@npeers] lane peer index -> rank
 * @nics:		the NICs' hal handles (clocks; progress of a stepped backend)
 * @setup:		what dvx_p2p_init() created (private to core/p2p/setup.c)
 *
 * The fields are read-only for users; dvx_p2p_init() fills them.
 */
struct dvx_p2p {
	int32_t rank;
	int32_t nranks;
	uint32_t nnics;
	uint32_t qps_per_nic;
	uint32_t nlanes;
	uint32_t companions;
	uint32_t npeers;
	uint32_t all_peers;
	uint32_t flags;
	struct dvx_p2p_lane *lanes;
	int32_t *peer_idx;
	int32_t *peer_rank;
	struct dvx_hal_nic *nics[DVX_P2P_MAX_NICS];
	void *setup;
};

/* ---- operations (any host thread; one lane may be shared by threads) ---- */

/**
 * dvx_p2p_post() - post one operation on the lane (@peer, @channel): its data as RDMA
 * WRITEs (split at 1 GiB), then its signal's fetch-add on the same QP, then its
 * counter: the lane's companion WAITs for the last main WQE and raises the local
 * counter word by one (a loopback fetch-add whose old value lands in the sink).
 * @t:		transport
 * @peer:	destination rank (not self)
 * @channel:	caller-chosen channel; it selects the lane (channel mod lanes per peer)
 * @x:		the data part (struct dvx_p2p_xfer), or NULL
 * @n:		the notification part (struct dvx_p2p_notify: signal, counter, flags),
 *		or NULL
 * @timeout_ns:	how long to wait for ring room
 * @tk:		the ticket (lane, last main WQE: the signal, else the last WRITE); may be
 *		NULL
 *
 * RC keeps the order of one QP: the signal lands after the data; DVX_P2P_FENCE fences
 * its fetch-add. A signal covers only earlier WQEs of its own lane: to cover puts on
 * other lanes, flush first. A counter needs companions. Nothing is posted on error.
 * @x and @n are read during the call only.
 *
 * Context: any host thread; one lane may be shared by threads. Return: 0; -EINVAL
 * (nothing to do, a partial or out-of-bounds data part, a misaligned or out-of-bounds
 * word, a missing key, bad flags, a bad peer); -EOPNOTSUPP (a counter without
 * companions); -ETIMEDOUT (no room in time: nothing posted); the lane's error if it
 * failed.
 */
int dvx_p2p_post(struct dvx_p2p *t, int peer, uint32_t channel, const struct dvx_p2p_xfer *x,
		 const struct dvx_p2p_notify *n, uint64_t timeout_ns, struct dvx_p2p_ticket *tk);

/**
 * dvx_p2p_refuse_shape() - refuse a description of another shape than @op posts: its
 * cause into the transport's diagnostic (the first NIC's diag, as every refused
 * operation's), for the one-shape wrappers below.
 * @t:		the transport
 * @op:		the wrapper's name
 * @want:	the shape it posts (DVX_P2P_HAS_*)
 * @x, @n:	the description it was given
 *
 * Context: any thread. Return: -EINVAL.
 */
int dvx_p2p_refuse_shape(struct dvx_p2p *t, const char *op, uint32_t want,
			 const struct dvx_p2p_xfer *x, const struct dvx_p2p_notify *n);

/**
 * dvx_p2p_put(), dvx_p2p_put_signal(), dvx_p2p_signal(), dvx_p2p_put_counter(),
 * dvx_p2p_put_signal_counter(), dvx_p2p_signal_counter() - dvx_p2p_post() of one
 * shape each: the parts in the name, and no other.
 * @t, @peer, @channel, @timeout_ns, @tk: as dvx_p2p_post()
 * @x:		the data part: a length, a source and a destination (put*)
 * @n:		the notification part: a signal (*signal*), a counter (*counter), no
 *		other
 *
 * put: WRITEs; put_signal: WRITEs, then the signal; signal: the signal alone;
 * put_counter: WRITEs, then the counter once the responder acknowledged them;
 * put_signal_counter, signal_counter: the signal, then the counter once it completed.
 *
 * Context: as dvx_p2p_post(). Return: as dvx_p2p_post(); -EINVAL when the description
 * has another shape (a put of 0 bytes, a put_signal without a signal or with a
 * counter, ...), its cause in the diagnostic (dvx_p2p_refuse_shape()).
 */
DVX_INLINE int dvx_p2p_put(struct dvx_p2p *t, int peer, uint32_t channel,
			   const struct dvx_p2p_xfer *x, uint64_t timeout_ns,
			   struct dvx_p2p_ticket *tk)
{
	return dvx_p2p_shape(x, NULL) == DVX_P2P_HAS_DATA ?
		dvx_p2p_post(t, peer, channel, x, NULL, timeout_ns, tk) :
		dvx_p2p_refuse_shape(t, "dvx_p2p_put", DVX_P2P_HAS_DATA, x, NULL);
}

DVX_INLINE int dvx_p2p_put_signal(struct dvx_p2p *t, int peer, uint32_t channel,
				  const struct dvx_p2p_xfer *x, const struct dvx_p2p_notify *n,
				  uint64_t timeout_ns, struct dvx_p2p_ticket *tk)
{
	return dvx_p2p_shape(x, n) == (DVX_P2P_HAS_DATA | DVX_P2P_HAS_SIG) ?
		dvx_p2p_post(t, peer, channel, x, n, timeout_ns, tk) :
		dvx_p2p_refuse_shape(t, "dvx_p2p_put_signal", DVX_P2P_HAS_DATA | DVX_P2P_HAS_SIG, x, n);
}

DVX_INLINE int dvx_p2p_signal(struct dvx_p2p *t, int peer, uint32_t channel,
			      const struct dvx_p2p_notify *n, uint64_t timeout_ns,
			      struct dvx_p2p_ticket *tk)
{
	return dvx_p2p_shape(NULL, n) == DVX_P2P_HAS_SIG ?
		dvx_p2p_post(t, peer, channel, NULL, n, timeout_ns, tk) :
		dvx_p2p_refuse_shape(t, "dvx_p2p_signal", DVX_P2P_HAS_SIG, NULL, n);
}

DVX_INLINE int dvx_p2p_put_counter(struct dvx_p2p *t, int peer, uint32_t channel,
				   const struct dvx_p2p_xfer *x, const struct dvx_p2p_notify *n,
				   uint64_t timeout_ns, struct dvx_p2p_ticket *tk)
{
	return dvx_p2p_shape(x, n) == (DVX_P2P_HAS_DATA | DVX_P2P_HAS_CTR) ?
		dvx_p2p_post(t, peer, channel, x, n, timeout_ns, tk) :
		dvx_p2p_refuse_shape(t, "dvx_p2p_put_counter", DVX_P2P_HAS_DATA | DVX_P2P_HAS_CTR, x, n);
}

DVX_INLINE int dvx_p2p_put_signal_counter(struct dvx_p2p *t, int peer, uint32_t channel,
					  const struct dvx_p2p_xfer *x,
					  const struct dvx_p2p_notify *n, uint64_t timeout_ns,
					  struct dvx_p2p_ticket *tk)
{
	return dvx_p2p_shape(x, n) == (DVX_P2P_HAS_DATA | DVX_P2P_HAS_SIG | DVX_P2P_HAS_CTR) ?
		dvx_p2p_post(t, peer, channel, x, n, timeout_ns, tk) :
		dvx_p2p_refuse_shape(t, "dvx_p2p_put_signal_counter", DVX_P2P_HAS_DATA | DVX_P2P_HAS_SIG | DVX_P2P_HAS_CTR, x, n);
}

DVX_INLINE int dvx_p2p_signal_counter(struct dvx_p2p *t, int peer, uint32_t channel,
				      const struct dvx_p2p_notify *n, uint64_t timeout_ns,
				      struct dvx_p2p_ticket *tk)
{
	return dvx_p2p_shape(NULL, n) == (DVX_P2P_HAS_SIG | DVX_P2P_HAS_CTR) ?
		dvx_p2p_post(t, peer, channel, NULL, n, timeout_ns, tk) :
		dvx_p2p_refuse_shape(t, "dvx_p2p_signal_counter", DVX_P2P_HAS_SIG | DVX_P2P_HAS_CTR, NULL, n);
}

/**
 * dvx_p2p_reset_signal() - set the peer's signal word to 0: drain the lane, RDMA
 * inline write of 8 zero bytes, wait for its completion. Return: 0, -ETIMEDOUT, or
 * the lane's error.
 */
int dvx_p2p_reset_signal(struct dvx_p2p *t, int peer, uint32_t channel,
			 const struct dvx_p2p_rbuf *sig, uint64_t sigoff, uint64_t timeout_ns);

/**
 * dvx_p2p_reset_local_signal() - store 0 to a local signal word. Safe only when no
 * remote update of it can be in flight (e.g. after a barrier).
 */
int dvx_p2p_reset_local_signal(const struct dvx_p2p_lbuf *sig, uint64_t sigoff);

/** dvx_p2p_read_signal() - acquire load of a local signal word (0 if out of bounds). */
uint64_t dvx_p2p_read_signal(const struct dvx_p2p_lbuf *sig, uint64_t sigoff);

/**
 * dvx_p2p_wait_signal() - wait until (signal @cmp @expected) holds.
 * @t:		transport (its NICs are progressed while waiting); may be NULL
 * @rep:	filled with what was waited for (may be NULL)
 * Return: 0; -ETIMEDOUT; -EINVAL for a bad slot or comparison.
 */
int dvx_p2p_wait_signal(struct dvx_p2p *t, const struct dvx_p2p_lbuf *sig, uint64_t sigoff,
			enum dvx_p2p_cmp cmp, uint64_t expected, uint64_t timeout_ns,
			struct dvx_p2p_wait_report *rep);

/** dvx_p2p_read_counter() - acquire load of a local counter word. */
uint64_t dvx_p2p_read_counter(const struct dvx_p2p_lbuf *ctr, uint64_t ctroff);

/**
 * dvx_p2p_wait_counter() - wait until (counter @cmp @expected) holds, while watching
 * the lane (@peer, @channel) that raises it: if that lane or its companion fails, the
 * lane's error is returned instead of waiting on.
 * @t:		transport
 * @peer, @channel: the lane that raises the counter
 * @n:		the notification the counter was posted with: its @ctr and @ctroff name
 *		the word (its other fields are not read)
 * @cmp:	DVX_CMP_*
 * @expected:	the value compared with
 * @timeout_ns:	the bound
 * @rep:	filled with what was waited for (may be NULL)
 *
 * Context: a host thread. Return: 0; -ETIMEDOUT; the lane's error; -EINVAL (a bad
 * lane, word or comparison).
 */
int dvx_p2p_wait_counter(struct dvx_p2p *t, int peer, uint32_t channel,
			 const struct dvx_p2p_notify *n, enum dvx_p2p_cmp cmp, uint64_t expected,
			 uint64_t timeout_ns, struct dvx_p2p_wait_report *rep);

/**
 * dvx_p2p_wait_local() - wait for the post behind @tk to complete locally (its CQE).
 * Return: 0; the error CQE's errno if it or an earlier WQE of the lane failed (see
 * dvx_p2p_lane_health()); -ETIMEDOUT (wait again if you like); -EINVAL bad ticket.
 */
int dvx_p2p_wait_local(struct dvx_p2p *t, const struct dvx_p2p_ticket *tk, uint64_t timeout_ns,
		       struct dvx_p2p_wait_report *rep);

/**
 * dvx_p2p_flush() - wait until every put and signal posted so far on @channel's lanes
 * (to every peer) has completed, companions included. Return: 0, the first lane
 * error, or -ETIMEDOUT (@rep names the lane).
 */
int dvx_p2p_flush(struct dvx_p2p *t, uint32_t channel, uint64_t timeout_ns,
		  struct dvx_p2p_wait_report *rep);

/**
 * dvx_p2p_quiet() - wait until everything posted so far on every lane of the transport
 * (every channel, every peer, companions included) has completed: dvx_p2p_flush() of
 * all channels at once.
 * @t:		transport
 * @timeout_ns:	bound for the whole quiet
 * @rep:	filled with the lane that failed or timed out (may be NULL)
 *
 * Context: a host thread. Return: 0; the first lane error; -ETIMEDOUT; -EINVAL.
 */
int dvx_p2p_quiet(struct dvx_p2p *t, uint64_t timeout_ns, struct dvx_p2p_wait_report *rep);

/**
 * dvx_p2p_get() - read @x->len bytes of the peer's buffer into a local one (RDMA READs
 * on the lane (@peer, @channel), split at 1 GiB); the bytes are there once the ticket
 * completed (dvx_p2p_wait_local(), dvx_p2p_flush(), dvx_p2p_quiet()).
 * @t:		transport (built with DVX_P2P_F_READ)
 * @peer:	the rank read from
 * @channel:	selects the lane (modulo the lanes per peer)
 * @x:		the get (struct dvx_p2p_rxfer): the peer's buffer must be registered
 *		there with remote read
 * @timeout_ns:	bound for waiting for room
 * @tk:		optional: the ticket of the last READ
 *
 * A peer buffer known to be registered without remote read (its exchanged @access,
 * DVX_P2P_ACC_*) is refused before posting: -EPERM, the cause in the diagnostic,
 * nothing posted, the lane healthy and the destination unchanged. One whose rights
 * are unknown (a description made by hand), or a transport without DVX_P2P_F_READ,
 * fails the READ at the responder: the ticket's wait returns -EPERM (-EREMOTEIO for
 * the transport), the lane is failed (dvx_p2p_lane_health()) and the local
 * destination is not written.
 *
 * Context: any host thread. Return: 0; -EINVAL (bad lane or description, its cause in
 * the diagnostic); -EPERM (see above); -ETIMEDOUT (no room: nothing posted); the
 * lane's error.
 */
int dvx_p2p_get(struct dvx_p2p *t, int peer, uint32_t channel, const struct dvx_p2p_rxfer *x,
		uint64_t timeout_ns, struct dvx_p2p_ticket *tk);

/**
 * dvx_p2p_amo() - one operation on the peer's 8-byte word (struct dvx_p2p_amo):
 * put_value (an inline WRITE), add (FETCH_ADD, old value to the sink), fetch_add
 * (FETCH_ADD) or compare_swap (CMP_SWAP) with the old value into the caller's result
 * word once the ticket completed.
 * @t:		transport
 * @peer, @channel: the lane
 * @a:		the operation
 * @timeout_ns:	bound for waiting for room
 * @tk:		optional: its ticket
 *
 * The peer's word is 8-byte aligned, registered with remote atomic (remote write for
 * put_value). Atomics of the NIC are atomic with each other, not with the peer's own
 * CPU or GPU stores to the word.
 *
 * Context: any host thread. Return: 0; -EINVAL (bad lane or description, its cause in
 * the diagnostic); -EOPNOTSUPP (put_value on main QPs of less than 8 inline bytes);
 * -ETIMEDOUT (no room: nothing posted); the lane's error.
 */
int dvx_p2p_amo(struct dvx_p2p *t, int peer, uint32_t channel, const struct dvx_p2p_amo *a,
		uint64_t timeout_ns, struct dvx_p2p_ticket *tk);

/**
 * dvx_p2p_amo_of(), dvx_p2p_put_value(), dvx_p2p_add(), dvx_p2p_fetch_add(),
 * dvx_p2p_compare_swap() - dvx_p2p_amo() of one kind each: @a->op must be @kind
 * (dvx_p2p_amo_of()), DVX_P2P_AMO_SET, _ADD, _FADD or _CSWAP respectively.
 * @t, @peer, @channel, @timeout_ns, @tk: as dvx_p2p_amo()
 * @a:		the operation
 * @kind:	dvx_p2p_amo_of(): the op @a must have
 *
 * Context: any host thread. Return: as dvx_p2p_amo(); -EINVAL for an operation of
 * another kind (its cause in the diagnostic).
 */
int dvx_p2p_amo_of(struct dvx_p2p *t, int peer, uint32_t channel, const struct dvx_p2p_amo *a,
		   uint32_t kind, uint64_t timeout_ns, struct dvx_p2p_ticket *tk);

DVX_INLINE int dvx_p2p_put_value(struct dvx_p2p *t, int peer, uint32_t channel,
				 const struct dvx_p2p_amo *a, uint64_t timeout_ns,
				 struct dvx_p2p_ticket *tk)
{
	return dvx_p2p_amo_of(t, peer, channel, a, DVX_P2P_AMO_SET, timeout_ns, tk);
}

DVX_INLINE int dvx_p2p_add(struct dvx_p2p *t, int peer, uint32_t channel,
			   const struct dvx_p2p_amo *a, uint64_t timeout_ns,
			   struct dvx_p2p_ticket *tk)
{
	return dvx_p2p_amo_of(t, peer, channel, a, DVX_P2P_AMO_ADD, timeout_ns, tk);
}

DVX_INLINE int dvx_p2p_fetch_add(struct dvx_p2p *t, int peer, uint32_t channel,
				 const struct dvx_p2p_amo *a, uint64_t timeout_ns,
				 struct dvx_p2p_ticket *tk)
{
	return dvx_p2p_amo_of(t, peer, channel, a, DVX_P2P_AMO_FADD, timeout_ns, tk);
}

DVX_INLINE int dvx_p2p_compare_swap(struct dvx_p2p *t, int peer, uint32_t channel,
				    const struct dvx_p2p_amo *a, uint64_t timeout_ns,
				    struct dvx_p2p_ticket *tk)
{
	return dvx_p2p_amo_of(t, peer, channel, a, DVX_P2P_AMO_CSWAP, timeout_ns, tk);
}

/** dvx_p2p_lane_health() - copy the health record of (@peer, @lane). Return 0 or -EINVAL. */
int dvx_p2p_lane_health(struct dvx_p2p *t, int peer, uint32_t lane,
			struct dvx_p2p_lane_health *h);

/** dvx_p2p_cmp_holds() - whether (@v @cmp @expected) holds; -EINVAL for a bad @cmp. */
DVX_INLINE int dvx_p2p_cmp_holds(uint32_t cmp, uint64_t v, uint64_t expected)
{
	switch (cmp) {
	case DVX_CMP_GE: return v >= expected;
	case DVX_CMP_GT: return v > expected;
	case DVX_CMP_EQ: return v == expected;
	case DVX_CMP_NE: return v != expected;
	case DVX_CMP_LE: return v <= expected;
	case DVX_CMP_LT: return v < expected;
	default: return -EINVAL;
	}
}

/** dvx_p2p_peer_index() - the skip-self index of @rank as seen by @me (-1 for self). */
DVX_INLINE int dvx_p2p_peer_index(int me, int rank)
{
	return rank == me ? -1 : (rank < me ? rank : rank - 1);
}

DVX_END_DECLS

#endif /* DVX_P2P_H */
