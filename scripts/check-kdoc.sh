#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-kdoc.sh [-v] [-p MAX] SRCTREE [HEADER...]
#
# Every public function needs a kernel-doc comment (docs/layout.md, Style). Public
# functions are those declared or defined in include/dvx/**/*.h and *.cuh whose names
# start with dvx_, inline ones included (static inline, DVX_INLINE, DVX_FUNC,
# __device__). Each one must sit under a kernel-doc block (a comment opened with
# "/**"), blank lines, plain comments and #if/#ifdef/#else/#elif/#endif lines allowed
# in between, whose title names it as "dvx_foo()". The title is the doc's text up to
# its first " - " (or its first line when there is none):
#
#	/**
#	 * dvx_foo() - what it does.
#
# One block may head a run of consecutive functions (declarations or definitions)
# and name them all before its " - ":
#
#	/**
#	 * dvx_be16_to_cpu(), dvx_be32_to_cpu(), dvx_be64_to_cpu() - ...
#
# Anything else at file scope (a struct, typedef, variable, other #directive, a
# function without the dvx_ prefix) ends the run. A name seen earlier in the same
# header is not checked again: the #if/#else twin of a function, or the definition
# of a function prototyped above, is covered by the first one's doc. Macros (#define)
# are not functions and are not checked.
#
# With -p MAX, operations are data (docs/layout.md, Style): no public function takes
# more than MAX parameters (the build passes 8); a wider request is a struct (struct
# dvx_p2p_xfer, dvx_p2p_notify). Each public declaration's parameters are counted
# (commas outside nested brackets), overloads included, and one over the limit is
# reported as "file:line: dvx_name: N parameters (at most MAX)".
#
# Prints "file:line: dvx_name: no kernel-doc" for each miss and exits 1; prints
# nothing and exits 0 when all are documented and none is too wide (-v adds a count).
set -u
verbose=0
maxparams=0
while [ $# -gt 0 ]; do
	case $1 in
	-v) verbose=1; shift ;;
	-p) maxparams=$2; shift 2 ;;
	*) break ;;
	esac
