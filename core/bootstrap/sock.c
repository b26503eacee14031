// SPDX-License-Identifier: MIT
/*
 * core/bootstrap/sock.c - the bootstrap adapter for ranks that are processes joined by
 * stream sockets (UNIX on one host, TCP across hosts).
 *
 * Set-up: rank 0 listens at the rendezvous address; every other rank opens its own
 * listening socket, connects to rank 0 and sends a HELLO with its rank and listening
 * address; once all have come, rank 0 sends each a TABLE of every rank's address. Rank r
 * then connects to ranks 1..r-1 (a PEER hello names it) and accepts ranks r+1..n-1; its
 * link to rank 0 is the rendezvous connection. The result is a full mesh: one stream per
 * pair, every socket non-blocking, every wait a poll() bounded by the caller's deadline.
 *
 * Framing: a 24-byte big-endian header (magic, version, flags, space, tag, length), then
 * the payload. Each peer has a send queue (one message on the wire at a time, in order)
 * and a reader: a header is matched against the receives posted for that peer (in post
 * order); a message nobody waits for goes to a free unexpected slot; if there is none (or
 * it is too big) the reader stops on that peer until a receive for it is posted or a slot
 * frees ("stalled"). Receives check the slots first, oldest first.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <dvx/byteorder.h>

#include "bs_priv.h"

#define SK_MAGIC 0x534f434bu
#define WIRE_MAGIC 0x44565842u	/* "DVXB" */
#define WIRE_VERSION 1u
#define WIRE_HDR 24u
#define WIRE_F_BYE 0x0001u	/* the sender finished its context and closes the stream */
#define WIRE_F_POISON 0x0002u	/* a failed collective (BS_LEN_POISON); length 0 */

enum {
	MSG_HELLO = 1,		/* rank r -> rank 0: rank, nranks, listening address */
	MSG_TABLE = 2,		/* rank 0 -> rank r: nranks addresses */
	MSG_PEER = 3,		/* rank r -> rank j < r: rank, nranks */
};

/* The set-up records: 16-byte head {magic, type, rank, nranks}, then addresses. */
#define SETUP_HEAD 16u

/* A listening address on the wire: 128 bytes. */
enum {
	WADDR_UNIX = 1,
	WADDR_IP4 = 2,
	WADDR_IP6 = 3,
};

struct bs_waddr {
	uint16_t kind;		/* big endian */
	uint16_t port;		/* big endian */
	uint8_t ip[16];
	char path[108];
};
DVX_ASSERT_SIZE(struct bs_waddr, DVX_BOOTSTRAP_SOCK_ADDR_BYTES);

enum {
	RX_HDR = 0,	/* reading a header */
	RX_BODY,	/* reading a payload into rx_req, rx_slot or nowhere (discard) */
	RX_STALL,	/* header read, no receiver and no slot for it yet */
};

struct bs_speer {
	int32_t fd;
	int32_t err;		/* 0 while the connection lives */
	struct bs_list txq;	/* sends, the head on the wire */
	struct bs_list rxq;	/* posted receives, oldest first */
	struct bs_req *rx_req;	/* the receive the payload goes to */
	int32_t rx_slot;	/* or the slot it goes to, or -1 */
	uint32_t tx_hsent;	/* header bytes of txq.head already sent */
	uint32_t rx_hgot;
	uint32_t rx_space;
	uint32_t rx_tag;
	uint8_t rx_state;
	uint8_t rx_discard;
	uint8_t left;		/* it said goodbye before closing: left, not failed */
	uint8_t pad;
	uint64_t rx_len;
	uint64_t rx_got;
	uint8_t rxhdr[WIRE_HDR];
	uint8_t txhdr[WIRE_HDR];
};
DVX_STATIC_ASSERT(sizeof(struct bs_speer) <= DVX_BOOTSTRAP_SOCK_PEER_BYTES, "peer record");

struct bs_sslot {
	uint64_t seq;
	uint64_t len;
	uint64_t got;
	int32_t peer;
	uint32_t space;
	uint32_t tag;
	uint8_t used;
	uint8_t complete;
	uint16_t pad;
};
DVX_STATIC_ASSERT(sizeof(struct bs_sslot) <= DVX_BOOTSTRAP_SLOT_BYTES, "slot record");

struct bs_sock {
	uint32_t magic;
	int32_t rank;
	int32_t nranks;
	int32_t refs;
	uint32_t next_space;
	uint32_t nslots;
	uint32_t slot_bytes;
	uint32_t pad;
	size_t stride;
	uint64_t seq;
	pthread_mutex_t lock;
	struct dvx_log log;
	struct bs_speer *peers;
	struct pollfd *pfd;		/* in the address area once set-up is over */
	struct bs_waddr *table;		/* set-up only */
	struct bs_sslot *slots;
	uint8_t *data;
};
DVX_STATIC_ASSERT(sizeof(struct bs_sock) <= DVX_BOOTSTRAP_SOCK_HDR_BYTES, "socket header");
DVX_STATIC_ASSERT(sizeof(struct pollfd) <= DVX_BOOTSTRAP_SOCK_ADDR_BYTES, "pollfd");

static const struct dvx_bootstrap_ops sk_ops;

size_t dvx_bootstrap_sock_mem_size(int nranks, uint32_t max_unexpected, uint32_t slot_bytes)
{
	if (nranks < 1 || nranks > DVX_BOOTSTRAP_MAX_RANKS ||
	    max_unexpected > DVX_BOOTSTRAP_MAX_SLOTS || slot_bytes > DVX_BOOTSTRAP_MAX_SLOT_BYTES)
		return 0;
	return DVX_BOOTSTRAP_SOCK_MEM_SIZE(nranks, max_unexpected, slot_bytes);
}

