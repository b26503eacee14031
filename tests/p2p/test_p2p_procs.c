// SPDX-License-Identifier: MIT
/*
 * The P2P transport with its ranks as processes: every rank a process with its own
 * software NIC, the NICs joined by the wire (docs/sim-wire.md), the bootstrap the sockets
 * adapter (forked ranks) or MPI (under mpirun). tests/lib/p2p_world.c runs the ranks.
 *
 * Cases, each as forked processes:
 *  - rounds of put_signal around a ring of 4 ranks (8 B, 4 KiB, 64 KiB), every byte
 *    checked by its receiver, every signal exact;
 *  - faults on the wire between 2 ranks: every 3rd request of each QP dropped and every
 *    3rd answer lost (the traffic goes on, exact); then rank 0's link down: its put fails
 *    with retry exhausted (-EHOSTUNREACH), both ends recover the lane, traffic again;
 *  - a killed process: 4 ranks, rank 3 killed with SIGKILL after a first round; every
 *    survivor's put to it fails with retry exhausted within the bounded retries (never
 *    a hang) and the survivors go on around a ring of three;
 *  - the soak, short: tests/soak's binary as 4 forked ranks, SOAK_KILL_ROUNDS rounds with
 *    its seeded faults, then its last phase: a rank killed, every survivor's lanes to
 *    it failed, one more round among the survivors checked (`make check-procs` runs 60
 *    rounds, and under mpirun too).
 * And the same group as 4 MPI processes (scripts/mpirun.sh, with the launcher's recovery
 * from a dead process turned on for the killed one), when mpirun is here: that case
 * launches this binary with --rank, whose processes run the group themselves (their
 * output goes to a log, printed when they fail). `make check-procs` runs more (docs/testing.md).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "../lib/dvx_test.h"
#include "../lib/p2p_world.h"

#include <dvx/bootstrap/bootstrap.h>

#ifndef DVX_SRCTREE
#error "DVX_SRCTREE: the source tree, for scripts/mpirun.sh"
#endif

#define T_OUT (20 * W_SEC)
/* the wire's time-out: 4 ranks, each with a spinning waiter and a progress thread, on 2
 * cores beside other work can leave a request unanswered for tens of milliseconds, so
 * not much less than the wire's default; a dead peer is found within 8 of them */
#define RETRY_NS (100 * W_MS)
/* the short soak's rounds: the seed's first ones have every kind of fault (about 5 s) */
#define SOAK_KILL_ROUNDS 6

struct ring_arg {
	uint64_t len;
	uint32_t rounds;
	uint32_t slot;		/* signal slots @slot (data) and @slot + 1 (ready) */
	int nmembers;
	int members[W_MAX_RANKS];
};

static int ring_pos(const struct ring_arg *a, int rank)
{
	int i;

	for (i = 0; i < a->nmembers; i++)
		if (a->members[i] == rank)
			return i;
	return -1;
}

/*
 * @rounds rounds around the ring of @a's members, from round @first: each member puts
 * @len bytes into its successor with a signal (slot @slot), waits for its predecessor's,
 * checks the bytes, and tells the predecessor its area is free again (slot @slot + 1).
 * Signals are cumulative, so the same ring can go on where it left off (another ring
 * takes other slots).
 */
#define RING_DONE_TAG 9u		/* small: the MPI bootstrap maps tags onto MPI's */

