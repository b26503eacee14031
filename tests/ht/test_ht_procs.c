// SPDX-License-Identifier: MIT
/*
 * tests/ht/test_ht_procs.c - the host transport with its ranks as processes: each rank a
 * process with its own software NIC, the NICs joined by the wire (docs/sim-wire.md), the
 * bootstrap the sockets adapter (forked ranks) or MPI (under mpirun).
 *
 *  - a pair: 2 processes, standalone transports in both modes over 1 and 4 channels,
 *    both directions at once from 8 B to 16 MiB, every byte checked by its receiver;
 *  - the caches: 4 processes, each asking for its peers in its own random order and
 *    waiting on each before the next, then every rank to every other at once (modes by
 *    pair), every byte checked;
 *  - a recovery: 2 processes, a zero-copy transport over 1 channel; rank 0 streams to
 *    rank 1 and takes its own link down once a quarter has moved: its writes run out of
 *    retries on the wire; once every request of its stream is done it brings the link
 *    back and tells rank 1 (a bootstrap message), and both recover every channel with
 *    dvx_ht_recover() in their own process (rank 1's receives fail with rank 0's
 *    error), then move 4 MiB both ways, every byte checked (forked only; the
 *    copy-based mode and several channels are ht-recover-test's, ranks as threads);
 * as forked processes, and, when mpirun and dvx's MPI adapter are here, the same as MPI
 * processes (scripts/mpirun.sh launches this binary with --mpi JOB; their output goes
 * to a log, shown when they fail).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/dvx_test.h"
#include "hworld.h"

#ifndef DVX_SRCTREE
#error "DVX_SRCTREE: the source tree, for scripts/mpirun.sh"
#endif

#define MIB (1ull << 20)
#define T_OUT (120 * HW_SEC)
#define ALL_SIZE (256u << 10)

enum job { JOB_PAIR, JOB_ALL, JOB_RECOVER };

static const char *const job_name[] = { "pair", "all", "recover" };
static const int job_ranks[] = { 2, 4, 2 };

#define GO_TAG 77u	/* rank 0 to rank 1: the stream failed, recover */

/* both directions of a pair at once, @size bytes each way */
static int both_ways(struct hw *w, struct dvx_ht *t, uint64_t size, uint32_t nch)
{
	static struct hw_side tx, rx;
	struct hw_side *s[2] = { &tx, &rx };
	struct hw_rank *r = &w->r[w->me];
	uint64_t chunk = t->mode == DVX_HT_ZC ? MIB : t->max_chunk, bad = 0;
	int err;

	hw_fill(r->sbuf, size, (uint32_t)(size + (uint64_t)w->me));
	memset(r->rbuf, 0, size);
	hw_side_init(&tx, t, 1, r->sbuf, &r->smr, size, chunk, nch, 0);
	hw_side_init(&rx, t, 0, r->rbuf, &r->rmr, size, chunk, nch, 0);
	err = hw_run(s, 2, T_OUT);
	if (!err && (tx.moved != size || rx.moved != size))
		err = -EMSGSIZE;
	if (!err)
		err = hw_verify(r->rbuf, size, (uint32_t)(size + (uint64_t)t->peer), &bad);
	if (err)
		fprintf(stderr, "rank %d: %llu bytes, %u channel(s), mode %u: %d (at %llu)\n",
			w->me, (unsigned long long)size, nch, t->mode, err,
			(unsigned long long)bad);
	return err;
}

/* rank me of the pair: a transport per mode and channel count, made again each time */
static int pair(struct hw *w)
{
	static const uint32_t modes[2] = { DVX_HT_ZC, DVX_HT_CB }, nchs[2] = { 1, 4 };
	int peer = !w->me, m, k, err = 0;
	uint64_t size;

	for (m = 0; m < 2 && !err; m++)
		for (k = 0; k < 2 && !err; k++) {
			struct dvx_ht_ib_cfg c = { .mode = modes[m], .nchannels = nchs[k],
						   .tag = 100u + (uint32_t)(2 * m + k) };
			struct dvx_ht *t = hw_t(w, w->me, peer);

			err = hw_end(w, w->me, peer, &c);
			if (!err)
				err = dvx_ht_wait_connected(t, T_OUT);
			for (size = 8; !err && size <= 16 * MIB; size *= 8)
				err = both_ways(w, t, size, c.nchannels);
			if (!err)
				err = both_ways(w, t, 16 * MIB, c.nchannels);
			/* nobody finishes its end while the other may still need it */
			if (!err)
				err = dvx_bootstrap_barrier(&w->r[w->me].bs, T_OUT);
			hw_unpair(w, w->me, peer);
		}
	return err;
}

