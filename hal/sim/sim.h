/* SPDX-License-Identifier: MIT */
/*
 * hal/sim/sim.h - internal model of the software mlx5 NIC (not installed).
 *
 * The sim is split in two halves that meet in this header:
 *
 *  - control (hal/sim/fabric.c, ctrl.c, ops.c): the fabric and its NICs, the hal ops
 *    table, DEVX mailbox decoding (QUERY_HCA_CAP, CREATE/DESTROY/QUERY CQ and QP, the
 *    state transitions), the tables of PDs, umems, UARs and MRs, doorbell watching and
 *    the progress loop (deterministic step and progress thread);
 *  - execution (hal/sim/exec.c): given a QP whose doorbell says there is work, decode
 *    and execute its WQEs from the ring bytes, move data between MRs, write CQEs, raise
 *    error CQEs, move QPs to ERR and flush.
 *
 * The sim's decoders are written from the PRM facts of docs/prm.md on their own: this
 * directory never includes dvx/mlx5/ headers, so the builders and the model check each
 * other. Byte order helpers come from dvx/byteorder.h.
 *
 * Locking: one mutex per fabric (fab->lock) serialises everything: hal calls from
 * application threads and the progress loop. Execution runs with it held. Caller
 * memory (rings, doorbell records, UAR pages, MR contents) is read with acquire loads
 * where the doorbell protocol orders it (doorbell record, UAR word) and written with
 * release stores where software polls (CQE owner byte last).
 *
 * No allocation: every table below lives in the storage the caller handed to
 * dvx_sim_fabric_init(); capacities come from the fabric configuration.
 */
#ifndef DVX_HAL_SIM_SIM_H
#define DVX_HAL_SIM_SIM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <dvx/byteorder.h>
#include <dvx/hal.h>
#include <dvx/hal/sim.h>

/* QP states, PRM numbering (qpc.state) */
enum sim_qp_state {
	SIM_QPS_RST = 0,
	SIM_QPS_INIT = 1,
	SIM_QPS_RTR = 2,
	SIM_QPS_RTS = 3,
	SIM_QPS_SQER = 4,
	SIM_QPS_SQD = 5,
	SIM_QPS_ERR = 6,
};

struct sim_fabric;
struct sim_nic;
struct sim_dmabuf;

/** a protection domain */
struct sim_pd {
	uint32_t pdn;		/* 0 = free slot */
	uint32_t mrs;		/* MRs registered on it (pd_free refuses while > 0) */
};

/** a registered umem: host memory the sim reads/writes directly */
struct sim_umem {
	uint32_t id;		/* 0 = free slot */
	uint32_t access;
	uint8_t *base;		/* where the bytes are (address, or the dma-buf's backing) */
	uint64_t len;
	uint32_t users;		/* CQs/QPs whose rings or DBRs are in it (dereg: -EBUSY) */
	uint32_t rsvd;
	struct sim_dmabuf *dmabuf;	/* registered from a sim dma-buf, else NULL */
	/* device memory reached through DMA callbacks (dvx_sim_dmabuf_export_dma()):
	 * @base is the sim's own host copy (malloc'd at umem_reg, freed at dereg) and
	 * @dptr the device address of its first byte; NULL for memory the sim addresses */
	const struct dvx_sim_dma *dma;
	uint64_t dptr;
	/* the page size the kernel would give the umem and the umem's offset in its first
	 * page (docs/sim.md "Queues in umems"): where a ring may start */
	uint64_t page;
	uint64_t page_off;
};

/** an MR: [iova, iova+len) -> base (or, in device memory, -> dptr) */
struct sim_mr {
	uint32_t lkey;		/* 0 = free slot; lkey == rkey in the sim */
	uint32_t rkey;
	uint32_t pdn;
	uint32_t access;	/* enum dvx_access bits */
	uint64_t iova;
	uint64_t len;
	uint8_t *base;		/* NULL when @dma */
	/* device memory reached through DMA callbacks (dvx_sim_dmabuf_export_dma()): every
	 * byte the data path moves goes through @dma at device address @dptr + (addr -
	 * iova); NULL for memory the sim addresses (beside @base: one cache line) */
	const struct dvx_sim_dma *dma;
	uint64_t dptr;
	struct sim_dmabuf *dmabuf;	/* registered from a sim dma-buf, else NULL */
	struct sim_pd *pd;
};

