// SPDX-License-Identifier: MIT
/*
 * tests/nccl/test_copier.c - dvx-copier (plugins/nccl/copier.h), the process that makes
 * the software NIC's copies into and out of GPU memory for the NCCL plugin, run here on
 * the software GPU model (dvx-copier --sim): device memory is a memfd shared the ways
 * CUDA shares it (a POSIX fd over SCM_RIGHTS for VMM allocations, an IPC handle for
 * cuMemAlloc ones), so every step but the driver's copy runs as on a GPU.
 *
 * Covered: the copier holds none of the caller's descriptors; bytes both ways through a
 * staging area smaller than the copy (pieces), at odd offsets, on two GPUs and both
 * handle kinds; an allocation asked twice by IPC handle is one mapping until two
 * unmaps, by fd two; a stale id after its slot was taken again; refusals (host memory,
 * a range past its allocation, memory that cannot be shared, a copy outside its
 * mapping, a stale mapping, no program); a copier killed or stopped: the call fails
 * within its bound, the copier is reaped, and every later call fails at once; a copy
 * the copier fails (fault injection): it ends itself; a program that ends before its
 * hello: nothing left open, no zombie; a child forked with the copier up leaves it
 * alone; SIGCHLD ignored; four threads copying at once.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <sys/wait.h>

#include "../lib/dvx_test.h"

#include <dvx/gpu/gpu.h>
#include <dvx/hal/sim.h>

#include "copier.h"

#define SEC 1000000000ull
#define STAGE (64u << 10)

static void *fab_mem;
static struct dvx_sim_fabric *fab;
static struct dvx_gpu gpu[2];

static int setup(void **state)
{
	struct dvx_sim_fabric_cfg fc;
	struct dvx_sim_gpu_cfg gc;
	int i;

	(void)state;
	dvx_sim_fabric_cfg_default(&fc);
	fab_mem = dvx_test_alloc(dvx_sim_fabric_mem_size(&fc), 0);
	assert_int_equal(dvx_sim_fabric_init(fab_mem, dvx_sim_fabric_mem_size(&fc), &fc, &fab), 0);
	for (i = 0; i < 2; i++) {
		dvx_sim_gpu_cfg_default(&gc, (unsigned)i);
		assert_int_equal(dvx_sim_add_gpu(fab, &gc), i);
		memset(&gpu[i], 0, sizeof(gpu[i]));
		assert_int_equal(dvx_gpu_open(&gpu[i], dvx_sim_hal(fab), i, NULL), 0);
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	dvx_gpu_close(&gpu[0]);
	dvx_gpu_close(&gpu[1]);
	assert_int_equal(dvx_sim_fini(fab), 0);
	dvx_test_free(fab_mem);
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
}

/* the export's reason, when it failed */
static char ewhy[256];

/* export the allocation around [@dptr, +@len) of @g's and map it into @c */
static int map(struct dvxn_copier *c, struct dvx_gpu *g, uint64_t dptr, uint64_t len,
	       struct dvxn_copier_map *m)
{
	struct dvxn_copier_mem mem;
	int rc;

	ewhy[0] = 0;
	rc = dvxn_copier_export(&g->hg, dptr, len, &mem, ewhy, sizeof(ewhy));
	return rc ? rc : dvxn_copier_map(c, &mem, m);
}

static void start(struct dvxn_copier *c, uint64_t timeout_ns)
{
	int rc = dvxn_copier_start(c, DVX_COPIER, 1, STAGE, timeout_ns);

	if (rc)
		print_error("copier: %s\n", c->why);
	assert_int_equal(rc, 0);
	assert_true(c->pid > 0);
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 131u + seed * 7u + (i >> 9));
}

/* @len bytes at @off of @m written through the copier, read back both ways */
static void round_trip(struct dvxn_copier *c, const struct dvxn_copier_map *m,
		       const struct dvx_gpu_mem *mem, uint64_t off, size_t len, unsigned seed)
{
	uint8_t *src = dvx_test_alloc(len + 64, 0), *back = dvx_test_alloc(len + 64, 0xee);

	fill(src, len, seed);
	assert_int_equal(dvxn_copier_write(c, m, mem->dptr + off, src, len), 0);
	/* the software GPU's memory is host memory here: the bytes are in place */
	assert_bytes_equal((const void *)(uintptr_t)(mem->dptr + off), src, len);
	memset((void *)(uintptr_t)(mem->dptr + off), 0x5a, len);
	assert_int_equal(dvxn_copier_read(c, m, back, mem->dptr + off, len), 0);
	memset(src, 0x5a, len);
	assert_bytes_equal(back, src, len);
	assert_int_equal(back[len], 0xee);	/* nothing past the end */
	dvx_test_free(src);
	dvx_test_free(back);
}

