#!/bin/sh
# SPDX-License-Identifier: MIT
#
# fuzz.sh [OBJ_PREFIX] - coverage-guided fuzzing with libFuzzer (docs/testing.md,
# "Fuzzing"; TESTING.md ring 5). Build folder OBJ_PREFIX-fuzz (default build-fuzz):
#   1. the harnesses of tests/fuzz/lf/ (fuzz-y in tests/fuzz/Kbuild) built with clang:
#      the library sources with -fsanitize=fuzzer-no-link,address,undefined (UBSan not
#      recoverable), the link with -fsanitize=fuzzer; configuration minimal_defconfig.
#      What a harness's name-carrier-srcs names (the software NIC and the layers that
#      only carry a peer's bytes to the code under test) is built into
#      OBJ_PREFIX-fuzz/carrier/ with ASan+UBSan and libFuzzer's edge counters but no
#      comparison tracing (the Makefile's fuzz-objs; FUZZ_FULL=1: all of it as the rest);
#   2. per harness, first the regression inputs: every file of tests/fuzz/regress/NAME/
#      run once (a crash there fails the run before any fuzzing), then fuzzing until
#      FUZZ_RUNS executions or FUZZ_SECONDS, whichever comes first, that starts from the
#      seeds in tests/fuzz/corpus/NAME/ (read only: new inputs go to
#      OBJ_PREFIX-fuzz/corpus/NAME/, which later runs start from too);
#   3. a table: harness, executions, seconds, exec/s, coverage (libFuzzer's final cov:
#      and ft:), corpus (inputs/bytes), result; a harness that stopped at FUZZ_SECONDS
#      before FUZZ_RUNS executions says so ("cap") and is named under the table.
# A crash, a leak (LeakSanitizer stays on), a sanitizer report, a timeout or a broken
# contract (the harness aborts) fails the run; the input that did it is kept as
# OBJ_PREFIX-fuzz/crashes/NAME/crash-<sha1> (leak-, timeout-, oom-) and named in the
# output. Make it a regression test: copy it to tests/fuzz/regress/NAME/ (a name that
# says what it caught), fix the bug, and the replay in step 2 keeps it fixed.
#
#   FUZZ_RUNS=1000000      executions per harness (libFuzzer's -runs; 0: no count, only
#                          FUZZ_SECONDS: make fuzz-ci)
#   FUZZ_SECONDS=600       seconds of fuzzing per harness at most (make fuzz-ci: 10)
#   FUZZ_FULL=1            the carriers fully instrumented too (comparison tracing
#                          everywhere: slower, as before 2026-11-29)
#   FUZZ_HARNESSES="a b"   only these harnesses
#   FUZZ_ARGS="..."        more libFuzzer flags (-seed=N, -jobs=..., -dict=...)
#   JOBS=n                 build parallelism (default: the number of CPUs)
#   CC=clang               a clang with libFuzzer (Debian 12: clang, libclang-rt-14-dev)
#
#   fuzz.sh --seeds [OBJ_PREFIX]   rewrite tests/fuzz/corpus/ from the harnesses' seed
#                                  writers (DVX_FUZZ_WRITE_SEEDS, tests/fuzz/lf/lf.h)
set -eu
cd "$(dirname "$0")/.."
seeds=0
if [ "${1:-}" = "--seeds" ]; then
	seeds=1
	shift
fi
pfx=${1:-build}
out="$pfx-fuzz"
case $out in /*) abs=$out ;; *) abs=$(pwd)/$out ;; esac
secs=${FUZZ_SECONDS:-600}
runs=${FUZZ_RUNS:-1000000}
full=${FUZZ_FULL:-0}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
cc=${CC:-clang}
case $cc in cc|gcc*|*/gcc*) cc=clang ;; esac	# libFuzzer is clang's

if ! command -v "$cc" >/dev/null 2>&1; then
	echo "fuzz: no $cc (Debian: apt-get install clang libclang-rt-14-dev; scripts/setup.sh does)" >&2
	exit 1
fi

# every harness, in tests/fuzz/Kbuild's order
all=$(sed -n 's/^fuzz-y += *//p' tests/fuzz/Kbuild | tr '\n' ' ')
names=${FUZZ_HARNESSES:-$all}
for n in $names; do
	case " $all " in *" $n "*) ;; *) echo "fuzz: no harness '$n' (have: $all)" >&2; exit 1 ;; esac
done

