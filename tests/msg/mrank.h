/* SPDX-License-Identifier: MIT */
/*
 * tests/msg/mrank.h - one rank of the messaging layer's multi-rank tests, whatever runs
 * it (a thread of msg-ranks-test, a process of msg-procs-test): K communicators to each
 * other rank connected in a rank-dependent order, rounds of traffic driven without ever
 * blocking (two tagged buffers per irecv, every byte checked, an order-independent
 * digest of what arrived), closes in a random order with the invariant checker after
 * each. How ranks meet between phases (a barrier) is the runner's.
 */
#ifndef DVX_TESTS_MRANK_H
#define DVX_TESTS_MRANK_H

#include <dvx/msg/msg.h>

#define MR_MAX_RANKS 9
#define MR_MAX_K 64
#define MR_NB 2			/* buffers per irecv */
#define MR_SLOT (64u << 10)	/* bytes per buffer */

struct mrank {
	/* set by the runner */
	int me, n, K;
	struct dvx_msg *m;
	uint8_t *buf;		/* mr_buf_bytes(n, K), registered as @mr */
	struct dvx_mr *mr;
	uint64_t timeout_ns;
	int (*barrier)(void *arg);	/* 0, or the rank stops */
	void *barrier_arg;
	uint8_t dead[MR_MAX_RANKS];	/* ranks gone: their comms are skipped */
	/* the handles to connect with: hin[q][k] is the one rank q made for this rank */
	struct dvx_msg_handle hin[MR_MAX_RANKS][MR_MAX_K];
	/* filled here */
	struct dvx_msg_handle hout[MR_MAX_RANKS][MR_MAX_K];	/* made for rank q */
	struct dvx_msg_comm *lc[MR_MAX_RANKS][MR_MAX_K], *sc[MR_MAX_RANKS][MR_MAX_K],
		*rc[MR_MAX_RANKS][MR_MAX_K];
	struct dvx_msg_req *sq[MR_MAX_RANKS][MR_MAX_K][MR_NB], *rq[MR_MAX_RANKS][MR_MAX_K];
	uint8_t rposted[MR_MAX_RANKS][MR_MAX_K], rdone[MR_MAX_RANKS][MR_MAX_K];
	uint8_t sposted[MR_MAX_RANKS][MR_MAX_K][MR_NB], sdone[MR_MAX_RANKS][MR_MAX_K][MR_NB];
	uint64_t digest;	/* a sum over every buffer that arrived: order-free */
	int fail_line;
	char why[160];
};

uint64_t mr_buf_bytes(int n, int K);

/* listen for every other rank's K connections: hout[q][k] go to rank q */
int mr_listen(struct mrank *r);

/* connect with hin[][] and accept on the listen comms until every comm exists */
int mr_connect(struct mrank *r);

/* @rounds rounds of traffic on every comm to a live rank, a barrier after each */
int mr_rounds(struct mrank *r, uint32_t rounds);

/* close every comm in an order drawn from @seed, checking after each */
int mr_close_all(struct mrank *r, uint64_t seed);

/* what a failed rank says: "line N: why" */
#define MR_FAIL(r, ...)                                                          \
	do {                                                                     \
		if (!(r)->fail_line) {                                           \
			(r)->fail_line = __LINE__;                               \
			snprintf((r)->why, sizeof((r)->why), __VA_ARGS__);      \
		}                                                                \
	} while (0)

#endif
