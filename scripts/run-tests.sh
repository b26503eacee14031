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
#   DVX_JUNIT_DIR=dir    also leave a JUnit XML file per binary, dir/NAME.xml ('make
#                        check JUNIT=dir'); the console and the exit status stay as
#                        without it
#
# The counts come from cmocka's own report, in either of its formats: the summary
# lines ("[  PASSED  ] N test(s)." ...) or, when it writes XML
# (CMOCKA_MESSAGE_OUTPUT=xml), the <testsuite tests= failures= errors= skipped=>
# attributes: passed = tests - failures - errors - skipped, as the summary lines count.
# A binary running several groups is counted over all of them.
#
# With DVX_JUNIT_DIR each binary runs with CMOCKA_MESSAGE_OUTPUT=xml and
# CMOCKA_XML_FILE=OBJTREE/tests/logs/NAME.junit.%g.xml (cmocka 1.1 writes one file per
# group, %g its name, and will not replace a file that exists, so the runner removes
# them first); NAME.xml holds their <testsuite> elements, and the log the XML too (a
# failed binary's log tail shows cmocka's failure messages). What cmocka cannot report
# the runner writes as a suite named NAME with one test case NAME: a binary that
# skipped itself (77; <skipped message=why>, in place of any suite it ran), one that
# failed without a failed test (an exit status, a crash, a timeout: <failure>, with the
# log's tail), one that was not built; and for a program that prints cmocka's lines
# without being cmocka (nvcc-headers-test) a suite built from those lines. A binary that
# dies inside a group leaves no XML of it, and in XML mode its log has no "[ RUN ]"
# lines: run it again without DVX_JUNIT_DIR to see where. So per binary the file's
# counts are the console line's: passed and skipped as printed, failures = the failed
# tests or 1 for a failed binary without any, 1 skipped for a binary skipped whole
# (scripts/check-junit.sh checks that). CMOCKA_XML_FILE from the environment is not passed on: every binary
# would write the same file.
set -u
tmo=${DVX_TEST_TIMEOUT:-1200}
obj=$1
shift
log_dir="$obj/tests/logs"
mkdir -p "$log_dir"
junit=${DVX_JUNIT_DIR:-}
if [ -n "$junit" ] && ! mkdir -p "$junit"; then
	echo "run-tests.sh: cannot make the JUnit folder $junit"
	exit 1
fi
unset CMOCKA_XML_FILE

# counts LOG: "PASSED SKIPPED FAILED" from cmocka's summary lines and XML suites in LOG
counts() {
	awk '
	function attr(s, name,    m) {
		if (!match(s, " " name "=\"[0-9]+\""))
			return 0
		m = substr(s, RSTART, RLENGTH)
		gsub(/[^0-9]/, "", m)
		return m + 0
	}
	/^\[  PASSED  \] [0-9]+ test/ { p += $4 }
	/^\[  SKIPPED \] [0-9]+ test/ { s += $4 }
	/^\[  FAILED  \] [0-9]+ test/ { f += $4 }
	/^[ \t]*<testsuite / {
		n = attr($0, "tests") - attr($0, "failures") - attr($0, "errors") - attr($0, "skipped")
		p += n > 0 ? n : 0
		s += attr($0, "skipped")
		f += attr($0, "failures")
	}
	END { printf "%d %d %d\n", p, s, f }' "$1"
}

# skipped_names LOG: the names of the skipped tests, one "      skipped: NAME" each
skipped_names() {
	sed -n '/SKIPPED \] [0-9]* test/,$p' "$1" |
		sed -n 's/^\[  SKIPPED \] \([^0-9].*\)/      skipped: \1/p'
	awk '/^[ \t]*<testcase / { name = $0; sub(/^[^"]*"/, "", name); sub(/".*/, "", name) }
	     /^[ \t]*<skipped/ { print "      skipped: " name }' "$1"
}