/** a UAR page: the doorbell register is at page + reg_off, 8 bytes */
struct sim_uar {
	uint32_t page_id;	/* 0 = free slot */
	uint32_t type;		/* enum dvx_uar_type */
	uint8_t *page;		/* 4 KiB of fabric storage, mapped as "the register" */
	uint32_t reg_off;	/* offset of the doorbell register in the page */
	uint32_t rsvd;
	uint64_t last;		/* last 8-byte value the progress loop consumed */
	uint32_t refs;		/* handles to it (the NC shared page is handed out many times) */
	uint32_t rsvd2;
};

/** a CQ: 64-byte CQEs in a caller umem */
struct sim_cq {
	uint32_t cqn;		/* 0 = free slot */
	uint32_t log_sz;	/* log2(entries) */
	uint8_t *ring;		/* entries * 64 bytes */
	uint8_t *dbrec;		/* 8 bytes: word 0 = BE32 consumer index (24 bits) */
	uint32_t uar_page;
	uint32_t eqn;
	uint8_t oi;		/* overrun ignore */
	uint8_t cc;		/* collapsed: every CQE goes to entry 0 */
	uint8_t overrun;	/* an overrun happened: the CQ is in error */
	uint8_t rsvd;
	uint32_t pi;		/* CQEs produced so far (free running, 32 bits) */
	struct sim_nic *nic;
	/* control: the cqc as created (QUERY_CQ echoes it), resources held, users */
	uint8_t cqc[64];
	struct sim_umem *ring_umem;
	struct sim_umem *dbr_umem;
	uint32_t qp_users;	/* QPs that name it as cqn_snd/cqn_rcv (destroy refused) */
	uint32_t rsvd2;
};

/* exec.c's cache of resolved memory keys (see struct sim_qp_exec) */
#define SIM_EXEC_KEYS 8u
struct sim_exec_key {
	uint32_t key;		/* the lkey/rkey this entry resolved */
	uint32_t rsvd;
	struct sim_nic *nic;	/* the NIC it was resolved on */
	struct sim_mr *mr;	/* valid while mr->lkey == key */
};

/* requests of one QP on the wire at once (docs/sim-wire.md) */
#define SIM_WIRE_WIN 32u

/** execution state private to exec.c; dvx_sim_exec_reset_qp() zeroes it */
struct sim_qp_exec {
	uint32_t retry_left;	/* transport retries left for the WQE at sq_ci */
	uint8_t rnr_active;	/* rnr_left holds the count for the WQE at sq_ci */
	uint8_t retry_active;	/* retry_left holds the count for the WQE at sq_ci */
	uint8_t delay_done;	/* the delay fault was served for the WQE at sq_ci */
	uint8_t rsvd;
	struct sim_cq *scq, *rcq;	/* cached send / receive CQ (checked by cqn) */
	struct sim_exec_key keys[SIM_EXEC_KEYS];	/* direct-mapped key cache */
	uint64_t pkts;		/* request packets this QP sent, for faults.drop_every */
	/* the wire (wire.c, docs/sim-wire.md), requester side: a window of requests, PSNs
	 * w_una .. w_una + w_cnt - 1 for the WQEs from sq_ci on, slot psn % SIM_WIRE_WIN */
	uint32_t w_rank;	/* the responder's process + 1 when it is remote, else 0 */
	uint32_t w_una;		/* PSN of the WQE at sq_ci when w_cnt > 0 */
	uint32_t w_nxt;		/* the next PSN to send */
	uint32_t w_cnt;		/* requests on the wire (sent, or lost on the way) */
	uint32_t w_next_ci;	/* the WQE after the last one sent */
	uint32_t w_win;		/* how many may be on the wire now (1 after a loss, grows) */
	uint32_t w_hi;		/* the PSN after the highest one ever sent (retransmissions) */
	uint32_t ro_wpsn;	/* responder, reorder mode: the request placed in part (ro_wheld) */
	uint8_t w_seeded;	/* w_nxt has its first value */
	uint8_t w_ahead;	/* exec_one() runs a WQE beyond sq_ci only to send it */
	uint8_t wr_valid;	/* responder: wr_epsn and wr_src hold */
	uint8_t rsvd_w;
	uint32_t wr_epsn;	/* responder: the next PSN it executes */
	uint32_t wr_src;	/* its requester QP (an RC responder has only the one) */
	struct sim_wslot {
		uint32_t ci;		/* the WQE (free-running SQ index) */
		uint32_t bytes;		/* ACK: the requester CQE's byte count */
		uint64_t deadline;	/* on NIC time (sim_wire_now()), when it counts as lost */
		uint8_t resp;		/* what came back (enum sim_wire_type), 0 nothing yet */
		uint8_t synd;		/* NAK: the requester's syndrome; RNR: min_rnr_nak */
		uint8_t vendor;
		uint8_t data;		/* a READ or an atomic: its answer carries data */
		uint8_t ro_held;	/* reorder mode: its READ response was placed in part */
		uint8_t rsvd[3];
		uint32_t wgen;		/* the ring's generation when it was sent */
		uint64_t wend;		/* where it ends in that ring's stream (0: not on a
					 * ring, or lost on its way) */
	} w_slot[SIM_WIRE_WIN];
	/* responder: the atomics executed last, replayed to a retransmission */
	struct sim_whist {
		uint32_t psn;
		uint32_t valid;
		uint64_t old;
	} wr_hist[SIM_WIRE_WIN];
	uint64_t wr_answers;	/* answers this QP sent, for faults.drop_every */
	/* reorder mode: the WQE at sq_ci was placed in part in generation ro_gen; the
	 * rest (and its completion) waits for a later one */
	uint8_t ro_split;
	/* the wire: the WQE at dma_fail_ci could not gather its data (a DMA callback
	 * failed while it was sent ahead): it fails when it is the head */
	uint8_t dma_fail;
	/* the wire, responder, reorder mode: the request ro_wpsn was placed in part and its
	 * frame held for the next pass, which places it whole */
	uint8_t ro_wheld;
	uint8_t rsvd_ro[5];
	uint64_t ro_gen;
	uint32_t dma_fail_ci;
	uint32_t rsvd_df;
};

