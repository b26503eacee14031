/* SPDX-License-Identifier: MIT */
/*
 * core/ht/ht_priv.h - the host transport's internals (not installed): the IB
 * transport's state region, the handshake's message, the wr_id and immediate
 * encodings, and what ib.c, ib_data.c and cache.c share. docs/ht.md.
 */
#ifndef DVX_CORE_HT_PRIV_H
#define DVX_CORE_HT_PRIV_H

#include <errno.h>
#include <string.h>

#include <dvx/ht/ib.h>
#include <dvx/ht/cache.h>
#include <dvx/nic/cq.h>
#include <dvx/nic/post.h>

#define HT_ST_MAGIC 0x54534854u	/* "HTST" */
#define HT_HELLO_MAGIC 0x54485644u	/* "DVHT" */
#define HT_HELLO_VERSION 1
#define HT_RING_ALIGN 4096u
/* the handshake's bootstrap calls: as good as non-blocking, yet long enough for an
 * adapter that moves bytes only inside its wait (the sockets adapter polls its sockets
 * there) to send or take a message that is ready */
#define HT_BS_TRY_NS 1000u

/*
 * wr_id: a request's address with the kind in its low 3 bits (requests are 8-byte
 * aligned), or for a credit (no request) the channel above the kind. The completion
 * of a WQE thus names the request it belongs to, flushed or not.
 */
enum ht_wr_kind {
	HT_WR_DATA = 1,		/* a chunk's WRITE with immediate */
	HT_WR_CTRL = 2,		/* a control message's SEND */
	HT_WR_CREDIT = 3,	/* copy-based: a slot handed back (fetch-add) */
};
#define HT_WR_KIND(w) ((uint32_t)(w) & 7u)
#define HT_WR_REQ(w) ((struct dvx_ht_req *)(uintptr_t)((w) & ~(uint64_t)7))
#define HT_WR_OF(req, kind) ((uint64_t)(uintptr_t)(req) | (kind))

/*
 * Immediate of a chunk: [31] the sender's prepare step failed (a zero-length notice
 * that keeps the channel's order; the receive that takes it fails with -EREMOTEIO),
 * [30:0] the chunk's sequence on its channel, which the receiver checks against its
 * own count (FIFO per QP: anything else is a protocol error).
 */
#define HT_IMM_FAILED 0x80000000u
#define HT_IMM_SEQ_MASK 0x7fffffffu

/* the handshake (DVX_HT_HELLO_BYTES, little-endian) */
enum ht_hello_kind { HT_HELLO = 1, HT_READY = 2, HT_FAIL = 3 };

struct ht_hello {
	uint32_t magic;
	uint8_t version;
	uint8_t kind;
	uint8_t mode;
	uint8_t nch;
	uint32_t max_ctrl;
	uint32_t cb_depth;
	uint32_t cb_slot_bytes;
	uint32_t rkey;		/* the data region's remote key */
	int32_t err;		/* HT_FAIL: why */
	uint32_t rsvd0;
	uint64_t staging;	/* my receive staging: the peer writes channel c's slot s
				 * at staging + (c * cb_depth + s) * cb_slot_bytes */
	uint64_t credits;	/* my credit words: the peer hands back channel c's
				 * slots by fetch-add at credits + 8 * c */
	struct dvx_qp_conn conn;	/* channel 0's QP; the others differ in QPN and PSN */
	dvx_be32 qpn[DVX_HT_MAX_CHANNELS];
	dvx_be32 psn[DVX_HT_MAX_CHANNELS];
	uint8_t pad[32];
};
DVX_ASSERT_SIZE(struct ht_hello, DVX_HT_HELLO_BYTES);

/*
 * Recovery of a channel (ib_rec.c), on the handshake's tag once connected (nothing
 * else reads it then), DVX_HT_HELLO_BYTES little-endian. Every dvx_ht_recover() call
 * is an attempt with its own number (@att); HELLO opens it, ACK answers a HELLO
 * (@echo: the attempt acknowledged) with the sender's attempt and whether its end of
 * the channel failed (@failed, @err), QUIET (drained) and READY (reset, receives
 * posted) name the pair (@att: the sender's, @echo: the receiver's). Messages of an
 * attempt that timed out never match a later pair and are read past.
 */
