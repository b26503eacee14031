// SPDX-License-Identifier: MIT
/*
 * plugins/nccl/gdr.c - GPU buffers behind the plugin's software NICs (gdr.h).
 *
 * One state per process, like the fabric it serves. Registrations come from NCCL's
 * service threads (under gdr.lock); the copies from the fabric's progress thread (or a
 * thread stepping it) with the fabric's lock held, which is why they touch nothing here
 * but their own GPU and two counters.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <dvx/gpu/gpu.h>
#include <dvx/hal/gpu.h>
#include <dvx/hal/hal.h>
#include <dvx/hal/sim.h>

#include "gdr.h"

#define GDR_MAX_GPUS 16
#define GDR_COPY_TIMEOUT_NS 10000000000ull	/* one copy: far beyond any bus stall */

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

static struct {
	pthread_mutex_t lock;
	enum dvxn_gdr_mode mode;
	struct dvx_sim_fabric *fab;
	int probe_up;
	struct dvx_hal_gpu probe;		/* cuInit'ed, no device: pointer lookups */
	struct gdr_engine eng[GDR_MAX_GPUS];	/* opened as registrations name them */
	uint64_t copies, failed;		/* atomics: the progress thread counts */
	void (*trace)(const char *fmt, ...);
	unsigned ntrace;
} gdr = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void say(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!why || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
}

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
		say(why, len, "this libdvx was built without CUDA");
		return -ENODEV;
	}
	memset(g, 0, sizeof(*g));
	rc = dvx_hal_gpu_init(hal, g);
	if (!rc)
		rc = dvx_hal_gpu_count(g, &n);
	if (rc || n < 1) {
		say(why, len, "no CUDA driver or no GPU (%s: %s)", g->diag.op[0] ? g->diag.op : "-",
		    g->diag.msg[0] ? g->diag.msg : "no device");
		return -ENODEV;
	}
	return 0;
}

int dvxn_gdr_probe(const char *env, enum dvxn_gdr_mode *mode, char *why, size_t len)
{
	struct dvx_hal_gpu g;

	if (!strcmp(env ? env : "", "auto")) {
		*mode = cuda_probe(&g, NULL, 0) ? DVXN_GDR_OFF : DVXN_GDR_CUDA;
		return 0;
	}
	/* off unless asked for: on two H200s the path ran exact and then stalled (gdr.h) */
	if (!env || !*env || !strcmp(env, "0")) {
		*mode = DVXN_GDR_OFF;
		return 0;
	}
	if (!strcmp(env, "host")) {
		*mode = DVXN_GDR_HOST;
		return 0;
	}
	if (!strcmp(env, "cuda") || !strcmp(env, "1")) {
		if (cuda_probe(&g, why, len))
			return -EINVAL;
		*mode = DVXN_GDR_CUDA;
		return 0;
	}
	say(why, len, "DVX_NET_GDR=%s: auto, 0, 1 (cuda) or host", env);
	return -EINVAL;
}

void dvxn_gdr_up(struct dvx_sim_fabric *fab, enum dvxn_gdr_mode mode,
		 void (*trace)(const char *fmt, ...), unsigned ntrace)
{
	unsigned i;

	pthread_mutex_lock(&gdr.lock);
	gdr.fab = fab;
	gdr.trace = ntrace ? trace : NULL;
	gdr.ntrace = ntrace;
	gdr.mode = mode;
	gdr.copies = gdr.failed = 0;
	if (mode == DVXN_GDR_CUDA && !gdr.probe_up) {
		if (cuda_probe(&gdr.probe, NULL, 0))
			gdr.mode = DVXN_GDR_OFF;	/* the driver went away since the probe */
		else
			gdr.probe_up = 1;
	}
	for (i = 0; i < GDR_MAX_GPUS; i++) {
		gdr.eng[i].dma.read = cuda_read;
		gdr.eng[i].dma.write = cuda_write;
		gdr.eng[i].dma.arg = &gdr.eng[i];
	}
	pthread_mutex_unlock(&gdr.lock);
}

