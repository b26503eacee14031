/* SPDX-License-Identifier: MIT */
/*
 * core/bootstrap/sock_priv.h - what the files of the sockets adapter share: the wire
 * format, the per-rank state in caller memory, and the functions one file calls in
 * another.
 *
 *	sock_addr.c	addresses ("unix:PATH", "tcp:IP:PORT"), the 128-byte wire address,
 *			the set-up records' head, the memory size
 *	sock_setup.c	dvx_bootstrap_sock_init(): rendezvous at rank 0, then the full mesh
 *	sock_io.c	the progress engine: framing, per-peer readers and send queues,
 *			unexpected-message slots, one poll round
 *	sock_ops.c	the struct dvx_bootstrap_ops the generic layer calls
 *
 * Every OS call goes through the hal (dvx/hal/host.h: sock_*, sleep_ns, now_ns) of the
 * attr's backend, kept in struct bs_sock.hal, so a test can fail any one of them (the
 * build checks that these objects reference no socket call of their own). The one lock
 * is a pthread mutex: it cannot fail in a way that matters here (docs/bootstrap.md).
 */
#ifndef DVX_CORE_BS_SOCK_PRIV_H
#define DVX_CORE_BS_SOCK_PRIV_H

#include <pthread.h>

#include <dvx/hal.h>

#include "bs_priv.h"

#define SK_MAGIC 0x534f434bu
#define WIRE_MAGIC 0x44565842u	/* "DVXB" */
#define WIRE_VERSION 1u
#define WIRE_HDR 24u
#define WIRE_F_BYE 0x0001u	/* the sender finished its context and closes the stream */
#define WIRE_F_POISON 0x0002u	/* a failed collective (BS_LEN_POISON); length 0 */

enum {
	MSG_HELLO = 1,		/* rank r -> rank 0: rank, nranks, listening address */
	MSG_TABLE = 2,		/* rank 0 -> rank r: nranks addresses */
	MSG_PEER = 3,		/* rank r -> rank j < r: rank, nranks */
};

/* The set-up records: 16-byte head {magic, type, rank, nranks}, then addresses. */
#define SETUP_HEAD 16u

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

/* The 16-byte head of a set-up record; check: the rank it names, or -EPROTO. */
void dvx_bs_sock_setup_head(uint8_t *h, uint32_t type, uint32_t rank, uint32_t nranks);
int dvx_bs_sock_setup_check(const uint8_t *h, uint32_t type, int nranks);

/* ---- sock_io.c ---- */

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
