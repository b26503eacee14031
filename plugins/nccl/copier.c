// SPDX-License-Identifier: MIT
/*
 * plugins/nccl/copier.c - the caller's side of dvx-copier (copier.h).
 *
 * Locking: c->lock serialises the requests and guards c->why, c->dead and the counters.
 * Nothing here runs a driver call under it (exports are made before it is taken), so
 * the software NIC's DMA callbacks, which take it with the fabric's lock held, wait at
 * most for one request's bounded round trip.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include <dvx/hal/host.h>

#include "copier.h"
#include "say.h"

extern char **environ;

#define COPIER_NAME "dvx-copier"
#define END_WAIT_NS 2000000000ull	/* a quitting copier's bound before SIGKILL */
#define KILL_WAIT_NS 2000000000ull	/* a killed copier's bound to be reaped */
#define NOW_WAIT_NS 2000000000ull	/* one that ended or said it ends: its exit status */

DVX_STATIC_ASSERT(DVXN_COP_MAX_MAPS == 1u << DVXN_COP_SLOT_BITS, "copier ids");

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

/* only the process that started the copier talks to it (not a child after fork()) */
static int mine(const struct dvxn_copier *c)
{
	return c->owner == getpid();
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

/* wait up to @ns for the copier to be reaped: 1 with @buf saying how it ended */
static int reaped(struct dvxn_copier *c, uint64_t ns, char *buf, size_t len)
{
	uint64_t t0 = now_ns();
	int st = 0;
	pid_t r;

	if (c->pid <= 0)
		return 1;
	for (;;) {
		r = waitpid(c->pid, &st, WNOHANG);
		if (r == c->pid || (r < 0 && errno == ECHILD)) {	/* ECHILD: SIGCHLD ignored */
			status_words(r < 0 ? -1 : st, buf, len);
			c->pid = 0;
			if (c->pidfd >= 0)
				close(c->pidfd);
			c->pidfd = -1;
			return 1;
		}
		if (now_ns() - t0 >= ns)
			return 0;
		usleep(1000);
	}
}

/* SIGKILL, through the pidfd where there is one: never a recycled pid */
static void kill_it(struct dvxn_copier *c)
{
	if (c->pid <= 0)
		return;
#ifdef SYS_pidfd_send_signal
	if (c->pidfd >= 0 && !syscall(SYS_pidfd_send_signal, c->pidfd, SIGKILL, NULL, 0))
		return;
#endif
	kill(c->pid, SIGKILL);
}

/* end the copier: reaped within @wait_ns, else killed and reaped within a bound (a
 * process stuck in the driver is left for dvxn_copier_end()); @buf says how it ended */
static void put_down(struct dvxn_copier *c, uint64_t wait_ns, char *buf, size_t len)
{
	snprintf(buf, len, "still running");
	if (reaped(c, wait_ns, buf, len))
		return;
	kill_it(c);
	if (!reaped(c, KILL_WAIT_NS, buf, len))
		snprintf(buf, len, "killed, not yet reaped");
}

/* the copier failed (c->lock held): ended (killed unless @ended) and every later call
 * is -EIO; the reason is @what and the errno @err */
static int fail(struct dvxn_copier *c, int ended, int err, const char *fmt, ...)
{
	char what[192], how[48];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	c->dead = 1;
	put_down(c, ended ? NOW_WAIT_NS : 0, how, sizeof(how));
	say(c, -EIO, "dvx-copier %s (%s; the copier: %s)", what, strerror(err < 0 ? -err : err),
	    how);
	return -EIO;
}

/* send @q (with descriptor @fd when >= 0) and wait for its answer (c->lock held) */
static int transact(struct dvxn_copier *c, const struct dvxn_cop_req *q, int fd,
		    struct dvxn_cop_rep *r)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { (void *)q, sizeof(*q) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct pollfd p = { .fd = c->sock, .events = POLLIN };
	uint64_t t0 = now_ns(), left, ms;
	ssize_t n;
	int rc;

	if (c->dead || !mine(c))
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
		return fail(c, 1, n < 0 ? errno : EPIPE, "took no request");
	for (;;) {
		left = c->timeout_ns - (now_ns() - t0);
		if ((int64_t)left <= 0)
			return fail(c, 0, ETIMEDOUT, "did not answer in %llu ms",
				    (unsigned long long)(c->timeout_ns / 1000000u));
		ms = left / 1000000u + 1;
		rc = poll(&p, 1, ms > 60000 ? 60000 : (int)ms);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0)
			return fail(c, 0, errno, "could not be waited for");
		if (rc == 0)
			continue;
		/* MSG_TRUNC: the datagram's own length, so a longer answer is seen */
		n = recv(c->sock, r, sizeof(*r), MSG_TRUNC);
		if (n < 0 && errno == EINTR)
			continue;
		break;
	}
	if (n <= 0)	/* the end of the socket, or ECONNRESET: it went away */
		return fail(c, 1, n < 0 ? errno : EPIPE, "ended");
	if (n != (ssize_t)sizeof(*r) || r->magic != DVXN_COP_MAGIC || r->op != q->op)
		return fail(c, 0, EPROTO, "answered nonsense (%zd bytes, op %u to %u)", n,
			    r->op, q->op);
	r->msg[sizeof(r->msg) - 1] = 0;
	if (r->rc)
		say(c, r->rc, "dvx-copier: %s", r->msg);
	return r->rc;
}

