/* SPDX-License-Identifier: MIT */
/*
 * dvx/hal/sim.h - the software mlx5 NIC: a hal backend that executes what the
 * driver writes.
 *
 * A fabric (caller storage) connects N simulated NICs with one or two ports each,
 * InfiniBand (LIDs) or RoCE v2 (GIDs). Each NIC answers the same DEVX command
 * mailboxes, umem, UAR, PD and MR calls the firmware and rdma-core would, and
 * executes the WQE bytes from the rings it was given. Work is found only through the
 * doorbell protocol: the 8-byte UAR write, checked against the doorbell record (the
 * strict model, dvx_sim_set_db_mode(); faults: dvx_sim_db_faults()).
 *
 * Progress: deterministically (dvx_sim_step(), or the hal's dev_progress op) or on a
 * progress thread (dvx_sim_start()).
 *
 * Typical use:
 *
 *	struct dvx_sim_fabric_cfg fc;
 *	struct dvx_sim_nic_cfg nc;
 *	struct dvx_sim_fabric *fab;
 *	void *mem;
 *
 *	dvx_sim_fabric_cfg_default(&fc);
 *	mem = aligned_alloc(64, dvx_sim_fabric_mem_size(&fc));	// the caller's memory
 *	dvx_sim_fabric_init(mem, dvx_sim_fabric_mem_size(&fc), &fc, &fab);
 *	dvx_sim_nic_cfg_default(&nc, 0);
 *	dvx_sim_add_nic(fab, &nc);				// "sim_0"
 *	hal = dvx_sim_hal(fab);					// open "sim_0" through it
 *	...
 *	dvx_sim_fini(fab);
 *
 * The fabric also holds software GPUs (dvx_sim_add_gpu()): the hal's GPU table over
 * host memory, so code that shares GPU memory between processes (POSIX-fd, fabric and
 * legacy IPC handles), registers it with a NIC through dma-bufs, or copies and signals
 * on streams runs without a GPU. Their memory is shared memory (a memfd mapped into
 * the process): a device address is a host address, an exported handle is a real
 * descriptor or names one, and another process that imports it sees the same bytes.
 * They run no device code (module_load and launch are -ENOSYS).
 *
 * See docs/sim.md for what is modelled and what is not.
 */
#ifndef DVX_TESTING_SIM_H
#define DVX_TESTING_SIM_H

#include <stddef.h>

#include <dvx/hal.h>

DVX_BEGIN_DECLS

#define DVX_SIM_MAX_PORTS 2

/* UAR page layout the sim hands out (prm 1.4): the doorbell register is at +0x800;
 * a BlueFlame UAR has a 512-byte register in two 256-byte halves (+0x800, +0x900). */
#define DVX_SIM_UAR_PAGE_SIZE 4096u
#define DVX_SIM_UAR_REG_OFFSET 0x800u
#define DVX_SIM_LOG_BF_REG_SIZE 9u
#define DVX_SIM_BF_HALF 256u

/* Completion EQs: eqn_query(vector) answers DVX_SIM_EQN_BASE + vector for vector <
 * DVX_SIM_NUM_EQS; CREATE_CQ accepts exactly these c_eqn values. */
#define DVX_SIM_EQN_BASE 0x10u
#define DVX_SIM_NUM_EQS 4u

/* GID table of a RoCE port: 0 RoCE v1 and 1 RoCE v2 of the link-local GID (from the
 * MAC), 2 RoCE v1 and 3 RoCE v2 of the configured GID. An IB port has one entry. */
#define DVX_SIM_ROCE_GID_TBL_LEN 4u
#define DVX_SIM_ROCE_GID_V2 3u		/* the configured GID as RoCE v2 */

/* Fake dma-buf "fds" (dvx_sim_dmabuf_export()) are this base plus a slot: numbers far
 * above any real descriptor, never to be passed to close(). */
#define DVX_SIM_DMABUF_FD_BASE 0x7d000000

/*
 * Syndromes the sim writes into a refused command's output mailbox (bytes 4-7), with
 * the PRM status byte. Real firmware syndromes are opaque numbers; these are the sim's
 * own, one per reason, so tests can tell the reasons apart.
 */
enum dvx_sim_syndrome {
	DVX_SIM_SYND_BAD_OPCODE = 0x51000001,	/* BAD_OP: command not modelled */
	DVX_SIM_SYND_BAD_OP_MOD = 0x51000002,	/* BAD_PARAM: unknown cap type */
	DVX_SIM_SYND_INLEN = 0x51000003,	/* BAD_INPUT_LEN */
	DVX_SIM_SYND_OUTLEN = 0x51000004,	/* BAD_OUTPUT_LEN */
	DVX_SIM_SYND_LOG_SIZE = 0x51000010,	/* BAD_PARAM: a log size above the cap */
	DVX_SIM_SYND_NOT_MODELLED = 0x51000011,	/* BAD_PARAM: a feature the sim lacks */
	DVX_SIM_SYND_NO_CAP = 0x51000012,	/* BAD_PARAM: needs a cap the NIC lacks */
	DVX_SIM_SYND_UMEM_RANGE = 0x51000013,	/* BAD_PARAM: ring/DBR beyond the umem */
	DVX_SIM_SYND_ALIGN = 0x51000014,	/* BAD_PARAM: misaligned offset */
	DVX_SIM_SYND_FIELD = 0x51000015,	/* BAD_PARAM: a field value out of range */
	DVX_SIM_SYND_PORT = 0x51000016,		/* BAD_PARAM: port / GID index */
	DVX_SIM_SYND_PAGE_OFFSET = 0x51000017,	/* BAD_PARAM: ring not reachable as page +
						 * 6-bit page_offset in the umem's pages */
	DVX_SIM_SYND_BAD_UMEM = 0x51000020,	/* BAD_RESOURCE: unknown umem id */
	DVX_SIM_SYND_BAD_UAR = 0x51000021,	/* BAD_RESOURCE: unknown UAR page */
	DVX_SIM_SYND_BAD_PD = 0x51000022,	/* BAD_RESOURCE: unknown PD */
	DVX_SIM_SYND_BAD_CQ = 0x51000023,	/* BAD_RESOURCE: unknown CQ */
	DVX_SIM_SYND_BAD_EQ = 0x51000024,	/* BAD_RESOURCE: unknown EQ */
	DVX_SIM_SYND_BAD_QPN = 0x51000025,	/* BAD_RESOURCE: unknown QP */
	DVX_SIM_SYND_LIMIT = 0x51000030,	/* EXCEED_LIM: the table is full */
	DVX_SIM_SYND_QP_STATE = 0x51000040,	/* BAD_QP_STATE: illegal transition */
	DVX_SIM_SYND_CQ_IN_USE = 0x51000041,	/* BAD_RES_STATE: CQ used by a QP */
};

/**
 * struct dvx_sim_port_cfg - one port of a simulated NIC.
 * @link_layer:	enum dvx_link_layer: IB or ETHERNET (RoCE v2)
 * @active_mtu:	IB MTU enum, 1=256 ... 5=4096
 * @up:		1 active, 0 down (queries say DOWN; requests on it are lost)
 * @lid:	IB: the port's LID (peers address it by this)
 * @gid:	RoCE: the port's address GID (table entries 2 and 3); IB: the port GID
 * @mac:	RoCE: the port's MAC (what roce_rmac answers for its GIDs)
 */
