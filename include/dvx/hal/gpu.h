/* SPDX-License-Identifier: MIT */
/*
 * dvx/hal/gpu.h - the hal's GPU table: the CUDA driver API (never the runtime) behind
 * one seam, so GPU code can be mocked and faults injected. hal/cuda.c implements it
 * (libcuda.so.1 loaded at run time); the mock fakes it.
 */
#ifndef DVX_HAL_GPU_H
#define DVX_HAL_GPU_H

#include <dvx/hal/hal.h>

DVX_BEGIN_DECLS

/* dvx_hal_gpu_mem_req.flags and dvx_hal_gpu_mem.flags */
enum {
	DVX_HAL_GPU_MEM_RDMA = 1u << 0,		/* create with gpuDirectRDMACapable */
	DVX_HAL_GPU_MEM_EXPORT = 1u << 1,	/* exportable as a POSIX file descriptor */
	DVX_HAL_GPU_MEM_FABRIC = 1u << 2,	/* exportable as a fabric handle */
	DVX_HAL_GPU_MEM_LEGACY = 1u << 3,	/* cuMemAlloc, not a VMM allocation: shared
						 * by legacy IPC handles only */
	/* dvx_hal_gpu_mem.flags only: how the backend came by the memory */
	DVX_HAL_GPU_MEM_IMPORTED = 1u << 8,	/* mapped from a handle (gpu_mem_import) */
	DVX_HAL_GPU_MEM_FOREIGN = 1u << 9,	/* found by gpu_mem_lookup: not ours to free */
};

/**
 * enum dvx_hal_gpu_handle_type - how device memory is shared with another process.
 * @DVX_HAL_GPU_HANDLE_FD:	a POSIX file descriptor of a VMM allocation
 *				(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR); passed between
 *				processes of one host over a UNIX socket
 * @DVX_HAL_GPU_HANDLE_FABRIC:	a 64-byte fabric handle of a VMM allocation
 *				(CU_MEM_HANDLE_TYPE_FABRIC); plain bytes, valid across the
 *				NVLink domain
 * @DVX_HAL_GPU_HANDLE_IPC:	a 64-byte legacy IPC handle of cuMemAlloc memory
 *				(cuIpcGetMemHandle); plain bytes, valid on the host, not in
 *				the exporting process itself
 */
enum dvx_hal_gpu_handle_type {
	DVX_HAL_GPU_HANDLE_FD = 1,
	DVX_HAL_GPU_HANDLE_FABRIC = 2,
	DVX_HAL_GPU_HANDLE_IPC = 3,
};

#define DVX_HAL_GPU_HANDLE_BYTES 64

/**
 * struct dvx_hal_gpu_handle - a shareable handle of device memory (gpu_mem_export,
 * gpu_mem_import).
 * @type:	enum dvx_hal_gpu_handle_type
 * @fd:		FD: the file descriptor, owned by whoever holds the struct; else -1
 * @len:	bytes of the allocation (what the importer maps)
 * @data:	FABRIC and IPC: the handle's bytes; zero for FD
 */
struct dvx_hal_gpu_handle {
	uint32_t type;
	int32_t fd;
	uint64_t len;
	uint8_t data[DVX_HAL_GPU_HANDLE_BYTES];
};

/* gpu_stream_atomic operations */
enum dvx_hal_gpu_atomic_op {
	DVX_HAL_GPU_ATOMIC_SET = 1,	/* store the value */
	DVX_HAL_GPU_ATOMIC_ADD = 2,	/* add the value (wrapping) */
};

/* dvx_hal_gpu_host_register() flags */
enum {
	DVX_HAL_GPU_HOST_IOMEM = 1u << 0,	/* I/O memory (a UAR page): IOMEMORY */
};

/* dvx_hal_gpu_dmabuf_fd() flags */
enum {
	DVX_HAL_GPU_DMABUF_PCIE = 1u << 0,	/* mapping type PCIe (Data-Direct NICs) */
};