/* @dir/dvx-copier, @dir/../libexec/dvx/ or @dir/../plugins/nccl/ (a build tree): 0 if found */
static int copier_in(const char *dir, size_t dlen, char *buf, size_t len)
{
	static const char *const where[] = { "", "/../libexec/dvx", "/../plugins/nccl" };
	char p[PATH_MAX], abs[PATH_MAX];
	unsigned i;

	for (i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		snprintf(p, sizeof(p), "%.*s%s/" COPIER_NAME, (int)dlen, dir, where[i]);
		/* absolute: the path is kept, and the caller may change its folder */
		if (!access(p, X_OK) && realpath(p, abs) && strlen(abs) < len) {
			snprintf(buf, len, "%s", abs);
			return 0;
		}
	}
	return -ENOENT;
}

int dvxn_copier_path(const char *env, char *buf, size_t len)
{
	char exe[PATH_MAX], p[PATH_MAX];
	const char *slash;
	Dl_info di;
	ssize_t n;

	if (env && *env) {
		if (access(env, X_OK) || !realpath(env, p) || strlen(p) >= len)
			return -ENOENT;
		snprintf(buf, len, "%s", p);
		return 0;
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
	posix_spawnattr_t at;
	struct dvxn_cop_req q = { .magic = DVXN_COP_MAGIC, .op = DVXN_COP_HELLO };
	struct dvxn_cop_rep r;
	char *argv[] = { (char *)path, sim ? (char *)"--sim" : NULL, NULL };
	int sv[2] = { -1, -1 }, mfd = -1, theirs = -1, rc;
	sigset_t none;

	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->lock, NULL);
	c->owner = getpid();
	c->sock = c->pidfd = -1;
	c->timeout_ns = timeout_ns;
	c->dead = 1;	/* until the hello is answered */
	if (!path || !stage_len || stage_len > (1ull << 30) || timeout_ns < 1000000ull)
		return say(c, -EINVAL, "dvx-copier: no program, a staging area of %zu bytes or "
			   "a bound of %llu ns", stage_len, (unsigned long long)timeout_ns);
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
	/* no terminal input or output of the application's; its stderr for the copier's */
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, theirs, DVXN_COP_FD);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
	/* none of the application's descriptors (the copier closes them too, elsewhere) */
	posix_spawn_file_actions_addclosefrom_np(&fa, DVXN_COP_FD + 1);
