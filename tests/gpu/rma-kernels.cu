// SPDX-License-Identifier: MIT
/*
 * Kernels of gpu-rma-test: gets, fetch-adds, compare-swap and put_value posted by GPU
 * threads (dvx/p2p/dev.cuh) at thread, warp, block and tile scope on lanes exported
 * from a rank on the software NIC. status[i] receives thread i's first error.
 */
#include <dvx/p2p/dev.cuh>

#define S_THREAD 0u
#define S_WARP 1u
#define S_BLOCK 2u
#define S_TILE 3u

static __device__ struct dvx_dev_grp grp_of(uint32_t scope)
{
	return scope == S_WARP ? dvx_dev_warp() : scope == S_BLOCK ? dvx_dev_block() :
	       scope == S_TILE ? dvx_dev_tile(8) : dvx_dev_thread();
}

/* every thread i fetch-adds 1 to the peer's word (@word), its old value into result
 * word i of @res; the group posts together on channel blockIdx.x, then quiets. The
 * default timeout (0) is used throughout. */
extern "C" __global__ void t_fadd(struct dvx_p2p_dev d, int peer, struct dvx_p2p_rbuf dst,
				  uint64_t word, struct dvx_p2p_lbuf res, uint32_t scope,
				  int32_t *status)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
	struct dvx_dev_grp g = grp_of(scope);
	struct dvx_p2p_amo a = { &dst, word, DVX_P2P_AMO_FADD, 1, 0, &res, 8ull * i };
	struct dvx_p2p_ticket tk;
	int err;

	err = dvx_p2p_dev_fetch_add(g, d, peer, blockIdx.x, &a, 0, &tk);
	if (!err)
		err = dvx_p2p_dev_quiet(g, d, 0);
	status[i] = err;
}

/* every thread gets its own 8-byte piece (i) of the peer's area at @soff into the
 * local area at @doff, at the group's scope, then waits for the group's ticket */
extern "C" __global__ void t_get(struct dvx_p2p_dev d, int peer, struct dvx_p2p_rbuf src,
				 uint64_t soff, struct dvx_p2p_lbuf dst, uint64_t doff,
				 uint32_t scope, int32_t *status)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
	struct dvx_dev_grp g = grp_of(scope);
	struct dvx_p2p_rxfer x = { &src, soff + 8ull * i, &dst, doff + 8ull * i, 8 };
	struct dvx_p2p_ticket tk;
	int err;

	err = dvx_p2p_dev_get(g, d, peer, blockIdx.x, &x, 0, &tk);
	if (!err)
		err = dvx_p2p_dev_wait_local(d, tk, 0);
	status[i] = err;
}

/*
 * compare-swap as a lock by every block: thread 0 of each block takes the peer's lock
 * word (@lock, 0 -> block + 1) by compare-swap, reads the peer's count (@cnt, in its
 * readable data) with a get, writes count + 1 back with put_value, releases the lock
 * with put_value 0, @rounds times. The old values land in @res (host memory the GPU
 * reads at @res_ptr): word 2 * block (compare-swap), the get into @scratch/@scr_ptr
 * at word block. The count ends at blocks * rounds only if the lock excluded.
 */
