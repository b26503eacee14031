/* SPDX-License-Identifier: MIT */
/*
 * dvx/bootstrap/bootstrap.h - out-of-band exchange between the ranks of a job.
 *
 * A bootstrap context (struct dvx_bootstrap, in caller storage) is one rank's view of a
 * group of @nranks ranks. It offers allgather, barrier, tagged point-to-point messages,
 * duplicates with their own tag space and subgroups (a context over some of the ranks
 * of another, dvx_bootstrap_sub_init()). Two adapters create contexts: ranks as
 * threads of one process (a struct dvx_bootstrap_tgroup) and ranks as processes joined by
 * sockets (UNIX stream sockets on one host, TCP across hosts). See docs/bootstrap.md.
 *
 * Rules common to every call:
 *  - 0 or a negative errno. Bad arguments are -EINVAL and change nothing.
 *  - Every call takes a relative timeout in nanoseconds and returns -ETIMEDOUT when it
 *    expires. A timed-out call that moved no data has no effect. A timed-out call that
 *    had already moved part of its data (an allgather or barrier in progress, a message
 *    partly written or read) stays pending on its context: its buffers must stay valid,
 *    repeating the same call with the same arguments finishes it, and any other call on
 *    that context returns -EBUSY until then (dvx_bootstrap_fini() cancels it).
 *  - -ECONNRESET means a rank the call needs has left the group, died, closed its
 *    connection or was aborted; it is final for that rank. Collectives need every rank.
 *    Messages a rank sent before it went away can still be received.
 *  - -EMSGSIZE: recv's length differs from the matched message's; that message is
 *    consumed and dropped. Sockets: a send or recv longer than the context's largest
 *    message (struct dvx_bootstrap_sock_cfg.max_msg_bytes); nothing moved.
 *  - -ENOBUFS: a message that the call does not want sits in front of the one it waits
 *    for and there is no unexpected-message slot to hold it (receive it first, or give
 *    the context more slots).
 *  - -EBUSY: a timed-out call is pending on this context (see above).
 *  - -EPROTO: a peer sent bytes that are not dvx bootstrap frames, or a frame that breaks
 *    their bounds (a payload above the context's largest message, unknown flags);
 *    that peer is failed for good.
 *
 * Ordering: messages from one rank with the same tag in the same tag space are received
 * in the order they were sent. Tags may be received out of order as long as the
 * messages that are skipped fit in the unexpected-message store.
 *
 * Context: one thread at a time per context. A context and its duplicates may be used
 * by different threads: the threads adapter serialises them on its group lock and
 * releases it while waiting; the sockets adapter holds its lock for a call's duration,
 * so a blocking call on one duplicate delays the others (at most by its timeout).
 */
#ifndef DVX_BOOTSTRAP_H
#define DVX_BOOTSTRAP_H

#include <dvx/compiler.h>
#include <dvx/diag.h>

#include <stdbool.h>

DVX_BEGIN_DECLS

struct dvx_bootstrap;
struct dvx_hal;

/**
 * struct dvx_bootstrap_req - one posted send or receive, kept inside a context.
 * @opaque:	adapter-owned state; never touched by callers
 */
struct dvx_bootstrap_req {
	uint64_t opaque[10];
};

/* Request states (for adapters). */
enum {
	DVX_BOOTSTRAP_REQ_IDLE = 0,	/* not posted */
	DVX_BOOTSTRAP_REQ_QUEUED,	/* posted, no byte moved */
	DVX_BOOTSTRAP_REQ_ACTIVE,	/* posted, some bytes moved: cannot be cancelled cleanly */
	DVX_BOOTSTRAP_REQ_DONE,		/* finished (with the error in the request, if any) */
};

/**
 * struct dvx_bootstrap_ops - what an adapter provides. The public calls below build
 * send, recv, allgather and barrier from these primitives; callers never use them.
 * @post_send:	start sending @len bytes of @buf to @peer in tag space @space with @tag;
 *		never blocks; the request finishes later in @wait
 * @post_recv:	post a receive of exactly @len bytes from @peer with (@space, @tag)
 * @wait:	progress until every request in @reqs is DONE, one failed, or the absolute
 *		@deadline_ns (on the @now_ns clock) passed (-ETIMEDOUT); @all_ranks: fail
 *		with -ECONNRESET as soon as any rank of the group is gone
 * @cancel:	take a request back: 0 if it was withdrawn before any byte moved, 1 if it
 *		had already finished, -EBUSY if it is part-done (then @force withdraws it
 *		anyway and breaks the connection it used)
 * @new_space:	hand out the next tag space number for a duplicate
 * @get:	take a reference on the shared state (a new duplicate)
 * @put:	drop a reference; the last one releases the adapter's resources
 * @now_ns:	the clock deadlines are measured with, in nanoseconds from any origin
 *		(the sockets adapter's hal clock); NULL for CLOCK_MONOTONIC
 */