/* the descriptors of @pid above @fd (its staging memfd is closed once mapped) */
static int fds_above(pid_t pid, int fd)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dir = opendir(path);
	assert_non_null(dir);
	while ((d = readdir(dir)))
		if (d->d_name[0] != '.' && atoi(d->d_name) > fd) {
			print_message("process %d holds descriptor %s\n", (int)pid, d->d_name);
			n++;
		}
	closedir(dir);
	return n;
}

static void test_bytes_both_ways(void **state)
{
	struct dvx_gpu_mem vmm, legacy;
	struct dvxn_copier_map a, b, l, l2;
	struct dvxn_copier c;
	uint64_t copies;
	int leak;

	(void)state;
	assert_int_equal(dvx_gpu_mem_alloc(&gpu[1], 4u << 20, DVX_GPU_MEM_EXPORT, &vmm), 0);
	assert_int_equal(dvx_gpu_mem_alloc(&gpu[0], 1u << 20, DVX_GPU_MEM_LEGACY, &legacy), 0);
	leak = dup(0);	/* inheritable: the copier must not hold it */
	assert_true(leak > DVXN_COP_FD);
	start(&c, 10 * SEC);
	close(leak);
	assert_int_equal(fds_above(c.pid, DVXN_COP_FD), 0);

	/* a VMM allocation on GPU 1 by its POSIX fd: the whole allocation is mapped */
	assert_int_equal(map(&c, &gpu[1], vmm.dptr + 4096, 8192, &a), 0);
	assert_int_equal(a.base, vmm.dptr);
	assert_int_equal(a.len, vmm.len);
	round_trip(&c, &a, &vmm, 1001, 1, 1);
	round_trip(&c, &a, &vmm, 3, STAGE, 2);			/* exactly one piece */
	round_trip(&c, &a, &vmm, 77, 3 * STAGE + 12345, 3);	/* four pieces */
	round_trip(&c, &a, &vmm, vmm.len - 100, 100, 4);	/* the last bytes */

	/* asked again by fd: a mapping of its own (an fd does not say which allocation) */
	assert_int_equal(map(&c, &gpu[1], vmm.dptr, vmm.len, &b), 0);
	assert_int_not_equal(b.id, a.id);
	assert_int_equal(dvxn_copier_unmap(&c, &a), 0);
	round_trip(&c, &b, &vmm, 5, 4096, 5);
	assert_int_equal(dvxn_copier_unmap(&c, &b), 0);
	{
		uint8_t x = 1;

		assert_int_equal(dvxn_copier_write(&c, &b, vmm.dptr, &x, 1), -EINVAL);
		assert_non_null(strstr(c.why, "is not mapped"));
		assert_false(c.dead);	/* a refused request is not a failed copy */
		assert_int_equal(dvxn_copier_unmap(&c, &b), -EINVAL);
	}

	/* cuMemAlloc memory on GPU 0 by its IPC handle: asked twice, one mapping, kept
	 * until both unmaps */
	assert_int_equal(map(&c, &gpu[0], legacy.dptr, legacy.len, &l), 0);
	assert_int_equal(map(&c, &gpu[0], legacy.dptr, 64, &l2), 0);
	assert_int_equal(l2.id, l.id);
	assert_int_equal(dvxn_copier_unmap(&c, &l2), 0);
	round_trip(&c, &l, &legacy, 0, legacy.len, 6);
	assert_int_equal(dvxn_copier_unmap(&c, &l), 0);
	/* the slot taken again: the old id is stale, not the new mapping */
	assert_int_equal(map(&c, &gpu[0], legacy.dptr, legacy.len, &l2), 0);
	assert_int_equal(l2.id & (DVXN_COP_MAX_MAPS - 1), l.id & (DVXN_COP_MAX_MAPS - 1));
	assert_int_not_equal(l2.id, l.id);
	{
		uint8_t x = 1;

		assert_int_equal(dvxn_copier_write(&c, &l, legacy.dptr, &x, 1), -EINVAL);
		assert_int_equal(dvxn_copier_write(&c, &l2, legacy.dptr, &x, 1), 0);
	}
	assert_int_equal(dvxn_copier_unmap(&c, &l2), 0);

	copies = c.copies;
	assert_int_equal(copies, 2 * 6 + 1);
	assert_false(c.dead);
	dvxn_copier_end(&c);
	assert_int_equal(c.pid, 0);
	assert_int_equal(dvx_gpu_mem_free(&vmm), 0);
	assert_int_equal(dvx_gpu_mem_free(&legacy), 0);
}

