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
 * Failure: every wait is bounded (the timeout given at start; the copier bounds its
 * own stream waits below it). A copier that does not answer in time is killed; one
 * that ended is reaped (both bounded: a process stuck in the driver is left to a later
 * reap); a copy the copier could not make ends the copier too (a DMA still queued on
 * its stream must not land on the next copy's staging bytes). From then on every call
 * fails at once with -EIO (an unmap answers 0: nothing is mapped any more), and the
 * reason is kept (dvxn_copier_why()). The copier ignores the terminal's and the job
 * scheduler's signals (SIGINT, SIGTERM, SIGHUP, SIGQUIT): it ends when its socket
 * closes, that is when the caller ends or closes it, or when its parent is gone. After
 * fork() the child's copy of a struct dvxn_copier is inert: only the process that
 * started the copier talks to it (dvxn_copier_forked() closes the child's descriptor).
 * "--sim" runs the copier on the software GPU model instead of CUDA (hal/sim/gpu.c:
 * device memory is a memfd, exported and imported the same ways), which is how CI
 * tests all of this without a GPU (tests/nccl/test_copier.c, and the plugin's
 * DVX_NET_GDR=hostproc over memfd-backed host memory).
 */
#ifndef DVX_PLUGINS_NCCL_COPIER_H
#define DVX_PLUGINS_NCCL_COPIER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <dvx/hal/gpu.h>

#define DVXN_COP_MAGIC 0x64767863u	/* "dvxc" */
#define DVXN_COP_VERSION 1u		/* HELLO carries it; the copier answers its own */
#define DVXN_COP_FD 3			/* the copier's end of the socket */
#define DVXN_COP_MAX_MAPS 4096		/* allocations the copier holds at once: 1 << 12, */
#define DVXN_COP_SLOT_BITS 12		/* an id is (generation << 12) | slot */

/* requests (struct dvxn_cop_req.op); each but QUIT is answered by one dvxn_cop_rep */
enum dvxn_cop_op {
	DVXN_COP_HELLO = 1,	/* id: DVXN_COP_VERSION, len: the staging area's bytes, off:
				 * the bound on a copy (ns); its memfd rides along */
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
 * @lock:	one request at a time (and @why)
 * @owner:	the process that started the copier: the only one that talks to it
 * @pid:	the copier (0: none, or reaped)
 * @pidfd:	a pidfd of it where the kernel has them (signals never reach a recycled
 *		pid), else -1
 * @sock:	the caller's end of the socket
 * @stage:	the staging area, @stage_len bytes, mapped here and in the copier
 * @timeout_ns:	bound on one answer
 * @dead:	set once the copier failed: every call is -EIO from then on
 * @copies:	copies made
 * @why:	the last failure, in words (read it with dvxn_copier_why())
 */
struct dvxn_copier {
	pthread_mutex_t lock;
	pid_t owner;
	pid_t pid;
	int pidfd;
	int sock;
	void *stage;
	size_t stage_len;
	uint64_t timeout_ns;
	int dead;
	uint64_t copies;
	char why[256];
};

/**
 * struct dvxn_copier_mem - device memory exported for the copier.
 * @ordinal:	its device
 * @base, @len:	the allocation, in the caller's addresses
 * @h:		its handle (an FD handle's descriptor is the holder's: dvxn_copier_map()
 *		closes it, or dvxn_copier_mem_drop() when not mapped)
 */
struct dvxn_copier_mem {
	int32_t ordinal;
	uint64_t base, len;
	struct dvx_hal_gpu_handle h;
};

/* a mapping of one allocation in the copier */
struct dvxn_copier_map {
	uint32_t id;
	uint64_t base, len;	/* the allocation, in the caller's addresses */
};

/*
 * start @path ("--sim" passed when @sim) with a staging area of @stage_len bytes, and
 * wait (up to @timeout_ns) for its hello: 0, or a negative errno with the reason kept
 * (-ENOENT: no such program; -EINVAL: bad arguments; -EIO: it ended, did not answer in
 * time or answered nonsense; another errno of the system's)
 */
int dvxn_copier_start(struct dvxn_copier *c, const char *path, int sim, size_t stage_len,
		      uint64_t timeout_ns);
/*
 * dvxn_copier_export() - the allocation around [@dptr, @dptr + @len) as the copier can
 * map it, looked up and exported through @gpu (a GPU of the caller's with a context
 * current; CUDA or the software GPUs): a legacy IPC handle for cuMemAlloc memory, a
 * POSIX fd for a VMM allocation made exportable, else a fabric handle. 0 with *@mem
 * set, or a negative errno with @why saying why (-ENOENT: not device memory;
 * -EOPNOTSUPP: the allocation cannot be shared; -EINVAL: the range runs past its
 * allocation; the driver's error). Takes no lock of the copier's.
 */
int dvxn_copier_export(struct dvx_hal_gpu *gpu, uint64_t dptr, uint64_t len,
		       struct dvxn_copier_mem *mem, char *why, size_t wlen);
/*
 * dvxn_copier_export_host() - the same for host memory mapped shared from a memfd this
 * process holds open (what tests use as device memory with "--sim"): the mapping around
 * @dptr (from file offset 0) as an FD handle of device 0, the memfd opened again through
 * /proc/self/fd (no descriptor of another thread's is touched). -ENOENT when @dptr is
 * not in such a mapping.
 */
int dvxn_copier_export_host(uint64_t dptr, uint64_t len, struct dvxn_copier_mem *mem,
			    char *why, size_t wlen);
/* close what an export holds when it is not mapped */
void dvxn_copier_mem_drop(struct dvxn_copier_mem *mem);
/*
 * dvxn_copier_map() - map @mem into the copier (its descriptor closed here, mapped or
 * not). An allocation shared by IPC handle is mapped once however often it is asked
 * (the same handle bytes, base and length) and kept until as many unmaps; one shared
 * by fd is mapped anew each time. 0 with *@m set, or a negative errno with the reason
 * kept (-EIO: the copier is gone; the copier's answer otherwise: -ENOSPC when
 * DVXN_COP_MAX_MAPS are mapped)
 */
int dvxn_copier_map(struct dvxn_copier *c, struct dvxn_copier_mem *mem, struct dvxn_copier_map *m);
/* undo one dvxn_copier_map(): 0 (also when the copier is gone), or -EINVAL (not mapped) */
int dvxn_copier_unmap(struct dvxn_copier *c, const struct dvxn_copier_map *m);
/* copy @len bytes at device address @dptr (inside @m) to @dst, or @src to it: 0 when the
 * bytes are in place; -EINVAL (outside @m: the copier is not asked); -EIO (the copier
 * failed, now or before: it is ended) */
int dvxn_copier_read(struct dvxn_copier *c, const struct dvxn_copier_map *m, void *dst,
		     uint64_t dptr, uint64_t len);
int dvxn_copier_write(struct dvxn_copier *c, const struct dvxn_copier_map *m, uint64_t dptr,
		      const void *src, uint64_t len);
/* the last failure's reason into @buf (empty when none) */
void dvxn_copier_why(struct dvxn_copier *c, char *buf, size_t len);
/* ask the copier to end, wait for it (bounded; then killed) and unmap the staging area */
void dvxn_copier_end(struct dvxn_copier *c);
/* in a child after fork(): let go of the parent's copier (no request, no signal), even
 * if a thread of the parent held the lock at the fork */
void dvxn_copier_forked(struct dvxn_copier *c);

/* the copier's program: @env when set; else dvx-copier in the folder of the shared object
 * that holds this code (the plugin), or of the running program, or in ../libexec/dvx/ or
 * ../plugins/nccl/ (a build tree) from either: 0 with @buf filled (an absolute path),
 * -ENOENT if none */
int dvxn_copier_path(const char *env, char *buf, size_t len);

#endif /* DVX_PLUGINS_NCCL_COPIER_H */