struct dvx_sim_port_cfg {
	uint8_t link_layer;
	uint8_t active_mtu;
	uint8_t up;
	uint8_t rsvd;
	uint16_t lid;
	uint16_t rsvd2;
	uint8_t gid[16];
	uint8_t mac[6];
	uint8_t rsvd3[2];
};

/**
 * struct dvx_sim_nic_cfg - one simulated NIC and its capabilities. Start from
 * dvx_sim_nic_cfg_default() (a ConnectX-7 like device) and change what a test needs.
 * QUERY_HCA_CAP answers pages built from these values; the command decoders refuse
 * what they exclude.
 * @name:		device name ("sim_0" ...), also accepted by dev_open
 * @pci:		fake PCI address ("0000:5N:00.0"), also accepted by dev_open
 * @nports:		1 or 2
 * @cd:			core-direct (WAIT, SEND_EN, RECV_EN; qpc cd_* bits)
 * @atomic:		atomics at all (cap atomic; atomic page)
 * @atomic_be_only:	8-byte atomics big-endian only: 0 = host endianness mode
 *			supported and current (what the kernel selects), 1 = not
 * @force_loopback:	qpc.fl honoured (roce caps fl_rc_qp_when_roce_*)
 * @cq_oi:		CQ overrun-ignore supported
 * @bf:			BlueFlame UARs (uar_alloc(DVX_UAR_BF) fails without)
 * @devx:		DEVX available (0: dev_open fails -EOPNOTSUPP, like a kernel or
 *			user without DEVX)
 * @log_max_qp_sz:	log2 max SQ WQEBBs (and RQ WQEs)
 * @log_max_cq_sz:	log2 max CQEs
 * @log_max_qp:		log2 number of QPs (also bounded by the fabric's max_qps)
 * @log_max_cq:		log2 number of CQs (also bounded by the fabric's max_cqs)
 * @log_max_mr:		log2 number of MRs (also bounded by the fabric's max_mrs)
 * @log_max_msg:	log2 max message size
 * @max_inline_log:	reserved
 * @ts_cap:		timestamp formats its QPs take (enum dvx_mlx5_ts_cap: 0 free-running
 *			only, the default; 1 real-time only; 2 both), reported as the
 *			general page's sq_ts_format and rq_ts_format and the RoCE page's
 *			qp_ts_format; CREATE_QP with a qpc.ts_format outside it is refused
 *			(BAD_PARAM), as firmware refuses it
 * @log_max_ra_req_qp:	log2 initiator RDMA-read/atomic depth (log_sra_max limit)
 * @log_max_ra_res_qp:	log2 responder RDMA-read/atomic depth (log_rra_max limit)
 * @log_max_pd:		log2 number of PDs (cap)
 * @max_wqe_sz_sq:	max SQ WQE bytes
 * @max_wqe_sz_rq:	max RQ WQE bytes
 * @vendor_part_id:	PCI device id / vendor_part_id (0x1021 = ConnectX-7)
 * @numa_node:		reported NUMA node, -1 unknown
 * @node_guid:		node GUID (CPU order)
 * @fw_ver:		firmware version string
 * @port:		the ports
 */
struct dvx_sim_nic_cfg {
	char name[DVX_HAL_NAME_MAX];
	char pci[DVX_HAL_PCI_MAX];
	uint8_t nports;
	uint8_t cd;
	uint8_t atomic;
	uint8_t atomic_be_only;
	uint8_t force_loopback;
	uint8_t cq_oi;
	uint8_t bf;
	uint8_t devx;
	uint8_t log_max_qp_sz;
	uint8_t log_max_cq_sz;
	uint8_t log_max_qp;
	uint8_t log_max_cq;
	uint8_t log_max_mr;
	uint8_t log_max_msg;
	uint8_t max_inline_log;
	uint8_t ts_cap;
	struct dvx_sim_port_cfg port[DVX_SIM_MAX_PORTS];
	uint8_t log_max_ra_req_qp;
	uint8_t log_max_ra_res_qp;
	uint8_t log_max_pd;
	uint8_t rsvd4;
	uint16_t max_wqe_sz_sq;
	uint16_t max_wqe_sz_rq;
	uint32_t vendor_part_id;
	int32_t numa_node;
	uint64_t node_guid;
	char fw_ver[32];
};

/**
 * struct dvx_sim_fabric_cfg - capacities of a fabric (they size its storage).
 * @max_nics:	NICs dvx_sim_add_nic() may add
 * @max_qps:	QPs per NIC
 * @max_cqs:	CQs per NIC
 * @max_mrs:	MRs per NIC
 * @max_umems:	umems per NIC
 * @max_uars:	UARs per NIC (each a 4 KiB page of fabric storage)
 * @max_pds:	PDs per NIC
 * @max_dmabufs: fake dma-bufs (dvx_sim_dmabuf_export()) in the fabric
 * @max_gpus:	software GPUs dvx_sim_add_gpu() may add (0: none)
 * @max_gpu_mems: device allocations, imports and host registrations of all of them
 *		together
 * @reorder:	1: the seeded reorder mode (docs/sim-datapath.md "Reorder mode"): every
 *		reordering an RC QP allows (docs/prm.md 10), chosen by a PRNG seeded with
 *		@reorder_seed; 0: in order. The environment variable DVX_SIM_REORDER=<seed>
 *		turns it on at dvx_sim_fabric_init() for every fabric that has it off
 *		(DVX_SIM_REORDER=0 or unset: as configured); dvx_sim_set_reorder() changes it
 *		later
 * @reorder_stage: bytes of fabric storage for a later WQE's data gathered before an
 *		earlier READ or atomic response landed (larger WQEs are not gathered early);
 *		the default is 64 KiB, 0 turns early gathers off
 * @reorder_seed: the PRNG's seed when @reorder is 1
 */
struct dvx_sim_fabric_cfg {
	uint32_t max_nics;
	uint32_t max_qps;
	uint32_t max_cqs;
	uint32_t max_mrs;
	uint32_t max_umems;
	uint32_t max_uars;
	uint32_t max_pds;
	uint32_t max_dmabufs;
	uint32_t max_gpus;
	uint32_t max_gpu_mems;
	uint32_t reorder;
	uint32_t reorder_stage;
	uint64_t reorder_seed;
};

#define DVX_SIM_MAX_GPUS 16

/**
 * struct dvx_sim_gpu_cfg - one software GPU.
 * @attr:	what gpu_query answers (attr.ordinal is set to the GPU's index). The
 *		model honours vmm, posix_fd, fabric, dmabuf, vmm_rdma, host_register and
 *		granularity (allocation sizes are rounded up to it); uuid tells GPUs apart
 *		across processes: two processes whose fabrics have a GPU with the same
 *		uuid see the same GPU
 * @peers:	bit j set: this GPU can map GPU j's memory (gpu_peer_access)
 */
struct dvx_sim_gpu_cfg {
	struct dvx_hal_gpu_attr attr;
	uint32_t peers;
	uint32_t rsvd;
};

/** struct dvx_sim_faults - injected network faults (fabric-wide). */
struct dvx_sim_faults {
	uint32_t drop_every;	/* drop every n-th request of each QP (0 = never); retried per retry_cnt */
	uint32_t drop_count;	/* drop this many requests in a row from now (retry exhaustion) */
	uint64_t delay_ns;	/* delay before each WQE executes */
	uint8_t link_down;	/* every port down: requests time out (retry exhausted) */
	uint8_t rsvd[3];
	uint32_t piece_us;	/* the wire: the sending process stands still this long after
				 * each piece of a large frame it writes into a shared-memory
				 * ring (one that loses its CPU mid-frame; docs/sim-wire.md
				 * "Cut-through") */
};

