/* SPDX-License-Identifier: MIT */
/*
 * hal/sim/ctrl.h - private to the control half of the sim (fabric.c, ctrl.c, ops.c):
 * the PRM bit-field accessors, id generation, and the functions the three files share.
 *
 * The accessors read and write fields as docs/prm.md's tables write them ("dw@B [hi:lo]":
 * the big-endian dword at byte B, bit 31 its MSB). They are the sim's own, written
 * from docs/prm.md and not shared with dvx/mlx5/, so the mailbox builders and the
 * model check each other.
 */
#ifndef DVX_HAL_SIM_CTRL_H
#define DVX_HAL_SIM_CTRL_H

#include <stdbool.h>
#include <string.h>

#include "sim.h"

/* ---- PRM bit fields ---------------------------------------------------------- */

static inline uint32_t sim_mask(unsigned hi, unsigned lo)
{
	unsigned w = hi - lo + 1;

	return w >= 32 ? 0xffffffffu : ((1u << w) - 1u);
}

/** sim_get() - field [hi:lo] of the big-endian dword at byte @b of @p */
static inline uint32_t sim_get(const void *p, unsigned b, unsigned hi, unsigned lo)
{
	return (dvx_get_be32((const uint8_t *)p + b) >> lo) & sim_mask(hi, lo);
}

/** sim_set() - write field [hi:lo] of the big-endian dword at byte @b of @p */
static inline void sim_set(void *p, unsigned b, unsigned hi, unsigned lo, uint32_t v)
{
	uint8_t *q = (uint8_t *)p + b;
	uint32_t m = sim_mask(hi, lo) << lo;
	uint32_t d = dvx_get_be32(q);

	dvx_put_be32(q, (d & ~m) | ((v << lo) & m));
}

/** sim_copy_field() - copy field [hi:lo] at byte @b from @src to @dst */
static inline void sim_copy_field(void *dst, const void *src, unsigned b, unsigned hi,
				  unsigned lo)
{
	sim_set(dst, b, hi, lo, sim_get(src, b, hi, lo));
}

static inline uint64_t sim_get64(const void *p, unsigned b)
{
	return dvx_get_be64((const uint8_t *)p + b);
}

/* ---- PRM numbers the control half decodes (prm 1.1-1.8) ---------------- */

enum {
	SIM_CMD_QUERY_HCA_CAP = 0x100,
	SIM_CMD_CREATE_CQ = 0x400,
	SIM_CMD_DESTROY_CQ = 0x401,
	SIM_CMD_QUERY_CQ = 0x402,
	SIM_CMD_CREATE_QP = 0x500,
	SIM_CMD_DESTROY_QP = 0x501,
	SIM_CMD_RST2INIT_QP = 0x502,
	SIM_CMD_INIT2RTR_QP = 0x503,
	SIM_CMD_RTR2RTS_QP = 0x504,
	SIM_CMD_RTS2RTS_QP = 0x505,
	SIM_CMD_2ERR_QP = 0x507,
	SIM_CMD_2RST_QP = 0x50a,
	SIM_CMD_QUERY_QP = 0x50b,
};

/* command delivery status (output byte 0) */
enum {
	SIM_ST_OK = 0x00,
	SIM_ST_BAD_OP = 0x02,
	SIM_ST_BAD_PARAM = 0x03,
	SIM_ST_BAD_RESOURCE = 0x05,
	SIM_ST_EXCEED_LIM = 0x08,
	SIM_ST_BAD_RES_STATE = 0x09,
	SIM_ST_BAD_QP_STATE = 0x10,
	SIM_ST_BAD_INPUT_LEN = 0x50,
	SIM_ST_BAD_OUTPUT_LEN = 0x51,
};

/* capability page types (op_mod >> 1) */
enum {
	SIM_CAP_GENERAL = 0x0,
	SIM_CAP_ATOMIC = 0x3,
	SIM_CAP_ROCE = 0x4,
	SIM_CAP_GENERAL_2 = 0x20,
};

#define SIM_CAP_OUT_BYTES 4112u
#define SIM_CAP_PAGE_OFF 16u
#define SIM_CQ_IN_BYTES 272u
#define SIM_QP_IN_BYTES 272u
#define SIM_QUERY_OUT_BYTES 272u
#define SIM_CQC_OFF 16u
#define SIM_QPC_OFF 24u
#define SIM_QPC_BYTES 232u
#define SIM_CQC_BYTES 64u
#define SIM_RING_ALIGN 64u	/* a ring starts on 64 B: page_offset counts 64 B units */

/* ---- ids --------------------------------------------------------------------- */

/**
 * sim_slot_bits() - bits that hold slot + 1 for a table of @cap entries. Object
 * numbers are (generation << bits) | (slot + 1): never 0, the slot is recovered in
 * O(1) and a stale number fails the equality check after reuse.
 */
static inline unsigned sim_slot_bits(uint32_t cap)
{
	unsigned b = 1;

	while ((1u << b) <= cap)
		b++;
	return b;
}