void dvxn_gdr_down(void)
{
	unsigned i;

	pthread_mutex_lock(&gdr.lock);
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

/* the engine for CUDA memory at [@dptr, +@size): its device, opened once */
static const struct dvx_sim_dma *cuda_engine(uint64_t dptr, uint64_t size, int *err, char *why,
					     size_t len)
{
	struct dvx_hal_gpu_mem m;
	struct gdr_engine *e;
	int o, rc;

	memset(&m, 0, sizeof(m));
	rc = dvx_hal_gpu_mem_lookup(&gdr.probe, dptr, &m);
	if (rc) {
		*err = rc == -ENOENT ? -ENOENT : -EIO;
		say(why, len, "%#llx is not memory the CUDA driver knows as device memory (%s)",
		    (unsigned long long)dptr, rc == -ENOENT ? "host memory?" : gdr.probe.diag.msg);
		return NULL;
	}
	if (dptr < m.dptr || dptr + size > m.dptr + m.len || dptr + size < dptr) {
		*err = -EINVAL;
		say(why, len, "[%#llx, +%llu) runs past its allocation [%#llx, +%llu)",
		    (unsigned long long)dptr, (unsigned long long)size,
		    (unsigned long long)m.dptr, (unsigned long long)m.len);
		return NULL;
	}
	o = m.ordinal;
	if (o < 0 || o >= GDR_MAX_GPUS) {
		*err = -ENODEV;
		say(why, len, "%#llx is on device %d (this plugin serves ordinals 0-%d)",
		    (unsigned long long)dptr, o, GDR_MAX_GPUS - 1);
		return NULL;
	}
	e = &gdr.eng[o];
	if (!e->open) {
		memset(&e->gpu, 0, sizeof(e->gpu));
		rc = dvx_gpu_open(&e->gpu, dvx_hal_cuda(), o, NULL);
		if (!rc) {
			rc = dvx_gpu_stream_create(&e->gpu, &e->st);
			if (rc)
				dvx_gpu_close(&e->gpu);
		}
		if (rc) {
			*err = -ENODEV;
			say(why, len, "GPU %d: %s: %s", o,
			    e->gpu.hg.diag.op[0] ? e->gpu.hg.diag.op : "open", e->gpu.hg.diag.msg);
			return NULL;
		}
		e->open = 1;
	}
	return &e->dma;
}

int dvxn_gdr_export(void *data, size_t size, int *fd, char *why, size_t len)
{
	const struct dvx_sim_dma *dma = NULL;
	uint64_t dptr = (uint64_t)(uintptr_t)data;
	int rc = 0;

	pthread_mutex_lock(&gdr.lock);
	if (!gdr.fab || gdr.mode == DVXN_GDR_OFF) {
		rc = -ENOTSUP;
		say(why, len, "GPU buffers are not offered (DVX_NET_GDR)");
	} else if (!data || !size) {
		rc = -EINVAL;
		say(why, len, "no buffer (%p, %zu bytes)", data, size);
	} else if (gdr.mode == DVXN_GDR_HOST) {
		dma = &host_dma;
	} else {
		dma = cuda_engine(dptr, size, &rc, why, len);
	}
	if (dma) {
		rc = dvx_sim_dmabuf_export_dma(gdr.fab, dptr, size, dma, fd);
		if (rc)
			say(why, len, "%s", rc == -ENOSPC ? "every dma-buf of the software NICs is "
				       "in use (DVX_NET_GDR_MAX_REGS)" : strerror(-rc));
	}
	pthread_mutex_unlock(&gdr.lock);
	return rc;
}

int dvxn_gdr_release(int fd)
{
	int rc;

	pthread_mutex_lock(&gdr.lock);
	rc = gdr.fab ? dvx_sim_dmabuf_release(gdr.fab, fd) : -EINVAL;
	pthread_mutex_unlock(&gdr.lock);
	return rc;
}

void dvxn_gdr_counts(uint64_t *copies, uint64_t *failed)
{
	*copies = __atomic_load_n(&gdr.copies, __ATOMIC_RELAXED);
	*failed = __atomic_load_n(&gdr.failed, __ATOMIC_RELAXED);
}