/** a receive WQE's scatter list position, for SEND spanning (kept per QP) */
struct sim_qp {
	uint32_t qpn;		/* 0 = free slot; 24 bits */
	uint32_t state;		/* enum sim_qp_state */
	uint32_t pdn;
	uint32_t uar_page;
	uint32_t user_index;
	uint32_t cqn_snd, cqn_rcv;
	/* rings (resolved from umem ids + offsets at CREATE_QP) */
	uint8_t *sq;		/* 64 << log_sq_size bytes */
	uint8_t *rq;		/* (16 << log_rq_stride) << log_rq_size bytes, or NULL */
	uint8_t *dbrec;		/* word 0 = BE32 RQ counter, word 1 = BE32 SQ counter */
	uint8_t log_sq_size, log_rq_size, log_rq_stride, rq_type;
	uint8_t cd_master, cd_slave_send, cd_slave_recv;
	uint8_t rsvd0;
	/* connection (RST2INIT / INIT2RTR / RTR2RTS) */
	uint32_t access;	/* rre/rwe/rae as DVX_ACCESS_REMOTE_* bits */
	uint32_t remote_qpn;
	uint8_t port;		/* 1-based */
	uint8_t mtu;		/* IB MTU enum */
	uint8_t retry_cnt, rnr_retry;
	uint8_t min_rnr_nak, log_sra_max, log_rra_max, atomic_mode;
	uint8_t fl;		/* force loopback */
	uint8_t grh;		/* RoCE / GRH path */
	uint16_t rlid;
	uint8_t rgid[16];
	uint8_t rmac[6];
	uint16_t udp_sport;
	uint32_t next_send_psn, next_rcv_psn;
	/* execution state (exec.c owns these; control resets them at RST) */
	uint32_t sq_ci;		/* next WQEBB to execute (free running, 16 bits used) */
	uint32_t sq_db;		/* WQEBBs the NIC may run up to (free running): strict, the
				 * doorbells' index (or a rescue's record); loose, the record */
	uint32_t db_last;	/* strict: the index of the last accepted doorbell */
	uint32_t rq_ci;		/* next receive WQE to consume (free running) */
	uint32_t send_en;	/* cd_slave_send: WQEBBs enabled by SEND_EN so far */
	uint32_t recv_en;	/* cd_slave_recv: receive WQEs enabled by RECV_EN */
	uint32_t rnr_left;	/* RNR retries left for the WQE at sq_ci */
	uint64_t stall_until_ns;	/* RNR/delay back-off: do not run before this */
	uint32_t wait_cqn;	/* WAIT in progress: CQ and index, 0 if none */
	uint32_t wait_index;
	struct sim_qp_exec exec;	/* exec.c private (retry state, caches) */
	struct sim_nic *nic;
	struct sim_qp *peer;	/* resolved responder QP (remote NIC or self), NULL if none */
	/* control: the qpc as created and modified (QUERY_QP echoes it), resources held */
	uint8_t qpc[232];
	struct sim_umem *wq_umem;
	struct sim_umem *dbr_umem;
	struct sim_cq *cq_snd;
	struct sim_cq *cq_rcv;
	uint32_t flush_db;	/* sq_db at the last flush (ERR: flush again when it moves) */
	uint32_t flush_rq;	/* RQ doorbell-record counter at the last flush */
	uint8_t ack_timeout;	/* qpc.ack_timeout (RTR2RTS): the retry time-out, see exec.c */
};

