/* SPDX-License-Identifier: MIT */
/*
 * dvx/diag.h - the diagnostic record and the optional log callback.
 *
 * Every dvx action returns 0 or a negative errno. Where the failure came from a vendor
 * (rdma-core's errno, a DEVX command status and syndrome, a CUresult, a CQE syndrome),
 * the hal translates it once into that errno and keeps the vendor's own words in a
 * struct dvx_diag that the caller can read back; nothing is printed. The only way out
 * of the library is a caller-supplied log callback.
 */
#ifndef DVX_DIAG_H
#define DVX_DIAG_H

#include <dvx/compiler.h>

DVX_BEGIN_DECLS

/** enum dvx_diag_src - who reported the failure recorded in a struct dvx_diag. */
enum dvx_diag_src {
	DVX_DIAG_NONE = 0,	/* no failure recorded */
	DVX_DIAG_ARG,		/* bad input, found by dvx before anything was touched */
	DVX_DIAG_OS,		/* a system call or rdma-core; sys_errno holds its errno */
	DVX_DIAG_DEVX,		/* a DEVX/PRM command; status, syndrome, cmd_opcode */
	DVX_DIAG_CUDA,		/* the CUDA driver API; cu_result */
	DVX_DIAG_DPDK,		/* DPDK's EAL; sys_errno holds rte_errno */
	DVX_DIAG_CQE,		/* an error completion; cqe_* fields */
	DVX_DIAG_STATE,		/* the object was in the wrong state for the call */
};

/**
 * struct dvx_diag - what went wrong, in the vendor's own terms.
 * @err:	the negative errno the call returned
 * @src:	enum dvx_diag_src
 * @cmd_opcode:	PRM opcode of the failed DEVX command (DVX_DIAG_DEVX)
 * @sys_errno:	errno reported by the OS, rdma-core or DPDK (positive)
 * @status:	DEVX command status byte (output mailbox byte 0)
 * @cqe_syndrome: CQE syndrome (byte 55 of an error CQE)
 * @cqe_vendor_syndrome: CQE vendor syndrome (byte 54)
 * @cqe_opcode:	opcode of the failed WQE (error CQE byte 56)
 * @syndrome:	DEVX command syndrome (output mailbox bytes 4-7)
 * @cu_result:	CUresult of the failed CUDA driver call
 * @qpn:	QP number the failure belongs to, if any
 * @wqe_index:	WQE index the failure belongs to, if any
 * @op:		name of the failed operation, NUL-terminated
 * @msg:	a short human-readable explanation, NUL-terminated
 *
 * Fixed-size and allocation-free; copy it by value.
 */
struct dvx_diag {
	int32_t err;
	uint16_t src;
	uint16_t cmd_opcode;
	int32_t sys_errno;
	uint8_t status;
	uint8_t cqe_syndrome;
	uint8_t cqe_vendor_syndrome;
	uint8_t cqe_opcode;
	uint32_t syndrome;
	int32_t cu_result;
	uint32_t qpn;
	uint32_t wqe_index;
	char op[32];
	char msg[96];
};

/** Log levels passed to a struct dvx_log callback. */
enum dvx_log_level {
	DVX_LOG_ERR = 3,
	DVX_LOG_WARN = 4,
	DVX_LOG_INFO = 6,
	DVX_LOG_DEBUG = 7,
};

/**
 * typedef dvx_log_fn - a caller's log sink.
 * @arg:	the caller's cookie from struct dvx_log
 * @level:	enum dvx_log_level
 * @msg:	NUL-terminated message without a trailing newline; valid only during the call
 */
typedef void (*dvx_log_fn)(void *arg, int level, const char *msg);

/**
 * struct dvx_log - where an object may report what it does; fn NULL means silence.
 * @fn:		callback, or NULL
 * @arg:	passed back to @fn
 * @level:	messages above this level are not produced
 */
struct dvx_log {
	dvx_log_fn fn;
	void *arg;
	int level;
};

DVX_END_DECLS

#endif /* DVX_DIAG_H */