/* ------------------------------------------------------------------------------------
 * Addresses
 */

struct bs_addr {
	struct sockaddr_storage ss;
	socklen_t len;
	int family;		/* AF_UNIX, AF_INET, AF_INET6 */
};

static int parse_port(const char *s, uint16_t *port)
{
	unsigned long v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = v * 10 + (unsigned long)(*s - '0');
		if (v > 65535)
			return -EINVAL;
	}
	if (!v)
		return -EINVAL;
	*port = (uint16_t)v;
	return 0;
}

/* "unix:/path" or "tcp:1.2.3.4:port" or "tcp:[::1]:port"; numeric only (no resolver). */
static int parse_addr(const char *addr, int nranks, struct bs_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (!strncmp(addr, "unix:", 5)) {
		struct sockaddr_un *un = (struct sockaddr_un *)&a->ss;
		size_t n = strlen(addr + 5);
		char digits[16];

		/* the listeners of the other ranks are "<path>.<rank>" */
		snprintf(digits, sizeof(digits), ".%d", nranks);
		if (!n || n + strlen(digits) >= sizeof(un->sun_path))
			return -EINVAL;
		un->sun_family = AF_UNIX;
		memcpy(un->sun_path, addr + 5, n + 1);
		a->len = (socklen_t)sizeof(*un);
		a->family = AF_UNIX;
		return 0;
	}
	if (!strncmp(addr, "tcp:", 4)) {
		const char *h = addr + 4, *colon;
		char host[64];
		size_t hl;
		uint16_t port;

		if (*h == '[') {
			const char *e = strchr(h, ']');

			if (!e || e[1] != ':')
				return -EINVAL;
			hl = (size_t)(e - h - 1);
			if (hl >= sizeof(host))
				return -EINVAL;
			memcpy(host, h + 1, hl);
			host[hl] = 0;
			colon = e + 1;
		} else {
			colon = strrchr(h, ':');
			if (!colon)
				return -EINVAL;
			hl = (size_t)(colon - h);
			if (hl >= sizeof(host))
				return -EINVAL;
			memcpy(host, h, hl);
			host[hl] = 0;
		}
		if (parse_port(colon + 1, &port))
			return -EINVAL;
		if (*h != '[') {
			struct sockaddr_in *in = (struct sockaddr_in *)&a->ss;

			if (inet_pton(AF_INET, host, &in->sin_addr) != 1)
				return -EINVAL;
			in->sin_family = AF_INET;
			in->sin_port = htons(port);
			a->len = (socklen_t)sizeof(*in);
			a->family = AF_INET;
		} else {
			struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&a->ss;

			if (inet_pton(AF_INET6, host, &in6->sin6_addr) != 1)
				return -EINVAL;
			in6->sin6_family = AF_INET6;
			in6->sin6_port = htons(port);
			a->len = (socklen_t)sizeof(*in6);
			a->family = AF_INET6;
		}
		return 0;
	}
	return -EINVAL;
}

/* "<base>.<rank>" into @dst (parse_addr checked that it fits). */
static void unix_rank_path(char *dst, size_t cap, const char *base, int rank)
{
	char digits[12];
	size_t n = strnlen(base, cap - 1), k = 0, i;
	unsigned int v = (unsigned int)rank;

	do {
		digits[k++] = (char)('0' + v % 10);
		v /= 10;
	} while (v && k < sizeof(digits));
	if (n + 1 + k >= cap) {
		dst[0] = 0;	/* cannot happen: parse_addr() checked the length */
		return;
	}
	memcpy(dst, base, n);
	dst[n++] = '.';
	for (i = 0; i < k; i++)
		dst[n++] = digits[k - 1 - i];
	dst[n] = 0;
}

static void waddr_from(struct bs_waddr *w, const struct bs_addr *a)
{
	memset(w, 0, sizeof(*w));
	if (a->family == AF_UNIX) {
		const struct sockaddr_un *un = (const struct sockaddr_un *)&a->ss;

		w->kind = htons(WADDR_UNIX);
		memcpy(w->path, un->sun_path, sizeof(w->path));
		w->path[sizeof(w->path) - 1] = 0;
	} else if (a->family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)&a->ss;

		w->kind = htons(WADDR_IP4);
		w->port = in->sin_port;
		memcpy(w->ip, &in->sin_addr, 4);
	} else {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&a->ss;

		w->kind = htons(WADDR_IP6);
		w->port = in6->sin6_port;
		memcpy(w->ip, &in6->sin6_addr, 16);
	}
}

static int waddr_to(struct bs_addr *a, const struct bs_waddr *w)
{
	memset(a, 0, sizeof(*a));
	switch (ntohs(w->kind)) {
	case WADDR_UNIX: {
		struct sockaddr_un *un = (struct sockaddr_un *)&a->ss;

		if (!memchr(w->path, 0, sizeof(w->path)) || !w->path[0])
			return -EPROTO;
		un->sun_family = AF_UNIX;
		memcpy(un->sun_path, w->path, sizeof(w->path));
		a->len = (socklen_t)sizeof(*un);
		a->family = AF_UNIX;
		return 0;
	}
	case WADDR_IP4: {
		struct sockaddr_in *in = (struct sockaddr_in *)&a->ss;

		in->sin_family = AF_INET;
		in->sin_port = w->port;
		memcpy(&in->sin_addr, w->ip, 4);
		a->len = (socklen_t)sizeof(*in);
		a->family = AF_INET;
		return 0;
	}
	case WADDR_IP6: {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&a->ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = w->port;
		memcpy(&in6->sin6_addr, w->ip, 16);
		a->len = (socklen_t)sizeof(*in6);
		a->family = AF_INET6;
		return 0;
	}
	default:
		return -EPROTO;
	}
}

