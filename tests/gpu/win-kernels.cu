// SPDX-License-Identifier: MIT
/*
 * Kernels of gpu-win-test: the window's device API (dvx/win/dev.cuh) at thread, warp
 * and block scope. One group per launch (grid 1: a thread, a warp, or a block of 256).
 * status[i] receives thread i's first error, 0 when everything went well.
 */
#include <dvx/win/dev.cuh>

enum { S_THREAD = 0, S_WARP = 1, S_BLOCK = 2 };

__device__ static struct dvx_dev_grp grp_of(uint32_t scope)
{
	return scope == S_THREAD ? dvx_dev_thread() : scope == S_WARP ? dvx_dev_warp() : dvx_dev_block();
}

__device__ static uint8_t wpat(int from, int to, uint64_t round, uint64_t i)
{
	return (uint8_t)(from * 41 + to * 13 + round * 7 + i * 3 + (i >> 9) + 1);
}

#define TRY(e) do { int e_ = (e); if (e_ && !err) { err = e_; goto out; } } while (0)

/*
 * @nrounds rounds (global numbers @round0 ...): fill the source's slot for every peer,
 * put_signal it into the peer's window buffer at this rank's slot (signal 0), wait for
 * every peer's (the sum), check every byte; signal_all signal 1 with rank + 1 (sums
 * and single slots exact); put_counter 64 B to every peer (counter 0 exact); barrier 0.
 * The source and the window buffer hold @slot bytes per rank; without a window buffer
 * only the signals and the barrier.
 */
extern "C" __global__ void k_win_rounds(const struct dvx_win_dev d, uint32_t scope,
					const struct dvx_p2p_lbuf src, uint64_t slot, uint64_t round0,
					uint32_t nrounds, uint64_t tmo, int32_t *status)
{
	struct dvx_dev_grp g = grp_of(scope);
	int me = d.rank, n = d.nranks, p, err = 0, bad;
	uint64_t r, i, sum = 0;

	for (p = 0; p < n; p++)
		if (p != me)
			sum += (uint64_t)p + 1;
	for (r = round0; r < round0 + nrounds; r++) {
		for (p = 0; p < n && d.data; p++) {
			uint8_t *s = (uint8_t *)src.ptr + (uint64_t)p * slot;

			if (p == me)
				continue;
			for (i = g.lane; i < slot; i += g.size)
				s[i] = wpat(me, p, r, i);
			dvx_dev_grp_sync(g);
			{
				struct dvx_win_xfer x = { &src, (uint64_t)p * slot, (uint64_t)me * slot,
							  slot };

				TRY(dvx_win_dev_put_signal(g, d, p, &x, 0, 1));
			}
		}
		if (d.data)
			TRY(dvx_win_dev_wait_signal(g, d, 0, DVX_CMP_GE, (r + 1) * (uint64_t)(n - 1), tmo,
						nullptr));
		bad = 0;
		for (p = 0; p < n && d.data; p++) {
			const uint8_t *b = (const uint8_t *)d.data + (uint64_t)p * slot;

			if (p == me)
				continue;
			if (dvx_win_read_signal_from(d, p, 0) != r + 1)
				bad = -EBADMSG;
			for (i = g.lane; i < slot; i += g.size)
				if (b[i] != wpat(p, me, r, i))
					bad = -EIO;
		}
		TRY(dvx_dev_grp_first_err(g, bad));
		TRY(dvx_win_dev_signal_all(g, d, 1, DVX_NVL_SIG_ADD, (uint64_t)me + 1));
		TRY(dvx_win_dev_wait_signal(g, d, 1, DVX_CMP_EQ, sum * (r + 1), tmo, nullptr));
		for (p = 0; p < n; p++)
			if (p != me)
				TRY(dvx_win_dev_wait_signal_from(g, d, p, 1, DVX_CMP_EQ, (uint64_t)(p + 1) * (r + 1),
							     tmo, nullptr));
		for (p = 0; p < n && d.data; p++) {
			if (p == me)
				continue;
			{
				struct dvx_win_xfer x = { &src, (uint64_t)p * slot, (uint64_t)me * slot,
							  64 };

				TRY(dvx_win_dev_put_counter(g, d, p, &x, 0));
			}
			TRY(dvx_win_dev_wait_counter(g, d, p, 0, DVX_CMP_GE, r + 1, tmo));
			TRY(dvx_dev_grp_first_err(g, dvx_win_read_counter(d, p, 0) != r + 1 ? -EBADMSG : 0));
		}
		/* nobody overwrites a slot before its owner read it */
		TRY(dvx_win_dev_barrier(g, d, 0, tmo));
	}
out:
	status[threadIdx.x] = err;
}

