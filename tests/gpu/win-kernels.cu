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