static void ring(struct wrank *r, const struct ring_arg *a, uint32_t first)
{
	int pos = ring_pos(a, r->rank);
	int next = a->members[(pos + 1) % a->nmembers];
	int prev = a->members[(pos + a->nmembers - 1) % a->nmembers];
	struct dvx_p2p_ticket tk;
	uint32_t k;
	uint64_t i;
	uint8_t *src;

	for (k = first; k < first + a->rounds; k++) {
		if (k > 0)
			W_OK(r, dvx_p2p_wait_signal(&r->t, &r->sig_l, wsig_off(r, next, a->slot + 1),
						    DVX_CMP_GE, k, T_OUT, NULL));
		src = r->data + wsend_off(r, next);
		for (i = 0; i < a->len; i++)
			src[i] = wpat(r->rank, next, k, i);
		W_OK(r, dvx_p2p_put_signal(&r->t, next, 0,
					   &(struct dvx_p2p_xfer){ &r->data_l, wsend_off(r, next),
								   &r->data_r[next],
								   wrecv_off(r, r->rank), a->len },
					   &(struct dvx_p2p_notify){ &r->sig_r[next],
								     wsig_off(r, r->rank, a->slot),
								     1, NULL, 0, 0 },
					   T_OUT, &tk));
		W_OK(r, dvx_p2p_wait_local(&r->t, &tk, T_OUT, NULL));
		W_OK(r, dvx_p2p_wait_signal(&r->t, &r->sig_l, wsig_off(r, prev, a->slot),
					    DVX_CMP_GE, k + 1, T_OUT, NULL));
		W_CHECK(r, dvx_p2p_read_signal(&r->sig_l, wsig_off(r, prev, a->slot)) == k + 1,
			"round %u: signal from %d is %llu", k, prev, (unsigned long long)
			dvx_p2p_read_signal(&r->sig_l, wsig_off(r, prev, a->slot)));
		for (i = 0; i < a->len; i++)
			W_CHECK(r, wrecv(r, prev)[i] == wpat(prev, r->rank, k, i),
				"round %u: byte %llu from %d", k, (unsigned long long)i, prev);
		W_OK(r, dvx_p2p_signal(&r->t, prev, 0,
				       &(struct dvx_p2p_notify){ &r->sig_r[prev],
								 wsig_off(r, r->rank, a->slot + 1),
								 1, NULL, 0, 0 },
				       T_OUT, &tk));
		/* nothing left in flight: a body that ends alone has no closing flush */
		W_OK(r, dvx_p2p_wait_local(&r->t, &tk, T_OUT, NULL));
	}
	/* and nothing coming: the successor's last ready signal is here before we go */
	W_OK(r, dvx_p2p_wait_signal(&r->t, &r->sig_l, wsig_off(r, next, a->slot + 1), DVX_CMP_GE,
				    first + a->rounds, T_OUT, NULL));
	/* nor on its way back: that signal's answer reached the successor (its wait_local
	 * above), which says so; a rank that left as soon as the signal landed could take
	 * the answer with it, and the successor's wait would fail as for a dead peer */
	W_OK(r, dvx_bootstrap_send(&r->bs, prev, RING_DONE_TAG, NULL, 0, T_OUT));
	W_OK(r, dvx_bootstrap_recv(&r->bs, next, RING_DONE_TAG, NULL, 0, T_OUT));
}

static void ring_all(struct ring_arg *a, int n, uint64_t len, uint32_t rounds)
{
	int i;

	a->len = len;
	a->rounds = rounds;
	a->slot = 0;
	a->nmembers = n;
	for (i = 0; i < n; i++)
		a->members[i] = i;
}

static void body_ring(struct wrank *r)
{
	ring(r, r->user, 0);
}

static void test_ring_4(void **s)
{
	static const uint64_t lens[] = { 8, 4096, 64 << 10 };
	struct world_cfg c;
	struct ring_arg a;
	size_t i;

	(void)s;
	world_cfg_default(&c);
	c.nranks = 4;
	if (!c.procs && world_mode(&c) == WORLD_THREADS)
		c.procs = WORLD_FORK;
	c.wire_retry_ns = RETRY_NS;
	for (i = 0; i < DVX_ARRAY_SIZE(lens); i++) {
		ring_all(&a, 4, lens[i], 3);
		assert_int_equal(world_run(&c, body_ring, &a), 0);
	}
}

/* the ring with every rank's data buffer in device memory behind its own process's DMA
 * callbacks: puts gathered and placed through them across the wire */
static void test_ring_dev_2(void **s)
{
	static const uint64_t lens[] = { 8, 64 << 10 };
	struct world_cfg c;
	struct ring_arg a;
	size_t i;

	(void)s;
	world_cfg_default(&c);
	c.nranks = 2;
	c.dev_data = 1;
	if (!c.procs && world_mode(&c) == WORLD_THREADS)
		c.procs = WORLD_FORK;
	c.wire_retry_ns = RETRY_NS;
	for (i = 0; i < DVX_ARRAY_SIZE(lens); i++) {
		ring_all(&a, 2, lens[i], 3);
		assert_int_equal(world_run(&c, body_ring, &a), 0);
	}
}