/**
 * struct dvx_sim_stats - counters of a fabric (dvx_sim_get_stats()).
 * @steps:	progress passes run (dvx_sim_step(), dev_progress, the thread)
 * @doorbells:	UAR register writes the progress loop consumed
 * @db_stray:	of those, writes naming a QP not bound to that UAR page (ignored,
 *		as hardware ignores them; in the strict model also a fault)
 * @dbr_updates: times a QP's doorbell index advanced (strict: by a doorbell or a
 *		rescue; loose: its record was found advanced)
 * @wqes_executed: WQEs executed (data path)
 * @cqes_written: CQEs written (data path)
 * @cmds:	DEVX commands answered
 * @cmd_errors:	of those, refused with a non-zero status
 * @db_faults:	strict model: doorbells refused as faults (see enum
 *		dvx_sim_db_fault_kind); dvx_sim_db_faults() reads and clears them
 * @db_rescued:	strict model: QPs started from their doorbell record alone, because
 *		a doorbell of another QP to the same UAR page was consumed while their
 *		record was ahead of their last doorbell (their own write may have been
 *		overwritten in the one-word register before the loop read it; hardware
 *		would have received it). 0 whenever each QP rings a register of its own
 * @live:	objects alive now, all NICs: [0] PDs, [1] umems, [2] UARs, [3] MRs,
 *		[4] CQs, [5] QPs, [6] dma-bufs, [7] open device handles; software GPUs:
 *		[8] allocations and imports, [9] host registrations, [10] streams,
 *		[11] retained contexts
 * @dma_reads:	copies from device memory (dvx_sim_dmabuf_export_dma() umems and MRs)
 * @dma_writes:	copies to device memory
 * @dma_errors:	of those, copies that failed
 * @ro_shuffled: reorder mode: passes that ran the QPs in a random order and with
 *		random budgets (QPs interleave, CQEs of QPs sharing a CQ come in any order)
 * @ro_splits:	reorder mode: messages (WRITE, WRITE_IMM, READ) placed in part, in a
 *		random chunk order, the rest and their completions left to a later step
 * @ro_tail_first: of those, messages whose last 8 bytes were among the part placed
 * @ro_early:	reorder mode: WQEs whose data was gathered before an earlier READ's or
 *		atomic's response landed (unfenced, fence mode 0 or 1)
 * @ro_fenced:	reorder mode: early gathers a fence mode (2, 3, 4) held back
 */
struct dvx_sim_stats {
	uint64_t steps;
	uint64_t doorbells;
	uint64_t db_stray;
	uint64_t dbr_updates;
	uint64_t wqes_executed;
	uint64_t cqes_written;
	uint64_t cmds;
	uint64_t cmd_errors;
	uint64_t db_faults;
	uint64_t db_rescued;
	uint32_t live[12];
	uint64_t dma_reads;
	uint64_t dma_writes;
	uint64_t dma_errors;
	uint64_t ro_shuffled;
	uint64_t ro_splits;
	uint64_t ro_tail_first;
	uint64_t ro_early;
	uint64_t ro_fenced;
};

/**
 * enum dvx_sim_db_mode - how the progress loop treats doorbells (dvx_sim_set_db_mode()).
 * @DVX_SIM_DB_STRICT:	the default, as hardware: a UAR write starts only the QP it
 *			names, up to the producer index it carries, checked against
 *			the QP's doorbell record; a mismatch is a fault (struct
 *			dvx_sim_db_fault) and starts nothing
 * @DVX_SIM_DB_LOOSE:	the earlier model: any write to a UAR page makes the loop
 *			re-read the record of every QP bound to that page, and the
 *			index a doorbell carries is not used
 */
enum dvx_sim_db_mode {
	DVX_SIM_DB_STRICT = 0,
	DVX_SIM_DB_LOOSE = 1,
};

/**
 * enum dvx_sim_db_fault_kind - why the strict model refused a doorbell.
 * @DVX_SIM_DBF_NONE:		no fault
 * @DVX_SIM_DBF_QPN:		the QPN names no QP of that NIC, or a QP bound to
 *				another UAR page
 * @DVX_SIM_DBF_BEYOND_DBR:	the index is beyond the QP's doorbell record (the
 *				record was not written before the doorbell)
 * @DVX_SIM_DBF_BACKWARDS:	the index is behind the QP's last doorbell
 * @DVX_SIM_DBF_RANGE:		the index (or, for a rescue, the record) is more than
 *				the ring's size ahead of the WQEBBs the NIC consumed
 */
enum dvx_sim_db_fault_kind {
	DVX_SIM_DBF_NONE = 0,
	DVX_SIM_DBF_QPN,
	DVX_SIM_DBF_BEYOND_DBR,
	DVX_SIM_DBF_BACKWARDS,
	DVX_SIM_DBF_RANGE,
};

/**
 * struct dvx_sim_db_fault - the first doorbell fault since the last read.
 * @kind:	enum dvx_sim_db_fault_kind
 * @nic:	NIC index in the fabric
 * @page_id:	the UAR page written
 * @qpn:	the QPN the doorbell carried
 * @index:	the producer index it carried (16 bits; for a BlueFlame copy or a
 *		control-segment doorbell, the WQE's index plus its size)
 * @record:	the QP's doorbell-record SQ counter when it was checked (16 bits;
 *		0 for DVX_SIM_DBF_QPN)
 * @last:	the QP's last doorbell index (16 bits; 0 for DVX_SIM_DBF_QPN)
 * @raw:	the 8 bytes as written, in memory order, loaded as a uint64_t
 */
struct dvx_sim_db_fault {
	uint32_t kind;
	uint32_t nic;
	uint32_t page_id;
	uint32_t qpn;
	uint32_t index;
	uint32_t record;
	uint32_t last;
	uint32_t rsvd;
	uint64_t raw;
};

enum dvx_sim_live {
	DVX_SIM_LIVE_PD = 0,
	DVX_SIM_LIVE_UMEM,
	DVX_SIM_LIVE_UAR,
	DVX_SIM_LIVE_MR,
	DVX_SIM_LIVE_CQ,
	DVX_SIM_LIVE_QP,
	DVX_SIM_LIVE_DMABUF,
	DVX_SIM_LIVE_OPEN,
	DVX_SIM_LIVE_GPU_MEM,
	DVX_SIM_LIVE_GPU_HOSTREG,
	DVX_SIM_LIVE_GPU_STREAM,
	DVX_SIM_LIVE_GPU_CTX,
};

/**
 * typedef dvx_sim_trace_fn - trace callback: one executed WQE (or written CQE).
 * @arg:	the cookie given to dvx_sim_set_trace()
 * @nic:	NIC index in the fabric
 * @qpn:	the QP (for a CQE: the QP it completes)
 * @is_cqe:	0 for a WQE, 1 for a CQE
 * @bytes:	the raw bytes (WQE: ds * 16 bytes, contiguous; CQE: 64 bytes)
 * @len:	their length
 * Called with the fabric's lock held: it must not call back into the sim.
 *
 * When: a WQE's call comes after the WQE has executed, so its data is already in the
 * target's memory and a receiver's completion (a SEND's, a WRITE with immediate's) is
 * already written and visible to the receiver's poller (over the wire: the peer's
 * response has come back); it comes before the WQE's own
 * requester CQE. A failed WQE's call comes before its error CQE. A CQE's call comes
 * after the CQE is written, owner byte included. The trace records what happened; it
 * cannot hold a WQE back or see memory before the WQE touched it (use the faults of
 * dvx_sim_set_faults() for that).
 */
