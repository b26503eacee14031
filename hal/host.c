// SPDX-License-Identifier: MIT
/*
 * hal/host.c - the host wrappers (dvx/hal/host.h): memory, PCI topology, limits,
 * the clock, stream sockets and sleeping, random bytes. These calls have no handle, so nothing is
 * recorded in a diag.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <dvx/hal/host.h>

#define HAL_HOST(hal) ((hal) ? (hal)->host : NULL)

int dvx_hal_mem_alloc(const struct dvx_hal *hal, uint64_t len, uint64_t align, int numa_node,
		      uint32_t flags, struct dvx_hal_mem *mem)
{
	const struct dvx_hal_host_ops *ops = HAL_HOST(hal);

	if (!hal || !mem || !len || (align & (align - 1)))
		return -EINVAL;
	if (!ops || !ops->mem_alloc)
		return -ENOSYS;
	return ops->mem_alloc(hal, len, align, numa_node, flags, mem);
}

int dvx_hal_mem_free(const struct dvx_hal *hal, struct dvx_hal_mem *mem)
{
	const struct dvx_hal_host_ops *ops = HAL_HOST(hal);

	if (!hal || !mem)
		return -EINVAL;
	if (!ops || !ops->mem_free)
		return -ENOSYS;
	return ops->mem_free(hal, mem);
}

int dvx_hal_pci_list(const struct dvx_hal *hal, uint32_t class_mask, uint32_t class_value,
		     struct dvx_hal_pci_dev *devs, unsigned max, unsigned *count)
{
	const struct dvx_hal_host_ops *ops = HAL_HOST(hal);

	if (!hal || !count || (max && !devs))
		return -EINVAL;
	if (!ops || !ops->pci_list)
		return -ENOSYS;
	*count = 0;
	return ops->pci_list(hal, class_mask, class_value, devs, max, count);
}

int dvx_hal_limits(const struct dvx_hal *hal, struct dvx_hal_limits *lim)
{
	const struct dvx_hal_host_ops *ops = HAL_HOST(hal);

	if (!hal || !lim)
		return -EINVAL;
	if (!ops || !ops->limits)
		return -ENOSYS;
	return ops->limits(hal, lim);
}

uint64_t dvx_hal_now_ns(const struct dvx_hal *hal)
{
	const struct dvx_hal_host_ops *ops = HAL_HOST(hal);
	struct timespec ts;

	if (ops && ops->now_ns)
		return ops->now_ns(hal);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- stream sockets and sleeping ---- */

/* A family the hal knows, with what it needs: a NUL-terminated, non-empty UNIX path. */
static int sock_addr_ok(const struct dvx_hal_sock_addr *a)
{
	if (!a)
		return 0;
	switch (a->family) {
	case DVX_HAL_SOCK_UNIX:
		return a->path[0] && memchr(a->path, 0, sizeof(a->path));
	case DVX_HAL_SOCK_ABSTRACT:
		/* the system's name is one byte longer (the NUL in front) */
		return a->path[0] && memchr(a->path, 0, sizeof(a->path) - 1);
	case DVX_HAL_SOCK_IP4:
	case DVX_HAL_SOCK_IP6:
		return 1;
	default:
		return 0;
	}
}

int dvx_hal_sock_listen(const struct dvx_hal *hal, const struct dvx_hal_sock_addr *addr,
			int backlog, int *fd)
{
	const struct dvx_hal_host_ops *ops = HAL_HOST(hal);

	if (!hal || !fd || !sock_addr_ok(addr) || backlog < 1)
		return -EINVAL;
	*fd = -1;
	if (!ops || !ops->sock_listen)
		return -ENOSYS;
	return ops->sock_listen(hal, addr, backlog, fd);
}

