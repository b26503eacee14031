/* SPDX-License-Identifier: MIT */
/*
 * tools/loop.h - what dvx-loop's files share: the ranks and their set-up, the check
 * table's rows and completion waits (dvx-loop.c), the measured runs (loop-perf.c) and
 * the TCP exchange between a client and a server (loop-net.c).
 */
#ifndef DVX_TOOLS_LOOP_H
#define DVX_TOOLS_LOOP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "tool.h"

#include <dvx/hal.h>
#include <dvx/mlx5/cqe.h>
#include <dvx/nic/mr.h>
#include <dvx/nic/qp.h>

struct dvx_sim_fabric;

#define KiB 1024u
#define MiB (1024u * 1024u)

/* each rank's data buffer (one MR, iova = address): the check table's regions ... */
#define OFF_SRC 0u			/* what this rank sends: up to 1 MiB */
#define OFF_DST (1u * MiB)		/* where the peer's WRITEs land / READs come from */
#define OFF_RD (2u * MiB)		/* where READs land */
#define OFF_RECV (3u * MiB)		/* receive buffers (64 KiB) */
#define OFF_WORDS (3u * MiB + 64u * KiB)
#define OFF_SIG (OFF_WORDS + 0u)	/* the 8-byte signal word atomics target */
#define OFF_CTR (OFF_WORDS + 64u)	/* the companion's counter word */
#define OFF_RES (OFF_WORDS + 128u)	/* fetched atomic values */
#define BUF_BYTES (OFF_WORDS + 4u * KiB)
#define MAX_MSG (1u * MiB)
/* ... then, for the measured runs, the perf region: a source half and a destination
 * half of rank->cap bytes each, and a page for the guard byte after the largest
 * message (struct rank: perf_src(), perf_dst()) */
#define PERF_OFF ((BUF_BYTES + 4095u) & ~4095u)

/* queues */
#define RING_BYTES (256u * KiB)		/* each rank's queue umem */
#define SQ_DEPTH 256u
#define CQ_DEPTH 256u
#define RQ_DEPTH 64u			/* the check table */
#define PERF_RQ_DEPTH 256u		/* the measured runs: receives kept posted */
#define RQ_SGE 2u
#define COMP_DEPTH 64u
#define PART_DEPTH 64u

#define GUARD 0xa5u

enum { RES_OK = 0, RES_FAIL = 1, RES_SKIP = 2 };

/* one row of the check table (and the verdict part of a measured row) */
struct row {
	char op[32];
	char size[16];
	uint32_t iters;
	int result;
	double us;
	char why[224];
};

struct rank {
	int id;
	const char *dev;
	struct dvx_nic nic;
	uint8_t *rings;
	uint64_t carved;
	struct dvx_umem umem;
	uint8_t *buf;
	uint64_t buf_bytes;	/* BUF_BYTES, or PERF_OFF + the perf region */
	uint64_t cap;		/* the perf region's halves (0: no perf region) */
	struct dvx_mr mr;
	uint64_t *sinkbuf;
	struct dvx_mr sink;
	struct dvx_cq scq, rcq;
	struct dvx_qp qp;
	uint32_t scq_cqes;	/* CQEs requested on scq since index_base (all requester) */
	/* rank 0: the companion and its loopback responder */
	struct dvx_cq ccq, pcq;
	struct dvx_qp cqp, pqp;
	int comp;		/* companion ready */
	int partner;		/* a local partner QP instead of force-loopback */
};

/* what a measured run does (the client's choice; a server takes it from the client) */
enum loop_mode { LOOP_CHECK = 0, LOOP_BW = 1, LOOP_LAT = 2 };
enum loop_op {
	LOOP_OP_WRITE = 0,
	LOOP_OP_WRITE_IMM,
	LOOP_OP_READ,
	LOOP_OP_SEND,
	LOOP_OP_FETCH_ADD,
	LOOP_OP_CMP_SWAP,
	LOOP_OP_COUNT
};

#define PERF_SWEEP_MIN 2u		/* -a starts at 2 bytes, as perftest does */
#define PERF_SWEEP_MAX (8u * MiB)	/* and ends at 8 MiB unless -s says */
#define PERF_SIZE_MAX (1u << 30)	/* log_max_msg 30 on ConnectX and the sim */
#define PERF_ITERS 1000u		/* -n default of a measured run */
#define PERF_TX_DEPTH 128u
#define PERF_CQ_MOD 16u
#define PERF_PORT 18515u		/* perftest's default port */
#define PERF_ACCEPT_S 120u		/* how long a server waits for its client */
#define PERF_MAX_ROWS 40u