/* drops and lost answers on both ends, then rank 0's link down and a recovery */
static void body_faults(struct wrank *r)
{
	struct dvx_sim_faults f = { .drop_every = 3 };
	struct dvx_sim_wire_stats ws;
	struct ring_arg a;
	struct dvx_p2p_ticket tk;
	int peer = r->rank ^ 1, e;

	ring_all(&a, 2, 4096, 6);
	dvx_sim_set_faults(wfab(r), &f);
	ring(r, &a, 0);
	dvx_sim_set_faults(wfab(r), NULL);
	W_OK(r, dvx_sim_wire_get_stats(wfab(r), &ws));
	W_CHECK(r, ws.retransmits > 0 && ws.duplicates > 0,
		"drops without retransmissions (%llu) or duplicates (%llu)",
		(unsigned long long)ws.retransmits, (unsigned long long)ws.duplicates);
	/* nothing of either rank in flight when the link goes down: only rank 0's put */
	W_OK(r, dvx_p2p_flush(&r->t, 0, T_OUT, NULL));
	W_OK(r, dvx_bootstrap_barrier(&r->bs, T_OUT));
	if (r->rank == 0) {
		f.drop_every = 0;
		f.link_down = 1;
		dvx_sim_set_faults(wfab(r), &f);
		W_OK(r, dvx_p2p_put(&r->t, peer, 0,
				    &(struct dvx_p2p_xfer){ &r->data_l, wsend_off(r, peer),
							    &r->data_r[peer], wrecv_off(r, r->rank),
							    64 },
				    T_OUT, &tk));
		e = dvx_p2p_wait_local(&r->t, &tk, T_OUT, NULL);
		W_CHECK(r, e == -EHOSTUNREACH, "put with the link down: %d", e);
		dvx_sim_set_faults(wfab(r), NULL);
	}
	W_OK(r, dvx_bootstrap_barrier(&r->bs, T_OUT));
	W_OK(r, dvx_p2p_lane_recover(&r->t, peer, 0, T_OUT));
	a.rounds = 2;
	ring(r, &a, 6);
}

static void test_faults_2(void **s)
{
	struct world_cfg c;

	(void)s;
	world_cfg_default(&c);
	if (world_mode(&c) == WORLD_THREADS)
		c.procs = WORLD_FORK;
	c.wire_retry_ns = RETRY_NS;
	assert_int_equal(world_run(&c, body_faults, NULL), 0);
}

/* rank 3 dies after a first round; the others find it gone and go on without it */
static void body_victim(struct wrank *r)
{
	struct ring_arg a;
	struct dvx_p2p_ticket tk;
	struct dvx_p2p_lane_health h;
	int victim = r->w->cfg.victim - 1, e, k;
	time_t t0;

	ring_all(&a, r->w->cfg.nranks, 4096, 1);
	ring(r, &a, 0);
	if (r->fail_line)
		return;
	/* a collective that a rank leaves by dying fails on the others (the sockets
	 * bootstrap): the victim dies only once each survivor said it is past this point */
	r->alone = 1;
	if (r->rank == victim) {
		for (k = 0; k < r->w->cfg.nranks; k++)
			if (k != victim)
				W_OK(r, dvx_bootstrap_recv(&r->bs, k, 7, NULL, 0, T_OUT));
		fflush(NULL);
		kill(getpid(), SIGKILL);
	}
	W_OK(r, dvx_bootstrap_send(&r->bs, victim, 7, NULL, 0, T_OUT));
	/* its end of the wire closes with it: a put is lost, retried, then fails (the
	 * first ones may still find it alive: it dies when the signal lands) */
	t0 = time(NULL);
	for (;;) {
		W_OK(r, dvx_p2p_put(&r->t, victim, 0,
				    &(struct dvx_p2p_xfer){ &r->data_l, wsend_off(r, victim),
							    &r->data_r[victim],
							    wrecv_off(r, r->rank), 64 },
				    T_OUT, &tk));
		e = dvx_p2p_wait_local(&r->t, &tk, T_OUT, NULL);
		if (e)
			break;
		/* a bound, not a measure: it dies once every survivor got this far */
		W_CHECK(r, time(NULL) - t0 < (time_t)(T_OUT / W_SEC), "the dead rank still answers");
	}
	W_CHECK(r, e == -EHOSTUNREACH, "put to the dead rank: %d", e);
	W_OK(r, dvx_p2p_lane_health(&r->t, victim, 0, &h));
	W_CHECK(r, h.state == DVX_P2P_Q_FAILED, "lane to the dead rank: state %u", h.state);
	/* the survivors' ring, on signal slots of its own */
	a.nmembers--;
	a.rounds = 2;
	a.slot = 2;
	ring(r, &a, 0);
}

static void test_victim_4(void **s)
{
	struct world_cfg c;

	(void)s;
	world_cfg_default(&c);
	c.nranks = 4;
	if (world_mode(&c) == WORLD_THREADS)
		c.procs = WORLD_FORK;
	c.wire_retry_ns = RETRY_NS;
	c.victim = 4;
	assert_int_equal(world_run(&c, body_victim, NULL), 0);
}

