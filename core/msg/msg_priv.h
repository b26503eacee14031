/* SPDX-License-Identifier: MIT */
/*
 * core/msg/msg_priv.h - the messaging layer's internals (not installed): the state
 * region's tables, the wire encodings, and what the four files share. docs/msg.md.
 */
#ifndef DVX_CORE_MSG_PRIV_H
#define DVX_CORE_MSG_PRIV_H

#include <errno.h>
#include <string.h>

#include <dvx/msg/msg.h>
#include <dvx/nic/cq.h>
#include <dvx/nic/post.h>

#define MSG_ST_MAGIC 0x5453474du	/* "MGST" */
#define MSG_COMM_MAGIC 0x4d4d4f43u	/* "COMM" */
#define MSG_REQ_MAGIC 0x51455251u	/* "QREQ" */

/* communicator ids: 11 bits of table slot, 5 bits of generation */
#define MSG_ID_SLOT_BITS 11
#define MSG_ID_SLOT(id) ((uint32_t)(id) & ((1u << MSG_ID_SLOT_BITS) - 1))
#define MSG_ID_GEN(id) ((uint32_t)(id) >> MSG_ID_SLOT_BITS)
#define MSG_ID(slot, gen) ((uint16_t)(((gen) << MSG_ID_SLOT_BITS) | (slot)))
#define MSG_GEN_MASK 0x1fu

/*
 * wr_id: [63:48] the posting communicator's id, [47:40] kind, [39:32] the comm's QP
 * slot, [31:16] the slot's 16-bit epoch (every use of a table slot gets the next one),
 * [15:0] the request index (FIFO slot << 3 | buffer).
 */
enum msg_wr_kind {
	MSG_WR_DATA = 1,	/* sender: a chunk of a send (WRITE with immediate) */
	MSG_WR_NOTE = 2,	/* sender: a "larger than the receive" notice */
	MSG_WR_CTS = 3,		/* receiver: a clear-to-send WRITE */
	MSG_WR_RECV = 4,	/* receiver: a posted receive */
	MSG_WR_FLUSH = 5,	/* the flush QP's READ */
	MSG_WR_SPARE = 6,	/* a receive reposted for one a late message used up */
	MSG_WR_EAGER = 7,	/* sender, offload: an eager message (WRITE with immediate) */
	MSG_WR_RTS = 8,		/* sender, offload: a header alone (a rendezvous request or
				 * the close note) */
	MSG_WR_CREDIT = 9,	/* receiver, offload: a credit receive, or the credit word's
				 * WRITE */
};
#define MSG_WR(id, kind, slot, epoch, idx)                                             \
	(((uint64_t)(id) << 48) | ((uint64_t)(kind) << 40) | ((uint64_t)(slot) << 32) |  \
	 ((uint64_t)(uint16_t)(epoch) << 16) | (uint64_t)(idx))
#define MSG_WR_ID(w) ((uint32_t)((w) >> 48))
#define MSG_WR_KIND(w) ((uint32_t)((w) >> 40) & 0xffu)
#define MSG_WR_SLOT(w) ((uint32_t)((w) >> 32) & 0xffu)
#define MSG_WR_EPOCH(w) ((uint32_t)((w) >> 16) & 0xffffu)
#define MSG_WR_IDX(w) ((uint32_t)(w) & 0xffffu)

/*
 * Immediate: [31:30] kind (0 data, 1 "larger than the receive", 2 revoked: the sender
 * closed without sending into it), [29:16] the request
 * index (FIFO slot << 3 | buffer), [15:0] the receiver's communicator id.
 */
#define MSG_IMM_DATA 0u
#define MSG_IMM_TOOBIG 1u
#define MSG_IMM_REVOKED 2u	/* the sender closed without sending into this buffer */
#define MSG_IMM_EAGER 3u	/* offload: a message in eager ring slot [29:16] */
#define MSG_IMM(kind, idx, id) (((uint32_t)(kind) << 30) | ((uint32_t)(idx) << 16) | (uint32_t)(id))
#define MSG_IMM_KIND(i) ((uint32_t)(i) >> 30)
#define MSG_IMM_IDX(i) (((uint32_t)(i) >> 16) & 0x3fffu)
#define MSG_IMM_ID(i) ((uint32_t)(i) & 0xffffu)

