/* SPDX-License-Identifier: MIT */
/*
 * dvx/win/layout.h - the window's memory, as sizes, offsets and addresses: one
 * definition for the host window (core/win), kernels (dvx/win/dev.cuh) and the tests.
 * Shared by host C and CUDA; fixed-width, versioned, size-asserted. See docs/win.md.
 *
 * A window lives in four caller regions (dvx_win_mem_req() says how big):
 *
 *   NVL region (GPU memory its NVL peers map; shared by dvx_nvl_exchange()):
 *	[barriers x 128 B barrier words]
 *	[row 0] ... [row nnvl - 2]		one row per other rank of the NVL domain,
 *						by skip-self local rank
 *	row: [signals x 128 B signal words][counters x 8 B, padded to 128 B]
 *	     with send/recv: [slots x 128 B ready words][128 B credit word]
 *			     [slots x slot_bytes receive slots]
 *
 *   IB region (memory registered on the rank's NICs; exchanged with the IB peers):
 *	[barriers x 8 B barrier words, padded to 64 B]
 *	[row 0] ... [row nib - 1]		one row per IB peer, by IB index
 *	row: [signals x 8 B][counters x 8 B]
 *	     with send/recv: [slots x 8 B ready words][8 B credit word], padded to 64 B,
 *			     [slots x slot_bytes receive slots][slots x slot_bytes send slots]
 *
 *   device region (GPU memory, read by kernels): the peer table, then the state that
 *	outlives kernel launches (barrier expectations, send/recv cursors)
 *   host state: the host's copy of the peer table, its own expectations and cursors,
 *	the exchanges' scratch
 *
 * A row is what one peer writes into (its signals, its barrier arrivals go to the
 * shared barrier words, its send/recv data) and what this rank counts for it
 * (counters): rank r's row at peer p is found without knowing p's row count, so a
 * rank addresses any peer's region with its own geometry (every rank's configuration
 * is the same; dvx_win_exchange() checks). NVL words are 128 bytes apart (one GPU
 * atomic per line); NVL and IB words are never the same word (GPU atomics and NIC
 * atomics are not atomic with each other).
 */
#ifndef DVX_WIN_LAYOUT_H
#define DVX_WIN_LAYOUT_H

#include <dvx/compiler.h>
#include <dvx/p2p/dev.h>
#include <dvx/mp/topo.h>

DVX_BEGIN_DECLS

#define DVX_WIN_DEV_VERSION 1u

/* struct dvx_win_cfg.flags */
enum {
	/* the NVL and IB regions and the window buffer are memory the CPU reads and
	 * writes (host memory, a software GPU's memory): host waits load the words,
	 * host send/recv copies through them. Without it host reads go through the
	 * GPU (dvx_gpu_memcpy_dtoh) and host send/recv is -ENOTSUP. */
	DVX_WIN_F_CPU = 1u << 0,
	/* the IB region alone is host memory (registered with the GPU for kernels: the
	 * software NIC, host-driven IB): the CPU zeroes and reads its words directly */
	DVX_WIN_F_IB_HOST = 1u << 1,
	/* IB peers may READ this rank's window buffer (gets: dvx_win_get(),
	 * dvx_win_dev_get()): the buffer is registered with remote read, and this rank's
	 * gets are allowed. Least privilege: without it the buffer is registered for
	 * remote write and atomics only, and a get is -EPERM before anything is posted.
	 * The same on every rank (the exchange checks); the transport's lanes must let
	 * peers read too (struct dvx_mp_cfg.ib.flags: DVX_P2P_F_READ). NVL peers read
	 * through the mapping whatever it says. */
	DVX_WIN_F_READ = 1u << 2,
};

#define DVX_WIN_NVL_WORD 128u	/* bytes between two NVL words */
#define DVX_WIN_IB_WORD 8u	/* bytes between two IB words */
#define DVX_WIN_HDR 16u		/* header of a send/recv slot: message bytes, chunk number */
#define DVX_WIN_LL_MAX 2048u	/* NVL: messages up to this go as flagged lines (DVX_NVL_LL_MAX) */
#define DVX_WIN_HDR_NS 10000000ull	/* NVL: how long a receiver looks for a header after its
					 * ready word (a stale slot: -EPROTO) */
