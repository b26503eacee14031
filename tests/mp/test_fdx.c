// SPDX-License-Identifier: MIT
/*
 * The descriptor exchange (dvx_fdx_allgather(), core/nvl/fdx.c): memfds stand in for
 * the GPU's exported handles. Ranks as threads (1 to 5, some offering nothing), ranks as
 * processes joined by the sockets bootstrap (each child maps what the others passed and
 * checks the bytes), a stranger that connects to a listener first (refused, the
 * exchange goes on), a rank that never comes (-ETIMEDOUT, nothing left open), and
 * every hal call of one rank failed in turn through the mock (an error or a timeout on
 * every rank, never a leaked descriptor or socket).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/dvx_test.h"

#include <dvx/nvl/nvl.h>
#include <dvx/testing/mock.h>

#define MAXR 5
#define SEC 1000000000ull

static int open_fds(void)
{
	int n = 0, fd;

	for (fd = 0; fd < 1024; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

/* a memfd holding 64 bytes of @tag */
static int memfd_of(int tag)
{
	uint8_t b[64];
	int fd = memfd_create("dvx-fdx-test", MFD_CLOEXEC);

	assert_true(fd >= 0);
	memset(b, tag, sizeof(b));
	assert_int_equal(write(fd, b, sizeof(b)), (ssize_t)sizeof(b));
	return fd;
}

/* 1 when @fd is a file holding 64 bytes of @tag (read through a mapping) */
static int holds(int fd, int tag)
{
	uint8_t *p = mmap(NULL, 64, PROT_READ, MAP_SHARED, fd, 0);
	int i, ok = p != MAP_FAILED;

	for (i = 0; ok && i < 64; i++)
		ok = p[i] == (uint8_t)tag;
	if (p != MAP_FAILED)
		munmap(p, 64);
	return ok;
}

/* ---- ranks as threads ---- */

struct trank {
	struct dvx_bootstrap_tgroup *g;
	int rank, nranks, offer;
	const struct dvx_hal *hal;
	uint64_t timeout;
	int err;
	int32_t fds[MAXR];
	uint64_t scratch[MAXR * DVX_FDX_REC_BYTES / 8];
	struct dvx_diag diag;
};

static void *trank_run(void *arg)
{
	struct trank *t = arg;
	struct dvx_bootstrap bs;
	int fd = t->offer ? memfd_of(0x40 + t->rank) : -1;

	t->err = dvx_bootstrap_thread_init(&bs, t->g, t->rank);
	if (!t->err)
		t->err = dvx_fdx_allgather(&bs, t->hal, fd, t->fds, t->scratch, t->timeout,
					   &t->diag);
	dvx_bootstrap_fini(&bs);
	if (fd >= 0)
		close(fd);
	return NULL;
}

static void run_threads(struct trank *t, int n, const int *offer, const struct dvx_hal *const *hal,
			uint64_t timeout)
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
	assert_non_null(mem);
	assert_int_equal(dvx_bootstrap_tgroup_init(&g, &ga, mem, sz), 0);
	for (r = 0; r < n; r++) {
		memset(&t[r], 0, sizeof(t[r]));
		t[r].g = g;
		t[r].rank = r;
		t[r].nranks = n;
		t[r].offer = offer ? offer[r] : 1;
		t[r].hal = hal ? hal[r] : dvx_hal_host();
		t[r].timeout = timeout;
		assert_int_equal(pthread_create(&th[r], NULL, trank_run, &t[r]), 0);
	}
	for (r = 0; r < n; r++)
		pthread_join(th[r], NULL);
	assert_int_equal(dvx_bootstrap_tgroup_fini(g), 0);
	free(mem);
}

