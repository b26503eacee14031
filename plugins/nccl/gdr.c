// SPDX-License-Identifier: MIT
/*
 * plugins/nccl/gdr.c - GPU buffers behind the plugin's software NICs (gdr.h).
 *
 * One state per process, like the fabric it serves. Registrations come from NCCL's
 * service threads (under gdr.lock); the copies from the fabric's progress thread (or a
 * thread stepping it) with the fabric's lock held, which is why they touch nothing here
 * but their own GPU (thread engine) or dvx-copier (its own lock: one bounded request),
 * two counters and the once-only warning. Lock order: gdr.lock, then the fabric's or
 * the copier's; the fabric's, then the copier's.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dvx/gpu/gpu.h>
#include <dvx/hal/gpu.h>
#include <dvx/hal/hal.h>
#include <dvx/hal/sim.h>

#include "copier.h"
#include "gdr.h"
#include "say.h"

#define GDR_MAX_GPUS 16
#define GDR_MAX_REGS 65536			/* DVX_NET_GDR_MAX_REGS at most */
#define GDR_COPY_TIMEOUT_NS 10000000000ull	/* one copy: far beyond any bus stall */
/* one answer of dvx-copier: a copy, or a map whose first GPU the copier opens */
#define GDR_COPIER_TIMEOUT_NS 30000000000ull

/*
 * One device's DMA engine: its primary context and a stream of its own. The copies go
 * on that non-blocking stream and are waited for there, never on the legacy default
 * stream: a synchronous cuMemcpy would queue behind the application's work on the
 * default stream, which may itself wait (an event) for the very collective whose bytes
 * the NIC is moving.
 */
struct gdr_engine {
	struct dvx_gpu gpu;
	struct dvx_gpu_stream st;
	int open;
	struct dvx_sim_dma dma;
};

/* a registration through dvx-copier: its mapping there and its DMA callbacks */
struct gdr_reg {
	int used;
	int fd;				/* the software dma-buf */
	struct dvxn_copier_map map;
	struct dvx_sim_dma dma;
};

static struct {
	pthread_mutex_t lock;
	enum dvxn_gdr_mode mode;
	enum dvxn_gdr_engine engine;
	char copier_path[PATH_MAX];	/* DVXN_GDR_PROCESS: found by the probe */
	int optional;			/* DVX_NET_GDR=auto: off if the engine cannot start */
	int copier_up;			/* started by dvxn_gdr_up() */
	int warned;			/* the copier's failure told once */
	struct dvxn_copier cop;
	struct gdr_reg regs[GDR_MAX_REGS];
	struct dvx_sim_fabric *fab;
	int probe_up;
	struct dvx_hal_gpu probe;		/* cuInit'ed, no device: pointer lookups */
	struct gdr_engine eng[GDR_MAX_GPUS];	/* opened as registrations name them */
	uint64_t copies, failed;		/* atomics: the progress thread counts */
	void (*trace)(const char *fmt, ...);
	void (*warn)(const char *fmt, ...);
	unsigned ntrace;
} gdr = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int counted(int err)
{
	__atomic_add_fetch(&gdr.copies, 1, __ATOMIC_RELAXED);
	if (err)
		__atomic_add_fetch(&gdr.failed, 1, __ATOMIC_RELAXED);
	return err;
}

/* the software NIC's DMA into a real GPU: its progress thread, the fabric locked */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int engine_copy(struct gdr_engine *e, uint64_t dst, uint64_t src, uint64_t len, int dtoh)
{
	uint64_t t0 = gdr.trace ? now_ns() : 0, n;
	int rc = dvx_gpu_make_current(&e->gpu);

	if (!rc)
		rc = dvx_hal_gpu_memcpy_async(&e->gpu.hg, dst, src, len, e->st.handle);
	if (!rc)
		rc = dvx_gpu_stream_wait(&e->st, GDR_COPY_TIMEOUT_NS);
	n = __atomic_load_n(&gdr.copies, __ATOMIC_RELAXED);
	if (gdr.trace && n < gdr.ntrace)
		gdr.trace("GPU copy %llu: %s %#llx, %llu bytes: %d (%s) in %llu us",
			  (unsigned long long)n, dtoh ? "from" : "to",
			  (unsigned long long)(dtoh ? src : dst), (unsigned long long)len, rc,
			  rc ? e->gpu.hg.diag.msg : "ok",
			  (unsigned long long)((now_ns() - t0) / 1000));
	return counted(rc ? (rc == -ETIMEDOUT ? rc : -EIO) : 0);
}