/** a simulated NIC */
struct sim_nic {
	struct sim_fabric *fab;
	struct dvx_sim_nic_cfg cfg;	/* as added (public header) */
	uint32_t index;
	uint32_t open_count;
	/* capability pages, answered to QUERY_HCA_CAP by op_mod >> 1 (cap type) */
	uint8_t cap_general[4096];
	uint8_t cap_atomic[4096];
	uint8_t cap_roce[4096];
	uint8_t cap_general2[4096];
	/* tables, in fabric storage */
	struct sim_pd *pds;
	struct sim_umem *umems;
	struct sim_mr *mrs;
	struct sim_uar *uars;
	struct sim_cq *cqs;
	struct sim_qp *qps;
	uint32_t next_id;	/* id/key generator */
	uint32_t shared_uar;	/* slot + 1 of the NC shared UAR page, 0 if none */
	/* slots are taken lowest first: every live QP (UAR) is below qp_hi (uar_hi), so
	 * the passes and the doorbell scans look at these, not at the whole tables */
	uint32_t qp_hi, uar_hi;
	uint32_t rsvd;
};

/** a fake dma-buf (dvx_sim_dmabuf_export): the sim's model of exported GPU memory */
struct sim_dmabuf {
	int32_t fd;		/* 0 = free slot, else DVX_SIM_DMABUF_FD_BASE + slot */
	uint32_t users;		/* umems and MRs registered from it */
	uint8_t *base;
	uint64_t len;
	uint8_t closed;		/* the descriptor is closed: gone once users is 0 */
	uint8_t rsvd[7];
	const struct dvx_sim_dma *dma;	/* device memory behind DMA callbacks (base NULL) */
	uint64_t dptr;
};

/** a software GPU (dvx_sim_add_gpu) */
struct sim_gpu {
	struct dvx_sim_gpu_cfg cfg;
	uint32_t ctx_refs;	/* primary-context retains */
	uint32_t rsvd;
};

/* what a sim_gpu_mem slot holds */
enum sim_gpu_mem_kind {
	SIM_GPU_MEM_FREE = 0,
	SIM_GPU_MEM_ALLOC,	/* created by gpu_mem_create (its memfd is ours) */
	SIM_GPU_MEM_IMPORT,	/* mapped from a handle by gpu_mem_import */
	SIM_GPU_MEM_HOSTREG,	/* host memory registered by gpu_host_register */
};

/** device memory (a shared mapping of a memfd) or a host registration */
struct sim_gpu_mem {
	uint8_t kind;		/* enum sim_gpu_mem_kind */
	int8_t gpu;		/* the GPU it belongs to */
	uint16_t rsvd;
	uint32_t flags;		/* DVX_HAL_GPU_MEM_* */
	int32_t memfd;		/* ALLOC: the backing memfd, else -1 */
	int32_t rsvd2;
	uint8_t *base;
	uint64_t len;
};

#define SIM_GPU_STREAMS 16