done
if [ $# -lt 1 ]; then
	echo "usage: $0 [-v] [-p MAX] SRCTREE [HEADER...]" >&2
	exit 2
fi
top=$1
shift
cd "$top" || exit 2
if [ $# -eq 0 ]; then
	set -- $(find include/dvx \( -name '*.h' -o -name '*.cuh' \) -type f | LC_ALL=C sort)
fi
[ $# -gt 0 ] || exit 0

awk -v verbose="$verbose" -v maxparams="$maxparams" '
function reset_file() {
	depth = 0; incomment = 0; isdoc = 0; docbuf = ""; inpp = 0
	stmt = ""; stmtline = 0; run = 0; title = ""
	for (k in seen)
		delete seen[k]
}

# the title of a kernel-doc block: its text up to the first " - ", else its first line
function doc_title(text,    n, i, l, lines, out, p) {
	n = split(text, lines, "\n")
	out = ""
	for (i = 1; i <= n; i++) {
		l = lines[i]
		sub(/^[ \t]*\/\*\*/, "", l)
		sub(/\*\/[ \t]*$/, "", l)
		sub(/^[ \t]*\*?[ \t]?/, "", l)
		if (out == "" && l ~ /^[ \t]*$/)
			continue
		if (i < n || l !~ /^[ \t]*$/)
			out = out (out == "" ? "" : " ") l
		p = index(out, " - ")
		if (p > 0)
			return substr(out, 1, p)
	}
	# no " - ": the first non-empty line
	for (i = 1; i <= n; i++) {
		l = lines[i]
		sub(/^[ \t]*\/\*\*/, "", l)
		sub(/\*\/[ \t]*$/, "", l)
		sub(/^[ \t]*\*?[ \t]?/, "", l)
		if (l !~ /^[ \t]*$/)
			return l
	}
	return ""
}

# the dvx_ name declared by a file-scope statement, or "" if it declares no dvx_
# function: the first dvx_ identifier followed by "(" outside any parentheses
function func_name(s,    i, c, pd, n, id, j) {
	if (s ~ /^[ \t]*typedef[^A-Za-z0-9_]/)
		return ""
	pd = 0
	n = length(s)
	i = 1
	while (i <= n) {
		c = substr(s, i, 1)
		if (c == "(") {
			pd++; i++; continue
		}
		if (c == ")") {
			pd--; i++; continue
		}
		if (c ~ /[A-Za-z_]/) {
			j = i
			while (j <= n && substr(s, j, 1) ~ /[A-Za-z0-9_]/)
				j++
			id = substr(s, i, j - i)
			i = j
			if (pd == 0 && id ~ /^dvx_/) {
				while (j <= n && substr(s, j, 1) ~ /[ \t\n]/)
					j++
				if (substr(s, j, 1) == "(")
					return id
			}
			continue
		}
		i++
	}
	return ""
}

# the parameters of function @name in statement @s: top-level commas of the bracket
# after the name, plus one (none for "()" and "(void)")
function nparams(s, name,    p, n, i, c, pd, np, body) {
	p = match(s, "(^|[^A-Za-z0-9_])" name "[ \t\n]*[(]")
	if (!p)
		return 0
	i = p + RLENGTH
	n = length(s)
	pd = 1; np = 1; body = ""
	while (i <= n && pd > 0) {
		c = substr(s, i, 1)
		if (c == "(" || c == "[" || c == "<")
			pd++
		else if (c == ")" || c == "]" || c == ">")
			pd--
		else if (c == "," && pd == 1)
			np++
		if (pd > 0)
			body = body c
		i++
	}
	gsub(/[ \t\n]/, "", body)
	if (body == "" || body == "void")
		return 0
	return np
}

# a statement at file scope ended (at ";" or at the "{" of a body)
function statement(    name, pat) {
	if (stmt ~ /^[ \t\n]*$/) {
		stmt = ""
		return
	}
	name = func_name(stmt)
	if (name != "") {
		# every declaration counts here, overloads and #if twins included
		np = nparams(stmt, name)
		if (maxparams > 0 && np > maxparams) {
			printf "%s:%d: %s: %d parameters (at most %d)\n", FILENAME, stmtline,
				name, np, maxparams
			nwide++
		}
	}
	if (name == "") {
		run = 0		# something else ends a run of documented functions
	} else if (!(name in seen)) {
		seen[name] = 1
		nfunc++
		pat = "(^|[^A-Za-z0-9_])" name "[(][)]"
		if (!run || title !~ pat) {
			printf "%s:%d: %s: no kernel-doc\n", FILENAME, stmtline, name
			nmiss++
		}
	}
	stmt = ""
}

FNR == 1 {
	reset_file()
	nfile++
}

{
	line = $0
	# preprocessor lines (and their continuations) are not C; #if and friends keep a run
	if (!incomment && depth == 0 && (inpp || line ~ /^[ \t]*#/)) {
		if (!inpp && line !~ /^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)([^A-Za-z0-9_]|$)/)
			run = 0
		inpp = (line ~ /\\$/)
		next
	}
	if (!incomment && depth > 0 && (inpp || line ~ /^[ \t]*#/)) {
		inpp = (line ~ /\\$/)
		next
	}
	n = length(line)
	i = 1
	while (i <= n) {
		c = substr(line, i, 1)
		if (incomment) {
			if (c == "*" && substr(line, i + 1, 1) == "/") {
				incomment = 0
				if (isdoc) {
					docbuf = docbuf "*/"
					if (depth == 0 && stmt ~ /^[ \t\n]*$/) {
						title = doc_title(docbuf)
						run = 1
					}
				}
				i += 2
				continue
			}
			if (isdoc)
				docbuf = docbuf c
			i++
			continue
		}
		if (c == "/" && substr(line, i + 1, 1) == "*") {
			incomment = 1
			isdoc = (substr(line, i + 2, 1) == "*" && substr(line, i + 3, 1) != "/")
			docbuf = isdoc ? "/**" : ""
			i += isdoc ? 3 : 2
			continue
		}
		if (c == "/" && substr(line, i + 1, 1) == "/")
			break
		if (c == "\"" || c == "\047") {
			# skip a string or character literal
			j = i + 1
			while (j <= n && substr(line, j, 1) != c) {
				if (substr(line, j, 1) == "\\")
					j++
				j++
			}
			if (depth == 0)
				stmt = stmt c c
			i = j + 1
			continue
		}
		if (depth > 0) {
			if (c == "{")
				depth++
			else if (c == "}") {
				depth--
				if (depth == 0)
					stmt = ""	# what follows a body ("} name;") is no new item
			}
			i++
			continue
		}
		if (c == ";") {
			statement()
			i++
			continue
		}
		if (c == "{") {
			statement()
			depth = 1
			i++
			continue
		}
		if (stmt ~ /^[ \t\n]*$/ && c !~ /[ \t]/)
			stmtline = FNR
		stmt = stmt c
		i++
	}
	if (!incomment && depth == 0 && stmt ~ /^[ \t\n]*DVX_(BEGIN|END)_DECLS[ \t]*$/)
		stmt = ""	# the extern "C" brackets are no items
	if (incomment && isdoc)
		docbuf = docbuf "\n"
	else if (!incomment && depth == 0 && stmt !~ /^[ \t\n]*$/)
		stmt = stmt "\n"
}

END {
	if (verbose)
		printf "kernel-doc: %d public functions in %d headers, %d undocumented, %d over %s parameters\n",
			nfunc, nfile, nmiss, nwide, (maxparams > 0 ? maxparams : "any")
	exit nmiss + nwide > 0
}
' "$@"