/* @iters barriers on @id (the host launches this again and again: the expectation
 * lives in the window's device region) */
extern "C" __global__ void k_win_barrier(const struct dvx_win_dev d, uint32_t scope, uint32_t id,
					 uint32_t iters, uint64_t tmo, int32_t *status)
{
	struct dvx_dev_grp g = grp_of(scope);
	uint32_t k;
	int err = 0;

	for (k = 0; k < iters && !err; k++)
		err = dvx_win_dev_barrier(g, d, id, tmo);
	status[threadIdx.x] = err;
}

/*
 * Two-sided: with every peer, pairs in one global order (the lower rank sends first),
 * @len bytes each way through the staging slots; @sbuf and @rbuf are GPU buffers of
 * at least @len + 1 bytes; every byte received is checked, and the byte after it must
 * be untouched (0xee, set by the host).
 */
/* one exchange of @len bytes with every peer (pairs in one order), every byte checked */
__device__ static int sendrecv_once(const struct dvx_dev_grp &g, const struct dvx_win_dev &d,
				    uint64_t len, uint64_t round, uint8_t *sbuf, uint8_t *rbuf,
				    uint64_t tmo)
{
	int me = d.rank, n = d.nranks, a, b, err = 0, bad;
	uint64_t i;

	for (a = 0; a < n; a++)
		for (b = a + 1; b < n; b++) {
			int other = a == me ? b : b == me ? a : -1;

			if (other < 0)
				continue;
			for (i = g.lane; i < len; i += g.size)
				sbuf[i] = wpat(me, other, round, i);
			dvx_dev_grp_sync(g);
			if (me == a) {
				TRY(dvx_win_dev_send(g, d, other, sbuf, len, tmo));
				TRY(dvx_win_dev_recv(g, d, other, rbuf, len, tmo));
			} else {
				TRY(dvx_win_dev_recv(g, d, other, rbuf, len, tmo));
				TRY(dvx_win_dev_send(g, d, other, sbuf, len, tmo));
			}
			bad = 0;
			for (i = g.lane; i < len; i += g.size)
				if (rbuf[i] != wpat(other, me, round, i))
					bad = -EIO;
			if (g.lane == 0 && rbuf[len] != 0xee)
				bad = -EOVERFLOW;
			TRY(dvx_dev_grp_first_err(g, bad));
		}
out:
	return err;
}

extern "C" __global__ void k_win_sendrecv(const struct dvx_win_dev d, uint32_t scope, uint64_t len,
					  uint64_t round, uint8_t *sbuf, uint8_t *rbuf, uint64_t tmo,
					  int32_t *status)
{
	status[threadIdx.x] = sendrecv_once(grp_of(scope), d, len, round, sbuf, rbuf, tmo);
}

/* @rounds exchanges of @len bytes back to back in one launch (the slots reused round
 * after round; small ones go as flagged lines on NVL pairs) */
extern "C" __global__ void k_win_sendrecv_rounds(const struct dvx_win_dev d, uint32_t scope,
						 uint64_t len, uint32_t rounds, uint8_t *sbuf,
						 uint8_t *rbuf, uint64_t tmo, int32_t *status)
{
	struct dvx_dev_grp g = grp_of(scope);
	uint32_t r;
	int err = 0;

	for (r = 0; r < rounds && !err; r++)
		err = sendrecv_once(g, d, len, 1000 + r, sbuf, rbuf, tmo);
	status[threadIdx.x] = err;
}

