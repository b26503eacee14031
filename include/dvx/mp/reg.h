/* SPDX-License-Identifier: MIT */
/*
 * dvx/mp/reg.h - the IB buffer registry of the multi-peer transport: a reference-
 * counted cache of memory registrations, keyed by the allocation that contains a
 * buffer (docs/mp.md).
 *
 * Registering a buffer finds the allocation around it: for GPU memory the whole
 * allocation (cuMemGetAddressRange, through dvx_gpu_mem_lookup()), for host memory
 * the caller's range. A buffer inside an allocation that is registered already is a
 * hit: it takes a reference and returns the keys, with no call to the hal. A miss
 * registers the whole allocation once on every NIC of the registry, the address as
 * the iova (so one address reaches it on every NIC): GPU memory as a dma-buf first
 * and, where the dma-buf path fails, as plain memory (the peer-memory path); host
 * memory plainly. Access is least privilege: LOCAL_WRITE, and of the remote rights
 * only those the registration asks for (DVX_MP_REG_WRITE, _READ, _ATOMIC; none: a
 * source, local use only). What a peer holding the keys can reach is the whole
 * allocation, not only the buffer: docs/security.md. A buffer inside an allocation
 * registered with fewer rights than it asks for upgrades the allocation once: new MRs
 * with the union of the rights, whose keys every later registration gets, while the
 * old MRs stay registered (keys already handed out keep working) until the allocation
 * is released; a second upgrade of the same allocation is refused (-EACCES: register
 * it first with every right its buffers need). Relaxed ordering only on
 * request; the ordering is part of the key, and a buffer inside an allocation
 * registered with the other ordering is refused (-EEXIST).
 * Deregistering drops a reference; the last one deregisters the MRs (which works
 * after the memory itself was freed).
 *
 * Capacity is fixed by the caller's entry array: a full table is -ENOSPC, never an
 * allocation. One thread at a time per registry.
 */
#ifndef DVX_MP_REG_H
#define DVX_MP_REG_H

#include <dvx/p2p/ops.h>
#include <dvx/nic/mr.h>

DVX_BEGIN_DECLS

struct dvx_gpu;

/* dvx_mp_reg_add() flags, and struct dvx_mp_reg_entry.flags */
enum {
	DVX_MP_REG_RELAXED = 1u << 0,	/* PCIe relaxed ordering (part of the key) */
	DVX_MP_REG_WRITE = 1u << 3,	/* peers may RDMA WRITE into it (a destination) */
	DVX_MP_REG_READ = 1u << 4,	/* peers may RDMA READ from it */
	DVX_MP_REG_ATOMIC = 1u << 5,	/* peers may fetch-add / compare-swap in it (signals,
					 * counters) */
	/* entry flags only */
	DVX_MP_REG_GPU = 1u << 1,	/* GPU memory (the allocation dvx_gpu_mem_lookup() found) */
	DVX_MP_REG_RANGE = 1u << 2,	/* GPU memory beyond one allocation: the caller's range */
	DVX_MP_REG_DMABUF = 1u << 8,	/* bit 8 + k: NIC k registered it as a dma-buf */
};

/**
 * struct dvx_mp_reg_entry - one registered allocation (an element of the caller's
 * table; zero means free).
 * @base:	first byte (the iova on every NIC)
 * @len:	bytes registered
 * @refs:	references (registrations of buffers inside it not yet dropped)
 * @flags:	DVX_MP_REG_*
 * @mr:		one MR per NIC of the registry (the current rights)
 * @prev:	after an upgrade, the MRs registered before it (their keys stay valid
 *		until the entry is released); unused otherwise
 */
struct dvx_mp_reg_entry {
	uint64_t base;
	uint64_t len;
	uint32_t refs;
	uint32_t flags;
	struct dvx_mr mr[DVX_P2P_MAX_NICS];
	struct dvx_mr prev[DVX_P2P_MAX_NICS];
};

