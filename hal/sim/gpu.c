// SPDX-License-Identifier: MIT
/*
 * hal/sim/gpu.c - the software GPUs: the hal's GPU table over host memory.
 *
 * Device memory is a shared mapping of a memfd, so a device address is the host
 * address of the mapping and the memory can be shared with another process the way
 * CUDA shares it:
 *  - FD handles are a real descriptor: a duplicate of the allocation's memfd, which the
 *    importer maps (after checking it is at least as long as the handle says);
 *  - FABRIC and IPC handles are bytes: the exporter's pid, the memfd's number and the
 *    length; the importer opens /proc/<pid>/fd/<n> (the exporter keeps the memfd open
 *    until it frees the allocation, as CUDA keeps an exported allocation alive) and
 *    maps it. The pid and number are only valid on this host, like the real handles'
 *    scope (a fabric handle would reach further).
 * dma-bufs of device memory are the fabric's fake dma-bufs, so the software NIC
 * registers GPU memory the way a NIC does. Streams complete their work at once:
 * memcpy_async copies and stream_atomic stores or adds before returning. No device
 * code runs here (module_load, launch: -ENOSYS).
 *
 * What CUDA refuses is refused: memory freed twice or not ours, handle types the
 * allocation was not made with, FABRIC without the attribute, a handle that is not one
 * of ours, a host range registered twice, copies outside device memory (htod, dtoh).
 *
 * Locking: the fabric's lock guards the tables; mapping and closing happen outside it
 * only where no table entry changes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctrl.h"

static struct sim_fabric *gfab(const struct dvx_hal_gpu *gpu)
{
	return (struct sim_fabric *)gpu->hal->ctx;
}

static int gfail(struct dvx_hal_gpu *gpu, int err, const char *op, const char *what)
{
	return dvx_hal_diag_set(&gpu->diag, err, DVX_DIAG_CUDA, op, "sim: %s", what);
}

/* the GPU chosen with gpu_get, or NULL */
static struct sim_gpu *the_gpu(struct sim_fabric *f, const struct dvx_hal_gpu *gpu)
{
	return gpu->handle >= 0 && (uint32_t)gpu->handle < f->ngpus ? &f->gpus[gpu->handle] : NULL;
}

/* the GPU chosen, with its context retained */
static struct sim_gpu *ctx_gpu(struct sim_fabric *f, const struct dvx_hal_gpu *gpu)
{
	struct sim_gpu *g = the_gpu(f, gpu);

	/* ctx_refs changes under the fabric lock; this check may run outside it */
	return g && __atomic_load_n(&g->ctx_refs, __ATOMIC_ACQUIRE) && gpu->ctx_retained ? g : NULL;
}

/* the entry of kind ALLOC or IMPORT (@any: or HOSTREG) that contains [a, a + len) */
static struct sim_gpu_mem *mem_around(struct sim_fabric *f, uint64_t a, uint64_t len, int any)
{
	uint32_t i;

	for (i = 0; i < f->cfg.max_gpu_mems; i++) {
		struct sim_gpu_mem *m = &f->gpu_mems[i];
		uint64_t b = (uint64_t)(uintptr_t)m->base;

		if (m->kind == SIM_GPU_MEM_FREE || (m->kind == SIM_GPU_MEM_HOSTREG && !any))
			continue;
		if (a >= b && a - b < m->len && len <= m->len - (a - b))
			return m;
	}
	return NULL;
}

static struct sim_gpu_mem *mem_slot(struct sim_fabric *f)
{
	uint32_t i;

	for (i = 0; i < f->cfg.max_gpu_mems; i++)
		if (f->gpu_mems[i].kind == SIM_GPU_MEM_FREE)
			return &f->gpu_mems[i];
	return NULL;
}

/* ---- devices ------------------------------------------------------------------- */

