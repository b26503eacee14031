/* SPDX-License-Identifier: MIT */
/*
 * dvx/ht/ht.h - the host transport: a CPU-driven, per-peer transport that algorithms
 * use without knowing how the bytes move (docs/ht.md).
 *
 * One transport links this rank with one peer. It carries:
 *  - control messages: small caller-owned payloads (at most the transport's max_ctrl
 *    bytes), sent and received in order on channel 0;
 *  - chunks: pieces of the caller's data on an explicit channel (0 ... nchannels - 1),
 *    described by mode-agnostic arguments (struct dvx_ht_chunk: buffer, size, channel,
 *    remote offset). Chunks of one channel complete in the order they were issued, on
 *    both ends; nothing orders chunks of different channels.
 * Every operation fills a caller-owned request (struct dvx_ht_req) that dvx_ht_test()
 * or dvx_ht_wait() reports done. A backend implements struct dvx_ht_ops; dvx has the
 * IB backend (dvx/ht/ib.h: zero-copy and copy-based modes), a per-peer cache of IB
 * transports (dvx/ht/cache.h) and, for users' own tests, a mock (dvx/testing/ht_mock.h
 * in libdvx-test.a).
 *
 * Calls are actions (0 or a negative errno) unless said otherwise. Bad arguments are
 * -EINVAL and change nothing. An issue call that cannot proceed now changes nothing
 * and says why: -ENOTCONN (the handshake has not finished: progress and issue again),
 * -EAGAIN (no room on the channel now: complete earlier requests, or progress), the
 * channel's or the transport's error once it failed. One thread at a time per
 * transport (the caller serialises; the transports of one cache count as one).
 */
#ifndef DVX_HT_HT_H
#define DVX_HT_HT_H

#include <dvx/compiler.h>
#include <dvx/nic/mr.h>

DVX_BEGIN_DECLS

#define DVX_HT_MAX_CHANNELS 16	/* channels of one transport */
#define DVX_HT_MAX_CTRL 4096	/* largest max_ctrl a transport may be made with */

/** enum dvx_ht_mode - how a transport moves chunks. */
enum dvx_ht_mode {
	DVX_HT_MODE_NONE = 0,
	DVX_HT_ZC = 1,		/* zero-copy: RDMA WRITE with immediate into the
				 * receiver's exported buffer */
	DVX_HT_CB = 2,		/* copy-based: through registered staging slots */
};

/** enum dvx_ht_dir - the side of a channel dvx_ht_ready() asks about. */
enum dvx_ht_dir {
	DVX_HT_SEND = 0,
	DVX_HT_RECV = 1,
};

/** enum dvx_ht_req_kind - what a request is (struct dvx_ht_req.kind). */
enum dvx_ht_req_kind {
	DVX_HT_REQ_NONE = 0,
	DVX_HT_REQ_CTRL_SEND,
	DVX_HT_REQ_CTRL_RECV,
	DVX_HT_REQ_SEND,
	DVX_HT_REQ_RECV,
};

/** enum dvx_ht_req_state - where a request is (struct dvx_ht_req.state). */
enum dvx_ht_req_state {
	DVX_HT_RS_IDLE = 0,	/* never issued (zeroed storage) */
	DVX_HT_RS_BUSY,		/* issued, not done: must not move or be reused */
	DVX_HT_RS_DONE,		/* done: the caller's again (may be issued again) */
};

struct dvx_ht;

/**
 * struct dvx_ht_req - one operation in flight, in caller storage. Zero it before its
 * first use; between issue and done it is the transport's: it must not move, be
 * copied or be issued again (-EBUSY).
 * @kind:	enum dvx_ht_req_kind
 * @state:	enum dvx_ht_req_state
 * @channel:	the channel it runs on (control messages: 0)
 * @err:	when done: 0, or the error that hit exactly this request
 * @bytes:	when done: bytes sent, or bytes that landed (receives)
 * @seq:	its place in its channel's order (chunks), or in the control order
 * @t:		the transport it was issued on
 * @next:	the backend's queue link
 * @buf:	the caller's buffer (receives: where the bytes go)
 * @len:	the caller's length (receives: the most bytes accepted)
 * @priv:	the backend's
 */
