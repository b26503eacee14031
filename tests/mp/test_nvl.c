// SPDX-License-Identifier: MIT
/*
 * The NVLink path's buffer exchange (dvx_nvl_exchange(), core/nvl/nvl.c) on the
 * software GPUs, whose memory is shared memory: ranks as threads on one GPU and on
 * several, in each mode (FD through the descriptor exchange, FABRIC, legacy IPC, which
 * reaches a rank of the same process by its address); a topology that leaves a domain
 * rank out; every rank writes into every peer's buffer through its mapping and reads
 * back what the others wrote into its own. Ranks as processes (each with its own
 * software NIC and the same GPU) over the sockets bootstrap. Against the mock: an
 * allocation that cannot be shared, memory that is not device memory, and every call
 * of one rank failed in turn: every rank gets the same error, nothing stays mapped,
 * no descriptor stays open.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/dvx_test.h"

#include <dvx/nvl/nvl.h>
#include <dvx/mp/mp.h>
#include <dvx/testing/mock.h>
#include <dvx/hal/sim.h>

#define MAXR 4
#define SEC 1000000000ull
#define BUF (64u << 10)

static int open_fds(void)
{
	int n = 0, fd;

	for (fd = 0; fd < 1024; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

static uint8_t pat(int owner, int writer, unsigned i)
{
	return (uint8_t)(owner * 37 + writer * 11 + i);
}

/* ---- one rank's work, whatever carries it (thread or process) ---- */

struct job {
	const struct dvx_hal *hal;	/* the GPU's backend */
	int ordinal;			/* which GPU */
	uint32_t flags;			/* DVX_GPU_MEM_* */
	const struct dvx_mp_topo *topo;	/* optional */
	uint64_t timeout;
	int nocheck;			/* the backend shares no bytes (the mock) */
	/* out */
	int err;
	struct dvx_diag diag;
	char why[128];
};

#define JFAIL(j, ...) do { if (!(j)->why[0]) snprintf((j)->why, sizeof((j)->why), __VA_ARGS__); } while (0)

/* the data through the mappings (the mock's imports are stand-ins: skipped there) */
static void rank_data(struct job *j, struct dvx_bootstrap *bs, struct dvx_nvl_buf *b, uint8_t *mine)
{
	int me = bs->rank, n = bs->nranks, l, err;
	unsigned i;

	for (l = 0; l < n; l++) {
		const uint8_t *p = (const uint8_t *)(uintptr_t)dvx_nvl_peer_ptr(b, l);
		int want = l == me || !j->topo ||
			   j->topo->kind[j->topo->nvl_ranks[l]] == DVX_MP_NVL;

		if ((p != NULL) != want)
			{ JFAIL(j, "rank %d mapped %d, want %d", l, p != NULL, want); return; }
		if (!p || l == me || j->nocheck)
			continue;
		for (i = 0; i < 1024; i++)
			if (p[i] != pat(l, l, i))
				{ JFAIL(j, "rank %d's byte %u is %u", l, i, p[i]); return; }
		/* write into the peer's buffer, in this rank's window of it */
		for (i = 0; i < 256; i++)
			((uint8_t *)p)[2048 + (unsigned)me * 256 + i] = pat(l, me, i);
	}
	err = dvx_bootstrap_barrier(bs, j->timeout);
	if (err)
		{ JFAIL(j, "barrier %d", err); return; }
	for (l = 0; l < n && !j->nocheck; l++) {
		if (l == me || !dvx_nvl_peer_ptr(b, l))
			continue;
		for (i = 0; i < 256; i++)
			if (mine[2048 + (unsigned)l * 256 + i] != pat(me, l, i))
				{ JFAIL(j, "rank %d's write to me is wrong at %u", l, i); return; }
	}
}

