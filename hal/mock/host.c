// SPDX-License-Identifier: MIT
/*
 * hal/mock/host.c - the mock's host table: memory, PCI functions, limits, a settable (or
 * the real) clock, stream sockets and sleeping, and random bytes.
 *
 * The sockets are real (hal/net.c does the work, as hal/hostmem.c does for memory): the
 * mock logs each call, lets it be failed before it runs, keeps every socket it opened
 * in m->sock[] (counted in DVX_MOCK_RES_SOCK until sock_close) and refuses with -EBADF
 * calls on a socket it did not open, so a test catches both a leaked and a foreign fd.
 */
#include <unistd.h>

#include "priv.h"

/* ---- host side ---- */

static int mock_mem_alloc(const struct dvx_hal *hal, uint64_t len, uint64_t align, int numa_node,
			  uint32_t flags, struct dvx_hal_mem *mem)
{
	struct dvx_mock *m = dvx_mockp_mock_of(hal);
	struct dvx_mock_call *c = dvx_mockp_begin(m, DVX_MOCK_OP_MEM_ALLOC, -1);
	struct dvx_mock_mem *s = NULL;
	size_t i;
	int err;

	c->len = len;
	c->align = align;
	c->numa_node = numa_node;
	c->flags = flags;
	err = dvx_mockp_injected_err(m, c);
	if (err)
		return dvx_mockp_end(m, c, err);
	for (i = 0; i < DVX_MOCK_MAX_MEMS && !s; i++)
		if (!m->mem[i].live)
			s = &m->mem[i];
	if (!s)
		return dvx_mockp_end(m, c, -ENOMEM);
	err = dvx_host_mem_alloc(hal, len, align, numa_node, flags, mem);
	if (err)
		return dvx_mockp_end(m, c, err);
	s->live = 1;
	s->addr = mem->addr;
	c->addr = (uint64_t)(uintptr_t)mem->addr;
	m->live[DVX_MOCK_RES_MEM]++;
	return dvx_mockp_end(m, c, 0);
}

static int mock_mem_free(const struct dvx_hal *hal, struct dvx_hal_mem *mem)
{
	struct dvx_mock *m = dvx_mockp_mock_of(hal);
	struct dvx_mock_call *c = dvx_mockp_begin(m, DVX_MOCK_OP_MEM_FREE, -1);
	struct dvx_mock_mem *s = NULL;
	size_t i;
	int err;

	c->addr = (uint64_t)(uintptr_t)mem->addr;
	c->len = mem->len;
	err = dvx_mockp_injected_err(m, c);
	if (err)
		return dvx_mockp_end(m, c, err);	/* the memory stays allocated */
	for (i = 0; i < DVX_MOCK_MAX_MEMS && !s; i++)
		if (m->mem[i].live && mem->addr && m->mem[i].addr == mem->addr)
			s = &m->mem[i];
	if (!s)
		return dvx_mockp_end(m, c, -EINVAL);
	err = dvx_host_mem_free(hal, mem);
	if (err)
		return dvx_mockp_end(m, c, err);
	s->live = 0;
	m->live[DVX_MOCK_RES_MEM]--;
	return dvx_mockp_end(m, c, 0);
}

static int mock_pci_list(const struct dvx_hal *hal, uint32_t class_mask, uint32_t class_value,
			 struct dvx_hal_pci_dev *devs, unsigned max, unsigned *count)
{
	struct dvx_mock *m = dvx_mockp_mock_of(hal);
	struct dvx_mock_call *c = dvx_mockp_begin(m, DVX_MOCK_OP_PCI_LIST, -1);
	unsigned i, n = 0;
	int err;

	c->flags = class_mask;
	c->id = class_value;
	c->len = max;
	err = dvx_mockp_injected_err(m, c);
	if (err)
		return dvx_mockp_end(m, c, err);
	for (i = 0; i < m->npci; i++) {
		if ((m->pci[i].class_code & class_mask) != class_value)
			continue;
		if (n < max)
			devs[n] = m->pci[i];
		n++;
	}
	*count = n;
	return dvx_mockp_end(m, c, 0);
}

