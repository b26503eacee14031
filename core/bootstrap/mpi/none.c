// SPDX-License-Identifier: MIT
/*
 * core/bootstrap/mpi/none.c - the MPI adapter's entry points in a build without
 * CONFIG_DVX_MPI: the calls exist, so a program links against any configuration, and say
 * that MPI is not there.
 */
#include <errno.h>

#include <dvx/bootstrap/bootstrap.h>

int dvx_bootstrap_mpi_init(struct dvx_bootstrap *bs, const struct dvx_bootstrap_mpi_cfg *attr,
			   void *mem, size_t mem_size)
{
	(void)bs;
	(void)attr;
	(void)mem;
	(void)mem_size;
	return -ENOSYS;
}

int dvx_bootstrap_mpi_error_class(const struct dvx_bootstrap *bs)
{
	(void)bs;
	return -EINVAL;
}
