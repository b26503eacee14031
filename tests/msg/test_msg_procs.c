// SPDX-License-Identifier: MIT
/*
 * tests/msg/test_msg_procs.c - the messaging layer with its ranks as processes: each rank
 * a process with its own software NIC, the NICs joined by the wire (docs/sim-wire.md),
 * the bootstrap the sockets adapter (forked ranks) or MPI (under mpirun), the listen
 * handles exchanged with an allgather as a collective library would.
 *
 * Cases, as forked processes:
 *  - 2 and 4 ranks with 8 communicators per ordered pair: connect (rank-dependent
 *    order), rounds of traffic (tests/msg/mrank.c: two tagged buffers per irecv, every
 *    byte checked), closes in random order, once with private QPs and once with the
 *    pool (4 groups, depth x2, 1 QP): each rank's digest of what arrived must be the
 *    same both times;
 *  - a killed process: 4 ranks with the pool, rank 3 killed with SIGKILL after a round;
 *    each survivor's receive from it fails (retry exhausted) within bounded time, never
 *    a hang, a round among the survivors is exact, and their closes of comms to the dead
 *    rank end at the close deadline.
 * And the first case as 4 MPI processes (scripts/mpirun.sh) when mpirun is here: that
 * case launches this binary with --mpi, whose processes run it themselves.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/dvx_test.h"
#include "mrank.h"
#include "mworld.h"

#include <dvx/bootstrap/bootstrap.h>
#include <dvx/bootstrap/wire.h>

#ifndef DVX_SRCTREE
#error "DVX_SRCTREE: the source tree, for scripts/mpirun.sh"
#endif

#define T_OUT (60 * MW_SEC)
#define NK 8		/* communicators per ordered pair */

struct pcase {
	int n;
	uint32_t rounds;
	int victim;		/* 0 or rank + 1: that rank is killed after a round */
	const char *bsaddr;	/* the sockets bootstrap's address (forked ranks) */
};

static int bs_barrier(void *arg)
{
	return dvx_bootstrap_barrier(arg, T_OUT);
}

static void cfg_of(struct dvx_msg_cfg *c, int n, int shared, uint64_t timeout_ns)
{
	memset(c, 0, sizeof(*c));
	c->max_comms = (uint32_t)(3 * (n - 1) * NK + 4);
	c->max_pending = 16;
	c->max_reqs = 4;
	c->max_recvs = MR_NB;
	c->timeout_ns = timeout_ns;
	c->conn.retry_count = 7;
	c->conn.rnr_retry = 7;
	c->conn.min_rnr_nak = 12;
	c->conn.ack_timeout = 20;
	c->conn.hop_limit = 255;
	if (shared) {
		c->groups = 4;
		c->depth_mult = 2;
		c->max_shared_sets = (uint32_t)(2 * (n - 1) * 4);
		c->max_private_sets = 2;
	} else {
		c->max_private_sets = (uint32_t)(2 * (n - 1) * NK);
	}
}

/* this process's context over its NIC, connections to every other rank; 0 or an error
 * (printed) */
