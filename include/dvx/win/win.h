/* SPDX-License-Identifier: MIT */
/*
 * dvx/win/win.h - the window: signals, counters and barriers per peer, one exchanged
 * destination buffer, two-sided send/recv through staging slots, over the NVL and IB
 * peers of a multi-peer transport (dvx/mp/mp.h). The host window lays everything out
 * in caller regions and exchanges it; kernels get one flat struct by value
 * (dvx/win/layout.h, dvx/win/dev.cuh); host threads call the same operations here.
 * See docs/win.md.
 *
 * Life cycle:
 *
 *	dvx_win_mem_req(&mp, &cfg, &req)        the four regions' sizes
 *	dvx_win_init(&w, &mp, &cfg, &mem)        lay out, zero, register the IB region
 *	dvx_win_exchange(&w, data, len)          collective, once
 *	dvx_win_register_src(&w, src, len, &lb)  IB sources (local, any time)
 *	dvx_win_dev_make(&w, &mpdev, &dev)       the kernels' window
 *	... operations (host: dvx_win_*; kernels: dvx/win/dev.cuh) ...
 *	dvx_win_fini(&w)
 *
 * Host operations and kernels keep their own barrier expectations and send/recv
 * cursors: use a barrier id, and a peer's send/recv, from one side only. Host
 * operations run on a thread whose current context is the rank's GPU's
 * (dvx_gpu_make_current()); without DVX_WIN_F_CPU their reads are synchronous copies,
 * which wait behind kernels on the legacy default stream (launch on other streams).
 */
#ifndef DVX_WIN_WIN_H
#define DVX_WIN_WIN_H

#include <dvx/win/layout.h>
#include <dvx/mp/mp.h>
#include <dvx/mp/dev.h>
#include <dvx/gpu/gpu.h>

DVX_BEGIN_DECLS

/* struct dvx_win_cfg.flags: DVX_WIN_F_* (dvx/win/layout.h, kernels read them too) */


#define DVX_WIN_LIVE 0x57494e44u	/* "WIND": struct dvx_win.live of a live window */

/* signal operations (the values of enum dvx_nvl_sig_op) */
enum dvx_win_sig_op {
	DVX_WIN_SIG_SET = 1,	/* NVL peers only: an IB peer's word is only ever added to */
	DVX_WIN_SIG_ADD = 2,
};

/**
 * struct dvx_win_cfg - the window's shape; the same on every rank.
 * @signals:	signal ids per peer (0: none)
 * @counters:	counter ids per peer (0: none)
 * @barriers:	barrier ids (0: none)
 * @slots:	send/recv slots per peer (0: no send/recv)
 * @slot_bytes:	bytes per slot (multiple of 128, header of DVX_WIN_HDR included)
 * @channel:	the IB channel of the window's signals, barriers and send/recv
 * @flags:	DVX_WIN_F_*
 * @stream:	host operations on NVL peers are queued here (NULL: the GPU's default
 *		stream)
 * @timeout_ns:	bound on each collective step, on host posts waiting for ring room and
 *		on the completion the host gets, fetching operations and resets wait for
 * @nchannels:	IB channels the puts spread over (0 or 1: every put on @channel): a
 *		device put (get, one-word operation) takes channel @channel + (its
 *		group's index mod @nchannels), so the blocks of a kernel use up to
 *		@nchannels QPs per peer instead of one; host puts take the channels in
 *		turn. Signals and counters stay exact (NIC atomics), each signal after
 *		its own data on its own QP. Signals alone, barriers, send/recv stay on
 *		@channel. The same on every rank, and at most the transport's lanes per
 *		peer on every rank with IB peers (dvx_win_init() and
 *		dvx_win_exchange() refuse otherwise).
 */
struct dvx_win_cfg {
	uint32_t signals;
	uint32_t counters;
	uint32_t barriers;
	uint32_t slots;
	uint64_t slot_bytes;
	uint32_t channel;
	uint32_t flags;
	struct dvx_gpu_stream *stream;
	uint64_t timeout_ns;
	uint32_t nchannels;
};