#define DVX_WIN_PEER_BYTES 128u	/* struct dvx_win_dev_peer */

/* limits of a configuration */
#define DVX_WIN_MAX_IDS 65536u		/* signals, counters, barriers each */
#define DVX_WIN_MAX_SLOTS 1024u		/* send/recv slots per peer */
#define DVX_WIN_MIN_SLOT_BYTES 128u	/* slot bytes: a multiple of 128 ... */
#define DVX_WIN_MAX_SLOT_BYTES (1ull << 30)	/* ... up to 1 GiB */

#define DVX_WIN_ALIGN_UP(x, a) ((((uint64_t)(x)) + ((uint64_t)(a) - 1)) & ~((uint64_t)(a) - 1))

/* bytes of one NVL row and of the NVL region of a domain of @nnvl ranks (compile time) */
#define DVX_WIN_NVL_ROW_BYTES(signals, counters, slots, slot_bytes)                        \
	((uint64_t)(signals) * DVX_WIN_NVL_WORD +                                          \
	 DVX_WIN_ALIGN_UP((uint64_t)(counters) * 8u, DVX_WIN_NVL_WORD) +                   \
	 ((slots) ? (uint64_t)(slots) * DVX_WIN_NVL_WORD + DVX_WIN_NVL_WORD +              \
			    (uint64_t)(slots) * (uint64_t)(slot_bytes) : 0u))
#define DVX_WIN_NVL_BYTES(nnvl, signals, counters, barriers, slots, slot_bytes)            \
	((nnvl) > 1 ? (uint64_t)(barriers) * DVX_WIN_NVL_WORD +                            \
			      (uint64_t)((nnvl) - 1) *                                     \
				      DVX_WIN_NVL_ROW_BYTES(signals, counters, slots, slot_bytes) \
		    : 0u)

/* bytes of one IB row and of the IB region of a rank with @nib IB peers */
#define DVX_WIN_IB_ROW_BYTES(signals, counters, slots, slot_bytes)                         \
	(DVX_WIN_ALIGN_UP((uint64_t)(signals) * 8u + (uint64_t)(counters) * 8u +          \
				  ((slots) ? (uint64_t)(slots) * 8u + 8u : 0u), 64u) +     \
	 2u * (uint64_t)(slots) * (uint64_t)(slot_bytes))
#define DVX_WIN_IB_BYTES(nib, signals, counters, barriers, slots, slot_bytes)              \
	((nib) > 0 ? DVX_WIN_ALIGN_UP((uint64_t)(barriers) * 8u, 64u) +                    \
			     (uint64_t)(nib) *                                             \
				     DVX_WIN_IB_ROW_BYTES(signals, counters, slots, slot_bytes) \
		   : 0u)

/* bytes of the device region of a group of @nranks */
#define DVX_WIN_DEV_BYTES(nranks, barriers)                                                \
	((uint64_t)(nranks) * DVX_WIN_PEER_BYTES +                                         \
	 DVX_WIN_ALIGN_UP((uint64_t)(barriers) * 8u, 64u) +                                \
	 DVX_WIN_ALIGN_UP((uint64_t)(nranks) * 16u, 64u))

/**
 * struct dvx_win_geom - a window's shape: what the configuration asked for and the
 * offsets it gives (dvx_win_geom_init()). Every rank of a window has the same.
 * @signals, @counters, @barriers: ids of each (per peer; barriers per window)
 * @slots:	send/recv slots per peer and direction (0: no send/recv)
 * @slot_bytes:	bytes of a slot, header included
 * @nvl_row:	bytes of an NVL row; @nvl_rows0: offset of row 0 (after the barriers)
 * @nvl_ctr, @nvl_ready, @nvl_credit, @nvl_slots: offsets in an NVL row
 * @ib_row, @ib_rows0, @ib_ctr, @ib_ready, @ib_credit, @ib_rslots, @ib_sslots: the IB twins
 */
struct dvx_win_geom {
	uint32_t signals;
	uint32_t counters;
	uint32_t barriers;
	uint32_t slots;
	uint64_t slot_bytes;
	uint64_t nvl_row;
	uint64_t nvl_rows0;
	uint64_t nvl_ctr;
	uint64_t nvl_ready;
	uint64_t nvl_credit;
	uint64_t nvl_slots;
	uint64_t ib_row;
	uint64_t ib_rows0;
	uint64_t ib_ctr;
	uint64_t ib_ready;
	uint64_t ib_credit;
	uint64_t ib_rslots;
	uint64_t ib_sslots;
};