extern "C" __global__ void t_lock(struct dvx_p2p_dev d, int peer, struct dvx_p2p_rbuf sig,
				  uint64_t lock, struct dvx_p2p_rbuf data, uint64_t cnt,
				  struct dvx_p2p_lbuf res, const uint64_t *res_ptr,
				  struct dvx_p2p_lbuf scratch, uint64_t scr_off,
				  const uint64_t *scr_ptr, uint32_t rounds, int32_t *status)
{
	struct dvx_dev_grp g = dvx_dev_thread();
	uint32_t b = blockIdx.x, ch = b, k;
	struct dvx_p2p_ticket tk;
	int err = 0;

	if (threadIdx.x)
		return;
	for (k = 0; k < rounds && !err; k++) {
		struct dvx_p2p_amo cs = { &sig, lock, DVX_P2P_AMO_CSWAP, b + 1, 0, &res, 16ull * b };
		struct dvx_p2p_rxfer gx = { &data, cnt, &scratch, scr_off + 8ull * b, 8 };
		uint64_t v;

		for (;;) {	/* take the lock */
			err = dvx_p2p_dev_compare_swap(g, d, peer, ch, &cs, 0, &tk);
			if (!err)
				err = dvx_p2p_dev_wait_local(d, tk, 0);
			if (err || dvx_p2p_dev_read_signal(res_ptr + 2 * b) == 0)
				break;
		}
		if (!err)
			err = dvx_p2p_dev_get(g, d, peer, ch, &gx, 0, &tk);
		if (!err)
			err = dvx_p2p_dev_wait_local(d, tk, 0);
		if (err)
			break;
		v = dvx_p2p_dev_read_signal(scr_ptr + b) + 1;
		{
			struct dvx_p2p_amo pv = { &data, cnt, DVX_P2P_AMO_SET, v, 0, nullptr, 0 };
			struct dvx_p2p_amo un = { &sig, lock, DVX_P2P_AMO_SET, 0, 0, nullptr, 0 };

			err = dvx_p2p_dev_put_value(g, d, peer, ch, &pv, 0, &tk);
			if (!err)
				err = dvx_p2p_dev_wait_local(d, tk, 0);
			if (!err)
				err = dvx_p2p_dev_put_value(g, d, peer, ch, &un, 0, &tk);
			if (!err)
				err = dvx_p2p_dev_wait_local(d, tk, 0);
		}
	}
	status[b] = err;
}

/*
 * refusals before posting: every thread gets its own 8-byte piece as t_get does, but
 * from @bad (the peer's buffer described with its rights known and no remote read) when
 * its lane in the warp is @badlane (32: every thread); at warp scope a refused member
 * gets -EPERM and the others of its warp -ECANCELED, nothing posted for the warp. The
 * host checks the codes and that no destination byte changed.
 */
extern "C" __global__ void t_get_perm(struct dvx_p2p_dev d, int peer, struct dvx_p2p_rbuf good,
				      struct dvx_p2p_rbuf bad, uint32_t badlane, uint64_t soff,
				      struct dvx_p2p_lbuf dst, uint64_t doff, uint32_t scope,
				      int32_t *status)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
	int refused = badlane >= 32 || threadIdx.x % 32 == badlane;
	struct dvx_p2p_rxfer x = { refused ? &bad : &good, soff + 8ull * i, &dst, doff + 8ull * i, 8 };
	struct dvx_p2p_ticket tk;
	int err;

	err = dvx_p2p_dev_get(grp_of(scope), d, peer, blockIdx.x, &x, 0, &tk);
	if (!err)
		err = dvx_p2p_dev_wait_local(d, tk, 0);
	status[i] = err;
}

/* the device reset of the peer's signal word, then a timeout: a wait for a word that
 * never moves, bounded at @tmo, is -ETIMEDOUT */
extern "C" __global__ void t_reset(struct dvx_p2p_dev d, int peer, struct dvx_p2p_rbuf sig,
				   uint64_t sigoff, const uint64_t *still, uint64_t tmo,
				   int32_t *status)
{
	struct dvx_p2p_ticket tk;
	int err;

	err = dvx_p2p_dev_reset_signal(dvx_dev_warp(), d, peer, 0, &sig, sigoff, 0, &tk);
	if (!err)
		err = dvx_p2p_dev_wait_local(d, tk, 0);
	status[threadIdx.x] = err;
	if (threadIdx.x == 0)
		status[32] = dvx_p2p_dev_wait_signal(still, DVX_CMP_EQ, 7, tmo);
}

