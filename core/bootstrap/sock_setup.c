// SPDX-License-Identifier: MIT
/*
 * core/bootstrap/sock_setup.c - dvx_bootstrap_sock_init(): the secret, the rendezvous and
 * the full mesh of the sockets adapter.
 *
 * Rank 0 listens at the rendezvous address; every other rank opens its own listening
 * socket, connects to rank 0 and, once it has passed the handshake (sock_auth.c: both
 * ends prove they know the job's secret), is let in with its HELLO's listening address;
 * once all have come, rank 0 sends each a TABLE of every rank's address. Rank r then
 * connects to ranks 1..r-1 (a PEER handshake each) and admits ranks r+1..n-1; its link
 * to rank 0 is the rendezvous connection. Every socket is non-blocking; every wait,
 * every read included, is a hal poll bounded by the caller's deadline on the hal's
 * clock, and each connection an acceptor takes has a shorter one of its own.
 *
 * A connection that does not prove itself is refused and the wait goes on: a stranger
 * can neither end the set-up nor take a rank's place (docs/bootstrap.md). Every other
 * hal call's failure ends the set-up with that call's errno (a connect that finds nobody
 * listening yet, or a connection closed before its welcome, is tried again until the
 * deadline), and then every socket this rank opened is closed and every socket file it
 * made is removed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sock_priv.h"

/* Sleep a little (a peer's listener is not there yet), never past @deadline. */
static int sk_backoff(struct bs_sock *st, uint64_t deadline, uint64_t ns)
{
	uint64_t now = dvx_hal_now_ns(st->hal);

	if (now >= deadline)
		return 0;
	if (ns > deadline - now)
		ns = deadline - now;
	return dvx_hal_sleep_ns(st->hal, ns);
}

/* Nobody listens there (yet): worth another try before the deadline. */
static int sk_retry_connect(int err)
{
	return err == -ECONNREFUSED || err == -ENOENT || err == -EAGAIN || err == -ETIMEDOUT ||
	       err == -ECONNRESET;
}

/* Connect to @a, retrying while nobody listens there yet: fd, or a negative errno. */
static int sk_connect(struct bs_sock *st, const struct dvx_hal_sock_addr *a, uint64_t deadline)
{
	uint64_t pause = 1000000;	/* 1 ms, doubling to 50 ms */
	int fd, ret, c;

	for (;;) {
		ret = dvx_hal_sock_connect(st->hal, a, &fd);
		if (!ret) {
			/* made or under way: writable once it is decided */
			ret = dvx_bs_sock_poll1(st, fd, DVX_HAL_POLL_OUT, deadline);
			if (ret > 0) {
				ret = dvx_hal_sock_error(st->hal, fd);
				if (!ret)
					return fd;
			}
			c = dvx_hal_sock_close(st->hal, fd);
			if (c && sk_retry_connect(ret))
				return c;
		}
		if (!sk_retry_connect(ret))
			return ret;
		if (dvx_hal_now_ns(st->hal) >= deadline)
			return -ETIMEDOUT;
		ret = sk_backoff(st, deadline, pause);
		if (ret)
			return ret;
		if (pause < 50000000)
			pause *= 2;
	}
}

/* Close a listener and remove its socket file (UNIX); the first error, or 0. */
static int sk_drop_listener(struct bs_sock *st, int *lfd, const struct dvx_hal_sock_addr *a)
{
	int c, u = 0;

	if (*lfd < 0)
		return 0;
	c = dvx_hal_sock_close(st->hal, *lfd);
	*lfd = -1;
	if (a->family == DVX_HAL_SOCK_UNIX)
		u = dvx_hal_sock_unlink(st->hal, a);
	return c ? c : u;
}

/* A listener's backlog: every rank that may connect, and room for strangers. */
static int sk_backlog(const struct bs_sock *st)
{
	return st->nranks + DVX_BOOTSTRAP_SOCK_HS_SLOTS;
}

