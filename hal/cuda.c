// SPDX-License-Identifier: MIT
/*
 * hal/cuda.c - the CUDA driver API backend (CONFIG_DVX_GPU).
 *
 * cuda.h is used for types only: libcuda.so.1 is opened with dlopen() on the first
 * gpu_init and every entry point is looked up by its versioned name, so libdvx.a links
 * without -lcuda and runs on machines with no NVIDIA driver (gpu_init then answers
 * -ENODEV and says why). Each CUresult is translated once, here, into a negative errno
 * (dvx_hal_cu_errno()), with the driver's own name for it (cuGetErrorName) in the
 * handle's diag.
 *
 * The ops are exported through hal/cudaops.h (DVX_HAL_CUDA_GPU_OPS) so another backend
 * (linux) can put the same gpu_* entries into its table; dvx_hal_cuda() is a backend
 * of its own with the shared host entries beside them.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <cuda.h>

#include "cudaops.h"
#include "host_priv.h"

/* dvx_hal_cu_errno() (hal.c) knows CUresults by number: keep it honest. */
_Static_assert(CUDA_ERROR_NOT_READY == 600, "CUresult numbering");
_Static_assert(CUDA_ERROR_NO_DEVICE == 100, "CUresult numbering");
_Static_assert(CUDA_ERROR_NOT_SUPPORTED == 801, "CUresult numbering");
_Static_assert(CUDA_ERROR_STUB_LIBRARY == 34, "CUresult numbering");

/* the entry points, typed from cuda.h (whose macros already name the _v2 versions) */
#define CU_FNS(X)                                                                   \
	X(cuInit, "cuInit")                                                         \
	X(cuDriverGetVersion, "cuDriverGetVersion")                                 \
	X(cuGetErrorName, "cuGetErrorName")                                         \
	X(cuDeviceGetCount, "cuDeviceGetCount")                                     \
	X(cuDeviceGet, "cuDeviceGet")                                               \
	X(cuDeviceGetByPCIBusId, "cuDeviceGetByPCIBusId")                           \
	X(cuDeviceGetPCIBusId, "cuDeviceGetPCIBusId")                               \
	X(cuDeviceGetName, "cuDeviceGetName")                                       \
	X(cuDeviceGetAttribute, "cuDeviceGetAttribute")                             \
	X(cuDeviceTotalMem, "cuDeviceTotalMem_v2")                                  \
	X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")                     \
	X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2")                \
	X(cuCtxSetCurrent, "cuCtxSetCurrent")                                       \
	X(cuMemGetAllocationGranularity, "cuMemGetAllocationGranularity")           \
	X(cuMemCreate, "cuMemCreate")                                               \
	X(cuMemRelease, "cuMemRelease")                                             \
	X(cuMemAddressReserve, "cuMemAddressReserve")                               \
	X(cuMemAddressFree, "cuMemAddressFree")                                     \
	X(cuMemMap, "cuMemMap")                                                     \
	X(cuMemUnmap, "cuMemUnmap")                                                 \
	X(cuMemSetAccess, "cuMemSetAccess")                                         \
	X(cuMemExportToShareableHandle, "cuMemExportToShareableHandle")             \
	X(cuMemGetHandleForAddressRange, "cuMemGetHandleForAddressRange")           \
	X(cuMemHostRegister, "cuMemHostRegister_v2")                                \
	X(cuMemHostUnregister, "cuMemHostUnregister")                               \
	X(cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2")                \
	X(cuModuleLoadData, "cuModuleLoadData")                                     \
	X(cuModuleUnload, "cuModuleUnload")                                         \
	X(cuModuleGetFunction, "cuModuleGetFunction")                               \
	X(cuLaunchKernel, "cuLaunchKernel")                                         \
	X(cuStreamCreate, "cuStreamCreate")                                         \
	X(cuStreamDestroy, "cuStreamDestroy_v2")                                    \
	X(cuStreamQuery, "cuStreamQuery")                                           \
	X(cuMemcpyHtoD, "cuMemcpyHtoD_v2")                                          \
	X(cuMemcpyDtoH, "cuMemcpyDtoH_v2")

static struct {
#define CU_FIELD(fn, sym) __typeof__(&fn) fn;
	CU_FNS(CU_FIELD)
#undef CU_FIELD
} cu;

static pthread_once_t cu_once = PTHREAD_ONCE_INIT;
static int cu_load_err;			/* 0 once every entry point was found */
static char cu_load_msg[96];

static void cu_load(void)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	const char *e;

	if (!lib) {
		e = dlerror();
		snprintf(cu_load_msg, sizeof(cu_load_msg),
			 "no NVIDIA driver: libcuda.so.1 not loadable (%.40s)", e ? e : "?");
		cu_load_err = -ENODEV;
		return;
	}
#define CU_LOOKUP(fn, sym)                                                          \
	cu.fn = (__typeof__(&fn))dlsym(lib, sym);                                   \
	if (!cu.fn) {                                                               \
		snprintf(cu_load_msg, sizeof(cu_load_msg),                          \
			 "libcuda.so.1 lacks %s: driver too old", sym);             \
		cu_load_err = -EOPNOTSUPP;                                          \
		return;                                                             \
	}
	CU_FNS(CU_LOOKUP)
#undef CU_LOOKUP
	/* the library stays loaded for the life of the process */
}