static int mock_limits(const struct dvx_hal *hal, struct dvx_hal_limits *lim)
{
	struct dvx_mock *m = dvx_mockp_mock_of(hal);
	struct dvx_mock_call *c = dvx_mockp_begin(m, DVX_MOCK_OP_LIMITS, -1);
	int err = dvx_mockp_injected_err(m, c);

	if (err)
		return dvx_mockp_end(m, c, err);
	if (m->limits_err)
		return dvx_mockp_end(m, c, dvx_mockp_neg(m->limits_err));
	*lim = m->limits;
	return dvx_mockp_end(m, c, 0);
}

static uint64_t mock_now_ns(const struct dvx_hal *hal)
{
	struct dvx_mock *m = dvx_mockp_mock_of(hal);
	struct dvx_mock_call *c = dvx_mockp_begin(m, DVX_MOCK_OP_NOW_NS, -1);
	uint64_t now;

	if (m->now_real) {
		now = dvx_host_now_ns(hal);
	} else {
		now = m->now_ns;
		m->now_ns += m->now_step;
	}
	c->len = now;
	if (m->check)
		(void)m->check(m->check_arg, c);	/* observed, cannot fail */
	dvx_mockp_end(m, c, 0);
	return now;
}

/* ---- stream sockets and sleeping ---- */

static struct dvx_mock_sock *sock_find(struct dvx_mock *m, int fd)
{
	size_t i;

	for (i = 0; i < DVX_MOCK_MAX_SOCKS; i++)
		if (m->sock[i].live && m->sock[i].fd == fd)
			return &m->sock[i];
	return NULL;
}

static struct dvx_mock_sock *sock_free_slot(struct dvx_mock *m)
{
	size_t i;

	for (i = 0; i < DVX_MOCK_MAX_SOCKS; i++)
		if (!m->sock[i].live)
			return &m->sock[i];
	return NULL;
}

static void sock_keep(struct dvx_mock *m, struct dvx_mock_sock *s, int fd, int listening)
{
	s->live = 1;
	s->listening = (uint8_t)listening;
	s->fd = fd;
	m->live[DVX_MOCK_RES_SOCK]++;
}

static void log_addr(struct dvx_mock_call *c, const struct dvx_hal_sock_addr *a)
{
	c->flags = a->family;
	c->port = a->port;
	if (a->family == DVX_HAL_SOCK_UNIX || a->family == DVX_HAL_SOCK_ABSTRACT)
		dvx_mockp_copy_str(c->name, sizeof(c->name), a->path);
}

/* begin, inject, and check that @fd is one of ours: 0 to go on, else the call's answer */
static int sock_begin(struct dvx_mock *m, struct dvx_mock_call *c, int fd)
{
	int err;

	c->fd = fd;
	err = dvx_mockp_injected_err(m, c);
	if (err)
		return err;
	return sock_find(m, fd) ? 0 : -EBADF;
}

static int mock_sock_listen(const struct dvx_hal *hal, const struct dvx_hal_sock_addr *addr,
			    int backlog, int *fd)
{
	struct dvx_mock *m = dvx_mockp_mock_of(hal);
	struct dvx_mock_call *c = dvx_mockp_begin(m, DVX_MOCK_OP_SOCK_LISTEN, -1);
	struct dvx_mock_sock *s;
	int err;

	log_addr(c, addr);
	c->len = (uint64_t)backlog;
	err = dvx_mockp_injected_err(m, c);
	if (err)
		return dvx_mockp_end(m, c, err);
	s = sock_free_slot(m);
	if (!s)
		return dvx_mockp_end(m, c, -EMFILE);
	err = dvx_host_sock_listen(hal, addr, backlog, fd);
	if (err)
		return dvx_mockp_end(m, c, err);
	sock_keep(m, s, *fd, 1);
	c->fd = *fd;
	return dvx_mockp_end(m, c, 0);
}

static int mock_sock_connect(const struct dvx_hal *hal, const struct dvx_hal_sock_addr *addr,
			     int *fd)
{
	struct dvx_mock *m = dvx_mockp_mock_of(hal);
	struct dvx_mock_call *c = dvx_mockp_begin(m, DVX_MOCK_OP_SOCK_CONNECT, -1);
	struct dvx_mock_sock *s;
	int err;

	log_addr(c, addr);
	err = dvx_mockp_injected_err(m, c);
	if (err)
		return dvx_mockp_end(m, c, err);
	s = sock_free_slot(m);
	if (!s)
		return dvx_mockp_end(m, c, -EMFILE);
	err = dvx_host_sock_connect(hal, addr, fd);
	if (err)
		return dvx_mockp_end(m, c, err);
	sock_keep(m, s, *fd, 0);
	c->fd = *fd;
	return dvx_mockp_end(m, c, 0);
}

