// SPDX-License-Identifier: MIT
/*
 * hal/hostmem.c - the host-side ops every backend shares: host memory (DPDK
 * hugepages, MAP_HUGETLB, ordinary pages), PCI topology, limits, the clock and random
 * bytes; the shared host table (with the sockets of hal/net.c) and the host-only backend.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <linux/mempolicy.h>

#include "host_priv.h"
#include "sysfs.h"

#ifndef MAP_HUGETLB
#define MAP_HUGETLB 0x40000
#endif

static uint64_t host_page_size(void)
{
	long p = sysconf(_SC_PAGESIZE);

	return p > 0 ? (uint64_t)p : 4096u;
}

/* the default hugepage size, from /proc/meminfo ("Hugepagesize:    2048 kB") */
static uint64_t default_hugepage_size(void)
{
	char line[128];
	unsigned long long kb;
	uint64_t sz = 0;
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Hugepagesize: %llu kB", &kb) == 1) {
			sz = (uint64_t)kb * 1024u;
			break;
		}
	}
	fclose(f);
	return sz;
}

/* Prefer @node for the pages of [addr, addr+len) that are not yet faulted in.
 * Best effort: without NUMA support in the kernel the call fails and nothing changes. */
static void bind_node(void *addr, uint64_t len, int node)
{
	unsigned long mask[16];
	const unsigned bits = 8 * sizeof(unsigned long);

	if (node < 0 || (unsigned)node >= DVX_ARRAY_SIZE(mask) * bits)
		return;
	memset(mask, 0, sizeof(mask));
	mask[(unsigned)node / bits] = 1ul << ((unsigned)node % bits);
#ifdef SYS_mbind
	/* maxnode counts one past the last bit the kernel should read */
	(void)syscall(SYS_mbind, addr, (unsigned long)len, MPOL_PREFERRED, mask,
		      (unsigned long)(DVX_ARRAY_SIZE(mask) * bits + 1), 0ul);
#else
	(void)addr;
	(void)len;
#endif
}

/*
 * Map @len bytes (a multiple of @pgsz) aligned to @align (a power of two), with the
 * given extra mmap flags. Over-maps by @align when it exceeds the page size and trims
 * both ends, which stay multiples of @pgsz because @align is.
 */
static void *map_aligned(uint64_t len, uint64_t align, uint64_t pgsz, int extra_flags)
{
	uint64_t maplen = len + (align > pgsz ? align : 0);
	uintptr_t base, start;
	void *p;

	p = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | extra_flags,
		 -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (align <= pgsz)
		return p;
	base = (uintptr_t)p;
	start = (base + (align - 1)) & ~(uintptr_t)(align - 1);
	if (start > base)
		munmap(p, start - base);
	if (base + maplen > start + len)
		munmap((void *)(start + len), base + maplen - (start + len));
	return (void *)start;
}