/*
 * a lane failed and recovered under a running kernel, twice (one thread): @rounds puts
 * of 8 bytes (word r of @src at @soff, filled by the host, into the peer's @dst at word
 * r) with signal @sigoff += 1, every odd round also raising counter @ctroff of @ctr
 * (put_signal_counter), each waited for. At rounds @fail_at and 2 * @fail_at it first
 * puts with @bad (the peer's buffer under a wrong key): the wait answers the lane's
 * error, a put on the failed lane answers the same; it asks the host for a recovery
 * (@flag[k] = 1, host memory), waits for the lane (dvx_p2p_dev_wait_lane()) and checks
 * the tickets: the bad put's keeps answering the error (the recovery gave it up), the
 * last good round's 0; after the second, the first bad put's answers -ESTALE (from
 * before the recovery before the last). status[0]: the first error; [1], [2]: the bad
 * put's wait and the put on the failed lane, first time; [3]: the bad ticket after the
 * first recovery; [4]: the first bad ticket after the second.
 */
extern "C" __global__ void t_recover(struct dvx_p2p_dev d, int peer, struct dvx_p2p_lbuf src,
				     uint64_t soff, struct dvx_p2p_rbuf dst, uint64_t doff,
				     struct dvx_p2p_rbuf bad, struct dvx_p2p_rbuf sig, uint64_t sigoff,
				     struct dvx_p2p_lbuf ctr, uint64_t ctroff, uint32_t rounds,
				     uint32_t fail_at, volatile uint64_t *flag, int32_t *status)
{
	struct dvx_dev_grp g = dvx_dev_thread();
	struct dvx_p2p_notify n = { &sig, sigoff, 1, nullptr, 0, 0 };
	struct dvx_p2p_notify nc = { &sig, sigoff, 1, &ctr, ctroff, 0 };
	struct dvx_p2p_ticket tk, last = { 0, 0, 0 }, tbad, first_bad = { 0, 0, 0 };
	uint32_t r, k = 0;
	int err = 0, e;

	for (r = 0; r < rounds && !err; r++) {
		struct dvx_p2p_xfer x = { &src, soff + 8ull * r, &dst, doff + 8ull * r, 8 };

		if (fail_at && r && r % fail_at == 0 && k < 2) {
			struct dvx_p2p_xfer xb = { &src, soff, &bad, doff, 8 };

			err = dvx_p2p_dev_put(g, d, peer, 0, &xb, 0, &tbad);
			if (err)
				break;
			e = dvx_p2p_dev_wait_local(d, tbad, 0);
			if (!e) {
				err = -EILSEQ;	/* a bad key's put must not complete */
				break;
			}
			if (!k)
				status[1] = e;
			e = dvx_p2p_dev_put(g, d, peer, 0, &x, 0, &tk);
			e = e ? e : dvx_p2p_dev_wait_local(d, tk, 0);
			if (!k)
				status[2] = e;
			if (!e) {
				err = -EILSEQ;
				break;
			}
			__threadfence_system();
			flag[k] = 1;
			__threadfence_system();
			err = dvx_p2p_dev_wait_lane(d, peer, 0, 60000000000ull);
			if (err)
				break;
			e = dvx_p2p_dev_wait_local(d, tbad, 0);
			if (!k)
				status[3] = e;
			if (!e || dvx_p2p_dev_wait_local(d, last, 0)) {
				err = -ENOTRECOVERABLE;
				break;
			}
			if (k)
				status[4] = dvx_p2p_dev_wait_local(d, first_bad, 0);
			else
				first_bad = tbad;
			k++;
		}
		err = (r & 1) ? dvx_p2p_dev_put_signal_counter(g, d, peer, 0, &x, &nc, 0, &tk) :
				dvx_p2p_dev_put_signal(g, d, peer, 0, &x, &n, 0, &tk);
		if (!err)
			err = dvx_p2p_dev_wait_local(d, tk, 0);
		last = tk;
	}
	status[0] = err;
}

