// SPDX-License-Identifier: MIT
/*
 * tools/dvx-probe.c - list this host's mlx5 devices and what dvx needs of them.
 * The logic is in probe-lib.c, so the tests can run it against the mock hal.
 */
#include <stdio.h>

#include <dvx/hal.h>

#include "probe-lib.h"

int main(int argc, char **argv)
{
	return dvx_probe_main(dvx_hal_linux(), argc, argv, stdout, stderr);
}
