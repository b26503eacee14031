#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/gpu/device-run.sh BUILD OUTDIR - what one GPU machine session runs over a
# prebuilt tree (make O=BUILD with CONFIG_DVX_GPU=y; BUILD/lib may hold libcmocka and
# the other libraries the binaries need): every GPU test on all the GPUs (rank r on
# GPU r mod their number) and again on one (CUDA_VISIBLE_DEVICES=0, quick), the
# benchmarks, and compute-sanitizer memcheck/racecheck over a quick run of the tests.
# Logs go to OUTDIR; a summary to stdout. NVLink multicast stays off. DVX_SAN_TESTS
# names the tests the sanitizers run over (default: gpu-post-test gpu-p2p-test
# gpu-win-test), DVX_BENCHES the benchmarks (default: gpu-post gpu-p2p-bench win-ib-bench
# win-chan-bench).
set -u
b=$1 out=$2
mkdir -p "$out"
export LD_LIBRARY_PATH="$b/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1
{ date -u; nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader; } 2>&1 | tee "$out/env.txt"
ngpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
sum() { grep -E '^\[  (PASSED|FAILED|SKIPPED)|^\[  FAILED|^\[  ERROR|failed|^(processes|threads|mixed|verbs|gpu [0-9]):|^  GPU' "$1" | tail -${2:-12}; }
for t in gpu-mock-test gpu-post-test gpu-resident-test gpu-p2p-test gpu-rma-test gpu-nvl-test gpu-win-test gpu-winch-test; do
	echo "== $t ($ngpus GPUs)"; s=$(date +%s)
	DVX_GPU_REQUIRED=1 timeout 240 "$b/tests/$t" > "$out/$t.log" 2>&1
	echo "rc=$? $(( $(date +%s) - s ))s"; sum "$out/$t.log"
done
if [ "$ngpus" -gt 1 ]; then
	for t in gpu-p2p-test gpu-nvl-test gpu-win-test; do
		echo "== $t (1 GPU, quick)"; s=$(date +%s)
		CUDA_VISIBLE_DEVICES=0 DVX_GPU_TEST_QUICK=1 DVX_GPU_REQUIRED=1 timeout 90 \
			"$b/tests/$t" > "$out/$t-1gpu.log" 2>&1
		echo "rc=$? $(( $(date +%s) - s ))s"; sum "$out/$t-1gpu.log" 6
	done
fi
for x in ${DVX_BENCHES-gpu-post gpu-p2p-bench gpu-dma-bench win-ib-bench win-chan-bench}; do
	echo "== bench $x"
	timeout 120 "$b/bench/$x" > "$out/$x.txt" 2>&1; echo "rc=$?"; tail -24 "$out/$x.txt"
done
CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
for t in ${DVX_SAN_TESTS-gpu-post-test gpu-p2p-test gpu-win-test}; do
	for tool in memcheck racecheck; do
		echo "== compute-sanitizer $tool over $t (quick)"; s=$(date +%s)
		DVX_GPU_SANITIZER=1 DVX_GPU_TEST_QUICK=1 DVX_GPU_REQUIRED=1 timeout 120 $CS --tool $tool \
			--target-processes all --error-exitcode 9 "$b/tests/$t" > "$out/sanitizer-$t-$tool.log" 2>&1
		echo "rc=$? $(( $(date +%s) - s ))s"
		grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^\[  PASSED|^\[  FAILED" "$out/sanitizer-$t-$tool.log" | tail -4
	done
done
