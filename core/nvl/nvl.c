// SPDX-License-Identifier: MIT
/*
 * core/nvl/nvl.c - exchanging GPU buffers across an NVL domain (dvx_nvl_exchange()):
 * export the allocation around this rank's buffer, publish it (one allgather of the
 * ranks' records), pass descriptors where the mode needs them, import every NVL
 * peer's, and agree on the outcome (a second allgather of statuses) before anyone
 * lets go of its export.
 */
#include <errno.h>
#include <string.h>

#include <dvx/byteorder.h>
#include <dvx/nvl/nvl.h>

#include "nvl_priv.h"

DVX_STATIC_ASSERT(sizeof(struct fdx_rec) == DVX_FDX_REC_BYTES, "fdx record");
DVX_STATIC_ASSERT(sizeof(((struct dvx_nvl_rec *)0)->fdx) == sizeof(struct fdx_rec), "fdx in rec");

static uint64_t deadline_of(const struct dvx_hal *hal, uint64_t timeout_ns)
{
	uint64_t now = dvx_hal_now_ns(hal);

	return timeout_ns > UINT64_MAX - now ? UINT64_MAX : now + timeout_ns;
}

/* the mode the allocation allows, or 0 */
static uint32_t mode_of(const struct dvx_gpu *gpu, uint32_t flags)
{
	if ((flags & DVX_HAL_GPU_MEM_FABRIC) && gpu->attr.fabric)
		return DVX_NVL_FABRIC;
	if (flags & DVX_HAL_GPU_MEM_EXPORT)
		return DVX_NVL_FD;
	if (flags & DVX_HAL_GPU_MEM_LEGACY)
		return DVX_NVL_IPC;
	return 0;
}

/* export what @ptr lies in; fills @r (mode, offset, lengths, handle) and @fd */
static int export_mine(struct dvx_nvl_buf *b, void *ptr, uint64_t len, struct dvx_nvl_rec *r,
		       int *fd)
{
	struct dvx_hal_gpu_handle h;
	struct dvx_gpu_mem m;
	uint64_t a = (uint64_t)(uintptr_t)ptr;
	uint32_t mode;
	int err;

	*fd = -1;
	err = dvx_gpu_mem_lookup(b->gpu, a, &m);
	if (err == -ENOENT)
		return dvx_hal_diag_set(&b->diag, -EINVAL, DVX_DIAG_ARG, "nvl_exchange",
					"the buffer is not device memory");
	if (err)
		return dvx_hal_diag_set(&b->diag, err, DVX_DIAG_CUDA, "nvl_exchange",
					"cannot find the allocation of the buffer");
	if (len > m.len - (a - m.dptr))
		return dvx_hal_diag_set(&b->diag, -EINVAL, DVX_DIAG_ARG, "nvl_exchange",
					"the buffer runs past its allocation");
	mode = mode_of(b->gpu, m.hm.flags);
	if (!mode)
		return dvx_hal_diag_set(&b->diag, -EINVAL, DVX_DIAG_ARG, "nvl_exchange",
					"a VMM allocation without a shareable handle type "
					"(allocate with DVX_GPU_MEM_EXPORT or _FABRIC)");
	err = dvx_gpu_mem_export(&m, mode, &h);
	if (err)
		return dvx_hal_diag_set(&b->diag, err, DVX_DIAG_CUDA, "nvl_exchange",
					"export of the allocation");
	r->mode = dvx_le32(mode);
	r->len = dvx_le64(len);
	r->offset = dvx_le64(a - m.dptr);
	r->alloc_len = dvx_le64(h.len);
	r->addr = dvx_le64(a);
	memcpy(r->handle, h.data, sizeof(r->handle));
	*fd = mode == DVX_NVL_FD ? h.fd : -1;
	return 0;
}

/* agree on the outcome: every rank's status; the lowest rank's error wins */
static int agree(struct dvx_nvl_buf *b, int status, uint64_t timeout_ns, int *who)
{
	int32_t st[DVX_NVL_MAX_RANKS], mine = (int32_t)dvx_le32((uint32_t)status);
	int r, err;

	err = dvx_bootstrap_allgather(b->bs, &mine, st, sizeof(mine), timeout_ns);
	if (err)
		return err;
	for (r = 0; r < b->n; r++)
		if (st[r]) {
			*who = r;
			return (int32_t)dvx_le32((uint32_t)st[r]);
		}
	return 0;
}