/**
 * enum dvx_win_mem - the window's regions, the indexes of dvx_win_mem_req()'s array.
 * @DVX_WIN_MEM_STATE:	host memory, the host's tables
 * @DVX_WIN_MEM_NVL:	GPU memory its NVL domain can map
 * @DVX_WIN_MEM_IB:	memory the NICs can register
 * @DVX_WIN_MEM_DEV:	GPU memory for the kernels' tables and state
 * @DVX_WIN_MEM_N:	how many
 */
enum dvx_win_mem {
	DVX_WIN_MEM_STATE = 0,
	DVX_WIN_MEM_NVL = 1,
	DVX_WIN_MEM_IB = 2,
	DVX_WIN_MEM_DEV = 3,
	DVX_WIN_MEM_N = 4,
};

/**
 * struct dvx_win_regions - the regions of a window, as dvx_win_init() takes them (their
 * sizes and alignments: dvx_win_mem_req(), indexed by enum dvx_win_mem).
 * @state, @state_len:	host memory, 64-byte aligned (the host's tables)
 * @nvl, @nvl_len:	GPU memory of this rank's GPU that its NVL domain can map (an
 *			allocation made with DVX_GPU_MEM_EXPORT, or a legacy one), 128-byte
 *			aligned; none without NVL peers
 * @ib, @ib_len:	memory the NICs can register (GPU memory for kernels, host memory
 *			for host-only use), 64-byte aligned; none without IB peers
 * @dev, @dev_len:	GPU memory for the kernels' tables and state, 64-byte aligned
 *			(given to dvx_win_dev_make()); only for kernels: 0 for a window
 *			used from host threads only, and none over a transport without a GPU
 */
struct dvx_win_regions {
	void *state;
	uint64_t state_len;
	void *nvl;
	uint64_t nvl_len;
	void *ib;
	uint64_t ib_len;
	uint64_t dev;
	uint64_t dev_len;
};

/**
 * struct dvx_win - a window (caller storage). Read the public members; the rest are
 * dvx's.
 * @rank, @nranks: this rank and the group size
 * @geom:	the geometry
 * @peers:	[nranks] the peer table (host copy of the kernels')
 * @exchanged:	1 after dvx_win_exchange()
 * @data, @data_len: this rank's window buffer (NULL, 0: none)
 * @diag:	what the last failure was
 */
struct dvx_win {
	int32_t rank;
	int32_t nranks;
	struct dvx_win_geom geom;
	struct dvx_win_dev_peer *peers;
	uint32_t exchanged;
	uint32_t live;			/* DVX_WIN_LIVE between init and fini */
	void *data;
	uint64_t data_len;
	struct dvx_diag diag;
	/* private */
	struct dvx_mp *mp;
	struct dvx_win_cfg cfg;
	struct dvx_win_regions mem;
	uint64_t *bar_expected;		/* [barriers] host side */
	uint64_t *cursors;		/* [nranks][2] host side */
	struct dvx_nvl_peer *nvl_peers;	/* [nnvl] the region's exchange */
	struct dvx_nvl_peer *data_peers;	/* [nnvl] the window buffer's */
	struct dvx_p2p_rbuf *all;	/* [nranks] scratch of the IB exchanges */
	void *recs;			/* [nranks] scratch of the configuration check */
	struct dvx_nvl_buf nvl_buf;
	struct dvx_nvl_buf data_buf;
	struct dvx_p2p_lbuf ib_lbuf;
	struct dvx_p2p_lbuf data_lbuf;
	uint32_t ib_reg;
	uint32_t data_reg;
	uint32_t nvl_mapped;
	uint32_t data_mapped;
	uint32_t dev_made;
	uint32_t next_chan;		/* host puts so far: the next one's channel (mod nchannels) */
};

