// SPDX-License-Identifier: MIT
/*
 * hal/cuda_none.c - dvx_hal_cuda() of a libdvx built without CUDA (CONFIG_DVX_GPU=n):
 * there is no CUDA backend, and callers are told so by a NULL instance.
 */
#include <stddef.h>

#include <dvx/hal.h>

const struct dvx_hal *dvx_hal_cuda(void)
{
	return NULL;
}
