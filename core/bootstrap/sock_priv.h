/* SPDX-License-Identifier: MIT */
/*
 * core/bootstrap/sock_priv.h - what the files of the sockets adapter share: the wire
 * format, the per-rank state in caller memory, and the functions one file calls in
 * another.
 *
 *	sock_addr.c	addresses ("unix:PATH", "tcp:IP:PORT"), the 128-byte wire address,
 *			the set-up records' head, the memory size
 *	sock_setup.c	dvx_bootstrap_sock_init(): the secret, rendezvous at rank 0, then
 *			the full mesh
 *	sock_auth.c	the handshake of every set-up connection: the acceptor's challenge,
 *			the connector's proof (HMAC-SHA-256 of hmac.c under the job's
 *			secret), the acceptor's proof back; the acceptor serves up to
 *			DVX_BOOTSTRAP_SOCK_HS_SLOTS handshakes side by side, each with its
 *			own deadline, and refuses whoever does not prove itself
 *	sock_io.c	the blocking byte pump of set-up and handshakes (io_full); the
 *			progress engine: framing and its bounds, per-peer readers and
 *			send queues, unexpected-message slots, one poll round
 *	sock_ops.c	the struct dvx_bootstrap_ops the generic layer calls
 *
 * Every OS call goes through the hal (dvx/hal/host.h: sock_*, sleep_ns, now_ns,
 * random_bytes) of the attr's backend, kept in struct bs_sock.hal, so a test can fail
 * any one of them (the build checks that these objects reference no socket, clock or
 * random call of their own). The one lock is a pthread mutex: it cannot fail in a way
 * that matters here (docs/bootstrap.md).
 */
#ifndef DVX_CORE_BS_SOCK_PRIV_H
#define DVX_CORE_BS_SOCK_PRIV_H

#include <pthread.h>

#include <dvx/hal.h>

#include "bs_priv.h"
#include "hmac.h"

#define SK_MAGIC 0x534f434bu
#define WIRE_MAGIC 0x44565842u	/* "DVXB" */
#define WIRE_VERSION 2u		/* of the frames and of the set-up records (2: the handshake) */
#define WIRE_HDR 24u
#define WIRE_F_BYE 0x0001u	/* the sender finished its context and closes the stream */
#define WIRE_F_POISON 0x0002u	/* a failed collective (BS_LEN_POISON); length 0 */
#define WIRE_F_ALL (WIRE_F_BYE | WIRE_F_POISON)

/*
 * The set-up records: a 16-byte head {u32 magic, u16 version, u16 type, u32 rank,
 * u32 nranks} (version 1 had a u32 type there: its records read as version 0), then
 * the type's body. Every connection of the set-up starts with a handshake: the side
 * that accepted sends CHALLENGE, the side that connected answers HELLO (to rank 0) or
 * PEER (to a rank j > 0) with its proof, the acceptor answers WELCOME with its own
 * proof or REFUSE with a reason; then rank 0 sends TABLE on each rendezvous connection.
 */
enum {
	MSG_HELLO = 1,		/* rank r -> rank 0: nonce, proof, listening address */
	MSG_TABLE = 2,		/* rank 0 -> rank r: nranks addresses */
	MSG_PEER = 3,		/* rank r -> rank j < r: nonce, proof */
	MSG_CHALLENGE = 4,	/* acceptor -> connector: its rank, nranks, a nonce */
	MSG_WELCOME = 5,	/* acceptor -> connector: its proof */
	MSG_REFUSE = 6,		/* acceptor -> connector: why (REFUSE_*), then it closes */
};

enum {
	REFUSE_AUTH = 1,	/* the proof did not verify: another secret, or none */
	REFUSE_PROTO = 2,	/* not a record of this job */
	REFUSE_TAKEN = 3,	/* a proven rank that is already here */
};