static void rank_job(struct job *j, struct dvx_bootstrap *bs)
{
	struct dvx_nvl_peer peers[MAXR];
	struct dvx_nvl_buf b;
	struct dvx_gpu g;
	struct dvx_gpu_mem m;
	int me = bs->rank, err;
	uint8_t *mine;
	unsigned i;

	memset(&g, 0, sizeof(g));
	memset(&m, 0, sizeof(m));
	j->err = dvx_gpu_open(&g, j->hal, j->ordinal, NULL);
	if (j->err)
		{ JFAIL(j, "gpu_open %d", j->err); return; }
	j->err = dvx_gpu_mem_alloc(&g, BUF, j->flags, &m);
	if (j->err) {
		JFAIL(j, "mem_alloc %d", j->err);
		goto close;
	}
	/* the buffer starts 4 KiB into the allocation: offsets must travel */
	mine = (uint8_t *)(uintptr_t)m.dptr + 4096;
	for (i = 0; i < 1024; i++)
		mine[i] = pat(me, me, i);
	j->err = dvx_nvl_exchange(&b, peers, bs, j->topo, &g,
				  &(struct dvx_nvl_cfg){ mine, BUF - 4096, NULL, j->timeout });
	j->diag = b.diag;
	if (j->err) {
		JFAIL(j, "exchange %d (%s)", j->err, b.diag.msg);
		goto free;
	}
	rank_data(j, bs, &b, mine);
	err = dvx_nvl_unmap(&b);
	if (err) {
		JFAIL(j, "unmap %d", err);
		dvx_nvl_unmap(&b);	/* a refused release holds on: the caller tries again */
	}
	/* nobody frees what a peer still maps */
	err = dvx_bootstrap_barrier(bs, j->timeout);
	if (err)
		JFAIL(j, "closing barrier %d", err);
free:
	err = dvx_gpu_mem_free(&m);
	if (err) {
		JFAIL(j, "mem_free %d", err);
		dvx_gpu_mem_free(&m);
	}
close:
	err = dvx_gpu_close(&g);
	if (err) {
		JFAIL(j, "gpu_close %d", err);
		dvx_gpu_close(&g);
	}
}

/* ---- ranks as threads ---- */

struct trank {
	struct dvx_bootstrap_tgroup *g;
	int rank;
	struct job j;
};

static void *trank_run(void *arg)
{
	struct trank *t = arg;
	struct dvx_bootstrap bs;

	t->j.err = dvx_bootstrap_thread_init(&bs, t->g, t->rank);
	if (!t->j.err)
		rank_job(&t->j, &bs);
	dvx_bootstrap_fini(&bs);
	return NULL;
}

static void run_threads(struct trank *t, int n, const struct job *tmpl, int gpus)
{
	struct dvx_bootstrap_tgroup_cfg ga;
	struct dvx_bootstrap_tgroup *g;
	pthread_t th[MAXR];
	size_t sz;
	void *mem;
	int r;

	memset(&ga, 0, sizeof(ga));
	ga.nranks = n;
	ga.max_unexpected = 8;
	ga.slot_bytes = 4096;
	sz = dvx_bootstrap_tgroup_mem_size(n, 8, 4096);
	mem = aligned_alloc(64, (sz + 63) & ~(size_t)63);
	assert_int_equal(dvx_bootstrap_tgroup_init(&g, &ga, mem, sz), 0);
	for (r = 0; r < n; r++) {
		memset(&t[r], 0, sizeof(t[r]));
		t[r].g = g;
		t[r].rank = r;
		t[r].j = tmpl[r];
		t[r].j.ordinal = gpus ? r % gpus : tmpl[r].ordinal;
		assert_int_equal(pthread_create(&th[r], NULL, trank_run, &t[r]), 0);
	}
	for (r = 0; r < n; r++)
		pthread_join(th[r], NULL);
	assert_int_equal(dvx_bootstrap_tgroup_fini(g), 0);
	free(mem);
}

/* a fabric with @ngpus software GPUs (fabric handles where @fabric) */
static struct dvx_sim_fabric *sim_up(void **mem, int ngpus, int fabric)
{
	struct dvx_sim_fabric_cfg fc;
	struct dvx_sim_gpu_cfg gc;
	struct dvx_sim_fabric *f;
	int i;

	dvx_sim_fabric_cfg_default(&fc);
	*mem = calloc(1, dvx_sim_fabric_mem_size(&fc));
	assert_int_equal(dvx_sim_fabric_init(*mem, dvx_sim_fabric_mem_size(&fc), &fc, &f), 0);
	for (i = 0; i < ngpus; i++) {
		dvx_sim_gpu_cfg_default(&gc, (unsigned)i);
		gc.attr.fabric = (uint8_t)fabric;
		assert_int_equal(dvx_sim_add_gpu(f, &gc), i);
	}
	return f;
}

