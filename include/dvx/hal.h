/* SPDX-License-Identifier: MIT */
/*
 * dvx/hal.h - the hardware abstraction layer: the only door to the outside.
 *
 * Everything dvx does to a NIC, a GPU or the OS goes through one ops table. A
 * struct dvx_hal is a backend instance (ops + the backend's own context); a NIC is
 * opened through a particular instance and remembers it, so one process can drive a
 * hardware NIC (linux backend), the software NIC (sim backend) and a mock side by
 * side. There is no global backend.
 *
 * Handles (struct dvx_hal_nic, _obj, _umem, _uar, _pd, _mr, _mem) live in caller
 * storage; a backend keeps its own pointer in ->priv. Every call returns 0 or a
 * negative errno; on failure the backend records the vendor's words (rdma-core errno,
 * DEVX status/syndrome, CUresult) in dev->diag (see dvx/diag.h). Nothing is printed.
 *
 * Concurrency: calls on one struct dvx_hal_nic are not serialised by the hal; the
 * control path of one device is expected to run on one thread at a time. Backends
 * themselves are thread-safe across devices.
 */
#ifndef DVX_HAL_H
#define DVX_HAL_H

#include <dvx/compiler.h>
#include <dvx/diag.h>

DVX_BEGIN_DECLS

struct dvx_hal;
struct dvx_hal_ops;
struct dvx_hal_gpu;		/* GPU (CUDA driver API) handles: see the end of this file */
struct dvx_hal_gpu_attr;
struct dvx_hal_gpu_mem_req;
struct dvx_hal_gpu_mem;
struct dvx_hal_gpu_module;
struct dvx_hal_gpu_launch;

/* Access rights for umems and MRs; the values are those of IBV_ACCESS_*. */
enum dvx_access {
	DVX_ACCESS_LOCAL_WRITE = 1u << 0,
	DVX_ACCESS_REMOTE_WRITE = 1u << 1,
	DVX_ACCESS_REMOTE_READ = 1u << 2,
	DVX_ACCESS_REMOTE_ATOMIC = 1u << 3,
	DVX_ACCESS_RELAXED_ORDERING = 1u << 20,
};

/** enum dvx_link_layer - port link layer, as ibv_port_attr.link_layer. */
enum dvx_link_layer {
	DVX_LINK_LAYER_UNSPECIFIED = 0,
	DVX_LINK_LAYER_IB = 1,
	DVX_LINK_LAYER_ETHERNET = 2,
};

/** enum dvx_gid_type - what a GID table entry is. */
enum dvx_gid_type {
	DVX_GID_TYPE_IB = 0,
	DVX_GID_TYPE_ROCE_V1 = 1,
	DVX_GID_TYPE_ROCE_V2 = 2,
};

/** enum dvx_uar_type - the kinds of UAR register a device can hand out. */
enum dvx_uar_type {
	DVX_UAR_NC_DEDICATED = 0,	/* a doorbell register of our own, non-cached */
	DVX_UAR_NC_SHARED = 1,		/* the per-context shared non-cached register */
	DVX_UAR_BF = 2,			/* a BlueFlame register on a write-combining page */
};

#define DVX_HAL_NAME_MAX 64
#define DVX_HAL_PCI_MAX 32

/**
 * struct dvx_hal_nic_info - identity of a device, from the device list.
 * @name:	device name (ibdev name such as "mlx5_0", or the backend's)
 * @pci:	PCI address "dddd:bb:dd.f", empty if none
 * @driver:	kernel driver bound to the PCI function ("mlx5_core"), empty if none
 * @netdev:	first network interface of port 1, empty if none
 * @numa_node:	NUMA node of the PCI function, -1 if unknown
 * @vendor_id:	PCI vendor id (0x15b3 for Mellanox/NVIDIA)
 * @device_id:	PCI device id
 * @node_guid:	node GUID, CPU byte order
 * @nports:	number of physical ports
 * @is_mlx5:	1 when the device is driven by mlx5 (decided by driver, never by name)
 */
struct dvx_hal_nic_info {
	char name[DVX_HAL_NAME_MAX];
	char pci[DVX_HAL_PCI_MAX];
	char driver[32];
	char netdev[32];
	int32_t numa_node;
	uint32_t vendor_id;
	uint32_t device_id;
	uint64_t node_guid;
	uint8_t nports;
	uint8_t is_mlx5;
	uint8_t rsvd[6];
};

/**
 * struct dvx_hal_nic_attr - what ibv_query_device reports, in dvx's words.
 */
struct dvx_hal_nic_attr {
	char fw_ver[64];
	uint64_t node_guid;
	uint64_t sys_image_guid;
	uint64_t max_mr_size;
	uint64_t page_size_cap;
	uint32_t vendor_id;
	uint32_t vendor_part_id;
	uint32_t hw_ver;
	uint32_t max_qp;
	uint32_t max_qp_wr;
	uint32_t max_cq;
	uint32_t max_cqe;
	uint32_t max_mr;
	uint32_t max_pd;
	uint32_t max_qp_rd_atom;
	uint32_t max_qp_init_rd_atom;
	uint8_t phys_port_cnt;
	uint8_t atomic_cap;	/* 0 none, 1 within the HCA, 2 global (IBV_ATOMIC_*) */
	uint8_t rsvd[6];
};

/**
 * struct dvx_hal_port_attr - one port, as ibv_query_port reports it.
 * @state:	1 down, 2 init, 3 armed, 4 active, 5 active-defer (IBV_PORT_*)
 * @link_layer:	enum dvx_link_layer
 * @active_mtu:	IB MTU enum (1=256 ... 5=4096)
 * @max_mtu:	IB MTU enum
 * @lid:	base LID (IB)
 * @sm_lid:	subnet manager LID (IB)
 * @lmc:	LID mask count
 * @sm_sl:	SM service level
 * @active_width: IB width code
 * @active_speed: IB speed code
 * @phys_state:	physical state (5 = LinkUp)
 * @gid_tbl_len: number of GID table entries
 * @pkey_tbl_len: number of P_Key entries
 * @port_cap_flags: IB port capability mask
 * @active_speed_ex: extended speed code (0 if not reported)
 */