void dvx_sim_gpu_cfg_default(struct dvx_sim_gpu_cfg *cfg, unsigned index)
{
	struct dvx_hal_gpu_attr *a;
	unsigned i;

	if (!cfg)
		return;
	memset(cfg, 0, sizeof(*cfg));
	a = &cfg->attr;
	snprintf(a->name, sizeof(a->name), "sim GPU %u", index);
	snprintf(a->pci, sizeof(a->pci), "0000:%02x:00.0", (0x18 + index) & 0xff);
	a->driver_version = 13000;
	a->cc_major = 9;
	a->cc_minor = 0;
	a->sm_count = 132;
	a->max_threads_per_block = 1024;
	a->warp_size = 32;
	a->gdr_writes_ordering = 100;
	a->total_mem = 141ull << 30;
	a->gdr = 1;
	a->dmabuf = 1;
	a->vmm = 1;
	a->vmm_rdma = 1;
	a->posix_fd = 1;
	a->host_register = 1;
	a->can_map_host = 1;
	a->unified_addressing = 1;
	a->fabric = 0;
	for (i = 0; i < 16; i++)
		a->uuid[i] = (uint8_t)(0x5a ^ (i * 17));
	a->uuid[0] = (uint8_t)index;
	a->uuid[1] = (uint8_t)(index >> 8);
	a->granularity = 2u << 20;
	cfg->peers = ~0u;
}

int dvx_sim_add_gpu(struct dvx_sim_fabric *fab, const struct dvx_sim_gpu_cfg *cfg)
{
	struct sim_fabric *f = sim_fab_of(fab);
	uint64_t g;
	uint32_t i;
	int rc;

	if (!fab || !cfg || !cfg->attr.pci[0])
		return -EINVAL;
	g = cfg->attr.granularity;
	if (g && (g & (g - 1)))
		return -EINVAL;
	pthread_mutex_lock(&f->lock);
	rc = -ENOSPC;
	if (f->ngpus >= f->cfg.max_gpus)
		goto out;
	rc = -EEXIST;
	for (i = 0; i < f->ngpus; i++)
		if (!strcmp(f->gpus[i].cfg.attr.pci, cfg->attr.pci) ||
		    !memcmp(f->gpus[i].cfg.attr.uuid, cfg->attr.uuid, 16))
			goto out;
	memset(&f->gpus[f->ngpus], 0, sizeof(f->gpus[0]));
	f->gpus[f->ngpus].cfg = *cfg;
	f->gpus[f->ngpus].cfg.attr.ordinal = (int32_t)f->ngpus;
	if (!g)
		f->gpus[f->ngpus].cfg.attr.granularity = 4096;
	rc = (int)f->ngpus++;
out:
	pthread_mutex_unlock(&f->lock);
	return rc;
}

static int sim_gpu_init(struct dvx_hal_gpu *gpu)
{
	(void)gpu;
	return 0;
}

static int sim_gpu_count(struct dvx_hal_gpu *gpu, int *count)
{
	*count = (int)gfab(gpu)->ngpus;
	return 0;
}

static int sim_gpu_get(struct dvx_hal_gpu *gpu, int ordinal, const char *pci)
{
	struct sim_fabric *f = gfab(gpu);
	uint32_t i = (uint32_t)ordinal;

	if (pci && *pci)
		for (i = 0; i < f->ngpus; i++)
			if (!strcmp(f->gpus[i].cfg.attr.pci, pci) ||
			    !strcmp(f->gpus[i].cfg.attr.pci + 5, pci))
				break;
	if (ordinal < 0 && !(pci && *pci))
		i = UINT32_MAX;
	if (i >= f->ngpus)
		return gfail(gpu, -ENODEV, "gpu_get", "no such GPU");
	gpu->ordinal = (int32_t)i;
	gpu->handle = (int32_t)i;
	return 0;
}

static int sim_gpu_query(struct dvx_hal_gpu *gpu, struct dvx_hal_gpu_attr *attr)
{
	struct sim_gpu *g = the_gpu(gfab(gpu), gpu);

	if (!g)
		return gfail(gpu, -ENODEV, "gpu_query", "bad GPU handle");
	*attr = g->cfg.attr;
	return 0;
}

static int sim_gpu_ctx_retain(struct dvx_hal_gpu *gpu)
{
	struct sim_fabric *f = gfab(gpu);
	struct sim_gpu *g;

	pthread_mutex_lock(&f->lock);
	g = the_gpu(f, gpu);
	if (g) {
		__atomic_add_fetch(&g->ctx_refs, 1, __ATOMIC_RELEASE);
		gpu->priv = g;
		gpu->ctx_retained = 1;
	}
	pthread_mutex_unlock(&f->lock);
	return g ? 0 : gfail(gpu, -ENODEV, "gpu_ctx_retain", "bad GPU handle");
}

