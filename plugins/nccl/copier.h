/* SPDX-License-Identifier: MIT */
/*
 * plugins/nccl/copier.h - the software NIC's copies into and out of GPU memory, made by a
 * process of their own (dvx-copier, plugins/nccl/copier_main.c; docs/nccl.md "GPU
 * buffers").
 *
 * Why a process: CUDA holds every copy a process makes while any thread of that process
 * loads a module or unregisters host memory, until the kernels that run end (measured,
 * bench/gpu-dma-bench "calls", bench/RESULTS.md 2026-11-29). A collective's kernel
 * waits for the bytes the NIC moves, so a copy the application's own process makes can
 * deadlock against the application's next module load. The same copy made by another
 * process was held by none of those calls. A NIC's DMA does not depend on the
 * application's driver calls; dvx-copier gives the software NIC that property.
 *
 * How: the plugin spawns dvx-copier with one end of a SOCK_SEQPACKET socket pair as
 * descriptor 3 and hands it a staging area (a memfd both map). Device memory is shared
 * the way CUDA shares it between processes: the allocation around a registered buffer
 * is looked up (cuMemGetAddressRange) and exported, as a legacy IPC handle for
 * cuMemAlloc memory or a POSIX file descriptor (passed with SCM_RIGHTS) for a VMM
 * allocation made exportable; dvx-copier imports it on the same device ordinal (it
 * inherits the environment, CUDA_VISIBLE_DEVICES included). A copy is then a request
 * (device offset, staging offset, length, direction) answered when the bytes are in
 * place: the caller copies between its host buffer and the staging area, the copier
 * between the staging area and device memory on a stream of its own, waited for. One
 * request is outstanding at a time (a lock), so copies complete in the order they are
 * asked, as the software NIC's callbacks require; a copy longer than the staging area
 * goes in pieces.
 *
 * Failure: every wait is bounded (the timeout given at start); a copier that does not
 * answer in time is killed, one that ended is reaped, and from then on every call fails
 * at once with -EIO and the reason kept in the copier's why[] (the plugin reports it).
 * "--sim" runs the copier on the software GPU model instead of CUDA (hal/sim/gpu.c:
 * device memory is a memfd, exported and imported the same ways), which is how CI
 * tests all of this without a GPU (tests/nccl/test_copier.c).
 */
#ifndef DVX_PLUGINS_NCCL_COPIER_H
#define DVX_PLUGINS_NCCL_COPIER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <dvx/hal/gpu.h>

#define DVXN_COP_MAGIC 0x64767863u	/* "dvxc" */
#define DVXN_COP_FD 3			/* the copier's end of the socket */
#define DVXN_COP_MAX_MAPS 4096		/* allocations the copier holds at once */

/* requests (struct dvxn_cop_req.op); each but QUIT is answered by one dvxn_cop_rep */
enum dvxn_cop_op {
	DVXN_COP_HELLO = 1,	/* len: the staging area's bytes; its memfd rides along */
	DVXN_COP_MAP = 2,	/* ordinal, base, len, h: import an allocation (an FD handle's
				 * descriptor rides along); answered with its id */
	DVXN_COP_UNMAP = 3,	/* id */
	DVXN_COP_TO_STAGE = 4,	/* id, off, len, stage_off: device -> staging */
	DVXN_COP_FROM_STAGE = 5,/* id, off, len, stage_off: staging -> device */
	DVXN_COP_QUIT = 6,	/* not answered: the copier ends */
};

/* one request: fixed size, one datagram */
struct dvxn_cop_req {
	uint32_t magic;
	uint32_t op;
	uint32_t id;		/* UNMAP, copies: the mapping */
	int32_t ordinal;	/* MAP: the device */
	uint64_t base;		/* MAP: the allocation's first byte in the caller's space */
	uint64_t len;		/* HELLO: staging bytes; MAP: the allocation's; copies: bytes */
	uint64_t off;		/* copies: offset into the allocation */
	uint64_t stage_off;	/* copies: offset into the staging area */
	struct dvx_hal_gpu_handle h;	/* MAP: the handle (fd: -1; the descriptor rides) */
};

/* one answer: rc 0 or a negative errno, msg saying why when not 0 */
struct dvxn_cop_rep {
	uint32_t magic;
	uint32_t op;		/* the request's */
	int32_t rc;
	uint32_t id;		/* MAP: the mapping's id */
	char msg[160];
};

/**
 * struct dvxn_copier - the caller's side of one dvx-copier process.
 * @lock:	one request at a time
 * @pid:	the copier (0: none)
 * @sock:	the caller's end of the socket
 * @stage:	the staging area, @stage_len bytes, mapped here and in the copier
 * @timeout_ns:	bound on one answer
 * @dead:	set once the copier failed: every call is -EIO from then on
 * @copies, @bytes: copies made and their bytes
 * @why:	the last failure, in words
 */
struct dvxn_copier {
	pthread_mutex_t lock;
	pid_t pid;
	int sock;
	void *stage;
	size_t stage_len;
	uint64_t timeout_ns;
	int dead;
	uint64_t copies, bytes;
	char why[256];
};

/* a mapping of one allocation in the copier */
struct dvxn_copier_map {
	uint32_t id;
	uint64_t base, len;	/* the allocation, in the caller's addresses */
};

/*
 * start @path ("--sim" passed when @sim) with a staging area of @stage_len bytes, and
 * wait (up to @timeout_ns) for its hello: 0, or a negative errno with c->why saying why
 * (-ENOENT: no such program; -EIO: it ended or answered nonsense; -ETIMEDOUT)
 */
int dvxn_copier_start(struct dvxn_copier *c, const char *path, int sim, size_t stage_len,
		      uint64_t timeout_ns);
/*
 * map the allocation around [@dptr, @dptr + @len) into the copier: looked up and exported
 * through @gpu (a GPU of the caller's with the memory's device current, or any for the
 * software GPUs); the copier maps an allocation once however often it is asked, and
 * keeps it until as many unmaps. 0 with *@m set, or a negative errno with c->why set
 * (-ENOENT: not device memory; -EOPNOTSUPP: the allocation can be shared neither by a
 * legacy IPC handle nor a POSIX fd; -EINVAL: the range runs past its allocation)
 */
int dvxn_copier_map(struct dvxn_copier *c, struct dvx_hal_gpu *gpu, uint64_t dptr, uint64_t len,
		    struct dvxn_copier_map *m);
int dvxn_copier_unmap(struct dvxn_copier *c, const struct dvxn_copier_map *m);
/* copy @len bytes at device address @dptr (inside @m) to @dst, or @src to it: 0 when the
 * bytes are in place, else a negative errno with c->why set */
int dvxn_copier_read(struct dvxn_copier *c, const struct dvxn_copier_map *m, void *dst,
		     uint64_t dptr, uint64_t len);
int dvxn_copier_write(struct dvxn_copier *c, const struct dvxn_copier_map *m, uint64_t dptr,
		      const void *src, uint64_t len);
/* ask the copier to end, wait for it (bounded; then killed) and unmap the staging area */
void dvxn_copier_end(struct dvxn_copier *c);

/* the copier's program: @env when set; else dvx-copier in the folder of the shared object
 * that holds this code (the plugin), or of the running program, or in ../libexec/dvx/ or
 * ../plugins/nccl/ (a build tree) from either: 0 with @buf filled, -ENOENT if none */
int dvxn_copier_path(const char *env, char *buf, size_t len);

#endif /* DVX_PLUGINS_NCCL_COPIER_H */
