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

/* Parse a hex string ("00 01 23 ..", whitespace ignored) into @out; returns bytes. */
size_t dvx_test_hex(const char *hex, uint8_t *out, size_t max);

#endif
