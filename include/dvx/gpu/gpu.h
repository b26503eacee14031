/* SPDX-License-Identifier: MIT */
/*
 * dvx/gpu/gpu.h - the GPU host side: device and context, device memory with
 * exportable and dma-buf handles, host memory registered for the GPU (rings, doorbell
 * records, UAR pages), streams, modules and launches, and the library's own device
 * code embedded in libdvx.a.
 *
 * Everything goes through the hal's gpu_* entries (dvx_hal_cuda() on a real machine,
 * the mock in tests); nothing here includes cuda.h or allocates. Objects live in
 * caller storage and remember the struct dvx_gpu they were made on, which must
 * outlive them. Failures return a negative errno and leave gpu->hg.diag saying what
 * failed (the CUresult and its name when the driver refused).
 *
 * Threads: calls on one struct dvx_gpu are not serialised; drive a GPU's control path
 * from one thread at a time. The CUDA context is made current on the calling thread
 * by dvx_gpu_open(); other threads call dvx_gpu_make_current() first.
 */
#ifndef DVX_GPU_GPU_H
#define DVX_GPU_GPU_H

#include <dvx/hal.h>

DVX_BEGIN_DECLS

/**
 * struct dvx_gpu - an opened GPU: its device, attributes and retained primary context.
 * @hg:		the hal handle (hg.diag: the last failure)
 * @attr:	what the device is and supports
 * @page_size:	host page size (registrations are page-granular)
 * @open:	DVX_LIVE between dvx_gpu_open() and dvx_gpu_close() (an open into an open one is -EBUSY)
 */
struct dvx_gpu {
	struct dvx_hal_gpu hg;
	struct dvx_hal_gpu_attr attr;
	uint64_t page_size;
	uint32_t open;
	uint32_t rsvd;
};

/**
 * dvx_gpu_count() - how many GPUs the backend sees.
 * @hal:	backend (dvx_hal_cuda() or a mock)
 * @count:	the number; 0 when there is no driver or no device
 *
 * Return: 0 (also for "no driver": @count is 0), or a negative errno for other
 * failures.
 */
int dvx_gpu_count(const struct dvx_hal *hal, unsigned *count);

/**
 * dvx_gpu_open() - open a GPU by ordinal or PCI address and make its primary context
 * current on the calling thread.
 * @gpu:	caller storage, overwritten (gpu->hg.log may be set before the call)
 * @hal:	backend
 * @ordinal:	CUDA ordinal, used when @pci is NULL or empty
 * @pci:	PCI address ("0000:19:00.0"), or NULL
 *
 * Steps (each unwound on a later failure): init the driver, count devices, get the
 * device, query its attributes, retain the primary context, make it current, read the
 * host page size.
 *
 * Return: 0; -ENODEV (no driver, no such device), -EINVAL, or the driver's error.
 * On failure nothing is held.
 */
int dvx_gpu_open(struct dvx_gpu *gpu, const struct dvx_hal *hal, int ordinal, const char *pci);

/**
 * dvx_gpu_close() - release the primary context. Objects made on @gpu must be gone.
 * Return: 0 or the driver's error (then the context is still held).
 */
int dvx_gpu_close(struct dvx_gpu *gpu);

/** dvx_gpu_make_current() - make @gpu's context current on the calling thread. */
int dvx_gpu_make_current(struct dvx_gpu *gpu);

/* dvx_gpu_mem_alloc() flags */
enum {
	DVX_GPU_MEM_RDMA = 1u << 0,	/* the NIC will DMA it (gpuDirectRDMACapable) */
	DVX_GPU_MEM_EXPORT = 1u << 1,	/* exportable as a POSIX fd (NVLink peers) */
	DVX_GPU_MEM_FABRIC = 1u << 2,	/* exportable as a fabric handle (attr.fabric) */
	DVX_GPU_MEM_LEGACY = 1u << 3,	/* cuMemAlloc memory, shared by legacy IPC only
					 * (not with the others) */
};

