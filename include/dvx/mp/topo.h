/* SPDX-License-Identifier: MIT */
/*
 * dvx/mp/topo.h - who reaches whom, and how: the topology of the multi-peer transport.
 *
 * Every rank publishes a struct dvx_mp_rank_info (its host, its GPU, the GPUs its GPU
 * can map, its process); with everyone's facts, every rank classifies every other the
 * same way (docs/mp.md):
 *
 *  - SELF for its own rank;
 *  - NVL when the peer runs on the same host (the same kernel boot id and host name)
 *    and its GPU is the same GPU (same UUID) or the two GPUs can map each other's
 *    memory (peer access both ways), or both sit in the same NVLink fabric clique;
 *  - IB otherwise (reached through the P2P IBGDA transport);
 *  - NONE when IB is disabled and the peer is not NVL-reachable: an error of
 *    dvx_mp_topo_classify() that names the rank.
 *
 * The NVL domain of a rank is the set of ranks connected to it by NVL edges (itself
 * included): the ranks of one host's NVLink domain that run collectives together
 * (dvx_bootstrap_sub_init()). Inside it every rank has a local rank; NVL arrays are
 * sized by the domain and indexed by the local rank (nvl_local) or its skip-self
 * form (nvl_peer); IB arrays are sized by the number of IB peers and indexed by the
 * dense IB index (ib_idx). The two never share an index space.
 *
 * Everything lives in caller memory (dvx_mp_topo_mem_size()); nothing here talks to
 * anyone: dvx_mp_topo_classify() is a pure function of the facts, so tests inject
 * topologies by writing the facts.
 */
#ifndef DVX_MP_TOPO_H
#define DVX_MP_TOPO_H

#include <dvx/compiler.h>
#include <dvx/diag.h>

DVX_BEGIN_DECLS

#define DVX_MP_INFO_VERSION 1u
#define DVX_MP_MAX_LOCAL_GPUS 16	/* GPUs one rank's GPU can list as peers */
#define DVX_MP_HOSTNAME_MAX 64
#define DVX_MP_MAX_RANKS 4096

/* struct dvx_mp_rank_info.flags */
enum {
	DVX_MP_INFO_GPU = 1u << 0,	/* the rank has a GPU (@gpu_uuid, @gpu_pci valid) */
	DVX_MP_INFO_IB = 1u << 1,	/* the rank has NICs for IB peers */
	DVX_MP_INFO_FD = 1u << 2,	/* its GPU exports POSIX-fd handles */
	DVX_MP_INFO_FABRIC = 1u << 3,	/* its GPU exports fabric handles (@clique valid) */
};

/**
 * struct dvx_mp_rank_info - what a rank publishes about itself (fixed layout, sent as
 * bytes to ranks of the same build).
 * @version:	DVX_MP_INFO_VERSION
 * @rank:	the rank
 * @flags:	DVX_MP_INFO_*
 * @pid:	process id (as the host sees it)
 * @npeer_gpus:	entries in @peer_uuids
 * @boot_id:	the host kernel's boot id (dvx_hal_host_ident())
 * @hostname:	the host's name, NUL-terminated
 * @gpu_uuid:	the GPU's UUID
 * @gpu_pci:	the GPU's PCI address, NUL-terminated
 * @clique:	the NVLink fabric domain (cluster and clique) of the GPU; all zero when
 *		none: ranks with equal non-zero cliques and FABRIC reach each other over
 *		NVLink whatever their host
 * @peer_uuids:	UUIDs of the other GPUs of the host this rank's GPU can map
 *		(cuDeviceCanAccessPeer)
 */
struct dvx_mp_rank_info {
	uint32_t version;
	int32_t rank;
	uint32_t flags;
	int32_t pid;
	uint32_t npeer_gpus;
	uint32_t rsvd;
	uint8_t boot_id[16];
	char hostname[DVX_MP_HOSTNAME_MAX];
	uint8_t gpu_uuid[16];
	char gpu_pci[16];
	uint8_t clique[16];
	uint8_t peer_uuids[DVX_MP_MAX_LOCAL_GPUS][16];
};

DVX_ASSERT_SIZE(struct dvx_mp_rank_info, 408);

/** enum dvx_mp_kind - how a rank is reached. */
enum dvx_mp_kind {
	DVX_MP_SELF = 0,
	DVX_MP_NVL = 1,
	DVX_MP_IB = 2,
	DVX_MP_NONE = 3,	/* not reachable (IB disabled); never in a valid topology */
};

/* dvx_mp_topo_classify() flags */
enum {
	DVX_MP_TOPO_FORCE_IB = 1u << 0,	/* every other rank is IB (no NVL at all) */
	DVX_MP_TOPO_NO_IB = 1u << 1,	/* no IB: every other rank must be NVL-reachable */
};