/**
 * dvx_win_mem_req() - the regions a window of @cfg over @mp needs.
 * @mp:		an initialised multi-peer transport (its topology decides the rows)
 * @cfg:	the configuration
 * @req:	[DVX_WIN_MEM_N] filled, indexed by enum dvx_win_mem: each region's bytes
 *		(0: not needed) and alignment (64; 128 for the NVL region). The device
 *		region is 0 bytes when @mp has no GPU; with one it is what
 *		dvx_win_dev_make() needs, and a window used from host threads only may
 *		leave it out all the same
 *
 * Context: any. Return: 0 or -EINVAL (a configuration dvx_win_geom_init() refuses;
 * dvx_win_init() names the cause in the window's diagnostic).
 */
int dvx_win_mem_req(const struct dvx_mp *mp, const struct dvx_win_cfg *cfg,
		    struct dvx_mem_req req[DVX_WIN_MEM_N]);

/**
 * dvx_win_init() - lay the window out in @mem and zero its words.
 * @w:		caller storage
 * @mp:		a connected multi-peer transport (dvx_mp_connect()); it outlives @w
 * @cfg:	the configuration (copied)
 * @mem:	the regions (copied): each at least as long and as aligned as
 *		dvx_win_mem_req() asks; the window's until dvx_win_fini()
 *
 * Not collective. The IB region is registered on this rank's NICs (the registry of
 * @mp). Return: 0; -EINVAL (arguments, an undersized or misaligned region, an IB
 * region on a rank without NICs); -EBUSY (@w is live); the registry's or the GPU's
 * error. On failure nothing is held and @w is not live.
 */
int dvx_win_init(struct dvx_win *w, struct dvx_mp *mp, const struct dvx_win_cfg *cfg,
		 const struct dvx_win_regions *mem);

/**
 * dvx_win_exchange() - share the window with every rank. Collective over the group, once.
 * @w:		an initialised window
 * @data:	this rank's window buffer (the destination of the peers' puts, addressed by
 *		offset), or NULL; either every rank gives one or none does. GPU memory that
 *		its NVL peers can map when it has NVL peers.
 * @data_len:	its length (0 with NULL)
 *
 * Every rank's configuration is checked to be the same; the NVL region (and buffer) is
 * shared over the NVL domain (dvx_nvl_exchange()), the IB region (and buffer) registered
 * and exchanged over the group (dvx_mp_exchange_ib()); each peer's entry gets this
 * rank's row in its regions.
 * Every failure is agreed: after the NVL step and at the end every rank learns every
 * rank's status, and all fail with the first rank's error (@w->diag names the rank)
 * and undo what they mapped and registered, so no rank succeeds while another fails
 * and none is left waiting.
 * Return: 0; -EALREADY (exchanged before: nothing happens, nothing is collective);
 * -EINVAL (a rank's arguments, configuration or buffer presence differ: the same on
 * every rank); the exchanges' errors. On failure nothing stays mapped or registered
 * by the exchange.
 */
int dvx_win_exchange(struct dvx_win *w, void *data, uint64_t data_len);

/**
 * dvx_win_register_src(), dvx_win_deregister_src() - register a local source buffer of
 * puts on the NICs (its per-NIC lkeys), or drop that registration. Not collective.
 * Return: 0; -ENODEV (no NICs: NVL puts need no registration, a struct dvx_p2p_lbuf
 * with @ptr, @addr and @len set will do); the registry's error.
 */
int dvx_win_register_src(struct dvx_win *w, void *ptr, uint64_t len, struct dvx_p2p_lbuf *lb);
int dvx_win_deregister_src(struct dvx_win *w, void *ptr);

/**
 * dvx_win_dev_make() - the kernels' window: writes the peer table and zeroed state into
 * @w's device region and fills @dev.
 * @w:		an exchanged window
 * @ib:		the transport's device handle (dvx_mp_dev_export()) when it has IB lanes;
 *		NULL otherwise
 * @dev:	filled: pass it to kernels by value
 *
 * Once per window: the state kernels keep across launches (barrier expectations,
 * send/recv cursors) starts at zero here, as do the window's words; a second call would
 * reset it while the words keep counting.
 * Return: 0; -EALREADY (made before); -EINVAL (not exchanged, no device region, IB peers
 * without @ib); the copy's error.
 */
int dvx_win_dev_make(struct dvx_win *w, const struct dvx_mp_dev *ib, struct dvx_win_dev *dev);