/**
 * struct dvx_gpu_mem - device memory: created, mapped, accessible from @gpu.
 * @gpu:	the GPU it lives on
 * @hm:		the hal's record
 * @dptr:	device address
 * @len:	bytes (rounded up to the allocation granularity)
 */
struct dvx_gpu_mem {
	struct dvx_gpu *gpu;
	struct dvx_hal_gpu_mem hm;
	uint64_t dptr;
	uint64_t len;
};

/**
 * dvx_gpu_mem_alloc() - device memory through the virtual memory API (cuMemCreate,
 * cuMemAddressReserve, cuMemMap, cuMemSetAccess), or cuMemAlloc with DVX_GPU_MEM_LEGACY.
 * @gpu:	an open GPU
 * @len:	bytes (> 0)
 * @flags:	DVX_GPU_MEM_*; RDMA needs attr.vmm_rdma, EXPORT attr.posix_fd, FABRIC
 *		attr.fabric; LEGACY goes with none of them
 * @mem:	caller storage, filled
 *
 * Return: 0; -EINVAL (unknown flags, LEGACY with another); -EOPNOTSUPP when the device
 * cannot do what @flags ask (no VMM, no RDMA flag, no POSIX fds, no fabric handles);
 * -ENOMEM; the driver's error. Nothing is held on failure.
 */
int dvx_gpu_mem_alloc(struct dvx_gpu *gpu, uint64_t len, uint32_t flags, struct dvx_gpu_mem *mem);

/** dvx_gpu_mem_free() - unmap and release. Return: 0 or the driver's error. */
int dvx_gpu_mem_free(struct dvx_gpu_mem *mem);

/**
 * dvx_gpu_mem_export_fd() - a POSIX fd of the allocation, for a peer process to import.
 * @fd:		receives the fd; the caller owns it and closes it.
 * Return: 0, -EINVAL (not allocated with DVX_GPU_MEM_EXPORT), the driver's error.
 */
int dvx_gpu_mem_export_fd(struct dvx_gpu_mem *mem, int *fd);

/**
 * dvx_gpu_mem_export() - a shareable handle of the allocation.
 * @mem:	memory from dvx_gpu_mem_alloc() or dvx_gpu_mem_lookup()
 * @type:	DVX_HAL_GPU_HANDLE_FD (memory made with EXPORT), _FABRIC (FABRIC) or _IPC
 *		(LEGACY)
 * @h:		caller storage for the handle; an FD handle's h->fd is the caller's to
 *		close with dvx_hal_fd_close()
 * Return: 0, -EINVAL (the memory was not made for @type), the driver's error.
 */
int dvx_gpu_mem_export(struct dvx_gpu_mem *mem, uint32_t type, struct dvx_hal_gpu_handle *h);

/**
 * dvx_gpu_mem_import() - map another process's allocation into this one, readable and
 * writable by @gpu.
 * @gpu:	an open GPU
 * @h:		the handle (an FD handle's descriptor stays the caller's)
 * @mem:	caller storage; dvx_gpu_mem_free() unmaps it
 * Return: 0, -EINVAL, the driver's error. Nothing is held on failure.
 */
int dvx_gpu_mem_import(struct dvx_gpu *gpu, const struct dvx_hal_gpu_handle *h,
		       struct dvx_gpu_mem *mem);

/**
 * dvx_gpu_mem_lookup() - the allocation that contains a device address.
 * @gpu:	an open GPU
 * @dptr:	any address inside it
 * @mem:	caller storage: base, length and how it was made (DVX_HAL_GPU_MEM_FOREIGN:
 *		it can be exported and registered, not freed through dvx)
 * Return: 0; -ENOENT when @dptr is not device memory (host memory, say); -EINVAL; the
 * driver's error.
 */
