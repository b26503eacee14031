// SPDX-License-Identifier: MIT
/*
 * hal/gpu.c - the GPU wrappers (dvx/hal/gpu.h): the CUDA driver API behind the hal.
 *
 * Each wrapper checks its arguments, answers -ENOSYS for a table or an entry the
 * backend does not provide, and leaves gpu->diag naming a failed operation (with the
 * CUresult and its name when the driver failed).
 */
#include <errno.h>
#include <string.h>

#include <dvx/hal/gpu.h>


#define GPU_OPS(gpu) ((gpu) && (gpu)->hal ? (gpu)->hal->gpu : NULL)

static int gpu_failed(struct dvx_hal_gpu *gpu, int err, const char *op)
{
	if (err >= 0)
		err = -EIO;
	if (gpu->diag.err == 0)
		dvx_hal_diag_set(&gpu->diag, err, DVX_DIAG_OS, op, NULL);
	else
		gpu->diag.err = err;
	return err;
}

static int gpu_nosys(struct dvx_hal_gpu *gpu, const char *op)
{
	return dvx_hal_diag_set(&gpu->diag, -ENOSYS, DVX_DIAG_ARG, op,
				"the %s backend does not provide this call",
				gpu->hal->name ? gpu->hal->name : "?");
}

static int gpu_badarg(struct dvx_hal_gpu *gpu, const char *op, const char *what)
{
	if (gpu)
		dvx_hal_diag_set(&gpu->diag, -EINVAL, DVX_DIAG_ARG, op, "%s", what);
	return -EINVAL;
}