/* Rank 0: admit every other rank (a HELLO each), then send each the table. */
static int sk_setup_root(struct bs_sock *st, const struct dvx_hal_sock_addr *rv,
			 uint64_t deadline)
{
	uint8_t head[SETUP_HEAD];
	int lfd, ret, i;

	ret = dvx_hal_sock_listen(st->hal, rv, sk_backlog(st), &lfd);
	if (ret) {
		bs_log(&st->log, DVX_LOG_ERR, "bootstrap: rank 0 cannot listen: %d", ret);
		return ret;	/* the address is not ours: nothing to remove */
	}
	ret = dvx_bs_sock_admit(st, lfd, MSG_HELLO, 1, st->nranks, st->nranks - 1, deadline);
	if (ret)
		goto out;
	ret = sk_drop_listener(st, &lfd, rv);
	if (ret)
		goto out;
	for (i = 1; i < st->nranks; i++) {
		dvx_bs_sock_setup_head(head, MSG_TABLE, 0, (uint32_t)st->nranks);
		ret = dvx_bs_sock_io_full(st, st->peers[i].fd, head, sizeof(head), 1, deadline);
		if (!ret)
			ret = dvx_bs_sock_io_full(st, st->peers[i].fd, st->table,
						  (size_t)st->nranks * sizeof(*st->table), 1,
						  deadline);
		if (ret)
			goto out;
	}
	return 0;
out:
	sk_drop_listener(st, &lfd, rv);
	return ret;
}

/*
 * Rank r > 0's listening address: UNIX "<path>.<r>"; IP the wildcard of rank 0's family
 * and any port, advertised (once connected to rank 0) with the port the system picked
 * and the local address of the connection to rank 0, i.e. the interface that reaches it.
 */
static int sk_advertise(struct bs_sock *st, int lfd, int fd0, struct dvx_hal_sock_addr *mine)
{
	struct dvx_hal_sock_addr loc, bound;
	int ret;

	if (mine->family == DVX_HAL_SOCK_UNIX)
		return 0;
	ret = dvx_hal_sock_name(st->hal, fd0, &loc);
	if (!ret)
		ret = dvx_hal_sock_name(st->hal, lfd, &bound);
	if (ret)
		return ret;
	if (loc.family != mine->family || bound.family != mine->family || !bound.port)
		return -EPROTO;
	memcpy(mine->ip, loc.ip, sizeof(mine->ip));
	mine->port = bound.port;
	return 0;
}

/*
 * Connect to rank @a_rank at @a and pass the handshake (a HELLO advertising @mine when
 * @lfd listens, or a PEER), trying again while nobody listens there yet or the
 * connection is closed before its welcome (the acceptor was busy past its handshake
 * time, or restarted). 0 with the connection in st->peers[@a_rank].fd, or a negative
 * errno: -ETIMEDOUT once the deadline passes.
 */
static int sk_connect_join(struct bs_sock *st, const struct dvx_hal_sock_addr *a, int a_rank,
			   uint32_t type, int lfd, struct dvx_hal_sock_addr *mine,
			   uint64_t deadline)
{
	uint64_t pause = 1000000;
	struct bs_waddr w;
	int fd, ret, c;

	for (;;) {
		fd = sk_connect(st, a, deadline);
		if (fd < 0)
			return fd;
		memset(&w, 0, sizeof(w));
		ret = 0;
		if (type == MSG_HELLO && lfd >= 0) {
			ret = sk_advertise(st, lfd, fd, mine);
			if (!ret)
				dvx_bs_sock_waddr_from(&w, mine);
		}
		if (!ret)
			ret = dvx_bs_sock_join(st, fd, type, a_rank, &w, deadline);
		if (!ret) {
			st->peers[a_rank].fd = fd;
			return 0;
		}
		c = dvx_hal_sock_close(st->hal, fd);
		if (ret != -ECONNRESET)
			return ret;
		if (c)
			return c;
		bs_log(&st->log, DVX_LOG_INFO, "bootstrap: rank %d: rank %d closed the "
		       "handshake; trying again", st->rank, a_rank);
		if (dvx_hal_now_ns(st->hal) >= deadline)
			return -ETIMEDOUT;
		ret = sk_backoff(st, deadline, pause);
		if (ret)
			return ret;
		if (pause < 50000000)
			pause *= 2;
	}
}

