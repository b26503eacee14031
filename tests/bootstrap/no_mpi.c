// SPDX-License-Identifier: MIT
/* Stands in for bootstrap-mpi-test when dvx was configured without MPI (CONFIG_DVX_MPI). */
#include <stdio.h>

int main(void)
{
	printf("MPI not found when configured: install Open MPI (scripts/setup.sh --deps-only: "
	       "openmpi-bin libopenmpi-dev) and run 'make defconfig check' to run the MPI tests\n");
	return 77;
}
