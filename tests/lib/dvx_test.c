// SPDX-License-Identifier: MIT
#include <limits.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dvx_test.h"

#include <ctype.h>

static void dump(const char *tag, const uint8_t *b, size_t n, size_t mark)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (i % 16 == 0)
			print_error("%s %04zx:", tag, i);
		print_error(i == mark ? "[%02x]" : " %02x", b[i]);
		if (i % 16 == 15 || i + 1 == n)
			print_error("\n");
	}
}

void dvx_test_bytes_equal(const void *got, const void *want, size_t n, const char *what,
			  const char *file, int line)
{
	const uint8_t *g = got, *w = want;
	size_t i;

	for (i = 0; i < n; i++)
		if (g[i] != w[i])
			break;
	if (i == n)
		return;
	print_error("%s: %zu bytes differ first at offset %zu (0x%02x, want 0x%02x)\n", what, n,
		    i, g[i], w[i]);
	dump("got ", g, n, i);
	dump("want", w, n, i);
	_fail(file, line);
}

size_t dvx_test_hex(const char *hex, uint8_t *out, size_t max)
{
	size_t n = 0;
	int hi = -1;

	for (; *hex; hex++) {
		int v;

		if (isspace((unsigned char)*hex))
			continue;
		if (!isxdigit((unsigned char)*hex))
			continue;
		v = isdigit((unsigned char)*hex) ? *hex - '0' : (tolower((unsigned char)*hex) - 'a' + 10);
		if (hi < 0) {
			hi = v;
		} else {
			if (n < max)
				out[n] = (uint8_t)(hi << 4 | v);
			n++;
			hi = -1;
		}
	}
	return n;
}

void *dvx_test_alloc(size_t bytes, int fill)
{
	size_t n = bytes < 64 ? 64 : (bytes + 63) & ~(size_t)63;
	void *p = aligned_alloc(64, n);

	assert_non_null(p);
	memset(p, fill, n);
	return p;
}

void dvx_test_free(void *p)
{
	free(p);
}

int dvx_test_fork_all(int n, int (*fn)(int rank, int n, void *arg), void *arg)
{
	pid_t pid[64];
	int r, st, ret = 0;

	if (n < 1 || n > 64)
		return 98;
	for (r = 0; r < n; r++) {
		fflush(NULL);
		pid[r] = fork();
		if (pid[r] == 0)
			_exit(fn(r, n, arg));
	}
	for (r = 0; r < n; r++) {
		if (pid[r] < 0) {
			ret = ret ? ret : 97;
		} else if (waitpid(pid[r], &st, 0) != pid[r] || !WIFEXITED(st)) {
			if (WIFSIGNALED(st))
				fprintf(stderr, "child %d: killed by signal %d\n", r, WTERMSIG(st));
			ret = ret ? ret : 99;
		} else if (WEXITSTATUS(st) && !ret) {
			ret = WEXITSTATUS(st);
		}
	}
	return ret;
}

int dvx_test_tools_dir(const char *argv0, char *dir, size_t n)
{
	const char *env = getenv("DVX_TOOLS_DIR");
	char self[PATH_MAX], *slash;
	int i;

	if (env && *env) {
		snprintf(dir, n, "%s", env);
		return 0;
	}
	if (!argv0 || !realpath(argv0, self))
		return -1;
	for (i = 0; i < 2; i++) {	/* the binary, then tests/ */
		slash = strrchr(self, '/');
		if (!slash)
			return -1;
		*slash = '\0';
	}
	snprintf(dir, n, "%.*s/tools", PATH_MAX - 16, self);
	return 0;
}

int dvx_test_mpirun_here(const char *srctree, int quiet)
{
	char cmd[PATH_MAX + 48];

	snprintf(cmd, sizeof(cmd), "%s/scripts/mpirun.sh --check%s", srctree,
		 quiet ? " >/dev/null" : "");
	return system(cmd) == 0;
}

int dvx_test_mpirun_self(const char *srctree, int np, const char *env, const char *args,
			 int tail, int (*failed)(const char *log))
{
	char self[PATH_MAX], log[64], cmd[3 * PATH_MAX + 256];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int rc, fd;

	if (n <= 0)
		return -1;
	self[n] = 0;
	snprintf(log, sizeof(log), "/tmp/dvx-mpirun-XXXXXX");
	fd = mkstemp(log);
	if (fd < 0)
		return -1;
	close(fd);
	/* scripts/mpirun.sh turns LeakSanitizer off in the processes (docs/testing.md) */
	snprintf(cmd, sizeof(cmd), "%s %s/scripts/mpirun.sh %d '%s' %s > %s 2>&1",
		 env ? env : "", srctree, np, self, args ? args : "", log);
	fflush(NULL);
	rc = system(cmd);
	if (!rc && failed && failed(log))
		rc = -1;
	if (rc) {
		print_error("%d MPI processes (%s): status %d; the last %d lines of their log:\n",
			    np, args ? args : "", rc, tail);
		snprintf(cmd, sizeof(cmd), "tail -n %d %s", tail, log);
		if (system(cmd))
			print_error("(no log)\n");
	}
	unlink(log);
	return rc;
}

/* tests/lib/p2p_world.c: a world of another size than the MPI job skips its test */
void world_skip(void);
void world_skip(void)
{
	skip();
}