typedef void (*dvx_sim_trace_fn)(void *arg, uint32_t nic, uint32_t qpn, int is_cqe,
				 const void *bytes, size_t len);

/** struct dvx_sim_fabric - opaque; lives inside the caller's storage. */
struct dvx_sim_fabric;

/**
 * dvx_sim_fabric_cfg_default() - small capacities for tests: 4 NICs, 64 QPs, 64 CQs,
 * 64 MRs, 128 umems, 16 UARs, 8 PDs per NIC, 16 dma-bufs, 4 GPUs, 64 GPU allocations.
 * @cfg:	filled
 */
void dvx_sim_fabric_cfg_default(struct dvx_sim_fabric_cfg *cfg);

/**
 * dvx_sim_nic_cfg_default() - a ConnectX-7 like NIC: one RoCE v2 port up (MTU 4096,
 * MAC 02:00:00:00:NN:01, GID ::ffff:10.0.N.1 with N = @index + 1), core-direct,
 * atomics with host-endian 8-byte mode, force-loopback, overrun-ignore, BlueFlame,
 * DEVX, log_max_qp_sz 15, log_max_cq_sz 22, log_max_msg 30, RDMA-read/atomic depth 16.
 * @cfg:	filled
 * @index:	names it "sim_<index>", PCI "0000:<0x50+index>:00.0", and derives the
 *		addresses from it so NICs made with different indexes differ
 *
 * To make an IB port: port[0].link_layer = DVX_LINK_LAYER_IB (the LID is already
 * @index + 1).
 */
void dvx_sim_nic_cfg_default(struct dvx_sim_nic_cfg *cfg, unsigned index);

/**
 * dvx_sim_gpu_cfg_default() - an H200-like software GPU: "sim GPU <index>", PCI
 * "0000:<0x18+index>:00.0", a UUID made from @index, compute capability 9.0, 132 SMs,
 * 141 GiB, VMM with POSIX-fd handles and GPUDirect RDMA, dma-bufs, host registration,
 * no fabric handles, 2 MiB granularity, every other GPU a peer.
 * @cfg:	filled
 * @index:	names it; the same @index gives the same UUID in every process
 */
void dvx_sim_gpu_cfg_default(struct dvx_sim_gpu_cfg *cfg, unsigned index);

/**
 * dvx_sim_add_gpu() - add a software GPU to the fabric.
 * @fab:	the fabric
 * @cfg:	its configuration (copied)
 * Context: before the GPU is used; takes the fabric lock.
 * Return: its ordinal (>= 0), -EINVAL, -ENOSPC when max_gpus are there, -EEXIST for a
 * duplicate PCI address or UUID.
 */
int dvx_sim_add_gpu(struct dvx_sim_fabric *fab, const struct dvx_sim_gpu_cfg *cfg);

/**
 * dvx_sim_fabric_mem_size() - bytes of storage a fabric with @cfg needs.
 * Return: the size (including alignment slack), or 0 if @cfg is invalid (NULL, a zero
 * capacity, or capacities above 65535).
 */
size_t dvx_sim_fabric_mem_size(const struct dvx_sim_fabric_cfg *cfg);

/**
 * dvx_sim_fabric_init() - lay a fabric out in caller storage.
 * @storage:	at least dvx_sim_fabric_mem_size(@cfg) bytes, any alignment; owned by the
 *		caller, who keeps it alive until dvx_sim_fini() and frees it after
 * @len:	its length
 * @cfg:	capacities (copied)
 * @fab:	receives the fabric handle (a pointer into @storage)
 *
 * Nothing is allocated; every table, UAR page and capability page lives in @storage.
 * Context: any thread. Return: 0, -EINVAL (bad arguments, @len too small), or the
 * error of pthread_mutex_init().
 */
int dvx_sim_fabric_init(void *storage, size_t len, const struct dvx_sim_fabric_cfg *cfg,
			struct dvx_sim_fabric **fab);

/**
 * dvx_sim_add_nic() - add a NIC to the fabric.
 * @fab:	the fabric
 * @cfg:	its configuration (copied); validated: 1-2 ports, link layers IB or
 *		Ethernet, MTU 1-5, log sizes within their PRM fields, a unique name and PCI
 *		address
 * Context: before or between uses; takes the fabric lock.
 * Return: the NIC's index (>= 0), -EINVAL for a bad configuration, -ENOSPC when
 * max_nics are there already, -EEXIST for a duplicate name/PCI address.
 */
int dvx_sim_add_nic(struct dvx_sim_fabric *fab, const struct dvx_sim_nic_cfg *cfg);

/**
 * dvx_sim_nic_cfg_get() - the configuration NIC @index of @fab was added with (what
 * another process's wire needs to route to it, dvx_sim_wire_add_remote_nic()).
 * @fab:	the fabric
 * @index:	0 .. the NICs added - 1
 * @cfg:	filled
 * Context: any thread; takes the fabric lock. Return: 0; -EINVAL (NULL); -ENOENT (no
 * such NIC).
 */
int dvx_sim_nic_cfg_get(struct dvx_sim_fabric *fab, unsigned index, struct dvx_sim_nic_cfg *cfg);

/**
 * dvx_sim_hal() - the hal instance of a fabric (name "sim"): open its NICs by name
 * or fake PCI address with dvx_hal_nic_open().
 * Return: a pointer into the fabric's storage, valid until dvx_sim_fini().
 */
const struct dvx_hal *dvx_sim_hal(struct dvx_sim_fabric *fab);

/**
 * dvx_sim_step() - run the model until nothing can make progress.
 * @fab:	the fabric
 *
 * Consumes UAR doorbells, reads the doorbell records of the QPs bound to each rung
 * UAR page, and executes WQEs round-robin over every QP with work (re-running QPs
 * blocked on WAIT, SEND_EN limits or back-off when they can go on) until a pass
 * executes nothing, or a bound of passes is reached. Without other threads writing,
 * the result is deterministic. The hal's dev_progress op calls this.
 * Context: any thread; takes the fabric lock. Return: WQEs executed.
 */
unsigned dvx_sim_step(struct dvx_sim_fabric *fab);

/**
 * dvx_sim_set_idle() - how the progress thread idles when a pass did nothing.
 * @fab:	the fabric
 * @spins:	turns to retry at once (with a CPU pause) before sleeping; with a wire, an
 *		idle turn is a look and every 16th a whole pass (docs/sim-wire.md)
 * @sleep_ns:	then sleep this long (0: sched_yield() instead)
 * Defaults: 64 spins, 20 us sleep. Takes effect on the next idle period. With 1024
 * spins or more the thread is taken to have a CPU of its own: with a wire, while it is
 * awake, waiters that step the NIC (the hal's nic_progress) leave the work to it.
 * Context: any thread.
 */
void dvx_sim_set_idle(struct dvx_sim_fabric *fab, uint32_t spins, uint64_t sleep_ns);