#define SETUP_HEAD 16u
#define AUTH_NONCE 32u
#define AUTH_MAC DVX_BS_SHA256_BYTES
#define REC_CHALLENGE (SETUP_HEAD + AUTH_NONCE)
#define REC_PEER (SETUP_HEAD + AUTH_NONCE + AUTH_MAC)
#define REC_HELLO (REC_PEER + DVX_BOOTSTRAP_SOCK_ADDR_BYTES)
#define REC_WELCOME (SETUP_HEAD + AUTH_MAC)
#define REC_REFUSE (SETUP_HEAD + 4u)

/* A listening address on the wire: 128 bytes, kind and port big-endian. */
enum {
	WADDR_UNIX = 1,
	WADDR_IP4 = 2,
	WADDR_IP6 = 3,
};

struct bs_waddr {
	uint16_t kind;
	uint16_t port;
	uint8_t ip[16];
	char path[108];
};
DVX_ASSERT_SIZE(struct bs_waddr, DVX_BOOTSTRAP_SOCK_ADDR_BYTES);

enum {
	RX_HDR = 0,	/* reading a header */
	RX_BODY,	/* reading a payload into rx_req, rx_slot or nowhere (discard) */
	RX_STALL,	/* header read, no receiver and no slot for it yet */
};

/* One peer: its connection, its send queue and its reader. */
struct bs_speer {
	int32_t fd;
	int32_t err;		/* 0 while the connection lives */
	struct bs_list txq;	/* sends, the head on the wire */
	struct bs_list rxq;	/* posted receives, oldest first */
	struct bs_req *rx_req;	/* the receive the payload goes to */
	int32_t rx_slot;	/* or the slot it goes to, or -1 */
	uint32_t tx_hsent;	/* header bytes of txq.head already sent */
	uint32_t rx_hgot;
	uint32_t rx_space;
	uint32_t rx_tag;
	uint8_t rx_state;
	uint8_t rx_discard;
	uint8_t left;		/* it said goodbye before closing: left, not failed */
	uint8_t pad;
	uint64_t rx_len;
	uint64_t rx_got;
	uint8_t rxhdr[WIRE_HDR];
	uint8_t txhdr[WIRE_HDR];
};
DVX_STATIC_ASSERT(sizeof(struct bs_speer) <= DVX_BOOTSTRAP_SOCK_PEER_BYTES, "peer record");

enum {
	HS_FREE = 0,
	HS_CHALLENGE,	/* sending the challenge */
	HS_READ,	/* reading the connector's record: head, then the body */
	HS_WELCOME,	/* proven: sending the welcome, then it is admitted */
};

/* One handshake the acceptor serves (sock_auth.c), in the area after struct bs_sock. */
struct bs_hs {
	int32_t fd;		/* the accepted connection (HS_FREE: -1) */
	int32_t rank;		/* HS_WELCOME: the rank it proved */
	uint8_t state;
	uint8_t pad[3];
	uint32_t in_got;	/* bytes of @in read */
	uint32_t in_want;	/* SETUP_HEAD, then the whole record */
	uint32_t out_len;	/* bytes of @out to send, */
	uint32_t out_sent;	/* of which sent */
	uint64_t deadline;	/* it must be through by then (hal clock) */
	uint8_t nonce[AUTH_NONCE];	/* the challenge's */
	uint8_t in[REC_HELLO];
	uint8_t out[REC_CHALLENGE > REC_WELCOME ? REC_CHALLENGE : REC_WELCOME];
};
DVX_STATIC_ASSERT(sizeof(struct bs_hs) <= DVX_BOOTSTRAP_SOCK_HS_BYTES, "handshake record");

/* One unexpected-message slot (its payload is in bs_sock.data). */
struct bs_sslot {
	uint64_t seq;
	uint64_t len;
	uint64_t got;
	int32_t peer;
	uint32_t space;
	uint32_t tag;
	uint8_t used;
	uint8_t complete;
	uint16_t pad;
};
DVX_STATIC_ASSERT(sizeof(struct bs_sslot) <= DVX_BOOTSTRAP_SLOT_BYTES, "slot record");