/**
 * struct dvx_hal_gpu_attr - what a GPU is and can do, from cuDeviceGetAttribute.
 * @name:	product name
 * @pci:	PCI address "dddd:bb:dd.f", lower case
 * @ordinal:	CUDA device ordinal
 * @driver_version: cuDriverGetVersion (13000 for 13.0)
 * @cc_major:	compute capability, major
 * @cc_minor:	compute capability, minor
 * @sm_count:	multiprocessors
 * @max_threads_per_block: largest block
 * @warp_size:	threads per warp
 * @gdr_writes_ordering: CU_GPU_DIRECT_RDMA_WRITES_ORDERING_* (0 none, 100 owner, 200 all)
 * @total_mem:	device memory in bytes
 * @gdr:	GPUDirect RDMA supported
 * @dmabuf:	dma-buf export supported
 * @vmm:	virtual memory management (cuMemCreate) supported
 * @vmm_rdma:	cuMemCreate accepts gpuDirectRDMACapable
 * @posix_fd:	POSIX fd handles supported
 * @host_register: cuMemHostRegister supported
 * @can_map_host: host memory can be mapped into the device
 * @unified_addressing: one address space with the host
 * @fabric:	fabric handles supported (CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED)
 * @uuid:	the device's UUID (cuDeviceGetUuid): the same GPU seen from any process
 * @granularity: the allocation granularity of exportable device memory (bytes)
 */
struct dvx_hal_gpu_attr {
	char name[DVX_HAL_NAME_MAX];
	char pci[DVX_HAL_PCI_MAX];
	int32_t ordinal;
	int32_t driver_version;
	int32_t cc_major;
	int32_t cc_minor;
	uint32_t sm_count;
	uint32_t max_threads_per_block;
	uint32_t warp_size;
	uint32_t gdr_writes_ordering;
	uint64_t total_mem;
	uint8_t gdr;
	uint8_t dmabuf;
	uint8_t vmm;
	uint8_t vmm_rdma;
	uint8_t posix_fd;
	uint8_t host_register;
	uint8_t can_map_host;
	uint8_t unified_addressing;
	uint8_t fabric;
	uint8_t rsvd[7];
	uint8_t uuid[16];
	uint64_t granularity;
};

/**
 * struct dvx_hal_gpu - one GPU as the hal drives it, in caller storage.
 * @hal:	the backend instance (set by dvx_hal_gpu_init())
 * @priv:	backend: the retained primary context, NULL when none
 * @ordinal:	device ordinal chosen by gpu_get, -1 before
 * @handle:	backend device handle (CUdevice)
 * @ctx_retained: 1 while the primary context is retained
 * @peers:	backend: the ordinals (bit mask) of the other GPUs whose primary contexts
 *		are retained with this one and reached by peer access (several GPUs in
 *		one process: cuMemAlloc memory by address), released with the context
 * @aux:	backend: per-context helper state (the CUDA backend's module of its own
 *		kernels), released with the context
 * @aux_fn:	backend: the stream-atomic kernel in it
 * @diag:	the last failure of a call on this handle (CUresult, its name)
 * @log:	optional log sink, kept across dvx_hal_gpu_init()
 */
struct dvx_hal_gpu {
	const struct dvx_hal *hal;
	void *priv;
	int32_t ordinal;
	int32_t handle;
	uint32_t ctx_retained;
	uint32_t peers;
	void *aux;
	void *aux_fn;
	struct dvx_diag diag;
	struct dvx_log log;
};

/**
 * struct dvx_hal_gpu_mem_req - device memory to create.
 * @len:	bytes (rounded up to the allocation granularity)
 * @flags:	DVX_HAL_GPU_MEM_* wanted
 */
struct dvx_hal_gpu_mem_req {
	uint64_t len;
	uint32_t flags;
	uint32_t rsvd;
};

/**
 * struct dvx_hal_gpu_mem - device memory created, mapped and made accessible.
 * @priv:	backend
 * @dptr:	device address of the first byte
 * @len:	mapped length (granularity multiple)
 * @handle:	backend allocation handle (CUmemGenericAllocationHandle)
 * @flags:	DVX_HAL_GPU_MEM_* obtained
 * @ordinal:	gpu_mem_lookup: the device the memory lives on (CUDA ordinal), -1 when
 *		the backend cannot say; the other calls leave it 0
 */
struct dvx_hal_gpu_mem {
	void *priv;
	uint64_t dptr;
	uint64_t len;
	uint64_t handle;
	uint32_t flags;
	int32_t ordinal;
};

/** struct dvx_hal_gpu_module - a loaded module (CUmodule in @priv). */
struct dvx_hal_gpu_module {
	void *priv;
};

