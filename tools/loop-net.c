// SPDX-License-Identifier: MIT
/*
 * tools/loop-net.c - dvx-loop's client/server exchange over a plain TCP socket: the
 * addresses on the command line, the bounded listen/accept/connect/send/receive on the
 * hal's sockets (dvx_hal_sock_*(): non-blocking, every wait a dvx_hal_sock_poll() with
 * a deadline), and the frames both sides send.
 *
 * Every frame is NET_FRAME (256) bytes, multi-byte fields big-endian:
 *
 *   0  "DVXL"            4  version (be16)     6  type (be16)        8  status (be32)
 *  12  mode, op, sweep, atomics (u8 each)     16  size (be32)       20  duration_s (be32)
 *  24  tx_depth (be32)  28  cq_mod (be32)     32  iters (be64)      40  0 (be32)
 *  44  rkey (be32)      48  addr (be64)       56  cap (be64)
 *  64  struct dvx_qp_conn (48 bytes, big-endian as dvx_qp_export() writes it)
 * 112  text (96 bytes, NUL-terminated)       208  zero to the end
 *
 * A frame with another magic, version or an unknown type is refused (-EPROTO).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "loop.h"

#include <dvx/hal/host.h>

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

void net_encode(const struct net_msg *m, uint8_t f[NET_FRAME])
{
	memset(f, 0, NET_FRAME);
	memcpy(f, "DVXL", 4);
	put16(f + 4, NET_VERSION);
	put16(f + 6, m->type);
	put32(f + 8, (uint32_t)m->status);
	f[12] = m->mode;
	f[13] = m->op;
	f[14] = m->sweep;
	f[15] = m->ep.atomics;
	put32(f + 16, m->size);
	put32(f + 20, m->duration_s);
	put32(f + 24, m->tx_depth);
	put32(f + 28, m->cq_mod);
	put64(f + 32, m->iters);
	put32(f + 44, m->ep.rkey);
	put64(f + 48, m->ep.addr);
	put64(f + 56, m->ep.cap);
	memcpy(f + 64, &m->ep.conn, sizeof(m->ep.conn));
	memcpy(f + 112, m->text, strnlen(m->text, NET_TEXT - 1));
}

int net_decode(const uint8_t f[NET_FRAME], struct net_msg *m)
{
	memset(m, 0, sizeof(*m));
	if (memcmp(f, "DVXL", 4) || get16(f + 4) != NET_VERSION || !get16(f + 6) ||
	    get16(f + 6) > NET_TYPE_MAX)
		return -EPROTO;
	m->type = get16(f + 6);
	m->status = (int32_t)get32(f + 8);
	m->mode = f[12];
	m->op = f[13];
	m->sweep = f[14];
	m->ep.atomics = f[15];
	m->size = get32(f + 16);
	m->duration_s = get32(f + 20);
	m->tx_depth = get32(f + 24);
	m->cq_mod = get32(f + 28);
	m->iters = get64(f + 32);
	m->ep.rkey = get32(f + 44);
	m->ep.addr = get64(f + 48);
	m->ep.cap = get64(f + 56);
	memcpy(&m->ep.conn, f + 64, sizeof(m->ep.conn));
	memcpy(m->text, f + 112, NET_TEXT - 1);
	m->text[NET_TEXT - 1] = '\0';
	return 0;
}

/* ---- addresses ---- */

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
	*port = (uint16_t)v;
	return 0;
}

/* a numeric address, or a name through the system's resolver (its own timeouts bound
 * it; a tool may wait on it, the library never does) */
static int resolve(const char *host, struct dvx_hal_sock_addr *a)
{
	struct addrinfo hints, *res = NULL, *ai;
	int rc = -EHOSTUNREACH;

	if (inet_pton(AF_INET, host, a->ip) == 1) {
		a->family = DVX_HAL_SOCK_IP4;
		return 0;
	}
	if (inet_pton(AF_INET6, host, a->ip) == 1) {
		a->family = DVX_HAL_SOCK_IP6;
		return 0;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, NULL, &hints, &res))
		return -EHOSTUNREACH;
	for (ai = res; ai; ai = ai->ai_next) {
		if (ai->ai_family == AF_INET) {
			const struct sockaddr_in *in = (const void *)ai->ai_addr;

			memcpy(a->ip, &in->sin_addr, 4);
			a->family = DVX_HAL_SOCK_IP4;
			rc = 0;
			break;
		}
		if (ai->ai_family == AF_INET6) {
			const struct sockaddr_in6 *in6 = (const void *)ai->ai_addr;

			memcpy(a->ip, &in6->sin6_addr, 16);
			a->scope_id = in6->sin6_scope_id;
			a->family = DVX_HAL_SOCK_IP6;
			rc = 0;
			break;
		}
	}
	freeaddrinfo(res);
	return rc;
}

