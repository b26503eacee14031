/* SPDX-License-Identifier: MIT */
/*
 * tools/tool.h - what every dvx tool shares: one exit-status convention and --version.
 *
 *   0  done (for dvx-loop: every row passed or was skipped for a missing feature)
 *   1  failed: input that cannot be decoded, a device error, a failed row
 *   2  usage error: an unknown option, a bad value, a missing argument
 *   3  nothing found: no mlx5 device, no device of the name given
 */
#ifndef DVX_TOOLS_TOOL_H
#define DVX_TOOLS_TOOL_H

#include <stdio.h>

#include <dvx/version.h>

#define DVX_EXIT_OK 0
#define DVX_EXIT_FAIL 1
#define DVX_EXIT_USAGE 2
#define DVX_EXIT_NOTFOUND 3

/* the text every tool's --help ends with */
#define DVX_EXIT_HELP \
	"Exit status: 0 done, 1 failed, 2 usage error, 3 nothing found (no such device).\n"

/* dvx_tool_version() - print "PROG (dvx) VERSION" to @f. */
static inline void dvx_tool_version(FILE *f, const char *prog)
{
	fprintf(f, "%s (dvx) %s\n", prog, DVX_VERSION);
}

#endif