/* whether every request of a side is done */
static int side_idle(const struct hw_side *s)
{
	uint32_t c, k;

	for (c = 0; c < s->nch; c++)
		for (k = 0; k < HW_WIN; k++)
			if (s->req[c][k].state == DVX_HT_RS_BUSY)
				return 0;
	return s->ctrl.state != DVX_HT_RS_BUSY;
}

static int recover(struct hw *w)
{
	static struct hw_side side;
	/* zero-copy over 1 channel: every write of the stream is in flight on the one QP,
	 * so the link down fails one (copy-based, the sender may wait for credits with
	 * nothing in flight and nothing to fail) */
	struct dvx_ht_ib_cfg c = { .mode = DVX_HT_ZC, .nchannels = 1, .tag = 120 };
	struct dvx_bootstrap *bs = &w->r[w->me].bs;
	struct hw_rank *r = &w->r[w->me];
	int peer = !w->me, err, faulted = 0;
	uint64_t size = 8 * MIB, end = hw_now() + 30 * HW_SEC;
	struct dvx_ht *t = hw_t(w, w->me, peer);
	struct dvx_sim_faults f;
	uint32_t ch, go = 1;

	err = hw_end(w, w->me, peer, &c);
	if (!err)
		err = dvx_ht_wait_connected(t, T_OUT);
	if (err)
		goto out;
	hw_fill(r->sbuf, size, 5);
	hw_side_init(&side, t, !w->me, w->me ? r->rbuf : r->sbuf, w->me ? &r->rmr : &r->smr,
		     size, 16384, c.nchannels, 0);
	memset(&f, 0, sizeof(f));
	f.link_down = 1;
	while (!err) {
		if (hw_now() > end) {
			err = -ETIMEDOUT;
			break;
		}
		if (w->me == 0) {
			if (hw_side_step(&side) < 0)
				break;	/* the link down reached a request */
			if (side.phase == 3) {
				err = -EALREADY;	/* the stream ended before the fault */
				break;
			}
			if (!faulted && side.moved >= size / 4) {
				dvx_sim_set_faults(w->fab, &f);
				faulted = 1;
			}
			continue;
		}
		hw_side_step(&side);
		if (!dvx_bootstrap_recv(bs, 0, GO_TAG, &go, sizeof(go), 1000))
			break;
	}
	if (err)
		fprintf(stderr, "rank %d: the stream: %d\n", w->me, err);
	if (!err && w->me == 0) {
		/* every write still in flight fails; then the link comes back */
		while (!side_idle(&side) && hw_now() < end)
			dvx_ht_progress(t);
		dvx_sim_set_faults(w->fab, NULL);
		err = side_idle(&side) ? dvx_bootstrap_send(bs, 1, GO_TAG, &go, sizeof(go), T_OUT)
				       : -ETIMEDOUT;
	}
	for (ch = 0; !err && ch < c.nchannels; ch++) {
		err = dvx_ht_recover(t, ch, T_OUT);
		if (err)
			fprintf(stderr, "rank %d: dvx_ht_recover(%u): %d\n", w->me, ch, err);
		if (!err && dvx_ht_status(t, (int32_t)ch))
			err = -EIO;
	}
	if (!err && !side_idle(&side))
		err = -EBUSY;	/* a request of the failed stream still in flight */
	if (!err)
		err = both_ways(w, t, 4 * MIB, c.nchannels);
	if (!err) {
		struct dvx_ht_ib_stats st;

		dvx_ht_ib_get_stats(&w->r[w->me].ib[peer], &st);
		printf("ht-procs recover: rank %d: %llu channel(s) recovered, %llu dropped\n",
		       w->me, (unsigned long long)st.recoveries,
		       (unsigned long long)st.rec_dropped);
		if (!st.recoveries || st.rec_dropped > 512)
			err = -ENODATA;	/* none, or more dropped than a receive ring holds */
	}
	if (!err)
		err = dvx_bootstrap_barrier(bs, T_OUT);
out:
	if (err)
		fprintf(stderr, "rank %d: recover: %d\n", w->me, err);
	hw_unpair(w, w->me, peer);
	return err;
}

static int all(struct hw *w)
{
	struct dvx_ht_cache_cfg c = { .tmpl = { .nchannels = 2, .sq_depth = 64, .rq_depth = 64,
						.cb_depth = 4, .cb_slot_bytes = 8192 } };
	char why[160] = "";
	int err = hw_caches(w, &c);

	if (!err)
		err = hw_all_to_all(w, w->me, ALL_SIZE, 7, why, sizeof(why));
	if (err)
		fprintf(stderr, "rank %d: %s (%d)\n", w->me, why, err);
	if (!err)
		err = dvx_bootstrap_barrier(&w->r[w->me].bs, T_OUT);
	return err;
}

