// SPDX-License-Identifier: MIT
/*
 * hal/mock/gpu.c - the mock's GPU table: fake GPUs, their memory, modules, streams and launches.
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "priv.h"

/* ---- GPU fakes (see dvx_mock_add_gpu()) ---- */

int dvx_mock_add_gpu(struct dvx_mock *m, const struct dvx_hal_gpu_attr *attr)
{
	if (!m || !attr)
		return -EINVAL;
	if (m->ngpus >= DVX_MOCK_MAX_GPUS)
		return -ENOSPC;
	m->gpu[m->ngpus] = *attr;
	m->gpu[m->ngpus].ordinal = (int32_t)m->ngpus;
	m->gpu_peer[m->ngpus] = ~0u;
	return (int)m->ngpus++;
}

void dvx_mock_gpu_attr_h100(struct dvx_hal_gpu_attr *attr, const char *pci)
{
	memset(attr, 0, sizeof(*attr));
	dvx_mockp_copy_str(attr->name, sizeof(attr->name), "Mock H100");
	dvx_mockp_copy_str(attr->pci, sizeof(attr->pci), pci ? pci : "0000:19:00.0");
	attr->driver_version = 13000;
	attr->cc_major = 9;
	attr->cc_minor = 0;
	attr->sm_count = 132;
	attr->max_threads_per_block = 1024;
	attr->warp_size = 32;
	attr->gdr_writes_ordering = 100;
	attr->total_mem = 80ull << 30;
	attr->gdr = 1;
	attr->dmabuf = 1;
	attr->vmm = 1;
	attr->vmm_rdma = 1;
	attr->posix_fd = 1;
	attr->host_register = 1;
	attr->can_map_host = 1;
	attr->unified_addressing = 1;
	attr->fabric = 0;
	memset(attr->uuid, 0x47, sizeof(attr->uuid));
	attr->uuid[15] = (uint8_t)(pci ? pci[6] + pci[7] : 0);
	attr->granularity = 2u << 20;
}

static struct dvx_mock *mock_gpu(const struct dvx_hal_gpu *gpu)
{
	return dvx_mockp_mock_of(gpu->hal);
}

/* a GPU call's log record; injected failures also go into gpu->diag */
static struct dvx_mock_call *gbegin(struct dvx_mock *m, enum dvx_mock_op op,
				    const struct dvx_hal_gpu *gpu)
{
	return dvx_mockp_begin(m, op, gpu->ordinal);
}

static int ginject(struct dvx_mock *m, struct dvx_mock_call *c, struct dvx_hal_gpu *gpu)
{
	int err = dvx_mockp_injected_err(m, c);

	if (err) {
		dvx_hal_diag_set(&gpu->diag, err, DVX_DIAG_CUDA, dvx_mock_op_name(c->op),
				 "mock: injected failure of call %u", c->seq);
		gpu->diag.cu_result = 999;	/* CUDA_ERROR_UNKNOWN */
	}
	return err;
}

static int gbad(struct dvx_mock *m, struct dvx_mock_call *c, struct dvx_hal_gpu *gpu, int err,
		const char *what)
{
	dvx_hal_diag_set(&gpu->diag, err, DVX_DIAG_CUDA, dvx_mock_op_name(c->op), "mock: %s", what);
	return dvx_mockp_end(m, c, err);
}

/* the device a handle was opened on, or NULL */
static int gpu_ok(const struct dvx_mock *m, const struct dvx_hal_gpu *gpu)
{
	return gpu->handle >= 0 && (unsigned)gpu->handle < m->ngpus;
}

#define GPU_OP_BEGIN(op_)                                                           \
	struct dvx_mock *m = mock_gpu(gpu);                                          \
	struct dvx_mock_call *c = gbegin(m, op_, gpu);                               \
	int err

#define GPU_OP_INJECT()                                                             \
	do {                                                                        \
		err = ginject(m, c, gpu);                                           \
		if (err)                                                            \
			return dvx_mockp_end(m, c, err);                                      \
	} while (0)

static int mock_gpu_init(struct dvx_hal_gpu *gpu)
{
	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_INIT);
	GPU_OP_INJECT();
	if (m->gpu_init_err)
		return gbad(m, c, gpu, dvx_mockp_neg(m->gpu_init_err), "gpu_init_err set (no driver)");
	return dvx_mockp_end(m, c, 0);
}

