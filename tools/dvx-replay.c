// SPDX-License-Identifier: MIT
/*
 * dvx-replay - replay a trace of the tracing backend on the software NIC and report the
 * first divergence (docs/trace.md, docs/tools.md).
 *
 *   dvx-replay [--verbose] FILE       replay; exit 0 when the software NIC did the same
 *   dvx-replay --dump FILE            print every record, decoded; no replay
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "tool.h"

static const char *prog = "dvx-replay";

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [--verbose] FILE\n"
		"       %s --dump FILE\n"
		"Replay a trace recorded through dvx's tracing backend (dvx-loop --record FILE)\n"
		"on the software NIC: every command, doorbell and receive again, every CQE\n"
		"awaited and compared; the first divergence (a command one side refused, a\n"
		"different or missing CQE, an extra one, a doorbell fault, a QP in another\n"
		"state) is printed, decoded. FILE - reads standard input.\n"
		"  --dump     print every record, decoded (WQEs and CQEs field by field), and\n"
		"             replay nothing\n"
		"  --verbose  print every record as it is replayed\n"
		"  --help     this text\n"
		"  --version  the version\n"
		"Exit status: 0 no divergence (or the trace printed), 1 a divergence or a\n"
		"trace that cannot be read, 2 usage error.\n",
		prog, prog);
}

/* the whole file in memory (traces of a bring-up run are small) */
static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	uint8_t *buf = NULL, *nb;
	size_t cap = 0, n;

	*len = 0;
	if (!f)
		return NULL;
	for (;;) {
		if (*len == cap) {
			cap = cap ? cap * 2 : 1 << 20;
			nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
		}
		n = fread(buf + *len, 1, cap - *len, f);
		*len += n;
		if (!n)
			break;
	}
	if (f != stdin)
		fclose(f);
	return buf;
}

int main(int argc, char **argv)
{
	struct replay_stats st;
	const char *path = NULL;
	unsigned flags = 0;
	uint8_t *buf;
	size_t len;
	int i, rc;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return DVX_EXIT_OK;
		} else if (!strcmp(argv[i], "--version")) {
			dvx_tool_version(stdout, prog);
			return DVX_EXIT_OK;
		} else if (!strcmp(argv[i], "--dump")) {
			flags |= REPLAY_DUMP;
		} else if (!strcmp(argv[i], "--verbose") || !strcmp(argv[i], "-v")) {
			flags |= REPLAY_VERBOSE;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "%s: unknown option %s\n", prog, argv[i]);
			usage(stderr);
			return DVX_EXIT_USAGE;
		} else if (path) {
			fprintf(stderr, "%s: one trace at a time\n", prog);
			return DVX_EXIT_USAGE;
		} else {
			path = argv[i];
		}
	}
	if (!path) {
		fprintf(stderr, "%s: which trace? (a FILE, or - for standard input)\n", prog);
		usage(stderr);
		return DVX_EXIT_USAGE;
	}
	buf = slurp(path, &len);
	if (!buf) {
		fprintf(stderr, "%s: cannot read %s: %s\n", prog, path, strerror(errno));
		return DVX_EXIT_FAIL;
	}
	rc = replay_run(buf, len, flags, stdout, &st);
	free(buf);
	if (rc == REPLAY_SAME && !(flags & REPLAY_DUMP))
		printf("replayed %llu records: %llu calls, %llu doorbells (%llu WQEBBs), %llu "
		       "receive batches, %llu CQEs: no divergence\n",
		       (unsigned long long)st.records, (unsigned long long)st.calls,
		       (unsigned long long)st.doorbells, (unsigned long long)st.wqebbs,
		       (unsigned long long)st.recvs, (unsigned long long)st.cqes);
	return rc == REPLAY_SAME ? DVX_EXIT_OK : DVX_EXIT_FAIL;
}
