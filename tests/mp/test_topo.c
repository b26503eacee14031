// SPDX-License-Identifier: MIT
/*
 * The multi-peer transport's topology (core/mp/topo.c) on injected facts: one rank,
 * one host and one GPU, ranks of two hosts interleaved, every rank apart, GPUs without
 * peer access or with access one way only, a host whose GPUs are not all peers (the
 * NVL domain is the connected set; a member that is not a peer is IB), NVLink fabric
 * cliques across hosts, ranks without a GPU, forced IB, IB disabled (the error names
 * the ranks), bad facts and arguments; and on random topologies of 1..8 ranks that
 * every pair of ranks agrees on how they reach each other and on their domains.
 */
#include <errno.h>
#include <stdlib.h>

#include "../lib/dvx_test.h"

#include <dvx/mp/topo.h>

#define MAXR 8

static struct dvx_mp_rank_info inf[MAXR];
static uint64_t mem[MAXR][64];

/* rank @r on host @host with GPU @gpu (-1: none); GPUs of one host are peers */
static void fact(int r, int host, int gpu)
{
	struct dvx_mp_rank_info *i = &inf[r];
	int g;

	memset(i, 0, sizeof(*i));
	i->version = DVX_MP_INFO_VERSION;
	i->rank = r;
	i->pid = 100 + r;
	memset(i->boot_id, 0xb0 + host, 16);
	snprintf(i->hostname, sizeof(i->hostname), "host%d", host);
	if (gpu < 0)
		return;
	i->flags = DVX_MP_INFO_GPU | DVX_MP_INFO_FD;
	memset(i->gpu_uuid, 0, 16);
	i->gpu_uuid[0] = (uint8_t)host;
	i->gpu_uuid[1] = (uint8_t)gpu;
	snprintf(i->gpu_pci, sizeof(i->gpu_pci), "0000:%02x:00.0", 0x18 + gpu);
	for (g = 0; g < 8; g++)
		if (g != gpu) {
			i->peer_uuids[i->npeer_gpus][0] = (uint8_t)host;
			i->peer_uuids[i->npeer_gpus][1] = (uint8_t)g;
			i->npeer_gpus++;
		}
}

static void unpeer(int r, int host, int gpu)
{
	struct dvx_mp_rank_info *i = &inf[r];
	uint32_t k;

	for (k = 0; k < i->npeer_gpus; k++)
		if (i->peer_uuids[k][0] == host && i->peer_uuids[k][1] == gpu)
			i->peer_uuids[k][0] = 0xee;
}

static struct dvx_mp_topo classify(int n, int me, uint32_t flags)
{
	struct dvx_mp_topo t;
	struct dvx_diag d;

	memset(&d, 0, sizeof(d));
	assert_true(dvx_mp_topo_mem_size(n) <= sizeof(mem[0]));
	if (dvx_mp_topo_classify(&t, mem[me], sizeof(mem[me]), inf, n, me, flags, &d))
		fail_msg("classify: %s", d.msg);
	return t;
}

static void test_single(void **state)
{
	struct dvx_mp_topo t;

	(void)state;
	fact(0, 0, 0);
	t = classify(1, 0, 0);
	assert_int_equal(t.nnvl, 1);
	assert_int_equal(t.nvl_me, 0);
	assert_int_equal(t.nnvl_peers, 0);
	assert_int_equal(t.nib, 0);
	assert_int_equal(t.any_ib, 0);
	assert_int_equal(dvx_mp_topo_kind(&t, 0), DVX_MP_SELF);
	assert_int_equal(dvx_mp_topo_kind(&t, 1), DVX_MP_NONE);
	assert_int_equal(dvx_mp_topo_nvl_peer(&t, 0), -1);
	assert_int_equal(dvx_mp_topo_nvl_local(&t, 0), 0);
	/* alone, even both flags reach everybody there is */
	t = classify(1, 0, DVX_MP_TOPO_FORCE_IB | DVX_MP_TOPO_NO_IB);
	assert_int_equal(t.nib, 0);
}

static void test_one_gpu(void **state)
{
	struct dvx_mp_topo t;
	int r;

	(void)state;
	for (r = 0; r < 4; r++)
		fact(r, 0, 0);		/* processes sharing one GPU */
	t = classify(4, 2, 0);
	assert_int_equal(t.nnvl, 4);
	assert_int_equal(t.nvl_me, 2);
	assert_int_equal(t.nnvl_peers, 3);
	assert_int_equal(t.nib, 0);
	assert_int_equal(t.any_ib, 0);
	for (r = 0; r < 4; r++) {
		assert_int_equal(t.nvl_ranks[r], r);
		assert_int_equal(t.nvl_local[r], r);
		assert_int_equal(t.ib_idx[r], -1);
	}
	assert_int_equal(t.kind[2], DVX_MP_SELF);
	assert_int_equal(t.nvl_peer[0], 0);
	assert_int_equal(t.nvl_peer[1], 1);
	assert_int_equal(t.nvl_peer[3], 2);
	/* IB disabled: fine, everybody is NVL */
	t = classify(4, 0, DVX_MP_TOPO_NO_IB);
	assert_int_equal(t.nnvl_peers, 3);
}