/**
 * dvx_sim_start() - start the progress thread (runs dvx_sim_step() in a loop); needed
 * when something other than dvx's wait loops posts work (a GPU kernel, a thread that
 * never calls dev_progress).
 * Return: 0, -EALREADY if running, or pthread_create()'s error (negated).
 */
int dvx_sim_start(struct dvx_sim_fabric *fab);

/**
 * dvx_sim_stop() - stop and join the progress thread.
 * Return: 0, -EALREADY if it was not running.
 */
int dvx_sim_stop(struct dvx_sim_fabric *fab);

/**
 * dvx_sim_set_faults() - replace the fabric's injected faults (@f NULL: none).
 * Context: any thread; takes the fabric lock.
 */
void dvx_sim_set_faults(struct dvx_sim_fabric *fab, const struct dvx_sim_faults *f);

/**
 * dvx_sim_set_trace() - call @fn for every executed WQE and written CQE (@fn NULL:
 * off). @fn runs with the fabric lock held and must not call into the sim; it runs
 * after the WQE's effects are visible (dvx_sim_trace_fn says exactly when).
 */
void dvx_sim_set_trace(struct dvx_sim_fabric *fab, dvx_sim_trace_fn fn, void *arg);

/**
 * dvx_sim_set_db_mode() - choose the doorbell model (enum dvx_sim_db_mode; a new
 * fabric is DVX_SIM_DB_STRICT).
 * @fab:	the fabric
 * @mode:	DVX_SIM_DB_STRICT or DVX_SIM_DB_LOOSE
 * Context: any thread; takes the fabric lock. Return: 0, -EINVAL for NULL or an
 * unknown mode.
 */
int dvx_sim_set_db_mode(struct dvx_sim_fabric *fab, unsigned mode);

/**
 * dvx_sim_set_reorder() - turn the seeded reorder mode on or off (struct
 * dvx_sim_fabric_cfg.reorder; docs/sim-datapath.md "Reorder mode").
 * @fab:	the fabric
 * @on:		1 on, 0 in order
 * @seed:	the PRNG's new seed (used when @on)
 * Context: any thread; takes the fabric lock; between steps (a message placed in
 * part is finished in order). Return: 0, -EINVAL for NULL or @on not 0/1.
 */
int dvx_sim_set_reorder(struct dvx_sim_fabric *fab, int on, uint64_t seed);

/**
 * dvx_sim_db_faults() - read, and clear, the doorbell faults of the strict model.
 * @fab:	the fabric
 * @first:	receives the first fault since the last call (kind DVX_SIM_DBF_NONE
 *		when there was none); may be NULL
 * Context: any thread; takes the fabric lock. Return: the number of faults since the
 * last call (>= 0), -EINVAL for NULL @fab. The counter of dvx_sim_get_stats() keeps
 * counting; dvx_sim_fini() reports faults nobody read.
 */
int dvx_sim_db_faults(struct dvx_sim_fabric *fab, struct dvx_sim_db_fault *first);

/**
 * dvx_sim_get_stats() - read the fabric's counters.
 * Return: 0, -EINVAL for NULL arguments.
 */
int dvx_sim_get_stats(struct dvx_sim_fabric *fab, struct dvx_sim_stats *st);

/**
 * dvx_sim_set_port() - bring a port up or down at run time.
 * @fab:	the fabric
 * @nic:	NIC index
 * @port:	1-based port
 * @up:		1 up, 0 down
 * Return: 0, -EINVAL for an unknown NIC or port.
 */
int dvx_sim_set_port(struct dvx_sim_fabric *fab, unsigned nic, unsigned port, int up);

/**
 * dvx_sim_dmabuf_export() - the sim's model of GPU memory exported as a dma-buf.
 * @fab:	the fabric
 * @addr:	host memory standing for the device memory (owned by the caller, kept
 *		alive while registrations use it)
 * @len:	its length
 * @fd:		receives a fake descriptor (DVX_SIM_DMABUF_FD_BASE + n) that the sim's
 *		umem_reg and mr_reg accept as dmabuf_fd, with dmabuf_offset into @addr.
 *		It is not an OS descriptor: never close() it (dvx_hal_fd_close() on the
 *		sim's hal closes it as the system closes a dma-buf: registrations made
 *		from it stay valid).
 *
 * The sim accepts dma-buf registrations only for descriptors it handed out here; any
 * other descriptor is -EBADF.
 * Return: 0, -EINVAL, -ENOSPC when max_dmabufs are exported.
 */
int dvx_sim_dmabuf_export(struct dvx_sim_fabric *fab, void *addr, uint64_t len, int *fd);

/**
 * struct dvx_sim_dma - how the software NIC reaches memory it cannot address: the
 * device memory of a real GPU (CUDA), copied through the driver API as a NIC's DMA
 * engine would read and write it over PCIe.
 * @read:	copy @len bytes (> 0) at device address @src to @dst (host); 0 or a
 *		negative errno
 * @write:	copy @len bytes (> 0) from @src (host) to device address @dst; 0 or a
 *		negative errno
 * @arg:	passed to both
 *
 * Context: called by whatever runs the software NIC (its progress thread, the thread in
 * dvx_sim_step() or the hal's dev_progress, a wire progress pass) with the fabric's lock
 * held: a callback must not call into the sim, and one thread calls them at a time per
 * fabric. The addresses are device addresses inside the dma-buf given to
 * dvx_sim_dmabuf_export_dma(), never host pointers; the sim never dereferences them.
 *
 * What a callback must guarantee: it is synchronous, the copy complete when it returns
 * 0 (a @write's bytes visible to the device's later readers, e.g. cuMemcpyHtoD, or an
 * async copy on the NIC's own stream followed by its synchronize; a @read's bytes in
 * @dst), so copies happen in the order the sim makes them: per QP in the order of its
 * WQEs and, within a message, of its pieces, and a CQE is written only after the data
 * it completes is in place. It returns non-zero only when nothing more can be done: the
 * sim then counts a dma_error (struct dvx_sim_stats) and turns it into an error
 * completion, never a success. Copies may be as small as 1 byte (a CQE's owner byte)
 * and as large as a message; @dst/@src host buffers are the sim's, valid only for the
 * call.
 */
struct dvx_sim_dma {
	int (*read)(void *arg, void *dst, uint64_t src, uint64_t len);
	int (*write)(void *arg, uint64_t dst, const void *src, uint64_t len);
	void *arg;
};

