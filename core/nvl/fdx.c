// SPDX-License-Identifier: MIT
/*
 * core/nvl/fdx.c - descriptors between the processes of one host (dvx_fdx_allgather()):
 * each rank that offers one listens on an abstract UNIX socket; every rank fetches from
 * every other that offers one, one connection at a time, while it serves connections
 * to its own listener in the same poll loop, so no order of ranks can deadlock.
 *
 * A connection: the fetching rank connects and sends a hello {magic, rank}; the
 * serving rank checks the connection's credentials against what that rank published
 * (process and user), answers with one byte and the descriptor (SCM_RIGHTS), and
 * closes. Everything is non-blocking and bounded by one deadline.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <dvx/byteorder.h>
#include <dvx/nvl/nvl.h>

#include "nvl_priv.h"

#define FDX_HELLO_MAGIC 0x78646676u	/* "vfdx" */
#define FDX_SLICE_NS 100000000ull	/* poll at most this long at a time */

struct hello {
	uint32_t magic;
	int32_t rank;
};

static uint32_t fdx_seq;

static void fdx_name(struct dvx_hal_sock_addr *a, int32_t pid, uint32_t seq)
{
	memset(a, 0, sizeof(*a));
	a->family = DVX_HAL_SOCK_ABSTRACT;
	snprintf(a->path, sizeof(a->path), "dvx-fdx-%d-%u", (int)pid, (unsigned)seq);
}

int dvx_fdx_open(struct fdx_side *x, const struct dvx_hal *hal, int fd, struct dvx_diag *diag)
{
	struct dvx_hal_host_ident id;
	struct dvx_hal_sock_addr a;
	int err;

	memset(x, 0, sizeof(*x));
	x->hal = hal;
	x->lfd = -1;
	x->fd = fd;
	err = dvx_hal_host_ident(hal, &id);
	if (err)
		return dvx_hal_diag_set(diag, err, DVX_DIAG_OS, "fdx", "who this process is");
	x->rec.pid = (int32_t)dvx_le32((uint32_t)id.pid);
	x->rec.uid = dvx_le32(id.uid);
	x->rec.seq = dvx_le32(__atomic_fetch_add(&fdx_seq, 1, __ATOMIC_RELAXED));
	if (fd < 0)
		return 0;
	x->rec.has_fd = dvx_le32(1);
	fdx_name(&a, id.pid, dvx_le32(x->rec.seq));
	err = dvx_hal_sock_listen(hal, &a, 64, &x->lfd);
	if (err)
		return dvx_hal_diag_set(diag, err, DVX_DIAG_OS, "fdx", "listen on @%s", a.path);
	return 0;
}

void dvx_fdx_close(struct fdx_side *x)
{
	if (x->lfd >= 0)
		dvx_hal_sock_close(x->hal, x->lfd);
	x->lfd = -1;
}

static const struct fdx_rec *rec_of(const void *recs, size_t stride, int r)
{
	return (const struct fdx_rec *)(const void *)((const uint8_t *)recs + (size_t)r * stride);
}

enum { C_NONE, C_CONNECTING, C_REPLY };

struct run {
	struct fdx_side *x;
	const void *recs;
	size_t stride;
	int nranks, me;
	int32_t *fds;
	int expected, served;
	int cur, cfd, cstate;		/* the fetch under way */
	int sfd, sgot;			/* the connection being served */
	int strangers;			/* connections refused */
	struct hello shello;
	struct dvx_diag *diag;
};

/* the next rank to fetch from, or -1 */
static int next_fetch(const struct run *R, int from)
{
	int r;

	for (r = from; r < R->nranks; r++)
		if (r != R->me && dvx_le32(rec_of(R->recs, R->stride, r)->has_fd))
			return r;
	return -1;
}

static int fetch_start(struct run *R)
{
	const struct fdx_rec *rc = rec_of(R->recs, R->stride, R->cur);
	struct dvx_hal_sock_addr a;
	int err;

	fdx_name(&a, (int32_t)dvx_le32((uint32_t)rc->pid), dvx_le32(rc->seq));
	err = dvx_hal_sock_connect(R->x->hal, &a, &R->cfd);
	if (err)
		return dvx_hal_diag_set(R->diag, err, DVX_DIAG_OS, "fdx",
					"connect to rank %d's @%s", R->cur, a.path);
	R->cstate = C_CONNECTING;
	return 0;
}