static void sim_down(struct dvx_sim_fabric *f, void *mem)
{
	struct dvx_sim_stats st;
	unsigned i;

	assert_int_equal(dvx_sim_get_stats(f, &st), 0);
	for (i = 0; i < DVX_ARRAY_SIZE(st.live); i++)
		assert_int_equal(st.live[i], 0);
	assert_int_equal(dvx_sim_fini(f), 0);
	free(mem);
}

static void check_all(struct trank *t, int n)
{
	int r;

	for (r = 0; r < n; r++)
		if (t[r].j.err || t[r].j.why[0])
			fail_msg("rank %d of %d: %d: %s", r, n, t[r].j.err, t[r].j.why);
}

static void test_threads_modes(void **state)
{
	static const uint32_t modes[] = { DVX_GPU_MEM_EXPORT, DVX_GPU_MEM_FABRIC,
					  DVX_GPU_MEM_LEGACY, DVX_GPU_MEM_EXPORT | DVX_GPU_MEM_RDMA };
	struct trank t[MAXR];
	struct job j[MAXR];
	void *mem;
	struct dvx_sim_fabric *f;
	int n, r, before = open_fds();
	size_t k;

	(void)state;
	for (k = 0; k < DVX_ARRAY_SIZE(modes); k++)
		for (n = 1; n <= MAXR; n++) {
			f = sim_up(&mem, 2, 1);
			for (r = 0; r < n; r++) {
				memset(&j[r], 0, sizeof(j[r]));
				j[r].hal = dvx_sim_hal(f);
				j[r].flags = modes[k];
				j[r].timeout = 10 * SEC;
			}
			run_threads(t, n, j, n > 2 ? 2 : 1);	/* one GPU, then two */
			check_all(t, n);
			sim_down(f, mem);
		}
	assert_int_equal(open_fds(), before);
}

static void test_topology(void **state)
{
	static struct dvx_mp_rank_info inf[3];
	static uint64_t tmem[3][32];
	struct dvx_mp_topo topo[3];
	struct trank t[3];
	struct job j[3];
	struct dvx_sim_fabric *f;
	void *mem;
	int r;

	(void)state;
	/* three GPUs: 0-1 and 1-2 are peers, 0-2 not: rank 1 maps both, 0 and 2 one */
	for (r = 0; r < 3; r++) {
		memset(&inf[r], 0, sizeof(inf[r]));
		inf[r].version = DVX_MP_INFO_VERSION;
		inf[r].rank = r;
		inf[r].flags = DVX_MP_INFO_GPU;
		strcpy(inf[r].hostname, "h");
		inf[r].gpu_uuid[0] = (uint8_t)(r + 1);
	}
	inf[0].npeer_gpus = 1;
	inf[0].peer_uuids[0][0] = 2;
	inf[1].npeer_gpus = 2;
	inf[1].peer_uuids[0][0] = 1;
	inf[1].peer_uuids[1][0] = 3;
	inf[2].npeer_gpus = 1;
	inf[2].peer_uuids[0][0] = 2;
	f = sim_up(&mem, 3, 0);
	for (r = 0; r < 3; r++) {
		assert_int_equal(dvx_mp_topo_classify(&topo[r], tmem[r], sizeof(tmem[r]), inf, 3, r,
						      0, NULL), 0);
		assert_int_equal(topo[r].nnvl, 3);
		memset(&j[r], 0, sizeof(j[r]));
		j[r].hal = dvx_sim_hal(f);
		j[r].flags = DVX_GPU_MEM_EXPORT;
		j[r].topo = &topo[r];
		j[r].timeout = 10 * SEC;
	}
	run_threads(t, 3, j, 3);
	check_all(t, 3);
	sim_down(f, mem);
}

/* ---- ranks as processes ---- */

#define NPROC 3

