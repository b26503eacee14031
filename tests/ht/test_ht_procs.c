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

enum job { JOB_PAIR, JOB_ALL };

static const char *const job_name[] = { "pair", "all" };
static const int job_ranks[] = { 2, 4 };

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
		err = job == JOB_PAIR ? pair(&w) : all(&w);
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
		cmocka_unit_test(test_pair_mpi),
		cmocka_unit_test(test_all_mpi),
	};
	const struct CMUnitTest forked_only[] = {
		cmocka_unit_test(test_pair_forked),
		cmocka_unit_test(test_all_forked),
	};
	signal(SIGPIPE, SIG_IGN);
	if (argc > 2 && !strcmp(argv[1], "--mpi"))
		return rank_job(strcmp(argv[2], "pair") ? JOB_ALL : JOB_PAIR, -1, NULL) ? 1 : 0;
	/* no mpirun, or dvx built without its MPI adapter (its stand-in answers -ENOSYS):
	 * the forked cases only */
	if (!dvx_test_mpirun_here(DVX_SRCTREE, 1) ||
	    dvx_bootstrap_mpi_init(NULL, NULL, NULL, 0) == -ENOSYS) {
		print_message("no MPI here: the forked cases only\n");
		return cmocka_run_group_tests_name("ht-procs", forked_only, NULL, NULL);
	}
	return cmocka_run_group_tests_name("ht-procs", tests, NULL, NULL);
}