#endif
	/* not the calling thread's signal mask (NCCL's threads block some) */
	posix_spawnattr_init(&at);
	sigemptyset(&none);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK);
	rc = -posix_spawn(&c->pid, path, &fa, &at, argv, environ);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	if (rc) {
		c->pid = 0;
		goto out;
	}
#ifdef SYS_pidfd_open
	c->pidfd = (int)syscall(SYS_pidfd_open, c->pid, 0);	/* -1 on kernels before 5.3 */
#endif
	close(theirs);
	close(sv[1]);
	theirs = sv[1] = -1;
	c->sock = sv[0];
	c->dead = 0;
	q.id = DVXN_COP_VERSION;
	q.len = stage_len;
	q.off = timeout_ns;
	pthread_mutex_lock(&c->lock);
	rc = transact(c, &q, mfd, &r);
	if (!rc && r.id != DVXN_COP_VERSION)
		rc = fail(c, 0, EPROTO, "is version %u, not %u", r.id, DVXN_COP_VERSION);
	pthread_mutex_unlock(&c->lock);
	close(mfd);
	if (rc)
		dvxn_copier_end(c);	/* the reason stays */
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
	return rc;
}

int dvxn_copier_export(struct dvx_hal_gpu *gpu, uint64_t dptr, uint64_t len,
		       struct dvxn_copier_mem *mem, char *why, size_t wlen)
{
	struct dvx_hal_gpu_mem m;
	uint32_t type;
	int rc;

	memset(mem, 0, sizeof(*mem));
	mem->h.fd = -1;
	memset(&m, 0, sizeof(m));
	rc = dvx_hal_gpu_mem_lookup(gpu, dptr, &m);
	if (rc) {
		dvxn_say(why, wlen, "%#llx is not device memory the driver knows (%s)",
		     (unsigned long long)dptr, rc == -ENOENT ? "host memory?" : gpu->diag.msg);
		return rc;
	}
	if (!len || dptr < m.dptr || dptr + len > m.dptr + m.len || dptr + len < dptr) {
		dvxn_say(why, wlen, "[%#llx, +%llu) runs past its allocation [%#llx, +%llu)",
		     (unsigned long long)dptr, (unsigned long long)len,
		     (unsigned long long)m.dptr, (unsigned long long)m.len);
		return -EINVAL;
	}
	type = m.flags & DVX_HAL_GPU_MEM_LEGACY ? DVX_HAL_GPU_HANDLE_IPC :
	       m.flags & DVX_HAL_GPU_MEM_EXPORT ? DVX_HAL_GPU_HANDLE_FD :
	       m.flags & DVX_HAL_GPU_MEM_FABRIC ? DVX_HAL_GPU_HANDLE_FABRIC : 0;
	if (!type) {
		dvxn_say(why, wlen, "the allocation [%#llx, +%llu) can be shared with the copier "
		     "neither by an IPC handle, a POSIX fd nor a fabric handle (a VMM "
		     "allocation made with no shareable handle type)",
		     (unsigned long long)m.dptr, (unsigned long long)m.len);
		return -EOPNOTSUPP;
	}
	rc = dvx_hal_gpu_mem_export(gpu, &m, type, &mem->h);
	if (rc) {
		mem->h.fd = -1;
		dvxn_say(why, wlen, "export [%#llx, +%llu): %s", (unsigned long long)m.dptr,
		     (unsigned long long)m.len, gpu->diag.msg);
		return rc;
	}
	mem->ordinal = m.ordinal;
	mem->base = m.dptr;
	mem->len = m.len;
	return 0;
}

/*
 * a new descriptor of the memfd this process holds open with @dev and @ino, or -1: the
 * entries of /proc/self/fd that name a memfd are opened again by path (never fstat() of
 * a descriptor another thread may be closing) and the one whose file is that one kept
 */
