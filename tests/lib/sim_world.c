// SPDX-License-Identifier: MIT
/* tests/lib/sim_world.c - ranks as threads on the software NIC (sim_world.h). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim_world.h"

int dvx_tw_init(struct dvx_tw *w, int n, const int *host, const uint8_t *gpu_uuid)
{
	return dvx_tw_init_lanes(w, n, host, gpu_uuid, 1);
}

int dvx_tw_facts(struct dvx_tw *w, int n, const int *host, const uint8_t *gpu_uuid)
{
	int r, nhosts = 0;

	w->n = n;
	for (r = 0; r < n; r++) {
		struct dvx_mp_rank_info *i = &w->inf[r];

		memset(i, 0, sizeof(*i));
		w->host[r] = host[r];
		if (host[r] + 1 > nhosts)
			nhosts = host[r] + 1;
		i->version = DVX_MP_INFO_VERSION;
		i->rank = r;
		i->flags = DVX_MP_INFO_GPU | DVX_MP_INFO_FD | DVX_MP_INFO_IB;
		i->pid = (int32_t)getpid();
		memset(i->boot_id, 0x30 + host[r], 16);
		snprintf(i->hostname, sizeof(i->hostname), "host%d", host[r]);
		if (gpu_uuid) {
			memcpy(i->gpu_uuid, gpu_uuid, 16);
		} else {
			struct dvx_sim_gpu_cfg gc;

			dvx_sim_gpu_cfg_default(&gc, (unsigned)host[r]);
			memcpy(i->gpu_uuid, gc.attr.uuid, 16);
		}
	}
	return nhosts;
}

int dvx_tw_init_lanes(struct dvx_tw *w, int n, const int *host, const uint8_t *gpu_uuid,
		      uint32_t lanes)
{
	struct dvx_sim_fabric_cfg fc;
	struct dvx_bootstrap_tgroup_cfg ga;
	int r, nhosts = 0, err;
	size_t sz;

	if (n < 1 || n > DVX_TW_MAX)
		return -EINVAL;
	memset(w, 0, sizeof(*w));
	nhosts = dvx_tw_facts(w, n, host, gpu_uuid);
	dvx_sim_fabric_cfg_default(&fc);
	fc.max_nics = (uint32_t)n;
	fc.max_gpus = gpu_uuid ? 0 : (uint32_t)nhosts;
	if (gpu_uuid)
		fc.max_gpu_mems = 0;
	/* a lane: its main QP, companion and partner, each with a CQ, and a UAR */
	if (!lanes)
		lanes = 1;
	fc.max_qps = (uint32_t)n * 3u * lanes + 8u;
	fc.max_cqs = fc.max_qps;
	if (lanes > 1 && fc.max_uars < (uint32_t)n * lanes + 16u)
		fc.max_uars = (uint32_t)n * lanes + 16u;	/* one lane: the defaults, as before */
	sz = dvx_sim_fabric_mem_size(&fc);
	w->fab_mem = calloc(1, sz);
	if (!w->fab_mem)
		return -ENOMEM;
	err = dvx_sim_fabric_init(w->fab_mem, sz, &fc, &w->fab);
	for (r = 0; !err && r < n; r++) {
		struct dvx_sim_nic_cfg nc;

		dvx_sim_nic_cfg_default(&nc, (unsigned)r);
		if (dvx_sim_add_nic(w->fab, &nc) != r)
			err = -EIO;
	}
	for (r = 0; !err && !gpu_uuid && r < nhosts; r++) {
		struct dvx_sim_gpu_cfg gc;

		dvx_sim_gpu_cfg_default(&gc, (unsigned)r);
		if (dvx_sim_add_gpu(w->fab, &gc) != r)
			err = -EIO;
	}
	if (!err) {
		memset(&ga, 0, sizeof(ga));
		ga.nranks = n;
		ga.max_unexpected = 64;
		ga.slot_bytes = 8192;
		sz = dvx_bootstrap_tgroup_mem_size(n, 64, 8192);
		w->gmem = calloc(1, sz);
		err = w->gmem ? dvx_bootstrap_tgroup_init(&w->g, &ga, w->gmem, sz) : -ENOMEM;
	}
	if (!err)
		err = dvx_sim_start(w->fab);
	if (err) {
		if (w->g)
			dvx_bootstrap_tgroup_fini(w->g);
		if (w->fab)
			dvx_sim_fini(w->fab);
		free(w->gmem);
		free(w->fab_mem);
		memset(w, 0, sizeof(*w));
	}
	return err;
}

void dvx_tw_gpus(struct dvx_tw *w, const uint8_t (*uuid)[16], int n)
{
	int r, o;

	for (r = 0; n > 0 && r < w->n; r++) {
		struct dvx_mp_rank_info *i = &w->inf[r];

		memcpy(i->gpu_uuid, uuid[r % n], 16);
		i->npeer_gpus = 0;
		for (o = 0; o < n && i->npeer_gpus < DVX_MP_MAX_LOCAL_GPUS; o++)
			if (o != r % n)
				memcpy(i->peer_uuids[i->npeer_gpus++], uuid[o], 16);
	}
}

void dvx_tw_run(struct dvx_tw *w, void *(*fn)(void *), void *args, size_t stride)
{
	pthread_t th[DVX_TW_MAX];
	int r;

	for (r = 0; r < w->n; r++)
		if (pthread_create(&th[r], NULL, fn, (uint8_t *)args + (size_t)r * stride))
			th[r] = 0;
	for (r = 0; r < w->n; r++)
		if (th[r])
			pthread_join(th[r], NULL);
}

int dvx_tw_fini(struct dvx_tw *w, unsigned *what)
{
	struct dvx_sim_stats st;
	unsigned i;
	int err = 0, e;

	dvx_sim_stop(w->fab);
	if (!dvx_sim_get_stats(w->fab, &st))
		for (i = 0; i < sizeof(st.live) / sizeof(st.live[0]); i++)
			if (st.live[i] && !err) {
				err = -EBUSY;
				if (what)
					*what = i;
			}
	e = dvx_bootstrap_tgroup_fini(w->g);
	err = err ? err : e;
	e = dvx_sim_fini(w->fab);
	err = err ? err : e;
	free(w->gmem);
	free(w->fab_mem);
	return err;
}

void dvx_tw_mp_cfg(const struct dvx_tw *w, int me, struct dvx_bootstrap *bs, struct dvx_gpu *gpu,
		   struct dvx_nic *nic, uint32_t flags, struct dvx_mp_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->rank = me;
	c->nranks = w->n;
	c->bs = bs;
	c->gpu = gpu;
	c->flags = flags;
	c->ib.nnics = 1;
	c->ib.nics[0] = nic;
	c->ib.qps_per_nic = 1;
	c->ib.sq_depth = 64;
	c->ib.comp_depth = 16;
	c->inject = w->inf;
	c->timeout_ns = 20000000000ull;
}