static int mock_gpu_count(struct dvx_hal_gpu *gpu, int *count)
{
	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_COUNT);
	GPU_OP_INJECT();
	*count = (int)m->ngpus;
	return dvx_mockp_end(m, c, 0);
}

static int mock_gpu_get(struct dvx_hal_gpu *gpu, int ordinal, const char *pci)
{
	unsigned i;

	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_GET);
	c->index = (uint32_t)ordinal;
	dvx_mockp_copy_str(c->name, sizeof(c->name), pci);
	GPU_OP_INJECT();
	if (pci && *pci) {
		for (i = 0; i < m->ngpus; i++)
			if (!strcmp(m->gpu[i].pci, pci) || !strcmp(m->gpu[i].pci + 5, pci))
				break;
	} else {
		i = (unsigned)ordinal;
	}
	if (i >= m->ngpus)
		return gbad(m, c, gpu, -ENODEV, "no such GPU");
	gpu->ordinal = (int32_t)i;
	gpu->handle = (int32_t)i;
	c->dev = (int16_t)i;
	return dvx_mockp_end(m, c, 0);
}

static int mock_gpu_query(struct dvx_hal_gpu *gpu, struct dvx_hal_gpu_attr *attr)
{
	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_QUERY);
	GPU_OP_INJECT();
	if (!gpu_ok(m, gpu))
		return gbad(m, c, gpu, -ENODEV, "bad GPU handle");
	*attr = m->gpu[gpu->handle];
	return dvx_mockp_end(m, c, 0);
}

static int mock_gpu_ctx_retain(struct dvx_hal_gpu *gpu)
{
	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_CTX_RETAIN);
	GPU_OP_INJECT();
	if (!gpu_ok(m, gpu))
		return gbad(m, c, gpu, -ENODEV, "bad GPU handle");
	m->gpu_ctx_refs[gpu->handle]++;
	m->live[DVX_MOCK_RES_GPU_CTX]++;
	gpu->priv = &m->gpu[gpu->handle];
	gpu->ctx_retained = 1;
	return dvx_mockp_end(m, c, 0);
}

static int mock_gpu_ctx_release(struct dvx_hal_gpu *gpu)
{
	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_CTX_RELEASE);
	GPU_OP_INJECT();
	if (!gpu_ok(m, gpu) || !m->gpu_ctx_refs[gpu->handle])
		return gbad(m, c, gpu, -EINVAL, "no context retained");
	m->gpu_ctx_refs[gpu->handle]--;
	m->live[DVX_MOCK_RES_GPU_CTX]--;
	gpu->priv = NULL;
	gpu->ctx_retained = 0;
	return dvx_mockp_end(m, c, 0);
}

static int mock_gpu_ctx_set_current(struct dvx_hal_gpu *gpu)
{
	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_CTX_SET_CURRENT);
	GPU_OP_INJECT();
	if (!gpu_ok(m, gpu) || !m->gpu_ctx_refs[gpu->handle])
		return gbad(m, c, gpu, -EINVAL, "context not retained");
	return dvx_mockp_end(m, c, 0);
}

static struct dvx_mock_gpu_mem *gmem_of(struct dvx_mock *m, uint64_t dptr)
{
	size_t i;

	for (i = 0; i < DVX_MOCK_MAX_GPU_MEMS; i++)
		if (m->gpu_mem[i].live && (uint64_t)(uintptr_t)m->gpu_mem[i].host.addr == dptr)
			return &m->gpu_mem[i];
	return NULL;
}

/* the allocation that contains [dptr, dptr + len) */
static struct dvx_mock_gpu_mem *gmem_around(struct dvx_mock *m, uint64_t dptr, uint64_t len)
{
	size_t i;

	for (i = 0; i < DVX_MOCK_MAX_GPU_MEMS; i++) {
		struct dvx_mock_gpu_mem *s = &m->gpu_mem[i];
		uint64_t a = (uint64_t)(uintptr_t)s->host.addr;

		if (s->live && dptr >= a && dptr - a < s->host.len && len <= s->host.len - (dptr - a))
			return s;
	}
	return NULL;
}

/* stand-in memory for a created or imported allocation */
static int gmem_new(struct dvx_mock *m, struct dvx_hal_gpu *gpu, uint64_t len, uint32_t flags,
		    struct dvx_mock_gpu_mem **out)
{
	struct dvx_mock_gpu_mem *s = NULL;
	size_t i;
	int err;

