// SPDX-License-Identifier: MIT
/*
 * hal/sim/init.c - a fabric put together: its storage layout in the caller's region
 * and its hal tables (ops.c, gpu.c) over the NICs and progress loop of fabric.c. The
 * top of hal/sim: nothing here is called by the files below it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl.h"

#define SIM_CAP_LIMIT 65535u	/* the most objects of one kind a fabric holds */

/* ---- storage layout ---------------------------------------------------------- */

struct sim_layout {
	size_t nics, pds, umems, mrs, uars, cqs, qps, dmabufs, gpus, gpu_mems, stage, pages, end;
};

static size_t lay_add(size_t *off, size_t bytes, size_t align)
{
	size_t at = DVX_ALIGN_UP(*off, align);

	*off = at + bytes;
	return at;
}

static bool cfg_ok(const struct dvx_sim_fabric_cfg *c)
{
	return c && c->max_nics && c->max_qps && c->max_cqs && c->max_mrs && c->max_umems &&
	       c->max_uars && c->max_pds && c->max_dmabufs && c->max_nics <= 64 &&
	       c->max_qps <= SIM_CAP_LIMIT && c->max_cqs <= SIM_CAP_LIMIT &&
	       c->max_mrs <= SIM_CAP_LIMIT && c->max_umems <= SIM_CAP_LIMIT &&
	       c->max_uars <= 4096 && c->max_pds <= SIM_CAP_LIMIT &&
	       c->max_dmabufs <= SIM_CAP_LIMIT && c->max_gpus <= DVX_SIM_MAX_GPUS &&
	       c->max_gpu_mems <= SIM_CAP_LIMIT && (!c->max_gpus || c->max_gpu_mems) &&
	       c->reorder <= 1 && c->reorder_stage <= (1u << 30);
}

static void layout(const struct dvx_sim_fabric_cfg *c, struct sim_layout *l)
{
	size_t off = sizeof(struct sim_fabric);
	size_t n = c->max_nics;

	l->nics = lay_add(&off, n * sizeof(struct sim_nic), 64);
	l->pds = lay_add(&off, n * c->max_pds * sizeof(struct sim_pd), 64);
	l->umems = lay_add(&off, n * c->max_umems * sizeof(struct sim_umem), 64);
	l->mrs = lay_add(&off, n * c->max_mrs * sizeof(struct sim_mr), 64);
	l->uars = lay_add(&off, n * c->max_uars * sizeof(struct sim_uar), 64);
	l->cqs = lay_add(&off, n * c->max_cqs * sizeof(struct sim_cq), 64);
	l->qps = lay_add(&off, n * c->max_qps * sizeof(struct sim_qp), 64);
	l->dmabufs = lay_add(&off, c->max_dmabufs * sizeof(struct sim_dmabuf), 64);
	l->gpus = lay_add(&off, c->max_gpus * sizeof(struct sim_gpu), 64);
	l->gpu_mems = lay_add(&off, c->max_gpu_mems * sizeof(struct sim_gpu_mem), 64);
	l->stage = lay_add(&off, c->reorder_stage, 64);
	l->pages = lay_add(&off, n * c->max_uars * DVX_SIM_UAR_PAGE_SIZE, DVX_SIM_UAR_PAGE_SIZE);
	l->end = off;
}

void dvx_sim_fabric_cfg_default(struct dvx_sim_fabric_cfg *cfg)
{
	if (!cfg)
		return;
	memset(cfg, 0, sizeof(*cfg));
	cfg->max_nics = 4;
	cfg->max_qps = 64;
	cfg->max_cqs = 64;
	cfg->max_mrs = 64;
	cfg->max_umems = 128;
	cfg->max_uars = 16;
	cfg->max_pds = 8;
	cfg->max_dmabufs = 16;
	cfg->max_gpus = 4;
	cfg->max_gpu_mems = 64;
	cfg->reorder_stage = 64u << 10;
}

