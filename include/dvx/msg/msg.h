/* SPDX-License-Identifier: MIT */
/*
 * dvx/msg/msg.h - host messaging between ranks over RC QPs, shaped like a collective
 * library's network plugin (listen, connect, accept, reg_mr, isend, irecv, test, iflush,
 * close), with an N:m QP sharing pool: many communicators between the same two ranks
 * share a few QPs and CQs, and every completion still finds its communicator and
 * request. See docs/msg.md.
 *
 * Objects:
 *  - struct dvx_msg, the context: one per rank (or per plugin instance), over one or
 *    more opened NICs, in caller storage, with three caller regions (dvx_msg_mem_req()):
 *    state (tables), fifo (what peers write: clear-to-send entries; registered on every
 *    NIC) and rings (CQ and QP rings, registered as one umem per NIC).
 *  - communicators (struct dvx_msg_comm, handed out as pointers into the state
 *    region): a listen comm, a send comm (made by connect) and a recv comm (made by
 *    accept). A send comm talks to exactly one recv comm of the peer.
 *  - requests (struct dvx_msg_req, likewise): what isend, irecv and iflush return, until
 *    dvx_msg_test() reports them done.
 *
 * Protocol in one paragraph: the receiver's irecv posts receive WQEs and writes a
 * clear-to-send (CTS) entry (address, rkey, size, tag, request index, its communicator
 * id) into the sender's FIFO with an RDMA WRITE; the sender's isend takes the next FIFO
 * slot, matches the tag, and writes the data with RDMA WRITE with immediate, whose
 * immediate is (request index << 16) | receiver communicator id. A message larger
 * than the posted receive is an error on both ends. Send completions are routed by the
 * upper 16 bits of the wr_id (the sender's communicator id). docs/msg.md has the
 * encodings.
 *
 * With DVX_MSG_F_CTS_OFFLOAD on both ends, small messages skip the CTS: the sender
 * writes them into the receiver's eager ring, each receive the receiver keeps posted
 * being a credit, and larger ones ask for their CTS first (docs/msg.md, "CTS receiver
 * offload").
 *
 * Calls: 0 or a negative errno. Non-blocking calls that cannot proceed yet (connect,
 * accept, isend, irecv with no CTS, no room or no slot) return 0 with their output
 * NULL: call again. Every wait the layer does on its own (a handshake, a close waiting
 * for its peer) is bounded by the context's timeout. One thread at a time per context:
 * its communicators and requests are the context's, and a plugin whose library calls
 * it from several threads (connect on one, isend/test on another) holds a lock per
 * context around each call.
 */
#ifndef DVX_MSG_MSG_H
#define DVX_MSG_MSG_H

#include <dvx/compiler.h>
#include <dvx/hal/host.h>
#include <dvx/nic/nic.h>
#include <dvx/nic/umem.h>
#include <dvx/nic/mr.h>
#include <dvx/nic/qp.h>

DVX_BEGIN_DECLS

#define DVX_MSG_MAX_NICS 4	/* NICs of one context */
#define DVX_MSG_MAX_QPS 8	/* QPs of one connection */
#define DVX_MSG_MAX_RECVS 8	/* buffers of one irecv */
#define DVX_MSG_MAX_REQS 256	/* requests (FIFO slots) per communicator */
#define DVX_MSG_MAX_COMMS 2048	/* communicators of one context */
#define DVX_MSG_MAX_GROUPS 64	/* sharing groups per (NIC, peer, peer NIC, direction) */
#define DVX_MSG_HANDLE_BYTES 128

/* struct dvx_msg_cfg.flags */
enum {
	DVX_MSG_F_FLUSH = 1u << 0,	/* iflush of GPU receives: a loopback READ QP per NIC,
					 * and reg_mr grants REMOTE_READ (to that QP only:
					 * the data QPs never allow reads) */
	DVX_MSG_F_NO_FALLBACK = 1u << 1,	/* a full pool is -ENOSPC at connect instead
						 * of private QPs for that connection */
	DVX_MSG_F_CTS_OFFLOAD = 1u << 2,	/* CTS receiver offload: connections whose two
						 * ends both ask for it send small messages at
						 * once into the receiver's eager ring, each
						 * posted receive a credit (docs/msg.md) */
};

