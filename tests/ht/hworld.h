/* SPDX-License-Identifier: MIT */
/*
 * tests/ht/hworld.h - ranks of the host transport (dvx/ht/) for its tests and its
 * benchmark: each rank a software NIC of one fabric and a context of one threads
 * bootstrap group, with a send and a receive buffer registered on its NIC; standalone
 * transports between pairs of ranks, or a per-peer cache per rank; and a chunk driver
 * that moves a buffer over a transport (every channel, a window of requests per
 * channel), one step at a time, so one thread can drive every side or each rank's
 * thread its own.
 */
#ifndef DVX_TESTS_HWORLD_H
#define DVX_TESTS_HWORLD_H

#include <dvx/ht/ib.h>
#include <dvx/ht/cache.h>
#include <dvx/hal/sim.h>

#define HW_MAX 8
#define HW_SEC 1000000000ull
#define HW_WIN 16		/* the driver's requests in flight per channel */

struct hw_rank {
	struct dvx_nic nic;
	struct dvx_bootstrap bs;
	struct dvx_ht_ib ib[HW_MAX];	/* standalone transports, by peer */
	void *ts[HW_MAX], *tr[HW_MAX], *td[HW_MAX];
	struct dvx_ht_cache cache;
	void *cs, *cr, *cd;
	uint8_t *sbuf, *rbuf;	/* buf_len bytes each, registered (remote write) */
	struct dvx_mr smr, rmr;
};

struct hw {
	int n;
	int me;			/* processes: this process's rank (only r[me] is here) */
	int procs;		/* the ranks are processes (hw_init_proc()) */
	void *wire_mem;
	uint64_t buf_len;
	void *fab_mem;
	struct dvx_sim_fabric *fab;
	void *bs_mem;
	struct dvx_bootstrap_tgroup *g;
	struct hw_rank r[HW_MAX];
};

/* @n ranks, @buf_len bytes of send and of receive buffer each. 0 or a negative errno. */
int hw_init(struct hw *w, int n, uint64_t buf_len);
/* the same over @hal's devices @devs (NULL @hal: the software NIC, as hw_init()) */
int hw_init_hal(struct hw *w, int n, uint64_t buf_len, const struct dvx_hal *hal,
		const char *const *devs);

/* processes: this process is rank @me of @n with its own fabric and NIC, the fabrics
 * joined by the wire and the software NIC's progress thread running; the bootstrap
 * the sockets adapter at @bsaddr, or with @bsaddr NULL the MPI job this process is
 * one rank of (its rank, not @me, is w->me). Only w->r[w->me] is set up. */
int hw_init_proc(struct hw *w, int n, int me, uint64_t buf_len, const char *bsaddr);

/* rank @me, through its cache (hw_caches()): asks for every peer in a random order
 * (from @seed) and waits for each handshake before asking for the next, then sends
 * @size bytes of its send buffer to every peer and receives @size from each into slice
 * [peer] of its receive buffer, all at once, modes by pair (hw_pair_mode()), every
 * byte checked. 0, or an error with what failed in @why */
int hw_all_to_all(struct hw *w, int me, uint64_t size, uint64_t seed, char *why, size_t n);
uint32_t hw_pair_mode(int a, int b);

/* every transport and cache finished, the NICs closed, the fabric checked empty:
 * 0 or the first error (-EBUSY when the sim still counts objects) */
int hw_fini(struct hw *w);

/* standalone transports between ranks @a and @b (tag @a * HW_MAX + @b for a < b), made
 * but not waited for; @cfg's nic, bs, peer and tag are filled in here */
int hw_pair(struct hw *w, int a, int b, const struct dvx_ht_ib_cfg *cfg);
/* one end of it: rank @a's transport to @b */
int hw_end(struct hw *w, int a, int b, const struct dvx_ht_ib_cfg *cfg);
int hw_unpair(struct hw *w, int a, int b);

/* rank @a's standalone transport to @b */
struct dvx_ht *hw_t(struct hw *w, int a, int b);

/* progress both ends of the pair until connected (one thread): 0 or the error */
int hw_connect(struct hw *w, int a, int b, uint64_t timeout_ns);

/* a cache on every rank with template @tmpl (nic filled in) */
int hw_caches(struct hw *w, const struct dvx_ht_cache_cfg *cfg);

/* the pattern a rank sends: byte i of rank r's message with @salt */
void hw_fill(uint8_t *p, uint64_t len, uint32_t salt);
int hw_verify(const uint8_t *p, uint64_t len, uint32_t salt, uint64_t *bad_at);

/* one side of a transfer: a sender or a receiver of @size bytes over @t */
struct hw_side {
	struct dvx_ht *t;
	int send;
	uint8_t *buf;		/* send: the source; receive: the destination */
	struct dvx_mr *mr;
	uint64_t size;
	uint64_t chunk;		/* bytes per chunk (the last may be shorter) */
	uint32_t nch;		/* channels used: chunk i goes on channel i % nch */
	uint32_t win;		/* requests in flight per channel (<= HW_WIN) */
	/* state */
	int phase;		/* 0 start, 1 the export's control message, 2 chunks, 3 done */
	int err;
	uint64_t per;		/* chunks per message */
	uint64_t nchunks;	/* chunks in all (per * repeats) */
	uint64_t moved;		/* bytes done */
	struct dvx_ht_desc desc;
	struct dvx_ht_rbuf remote;
	struct dvx_ht_req ctrl;
	uint64_t issued[DVX_HT_MAX_CHANNELS], done[DVX_HT_MAX_CHANNELS];
	struct dvx_ht_req req[DVX_HT_MAX_CHANNELS][HW_WIN];
};

/* set a side up (zero-copy sides trade the receive buffer's description first) */
void hw_side_init(struct hw_side *s, struct dvx_ht *t, int send, uint8_t *buf, struct dvx_mr *mr,
		  uint64_t size, uint64_t chunk, uint32_t nch, uint32_t win);

/* move the message @reps times back to back (a stream); @remote: the receiver's
 * buffer imported already (zero-copy senders skip the description's exchange; a
 * receiver given a non-NULL @remote skips its export) */
void hw_side_repeat(struct hw_side *s, uint64_t reps, const struct dvx_ht_rbuf *remote);

/* one pass: issue what the window allows, test the oldest requests; 1 when the side
 * moved something, 0 when not, or its error (also in s->err) */
int hw_side_step(struct hw_side *s);

/* drive @n sides from this thread until all are done or @timeout_ns passed: 0, the
 * first side's error, or -ETIMEDOUT */
int hw_run(struct hw_side *const *s, int n, uint64_t timeout_ns);

/* a full transfer from rank @a to @b over the pair's standalone transports, @size bytes
 * of @a's send buffer into @b's receive buffer, checked */
int hw_xfer(struct hw *w, int a, int b, uint64_t size, uint64_t chunk, uint32_t nch,
	    uint32_t salt);

/* both directions at once: @a to @b with @salt, @b to @a with @salt + 1 */
int hw_xfer2(struct hw *w, int a, int b, uint64_t size, uint64_t chunk, uint32_t nch,
	     uint32_t salt);

/* one progress pass over every transport and cache of every rank (one thread) */
void hw_progress(struct hw *w);

/* test @q until done, progressing every rank: its result, or -ETIMEDOUT */
int hw_wait(struct hw *w, struct dvx_ht_req *q, uint64_t timeout_ns);

uint64_t hw_now(void);

#endif
