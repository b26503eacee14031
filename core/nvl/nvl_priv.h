/* SPDX-License-Identifier: MIT */
/*
 * core/nvl/nvl_priv.h - private to core/nvl: the descriptor exchange's steps, shared by
 * dvx_fdx_allgather() and the NVL buffer exchange (which sends the descriptor
 * exchange's record inside its own).
 */
#ifndef DVX_CORE_NVL_PRIV_H
#define DVX_CORE_NVL_PRIV_H

#include <dvx/hal.h>
#include <dvx/bootstrap/bootstrap.h>

/* what a rank publishes for the descriptor exchange (little-endian, 32 bytes) */
struct fdx_rec {
	int32_t pid;		/* process, and user, a listener hands descriptors to */
	uint32_t uid;
	uint32_t seq;		/* names the listener: "dvx-fdx-<pid>-<seq>" */
	uint32_t has_fd;
	uint64_t rsvd[2];
};

/* one rank's side while it runs */
struct fdx_side {
	const struct dvx_hal *hal;
	int lfd;		/* the listener, -1 without a descriptor to offer */
	int fd;			/* the descriptor offered */
	struct fdx_rec rec;	/* what this rank publishes */
};

/*
 * dvx_fdx_open() - start offering @fd (-1: offer nothing, take only): learn who this
 * process is and listen on a fresh abstract name. Return: 0 or the hal's error.
 */
int dvx_fdx_open(struct fdx_side *x, const struct dvx_hal *hal, int fd, struct dvx_diag *diag);

/*
 * dvx_fdx_run() - with every rank's record (@recs, @stride bytes apart, by rank of @bs):
 * fetch a descriptor from every other rank that offers one into @fds[r] (-1
 * elsewhere), and hand ours to every other rank, until @deadline_ns. On failure
 * every descriptor it received is closed and @fds is all -1.
 */
int dvx_fdx_run(struct fdx_side *x, const struct dvx_bootstrap *bs, const void *recs, size_t stride,
	    int32_t *fds, uint64_t deadline_ns, struct dvx_diag *diag);

/* dvx_fdx_close() - stop listening (the offered descriptor stays the caller's) */
void dvx_fdx_close(struct fdx_side *x);

#endif /* DVX_CORE_NVL_PRIV_H */