int net_parse_addr(const char *s, int listen, struct dvx_hal_sock_addr *a, char *err,
		   size_t n)
{
	char host[256];
	const char *port = NULL;
	size_t hl;
	int rc;

	memset(a, 0, sizeof(*a));
	if (!s || !*s) {
		snprintf(err, n, "an empty address");
		return -EINVAL;
	}
	if (*s == '[') {			/* [V6] or [V6]:PORT */
		const char *e = strchr(s, ']');

		if (!e || (e[1] && e[1] != ':')) {
			snprintf(err, n, "'%s': an IPv6 address is written [ADDR]:PORT", s);
			return -EINVAL;
		}
		hl = (size_t)(e - s - 1);
		if (hl >= sizeof(host)) {
			snprintf(err, n, "'%s': address too long", s);
			return -EINVAL;
		}
		memcpy(host, s + 1, hl);
		host[hl] = '\0';
		port = e[1] ? e + 2 : NULL;
		if (inet_pton(AF_INET6, host, a->ip) != 1) {
			snprintf(err, n, "'%s': not an IPv6 address", host);
			return -EINVAL;
		}
		a->family = DVX_HAL_SOCK_IP6;
	} else {
		const char *colon = strrchr(s, ':');

		if (colon && strchr(s, ':') != colon) {
			snprintf(err, n, "'%s': write an IPv6 address as [ADDR]:PORT", s);
			return -EINVAL;
		}
		if (listen && !colon) {		/* PORT alone: every IPv4 interface */
			port = s;
			a->family = DVX_HAL_SOCK_IP4;
		} else {
			hl = colon ? (size_t)(colon - s) : strlen(s);
			if (!hl || hl >= sizeof(host)) {
				snprintf(err, n, "'%s': %s", s, hl ? "host name too long" :
					 "no host before the ':'");
				return -EINVAL;
			}
			memcpy(host, s, hl);
			host[hl] = '\0';
			port = colon ? colon + 1 : NULL;
			rc = resolve(host, a);
			if (rc) {
				snprintf(err, n, "'%s': no such host", host);
				return rc;
			}
		}
	}
	if (listen && !port) {
		snprintf(err, n, "'%s': --listen wants [ADDR:]PORT", s);
		memset(a, 0, sizeof(*a));
		return -EINVAL;
	}
	if (port && parse_port(port, &a->port)) {
		snprintf(err, n, "'%s': the port is a number from %d to 65535", port,
			 listen ? 0 : 1);
		memset(a, 0, sizeof(*a));
		return -EINVAL;
	}
	if (port && !listen && !a->port) {
		snprintf(err, n, "'%s': the port is a number from 1 to 65535", port);
		memset(a, 0, sizeof(*a));
		return -EINVAL;
	}
	return 0;
}

void net_addr_str(const struct dvx_hal_sock_addr *a, char *buf, size_t n)
{
	char ip[INET6_ADDRSTRLEN];

	if (a->family == DVX_HAL_SOCK_IP6) {
		inet_ntop(AF_INET6, a->ip, ip, sizeof(ip));
		snprintf(buf, n, "[%s]:%u", ip, a->port);
	} else {
		inet_ntop(AF_INET, a->ip, ip, sizeof(ip));
		snprintf(buf, n, "%s:%u", ip, a->port);
	}
}

/* ---- sockets, every wait bounded ---- */

/* wait for @events on @fd until @deadline (loop_now_ns()); 0 ready, -ETIMEDOUT */
static int wait_fd(const struct dvx_hal *hal, int fd, int16_t events, uint64_t deadline)
{
	struct dvx_hal_pollfd p;
	uint64_t t;
	int rc;

	for (;;) {
		t = loop_now_ns();
		if (t >= deadline)
			return -ETIMEDOUT;
		p.fd = fd;
		p.events = events;
		p.revents = 0;
		rc = dvx_hal_sock_poll(hal, &p, 1, deadline - t);
		if (rc < 0)
			return rc;
		if (rc > 0)
			return 0;	/* ready, or an error/hang-up the next call reports */
	}
}

