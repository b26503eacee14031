// SPDX-License-Identifier: MIT
/*
 * core/bootstrap/mpi/mpi.c - the MPI adapter: the bootstrap's primitives over two duplicates
 * of a caller's communicator (docs/bootstrap.md, Adapter 3).
 *
 * This is the one file of core/ that includes a header from outside dvx besides the C
 * library: <mpi.h>, built only with CONFIG_DVX_MPI (scripts/check-layers.sh knows it).
 * MPI is a bootstrap here, not a device: nothing below it is reached through it.
 *
 * Matching. MPI matches (communicator, source, tag) and keeps messages with the same
 * triple in order, which is exactly the bootstrap's rule, so messages go straight into
 * the caller's buffers with no store of our own. Two duplicates of the caller's
 * communicator keep the bootstrap apart from the application: "msg" carries send/recv,
 * its MPI tag the context's space in the top 8 bits and the caller's tag below them;
 * "coll" carries the collectives' ring steps on MPI tag (space << 1), their poison on
 * (space << 1) | 1 and the goodbye of a leaving rank on MPI_TAG_UB. The collective's
 * number is not in the tag: every ring step between two ranks of one context is posted
 * in the same order on both sides, so MPI's order is enough.
 *
 * Poison and goodbye carry the sender's id, 8 bytes that every rank drew at init (its
 * clock and the address of its state) and that the ranks allgathered, so that one can
 * never be taken for another context's; a stray one is dropped. The communicators are
 * not freed at the end (see mpi_put()), so MPI never reuses their context ids.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>

#include <mpi.h>

#include <dvx/hal.h>

#include "../bs_priv.h"

#define MPI_MAGIC 0x4d504942u		/* "MPIB" */
#define SPACE_BITS 8u
#define SPACE_MAX ((1u << SPACE_BITS) - 1)
#define IDLE_SPINS 64u			/* rounds without progress before sleeping */
#define IDLE_SLEEP_NS 20000ull		/* then this long between rounds */

/* The adapter's shared state, at the start of the caller's memory. */
struct bs_mpi {
	uint32_t magic;
	int32_t refs;
	int32_t rank;
	int32_t nranks;
	uint32_t next_space;
	uint32_t tbits;			/* bits of a caller's tag in a "msg" MPI tag */
	int32_t goodbye_tag;		/* MPI_TAG_UB */
	int32_t err_class;		/* the last MPI failure's error class */
	uint32_t we_init;		/* MPI_Init_thread was ours: finalise at the end */
	uint32_t pad;
	MPI_Comm msg;
	MPI_Comm coll;
	const struct dvx_hal *hal;
	struct dvx_log log;
	pthread_mutex_t lock;
	uint64_t *gone;			/* nranks bits: ranks that said goodbye */
	uint64_t ids[];			/* every rank's id, for poison and goodbye */
};
DVX_STATIC_ASSERT(sizeof(struct bs_mpi) <= DVX_BOOTSTRAP_MPI_HDR_BYTES,
		  "struct bs_mpi outgrew DVX_BOOTSTRAP_MPI_HDR_BYTES");
/* the MPI request lives in bs_req.seq, which only the threads adapter uses */
DVX_STATIC_ASSERT(sizeof(MPI_Request) <= sizeof(uint64_t), "MPI_Request is larger than 8 bytes");

static const struct dvx_bootstrap_ops bs_mpi_ops;

static MPI_Request *mreq(struct bs_req *r)
{
	return (MPI_Request *)(void *)&r->seq;
}

static int is_gone(const struct bs_mpi *st, int rank)
{
	return (int)((st->gone[rank / 64] >> (rank % 64)) & 1);
}

/* An MPI error code to a negative errno, once; the class is kept for the caller. */
static int mpi_err(struct bs_mpi *st, const struct dvx_log *log, const char *what, int code)
{
	char text[MPI_MAX_ERROR_STRING];
	int cls = MPI_ERR_OTHER, n = 0;

	if (MPI_Error_class(code, &cls) != MPI_SUCCESS)
		cls = MPI_ERR_OTHER;
	if (st)
		__atomic_store_n(&st->err_class, cls, __ATOMIC_RELAXED);
	if (log && log->fn) {
		if (MPI_Error_string(code, text, &n) != MPI_SUCCESS || n <= 0)
			snprintf(text, sizeof(text), "MPI error %d", code);
		bs_log(log, DVX_LOG_ERR, "bootstrap mpi: %s: %.100s (class %d)", what, text, cls);
	}
	switch (cls) {
	case MPI_ERR_TRUNCATE:
		return -EMSGSIZE;
	case MPI_ERR_NO_MEM:
		return -ENOMEM;
	case MPI_ERR_BUFFER:
	case MPI_ERR_COUNT:
	case MPI_ERR_TYPE:
	case MPI_ERR_TAG:
	case MPI_ERR_COMM:
	case MPI_ERR_RANK:
	case MPI_ERR_ARG:
	case MPI_ERR_GROUP:
	case MPI_ERR_REQUEST:
		return -EINVAL;
	case MPI_ERR_UNSUPPORTED_OPERATION:
		return -EOPNOTSUPP;
	default:
		return -EIO;
	}
}

