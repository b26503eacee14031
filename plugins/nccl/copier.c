// SPDX-License-Identifier: MIT
/*
 * plugins/nccl/copier.c - the caller's side of dvx-copier (copier.h).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <dvx/hal/host.h>

#include "copier.h"

extern char **environ;

#define COPIER_NAME "dvx-copier"
#define END_WAIT_NS 2000000000ull	/* a quitting copier's bound before SIGKILL */

static int say(struct dvxn_copier *c, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->why, sizeof(c->why), fmt, ap);
	va_end(ap);
	return err;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* reap the copier within @ns (0: only if it ended), killing it when @kill: 1 when reaped */
static int reap(struct dvxn_copier *c, uint64_t ns, int kill_it, int *status)
{
	uint64_t t0 = now_ns();
	pid_t r;

	if (c->pid <= 0)
		return 1;
	for (;;) {
		r = waitpid(c->pid, status, WNOHANG);
		if (r == c->pid || (r < 0 && errno == ECHILD)) {	/* ECHILD: SIGCHLD ignored */
			if (r < 0)
				*status = -1;
			c->pid = 0;
			return 1;
		}
		if (now_ns() - t0 >= ns)
			break;
		usleep(1000);
	}
	if (!kill_it)
		return 0;
	kill(c->pid, SIGKILL);
	r = waitpid(c->pid, status, 0);
	if (r < 0)
		*status = -1;
	c->pid = 0;
	return 1;
}

