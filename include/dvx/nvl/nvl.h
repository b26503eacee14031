/* SPDX-License-Identifier: MIT */
/*
 * dvx/nvl/nvl.h - the NVLink path's host side: passing descriptors between the
 * processes of one host, and exchanging GPU buffers so that every rank of an NVL
 * domain maps every NVL peer's buffer (docs/mp.md).
 *
 * A buffer is shared as the whole allocation around it (dvx_gpu_mem_lookup()), in the
 * mode its allocation allows:
 *  - FABRIC: a VMM allocation made with fabric handles (DVX_GPU_MEM_FABRIC) on a GPU
 *    that has them: the 64-byte handle travels in the exchange;
 *  - FD: a VMM allocation made with POSIX-fd handles (DVX_GPU_MEM_EXPORT): the
 *    descriptor is passed to each peer process over a UNIX socket (dvx_fdx_allgather());
 *  - IPC: cuMemAlloc memory (DVX_GPU_MEM_LEGACY): the 64-byte legacy IPC handle.
 * A VMM allocation with neither handle type cannot be shared (-EINVAL).
 *
 * Importing maps the peer's allocation into this process, readable and writable by
 * this rank's GPU (cuMemImportFromShareableHandle, cuMemAddressReserve, cuMemMap,
 * cuMemSetAccess; cuIpcOpenMemHandle for IPC). Ranks that are threads of one process
 * take the same path for FD and FABRIC (a second mapping of the same memory); legacy
 * IPC handles cannot be opened in the process that made them, so for IPC a peer in the
 * same process is reached through its own address (valid in the whole process; on
 * another GPU that needs peer access, which the caller enables).
 *
 * Failures are agreed: an export that failed anywhere, or an import that failed
 * anywhere, makes the exchange fail on every rank (a second allgather of statuses),
 * nothing stays mapped, and no rank waits for another that gave up. The exporter keeps
 * its handle until every rank has imported.
 */
#ifndef DVX_MP_NVL_H
#define DVX_MP_NVL_H

#include <dvx/gpu/gpu.h>
#include <dvx/bootstrap/bootstrap.h>
#include <dvx/mp/topo.h>

DVX_BEGIN_DECLS

/**
 * dvx_fdx_allgather() - every rank offers one descriptor; each gets its own
 * descriptor of every other rank's (SCM_RIGHTS over abstract UNIX sockets).
 * @bs:		the group (ranks on one host: the NVL domain's bootstrap); collective
 * @hal:	the host table that passes and closes descriptors (dvx_hal_host() or a
 *		mock, which can fail any of its calls)
 * @fd:		this rank's descriptor, or -1 for none; stays the caller's
 * @fds:	[@bs->nranks] receives for every other rank r a new descriptor of r's
 *		file (the caller closes it with dvx_hal_fd_close()), -1 where r offered
 *		none; @fds[own rank] is -1
 * @scratch:	@bs->nranks * DVX_FDX_REC_BYTES bytes of 8-byte aligned caller memory,
 *		used during the call
 * @timeout_ns:	bound on the whole call
 * @diag:	optional: says what failed
 *
 * Each rank that offers a descriptor listens on an abstract socket named after its
 * process and a counter; the names go round with one allgather; every rank connects
 * to every other that offers one, says its rank, and receives the descriptor. A
 * listener hands a descriptor only to a connection whose credentials (SO_PEERCRED:
 * process and user) are those the named rank published; any other connection is
 * closed and ignored, so a stranger gets nothing and cannot end the exchange. Nothing
 * needs ptrace permission (pidfd_getfd does; docs/mp.md says why this path was chosen).
 *
 * Context: process context, one call at a time per @bs. Return: 0; -EINVAL; the
 * bootstrap's error; -ETIMEDOUT (a rank never came or never fetched); -EPROTO (a
 * peer answered a fetch with something else); -ECONNRESET (a peer went away); a socket
 * error. On failure no descriptor it received is left open.
 */
int dvx_fdx_allgather(struct dvx_bootstrap *bs, const struct dvx_hal *hal, int fd, int32_t *fds,
		      void *scratch, uint64_t timeout_ns, struct dvx_diag *diag);

/* bytes of scratch dvx_fdx_allgather() needs per rank */
#define DVX_FDX_REC_BYTES 32u

/** enum dvx_nvl_mode - how a buffer was shared (the hal's handle types). */
enum dvx_nvl_mode {
	DVX_NVL_FD = 1,
	DVX_NVL_FABRIC = 2,
	DVX_NVL_IPC = 3,
};

#define DVX_NVL_MAX_RANKS 1024	/* ranks of one NVL domain an exchange handles */