/* A rank's state, at the start of the caller's memory; the arrays follow it. */
struct bs_sock {
	uint32_t magic;
	int32_t rank;
	int32_t nranks;
	int32_t refs;
	uint32_t next_space;
	uint32_t nslots;
	uint32_t slot_bytes;
	uint32_t nfailed;		/* peers found failed (not departed) so far */
	size_t stride;
	uint64_t seq;
	const struct dvx_hal *hal;	/* sockets, clock, sleep */
	pthread_mutex_t lock;
	struct dvx_log log;
	struct bs_speer *peers;
	struct dvx_hal_pollfd *pfd;	/* in the address area once set-up is over */
	struct bs_waddr *table;		/* set-up only */
	struct bs_sslot *slots;
	uint8_t *data;
	struct bs_hs *hs;		/* DVX_BOOTSTRAP_SOCK_HS_SLOTS records, set-up only */
	uint64_t max_msg;		/* the largest payload sent or accepted */
	uint32_t has_secret;		/* 0: the open mode (empty key, zero nonces) */
	uint32_t pad;
	struct dvx_bootstrap_sock_stats stats;	/* what the set-up let in and refused */
	struct dvx_bs_hmac key;		/* the secret made ready; wiped after set-up */
};
DVX_STATIC_ASSERT(sizeof(struct bs_sock) <= DVX_BOOTSTRAP_SOCK_HDR_BYTES, "socket header");
DVX_STATIC_ASSERT(sizeof(struct dvx_hal_pollfd) <= DVX_BOOTSTRAP_SOCK_ADDR_BYTES, "pollfd");

/* ---- sock_addr.c ---- */

/* "unix:/path", "tcp:1.2.3.4:port" or "tcp:[::1]:port" (numeric only): 0 or -EINVAL. */
int dvx_bs_sock_parse_addr(const char *addr, int nranks, struct dvx_hal_sock_addr *a);

/* Rank @rank's UNIX listening address: "<rv's path>.<rank>" (parse_addr checked it fits). */
void dvx_bs_sock_rank_addr(struct dvx_hal_sock_addr *dst, const struct dvx_hal_sock_addr *rv,
			   int rank);

/* A listening address to and from its wire form; from the wire: 0 or -EPROTO. */
void dvx_bs_sock_waddr_from(struct bs_waddr *w, const struct dvx_hal_sock_addr *a);
int dvx_bs_sock_waddr_to(struct dvx_hal_sock_addr *a, const struct bs_waddr *w);

/* The 16-byte head of a set-up record; check: the rank it names (< nranks), or -EPROTO
 * for another magic, version, type or nranks. */
void dvx_bs_sock_setup_head(uint8_t *h, uint32_t type, uint32_t rank, uint32_t nranks);
int dvx_bs_sock_setup_check(const uint8_t *h, uint32_t type, int nranks);

/* ---- sock_auth.c ---- */

/* An errno a socket call can get from what the other end (or the network) did, not
 * from a fault of this process: the connection is lost, nothing else. */
int dvx_bs_sock_remote_err(int err);

/*
 * The proof of one side of a handshake: HMAC-SHA-256 under the job's secret of a label
 * for the side (@acceptor 0: the connector's), the version, @type (MSG_HELLO or
 * MSG_PEER), the connector's and the acceptor's rank, nranks, both nonces and, in the
 * connector's proof of a HELLO, its listening address @w (NULL otherwise).
 */
void dvx_bs_sock_proof(const struct bs_sock *st, uint8_t out[AUTH_MAC], int acceptor,
		       uint32_t type, uint32_t c_rank, uint32_t a_rank,
		       const uint8_t *nonce_a, const uint8_t *nonce_c, const struct bs_waddr *w);