int net_listen(const struct dvx_hal *hal, const struct dvx_hal_sock_addr *a, int *lfd,
	       struct dvx_hal_sock_addr *bound)
{
	int rc = dvx_hal_sock_listen(hal, a, 1, lfd);

	if (rc)
		return rc;
	rc = dvx_hal_sock_name(hal, *lfd, bound);
	if (rc)
		net_close(hal, lfd);
	return rc;
}

/* accept one connection by the deadline; -ECANCELED as soon as *@cancel is set (looked
 * at every 100 ms) */
int net_accept(const struct dvx_hal *hal, int lfd, uint64_t timeout_ns, const int *cancel,
	       int *fd)
{
	uint64_t deadline = loop_now_ns() + timeout_ns, slice;
	int rc;

	for (;;) {
		rc = dvx_hal_sock_accept(hal, lfd, fd);
		if (rc != -EAGAIN)
			return rc;
		if (cancel && __atomic_load_n(cancel, __ATOMIC_ACQUIRE))
			return -ECANCELED;
		slice = loop_now_ns() + 100000000ull;
		rc = wait_fd(hal, lfd, DVX_HAL_POLL_IN, slice < deadline ? slice : deadline);
		if (rc == -ETIMEDOUT && slice < deadline)
			continue;
		if (rc)
			return rc;
	}
}

/* connect, retrying a refused connection (the server may not be up yet) until the
 * deadline */
int net_connect(const struct dvx_hal *hal, const struct dvx_hal_sock_addr *a,
		uint64_t timeout_ns, int *fd)
{
	uint64_t deadline = loop_now_ns() + timeout_ns;
	int rc;

	for (;;) {
		rc = dvx_hal_sock_connect(hal, a, fd);
		if (!rc) {
			rc = wait_fd(hal, *fd, DVX_HAL_POLL_OUT, deadline);
			if (!rc)
				rc = dvx_hal_sock_error(hal, *fd);
			if (!rc)
				return 0;
			net_close(hal, fd);
		}
		if (rc != -ECONNREFUSED || loop_now_ns() + 100000000ull >= deadline)
			return rc;
		dvx_hal_sleep_ns(hal, 100000000ull);	/* 100 ms, then again */
	}
}

int net_send(const struct dvx_hal *hal, int fd, const struct net_msg *m, uint64_t timeout_ns)
{
	uint64_t deadline = loop_now_ns() + timeout_ns;
	uint8_t f[NET_FRAME];
	struct dvx_hal_iov iov;
	size_t done = 0, sent;
	int rc;

	net_encode(m, f);
	while (done < NET_FRAME) {
		iov.base = f + done;
		iov.len = NET_FRAME - done;
		rc = dvx_hal_sock_send(hal, fd, &iov, 1, &sent);
		if (rc == -EAGAIN)
			rc = wait_fd(hal, fd, DVX_HAL_POLL_OUT, deadline);
		else if (!rc)
			done += sent;
		if (rc)
			return rc;
	}
	return 0;
}

int net_recv(const struct dvx_hal *hal, int fd, struct net_msg *m, uint64_t timeout_ns)
{
	uint64_t deadline = loop_now_ns() + timeout_ns;
	uint8_t f[NET_FRAME];
	size_t done = 0, got;
	int rc;

	while (done < NET_FRAME) {
		rc = dvx_hal_sock_recv(hal, fd, f + done, NET_FRAME - done, &got);
		if (rc == -EAGAIN)
			rc = wait_fd(hal, fd, DVX_HAL_POLL_IN, deadline);
		else if (!rc && !got)
			rc = -ECONNRESET;	/* the peer closed its end */
		else if (!rc)
			done += got;
		if (rc)
			return rc;
	}
	return net_decode(f, m);
}

/* 1 when a frame (or the peer's close) is waiting, 0 when not, or a negative errno */
int net_readable(const struct dvx_hal *hal, int fd)
{
	struct dvx_hal_pollfd p;
	int rc;

	p.fd = fd;
	p.events = DVX_HAL_POLL_IN;
	p.revents = 0;
	rc = dvx_hal_sock_poll(hal, &p, 1, 0);
	return rc < 0 ? rc : rc > 0;
}

void net_close(const struct dvx_hal *hal, int *fd)
{
	if (*fd >= 0)
		dvx_hal_sock_close(hal, *fd);
	*fd = -1;
}