static int unmap_all(struct dvx_nvl_buf *b)
{
	int r, err = 0, e;

	for (r = 0; r < b->n; r++) {
		struct dvx_nvl_peer *p = &b->peers[r];

		if (p->mapped) {
			e = dvx_gpu_mem_free(&p->mem);
			if (e && !err)
				err = e;
			if (!e)
				p->mapped = 0;
		}
		if (r != b->me && !p->mapped) {
			p->ptr = 0;
			p->base = 0;
		}
	}
	return err;
}

static int wanted(const struct dvx_nvl_buf *b, const struct dvx_mp_topo *topo, int l)
{
	if (l == b->me)
		return 0;
	if (!topo)
		return 1;
	return topo->kind[topo->nvl_ranks[l]] == DVX_MP_NVL;
}

/* map rank @l's buffer into this process */
static int import_one(struct dvx_nvl_buf *b, int l, int32_t fd, int32_t my_pid)
{
	struct dvx_nvl_peer *p = &b->peers[l];
	const struct dvx_nvl_rec *r = &p->rec;
	struct dvx_hal_gpu_handle h;
	uint32_t mode = dvx_le32(r->mode);
	int err;

	if (mode == DVX_NVL_IPC && (int32_t)dvx_le32((uint32_t)r->pid) == my_pid) {
		/* a legacy handle does not open in the process that made it; the address
		 * is valid in the whole process */
		p->ptr = dvx_le64(r->addr);
		p->base = p->ptr - dvx_le64(r->offset);
		return 0;
	}
	memset(&h, 0, sizeof(h));
	h.type = mode;
	h.fd = fd;
	h.len = dvx_le64(r->alloc_len);
	memcpy(h.data, r->handle, sizeof(h.data));
	if (mode == DVX_NVL_FD && fd < 0)
		return -EPROTO;
	err = dvx_gpu_mem_import(b->gpu, &h, &p->mem);
	if (err)
		return err;
	p->mapped = 1;
	p->base = p->mem.dptr;
	p->ptr = p->base + dvx_le64(r->offset);
	return 0;
}

