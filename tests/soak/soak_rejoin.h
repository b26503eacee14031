/* SPDX-License-Identifier: MIT */
/*
 * tests/soak/soak_rejoin.h - the process soak's last phase: the killed rank started
 * again as a new process rejoins the messaging layer of the survivors (docs/testing.md,
 * "The process soak").
 */
#ifndef DVX_TEST_SOAK_REJOIN_H
#define DVX_TEST_SOAK_REJOIN_H

#include <stdint.h>

#include <dvx/msg/msg.h>

#include "../lib/p2p_world.h"

/* what both ends run: @rounds messages each way per survivor, 0 ... @maxlen bytes */
void soak_rejoin_setup(uint32_t rounds, uint64_t maxlen);

/*
 * soak_rejoin_survivor() - a survivor's half, on its messaging context @m (the soak's,
 * its comms to the dead rank failed): a listen comm whose handle it leaves in the run's
 * folder; the restarted rank @victim's wire joined and its handle connected; every
 * round a message each way, checked byte by byte and by length; all closed. @progress
 * (with @arg) is called while it waits. Adds the messages and bytes to @ops and @bytes.
 */
void soak_rejoin_survivor(struct wrank *r, struct dvx_msg *m, int victim,
			  void (*progress)(void *arg), void *arg, uint64_t *ops, uint64_t *bytes);

/* soak_rejoin_restarted() - the restarted rank's body (world_cfg.restart) */
void soak_rejoin_restarted(struct wrank *r);

#endif