static int sim_gpu_ctx_release(struct dvx_hal_gpu *gpu)
{
	struct sim_fabric *f = gfab(gpu);
	struct sim_gpu *g;

	pthread_mutex_lock(&f->lock);
	g = ctx_gpu(f, gpu);
	if (g) {
		__atomic_sub_fetch(&g->ctx_refs, 1, __ATOMIC_RELEASE);
		gpu->priv = NULL;
		gpu->ctx_retained = 0;
	}
	pthread_mutex_unlock(&f->lock);
	return g ? 0 : gfail(gpu, -EINVAL, "gpu_ctx_release", "no context retained");
}

static int sim_gpu_ctx_set_current(struct dvx_hal_gpu *gpu)
{
	return ctx_gpu(gfab(gpu), gpu) ? 0 :
		gfail(gpu, -EINVAL, "gpu_ctx_set_current", "no context retained");
}

static int sim_gpu_peer_access(struct dvx_hal_gpu *gpu, int peer, int *can)
{
	struct sim_fabric *f = gfab(gpu);
	struct sim_gpu *g = the_gpu(f, gpu);

	if (!g || (uint32_t)peer >= f->ngpus)
		return gfail(gpu, -ENODEV, "gpu_peer_access", "bad GPU handle or peer ordinal");
	*can = (int)((g->cfg.peers >> peer) & 1);
	return 0;
}

/* ---- memory -------------------------------------------------------------------- */

