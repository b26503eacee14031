#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/gpu/device-run.sh BUILD OUTDIR - what one GPU machine session runs over a
# prebuilt tree (make O=BUILD with CONFIG_DVX_GPU=y; BUILD/lib may hold libcmocka):
# the GPU tests, the posting benchmark, and compute-sanitizer memcheck/racecheck over
# a quick run of the tests. Logs go to OUTDIR; a summary to stdout.
set -u
b=$1 out=$2
mkdir -p "$out"
export LD_LIBRARY_PATH="$b/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
{ date -u; nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader; } 2>&1 | tee "$out/env.txt"
echo "== gpu-post-test"
DVX_GPU_REQUIRED=1 timeout 100 "$b/tests/gpu-post-test" > "$out/gpu-post-test.log" 2>&1
echo "rc=$?"; grep -E "^\[|  write|  lib|  fetch|  timeout|^gpu:" "$out/gpu-post-test.log" | grep -v "RUN\|^\[       OK" | tail -40
echo "== gpu-p2p-test"
DVX_GPU_REQUIRED=1 timeout 200 "$b/tests/gpu-p2p-test" > "$out/gpu-p2p-test.log" 2>&1
echo "rc=$?"; grep -E "^\[  |put_signal|^gpu:|failed" "$out/gpu-p2p-test.log" | tail -12
echo "== gpu-resident-test"
DVX_GPU_REQUIRED=1 timeout 200 "$b/tests/gpu-resident-test" > "$out/gpu-resident-test.log" 2>&1
echo "rc=$?"; grep -E "^\[  |  thread|  warp|  block|bad rkey|software NIC|failed" "$out/gpu-resident-test.log" | tail -12
echo "== gpu-mock-test"
timeout 30 "$b/tests/gpu-mock-test" > "$out/gpu-mock-test.log" 2>&1; echo "rc=$?"
echo "== bench gpu-post"
timeout 100 "$b/bench/gpu-post" 2>&1 | tee "$out/bench.log"
CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
for tool in memcheck racecheck; do
	echo "== compute-sanitizer $tool (quick)"
	DVX_GPU_TEST_QUICK=1 timeout 55 $CS --tool $tool --error-exitcode 9 \
		"$b/tests/gpu-post-test" > "$out/sanitizer-$tool.log" 2>&1
	echo "rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$out/sanitizer-$tool.log" | tail -4
done
echo "== bench gpu-p2p-bench"
timeout 120 "$b/bench/gpu-p2p-bench" 2>&1 | tee "$out/p2p-bench.log"
for tool in memcheck racecheck; do
	echo "== compute-sanitizer $tool over gpu-p2p-test (quick)"
	DVX_GPU_TEST_QUICK=1 DVX_GPU_REQUIRED=1 timeout 130 $CS --tool $tool --error-exitcode 9 \
		"$b/tests/gpu-p2p-test" > "$out/sanitizer-p2p-$tool.log" 2>&1
	echo "rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$out/sanitizer-p2p-$tool.log" | tail -4
done
