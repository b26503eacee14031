// SPDX-License-Identifier: MIT
/*
 * hal/dpdk.c - hugepage host memory from DPDK's EAL. The only file that includes
 * <rte_*.h>; built when CONFIG_DVX_DPDK=y and linked into a program only when it calls
 * dvx_dpdk_enable() (hal/hostmem.c reaches it through the table installed there).
 *
 * dvx never initialises the EAL: an application that runs DPDK owns it (its
 * arguments, its hugepage mounts, its process type). dvx only borrows memzones from
 * an EAL that is already up.
 *
 * Telling whether it is up. DPDK has no "is initialised" call, and most of its
 * predicates answer from static defaults before rte_eal_init() has run:
 * rte_eal_process_type() says PRIMARY and rte_eal_has_hugepages() says yes. What does
 * change is visible through public calls only:
 *   1. rte_lcore_count() is 0 until rte_eal_init() has detected the CPUs;
 *   2. rte_eal_iova_mode() is RTE_IOVA_DC ("don't care") until it has chosen PA or VA;
 *   3. rte_memseg_list_walk() finds no memseg list until the memory subsystem is up
 *      (the lists live in a zero-filled early config before that, which the walk
 *      skips; it is only reached once 1 and 2 hold anyway).
 * All three must hold, and rte_eal_has_hugepages() must be true: an EAL started with
 * --no-huge hands out ordinary pages, which MAP_HUGETLB can beat. An application that
 * has torn its EAL down with rte_eal_cleanup() must not ask dvx for hugepages after.
 */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_memory.h>
#include <rte_memzone.h>

#include "host_priv.h"

static int count_internal_msl(const struct rte_memseg_list *msl, void *arg)
{
	if (!msl->external)
		(*(unsigned *)arg)++;
	return 0;
}

static bool eal_ready(void)
{
	unsigned lists = 0;

	if (rte_lcore_count() == 0)
		return false;
	if (rte_eal_iova_mode() == RTE_IOVA_DC)
		return false;
	if (!rte_eal_has_hugepages())
		return false;
	rte_memseg_list_walk(count_internal_msl, &lists);
	return lists > 0;
}

static int mem_alloc(uint64_t len, uint64_t align, int numa_node, void **addr,
		     uint64_t *page_size, void **handle)
{
	static unsigned seq;
	char name[RTE_MEMZONE_NAMESIZE];
	const struct rte_memzone *mz;

	if (!len || len > SIZE_MAX || align > UINT32_MAX || !addr || !page_size || !handle)
		return -EINVAL;
	/* memzone names are process-wide (and shared with secondary processes) */
	snprintf(name, sizeof(name), "dvx-%ld-%u", (long)getpid(),
		 __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
	mz = rte_memzone_reserve_aligned(name, (size_t)len,
					 numa_node < 0 ? SOCKET_ID_ANY : numa_node, 0,
					 (unsigned)align);
	if (!mz)
		return rte_errno > 0 ? -rte_errno : -ENOMEM;
	*addr = mz->addr;
	*page_size = mz->hugepage_sz;
	*handle = (void *)(uintptr_t)mz;
	return 0;
}

static int mem_free(void *handle)
{
	int err;

	if (!handle)
		return -EINVAL;
	err = rte_memzone_free((const struct rte_memzone *)handle);
	return err > 0 ? -err : err;
}

static const struct dvx_dpdk_ops dpdk_ops = {
	.eal_ready = eal_ready,
	.mem_alloc = mem_alloc,
	.mem_free = mem_free,
};

int dvx_dpdk_enable(void)
{
	dvx_host_set_dpdk(&dpdk_ops);
	return 0;
}