/* a shared mapping of @fd of @len bytes */
static int map_fd(int fd, uint64_t len, uint8_t **base)
{
	void *p = mmap(NULL, (size_t)len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (p == MAP_FAILED)
		return -errno;
	*base = p;
	return 0;
}

static int sim_gpu_mem_create(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_mem_req *req,
			      struct dvx_hal_gpu_mem *mem)
{
	struct sim_fabric *f = gfab(gpu);
	const struct dvx_hal_gpu_attr *a;
	struct sim_gpu_mem *m;
	struct sim_gpu *g;
	uint8_t *base = NULL;
	uint64_t len;
	int fd, err;

	pthread_mutex_lock(&f->lock);
	g = ctx_gpu(f, gpu);
	m = g ? mem_slot(f) : NULL;
	if (m)
		m->kind = SIM_GPU_MEM_ALLOC;	/* held while we map outside the lock */
	pthread_mutex_unlock(&f->lock);
	if (!g)
		return gfail(gpu, -EINVAL, "gpu_mem_create", "no context");
	if (!m)
		return gfail(gpu, -ENOMEM, "gpu_mem_create", "max_gpu_mems allocations exist");
	a = &g->cfg.attr;
	err = -EOPNOTSUPP;
	if (!(req->flags & DVX_HAL_GPU_MEM_LEGACY) && !a->vmm)
		goto fail_msg;
	if (((req->flags & DVX_HAL_GPU_MEM_RDMA) && !a->vmm_rdma) ||
	    ((req->flags & DVX_HAL_GPU_MEM_EXPORT) && !a->posix_fd) ||
	    ((req->flags & DVX_HAL_GPU_MEM_FABRIC) && !a->fabric))
		goto fail_msg;
	len = DVX_ALIGN_UP(req->len, (req->flags & DVX_HAL_GPU_MEM_LEGACY) ? 4096u :
					 a->granularity);
	fd = memfd_create("dvx-sim-gpu", MFD_CLOEXEC);
	err = fd < 0 ? -errno : 0;
	if (!err && ftruncate(fd, (off_t)len))
		err = -errno;
	if (!err)
		err = map_fd(fd, len, &base);
	if (err) {
		if (fd >= 0)
			close(fd);
		m->kind = SIM_GPU_MEM_FREE;
		return gfail(gpu, err == -ENOSPC ? -ENOMEM : err, "gpu_mem_create",
			     "no memory to stand in");
	}
	pthread_mutex_lock(&f->lock);
	m->gpu = (int8_t)gpu->handle;
	m->flags = req->flags;
	m->memfd = fd;
	m->base = base;
	m->len = len;
	pthread_mutex_unlock(&f->lock);
	memset(mem, 0, sizeof(*mem));
	mem->priv = m;
	mem->dptr = (uint64_t)(uintptr_t)base;
	mem->len = len;
	mem->handle = (uint64_t)(m - f->gpu_mems) + 1;
	mem->flags = req->flags;
	return 0;

fail_msg:
	m->kind = SIM_GPU_MEM_FREE;
	return gfail(gpu, err, "gpu_mem_create", "the GPU cannot make memory with these flags");
}

static int sim_gpu_mem_free(struct dvx_hal_gpu *gpu, struct dvx_hal_gpu_mem *mem)
{
	struct sim_fabric *f = gfab(gpu);
	struct sim_gpu_mem m, *e;
	uint32_t i;
	int busy = 0;

	if (mem->flags & DVX_HAL_GPU_MEM_FOREIGN)
		return gfail(gpu, -EINVAL, "gpu_mem_free",
			     "memory found by mem_lookup is not ours to free");
	pthread_mutex_lock(&f->lock);
	e = mem_around(f, mem->dptr, 1, 0);
	if (e && (uint64_t)(uintptr_t)e->base != mem->dptr)
		e = NULL;
	if (e) {
		/* a dma-buf of it still registered with a NIC: CUDA would keep the memory;
		 * the sim refuses, so a test learns of the order it got wrong */
		for (i = 0; i < f->cfg.max_dmabufs; i++) {
			struct sim_dmabuf *d = &f->dmabufs[i];

			if (d->fd && d->base >= e->base && d->base < e->base + e->len)
				busy = 1;
		}
		if (!busy) {
			m = *e;
			memset(e, 0, sizeof(*e));
		}
	}
	pthread_mutex_unlock(&f->lock);
	if (!e)
		return gfail(gpu, -EINVAL, "gpu_mem_free", "not device memory of this sim");
	if (busy)
		return gfail(gpu, -EBUSY, "gpu_mem_free", "a dma-buf of it is still open");
	munmap(m.base, (size_t)m.len);
	if (m.memfd >= 0)
		close(m.memfd);
	memset(mem, 0, sizeof(*mem));
	return 0;
}

/* what a FABRIC or IPC handle of the sim holds */
struct sim_handle {
	char magic[8];		/* "dvxsimg" */
	uint32_t type;
	int32_t pid;		/* the exporter */
	int32_t fd;		/* its memfd */
	uint32_t rsvd;
	uint64_t len;
	uint8_t uuid[16];	/* the exporting GPU */
};

static int sim_gpu_mem_export(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_mem *mem,
			      uint32_t type, struct dvx_hal_gpu_handle *h)
{
	struct sim_fabric *f = gfab(gpu);
	struct sim_gpu_mem *e;
	struct sim_handle sh;
	uint32_t need, flags = 0;
	int memfd = -1, gi = 0, fd;
	uint64_t len = 0;

	need = type == DVX_HAL_GPU_HANDLE_FD ? DVX_HAL_GPU_MEM_EXPORT :
	       type == DVX_HAL_GPU_HANDLE_FABRIC ? DVX_HAL_GPU_MEM_FABRIC :
						    DVX_HAL_GPU_MEM_LEGACY;
	pthread_mutex_lock(&f->lock);
	e = mem_around(f, mem->dptr, 1, 0);
	if (e && e->kind == SIM_GPU_MEM_ALLOC) {
		flags = e->flags;
		memfd = e->memfd;
		gi = e->gpu;
		len = e->len;
	}
	pthread_mutex_unlock(&f->lock);
	if (!e)
		return gfail(gpu, -EINVAL, "gpu_mem_export", "not device memory of this sim");
	if (memfd < 0)
		return gfail(gpu, -EINVAL, "gpu_mem_export", "imported memory cannot be exported");
	if (!(flags & need))
		return gfail(gpu, -EINVAL, "gpu_mem_export",
			     "memory was not created for that handle type");
	memset(h, 0, sizeof(*h));
	h->type = type;
	h->fd = -1;
	h->len = len;
	if (type == DVX_HAL_GPU_HANDLE_FD) {
		fd = fcntl(memfd, F_DUPFD_CLOEXEC, 0);
		if (fd < 0)
			return gfail(gpu, -errno, "gpu_mem_export", "no descriptor");
		h->fd = fd;
		return 0;
	}
	memset(&sh, 0, sizeof(sh));
	memcpy(sh.magic, "dvxsimg", 8);
	sh.type = type;
	sh.pid = (int32_t)getpid();
	sh.fd = memfd;
	sh.len = len;
	memcpy(sh.uuid, f->gpus[gi].cfg.attr.uuid, 16);
	DVX_STATIC_ASSERT(sizeof(sh) <= DVX_HAL_GPU_HANDLE_BYTES, "sim handle");
	memcpy(h->data, &sh, sizeof(sh));
	return 0;
}

static int sim_gpu_mem_import(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_handle *h,
			      struct dvx_hal_gpu_mem *mem)
{
	struct sim_fabric *f = gfab(gpu);
	struct sim_gpu_mem *m;
	struct sim_handle sh;
	struct sim_gpu *g;
	struct stat st;
	char path[64];
	uint8_t *base = NULL;
	uint32_t flags;
	int fd = h->fd, own = 0, err;

	pthread_mutex_lock(&f->lock);
	g = ctx_gpu(f, gpu);
	m = g ? mem_slot(f) : NULL;
	if (m)
		m->kind = SIM_GPU_MEM_IMPORT;
	pthread_mutex_unlock(&f->lock);
	if (!g)
		return gfail(gpu, -EINVAL, "gpu_mem_import", "no context");
	if (!m)
		return gfail(gpu, -ENOMEM, "gpu_mem_import", "max_gpu_mems allocations exist");
	flags = DVX_HAL_GPU_MEM_IMPORTED | DVX_HAL_GPU_MEM_EXPORT;
	if (h->type != DVX_HAL_GPU_HANDLE_FD) {
		memcpy(&sh, h->data, sizeof(sh));
		err = -EINVAL;
		if (memcmp(sh.magic, "dvxsimg", 8) || sh.type != h->type || sh.len != h->len)
			goto fail;
		err = -EOPNOTSUPP;
		if (h->type == DVX_HAL_GPU_HANDLE_FABRIC && !g->cfg.attr.fabric)
			goto fail;
		if (h->type == DVX_HAL_GPU_HANDLE_IPC && sh.pid == (int32_t)getpid()) {
			err = -EINVAL;	/* CUDA: not in the exporting process itself */
			goto fail;
		}
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)sh.pid, (int)sh.fd);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			err = -EINVAL;	/* gone, or not ours to open: an invalid handle */
			goto fail;
		}
		own = 1;
		flags = DVX_HAL_GPU_MEM_IMPORTED | (h->type == DVX_HAL_GPU_HANDLE_FABRIC ?
						    DVX_HAL_GPU_MEM_FABRIC : DVX_HAL_GPU_MEM_LEGACY);
	}
	err = -EINVAL;
	if (fstat(fd, &st) || (uint64_t)st.st_size < h->len)
		goto fail;
	err = map_fd(fd, h->len, &base);
	if (own)
		close(fd);
	own = 0;
	if (err)
		goto fail;
	pthread_mutex_lock(&f->lock);
	m->gpu = (int8_t)gpu->handle;
	m->flags = flags;
	m->memfd = -1;
	m->base = base;
	m->len = h->len;
	pthread_mutex_unlock(&f->lock);
	memset(mem, 0, sizeof(*mem));
	mem->priv = m;
	mem->dptr = (uint64_t)(uintptr_t)base;
	mem->len = h->len;
	mem->handle = (uint64_t)(m - f->gpu_mems) + 1;
	mem->flags = flags;
	return 0;