/** the fabric */
struct sim_fabric {
	pthread_mutex_t lock;
	struct dvx_hal hal;		/* ops = the sim ops, ctx = this fabric */
	struct dvx_sim_fabric_cfg cfg;
	struct sim_nic *nics;
	uint32_t nnics;
	/* progress thread */
	pthread_t thread;
	atomic_int run;			/* thread should keep going */
	atomic_int thread_up;
	atomic_int wire_on;		/* a wire is attached (read without the lock by
					 * dvx_sim_help()) */
	/* wake-ups (docs/sim-wire.md, Progress): 1 while the progress thread is about to
	 * wait or waits; a poster's kick (dvx_sim_kick()) that takes it back to 0 writes
	 * kick_fd (an eventfd in the thread's wait; -1 without one; closed at fini only) */
	atomic_int idle_armed;
	int kick_fd;
	atomic_ullong kicks;		/* kicks that woke the thread (wire stats) */
	/* faults (see dvx/hal/sim.h) */
	struct dvx_sim_faults faults;
	/* trace */
	dvx_sim_trace_fn trace;
	void *trace_arg;
	/* statistics */
	uint64_t wqes_executed;
	uint64_t cqes_written;
	uint64_t dma_reads, dma_writes, dma_errors;	/* device memory: umems and MRs */
	/* control: dma-bufs, UAR page storage, progress bookkeeping and counters */
	struct sim_dmabuf *dmabufs;
	uint8_t *uar_pages;		/* max_nics * max_uars pages of 4 KiB */
	uint32_t rr;			/* round-robin start of the next pass */
	uint32_t idle_spins;
	uint64_t idle_sleep_ns;
	uint64_t steps;
	uint64_t doorbells;
	uint64_t db_stray;
	uint64_t dbr_updates;
	uint64_t cmds;
	uint64_t cmd_errors;
	/* the doorbell model (enum dvx_sim_db_mode) and its faults */
	uint32_t db_mode;
	uint32_t rsvd_db;
	uint64_t db_faults;		/* all faults (stats) */
	uint64_t db_faults_unread;	/* since the last dvx_sim_db_faults() */
	uint64_t db_rescued;
	struct dvx_sim_db_fault db_first;	/* the first unread fault */
	/* execution state (exec.c) */
	uint64_t exec_pkts;		/* request packets sent, for faults.drop_every */
	/* the reorder mode (docs/sim-datapath.md "Reorder mode") */
	uint32_t ro_on;			/* on */
	uint32_t ro_stage_cap;		/* bytes at ro_stage */
	uint64_t ro_rng;		/* PRNG state */
	uint64_t ro_gen;		/* generation: each dvx_sim_step() and thread pass */
	uint8_t *ro_stage;		/* a later WQE's data gathered early */
	struct sim_qp *ro_stage_qp;	/* its QP (NULL: the stage is free) */
	uint32_t ro_stage_qpn;		/* and QPN, so a QP made in the same slot is not it */
	uint32_t ro_stage_idx;		/* the WQE's index */
	uint64_t ro_stage_len;		/* bytes gathered */
	uint32_t ro_stage_err;		/* gathering them failed (a DMA callback) */
	uint32_t rsvd_ro;
	uint64_t ro_shuffled, ro_splits, ro_tail_first, ro_early, ro_fenced;
	/* the wire to software NICs in other processes (wire.c), NULL if none; the rest of
	 * the sim reaches it only through @wire_ops, so that what links exec.c, fabric.c or
	 * ops.c without wire.c (unit tests, bench/sim-rate) still links */
	struct sim_wire *wire;
	const struct sim_wire_ops *wire_ops;
	uint64_t wire_max_msg;		/* the largest message a frame carries */
	uint64_t wire_min_retry_ns;	/* the least time before a request counts as lost */
	/* the wire's transport timers run on this process's NIC time: the monotonic clock
	 * less the gaps in which nothing stepped this fabric (the process did not run) */
	uint64_t wire_last_pass;	/* when the last pass began (0: none yet) */
	uint64_t wire_frozen_ns;	/* the gaps so far, less SIM_WIRE_GAP_NS each */
	uint64_t wire_frozen;		/* how many such gaps */
	uint64_t wire_window_max;	/* the most requests of one QP on the wire at once */
	/* the request dvx_sim_exec_wire_request() dropped last and the last retry
	 * exhaustion of a requester (exec.c), as struct dvx_sim_wire_stats reports them */
	struct dvx_sim_wire_drop_rec wdrop;
	struct dvx_sim_wire_retry_rec wretry_exc;
	uint64_t wretry_exc_n;
	uint64_t wstale;		/* answers to nothing on the wire */
	uint64_t wunread;		/* time-outs of requests the responder had not read */
	uint64_t wpasses;		/* passes with a wire (dvx_sim_wire_stats.passes) */
	uint64_t wpass_ns;		/* their time */
	uint64_t helps;			/* waiters' steps that ran */
	uint64_t help_busy;		/* waiters' steps that left the work to the thread
					 * (atomic: counted without the lock) */
	uint64_t peeks;			/* the progress thread's looks that found nothing */
	uint64_t peek_hits;		/* its looks that found something: a pass ran */
	uint64_t sleeps;		/* its idle waits, after its spins (atomic) */
	uint64_t slept_ns;		/* their time (atomic) */
	/* software GPUs (gpu.c) */
	struct sim_gpu *gpus;
	uint32_t ngpus;
	uint32_t rsvd_gpu;
	struct sim_gpu_mem *gpu_mems;
	uint8_t gpu_streams[SIM_GPU_STREAMS];	/* 1 = live; a stream is &gpu_streams[i] */
};

