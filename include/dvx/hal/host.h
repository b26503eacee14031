/* SPDX-License-Identifier: MIT */
/*
 * dvx/hal/host.h - the hal's host table: host memory for callers who want it, PCI
 * topology, process limits and the clock timeouts are measured with.
 *
 * The library itself never allocates host memory; tools, tests and applications use
 * dvx_hal_mem_alloc() to get regions they then hand to dvx objects.
 */
#ifndef DVX_HAL_HOST_H
#define DVX_HAL_HOST_H

#include <dvx/hal/hal.h>

DVX_BEGIN_DECLS

enum dvx_mem_kind {
	DVX_MEM_PAGES = 0,		/* ordinary anonymous pages */
	DVX_MEM_HUGE_DPDK = 1,		/* hugepages from DPDK's EAL (rte_memzone) */
	DVX_MEM_HUGE_MMAP = 2,		/* hugepages mapped with MAP_HUGETLB */
};
enum {
	DVX_MEM_F_HUGE = 1u << 0,	/* prefer hugepages (DPDK if its EAL is up, else MAP_HUGETLB) */
	DVX_MEM_F_HUGE_ONLY = 1u << 1,	/* fail rather than fall back to ordinary pages */
	DVX_MEM_F_ZERO = 1u << 2,	/* zero the memory */
};

/**
 * struct dvx_hal_mem - host memory handed out by the hal for the caller to pass to
 * dvx objects as regions. The library itself never calls this; tools, tests and
 * applications do.
 */
struct dvx_hal_mem {
	void *priv;
	void *addr;
	uint64_t len;
	uint32_t kind;		/* enum dvx_mem_kind */
	int32_t numa_node;	/* node the memory was asked for, -1 for any */
	uint64_t page_size;
};

/**
 * struct dvx_hal_pci_dev - a PCI function the hal knows of (NICs, GPUs).
 * @pci:	PCI address "dddd:bb:dd.f"
 * @vendor_id:	PCI vendor id
 * @device_id:	PCI device id
 * @class_code:	PCI class code (0x030200 = 3D controller, 0x020700 = InfiniBand, ...)
 * @numa_node:	NUMA node, -1 if unknown
 * @path:	realpath of the function's sysfs directory
 *		("/sys/devices/pci0000:00/0000:00:01.0/.../0000:3b:00.0"): the bridges from
 *		the host bridge down, so the longer the common prefix of two functions'
 *		paths, the nearer they are; empty if unknown
 */
struct dvx_hal_pci_dev {
	char pci[DVX_HAL_PCI_MAX];
	uint32_t vendor_id;
	uint32_t device_id;
	uint32_t class_code;
	int32_t numa_node;
	char path[192];
};

/** struct dvx_hal_limits - process limits that matter to registrations. */
struct dvx_hal_limits {
	uint64_t memlock_cur;	/* RLIMIT_MEMLOCK soft limit, UINT64_MAX for unlimited */
	uint64_t memlock_max;	/* hard limit */
	uint64_t page_size;	/* host page size */
};

/**
 * struct dvx_hal_host_ops - a backend's host entry points. A NULL entry means the
 * backend does not provide the call; the wrappers then return -ENOSYS.
 *
 * pci_list writes at most @max entries and sets *@count to the number present, which
 * may exceed @max: call with max 0 to size the array.
 */
struct dvx_hal_host_ops {
	int (*mem_alloc)(const struct dvx_hal *hal, uint64_t len, uint64_t align,
			 int numa_node, uint32_t flags, struct dvx_hal_mem *mem);
	int (*mem_free)(const struct dvx_hal *hal, struct dvx_hal_mem *mem);
	int (*pci_list)(const struct dvx_hal *hal, uint32_t class_mask, uint32_t class_value,
			struct dvx_hal_pci_dev *devs, unsigned max, unsigned *count);
	int (*limits)(const struct dvx_hal *hal, struct dvx_hal_limits *lim);
	uint64_t (*now_ns)(const struct dvx_hal *hal);

};

/**
 * dvx_hal_mem_alloc(), dvx_hal_mem_free(), dvx_hal_pci_list(), dvx_hal_limits() - host
 * memory, PCI topology and process limits; wrappers of the struct dvx_hal_host_ops entries
 * mem_alloc, mem_free, pci_list and limits.
 * @hal:	the backend instance
 * @len:	mem_alloc: bytes wanted (not 0)
 * @align:	mem_alloc: alignment, a power of two or 0 for the backend's default
 * @numa_node:	mem_alloc: node to allocate on, -1 for any
 * @flags:	mem_alloc: DVX_MEM_F_* (hugepages, hugepages only, zeroed)
 * @mem:	mem_alloc: caller storage for the handle (address, length, kind, page
 *		size); mem_free: that handle
 * @class_mask:	pci_list: PCI class bits compared
 * @class_value: pci_list: the value they must have
 * @devs:	pci_list: array of @max entries to fill, may be NULL when @max is 0
 * @max:	pci_list: entries @devs has room for
 * @count:	pci_list: set to the number of matching functions, which may exceed @max
 * @lim:	limits: caller storage for the process limits (RLIMIT_MEMLOCK, page size)
 *
 * mem_alloc hands host memory to the caller, who owns it until mem_free; the library
 * itself never calls it. Common contract: a NULL @hal, a backend without ops or a bad
 * argument (NULL output, @len 0, @align not a power of two, @max > 0 with no @devs) is
 * -EINVAL; an entry the backend lacks is -ENOSYS; otherwise the backend's negative
 * errno. These calls have no device, so nothing is recorded in a diag.
 *
 * Context: process context; thread-safe. Return: 0 or a negative errno.
 */
int dvx_hal_mem_alloc(const struct dvx_hal *hal, uint64_t len, uint64_t align, int numa_node,
		      uint32_t flags, struct dvx_hal_mem *mem);
int dvx_hal_mem_free(const struct dvx_hal *hal, struct dvx_hal_mem *mem);
int dvx_hal_pci_list(const struct dvx_hal *hal, uint32_t class_mask, uint32_t class_value,
		     struct dvx_hal_pci_dev *devs, unsigned max, unsigned *count);
int dvx_hal_limits(const struct dvx_hal *hal, struct dvx_hal_limits *lim);

/**
 * dvx_hal_now_ns() - the backend's monotonic clock; wrapper of the struct dvx_hal_host_ops
 * entry now_ns.
 * @hal:	the backend instance (may be NULL)
 *
 * Timeouts are measured with it, so a simulated backend can run its own time. Without
 * a backend or the entry it reads CLOCK_MONOTONIC.
 *
 * Context: any; thread-safe. Return: nanoseconds from an arbitrary origin.
 */
uint64_t dvx_hal_now_ns(const struct dvx_hal *hal);

DVX_END_DECLS

#endif /* DVX_HAL_HOST_H */
