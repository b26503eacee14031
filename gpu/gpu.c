// SPDX-License-Identifier: MIT
/*
 * gpu/gpu.c - the GPU host side over the hal's gpu_* entries (see dvx/gpu/gpu.h).
 */
#include <errno.h>
#include <string.h>

#include <dvx/gpu/gpu.h>
#include <dvx/gpu/queue.h>

#include "devlib.h"

static int gpu_err(struct dvx_gpu *gpu, int err, enum dvx_diag_src src, const char *op,
		   const char *what)
{
	return dvx_hal_diag_set(&gpu->hg.diag, err, src, op, "%s", what);
}

int dvx_gpu_count(const struct dvx_hal *hal, unsigned *count)
{
	struct dvx_hal_gpu hg;
	int n = 0, err;

	if (!hal || !count)
		return -EINVAL;
	*count = 0;
	memset(&hg, 0, sizeof(hg));
	err = dvx_hal_gpu_init(hal, &hg);
	if (err == -ENODEV || err == -ENOSYS)
		return 0;	/* no driver, or a backend without GPUs: none */
	if (err)
		return err;
	err = dvx_hal_gpu_count(&hg, &n);
	if (err)
		return err == -ENODEV ? 0 : err;
	*count = n > 0 ? (unsigned)n : 0;
	return 0;
}

int dvx_gpu_open(struct dvx_gpu *gpu, const struct dvx_hal *hal, int ordinal, const char *pci)
{
	struct dvx_hal_limits lim;
	struct dvx_log log;
	int n = 0, err;

	if (!gpu)
		return -EINVAL;
	if (gpu->open == DVX_LIVE)
		return -EBUSY;	/* open: close it first (nothing is touched) */
	log = gpu->hg.log;
	memset(gpu, 0, sizeof(*gpu));
	gpu->hg.log = log;
	if (!hal || (ordinal < 0 && (!pci || !*pci)))
		return gpu_err(gpu, -EINVAL, DVX_DIAG_ARG, "gpu_open",
			       "no backend, or neither an ordinal nor a PCI address");
	err = dvx_hal_gpu_init(hal, &gpu->hg);
	if (err)
		return err;
	err = dvx_hal_gpu_count(&gpu->hg, &n);
	if (err)
		return err;
	if (n <= 0)
		return gpu_err(gpu, -ENODEV, DVX_DIAG_STATE, "gpu_open", "the driver sees no GPU");
	err = dvx_hal_gpu_get(&gpu->hg, pci && *pci ? -1 : ordinal, pci);
	if (err)
		return err;
	err = dvx_hal_gpu_query(&gpu->hg, &gpu->attr);
	if (err)
		return err;
	err = dvx_hal_gpu_ctx_retain(&gpu->hg);
	if (err)
		return err;
	err = dvx_hal_gpu_ctx_set_current(&gpu->hg);
	if (err)
		goto err_release;
	err = dvx_hal_limits(hal, &lim);
	gpu->page_size = !err && lim.page_size ? lim.page_size : 4096;
	gpu->open = DVX_LIVE;
	dvx_hal_log(&gpu->hg.log, DVX_LOG_INFO, "gpu %d %s (%s) sm_%d%d, %u SMs: opened",
		    gpu->attr.ordinal, gpu->attr.name, gpu->attr.pci, gpu->attr.cc_major,
		    gpu->attr.cc_minor, gpu->attr.sm_count);
	return 0;

err_release:
	{
		struct dvx_diag keep = gpu->hg.diag;

		dvx_hal_gpu_ctx_release(&gpu->hg);
		gpu->hg.diag = keep;	/* report the first failure, not the unwinding */
	}
	return err;
}

int dvx_gpu_close(struct dvx_gpu *gpu)
{
	int err;

	if (!gpu || !gpu->open)
		return -EINVAL;
	err = dvx_hal_gpu_ctx_release(&gpu->hg);
	if (err)
		return err;
	gpu->open = 0;
	return 0;
}

int dvx_gpu_make_current(struct dvx_gpu *gpu)
{
	if (!gpu || !gpu->open)
		return -EINVAL;
	return dvx_hal_gpu_ctx_set_current(&gpu->hg);
}

