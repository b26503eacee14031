// SPDX-License-Identifier: MIT
/*
 * core/bootstrap/mpi/env.c - what the MPI adapter offers with or without MPI: its memory
 * size and whether a launcher started this process (docs/bootstrap.md, Adapter 3).
 */
#include <stdlib.h>

#include <dvx/bootstrap/bootstrap.h>

size_t dvx_bootstrap_mpi_mem_size(int nranks)
{
	if (nranks < 1 || nranks > DVX_BOOTSTRAP_MAX_RANKS)
		return 0;
	return DVX_BOOTSTRAP_MPI_MEM_SIZE(nranks);
}

bool dvx_bootstrap_mpi_launched(void)
{
	/* Open MPI's mpirun, PMIx launchers (srun, prterun), PMI-1/2 (MPICH's Hydra, srun) */
	static const char *const vars[] = {
		"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK",
	};
	size_t i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (getenv(vars[i]))
			return true;
	return false;
}
