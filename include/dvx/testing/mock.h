/* SPDX-License-Identifier: MIT */
/*
 * dvx/testing/mock.h - a stateful fake hal backend for unit tests.
 *
 * The mock behaves like a small, well-mannered NIC driver: it lists and opens
 * configured devices, answers queries from their configuration, keeps every DEVX
 * object, umem, UAR, PD and MR it hands out (with fresh ids and keys) and refuses to
 * free what it does not hold. Around that it offers what tests need:
 *
 *  - a call log: every call is recorded (op, device, key arguments, return value) in
 *    a ring inside struct dvx_mock, with counters per op;
 *  - live-resource counters per kind, so a test can prove that everything acquired
 *    was released (dvx_mock_live_total() == 0);
 *  - fault injection: fail the N-th call, fail every call of an op, or make a DEVX
 *    command return a PRM status and syndrome in its output mailbox (so the hal's
 *    status translation runs exactly as for hardware);
 *  - a check hook run before each call, where cmocka tests can check_expected() the
 *    arguments (the mock itself does not depend on cmocka);
 *  - a controllable clock, or the real one (now_real);
 *  - stream sockets that are real ones (hal/net.c) underneath, each call logged and
 *    open to faults, every open socket counted as a live resource.
 *
 * Everything lives in the caller's struct dvx_mock (fixed-size arrays; it is a few
 * hundred KiB, so put it in static storage or on the heap, not on the stack). The
 * mock never allocates, except mem_alloc, which hands out real host memory through
 * the same code as the linux backend; the socket calls likewise open real sockets.
 *
 * The mock knows no PRM layouts beyond the command envelope: QUERY_HCA_CAP (opcode
 * 0x100) is answered with the capability pages the test configured, as opaque bytes,
 * matched by op_mod. Tests build those pages with the dvx/mlx5 field setters.
 *
 * Not thread-safe: one test thread drives a struct dvx_mock (threads that each drive
 * their own instance are fine: a test of ranks as threads gives each rank one).
 */
#ifndef DVX_TESTING_MOCK_H
#define DVX_TESTING_MOCK_H

#include <dvx/hal.h>

DVX_BEGIN_DECLS

#define DVX_MOCK_MAX_DEVS 8
#define DVX_MOCK_MAX_PORTS 2
#define DVX_MOCK_MAX_GIDS 8
#define DVX_MOCK_MAX_CAPS 6		/* capability pages per device */
#define DVX_MOCK_CAP_BYTES 4096u	/* one page: query_hca_cap_out minus its 16-byte header */
#define DVX_MOCK_MAX_PCI 16
#define DVX_MOCK_MAX_OBJS 64
#define DVX_MOCK_MAX_UMEMS 64
#define DVX_MOCK_MAX_UARS 8
#define DVX_MOCK_UAR_BYTES 4096u
#define DVX_MOCK_MAX_PDS 8
#define DVX_MOCK_MAX_MRS 64
#define DVX_MOCK_MAX_MEMS 32
#define DVX_MOCK_MAX_SOCKS 32
#define DVX_MOCK_MAX_DEVX_FAULTS 8
#define DVX_MOCK_LOG_MAX 512