struct dvx_hal_port_attr {
	uint8_t state;
	uint8_t link_layer;
	uint8_t active_mtu;
	uint8_t max_mtu;
	uint16_t lid;
	uint16_t sm_lid;
	uint8_t lmc;
	uint8_t sm_sl;
	uint8_t active_width;
	uint8_t active_speed;
	uint8_t phys_state;
	uint8_t rsvd[3];
	uint32_t gid_tbl_len;
	uint16_t pkey_tbl_len;
	uint16_t rsvd2;
	uint32_t port_cap_flags;
	uint32_t active_speed_ex;
};

/**
 * struct dvx_hal_gid - one GID table entry.
 * @raw:	the GID, network byte order (as it goes on the wire and into qpc.rgid)
 * @index:	table index
 * @type:	enum dvx_gid_type
 * @valid:	0 for an empty entry
 * @ifindex:	network interface the entry belongs to (RoCE), 0 if none
 * @netdev:	its name, empty if none
 */
struct dvx_hal_gid {
	uint8_t raw[16];
	uint32_t index;
	uint8_t type;
	uint8_t valid;
	uint16_t rsvd;
	uint32_t ifindex;
	char netdev[32];
};

/**
 * struct dvx_hal_nic - an opened device, in caller storage.
 * @hal:	the backend instance it was opened through
 * @priv:	backend handle
 * @info:	identity, filled by open
 * @diag:	the last failure of a call on this device
 * @log:	optional log sink; zero means silence
 */
struct dvx_hal_nic {
	const struct dvx_hal *hal;
	void *priv;
	struct dvx_hal_nic_info info;
	struct dvx_diag diag;
	struct dvx_log log;
};

/** struct dvx_hal_obj - a DEVX object (CQ, QP, ...); @id is set by the caller from the output. */
struct dvx_hal_obj {
	void *priv;
	uint32_t id;
	uint16_t cmd_opcode;	/* the PRM opcode that created it */
	uint16_t rsvd;
};

/**
 * struct dvx_hal_umem_req - memory to register as a DEVX umem.
 * @addr:	virtual address (ignored when @dmabuf_fd >= 0)
 * @len:	length in bytes
 * @access:	enum dvx_access bits (queue memory uses DVX_ACCESS_LOCAL_WRITE)
 * @dmabuf_fd:	a dma-buf fd to register from, or -1
 * @dmabuf_offset: offset of the region inside the dma-buf
 * @pgsz_bitmap: page sizes the device may use, 0 for the backend's default
 */
struct dvx_hal_umem_req {
	void *addr;
	uint64_t len;
	uint32_t access;
	int32_t dmabuf_fd;
	uint64_t dmabuf_offset;
	uint64_t pgsz_bitmap;
};

/** struct dvx_hal_umem - a registered umem; @id goes into *_umem_id mailbox fields. */
struct dvx_hal_umem {
	void *priv;
	uint32_t id;
	uint8_t via_dmabuf;
	uint8_t rsvd[3];
	uint64_t len;
};

/**
 * struct dvx_hal_uar - a UAR register.
 * @reg_addr:	where doorbells (and BlueFlame copies) are written
 * @base_addr:	start of the mapped UAR page
 * @page_id:	goes into qpc.uar_page / cqc.uar_page
 * @type:	enum dvx_uar_type actually obtained
 * @mmap_off:	mmap offset of the page (for mapping it elsewhere), 0 if unknown
 */
struct dvx_hal_uar {
	void *priv;
	void *reg_addr;
	void *base_addr;
	uint32_t page_id;
	uint32_t type;
	uint64_t mmap_off;
};

/** struct dvx_hal_pd - a protection domain and its number. */
struct dvx_hal_pd {
	void *priv;
	uint32_t pdn;
	uint32_t rsvd;
};

/* struct dvx_hal_mr_req.flags */
enum {
	DVX_MR_DMABUF = 1u << 0,	/* register @dmabuf_fd at @dmabuf_offset */
	DVX_MR_DATA_DIRECT = 1u << 1,	/* mlx5 Data-Direct dma-buf registration */
};

/**
 * struct dvx_hal_mr_req - memory to register as an MR.
 * @addr:	virtual address of the region (host or GPU); unused for dma-buf
 * @len:	length in bytes
 * @iova:	the address the NIC will know the region by; 0 for a zero-based MR
 * @access:	enum dvx_access bits
 * @flags:	DVX_MR_* flags
 * @dmabuf_fd:	dma-buf fd (DVX_MR_DMABUF), else -1
 * @dmabuf_offset: offset of the region inside the dma-buf
 */
struct dvx_hal_mr_req {
	void *addr;
	uint64_t len;
	uint64_t iova;
	uint32_t access;
	uint32_t flags;
	int32_t dmabuf_fd;
	uint32_t rsvd;
	uint64_t dmabuf_offset;
};

/** struct dvx_hal_mr - a registered MR. */
struct dvx_hal_mr {
	void *priv;
	uint32_t lkey;
	uint32_t rkey;
	void *addr;
	uint64_t len;
	uint64_t iova;
	uint32_t access;
	uint8_t via_dmabuf;
	uint8_t rsvd[3];
};