static int mock_sock_error(const struct dvx_hal *hal, int fd)
{
	struct dvx_mock *m = dvx_mockp_mock_of(hal);
	struct dvx_mock_call *c = dvx_mockp_begin(m, DVX_MOCK_OP_SOCK_ERROR, -1);
	int err = sock_begin(m, c, fd);

	if (err)
		return dvx_mockp_end(m, c, err);
	return dvx_mockp_end(m, c, dvx_host_sock_error(hal, fd));
}

static int mock_sock_accept(const struct dvx_hal *hal, int lfd, int *fd)
{
	struct dvx_mock *m = dvx_mockp_mock_of(hal);
	struct dvx_mock_call *c = dvx_mockp_begin(m, DVX_MOCK_OP_SOCK_ACCEPT, -1);
	struct dvx_mock_sock *s;
	int err = sock_begin(m, c, lfd);

	if (err)
		return dvx_mockp_end(m, c, err);
	s = sock_free_slot(m);
	if (!s)
		return dvx_mockp_end(m, c, -EMFILE);
	err = dvx_host_sock_accept(hal, lfd, fd);
	if (err)
		return dvx_mockp_end(m, c, err);
	sock_keep(m, s, *fd, 0);
	c->id = (uint32_t)*fd;		/* the accepted socket; c->fd is the listener */
	return dvx_mockp_end(m, c, 0);
}

static int mock_sock_name(const struct dvx_hal *hal, int fd, struct dvx_hal_sock_addr *addr)
{
	struct dvx_mock *m = dvx_mockp_mock_of(hal);
	struct dvx_mock_call *c = dvx_mockp_begin(m, DVX_MOCK_OP_SOCK_NAME, -1);
	int err = sock_begin(m, c, fd);

	if (err)
		return dvx_mockp_end(m, c, err);
	err = dvx_host_sock_name(hal, fd, addr);
	if (!err)
		log_addr(c, addr);
	return dvx_mockp_end(m, c, err);
}

static int mock_sock_send(const struct dvx_hal *hal, int fd, const struct dvx_hal_iov *iov,
			  unsigned iovcnt, size_t *sent)
{
	struct dvx_mock *m = dvx_mockp_mock_of(hal);
	struct dvx_mock_call *c = dvx_mockp_begin(m, DVX_MOCK_OP_SOCK_SEND, -1);
	unsigned i;
	int err;

	for (i = 0; i < iovcnt; i++)
		c->len += iov[i].len;
	c->index = iovcnt;
	err = sock_begin(m, c, fd);
	if (err)
		return dvx_mockp_end(m, c, err);
	err = dvx_host_sock_send(hal, fd, iov, iovcnt, sent);
	c->moved = *sent;
	return dvx_mockp_end(m, c, err);
}

static int mock_sock_recv(const struct dvx_hal *hal, int fd, void *buf, size_t len, size_t *got)
{
	struct dvx_mock *m = dvx_mockp_mock_of(hal);
	struct dvx_mock_call *c = dvx_mockp_begin(m, DVX_MOCK_OP_SOCK_RECV, -1);
	int err;

	c->len = len;
	err = sock_begin(m, c, fd);
	if (err)
		return dvx_mockp_end(m, c, err);
	err = dvx_host_sock_recv(hal, fd, buf, len, got);
	c->moved = *got;
	return dvx_mockp_end(m, c, err);
}

static int mock_sock_poll(const struct dvx_hal *hal, struct dvx_hal_pollfd *fds, unsigned nfds,
			  uint64_t timeout_ns)
{
	struct dvx_mock *m = dvx_mockp_mock_of(hal);
	struct dvx_mock_call *c = dvx_mockp_begin(m, DVX_MOCK_OP_SOCK_POLL, -1);
	unsigned i;
	int n;

	c->len = nfds;
	c->timeout_ns = timeout_ns;
	for (i = 0; i < nfds && c->fd < 0; i++)
		if (fds[i].fd >= 0)
			c->fd = fds[i].fd;	/* the first socket of the set */
	n = dvx_mockp_injected_err(m, c);
	if (n)
		return dvx_mockp_end(m, c, n);
	for (i = 0; i < nfds; i++)
		if (fds[i].fd >= 0 && !sock_find(m, fds[i].fd))
			return dvx_mockp_end(m, c, -EBADF);
	n = dvx_host_sock_poll(hal, fds, nfds, timeout_ns);
	if (n > 0)
		c->moved = (uint64_t)n;
	return dvx_mockp_end(m, c, n);
}

