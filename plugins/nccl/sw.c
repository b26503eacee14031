// SPDX-License-Identifier: MIT
/*
 * plugins/nccl/sw.c - the software NICs of the plugin and their transport: see sw.h.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <sys/random.h>

#include <dvx/bootstrap/bootstrap.h>
#include <dvx/bootstrap/wire.h>

#include "handle.h"
#include "say.h"
#include "sw.h"

static struct {
	pthread_mutex_t lock;
	int refs;
	enum dvxn_sw_kind kind;
	unsigned nnics;
	unsigned first;		/* index of this process's first NIC in the job */
	int rank, nranks;
	uint64_t fabric_id;
	uint64_t max_msg;
	int thread;
	void *fab_mem;
	struct dvx_sim_fabric *fab;
	void *wire_mem;
	struct dvx_hal_sock_addr listen;	/* TCP wire: where the handshakes listen */
	struct dvx_hal_sock_addr wire_at;	/* DVXN_SW_ONDEMAND: where the wire listens */
	uint64_t join_ns;			/* bound on one join */
} sw = { .lock = PTHREAD_MUTEX_INITIALIZER };

static uint64_t fabric_id(void)
{
	uint64_t v = 0;
	struct timespec ts;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t)sizeof(v)) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		v = ((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20);
	}
	return v ? v : 1;
}

/* the wire as a mesh: a socket bootstrap among the job's processes, then the join */
static int mesh_join(const struct dvxn_sw_cfg *cfg, char *why, size_t len)
{
	struct dvx_bootstrap_sock_cfg ba;
	struct dvx_bootstrap_wire_cfg wa;
	struct dvx_bootstrap bs;
	char rv[DVX_HAL_SOCK_PATH_MAX + 16];
	void *bmem;
	size_t blen, wlen;
	int rc;

	if (cfg->rendezvous && cfg->rendezvous[0]) {
		snprintf(rv, sizeof(rv), "%s", cfg->rendezvous);
	} else if (!strncmp(cfg->wire, "unix:", 5)) {
		if (snprintf(rv, sizeof(rv), "unix:%s/boot", cfg->wire + 5) >=
		    DVX_HAL_SOCK_PATH_MAX) {
			dvxn_say(why, len, "DVX_NET_WIRE=%s: the folder's name is too long", cfg->wire);
			return -EINVAL;
		}
	} else {
		dvxn_say(why, len, "DVX_NET_WIRE=%s needs DVX_NET_BOOTSTRAP=tcp:A.B.C.D:PORT", cfg->wire);
		return -EINVAL;
	}
	if (!strncmp(cfg->wire, "tcp:", 4)) {
		memset(&sw.listen, 0, sizeof(sw.listen));
		sw.listen.family = DVX_HAL_SOCK_IP4;
		if (inet_pton(AF_INET, cfg->wire + 4, sw.listen.ip) != 1) {
			dvxn_say(why, len, "DVX_NET_WIRE=%s: not an IPv4 address", cfg->wire);
			return -EINVAL;
		}
	}
	blen = dvx_bootstrap_sock_mem_size(cfg->nranks, 64, 4096);
	bmem = blen ? calloc(1, blen) : NULL;
	wlen = dvx_bootstrap_wire_mem_size(cfg->nranks, (uint32_t)cfg->max_msg);
	sw.wire_mem = wlen ? calloc(1, wlen) : NULL;
	if (!bmem || !sw.wire_mem) {
		free(bmem);
		dvxn_say(why, len, "no memory for the wire of %d ranks", cfg->nranks);
		return -ENOMEM;
	}
	memset(&ba, 0, sizeof(ba));
	ba.addr = rv;
	ba.rank = cfg->rank;
	ba.nranks = cfg->nranks;
	ba.max_unexpected = 64;
	ba.slot_bytes = 4096;
	ba.timeout_ns = cfg->timeout_ns;
	rc = dvx_bootstrap_sock_init(&bs, &ba, bmem, blen);
	if (rc) {
		free(bmem);
		dvxn_say(why, len, "the wire's bootstrap at %s (rank %d of %d): %s", rv, cfg->rank,
		    cfg->nranks, strerror(-rc));
		return rc;
	}
	memset(&wa, 0, sizeof(wa));
	wa.fab = sw.fab;
	wa.addr = cfg->wire;
	wa.max_msg = (uint32_t)cfg->max_msg;
	wa.min_retry_ns = cfg->retry_ns;
	wa.ring_bytes = cfg->ring_bytes ? cfg->ring_bytes : DVX_BOOTSTRAP_WIRE_NO_RING;
	wa.stream_bytes = cfg->stream_bytes;
	rc = dvx_bootstrap_wire_join(&bs, &wa, sw.wire_mem, wlen, cfg->timeout_ns);
	dvx_bootstrap_fini(&bs);
	free(bmem);
	if (rc)
		dvxn_say(why, len, "joining the wire %s (rank %d of %d): %s", cfg->wire, cfg->rank,
		    cfg->nranks, strerror(-rc));
	return rc;
}

