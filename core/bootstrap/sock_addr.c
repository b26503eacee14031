// SPDX-License-Identifier: MIT
/*
 * core/bootstrap/sock_addr.c - the sockets adapter's addresses and set-up records: the
 * "unix:PATH" / "tcp:IP:PORT" strings parsed into the hal's struct dvx_hal_sock_addr,
 * the listening paths of ranks r > 0, the 128-byte address on the wire, the 16-byte
 * head of the set-up records, and the size of a rank's memory. Pure code: no OS call.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include <dvx/byteorder.h>

#include "sock_priv.h"

size_t dvx_bootstrap_sock_mem_size(int nranks, uint32_t max_unexpected, uint32_t slot_bytes)
{
	if (nranks < 1 || nranks > DVX_BOOTSTRAP_MAX_RANKS ||
	    max_unexpected > DVX_BOOTSTRAP_MAX_SLOTS || slot_bytes > DVX_BOOTSTRAP_MAX_SLOT_BYTES)
		return 0;
	return DVX_BOOTSTRAP_SOCK_MEM_SIZE(nranks, max_unexpected, slot_bytes);
}

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

/* "tcp:" already skipped: "A.B.C.D:PORT" or "[V6]:PORT", numeric only (no resolver:
 * it allocates and cannot be bounded by a timeout). inet_pton() only parses. */
static int parse_tcp(const char *h, struct dvx_hal_sock_addr *a)
{
	const char *colon;
	char host[64];
	size_t hl;
	int v6 = *h == '[';

	if (v6) {
		const char *e = strchr(h, ']');

		if (!e || e[1] != ':')
			return -EINVAL;
		hl = (size_t)(e - h - 1);
		h++;
		colon = e + 1;
	} else {
		colon = strrchr(h, ':');
		if (!colon)
			return -EINVAL;
		hl = (size_t)(colon - h);
	}
	if (hl >= sizeof(host))
		return -EINVAL;
	memcpy(host, h, hl);
	host[hl] = 0;
	if (parse_port(colon + 1, &a->port))
		return -EINVAL;
	if (inet_pton(v6 ? AF_INET6 : AF_INET, host, a->ip) != 1)
		return -EINVAL;
	a->family = v6 ? DVX_HAL_SOCK_IP6 : DVX_HAL_SOCK_IP4;
	return 0;
}

int dvx_bs_sock_parse_addr(const char *addr, int nranks, struct dvx_hal_sock_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (!strncmp(addr, "unix:", 5)) {
		size_t n = strlen(addr + 5);
		char digits[16];

		/* the listeners of the other ranks are "<path>.<rank>" */
		snprintf(digits, sizeof(digits), ".%d", nranks);
		if (!n || n + strlen(digits) >= sizeof(a->path))
			return -EINVAL;
		a->family = DVX_HAL_SOCK_UNIX;
		memcpy(a->path, addr + 5, n + 1);
		return 0;
	}
	if (!strncmp(addr, "tcp:", 4)) {
		if (parse_tcp(addr + 4, a)) {
			memset(a, 0, sizeof(*a));
			return -EINVAL;
		}
		return 0;
	}
	return -EINVAL;
}

void dvx_bs_sock_rank_addr(struct dvx_hal_sock_addr *dst, const struct dvx_hal_sock_addr *rv,
			   int rank)
{
	char digits[12];
	size_t cap = sizeof(dst->path), n = strnlen(rv->path, cap - 1), k = 0, i;
	unsigned int v = (unsigned int)rank;

	memset(dst, 0, sizeof(*dst));
	dst->family = DVX_HAL_SOCK_UNIX;
	do {
		digits[k++] = (char)('0' + v % 10);
		v /= 10;
	} while (v && k < sizeof(digits));
	if (n + 1 + k >= cap)
		return;		/* cannot happen: parse_addr checked the length */
	memcpy(dst->path, rv->path, n);
	dst->path[n++] = '.';
	for (i = 0; i < k; i++)
		dst->path[n++] = digits[k - 1 - i];
	dst->path[n] = 0;
}

void dvx_bs_sock_waddr_from(struct bs_waddr *w, const struct dvx_hal_sock_addr *a)
{
	memset(w, 0, sizeof(*w));
	switch (a->family) {
	case DVX_HAL_SOCK_UNIX:
		dvx_put_be16(&w->kind, WADDR_UNIX);
		memcpy(w->path, a->path, sizeof(w->path));
		w->path[sizeof(w->path) - 1] = 0;
		break;
	case DVX_HAL_SOCK_IP4:
		dvx_put_be16(&w->kind, WADDR_IP4);
		dvx_put_be16(&w->port, a->port);
		memcpy(w->ip, a->ip, 4);
		break;
	case DVX_HAL_SOCK_IP6:
		dvx_put_be16(&w->kind, WADDR_IP6);
		dvx_put_be16(&w->port, a->port);
		memcpy(w->ip, a->ip, 16);
		break;
	default:
		break;		/* no listener: the entry stays empty */
	}
}

int dvx_bs_sock_waddr_to(struct dvx_hal_sock_addr *a, const struct bs_waddr *w)
{
	memset(a, 0, sizeof(*a));
	switch (dvx_get_be16(&w->kind)) {
	case WADDR_UNIX:
		if (!memchr(w->path, 0, sizeof(w->path)) || !w->path[0])
			return -EPROTO;
		a->family = DVX_HAL_SOCK_UNIX;
		memcpy(a->path, w->path, sizeof(w->path));
		return 0;
	case WADDR_IP4:
		a->family = DVX_HAL_SOCK_IP4;
		memcpy(a->ip, w->ip, 4);
		break;
	case WADDR_IP6:
		a->family = DVX_HAL_SOCK_IP6;
		memcpy(a->ip, w->ip, 16);
		break;
	default:
		return -EPROTO;
	}
	a->port = dvx_get_be16(&w->port);
	return a->port ? 0 : -EPROTO;
}

void dvx_bs_sock_setup_head(uint8_t *h, uint32_t type, uint32_t rank, uint32_t nranks)
{
	dvx_put_be32(h, WIRE_MAGIC);
	dvx_put_be16(h + 4, WIRE_VERSION);
	dvx_put_be16(h + 6, (uint16_t)type);
	dvx_put_be32(h + 8, rank);
	dvx_put_be32(h + 12, nranks);
}

int dvx_bs_sock_setup_check(const uint8_t *h, uint32_t type, int nranks)
{
	uint32_t rank = dvx_get_be32(h + 8);

	if (dvx_get_be32(h) != WIRE_MAGIC || dvx_get_be16(h + 4) != WIRE_VERSION ||
	    dvx_get_be16(h + 6) != type || dvx_get_be32(h + 12) != (uint32_t)nranks ||
	    rank >= (uint32_t)nranks)
		return -EPROTO;
	return (int)rank;
}