static int mock_sock_close(const struct dvx_hal *hal, int fd)
{
	struct dvx_mock *m = dvx_mockp_mock_of(hal);
	struct dvx_mock_call *c = dvx_mockp_begin(m, DVX_MOCK_OP_SOCK_CLOSE, -1);
	struct dvx_mock_sock *s;
	int err, ret;

	c->fd = fd;
	err = dvx_mockp_injected_err(m, c);
	s = sock_find(m, fd);
	if (!s)
		return dvx_mockp_end(m, c, err ? err : -EBADF);	/* not ours: left alone */
	/* a socket is gone after close() whatever it answered: an injected failure too */
	ret = dvx_host_sock_close(hal, fd);
	s->live = 0;
	s->fd = -1;
	m->live[DVX_MOCK_RES_SOCK]--;
	return dvx_mockp_end(m, c, err ? err : ret);
}

static int mock_sock_unlink(const struct dvx_hal *hal, const struct dvx_hal_sock_addr *addr)
{
	struct dvx_mock *m = dvx_mockp_mock_of(hal);
	struct dvx_mock_call *c = dvx_mockp_begin(m, DVX_MOCK_OP_SOCK_UNLINK, -1);
	int err;

	log_addr(c, addr);
	err = dvx_mockp_injected_err(m, c);
	if (err)
		return dvx_mockp_end(m, c, err);
	return dvx_mockp_end(m, c, dvx_host_sock_unlink(hal, addr));
}

static int mock_sleep_ns(const struct dvx_hal *hal, uint64_t ns)
{
	struct dvx_mock *m = dvx_mockp_mock_of(hal);
	struct dvx_mock_call *c = dvx_mockp_begin(m, DVX_MOCK_OP_SLEEP, -1);
	int err;

	c->timeout_ns = ns;
	err = dvx_mockp_injected_err(m, c);
	if (err)
		return dvx_mockp_end(m, c, err);
	if (m->now_real)
		return dvx_mockp_end(m, c, dvx_host_sleep_ns(hal, ns));
	m->now_ns += ns;	/* the mock's own clock: time passes at once */
	return dvx_mockp_end(m, c, 0);
}

/* ---- descriptors over UNIX sockets, closing them, who we are ---- */

static int mock_sock_send_fds(const struct dvx_hal *hal, int fd, const void *buf, size_t len,
			      const int *fds, unsigned nfds, size_t *sent)
{
	struct dvx_mock *m = dvx_mockp_mock_of(hal);
	struct dvx_mock_call *c = dvx_mockp_begin(m, DVX_MOCK_OP_SOCK_SEND_FDS, -1);
	int err;

	c->len = len;
	c->index = nfds;
	c->dmabuf_fd = fds[0];
	err = sock_begin(m, c, fd);
	if (err)
		return dvx_mockp_end(m, c, err);
	err = dvx_host_sock_send_fds(hal, fd, buf, len, fds, nfds, sent);
	c->moved = *sent;
	return dvx_mockp_end(m, c, err);
}

static int mock_sock_recv_fds(const struct dvx_hal *hal, int fd, void *buf, size_t len,
			      size_t *got, int *fds, unsigned max, unsigned *nfds)
{
	struct dvx_mock *m = dvx_mockp_mock_of(hal);
	struct dvx_mock_call *c = dvx_mockp_begin(m, DVX_MOCK_OP_SOCK_RECV_FDS, -1);
	unsigned i;
	int err;

	c->len = len;
	err = sock_begin(m, c, fd);
	if (err)
		return dvx_mockp_end(m, c, err);
	err = dvx_host_sock_recv_fds(hal, fd, buf, len, got, fds, max, nfds);
	if (err)
		return dvx_mockp_end(m, c, err);
	c->moved = *got;
	c->index = *nfds;
	for (i = 0; i < *nfds; i++) {
		unsigned j;

		err = dvx_mockp_fd_keep(m, fds[i]);	/* closes fds[i] when full */
		if (!err)
			continue;
		/* the table is full: none is kept */
		for (j = i + 1; j < *nfds; j++)
			close(fds[j]);
		for (j = 0; j < i; j++) {
			dvx_mockp_fd_find(m, fds[j])->live = 0;
			m->live[DVX_MOCK_RES_FD]--;
			close(fds[j]);
		}
		*nfds = 0;
		return dvx_mockp_end(m, c, err);
	}
	return dvx_mockp_end(m, c, 0);
}