echo "== libFuzzer: building the harnesses ($cc, $out) =="
[ -f "$out/.config" ] || make -s O="$out" minimal_defconfig >/dev/null
# the harnesses link other objects with FUZZ_FULL=1 (all older than the binaries): relink
# them when it changes
if [ "$(cat "$out/.fuzz-full" 2>/dev/null)" != "$full" ]; then
	rm -f "$out"/fuzz/*
	mkdir -p "$out"
	echo "$full" > "$out/.fuzz-full"
fi
targets=""
for n in $names; do
	targets="$targets $abs/fuzz/$n"
done
# shellcheck disable=SC2086
make -s O="$out" CC="$cc" SAN=fuzzer-no-link,address,undefined FUZZ_FULL="$full" \
	EXTRA_CFLAGS=-fno-sanitize-recover=undefined -j"$jobs" $targets

if [ $seeds = 1 ]; then
	for n in $names; do
		rm -rf "tests/fuzz/corpus/$n"
		mkdir -p "tests/fuzz/corpus/$n"
		DVX_FUZZ_WRITE_SEEDS="tests/fuzz/corpus/$n" "$out/fuzz/$n"
		echo "fuzz: $n: $(find "tests/fuzz/corpus/$n" -type f | wc -l) seeds in tests/fuzz/corpus/$n"
	done
	exit 0
fi

# the largest input each harness takes (its layout is in its header comment)
max_len() {
	case $1 in
	wqe) echo 4101 ;;
	cqe) echo 4096 ;;
	hex) echo 2048 ;;
	prm) echo 4400 ;;
	sim-cmd) echo 8192 ;;
	sim-wqe) echo 8192 ;;
	bootstrap) echo 8192 ;;
	msg-hs) echo 4096 ;;
	msg-data) echo 2048 ;;
	ht-hs) echo 4096 ;;
	win-rec) echo 1024 ;;
	sim-wire) echo 16384 ;;
	sim-ring) echo 16384 ;;
	nccl-handle) echo 512 ;;
	*) echo 4096 ;;
	esac
}

# -reload=0: one process per harness, so nothing else writes its corpus folder (libFuzzer
# would list and read it again every second; FUZZ_ARGS="-jobs=N -reload=1" for jobs).
# libFuzzer flags of one harness: the handshakes make and finish real objects on the
# software NIC for every input, and libFuzzer's own bookkeeping per input (the entropic
# schedule's feature frequencies, value profiles of every comparison the layers make;
# the software NIC's are no longer traced there: tests/fuzz/Kbuild's carriers) cost them
# as much as the input; off for those (bench/RESULTS.md).
# sim-wire keeps its value profiles (without them libFuzzer keeps a tenth of its corpus)
# but not the entropic schedule: the same coverage and corpus in 60 s for less CPU
harness_args() {
	case $1 in
	msg-hs|ht-hs|msg-data) echo "-use_value_profile=0 -entropic=0" ;;
	sim-wire) echo "-use_value_profile=1 -entropic=0" ;;	# same cov/ft in 60 s, 12 % less CPU
	*) echo "-use_value_profile=1" ;;
	esac
}

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"

logs="$out/logs"
mkdir -p "$logs"
rc=0
capped=""
table="$out/fuzz-table.txt"
: > "$table"
for n in $names; do
	bin="$out/fuzz/$n"
	log="$logs/$n.log"
	work="$out/corpus/$n"
	crashes="$out/crashes/$n"
	mkdir -p "$work" "$crashes"
	result=ok

	# 1. the regression inputs, each run once
	reg=$(find "tests/fuzz/regress/$n" -type f ! -name '.*' ! -name 'README*' 2>/dev/null | sort)
	nreg=0
	if [ -n "$reg" ]; then
		nreg=$(echo "$reg" | wc -l)
		echo "== $n: replaying $nreg regression input(s) =="
		# shellcheck disable=SC2086
		if ! "$bin" -artifact_prefix="$crashes/" $reg > "$log.regress" 2>&1; then
			tail -40 "$log.regress"
			echo "fuzz: $n: a regression input fails again (log: $log.regress)" >&2
			result="REGRESSION FAILED"
			rc=1
		fi
	fi

	# 2. fuzzing
	execs=- t=- eps=- cov=- ft=- corp=-
	if [ "$result" = ok ]; then
		if [ "$runs" -gt 0 ]; then
			echo "== $n: fuzzing for $runs executions, ${secs}s at most =="
			runarg=-runs=$runs
		else
			echo "== $n: fuzzing for ${secs}s =="
			runarg=
		fi
		# shellcheck disable=SC2086,SC2046
		if "$bin" $runarg -max_total_time="$secs" -timeout=25 -max_len="$(max_len "$n")" -reload=0 \
			$(harness_args "$n") -print_final_stats=1 -artifact_prefix="$crashes/" \
			${FUZZ_ARGS:-} "$work" "tests/fuzz/corpus/$n" > "$log" 2>&1; then
			:
		else
			result=FAILED
			rc=1
			sed -n '/==ERROR\|runtime error\|contract broken\|ERROR: libFuzzer\|SUMMARY/p' \
				"$log" | head -8
			tail -30 "$log"
		fi
		art=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
		if [ -n "$art" ]; then
			result="FAILED: $art"
			echo "fuzz: $n: reproducer $art (run: $bin $art; keep it in tests/fuzz/regress/$n/)" >&2
		fi
		execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
		eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
		t=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
		last=$(grep -E '^#[0-9]+.* cov: ' "$log" | tail -1 || true)
		cov=$(echo "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
		ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
		corp=$(echo "$last" | sed -n 's/.* corp: \([^ ]*\).*/\1/p')
	fi
	[ "$nreg" -gt 0 ] && [ "$result" = ok ] && result="ok (regress $nreg ok)"
	# stopped by the time cap before the count
	if [ "$runs" -gt 0 ] && [ "$execs" != - ] && [ -n "$execs" ] && [ "$execs" -lt "$runs" ]; then
		result="$result, cap"
		capped="$capped $n"
	fi
	printf '%-11s %10s %5s %7s %5s %6s %12s  %s\n' "$n" "${execs:--}" "${t:--}" "${eps:--}" \
		"${cov:--}" "${ft:--}" "${corp:--}" "$result" >> "$table"
done

echo
if [ "$runs" -gt 0 ]; then
	what="$runs executions per harness, ${secs}s at most"
else
	what="${secs}s per harness"
fi
echo "== libFuzzer: $what on $(nproc 2>/dev/null || echo '?') CPU(s); logs in $logs =="
printf '%-11s %10s %5s %7s %5s %6s %12s  %s\n' harness executions secs exec/s cov ft corpus result
cat "$table"
if [ -n "$capped" ]; then
	echo "fuzz: stopped at ${secs}s before $runs executions:$capped"
fi
exit $rc
