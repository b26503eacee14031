/* SPDX-License-Identifier: MIT */
/*
 * hal/host_priv.h - private to hal/: the host-side ops every backend shares (host memory,
 * PCI topology, process limits, the clock in hal/hostmem.c; stream sockets and sleeping
 * in hal/net.c) and the small DPDK seam under them.
 *
 * The dvx_host_* functions have the signatures of the struct dvx_hal_host_ops entries, so
 * a backend can put them straight into its ops table (linux does) or wrap them (the
 * mock logs and fault-injects, then calls them).
 */
#ifndef DVX_HAL_HOST_PRIV_H
#define DVX_HAL_HOST_PRIV_H

#include <stdbool.h>

#include <dvx/hal.h>

/**
 * dvx_host_mem_alloc() - host memory for queues and buffers (the mem_alloc op).
 * @hal:	unused (any backend)
 * @len:	bytes wanted (> 0)
 * @align:	power-of-two alignment; 0 means the page size
 * @numa_node:	node to place the memory on (best effort), -1 for any
 * @flags:	DVX_MEM_F_*
 * @mem:	filled: addr, len, kind, numa_node, page_size, priv
 *
 * With DVX_MEM_F_HUGE: DPDK hugepages (rte_memzone) when dvx was built with DPDK and
 * the application has initialised DPDK's EAL with hugepages, else MAP_HUGETLB pages
 * of the default hugepage size, else (unless DVX_MEM_F_HUGE_ONLY) ordinary pages.
 * Mapped memory is bound to @numa_node with mbind(MPOL_PREFERRED) before it is
 * touched, when the kernel allows. Anonymous mappings come zeroed from the kernel;
 * DPDK memory is cleared when DVX_MEM_F_ZERO is given.
 *
 * Return: 0; -EINVAL for a bad argument; -ENOMEM when no memory of the kind asked
 * for could be had.
 */
int dvx_host_mem_alloc(const struct dvx_hal *hal, uint64_t len, uint64_t align, int numa_node,
		       uint32_t flags, struct dvx_hal_mem *mem);

/**
 * dvx_host_mem_free() - give back memory from dvx_host_mem_alloc() (the mem_free op).
 * Return: 0, or -EINVAL for a descriptor that holds nothing. @mem is zeroed.
 */
int dvx_host_mem_free(const struct dvx_hal *hal, struct dvx_hal_mem *mem);

/** dvx_host_pci_list() - the pci_list op over the running system's sysfs. */
int dvx_host_pci_list(const struct dvx_hal *hal, uint32_t class_mask, uint32_t class_value,
		      struct dvx_hal_pci_dev *devs, unsigned max, unsigned *count);

/** dvx_host_limits() - RLIMIT_MEMLOCK (UINT64_MAX for unlimited) and the page size. */
int dvx_host_limits(const struct dvx_hal *hal, struct dvx_hal_limits *lim);

/** dvx_host_now_ns() - CLOCK_MONOTONIC in nanoseconds. */
uint64_t dvx_host_now_ns(const struct dvx_hal *hal);

/*
 * Stream sockets and sleeping over POSIX (hal/net.c): the sock_* and sleep_ns ops, with
 * the contracts of their wrappers in dvx/hal/host.h (dvx_hal_sock_listen() ...). The
 * wrappers have checked the arguments; @hal is unused.
 */

/** dvx_host_sock_listen() - socket(), SO_REUSEADDR (IP), bind(), listen(): the sock_listen op. */
int dvx_host_sock_listen(const struct dvx_hal *hal, const struct dvx_hal_sock_addr *addr,
			 int backlog, int *fd);

/** dvx_host_sock_connect() - socket(), TCP_NODELAY (IP), a non-blocking connect(). */
int dvx_host_sock_connect(const struct dvx_hal *hal, const struct dvx_hal_sock_addr *addr,
			  int *fd);

/** dvx_host_sock_error() - getsockopt(SO_ERROR), negated. */
int dvx_host_sock_error(const struct dvx_hal *hal, int fd);

/** dvx_host_sock_accept() - accept4(NONBLOCK, CLOEXEC), TCP_NODELAY (IP). */
int dvx_host_sock_accept(const struct dvx_hal *hal, int lfd, int *fd);

/** dvx_host_sock_name() - getsockname(). */
int dvx_host_sock_name(const struct dvx_hal *hal, int fd, struct dvx_hal_sock_addr *addr);

/** dvx_host_sock_send() - sendmsg(MSG_NOSIGNAL | MSG_DONTWAIT) of a gather list. */
int dvx_host_sock_send(const struct dvx_hal *hal, int fd, const struct dvx_hal_iov *iov,
		       unsigned iovcnt, size_t *sent);

/** dvx_host_sock_recv() - recv(MSG_DONTWAIT). */
int dvx_host_sock_recv(const struct dvx_hal *hal, int fd, void *buf, size_t len, size_t *got);