/**
 * struct dvx_mp_topo - one rank's view of the group. The arrays live in the memory
 * given to dvx_mp_topo_init(); read them directly or with the inline helpers.
 * @rank:	this rank
 * @nranks:	ranks in the group
 * @nnvl:	ranks in this rank's NVL domain, itself included (1: no NVL peer)
 * @nvl_me:	this rank's local rank in its NVL domain
 * @nnvl_peers:	NVL peers (NVL-classified ranks, not self)
 * @nib:	IB peers
 * @any_ib:	1 when any two ranks of the whole group are IB peers (then every rank
 *		takes part in the IB transport's set-up, with or without IB peers)
 * @kind:	[nranks] enum dvx_mp_kind per rank
 * @nvl_local:	[nranks] local rank in this rank's NVL domain, -1 outside it
 * @nvl_peer:	[nranks] NVL peer index (skip-self local rank) of an NVL peer, -1
 *		for self and every other kind
 * @ib_idx:	[nranks] IB peer index, -1 for every other kind
 * @nvl_ranks:	[nnvl] the domain's ranks by local rank (increasing, self included)
 * @ib_ranks:	[nib] the IB peers by IB index (increasing)
 */
struct dvx_mp_topo {
	int32_t rank;
	int32_t nranks;
	int32_t nnvl;
	int32_t nvl_me;
	int32_t nnvl_peers;
	int32_t nib;
	int32_t any_ib;
	int32_t rsvd;
	uint8_t *kind;
	int32_t *nvl_local;
	int32_t *nvl_peer;
	int32_t *ib_idx;
	int32_t *nvl_ranks;
	int32_t *ib_ranks;
};

/**
 * dvx_mp_topo_mem_size() - bytes of caller memory a topology of @nranks needs.
 * @nranks:	1 ... DVX_MP_MAX_RANKS
 * Return: the size (8-byte aligned memory), 0 for a bad @nranks.
 */
size_t dvx_mp_topo_mem_size(int nranks);

/**
 * dvx_mp_topo_classify() - classify every rank from everyone's facts.
 * @topo:	caller storage; its arrays are laid out in @mem
 * @mem:	dvx_mp_topo_mem_size(@nranks) bytes, 8-byte aligned, owned by @topo until
 *		the caller reuses it
 * @mem_len:	its length
 * @infos:	[@nranks] every rank's facts, by rank (@infos[r].rank == r)
 * @nranks:	ranks in the group
 * @rank:	this rank
 * @flags:	DVX_MP_TOPO_FORCE_IB, DVX_MP_TOPO_NO_IB
 * @diag:	optional: on failure says why (and which rank)
 *
 * Every rank computes the same classification from the same facts: NVL edges are
 * symmetric (same host with the same GPU or peer access both ways, or the same fabric
 * clique), the NVL domain is the set of ranks joined to this one by NVL edges, and a
 * domain member that is not itself NVL to this rank (partial peer access) is IB.
 *
 * Context: any. Return: 0; -EINVAL (bad arguments, facts of a different version or
 * rank, FORCE_IB with NO_IB in a group of more than one rank); -EHOSTUNREACH with
 * NO_IB when a rank is not NVL-reachable (@diag names it); nothing is written on
 * failure but @diag.
 */
int dvx_mp_topo_classify(struct dvx_mp_topo *topo, void *mem, size_t mem_len,
			 const struct dvx_mp_rank_info *infos, int nranks, int rank,
			 uint32_t flags, struct dvx_diag *diag);

/**
 * dvx_mp_topo_nvl_edge() - whether two ranks' facts make them NVL peers (the same host
 * and GPU, peer access both ways, or one fabric clique); symmetric.
 * @a, @b:	the two ranks' facts
 * Context: any. Return: 1 or 0.
 */
int dvx_mp_topo_nvl_edge(const struct dvx_mp_rank_info *a, const struct dvx_mp_rank_info *b);

/** dvx_mp_topo_kind() - how @r is reached (DVX_MP_NONE for a rank out of range). */
static inline enum dvx_mp_kind dvx_mp_topo_kind(const struct dvx_mp_topo *t, int r)
{
	return r >= 0 && r < t->nranks ? (enum dvx_mp_kind)t->kind[r] : DVX_MP_NONE;
}

/** dvx_mp_topo_ib_index() - @r's IB peer index, -1 if @r is not an IB peer. */
static inline int dvx_mp_topo_ib_index(const struct dvx_mp_topo *t, int r)
{
	return r >= 0 && r < t->nranks ? t->ib_idx[r] : -1;
}

/** dvx_mp_topo_nvl_peer() - @r's NVL peer index, -1 if @r is not an NVL peer. */
static inline int dvx_mp_topo_nvl_peer(const struct dvx_mp_topo *t, int r)
{
	return r >= 0 && r < t->nranks ? t->nvl_peer[r] : -1;
}

/** dvx_mp_topo_nvl_local() - @r's local rank in this NVL domain, -1 outside it. */
static inline int dvx_mp_topo_nvl_local(const struct dvx_mp_topo *t, int r)
{
	return r >= 0 && r < t->nranks ? t->nvl_local[r] : -1;
}

DVX_END_DECLS

#endif /* DVX_MP_TOPO_H */
