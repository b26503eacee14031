// SPDX-License-Identifier: MIT
/*
 * Kernels of gpu-p2p-test: the P2P transport's operations posted by GPU threads
 * (dvx/p2p/dev.cuh) on lanes exported from a rank running on the software NIC.
 * status[i] receives thread i's first error (0 when everything went well).
 */
#include <dvx/p2p/dev.cuh>

/* thread scope: thread i puts chunk i (@chunk bytes) and raises the peer's signal;
 * waits for its ticket; thread 0 then flushes every channel it used */
extern "C" __global__ void t_put_signal(struct dvx_p2p_dev d, int peer, struct dvx_p2p_lbuf src,
					uint64_t soff, struct dvx_p2p_rbuf dst, uint64_t doff,
					struct dvx_p2p_rbuf sig, uint64_t sigoff, uint64_t chunk,
					uint32_t nchunks, uint32_t fence, uint64_t timeout_ns,
					int32_t *status)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
	struct dvx_p2p_ticket tk;
	int err;

	if (i >= nchunks)
		return;
	struct dvx_p2p_xfer x = { &src, soff + i * chunk, &dst, doff + i * chunk, chunk };
	struct dvx_p2p_notify n = { &sig, sigoff, 1, nullptr, 0, fence ? DVX_P2P_FENCE : 0u };

	err = dvx_p2p_dev_put_signal(dvx_dev_thread(), d, peer, i, &x, &n, timeout_ns, &tk);
	if (!err)
		err = dvx_p2p_dev_wait_local(d, tk, timeout_ns);
	if (!err && i < d.nlanes)
		err = dvx_p2p_dev_flush(d, i, timeout_ns);
	status[i] = err;
}

/* warp scope: every lane i < nchunks of global warp w puts its chunk on channel
 * (w % nchan), the warp raises the peer's signal ONCE after all of it (and, with
 * use_ctr, counter word ctr_word + channel once); lane 0 waits for the warp's ticket,
 * then flushes the channel. The grid is whole warps. */
extern "C" __global__ void t_put_warp(struct dvx_p2p_dev d, int peer, struct dvx_p2p_lbuf src,
				      uint64_t soff, struct dvx_p2p_rbuf dst, uint64_t doff,
				      struct dvx_p2p_rbuf sig, uint64_t sigoff,
				      struct dvx_p2p_lbuf ctr, uint32_t ctr_word, uint32_t use_ctr,
				      uint64_t chunk, uint32_t nchunks, uint32_t nchan,
				      uint64_t timeout_ns, int32_t *status)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x, ch = (i / 32) % nchan;
	bool data = i < nchunks;	/* lanes past nchunks take part without data */
	struct dvx_p2p_ticket tk;
	int err;

	struct dvx_p2p_xfer x = { data ? &src : nullptr, soff + i * chunk, data ? &dst : nullptr,
				  doff + i * chunk, data ? chunk : 0 };
	struct dvx_p2p_notify n = { &sig, sigoff, 1, use_ctr ? &ctr : nullptr,
				    (uint64_t)(ctr_word + ch) * 8, 0 };

	err = dvx_p2p_dev_post(dvx_dev_warp(), d, peer, ch, &x, &n, timeout_ns, &tk);
	if (!err && dvx_dev_lane() == 0)
		err = dvx_p2p_dev_wait_local(d, tk, timeout_ns);
	if (!err && dvx_dev_lane() == 0)
		err = dvx_p2p_dev_flush(d, ch, timeout_ns);
	status[i] = err;
}

/* counters: thread i does put_counter, put_signal_counter and signal_counter on channel
 * i, raising counter word (i % nlanes); thread 0 then waits for all of them */
extern "C" __global__ void t_counter(struct dvx_p2p_dev d, int peer, struct dvx_p2p_lbuf src,
				     uint64_t soff, struct dvx_p2p_rbuf dst, uint64_t doff,
				     struct dvx_p2p_rbuf sig, uint64_t sigoff, struct dvx_p2p_lbuf ctr,
				     const uint64_t *ctr_dev, uint64_t chunk, uint32_t n,
				     uint64_t timeout_ns, int32_t *status)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
	struct dvx_p2p_ticket tk;
	uint64_t off = (i % d.nlanes) * 8;
	int err;

	if (i >= n)
		return;
	struct dvx_p2p_xfer x = { &src, soff + i * chunk, &dst, doff + i * chunk, chunk };
	struct dvx_p2p_notify c = { nullptr, 0, 0, &ctr, off, 0 };
	struct dvx_p2p_notify sc = { &sig, sigoff, 1, &ctr, off, DVX_P2P_FENCE };
	struct dvx_p2p_notify sc0 = { &sig, sigoff, 1, &ctr, off, 0 };

	err = dvx_p2p_dev_put_counter(dvx_dev_thread(), d, peer, i, &x, &c, timeout_ns, &tk);
	if (!err)
		err = dvx_p2p_dev_put_signal_counter(dvx_dev_thread(), d, peer, i, &x, &sc,
						     timeout_ns, &tk);
	if (!err)
		err = dvx_p2p_dev_signal_counter(dvx_dev_thread(), d, peer, i, &sc0, timeout_ns,
						 &tk);
	if (!err) {
		/* every poster of this word: 3 each */
		uint32_t posters = n / d.nlanes + ((i % d.nlanes) < n % d.nlanes ? 1 : 0);

		err = dvx_p2p_dev_wait_counter(d, peer, i, ctr_dev + i % d.nlanes, DVX_CMP_GE,
					       3ull * posters, timeout_ns);
	}
	status[i] = err;
}

