/* SPDX-License-Identifier: MIT */
/*
 * dvx/p2p/dev.h - the device handle of a P2P transport (dvx/p2p/p2p.h): what kernels
 * need to post the transport's operations on its lanes from GPU threads
 * (dvx/p2p/dev.cuh). Shared by host C and CUDA; fixed-width, versioned, size-asserted.
 * The host calls that make it are in dvx/p2p/gpu.h.
 *
 * A lane's queues are the lane queues of dvx/p2p/queue.h: the same description and the
 * same state the host engine uses, with device addresses in the descriptions and the
 * states copied into GPU memory while kernels drive the lanes.
 */
#ifndef DVX_P2P_DEV_H
#define DVX_P2P_DEV_H

#include <dvx/p2p/p2p.h>

DVX_BEGIN_DECLS

#define DVX_P2P_DEV_VERSION 4u	/* 4: the recovery gate in the queue states */

/* struct dvx_p2p_dev.flags */
#define DVX_P2P_DEV_ALL_PEERS 1u	/* lanes to every other rank, by skip-self index */

/**
 * struct dvx_p2p_dev_lane - a lane as kernels see it.
 * @main:	the main QP's queue (device addresses; its state in GPU memory)
 * @comp:	the companion's queue (@has_comp)
 * @nic:	index of the lane's NIC
 * @peer:	rank of the peer
 * @index:	lane index within the peer
 * @sink_lkey:	lkey of the NIC's iova-0 sink
 * @has_comp:	1 when the lane has a companion (counters work)
 * @rsvd:	zero
 */
struct dvx_p2p_dev_lane {
	struct dvx_p2p_qdesc main;
	struct dvx_p2p_qdesc comp;
	uint32_t nic;
	uint32_t peer;
	uint32_t index;
	uint32_t sink_lkey;
	uint32_t has_comp;
	uint32_t rsvd[11];
};

/**
 * struct dvx_p2p_dev - the transport as a kernel parameter (by value).
 * @version:	DVX_P2P_DEV_VERSION: a kernel compiled against other headers refuses it
 * @rank, @nranks: this rank and the group size
 * @nlanes:	lanes per peer
 * @companions:	1 when the lanes have companions
 * @flags:	DVX_P2P_DEV_ALL_PEERS when the transport has lanes to every other rank
 * @lanes:	device address of @npeers * @nlanes struct dvx_p2p_dev_lane, by lane
 *		peer index, then lane (the host's order)
 * @peer_idx:	device address of int32_t[@nranks]: rank -> lane peer index (-1: no
 *		lanes); read only without DVX_P2P_DEV_ALL_PEERS
 * @npeers:	ranks with lanes
 * @rsvd:	zero
 *
 * The lane table is in GPU memory rather than in the parameter: a kernel parameter
 * block is limited to a few KiB and a transport may have hundreds of lanes.
 */
struct dvx_p2p_dev {
	uint32_t version;
	int32_t rank;
	int32_t nranks;
	uint32_t nlanes;
	uint32_t companions;
	uint32_t flags;
	uint64_t lanes;
	uint64_t peer_idx;
	uint32_t npeers;
	uint32_t rsvd0;
	uint64_t rsvd[2];
};

#define DVX_P2P_DEV_LANE_BYTES 320u
DVX_ASSERT_SIZE(struct dvx_p2p_dev_lane, DVX_P2P_DEV_LANE_BYTES);
DVX_ASSERT_SIZE(struct dvx_p2p_dev, 64);

/* GPU memory of the export: the lane table, the two queue states of every lane, then
 * the rank -> lane peer index map (64-byte aligned) */
#define DVX_P2P_DEV_MEM_BYTES(nlanes_total, nranks) \
	((uint64_t)(nlanes_total) * (DVX_P2P_DEV_LANE_BYTES + 2u * DVX_P2P_QSTATE_BYTES) + \
	 (((uint64_t)(nranks) * 4u + 63u) & ~(uint64_t)63u))

DVX_END_DECLS

#endif /* DVX_P2P_DEV_H */
