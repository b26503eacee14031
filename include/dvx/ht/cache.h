/* SPDX-License-Identifier: MIT */
/*
 * dvx/ht/cache.h - the per-peer transport cache ("mapper"): one IB host transport per
 * peer, made on first use in caller storage and kept until the cache is finished
 * (docs/ht.md "The per-peer cache").
 *
 * The mode of a peer's transport is fixed for the cache's life: asking for the other
 * mode is -EEXIST, never an abort. Transports are made without waiting for the peer,
 * and the cache answers a peer's handshake even before this rank asked for that peer
 * (the transport is then made in the mode the peer asked for): so ranks may ask for
 * their peers in any order, and wait on any one of them, without deadlock. This is
 * where the reference design went wrong: its construction blocked until the peer
 * constructed too, under the mapper's lock, so two ranks asking for their peers in
 * crossed orders waited on each other for ever.
 */
#ifndef DVX_HT_CACHE_H
#define DVX_HT_CACHE_H

#include <dvx/ht/ib.h>

DVX_BEGIN_DECLS

/* the handshakes' tag in the cache's tag space (small: the MPI adapter carries tags
 * below 2^23) */
#define DVX_HT_CACHE_TAG 0x4854u

/**
 * struct dvx_ht_cache_cfg - what a cache is made of.
 * @bs:		the group (caller's): the cache duplicates it at init, and its
 *		transports' handshakes run in the duplicate's tag space. Every rank
 *		makes its cache at the same point of its sequence of duplicates
 *		(docs/bootstrap.md)
 * @tmpl:	every transport's configuration: @tmpl.nic and the geometry (channels,
 *		depths, control sizes, the copy-based slots, hooks, conn); bs, peer,
 *		tag and mode are the cache's. The same on every rank
 * @tick_every:	a transport of the cache lets the cache take a turn (answer a peer,
 *		move the handshakes in progress) every this many of its progress calls
 *		(default 16)
 * @rsvd:	zero
 */
struct dvx_ht_cache_cfg {
	struct dvx_bootstrap *bs;
	struct dvx_ht_ib_cfg tmpl;
	uint32_t tick_every;
	uint32_t rsvd;
};

struct dvx_ht_cache_state;

/**
 * struct dvx_ht_cache - a per-peer transport cache, in caller storage (zeroed before
 * the first init).
 * @st:		the state region's header (private)
 * @live:	DVX_LIVE between init and fini
 * @rsvd:	zero
 */
struct dvx_ht_cache {
	struct dvx_ht_cache_state *st;
	uint32_t live;
	uint32_t rsvd;
};

/**
 * struct dvx_ht_cache_stats - what a cache holds and did.
 * @live:	transports alive
 * @asked:	transports made because this rank asked for the peer
 * @answered:	transports made to answer a peer's handshake
 * @hits:	dvx_ht_cache_get() calls that found the peer's transport
 * @refused:	dvx_ht_cache_get() calls refused for the other mode (-EEXIST)
 */
struct dvx_ht_cache_stats {
	uint32_t live;
	uint32_t rsvd;
	uint64_t asked;
	uint64_t answered;
	uint64_t hits;
	uint64_t refused;
};

/**
 * dvx_ht_cache_mem_req() - the memory dvx_ht_cache_init() needs: room for a
 * transport to every other rank of @cfg->bs, in either mode.
 * @cfg:	the configuration (@cfg->bs's group size is read)
 * @state:	the state region (host memory, 64-byte aligned)
 * @rings:	the ring region (4096-byte aligned; each transport registers its slice)
 * @data:	the data region (4096-byte aligned; each transport registers its slice)
 * Context: any. Return: 0; -EINVAL (a bad configuration).
 */
int dvx_ht_cache_mem_req(const struct dvx_ht_cache_cfg *cfg, struct dvx_mem_req *state,
			 struct dvx_mem_req *rings, struct dvx_mem_req *data);

/**
 * dvx_ht_cache_init() - an empty cache.
 * @c:		caller storage
 * @cfg:	the configuration (copied)
 * @state, @state_len:	the state region (dvx_ht_cache_mem_req())
 * @rings, @rings_len:	the ring region
 * @data, @data_len:	the data region
 *
 * Duplicates @cfg->bs; makes no transport. The regions are the cache's until
 * dvx_ht_cache_fini().
 * Context: control path. Return: 0; -EINVAL (configuration, regions); -EBUSY (@c is
 * live, or @cfg->bs has a pending call); -ENOSPC (the bootstrap's tag spaces are
 * exhausted). On error nothing is held and @c is zeroed.
 */
int dvx_ht_cache_init(struct dvx_ht_cache *c, const struct dvx_ht_cache_cfg *cfg, void *state,
		      uint64_t state_len, void *rings, uint64_t rings_len, void *data,
		      uint64_t data_len);

/**
 * dvx_ht_cache_get() - the transport to @peer, made on first use.
 * @c:		a cache
 * @peer:	a rank of the group, not this one
 * @mode:	DVX_HT_ZC or DVX_HT_CB
 * @t:		set to the transport (valid until dvx_ht_cache_fini()); untouched on
 *		error
 *
 * A miss makes the transport (dvx_ht_ib_init(): its handshake starts, nothing waits
 * for the peer); a hit returns the same transport every time, connected or not.
 * Context: the cache's thread. Return: 0; -EINVAL (bad arguments, a cache that is not
 * live); -EEXIST (@peer's transport has the other mode: nothing changes); the error
 * of making it (nothing is cached then, and a later call tries again).
 */
int dvx_ht_cache_get(struct dvx_ht_cache *c, int peer, uint32_t mode, struct dvx_ht **t);

/**
 * dvx_ht_cache_lookup() - the transport to @peer if there is one (made by a get or to
 * answer the peer), without making it.
 * @c:		a cache
 * @peer:	a rank
 * Context: the cache's thread. Return: the transport, or NULL.
 */
struct dvx_ht *dvx_ht_cache_lookup(const struct dvx_ht_cache *c, int peer);

/**
 * dvx_ht_cache_progress() - progress every transport of the cache, and answer peers
 * whose handshakes arrived for a transport this rank has not made yet.
 * @c:		a cache
 * Context: the cache's thread. Return: 0; -EINVAL.
 */
int dvx_ht_cache_progress(struct dvx_ht_cache *c);

/**
 * dvx_ht_cache_get_stats() - what the cache holds and did.
 * @c:		a cache
 * @s:		filled (zeroed when @c is not live)
 * Context: the cache's thread. Return: nothing.
 */
void dvx_ht_cache_get_stats(const struct dvx_ht_cache *c, struct dvx_ht_cache_stats *s);

/**
 * dvx_ht_cache_fini() - finish every cached transport, the last made first, then the
 * duplicated bootstrap.
 * @c:		a live cache
 *
 * Pointers handed out by dvx_ht_cache_get() are dead afterwards; requests in flight
 * are abandoned. Not collective.
 * Context: control path. Return: 0; -EINVAL (not live); the first transport's error
 * (every one is still finished; @c is dead either way).
 */
int dvx_ht_cache_fini(struct dvx_ht_cache *c);

DVX_END_DECLS

#endif /* DVX_HT_CACHE_H */