static void status_words(int st, char *buf, size_t len)
{
	if (st == -1)
		snprintf(buf, len, "reaped elsewhere");
	else if (WIFEXITED(st))
		snprintf(buf, len, "exit status %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(buf, len, "signal %d", WTERMSIG(st));
	else
		snprintf(buf, len, "status %#x", st);
}

/* the copier failed: it is ended (killed when @kill) and every later call is -EIO */
static int fail(struct dvxn_copier *c, int kill_it, const char *what, int err)
{
	char sw[48] = "still running";
	int st = 0;

	c->dead = 1;
	if (reap(c, kill_it ? 0 : 200000000ull, 1, &st))
		status_words(st, sw, sizeof(sw));
	return say(c, -EIO, "dvx-copier %s (%s; the copier: %s, killed if it was not)", what,
		   strerror(err < 0 ? -err : err), sw);
}

/* send @q (with descriptor @fd when >= 0) and wait for its answer */
static int transact(struct dvxn_copier *c, const struct dvxn_cop_req *q, int fd,
		    struct dvxn_cop_rep *r)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { (void *)q, sizeof(*q) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct pollfd p = { .fd = c->sock, .events = POLLIN };
	uint64_t t0 = now_ns(), left;
	ssize_t n;
	int rc;

	if (c->dead)
		return -EIO;
	if (fd >= 0) {
		struct cmsghdr *cm;

		memset(cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	do
		n = sendmsg(c->sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(*q))
		return fail(c, 0, "took no request", n < 0 ? errno : EPIPE);
	for (;;) {
		left = c->timeout_ns - (now_ns() - t0);
		if ((int64_t)left <= 0)
			return fail(c, 1, "did not answer in time", ETIMEDOUT);
		rc = poll(&p, 1, (int)(left / 1000000u) + 1);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0)
			return fail(c, 1, "could not be waited for", errno);
		if (rc == 0)
			continue;
		n = recv(c->sock, r, sizeof(*r), 0);
		if (n < 0 && errno == EINTR)
			continue;
		break;
	}
	if (n <= 0)	/* the end of the socket, or ECONNRESET: it went away */
		return fail(c, 0, "ended", n < 0 ? errno : EPIPE);
	if (n != (ssize_t)sizeof(*r) || r->magic != DVXN_COP_MAGIC || r->op != q->op)
		return fail(c, 1, "answered nonsense", EPROTO);
	r->msg[sizeof(r->msg) - 1] = 0;
	if (r->rc)
		say(c, r->rc, "dvx-copier: %s", r->msg);
	return r->rc;
}

/* @dir/dvx-copier, @dir/../libexec/dvx/ or @dir/../plugins/nccl/ (a build tree): 0 if found */
static int copier_in(const char *dir, size_t dlen, char *buf, size_t len)
{
	static const char *const where[] = { "", "/../libexec/dvx", "/../plugins/nccl" };
	unsigned i;

	for (i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		snprintf(buf, len, "%.*s%s/" COPIER_NAME, (int)dlen, dir, where[i]);
		if (!access(buf, X_OK))
			return 0;
	}
	return -ENOENT;
}

int dvxn_copier_path(const char *env, char *buf, size_t len)
{
	char exe[512];
	const char *slash;
	Dl_info di;
	ssize_t n;

	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return access(buf, X_OK) ? -ENOENT : 0;
	}
	/* the shared object holding this code (the plugin), then the program */
	if (dladdr((void *)dvxn_copier_path, &di) && di.dli_fname &&
	    (slash = strrchr(di.dli_fname, '/')) &&
	    !copier_in(di.dli_fname, (size_t)(slash - di.dli_fname), buf, len))
		return 0;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -ENOENT;
	exe[n] = 0;
	slash = strrchr(exe, '/');
	return slash ? copier_in(exe, (size_t)(slash - exe), buf, len) : -ENOENT;
}

int dvxn_copier_start(struct dvxn_copier *c, const char *path, int sim, size_t stage_len,
		      uint64_t timeout_ns)
{
	posix_spawn_file_actions_t fa;
	struct dvxn_cop_req q = { .magic = DVXN_COP_MAGIC, .op = DVXN_COP_HELLO };
	struct dvxn_cop_rep r;
	char *argv[] = { (char *)path, sim ? (char *)"--sim" : NULL, NULL };
	int sv[2] = { -1, -1 }, mfd = -1, theirs = -1, rc;

	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->lock, NULL);
	c->sock = -1;
	c->timeout_ns = timeout_ns;
	if (!path || !stage_len || stage_len > (1ull << 30))
		return say(c, -EINVAL, "dvx-copier: no program, or a staging area of %zu bytes",
			   stage_len);
	if (access(path, X_OK))
		return say(c, -ENOENT, "dvx-copier: %s: %s", path, strerror(errno));
	mfd = memfd_create("dvx-copier-stage", MFD_CLOEXEC);
	if (mfd < 0 || ftruncate(mfd, (off_t)stage_len)) {
		rc = -errno;
		goto out;
	}
	c->stage = mmap(NULL, stage_len, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	if (c->stage == MAP_FAILED) {
		c->stage = NULL;
		rc = -errno;
		goto out;
	}
	c->stage_len = stage_len;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		rc = -errno;
		goto out;
	}
	/* above the copier's descriptor 3, so that the dup2 below clears close-on-exec */
	theirs = fcntl(sv[1], F_DUPFD_CLOEXEC, DVXN_COP_FD + 1);
	if (theirs < 0) {
		rc = -errno;
		goto out;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, theirs, DVXN_COP_FD);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
	/* none of the application's descriptors: its sockets close when it closes them */
	posix_spawn_file_actions_addclosefrom_np(&fa, DVXN_COP_FD + 1);
#endif
	rc = -posix_spawn(&c->pid, path, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc) {
		c->pid = 0;
		goto out;
	}
	close(theirs);
	close(sv[1]);
	theirs = sv[1] = -1;
	c->sock = sv[0];
	q.len = stage_len;
	rc = transact(c, &q, mfd, &r);
	close(mfd);
	if (rc)
		dvxn_copier_end(c);	/* c->why keeps the reason */
	return rc;
out:
	say(c, rc, "dvx-copier: start %s: %s", path, strerror(-rc));
	if (theirs >= 0)
		close(theirs);
	if (sv[0] >= 0)
		close(sv[0]);
	if (sv[1] >= 0)
		close(sv[1]);
	if (mfd >= 0)
		close(mfd);
	if (c->stage)
		munmap(c->stage, c->stage_len);
	c->stage = NULL;
	c->sock = -1;
	c->dead = 1;
	return rc;
}

int dvxn_copier_map(struct dvxn_copier *c, struct dvx_hal_gpu *gpu, uint64_t dptr, uint64_t len,
		    struct dvxn_copier_map *m)
{
	struct dvxn_cop_req q = { .magic = DVXN_COP_MAGIC, .op = DVXN_COP_MAP };
	struct dvxn_cop_rep r;
	struct dvx_hal_gpu_mem mem;
	uint32_t type;
	int rc;