static void test_threads(void **state)
{
	static const int offers[] = { 1, 0, 1, 0, 1 };
	struct trank t[MAXR];
	int n, r, p, before = open_fds();

	(void)state;
	for (n = 1; n <= MAXR; n++) {
		run_threads(t, n, n == MAXR ? offers : NULL, NULL, 10 * SEC);
		for (r = 0; r < n; r++) {
			if (t[r].err)
				fail_msg("rank %d of %d: %d (%s)", r, n, t[r].err, t[r].diag.msg);
			for (p = 0; p < n; p++) {
				int want = p != r && (n == MAXR ? offers[p] : 1);

				assert_int_equal(t[r].fds[p] >= 0, want);
				if (want) {
					assert_true(holds(t[r].fds[p], 0x40 + p));
					assert_int_equal(dvx_hal_fd_close(dvx_hal_host(), t[r].fds[p]),
							 0);
				}
			}
		}
	}
	assert_int_equal(open_fds(), before);
}

static void test_timeout(void **state)
{
	struct dvx_bootstrap_tgroup_cfg ga;
	struct dvx_bootstrap_tgroup *g;
	struct dvx_bootstrap bs;
	int32_t fds[2];
	uint64_t scratch[8];
	struct dvx_diag d;
	int fd = memfd_of(1), before;
	size_t sz;
	void *mem;

	(void)state;
	memset(&ga, 0, sizeof(ga));
	ga.nranks = 2;
	ga.max_unexpected = 4;
	ga.slot_bytes = 256;
	sz = dvx_bootstrap_tgroup_mem_size(2, 4, 256);
	mem = aligned_alloc(64, (sz + 63) & ~(size_t)63);
	assert_int_equal(dvx_bootstrap_tgroup_init(&g, &ga, mem, sz), 0);
	assert_int_equal(dvx_bootstrap_thread_init(&bs, g, 0), 0);
	before = open_fds();
	memset(&d, 0, sizeof(d));
	/* rank 1 never comes: the allgather times out, the listener is gone */
	assert_int_equal(dvx_fdx_allgather(&bs, dvx_hal_host(), fd, fds, scratch, 50000000ull, &d),
			 -ETIMEDOUT);
	assert_int_equal(open_fds(), before);
	assert_int_equal(fds[0], -1);
	assert_int_equal(fds[1], -1);
	/* arguments */
	assert_int_equal(dvx_fdx_allgather(&bs, NULL, fd, fds, scratch, 1, NULL), -EINVAL);
	assert_int_equal(dvx_fdx_allgather(&bs, dvx_hal_host(), fd, fds, (uint8_t *)scratch + 1, 1,
					   NULL), -EINVAL);
	dvx_bootstrap_tgroup_abort(g, -1);
	dvx_bootstrap_fini(&bs);
	assert_int_equal(dvx_bootstrap_tgroup_fini(g), 0);
	free(mem);
	close(fd);
}

/* ---- every call of rank 0's hal failed in turn ---- */

static void test_faults(void **state)
{
	static struct dvx_mock m;
	const struct dvx_hal *hal[2];
	struct trank t[2];
	unsigned n, failed = 0, calls;
	int before = open_fds();

	(void)state;
	for (n = 1; n < 100; n++) {
		dvx_mock_init(&m);
		m.now_real = 1;
		dvx_mock_fail_at(&m, n, -EIO);
		hal[0] = dvx_mock_hal(&m);
		hal[1] = dvx_hal_host();
		run_threads(t, 2, NULL, hal, 2 * SEC);
		calls = dvx_mock_calls(&m);
		dvx_mock_clear_faults(&m);
		/* what rank 0 got, it must give back; nothing of the mock's stays open */
		if (t[0].fds[1] >= 0)
			assert_int_equal(dvx_hal_fd_close(hal[0], t[0].fds[1]), 0);
		if (t[1].fds[0] >= 0)
			close(t[1].fds[0]);
		assert_int_equal(dvx_mock_live_total(&m), 0);
		assert_int_equal(open_fds(), before);
		if (!t[0].err) {
			assert_int_equal(t[1].err, 0);
			if (calls < n)
				break;	/* no call left to fail */
			continue;	/* absorbed (a refused close, say) */
		}
		failed++;
		assert_true(t[0].err < 0);
		assert_true(t[1].err <= 0);
	}
	assert_true(n < 100);
	assert_true(failed >= 5);
}

/* ---- ranks as processes over the sockets bootstrap ---- */

#define NPROC 3