	for (i = 0; i < DVX_MOCK_MAX_GPU_MEMS && !s; i++)
		if (!m->gpu_mem[i].live)
			s = &m->gpu_mem[i];
	if (!s)
		return -ENOMEM;
	err = dvx_host_mem_alloc(gpu->hal, len, 4096, -1, DVX_MEM_F_ZERO, &s->host);
	if (err)
		return err;
	s->live = 1;
	s->gpu = (int8_t)gpu->handle;
	s->flags = flags;
	m->live[DVX_MOCK_RES_GPU_MEM]++;
	*out = s;
	return 0;
}

/* a real descriptor standing in for an exported handle or a dma-buf */
static int fd_new(struct dvx_mock *m, const char *what, int *fd)
{
	int f = memfd_create(what, MFD_CLOEXEC), err;

	if (f < 0)
		return -errno;
	err = dvx_mockp_fd_keep(m, f);
	if (err)
		return err;
	*fd = f;
	return 0;
}

static int mock_gpu_mem_create(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_mem_req *req,
			       struct dvx_hal_gpu_mem *mem)
{
	struct dvx_mock_gpu_mem *s;
	uint32_t flags = req->flags & (DVX_HAL_GPU_MEM_RDMA | DVX_HAL_GPU_MEM_EXPORT |
				       DVX_HAL_GPU_MEM_FABRIC | DVX_HAL_GPU_MEM_LEGACY);
	uint64_t len;

	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_MEM_CREATE);
	c->len = req->len;
	c->flags = req->flags;
	GPU_OP_INJECT();
	if (!gpu_ok(m, gpu) || !m->gpu_ctx_refs[gpu->handle])
		return gbad(m, c, gpu, -EINVAL, "no context");
	if ((req->flags & DVX_HAL_GPU_MEM_RDMA) && !m->gpu[gpu->handle].vmm_rdma)
		return gbad(m, c, gpu, -EOPNOTSUPP, "gpuDirectRDMACapable not supported");
	if ((req->flags & DVX_HAL_GPU_MEM_FABRIC) && !m->gpu[gpu->handle].fabric)
		return gbad(m, c, gpu, -EOPNOTSUPP, "fabric handles not supported");
	/* cuMemAlloc rounds to pages, the VMM to its granularity */
	len = DVX_ALIGN_UP(req->len, (flags & DVX_HAL_GPU_MEM_LEGACY) ? 4096 : (uint64_t)(2u << 20));
	err = gmem_new(m, gpu, len, flags, &s);
	if (err)
		return gbad(m, c, gpu, err, err == -ENOMEM ? "gpu_mem table full" :
						     "no host memory to stand in");
	memset(mem, 0, sizeof(*mem));
	mem->dptr = (uint64_t)(uintptr_t)s->host.addr;
	mem->len = len;
	mem->handle = (uint64_t)(s - m->gpu_mem) + 1;
	mem->flags = flags;
	c->addr = mem->dptr;
	return dvx_mockp_end(m, c, 0);
}

static int mock_gpu_mem_free(struct dvx_hal_gpu *gpu, struct dvx_hal_gpu_mem *mem)
{
	struct dvx_mock_gpu_mem *s;

	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_MEM_FREE);
	c->addr = mem->dptr;
	c->len = mem->len;
	c->flags = mem->flags;
	GPU_OP_INJECT();
	if (mem->flags & DVX_HAL_GPU_MEM_FOREIGN)
		return gbad(m, c, gpu, -EINVAL, "memory found by mem_lookup is not ours to free");
	s = gmem_of(m, mem->dptr);
	if (!s)
		return gbad(m, c, gpu, -EINVAL, "not device memory of the mock");
	dvx_host_mem_free(gpu->hal, &s->host);
	s->live = 0;
	memset(mem, 0, sizeof(*mem));
	m->live[DVX_MOCK_RES_GPU_MEM]--;
	return dvx_mockp_end(m, c, 0);
}

/* what a FABRIC or IPC handle of the mock holds */
struct mock_handle {
	char magic[8];		/* "dvxmock" */
	uint32_t type;
	uint32_t gpu;
	uint64_t dptr;
	uint64_t len;
};