fail:
	if (own)
		close(fd);
	m->kind = SIM_GPU_MEM_FREE;
	return gfail(gpu, err, "gpu_mem_import", "not a handle this sim can map");
}

static int sim_gpu_mem_lookup(struct dvx_hal_gpu *gpu, uint64_t dptr, struct dvx_hal_gpu_mem *mem)
{
	struct sim_fabric *f = gfab(gpu);
	struct sim_gpu_mem *e;

	pthread_mutex_lock(&f->lock);
	e = mem_around(f, dptr, 1, 0);
	if (e) {
		memset(mem, 0, sizeof(*mem));
		mem->dptr = (uint64_t)(uintptr_t)e->base;
		mem->len = e->len;
		mem->flags = e->flags | DVX_HAL_GPU_MEM_FOREIGN;
		mem->ordinal = e->gpu;
	}
	pthread_mutex_unlock(&f->lock);
	return e ? 0 : -ENOENT;
}

static int sim_gpu_dmabuf_fd(struct dvx_hal_gpu *gpu, uint64_t dptr, uint64_t len, uint32_t flags,
			     int *fd)
{
	struct sim_fabric *f = gfab(gpu);
	struct sim_gpu *g;
	struct sim_gpu_mem *e = NULL;
	int err = 0;

	(void)flags;
	pthread_mutex_lock(&f->lock);
	g = the_gpu(f, gpu);
	if (g && g->cfg.attr.dmabuf && !((dptr | len) & 4095)) {
		e = mem_around(f, dptr, len, 0);
		if (e)
			err = dvx_sim_dmabuf_new(f, (uint8_t *)(uintptr_t)dptr, len, fd);
	}
	pthread_mutex_unlock(&f->lock);
	if (!g || !g->cfg.attr.dmabuf)
		return gfail(gpu, -EOPNOTSUPP, "gpu_dmabuf_fd", "dma-buf not supported");
	if (!e)
		return gfail(gpu, -EINVAL, "gpu_dmabuf_fd",
			     "range not page aligned or not inside device memory");
	return err ? gfail(gpu, -EMFILE, "gpu_dmabuf_fd", "max_dmabufs are open") : 0;
}