/* refusals and a wait that must time out, by one thread */
extern "C" __global__ void k_win_refuse(const struct dvx_win_dev d, uint32_t version, int32_t *status)
{
	struct dvx_win_dev bad = d;
	struct dvx_dev_grp g = dvx_dev_thread();
	int p = (d.rank + 1) % d.nranks, err = 0;

	bad.version = version;
	if (dvx_win_dev_barrier(g, bad, 0, 1000) != -EPROTO)
		err = 1;
	else if (dvx_win_dev_signal_peer(g, d, d.rank, 0, DVX_NVL_SIG_ADD, 1) != -EINVAL)
		err = 2;
	else if (dvx_win_dev_signal_peer(g, d, p, d.geom.signals, DVX_NVL_SIG_ADD, 1) != -EINVAL)
		err = 3;
	else if (dvx_win_kind(d, p) == DVX_MP_IB &&
		 dvx_win_dev_signal_peer(g, d, p, 0, DVX_NVL_SIG_SET, 1) != -ENOTSUP)
		err = 4;
	else if (dvx_win_dev_wait_signal_from(g, d, p, 3, DVX_CMP_GE, 1, 2000000, nullptr) != -ETIMEDOUT)
		err = 5;
	else if (dvx_win_dev_wait_signal(g, d, 3, DVX_CMP_GE, 1, 2000000, nullptr) != -ETIMEDOUT)
		err = 6;
	status[threadIdx.x] = err;
}

/*
 * Every one-sided verb in one kernel, to NVL and IB peers alike (the window's rows and
 * lanes pick the path), @nrounds rounds from @round0. Each rank's part of a peer's window
 * buffer is @slot bytes: a quarter by put and then barrier_peer (barrier 1 + k in
 * matching k: rank i meets rank (k - i) mod n, so a barrier id has one peer at a time),
 * the data checked on arrival; a quarter by put_signal (signal 2) and the rest by
 * put_signal_counter (signal 2, this rank's counter 1 of the peer); signal 2 awaited as
 * the sum and per peer, every byte checked; counter 1 awaited, reset and read back 0;
 * signal_peer of signal 3 with rank + 1 to every peer, the sum and single words exact;
 * barrier 0 ends the round. @src: @slot bytes per peer, readable by this GPU and
 * registered for the IB lanes.
 */
extern "C" __global__ void k_win_verbs(const struct dvx_win_dev d, uint32_t scope,
				       const struct dvx_p2p_lbuf src, uint64_t slot, uint64_t round0,
				       uint32_t nrounds, uint64_t tmo, int32_t *status)
{
	struct dvx_dev_grp g = grp_of(scope);
	int me = d.rank, n = d.nranks, p, k, err = 0, bad;
	uint64_t r, i, sum = 0, qa = slot / 4, qb = slot / 4, qc = slot - qa - qb;
	const uint8_t *data = (const uint8_t *)d.data;

	if (!data) {
		err = -EINVAL;
		goto out;
	}
	for (p = 0; p < n; p++)
		if (p != me)
			sum += (uint64_t)p + 1;
	for (r = round0; r < round0 + nrounds; r++) {
		for (p = 0; p < n; p++) {
			uint8_t *s = (uint8_t *)src.ptr + (uint64_t)p * slot;

			if (p == me)
				continue;
			for (i = g.lane; i < slot; i += g.size)
				s[i] = wpat(me, p, r, i);
		}
		dvx_dev_grp_sync(g);
		/* put, then barrier_peer: the peer's put is in place once it arrived */
		for (k = 0; k < n; k++) {
			p = ((k - me) % n + n) % n;
			if (p == me)
				continue;
			{
				struct dvx_win_xfer x = { &src, (uint64_t)p * slot, (uint64_t)me * slot, qa };

				TRY(dvx_win_dev_put(g, d, p, &x));
			}
			TRY(dvx_win_dev_barrier_peer(g, d, p, 1 + (uint32_t)k, tmo));
			bad = 0;
			for (i = g.lane; i < qa; i += g.size)
				if (data[(uint64_t)p * slot + i] != wpat(p, me, r, i))
					bad = -EIO;
			TRY(dvx_dev_grp_first_err(g, bad));
		}
		/* put_signal and put_signal_counter to every peer */
		for (p = 0; p < n; p++) {
			if (p == me)
				continue;
			{
				struct dvx_win_xfer x = { &src, (uint64_t)p * slot + qa,
							  (uint64_t)me * slot + qa, qb };

				TRY(dvx_win_dev_put_signal(g, d, p, &x, 2, 1));
			}
			{
				struct dvx_win_xfer x = { &src, (uint64_t)p * slot + qa + qb,
							  (uint64_t)me * slot + qa + qb, qc };

				TRY(dvx_win_dev_put_signal_counter(g, d, p, &x, 2, 1, 1));
			}
		}
		TRY(dvx_win_dev_wait_signal(g, d, 2, DVX_CMP_GE, 2 * (r + 1) * (uint64_t)(n - 1), tmo,
					    nullptr));
		bad = 0;
		for (p = 0; p < n; p++) {
			if (p == me)
				continue;
			TRY(dvx_win_dev_wait_signal_from(g, d, p, 2, DVX_CMP_EQ, 2 * (r + 1), tmo, nullptr));
			for (i = qa + g.lane; i < slot; i += g.size)
				if (data[(uint64_t)p * slot + i] != wpat(p, me, r, i))
					bad = -EIO;
		}
		TRY(dvx_dev_grp_first_err(g, bad));
		/* counter 1: raised once per round by the put_signal_counter, then reset */
		for (p = 0; p < n; p++) {
			if (p == me)
				continue;
			TRY(dvx_win_dev_wait_counter(g, d, p, 1, DVX_CMP_GE, 1, tmo));
			bad = dvx_win_read_counter(d, p, 1) != 1 ? -EBADMSG : 0;
			dvx_dev_grp_sync(g);
			if (g.lane == 0 && !bad)
				bad = dvx_win_reset_counter(d, p, 1);
			bad = dvx_dev_grp_bcast(g, bad);
			if (!bad && dvx_win_read_counter(d, p, 1) != 0)
				bad = -EBADMSG;
			TRY(dvx_dev_grp_first_err(g, bad));
		}
		/* signal_peer: rank + 1 into signal 3 at every peer */
		for (p = 0; p < n; p++)
			if (p != me)
				TRY(dvx_win_dev_signal_peer(g, d, p, 3, DVX_NVL_SIG_ADD, (uint64_t)me + 1));
		TRY(dvx_win_dev_wait_signal(g, d, 3, DVX_CMP_EQ, sum * (r + 1), tmo, nullptr));
		for (p = 0; p < n; p++)
			if (p != me && dvx_win_read_signal_from(d, p, 3) != (uint64_t)(p + 1) * (r + 1))
				TRY(-EBADMSG);
		/* nobody writes the next round before its owner checked this one */
		TRY(dvx_win_dev_barrier(g, d, 0, tmo));
	}
out:
	status[threadIdx.x] = err;
}