/*
 * contention at the recovery gate: every thread puts @rounds words through the one
 * gated lane (word w = i * @rounds + r of @src at @soff into the peer's @dst at @doff,
 * signal @sigoff += 1) while the host recovers the lane again and again: healthy (the
 * gate closes, every thread inside leaves, both ends find nothing failed, the gate
 * opens) and once after a real failure, thread 0's put under a wrong key at round
 * @rounds / 2 (it then raises @flag[0], host memory). Every answer is taken at its
 * word: a refused post (-EAGAIN, or the failed lane's error) posted nothing, so the
 * thread waits for the lane and posts again; a ticket's wait that answers -EAGAIN or
 * an error is asked again once the lane is back (0: it landed; an error or -ESTALE:
 * the recovery gave it up, so it is posted again). So the peer's signal ends at
 * exactly threads x @rounds only if no ticket lied. stats[3i ..]: the -EAGAINs and the
 * lane errors thread i was answered, and its puts a recovery gave up (posted again;
 * host memory); status[i]: 0 or what broke.
 */
extern "C" __global__ void t_contend(struct dvx_p2p_dev d, int peer, struct dvx_p2p_lbuf src,
				     uint64_t soff, struct dvx_p2p_rbuf dst, uint64_t doff,
				     struct dvx_p2p_rbuf bad, struct dvx_p2p_rbuf sig, uint64_t sigoff,
				     uint32_t rounds, volatile uint64_t *flag, uint64_t *stats,
				     int32_t *status)
{
	const uint64_t lane_tmo = 60000000000ull;
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x, r, tries;
	struct dvx_dev_grp g = dvx_dev_thread();
	struct dvx_p2p_notify n = { &sig, sigoff, 1, nullptr, 0, 0 };
	uint64_t eagain = 0, lerr = 0, lost = 0;
	int err = 0, e;

	for (r = 0; r < rounds && !err; r++) {
		uint64_t w = (uint64_t)i * rounds + r;
		struct dvx_p2p_xfer x = { &src, soff + 8ull * w, &dst, doff + 8ull * w, 8 };
		struct dvx_p2p_ticket tk;
		int landed = 0;

		if (i == 0 && r == rounds / 2) {
			struct dvx_p2p_xfer xb = { &src, soff, &bad, doff, 8 };

			/* the bad put, until its own ticket fails (a healthy recovery may
			 * refuse or interrupt it first) */
			for (tries = 0, e = -EAGAIN; e == -EAGAIN && tries < 1000; tries++) {
				e = dvx_p2p_dev_put(g, d, peer, 0, &xb, 0, &tk);
				if (!e)
					while ((e = dvx_p2p_dev_wait_local(d, tk, 0)) == -EAGAIN &&
					       !dvx_p2p_dev_wait_lane(d, peer, 0, lane_tmo))
						;
				else if (e == -EAGAIN)
					(void)dvx_p2p_dev_wait_lane(d, peer, 0, lane_tmo);
			}
			if (!e || e == -EAGAIN) {
				err = e ? -ELOOP : -EILSEQ;	/* a bad key's put must fail */
				break;
			}
			__threadfence_system();
			flag[0] = 1;
			__threadfence_system();
		}
		for (tries = 0; !landed && !err; tries++) {
			if (tries > 1000) {
				err = -ELOOP;
				break;
			}
			e = dvx_p2p_dev_put_signal(g, d, peer, 0, &x, &n, 0, &tk);
			if (e) {
				/* refused: nothing posted */
				if (e == -EAGAIN)
					eagain++;
				else
					lerr++;
				err = dvx_p2p_dev_wait_lane(d, peer, 0, lane_tmo);
				continue;
			}
			for (;;) {
				e = dvx_p2p_dev_wait_local(d, tk, 0);
				if (!e) {
					landed = 1;
					break;
				}
				if (e == -ETIMEDOUT) {
					err = e;
					break;
				}
				if (e == -EAGAIN)
					eagain++;
				else
					lerr++;
				err = dvx_p2p_dev_wait_lane(d, peer, 0, lane_tmo);
				if (err)
					break;
				/* the lane is back: the ticket's verdict */
				e = dvx_p2p_dev_wait_local(d, tk, 0);
				if (!e) {
					landed = 1;
					break;
				}
				if (e == -EAGAIN)
					continue;	/* another recovery: ask again */
				if (e == -ETIMEDOUT || e == -ESTALE) {
					err = e;	/* its fate unknown: the test cannot count it */
					break;
				}
				lost++;			/* given up: post it again */
				break;
			}
		}
	}
	stats[3 * i] = eagain;
	stats[3 * i + 1] = lerr;
	stats[3 * i + 2] = lost;
	status[i] = err;
}