static int ctx_up(struct mw_rank *x, struct mrank *r, struct dvx_bootstrap *bs,
		  const struct dvx_msg_cfg *cfg)
{
	struct dvx_msg_cfg c = *cfg;
	struct dvx_mem_req s, f, g;
	struct dvx_mr_cfg ma;
	struct dvx_msg_handle *all = NULL, *mine = NULL;
	int n = r->n, q, k, err;
	size_t per = (size_t)n * NK;

	c.nnics = 1;
	c.nics[0] = &x->nic;
	err = dvx_msg_mem_req(&c, &s, &f, &g);
	if (err)
		return err;
	x->state = aligned_alloc(64, (s.bytes + 63) & ~63ull);
	x->fifo = aligned_alloc(4096, (f.bytes + 4095) & ~4095ull);
	x->rings = aligned_alloc(4096, (g.bytes + 4095) & ~4095ull);
	if (!x->state || !x->fifo || !x->rings)
		return -ENOMEM;
	err = dvx_msg_init(&x->m, &c, x->state, s.bytes, x->fifo, f.bytes, x->rings, g.bytes);
	if (err)
		return err;
	memset(&ma, 0, sizeof(ma));
	ma.addr = x->buf;
	ma.len = mr_buf_bytes(n, NK);
	err = dvx_msg_reg_mr(&x->m, 0, &ma, &x->mr);
	if (err)
		return err;
	r->m = &x->m;
	r->mr = &x->mr;
	err = mr_listen(r);
	if (err)
		return err;
	/* every rank's handles for every rank, in one allgather */
	mine = calloc(per, sizeof(*mine));
	all = calloc(per * (size_t)n, sizeof(*all));
	if (!mine || !all) {
		err = -ENOMEM;
		goto out;
	}
	for (q = 0; q < n; q++)
		for (k = 0; k < NK; k++)
			mine[q * NK + k] = r->hout[q][k];
	err = dvx_bootstrap_allgather(bs, mine, all, per * sizeof(*mine), T_OUT);
	if (err)
		goto out;
	for (q = 0; q < n; q++)
		for (k = 0; q != r->me && k < NK; k++)
			r->hin[q][k] = all[(size_t)q * per + (size_t)r->me * NK + (size_t)k];
	err = mr_connect(r);
	if (!err)
		err = dvx_bootstrap_barrier(bs, T_OUT);
out:
	free(mine);
	free(all);
	return err;
}

static void ctx_down(struct mw_rank *x, struct mrank *r)
{
	uint64_t end = mw_now() + 2 * T_OUT;
	struct dvx_msg_stats st;

	mr_close_all(r, 0);
	/* the closes finish as the peers' markers come in (or at their deadline) */
	do {
		dvx_msg_progress(&x->m);
		dvx_msg_get_stats(&x->m, &st);
	} while (st.closing && mw_now() < end);
	if (x->mr.live == DVX_LIVE)
		dvx_msg_dereg_mr(&x->m, &x->mr);
	if (x->m.live == DVX_LIVE)
		dvx_msg_fini(&x->m);
	free(x->state);
	free(x->fifo);
	free(x->rings);
	x->state = x->fifo = x->rings = NULL;
}

/* the killed-process case after the connections: a round, the victim dies, the
 * survivors see it and go on among themselves */
static struct dvx_sim_fabric *g_fab;
static int victim_case(struct mw_rank *x, struct mrank *r, struct dvx_bootstrap *bs, int victim)
{
	void *bufs[MR_NB] = { x->buf, x->buf + 4096 };
	size_t sz[MR_NB] = { 64, 64 };
	uint32_t tags[MR_NB] = { 0, 1 };
	struct dvx_mr *mrs[MR_NB] = { &x->mr, &x->mr };
	struct dvx_msg_req *q = NULL;
	uint64_t end;
	int err, done = 0;

	err = mr_rounds(r, 1);
	if (err)
		return err;
	/* the victim dies once every survivor is past the round's barrier (a survivor still
	 * inside it would see the group break) */
	if (r->me == victim) {
		int p;
		uint8_t past;

		for (p = 0; p < r->n; p++)
			if (p != victim && dvx_bootstrap_recv(bs, p, 77, &past, 1, T_OUT))
				return -EIO;
		fflush(NULL);
		raise(SIGKILL);
	} else {
		uint8_t past = 1;

		err = dvx_bootstrap_send(bs, victim, 77, &past, 1, T_OUT);
		if (err)
			return err;
	}
	r->dead[victim] = 1;
	r->barrier = NULL;	/* the group's collectives need the dead rank */
	/* a clear-to-send that reached the victim before it died would just wait for data
	 * that never comes (a peer that dies while this end only waits is not seen: the
	 * caller's deadline covers that, docs/msg.md): so once the wire saw it go, a receive
	 * from it, whose clear-to-send meets no responder */
	end = mw_now() + T_OUT;
	for (;;) {
		struct dvx_sim_wire_stats ws;

		if (!dvx_sim_wire_get_stats(g_fab, &ws) && ws.peers_down)
			break;
		if (mw_now() > end) {
			MR_FAIL(r, "the wire never saw the dead rank go");
			return -ETIMEDOUT;
		}
		usleep(1000);
	}
	do
		err = dvx_msg_irecv(r->rc[victim][0], MR_NB, bufs, sz, tags, mrs, &q);
	while (!err && !q && mw_now() < end);
	if (!err && q) {
		do
			err = dvx_msg_test(q, &done, NULL);
		while (!err && !done && mw_now() < end);
		if (!err && !done)
			err = -ETIMEDOUT;
	}
	if (err != -EHOSTUNREACH && err != -ECANCELED) {
		MR_FAIL(r, "a receive from the dead rank: %d (%s), want retry exhausted", err,
			q ? "posted" : "never posted");
		return -EIO;
	}
	/* the survivors' connections are untouched: one more exact round */
	return mr_rounds(r, 1);
}