/* struct dvx_hal_mem kinds and dvx_hal_mem_alloc() flags */
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
 * struct dvx_hal_ops - the backend's entry points. A NULL entry means the backend
 * does not provide the call; the dvx_hal_*() wrappers then return -ENOSYS.
 *
 * dev_list and pci_list write at most @max entries and set *@count to the number
 * present, which may exceed @max: call with max 0 to size the array. dev_list lists
 * every RDMA device, mlx5 or not (see dvx_hal_nic_info.is_mlx5); dev_open accepts an
 * ibdev name or a PCI address ("0000:3b:00.0" or "3b:00.0") and refuses a device
 * that is not mlx5 with -ENODEV.
 */
struct dvx_hal_ops {
	/* devices */
	int (*nic_list)(const struct dvx_hal *hal, struct dvx_hal_nic_info *info,
			unsigned max, unsigned *count);
	int (*nic_open)(const struct dvx_hal *hal, const char *name, struct dvx_hal_nic *dev);
	int (*nic_close)(struct dvx_hal_nic *dev);
	int (*nic_query)(struct dvx_hal_nic *dev, struct dvx_hal_nic_attr *attr);
	int (*query_port)(struct dvx_hal_nic *dev, uint8_t port, struct dvx_hal_port_attr *attr);
	int (*query_gid)(struct dvx_hal_nic *dev, uint8_t port, uint32_t index,
			 struct dvx_hal_gid *gid);

	/* DEVX commands and objects */
	int (*devx_cmd)(struct dvx_hal_nic *dev, const void *in, size_t inlen, void *out,
			size_t outlen);
	int (*obj_create)(struct dvx_hal_nic *dev, const void *in, size_t inlen, void *out,
			  size_t outlen, struct dvx_hal_obj *obj);
	int (*obj_modify)(struct dvx_hal_nic *dev, struct dvx_hal_obj *obj, const void *in,
			  size_t inlen, void *out, size_t outlen);
	int (*obj_query)(struct dvx_hal_nic *dev, struct dvx_hal_obj *obj, const void *in,
			 size_t inlen, void *out, size_t outlen);
	int (*obj_destroy)(struct dvx_hal_nic *dev, struct dvx_hal_obj *obj);

	/* umems, UARs, PDs, EQs */
	int (*umem_reg)(struct dvx_hal_nic *dev, const struct dvx_hal_umem_req *req,
			struct dvx_hal_umem *umem);
	int (*umem_dereg)(struct dvx_hal_nic *dev, struct dvx_hal_umem *umem);
	int (*uar_alloc)(struct dvx_hal_nic *dev, enum dvx_uar_type type, struct dvx_hal_uar *uar);
	int (*uar_free)(struct dvx_hal_nic *dev, struct dvx_hal_uar *uar);
	int (*pd_alloc)(struct dvx_hal_nic *dev, struct dvx_hal_pd *pd);
	int (*pd_free)(struct dvx_hal_nic *dev, struct dvx_hal_pd *pd);
	int (*eqn_query)(struct dvx_hal_nic *dev, uint32_t vector, uint32_t *eqn);

	/* memory regions */
	int (*mr_reg)(struct dvx_hal_nic *dev, struct dvx_hal_pd *pd,
		      const struct dvx_hal_mr_req *req, struct dvx_hal_mr *mr);
	int (*mr_dereg)(struct dvx_hal_nic *dev, struct dvx_hal_mr *mr);

	/* RoCE: the destination MAC for a GID, resolved through an address handle */
	int (*roce_rmac)(struct dvx_hal_nic *dev, struct dvx_hal_pd *pd, uint8_t port,
			 uint32_t sgid_index, const uint8_t dgid[16], uint8_t mac[6]);

	/* progress: called by dvx's wait loops between polls (the sim steps its model
	 * here; hardware backends relax the CPU) */
	void (*nic_progress)(struct dvx_hal_nic *dev);

	/* host side: memory, PCI topology, limits, clock */
	int (*mem_alloc)(const struct dvx_hal *hal, uint64_t len, uint64_t align,
			 int numa_node, uint32_t flags, struct dvx_hal_mem *mem);
	int (*mem_free)(const struct dvx_hal *hal, struct dvx_hal_mem *mem);
	int (*pci_list)(const struct dvx_hal *hal, uint32_t class_mask, uint32_t class_value,
			struct dvx_hal_pci_dev *devs, unsigned max, unsigned *count);
	int (*limits)(const struct dvx_hal *hal, struct dvx_hal_limits *lim);
	uint64_t (*now_ns)(const struct dvx_hal *hal);

	/* GPU, CUDA driver API (see struct dvx_hal_gpu below). Every entry takes the GPU
	 * handle, whose diag receives the CUresult and its name on failure. */
	int (*gpu_init)(struct dvx_hal_gpu *gpu);
	int (*gpu_count)(struct dvx_hal_gpu *gpu, int *count);
	int (*gpu_get)(struct dvx_hal_gpu *gpu, int ordinal, const char *pci);
	int (*gpu_query)(struct dvx_hal_gpu *gpu, struct dvx_hal_gpu_attr *attr);
	int (*gpu_ctx_retain)(struct dvx_hal_gpu *gpu);
	int (*gpu_ctx_release)(struct dvx_hal_gpu *gpu);
	int (*gpu_ctx_set_current)(struct dvx_hal_gpu *gpu);
	int (*gpu_mem_create)(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_mem_req *req,
			      struct dvx_hal_gpu_mem *mem);
	int (*gpu_mem_free)(struct dvx_hal_gpu *gpu, struct dvx_hal_gpu_mem *mem);
	int (*gpu_mem_export)(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_mem *mem, int *fd);
	int (*gpu_dmabuf_fd)(struct dvx_hal_gpu *gpu, uint64_t dptr, uint64_t len, uint32_t flags,
			     int *fd);
	int (*gpu_host_register)(struct dvx_hal_gpu *gpu, void *addr, uint64_t len, uint32_t flags,
				 uint64_t *dptr);
	int (*gpu_host_unregister)(struct dvx_hal_gpu *gpu, void *addr);
	int (*gpu_module_load)(struct dvx_hal_gpu *gpu, const void *image,
			       struct dvx_hal_gpu_module *mod);
	int (*gpu_module_unload)(struct dvx_hal_gpu *gpu, struct dvx_hal_gpu_module *mod);
	int (*gpu_module_function)(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_module *mod,
				   const char *name, void **func);
	int (*gpu_launch)(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_launch *launch);
	int (*gpu_stream_create)(struct dvx_hal_gpu *gpu, void **stream);
	int (*gpu_stream_destroy)(struct dvx_hal_gpu *gpu, void *stream);
	int (*gpu_stream_query)(struct dvx_hal_gpu *gpu, void *stream);
	int (*gpu_memcpy_htod)(struct dvx_hal_gpu *gpu, uint64_t dptr, const void *src, uint64_t len);
	int (*gpu_memcpy_dtoh)(struct dvx_hal_gpu *gpu, void *dst, uint64_t dptr, uint64_t len);
};

