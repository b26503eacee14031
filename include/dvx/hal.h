/* SPDX-License-Identifier: MIT */
/*
 * dvx/hal.h - the whole hardware abstraction layer: the backend instance and its
 * NIC, host and GPU tables (dvx/hal/hal.h, nic.h, host.h, gpu.h), and the tracing
 * backend (dvx/hal/trace.h).
 */
#ifndef DVX_HAL_H
#define DVX_HAL_H

#include <dvx/hal/hal.h>
#include <dvx/hal/nic.h>
#include <dvx/hal/host.h>
#include <dvx/hal/gpu.h>
#include <dvx/hal/trace.h>

#endif /* DVX_HAL_H */
