/* SPDX-License-Identifier: MIT */
/*
 * core/nic/priv.h - helpers shared by the core objects (not installed).
 */
#ifndef DVX_CORE_PRIV_H
#define DVX_CORE_PRIV_H

#include <string.h>

#include <dvx/nic/nic.h>
#include <dvx/nic/umem.h>

/*
 * Record a bad-argument / unsupported / state failure in nic->hal.diag, log it, and
 * return @err. @op names the call ("dvx_qp_create").
 */
int dvx_core_fail(struct dvx_nic *nic, int err, enum dvx_diag_src src, const char *op,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/*
 * After a failed hal call: keep the hal's record, name the PRM command in it when
 * @cmd_opcode is non-zero ("CREATE_QP: BAD_PARAM syndrome 0x..."), log it, return
 * @err.
 */
/*
 * The ranges of umems that live CQs and QPs use (core/nic/umem.c). overlap: the first
 * range in use that [@off, @off + @len) of @u meets, or NULL; link: record @e for that
 * range (the create succeeded); unlink: forget it (the destroy succeeded).
 */
const struct dvx_umem_ext *dvx_core_umem_overlap(const struct dvx_umem *u, uint64_t off,
						 uint64_t len);
void dvx_core_umem_link(struct dvx_umem *u, struct dvx_umem_ext *e, uint64_t off, uint64_t len);
void dvx_core_umem_unlink(struct dvx_umem *u, struct dvx_umem_ext *e);

/* a public call that succeeded: the NIC's last diagnostic is cleared */
static inline void dvx_core_ok(struct dvx_nic *nic)
{
	memset(&nic->hal.diag, 0, sizeof(nic->hal.diag));
}

int dvx_core_hal_failed(struct dvx_nic *nic, int err, unsigned cmd_opcode, const char *op);

/* Run one DEVX command through obj_create/obj_modify/obj_query/devx_cmd; on failure
 * the diag names the command. */
int dvx_core_obj_create(struct dvx_nic *nic, const void *in, size_t inlen, void *out,
			size_t outlen, struct dvx_hal_obj *obj);
int dvx_core_obj_modify(struct dvx_nic *nic, struct dvx_hal_obj *obj, const void *in,
			size_t inlen, void *out, size_t outlen);
int dvx_core_obj_query(struct dvx_nic *nic, struct dvx_hal_obj *obj, const void *in,
		       size_t inlen, void *out, size_t outlen);
int dvx_core_devx_cmd(struct dvx_nic *nic, const void *in, size_t inlen, void *out,
		      size_t outlen);

static inline unsigned dvx_core_log2(uint64_t v)
{
	unsigned n = 0;

	while (v > 1) {
		v >>= 1;
		n++;
	}
	return n;
}

#endif