/*
 * A clear-to-send entry (32 bytes, little-endian, written by the receiver into the
 * sender's FIFO; the sequence is the last field, and the sender trusts the other
 * fields only once the sequence of every entry of the slot is the expected one).
 */
struct msg_cts {
	uint64_t addr;
	uint32_t rkey;
	uint32_t size;		/* the buffer's size (at most 2^32 - 1) */
	uint32_t tag;
	uint16_t rcomm;		/* the receiver's communicator id */
	uint16_t scomm;		/* the sender's: an entry for another sender is not ours */
	uint16_t idx;		/* request index: FIFO slot << 3 | buffer */
	uint8_t nreqs;		/* buffers in this slot */
	uint8_t stripe;		/* [7:4] first QP slot, [3:0] QP slots used */
	uint16_t rsvd;		/* the sequence again: the second WRITE's source (irecv) */
	uint16_t seq;		/* (uint16_t)(seq_base + FIFO position + 1); an offload
				 * answer's: 1 + (seq_base + its sequence) % 65535 */
};
DVX_ASSERT_SIZE(struct msg_cts, 32);

/*
 * The close marker: a recv comm that closes writes it (one RDMA WRITE on the QP its
 * clear-to-sends take, so it lands after every one of them) into the entry that follows
 * the sender's FIFO. The sender then knows every buffer the receiver announced and
 * revokes those it will not fill.
 */
#define MSG_CLOSE_MAGIC 0x444c4353u	/* "SCLD" */
struct msg_close_mark {
	uint32_t magic;
	uint16_t rcomm;		/* the receiver's communicator id */
	uint16_t scomm;		/* the sender's */
	uint64_t head;		/* clear-to-sends the receiver wrote */
	uint8_t rsvd[16];
};

enum {
	MSG_TODO_MARK = 1,
	MSG_TODO_REVOKE = 2,
	MSG_TODO_MATCH = 4,	/* offload, recv: parked messages to match (no room before) */
	MSG_TODO_CREDIT = 8,	/* offload, recv: credits to post or write */
	MSG_TODO_NOTE = 16,	/* offload, send: the close note to send */
};

/*
 * Offload (DVX_MSG_F_CTS_OFFLOAD): the 16-byte header at the start of each eager ring
 * slot, little-endian, written by the sender with its payload in one WRITE with
 * immediate (docs/msg.md "CTS receiver offload").
 */
#define MSG_EAGER_HDR 16u
#define MSG_EF_RTS 1u		/* no payload: @size bytes wait for a clear-to-send */
#define MSG_EF_CLOSE 2u		/* no payload: the sender closed, nothing follows */
struct msg_eager_hdr {
	uint32_t tag;
	uint32_t size;
	uint32_t seq;		/* the message's sequence number on this connection */
	uint32_t flags;		/* MSG_EF_* */
};

enum msg_comm_kind { MSG_K_FREE = 0, MSG_K_LISTEN, MSG_K_SEND, MSG_K_RECV };
enum msg_comm_state {
	MSG_CS_FREE = 0,
	MSG_CS_PENDING,		/* in a handshake */
	MSG_CS_PARKED,		/* a recv comm waiting for accept() */
	MSG_CS_LIVE,
	MSG_CS_CLOSING,		/* closed: its WQEs, or messages it announced, still in flight */
};
enum msg_req_state { MSG_RS_FREE = 0, MSG_RS_BUSY, MSG_RS_DONE };
enum msg_req_kind { MSG_RK_SEND = 1, MSG_RK_RECV, MSG_RK_FLUSH };

/* the public request handle: the head of every request */
struct dvx_msg_req {
	uint32_t magic;
	uint8_t kind;
	uint8_t state;
	uint16_t idx;
	int32_t err;
	uint32_t rsvd;
	struct dvx_msg_comm *comm;
};

