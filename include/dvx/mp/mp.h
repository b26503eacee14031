/* SPDX-License-Identifier: MIT */
/*
 * dvx/mp/mp.h - the multi-peer transport: one object that knows, for every rank of a
 * group, how to reach it (NVLink or the P2P IBGDA transport), owns both paths, registers
 * and exchanges buffers for both, and hands kernels one flat device handle
 * (dvx/mp/dev.h). See docs/mp.md.
 *
 * Life cycle (every step but the last one collective over the group's bootstrap):
 *
 *	dvx_mp_mem_size(&cfg)                  -> bytes of host state
 *	dvx_mp_init(&mp, &cfg, state, len)       facts published, topology, the NVL
 *	                                         domain's bootstrap, the IB registry
 *	dvx_mp_ib_mem_req(&mp, &s, &r)           what the IB transport needs, exactly
 *	dvx_mp_connect(&mp, s_mem, .., r_mem, ..) the IB transport to the IB peers (every
 *	                                         rank calls it, with or without IB peers)
 *	... dvx_mp_register(), dvx_mp_exchange_ib(), dvx_nvl_exchange() over
 *	    dvx_mp_nvl_bootstrap(), dvx_mp_dev_export() ...
 *	dvx_mp_fini(&mp)
 *
 * Nothing allocates: every table lives in the caller's regions. One thread at a time
 * drives the control path of one transport.
 */
#ifndef DVX_MP_MP_H
#define DVX_MP_MP_H

#include <dvx/p2p/setup.h>
#include <dvx/mp/topo.h>
#include <dvx/mp/reg.h>
#include <dvx/nvl/nvl.h>

DVX_BEGIN_DECLS

/* struct dvx_mp_cfg.flags */
enum {
	DVX_MP_F_FORCE_IB = 1u << 0,	/* every other rank over IB (no NVLink) */
	DVX_MP_F_NO_IB = 1u << 1,	/* no IB: a rank NVLink does not reach is an error */
};

/**
 * struct dvx_mp_cfg - what the transport is made of.
 * @rank, @nranks:	this rank and the group size; must match @bs
 * @bs:			the group's bootstrap (caller's; outlives the transport)
 * @gpu:		this rank's open GPU, or NULL for a rank without one (then it
 *			reaches everybody over IB)
 * @hal:		the host table for this process's identity and descriptor
 *			passing; NULL: @gpu's backend, or dvx_hal_host() without a GPU
 * @flags:		DVX_MP_F_*
 * @reg_cap:		entries of the IB buffer registry (0: 64)
 * @ib:			the IB transport's shape: nnics and nics (none: this rank has
 *			no IB and may only have NVL peers), qps_per_nic, sq_depth,
 *			comp_depth, max_inline, flags, conn. rank, nranks, bs, peers and
 *			timeout_ns are the transport's to set
 * @inject:		tests: [@nranks] every rank's facts to classify instead of
 *			discovering this rank's and exchanging them (then no collective
 *			happens in dvx_mp_init()); NULL in production
 * @timeout_ns:		bound on each collective step
 */
struct dvx_mp_cfg {
	int32_t rank;
	int32_t nranks;
	struct dvx_bootstrap *bs;
	struct dvx_gpu *gpu;
	const struct dvx_hal *hal;
	uint32_t flags;
	uint32_t reg_cap;
	struct dvx_p2p_cfg ib;
	const struct dvx_mp_rank_info *inject;
	uint64_t timeout_ns;
};

/**
 * struct dvx_mp - the transport (caller storage). Read the public members; the rest
 * are dvx's.
 * @rank, @nranks:	this rank and the group size
 * @topo:		who is reached how (dvx/mp/topo.h): the maps and lists
 * @infos:		[@nranks] every rank's published facts
 * @ib:			the IB transport (valid when @ib_live)
 * @ib_live:		1 after dvx_mp_connect() made the IB transport
 * @reg:		the IB buffer registry (valid when this rank has NICs)
 * @gpu:		this rank's GPU, or NULL
 * @hal:		the host table in use
 * @diag:		what the last failure was
 */