static int sim_gpu_host_register(struct dvx_hal_gpu *gpu, void *addr, uint64_t len, uint32_t flags,
				 uint64_t *dptr)
{
	struct sim_fabric *f = gfab(gpu);
	uint64_t a = (uint64_t)(uintptr_t)addr;
	struct sim_gpu_mem *m = NULL;
	struct sim_gpu *g;
	uint32_t i;
	int err = 0;

	pthread_mutex_lock(&f->lock);
	g = ctx_gpu(f, gpu);
	for (i = 0; g && i < f->cfg.max_gpu_mems; i++) {
		struct sim_gpu_mem *e = &f->gpu_mems[i];
		uint64_t b = (uint64_t)(uintptr_t)e->base;

		if (e->kind == SIM_GPU_MEM_HOSTREG && a < b + e->len && b < a + len)
			err = -EEXIST;
	}
	if (g && !err) {
		m = mem_slot(f);
		if (m) {
			m->kind = SIM_GPU_MEM_HOSTREG;
			m->gpu = (int8_t)gpu->handle;
			m->flags = flags;
			m->memfd = -1;
			m->base = addr;
			m->len = len;
		}
	}
	pthread_mutex_unlock(&f->lock);
	if (!g)
		return gfail(gpu, -EINVAL, "gpu_host_register", "no context");
	if (err)
		return gfail(gpu, err, "gpu_host_register", "range already registered");
	if (!m)
		return gfail(gpu, -ENOMEM, "gpu_host_register", "max_gpu_mems entries exist");
	*dptr = a;	/* unified addressing: the device sees the host address */
	return 0;
}

static int sim_gpu_host_unregister(struct dvx_hal_gpu *gpu, void *addr)
{
	struct sim_fabric *f = gfab(gpu);
	uint32_t i;
	int found = 0;

	pthread_mutex_lock(&f->lock);
	for (i = 0; i < f->cfg.max_gpu_mems && !found; i++) {
		struct sim_gpu_mem *e = &f->gpu_mems[i];

		if (e->kind == SIM_GPU_MEM_HOSTREG && e->base == addr) {
			memset(e, 0, sizeof(*e));
			found = 1;
		}
	}
	pthread_mutex_unlock(&f->lock);
	return found ? 0 : gfail(gpu, -ENOENT, "gpu_host_unregister", "not registered");
}

