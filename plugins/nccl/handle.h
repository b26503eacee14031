/* SPDX-License-Identifier: MIT */
/*
 * plugins/nccl/handle.h - the plugin's 128-byte listen handle (docs/nccl.md, "What NCCL
 * gets"): its encoder, its decoder and the check of the NIC it names, pure functions of
 * handle.c that need neither NCCL nor a fabric (tests/fuzz/lf/nccl_handle.c calls them).
 *
 *	0-95	the messaging layer's handle (struct dvx_msg_handle's wire; docs/msg.md)
 *	48-59	  inside it, with the wire on demand: the listener's wire address
 *		  (TCP, or an abstract UNIX name on one host: dvxn_sw_at_encode())
 *	96-103	the connecting side's stage: 96-97 0x4e43, 98-99 slot, 100-103 generation
 *	104-107	"DVXN"; 108 the version (1); 109 the listener's device; 110-111 zero
 *	112-127	software NICs: the listener's NIC (struct dvxn_sw_id); else zero
 *
 * Little-endian throughout.
 */
#ifndef DVX_PLUGINS_NCCL_HANDLE_H
#define DVX_PLUGINS_NCCL_HANDLE_H

#include <stddef.h>
#include <stdint.h>

#include "sw.h"

#define DVXN_HANDLE_BYTES 128
#define DVXN_HANDLE_MSG_BYTES 96
#define DVXN_HANDLE_MAGIC 0x4e585644u	/* "DVXN", bytes 104-107 */
#define DVXN_HANDLE_VERSION 1
#define DVXN_HANDLE_AT 48		/* the on-demand wire address */
#define DVXN_STAGE_MAGIC 0x4e43u	/* bytes 96-97: a connect in progress */
#define DVXN_MAX_PEND 256		/* connects in progress per instance */

/* what a listen handle says */
struct dvxn_handle {
	uint8_t msg[DVXN_HANDLE_MSG_BYTES];	/* the messaging layer's part, as it travels */
	uint8_t dev;				/* the listener's device */
	int sw;					/* software NICs: @id and @at are written */
	struct dvxn_sw_id id;			/* the listener's NIC */
	uint8_t at[DVXN_SW_AT_BYTES];		/* on demand: its wire address (in @msg) */
};

/* what this process's software NICs are, for the check of the NIC a handle names */
struct dvxn_sw_self {
	enum dvxn_sw_kind kind;
	int rank, nranks;	/* the process on the wire (LOCAL: 0 of 1) */
	unsigned nnics;		/* software NICs per process */
	uint64_t fabric;	/* this process's fabric identity */
};

/* write @h as a listen handle: the stage zero; @at only when @h->sw and @h->id.kind is
 * on demand (else bytes 48-59 are @msg's) */
void dvxn_handle_put(uint8_t out[DVXN_HANDLE_BYTES], const struct dvxn_handle *h);
/* read a listen handle (the stage is not read): 0, or -EINVAL with @why saying why it
 * is not one (magic, version, bytes 110-111); @sw: read bytes 112-127 and the wire
 * address too (software NICs). Reads @in only. */
int dvxn_handle_get(struct dvxn_handle *h, const uint8_t in[DVXN_HANDLE_BYTES], int sw,
		    char *why, size_t len);
/* the connect in progress the stage names: 1 with @slot (< DVXN_MAX_PEND) and @gen, or
 * 0 (no stage, or not one this plugin writes) */
int dvxn_handle_stage_get(const uint8_t in[DVXN_HANDLE_BYTES], unsigned *slot, uint32_t *gen);
void dvxn_handle_stage_put(uint8_t io[DVXN_HANDLE_BYTES], unsigned slot, uint32_t gen);
void dvxn_handle_stage_clear(uint8_t io[DVXN_HANDLE_BYTES]);

void dvxn_sw_id_put(uint8_t out[16], const struct dvxn_sw_id *id);
void dvxn_sw_id_get(struct dvxn_sw_id *id, const uint8_t in[16]);
/* the wire address as a handle has it: [0] family; IPv4 (4): [1] 0, [2-3] port, [4-7] 0,
 * [8-11] the address; abstract UNIX (1, one host): [1-3] 0, [4-11] a token, the name
 * being DVXN_SW_AT_NAME and the token in 16 hex digits (put: an abstract name of
 * another form writes family 0, which get refuses). get: 0, or -EINVAL (another
 * family, a byte that must be zero, port 0) */
#define DVXN_SW_AT_IP4 4
#define DVXN_SW_AT_ABSTRACT 1
#define DVXN_SW_AT_NAME "dvxn-wire-"
void dvxn_sw_at_encode(uint8_t out[DVXN_SW_AT_BYTES], const struct dvx_hal_sock_addr *a);
int dvxn_sw_at_decode(struct dvx_hal_sock_addr *a, const uint8_t at[DVXN_SW_AT_BYTES]);

/*
 * Whether the NIC @id names can be reached from the process @self describes: 0 (it
 * can, now), 1 (on demand, another rank: join its process at @join first), or, with
 * @why saying which, -EINVAL (not a NIC this job can have, an unknown kind, a bad
 * address, an abstract name whose token is not @id's fabric identity: the listener
 * names its wire after that) or -EHOSTUNREACH (another process with no wire between,
 * another kind of wire). Reads its arguments only.
 */
int dvxn_sw_check(const struct dvxn_sw_self *self, const struct dvxn_sw_id *id,
		  const uint8_t at[DVXN_SW_AT_BYTES], struct dvx_hal_sock_addr *join, char *why,
		  size_t len);

/* the NCCL result of a refused handle: -EINVAL the caller's (ncclInternalError), the
 * rest the system's (ncclSystemError) */
int dvxn_handle_code(int err);

#endif /* DVX_PLUGINS_NCCL_HANDLE_H */