struct dvx_ht_req {
	uint8_t kind;
	uint8_t state;
	uint16_t channel;
	int32_t err;
	uint64_t bytes;
	uint64_t seq;
	struct dvx_ht *t;
	struct dvx_ht_req *next;
	void *buf;
	uint64_t len;
	uint64_t priv[2];
};

/**
 * struct dvx_ht_desc - a receive buffer as the receiver exports it to the sender
 * (zero-copy mode): 32 bytes in a fixed little-endian layout, sent as a control
 * message and imported by the peer with dvx_ht_import().
 * @magic:	DVX_HT_DESC_MAGIC (LE)
 * @key:	the remote key (LE)
 * @addr:	the address the peer writes byte 0 to (LE)
 * @len:	bytes (LE)
 * @rsvd:	zero
 */
struct dvx_ht_desc {
	uint32_t magic;
	uint32_t key;
	uint64_t addr;
	uint64_t len;
	uint64_t rsvd;
};
DVX_ASSERT_SIZE(struct dvx_ht_desc, 32);

#define DVX_HT_DESC_MAGIC 0x31445448u	/* "HTD1" */

/**
 * struct dvx_ht_rbuf - an imported remote buffer (CPU order), what zero-copy chunk
 * sends name as their target.
 * @addr:	the peer's address of byte 0
 * @len:	bytes
 * @key:	the remote key
 * @rsvd:	zero
 */
struct dvx_ht_rbuf {
	uint64_t addr;
	uint64_t len;
	uint32_t key;
	uint32_t rsvd;
};

/**
 * struct dvx_ht_chunk - one chunk, the same arguments in both modes.
 * @buf:	send: the bytes; receive: copy-based, where they are copied to;
 *		zero-copy, not used (the sender's @offset says where they landed)
 * @len:	send: bytes (1 ... the transport's max_chunk); receive: the most
 *		bytes accepted (a larger chunk fails the receive with -EMSGSIZE)
 * @offset:	zero-copy send: where in @remote the bytes land; otherwise not used
 * @channel:	0 ... nchannels - 1
 * @flags:	0
 * @mr:		zero-copy send: the registration of @buf on the transport's NIC
 *		(not used in copy-based mode, which copies from @buf)
 * @remote:	zero-copy send: the receiver's buffer (dvx_ht_import()); NULL in
 *		copy-based mode
 */
struct dvx_ht_chunk {
	void *buf;
	uint64_t len;
	uint64_t offset;
	uint32_t channel;
	uint32_t flags;
	const struct dvx_mr *mr;
	const struct dvx_ht_rbuf *remote;
};

/**
 * struct dvx_ht_ops - what a backend provides. The dvx_ht_* calls check what they can
 * (a live transport, the channel, a request that is not busy, the sizes), fill the
 * request's common fields and mark it busy before calling in; a backend completes a
 * request with dvx_ht_req_done().
 * @send_ctrl:	post a control message (@buf copied or kept until done, as the
 *		backend documents)
 * @recv_ctrl:	take the next control message into @buf (at most @len bytes)
 * @send_chunk:	post a chunk
 * @recv_chunk:	expect the next chunk of a channel
 * @progress:	move what can move: completions, handshakes, staging; 0 or the
 *		transport's error once it failed as a whole
 * @connected:	1 once chunks and control messages may be issued, else 0 (a pure read)
 * @ready:	1 when a chunk could be issued on (@channel, @dir) now, else 0 (a pure
 *		read)
 * @status:	the error that failed @channel (-1: the transport as a whole), 0 when
 *		none did
 * @export_buf:	describe a receive buffer for the peer (zero-copy); -EOPNOTSUPP
 *		where the backend has no use for it
 * @import_buf:	check and decode a peer's description
 * @now_ns:	the clock dvx_ht_wait() measures timeouts with
 * @recover:	bring a failed channel back with the peer (dvx_ht_recover()); NULL
 *		where the backend cannot (-EOPNOTSUPP)
 */