/** enum dvx_mock_op - the hal entry points, as recorded in the call log. */
enum dvx_mock_op {
	DVX_MOCK_OP_NONE = 0,
	DVX_MOCK_OP_NIC_LIST,
	DVX_MOCK_OP_NIC_OPEN,
	DVX_MOCK_OP_NIC_CLOSE,
	DVX_MOCK_OP_NIC_QUERY,
	DVX_MOCK_OP_QUERY_PORT,
	DVX_MOCK_OP_QUERY_GID,
	DVX_MOCK_OP_DEVX_CMD,
	DVX_MOCK_OP_OBJ_CREATE,
	DVX_MOCK_OP_OBJ_MODIFY,
	DVX_MOCK_OP_OBJ_QUERY,
	DVX_MOCK_OP_OBJ_DESTROY,
	DVX_MOCK_OP_UMEM_REG,
	DVX_MOCK_OP_UMEM_DEREG,
	DVX_MOCK_OP_UAR_ALLOC,
	DVX_MOCK_OP_UAR_FREE,
	DVX_MOCK_OP_PD_ALLOC,
	DVX_MOCK_OP_PD_FREE,
	DVX_MOCK_OP_EQN_QUERY,
	DVX_MOCK_OP_MR_REG,
	DVX_MOCK_OP_MR_DEREG,
	DVX_MOCK_OP_ROCE_RMAC,
	DVX_MOCK_OP_NIC_PROGRESS,	/* never fails */
	DVX_MOCK_OP_MEM_ALLOC,
	DVX_MOCK_OP_MEM_FREE,
	DVX_MOCK_OP_PCI_LIST,
	DVX_MOCK_OP_LIMITS,
	DVX_MOCK_OP_NOW_NS,		/* never fails */
	DVX_MOCK_OP_SOCK_LISTEN,	/* stream sockets: real ones underneath (hal/net.c) */
	DVX_MOCK_OP_SOCK_CONNECT,
	DVX_MOCK_OP_SOCK_ERROR,
	DVX_MOCK_OP_SOCK_ACCEPT,
	DVX_MOCK_OP_SOCK_NAME,
	DVX_MOCK_OP_SOCK_SEND,
	DVX_MOCK_OP_SOCK_RECV,
	DVX_MOCK_OP_SOCK_POLL,
	DVX_MOCK_OP_SOCK_CLOSE,
	DVX_MOCK_OP_SOCK_UNLINK,
	DVX_MOCK_OP_SLEEP,
	DVX_MOCK_OP_SOCK_SEND_FDS,	/* descriptors over UNIX sockets (real underneath) */
	DVX_MOCK_OP_SOCK_RECV_FDS,
	DVX_MOCK_OP_SOCK_CRED,
	DVX_MOCK_OP_FD_CLOSE,
	DVX_MOCK_OP_HOST_IDENT,
	DVX_MOCK_OP_RANDOM_BYTES,	/* the kernel's generator underneath; @len bytes asked */
	/* GPU (see dvx_mock_add_gpu()) */
	DVX_MOCK_OP_GPU_INIT,
	DVX_MOCK_OP_GPU_COUNT,
	DVX_MOCK_OP_GPU_GET,
	DVX_MOCK_OP_GPU_QUERY,
	DVX_MOCK_OP_GPU_CTX_RETAIN,
	DVX_MOCK_OP_GPU_CTX_RELEASE,
	DVX_MOCK_OP_GPU_CTX_SET_CURRENT,
	DVX_MOCK_OP_GPU_MEM_CREATE,
	DVX_MOCK_OP_GPU_MEM_FREE,
	DVX_MOCK_OP_GPU_MEM_EXPORT,
	DVX_MOCK_OP_GPU_DMABUF_FD,
	DVX_MOCK_OP_GPU_HOST_REGISTER,
	DVX_MOCK_OP_GPU_HOST_UNREGISTER,
	DVX_MOCK_OP_GPU_MODULE_LOAD,
	DVX_MOCK_OP_GPU_MODULE_UNLOAD,
	DVX_MOCK_OP_GPU_MODULE_FUNCTION,
	DVX_MOCK_OP_GPU_LAUNCH,
	DVX_MOCK_OP_GPU_STREAM_CREATE,
	DVX_MOCK_OP_GPU_STREAM_DESTROY,
	DVX_MOCK_OP_GPU_STREAM_QUERY,
	DVX_MOCK_OP_GPU_MEMCPY_HTOD,
	DVX_MOCK_OP_GPU_MEMCPY_DTOH,
	DVX_MOCK_OP_GPU_MEM_IMPORT,
	DVX_MOCK_OP_GPU_MEM_LOOKUP,
	DVX_MOCK_OP_GPU_PEER_ACCESS,
	DVX_MOCK_OP_GPU_MEMCPY_ASYNC,
	DVX_MOCK_OP_GPU_STREAM_ATOMIC,
	DVX_MOCK_OP_COUNT,
};

/** enum dvx_mock_res - kinds of resource the mock counts while they are held. */
enum dvx_mock_res {
	DVX_MOCK_RES_DEV = 0,	/* open devices */
	DVX_MOCK_RES_OBJ,
	DVX_MOCK_RES_UMEM,
	DVX_MOCK_RES_UAR,
	DVX_MOCK_RES_PD,
	DVX_MOCK_RES_MR,
	DVX_MOCK_RES_MEM,
	DVX_MOCK_RES_SOCK,	/* open sockets (listen, connect, accept until sock_close) */
	DVX_MOCK_RES_GPU_CTX,	/* retained primary contexts */
	DVX_MOCK_RES_GPU_MEM,
	DVX_MOCK_RES_GPU_HOSTREG,
	DVX_MOCK_RES_GPU_MODULE,
	DVX_MOCK_RES_GPU_STREAM,
	DVX_MOCK_RES_FD,	/* descriptors it handed out (GPU exports, dma-bufs, received
				 * ones) until fd_close */
	DVX_MOCK_RES_COUNT,
};