/**
 * dvx_win_reset_signals() - zero both signal inboxes (NVL and IB rows' signal words),
 * queued on @stream, for CUDA-graph replay. Barriers and counters are not reset. Only
 * while no peer can be signalling this rank.
 * Return: 0, -EINVAL, or the GPU's error. With DVX_WIN_F_CPU the words are stored to
 * directly and @stream is unused.
 */
int dvx_win_reset_signals(struct dvx_win *w, struct dvx_gpu_stream *stream);

/**
 * dvx_win_nvlink_address() - @peer's window buffer at @offset, mapped into this
 * process; 0 for self, a peer that is not NVL, no buffer, or an offset past its end.
 */
uint64_t dvx_win_nvlink_address(const struct dvx_win *w, int peer, uint64_t offset);

/**
 * dvx_win_fini() - release in reverse order: the buffer's and the region's mappings and
 * registrations. Not collective; peers must be done with this rank's memory.
 * Return: 0 or the first error (everything is tried).
 */
int dvx_win_fini(struct dvx_win *w);

/* ---- host operations (one host thread per window at a time) ----
 * Return (every one): 0; -EINVAL (bad peer, id, offset, self); -ENOTSUP (what the
 * peer's transport cannot do: SET on an IB peer; host send/recv without
 * DVX_WIN_F_CPU); -ETIMEDOUT (a wait: @rep says what it waited for); a lane's error
 * (IB); the GPU's error (NVL, queued on the configuration's stream). */

/** dvx_win_signal() - add to or set signal @id of this rank's row at @peer. */
int dvx_win_signal(struct dvx_win *w, int peer, uint32_t id, uint32_t op, uint64_t value);

/** dvx_win_signal_all() - dvx_win_signal() to every peer, each exactly once. */
int dvx_win_signal_all(struct dvx_win *w, uint32_t id, uint32_t op, uint64_t value);

/** dvx_win_read_signal() - the sum of signal @id over every peer's row here. */
int dvx_win_read_signal(struct dvx_win *w, uint32_t id, uint64_t *v);

/** dvx_win_read_signal_from() - signal @id of @peer's row here. */
int dvx_win_read_signal_from(struct dvx_win *w, int peer, uint32_t id, uint64_t *v);

/** dvx_win_wait_signal() - wait until the sum of signal @id over all peers @cmp @value. */
int dvx_win_wait_signal(struct dvx_win *w, uint32_t id, uint32_t cmp, uint64_t value,
			uint64_t timeout_ns, struct dvx_p2p_wait_report *rep);

/** dvx_win_wait_signal_from() - wait until @peer's signal @id @cmp @value (O(1)). */
int dvx_win_wait_signal_from(struct dvx_win *w, int peer, uint32_t id, uint32_t cmp,
			     uint64_t value, uint64_t timeout_ns, struct dvx_p2p_wait_report *rep);

/**
 * dvx_win_read_counter(), dvx_win_wait_counter(), dvx_win_reset_counter() - counter @id
 * of @peer: how many of this rank's put_counter calls to @peer have completed (IB: the
 * responder acknowledged the data; NVL: the copy is visible). A wait on an IB counter
 * returns the lane's error if the lane fails. Reset: only while none is in flight.
 */
int dvx_win_read_counter(struct dvx_win *w, int peer, uint32_t id, uint64_t *v);
int dvx_win_wait_counter(struct dvx_win *w, int peer, uint32_t id, uint32_t cmp, uint64_t value,
			 uint64_t timeout_ns, struct dvx_p2p_wait_report *rep);
int dvx_win_reset_counter(struct dvx_win *w, int peer, uint32_t id);

/**
 * dvx_win_barrier(), dvx_win_barrier_peer() - every peer's (or @peer's) barrier word
 * @id raised by one, then wait until this rank's has been raised by every peer (by
 * @peer) once more than at the last barrier @id: the expectation lives with the
 * window, so an id is reused call after call. An id used with barrier_peer is used
 * with one peer at a time, on both sides (the arrivals of every peer share a word).
 */
