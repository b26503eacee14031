/* SPDX-License-Identifier: MIT */
/*
 * tests/lib/dvx_test.h - what every dvx cmocka test includes.
 */
#ifndef DVX_TEST_H
#define DVX_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

/* Exit status a test binary uses to skip itself as a whole (see scripts/run-tests.sh). */
#define DVX_TEST_SKIP_ALL 77

/* Compare @n bytes; on mismatch print both buffers as hex, 16 per line, with the first
 * differing offset, then fail. */
void dvx_test_bytes_equal(const void *got, const void *want, size_t n, const char *what,
			  const char *file, int line);
#define assert_bytes_equal(got, want, n) \
	dvx_test_bytes_equal((got), (want), (n), #got, __FILE__, __LINE__)

/* Test memory: @bytes (at least 64) aligned to 64 and filled with @fill; fails the test
 * when none is left. Released with dvx_test_free(). Tests allocate through these so that
 * no object under a tests/mlx5 or tests/core folder names an allocator: the check for
 * the library's own objects stays a plain name search. */
void *dvx_test_alloc(size_t bytes, int fill);
void dvx_test_free(void *p);

/* Fork @n children running fn(rank, n, arg) and wait for them: 0, or the first child's
 * non-zero exit status (99 for a child killed by a signal, which is printed). For tests
 * whose ranks are processes; the parent must not have touched CUDA. */
int dvx_test_fork_all(int n, int (*fn)(int rank, int n, void *arg), void *arg);

/* The folder of dvx's programs for a test binary run as @argv0: $DVX_TOOLS_DIR, else
 * ../tools next to the binary ($(O)/tests/x -> $(O)/tools). 0, or -1 when neither can be
 * found. */
int dvx_test_tools_dir(const char *argv0, char *dir, size_t n);

/* Whether an MPI launcher is here (scripts/mpirun.sh --check under @srctree): 1 or 0.
 * Unless @quiet, the script's line saying how to get one is printed when there is none. */
int dvx_test_mpirun_here(const char *srctree, int quiet);

/* Run this test binary again as @np MPI processes, scripts/mpirun.sh NP SELF @args, with
 * @env (e.g. "DVX_MPI_RECOVERY=1", or NULL) in front. The processes' output goes to a
 * log, whose last @tail lines are printed when the run fails: a non-zero exit status, or
 * @failed(log) non-zero where given (a launcher that may exit 0 whatever its processes
 * did). 0 when the run passed; else the exit status, or -1. */
int dvx_test_mpirun_self(const char *srctree, int np, const char *env, const char *args,
			 int tail, int (*failed)(const char *log));

/* Parse a hex string ("00 01 23 ..", whitespace ignored) into @out; returns bytes. */
size_t dvx_test_hex(const char *hex, uint8_t *out, size_t max);

#endif