static int mock_sock_cred(const struct dvx_hal *hal, int fd, struct dvx_hal_sock_cred *cred)
{
	struct dvx_mock *m = dvx_mockp_mock_of(hal);
	struct dvx_mock_call *c = dvx_mockp_begin(m, DVX_MOCK_OP_SOCK_CRED, -1);
	int err = sock_begin(m, c, fd);

	if (err)
		return dvx_mockp_end(m, c, err);
	err = dvx_host_sock_cred(hal, fd, cred);
	if (!err)
		c->id = (uint32_t)cred->pid;
	return dvx_mockp_end(m, c, err);
}

static int mock_fd_close(const struct dvx_hal *hal, int fd)
{
	struct dvx_mock *m = dvx_mockp_mock_of(hal);
	struct dvx_mock_call *c = dvx_mockp_begin(m, DVX_MOCK_OP_FD_CLOSE, -1);
	struct dvx_mock_fd *s;
	int err, ret;

	c->fd = fd;
	err = dvx_mockp_injected_err(m, c);
	s = dvx_mockp_fd_find(m, fd);
	if (!s)
		return dvx_mockp_end(m, c, err ? err : -EBADF);	/* not ours: left alone */
	ret = dvx_host_fd_close(hal, fd);	/* gone whatever it answers */
	s->live = 0;
	m->live[DVX_MOCK_RES_FD]--;
	return dvx_mockp_end(m, c, err ? err : ret);
}

static int mock_host_ident(const struct dvx_hal *hal, struct dvx_hal_host_ident *id)
{
	struct dvx_mock *m = dvx_mockp_mock_of(hal);
	struct dvx_mock_call *c = dvx_mockp_begin(m, DVX_MOCK_OP_HOST_IDENT, -1);
	int err = dvx_mockp_injected_err(m, c);

	if (err)
		return dvx_mockp_end(m, c, err);
	*id = m->ident;
	return dvx_mockp_end(m, c, 0);
}

/* real random bytes (the nonces of a handshake must differ), logged and failable */
static int mock_random_bytes(const struct dvx_hal *hal, void *buf, size_t len)
{
	struct dvx_mock *m = dvx_mockp_mock_of(hal);
	struct dvx_mock_call *c = dvx_mockp_begin(m, DVX_MOCK_OP_RANDOM_BYTES, -1);
	int err;

	c->len = len;
	err = dvx_mockp_injected_err(m, c);
	if (err)
		return dvx_mockp_end(m, c, err);
	return dvx_mockp_end(m, c, dvx_host_random_bytes(hal, buf, len));
}

const struct dvx_hal_host_ops dvx_mock_host_ops = {
	.mem_alloc = mock_mem_alloc,
	.mem_free = mock_mem_free,
	.pci_list = mock_pci_list,
	.limits = mock_limits,
	.now_ns = mock_now_ns,
	.sock_listen = mock_sock_listen,
	.sock_connect = mock_sock_connect,
	.sock_error = mock_sock_error,
	.sock_accept = mock_sock_accept,
	.sock_name = mock_sock_name,
	.sock_send = mock_sock_send,
	.sock_recv = mock_sock_recv,
	.sock_poll = mock_sock_poll,
	.sock_close = mock_sock_close,
	.sock_unlink = mock_sock_unlink,
	.sleep_ns = mock_sleep_ns,
	.sock_send_fds = mock_sock_send_fds,
	.sock_recv_fds = mock_sock_recv_fds,
	.sock_cred = mock_sock_cred,
	.fd_close = mock_fd_close,
	.host_ident = mock_host_ident,
	.random_bytes = mock_random_bytes,
};