/**
 * struct dvx_mock_call - one call as the log keeps it. Fields a call does not have
 * stay 0 (dmabuf_fd -1).
 * @seq:	1-based number of the call among all calls since init/reset
 * @op:		enum dvx_mock_op
 * @dev:	index of the device (as added), -1 for calls without one
 * @ret:	what the call returned (0 for void/clock calls); not yet known (0)
 *		when the check hook sees the record
 * @injected:	1 when the failure was injected (fail_at, fail_op, DEVX fault, hook)
 * @prm_opcode:	opcode of the input mailbox (DEVX calls) or of the object's creator
 *		(obj_destroy)
 * @prm_op_mod:	op_mod of the input mailbox
 * @inlen:	input mailbox length
 * @outlen:	output mailbox length
 * @id:		object number, umem id, UAR page id, pdn, lkey, sgid index ... the id
 *		the call created or was about
 * @port:	port number (query_port/gid, roce_rmac)
 * @index:	GID index, EQ vector
 * @addr:	address (umem/MR/mem)
 * @len:	length or size
 * @offset:	dma-buf offset
 * @iova:	MR iova
 * @align:	mem_alloc alignment
 * @access:	access flags (umem, MR)
 * @flags:	MR flags, mem_alloc flags, UAR type, pci_list class mask, the address
 *		family of sock_listen/connect/unlink
 * @dmabuf_fd:	dma-buf fd, -1 when none
 * @numa_node:	mem_alloc node
 * @fd:		socket calls: the socket the call was about (accept: the listener,
 *		with the accepted one in @id; poll: the first of the set), or the one it
 *		opened (listen, connect); -1 when none
 * @pgsz_bitmap: umem page sizes
 * @timeout_ns:	sock_poll's timeout, sleep's length
 * @moved:	sock_send/recv: bytes moved; sock_poll: entries ready
 * @name:	dev_open name; socket calls: the UNIX path (cut to fit)
 *
 * Socket calls also use @port (TCP port), @len (sock_send/recv: bytes offered;
 * sock_poll: entries; sock_listen: backlog) and @index (sock_send: buffers).
 */
struct dvx_mock_call {
	uint32_t seq;
	uint16_t op;
	int16_t dev;
	int32_t ret;
	uint8_t injected;
	uint8_t rsvd[1];
	uint16_t prm_opcode;
	uint16_t prm_op_mod;
	uint16_t rsvd2;
	uint32_t inlen;
	uint32_t outlen;
	uint32_t id;
	uint32_t port;
	uint32_t index;
	uint32_t access;
	uint32_t flags;
	int32_t dmabuf_fd;
	int32_t numa_node;
	int32_t fd;
	uint64_t addr;
	uint64_t len;
	uint64_t offset;
	uint64_t iova;
	uint64_t align;
	uint64_t pgsz_bitmap;
	uint64_t timeout_ns;
	uint64_t moved;
	char name[DVX_HAL_NAME_MAX];
};

/**
 * typedef dvx_mock_check_fn - called before every call with its log record.
 * @arg:	struct dvx_mock.check_arg
 * @c:		the call (ret not yet set)
 *
 * Return: 0 to let the call proceed, or a negative errno to fail it with that value
 * (a positive value is negated). dev_progress and now_ns cannot fail: the hook sees
 * them (now_ns with @c->len holding the time it returns) and its answer is ignored.
 * A failed sock_close still closes the socket (as close() on Linux does).
 */
typedef int (*dvx_mock_check_fn)(void *arg, const struct dvx_mock_call *c);

/**
 * struct dvx_mock_cap - one QUERY_HCA_CAP answer.
 * @op_mod:	the query's op_mod: (cap_type << 1) | current
 * @valid:	1 when this slot is used
 * @page:	the capability page, copied to output mailbox byte 16 onwards
 */
struct dvx_mock_cap {
	uint16_t op_mod;
	uint8_t valid;
	uint8_t rsvd[5];
	uint8_t page[DVX_MOCK_CAP_BYTES];
};