/**
 * struct dvx_hal - a backend instance.
 * @ops:	the entry points
 * @ctx:	the backend's own state (NULL for linux; the mock or the fabric otherwise)
 * @name:	"linux", "mock", "sim"
 */
struct dvx_hal {
	const struct dvx_hal_ops *ops;
	void *ctx;
	const char *name;
};

/**
 * dvx_hal_linux() - the hardware backend (rdma-core mlx5dv/DEVX, sysfs, DPDK, CUDA).
 *
 * Context: any. Return: a static instance, or NULL when this libdvx was built
 * without rdma-core support (CONFIG_DVX_RDMA=n).
 */
const struct dvx_hal *dvx_hal_linux(void);

/*
 * The wrappers every layer above calls. Each mirrors the struct dvx_hal_ops entry of
 * the same name (dvx_hal_foo() calls ops->foo), checks its arguments (-EINVAL), returns
 * -ENOSYS when the backend lacks the entry, and on failure makes sure dev->diag names
 * the operation (backends fill in the vendor's details).
 */

/**
 * dvx_hal_nic_list(), dvx_hal_nic_open(), dvx_hal_nic_close(), dvx_hal_nic_query(),
 * dvx_hal_query_port(), dvx_hal_query_gid() - list, open, close and query devices;
 * wrappers of the struct dvx_hal_ops entries dev_list, dev_open, dev_close,
 * query_device, query_port and query_gid.
 * @hal:	the backend instance (dev_list, dev_open)
 * @info:	dev_list: array of @max entries to fill, may be NULL when @max is 0
 * @max:	dev_list: entries @info has room for
 * @count:	dev_list: set to the number of devices present, which may exceed @max
 * @name:	dev_open: ibdev name or PCI address ("0000:3b:00.0" or "3b:00.0")
 * @dev:	the device: caller storage, filled by dev_open (dev->log, set before, is
 *		kept), used by the others
 * @port:	port number, from 1
 * @attr:	caller storage for the device's or port's attributes
 * @index:	GID table index
 * @gid:	caller storage for the GID table entry
 *
 * Common contract: a NULL @hal/@dev, a backend without an ops table or a missing
 * argument (NULL output, @port 0, empty @name, @max > 0 with no @info) is -EINVAL;
 * an entry the backend does not provide is -ENOSYS; any other failure is the
 * backend's negative errno (a non-negative one becomes -EIO) and, for calls
 * on a @dev, leaves dev->diag naming the operation with the backend's details
 * (dev_list has no device: nothing is recorded). dev_open refuses a device that is not
 * mlx5 with -ENODEV; on failure @dev keeps @hal and no backend handle. dev_close
 * releases the backend's handle; the caller must have destroyed the objects made on
 * @dev first. Every structure lives in caller storage; nothing is allocated for the
 * caller.
 *
 * Context: process context, one thread at a time per @dev (the hal does not lock).
 * Return: 0 or a negative errno.
 */
int dvx_hal_nic_list(const struct dvx_hal *hal, struct dvx_hal_nic_info *info, unsigned max,
		     unsigned *count);
int dvx_hal_nic_open(const struct dvx_hal *hal, const char *name, struct dvx_hal_nic *dev);
int dvx_hal_nic_close(struct dvx_hal_nic *dev);
int dvx_hal_nic_query(struct dvx_hal_nic *dev, struct dvx_hal_nic_attr *attr);
int dvx_hal_query_port(struct dvx_hal_nic *dev, uint8_t port, struct dvx_hal_port_attr *attr);
int dvx_hal_query_gid(struct dvx_hal_nic *dev, uint8_t port, uint32_t index,
		      struct dvx_hal_gid *gid);

/**
 * dvx_hal_devx_cmd(), dvx_hal_obj_create(), dvx_hal_obj_modify(), dvx_hal_obj_query(),
 * dvx_hal_obj_destroy() - run a DEVX command, or create, modify, query and destroy a
 * DEVX object; wrappers of the struct dvx_hal_ops entries devx_cmd, obj_create,
 * obj_modify, obj_query and obj_destroy.
 * @dev:	an opened device
 * @obj:	the object: caller storage, filled by obj_create (obj->id is left for
 *		the caller to take from @out), passed back to the others
 * @in:		input mailbox (PRM layout, big-endian), at least 8 bytes
 * @inlen:	its length in bytes
 * @out:	output mailbox, at least 16 bytes; status in byte 0, syndrome in bytes 4-7
 * @outlen:	its length in bytes
 *
 * The mailboxes belong to the caller and are only used during the call. Common
 * contract: missing or short mailboxes or a NULL @obj are -EINVAL (recorded in
 * dev->diag); a NULL @dev or a backend without ops is -EINVAL; an entry the backend
 * lacks is -ENOSYS; a command the device fails is the errno its status translates to
 * (dvx_hal_devx_status_errno()), with the status, syndrome and opcode in dev->diag.
 * obj_destroy runs the object's destroy command; @obj may then be reused.
 *
 * Context: process context, one thread at a time per @dev; the command may sleep in
 * the kernel. Return: 0 or a negative errno.
 */
