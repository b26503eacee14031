/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_io.h - what the benchmarks that fork their ranks share: the whole of a
 * read or a write on a pipe.
 */
#ifndef DVX_BENCH_IO_H
#define DVX_BENCH_IO_H

#include <stddef.h>
#include <unistd.h>

/* bench_full_io() - read (@wr 0) or write (@wr 1) all @n bytes at @p on @fd: 0, or -1
 * on an error or an early end */
static inline int bench_full_io(int fd, void *p, size_t n, int wr)
{
	size_t d = 0;

	while (d < n) {
		ssize_t k = wr ? write(fd, (char *)p + d, n - d) : read(fd, (char *)p + d, n - d);

		if (k <= 0)
			return -1;
		d += (size_t)k;
	}
	return 0;
}

#endif