/* DVXN_GDR_PROCESS: the same copies, made by dvx-copier (copier.h) */
static int proc_copy(struct gdr_reg *r, void *host, uint64_t dptr, uint64_t len, int dtoh)
{
	uint64_t t0 = gdr.trace ? now_ns() : 0, n;
	int rc = dtoh ? dvxn_copier_read(&gdr.cop, &r->map, host, dptr, len) :
			dvxn_copier_write(&gdr.cop, &r->map, dptr, host, len);
	char why[256] = "ok";

	if (rc)
		dvxn_copier_why(&gdr.cop, why, sizeof(why));
	n = __atomic_load_n(&gdr.copies, __ATOMIC_RELAXED);
	if (gdr.trace && n < gdr.ntrace)
		gdr.trace("GPU copy %llu (dvx-copier): %s %#llx, %llu bytes: %d (%s) in %llu us",
			  (unsigned long long)n, dtoh ? "from" : "to", (unsigned long long)dptr,
			  (unsigned long long)len, rc, why,
			  (unsigned long long)((now_ns() - t0) / 1000));
	/* once: the copier is gone, and with it every later copy (error completions) */
	if (rc && gdr.warn && !__atomic_exchange_n(&gdr.warned, 1, __ATOMIC_RELAXED))
		gdr.warn("GPU buffers: %s; every copy of GPU memory fails from now on", why);
	return counted(rc ? (rc == -ETIMEDOUT ? rc : -EIO) : 0);
}

static int proc_read(void *arg, void *dst, uint64_t src, uint64_t len)
{
	return proc_copy(arg, dst, src, len, 1);
}

static int proc_write(void *arg, uint64_t dst, const void *src, uint64_t len)
{
	return proc_copy(arg, (void *)src, dst, len, 0);
}

static int cuda_read(void *arg, void *dst, uint64_t src, uint64_t len)
{
	return engine_copy(arg, (uint64_t)(uintptr_t)dst, src, len, 1);
}

static int cuda_write(void *arg, uint64_t dst, const void *src, uint64_t len)
{
	return engine_copy(arg, dst, (uint64_t)(uintptr_t)src, len, 0);
}

/* DVXN_GDR_HOST: the same path over host memory, for tests without a GPU */
static int host_read(void *arg, void *dst, uint64_t src, uint64_t len)
{
	(void)arg;
	memcpy(dst, (const void *)(uintptr_t)src, len);
	return counted(0);
}

static int host_write(void *arg, uint64_t dst, const void *src, uint64_t len)
{
	(void)arg;
	memcpy((void *)(uintptr_t)dst, src, len);
	return counted(0);
}

static const struct dvx_sim_dma host_dma = { host_read, host_write, NULL };

/* cuInit through the CUDA backend and count the GPUs: 0 when at least one is there */
static int cuda_probe(struct dvx_hal_gpu *g, char *why, size_t len)
{
	const struct dvx_hal *hal = dvx_hal_cuda();
	int n = 0, rc;

	if (!hal) {
		dvxn_say(why, len, "this libdvx was built without CUDA");
		return -ENODEV;
	}
	memset(g, 0, sizeof(*g));
	rc = dvx_hal_gpu_init(hal, g);
	if (!rc)
		rc = dvx_hal_gpu_count(g, &n);
	if (rc || n < 1) {
		dvxn_say(why, len, "no CUDA driver or no GPU (%s: %s)", g->diag.op[0] ? g->diag.op : "-",
		    g->diag.msg[0] ? g->diag.msg : "no device");
		return -ENODEV;
	}
	return 0;
}

/* the engine DVX_NET_GDR_ENGINE (@env) asks for, and dvx-copier's path for PROCESS */
static int engine_probe(const char *env, enum dvxn_gdr_engine *engine, char *why, size_t len)
{
	int rc;

	*engine = env && !strcmp(env, "thread") ? DVXN_GDR_THREAD : DVXN_GDR_PROCESS;
	if (*engine == DVXN_GDR_THREAD)
		return 0;
	rc = dvxn_copier_path(getenv("DVX_NET_GDR_COPIER"), gdr.copier_path,
			      sizeof(gdr.copier_path));
	if (rc)
		dvxn_say(why, len, "no dvx-copier %s%s (DVX_NET_GDR_COPIER names it; "
		    "DVX_NET_GDR_ENGINE=thread copies in this process instead)",
		    getenv("DVX_NET_GDR_COPIER") ? "at " : "beside the plugin or the program, "
		    "or in ../libexec/dvx/ or ../plugins/nccl/ from either",
		    getenv("DVX_NET_GDR_COPIER") ? getenv("DVX_NET_GDR_COPIER") : "");
	return rc;
}

