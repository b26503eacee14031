/* SPDX-License-Identifier: MIT */
/*
 * tests/lib/sim_trace.h - a dvx_sim_trace_fn that prints what the sim executes,
 * decoded with the project's mlx5 decoder (dvx/mlx5/decode.h). hal/sim itself never
 * includes dvx/mlx5/: the trace hands out raw bytes and this decodes them.
 */
#ifndef DVX_TEST_SIM_TRACE_H
#define DVX_TEST_SIM_TRACE_H

#include <stdio.h>

#include <dvx/hal/sim.h>

/**
 * struct dvx_test_sim_trace - state of the printer.
 * @out:	where to print (NULL: count only)
 * @wqes:	WQEs seen
 * @cqes:	CQEs seen
 * @bad:	WQEs the decoder refused (-EBADMSG)
 */
struct dvx_test_sim_trace {
	FILE *out;
	unsigned wqes;
	unsigned cqes;
	unsigned bad;
};

/** dvx_test_sim_trace_print() - the callback; @arg is a struct dvx_test_sim_trace. */
void dvx_test_sim_trace_print(void *arg, uint32_t nic, uint32_t qpn, int is_cqe,
			      const void *bytes, size_t len);

#endif
