#!/bin/sh
# SPDX-License-Identifier: MIT
# Fails if the archive given exports a name without the dvx_ prefix (functions and data
# alike, internal helpers included: a static link puts every global of libdvx.a in the
# application's namespace). Names the compiler makes (__odr_asan.*: reserved) pass.
# With --product: the archive is the appliance archive (libdvx.a), which holds no test
# double: no object of the mock hal (dvx_mock_*; it lives in libdvx-test.a).
# See docs/build.md, "Checks the build makes".
set -u
product=0
[ "$1" = --product ] && { product=1; shift; }
lib=$1
if [ $product = 1 ]; then
	mock=$(nm -g --defined-only "$lib" | awk 'NF == 3 && $3 ~ /^dvx_mock/ {print $3}' | sort -u)
	if [ -n "$mock" ]; then
		for s in $mock; do echo "error: $lib defines '$s': test doubles belong in libdvx-test.a" >&2; done
		rm -f "$lib"
		exit 1
	fi
fi
stray=$(nm -g --defined-only "$lib" | awk 'NF == 3 && $2 ~ /[TDBRVWCGS]/ {print $3}' |
	grep -Ev '^(dvx_|DVX_|__)' | sort -u)
[ -z "$stray" ] && exit 0
for s in $stray; do echo "error: $lib exports '$s' (every global needs the dvx_ prefix)" >&2; done
rm -f "$lib"
exit 1