static int fd_of(dev_t dev, ino_t ino)
{
	char path[64], target[256];
	struct dirent *d;
	struct stat st;
	DIR *dir = opendir("/proc/self/fd");
	int fd = -1, f;
	ssize_t n;

	if (!dir)
		return -1;
	while (fd < 0 && (d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%.20s", d->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = 0;
		if (strncmp(target, "/memfd:", 7))
			continue;	/* only memfds: opening a device again is not harmless */
		f = open(path, O_RDWR | O_CLOEXEC);
		if (f < 0)
			continue;
		if (!fstat(f, &st) && st.st_ino == ino && st.st_dev == dev && S_ISREG(st.st_mode))
			fd = f;
		else
			close(f);
	}
	closedir(dir);
	return fd;
}

int dvxn_copier_export_host(uint64_t dptr, uint64_t len, struct dvxn_copier_mem *mem,
			    char *why, size_t wlen)
{
	unsigned long long lo, hi, off, ino;
	unsigned maj, mnr;
	char line[512], perm[8];
	FILE *f = fopen("/proc/self/maps", "re");
	int found = 0, fd;

	memset(mem, 0, sizeof(*mem));
	mem->h.fd = -1;
	if (!f) {
		dvxn_say(why, wlen, "/proc/self/maps: %s", strerror(errno));
		return -ENOENT;
	}
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%llx-%llx %7s %llx %x:%x %llu", &lo, &hi, perm, &off, &maj,
			       &mnr, &ino) == 7 && dptr >= lo && dptr < hi;
	fclose(f);
	if (!found || !ino || perm[3] != 's' || off) {
		dvxn_say(why, wlen, "%#llx is not in a shared mapping of a file from its start",
		     (unsigned long long)dptr);
		return -ENOENT;
	}
	if (!len || dptr + len > hi || dptr + len < dptr) {
		dvxn_say(why, wlen, "[%#llx, +%llu) runs past its mapping [%#llx, %#llx)",
		     (unsigned long long)dptr, (unsigned long long)len, lo, hi);
		return -EINVAL;
	}
	fd = fd_of(makedev(maj, mnr), (ino_t)ino);
	if (fd < 0) {
		dvxn_say(why, wlen, "the file behind [%#llx, %#llx) is no memfd this process holds "
			 "open", lo, hi);
		return -ENOENT;
	}
	mem->ordinal = 0;
	mem->base = lo;
	mem->len = hi - lo;
	mem->h.type = DVX_HAL_GPU_HANDLE_FD;
	mem->h.fd = fd;
	mem->h.len = hi - lo;
	return 0;
}

void dvxn_copier_mem_drop(struct dvxn_copier_mem *mem)
{
	if (mem->h.type == DVX_HAL_GPU_HANDLE_FD && mem->h.fd >= 0)
		close(mem->h.fd);
	mem->h.fd = -1;
}

int dvxn_copier_map(struct dvxn_copier *c, struct dvxn_copier_mem *mem, struct dvxn_copier_map *m)
{
	struct dvxn_cop_req q = { .magic = DVXN_COP_MAGIC, .op = DVXN_COP_MAP };
	struct dvxn_cop_rep r;
	int fd = mem->h.type == DVX_HAL_GPU_HANDLE_FD ? mem->h.fd : -1, rc = -EIO;

	q.ordinal = mem->ordinal;
	q.base = mem->base;
	q.len = mem->len;
	q.h = mem->h;
	q.h.fd = -1;
	if (mine(c)) {
		pthread_mutex_lock(&c->lock);
		rc = transact(c, &q, fd, &r);
		if (!rc) {
			m->id = r.id;
			m->base = mem->base;
			m->len = mem->len;
		}
		pthread_mutex_unlock(&c->lock);
	}
	dvxn_copier_mem_drop(mem);
	return rc;
}