static void test_two_hosts(void **state)
{
	struct dvx_mp_topo t;
	int r;

	(void)state;
	for (r = 0; r < 8; r++)
		fact(r, r & 1, r / 2);	/* even ranks on host 0, odd on host 1 */
	t = classify(8, 0, 0);
	assert_int_equal(t.nnvl, 4);
	assert_int_equal(t.nnvl_peers, 3);
	assert_int_equal(t.nib, 4);
	assert_int_equal(t.any_ib, 1);
	for (r = 0; r < 4; r++) {
		assert_int_equal(t.nvl_ranks[r], 2 * r);
		assert_int_equal(t.ib_ranks[r], 2 * r + 1);
		assert_int_equal(t.ib_idx[2 * r + 1], r);
		assert_int_equal(t.kind[2 * r + 1], DVX_MP_IB);
		assert_int_equal(t.nvl_local[2 * r + 1], -1);
	}
	assert_int_equal(t.nvl_peer[2], 0);
	assert_int_equal(t.nvl_peer[6], 2);
	/* from an odd rank in the middle */
	t = classify(8, 5, 0);
	assert_int_equal(t.nvl_me, 2);
	assert_int_equal(t.nvl_ranks[0], 1);
	assert_int_equal(t.nvl_peer[1], 0);
	assert_int_equal(t.nvl_peer[3], 1);
	assert_int_equal(t.nvl_peer[7], 2);
	assert_int_equal(t.ib_idx[0], 0);
	assert_int_equal(t.ib_idx[6], 3);
	assert_int_equal(t.ib_ranks[3], 6);
	/* forced IB: all of them */
	t = classify(8, 5, DVX_MP_TOPO_FORCE_IB);
	assert_int_equal(t.nib, 7);
	assert_int_equal(t.nnvl, 1);
	assert_int_equal(t.ib_idx[6], 5);
	assert_int_equal(t.ib_idx[4], 4);
	assert_int_equal(t.any_ib, 1);
}

static void test_no_ib_errors(void **state)
{
	struct dvx_mp_topo t;
	struct dvx_diag d;
	int r;

	(void)state;
	for (r = 0; r < 3; r++)
		fact(r, 0, r);
	fact(3, 1, 0);			/* rank 3 lives elsewhere */
	memset(&d, 0, sizeof(d));
	memset(&t, 0x77, sizeof(t));
	assert_int_equal(dvx_mp_topo_classify(&t, mem[0], sizeof(mem[0]), inf, 4, 0,
					      DVX_MP_TOPO_NO_IB, &d), -EHOSTUNREACH);
	assert_non_null(strstr(d.msg, "rank 0 cannot reach rank 3"));
	assert_int_equal(t.rank, 0x77777777);	/* nothing written */
	/* every rank fails, not only the ones that miss a peer */
	assert_int_equal(dvx_mp_topo_classify(&t, mem[1], sizeof(mem[1]), inf, 4, 1,
					      DVX_MP_TOPO_NO_IB, &d), -EHOSTUNREACH);
	assert_int_equal(dvx_mp_topo_classify(&t, mem[1], sizeof(mem[1]), inf, 4, 1,
					      DVX_MP_TOPO_NO_IB | DVX_MP_TOPO_FORCE_IB, &d),
			 -EINVAL);
	/* bad facts and arguments */
	inf[2].version = 9;
	assert_int_equal(dvx_mp_topo_classify(&t, mem[1], sizeof(mem[1]), inf, 4, 1, 0, &d),
			 -EINVAL);
	assert_non_null(strstr(d.msg, "rank 2"));
	inf[2].version = DVX_MP_INFO_VERSION;
	inf[2].rank = 1;
	assert_int_equal(dvx_mp_topo_classify(&t, mem[1], sizeof(mem[1]), inf, 4, 1, 0, NULL),
			 -EINVAL);
	inf[2].rank = 2;
	assert_int_equal(dvx_mp_topo_classify(&t, mem[1], 8, inf, 4, 1, 0, NULL), -EINVAL);
	assert_int_equal(dvx_mp_topo_classify(&t, (uint8_t *)mem[1] + 4, 200, inf, 4, 1, 0, NULL),
			 -EINVAL);
	assert_int_equal(dvx_mp_topo_classify(&t, mem[1], sizeof(mem[1]), inf, 4, 4, 0, NULL),
			 -EINVAL);
	assert_int_equal(dvx_mp_topo_classify(&t, mem[1], sizeof(mem[1]), inf, 4, 1, 8, NULL),
			 -EINVAL);
	assert_int_equal(dvx_mp_topo_mem_size(0), 0);
	assert_int_equal(dvx_mp_topo_mem_size(DVX_MP_MAX_RANKS + 1), 0);
}

