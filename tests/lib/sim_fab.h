/* SPDX-License-Identifier: MIT */
/*
 * tests/lib/sim_fab.h - a software-NIC fabric of default NICs for a test, and its end
 * with the check that nothing was left in it.
 */
#ifndef DVX_TEST_SIM_FAB_H
#define DVX_TEST_SIM_FAB_H

#include <dvx/hal/sim.h>

/* @n NICs (dvx_sim_nic_cfg_default(@first + i): a process of a wire gives its rank)
 * on a fabric of @fc's capacities (max_nics is set to @n), its storage from the heap in
 * *@mem: 0 or a negative errno */
int dvx_test_fabric(const struct dvx_sim_fabric_cfg *fc, int first, int n, void **mem,
		    struct dvx_sim_fabric **fab);

/* finish the fabric and free its storage: 0; -EBUSY (printed, with @who) when it
 * still counts live objects; dvx_sim_fini()'s error */
int dvx_test_fabric_fini(struct dvx_sim_fabric *fab, void *mem, const char *who);

#endif