int dvx_win_barrier(struct dvx_win *w, uint32_t id, uint64_t timeout_ns,
		    struct dvx_p2p_wait_report *rep);
int dvx_win_barrier_peer(struct dvx_win *w, int peer, uint32_t id, uint64_t timeout_ns,
			 struct dvx_p2p_wait_report *rep);

/**
 * dvx_win_put(), dvx_win_put_signal(), dvx_win_put_counter(),
 * dvx_win_put_signal_counter() - copy @x->len bytes from @x->src + @x->soff into
 * @peer's window buffer at @x->doff (NVL: a copy on the stream, the source GPU memory;
 * IB: RDMA WRITEs, the source registered with dvx_win_register_src()), then: _signal
 * adds @value to signal @sig of this rank's row at @peer after all of the data;
 * _counter raises this rank's counter @ctr of @peer once the data is complete (IB:
 * acknowledged; NVL: visible).
 * @w:		the window
 * @peer:	the target rank
 * @x:		the data (struct dvx_win_xfer), read during the call only
 * @sig, @value: the signal's id and addend (_signal)
 * @ctr:	the counter's id (_counter)
 *
 * Context: a host thread. Return: 0; -EINVAL (a length of 0, out of bounds, a bad
 * peer, id or source); the transport's error.
 */
int dvx_win_put(struct dvx_win *w, int peer, const struct dvx_win_xfer *x);
int dvx_win_put_signal(struct dvx_win *w, int peer, const struct dvx_win_xfer *x, uint32_t sig,
		       uint64_t value);
int dvx_win_put_counter(struct dvx_win *w, int peer, const struct dvx_win_xfer *x, uint32_t ctr);
int dvx_win_put_signal_counter(struct dvx_win *w, int peer, const struct dvx_win_xfer *x,
			       uint32_t sig, uint64_t value, uint32_t ctr);

/**
 * dvx_win_get() - read @x->len bytes of @peer's window buffer at @x->soff into
 * @x->dst + @x->doff, and wait until they are there. IB: RDMA READs on the window's
 * channel (the window configured with DVX_WIN_F_READ, @x->dst registered); NVL: the
 * CPU copies through the mapping (DVX_WIN_F_CPU), else a copy queued on the
 * configuration's stream and waited for.
 * @w:		the window
 * @peer:	the rank read from
 * @x:		the get (struct dvx_win_rxfer), read during the call only
 *
 * Not ordered after this rank's puts to @peer still in flight on other channels
 * (dvx_win_flush() first).
 * Context: a host thread. Return: 0; -EINVAL (a length of 0, out of bounds, a bad peer
 * or destination); -EPERM (an IB peer and a window without DVX_WIN_F_READ, or a peer
 * buffer registered without remote read: nothing posted, @x->dst unchanged);
 * -ENOTSUP (an NVL peer, neither DVX_WIN_F_CPU nor a stream); -ETIMEDOUT (not
 * complete within the configuration's timeout); the lane's or the GPU's error.
 */
int dvx_win_get(struct dvx_win *w, int peer, const struct dvx_win_rxfer *x);

/**
 * dvx_win_amo() - one operation on the 8-byte word at @a->doff of @peer's window
 * buffer: put_value (DVX_WIN_AMO_SET), add (_ADD), fetch_add (_FADD), compare_swap
 * (_CSWAP). IB: an inline WRITE, a FETCH_ADD or a CMP_SWAP on the window's channel
 * (NIC atomics: atomic with each other and with the window's signals, not with the
 * peer's own stores); NVL: with DVX_WIN_F_CPU the CPU's atomics on the mapped word
 * (after the configuration's stream drained), else put_value and add queued on the
 * stream (fetching ones: -ENOTSUP; kernels use the device form).
 * @w:		the window
 * @peer:	the target rank
 * @op:		enum dvx_win_amo_op
 * @a:		the operation (struct dvx_win_amo), read during the call only
 *
 * put_value and add return once posted (complete after dvx_win_flush()); fetch_add
 * and compare_swap return once the old value is in @a->res at @a->resoff.
 * Context: a host thread. Return: 0; -EINVAL (a misaligned or out-of-bounds word, a
 * missing or extra result buffer, a bad op or peer); -ENOTSUP; -ETIMEDOUT (no
 * completion within the configuration's timeout); the lane's or the GPU's error.
 */