static int fetch_connected(struct run *R)
{
	struct hello h = { dvx_le32(FDX_HELLO_MAGIC), (int32_t)dvx_le32((uint32_t)R->me) };
	struct dvx_hal_iov iov = { &h, sizeof(h) };
	size_t n = 0;
	int err = dvx_hal_sock_error(R->x->hal, R->cfd);

	if (!err)
		err = dvx_hal_sock_send(R->x->hal, R->cfd, &iov, 1, &n);
	if (!err && n != sizeof(h))
		err = -EAGAIN;	/* 8 bytes into an empty socket: never short */
	if (err)
		return dvx_hal_diag_set(R->diag, err, DVX_DIAG_OS, "fdx",
					"hello to rank %d", R->cur);
	R->cstate = C_REPLY;
	return 0;
}

static int fetch_reply(struct run *R)
{
	uint8_t ack;
	size_t got = 0;
	unsigned nfd = 0;
	int32_t fd = -1;
	int err = dvx_hal_sock_recv_fds(R->x->hal, R->cfd, &ack, 1, &got, &fd, 1, &nfd);

	if (err == -EAGAIN)
		return 0;
	if (!err && (got != 1 || nfd != 1 || ack != 'D')) {
		if (nfd)
			dvx_hal_fd_close(R->x->hal, fd);
		err = got ? -EPROTO : -ECONNRESET;
	}
	if (err)
		return dvx_hal_diag_set(R->diag, err, DVX_DIAG_OS, "fdx",
					"descriptor from rank %d", R->cur);
	R->fds[R->cur] = fd;
	dvx_hal_sock_close(R->x->hal, R->cfd);
	R->cfd = -1;
	R->cstate = C_NONE;
	R->cur = next_fetch(R, R->cur + 1);
	return 0;
}

static int serve_accept(struct run *R)
{
	int err = dvx_hal_sock_accept(R->x->hal, R->x->lfd, &R->sfd);

	if (err == -EAGAIN)
		return 0;
	if (err)
		return dvx_hal_diag_set(R->diag, err, DVX_DIAG_OS, "fdx", "accept");
	R->sgot = 0;
	return 0;
}

static int serve_hello(struct run *R)
{
	struct dvx_hal_sock_cred cr;
	const struct fdx_rec *rc;
	size_t got = 0;
	uint8_t ack = 'D';
	int err, rank;

	err = dvx_hal_sock_recv(R->x->hal, R->sfd, (uint8_t *)&R->shello + R->sgot,
				sizeof(R->shello) - (size_t)R->sgot, &got);
	if (err == -EAGAIN)
		return 0;
	if (!err && !got)
		err = -ECONNRESET;
	if (err)
		goto drop;
	R->sgot += (int)got;
	if (R->sgot < (int)sizeof(R->shello))
		return 0;
	rank = (int)dvx_le32((uint32_t)R->shello.rank);
	/* a stranger (not a rank, or not the process that rank published) is refused and
	 * forgotten: it gets nothing and cannot end the exchange for the others */
	if (dvx_le32(R->shello.magic) != FDX_HELLO_MAGIC || rank < 0 || rank >= R->nranks ||
	    rank == R->me) {
		R->strangers++;
		goto drop;
	}
	rc = rec_of(R->recs, R->stride, rank);
	err = dvx_hal_sock_cred(R->x->hal, R->sfd, &cr);
	if (err)
		goto drop;
	if (cr.pid != (int32_t)dvx_le32((uint32_t)rc->pid) || cr.uid != dvx_le32(rc->uid)) {
		R->strangers++;
		goto drop;
	}
	err = dvx_hal_sock_send_fds(R->x->hal, R->sfd, &ack, 1, &R->x->fd, 1, &got);
	if (err) {
		dvx_hal_sock_close(R->x->hal, R->sfd);
		R->sfd = -1;
		return dvx_hal_diag_set(R->diag, err, DVX_DIAG_OS, "fdx",
					"descriptor to rank %d", rank);
	}
	R->served++;
drop:
	/* a connection that went away before its hello is not counted either: if its
	 * rank failed, that rank's own error ends the exchange */
	dvx_hal_sock_close(R->x->hal, R->sfd);
	R->sfd = -1;
	return 0;
}

