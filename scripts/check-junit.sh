#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-junit.sh CONSOLE DIR - check the JUnit files scripts/run-tests.sh left in DIR
# (make check JUNIT=DIR) against the console output it printed (CONSOLE, a file):
# for every binary the console names, DIR/NAME.xml exists, is well-formed XML
# (xmllint, Debian's libxml2-utils), has a <testsuites> root whose <testsuite>s hold as
# many <testcase>s as their tests= says and as many <skipped>s as their skipped= says,
# and counts what the console line says:
#
#   PASS  NAME (P passed[, S skipped])     passed P, skipped S, no failure, no error
#   FAIL  NAME (exit R; P passed, S skipped, F failed)
#                                          passed P, skipped S, failures F (1 if F is 0)
#   FAIL  NAME (not built)                 one failure
#   SKIP  NAME: why                        one suite of one skipped test case
#
# (passed = tests - failures - errors - skipped per suite, as cmocka counts); and the
# files' sums agree with the summary line: passed = the tests passed, skipped = the
# tests skipped + the binaries skipped whole, failures = the tests failed + the
# binaries not built. A name TESTS gave that is no binary has no file. Prints each
# problem, then one line: OK (with the counts) or how many problems.
set -eu
console=$1 dir=$2
command -v xmllint >/dev/null || {
	echo "check-junit: xmllint not found (Debian: apt-get install libxml2-utils; scripts/setup.sh does)"
	exit 1
}
nbad=0
bad() {
	echo "check-junit: $*"
	nbad=$((nbad + 1))
}
x() {	# x FILE XPATH: the XPath's value (a number or a string)
	xmllint --xpath "$2" "$1" 2>/dev/null || echo 0
}

sum=$(grep '^dvx tests: ' "$console" | tail -n 1)
[ -n "$sum" ] || { echo "check-junit: no summary line in $console"; exit 1; }
# dvx tests: N binaries (S skipped whole, F failed); P tests passed, K skipped, X failed
# shellcheck disable=SC2046
set -- $(echo "$sum" | sed 's/[^0-9]/ /g')
want_bskip=$2 want_p=$4 want_k=$5 want_x=$6

tp=0 ts=0 tf=0 nfiles=0 nnotbuilt=0 nskipbin=0
while IFS= read -r line; do
	case $line in
	"PASS  "* | "FAIL  "* | "SKIP  "*) ;;
	*) continue ;;
	esac
	rest=${line#?????[ ]}
	name=${rest%%[ :]*}
	case $line in
	*"(TESTS names it, no such test binary)") continue ;;
	"PASS  "*)
		nums=$(echo "$rest" | sed -n 's/^[^ ]* (\([0-9]*\) passed\(, \([0-9]*\) skipped\)\{0,1\})$/\1 \3/p')
		p=${nums% *} s=${nums#* } f=0
		[ -n "$s" ] || s=0 ;;
	*"(not built)")
		p=0 s=0 f=1 nnotbuilt=$((nnotbuilt + 1)) ;;
	"FAIL  "*)
		nums=$(echo "$rest" | sed -n 's/^[^ ]* (exit [0-9]*; \([0-9]*\) passed, \([0-9]*\) skipped, \([0-9]*\) failed).*/\1 \2 \3/p')
		# shellcheck disable=SC2086
		set -- $nums
		p=$1 s=$2 f=$3
		[ "$f" -ne 0 ] || f=1 ;;
	"SKIP  "*)
		p=0 s=1 f=0 nskipbin=$((nskipbin + 1)) ;;
	esac
	xml="$dir/$name.xml"
	if [ ! -f "$xml" ]; then
		bad "$name: no $xml"
		continue
	fi
	nfiles=$((nfiles + 1))
	if ! xmllint --noout "$xml" 2>/dev/null; then
		bad "$name: $xml is not well-formed XML: $(xmllint --noout "$xml" 2>&1 | head -n 2)"
		continue
	fi
	[ "$(x "$xml" 'count(/testsuites)')" = 1 ] || bad "$name: the root is not <testsuites>"
	n=$(x "$xml" 'count(/testsuites/testsuite)')
	[ "$n" -ge 1 ] || bad "$name: no <testsuite>"
	fp=0 fs=0 ff=0 fe=0
	i=1
	while [ "$i" -le "$n" ]; do
		su="/testsuites/testsuite[$i]"
		tests=$(x "$xml" "string($su/@tests)")
		fails=$(x "$xml" "string($su/@failures)")
		errs=$(x "$xml" "string($su/@errors)")
		skips=$(x "$xml" "string($su/@skipped)")
		case "$tests:$fails:$errs:$skips" in
		*[!0-9:]* | :* | *::* | *:)
			bad "$name: suite $i: tests, failures, errors, skipped are not counts:" \
				"'$tests' '$fails' '$errs' '$skips'"
			tests=0 fails=0 errs=0 skips=0 ;;
		esac
		[ "$(x "$xml" "count($su/testcase)")" = "$tests" ] ||
			bad "$name: suite $i: tests=$tests but $(x "$xml" "count($su/testcase)") <testcase>s"
		[ "$(x "$xml" "count($su/testcase[skipped])")" = "$skips" ] ||
			bad "$name: suite $i: skipped=$skips but $(x "$xml" "count($su/testcase[skipped])") <skipped>s"
		pass=$((tests - fails - errs - skips))
		[ $pass -ge 0 ] || pass=0
		fp=$((fp + pass)) fs=$((fs + skips)) ff=$((ff + fails)) fe=$((fe + errs))
		i=$((i + 1))
	done
	case $line in
	"PASS  "*) [ $fe -eq 0 ] || bad "$name: PASS, but the file has $fe error(s)" ;;
	"SKIP  "*) [ "$n" -eq 1 ] || bad "$name: skipped whole, but the file has $n suites" ;;
	esac
	[ $fp -eq "$p" ] || bad "$name: the console says $p passed, the file $fp"
	[ $fs -eq "$s" ] || bad "$name: the console says $s skipped, the file $fs"
	[ $ff -eq "$f" ] || bad "$name: the console says $f failed, the file $ff failures"
	tp=$((tp + fp)) ts=$((ts + fs)) tf=$((tf + ff))
done < "$console"

[ "$nskipbin" -eq "$want_bskip" ] || bad "$nskipbin SKIP lines, the summary says $want_bskip skipped whole"
[ $tp -eq "$want_p" ] || bad "the files hold $tp passed tests, the summary says $want_p"
[ $ts -eq $((want_k + want_bskip)) ] ||
	bad "the files hold $ts skipped, the summary $want_k tests and $want_bskip binaries skipped"
[ $tf -eq $((want_x + nnotbuilt)) ] ||
	bad "the files hold $tf failures, the summary $want_x failed tests and $nnotbuilt binaries not built"
[ $nfiles -gt 0 ] || bad "no binary in $console"
if [ $nbad -ne 0 ]; then
	echo "check-junit: $nbad problem(s)"
	exit 1
fi
echo "check-junit: OK ($nfiles files in $dir, well-formed, as the console counts: $tp passed, $ts skipped, $tf failed)"