/* ---- gets, one-word operations, resets (k_win_rma) ---- */

#define RMA_GET 8192u		/* an owner's get source: the first bytes of its own slot */
#define RMA_LOCK RMA_GET	/* rank 0's own slot: lock (IB contenders), count, lock (NVL), count */
#define RMA_ADD 2048u		/* in a peer's buffer, this rank's slot: the add word */
#define RMA_FA 2056u		/* the fetch-add word */
#define RMA_CS 2064u		/* the compare-swap word */
#define RMA_RES 0u		/* this rank's local area: fetch-add results (a word a member) */
#define RMA_CSRES 2048u		/* compare-swap results */
#define RMA_LRES 4096u		/* the lock's compare-swap result, then the count's get */
#define RMA_DST 8192u		/* get destinations: 4 pieces of 2 KiB */
#define RMA_GETS 4u
#define RMA_PIECE 2048u
#define RMA_LOCKR 8u		/* lock rounds per contender a launch */

__device__ static uint8_t gpat(int owner, uint64_t i)
{
	return (uint8_t)(owner * 131 + i * 7 + (i >> 8) * 13 + 0x5a);
}

__device__ static uint64_t rma_val(int from, int to, uint64_t r, uint32_t l)
{
	return 0x5100000000000000ull ^ ((uint64_t)from << 40) ^ ((uint64_t)to << 32) ^ (r << 12) ^ l;
}

__device__ static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

/* the lock at rank 0 by this rank's group (every thread; the leader holds the
 * operations): compare-swap 0 -> rank + 1 until it is won, get the count, put_value
 * count + 1, put_value 0 into the lock; each step completed by a quiet before the next */
