// SPDX-License-Identifier: MIT
/*
 * core/bootstrap/sock_setup.c - dvx_bootstrap_sock_init(): the rendezvous and the full
 * mesh of the sockets adapter.
 *
 * Rank 0 listens at the rendezvous address; every other rank opens its own listening
 * socket, connects to rank 0 and sends a HELLO with its rank and listening address; once
 * all have come, rank 0 sends each a TABLE of every rank's address. Rank r then connects
 * to ranks 1..r-1 (a PEER hello names it) and accepts ranks r+1..n-1; its link to rank 0
 * is the rendezvous connection. Every socket is non-blocking; every wait is a hal poll
 * bounded by the caller's deadline on the hal's clock.
 *
 * Every hal call's failure ends the set-up with that call's errno (a connect that finds
 * nobody listening yet is retried until the deadline), and then every socket this rank
 * opened is closed and every socket file it made is removed.
 */
#include <errno.h>
#include <string.h>

#include "sock_priv.h"

/* Wait for @events on @fd until @deadline: 1 ready, -ETIMEDOUT, or the poll's errno. */
static int sk_poll1(struct bs_sock *st, int fd, short events, uint64_t deadline)
{
	struct dvx_hal_pollfd p = { .fd = fd, .events = events };
	uint64_t now;
	int n;

	for (;;) {
		now = dvx_hal_now_ns(st->hal);
		if (now >= deadline)
			return -ETIMEDOUT;
		n = dvx_hal_sock_poll(st->hal, &p, 1, deadline - now);
		if (n > 0)
			return 1;
		if (n < 0)
			return n;
	}
}

/* Send (@wr) or receive all @len bytes before @deadline. */
static int sk_io_full(struct bs_sock *st, int fd, void *buf, size_t len, int wr,
		      uint64_t deadline)
{
	uint8_t *p = buf;
	size_t done = 0, n;
	int ret;

	while (done < len) {
		if (wr) {
			struct dvx_hal_iov iov = { .base = p + done, .len = len - done };

			ret = dvx_hal_sock_send(st->hal, fd, &iov, 1, &n);
		} else {
			ret = dvx_hal_sock_recv(st->hal, fd, p + done, len - done, &n);
		}
		if (!ret && n) {
			done += n;
			continue;
		}
		if (!ret || ret == -EPIPE || ret == -ECONNRESET)
			return -ECONNRESET;	/* end of stream, or the peer hung up */
		if (ret != -EAGAIN)
			return ret;
		ret = sk_poll1(st, fd, wr ? DVX_HAL_POLL_OUT : DVX_HAL_POLL_IN, deadline);
		if (ret < 0)
			return ret;
	}
	return 0;
}

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
			ret = sk_poll1(st, fd, DVX_HAL_POLL_OUT, deadline);
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