# text fit for an XML attribute or CDATA section: printable ASCII, tabs and newlines
xml_text() {
	LC_ALL=C tr -d '\000-\010\013\014\016-\037\177-\377'
}
xml_attr() {
	printf '%s' "$1" | xml_text | tr '\n' ' ' |
		sed 's/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g; s/"/\&quot;/g'
}

# junit_suite NAME skipped|failure MESSAGE [LOG]: the runner's own suite for NAME
junit_suite() {
	if [ "$2" = skipped ]; then
		echo "  <testsuite name=\"$1\" time=\"0\" tests=\"1\" failures=\"0\" errors=\"0\" skipped=\"1\" >"
		echo "    <testcase name=\"$1\" time=\"0\" >"
		echo "      <skipped message=\"$(xml_attr "$3")\"/>"
	else
		echo "  <testsuite name=\"$1\" time=\"0\" tests=\"1\" failures=\"1\" errors=\"0\" skipped=\"0\" >"
		echo "    <testcase name=\"$1\" time=\"0\" >"
		printf '      <failure message="%s"><![CDATA[' "$(xml_attr "$3")"
		if [ -n "${4:-}" ]; then
			# the binary's output, without the XML the runner appended to the log
			sed "/^(cmocka's JUnit report, /,\$d" "$4" | tail -n 60 | xml_text |
				sed 's/]]>/]]]]><![CDATA[>/g'
		fi
		echo ']]></failure>'
	fi
	echo "    </testcase>"
	echo "  </testsuite>"
}