__device__ static int rma_lock_round(const struct dvx_dev_grp &g, const struct dvx_win_dev &d,
				     const struct dvx_p2p_lbuf &src, uint64_t loc, uint64_t lock)
{
	volatile uint64_t *lres = (volatile uint64_t *)((uint8_t *)src.ptr + loc + RMA_LRES);
	uint64_t old = 1, spins = 0;
	int err = 0;

	while (old) {
		struct dvx_win_amo cs = { lock, (uint64_t)d.rank + 1, 0, &src, loc + RMA_LRES };

		if (++spins > 1000000)
			return -ETIMEDOUT;
		if (g.lane == 0)
			lres[0] = ~0ull;
		dvx_dev_grp_sync(g);
		TRY(dvx_win_dev_compare_swap(g, d, 0, g.lane == 0 ? &cs : nullptr));
		TRY(dvx_win_dev_quiet(g, d, 0));
		old = dvx_dev_grp_bcast(g, g.lane == 0 ? lres[0] : 0ull);
		if (old && old > (uint64_t)d.nranks)
			return -EBADMSG;	/* a lock word nobody could have written */
	}
	{
		struct dvx_win_rxfer gx = { &src, loc + RMA_LRES + 8, lock + 8, 8 };
		struct dvx_win_amo inc = { lock + 8, 0, 0, nullptr, 0 };
		struct dvx_win_amo rel = { lock, 0, 0, nullptr, 0 };

		TRY(dvx_win_dev_get(g, d, 0, &gx));
		TRY(dvx_win_dev_quiet(g, d, 0));
		inc.value = dvx_dev_grp_bcast(g, g.lane == 0 ? lres[1] : 0ull) + 1;
		TRY(dvx_win_dev_put_value(g, d, 0, g.lane == 0 ? &inc : nullptr));
		TRY(dvx_win_dev_quiet(g, d, 0));
		TRY(dvx_win_dev_put_value(g, d, 0, g.lane == 0 ? &rel : nullptr));
		TRY(dvx_win_dev_quiet(g, d, 0));
	}
out:
	return err;
}

/*
 * Gets, put_value, add, fetch_add, compare_swap, reset_peer_signal, quiet and the
 * default device timeout (0) from one kernel, to NVL and IB peers alike, @nrounds
 * rounds; the window built with DVX_WIN_F_READ. Each rank's part of a window buffer
 * and of @src is @slot (>= 16 KiB) bytes: an owner's own part of its window buffer
 * holds its get source (gpat()) and, at rank 0, the lock words; this rank's part of a
 * peer's buffer takes its one-word operations (every member its put_value word, the
 * add, fetch-add and compare-swap words, zeroed by put_value first); this rank's own
 * part of @src takes the fetched old values and the gets. Per round and peer: every
 * member a put_value of its own word, an add of lane + 1, a fetch-add of 1 (old values
 * a permutation of the round's range), a compare-swap 0 -> lane + 1 (exactly one
 * winner, every other member sees its value), a put_value 0 of the compare-swap word,
 * four gets of random ranges checked byte by byte, and a get through a copy of the
 * window without DVX_WIN_F_READ (IB: -EPERM, nothing written; NVL: allowed); then
 * signal_peer of signal 1, its values exact, each owner checks the words its peers
 * wrote, reset_peer_signal zeroes every row. Last, compare-swap as a lock at rank 0 by
 * every other rank, separately for IB and NVL contenders (one kind of atomics a word),
 * guarding a get + put_value increment: rank 0 finds each count at contenders x
 * RMA_LOCKR and both locks free. Its quiets wait @qtmo: 0 (the default device timeout)
 * where the ranks' kernels run at once; ranks as processes sharing one GPU are
 * time-sliced (no MPS), and their quiets are given the run's bound.
 */
