// SPDX-License-Identifier: MIT
/*
 * core/mp/mp.c - the multi-peer transport (dvx/mp/mp.h): publishing the facts, the
 * topology, the NVL domain's bootstrap, the IB registry and transport, buffer
 * exchange, host-initiated NVL work, the device handle.
 */
#include <errno.h>
#include <string.h>

#include <dvx/byteorder.h>
#include <dvx/mp/mp.h>
#include <dvx/mp/dev.h>
#include <dvx/p2p/gpu.h>
#include <dvx/nvl/ops.h>

#define REG_CAP_DEFAULT 64u

/* the device API's signal operations are the hal's stream atomics, value for value */
DVX_STATIC_ASSERT((int)DVX_NVL_SIG_SET == (int)DVX_HAL_GPU_ATOMIC_SET, "SET");
DVX_STATIC_ASSERT((int)DVX_NVL_SIG_ADD == (int)DVX_HAL_GPU_ATOMIC_ADD, "ADD");

static size_t up64(size_t v)
{
	return (v + 63u) & ~(size_t)63u;
}

static uint32_t reg_cap_of(const struct dvx_mp_cfg *c)
{
	return c->reg_cap ? c->reg_cap : REG_CAP_DEFAULT;
}

static int cfg_ok(const struct dvx_mp_cfg *c)
{
	return c && c->bs && c->nranks >= 1 && c->nranks <= DVX_MP_MAX_RANKS && c->rank >= 0 &&
	       c->rank < c->nranks && c->bs->rank == c->rank && c->bs->nranks == c->nranks &&
	       c->ib.nnics <= DVX_P2P_MAX_NICS && !(c->flags & ~3u) && c->reg_cap <= 65536;
}

size_t dvx_mp_mem_size(const struct dvx_mp_cfg *cfg)
{
	if (!cfg_ok(cfg))
		return 0;
	return up64((size_t)cfg->nranks * sizeof(struct dvx_mp_rank_info)) +
	       up64(dvx_mp_topo_mem_size(cfg->nranks)) +
	       up64((size_t)reg_cap_of(cfg) * sizeof(struct dvx_mp_reg_entry));
}

static void copy_str(char *dst, size_t n, const char *src)
{
	size_t l = strnlen(src, n - 1);

	memcpy(dst, src, l);
	dst[l] = 0;
}

/* this rank's facts: who it is, its GPU and the GPUs that GPU can map, its NICs */
static int my_facts(struct dvx_mp *mp, struct dvx_mp_rank_info *i)
{
	struct dvx_hal_host_ident id;
	int err, n = 0, o;

	memset(i, 0, sizeof(*i));
	i->version = DVX_MP_INFO_VERSION;
	i->rank = mp->rank;
	err = dvx_hal_host_ident(mp->hal, &id);
	if (err)
		return dvx_hal_diag_set(&mp->diag, err, DVX_DIAG_OS, "mp_init", "who this host is");
	i->pid = id.pid;
	memcpy(i->boot_id, id.boot_id, sizeof(i->boot_id));
	copy_str(i->hostname, sizeof(i->hostname), id.hostname);
	if (mp->cfg.ib.nnics)
		i->flags |= DVX_MP_INFO_IB;
	if (!mp->gpu)
		return 0;
	i->flags |= DVX_MP_INFO_GPU;
	if (mp->gpu->attr.posix_fd)
		i->flags |= DVX_MP_INFO_FD;
	if (mp->gpu->attr.fabric)
		i->flags |= DVX_MP_INFO_FABRIC;
	memcpy(i->gpu_uuid, mp->gpu->attr.uuid, 16);
	copy_str(i->gpu_pci, sizeof(i->gpu_pci), mp->gpu->attr.pci);
	/* the other GPUs this one can map, by UUID (the same GPU in every process) */
	err = dvx_hal_gpu_count(&mp->gpu->hg, &n);
	if (err)
		return err;
	for (o = 0; o < n && i->npeer_gpus < DVX_MP_MAX_LOCAL_GPUS; o++) {
		struct dvx_hal_gpu other;
		struct dvx_hal_gpu_attr a;
		int can = 0;

		if (o == mp->gpu->attr.ordinal)
			continue;
		err = dvx_hal_gpu_peer_access(&mp->gpu->hg, o, &can);
		if (err)
			return err;
		if (!can)
			continue;
		memset(&other, 0, sizeof(other));
		err = dvx_hal_gpu_init(mp->gpu->hg.hal, &other);
		if (!err)
			err = dvx_hal_gpu_get(&other, o, NULL);
		if (!err)
			err = dvx_hal_gpu_query(&other, &a);
		if (err)
			return err;
		memcpy(i->peer_uuids[i->npeer_gpus++], a.uuid, 16);
	}
	return 0;
}