/* ---- streams and copies ---------------------------------------------------------- */

static int stream_ok(struct sim_fabric *f, const void *stream)
{
	const uint8_t *p = stream;

	return !p || (p >= f->gpu_streams && p < f->gpu_streams + SIM_GPU_STREAMS && *p);
}

static int sim_gpu_stream_create(struct dvx_hal_gpu *gpu, void **stream)
{
	struct sim_fabric *f = gfab(gpu);
	uint32_t i;

	pthread_mutex_lock(&f->lock);
	for (i = 0; i < SIM_GPU_STREAMS; i++)
		if (!f->gpu_streams[i]) {
			f->gpu_streams[i] = 1;
			*stream = &f->gpu_streams[i];
			break;
		}
	pthread_mutex_unlock(&f->lock);
	return i < SIM_GPU_STREAMS ? 0 : gfail(gpu, -ENOMEM, "gpu_stream_create", "no streams left");
}

static int sim_gpu_stream_destroy(struct dvx_hal_gpu *gpu, void *stream)
{
	struct sim_fabric *f = gfab(gpu);
	int ok;

	pthread_mutex_lock(&f->lock);
	ok = stream_ok(f, stream);
	if (ok)
		*(uint8_t *)stream = 0;
	pthread_mutex_unlock(&f->lock);
	return ok ? 0 : gfail(gpu, -EBADF, "gpu_stream_destroy", "not a live stream");
}

static int sim_gpu_stream_query(struct dvx_hal_gpu *gpu, void *stream)
{
	/* work completes when it is queued */
	return stream_ok(gfab(gpu), stream) ? 0 :
		gfail(gpu, -EBADF, "gpu_stream_query", "not a live stream");
}

static int sim_gpu_memcpy_htod(struct dvx_hal_gpu *gpu, uint64_t dptr, const void *src,
			       uint64_t len)
{
	struct sim_fabric *f = gfab(gpu);
	int ok;

	pthread_mutex_lock(&f->lock);
	ok = mem_around(f, dptr, len, 1) != NULL;
	pthread_mutex_unlock(&f->lock);
	if (!ok)
		return gfail(gpu, -EINVAL, "gpu_memcpy_htod", "range not inside device memory");
	memcpy((void *)(uintptr_t)dptr, src, len);
	return 0;
}

static int sim_gpu_memcpy_dtoh(struct dvx_hal_gpu *gpu, void *dst, uint64_t dptr, uint64_t len)
{
	struct sim_fabric *f = gfab(gpu);
	int ok;

	pthread_mutex_lock(&f->lock);
	ok = mem_around(f, dptr, len, 1) != NULL;
	pthread_mutex_unlock(&f->lock);
	if (!ok)
		return gfail(gpu, -EINVAL, "gpu_memcpy_dtoh", "range not inside device memory");
	memcpy(dst, (const void *)(uintptr_t)dptr, len);
	return 0;
}

static int sim_gpu_memcpy_async(struct dvx_hal_gpu *gpu, uint64_t dst, uint64_t src, uint64_t len,
				void *stream)
{
	if (!stream_ok(gfab(gpu), stream))
		return gfail(gpu, -EBADF, "gpu_memcpy_async", "not a live stream");
	memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, len);
	return 0;
}

static int sim_gpu_stream_atomic(struct dvx_hal_gpu *gpu, void *stream, uint64_t dptr, uint32_t op,
				 uint64_t value)
{
	uint64_t *w = (uint64_t *)(uintptr_t)dptr;

	if (!stream_ok(gfab(gpu), stream))
		return gfail(gpu, -EBADF, "gpu_stream_atomic", "not a live stream");
	if (op == DVX_HAL_GPU_ATOMIC_SET)
		__atomic_store_n(w, value, __ATOMIC_RELEASE);
	else
		__atomic_fetch_add(w, value, __ATOMIC_RELEASE);
	return 0;
}

/* ---- device memory behind DMA callbacks (a real GPU's) ------------------------------ */

