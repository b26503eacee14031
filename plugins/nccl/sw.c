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
} sw = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void say(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!why || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
}

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
			say(why, len, "DVX_NET_WIRE=%s: the folder's name is too long", cfg->wire);
			return -EINVAL;
		}
	} else {
		say(why, len, "DVX_NET_WIRE=%s needs DVX_NET_BOOTSTRAP=tcp:A.B.C.D:PORT", cfg->wire);
		return -EINVAL;
	}
	if (!strncmp(cfg->wire, "tcp:", 4)) {
		memset(&sw.listen, 0, sizeof(sw.listen));
		sw.listen.family = DVX_HAL_SOCK_IP4;
		if (inet_pton(AF_INET, cfg->wire + 4, sw.listen.ip) != 1) {
			say(why, len, "DVX_NET_WIRE=%s: not an IPv4 address", cfg->wire);
			return -EINVAL;
		}
	}
	blen = dvx_bootstrap_sock_mem_size(cfg->nranks, 64, 4096);
	bmem = blen ? calloc(1, blen) : NULL;
	wlen = dvx_bootstrap_wire_mem_size(cfg->nranks, (uint32_t)cfg->max_msg);
	sw.wire_mem = wlen ? calloc(1, wlen) : NULL;
	if (!bmem || !sw.wire_mem) {
		free(bmem);
		say(why, len, "no memory for the wire of %d ranks", cfg->nranks);
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
		say(why, len, "the wire's bootstrap at %s (rank %d of %d): %s", rv, cfg->rank,
		    cfg->nranks, strerror(-rc));
		return rc;
	}
	memset(&wa, 0, sizeof(wa));
	wa.fab = sw.fab;
	wa.addr = cfg->wire;
	wa.max_msg = (uint32_t)cfg->max_msg;
	wa.min_retry_ns = cfg->retry_ns;
	rc = dvx_bootstrap_wire_join(&bs, &wa, sw.wire_mem, wlen, cfg->timeout_ns);
	dvx_bootstrap_fini(&bs);
	free(bmem);
	if (rc)
		say(why, len, "joining the wire %s (rank %d of %d): %s", cfg->wire, cfg->rank,
		    cfg->nranks, strerror(-rc));
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
		say(why, len, "%u software NICs (1..%d)", cfg->nnics, DVXN_SW_MAX_NICS);
		return -EINVAL;
	}
	sw.kind = cfg->wire && cfg->wire[0] ? DVXN_SW_MESH : DVXN_SW_LOCAL;
	sw.nnics = cfg->nnics;
	sw.rank = sw.kind == DVXN_SW_MESH ? cfg->rank : 0;
	sw.nranks = sw.kind == DVXN_SW_MESH ? cfg->nranks : 1;
	if (sw.kind == DVXN_SW_MESH && (cfg->nranks < 1 || cfg->rank < 0 ||
					cfg->rank >= cfg->nranks ||
					cfg->nranks > DVX_SIM_WIRE_MAX_RANKS ||
					(uint64_t)cfg->nranks * cfg->nnics > 0xfff0)) {
		say(why, len, "DVX_NET_WIRE: rank %d of %d (set DVX_NET_RANK and DVX_NET_NRANKS)",
		    cfg->rank, cfg->nranks);
		return -EINVAL;
	}
	sw.first = (unsigned)sw.rank * sw.nnics;
	sw.fabric_id = fabric_id();
	sw.max_msg = sw.kind == DVXN_SW_MESH ? cfg->max_msg : (1ull << 30);
	memset(&sw.listen, 0, sizeof(sw.listen));
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
		say(why, len, "no memory for the software NICs' fabric (%zu bytes)", fsz);
		return -ENOMEM;
	}
	rc = dvx_sim_fabric_init(sw.fab_mem, fsz, &fc, &sw.fab);
	if (rc) {
		say(why, len, "the software NICs' fabric: %s", strerror(-rc));
		goto fail;
	}
	for (i = 0; i < sw.nnics; i++) {
		struct dvx_sim_nic_cfg nc;
		int log2 = 0;

		dvx_sim_nic_cfg_default(&nc, sw.first + i);
		while ((1ull << (log2 + 1)) <= sw.max_msg && log2 < 30)
			log2++;
		nc.log_max_msg = (uint8_t)log2;	/* what one WQE carries on this transport */
		rc = dvx_sim_add_nic(sw.fab, &nc);
		if (rc < 0) {
			say(why, len, "software NIC %u: %s", sw.first + i, strerror(-rc));
			goto fail;
		}
	}
	if (sw.kind == DVXN_SW_MESH) {
		rc = mesh_join(cfg, why, len);
		if (rc)
			goto fail;
	}
	sw.thread = cfg->thread;
	if (sw.thread) {
		rc = dvx_sim_start(sw.fab);
		if (rc) {
			sw.thread = 0;
			say(why, len, "the software NICs' progress thread: %s", strerror(-rc));
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

void dvxn_sw_id_put(uint8_t out[16], const struct dvxn_sw_id *id)
{
	unsigned i;

	out[0] = id->kind;
	out[1] = 0;
	out[2] = (uint8_t)id->nic;
	out[3] = (uint8_t)(id->nic >> 8);
	for (i = 0; i < 4; i++)
		out[4 + i] = (uint8_t)((uint32_t)id->rank >> (8 * i));
	for (i = 0; i < 8; i++)
		out[8 + i] = (uint8_t)(id->fabric >> (8 * i));
}

void dvxn_sw_id_get(struct dvxn_sw_id *id, const uint8_t in[16])
{
	uint32_t r = 0;
	unsigned i;

	memset(id, 0, sizeof(*id));
	id->kind = in[0];
	id->rsvd = in[1];
	id->nic = (uint16_t)(in[2] | in[3] << 8);
	for (i = 0; i < 4; i++)
		r |= (uint32_t)in[4 + i] << (8 * i);
	id->rank = (int32_t)r;
	for (i = 0; i < 8; i++)
		id->fabric |= (uint64_t)in[8 + i] << (8 * i);
}

int dvxn_sw_reach(const struct dvxn_sw_id *id, char *why, size_t len)
{
	if (!sw.fab)
		return -EINVAL;
	if (id->kind == DVXN_SW_ONDEMAND) {
		/*
		 * The seam for peers that join on demand: dial the listener's wire address
		 * (to be carried in the identity), let the wire check its hello and add the
		 * peer's NIC as a remote NIC, once per peer process. Not yet: the wire has
		 * no such call.
		 */
		say(why, len, "the listener's wire admits peers on demand, which this build "
			      "cannot join");
		return -ENOSYS;
	}
	if (id->kind != DVXN_SW_LOCAL && id->kind != DVXN_SW_MESH) {
		say(why, len, "the handle names a NIC of unknown kind %u", id->kind);
		return -EINVAL;
	}
	if (id->kind != sw.kind) {
		say(why, len, "the listener %s a wire and this process %s: set DVX_NET_WIRE alike on "
			      "every rank", id->kind == DVXN_SW_MESH ? "joined" : "has no",
		    sw.kind == DVXN_SW_MESH ? "joined one" : "has none");
		return -EHOSTUNREACH;
	}
	if (sw.kind == DVXN_SW_LOCAL) {
		if (id->fabric != sw.fabric_id || id->nic >= sw.nnics) {
			say(why, len, "the listener's software NIC sim_%u is in another process and "
				      "no wire joins them (DVX_NET_WIRE)", id->nic);
			return -EHOSTUNREACH;
		}
		return 0;
	}
	/* the mesh: every process of the job joined at start-up, each with sw.nnics NICs */
	if (id->rank < 0 || id->rank >= sw.nranks ||
	    id->nic != (unsigned)id->rank * sw.nnics + id->nic % sw.nnics) {
		say(why, len, "the handle names NIC sim_%u of rank %d, which the wire of %d ranks "
			      "does not have", id->nic, id->rank, sw.nranks);
		return -EINVAL;
	}
	if (id->rank == sw.rank && id->fabric != sw.fabric_id) {
		say(why, len, "the handle names rank %d, this process's rank, from another process",
		    id->rank);
		return -EINVAL;
	}
	return 0;
}

int dvxn_sw_listen_addr(struct dvx_hal_sock_addr *a)
{
	*a = sw.listen;
	return 0;
}