/* one rank of a case, in this process; 0 when it passed */
/* one rank's process: its bootstrap, its fabric on the wire, its NIC and buffer */
struct prank {
	const struct pcase *pc;
	int rank, mpi;
	struct dvx_bootstrap bs;
	struct dvx_sim_fabric *fab;
	struct mw_rank *x;
	struct mrank *r;
	void *bs_mem, *fab_mem, *wire_mem;
	int bs_up, nic_up;
};

/* the bootstrap: MPI, or sockets at the case's address */
static int pr_bootstrap(struct prank *p)
{
	static uint64_t mpi_mem[DVX_BOOTSTRAP_MPI_MEM_SIZE(MR_MAX_RANKS) / 8 + 1];
	int n = p->pc->n, err;

	memset(&p->bs, 0, sizeof(p->bs));
	if (p->mpi) {
		struct dvx_bootstrap_mpi_cfg ma;

		memset(&ma, 0, sizeof(ma));
		ma.flags = DVX_BOOTSTRAP_MPI_F_INIT;
		err = dvx_bootstrap_mpi_init(&p->bs, &ma, mpi_mem, sizeof(mpi_mem));
		if (!err && dvx_bootstrap_nranks(&p->bs) != n)
			err = -ERANGE;
		p->rank = err ? 0 : dvx_bootstrap_rank(&p->bs);
	} else {
		struct dvx_bootstrap_sock_cfg ba;
		size_t bsz = dvx_bootstrap_sock_mem_size(n, 64, 65536);

		memset(&ba, 0, sizeof(ba));
		ba.addr = p->pc->bsaddr;
		ba.rank = p->rank;
		ba.nranks = n;
		ba.max_unexpected = 64;
		ba.slot_bytes = 65536;
		ba.max_msg_bytes = 1u << 20;
		ba.timeout_ns = T_OUT;
		p->bs_mem = aligned_alloc(64, (bsz + 63) & ~(size_t)63);
		err = p->bs_mem ? dvx_bootstrap_sock_init(&p->bs, &ba, p->bs_mem, bsz) : -ENOMEM;
	}
	if (err)
		fprintf(stderr, "rank %d: bootstrap: %d\n", p->rank, err);
	else
		p->bs_up = 1;
	return err;
}

