#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-install.sh OBJTREE - what a user of the installed tree does, checked: install
# into a scratch prefix (DESTDIR), then build examples/open-sim.c out of tree against
# the installed headers and dvx.pc - once with shared dependencies, once fully static
# (gcc -static, pkg-config --static) - and run both; then move the installed tree and
# build again (the .pc finds its prefix from where it lies). Ends with one line: OK or
# what failed.
set -eu
cd "$(dirname "$0")/.."
obj=${1:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
make -s O="$obj" install DESTDIR="$tmp/root" PREFIX=/opt/dvx >/dev/null
pcdir="$tmp/root/opt/dvx/lib/pkgconfig"
[ -f "$pcdir/dvx.pc" ] || { echo "check-install: no dvx.pc installed"; exit 1; }
cc=${CC:-cc}
build() {	# build NAME PCDIR [--static]
	name=$1 dir=$2 static=${3:-}
	# shellcheck disable=SC2046
	$cc ${static:+-static} -o "$tmp/$name" examples/open-sim.c \
		$(PKG_CONFIG_PATH="$dir" pkg-config ${static} --cflags --libs dvx) \
		> "$tmp/$name.log" 2>&1 || { cat "$tmp/$name.log"; echo "check-install: $name did not link"; exit 1; }
	"$tmp/$name" > "$tmp/$name.out" 2>&1 || { cat "$tmp/$name.out"; echo "check-install: $name failed"; exit 1; }
}
build open-sim-shared "$pcdir"
build open-sim-static "$pcdir" --static
if command -v readelf >/dev/null && readelf -d "$tmp/open-sim-static" 2>/dev/null | grep -q NEEDED; then
	echo "check-install: the static program needs shared libraries"; exit 1
fi
mv "$tmp/root/opt/dvx" "$tmp/moved"
build open-sim-moved "$tmp/moved/lib/pkgconfig"
echo "check-install: OK (installed tree at a scratch prefix and moved; shared and fully static links run: $(cat "$tmp/open-sim-static.out"))"
