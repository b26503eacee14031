#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-procs.sh OBJTREE - the P2P transport's suites with their ranks as processes on
# the software NIC's wire ('make check-procs'; docs/testing.md "Ranks as processes"):
#   p2p-test          every case as forked processes (DVX_WORLD_PROCS=1), then as 4 and
#                     as 8 MPI processes under scripts/mpirun.sh (the cases of another
#                     size skip themselves there)
#   p2p-procs-test    a ring, faults on the wire, a killed process; forked and under MPI
#   dvx-loop          the check table as 2 MPI processes (--procs 2 is in tools-loop-test)
#   soak-test         4 ranks, DVX_SOAK_ROUNDS rounds (default 60) of the soak with its
#                     faults, then a rank killed with SIGKILL (the soak's last phase as
#                     processes: every survivor's lanes to it fail, one more round among
#                     the survivors), as forked processes and as 4 MPI processes (the
#                     launcher's recovery mode; the 3 survivors' own verdicts decide)
#   ht-procs-test     the host transport: a pair and 4 ranks with caches, forked and
#                     under MPI
# make check runs p2p-procs-test (with a short forked soak and its kill) and ht-procs-test
# only. Without mpirun the MPI runs are skipped (said so). Ends with "N passed, N failed".
set -u
obj=$1
pass=0
fail=0
# run_n N NAME CMD...: passes when CMD exits 0, its log has no cmocka failure and at
# least N processes said their one test passed (a launcher in recovery mode exits 0
# whatever its processes did); run NAME CMD...: the same with N 0
run_n() {
	need=$1
	name=$2
	shift 2
	log="$obj/tests/logs/procs-$name.log"
	mkdir -p "$obj/tests/logs"
	if "$@" > "$log" 2>&1 && ! grep -q '^\[  FAILED  \]' "$log" &&
		[ "$(grep -c '^\[  PASSED  \] 1 test' "$log")" -ge "$need" ]; then
		echo "PASS  $name"
		pass=$((pass + 1))
	else
		echo "FAIL  $name (log: $log)"
		tail -n 30 "$log"
		fail=$((fail + 1))
	fi
}
run() {
	run_n 0 "$@"
}
cd "$(dirname "$0")/.." || exit 1
rounds=${DVX_SOAK_ROUNDS:-60}
run p2p-test-fork env DVX_WORLD_PROCS=1 "$obj/tests/p2p-test"
run soak-fork env DVX_WORLD_PROCS=1 DVX_SOAK_RANKS=4 DVX_SOAK_ROUNDS="$rounds" \
	"$obj/tests/soak-test"
if ! grep -q '^CONFIG_DVX_MPI=y' "$obj/.config" 2>/dev/null; then
	echo "SKIP  the MPI runs: dvx was configured without MPI (CONFIG_DVX_MPI); install Open" \
		"MPI (scripts/setup.sh --deps-only) and run 'make defconfig'"
elif scripts/mpirun.sh --check > /dev/null; then
	run p2p-test-mpi4 scripts/mpirun.sh 4 "$obj/tests/p2p-test"
	run p2p-test-mpi8 scripts/mpirun.sh 8 "$obj/tests/p2p-test"
	run dvx-loop-mpi2 scripts/mpirun.sh 2 "$obj/tools/dvx-loop" --iters 20
	run_n 3 soak-mpi4 env DVX_SOAK_RANKS=4 DVX_SOAK_ROUNDS="$rounds" DVX_MPI_RECOVERY=1 \
		scripts/mpirun.sh 4 "$obj/tests/soak-test"
else
	echo "SKIP  p2p-test under mpirun: $(scripts/mpirun.sh --check)"
fi
run p2p-procs-test "$obj/tests/p2p-procs-test"
run ht-procs-test "$obj/tests/ht-procs-test"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
