// SPDX-License-Identifier: MIT
/*
 * core/mp/reg.c - the IB buffer registry (dvx/mp/reg.h): a table of registered
 * allocations in caller memory, looked up by containment.
 */
#include <errno.h>
#include <string.h>

#include <dvx/gpu/gpu.h>
#include <dvx/mp/reg.h>
#include <dvx/p2p/setup.h>

#define PAGE 4096u

#define REG_RIGHTS (DVX_MP_REG_WRITE | DVX_MP_REG_READ | DVX_MP_REG_ATOMIC)

/* the MR access of an entry: local write, and the remote rights it was asked for */
static uint32_t reg_access(uint32_t flags)
{
	return DVX_ACCESS_LOCAL_WRITE |
	       ((flags & DVX_MP_REG_WRITE) ? DVX_ACCESS_REMOTE_WRITE : 0) |
	       ((flags & DVX_MP_REG_READ) ? DVX_ACCESS_REMOTE_READ : 0) |
	       ((flags & DVX_MP_REG_ATOMIC) ? DVX_ACCESS_REMOTE_ATOMIC : 0) |
	       ((flags & DVX_MP_REG_RELAXED) ? DVX_ACCESS_RELAXED_ORDERING : 0);
}

int dvx_mp_reg_init(struct dvx_mp_reg *reg, struct dvx_mp_reg_entry *entries, uint32_t cap,
		    struct dvx_nic *const *nics, uint32_t nnics, struct dvx_gpu *gpu)
{
	uint32_t i;

	if (!reg || !entries || !cap || !nics || !nnics || nnics > DVX_P2P_MAX_NICS)
		return -EINVAL;
	for (i = 0; i < nnics; i++)
		if (!nics[i])
			return -EINVAL;
	memset(reg, 0, sizeof(*reg));
	memset(entries, 0, (size_t)cap * sizeof(*entries));
	reg->e = entries;
	reg->cap = cap;
	reg->nnics = nnics;
	for (i = 0; i < nnics; i++)
		reg->nics[i] = nics[i];
	reg->gpu = gpu;
	return 0;
}

static int contains(const struct dvx_mp_reg_entry *e, uint64_t a, uint64_t len)
{
	return e->len && a >= e->base && a - e->base < e->len && len <= e->len - (a - e->base);
}

/* the entry holding [a, a + len): the one starting at @a first, else the first found */
static struct dvx_mp_reg_entry *find(const struct dvx_mp_reg *reg, uint64_t a, uint64_t len)
{
	struct dvx_mp_reg_entry *any = NULL;
	uint32_t i;

	for (i = 0; i < reg->cap; i++) {
		struct dvx_mp_reg_entry *e = &reg->e[i];

		if (!contains(e, a, len))
			continue;
		if (e->base == a)
			return e;
		if (!any)
			any = e;
	}
	return any;
}

static int describe(const struct dvx_mp_reg *reg, struct dvx_mp_reg_entry *e, void *ptr,
		    uint64_t len, struct dvx_p2p_lbuf *out)
{
	struct dvx_mr *mrs[DVX_P2P_MAX_NICS];
	uint32_t k;

	if (!out)
		return 0;
	for (k = 0; k < reg->nnics; k++)
		mrs[k] = &e->mr[k];
	return dvx_p2p_lbuf_init(out, ptr, len, mrs, reg->nnics);
}

/* deregister NICs [0, @n) of @e (and the MRs an upgrade kept), last first; stop at a
 * refusal (0 or that error) */
static int dereg_nics(struct dvx_mp_reg_entry *e, uint32_t n)
{
	uint32_t k = n;
	int err;

	while (k-- > 0) {
		if (!e->mr[k].live)
			continue;
		err = dvx_mr_dereg(&e->mr[k]);
		if (err)
			return err;
	}
	while (n-- > 0) {
		if (!e->prev[n].live)
			continue;
		err = dvx_mr_dereg(&e->prev[n]);
		if (err)
			return err;
	}
	return 0;
}