struct dvx_ht_ops {
	int (*send_ctrl)(struct dvx_ht *t, const void *buf, size_t len, struct dvx_ht_req *req);
	int (*recv_ctrl)(struct dvx_ht *t, void *buf, size_t len, struct dvx_ht_req *req);
	int (*send_chunk)(struct dvx_ht *t, const struct dvx_ht_chunk *c, struct dvx_ht_req *req);
	int (*recv_chunk)(struct dvx_ht *t, const struct dvx_ht_chunk *c, struct dvx_ht_req *req);
	int (*progress)(struct dvx_ht *t);
	int (*connected)(const struct dvx_ht *t);
	int (*ready)(const struct dvx_ht *t, uint32_t channel, uint32_t dir);
	int (*status)(const struct dvx_ht *t, int32_t channel);
	int (*export_buf)(struct dvx_ht *t, void *buf, uint64_t len, const struct dvx_mr *mr,
			  struct dvx_ht_desc *d);
	int (*import_buf)(struct dvx_ht *t, const struct dvx_ht_desc *d, struct dvx_ht_rbuf *r);
	uint64_t (*now_ns)(const struct dvx_ht *t);
	int (*recover)(struct dvx_ht *t, uint32_t channel, uint64_t timeout_ns);
};

/**
 * struct dvx_ht - a transport to one peer as algorithms see it. A backend embeds it
 * and fills it at init; callers read its fields and never write them.
 * @ops:	the backend
 * @priv:	the backend's
 * @peer:	the peer's rank
 * @mode:	enum dvx_ht_mode (fixed for the transport's life)
 * @nchannels:	channels (1 ... DVX_HT_MAX_CHANNELS)
 * @max_ctrl:	largest control message, bytes
 * @max_chunk:	largest chunk, bytes (copy-based: the staging slot)
 * @depth:	copy-based: staging slots per channel; zero-copy: 0
 * @live:	DVX_LIVE while the transport is alive
 */
struct dvx_ht {
	const struct dvx_ht_ops *ops;
	void *priv;
	int32_t peer;
	uint32_t mode;
	uint32_t nchannels;
	uint32_t max_ctrl;
	uint64_t max_chunk;
	uint32_t depth;
	uint32_t live;
};

/**
 * dvx_ht_req_done() - complete a request (for backends).
 * @req:	a busy request
 * @err:	0 or the error that hit it
 * @bytes:	bytes moved
 * Context: the transport's thread. Return: nothing.
 */
static inline void dvx_ht_req_done(struct dvx_ht_req *req, int err, uint64_t bytes)
{
	req->err = err;
	req->bytes = bytes;
	req->next = NULL;
	req->state = DVX_HT_RS_DONE;
}

/**
 * dvx_ht_desc_pack() - write a buffer's description in its wire layout (for
 * backends: what their export_buf produces).
 * @d:		filled
 * @addr:	the address the peer names byte 0 by
 * @len:	bytes
 * @key:	the remote key
 * Context: any. Return: nothing.
 */
void dvx_ht_desc_pack(struct dvx_ht_desc *d, uint64_t addr, uint64_t len, uint32_t key);

/**
 * dvx_ht_desc_unpack() - check a description and decode it (for backends: what
 * their import_buf does).
 * @d:		the 32 bytes received
 * @r:		filled on success
 * Context: any. Return: 0; -EBADMSG (not a description: magic, zero length, reserved
 * bits), @r untouched.
 */
int dvx_ht_desc_unpack(const struct dvx_ht_desc *d, struct dvx_ht_rbuf *r);

/**
 * dvx_ht_send_ctrl() - send a control message on channel 0.
 * @t:		a transport
 * @buf:	@len bytes (NULL when 0); the IB backend copies them before it returns
 * @len:	0 ... t->max_ctrl
 * @req:	caller storage for the request (not busy)
 *
 * Control messages arrive in the order they were sent, matched in order with the
 * peer's dvx_ht_recv_ctrl() calls. Context: the transport's thread. Return: 0; -EINVAL;
 * -EBUSY (@req is busy); -EMSGSIZE (@len above max_ctrl); -ENOTCONN; -EAGAIN (every
 * control slot in flight); the failed channel 0's or transport's error.
 */
int dvx_ht_send_ctrl(struct dvx_ht *t, const void *buf, size_t len, struct dvx_ht_req *req);

/**
 * dvx_ht_recv_ctrl() - receive the next control message.
 * @t:		a transport
 * @buf:	where it goes; the caller's until the request is done
 * @len:	room in @buf (a longer message fails this request with -EMSGSIZE and is
 *		dropped)
 * @req:	caller storage for the request; done with req->bytes = the message's size
 *
 * Context: the transport's thread. Return: as dvx_ht_send_ctrl() (no -EMSGSIZE, no
 * -EAGAIN).
 */
