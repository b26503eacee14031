/* SPDX-License-Identifier: MIT */
/*
 * dvx/mp/dev.h - the multi-peer transport's device handle: one flat struct passed to
 * kernels by value. Per rank its kind and index, the NVL peers' buffer pointers (of
 * one exchanged buffer, when the export was given one), and the IB transport's lanes
 * (dvx/p2p/dev.h). Shared by host C and CUDA; fixed-width, versioned, size-asserted.
 */
#ifndef DVX_MP_DEV_H
#define DVX_MP_DEV_H

#include <dvx/p2p/dev.h>
#include <dvx/mp/topo.h>

DVX_BEGIN_DECLS

#define DVX_MP_DEV_VERSION 1u

/**
 * struct dvx_mp_dev_peer - one rank as kernels see it.
 * @kind:	enum dvx_mp_kind
 * @index:	NVL: its local rank in the domain; IB: its IB index; else -1
 * @nvl_ptr:	NVL: its exchanged buffer, mapped into this process (0 when the export
 *		was given no buffer); self: this rank's own buffer
 */
struct dvx_mp_dev_peer {
	uint32_t kind;
	int32_t index;
	uint64_t nvl_ptr;
};

/**
 * struct dvx_mp_dev - the handle.
 * @version:	DVX_MP_DEV_VERSION: a kernel built against other headers refuses it
 * @rank, @nranks: this rank and the group size
 * @nnvl:	ranks of this rank's NVL domain (itself included)
 * @nvl_me:	its local rank there
 * @nib:	IB peers
 * @has_ib:	1 when @ib holds exported lanes
 * @peers:	device address of struct dvx_mp_dev_peer[@nranks]
 * @ib:		the IB transport's lanes (dvx/p2p/dev.cuh)
 */
struct dvx_mp_dev {
	uint32_t version;
	int32_t rank;
	int32_t nranks;
	int32_t nnvl;
	int32_t nvl_me;
	int32_t nib;
	uint32_t has_ib;
	uint32_t rsvd;
	uint64_t peers;
	uint64_t rsvd2[3];
	struct dvx_p2p_dev ib;
};

DVX_ASSERT_SIZE(struct dvx_mp_dev_peer, 16);
DVX_ASSERT_SIZE(struct dvx_mp_dev, 128);

struct dvx_mp;
struct dvx_nvl_buf;
struct dvx_gpu_hostreg;

/**
 * dvx_mp_dev_mem_req() - GPU memory dvx_mp_dev_export() needs: the peer table, then the
 * IB transport's export (dvx_p2p_gpu_mem_req()).
 * @mp:		a connected transport
 * @bytes:	set to the size (64-byte aligned GPU memory)
 * Return: 0 or -EINVAL.
 */
int dvx_mp_dev_mem_req(const struct dvx_mp *mp, uint64_t *bytes);

/**
 * dvx_mp_dev_export() - describe the transport for kernels.
 * @mp:		a connected transport with a GPU
 * @nvl:	optional: an exchanged buffer whose peers' pointers go into the table
 * @regs, @nregs: the IB transport's host registrations (dvx_p2p_gpu_register() of
 *		&@mp->ib; unused without IB)
 * @dmem, @dmem_len: GPU memory of dvx_mp_dev_mem_req(), 64-byte aligned, the caller's
 * @timeout_ns:	bound for draining the IB lanes
 * @dev:	filled: pass it to kernels by value
 *
 * With IB lanes, they belong to the GPU until dvx_mp_dev_import() (dvx_p2p_gpu_export()).
 * Return: 0, -EINVAL, or the copy's / the IB export's error.
 */
int dvx_mp_dev_export(struct dvx_mp *mp, const struct dvx_nvl_buf *nvl,
		      const struct dvx_gpu_hostreg *regs, uint32_t nregs, uint64_t dmem,
		      uint64_t dmem_len, uint64_t timeout_ns, struct dvx_mp_dev *dev);

/**
 * dvx_mp_dev_import() - take the IB lanes back from the GPU (no kernel running on them);
 * nothing to do without IB. Return: as dvx_p2p_gpu_import().
 */
int dvx_mp_dev_import(struct dvx_mp *mp, const struct dvx_mp_dev *dev);

#ifdef __CUDACC__
/**
 * dvx_mp_dev_peer_of() - rank @r's entry of the table, or NULL (out of range, a handle
 * of another layout version).
 * @d:		the handle
 * @r:		the rank
 *
 * Context: device. Return: the entry or NULL.
 */
__device__ __forceinline__ const struct dvx_mp_dev_peer *dvx_mp_dev_peer_of(const struct dvx_mp_dev &d,
									   int r)
{
	if (d.version != DVX_MP_DEV_VERSION || r < 0 || r >= d.nranks)
		return nullptr;
	return (const struct dvx_mp_dev_peer *)d.peers + r;
}
#endif

DVX_END_DECLS

#endif /* DVX_MP_DEV_H */