static void test_peer_access(void **state)
{
	struct dvx_mp_topo t;

	(void)state;
	/* three GPUs of one host: 0-1 and 1-2 are peers, 0-2 only one way */
	fact(0, 0, 0);
	fact(1, 0, 1);
	fact(2, 0, 2);
	unpeer(2, 0, 0);		/* GPU 2 cannot map GPU 0 (GPU 0 could map GPU 2) */
	t = classify(3, 0, 0);
	assert_int_equal(t.nnvl, 3);	/* the domain is connected through rank 1 */
	assert_int_equal(t.kind[1], DVX_MP_NVL);
	assert_int_equal(t.kind[2], DVX_MP_IB);
	assert_int_equal(t.nvl_local[2], 2);
	assert_int_equal(t.nvl_peer[2], -1);
	assert_int_equal(t.ib_idx[2], 0);
	assert_int_equal(t.nib, 1);
	t = classify(3, 1, 0);
	assert_int_equal(t.nib, 0);
	assert_int_equal(t.nnvl_peers, 2);
	/* no peer access at all: IB on one host */
	unpeer(0, 0, 1);
	unpeer(1, 0, 2);
	t = classify(3, 0, 0);
	assert_int_equal(t.nnvl, 1);
	assert_int_equal(t.nib, 2);
	/* ranks without a GPU never use NVLink */
	fact(0, 0, -1);
	fact(1, 0, -1);
	t = classify(2, 0, 0);
	assert_int_equal(t.kind[1], DVX_MP_IB);
}

static void test_fabric(void **state)
{
	struct dvx_mp_topo t;
	int r;

	(void)state;
	for (r = 0; r < 4; r++) {
		fact(r, r, 0);		/* four hosts */
		inf[r].flags |= DVX_MP_INFO_FABRIC;
		memset(inf[r].clique, r < 3 ? 0xc1 : 0xc2, 16);
	}
	t = classify(4, 1, 0);
	assert_int_equal(t.nnvl, 3);
	assert_int_equal(t.kind[0], DVX_MP_NVL);
	assert_int_equal(t.kind[2], DVX_MP_NVL);
	assert_int_equal(t.kind[3], DVX_MP_IB);
	/* a zero clique is no clique */
	memset(inf[2].clique, 0, 16);
	memset(inf[1].clique, 0, 16);
	t = classify(4, 1, 0);
	assert_int_equal(t.kind[2], DVX_MP_IB);
}

/* random facts: every pair agrees, every domain is the same set from each member */
static void test_random(void **state)
{
	struct dvx_mp_topo t[MAXR];
	unsigned seed = 12345;
	int iter, n, a, b;

	(void)state;
	for (iter = 0; iter < 2000; iter++) {
		n = 1 + (int)(rand_r(&seed) % MAXR);
		for (a = 0; a < n; a++) {
			int gpu = (int)(rand_r(&seed) % 4) - 1;

			fact(a, (int)(rand_r(&seed) % 3), gpu);
			if (gpu >= 0 && rand_r(&seed) % 4 == 0)
				unpeer(a, inf[a].hostname[4] - '0', (int)(rand_r(&seed) % 3));
		}
		for (a = 0; a < n; a++)
			t[a] = classify(n, a, 0);
		for (a = 0; a < n; a++) {
			int nn = 0, ni = 0;

			for (b = 0; b < n; b++) {
				assert_int_equal(t[a].kind[b] == DVX_MP_SELF, a == b);
				assert_int_equal(t[a].kind[b], t[b].kind[a] == DVX_MP_SELF ?
						 DVX_MP_SELF : t[b].kind[a]);
				/* domains: the same members, the same local ranks */
				assert_int_equal(t[a].nvl_local[b] >= 0, t[b].nvl_local[a] >= 0);
				if (t[a].nvl_local[b] >= 0) {
					assert_int_equal(t[a].nnvl, t[b].nnvl);
					assert_int_equal(t[a].nvl_local[b], t[b].nvl_me);
				}
				nn += t[a].kind[b] == DVX_MP_NVL;
				ni += t[a].kind[b] == DVX_MP_IB;
				if (t[a].kind[b] == DVX_MP_IB)
					assert_int_equal(t[a].ib_ranks[t[a].ib_idx[b]], b);
				if (t[a].kind[b] == DVX_MP_NVL)
					assert_int_equal(t[a].nvl_ranks[t[a].nvl_local[b]], b);
				assert_int_equal(t[a].any_ib, t[b].any_ib);
			}
			assert_int_equal(nn, t[a].nnvl_peers);
			assert_int_equal(ni, t[a].nib);
			assert_int_equal(nn + ni + 1, n);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_single),
		cmocka_unit_test(test_one_gpu),
		cmocka_unit_test(test_two_hosts),
		cmocka_unit_test(test_no_ib_errors),
		cmocka_unit_test(test_peer_access),
		cmocka_unit_test(test_fabric),
		cmocka_unit_test(test_random),
	};

	return cmocka_run_group_tests_name("mp-topo", tests, NULL, NULL);
}