struct dvx_bootstrap_ops {
	int (*post_send)(struct dvx_bootstrap *bs, struct dvx_bootstrap_req *req, int peer,
			 uint32_t space, uint32_t tag, const void *buf, size_t len);
	int (*post_recv)(struct dvx_bootstrap *bs, struct dvx_bootstrap_req *req, int peer,
			 uint32_t space, uint32_t tag, void *buf, size_t len);
	int (*wait)(struct dvx_bootstrap *bs, struct dvx_bootstrap_req *const *reqs, int nreqs,
		    uint64_t deadline_ns, int all_ranks);
	int (*cancel)(struct dvx_bootstrap *bs, struct dvx_bootstrap_req *req, int force);
	uint32_t (*new_space)(struct dvx_bootstrap *bs);
	void (*get)(struct dvx_bootstrap *bs);
	void (*put)(struct dvx_bootstrap *bs);
	uint64_t (*now_ns)(struct dvx_bootstrap *bs);
};

/**
 * struct dvx_bootstrap - one rank's context (or a duplicate of it), in caller storage.
 * @ops:	the adapter's primitives
 * @priv:	the adapter's shared state (caller storage given to the adapter)
 * @rank:	this rank, 0..nranks-1
 * @nranks:	ranks in the group
 * @space:	tag space: 0 for the context an adapter created, 1, 2, ... for duplicates
 *		and subgroups
 *
 * The remaining members are private to dvx.
 */
struct dvx_bootstrap {
	const struct dvx_bootstrap_ops *ops;
	void *priv;
	int32_t rank;
	int32_t nranks;
	uint32_t space;
	uint32_t coll_seq;	/* collectives completed on this context */
	uint32_t pend;		/* enum of the pending (timed-out, part-done) call, 0 if none */
	uint32_t coll_step;
	uint32_t coll_flags;
	int32_t pend_peer;
	uint32_t pend_tag;
	uint32_t magic;
	const void *pend_in;
	void *pend_out;
	uint64_t pend_len;
	struct dvx_bootstrap_req req[2];	/* [0] send, [1] receive */
};

/* Tag spaces with this bit set are dvx's own (collectives); duplicates never get one. */
#define DVX_BOOTSTRAP_SPACE_INTERNAL 0x80000000u

/** dvx_bootstrap_rank() - this context's rank. */
static inline int dvx_bootstrap_rank(const struct dvx_bootstrap *bs) { return bs->rank; }
/** dvx_bootstrap_nranks() - ranks in this context's group. */
static inline int dvx_bootstrap_nranks(const struct dvx_bootstrap *bs) { return bs->nranks; }

/**
 * dvx_bootstrap_allgather() - every rank contributes @len bytes; all get every block.
 * @bs:		context
 * @in:		this rank's @len bytes (may lie inside @out at rank * @len)
 * @out:	nranks * @len bytes; block r holds rank r's input on return
 * @len:	bytes per rank, > 0, the same on every rank
 * @timeout_ns:	relative timeout
 *
 * Context: blocks. Runs as a ring (nranks - 1 steps of one message each).
 * Return: 0; -EINVAL; -ETIMEDOUT (pending, see the header comment); -ECONNRESET if any
 * rank is gone; -EBUSY; -EMSGSIZE if ranks disagree on @len; -ENOBUFS.
 */
int dvx_bootstrap_allgather(struct dvx_bootstrap *bs, const void *in, void *out, size_t len,
			    uint64_t timeout_ns);

/**
 * dvx_bootstrap_barrier() - return once every rank of the group has entered the barrier.
 * @bs:		context
 * @timeout_ns:	relative timeout; on -ETIMEDOUT calling it again resumes the same barrier
 *
 * Return: 0, -EINVAL, -ETIMEDOUT, -ECONNRESET, -EBUSY, -ENOBUFS.
 */
int dvx_bootstrap_barrier(struct dvx_bootstrap *bs, uint64_t timeout_ns);

