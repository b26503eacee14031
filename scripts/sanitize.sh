#!/bin/sh
# SPDX-License-Identifier: MIT
#
# sanitize.sh [OBJ_PREFIX] - the suite under the sanitizers (TESTING.md, ring 5):
#   1. every test binary built with AddressSanitizer + UndefinedBehaviorSanitizer,
#   2. the multi-threaded ones (transports, software NIC end to end, bootstrap
#      threads, the sockets bootstrap's fault sweep) built with ThreadSanitizer.
# Each part runs make check, so the suites of the Makefile's reorder-tests among them run
# again in the software NIC's reorder mode (docs/testing.md "The reorder mode"), once per
# seed: ASAN_REORDER_SEEDS (default "1 4", as make check) and TSAN_REORDER_SEEDS
# (default "1": one seed under TSan, where the reorder passes cost the most time).
# Build folders: OBJ_PREFIX-asan and OBJ_PREFIX-tsan (default build-asan, build-tsan).
# Each part ends with the test runner's summary; the exit status is non-zero if any
# test failed or a sanitizer reported anything (they are made to fail the test).
set -eu
cd "$(dirname "$0")/.."
pfx=${1:-build}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
rc=0

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:exitcode=23"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
# history_size=7: the reorder mode places a message's bytes a step or more after the
# reader last looked, and with the default history TSan loses that reader's stack, so a
# suppression that names it (scripts/tsan.supp) no longer matches (msg-ranks-test, seed 1)
export TSAN_OPTIONS="halt_on_error=1:exitcode=66:second_deadlock_stack=1:history_size=7:suppressions=$PWD/scripts/tsan.supp"

echo "== AddressSanitizer + UndefinedBehaviorSanitizer: the whole suite =="
make -s O="$pfx-asan" SAN=address,undefined EXTRA_CFLAGS=-fno-sanitize-recover=undefined \
	REORDER_SEEDS="${ASAN_REORDER_SEEDS-1 4}" -j"$jobs" check || rc=1

echo "== ThreadSanitizer: the multi-threaded tests =="
tsan_tests="mlx5-sq-test p2p-test sim-core-test sim-ctrl-test bootstrap-thread-test soak-test"
tsan_tests="$tsan_tests bootstrap-sock-fault-test bootstrap-sub-test sim-wire-test"
tsan_tests="$tsan_tests mp-fdx-test mp-nvl-test mp-nvl-ops-test mp-e2e-test win-test msg-ranks-test"
tsan_tests="$tsan_tests ht-test ht-cache-test ht-recover-test nccl-net-test copier-test"
TESTS="$tsan_tests" \
	make -s O="$pfx-tsan" SAN=thread REORDER_SEEDS="${TSAN_REORDER_SEEDS-1}" -j"$jobs" check || rc=1
exit $rc
