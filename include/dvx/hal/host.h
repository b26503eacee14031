/* SPDX-License-Identifier: MIT */
/*
 * dvx/hal/host.h - the hal's host table: host memory for callers who want it, PCI
 * topology, process limits, the clock timeouts are measured with, the stream sockets
 * (UNIX and TCP) and the sleep the bootstrap's sockets adapter is built on, and the
 * random bytes of its handshake's challenges.
 *
 * The library itself never allocates host memory; tools, tests and applications use
 * dvx_hal_mem_alloc() to get regions they then hand to dvx objects.
 *
 * Sockets are plain file descriptors (int), every one non-blocking and close-on-exec;
 * no call blocks longer than its timeout (sock_poll, sleep_ns) or at all (the others).
 * Addresses are the hal's own struct dvx_hal_sock_addr, so nothing above the hal
 * includes <sys/socket.h>.
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

/** enum dvx_hal_sock_family - the kinds of stream socket address the hal knows. */
enum dvx_hal_sock_family {
	DVX_HAL_SOCK_NONE = 0,
	DVX_HAL_SOCK_UNIX = 1,		/* a UNIX stream socket at a path */
	DVX_HAL_SOCK_IP4 = 2,		/* TCP over IPv4 */
	DVX_HAL_SOCK_IP6 = 3,		/* TCP over IPv6 */
	DVX_HAL_SOCK_ABSTRACT = 4,	/* a UNIX stream socket in the abstract namespace
					 * (Linux): @path names it, no file exists */
};

#define DVX_HAL_SOCK_PATH_MAX 108	/* a UNIX socket path with its NUL (sun_path) */
#define DVX_HAL_SOCK_IOV_MAX 8		/* buffers one sock_send gathers */
#define DVX_HAL_SOCK_FDS_MAX 16		/* descriptors one sock_send_fds carries */

/**
 * struct dvx_hal_sock_addr - a stream socket address, in the hal's own terms.
 * @family:	enum dvx_hal_sock_family
 * @port:	IPv4/IPv6: the TCP port, host order (0 in sock_listen: any free port)
 * @scope_id:	IPv6: the scope (interface index) of a link-local address, else 0
 * @ip:		IPv4 (bytes 0-3) or IPv6 address, network order; all zero is the wildcard
 * @path:	UNIX: the socket file's path, NUL-terminated, not empty; ABSTRACT: the
 *		name (without the leading NUL the system puts before it), not empty
 *
 * Fields the family does not use are zero.
 */
struct dvx_hal_sock_addr {
	uint16_t family;
	uint16_t port;
	uint32_t scope_id;
	uint8_t ip[16];
	char path[DVX_HAL_SOCK_PATH_MAX];
};

/* sock_poll events: what struct dvx_hal_pollfd.events asks for, .revents answers */
enum {
	DVX_HAL_POLL_IN = 0x01,		/* bytes or end of stream to read; a connection to accept */
	DVX_HAL_POLL_OUT = 0x04,	/* room to write; a started connect has finished */
	DVX_HAL_POLL_ERR = 0x08,	/* revents only: an error is pending (sock_error) */
	DVX_HAL_POLL_HUP = 0x10,	/* revents only: the peer hung up */
	DVX_HAL_POLL_NVAL = 0x20,	/* revents only: @fd is not open */
};

/**
 * struct dvx_hal_pollfd - one socket in a sock_poll set.
 * @fd:		the socket; a negative value is skipped (revents 0)
 * @events:	DVX_HAL_POLL_IN / _OUT wanted
 * @revents:	set by sock_poll: what is ready (ERR, HUP, NVAL whether asked or not)
 */
struct dvx_hal_pollfd {
	int32_t fd;
	int16_t events;
	int16_t revents;
};

/**
 * struct dvx_hal_iov - one buffer of a gathered sock_send.
 * @base:	the bytes (may be NULL when @len is 0)
 * @len:	how many
 */
struct dvx_hal_iov {
	const void *base;
	size_t len;
};

/**
 * struct dvx_hal_sock_cred - who is at the other end of a UNIX socket (SO_PEERCRED).
 * @pid:	its process id (as this process's pid namespace sees it)
 * @uid:	its effective user id
 * @gid:	its effective group id
 */
struct dvx_hal_sock_cred {
	int32_t pid;
	uint32_t uid;
	uint32_t gid;
	uint32_t rsvd;
};

#define DVX_HAL_HOSTNAME_MAX 64

/**
 * struct dvx_hal_host_ident - what tells hosts and processes apart.
 * @hostname:	the host's name (uname), NUL-terminated, cut to fit
 * @boot_id:	the kernel's boot id (/proc/sys/kernel/random/boot_id, 16 bytes): two
 *		ranks with the same boot id run on the same kernel, hence the same host
 * @pid:	this process's id
 * @uid:	this process's effective user id
 */
