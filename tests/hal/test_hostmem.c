// SPDX-License-Identifier: MIT
/*
 * hal/hostmem.c: host memory (ordinary pages, hugepages with fallback, alignment,
 * zeroing), limits and the clock, on this machine.
 */
#include <errno.h>
#include <sys/resource.h>
#include <unistd.h>

#include "../lib/dvx_test.h"

#include "../../hal/host_priv.h"

/* free default-size hugepages right now, from /proc/meminfo */
static long hugepages_free(void)
{
	char line[128];
	long n = 0;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "HugePages_Free: %ld", &n) == 1)
			break;
	fclose(f);
	return n;
}

static int all_zero(const uint8_t *p, uint64_t n)
{
	uint64_t i;

	for (i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

static void test_pages(void **state)
{
	struct dvx_hal_mem mem;
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);

	(void)state;
	assert_int_equal(dvx_host_mem_alloc(NULL, 10000, 0, -1, DVX_MEM_F_ZERO, &mem), 0);
	assert_non_null(mem.addr);
	assert_int_equal(mem.kind, DVX_MEM_PAGES);
	assert_int_equal(mem.page_size, pg);
	assert_int_equal(mem.len, 10000);
	assert_int_equal(mem.numa_node, -1);
	assert_int_equal((uintptr_t)mem.addr % pg, 0);
	assert_true(all_zero(mem.addr, 10000));
	memset(mem.addr, 0x5a, 10000);		/* writable, every byte */
	assert_int_equal(dvx_host_mem_free(NULL, &mem), 0);
	assert_null(mem.addr);			/* the descriptor is cleared */
	assert_int_equal(dvx_host_mem_free(NULL, &mem), -EINVAL);	/* nothing held */
}

static void test_alignment(void **state)
{
	static const uint64_t aligns[] = { 64, 4096, 65536, 1u << 20, 1u << 21 };
	static const uint64_t lens[] = { 1, 4096, 12345, 3u << 20 };
	struct dvx_hal_mem mem;
	size_t i, j;

	(void)state;
	for (i = 0; i < DVX_ARRAY_SIZE(aligns); i++) {
		for (j = 0; j < DVX_ARRAY_SIZE(lens); j++) {
			assert_int_equal(dvx_host_mem_alloc(NULL, lens[j], aligns[i], 0,
							    DVX_MEM_F_ZERO, &mem), 0);
			assert_int_equal((uintptr_t)mem.addr % aligns[i], 0);
			assert_int_equal(mem.numa_node, 0);
			assert_true(all_zero(mem.addr, lens[j]));
			((volatile uint8_t *)mem.addr)[lens[j] - 1] = 1;
			assert_int_equal(dvx_host_mem_free(NULL, &mem), 0);
		}
	}
}

static void test_bad_args(void **state)
{
	struct dvx_hal_mem mem;

	(void)state;
	assert_int_equal(dvx_host_mem_alloc(NULL, 0, 0, -1, 0, &mem), -EINVAL);
	assert_int_equal(dvx_host_mem_alloc(NULL, 4096, 3, -1, 0, &mem), -EINVAL);
	assert_int_equal(dvx_host_mem_alloc(NULL, 4096, 0, -2, 0, &mem), -EINVAL);
	assert_int_equal(dvx_host_mem_alloc(NULL, 4096, 0, -1, 1u << 7, &mem), -EINVAL);
	assert_int_equal(dvx_host_mem_alloc(NULL, 4096, 0, -1, 0, NULL), -EINVAL);
	assert_int_equal(dvx_host_mem_alloc(NULL, UINT64_MAX - 10, 0, -1, 0, &mem), -ENOMEM);
	assert_int_equal(dvx_host_mem_free(NULL, NULL), -EINVAL);
}

/* Without free hugepages (the usual CI machine), HUGE falls back to ordinary pages and
 * HUGE_ONLY fails cleanly; with them, both get hugepages of the default size. DPDK's
 * EAL is never up in this test, so it is never the source. */
static void test_huge(void **state)
{
	struct dvx_hal_mem mem;
	long free_huge = hugepages_free();
	int err;

	(void)state;
	assert_false(dvx_dpdk_eal_ready());
	assert_int_equal(dvx_host_mem_alloc(NULL, 1u << 20, 0, -1, DVX_MEM_F_HUGE | DVX_MEM_F_ZERO,
					    &mem), 0);
	assert_true(mem.kind != DVX_MEM_HUGE_DPDK);
	if (free_huge == 0) {
		assert_int_equal(mem.kind, DVX_MEM_PAGES);
		assert_int_equal(mem.page_size, (uint64_t)sysconf(_SC_PAGESIZE));
	} else if (mem.kind == DVX_MEM_HUGE_MMAP) {
		assert_true(mem.page_size >= (2u << 20));
		assert_int_equal((uintptr_t)mem.addr % mem.page_size, 0);
	}
	assert_true(all_zero(mem.addr, 1u << 20));
	assert_int_equal(dvx_host_mem_free(NULL, &mem), 0);

	err = dvx_host_mem_alloc(NULL, 1u << 20, 0, -1, DVX_MEM_F_HUGE_ONLY, &mem);
	if (free_huge == 0) {
		assert_int_equal(err, -ENOMEM);
		assert_null(mem.addr);
	} else {
		assert_int_equal(err, 0);
		assert_int_equal(mem.kind, DVX_MEM_HUGE_MMAP);
		assert_int_equal(dvx_host_mem_free(NULL, &mem), 0);
	}
	if (free_huge == 0) {
		print_message("no free hugepages here: checked the fallback paths only\n");
		return;
	}
	/* alignment above the hugepage size: over-mapped and trimmed on hugepage
	 * boundaries; a length that is not a multiple of the page */
	if (free_huge >= 8) {
		assert_int_equal(dvx_host_mem_alloc(NULL, 3u << 20, 8u << 20, 0,
						    DVX_MEM_F_HUGE_ONLY, &mem), 0);
		assert_int_equal(mem.kind, DVX_MEM_HUGE_MMAP);
		assert_int_equal((uintptr_t)mem.addr % (8u << 20), 0);
		memset(mem.addr, 1, 3u << 20);
		assert_int_equal(dvx_host_mem_free(NULL, &mem), 0);
		assert_int_equal(hugepages_free(), free_huge);	/* all given back */
	}
}

static void test_dpdk_absent(void **state)
{
	void *addr = NULL, *handle = NULL;
	uint64_t pg = 0;

	(void)state;
	/* DPDK is opt-in: before dvx_dpdk_enable() it is absent whatever the build;
	 * after it (with DPDK built in) the EAL is still not up (this test never starts
	 * it). Either way nothing is reserved. */
	assert_false(dvx_dpdk_eal_ready());
	assert_int_equal(dvx_dpdk_mem_alloc(4096, 64, -1, &addr, &pg, &handle), -ENOSYS);
	assert_int_equal(dvx_dpdk_mem_free(&pg), -ENOSYS);
	assert_int_equal(dvx_dpdk_mem_free(NULL), -EINVAL);
#ifndef CONFIG_DVX_DPDK
	assert_int_equal(dvx_dpdk_enable(), -ENOTSUP);
#else
	assert_int_equal(dvx_dpdk_enable(), 0);
	assert_false(dvx_dpdk_eal_ready());
	assert_int_equal(dvx_dpdk_mem_free(NULL), -EINVAL);
	dvx_host_set_dpdk(NULL);
#endif
	(void)addr;
	(void)pg;
	(void)handle;
}

static void test_limits_clock(void **state)
{
	struct dvx_hal_limits lim;
	struct rlimit rl;
	uint64_t a, b;

	(void)state;
	assert_int_equal(dvx_host_limits(NULL, &lim), 0);
	assert_int_equal(getrlimit(RLIMIT_MEMLOCK, &rl), 0);
	if (rl.rlim_cur == RLIM_INFINITY)
		assert_true(lim.memlock_cur == UINT64_MAX);
	else
		assert_int_equal(lim.memlock_cur, rl.rlim_cur);
	assert_int_equal(lim.page_size, (uint64_t)sysconf(_SC_PAGESIZE));
	assert_int_equal(dvx_host_limits(NULL, NULL), -EINVAL);

	a = dvx_host_now_ns(NULL);
	usleep(2000);
	b = dvx_host_now_ns(NULL);
	assert_true(b > a);
	assert_true(b - a >= 1000000);
	dvx_host_cpu_relax();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pages),
		cmocka_unit_test(test_alignment),
		cmocka_unit_test(test_bad_args),
		cmocka_unit_test(test_huge),
		cmocka_unit_test(test_dpdk_absent),
		cmocka_unit_test(test_limits_clock),
	};

	return cmocka_run_group_tests_name("hal-hostmem", tests, NULL, NULL);
}
