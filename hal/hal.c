// SPDX-License-Identifier: MIT
/*
 * hal/hal.c - the wrappers every layer above calls.
 *
 * Each wrapper checks its arguments, answers -ENOSYS for an entry the backend does
 * not provide, and makes sure a failure leaves dev->diag naming the operation (the
 * backend fills in the vendor's own details: errno, DEVX status/syndrome, CUresult).
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include <dvx/hal.h>

#define HAL_OPS(hal) ((hal) && (hal)->ops ? (hal)->ops : NULL)
#define DEV_OPS(dev) ((dev) && (dev)->hal ? HAL_OPS((dev)->hal) : NULL)

/* After a failed backend call: keep the backend's record, or write a plain one. */
static int failed(struct dvx_hal_nic *dev, int err, const char *op)
{
	if (err >= 0)
		err = -EIO;
	if (dev && dev->diag.err == 0)
		dvx_hal_diag_set(&dev->diag, err, DVX_DIAG_OS, op, NULL);
	else if (dev)
		dev->diag.err = err;
	return err;
}

static int nosys(struct dvx_hal_nic *dev, const char *op)
{
	if (dev)
		dvx_hal_diag_set(&dev->diag, -ENOSYS, DVX_DIAG_ARG, op,
				 "the %s backend does not provide this call",
				 dev->hal && dev->hal->name ? dev->hal->name : "?");
	return -ENOSYS;
}

static int badarg(struct dvx_hal_nic *dev, const char *op, const char *what)
{
	if (dev)
		dvx_hal_diag_set(&dev->diag, -EINVAL, DVX_DIAG_ARG, op, "%s", what);
	return -EINVAL;
}