DVX_ASSERT_SIZE(struct dvx_win_geom, 128);


/**
 * dvx_win_geom_init() - the geometry of a configuration.
 * @g:		filled
 * @signals, @counters, @barriers: ids, each at most DVX_WIN_MAX_IDS (0: none)
 * @slots:	send/recv slots per peer, at most DVX_WIN_MAX_SLOTS (0: no send/recv)
 * @slot_bytes:	with @slots: a multiple of 128 from DVX_WIN_MIN_SLOT_BYTES to
 *		DVX_WIN_MAX_SLOT_BYTES (a slot carries slot_bytes - DVX_WIN_HDR bytes of
 *		data); without: 0
 *
 * Context: any, host or device. Return: 0, or -EINVAL (@g untouched).
 */
DVX_INLINE int dvx_win_geom_init(struct dvx_win_geom *g, uint32_t signals, uint32_t counters,
				 uint32_t barriers, uint32_t slots, uint64_t slot_bytes)
{
	struct dvx_win_geom t;

	if (signals > DVX_WIN_MAX_IDS || counters > DVX_WIN_MAX_IDS || barriers > DVX_WIN_MAX_IDS ||
	    slots > DVX_WIN_MAX_SLOTS)
		return -EINVAL;
	if (slots ? (slot_bytes < DVX_WIN_MIN_SLOT_BYTES || slot_bytes > DVX_WIN_MAX_SLOT_BYTES ||
		     slot_bytes % 128u)
		  : slot_bytes != 0)
		return -EINVAL;
	t.signals = signals;
	t.counters = counters;
	t.barriers = barriers;
	t.slots = slots;
	t.slot_bytes = slot_bytes;
	t.nvl_row = DVX_WIN_NVL_ROW_BYTES(signals, counters, slots, slot_bytes);
	t.nvl_rows0 = (uint64_t)barriers * DVX_WIN_NVL_WORD;
	t.nvl_ctr = (uint64_t)signals * DVX_WIN_NVL_WORD;
	t.nvl_ready = t.nvl_ctr + DVX_WIN_ALIGN_UP((uint64_t)counters * 8u, DVX_WIN_NVL_WORD);
	t.nvl_credit = t.nvl_ready + (uint64_t)slots * DVX_WIN_NVL_WORD;
	t.nvl_slots = slots ? t.nvl_credit + DVX_WIN_NVL_WORD : t.nvl_credit;
	t.ib_row = DVX_WIN_IB_ROW_BYTES(signals, counters, slots, slot_bytes);
	t.ib_rows0 = DVX_WIN_ALIGN_UP((uint64_t)barriers * 8u, 64u);
	t.ib_ctr = (uint64_t)signals * 8u;
	t.ib_ready = t.ib_ctr + (uint64_t)counters * 8u;
	t.ib_credit = t.ib_ready + (uint64_t)slots * 8u;
	t.ib_rslots = DVX_WIN_ALIGN_UP(t.ib_credit + (slots ? 8u : 0u), 64u);
	t.ib_sslots = t.ib_rslots + (uint64_t)slots * slot_bytes;
	*g = t;
	return 0;
}

/* ---- offsets in a region (rows by the row index the region's owner gives a peer) ---- */

/** dvx_win_nvl_sig_off() - NVL: signal @id of row @row. */
DVX_INLINE uint64_t dvx_win_nvl_sig_off(const struct dvx_win_geom *g, uint32_t row, uint32_t id)
{
	return g->nvl_rows0 + (uint64_t)row * g->nvl_row + (uint64_t)id * DVX_WIN_NVL_WORD;
}

/** dvx_win_nvl_bar_off() - NVL: barrier word @id. */
DVX_INLINE uint64_t dvx_win_nvl_bar_off(const struct dvx_win_geom *g, uint32_t id)
{
	(void)g;
	return (uint64_t)id * DVX_WIN_NVL_WORD;
}