/**
 * struct dvx_mock_nic_cfg - one device as the mock presents it.
 * @info:	what dev_list reports and dev_open copies (name, pci, driver, is_mlx5..)
 * @attr:	query_device's answer
 * @port:	query_port's answer per port (index 0 = port 1)
 * @gid:	GID table per port; entries with valid=0 are empty
 * @caps:	QUERY_HCA_CAP answers; an op_mod not found answers status BAD_PARAM
 * @open_err:	non-zero: dev_open fails with this negative errno (say -EACCES)
 * @rmac:	what roce_rmac resolves every GID to
 * @eqn:	what eqn_query answers
 */
struct dvx_mock_nic_cfg {
	struct dvx_hal_nic_info info;
	struct dvx_hal_nic_attr attr;
	struct dvx_hal_port_attr port[DVX_MOCK_MAX_PORTS];
	struct dvx_hal_gid gid[DVX_MOCK_MAX_PORTS][DVX_MOCK_MAX_GIDS];
	struct dvx_mock_cap caps[DVX_MOCK_MAX_CAPS];
	int32_t open_err;
	uint8_t rmac[6];
	uint8_t rsvd[2];
	uint32_t eqn;
	uint32_t rsvd2;
};

#define DVX_MOCK_MAX_CAPTURES 4

/**
 * struct dvx_mock_capture - a copy of the mailboxes of matching DEVX commands
 * (devx_cmd, obj_create, obj_modify, obj_query), for a test's own byte assertions;
 * armed with dvx_mock_capture(). The last matching command's bytes are kept, whether
 * it succeeded or failed (an injected fault's output mailbox holds its status);
 * dvx_mock_capture_clear() disarms them all.
 * @active:	armed
 * @opcode:	the input mailbox's opcode to match
 * @op_mod:	its op_mod, or -1 for any
 * @count:	matching commands seen since it was armed
 * @in, @in_cap: caller buffer for the input mailbox and its size (NULL: not kept)
 * @in_len:	bytes of the last input mailbox (the copy is cut at @in_cap)
 * @out, @out_cap, @out_len: likewise for the output mailbox, as the mock answered
 */
struct dvx_mock_capture {
	uint8_t active;
	uint8_t rsvd;
	uint16_t opcode;
	int32_t op_mod;
	uint32_t count;
	uint32_t in_cap;
	uint32_t in_len;
	uint32_t out_cap;
	uint32_t out_len;
	uint32_t rsvd2;
	void *in;
	void *out;
};

/**
 * struct dvx_mock_devx_fault - make matching DEVX commands fail in the mailbox.
 * @dev:	device index, -1 for any
 * @opcode:	PRM opcode to match
 * @op_mod:	op_mod to match, -1 for any
 * @status:	status byte written to output byte 0 (non-zero)
 * @syndrome:	written to output bytes 4-7
 * @count:	how many more matching commands fail; 0 means every one
 * @active:	slot in use
 */
struct dvx_mock_devx_fault {
	int32_t dev;
	uint16_t opcode;
	uint16_t rsvd;
	int32_t op_mod;
	uint8_t status;
	uint8_t active;
	uint16_t rsvd2;
	uint32_t syndrome;
	uint32_t count;
};

/* the mock's own records of what it handed out; tests may read them */
struct dvx_mock_nic {
	struct dvx_mock_nic_cfg cfg;
	uint32_t opens;		/* handles currently open on this device */
	uint32_t rsvd;
};

struct dvx_mock_obj {
	uint8_t live;
	int8_t dev;
	uint16_t opcode;	/* creating PRM opcode */
	uint32_t id;		/* object number written to the create output */
	uint32_t modifies;
	uint32_t queries;
	uint16_t last_modify_opcode;
	uint16_t rsvd;
};

struct dvx_mock_umem {
	uint8_t live;
	int8_t dev;
	uint8_t via_dmabuf;
	uint8_t rsvd;
	uint32_t id;
	uint64_t addr;
	uint64_t len;
	uint32_t access;
	int32_t dmabuf_fd;
};

struct dvx_mock_uar {
	uint8_t live;
	int8_t dev;
	uint8_t rsvd[2];
	uint32_t type;
	uint32_t page_id;
	uint32_t rsvd2;
};

struct dvx_mock_pd {
	uint8_t live;
	int8_t dev;
	uint8_t rsvd[2];
	uint32_t pdn;
	uint32_t mrs;		/* MRs registered on it */
	uint32_t rsvd2;
};

struct dvx_mock_mr {
	uint8_t live;
	int8_t dev;
	int8_t pd;
	uint8_t via_dmabuf;
	uint32_t lkey;
	uint64_t addr;
	uint64_t len;
	uint64_t iova;
	uint32_t access;
	uint32_t flags;
};