/* a pair that needs IB where one side has no NIC: nobody can go on */
static int check_ib(struct dvx_mp *mp)
{
	int a, b;

	if (!mp->topo.any_ib)
		return 0;
	for (a = 0; a < mp->nranks; a++) {
		if (mp->infos[a].flags & DVX_MP_INFO_IB)
			continue;
		for (b = 0; b < mp->nranks; b++)
			if (b != a && ((mp->cfg.flags & DVX_MP_F_FORCE_IB) ||
				       !dvx_mp_topo_nvl_edge(&mp->infos[a], &mp->infos[b])))
				return dvx_hal_diag_set(&mp->diag, -EHOSTUNREACH, DVX_DIAG_ARG,
							"mp_init",
							"rank %d reaches rank %d only over IB and rank %d has no NIC",
							a, b, a);
	}
	return 0;
}

static void undo(struct dvx_mp *mp)
{
	if (mp->reg_live)
		dvx_mp_reg_fini(&mp->reg);
	mp->reg_live = 0;
	if (mp->nvl_live)
		dvx_bootstrap_fini(&mp->nvl_bs);
	mp->nvl_live = 0;
}

int dvx_mp_init(struct dvx_mp *mp, const struct dvx_mp_cfg *cfg, void *state, uint64_t state_len)
{
	uint8_t *cur = state;
	struct dvx_mp_reg_entry *ents;
	size_t topo_len;
	uint32_t tflags = 0;
	int err;

	if (!mp)
		return -EINVAL;
	if (!cfg_ok(cfg))
		return dvx_hal_diag_set(&mp->diag, -EINVAL, DVX_DIAG_ARG, "dvx_mp_init",
					"cfg: rank/nranks (1 ... %d) as bs's, ib.nnics <= %d, known flags, reg_cap <= 65536",
					DVX_MP_MAX_RANKS, DVX_P2P_MAX_NICS);
	if (!state || ((uintptr_t)state & 63) || state_len < dvx_mp_mem_size(cfg))
		return dvx_hal_diag_set(&mp->diag, -EINVAL, DVX_DIAG_ARG, "dvx_mp_init",
					"state: NULL, under %zu bytes or not 64-byte aligned",
					dvx_mp_mem_size(cfg));
	if (cfg->gpu && !cfg->gpu->open)
		return dvx_hal_diag_set(&mp->diag, -EINVAL, DVX_DIAG_ARG, "dvx_mp_init",
					"cfg.gpu is not an opened GPU");
	memset(mp, 0, sizeof(*mp));
	mp->cfg = *cfg;
	mp->rank = cfg->rank;
	mp->nranks = cfg->nranks;
	mp->gpu = cfg->gpu;
	mp->hal = cfg->hal ? cfg->hal : cfg->gpu ? cfg->gpu->hg.hal : dvx_hal_host();
	mp->infos = (struct dvx_mp_rank_info *)(void *)cur;
	cur += up64((size_t)cfg->nranks * sizeof(struct dvx_mp_rank_info));
	topo_len = dvx_mp_topo_mem_size(cfg->nranks);
	ents = (struct dvx_mp_reg_entry *)(void *)(cur + up64(topo_len));

	/* everyone's facts */
	if (cfg->inject) {
		memcpy(mp->infos, cfg->inject, (size_t)cfg->nranks * sizeof(*mp->infos));
	} else {
		err = my_facts(mp, &mp->infos[mp->rank]);
		/* a rank that cannot say who it is still joins the allgather: its version
		 * 0 makes every rank's classification refuse, with its rank named */
		if (err)
			mp->infos[mp->rank].version = 0;
		err = dvx_bootstrap_allgather(cfg->bs, &mp->infos[mp->rank], mp->infos,
					      sizeof(*mp->infos), cfg->timeout_ns);
		if (err) {
			dvx_hal_diag_set(&mp->diag, err, DVX_DIAG_OS, "mp_init", "allgather of facts");
			goto fail;
		}
	}
	if (cfg->flags & DVX_MP_F_FORCE_IB)
		tflags |= DVX_MP_TOPO_FORCE_IB;
	if (cfg->flags & DVX_MP_F_NO_IB)
		tflags |= DVX_MP_TOPO_NO_IB;
	err = dvx_mp_topo_classify(&mp->topo, cur, topo_len, mp->infos, mp->nranks, mp->rank,
				   tflags, &mp->diag);
	if (!err)
		err = check_ib(mp);
	if (err)
		goto fail;
	/* the NVL domain's own bootstrap: a subgroup (its own tag space) */
	err = dvx_bootstrap_sub_init(&mp->nvl_bs, &mp->nvl_sub, cfg->bs, mp->topo.nvl_ranks,
				     mp->topo.nnvl);
	if (err) {
		dvx_hal_diag_set(&mp->diag, err, DVX_DIAG_OS, "mp_init", "the NVL domain's bootstrap");
		goto fail;
	}
	mp->nvl_live = 1;
	if (cfg->ib.nnics) {
		err = dvx_mp_reg_init(&mp->reg, ents, reg_cap_of(cfg), cfg->ib.nics, cfg->ib.nnics,
				      cfg->gpu);
		if (err)
			goto fail;
		mp->reg_live = 1;
	}
	return 0;
fail:
	undo(mp);
	{
		struct dvx_diag d = mp->diag;

		memset(mp, 0, sizeof(*mp));
		mp->diag = d;
	}
	return err;
}