/**
 * struct dvx_msg_cfg - what a context is made of. Zero means the default.
 * @nnics:	NICs (1 ... DVX_MSG_MAX_NICS)
 * @nics:	the opened NICs (caller's; they outlive the context); the "dev" of
 *		listen and connect is an index into this array
 * @hal:	the hal whose host table the handshake's sockets and the clock use;
 *		NULL: dvx_hal_host()
 * @listen_addr: where the context listens for connections. family 0: TCP on
 *		127.0.0.1 with a port the system picks (one host); set an IPv4/IPv6
 *		address reachable from the peers for several hosts, or an abstract UNIX
 *		name or a UNIX path (at most 47 characters: the handle carries it)
 * @max_comms:	listen, send and recv communicators alive at once, and the size of
 *		the communicator id table (1 ... DVX_MSG_MAX_COMMS; default 64)
 * @max_pending: handshakes in progress at once, 2 ... 256 (default 16); at most half
 *		of them this context's own connects
 * @nqps:	QPs per connection, the most a connect may ask for (1 ...
 *		DVX_MSG_MAX_QPS; default 1)
 * @max_reqs:	requests in flight per communicator, a power of two up to
 *		DVX_MSG_MAX_REQS (default 32); a send comm can have @max_reqs *
 *		@max_recvs sends in flight
 * @max_recvs:	buffers per irecv (1 ... DVX_MSG_MAX_RECVS, any number; default 8)
 * @sq_depth:	send queue WQEBBs of a private QP, a power of two (default
 *		@max_reqs * @max_recvs, at least @max_reqs * 2: an irecv's clear-to-send
 *		is two WRITEs; rounded up to a power of two)
 * @rq_depth:	receive WQEs of a private QP, a power of two (default @max_reqs *
 *		@max_recvs rounded up to a power of two)
 * @groups:	sharing: 0 (default) gives every connection private QPs; > 0 (up to
 *		DVX_MSG_MAX_GROUPS) puts connections into the pool, round robin over this
 *		many groups per (NIC, peer, peer NIC, direction)
 * @depth_mult:	shared QPs' and CQs' depths are @sq_depth, @rq_depth and their CQ's
 *		times this (1 ... 16; default 1)
 * @max_shared_sets: QP sets (a group's QPs and their CQ) of the pool (default: with
 *		@groups, min(@max_comms, 64); else 0)
 * @max_private_sets: QP sets of unshared connections (default: with @groups 16, else
 *		@max_comms)
 * @split_bytes: an irecv buffer of at least this many bytes is striped over every QP
 *		of the connection, a smaller one goes to one QP, round robin (default
 *		65536)
 * @flags:	DVX_MSG_F_*
 * @eager_bytes: with DVX_MSG_F_CTS_OFFLOAD, the largest message sent eagerly (the
 *		payload of one eager ring slot): a multiple of 64 up to 65536 (default
 *		4096); larger messages go by rendezvous. Each communicator slot then
 *		holds a ring and a staging area of max_reqs * (16 + @eager_bytes)
 *		bytes in the FIFO region
 * @conn:	QP connection parameters (zero: dvx_qp_connect_cfg_init()'s); the
 *		remote access is the layer's own: REMOTE_WRITE only
 * @timeout_ns:	bound on one handshake, from its first connect call or its arrival
 *		(default 30 s)
 */
struct dvx_msg_cfg {
	uint32_t nnics;
	uint32_t rsvd0;
	struct dvx_nic *nics[DVX_MSG_MAX_NICS];
	const struct dvx_hal *hal;
	struct dvx_hal_sock_addr listen_addr;
	uint32_t max_comms;
	uint32_t max_pending;
	uint32_t nqps;
	uint32_t max_reqs;
	uint32_t max_recvs;
	uint32_t sq_depth;
	uint32_t rq_depth;
	uint32_t groups;
	uint32_t depth_mult;
	uint32_t max_shared_sets;
	uint32_t max_private_sets;
	uint32_t flags;
	uint32_t eager_bytes;
	uint64_t split_bytes;
	struct dvx_qp_connect_cfg conn;
	uint64_t timeout_ns;
};

