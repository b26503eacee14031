/* SPDX-License-Identifier: MIT */
/*
 * dvx/hal/nic.h - the hal's NIC table: listing and opening mlx5 NICs, DEVX commands
 * and objects, and the resources objects are made from (umems, UARs, PDs, EQs, MRs).
 *
 * Handles (struct dvx_hal_nic, _obj, _umem, _uar, _pd, _mr) live in caller storage.
 * On failure the backend records the vendor's words in nic->diag. A command the NIC
 * answers with a non-zero status fails with -EREMOTEIO and leaves the status, the
 * syndrome and the opcode in nic->diag (and in the output mailbox): which errno a
 * status means is the device protocol's business (dvx_mlx5_cmd_status_errno()), so
 * it is decided once, above the hal.
 *
 * Concurrency: calls on one struct dvx_hal_nic are not serialised by the hal; the
 * control path of one NIC is expected to run on one thread at a time. Backends
 * themselves are thread-safe across NICs.
 */
#ifndef DVX_HAL_NIC_H
#define DVX_HAL_NIC_H

#include <dvx/hal/hal.h>

DVX_BEGIN_DECLS

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
 * @nc:		1 when the page is mapped non-cached, 0 write-combining. The Linux backend
 *		reads it from the kernel's mmap offset (dvx_hal_uar_mmap_is_nc()), not from
 *		the type asked for: a BlueFlame request can come back non-cached (the
 *		kernel's choice), and BlueFlame copies into a non-cached page are no
 *		BlueFlame
 */
struct dvx_hal_uar {
	void *priv;
	void *reg_addr;
	void *base_addr;
	uint32_t page_id;
	uint32_t type;
	uint64_t mmap_off;
	uint32_t nc;
	uint32_t rsvd;
};

/**
 * dvx_hal_uar_mmap_is_nc() - whether a UAR's mmap offset asks for a non-cached mapping:
 * the mmap command, bits 8-15 of (@mmap_off / @page_size), is 3 (get non-cached pages);
 * any other command maps write-combining (the mlx5 kernel driver's mmap offset
 * encoding, as DPDK decodes it: docs/prm.md 1.4).
 * @mmap_off:	the UAR's mmap offset (struct dvx_hal_uar.mmap_off)
 * @page_size:	the system page size (> 0)
 *
 * Context: any; pure. Return: 1 non-cached, 0 write-combining.
 */
int dvx_hal_uar_mmap_is_nc(uint64_t mmap_off, uint64_t page_size);

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


/**
 * struct dvx_hal_nic_ops - a backend's NIC entry points. A NULL entry means the
 * backend does not provide the call; the dvx_hal_*() wrappers then return -ENOSYS.
 *
 * nic_list writes at most @max entries and sets *@count to the number present, which
 * may exceed @max: call with max 0 to size the array. It lists every RDMA device, mlx5
 * or not (see dvx_hal_nic_info.is_mlx5); nic_open accepts an ibdev name or a PCI
 * address ("0000:3b:00.0" or "3b:00.0") and refuses a device that is not mlx5 with
 * -ENODEV. devx_cmd and obj_* return -EREMOTEIO when the NIC answered with a non-zero
 * status (see the file comment).
 */
struct dvx_hal_nic_ops {
	/* devices */
	int (*nic_list)(const struct dvx_hal *hal, struct dvx_hal_nic_info *info,
			unsigned max, unsigned *count);
	int (*nic_open)(const struct dvx_hal *hal, const char *name, struct dvx_hal_nic *nic);
	int (*nic_close)(struct dvx_hal_nic *nic);
	int (*nic_query)(struct dvx_hal_nic *nic, struct dvx_hal_nic_attr *attr);
	int (*query_port)(struct dvx_hal_nic *nic, uint8_t port, struct dvx_hal_port_attr *attr);
	int (*query_gid)(struct dvx_hal_nic *nic, uint8_t port, uint32_t index,
			 struct dvx_hal_gid *gid);

	/* DEVX commands and objects */
	int (*devx_cmd)(struct dvx_hal_nic *nic, const void *in, size_t inlen, void *out,
			size_t outlen);
	int (*obj_create)(struct dvx_hal_nic *nic, const void *in, size_t inlen, void *out,
			  size_t outlen, struct dvx_hal_obj *obj);
	int (*obj_modify)(struct dvx_hal_nic *nic, struct dvx_hal_obj *obj, const void *in,
			  size_t inlen, void *out, size_t outlen);
	int (*obj_query)(struct dvx_hal_nic *nic, struct dvx_hal_obj *obj, const void *in,
			 size_t inlen, void *out, size_t outlen);
	int (*obj_destroy)(struct dvx_hal_nic *nic, struct dvx_hal_obj *obj);

	/* umems, UARs, PDs, EQs */
	int (*umem_reg)(struct dvx_hal_nic *nic, const struct dvx_hal_umem_req *req,
			struct dvx_hal_umem *umem);
	int (*umem_dereg)(struct dvx_hal_nic *nic, struct dvx_hal_umem *umem);
	int (*uar_alloc)(struct dvx_hal_nic *nic, enum dvx_uar_type type, struct dvx_hal_uar *uar);
	int (*uar_free)(struct dvx_hal_nic *nic, struct dvx_hal_uar *uar);
	int (*pd_alloc)(struct dvx_hal_nic *nic, struct dvx_hal_pd *pd);
	int (*pd_free)(struct dvx_hal_nic *nic, struct dvx_hal_pd *pd);
	int (*eqn_query)(struct dvx_hal_nic *nic, uint32_t vector, uint32_t *eqn);

	/* memory regions */
	int (*mr_reg)(struct dvx_hal_nic *nic, struct dvx_hal_pd *pd,
		      const struct dvx_hal_mr_req *req, struct dvx_hal_mr *mr);
	int (*mr_dereg)(struct dvx_hal_nic *nic, struct dvx_hal_mr *mr);

	/* RoCE: the destination MAC for a GID, resolved through an address handle */
	int (*roce_rmac)(struct dvx_hal_nic *nic, struct dvx_hal_pd *pd, uint8_t port,
			 uint32_t sgid_index, const uint8_t dgid[16], uint8_t mac[6]);

	/* progress: called by dvx's wait loops between polls (the sim steps its model
	 * here; hardware backends relax the CPU) */
	void (*nic_progress)(struct dvx_hal_nic *nic);

	/* a doorbell was just written: a backend that finds doorbells by polling memory
	 * wakes its poller if it sleeps (the sim's progress thread); hardware notices the
	 * MMIO write itself and leaves the entry NULL */
	void (*nic_kick)(struct dvx_hal_nic *nic);
};

/*
 * The wrappers every layer above calls. Each mirrors the struct dvx_hal_nic_ops entry
 * of the same name (dvx_hal_foo() calls nic->foo), checks its arguments (-EINVAL),
 * returns -ENOSYS when the backend lacks the table or the entry, and on failure makes
 * sure nic->diag names the operation (backends fill in the vendor's details).
 */

/**
 * dvx_hal_nic_list(), dvx_hal_nic_open(), dvx_hal_nic_close(), dvx_hal_nic_query(),
 * dvx_hal_query_port(), dvx_hal_query_gid() - list, open, close and query devices;
 * wrappers of the struct dvx_hal_nic_ops entries nic_list, nic_open, nic_close,
 * nic_query, query_port and query_gid.
 * @hal:	the backend instance (nic_list, nic_open)
 * @info:	nic_list: array of @max entries to fill, may be NULL when @max is 0
 * @max:	nic_list: entries @info has room for
 * @count:	nic_list: set to the number of devices present, which may exceed @max
 * @name:	nic_open: ibdev name or PCI address ("0000:3b:00.0" or "3b:00.0")
 * @nic:	the device: caller storage, filled by nic_open (nic->log, set before, is
 *		kept), used by the others
 * @port:	port number, from 1
 * @attr:	caller storage for the device's or port's attributes
 * @index:	GID table index
 * @gid:	caller storage for the GID table entry
 *
 * Common contract: a NULL @hal/@nic, a backend without a NIC table or a missing
 * argument (NULL output, @port 0, empty @name, @max > 0 with no @info) is -EINVAL;
 * an entry the backend does not provide is -ENOSYS; any other failure is the
 * backend's negative errno (a non-negative one becomes -EIO) and, for calls
 * on a @nic, leaves nic->diag naming the operation with the backend's details
 * (nic_list has no device: nothing is recorded). nic_open refuses a device that is not
 * mlx5 with -ENODEV; on failure @nic keeps @hal and no backend handle. nic_close
 * releases the backend's handle; the caller must have destroyed the objects made on
 * @nic first. Every structure lives in caller storage; nothing is allocated for the
 * caller.
 *
 * Context: process context, one thread at a time per @nic (the hal does not lock).
 * Return: 0 or a negative errno.
 */
int dvx_hal_nic_list(const struct dvx_hal *hal, struct dvx_hal_nic_info *info, unsigned max,
		     unsigned *count);
int dvx_hal_nic_open(const struct dvx_hal *hal, const char *name, struct dvx_hal_nic *nic);
int dvx_hal_nic_close(struct dvx_hal_nic *nic);
int dvx_hal_nic_query(struct dvx_hal_nic *nic, struct dvx_hal_nic_attr *attr);
int dvx_hal_query_port(struct dvx_hal_nic *nic, uint8_t port, struct dvx_hal_port_attr *attr);
int dvx_hal_query_gid(struct dvx_hal_nic *nic, uint8_t port, uint32_t index,
		      struct dvx_hal_gid *gid);

/**
 * dvx_hal_port_mbps() - a port's link speed from its width and speed codes.
 * @attr:	the port, as dvx_hal_query_port() filled it
 *
 * The nominal rate of one lane of @attr->active_speed (IB speed codes: 1 SDR 2500 Mb/s,
 * 2 DDR 5000, 4 QDR 10000, 8 FDR10 10000, 16 FDR 14000, 32 EDR 25000, 64 HDR 50000,
 * 128 NDR 100000; @attr->active_speed_ex 256, XDR, 200000 when @active_speed is 0) times
 * the lanes of @attr->active_width (1 1x, 16 2x, 2 4x, 4 8x, 8 12x): what NCCL's own IB
 * transport reports as a port's speed. RoCE ports report the same codes (the mlx5
 * driver translates its Ethernet rate into them).
 * Context: any. Return: Mb/s, or 0 for a code it does not know (or a NULL @attr).
 */
uint32_t dvx_hal_port_mbps(const struct dvx_hal_port_attr *attr);

/**
 * dvx_hal_devx_cmd(), dvx_hal_obj_create(), dvx_hal_obj_modify(), dvx_hal_obj_query(),
 * dvx_hal_obj_destroy() - run a DEVX command, or create, modify, query and destroy a
 * DEVX object; wrappers of the struct dvx_hal_nic_ops entries devx_cmd, obj_create,
 * obj_modify, obj_query and obj_destroy.
 * @nic:	an opened device
 * @obj:	the object: caller storage, filled by obj_create (obj->id is left for
 *		the caller to take from @out), passed back to the others
 * @in:		input mailbox (PRM layout, big-endian), at least 8 bytes
 * @inlen:	its length in bytes
 * @out:	output mailbox, at least 16 bytes; status in byte 0, syndrome in bytes 4-7
 * @outlen:	its length in bytes
 *
 * The mailboxes belong to the caller and are only used during the call. Common
 * contract: missing or short mailboxes or a NULL @obj are -EINVAL (recorded in
 * nic->diag); a NULL @nic or a backend without a NIC table is -EINVAL; an entry the
 * backend lacks is -ENOSYS; a command the NIC answers with a non-zero status is
 * -EREMOTEIO, with the status, syndrome and opcode in nic->diag (the errno the status
 * means is dvx_mlx5_cmd_status_errno()'s to say); a failure to deliver it is the
 * backend's negative errno.
 * obj_destroy runs the object's destroy command; @obj may then be reused.
 *
 * Context: process context, one thread at a time per @nic; the command may sleep in
 * the kernel. Return: 0 or a negative errno.
 */
int dvx_hal_devx_cmd(struct dvx_hal_nic *nic, const void *in, size_t inlen, void *out,
		     size_t outlen);
int dvx_hal_obj_create(struct dvx_hal_nic *nic, const void *in, size_t inlen, void *out,
		       size_t outlen, struct dvx_hal_obj *obj);
int dvx_hal_obj_modify(struct dvx_hal_nic *nic, struct dvx_hal_obj *obj, const void *in,
		       size_t inlen, void *out, size_t outlen);
int dvx_hal_obj_query(struct dvx_hal_nic *nic, struct dvx_hal_obj *obj, const void *in,
		      size_t inlen, void *out, size_t outlen);
int dvx_hal_obj_destroy(struct dvx_hal_nic *nic, struct dvx_hal_obj *obj);

/**
 * dvx_hal_umem_reg(), dvx_hal_umem_dereg(), dvx_hal_uar_alloc(), dvx_hal_uar_free(),
 * dvx_hal_pd_alloc(), dvx_hal_pd_free(), dvx_hal_eqn_query(), dvx_hal_mr_reg(),
 * dvx_hal_mr_dereg(), dvx_hal_roce_rmac() - the resources DEVX objects are made from;
 * wrappers of the struct dvx_hal_nic_ops entries of the same names.
 * @nic:	an opened device
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
 * recorded in nic->diag; an entry the backend lacks is -ENOSYS; any other failure is
 * the backend's negative errno with its details in nic->diag.
 *
 * Context: process context, one thread at a time per @nic; registration may sleep
 * (pinning pages). Return: 0 or a negative errno.
 */
int dvx_hal_umem_reg(struct dvx_hal_nic *nic, const struct dvx_hal_umem_req *req,
		     struct dvx_hal_umem *umem);
int dvx_hal_umem_dereg(struct dvx_hal_nic *nic, struct dvx_hal_umem *umem);
int dvx_hal_uar_alloc(struct dvx_hal_nic *nic, enum dvx_uar_type type, struct dvx_hal_uar *uar);
int dvx_hal_uar_free(struct dvx_hal_nic *nic, struct dvx_hal_uar *uar);
int dvx_hal_pd_alloc(struct dvx_hal_nic *nic, struct dvx_hal_pd *pd);
int dvx_hal_pd_free(struct dvx_hal_nic *nic, struct dvx_hal_pd *pd);
int dvx_hal_eqn_query(struct dvx_hal_nic *nic, uint32_t vector, uint32_t *eqn);
int dvx_hal_mr_reg(struct dvx_hal_nic *nic, struct dvx_hal_pd *pd,
		   const struct dvx_hal_mr_req *req, struct dvx_hal_mr *mr);
int dvx_hal_mr_dereg(struct dvx_hal_nic *nic, struct dvx_hal_mr *mr);
int dvx_hal_roce_rmac(struct dvx_hal_nic *nic, struct dvx_hal_pd *pd, uint8_t port,
		      uint32_t sgid_index, const uint8_t dgid[16], uint8_t mac[6]);

/**
 * dvx_hal_nic_progress() - let the backend make progress between two polls; wrapper
 * of the struct dvx_hal_nic_ops entry nic_progress.
 * @nic:	an opened device
 *
 * dvx's wait loops call it while they poll: the sim steps its NIC model, hardware
 * backends relax the CPU. Does nothing for a NULL @nic or a backend without the entry.
 *
 * Context: the thread polling @nic. Return: nothing.
 */
void dvx_hal_nic_progress(struct dvx_hal_nic *nic);

/**
 * dvx_hal_nic_kick() - tell the backend that a doorbell of @nic was just written;
 * wrapper of the struct dvx_hal_nic_ops entry nic_kick.
 * @nic:	an opened device
 *
 * A doorbell is a store to a UAR register, which a device notices and memory does not:
 * the sim finds doorbells by polling, and its progress thread, when it sleeps, is woken
 * here (docs/sim-wire.md, Progress). The core's posting calls (dvx/nic/post.h) call it
 * after each doorbell when dvx_hal_nic_kicks() says so. Does nothing for a NULL @nic or
 * a backend without the entry (hardware).
 *
 * Context: any thread, after its doorbell store; never blocks. Return: nothing.
 */
void dvx_hal_nic_kick(struct dvx_hal_nic *nic);

/**
 * dvx_hal_nic_kicks() - whether @nic's backend wants dvx_hal_nic_kick() after doorbells.
 * @nic:	an opened device, or NULL
 *
 * Context: any. Return: 1 when the backend has the nic_kick entry, else 0.
 */
int dvx_hal_nic_kicks(const struct dvx_hal_nic *nic);

DVX_END_DECLS

#endif /* DVX_HAL_NIC_H */