int dvx_host_mem_alloc(const struct dvx_hal *hal, uint64_t len, uint64_t align, int numa_node,
		       uint32_t flags, struct dvx_hal_mem *mem)
{
	uint64_t pgsz, maplen;
	void *addr, *handle;
	int err;

	(void)hal;
	if (!mem || !len || (align & (align - 1)) || numa_node < -1 ||
	    (flags & ~(uint32_t)(DVX_MEM_F_HUGE | DVX_MEM_F_HUGE_ONLY | DVX_MEM_F_ZERO)))
		return -EINVAL;
	if (flags & DVX_MEM_F_HUGE_ONLY)
		flags |= DVX_MEM_F_HUGE;
	memset(mem, 0, sizeof(*mem));
	mem->numa_node = numa_node;
	mem->len = len;

	if (flags & DVX_MEM_F_HUGE) {
		if (dvx_dpdk_eal_ready()) {
			err = dvx_dpdk_mem_alloc(len, align ? align : host_page_size(), numa_node,
						 &addr, &pgsz, &handle);
			if (err == 0) {
				if (flags & DVX_MEM_F_ZERO)
					memset(addr, 0, len);
				mem->addr = addr;
				mem->priv = handle;
				mem->page_size = pgsz;
				mem->kind = DVX_MEM_HUGE_DPDK;
				return 0;
			}
		}
		pgsz = default_hugepage_size();
		if (pgsz && len <= UINT64_MAX - pgsz && (!align || align <= UINT64_MAX / 2)) {
			maplen = DVX_ALIGN_UP(len, pgsz);
			addr = map_aligned(maplen, align, pgsz, MAP_HUGETLB);
			if (addr) {
				bind_node(addr, maplen, numa_node);
				mem->addr = addr;
				mem->page_size = pgsz;
				mem->kind = DVX_MEM_HUGE_MMAP;
				return 0;
			}
		}
		if (flags & DVX_MEM_F_HUGE_ONLY)
			return -ENOMEM;
	}

	pgsz = host_page_size();
	if (len > UINT64_MAX - pgsz || align > UINT64_MAX / 2)
		return -ENOMEM;
	maplen = DVX_ALIGN_UP(len, pgsz);
	addr = map_aligned(maplen, align, pgsz, 0);
	if (!addr)
		return -ENOMEM;
	bind_node(addr, maplen, numa_node);
	mem->addr = addr;
	mem->page_size = pgsz;
	mem->kind = DVX_MEM_PAGES;
	return 0;
}

int dvx_host_mem_free(const struct dvx_hal *hal, struct dvx_hal_mem *mem)
{
	int err = 0;

	(void)hal;
	if (!mem || !mem->addr || !mem->page_size)
		return -EINVAL;
	switch (mem->kind) {
	case DVX_MEM_HUGE_DPDK:
		err = dvx_dpdk_mem_free(mem->priv);
		break;
	case DVX_MEM_HUGE_MMAP:
	case DVX_MEM_PAGES:
		if (munmap(mem->addr, DVX_ALIGN_UP(mem->len, mem->page_size)))
			err = -errno;
		break;
	default:
		return -EINVAL;
	}
	if (err)
		return err;
	memset(mem, 0, sizeof(*mem));
	return 0;
}

