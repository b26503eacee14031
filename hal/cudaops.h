/* SPDX-License-Identifier: MIT */
/*
 * hal/cudaops.h - private to hal/: the CUDA driver API entries of hal/cuda.c and their
 * table, dvx_cuda_gpu_ops, which any backend's struct dvx_hal may point its gpu table
 * at (the cuda and linux backends do).
 *
 * Built only with CONFIG_DVX_GPU; the signatures are those of struct dvx_hal_gpu_ops.
 */
#ifndef DVX_HAL_CUDAOPS_H
#define DVX_HAL_CUDAOPS_H

#include <dvx/hal.h>

int dvx_cuda_gpu_init(struct dvx_hal_gpu *gpu);
int dvx_cuda_gpu_count(struct dvx_hal_gpu *gpu, int *count);
int dvx_cuda_gpu_get(struct dvx_hal_gpu *gpu, int ordinal, const char *pci);
int dvx_cuda_gpu_query(struct dvx_hal_gpu *gpu, struct dvx_hal_gpu_attr *attr);
int dvx_cuda_gpu_ctx_retain(struct dvx_hal_gpu *gpu);
int dvx_cuda_gpu_ctx_release(struct dvx_hal_gpu *gpu);
int dvx_cuda_gpu_ctx_set_current(struct dvx_hal_gpu *gpu);
int dvx_cuda_gpu_mem_create(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_mem_req *req,
			    struct dvx_hal_gpu_mem *mem);
int dvx_cuda_gpu_mem_free(struct dvx_hal_gpu *gpu, struct dvx_hal_gpu_mem *mem);
int dvx_cuda_gpu_mem_export(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_mem *mem,
			    uint32_t type, struct dvx_hal_gpu_handle *h);
int dvx_cuda_gpu_mem_import(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_handle *h,
			    struct dvx_hal_gpu_mem *mem);
int dvx_cuda_gpu_mem_lookup(struct dvx_hal_gpu *gpu, uint64_t dptr, struct dvx_hal_gpu_mem *mem);
int dvx_cuda_gpu_peer_access(struct dvx_hal_gpu *gpu, int peer_ordinal, int *can);
int dvx_cuda_gpu_dmabuf_fd(struct dvx_hal_gpu *gpu, uint64_t dptr, uint64_t len, uint32_t flags,
			   int *fd);
int dvx_cuda_gpu_host_register(struct dvx_hal_gpu *gpu, void *addr, uint64_t len, uint32_t flags,
			       uint64_t *dptr);
int dvx_cuda_gpu_host_unregister(struct dvx_hal_gpu *gpu, void *addr);
int dvx_cuda_gpu_module_load(struct dvx_hal_gpu *gpu, const void *image,
			     struct dvx_hal_gpu_module *mod);
int dvx_cuda_gpu_module_unload(struct dvx_hal_gpu *gpu, struct dvx_hal_gpu_module *mod);
int dvx_cuda_gpu_module_function(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_module *mod,
				 const char *name, void **func);
int dvx_cuda_gpu_launch(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_launch *l);
int dvx_cuda_gpu_stream_create(struct dvx_hal_gpu *gpu, void **stream);
int dvx_cuda_gpu_stream_destroy(struct dvx_hal_gpu *gpu, void *stream);
int dvx_cuda_gpu_stream_query(struct dvx_hal_gpu *gpu, void *stream);
int dvx_cuda_gpu_memcpy_htod(struct dvx_hal_gpu *gpu, uint64_t dptr, const void *src, uint64_t len);
int dvx_cuda_gpu_memcpy_dtoh(struct dvx_hal_gpu *gpu, void *dst, uint64_t dptr, uint64_t len);
int dvx_cuda_gpu_memcpy_async(struct dvx_hal_gpu *gpu, uint64_t dst, uint64_t src, uint64_t len,
			      void *stream);
int dvx_cuda_gpu_stream_atomic(struct dvx_hal_gpu *gpu, void *stream, uint64_t dptr, uint32_t op,
			       uint64_t value);

/* the gpu table of hal/cuda.c: the cuda and linux backends share it */
extern const struct dvx_hal_gpu_ops dvx_cuda_gpu_ops;

#endif /* DVX_HAL_CUDAOPS_H */
