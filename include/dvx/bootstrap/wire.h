/* SPDX-License-Identifier: MIT */
/*
 * dvx/bootstrap/wire.h - join the software NIC's wire through a bootstrap: the one call
 * that lets ranks running as processes (forked, under mpirun or srun, on several hosts)
 * connect their software NICs (docs/sim-wire.md, "Setting it up").
 */
#ifndef DVX_BOOTSTRAP_WIRE_H
#define DVX_BOOTSTRAP_WIRE_H

#include <dvx/bootstrap/bootstrap.h>
#include <dvx/hal/sim.h>

DVX_BEGIN_DECLS

/* NICs of one rank whose configurations dvx_bootstrap_wire_join() exchanges */
#define DVX_BOOTSTRAP_WIRE_MAX_NICS 4u

/**
 * struct dvx_bootstrap_wire_cfg - this rank's side of the wire.
 * @fab:	this rank's fabric, its NICs added (at most DVX_BOOTSTRAP_WIRE_MAX_NICS)
 * @addr:	where this rank listens: NULL or "" for an abstract UNIX socket named after
 *		this process (one host, no file); "unix:DIR" for a socket file in the folder
 *		DIR (one host); "tcp:A.B.C.D" or "tcp:[v6]" for an address of this host that
 *		the others reach (several hosts; the system picks the port)
 * @max_msg:	struct dvx_sim_wire_cfg.max_msg (0: its default), the same on every rank
 * @min_retry_ns: struct dvx_sim_wire_cfg.min_retry_ns (0: its default)
 * @hal:	sockets, clock and process identity; NULL: dvx_hal_host()
 * @ring_bytes:	struct dvx_sim_wire_cfg.ring_bytes, the shared-memory ring of each
 *		direction between two ranks of one host (UNIX addresses); 0:
 *		DVX_BOOTSTRAP_WIRE_RING_DEFAULT, DVX_BOOTSTRAP_WIRE_NO_RING: none (frames
 *		through the sockets); the same on every rank
 * @stream_bytes: struct dvx_sim_wire_cfg.stream_bytes (0: its default; this rank's own)
 */
struct dvx_bootstrap_wire_cfg {
	struct dvx_sim_fabric *fab;
	const char *addr;
	uint32_t max_msg;
	uint32_t stream_bytes;
	uint64_t min_retry_ns;
	const struct dvx_hal *hal;
	uint64_t ring_bytes;
};

#define DVX_BOOTSTRAP_WIRE_RING_DEFAULT (1ull << 20)
#define DVX_BOOTSTRAP_WIRE_NO_RING (~0ull)

/**
 * dvx_bootstrap_wire_mem_size() - caller memory for dvx_bootstrap_wire_join().
 * @nranks:	the bootstrap's ranks
 * @max_msg:	as in the attr (0: the default)
 * Return: bytes (any alignment): the wire's memory and the exchange's; 0 if out of range.
 */
size_t dvx_bootstrap_wire_mem_size(int nranks, uint32_t max_msg);

/**
 * dvx_bootstrap_wire_join() - give @attr->fab a wire to every other rank of @bs.
 * @bs:		a bootstrap context; its rank and size are the wire's
 * @attr:	the fabric, the address to listen at, the wire's limits
 * @mem:	caller memory of dvx_bootstrap_wire_mem_size() bytes, the fabric's until
 *		dvx_sim_wire_fini() or dvx_sim_fini()
 * @len:	its length
 * @timeout_ns:	bound on the whole join
 *
 * Collective: every rank calls it. It initialises the wire, listens, allgathers every
 * rank's address and its NICs' configurations (dvx_sim_nic_cfg_get()), connects the mesh
 * and adds the other ranks' NICs as remote NICs, so that QPs connected with
 * dvx_qp_connect() to a NIC of another process reach it over the wire.
 * Context: blocks; before traffic on the fabric. Return: 0; -EINVAL (NULL, a bad
 * address, more NICs than DVX_BOOTSTRAP_WIRE_MAX_NICS, @len too small); the
 * bootstrap's errors (-ETIMEDOUT, -ECONNRESET ...); the wire's (dvx_sim_wire_init(),
 * _listen(), _connect()). On failure the fabric has no wire and @mem is free again.
 */
int dvx_bootstrap_wire_join(struct dvx_bootstrap *bs, const struct dvx_bootstrap_wire_cfg *attr,
			    void *mem, size_t len, uint64_t timeout_ns);

DVX_END_DECLS

#endif /* DVX_BOOTSTRAP_WIRE_H */
