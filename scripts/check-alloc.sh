#!/bin/sh
# SPDX-License-Identifier: MIT
# Fails if any of the given objects (built from mlx5/ or core/) references an allocator.
# dvx's library layers take all memory from the caller; see docs/memory.md.
# Also fails if the bootstrap's sockets adapter (core/bootstrap/sock_*.o) calls the OS
# itself: its sockets, sleeps, clock and random bytes go through the hal
# (docs/bootstrap.md).
set -u
bad=0
for o in "$@"; do
	syms=$(nm -u "$o" | awk '{print $NF}' |
		grep -E '^(malloc|calloc|realloc|reallocarray|free|posix_memalign|aligned_alloc|memalign|valloc|pvalloc|strdup|strndup|mmap|mmap64|munmap|sbrk|brk)$')
	if [ -n "$syms" ]; then
		for s in $syms; do echo "error: $o references allocator '$s' (no hidden allocation in mlx5/ and core/)" >&2; done
		bad=1
	fi
	case $o in
	*core/bootstrap/sock_*.o)
		syms=$(nm -u "$o" | awk '{print $NF}' |
			grep -E '^(__)?(socket|socketpair|bind|listen|accept4?|connect|getsockname|getpeername|[gs]etsockopt|send|sendto|sendmsg|recv|recvfrom|recvmsg|read|write|readv|writev|p?poll|p?select|epoll_[a-z_]+|close|unlink|unlinkat|nanosleep|clock_nanosleep|usleep|sleep|clock_gettime|gettimeofday|time|getrandom|getentropy|arc4random[a-z_]*|s?rand|s?random|rand_r|[dlm]rand48)(_chk)?$')
		if [ -n "$syms" ]; then
			for s in $syms; do echo "error: $o calls '$s' (the sockets adapter goes through the hal)" >&2; done
			bad=1
		fi ;;
	esac
done
exit $bad
