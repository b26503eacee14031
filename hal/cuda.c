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
	X(cuStreamSynchronize, "cuStreamSynchronize")                               \
	X(cuMemcpyHtoD, "cuMemcpyHtoD_v2")                                          \
	X(cuMemcpyDtoH, "cuMemcpyDtoH_v2")                                         \
	X(cuMemcpyAsync, "cuMemcpyAsync")                                           \
	X(cuDeviceGetUuid, "cuDeviceGetUuid_v2")                                    \
	X(cuDeviceCanAccessPeer, "cuDeviceCanAccessPeer")                           \
	X(cuMemImportFromShareableHandle, "cuMemImportFromShareableHandle")         \
	X(cuMemGetAllocationPropertiesFromHandle, "cuMemGetAllocationPropertiesFromHandle") \
	X(cuMemRetainAllocationHandle, "cuMemRetainAllocationHandle")               \
	X(cuMemGetAddressRange, "cuMemGetAddressRange_v2")                          \
	X(cuPointerGetAttributes, "cuPointerGetAttributes")                         \
	X(cuMemAlloc, "cuMemAlloc_v2")                                              \
	X(cuMemFree, "cuMemFree_v2")                                                \
	X(cuIpcGetMemHandle, "cuIpcGetMemHandle")                                   \
	X(cuIpcOpenMemHandle, "cuIpcOpenMemHandle_v2")                              \
	X(cuIpcCloseMemHandle, "cuIpcCloseMemHandle")                               \
	X(cuCtxPushCurrent, "cuCtxPushCurrent_v2")                                  \
	X(cuCtxPopCurrent, "cuCtxPopCurrent_v2")                                    \
	X(cuCtxEnablePeerAccess, "cuCtxEnablePeerAccess")

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
		A8(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, fabric),
