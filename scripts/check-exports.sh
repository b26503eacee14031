#!/bin/sh
# SPDX-License-Identifier: MIT
# Fails if the archive given exports a name without the dvx_ prefix (functions and data
# alike, internal helpers included: a static link puts every global of libdvx.a in the
# application's namespace). Names the compiler makes (__odr_asan.*: reserved) pass.
# See docs/build.md, "Checks the build makes".
set -u
lib=$1
stray=$(nm -g --defined-only "$lib" | awk 'NF == 3 && $2 ~ /[TDBRVWCGS]/ {print $3}' |
	grep -Ev '^(dvx_|DVX_|__)' | sort -u)
[ -z "$stray" ] && exit 0
for s in $stray; do echo "error: $lib exports '$s' (every global needs the dvx_ prefix)" >&2; done
rm -f "$lib"
exit 1