int dvx_win_amo(struct dvx_win *w, int peer, uint32_t op, const struct dvx_win_amo *a);

/**
 * dvx_win_put_value(), dvx_win_add(), dvx_win_fetch_add(), dvx_win_compare_swap() -
 * dvx_win_amo() with op DVX_WIN_AMO_SET, _ADD, _FADD, _CSWAP.
 * @w, @peer, @a: as dvx_win_amo()
 *
 * Context: a host thread. Return: as dvx_win_amo().
 */
DVX_INLINE int dvx_win_put_value(struct dvx_win *w, int peer, const struct dvx_win_amo *a)
{
	return dvx_win_amo(w, peer, DVX_WIN_AMO_SET, a);
}

DVX_INLINE int dvx_win_add(struct dvx_win *w, int peer, const struct dvx_win_amo *a)
{
	return dvx_win_amo(w, peer, DVX_WIN_AMO_ADD, a);
}

DVX_INLINE int dvx_win_fetch_add(struct dvx_win *w, int peer, const struct dvx_win_amo *a)
{
	return dvx_win_amo(w, peer, DVX_WIN_AMO_FADD, a);
}

DVX_INLINE int dvx_win_compare_swap(struct dvx_win *w, int peer, const struct dvx_win_amo *a)
{
	return dvx_win_amo(w, peer, DVX_WIN_AMO_CSWAP, a);
}

/**
 * dvx_win_reset_peer_signal() - set signal @id of this rank's row at @peer to 0, and
 * wait until it is: IB an inline RDMA WRITE of zero on the window's channel after
 * everything posted there (signals are only ever changed by the NIC); NVL a store
 * (the CPU's with DVX_WIN_F_CPU, else queued on the stream). Only while this rank
 * has no signal to @peer's @id in flight.
 * @w:		the window
 * @peer:	the target rank
 * @id:		the signal
 *
 * Context: a host thread. Return: 0; -EINVAL (bad peer or id); -ETIMEDOUT; the lane's
 * or the GPU's error.
 */
int dvx_win_reset_peer_signal(struct dvx_win *w, int peer, uint32_t id);

/**
 * dvx_win_flush() - wait until every IB operation this rank posted through the window
 * so far (on its channels: cfg.channel ... + nchannels - 1, to every peer) completed,
 * and the configuration's stream drained (NVL work queued by the host forms).
 * @w:		the window
 * @timeout_ns:	bound for the whole flush
 * @rep:	filled with the lane that failed or timed out (may be NULL)
 *
 * Context: a host thread. Return: 0; the first lane error; -ETIMEDOUT; -EINVAL; the
 * GPU's error.
 */
int dvx_win_flush(struct dvx_win *w, uint64_t timeout_ns, struct dvx_p2p_wait_report *rep);

/**
 * dvx_win_send(), dvx_win_recv() - two-sided: @n bytes (any size, 0 too) to / from
 * @peer through the staging slots, matched in order per peer. Each slot carries a
 * header (the message's size, the chunk's number): a receive of another size than the
 * send is -EMSGSIZE, nothing consumed; a slot whose header is not the chunk due is
 * -EPROTO. A send or recv that fails part-way (a timeout after some chunks, a lane
 * error) leaves the pair's stream out of step: the pair needs a new window. Needs
 * DVX_WIN_F_CPU on the host.
 */
int dvx_win_send(struct dvx_win *w, int peer, const void *src, uint64_t n, uint64_t timeout_ns,
		 struct dvx_p2p_wait_report *rep);
int dvx_win_recv(struct dvx_win *w, int peer, void *dst, uint64_t n, uint64_t timeout_ns,
		 struct dvx_p2p_wait_report *rep);

DVX_END_DECLS

#endif /* DVX_WIN_WIN_H */