/**
 * dvx_bootstrap_send() - send one message to @peer.
 * @bs:		context
 * @peer:	destination rank, not this rank
 * @tag:	any 32-bit value; matched with the receiver's tag in this context's space
 * @buf:	@len bytes, read during the call only (unless it times out part-done)
 * @len:	0 or more bytes (@buf may be NULL when 0)
 * @timeout_ns:	relative timeout
 *
 * Context: blocks until the message is handed over (to the peer's mailbox or the socket),
 * not until the peer received it.
 * Return: 0, -EINVAL, -ETIMEDOUT, -ECONNRESET, -EBUSY; sockets: -EMSGSIZE (@len above
 * the largest message), -EPROTO (the peer was failed for a bad frame).
 */
int dvx_bootstrap_send(struct dvx_bootstrap *bs, int peer, uint32_t tag, const void *buf,
		       size_t len, uint64_t timeout_ns);

/**
 * dvx_bootstrap_recv() - receive the oldest message from @peer with @tag.
 * @bs:		context
 * @peer:	source rank, not this rank
 * @tag:	tag to match in this context's space
 * @buf:	@len bytes written with the message
 * @len:	the message's exact length
 * @timeout_ns:	relative timeout
 *
 * Return: 0, -EINVAL, -ETIMEDOUT, -ECONNRESET (nothing buffered from a departed peer),
 * -EMSGSIZE (length mismatch, message dropped; sockets: @len above the largest message),
 * -ENOBUFS, -EBUSY; sockets: -EPROTO (the peer sent a frame that breaks the bounds and
 * was failed for good).
 */
int dvx_bootstrap_recv(struct dvx_bootstrap *bs, int peer, uint32_t tag, void *buf, size_t len,
		       uint64_t timeout_ns);

/**
 * dvx_bootstrap_dup() - a duplicate context with its own tag space.
 * @bs:		context to duplicate (an original or a duplicate)
 * @out:	caller storage for the duplicate
 *
 * The duplicate shares @bs's connections and unexpected-message store, but its messages
 * and collectives never match @bs's (or any other duplicate's). No communication: every
 * rank must create its duplicates in the same order so that they get the same space.
 * Each context must be finished with dvx_bootstrap_fini(); the adapter's resources are
 * released with the last of them.
 *
 * Return: 0, -EINVAL, -EBUSY (@bs has a pending call), -ENOSPC (spaces exhausted).
 */
int dvx_bootstrap_dup(struct dvx_bootstrap *bs, struct dvx_bootstrap *out);

/**
 * dvx_bootstrap_fini() - finish a context; cancels its pending call.
 * @bs:		context
 *
 * When the last context of a rank goes (the original and all duplicates), the rank
 * leaves: the threads adapter marks it gone for the other ranks, the sockets adapter
 * closes its connections. Other ranks then get -ECONNRESET for calls that need it.
 *
 * Return: 0; -EINVAL when @bs is NULL or not a live context (already finished, never
 * made), and nothing is done.
 */
int dvx_bootstrap_fini(struct dvx_bootstrap *bs);

/* ----------------------------------------------------------------------------------
 * Subgroups: a context over some of the ranks of another (e.g. the ranks of one host's
 * NVLink domain), with its own tag space and local ranks 0..nranks-1.
 */

/**
 * struct dvx_bootstrap_sub - caller storage shared by a subgroup context and its duplicates.
 * @dup:	a duplicate of the parent: the subgroup's tag space, and its hold on the
 *		parent's connections
 * @ranks:	the caller's map: local rank i is the parent's rank @ranks[i]
 * @nranks:	entries in @ranks
 * @refs:	subgroup contexts (the one dvx_bootstrap_sub_init() made and its
 *		duplicates) not finished yet
 * @magic:	set while @refs > 0
 * @reserved:	zero
 *
 * Every member is private to dvx. The storage must stay in place and untouched from
 * dvx_bootstrap_sub_init() until the last of those contexts is finished; then it is the
 * caller's again.
 */
struct dvx_bootstrap_sub {
	struct dvx_bootstrap dup;
	const int32_t *ranks;
	int32_t nranks;
	int32_t refs;
	uint32_t magic;
	uint32_t reserved;
};

