// SPDX-License-Identifier: MIT
/*
 * examples/open-sim.c - the smallest dvx program: a software NIC (no hardware needed),
 * opened the way a ConnectX is opened, its port and PD reported, closed again.
 * Everything lives in memory this program owns: the fabric's region, the NIC object.
 *
 *   cc open-sim.c $(pkg-config --cflags --libs dvx)                  (shared deps)
 *   cc -static open-sim.c $(pkg-config --static --cflags --libs dvx)  (fully static)
 *
 * Every dvx call returns 0 or a negative errno; on failure the object's diag says why.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dvx/nic/nic.h>
#include <dvx/hal/sim.h>

int main(void)
{
	struct dvx_sim_fabric_cfg fc;
	struct dvx_sim_nic_cfg nc;
	struct dvx_sim_fabric *fab;
	struct dvx_nic_cfg na;
	struct dvx_nic nic;
	size_t sz;
	void *mem;
	int err;

	/* the software NIC: one fabric with one NIC, in a region of ours */
	dvx_sim_fabric_cfg_default(&fc);
	fc.max_nics = 1;
	sz = dvx_sim_fabric_mem_size(&fc);
	mem = calloc(1, sz);
	if (!mem)
		return 1;
	err = dvx_sim_fabric_init(mem, sz, &fc, &fab);
	if (err) {
		fprintf(stderr, "dvx_sim_fabric_init: %d\n", err);
		return 1;
	}
	dvx_sim_nic_cfg_default(&nc, 0);
	if (dvx_sim_add_nic(fab, &nc) != 0 || dvx_sim_start(fab)) {
		fprintf(stderr, "the software NIC did not start\n");
		return 1;
	}

	/* open it through the hal, as dvx opens hardware */
	memset(&na, 0, sizeof(na));	/* zero means the default for every field */
	na.name = "sim_0";		/* (the GID is chosen: RoCE v2, routable first) */
	memset(&nic, 0, sizeof(nic));
	err = dvx_nic_open(&nic, dvx_sim_hal(fab), &na);
	if (err) {
		fprintf(stderr, "dvx_nic_open: %d\n", err);
		return 1;
	}
	printf("opened %s: port %u, link layer %u, PD %u, EQ %u, GID index %u\n", na.name,
	       nic.port, nic.link_layer, nic.pdn, nic.eqn, nic.gid_index);

	err = dvx_nic_close(&nic);
	if (err)
		fprintf(stderr, "dvx_nic_close: %d\n", err);
	dvx_sim_stop(fab);
	if (dvx_sim_fini(fab))
		err = 1;
	free(mem);
	return err ? 1 : 0;
}