struct msg_sreq {
	struct dvx_msg_req h;
	uint64_t size;
	uint8_t left;		/* chunk completions still expected */
	uint8_t rts;		/* offload: waiting for the answer to its rendezvous */
	uint8_t rsvd[2];
	uint32_t lkey;		/* offload rendezvous: the source, for the data */
	uint64_t seq;
	uint64_t addr;
};

struct msg_rreq {
	struct dvx_msg_req h;
	uint8_t n;
	uint8_t stripe;		/* QP slots each buffer's message comes on */
	uint8_t left[DVX_MSG_MAX_RECVS];	/* completions each buffer still expects */
	uint8_t rsvd[6];
	int32_t berr[DVX_MSG_MAX_RECVS];
	uint64_t bytes[DVX_MSG_MAX_RECVS];
	/* offload: the buffers, matched at this end */
	uint8_t matched;	/* buffers a message was matched to */
	uint8_t rsvd2[7];
	uint64_t addr[DVX_MSG_MAX_RECVS];
	uint64_t size[DVX_MSG_MAX_RECVS];
	uint32_t tag[DVX_MSG_MAX_RECVS];
	uint32_t rkey[DVX_MSG_MAX_RECVS];
};

struct dvx_msg_comm {
	uint32_t magic;
	uint8_t kind;		/* enum msg_comm_kind */
	uint8_t state;		/* enum msg_comm_state */
	uint16_t id;		/* slot | generation */
	struct dvx_msg_state *st;
	uint32_t nic;
	int32_t err;		/* the error that failed it (a QP it uses), or 0 */
	/* listen */
	uint64_t cookie;
	int32_t q_head, q_tail;	/* parked recv comms (slots), -1 when empty */
	/* send / recv */
	int32_t q_next;		/* next in the listen comm's queue */
	uint16_t listen_id;	/* recv: the listen comm that accepts it */
	uint16_t peer_comm;
	uint64_t peer_ctx;
	uint32_t peer_nic;
	uint32_t group;
	uint32_t set;		/* index of its QP set */
	uint8_t nqps;		/* QP slots */
	uint8_t shared;
	uint8_t map[DVX_MSG_MAX_QPS];	/* QP slot -> the set's QP */
	uint8_t rr;		/* recv: next slot for unstriped buffers */
	uint8_t head_mask;	/* send: buffers of the current FIFO slot matched */
	uint8_t mapped;		/* it holds references on its set's QPs */
	uint8_t rsvd[5];
	uint32_t max_reqs;	/* agreed FIFO slots */
	uint32_t max_recvs;	/* agreed buffers per slot */
	uint32_t fifo_recvs;	/* the sender's entries per FIFO slot (its layout) */
	uint32_t max_chunk;	/* bytes one WQE may carry on this path */
	uint64_t head;		/* send: next FIFO position; recv: next request */
	uint64_t rfifo_addr;	/* recv: the sender's FIFO */
	uint32_t rfifo_rkey;
	uint32_t busy;		/* requests not yet reported done */
	uint32_t wqe_out;	/* WQEs it posted (data, notices, clear-to-sends) whose
				 * completions are not in yet */
	uint16_t epoch;		/* the slot's epoch at this use (wr_id bits 31:16) */
	uint16_t seq_base;	/* the sender's random start of the CTS sequence */
	uint16_t rx_out[DVX_MSG_MAX_QPS];	/* recv: messages announced and not arrived,
						 * per set QP (their receives are posted) */
	uint32_t fifo_depth;	/* recv: the sender's FIFO slots (its layout: where the
				 * close marker goes) */
	uint8_t marked;		/* send: the receiver's close marker was seen */
	uint8_t todo;		/* CLOSING: MSG_TODO_* still to post (no room yet) */
	uint8_t rsvd2[2];
	uint64_t close_deadline;	/* CLOSING: when the wait for the peer ends */
	uint8_t *fifo;		/* send: this slot's FIFO (peers write it) */
	uint8_t *stage;		/* recv: this slot's clear-to-send staging (local) */
	uint8_t *reqs;		/* this slot's request area */
	/* CTS offload (both ends agreed; docs/msg.md "CTS receiver offload") */
	uint8_t offload;
	uint8_t peer_gone;	/* recv: the sender's close note arrived */
	uint8_t cr_busy;	/* recv: a credit WRITE in flight (its source word in use) */
	uint8_t rsvd3;
	uint32_t eager_max;	/* send: the largest eager payload (both ends' least) */
	uint32_t ring_slot;	/* bytes of one slot of the receiver's ring */
	uint32_t ring_rkey;	/* send: the receiver's ring */
	uint64_t ring_addr;
	uint8_t *eager;		/* recv: this slot's ring (peers write it); send: staging */
	uint64_t lim;		/* send: sequence numbers below it have a credit */
	uint64_t rts_lo;	/* send: no rendezvous before it waits for its answer */
	uint32_t rts_n;		/* send: rendezvous sends waiting for their answer */
	uint32_t cr_out;	/* recv: credit receives posted on map[0]'s QP */
	uint32_t cr_want;	/* recv: the credits it keeps posted (reserved on that QP) */
	uint64_t arrived;	/* recv: eager ring messages arrived */
	uint64_t freed;		/* recv: ring slots below it consumed */
	uint64_t granted;	/* recv: the credit limit last written to the sender */
	uint64_t r_lo;		/* recv: the oldest irecv with a buffer not yet matched */
	uint8_t used[DVX_MSG_MAX_REQS / 8];	/* recv: ring slots consumed, by seq mod C */
};