static int mock_gpu_mem_export(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_mem *mem,
			       uint32_t type, struct dvx_hal_gpu_handle *h)
{
	struct dvx_mock_gpu_mem *s;
	struct mock_handle mh;
	uint32_t need;

	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_MEM_EXPORT);
	c->addr = mem->dptr;
	c->index = type;
	GPU_OP_INJECT();
	s = gmem_around(m, mem->dptr, 1);
	if (!s)
		return gbad(m, c, gpu, -EINVAL, "not device memory of the mock");
	need = type == DVX_HAL_GPU_HANDLE_FD ? DVX_HAL_GPU_MEM_EXPORT :
	       type == DVX_HAL_GPU_HANDLE_FABRIC ? DVX_HAL_GPU_MEM_FABRIC :
	       type == DVX_HAL_GPU_HANDLE_IPC ? DVX_HAL_GPU_MEM_LEGACY : 0;
	if (!need || !(s->flags & need))
		return gbad(m, c, gpu, -EINVAL, "memory was not created for that handle type");
	memset(h, 0, sizeof(*h));
	h->type = type;
	h->fd = -1;
	h->len = s->host.len;
	if (type == DVX_HAL_GPU_HANDLE_FD) {
		err = fd_new(m, "dvx-mock-gpu-export", &h->fd);
		if (err)
			return gbad(m, c, gpu, err, "no descriptor to stand in");
		c->dmabuf_fd = h->fd;
	} else {
		memset(&mh, 0, sizeof(mh));
		memcpy(mh.magic, "dvxmock", 8);
		mh.type = type;
		mh.gpu = (uint32_t)s->gpu;
		mh.dptr = (uint64_t)(uintptr_t)s->host.addr;
		mh.len = s->host.len;
		memcpy(h->data, &mh, sizeof(mh));
	}
	return dvx_mockp_end(m, c, 0);
}

static int mock_gpu_mem_import(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_handle *h,
			       struct dvx_hal_gpu_mem *mem)
{
	struct dvx_mock_gpu_mem *s;
	struct mock_handle mh;
	uint32_t flags;

	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_MEM_IMPORT);
	c->index = h->type;
	c->len = h->len;
	c->dmabuf_fd = h->fd;
	GPU_OP_INJECT();
	if (!gpu_ok(m, gpu) || !m->gpu_ctx_refs[gpu->handle])
		return gbad(m, c, gpu, -EINVAL, "no context");
	if (h->type == DVX_HAL_GPU_HANDLE_FD) {
		if (h->fd < 0 || fcntl(h->fd, F_GETFD) < 0)
			return gbad(m, c, gpu, -EINVAL, "not an open descriptor");
		flags = DVX_HAL_GPU_MEM_EXPORT;
	} else {
		memcpy(&mh, h->data, sizeof(mh));
		if (memcmp(mh.magic, "dvxmock", 8) || mh.type != h->type || mh.len != h->len)
			return gbad(m, c, gpu, -EINVAL, "not a handle of the mock");
		if (h->type == DVX_HAL_GPU_HANDLE_FABRIC && !m->gpu[gpu->handle].fabric)
			return gbad(m, c, gpu, -EOPNOTSUPP, "fabric handles not supported");
		flags = h->type == DVX_HAL_GPU_HANDLE_FABRIC ? DVX_HAL_GPU_MEM_FABRIC :
							       DVX_HAL_GPU_MEM_LEGACY;
	}
	err = gmem_new(m, gpu, h->len, flags | DVX_HAL_GPU_MEM_IMPORTED, &s);
	if (err)
		return gbad(m, c, gpu, err, "gpu_mem table full");
	memset(mem, 0, sizeof(*mem));
	mem->dptr = (uint64_t)(uintptr_t)s->host.addr;
	mem->len = h->len;
	mem->handle = (uint64_t)(s - m->gpu_mem) + 1;
	mem->flags = s->flags;
	c->addr = mem->dptr;
	return dvx_mockp_end(m, c, 0);
}

static int mock_gpu_mem_lookup(struct dvx_hal_gpu *gpu, uint64_t dptr, struct dvx_hal_gpu_mem *mem)
{
	struct dvx_mock_gpu_mem *s;

	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_MEM_LOOKUP);
	c->addr = dptr;
	GPU_OP_INJECT();
	s = gmem_around(m, dptr, 1);
	if (!s)
		return dvx_mockp_end(m, c, -ENOENT);	/* host memory: an answer, no diag */
	memset(mem, 0, sizeof(*mem));
	mem->dptr = (uint64_t)(uintptr_t)s->host.addr;
	mem->len = s->host.len;
	mem->flags = s->flags | DVX_HAL_GPU_MEM_FOREIGN;
	mem->ordinal = s->gpu;
	return dvx_mockp_end(m, c, 0);
}