/**
 * struct dvx_msg_handle - what a listen hands out and a connect takes: the listener's
 * address, its context and listen communicator, and a cookie only holders of the
 * handle know. The caller passes it to the peer through its own channel (a bootstrap
 * allgather, say); bytes 0-95 are what travels, in a fixed little-endian layout.
 * connect keeps its progress in @stage, so a connect in progress must be called again
 * with the same handle (NCCL's convention).
 * @wire:	the listener's part (opaque)
 * @stage:	the connecting side's part (opaque; zero before the first connect)
 */
struct dvx_msg_handle {
	uint8_t wire[96];
	uint8_t stage[32];
};
DVX_ASSERT_SIZE(struct dvx_msg_handle, DVX_MSG_HANDLE_BYTES);

struct dvx_msg_state;
struct dvx_msg_comm;
struct dvx_msg_req;

/**
 * struct dvx_msg - a messaging context, in caller storage.
 * @st:		the state region's header (private)
 * @live:	DVX_LIVE between init and fini
 * @rsvd:	zero
 */
struct dvx_msg {
	struct dvx_msg_state *st;
	uint32_t live;
	uint32_t rsvd;
};

/**
 * struct dvx_msg_stats - what a context holds and what it has seen.
 * @comms:	communicators (listen, send, recv), closing ones included
 * @closing:	communicators closed whose WQEs or announced messages are still in
 *		flight (they keep their slot and QP references until then)
 * @pending:	handshakes in progress
 * @sets:	live QP sets (shared and private)
 * @shared_sets: live shared sets
 * @qps:	live QPs (every set's, and the flush QPs)
 * @cqs:	live CQs
 * @pool_entries: live pool entries (one per shared QP)
 * @ring_bytes:	bytes of the ring region the live sets occupy
 * @ring_region: bytes of the whole ring region (dvx_msg_mem_req())
 * @primaries:	connections that made a new shared set (either end)
 * @secondaries: connections that joined a shared set
 * @privates:	connections with private QPs
 * @fallbacks:	connections that wanted to share and got private QPs (a full pool, a
 *		set one end no longer has, a failed QP), both ends agreeing
 * @late:	sends and messages of a closed communicator, counted and dropped (also
 *		a message for no communicator at all: its receive is given back)
 * @refused:	incoming handshakes refused or dropped (bad cookie, unknown listen
 *		comm, no room, a peer that went away, a timeout), connects nobody collected,
 *		closes that ended at their deadline
 * @qp_errors:	QPs that failed (an error completion)
 * @offloads:	connections in CTS-offload mode (either end)
 * @cts_fallbacks: connections one end of which asked for CTS offload and that run
 *		with the FIFO clear-to-send, both ends agreeing
 * @eager:	messages sent eagerly into a receiver's ring
 * @rts:	messages sent by rendezvous (offload mode, larger than the eager size
 *		or from device memory)
 * @cts_waits:	isend calls answered "try later" for want of a clear-to-send (FIFO
 *		mode) or of its answer to a rendezvous
 * @credit_waits: isend calls answered "try later" for want of a credit (offload)
 * @credits:	credit words written back to senders
 */
struct dvx_msg_stats {
	uint32_t comms;
	uint32_t closing;
	uint32_t pending;
	uint32_t sets;
	uint32_t shared_sets;
	uint32_t qps;
	uint32_t cqs;
	uint32_t pool_entries;
	uint64_t ring_bytes;
	uint64_t ring_region;
	uint64_t primaries;
	uint64_t secondaries;
	uint64_t privates;
	uint64_t fallbacks;
	uint64_t late;
	uint64_t refused;
	uint64_t qp_errors;
	uint64_t offloads;
	uint64_t cts_fallbacks;
	uint64_t eager;
	uint64_t rts;
	uint64_t cts_waits;
	uint64_t credit_waits;
	uint64_t credits;
};

