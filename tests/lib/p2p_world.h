/* SPDX-License-Identifier: MIT */
/*
 * tests/lib/p2p_world.h - N ranks, each with its own simulated NIC and a P2P transport:
 * as threads on one fabric with a thread bootstrap, or as processes (forked, or under
 * mpirun) on fabrics joined by the wire; used by the transport's tests and its
 * benchmark. The ranks' buffers:
 *
 *   data:  2 * nranks slots of slot_bytes: rank r's puts land in slot r at the
 *          receiver; slot nranks + p is this rank's send area for peer p
 *   sig:   nranks * nslots signal words: rank r raises (r, s) at the receiver
 *   ctr:   nranks * nslots counter words: raised locally by puts to peer r
 */
#ifndef DVX_TESTS_P2P_WORLD_H
#define DVX_TESTS_P2P_WORLD_H

#include <pthread.h>

#include <dvx/hal/sim.h>
#include <dvx/p2p/setup.h>

#define W_MAX_RANKS 8

struct world;

struct wrank {
	struct world *w;
	int rank;
	pthread_t thread;
	struct dvx_nic nic;
	struct dvx_bootstrap bs;
	struct dvx_p2p t;
	void *state, *rings;
	uint8_t *data;		/* 2 * nranks slots (see above) */
	uint64_t *sig;		/* nranks * nslots */
	uint64_t *ctr;		/* nranks * nslots */
	struct dvx_mr data_mr, sig_mr, ctr_mr;
	struct dvx_p2p_lbuf data_l, sig_l, ctr_l;
	struct dvx_p2p_rbuf data_r[W_MAX_RANKS], sig_r[W_MAX_RANKS];
	/* first failure: where and what */
	int fail_line;
	int fail_err;
	char fail_msg[160];
	void *user;
	int no_final_flush;	/* the body left a lane failed on purpose */
	int alone;		/* the body ends without the closing flush and barrier (a
				 * rank died) */
	uint64_t rings_len;	/* bytes of @rings (dvx_p2p_mem_req()) */
	struct dvx_hal hooked;	/* the sim's hal with obj_query hooked (cfg.query_hook) */
	struct dvx_diag init_diag;	/* the NIC's record after an expected init failure */
	/* world_cfg.dev_data: @data is the arena behind DMA callbacks; the NIC and the
	 * transport know it only as device memory at @dev_addr */
	struct dvx_sim_dma dev_dma;
	uint64_t dev_addr;
	uint64_t dev_len;
	int dev_fd;
};

typedef void (*wbody_fn)(struct wrank *r);

/*
 * Called on the calling rank's thread after every successful QUERY of a DEVX object by
 * that rank's NIC; it may rewrite the answer (@out, @outlen) to play a device that
 * reports something else.
 */
typedef void (*wquery_fn)(const void *in, void *out, size_t outlen);

struct world_cfg {
	int nranks;
	uint64_t slot_bytes;
	uint32_t nslots;
	uint32_t qps_per_nic;
	uint32_t sq_depth;
	uint32_t comp_depth;
	uint32_t local_pair;	/* companions use a partner QP */
	uint32_t no_loopback;	/* NICs without force-loopback */
	uint32_t ib;		/* IB ports instead of RoCE */
	int progress_thread;	/* run the sim's progress thread (else ranks step it) */
	int subset;		/* connect only the pairs @link says (else everyone) */
	uint8_t link[W_MAX_RANKS][W_MAX_RANKS];
	wquery_fn query_hook;	/* NULL: the sim's answers as they are */
	uint32_t conn_mtu;	/* non-zero: dvx_p2p_cfg.conn.max_mtu (a bad one fails init) */
	int init_err;		/* non-zero: dvx_p2p_init() must fail with it (body not run) */
	int procs;		/* enum world_procs: how the ranks run */
	int victim;		/* processes: rank + 1 that the body kills (SIGKILL), 0 none: the
				 * others end without closing collectives, each with its own
				 * verdict, and the victim's death is its success */
	uint64_t wire_retry_ns;	/* processes: the wire's least transport time-out (0: its
				 * default) */
	uint32_t gpu_recover;	/* DVX_P2P_F_GPU_RECOVER: exported lanes recoverable */
	uint32_t read;		/* 1: gets allowed (DVX_P2P_F_READ, data registered with
				 * remote read); 2: data readable, the transport without the
				 * flag */
	uint32_t extra_objs;	/* QPs, CQs, MRs and umems each NIC's fabric has room for
				 * beyond the transport's (other layers on the same NIC) */
	/* ranks as threads: rank r's data area in device memory at data_dev[r] (the
	 * caller's, 4 KiB aligned, 2 * nranks * slot_bytes), registered from a dma-buf the
	 * fabric reaches through data_dma[r] (dvx_sim_dmabuf_export_dma(): GPUDirect RDMA on
	 * the software NIC); r->data is then that device address, for copies only. NULL:
	 * host memory */
	const struct dvx_sim_dma *data_dma[W_MAX_RANKS];
	uint64_t data_dev[W_MAX_RANKS];
	int dev_data;		/* the data buffer in device memory: an MR over a
				 * dvx_sim_dmabuf_export_dma() dma-buf whose host-backed
				 * callbacks copy from and to r->data, at device addresses that
				 * are no host addresses (r->dev_addr); the sim reaches the
				 * buffer only through them */
	void (*restart)(struct wrank *r);	/* WORLD_FORK with a victim: once the
				 * victim died, a new process runs this as its rank
				 * (world_restarted(): its NIC open, a wire that listens at
				 * world_rejoin_path(r, "wire") and joins nobody, no bootstrap
				 * and no transport); it must pass for the run to */
};