int dvx_ht_recv_ctrl(struct dvx_ht *t, void *buf, size_t len, struct dvx_ht_req *req);

/**
 * dvx_ht_send_chunk() - send one chunk on @c->channel.
 * @t:		a transport
 * @c:		the chunk (read during the call); zero-copy: @c->buf must stay unchanged
 *		until the request is done; copy-based: it is read by the prepare step,
 *		at the latest before the request is done
 * @req:	caller storage for the request; done once the bytes are in the peer's
 *		memory (its buffer, or its staging slot)
 *
 * Context: the transport's thread. Return: 0; -EINVAL (bad chunk: channel, a zero
 * length, zero-copy without @c->mr or @c->remote or outside either, copy-based with
 * a @c->remote); -EBUSY; -EMSGSIZE (@c->len above max_chunk); -ENOTCONN; -EAGAIN (no
 * slot or ring room on the channel now: dvx_ht_ready() says when); the channel's
 * error.
 */
int dvx_ht_send_chunk(struct dvx_ht *t, const struct dvx_ht_chunk *c, struct dvx_ht_req *req);

/**
 * dvx_ht_recv_chunk() - expect the next chunk of @c->channel.
 * @t:		a transport
 * @c:		channel, buffer and room (read during the call); copy-based: @c->buf
 *		is the caller's until the request is done
 * @req:	caller storage; done when the chunk landed (zero-copy: in the exported
 *		buffer, where the sender put it; copy-based: copied to @c->buf), with
 *		req->bytes its size
 *
 * The n-th receive of a channel takes the n-th chunk the peer sent on it. Zero-copy:
 * every chunk the peer sends needs a receive issued here (issued early is fine).
 * Context: the transport's thread. Return: 0; -EINVAL; -EBUSY; -ENOTCONN; the
 * channel's error.
 */
int dvx_ht_recv_chunk(struct dvx_ht *t, const struct dvx_ht_chunk *c, struct dvx_ht_req *req);

/**
 * dvx_ht_test() - progress the request's transport once and say whether it is done.
 * @req:	an issued request
 * @done:	1 when done, else 0
 *
 * Context: the transport's thread. Return: 0 while not done; when done, the request's
 * result (0 or its error, also in req->err; asking again gives the same answer);
 * -EINVAL (never issued, or @done NULL; *@done untouched).
 */
int dvx_ht_test(struct dvx_ht_req *req, int *done);

/**
 * dvx_ht_wait() - progress until the request is done or @timeout_ns passed.
 * @req:	an issued request
 * @timeout_ns:	relative, on the transport's clock
 *
 * Context: the transport's thread; spins. Return: the request's result once done;
 * -ETIMEDOUT (still in flight, state unchanged: wait again or test later); -EINVAL.
 */
int dvx_ht_wait(struct dvx_ht_req *req, uint64_t timeout_ns);

/**
 * dvx_ht_progress() - move what can move: the handshake, completions, staging.
 * @t:		a transport
 * Context: the transport's thread. Return: 0; -EINVAL; the transport's error once it
 * failed as a whole (its handshake).
 */
int dvx_ht_progress(struct dvx_ht *t);

/**
 * dvx_ht_connected() - whether the handshake has finished (a pure read).
 * @t:		a transport
 * Context: any time between calls on it. Return: true once connected; false before,
 * and for a transport that failed or is not live.
 */
int dvx_ht_connected(const struct dvx_ht *t);

/**
 * dvx_ht_wait_connected() - progress until the handshake has finished.
 * @t:		a transport
 * @timeout_ns:	relative, on the transport's clock
 *
 * Both ends must make progress for the handshake to finish; the per-peer cache's
 * transports also answer peers that have not been asked for yet (docs/ht.md).
 * Context: the transport's thread; spins. Return: 0; -ETIMEDOUT (still connecting:
 * call again); -EINVAL; the transport's error.
 */
int dvx_ht_wait_connected(struct dvx_ht *t, uint64_t timeout_ns);