/**
 * dvx_msg_mem_req() - the memory dvx_msg_init() needs.
 * @cfg:	the configuration
 * @state:	the state region: tables of communicators, requests, sets, the pool,
 *		handshakes (ordinary host memory, 64-byte aligned)
 * @fifo:	the FIFO region: one area per communicator that peers write
 *		clear-to-send entries into (host memory, 4096-byte aligned; registered
 *		on every NIC with remote write)
 * @rings:	the ring region: every QP set's rings and doorbell records (memory the
 *		NICs read and write, 4096-byte aligned; registered as a umem per NIC)
 *
 * Context: any. Return: 0; -EINVAL (a bad configuration: out of range, not a power of
 * two, no NIC). A refused configuration with at least one NIC names its cause in
 * @cfg->nics[0]'s diagnostic (nics[0]->hal.diag, "max_reqs 48 is not a power of two
 * ..."); that record is the only thing written.
 */
int dvx_msg_mem_req(const struct dvx_msg_cfg *cfg, struct dvx_mem_req *state,
		    struct dvx_mem_req *fifo, struct dvx_mem_req *rings);

/**
 * dvx_msg_init() - create a context: register the FIFO and ring regions on every NIC,
 * make the flush QPs (DVX_MSG_F_FLUSH) and open the listening socket.
 * @m:		caller storage (zeroed before the first init)
 * @cfg:	the configuration (copied)
 * @state, @state_len:	the state region (dvx_msg_mem_req())
 * @fifo, @fifo_len:	the FIFO region
 * @rings, @rings_len:	the ring region
 *
 * The regions stay the context's until dvx_msg_fini(); their contents are the layer's.
 * Context: control path. Return: 0; -EINVAL (configuration, a region too small or
 * misaligned: the cause in nics[0]'s diagnostic, as dvx_msg_mem_req()); -EBUSY (@m is live); a hal or core error (umem, MR, the flush
 * QP: a NIC without force-loopback gets a local partner QP instead, socket). On error nothing is held and @m is zeroed.
 */
int dvx_msg_init(struct dvx_msg *m, const struct dvx_msg_cfg *cfg, void *state,
		 uint64_t state_len, void *fifo, uint64_t fifo_len, void *rings,
		 uint64_t rings_len);

/**
 * dvx_msg_fini() - close every communicator (as dvx_msg_close() does), abort the
 * handshakes in progress, destroy every QP, CQ, MR and umem, close the sockets.
 * @m:		a live context
 *
 * Peers see their connections to this context fail (retry exhausted) if they go on.
 * Context: control path. Return: 0; -EINVAL (not a live context); the first failed
 * destroy's errno (everything else is still released; @m is dead either way).
 */
int dvx_msg_fini(struct dvx_msg *m);

/**
 * dvx_msg_listen() - a listen communicator on NIC @nic and its handle.
 * @m:		context
 * @nic:	index into cfg.nics: connections accepted here use that NIC
 * @handle:	filled: pass it to the connecting peer
 * @listen:	the listen communicator
 *
 * Context: one thread per context. Return: 0; -EINVAL; -ENOSPC (the communicator table
 * is full); the hal's error for the random cookie (a backend without random bytes
 * gets one from the clock and the context's identity).
 */
int dvx_msg_listen(struct dvx_msg *m, uint32_t nic, struct dvx_msg_handle *handle,
		   struct dvx_msg_comm **listen);