/** dvx_win_nvl_ctr_off() - NVL: counter @id of row @row (local only). */
DVX_INLINE uint64_t dvx_win_nvl_ctr_off(const struct dvx_win_geom *g, uint32_t row, uint32_t id)
{
	return g->nvl_rows0 + (uint64_t)row * g->nvl_row + g->nvl_ctr + (uint64_t)id * 8u;
}

/** dvx_win_nvl_ready_off() - NVL: ready word of slot @slot of row @row. */
DVX_INLINE uint64_t dvx_win_nvl_ready_off(const struct dvx_win_geom *g, uint32_t row, uint32_t slot)
{
	return g->nvl_rows0 + (uint64_t)row * g->nvl_row + g->nvl_ready +
	       (uint64_t)slot * DVX_WIN_NVL_WORD;
}

/** dvx_win_nvl_credit_off() - NVL: the credit word of row @row. */
DVX_INLINE uint64_t dvx_win_nvl_credit_off(const struct dvx_win_geom *g, uint32_t row)
{
	return g->nvl_rows0 + (uint64_t)row * g->nvl_row + g->nvl_credit;
}

/** dvx_win_nvl_slot_off() - NVL: receive slot @slot of row @row. */
DVX_INLINE uint64_t dvx_win_nvl_slot_off(const struct dvx_win_geom *g, uint32_t row, uint32_t slot)
{
	return g->nvl_rows0 + (uint64_t)row * g->nvl_row + g->nvl_slots +
	       (uint64_t)slot * g->slot_bytes;
}

/**
 * dvx_win_ll_max() - NVL: the largest message send/recv carries as flagged lines in
 * one slot (docs/win.md): DVX_WIN_LL_MAX, or what half a slot's payload holds.
 * @g:		the geometry
 *
 * Context: any, host or device. Return: bytes (0 without slots).
 */
DVX_INLINE uint64_t dvx_win_ll_max(const struct dvx_win_geom *g)
{
	uint64_t m = g->slot_bytes > DVX_WIN_HDR ? (g->slot_bytes - DVX_WIN_HDR) / 2 : 0;

	return m < DVX_WIN_LL_MAX ? m : DVX_WIN_LL_MAX;
}

/**
 * dvx_win_ll_seq() - NVL: the sequence a slot's header (and flagged lines) carry for
 * chunk @k of a pair's stream: never 0, different for two uses of a slot.
 * @k:		the chunk's number
 *
 * Context: any, host or device. Return: the sequence.
 */
DVX_INLINE uint32_t dvx_win_ll_seq(uint64_t k)
{
	return (uint32_t)(k % 0xffffffffu) + 1;
}

/** dvx_win_ib_sig_off() - IB: signal @id of row @row. */
DVX_INLINE uint64_t dvx_win_ib_sig_off(const struct dvx_win_geom *g, uint32_t row, uint32_t id)
{
	return g->ib_rows0 + (uint64_t)row * g->ib_row + (uint64_t)id * 8u;
}

/** dvx_win_ib_bar_off() - IB: barrier word @id. */
DVX_INLINE uint64_t dvx_win_ib_bar_off(const struct dvx_win_geom *g, uint32_t id)
{
	(void)g;
	return (uint64_t)id * 8u;
}

/** dvx_win_ib_ctr_off() - IB: counter @id of row @row. */
DVX_INLINE uint64_t dvx_win_ib_ctr_off(const struct dvx_win_geom *g, uint32_t row, uint32_t id)
{
	return g->ib_rows0 + (uint64_t)row * g->ib_row + g->ib_ctr + (uint64_t)id * 8u;
}

/** dvx_win_ib_ready_off() - IB: ready word of slot @slot of row @row. */
DVX_INLINE uint64_t dvx_win_ib_ready_off(const struct dvx_win_geom *g, uint32_t row, uint32_t slot)
{
	return g->ib_rows0 + (uint64_t)row * g->ib_row + g->ib_ready + (uint64_t)slot * 8u;
}

/** dvx_win_ib_credit_off() - IB: the credit word of row @row. */
DVX_INLINE uint64_t dvx_win_ib_credit_off(const struct dvx_win_geom *g, uint32_t row)
{
	return g->ib_rows0 + (uint64_t)row * g->ib_row + g->ib_credit;
}

