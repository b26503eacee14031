#!/bin/sh
# SPDX-License-Identifier: MIT
#
# No file cycles (docs/layout.md): inside each folder, file A depends on file B when one
# of A's undefined symbols is defined by B (nm). The build fails when these edges close
# a loop, however long: a folder's files must read as a stack, each using only those
# below it. Arguments: the objects to check (the library's and the tools').
set -u
[ $# -gt 0 ] || exit 0
tmp=$(mktemp) || exit 1
trap 'rm -f "$tmp"' EXIT
for o in "$@"; do
	nm "$o" 2>/dev/null | awk -v f="$o" '
		$1 == "U" { print "U", f, $2; next }
		NF == 3 && $2 ~ /^[TDBRVWCG]$/ { print "D", f, $3 }'
done > "$tmp"
awk '
	function dir(p) { if (p !~ /\//) return "."; sub(/\/[^\/]*$/, "", p); return p }
	function base(p) { sub(/^.*\//, "", p); sub(/\.o$/, "", p); return p }
	$1 == "D" { def[$3] = (def[$3] == "" ? $2 : def[$3] SUBSEP $2); next }
	$1 == "U" { use[++n] = $2; sym[n] = $3 }
	END {
		for (i = 1; i <= n; i++) {
			if (!(sym[i] in def)) continue
			k = split(def[sym[i]], ds, SUBSEP)
			if (k != 1) continue	# defined twice (stand-ins): not an edge
			a = use[i]; b = ds[1]
			if (a == b || dir(a) != dir(b)) continue
			if (!((a, b) in edge)) { edge[a, b] = sym[i]; out[a] = out[a] " " b }
		}
		# depth-first search for a back edge
		for (v in out) color[v] = 0
		bad = 0
		for (v in out) if (color[v] == 0) bad += dfs(v)
		exit bad ? 1 : 0
	}
	function dfs(v,    m, w, ws, j, r) {
		color[v] = 1; r = 0
		m = split(out[v], ws, " ")
		for (j = 1; j <= m; j++) {
			w = ws[j]
			if (color[w] == 1) {
				printf "cycles: %s/ %s.c -> %s.c (%s) closes a loop of files calling each other\n", \
					dir(v), base(v), base(w), edge[v, w] > "/dev/stderr"
				r++
			} else if (color[w] == 0) r += dfs(w)
		}
		color[v] = 2
		return r
	}' "$tmp"