/* A fresh nonce from the hal (zeros in the open mode): 0 or the hal's errno. */
int dvx_bs_sock_nonce(struct bs_sock *st, uint8_t nonce[AUTH_NONCE]);

/*
 * The connector's side on a connected @fd: read the challenge of rank @a_rank, send the
 * record @type (MSG_HELLO with the address @w, or MSG_PEER) with this rank's proof, read
 * the welcome and check the acceptor's proof. 0; -ECONNRESET (closed before the
 * welcome: worth a new connection); -EACCES (refused for its proof, or the acceptor
 * could not prove it knows the secret); -EPROTO (not a dvx set-up of this job, or this
 * rank is already there); -ETIMEDOUT; or a hal call's errno.
 */
int dvx_bs_sock_join(struct bs_sock *st, int fd, uint32_t type, int a_rank,
		     const struct bs_waddr *w, uint64_t deadline);

/*
 * The acceptor's side: accept on @lfd and serve handshakes (up to
 * DVX_BOOTSTRAP_SOCK_HS_SLOTS at once, each within DVX_BOOTSTRAP_SOCK_HANDSHAKE_NS)
 * until @count ranks in [@lo, @hi) have proven themselves with records of @type; each
 * one's socket goes to st->peers[rank].fd (and a HELLO's address to st->table[rank]).
 * Whoever does not prove itself is refused (counted in st->stats, logged) and the wait
 * goes on. 0; -ETIMEDOUT; -EPROTO (a proven rank came twice); or the errno of a hal
 * call that failed here (not one the other end caused). Handshakes still under way at
 * the end are closed.
 */
int dvx_bs_sock_admit(struct bs_sock *st, int lfd, uint32_t type, int lo, int hi, int count,
		      uint64_t deadline);

/* ---- sock_io.c ---- */

/* Wait for @events on @fd until @deadline: 1 ready, -ETIMEDOUT, or the poll's errno. */
int dvx_bs_sock_poll1(struct bs_sock *st, int fd, short events, uint64_t deadline);
/* Send (@wr) or receive all @len bytes on @fd before @deadline: 0; -ECONNRESET (end of
 * stream, or the other end hung up); -ETIMEDOUT; or the failed hal call's errno. */
int dvx_bs_sock_io_full(struct bs_sock *st, int fd, void *buf, size_t len, int wr,
			uint64_t deadline);


/* The payload room of slot @i. */
static inline uint8_t *dvx_bs_sock_slot_data(struct bs_sock *st, int i)
{
	return st->data + (size_t)i * st->stride;
}

/* Close peer @p's connection and finish everything queued on it with @err. */
void dvx_bs_sock_fail_peer(struct bs_sock *st, int p, int err);

/* A header was read (or is stalled): find where its payload goes. 1 when that
 * finished a posted receive, else 0. */
int dvx_bs_sock_rx_dispatch(struct bs_sock *st, struct bs_speer *pe, int p);

/* Read what peer @p has, until it would block, stalls or finishes a posted receive. */
void dvx_bs_sock_rx_progress(struct bs_sock *st, int p);

/* Write peer @p's send queue until it would block or is empty. */
void dvx_bs_sock_tx_progress(struct bs_sock *st, int p);

/* Stalled readers may move on once a slot is free or a receive was posted. */
void dvx_bs_sock_unstall(struct bs_sock *st);

/* One round: poll every live connection until something is ready or @deadline, and
 * serve what is. 0, or the poll's negative errno. */
int dvx_bs_sock_progress(struct bs_sock *st, uint64_t deadline);

/* Best effort: a goodbye frame on every healthy stream. */
void dvx_bs_sock_say_bye(struct bs_sock *st);

/* Close every peer's connection (errors ignored: the sockets are gone in any case). */
void dvx_bs_sock_close_all(struct bs_sock *st);

/* ---- sock_ops.c ---- */

extern const struct dvx_bootstrap_ops dvx_bs_sock_ops;

#endif /* DVX_CORE_BS_SOCK_PRIV_H */