/*
 * How world_run() runs the ranks. As processes every rank has a fabric of its own with
 * its one NIC (index 0), joined to the others by the wire (docs/sim-wire.md); a body
 * sees only its own rank's struct wrank (r->w->r[other] is not there), and the faults
 * and port states it sets are its own process's. WORLD_MPI: this process is one rank
 * of an MPI job (under mpirun; nranks must be the job's size) with the MPI bootstrap
 * (MPI started by dvx, finished at exit).
 */
enum world_procs {
	WORLD_THREADS = 0,	/* ranks as threads of this process, one fabric */
	WORLD_FORK,		/* ranks as forked processes, sockets bootstrap */
	WORLD_MPI,		/* this process is one rank under mpirun, MPI bootstrap */
};

struct world {
	struct world_cfg cfg;
	int procs;		/* enum world_procs of this run */
	int me;			/* processes: this process's rank */
	void *wire_mem;
	void *fab_mem;
	struct dvx_sim_fabric *fab;
	void *bs_mem;
	struct dvx_bootstrap_tgroup *group;
	struct wrank r[W_MAX_RANKS];
	wbody_fn body;
	char dir[64];		/* processes (WORLD_FORK): the run's folder (its files are
				 * the bootstrap's socket and what a restarted rank and the
				 * survivors leave for each other) */
};

/*
 * world_rejoin_path() - @buf: the file @what of the run's folder (WORLD_FORK), where a
 * restarted rank (cfg.restart) and the survivors leave what they tell each other.
 * Returns @buf.
 */
char *world_rejoin_path(const struct wrank *r, const char *what, char *buf, size_t len);

/** world_cfg_default() - 2 ranks, 64 KiB slots, 4 signal slots, depth 256/64. */
void world_cfg_default(struct world_cfg *c);

/**
 * world_run() - build the world, run @body on every rank (as threads), tear down.
 * Return: 0 when every rank passed, else the first failing rank's error; its
 * message is printed with print_error().
 */
int world_run(const struct world_cfg *c, wbody_fn body, void *user);

/**
 * world_mode() - how world_run() would run @c's ranks (enum world_procs): @c->procs, else
 * WORLD_MPI when an MPI launcher started this process, WORLD_FORK when the environment
 * has DVX_WORLD_PROCS=1, else WORLD_THREADS. A test whose body reaches into another
 * rank's memory skips itself as processes.
 */
int world_mode(const struct world_cfg *c);

/**
 * world_exit() - end the process with @rc: under MPI, MPI_Finalize() runs (at exit)
 * unless a rank of the job was killed by a world (cfg.victim), since Open MPI's can wait
 * for the dead one for ever; then the process ends without it (_exit()).
 */
void world_exit(int rc) __attribute__((noreturn));

/** the failure recorder used by W_CHECK */
void wfail(struct wrank *r, int line, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#define W_CHECK(r, cond, ...)                                          \
	do {                                                           \
		if (!(cond)) {                                         \
			wfail((r), __LINE__, -1, __VA_ARGS__);         \
			return;                                        \
		}                                                      \
	} while (0)

/* <unistd.h>'s access() flag W_OK has this check's name: a world's test uses this one */
#undef W_OK
#define W_OK(r, expr)                                                          \
	do {                                                                   \
		int w_err_ = (expr);                                           \
		if (w_err_) {                                                  \
			wfail((r), __LINE__, w_err_, "%s = %d", #expr, w_err_); \
			return;                                                \
		}                                                              \
	} while (0)

/* a deterministic byte pattern for (sender, receiver, round, offset) */
static inline uint8_t wpat(int from, int to, uint32_t round, uint64_t off)
{
	uint64_t x = (uint64_t)from * 0x9E3779B97F4A7C15ull ^ (uint64_t)to * 0xC2B2AE3D27D4EB4Full ^
		     (uint64_t)round * 0x165667B19E3779F9ull ^ (off >> 3) * 0xD6E8FEB86659FD93ull;

	x ^= x >> 29;
	return (uint8_t)(x >> ((off & 7) * 8));
}

#define W_SEC 1000000000ull
#define W_MS 1000000ull

/* where things are */
static inline uint8_t *wrecv(struct wrank *r, int from)
{
	return r->data + (uint64_t)from * r->w->cfg.slot_bytes;
}
static inline uint64_t wsend_off(struct wrank *r, int to)
{
	return ((uint64_t)r->w->cfg.nranks + (uint64_t)to) * r->w->cfg.slot_bytes;
}
static inline uint64_t wrecv_off(struct wrank *r, int from)
{
	return (uint64_t)from * r->w->cfg.slot_bytes;
}
static inline uint64_t wsig_off(struct wrank *r, int from, uint32_t slot)
{
	return ((uint64_t)from * r->w->cfg.nslots + slot) * 8;
}

/* the fabric the ranks' NICs are on, and this rank's NIC index in it (for
 * dvx_sim_set_port(), dvx_sim_set_faults()) */
static inline struct dvx_sim_fabric *wfab(struct wrank *r)
{
	return r->w->fab;
}
static inline unsigned wnic_index(const struct wrank *r)
{
	/* world_run() adds one NIC per rank, in rank order; as processes each has its own */
	return r->w->procs ? 0 : (unsigned)r->rank;
}

#endif /* DVX_TESTS_P2P_WORLD_H */