struct perf_cfg {
	int mode;		/* LOOP_BW or LOOP_LAT */
	int op;			/* enum loop_op */
	int sweep;		/* -a: powers of two from 2 up to @size */
	uint32_t size;		/* -s, or the sweep's largest size */
	uint64_t iters;		/* -n per size; 0 with -D */
	uint32_t duration_s;	/* -D per size; 0 with -n */
	uint32_t tx_depth;	/* bw: WQEs in flight */
	uint32_t cq_mod;	/* bw: one signaled WQE in this many */
};

struct loop {
	const struct dvx_hal *hal;
	int sim;
	int ib;
	int trace;
	int thread;		/* the sim's progress thread runs */
	uint32_t iters;
	uint64_t timeout_ns;
	const char *devs[2];
	int ndevs;
	struct rank r[2];
	int atomics;		/* both NICs do 8-byte atomics */
	uint32_t fault_row;	/* --fault-row: 1-based row run with sim_1's port down */
	int broken;		/* the QPs could not be recovered after a failure */
	char broken_why[160];
	struct row rows[16];
	int nrows;
	/* output and the measured runs */
	int json;		/* --json: one JSON object on stdout, nothing else there */
	int progress;		/* a progress line on stderr every second */
	int mode;		/* enum loop_mode */
	struct perf_cfg perf;
	int iters_given, size_given;
	const char *listen;	/* --listen [ADDR:]PORT */
	const char *connect;	/* --connect HOST[:PORT] */
	int procs;		/* --procs N (2) */
	const char *wire_addr;	/* --wire: where this rank's software NIC listens */
	uint32_t accept_s;	/* --accept-timeout */
	const char *record;	/* --record FILE: the run traced (dvx/hal/trace.h) */
	FILE *record_f;
	struct dvx_trace *tracer;
#ifdef CONFIG_DVX_SIM
	void *fab_mem;
	struct dvx_sim_fabric *fab;
	unsigned trace_wqes, trace_cqes, trace_bad;
#endif
};

extern const char *loop_prog;

/* ---- small helpers ---- */