/**
 * dvx_sim_dmabuf_export_dma() - a fake dma-buf over device memory the sim reaches only
 * through @dma (a real GPU's memory): queues whose rings, doorbell records and CQs are
 * in GPU memory, and MRs whose data is there (GPUDirect RDMA), as on hardware.
 * @fab:	the fabric
 * @dptr:	device address of the memory (4 KiB aligned); the caller keeps it
 *		allocated while registrations use it
 * @len:	its length (> 0)
 * @dma:	the copy callbacks (caller storage, kept unchanged while the dma-buf lives)
 * @fd:		receives a fake descriptor, as dvx_sim_dmabuf_export() gives
 *
 * A umem registered from it keeps a host copy of its bytes that the sim fills and
 * drains as a NIC's DMA would (docs/sim.md "Queues in GPU memory"): it reads the
 * doorbell record and the WQEs a doorbell covers only after that doorbell, reads the
 * CQ's doorbell record before each CQE, and writes each CQE as its first 63 bytes and
 * then the owner byte. A failed copy of a queue is counted (struct
 * dvx_sim_stats.dma_errors) and the queue that needed it does not run in that pass.
 *
 * An MR registered from it (DVX_MR_DMABUF, dmabuf_offset into it) holds data in device
 * memory (docs/sim.md "Data in GPU memory"): the data path moves every byte of it through
 * @dma, with no host copy kept: WRITE and WRITE_IMM placement, SEND placement into the
 * receive's scatter list, the bytes a READ reads at the responder and scatters at the
 * requester, a send's gather list, inline data placed there, and atomics (FA, CS, masked)
 * as read-modify-write under the fabric's lock: atomic with respect to every other atomic
 * of the fabric's NICs, never with respect to the device's own atomics. Copies are made
 * in order per QP and a completion is written only after its bytes are in place; across
 * processes on the wire each process reaches its own device memory through its own
 * callbacks (the responder places and reads, the requester gathers and scatters). A
 * failed copy is counted in dma_errors and fails the WQE with an error completion:
 * LOCAL_PROT_ERR for the requester's own memory, REMOTE_ACCESS_ERR (the responder QP goes
 * to ERR) for the responder's, REMOTE_OP_ERR with a responder error CQE for a SEND's
 * receive buffers.
 *
 * Context: any thread, not from inside @dma's callbacks.
 * Return: 0; -EINVAL (NULL, zero length, unaligned address, callbacks missing);
 * -ENOSPC when max_dmabufs are exported.
 */
int dvx_sim_dmabuf_export_dma(struct dvx_sim_fabric *fab, uint64_t dptr, uint64_t len,
			      const struct dvx_sim_dma *dma, int *fd);

/**
 * dvx_sim_dmabuf_release() - forget an exported dma-buf.
 * Return: 0, -EBADF for an unknown @fd, -EBUSY while umems or MRs registered from it
 * remain.
 */
int dvx_sim_dmabuf_release(struct dvx_sim_fabric *fab, int fd);

/**
 * dvx_sim_fini() - stop the progress thread and tear the fabric down. Objects still
 * alive are dropped with it; the storage is the caller's to free afterwards.
 * Return: 0, -EINVAL for NULL, -EPROTO when doorbell faults were recorded that no
 * dvx_sim_db_faults() call took (the fabric is torn down all the same), so every
 * test that checks its teardown also checks that its doorbells were right.
 */
int dvx_sim_fini(struct dvx_sim_fabric *fab);

/* ---- the wire: software NICs in other processes (docs/sim-wire.md) ------------------ */

struct dvx_hal_sock_addr;

/* The largest message a wire frame carries when struct dvx_sim_wire_cfg.max_msg is 0. */
#define DVX_SIM_WIRE_MAX_MSG_DEFAULT (1u << 20)
/* The least transport time-out on the wire when min_retry_ns is 0 (200 ms): processes
 * share cores (a CI machine runs 8 ranks and their progress threads on 2), so an answer
 * can take tens of milliseconds where one process takes microseconds. */
#define DVX_SIM_WIRE_RETRY_NS_DEFAULT 200000000ull
#define DVX_SIM_WIRE_MAX_RANKS 1024

/**
 * struct dvx_sim_wire_cfg - this process's end of the wire.
 * @rank:	this process, 0..nranks-1
 * @nranks:	processes joined by the wire, 1..DVX_SIM_WIRE_MAX_RANKS
 * @max_msg:	the largest message (bytes) one frame carries; larger WQEs to a remote
 *		NIC fail with LOCAL_LENGTH_ERR. 0: DVX_SIM_WIRE_MAX_MSG_DEFAULT. Every
 *		process must give the same
 * @max_remote_nics: NICs of other processes dvx_sim_wire_add_remote_nic() may add
 *		(0: 2 * nranks)
 * @min_retry_ns: the least transport time-out of a request on the wire (the QP's
 *		ack_timeout when that is longer); 0: DVX_SIM_WIRE_RETRY_NS_DEFAULT
 * @hal:	the backend of the wire's sockets and clock; NULL: dvx_hal_host()
 * @ring_bytes:	0, or bytes of each direction of a shared-memory ring per peer on this
 *		host (a power of two, 4 KiB to 1 GiB): a join over a UNIX socket offers
 *		one (a sealed memfd of 2 x @ring_bytes and 512 bytes, made and mapped by
 *		the joiner, passed with its hello), and a listener with the same
 *		@ring_bytes takes it; frames then go through the ring and the socket
 *		carries wake-ups only (docs/sim-wire.md). Otherwise, and over TCP, frames
 *		go through the socket. Not part of dvx_sim_wire_mem_size(): the rings
 *		are mapped from the memfd
 * @stream_bytes: cut-through on the shared-memory ring (docs/sim-wire.md): a frame
 *		of at least this many bytes is written into the ring a piece at a time,
 *		and a WRITE's payload is placed as it arrives; 0:
 *		DVX_SIM_WIRE_STREAM_DEFAULT, DVX_SIM_WIRE_STREAM_OFF: never (a frame is
 *		executed once it is whole); else at least 1024. Each process's own: it
 *		decides how this process writes and how it places
 * @stream_wait_us: how long this process, placing a payload as it arrives, waits for
 *		more of it once it stopped coming (and 50 times that for all of it)
 *		before it leaves the frame to be executed whole; 0: 100 us, at most
 *		1000000
 */
struct dvx_sim_wire_cfg {
	int32_t rank;
	int32_t nranks;
	uint32_t max_msg;
	uint32_t max_remote_nics;
	uint64_t min_retry_ns;
	const struct dvx_hal *hal;
	uint64_t ring_bytes;
	uint32_t stream_bytes;
	uint32_t stream_wait_us;
};

#define DVX_SIM_WIRE_STREAM_DEFAULT (64u << 10)
#define DVX_SIM_WIRE_STREAM_OFF (~0u)

/**
 * enum dvx_sim_wire_drop - why a responder dropped a request from another process (the
 * requester sends it again after its time-out; struct dvx_sim_wire_stats).
 * @DVX_SIM_WDROP_NO_QP:	no QP at the address and QPN it named
 * @DVX_SIM_WDROP_LINK:		the link, or the responder's port, down
 * @DVX_SIM_WDROP_NOT_RTR:	the QP not ready to receive yet (RST, INIT)
 * @DVX_SIM_WDROP_QP_ERR:	the QP in the error state
 * @DVX_SIM_WDROP_ROOM:		no room towards the requester for the answer
 * @DVX_SIM_WDROP_ORDER:	a request after one that was lost (go-back-N: the
 *				requester sends from the lost one again)
 * @DVX_SIM_WDROP_ATOMIC:	a retransmitted atomic whose result is not kept
 * @DVX_SIM_WDROP_OVERRUN:	the responder's CQ overran (the QP went to ERR)
 * @DVX_SIM_WDROP_OPCODE:	an opcode no requester sends
 * @DVX_SIM_WDROP_NKINDS:	the number of reasons
 */
enum dvx_sim_wire_drop {
	DVX_SIM_WDROP_NO_QP = 0,
	DVX_SIM_WDROP_LINK,
	DVX_SIM_WDROP_NOT_RTR,
	DVX_SIM_WDROP_QP_ERR,
	DVX_SIM_WDROP_ROOM,
	DVX_SIM_WDROP_ORDER,
	DVX_SIM_WDROP_ATOMIC,
	DVX_SIM_WDROP_OVERRUN,
	DVX_SIM_WDROP_OPCODE,
	DVX_SIM_WDROP_NKINDS
};

