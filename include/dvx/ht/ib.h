/* SPDX-License-Identifier: MIT */
/*
 * dvx/ht/ib.h - the host transport over RC QPs (docs/ht.md): one QP per channel to
 * one peer, built over the bootstrap, in zero-copy or copy-based mode.
 *
 *  - Zero-copy (DVX_HT_ZC): no staging. The receiver exports its receive buffer
 *    (dvx_ht_export(), sent as a control message); each chunk is one RDMA WRITE with
 *    immediate into it at the chunk's offset on the channel's QP; the receiver counts
 *    the notifications of each channel in order. The transport keeps receive WQEs
 *    posted for them; a sender more than rq_depth chunks ahead of the receiver's
 *    issued receives meets an RNR, which fails its request with -ENOBUFS after the
 *    finite rnr_retry (never an endless wait).
 *  - Copy-based (DVX_HT_CB): staging slots at both ends, in the data region
 *    (registered once). A chunk is copied into a send slot (prepare), written with
 *    immediate into the peer's slot of the same index, copied out into the receiver's
 *    buffer (process) and the slot handed back by a fetch-add into the sender's
 *    credit word; each slot runs FREE -> FILLING -> IN_FLIGHT -> FREE (sender) and
 *    FREE -> LANDED -> DRAINING -> FREE (receiver). Messages of any size pipeline
 *    through the slots chunk by chunk; prepare and process are hooks (host memcpy by
 *    default; a GPU copy can be plugged in).
 *
 * Set-up is non-blocking: dvx_ht_ib_init() makes the QPs and sends its half of the
 * handshake; every later call on the transport moves it on, and it is connected once
 * both ends have made their QPs ready to receive (dvx_ht_connected()). Nothing waits
 * for the peer, so transports may be created in any order on any rank.
 */
#ifndef DVX_HT_IB_H
#define DVX_HT_IB_H

#include <dvx/ht/ht.h>
#include <dvx/bootstrap/bootstrap.h>
#include <dvx/nic/nic.h>
#include <dvx/nic/umem.h>
#include <dvx/nic/qp.h>

DVX_BEGIN_DECLS

#define DVX_HT_CB_MAX_DEPTH 64	/* staging slots per channel */

/* Bytes of one handshake message: the bootstrap must hold one without the receiver
 * (the threads adapter: slot_bytes at least this). */
#define DVX_HT_HELLO_BYTES 256

/**
 * enum dvx_ht_slot_state - a copy-based staging slot (dvx_ht_ib_slot_state()).
 * @DVX_HT_SLOT_FREE:	nothing in it
 * @DVX_HT_SLOT_FILLING: send: the prepare step copies the caller's chunk in
 * @DVX_HT_SLOT_IN_FLIGHT: send: written to the peer's slot; free again once the write
 *			completed and the peer handed the slot back (credit)
 * @DVX_HT_SLOT_LANDED:	receive: a chunk arrived, no receive has taken it yet
 * @DVX_HT_SLOT_DRAINING: receive: the process step copies it out; the credit goes
 *			back when it is done
 */
enum dvx_ht_slot_state {
	DVX_HT_SLOT_FREE = 0,
	DVX_HT_SLOT_FILLING,
	DVX_HT_SLOT_IN_FLIGHT,
	DVX_HT_SLOT_LANDED,
	DVX_HT_SLOT_DRAINING,
};

/**
 * struct dvx_ht_cb_op - what a copy hook moves.
 * @user:	the caller's buffer (prepare: the source; process: the destination)
 * @staging:	the staging slot (prepare: the destination; process: the source)
 * @len:	bytes
 * @channel:	the chunk's channel
 * @slot:	the slot's index in its channel
 * @seq:	the chunk's place in its channel's order
 */
struct dvx_ht_cb_op {
	void *user;
	void *staging;
	uint64_t len;
	uint32_t channel;
	uint32_t slot;
	uint64_t seq;
};

/**
 * struct dvx_ht_cb_hooks - the copy-based mode's copy steps (all NULL: host memcpy,
 * done at once). A GPU copy starts an asynchronous copy in @prepare / @process and
 * answers @prepared / @processed when it has finished.
 * @prepare:	start copying op->user into op->staging: 0 done, 1 started (then
 *		@prepared is asked), or a negative errno (fails the send)
 * @prepared:	1 done, 0 not yet, or a negative errno
 * @process:	start copying op->staging into op->user: as @prepare (an error fails the
 *		receive)
 * @processed:	as @prepared
 * @arg:	passed to each
 *
 * The transport starts at most one copy per slot and asks about them in each
 * channel's order; a hook must not call into the transport.
 */
struct dvx_ht_cb_hooks {
	int (*prepare)(void *arg, const struct dvx_ht_cb_op *op);
	int (*prepared)(void *arg, const struct dvx_ht_cb_op *op);
	int (*process)(void *arg, const struct dvx_ht_cb_op *op);
	int (*processed)(void *arg, const struct dvx_ht_cb_op *op);
	void *arg;
};