/* The communicator and MPI tag of (@space, @tag), or -EINVAL when they do not fit. */
static int mpi_route(const struct bs_mpi *st, uint32_t space, uint32_t tag, int poison,
		     MPI_Comm *comm, int *mtag)
{
	uint32_t s = space & ~DVX_BOOTSTRAP_SPACE_INTERNAL;

	if (s > SPACE_MAX)
		return -EINVAL;
	if (space & DVX_BOOTSTRAP_SPACE_INTERNAL) {
		*comm = st->coll;
		*mtag = (int)((s << 1) | (poison ? 1u : 0u));
		return 0;
	}
	if (st->tbits < 32 && (tag >> st->tbits))
		return -EINVAL;
	*comm = st->msg;
	*mtag = (int)((s << st->tbits) | tag);
	return 0;
}

static int mpi_post_send(struct dvx_bootstrap *bs, struct dvx_bootstrap_req *req, int peer,
			 uint32_t space, uint32_t tag, const void *buf, size_t len)
{
	struct bs_mpi *st = bs->priv;
	struct bs_req *r = bs_req(req);
	int poison = len == BS_LEN_POISON, mtag, e, ret;
	MPI_Comm comm;

	ret = mpi_route(st, space, tag, poison, &comm, &mtag);
	if (ret)
		return ret;
	pthread_mutex_lock(&st->lock);
	bs_req_init(r, 1, peer, space, tag, buf, NULL, len);
	if (!poison && len > INT_MAX) {
		bs_req_done(r, -EMSGSIZE);
	} else if (is_gone(st, peer)) {
		bs_req_done(r, -ECONNRESET);
	} else {
		if (poison)	/* the id stays in place as long as the state */
			e = MPI_Isend(&st->ids[st->rank], 1, MPI_UINT64_T, peer, mtag, comm,
				      mreq(r));
		else
			e = MPI_Isend(buf, (int)len, MPI_BYTE, peer, mtag, comm, mreq(r));
		if (e != MPI_SUCCESS)
			bs_req_done(r, mpi_err(st, &st->log, "MPI_Isend", e));
	}
	pthread_mutex_unlock(&st->lock);
	return 0;
}

static int mpi_post_recv(struct dvx_bootstrap *bs, struct dvx_bootstrap_req *req, int peer,
			 uint32_t space, uint32_t tag, void *buf, size_t len)
{
	struct bs_mpi *st = bs->priv;
	struct bs_req *r = bs_req(req);
	int mtag, e, ret;
	MPI_Comm comm;

	ret = mpi_route(st, space, tag, 0, &comm, &mtag);
	if (ret)
		return ret;
	pthread_mutex_lock(&st->lock);
	bs_req_init(r, 0, peer, space, tag, NULL, buf, len);
	if (len > INT_MAX) {
		bs_req_done(r, -EMSGSIZE);
	} else {
		/* a departed rank's messages may still be here: receive them first */
		e = MPI_Irecv(buf, (int)len, MPI_BYTE, peer, mtag, comm, mreq(r));
		if (e != MPI_SUCCESS)
			bs_req_done(r, mpi_err(st, &st->log, "MPI_Irecv", e));
	}
	pthread_mutex_unlock(&st->lock);
	return 0;
}

/* A receive that completed: was it the length asked for? */
static void mpi_recv_done(struct bs_req *r, MPI_Status *status)
{
	int count = 0;

	if (MPI_Get_count(status, MPI_BYTE, &count) != MPI_SUCCESS || (uint64_t)count != r->len) {
		bs_req_done(r, -EMSGSIZE);
		return;
	}
	r->moved = r->len;
	bs_req_done(r, 0);
}

