// SPDX-License-Identifier: MIT
/*
 * plugins/nccl/copier_main.c - dvx-copier: the software NIC's copies into and out of GPU
 * memory, in a process of their own (copier.h says why and how).
 *
 *   dvx-copier [--sim]
 *
 * Spawned by the NCCL plugin (and by tests) with its socket as descriptor 3; not a
 * program to run by hand. It serves requests until the socket closes, QUIT comes or its
 * parent is gone, one at a time, each answered when done. The GPUs are opened as
 * mappings name them (their primary contexts, a non-blocking stream each); the staging
 * area is registered with the first, so the copies run as DMA from pinned memory. A copy
 * that fails or is not done within the caller's bound (less a second) is answered, and
 * then the copier ends: the DMA may still be queued on its stream, and no later copy may
 * meet it in the staging area. It holds no descriptor of its parent's but its socket,
 * and ignores SIGINT, SIGTERM, SIGHUP and SIGQUIT (a job's signals are for the
 * application, which ends the copier by closing its socket). --sim serves the software
 * GPU model (hal/sim/gpu.c) instead of CUDA: tests without a GPU; there
 * DVX_COPIER_FAIL_AFTER=N fails the copy after the N-th (fault injection).
 *
 * Exit status: 0 at the end of its socket, QUIT or its parent's end; 2 on a request
 * that is not one (a caller of another build); 3 when it cannot start (no CUDA, no
 * memory); 4 after a copy failed.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <dvx/gpu/gpu.h>
#include <dvx/hal/gpu.h>
#include <dvx/hal/sim.h>

#include "copier.h"

#define NGPUS 16

static const struct dvx_hal *hal;
static struct {
	struct dvx_gpu g;
	struct dvx_gpu_stream st;
	int up;
} gpus[NGPUS];
static struct {
	int used;
	uint32_t refs, gen;
	int32_t ordinal;
	uint64_t base, len;	/* the caller's */
	struct dvx_hal_gpu_handle h;	/* how it came (fd: -1) */
	struct dvx_gpu_mem m;	/* here */
} maps[DVXN_COP_MAX_MAPS];
static uint8_t *stage;
static uint64_t stage_len;
static uint64_t copy_timeout_ns = 10000000000ull;	/* the caller's bound less 1 s */
static uint64_t copies, fail_after;	/* --sim: DVX_COPIER_FAIL_AFTER */
static int copy_failed;
static struct dvx_gpu_hostreg stage_reg;
static int stage_registered;

static int say(struct dvxn_cop_rep *r, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	va_end(ap);
	r->rc = err;
	return err;
}

/* GPU @o opened (its primary context current on return) */
static struct dvx_gpu *gpu(int o, struct dvxn_cop_rep *r)
{
	int rc;

	if (o < 0 || o >= NGPUS) {
		say(r, -ENODEV, "device %d: the copier serves ordinals 0-%d", o, NGPUS - 1);
		return NULL;
	}
	if (!gpus[o].up) {
		rc = dvx_gpu_open(&gpus[o].g, hal, o, NULL);
		if (!rc && (rc = dvx_gpu_stream_create(&gpus[o].g, &gpus[o].st)))
			dvx_gpu_close(&gpus[o].g);
		if (rc) {
			say(r, rc, "open GPU %d: %s", o, gpus[o].g.hg.diag.msg);
			return NULL;
		}
		gpus[o].up = 1;
		/* pinned staging, so the copies are DMA; unpinned still copies */
		if (!stage_registered &&
		    !dvx_gpu_host_register(&gpus[o].g, stage, stage_len, 0, &stage_reg))
			stage_registered = 1;
	}
	if ((rc = dvx_gpu_make_current(&gpus[o].g))) {
		say(r, rc, "GPU %d current: %s", o, gpus[o].g.hg.diag.msg);
		return NULL;
	}
	return &gpus[o].g;
}