size_t dvx_sim_fabric_mem_size(const struct dvx_sim_fabric_cfg *cfg)
{
	struct sim_layout l;

	if (!cfg_ok(cfg))
		return 0;
	layout(cfg, &l);
	/* slack: the start is aligned to 64 inside the storage, the pages to 4 KiB */
	return l.end + 64 + DVX_SIM_UAR_PAGE_SIZE;
}

int dvx_sim_fabric_init(void *storage, size_t len, const struct dvx_sim_fabric_cfg *cfg,
			struct dvx_sim_fabric **fab)
{
	struct sim_fabric *f;
	struct sim_layout l;
	uint8_t *base, *pages;
	uint32_t i;
	int rc;

	if (!storage || !fab || !cfg_ok(cfg) || len < dvx_sim_fabric_mem_size(cfg))
		return -EINVAL;
	base = (uint8_t *)DVX_ALIGN_UP((uintptr_t)storage, (uintptr_t)64);
	layout(cfg, &l);
	/* the UAR pages are aligned to 4 KiB in memory, inside the slack */
	pages = (uint8_t *)DVX_ALIGN_UP((uintptr_t)(base + l.pages), (uintptr_t)DVX_SIM_UAR_PAGE_SIZE);
	memset(base, 0, (size_t)(pages - base) + (l.end - l.pages));
	f = (struct sim_fabric *)(void *)base;
	rc = pthread_mutex_init(&f->lock, NULL);
	if (rc)
		return -rc;
	f->cfg = *cfg;
	f->hal.nic = &dvx_sim_nic_ops;
	f->hal.host = &dvx_sim_host_ops;
	f->hal.ctx = f;
	f->hal.name = "sim";
	f->nics = (struct sim_nic *)(void *)(base + l.nics);
	f->dmabufs = (struct sim_dmabuf *)(void *)(base + l.dmabufs);
	f->gpus = (struct sim_gpu *)(void *)(base + l.gpus);
	f->gpu_mems = (struct sim_gpu_mem *)(void *)(base + l.gpu_mems);
	f->hal.gpu = &dvx_sim_gpu_ops;
	f->uar_pages = pages;
	f->ro_stage = cfg->reorder_stage ? base + l.stage : NULL;
	f->ro_stage_cap = cfg->reorder_stage;
	f->ro_on = cfg->reorder;
	f->ro_rng = cfg->reorder_seed;
	if (!f->ro_on) {
		/* DVX_SIM_REORDER=<seed>: the suites run in the reorder mode unchanged */
		const char *e = getenv("DVX_SIM_REORDER");
		unsigned long long seed = e && *e ? strtoull(e, NULL, 0) : 0;

		if (seed) {
			f->ro_on = 1;
			f->ro_rng = seed;
		}
	}
	f->idle_spins = 64;
	f->idle_sleep_ns = 20000;
	f->kick_fd = -1;
	for (i = 0; i < cfg->max_nics; i++) {
		struct sim_nic *n = &f->nics[i];

		n->fab = f;
		n->index = i;
		n->pds = (struct sim_pd *)(void *)(base + l.pds) + (size_t)i * cfg->max_pds;
		n->umems = (struct sim_umem *)(void *)(base + l.umems) + (size_t)i * cfg->max_umems;
		n->mrs = (struct sim_mr *)(void *)(base + l.mrs) + (size_t)i * cfg->max_mrs;
		n->uars = (struct sim_uar *)(void *)(base + l.uars) + (size_t)i * cfg->max_uars;
		n->cqs = (struct sim_cq *)(void *)(base + l.cqs) + (size_t)i * cfg->max_cqs;
		n->qps = (struct sim_qp *)(void *)(base + l.qps) + (size_t)i * cfg->max_qps;
		/* numbers differ between NICs, so an id used on the wrong NIC is caught */
		n->next_id = 0x10 + i * 0x40;
	}
	atomic_init(&f->run, 0);
	atomic_init(&f->thread_up, 0);
	*fab = (struct dvx_sim_fabric *)(void *)f;
	return 0;
}
