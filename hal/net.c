// SPDX-License-Identifier: MIT
/*
 * hal/net.c - stream sockets (UNIX, TCP over IPv4 and IPv6) and sleeping over POSIX:
 * the sock_* and sleep_ns entries of the shared host table (hal/hostmem.c), used by the
 * linux, cuda, host-only and software-NIC backends and passed through by the mock.
 *
 * Every socket is non-blocking and close-on-exec from the start; TCP sockets get
 * TCP_NODELAY (the bootstrap sends small records and waits for answers). Nothing here
 * blocks except sock_poll and sleep_ns, which are bounded by their timeout. errno comes
 * back negated; EINTR is restarted inside (a poll answers 0 instead).
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "host_priv.h"

/* struct dvx_hal_pollfd is struct pollfd with the hal's names: sock_poll passes it on */
DVX_STATIC_ASSERT(sizeof(struct dvx_hal_pollfd) == sizeof(struct pollfd), "pollfd size");
DVX_STATIC_ASSERT(offsetof(struct dvx_hal_pollfd, fd) == offsetof(struct pollfd, fd), "fd");
DVX_STATIC_ASSERT(offsetof(struct dvx_hal_pollfd, events) == offsetof(struct pollfd, events),
		  "events");
DVX_STATIC_ASSERT(offsetof(struct dvx_hal_pollfd, revents) ==
		  offsetof(struct pollfd, revents), "revents");
DVX_STATIC_ASSERT(DVX_HAL_POLL_IN == POLLIN && DVX_HAL_POLL_OUT == POLLOUT &&
		  DVX_HAL_POLL_ERR == POLLERR && DVX_HAL_POLL_HUP == POLLHUP &&
		  DVX_HAL_POLL_NVAL == POLLNVAL, "poll bits");
DVX_STATIC_ASSERT(DVX_HAL_SOCK_PATH_MAX == sizeof(((struct sockaddr_un *)0)->sun_path),
		  "sun_path");

static int to_sockaddr(const struct dvx_hal_sock_addr *a, struct sockaddr_storage *ss,
		       socklen_t *len)
{
	memset(ss, 0, sizeof(*ss));
	switch (a->family) {
	case DVX_HAL_SOCK_UNIX: {
		struct sockaddr_un *un = (struct sockaddr_un *)ss;

		un->sun_family = AF_UNIX;
		memcpy(un->sun_path, a->path, sizeof(un->sun_path));
		*len = (socklen_t)sizeof(*un);
		return AF_UNIX;
	}
	case DVX_HAL_SOCK_ABSTRACT: {
		struct sockaddr_un *un = (struct sockaddr_un *)ss;
		size_t n = strnlen(a->path, sizeof(un->sun_path) - 1);

		/* a NUL first, then the name; the length says where the name ends */
		un->sun_family = AF_UNIX;
		memcpy(un->sun_path + 1, a->path, n);
		*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
		return AF_UNIX;
	}
	case DVX_HAL_SOCK_IP4: {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		in->sin_family = AF_INET;
		in->sin_port = htons(a->port);
		memcpy(&in->sin_addr, a->ip, 4);
		*len = (socklen_t)sizeof(*in);
		return AF_INET;
	}
	case DVX_HAL_SOCK_IP6: {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(a->port);
		in6->sin6_scope_id = a->scope_id;
		memcpy(&in6->sin6_addr, a->ip, 16);
		*len = (socklen_t)sizeof(*in6);
		return AF_INET6;
	}
	default:
		return -EINVAL;
	}
}

static int from_sockaddr(const struct sockaddr_storage *ss, socklen_t sl,
			 struct dvx_hal_sock_addr *a)
{
	memset(a, 0, sizeof(*a));
	switch (ss->ss_family) {
	case AF_UNIX: {
		const struct sockaddr_un *un = (const struct sockaddr_un *)ss;
		size_t off = offsetof(struct sockaddr_un, sun_path);

		if (sl > off + 1 && un->sun_path[0] == '\0') {
			size_t n = (size_t)sl - off - 1;

			a->family = DVX_HAL_SOCK_ABSTRACT;
			memcpy(a->path, un->sun_path + 1,
			       n < sizeof(a->path) - 1 ? n : sizeof(a->path) - 1);
			return 0;
		}
		a->family = DVX_HAL_SOCK_UNIX;
		memcpy(a->path, un->sun_path, sizeof(a->path) - 1);
		return 0;
	}
	case AF_INET: {
		const struct sockaddr_in *in = (const struct sockaddr_in *)ss;

		a->family = DVX_HAL_SOCK_IP4;
		a->port = ntohs(in->sin_port);
		memcpy(a->ip, &in->sin_addr, 4);
		return 0;
	}
	case AF_INET6: {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;

		a->family = DVX_HAL_SOCK_IP6;
		a->port = ntohs(in6->sin6_port);
		a->scope_id = in6->sin6_scope_id;
		memcpy(a->ip, &in6->sin6_addr, 16);
		return 0;
	}
	default:
		return -EAFNOSUPPORT;
	}
}