/**
 * dvx_bootstrap_sub_init() - a context over a subset of @parent's ranks.
 * @sub:	caller storage for the subgroup context
 * @st:		caller storage that @sub and its duplicates share (struct dvx_bootstrap_sub)
 * @parent:	a context of this rank: an adapter's, a duplicate or another subgroup
 * @ranks:	the subgroup's ranks in @parent, strictly increasing, each
 *		0..dvx_bootstrap_nranks(@parent) - 1, @parent's own rank among them. Caller
 *		memory, read (not copied) until @sub and all its duplicates are finished
 * @nranks:	entries in @ranks, >= 1
 *
 * @sub's rank is the position of @parent's rank in @ranks, its group size @nranks; every
 * call (allgather, barrier, send, recv, dup, fini) works on it as on any context, with
 * local ranks, and its messages and collectives never match another context's. No
 * communication: like dvx_bootstrap_dup(), it takes the next tag space of this rank (it
 * keeps a duplicate of @parent in @st), so every member must create its subgroups and
 * duplicates in the same order; ranks outside @ranks do not call it. As every context
 * of a rank draws from one count, ranks that share a context later must have drawn as
 * many spaces before it (docs/bootstrap.md, Subgroups). @parent and @sub
 * may be finished in either order; the rank leaves its group only when its last
 * context, subgroups and their duplicates included, is finished.
 *
 * Errors are those of any context. One difference: a collective on @sub that has to
 * wait fails with -ECONNRESET once any rank of the adapter's whole group is found
 * failed (aborted, died), a member or not, as the adapters check every rank (stricter
 * than needed). A rank outside the subgroup that leaves cleanly does not disturb it,
 * and neither do failed non-members disturb send and recv.
 *
 * Return: 0; -EINVAL (a NULL pointer, a finished @parent, @sub aliasing @parent or @st,
 * @st in use by @parent, @nranks out of range, @ranks not strictly increasing, out of
 * range or without @parent's rank); -EBUSY (@parent has a pending call); -ENOSPC (tag
 * spaces exhausted). On error nothing changed.
 */
int dvx_bootstrap_sub_init(struct dvx_bootstrap *sub, struct dvx_bootstrap_sub *st,
			   struct dvx_bootstrap *parent, const int32_t *ranks, int nranks);

/**
 * dvx_bootstrap_sub_global() - the parent's rank of a subgroup's local rank.
 * @sub:	a subgroup context or a duplicate of one
 * @local:	0..dvx_bootstrap_nranks(@sub) - 1
 *
 * Context: any thread; no lock, O(1).
 * Return: the rank in the parent the subgroup was made from (for a subgroup of a
 * subgroup, that subgroup's local rank), or -1 if @local is out of range or @sub is
 * not a live subgroup context.
 */
int dvx_bootstrap_sub_global(const struct dvx_bootstrap *sub, int local);

/**
 * dvx_bootstrap_sub_local() - a subgroup's local rank of a parent's rank.
 * @sub:	a subgroup context or a duplicate of one
 * @global:	a rank of the parent the subgroup was made from
 *
 * Context: any thread; no lock, O(log nranks) (a binary search of the map, no memory
 * of its own).
 * Return: the local rank, or -1 if @global is not a member or @sub is not a live
 * subgroup context.
 */
int dvx_bootstrap_sub_local(const struct dvx_bootstrap *sub, int global);

/* ----------------------------------------------------------------------------------
 * Adapter 1: ranks as threads of one process.
 */

struct dvx_bootstrap_tgroup;

/**
 * struct dvx_bootstrap_tgroup_cfg - shape of a thread group.
 * @nranks:	ranks (threads), 1..DVX_BOOTSTRAP_MAX_RANKS
 * @max_unexpected: mailbox slots per rank: messages a rank can hold before it receives
 *		them (a send that finds no slot waits for the receiver instead)
 * @slot_bytes:	largest message a slot holds (larger ones wait for the receiver)
 * @log:	optional log callback
 */
struct dvx_bootstrap_tgroup_cfg {
	int nranks;
	uint32_t max_unexpected;
	uint32_t slot_bytes;
	struct dvx_log log;
};

#define DVX_BOOTSTRAP_MAX_RANKS 4096
#define DVX_BOOTSTRAP_MAX_SLOTS 65536u
#define DVX_BOOTSTRAP_MAX_SLOT_BYTES (64u << 20)

/* Sizes of the internal records; the .c files assert that their structs fit. */
#define DVX_BOOTSTRAP_TGROUP_HDR_BYTES 256
#define DVX_BOOTSTRAP_TGROUP_RANK_BYTES 64
#define DVX_BOOTSTRAP_SLOT_BYTES 40

/* Bytes of caller memory a thread group needs (the same as dvx_bootstrap_tgroup_mem_size()). */
#define DVX_BOOTSTRAP_TGROUP_MEM_SIZE(nranks, max_unexpected, slot_bytes) \
	(DVX_BOOTSTRAP_TGROUP_HDR_BYTES + (size_t)(nranks) * DVX_BOOTSTRAP_TGROUP_RANK_BYTES + \
	 (size_t)(nranks) * (max_unexpected) * \
		 (DVX_BOOTSTRAP_SLOT_BYTES + (((size_t)(slot_bytes) + 7) & ~(size_t)7)))