struct dvx_mp {
	int32_t rank;
	int32_t nranks;
	struct dvx_mp_topo topo;
	struct dvx_mp_rank_info *infos;
	struct dvx_p2p ib;
	uint32_t ib_live;
	uint32_t nvl_live;
	struct dvx_mp_reg reg;
	struct dvx_gpu *gpu;
	const struct dvx_hal *hal;
	struct dvx_diag diag;
	/* private */
	struct dvx_mp_cfg cfg;
	struct dvx_bootstrap nvl_bs;
	struct dvx_bootstrap_sub nvl_sub;
	uint32_t reg_live;
	uint32_t rsvd;
};

/**
 * dvx_mp_mem_size() - bytes of 64-byte aligned host memory dvx_mp_init() needs (the
 * facts, the topology's maps, the registry's table).
 * Return: the size, or 0 for a bad configuration.
 */
size_t dvx_mp_mem_size(const struct dvx_mp_cfg *cfg);

/**
 * dvx_mp_init() - learn the topology and set up what does not need the IB transport.
 * @mp:		caller storage for the transport
 * @cfg:	configuration (copied)
 * @state:	dvx_mp_mem_size(@cfg) bytes, 64-byte aligned; the transport's until
 *		dvx_mp_fini()
 * @state_len:	its length
 *
 * Collective over @cfg->bs (unless @cfg->inject): every rank publishes its facts (host,
 * boot id, GPU UUID and PCI address, the GPUs its GPU can map, whether it has NICs)
 * and gets everyone's; every rank classifies every rank the same way
 * (dvx_mp_topo_classify()); a pair that must talk over IB where one side has no NIC
 * is an error for every rank. Then this rank's NVL domain gets its own bootstrap (a
 * subgroup of @cfg->bs: dvx_mp_nvl_bootstrap()) and, with NICs, the IB registry is
 * made over them.
 *
 * Return: 0; -EINVAL; -EHOSTUNREACH (a rank nobody can reach: @mp->diag names the
 * ranks); a hal or bootstrap error. On failure nothing is held.
 */
int dvx_mp_init(struct dvx_mp *mp, const struct dvx_mp_cfg *cfg, void *state, uint64_t state_len);

/**
 * dvx_mp_ib_mem_req() - the regions dvx_mp_connect() needs for the IB transport to this
 * rank's IB peers (nothing, all zero, when no pair of the group uses IB).
 * Return: 0 or -EINVAL.
 */
int dvx_mp_ib_mem_req(const struct dvx_mp *mp, struct dvx_mem_req *state, struct dvx_mem_req *rings);

/**
 * dvx_mp_connect() - create and connect the IB transport's lanes to the IB peers.
 * @mp:		an initialised transport
 * @state, @state_len, @rings, @rings_len: the regions of dvx_mp_ib_mem_req() (NULL and 0
 *		when it asked for none)
 *
 * Collective over the group when any pair of it uses IB (every rank calls it; a rank
 * with no IB peer takes part in the exchange of connection information, which is one
 * allgather: no pairwise order to deadlock on); nothing to do otherwise.
 * Return: 0 or dvx_p2p_init()'s error (nothing held then).
 */
int dvx_mp_connect(struct dvx_mp *mp, void *state, uint64_t state_len, void *rings,
		   uint64_t rings_len);

/**
 * dvx_mp_fini() - tear down: the IB transport, the registry's registrations, the NVL
 * domain's bootstrap. Not collective. Return: 0 or the first error.
 */
int dvx_mp_fini(struct dvx_mp *mp);

/** dvx_mp_kind() - how rank @r is reached (enum dvx_mp_kind). */
static inline enum dvx_mp_kind dvx_mp_kind(const struct dvx_mp *mp, int r)
{
	return dvx_mp_topo_kind(&mp->topo, r);
}