int dvx_hal_sock_connect(const struct dvx_hal *hal, const struct dvx_hal_sock_addr *addr,
			 int *fd)
{
	const struct dvx_hal_host_ops *ops = HAL_HOST(hal);

	if (!hal || !fd || !sock_addr_ok(addr) ||
	    (addr->family != DVX_HAL_SOCK_UNIX && addr->family != DVX_HAL_SOCK_ABSTRACT &&
	     !addr->port))
		return -EINVAL;
	*fd = -1;
	if (!ops || !ops->sock_connect)
		return -ENOSYS;
	return ops->sock_connect(hal, addr, fd);
}

int dvx_hal_sock_error(const struct dvx_hal *hal, int fd)
{
	const struct dvx_hal_host_ops *ops = HAL_HOST(hal);

	if (!hal || fd < 0)
		return -EINVAL;
	if (!ops || !ops->sock_error)
		return -ENOSYS;
	return ops->sock_error(hal, fd);
}

int dvx_hal_sock_accept(const struct dvx_hal *hal, int lfd, int *fd)
{
	const struct dvx_hal_host_ops *ops = HAL_HOST(hal);

	if (!hal || lfd < 0 || !fd)
		return -EINVAL;
	*fd = -1;
	if (!ops || !ops->sock_accept)
		return -ENOSYS;
	return ops->sock_accept(hal, lfd, fd);
}

int dvx_hal_sock_name(const struct dvx_hal *hal, int fd, struct dvx_hal_sock_addr *addr)
{
	const struct dvx_hal_host_ops *ops = HAL_HOST(hal);

	if (!hal || fd < 0 || !addr)
		return -EINVAL;
	memset(addr, 0, sizeof(*addr));
	if (!ops || !ops->sock_name)
		return -ENOSYS;
	return ops->sock_name(hal, fd, addr);
}

int dvx_hal_sock_send(const struct dvx_hal *hal, int fd, const struct dvx_hal_iov *iov,
		      unsigned iovcnt, size_t *sent)
{
	const struct dvx_hal_host_ops *ops = HAL_HOST(hal);
	size_t total = 0;
	unsigned i;

	if (!hal || fd < 0 || !iov || !iovcnt || iovcnt > DVX_HAL_SOCK_IOV_MAX || !sent)
		return -EINVAL;
	for (i = 0; i < iovcnt; i++) {
		if (iov[i].len && !iov[i].base)
			return -EINVAL;
		if (iov[i].len > SIZE_MAX - total)
			return -EINVAL;
		total += iov[i].len;
	}
	if (!total)
		return -EINVAL;
	*sent = 0;
	if (!ops || !ops->sock_send)
		return -ENOSYS;
	return ops->sock_send(hal, fd, iov, iovcnt, sent);
}

int dvx_hal_sock_recv(const struct dvx_hal *hal, int fd, void *buf, size_t len, size_t *got)
{
	const struct dvx_hal_host_ops *ops = HAL_HOST(hal);

	if (!hal || fd < 0 || !buf || !len || !got)
		return -EINVAL;
	*got = 0;
	if (!ops || !ops->sock_recv)
		return -ENOSYS;
	return ops->sock_recv(hal, fd, buf, len, got);
}

int dvx_hal_sock_poll(const struct dvx_hal *hal, struct dvx_hal_pollfd *fds, unsigned nfds,
		      uint64_t timeout_ns)
{
	const struct dvx_hal_host_ops *ops = HAL_HOST(hal);

	if (!hal || (nfds && !fds))
		return -EINVAL;
	if (!ops || !ops->sock_poll)
		return -ENOSYS;
	return ops->sock_poll(hal, fds, nfds, timeout_ns);
}

int dvx_hal_sock_close(const struct dvx_hal *hal, int fd)
{
	const struct dvx_hal_host_ops *ops = HAL_HOST(hal);

	if (!hal || fd < 0)
		return -EINVAL;
	if (!ops || !ops->sock_close)
		return -ENOSYS;
	return ops->sock_close(hal, fd);
}