/**
 * struct dvx_hal_gpu_launch - one kernel launch.
 * @func:	from gpu_module_function
 * @grid:	blocks in x, y, z
 * @block:	threads in x, y, z
 * @shmem:	dynamic shared memory bytes
 * @stream:	from gpu_stream_create, NULL for the default stream
 * @args:	kernel arguments, one pointer per parameter (cuLaunchKernel)
 */
struct dvx_hal_gpu_launch {
	void *func;
	uint32_t grid[3];
	uint32_t block[3];
	uint32_t shmem;
	uint32_t rsvd;
	void *stream;
	void **args;
};

/**
 * dvx_hal_cu_errno() - the errno dvx reports for a CUresult (docs/errors.md, gpu.md).
 * @cu_result:	the driver's CUresult value
 *
 * Return: 0 for CUDA_SUCCESS, else a negative errno (-EIO for values without a better one).
 */
int dvx_hal_cu_errno(int cu_result);

/**
 * struct dvx_hal_gpu_ops - a backend's GPU entry points. Every entry takes the GPU
 * handle, whose diag receives the CUresult and its name on failure. A NULL entry means
 * the backend does not provide the call; the wrappers then return -ENOSYS.
 */
struct dvx_hal_gpu_ops {
	int (*gpu_init)(struct dvx_hal_gpu *gpu);
	int (*gpu_count)(struct dvx_hal_gpu *gpu, int *count);
	int (*gpu_get)(struct dvx_hal_gpu *gpu, int ordinal, const char *pci);
	int (*gpu_query)(struct dvx_hal_gpu *gpu, struct dvx_hal_gpu_attr *attr);
	int (*gpu_ctx_retain)(struct dvx_hal_gpu *gpu);
	int (*gpu_ctx_release)(struct dvx_hal_gpu *gpu);
	int (*gpu_ctx_set_current)(struct dvx_hal_gpu *gpu);
	int (*gpu_mem_create)(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_mem_req *req,
			      struct dvx_hal_gpu_mem *mem);
	int (*gpu_mem_free)(struct dvx_hal_gpu *gpu, struct dvx_hal_gpu_mem *mem);
	int (*gpu_mem_export)(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_mem *mem,
			      uint32_t type, struct dvx_hal_gpu_handle *h);
	int (*gpu_mem_import)(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_handle *h,
			      struct dvx_hal_gpu_mem *mem);
	int (*gpu_mem_lookup)(struct dvx_hal_gpu *gpu, uint64_t dptr, struct dvx_hal_gpu_mem *mem);
	int (*gpu_peer_access)(struct dvx_hal_gpu *gpu, int peer_ordinal, int *can);
	int (*gpu_dmabuf_fd)(struct dvx_hal_gpu *gpu, uint64_t dptr, uint64_t len, uint32_t flags,
			     int *fd);
	int (*gpu_host_register)(struct dvx_hal_gpu *gpu, void *addr, uint64_t len, uint32_t flags,
				 uint64_t *dptr);
	int (*gpu_host_unregister)(struct dvx_hal_gpu *gpu, void *addr);
	int (*gpu_module_load)(struct dvx_hal_gpu *gpu, const void *image,
			       struct dvx_hal_gpu_module *mod);
	int (*gpu_module_unload)(struct dvx_hal_gpu *gpu, struct dvx_hal_gpu_module *mod);
	int (*gpu_module_function)(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_module *mod,
				   const char *name, void **func);
	int (*gpu_launch)(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_launch *launch);
	int (*gpu_stream_create)(struct dvx_hal_gpu *gpu, void **stream);
	int (*gpu_stream_destroy)(struct dvx_hal_gpu *gpu, void *stream);
	int (*gpu_stream_query)(struct dvx_hal_gpu *gpu, void *stream);
	int (*gpu_memcpy_htod)(struct dvx_hal_gpu *gpu, uint64_t dptr, const void *src, uint64_t len);
	int (*gpu_memcpy_dtoh)(struct dvx_hal_gpu *gpu, void *dst, uint64_t dptr, uint64_t len);
	int (*gpu_memcpy_async)(struct dvx_hal_gpu *gpu, uint64_t dst, uint64_t src, uint64_t len,
				void *stream);
	int (*gpu_stream_atomic)(struct dvx_hal_gpu *gpu, void *stream, uint64_t dptr, uint32_t op,
				 uint64_t value);
};