/**
 * dvx_msg_connect() - connect a send communicator to a peer's listen communicator.
 * @m:		context
 * @nic:	index into cfg.nics of the NIC to send from
 * @nqps:	QPs wanted (1 ... cfg.nqps; 0: cfg.nqps); the acceptor may grant fewer
 * @handle:	the peer's handle; progress is kept in handle->stage, so call again
 *		with the same handle until the communicator comes back
 * @send:	the send communicator once connected, NULL while in progress
 *
 * Non-blocking: each call runs the context's handshakes (all of them, also incoming
 * ones), so the order in which two ranks call connect and accept does not matter. The
 * group is chosen round robin per peer; the two ends agree whether the connection
 * makes a shared set, joins one or gets private QPs (docs/msg.md).
 * Context: one thread per context. Return: 0 (@send set, or NULL: call again, also
 * while half the handshake table is this context's connects in progress); -EINVAL
 * (bad handle or arguments); -ENOSPC (no communicator or set slot here, or the
 * acceptor refused for lack of room); -ECONNREFUSED (the listen comm is
 * gone); -EACCES (the acceptor did not know the cookie); -ETIMEDOUT (no answer within
 * cfg.timeout_ns); -ECONNRESET, -EPROTO (the peer broke the handshake); a socket,
 * QP or connect error. After an error the handle's stage is reset and nothing is held.
 */
int dvx_msg_connect(struct dvx_msg *m, uint32_t nic, uint32_t nqps,
		    struct dvx_msg_handle *handle, struct dvx_msg_comm **send);

/**
 * dvx_msg_accept() - the next connection that completed on @listen.
 * @listen:	a listen communicator
 * @recv:	the recv communicator, or NULL when none is ready yet (call again)
 *
 * Runs the context's handshakes like dvx_msg_connect(). Connections are handed out in
 * the order their handshakes completed.
 * Context: one thread per context. Return: 0; -EINVAL (not a listen communicator).
 */
int dvx_msg_accept(struct dvx_msg_comm *listen, struct dvx_msg_comm **recv);

/**
 * dvx_msg_reg_mr() - register a buffer for isend/irecv on NIC @nic.
 * @m:		context
 * @nic:	index into cfg.nics (the comms using the buffer must use this NIC)
 * @attr:	the memory: addr, len, and a dma-buf (DVX_MR_F_DMABUF) as dvx_mr_reg()
 *		takes it; access is the layer's own (local write, remote write, and
 *		remote read with DVX_MSG_F_FLUSH), whatever @attr says; iova = address
 * @mr:		caller storage for the MR (zeroed first)
 *
 * Context: control path. Return: as dvx_mr_reg().
 */
int dvx_msg_reg_mr(struct dvx_msg *m, uint32_t nic, const struct dvx_mr_cfg *attr,
		   struct dvx_mr *mr);

/**
 * dvx_msg_dereg_mr() - deregister what dvx_msg_reg_mr() registered.
 * @m:		context
 * @mr:		the MR; requests using the buffer must have completed, and buffers a
 *		closed recv comm announced must be in (its close finished)
 * Context: control path. Return: as dvx_mr_dereg(); -EINVAL.
 */
int dvx_msg_dereg_mr(struct dvx_msg *m, struct dvx_mr *mr);

/**
 * dvx_msg_isend() - send @size bytes to the peer's recv communicator.
 * @send:	a send communicator
 * @buf:	the bytes (in @mr); read by the NIC until the request is done
 * @size:	bytes (0 allowed); at most the receive's size and what the path carries
 *		(the NICs' largest message per QP times the receive's stripe)
 * @tag:	matched against the tags of the peer's next irecv
 * @mr:		registered with dvx_msg_reg_mr() on the communicator's NIC
 * @req:	the request, or NULL when the peer has not posted a matching receive yet
 *		or a queue is full (call again)
 *
 * Takes the next clear-to-send slot of the FIFO, finds the entry with @tag among its
 * buffers, and writes the data with WRITE with immediate on the QPs the receiver
 * chose. When @size is larger than that receive, or than one WQE carries on the path
 * per QP slot of its stripe: the receiver is told (its buffer completes with -EMSGSIZE)
 * and this call returns -EMSGSIZE; the entry is used up on both ends.
 * Context: one thread per context. Return: 0 (@req set or NULL); -EINVAL (on a live
 * communicator the cause in its NIC's diagnostic); -EMSGSIZE
 * (see above); -ECONNRESET (the receiver closed its end and announced nothing more);
 * the communicator's error once a QP it uses failed (an error CQE's errno,
 * docs/errors.md).
 */
int dvx_msg_isend(struct dvx_msg_comm *send, const void *buf, size_t size, uint32_t tag,
		  const struct dvx_mr *mr, struct dvx_msg_req **req);

