/* SPDX-License-Identifier: MIT */
/*
 * plugins/nccl/sw.h - the transport of the plugin's software NICs: where they live and
 * how a rank reaches a peer's (docs/nccl.md, "How ranks find each other").
 *
 * One fabric per process (hal/sim), shared by every plugin instance of the process:
 * ranks that are threads of one process reach each other inside it. Ranks that are
 * processes reach each other over the fabric's wire (docs/sim-wire.md): either a mesh
 * joined once, when the first instance comes up (DVX_NET_WIRE=unix:DIR or tcp:IP, a rank
 * and a size: every process of the job joins, through a socket bootstrap), or on demand
 * (DVX_NET_WIRE=ondemand): each process's wire listens, its address travels in the
 * listen handles, and a connect joins the listener's process the first time a handle
 * names it. Each listen handle carries the identity of its NIC (struct dvxn_sw_id) and,
 * on demand, the wire address; a connect first asks dvxn_sw_reach() to make that NIC
 * reachable (the check itself is handle.h's dvxn_sw_check()).
 */
#ifndef DVX_PLUGINS_NCCL_SW_H
#define DVX_PLUGINS_NCCL_SW_H

#include <stddef.h>
#include <stdint.h>

#include <dvx/hal.h>
#include <dvx/hal/sim.h>

#define DVXN_SW_MAX_NICS 4

/* how a process's software NICs reach other processes */
enum dvxn_sw_kind {
	DVXN_SW_LOCAL = 1,	/* no wire: only ranks of this process */
	DVXN_SW_MESH = 2,	/* the wire joined as a mesh at start-up (DVX_NET_WIRE) */
	DVXN_SW_ONDEMAND = 3,	/* the wire admits peers as handles name them
				 * (DVX_NET_WIRE=ondemand[:tcp:A.B.C.D]) */
};

/* what a handle says about its NIC: 16 bytes, little-endian in the handle */
struct dvxn_sw_id {
	uint8_t kind;		/* enum dvxn_sw_kind of the listener's process */
	uint8_t rsvd;
	uint16_t nic;		/* the NIC's index in the job (sim_<nic>) */
	int32_t rank;		/* DVXN_SW_MESH: the listener's rank on the wire */
	uint64_t fabric;	/* the listener's fabric: random per process */
};

struct dvxn_sw_cfg {
	unsigned nnics;		/* software NICs of this process (1..4) */
	const char *wire;	/* NULL: DVXN_SW_LOCAL; "unix:DIR" or "tcp:A.B.C.D" */
	const char *rendezvous;	/* the bootstrap's address; NULL: from @wire */
	int rank, nranks;	/* the process on the wire */
	uint32_t max_msg;	/* the wire's largest frame */
	uint64_t timeout_ns;	/* bound on joining the wire */
	uint64_t retry_ns;	/* the wire's least transport time-out (0: its default) */
	int thread;		/* run the fabric's progress thread */
	uint32_t spins;		/* its passes without work before it sleeps (0: the
				 * fabric's default) */
	uint32_t max_qps;	/* QPs (and CQs) per software NIC: every pass of the model
				 * walks them, so no more than needed */
	uint32_t max_dmabufs;	/* software dma-bufs (GPU buffers, gdr.h); 0: the default */
	uint64_t ring_bytes;	/* one host (ondemand, unix:DIR): each direction of the
				 * shared-memory ring to a peer; 0: none (the sockets) */
	uint32_t stream_bytes;	/* cut-through on the ring from this frame size
				 * (struct dvx_sim_wire_cfg.stream_bytes) */
};

/* bring the process's fabric up (the first call) or take a reference: 0 or a negative
 * errno with @why saying what failed */
int dvxn_sw_up(const struct dvxn_sw_cfg *cfg, char *why, size_t len);
/* drop a reference; the last one takes the fabric (and its wire) down */
void dvxn_sw_down(void);
/* the hal the NICs open through, the fabric, and their number and configurations */
const struct dvx_hal *dvxn_sw_hal(void);
struct dvx_sim_fabric *dvxn_sw_fabric(void);
unsigned dvxn_sw_nnics(void);
int dvxn_sw_nic_cfg(unsigned i, struct dvx_sim_nic_cfg *cfg);
/* the largest message one WQE may carry on this transport */
uint64_t dvxn_sw_max_msg(void);
/* the identity of local NIC @i, for a listen handle */
void dvxn_sw_ident(unsigned i, struct dvxn_sw_id *id);
/* the listener's wire address in a handle (DVXN_SW_ONDEMAND only; else @out untouched);
 * the handle's encoders and decoders are handle.h's */
#define DVXN_SW_AT_BYTES 12
void dvxn_sw_at_put(uint8_t out[DVXN_SW_AT_BYTES]);
/* make the NIC a peer's handle names reachable from this process, joining the
 * listener's process at @at on demand: 0, or -EINVAL (not a NIC this job can have, a
 * bad address), -EHOSTUNREACH (another process with no wire between, or the join
 * failed), -EAGAIN (another thread joins it now: call again), with @why saying which */
int dvxn_sw_reach(const struct dvxn_sw_id *id, const uint8_t at[DVXN_SW_AT_BYTES], char *why,
		  size_t len);
/* the wire's address family the messaging layer's handshake should listen on: 0 for
 * its default (TCP on 127.0.0.1), or an IPv4 address for a TCP wire */
int dvxn_sw_listen_addr(struct dvx_hal_sock_addr *a);
/* the process's wire counters (the telemetry's "wire"): 0, or -ENOENT (no wire) */
int dvxn_sw_wire_stats(struct dvx_sim_wire_stats *st);

#endif /* DVX_PLUGINS_NCCL_SW_H */