/* Withdraw a request MPI still holds; for a receive, it may complete instead (1). */
static int mpi_withdraw(struct bs_mpi *st, struct bs_req *r)
{
	MPI_Status status;
	int cancelled = 0;

	MPI_Cancel(mreq(r));
	if (!r->is_send) {
		/* a receive is either cancelled or complete once MPI_Cancel returns */
		MPI_Wait(mreq(r), &status);
		MPI_Test_cancelled(&status, &cancelled);
		if (!cancelled) {
			mpi_recv_done(r, &status);
			return 1;
		}
		return 0;
	}
	/* a send may never be matched: let MPI finish or drop it on its own */
	MPI_Request_free(mreq(r));
	return 0;
}

/*
 * Receive one message of (@src, @mtag) on "coll" that the probe found; returns whether it
 * is from this context (a poison or goodbye carries its sender's id; see the top).
 */
static int mpi_take_signal(struct bs_mpi *st, int src, int mtag)
{
	uint64_t id = 0;
	MPI_Status status;
	int count = 0;

	if (MPI_Recv(&id, 1, MPI_UINT64_T, src, mtag, st->coll, &status) != MPI_SUCCESS)
		return 0;
	return MPI_Get_count(&status, MPI_UINT64_T, &count) == MPI_SUCCESS && count == 1 &&
	       id == st->ids[src];
}

/* Take in the goodbyes of ranks that left; returns whether there was one. */
static int mpi_goodbyes(struct bs_mpi *st)
{
	MPI_Status status;
	int flag = 0, got = 0, src;

	for (;;) {
		if (MPI_Iprobe(MPI_ANY_SOURCE, st->goodbye_tag, st->coll, &flag, &status) !=
		    MPI_SUCCESS || !flag)
			return got;
		src = status.MPI_SOURCE;
		if (mpi_take_signal(st, src, st->goodbye_tag)) {
			st->gone[src / 64] |= 1ull << (src % 64);
			got = 1;
		}
	}
}

/* One look at a posted request; returns whether it finished. */
static int mpi_test_one(struct bs_mpi *st, struct bs_req *r)
{
	MPI_Status status;
	int flag = 0, e, mtag;
	MPI_Comm comm;

	e = MPI_Test(mreq(r), &flag, &status);
	if (e != MPI_SUCCESS) {
		bs_req_done(r, mpi_err(st, &st->log, "MPI_Test", e));
		return 1;
	}
	if (flag) {
		if (r->is_send)
			bs_req_done(r, 0);
		else
			mpi_recv_done(r, &status);
		return 1;
	}
	if (!r->is_send && (r->space & DVX_BOOTSTRAP_SPACE_INTERNAL) &&
	    !mpi_route(st, r->space, 0, 1, &comm, &mtag)) {
		/* the ring predecessor's collective failed: it passed on its poison */
		if (MPI_Iprobe(r->peer, mtag, comm, &flag, &status) == MPI_SUCCESS && flag &&
		    mpi_take_signal(st, r->peer, mtag)) {
			if (mpi_withdraw(st, r) == 0)
				bs_req_done(r, -ECONNRESET);
			return 1;
		}
	}
	if (is_gone(st, r->peer)) {
		/* it left: what it sent before is received, the rest never comes */
		if (mpi_withdraw(st, r) == 0)
			bs_req_done(r, -ECONNRESET);
		return 1;
	}
	return 0;
}

static int mpi_wait(struct dvx_bootstrap *bs, struct dvx_bootstrap_req *const *reqs, int n,
		    uint64_t deadline, int all_ranks)
{
	struct bs_mpi *st = bs->priv;
	uint32_t idle = 0;
	int i, ret, pending, moved;

	(void)all_ranks;	/* MPI reports no failed rank short of ending the job */
	pthread_mutex_lock(&st->lock);
	for (;;) {
		moved = mpi_goodbyes(st);
		pending = 0;
		ret = 0;
		for (i = 0; i < n; i++) {
			struct bs_req *r = bs_req(reqs[i]);

			if (r->state != DVX_BOOTSTRAP_REQ_DONE) {
				if (!mpi_test_one(st, r)) {
					pending++;
					continue;
				}
				moved = 1;
			}
			if (r->err && !ret)
				ret = r->err;
		}
		if (ret || !pending)
			break;
		if (dvx_hal_now_ns(st->hal) >= deadline) {
			ret = -ETIMEDOUT;
			break;
		}
		/* MPI progresses inside MPI_Test; an oversubscribed job needs the core back */
		idle = moved ? 0 : idle + 1;
		if (idle >= IDLE_SPINS)
			dvx_hal_sleep_ns(st->hal, IDLE_SLEEP_NS);
	}
	pthread_mutex_unlock(&st->lock);
	return ret;
}