/**
 * dvx_bootstrap_tgroup_mem_size() - caller memory for a thread group.
 * @nranks, @max_unexpected, @slot_bytes: as in struct dvx_bootstrap_tgroup_cfg
 * Return: bytes (8-byte aligned memory), or 0 if the arguments are out of range.
 */
size_t dvx_bootstrap_tgroup_mem_size(int nranks, uint32_t max_unexpected, uint32_t slot_bytes);

/**
 * dvx_bootstrap_tgroup_init() - create a thread group in caller memory.
 * @group:	set to the group (which lives at the start of @mem)
 * @attr:	shape
 * @mem:	8-byte aligned caller memory, owned by the group until
 *		dvx_bootstrap_tgroup_fini()
 * @mem_size:	at least dvx_bootstrap_tgroup_mem_size()
 *
 * Context: once, before the rank threads attach.
 * Return: 0, -EINVAL, or the error of pthread_mutex_init/pthread_cond_init.
 */
int dvx_bootstrap_tgroup_init(struct dvx_bootstrap_tgroup **group,
			      const struct dvx_bootstrap_tgroup_cfg *attr, void *mem,
			      size_t mem_size);

/**
 * dvx_bootstrap_tgroup_fini() - destroy a thread group.
 * @group:	group whose ranks have all left (dvx_bootstrap_fini() of every context)
 * Return: 0, -EINVAL, -EBUSY if a rank is still attached (nothing changed).
 */
int dvx_bootstrap_tgroup_fini(struct dvx_bootstrap_tgroup *group);

/**
 * dvx_bootstrap_tgroup_abort() - mark a rank (or every rank) failed.
 * @group:	group
 * @rank:	the rank, or -1 for the whole group
 *
 * Context: any thread. Every call that needs an aborted rank, including the aborted
 * rank's own calls, returns -ECONNRESET promptly. Contexts must still be finished.
 */
void dvx_bootstrap_tgroup_abort(struct dvx_bootstrap_tgroup *group, int rank);

/**
 * dvx_bootstrap_thread_init() - attach the calling thread to @group as @rank.
 * @bs:		caller storage for the context
 * @group:	group from dvx_bootstrap_tgroup_init()
 * @rank:	0..nranks-1, not attached before
 *
 * No wait: ranks attach in any order; a call that needs a rank that has not attached
 * yet waits for it (within its timeout).
 * Return: 0, -EINVAL, -EBUSY (rank already attached or gone).
 */
int dvx_bootstrap_thread_init(struct dvx_bootstrap *bs, struct dvx_bootstrap_tgroup *group,
			      int rank);

/* ----------------------------------------------------------------------------------
 * Adapter 2: ranks as processes, over UNIX stream sockets or TCP.
 */

/**
 * struct dvx_bootstrap_sock_stats - what a rank's set-up let in and turned away.
 * @admitted:	connections that proved themselves and were let in (the HELLOs at rank
 *		0, the PEER connections of higher ranks at the others)
 * @refused:	connections closed without being let in, whatever the reason: the sum
 *		of the five counts below
 * @refused_auth: a proof that did not verify: no secret, another secret, or an answer
 *		to another challenge (a replay)
 * @refused_proto: a record that is not one of this job's set-up: another magic or
 *		version, type, nranks, a rank out of range or not one that connects here,
 *		a bad listening address
 * @refused_slow: no complete record within DVX_BOOTSTRAP_SOCK_HANDSHAKE_NS of being
 *		accepted (a connection that stays silent or trickles)
 * @refused_hangup: closed or reset by the other end before it was through
 * @refused_late: still unfinished when every rank this one waited for had come
 * @last_refusal: the errno that names the last refusal's reason: -EACCES (auth),
 *		-EPROTO, -ETIMEDOUT (slow), -ECONNRESET (hang-up), -ECANCELED (late); 0
 *		when nothing was refused
 */
struct dvx_bootstrap_sock_stats {
	uint32_t admitted;
	uint32_t refused;
	uint32_t refused_auth;
	uint32_t refused_proto;
	uint32_t refused_slow;
	uint32_t refused_hangup;
	uint32_t refused_late;
	int32_t last_refusal;
};

