/* SPDX-License-Identifier: MIT */
/*
 * tools/replay.h - replaying a trace of the tracing backend (dvx/hal/trace.h) on the
 * software NIC: the engine of dvx-replay, linked by its tests too (docs/trace.md).
 */
#ifndef DVX_TOOLS_REPLAY_H
#define DVX_TOOLS_REPLAY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* what a replay went through */
struct replay_stats {
	uint64_t records;
	uint64_t calls;
	uint64_t doorbells;
	uint64_t wqebbs;
	uint64_t recvs;
	uint64_t cqes;
};

enum {
	REPLAY_DUMP = 1u << 0,		/* print every record, decoded, and do not replay */
	REPLAY_VERBOSE = 1u << 1,	/* print every record as it is replayed */
};

/* replay_run() answers */
enum {
	REPLAY_SAME = 0,		/* the software NIC did what the trace says */
	REPLAY_DIVERGED = 1,		/* the first difference was printed */
	REPLAY_BAD_TRACE = 2,		/* not a trace, a version not known, cut short */
	REPLAY_NO_SIM = 3,		/* the software NIC could not be set up */
};

/*
 * replay_run() - check a trace (@len bytes at @buf) and replay it on a fresh software
 * NIC, or only print it (REPLAY_DUMP). Messages and the first divergence, decoded with
 * dvx's decoders, go to @out. Returns REPLAY_*; @st (may be NULL) says how far it got.
 */
int replay_run(const uint8_t *buf, size_t len, unsigned flags, FILE *out,
	       struct replay_stats *st);

#endif
