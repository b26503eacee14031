#!/bin/sh
# SPDX-License-Identifier: MIT
#
# run-wqe-post.sh [BUILD_DIR] - the WQE build-and-post benchmark (bench/wqe-post.c):
# ns per WQE from its timing mode and instructions per WQE counted by valgrind's
# callgrind, dvx against the rdma-core mlx5dv.h reference, as one table.
#
# Builds nothing: run "make O=BUILD_DIR" first (default build/). Needs valgrind.
#
#   WQE_POST_TIME_ARGS   extra arguments for the timing run (default "-n 262144 -r 21";
#                        add "-c CPU" to pin it)
#   WQE_POST_CG_WQES     WQEs per (workload, side, batch) under callgrind (default 8192)
set -eu

obj=${1:-build}
bin=$obj/bench/wqe-post
if [ ! -x "$bin" ]; then
	echo "run-wqe-post: $bin is not built (make O=$obj first; it needs" \
		"CONFIG_DVX_RDMA=y, i.e. rdma-core's <infiniband/mlx5dv.h>)" >&2
	exit 1
fi
if ! command -v valgrind >/dev/null 2>&1; then
	echo "run-wqe-post: valgrind is needed for the instruction counts" >&2
	exit 1
fi
time_args=${WQE_POST_TIME_ARGS:--n 262144 -r 21}
cg_wqes=${WQE_POST_CG_WQES:-8192}
batches="1 8 32 128"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# 1. ns/WQE. Its table: workload batch dvx_ns ref_ns (after '#' notes).
# shellcheck disable=SC2086
"$bin" --time $time_args > "$tmp/time.txt"

# 2. instructions/WQE -> "workload side batch instructions" lines in $tmp/instr.txt
"$bin" --callgrind -n "$cg_wqes" -b 1 > "$tmp/probe.txt" 2>&1 || {
	cat "$tmp/probe.txt" >&2
	exit 1
}
if grep -q '^callgrind-client-requests: yes' "$tmp/probe.txt"; then
	# one run; each (workload, side, batch) is dumped under its own name, with
	# instrumentation on only while it runs
	valgrind -q --tool=callgrind --instr-atstart=no \
		--callgrind-out-file="$tmp/cg.out" "$bin" --callgrind -n "$cg_wqes" \
		> "$tmp/cg.txt"
	for f in "$tmp"/cg.out.*; do
		name=$(sed -n 's/^desc: Trigger: Client Request: wqe-post://p' "$f")
		total=$(sed -n 's/^totals: *//p' "$f")
		if [ -z "$name" ] || [ -z "$total" ]; then
			continue
		fi
		echo "$name" "$total" | tr ':' ' '
	done > "$tmp/instr.txt"
	method="callgrind client requests (CALLGRIND_DUMP_STATS_AT per run)"
else
	# no <valgrind/callgrind.h> at build time: one process per batch, and the
	# inclusive totals of the noinline functions wp_<workload>_<side>
	: > "$tmp/instr.txt"
	for b in $batches; do
		valgrind -q --tool=callgrind --callgrind-out-file="$tmp/cg.$b" "$bin" \
			--callgrind -n "$cg_wqes" -b "$b" > /dev/null
		# "  412,691 (20.17%)  .../wqe-post.c:wp_write_dvx [bin]" -> "write dvx 8 412691"
		fn='wqe-post\.c:wp_\([a-z]*\)_\([a-z]*\) \['
		callgrind_annotate --inclusive=yes "$tmp/cg.$b" |
			sed -n "s/^ *\([0-9,]*\) .*$fn.*/\2 \3 $b \1/p" |
			tr -d ',' >> "$tmp/instr.txt"
	done
	method="callgrind_annotate --inclusive=yes, function wp_<workload>_<side>"
fi

# 3. one table
sed -n 's/^# //p' "$tmp/time.txt"
echo "instructions: valgrind $(valgrind --version | sed 's/^valgrind-//'), $method;"
echo "  $cg_wqes WQEs per (workload, side, batch), including the per-batch doorbell and completion."
echo
awk -v n="$cg_wqes" '
	FNR == NR { ir[$1 " " $2 " " $3] = $4; next }	# instr.txt: workload side batch Ir
	/^#/ || $1 == "workload" { next }
	{
		w = $1; b = $2
		di = ir[w " dvx " b]; bi = ir[w " dvxb " b]; ri = ir[w " ref " b]; qi = ir[w " qp " b]
		wi = ir[w " dvxw " b]
		if (!header++)
			printf "%-8s %5s  %7s %7s %7s %7s %7s  %8s %8s %8s %8s %8s  %7s %7s %7s %7s\n",
			       "workload", "batch", "dvx ns", "dvxb ns", "ref ns", "qp ns", "dvxw ns",
			       "dvx ins", "dvxb ins", "ref ins", "qp ins", "dvxw ins", "dvx/ref",
			       "dvxb/ref", "qp/dvx", "qp/dvxw"
		if (di == "" || bi == "" || ri == "" || qi == "" || wi == "") {
			printf "%-8s %5s  %7.2f %7.2f %7.2f %7.2f %7.2f  %8s %8s %8s %8s %8s  %7s %7s %7s %7s\n",
			       w, b, $3, $4, $5, $6, $7, "n/a", "n/a", "n/a", "n/a", "n/a", "n/a", "n/a",
			       "n/a", "n/a"
			next
		}
		printf "%-8s %5s  %7.2f %7.2f %7.2f %7.2f %7.2f  %8.2f %8.2f %8.2f %8.2f %8.2f  %7.3f %7.3f %7.3f %7.3f\n",
		       w, b, $3, $4, $5, $6, $7, di / n, bi / n, ri / n, qi / n, wi / n, di / ri, bi / ri,
		       qi / di, qi / wi
	}' "$tmp/instr.txt" "$tmp/time.txt"
echo
echo "ns and ins are per WQE. dvx reserves per WQE, dvxb per batch, ref checks room per WQE"
echo "(rdma-core's idiom), qp posts through dvx/nic/post.h on a dvx_qp with a wr_id per WQE,"
echo "dvxw is dvx plus the caller's own wr_id per slot (what a raw caller needs to get its ids"
echo "back). dvx/ref, dvxb/ref: instruction ratios (<= 1: dvx needs no more); qp/dvx: the"
echo "helpers against the bare raw calls; qp/dvxw: against the raw calls doing the same work."