int dvx_sim_dmabuf_export_dma(struct dvx_sim_fabric *fab, uint64_t dptr, uint64_t len,
			      const struct dvx_sim_dma *dma, int *fd)
{
	struct sim_fabric *f = sim_fab_of(fab);
	int rc;

	if (!fab || !dptr || (dptr & 4095) || !len || dptr + len < dptr || !dma || !dma->read ||
	    !dma->write || !fd)
		return -EINVAL;
	pthread_mutex_lock(&f->lock);
	rc = dvx_sim_dmabuf_new(f, NULL, len, fd);
	if (!rc) {
		struct sim_dmabuf *d = dvx_sim_dmabuf_find(f, *fd);

		d->dma = dma;
		d->dptr = dptr;
	}
	pthread_mutex_unlock(&f->lock);
	return rc;
}

int dvx_sim_dma_pull(struct sim_fabric *fab, const struct sim_umem *u, const void *p,
		     uint64_t len)
{
	uint64_t off = (uint64_t)((const uint8_t *)p - u->base);

	fab->dma_reads++;
	if (off > u->len || len > u->len - off ||
	    u->dma->read(u->dma->arg, (void *)(uintptr_t)p, u->dptr + off, len)) {
		fab->dma_errors++;
		return -EIO;
	}
	return 0;
}

int dvx_sim_dma_push(struct sim_fabric *fab, const struct sim_umem *u, const void *p,
		     uint64_t len)
{
	uint64_t off = (uint64_t)((const uint8_t *)p - u->base);

	fab->dma_writes++;
	if (off > u->len || len > u->len - off ||
	    u->dma->write(u->dma->arg, u->dptr + off, p, len)) {
		fab->dma_errors++;
		return -EIO;
	}
	return 0;
}

void dvx_sim_gpu_release_all(struct sim_fabric *f)
{
	uint32_t i, j;

	/* umems over device memory still registered: their DMA copies go with them */
	for (i = 0; i < f->nnics; i++)
		for (j = 0; j < f->cfg.max_umems; j++) {
			struct sim_umem *u = &f->nics[i].umems[j];

			if (u->id && u->dma) {
				free(u->base);
				u->base = NULL;
				u->dma = NULL;
			}
		}

	for (i = 0; i < f->cfg.max_gpu_mems; i++) {
		struct sim_gpu_mem *e = &f->gpu_mems[i];

		if (e->kind == SIM_GPU_MEM_ALLOC || e->kind == SIM_GPU_MEM_IMPORT)
			munmap(e->base, (size_t)e->len);
		if (e->kind == SIM_GPU_MEM_ALLOC && e->memfd >= 0)
			close(e->memfd);
		memset(e, 0, sizeof(*e));
	}
}

const struct dvx_hal_gpu_ops dvx_sim_gpu_ops = {
	.gpu_init = sim_gpu_init,
	.gpu_count = sim_gpu_count,
	.gpu_get = sim_gpu_get,
	.gpu_query = sim_gpu_query,
	.gpu_ctx_retain = sim_gpu_ctx_retain,
	.gpu_ctx_release = sim_gpu_ctx_release,
	.gpu_ctx_set_current = sim_gpu_ctx_set_current,
	.gpu_mem_create = sim_gpu_mem_create,
	.gpu_mem_free = sim_gpu_mem_free,
	.gpu_mem_export = sim_gpu_mem_export,
	.gpu_mem_import = sim_gpu_mem_import,
	.gpu_mem_lookup = sim_gpu_mem_lookup,
	.gpu_peer_access = sim_gpu_peer_access,
	.gpu_dmabuf_fd = sim_gpu_dmabuf_fd,
	.gpu_host_register = sim_gpu_host_register,
	.gpu_host_unregister = sim_gpu_host_unregister,
	/* no device code runs here: module_load, module_unload, module_function, launch */
	.gpu_stream_create = sim_gpu_stream_create,
	.gpu_stream_destroy = sim_gpu_stream_destroy,
	.gpu_stream_query = sim_gpu_stream_query,
	.gpu_memcpy_htod = sim_gpu_memcpy_htod,
	.gpu_memcpy_dtoh = sim_gpu_memcpy_dtoh,
	.gpu_memcpy_async = sim_gpu_memcpy_async,
	.gpu_stream_atomic = sim_gpu_stream_atomic,
};