int dvx_fdx_run(struct fdx_side *x, const struct dvx_bootstrap *bs, const void *recs, size_t stride,
	    int32_t *fds, uint64_t deadline_ns, struct dvx_diag *diag)
{
	struct run R;
	int r, err = 0;

	memset(&R, 0, sizeof(R));
	R.x = x;
	R.recs = recs;
	R.stride = stride;
	R.nranks = bs->nranks;
	R.me = bs->rank;
	R.fds = fds;
	R.cfd = -1;
	R.sfd = -1;
	R.diag = diag;
	R.expected = x->lfd >= 0 ? R.nranks - 1 : 0;
	for (r = 0; r < R.nranks; r++)
		fds[r] = -1;
	R.cur = next_fetch(&R, 0);
	while (!err && (R.cur >= 0 || R.served < R.expected)) {
		struct dvx_hal_pollfd p[3];
		uint64_t now = dvx_hal_now_ns(x->hal);
		unsigned np = 0;
		int li = -1, si = -1, ci = -1, n;

		if (now >= deadline_ns) {
			err = dvx_hal_diag_set(diag, -ETIMEDOUT, DVX_DIAG_OS, "fdx",
					       "%d of %d descriptors handed out, rank %d not fetched",
					       R.served, R.expected, R.cur);
			break;
		}
		if (R.cur >= 0 && R.cstate == C_NONE) {
			err = fetch_start(&R);
			if (err)
				break;
		}
		if (R.sfd < 0 && R.served < R.expected) {
			li = (int)np;
			p[np].fd = x->lfd;
			p[np++].events = DVX_HAL_POLL_IN;
		}
		if (R.sfd >= 0) {
			si = (int)np;
			p[np].fd = R.sfd;
			p[np++].events = DVX_HAL_POLL_IN;
		}
		if (R.cfd >= 0) {
			ci = (int)np;
			p[np].fd = R.cfd;
			p[np++].events = R.cstate == C_CONNECTING ? DVX_HAL_POLL_OUT : DVX_HAL_POLL_IN;
		}
		n = dvx_hal_sock_poll(x->hal, p, np,
				      deadline_ns - now < FDX_SLICE_NS ? deadline_ns - now : FDX_SLICE_NS);
		if (n < 0) {
			err = dvx_hal_diag_set(diag, n, DVX_DIAG_OS, "fdx", "poll");
			break;
		}
		if (li >= 0 && p[li].revents)
			err = serve_accept(&R);
		if (!err && si >= 0 && p[si].revents)
			err = serve_hello(&R);
		if (!err && ci >= 0 && p[ci].revents)
			err = R.cstate == C_CONNECTING ? fetch_connected(&R) : fetch_reply(&R);
	}
	if (R.cfd >= 0)
		dvx_hal_sock_close(x->hal, R.cfd);
	if (R.sfd >= 0)
		dvx_hal_sock_close(x->hal, R.sfd);
	if (err)
		for (r = 0; r < R.nranks; r++)
			if (fds[r] >= 0) {
				dvx_hal_fd_close(x->hal, fds[r]);
				fds[r] = -1;
			}
	return err;
}

int dvx_fdx_allgather(struct dvx_bootstrap *bs, const struct dvx_hal *hal, int fd, int32_t *fds,
		      void *scratch, uint64_t timeout_ns, struct dvx_diag *diag)
{
	struct fdx_side x;
	uint64_t deadline;
	int err;

	if (!bs || !hal || !fds || !scratch || ((uintptr_t)scratch & 7) || bs->nranks < 1)
		return -EINVAL;
	for (err = 0; err < bs->nranks; err++)
		fds[err] = -1;
	err = dvx_fdx_open(&x, hal, fd, diag);
	if (err)
		return err;
	deadline = dvx_hal_now_ns(hal);
	deadline = timeout_ns > UINT64_MAX - deadline ? UINT64_MAX : deadline + timeout_ns;
	err = dvx_bootstrap_allgather(bs, &x.rec, scratch, sizeof(x.rec), timeout_ns);
	if (err) {
		dvx_hal_diag_set(diag, err, DVX_DIAG_OS, "fdx", "allgather of the names");
	} else {
		err = dvx_fdx_run(&x, bs, scratch, sizeof(x.rec), fds, deadline, diag);
	}
	dvx_fdx_close(&x);
	return err;
}