/*
 * a device thread that counts itself in at the lane's gate and does not leave (one
 * thread): it tells the host (@flag[0] = 1) and stays inside until @flag[1] (the host
 * gave up waiting for it: its recovery must answer -EAGAIN and open the gate again);
 * then it leaves and the lane serves a put_signal. status[0]: the count-in, [1]: the
 * stay, [2]: the put after it.
 */
extern "C" __global__ void t_stuck(struct dvx_p2p_dev d, int peer, struct dvx_p2p_lbuf src,
				   uint64_t soff, struct dvx_p2p_rbuf dst, uint64_t doff,
				   struct dvx_p2p_rbuf sig, uint64_t sigoff, volatile uint64_t *flag,
				   int32_t *status)
{
	const struct dvx_p2p_dev_lane *l = dvx_p2p_dev_lane_of(d, peer, 0);
	struct dvx_p2p_notify n = { &sig, sigoff, 1, nullptr, 0, 0 };
	struct dvx_p2p_xfer x = { &src, soff, &dst, doff, 8 };
	struct dvx_p2p_ticket tk;
	uint64_t t0 = dvx_dev_now_ns();
	int e = dvx_p2p_dev_q_enter(l->main);

	status[0] = e;
	if (e)
		return;
	__threadfence_system();
	flag[0] = 1;
	__threadfence_system();
	while (!flag[1] && dvx_dev_now_ns() - t0 < 60000000000ull)
		;
	status[1] = flag[1] ? 0 : -ETIMEDOUT;
	dvx_p2p_dev_q_leave(l->main);
	e = dvx_p2p_dev_put_signal(dvx_dev_thread(), d, peer, 0, &x, &n, 0, &tk);
	status[2] = e ? e : dvx_p2p_dev_wait_local(d, tk, 0);
}

#include <dvx/nvl/dev.cuh>

/* NVL: every thread fetch-adds 1 to @word (GPU memory standing for a peer's mapped
 * word) at the group's scope, its old value into old[i] */
extern "C" __global__ void t_nvl_fadd(uint64_t *word, uint64_t *old, uint32_t scope,
				      int32_t *status)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	status[i] = dvx_nvl_dev_amo(grp_of(scope), word, DVX_NVL_AMO_FADD, 1, 0, old + i);
	if (!status[i])
		status[i] = dvx_nvl_dev_quiet(grp_of(scope));
}

/* NVL: compare-swap as a lock by every block around a plain (non-atomic) increment of
 * *@cnt, @rounds times per block; put_value releases it */
extern "C" __global__ void t_nvl_lock(uint64_t *lock, volatile uint64_t *cnt, uint32_t rounds,
				      int32_t *status)
{
	struct dvx_dev_grp g = dvx_dev_thread();
	uint32_t k;
	int err = 0;

	if (threadIdx.x)
		return;
	for (k = 0; k < rounds && !err; k++) {
		uint64_t old = 1;

		while (!err && old != 0)
			err = dvx_nvl_dev_amo(g, lock, DVX_NVL_AMO_CSWAP, blockIdx.x + 1, 0, &old);
		__threadfence_system();
		*cnt = *cnt + 1;
		__threadfence_system();
		if (!err)
			err = dvx_nvl_dev_amo(g, lock, DVX_NVL_AMO_SET, 0, 0, nullptr);
	}
	status[blockIdx.x] = err;
}