/* the nic configuration process @rank's NIC @i was added with (every process the same) */
static void nic_cfg_of(unsigned index, struct dvx_sim_nic_cfg *nc)
{
	int log2 = 0;

	dvx_sim_nic_cfg_default(nc, index);
	while ((1ull << (log2 + 1)) <= sw.max_msg && log2 < 30)
		log2++;
	nc->log_max_msg = (uint8_t)log2;	/* what one WQE carries on this transport */
}

/*
 * The wire on demand: this process's end listens and knows every other rank's NICs
 * (their configurations follow from their indexes), but joins nobody: a connect joins
 * the listener's process at the address its handle carries (dvxn_sw_reach()). With
 * "ondemand" the processes are on one host: the wire listens on an abstract UNIX name
 * of this process (DVXN_SW_AT_NAME and its fabric identity) and every join brings a
 * shared-memory ring of cfg->ring_bytes a direction (none: 0), the frames going through
 * it rather than a socket (docs/sim-wire.md); the handshakes listen on TCP at 127.0.0.1.
 * With "ondemand:tcp:A.B.C.D" (across hosts) both listen on TCP at that address, any
 * port, and the frames go through the sockets.
 */
static int ondemand_up(const struct dvxn_sw_cfg *cfg, char *why, size_t len)
{
	struct dvx_sim_wire_cfg wc;
	struct dvx_hal_sock_addr bind, wbind;
	const char *ip = "127.0.0.1";
	size_t wlen;
	int r, rc, tcp = 0;
	unsigned i;

	if (!strncmp(cfg->wire + 8, ":tcp:", 5)) {
		ip = cfg->wire + 13;
		tcp = 1;
	} else if (cfg->wire[8]) {
		dvxn_say(why, len, "DVX_NET_WIRE=%s: ondemand or ondemand:tcp:A.B.C.D", cfg->wire);
		return -EINVAL;
	}
	memset(&bind, 0, sizeof(bind));
	bind.family = DVX_HAL_SOCK_IP4;
	if (inet_pton(AF_INET, ip, bind.ip) != 1) {
		dvxn_say(why, len, "DVX_NET_WIRE=%s: not an IPv4 address", cfg->wire);
		return -EINVAL;
	}
	sw.listen = bind;	/* the handshakes listen there too (their port: any) */
	wbind = bind;
	if (!tcp) {
		memset(&wbind, 0, sizeof(wbind));
		wbind.family = DVX_HAL_SOCK_ABSTRACT;
		snprintf(wbind.path, sizeof(wbind.path), DVXN_SW_AT_NAME "%016llx",
			 (unsigned long long)sw.fabric_id);
	}
	memset(&wc, 0, sizeof(wc));
	wc.rank = cfg->rank;
	wc.nranks = cfg->nranks;
	wc.max_msg = (uint32_t)cfg->max_msg;
	wc.max_remote_nics = (uint32_t)cfg->nranks * sw.nnics;
	wc.min_retry_ns = cfg->retry_ns;
	wc.ring_bytes = tcp ? 0 : cfg->ring_bytes;
	wc.stream_bytes = cfg->stream_bytes;
	wlen = dvx_sim_wire_mem_size(&wc);
	sw.wire_mem = wlen ? calloc(1, wlen) : NULL;
	if (!sw.wire_mem) {
		dvxn_say(why, len, "no memory for the wire of %d ranks", cfg->nranks);
		return -ENOMEM;
	}
	rc = dvx_sim_wire_init(sw.fab, &wc, sw.wire_mem, wlen);
	if (!rc)
		rc = dvx_sim_wire_listen(sw.fab, &wbind, &sw.wire_at);
	for (r = 0; !rc && r < cfg->nranks; r++) {
		for (i = 0; r != cfg->rank && !rc && i < sw.nnics; i++) {
			struct dvx_sim_nic_cfg nc;

			nic_cfg_of((unsigned)r * sw.nnics + i, &nc);
			rc = dvx_sim_wire_add_remote_nic(sw.fab, r, &nc);
		}
	}
	if (rc)
		dvxn_say(why, len, "the wire on demand at %s (rank %d of %d): %s",
		    tcp ? ip : wbind.path, cfg->rank, cfg->nranks, strerror(-rc));
	return rc;
}

