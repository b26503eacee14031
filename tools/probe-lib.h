/* SPDX-License-Identifier: MIT */
/*
 * tools/probe-lib.h - dvx-probe's logic, driven through any hal backend so the tests
 * can run it against the mock.
 */
#ifndef DVX_TOOLS_PROBE_LIB_H
#define DVX_TOOLS_PROBE_LIB_H

#include <stdio.h>

#include <dvx/hal.h>

/* exit statuses */
/* the tools' convention (tools/tool.h) */
#define DVX_PROBE_OK 0		/* mlx5 devices listed, every probe step answered */
#define DVX_PROBE_ERROR 1	/* a hal call failed (reported in the output) */
#define DVX_PROBE_USAGE 2	/* bad arguments */
#define DVX_PROBE_NO_DEVICE 3	/* no mlx5 device (or none matching --dev), or no rdma-core */

/* warn when RLIMIT_MEMLOCK is below this (Docker's default is 64 MiB; registrations of
 * real buffers need more) */
#define DVX_PROBE_MEMLOCK_WARN (64ull << 20)

/**
 * struct dvx_probe_opts - what to probe and how to say it.
 * @dev:	only this device (ibdev name or PCI address), NULL for every one
 * @json:	one JSON document instead of the table
 * @out:	where the report goes (stdout if NULL)
 * @err:	where messages go (stderr if NULL)
 * @memlock_warn: warn below this many bytes of RLIMIT_MEMLOCK (0: the default)
 */
struct dvx_probe_opts {
	const char *dev;
	int json;
	FILE *out;
	FILE *err;
	uint64_t memlock_warn;
};

/**
 * dvx_probe_run() - list the mlx5 devices @hal knows and report on each: identity,
 * nearest GPU, firmware, the capabilities dvx relies on (QUERY_HCA_CAP), ports and
 * GIDs, and the process's RLIMIT_MEMLOCK. A device that fails to open or to answer
 * a query is listed with the failure (errno, DEVX status and syndrome).
 * @hal:	the backend (dvx_hal_linux(), or a mock)
 * @opts:	options
 *
 * Every device opened is closed before returning.
 *
 * Return: DVX_PROBE_OK, DVX_PROBE_ERROR or DVX_PROBE_NO_DEVICE.
 */
int dvx_probe_run(const struct dvx_hal *hal, const struct dvx_probe_opts *opts);

/**
 * dvx_probe_main() - dvx-probe's command line: parse @argv, then dvx_probe_run().
 * @hal:	the backend; NULL means libdvx was built without rdma-core (says so,
 *		returns DVX_PROBE_NO_DEVICE)
 * @argc:	argument count
 * @argv:	arguments (--json, --dev NAME|PCI, --help)
 * @out:	report and --help text
 * @err:	messages
 *
 * Return: the exit status.
 */
int dvx_probe_main(const struct dvx_hal *hal, int argc, char **argv, FILE *out, FILE *err);

#endif
