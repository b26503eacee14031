#!/bin/sh
# SPDX-License-Identifier: MIT
#
# run-tests.sh OBJTREE NAME... - run dvx's test binaries and print the summary.
#
# Each NAME is OBJTREE/tests/NAME, a cmocka binary (or any program following the same
# conventions). Exit status 77 means the whole binary skipped itself (a GPU test
# without a GPU, say); its last output line says why and how to run it.
#
#   TESTS="a b"          run only these binaries (a name that is not one fails the run)
#   DVX_TEST_WRAPPER=... run each binary under a wrapper ("valgrind -q --error-exitcode=9")
#   V=1                  show every binary's full output, not only failures'
#   DVX_TEST_TIMEOUT=s   seconds one binary may run (default 1200); one that runs longer
#                        is killed and reported as failed ("timed out"), so a hang
#                        fails the run instead of stalling it
set -u
tmo=${DVX_TEST_TIMEOUT:-1200}
obj=$1
shift
log_dir="$obj/tests/logs"
mkdir -p "$log_dir"

nbin=0 npass=0 nskip=0 nfail=0 bfail=0 bskip=0
failed_list=""
for t in "$@"; do
	if [ -n "${TESTS:-}" ]; then
		case " $TESTS " in *" $t "*) ;; *) continue ;; esac
	fi
	bin="$obj/tests/$t"
	log="$log_dir/$t.log"
	nbin=$((nbin + 1))
	if [ ! -x "$bin" ]; then
		echo "FAIL  $t (not built)"
		bfail=$((bfail + 1)); failed_list="$failed_list $t"
		continue
	fi
	# shellcheck disable=SC2086
	timeout -k 10 "$tmo" ${DVX_TEST_WRAPPER:-} "$bin" > "$log" 2>&1
	rc=$?
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		echo "(timed out after $tmo s: killed by run-tests.sh)" >> "$log"
	fi
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -n 1)
	s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$log" | tail -n 1)
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -n 1)
	p=${p:-0} s=${s:-0} f=${f:-0}
	if [ $rc -eq 77 ]; then
		why=$(grep -v '^[[:space:]]*$' "$log" | tail -n 1)
		echo "SKIP  $t: $why"
		bskip=$((bskip + 1))
		[ "${V:-0}" = 1 ] && cat "$log"
		continue
	fi
	npass=$((npass + p)); nskip=$((nskip + s)); nfail=$((nfail + f))
	if [ $rc -ne 0 ] || [ "$f" -ne 0 ]; then
		if [ "$f" -eq 0 ]; then nfail=$((nfail + 1)); fi
		echo "FAIL  $t (exit $rc; $p passed, $s skipped, $f failed) - log: $log"
		sed 's/^/      | /' "$log" | tail -n 60
		bfail=$((bfail + 1)); failed_list="$failed_list $t"
	else
		extra=""
		[ "$s" -ne 0 ] && extra=", $s skipped"
		echo "PASS  $t ($p passed$extra)"
		[ "${V:-0}" = 1 ] && cat "$log"
		if [ "$s" -ne 0 ]; then
			sed -n '/SKIPPED \] [0-9]* test/,$p' "$log" | sed -n 's/^\[  SKIPPED \] \([^0-9].*\)/      skipped: \1/p'
		fi
	fi
done

# a filter that names a binary this run does not have is an error, not a green run
if [ -n "${TESTS:-}" ]; then
	for want in $TESTS; do
		case " $* " in *" $want "*) ;; *)
			echo "FAIL  $want (TESTS names it, no such test binary)"
			bfail=$((bfail + 1)); failed_list="$failed_list $want" ;;
		esac
	done
fi
echo "=================================================================="
echo "dvx tests: $nbin binaries ($bskip skipped whole, $bfail failed);" \
	"$npass tests passed, $nskip skipped, $nfail failed"
[ -n "$failed_list" ] && echo "failed:$failed_list"
echo "=================================================================="
[ $bfail -eq 0 ] && [ $nfail -eq 0 ]