static void do_map(const struct dvxn_cop_req *q, int fd, struct dvxn_cop_rep *r)
{
	struct dvx_hal_gpu_handle h = q->h;
	struct dvx_gpu *g;
	int i, free_slot = -1, rc;

	for (i = 0; i < DVXN_COP_MAX_MAPS; i++) {
		if (!maps[i].used) {
			if (free_slot < 0)
				free_slot = i;
			continue;
		}
		/* an IPC handle names its allocation (CUDA opens one once per process); an
		 * fd does not, and another allocation may sit at the same address since */
		if (h.type == DVX_HAL_GPU_HANDLE_IPC && maps[i].h.type == h.type &&
		    !memcmp(maps[i].h.data, h.data, sizeof(h.data)) &&
		    maps[i].ordinal == q->ordinal && maps[i].base == q->base &&
		    maps[i].len == q->len) {
			maps[i].refs++;
			r->id = maps[i].gen << DVXN_COP_SLOT_BITS | (uint32_t)i;
			return;
		}
	}
	if (free_slot < 0) {
		say(r, -ENOSPC, "%d allocations are mapped already", DVXN_COP_MAX_MAPS);
		return;
	}
	if (h.type == DVX_HAL_GPU_HANDLE_FD && fd < 0) {
		say(r, -EINVAL, "an FD handle without its descriptor");
		return;
	}
	h.fd = h.type == DVX_HAL_GPU_HANDLE_FD ? fd : -1;
	if (!(g = gpu(q->ordinal, r)))
		return;
	rc = dvx_gpu_mem_import(g, &h, &maps[free_slot].m);
	if (rc) {
		say(r, rc, "import [%#llx, +%llu) on GPU %d: %s", (unsigned long long)q->base,
		    (unsigned long long)q->len, q->ordinal, g->hg.diag.msg);
		return;
	}
	if (maps[free_slot].m.len < q->len) {
		dvx_gpu_mem_free(&maps[free_slot].m);
		say(r, -EINVAL, "the handle maps %llu bytes, not the %llu asked",
		    (unsigned long long)maps[free_slot].m.len, (unsigned long long)q->len);
		return;
	}
	maps[free_slot].used = 1;
	maps[free_slot].refs = 1;
	maps[free_slot].gen = (maps[free_slot].gen + 1) & 0xfffff;
	maps[free_slot].ordinal = q->ordinal;
	maps[free_slot].base = q->base;
	maps[free_slot].len = q->len;
	maps[free_slot].h = h;
	maps[free_slot].h.fd = -1;
	r->id = maps[free_slot].gen << DVXN_COP_SLOT_BITS | (uint32_t)free_slot;
}

/* the mapping @id names, or NULL with @r saying so */
static int slot_of(uint32_t id, struct dvxn_cop_rep *r)
{
	uint32_t i = id & (DVXN_COP_MAX_MAPS - 1);

	if (!maps[i].used || maps[i].gen != id >> DVXN_COP_SLOT_BITS) {
		say(r, -EINVAL, "mapping %#x is not mapped", id);
		return -1;
	}
	return (int)i;
}

static void do_unmap(const struct dvxn_cop_req *q, struct dvxn_cop_rep *r)
{
	int i = slot_of(q->id, r);

	int rc;

	if (i < 0 || --maps[i].refs)
		return;
	maps[i].used = 0;
	if (!gpu(maps[i].ordinal, r))
		return;
	rc = dvx_gpu_mem_free(&maps[i].m);
	if (rc)
		say(r, rc, "unmap [%#llx, +%llu) on GPU %d: %s", (unsigned long long)maps[i].base,
		    (unsigned long long)maps[i].len, maps[i].ordinal, gpus[maps[i].ordinal].g.hg.diag.msg);
}