/* one rank: this process's part of @job; 0 or its error (said on stderr) */
static int rank_job(enum job job, int me, const char *bsaddr)
{
	static struct hw w;
	int err = hw_init_proc(&w, job_ranks[job], me, (job == JOB_ALL ? 4 : 1) * 16 * MIB,
			       bsaddr);

	if (err)
		fprintf(stderr, "rank %d: set-up: %d\n", w.me, err);
	if (!err)
		err = job == JOB_PAIR ? pair(&w) : job == JOB_ALL ? all(&w) : recover(&w);
	if (hw_fini(&w) && !err)
		err = -EBUSY;
	printf("ht-procs %s: rank %d: %s (%d)\n", job_name[job], me < 0 ? w.me : me,
	       err ? "FAILED" : "ok", err);
	fflush(NULL);
	return err;
}

/* the job's ranks as forked processes over the sockets bootstrap: 0, or -EIO when one
 * of them failed */
static int forked(enum job job)
{
	char dir[64], addr[96];
	pid_t pid[HW_MAX];
	int i, st, err = 0;

	snprintf(dir, sizeof(dir), "/tmp/dvx-ht-procs-XXXXXX");
	if (!mkdtemp(dir))
		return -errno;
	snprintf(addr, sizeof(addr), "unix:%s/bs", dir);
	for (i = 0; i < job_ranks[job]; i++) {
		fflush(NULL);
		pid[i] = fork();
		if (!pid[i]) {
			signal(SIGABRT, SIG_DFL);	/* a rank's crash is its own */
			signal(SIGSEGV, SIG_DFL);
			_exit(rank_job(job, i, addr) ? 1 : 0);
		}
	}
	for (i = 0; i < job_ranks[job]; i++)
		if (pid[i] < 0 || waitpid(pid[i], &st, 0) != pid[i] || !WIFEXITED(st) ||
		    WEXITSTATUS(st))
			err = -EIO;
	rmdir(dir);
	return err;
}

static void test_pair_forked(void **state)
{
	(void)state;
	assert_int_equal(forked(JOB_PAIR), 0);
}

static void test_all_forked(void **state)
{
	(void)state;
	assert_int_equal(forked(JOB_ALL), 0);
}

static void test_recover_forked(void **state)
{
	(void)state;
	assert_int_equal(forked(JOB_RECOVER), 0);
}

/* the job as MPI processes under scripts/mpirun.sh; their log shown when it fails */
static void under_mpi(enum job job)
{
	char args[32];

	snprintf(args, sizeof(args), "--mpi %s", job_name[job]);
	assert_int_equal(dvx_test_mpirun_self(DVX_SRCTREE, job_ranks[job], NULL, args, 40, NULL),
			 0);
}

static void test_pair_mpi(void **state)
{
	(void)state;
	under_mpi(JOB_PAIR);
}

static void test_all_mpi(void **state)
{
	(void)state;
	under_mpi(JOB_ALL);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pair_forked),
		cmocka_unit_test(test_all_forked),
		cmocka_unit_test(test_recover_forked),
		cmocka_unit_test(test_pair_mpi),
		cmocka_unit_test(test_all_mpi),
	};
	const struct CMUnitTest forked_only[] = {
		cmocka_unit_test(test_pair_forked),
		cmocka_unit_test(test_all_forked),
		cmocka_unit_test(test_recover_forked),
	};
	signal(SIGPIPE, SIG_IGN);
	if (argc > 2 && !strcmp(argv[1], "--mpi"))
		return rank_job(strcmp(argv[2], "pair") ? JOB_ALL : JOB_PAIR, -1, NULL) ? 1 : 0;
	/* one job as forked processes, by hand: --forked pair|all|recover */
	if (argc > 2 && !strcmp(argv[1], "--forked")) {
		enum job j = !strcmp(argv[2], "pair") ? JOB_PAIR :
			     !strcmp(argv[2], "all") ? JOB_ALL : JOB_RECOVER;

		return forked(j) ? 1 : 0;
	}
	/* no mpirun, or dvx built without its MPI adapter (its stand-in answers -ENOSYS):
	 * the forked cases only */
	if (!dvx_test_mpirun_here(DVX_SRCTREE, 1) ||
	    dvx_bootstrap_mpi_init(NULL, NULL, NULL, 0) == -ENOSYS) {
		print_message("no MPI here: the forked cases only\n");
		return cmocka_run_group_tests_name("ht-procs", forked_only, NULL, NULL);
	}
	return cmocka_run_group_tests_name("ht-procs", tests, NULL, NULL);
}