	memset(&mem, 0, sizeof(mem));
	pthread_mutex_lock(&c->lock);
	if (c->dead) {
		rc = -EIO;
		goto out;
	}
	rc = dvx_hal_gpu_mem_lookup(gpu, dptr, &mem);
	if (rc) {
		say(c, rc, "%#llx is not device memory the driver knows (%s)",
		    (unsigned long long)dptr, rc == -ENOENT ? "host memory?" : gpu->diag.msg);
		goto out;
	}
	if (!len || dptr < mem.dptr || dptr + len > mem.dptr + mem.len || dptr + len < dptr) {
		rc = say(c, -EINVAL, "[%#llx, +%llu) runs past its allocation [%#llx, +%llu)",
			 (unsigned long long)dptr, (unsigned long long)len,
			 (unsigned long long)mem.dptr, (unsigned long long)mem.len);
		goto out;
	}
	type = mem.flags & DVX_HAL_GPU_MEM_LEGACY ? DVX_HAL_GPU_HANDLE_IPC :
	       mem.flags & DVX_HAL_GPU_MEM_EXPORT ? DVX_HAL_GPU_HANDLE_FD :
	       mem.flags & DVX_HAL_GPU_MEM_FABRIC ? DVX_HAL_GPU_HANDLE_FABRIC : 0;
	if (!type) {
		rc = say(c, -EOPNOTSUPP, "the allocation [%#llx, +%llu) can be shared with the "
			 "copier neither by an IPC handle nor a POSIX fd (a VMM allocation made "
			 "without CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)",
			 (unsigned long long)mem.dptr, (unsigned long long)mem.len);
		goto out;
	}
	rc = dvx_hal_gpu_mem_export(gpu, &mem, type, &q.h);
	if (rc) {
		say(c, rc, "export [%#llx, +%llu): %s", (unsigned long long)mem.dptr,
		    (unsigned long long)mem.len, gpu->diag.msg);
		goto out;
	}
	q.ordinal = mem.ordinal;
	q.base = mem.dptr;
	q.len = mem.len;
	{
		int fd = type == DVX_HAL_GPU_HANDLE_FD ? q.h.fd : -1;

		q.h.fd = -1;
		rc = transact(c, &q, fd, &r);
		if (fd >= 0)
			dvx_hal_fd_close(gpu->hal, fd);
	}
	if (!rc) {
		m->id = r.id;
		m->base = mem.dptr;
		m->len = mem.len;
	}
out:
	pthread_mutex_unlock(&c->lock);
	return rc;
}

int dvxn_copier_unmap(struct dvxn_copier *c, const struct dvxn_copier_map *m)
{
	struct dvxn_cop_req q = { .magic = DVXN_COP_MAGIC, .op = DVXN_COP_UNMAP, .id = m->id };
	struct dvxn_cop_rep r;
	int rc;

	pthread_mutex_lock(&c->lock);
	rc = transact(c, &q, -1, &r);
	pthread_mutex_unlock(&c->lock);
	return rc;
}

static int copy(struct dvxn_copier *c, const struct dvxn_copier_map *m, uint64_t dptr,
		void *host, uint64_t len, int to_device)
{
	struct dvxn_cop_req q = { .magic = DVXN_COP_MAGIC, .id = m->id };
	struct dvxn_cop_rep r;
	uint64_t done = 0, n;
	int rc = 0;

	if (dptr < m->base || dptr + len > m->base + m->len || dptr + len < dptr)
		return say(c, -EINVAL, "copy [%#llx, +%llu) outside the mapping [%#llx, +%llu)",
			   (unsigned long long)dptr, (unsigned long long)len,
			   (unsigned long long)m->base, (unsigned long long)m->len);
	q.op = to_device ? DVXN_COP_FROM_STAGE : DVXN_COP_TO_STAGE;
	pthread_mutex_lock(&c->lock);
	if (c->dead)
		rc = -EIO;	/* no staging area any more */
	while (!rc && done < len) {
		n = len - done < c->stage_len ? len - done : c->stage_len;
		if (to_device)
			memcpy(c->stage, (char *)host + done, n);
		q.off = dptr - m->base + done;
		q.len = n;
		q.stage_off = 0;
		rc = transact(c, &q, -1, &r);
		if (!rc && !to_device)
			memcpy((char *)host + done, c->stage, n);
		done += n;
	}
	if (!rc) {
		c->copies++;
		c->bytes += len;
	}
	pthread_mutex_unlock(&c->lock);
	return rc;
}

int dvxn_copier_read(struct dvxn_copier *c, const struct dvxn_copier_map *m, void *dst,
		     uint64_t dptr, uint64_t len)
{
	return copy(c, m, dptr, dst, len, 0);
}

int dvxn_copier_write(struct dvxn_copier *c, const struct dvxn_copier_map *m, uint64_t dptr,
		      const void *src, uint64_t len)
{
	return copy(c, m, dptr, (void *)src, len, 1);
}

void dvxn_copier_end(struct dvxn_copier *c)
{
	struct dvxn_cop_req q = { .magic = DVXN_COP_MAGIC, .op = DVXN_COP_QUIT };
	int st;

	pthread_mutex_lock(&c->lock);
	if (!c->dead && c->sock >= 0)
		(void)send(c->sock, &q, sizeof(q), MSG_NOSIGNAL);
	if (c->sock >= 0)
		close(c->sock);	/* EOF ends a copier that missed the request */
	c->sock = -1;
	reap(c, END_WAIT_NS, 1, &st);
	if (c->stage)
		munmap(c->stage, c->stage_len);
	c->stage = NULL;
	c->dead = 1;
	pthread_mutex_unlock(&c->lock);
}
