// SPDX-License-Identifier: MIT
/*
 * plugins/nccl/net.c - NCCL's network plugin calls over the messaging layer
 * (dvx/msg/msg.h), version-neutral: exports.c adapts them to each table. docs/nccl.md.
 *
 * An instance (struct dvxn_ctx) is one messaging context over every device, with its
 * own lock: NCCL calls a communicator's plugin objects from two threads (the proxy's
 * service thread: listen, connect, accept, regMr, close; its progress thread: isend,
 * irecv, test) and several communicators' threads at once, while a context takes one
 * thread at a time. Version 11 makes an instance per init (per NCCL communicator);
 * versions 8-10 share one per process. The plugin allocates (NCCL expects it to): the
 * context's regions, communicators, requests and registrations.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dvx/hal.h>
#include <dvx/msg/msg.h>
#include <dvx/nic/nic.h>

#include "net.h"
#include "gdr.h"
#include "handle.h"
#include "sw.h"

#define CTX_MAGIC 0x5854434eu	/* "NCTX" */
#define COMM_MAGIC 0x4d4d434eu	/* "NCMM" */
#define REQ_LIVE 0x5145524eu	/* "NREQ" */
#define REQ_FREE 0x4545524eu
#define MR_MAGIC 0x524d4e44u
#define MAX_PEND DVXN_MAX_PEND		/* connects in progress per instance */
#define SEND_REQS (DVX_NCCL_MAX_REQUESTS * DVX_MSG_MAX_RECVS)
#define RECV_REQS (2 * DVX_NCCL_MAX_REQUESTS)

#define FLIGHT_BINS 12

enum { K_LISTEN = 1, K_SEND = 2, K_RECV = 3 };
enum { R_SEND = 1, R_RECV = 2 };

/* process-wide configuration, read from the environment by the first init */
static struct {
	int ready;
	int hw;			/* mlx5 NICs through the linux hal, else software NICs */
	unsigned ndev;
	char names[DVX_MSG_MAX_NICS][DVX_HAL_NAME_MAX];
	char pci[DVX_MSG_MAX_NICS][128];
	uint64_t guid[DVX_MSG_MAX_NICS];
	uint32_t mbps[DVX_MSG_MAX_NICS];	/* ConnectX: port 1's speed (0: not known) */
	uint32_t groups, depth_mult, nqps, max_comms, shared_sets, private_sets;
	uint64_t timeout_ns;
	int speed;
	const char *stats;
	int sw_refs;
	enum dvxn_gdr_mode gdr;	/* software NICs: what NCCL_PTR_CUDA memory goes through */
	enum dvxn_gdr_engine gdr_engine;	/* and who copies it (gdr.h) */
	uint32_t cts, eager;	/* the CTS receiver offload, its eager size */
	uint32_t spins;		/* software NICs: the progress thread's idle turns */
} conf;

static pthread_mutex_t conf_lock = PTHREAD_MUTEX_INITIALIZER;
static dvx_nccl_log_fn nlog;

struct dvxn_comm;

struct dvxn_req {
	uint32_t magic;
	uint8_t kind;
	uint8_t n;
	uint16_t rsvd;
	struct dvxn_comm *comm;
	struct dvx_msg_req *q;
	uint64_t bytes;
	uint64_t t_post;	/* DVX_NET_STATS: when it was posted (ns) */
	struct dvxn_req *next;
};

struct dvxn_comm {
	uint32_t magic;
	uint8_t kind;
	uint8_t closed;
	uint16_t nic;
	struct dvxn_ctx *ctx;
	struct dvx_msg_comm *mc;
	struct dvxn_req *reqs;
	struct dvxn_req *free;
	uint32_t id, nqps;
	int shared;
	uint64_t posted, completed, bytes, waits, errors;
	/* DVX_NET_STATS: where a message's time went, in the proxy's view. refused_at:
	 * when a post was first refused since the last accepted one (0: none) */
	uint64_t refused_at, held, held_ns, flight_ns, flight_max;
	uint64_t flights[FLIGHT_BINS];	/* post to done: < 1 us, < 2, < 4 ... < 1024 us, more */
	struct dvx_msg_qp_stats qps[DVX_MSG_MAX_QPS];	/* its QPs when it closed (telemetry) */
	struct dvxn_comm *next;
};

struct dvxn_mr {
	uint32_t magic;
	uint16_t nic;
	int fd;			/* the software dma-buf of a GPU buffer (gdr.h), else -1 */
	struct dvxn_ctx *ctx;
	struct dvx_mr mr;
};

struct dvxn_pend {
	int live;
	uint32_t gen;
	struct dvx_msg_handle h;
};

struct dvxn_ctx {
	uint32_t magic;
	int version;
	unsigned serial;
	uint64_t comm_id;
	pthread_mutex_t lock;
	struct dvx_msg m;
	struct dvx_nic nic[DVX_MSG_MAX_NICS];
	unsigned nnics;
	struct dvx_msg_cfg cfg;
	void *state, *fifo, *rings;
	uint64_t state_len, fifo_len;
	struct dvxn_comm *comms;	/* every comm made, closed ones too (telemetry) */
	uint32_t gen;
	struct dvxn_pend pend[MAX_PEND];
	uint64_t connects, accepts, mrs;
	uint64_t handles_refused;	/* connects refused for their handle (handle.h) */
};

static struct dvxn_ctx *global_ctx;
static int global_refs;
static unsigned ctx_serial;

/* ------------------------------------------------------------------------------
 * Logging and errors
 */
