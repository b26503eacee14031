// SPDX-License-Identifier: MIT
/*
 * hal/host.c - the host wrappers (dvx/hal/host.h): memory, PCI topology, limits,
 * the clock. These calls have no handle, so nothing is recorded in a diag.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include <dvx/hal/host.h>

#define HAL_HOST(hal) ((hal) ? (hal)->host : NULL)

int dvx_hal_mem_alloc(const struct dvx_hal *hal, uint64_t len, uint64_t align, int numa_node,
		      uint32_t flags, struct dvx_hal_mem *mem)
{
	const struct dvx_hal_host_ops *ops = HAL_HOST(hal);

	if (!hal || !mem || !len || (align & (align - 1)))
		return -EINVAL;
	if (!ops || !ops->mem_alloc)
		return -ENOSYS;
	return ops->mem_alloc(hal, len, align, numa_node, flags, mem);
}

int dvx_hal_mem_free(const struct dvx_hal *hal, struct dvx_hal_mem *mem)
{
	const struct dvx_hal_host_ops *ops = HAL_HOST(hal);

	if (!hal || !mem)
		return -EINVAL;
	if (!ops || !ops->mem_free)
		return -ENOSYS;
	return ops->mem_free(hal, mem);
}

int dvx_hal_pci_list(const struct dvx_hal *hal, uint32_t class_mask, uint32_t class_value,
		     struct dvx_hal_pci_dev *devs, unsigned max, unsigned *count)
{
	const struct dvx_hal_host_ops *ops = HAL_HOST(hal);

	if (!hal || !count || (max && !devs))
		return -EINVAL;
	if (!ops || !ops->pci_list)
		return -ENOSYS;
	*count = 0;
	return ops->pci_list(hal, class_mask, class_value, devs, max, count);
}

int dvx_hal_limits(const struct dvx_hal *hal, struct dvx_hal_limits *lim)
{
	const struct dvx_hal_host_ops *ops = HAL_HOST(hal);

	if (!hal || !lim)
		return -EINVAL;
	if (!ops || !ops->limits)
		return -ENOSYS;
	return ops->limits(hal, lim);
}

uint64_t dvx_hal_now_ns(const struct dvx_hal *hal)
{
	const struct dvx_hal_host_ops *ops = HAL_HOST(hal);
	struct timespec ts;

	if (ops && ops->now_ns)
		return ops->now_ns(hal);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#ifndef CONFIG_DVX_RDMA
const struct dvx_hal *dvx_hal_linux(void)
{
	return NULL;
}
#endif