struct dvx_hal_host_ident {
	char hostname[DVX_HAL_HOSTNAME_MAX];
	uint8_t boot_id[16];
	int32_t pid;
	uint32_t uid;
};

/**
 * struct dvx_hal_host_ops - a backend's host entry points. A NULL entry means the
 * backend does not provide the call; the wrappers then return -ENOSYS.
 *
 * pci_list writes at most @max entries and sets *@count to the number present, which
 * may exceed @max: call with max 0 to size the array.
 *
 * The socket entries and sleep_ns are described with their wrappers,
 * dvx_hal_sock_listen() and the ones after it; random_bytes with
 * dvx_hal_random_bytes().
 */
struct dvx_hal_host_ops {
	int (*mem_alloc)(const struct dvx_hal *hal, uint64_t len, uint64_t align,
			 int numa_node, uint32_t flags, struct dvx_hal_mem *mem);
	int (*mem_free)(const struct dvx_hal *hal, struct dvx_hal_mem *mem);
	int (*pci_list)(const struct dvx_hal *hal, uint32_t class_mask, uint32_t class_value,
			struct dvx_hal_pci_dev *devs, unsigned max, unsigned *count);
	int (*limits)(const struct dvx_hal *hal, struct dvx_hal_limits *lim);
	uint64_t (*now_ns)(const struct dvx_hal *hal);

	/* stream sockets and sleeping (dvx_hal_sock_listen() ... dvx_hal_sleep_ns()) */
	int (*sock_listen)(const struct dvx_hal *hal, const struct dvx_hal_sock_addr *addr,
			   int backlog, int *fd);
	int (*sock_connect)(const struct dvx_hal *hal, const struct dvx_hal_sock_addr *addr,
			    int *fd);
	int (*sock_error)(const struct dvx_hal *hal, int fd);
	int (*sock_accept)(const struct dvx_hal *hal, int lfd, int *fd);
	int (*sock_name)(const struct dvx_hal *hal, int fd, struct dvx_hal_sock_addr *addr);
	int (*sock_send)(const struct dvx_hal *hal, int fd, const struct dvx_hal_iov *iov,
			 unsigned iovcnt, size_t *sent);
	int (*sock_recv)(const struct dvx_hal *hal, int fd, void *buf, size_t len, size_t *got);
	int (*sock_poll)(const struct dvx_hal *hal, struct dvx_hal_pollfd *fds, unsigned nfds,
			 uint64_t timeout_ns);
	int (*sock_close)(const struct dvx_hal *hal, int fd);
	int (*sock_unlink)(const struct dvx_hal *hal, const struct dvx_hal_sock_addr *addr);
	int (*sleep_ns)(const struct dvx_hal *hal, uint64_t ns);

	/* descriptors over UNIX sockets, any descriptor's close, who we are */
	int (*sock_send_fds)(const struct dvx_hal *hal, int fd, const void *buf, size_t len,
			     const int *fds, unsigned nfds, size_t *sent);
	int (*sock_recv_fds)(const struct dvx_hal *hal, int fd, void *buf, size_t len,
			     size_t *got, int *fds, unsigned max, unsigned *nfds);
	int (*sock_cred)(const struct dvx_hal *hal, int fd, struct dvx_hal_sock_cred *cred);
	int (*fd_close)(const struct dvx_hal *hal, int fd);
	int (*host_ident)(const struct dvx_hal *hal, struct dvx_hal_host_ident *id);