int dvxn_copier_unmap(struct dvxn_copier *c, const struct dvxn_copier_map *m)
{
	struct dvxn_cop_req q = { .magic = DVXN_COP_MAGIC, .op = DVXN_COP_UNMAP, .id = m->id };
	struct dvxn_cop_rep r;
	int rc = 0;

	if (!mine(c))
		return 0;
	pthread_mutex_lock(&c->lock);
	if (!c->dead)
		rc = transact(c, &q, -1, &r);
	pthread_mutex_unlock(&c->lock);
	return rc == -EIO ? 0 : rc;	/* gone with the copier */
}

static int copy(struct dvxn_copier *c, const struct dvxn_copier_map *m, uint64_t dptr,
		void *host, uint64_t len, int to_device)
{
	struct dvxn_cop_req q = { .magic = DVXN_COP_MAGIC, .id = m->id };
	struct dvxn_cop_rep r;
	uint64_t done = 0, n;
	int rc = 0;

	if (!mine(c))
		return -EIO;
	q.op = to_device ? DVXN_COP_FROM_STAGE : DVXN_COP_TO_STAGE;
	pthread_mutex_lock(&c->lock);
	if (dptr < m->base || dptr + len > m->base + m->len || dptr + len < dptr) {
		rc = say(c, -EINVAL, "copy [%#llx, +%llu) outside the mapping [%#llx, +%llu)",
			 (unsigned long long)dptr, (unsigned long long)len,
			 (unsigned long long)m->base, (unsigned long long)m->len);
		goto out;
	}
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
		if (rc && !c->dead && rc != -EINVAL) {
			/* a copy the copier could not make: it ended itself after answering (its
			 * stream may still hold the DMA); -EINVAL is a request it refused */
			char reason[sizeof(r.msg)];

			snprintf(reason, sizeof(reason), "%s", r.msg);
			rc = fail(c, 1, rc, "failed a copy: %s", reason);
		}
		if (!rc && !to_device)
			memcpy((char *)host + done, c->stage, n);
		done += n;
	}
	if (!rc)
		c->copies++;
out:
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

void dvxn_copier_why(struct dvxn_copier *c, char *buf, size_t len)
{
	if (!mine(c)) {
		snprintf(buf, len, "dvx-copier belongs to process %d", (int)c->owner);
		return;
	}
	pthread_mutex_lock(&c->lock);
	snprintf(buf, len, "%s", c->why);
	pthread_mutex_unlock(&c->lock);
}

void dvxn_copier_end(struct dvxn_copier *c)
{
	struct dvxn_cop_req q = { .magic = DVXN_COP_MAGIC, .op = DVXN_COP_QUIT };
	char how[48];

	if (!mine(c)) {
		dvxn_copier_forked(c);
		return;
	}
	pthread_mutex_lock(&c->lock);
	if (!c->dead && c->sock >= 0)
		(void)send(c->sock, &q, sizeof(q), MSG_NOSIGNAL);
	if (c->sock >= 0)
		close(c->sock);	/* EOF ends a copier that missed the request */
	c->sock = -1;
	put_down(c, END_WAIT_NS, how, sizeof(how));
	if (c->stage)
		munmap(c->stage, c->stage_len);
	c->stage = NULL;
	c->dead = 1;
	pthread_mutex_unlock(&c->lock);
}

void dvxn_copier_forked(struct dvxn_copier *c)
{
	if (mine(c))
		return;
	/* the parent's lock may have been held at the fork: this copy starts afresh */
	pthread_mutex_init(&c->lock, NULL);
	if (c->sock >= 0)
		close(c->sock);	/* so the copier sees its parent's end, not ours */
	if (c->pidfd >= 0)
		close(c->pidfd);
	if (c->stage)
		munmap(c->stage, c->stage_len);
	c->sock = c->pidfd = -1;
	c->stage = NULL;
	c->pid = 0;
	c->dead = 1;
	snprintf(c->why, sizeof(c->why), "dvx-copier belongs to process %d (this is a child "
		 "forked from it)", (int)c->owner);
}