static int child(const char *addr, int rank)
{
	struct dvx_bootstrap_sock_cfg a;
	struct dvx_bootstrap bs;
	int32_t fds[NPROC];
	uint64_t scratch[NPROC * 4];
	static uint64_t mem[8192];
	int fd = memfd_of(0x60 + rank), r, bad = 0;

	memset(&a, 0, sizeof(a));
	a.addr = addr;
	a.rank = rank;
	a.nranks = NPROC;
	a.max_unexpected = 8;
	a.slot_bytes = 1024;
	a.timeout_ns = 10 * SEC;
	if (dvx_bootstrap_sock_mem_size(NPROC, 8, 1024) > sizeof(mem) ||
	    dvx_bootstrap_sock_init(&bs, &a, mem, sizeof(mem)))
		return 10;
	if (dvx_fdx_allgather(&bs, dvx_hal_host(), fd, fds, scratch, 10 * SEC, NULL))
		return 11;
	for (r = 0; r < NPROC; r++) {
		if (r == rank) {
			bad |= fds[r] != -1;
			continue;
		}
		bad |= fds[r] < 0 || !holds(fds[r], 0x60 + r);
		close(fds[r]);
	}
	/* nobody leaves before all have checked */
	if (dvx_bootstrap_barrier(&bs, 10 * SEC))
		return 12;
	dvx_bootstrap_fini(&bs);
	return bad ? 13 : 0;
}

static void test_processes(void **state)
{
	char addr[96];
	pid_t pid[NPROC];
	int r, st;

	(void)state;
	snprintf(addr, sizeof(addr), "unix:/tmp/dvx-fdx-test-%d.sock", (int)getpid());
	for (r = 0; r < NPROC; r++) {
		pid[r] = fork();
		assert_true(pid[r] >= 0);
		if (pid[r] == 0)
			_exit(child(addr, r));
	}
	for (r = 0; r < NPROC; r++) {
		assert_int_equal(waitpid(pid[r], &st, 0), pid[r]);
		assert_true(WIFEXITED(st));
		if (WEXITSTATUS(st))
			fail_msg("rank %d exited with %d", r, WEXITSTATUS(st));
	}
}

/* ---- a stranger connects first: refused, the exchange goes on ---- */

static void *stranger(void *arg)
{
	const struct dvx_hal *hal = dvx_hal_host();
	struct dvx_hal_sock_addr a;
	struct { uint32_t magic; int32_t rank; } h = { 0x78646676u, 7 };
	struct dvx_hal_iov iov = { &h, sizeof(h) };
	size_t sent;
	int fd, k;

	(void)arg;
	/* the listener's name is this process's pid and a counter: try the next few */
	for (k = 0; k < 200; k++) {
		memset(&a, 0, sizeof(a));
		a.family = DVX_HAL_SOCK_ABSTRACT;
		snprintf(a.path, sizeof(a.path), "dvx-fdx-%d-%d", (int)getpid(), k);
		if (dvx_hal_sock_connect(hal, &a, &fd))
			continue;
		usleep(1000);
		dvx_hal_sock_send(hal, fd, &iov, 1, &sent);	/* claims a rank it is not */
		dvx_hal_sock_close(hal, fd);
	}
	return NULL;
}

static void test_stranger(void **state)
{
	struct trank t[3];
	pthread_t s;
	int i, r, p;

	(void)state;
	for (i = 0; i < 5; i++) {
		assert_int_equal(pthread_create(&s, NULL, stranger, NULL), 0);
		run_threads(t, 3, NULL, NULL, 10 * SEC);
		pthread_join(s, NULL);
		for (r = 0; r < 3; r++) {
			if (t[r].err)
				fail_msg("rank %d: %d (%s)", r, t[r].err, t[r].diag.msg);
			for (p = 0; p < 3; p++)
				if (p != r)
					close(t[r].fds[p]);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_faults),
		cmocka_unit_test(test_processes),
		cmocka_unit_test(test_stranger),
	};

	return cmocka_run_group_tests_name("mp-fdx", tests, NULL, NULL);
}