/** dvx_win_ib_rslot_off(), dvx_win_ib_sslot_off() - IB: receive / send slot @slot of row @row. */
DVX_INLINE uint64_t dvx_win_ib_rslot_off(const struct dvx_win_geom *g, uint32_t row, uint32_t slot)
{
	return g->ib_rows0 + (uint64_t)row * g->ib_row + g->ib_rslots + (uint64_t)slot * g->slot_bytes;
}

DVX_INLINE uint64_t dvx_win_ib_sslot_off(const struct dvx_win_geom *g, uint32_t row, uint32_t slot)
{
	return g->ib_rows0 + (uint64_t)row * g->ib_row + g->ib_sslots + (uint64_t)slot * g->slot_bytes;
}

/**
 * struct dvx_win_xfer - the data of a window put (host and device): @len bytes from
 * @src + @soff into the peer's window buffer at @doff.
 * @src:	the source (IB peers: registered, dvx_win_register_src(); NVL peers: memory
 *		this GPU reads)
 * @soff:	offset into @src
 * @doff:	offset into the peer's window buffer
 * @len:	bytes (0 is -EINVAL)
 *
 * The caller owns it; calls read it during the call only.
 */
struct dvx_win_xfer {
	const struct dvx_p2p_lbuf *src;
	uint64_t soff;
	uint64_t doff;
	uint64_t len;
};

/**
 * struct dvx_win_rxfer - the data of a window get (host and device): @len bytes of the
 * peer's window buffer at @soff into @dst + @doff.
 * @dst:	the local destination (IB peers: registered, dvx_win_register_src(); NVL
 *		peers: memory the caller's side writes: this GPU in kernels, the CPU or
 *		the configuration's stream on the host)
 * @doff:	offset into @dst
 * @soff:	offset into the peer's window buffer
 * @len:	bytes (0 is -EINVAL)
 *
 * The caller owns it; calls read it during the call only.
 */
struct dvx_win_rxfer {
	const struct dvx_p2p_lbuf *dst;
	uint64_t doff;
	uint64_t soff;
	uint64_t len;
};

/* the one-word operations on a peer's window buffer (the values of DVX_P2P_AMO_*,
 * dvx/p2p/ops.h, and of DVX_NVL_AMO_*, dvx/nvl/dev.cuh) */
enum dvx_win_amo_op {
	DVX_WIN_AMO_SET = 0,	/* put_value: write the 8-byte value */
	DVX_WIN_AMO_ADD = 1,	/* add, the old value not returned */
	DVX_WIN_AMO_FADD = 2,	/* fetch_add: the old value into the result word */
	DVX_WIN_AMO_CSWAP = 3,	/* compare_swap: the old value into the result word */
};

/**
 * struct dvx_win_amo - a one-word operation on the 8-byte word at @doff of a peer's
 * window buffer (host and device).
 * @doff:	the word's offset (8-byte aligned, inside the peer's buffer)
 * @value:	the value written (SET), the addend (ADD, FADD), the swap value (CSWAP)
 * @compare:	CSWAP: the value the word must hold for the swap
 * @res:	FADD and CSWAP: where the old value goes (IB peers: registered,
 *		dvx_win_register_src(); NVL peers: its @ptr is written); NULL for SET and
 *		ADD
 * @resoff:	offset of the result word in @res (8-byte aligned)
 *
 * The caller owns it; calls read it during the call only.
 */
struct dvx_win_amo {
	uint64_t doff;
	uint64_t value;
	uint64_t compare;
	const struct dvx_p2p_lbuf *res;
	uint64_t resoff;
};

/**
 * struct dvx_win_dev_peer - one rank as the window sees it (the peer table, by rank;
 * the host keeps the same table).
 * @kind:	enum dvx_mp_kind
 * @row:	its row in this rank's regions (NVL: skip-self local rank; IB: IB index);
 *		-1 for self
 * @row_at:	this rank's row in its regions; -1 for self
 * @nvl_base:	NVL: its NVL region, mapped into this process
 * @nvl_data:	NVL: its window buffer, mapped (0: no buffer exchanged); self: this
 *		rank's own buffer
 * @data_len:	bytes of its window buffer
 * @ib_region:	IB: its IB region (address and rkeys)
 * @ib_data:	IB: its window buffer
 */