int dvx_gpu_mem_lookup(struct dvx_gpu *gpu, uint64_t dptr, struct dvx_gpu_mem *mem);

/**
 * dvx_gpu_mem_dmabuf_fd() - a dma-buf fd of [@offset, @offset + @len) of @mem, for an
 * MR or umem registration (dvx_hal_mr_req.dmabuf_fd, dvx_hal_umem_req.dmabuf_fd; the
 * region starts at dma-buf offset 0).
 * @offset:	page aligned
 * @len:	page aligned, > 0; 0 means "to the end of @mem"
 * @flags:	DVX_HAL_GPU_DMABUF_PCIE for Data-Direct NICs, else 0
 * @fd:		receives the fd; the caller owns it (it may close it once registered)
 *
 * Return: 0; -EOPNOTSUPP (no dma-buf support); -EINVAL (range); the driver's error.
 */
int dvx_gpu_mem_dmabuf_fd(struct dvx_gpu_mem *mem, uint64_t offset, uint64_t len, uint32_t flags,
			  int *fd);

/* dvx_gpu_host_register() flags */
enum {
	DVX_GPU_HOST_IOMEM = 1u << 0,	/* a mapped UAR page (I/O memory) */
};

/**
 * struct dvx_gpu_hostreg - host memory the GPU can reach.
 * @gpu:	the GPU
 * @addr:	what the caller asked for
 * @len:	bytes the caller asked for
 * @dptr:	device address of @addr (use it in struct dvx_gpu_sq / dvx_gpu_cq)
 * @base:	the page-aligned range actually registered
 * @base_len:	its length
 * @flags:	DVX_GPU_HOST_*
 */
struct dvx_gpu_hostreg {
	struct dvx_gpu *gpu;
	void *addr;
	uint64_t len;
	uint64_t dptr;
	void *base;
	uint64_t base_len;
	uint32_t flags;
	uint32_t rsvd;
};

/**
 * dvx_gpu_host_register() - make host memory (a ring, doorbell records, a consumer
 * index, a CQ) or a UAR register (DVX_GPU_HOST_IOMEM) accessible from kernels.
 * @addr, @len:	the range; registered page-granular (whole pages around it), so two
 *		ranges on one page must be registered as one
 * @reg:	caller storage, filled
 *
 * Return: 0; -EOPNOTSUPP (the device cannot map host memory); -EEXIST (already
 * registered); the driver's error. The memory stays the caller's.
 */
int dvx_gpu_host_register(struct dvx_gpu *gpu, void *addr, uint64_t len, uint32_t flags,
			  struct dvx_gpu_hostreg *reg);

/** dvx_gpu_host_unregister() - undo dvx_gpu_host_register(). */
int dvx_gpu_host_unregister(struct dvx_gpu_hostreg *reg);

/** struct dvx_gpu_stream - a CUDA stream (non-blocking). */
struct dvx_gpu_stream {
	struct dvx_gpu *gpu;
	void *handle;
};

/**
 * dvx_gpu_stream_create() - create a non-blocking CUDA stream on an opened GPU.
 * @gpu:	the opened GPU
 * @s:		caller storage for the stream, filled
 *
 * The stream belongs to the caller until dvx_gpu_stream_destroy(); it does not wait
 * for the default stream.
 *
 * Context: process context, a thread where @gpu's context is current. Return: 0;
 * -EINVAL (@gpu not open, @s NULL); the hal's error, recorded in gpu->hg.diag.
 */
int dvx_gpu_stream_create(struct dvx_gpu *gpu, struct dvx_gpu_stream *s);

/**
 * dvx_gpu_stream_destroy() - destroy a stream made by dvx_gpu_stream_create().
 * @s:		the stream; its handle is cleared on success
 *
 * Work already queued on @s still completes (cuStreamDestroy semantics); wait for it
 * first with dvx_gpu_stream_wait() when its results matter.
 *
 * Context: process context, a thread where the GPU's context is current. Return: 0;
 * -EINVAL (@s NULL, never created or already destroyed); the hal's error.
 */