static void test_refusals(void **state)
{
	struct dvx_gpu_mem plain, vmm;
	struct dvxn_copier_map m;
	struct dvxn_copier c;
	uint8_t *host = dvx_test_alloc(4096, 0), x = 0;
	char path[512];

	(void)state;
	assert_int_equal(dvxn_copier_start(&c, "/nonexistent/dvx-copier", 1, STAGE, SEC), -ENOENT);
	assert_non_null(strstr(c.why, "/nonexistent/dvx-copier"));
	assert_int_equal(dvxn_copier_start(&c, DVX_COPIER, 1, 0, SEC), -EINVAL);
	assert_int_equal(dvxn_copier_path("/nonexistent/x", path, sizeof(path)), -ENOENT);
	assert_int_equal(dvxn_copier_path(DVX_COPIER, path, sizeof(path)), 0);
	/* unnamed: found from this program, ../plugins/nccl/ in the build tree */
	assert_int_equal(dvxn_copier_path(NULL, path, sizeof(path)), 0);
	assert_non_null(strstr(path, "/dvx-copier"));
	assert_int_equal(access(path, X_OK), 0);

	assert_int_equal(dvx_gpu_mem_alloc(&gpu[0], 2u << 20, 0, &plain), 0);
	assert_int_equal(dvx_gpu_mem_alloc(&gpu[0], 2u << 20, DVX_GPU_MEM_EXPORT, &vmm), 0);
	start(&c, 10 * SEC);
	assert_int_equal(map(&c, &gpu[0], (uint64_t)(uintptr_t)host, 64, &m),
			 -ENOENT);
	assert_non_null(strstr(ewhy, "not device memory"));
	assert_int_equal(map(&c, &gpu[0], vmm.dptr + 4096, vmm.len, &m), -EINVAL);
	assert_non_null(strstr(ewhy, "runs past its allocation"));
	assert_int_equal(map(&c, &gpu[0], plain.dptr, 64, &m), -EOPNOTSUPP);
	assert_non_null(strstr(ewhy, "neither by an IPC handle, a POSIX fd nor a fabric"));
	/* a copy outside its mapping is refused before the copier is asked */
	assert_int_equal(map(&c, &gpu[0], vmm.dptr, 64, &m), 0);
	assert_int_equal(dvxn_copier_write(&c, &m, vmm.dptr + vmm.len - 1, &x, 2), -EINVAL);
	assert_non_null(strstr(c.why, "outside the mapping"));
	assert_int_equal(dvxn_copier_read(&c, &m, &x, vmm.dptr - 1, 1), -EINVAL);
	/* none of it hurt the copier */
	assert_false(c.dead);
	x = 0x42;
	assert_int_equal(dvxn_copier_write(&c, &m, vmm.dptr, &x, 1), 0);
	assert_int_equal(*(uint8_t *)(uintptr_t)vmm.dptr, 0x42);
	dvxn_copier_end(&c);
	/* after the end: at once, -EIO */
	assert_int_equal(dvxn_copier_write(&c, &m, vmm.dptr, &x, 1), -EIO);
	assert_int_equal(map(&c, &gpu[0], vmm.dptr, 64, &m), -EIO);
	assert_int_equal(dvx_gpu_mem_free(&plain), 0);
	assert_int_equal(dvx_gpu_mem_free(&vmm), 0);
	dvx_test_free(host);
}