static int nodelay(int fd)
{
	int one = 1;

	return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) ? -errno : 0;
}

/* A non-blocking, close-on-exec stream socket of @family (TCP_NODELAY for IP). */
static int open_stream(int family, int *fd)
{
	int s = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), err;

	if (s < 0)
		return -errno;
	if (family != AF_UNIX) {
		err = nodelay(s);
		if (err) {
			close(s);
			return err;
		}
	}
	*fd = s;
	return 0;
}

int dvx_host_sock_listen(const struct dvx_hal *hal, const struct dvx_hal_sock_addr *addr,
			 int backlog, int *fd)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int family, s, one = 1, err;

	(void)hal;
	family = to_sockaddr(addr, &ss, &len);
	if (family < 0)
		return family;
	err = open_stream(family, &s);
	if (err)
		return err;
	if (family != AF_UNIX && setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)))
		goto fail;
	if (bind(s, (const struct sockaddr *)&ss, len))
		goto fail;
	if (listen(s, backlog)) {
		/* the socket file is ours (bind made it): it goes with the socket */
		if (family == AF_UNIX && ((const struct sockaddr_un *)&ss)->sun_path[0])
			(void)unlink(((const struct sockaddr_un *)&ss)->sun_path);
		goto fail;
	}
	*fd = s;
	return 0;
fail:
	err = -errno;
	close(s);
	return err;
}

int dvx_host_sock_connect(const struct dvx_hal *hal, const struct dvx_hal_sock_addr *addr,
			  int *fd)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int family, s, err;

	(void)hal;
	family = to_sockaddr(addr, &ss, &len);
	if (family < 0)
		return family;
	err = open_stream(family, &s);
	if (err)
		return err;
	/* interrupted or not, a non-blocking connect goes on by itself */
	if (connect(s, (const struct sockaddr *)&ss, len) && errno != EINPROGRESS &&
	    errno != EINTR) {
		err = -errno;
		close(s);
		return err;
	}
	*fd = s;
	return 0;
}

int dvx_host_sock_error(const struct dvx_hal *hal, int fd)
{
	socklen_t sl = sizeof(int);
	int soerr = 0;

	(void)hal;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl))
		return -errno;
	return -soerr;
}

int dvx_host_sock_accept(const struct dvx_hal *hal, int lfd, int *fd)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int s, err;

	(void)hal;
	do {
		sl = sizeof(ss);
		s = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
	} while (s < 0 && errno == EINTR);
	if (s < 0) {
		/* a connection that went away before it was taken: nothing to accept now */
		if (errno == ECONNABORTED || errno == EWOULDBLOCK)
			return -EAGAIN;
		return -errno;
	}
	if (ss.ss_family == AF_INET || ss.ss_family == AF_INET6) {
		err = nodelay(s);
		if (err) {
			close(s);
			return err;
		}
	}
	*fd = s;
	return 0;
}

int dvx_host_sock_name(const struct dvx_hal *hal, int fd, struct dvx_hal_sock_addr *addr)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	(void)hal;
	memset(&ss, 0, sizeof(ss));
	if (getsockname(fd, (struct sockaddr *)&ss, &sl))
		return -errno;
	return from_sockaddr(&ss, sl, addr);
}