#define NEED_OPEN(gpu, op)                                                          \
	do {                                                                        \
		if (!(gpu) || !(gpu)->open)                                         \
			return -EINVAL;                                             \
	} while (0)

int dvx_gpu_mem_alloc(struct dvx_gpu *gpu, uint64_t len, uint32_t flags, struct dvx_gpu_mem *mem)
{
	struct dvx_hal_gpu_mem_req req;
	int err;

	NEED_OPEN(gpu, "gpu_mem_alloc");
	if (!mem || !len || (flags & ~(uint32_t)(DVX_GPU_MEM_RDMA | DVX_GPU_MEM_EXPORT |
						 DVX_GPU_MEM_FABRIC | DVX_GPU_MEM_LEGACY)) ||
	    ((flags & DVX_GPU_MEM_LEGACY) && flags != DVX_GPU_MEM_LEGACY))
		return gpu_err(gpu, -EINVAL, DVX_DIAG_ARG, "gpu_mem_alloc",
			       "no length, no mem, unknown flags or LEGACY with others");
	if (!gpu->attr.vmm && !(flags & DVX_GPU_MEM_LEGACY))
		return gpu_err(gpu, -EOPNOTSUPP, DVX_DIAG_ARG, "gpu_mem_alloc",
			       "the GPU has no virtual memory management (cuMemCreate)");
	if ((flags & DVX_GPU_MEM_RDMA) && !gpu->attr.vmm_rdma)
		return gpu_err(gpu, -EOPNOTSUPP, DVX_DIAG_ARG, "gpu_mem_alloc",
			       "the GPU cannot create GPUDirect RDMA capable VMM memory");
	if ((flags & DVX_GPU_MEM_EXPORT) && !gpu->attr.posix_fd)
		return gpu_err(gpu, -EOPNOTSUPP, DVX_DIAG_ARG, "gpu_mem_alloc",
			       "the GPU cannot export POSIX fd handles");
	if ((flags & DVX_GPU_MEM_FABRIC) && !gpu->attr.fabric)
		return gpu_err(gpu, -EOPNOTSUPP, DVX_DIAG_ARG, "gpu_mem_alloc",
			       "the GPU cannot export fabric handles");
	memset(mem, 0, sizeof(*mem));
	memset(&req, 0, sizeof(req));
	req.len = len;
	req.flags = (flags & DVX_GPU_MEM_RDMA ? DVX_HAL_GPU_MEM_RDMA : 0) |
		    (flags & DVX_GPU_MEM_EXPORT ? DVX_HAL_GPU_MEM_EXPORT : 0) |
		    (flags & DVX_GPU_MEM_FABRIC ? DVX_HAL_GPU_MEM_FABRIC : 0) |
		    (flags & DVX_GPU_MEM_LEGACY ? DVX_HAL_GPU_MEM_LEGACY : 0);
	err = dvx_hal_gpu_mem_alloc(&gpu->hg, &req, &mem->hm);
	if (err)
		return err;
	mem->gpu = gpu;
	mem->dptr = mem->hm.dptr;
	mem->len = mem->hm.len;
	return 0;
}

int dvx_gpu_mem_free(struct dvx_gpu_mem *mem)
{
	int err;

	if (!mem || !mem->gpu || !mem->dptr)
		return -EINVAL;
	err = dvx_hal_gpu_mem_free(&mem->gpu->hg, &mem->hm);
	if (err)
		return err;
	mem->dptr = 0;
	mem->len = 0;
	return 0;
}

int dvx_gpu_mem_export_fd(struct dvx_gpu_mem *mem, int *fd)
{
	struct dvx_hal_gpu_handle h;
	int err;

	if (!mem || !mem->gpu || !mem->dptr || !fd)
		return -EINVAL;
	err = dvx_hal_gpu_mem_export(&mem->gpu->hg, &mem->hm, DVX_HAL_GPU_HANDLE_FD, &h);
	if (!err)
		*fd = h.fd;
	return err;
}

int dvx_gpu_mem_export(struct dvx_gpu_mem *mem, uint32_t type, struct dvx_hal_gpu_handle *h)
{
	if (!mem || !mem->gpu || !mem->dptr || !h)
		return -EINVAL;
	return dvx_hal_gpu_mem_export(&mem->gpu->hg, &mem->hm, type, h);
}