/*
 * GPU wrappers. dvx_hal_gpu_init() binds @gpu to @hal (keeping gpu->log) and runs the
 * backend's init (cuInit); every other wrapper takes the bound handle, checks its
 * arguments (-EINVAL, recorded in gpu->diag), answers -ENOSYS when the backend lacks
 * the entry, and on failure leaves gpu->diag naming the operation (with the CUresult
 * and its name when the driver failed).
 */
/**
 * dvx_hal_gpu_init(), dvx_hal_gpu_count(), dvx_hal_gpu_get(), dvx_hal_gpu_query(),
 * dvx_hal_gpu_ctx_retain(), dvx_hal_gpu_ctx_release(), dvx_hal_gpu_ctx_set_current() -
 * bind a GPU handle to a backend, pick a device, query it and hold its primary
 * context; wrappers of the struct dvx_hal_gpu_ops entries gpu_init, gpu_count, gpu_get,
 * gpu_query, gpu_ctx_retain, gpu_ctx_release and gpu_ctx_set_current.
 * @hal:	gpu_init: the backend instance (with gpu_* entries: dvx_hal_cuda(),
 *		dvx_hal_linux(), the mock)
 * @gpu:	the handle, caller storage: gpu_init clears it (keeping gpu->log), binds it
 *		to @hal and sets ordinal and handle to -1; the others use it
 * @count:	gpu_count: set to the number of GPUs the driver sees
 * @ordinal:	gpu_get: device ordinal, used when @pci is NULL or empty
 * @pci:	gpu_get: PCI address of the device, or NULL
 * @attr:	gpu_query: caller storage for the device's attributes
 *
 * gpu_get sets gpu->ordinal and gpu->handle; gpu_query needs them. ctx_retain
 * retains the device's primary context (gpu->priv, gpu->ctx_retained) and ctx_release
 * gives it back; ctx_set_current makes it current on the calling thread, which CUDA
 * calls on that thread then need. Common contract: a NULL @hal/@gpu or an unbound
 * handle is -EINVAL; a bad argument (NULL output, neither @ordinal >= 0 nor @pci, no
 * device chosen, a context already retained or not retained) is -EINVAL recorded in
 * gpu->diag; an entry the backend lacks is -ENOSYS; a driver failure is the errno of
 * its CUresult (dvx_hal_cu_errno()) with the CUresult and its name in gpu->diag. No
 * driver on the machine makes gpu_init fail with -ENODEV.
 *
 * Context: process context, one thread at a time per @gpu. Return: 0 or a negative
 * errno.
 */
int dvx_hal_gpu_init(const struct dvx_hal *hal, struct dvx_hal_gpu *gpu);
int dvx_hal_gpu_count(struct dvx_hal_gpu *gpu, int *count);
int dvx_hal_gpu_get(struct dvx_hal_gpu *gpu, int ordinal, const char *pci);
int dvx_hal_gpu_query(struct dvx_hal_gpu *gpu, struct dvx_hal_gpu_attr *attr);
int dvx_hal_gpu_ctx_retain(struct dvx_hal_gpu *gpu);
int dvx_hal_gpu_ctx_release(struct dvx_hal_gpu *gpu);
int dvx_hal_gpu_ctx_set_current(struct dvx_hal_gpu *gpu);

