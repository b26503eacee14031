// SPDX-License-Identifier: MIT
/*
 * tests/lib/sim_fab.c - see sim_fab.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_fab.h"

int dvx_test_fabric(const struct dvx_sim_fabric_cfg *fc, int first, int n, void **mem,
		    struct dvx_sim_fabric **fab)
{
	struct dvx_sim_fabric_cfg c = *fc;
	size_t sz;
	int i, err;

	c.max_nics = (uint32_t)n;
	sz = dvx_sim_fabric_mem_size(&c);
	*mem = calloc(1, sz);
	if (!*mem)
		return -ENOMEM;
	err = dvx_sim_fabric_init(*mem, sz, &c, fab);
	for (i = 0; i < n && !err; i++) {
		struct dvx_sim_nic_cfg nc;

		dvx_sim_nic_cfg_default(&nc, (unsigned)(first + i));
		if (dvx_sim_add_nic(*fab, &nc) < 0)
			err = -ENOSPC;
	}
	return err;
}

int dvx_test_fabric_fini(struct dvx_sim_fabric *fab, void *mem, const char *who)
{
	struct dvx_sim_stats s;
	unsigned k;
	int err = 0, e;

	if (fab) {
		memset(&s, 0, sizeof(s));
		dvx_sim_get_stats(fab, &s);
		for (k = 0; k < sizeof(s.live) / sizeof(s.live[0]) && !err; k++)
			if (s.live[k]) {
				fprintf(stderr, "%s: the sim still holds %u objects of kind %u\n", who,
					(unsigned)s.live[k], k);
				err = -EBUSY;
			}
		e = dvx_sim_fini(fab);
		if (e && !err)
			err = e;
	}
	free(mem);
	return err;
}