int dvx_nvl_exchange(struct dvx_nvl_buf *b, struct dvx_nvl_peer *peers, struct dvx_bootstrap *bs,
		     const struct dvx_mp_topo *topo, struct dvx_gpu *gpu,
		     const struct dvx_nvl_cfg *cfg)
{
	void *ptr = cfg ? cfg->ptr : NULL;
	uint64_t len = cfg ? cfg->len : 0, timeout_ns = cfg ? cfg->timeout_ns : 0;
	const struct dvx_hal *hal = cfg ? cfg->hal : NULL;
	int32_t fds[DVX_NVL_MAX_RANKS];
	struct fdx_side x;
	struct dvx_nvl_rec *mine;
	int status, err, l, who = -1, any_fd = 0, imported = 0;
	uint64_t deadline;
	int my_fd = -1;

	if (!b || !peers || !bs || !gpu || !gpu->open || !ptr || !len || bs->nranks < 1 ||
	    bs->nranks > DVX_NVL_MAX_RANKS || (topo && topo->nnvl != bs->nranks))
		return -EINVAL;
	if (!hal)
		hal = gpu->hg.hal;
	memset(b, 0, sizeof(*b));
	b->gpu = gpu;
	b->bs = bs;
	b->n = bs->nranks;
	b->me = bs->rank;
	b->peers = peers;
	b->len = len;
	memset(peers, 0, (size_t)b->n * sizeof(*peers));
	mine = &peers[b->me].rec;

	/* export; a failure here still takes part in the collectives, with its status */
	status = export_mine(b, ptr, len, mine, &my_fd);
	memset(&x, 0, sizeof(x));
	x.lfd = -1;
	if (!status) {
		status = dvx_fdx_open(&x, hal, my_fd, &b->diag);
		memcpy(mine->fdx, &x.rec, sizeof(x.rec));
	}
	mine->status = (int32_t)dvx_le32((uint32_t)status);
	{
		struct dvx_hal_host_ident id;

		mine->pid = (int32_t)dvx_le32((uint32_t)(dvx_hal_host_ident(hal, &id) ? -1 : id.pid));
	}
	err = dvx_bootstrap_allgather(bs, &peers[b->me], peers, sizeof(*peers), timeout_ns);
	if (err) {
		dvx_hal_diag_set(&b->diag, err, DVX_DIAG_OS, "nvl_exchange", "allgather of records");
		goto out;
	}
	for (l = 0; l < b->n; l++) {
		struct dvx_nvl_peer *p = &peers[l];

		/* the records came as whole entries: the local view starts empty */
		memset((uint8_t *)p + sizeof(p->rec), 0, sizeof(*p) - sizeof(p->rec));
		if (p->rec.status && who < 0) {
			who = l;
			err = (int32_t)dvx_le32((uint32_t)p->rec.status);
		}
		any_fd |= dvx_le32(p->rec.mode) == DVX_NVL_FD;
	}
	if (who >= 0) {
		/* an export failed somewhere: everyone knows it at once */
		if (who != b->me)
			dvx_hal_diag_set(&b->diag, err, DVX_DIAG_OS, "nvl_exchange",
					 "local rank %d could not export its buffer", who);
		goto out;
	}
	peers[b->me].ptr = (uint64_t)(uintptr_t)ptr;
	peers[b->me].base = (uint64_t)(uintptr_t)ptr - dvx_le64(mine->offset);
	b->mode = dvx_le32(mine->mode);

	/* descriptors, where a rank shares by FD */
	for (l = 0; l < b->n; l++)
		fds[l] = -1;
	status = 0;
	if (any_fd) {
		deadline = deadline_of(hal, timeout_ns);
		status = dvx_fdx_run(&x, bs, (const uint8_t *)peers + offsetof(struct dvx_nvl_peer, rec.fdx),
				 sizeof(*peers), fds, deadline, &b->diag);
	}
	for (l = 0; l < b->n && !status; l++) {
		if (!wanted(b, topo, l))
			continue;
		status = import_one(b, l, fds[l],
				    (int32_t)dvx_le32((uint32_t)peers[b->me].rec.pid));
		if (status)
			dvx_hal_diag_set(&b->diag, status, DVX_DIAG_CUDA, "nvl_exchange",
					 "import of local rank %d's buffer", l);
	}
	for (l = 0; l < b->n; l++)
		if (fds[l] >= 0)
			dvx_hal_fd_close(hal, fds[l]);
	/* no more descriptors to hand out: a rank still waiting to connect here learns
	 * at once that something went wrong */
	dvx_fdx_close(&x);
	imported = 1;

	/* everyone imported (or nobody goes on): only now may exporters let go. A rank
	 * that gave up early waits for those still waiting out the descriptor exchange's
	 * deadline, hence twice the step's bound */
	err = agree(b, status, timeout_ns > UINT64_MAX / 2 ? timeout_ns : 2 * timeout_ns, &who);
	if (err && who >= 0 && who != b->me)
		dvx_hal_diag_set(&b->diag, err, DVX_DIAG_OS, "nvl_exchange",
				 "local rank %d failed to import", who);
	else if (err && who < 0)
		dvx_hal_diag_set(&b->diag, err, DVX_DIAG_OS, "nvl_exchange", "allgather of statuses");
out:
	dvx_fdx_close(&x);
	if (my_fd >= 0)
		dvx_hal_fd_close(gpu->hg.hal, my_fd);	/* the backend that made it */
	if (err) {
		if (imported)
			unmap_all(b);
		peers[b->me].ptr = 0;
		peers[b->me].base = 0;
		b->diag.err = err;
	}
	return err;
}

int dvx_nvl_unmap(struct dvx_nvl_buf *b)
{
	if (!b || !b->peers)
		return -EINVAL;
	return unmap_all(b);
}