/**
 * dvx_hal_gpu_mem_alloc(), dvx_hal_gpu_mem_free(), dvx_hal_gpu_mem_export(),
 * dvx_hal_gpu_mem_import(), dvx_hal_gpu_mem_lookup(), dvx_hal_gpu_dmabuf_fd(),
 * dvx_hal_gpu_host_register(), dvx_hal_gpu_host_unregister() - device memory: create
 * it, share it with other processes, find the allocation around an address, hand it to
 * a NIC, and host memory for the GPU; wrappers of the struct dvx_hal_gpu_ops entries of
 * the same names.
 * @gpu:	a handle with a device chosen (and, for the CUDA backend, its context
 *		current on the calling thread)
 * @req:	mem_create: length (rounded up to the allocation granularity) and
 *		DVX_HAL_GPU_MEM_* flags wanted: RDMA, EXPORT and FABRIC for a VMM
 *		allocation (cuMemCreate), LEGACY alone for cuMemAlloc memory
 * @mem:	mem_create, mem_import, mem_lookup: caller storage for the allocation
 *		(dptr of its first byte, len, the flags obtained); mem_free and
 *		mem_export: that allocation
 * @type:	mem_export: enum dvx_hal_gpu_handle_type wanted: FD needs memory created
 *		with EXPORT, FABRIC with FABRIC, IPC LEGACY memory
 * @h:		mem_export: caller storage for the handle (h->fd, when FD, is a new file
 *		descriptor the caller owns and closes with dvx_hal_fd_close()); mem_import:
 *		a handle from another process (h->fd stays the caller's)
 * @fd:		dmabuf_fd: set to a new dma-buf file descriptor of [@dptr, @dptr + @len)
 *		that the caller owns and closes with dvx_hal_fd_close()
 * @dptr:	mem_lookup: any address inside the allocation; dmabuf_fd: device address of
 *		the range; host_register: set to the device address of the registered host
 *		range
 * @len:	bytes of the range
 * @flags:	DVX_HAL_GPU_DMABUF_* (dmabuf_fd) or DVX_HAL_GPU_HOST_* (host_register)
 * @addr:	host range to register (host memory or a mapped UAR page with
 *		DVX_HAL_GPU_HOST_IOMEM), or to unregister
 *
 * mem_create reserves, maps and enables device memory that the caller owns until
 * mem_free (which clears @mem). mem_import maps another process's allocation into
 * this one, readable and writable by this device (VMM: cuMemImportFromShareableHandle,
 * cuMemAddressReserve, cuMemMap, cuMemSetAccess; IPC: cuIpcOpenMemHandle); mem_free
 * undoes it (DVX_HAL_GPU_MEM_IMPORTED set). mem_lookup describes the allocation that
 * contains @dptr (cuMemGetAddressRange): DVX_HAL_GPU_MEM_FOREIGN with LEGACY for
 * cuMemAlloc memory or the handle types it was created with; it is -ENOENT for an
 * address that is not device memory (host memory, for instance), and memory it found
 * can be exported but not freed. Host memory stays the caller's; it must stay mapped
 * until host_unregister. Common contract: a NULL or unbound @gpu is -EINVAL; a bad
 * argument (NULL output, an empty range, memory not created, a handle type the memory
 * was not created for) is -EINVAL recorded in gpu->diag; an entry the backend lacks is
 * -ENOSYS; a driver failure is the errno of its CUresult with the CUresult and its name
 * in gpu->diag.
 *
 * Context: process context, one thread at a time per @gpu. Return: 0 or a negative
 * errno.
 */
int dvx_hal_gpu_mem_alloc(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_mem_req *req,
			   struct dvx_hal_gpu_mem *mem);
int dvx_hal_gpu_mem_free(struct dvx_hal_gpu *gpu, struct dvx_hal_gpu_mem *mem);
int dvx_hal_gpu_mem_export(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_mem *mem,
			   uint32_t type, struct dvx_hal_gpu_handle *h);
int dvx_hal_gpu_mem_import(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_handle *h,
			   struct dvx_hal_gpu_mem *mem);
int dvx_hal_gpu_mem_lookup(struct dvx_hal_gpu *gpu, uint64_t dptr, struct dvx_hal_gpu_mem *mem);
int dvx_hal_gpu_dmabuf_fd(struct dvx_hal_gpu *gpu, uint64_t dptr, uint64_t len, uint32_t flags,
			  int *fd);
int dvx_hal_gpu_host_register(struct dvx_hal_gpu *gpu, void *addr, uint64_t len, uint32_t flags,
			      uint64_t *dptr);
int dvx_hal_gpu_host_unregister(struct dvx_hal_gpu *gpu, void *addr);

/**
 * dvx_hal_gpu_peer_access() - whether this GPU can map another GPU's memory
 * (cuDeviceCanAccessPeer); wrapper of the struct dvx_hal_gpu_ops entry gpu_peer_access.
 * @gpu:	a handle with a device chosen
 * @peer_ordinal: the other device's ordinal (not this one's)
 * @can:	set to 1 when it can, else 0
 *
 * Context: process context. Return: 0, -EINVAL (NULL @can, no device chosen, @peer_ordinal
 * negative or this device's own), -ENOSYS, or the errno of the driver's CUresult.
 */
int dvx_hal_gpu_peer_access(struct dvx_hal_gpu *gpu, int peer_ordinal, int *can);