static void do_copy(const struct dvxn_cop_req *q, struct dvxn_cop_rep *r)
{
	int i = slot_of(q->id, r), to_dev = q->op == DVXN_COP_FROM_STAGE, rc;
	uint64_t dev, host;
	struct dvx_gpu *g;

	if (i < 0)
		return;
	if (!q->len || q->off > maps[i].len || q->len > maps[i].len - q->off ||
	    q->stage_off > stage_len || q->len > stage_len - q->stage_off) {
		say(r, -EINVAL, "copy of %llu bytes at %llu (staging %llu) outside mapping %#x "
		    "(%llu bytes) or the staging area (%llu)", (unsigned long long)q->len,
		    (unsigned long long)q->off, (unsigned long long)q->stage_off, q->id,
		    (unsigned long long)maps[i].len, (unsigned long long)stage_len);
		return;
	}
	if (!(g = gpu(maps[i].ordinal, r)))
		return;
	dev = maps[i].m.dptr + q->off;
	host = (uint64_t)(uintptr_t)(stage + q->stage_off);
	if (fail_after && ++copies >= fail_after) {
		copy_failed = 1;
		say(r, -EIO, "copy %s GPU %d: failed as DVX_COPIER_FAIL_AFTER=%llu asks",
		    to_dev ? "to" : "from", maps[i].ordinal, (unsigned long long)fail_after);
		return;
	}
	rc = dvx_hal_gpu_memcpy_async(&g->hg, to_dev ? dev : host, to_dev ? host : dev, q->len,
				      gpus[maps[i].ordinal].st.handle);
	if (!rc)
		rc = dvx_gpu_stream_wait(&gpus[maps[i].ordinal].st, copy_timeout_ns);
	if (rc) {
		copy_failed = 1;	/* answered, then the end: the stream may hold it */
		say(r, rc, "copy %s GPU %d: %s", to_dev ? "to" : "from", maps[i].ordinal,
		    rc == -ETIMEDOUT ? "not done in time" : g->hg.diag.msg);
	}
}

static void do_hello(const struct dvxn_cop_req *q, int fd, struct dvxn_cop_rep *r)
{
	struct stat st;
	void *p;

	r->id = DVXN_COP_VERSION;
	if (q->id != DVXN_COP_VERSION) {
		say(r, -EPROTO, "the caller speaks version %u, this copier %u", q->id,
		    DVXN_COP_VERSION);
		return;
	}
	if (stage || fd < 0 || !q->len) {
		say(r, -EINVAL, "hello without a staging area, or twice");
		return;
	}
	if (fstat(fd, &st) || (uint64_t)st.st_size < q->len) {
		say(r, -EINVAL, "the staging area's file is shorter than %llu bytes",
		    (unsigned long long)q->len);
		return;
	}
	if (q->off > 2000000000ull)
		copy_timeout_ns = q->off - 1000000000ull;
	else if (q->off)
		copy_timeout_ns = q->off / 2;
	p = mmap(NULL, q->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		say(r, -errno, "map the staging area (%llu bytes): %s",
		    (unsigned long long)q->len, strerror(errno));
		return;
	}
	stage = p;
	stage_len = q->len;
}

/* the software GPUs of --sim: a fabric of NGPUS default ones (uuid by index, as the
 * caller's) */
static const struct dvx_hal *sim_hal(void)
{
	struct dvx_sim_fabric_cfg cfg;
	struct dvx_sim_gpu_cfg gc;
	struct dvx_sim_fabric *fab;
	size_t len;
	void *mem;
	unsigned i;

	dvx_sim_fabric_cfg_default(&cfg);
	cfg.max_gpus = NGPUS;
	cfg.max_gpu_mems = DVXN_COP_MAX_MAPS + 64;
	len = dvx_sim_fabric_mem_size(&cfg);
	mem = len ? calloc(1, len) : NULL;
	if (!mem || dvx_sim_fabric_init(mem, len, &cfg, &fab))
		return NULL;
	for (i = 0; i < NGPUS; i++) {
		dvx_sim_gpu_cfg_default(&gc, i);
		if (dvx_sim_add_gpu(fab, &gc) < 0)
			return NULL;
	}
	return dvx_sim_hal(fab);
}