static const struct CMUnitTest rank_tests[] = {
	cmocka_unit_test(test_ring_4),
	cmocka_unit_test(test_faults_2),
	cmocka_unit_test(test_victim_4),
};

/* whether the processes' log reports a failure (cmocka's or a rank's) */
static int log_failed(const char *path)
{
	char line[512];
	FILE *f = fopen(path, "r");
	int bad = 0, passed = 0;

	if (!f)
		return 1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "[  FAILED  ]", 12) || strstr(line, " failed at line "))
			bad = 1;
		if (!strncmp(line, "[  PASSED  ]", 12))
			passed++;
	}
	fclose(f);
	return bad || passed < 3;	/* every survivor's summary */
}

/*
 * The soak (tests/soak) as 4 forked ranks, short, with its kill at the end: its binary,
 * soak-test, sits beside this one. It checks itself; here its exit status, cmocka's line
 * and the three survivors' lines decide. Its output goes to a log, shown when it fails.
 */
static void test_soak_kill_4(void **s)
{
	char self[PATH_MAX], log[64], cmd[3 * PATH_MAX + 256], line[512], *slash;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int rc, fd, passed = 0, survivors = 0;
	FILE *f;

	(void)s;
	assert_true(n > 0);
	self[n] = 0;
	slash = strrchr(self, '/');
	assert_non_null(slash);
	*slash = 0;
	snprintf(log, sizeof(log), "/tmp/dvx-soak-kill-XXXXXX");
	fd = mkstemp(log);
	assert_true(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "DVX_WORLD_PROCS=1 DVX_SOAK_RANKS=4 DVX_SOAK_ROUNDS=%d "
		 "DVX_SOAK_KILL=1 '%s/soak-test' > %s 2>&1", SOAK_KILL_ROUNDS, self, log);
	fflush(stdout);
	rc = system(cmd);
	f = fopen(log, "r");
	while (f && fgets(line, sizeof(line), f)) {
		passed += !strncmp(line, "[  PASSED  ] 1 test", 19);
		survivors += strstr(line, "killed after round") != NULL;
	}
	if (f)
		fclose(f);
	if (rc || passed != 1 || survivors != 3) {
		print_error("soak: exit %d, %d passed, %d survivors reported\n", rc, passed,
			    survivors);
		snprintf(cmd, sizeof(cmd), "tail -n 60 %s", log);
		if (system(cmd))
			print_error("(no log)\n");
		rc = rc ? rc : -1;
	}
	unlink(log);
	assert_int_equal(rc, 0);
}

/* the same group as 4 MPI processes; their output in a log, shown when one fails. The
 * launcher's recovery mode can exit 0 whatever the processes did: their own words
 * decide (log_failed) */
static void test_mpi_4(void **s)
{
	(void)s;
	assert_int_equal(dvx_test_mpirun_self(DVX_SRCTREE, 4, "DVX_MPI_RECOVERY=1", "--rank", 60,
					      log_failed),
			 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_4),
		cmocka_unit_test(test_ring_dev_2),
		cmocka_unit_test(test_faults_2),
		cmocka_unit_test(test_victim_4),
		cmocka_unit_test(test_soak_kill_4),
		cmocka_unit_test(test_mpi_4),
	};
	const struct CMUnitTest forked[] = {
		cmocka_unit_test(test_ring_4),
		cmocka_unit_test(test_ring_dev_2),
		cmocka_unit_test(test_faults_2),
		cmocka_unit_test(test_victim_4),
		cmocka_unit_test(test_soak_kill_4),
	};
	signal(SIGPIPE, SIG_IGN);
	if (argc > 1 && !strcmp(argv[1], "--rank"))
		world_exit(cmocka_run_group_tests_name("p2p-procs-rank", rank_tests, NULL, NULL));
	/* no mpirun, or dvx built without its MPI adapter (the stand-in answers -ENOSYS
	 * where the adapter refuses NULL with -EINVAL): the forked cases only */
	if (!dvx_test_mpirun_here(DVX_SRCTREE, 1) ||
	    dvx_bootstrap_mpi_init(NULL, NULL, NULL, 0) == -ENOSYS) {
		print_message("no MPI here: the forked cases only\n");
		return cmocka_run_group_tests_name("p2p-procs", forked, NULL, NULL);
	}
	return cmocka_run_group_tests_name("p2p-procs", tests, NULL, NULL);
}