static int mock_gpu_peer_access(struct dvx_hal_gpu *gpu, int peer, int *can)
{
	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_PEER_ACCESS);
	c->index = (uint32_t)peer;
	GPU_OP_INJECT();
	if (!gpu_ok(m, gpu) || (unsigned)peer >= m->ngpus)
		return gbad(m, c, gpu, -ENODEV, "bad GPU handle or peer ordinal");
	*can = (m->gpu_peer[gpu->handle] >> peer) & 1;
	return dvx_mockp_end(m, c, 0);
}

static int mock_gpu_dmabuf_fd(struct dvx_hal_gpu *gpu, uint64_t dptr, uint64_t len, uint32_t flags,
			      int *fd)
{
	size_t i;

	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_DMABUF_FD);
	c->addr = dptr;
	c->len = len;
	c->flags = flags;
	GPU_OP_INJECT();
	if (!gpu_ok(m, gpu) || !m->gpu[gpu->handle].dmabuf)
		return gbad(m, c, gpu, -EOPNOTSUPP, "dma-buf not supported");
	if ((dptr | len) & 4095)
		return gbad(m, c, gpu, -EINVAL, "range not page aligned");
	for (i = 0; i < DVX_MOCK_MAX_GPU_MEMS; i++) {
		const struct dvx_mock_gpu_mem *s = &m->gpu_mem[i];
		uint64_t a = (uint64_t)(uintptr_t)s->host.addr;

		if (s->live && dptr >= a && dptr + len <= a + s->host.len)
			break;
	}
	if (i == DVX_MOCK_MAX_GPU_MEMS)
		return gbad(m, c, gpu, -EINVAL, "range not inside device memory");
	err = fd_new(m, "dvx-mock-dmabuf", fd);
	if (err)
		return gbad(m, c, gpu, err, "no descriptor to stand in");
	c->dmabuf_fd = *fd;
	return dvx_mockp_end(m, c, 0);
}

static int mock_gpu_host_register(struct dvx_hal_gpu *gpu, void *addr, uint64_t len,
				  uint32_t flags, uint64_t *dptr)
{
	struct dvx_mock_gpu_hostreg *s = NULL;
	size_t i;

	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_HOST_REGISTER);
	c->addr = (uint64_t)(uintptr_t)addr;
	c->len = len;
	c->flags = flags;
	GPU_OP_INJECT();
	if (!gpu_ok(m, gpu) || !m->gpu_ctx_refs[gpu->handle])
		return gbad(m, c, gpu, -EINVAL, "no context");
	for (i = 0; i < DVX_MOCK_MAX_GPU_HOSTREGS; i++) {
		const struct dvx_mock_gpu_hostreg *h = &m->gpu_hostreg[i];

		if (h->live && c->addr < h->addr + h->len && h->addr < c->addr + len)
			return gbad(m, c, gpu, -EEXIST, "range already registered");
		if (!h->live && !s)
			s = &m->gpu_hostreg[i];
	}
	if (!s)
		return gbad(m, c, gpu, -ENOMEM, "hostreg table full");
	s->live = 1;
	s->gpu = (int8_t)gpu->handle;
	s->flags = flags;
	s->addr = c->addr;
	s->len = len;
	*dptr = c->addr;	/* unified addressing: the device sees the host address */
	m->live[DVX_MOCK_RES_GPU_HOSTREG]++;
	return dvx_mockp_end(m, c, 0);
}

static int mock_gpu_host_unregister(struct dvx_hal_gpu *gpu, void *addr)
{
	size_t i;

	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_HOST_UNREGISTER);
	c->addr = (uint64_t)(uintptr_t)addr;
	GPU_OP_INJECT();
	for (i = 0; i < DVX_MOCK_MAX_GPU_HOSTREGS; i++)
		if (m->gpu_hostreg[i].live && m->gpu_hostreg[i].addr == c->addr)
			break;
	if (i == DVX_MOCK_MAX_GPU_HOSTREGS)
		return gbad(m, c, gpu, -ENOENT, "not registered");
	m->gpu_hostreg[i].live = 0;
	m->live[DVX_MOCK_RES_GPU_HOSTREG]--;
	return dvx_mockp_end(m, c, 0);
}