/* Rank r > 0: listen, HELLO to rank 0, read the table, connect down, admit up. */
static int sk_setup_rank(struct bs_sock *st, const struct dvx_hal_sock_addr *rv,
			 uint64_t deadline)
{
	int r = st->rank, n = st->nranks, lfd = -1, fd, ret, j, c;
	struct dvx_hal_sock_addr mine, a;
	uint8_t head[SETUP_HEAD];

	/* my listening socket, if a higher rank will connect to me */
	memset(&mine, 0, sizeof(mine));
	if (r < n - 1) {
		if (rv->family == DVX_HAL_SOCK_UNIX)
			dvx_bs_sock_rank_addr(&mine, rv, r);
		else
			mine.family = rv->family;
		ret = dvx_hal_sock_listen(st->hal, &mine, sk_backlog(st), &lfd);
		if (ret) {
			bs_log(&st->log, DVX_LOG_ERR, "bootstrap: rank %d cannot listen: %d", r,
			       ret);
			return ret;
		}
	}

	ret = sk_connect_join(st, rv, 0, MSG_HELLO, lfd, &mine, deadline);
	if (ret)
		goto out;
	fd = st->peers[0].fd;
	ret = dvx_bs_sock_io_full(st, fd, head, sizeof(head), 0, deadline);
	if (!ret && dvx_bs_sock_setup_check(head, MSG_TABLE, n) != 0)
		ret = -EPROTO;
	if (!ret)
		ret = dvx_bs_sock_io_full(st, fd, st->table, (size_t)n * sizeof(*st->table), 0,
					  deadline);
	if (ret)
		goto out;

	for (j = 1; j < r; j++) {
		ret = dvx_bs_sock_waddr_to(&a, &st->table[j]);
		if (!ret)
			ret = sk_connect_join(st, &a, j, MSG_PEER, -1, NULL, deadline);
		if (ret)
			goto out;
	}
	if (lfd >= 0)
		ret = dvx_bs_sock_admit(st, lfd, MSG_PEER, r + 1, n, n - 1 - r, deadline);
out:
	c = sk_drop_listener(st, &lfd, &mine);
	if (!ret)
		ret = c;
	if (ret)
		bs_log(&st->log, DVX_LOG_ERR, "bootstrap: rank %d set-up failed: %d", r, ret);
	return ret;
}

/*
 * The secret: the attr's bytes, else the environment's (if set and not empty), else
 * none. 0 with the key made ready in st (the empty key in the open mode), or -EINVAL.
 */
static int sk_secret(struct bs_sock *st, const struct dvx_bootstrap_sock_cfg *attr)
{
	const void *key = attr->secret;
	size_t len = attr->secret_len;

	if (len && !key)
		return -EINVAL;
	if (!len) {
		const char *e = getenv(DVX_BOOTSTRAP_SECRET_ENV);

		key = e;
		len = e ? strnlen(e, DVX_BOOTSTRAP_SECRET_MAX + 1) : 0;
	}
	if (len > DVX_BOOTSTRAP_SECRET_MAX)
		return -EINVAL;
	if (!len && (attr->flags & DVX_BOOTSTRAP_SOCK_F_NEED_SECRET))
		return -EINVAL;
	st->has_secret = len > 0;
	dvx_bs_hmac_init(&st->key, len ? key : NULL, len);
	return 0;
}

/* The end of a set-up, whatever its outcome: the caller's counts, the key wiped. */
static void sk_setup_done(struct bs_sock *st, const struct dvx_bootstrap_sock_cfg *attr)
{
	if (attr->stats)
		*attr->stats = st->stats;
	dvx_bs_wipe(&st->key, sizeof(st->key));
	st->hs = NULL;
}