struct dvx_mock_mem {
	uint8_t live;
	uint8_t rsvd[7];
	void *addr;
};

/* a socket the mock opened (a real one) and has not closed yet */
struct dvx_mock_sock {
	uint8_t live;
	uint8_t listening;	/* from sock_listen */
	uint8_t rsvd[2];
	int32_t fd;
};

/* ---- GPU fakes ---- */
#define DVX_MOCK_MAX_GPUS 4
#define DVX_MOCK_MAX_GPU_MEMS 16
#define DVX_MOCK_MAX_GPU_HOSTREGS 16
#define DVX_MOCK_MAX_GPU_MODULES 4
#define DVX_MOCK_MAX_GPU_STREAMS 8
#define DVX_MOCK_MAX_FDS 32

/* a descriptor the mock handed out: a real one (a memfd standing in for a GPU export or
 * a dma-buf, or one received over a socket), so it can travel between processes */
struct dvx_mock_fd {
	uint8_t live;
	uint8_t rsvd[3];
	int32_t fd;
};

/**
 * typedef dvx_mock_gpu_launch_fn - stands in for a kernel: the mock calls it from
 * gpu_launch with the launch (function handle, grid, block, arguments) so a test can
 * do on the host what the kernel would. Its return value is the launch's.
 */
typedef int (*dvx_mock_gpu_launch_fn)(void *arg, const struct dvx_hal_gpu_launch *launch);

/* device memory: real host memory (so memcpy and the launch hook can touch it) */
struct dvx_mock_gpu_mem {
	uint8_t live;
	int8_t gpu;
	uint8_t rsvd[2];
	uint32_t flags;			/* DVX_HAL_GPU_MEM_* as created or imported */
	struct dvx_hal_mem host;	/* the backing memory; dptr == host.addr */
};

struct dvx_mock_gpu_hostreg {
	uint8_t live;
	int8_t gpu;
	uint8_t rsvd[2];
	uint32_t flags;
	uint64_t addr;
	uint64_t len;
};

/**
 * struct dvx_mock - the whole mock: its hal instance, devices, resources, log,
 * faults and clock. Set the public knobs (fail_*, check, now_*, limits) directly or
 * with the helpers; read the counters and the log with the accessors.
 */
struct dvx_mock {
	struct dvx_hal hal;		/* what dvx_mock_hal() returns */

	/* configuration */
	struct dvx_mock_nic dev[DVX_MOCK_MAX_DEVS];
	unsigned ndevs;
	struct dvx_hal_pci_dev pci[DVX_MOCK_MAX_PCI];
	unsigned npci;
	struct dvx_hal_limits limits;	/* what limits() answers */
	int32_t limits_err;		/* non-zero: limits() fails with it */

	/* fault injection */
	uint32_t fail_at;		/* fail the call with this seq (1-based), 0 never */
	int32_t fail_at_err;		/* ... with this negative errno (-EIO if 0) */
	int32_t fail_op_err[DVX_MOCK_OP_COUNT];	/* non-zero: every call of the op fails */
	struct dvx_mock_devx_fault devx_fault[DVX_MOCK_MAX_DEVX_FAULTS];
	dvx_mock_check_fn check;
	void *check_arg;
	uint32_t uar_bf_nc;		/* BlueFlame UARs come back mapped non-cached */
	uint32_t rsvd_uar;
	struct dvx_mock_capture capture[DVX_MOCK_MAX_CAPTURES];

	/* clock: now_ns() answers now_ns, then adds now_step; sleep_ns() adds its length.
	 * With now_real set, now_ns() reads CLOCK_MONOTONIC and sleep_ns() really sleeps
	 * (for code that waits on real sockets) */
	uint64_t now_ns;
	uint64_t now_step;
	uint32_t now_real;
	uint32_t rsvd_clock;
	uint64_t progress_calls;	/* dev_progress() calls */

	/* the log */
	uint32_t seq;			/* calls so far (all ops) */
	uint32_t op_calls[DVX_MOCK_OP_COUNT];
	uint32_t op_fails[DVX_MOCK_OP_COUNT];
	struct dvx_mock_call log[DVX_MOCK_LOG_MAX];