/**
 * struct dvx_ht_ib_cfg - what an IB transport is made of. Zero means the default.
 * @nic:	the opened NIC (caller's; it outlives the transport)
 * @bs:		the bootstrap the handshake runs over (caller's, used by this transport
 *		only from its own thread; with the sockets adapter, progress every
 *		transport sharing a context: a handshake message part-sent keeps the
 *		context busy until its transport is progressed again)
 * @peer:	the peer's rank in @bs
 * @tag:	the handshake's bootstrap tag; both ends use the same, and no other
 *		traffic between the two ranks uses it in @bs's tag space (one the
 *		adapter carries: the MPI adapter's are below 2^23)
 * @mode:	DVX_HT_ZC or DVX_HT_CB (both ends the same)
 * @nchannels:	channels, 1 ... DVX_HT_MAX_CHANNELS (default 1); both ends the same
 * @sq_depth:	send WQEBBs per channel, a power of two, 16 ... 32768 (default 256)
 * @rq_depth:	receive WQEs per channel, a power of two, 16 ... 32768 (default 512):
 *		zero-copy, how far the peer may run ahead of the receives issued here
 * @max_ctrl:	largest control message, 8 ... DVX_HT_MAX_CTRL (default 256); both
 *		ends the same
 * @ctrl_slots:	control messages in flight, and control messages that may wait for a
 *		dvx_ht_recv_ctrl() without taking a receive from the chunks, 1 ... 64
 *		(default 8)
 * @cb_depth:	copy-based: staging slots per channel, 1 ... DVX_HT_CB_MAX_DEPTH (default
 *		8), with @cb_depth + @ctrl_slots <= @rq_depth (each chunk in flight takes
 *		a receive) and 2 * @cb_depth + @ctrl_slots <= @sq_depth (writes, credits
 *		and control messages share the send ring); both ends the same
 * @cb_slot_bytes: copy-based: bytes of a slot, the largest chunk, a multiple of 64
 *		up to 1 GiB (default 65536); both ends the same
 * @hooks:	copy-based: the copy steps
 * @conn:	QP connection parameters (zero: dvx_qp_connect_cfg_init()'s with
 *		rnr_retry 6 and min_rnr_nak 31). rnr_retry 7 (retry forever) is refused:
 *		a receiver that never issues its receives must fail the sender, not
 *		hang it. The remote access is the transport's own: remote write, and
 *		atomics in copy-based mode (the credits)
 */
struct dvx_ht_ib_cfg {
	struct dvx_nic *nic;
	struct dvx_bootstrap *bs;
	int32_t peer;
	uint32_t tag;
	uint32_t mode;
	uint32_t nchannels;
	uint32_t sq_depth;
	uint32_t rq_depth;
	uint32_t max_ctrl;
	uint32_t ctrl_slots;
	uint32_t cb_depth;
	uint32_t cb_slot_bytes;
	struct dvx_ht_cb_hooks hooks;
	struct dvx_qp_connect_cfg conn;
};

struct dvx_ht_ib_state;

/**
 * struct dvx_ht_ib - an IB host transport, in caller storage (zero it before the first
 * init).
 * @ht:		the interface: pass &ib->ht to the dvx_ht_* calls
 * @st:		the state region's header (private)
 * @live:	DVX_LIVE between init and fini
 * @rsvd:	zero
 */
struct dvx_ht_ib {
	struct dvx_ht ht;
	struct dvx_ht_ib_state *st;
	uint32_t live;
	uint32_t rsvd;
};

/**
 * dvx_ht_ib_mem_req() - the memory dvx_ht_ib_init() needs.
 * @cfg:	the configuration (@bs and @peer are not read; @nic only to keep the
 *		record of a refusal)
 * @state:	the state region: the transport's tables (host memory, 64-byte aligned)
 * @rings:	the ring region: the CQ, every channel's QP rings and the doorbell
 *		records (memory the NIC reads and writes, 4096-byte aligned; registered
 *		as one umem)
 * @data:	the data region: control message buffers, the credit words and, in
 *		copy-based mode, the send and receive staging slots (host memory,
 *		4096-byte aligned; registered as one MR with local and remote write, and
 *		remote atomics in copy-based mode)
 *
 * Context: any. Return: 0; -EINVAL (a bad configuration: its cause in @cfg->nic's
 * diagnostic when @nic is an opened NIC).
 */
int dvx_ht_ib_mem_req(const struct dvx_ht_ib_cfg *cfg, struct dvx_mem_req *state,
		      struct dvx_mem_req *rings, struct dvx_mem_req *data);