#define HT_REC_MAGIC 0x52485644u	/* "DVHR" */
#define HT_REC_VERSION 1

enum ht_rec_kind { HT_REC_HELLO = 1, HT_REC_ACK, HT_REC_QUIET, HT_REC_READY };

struct ht_rec {
	uint32_t magic;
	uint8_t version;
	uint8_t kind;
	uint16_t channel;
	uint32_t att;
	uint32_t echo;
	uint32_t failed;	/* ACK: 1 when the sender's end of the channel failed */
	int32_t err;		/* ACK: what failed it (0 or a negative errno) */
	uint8_t pad[DVX_HT_HELLO_BYTES - 24];
};
DVX_ASSERT_SIZE(struct ht_rec, DVX_HT_HELLO_BYTES);

enum ht_hs_state {
	HT_HS_SEND_HELLO = 1,	/* my HELLO not yet handed to the bootstrap */
	HT_HS_RECV_HELLO,	/* waiting for the peer's HELLO */
	HT_HS_SEND_READY,	/* connected and receives posted; READY not yet handed over */
	HT_HS_RECV_READY,	/* waiting for the peer's READY */
	HT_HS_CONNECTED,
	HT_HS_FAILED,
};

/* a copy-based staging slot */
struct ht_slot {
	uint8_t state;		/* enum dvx_ht_slot_state */
	uint8_t copying;	/* a hook's copy started and not yet reported done */
	uint8_t copied;		/* the copy step has finished (or failed: err) */
	uint8_t wdone;		/* send: the write's completion came */
	int32_t err;
	uint64_t seq;
	uint64_t len;
	struct dvx_ht_req *req;
};

/* one channel: its QP and both directions' counters and queues */
struct ht_chan {
	struct dvx_qp qp;
	int32_t err;		/* what failed the channel (0: healthy) */
	uint8_t syndrome;	/* of the first error completion */
	uint8_t vendor_syndrome;
	uint16_t rsvd;
	uint32_t rec_att;	/* dvx_ht_recover() attempts on this channel */
	uint32_t rsvd2;
	/* send */
	uint64_t tx_issued;	/* chunks issued (copy-based: slots taken) */
	uint64_t tx_posted;	/* chunks written (the next one's sequence) */
	uint64_t tx_freed;	/* copy-based: slots free again (oldest in use) */
	uint32_t tx_busy;	/* chunk writes not yet completed */
	/* receive */
	uint64_t rx_issued;	/* receives issued */
	uint64_t rx_arrived;	/* notifications taken from the CQ */
	uint64_t rx_matched;	/* copy-based: chunks taken by a receive (draining) */
	uint64_t rx_done;	/* receives completed */
	uint64_t rx_credited;	/* copy-based: slots handed back */
	struct dvx_ht_req *rx_head, *rx_tail;	/* receives waiting, oldest first */
	uint32_t rx_posted;	/* receive WQEs in the RQ */
	uint32_t zc_pending;	/* zero-copy: notifications no receive took yet */
	uint64_t *zc_len;	/* zero-copy: their lengths, a ring of rq_depth */
	/* copy-based */
	struct ht_slot *tx_slot, *rx_slot;	/* cb_depth each */
	uint8_t *tx_staging, *rx_staging;	/* this channel's slots */
	uint64_t *credit;	/* my word the peer adds to when it frees my chunks */
	uint64_t peer_staging;	/* the peer's receive slots of this channel */
	uint64_t peer_credit;	/* the peer's credit word of this channel */
	uint64_t *wr_ids;	/* sq_depth then rq_depth */
};

/*
 * struct ht_idle - the owner's turn in a transport's progress: @fn(@arg) once every
 * @every progress calls (@fn NULL: no owner). The per-peer cache answers peers and
 * moves their handshakes there, so a rank waiting on one transport answers everyone.
 */
struct ht_idle {
	void (*fn)(void *arg);
	void *arg;
	uint32_t every;
};