/* Accept one connection on @lfd before @deadline: fd, or a negative errno. */
static int sk_accept(struct bs_sock *st, int lfd, uint64_t deadline)
{
	int fd, ret;

	for (;;) {
		ret = dvx_hal_sock_accept(st->hal, lfd, &fd);
		if (!ret)
			return fd;
		if (ret != -EAGAIN)
			return ret;
		ret = sk_poll1(st, lfd, DVX_HAL_POLL_IN, deadline);
		if (ret < 0)
			return ret;
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

/* Rank 0: accept every other rank's HELLO, then send each the table. */
static int sk_setup_root(struct bs_sock *st, const struct dvx_hal_sock_addr *rv,
			 uint64_t deadline)
{
	int lfd, fd, r = 0, ret, have = 0, i, c;
	uint8_t head[SETUP_HEAD];

	ret = dvx_hal_sock_listen(st->hal, rv, st->nranks, &lfd);
	if (ret) {
		bs_log(&st->log, DVX_LOG_ERR, "bootstrap: rank 0 cannot listen: %d", ret);
		return ret;	/* the address is not ours: nothing to remove */
	}
	while (have < st->nranks - 1) {
		fd = sk_accept(st, lfd, deadline);
		if (fd < 0) {
			ret = fd;
			goto out;
		}
		ret = sk_io_full(st, fd, head, sizeof(head), 0, deadline);
		if (!ret) {
			r = dvx_bs_sock_setup_check(head, MSG_HELLO, st->nranks);
			ret = r < 0 ? r : (r == 0 || st->peers[r].fd >= 0) ? -EPROTO : 0;
		}
		if (!ret)
			ret = sk_io_full(st, fd, &st->table[r], sizeof(st->table[r]), 0, deadline);
		if (ret) {
			c = dvx_hal_sock_close(st->hal, fd);
			bs_log(&st->log, DVX_LOG_ERR, "bootstrap: bad hello at rank 0: %d (%d)",
			       ret, c);
			goto out;
		}
		st->peers[r].fd = fd;
		have++;
	}
	ret = sk_drop_listener(st, &lfd, rv);
	if (ret)
		goto out;
	for (i = 1; i < st->nranks; i++) {
		dvx_bs_sock_setup_head(head, MSG_TABLE, 0, (uint32_t)st->nranks);
		ret = sk_io_full(st, st->peers[i].fd, head, sizeof(head), 1, deadline);
		if (!ret)
			ret = sk_io_full(st, st->peers[i].fd, st->table,
					 (size_t)st->nranks * sizeof(*st->table), 1, deadline);
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

/* Rank r > 0: listen, HELLO to rank 0, read the table, connect down, accept up. */
static int sk_setup_rank(struct bs_sock *st, const struct dvx_hal_sock_addr *rv,
			 uint64_t deadline)
{
	int r = st->rank, n = st->nranks, lfd = -1, fd, ret, j, k, have, c;
	struct dvx_hal_sock_addr mine, a;
	uint8_t head[SETUP_HEAD];
	struct bs_waddr w;

	/* my listening socket, if a higher rank will connect to me */
	memset(&mine, 0, sizeof(mine));
	if (r < n - 1) {
		if (rv->family == DVX_HAL_SOCK_UNIX)
			dvx_bs_sock_rank_addr(&mine, rv, r);
		else
			mine.family = rv->family;
		ret = dvx_hal_sock_listen(st->hal, &mine, n, &lfd);
		if (ret) {
			bs_log(&st->log, DVX_LOG_ERR, "bootstrap: rank %d cannot listen: %d", r,
			       ret);
			return ret;
		}
	}

	fd = sk_connect(st, rv, deadline);
	if (fd < 0) {
		ret = fd;
		goto out;
	}
	st->peers[0].fd = fd;
	memset(&w, 0, sizeof(w));
	if (lfd >= 0) {
		ret = sk_advertise(st, lfd, fd, &mine);
		if (ret)
			goto out;
		dvx_bs_sock_waddr_from(&w, &mine);
	}
	dvx_bs_sock_setup_head(head, MSG_HELLO, (uint32_t)r, (uint32_t)n);
	ret = sk_io_full(st, fd, head, sizeof(head), 1, deadline);
	if (!ret)
		ret = sk_io_full(st, fd, &w, sizeof(w), 1, deadline);
	if (!ret)
		ret = sk_io_full(st, fd, head, sizeof(head), 0, deadline);
	if (!ret && dvx_bs_sock_setup_check(head, MSG_TABLE, n) != 0)
		ret = -EPROTO;
	if (!ret)
		ret = sk_io_full(st, fd, st->table, (size_t)n * sizeof(*st->table), 0, deadline);
	if (ret)
		goto out;

	for (j = 1; j < r; j++) {
		ret = dvx_bs_sock_waddr_to(&a, &st->table[j]);
		if (ret)
			goto out;
		fd = sk_connect(st, &a, deadline);
		if (fd < 0) {
			ret = fd;
			goto out;
		}
		st->peers[j].fd = fd;
		dvx_bs_sock_setup_head(head, MSG_PEER, (uint32_t)r, (uint32_t)n);
		ret = sk_io_full(st, fd, head, sizeof(head), 1, deadline);
		if (ret)
			goto out;
	}
	for (have = 0; have < n - 1 - r; have++) {
		fd = sk_accept(st, lfd, deadline);
		if (fd < 0) {
			ret = fd;
			goto out;
		}
		ret = sk_io_full(st, fd, head, sizeof(head), 0, deadline);
		k = ret ? ret : dvx_bs_sock_setup_check(head, MSG_PEER, n);
		if (k <= r || st->peers[k].fd >= 0) {
			c = dvx_hal_sock_close(st->hal, fd);
			ret = k < 0 ? k : -EPROTO;
			bs_log(&st->log, DVX_LOG_ERR, "bootstrap: bad peer at rank %d: %d (%d)",
			       r, ret, c);
			goto out;
		}
		st->peers[k].fd = fd;
	}
	ret = 0;
out:
	c = sk_drop_listener(st, &lfd, &mine);
	if (!ret)
		ret = c;
	if (ret)
		bs_log(&st->log, DVX_LOG_ERR, "bootstrap: rank %d set-up failed: %d", r, ret);
	return ret;
}

int dvx_bootstrap_sock_init(struct dvx_bootstrap *bs, const struct dvx_bootstrap_sock_attr *attr,
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
	if (dvx_bs_sock_parse_addr(attr->addr, attr->nranks, &rv))
		return -EINVAL;
	hal = attr->hal ? attr->hal : dvx_hal_host();
	deadline = bs_deadline_at(dvx_hal_now_ns(hal), attr->timeout_ns);

	memset(mem, 0, need);
	n = (size_t)attr->nranks;
	p = (uint8_t *)mem + DVX_BOOTSTRAP_SOCK_HDR_BYTES;
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
	st->log = attr->log;
	st->refs = 1;
	for (i = 0; i < attr->nranks; i++) {
		st->peers[i].fd = -1;
		st->peers[i].rx_slot = -1;
	}

	if (attr->nranks > 1) {
		ret = attr->rank == 0 ? sk_setup_root(st, &rv, deadline) :
					sk_setup_rank(st, &rv, deadline);
		if (ret) {
			dvx_bs_sock_close_all(st);
			return ret;
		}
	}
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
	bs_log(&st->log, DVX_LOG_DEBUG, "bootstrap: rank %d of %d joined %s", attr->rank,
	       attr->nranks, attr->addr);
	return 0;
}