struct dvx_win_dev_peer {
	uint32_t kind;
	int32_t row;
	int32_t row_at;
	uint32_t rsvd0;
	uint64_t nvl_base;
	uint64_t nvl_data;
	uint64_t data_len;
	struct dvx_p2p_rbuf ib_region;
	struct dvx_p2p_rbuf ib_data;
	uint64_t rsvd[1];
};

DVX_ASSERT_SIZE(struct dvx_win_dev_peer, DVX_WIN_PEER_BYTES);

/**
 * dvx_win_dev_peer_clear() - an empty entry (DVX_MP_NONE, no rows; the caller sets
 * what the rank is).
 * Context: any. Return: nothing.
 */
DVX_INLINE void dvx_win_dev_peer_clear(struct dvx_win_dev_peer *p)
{
	uint32_t i;
	uint64_t *q = (uint64_t *)(void *)p;

	for (i = 0; i < DVX_WIN_PEER_BYTES / 8u; i++)
		q[i] = 0;
	p->kind = DVX_MP_NONE;
	p->row = -1;
	p->row_at = -1;
}

/**
 * struct dvx_win_dev - the window as a kernel parameter (by value; dvx_win_dev_make()).
 * @version:	DVX_WIN_DEV_VERSION, and @size: sizeof(struct dvx_win_dev): a kernel
 *		built against other headers refuses the window (-EPROTO) instead of
 *		reading garbage
 * @rank, @nranks: this rank and the group size
 * @nnvl_peers, @nib: NVL and IB peers
 * @channel:	the IB channel the window's signals and send/recv use
 * @flags:	DVX_WIN_F_*
 * @geom:	the geometry
 * @nvl_base:	this rank's NVL region (0 without NVL peers)
 * @ib_base:	this rank's IB region (0 without IB peers), @ib_lkey: its lkeys
 *		(sources of the send slots' puts), @ib_rkey: its rkeys (targets of the
 *		counters' loopback adds), @ib_addr: its address on the NICs
 * @data:	this rank's window buffer (0: none), @data_len its bytes
 * @peers:	device address of struct dvx_win_dev_peer[@nranks]
 * @bar_expected: device address of uint64_t[barriers]: what each barrier waits for
 *		next (kept across launches)
 * @cursors:	device address of uint64_t[nranks][2]: chunks sent to, received from
 *		each rank (kept across launches)
 * @nvl_rows:	rows of the NVL region (the NVL domain's other ranks)
 * @nchannels:	IB channels the window's puts spread over: @channel ... @channel +
 *		@nchannels - 1 (1: all on @channel; 0 in a handle of before: 1)
 * @post_timeout_ns: how long an IB post waits for ring room
 * @ib:		the IB transport's lanes (dvx/p2p/dev.cuh); version 0 without IB peers
 */
struct dvx_win_dev {
	uint32_t version;
	uint32_t size;
	int32_t rank;
	int32_t nranks;
	int32_t nnvl_peers;
	int32_t nib;
	uint32_t channel;
	uint32_t flags;
	struct dvx_win_geom geom;
	uint64_t nvl_base;
	uint64_t ib_base;
	uint64_t ib_addr;
	uint32_t ib_lkey[DVX_P2P_MAX_NICS];
	uint64_t data;
	uint64_t data_len;
	uint64_t peers;
	uint64_t bar_expected;
	uint64_t cursors;
	uint32_t ib_rkey[DVX_P2P_MAX_NICS];
	int32_t nvl_rows;
	uint32_t nchannels;
	uint64_t post_timeout_ns;
	struct dvx_p2p_dev ib;
};

DVX_ASSERT_SIZE(struct dvx_win_dev, 336);


/** dvx_win_peer_index() - rank @r's skip-self peer index (O(1)); -1 for self or out of range. */
DVX_INLINE int dvx_win_peer_index(int32_t me, int32_t nranks, int32_t r)
{
	if (r < 0 || r >= nranks || r == me)
		return -1;
	return r < me ? r : r - 1;
}

/** dvx_win_peer_rank() - the rank of skip-self peer index @i (O(1)); -1 out of range. */
DVX_INLINE int dvx_win_peer_rank(int32_t me, int32_t nranks, int32_t i)
{
	if (i < 0 || i >= nranks - 1)
		return -1;
	return i < me ? i : i + 1;
}

DVX_END_DECLS

#endif /* DVX_WIN_LAYOUT_H */