extern "C" __global__ void k_win_rma(const struct dvx_win_dev d, uint32_t scope,
				     const struct dvx_p2p_lbuf src, uint64_t slot, uint64_t round0,
				     uint32_t nrounds, uint64_t tmo, uint64_t qtmo,
				     int32_t *status)
{
	__shared__ uint32_t seen[256], nwin;
	__shared__ uint64_t wval;
	struct dvx_dev_grp g = grp_of(scope);
	struct dvx_win_dev nr = d;
	int me = d.rank, n = d.nranks, p, k, err = 0, bad;
	uint32_t S = g.size, l = g.lane, j, nib = 0, nnvl = 0;
	uint64_t r, i, loc = (uint64_t)me * slot, base = (uint64_t)me * slot;
	uint8_t *data = (uint8_t *)d.data, *own;
	uint8_t *lp = (uint8_t *)src.ptr + loc;
	volatile uint64_t *res = (volatile uint64_t *)(lp + RMA_RES);
	volatile uint64_t *cres = (volatile uint64_t *)(lp + RMA_CSRES);

	if (!data || slot < 16384 || S > 256 || !(d.flags & DVX_WIN_F_READ)) {
		err = -EINVAL;
		goto out;
	}
	nr.flags &= ~DVX_WIN_F_READ;
	own = data + (uint64_t)me * slot;
	for (i = l; i < RMA_GET; i += S)
		own[i] = gpat(me, i);
	if (l < 4)
		((volatile uint64_t *)(own + RMA_LOCK))[l] = 0;
	/* this rank's words at every peer zeroed by put_value */
	for (p = 0; p < n; p++) {
		if (p == me)
			continue;
		if (dvx_win_kind(d, p) == DVX_MP_NVL)
			nnvl++;
		else
			nib++;
		for (j = 0; j < 3; j++) {
			struct dvx_win_amo z = { base + RMA_ADD + 8ull * j, 0, 0, nullptr, 0 };

			TRY(dvx_win_dev_put_value(g, d, p, l == 0 ? &z : nullptr));
		}
	}
	TRY(dvx_win_dev_quiet(g, d, qtmo));
	TRY(dvx_win_dev_barrier(g, d, 0, tmo));
	for (r = 0; r < nrounds; r++) {
		for (p = 0; p < n; p++) {
			struct dvx_win_amo pv = { base + 8ull * l, rma_val(me, p, round0 + r, l), 0,
						  nullptr, 0 };
			struct dvx_win_amo ad = { base + RMA_ADD, l + 1ull, 0, nullptr, 0 };
			struct dvx_win_amo fa = { base + RMA_FA, 1, 0, &src, loc + RMA_RES + 8ull * l };
			struct dvx_win_amo cs = { base + RMA_CS, l + 1ull, 0, &src,
						  loc + RMA_CSRES + 8ull * l };
			struct dvx_win_amo csz = { base + RMA_CS, 0, 0, nullptr, 0 };
			uint64_t old;

			if (p == me)
				continue;
			res[l] = ~0ull;
			cres[l] = ~0ull;
			seen[l] = 0;
			if (l == 0)
				nwin = 0;
			dvx_dev_grp_sync(g);
			TRY(dvx_win_dev_put_value(g, d, p, &pv));
			TRY(dvx_win_dev_add(g, d, p, &ad));
			TRY(dvx_win_dev_fetch_add(g, d, p, &fa));
			TRY(dvx_win_dev_compare_swap(g, d, p, &cs));
			TRY(dvx_win_dev_quiet(g, d, qtmo));
			/* fetch-add: the old values are r * S ... (r + 1) * S - 1, once each */
			bad = 0;
			old = res[l];
			if (old < r * S || old >= (r + 1) * S)
				bad = -EBADMSG;
			else if (atomicExch(&seen[old - r * S], 1u))
				bad = -EBADMSG;
			/* compare-swap: one winner; the others see its value */
			old = cres[l];
			if (!old) {
				atomicAdd(&nwin, 1u);
				wval = l + 1ull;
			}
			dvx_dev_grp_sync(g);
			if (nwin != 1 || (old && old != wval))
				bad = bad ? bad : -EILSEQ;
			TRY(dvx_dev_grp_first_err(g, bad));
			TRY(dvx_win_dev_put_value(g, d, p, l == 0 ? &csz : nullptr));
			/* gets of random ranges of the peer's source, 4 in flight */
			for (k = 0; k < (int)RMA_GETS; k++) {
				uint64_t h = mix64(((uint64_t)me << 48) ^ ((uint64_t)p << 40) ^
						   ((round0 + r) << 8) ^ (uint64_t)k);
				uint64_t len = 1 + h % RMA_PIECE;
				uint64_t soff = (h >> 16) % (RMA_GET - len + 1);
				struct dvx_win_rxfer gx = { &src, loc + RMA_DST + (uint64_t)k * RMA_PIECE,
							    (uint64_t)p * slot + soff, len };

				/* the owner's source is at its own slot: p * slot of its buffer */
				for (i = l; i < RMA_PIECE; i += S)
					lp[RMA_DST + (uint64_t)k * RMA_PIECE + i] = 0xee;
				dvx_dev_grp_sync(g);
				TRY(dvx_win_dev_get(g, d, p, &gx));
			}
			TRY(dvx_win_dev_quiet(g, d, qtmo));
			bad = 0;
			for (k = 0; k < (int)RMA_GETS; k++) {
				uint64_t h = mix64(((uint64_t)me << 48) ^ ((uint64_t)p << 40) ^
						   ((round0 + r) << 8) ^ (uint64_t)k);
				uint64_t len = 1 + h % RMA_PIECE;
				uint64_t soff = (h >> 16) % (RMA_GET - len + 1);
				const uint8_t *got = lp + RMA_DST + (uint64_t)k * RMA_PIECE;

				for (i = l; i < RMA_PIECE; i += S)
					if (got[i] != (i < len ? gpat(p, soff + i) : 0xee))
						bad = -EIO;
			}
			TRY(dvx_dev_grp_first_err(g, bad));
			/* a window without DVX_WIN_F_READ: IB refused before posting */
			for (i = l; i < 64; i += S)
				lp[RMA_DST + i] = 0xee;
			dvx_dev_grp_sync(g);
			{
				struct dvx_win_rxfer gx = { &src, loc + RMA_DST, (uint64_t)p * slot, 64 };
				int want = dvx_win_kind(d, p) == DVX_MP_NVL ? 0 : -EPERM;

				if (dvx_win_dev_get(g, nr, p, &gx) != want)
					TRY(-ENOTRECOVERABLE);
			}
			TRY(dvx_win_dev_quiet(g, d, qtmo));
			bad = 0;
			for (i = l; i < 64; i += S)
				if (lp[RMA_DST + i] != (dvx_win_kind(d, p) == DVX_MP_NVL ?
							gpat(p, i) : 0xee))
					bad = -EIO;
			TRY(dvx_dev_grp_first_err(g, bad));
		}
		/* signal 1: rank + 1 from every peer, exact; the words each peer wrote */
		for (p = 0; p < n; p++)
			if (p != me)
				TRY(dvx_win_dev_signal_peer(g, d, p, 1, DVX_NVL_SIG_ADD, (uint64_t)me + 1));
		TRY(dvx_win_dev_quiet(g, d, qtmo));
		TRY(dvx_win_dev_barrier(g, d, 0, tmo));
		bad = 0;
		for (p = 0; p < n; p++) {
			const volatile uint64_t *w = (const volatile uint64_t *)(data + (uint64_t)p * slot);

			if (p == me)
				continue;
			if (dvx_win_read_signal_from(d, p, 1) != (uint64_t)p + 1)
				bad = -EBADMSG;
			if (w[l] != rma_val(p, me, round0 + r, l))
				bad = -EIO;
			if (w[RMA_ADD / 8] != (r + 1) * ((uint64_t)S * (S + 1) / 2) ||
			    w[RMA_FA / 8] != (r + 1) * S || w[RMA_CS / 8] != 0)
				bad = -EBADMSG;
		}
		TRY(dvx_dev_grp_first_err(g, bad));
		TRY(dvx_win_dev_barrier(g, d, 0, tmo));
		for (p = 0; p < n; p++)
			if (p != me)
				TRY(dvx_win_dev_reset_peer_signal(g, d, p, 1));
		TRY(dvx_win_dev_quiet(g, d, qtmo));
		TRY(dvx_win_dev_barrier(g, d, 0, tmo));
		bad = 0;
		for (p = 0; p < n; p++)
			if (p != me && dvx_win_read_signal_from(d, p, 1) != 0)
				bad = -EBADMSG;
		TRY(dvx_dev_grp_first_err(g, bad));
	}
	/* compare-swap as a lock at rank 0, IB and NVL contenders on their own words */
	if (me != 0)
		for (j = 0; j < RMA_LOCKR; j++)
			TRY(rma_lock_round(g, d, src, loc, RMA_LOCK +
					   (dvx_win_kind(d, 0) == DVX_MP_NVL ? 16u : 0u)));
	TRY(dvx_win_dev_barrier(g, d, 0, tmo));
	if (me == 0) {
		const volatile uint64_t *lw = (const volatile uint64_t *)(own + RMA_LOCK);

		if (lw[0] || lw[2] || lw[1] != (uint64_t)nib * RMA_LOCKR ||
		    lw[3] != (uint64_t)nnvl * RMA_LOCKR)
			TRY(-EDEADLK);
	}
	TRY(dvx_win_dev_barrier(g, d, 0, tmo));
out:
	status[threadIdx.x] = err;
}