static int mock_gpu_module_load(struct dvx_hal_gpu *gpu, const void *image,
				struct dvx_hal_gpu_module *mod)
{
	size_t i;

	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_MODULE_LOAD);
	c->addr = (uint64_t)(uintptr_t)image;
	GPU_OP_INJECT();
	for (i = 0; i < DVX_MOCK_MAX_GPU_MODULES; i++)
		if (!m->gpu_module_live[i])
			break;
	if (i == DVX_MOCK_MAX_GPU_MODULES)
		return gbad(m, c, gpu, -ENOMEM, "module table full");
	m->gpu_module_live[i] = 1;
	mod->priv = &m->gpu_module_live[i];
	c->id = (uint32_t)i;
	m->live[DVX_MOCK_RES_GPU_MODULE]++;
	return dvx_mockp_end(m, c, 0);
}

static int module_index(const struct dvx_mock *m, const struct dvx_hal_gpu_module *mod)
{
	const uint8_t *p = (const uint8_t *)mod->priv;

	if (p < m->gpu_module_live || p >= m->gpu_module_live + DVX_MOCK_MAX_GPU_MODULES || !*p)
		return -1;
	return (int)(p - m->gpu_module_live);
}

static int mock_gpu_module_unload(struct dvx_hal_gpu *gpu, struct dvx_hal_gpu_module *mod)
{
	int i;

	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_MODULE_UNLOAD);
	GPU_OP_INJECT();
	i = module_index(m, mod);
	if (i < 0)
		return gbad(m, c, gpu, -EBADF, "not a loaded module");
	m->gpu_module_live[i] = 0;
	mod->priv = NULL;
	m->live[DVX_MOCK_RES_GPU_MODULE]--;
	return dvx_mockp_end(m, c, 0);
}

static int mock_gpu_module_function(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_module *mod,
				    const char *name, void **func)
{
	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_MODULE_FUNCTION);
	dvx_mockp_copy_str(c->name, sizeof(c->name), name);
	GPU_OP_INJECT();
	if (module_index(m, mod) < 0)
		return gbad(m, c, gpu, -EBADF, "not a loaded module");
	*func = (void *)name;	/* the launch hook can tell kernels apart by name */
	return dvx_mockp_end(m, c, 0);
}

static int mock_gpu_launch(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_launch *l)
{
	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_LAUNCH);
	c->len = (uint64_t)l->grid[0] * l->grid[1] * l->grid[2];
	c->index = l->block[0] * l->block[1] * l->block[2];
	dvx_mockp_copy_str(c->name, sizeof(c->name), (const char *)l->func);
	GPU_OP_INJECT();
	err = m->gpu_launch_fn ? m->gpu_launch_fn(m->gpu_launch_arg, l) : 0;
	return err ? gbad(m, c, gpu, dvx_mockp_neg(err), "the launch hook failed") : dvx_mockp_end(m, c, 0);
}

static int mock_gpu_stream_create(struct dvx_hal_gpu *gpu, void **stream)
{
	size_t i;

	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_STREAM_CREATE);
	GPU_OP_INJECT();
	for (i = 0; i < DVX_MOCK_MAX_GPU_STREAMS; i++)
		if (!m->gpu_stream_live[i])
			break;
	if (i == DVX_MOCK_MAX_GPU_STREAMS)
		return gbad(m, c, gpu, -ENOMEM, "stream table full");
	m->gpu_stream_live[i] = 1;
	*stream = &m->gpu_stream_live[i];
	m->live[DVX_MOCK_RES_GPU_STREAM]++;
	return dvx_mockp_end(m, c, 0);
}

static int stream_index(const struct dvx_mock *m, const void *stream)
{
	const uint8_t *p = (const uint8_t *)stream;

	if (p < m->gpu_stream_live || p >= m->gpu_stream_live + DVX_MOCK_MAX_GPU_STREAMS || !*p)
		return -1;
	return (int)(p - m->gpu_stream_live);
}

static int mock_gpu_stream_destroy(struct dvx_hal_gpu *gpu, void *stream)
{
	int i;

	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_STREAM_DESTROY);
	GPU_OP_INJECT();
	i = stream_index(m, stream);
	if (i < 0)
		return gbad(m, c, gpu, -EBADF, "not a live stream");
	m->gpu_stream_live[i] = 0;
	m->live[DVX_MOCK_RES_GPU_STREAM]--;
	return dvx_mockp_end(m, c, 0);
}