/** dvx_sim_make_id() - a fresh number for @slot of a table of @cap, within @width bits */
uint32_t dvx_sim_make_id(struct sim_nic *nic, uint32_t slot, uint32_t cap, unsigned width);

/** sim_id_slot() - the slot an id names, or UINT32_MAX */
static inline uint32_t sim_id_slot(uint32_t id, uint32_t cap)
{
	uint32_t s = id & ((1u << sim_slot_bits(cap)) - 1u);

	return s == 0 || s > cap ? UINT32_MAX : s - 1;
}

/* ---- lookups shared by the control files (fab->lock held) ------------------------ */

struct sim_pd *dvx_sim_pd_find(struct sim_nic *nic, uint32_t pdn);
struct sim_umem *dvx_sim_umem_find(struct sim_nic *nic, uint32_t id);
struct sim_uar *dvx_sim_uar_find(struct sim_nic *nic, uint32_t page_id);
struct sim_dmabuf *dvx_sim_dmabuf_find(struct sim_fabric *fab, int fd);
/** dvx_sim_dmabuf_new() - a fake dma-buf of [base, base + len): 0 and *fd, or -ENOSPC */
int dvx_sim_dmabuf_new(struct sim_fabric *fab, uint8_t *base, uint64_t len, int *fd);
/** dvx_sim_dmabuf_put() - a registration from @d went; a closed one goes with its last */
void dvx_sim_dmabuf_put(struct sim_dmabuf *d);

static inline struct sim_fabric *sim_fab_of(struct dvx_sim_fabric *fab)
{
	return (struct sim_fabric *)(void *)fab;
}

/* ---- ctrl.c: the DEVX commands ------------------------------------------------- */

/** dvx_sim_caps_build() - fill the four capability pages of @nic from its config */
void dvx_sim_caps_build(struct sim_nic *nic);

/*
 * The mailbox entry points. Each writes status and syndrome into @out (and counts the
 * command). Return: 0 when the command ran (status 0), 1 when the device refused it
 * (status != 0 in @out), or a negative errno for what the kernel's DEVX layer
 * refuses before the device sees it.
 */
int dvx_sim_cmd_general(struct sim_nic *nic, const void *in, size_t inlen, void *out,
		    size_t outlen);
int dvx_sim_cmd_create(struct sim_nic *nic, const void *in, size_t inlen, void *out,
		   size_t outlen, struct dvx_hal_obj *obj);
int dvx_sim_cmd_modify(struct sim_nic *nic, struct dvx_hal_obj *obj, const void *in, size_t inlen,
		   void *out, size_t outlen);
int dvx_sim_cmd_query(struct sim_nic *nic, struct dvx_hal_obj *obj, const void *in, size_t inlen,
		  void *out, size_t outlen);
/* destroy: fills a synthesized destroy mailbox pair so the caller can record it */
int dvx_sim_cmd_destroy(struct sim_nic *nic, struct dvx_hal_obj *obj, uint8_t *in16,
		    uint8_t *out16);

/** dvx_sim_gid_of() - GID table entry @index of @port (1-based); false if empty */
bool dvx_sim_gid_of(const struct sim_nic *nic, unsigned port, uint32_t index, uint8_t gid[16],
		uint8_t *type);
/** dvx_sim_gid_tbl_len() - GID table length of @port */
uint32_t dvx_sim_gid_tbl_len(const struct sim_nic *nic, unsigned port);
/** dvx_sim_port_has_gid() - does @port of @nic own @gid (any table entry) */
bool dvx_sim_port_has_gid(const struct sim_nic *nic, unsigned port, const uint8_t gid[16]);
/** dvx_sim_cfg_has_gid() - the same for a NIC known by its configuration (the wire's remote NICs) */
bool dvx_sim_cfg_has_gid(const struct dvx_sim_nic_cfg *c, unsigned port, const uint8_t gid[16]);

/* ---- fabric.c ---------------------------------------------------------------- */

/*
 * dvx_sim_nic_doorbells() - take the doorbells written to @nic's UAR registers (the
 * strict or loose model, rescues included) without running anything. A command calls
 * it first: a doorbell is a posted MMIO write, and one written before the command
 * reaches the NIC before the command does (docs/sim.md "Doorbells and commands").
 * Context: fab->lock held.
 */
void dvx_sim_nic_doorbells(struct sim_fabric *fab, struct sim_nic *nic);

/** dvx_sim_pass() - one progress pass; returns WQEs executed (fab->lock held) */
unsigned dvx_sim_pass(struct sim_fabric *fab, bool *busy);

/* the software NIC's hal tables (ops.c): NIC, and host (memory, limits, clock from
 * the shared host table; PCI from the fabric) */
extern const struct dvx_hal_nic_ops dvx_sim_nic_ops;
extern const struct dvx_hal_host_ops dvx_sim_host_ops;
/* the software GPUs' table (gpu.c) */
extern const struct dvx_hal_gpu_ops dvx_sim_gpu_ops;

/** dvx_sim_gpu_release_all() - dvx_sim_fini(): unmap and close what the GPUs still hold */
void dvx_sim_gpu_release_all(struct sim_fabric *fab);

#endif /* DVX_HAL_SIM_CTRL_H */