/**
 * struct dvx_nvl_rec - what a rank publishes about its buffer (sent as bytes).
 * @mode:	enum dvx_nvl_mode
 * @status:	0, or the error its export met (then the exchange fails everywhere)
 * @pid:	its process
 * @len:	bytes of its buffer
 * @offset:	where the buffer starts in its allocation
 * @alloc_len:	bytes of the allocation (what an importer maps)
 * @addr:	the buffer's address in its own process
 * @fdx:	the descriptor exchange's record (private)
 * @handle:	FABRIC and IPC: the handle's bytes
 */
struct dvx_nvl_rec {
	uint32_t mode;
	int32_t status;
	int32_t pid;
	uint32_t rsvd;
	uint64_t len;
	uint64_t offset;
	uint64_t alloc_len;
	uint64_t addr;
	uint8_t fdx[32];
	uint8_t handle[64];
};

/**
 * struct dvx_nvl_peer - one domain rank's buffer as this process sees it.
 * @rec:	what it published
 * @ptr:	device address of its buffer in this process (0 where not mapped: not an
 *		NVL peer); this rank's own entry is its own buffer
 * @base:	device address of its allocation in this process (0 where not mapped)
 * @mapped:	1 when this rank imported it (dvx_nvl_unmap() undoes that)
 * @mem:	the import's record
 */
struct dvx_nvl_peer {
	struct dvx_nvl_rec rec;
	uint64_t ptr;
	uint64_t base;
	uint32_t mapped;
	uint32_t rsvd;
	struct dvx_gpu_mem mem;
};

/**
 * struct dvx_nvl_buf - an exchanged buffer (caller storage).
 * @gpu:	this rank's GPU
 * @bs:		the domain's bootstrap it was exchanged over
 * @n:		ranks in the domain
 * @me:		this rank's local rank
 * @mode:	how this rank shared its buffer
 * @len:	bytes of this rank's buffer
 * @peers:	[@n] by local rank (the caller's array)
 * @diag:	what failed, when something did
 */
struct dvx_nvl_buf {
	struct dvx_gpu *gpu;
	struct dvx_bootstrap *bs;
	int32_t n;
	int32_t me;
	uint32_t mode;
	uint32_t rsvd;
	uint64_t len;
	struct dvx_nvl_peer *peers;
	struct dvx_diag diag;
};

/**
 * struct dvx_nvl_cfg - what dvx_nvl_exchange() shares and how.
 * @ptr:	this rank's buffer: device memory whose allocation can be shared (see the
 *		file comment); buffers of different ranks may differ in length
 * @len:	its length (> 0)
 * @hal:	the host table descriptors pass through (NULL: the GPU's backend's)
 * @timeout_ns:	bound on each collective step
 */
struct dvx_nvl_cfg {
	void *ptr;
	uint64_t len;
	const struct dvx_hal *hal;
	uint64_t timeout_ns;
};

/**
 * dvx_nvl_exchange() - share this rank's GPU buffer with its NVL domain and map every
 * NVL peer's. Collective over @bs.
 * @b:		caller storage, filled
 * @peers:	[@bs->nranks] caller storage for the ranks' views (kept in @b)
 * @bs:		the NVL domain's bootstrap (local ranks; dvx_mp_nvl_bootstrap()), at
 *		most DVX_NVL_MAX_RANKS of them
 * @topo:	optional: only ranks it classifies NVL are mapped (by their global
 *		rank @topo->nvl_ranks[local]); NULL maps every other domain rank
 * @gpu:	this rank's open GPU (its context current on this thread)
 * @cfg:	the buffer, its length, the host table and the bound (struct
 *		dvx_nvl_cfg), read during the call only
 *
 * Return: 0; -EINVAL (arguments, memory that is not device memory or cannot be
 * shared); the first error any rank met (export, descriptor passing, import), the
 * same on every rank, with @b->diag naming the rank where this rank saw it; a
 * bootstrap error. On failure nothing is mapped and no descriptor is open.
 */
int dvx_nvl_exchange(struct dvx_nvl_buf *b, struct dvx_nvl_peer *peers, struct dvx_bootstrap *bs,
		     const struct dvx_mp_topo *topo, struct dvx_gpu *gpu,
		     const struct dvx_nvl_cfg *cfg);

/**
 * dvx_nvl_unmap() - unmap every peer buffer @b imported. Local; peers unmap theirs.
 * Return: 0 or the first error (every mapping is tried).
 */
int dvx_nvl_unmap(struct dvx_nvl_buf *b);

/** dvx_nvl_peer_ptr() - local rank @l's buffer in this process, 0 if not mapped. */
static inline uint64_t dvx_nvl_peer_ptr(const struct dvx_nvl_buf *b, int l)
{
	return l >= 0 && l < b->n ? b->peers[l].ptr : 0;
}

DVX_END_DECLS

#endif /* DVX_MP_NVL_H */
