// SPDX-License-Identifier: MIT
/*
 * core/msg/handle.c - a listen handle's travelling part, written by dvx_msg_listen()
 * and read by dvx_msg_connect(): pure functions (msg_priv.h has the layout), so that
 * what a peer hands over can be fuzzed without a context (tests/fuzz/lf/nccl_handle.c).
 */
#include "msg_priv.h"

void dvx_msg_handle_put(struct dvx_msg_handle *h, const struct msg_handle_info *i)
{
	uint8_t *w = h->wire;
	size_t n;

	memset(h, 0, sizeof(*h));
	dvx_msg_put32(w, MSG_HANDLE_MAGIC);
	w[4] = MSG_HANDLE_VERSION;
	w[5] = (uint8_t)i->addr.family;
	w[6] = i->nic;
	dvx_msg_put64(w + 8, i->ctx);
	dvx_msg_put64(w + 16, i->cookie);
	dvx_msg_put16(w + 24, i->listen_id);
	dvx_msg_put16(w + 26, i->addr.port);
	dvx_msg_put32(w + 28, i->addr.scope_id);
	memcpy(w + 32, i->addr.ip, 16);
	n = strnlen(i->addr.path, MSG_HANDLE_PATH_MAX - 1);
	memcpy(w + 48, i->addr.path, n);
}

int dvx_msg_handle_parse(const struct dvx_msg_handle *h, struct msg_handle_info *i)
{
	const uint8_t *w = h->wire;
	struct dvx_hal_sock_addr *a = &i->addr;

	if (dvx_msg_get32(w) != MSG_HANDLE_MAGIC || w[4] != MSG_HANDLE_VERSION)
		return -EINVAL;
	memset(i, 0, sizeof(*i));
	a->family = w[5];
	i->nic = w[6];
	i->ctx = dvx_msg_get64(w + 8);
	i->cookie = dvx_msg_get64(w + 16);
	i->listen_id = dvx_msg_get16(w + 24);
	switch (a->family) {
	case DVX_HAL_SOCK_IP4:
	case DVX_HAL_SOCK_IP6:
		a->port = dvx_msg_get16(w + 26);
		a->scope_id = dvx_msg_get32(w + 28);
		memcpy(a->ip, w + 32, 16);
		if (!a->port)
			return -EINVAL;
		break;
	case DVX_HAL_SOCK_UNIX:
	case DVX_HAL_SOCK_ABSTRACT:
		if (!memchr(w + 48, 0, MSG_HANDLE_PATH_MAX) || !w[48])
			return -EINVAL;
		memcpy(a->path, w + 48, MSG_HANDLE_PATH_MAX);
		break;
	default:
		return -EINVAL;
	}
	return 0;
}