static int child(const char *addr, int rank, uint32_t flags)
{
	static uint64_t bsmem[8192];
	struct dvx_bootstrap_sock_cfg a;
	struct dvx_bootstrap bs;
	struct dvx_sim_fabric *f;
	struct job j;
	void *mem;

	f = sim_up(&mem, 1, 1);		/* the same GPU (UUID) in every process */
	memset(&a, 0, sizeof(a));
	a.addr = addr;
	a.rank = rank;
	a.nranks = NPROC;
	a.max_unexpected = 8;
	a.slot_bytes = 4096;
	a.timeout_ns = 10 * SEC;
	if (dvx_bootstrap_sock_init(&bs, &a, bsmem, sizeof(bsmem)))
		return 10;
	memset(&j, 0, sizeof(j));
	j.hal = dvx_sim_hal(f);
	j.flags = flags;
	j.timeout = 10 * SEC;
	rank_job(&j, &bs);
	dvx_bootstrap_fini(&bs);
	dvx_sim_fini(f);
	free(mem);
	if (j.why[0])
		fprintf(stderr, "rank %d: %s\n", rank, j.why);
	return j.why[0] ? 20 : 0;
}

static void test_processes(void **state)
{
	static const uint32_t modes[] = { DVX_GPU_MEM_EXPORT, DVX_GPU_MEM_LEGACY,
					  DVX_GPU_MEM_FABRIC };
	char addr[96];
	pid_t pid[NPROC];
	size_t k;
	int r, st;

	(void)state;
	for (k = 0; k < DVX_ARRAY_SIZE(modes); k++) {
		snprintf(addr, sizeof(addr), "unix:/tmp/dvx-nvl-test-%d-%zu.sock", (int)getpid(), k);
		for (r = 0; r < NPROC; r++) {
			pid[r] = fork();
			assert_true(pid[r] >= 0);
			if (pid[r] == 0)
				_exit(child(addr, r, modes[k]));
		}
		for (r = 0; r < NPROC; r++) {
			assert_int_equal(waitpid(pid[r], &st, 0), pid[r]);
			assert_true(WIFEXITED(st));
			if (WEXITSTATUS(st))
				fail_msg("mode %zu: rank %d exited with %d", k, r, WEXITSTATUS(st));
		}
	}
}

/* ---- against the mock: refusals, and every call of rank 0 failed in turn ---- */

static struct dvx_mock mk[2];

static void mock_up(int r)
{
	struct dvx_hal_gpu_attr ga;

	dvx_mock_init(&mk[r]);
	mk[r].now_real = 1;
	dvx_mock_gpu_attr_h100(&ga, "0000:19:00.0");
	assert_int_equal(dvx_mock_add_gpu(&mk[r], &ga), 0);
}

static void test_refusals(void **state)
{
	struct dvx_bootstrap_tgroup_cfg ga;
	struct dvx_bootstrap_tgroup *g;
	struct dvx_bootstrap bs;
	struct dvx_nvl_peer peers[1];
	struct dvx_nvl_buf b;
	struct dvx_gpu gpu;
	struct dvx_gpu_mem m;
	uint64_t host[8];
	size_t sz;
	void *mem;

	(void)state;
	mock_up(0);
	memset(&ga, 0, sizeof(ga));
	ga.nranks = 1;
	ga.max_unexpected = 4;
	ga.slot_bytes = 1024;
	sz = dvx_bootstrap_tgroup_mem_size(1, 4, 1024);
	mem = aligned_alloc(64, (sz + 63) & ~(size_t)63);
	assert_int_equal(dvx_bootstrap_tgroup_init(&g, &ga, mem, sz), 0);
	assert_int_equal(dvx_bootstrap_thread_init(&bs, g, 0), 0);
	memset(&gpu, 0, sizeof(gpu));
	assert_int_equal(dvx_gpu_open(&gpu, dvx_mock_hal(&mk[0]), 0, NULL), 0);
	/* a VMM allocation without a shareable handle type */
	assert_int_equal(dvx_gpu_mem_alloc(&gpu, 4096, DVX_GPU_MEM_RDMA, &m), 0);
	assert_int_equal(dvx_nvl_exchange(&b, peers, &bs, NULL, &gpu,
					  &(struct dvx_nvl_cfg){ (void *)(uintptr_t)m.dptr, 64,
								 NULL, SEC }),
			 -EINVAL);
	assert_non_null(strstr(b.diag.msg, "shareable"));
	/* host memory; a buffer past its allocation */
	assert_int_equal(dvx_nvl_exchange(&b, peers, &bs, NULL, &gpu,
					  &(struct dvx_nvl_cfg){ host, 64, NULL, SEC }),
			 -EINVAL);
	assert_int_equal(dvx_gpu_mem_free(&m), 0);
	assert_int_equal(dvx_gpu_mem_alloc(&gpu, 4096, DVX_GPU_MEM_EXPORT, &m), 0);
	assert_int_equal(dvx_nvl_exchange(&b, peers, &bs, NULL, &gpu,
					  &(struct dvx_nvl_cfg){ (void *)(uintptr_t)(m.dptr + 8),
								 m.len, NULL, SEC }),
			 -EINVAL);
	/* alone: nothing to map, its own buffer is its own */
	assert_int_equal(dvx_nvl_exchange(&b, peers, &bs, NULL, &gpu,
					  &(struct dvx_nvl_cfg){ (void *)(uintptr_t)m.dptr, 64,
								 NULL, SEC }),
			 0);
	assert_int_equal(dvx_nvl_peer_ptr(&b, 0), m.dptr);
	assert_int_equal(b.mode, DVX_NVL_FD);
	assert_int_equal(dvx_nvl_unmap(&b), 0);
	assert_int_equal(dvx_nvl_exchange(NULL, peers, &bs, NULL, &gpu,
					  &(struct dvx_nvl_cfg){ host, 64, NULL, SEC }),
			 -EINVAL);
	assert_int_equal(dvx_gpu_mem_free(&m), 0);
	assert_int_equal(dvx_gpu_close(&gpu), 0);
	assert_int_equal(dvx_mock_live_total(&mk[0]), 0);
	dvx_bootstrap_fini(&bs);
	assert_int_equal(dvx_bootstrap_tgroup_fini(g), 0);
	free(mem);
}

