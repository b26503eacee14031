/* SPDX-License-Identifier: MIT */
/*
 * dvx/hal/trace.h - the tracing hal backend: record a run for bring-up, replay it later.
 *
 * A struct dvx_trace wraps another backend (the linux one on a first real machine, the
 * software NIC in CI) and hands out a hal instance of its own. Every NIC call goes
 * through to the wrapped backend and is recorded with its arguments and results, the
 * command mailboxes in and out included. The data path, which never calls the hal, is
 * observed the way the software NIC observes it: the tracer gives the caller UAR
 * registers in its own memory, and at each progress call (dvx's waits make one between
 * two polls) it takes every doorbell written there, records it with the doorbell record
 * and the WQE bytes it covers, passes it on to the real register, and records every new
 * receive WQE and every new CQE of the queues it saw created. docs/trace.md gives the
 * format (versioned) and why the tracer works this way; tools/dvx-replay feeds a trace
 * into the software NIC and reports the first divergence.
 *
 * Nothing is allocated and nothing is printed: the records go to the caller's sink.
 * The host and GPU tables of the wrapped backend are passed through untouched.
 */
#ifndef DVX_HAL_TRACE_H
#define DVX_HAL_TRACE_H

#include <dvx/hal/nic.h>

DVX_BEGIN_DECLS

/* ---- the format (docs/trace.md) ---- */

#define DVX_TRACE_MAGIC "DVXTRACE"		/* the first 8 bytes of a trace */
#define DVX_TRACE_VERSION 1u
#define DVX_TRACE_FILE_HDR_BYTES 16u		/* magic, u32 version, u32 header bytes */
#define DVX_TRACE_REC_HDR_BYTES 16u		/* u16 type, u16 dev, u32 len, u64 seq */

/** enum dvx_trace_rec - record types. */
enum dvx_trace_rec {
	DVX_TRACE_REC_CALL = 1,		/* a hal call, its arguments and results */
	DVX_TRACE_REC_DOORBELL = 2,	/* a doorbell, its record and the WQEs it covers */
	DVX_TRACE_REC_RECV = 3,		/* receive WQEs published through an RQ record */
	DVX_TRACE_REC_CQE = 4,		/* a CQE the device wrote */
};

/** enum dvx_trace_op - the hal call of a DVX_TRACE_REC_CALL record. */
enum dvx_trace_op {
	DVX_TRACE_OP_NIC_OPEN = 1,
	DVX_TRACE_OP_NIC_CLOSE,
	DVX_TRACE_OP_NIC_QUERY,
	DVX_TRACE_OP_QUERY_PORT,
	DVX_TRACE_OP_QUERY_GID,
	DVX_TRACE_OP_DEVX_CMD,
	DVX_TRACE_OP_OBJ_CREATE,
	DVX_TRACE_OP_OBJ_MODIFY,
	DVX_TRACE_OP_OBJ_QUERY,
	DVX_TRACE_OP_OBJ_DESTROY,
	DVX_TRACE_OP_UMEM_REG,
	DVX_TRACE_OP_UMEM_DEREG,
	DVX_TRACE_OP_UAR_ALLOC,
	DVX_TRACE_OP_UAR_FREE,
	DVX_TRACE_OP_PD_ALLOC,
	DVX_TRACE_OP_PD_FREE,
	DVX_TRACE_OP_EQN_QUERY,
	DVX_TRACE_OP_MR_REG,
	DVX_TRACE_OP_MR_DEREG,
	DVX_TRACE_OP_ROCE_RMAC,
	DVX_TRACE_OP_COUNT
};

/* fixed part of a CALL payload: u16 op, u16 rsvd, i32 ret, u32 id, u32 id2,
 * u64 a[4], u32 in_len, u32 out_len; then in_len and out_len bytes */
#define DVX_TRACE_CALL_BYTES 56u
/* fixed part of a DOORBELL payload: u32 page_id, u32 reg_off, u32 qpn, u32 dbr,
 * u64 raw (the 8 bytes as written, most significant first), u32 first, u32 n,
 * u32 flags (DVX_TRACE_DB_*), u32 rsvd; then n WQEBBs of 64 bytes */
#define DVX_TRACE_DB_BYTES 40u
/* the doorbell the QP's record called for, whose register write another QP's doorbell
 * on the same register overwrote before the tracer took it (docs/trace.md) */
#define DVX_TRACE_DB_FROM_RECORD 1u
/* fixed part of a RECV payload: u32 qpn, u32 dbr, u32 first, u32 n, u32 stride; then
 * n receive WQEs of stride bytes */
#define DVX_TRACE_RECV_BYTES 20u
/* a CQE payload: u32 cqn, u32 index, the 64 bytes */
#define DVX_TRACE_CQE_BYTES 72u

/* ---- the tracer ---- */

#define DVX_TRACE_MAX_NICS 8
#define DVX_TRACE_MAX_UARS 32
#define DVX_TRACE_MAX_UMEMS 64
#define DVX_TRACE_MAX_CQS 64
#define DVX_TRACE_MAX_QPS 64