struct dvx_ht_ib_state {
	uint32_t magic;
	uint32_t hs;		/* enum ht_hs_state */
	int32_t err;		/* what failed the transport (its handshake) */
	uint32_t have_hello;	/* in_msg holds the peer's HELLO (the cache took it) */
	struct dvx_ht_ib *ib;
	struct dvx_ht_ib_cfg cfg;	/* defaults filled in */
	/* hooks the set-up installs, so that the data path (ib_data.c) calls nothing
	 * above it: the handshake's step (ib.c), a channel's recovery (ib_rec.c) and the
	 * owner's turn (cache.c) */
	int (*hs_step)(struct dvx_ht_ib_state *st);
	int (*recover)(struct dvx_ht *t, uint32_t channel, uint64_t timeout_ns);	/* ib_rec.c */
	struct ht_idle idle;
	const struct dvx_hal *hal;
	struct dvx_umem umem;	/* the ring region */
	struct dvx_mr mr;	/* the data region */
	struct dvx_cq cq;
	uint32_t cq_depth;
	uint32_t peer_rkey;
	uint8_t *data;
	uint64_t *sink;		/* where credits' fetch-add results go (never read) */
	uint64_t ctrl_stride;
	/* control messages (channel 0) */
	uint8_t *ctrl_tx;	/* ctrl_slots send buffers */
	uint8_t *ctrl_rx;	/* nbuf receive buffers */
	uint32_t nbuf;
	uint32_t nfree;		/* free receive buffers: free[0 .. nfree - 1] */
	uint32_t *free;
	uint32_t *arr_buf;	/* control messages no receive took yet: a ring of nbuf */
	uint32_t *arr_len;
	uint64_t arr_head, arr_tail;
	uint64_t ctrl_tx_issued, ctrl_tx_done;
	uint64_t ctrl_rx_issued, ctrl_rx_done;
	struct dvx_ht_req *crx_head, *crx_tail;	/* control receives waiting */
	uint32_t accept_tick;
	uint32_t rsvd;
	struct ht_hello out_msg;	/* what this end hands the bootstrap now */
	struct ht_hello in_msg;		/* what the peer sent */
	struct dvx_ht_ib_stats cnt;
	struct ht_chan ch[DVX_HT_MAX_CHANNELS];
};

/* a caller region a call takes: at least @need bytes of @len, @align-aligned (a
 * power of two), zeroed first when @zero */
struct dvx_ht_region {
	void *p;
	uint64_t len, need, align;
	int zero;
};

/* ib.c */
int dvx_ht_regions_take(const struct dvx_ht_region *r, uint32_t n);
int dvx_ht_ib_setup(struct dvx_ht_ib *ib, const struct dvx_ht_ib_cfg *cfg, void *state,
		    uint64_t state_len, void *rings, uint64_t rings_len, void *data,
		    uint64_t data_len, const struct ht_idle *idle, const struct ht_hello *hello);
int dvx_ht_ib_cfg_norm(const struct dvx_ht_ib_cfg *in, struct dvx_ht_ib_cfg *c, int need_nic);
int dvx_ht_hs_step(struct dvx_ht_ib_state *st);
int dvx_ht_hello_decode(const struct ht_hello *m, struct ht_hello *out);
int dvx_ht_bs_try(int err);

/* ib_data.c */
extern const struct dvx_ht_ops dvx_ht_ib_ops;
void dvx_ht_rx_fill(struct dvx_ht_ib_state *st, struct ht_chan *c);
void dvx_ht_chan_fail(struct dvx_ht_ib_state *st, struct ht_chan *c, int err);
int dvx_ht_chan_drained(struct dvx_ht_ib_state *st, struct ht_chan *c);
uint64_t dvx_ht_chan_clear(struct dvx_ht_ib_state *st, struct ht_chan *c);

/* ib_rec.c */
int dvx_ht_ib_recover_chan(struct dvx_ht *t, uint32_t channel, uint64_t timeout_ns);
int dvx_ht_rec_decode(const struct ht_rec *m, struct ht_rec *out);

static inline uint64_t dvx_ht_align(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static inline struct dvx_ht_ib_state *dvx_ht_st(const struct dvx_ht *t)
{
	return (struct dvx_ht_ib_state *)t->priv;
}

#endif