/* the IB transport's configuration: the caller's shape, our group and peers */
static int ib_cfg(const struct dvx_mp *mp, struct dvx_p2p_cfg *pc)
{
	*pc = mp->cfg.ib;
	pc->rank = mp->rank;
	pc->nranks = mp->nranks;
	pc->bs = mp->cfg.bs;
	pc->timeout_ns = mp->cfg.timeout_ns;
	pc->peers = mp->topo.ib_ranks;
	pc->npeers = (uint32_t)mp->topo.nib;
	return 0;
}

int dvx_mp_ib_mem_req(const struct dvx_mp *mp, struct dvx_mem_req *state, struct dvx_mem_req *rings)
{
	struct dvx_p2p_cfg pc;

	if (!mp || !mp->infos || !state || !rings)
		return -EINVAL;
	memset(state, 0, sizeof(*state));
	memset(rings, 0, sizeof(*rings));
	if (!mp->topo.any_ib || !mp->cfg.ib.nnics || mp->nranks < 2)
		return 0;
	ib_cfg(mp, &pc);
	return dvx_p2p_mem_req(&pc, state, rings);
}

int dvx_mp_connect(struct dvx_mp *mp, void *state, uint64_t state_len, void *rings,
		   uint64_t rings_len)
{
	struct dvx_p2p_cfg pc;
	int err;

	if (!mp || !mp->infos || mp->ib_live)
		return -EINVAL;
	/* with no IB anywhere, nobody calls into the IB transport: all ranks agree */
	if (!mp->topo.any_ib || mp->nranks < 2)
		return 0;
	if (!mp->cfg.ib.nnics)
		return -EINVAL;	/* check_ib() lets this happen only without IB peers */
	ib_cfg(mp, &pc);
	err = dvx_p2p_init(&mp->ib, &pc, state, state_len, rings, rings_len);
	if (err)
		return dvx_hal_diag_set(&mp->diag, err, DVX_DIAG_ARG, "mp_connect",
					"the IB transport to %d peers", mp->topo.nib);
	mp->ib_live = 1;
	return 0;
}