static void test_faults(void **state)
{
	struct trank t[2];
	struct job j[2];
	unsigned n, failed = 0, calls;
	int before = open_fds(), r;

	(void)state;
	for (n = 1; n < 200; n++) {
		for (r = 0; r < 2; r++) {
			mock_up(r);
			memset(&j[r], 0, sizeof(j[r]));
			j[r].hal = dvx_mock_hal(&mk[r]);
			j[r].flags = DVX_GPU_MEM_EXPORT;
			j[r].timeout = SEC / 2;
			j[r].nocheck = 1;
		}
		/* rank 0's n-th call, counted from the exchange on */
		dvx_mock_fail_at(&mk[0], n + 6, -EIO);	/* init, count, get, query, retain,
							 * set current: then create */
		run_threads(t, 2, j, 0);
		calls = dvx_mock_calls(&mk[0]);
		dvx_mock_clear_faults(&mk[0]);
		for (r = 0; r < 2; r++)
			if (dvx_mock_live_total(&mk[r]))
				fail_msg("call %u: rank %d holds %d resources (%s)", n, r,
					 dvx_mock_live_total(&mk[r]), t[r].j.why);
		assert_int_equal(open_fds(), before);
		if (!t[0].j.why[0]) {
			if (t[1].j.err || t[1].j.why[0])
				fail_msg("call %u: rank 1 failed alone: %s", n, t[1].j.why);
			if (calls < n + 6)
				break;
			continue;	/* absorbed: a refused close, say */
		}
		failed++;
		/* the exchange's failures are agreed: rank 1 failed in it too */
		if (strstr(t[0].j.why, "exchange") && !strstr(t[1].j.why, "exchange"))
			fail_msg("call %u: rank 0 '%s', rank 1 '%s'", n, t[0].j.why, t[1].j.why);
	}
	assert_true(n < 200);
	assert_true(failed >= 8);
}

/* ---- dvx_mp_init() discovering the facts, every call of rank 0's mock failed ---- */

struct init_rank {
	struct dvx_bootstrap_tgroup *g;
	int rank, err;
	struct dvx_diag diag;
	struct dvx_mp_topo topo;
	int nnvl;
};