int main(int argc, char **argv)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct dvxn_cop_req q;
	struct dvxn_cop_rep r;
	struct iovec iov = { &q, sizeof(q) };
	struct msghdr mh;
	struct cmsghdr *cm;
	ssize_t n;
	struct pollfd pf = { .fd = DVXN_COP_FD, .events = POLLIN };
	pid_t parent = getppid();
	const char *fa = getenv("DVX_COPIER_FAIL_AFTER");
	int fd, i;

	/* nothing of the caller's but the socket (posix_spawn closed them already where
	 * glibc can; not everywhere) */
#ifdef SYS_close_range
	(void)syscall(SYS_close_range, DVXN_COP_FD + 1, ~0u, 0);
#endif
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	if (argc > 1 && strcmp(argv[1], "--sim")) {
		fprintf(stderr, "usage: dvx-copier [--sim] (spawned by libnccl-net-dvx.so with "
			"its socket as descriptor 3)\n");
		return 3;
	}
	if (argc > 1 && fa)
		fail_after = strtoull(fa, NULL, 0);
	hal = argc > 1 ? sim_hal() : dvx_hal_cuda();
	if (!hal) {
		fprintf(stderr, "dvx-copier: %s\n", argc > 1 ? "no software GPUs" :
			"this build has no CUDA backend");
		return 3;
	}
	for (;;) {
		memset(&mh, 0, sizeof(mh));
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		/* a parent that is gone ends it, even if another process holds the socket */
		i = poll(&pf, 1, 1000);
		if (getppid() != parent)
			break;
		if (i == 0 || (i < 0 && errno == EINTR))
			continue;
		n = recvmsg(DVXN_COP_FD, &mh, MSG_CMSG_CLOEXEC);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		fd = -1;
		for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
			    cm->cmsg_len == CMSG_LEN(sizeof(int)))
				memcpy(&fd, CMSG_DATA(cm), sizeof(int));
		if (n != (ssize_t)sizeof(q) || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
		    q.magic != DVXN_COP_MAGIC)
			return 2;
		if (q.op == DVXN_COP_QUIT)
			break;
		memset(&r, 0, sizeof(r));
		r.magic = DVXN_COP_MAGIC;
		r.op = q.op;
		if (!stage && q.op != DVXN_COP_HELLO)
			say(&r, -EINVAL, "no staging area yet (hello first)");
		else if (q.op == DVXN_COP_HELLO)
			do_hello(&q, fd, &r);
		else if (q.op == DVXN_COP_MAP)
			do_map(&q, fd, &r);
		else if (q.op == DVXN_COP_UNMAP)
			do_unmap(&q, &r);
		else if (q.op == DVXN_COP_TO_STAGE || q.op == DVXN_COP_FROM_STAGE)
			do_copy(&q, &r);
		else
			say(&r, -EINVAL, "request %u is not one", q.op);
		if (fd >= 0)
			close(fd);
		if (send(DVXN_COP_FD, &r, sizeof(r), MSG_NOSIGNAL) != (ssize_t)sizeof(r))
			break;
		if (copy_failed)
			_exit(4);	/* not through the driver's teardown of a stuck stream */
	}
	for (i = 0; i < DVXN_COP_MAX_MAPS; i++)
		if (maps[i].used && gpu(maps[i].ordinal, &r))
			dvx_gpu_mem_free(&maps[i].m);
	if (stage_registered)
		dvx_gpu_host_unregister(&stage_reg);
	for (i = 0; i < NGPUS; i++)
		if (gpus[i].up) {
			dvx_gpu_make_current(&gpus[i].g);
			dvx_gpu_stream_destroy(&gpus[i].st);
			dvx_gpu_close(&gpus[i].g);
		}
	return 0;
}