/* a copier killed (@stop 0) or stopped (@stop 1) under a mapping */
static void dies(int stop)
{
	struct dvx_gpu_mem vmm;
	struct dvxn_copier_map m;
	struct dvxn_copier c;
	uint8_t buf[256] = { 0 };
	uint64_t t0, took;
	pid_t pid;

	assert_int_equal(dvx_gpu_mem_alloc(&gpu[0], 2u << 20, DVX_GPU_MEM_EXPORT, &vmm), 0);
	start(&c, stop ? SEC / 2 : 10 * SEC);
	assert_int_equal(map(&c, &gpu[0], vmm.dptr, vmm.len, &m), 0);
	assert_int_equal(dvxn_copier_write(&c, &m, vmm.dptr, buf, sizeof(buf)), 0);
	pid = c.pid;
	assert_int_equal(kill(pid, stop ? SIGSTOP : SIGKILL), 0);
	t0 = now_ns();
	assert_int_equal(dvxn_copier_read(&c, &m, buf, vmm.dptr, sizeof(buf)), -EIO);
	took = now_ns() - t0;
	print_message("copier %s: the copy failed after %llu ms: %s\n", stop ? "stopped" : "killed",
		      (unsigned long long)(took / 1000000), c.why);
	assert_true(c.dead);
	assert_int_equal(c.pid, 0);	/* reaped */
	assert_int_equal(kill(pid, 0), -1);
	/* killed: "ended" or "took no request", as the kill meets the request */
	if (stop)
		assert_non_null(strstr(c.why, "did not answer in 500 ms"));
	assert_non_null(strstr(c.why, "signal 9"));
	if (stop)
		assert_true(took >= SEC / 2 && took < 5 * SEC);
	t0 = now_ns();
	assert_int_equal(dvxn_copier_write(&c, &m, vmm.dptr, buf, 1), -EIO);
	assert_int_equal(dvxn_copier_unmap(&c, &m), 0);	/* gone with the copier */
	assert_true(now_ns() - t0 < SEC / 10);
	dvxn_copier_end(&c);
	assert_int_equal(dvx_gpu_mem_free(&vmm), 0);
}

static void test_copier_killed(void **state)
{
	(void)state;
	dies(0);
}

static void test_copier_stopped(void **state)
{
	(void)state;
	dies(1);
}

/* the copier fails the third copy (DVX_COPIER_FAIL_AFTER, --sim): it answers, ends
 * itself (status 4), and every later call fails at once */
static void test_copy_fails(void **state)
{
	struct dvx_gpu_mem vmm;
	struct dvxn_copier_map m;
	struct dvxn_copier c;
	uint8_t buf[64] = { 0 };
	uint64_t t0;

	(void)state;
	assert_int_equal(dvx_gpu_mem_alloc(&gpu[0], 2u << 20, DVX_GPU_MEM_EXPORT, &vmm), 0);
	setenv("DVX_COPIER_FAIL_AFTER", "3", 1);
	start(&c, 10 * SEC);
	unsetenv("DVX_COPIER_FAIL_AFTER");
	assert_int_equal(map(&c, &gpu[0], vmm.dptr, vmm.len, &m), 0);
	assert_int_equal(dvxn_copier_write(&c, &m, vmm.dptr, buf, sizeof(buf)), 0);
	assert_int_equal(dvxn_copier_read(&c, &m, buf, vmm.dptr, sizeof(buf)), 0);
	assert_int_equal(dvxn_copier_write(&c, &m, vmm.dptr, buf, sizeof(buf)), -EIO);
	print_message("the third copy: %s\n", c.why);
	assert_non_null(strstr(c.why, "failed a copy"));
	assert_non_null(strstr(c.why, "DVX_COPIER_FAIL_AFTER"));
	assert_non_null(strstr(c.why, "exit status 4"));
	assert_true(c.dead);
	assert_int_equal(c.pid, 0);
	t0 = now_ns();
	assert_int_equal(dvxn_copier_read(&c, &m, buf, vmm.dptr, 1), -EIO);
	assert_int_equal(dvxn_copier_unmap(&c, &m), 0);	/* nothing is mapped any more */
	assert_true(now_ns() - t0 < SEC / 10);
	dvxn_copier_end(&c);
	assert_int_equal(dvx_gpu_mem_free(&vmm), 0);
}

/* programs that are not a copier: one that ends at once, one that is not there */
static void test_start_fails(void **state)
{
	struct dvxn_copier c;
	int before = fds_above(getpid(), 2);

	(void)state;
	assert_int_equal(dvxn_copier_start(&c, "/bin/true", 1, STAGE, 5 * SEC), -EIO);
	print_message("/bin/true as the copier: %s\n", c.why);
	/* it ends before or after the hello is sent: "ended" or "took no request" */
	assert_non_null(strstr(c.why, "exit status 0"));
	assert_true(c.dead);
	assert_int_equal(c.pid, 0);	/* reaped: no zombie */
	assert_null(c.stage);
	assert_int_equal(fds_above(getpid(), 2), before);	/* nothing left open */
	assert_int_equal(dvxn_copier_start(&c, "/nonexistent", 1, STAGE, SEC), -ENOENT);
	assert_int_equal(fds_above(getpid(), 2), before);
	dvxn_copier_end(&c);
}