/* @mem's view of the hal record it was just given (err 0), or cleared */
static int mem_took(struct dvx_gpu *gpu, struct dvx_gpu_mem *mem, int err)
{
	if (err) {
		memset(mem, 0, sizeof(*mem));
		return err;
	}
	mem->gpu = gpu;
	mem->dptr = mem->hm.dptr;
	mem->len = mem->hm.len;
	return 0;
}

int dvx_gpu_mem_import(struct dvx_gpu *gpu, const struct dvx_hal_gpu_handle *h,
		       struct dvx_gpu_mem *mem)
{
	NEED_OPEN(gpu, "gpu_mem_import");
	if (!h || !mem)
		return gpu_err(gpu, -EINVAL, DVX_DIAG_ARG, "gpu_mem_import", "h or mem is NULL");
	memset(mem, 0, sizeof(*mem));
	return mem_took(gpu, mem, dvx_hal_gpu_mem_import(&gpu->hg, h, &mem->hm));
}

int dvx_gpu_mem_lookup(struct dvx_gpu *gpu, uint64_t dptr, struct dvx_gpu_mem *mem)
{
	NEED_OPEN(gpu, "gpu_mem_lookup");
	if (!mem || !dptr)
		return gpu_err(gpu, -EINVAL, DVX_DIAG_ARG, "gpu_mem_lookup", "no address or mem");
	memset(mem, 0, sizeof(*mem));
	return mem_took(gpu, mem, dvx_hal_gpu_mem_lookup(&gpu->hg, dptr, &mem->hm));
}

int dvx_gpu_mem_dmabuf_fd(struct dvx_gpu_mem *mem, uint64_t offset, uint64_t len, uint32_t flags,
			  int *fd)
{
	struct dvx_gpu *gpu;
	uint64_t pg;

	if (!mem || !mem->gpu || !mem->dptr || !fd)
		return -EINVAL;
	gpu = mem->gpu;
	pg = gpu->page_size;
	if (!len)
		len = offset < mem->len ? mem->len - offset : 0;
	if (!len || (offset & (pg - 1)) || (len & (pg - 1)) || offset > mem->len ||
	    len > mem->len - offset || (flags & ~(uint32_t)DVX_HAL_GPU_DMABUF_PCIE))
		return gpu_err(gpu, -EINVAL, DVX_DIAG_ARG, "gpu_mem_dmabuf_fd",
			       "range not page aligned or outside the memory, or bad flags");
	if (!gpu->attr.dmabuf)
		return gpu_err(gpu, -EOPNOTSUPP, DVX_DIAG_ARG, "gpu_mem_dmabuf_fd",
			       "the GPU or its driver has no dma-buf support");
	return dvx_hal_gpu_dmabuf_fd(&gpu->hg, mem->dptr + offset, len, flags, fd);
}

int dvx_gpu_host_register(struct dvx_gpu *gpu, void *addr, uint64_t len, uint32_t flags,
			  struct dvx_gpu_hostreg *reg)
{
	uintptr_t a, b, e;
	uint64_t d;
	int err;

	NEED_OPEN(gpu, "gpu_host_register");
	if (!addr || !len || !reg || (flags & ~(uint32_t)DVX_GPU_HOST_IOMEM))
		return gpu_err(gpu, -EINVAL, DVX_DIAG_ARG, "gpu_host_register",
			       "no range, no reg, or unknown flags");
	if (!gpu->attr.can_map_host || !gpu->attr.host_register)
		return gpu_err(gpu, -EOPNOTSUPP, DVX_DIAG_ARG, "gpu_host_register",
			       "the GPU cannot map registered host memory");
	a = (uintptr_t)addr;
	b = a & ~(uintptr_t)(gpu->page_size - 1);
	e = (uintptr_t)DVX_ALIGN_UP((uint64_t)(a + len), gpu->page_size);
	err = dvx_hal_gpu_host_register(&gpu->hg, (void *)b, e - b,
					flags & DVX_GPU_HOST_IOMEM ? DVX_HAL_GPU_HOST_IOMEM : 0, &d);
	if (err)
		return err;
	memset(reg, 0, sizeof(*reg));
	reg->gpu = gpu;
	reg->addr = addr;
	reg->len = len;
	reg->base = (void *)b;
	reg->base_len = e - b;
	reg->dptr = d + (a - b);
	reg->flags = flags;
	return 0;
}