int dvx_host_sock_send(const struct dvx_hal *hal, int fd, const struct dvx_hal_iov *iov,
		       unsigned iovcnt, size_t *sent)
{
	struct iovec v[DVX_HAL_SOCK_IOV_MAX];
	struct msghdr mh;
	unsigned i, k = 0;
	ssize_t n;

	(void)hal;
	for (i = 0; i < iovcnt && i < DVX_HAL_SOCK_IOV_MAX; i++) {
		if (!iov[i].len)
			continue;
		v[k].iov_base = (void *)(uintptr_t)iov[i].base;
		v[k].iov_len = iov[i].len;
		k++;
	}
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = v;
	mh.msg_iovlen = k;
	do {
		n = sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	if (n == 0)
		return -EAGAIN;		/* a stream takes at least one byte or says why not */
	*sent = (size_t)n;
	return 0;
}

int dvx_host_sock_recv(const struct dvx_hal *hal, int fd, void *buf, size_t len, size_t *got)
{
	ssize_t n;

	(void)hal;
	do {
		n = recv(fd, buf, len, MSG_DONTWAIT);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	*got = (size_t)n;
	return 0;
}

int dvx_host_sock_poll(const struct dvx_hal *hal, struct dvx_hal_pollfd *fds, unsigned nfds,
		       uint64_t timeout_ns)
{
	struct timespec ts;
	unsigned i;
	int n;

	(void)hal;
	for (i = 0; i < nfds; i++)
		fds[i].revents = 0;
	ts.tv_sec = (time_t)(timeout_ns / 1000000000ull);
	ts.tv_nsec = (long)(timeout_ns % 1000000000ull);
	/* the layouts and bits are the same (asserted above) */
	n = ppoll((struct pollfd *)(void *)fds, (nfds_t)nfds, &ts, NULL);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	return n;
}

int dvx_host_sock_close(const struct dvx_hal *hal, int fd)
{
	(void)hal;
	/* Linux releases the descriptor even when close() reports EINTR */
	if (close(fd) && errno != EINTR)
		return -errno;
	return 0;
}

int dvx_host_sock_unlink(const struct dvx_hal *hal, const struct dvx_hal_sock_addr *addr)
{
	(void)hal;
	if (addr->family != DVX_HAL_SOCK_UNIX)
		return -EINVAL;
	return unlink(addr->path) ? -errno : 0;
}

/* SCM_RIGHTS room for DVX_HAL_SOCK_FDS_MAX descriptors, aligned for struct cmsghdr */
union fds_cmsg {
	char buf[CMSG_SPACE(sizeof(int) * DVX_HAL_SOCK_FDS_MAX)];
	struct cmsghdr align;
};

int dvx_host_sock_send_fds(const struct dvx_hal *hal, int fd, const void *buf, size_t len,
			   const int *fds, unsigned nfds, size_t *sent)
{
	union fds_cmsg u;
	struct msghdr mh;
	struct cmsghdr *cm;
	struct iovec v;
	ssize_t n;

	(void)hal;
	memset(&u, 0, sizeof(u));
	memset(&mh, 0, sizeof(mh));
	v.iov_base = (void *)(uintptr_t)buf;
	v.iov_len = len;
	mh.msg_iov = &v;
	mh.msg_iovlen = 1;
	mh.msg_control = u.buf;
	mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
	memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	do {
		n = sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	if (n == 0)
		return -EAGAIN;
	*sent = (size_t)n;
	return 0;
}

int dvx_host_sock_recv_fds(const struct dvx_hal *hal, int fd, void *buf, size_t len, size_t *got,
			   int *fds, unsigned max, unsigned *nfds)
{
	union fds_cmsg u;
	struct msghdr mh;
	struct cmsghdr *cm;
	struct iovec v;
	unsigned k = 0, i;
	int over = 0;
	ssize_t n;

	(void)hal;
	memset(&u, 0, sizeof(u));
	memset(&mh, 0, sizeof(mh));
	v.iov_base = buf;
	v.iov_len = len;
	mh.msg_iov = &v;
	mh.msg_iovlen = 1;
	mh.msg_control = u.buf;
	mh.msg_controllen = sizeof(u.buf);
	do {
		n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		unsigned cnt;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		cnt = (unsigned)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		for (i = 0; i < cnt; i++) {
			int f;

			memcpy(&f, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (k < max)
				fds[k++] = f;
			else {
				close(f);
				over = 1;
			}
		}
	}
	if (over || (mh.msg_flags & MSG_CTRUNC)) {
		/* more than asked for (or the kernel had to drop some): none is kept */
		for (i = 0; i < k; i++)
			close(fds[i]);
		return -EMSGSIZE;
	}
	*got = (size_t)n;
	*nfds = k;
	return 0;
}

int dvx_host_sock_cred(const struct dvx_hal *hal, int fd, struct dvx_hal_sock_cred *cred)
{
	struct ucred uc;
	socklen_t sl = sizeof(uc);

	(void)hal;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &sl))
		return -errno;
	memset(cred, 0, sizeof(*cred));
	cred->pid = (int32_t)uc.pid;
	cred->uid = (uint32_t)uc.uid;
	cred->gid = (uint32_t)uc.gid;
	return 0;
}

int dvx_host_fd_close(const struct dvx_hal *hal, int fd)
{
	return dvx_host_sock_close(hal, fd);
}

int dvx_host_thread_slack_ns(uint64_t ns)
{
	return prctl(PR_SET_TIMERSLACK, (unsigned long)(ns ? ns : 1), 0, 0, 0) ? -errno : 0;
}

int dvx_host_sleep_ns(const struct dvx_hal *hal, uint64_t ns)
{
	struct timespec ts;
	int err;

	(void)hal;
	ts.tv_sec = (time_t)(ns / 1000000000ull);
	ts.tv_nsec = (long)(ns % 1000000000ull);
	while ((err = clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts)) == EINTR)
		;
	return -err;
}