/* The environment variable a rank takes its secret from when the attr gives none. */
#define DVX_BOOTSTRAP_SECRET_ENV "DVX_BOOTSTRAP_SECRET"
/* The longest secret, from the attr or the environment. */
#define DVX_BOOTSTRAP_SECRET_MAX 1024u
/* struct dvx_bootstrap_sock_cfg.flags: fail (-EINVAL) rather than run in the open mode
 * when neither the attr nor the environment gives a secret. */
#define DVX_BOOTSTRAP_SOCK_F_NEED_SECRET 0x1u
/* The largest message when struct dvx_bootstrap_sock_cfg.max_msg_bytes is 0 (1 GiB), and
 * the most it may be set to (1 TiB). */
#define DVX_BOOTSTRAP_SOCK_MAX_MSG_DEFAULT (1ull << 30)
#define DVX_BOOTSTRAP_SOCK_MAX_MSG_LIMIT (1ull << 40)
/* How long an accepted set-up connection has to prove itself (2 s; less when the set-up's
 * own deadline comes first). */
#define DVX_BOOTSTRAP_SOCK_HANDSHAKE_NS 2000000000ull

/**
 * struct dvx_bootstrap_sock_cfg - how a rank joins a socket group.
 * @addr:	rendezvous address, the same on every rank: "unix:/path/to/socket" (rank 0
 *		creates it; it must not exist) or "tcp:A.B.C.D:PORT" / "tcp:[v6]:PORT"
 *		(numeric only, PORT 1..65535; rank 0 listens there)
 * @rank:	0..nranks-1
 * @nranks:	1..DVX_BOOTSTRAP_MAX_RANKS
 * @max_unexpected: messages that can be held before they are received (shared by
 *		every peer and duplicate of this rank)
 * @slot_bytes:	largest message an unexpected slot holds
 * @timeout_ns:	bound on dvx_bootstrap_sock_init(), rendezvous and full mesh included
 * @log:	optional log callback
 * @hal:	the backend whose sockets, clock, sleep and random bytes this rank uses,
 *		for as long as the context lives (dvx/hal/hal.h: its host table's sock_*
 *		entries, sleep_ns, now_ns and random_bytes); NULL for dvx_hal_host(). Tests
 *		pass a mock here to fail any of its calls.
 * @secret:	the job's secret: @secret_len bytes of caller memory, read during
 *		dvx_bootstrap_sock_init() only and not kept; every rank must have the same.
 *		Every set-up connection proves both ends know it (an HMAC-SHA-256 answer to
 *		a random challenge; the secret itself never travels) and a connection that
 *		does not is refused. Ignored when @secret_len is 0
 * @secret_len:	bytes at @secret, 0..DVX_BOOTSTRAP_SECRET_MAX. 0: the bytes of the
 *		environment variable DVX_BOOTSTRAP_SECRET if it is set and not empty, else
 *		no secret: the open mode, in which whoever reaches an address of the set-up
 *		and speaks its protocol is let in (docs/bootstrap.md)
 * @flags:	DVX_BOOTSTRAP_SOCK_F_NEED_SECRET or 0
 * @reserved:	zero
 * @max_msg_bytes: the largest message this rank sends or accepts, the same on every
 *		rank; 0 for DVX_BOOTSTRAP_SOCK_MAX_MSG_DEFAULT, at most
 *		DVX_BOOTSTRAP_SOCK_MAX_MSG_LIMIT. A peer whose frame announces more is
 *		failed (-EPROTO) without a byte of it being read
 * @stats:	optional caller storage that dvx_bootstrap_sock_init() fills before it
 *		returns from a set-up, whether it succeeded or failed (not when it refuses
 *		its arguments): what the set-up let in and refused
 */
struct dvx_bootstrap_sock_cfg {
	const char *addr;
	int rank;
	int nranks;
	uint32_t max_unexpected;
	uint32_t slot_bytes;
	uint64_t timeout_ns;
	struct dvx_log log;
	const struct dvx_hal *hal;
	const void *secret;
	size_t secret_len;
	uint32_t flags;
	uint32_t reserved;
	uint64_t max_msg_bytes;
	struct dvx_bootstrap_sock_stats *stats;
};

#define DVX_BOOTSTRAP_SOCK_HDR_BYTES 512
#define DVX_BOOTSTRAP_SOCK_PEER_BYTES 256
#define DVX_BOOTSTRAP_SOCK_ADDR_BYTES 128
/* Handshakes served side by side during set-up, and the bytes of each one's record. */
#define DVX_BOOTSTRAP_SOCK_HS_SLOTS 16
#define DVX_BOOTSTRAP_SOCK_HS_BYTES 384

