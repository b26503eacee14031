// SPDX-License-Identifier: MIT
/*
 * The hal's stream sockets and sleep over POSIX (hal/net.c) through their wrappers and
 * the host-only backend dvx_hal_host(): UNIX, TCP over IPv4 and (where the host has it)
 * IPv6 loopback; listening, connecting, accepting, gathered sends, receives, end of
 * stream, "not now" (-EAGAIN), polls with timeouts, refused connections, local
 * addresses, closing and removing socket files; abstract-namespace sockets,
 * descriptors passed over them (to another process: the memory behind a passed memfd
 * is the same), the peer's credentials, too many descriptors refused without a leak,
 * and the host's identity.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../lib/dvx_test.h"

#include <dvx/hal.h>

#define MS 1000000ull

static char dir[64];

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void unix_addr(struct dvx_hal_sock_addr *a, const char *name)
{
	memset(a, 0, sizeof(*a));
	a->family = DVX_HAL_SOCK_UNIX;
	snprintf(a->path, sizeof(a->path), "%s/%s", dir, name);
}

static void ip4_loopback(struct dvx_hal_sock_addr *a, uint16_t port)
{
	memset(a, 0, sizeof(*a));
	a->family = DVX_HAL_SOCK_IP4;
	a->ip[0] = 127;
	a->ip[3] = 1;
	a->port = port;
}

/* Wait for @ev on @fd (2 s at most); the revents. */
static int wait_for(const struct dvx_hal *hal, int fd, short ev)
{
	struct dvx_hal_pollfd p = { .fd = fd, .events = ev };

	assert_int_equal(dvx_hal_sock_poll(hal, &p, 1, 2000 * MS), 1);
	return p.revents;
}

/* Connect to a listener @lfd at @a and accept: *c the connecting end, *s the accepted. */
static void pair(const struct dvx_hal *hal, int lfd, const struct dvx_hal_sock_addr *a, int *c,
		 int *s)
{
	assert_int_equal(dvx_hal_sock_connect(hal, a, c), 0);
	assert_true(*c >= 0);
	assert_true(wait_for(hal, lfd, DVX_HAL_POLL_IN) & DVX_HAL_POLL_IN);
	assert_int_equal(dvx_hal_sock_accept(hal, lfd, s), 0);
	assert_true(*s >= 0);
	assert_true(wait_for(hal, *c, DVX_HAL_POLL_OUT) & DVX_HAL_POLL_OUT);
	assert_int_equal(dvx_hal_sock_error(hal, *c), 0);
}

