#!/bin/sh
# SPDX-License-Identifier: MIT
# Fails if any of the given objects (built from mlx5/ or core/) references an allocator.
# dvx's library layers take all memory from the caller; see docs/memory.md.
set -u
bad=0
for o in "$@"; do
	syms=$(nm -u "$o" | awk '{print $NF}' |
		grep -E '^(malloc|calloc|realloc|reallocarray|free|posix_memalign|aligned_alloc|memalign|valloc|pvalloc|strdup|strndup|mmap|mmap64|munmap|sbrk|brk)$')
	if [ -n "$syms" ]; then
		for s in $syms; do echo "error: $o references allocator '$s' (no hidden allocation in mlx5/ and core/)" >&2; done
		bad=1
	fi
done
exit $bad