/* Bytes of caller memory a socket context needs (the same as dvx_bootstrap_sock_mem_size()). */
#define DVX_BOOTSTRAP_SOCK_MEM_SIZE(nranks, max_unexpected, slot_bytes) \
	(DVX_BOOTSTRAP_SOCK_HDR_BYTES + \
	 DVX_BOOTSTRAP_SOCK_HS_SLOTS * DVX_BOOTSTRAP_SOCK_HS_BYTES + \
	 (size_t)(nranks) * (DVX_BOOTSTRAP_SOCK_PEER_BYTES + DVX_BOOTSTRAP_SOCK_ADDR_BYTES) + \
	 (size_t)(max_unexpected) * \
		 (DVX_BOOTSTRAP_SLOT_BYTES + (((size_t)(slot_bytes) + 7) & ~(size_t)7)))

/**
 * dvx_bootstrap_sock_mem_size() - caller memory for one rank's socket context.
 * Return: bytes (8-byte aligned memory), or 0 if the arguments are out of range.
 */
size_t dvx_bootstrap_sock_mem_size(int nranks, uint32_t max_unexpected, uint32_t slot_bytes);

/**
 * dvx_bootstrap_sock_init() - join a socket group: rendezvous, then a full mesh.
 * @bs:		caller storage for the context
 * @attr:	address, rank, limits, timeout, secret
 * @mem:	8-byte aligned caller memory, owned by the context (and its duplicates)
 *		until the last dvx_bootstrap_fini()
 * @mem_size:	at least dvx_bootstrap_sock_mem_size()
 *
 * Rank 0 listens at the address and sends every rank the table of listening addresses;
 * each rank r then connects to ranks 1..r-1 and accepts ranks r+1..nranks-1 (its link
 * to rank 0 is the rendezvous connection). Every connection starts with a handshake in
 * which both ends prove they know the job's secret (@attr->secret, or the environment's
 * DVX_BOOTSTRAP_SECRET; none: the open mode); the accepting side refuses a connection
 * that does not prove itself in time, counts it in @attr->stats, logs it and goes on
 * waiting for the rank it needs. Every read has the set-up's deadline. No listening
 * socket or socket file is left when it returns; the secret is not kept.
 * Context: blocks; never raises SIGPIPE; reads the environment (getenv) when
 * @attr->secret_len is 0.
 * Return: 0; -EINVAL (bad address or arguments, a secret longer than
 * DVX_BOOTSTRAP_SECRET_MAX, no secret with DVX_BOOTSTRAP_SOCK_F_NEED_SECRET);
 * -ETIMEDOUT (a rank never came, or never proved itself); -EACCES (this rank's proof
 * was refused, or the rank it connected to could not prove it knows the secret: the
 * secrets differ); -EADDRINUSE (rank 0's address is taken); -EPROTO (what answered at
 * rank 0's address or at a peer's is not a dvx set-up of this version, or has another
 * nranks, or a proven rank came twice); -ECONNRESET; -ENOSYS (@attr->hal has no sockets,
 * or no random bytes while a secret is used); other socket errors, as the hal returned
 * them. On failure every socket is closed, every socket file this rank made is removed
 * and @mem is free again.
 */
int dvx_bootstrap_sock_init(struct dvx_bootstrap *bs, const struct dvx_bootstrap_sock_cfg *attr,
			    void *mem, size_t mem_size);

/* ----------------------------------------------------------------------------------
 * Adapter 3: ranks as the processes of an MPI communicator (built with CONFIG_DVX_MPI;
 * without it dvx_bootstrap_mpi_init() answers -ENOSYS). This header does not include
 * <mpi.h>: the communicator is passed by address.
 */

/* struct dvx_bootstrap_mpi_cfg.flags: call MPI_Init_thread() (MPI_THREAD_SERIALIZED) if
 * MPI is not initialised yet, and MPI_Finalize() when the rank's last context is
 * finished; for programs that do not use MPI themselves (the tools under mpirun). */
#define DVX_BOOTSTRAP_MPI_F_INIT 0x1u

/**
 * struct dvx_bootstrap_mpi_cfg - how a rank joins through MPI.
 * @comm:	the address of the caller's MPI_Comm (read during init only); NULL for
 *		MPI_COMM_WORLD. Its ranks and size are the bootstrap's
 * @hal:	the backend whose clock (deadlines) and sleep (idle waits) the adapter uses;
 *		NULL for dvx_hal_host()
 * @log:	optional log callback (MPI's error strings are logged at DVX_LOG_ERR)
 * @flags:	DVX_BOOTSTRAP_MPI_F_INIT or 0
 * @reserved:	zero
 */