int dvxn_gdr_probe(const char *env, const char *engine_env, enum dvxn_gdr_mode *mode,
		   enum dvxn_gdr_engine *engine, char *why, size_t len)
{
	struct dvx_hal_gpu g;

	*engine = DVXN_GDR_PROCESS;
	gdr.optional = 0;
	if (engine_env && *engine_env && strcmp(engine_env, "process") &&
	    strcmp(engine_env, "thread")) {	/* refused whatever the mode */
		dvxn_say(why, len, "DVX_NET_GDR_ENGINE=%s: process (the default) or thread", engine_env);
		return -EINVAL;
	}
	if (!strcmp(env ? env : "", "auto")) {
		*mode = cuda_probe(&g, NULL, 0) || engine_probe(engine_env, engine, NULL, 0) ?
			DVXN_GDR_OFF : DVXN_GDR_CUDA;
		gdr.optional = 1;
		return 0;
	}
	/* off unless asked for: host buffers are faster on software NICs (gdr.h) */
	if (!env || !*env || !strcmp(env, "0")) {
		*mode = DVXN_GDR_OFF;
		return 0;
	}
	if (!strcmp(env, "host")) {
		*mode = DVXN_GDR_HOST;
		return 0;
	}
	if (!strcmp(env, "hostproc")) {
		if (engine_env && !strcmp(engine_env, "thread")) {
			dvxn_say(why, len, "DVX_NET_GDR=hostproc is dvx-copier's test: not with "
			    "DVX_NET_GDR_ENGINE=thread");
			return -EINVAL;
		}
		if (engine_probe(engine_env, engine, why, len))
			return -EINVAL;
		*mode = DVXN_GDR_HOSTPROC;
		return 0;
	}
	if (!strcmp(env, "cuda") || !strcmp(env, "1")) {
		if (cuda_probe(&g, why, len) || engine_probe(engine_env, engine, why, len))
			return -EINVAL;
		*mode = DVXN_GDR_CUDA;
		return 0;
	}
	dvxn_say(why, len, "DVX_NET_GDR=%s: auto, 0, 1 (cuda), host or hostproc", env);
	return -EINVAL;
}

/* a child after fork(): the parent's copier and registrations are not its own, and a
 * lock a parent's thread held at the fork would never be let go */
static void gdr_forked(void)
{
	pthread_mutex_init(&gdr.lock, NULL);
	dvxn_copier_forked(&gdr.cop);
}

static void gdr_atfork(void)
{
	pthread_atfork(NULL, NULL, gdr_forked);
}

int dvxn_gdr_up(struct dvx_sim_fabric *fab, enum dvxn_gdr_mode mode,
		enum dvxn_gdr_engine engine, size_t stage_bytes,
		void (*trace)(const char *fmt, ...), void (*warn)(const char *fmt, ...),
		unsigned ntrace, char *why, size_t len)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	unsigned i;
	int rc = 0;

	pthread_once(&once, gdr_atfork);
	pthread_mutex_lock(&gdr.lock);
	gdr.fab = fab;
	gdr.engine = engine;
	gdr.trace = ntrace ? trace : NULL;
	gdr.warn = warn;
	gdr.ntrace = ntrace;
	gdr.mode = mode;
	gdr.copies = gdr.failed = 0;
	gdr.warned = 0;
	if (mode == DVXN_GDR_CUDA && !gdr.probe_up) {
		if (cuda_probe(&gdr.probe, why, len)) {
			gdr.mode = DVXN_GDR_OFF;	/* the driver went away since the probe */
			rc = -ENODEV;
		} else {
			gdr.probe_up = 1;
		}
	}
	for (i = 0; i < GDR_MAX_GPUS; i++) {
		gdr.eng[i].dma.read = cuda_read;
		gdr.eng[i].dma.write = cuda_write;
		gdr.eng[i].dma.arg = &gdr.eng[i];
	}
	/* dvx-copier now, not at the first registration: NCCL is told CUDA pointers are
	 * supported only when the engine runs */
	if (!rc && engine == DVXN_GDR_PROCESS &&
	    (gdr.mode == DVXN_GDR_CUDA || gdr.mode == DVXN_GDR_HOSTPROC)) {
		rc = dvxn_copier_start(&gdr.cop, gdr.copier_path, gdr.mode == DVXN_GDR_HOSTPROC,
				       stage_bytes, GDR_COPIER_TIMEOUT_NS);
		if (rc) {
			dvxn_copier_why(&gdr.cop, why, len);
			gdr.mode = DVXN_GDR_OFF;
		} else {
			gdr.copier_up = 1;
		}
	}
	if (rc && gdr.optional)
		rc = 0;	/* auto: GPU buffers off, said at init (the caller) */
	pthread_mutex_unlock(&gdr.lock);
	return rc;
}