/* a child forked with the copier up and ending with exit() leaves it alone; the child's
 * calls fail at once; with SIGCHLD ignored a copier that is killed is still told */
static void test_fork_and_sigchld(void **state)
{
	struct dvx_gpu_mem vmm;
	struct dvxn_copier_map m;
	struct dvxn_copier c;
	uint8_t x = 7, y = 0;
	pid_t pid, cp;
	int st;

	(void)state;
	assert_int_equal(dvx_gpu_mem_alloc(&gpu[0], 2u << 20, DVX_GPU_MEM_EXPORT, &vmm), 0);
	start(&c, 10 * SEC);
	assert_int_equal(map(&c, &gpu[0], vmm.dptr, vmm.len, &m), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int bad = dvxn_copier_write(&c, &m, vmm.dptr, &x, 1) != -EIO;

		dvxn_copier_end(&c);	/* not the child's: no QUIT, no signal */
		exit(bad);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(dvxn_copier_write(&c, &m, vmm.dptr, &x, 1), 0);
	assert_int_equal(dvxn_copier_read(&c, &m, &y, vmm.dptr, 1), 0);
	assert_int_equal(y, 7);
	dvxn_copier_end(&c);

	signal(SIGCHLD, SIG_IGN);
	start(&c, 10 * SEC);
	assert_int_equal(map(&c, &gpu[0], vmm.dptr, vmm.len, &m), 0);
	cp = c.pid;
	assert_int_equal(kill(cp, SIGKILL), 0);
	assert_int_equal(dvxn_copier_read(&c, &m, &y, vmm.dptr, 1), -EIO);
	print_message("SIGCHLD ignored: %s\n", c.why);
	assert_non_null(strstr(c.why, "reaped elsewhere"));
	dvxn_copier_end(&c);
	signal(SIGCHLD, SIG_DFL);
	assert_int_equal(dvx_gpu_mem_free(&vmm), 0);
}

/* four threads, each its own range of one allocation, 200 round trips each */
struct worker {
	struct dvxn_copier *c;
	const struct dvxn_copier_map *m;
	uint64_t dptr;
	unsigned seed;
	int bad;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	uint8_t src[3000], back[3000];
	unsigned i;

	for (i = 0; i < 200 && !w->bad; i++) {
		size_t n = 1 + (i * 997u + w->seed) % sizeof(src);

		fill(src, n, w->seed + i);
		if (dvxn_copier_write(w->c, w->m, w->dptr, src, n) ||
		    dvxn_copier_read(w->c, w->m, back, w->dptr, n) || memcmp(src, back, n))
			w->bad = 1;
	}
	return NULL;
}

static void test_threads(void **state)
{
	struct dvx_gpu_mem vmm;
	struct dvxn_copier_map m;
	struct dvxn_copier c;
	struct worker w[4];
	pthread_t th[4];
	int i;

	(void)state;
	assert_int_equal(dvx_gpu_mem_alloc(&gpu[1], 2u << 20, DVX_GPU_MEM_EXPORT, &vmm), 0);
	start(&c, 10 * SEC);
	assert_int_equal(map(&c, &gpu[1], vmm.dptr, vmm.len, &m), 0);
	for (i = 0; i < 4; i++) {
		w[i] = (struct worker){ &c, &m, vmm.dptr + (uint64_t)i * 65536, (unsigned)i * 11, 0 };
		assert_int_equal(pthread_create(&th[i], NULL, work, &w[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(w[i].bad, 0);
	}
	assert_int_equal(c.copies, 4 * 200 * 2);
	dvxn_copier_end(&c);
	assert_int_equal(dvx_gpu_mem_free(&vmm), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bytes_both_ways),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_copier_killed),
		cmocka_unit_test(test_copier_stopped),
		cmocka_unit_test(test_copy_fails),
		cmocka_unit_test(test_start_fails),
		cmocka_unit_test(test_fork_and_sigchld),
		cmocka_unit_test(test_threads),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
