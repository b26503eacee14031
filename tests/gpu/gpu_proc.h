/* SPDX-License-Identifier: MIT */
/*
 * tests/gpu/gpu_proc.h - the opening phase that the GPU tests' ranks as processes share:
 * the rank's GPU, the sockets bootstrap at an address, the multi-peer transport over
 * them with every peer on NVLink (no IB lanes), connected.
 */
#ifndef DVX_TEST_GPU_PROC_H
#define DVX_TEST_GPU_PROC_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dvx/bootstrap/bootstrap.h>
#include <dvx/gpu/gpu.h>
#include <dvx/mp/mp.h>

/* what gpu_proc_up() opens (the caller's objects) and how */
struct gpu_proc {
	struct dvx_bootstrap *bs;
	struct dvx_gpu *g;
	struct dvx_mp *mp;
	void **state;		/* receives the transport's memory (the caller frees it) */
	const char *addr;	/* the sockets bootstrap's address */
	int me, n, ordinal;	/* this rank, the ranks, this rank's GPU */
	int nib_ok;		/* IB peers are not a failure (else every peer is NVL) */
	uint64_t tmo;
};

/*
 * Rank @p->me of @p->n as a process (one per process: the bootstrap's memory is static)
 * on GPU @p->ordinal, its bootstrap at @p->addr, every other rank an NVL peer. 0, or -1
 * with the cause on stderr.
 */
static inline int gpu_proc_up(const struct gpu_proc *p)
{
	static uint64_t bsmem[65536];
	struct dvx_bootstrap_sock_cfg a;
	struct dvx_mp_cfg c;
	const char *what = "dvx_gpu_open";
	int err;

	err = dvx_gpu_open(p->g, dvx_hal_cuda(), p->ordinal, NULL);
	if (!err) {
		memset(&a, 0, sizeof(a));
		a.addr = p->addr;
		a.rank = p->me;
		a.nranks = p->n;
		a.max_unexpected = 16;
		a.slot_bytes = 8192;
		a.timeout_ns = p->tmo;
		what = "dvx_bootstrap_sock_init";
		err = dvx_bootstrap_sock_init(p->bs, &a, bsmem, sizeof(bsmem));
	}
	if (!err) {
		memset(&c, 0, sizeof(c));
		c.rank = p->me;
		c.nranks = p->n;
		c.bs = p->bs;
		c.gpu = p->g;
		c.timeout_ns = p->tmo;
		*p->state = aligned_alloc(64, (dvx_mp_mem_size(&c) + 63) & ~(size_t)63);
		what = "dvx_mp_init";
		err = *p->state ? dvx_mp_init(p->mp, &c, *p->state, dvx_mp_mem_size(&c)) : -ENOMEM;
	}
	if (!err && (p->mp->topo.nnvl != p->n || (!p->nib_ok && p->mp->topo.nib))) {
		fprintf(stderr, "rank %d: %d NVL, %d IB of %d: the GPUs of one host should make "
			"everyone NVL\n", p->me, p->mp->topo.nnvl, p->mp->topo.nib, p->n);
		return -1;
	}
	if (!err) {
		what = "dvx_mp_connect";
		err = dvx_mp_connect(p->mp, NULL, 0, NULL, 0);
	}
	if (err) {
		fprintf(stderr, "rank %d: %s = %d\n", p->me, what, err);
		return -1;
	}
	return 0;
}

/* the transport, the bootstrap and the GPU closed, the transport's memory freed (a
 * rank's last phase, whether gpu_proc_up() or threads opened them): 0, or -1 with the
 * cause on stderr */
static inline int gpu_proc_down(struct dvx_mp *mp, struct dvx_bootstrap *bs, struct dvx_gpu *g,
				void *state)
{
	int err = dvx_mp_fini(mp), err2;

	dvx_bootstrap_fini(bs);
	err2 = dvx_gpu_close(g);
	free(state);
	if (err || err2)
		fprintf(stderr, "closing: dvx_mp_fini = %d, dvx_gpu_close = %d\n", err, err2);
	return err || err2 ? -1 : 0;
}

#endif