int dvx_gpu_stream_destroy(struct dvx_gpu_stream *s);

/**
 * dvx_gpu_stream_wait() - wait until everything queued on @s has finished.
 * @timeout_ns:	bound (hal clock)
 * Return: 0; -ETIMEDOUT (still running; may be called again); a kernel's fault
 * (-EFAULT for an illegal address, ...) with the CUresult in gpu->hg.diag.
 */
int dvx_gpu_stream_wait(struct dvx_gpu_stream *s, uint64_t timeout_ns);

/** struct dvx_gpu_module - a loaded module (fatbin, cubin or PTX image). */
struct dvx_gpu_module {
	struct dvx_gpu *gpu;
	struct dvx_hal_gpu_module hm;
};

/**
 * dvx_gpu_module_load() - load a module image from memory (cuModuleLoadData).
 * @image:	the image; @len 0 means "there is none" (a build without nvcc) and
 *		answers -ENOSYS
 * Return: 0, -ENOSYS, -ENOEXEC (no code for this GPU), the driver's error.
 */
int dvx_gpu_module_load(struct dvx_gpu *gpu, const void *image, uint64_t len,
			struct dvx_gpu_module *mod);

/**
 * dvx_gpu_module_unload() - unload a module loaded by dvx_gpu_module_load().
 * @mod:		the module; its handle is cleared on success
 *
 * Kernel pointers taken from it with dvx_gpu_module_function() are invalid afterwards,
 * and no kernel of it may still be running.
 *
 * Context: process context, a thread where the GPU's context is current. Return: 0;
 * -EINVAL (@mod NULL or not loaded); the hal's error, recorded in the GPU's diag.
 */
int dvx_gpu_module_unload(struct dvx_gpu_module *mod);

/**
 * dvx_gpu_module_function() - a kernel of @mod by its (extern "C") name.
 * Return: 0 and *@func; -ENOENT when the module has no such kernel.
 */
int dvx_gpu_module_function(struct dvx_gpu_module *mod, const char *name, void **func);

/**
 * dvx_gpu_launch() - launch @func on @s (NULL: the default stream).
 * @grid, @block: x dimensions (y = z = 1)
 * @args:	one pointer per kernel parameter
 * Return: 0 or the driver's error (-ENOSPC: too many resources asked for).
 */
int dvx_gpu_launch(struct dvx_gpu *gpu, void *func, uint32_t grid, uint32_t block, uint32_t shmem,
		   struct dvx_gpu_stream *s, void **args);

/**
 * dvx_gpu_memcpy_htod(), dvx_gpu_memcpy_dtoh() - synchronous copies to and from
 * device memory.
 * @gpu:		the opened GPU
 * @dptr:	device address of the range
 * @src:		htod: host source, read during the call only
 * @dst:		dtoh: host destination, written during the call
 * @len:		bytes (not 0)
 *
 * Both return when the copy is done, the bytes in device (or host) memory: htod waits
 * for the default stream after cuMemcpyHtoD, which from pageable memory returns once
 * the bytes are staged (a peer writing the same word next would race the DMA).
 * Neither waits for work on dvx's streams (they are non-blocking).
 *
 * Context: process context, a thread where @gpu's context is current. Return: 0;
 * -EINVAL (@gpu not open, a NULL buffer, no range); the hal's error, recorded in
 * gpu->hg.diag.
 */
int dvx_gpu_memcpy_htod(struct dvx_gpu *gpu, uint64_t dptr, const void *src, uint64_t len);
int dvx_gpu_memcpy_dtoh(struct dvx_gpu *gpu, void *dst, uint64_t dptr, uint64_t len);