static void *init_run(void *arg)
{
	struct init_rank *t = arg;
	struct dvx_bootstrap bs;
	struct dvx_gpu gpu;
	struct dvx_mp mp;
	struct dvx_mp_cfg c;
	static uint64_t state[2][16384] __attribute__((aligned(64)));

	memset(&gpu, 0, sizeof(gpu));
	t->err = dvx_bootstrap_thread_init(&bs, t->g, t->rank);
	if (!t->err)
		t->err = dvx_gpu_open(&gpu, dvx_mock_hal(&mk[t->rank]), 0, NULL);
	if (!t->err) {
		memset(&c, 0, sizeof(c));
		c.rank = t->rank;
		c.nranks = 2;
		c.bs = &bs;
		c.gpu = &gpu;
		c.timeout_ns = SEC;
		/* (no cmocka assertion on this thread: it would end the process silently) */
		t->err = dvx_mp_mem_size(&c) <= sizeof(state[0]) ?
			 dvx_mp_init(&mp, &c, state[t->rank], sizeof(state[0])) : -E2BIG;
		t->diag = mp.diag;
		if (!t->err) {
			t->nnvl = mp.topo.nnvl;
			t->err = dvx_mp_fini(&mp);
		}
		if (dvx_gpu_close(&gpu))
			dvx_gpu_close(&gpu);	/* a refused release holds on: once more */
	}
	dvx_bootstrap_fini(&bs);
	return NULL;
}

static void test_mp_init_faults(void **state)
{
	struct dvx_bootstrap_tgroup_cfg ga;
	struct init_rank t[2];
	pthread_t th[2];
	unsigned n, failed = 0, calls;
	size_t sz;
	void *mem;
	int r;

	(void)state;
	memset(&ga, 0, sizeof(ga));
	ga.nranks = 2;
	ga.max_unexpected = 8;
	ga.slot_bytes = 4096;
	sz = dvx_bootstrap_tgroup_mem_size(2, 8, 4096);
	mem = aligned_alloc(64, (sz + 63) & ~(size_t)63);
	for (n = 0; n < 100; n++) {
		for (r = 0; r < 2; r++) {
			struct dvx_hal_gpu_attr a;

			mock_up(r);		/* GPU 0 "0000:19:00.0" */
			dvx_mock_gpu_attr_h100(&a, "0000:3b:00.0");
			assert_int_equal(dvx_mock_add_gpu(&mk[r], &a), 1);	/* a peer GPU */
		}
		/* rank 0's n-th call after its GPU is open (init ... set current: 6) */
		if (n)
			dvx_mock_fail_at(&mk[0], n + 6, -EIO);
		assert_int_equal(dvx_bootstrap_tgroup_init(&t[0].g, &ga, mem, sz), 0);
		for (r = 0; r < 2; r++) {
			t[r].g = t[0].g;
			t[r].rank = r;
			t[r].err = 0;
			t[r].nnvl = 0;
			assert_int_equal(pthread_create(&th[r], NULL, init_run, &t[r]), 0);
		}
		for (r = 0; r < 2; r++)
			pthread_join(th[r], NULL);
		assert_int_equal(dvx_bootstrap_tgroup_fini(t[0].g), 0);
		calls = dvx_mock_calls(&mk[0]);
		dvx_mock_clear_faults(&mk[0]);
		for (r = 0; r < 2; r++)
			assert_int_equal(dvx_mock_live_total(&mk[r]), 0);
		if (!n) {
			/* no fault: one host (the mocks' identity), one GPU: NVL */
			if (t[0].err)
				fail_msg("rank 0: %d (%s)", t[0].err, t[0].diag.msg);
			assert_int_equal(t[1].err, 0);
			assert_int_equal(t[0].nnvl, 2);
			continue;
		}
		if (!t[0].err) {
			assert_int_equal(t[1].err, 0);
			if (calls < n + 6)
				break;
			continue;
		}
		failed++;
		/* a failure of rank 0 reaches rank 1 as a failure too: agreed */
		if (!t[1].err)
			fail_msg("call %u: rank 0 failed (%d: %s), rank 1 went on", n, t[0].err,
				 t[0].diag.msg);
	}
	assert_true(n < 100);
	assert_true(failed >= 3);
	free(mem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threads_modes),
		cmocka_unit_test(test_topology),
		cmocka_unit_test(test_processes),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_faults),
		cmocka_unit_test(test_mp_init_faults),
	};

	return cmocka_run_group_tests_name("mp-nvl", tests, NULL, NULL);
}