static int mpi_cancel(struct dvx_bootstrap *bs, struct dvx_bootstrap_req *req, int force)
{
	struct bs_mpi *st = bs->priv;
	struct bs_req *r = bs_req(req);
	int ret = 0, flag = 0;

	pthread_mutex_lock(&st->lock);
	if (r->state == DVX_BOOTSTRAP_REQ_DONE) {
		ret = 1;
		goto out;
	}
	if (r->state == DVX_BOOTSTRAP_REQ_IDLE)
		goto out;
	if (r->is_send) {
		/* MPI cannot say whether a send moved bytes: one that is not complete stays
		 * pending unless forced */
		if (MPI_Test(mreq(r), &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && flag) {
			bs_req_done(r, 0);
			ret = 1;
			goto out;
		}
		if (!force) {
			ret = -EBUSY;
			goto out;
		}
	}
	if (mpi_withdraw(st, r) == 1) {
		ret = 1;
		goto out;
	}
	r->state = DVX_BOOTSTRAP_REQ_IDLE;
out:
	pthread_mutex_unlock(&st->lock);
	return ret;
}

static uint32_t mpi_new_space(struct dvx_bootstrap *bs)
{
	struct bs_mpi *st = bs->priv;
	uint32_t s = 0;

	pthread_mutex_lock(&st->lock);
	if (st->next_space < SPACE_MAX)
		s = ++st->next_space;
	pthread_mutex_unlock(&st->lock);
	return s;	/* 0: exhausted (-ENOSPC) */
}

static void mpi_get(struct dvx_bootstrap *bs)
{
	struct bs_mpi *st = bs->priv;

	pthread_mutex_lock(&st->lock);
	st->refs++;
	pthread_mutex_unlock(&st->lock);
}

static void mpi_put(struct dvx_bootstrap *bs)
{
	struct bs_mpi *st = bs->priv;
	MPI_Request req;
	int last, p;

	pthread_mutex_lock(&st->lock);
	last = --st->refs == 0;
	if (last) {
		/* the others learn we left; 8 bytes go eagerly, so the wait does not block on
		 * a rank that is not receiving */
		for (p = 0; p < st->nranks; p++) {
			if (p == st->rank || is_gone(st, p))
				continue;
			if (MPI_Isend(&st->ids[st->rank], 1, MPI_UINT64_T, p, st->goodbye_tag,
				      st->coll, &req) == MPI_SUCCESS)
				MPI_Wait(&req, MPI_STATUS_IGNORE);
		}
		/*
		 * The communicators stay with MPI until MPI_Finalize: freeing them lets MPI
		 * hand their context id to a later duplicate, and a message still in flight
		 * on them (a goodbye, a poison, one never received) would then land in that
		 * later context and break MPI's ordering there.
		 */
	}
	pthread_mutex_unlock(&st->lock);
	if (last) {
		st->magic = 0;
		pthread_mutex_destroy(&st->lock);
		if (st->we_init)
			MPI_Finalize();
	}
}

static uint64_t mpi_now_ns(struct dvx_bootstrap *bs)
{
	struct bs_mpi *st = bs->priv;

	return dvx_hal_now_ns(st->hal);
}

static const struct dvx_bootstrap_ops bs_mpi_ops = {
	.post_send = mpi_post_send,
	.post_recv = mpi_post_recv,
	.wait = mpi_wait,
	.cancel = mpi_cancel,
	.new_space = mpi_new_space,
	.get = mpi_get,
	.put = mpi_put,
	.now_ns = mpi_now_ns,
};

/* The bits of a tag below MPI_TAG_UB + 1 (at least 15 by the standard). */
static uint32_t mpi_tag_bits(int ub)
{
	uint32_t b = 0;

	while (b < 31 && ((uint64_t)1 << (b + 1)) - 1 <= (uint64_t)ub)
		b++;
	return b;
}

int dvx_bootstrap_mpi_init(struct dvx_bootstrap *bs, const struct dvx_bootstrap_mpi_cfg *attr,
			   void *mem, size_t mem_size)
{
	const struct dvx_log *log = attr ? &attr->log : NULL;
	struct bs_mpi *st = mem;
	int inited = 0, fin = 0, prov = 0, n = 0, rank = 0, flag = 0, e, ret;
	uint32_t we_init = 0;
	MPI_Comm comm, msg = MPI_COMM_NULL, coll = MPI_COMM_NULL;
	void *ubp = NULL;

	if (!bs || !attr || !mem || ((uintptr_t)mem & 7) || attr->reserved ||
	    (attr->flags & ~DVX_BOOTSTRAP_MPI_F_INIT))
		return -EINVAL;
	if (MPI_Finalized(&fin) != MPI_SUCCESS || fin || MPI_Initialized(&inited) != MPI_SUCCESS)
		return -EINVAL;
	if (!inited) {
		if (!(attr->flags & DVX_BOOTSTRAP_MPI_F_INIT))
			return -EINVAL;
		e = MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &prov);
		if (e != MPI_SUCCESS)
			return mpi_err(NULL, log, "MPI_Init_thread", e);
		we_init = 1;
	}
	comm = attr->comm ? *(const MPI_Comm *)attr->comm : MPI_COMM_WORLD;
	e = MPI_Comm_size(comm, &n);
	if (e == MPI_SUCCESS)
		e = MPI_Comm_rank(comm, &rank);
	if (e != MPI_SUCCESS) {
		ret = mpi_err(NULL, log, "MPI_Comm_size/rank", e);
		goto fail_init;
	}
	if (n < 1 || n > DVX_BOOTSTRAP_MAX_RANKS || mem_size < dvx_bootstrap_mpi_mem_size(n)) {
		ret = -EINVAL;
		goto fail_init;
	}
	e = MPI_Comm_get_attr(comm, MPI_TAG_UB, &ubp, &flag);
	if (e != MPI_SUCCESS) {
		ret = mpi_err(NULL, log, "MPI_Comm_get_attr(MPI_TAG_UB)", e);
		goto fail_init;
	}
	/* every rank reaches the duplicates below with the same answers so far */
	e = MPI_Comm_dup(comm, &msg);
	if (e != MPI_SUCCESS) {
		ret = mpi_err(NULL, log, "MPI_Comm_dup", e);
		goto fail_init;
	}
	e = MPI_Comm_set_errhandler(msg, MPI_ERRORS_RETURN);
	if (e != MPI_SUCCESS) {
		ret = mpi_err(NULL, log, "MPI_Comm_set_errhandler", e);
		goto fail_msg;
	}
	e = MPI_Comm_dup(comm, &coll);
	if (e != MPI_SUCCESS) {
		ret = mpi_err(NULL, log, "MPI_Comm_dup", e);
		goto fail_msg;
	}
	e = MPI_Comm_set_errhandler(coll, MPI_ERRORS_RETURN);
	if (e != MPI_SUCCESS) {
		ret = mpi_err(NULL, log, "MPI_Comm_set_errhandler", e);
		goto fail_coll;
	}
	memset(st, 0, dvx_bootstrap_mpi_mem_size(n));
	st->ids[rank] = dvx_hal_now_ns(attr->hal ? attr->hal : dvx_hal_host()) ^
			(uint64_t)(uintptr_t)st;
	e = MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, st->ids, 1, MPI_UINT64_T, coll);
	if (e != MPI_SUCCESS) {
		ret = mpi_err(NULL, log, "MPI_Allgather", e);
		goto fail_coll;
	}
	st->gone = &st->ids[n];
	ret = -pthread_mutex_init(&st->lock, NULL);
	if (ret)
		goto fail_coll;
	st->rank = rank;
	st->nranks = n;
	st->refs = 1;
	st->goodbye_tag = flag && ubp ? *(int *)ubp : 32767;
	st->tbits = mpi_tag_bits(st->goodbye_tag) - SPACE_BITS;
	st->we_init = we_init;
	st->msg = msg;
	st->coll = coll;
	st->hal = attr->hal ? attr->hal : dvx_hal_host();
	st->log = attr->log;
	st->magic = MPI_MAGIC;

	memset(bs, 0, sizeof(*bs));
	bs->ops = &bs_mpi_ops;
	bs->priv = st;
	bs->rank = rank;
	bs->nranks = n;
	bs->space = 0;
	bs->magic = BS_CTX_MAGIC;
	return 0;

fail_coll:
	MPI_Comm_free(&coll);
fail_msg:
	MPI_Comm_free(&msg);
fail_init:
	if (we_init)
		MPI_Finalize();
	return ret;
}

int dvx_bootstrap_mpi_error_class(const struct dvx_bootstrap *bs)
{
	const struct bs_mpi *st;

	if (!bs || bs->magic != BS_CTX_MAGIC || bs->ops != &bs_mpi_ops || !bs->priv)
		return -EINVAL;
	st = bs->priv;
	if (st->magic != MPI_MAGIC)
		return -EINVAL;
	return __atomic_load_n(&st->err_class, __ATOMIC_RELAXED);
}