int dvx_mp_fini(struct dvx_mp *mp)
{
	int err = 0, e;

	if (!mp || !mp->infos)
		return -EINVAL;
	if (mp->ib_live) {
		e = dvx_p2p_fini(&mp->ib);
		if (e && !err)
			err = e;
		mp->ib_live = 0;
	}
	if (mp->reg_live) {
		e = dvx_mp_reg_fini(&mp->reg);
		if (e && !err)
			err = e;
		mp->reg_live = 0;
	}
	undo(mp);
	memset(mp, 0, sizeof(*mp));
	return err;
}

struct dvx_bootstrap *dvx_mp_nvl_bootstrap(struct dvx_mp *mp)
{
	return mp && mp->nvl_live ? &mp->nvl_bs : NULL;
}

int dvx_mp_register(struct dvx_mp *mp, void *ptr, uint64_t len, uint32_t flags,
		    struct dvx_p2p_lbuf *out)
{
	if (!mp || !mp->infos)
		return -EINVAL;
	if (!mp->reg_live)
		return -ENODEV;
	return dvx_mp_reg_add(&mp->reg, ptr, len, flags, out);
}

int dvx_mp_deregister(struct dvx_mp *mp, void *ptr)
{
	if (!mp || !mp->infos)
		return -EINVAL;
	if (!mp->reg_live)
		return -ENODEV;
	return dvx_mp_reg_del(&mp->reg, ptr);
}

int dvx_mp_exchange_ib(struct dvx_mp *mp, const struct dvx_p2p_lbuf *mine,
		       struct dvx_p2p_rbuf *all, struct dvx_p2p_rbuf *ib, uint64_t timeout_ns)
{
	struct dvx_p2p_rbuf r;
	uint32_t k;
	int i, err;

	if (!mp || !mp->infos || !all)
		return -EINVAL;
	memset(&r, 0, sizeof(r));
	if (mine) {
		r.addr = dvx_le64(mine->addr);
		r.len = dvx_le64(mine->len);
		for (k = 0; k < DVX_P2P_MAX_NICS; k++)
			r.rkey[k] = dvx_le32(mine->rkey[k]);
		r.access = dvx_le32(mine->access);
	}
	err = dvx_bootstrap_allgather(mp->cfg.bs, &r, all, sizeof(r), timeout_ns);
	if (err)
		return dvx_hal_diag_set(&mp->diag, err, DVX_DIAG_OS, "mp_exchange_ib", "allgather");
	for (i = 0; i < mp->nranks; i++) {
		all[i].addr = dvx_le64(all[i].addr);
		all[i].len = dvx_le64(all[i].len);
		for (k = 0; k < DVX_P2P_MAX_NICS; k++)
			all[i].rkey[k] = dvx_le32(all[i].rkey[k]);
		all[i].access = dvx_le32(all[i].access);
		all[i].rsvd = 0;
	}
	/* IB arrays are indexed by the IB map, never by the global peer index */
	if (ib)
		for (i = 0; i < mp->topo.nib; i++)
			ib[i] = all[mp->topo.ib_ranks[i]];
	return 0;
}

/* ---- host-initiated NVL work ---------------------------------------------------- */

static void *stream_of(const struct dvx_gpu_stream *s)
{
	return s ? s->handle : NULL;
}

int dvx_mp_nvl_put(struct dvx_mp *mp, struct dvx_gpu_stream *stream, uint64_t dst, uint64_t src,
		   uint64_t len)
{
	if (!mp || !mp->infos || !dst || !src || !len)
		return -EINVAL;
	if (!mp->gpu)
		return -ENODEV;
	return dvx_hal_gpu_memcpy_async(&mp->gpu->hg, dst, src, len, stream_of(stream));
}

int dvx_mp_nvl_signal(struct dvx_mp *mp, struct dvx_gpu_stream *stream, uint64_t sig, uint32_t op,
		      uint64_t value)
{
	if (!mp || !mp->infos || !sig)
		return -EINVAL;
	if (!mp->gpu)
		return -ENODEV;
	return dvx_hal_gpu_stream_atomic(&mp->gpu->hg, stream_of(stream), sig, op, value);
}