/**
 * struct dvx_trace_sink - where records go.
 * @write:	called with consecutive pieces of the trace, in order (a record may come
 *		in several pieces); returns 0, or non-zero to count a lost piece. Called
 *		with the tracer's lock held, from the thread making the hal call
 * @arg:	passed to @write
 */
struct dvx_trace_sink {
	int (*write)(void *arg, const void *buf, size_t len);
	void *arg;
};

/* the tracer's view of the device's objects: what it must find again on its own */
struct dvx_trace_nic {
	struct dvx_hal_nic inner;	/* the wrapped backend's handle */
	uint8_t live;
	uint8_t rsvd[7];
};

struct dvx_trace_uar {
	uint8_t live;
	uint8_t dev;
	uint8_t rsvd[2];
	uint32_t page_id;
	uint32_t reg_off;		/* the register's offset in its page */
	uint32_t bf_half;		/* 0, or the offset of the second BlueFlame half */
	void *real_reg;			/* the wrapped backend's register and page */
	void *real_base;
	uint64_t shadow[512];		/* the page the caller writes (4 KiB, 8-aligned) */
};

struct dvx_trace_umem {
	uint8_t live;
	uint8_t dev;
	uint8_t rsvd[2];
	uint32_t id;
	uint8_t *addr;			/* NULL: the CPU cannot read it (dma-buf) */
	uint64_t len;
};

struct dvx_trace_cq {
	uint8_t live;
	uint8_t dev;
	uint8_t log_size;
	uint8_t skip;			/* collapsed or unreadable: not scanned */
	uint32_t cqn;
	const uint8_t *ring;
	uint64_t ci;			/* the next entry the tracer looks at */
};

struct dvx_trace_qp {
	uint8_t live;
	uint8_t dev;
	uint8_t log_sq;
	uint8_t log_rq;			/* 0xff: no regular RQ */
	uint32_t qpn;
	uint32_t rq_stride;
	uint32_t uar_page;		/* the register its doorbells go to */
	const uint8_t *sq;		/* NULL: not readable */
	const uint8_t *rq;
	const uint8_t *dbrec;
	uint64_t sq_next;		/* the WQEBB after the last one recorded */
	uint64_t rq_next;		/* the receive WQE after the last one recorded */
};

/**
 * struct dvx_trace - the tracing backend, in caller storage (about 200 KiB: static or
 * heap). Read the counters; set nothing else directly.
 * @hal:	what dvx_trace_hal() returns
 * @records:	records written
 * @lost:	sink writes that failed (records incomplete from there)
 * @unknown_db:	doorbells naming no QP the tracer saw created (forwarded, recorded)
 * @from_record: doorbells passed on because a QP's record was ahead of every doorbell
 *		taken for it (its register write overwritten in the shared register)
 */
struct dvx_trace {
	struct dvx_hal hal;
	const struct dvx_hal *inner;
	struct dvx_trace_sink sink;
	uint64_t seq;
	uint64_t records;
	uint64_t lost;
	uint64_t unknown_db;
	uint64_t from_record;
	int32_t lock;
	uint32_t rsvd;
	struct dvx_trace_nic nic[DVX_TRACE_MAX_NICS];
	struct dvx_trace_uar uar[DVX_TRACE_MAX_UARS];
	struct dvx_trace_umem umem[DVX_TRACE_MAX_UMEMS];
	struct dvx_trace_cq cq[DVX_TRACE_MAX_CQS];
	struct dvx_trace_qp qp[DVX_TRACE_MAX_QPS];
};

/**
 * dvx_trace_init() - set up a tracer over @inner and write the trace's header.
 * @t:		caller storage, overwritten
 * @inner:	the backend to trace (its NIC table is wrapped, host and GPU passed on)
 * @sink:	where the records go (copied)
 *
 * Context: set-up, before any NIC is opened through it. Return: 0, -EINVAL for a NULL
 * argument or a backend without a NIC table, -EIO when the sink refused the header.
 */
int dvx_trace_init(struct dvx_trace *t, const struct dvx_hal *inner,
		   const struct dvx_trace_sink *sink);

/**
 * dvx_trace_hal() - the hal instance to open NICs through.
 * @t:		an initialised tracer
 *
 * Return: &t->hal (valid as long as @t), NULL for a NULL @t.
 */
const struct dvx_hal *dvx_trace_hal(struct dvx_trace *t);

/**
 * dvx_trace_pump() - pass the doorbells written since the last call on to the device,
 * recording them and the WQEs they cover, then record new receive WQEs and CQEs.
 * @t:		the tracer
 *
 * The tracer's nic_progress does this (before and after the wrapped backend's own
 * progress); call it directly where code rings without ever calling
 * dvx_hal_nic_progress().
 *
 * Context: any thread. Return: nothing.
 */
void dvx_trace_pump(struct dvx_trace *t);

/**
 * dvx_trace_fini() - the end of a trace: everything still pending is pumped.
 * @t:		the tracer; every NIC opened through it must be closed
 *
 * Context: teardown. Return: 0; -EBUSY while a NIC is open; -EIO when sink writes were
 * lost (the trace is incomplete).
 */
int dvx_trace_fini(struct dvx_trace *t);

DVX_END_DECLS

#endif /* DVX_HAL_TRACE_H */
