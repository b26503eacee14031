/* SPDX-License-Identifier: MIT */
/*
 * tests/lib/sim_world.h - ranks as threads of one process on the software NIC: the
 * facts of an injected topology (ranks on hosts, one GPU per host), a fabric with one
 * NIC per rank (and one software GPU per host, or none where the ranks share a real
 * GPU), a thread bootstrap group, and the threads.
 */
#ifndef DVX_TEST_SIM_WORLD_H
#define DVX_TEST_SIM_WORLD_H

#include <stdint.h>

#include <dvx/mp/topo.h>
#include <dvx/bootstrap/bootstrap.h>
#include <dvx/hal/sim.h>
#include <dvx/mp/mp.h>

#define DVX_TW_MAX 8

/**
 * struct dvx_tw - the world.
 * @n:		ranks
 * @host:	[n] each rank's host
 * @inf:	[n] the facts to inject (struct dvx_mp_cfg.inject)
 * @fab:	the software NIC's fabric (started)
 * @g:		the thread bootstrap group
 */
struct dvx_tw {
	int n;
	int host[DVX_TW_MAX];
	struct dvx_mp_rank_info inf[DVX_TW_MAX];
	struct dvx_sim_fabric *fab;
	struct dvx_bootstrap_tgroup *g;
	void *fab_mem;
	void *gmem;
};

/*
 * dvx_tw_init() - @n ranks on hosts @host[]; @gpu_uuid NULL: host h's GPU is the
 * fabric's software GPU h (facts with its UUID); else every rank's GPU is that real GPU
 * and the fabric has no software GPU. Every rank's facts say GPU, POSIX fd, IB.
 * Returns 0 or a negative errno (nothing held then).
 */
int dvx_tw_init(struct dvx_tw *w, int n, const int *host, const uint8_t *gpu_uuid);

/*
 * dvx_tw_facts() - only the facts of dvx_tw_init() (@w->n, @w->host, @w->inf), for a
 * world whose ranks are processes with fabrics of their own. Returns the hosts.
 */
int dvx_tw_facts(struct dvx_tw *w, int n, const int *host, const uint8_t *gpu_uuid);

/*
 * dvx_tw_init_lanes() - dvx_tw_init() with a fabric sized for @lanes lanes per peer
 * (QPs, CQs and UARs: a transport of qps_per_nic @lanes); dvx_tw_init() is @lanes 1.
 */
int dvx_tw_init_lanes(struct dvx_tw *w, int n, const int *host, const uint8_t *gpu_uuid,
		      uint32_t lanes);

/*
 * dvx_tw_gpus() - after dvx_tw_init() with a real GPU: rank r's GPU is @uuid[r % @n]
 * (rank r runs on ordinal r % n), and each rank's facts list the other @n - 1 GPUs as
 * ones it maps (the caller checked peer access), so ranks of one host on different GPUs
 * are NVL peers as dvx_mp_init() would find them.
 */
void dvx_tw_gpus(struct dvx_tw *w, const uint8_t (*uuid)[16], int n);

/*
 * dvx_tw_mp_cfg() - the multi-peer configuration rank @me of @w's ranks uses in the
 * suites: its bootstrap, GPU and one NIC with one QP of 64 WQEBBs per peer, the world's
 * topology injected, @flags, 20 s bounds. @c is overwritten.
 */
void dvx_tw_mp_cfg(const struct dvx_tw *w, int me, struct dvx_bootstrap *bs, struct dvx_gpu *gpu,
		   struct dvx_nic *nic, uint32_t flags, struct dvx_mp_cfg *c);

/* dvx_tw_run() - fn(args + r * stride) on one thread per rank r, all joined. */
void dvx_tw_run(struct dvx_tw *w, void *(*fn)(void *), void *args, size_t stride);

/*
 * dvx_tw_fini() - stop the fabric and release the world. Returns 0; -EBUSY when the
 * fabric still counts live objects (@what, if given, says which kind); a fini error.
 */
int dvx_tw_fini(struct dvx_tw *w, unsigned *what);

#endif