int dvx_bootstrap_sock_init(struct dvx_bootstrap *bs, const struct dvx_bootstrap_sock_cfg *attr,
			    void *mem, size_t mem_size)
{
	struct bs_sock *st = mem;
	struct dvx_hal_sock_addr rv;
	const struct dvx_hal *hal;
	uint64_t deadline;
	size_t need, n;
	uint8_t *p;
	int i, ret;

	if (!bs || !attr || !attr->addr || !mem || ((uintptr_t)mem & 7))
		return -EINVAL;
	need = dvx_bootstrap_sock_mem_size(attr->nranks, attr->max_unexpected, attr->slot_bytes);
	if (!need || mem_size < need || attr->rank < 0 || attr->rank >= attr->nranks)
		return -EINVAL;
	if ((attr->flags & ~DVX_BOOTSTRAP_SOCK_F_NEED_SECRET) || attr->reserved ||
	    attr->max_msg_bytes > DVX_BOOTSTRAP_SOCK_MAX_MSG_LIMIT ||
	    (uint64_t)(size_t)attr->max_msg_bytes != attr->max_msg_bytes)
		return -EINVAL;
	if (dvx_bs_sock_parse_addr(attr->addr, attr->nranks, &rv))
		return -EINVAL;
	hal = attr->hal ? attr->hal : dvx_hal_host();
	deadline = bs_deadline_at(dvx_hal_now_ns(hal), attr->timeout_ns);

	memset(mem, 0, need);
	ret = sk_secret(st, attr);
	if (ret) {
		dvx_bs_wipe(mem, need);
		return ret;
	}
	n = (size_t)attr->nranks;
	p = (uint8_t *)mem + DVX_BOOTSTRAP_SOCK_HDR_BYTES;
	st->hs = (struct bs_hs *)(void *)p;
	p += (size_t)DVX_BOOTSTRAP_SOCK_HS_SLOTS * DVX_BOOTSTRAP_SOCK_HS_BYTES;
	st->peers = (struct bs_speer *)(void *)p;
	p += n * DVX_BOOTSTRAP_SOCK_PEER_BYTES;
	st->table = (struct bs_waddr *)(void *)p;
	st->pfd = (struct dvx_hal_pollfd *)(void *)p;
	p += n * DVX_BOOTSTRAP_SOCK_ADDR_BYTES;
	st->slots = (struct bs_sslot *)(void *)p;
	p += (size_t)attr->max_unexpected * DVX_BOOTSTRAP_SLOT_BYTES;
	st->data = p;
	st->hal = hal;
	st->rank = attr->rank;
	st->nranks = attr->nranks;
	st->nslots = attr->max_unexpected;
	st->slot_bytes = attr->slot_bytes;
	st->stride = ((size_t)attr->slot_bytes + 7) & ~(size_t)7;
	st->max_msg = attr->max_msg_bytes ? attr->max_msg_bytes : DVX_BOOTSTRAP_SOCK_MAX_MSG_DEFAULT;
	st->log = attr->log;
	st->refs = 1;
	for (i = 0; i < attr->nranks; i++) {
		st->peers[i].fd = -1;
		st->peers[i].rx_slot = -1;
	}
	for (i = 0; i < DVX_BOOTSTRAP_SOCK_HS_SLOTS; i++)
		st->hs[i].fd = -1;

	if (attr->nranks > 1) {
		ret = attr->rank == 0 ? sk_setup_root(st, &rv, deadline) :
					sk_setup_rank(st, &rv, deadline);
		if (ret) {
			dvx_bs_sock_close_all(st);
			sk_setup_done(st, attr);
			return ret;
		}
	}
	sk_setup_done(st, attr);
	/* a pthread mutex: no hal call; its init fails only for want of resources */
	ret = pthread_mutex_init(&st->lock, NULL);
	if (ret) {
		dvx_bs_sock_close_all(st);
		return -ret;
	}
	/* the address table is spent; its room holds the poll set from now on */
	st->table = NULL;
	st->magic = SK_MAGIC;

	memset(bs, 0, sizeof(*bs));
	bs->ops = &dvx_bs_sock_ops;
	bs->priv = st;
	bs->rank = attr->rank;
	bs->nranks = attr->nranks;
	bs->magic = BS_CTX_MAGIC;
	bs_log(&st->log, DVX_LOG_DEBUG, "bootstrap: rank %d of %d joined %s (%s)", attr->rank,
	       attr->nranks, attr->addr, st->has_secret ? "secret" : "open mode");
	return 0;
}