static void warn(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void warn(const char *file, int line, const char *fmt, ...)
{
	dvx_nccl_log_fn fn;
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fn = __atomic_load_n(&nlog, __ATOMIC_ACQUIRE);
	if (fn)
		fn(DVX_NCCL_LOG_WARN, DVX_NCCL_LOGSYS_NET, file, line, "NET/dvx : %s", msg);
	else
		fprintf(stderr, "NET/dvx : %s\n", msg);
}

static void info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void info(const char *fmt, ...)
{
	dvx_nccl_log_fn fn = __atomic_load_n(&nlog, __ATOMIC_ACQUIRE);
	char msg[512];
	va_list ap;

	if (!fn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fn(DVX_NCCL_LOG_INFO, DVX_NCCL_LOGSYS_INIT | DVX_NCCL_LOGSYS_NET, __FILE__, __LINE__,
	     "NET/dvx : %s", msg);
}

#define WARN(...) warn(__FILE__, __LINE__, __VA_ARGS__)

/* a WARN line for modules that have none (gdr.c: dvx-copier's failure, once) */
static void warn_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void warn_line(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	WARN("%s", msg);
}

/* bad arguments and handles, messages larger than the receive: the caller's error;
 * everything else (the NIC, the wire, the peer, room): the system's */
static int code_of(int err)
{
	switch (err) {
	case -EINVAL:
	case -EMSGSIZE:
	case -EACCES:
	case -EBADMSG:
		return DVX_NCCL_INTERNAL_ERROR;
	default:
		return DVX_NCCL_SYSTEM_ERROR;
	}
}

static const char *err_name(int err)
{
	return strerror(err < 0 ? -err : err);
}

/* ------------------------------------------------------------------------------
 * Configuration
 */
static int env_u32(const char *name, uint32_t def, uint32_t min, uint32_t max, uint32_t *out)
{
	const char *s = getenv(name);
	char *end;
	unsigned long v;

	*out = def;
	if (!s || !*s)
		return 0;
	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end || v < min || v > max) {
		WARN("%s=%s: expected a number from %u to %u", name, s, min, max);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

static int env_rank(const char *own, const char *const *others, int *out)
{
	const char *s = getenv(own);
	unsigned i;

	for (i = 0; (!s || !*s) && others[i]; i++)
		s = getenv(others[i]);
	if (!s || !*s)
		return -1;
	*out = atoi(s);
	return 0;
}

#ifdef CONFIG_DVX_RDMA
/* port 1's speed from its width and speed codes, 0 when it cannot be read */
static uint32_t port_mbps(const char *name)
{
	struct dvx_hal_port_attr pa;
	struct dvx_hal_nic nic;
	uint32_t mbps = 0;

	memset(&nic, 0, sizeof(nic));
	if (dvx_hal_nic_open(dvx_hal_linux(), name, &nic))
		return 0;
	if (!dvx_hal_query_port(&nic, 1, &pa))
		mbps = dvx_hal_port_mbps(&pa);
	(void)dvx_hal_nic_close(&nic);
	return mbps;
}

/* mlx5 NICs through the linux hal: 0 when there are none */
static unsigned hw_list(void)
{
	struct dvx_hal_nic_info info[16];
	unsigned n = 0, i, k = 0;

	if (dvx_hal_nic_list(dvx_hal_linux(), info, 16, &n))
		return 0;
	for (i = 0; i < n && i < 16 && k < DVX_MSG_MAX_NICS; i++) {
		if (!info[i].is_mlx5)
			continue;
		snprintf(conf.names[k], sizeof(conf.names[k]), "%s", info[i].name);
		if (info[i].pci[0])
			snprintf(conf.pci[k], sizeof(conf.pci[k]), "/sys/bus/pci/devices/%s",
				 info[i].pci);
		conf.guid[k] = info[i].node_guid;
		conf.mbps[k] = port_mbps(info[i].name);
		k++;
	}
	return k;
}
#endif

/*
 * The CPUs this process has to itself, about: those it may run on (its affinity mask:
 * a container's, taskset's or the launcher's limit), shared by the job's processes on
 * this host (LOCAL_WORLD_SIZE under torchrun, OMPI_COMM_WORLD_LOCAL_SIZE under Open MPI,
 * MPI_LOCALNRANKS under MPICH; 1 when none is set). Decides whether the software NIC's
 * progress thread may spin waiting for work (DVX_NET_SIM_SPINS' default).
 */
static long cpu_share(void)
{
	static const char *const local[] = { "LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE",
					     "MPI_LOCALNRANKS", NULL };
	long n = sysconf(_SC_NPROCESSORS_ONLN), k = 1;
	cpu_set_t set;
	unsigned i;

	CPU_ZERO(&set);
	if (!sched_getaffinity(0, sizeof(set), &set) && CPU_COUNT(&set) > 0)
		n = CPU_COUNT(&set);
	for (i = 0; local[i]; i++) {
		const char *e = getenv(local[i]);
		char *end;
		long v;

		if (!e || !*e)
			continue;
		v = strtol(e, &end, 10);
		if (!*end && v > 0) {
			k = v;
			break;
		}
	}
	return n > 0 ? n / k : 1;
}

static int conf_read(void)
{
	static const char *const ranks[] = { "RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK",
					     "SLURM_PROCID", NULL };
	static const char *const sizes[] = { "WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS",
					     NULL };
	struct dvxn_sw_cfg sc;
	uint32_t nsim = 0, tmo, thread, max_msg, cts, speed, retry, qps, gdr_regs, gdr_trace;
	uint32_t ring_kb, stream_kb, stage_kb, spins;
	long share = cpu_share();
	char why[256];
	int rc, bad = 0;
	unsigned i;

	bad |= env_u32("DVX_NET_COMM_NGROUPS", 0, 0, DVX_MSG_MAX_GROUPS, &conf.groups);
	bad |= env_u32("DVX_NET_QP_DEPTH_MULT", 1, 1, 16, &conf.depth_mult);
	bad |= env_u32("DVX_NET_QPS_PER_CONN", 1, 1, DVX_MSG_MAX_QPS, &conf.nqps);
	bad |= env_u32("DVX_NET_MAX_COMMS", 256, 8, DVX_MSG_MAX_COMMS, &conf.max_comms);
	bad |= env_u32("DVX_NET_SHARED_SETS", 0, 0, DVX_MSG_MAX_COMMS, &conf.shared_sets);
	bad |= env_u32("DVX_NET_PRIVATE_SETS", 0, 0, DVX_MSG_MAX_COMMS, &conf.private_sets);
	bad |= env_u32("DVX_NET_TIMEOUT_MS", 30000, 100, 3600000, &tmo);
	/* 0: by the NIC's kind (dvxn_get_properties()) */
	bad |= env_u32("DVX_NET_SPEED", 0, 0, 10000000, &speed);
	bad |= env_u32("DVX_NET_SIM_THREAD", 1, 0, 1, &thread);
	/* the progress thread's turns without work before it sleeps (a look each, a whole
	 * pass every 16th): with CPUs to spare it waits for the next message awake, as
	 * NCCL's own proxy thread does, and from 1024 the proxy's calls leave the NIC's
	 * work to it while it is awake (docs/sim-wire.md); on a small machine it yields */
	bad |= env_u32("DVX_NET_SIM_SPINS", share >= 4 ? 20000 : 64, 1, 1u << 30, &spins);
	bad |= env_u32("DVX_NET_WIRE_MAX_MSG", 4u << 20, 4096, 1u << 30, &max_msg);
	bad |= env_u32("DVX_NET_CTS_OFFLOAD", 0, 0, 1, &cts);
	bad |= env_u32("DVX_NET_EAGER_BYTES", 4096, 64, 65536, &conf.eager);
	bad |= env_u32("DVX_NET_WIRE_RETRY_MS", 0, 0, 600000, &retry);
	bad |= env_u32("DVX_NET_WIRE_RING_KB", 4096, 0, 1u << 20, &ring_kb);
	bad |= env_u32("DVX_NET_WIRE_STREAM_KB", 64, 0, 1u << 20, &stream_kb);
	bad |= env_u32("DVX_NET_SIM_QPS", 512, 16, 65536, &qps);
	bad |= env_u32("DVX_NET_GDR_MAX_REGS", 4096, 16, 65535, &gdr_regs);
	bad |= env_u32("DVX_NET_GDR_TRACE", 0, 0, 1u << 20, &gdr_trace);
	bad |= env_u32("DVX_NET_GDR_STAGE_KB", 4096, 64, 1u << 20, &stage_kb);
	if (getenv("DVX_NET_SIM") && *getenv("DVX_NET_SIM"))
		bad |= env_u32("DVX_NET_SIM", 1, 1, DVXN_SW_MAX_NICS, &nsim);
	if (bad)
		return DVX_NCCL_INVALID_USAGE;
	if (conf.eager & 63) {
		WARN("DVX_NET_EAGER_BYTES=%u: a multiple of 64 (64 ... 65536)", conf.eager);
		return DVX_NCCL_INVALID_USAGE;
	}
	if (ring_kb && (ring_kb < 4 || (ring_kb & (ring_kb - 1)))) {
		WARN("DVX_NET_WIRE_RING_KB=%u: 0 (no ring) or a power of two from 4 to 1048576",
		     ring_kb);
		return DVX_NCCL_INVALID_USAGE;
	}
	if (stream_kb && stream_kb < 4) {
		WARN("DVX_NET_WIRE_STREAM_KB=%u: 0 (off) or 4 to 1048576", stream_kb);
		return DVX_NCCL_INVALID_USAGE;
	}
	conf.cts = cts;
	conf.timeout_ns = (uint64_t)tmo * 1000000ull;
	conf.speed = (int)speed;
	conf.stats = getenv("DVX_NET_STATS");
	if (conf.stats && !*conf.stats)
		conf.stats = NULL;
#ifdef CONFIG_DVX_RDMA
	if (!nsim) {
		conf.ndev = hw_list();
		conf.hw = conf.ndev > 0;
	}
#endif
	if (!conf.hw) {
		memset(&sc, 0, sizeof(sc));
		sc.nnics = nsim ? nsim : 1;
		sc.wire = getenv("DVX_NET_WIRE");
		if (sc.wire && !*sc.wire)
			sc.wire = NULL;
		sc.rendezvous = getenv("DVX_NET_BOOTSTRAP");
		sc.max_msg = max_msg;
		sc.timeout_ns = conf.timeout_ns;
		sc.retry_ns = (uint64_t)retry * 1000000ull;
		sc.max_qps = qps;
		sc.ring_bytes = (uint64_t)ring_kb << 10;
		sc.stream_bytes = stream_kb ? stream_kb << 10 : DVX_SIM_WIRE_STREAM_OFF;
		sc.thread = (int)thread;
		sc.spins = spins;
		conf.spins = spins;
		rc = dvxn_gdr_probe(getenv("DVX_NET_GDR"), getenv("DVX_NET_GDR_ENGINE"), &conf.gdr,
				    &conf.gdr_engine, why, sizeof(why));
		if (rc) {
			WARN("GPU buffers: %s", why);
			return DVX_NCCL_INVALID_USAGE;
		}
		if (conf.cts && conf.gdr != DVXN_GDR_OFF) {
			WARN("DVX_NET_CTS_OFFLOAD=1 with DVX_NET_GDR: the receiver copies eager "
			     "messages with the CPU, which GPU buffers do not allow (unset one)");
			return DVX_NCCL_INVALID_USAGE;
		}
		sc.max_dmabufs = conf.gdr != DVXN_GDR_OFF ? gdr_regs : 0;
		sc.rank = -1;
		sc.nranks = 0;
		if (sc.wire && (env_rank("DVX_NET_RANK", ranks, &sc.rank) ||
				env_rank("DVX_NET_NRANKS", sizes, &sc.nranks))) {
			WARN("DVX_NET_WIRE=%s: this process's rank and the number of processes are "
			     "unknown (set DVX_NET_RANK and DVX_NET_NRANKS)", sc.wire);
			return DVX_NCCL_INVALID_USAGE;
		}
		rc = dvxn_sw_up(&sc, why, sizeof(why));
		if (rc) {
			WARN("software NICs: %s", why);
			return rc == -EINVAL ? DVX_NCCL_INVALID_USAGE : DVX_NCCL_SYSTEM_ERROR;
		}
		conf.sw_refs = 1;
		why[0] = 0;
		rc = dvxn_gdr_up(dvxn_sw_fabric(), conf.gdr, conf.gdr_engine,
				 (size_t)stage_kb << 10, info, warn_line, gdr_trace, why,
				 sizeof(why));
		if (rc) {
			WARN("GPU buffers: %s", why);
			dvxn_gdr_down();
			dvxn_sw_down();
			conf.sw_refs = 0;
			return DVX_NCCL_SYSTEM_ERROR;
		}
		if (conf.gdr != DVXN_GDR_OFF && dvxn_gdr_mode() == DVXN_GDR_OFF)
			info("GPU buffers off (DVX_NET_GDR=auto): %s", why);
		conf.gdr = dvxn_gdr_mode();
		conf.ndev = dvxn_sw_nnics();
		for (i = 0; i < conf.ndev; i++) {
			struct dvx_sim_nic_cfg nc;

			dvxn_sw_nic_cfg(i, &nc);
			snprintf(conf.names[i], sizeof(conf.names[i]), "%s", nc.name);
			conf.pci[i][0] = 0;	/* no PCI function: NCCL hangs it off the CPU */
			conf.guid[i] = nc.node_guid;
		}
	}
	info("%u %s NIC%s, groups %u, depth x%u, %u QP%s per connection, CTS %s, %s, "
	     "GPU buffers %s",
	     conf.ndev, conf.hw ? "mlx5" : "software", conf.ndev == 1 ? "" : "s", conf.groups,
	     conf.depth_mult, conf.nqps, conf.nqps == 1 ? "" : "s",
	     conf.cts ? "offload (eager ring)" : "FIFO",
	     conf.hw ? "hardware" : !getenv("DVX_NET_WIRE") ? "one process" :
	     !strncmp(getenv("DVX_NET_WIRE"), "ondemand", 8) ? "wire on demand" : "wire mesh",
	     conf.hw ? "no" : conf.gdr == DVXN_GDR_HOSTPROC ?
	     "host-backed through dvx-copier --sim (DVX_NET_GDR=hostproc)" :
	     conf.gdr != DVXN_GDR_CUDA ?
	     (conf.gdr == DVXN_GDR_HOST ? "host-backed (DVX_NET_GDR=host)" : "no") :
	     conf.gdr_engine == DVXN_GDR_PROCESS ? "through dvx-copier's CUDA copies" :
	     "through CUDA copies in this process");
	if (!conf.hw && conf.gdr == DVXN_GDR_CUDA && conf.gdr_engine == DVXN_GDR_THREAD)
		WARN("GPU buffers with DVX_NET_GDR_ENGINE=thread: a CUDA module load or host "
		     "unregister by any thread of this process, while a kernel waits for a "
		     "software NIC's copy, holds that copy until the kernel ends: a failed "
		     "collective or a hang (docs/nccl.md, \"GPU buffers\")");
	conf.ready = 1;
	return DVX_NCCL_OK;
}

/* ------------------------------------------------------------------------------
 * Instances
 */
static void *region(const struct dvx_mem_req *r)
{
	void *p = NULL;
	size_t align = r->align < 64 ? 64 : (size_t)r->align;

	if (posix_memalign(&p, align, r->bytes ? (size_t)r->bytes : 64))
		return NULL;
	memset(p, 0, (size_t)r->bytes);
	return p;
}

static void stats_write(struct dvxn_ctx *c);

static void ctx_free(struct dvxn_ctx *c)
{
	struct dvxn_comm *k, *nk;
	unsigned i;

	if (c->m.live == DVX_LIVE) {
		stats_write(c);
		dvx_msg_fini(&c->m);
	}
	for (i = 0; i < c->nnics; i++)
		if (c->nic[i].open == DVX_LIVE)
			dvx_nic_close(&c->nic[i]);
	for (k = c->comms; k; k = nk) {
		nk = k->next;
		free(k->reqs);
		k->magic = 0;
		free(k);
	}
	free(c->state);
	free(c->fifo);
	free(c->rings);
	pthread_mutex_destroy(&c->lock);
	c->magic = 0;
	free(c);
}

static int ctx_make(int version, uint64_t comm_id, struct dvxn_ctx **out)
{
	struct dvx_mem_req s, f, g;
	struct dvx_nic_cfg na;
	const struct dvx_hal *hal;
	struct dvxn_ctx *c;
	unsigned i;
	int rc;

	c = calloc(1, sizeof(*c));
	if (!c) {
		WARN("init: no memory for an instance");
		return DVX_NCCL_SYSTEM_ERROR;
	}
	c->magic = CTX_MAGIC;
	c->version = version;
	c->comm_id = comm_id;
	pthread_mutex_init(&c->lock, NULL);
	c->serial = __atomic_fetch_add(&ctx_serial, 1, __ATOMIC_RELAXED);
#ifdef CONFIG_DVX_RDMA
	hal = conf.hw ? dvx_hal_linux() : dvxn_sw_hal();
#else
	hal = dvxn_sw_hal();
#endif
	for (i = 0; i < conf.ndev; i++) {
		memset(&na, 0, sizeof(na));
		na.name = conf.names[i];
		rc = dvx_nic_open(&c->nic[i], hal, &na);
		if (rc) {
			WARN("init: opening NIC %s: %s", conf.names[i], err_name(rc));
			goto fail;
		}
		c->nnics = i + 1;
	}
	memset(&c->cfg, 0, sizeof(c->cfg));
	c->cfg.nnics = c->nnics;
	for (i = 0; i < c->nnics; i++)
		c->cfg.nics[i] = &c->nic[i];
	if (!conf.hw)
		dvxn_sw_listen_addr(&c->cfg.listen_addr);
	c->cfg.max_comms = conf.max_comms;
	c->cfg.nqps = conf.nqps;
	c->cfg.max_reqs = DVX_NCCL_MAX_REQUESTS;
	c->cfg.max_recvs = DVX_MSG_MAX_RECVS;
	c->cfg.groups = conf.groups;
	c->cfg.depth_mult = conf.depth_mult;
	c->cfg.max_shared_sets = conf.groups ? conf.shared_sets : 0;
	c->cfg.max_private_sets = conf.private_sets;
	c->cfg.timeout_ns = conf.timeout_ns;
	if (conf.cts) {
		c->cfg.flags |= DVX_MSG_F_CTS_OFFLOAD;
		c->cfg.eager_bytes = conf.eager;
	}
	rc = dvx_msg_mem_req(&c->cfg, &s, &f, &g);
	if (rc) {
		WARN("init: the messaging layer refused the configuration (groups %u, depth x%u, "
		     "%u QPs, %u comms): %s", conf.groups, conf.depth_mult, conf.nqps,
		     conf.max_comms, err_name(rc));
		ctx_free(c);
		return DVX_NCCL_INVALID_USAGE;
	}
	c->state_len = s.bytes;
	c->fifo_len = f.bytes;
	c->state = region(&s);
	c->fifo = region(&f);
	c->rings = region(&g);
	if (!c->state || !c->fifo || !c->rings) {
		WARN("init: no memory for the messaging regions (%" PRIu64 " + %" PRIu64 " + %"
		     PRIu64 " bytes)", s.bytes, f.bytes, g.bytes);
		rc = -ENOMEM;
		goto fail;
	}
	rc = dvx_msg_init(&c->m, &c->cfg, c->state, s.bytes, c->fifo, f.bytes, c->rings, g.bytes);
	if (rc) {
		WARN("init: the messaging context: %s", err_name(rc));
		goto fail;
	}
	*out = c;
	return DVX_NCCL_OK;
fail:
	ctx_free(c);
	return DVX_NCCL_SYSTEM_ERROR;
}

int dvxn_init(void **ctx, int version, uint64_t comm_id, dvx_nccl_log_fn log)
{
	struct dvxn_ctx *c;
	int rc = DVX_NCCL_OK;

	if (log)
		__atomic_store_n(&nlog, log, __ATOMIC_RELEASE);
	pthread_mutex_lock(&conf_lock);
	if (!conf.ready)
		rc = conf_read();
	pthread_mutex_unlock(&conf_lock);
	if (rc)
		return rc;
	if (ctx) {
		rc = ctx_make(version, comm_id, &c);
		if (rc)
			return rc;
		*ctx = c;
		return DVX_NCCL_OK;
	}
	pthread_mutex_lock(&conf_lock);
	if (!global_ctx)
		rc = ctx_make(version, 0, &global_ctx);
	if (!rc)
		global_refs++;
	pthread_mutex_unlock(&conf_lock);
	return rc;
}

void *dvxn_global_ctx(void)
{
	return global_ctx;
}

int dvxn_finalize(void *ctx)
{
	struct dvxn_ctx *c = ctx;

	if (!c || c->magic != CTX_MAGIC) {
		WARN("finalize: not an instance of this plugin (%p)", ctx);
		return DVX_NCCL_INTERNAL_ERROR;
	}
	pthread_mutex_lock(&c->lock);
	pthread_mutex_unlock(&c->lock);
	ctx_free(c);
	return DVX_NCCL_OK;
}

/* versions 8-10 have no finalize: the process-wide instance and the software NICs go
 * when the library is unloaded (NCCL dlclose()s it after its last communicator) */
__attribute__((destructor)) static void dvxn_unload(void)
{
	if (global_ctx) {
		ctx_free(global_ctx);
		global_ctx = NULL;
	}
	if (conf.sw_refs) {
		dvxn_gdr_down();
		dvxn_sw_down();
		conf.sw_refs = 0;
	}
}

int dvxn_set_net_attr(void *ctx, struct dvx_nccl_net_attr *attr)
{
	/* hints only: dvx's QPs and sets do not change with them */
	return DVX_NCCL_OK;
}

int dvxn_devices(int *ndev)
{
	if (!ndev)
		return DVX_NCCL_INTERNAL_ERROR;
	*ndev = conf.ready ? (int)conf.ndev : 0;
	return DVX_NCCL_OK;
}

int dvxn_get_properties(int dev, struct dvxn_props *p)
{
	uint64_t max_msg;

	if (!conf.ready || dev < 0 || (unsigned)dev >= conf.ndev || !p) {
		WARN("getProperties: no device %d (%u devices)", dev, conf.ndev);
		return DVX_NCCL_INTERNAL_ERROR;
	}
	memset(p, 0, sizeof(*p));
	p->name = conf.names[dev];
	p->pci_path = conf.pci[dev][0] ? conf.pci[dev] : NULL;
	p->guid = conf.guid[dev];
	p->ptr_support = DVX_NCCL_PTR_HOST;
	if (!conf.hw && conf.gdr != DVXN_GDR_OFF)
		p->ptr_support |= DVX_NCCL_PTR_CUDA;	/* software dma-bufs: gdr.h */
	p->reg_is_global = 0;
	p->force_flush = 0;
	/*
	 * What NCCL's tuner reads as the link: a ConnectX port's own speed (100 Gb/s when
	 * its codes cannot be read: dvx_hal_port_mbps()); a software NIC
	 * moves one message at about 3-6 GB/s through its shared-memory ring, and told
	 * 100 Gb/s NCCL picked LL at 128 KiB where it picks Simple for its own Socket
	 * transport (broadcast 1.5-1.6 GB/s there; told 25 Gb/s, Simple: 2.3-2.7 GB/s, and
	 * 512 KiB 3.5-3.9 -> 4.0-4.1: bench/RESULTS.md, 2026-11-29)
	 */
	p->speed = conf.speed ? conf.speed : !conf.hw ? 25000 : conf.mbps[dev] ? (int)conf.mbps[dev]
										   : 100000;
	p->port = 1;
	p->latency = 0;
	p->max_comms = (int)conf.max_comms;
	p->max_recvs = DVX_MSG_MAX_RECVS;
	max_msg = conf.hw ? (1ull << 30) : dvxn_sw_max_msg();
	if (!max_msg || max_msg > (1ull << 30))
		max_msg = 1ull << 30;
	p->max_p2p_bytes = max_msg;
	p->max_coll_bytes = max_msg;
	return DVX_NCCL_OK;
}

/* ------------------------------------------------------------------------------
 * Communicators
 */
static struct dvxn_ctx *ctx_of(void *ctx, const char *call)
{
	struct dvxn_ctx *c = ctx ? ctx : global_ctx;

	if (!c || c->magic != CTX_MAGIC) {
		WARN("%s: not an instance of this plugin (%p): init first", call, ctx);
		return NULL;
	}
	return c;
}

static struct dvxn_comm *comm_of(void *comm, int kind, const char *call)
{
	struct dvxn_comm *k = comm;

	if (!k || k->magic != COMM_MAGIC || (kind && k->kind != kind) || k->closed) {
		WARN("%s: %p is not a live %s comm of this plugin", call, comm,
		     kind == K_SEND ? "send" : kind == K_RECV ? "receive" :
		     kind == K_LISTEN ? "listen" : "send or receive");
		return NULL;
	}
	return k;
}

static struct dvxn_comm *comm_new(struct dvxn_ctx *c, int kind, unsigned nic,
				  struct dvx_msg_comm *mc)
{
	struct dvxn_comm *k = calloc(1, sizeof(*k));
	unsigned n = kind == K_SEND ? SEND_REQS : kind == K_RECV ? RECV_REQS : 0, i;

	if (!k)
		return NULL;
	if (n) {
		k->reqs = calloc(n, sizeof(*k->reqs));
		if (!k->reqs) {
			free(k);
			return NULL;
		}
		for (i = 0; i < n; i++) {
			k->reqs[i].magic = REQ_FREE;
			k->reqs[i].comm = k;
			k->reqs[i].next = i + 1 < n ? &k->reqs[i + 1] : NULL;
		}
		k->free = &k->reqs[0];
		dvx_msg_comm_info(mc, &k->shared, &k->nqps, &k->id);
	}
	k->magic = COMM_MAGIC;
	k->kind = (uint8_t)kind;
	k->nic = (uint16_t)nic;
	k->ctx = c;
	k->mc = mc;
	k->next = c->comms;
	c->comms = k;
	return k;
}

/*
 * The handle (128 bytes, handle.h): 0-95 the messaging layer's (the listener's address,
 * context, listen comm, cookie); 96-103 the connecting side's stage (a connect in
 * progress: magic, slot, generation); 104-107 "DVXN", 108 the version, 109 the
 * listener's device, 110-111 zero; 112-127 the listener's NIC (struct dvxn_sw_id). With
 * the wire on demand (DVX_NET_WIRE=ondemand) the handshake listens on TCP, which leaves
 * bytes 48-95 of the messaging layer's part unused, and 48-59 carry the listener's wire
 * address (dvxn_sw_at_put()).
 */
int dvxn_listen(void *ctx, int dev, void *handle, void **listen_comm)
{
	struct dvxn_ctx *c = ctx_of(ctx, "listen");
	struct dvx_msg_handle h;
	struct dvx_msg_comm *mc;
	struct dvxn_handle d;
	struct dvxn_comm *k;
	int rc;

	if (!c)
		return DVX_NCCL_INTERNAL_ERROR;
	if (!handle || !listen_comm || dev < 0 || (unsigned)dev >= c->nnics) {
		WARN("listen: bad arguments (device %d of %u)", dev, c->nnics);
		return DVX_NCCL_INTERNAL_ERROR;
	}
	pthread_mutex_lock(&c->lock);
	rc = dvx_msg_listen(&c->m, (uint32_t)dev, &h, &mc);
	if (rc) {
		pthread_mutex_unlock(&c->lock);
		WARN("listen on %s: %s", conf.names[dev], err_name(rc));
		return code_of(rc);
	}
	k = comm_new(c, K_LISTEN, (unsigned)dev, mc);
	if (!k) {
		dvx_msg_close(mc);
		pthread_mutex_unlock(&c->lock);
		WARN("listen on %s: no memory", conf.names[dev]);
		return DVX_NCCL_SYSTEM_ERROR;
	}
	pthread_mutex_unlock(&c->lock);
	memset(&d, 0, sizeof(d));
	memcpy(d.msg, h.wire, sizeof(d.msg));
	d.dev = (uint8_t)dev;
	if (!conf.hw) {
		d.sw = 1;
		dvxn_sw_ident((unsigned)dev, &d.id);
		memcpy(d.at, d.msg + DVXN_HANDLE_AT, sizeof(d.at));
		dvxn_sw_at_put(d.at);
	}
	dvxn_handle_put(handle, &d);
	*listen_comm = k;
	return DVX_NCCL_OK;
}

int dvxn_connect(void *ctx, int dev, void *handle, void **send_comm)
{
	struct dvxn_ctx *c = ctx_of(ctx, "connect");
	uint8_t *in = handle;
	struct dvxn_pend *p = NULL;
	struct dvx_msg_comm *mc = NULL;
	struct dvxn_comm *k;
	unsigned slot;
	uint32_t gen;
	char why[256];
	int rc;

	if (!c)
		return DVX_NCCL_INTERNAL_ERROR;
	if (!handle || !send_comm || dev < 0 || (unsigned)dev >= c->nnics) {
		WARN("connect: bad arguments (device %d of %u)", dev, c->nnics);
		return DVX_NCCL_INTERNAL_ERROR;
	}
	*send_comm = NULL;
	pthread_mutex_lock(&c->lock);
	if (dvxn_handle_stage_get(in, &slot, &gen) && c->pend[slot].live &&
	    c->pend[slot].gen == gen)
		p = &c->pend[slot];
	if (!p) {
		struct dvxn_handle d;

		rc = dvxn_handle_get(&d, in, !conf.hw, why, sizeof(why));
		if (!rc && !conf.hw) {
			rc = dvxn_sw_reach(&d.id, d.at, why, sizeof(why));
			if (rc == -EAGAIN) {
				pthread_mutex_unlock(&c->lock);
				return DVX_NCCL_OK;	/* another thread joins that process: later */
			}
		}
		if (rc) {
			c->handles_refused++;
			pthread_mutex_unlock(&c->lock);
			WARN("connect from %s: %s", conf.names[dev], why);
			return dvxn_handle_code(rc);
		}
		for (slot = 0; slot < MAX_PEND && c->pend[slot].live; slot++)
			;
		if (slot == MAX_PEND) {
			pthread_mutex_unlock(&c->lock);
			return DVX_NCCL_OK;	/* every slot is a connect in progress: later */
		}
		p = &c->pend[slot];
		p->live = 1;
		p->gen = ++c->gen;
		memset(&p->h, 0, sizeof(p->h));
		memcpy(p->h.wire, in, sizeof(p->h.wire));
		dvxn_handle_stage_put(in, slot, p->gen);
	}
	rc = dvx_msg_connect(&c->m, (uint32_t)dev, conf.nqps, &p->h, &mc);
	if (rc || mc) {
		p->live = 0;
		dvxn_handle_stage_clear(in);
	}
	if (rc) {
		pthread_mutex_unlock(&c->lock);
		WARN("connect from %s to listener's device %u: %s", conf.names[dev], in[109],
		     err_name(rc));
		return code_of(rc);
	}
	if (mc) {
		k = comm_new(c, K_SEND, (unsigned)dev, mc);
		if (!k) {
			dvx_msg_close(mc);
			pthread_mutex_unlock(&c->lock);
			WARN("connect from %s: no memory", conf.names[dev]);
			return DVX_NCCL_SYSTEM_ERROR;
		}
		c->connects++;
		*send_comm = k;
	}
	pthread_mutex_unlock(&c->lock);
	return DVX_NCCL_OK;
}

int dvxn_accept(void *listen_comm, void **recv_comm)
{
	struct dvxn_comm *l = comm_of(listen_comm, K_LISTEN, "accept"), *k;
	struct dvx_msg_comm *mc = NULL;
	struct dvxn_ctx *c;
	int rc;

	if (!l || !recv_comm)
		return DVX_NCCL_INTERNAL_ERROR;
	c = l->ctx;
	*recv_comm = NULL;
	pthread_mutex_lock(&c->lock);
	rc = dvx_msg_accept(l->mc, &mc);
	if (rc) {
		pthread_mutex_unlock(&c->lock);
		WARN("accept on %s: %s", conf.names[l->nic], err_name(rc));
		return code_of(rc);
	}
	if (mc) {
		k = comm_new(c, K_RECV, l->nic, mc);
		if (!k) {
			dvx_msg_close(mc);
			pthread_mutex_unlock(&c->lock);
			WARN("accept on %s: no memory", conf.names[l->nic]);
			return DVX_NCCL_SYSTEM_ERROR;
		}
		c->accepts++;
		*recv_comm = k;
	}
	pthread_mutex_unlock(&c->lock);
	return DVX_NCCL_OK;
}

/* the counters of a comm's QPs, kept for the telemetry (a shared QP's are all its
 * comms' together; a QP gone already stays zero) */
static void qp_snap(struct dvxn_comm *k)
{
	uint32_t i;

	for (i = 0; k->mc && i < k->nqps && i < DVX_MSG_MAX_QPS; i++)
		if (dvx_msg_comm_qp_stats(k->mc, i, &k->qps[i]))
			memset(&k->qps[i], 0, sizeof(k->qps[i]));
}

static int close_comm(void *comm, int kind, const char *call)
{
	struct dvxn_comm *k = comm_of(comm, kind, call);
	struct dvxn_ctx *c;
	int rc;

	if (!k)
		return DVX_NCCL_INTERNAL_ERROR;
	c = k->ctx;
	pthread_mutex_lock(&c->lock);
	qp_snap(k);
	rc = dvx_msg_close(k->mc);
	k->closed = 1;		/* kept for the telemetry until the instance goes */
	k->mc = NULL;
	free(k->reqs);
	k->reqs = NULL;
	k->free = NULL;
	pthread_mutex_unlock(&c->lock);
	if (rc) {
		WARN("%s on %s: %s", call, conf.names[k->nic], err_name(rc));
		return code_of(rc);
	}
	return DVX_NCCL_OK;
}

int dvxn_close_send(void *comm)
{
	return close_comm(comm, K_SEND, "closeSend");
}

int dvxn_close_recv(void *comm)
{
	return close_comm(comm, K_RECV, "closeRecv");
}

int dvxn_close_listen(void *comm)
{
	return close_comm(comm, K_LISTEN, "closeListen");
}

/* ------------------------------------------------------------------------------
 * Memory
 */
/* a GPU buffer on a software NIC: its software dma-buf, from the 4 KiB page it starts
 * in (an MR over a dma-buf keeps the address's offset in the page, ibv_reg_mr.3) */
static int gdr_cfg(const struct dvxn_comm *k, void *data, size_t size, struct dvx_mr_cfg *a,
		   int *fd)
{
	uintptr_t base = (uintptr_t)data & ~(uintptr_t)4095;
	char why[200];
	int rc;

	rc = dvxn_gdr_export((void *)base, size + ((uintptr_t)data - base), fd, why, sizeof(why));
	if (rc) {
		WARN("regMr on %s of %zu bytes of GPU memory at %p: %s", conf.names[k->nic], size,
		     data, why);
		return rc;
	}
	a->flags = DVX_MR_F_DMABUF;
	a->dmabuf_fd = *fd;
	a->dmabuf_offset = (uintptr_t)data - base;
	return 0;
}

int dvxn_reg_mr(void *comm, void *data, size_t size, int type, void **mhandle)
{
	struct dvxn_comm *k = comm_of(comm, 0, "regMr");
	struct dvx_mr_cfg a;
	struct dvxn_mr *r;
	int rc, fd = -1;

	if (!k || !mhandle)
		return DVX_NCCL_INTERNAL_ERROR;
	if (k->kind == K_LISTEN) {
		WARN("regMr: %p is a listen comm", comm);
		return DVX_NCCL_INTERNAL_ERROR;
	}
	if (type != DVX_NCCL_PTR_HOST &&
	    (type != DVX_NCCL_PTR_CUDA || conf.hw || conf.gdr == DVXN_GDR_OFF)) {
		WARN("regMr on %s: memory of type %d; this plugin reports %s", conf.names[k->nic],
		     type, conf.hw || conf.gdr == DVXN_GDR_OFF ? "host memory only" :
		     "host and CUDA memory");
		return DVX_NCCL_INTERNAL_ERROR;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		WARN("regMr on %s: no memory", conf.names[k->nic]);
		return DVX_NCCL_SYSTEM_ERROR;
	}
	memset(&a, 0, sizeof(a));
	a.addr = data;
	a.len = size;
	if (type == DVX_NCCL_PTR_CUDA && (rc = gdr_cfg(k, data, size, &a, &fd))) {
		free(r);
		return rc == -EINVAL || rc == -ENOENT ? DVX_NCCL_INVALID_USAGE :
							 DVX_NCCL_SYSTEM_ERROR;
	}
	pthread_mutex_lock(&k->ctx->lock);
	rc = dvx_msg_reg_mr(&k->ctx->m, k->nic, &a, &r->mr);
	if (!rc)
		k->ctx->mrs++;
	pthread_mutex_unlock(&k->ctx->lock);
	if (rc) {
		if (fd >= 0)
			dvxn_gdr_release(fd);
		free(r);
		WARN("regMr on %s of %zu bytes at %p: %s", conf.names[k->nic], size, data,
		     err_name(rc));
		return code_of(rc);
	}
	r->magic = MR_MAGIC;
	r->nic = k->nic;
	r->fd = fd;
	r->ctx = k->ctx;
	*mhandle = r;
	return DVX_NCCL_OK;
}

int dvxn_reg_mr_dmabuf(void *comm, void *data, size_t size, int type, uint64_t offset, int fd,
		       void **mhandle)
{
	/* ptrSupport never offers NCCL_PTR_DMABUF: a software NIC cannot take a real
	 * dma-buf, it makes its own over the driver's copies (regMr) */
	if (type == DVX_NCCL_PTR_HOST ||
	    (type == DVX_NCCL_PTR_CUDA && !conf.hw && conf.gdr != DVXN_GDR_OFF))
		return dvxn_reg_mr(comm, data, size, type, mhandle);
	WARN("regMrDmaBuf: dma-buf registration is not offered (ptrSupport has no "
	     "NCCL_PTR_DMABUF)");
	return DVX_NCCL_INTERNAL_ERROR;
}

int dvxn_dereg_mr(void *comm, void *mhandle)
{
	struct dvxn_mr *r = mhandle;
	struct dvxn_ctx *c;
	int rc;

	if (!r || r->magic != MR_MAGIC) {
		WARN("deregMr: %p is not a registration of this plugin", mhandle);
		return DVX_NCCL_INTERNAL_ERROR;
	}
	c = r->ctx;
	pthread_mutex_lock(&c->lock);
	rc = dvx_msg_dereg_mr(&c->m, &r->mr);
	pthread_mutex_unlock(&c->lock);
	if (!rc && r->fd >= 0)
		rc = dvxn_gdr_release(r->fd);	/* the MR is gone: its dma-buf may go */
	r->magic = 0;
	free(r);
	if (rc) {
		WARN("deregMr: %s", err_name(rc));
		return code_of(rc);
	}
	return DVX_NCCL_OK;
}

int dvxn_get_device_mr(void *comm, void *mhandle, void **dev_mhandle)
{
	/* host devices have no device handles: NCCL does not ask */
	if (dev_mhandle)
		*dev_mhandle = NULL;
	return DVX_NCCL_OK;
}

static struct dvx_mr *mr_of(void *mhandle, const struct dvxn_comm *k, const char *call)
{
	struct dvxn_mr *r = mhandle;

	if (!r || r->magic != MR_MAGIC || r->ctx != k->ctx || r->nic != k->nic) {
		WARN("%s on %s: %p is not a registration of this comm's instance and NIC", call,
		     conf.names[k->nic], mhandle);
		return NULL;
	}
	return &r->mr;
}

/* ------------------------------------------------------------------------------
 * Data
 */
/* the host's monotonic clock, read only for DVX_NET_STATS */
static uint64_t stats_ns(void)
{
	return conf.stats ? dvx_hal_now_ns(dvx_hal_host()) : 0;
}

/* a post refused (no request, no clear-to-send, no credit): the time held starts */
static void post_refused(struct dvxn_comm *k)
{
	k->waits++;
	if (conf.stats && !k->refused_at)
		k->refused_at = stats_ns();
}

/* a post accepted: the time it was held ends, its flight begins */
static void post_taken(struct dvxn_comm *k, struct dvxn_req *r)
{
	k->posted++;
	r->t_post = stats_ns();
	if (k->refused_at) {
		k->held++;
		k->held_ns += r->t_post - k->refused_at;
		k->refused_at = 0;
	}
}

static struct dvxn_req *req_get(struct dvxn_comm *k)
{
	struct dvxn_req *r = k->free;

	if (r) {
		k->free = r->next;
		r->next = NULL;
		r->magic = REQ_LIVE;
	}
	return r;
}

static void req_put(struct dvxn_req *r)
{
	r->magic = REQ_FREE;
	r->q = NULL;
	r->next = r->comm->free;
	r->comm->free = r;
}

int dvxn_bad_size(const char *call, int size)
{
	WARN("%s: size %d", call, size);
	return DVX_NCCL_INTERNAL_ERROR;
}

int dvxn_isend(void *send_comm, void *data, size_t size, int tag, void *mhandle, void **request)
{
	struct dvxn_comm *k = comm_of(send_comm, K_SEND, "isend");
	struct dvx_msg_req *q = NULL;
	struct dvx_mr *mr;
	struct dvxn_req *r;
	int rc;

	if (!k || !request)
		return DVX_NCCL_INTERNAL_ERROR;
	*request = NULL;
	mr = mr_of(mhandle, k, "isend");
	if (!mr)
		return DVX_NCCL_INTERNAL_ERROR;
	pthread_mutex_lock(&k->ctx->lock);
	r = req_get(k);
	if (!r) {
		post_refused(k);
		pthread_mutex_unlock(&k->ctx->lock);
		return DVX_NCCL_OK;
	}
	rc = dvx_msg_isend(k->mc, data, size, (uint32_t)tag, mr, &q);
	if (rc || !q) {
		req_put(r);
		if (!rc) {
			/* a caller that only retries this call must still move the NICs */
			dvx_msg_progress(&k->ctx->m);
			post_refused(k);
		}
		else
			k->errors++;
		pthread_mutex_unlock(&k->ctx->lock);
		if (rc) {
			WARN("isend of %zu bytes, tag %d, comm %u on %s: %s%s", size, tag, k->id,
			     conf.names[k->nic], err_name(rc),
			     rc == -EMSGSIZE ? " (larger than the receive posted for it)" : "");
			return code_of(rc);
		}
		return DVX_NCCL_OK;
	}
	r->kind = R_SEND;
	r->n = 1;
	r->q = q;
	r->bytes = size;
	post_taken(k, r);
	pthread_mutex_unlock(&k->ctx->lock);
	*request = r;
	return DVX_NCCL_OK;
}

int dvxn_irecv(void *recv_comm, int n, void **data, const size_t *sizes, const int *tags,
	       void **mhandles, void **request)
{
	struct dvxn_comm *k = comm_of(recv_comm, K_RECV, "irecv");
	struct dvx_mr *mrs[DVX_MSG_MAX_RECVS];
	uint32_t utags[DVX_MSG_MAX_RECVS];
	struct dvx_msg_req *q = NULL;
	struct dvxn_req *r;
	uint64_t total = 0;
	int i, rc;

	if (!k || !request)
		return DVX_NCCL_INTERNAL_ERROR;
	/* *request may hold NCCL's optional-completion mark (0x1) or a stale pointer:
	 * always written */
	*request = NULL;
	if (n < 1 || n > DVX_MSG_MAX_RECVS || !data || !sizes || !tags || !mhandles) {
		WARN("irecv on comm %u (%s): %d buffers (1..%d)", k->id, conf.names[k->nic], n,
		     DVX_MSG_MAX_RECVS);
		return DVX_NCCL_INTERNAL_ERROR;
	}
	for (i = 0; i < n; i++) {
		mrs[i] = mr_of(mhandles[i], k, "irecv");
		if (!mrs[i])
			return DVX_NCCL_INTERNAL_ERROR;
		utags[i] = (uint32_t)tags[i];
		total += sizes[i];
	}
	pthread_mutex_lock(&k->ctx->lock);
	r = req_get(k);
	if (!r) {
		post_refused(k);
		pthread_mutex_unlock(&k->ctx->lock);
		return DVX_NCCL_OK;
	}
	rc = dvx_msg_irecv(k->mc, n, data, sizes, utags, mrs, &q);
	if (rc || !q) {
		req_put(r);
		if (rc) {
			k->errors++;
		} else {
			dvx_msg_progress(&k->ctx->m);
			post_refused(k);
		}
		pthread_mutex_unlock(&k->ctx->lock);
		if (rc) {
			WARN("irecv of %d buffers (%" PRIu64 " bytes), comm %u on %s: %s", n, total,
			     k->id, conf.names[k->nic], err_name(rc));
			return code_of(rc);
		}
		return DVX_NCCL_OK;
	}
	r->kind = R_RECV;
	r->n = (uint8_t)n;
	r->q = q;
	r->bytes = 0;
	post_taken(k, r);
	pthread_mutex_unlock(&k->ctx->lock);
	*request = r;
	return DVX_NCCL_OK;
}

int dvxn_iflush(void *recv_comm, int n, void **data, int *sizes, void **mhandles, void **request)
{
	struct dvxn_comm *k = comm_of(recv_comm, K_RECV, "iflush");

	if (!k || !request)
		return DVX_NCCL_INTERNAL_ERROR;
	/* host memory: what the NIC wrote is visible once the receive completed. GPU
	 * memory on a software NIC: the NIC placed it with the driver's copies, which
	 * returned before the completion was written. Nothing to flush either way; NCCL
	 * takes a NULL request as done */
	*request = NULL;
	return DVX_NCCL_OK;
}

int dvxn_test(void *request, int *done, int *sizes)
{
	struct dvxn_req *r = request;
	size_t sz[DVX_MSG_MAX_RECVS];
	struct dvxn_comm *k;
	int d = 0, rc, i, n, kind;

	if (!r || r->magic != REQ_LIVE || !done) {
		WARN("test: %p is not a request in flight", request);
		return DVX_NCCL_INTERNAL_ERROR;
	}
	k = r->comm;
	pthread_mutex_lock(&k->ctx->lock);
	if (r->magic != REQ_LIVE) {
		pthread_mutex_unlock(&k->ctx->lock);
		WARN("test: %p is not a request in flight", request);
		return DVX_NCCL_INTERNAL_ERROR;
	}
	memset(sz, 0, sizeof(sz));
	rc = dvx_msg_test(r->q, &d, sz);
	if (rc && !d) {
		pthread_mutex_unlock(&k->ctx->lock);
		WARN("test on comm %u (%s): %s%s", k->id, conf.names[k->nic], err_name(rc),
		     rc == -EINVAL ? " (the messaging layer does not know the request)" : "");
		return code_of(rc);
	}
	*done = d;
	if (!d) {
		pthread_mutex_unlock(&k->ctx->lock);
		return DVX_NCCL_OK;
	}
	n = r->n;
	kind = r->kind;
	if (conf.stats) {
		uint64_t t = stats_ns() - r->t_post;
		unsigned b = 0;

		k->flight_ns += t;
		if (t > k->flight_max)
			k->flight_max = t;
		while (b + 1 < FLIGHT_BINS && t >= (1000ull << b))
			b++;
		k->flights[b]++;
	}
	if (!rc) {
		k->completed++;
		if (kind == R_SEND)
			k->bytes += r->bytes;
		else
			for (i = 0; i < n; i++)
				k->bytes += sz[i];
	} else {
		k->errors++;
	}
	req_put(r);
	pthread_mutex_unlock(&k->ctx->lock);
	if (sizes)
		for (i = 0; i < n; i++)
			sizes[i] = sz[i] > INT_MAX ? INT_MAX : (int)sz[i];
	if (rc) {
		WARN("test of a %s on comm %u (%s): %s%s", kind == R_SEND ? "send" : "receive",
		     k->id, conf.names[k->nic], err_name(rc),
		     rc == -EMSGSIZE ? " (a message larger than the receive posted for it)" : "");
		return code_of(rc);
	}
	return DVX_NCCL_OK;
}

int dvxn_irecv_consumed(void *recv_comm, int n, void *request)
{
	/* the request was freed when test reported it done: nothing is held for it */
	if (!comm_of(recv_comm, K_RECV, "irecvConsumed"))
		return DVX_NCCL_INTERNAL_ERROR;
	return DVX_NCCL_OK;
}

/* ------------------------------------------------------------------------------
 * Telemetry: DVX_NET_STATS=FILE ("%p": the process id, "%c": the instance's serial;
 * otherwise each instance appends one JSON object as one line)
 */
static void stats_path(char *out, size_t len, const char *fmt, unsigned serial, int *append)
{
	size_t o = 0;
	const char *s;

	*append = 1;
	for (s = fmt; *s && o + 24 < len; s++) {
		if (s[0] == '%' && (s[1] == 'p' || s[1] == 'c')) {
			o += (size_t)snprintf(out + o, len - o, "%ld",
					      s[1] == 'p' ? (long)getpid() : (long)serial);
			*append = 0;
			s++;
		} else {
			out[o++] = *s;
		}
	}
	out[o] = 0;
}

static void stats_write(struct dvxn_ctx *c)
{
	static const char *const kinds[] = { "", "listen", "send", "recv" };
	struct dvx_msg_stats s;
	struct dvxn_comm *k;
	uint64_t copies, failed;
	struct dvx_sim_wire_stats ws;
	char path[512], *rec = NULL;
	size_t len = 0, o;
	int append, first = 1, fd;
	FILE *f;

	if (!conf.stats)
		return;
	stats_path(path, sizeof(path), conf.stats, c->serial, &append);
	/* the record is made in memory and written with one write(): instances and
	 * processes appending to one file do not mix their lines (O_APPEND puts each write
	 * whole at the end; a stdio stream writes a long record in pieces of its buffer's
	 * size, which other writers' records came between) */
	f = open_memstream(&rec, &len);
	if (!f) {
		WARN("DVX_NET_STATS=%s: no memory for the record", conf.stats);
		return;
	}
	dvx_msg_get_stats(&c->m, &s);
	fprintf(f, "{\"plugin\":\"dvx\",\"version\":%d,\"pid\":%ld,\"instance\":%u,"
		"\"comm_id\":\"0x%" PRIx64 "\",\"nics\":%u,\"groups\":%u,\"depth_mult\":%u,"
		"\"qps_per_conn\":%u,\"connects\":%" PRIu64 ",\"accepts\":%" PRIu64
		",\"regs\":%" PRIu64 ",\"handles_refused\":%" PRIu64 ",", c->version,
		(long)getpid(), c->serial, c->comm_id, c->nnics, c->cfg.groups,
		c->cfg.depth_mult ? c->cfg.depth_mult : 1, c->cfg.nqps, c->connects, c->accepts,
		c->mrs, c->handles_refused);
	fprintf(f, "\"ring_region\":%" PRIu64 ",\"state_bytes\":%" PRIu64 ",\"fifo_bytes\":%"
		PRIu64 ",", s.ring_region, c->state_len, c->fifo_len);
	fprintf(f, "\"msg\":{\"comms\":%u,\"closing\":%u,\"sets\":%u,\"shared_sets\":%u,\"qps\":%u,"
		"\"cqs\":%u,\"pool_entries\":%u,\"ring_bytes\":%" PRIu64 ",\"primaries\":%" PRIu64
		",\"secondaries\":%" PRIu64 ",\"privates\":%" PRIu64 ",\"fallbacks\":%" PRIu64
		",\"late\":%" PRIu64 ",\"refused\":%" PRIu64 ",\"qp_errors\":%" PRIu64 ",",
		s.comms, s.closing, s.sets, s.shared_sets, s.qps, s.cqs, s.pool_entries, s.ring_bytes,
		s.primaries, s.secondaries, s.privates, s.fallbacks, s.late, s.refused, s.qp_errors);
	fprintf(f, "\"cts_offload\":%u,\"offloads\":%" PRIu64 ",\"cts_fallbacks\":%" PRIu64
		",\"eager\":%" PRIu64 ",\"rts\":%" PRIu64 ",\"cts_waits\":%" PRIu64
		",\"credit_waits\":%" PRIu64 ",\"credits\":%" PRIu64 "},", conf.cts, s.offloads,
		s.cts_fallbacks, s.eager, s.rts, s.cts_waits, s.credit_waits, s.credits);
	dvxn_gdr_counts(&copies, &failed);
	fprintf(f, "\"gdr\":{\"mode\":\"%s\",\"gdr_copies\":%" PRIu64 ",\"gdr_failed\":%" PRIu64
		",\"engine\":\"%s\"},", conf.hw ? "no" : conf.gdr == DVXN_GDR_CUDA ? "cuda" :
		conf.gdr == DVXN_GDR_HOST ? "host" : conf.gdr == DVXN_GDR_HOSTPROC ? "hostproc" :
		"no", copies, failed,
		conf.gdr == DVXN_GDR_HOSTPROC ? "process" : conf.gdr != DVXN_GDR_CUDA ? "none" :
		conf.gdr_engine == DVXN_GDR_PROCESS ? "process" : "thread");
	if (!conf.hw && !dvxn_sw_wire_stats(&ws))
		fprintf(f, "\"wire\":{\"spins\":%u,\"rings\":%" PRIu64 ",\"frames_tx\":%" PRIu64
			",\"frames_rx\":%" PRIu64 ",\"bytes_tx\":%" PRIu64 ",\"retransmits\":%"
			PRIu64 ",\"dropped\":%" PRIu64 ",\"peers_down\":%" PRIu64
			",\"passes\":%" PRIu64 ",\"pass_ns\":%" PRIu64 ",\"helps\":%" PRIu64
			",\"help_busy\":%" PRIu64 ",\"polls\":%" PRIu64 ",\"peeks\":%" PRIu64
			",\"peek_hits\":%" PRIu64 ",\"kicks\":%" PRIu64 ",\"streamed\":%" PRIu64
			",\"stream_late\":%" PRIu64 ",\"sleeps\":%" PRIu64 ",\"slept_ns\":%" PRIu64
			",\"window_max\":%" PRIu64 "},", conf.spins, ws.rings,
			ws.frames_tx, ws.frames_rx, ws.bytes_tx, ws.retransmits, ws.dropped,
			ws.peers_down, ws.passes, ws.pass_ns, ws.helps, ws.help_busy, ws.polls,
			ws.peeks, ws.peek_hits, ws.kicks, ws.streamed, ws.stream_late, ws.sleeps,
			ws.slept_ns, ws.window_max);
	fprintf(f, "\"comms\":[");
	for (k = c->comms; k; k = k->next) {
		uint32_t q;

		if (k->kind == K_LISTEN)
			continue;
		if (!k->closed)
			qp_snap(k);
		fprintf(f, "%s{\"kind\":\"%s\",\"nic\":\"%s\",\"id\":%u,\"shared\":%d,\"qps\":%u,"
			"\"posted\":%" PRIu64 ",\"completed\":%" PRIu64 ",\"bytes\":%" PRIu64
			",\"waits\":%" PRIu64 ",\"errors\":%" PRIu64 ",\"closed\":%d,",
			first ? "" : ",", kinds[k->kind], conf.names[k->nic], k->id, k->shared, k->nqps,
			k->posted, k->completed, k->bytes, k->waits, k->errors, k->closed);
		fprintf(f, "\"held\":%" PRIu64 ",\"held_ns\":%" PRIu64 ",\"flight_ns\":%" PRIu64
			",\"flight_max_ns\":%" PRIu64 ",\"flight_us_log2\":[", k->held, k->held_ns,
			k->flight_ns, k->flight_max);
		for (q = 0; q < FLIGHT_BINS; q++)
			fprintf(f, "%s%" PRIu64, q ? "," : "", k->flights[q]);
		fprintf(f, "],\"qp\":[");
		for (q = 0; q < k->nqps && q < DVX_MSG_MAX_QPS; q++) {
			const struct dvx_msg_qp_stats *x = &k->qps[q];

			fprintf(f, "%s{\"qpn\":%u,\"shared\":%u,\"comms\":%u,\"sq_posted\":%" PRIu64
				",\"sq_done\":%" PRIu64 ",\"rq_posted\":%" PRIu64 ",\"rq_done\":%" PRIu64
				",\"cqes\":%" PRIu64 ",\"errors\":%" PRIu64 "}", q ? "," : "", x->qpn,
				x->shared, x->comms, x->sq_posted, x->sq_done, x->rq_posted, x->rq_done,
				x->cqes, x->errors);
		}
		fprintf(f, "]}");
		first = 0;
	}
	fprintf(f, "]}\n");
	if (fclose(f) || !rec) {
		WARN("DVX_NET_STATS=%s: no memory for the record", conf.stats);
		free(rec);
		return;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0644);
	if (fd < 0) {
		WARN("DVX_NET_STATS=%s: cannot write %s: %s", conf.stats, path, strerror(errno));
		free(rec);
		return;
	}
	for (o = 0; o < len;) {
		ssize_t n = write(fd, rec + o, len - o);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			WARN("DVX_NET_STATS=%s: writing %s: %s", conf.stats, path,
			     n < 0 ? strerror(errno) : "nothing written");
			break;
		}
		o += (size_t)n;
	}
	close(fd);
	free(rec);
}