/* register @e's range on NIC @k: a GPU range as a dma-buf first, else plainly */
static int reg_nic(struct dvx_mp_reg *reg, struct dvx_mp_reg_entry *e, uint32_t k)
{
	struct dvx_mr_cfg a;
	int err = -EOPNOTSUPP, fd = -1;

	memset(&a, 0, sizeof(a));
	a.addr = (void *)(uintptr_t)e->base;
	a.len = e->len;
	a.access = reg_access(e->flags);
	a.dmabuf_fd = -1;
	if ((e->flags & DVX_MP_REG_GPU) && reg->gpu->attr.dmabuf) {
		err = dvx_hal_gpu_dmabuf_fd(&reg->gpu->hg, e->base, e->len, 0, &fd);
		if (!err) {
			a.dmabuf_fd = fd;
			a.flags |= DVX_MR_F_DMABUF;
			a.dmabuf_offset = 0;
			err = dvx_mr_reg(reg->nics[k], &a, &e->mr[k]);
			/* the registration holds the dma-buf: the descriptor can go */
			dvx_hal_fd_close(reg->gpu->hg.hal, fd);
			if (!err) {
				e->flags |= DVX_MP_REG_DMABUF << k;
				return 0;
			}
		}
		/* the dma-buf path failed: the peer-memory path may still take it */
		a.dmabuf_fd = -1;
		a.flags &= ~(uint32_t)DVX_MR_F_DMABUF;
	}
	err = dvx_mr_reg(reg->nics[k], &a, &e->mr[k]);
	if (err)
		dvx_hal_diag_set(&reg->diag, err, DVX_DIAG_ARG, "mp_reg_add",
				 "NIC %u refused to register [%#llx, +%llu)", k,
				 (unsigned long long)e->base, (unsigned long long)e->len);
	return err;
}

/*
 * @e lacks some of @rights: register its range again on every NIC with the union, the
 * old MRs kept in e->prev (their keys are out there). Once per entry; nothing changes
 * on failure.
 */
static int upgrade(struct dvx_mp_reg *reg, struct dvx_mp_reg_entry *e, uint32_t rights)
{
	struct dvx_mp_reg_entry up;
	uint32_t k;
	int err;

	if (e->prev[0].live)
		return dvx_hal_diag_set(&reg->diag, -EACCES, DVX_DIAG_ARG, "mp_reg_add",
					"the allocation at %#llx was upgraded once already and "
					"lacks a remote right asked for (%#x of %#x): register it "
					"first with every right its buffers need",
					(unsigned long long)e->base,
					(unsigned)(e->flags & REG_RIGHTS), (unsigned)rights);
	memset(&up, 0, sizeof(up));
	up.base = e->base;
	up.len = e->len;
	up.flags = (e->flags & ~(uint32_t)(DVX_MP_REG_DMABUF * 0xffu)) | rights;
	for (k = 0; k < reg->nnics; k++) {
		err = reg_nic(reg, &up, k);
		if (err) {
			dereg_nics(&up, k);
			return err;
		}
	}
	for (k = 0; k < reg->nnics; k++) {
		e->prev[k] = e->mr[k];
		e->mr[k] = up.mr[k];
	}
	e->flags = up.flags;
	reg->upgrades++;
	return 0;
}

int dvx_mp_reg_add(struct dvx_mp_reg *reg, void *ptr, uint64_t len, uint32_t flags,
		   struct dvx_p2p_lbuf *out)
{
	uint64_t a = (uint64_t)(uintptr_t)ptr;
	struct dvx_mp_reg_entry *e, ent;
	struct dvx_gpu_mem gm;
	uint32_t i, k;
	int err;

