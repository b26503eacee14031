/* SPDX-License-Identifier: MIT */
/*
 * hal/mock/priv.h - private to the mock backend: the call log and fault injection its
 * NIC, host and GPU tables share (hal/mock/mock.c).
 *
 * Every op follows the same shape:
 *   dvx_mockp_begin()   take the next seq, open a log record, fill in the arguments;
 *   inject              run the check hook, fail_at and fail_op (and say so in the
 *                       handle's diag);
 *   the op              validate handles, hand out or take back a resource, answer;
 *   dvx_mockp_end()     store the return value in the record.
 * Failures fill the diag the way the linux backend does, so the code under test sees
 * the same diagnostics from both.
 */
#ifndef DVX_HAL_MOCK_PRIV_H
#define DVX_HAL_MOCK_PRIV_H

#include <errno.h>
#include <string.h>

#include <dvx/byteorder.h>
#include <dvx/testing/mock.h>

#include "../host_priv.h"
#include "../sysfs.h"

#define MOCK_CMD_QUERY_HCA_CAP 0x100u	/* PRM opcode answered from the cap pages */
#define MOCK_STATUS_BAD_PARAM 0x03u
#define MOCK_SYNDROME_NO_CAP 0x4d4f434bu	/* "MOCK": no page configured for that op_mod */
#define MOCK_UAR_BF_OFFSET 0x800u		/* first register of a UAR page */

/* the tables (hal/mock/nic.c, host.c, gpu.c) */
extern const struct dvx_hal_nic_ops dvx_mock_nic_ops;
extern const struct dvx_hal_host_ops dvx_mock_host_ops;
extern const struct dvx_hal_gpu_ops dvx_mock_gpu_ops;

void dvx_mockp_copy_str(char *dst, size_t n, const char *src);
struct dvx_mock *dvx_mockp_mock_of(const struct dvx_hal *hal);
struct dvx_mock *dvx_mockp_mock_dev(const struct dvx_hal_nic *dev);
int dvx_mockp_dev_index(const struct dvx_mock *m, const struct dvx_hal_nic *dev);
struct dvx_mock_call *dvx_mockp_begin(struct dvx_mock *m, enum dvx_mock_op op, int dev);
int dvx_mockp_end(struct dvx_mock *m, struct dvx_mock_call *c, int ret);
/* copy the mailboxes of a DEVX call into the armed captures that match it */
void dvx_mockp_capture(struct dvx_mock *m, const void *in, size_t inlen, const void *out,
		       size_t outlen);
int dvx_mockp_neg(int err);
int dvx_mockp_injected_err(struct dvx_mock *m, struct dvx_mock_call *c);
int dvx_mockp_inject_dev(struct dvx_mock *m, struct dvx_mock_call *c, struct dvx_hal_nic *dev);
int dvx_mockp_bad_handle(struct dvx_hal_nic *dev, enum dvx_mock_op op, const char *what);
uint32_t dvx_mockp_fresh_id(struct dvx_mock *m);
/* descriptors handed out (DVX_MOCK_RES_FD): keep one (-EMFILE when the table is full,
 * and then it is closed), find one */
int dvx_mockp_fd_keep(struct dvx_mock *m, int fd);
struct dvx_mock_fd *dvx_mockp_fd_find(struct dvx_mock *m, int fd);

#endif /* DVX_HAL_MOCK_PRIV_H */