static inline uint64_t loop_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t loop_va(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

static inline uint64_t loop_load64(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void loop_store64(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* an 8-byte atomic result as the NIC wrote it, in host order */
static inline uint64_t loop_atomic_result(const struct rank *r, const uint64_t *p)
{
	uint64_t v = loop_load64(p);

	return r->nic.atomic_be_results ? dvx_be64_to_cpu((DVX_FORCE dvx_be64)v) : v;
}

static inline uint8_t *perf_src(const struct rank *r)
{
	return r->buf + PERF_OFF;
}

static inline uint8_t *perf_dst(const struct rank *r)
{
	return r->buf + PERF_OFF + r->cap;
}

/* ---- loop-common.c: shared by dvx-loop.c, loop-perf.c and loop-procs.c ---- */

/* a rank's CQ and QP in its own memory (loop_zalloc()), the set-up failure reported */
int loop_make_cq(struct rank *r, uint32_t depth, struct dvx_cq *cq);
int loop_make_qp(struct rank *r, uint32_t sq_depth, uint32_t rq_depth, struct dvx_cq *scq,
		 struct dvx_cq *rcq, struct dvx_uar *uar, uint32_t flags, uint32_t psn,
		 struct dvx_qp *qp);
void *loop_zalloc(size_t align, size_t len);
int loop_setup_fail(struct rank *r, const char *what, int err);
void loop_fill(uint8_t *p, uint64_t len, uint64_t seed);
void loop_rfail(struct row *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* an atomic's fetched value (as @r's NIC wrote it) against @want; a row failure if not */
int loop_fetched_ok(struct row *w, const struct rank *r, const uint64_t *res, uint64_t want,
		    uint32_t iter);
void loop_progress(const struct loop *L, struct rank *r);
int loop_wait_cqe(const struct loop *L, struct rank *r, struct dvx_cq *cq,
		  struct dvx_mlx5_cqe_info *info);
void loop_cqe_fail(struct row *w, const char *what, uint64_t iter, int rc,
		   const struct dvx_mlx5_cqe_info *i);
int loop_rank_open(struct loop *L, struct rank *r);
void loop_rank_close(struct rank *r);
void loop_conn_attr(int atomics, struct dvx_qp_connect_cfg *ca);
void loop_size_name(uint64_t len, char *buf, size_t n);
void loop_json_str(FILE *f, const char *s);
const char *loop_backend_name(const struct loop *L);
void loop_print_head(const struct loop *L);
void loop_print_row(const struct loop *L, const struct row *w);

/* ---- loop-procs.c: the check table with the ranks as processes ---- */

/* --procs @nprocs (2: fork), or 0 under an MPI launcher; the exit status */
int loop_procs_run(struct loop *L, int nprocs);

/* ---- loop-perf.c: the measured runs ---- */

const char *perf_op_name(int op);		/* "RDMA WRITE", ... */
const char *perf_op_arg(int op);		/* "write", ... */
int perf_op_parse(const char *s);		/* enum loop_op, or -1 */
int perf_op_atomic(int op);
/* run the measured test between L->r[0] and L->r[1] in this thread, no TCP */
int perf_run_local(struct loop *L);
/* client and/or server over TCP (--listen, --connect, or both in one process) */
int perf_run_tcp(struct loop *L);

/* ---- loop-net.c: the TCP exchange ---- */

/* message types */
enum {
	NET_HELLO = 1,		/* client -> server: the test and the client's endpoint */
	NET_WELCOME,		/* server -> client: status, the server's endpoint */
	NET_BEGIN,		/* client -> server: a size starts */
	NET_READY,		/* server -> client: prepared for it */
	NET_BEAT,		/* client -> server: alive, operations so far */
	NET_END,		/* client -> server: the size is done, operations, status */
	NET_VERDICT,		/* server -> client: what the server checked */
	NET_BYE,		/* client -> server: nothing more */
	NET_TYPE_MAX = NET_BYE
};

#define NET_FRAME 256u
#define NET_VERSION 1u
#define NET_TEXT 96u

/* what each side tells the other about its QP and buffer */
struct net_ep {
	struct dvx_qp_conn conn;	/* QPN, PSN, GID/LID, MTU, link layer */
	uint64_t addr;			/* the perf region (source half, then destination) */
	uint64_t cap;			/* bytes of each half */
	uint32_t rkey;
	uint8_t atomics;		/* the NIC does 8-byte atomics */
};

struct net_msg {
	uint16_t type;
	int32_t status;		/* WELCOME, READY, END, VERDICT: 0 or a negative errno */
	uint8_t mode, op, sweep;
	uint32_t size;		/* HELLO: the largest size; BEGIN, END, VERDICT: this size */
	uint32_t duration_s;
	uint32_t tx_depth;
	uint32_t cq_mod;
	uint64_t iters;		/* HELLO: -n; BEAT, END, VERDICT: operations done */
	struct net_ep ep;	/* HELLO, WELCOME */
	char text[NET_TEXT];	/* why, when status is not 0 */
};

void net_encode(const struct net_msg *m, uint8_t frame[NET_FRAME]);
int net_decode(const uint8_t frame[NET_FRAME], struct net_msg *m);
/* "[ADDR:]PORT" (@listen) or "HOST[:PORT]" (port 0 when absent); 0 or -EINVAL with @err */
int net_parse_addr(const char *s, int listen, struct dvx_hal_sock_addr *a, char *err,
		   size_t n);
void net_addr_str(const struct dvx_hal_sock_addr *a, char *buf, size_t n);
int net_listen(const struct dvx_hal *hal, const struct dvx_hal_sock_addr *a, int *lfd,
	       struct dvx_hal_sock_addr *bound);
int net_accept(const struct dvx_hal *hal, int lfd, uint64_t timeout_ns, const int *cancel,
	       int *fd);
int net_connect(const struct dvx_hal *hal, const struct dvx_hal_sock_addr *a,
		uint64_t timeout_ns, int *fd);
int net_send(const struct dvx_hal *hal, int fd, const struct net_msg *m, uint64_t timeout_ns);
int net_recv(const struct dvx_hal *hal, int fd, struct net_msg *m, uint64_t timeout_ns);
int net_readable(const struct dvx_hal *hal, int fd);
void net_close(const struct dvx_hal *hal, int *fd);

#endif