/* this rank's NIC on a fabric of its own, the others' over the wire; the buffer */
static int pr_nic(struct prank *p)
{
	struct dvx_bootstrap_wire_cfg wa;
	struct dvx_sim_fabric_cfg fc;
	struct dvx_sim_nic_cfg nc;
	struct dvx_nic_cfg na;
	int n = p->pc->n, err;
	size_t fsz, wsz;
	char name[16];

	dvx_sim_fabric_cfg_default(&fc);
	fc.max_nics = 1;
	fc.max_qps = fc.max_cqs = (uint32_t)(4 * (n - 1) * NK + 16);
	fc.max_mrs = 16;
	fc.max_umems = 16;
	fsz = dvx_sim_fabric_mem_size(&fc);
	p->fab_mem = calloc(1, fsz);
	err = p->fab_mem ? dvx_sim_fabric_init(p->fab_mem, fsz, &fc, &p->fab) : -ENOMEM;
	dvx_sim_nic_cfg_default(&nc, (unsigned)p->rank);
	if (!err && dvx_sim_add_nic(p->fab, &nc) < 0)
		err = -ENOSPC;
	memset(&wa, 0, sizeof(wa));
	wa.fab = p->fab;
	wa.max_msg = MR_SLOT;
	wsz = dvx_bootstrap_wire_mem_size(n, wa.max_msg);
	p->wire_mem = err ? NULL : malloc(wsz);
	if (!err)
		err = p->wire_mem ? dvx_bootstrap_wire_join(&p->bs, &wa, p->wire_mem, wsz, T_OUT) :
				    -ENOMEM;
	if (!err)
		err = dvx_sim_start(p->fab);
	g_fab = p->fab;
	memset(&na, 0, sizeof(na));
	snprintf(name, sizeof(name), "sim_%d", p->rank);
	na.name = name;
	if (!err)
		err = dvx_nic_open(&p->x->nic, dvx_sim_hal(p->fab), &na);
	p->nic_up = !err;
	p->x->buf = err ? NULL : aligned_alloc(4096, mr_buf_bytes(n, NK));
	if (!err && !p->x->buf)
		err = -ENOMEM;
	if (err)
		fprintf(stderr, "rank %d: set-up: %d\n", p->rank, err);
	return err;
}

/* the traffic with private QPs, then with the pool (or the killed-process case with
 * the pool only): the same digest both ways */
static int pr_cases(struct prank *p)
{
	struct mrank *r = p->r;
	uint64_t digest[2] = { 0, 0 };
	int shared, err = 0;

	r->me = p->rank;
	r->n = p->pc->n;
	r->K = NK;
	r->buf = p->x->buf;
	r->timeout_ns = T_OUT;
	r->barrier = bs_barrier;
	r->barrier_arg = &p->bs;
	for (shared = 0; shared < 2 && !err; shared++) {
		struct dvx_msg_cfg c;

		if (p->pc->victim && !shared)
			continue;	/* the killed-process case runs with the pool only */
		cfg_of(&c, r->n, shared, p->pc->victim ? 2 * MW_SEC : T_OUT);
		err = ctx_up(p->x, r, &p->bs, &c);
		if (!err && p->pc->victim)
			err = victim_case(p->x, r, &p->bs, p->pc->victim - 1);
		else if (!err)
			err = mr_rounds(r, p->pc->rounds);
		digest[shared] = r->digest;
		if (!err && !p->pc->victim)
			err = dvx_bootstrap_barrier(&p->bs, T_OUT);	/* all traffic done */
		ctx_down(p->x, r);
		memset(r->sc, 0, sizeof(r->sc));
		memset(r->rc, 0, sizeof(r->rc));
		memset(r->lc, 0, sizeof(r->lc));
		r->digest = 0;
		if (!err && !p->pc->victim)
			err = dvx_bootstrap_barrier(&p->bs, T_OUT);	/* all closed */
	}
	if (!err && !p->pc->victim && digest[0] != digest[1]) {
		MR_FAIL(r, "private and shared runs differ: %llx against %llx",
			(unsigned long long)digest[0], (unsigned long long)digest[1]);
		err = -EIO;
	}
	if (r->fail_line)
		fprintf(stderr, "rank %d failed at line %d: %s\n", p->rank, r->fail_line, r->why);
	else if (err)
		fprintf(stderr, "rank %d: %d\n", p->rank, err);
	return err;
}

