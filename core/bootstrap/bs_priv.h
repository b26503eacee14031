/* SPDX-License-Identifier: MIT */
/*
 * core/bootstrap/bs_priv.h - what the bootstrap's generic layer and its adapters share.
 */
#ifndef DVX_CORE_BS_PRIV_H
#define DVX_CORE_BS_PRIV_H

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include <dvx/bootstrap/bootstrap.h>

/*
 * The length of a poison message: a collective that fails for a reason other than a
 * timeout sends one to its ring successor, whose matching receive then fails with
 * -ECONNRESET (and which passes it on). Adapters carry it without payload and store it
 * in an unexpected slot whatever the slot size.
 */
#define BS_LEN_POISON ((size_t)-1)

/* struct dvx_bootstrap.magic of a live context. */
#define BS_CTX_MAGIC 0x42535458u

/*
 * The inside of a struct dvx_bootstrap_req. A posted request sits on one adapter list
 * (a peer's send queue, a rank's posted receives, a rank's waiting sends) through @next.
 */
struct bs_req {
	struct bs_req *next;
	const void *sbuf;	/* send: the caller's bytes */
	void *rbuf;		/* receive: the caller's buffer */
	uint64_t len;
	uint64_t moved;		/* bytes already moved */
	uint64_t seq;		/* sender's message number (threads adapter) */
	int32_t peer;		/* send: destination; receive: source */
	uint32_t space;
	uint32_t tag;
	int32_t err;		/* result once DONE */
	uint8_t state;		/* DVX_BOOTSTRAP_REQ_* */
	uint8_t is_send;
	uint16_t pad;
};
DVX_STATIC_ASSERT(sizeof(struct bs_req) <= sizeof(struct dvx_bootstrap_req),
		  "struct bs_req outgrew struct dvx_bootstrap_req");

static inline struct bs_req *bs_req(struct dvx_bootstrap_req *r)
{
	return (struct bs_req *)(void *)r;
}

static inline void bs_req_init(struct bs_req *r, int is_send, int peer, uint32_t space,
			       uint32_t tag, const void *sbuf, void *rbuf, size_t len)
{
	r->next = NULL;
	r->sbuf = sbuf;
	r->rbuf = rbuf;
	r->len = len;
	r->moved = 0;
	r->seq = 0;
	r->peer = peer;
	r->space = space;
	r->tag = tag;
	r->err = 0;
	r->state = DVX_BOOTSTRAP_REQ_QUEUED;
	r->is_send = (uint8_t)is_send;
	r->pad = 0;
}

static inline void bs_req_done(struct bs_req *r, int err)
{
	r->next = NULL;
	r->err = err;
	r->state = DVX_BOOTSTRAP_REQ_DONE;
}

/* A singly linked FIFO of requests. */
struct bs_list {
	struct bs_req *head;
	struct bs_req *tail;
};

static inline void bs_list_add(struct bs_list *l, struct bs_req *r)
{
	r->next = NULL;
	if (l->tail)
		l->tail->next = r;
	else
		l->head = r;
	l->tail = r;
}

/* Unlinks @r if it is on @l; returns whether it was. */
static inline int bs_list_del(struct bs_list *l, struct bs_req *r)
{
	struct bs_req *prev = NULL, *it;

	for (it = l->head; it; prev = it, it = it->next) {
		if (it != r)
			continue;
		if (prev)
			prev->next = it->next;
		else
			l->head = it->next;
		if (l->tail == it)
			l->tail = prev;
		it->next = NULL;
		return 1;
	}
	return 0;
}

static inline uint64_t bs_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* @now + @timeout_ns, saturating: the absolute deadline of a relative timeout */
static inline uint64_t bs_deadline_at(uint64_t now, uint64_t timeout_ns)
{
	return timeout_ns > UINT64_MAX - now ? UINT64_MAX : now + timeout_ns;
}

/* The deadline of a call on @bs, on its adapter's clock (CLOCK_MONOTONIC by default). */
static inline uint64_t bs_deadline(struct dvx_bootstrap *bs, uint64_t timeout_ns)
{
	uint64_t now = bs->ops->now_ns ? bs->ops->now_ns(bs) : bs_now_ns();

	return bs_deadline_at(now, timeout_ns);
}

__attribute__((format(printf, 3, 4)))
static inline void bs_log(const struct dvx_log *log, int level, const char *fmt, ...)
{
	char msg[160];
	va_list ap;

	if (!log || !log->fn || level > log->level)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log->fn(log->arg, level, msg);
}

#endif /* DVX_CORE_BS_PRIV_H */