int dvx_gpu_host_unregister(struct dvx_gpu_hostreg *reg)
{
	int err;

	if (!reg || !reg->gpu || !reg->base)
		return -EINVAL;
	err = dvx_hal_gpu_host_unregister(&reg->gpu->hg, reg->base);
	if (err)
		return err;
	reg->base = NULL;
	reg->dptr = 0;
	return 0;
}

int dvx_gpu_stream_create(struct dvx_gpu *gpu, struct dvx_gpu_stream *s)
{
	void *h = NULL;
	int err;

	NEED_OPEN(gpu, "gpu_stream_create");
	if (!s)
		return -EINVAL;
	err = dvx_hal_gpu_stream_create(&gpu->hg, &h);
	if (err)
		return err;
	s->gpu = gpu;
	s->handle = h;
	return 0;
}

int dvx_gpu_stream_destroy(struct dvx_gpu_stream *s)
{
	int err;

	if (!s || !s->gpu || !s->handle)
		return -EINVAL;
	err = dvx_hal_gpu_stream_destroy(&s->gpu->hg, s->handle);
	if (err)
		return err;
	s->handle = NULL;
	return 0;
}

int dvx_gpu_stream_wait(struct dvx_gpu_stream *s, uint64_t timeout_ns)
{
	const struct dvx_hal *hal;
	uint64_t deadline;
	int err;

	if (!s || !s->gpu || !s->handle)
		return -EINVAL;
	hal = s->gpu->hg.hal;
	deadline = dvx_hal_now_ns(hal) + timeout_ns;
	for (;;) {
		err = dvx_hal_gpu_stream_query(&s->gpu->hg, s->handle);
		if (err != -EBUSY)
			return err;
		if (dvx_hal_now_ns(hal) >= deadline)
			return dvx_hal_diag_set(&s->gpu->hg.diag, -ETIMEDOUT, DVX_DIAG_STATE,
						"gpu_stream_wait", "the stream is still running");
	}
}

int dvx_gpu_module_load(struct dvx_gpu *gpu, const void *image, uint64_t len,
			struct dvx_gpu_module *mod)
{
	int err;

	NEED_OPEN(gpu, "gpu_module_load");
	if (!image || !mod)
		return -EINVAL;
	if (!len)
		return gpu_err(gpu, -ENOSYS, DVX_DIAG_ARG, "gpu_module_load",
			       "no device code: built without nvcc (CONFIG_DVX_GPU=n)");
	mod->hm.priv = NULL;
	err = dvx_hal_gpu_module_load(&gpu->hg, image, &mod->hm);
	if (err)
		return err;
	mod->gpu = gpu;
	return 0;
}

int dvx_gpu_module_unload(struct dvx_gpu_module *mod)
{
	if (!mod || !mod->gpu || !mod->hm.priv)
		return -EINVAL;
	return dvx_hal_gpu_module_unload(&mod->gpu->hg, &mod->hm);
}

int dvx_gpu_module_function(struct dvx_gpu_module *mod, const char *name, void **func)
{
	if (!mod || !mod->gpu || !mod->hm.priv)
		return -EINVAL;
	return dvx_hal_gpu_module_function(&mod->gpu->hg, &mod->hm, name, func);
}

int dvx_gpu_launch(struct dvx_gpu *gpu, void *func, uint32_t grid, uint32_t block, uint32_t shmem,
		   struct dvx_gpu_stream *s, void **args)
{
	struct dvx_hal_gpu_launch l;

	NEED_OPEN(gpu, "gpu_launch");
	memset(&l, 0, sizeof(l));
	l.func = func;
	l.grid[0] = grid;
	l.grid[1] = l.grid[2] = 1;
	l.block[0] = block;
	l.block[1] = l.block[2] = 1;
	l.shmem = shmem;
	l.stream = s ? s->handle : NULL;
	l.args = args;
	return dvx_hal_gpu_launch(&gpu->hg, &l);
}

int dvx_gpu_memcpy_htod(struct dvx_gpu *gpu, uint64_t dptr, const void *src, uint64_t len)
{
	NEED_OPEN(gpu, "gpu_memcpy_htod");
	return dvx_hal_gpu_memcpy_htod(&gpu->hg, dptr, src, len);
}