/* what the phases built, in reverse */
static void pr_close(struct prank *p)
{
	if (p->nic_up)
		dvx_nic_close(&p->x->nic);
	if (p->fab) {
		dvx_sim_stop(p->fab);
		dvx_sim_fini(p->fab);
	}
	if (p->bs_up && (!p->pc->victim || !p->mpi))
		dvx_bootstrap_fini(&p->bs);
	free(p->wire_mem);
	free(p->fab_mem);
	free(p->bs_mem);
	free(p->x->buf);
	free(p->x);
	free(p->r);
}

static int rank_run(const struct pcase *pc, int rank, int mpi)
{
	static struct prank p;
	int err;

	memset(&p, 0, sizeof(p));
	p.pc = pc;
	p.rank = rank;
	p.mpi = mpi;
	p.x = calloc(1, sizeof(*p.x));
	p.r = calloc(1, sizeof(*p.r));
	if (!p.x || !p.r) {
		free(p.x);
		free(p.r);
		return -ENOMEM;
	}
	err = pr_bootstrap(&p);
	if (!err)
		err = pr_nic(&p);
	if (!err)
		err = pr_cases(&p);
	pr_close(&p);
	return err;
}

/* fork the ranks of @pc; 0 when every one passed (the victim must die of SIGKILL) */
static int fork_case(struct pcase *pc)
{
	char dir[64], addr[96];
	pid_t pid[MR_MAX_RANKS];
	int i, st, err = 0;

	snprintf(dir, sizeof(dir), "/tmp/dvx-msgp-XXXXXX");
	if (!mkdtemp(dir))
		return -errno;
	snprintf(addr, sizeof(addr), "unix:%s/bs", dir);
	pc->bsaddr = addr;
	for (i = 0; i < pc->n; i++) {
		fflush(NULL);
		pid[i] = fork();
		if (pid[i] == 0) {
			signal(SIGABRT, SIG_DFL);
			signal(SIGSEGV, SIG_DFL);
			st = rank_run(pc, i, 0);
			fflush(NULL);
			_exit(st ? 1 : 0);
		}
	}
	for (i = 0; i < pc->n; i++) {
		if (pid[i] < 0 || waitpid(pid[i], &st, 0) != pid[i]) {
			err = -EIO;
			continue;
		}
		if (pc->victim == i + 1) {
			if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL)
				err = -EIO;
		} else if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "rank %d: exit %d\n", i, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
			err = -EIO;
		}
	}
	rmdir(dir);
	return err;
}

static void test_fork_2(void **state)
{
	struct pcase pc = { 2, 2, 0, NULL };

	(void)state;
	assert_int_equal(fork_case(&pc), 0);
}

static void test_fork_4(void **state)
{
	struct pcase pc = { 4, 2, 0, NULL };

	(void)state;
	assert_int_equal(fork_case(&pc), 0);
}

static void test_fork_killed(void **state)
{
	struct pcase pc = { 4, 1, 4, NULL };

	(void)state;
	assert_int_equal(fork_case(&pc), 0);
}

static void test_mpi_4(void **state)
{
	(void)state;
	if (!dvx_test_mpirun_here(DVX_SRCTREE, 1) ||
	    dvx_bootstrap_mpi_init(NULL, NULL, NULL, 0) == -ENOSYS)
		skip();
	assert_int_equal(dvx_test_mpirun_self(DVX_SRCTREE, 4, NULL, "--mpi", 40, NULL), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fork_2),
		cmocka_unit_test(test_fork_4),
		cmocka_unit_test(test_fork_killed),
		cmocka_unit_test(test_mpi_4),
	};

	if (argc > 1 && !strcmp(argv[1], "--mpi")) {
		struct pcase pc = { 4, 2, 0, NULL };

		return rank_run(&pc, 0, 1) ? 1 : 0;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