/* Call dev->hal->ops->NAME(args) with the usual checks. */
#define DEV_CALL(dev, name, ...)                                                   \
	do {                                                                       \
		const struct dvx_hal_ops *ops_ = DEV_OPS(dev);                     \
		int err_;                                                          \
		if (!ops_)                                                         \
			return -EINVAL;                                            \
		if (!ops_->name)                                                   \
			return nosys(dev, #name);                                  \
		(dev)->diag.err = 0;                                               \
		err_ = ops_->name(__VA_ARGS__);                                    \
		return err_ ? failed(dev, err_, #name) : 0;                        \
	} while (0)

int dvx_hal_nic_list(const struct dvx_hal *hal, struct dvx_hal_nic_info *info, unsigned max,
		     unsigned *count)
{
	const struct dvx_hal_ops *ops = HAL_OPS(hal);

	if (!ops || !count || (max && !info))
		return -EINVAL;
	if (!ops->nic_list)
		return -ENOSYS;
	*count = 0;
	return ops->nic_list(hal, info, max, count);
}

int dvx_hal_nic_open(const struct dvx_hal *hal, const char *name, struct dvx_hal_nic *dev)
{
	const struct dvx_hal_ops *ops = HAL_OPS(hal);
	struct dvx_log log;
	int err;

	if (!ops || !name || !*name || !dev)
		return -EINVAL;
	log = dev->log;		/* the caller may set the log sink before opening */
	memset(dev, 0, sizeof(*dev));
	dev->log = log;
	dev->hal = hal;
	if (!ops->nic_open)
		return nosys(dev, "nic_open");
	err = ops->nic_open(hal, name, dev);
	if (err) {
		err = failed(dev, err, "nic_open");
		dev->priv = NULL;
		dev->hal = hal;
	}
	return err;
}

int dvx_hal_nic_close(struct dvx_hal_nic *dev)
{
	const struct dvx_hal_ops *ops = DEV_OPS(dev);
	int err;

	if (!ops)
		return -EINVAL;
	if (!ops->nic_close)
		return nosys(dev, "nic_close");
	dev->diag.err = 0;
	err = ops->nic_close(dev);
	if (err)
		return failed(dev, err, "nic_close");
	dev->priv = NULL;
	return 0;
}

int dvx_hal_nic_query(struct dvx_hal_nic *dev, struct dvx_hal_nic_attr *attr)
{
	if (!attr)
		return badarg(dev, "nic_query", "attr is NULL");
	DEV_CALL(dev, nic_query, dev, attr);
}

int dvx_hal_query_port(struct dvx_hal_nic *dev, uint8_t port, struct dvx_hal_port_attr *attr)
{
	if (!attr || port == 0)
		return badarg(dev, "query_port", "attr is NULL or port is 0 (ports count from 1)");
	DEV_CALL(dev, query_port, dev, port, attr);
}

int dvx_hal_query_gid(struct dvx_hal_nic *dev, uint8_t port, uint32_t index,
		      struct dvx_hal_gid *gid)
{
	if (!gid || port == 0)
		return badarg(dev, "query_gid", "gid is NULL or port is 0");
	DEV_CALL(dev, query_gid, dev, port, index, gid);
}

int dvx_hal_devx_cmd(struct dvx_hal_nic *dev, const void *in, size_t inlen, void *out,
		     size_t outlen)
{
	if (!in || inlen < 8 || !out || outlen < 16)
		return badarg(dev, "devx_cmd", "mailboxes missing or too short");
	DEV_CALL(dev, devx_cmd, dev, in, inlen, out, outlen);
}

int dvx_hal_obj_create(struct dvx_hal_nic *dev, const void *in, size_t inlen, void *out,
		       size_t outlen, struct dvx_hal_obj *obj)
{
	if (!in || inlen < 8 || !out || outlen < 16 || !obj)
		return badarg(dev, "obj_create", "mailboxes missing or too short");
	DEV_CALL(dev, obj_create, dev, in, inlen, out, outlen, obj);
}

int dvx_hal_obj_modify(struct dvx_hal_nic *dev, struct dvx_hal_obj *obj, const void *in,
		       size_t inlen, void *out, size_t outlen)
{
	if (!obj || !in || inlen < 8 || !out || outlen < 16)
		return badarg(dev, "obj_modify", "object or mailboxes missing");
	DEV_CALL(dev, obj_modify, dev, obj, in, inlen, out, outlen);
}

int dvx_hal_obj_query(struct dvx_hal_nic *dev, struct dvx_hal_obj *obj, const void *in,
		      size_t inlen, void *out, size_t outlen)
{
	if (!obj || !in || inlen < 8 || !out || outlen < 16)
		return badarg(dev, "obj_query", "object or mailboxes missing");
	DEV_CALL(dev, obj_query, dev, obj, in, inlen, out, outlen);
}

int dvx_hal_obj_destroy(struct dvx_hal_nic *dev, struct dvx_hal_obj *obj)
{
	if (!obj)
		return badarg(dev, "obj_destroy", "object is NULL");
	DEV_CALL(dev, obj_destroy, dev, obj);
}

int dvx_hal_umem_reg(struct dvx_hal_nic *dev, const struct dvx_hal_umem_req *req,
		     struct dvx_hal_umem *umem)
{
	if (!req || !umem || !req->len || (req->dmabuf_fd < 0 && !req->addr))
		return badarg(dev, "umem_reg", "no memory described");
	DEV_CALL(dev, umem_reg, dev, req, umem);
}

int dvx_hal_umem_dereg(struct dvx_hal_nic *dev, struct dvx_hal_umem *umem)
{
	if (!umem)
		return badarg(dev, "umem_dereg", "umem is NULL");
	DEV_CALL(dev, umem_dereg, dev, umem);
}

int dvx_hal_uar_alloc(struct dvx_hal_nic *dev, enum dvx_uar_type type, struct dvx_hal_uar *uar)
{
	if (!uar || (unsigned)type > DVX_UAR_BF)
		return badarg(dev, "uar_alloc", "uar is NULL or type unknown");
	DEV_CALL(dev, uar_alloc, dev, type, uar);
}

int dvx_hal_uar_free(struct dvx_hal_nic *dev, struct dvx_hal_uar *uar)
{
	if (!uar)
		return badarg(dev, "uar_free", "uar is NULL");
	DEV_CALL(dev, uar_free, dev, uar);
}

int dvx_hal_pd_alloc(struct dvx_hal_nic *dev, struct dvx_hal_pd *pd)
{
	if (!pd)
		return badarg(dev, "pd_alloc", "pd is NULL");
	DEV_CALL(dev, pd_alloc, dev, pd);
}

int dvx_hal_pd_free(struct dvx_hal_nic *dev, struct dvx_hal_pd *pd)
{
	if (!pd)
		return badarg(dev, "pd_free", "pd is NULL");
	DEV_CALL(dev, pd_free, dev, pd);
}

int dvx_hal_eqn_query(struct dvx_hal_nic *dev, uint32_t vector, uint32_t *eqn)
{
	if (!eqn)
		return badarg(dev, "eqn_query", "eqn is NULL");
	DEV_CALL(dev, eqn_query, dev, vector, eqn);
}

int dvx_hal_mr_reg(struct dvx_hal_nic *dev, struct dvx_hal_pd *pd,
		   const struct dvx_hal_mr_req *req, struct dvx_hal_mr *mr)
{
	if (!pd || !req || !mr || !req->len ||
	    ((req->flags & DVX_MR_DMABUF) ? req->dmabuf_fd < 0 : !req->addr))
		return badarg(dev, "mr_reg", "no memory described");
	DEV_CALL(dev, mr_reg, dev, pd, req, mr);
}

int dvx_hal_mr_dereg(struct dvx_hal_nic *dev, struct dvx_hal_mr *mr)
{
	if (!mr)
		return badarg(dev, "mr_dereg", "mr is NULL");
	DEV_CALL(dev, mr_dereg, dev, mr);
}

int dvx_hal_roce_rmac(struct dvx_hal_nic *dev, struct dvx_hal_pd *pd, uint8_t port,
		      uint32_t sgid_index, const uint8_t dgid[16], uint8_t mac[6])
{
	if (!pd || !dgid || !mac || port == 0)
		return badarg(dev, "roce_rmac", "missing argument");
	DEV_CALL(dev, roce_rmac, dev, pd, port, sgid_index, dgid, mac);
}

void dvx_hal_nic_progress(struct dvx_hal_nic *dev)
{
	const struct dvx_hal_ops *ops = DEV_OPS(dev);

	if (ops && ops->nic_progress)
		ops->nic_progress(dev);
}

int dvx_hal_mem_alloc(const struct dvx_hal *hal, uint64_t len, uint64_t align, int numa_node,
		      uint32_t flags, struct dvx_hal_mem *mem)
{
	const struct dvx_hal_ops *ops = HAL_OPS(hal);

	if (!ops || !mem || !len || (align & (align - 1)))
		return -EINVAL;
	if (!ops->mem_alloc)
		return -ENOSYS;
	return ops->mem_alloc(hal, len, align, numa_node, flags, mem);
}

int dvx_hal_mem_free(const struct dvx_hal *hal, struct dvx_hal_mem *mem)
{
	const struct dvx_hal_ops *ops = HAL_OPS(hal);

	if (!ops || !mem)
		return -EINVAL;
	if (!ops->mem_free)
		return -ENOSYS;
	return ops->mem_free(hal, mem);
}

int dvx_hal_pci_list(const struct dvx_hal *hal, uint32_t class_mask, uint32_t class_value,
		     struct dvx_hal_pci_dev *devs, unsigned max, unsigned *count)
{
	const struct dvx_hal_ops *ops = HAL_OPS(hal);

	if (!ops || !count || (max && !devs))
		return -EINVAL;
	if (!ops->pci_list)
		return -ENOSYS;
	*count = 0;
	return ops->pci_list(hal, class_mask, class_value, devs, max, count);
}

int dvx_hal_limits(const struct dvx_hal *hal, struct dvx_hal_limits *lim)
{
	const struct dvx_hal_ops *ops = HAL_OPS(hal);

	if (!ops || !lim)
		return -EINVAL;
	if (!ops->limits)
		return -ENOSYS;
	return ops->limits(hal, lim);
}

uint64_t dvx_hal_now_ns(const struct dvx_hal *hal)
{
	const struct dvx_hal_ops *ops = HAL_OPS(hal);
	struct timespec ts;

	if (ops && ops->now_ns)
		return ops->now_ns(hal);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#ifndef CONFIG_DVX_RDMA
const struct dvx_hal *dvx_hal_linux(void)
{
	return NULL;
}
#endif

/* ---- GPU wrappers (CUDA driver API behind the hal) ---- */

#define GPU_OPS(gpu) ((gpu) && (gpu)->hal ? HAL_OPS((gpu)->hal) : NULL)

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
		const struct dvx_hal_ops *ops_ = GPU_OPS(gpu);                     \
		int err_;                                                          \
		if (!ops_)                                                         \
			return -EINVAL;                                            \
		if (!ops_->name)                                                   \
			return gpu_nosys(gpu, #name);                              \
		(gpu)->diag.err = 0;                                               \
		err_ = ops_->name(__VA_ARGS__);                                    \
		return err_ ? gpu_failed(gpu, err_, #name) : 0;                    \
	} while (0)

int dvx_hal_gpu_init(const struct dvx_hal *hal, struct dvx_hal_gpu *gpu)
{
	struct dvx_log log;

	if (!HAL_OPS(hal) || !gpu)
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

int dvx_hal_gpu_mem_create(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_mem_req *req,
			   struct dvx_hal_gpu_mem *mem)
{
	if (!req || !mem || !req->len)
		return gpu_badarg(gpu, "gpu_mem_create", "no length or no handle");
	GPU_CALL(gpu, gpu_mem_create, gpu, req, mem);
}

int dvx_hal_gpu_mem_free(struct dvx_hal_gpu *gpu, struct dvx_hal_gpu_mem *mem)
{
	if (!mem || !mem->dptr)
		return gpu_badarg(gpu, "gpu_mem_free", "mem is NULL or not created");
	GPU_CALL(gpu, gpu_mem_free, gpu, mem);
}

int dvx_hal_gpu_mem_export(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_mem *mem, int *fd)
{
	if (!mem || !mem->dptr || !fd)
		return gpu_badarg(gpu, "gpu_mem_export", "mem or fd is NULL");
	GPU_CALL(gpu, gpu_mem_export, gpu, mem, fd);
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
	const struct dvx_hal_ops *ops = GPU_OPS(gpu);
	int err;

	if (!ops)
		return -EINVAL;
	if (!ops->gpu_stream_query)
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