/**
 * dvx_ht_ib_init() - create the transport and start its handshake.
 * @ib:		caller storage
 * @cfg:	the configuration (copied)
 * @state, @state_len:	the state region (dvx_ht_ib_mem_req())
 * @rings, @rings_len:	the ring region
 * @data, @data_len:	the data region
 *
 * Registers the ring region as a umem and the data region as an MR, creates the CQ
 * and one QP per channel, and offers the peer its half of the handshake over @cfg->bs
 * (QP numbers, the mode and geometry, where its staging and credit words are). Does
 * not wait for the peer: every call on the transport moves the handshake on (the
 * peer's half is received, the QPs connected and their receives posted, then each
 * end tells the other it is ready), and dvx_ht_connected() says when it is done. An
 * end whose mode or geometry differs from the peer's fails the handshake with
 * -EPROTO. The regions are the transport's until dvx_ht_ib_fini().
 * Context: control path, the transport's thread. Return: 0; -EINVAL (configuration,
 * regions too small or misaligned: the cause in @cfg->nic's diagnostic); -EBUSY (@ib is live); -EOPNOTSUPP (copy-based
 * on a NIC without atomics); a core error (umem, MR, CQ, QP); the bootstrap's error.
 * On error nothing is held and @ib is zeroed.
 */
int dvx_ht_ib_init(struct dvx_ht_ib *ib, const struct dvx_ht_ib_cfg *cfg, void *state,
		   uint64_t state_len, void *rings, uint64_t rings_len, void *data,
		   uint64_t data_len);

/**
 * dvx_ht_ib_fini() - destroy the QPs, the CQ, the MR and the umem, in reverse order.
 * @ib:		a live transport
 *
 * Requests still in flight are abandoned (their storage is the caller's again). Not
 * collective: the peer's later operations on its end fail (retry exhausted).
 * Context: control path. Return: 0; -EINVAL (not live); the first failed destroy's
 * error (everything else is still released; @ib is dead either way).
 */
int dvx_ht_ib_fini(struct dvx_ht_ib *ib);

/**
 * dvx_ht_ib_check() - check the transport's invariants: every request queue in order
 * and of its channel, staging slots in states their counters allow (no more chunks
 * in the peer's slots than the credits leave room for, LANDED and DRAINING only
 * behind their counters), receives posted within the ring, the credit word never
 * ahead of the chunks sent.
 * @ib:		a live transport
 * @why:	NULL, or set to a static description of the first violation
 * Context: between calls on it. Return: 0; -EUCLEAN (a violation); -EINVAL.
 */
int dvx_ht_ib_check(const struct dvx_ht_ib *ib, const char **why);

/**
 * dvx_ht_ib_slot_state() - a copy-based staging slot's state (for tests and tools).
 * @ib:		a live copy-based transport
 * @dir:	DVX_HT_SEND (this end's send slots) or DVX_HT_RECV
 * @channel:	the channel
 * @slot:	0 ... cb_depth - 1
 * Context: between calls on it. Return: enum dvx_ht_slot_state, or -EINVAL.
 */
int dvx_ht_ib_slot_state(const struct dvx_ht_ib *ib, uint32_t dir, uint32_t channel,
			 uint32_t slot);

/**
 * dvx_ht_ib_chan_syndrome() - the syndromes of the error completion that failed a
 * channel (docs/errors.md: 0x16 RNR_RETRY_EXC_ERR, 0x15 TRANSPORT_RETRY_EXC_ERR, 0x13
 * REMOTE_ACCESS_ERR, ...), for a failure the errno alone does not explain.
 * @ib:		a live transport
 * @channel:	the channel
 * @vendor:	NULL, or set to the vendor syndrome
 * Context: between calls on it. Return: the syndrome; 0 when the channel is healthy or
 * failed without an error completion (a protocol error), or for bad arguments.
 */
int dvx_ht_ib_chan_syndrome(const struct dvx_ht_ib *ib, uint32_t channel, uint8_t *vendor);

/**
 * struct dvx_ht_ib_stats - what a transport has done.
 * @chunks_sent, @chunks_recv: chunks completed each way
 * @bytes_sent, @bytes_recv: their bytes
 * @ctrl_sent, @ctrl_recv: control messages
 * @credits_sent: copy-based: slots handed back to the peer
 * @credit_waits: copy-based: send issues refused for want of a slot (-EAGAIN)
 * @recv_posted: receive WQEs posted
 * @errors:	error completions seen (flushes included)
 * @recoveries:	channels brought back by dvx_ht_recover()
 * @rec_dropped: chunks and control messages that had landed with no receive to take
 *		them, dropped by a recovery of their channel
 */
struct dvx_ht_ib_stats {
	uint64_t chunks_sent, chunks_recv;
	uint64_t bytes_sent, bytes_recv;
	uint64_t ctrl_sent, ctrl_recv;
	uint64_t credits_sent;
	uint64_t credit_waits;
	uint64_t recv_posted;
	uint64_t errors;
	uint64_t recoveries;
	uint64_t rec_dropped;
};

/**
 * dvx_ht_ib_get_stats() - the transport's counters.
 * @ib:		a transport
 * @s:		filled (zeroed when @ib is not live)
 * Context: between calls on it. Return: nothing.
 */
void dvx_ht_ib_get_stats(const struct dvx_ht_ib *ib, struct dvx_ht_ib_stats *s);

DVX_END_DECLS

#endif /* DVX_HT_IB_H */