/* a QP set: a connection's QPs and their CQ (shared: a pool group's) */
enum msg_set_state { MSG_SET_FREE = 0, MSG_SET_PENDING, MSG_SET_LIVE };
enum msg_dir { MSG_DIR_SEND = 0, MSG_DIR_RECV = 1 };

struct msg_set {
	uint8_t state;
	uint8_t shared;
	uint8_t dir;
	uint8_t nqps;		/* QPs the set was made with */
	uint8_t live_mask;	/* QPs not destroyed */
	uint8_t failed_mask;	/* QPs that saw an error */
	uint8_t cq_live;
	uint8_t making;		/* the handshake that makes it has not finished: nobody
				 * joins it before both ends have it live */
	uint32_t nic;
	uint32_t peer_nic;
	uint32_t group;
	uint64_t peer_ctx;
	uint64_t sid_ctx, sid_serial;	/* the set's identity, agreed by both ends */
	uint32_t cq_refs;	/* live QPs of the set */
	uint16_t orphans[DVX_MSG_MAX_QPS];	/* receives posted for messages of comms that
						 * gave up waiting (a late one uses one up) */
	uint32_t nretired;	/* QPs destroyed while the CQ lives: their CQEs left in */
	uint32_t retired_qpn[DVX_MSG_MAX_QPS];	/* the CQ are counted late, not errors */
	uint32_t qp_refs[DVX_MSG_MAX_QPS];	/* communicator slots mapped to each QP */
	uint64_t cqes[DVX_MSG_MAX_QPS];	/* completions taken per QP (telemetry) */
	uint64_t cqe_errs[DVX_MSG_MAX_QPS];
	uint32_t cr_res[DVX_MSG_MAX_QPS];	/* offload: credits its comms reserved (at most
						 * half the receive queue) */
	int32_t qp_err[DVX_MSG_MAX_QPS];
	uint32_t sq_depth, rq_depth, cq_depth;
	uint64_t ring_off;	/* the slot's offset in the ring region */
	uint64_t *wr_ids;	/* per QP: sq_depth then rq_depth entries */
	struct dvx_cq cq;
	struct dvx_qp qp[DVX_MSG_MAX_QPS];
};

/* a pool entry: one per QP of a shared set, keyed by the full key */
struct msg_pool_ent {
	uint8_t used;
	uint8_t dir;
	uint8_t slot;		/* the QP's index in its set */
	uint8_t rsvd;
	uint32_t nic;
	uint32_t peer_nic;
	uint32_t group;
	uint64_t peer_ctx;
	uint32_t set;
	uint32_t rsvd2;
};

/* round-robin group choice per (NIC, peer, peer NIC) */
struct msg_peer {
	uint64_t peer_ctx;
	uint32_t nic, peer_nic;
	uint32_t next_group;
	uint32_t used;
};