	/* random bytes for keys and nonces (dvx_hal_random_bytes()) */
	int (*random_bytes)(const struct dvx_hal *hal, void *buf, size_t len);
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

/**
 * dvx_dpdk_enable() - let host memory allocations with DVX_MEM_F_HUGE take hugepages
 * from DPDK's EAL (an rte_memzone) once the application has initialised it.
 *
 * Opt-in on purpose: a program that never calls this links no DPDK code and needs no
 * DPDK library (link DPDK yourself, pkg-config libdpdk, when you call it). dvx never
 * initialises the EAL; it only borrows memzones from one that is up (docs/hal.md).
 *
 * Context: any thread, before or after rte_eal_init(). Return: 0; -ENOTSUP when dvx
 * was built without DPDK (CONFIG_DVX_DPDK=n).
 */
int dvx_dpdk_enable(void);

/**
 * dvx_hal_sock_listen(), dvx_hal_sock_connect(), dvx_hal_sock_error(),
 * dvx_hal_sock_accept(), dvx_hal_sock_name(), dvx_hal_sock_send(), dvx_hal_sock_recv(),
 * dvx_hal_sock_close(), dvx_hal_sock_unlink() - non-blocking stream sockets; wrappers of
 * the struct dvx_hal_host_ops entries of the same names.
 * @hal:	the backend instance
 * @addr:	listen: the address to bind (IP: all-zero @ip is the wildcard, port 0 any
 *		free port; UNIX: the path, which must not exist); connect: the peer's
 *		address (port not 0); name: caller storage for the socket's local address;
 *		unlink: the UNIX address whose socket file goes
 * @backlog:	listen: connections the system may queue before they are accepted (> 0)
 * @fd:		listen, connect, accept: set to the new socket, or to -1 on failure;
 *		error, name, send, recv, close: the socket
 * @lfd:	accept: a listening socket from dvx_hal_sock_listen()
 * @iov:	send: @iovcnt buffers sent in order as one stream of bytes
 * @iovcnt:	send: 1..DVX_HAL_SOCK_IOV_MAX
 * @sent:	send: set to the bytes taken, at least 1 on success (maybe fewer than given)
 * @buf:	recv: where the bytes go
 * @len:	recv: room in @buf (> 0)
 * @got:	recv: set to the bytes read; 0 on success means the peer closed its end
 *
 * listen opens a non-blocking, close-on-exec stream socket bound to @addr and listening
 * (IP: with SO_REUSEADDR; UNIX: the socket file is created, and removed again if the
 * socket cannot listen). connect opens one (IP: with TCP_NODELAY) and starts connecting:
 * 0 means the connection is made or under way; wait for DVX_HAL_POLL_OUT, then
 * sock_error says how it went. accept takes one pending connection (non-blocking,
 * close-on-exec, IP: TCP_NODELAY). error reads and clears the socket's pending error
 * (SO_ERROR). name reads the local address (getsockname: the port the system picked,
 * the interface a connection goes out of). send never raises SIGPIPE. close releases
 * the socket whatever it answers. unlink removes a UNIX socket's file.
 *
 * Common contract: a NULL @hal or a bad argument (NULL pointer, negative socket, a family
 * or path that is not valid, @len or every @iov length 0) is -EINVAL; a backend without
 * the host table or the entry is -ENOSYS; otherwise 0 or the system's errno negated.
 * -EAGAIN from accept, send or recv means "not now": wait with dvx_hal_sock_poll(). An
 * interrupted system call is restarted inside. No call blocks. These calls have no
 * device, so nothing is recorded in a diag.
 *
 * Context: process context; thread-safe. Return: 0 or a negative errno; error: 0 or
 * the pending error negated.
 */
int dvx_hal_sock_listen(const struct dvx_hal *hal, const struct dvx_hal_sock_addr *addr,
			int backlog, int *fd);
int dvx_hal_sock_connect(const struct dvx_hal *hal, const struct dvx_hal_sock_addr *addr,
			 int *fd);
int dvx_hal_sock_error(const struct dvx_hal *hal, int fd);
int dvx_hal_sock_accept(const struct dvx_hal *hal, int lfd, int *fd);
int dvx_hal_sock_name(const struct dvx_hal *hal, int fd, struct dvx_hal_sock_addr *addr);
int dvx_hal_sock_send(const struct dvx_hal *hal, int fd, const struct dvx_hal_iov *iov,
		      unsigned iovcnt, size_t *sent);
int dvx_hal_sock_recv(const struct dvx_hal *hal, int fd, void *buf, size_t len, size_t *got);
int dvx_hal_sock_close(const struct dvx_hal *hal, int fd);
int dvx_hal_sock_unlink(const struct dvx_hal *hal, const struct dvx_hal_sock_addr *addr);

/**
 * dvx_hal_sock_poll() - wait until one of a set of sockets is ready, or a timeout;
 * wrapper of the struct dvx_hal_host_ops entry sock_poll.
 * @hal:	the backend instance
 * @fds:	@nfds entries; each one's revents is set (0 for a skipped negative fd)
 * @nfds:	entries in @fds (0 just waits, which is what sleep_ns is for)
 * @timeout_ns:	longest wait; 0 only looks
 *
 * An interrupted wait (a signal) returns 0 early, as if the time were up: the caller
 * measures its own deadline with dvx_hal_now_ns() and polls again.
 *
 * Context: process context; thread-safe. Return: the number of entries with a non-zero
 * revents (0: none before the timeout); -EINVAL (NULL @hal, NULL @fds with @nfds > 0);
 * -ENOSYS; or the system's errno negated.
 */
int dvx_hal_sock_poll(const struct dvx_hal *hal, struct dvx_hal_pollfd *fds, unsigned nfds,
		      uint64_t timeout_ns);

/**
 * dvx_hal_sleep_ns() - sleep on the backend's clock; wrapper of the struct
 * dvx_hal_host_ops entry sleep_ns.
 * @hal:	the backend instance
 * @ns:		how long; an interrupted sleep goes on for what is left
 *
 * A backend with a clock of its own (the mock's, unless it runs on the real one) may
 * advance that clock instead of sleeping.
 *
 * Context: process context; thread-safe. Return: 0; -EINVAL (NULL @hal); -ENOSYS; or
 * the system's errno negated.
 */
int dvx_hal_sleep_ns(const struct dvx_hal *hal, uint64_t ns);

/**
 * dvx_hal_sock_send_fds(), dvx_hal_sock_recv_fds(), dvx_hal_sock_cred() - pass file
 * descriptors between processes of one host over a UNIX (or abstract) stream socket,
 * and ask who is at the other end; wrappers of the struct dvx_hal_host_ops entries of
 * the same names.
 * @hal:	the backend instance
 * @fd:		a connected UNIX stream socket
 * @buf:	send: @len bytes sent with the descriptors (at least one byte: the
 *		descriptors travel with the first); recv: room for @len bytes
 * @len:	bytes (> 0)
 * @fds:	send: @nfds descriptors to pass (each stays open here; the receiver gets
 *		its own); recv: room for @max received descriptors, close-on-exec, that the
 *		caller owns and closes with dvx_hal_fd_close()
 * @nfds:	send: 1..DVX_HAL_SOCK_FDS_MAX; recv: set to the number received
 * @max:	recv: room in @fds, 1..DVX_HAL_SOCK_FDS_MAX
 * @sent:	send: set to the bytes taken (the descriptors went with them)
 * @got:	recv: set to the bytes read; 0 means the peer closed its end
 * @cred:	cred: caller storage for the peer's process, user and group ids
 *
 * A receive that brings more descriptors than @max closes them all and answers
 * -EMSGSIZE: no descriptor leaks. Common contract as for dvx_hal_sock_send(): a NULL
 * @hal or a bad argument is -EINVAL; -ENOSYS without the entry; -EAGAIN "not now"; else
 * 0 or the system's errno negated. No call blocks.
 *
 * Context: process context; thread-safe. Return: 0 or a negative errno.
 */
int dvx_hal_sock_send_fds(const struct dvx_hal *hal, int fd, const void *buf, size_t len,
			  const int *fds, unsigned nfds, size_t *sent);
int dvx_hal_sock_recv_fds(const struct dvx_hal *hal, int fd, void *buf, size_t len, size_t *got,
			  int *fds, unsigned max, unsigned *nfds);
int dvx_hal_sock_cred(const struct dvx_hal *hal, int fd, struct dvx_hal_sock_cred *cred);

/**
 * dvx_hal_fd_close() - close a file descriptor the hal handed out (an exported GPU
 * handle, a dma-buf, a received descriptor); wrapper of the struct dvx_hal_host_ops
 * entry fd_close.
 * @hal:	the backend instance that handed it out (a simulated backend's
 *		descriptors may not be the system's)
 * @fd:		the descriptor (>= 0)
 *
 * The descriptor is released whatever the answer. Context: process context;
 * thread-safe. Return: 0, -EINVAL (NULL @hal, negative @fd), -ENOSYS, or the system's
 * errno negated.
 */
int dvx_hal_fd_close(const struct dvx_hal *hal, int fd);

/**
 * dvx_hal_host_ident() - the host's name and boot id, this process's ids; wrapper of
 * the struct dvx_hal_host_ops entry host_ident.
 * @hal:	the backend instance
 * @id:		caller storage, filled
 *
 * Context: process context; thread-safe. Return: 0, -EINVAL, -ENOSYS, or the system's
 * errno negated (no boot id: -ENOENT).
 */
int dvx_hal_host_ident(const struct dvx_hal *hal, struct dvx_hal_host_ident *id);

#define DVX_HAL_RANDOM_MAX 256	/* bytes one random_bytes call gives at most */

/**
 * dvx_hal_random_bytes() - fill a buffer with unpredictable bytes, fit for keys and
 * nonces; wrapper of the struct dvx_hal_host_ops entry random_bytes.
 * @hal:	the backend instance
 * @buf:	where the bytes go
 * @len:	how many, 1..DVX_HAL_RANDOM_MAX
 *
 * The linux backend (and the host-only one) read the kernel's random generator with
 * getrandom(2), flags 0: it blocks only while the kernel's pool is not initialised yet,
 * early after boot; an interrupted call is restarted. The mock logs the call
 * (DVX_MOCK_OP_RANDOM_BYTES), lets it be failed, and otherwise reads the same
 * generator. On success all @len bytes are written; on failure @buf holds nothing
 * worth using.
 *
 * Context: process context; thread-safe. Return: 0; -EINVAL (NULL @hal or @buf, @len 0
 * or above DVX_HAL_RANDOM_MAX); -ENOSYS (no entry in the backend, or a kernel without
 * getrandom); or the system's errno negated.
 */
int dvx_hal_random_bytes(const struct dvx_hal *hal, void *buf, size_t len);

DVX_END_DECLS

#endif /* DVX_HAL_HOST_H */