/* timeouts and bad input: each must come back as an error, never success */
extern "C" __global__ void t_timeouts(struct dvx_p2p_dev d, int peer, const uint64_t *still,
				      int32_t *status)
{
	struct dvx_p2p_ticket tk = { (uint32_t)peer, 0, 1ull << 40 };
	struct dvx_p2p_xfer self = { nullptr, 0, nullptr, 0, 8 };

	status[0] = dvx_p2p_dev_wait_signal(still, DVX_CMP_GE, 1, 1000000);	/* 1 ms */
	status[1] = dvx_p2p_dev_wait_counter(d, peer, 0, still, DVX_CMP_EQ, 7, 1000000);
	status[2] = dvx_p2p_dev_wait_local(d, tk, 1000000);			/* never handed out */
	status[3] = dvx_p2p_dev_put(dvx_dev_thread(), d, d.rank, 0, &self, 0, nullptr);
	status[4] = dvx_p2p_dev_wait_signal(still, 99, 0, 1000);
}

/* a put with a bad rkey on @channel: the error CQE must surface here */
extern "C" __global__ void t_bad_rkey(struct dvx_p2p_dev d, int peer, uint32_t channel,
				      struct dvx_p2p_lbuf src, struct dvx_p2p_rbuf dst,
				      uint64_t timeout_ns, int32_t *status)
{
	struct dvx_p2p_ticket tk;
	const struct dvx_p2p_dev_lane *l = dvx_p2p_dev_lane_of(d, peer, channel);
	struct dvx_p2p_xfer x = { &src, 0, &dst, 0, 64 };
	int err = dvx_p2p_dev_put(dvx_dev_thread(), d, peer, channel, &x, timeout_ns, &tk);

	status[0] = err;
	status[1] = err ? err : dvx_p2p_dev_wait_local(d, tk, timeout_ns);
	/* the lane refuses new posts with the same error */
	status[2] = dvx_p2p_dev_put(dvx_dev_thread(), d, peer, channel, &x, timeout_ns, &tk);
	status[3] = l->main.st->syndrome;
}

/* block scope: every thread i < nchunks of block b puts its chunk on channel (b % nchan), the block
 * raises the peer's signal once after all of it (and, with use_ctr, counter word
 * ctr_word + channel once); thread 0 waits for the ticket, then flushes the channel */
extern "C" __global__ void t_put_block(struct dvx_p2p_dev d, int peer, struct dvx_p2p_lbuf src,
				       uint64_t soff, struct dvx_p2p_rbuf dst, uint64_t doff,
				       struct dvx_p2p_rbuf sig, uint64_t sigoff,
				       struct dvx_p2p_lbuf ctr, uint32_t ctr_word, uint32_t use_ctr,
				       uint64_t chunk, uint32_t nchunks, uint32_t nchan,
				       uint64_t timeout_ns, int32_t *status)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x, ch = blockIdx.x % nchan;
	bool data = i < nchunks;	/* threads past nchunks take part without data */
	struct dvx_p2p_ticket tk;
	int err;

	struct dvx_p2p_xfer x = { data ? &src : nullptr, soff + i * chunk, data ? &dst : nullptr,
				  doff + i * chunk, data ? chunk : 0 };
	struct dvx_p2p_notify n = { &sig, sigoff, 1, use_ctr ? &ctr : nullptr,
				    (uint64_t)(ctr_word + ch) * 8, 0 };

	err = dvx_p2p_dev_post(dvx_dev_block(), d, peer, ch, &x, &n, timeout_ns, &tk);
	if (!err && threadIdx.x == 0)
		err = dvx_p2p_dev_wait_local(d, tk, timeout_ns);
	if (!err && threadIdx.x == 0)
		err = dvx_p2p_dev_flush(d, ch, timeout_ns);
	status[i] = err;
}

/* group scope (warp with @warp, else block), bad input: thread 5 gives an
 * out-of-bounds length (all get an error, nothing is posted); then a group signal with
 * a misaligned word; then a group with no data and no signal; status[3 * k + j] for
 * threads 0, 1 and 5 of each case */
extern "C" __global__ void t_group_bad(struct dvx_p2p_dev d, int peer, struct dvx_p2p_lbuf src,
				       struct dvx_p2p_rbuf dst, struct dvx_p2p_rbuf sig,
				       uint32_t warp, uint64_t timeout_ns, int32_t *status)
{
	uint32_t t = threadIdx.x;
	int e[3];

	struct dvx_dev_grp g = warp ? dvx_dev_warp() : dvx_dev_block();
	struct dvx_p2p_xfer x = { &src, 0, &dst, 0, t == 5 ? dst.len + 1 : 8 };
	struct dvx_p2p_xfer x8 = { &src, 0, &dst, 0, 8 };
	struct dvx_p2p_notify n = { &sig, 0, 1, nullptr, 0, 0 };
	struct dvx_p2p_notify odd = { &sig, 4, 1, nullptr, 0, 0 };

	e[0] = dvx_p2p_dev_post(g, d, peer, 0, &x, &n, timeout_ns, nullptr);
	e[1] = dvx_p2p_dev_post(g, d, peer, 0, &x8, &odd, timeout_ns, nullptr);
	e[2] = dvx_p2p_dev_post(g, d, peer, 0, nullptr, nullptr, timeout_ns, nullptr);
	for (int k = 0; k < 3; k++) {
		if (t == 0)
			status[3 * k] = e[k];
		if (t == 1)
			status[3 * k + 1] = e[k];
		if (t == 5)
			status[3 * k + 2] = e[k];
	}
}

/* start and end (%globaltimer) of a kernel, for the report of the two-rank rounds */
extern "C" __global__ void t_stamp(uint64_t *out)
{
	*out = dvx_dev_now_ns();
}