/** dvx_host_sock_poll() - ppoll(); an interruption answers 0. */
int dvx_host_sock_poll(const struct dvx_hal *hal, struct dvx_hal_pollfd *fds, unsigned nfds,
		       uint64_t timeout_ns);

/** dvx_host_sock_close() - close(); the descriptor is gone whatever it answers. */
int dvx_host_sock_close(const struct dvx_hal *hal, int fd);

/** dvx_host_sock_unlink() - unlink() of a UNIX socket's path. */
int dvx_host_sock_unlink(const struct dvx_hal *hal, const struct dvx_hal_sock_addr *addr);

/**
 * dvx_host_thread_slack_ns() - the calling thread's timer slack (Linux's
 * PR_SET_TIMERSLACK; 50 us by default, by which a sleep or poll time-out may run late).
 * @ns: the slack, 0 taken as 1 ns. Return: 0 or a negative errno.
 */
int dvx_host_thread_slack_ns(uint64_t ns);

/** dvx_host_sleep_ns() - nanosleep() on CLOCK_MONOTONIC's terms, resumed after a signal. */
int dvx_host_sleep_ns(const struct dvx_hal *hal, uint64_t ns);

/** dvx_host_sock_send_fds() - sendmsg() of bytes with SCM_RIGHTS descriptors. */
int dvx_host_sock_send_fds(const struct dvx_hal *hal, int fd, const void *buf, size_t len,
			   const int *fds, unsigned nfds, size_t *sent);

/** dvx_host_sock_recv_fds() - recvmsg(MSG_CMSG_CLOEXEC); too many descriptors: -EMSGSIZE. */
int dvx_host_sock_recv_fds(const struct dvx_hal *hal, int fd, void *buf, size_t len, size_t *got,
			   int *fds, unsigned max, unsigned *nfds);

/** dvx_host_sock_cred() - getsockopt(SO_PEERCRED). */
int dvx_host_sock_cred(const struct dvx_hal *hal, int fd, struct dvx_hal_sock_cred *cred);

/** dvx_host_fd_close() - close() of any descriptor. */
int dvx_host_fd_close(const struct dvx_hal *hal, int fd);

/** dvx_host_ident() - uname()'s node name, the boot id, getpid(), geteuid(). */
int dvx_host_ident(const struct dvx_hal *hal, struct dvx_hal_host_ident *id);

/** dvx_host_random_bytes() - getrandom(2), flags 0, restarted when interrupted. */
int dvx_host_random_bytes(const struct dvx_hal *hal, void *buf, size_t len);

/* the host table of hal/hostmem.c, with the functions above: linux, cuda, the
 * host-only backend (dvx_hal_host()) and (for memory, limits, sockets) the software NIC
 * use it */
extern const struct dvx_hal_host_ops dvx_host_ops;

/** dvx_host_cpu_relax() - tell the CPU we are spinning (pause / yield). */
static inline void dvx_host_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

/*
 * The DPDK seam: hal/dpdk.c is the only file that includes <rte_*.h>. It is built
 * when CONFIG_DVX_DPDK=y, and even then reached only through the table that
 * dvx_dpdk_enable() installs: a program that never calls it links no DPDK object
 * (libdvx.a's dpdk.o is not pulled in) and needs no DPDK library. The functions
 * below dispatch through the table; without one DPDK is absent.
 */

/** struct dvx_dpdk_ops - what hal/dpdk.c provides (the functions below, for real). */
struct dvx_dpdk_ops {
	bool (*eal_ready)(void);
	int (*mem_alloc)(uint64_t len, uint64_t align, int numa_node, void **addr,
			 uint64_t *page_size, void **handle);
	int (*mem_free)(void *handle);
};

/** dvx_host_set_dpdk() - install (or, NULL, remove) the DPDK table; any thread. */
void dvx_host_set_dpdk(const struct dvx_dpdk_ops *ops);

/**
 * dvx_dpdk_eal_ready() - may hugepage memory be taken from DPDK now?
 *
 * True only when the application has initialised DPDK's EAL itself, with hugepages;
 * dvx never initialises the EAL. See hal/dpdk.c for how this is told.
 */
bool dvx_dpdk_eal_ready(void);

/**
 * dvx_dpdk_mem_alloc() - reserve an rte_memzone.
 * @len:	bytes
 * @align:	power-of-two alignment
 * @numa_node:	socket to reserve on, -1 for any
 * @addr:	receives the address
 * @page_size:	receives the hugepage size backing it
 * @handle:	receives what dvx_dpdk_mem_free() needs
 *
 * Return: 0; the negated rte_errno on failure (-ENOMEM when the socket has no
 * hugepage memory left); -ENOSYS when dvx was built without DPDK.
 */
int dvx_dpdk_mem_alloc(uint64_t len, uint64_t align, int numa_node, void **addr,
		       uint64_t *page_size, void **handle);

/** dvx_dpdk_mem_free() - release an rte_memzone. Return: 0 or a negative errno. */
int dvx_dpdk_mem_free(void *handle);

#endif /* DVX_HAL_HOST_PRIV_H */