# junit_text_suite NAME LOG PASSED SKIPPED FAILED: a suite for a program that follows
# cmocka's conventions without being cmocka (nvcc-headers-test), from its text lines:
# exactly the counts the console printed, named after its "[       OK ] name",
# "[  FAILED  ] name" and "[  SKIPPED ] name" lines where it printed them
junit_text_suite() {
	xml_text < "$2" | awk -v name="$1" -v p="$3" -v s="$4" -v f="$5" '
	function esc(x) {
		gsub(/&/, "\\&amp;", x); gsub(/</, "\\&lt;", x); gsub(/>/, "\\&gt;", x)
		gsub(/"/, "\\&quot;", x)
		return x
	}
	function tc(list, n, i, what) {
		printf "    <testcase name=\"%s\" time=\"0\" >\n", esc(i <= n ? list[i] : name " " what " " i)
	}
	/^\[==========\] Running / { summary = 0 }
	/^\[==========\] [0-9]+ test\(s\) run/ { summary = 1 }
	summary { next }
	/^\[       OK \] / { ok[++nok] = substr($0, 14) }
	/^\[  FAILED  \] / && !/^\[  FAILED  \] [0-9]+ test/ { fl[++nfl] = substr($0, 14) }
	/^\[  SKIPPED \] / && !/^\[  SKIPPED \] [0-9]+ test/ { sk[++nsk] = substr($0, 14) }
	END {
		printf "  <testsuite name=\"%s\" time=\"0\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"%d\" >\n", esc(name), p + s + f, f, s
		for (i = 1; i <= p; i++) { tc(ok, nok, i, "passed"); print "    </testcase>" }
		for (i = 1; i <= f; i++) {
			tc(fl, nfl, i, "failed")
			print "      <failure message=\"failed (see the log)\"/>"
			print "    </testcase>"
		}
		for (i = 1; i <= s; i++) { tc(sk, nsk, i, "skipped"); print "      <skipped/>"; print "    </testcase>" }
		print "  </testsuite>"
	}'
}

# junit_write NAME PASSED SKIPPED FAILED [skipped|failure MESSAGE [LOG]]:
# DVX_JUNIT_DIR/NAME.xml from cmocka's group files (none for a skipped binary; without
# any, a suite from the text lines of a program that printed cmocka's), then the
# runner's own suite if one is given
junit_write() {
	[ -n "$junit" ] || return 0
	out="$junit/$1.xml"
	{
		echo '<?xml version="1.0" encoding="UTF-8" ?>'
		echo '<testsuites>'
		if [ "${5:-}" != skipped ]; then
			found=0
			for g in "$log_dir/$1".junit.*.xml; do
				[ -f "$g" ] || continue
				sed -e '1,/<testsuites>/d' -e '/^<\/testsuites>/d' "$g"
				found=1
			done
			if [ $found -eq 0 ] && [ $(($2 + $3 + $4)) -gt 0 ]; then
				junit_text_suite "$1" "$log_dir/$1.log" "$2" "$3" "$4"
			fi
		fi
		[ -z "${5:-}" ] || junit_suite "$1" "$5" "$6" "${7:-}"
		echo '</testsuites>'
	} > "$out.tmp" && mv "$out.tmp" "$out"
	rm -f "$log_dir/$1".junit.*.xml
}

nbin=0 npass=0 nskip=0 nfail=0 bfail=0 bskip=0
failed_list=""
for t in "$@"; do
	if [ -n "${TESTS:-}" ]; then
		case " $TESTS " in *" $t "*) ;; *) continue ;; esac
	fi
	bin="$obj/tests/$t"
	log="$log_dir/$t.log"
	nbin=$((nbin + 1))
	rm -f "$log_dir/$t".junit.*.xml
	[ -z "$junit" ] || rm -f "$junit/$t.xml"
	if [ ! -x "$bin" ]; then
		echo "FAIL  $t (not built)"
		bfail=$((bfail + 1)); failed_list="$failed_list $t"
		junit_write "$t" 0 0 0 failure "not built: $bin"
		continue
	fi
	(
		if [ -n "$junit" ]; then
			CMOCKA_MESSAGE_OUTPUT=xml
			CMOCKA_XML_FILE="$log_dir/$t.junit.%g.xml"
			export CMOCKA_MESSAGE_OUTPUT CMOCKA_XML_FILE
		fi
		# shellcheck disable=SC2086
		exec timeout -k 10 "$tmo" ${DVX_TEST_WRAPPER:-} "$bin"
	) > "$log" 2>&1
	rc=$?
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		echo "(timed out after $tmo s: killed by run-tests.sh)" >> "$log"
	fi
	# a binary that skipped itself says why on its last line
	why=$(grep -v '^[[:space:]]*$' "$log" | tail -n 1)
	if [ -n "$junit" ]; then
		for g in "$log_dir/$t".junit.*.xml; do
			[ -f "$g" ] || continue
			echo "(cmocka's JUnit report, $junit/$t.xml:)"
			cat "$g"
		done >> "$log"
	fi
	c=$(counts "$log")
	p=${c%% *} f=${c##* } s=${c#* } && s=${s%% *}
	if [ $rc -eq 77 ]; then
		echo "SKIP  $t: $why"
		bskip=$((bskip + 1))
		junit_write "$t" 0 0 0 skipped "$why"
		[ "${V:-0}" = 1 ] && cat "$log"
		continue
	fi
	npass=$((npass + p)); nskip=$((nskip + s)); nfail=$((nfail + f))
	if [ $rc -ne 0 ] || [ "$f" -ne 0 ]; then
		if [ "$f" -eq 0 ]; then
			nfail=$((nfail + 1))
			case $rc in
			124 | 137) why="timed out after $tmo s" ;;
			*) why="exit status $rc without a failed test" ;;
			esac
			junit_write "$t" "$p" "$s" "$f" failure "$why" "$log"
		else
			junit_write "$t" "$p" "$s" "$f"
		fi
		echo "FAIL  $t (exit $rc; $p passed, $s skipped, $f failed) - log: $log"
		sed 's/^/      | /' "$log" | tail -n 60
		bfail=$((bfail + 1)); failed_list="$failed_list $t"
	else
		junit_write "$t" "$p" "$s" "$f"
		extra=""
		[ "$s" -ne 0 ] && extra=", $s skipped"
		echo "PASS  $t ($p passed$extra)"
		[ "${V:-0}" = 1 ] && cat "$log"
		if [ "$s" -ne 0 ]; then
			skipped_names "$log"
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