#undef A32
#undef A8
	};
	struct dvx_hal_gpu_attr a;
	CUuuid uuid;
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
	CU_CHECK(gpu, "gpu_query", cuDeviceGetUuid(&uuid, (CUdevice)gpu->handle));
	memcpy(a.uuid, uuid.bytes, sizeof(a.uuid));
	if (a.vmm) {
		CUmemAllocationProp prop;
		size_t gran = 0;

		memset(&prop, 0, sizeof(prop));
		prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
		prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
		prop.location.id = gpu->handle;
		prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
		CU_CHECK(gpu, "gpu_query",
			 cuMemGetAllocationGranularity(&gran, &prop,
						       CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
		a.granularity = gran;
	}
	*attr = a;
	return 0;
}

/*
 * The stream atomic: one thread, a system-scope release store or add (hal/cuda-kernels.cu,
 * built by nvcc into the embedded fatbin). A kernel starts after the stream's earlier
 * work is complete, and the release makes that work's writes visible before the word
 * changes. A build without nvcc carries the same kernel as PTX text for the driver to
 * compile.
 */
extern const unsigned char dvx_fatbin_hal_cuda_kernels[];
extern const size_t dvx_fatbin_hal_cuda_kernels_len;

static const char stream_atomic_ptx[] =
	".version 7.0\n"
	".target sm_70\n"
	".address_size 64\n"
	".visible .entry dvx_hal_stream_atomic(.param .u64 p_addr, .param .u32 p_op,\n"
	"					.param .u64 p_val)\n"
	"{\n"
	"	.reg .b64 %rd<4>;\n"
	"	.reg .b32 %r<2>;\n"
	"	.reg .pred %p<2>;\n"
	"	ld.param.u64 %rd1, [p_addr];\n"
	"	ld.param.u32 %r1, [p_op];\n"
	"	ld.param.u64 %rd2, [p_val];\n"
	"	fence.sc.sys;\n"
	"	setp.eq.u32 %p1, %r1, 1;\n"
	"	@%p1 st.release.sys.global.u64 [%rd1], %rd2;\n"
	"	@!%p1 atom.release.sys.global.add.u64 %rd3, [%rd1], %rd2;\n"
	"	ret;\n"
	"}\n";

/*
 * With the context current: retain the primary context of every other GPU this one can
 * reach and enable peer access to it, so that cuMemAlloc memory of a GPU in another
 * thread of this process is reached by address (legacy memory needs no import there,
 * docs/nvl.md) and VMM mappings made for this device reach across. Best effort: a GPU
 * that cannot be reached is left out (the topology then does not make its ranks NVL
 * peers). Returns the bit mask of the ordinals retained (at most 32).
 */
static uint32_t peers_enable(struct dvx_hal_gpu *gpu)
{
	uint32_t mask = 0;
	int n = 0, o;

	if (cu.cuDeviceGetCount(&n) != CUDA_SUCCESS)
		return 0;
	for (o = 0; o < n && o < 32; o++) {
		CUcontext pc;
		CUdevice pd;
		CUresult r;
		int can = 0;

		if (o == gpu->ordinal || cu.cuDeviceGet(&pd, o) != CUDA_SUCCESS ||
		    cu.cuDeviceCanAccessPeer(&can, (CUdevice)gpu->handle, pd) != CUDA_SUCCESS ||
		    !can || cu.cuDevicePrimaryCtxRetain(&pc, pd) != CUDA_SUCCESS)
			continue;
		r = cu.cuCtxEnablePeerAccess(pc, 0);
		if (r == CUDA_SUCCESS || r == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
			mask |= 1u << o;
		else
			(void)cu.cuDevicePrimaryCtxRelease(pd);
	}
	return mask;
}

static void peers_release(uint32_t mask)
{
	CUdevice pd;
	int o;

	for (o = 0; o < 32; o++)
		if ((mask & (1u << o)) && cu.cuDeviceGet(&pd, o) == CUDA_SUCCESS)
			(void)cu.cuDevicePrimaryCtxRelease(pd);
}

int dvx_cuda_gpu_ctx_retain(struct dvx_hal_gpu *gpu)
{
	CUcontext ctx, prev;
	CUmodule m;
	CUfunction f;
	CUresult r;

	CU_READY(gpu, "gpu_ctx_retain");
	CU_CHECK(gpu, "gpu_ctx_retain", cuDevicePrimaryCtxRetain(&ctx, (CUdevice)gpu->handle));
	/*
	 * The stream-atomic kernel is loaded now, function and all, not at its first use:
	 * a module load waits for the kernels running on the device and holds this
	 * process's copies meanwhile (bench/gpu-dma-bench), so a signal queued while a
	 * kernel of this process spins for it would wait for that kernel's timeout.
	 */
	r = cu.cuCtxPushCurrent(ctx);
	if (r == CUDA_SUCCESS) {
		r = cu.cuModuleLoadData(&m, dvx_fatbin_hal_cuda_kernels_len ?
					    (const void *)dvx_fatbin_hal_cuda_kernels :
					    (const void *)stream_atomic_ptx);
		if (r == CUDA_SUCCESS) {
			r = cu.cuModuleGetFunction(&f, m, "dvx_hal_stream_atomic");
			if (r != CUDA_SUCCESS)
				(void)cu.cuModuleUnload(m);
		}
		if (r == CUDA_SUCCESS)
			gpu->peers = peers_enable(gpu);
		(void)cu.cuCtxPopCurrent(&prev);
	}
	if (r != CUDA_SUCCESS) {
		(void)cu.cuDevicePrimaryCtxRelease((CUdevice)gpu->handle);
		return cu_fail(gpu, r, "gpu_ctx_retain", "loading the hal's stream-atomic kernel");
	}
	gpu->aux = m;
	gpu->aux_fn = f;
	gpu->priv = ctx;
	gpu->ctx_retained = 1;
	return 0;
}

int dvx_cuda_gpu_ctx_release(struct dvx_hal_gpu *gpu)
{
	CU_READY(gpu, "gpu_ctx_release");
	if (gpu->aux) {
		/* the stream-atomic kernel's module lives in this context: unload it there */
		CUcontext prev;

		CU_CHECK(gpu, "gpu_ctx_release", cuCtxPushCurrent((CUcontext)gpu->priv));
		(void)cu.cuModuleUnload((CUmodule)gpu->aux);
		gpu->aux = NULL;
		gpu->aux_fn = NULL;
		(void)cu.cuCtxPopCurrent(&prev);
	}
	peers_release(gpu->peers);
	gpu->peers = 0;
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

/*
 * Map allocation @h of @len bytes (a multiple of @gran) at a fresh address, readable and
 * writable by this device: cuMemAddressReserve, cuMemMap, cuMemSetAccess. On failure
 * everything it did is undone, @h is released, and the failure is recorded for @op.
 */
static int map_handle(struct dvx_hal_gpu *gpu, CUmemGenericAllocationHandle h, size_t len,
		      size_t gran, const char *op, CUdeviceptr *out)
{
	CUmemAccessDesc acc;
	CUdeviceptr va;
	CUresult r;
	const char *call;

	r = cu.cuMemAddressReserve(&va, len, gran, 0, 0);
	call = "cuMemAddressReserve";
	if (r != CUDA_SUCCESS)
		goto err_release;
	r = cu.cuMemMap(va, len, 0, h, 0);
	call = "cuMemMap";
	if (r != CUDA_SUCCESS)
		goto err_free_va;
	memset(&acc, 0, sizeof(acc));
	acc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	acc.location.id = gpu->handle;		/* this device reads and writes it */
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	r = cu.cuMemSetAccess(va, len, &acc, 1);
	call = "cuMemSetAccess";
	if (r != CUDA_SUCCESS)
		goto err_unmap;
	*out = va;
	return 0;

err_unmap:
	cu.cuMemUnmap(va, len);
err_free_va:
	cu.cuMemAddressFree(va, len);
err_release:
	cu.cuMemRelease(h);
	return cu_fail(gpu, r, op, call);
}

/* cuMemCreate, then map_handle(); cuMemAlloc for LEGACY memory. */
int dvx_cuda_gpu_mem_create(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_mem_req *req,
			    struct dvx_hal_gpu_mem *mem)
{
	CUmemAllocationProp prop;
	CUmemGenericAllocationHandle h;
	CUdeviceptr va;
	size_t gran = 0, len;
	int err;

	CU_READY(gpu, "gpu_mem_create");
	if (req->flags & DVX_HAL_GPU_MEM_LEGACY) {
		len = (size_t)DVX_ALIGN_UP(req->len, 4096u);
		CU_CHECK(gpu, "gpu_mem_create", cuMemAlloc(&va, len));
		memset(mem, 0, sizeof(*mem));
		mem->dptr = (uint64_t)va;
		mem->len = len;
		mem->flags = DVX_HAL_GPU_MEM_LEGACY;
		return 0;
	}
	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = gpu->handle;
	if (req->flags & DVX_HAL_GPU_MEM_EXPORT)
		prop.requestedHandleTypes |= CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	if (req->flags & DVX_HAL_GPU_MEM_FABRIC)
		prop.requestedHandleTypes |= CU_MEM_HANDLE_TYPE_FABRIC;
	if (req->flags & DVX_HAL_GPU_MEM_RDMA)
		prop.allocFlags.gpuDirectRDMACapable = 1;
	CU_CHECK(gpu, "gpu_mem_create",
		 cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
	if (!gran)
		gran = 2u << 20;
	len = (size_t)DVX_ALIGN_UP(req->len, (uint64_t)gran);
	CU_CHECK(gpu, "gpu_mem_create", cuMemCreate(&h, len, &prop, 0));
	err = map_handle(gpu, h, len, gran, "gpu_mem_create", &va);
	if (err)
		return err;
	memset(mem, 0, sizeof(*mem));
	mem->dptr = (uint64_t)va;
	mem->len = len;
	mem->handle = (uint64_t)h;
	mem->flags = req->flags & (DVX_HAL_GPU_MEM_RDMA | DVX_HAL_GPU_MEM_EXPORT |
				   DVX_HAL_GPU_MEM_FABRIC);
	return 0;
}

int dvx_cuda_gpu_mem_free(struct dvx_hal_gpu *gpu, struct dvx_hal_gpu_mem *mem)
{
	CU_READY(gpu, "gpu_mem_free");
	if (mem->flags & DVX_HAL_GPU_MEM_FOREIGN)
		return dvx_hal_diag_set(&gpu->diag, -EINVAL, DVX_DIAG_ARG, "gpu_mem_free",
					"memory found by mem_lookup is not ours to free");
	if ((mem->flags & DVX_HAL_GPU_MEM_LEGACY) && (mem->flags & DVX_HAL_GPU_MEM_IMPORTED)) {
		CU_CHECK(gpu, "gpu_mem_free", cuIpcCloseMemHandle((CUdeviceptr)mem->dptr));
	} else if (mem->flags & DVX_HAL_GPU_MEM_LEGACY) {
		CU_CHECK(gpu, "gpu_mem_free", cuMemFree((CUdeviceptr)mem->dptr));
	} else {
		CU_CHECK(gpu, "gpu_mem_free", cuMemUnmap((CUdeviceptr)mem->dptr, mem->len));
		CU_CHECK(gpu, "gpu_mem_free", cuMemAddressFree((CUdeviceptr)mem->dptr, mem->len));
		CU_CHECK(gpu, "gpu_mem_free",
			 cuMemRelease((CUmemGenericAllocationHandle)mem->handle));
	}
	memset(mem, 0, sizeof(*mem));
	return 0;
}

int dvx_cuda_gpu_mem_export(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_mem *mem,
			    uint32_t type, struct dvx_hal_gpu_handle *h)
{
	static const uint32_t need[] = {
		[DVX_HAL_GPU_HANDLE_FD] = DVX_HAL_GPU_MEM_EXPORT,
		[DVX_HAL_GPU_HANDLE_FABRIC] = DVX_HAL_GPU_MEM_FABRIC,
		[DVX_HAL_GPU_HANDLE_IPC] = DVX_HAL_GPU_MEM_LEGACY,
	};
	CUmemGenericAllocationHandle ah = (CUmemGenericAllocationHandle)mem->handle;
	struct dvx_hal_gpu_handle out;
	CUresult r = CUDA_SUCCESS;
	const char *call = NULL;
	int retained = 0;

	CU_READY(gpu, "gpu_mem_export");
	if (!(mem->flags & need[type]))
		return dvx_hal_diag_set(&gpu->diag, -EINVAL, DVX_DIAG_ARG, "gpu_mem_export",
					"memory was not created for that handle type");
	memset(&out, 0, sizeof(out));
	out.type = type;
	out.fd = -1;
	out.len = mem->len;
	if (type == DVX_HAL_GPU_HANDLE_IPC) {
		CUipcMemHandle ih;

		DVX_STATIC_ASSERT(sizeof(ih) == DVX_HAL_GPU_HANDLE_BYTES, "CUipcMemHandle");
		CU_CHECK(gpu, "gpu_mem_export", cuIpcGetMemHandle(&ih, (CUdeviceptr)mem->dptr));
		memcpy(out.data, &ih, sizeof(ih));
		*h = out;
		return 0;
	}
	if (mem->flags & DVX_HAL_GPU_MEM_FOREIGN) {
		/* found by mem_lookup: the allocation's handle, held for the export only */
		CU_CHECK(gpu, "gpu_mem_export",
			 cuMemRetainAllocationHandle(&ah, (void *)(uintptr_t)mem->dptr));
		retained = 1;
	}
	if (type == DVX_HAL_GPU_HANDLE_FD) {
		int f = -1;

		r = cu.cuMemExportToShareableHandle(&f, ah, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
						    0);
		out.fd = f;
	} else {
		CUmemFabricHandle fh;

		DVX_STATIC_ASSERT(sizeof(fh) == DVX_HAL_GPU_HANDLE_BYTES, "CUmemFabricHandle");
		r = cu.cuMemExportToShareableHandle(&fh, ah, CU_MEM_HANDLE_TYPE_FABRIC, 0);
		memcpy(out.data, &fh, sizeof(fh));
	}
	call = "cuMemExportToShareableHandle";
	if (retained)
		(void)cu.cuMemRelease(ah);
	if (r != CUDA_SUCCESS)
		return cu_fail(gpu, r, "gpu_mem_export", call);
	*h = out;
	return 0;
}

int dvx_cuda_gpu_mem_import(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_handle *h,
			    struct dvx_hal_gpu_mem *mem)
{
	CUmemGenericAllocationHandle ah;
	CUmemAllocationProp prop;
	CUdeviceptr va = 0;
	size_t gran = 0, len;
	CUresult r;
	int err;

	CU_READY(gpu, "gpu_mem_import");
	if (h->type == DVX_HAL_GPU_HANDLE_IPC) {
		CUipcMemHandle ih;

		memcpy(&ih, h->data, sizeof(ih));
		CU_CHECK(gpu, "gpu_mem_import",
			 cuIpcOpenMemHandle(&va, ih, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
		memset(mem, 0, sizeof(*mem));
		mem->dptr = (uint64_t)va;
		mem->len = h->len;
		mem->flags = DVX_HAL_GPU_MEM_LEGACY | DVX_HAL_GPU_MEM_IMPORTED;
		return 0;
	}
	if (h->type == DVX_HAL_GPU_HANDLE_FD)
		CU_CHECK(gpu, "gpu_mem_import",
			 cuMemImportFromShareableHandle(&ah, (void *)(uintptr_t)h->fd,
							CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
	else
		CU_CHECK(gpu, "gpu_mem_import",
			 cuMemImportFromShareableHandle(&ah, (void *)(uintptr_t)h->data,
							CU_MEM_HANDLE_TYPE_FABRIC));
	/* the exporter's granularity: the mapping must be a multiple of it */
	r = cu.cuMemGetAllocationPropertiesFromHandle(&prop, ah);
	if (r == CUDA_SUCCESS)
		r = cu.cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
	if (r != CUDA_SUCCESS) {
		cu.cuMemRelease(ah);
		return cu_fail(gpu, r, "gpu_mem_import", "cuMemGetAllocationGranularity");
	}
	if (!gran)
		gran = 2u << 20;
	len = (size_t)DVX_ALIGN_UP(h->len, (uint64_t)gran);
	err = map_handle(gpu, ah, len, gran, "gpu_mem_import", &va);
	if (err)
		return err;
	memset(mem, 0, sizeof(*mem));
	mem->dptr = (uint64_t)va;
	mem->len = len;
	mem->handle = (uint64_t)ah;
	mem->flags = DVX_HAL_GPU_MEM_IMPORTED | (h->type == DVX_HAL_GPU_HANDLE_FD ?
						 DVX_HAL_GPU_MEM_EXPORT : DVX_HAL_GPU_MEM_FABRIC);
	return 0;
}

int dvx_cuda_gpu_mem_lookup(struct dvx_hal_gpu *gpu, uint64_t dptr, struct dvx_hal_gpu_mem *mem)
{
	/* one call, and no error for memory the driver does not know (host memory): the
	 * attributes of such a pointer come back zero */
	CUpointer_attribute at[] = {
		CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
		CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE,
		CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES,
		CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE,
		CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
	};
	unsigned int type = 0, legacy = 0, rdma = 0;
	unsigned long long handles = 0;
	int ordinal = -1;
	void *val[] = { &type, &legacy, &handles, &rdma, &ordinal };
	CUdeviceptr base = 0;
	size_t size = 0;
	uint32_t flags = DVX_HAL_GPU_MEM_FOREIGN;

	CU_READY(gpu, "gpu_mem_lookup");
	CU_CHECK(gpu, "gpu_mem_lookup",
		 cuPointerGetAttributes(DVX_ARRAY_SIZE(at), at, val, (CUdeviceptr)dptr));
	if (type != CU_MEMORYTYPE_DEVICE)
		return -ENOENT;		/* not memory the driver knows as device memory */
	/* the mapped region around it (the reserved range may hold several) */
	CU_CHECK(gpu, "gpu_mem_lookup", cuMemGetAddressRange(&base, &size, (CUdeviceptr)dptr));
	if (legacy) {
		flags |= DVX_HAL_GPU_MEM_LEGACY;	/* cuMemAlloc memory */
	} else {
		if (handles & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
			flags |= DVX_HAL_GPU_MEM_EXPORT;
		if (handles & CU_MEM_HANDLE_TYPE_FABRIC)
			flags |= DVX_HAL_GPU_MEM_FABRIC;
		if (rdma)
			flags |= DVX_HAL_GPU_MEM_RDMA;
	}
	memset(mem, 0, sizeof(*mem));
	mem->dptr = (uint64_t)base;
	mem->len = size;
	mem->flags = flags;
	mem->ordinal = ordinal;
	return 0;
}

int dvx_cuda_gpu_peer_access(struct dvx_hal_gpu *gpu, int peer_ordinal, int *can)
{
	CUdevice pd;
	int v = 0;

	CU_READY(gpu, "gpu_peer_access");
	CU_CHECK(gpu, "gpu_peer_access", cuDeviceGet(&pd, peer_ordinal));
	CU_CHECK(gpu, "gpu_peer_access", cuDeviceCanAccessPeer(&v, (CUdevice)gpu->handle, pd));
	*can = v ? 1 : 0;
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
	/*
	 * From pageable memory cuMemcpyHtoD returns once the bytes are staged, before the
	 * DMA to device memory is done (CUDA's "API synchronization behavior"); a peer that
	 * writes the same word right after would race the copy. Wait for the default
	 * stream, which holds only this copy: dvx's streams are non-blocking.
	 */
	CU_CHECK(gpu, "gpu_memcpy_htod", cuStreamSynchronize(NULL));
	return 0;
}

int dvx_cuda_gpu_memcpy_dtoh(struct dvx_hal_gpu *gpu, void *dst, uint64_t dptr, uint64_t len)
{
	CU_READY(gpu, "gpu_memcpy_dtoh");
	CU_CHECK(gpu, "gpu_memcpy_dtoh", cuMemcpyDtoH(dst, (CUdeviceptr)dptr, (size_t)len));
	return 0;
}

int dvx_cuda_gpu_memcpy_async(struct dvx_hal_gpu *gpu, uint64_t dst, uint64_t src, uint64_t len,
			      void *stream)
{
	CU_READY(gpu, "gpu_memcpy_async");
	CU_CHECK(gpu, "gpu_memcpy_async",
		 cuMemcpyAsync((CUdeviceptr)dst, (CUdeviceptr)src, (size_t)len, (CUstream)stream));
	return 0;
}

int dvx_cuda_gpu_stream_atomic(struct dvx_hal_gpu *gpu, void *stream, uint64_t dptr, uint32_t op,
			       uint64_t value)
{
	CUdeviceptr a = (CUdeviceptr)dptr;
	unsigned int o = op;
	unsigned long long v = value;
	void *args[] = { &a, &o, &v };

	CU_READY(gpu, "gpu_stream_atomic");
	if (!gpu->aux_fn)
		return dvx_hal_diag_set(&gpu->diag, -EINVAL, DVX_DIAG_STATE, "gpu_stream_atomic",
					"no context retained (gpu_ctx_retain loads the kernel)");
	CU_CHECK(gpu, "gpu_stream_atomic",
		 cuLaunchKernel((CUfunction)gpu->aux_fn, 1, 1, 1, 1, 1, 1, 0, (CUstream)stream,
				args, NULL));
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
	.gpu_mem_import = dvx_cuda_gpu_mem_import,
	.gpu_mem_lookup = dvx_cuda_gpu_mem_lookup,
	.gpu_peer_access = dvx_cuda_gpu_peer_access,
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
	.gpu_memcpy_async = dvx_cuda_gpu_memcpy_async,
	.gpu_stream_atomic = dvx_cuda_gpu_stream_atomic,
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