int dvx_hal_devx_cmd(struct dvx_hal_nic *dev, const void *in, size_t inlen, void *out,
		     size_t outlen);
int dvx_hal_obj_create(struct dvx_hal_nic *dev, const void *in, size_t inlen, void *out,
		       size_t outlen, struct dvx_hal_obj *obj);
int dvx_hal_obj_modify(struct dvx_hal_nic *dev, struct dvx_hal_obj *obj, const void *in,
		       size_t inlen, void *out, size_t outlen);
int dvx_hal_obj_query(struct dvx_hal_nic *dev, struct dvx_hal_obj *obj, const void *in,
		      size_t inlen, void *out, size_t outlen);
int dvx_hal_obj_destroy(struct dvx_hal_nic *dev, struct dvx_hal_obj *obj);

/**
 * dvx_hal_umem_reg(), dvx_hal_umem_dereg(), dvx_hal_uar_alloc(), dvx_hal_uar_free(),
 * dvx_hal_pd_alloc(), dvx_hal_pd_free(), dvx_hal_eqn_query(), dvx_hal_mr_reg(),
 * dvx_hal_mr_dereg(), dvx_hal_roce_rmac() - the resources DEVX objects are made from;
 * wrappers of the struct dvx_hal_ops entries of the same names.
 * @dev:	an opened device
 * @req:	umem_reg: memory to register (an address, or a dma-buf fd at an offset);
 *		mr_reg: likewise, with the access rights and flags (DVX_MR_*)
 * @umem:	caller storage for the registered umem (umem->id goes into mailboxes)
 * @type:	uar_alloc: the enum dvx_uar_type wanted (uar->type says what was obtained)
 * @uar:	caller storage for the UAR (register and page addresses, page id)
 * @pd:		caller storage for the protection domain; mr_reg and roce_rmac use it
 * @vector:	eqn_query: completion vector
 * @eqn:	eqn_query: set to the EQ number of @vector (for cqc.c_eqn)
 * @mr:		caller storage for the MR (lkey, rkey)
 * @port:	roce_rmac: port number, from 1
 * @sgid_index:	roce_rmac: source GID index
 * @dgid:	roce_rmac: destination GID, network order
 * @mac:	roce_rmac: set to the destination MAC
 *
 * The registered memory stays the caller's: it must stay valid until the matching
 * dereg, and is not freed by it. Handles are filled in caller storage and must be
 * given back (dereg/free) before dvx_hal_nic_close(). Common contract: a missing
 * argument (NULL handle, an empty region, an unknown UAR type, @port 0) is -EINVAL
 * recorded in dev->diag; an entry the backend lacks is -ENOSYS; any other failure is
 * the backend's negative errno with its details in dev->diag.
 *
 * Context: process context, one thread at a time per @dev; registration may sleep
 * (pinning pages). Return: 0 or a negative errno.
 */
int dvx_hal_umem_reg(struct dvx_hal_nic *dev, const struct dvx_hal_umem_req *req,
		     struct dvx_hal_umem *umem);
int dvx_hal_umem_dereg(struct dvx_hal_nic *dev, struct dvx_hal_umem *umem);
int dvx_hal_uar_alloc(struct dvx_hal_nic *dev, enum dvx_uar_type type, struct dvx_hal_uar *uar);
int dvx_hal_uar_free(struct dvx_hal_nic *dev, struct dvx_hal_uar *uar);
int dvx_hal_pd_alloc(struct dvx_hal_nic *dev, struct dvx_hal_pd *pd);
int dvx_hal_pd_free(struct dvx_hal_nic *dev, struct dvx_hal_pd *pd);
int dvx_hal_eqn_query(struct dvx_hal_nic *dev, uint32_t vector, uint32_t *eqn);
int dvx_hal_mr_reg(struct dvx_hal_nic *dev, struct dvx_hal_pd *pd,
		   const struct dvx_hal_mr_req *req, struct dvx_hal_mr *mr);
int dvx_hal_mr_dereg(struct dvx_hal_nic *dev, struct dvx_hal_mr *mr);
int dvx_hal_roce_rmac(struct dvx_hal_nic *dev, struct dvx_hal_pd *pd, uint8_t port,
		      uint32_t sgid_index, const uint8_t dgid[16], uint8_t mac[6]);

/**
 * dvx_hal_nic_progress() - let the backend make progress between two polls; wrapper
 * of the struct dvx_hal_ops entry dev_progress.
 * @dev:	an opened device
 *
 * dvx's wait loops call it while they poll: the sim steps its NIC model, hardware
 * backends relax the CPU. Does nothing for a NULL @dev or a backend without the entry.
 *
 * Context: the thread polling @dev. Return: nothing.
 */
void dvx_hal_nic_progress(struct dvx_hal_nic *dev);

/**
 * dvx_hal_mem_alloc(), dvx_hal_mem_free(), dvx_hal_pci_list(), dvx_hal_limits() - host
 * memory, PCI topology and process limits; wrappers of the struct dvx_hal_ops entries
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
 * dvx_hal_now_ns() - the backend's monotonic clock; wrapper of the struct dvx_hal_ops
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
 * dvx_hal_devx_status_errno() - translate a DEVX command status byte to an errno.
 * @status:	output mailbox byte 0
 *
 * Return: 0 for status 0, else a negative errno (the mapping is in docs/errors.md).
 */