/* the reorder mode's PRNG (splitmix64): a value below @n (n > 0) */
static inline uint32_t sim_ro_rand(struct sim_fabric *fab, uint32_t n)
{
	uint64_t z = (fab->ro_rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (uint32_t)(z % n);
}

/* ---- control -> execution ------------------------------------------------- */

/**
 * dvx_sim_exec_qp() - run the SQ of @qp: execute WQEs from qp->sq_ci up to qp->sq_db
 * (what the doorbells allowed, set by the caller's doorbell model), at most
 * @budget WQEs. Stops early at a WAIT whose CQ index is not reached, at an RNR
 * back-off, at a cd_slave_send limit, or when the QP leaves RTS.
 * Context: fab->lock held.
 * Return: number of WQEs executed (0 when idle or blocked).
 */
unsigned dvx_sim_exec_qp(struct sim_fabric *fab, struct sim_qp *qp, unsigned budget);

/*
 * Device memory behind DMA callbacks (dvx_sim_dmabuf_export_dma(), gpu.c): a umem's
 * host copy is refreshed from the device before the sim reads [p, p + len) (pull) and
 * written back after the sim wrote it (push), as a NIC's DMA reads and writes over
 * PCIe. 0, or -EIO when the copy failed (counted in dma_errors). For memory the sim
 * addresses directly (u->dma NULL) both are free.
 */
int dvx_sim_dma_pull(struct sim_fabric *fab, const struct sim_umem *u, const void *p,
		     uint64_t len);
int dvx_sim_dma_push(struct sim_fabric *fab, const struct sim_umem *u, const void *p,
		     uint64_t len);

/*
 * Data in device memory (MRs over dvx_sim_dmabuf_export_dma() dma-bufs, exec.c): copy
 * @len bytes between device address @dptr and host memory through @dma's callbacks,
 * counted in dma_reads/dma_writes; 0, or -EIO when the callback failed (counted in
 * dma_errors). Context: fab->lock held.
 */
int dvx_sim_dma_read(struct sim_fabric *fab, const struct dvx_sim_dma *dma, void *dst,
		     uint64_t dptr, uint64_t len);
int dvx_sim_dma_write(struct sim_fabric *fab, const struct dvx_sim_dma *dma, uint64_t dptr,
		      const void *src, uint64_t len);

static inline int sim_pull(struct sim_fabric *fab, const struct sim_umem *u, const void *p,
			   uint64_t len)
{
	return __builtin_expect(u && u->dma, 0) ? dvx_sim_dma_pull(fab, u, p, len) : 0;
}

static inline int sim_push(struct sim_fabric *fab, const struct sim_umem *u, const void *p,
			   uint64_t len)
{
	return __builtin_expect(u && u->dma, 0) ? dvx_sim_dma_push(fab, u, p, len) : 0;
}

/**
 * dvx_sim_exec_flush() - @qp entered ERR: complete every outstanding SQ WQE and every
 * posted receive with a flush error CQE (syndrome WR_FLUSH_ERR), as hardware does.
 * Context: fab->lock held.
 */
void dvx_sim_exec_flush(struct sim_fabric *fab, struct sim_qp *qp);

/**
 * dvx_sim_exec_reset_qp() - @qp went to RST: zero the execution state (sq_ci, sq_db,
 * rq_ci, send_en, recv_en, rnr_left, stall_until_ns, wait_*, exec).
 * Context: fab->lock held.
 */
void dvx_sim_exec_reset_qp(struct sim_qp *qp);

/* ---- lookups every file uses (store.c) ------------------------------------ */

struct sim_cq *dvx_sim_cq_find(struct sim_nic *nic, uint32_t cqn);
struct sim_qp *dvx_sim_qp_find(struct sim_nic *nic, uint32_t qpn);
/** the responder QP of @qp's connection (by remote LID/GID + QPN, or itself for loopback) */
struct sim_qp *dvx_sim_qp_peer(struct sim_fabric *fab, struct sim_qp *qp);
/** MR by key on @nic; NULL if none */
struct sim_mr *dvx_sim_mr_find(struct sim_nic *nic, uint32_t key);
/** now, CLOCK_MONOTONIC ns */
uint64_t dvx_sim_now_ns(void);

/*
 * A gap between two passes of a fabric on the wire longer than this is time in which its
 * process did not run (the host held it up, or nobody stepped it): the NIC's transport
 * timers do not count it, as a real NIC's timers run while its host stalls. Its requests
 * then do not time out against a responder whose process was held up with it.
 */
#define SIM_WIRE_GAP_NS 20000000ull

/* this fabric's NIC time for the wire's transport timers (see SIM_WIRE_GAP_NS) */
static inline uint64_t sim_wire_now(const struct sim_fabric *fab)
{
	return dvx_sim_now_ns() - fab->wire_frozen_ns;
}
/** move @qp to ERR (and flush it); used by exec on a fatal WQE error (exec.c) */
void dvx_sim_qp_set_err(struct sim_fabric *fab, struct sim_qp *qp);
/** the RQ producer counter of @qp's doorbell record, 16 bits (exec.c) */
uint32_t dvx_sim_qp_rq_counter(const struct sim_qp *qp);

/* ---- the wire: software NICs in other processes (wire.c, docs/sim-wire.md) -------- */

struct sim_wire;

/* frame types */
enum sim_wire_type {
	SIM_WIRE_REQ = 1,	/* a request: WRITE, WRITE_IMM, SEND, SEND_IMM, READ, atomics */
	SIM_WIRE_ACK = 2,	/* done; a READ's data or an atomic's old value with it */
	SIM_WIRE_RNR = 3,	/* RNR NAK: no receive posted; retry after the timer */
	SIM_WIRE_NAK = 4,	/* the request failed at the responder: syndrome, vendor */
};

#define SIM_WIRE_HDR 120u	/* bytes of a frame header (docs/sim-wire.md) */

/** struct sim_wire_frame - a frame header, decoded (CPU order). */
struct sim_wire_frame {
	uint8_t type;		/* enum sim_wire_type */
	uint8_t opcode;		/* the WQE's opcode */
	uint8_t opmod;
	uint8_t fm_ce_se;	/* REQ: the WQE's, for the responder CQE's solicited bit */
	uint8_t synd;		/* NAK: requester syndrome; RNR: min_rnr_nak */
	uint8_t vendor;
	uint8_t link_layer;	/* REQ: the responder's port, as the requester's path names it */
	uint8_t src_nic;	/* REQ: the requester's NIC index; responses: the NIC it is for */
	uint32_t dst_qpn;
	uint32_t src_qpn;
	uint32_t psn;
	uint32_t rkey;
	uint64_t raddr;
	uint64_t len;		/* the message's length (READ: asked for) */
	uint64_t a, b, swap_mask, cmp_mask;	/* atomics; ACK: a = the old value */
	uint8_t imm[4];
	uint16_t dlid;		/* REQ: the path's LID (IB) */
	uint16_t slid;		/* REQ: the requester's LID, for the responder CQE */
	uint8_t dgid[16];	/* REQ: the path's GID (RoCE) */
	uint8_t dmac[6];
	uint8_t rsvd[2];
	uint32_t payload;	/* bytes after the header */
	uint32_t una;		/* REQ: the requester's oldest PSN still on the wire */
};

/**
 * struct sim_wseg - a piece of a frame's payload in the sender's memory: host bytes at
 * @p, or, when @dma is set, device memory at @dptr that the wire reads through @dma
 * (dvx_sim_dma_read()) as it builds the frame
 */
struct sim_wseg {
	const uint8_t *p;
	uint32_t len;
	uint32_t rsvd;
	const struct dvx_sim_dma *dma;
	uint64_t dptr;
};

/**
 * struct sim_wire_ops - what the sim calls in wire.c (through sim_fabric.wire_ops).
 * @route:	the process + 1 whose NIC @qp's path names (its remote LID, or GID and
 *		MAC), 0 when no remote NIC of the wire matches
 * @send:	queue a frame to process @rank: @f's header, then the @nseg pieces.
 *		@reserve: 1 for a request (room for an answer stays free, so answers always
 *		find room), SIM_WIRE_RETRANSMIT for a request sent again, 0 for an answer.
 *		0; -EAGAIN (no room now); -ENOTCONN (that process is gone): the frame is lost;
 *		-EIO (a piece in device memory could not be read: nothing was queued)
 * @room:	whether an answer of @payload bytes fits towards @rank now
 * @progress:	one round: read what arrived (requests executed by exec.c's responder
 *		half, answers handed to its requester half), send what is queued; whether
 *		anything moved
 * @close:	close every connection (dvx_sim_fini())
 * @rmac:	the MAC of a remote NIC's port that owns @gid (roce_rmac)
 * @quiet:	how long (ns) process @rank has sent nothing that was executed here
 *		(0: nothing yet)
 * @pos:	where the frames queued towards @rank so far end in its ring's byte
 *		stream, and the ring's generation; 0 when it is not on a ring
 * @unread:	whether @rank has not yet taken the bytes up to @end of that ring
 *		(generation @gen) out of it
 * @idle_wait:	the progress thread found nothing to do: wait up to @ns for a frame from
 *		another process (instead of sleeping blind), so an answer is taken in as it
 *		arrives; false when it did not wait (a doorbell or ring bytes were there)
 * @flush:	write what this pass queued (frames are queued, and written together at
 *		the end of a pass, or when a buffer is full)
 * Context: fab->lock held, all of them but @idle_wait (called without it).
 */
struct sim_wire_ops {
	uint32_t (*route)(struct sim_fabric *fab, const struct sim_qp *qp);
	int (*send)(struct sim_fabric *fab, uint32_t rank, const struct sim_wire_frame *f,
		    const struct sim_wseg *seg, unsigned nseg, int reserve);
	int (*room)(struct sim_fabric *fab, uint32_t rank, uint64_t payload);
	bool (*progress)(struct sim_fabric *fab);
	void (*close)(struct sim_fabric *fab);
	bool (*rmac)(struct sim_fabric *fab, const uint8_t gid[16], uint8_t mac[6]);
	bool (*idle_wait)(struct sim_fabric *fab, uint64_t ns);
	void (*flush)(struct sim_fabric *fab);
	uint64_t (*quiet)(struct sim_fabric *fab, uint32_t rank);
	uint64_t (*pos)(struct sim_fabric *fab, uint32_t rank, uint32_t *gen);
	bool (*unread)(struct sim_fabric *fab, uint32_t rank, uint64_t end, uint32_t gen);
	bool (*pending)(struct sim_fabric *fab);
};

/*
 * Wake-ups (fabric.c). The waiter: dvx_sim_idle_arm() under fab->lock (the flag up, a
 * full fence, then the UAR registers read: false, disarmed, when a doorbell is there),
 * its wait on kick_fd (and the wire's sockets) with a timeout, dvx_sim_idle_disarm().
 * A poster: its doorbell store, dvx_sim_kick() (a full fence, then the flag read). One
 * of the two sees the other's store, so a doorbell is never left to the timeout.
 */
/* a waiter's step (the hal's nic_progress): leaves the work to the progress thread when
 * that is in a pass, with a wire (fabric.c) */
void dvx_sim_help(struct sim_fabric *fab);
bool dvx_sim_idle_arm(struct sim_fabric *fab);
void dvx_sim_idle_disarm(struct sim_fabric *fab, bool kicked);
void dvx_sim_kick(struct sim_fabric *fab);
/* kick_fd made if there is none (the wire's init; without one, waits run to their
 * time-out as before) */
void dvx_sim_kick_open(struct sim_fabric *fab);

/* dvx_sim_wire_send()'s @reserve for a request sent again after its time-out */
#define SIM_WIRE_RETRANSMIT 2
/* what dvx_sim_exec_wire_request() did with a request: executed, a duplicate answered,
 * dropped, placed in part in the reorder mode (SIM_WIRE_HELD: the frame stays in the
 * receive buffer and is executed again in the next pass, whole), or not executed because
 * the rest of a payload that was still arriving did not come in time (SIM_WIRE_LATER:
 * the frame stays where it is and is executed again, whole, once it is; what the try
 * left, bytes of the destination and a requester's first PSN, that run redoes) */
enum { SIM_WIRE_DONE = 0, SIM_WIRE_DUP, SIM_WIRE_DROPPED, SIM_WIRE_HELD, SIM_WIRE_LATER };

/**
 * struct sim_wpay - a received frame's payload (f->payload bytes) for exec.c: @n[0]
 * bytes at @p[0], then @n[1] at @p[1]. In the receive buffer it is one piece; read in
 * place from a shared-memory ring it may be two (it wraps the data area's end), and the
 * peer may rewrite those bytes while they are copied: exec.c takes them once, into the
 * memory they are for, and decides nothing on them.
 */
struct sim_wpay {
	const uint8_t *p[2];
	uint64_t n[2];
	/* a payload still arriving (streaming, docs/sim-wire.md "Cut-through"), else
	 * more is NULL and every byte is there: the first @have bytes are there now;
	 * more() waits a bounded time for more and returns how many are there then (as
	 * many as before: none came in time) */
	uint64_t have;
	uint64_t (*more)(const struct sim_wpay *pay, uint64_t have);
	void *ctx;
};

/* the responder and requester halves of exec.c that the wire calls */
int dvx_sim_exec_wire_request(struct sim_fabric *fab, uint32_t rank, struct sim_qp *peer,
			      const struct sim_wire_frame *f, const struct sim_wpay *pay);
/* 1 when a READ response was placed in part (reorder mode): the frame is held, as
 * SIM_WIRE_HELD; else 0 */
int dvx_sim_exec_wire_response(struct sim_fabric *fab, const struct sim_wire_frame *f,
			       const struct sim_wpay *pay);
/** the local QP that a path and a QPN name, or NULL (fabric.c) */
struct sim_qp *dvx_sim_qp_by_path(struct sim_fabric *fab, uint8_t link_layer, uint16_t lid,
				  const uint8_t gid[16], const uint8_t mac[6], uint32_t qpn);

#endif /* DVX_HAL_SIM_SIM_H */
