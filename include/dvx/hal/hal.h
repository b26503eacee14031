/* SPDX-License-Identifier: MIT */
/*
 * dvx/hal/hal.h - the hardware abstraction layer's backend instance, the diagnostic
 * helpers every backend shares, and the backends the library builds in.
 *
 * Everything dvx does to a NIC, a GPU or the OS goes through the hal. Its entry
 * points come in three tables, one per concern, so that a backend provides the
 * subsets it has:
 *
 *	nic	NICs, DEVX commands and objects, umems, UARs, PDs, MRs (dvx/hal/nic.h)
 *	host	host memory, PCI topology, limits, the clock, sockets (dvx/hal/host.h)
 *	gpu	the CUDA driver API (dvx/hal/gpu.h)
 *
 * A struct dvx_hal is a backend instance: its tables and its own context. The linux
 * backend provides nic and host (and gpu when built with CUDA), the cuda backend host
 * and gpu, the host backend host alone, the mock and the software NIC all three. A
 * missing table or a missing entry makes the wrapper return -ENOSYS. A NIC or GPU
 * handle is opened through one instance and remembers it, so one process can drive a
 * hardware NIC, the software NIC and a mock side by side. There is no global backend.
 *
 * Handles live in caller storage; a backend keeps its own pointer in ->priv. Every
 * call returns 0 or a negative errno; on failure the backend records the vendor's
 * words (rdma-core errno, DEVX status and syndrome, CUresult) in the handle's diag
 * (dvx/diag.h). Nothing is printed.
 */
#ifndef DVX_HAL_HAL_H
#define DVX_HAL_HAL_H

#include <dvx/compiler.h>
#include <dvx/diag.h>

DVX_BEGIN_DECLS

struct dvx_hal_nic_ops;
struct dvx_hal_host_ops;
struct dvx_hal_gpu_ops;

#define DVX_HAL_NAME_MAX 64
#define DVX_HAL_PCI_MAX 32

/**
 * struct dvx_hal - a backend instance.
 * @nic:	NIC entry points (dvx/hal/nic.h), or NULL
 * @host:	host entry points (dvx/hal/host.h), or NULL
 * @gpu:	GPU entry points (dvx/hal/gpu.h), or NULL
 * @ctx:	the backend's own state (NULL for linux and cuda; the mock or the
 *		software NIC's fabric otherwise)
 * @name:	"linux", "cuda", "host", "mock", "sim"
 */
struct dvx_hal {
	const struct dvx_hal_nic_ops *nic;
	const struct dvx_hal_host_ops *host;
	const struct dvx_hal_gpu_ops *gpu;
	void *ctx;
	const char *name;
};

/**
 * dvx_hal_linux() - the hardware backend: rdma-core mlx5dv/DEVX for NICs, sysfs and
 * DPDK for the host, and the CUDA driver API when built with CUDA.
 *
 * Context: any. Return: a static instance, or NULL when this libdvx was built
 * without rdma-core support (CONFIG_DVX_RDMA=n).
 */
const struct dvx_hal *dvx_hal_linux(void);

/**
 * dvx_hal_cuda() - the CUDA driver API backend: the gpu table (libcuda.so.1 is loaded
 * at run time on the first gpu_init, so libdvx links and runs on machines without a
 * driver) and the host table (memory, PCI, limits, clock, sockets).
 *
 * Context: any. Return: a static instance, or NULL when this libdvx was built
 * without CUDA (CONFIG_DVX_GPU=n).
 */
const struct dvx_hal *dvx_hal_cuda(void);

/**
 * dvx_hal_host() - the host-only backend: the host table alone (host memory, PCI
 * topology, limits, the clock, stream sockets, sleeping), no NIC and no GPU table. It is
 * built whatever the configuration (also without rdma-core and CUDA); the bootstrap's
 * sockets adapter uses it when given no backend.
 *
 * Context: any. Return: a static instance, never NULL.
 */
const struct dvx_hal *dvx_hal_host(void);

/**
 * dvx_hal_diag_set() - record a failure in a diagnostic record.
 * @diag:	record to fill (may be NULL: nothing is recorded)
 * @err:	negative errno being returned
 * @src:	enum dvx_diag_src
 * @op:		operation name
 * @fmt:	printf-style detail, or NULL
 *
 * Context: any; no allocation. Return: @err, so callers can "return dvx_hal_diag_set(...)".
 */
int dvx_hal_diag_set(struct dvx_diag *diag, int err, enum dvx_diag_src src, const char *op,
		     const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/**
 * dvx_hal_diag_devx() - record a failed DEVX command from its output mailbox.
 * @diag:	record to fill
 * @op:		operation name
 * @in:		the command's input mailbox (for the opcode)
 * @out:	its output mailbox (status byte 0, syndrome bytes 4-7), may be NULL
 * @sys_errno:	errno reported by the transport (rdma-core), 0 if none
 *
 * Records the opcode, the status byte and the syndrome as they are; the status is not
 * translated here (the hal knows no PRM meaning; see dvx_mlx5_cmd_status_errno()).
 *
 * Context: any; no allocation. Return: -EREMOTEIO when the output mailbox holds a
 * non-zero status (the NIC refused the command); else -@sys_errno, or -EIO when
 * there is none (the command was not delivered).
 */
int dvx_hal_diag_devx(struct dvx_diag *diag, const char *op, const void *in, const void *out,
		      int sys_errno);

/**
 * dvx_hal_log() - emit a message through a struct dvx_log, if its level allows.
 */
void dvx_hal_log(const struct dvx_log *log, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));


DVX_END_DECLS

#endif /* DVX_HAL_HAL_H */