/**
 * struct dvx_mp_reg - the registry (caller storage).
 * @e:		the caller's table of @cap entries
 * @cap:	entries in it
 * @live:	entries in use
 * @nnics:	NICs every entry is registered on
 * @nics:	those NICs (caller's; they outlive the registry)
 * @gpu:	the GPU whose memory may be registered (NULL: host memory only)
 * @hits:	registrations answered from the table
 * @misses:	registrations that registered an allocation
 * @upgrades:	registrations that registered an allocation again with more rights
 * @diag:	the last failure's account
 */
struct dvx_mp_reg {
	struct dvx_mp_reg_entry *e;
	uint32_t cap;
	uint32_t live;
	uint32_t nnics;
	uint32_t rsvd;
	struct dvx_nic *nics[DVX_P2P_MAX_NICS];
	struct dvx_gpu *gpu;
	uint64_t hits;
	uint64_t misses;
	uint64_t upgrades;
	struct dvx_diag diag;
};

/**
 * dvx_mp_reg_init() - an empty registry over the caller's table.
 * @reg:	caller storage
 * @entries:	@cap entries, zeroed here; the caller's until dvx_mp_reg_fini()
 * @cap:	entries (>= 1)
 * @nics:	@nnics opened NICs, in the order keys are returned
 * @nnics:	1 ... DVX_P2P_MAX_NICS
 * @gpu:	an open GPU, or NULL when only host memory is registered
 *
 * Return: 0 or -EINVAL.
 */
int dvx_mp_reg_init(struct dvx_mp_reg *reg, struct dvx_mp_reg_entry *entries, uint32_t cap,
		    struct dvx_nic *const *nics, uint32_t nnics, struct dvx_gpu *gpu);

/**
 * dvx_mp_reg_add() - register a buffer (or take a reference on the allocation
 * registered around it) and describe it for the transport.
 * @reg:	the registry
 * @ptr:	the buffer (host or GPU address)
 * @len:	bytes (> 0)
 * @flags:	DVX_MP_REG_RELAXED, and the remote rights peers get: DVX_MP_REG_WRITE,
 *		DVX_MP_REG_READ, DVX_MP_REG_ATOMIC (none: a source, local use only)
 * @out:	optional: the buffer's address and per-NIC keys (dvx_p2p_lbuf), valid
 *		until its reference is dropped
 *
 * Context: control path. Return: 0; -EINVAL (bad arguments); -EEXIST (inside an
 * allocation registered with the other ordering); -EACCES (inside an allocation
 * upgraded once already, without a right @flags asks for); -ENOSPC (the table is full); the
 * error of the lookup or of a NIC's registration (the NICs registered before it are
 * deregistered: nothing is held, the table is unchanged).
 */
int dvx_mp_reg_add(struct dvx_mp_reg *reg, void *ptr, uint64_t len, uint32_t flags,
		   struct dvx_p2p_lbuf *out);

/**
 * dvx_mp_reg_find() - the keys of a registered buffer, without a reference or a hal call.
 * @reg, @ptr, @len, @out: as dvx_mp_reg_add()
 * Return: 0, -ENOENT when no entry contains it, -EINVAL.
 */
int dvx_mp_reg_find(const struct dvx_mp_reg *reg, const void *ptr, uint64_t len,
		    struct dvx_p2p_lbuf *out);

/**
 * dvx_mp_reg_del() - drop the reference a dvx_mp_reg_add() of @ptr took.
 * @reg:	the registry
 * @ptr:	an address inside the registered allocation (the entry starting at @ptr
 *		is preferred where host ranges overlap)
 *
 * The last reference deregisters the allocation on every NIC (in reverse order). A NIC
 * that refuses leaves the entry in the table, unreferenced, with the MRs not yet
 * deregistered: calling again retries them.
 * Return: 0; -ENOENT (nothing registered there); -EINVAL; a NIC's error.
 */
int dvx_mp_reg_del(struct dvx_mp_reg *reg, const void *ptr);

/**
 * dvx_mp_reg_fini() - deregister every entry still in the table, whatever its
 * references, and forget the table.
 * Return: 0, or the first NIC error (the registry is unusable either way).
 */
int dvx_mp_reg_fini(struct dvx_mp_reg *reg);

DVX_END_DECLS

#endif /* DVX_MP_REG_H */