/* the handshake */
enum msg_hs_type { MSG_HS_HELLO = 1, MSG_HS_REPLY, MSG_HS_READY, MSG_HS_DONE };
enum msg_decision { MSG_D_NONE = 0, MSG_D_JOIN, MSG_D_NEW, MSG_D_PRIVATE };
#define MSG_HS_MAGIC 0x4d585644u	/* "DVXM" */
#define MSG_HS_VERSION 1
#define MSG_HS_HDR 8
#define MSG_HS_MAX 512

enum msg_hs_state {
	MSG_HS_FREE = 0,
	/* connector */
	MSG_HC_WAIT_KEY,	/* a primary of the same key is being made: wait */
	MSG_HC_CONNECTING,	/* the socket's connect is under way */
	MSG_HC_HELLO,		/* sending HELLO */
	MSG_HC_REPLY,		/* receiving REPLY */
	MSG_HC_READY,		/* sending READY */
	MSG_HC_DONE,		/* receiving DONE */
	MSG_HC_FINISHED,	/* connected, the comm waits for its connect call */
	MSG_HC_FAILED,		/* failed, the error waits for its connect call */
	/* acceptor */
	MSG_HA_HELLO,		/* receiving HELLO */
	MSG_HA_REPLY,		/* sending REPLY (or a refusal) */
	MSG_HA_READY,		/* receiving READY */
	MSG_HA_DONE,		/* sending DONE */
	MSG_HA_REFUSE,		/* sending a refusal, then closing */
	MSG_HA_DECIDE,		/* NEW with no room while this context's own NEW to the same
				 * peer is unanswered and its id is the higher: wait for the
				 * answer (the tie-break, docs/msg.md "Connecting") */
};

struct msg_hs {
	uint8_t state;		/* enum msg_hs_state */
	uint8_t decision;	/* enum msg_decision */
	uint8_t proposal;
	uint8_t mask;		/* JOIN: the QP slots both ends have */
	int32_t fd;
	int32_t err;
	uint32_t gen;		/* connector: matches the handle's stage */
	uint64_t deadline;
	int32_t comm;		/* the comm slot being made, -1 none */
	int32_t set;		/* the set being made or joined, -1 none */
	uint32_t out_len, out_off;
	uint32_t in_len, in_off;
	uint8_t out[MSG_HS_MAX];
	uint8_t in[MSG_HS_MAX];
	/* connector: what it asked for */
	uint32_t want_nqps;
	uint64_t serial;	/* NEW: the set serial it proposed */
	uint64_t cookie;
	uint16_t listen_id;
	uint8_t listen_nic;
	uint8_t rsvd;
	struct dvx_hal_sock_addr addr;
};

/* per NIC: the registrations and the flush QP */
struct msg_nic {
	struct dvx_umem umem;	/* the ring region */
	struct dvx_mr fifo_mr;	/* the FIFOs: peers write them */
	struct dvx_mr stage_mr;	/* clear-to-send staging and flush targets: local only */
	struct dvx_cq fcq;	/* flush */
	struct dvx_qp fqp;
	struct dvx_cq pcq;	/* the flush QP's partner, without force-loopback */
	struct dvx_qp pqp;
	uint64_t *f_wr_ids;
	struct msg_rreq *freqs;	/* flush requests, max_reqs of them */
	uint32_t fhead;
	uint32_t log_max_msg;
};

