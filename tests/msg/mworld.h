/* SPDX-License-Identifier: MIT */
/*
 * tests/msg/mworld.h - contexts of the messaging layer (dvx/msg/msg.h), one per rank,
 * each on its own software NIC of one fabric, for the layer's tests and benchmark.
 * Single-threaded use drives every rank from one thread (the sim is stepped by each
 * test() call); threaded use gives each rank a thread and runs the sim's progress
 * thread.
 */
#ifndef DVX_TESTS_MWORLD_H
#define DVX_TESTS_MWORLD_H

#include <dvx/msg/msg.h>
#include <dvx/hal/sim.h>

#define MW_MAX 9
#define MW_SEC 1000000000ull

struct mw_rank {
	struct dvx_nic nic;
	struct dvx_msg m;
	void *state, *fifo, *rings;
	uint64_t state_len, fifo_len, rings_len;
	uint8_t *buf;		/* buf_len bytes registered as @mr */
	struct dvx_mr mr;
};

struct mw {
	int n;
	uint64_t buf_len;
	void *fab_mem;		/* fab_len bytes: the software NICs' whole state */
	size_t fab_len;
	struct dvx_sim_fabric *fab;
	int threaded;
	struct dvx_msg_cfg cfg;
	struct mw_rank r[MW_MAX];
};

/* @n ranks with contexts of @cfg (nics filled in here), @buf_len bytes of buffer each;
 * @threaded: the sim's progress thread runs. 0 or a negative errno. */
int mw_init(struct mw *w, int n, const struct dvx_msg_cfg *cfg, uint64_t buf_len, int threaded);

/* every context's fini, the NICs closed, the fabric checked empty and released: 0, or
 * the first error (-EBUSY when the sim still counts objects) */
int mw_fini(struct mw *w);

/* one progress pass over every context (single-threaded use) */
void mw_progress(struct mw *w);

/* single-threaded: rank @a connects to a new listen comm of rank @b (closed after) */
int mw_pair(struct mw *w, int a, int b, uint32_t nqps, struct dvx_msg_comm **send,
	    struct dvx_msg_comm **recv);

/* test @q until done (progressing every context, or only its own with @w NULL);
 * its result, -ETIMEDOUT after @timeout_ns */
int mw_wait(struct mw *w, struct dvx_msg_req *q, size_t *sizes, uint64_t timeout_ns);

/* isend / irecv, called again while they hand out no request (progressing @w) */
int mw_isend(struct mw *w, struct dvx_msg_comm *c, const void *buf, size_t size, uint32_t tag,
	     const struct dvx_mr *mr, struct dvx_msg_req **q, uint64_t timeout_ns);
int mw_irecv(struct mw *w, struct dvx_msg_comm *c, int n, void *const *bufs, const size_t *sizes,
	     const uint32_t *tags, struct dvx_mr *const *mrs, struct dvx_msg_req **q,
	     uint64_t timeout_ns);

/* progress every context until none has a closing communicator (closes finish as
 * their peers' markers and their completions come in): 0, or -ETIMEDOUT after 10 s */
int mw_settle(struct mw *w);

/* dvx_msg_check() of every context: 0, or -EUCLEAN with the rank and the reason printed */
int mw_check(struct mw *w);

uint64_t mw_now(void);

/* a message's bytes from @seed: byte @i, @len of them at @p, and the first byte that
 * differs (-1: none) */
uint8_t mw_pat(uint32_t seed, uint64_t i);
void mw_fill(uint8_t *p, uint64_t len, uint32_t seed);
int64_t mw_verify(const uint8_t *p, uint64_t len, uint32_t seed);

/* set by a case that tests the FIFO clear-to-send itself: DVX_MSG_TEST_OFFLOAD=1 (every
 * context asks for the CTS receiver offload) leaves its contexts alone */
extern int mw_fifo_only;

/* while set, the capacities of the fabrics mw_init() makes (max_nics: its @n); else
 * 1200 QPs and CQs per NIC. A harness that copies the fabric's memory, or whose sim
 * passes walk its tables, sets them small */
extern const struct dvx_sim_fabric_cfg *mw_fab_cfg;

#endif