/* ------------------------------------------------------------------------------------
 * Blocking-with-deadline helpers for set-up (non-blocking sockets and poll()).
 */

static int sk_socket(int family)
{
	int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1;

	if (fd < 0)
		return -errno;
	if (family != AF_UNIX)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* Wait for @events on @fd until @deadline: 1 ready, -ETIMEDOUT, or -errno. */
static int sk_poll1(int fd, short events, uint64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	struct timespec ts;
	uint64_t now, left;
	int n;

	for (;;) {
		now = bs_now_ns();
		if (now >= deadline)
			return -ETIMEDOUT;
		left = deadline - now;
		ts.tv_sec = (time_t)(left / 1000000000ull);
		ts.tv_nsec = (long)(left % 1000000000ull);
		n = ppoll(&p, 1, &ts, NULL);
		if (n > 0)
			return 1;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

static int sk_io_full(int fd, void *buf, size_t len, int wr, uint64_t deadline)
{
	uint8_t *p = buf;
	size_t done = 0;
	ssize_t n;
	int ret;

	while (done < len) {
		if (wr)
			n = send(fd, p + done, len - done, MSG_NOSIGNAL | MSG_DONTWAIT);
		else
			n = recv(fd, p + done, len - done, MSG_DONTWAIT);
		if (n > 0) {
			done += (size_t)n;
			continue;
		}
		if (n == 0)
			return -ECONNRESET;
		if (errno == EINTR)
			continue;
		if (errno == EPIPE || errno == ECONNRESET)
			return -ECONNRESET;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		ret = sk_poll1(fd, wr ? POLLOUT : POLLIN, deadline);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Sleep a little (a peer's listener is not there yet), never past @deadline. */
static void sk_backoff(uint64_t deadline, uint64_t ns)
{
	uint64_t now = bs_now_ns();
	struct timespec ts;

	if (now >= deadline)
		return;
	if (ns > deadline - now)
		ns = deadline - now;
	ts.tv_sec = (time_t)(ns / 1000000000ull);
	ts.tv_nsec = (long)(ns % 1000000000ull);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Connect to @a, retrying while nobody listens there yet: fd or -errno / -ETIMEDOUT. */
static int sk_connect(const struct bs_addr *a, uint64_t deadline)
{
	uint64_t pause = 1000000;	/* 1 ms, doubling to 50 ms */
	socklen_t sl;
	int fd, ret, soerr;

	for (;;) {
		fd = sk_socket(a->family);
		if (fd < 0)
			return fd;
		if (connect(fd, (const struct sockaddr *)&a->ss, a->len) == 0)
			return fd;
		ret = -errno;
		if (ret == -EINPROGRESS || ret == -EINTR) {
			ret = sk_poll1(fd, POLLOUT, deadline);
			if (ret > 0) {
				soerr = 0;
				sl = sizeof(soerr);
				getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
				if (!soerr)
					return fd;
				ret = -soerr;
			}
		}
		close(fd);
		if (ret != -ECONNREFUSED && ret != -ENOENT && ret != -EAGAIN &&
		    ret != -ETIMEDOUT && ret != -ECONNRESET)
			return ret;
		if (bs_now_ns() >= deadline)
			return -ETIMEDOUT;
		sk_backoff(deadline, pause);
		if (pause < 50000000)
			pause *= 2;
	}
}

static int sk_accept(int lfd, uint64_t deadline)
{
	int fd, ret, one = 1;

	for (;;) {
		fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd >= 0) {
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			return fd;
		}
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		ret = sk_poll1(lfd, POLLIN, deadline);
		if (ret < 0)
			return ret;
	}
}

static int sk_listen(const struct bs_addr *a, int backlog)
{
	int fd = sk_socket(a->family), one = 1, ret;

	if (fd < 0)
		return fd;
	if (a->family != AF_UNIX)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)&a->ss, a->len) || listen(fd, backlog)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

static void setup_head(uint8_t *h, uint32_t type, uint32_t rank, uint32_t nranks)
{
	dvx_put_be32(h, WIRE_MAGIC);
	dvx_put_be32(h + 4, type);
	dvx_put_be32(h + 8, rank);
	dvx_put_be32(h + 12, nranks);
}

/* Checks a set-up head; returns the rank it names or -EPROTO. */
static int setup_check(const uint8_t *h, uint32_t type, int nranks)
{
	uint32_t rank = dvx_get_be32(h + 8);

	if (dvx_get_be32(h) != WIRE_MAGIC || dvx_get_be32(h + 4) != type ||
	    dvx_get_be32(h + 12) != (uint32_t)nranks || rank >= (uint32_t)nranks)
		return -EPROTO;
	return (int)rank;
}

static void sk_close_all(struct bs_sock *st)
{
	int i;

	for (i = 0; i < st->nranks; i++) {
		if (st->peers[i].fd >= 0)
			close(st->peers[i].fd);
		st->peers[i].fd = -1;
	}
}

/* Rank 0: accept every other rank's HELLO, then send each the table. */
static int sk_setup_root(struct bs_sock *st, const struct bs_addr *rv, uint64_t deadline)
{
	int lfd, fd, r = 0, ret, have = 0, i;
	uint8_t head[SETUP_HEAD];

	lfd = sk_listen(rv, st->nranks);
	if (lfd < 0) {
		bs_log(&st->log, DVX_LOG_ERR, "bootstrap: rank 0 cannot listen: %d", lfd);
		return lfd;
	}
	while (have < st->nranks - 1) {
		fd = sk_accept(lfd, deadline);
		if (fd < 0) {
			ret = fd;
			goto out;
		}
		ret = sk_io_full(fd, head, sizeof(head), 0, deadline);
		if (!ret) {
			r = setup_check(head, MSG_HELLO, st->nranks);
			ret = r < 0 ? r : (r == 0 || st->peers[r].fd >= 0) ? -EPROTO : 0;
		}
		if (!ret)
			ret = sk_io_full(fd, &st->table[r], sizeof(st->table[r]), 0, deadline);
		if (ret) {
			close(fd);
			bs_log(&st->log, DVX_LOG_ERR, "bootstrap: bad hello at rank 0: %d", ret);
			goto out;
		}
		st->peers[r].fd = fd;
		have++;
	}
	close(lfd);
	lfd = -1;
	if (rv->family == AF_UNIX)
		unlink(((const struct sockaddr_un *)&rv->ss)->sun_path);
	for (i = 1; i < st->nranks; i++) {
		setup_head(head, MSG_TABLE, 0, (uint32_t)st->nranks);
		ret = sk_io_full(st->peers[i].fd, head, sizeof(head), 1, deadline);
		if (!ret)
			ret = sk_io_full(st->peers[i].fd, st->table,
					 (size_t)st->nranks * sizeof(*st->table), 1, deadline);
		if (ret)
			goto out;
	}
	return 0;
out:
	if (lfd >= 0) {
		close(lfd);
		if (rv->family == AF_UNIX)
			unlink(((const struct sockaddr_un *)&rv->ss)->sun_path);
	}
	return ret;
}

/* Rank r > 0: listen, HELLO to rank 0, read the table, connect down, accept up. */
static int sk_setup_rank(struct bs_sock *st, const struct bs_addr *rv, uint64_t deadline)
{
	int r = st->rank, n = st->nranks, lfd = -1, fd, ret, j, k, have;
	struct bs_addr mine, a;
	uint8_t head[SETUP_HEAD];
	struct bs_waddr w;
	socklen_t sl;

	/* my listening socket, if a higher rank will connect to me */
	memset(&mine, 0, sizeof(mine));
	if (r < n - 1) {
		mine.family = rv->family;
		if (rv->family == AF_UNIX) {
			struct sockaddr_un *un = (struct sockaddr_un *)&mine.ss;

			un->sun_family = AF_UNIX;
			unix_rank_path(un->sun_path, sizeof(un->sun_path),
				       ((const struct sockaddr_un *)&rv->ss)->sun_path, r);
			mine.len = (socklen_t)sizeof(*un);
		} else {
			/* any address, any port: the port is read back, the address is the
			 * one this host uses to reach rank 0 */
			mine.ss.ss_family = (sa_family_t)rv->family;
			mine.len = rv->len;
		}
		lfd = sk_listen(&mine, n);
		if (lfd < 0) {
			bs_log(&st->log, DVX_LOG_ERR, "bootstrap: rank %d cannot listen: %d", r,
			       lfd);
			return lfd;
		}
	}

	fd = sk_connect(rv, deadline);
	if (fd < 0) {
		ret = fd;
		goto out;
	}
	st->peers[0].fd = fd;
	if (lfd >= 0 && rv->family != AF_UNIX) {
		struct sockaddr_storage loc;
		uint16_t port;

		sl = sizeof(loc);
		if (getsockname(fd, (struct sockaddr *)&loc, &sl) ||
		    getsockname(lfd, (struct sockaddr *)&mine.ss, &mine.len)) {
			ret = -errno;
			goto out;
		}
		if (rv->family == AF_INET) {
			port = ((struct sockaddr_in *)&mine.ss)->sin_port;
			((struct sockaddr_in *)&mine.ss)->sin_addr =
				((struct sockaddr_in *)&loc)->sin_addr;
			((struct sockaddr_in *)&mine.ss)->sin_port = port;
		} else {
			port = ((struct sockaddr_in6 *)&mine.ss)->sin6_port;
			((struct sockaddr_in6 *)&mine.ss)->sin6_addr =
				((struct sockaddr_in6 *)&loc)->sin6_addr;
			((struct sockaddr_in6 *)&mine.ss)->sin6_port = port;
		}
	}
	if (lfd >= 0)
		waddr_from(&w, &mine);
	else
		memset(&w, 0, sizeof(w));
	setup_head(head, MSG_HELLO, (uint32_t)r, (uint32_t)n);
	ret = sk_io_full(fd, head, sizeof(head), 1, deadline);
	if (!ret)
		ret = sk_io_full(fd, &w, sizeof(w), 1, deadline);
	if (!ret)
		ret = sk_io_full(fd, head, sizeof(head), 0, deadline);
	if (!ret && setup_check(head, MSG_TABLE, n) != 0)
		ret = -EPROTO;
	if (!ret)
		ret = sk_io_full(fd, st->table, (size_t)n * sizeof(*st->table), 0, deadline);
	if (ret)
		goto out;

	for (j = 1; j < r; j++) {
		ret = waddr_to(&a, &st->table[j]);
		if (ret)
			goto out;
		fd = sk_connect(&a, deadline);
		if (fd < 0) {
			ret = fd;
			goto out;
		}
		st->peers[j].fd = fd;
		setup_head(head, MSG_PEER, (uint32_t)r, (uint32_t)n);
		ret = sk_io_full(fd, head, sizeof(head), 1, deadline);
		if (ret)
			goto out;
	}
	for (have = 0; have < n - 1 - r; have++) {
		fd = sk_accept(lfd, deadline);
		if (fd < 0) {
			ret = fd;
			goto out;
		}
		ret = sk_io_full(fd, head, sizeof(head), 0, deadline);
		k = ret ? ret : setup_check(head, MSG_PEER, n);
		if (k <= r || st->peers[k].fd >= 0) {
			close(fd);
			ret = k < 0 ? k : -EPROTO;
			goto out;
		}
		st->peers[k].fd = fd;
	}
	ret = 0;
out:
	if (lfd >= 0) {
		close(lfd);
		if (rv->family == AF_UNIX)
			unlink(((struct sockaddr_un *)&mine.ss)->sun_path);
	}
	if (ret)
		bs_log(&st->log, DVX_LOG_ERR, "bootstrap: rank %d set-up failed: %d", r, ret);
	return ret;
}

int dvx_bootstrap_sock_init(struct dvx_bootstrap *bs, const struct dvx_bootstrap_sock_attr *attr,
			    void *mem, size_t mem_size)
{
	struct bs_sock *st = mem;
	struct bs_addr rv;
	uint64_t deadline;
	size_t need, n;
	uint8_t *p;
	int i, ret;

	if (!bs || !attr || !attr->addr || !mem || ((uintptr_t)mem & 7))
		return -EINVAL;
	need = dvx_bootstrap_sock_mem_size(attr->nranks, attr->max_unexpected, attr->slot_bytes);
	if (!need || mem_size < need || attr->rank < 0 || attr->rank >= attr->nranks)
		return -EINVAL;
	if (parse_addr(attr->addr, attr->nranks, &rv))
		return -EINVAL;
	deadline = bs_deadline(attr->timeout_ns);

	memset(mem, 0, need);
	n = (size_t)attr->nranks;
	p = (uint8_t *)mem + DVX_BOOTSTRAP_SOCK_HDR_BYTES;
	st->peers = (struct bs_speer *)(void *)p;
	p += n * DVX_BOOTSTRAP_SOCK_PEER_BYTES;
	st->table = (struct bs_waddr *)(void *)p;
	st->pfd = (struct pollfd *)(void *)p;
	p += n * DVX_BOOTSTRAP_SOCK_ADDR_BYTES;
	st->slots = (struct bs_sslot *)(void *)p;
	p += (size_t)attr->max_unexpected * DVX_BOOTSTRAP_SLOT_BYTES;
	st->data = p;
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
			sk_close_all(st);
			return ret;
		}
	}
	ret = pthread_mutex_init(&st->lock, NULL);
	if (ret) {
		sk_close_all(st);
		return -ret;
	}
	/* the address table is spent; its room holds the poll set from now on */
	st->table = NULL;
	st->magic = SK_MAGIC;

	memset(bs, 0, sizeof(*bs));
	bs->ops = &sk_ops;
	bs->priv = st;
	bs->rank = attr->rank;
	bs->nranks = attr->nranks;
	bs->magic = BS_CTX_MAGIC;
	bs_log(&st->log, DVX_LOG_DEBUG, "bootstrap: rank %d of %d joined %s", attr->rank,
	       attr->nranks, attr->addr);
	return 0;
}

/* ------------------------------------------------------------------------------------
 * The running state: queues, reader, progress.
 */

static uint8_t *sk_slot_data(struct bs_sock *st, int i)
{
	return st->data + (size_t)i * st->stride;
}

static void sk_fail_peer(struct bs_sock *st, int p, int err)
{
	struct bs_speer *pe = &st->peers[p];
	struct bs_req *r;

	if (pe->fd >= 0)
		close(pe->fd);
	pe->fd = -1;
	if (!pe->err) {
		pe->err = err;
		bs_log(&st->log, DVX_LOG_WARN, "bootstrap: rank %d lost rank %d: %d", st->rank, p,
		       err);
	}
	while ((r = pe->txq.head)) {
		pe->txq.head = r->next;
		bs_req_done(r, pe->err);
	}
	pe->txq.tail = NULL;
	while ((r = pe->rxq.head)) {
		pe->rxq.head = r->next;
		bs_req_done(r, pe->err);
	}
	pe->rxq.tail = NULL;
	if (pe->rx_req)
		bs_req_done(pe->rx_req, pe->err);
	pe->rx_req = NULL;
	if (pe->rx_slot >= 0 && !st->slots[pe->rx_slot].complete)
		st->slots[pe->rx_slot].used = 0;
	pe->rx_slot = -1;
	pe->rx_state = RX_HDR;
	pe->rx_discard = 0;
	pe->rx_hgot = 0;
}

static void sk_rx_body_done(struct bs_sock *st, struct bs_speer *pe)
{
	if (pe->rx_req) {
		pe->rx_req->moved = pe->rx_len;
		bs_req_done(pe->rx_req, 0);
	} else if (pe->rx_slot >= 0) {
		st->slots[pe->rx_slot].complete = 1;
		st->slots[pe->rx_slot].got = pe->rx_len;
	}
	pe->rx_req = NULL;
	pe->rx_slot = -1;
	pe->rx_discard = 0;
	pe->rx_state = RX_HDR;
}

/* A header was read (or is stalled): find where its payload goes. */
static void sk_rx_dispatch(struct bs_sock *st, struct bs_speer *pe, int p)
{
	struct bs_req *r;
	uint32_t i;

	for (r = pe->rxq.head; r; r = r->next)
		if (r->space == pe->rx_space && r->tag == pe->rx_tag)
			break;
	pe->rx_req = NULL;
	pe->rx_slot = -1;
	pe->rx_discard = 0;
	if (r) {
		bs_list_del(&pe->rxq, r);
		if (pe->rx_len == BS_LEN_POISON) {
			bs_req_done(r, -ECONNRESET);
			pe->rx_state = RX_HDR;
			return;
		}
		if (r->len != pe->rx_len) {
			bs_req_done(r, -EMSGSIZE);
			pe->rx_discard = 1;
		} else {
			pe->rx_req = r;
		}
		goto body;
	}
	if (pe->rx_len <= st->slot_bytes || pe->rx_len == BS_LEN_POISON) {
		for (i = 0; i < st->nslots; i++) {
			struct bs_sslot *s = &st->slots[i];

			if (s->used)
				continue;
			s->used = 1;
			s->complete = 0;
			s->got = 0;
			s->seq = ++st->seq;
			s->len = pe->rx_len;
			s->peer = p;
			s->space = pe->rx_space;
			s->tag = pe->rx_tag;
			if (pe->rx_len == BS_LEN_POISON) {
				s->complete = 1;
				pe->rx_state = RX_HDR;
				return;
			}
			pe->rx_slot = (int32_t)i;
			goto body;
		}
	}
	pe->rx_state = RX_STALL;
	return;
body:
	pe->rx_state = RX_BODY;
	pe->rx_got = 0;
	if (!pe->rx_len)
		sk_rx_body_done(st, pe);
}

static void sk_rx_progress(struct bs_sock *st, int p)
{
	struct bs_speer *pe = &st->peers[p];
	uint8_t scratch[512];
	uint8_t *dst;
	size_t want;
	ssize_t n;

	while (pe->fd >= 0 && pe->rx_state != RX_STALL) {
		if (pe->rx_state == RX_HDR) {
			dst = pe->rxhdr + pe->rx_hgot;
			want = WIRE_HDR - pe->rx_hgot;
		} else if (pe->rx_req) {
			dst = (uint8_t *)pe->rx_req->rbuf + pe->rx_got;
			want = (size_t)(pe->rx_len - pe->rx_got);
		} else if (pe->rx_slot >= 0) {
			dst = sk_slot_data(st, pe->rx_slot) + pe->rx_got;
			want = (size_t)(pe->rx_len - pe->rx_got);
		} else {
			dst = scratch;
			want = (size_t)(pe->rx_len - pe->rx_got);
			if (want > sizeof(scratch))
				want = sizeof(scratch);
		}
		n = recv(pe->fd, dst, want, MSG_DONTWAIT);
		if (n == 0) {
			sk_fail_peer(st, p, -ECONNRESET);
			return;
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			sk_fail_peer(st, p, -ECONNRESET);
			return;
		}
		if (pe->rx_state == RX_HDR) {
			pe->rx_hgot += (uint32_t)n;
			if (pe->rx_hgot < WIRE_HDR)
				continue;
			pe->rx_hgot = 0;
			if (dvx_get_be32(pe->rxhdr) != WIRE_MAGIC ||
			    dvx_get_be16(pe->rxhdr + 4) != WIRE_VERSION) {
				sk_fail_peer(st, p, -EPROTO);
				return;
			}
			if (dvx_get_be16(pe->rxhdr + 6) & WIRE_F_BYE) {
				pe->left = 1;
				sk_fail_peer(st, p, -ECONNRESET);
				return;
			}
			pe->rx_space = dvx_get_be32(pe->rxhdr + 8);
			pe->rx_tag = dvx_get_be32(pe->rxhdr + 12);
			pe->rx_len = dvx_get_be64(pe->rxhdr + 16);
			if (dvx_get_be16(pe->rxhdr + 6) & WIRE_F_POISON)
				pe->rx_len = BS_LEN_POISON;
			sk_rx_dispatch(st, pe, p);
			continue;
		}
		pe->rx_got += (uint64_t)n;
		if (pe->rx_req) {
			pe->rx_req->moved = pe->rx_got;
			pe->rx_req->state = DVX_BOOTSTRAP_REQ_ACTIVE;
		} else if (pe->rx_slot >= 0) {
			st->slots[pe->rx_slot].got = pe->rx_got;
		}
		if (pe->rx_got == pe->rx_len)
			sk_rx_body_done(st, pe);
	}
}

static void sk_tx_progress(struct bs_sock *st, int p)
{
	struct bs_speer *pe = &st->peers[p];
	struct bs_req *r;
	struct iovec iov[2];
	struct msghdr mh;
	ssize_t n;
	size_t k;

	while (pe->fd >= 0 && (r = pe->txq.head)) {
		if (r->state == DVX_BOOTSTRAP_REQ_QUEUED) {
			int poison = r->len == BS_LEN_POISON;

			dvx_put_be32(pe->txhdr, WIRE_MAGIC);
			dvx_put_be16(pe->txhdr + 4, WIRE_VERSION);
			dvx_put_be16(pe->txhdr + 6, poison ? WIRE_F_POISON : 0);
			dvx_put_be32(pe->txhdr + 8, r->space);
			dvx_put_be32(pe->txhdr + 12, r->tag);
			dvx_put_be64(pe->txhdr + 16, poison ? 0 : r->len);
			if (poison)
				r->len = 0;	/* nothing follows the header */
			pe->tx_hsent = 0;
			r->moved = 0;
		}
		memset(&mh, 0, sizeof(mh));
		k = 0;
		if (pe->tx_hsent < WIRE_HDR) {
			iov[k].iov_base = pe->txhdr + pe->tx_hsent;
			iov[k].iov_len = WIRE_HDR - pe->tx_hsent;
			k++;
		}
		if (r->moved < r->len) {
			iov[k].iov_base = (void *)((const uint8_t *)r->sbuf + r->moved);
			iov[k].iov_len = (size_t)(r->len - r->moved);
			k++;
		}
		mh.msg_iov = iov;
		mh.msg_iovlen = k;
		n = sendmsg(pe->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			sk_fail_peer(st, p, -ECONNRESET);
			return;
		}
		r->state = DVX_BOOTSTRAP_REQ_ACTIVE;
		if (pe->tx_hsent < WIRE_HDR) {
			size_t h = WIRE_HDR - pe->tx_hsent;

			if ((size_t)n < h) {
				pe->tx_hsent += (uint32_t)n;
				continue;
			}
			pe->tx_hsent = WIRE_HDR;
			n -= (ssize_t)h;
		}
		r->moved += (uint64_t)n;
		if (r->moved == r->len) {
			pe->txq.head = r->next;
			if (!pe->txq.head)
				pe->txq.tail = NULL;
			bs_req_done(r, 0);
			pe->tx_hsent = 0;
		}
	}
}

/* One round: poll every live connection until something is ready or @deadline. */
static void sk_progress(struct bs_sock *st, uint64_t deadline)
{
	struct timespec ts;
	uint64_t now, left;
	int i, n;

	for (i = 0; i < st->nranks; i++) {
		struct bs_speer *pe = &st->peers[i];
		short ev = 0;

		if (pe->rx_state != RX_STALL)
			ev |= POLLIN;
		if (pe->txq.head)
			ev |= POLLOUT;
		/* a stalled reader with nothing to send would spin on a hang-up */
		st->pfd[i].fd = ev ? pe->fd : -1;
		st->pfd[i].events = ev;
		st->pfd[i].revents = 0;
	}
	now = bs_now_ns();
	if (now >= deadline)
		return;
	left = deadline - now;
	ts.tv_sec = (time_t)(left / 1000000000ull);
	ts.tv_nsec = (long)(left % 1000000000ull);
	n = ppoll(st->pfd, (nfds_t)st->nranks, &ts, NULL);
	if (n <= 0)
		return;		/* timeout, or EINTR: the caller loops */
	for (i = 0; i < st->nranks; i++) {
		short re = st->pfd[i].revents;

		if (!re || st->pfd[i].fd < 0)
			continue;
		if (re & (POLLOUT | POLLERR | POLLHUP))
			sk_tx_progress(st, i);
		if (re & (POLLIN | POLLERR | POLLHUP))
			sk_rx_progress(st, i);
	}
}

/* Stalled readers may move on once a slot is free or a receive was posted. */
static void sk_unstall(struct bs_sock *st)
{
	int i;

	for (i = 0; i < st->nranks; i++) {
		if (st->peers[i].rx_state == RX_STALL && st->peers[i].fd >= 0) {
			sk_rx_dispatch(st, &st->peers[i], i);
			sk_rx_progress(st, i);
		}
	}
}

static int sk_post_send(struct dvx_bootstrap *bs, struct dvx_bootstrap_req *req, int peer,
			uint32_t space, uint32_t tag, const void *buf, size_t len)
{
	struct bs_sock *st = bs->priv;
	struct bs_speer *pe = &st->peers[peer];
	struct bs_req *r = bs_req(req);

	pthread_mutex_lock(&st->lock);
	bs_req_init(r, 1, peer, space, tag, buf, NULL, len);
	if (pe->err || pe->fd < 0) {
		bs_req_done(r, pe->err ? pe->err : -ECONNRESET);
	} else {
		bs_list_add(&pe->txq, r);
		sk_tx_progress(st, peer);
	}
	pthread_mutex_unlock(&st->lock);
	return 0;
}

static int sk_post_recv(struct dvx_bootstrap *bs, struct dvx_bootstrap_req *req, int peer,
			uint32_t space, uint32_t tag, void *buf, size_t len)
{
	struct bs_sock *st = bs->priv;
	struct bs_speer *pe = &st->peers[peer];
	struct bs_req *r = bs_req(req);
	struct bs_sslot *best = NULL, *s;
	uint32_t i;
	int bi = -1;

	pthread_mutex_lock(&st->lock);
	bs_req_init(r, 0, peer, space, tag, NULL, buf, len);
	for (i = 0; i < st->nslots; i++) {
		s = &st->slots[i];
		if (s->used && s->peer == peer && s->space == space && s->tag == tag &&
		    (!best || s->seq < best->seq)) {
			best = s;
			bi = (int)i;
		}
	}
	if (best && best->complete) {
		if (best->len == BS_LEN_POISON) {
			bs_req_done(r, -ECONNRESET);
		} else if (best->len != len) {
			bs_req_done(r, -EMSGSIZE);
		} else {
			if (len)
				memcpy(buf, sk_slot_data(st, bi), len);
			r->moved = len;
			bs_req_done(r, 0);
		}
		best->used = 0;
		sk_unstall(st);
	} else if (best) {
		/* the reader is filling this slot right now: take it over */
		if (best->len != len) {
			bs_req_done(r, -EMSGSIZE);
			pe->rx_discard = 1;
		} else {
			if (best->got)
				memcpy(buf, sk_slot_data(st, bi), (size_t)best->got);
			r->moved = best->got;
			if (best->got)
				r->state = DVX_BOOTSTRAP_REQ_ACTIVE;
			pe->rx_req = r;
		}
		best->used = 0;
		pe->rx_slot = -1;
		sk_unstall(st);
	} else if (pe->err || pe->fd < 0) {
		bs_req_done(r, pe->err ? pe->err : -ECONNRESET);
	} else {
		bs_list_add(&pe->rxq, r);
		if (pe->rx_state == RX_STALL) {
			sk_rx_dispatch(st, pe, peer);
			sk_rx_progress(st, peer);
		}
	}
	pthread_mutex_unlock(&st->lock);
	return 0;
}

static int sk_wait(struct dvx_bootstrap *bs, struct dvx_bootstrap_req *const *reqs, int n,
		   uint64_t deadline, int all_ranks)
{
	struct bs_sock *st = bs->priv;
	int i, ret, pending;

	pthread_mutex_lock(&st->lock);
	for (;;) {
		sk_unstall(st);
		pending = 0;
		ret = 0;
		for (i = 0; i < n; i++) {
			struct bs_req *r = bs_req(reqs[i]);

			if (r->state == DVX_BOOTSTRAP_REQ_DONE) {
				if (r->err && !ret)
					ret = r->err;
				continue;
			}
			pending++;
			/* the reader of that peer is stuck on a message nobody takes */
			if (!r->is_send && st->peers[r->peer].rx_state == RX_STALL &&
			    st->peers[r->peer].rx_req != r && !ret)
				ret = -ENOBUFS;
		}
		if (ret || !pending)
			break;
		if (all_ranks) {
			/* a failed rank dooms a collective; one that left may have finished it */
			for (i = 0; i < st->nranks; i++)
				if (st->peers[i].err && !st->peers[i].left)
					break;
			if (i < st->nranks) {
				ret = st->peers[i].err;
				break;
			}
		}
		if (bs_now_ns() >= deadline) {
			ret = -ETIMEDOUT;
			break;
		}
		sk_progress(st, deadline);
	}
	pthread_mutex_unlock(&st->lock);
	return ret;
}

static int sk_cancel(struct dvx_bootstrap *bs, struct dvx_bootstrap_req *req, int force)
{
	struct bs_sock *st = bs->priv;
	struct bs_req *r = bs_req(req);
	struct bs_speer *pe;
	int ret = 0;

	pthread_mutex_lock(&st->lock);
	if (r->state == DVX_BOOTSTRAP_REQ_DONE) {
		ret = 1;
		goto out;
	}
	if (r->state == DVX_BOOTSTRAP_REQ_IDLE)
		goto out;
	pe = &st->peers[r->peer];
	if (r->is_send) {
		if (r->state == DVX_BOOTSTRAP_REQ_QUEUED) {
			bs_list_del(&pe->txq, r);
		} else if (!force) {
			ret = -EBUSY;
			goto out;
		} else {
			/* half a message is on the wire: the stream cannot be framed again */
			bs_list_del(&pe->txq, r);
			sk_fail_peer(st, r->peer, -ECONNRESET);
		}
	} else if (pe->rx_req == r) {
		if (r->state == DVX_BOOTSTRAP_REQ_QUEUED && pe->rx_got == 0) {
			/* header read, nothing copied: leave the message for someone else */
			pe->rx_req = NULL;
			pe->rx_state = RX_STALL;
		} else if (!force) {
			ret = -EBUSY;
			goto out;
		} else {
			pe->rx_req = NULL;
			pe->rx_discard = 1;	/* drop the rest of this message */
		}
	} else {
		bs_list_del(&pe->rxq, r);
	}
	r->next = NULL;
	r->state = DVX_BOOTSTRAP_REQ_IDLE;
out:
	pthread_mutex_unlock(&st->lock);
	return ret;
}

static uint32_t sk_new_space(struct dvx_bootstrap *bs)
{
	struct bs_sock *st = bs->priv;
	uint32_t s;

	pthread_mutex_lock(&st->lock);
	s = ++st->next_space;
	pthread_mutex_unlock(&st->lock);
	return s;
}

static void sk_get(struct dvx_bootstrap *bs)
{
	struct bs_sock *st = bs->priv;

	pthread_mutex_lock(&st->lock);
	st->refs++;
	pthread_mutex_unlock(&st->lock);
}

/* Best effort: a goodbye frame on every healthy stream (whatever does not fit is skipped,
 * and that peer then sees a failure rather than a departure). */
static void sk_say_bye(struct bs_sock *st)
{
	uint8_t h[WIRE_HDR];
	int i;

	memset(h, 0, sizeof(h));
	dvx_put_be32(h, WIRE_MAGIC);
	dvx_put_be16(h + 4, WIRE_VERSION);
	dvx_put_be16(h + 6, WIRE_F_BYE);
	for (i = 0; i < st->nranks; i++) {
		struct bs_speer *pe = &st->peers[i];

		if (pe->fd < 0 || pe->txq.head)
			continue;
		while (send(pe->fd, h, sizeof(h), MSG_NOSIGNAL | MSG_DONTWAIT) < 0 &&
		       errno == EINTR)
			;
	}
}

static void sk_put(struct dvx_bootstrap *bs)
{
	struct bs_sock *st = bs->priv;
	int last;

	pthread_mutex_lock(&st->lock);
	last = --st->refs == 0;
	if (last) {
		sk_say_bye(st);
		sk_close_all(st);
	}
	pthread_mutex_unlock(&st->lock);
	if (last) {
		st->magic = 0;
		pthread_mutex_destroy(&st->lock);
	}
}

static const struct dvx_bootstrap_ops sk_ops = {
	.post_send = sk_post_send,
	.post_recv = sk_post_recv,
	.wait = sk_wait,
	.cancel = sk_cancel,
	.new_space = sk_new_space,
	.get = sk_get,
	.put = sk_put,
};
