#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-man.sh OBJTREE - the man pages (man/), checked the way a user meets them:
#   1. 'make install' into a scratch DESTDIR: every program installed in bin/ has its
#      page in share/man/man1, dvx(7) is in share/man/man7, and no page is installed
#      for a program that is not;
#   2. every installed page renders without a warning: groff -man -ww -z (groff-base),
#      and no line of the formatted page is wider than 80 columns;
#   3. .TH names the file (DVX-LOOP 1 for dvx-loop.1) and the version of
#      include/dvx/version.h; a tool's page has the sections NAME, SYNOPSIS,
#      DESCRIPTION, OPTIONS, EXIT STATUS, EXAMPLES and SEE ALSO;
#   4. every option the installed tool's --help names (and its subcommands' --help,
#      for "TOOL CMD ..." usage lines) appears in its page, and every long option a tag
#      of the page's OPTIONS section names is one --help knows;
#   5. dvx(7) names every document and example installed in share/doc/dvx;
#   6. 'make uninstall' removes the pages again.
# Prints each problem and ends with one line: OK or how many problems.
set -eu
cd "$(dirname "$0")/.."
obj=${1:-build}
command -v groff >/dev/null || {
	echo "check-man: groff not found (Debian: apt-get install groff-base; scripts/setup.sh does)"
	exit 1
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root="$tmp/root" prefix=/opt/dvx
make -s O="$obj" install DESTDIR="$root" PREFIX=$prefix >/dev/null
inst="$root$prefix"
nbad=0
bad() {
	echo "check-man: $*"
	nbad=$((nbad + 1))
}
version=$(sed -n 's/^#define DVX_VERSION "\(.*\)"/\1/p' include/dvx/version.h)

# 1. a page for every installed program, and only for those
ntools=0
for t in "$inst"/bin/*; do
	[ -f "$t" ] || continue
	ntools=$((ntools + 1))
	n=$(basename "$t")
	[ -f "$inst/share/man/man1/$n.1" ] || bad "$n is installed in bin/ without a page (write man/$n.1)"
done
[ "$ntools" -gt 0 ] || bad "no program installed in bin/"
for p in "$inst"/share/man/man1/*.1; do
	[ -f "$p" ] || continue
	n=$(basename "$p" .1)
	[ -x "$inst/bin/$n" ] || bad "man/$n.1 is installed but $n is not"
done
[ -f "$inst/share/man/man7/dvx.7" ] || bad "dvx(7) is not installed"

# 2, 3. each page renders without warnings, fits 80 columns, has its title and sections
npages=0
for p in "$inst"/share/man/man1/*.1 "$inst"/share/man/man7/*.7; do
	[ -f "$p" ] || continue
	npages=$((npages + 1))
	f=$(basename "$p")
	sec=${f##*.} name=${f%.*}
	w=$(LC_ALL=C.UTF-8 groff -man -ww -z -Tutf8 "$p" 2>&1) || bad "$f: groff failed"
	[ -z "$w" ] || bad "$f: groff warns: $(echo "$w" | head -n 5)"
	long=$(LC_ALL=C groff -man -Tascii -rLL=78n -P-cbu "$p" 2>/dev/null |
		awk 'length > 80 { print "line " NR ": " length " columns" }' | head -n 3)
	[ -z "$long" ] || bad "$f: formatted wider than 80 columns: $long"
	th=$(sed -n 's/^\.TH  *//p' "$p" | head -n 1)
	want=$(echo "$name" | tr '[:lower:]' '[:upper:]')
	case "$th" in
	"$want $sec "*) ;;
	*) bad "$f: .TH should start with '$want $sec', not '$th'" ;;
	esac
	case "$th" in
	*"\"dvx $version\""*) ;;
	*) bad "$f: .TH should name \"dvx $version\" (include/dvx/version.h): $th" ;;
	esac
	[ "$sec" = 1 ] || continue
	for s in NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" EXAMPLES "SEE ALSO"; do
		grep -q "^\.SH \"\{0,1\}$s\"\{0,1\}\$" "$p" || bad "$f: no $s section"
	done
done

# 4. the options of --help and of the page agree
for t in "$inst"/bin/*; do
	[ -f "$t" ] || continue
	n=$(basename "$t")
	p="$inst/share/man/man1/$n.1"
	[ -f "$p" ] || continue
	"$t" --help > "$tmp/help" 2>&1 || bad "$n --help: exit status $?"
	# subcommands: usage lines "usage: TOOL CMD ..." or "       TOOL CMD ..."
	for c in $(sed -n "s/^\(usage:\)\{0,1\} *$n \([a-z][a-z0-9-]*\)\( .*\)\{0,1\}\$/\2/p" \
			"$tmp/help" | sort -u); do
		"$t" "$c" --help >> "$tmp/help" 2>&1 || bad "$n $c --help: exit status $?"
	done
	# options as --help writes them: --long, and -x where a short one stands alone
	grep -o -- '--[a-z][a-z0-9-]*' "$tmp/help" | sort -u > "$tmp/long"
	grep -o -- '\(^\|[][ ,|(]\)-[A-Za-z]\($\|[][ ,|=)]\)' "$tmp/help" |
		sed 's/^[^-]*//; s/[^A-Za-z]*$//' | sort -u > "$tmp/short"
	# the page's text with roff's \- as -
	sed 's/\\-/-/g; s/\\f[BIRP]//g' "$p" > "$tmp/page"
	while read -r o; do
		grep -q -- "$o\($\|[^a-z0-9-]\)" "$tmp/page" || bad "$n.1: $o (from $n --help) is not documented"
	done < "$tmp/long"
	while read -r o; do
		grep -q -- "\(^\|[^A-Za-z0-9-]\)$o\($\|[^A-Za-z0-9-]\)" "$tmp/page" ||
			bad "$n.1: $o (from $n --help) is not documented"
	done < "$tmp/short"
	# tags (the line after .TP) of the OPTIONS section name only long options --help
	# knows (short aliases the source accepts, such as -h, need not be in --help)
	awk '/^\.SH/ { in_opt = ($0 ~ /^\.SH "?OPTIONS"?$/) } in_opt && tag { print; tag = 0 }
	     in_opt && /^\.TP/ { tag = 1 }' "$tmp/page" |
		grep -o -- '\(^\|[ ,]\)--\{0,1\}[A-Za-z][a-z0-9-]*' | sed 's/^[ ,]*//' |
		grep '^--' | sort -u > "$tmp/tags" || true
	while read -r o; do
		grep -qx -- "$o" "$tmp/long" ||
			bad "$n.1: OPTIONS documents $o, which $n --help does not name"
	done < "$tmp/tags"
done

# 5. dvx(7) names every installed document and example
for d in "$inst"/share/doc/dvx/*.md "$inst"/share/doc/dvx/examples/*; do
	[ -f "$d" ] || continue
	b=$(basename "$d")
	sed 's/\\-/-/g' "$inst/share/man/man7/dvx.7" | grep -qF "$b" ||
		bad "dvx.7 does not name $b (share/doc/dvx)"
done

# 6. uninstall takes them away
make -s O="$obj" uninstall DESTDIR="$root" PREFIX=$prefix >/dev/null
left=$(find "$inst/share/man" -type f 2>/dev/null | sed "s|^$inst/||" | head -n 5)
[ -z "$left" ] || bad "left after 'make uninstall': $left"

if [ $nbad -ne 0 ]; then
	echo "check-man: $nbad problem(s)"
	exit 1
fi
echo "check-man: OK ($npages pages for $ntools installed programs: installed, rendered without warnings, options as --help says, removed by uninstall)"