	/* resources */
	int32_t live[DVX_MOCK_RES_COUNT];
	uint32_t closed_with_live;	/* dev_close calls that left resources behind */
	uint32_t next_id;		/* object numbers, umem ids, page ids, pdns, keys */
	struct dvx_mock_obj obj[DVX_MOCK_MAX_OBJS];
	struct dvx_mock_umem umem[DVX_MOCK_MAX_UMEMS];
	struct dvx_mock_uar uar[DVX_MOCK_MAX_UARS];
	struct dvx_mock_pd pd[DVX_MOCK_MAX_PDS];
	struct dvx_mock_mr mr[DVX_MOCK_MAX_MRS];
	struct dvx_mock_mem mem[DVX_MOCK_MAX_MEMS];
	struct dvx_mock_sock sock[DVX_MOCK_MAX_SOCKS];
	/* UAR pages: real memory so doorbell writes (8-byte stores) land somewhere */
	uint64_t uar_page[DVX_MOCK_MAX_UARS][DVX_MOCK_UAR_BYTES / 8];

	/* GPU fakes: devices from dvx_mock_add_gpu(); resources below */
	struct dvx_hal_gpu_attr gpu[DVX_MOCK_MAX_GPUS];
	unsigned ngpus;
	int32_t gpu_init_err;		/* non-zero: gpu_init fails with it (-ENODEV: no driver) */
	uint32_t gpu_ctx_refs[DVX_MOCK_MAX_GPUS];	/* primary-context retains per GPU */
	uint32_t gpu_stream_busy;	/* stream_query answers -EBUSY this many times first */
	uint32_t gpu_peer[DVX_MOCK_MAX_GPUS];	/* bit j: GPU i can access GPU j (all, by default) */
	dvx_mock_gpu_launch_fn gpu_launch_fn;	/* runs "the kernel" on the host, may be NULL */
	void *gpu_launch_arg;
	struct dvx_mock_gpu_mem gpu_mem[DVX_MOCK_MAX_GPU_MEMS];
	struct dvx_mock_gpu_hostreg gpu_hostreg[DVX_MOCK_MAX_GPU_HOSTREGS];
	uint8_t gpu_module_live[DVX_MOCK_MAX_GPU_MODULES];
	uint8_t gpu_stream_live[DVX_MOCK_MAX_GPU_STREAMS];

	/* descriptors handed out, and what host_ident answers (dvx_mock_init: host "mock",
	 * boot id 0x6d ..., this process's pid and uid) */
	struct dvx_mock_fd fds[DVX_MOCK_MAX_FDS];
	struct dvx_hal_host_ident ident;
};

/**
 * dvx_mock_init() - set up a mock with no devices, an unlimited memlock limit, the
 * clock at 0 and no faults.
 * @m:		caller storage, fully overwritten
 *
 * Return: 0, or -EINVAL when @m is NULL.
 */
int dvx_mock_init(struct dvx_mock *m);

/**
 * dvx_mock_hal() - the hal instance to hand to the code under test.
 * Return: &m->hal (valid as long as @m).
 */
const struct dvx_hal *dvx_mock_hal(struct dvx_mock *m);

/**
 * dvx_mock_nic_cfg_init() - the mock's default device: the given name and PCI address,
 * mlx5 driver and vendor, one Ethernet (RoCE) port, active, with its link-local GID at
 * index 0 (RoCE v1) and 1 (RoCE v2), and the current capability pages (general, atomic,
 * RoCE, general 2) of a ConnectX-7 like device (the software NIC's default NIC), so
 * dvx_nic_open() works on it as it is.
 * @cfg:	overwritten
 * @name:	device name (mlx5_0)
 * @pci:	PCI address ("0000:3b:00.0"), or NULL
 *
 * dvx_mock_nic_cfg_set_cap() replaces a page, dvx_mock_nic_cfg_clear_caps() removes
 * them all (a device whose QUERY_HCA_CAP answers BAD_PARAM); dvx_test_mock_cx7()
 * (libdvx-test.a) is a fuller ConnectX-7 written with dvx's own capability setters.
 */
void dvx_mock_nic_cfg_init(struct dvx_mock_nic_cfg *cfg, const char *name, const char *pci);

/**
 * dvx_mock_nic_cfg_clear_caps() - remove every capability page of a configuration:
 * QUERY_HCA_CAP then answers BAD_PARAM for every op_mod, for tests of what code does
 * when pages are missing.
 * @cfg:	device configuration (NULL: nothing)
 */
void dvx_mock_nic_cfg_clear_caps(struct dvx_mock_nic_cfg *cfg);

