#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Enforces dvx's layering (docs/layout.md):
#   base (dvx/compiler.h, dvx/byteorder.h, dvx/diag.h) < hal < mlx5 < gpu < core < tools/tests/bench/plugins
# and inside core, by folder (core/X and include/dvx/X alike), the floors
#   {nic, bootstrap} < {p2p, nvl, msg, ht} < mp < win
# (one exception: dvx/mp/topo.h, core/mp/topo.c, a pure classification of ranks that
# nvl reads too, stand on the lowest floor).
# A file may include dvx headers of its own layer or below. Only hal/ may include
# rdma-core (<infiniband/...>), CUDA (<cuda.h>) or DPDK (<rte_*.h>) headers; tests/ and
# bench/ may include <infiniband/mlx5dv.h> as a second opinion. Nothing includes the CUDA
# runtime. Only core/bootstrap/mpi/mpi.c of the library includes <mpi.h>. Public headers
# never test CONFIG_ symbols (no option changes a public layout).
set -u
top=$1
cd "$top" || exit 1
fail=0
err() { echo "layering: $*" >&2; fail=1; }

level_of_header() {
	case $1 in
	dvx/compiler.h|dvx/byteorder.h|dvx/diag.h) echo 0 ;;
	dvx/testing/ht_mock.h) echo 4 ;;	# a mock of a core interface (libdvx-test.a)
	dvx/hal.h|dvx/hal/*|dvx/testing/*) echo 1 ;;
	dvx/mlx5/*) echo 2 ;;
	dvx/gpu/*) echo 3 ;;
	dvx/*) echo 4 ;;
	*) echo -1 ;;
	esac
}
level_of_file() {
	case $1 in
	include/*) level_of_header "${1#include/}" ;;
	hal/*) echo 1 ;;
	mlx5/*) echo 2 ;;
	gpu/*) echo 3 ;;
	core/*) echo 4 ;;
	*) echo 5 ;;
	esac
}

# floor_of PATH: the floor inside core of core/X/... or dvx/X/..., -1 outside core
floor_of() {
	case $1 in
	dvx/mp/topo.h|core/mp/topo.c) echo 0; return ;;
	esac
	p=${1#core/}; p=${p#dvx/}
	case $p in
	nic/*|bootstrap/*) echo 0 ;;
	p2p/*|nvl/*|msg/*|ht/*) echo 1 ;;
	testing/ht_mock.h) echo 1 ;;
	mp/*) echo 2 ;;
	win/*) echo 3 ;;
	*) echo -1 ;;
	esac
}

files=$(find include hal mlx5 gpu core tools tests bench plugins \( -name '*.[ch]' -o -name '*.cu' -o -name '*.cuh' \) 2>/dev/null)
for f in $files; do
	lf=$(level_of_file "$f")
	incs=$(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]\([^>"]*\)[>"].*/\1/p' "$f")
	for i in $incs; do
		case $i in
		cuda_runtime*|cudart*|cuda_runtime_api.h)
			err "$f includes the CUDA runtime <$i> (driver API only)" ;;
		infiniband/*|rdma/*|cuda.h|cudaTypedefs.h|rte_*.h)
			case $f in
			hal/*) ;;
			tests/*|bench/*) [ "$i" = infiniband/mlx5dv.h ] || err "$f includes <$i> (only hal/ may)" ;;
			*) err "$f includes <$i> (only hal/ may)" ;;
			esac ;;
		mpi.h)
			# the MPI adapter is the one library file that may (docs/bootstrap.md)
			case $f in
			core/bootstrap/mpi/mpi.c|tests/*|bench/*|tools/*) ;;
			*) err "$f includes <mpi.h> (only core/bootstrap/mpi/mpi.c in the library may)" ;;
			esac ;;
		dvx/*)
			li=$(level_of_header "$i")
			[ "$li" -le "$lf" ] || err "$f (layer $lf) includes $i (layer $li): layers include only downward"
			if [ "$lf" = 4 ] && [ "$li" = 4 ]; then
				ff=$(floor_of "${f#include/}"); fi=$(floor_of "$i")
				[ "$ff" -lt 0 ] || [ "$fi" -le "$ff" ] ||
					err "$f (core floor $ff) includes $i (core floor $fi): core folders include only their floor and below"
			fi
			;;
		esac
	done
	case $f in
	include/*)
		if grep -nE '^[[:space:]]*#[[:space:]]*(if|ifdef|ifndef|elif).*CONFIG_' "$f" >/dev/null; then
			err "$f: public headers may not test CONFIG_ symbols (no option changes a public layout)"
		fi ;;
	esac
done
exit $fail