static int mock_gpu_stream_query(struct dvx_hal_gpu *gpu, void *stream)
{
	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_STREAM_QUERY);
	GPU_OP_INJECT();
	if (stream && stream_index(m, stream) < 0)
		return gbad(m, c, gpu, -EBADF, "not a live stream");
	if (m->gpu_stream_busy) {
		m->gpu_stream_busy--;
		return dvx_mockp_end(m, c, -EBUSY);
	}
	return dvx_mockp_end(m, c, 0);
}

static int mock_gpu_memcpy_htod(struct dvx_hal_gpu *gpu, uint64_t dptr, const void *src,
				uint64_t len)
{
	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_MEMCPY_HTOD);
	c->addr = dptr;
	c->len = len;
	GPU_OP_INJECT();
	memcpy((void *)(uintptr_t)dptr, src, len);
	return dvx_mockp_end(m, c, 0);
}

static int mock_gpu_memcpy_dtoh(struct dvx_hal_gpu *gpu, void *dst, uint64_t dptr, uint64_t len)
{
	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_MEMCPY_DTOH);
	c->addr = dptr;
	c->len = len;
	GPU_OP_INJECT();
	memcpy(dst, (const void *)(uintptr_t)dptr, len);
	return dvx_mockp_end(m, c, 0);
}

static int mock_gpu_memcpy_async(struct dvx_hal_gpu *gpu, uint64_t dst, uint64_t src, uint64_t len,
				 void *stream)
{
	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_MEMCPY_ASYNC);
	c->addr = dst;
	c->offset = src;
	c->len = len;
	GPU_OP_INJECT();
	if (stream && stream_index(m, stream) < 0)
		return gbad(m, c, gpu, -EBADF, "not a live stream");
	memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, len);
	return dvx_mockp_end(m, c, 0);
}

static int mock_gpu_stream_atomic(struct dvx_hal_gpu *gpu, void *stream, uint64_t dptr, uint32_t op,
				  uint64_t value)
{
	uint64_t *w = (uint64_t *)(uintptr_t)dptr;

	GPU_OP_BEGIN(DVX_MOCK_OP_GPU_STREAM_ATOMIC);
	c->addr = dptr;
	c->index = op;
	c->len = value;
	GPU_OP_INJECT();
	if (stream && stream_index(m, stream) < 0)
		return gbad(m, c, gpu, -EBADF, "not a live stream");
	if (op == DVX_HAL_GPU_ATOMIC_SET)
		__atomic_store_n(w, value, __ATOMIC_RELEASE);
	else
		__atomic_fetch_add(w, value, __ATOMIC_RELEASE);
	return dvx_mockp_end(m, c, 0);
}

const struct dvx_hal_gpu_ops dvx_mock_gpu_ops = {
	.gpu_init = mock_gpu_init,
	.gpu_count = mock_gpu_count,
	.gpu_get = mock_gpu_get,
	.gpu_query = mock_gpu_query,
	.gpu_ctx_retain = mock_gpu_ctx_retain,
	.gpu_ctx_release = mock_gpu_ctx_release,
	.gpu_ctx_set_current = mock_gpu_ctx_set_current,
	.gpu_mem_create = mock_gpu_mem_create,
	.gpu_mem_free = mock_gpu_mem_free,
	.gpu_mem_export = mock_gpu_mem_export,
	.gpu_mem_import = mock_gpu_mem_import,
	.gpu_mem_lookup = mock_gpu_mem_lookup,
	.gpu_peer_access = mock_gpu_peer_access,
	.gpu_dmabuf_fd = mock_gpu_dmabuf_fd,
	.gpu_host_register = mock_gpu_host_register,
	.gpu_host_unregister = mock_gpu_host_unregister,
	.gpu_module_load = mock_gpu_module_load,
	.gpu_module_unload = mock_gpu_module_unload,
	.gpu_module_function = mock_gpu_module_function,
	.gpu_launch = mock_gpu_launch,
	.gpu_stream_create = mock_gpu_stream_create,
	.gpu_stream_destroy = mock_gpu_stream_destroy,
	.gpu_stream_query = mock_gpu_stream_query,
	.gpu_memcpy_htod = mock_gpu_memcpy_htod,
	.gpu_memcpy_dtoh = mock_gpu_memcpy_dtoh,
	.gpu_memcpy_async = mock_gpu_memcpy_async,
	.gpu_stream_atomic = mock_gpu_stream_atomic,
};