/**
 * dvx_mock_nic_cfg_set_cap() - store the QUERY_HCA_CAP answer for @op_mod.
 * @cfg:	device configuration
 * @op_mod:	(cap_type << 1) | current
 * @page:	the page, DVX_MOCK_CAP_BYTES bytes (copied)
 *
 * Return: 0, or -ENOSPC when all DVX_MOCK_MAX_CAPS slots hold other op_mods.
 */
int dvx_mock_nic_cfg_set_cap(struct dvx_mock_nic_cfg *cfg, uint16_t op_mod, const void *page);

/**
 * dvx_mock_nic_cfg_add_gid() - append a GID table entry to a port.
 * @cfg:	device configuration
 * @port:	1-based port
 * @index:	table index (< DVX_MOCK_MAX_GIDS)
 * @raw:	the GID, network order
 * @type:	enum dvx_gid_type
 * @netdev:	interface name, or NULL
 *
 * Return: 0 or -EINVAL.
 */
int dvx_mock_nic_cfg_add_gid(struct dvx_mock_nic_cfg *cfg, uint8_t port, uint32_t index,
			     const uint8_t raw[16], enum dvx_gid_type type, const char *netdev);

/**
 * dvx_mock_add_nic() - add a device (its configuration is copied).
 * Return: the device's index (0, 1, ...), or -ENOSPC.
 */
int dvx_mock_add_nic(struct dvx_mock *m, const struct dvx_mock_nic_cfg *cfg);

/** dvx_mock_nic_cfg() - the stored configuration of device @idx, to adjust. NULL if none. */
struct dvx_mock_nic_cfg *dvx_mock_nic_cfg(struct dvx_mock *m, int idx);

/**
 * dvx_mock_add_pci() - add a PCI function for pci_list() to report.
 * Return: 0 or -ENOSPC.
 */
int dvx_mock_add_pci(struct dvx_mock *m, const struct dvx_hal_pci_dev *pci);

/**
 * dvx_mock_fail_at() - fail the @seq-th call (counting every call since init or the
 * last dvx_mock_reset_log(), from 1) with @err. 0 disarms. A call that cannot fail
 * (dev_progress, now_ns) at that position fails nothing.
 */
void dvx_mock_fail_at(struct dvx_mock *m, uint32_t seq, int err);

/** dvx_mock_fail_op() - fail every call of @op with @err (0 stops failing it). */
void dvx_mock_fail_op(struct dvx_mock *m, enum dvx_mock_op op, int err);

/**
 * dvx_mock_fail_devx() - make DEVX commands (devx_cmd, obj_create/modify/query) with
 * @opcode (and @op_mod unless -1) on device @dev (-1 any) answer @status and
 * @syndrome in their output mailbox, @count times (0: always). The call then fails
 * as on hardware: rdma-core's EREMOTEIO with the mailbox filled, translated by
 * dvx_hal_diag_devx() into dev->diag and the status's errno.
 *
 * Return: 0, -EINVAL (status 0) or -ENOSPC.
 */
int dvx_mock_fail_devx(struct dvx_mock *m, int dev, uint16_t opcode, int op_mod,
		       uint8_t status, uint32_t syndrome, uint32_t count);

/** dvx_mock_clear_faults() - disarm fail_at, fail_op and every DEVX fault. */
void dvx_mock_clear_faults(struct dvx_mock *m);

/**
 * dvx_mock_capture() - keep a copy of the mailboxes of DEVX commands with @opcode
 * (and @op_mod unless -1) in the caller's buffers; see struct dvx_mock_capture.
 * @m:		the mock
 * @opcode:	PRM opcode of the input mailbox (e.g. 0x400 CREATE_CQ)
 * @op_mod:	its op_mod, or -1 for any
 * @in, @in_cap: where the last input mailbox goes (NULL: not kept)
 * @out, @out_cap: where the last output mailbox goes (NULL: not kept)
 *
 * Context: test set-up. Return: the capture's slot (read m->capture[slot].count,
 * .in_len, .out_len afterwards), or -ENOSPC when DVX_MOCK_MAX_CAPTURES are armed.
 */
int dvx_mock_capture(struct dvx_mock *m, uint16_t opcode, int op_mod, void *in, size_t in_cap,
		     void *out, size_t out_cap);

/** dvx_mock_capture_clear() - disarm every capture (their buffers are the caller's). */
void dvx_mock_capture_clear(struct dvx_mock *m);