void dvxn_gdr_down(void)
{
	unsigned i;

	pthread_mutex_lock(&gdr.lock);
	for (i = 0; i < GDR_MAX_REGS; i++)
		if (gdr.regs[i].used) {	/* registrations NCCL left: the fabric is going */
			dvxn_copier_unmap(&gdr.cop, &gdr.regs[i].map);
			gdr.regs[i].used = 0;
		}
	if (gdr.copier_up)
		dvxn_copier_end(&gdr.cop);
	gdr.copier_up = 0;
	for (i = 0; i < GDR_MAX_GPUS; i++)
		if (gdr.eng[i].open) {
			if (!dvx_gpu_make_current(&gdr.eng[i].gpu))
				dvx_gpu_stream_destroy(&gdr.eng[i].st);
			dvx_gpu_close(&gdr.eng[i].gpu);
			gdr.eng[i].open = 0;
		}
	gdr.fab = NULL;
	gdr.mode = DVXN_GDR_OFF;
	pthread_mutex_unlock(&gdr.lock);
}

enum dvxn_gdr_mode dvxn_gdr_mode(void)
{
	return gdr.mode;
}

/* the engine for CUDA memory at [@dptr, +@size): its device, opened once (with a stream
 * of the plugin's for the thread engine) */
static struct gdr_engine *cuda_engine(uint64_t dptr, uint64_t size, int *err, char *why,
				      size_t len)
{
	struct dvx_hal_gpu_mem m;
	struct gdr_engine *e;
	int o, rc;

	memset(&m, 0, sizeof(m));
	rc = dvx_hal_gpu_mem_lookup(&gdr.probe, dptr, &m);
	if (rc) {
		*err = rc == -ENOENT ? -ENOENT : -EIO;
		dvxn_say(why, len, "%#llx is not memory the CUDA driver knows as device memory (%s)",
		    (unsigned long long)dptr, rc == -ENOENT ? "host memory?" : gdr.probe.diag.msg);
		return NULL;
	}
	if (dptr < m.dptr || dptr + size > m.dptr + m.len || dptr + size < dptr) {
		*err = -EINVAL;
		dvxn_say(why, len, "[%#llx, +%llu) runs past its allocation [%#llx, +%llu)",
		    (unsigned long long)dptr, (unsigned long long)size,
		    (unsigned long long)m.dptr, (unsigned long long)m.len);
		return NULL;
	}
	o = m.ordinal;
	if (o < 0 || o >= GDR_MAX_GPUS) {
		*err = -ENODEV;
		dvxn_say(why, len, "%#llx is on device %d (this plugin serves ordinals 0-%d)",
		    (unsigned long long)dptr, o, GDR_MAX_GPUS - 1);
		return NULL;
	}
	e = &gdr.eng[o];
	if (!e->open) {
		memset(&e->gpu, 0, sizeof(e->gpu));
		rc = dvx_gpu_open(&e->gpu, dvx_hal_cuda(), o, NULL);
		if (!rc && gdr.engine == DVXN_GDR_THREAD) {
			rc = dvx_gpu_stream_create(&e->gpu, &e->st);
			if (rc)
				dvx_gpu_close(&e->gpu);
		}
		if (rc) {
			*err = -ENODEV;
			dvxn_say(why, len, "GPU %d: %s: %s", o,
			    e->gpu.hg.diag.op[0] ? e->gpu.hg.diag.op : "open", e->gpu.hg.diag.msg);
			return NULL;
		}
		e->open = 1;
	}
	return e;
}

/*
 * DVXN_GDR_PROCESS: export the allocation around [@dptr, +@size) (of @e's device; with
 * no @e, memfd-backed host memory: DVXN_GDR_HOSTPROC), map it into dvx-copier and lend
 * a slot whose callbacks copy through it; the caller sets the slot's fd once the
 * dma-buf exists. The export's driver calls are made before any copier lock is taken.
 */