/* Bytes both ways over a connected pair, a gathered send, end of stream. */
static void talk(const struct dvx_hal *hal, int c, int s)
{
	static const char a[] = "head", b[] = "-body";
	struct dvx_hal_iov iov[3] = { { a, 4 }, { NULL, 0 }, { b, 5 } };
	char buf[32];
	size_t n, got = 0;
	int k, ret = 0;

	/* nothing there yet: not now */
	assert_int_equal(dvx_hal_sock_recv(hal, s, buf, sizeof(buf), &n), -EAGAIN);
	assert_int_equal(n, 0);
	assert_int_equal(dvx_hal_sock_send(hal, c, iov, 3, &n), 0);
	assert_int_equal(n, 9);
	while (got < 9) {
		assert_true(wait_for(hal, s, DVX_HAL_POLL_IN) & DVX_HAL_POLL_IN);
		assert_int_equal(dvx_hal_sock_recv(hal, s, buf + got, sizeof(buf) - got, &n), 0);
		assert_true(n > 0);
		got += n;
	}
	assert_int_equal(got, 9);
	assert_memory_equal(buf, "head-body", 9);
	iov[0].base = "x";
	iov[0].len = 1;
	assert_int_equal(dvx_hal_sock_send(hal, s, iov, 1, &n), 0);
	assert_true(wait_for(hal, c, DVX_HAL_POLL_IN) & DVX_HAL_POLL_IN);
	assert_int_equal(dvx_hal_sock_recv(hal, c, buf, 1, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(buf[0], 'x');
	/* the peer goes: end of stream (0 bytes), then sends fail without SIGPIPE */
	assert_int_equal(dvx_hal_sock_close(hal, s), 0);
	assert_true(wait_for(hal, c, DVX_HAL_POLL_IN) & (DVX_HAL_POLL_IN | DVX_HAL_POLL_HUP));
	assert_int_equal(dvx_hal_sock_recv(hal, c, buf, sizeof(buf), &n), 0);
	assert_int_equal(n, 0);
	/* a send or two may still be taken before the peer's reset comes back */
	for (k = 0; k < 2000; k++) {
		ret = dvx_hal_sock_send(hal, c, iov, 1, &n);
		if (ret)
			break;
		usleep(1000);
	}
	assert_true(ret == -EPIPE || ret == -ECONNRESET);
	assert_int_equal(dvx_hal_sock_close(hal, c), 0);
}

static void test_host_backend(void **state)
{
	const struct dvx_hal *hal = dvx_hal_host();

	(void)state;
	assert_non_null(hal);
	assert_ptr_equal(hal, dvx_hal_host());
	assert_string_equal(hal->name, "host");
	assert_non_null(hal->host);
	assert_null(hal->nic);
	assert_null(hal->gpu);
	assert_true(dvx_hal_now_ns(hal) > 0);
}

static void test_unix(void **state)
{
	const struct dvx_hal *hal = dvx_hal_host();
	struct dvx_hal_sock_addr a, got;
	struct stat st;
	int lfd, lfd2, c, s;

	(void)state;
	unix_addr(&a, "l");
	/* nobody there: refused at once (no file), the socket is not kept */
	assert_int_equal(dvx_hal_sock_connect(hal, &a, &c), -ENOENT);
	assert_int_equal(c, -1);
	assert_int_equal(dvx_hal_sock_listen(hal, &a, 4, &lfd), 0);
	assert_int_equal(stat(a.path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(dvx_hal_sock_listen(hal, &a, 4, &lfd2), -EADDRINUSE);
	assert_int_equal(lfd2, -1);
	assert_int_equal(dvx_hal_sock_name(hal, lfd, &got), 0);
	assert_int_equal(got.family, DVX_HAL_SOCK_UNIX);
	assert_string_equal(got.path, a.path);
	/* nothing to accept yet */
	assert_int_equal(dvx_hal_sock_accept(hal, lfd, &s), -EAGAIN);
	assert_int_equal(s, -1);
	pair(hal, lfd, &a, &c, &s);
	talk(hal, c, s);
	assert_int_equal(dvx_hal_sock_close(hal, lfd), 0);
	assert_int_equal(dvx_hal_sock_unlink(hal, &a), 0);
	assert_int_equal(stat(a.path, &st), -1);
	assert_int_equal(dvx_hal_sock_unlink(hal, &a), -ENOENT);
	/* the file is there but nobody listens: refused */
	assert_int_equal(dvx_hal_sock_listen(hal, &a, 1, &lfd), 0);
	assert_int_equal(dvx_hal_sock_close(hal, lfd), 0);
	assert_int_equal(dvx_hal_sock_connect(hal, &a, &c), -ECONNREFUSED);
	assert_int_equal(dvx_hal_sock_unlink(hal, &a), 0);
	/* a directory that does not exist: nothing is made */
	snprintf(a.path, sizeof(a.path), "%s/no/such", dir);
	assert_int_equal(dvx_hal_sock_listen(hal, &a, 1, &lfd), -ENOENT);
}

static void test_tcp4(void **state)
{
	const struct dvx_hal *hal = dvx_hal_host();
	struct dvx_hal_sock_addr a, got, loc;
	int lfd, c, s;

	(void)state;
	ip4_loopback(&a, 0);		/* any free port */
	assert_int_equal(dvx_hal_sock_listen(hal, &a, 4, &lfd), 0);
	assert_int_equal(dvx_hal_sock_name(hal, lfd, &got), 0);
	assert_int_equal(got.family, DVX_HAL_SOCK_IP4);
	assert_true(got.port > 0);
	assert_memory_equal(got.ip, a.ip, 4);
	a.port = got.port;
	pair(hal, lfd, &a, &c, &s);
	/* the connection's local address: loopback, another port */
	assert_int_equal(dvx_hal_sock_name(hal, c, &loc), 0);
	assert_int_equal(loc.family, DVX_HAL_SOCK_IP4);
	assert_memory_equal(loc.ip, a.ip, 4);
	assert_true(loc.port != a.port);
	talk(hal, c, s);
	assert_int_equal(dvx_hal_sock_close(hal, lfd), 0);
	/* nobody listens now: the connect starts, then fails with ECONNREFUSED */
	assert_int_equal(dvx_hal_sock_connect(hal, &a, &c), 0);
	wait_for(hal, c, DVX_HAL_POLL_OUT);
	assert_int_equal(dvx_hal_sock_error(hal, c), -ECONNREFUSED);
	assert_int_equal(dvx_hal_sock_error(hal, c), 0);	/* read and cleared */
	assert_int_equal(dvx_hal_sock_close(hal, c), 0);
}

static void test_tcp6(void **state)
{
	const struct dvx_hal *hal = dvx_hal_host();
	struct dvx_hal_sock_addr a, got;
	int lfd, c, s, ret;

	(void)state;
	memset(&a, 0, sizeof(a));
	a.family = DVX_HAL_SOCK_IP6;
	a.ip[15] = 1;			/* ::1 */
	ret = dvx_hal_sock_listen(hal, &a, 4, &lfd);
	if (ret == -EADDRNOTAVAIL || ret == -EAFNOSUPPORT) {
		skip();			/* no IPv6 loopback on this host */
		return;
	}
	assert_int_equal(ret, 0);
	assert_int_equal(dvx_hal_sock_name(hal, lfd, &got), 0);
	assert_int_equal(got.family, DVX_HAL_SOCK_IP6);
	assert_true(got.port > 0);
	a.port = got.port;
	pair(hal, lfd, &a, &c, &s);
	talk(hal, c, s);
	assert_int_equal(dvx_hal_sock_close(hal, lfd), 0);
}

static void test_poll_sleep(void **state)
{
	const struct dvx_hal *hal = dvx_hal_host();
	struct dvx_hal_pollfd p[2];
	struct dvx_hal_sock_addr a;
	uint64_t t;
	int lfd;

	(void)state;
	ip4_loopback(&a, 0);
	assert_int_equal(dvx_hal_sock_listen(hal, &a, 1, &lfd), 0);
	/* nothing ready: 0 after the timeout; a negative fd is skipped */
	p[0].fd = lfd;
	p[0].events = DVX_HAL_POLL_IN;
	p[1].fd = -1;
	p[1].events = DVX_HAL_POLL_IN;
	p[1].revents = 7;
	t = mono_ns();
	assert_int_equal(dvx_hal_sock_poll(hal, p, 2, 20 * MS), 0);
	assert_true(mono_ns() - t >= 20 * MS);
	assert_int_equal(p[0].revents, 0);
	assert_int_equal(p[1].revents, 0);
	assert_int_equal(dvx_hal_sock_poll(hal, p, 2, 0), 0);	/* only looks */
	assert_int_equal(dvx_hal_sock_close(hal, lfd), 0);
	/* a closed descriptor is reported, not waited on */
	assert_int_equal(dvx_hal_sock_poll(hal, p, 1, 1000 * MS), 1);
	assert_true(p[0].revents & DVX_HAL_POLL_NVAL);
	assert_int_equal(dvx_hal_sock_close(hal, lfd), -EBADF);
	/* no sockets at all: a bounded wait */
	t = mono_ns();
	assert_int_equal(dvx_hal_sock_poll(hal, NULL, 0, 10 * MS), 0);
	assert_true(mono_ns() - t >= 10 * MS);
	t = mono_ns();
	assert_int_equal(dvx_hal_sleep_ns(hal, 15 * MS), 0);
	assert_true(mono_ns() - t >= 15 * MS);
	assert_int_equal(dvx_hal_sleep_ns(hal, 0), 0);
}

static void abstract_addr(struct dvx_hal_sock_addr *a, const char *name)
{
	memset(a, 0, sizeof(*a));
	a->family = DVX_HAL_SOCK_ABSTRACT;
	snprintf(a->path, sizeof(a->path), "dvx-test-%d-%s", (int)getpid(), name);
}

static int open_fds(void)
{
	int n = 0, fd;

	for (fd = 0; fd < 1024; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

static void test_abstract(void **state)
{
	const struct dvx_hal *hal = dvx_hal_host();
	struct dvx_hal_sock_addr a, got;
	int lfd, c, s, lfd2;

	(void)state;
	abstract_addr(&a, "abs");
	assert_int_equal(dvx_hal_sock_listen(hal, &a, 4, &lfd), 0);
	/* no file, and the name is taken while it listens */
	assert_int_equal(dvx_hal_sock_listen(hal, &a, 4, &lfd2), -EADDRINUSE);
	assert_int_equal(lfd2, -1);
	assert_int_equal(dvx_hal_sock_name(hal, lfd, &got), 0);
	assert_int_equal(got.family, DVX_HAL_SOCK_ABSTRACT);
	assert_string_equal(got.path, a.path);
	/* an abstract address has no file to unlink */
	assert_int_equal(dvx_hal_sock_unlink(hal, &a), -EINVAL);
	pair(hal, lfd, &a, &c, &s);
	talk(hal, c, s);
	assert_int_equal(dvx_hal_sock_close(hal, lfd), 0);
	/* gone with its socket: nobody listens there now */
	assert_int_equal(dvx_hal_sock_connect(hal, &a, &c), -ECONNREFUSED);
	a.path[0] = 0;
	assert_int_equal(dvx_hal_sock_listen(hal, &a, 4, &lfd), -EINVAL);
}

/* send @nfds descriptors with one byte; 0 or the error */
static int send_fds(const struct dvx_hal *hal, int fd, const int *fds, unsigned nfds)
{
	size_t n = 0;
	int err = dvx_hal_sock_send_fds(hal, fd, "F", 1, fds, nfds, &n);

	if (!err)
		assert_int_equal(n, 1);
	return err;
}

static void test_fds(void **state)
{
	const struct dvx_hal *hal = dvx_hal_host();
	struct dvx_hal_sock_addr a;
	struct dvx_hal_sock_cred cr;
	int lfd, c, s, mfd, fds[DVX_HAL_SOCK_FDS_MAX + 1], got[4], i, before;
	unsigned n;
	size_t len;
	char b;
	volatile uint32_t *p;
	pid_t pid;
	int st;

	(void)state;
	abstract_addr(&a, "fds");
	assert_int_equal(dvx_hal_sock_listen(hal, &a, 4, &lfd), 0);
	pair(hal, lfd, &a, &c, &s);

	/* who is there: this process, both ways */
	assert_int_equal(dvx_hal_sock_cred(hal, s, &cr), 0);
	assert_int_equal(cr.pid, getpid());
	assert_int_equal(cr.uid, geteuid());
	assert_int_equal(dvx_hal_sock_cred(hal, c, &cr), 0);
	assert_int_equal(cr.pid, getpid());

	/* a memfd passed over: another descriptor of the same memory */
	mfd = memfd_create("dvx-test", MFD_CLOEXEC);
	assert_true(mfd >= 0);
	assert_int_equal(ftruncate(mfd, 4096), 0);
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	assert_true(p != MAP_FAILED);
	assert_int_equal(dvx_hal_sock_recv_fds(hal, s, &b, 1, &len, got, 4, &n), -EAGAIN);
	assert_int_equal(send_fds(hal, c, &mfd, 1), 0);
	assert_true(wait_for(hal, s, DVX_HAL_POLL_IN) & DVX_HAL_POLL_IN);
	assert_int_equal(dvx_hal_sock_recv_fds(hal, s, &b, 1, &len, got, 4, &n), 0);
	assert_int_equal(len, 1);
	assert_int_equal(b, 'F');
	assert_int_equal(n, 1);
	assert_true(got[0] >= 0 && got[0] != mfd);
	assert_true(fcntl(got[0], F_GETFD) & FD_CLOEXEC);

	/* a child writes through the passed descriptor; this process sees it */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		volatile uint32_t *q = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
					    got[0], 0);

		if (q == MAP_FAILED)
			_exit(2);
		q[7] = 0xd5d5d5d5u;
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(p[7], 0xd5d5d5d5u);
	assert_int_equal(dvx_hal_fd_close(hal, got[0]), 0);
	assert_int_equal(fcntl(got[0], F_GETFD), -1);

	/* more than the receiver has room for: refused, and none of them leaks */
	for (i = 0; i < 3; i++)
		fds[i] = mfd;
	assert_int_equal(send_fds(hal, c, fds, 3), 0);
	assert_true(wait_for(hal, s, DVX_HAL_POLL_IN) & DVX_HAL_POLL_IN);
	before = open_fds();
	assert_int_equal(dvx_hal_sock_recv_fds(hal, s, &b, 1, &len, got, 2, &n), -EMSGSIZE);
	assert_int_equal(n, 0);
	assert_int_equal(open_fds(), before);

	/* arguments */
	for (i = 0; i <= (int)DVX_HAL_SOCK_FDS_MAX; i++)
		fds[i] = mfd;
	assert_int_equal(send_fds(hal, c, fds, DVX_HAL_SOCK_FDS_MAX + 1), -EINVAL);
	assert_int_equal(send_fds(hal, c, fds, 0), -EINVAL);
	fds[0] = -1;
	assert_int_equal(send_fds(hal, c, fds, 1), -EINVAL);
	assert_int_equal(dvx_hal_sock_send_fds(hal, c, "F", 0, &mfd, 1, &len), -EINVAL);
	assert_int_equal(dvx_hal_sock_recv_fds(hal, s, &b, 1, &len, got, 0, &n), -EINVAL);
	assert_int_equal(dvx_hal_sock_cred(hal, -1, &cr), -EINVAL);
	assert_int_equal(dvx_hal_fd_close(hal, -1), -EINVAL);
	assert_int_equal(dvx_hal_fd_close(NULL, 0), -EINVAL);

	munmap((void *)p, 4096);
	close(mfd);
	assert_int_equal(dvx_hal_sock_close(hal, c), 0);
	assert_int_equal(dvx_hal_sock_close(hal, s), 0);
	assert_int_equal(dvx_hal_sock_close(hal, lfd), 0);
}

static void test_ident(void **state)
{
	struct dvx_hal_host_ident id, id2;
	static const uint8_t zero[16];

	(void)state;
	assert_int_equal(dvx_hal_host_ident(dvx_hal_host(), &id), 0);
	assert_true(id.hostname[0] != 0);
	assert_true(memcmp(id.boot_id, zero, 16) != 0);
	assert_int_equal(id.pid, getpid());
	assert_int_equal(id.uid, geteuid());
	assert_int_equal(dvx_hal_host_ident(dvx_hal_host(), &id2), 0);
	assert_memory_equal(&id, &id2, sizeof(id));
	assert_int_equal(dvx_hal_host_ident(dvx_hal_host(), NULL), -EINVAL);
	assert_int_equal(dvx_hal_host_ident(NULL, &id), -EINVAL);
}

/* getrandom(): every byte written, two draws differ, the bounds hold */
static void test_random(void **state)
{
	uint8_t a[DVX_HAL_RANDOM_MAX], b[DVX_HAL_RANDOM_MAX];
	const struct dvx_hal *hal = dvx_hal_host();
	unsigned i, zero_a = 0, zero_b = 0;

	(void)state;
	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	assert_int_equal(dvx_hal_random_bytes(hal, a, sizeof(a)), 0);
	assert_int_equal(dvx_hal_random_bytes(hal, b, sizeof(b)), 0);
	assert_true(memcmp(a, b, sizeof(a)) != 0);
	for (i = 0; i < sizeof(a); i++) {
		zero_a += !a[i];
		zero_b += !b[i];
	}
	/* 256 random bytes with more than 32 zeros: chance below 1e-15 */
	assert_true(zero_a < 32 && zero_b < 32);
	assert_int_equal(dvx_hal_random_bytes(hal, a, 1), 0);
	assert_int_equal(dvx_hal_random_bytes(hal, a, 0), -EINVAL);
	assert_int_equal(dvx_hal_random_bytes(hal, a, DVX_HAL_RANDOM_MAX + 1), -EINVAL);
	assert_int_equal(dvx_hal_random_bytes(hal, NULL, 1), -EINVAL);
	assert_int_equal(dvx_hal_random_bytes(NULL, a, 1), -EINVAL);
}

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/dvx-net-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return rmdir(dir);	/* fails when a socket file is left */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_host_backend),
		cmocka_unit_test(test_unix),
		cmocka_unit_test(test_tcp4),
		cmocka_unit_test(test_tcp6),
		cmocka_unit_test(test_poll_sleep),
		cmocka_unit_test(test_abstract),
		cmocka_unit_test(test_fds),
		cmocka_unit_test(test_ident),
		cmocka_unit_test(test_random),
	};

	return cmocka_run_group_tests_name("hal-net", tests, setup, teardown);
}
