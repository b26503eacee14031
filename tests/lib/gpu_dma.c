// SPDX-License-Identifier: MIT
/* tests/lib/gpu_dma.c - a real GPU beside the software NIC (gpu_dma.h). */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

#include <dvx/hal/gpu.h>

#include "gpu_dma.h"

#define GDMA_TMO (30ull * 1000000000ull)
#define GDMA_SLOW (100ull * 1000000ull)

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* the progress thread, the fabric locked: the copy on the NIC's stream, then waited for */
static int eng_copy(struct dvx_gdma_eng *e, uint64_t dst, uint64_t src, uint64_t len)
{
	uint64_t t0 = mono_ns(), dt;
	int err = dvx_gpu_make_current(&e->g);

	if (!err)
		err = dvx_hal_gpu_memcpy_async(&e->g.hg, dst, src, len, e->s.handle);
	if (!err)
		err = dvx_gpu_stream_wait(&e->s, GDMA_TMO);
	dt = mono_ns() - t0;
	if (dt > e->max_ns)
		e->max_ns = dt;
	e->slow += dt > GDMA_SLOW;
	if (err && !e->err)
		e->err = err;
	e->bytes += len;
	return err ? -EIO : 0;
}

static int eng_read(void *arg, void *dst, uint64_t src, uint64_t len)
{
	struct dvx_gdma_eng *e = arg;

	e->reads++;
	return eng_copy(e, (uint64_t)(uintptr_t)dst, src, len);
}

static int eng_write(void *arg, uint64_t dst, const void *src, uint64_t len)
{
	struct dvx_gdma_eng *e = arg;

	e->writes++;
	return eng_copy(e, dst, (uint64_t)(uintptr_t)src, len);
}

static struct dvx_gdma *of_hal(const struct dvx_hal *hal)
{
	return (struct dvx_gdma *)(void *)((char *)(uintptr_t)hal - offsetof(struct dvx_gdma, hal));
}

/* GPU @o's copy engine, opened at its first use (the calling thread's context stays) */
static struct dvx_gdma_eng *eng_up(struct dvx_gdma *x, int o, struct dvx_hal_gpu *keep)
{
	struct dvx_gdma_eng *e;
	int err = 0;

	if (o < 0 || o >= DVX_GDMA_GPUS)
		return NULL;
	e = &x->eng[o];
	pthread_mutex_lock(&x->lock);
	if (!e->up) {
		memset(&e->g, 0, sizeof(e->g));
		err = dvx_gpu_open(&e->g, dvx_hal_cuda(), o, NULL);
		if (!err) {
			err = dvx_gpu_stream_create(&e->g, &e->s);
			if (err)
				dvx_gpu_close(&e->g);
		}
		if (!err) {
			e->x = x;
			e->dma.read = eng_read;
			e->dma.write = eng_write;
			e->dma.arg = e;
			e->up = 1;
		}
		if (keep)
			(void)dvx_hal_gpu_ctx_set_current(keep);
	}
	pthread_mutex_unlock(&x->lock);
	return err ? NULL : e;
}

const struct dvx_sim_dma *dvx_gdma_engine(struct dvx_gdma *x, int ordinal)
{
	struct dvx_gdma_eng *e = eng_up(x, ordinal, NULL);

	return e ? &e->dma : NULL;
}

/* a dma-buf of device memory: the fabric's, over the memory's GPU's copy engine */
static int gdma_dmabuf_fd(struct dvx_hal_gpu *gpu, uint64_t dptr, uint64_t len, uint32_t flags,
			  int *fd)
{
	struct dvx_gdma *x = of_hal(gpu->hal);
	struct dvx_gdma_eng *e = eng_up(x, gpu->ordinal, gpu);

	(void)flags;
	if (!e)
		return -EIO;
	return dvx_sim_dmabuf_export_dma(x->fab, dptr, len, &e->dma, fd);
}

/* the GPU's facts, with dma-bufs (this hal makes them) */
static int gdma_query(struct dvx_hal_gpu *gpu, struct dvx_hal_gpu_attr *attr)
{
	int err = dvx_hal_cuda()->gpu->gpu_query(gpu, attr);

	if (!err)
		attr->dmabuf = 1;
	return err;
}

/* descriptors close through the fabric's hal: a fake dma-buf as a dma-buf closes */
static int gdma_fd_close(const struct dvx_hal *hal, int fd)
{
	const struct dvx_hal *sh = dvx_sim_hal(of_hal(hal)->fab);

	return sh->host->fd_close(sh, fd);
}

int dvx_gdma_init(struct dvx_gdma *x, struct dvx_sim_fabric *fab)
{
	const struct dvx_hal *c = dvx_hal_cuda();

	if (!c || !c->gpu)
		return -ENODEV;
	memset(x, 0, sizeof(*x));
	x->fab = fab;
	pthread_mutex_init(&x->lock, NULL);
	x->gops = *c->gpu;
	x->gops.gpu_dmabuf_fd = gdma_dmabuf_fd;
	x->gops.gpu_query = gdma_query;
	x->hops = *c->host;
	x->hops.fd_close = gdma_fd_close;
	x->hal = *c;
	x->hal.gpu = &x->gops;
	x->hal.host = &x->hops;
	x->hal.name = "cuda+sim-dma";
	return 0;
}

const struct dvx_hal *dvx_gdma_hal(struct dvx_gdma *x)
{
	return &x->hal;
}

void dvx_gdma_fini(struct dvx_gdma *x)
{
	int o;

	for (o = 0; o < DVX_GDMA_GPUS; o++) {
		struct dvx_gdma_eng *e = &x->eng[o];

		if (!e->up)
			continue;
		(void)dvx_gpu_make_current(&e->g);
		dvx_gpu_stream_destroy(&e->s);
		dvx_gpu_close(&e->g);
		e->up = 0;
	}
	pthread_mutex_destroy(&x->lock);
}