struct dvx_msg_state {
	uint32_t magic;
	uint32_t rsvd;
	struct dvx_msg *m;
	struct dvx_msg_cfg cfg;	/* defaults filled in */
	const struct dvx_hal *hal;
	uint64_t ctx_id;
	uint64_t serial;
	uint64_t hs_gen;
	int32_t lfd;		/* the listening socket */
	uint32_t next_slot;	/* round-robin communicator slot allocation */
	struct dvx_hal_sock_addr addr;	/* where it listens, as peers reach it */
	struct msg_nic nic[DVX_MSG_MAX_NICS];
	struct dvx_msg_comm *comms;
	uint8_t *gens;		/* per comm slot: its current generation */
	struct msg_set *sets;	/* shared sets first, then private */
	struct msg_pool_ent *pool;
	struct msg_hs *hs;
	struct msg_peer *peers;
	uint8_t *reqs;		/* request areas, req_stride per comm slot */
	uint64_t req_stride;
	uint8_t *fifo;		/* FIFO region: the FIFOs, then staging and flush targets */
	uint64_t fifo_stride;	/* bytes per comm slot, of the FIFOs and of staging */
	uint64_t stage_off;	/* where staging starts in the region */
	uint64_t flush_off;	/* flush READ targets in the region */
	uint64_t ring_off;	/* offload: the eager rings (in the FIFO MR) */
	uint64_t estage_off;	/* offload: the eager staging (in the staging MR) */
	uint64_t ring_stride;	/* offload: bytes of one comm slot's ring (and staging) */
	uint64_t fifo_len;	/* bytes of the region */
	uint16_t *epochs;	/* per comm slot: its current 16-bit epoch */
	uint32_t nclosing;	/* communicators CLOSING */
	uint8_t *rings;
	uint64_t rings_len;
	uint64_t shared_stride, private_stride, flush_stride;
	uint64_t sets_off;	/* first set slot in the ring region */
	uint32_t nshared, nprivate, npool;
	uint32_t priv_sq, priv_rq, priv_cq;	/* depths of a private set */
	uint32_t shr_sq, shr_rq, shr_cq;	/* depths of a shared set */
	struct dvx_msg_stats cnt;	/* the cumulative counters */
};

/* completions one poll of a CQ takes at most */
#define MSG_POLL_BUDGET 64

/* comm.c: the clock, random words, communicator ids */
uint64_t dvx_msg_now(const struct dvx_msg_state *st);
int dvx_msg_comm_alloc(struct dvx_msg_state *st, uint8_t kind, struct dvx_msg_comm **out);
void dvx_msg_comm_free(struct dvx_msg_state *st, struct dvx_msg_comm *c);
struct dvx_msg_comm *dvx_msg_comm_by_id(struct dvx_msg_state *st, uint32_t id);
struct dvx_msg_comm *dvx_msg_comm_any(struct dvx_msg_state *st, uint32_t id);
int dvx_msg_random64(struct dvx_msg_state *st, uint64_t *v);

/* msg.c */
void dvx_msg_stats_of(const struct dvx_msg_state *st, struct dvx_msg_stats *s);

/* set.c: QP sets and the pool */
int dvx_msg_set_alloc(struct dvx_msg_state *st, int shared, uint32_t *set);
int dvx_msg_set_create(struct dvx_msg_state *st, uint32_t set, uint32_t nic, uint32_t dir,
		       uint32_t nqps);
int dvx_msg_set_connect(struct dvx_msg_state *st, uint32_t set, const struct dvx_qp_conn *remote);
int dvx_msg_set_release(struct dvx_msg_state *st, uint32_t set);
int dvx_msg_set_unref(struct dvx_msg_state *st, struct dvx_msg_comm *c);
void dvx_msg_set_ref(struct dvx_msg_state *st, struct dvx_msg_comm *c);
struct msg_pool_ent *dvx_msg_pool_find(struct dvx_msg_state *st, uint32_t nic, uint64_t peer,
				       uint32_t peer_nic, uint32_t dir, uint32_t group,
				       uint32_t slot);
struct msg_pool_ent *dvx_msg_pool_find_key(struct dvx_msg_state *st, uint32_t nic, uint64_t peer,
					   uint32_t peer_nic, uint32_t dir, uint32_t group);
int dvx_msg_pool_add(struct dvx_msg_state *st, uint32_t set);
void dvx_msg_pool_del(struct dvx_msg_state *st, uint32_t set, uint32_t slot);
uint32_t dvx_msg_pool_free_count(const struct dvx_msg_state *st);
uint32_t dvx_msg_set_free_count(const struct dvx_msg_state *st, int shared);

/* hs.c: listen, connect, accept */
void dvx_msg_hs_run(struct dvx_msg_state *st);
void dvx_msg_hs_abort_all(struct dvx_msg_state *st);
/* dvx_msg_close() of a live listen comm: its handshakes dropped, the connections
 * nobody accepted released */