/** dvx_mock_set_check() - install the per-call hook (NULL removes it). */
void dvx_mock_set_check(struct dvx_mock *m, dvx_mock_check_fn fn, void *arg);

/** dvx_mock_reset_log() - forget the log and the per-op counters; seq restarts at 1. */
void dvx_mock_reset_log(struct dvx_mock *m);

/** dvx_mock_calls() - how many calls so far (the seq of the last one). */
uint32_t dvx_mock_calls(const struct dvx_mock *m);

/** dvx_mock_count() - how many calls of @op so far (also those gone from the ring). */
uint32_t dvx_mock_count(const struct dvx_mock *m, enum dvx_mock_op op);

/** dvx_mock_fails() - how many calls of @op returned an error. */
uint32_t dvx_mock_fails(const struct dvx_mock *m, enum dvx_mock_op op);

/**
 * dvx_mock_call_at() - the record of call number @seq.
 * Return: the record, or NULL when it is not (or no longer) in the ring.
 */
const struct dvx_mock_call *dvx_mock_call_at(const struct dvx_mock *m, uint32_t seq);

/**
 * dvx_mock_find() - the @nth (from 0) recorded call of @op still in the ring.
 * Return: the record, or NULL.
 */
const struct dvx_mock_call *dvx_mock_find(const struct dvx_mock *m, enum dvx_mock_op op,
					  unsigned nth);

/** dvx_mock_last() - the most recent call of @op still in the ring, or NULL. */
const struct dvx_mock_call *dvx_mock_last(const struct dvx_mock *m, enum dvx_mock_op op);

/** dvx_mock_live() - resources of kind @res held now. */
int dvx_mock_live(const struct dvx_mock *m, enum dvx_mock_res res);

/** dvx_mock_live_total() - resources of every kind held now. */
int dvx_mock_live_total(const struct dvx_mock *m);

/** dvx_mock_op_name() - "nic_open", "devx_cmd", ... ("?" for unknown values). */
const char *dvx_mock_op_name(enum dvx_mock_op op);

/** dvx_mock_res_name() - "dev", "obj", ... ("?" for unknown values). */
const char *dvx_mock_res_name(enum dvx_mock_res res);

/**
 * dvx_mock_obj_by_id() - the mock's record of a live DEVX object by its number.
 * Return: the record, or NULL when no live object has that number.
 */
const struct dvx_mock_obj *dvx_mock_obj_by_id(const struct dvx_mock *m, uint32_t id);

/**
 * dvx_mock_add_gpu() - add a GPU for the gpu_* fakes (its attributes are copied).
 * @m:		the mock
 * @attr:	what gpu_query answers; attr->pci is what gpu_get matches a PCI address
 *		against, attr->ordinal is overwritten with the GPU's index
 *
 * The fakes: gpu_init fails with m->gpu_init_err when set; gpu_get finds by ordinal or
 * PCI (-ENODEV otherwise); contexts are reference-counted per GPU; device memory,
 * registrations, modules and streams are kept in fixed tables and counted in
 * DVX_MOCK_RES_GPU_*; device memory is real host memory (dptr is its address, so
 * memcpy_htod/dtoh and memcpy_async copy, stream_atomic stores or adds at once);
 * exported FD handles and dma-bufs are real descriptors (empty memfds) counted in
 * DVX_MOCK_RES_FD until dvx_hal_fd_close(), so they can be passed to another process;
 * FABRIC and IPC handles are bytes naming the allocation; an import maps fresh stand-in
 * memory of the handle's length (no bytes are shared: the software NIC's GPUs share
 * them); mem_lookup finds the allocation around an address, -ENOENT elsewhere;
 * peer_access answers from m->gpu_peer (every pair, unless a test clears bits); a
 * launch calls m->gpu_launch_fn; stream_query answers -EBUSY m->gpu_stream_busy times,
 * then 0.
 *
 * Return: the GPU's index, or -ENOSPC / -EINVAL.
 */
int dvx_mock_add_gpu(struct dvx_mock *m, const struct dvx_hal_gpu_attr *attr);

/**
 * dvx_mock_gpu_attr_h100() - attributes of an H100-like GPU (cc 9.0, 132 SMs, GPUDirect
 * RDMA, dma-buf, VMM with the RDMA flag) at PCI address @pci.
 */
void dvx_mock_gpu_attr_h100(struct dvx_hal_gpu_attr *attr, const char *pci);

DVX_END_DECLS

#endif /* DVX_TESTING_MOCK_H */