/**
 * dvx_ht_ready() - whether a chunk could be issued on (@channel, @dir) now (a pure
 * read): connected, the channel healthy, and (send) a free staging slot or ring room.
 * @t:		a transport
 * @channel:	0 ... nchannels - 1
 * @dir:	enum dvx_ht_dir
 * Context: any time between calls on it. Return: true or false (false for bad
 * arguments).
 */
int dvx_ht_ready(const struct dvx_ht *t, uint32_t channel, uint32_t dir);

/**
 * dvx_ht_status() - what failed the transport or one of its channels.
 * @t:		a transport
 * @channel:	a channel, or -1 for the transport as a whole (its handshake)
 * Context: any time between calls on it. Return: 0 (healthy), the error that failed
 * it, or -EINVAL (bad arguments).
 */
int dvx_ht_status(const struct dvx_ht *t, int32_t channel);

/**
 * dvx_ht_recover() - bring a failed channel back: both ends reset and reconnect it.
 * @t:		a connected transport
 * @channel:	the channel (0 ... nchannels - 1)
 * @timeout_ns:	how long to wait for the peer and for the channel to drain
 * Pairwise: both ends call it for the same channel (calls on several channels in an
 * order both ends agree on). The ends meet over the transport's bootstrap and tell
 * each other whether their end failed (its error, or its QP out of RTS as the device
 * reports it). If neither did, both return 0 and nothing changes. Otherwise each end
 * fails its channel (an end that had not failed with the peer's error, -ECONNRESET if
 * the peer gave none), moves its QP to ERR, takes completions until nothing of the
 * channel is outstanding (every request issued on it done, most with an error), says
 * so and waits for the peer to say so; then resets the QP and reconnects it (ERR ->
 * RST -> INIT -> RTR -> RTS), posts its receives and waits for the peer's. The channel
 * starts anew at both ends: sequences from 0, copy-based slots free, and chunks or
 * (channel 0) control messages that had landed with no receive to take them dropped
 * (counted). Work in flight is lost, though some of it may have landed: the caller's
 * protocol redoes what matters. Blocks; the NIC progresses meanwhile, other channels
 * of @t and other transports do not.
 * Context: the transport's thread (which also owns the bootstrap's tag: nothing else
 * receives on it once connected). Return: 0 (the channel healthy at this end, its QP
 * in RTS as the device reports it); -EAGAIN (reset, but the channel failed again
 * before the call could return, or the device reports its QP out of RTS: it is failed,
 * -EIO where it has no error of its own; call again on both ends); -ETIMEDOUT (the
 * peer did not answer or the drain did not finish: the channel stays failed, or
 * untouched if it was healthy; call again on both ends); -ENOTCONN (the handshake has
 * not finished); the transport's error (its handshake failed); -EINVAL (bad
 * arguments); -EOPNOTSUPP (a backend without recovery); a command's or the
 * bootstrap's error (the channel stays failed). Never 0 for a channel that is not
 * usable.
 */
int dvx_ht_recover(struct dvx_ht *t, uint32_t channel, uint64_t timeout_ns);

/**
 * dvx_ht_export() - describe a receive buffer for the peer (zero-copy mode): send the
 * description as a control message; the peer imports it and names it in its chunks.
 * @t:		a transport
 * @buf:	the buffer (caller's; it must stay registered while the peer may write)
 * @len:	its bytes (> 0)
 * @mr:		its registration on the transport's NIC, with remote write access
 * @d:		filled
 * Context: the transport's thread. Return: 0; -EINVAL (bad arguments, @buf outside
 * @mr, @mr without remote write); -EOPNOTSUPP (a backend or mode without it).
 */
int dvx_ht_export(struct dvx_ht *t, void *buf, uint64_t len, const struct dvx_mr *mr,
		  struct dvx_ht_desc *d);

/**
 * dvx_ht_import() - check and decode a peer's dvx_ht_export() description.
 * @t:		a transport
 * @d:		the 32 bytes the peer sent
 * @r:		filled (CPU order)
 * Context: the transport's thread. Return: 0; -EINVAL (NULL); -EBADMSG (not a
 * description: magic, zero length, reserved bits); -EOPNOTSUPP.
 */
int dvx_ht_import(struct dvx_ht *t, const struct dvx_ht_desc *d, struct dvx_ht_rbuf *r);

DVX_END_DECLS

#endif /* DVX_HT_HT_H */