int dvx_gpu_memcpy_dtoh(struct dvx_gpu *gpu, void *dst, uint64_t dptr, uint64_t len)
{
	NEED_OPEN(gpu, "gpu_memcpy_dtoh");
	return dvx_hal_gpu_memcpy_dtoh(&gpu->hg, dst, dptr, len);
}

/* ---- the library's own device code ---- */

int dvx_gpu_lib_load(struct dvx_gpu *gpu, struct dvx_gpu_lib *lib)
{
	int err;

	NEED_OPEN(gpu, "gpu_lib_load");
	if (!lib)
		return -EINVAL;
	memset(lib, 0, sizeof(*lib));
	err = dvx_gpu_module_load(gpu, dvx_fatbin_gpu_devlib, dvx_fatbin_gpu_devlib_len, &lib->mod);
	if (err)
		return err;
	err = dvx_gpu_module_function(&lib->mod, DVX_DEVLIB_K_CQ_INIT, &lib->k_cq_init);
	if (!err)
		err = dvx_gpu_module_function(&lib->mod, DVX_DEVLIB_K_SQ_CTRS_INIT,
					      &lib->k_sq_ctrs_init);
	if (!err)
		err = dvx_gpu_module_function(&lib->mod, DVX_DEVLIB_K_POST_NOP, &lib->k_post_nop);
	if (err)
		goto err_unload;
	return 0;

err_unload:
	{
		struct dvx_diag keep = gpu->hg.diag;

		dvx_gpu_module_unload(&lib->mod);
		gpu->hg.diag = keep;
	}
	return err;
}

int dvx_gpu_lib_unload(struct dvx_gpu_lib *lib)
{
	if (!lib)
		return -EINVAL;
	return dvx_gpu_module_unload(&lib->mod);
}

int dvx_gpu_lib_post_nop(struct dvx_gpu_lib *lib, struct dvx_gpu_stream *s, const void *sq,
			 const struct dvx_gpu_nop_cfg *cfg)
{
	struct dvx_gpu_sq v;
	uint32_t sc = cfg ? (uint32_t)cfg->scope : ~0u;
	uint32_t grid = cfg ? cfg->grid : 0, block = cfg ? cfg->block : 0;
	uint32_t per_thread = cfg ? cfg->per_thread : 0;
	uint64_t timeout_ns = cfg ? cfg->timeout_ns : 0, status_dptr = cfg ? cfg->status_dptr : 0;
	void *args[] = { &v, &sc, &per_thread, &timeout_ns, &status_dptr };

	if (!lib || !lib->mod.gpu || !lib->k_post_nop || !sq || !status_dptr ||
	    sc > DVX_GPU_SCOPE_BLOCK || (sc == DVX_GPU_SCOPE_WARP && (block & 31)))
		return -EINVAL;
	memcpy(&v, sq, sizeof(v));
	if (v.version != DVX_GPU_SQ_VERSION)
		return -EINVAL;
	return dvx_gpu_launch(lib->mod.gpu, lib->k_post_nop, grid, block, 0, s, args);
}

int dvx_gpu_lib_cq_init(struct dvx_gpu_lib *lib, struct dvx_gpu_stream *s, uint64_t buf_dptr,
			uint32_t log_size)
{
	void *args[] = { &buf_dptr, &log_size };
	uint32_t n = 1u << log_size;

	if (!lib || !lib->mod.gpu || !lib->k_cq_init || !buf_dptr || log_size > 24)
		return -EINVAL;
	return dvx_gpu_launch(lib->mod.gpu, lib->k_cq_init, (n + 255) / 256, 256, 0, s, args);
}

int dvx_gpu_lib_sq_ctrs_init(struct dvx_gpu_lib *lib, struct dvx_gpu_stream *s,
			     uint64_t ctrs_dptr)
{
	void *args[] = { &ctrs_dptr };

	if (!lib || !lib->mod.gpu || !lib->k_sq_ctrs_init || !ctrs_dptr || (ctrs_dptr & 63))
		return -EINVAL;
	return dvx_gpu_launch(lib->mod.gpu, lib->k_sq_ctrs_init, 1,
			      DVX_MLX5_SQ_CTRS_BYTES / 8, 0, s, args);
}