static struct gdr_reg *copier_reg(struct gdr_engine *e, uint64_t dptr, uint64_t size, int *err,
				  char *why, size_t len)
{
	struct dvxn_copier_mem mem;
	struct gdr_reg *r = NULL;
	unsigned i;
	int rc;

	for (i = 0; i < GDR_MAX_REGS && !r; i++)
		if (!gdr.regs[i].used)
			r = &gdr.regs[i];
	if (!r) {
		*err = -ENOSPC;
		dvxn_say(why, len, "%u GPU buffers are registered already", GDR_MAX_REGS);
		return NULL;
	}
	if (e && (rc = dvx_gpu_make_current(&e->gpu))) {
		*err = -ENODEV;
		dvxn_say(why, len, "GPU %d current: %s", e->gpu.hg.ordinal, e->gpu.hg.diag.msg);
		return NULL;
	}
	rc = e ? dvxn_copier_export(&e->gpu.hg, dptr, size, &mem, why, len) :
		 dvxn_copier_export_host(dptr, size, &mem, why, len);
	if (rc) {
		*err = rc;
		return NULL;
	}
	rc = dvxn_copier_map(&gdr.cop, &mem, &r->map);
	if (rc) {
		*err = rc;
		dvxn_copier_why(&gdr.cop, why, len);
		return NULL;
	}
	r->fd = -1;
	r->dma.read = proc_read;
	r->dma.write = proc_write;
	r->dma.arg = r;
	return r;
}

int dvxn_gdr_export(void *data, size_t size, int *fd, char *why, size_t len)
{
	const struct dvx_sim_dma *dma = NULL;
	uint64_t dptr = (uint64_t)(uintptr_t)data;
	struct gdr_engine *e;
	struct gdr_reg *r = NULL;
	int rc = 0;

	pthread_mutex_lock(&gdr.lock);
	if (!gdr.fab || gdr.mode == DVXN_GDR_OFF) {
		rc = -ENOTSUP;
		dvxn_say(why, len, "GPU buffers are not offered (DVX_NET_GDR)");
	} else if (!data || !size) {
		rc = -EINVAL;
		dvxn_say(why, len, "no buffer (%p, %zu bytes)", data, size);
	} else if (gdr.mode == DVXN_GDR_HOST) {
		dma = &host_dma;
	} else if (gdr.mode == DVXN_GDR_HOSTPROC) {
		if ((r = copier_reg(NULL, dptr, size, &rc, why, len)))
			dma = &r->dma;
	} else if ((e = cuda_engine(dptr, size, &rc, why, len))) {
		if (gdr.engine == DVXN_GDR_THREAD)
			dma = &e->dma;
		else if ((r = copier_reg(e, dptr, size, &rc, why, len)))
			dma = &r->dma;
	}
	if (dma) {
		rc = dvx_sim_dmabuf_export_dma(gdr.fab, dptr, size, dma, fd);
		if (rc)
			dvxn_say(why, len, "%s", rc == -ENOSPC ? "every dma-buf of the software NICs is "
				       "in use (DVX_NET_GDR_MAX_REGS)" : strerror(-rc));
		if (r && rc)
			dvxn_copier_unmap(&gdr.cop, &r->map);
		else if (r) {
			r->fd = *fd;
			r->used = 1;
		}
	}
	pthread_mutex_unlock(&gdr.lock);
	return rc;
}

int dvxn_gdr_release(int fd)
{
	unsigned i;
	int rc;

	pthread_mutex_lock(&gdr.lock);
	rc = gdr.fab ? dvx_sim_dmabuf_release(gdr.fab, fd) : -EINVAL;
	for (i = 0; !rc && i < GDR_MAX_REGS; i++)
		if (gdr.regs[i].used && gdr.regs[i].fd == fd) {
			gdr.regs[i].used = 0;
			rc = dvxn_copier_unmap(&gdr.cop, &gdr.regs[i].map);	/* 0 if it is gone */
			break;
		}
	pthread_mutex_unlock(&gdr.lock);
	return rc;
}

void dvxn_gdr_counts(uint64_t *copies, uint64_t *failed)
{
	*copies = __atomic_load_n(&gdr.copies, __ATOMIC_RELAXED);
	*failed = __atomic_load_n(&gdr.failed, __ATOMIC_RELAXED);
}