/**
 * dvx_mp_nvl_bootstrap() - the bootstrap of this rank's NVL domain: the domain's ranks
 * with local ranks 0 ... topo.nnvl - 1 (topo.nvl_ranks maps them back), for collectives
 * among them (dvx_nvl_exchange()). Valid until dvx_mp_fini().
 * Return: the context, NULL before dvx_mp_init().
 */
struct dvx_bootstrap *dvx_mp_nvl_bootstrap(struct dvx_mp *mp);

/**
 * dvx_mp_register(), dvx_mp_deregister() - register a buffer for IB (the registry:
 * dvx_mp_reg_add(), dvx_mp_reg_del()), or drop that registration.
 * @mp:		the transport (its rank has NICs)
 * @ptr, @len:	the buffer
 * @flags:	DVX_MP_REG_RELAXED, and the remote rights peers get (DVX_MP_REG_WRITE,
 *		_READ, _ATOMIC; none: a source), as dvx_mp_reg_add()
 * @out:	optional: its address and per-NIC keys
 * Return: as dvx_mp_reg_add() / dvx_mp_reg_del(); -ENODEV without NICs.
 */
int dvx_mp_register(struct dvx_mp *mp, void *ptr, uint64_t len, uint32_t flags,
		    struct dvx_p2p_lbuf *out);
int dvx_mp_deregister(struct dvx_mp *mp, void *ptr);

/**
 * dvx_mp_exchange_ib() - every rank's registered buffer, for the IB peers. Collective
 * over the whole group (ranks without IB peers take part with @mine NULL).
 * @mp:		the transport
 * @mine:	this rank's buffer (dvx_mp_register()'s @out), or NULL
 * @all:	[nranks] caller memory: every rank's buffer, by rank (zero for a rank
 *		that gave NULL)
 * @ib:		optional [topo.nib]: the IB peers' buffers by IB index
 * @timeout_ns:	bound
 * Return: 0, -EINVAL, or the bootstrap's error.
 */
int dvx_mp_exchange_ib(struct dvx_mp *mp, const struct dvx_p2p_lbuf *mine,
		       struct dvx_p2p_rbuf *all, struct dvx_p2p_rbuf *ib, uint64_t timeout_ns);

/**
 * dvx_mp_nvl_put(), dvx_mp_nvl_signal(), dvx_mp_nvl_put_signal() - host-initiated NVL
 * work, ordered on a stream of this rank's GPU: the copy on a copy engine
 * (cuMemcpyAsync), the signal a system-scope store or add after the stream's earlier
 * work (dvx_hal_gpu_stream_atomic()).
 * @mp:		the transport (with a GPU)
 * @stream:	a stream of its GPU (struct dvx_gpu_stream), NULL for the default one
 * @dst:	destination: a peer's buffer through its mapping (dvx_nvl_peer_ptr() + offset)
 * @src:	source (this GPU's memory)
 * @len:	bytes (> 0)
 * @sig:	the peer's signal word through the mapping
 * @op:		DVX_NVL_SIG_SET or DVX_NVL_SIG_ADD
 * @value:	what is stored or added
 *
 * Only queued: dvx_gpu_stream_wait() waits. put_signal queues the copy, then the signal,
 * on the same stream: the signal lands after all of the data.
 * Return: 0, -EINVAL, -ENODEV (no GPU), or the hal's error.
 */
int dvx_mp_nvl_put(struct dvx_mp *mp, struct dvx_gpu_stream *stream, uint64_t dst, uint64_t src,
		   uint64_t len);
int dvx_mp_nvl_signal(struct dvx_mp *mp, struct dvx_gpu_stream *stream, uint64_t sig, uint32_t op,
		      uint64_t value);
int dvx_mp_nvl_put_signal(struct dvx_mp *mp, struct dvx_gpu_stream *stream, uint64_t dst,
			  uint64_t src, uint64_t len, uint64_t sig, uint32_t op, uint64_t value);

DVX_END_DECLS

#endif /* DVX_MP_MP_H */