struct dvx_bootstrap_mpi_cfg {
	const void *comm;
	const struct dvx_hal *hal;
	struct dvx_log log;
	uint32_t flags;
	uint32_t reserved;
};

#define DVX_BOOTSTRAP_MPI_HDR_BYTES 256
/* Bytes of caller memory an MPI context needs (the same as dvx_bootstrap_mpi_mem_size()). */
#define DVX_BOOTSTRAP_MPI_MEM_SIZE(nranks) \
	(DVX_BOOTSTRAP_MPI_HDR_BYTES + (size_t)(nranks) * 8 + (((size_t)(nranks) + 63) / 64) * 8)

/**
 * dvx_bootstrap_mpi_mem_size() - caller memory for one rank's MPI context.
 * @nranks:	the communicator's size (MPI_Comm_size), 1..DVX_BOOTSTRAP_MAX_RANKS
 *
 * Return: bytes (8-byte aligned memory), or 0 if @nranks is out of range.
 */
size_t dvx_bootstrap_mpi_mem_size(int nranks);

/**
 * dvx_bootstrap_mpi_init() - a bootstrap context over an MPI communicator.
 * @bs:		caller storage for the context
 * @attr:	the communicator, clock, log and flags
 * @mem:	8-byte aligned caller memory, owned by the context (and its duplicates)
 *		until the last dvx_bootstrap_fini()
 * @mem_size:	at least dvx_bootstrap_mpi_mem_size() of the communicator's size
 *
 * Collective over the communicator: every rank calls it (MPI_Comm_dup twice, so that
 * the bootstrap's messages and collectives never match the application's on @comm).
 * MPI must be initialised (or @attr->flags has DVX_BOOTSTRAP_MPI_F_INIT) and not
 * finalised. The contexts then work as any other (docs/bootstrap.md, Adapter 3), with
 * these limits: a tag space holds tags below 2^(b - 8) where MPI_TAG_UB is 2^b - 1
 * (2^23 with Open MPI and MPICH; -EINVAL above), 255 duplicates and subgroups
 * (-ENOSPC), messages up to INT_MAX bytes (-EMSGSIZE). A process that dies is MPI's
 * business (the launcher usually ends the job); a rank that finishes its last context
 * tells the others, whose calls that need it then fail with -ECONNRESET.
 * Context: blocks (collective); one thread at a time per rank unless MPI runs with
 * MPI_THREAD_SERIALIZED or better (the adapter serialises its own calls on a lock).
 * Return: 0; -EINVAL (NULL pointers, reserved bits, memory too small or misaligned, MPI
 * not initialised or finalised); -ENOSYS (dvx built without CONFIG_DVX_MPI); an MPI
 * failure translated to a negative errno (-ENOMEM, -EINVAL, -EIO ...), its MPI error
 * class kept (dvx_bootstrap_mpi_error_class() cannot read it then: it is logged). On
 * failure every communicator it made is freed and @mem is free again.
 */
int dvx_bootstrap_mpi_init(struct dvx_bootstrap *bs, const struct dvx_bootstrap_mpi_cfg *attr,
			   void *mem, size_t mem_size);

/**
 * dvx_bootstrap_mpi_error_class() - the MPI error class of the last MPI failure.
 * @bs:		a live context of the MPI adapter (or a duplicate or subgroup of one)
 *
 * The calls translate an MPI error into a negative errno once; this keeps the vendor's
 * own code for the caller (MPI_Error_class() of the failed call's return).
 * Context: any thread; reads a word.
 * Return: the error class (> 0), 0 if no MPI call failed, -EINVAL if @bs is not a live
 * context of the MPI adapter.
 */
int dvx_bootstrap_mpi_error_class(const struct dvx_bootstrap *bs);

/**
 * dvx_bootstrap_mpi_launched() - whether this process was started by an MPI launcher.
 *
 * Looks for the variables mpirun / mpiexec / srun set for each process (Open MPI's
 * OMPI_COMM_WORLD_SIZE, PMIx's PMIX_RANK, PMI's PMI_SIZE and PMI_RANK); so a tool can
 * choose the MPI adapter without being told. Works without CONFIG_DVX_MPI.
 * Context: reads the environment (getenv).
 * Return: true if one of them is set.
 */
bool dvx_bootstrap_mpi_launched(void);

DVX_END_DECLS

#endif /* DVX_BOOTSTRAP_H */