/**
 * struct dvx_gpu_lib - libdvx's own device code (gpu/devlib.cu), loaded.
 * @mod:	the module
 * @k_cq_init:	kernel: mark every entry of a CQ ring INVALID/owner 1
 * @k_sq_ctrs_init: kernel: zero a struct dvx_mlx5_sq_ctrs
 * @k_post_nop:	kernel: post NOPs at thread, warp or block scope (smoke test, bench)
 */
struct dvx_gpu_lib {
	struct dvx_gpu_module mod;
	void *k_cq_init;
	void *k_sq_ctrs_init;
	void *k_post_nop;
};

/**
 * dvx_gpu_lib_load() - load the device code embedded in libdvx (sm_80 and sm_90 SASS).
 * Return: 0; -ENOSYS when libdvx was built without nvcc (diag says so); -ENOEXEC
 * when the GPU is older than sm_80; the driver's error.
 */
int dvx_gpu_lib_load(struct dvx_gpu *gpu, struct dvx_gpu_lib *lib);

/**
 * dvx_gpu_lib_unload() - unload the device code loaded by dvx_gpu_lib_load().
 * @lib:		the loaded library; its kernel pointers are invalid afterwards
 *
 * No kernel launched from @lib may still be running.
 *
 * Context: process context, a thread where the GPU's context is current. Return: 0;
 * -EINVAL (@lib NULL or not loaded); the hal's error.
 */
int dvx_gpu_lib_unload(struct dvx_gpu_lib *lib);

/** Scopes for dvx_gpu_lib_post_nop(). */
enum dvx_gpu_scope {
	DVX_GPU_SCOPE_THREAD = 0,
	DVX_GPU_SCOPE_WARP = 1,
	DVX_GPU_SCOPE_BLOCK = 2,
};

/**
 * struct dvx_gpu_nop_cfg - a launch of the library's NOP poster (dvx_gpu_lib_post_nop()).
 * @scope:	the scope each post is made at
 * @grid:	blocks
 * @block:	threads per block (a multiple of 32 at warp scope)
 * @per_thread:	NOP WQEs each thread posts
 * @timeout_ns:	bound of each post's waits
 * @status_dptr: device address of an int32 per thread (grid * block), each receiving
 *		0 or the first error that thread met
 */
struct dvx_gpu_nop_cfg {
	enum dvx_gpu_scope scope;
	uint32_t grid;
	uint32_t block;
	uint32_t per_thread;
	uint64_t timeout_ns;
	uint64_t status_dptr;
};

/**
 * dvx_gpu_lib_post_nop() - launch the library's NOP poster: @cfg->grid blocks of
 * @cfg->block threads each post @cfg->per_thread NOP WQEs on @sq at @cfg->scope (posts
 * per group, in order of each thread's loop), each post waiting at most
 * @cfg->timeout_ns.
 * @lib:	the loaded library
 * @s:		the stream
 * @sq:		device view (struct dvx_gpu_sq, passed by value)
 * @cfg:	the launch (struct dvx_gpu_nop_cfg), read during the call only
 * Return: 0 or the launch's error (the kernel runs asynchronously on @s).
 */
int dvx_gpu_lib_post_nop(struct dvx_gpu_lib *lib, struct dvx_gpu_stream *s, const void *sq,
			 const struct dvx_gpu_nop_cfg *cfg);

/** dvx_gpu_lib_cq_init() - launch the CQ ring initialiser over 2^@log_size entries. */
int dvx_gpu_lib_cq_init(struct dvx_gpu_lib *lib, struct dvx_gpu_stream *s, uint64_t buf_dptr,
			uint32_t log_size);

/** dvx_gpu_lib_sq_ctrs_init() - launch the zeroing of a struct dvx_mlx5_sq_ctrs. */
int dvx_gpu_lib_sq_ctrs_init(struct dvx_gpu_lib *lib, struct dvx_gpu_stream *s,
			     uint64_t ctrs_dptr);

DVX_END_DECLS

#endif /* DVX_GPU_GPU_H */