/**
 * struct dvx_sim_wire_stats - what the wire of this process did (dvx_sim_wire_get_stats()).
 * @frames_tx:	frames sent (requests and answers)
 * @frames_rx:	frames received
 * @requests:	requests sent, retransmissions included
 * @retransmits: of those, sent again after a time-out
 * @duplicates:	requests received again after they were executed (answered again,
 *		not executed twice)
 * @dropped:	requests received and dropped: no responder, its port down, its QP not
 *		receiving, or no room for the answer (the requester retries)
 * @peers_down:	connections found closed or broken (a process that ended or died)
 * @bytes_tx:	bytes written to the sockets
 * @stalls:	gaps between two passes of this fabric longer than 20 ms (or twice the
 *		idle sleep, dvx_sim_set_idle()): the process did not run, or nobody
 *		stepped it; the wire's transport timers do not count them, as a real NIC's
 *		timers run while its host stalls (docs/sim-wire.md)
 * @stalled_ns:	their time beyond that allowance, which the timers left out
 * @refused:	connections to this process's listener refused: a hello that is not of a
 *		rank of this job (magic, version, nranks, a rank that is not this one), a
 *		second connection claiming a rank that is up, nothing said within a second,
 *		no slot free; none of them changed anything (two joins that cross are not
 *		refusals: the lower rank's connection is kept, and the other join waits for
 *		it; a connection claiming a higher rank this process joined itself is
 *		closed as such a crossing, uncounted)
 * @window_max:	the most requests of one QP that were on the wire at once (at most 32)
 * @kicks:	doorbells whose poster woke the waiting progress thread (dvx_hal_nic_kick())
 * @rings:	peers whose frames go through a shared-memory ring (now)
 * @drop_why:	@dropped by reason (enum dvx_sim_wire_drop)
 * @last_drop:	the last request dropped: why (enum dvx_sim_wire_drop), the responder
 *		QP it named (@qpn), its PSN, the responder's expected PSN then (@epsn:
 *		0 when there was no QP) and the QP's state (@state: the PRM's qpc.state, 0 RST to 6 ERR;
 *		0xff when there was no QP)
 * @retry_exceeded: requests of this process's QPs that failed with no answer after
 *		every retry (TRANSPORT_RETRY_EXC_ERR)
 * @last_retry_exc: the last of them: the requester QP (@qpn), the PSN no answer came
 *		for, the process it was sent to (@rank), and how long (@quiet_ms) that
 *		process had then sent nothing this one executed (a process that did not
 *		run, or a dead one, is quiet; a live responder that dropped the request
 *		is not)
 * @stale_answers: answers received for nothing on the wire (a duplicate's, one from
 *		before a go-back or a QP reset): dropped
 * @unread_waits: time-outs of requests that the responder's process had not yet read
 *		from the shared-memory ring (it did not run meanwhile): not counted as
 *		losses, no retry spent (docs/sim-wire.md)
 * @passes:	passes of this process's software NICs since the wire was set up, by the
 *		progress thread and by waiters' steps (dvx_hal_nic_progress())
 * @pass_ns:	their time, from the start of each pass to its end (where the time of
 *		the software NIC goes: @pass_ns / @passes is what a frame waits at most
 *		for a pass that is under way, and a pass's own latency)
 * @helps:	waiters' steps that ran (found the lock free; each runs passes, counted in
 *		@passes, until one finds nothing to do)
 * @help_busy:	waiters' steps that left the work to the progress thread: it was in a
 *		pass, or it is awake and spins long when idle (dvx_sim_set_idle() with
 *		1024 spins or more: a CPU of its own)
 * @polls:	the sockets' polls (system calls) in passes; with every peer on a ring
 *		one round in 16 polls them, and one after a wait they ended
 * @peeks:	the progress thread's looks between idle passes that found nothing a pass
 *		would do, so ran none (docs/sim-wire.md "The progress thread between
 *		passes")
 * @peek_hits:	its looks that found something (a doorbell, a frame, an answer...) and
 *		ran a pass for it
 * @streamed:	WRITE requests (cfg.stream_bytes or more) executed from the shared-
 *		memory ring before all of their payload had arrived, their bytes placed
 *		as they came (cut-through, docs/sim-wire.md)
 * @stream_late: WRITE requests begun so whose rest stopped coming for
 *		cfg.stream_wait_us (100 us: the sending process did not run) or took 50
 *		times that: left in place, and executed whole once they are
 * @sleeps:	the progress thread's idle waits: its spins ran out (dvx_sim_set_idle())
 *		and it waited for a doorbell, a frame or its sleep's end (not counted when
 *		a doorbell or ring bytes were already there, so it did not wait)
 * @slept_ns:	their time, from the wait's start to its end (a wait a frame ended
 *		early includes the time the thread took to be scheduled again)
 */
struct dvx_sim_wire_stats {
	uint64_t frames_tx;
	uint64_t frames_rx;
	uint64_t requests;
	uint64_t retransmits;
	uint64_t duplicates;
	uint64_t dropped;
	uint64_t peers_down;
	uint64_t bytes_tx;
	uint64_t stalls;
	uint64_t stalled_ns;
	uint64_t refused;
	uint64_t window_max;
	uint64_t kicks;
	uint64_t rings;
	uint64_t drop_why[DVX_SIM_WDROP_NKINDS];
	struct dvx_sim_wire_drop_rec {
		uint32_t why;
		uint32_t qpn;
		uint32_t psn;
		uint32_t epsn;
		uint32_t state;
		uint32_t rsvd;
	} last_drop;
	uint64_t retry_exceeded;
	struct dvx_sim_wire_retry_rec {
		uint32_t qpn;
		uint32_t psn;
		int32_t rank;
		uint32_t quiet_ms;
	} last_retry_exc;
	uint64_t stale_answers;
	uint64_t unread_waits;
	uint64_t passes;
	uint64_t pass_ns;
	uint64_t helps;
	uint64_t help_busy;
	uint64_t polls;
	uint64_t peeks;
	uint64_t peek_hits;
	uint64_t streamed;
	uint64_t stream_late;
	uint64_t sleeps;
	uint64_t slept_ns;
};

/**
 * dvx_sim_wire_mem_size() - caller memory for this process's end of the wire.
 * @cfg:	the configuration
 * Return: bytes (any alignment), or 0 if @cfg is out of range.
 */
size_t dvx_sim_wire_mem_size(const struct dvx_sim_wire_cfg *cfg);

/**
 * dvx_sim_wire_init() - give @fab a wire to the software NICs of other processes.
 * @fab:	the fabric (its NICs may be added before or after)
 * @cfg:	rank, size, limits, sockets
 * @mem:	caller memory of dvx_sim_wire_mem_size() bytes, owned by the fabric until
 *		dvx_sim_fini()
 * @len:	its length
 *
 * Then: dvx_sim_wire_listen(), an exchange of the addresses it gives (a bootstrap's
 * allgather), dvx_sim_wire_connect(), and dvx_sim_wire_add_remote_nic() for every NIC of
 * the other processes that this one's QPs may name; or, joining on demand,
 * dvx_sim_wire_listen() and dvx_sim_wire_connect_peer() for each process when it is
 * first needed. Context: before traffic.
 * Return: 0; -EINVAL (NULL, a bad @cfg, @len too small); -EBUSY (@fab has a wire).
 */