/**
 * dvx_hal_gpu_module_load(), dvx_hal_gpu_module_unload(), dvx_hal_gpu_module_function(),
 * dvx_hal_gpu_launch(), dvx_hal_gpu_stream_create(), dvx_hal_gpu_stream_destroy(),
 * dvx_hal_gpu_stream_query(), dvx_hal_gpu_memcpy_htod(), dvx_hal_gpu_memcpy_dtoh(),
 * dvx_hal_gpu_memcpy_async(), dvx_hal_gpu_stream_atomic() - load code, launch it on
 * streams, copy memory and order a signal after a stream's work; wrappers of the struct
 * dvx_hal_gpu_ops entries of the same names.
 * @gpu:	a handle whose context is current on the calling thread
 * @image:	module_load: a fatbin, cubin or PTX image; only read during the call
 * @mod:	module_load: caller storage for the module (mod->priv); module_unload
 *		and module_function: that module
 * @name:	module_function: the kernel's (extern "C") name
 * @func:	module_function: set to the kernel, valid until the module is unloaded
 * @launch:	gpu_launch: function, grid, block, dynamic shared memory, stream and
 *		argument pointers (read during the call only)
 * @stream:	stream_create: set to a new non-blocking stream the caller destroys
 *		with stream_destroy; the others: that stream (NULL: the default stream,
 *		for memcpy_async and stream_atomic)
 * @dptr:	memcpy: device address; stream_atomic: the 8-byte aligned word (this
 *		device's memory or a peer's mapped into this process)
 * @src:	memcpy_htod: host source; memcpy_async: source address
 * @dst:	memcpy_dtoh: host destination; memcpy_async: destination address (either
 *		may be host, device or peer memory: one address space)
 * @len:	memcpy: bytes to copy (htod and dtoh are synchronous)
 * @op:		stream_atomic: enum dvx_hal_gpu_atomic_op
 * @value:	stream_atomic: what is stored or added
 *
 * gpu_launch and memcpy_async only queue the work; stream_query answers 0 when all
 * work on @stream is done and -EBUSY while it runs (neither is recorded as a failure).
 * stream_atomic queues a 64-bit store or add that happens after every earlier piece of
 * work on @stream is complete and whose effect is visible system-wide after that
 * work's writes (the CUDA backend: cuStreamWriteValue64 for SET, a one-thread kernel
 * with a system-scope atomic add for ADD). Common contract: a NULL or unbound @gpu is
 * -EINVAL; a bad argument (NULL image, module, name, function or buffer, a NULL stream
 * to create or destroy, an empty grid, block or range, a misaligned word, an unknown
 * operation) is -EINVAL recorded in gpu->diag; an entry the backend lacks is -ENOSYS;
 * a driver failure is the errno of its CUresult with the CUresult and its name in
 * gpu->diag.
 *
 * Context: process context, one thread at a time per @gpu. Return: 0 or a negative
 * errno.
 */
int dvx_hal_gpu_module_load(struct dvx_hal_gpu *gpu, const void *image,
			    struct dvx_hal_gpu_module *mod);
int dvx_hal_gpu_module_unload(struct dvx_hal_gpu *gpu, struct dvx_hal_gpu_module *mod);
int dvx_hal_gpu_module_function(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_module *mod,
				const char *name, void **func);
int dvx_hal_gpu_launch(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_launch *launch);
int dvx_hal_gpu_stream_create(struct dvx_hal_gpu *gpu, void **stream);
int dvx_hal_gpu_stream_destroy(struct dvx_hal_gpu *gpu, void *stream);
/* 0 when all work on @stream is done, -EBUSY while it runs, else the failure */
int dvx_hal_gpu_stream_query(struct dvx_hal_gpu *gpu, void *stream);
int dvx_hal_gpu_memcpy_htod(struct dvx_hal_gpu *gpu, uint64_t dptr, const void *src, uint64_t len);
int dvx_hal_gpu_memcpy_dtoh(struct dvx_hal_gpu *gpu, void *dst, uint64_t dptr, uint64_t len);
int dvx_hal_gpu_memcpy_async(struct dvx_hal_gpu *gpu, uint64_t dst, uint64_t src, uint64_t len,
			     void *stream);
int dvx_hal_gpu_stream_atomic(struct dvx_hal_gpu *gpu, void *stream, uint64_t dptr, uint32_t op,
			      uint64_t value);

DVX_END_DECLS

#endif /* DVX_HAL_GPU_H */