/* Record a failed driver call: errno from the CUresult, the driver's name for it. */
static int cu_fail(struct dvx_hal_gpu *gpu, CUresult r, const char *op, const char *call)
{
	int err = dvx_hal_cu_errno((int)r);
	const char *name = NULL;

	if (!err)
		err = -EIO;
	if (!cu.cuGetErrorName || cu.cuGetErrorName(r, &name) != CUDA_SUCCESS || !name)
		name = "CUDA_ERROR_?";
	dvx_hal_diag_set(&gpu->diag, err, DVX_DIAG_CUDA, op, "%s: %s (%d)", call, name, (int)r);
	gpu->diag.cu_result = (int32_t)r;
	return err;
}

#define CU_CHECK(gpu, op, call)                                                     \
	do {                                                                        \
		CUresult r_ = cu.call;                                              \
		if (r_ != CUDA_SUCCESS)                                             \
			return cu_fail(gpu, r_, op, #call);                         \
	} while (0)

int dvx_cuda_gpu_init(struct dvx_hal_gpu *gpu)
{
	pthread_once(&cu_once, cu_load);
	if (cu_load_err)
		return dvx_hal_diag_set(&gpu->diag, cu_load_err, DVX_DIAG_OS, "gpu_init", "%s",
					cu_load_msg);
	CU_CHECK(gpu, "gpu_init", cuInit(0));
	return 0;
}

/* every entry but init requires a successful init: cu.* are NULL before */
#define CU_READY(gpu, op)                                                           \
	do {                                                                        \
		if (!cu.cuInit || cu_load_err)                                      \
			return dvx_hal_diag_set(&(gpu)->diag, -ENXIO, DVX_DIAG_STATE, op, \
						"gpu_init has not succeeded");       \
	} while (0)

int dvx_cuda_gpu_count(struct dvx_hal_gpu *gpu, int *count)
{
	CU_READY(gpu, "gpu_count");
	CU_CHECK(gpu, "gpu_count", cuDeviceGetCount(count));
	return 0;
}

int dvx_cuda_gpu_get(struct dvx_hal_gpu *gpu, int ordinal, const char *pci)
{
	CUdevice d;
	int n, i;

	CU_READY(gpu, "gpu_get");
	if (pci && *pci) {
		CU_CHECK(gpu, "gpu_get", cuDeviceGetByPCIBusId(&d, pci));
		/* CUdevice is the ordinal in every driver so far; find it to be sure */
		CU_CHECK(gpu, "gpu_get", cuDeviceGetCount(&n));
		for (i = 0; i < n; i++) {
			CUdevice o;

			if (cu.cuDeviceGet(&o, i) == CUDA_SUCCESS && o == d)
				break;
		}
		gpu->ordinal = i < n ? i : (int)d;
	} else {
		CU_CHECK(gpu, "gpu_get", cuDeviceGet(&d, ordinal));
		gpu->ordinal = ordinal;
	}
	gpu->handle = (int32_t)d;
	return 0;
}

static int attr_of(struct dvx_hal_gpu *gpu, CUdevice_attribute a, int *v)
{
	CUresult r = cu.cuDeviceGetAttribute(v, a, (CUdevice)gpu->handle);

	if (r == CUDA_ERROR_INVALID_VALUE) {	/* an attribute this driver does not know */
		*v = 0;
		return 0;
	}
	return r == CUDA_SUCCESS ? 0 : cu_fail(gpu, r, "gpu_query", "cuDeviceGetAttribute");
}

int dvx_cuda_gpu_query(struct dvx_hal_gpu *gpu, struct dvx_hal_gpu_attr *attr)
{
	static const struct {
		CUdevice_attribute a;
		size_t off;
		int flag;
	} tab[] = {
#define A32(a, f) { a, offsetof(struct dvx_hal_gpu_attr, f), 0 }
#define A8(a, f) { a, offsetof(struct dvx_hal_gpu_attr, f), 1 }
		A32(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, cc_major),
		A32(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, cc_minor),
		A32(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, sm_count),
		A32(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, max_threads_per_block),
		A32(CU_DEVICE_ATTRIBUTE_WARP_SIZE, warp_size),
		A32(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING, gdr_writes_ordering),
		A8(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED, gdr),
		A8(CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, dmabuf),
		A8(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, vmm),
		A8(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED, vmm_rdma),
		A8(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, posix_fd),
		A8(CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED, host_register),
		A8(CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, can_map_host),
		A8(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, unified_addressing),
#undef A32
#undef A8
	};
	struct dvx_hal_gpu_attr a;
	char pci[DVX_HAL_PCI_MAX];
	size_t i, total = 0;
	int v, err;

	CU_READY(gpu, "gpu_query");
	memset(&a, 0, sizeof(a));
	a.ordinal = gpu->ordinal;
	CU_CHECK(gpu, "gpu_query", cuDriverGetVersion(&a.driver_version));
	CU_CHECK(gpu, "gpu_query", cuDeviceGetName(a.name, (int)sizeof(a.name) - 1,
						   (CUdevice)gpu->handle));
	CU_CHECK(gpu, "gpu_query", cuDeviceGetPCIBusId(pci, (int)sizeof(pci),
						       (CUdevice)gpu->handle));
	for (i = 0; pci[i] && i + 1 < sizeof(a.pci); i++)	/* the driver writes upper case */
		a.pci[i] = (char)(pci[i] >= 'A' && pci[i] <= 'F' ? pci[i] - 'A' + 'a' : pci[i]);
	CU_CHECK(gpu, "gpu_query", cuDeviceTotalMem(&total, (CUdevice)gpu->handle));
	a.total_mem = total;
	for (i = 0; i < DVX_ARRAY_SIZE(tab); i++) {
		err = attr_of(gpu, tab[i].a, &v);
		if (err)
			return err;
		if (tab[i].flag)
			*((uint8_t *)&a + tab[i].off) = v ? 1 : 0;
		else
			memcpy((uint8_t *)&a + tab[i].off, &v, sizeof(v));
	}
	*attr = a;
	return 0;
}

int dvx_cuda_gpu_ctx_retain(struct dvx_hal_gpu *gpu)
{
	CUcontext ctx;

	CU_READY(gpu, "gpu_ctx_retain");
	CU_CHECK(gpu, "gpu_ctx_retain", cuDevicePrimaryCtxRetain(&ctx, (CUdevice)gpu->handle));
	gpu->priv = ctx;
	gpu->ctx_retained = 1;
	return 0;
}

int dvx_cuda_gpu_ctx_release(struct dvx_hal_gpu *gpu)
{
	CU_READY(gpu, "gpu_ctx_release");
	CU_CHECK(gpu, "gpu_ctx_release", cuDevicePrimaryCtxRelease((CUdevice)gpu->handle));
	gpu->priv = NULL;
	gpu->ctx_retained = 0;
	return 0;
}

int dvx_cuda_gpu_ctx_set_current(struct dvx_hal_gpu *gpu)
{
	CU_READY(gpu, "gpu_ctx_set_current");
	CU_CHECK(gpu, "gpu_ctx_set_current", cuCtxSetCurrent((CUcontext)gpu->priv));
	return 0;
}

/* cuMemCreate -> cuMemAddressReserve -> cuMemMap -> cuMemSetAccess, undone in reverse. */
int dvx_cuda_gpu_mem_create(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_mem_req *req,
			    struct dvx_hal_gpu_mem *mem)
{
	CUmemAllocationProp prop;
	CUmemAccessDesc acc;
	CUmemGenericAllocationHandle h;
	CUdeviceptr va;
	size_t gran = 0, len;
	CUresult r;
	const char *call;

	CU_READY(gpu, "gpu_mem_create");
	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = gpu->handle;
	if (req->flags & DVX_HAL_GPU_MEM_EXPORT)
		prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	if (req->flags & DVX_HAL_GPU_MEM_RDMA)
		prop.allocFlags.gpuDirectRDMACapable = 1;
	CU_CHECK(gpu, "gpu_mem_create",
		 cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
	if (!gran)
		gran = 2u << 20;
	len = (size_t)DVX_ALIGN_UP(req->len, (uint64_t)gran);
	CU_CHECK(gpu, "gpu_mem_create", cuMemCreate(&h, len, &prop, 0));
	r = cu.cuMemAddressReserve(&va, len, gran, 0, 0);
	call = "cuMemAddressReserve";
	if (r != CUDA_SUCCESS)
		goto err_release;
	r = cu.cuMemMap(va, len, 0, h, 0);
	call = "cuMemMap";
	if (r != CUDA_SUCCESS)
		goto err_free_va;
	memset(&acc, 0, sizeof(acc));
	acc.location = prop.location;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	r = cu.cuMemSetAccess(va, len, &acc, 1);
	call = "cuMemSetAccess";
	if (r != CUDA_SUCCESS)
		goto err_unmap;
	memset(mem, 0, sizeof(*mem));
	mem->dptr = (uint64_t)va;
	mem->len = len;
	mem->handle = (uint64_t)h;
	mem->flags = req->flags & (DVX_HAL_GPU_MEM_RDMA | DVX_HAL_GPU_MEM_EXPORT);
	return 0;

err_unmap:
	cu.cuMemUnmap(va, len);
err_free_va:
	cu.cuMemAddressFree(va, len);
err_release:
	cu.cuMemRelease(h);
	return cu_fail(gpu, r, "gpu_mem_create", call);
}

int dvx_cuda_gpu_mem_free(struct dvx_hal_gpu *gpu, struct dvx_hal_gpu_mem *mem)
{
	CU_READY(gpu, "gpu_mem_free");
	CU_CHECK(gpu, "gpu_mem_free", cuMemUnmap((CUdeviceptr)mem->dptr, mem->len));
	CU_CHECK(gpu, "gpu_mem_free", cuMemAddressFree((CUdeviceptr)mem->dptr, mem->len));
	CU_CHECK(gpu, "gpu_mem_free", cuMemRelease((CUmemGenericAllocationHandle)mem->handle));
	memset(mem, 0, sizeof(*mem));
	return 0;
}

int dvx_cuda_gpu_mem_export(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_mem *mem, int *fd)
{
	int f = -1;

	CU_READY(gpu, "gpu_mem_export");
	if (!(mem->flags & DVX_HAL_GPU_MEM_EXPORT))
		return dvx_hal_diag_set(&gpu->diag, -EINVAL, DVX_DIAG_ARG, "gpu_mem_export",
					"memory was not created exportable (DVX_HAL_GPU_MEM_EXPORT)");
	CU_CHECK(gpu, "gpu_mem_export",
		 cuMemExportToShareableHandle(&f, (CUmemGenericAllocationHandle)mem->handle,
					      CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
	*fd = f;
	return 0;
}

int dvx_cuda_gpu_dmabuf_fd(struct dvx_hal_gpu *gpu, uint64_t dptr, uint64_t len, uint32_t flags,
			   int *fd)
{
	unsigned long long cf = 0;
	int f = -1;

	CU_READY(gpu, "gpu_dmabuf_fd");
	if (flags & DVX_HAL_GPU_DMABUF_PCIE)
		cf = CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE;
	CU_CHECK(gpu, "gpu_dmabuf_fd",
		 cuMemGetHandleForAddressRange(&f, (CUdeviceptr)dptr, (size_t)len,
					       CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, cf));
	*fd = f;
	return 0;
}

int dvx_cuda_gpu_host_register(struct dvx_hal_gpu *gpu, void *addr, uint64_t len, uint32_t flags,
			       uint64_t *dptr)
{
	unsigned cf = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP;
	CUdeviceptr d = 0;
	CUresult r;

	CU_READY(gpu, "gpu_host_register");
	if (flags & DVX_HAL_GPU_HOST_IOMEM)
		cf |= CU_MEMHOSTREGISTER_IOMEMORY;
	CU_CHECK(gpu, "gpu_host_register", cuMemHostRegister(addr, (size_t)len, cf));
	r = cu.cuMemHostGetDevicePointer(&d, addr, 0);
	if (r != CUDA_SUCCESS) {
		cu.cuMemHostUnregister(addr);
		return cu_fail(gpu, r, "gpu_host_register", "cuMemHostGetDevicePointer");
	}
	*dptr = (uint64_t)d;
	return 0;
}

int dvx_cuda_gpu_host_unregister(struct dvx_hal_gpu *gpu, void *addr)
{
	CU_READY(gpu, "gpu_host_unregister");
	CU_CHECK(gpu, "gpu_host_unregister", cuMemHostUnregister(addr));
	return 0;
}

int dvx_cuda_gpu_module_load(struct dvx_hal_gpu *gpu, const void *image,
			     struct dvx_hal_gpu_module *mod)
{
	CUmodule m;

	CU_READY(gpu, "gpu_module_load");
	CU_CHECK(gpu, "gpu_module_load", cuModuleLoadData(&m, image));
	mod->priv = m;
	return 0;
}

int dvx_cuda_gpu_module_unload(struct dvx_hal_gpu *gpu, struct dvx_hal_gpu_module *mod)
{
	CU_READY(gpu, "gpu_module_unload");
	CU_CHECK(gpu, "gpu_module_unload", cuModuleUnload((CUmodule)mod->priv));
	mod->priv = NULL;
	return 0;
}

int dvx_cuda_gpu_module_function(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_module *mod,
				 const char *name, void **func)
{
	CUfunction f;

	CU_READY(gpu, "gpu_module_function");
	CU_CHECK(gpu, "gpu_module_function", cuModuleGetFunction(&f, (CUmodule)mod->priv, name));
	*func = f;
	return 0;
}

int dvx_cuda_gpu_launch(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_launch *l)
{
	CU_READY(gpu, "gpu_launch");
	CU_CHECK(gpu, "gpu_launch",
		 cuLaunchKernel((CUfunction)l->func, l->grid[0], l->grid[1], l->grid[2],
				l->block[0], l->block[1], l->block[2], l->shmem,
				(CUstream)l->stream, l->args, NULL));
	return 0;
}

int dvx_cuda_gpu_stream_create(struct dvx_hal_gpu *gpu, void **stream)
{
	CUstream s;

	CU_READY(gpu, "gpu_stream_create");
	CU_CHECK(gpu, "gpu_stream_create", cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	*stream = s;
	return 0;
}

int dvx_cuda_gpu_stream_destroy(struct dvx_hal_gpu *gpu, void *stream)
{
	CU_READY(gpu, "gpu_stream_destroy");
	CU_CHECK(gpu, "gpu_stream_destroy", cuStreamDestroy((CUstream)stream));
	return 0;
}

int dvx_cuda_gpu_stream_query(struct dvx_hal_gpu *gpu, void *stream)
{
	CUresult r;

	CU_READY(gpu, "gpu_stream_query");
	r = cu.cuStreamQuery((CUstream)stream);
	if (r == CUDA_ERROR_NOT_READY)
		return -EBUSY;
	return r == CUDA_SUCCESS ? 0 : cu_fail(gpu, r, "gpu_stream_query", "cuStreamQuery");
}

int dvx_cuda_gpu_memcpy_htod(struct dvx_hal_gpu *gpu, uint64_t dptr, const void *src, uint64_t len)
{
	CU_READY(gpu, "gpu_memcpy_htod");
	CU_CHECK(gpu, "gpu_memcpy_htod", cuMemcpyHtoD((CUdeviceptr)dptr, src, (size_t)len));
	return 0;
}

int dvx_cuda_gpu_memcpy_dtoh(struct dvx_hal_gpu *gpu, void *dst, uint64_t dptr, uint64_t len)
{
	CU_READY(gpu, "gpu_memcpy_dtoh");
	CU_CHECK(gpu, "gpu_memcpy_dtoh", cuMemcpyDtoH(dst, (CUdeviceptr)dptr, (size_t)len));
	return 0;
}

const struct dvx_hal_gpu_ops dvx_cuda_gpu_ops = {
	.gpu_init = dvx_cuda_gpu_init,
	.gpu_count = dvx_cuda_gpu_count,
	.gpu_get = dvx_cuda_gpu_get,
	.gpu_query = dvx_cuda_gpu_query,
	.gpu_ctx_retain = dvx_cuda_gpu_ctx_retain,
	.gpu_ctx_release = dvx_cuda_gpu_ctx_release,
	.gpu_ctx_set_current = dvx_cuda_gpu_ctx_set_current,
	.gpu_mem_create = dvx_cuda_gpu_mem_create,
	.gpu_mem_free = dvx_cuda_gpu_mem_free,
	.gpu_mem_export = dvx_cuda_gpu_mem_export,
	.gpu_dmabuf_fd = dvx_cuda_gpu_dmabuf_fd,
	.gpu_host_register = dvx_cuda_gpu_host_register,
	.gpu_host_unregister = dvx_cuda_gpu_host_unregister,
	.gpu_module_load = dvx_cuda_gpu_module_load,
	.gpu_module_unload = dvx_cuda_gpu_module_unload,
	.gpu_module_function = dvx_cuda_gpu_module_function,
	.gpu_launch = dvx_cuda_gpu_launch,
	.gpu_stream_create = dvx_cuda_gpu_stream_create,
	.gpu_stream_destroy = dvx_cuda_gpu_stream_destroy,
	.gpu_stream_query = dvx_cuda_gpu_stream_query,
	.gpu_memcpy_htod = dvx_cuda_gpu_memcpy_htod,
	.gpu_memcpy_dtoh = dvx_cuda_gpu_memcpy_dtoh,
};

static const struct dvx_hal cuda_hal = {
	.host = &dvx_host_ops,
	.gpu = &dvx_cuda_gpu_ops,
	.ctx = NULL,
	.name = "cuda",
};

const struct dvx_hal *dvx_hal_cuda(void)
{
	return &cuda_hal;
}