/**
 * dvx_msg_irecv() - post @n receive buffers as one request and tell the sender.
 * @recv:	a recv communicator
 * @n:		buffers (1 ... the connection's max_recvs)
 * @bufs:	where each message lands
 * @sizes:	each buffer's size (the largest message it takes)
 * @tags:	each buffer's tag (the sender's isend names it)
 * @mrs:	each buffer's MR (dvx_msg_reg_mr(), the communicator's NIC)
 * @req:	the request, or NULL when no request slot, receive or send room is free
 *		(call again)
 *
 * Posts the receive WQEs the incoming WRITEs with immediate consume, then writes the
 * CTS entries into the sender's FIFO with one RDMA WRITE.
 * Context: one thread per context. Return: 0 (@req set or NULL); -EINVAL (on a live
 * communicator the cause in its NIC's diagnostic); the
 * communicator's error once a QP it uses failed.
 */
int dvx_msg_irecv(struct dvx_msg_comm *recv, int n, void *const *bufs, const size_t *sizes,
		  const uint32_t *tags, struct dvx_mr *const *mrs, struct dvx_msg_req **req);

/**
 * dvx_msg_iflush() - make received bytes in GPU memory visible to the GPU: an RDMA
 * READ of one byte of the last non-empty buffer through the NIC's flush QP (PCIe
 * ordering: the read's answer comes after the NIC's earlier writes landed). Call it
 * for buffers in GPU memory only, after their irecv completed.
 * @recv:	the recv communicator the data came in on
 * @n, @bufs, @sizes, @mrs: as the completed irecv's
 * @req:	the flush request, or NULL when nothing needs a flush (every size 0, or
 *		a context without DVX_MSG_F_FLUSH)
 *
 * Context: one thread per context. Return: 0; -EINVAL; -EAGAIN (the flush QP's queue
 * is full: test earlier flushes first, or call again: a plugin whose interface has no
 * such answer retries); the flush QP's error.
 */
int dvx_msg_iflush(struct dvx_msg_comm *recv, int n, void *const *bufs, const size_t *sizes,
		   struct dvx_mr *const *mrs, struct dvx_msg_req **req);

/**
 * dvx_msg_test() - progress the request's communicator and say whether it is done.
 * @req:	a request from isend, irecv or iflush
 * @done:	1 when done (the request is freed then: do not test it again), else 0
 * @sizes:	NULL, or filled when done: isend 1 entry (bytes sent), irecv n entries
 *		(bytes that landed in each buffer), iflush nothing
 *
 * Polls the CQ of the communicator's QPs (completions of other communicators sharing
 * them are routed to theirs) and the NICs' progress hooks.
 * Context: one thread per context. Return: 0; a negative errno with *@done = 1 when the
 * request failed (freed too): -EMSGSIZE (a message larger than the receive; for irecv
 * @sizes still holds the other buffers' sizes, 0 for the failed one), an error
 * completion's errno for the QP the request used (docs/errors.md); -EINVAL (not a
 * live request; *@done untouched).
 */
int dvx_msg_test(struct dvx_msg_req *req, int *done, size_t *sizes);

/**
 * dvx_msg_progress() - run the handshakes and poll every live CQ of the context once.
 * @m:		context
 * Context: one thread per context. Return: 0; -EINVAL.
 */
int dvx_msg_progress(struct dvx_msg *m);

/**
 * dvx_msg_close() - close a listen, send or recv communicator.
 * @comm:	the communicator (its pointer and its requests' are invalid afterwards)
 *
 * Its requests are gone at once. The communicator itself stays CLOSING, holding its
 * table slot (so its id routes to nobody else) and its QP references, while anything
 * of it is in flight: its WQEs, the messages a recv comm announced (a sender still
 * fills them, or revokes them when it closes), and for a send comm the receiver's
 * close marker, which says every buffer it announced so that the unused ones can be
 * revoked (the receiver's requests then end with -ECONNRESET). Completions for a
 * closing comm are counted as late and dropped. Every later call on the context
 * (test, connect, accept, progress) finishes closes; a close still waiting after the
 * context's timeout goes anyway (a recv comm's receives still posted become the QP's
 * orphans, used up by messages that come late). A QP, or a set's CQ, whose last user
 * goes is destroyed then. Buffers a recv comm announced may still be written until the
 * close finishes. A listen comm's handshakes in progress are refused and its
 * connections not yet accepted closed.
 * Context: one thread per context. Return: 0; -EINVAL (not a live communicator).
 */