int dvx_host_pci_list(const struct dvx_hal *hal, uint32_t class_mask, uint32_t class_value,
		      struct dvx_hal_pci_dev *devs, unsigned max, unsigned *count)
{
	(void)hal;
	return dvx_sysfs_pci_list(DVX_SYSFS_ROOT, class_mask, class_value, devs, max, count);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" -> 16 bytes */
static int parse_uuid(const char *t, size_t n, uint8_t out[16])
{
	unsigned k = 0;
	size_t i;
	int hi = -1;

	for (i = 0; i < n && k < 16; i++) {
		int v = hexval(t[i]);

		if (t[i] == '-')
			continue;
		if (v < 0)
			break;
		if (hi < 0) {
			hi = v;
		} else {
			out[k++] = (uint8_t)(hi << 4 | v);
			hi = -1;
		}
	}
	return k == 16 ? 0 : -EINVAL;
}

int dvx_host_ident(const struct dvx_hal *hal, struct dvx_hal_host_ident *id)
{
	struct utsname u;
	char t[64];
	ssize_t n;
	size_t l;
	int fd, err;

	(void)hal;
	memset(id, 0, sizeof(*id));
	if (uname(&u))
		return -errno;
	l = strnlen(u.nodename, sizeof(id->hostname) - 1);
	memcpy(id->hostname, u.nodename, l);
	fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno == -EACCES ? -EACCES : -ENOENT;
	do {
		n = read(fd, t, sizeof(t));
	} while (n < 0 && errno == EINTR);
	err = n < 0 ? -errno : 0;
	close(fd);
	if (err)
		return err;
	if (parse_uuid(t, (size_t)n, id->boot_id))
		return -ENOENT;
	id->pid = (int32_t)getpid();
	id->uid = (uint32_t)geteuid();
	return 0;
}

/* The kernel's generator; the wrapper checked @len (1..DVX_HAL_RANDOM_MAX), which
 * getrandom() answers in one piece once its pool is up, but a short answer is carried
 * on all the same. */
int dvx_host_random_bytes(const struct dvx_hal *hal, void *buf, size_t len)
{
	uint8_t *p = buf;
	size_t done = 0;
	long n;

	(void)hal;
	while (done < len) {
		n = (long)getrandom(p + done, len - done, 0u);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		done += (size_t)n;
	}
	return 0;
}

int dvx_host_limits(const struct dvx_hal *hal, struct dvx_hal_limits *lim)
{
	struct rlimit rl;

	(void)hal;
	if (!lim)
		return -EINVAL;
	if (getrlimit(RLIMIT_MEMLOCK, &rl))
		return -errno;
	lim->memlock_cur = rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : (uint64_t)rl.rlim_cur;
	lim->memlock_max = rl.rlim_max == RLIM_INFINITY ? UINT64_MAX : (uint64_t)rl.rlim_max;
	lim->page_size = host_page_size();
	return 0;
}

uint64_t dvx_host_now_ns(const struct dvx_hal *hal)
{
	struct timespec ts;

	(void)hal;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* the DPDK table dvx_dpdk_enable() installed, or NULL: DPDK absent */
static const struct dvx_dpdk_ops *dpdk_ops;

void dvx_host_set_dpdk(const struct dvx_dpdk_ops *ops)
{
	__atomic_store_n(&dpdk_ops, ops, __ATOMIC_RELEASE);
}

bool dvx_dpdk_eal_ready(void)
{
	const struct dvx_dpdk_ops *o = __atomic_load_n(&dpdk_ops, __ATOMIC_ACQUIRE);

	return o && o->eal_ready();
}

int dvx_dpdk_mem_alloc(uint64_t len, uint64_t align, int numa_node, void **addr,
		       uint64_t *page_size, void **handle)
{
	const struct dvx_dpdk_ops *o = __atomic_load_n(&dpdk_ops, __ATOMIC_ACQUIRE);

	return o ? o->mem_alloc(len, align, numa_node, addr, page_size, handle) : -ENOSYS;
}

int dvx_dpdk_mem_free(void *handle)
{
	const struct dvx_dpdk_ops *o = __atomic_load_n(&dpdk_ops, __ATOMIC_ACQUIRE);

	if (!handle)
		return -EINVAL;
	return o ? o->mem_free(handle) : -ENOSYS;
}

#ifndef CONFIG_DVX_DPDK
int dvx_dpdk_enable(void)
{
	return -ENOTSUP;	/* built without DPDK */
}
#endif

const struct dvx_hal_host_ops dvx_host_ops = {
	.mem_alloc = dvx_host_mem_alloc,
	.mem_free = dvx_host_mem_free,
	.pci_list = dvx_host_pci_list,
	.limits = dvx_host_limits,
	.now_ns = dvx_host_now_ns,
	.sock_listen = dvx_host_sock_listen,
	.sock_connect = dvx_host_sock_connect,
	.sock_error = dvx_host_sock_error,
	.sock_accept = dvx_host_sock_accept,
	.sock_name = dvx_host_sock_name,
	.sock_send = dvx_host_sock_send,
	.sock_recv = dvx_host_sock_recv,
	.sock_poll = dvx_host_sock_poll,
	.sock_close = dvx_host_sock_close,
	.sock_unlink = dvx_host_sock_unlink,
	.sleep_ns = dvx_host_sleep_ns,
	.sock_send_fds = dvx_host_sock_send_fds,
	.sock_recv_fds = dvx_host_sock_recv_fds,
	.sock_cred = dvx_host_sock_cred,
	.fd_close = dvx_host_fd_close,
	.host_ident = dvx_host_ident,
	.random_bytes = dvx_host_random_bytes,
};

/* the host-only backend: this table and nothing else, in every configuration */
static const struct dvx_hal host_hal = {
	.host = &dvx_host_ops,
	.name = "host",
};

const struct dvx_hal *dvx_hal_host(void)
{
	return &host_hal;
}