int dvx_hal_devx_status_errno(uint8_t status);

/**
 * dvx_hal_devx_status_name() - the PRM name of a DEVX command status ("BAD_PARAM").
 * Return: a static string, "UNKNOWN" for values the PRM does not name.
 */
const char *dvx_hal_devx_status_name(uint8_t status);

/**
 * dvx_hal_diag_set() - record a failure in a diagnostic record.
 * @diag:	record to fill (may be NULL: nothing is recorded)
 * @err:	negative errno being returned
 * @src:	enum dvx_diag_src
 * @op:		operation name
 * @fmt:	printf-style detail, or NULL
 *
 * Context: any; no allocation. Return: @err, so callers can "return dvx_hal_diag_set(...)".
 */
int dvx_hal_diag_set(struct dvx_diag *diag, int err, enum dvx_diag_src src, const char *op,
		     const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/**
 * dvx_hal_diag_devx() - record a failed DEVX command from its output mailbox.
 * @diag:	record to fill
 * @op:		operation name
 * @in:		the command's input mailbox (for the opcode)
 * @out:	its output mailbox (status byte 0, syndrome bytes 4-7), may be NULL
 * @sys_errno:	errno reported by the transport (rdma-core), 0 if none
 *
 * Return: the negative errno that the status (or @sys_errno) translates to.
 */
int dvx_hal_diag_devx(struct dvx_diag *diag, const char *op, const void *in, const void *out,
		      int sys_errno);

/**
 * dvx_hal_log() - emit a message through a struct dvx_log, if its level allows.
 */
void dvx_hal_log(const struct dvx_log *log, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- GPU: the CUDA driver API behind the hal (hal/cuda.c; fakes in hal/mock.c) ---- */

/* dvx_hal_gpu_mem_req.flags and dvx_hal_gpu_mem.flags */
enum {
	DVX_HAL_GPU_MEM_RDMA = 1u << 0,		/* create with gpuDirectRDMACapable */
	DVX_HAL_GPU_MEM_EXPORT = 1u << 1,	/* exportable as a POSIX file descriptor */
};

/* dvx_hal_gpu_host_register() flags */
enum {
	DVX_HAL_GPU_HOST_IOMEM = 1u << 0,	/* I/O memory (a UAR page): IOMEMORY */
};

/* dvx_hal_gpu_dmabuf_fd() flags */
enum {
	DVX_HAL_GPU_DMABUF_PCIE = 1u << 0,	/* mapping type PCIe (Data-Direct NICs) */
};

/**
 * struct dvx_hal_gpu_attr - what a GPU is and can do, from cuDeviceGetAttribute.
 * @name:	product name
 * @pci:	PCI address "dddd:bb:dd.f", lower case
 * @ordinal:	CUDA device ordinal
 * @driver_version: cuDriverGetVersion (13000 for 13.0)
 * @cc_major:	compute capability, major
 * @cc_minor:	compute capability, minor
 * @sm_count:	multiprocessors
 * @max_threads_per_block: largest block
 * @warp_size:	threads per warp
 * @gdr_writes_ordering: CU_GPU_DIRECT_RDMA_WRITES_ORDERING_* (0 none, 100 owner, 200 all)
 * @total_mem:	device memory in bytes
 * @gdr:	GPUDirect RDMA supported
 * @dmabuf:	dma-buf export supported
 * @vmm:	virtual memory management (cuMemCreate) supported
 * @vmm_rdma:	cuMemCreate accepts gpuDirectRDMACapable
 * @posix_fd:	POSIX fd handles supported
 * @host_register: cuMemHostRegister supported
 * @can_map_host: host memory can be mapped into the device
 * @unified_addressing: one address space with the host
 */
struct dvx_hal_gpu_attr {
	char name[DVX_HAL_NAME_MAX];
	char pci[DVX_HAL_PCI_MAX];
	int32_t ordinal;
	int32_t driver_version;
	int32_t cc_major;
	int32_t cc_minor;
	uint32_t sm_count;
	uint32_t max_threads_per_block;
	uint32_t warp_size;
	uint32_t gdr_writes_ordering;
	uint64_t total_mem;
	uint8_t gdr;
	uint8_t dmabuf;
	uint8_t vmm;
	uint8_t vmm_rdma;
	uint8_t posix_fd;
	uint8_t host_register;
	uint8_t can_map_host;
	uint8_t unified_addressing;
};

/**
 * struct dvx_hal_gpu - one GPU as the hal drives it, in caller storage.
 * @hal:	the backend instance (set by dvx_hal_gpu_init())
 * @priv:	backend: the retained primary context, NULL when none
 * @ordinal:	device ordinal chosen by gpu_get, -1 before
 * @handle:	backend device handle (CUdevice)
 * @ctx_retained: 1 while the primary context is retained
 * @diag:	the last failure of a call on this handle (CUresult, its name)
 * @log:	optional log sink, kept across dvx_hal_gpu_init()
 */
struct dvx_hal_gpu {
	const struct dvx_hal *hal;
	void *priv;
	int32_t ordinal;
	int32_t handle;
	uint32_t ctx_retained;
	uint32_t rsvd;
	struct dvx_diag diag;
	struct dvx_log log;
};

/**
 * struct dvx_hal_gpu_mem_req - device memory to create.
 * @len:	bytes (rounded up to the allocation granularity)
 * @flags:	DVX_HAL_GPU_MEM_* wanted
 */
struct dvx_hal_gpu_mem_req {
	uint64_t len;
	uint32_t flags;
	uint32_t rsvd;
};

/**
 * struct dvx_hal_gpu_mem - device memory created, mapped and made accessible.
 * @priv:	backend
 * @dptr:	device address of the first byte
 * @len:	mapped length (granularity multiple)
 * @handle:	backend allocation handle (CUmemGenericAllocationHandle)
 * @flags:	DVX_HAL_GPU_MEM_* obtained
 */
struct dvx_hal_gpu_mem {
	void *priv;
	uint64_t dptr;
	uint64_t len;
	uint64_t handle;
	uint32_t flags;
	uint32_t rsvd;
};

/** struct dvx_hal_gpu_module - a loaded module (CUmodule in @priv). */
struct dvx_hal_gpu_module {
	void *priv;
};

/**
 * struct dvx_hal_gpu_launch - one kernel launch.
 * @func:	from gpu_module_function
 * @grid:	blocks in x, y, z
 * @block:	threads in x, y, z
 * @shmem:	dynamic shared memory bytes
 * @stream:	from gpu_stream_create, NULL for the default stream
 * @args:	kernel arguments, one pointer per parameter (cuLaunchKernel)
 */
struct dvx_hal_gpu_launch {
	void *func;
	uint32_t grid[3];
	uint32_t block[3];
	uint32_t shmem;
	uint32_t rsvd;
	void *stream;
	void **args;
};

/**
 * dvx_hal_cuda() - the CUDA driver API backend: the gpu_* entries (libcuda.so.1 is
 * loaded at run time on the first gpu_init, so libdvx links and runs on machines
 * without a driver) and the shared host entries (mem_alloc, pci_list, limits, now_ns).
 *
 * Context: any. Return: a static instance, or NULL when this libdvx was built
 * without CUDA (CONFIG_DVX_GPU=n).
 */
const struct dvx_hal *dvx_hal_cuda(void);

/**
 * dvx_hal_cu_errno() - the errno dvx reports for a CUresult (docs/errors.md, gpu.md).
 * @cu_result:	the driver's CUresult value
 *
 * Return: 0 for CUDA_SUCCESS, else a negative errno (-EIO for values without a better one).
 */
int dvx_hal_cu_errno(int cu_result);

/*
 * GPU wrappers. dvx_hal_gpu_init() binds @gpu to @hal (keeping gpu->log) and runs the
 * backend's init (cuInit); every other wrapper takes the bound handle, checks its
 * arguments (-EINVAL, recorded in gpu->diag), answers -ENOSYS when the backend lacks
 * the entry, and on failure leaves gpu->diag naming the operation (with the CUresult
 * and its name when the driver failed).
 */
/**
 * dvx_hal_gpu_init(), dvx_hal_gpu_count(), dvx_hal_gpu_get(), dvx_hal_gpu_query(),
 * dvx_hal_gpu_ctx_retain(), dvx_hal_gpu_ctx_release(), dvx_hal_gpu_ctx_set_current() -
 * bind a GPU handle to a backend, pick a device, query it and hold its primary
 * context; wrappers of the struct dvx_hal_ops entries gpu_init, gpu_count, gpu_get,
 * gpu_query, gpu_ctx_retain, gpu_ctx_release and gpu_ctx_set_current.
 * @hal:	gpu_init: the backend instance (with gpu_* entries: dvx_hal_cuda(),
 *		dvx_hal_linux(), the mock)
 * @gpu:	the handle, caller storage: gpu_init clears it (keeping gpu->log), binds it
 *		to @hal and sets ordinal and handle to -1; the others use it
 * @count:	gpu_count: set to the number of GPUs the driver sees
 * @ordinal:	gpu_get: device ordinal, used when @pci is NULL or empty
 * @pci:	gpu_get: PCI address of the device, or NULL
 * @attr:	gpu_query: caller storage for the device's attributes
 *
 * gpu_get sets gpu->ordinal and gpu->handle; gpu_query needs them. ctx_retain
 * retains the device's primary context (gpu->priv, gpu->ctx_retained) and ctx_release
 * gives it back; ctx_set_current makes it current on the calling thread, which CUDA
 * calls on that thread then need. Common contract: a NULL @hal/@gpu or an unbound
 * handle is -EINVAL; a bad argument (NULL output, neither @ordinal >= 0 nor @pci, no
 * device chosen, a context already retained or not retained) is -EINVAL recorded in
 * gpu->diag; an entry the backend lacks is -ENOSYS; a driver failure is the errno of
 * its CUresult (dvx_hal_cu_errno()) with the CUresult and its name in gpu->diag. No
 * driver on the machine makes gpu_init fail with -ENODEV.
 *
 * Context: process context, one thread at a time per @gpu. Return: 0 or a negative
 * errno.
 */
int dvx_hal_gpu_init(const struct dvx_hal *hal, struct dvx_hal_gpu *gpu);
int dvx_hal_gpu_count(struct dvx_hal_gpu *gpu, int *count);
int dvx_hal_gpu_get(struct dvx_hal_gpu *gpu, int ordinal, const char *pci);
int dvx_hal_gpu_query(struct dvx_hal_gpu *gpu, struct dvx_hal_gpu_attr *attr);
int dvx_hal_gpu_ctx_retain(struct dvx_hal_gpu *gpu);
int dvx_hal_gpu_ctx_release(struct dvx_hal_gpu *gpu);
int dvx_hal_gpu_ctx_set_current(struct dvx_hal_gpu *gpu);

/**
 * dvx_hal_gpu_mem_create(), dvx_hal_gpu_mem_free(), dvx_hal_gpu_mem_export(),
 * dvx_hal_gpu_dmabuf_fd(), dvx_hal_gpu_host_register(), dvx_hal_gpu_host_unregister() -
 * GPU memory for the NIC and host memory for the GPU; wrappers of the struct
 * dvx_hal_ops entries of the same names.
 * @gpu:	a handle with a device chosen (and, for the CUDA backend, its context
 *		current on the calling thread)
 * @req:	mem_create: length (rounded up to the allocation granularity) and
 *		DVX_HAL_GPU_MEM_* flags wanted
 * @mem:	mem_create: caller storage for the mapped allocation (dptr, len, the
 *		flags obtained); mem_free and mem_export: that allocation
 * @fd:		set to a new file descriptor (a POSIX fd of the allocation, or a dma-buf
 *		of [@dptr, @dptr + @len)) that the caller owns and must close
 * @dptr:	dmabuf_fd: device address of the range; host_register: set to the
 *		device address of the registered host range
 * @len:	bytes of the range
 * @flags:	DVX_HAL_GPU_DMABUF_* (dmabuf_fd) or DVX_HAL_GPU_HOST_* (host_register)
 * @addr:	host range to register (host memory or a mapped UAR page with
 *		DVX_HAL_GPU_HOST_IOMEM), or to unregister
 *
 * mem_create reserves, maps and enables device memory that the caller owns until
 * mem_free (which clears @mem). mem_export needs memory created with
 * DVX_HAL_GPU_MEM_EXPORT. Host memory stays the caller's; it must stay mapped until
 * host_unregister. Common contract: a NULL or unbound @gpu is -EINVAL; a bad argument
 * (NULL output, an empty range, memory not created) is -EINVAL recorded in gpu->diag;
 * an entry the backend lacks is -ENOSYS; a driver failure is the errno of its CUresult
 * with the CUresult and its name in gpu->diag.
 *
 * Context: process context, one thread at a time per @gpu. Return: 0 or a negative
 * errno.
 */
int dvx_hal_gpu_mem_create(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_mem_req *req,
			   struct dvx_hal_gpu_mem *mem);
int dvx_hal_gpu_mem_free(struct dvx_hal_gpu *gpu, struct dvx_hal_gpu_mem *mem);
int dvx_hal_gpu_mem_export(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_mem *mem, int *fd);
int dvx_hal_gpu_dmabuf_fd(struct dvx_hal_gpu *gpu, uint64_t dptr, uint64_t len, uint32_t flags,
			  int *fd);
int dvx_hal_gpu_host_register(struct dvx_hal_gpu *gpu, void *addr, uint64_t len, uint32_t flags,
			      uint64_t *dptr);
int dvx_hal_gpu_host_unregister(struct dvx_hal_gpu *gpu, void *addr);

/**
 * dvx_hal_gpu_module_load(), dvx_hal_gpu_module_unload(), dvx_hal_gpu_module_function(),
 * dvx_hal_gpu_launch(), dvx_hal_gpu_stream_create(), dvx_hal_gpu_stream_destroy(),
 * dvx_hal_gpu_stream_query(), dvx_hal_gpu_memcpy_htod(), dvx_hal_gpu_memcpy_dtoh() -
 * load code, launch it on streams and copy memory; wrappers of the struct dvx_hal_ops
 * entries of the same names.
 * @gpu:	a handle whose context is current on the calling thread
 * @image:	module_load: a fatbin, cubin or PTX image; only read during the call
 * @mod:	module_load: caller storage for the module (mod->priv); module_unload
 *		and module_function: that module
 * @name:	module_function: the kernel's (extern "C") name
 * @func:	module_function: set to the kernel, valid until the module is unloaded
 * @launch:	gpu_launch: function, grid, block, dynamic shared memory, stream and
 *		argument pointers (read during the call only)
 * @stream:	stream_create: set to a new non-blocking stream the caller destroys
 *		with stream_destroy; the others: that stream
 * @dptr:	memcpy: device address
 * @src:	memcpy_htod: host source
 * @dst:	memcpy_dtoh: host destination
 * @len:	memcpy: bytes to copy (synchronous copies)
 *
 * gpu_launch only queues the kernel; stream_query answers 0 when all work on @stream
 * is done and -EBUSY while it runs (neither is recorded as a failure). Common
 * contract: a NULL or unbound @gpu is -EINVAL; a bad argument (NULL image, module,
 * name, function or buffer, a NULL stream to create or destroy, an empty grid, block
 * or range) is -EINVAL recorded in gpu->diag; an entry the backend lacks is -ENOSYS;
 * a driver failure is the errno of its CUresult with the CUresult and its name in
 * gpu->diag.
 *
 * Context: process context, one thread at a time per @gpu. Return: 0 or a negative
 * errno.
 */
int dvx_hal_gpu_module_load(struct dvx_hal_gpu *gpu, const void *image,
			    struct dvx_hal_gpu_module *mod);
int dvx_hal_gpu_module_unload(struct dvx_hal_gpu *gpu, struct dvx_hal_gpu_module *mod);
int dvx_hal_gpu_module_function(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_module *mod,
				const char *name, void **func);
int dvx_hal_gpu_launch(struct dvx_hal_gpu *gpu, const struct dvx_hal_gpu_launch *launch);
int dvx_hal_gpu_stream_create(struct dvx_hal_gpu *gpu, void **stream);
int dvx_hal_gpu_stream_destroy(struct dvx_hal_gpu *gpu, void *stream);
/* 0 when all work on @stream is done, -EBUSY while it runs, else the failure */
int dvx_hal_gpu_stream_query(struct dvx_hal_gpu *gpu, void *stream);
int dvx_hal_gpu_memcpy_htod(struct dvx_hal_gpu *gpu, uint64_t dptr, const void *src, uint64_t len);
int dvx_hal_gpu_memcpy_dtoh(struct dvx_hal_gpu *gpu, void *dst, uint64_t dptr, uint64_t len);

DVX_END_DECLS

#endif /* DVX_HAL_H */