int dvx_mp_nvl_put_signal(struct dvx_mp *mp, struct dvx_gpu_stream *stream, uint64_t dst,
			  uint64_t src, uint64_t len, uint64_t sig, uint32_t op, uint64_t value)
{
	int err;

	if (op != DVX_HAL_GPU_ATOMIC_SET && op != DVX_HAL_GPU_ATOMIC_ADD)
		return -EINVAL;
	err = dvx_mp_nvl_put(mp, stream, dst, src, len);
	return err ? err : dvx_mp_nvl_signal(mp, stream, sig, op, value);
}

/* ---- the device handle ---------------------------------------------------------- */

static uint64_t table_bytes(const struct dvx_mp *mp)
{
	return up64((size_t)mp->nranks * sizeof(struct dvx_mp_dev_peer));
}

int dvx_mp_dev_mem_req(const struct dvx_mp *mp, uint64_t *bytes)
{
	uint64_t ib = 0;
	int err;

	if (!mp || !mp->infos || !bytes)
		return -EINVAL;
	if (mp->ib_live && mp->ib.npeers) {
		err = dvx_p2p_gpu_mem_req(&mp->ib, &ib);
		if (err)
			return err;
	}
	*bytes = table_bytes(mp) + ib;
	return 0;
}

int dvx_mp_dev_export(struct dvx_mp *mp, const struct dvx_nvl_buf *nvl,
		      const struct dvx_gpu_hostreg *regs, uint32_t nregs, uint64_t dmem,
		      uint64_t dmem_len, uint64_t timeout_ns, struct dvx_mp_dev *dev)
{
	struct dvx_mp_dev d;
	uint64_t need, tb;
	int r, err;

	if (!mp || !mp->infos || !mp->gpu || !dmem || (dmem & 63) || !dev ||
	    (nvl && nvl->n != mp->topo.nnvl))
		return -EINVAL;
	err = dvx_mp_dev_mem_req(mp, &need);
	if (err)
		return err;
	if (dmem_len < need)
		return -EINVAL;
	tb = table_bytes(mp);
	memset(&d, 0, sizeof(d));
	d.version = DVX_MP_DEV_VERSION;
	d.rank = mp->rank;
	d.nranks = mp->nranks;
	d.nnvl = mp->topo.nnvl;
	d.nvl_me = mp->topo.nvl_me;
	d.nib = mp->topo.nib;
	d.peers = dmem;
	/* the table goes up in pieces through a small buffer: no allocation */
	for (r = 0; r < mp->nranks;) {
		struct dvx_mp_dev_peer chunk[32];
		int k;

		for (k = 0; k < 32 && r + k < mp->nranks; k++) {
			int g = r + k, l = mp->topo.nvl_local[g];
			struct dvx_mp_dev_peer *p = &chunk[k];

			p->kind = mp->topo.kind[g];
			p->index = p->kind == DVX_MP_IB ? mp->topo.ib_idx[g] :
				   (p->kind == DVX_MP_NVL || p->kind == DVX_MP_SELF) ? l : -1;
			p->nvl_ptr = nvl && l >= 0 && (p->kind == DVX_MP_NVL || p->kind == DVX_MP_SELF)
					     ? nvl->peers[l].ptr : 0;
		}
		err = dvx_gpu_memcpy_htod(mp->gpu, dmem + (uint64_t)r * sizeof(chunk[0]), chunk,
					  (uint64_t)k * sizeof(chunk[0]));
		if (err)
			return err;
		r += k;
	}
	if (mp->ib_live && mp->ib.npeers) {
		err = dvx_p2p_gpu_export(&mp->ib, mp->gpu, regs, nregs, dmem + tb, dmem_len - tb,
					 timeout_ns, &d.ib);
		if (err)
			return err;
		d.has_ib = 1;
	}
	*dev = d;
	return 0;
}

int dvx_mp_dev_import(struct dvx_mp *mp, const struct dvx_mp_dev *dev)
{
	if (!mp || !mp->infos || !dev || dev->version != DVX_MP_DEV_VERSION)
		return -EINVAL;
	if (!dev->has_ib)
		return 0;
	return dvx_p2p_gpu_import(&mp->ib, mp->gpu, &dev->ib);
}