/* Call gpu->hal->ops->NAME(args) with the usual checks. */
#define GPU_CALL(gpu, name, ...)                                                   \
	do {                                                                       \
		const struct dvx_hal_gpu_ops *ops_ = GPU_OPS(gpu);                     \
		int err_;                                                          \
		if (!(gpu) || !(gpu)->hal)                                         \
			return -EINVAL;                                            \
		if (!ops_ || !ops_->name)                                          \
			return gpu_nosys(gpu, #name);                              \
		(gpu)->diag.err = 0;                                               \
		err_ = ops_->name(__VA_ARGS__);                                    \
		return err_ ? gpu_failed(gpu, err_, #name) : 0;                    \
	} while (0)

int dvx_hal_gpu_init(const struct dvx_hal *hal, struct dvx_hal_gpu *gpu)
{
	struct dvx_log log;

	if (!hal || !gpu)
		return -EINVAL;
	log = gpu->log;		/* the caller may set the log sink first */
	memset(gpu, 0, sizeof(*gpu));
	gpu->log = log;
	gpu->hal = hal;
	gpu->ordinal = -1;
	gpu->handle = -1;
	GPU_CALL(gpu, gpu_init, gpu);
}

int dvx_hal_gpu_count(struct dvx_hal_gpu *gpu, int *count)
{
	if (!count)
		return gpu_badarg(gpu, "gpu_count", "count is NULL");
	GPU_CALL(gpu, gpu_count, gpu, count);
}

int dvx_hal_gpu_get(struct dvx_hal_gpu *gpu, int ordinal, const char *pci)
{
	if (ordinal < 0 && (!pci || !*pci))
		return gpu_badarg(gpu, "gpu_get", "neither an ordinal nor a PCI address");
	GPU_CALL(gpu, gpu_get, gpu, ordinal, pci);
}

int dvx_hal_gpu_query(struct dvx_hal_gpu *gpu, struct dvx_hal_gpu_attr *attr)
{
	if (!attr || (gpu && gpu->handle < 0))
		return gpu_badarg(gpu, "gpu_query", "attr is NULL or no device chosen (gpu_get)");
	GPU_CALL(gpu, gpu_query, gpu, attr);
}

int dvx_hal_gpu_ctx_retain(struct dvx_hal_gpu *gpu)
{
	if (gpu && (gpu->handle < 0 || gpu->ctx_retained))
		return gpu_badarg(gpu, "gpu_ctx_retain", "no device chosen, or already retained");
	GPU_CALL(gpu, gpu_ctx_retain, gpu);
}

int dvx_hal_gpu_ctx_release(struct dvx_hal_gpu *gpu)
{
	if (gpu && !gpu->ctx_retained)
		return gpu_badarg(gpu, "gpu_ctx_release", "no context retained");
	GPU_CALL(gpu, gpu_ctx_release, gpu);
}

int dvx_hal_gpu_ctx_set_current(struct dvx_hal_gpu *gpu)
{
	if (gpu && !gpu->ctx_retained)
		return gpu_badarg(gpu, "gpu_ctx_set_current", "no context retained");
	GPU_CALL(gpu, gpu_ctx_set_current, gpu);
}

int dvx_hal_gpu_mem_alloc(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_mem_req *req,
			   struct dvx_hal_gpu_mem *mem)
{
	if (!req || !mem || !req->len)
		return gpu_badarg(gpu, "gpu_mem_create", "no length or no handle");
	if ((req->flags & DVX_HAL_GPU_MEM_LEGACY) &&
	    (req->flags & (DVX_HAL_GPU_MEM_RDMA | DVX_HAL_GPU_MEM_EXPORT | DVX_HAL_GPU_MEM_FABRIC)))
		return gpu_badarg(gpu, "gpu_mem_create",
				  "LEGACY memory has no VMM properties (RDMA, EXPORT, FABRIC)");
	if (req->flags & ~(uint32_t)(DVX_HAL_GPU_MEM_RDMA | DVX_HAL_GPU_MEM_EXPORT |
				     DVX_HAL_GPU_MEM_FABRIC | DVX_HAL_GPU_MEM_LEGACY))
		return gpu_badarg(gpu, "gpu_mem_create", "unknown flags");
	GPU_CALL(gpu, gpu_mem_create, gpu, req, mem);
}

int dvx_hal_gpu_mem_free(struct dvx_hal_gpu *gpu, struct dvx_hal_gpu_mem *mem)
{
	if (!mem || !mem->dptr)
		return gpu_badarg(gpu, "gpu_mem_free", "mem is NULL or not created");
	GPU_CALL(gpu, gpu_mem_free, gpu, mem);
}

int dvx_hal_gpu_mem_export(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_mem *mem,
			   uint32_t type, struct dvx_hal_gpu_handle *h)
{
	if (!mem || !mem->dptr || !h)
		return gpu_badarg(gpu, "gpu_mem_export", "mem or h is NULL");
	if (type < DVX_HAL_GPU_HANDLE_FD || type > DVX_HAL_GPU_HANDLE_IPC)
		return gpu_badarg(gpu, "gpu_mem_export", "unknown handle type");
	GPU_CALL(gpu, gpu_mem_export, gpu, mem, type, h);
}

int dvx_hal_gpu_mem_import(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_handle *h,
			   struct dvx_hal_gpu_mem *mem)
{
	if (!h || !mem || !h->len)
		return gpu_badarg(gpu, "gpu_mem_import", "h or mem is NULL, or no length");
	if (h->type < DVX_HAL_GPU_HANDLE_FD || h->type > DVX_HAL_GPU_HANDLE_IPC ||
	    (h->type == DVX_HAL_GPU_HANDLE_FD && h->fd < 0))
		return gpu_badarg(gpu, "gpu_mem_import", "unknown handle type or no descriptor");
	GPU_CALL(gpu, gpu_mem_import, gpu, h, mem);
}

int dvx_hal_gpu_mem_lookup(struct dvx_hal_gpu *gpu, uint64_t dptr, struct dvx_hal_gpu_mem *mem)
{
	const struct dvx_hal_gpu_ops *ops = GPU_OPS(gpu);
	int err;

	if (!dptr || !mem)
		return gpu_badarg(gpu, "gpu_mem_lookup", "no address or mem is NULL");
	if (!gpu || !gpu->hal)
		return -EINVAL;
	if (!ops || !ops->gpu_mem_lookup)
		return gpu_nosys(gpu, "gpu_mem_lookup");
	gpu->diag.err = 0;
	err = ops->gpu_mem_lookup(gpu, dptr, mem);
	if (err == -ENOENT || !err)
		return err;	/* not device memory is an answer, not a failure */
	return gpu_failed(gpu, err, "gpu_mem_lookup");
}

int dvx_hal_gpu_peer_access(struct dvx_hal_gpu *gpu, int peer_ordinal, int *can)
{
	if (!can || (gpu && (gpu->handle < 0 || peer_ordinal < 0 || peer_ordinal == gpu->ordinal)))
		return gpu_badarg(gpu, "gpu_peer_access",
				  "can is NULL, no device chosen, or not another device");
	GPU_CALL(gpu, gpu_peer_access, gpu, peer_ordinal, can);
}

int dvx_hal_gpu_dmabuf_fd(struct dvx_hal_gpu *gpu, uint64_t dptr, uint64_t len, uint32_t flags,
			  int *fd)
{
	if (!dptr || !len || !fd)
		return gpu_badarg(gpu, "gpu_dmabuf_fd", "no range or fd is NULL");
	GPU_CALL(gpu, gpu_dmabuf_fd, gpu, dptr, len, flags, fd);
}

int dvx_hal_gpu_host_register(struct dvx_hal_gpu *gpu, void *addr, uint64_t len, uint32_t flags,
			      uint64_t *dptr)
{
	if (!addr || !len || !dptr)
		return gpu_badarg(gpu, "gpu_host_register", "no range or dptr is NULL");
	GPU_CALL(gpu, gpu_host_register, gpu, addr, len, flags, dptr);
}

int dvx_hal_gpu_host_unregister(struct dvx_hal_gpu *gpu, void *addr)
{
	if (!addr)
		return gpu_badarg(gpu, "gpu_host_unregister", "addr is NULL");
	GPU_CALL(gpu, gpu_host_unregister, gpu, addr);
}

int dvx_hal_gpu_module_load(struct dvx_hal_gpu *gpu, const void *image,
			    struct dvx_hal_gpu_module *mod)
{
	if (!image || !mod)
		return gpu_badarg(gpu, "gpu_module_load", "image or mod is NULL");
	GPU_CALL(gpu, gpu_module_load, gpu, image, mod);
}

int dvx_hal_gpu_module_unload(struct dvx_hal_gpu *gpu, struct dvx_hal_gpu_module *mod)
{
	if (!mod || !mod->priv)
		return gpu_badarg(gpu, "gpu_module_unload", "mod is NULL or not loaded");
	GPU_CALL(gpu, gpu_module_unload, gpu, mod);
}

int dvx_hal_gpu_module_function(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_module *mod,
				const char *name, void **func)
{
	if (!mod || !mod->priv || !name || !*name || !func)
		return gpu_badarg(gpu, "gpu_module_function", "module, name or func missing");
	GPU_CALL(gpu, gpu_module_function, gpu, mod, name, func);
}

int dvx_hal_gpu_launch(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_launch *launch)
{
	if (!launch || !launch->func || !launch->grid[0] || !launch->grid[1] || !launch->grid[2] ||
	    !launch->block[0] || !launch->block[1] || !launch->block[2])
		return gpu_badarg(gpu, "gpu_launch", "no function or an empty grid/block");
	GPU_CALL(gpu, gpu_launch, gpu, launch);
}

int dvx_hal_gpu_stream_create(struct dvx_hal_gpu *gpu, void **stream)
{
	if (!stream)
		return gpu_badarg(gpu, "gpu_stream_create", "stream is NULL");
	GPU_CALL(gpu, gpu_stream_create, gpu, stream);
}

int dvx_hal_gpu_stream_destroy(struct dvx_hal_gpu *gpu, void *stream)
{
	if (!stream)
		return gpu_badarg(gpu, "gpu_stream_destroy", "stream is NULL");
	GPU_CALL(gpu, gpu_stream_destroy, gpu, stream);
}

int dvx_hal_gpu_stream_query(struct dvx_hal_gpu *gpu, void *stream)
{
	const struct dvx_hal_gpu_ops *ops = GPU_OPS(gpu);
	int err;

	if (!gpu || !gpu->hal)
		return -EINVAL;
	if (!ops || !ops->gpu_stream_query)
		return gpu_nosys(gpu, "gpu_stream_query");
	gpu->diag.err = 0;
	err = ops->gpu_stream_query(gpu, stream);
	if (err == -EBUSY || !err)
		return err;	/* still running is an answer, not a failure */
	return gpu_failed(gpu, err, "gpu_stream_query");
}

int dvx_hal_gpu_memcpy_htod(struct dvx_hal_gpu *gpu, uint64_t dptr, const void *src, uint64_t len)
{
	if (!dptr || !src || !len)
		return gpu_badarg(gpu, "gpu_memcpy_htod", "no range");
	GPU_CALL(gpu, gpu_memcpy_htod, gpu, dptr, src, len);
}

int dvx_hal_gpu_memcpy_dtoh(struct dvx_hal_gpu *gpu, void *dst, uint64_t dptr, uint64_t len)
{
	if (!dptr || !dst || !len)
		return gpu_badarg(gpu, "gpu_memcpy_dtoh", "no range");
	GPU_CALL(gpu, gpu_memcpy_dtoh, gpu, dst, dptr, len);
}

int dvx_hal_gpu_memcpy_async(struct dvx_hal_gpu *gpu, uint64_t dst, uint64_t src, uint64_t len,
			     void *stream)
{
	if (!dst || !src || !len)
		return gpu_badarg(gpu, "gpu_memcpy_async", "no range");
	GPU_CALL(gpu, gpu_memcpy_async, gpu, dst, src, len, stream);
}

int dvx_hal_gpu_stream_atomic(struct dvx_hal_gpu *gpu, void *stream, uint64_t dptr, uint32_t op,
			      uint64_t value)
{
	if (!dptr || dptr % 8 || (op != DVX_HAL_GPU_ATOMIC_SET && op != DVX_HAL_GPU_ATOMIC_ADD))
		return gpu_badarg(gpu, "gpu_stream_atomic", "misaligned word or unknown operation");
	GPU_CALL(gpu, gpu_stream_atomic, gpu, stream, dptr, op, value);
}

/* CUresult values by number (hal.c does not include cuda.h; hal/cuda.c checks a few
 * of them against the header at compile time). */
int dvx_hal_cu_errno(int cu_result)
{
	switch (cu_result) {
	case 0: return 0;		/* SUCCESS */
	case 1: return -EINVAL;		/* INVALID_VALUE */
	case 2: return -ENOMEM;		/* OUT_OF_MEMORY */
	case 3: return -ENXIO;		/* NOT_INITIALIZED */
	case 4: return -ESHUTDOWN;	/* DEINITIALIZED */
	case 34: return -ENODEV;	/* STUB_LIBRARY: no real driver behind libcuda */
	case 35: return -ENODEV;	/* INSUFFICIENT_DRIVER (no usable driver) */
	case 36: return -EOPNOTSUPP;	/* CALL_REQUIRES_NEWER_DRIVER */
	case 46: return -EBUSY;		/* DEVICE_UNAVAILABLE */
	case 100: return -ENODEV;	/* NO_DEVICE */
	case 101: return -ENODEV;	/* INVALID_DEVICE */
	case 200: case 209: case 218: case 222: case 224:
		return -ENOEXEC;	/* INVALID_IMAGE, NO_BINARY_FOR_GPU, INVALID_PTX, ... */
	case 201: return -EINVAL;	/* INVALID_CONTEXT */
	case 208: return -EEXIST;	/* ALREADY_MAPPED */
	case 400: return -EBADF;	/* INVALID_HANDLE */
	case 500: return -ENOENT;	/* NOT_FOUND (symbol, kernel name) */
	case 600: return -EBUSY;	/* NOT_READY */
	case 700: case 714: case 715: case 716: case 717:
		return -EFAULT;		/* ILLEGAL_ADDRESS and other faults of a kernel */
	case 701: return -ENOSPC;	/* LAUNCH_OUT_OF_RESOURCES */
	case 702: return -ETIME;	/* LAUNCH_TIMEOUT */
	case 712: return -EEXIST;	/* HOST_MEMORY_ALREADY_REGISTERED */
	case 713: return -ENOENT;	/* HOST_MEMORY_NOT_REGISTERED */
	case 719: return -EIO;		/* LAUNCH_FAILED */
	case 800: return -EPERM;	/* NOT_PERMITTED */
	case 801: return -EOPNOTSUPP;	/* NOT_SUPPORTED */
	default: return -EIO;		/* UNKNOWN and the rest */
	}
}

#ifndef CONFIG_DVX_GPU
const struct dvx_hal *dvx_hal_cuda(void)
{
	return NULL;
}
#endif
