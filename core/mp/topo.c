// SPDX-License-Identifier: MIT
/*
 * core/mp/topo.c - classify every rank as self, NVL or IB from everyone's published
 * facts (dvx/mp/topo.h, docs/mp.md). A pure function: no hal, no bootstrap.
 */
#include <errno.h>
#include <string.h>

#include <dvx/hal.h>
#include <dvx/mp/topo.h>

static size_t lay8(size_t n)
{
	return (n + 7u) & ~(size_t)7u;
}

size_t dvx_mp_topo_mem_size(int nranks)
{
	if (nranks < 1 || nranks > DVX_MP_MAX_RANKS)
		return 0;
	return lay8((size_t)nranks) + 5u * (size_t)nranks * sizeof(int32_t);
}

static int same_host(const struct dvx_mp_rank_info *a, const struct dvx_mp_rank_info *b)
{
	return !memcmp(a->boot_id, b->boot_id, sizeof(a->boot_id)) &&
	       !strncmp(a->hostname, b->hostname, sizeof(a->hostname));
}

static int lists(const struct dvx_mp_rank_info *a, const uint8_t uuid[16])
{
	uint32_t i, n = a->npeer_gpus < DVX_MP_MAX_LOCAL_GPUS ? a->npeer_gpus :
							     DVX_MP_MAX_LOCAL_GPUS;

	for (i = 0; i < n; i++)
		if (!memcmp(a->peer_uuids[i], uuid, 16))
			return 1;
	return 0;
}

static int zero16(const uint8_t *p)
{
	static const uint8_t z[16];

	return !memcmp(p, z, 16);
}

int dvx_mp_topo_nvl_edge(const struct dvx_mp_rank_info *a, const struct dvx_mp_rank_info *b)
{
	if (!(a->flags & DVX_MP_INFO_GPU) || !(b->flags & DVX_MP_INFO_GPU))
		return 0;
	if ((a->flags & DVX_MP_INFO_FABRIC) && (b->flags & DVX_MP_INFO_FABRIC) &&
	    !zero16(a->clique) && !memcmp(a->clique, b->clique, 16))
		return 1;
	if (!same_host(a, b))
		return 0;
	if (!memcmp(a->gpu_uuid, b->gpu_uuid, 16))
		return 1;
	return lists(a, b->gpu_uuid) && lists(b, a->gpu_uuid);
}

int dvx_mp_topo_classify(struct dvx_mp_topo *topo, void *mem, size_t mem_len,
			 const struct dvx_mp_rank_info *infos, int nranks, int rank,
			 uint32_t flags, struct dvx_diag *diag)
{
	struct dvx_mp_topo t;
	size_t need = dvx_mp_topo_mem_size(nranks);
	uint8_t *base = mem;
	int32_t *queue;
	int r, a, b, head, tail, nib = 0, nnvl = 0;
	int force_ib = !!(flags & DVX_MP_TOPO_FORCE_IB), no_ib = !!(flags & DVX_MP_TOPO_NO_IB);

	if (!topo || !mem || !need || mem_len < need || (uintptr_t)mem % 8 || !infos ||
	    rank < 0 || rank >= nranks || (flags & ~(uint32_t)3u) || (force_ib && no_ib && nranks > 1))
		return dvx_hal_diag_set(diag, -EINVAL, DVX_DIAG_ARG, "mp_topo_classify",
					"bad arguments (FORCE_IB with NO_IB reaches nobody)");
	for (r = 0; r < nranks; r++)
		if (infos[r].version != DVX_MP_INFO_VERSION || infos[r].rank != r)
			return dvx_hal_diag_set(diag, -EINVAL, DVX_DIAG_ARG, "mp_topo_classify",
						"rank %d's facts are of another version or rank", r);
	/* IB disabled: every pair must be NVL, or nobody goes on (every rank agrees) */
	if (no_ib)
		for (a = 0; a < nranks; a++)
			for (b = a + 1; b < nranks; b++)
				if (!dvx_mp_topo_nvl_edge(&infos[a], &infos[b]))
					return dvx_hal_diag_set(diag, -EHOSTUNREACH, DVX_DIAG_ARG,
								"mp_topo_classify",
								"IB disabled and rank %d cannot reach rank %d over NVLink",
								a, b);

	memset(&t, 0, sizeof(t));
	t.rank = rank;
	t.nranks = nranks;
	t.kind = base;
	t.nvl_local = (int32_t *)(void *)(base + lay8((size_t)nranks));
	t.nvl_peer = t.nvl_local + nranks;
	t.ib_idx = t.nvl_peer + nranks;
	t.nvl_ranks = t.ib_idx + nranks;
	t.ib_ranks = t.nvl_ranks + nranks;

	/* the NVL domain: ranks joined to this one by NVL edges (breadth first; the
	 * queue is ib_ranks, the marks kind[] = 1) */
	memset(t.kind, 0, (size_t)nranks);
	queue = t.ib_ranks;
	head = tail = 0;
	queue[tail++] = rank;
	t.kind[rank] = 1;
	while (head < tail && !force_ib) {
		a = queue[head++];
		for (b = 0; b < nranks; b++)
			if (!t.kind[b] && dvx_mp_topo_nvl_edge(&infos[a], &infos[b])) {
				t.kind[b] = 1;
				queue[tail++] = b;
			}
	}
	for (r = 0; r < nranks; r++) {
		t.nvl_local[r] = -1;
		t.nvl_peer[r] = -1;
		t.ib_idx[r] = -1;
		if (t.kind[r])
			t.nvl_ranks[nnvl++] = r;	/* increasing: local ranks by global order */
	}
	for (r = 0; r < nnvl; r++)
		t.nvl_local[t.nvl_ranks[r]] = r;
	t.nnvl = nnvl;
	t.nvl_me = t.nvl_local[rank];
	for (r = 0; r < nranks; r++) {
		if (r == rank) {
			t.kind[r] = DVX_MP_SELF;
		} else if (!force_ib && t.nvl_local[r] >= 0 &&
			   dvx_mp_topo_nvl_edge(&infos[rank], &infos[r])) {
			t.kind[r] = DVX_MP_NVL;
			t.nvl_peer[r] = t.nvl_local[r] < t.nvl_me ? t.nvl_local[r] : t.nvl_local[r] - 1;
			t.nnvl_peers++;
		} else {
			t.kind[r] = DVX_MP_IB;
			t.ib_idx[r] = nib;
			t.ib_ranks[nib++] = r;
		}
	}
	t.nib = nib;
	/* does any pair of the whole group go over IB? then everyone joins the IB set-up */
	t.any_ib = 0;
	if (!no_ib)
		for (a = 0; a < nranks && !t.any_ib; a++)
			for (b = a + 1; b < nranks && !t.any_ib; b++)
				if (force_ib || !dvx_mp_topo_nvl_edge(&infos[a], &infos[b]))
					t.any_ib = 1;
	*topo = t;
	return 0;
}