int dvx_hal_sock_unlink(const struct dvx_hal *hal, const struct dvx_hal_sock_addr *addr)
{
	const struct dvx_hal_host_ops *ops = HAL_HOST(hal);

	if (!hal || !sock_addr_ok(addr) || addr->family != DVX_HAL_SOCK_UNIX)
		return -EINVAL;
	if (!ops || !ops->sock_unlink)
		return -ENOSYS;
	return ops->sock_unlink(hal, addr);
}

int dvx_hal_sleep_ns(const struct dvx_hal *hal, uint64_t ns)
{
	const struct dvx_hal_host_ops *ops = HAL_HOST(hal);

	if (!hal)
		return -EINVAL;
	if (!ops || !ops->sleep_ns)
		return -ENOSYS;
	return ops->sleep_ns(hal, ns);
}

int dvx_hal_sock_send_fds(const struct dvx_hal *hal, int fd, const void *buf, size_t len,
			  const int *fds, unsigned nfds, size_t *sent)
{
	const struct dvx_hal_host_ops *ops = HAL_HOST(hal);
	unsigned i;

	if (!hal || fd < 0 || !buf || !len || !fds || !nfds || nfds > DVX_HAL_SOCK_FDS_MAX ||
	    !sent)
		return -EINVAL;
	for (i = 0; i < nfds; i++)
		if (fds[i] < 0)
			return -EINVAL;
	*sent = 0;
	if (!ops || !ops->sock_send_fds)
		return -ENOSYS;
	return ops->sock_send_fds(hal, fd, buf, len, fds, nfds, sent);
}

int dvx_hal_sock_recv_fds(const struct dvx_hal *hal, int fd, void *buf, size_t len, size_t *got,
			  int *fds, unsigned max, unsigned *nfds)
{
	const struct dvx_hal_host_ops *ops = HAL_HOST(hal);

	if (!hal || fd < 0 || !buf || !len || !got || !fds || !max ||
	    max > DVX_HAL_SOCK_FDS_MAX || !nfds)
		return -EINVAL;
	*got = 0;
	*nfds = 0;
	if (!ops || !ops->sock_recv_fds)
		return -ENOSYS;
	return ops->sock_recv_fds(hal, fd, buf, len, got, fds, max, nfds);
}

int dvx_hal_sock_cred(const struct dvx_hal *hal, int fd, struct dvx_hal_sock_cred *cred)
{
	const struct dvx_hal_host_ops *ops = HAL_HOST(hal);

	if (!hal || fd < 0 || !cred)
		return -EINVAL;
	if (!ops || !ops->sock_cred)
		return -ENOSYS;
	return ops->sock_cred(hal, fd, cred);
}

int dvx_hal_fd_close(const struct dvx_hal *hal, int fd)
{
	const struct dvx_hal_host_ops *ops = HAL_HOST(hal);

	if (!hal || fd < 0)
		return -EINVAL;
	if (!ops || !ops->fd_close)
		return -ENOSYS;
	return ops->fd_close(hal, fd);
}

int dvx_hal_host_ident(const struct dvx_hal *hal, struct dvx_hal_host_ident *id)
{
	const struct dvx_hal_host_ops *ops = HAL_HOST(hal);

	if (!hal || !id)
		return -EINVAL;
	if (!ops || !ops->host_ident)
		return -ENOSYS;
	return ops->host_ident(hal, id);
}

int dvx_hal_random_bytes(const struct dvx_hal *hal, void *buf, size_t len)
{
	const struct dvx_hal_host_ops *ops = HAL_HOST(hal);

	if (!hal || !buf || !len || len > DVX_HAL_RANDOM_MAX)
		return -EINVAL;
	if (!ops || !ops->random_bytes)
		return -ENOSYS;
	return ops->random_bytes(hal, buf, len);
}

#ifndef CONFIG_DVX_RDMA
const struct dvx_hal *dvx_hal_linux(void)
{
	return NULL;
}
#endif