int dvx_msg_hs_close_listen(struct dvx_msg_state *st, struct dvx_msg_comm *c);

/* data.c */
int dvx_msg_poll_set(struct dvx_msg_state *st, uint32_t set, uint32_t budget);
int dvx_msg_poll_flush(struct dvx_msg_state *st, uint32_t nic, uint32_t budget);
void dvx_msg_comm_fail(struct dvx_msg_comm *c, int err);
void dvx_msg_comm_finish_close(struct dvx_msg_state *st, struct dvx_msg_comm *c);
void dvx_msg_closing_poll(struct dvx_msg_state *st);
void dvx_msg_closing_check(struct dvx_msg_state *st, struct dvx_msg_comm *c);
int dvx_msg_close_conn(struct dvx_msg_state *st, struct dvx_msg_comm *c);
/* CTS offload: a live comm's deferred work (credits, matches, rendezvous answers) */
void dvx_msg_offload_kick(struct dvx_msg_state *st, struct dvx_msg_comm *c);

static inline struct msg_sreq *dvx_msg_sreq(struct dvx_msg_comm *c, uint32_t idx)
{
	return (struct msg_sreq *)(void *)c->reqs + idx;
}

static inline struct msg_rreq *dvx_msg_rreq(struct dvx_msg_comm *c, uint32_t idx)
{
	return (struct msg_rreq *)(void *)c->reqs + idx;
}

static inline uint32_t dvx_msg_slot_of(const struct dvx_msg_state *st,
				       const struct dvx_msg_comm *c)
{
	return (uint32_t)(c - st->comms);
}

/* little-endian field access for the wire */
static inline void dvx_msg_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void dvx_msg_put32(uint8_t *p, uint32_t v)
{
	dvx_msg_put16(p, (uint16_t)v);
	dvx_msg_put16(p + 2, (uint16_t)(v >> 16));
}

static inline void dvx_msg_put64(uint8_t *p, uint64_t v)
{
	dvx_msg_put32(p, (uint32_t)v);
	dvx_msg_put32(p + 4, (uint32_t)(v >> 32));
}

static inline uint16_t dvx_msg_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t dvx_msg_get32(const uint8_t *p)
{
	return (uint32_t)dvx_msg_get16(p) | ((uint32_t)dvx_msg_get16(p + 2) << 16);
}

static inline uint64_t dvx_msg_get64(const uint8_t *p)
{
	return (uint64_t)dvx_msg_get32(p) | ((uint64_t)dvx_msg_get32(p + 4) << 32);
}

/*
 * A listen handle's travelling part (struct dvx_msg_handle's wire, docs/msg.md
 * "Connecting"), little-endian: [0-3] "DVXH", [4] version 1, [5] the address family,
 * [6] the listener's NIC, [8-15] its context id, [16-23] the cookie, [24-25] the listen
 * comm's id, [26-27] port, [28-31] scope id, [32-47] IP address, [48-95] a UNIX path
 * (NUL-terminated within 48 bytes). Pure functions of handle.c (the fuzz harnesses call
 * them without a context).
 */
#define MSG_HANDLE_MAGIC 0x48585644u	/* "DVXH" */
#define MSG_HANDLE_VERSION 1
#define MSG_HANDLE_PATH_MAX 48

struct msg_handle_info {
	struct dvx_hal_sock_addr addr;	/* where the listener's handshakes listen */
	uint64_t ctx;			/* its context id */
	uint64_t cookie;		/* the listen comm's cookie */
	uint16_t listen_id;		/* the listen comm's id */
	uint8_t nic;			/* the listener's NIC */
};

/* write @i into @h (its stage zeroed); the IP fields and the path are written as they
 * are, whatever the family, the path cut to 47 bytes */
void dvx_msg_handle_put(struct dvx_msg_handle *h, const struct msg_handle_info *i);
/* read @h's travelling part: 0, or -EINVAL (not this layer's magic or version, an
 * unknown family, port 0 for IP, a UNIX path empty or not NUL-terminated in 48 bytes);
 * for IP the path is empty, for a path the IP fields are zero */
int dvx_msg_handle_parse(const struct dvx_msg_handle *h, struct msg_handle_info *i);

#endif