static void teardown(void)
{
	if (sw.fab) {
		if (sw.thread)
			dvx_sim_stop(sw.fab);
		dvx_sim_fini(sw.fab);
	}
	free(sw.fab_mem);
	free(sw.wire_mem);
	sw.fab = NULL;
	sw.fab_mem = NULL;
	sw.wire_mem = NULL;
}

static int bring_up(const struct dvxn_sw_cfg *cfg, char *why, size_t len)
{
	struct dvx_sim_fabric_cfg fc;
	size_t fsz;
	unsigned i;
	int rc;

	if (cfg->nnics < 1 || cfg->nnics > DVXN_SW_MAX_NICS) {
		dvxn_say(why, len, "%u software NICs (1..%d)", cfg->nnics, DVXN_SW_MAX_NICS);
		return -EINVAL;
	}
	sw.kind = !cfg->wire || !cfg->wire[0] ? DVXN_SW_LOCAL :
		  !strncmp(cfg->wire, "ondemand", 8) ? DVXN_SW_ONDEMAND : DVXN_SW_MESH;
	sw.nnics = cfg->nnics;
	sw.rank = sw.kind != DVXN_SW_LOCAL ? cfg->rank : 0;
	sw.nranks = sw.kind != DVXN_SW_LOCAL ? cfg->nranks : 1;
	if (sw.kind != DVXN_SW_LOCAL && (cfg->nranks < 1 || cfg->rank < 0 ||
					cfg->rank >= cfg->nranks ||
					cfg->nranks > DVX_SIM_WIRE_MAX_RANKS ||
					(uint64_t)cfg->nranks * cfg->nnics > 0xfff0)) {
		dvxn_say(why, len, "DVX_NET_WIRE: rank %d of %d (set DVX_NET_RANK and DVX_NET_NRANKS)",
		    cfg->rank, cfg->nranks);
		return -EINVAL;
	}
	sw.first = (unsigned)sw.rank * sw.nnics;
	sw.fabric_id = fabric_id();
	sw.join_ns = cfg->timeout_ns;
	sw.max_msg = sw.kind != DVXN_SW_LOCAL ? cfg->max_msg : (1ull << 30);
	memset(&sw.listen, 0, sizeof(sw.listen));
	memset(&sw.wire_at, 0, sizeof(sw.wire_at));
	dvx_sim_fabric_cfg_default(&fc);
	fc.max_nics = sw.nnics;
	fc.max_qps = cfg->max_qps;
	fc.max_cqs = cfg->max_qps;
	fc.max_mrs = cfg->max_qps;
	fc.max_umems = 256;
	fc.max_uars = 256;
	fc.max_pds = 64;
	fc.max_gpus = 0;
	fc.max_gpu_mems = 0;
	if (cfg->max_dmabufs)
		fc.max_dmabufs = cfg->max_dmabufs;
	fsz = dvx_sim_fabric_mem_size(&fc);
	sw.fab_mem = fsz ? calloc(1, fsz) : NULL;
	if (!sw.fab_mem) {
		dvxn_say(why, len, "no memory for the software NICs' fabric (%zu bytes)", fsz);
		return -ENOMEM;
	}
	rc = dvx_sim_fabric_init(sw.fab_mem, fsz, &fc, &sw.fab);
	if (rc) {
		dvxn_say(why, len, "the software NICs' fabric: %s", strerror(-rc));
		goto fail;
	}
	for (i = 0; i < sw.nnics; i++) {
		struct dvx_sim_nic_cfg nc;

		nic_cfg_of(sw.first + i, &nc);
		rc = dvx_sim_add_nic(sw.fab, &nc);
		if (rc < 0) {
			dvxn_say(why, len, "software NIC %u: %s", sw.first + i, strerror(-rc));
			goto fail;
		}
	}
	if (sw.kind == DVXN_SW_MESH || sw.kind == DVXN_SW_ONDEMAND) {
		rc = sw.kind == DVXN_SW_MESH ? mesh_join(cfg, why, len) : ondemand_up(cfg, why, len);
		if (rc)
			goto fail;
	}
	sw.thread = cfg->thread;
	if (sw.thread) {
		if (cfg->spins)
			dvx_sim_set_idle(sw.fab, cfg->spins, 20000);
		rc = dvx_sim_start(sw.fab);
		if (rc) {
			sw.thread = 0;
			dvxn_say(why, len, "the software NICs' progress thread: %s", strerror(-rc));
			goto fail;
		}
	}
	return 0;
fail:
	teardown();
	return rc ? rc : -EINVAL;
}

