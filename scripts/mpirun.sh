#!/bin/sh
# SPDX-License-Identifier: MIT
#
# mpirun.sh NP PROGRAM [ARGS...] - run PROGRAM as NP MPI processes on this host, with
# whatever MPI is installed (Open MPI or MPICH), as root or not, on any number of cores.
# mpirun.sh --check - exit 0 if an MPI launcher is here, else 77 with a line saying how
# to get one (the tests skip themselves with it).
#
# What it sets, and why (docs/testing.md, "MPI tests"):
#   Open MPI  --oversubscribe (more processes than cores: CI has 2), --allow-run-as-root's
#             environment pair when root (CI and the containers run as root), the shared
#             memory and self transports only (btl self,vader: one host; no network
#             interface is needed or probed) with single-copy off (CMA needs ptrace rights
#             that containers drop), PMIx's hash store (its shared-memory store fails
#             in some containers) and no warning about unused components
#   MPICH     the fork launcher (no ssh on one host)
#   ASan      leak detection off in the ranks (ASAN_OPTIONS gains detect_leaks=0): the MPI
#             library's own allocations at exit are not dvx's, and would fail every
#             MPI test under make sanitize
#   DVX_MPI_TIMEOUT  seconds the whole run may take (default 300): a hang ends as a failure
#   DVX_MPI_RECOVERY=1  a process that dies does not end the job (Open MPI's
#             --enable-recovery, MPICH's -disable-auto-cleanup): for the tests that kill
#             one on purpose and check that the others go on
set -u
hint="install Open MPI (scripts/setup.sh --deps-only: openmpi-bin libopenmpi-dev), then 'make defconfig check'"
if ! command -v mpirun >/dev/null 2>&1; then
	echo "mpirun not found: $hint"
	exit 77
fi
[ "${1:-}" = --check ] && exit 0
np=$1
shift
tmo=${DVX_MPI_TIMEOUT:-300}
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
if mpirun --version 2>&1 | grep -q "Open MPI"; then
	if [ "$(id -u)" -eq 0 ]; then
		export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	fi
	export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
	export OMPI_MCA_btl_base_warn_component_unused=0 OMPI_MCA_rmaps_base_oversubscribe=1
	export PMIX_MCA_gds=hash
	rec=""
	[ "${DVX_MPI_RECOVERY:-0}" = 1 ] && rec=--enable-recovery
	exec timeout -k 5 "$tmo" mpirun --oversubscribe $rec -n "$np" "$@"
fi
rec=""
[ "${DVX_MPI_RECOVERY:-0}" = 1 ] && rec=-disable-auto-cleanup
exec timeout -k 5 "$tmo" mpirun -launcher fork $rec -n "$np" "$@"