	if (!reg || !reg->e || !ptr || !len || a + len < a ||
	    (flags & ~(DVX_MP_REG_RELAXED | REG_RIGHTS)))
		return -EINVAL;
	/* a hit: no hal call */
	e = find(reg, a, len);
	if (e) {
		if ((e->flags & DVX_MP_REG_RELAXED) != (flags & DVX_MP_REG_RELAXED))
			return dvx_hal_diag_set(&reg->diag, -EEXIST, DVX_DIAG_ARG, "mp_reg_add",
						"registered already with the other ordering");
		if ((e->flags & flags & REG_RIGHTS) != (flags & REG_RIGHTS)) {
			err = upgrade(reg, e, flags & REG_RIGHTS);
			if (err)
				return err;
		}
		err = describe(reg, e, ptr, len, out);
		if (err)
			return err;
		e->refs++;
		reg->hits++;
		return 0;
	}
	for (i = 0; i < reg->cap && reg->e[i].len; i++)
		;
	if (i == reg->cap)
		return dvx_hal_diag_set(&reg->diag, -ENOSPC, DVX_DIAG_ARG, "mp_reg_add",
					"the table's %u entries are in use", reg->cap);
	/* the allocation around it */
	memset(&ent, 0, sizeof(ent));
	ent.flags = flags;
	err = reg->gpu ? dvx_gpu_mem_lookup(reg->gpu, a, &gm) : -ENOENT;
	if (!err) {
		ent.flags |= DVX_MP_REG_GPU;
		ent.base = gm.dptr;
		ent.len = gm.len;
		if (a + len > gm.dptr + gm.len) {
			/* beyond one allocation (mapped segments side by side): the pages of
			 * the caller's range, as a dma-buf takes them */
			ent.flags |= DVX_MP_REG_RANGE;
			ent.base = a & ~(uint64_t)(PAGE - 1);
			ent.len = ((a + len + PAGE - 1) & ~(uint64_t)(PAGE - 1)) - ent.base;
		}
	} else if (err == -ENOENT) {
		ent.base = a;	/* host memory: the caller's range is the key */
		ent.len = len;
	} else {
		return dvx_hal_diag_set(&reg->diag, err, DVX_DIAG_CUDA, "mp_reg_add",
					"cannot tell what memory %p is", ptr);
	}
	for (k = 0; k < reg->nnics; k++) {
		err = reg_nic(reg, &ent, k);
		if (err) {
			dereg_nics(&ent, k);
			return err;
		}
	}
	ent.refs = 1;
	reg->e[i] = ent;
	reg->live++;
	reg->misses++;
	err = describe(reg, &reg->e[i], ptr, len, out);
	if (err) {
		dereg_nics(&reg->e[i], reg->nnics);
		memset(&reg->e[i], 0, sizeof(reg->e[i]));
		reg->live--;
	}
	return err;
}

int dvx_mp_reg_find(const struct dvx_mp_reg *reg, const void *ptr, uint64_t len,
		    struct dvx_p2p_lbuf *out)
{
	struct dvx_mp_reg_entry *e;

	if (!reg || !reg->e || !ptr || !len || !out)
		return -EINVAL;
	e = find(reg, (uint64_t)(uintptr_t)ptr, len);
	if (!e)
		return -ENOENT;
	return describe(reg, e, (void *)(uintptr_t)ptr, len, out);
}

static int release(struct dvx_mp_reg *reg, struct dvx_mp_reg_entry *e)
{
	int err = dereg_nics(e, reg->nnics);

	if (err)
		return dvx_hal_diag_set(&reg->diag, err, DVX_DIAG_ARG, "mp_reg_del",
					"a NIC refused to deregister [%#llx, +%llu)",
					(unsigned long long)e->base, (unsigned long long)e->len);
	memset(e, 0, sizeof(*e));
	reg->live--;
	return 0;
}

int dvx_mp_reg_del(struct dvx_mp_reg *reg, const void *ptr)
{
	struct dvx_mp_reg_entry *e;

	if (!reg || !reg->e || !ptr)
		return -EINVAL;
	e = find(reg, (uint64_t)(uintptr_t)ptr, 1);
	if (!e)
		return -ENOENT;
	if (e->refs)
		e->refs--;
	return e->refs ? 0 : release(reg, e);
}

int dvx_mp_reg_fini(struct dvx_mp_reg *reg)
{
	uint32_t i;
	int err = 0, e;

	if (!reg || !reg->e)
		return -EINVAL;
	for (i = 0; i < reg->cap; i++)
		if (reg->e[i].len) {
			e = release(reg, &reg->e[i]);
			if (e && !err)
				err = e;
		}
	memset(reg, 0, sizeof(*reg));
	return err;
}