int dvxn_sw_up(const struct dvxn_sw_cfg *cfg, char *why, size_t len)
{
	int rc = 0;

	pthread_mutex_lock(&sw.lock);
	if (!sw.refs)
		rc = bring_up(cfg, why, len);
	if (!rc)
		sw.refs++;
	pthread_mutex_unlock(&sw.lock);
	return rc;
}

void dvxn_sw_down(void)
{
	pthread_mutex_lock(&sw.lock);
	if (sw.refs > 0 && --sw.refs == 0)
		teardown();
	pthread_mutex_unlock(&sw.lock);
}

const struct dvx_hal *dvxn_sw_hal(void)
{
	return sw.fab ? dvx_sim_hal(sw.fab) : NULL;
}

struct dvx_sim_fabric *dvxn_sw_fabric(void)
{
	return sw.fab;
}

unsigned dvxn_sw_nnics(void)
{
	return sw.fab ? sw.nnics : 0;
}

int dvxn_sw_nic_cfg(unsigned i, struct dvx_sim_nic_cfg *cfg)
{
	if (!sw.fab || i >= sw.nnics)
		return -EINVAL;
	return dvx_sim_nic_cfg_get(sw.fab, i, cfg);
}

uint64_t dvxn_sw_max_msg(void)
{
	return sw.max_msg;
}

void dvxn_sw_ident(unsigned i, struct dvxn_sw_id *id)
{
	memset(id, 0, sizeof(*id));
	id->kind = (uint8_t)sw.kind;
	id->nic = (uint16_t)(sw.first + i);
	id->rank = sw.rank;
	id->fabric = sw.fabric_id;
}

/* the listener's wire address as the handle has it (handle.h; nothing written unless on
 * demand) */
void dvxn_sw_at_put(uint8_t out[DVXN_SW_AT_BYTES])
{
	if (sw.kind != DVXN_SW_ONDEMAND)
		return;
	dvxn_sw_at_encode(out, &sw.wire_at);
}

int dvxn_sw_reach(const struct dvxn_sw_id *id, const uint8_t at[DVXN_SW_AT_BYTES], char *why,
		  size_t len)
{
	struct dvxn_sw_self self;
	struct dvx_hal_sock_addr a;
	int rc;

	if (!sw.fab) {
		dvxn_say(why, len, "the process's software NICs are not up");
		return -EINVAL;
	}
	self.kind = sw.kind;
	self.rank = sw.rank;
	self.nranks = sw.nranks;
	self.nnics = sw.nnics;
	self.fabric = sw.fabric_id;
	rc = dvxn_sw_check(&self, id, at, &a, why, len);
	if (rc <= 0)
		return rc;
	/* on demand, another rank: joined already (by this process or the peer): at once;
	 * else one join */
	rc = dvx_sim_wire_connect_peer(sw.fab, id->rank, &a, sw.join_ns);
	if (rc == -EBUSY)
		return -EAGAIN;	/* another thread joins it: later */
	if (rc) {
		char s[DVX_SIM_WIRE_ADDR_MAX];

		if (dvx_sim_wire_addr_format(&a, s, sizeof(s)))
			snprintf(s, sizeof(s), "?");
		dvxn_say(why, len, "joining rank %d's wire at %s: %s", id->rank, s, strerror(-rc));
		return rc == -EINVAL || rc == -EPROTO ? -EINVAL : -EHOSTUNREACH;
	}
	return 0;
}

int dvxn_sw_wire_stats(struct dvx_sim_wire_stats *st)
{
	if (!sw.fab || sw.kind == DVXN_SW_LOCAL)
		return -ENOENT;
	return dvx_sim_wire_get_stats(sw.fab, st);
}

int dvxn_sw_listen_addr(struct dvx_hal_sock_addr *a)
{
	*a = sw.listen;
	return 0;
}