int dvx_msg_close(struct dvx_msg_comm *comm);

/**
 * dvx_msg_check() - check the context's invariants: pool refcounts equal the
 * communicators mapped to each QP, CQ refcounts the live QPs of each set, no CQ or QP
 * destroyed while referenced, pool keys unique, every communicator id routing to its
 * own communicator, every communicator's QPs live and its set's.
 * @m:		context
 * @why:	NULL, or set to a static description of the first violation
 *
 * Context: any time between calls on the context. Return: 0; -EUCLEAN (a violation);
 * -EINVAL (not a live context).
 */
int dvx_msg_check(const struct dvx_msg *m, const char **why);

/**
 * dvx_msg_get_stats() - what the context holds and has counted.
 * @m:		context
 * @s:		filled (zeroed for a context that is not live)
 * Context: between calls on the context. Return: nothing.
 */
void dvx_msg_get_stats(const struct dvx_msg *m, struct dvx_msg_stats *s);

/**
 * struct dvx_msg_qp_stats - one QP of a communicator, as its NIC's queues count it.
 * @qpn:	the QP's number
 * @nic:	the context's NIC index it is on
 * @shared:	1: a shared set's QP (the pool's), 0: private
 * @dir:	0: a send comm's (sends data), 1: a recv comm's (takes data)
 * @failed:	1 once the QP saw an error completion
 * @rsvd:	zero
 * @comms:	communicator slots mapped to it now
 * @sq_posted:	send WQEBBs posted (data, clear-to-sends, notices, credit words)
 * @sq_done:	send WQEBBs the NIC is done with (completions seen)
 * @rq_posted:	receive WQEs posted (data, credits, spares)
 * @rq_done:	receive WQEs consumed
 * @cqes:	completions of this QP taken from its set's CQ
 * @errors:	error completions among them
 */
struct dvx_msg_qp_stats {
	uint32_t qpn;
	uint32_t nic;
	uint8_t shared;
	uint8_t dir;
	uint8_t failed;
	uint8_t rsvd;
	uint32_t comms;
	uint64_t sq_posted;
	uint64_t sq_done;
	uint64_t rq_posted;
	uint64_t rq_done;
	uint64_t cqes;
	uint64_t errors;
};

/**
 * dvx_msg_comm_qp_stats() - the counters of one QP a communicator uses (per-QP
 * telemetry: a plugin snapshots them before it closes the communicator; a shared QP's
 * counters are all its communicators' together).
 * @comm:	a live send or recv communicator
 * @slot:	its QP slot (0 ... nqps - 1, dvx_msg_comm_info())
 * @out:	filled on success
 * Context: between calls on its context. Return: 0; -EINVAL (not a live send/recv comm,
 * NULL @out); -ENOENT (@slot past its QPs, or the QP is gone).
 */
int dvx_msg_comm_qp_stats(const struct dvx_msg_comm *comm, uint32_t slot,
			  struct dvx_msg_qp_stats *out);

/**
 * dvx_msg_comm_info() - what a communicator is (for tools and tests).
 * @comm:	a send or recv communicator
 * @shared:	1 when it uses a shared set, 0 for private QPs
 * @nqps:	its QP slots
 * @id:		its communicator id (slot and generation, what wr_ids and immediates carry)
 * Context: between calls on its context. Return: 0; -EINVAL (not a send/recv comm).
 */
int dvx_msg_comm_info(const struct dvx_msg_comm *comm, int *shared, uint32_t *nqps,
		      uint32_t *id);

DVX_END_DECLS

#endif /* DVX_MSG_MSG_H */