int dvx_sim_wire_init(struct dvx_sim_fabric *fab, const struct dvx_sim_wire_cfg *cfg, void *mem,
		      size_t len);

/**
 * dvx_sim_wire_listen() - open this process's listening socket.
 * @fab:	a fabric with a wire
 * @bind:	where: a UNIX path that does not exist (one host), or an IP address with
 *		port 0 for any (across hosts)
 * @out:	set to the address the others connect to (the port the system chose)
 * Return: 0; -EINVAL; -EBUSY (listening or connected already); the socket's errno.
 */
int dvx_sim_wire_listen(struct dvx_sim_fabric *fab, const struct dvx_hal_sock_addr *bind,
			struct dvx_hal_sock_addr *out);

/**
 * dvx_sim_wire_connect() - join every other process at once (a full mesh): join the
 * higher ranks (dvx_sim_wire_connect_peer()), wait for the lower ones to join this one,
 * then close the listening socket (and remove its UNIX socket file).
 * @fab:	a fabric whose wire listens
 * @table:	nranks addresses, entry r from rank r's dvx_sim_wire_listen()
 * @timeout_ns:	bound on the whole set-up
 * Context: every process calls it at about the same time; a process that also runs its
 * progress thread meanwhile accepts in either. A connection that is not a rank of this
 * job is refused and counted (struct dvx_sim_wire_stats.refused) and the set-up goes on.
 * Return: 0; -EINVAL; -EBUSY (not listening, or joined already); -ETIMEDOUT (a process
 * never came); -ECONNREFUSED (a higher rank refused this one until the time-out);
 * -EPROTO (something else answers at a rank's address); the sockets' errno. On failure
 * every connection is closed.
 */
int dvx_sim_wire_connect(struct dvx_sim_fabric *fab, const struct dvx_hal_sock_addr *table,
			 uint64_t timeout_ns);

/* The longest wire address string with its NUL (dvx_sim_wire_addr()): it fits, with
 * room to spare, in a 128-byte handle. */
#define DVX_SIM_WIRE_ADDR_MAX 100

/**
 * dvx_sim_wire_connect_peer() - join one process on demand, by its address.
 * @fab:	a fabric with a wire (listening, so that others can join it too, or not)
 * @rank:	the process to join (not this one); its hello must name it
 * @addr:	where it listens (its dvx_sim_wire_listen(), or dvx_sim_wire_addr_parse()
 *		of its dvx_sim_wire_addr())
 * @timeout_ns:	bound on the call: while nothing listens at @addr it is tried again every
 *		millisecond; 0 only says whether @rank is joined already (0, else
 *		-ETIMEDOUT)
 *
 * Connects, says this process's hello (magic "DVXW", version 2, rank, nranks) and waits
 * for @rank's hello back; the connection is then the wire to @rank, in both directions.
 * Meanwhile it serves this process's own listener, so two processes that join each
 * other at the same moment both return 0 (the lower rank's connection is kept). Returns
 * 0 at once when @rank is joined already (it joined this one). The listener stays open
 * for more joins until dvx_sim_wire_fini(). Add @rank's NICs with
 * dvx_sim_wire_add_remote_nic() before a QP names them.
 * Context: any thread, also while the progress thread runs; blocks up to @timeout_ns.
 * Return: 0; -EINVAL; -EBUSY (another thread is joining @rank); -ETIMEDOUT (nobody
 * listened and answered in time); -ECONNREFUSED (the process there refused this one:
 * another job, a rank taken, or this hello is bad); -EPROTO (another rank, or something
 * that is not a wire, answers at @addr); the sockets' errno. A failure changes nothing.
 */
int dvx_sim_wire_connect_peer(struct dvx_sim_fabric *fab, int rank,
			      const struct dvx_hal_sock_addr *addr, uint64_t timeout_ns);

/**
 * dvx_sim_wire_addr() - where this process listens, as a short string for a handle.
 * @fab:	a fabric whose wire listens
 * @buf:	set to the address, NUL-terminated (dvx_sim_wire_addr_format())
 * @len:	its size; DVX_SIM_WIRE_ADDR_MAX is always enough
 * Return: 0; -EINVAL; -ENOTCONN (not listening); -ENAMETOOLONG (a UNIX path too long for
 * DVX_SIM_WIRE_ADDR_MAX: listen on a shorter one). The caller owns @buf.
 */
int dvx_sim_wire_addr(struct dvx_sim_fabric *fab, char *buf, size_t len);

/**
 * dvx_sim_wire_addr_format() - a socket address as a wire address string:
 * "unix:PATH", "abstract:NAME", "tcp:A.B.C.D:PORT" or "tcp6:[ADDR]:PORT" (with
 * "%SCOPE" after ADDR for a link-local one), at most DVX_SIM_WIRE_ADDR_MAX bytes.
 * @a:		the address
 * @buf:	the string, NUL-terminated (empty on -ENAMETOOLONG)
 * @len:	size of @buf
 * Context: any. Return: 0; -EINVAL (NULL, another family); -ENAMETOOLONG.
 */
int dvx_sim_wire_addr_format(const struct dvx_hal_sock_addr *a, char *buf, size_t len);

/**
 * dvx_sim_wire_addr_parse() - the socket address a wire address string names.
 * @str:	"unix:PATH", "abstract:NAME", "tcp:A.B.C.D:PORT", "tcp6:[ADDR]:PORT" or
 *		"tcp6:[ADDR%SCOPE]:PORT" (numbers only), shorter than DVX_SIM_WIRE_ADDR_MAX
 * @a:		set to the address (zeroed on failure)
 * Context: any; @str is untrusted input (a handle from another process): anything
 * else is -EINVAL. Return: 0; -EINVAL.
 */
int dvx_sim_wire_addr_parse(const char *str, struct dvx_hal_sock_addr *a);

/**
 * dvx_sim_wire_add_remote_nic() - a NIC of process @rank, as its dvx_sim_add_nic() had it.
 * @fab:	a fabric with a wire
 * @rank:	the process (not this one)
 * @cfg:	its configuration: its ports' LIDs, GIDs and MACs route this process's QPs
 *		to it, and roce_rmac answers its MACs
 * Return: 0; -EINVAL; -ENOSPC (max_remote_nics reached).
 */
int dvx_sim_wire_add_remote_nic(struct dvx_sim_fabric *fab, int rank,
				const struct dvx_sim_nic_cfg *cfg);

/**
 * dvx_sim_wire_fini() - close the wire's connections and detach it from @fab (@mem is
 * the caller's again). dvx_sim_fini() does it too.
 * @fab:	a fabric, with a wire or without
 * Context: no QP of @fab may be talking to another process meanwhile (their requests
 * are lost from now on). Return: 0; -EINVAL (NULL).
 */
int dvx_sim_wire_fini(struct dvx_sim_fabric *fab);

/**
 * dvx_sim_wire_get_stats() - the wire's counters.
 * @fab:	a fabric with a wire
 * @st:		filled
 * Return: 0, -EINVAL.
 */
int dvx_sim_wire_get_stats(struct dvx_sim_fabric *fab, struct dvx_sim_wire_stats *st);

DVX_END_DECLS

#endif /* DVX_TESTING_SIM_H */
