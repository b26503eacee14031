#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-names.sh SRCTREE - the naming table of docs/layout.md ("Names"), held over every
# public name in include/dvx/**/*.h and *.cuh:
#  - lifecycle verbs come in pairs: X_open/X_close (a device), X_create/X_destroy (a
#    firmware object), X_reg/X_dereg (memory a NIC or GPU registers), X_alloc/X_free
#    (a resource a device or the hal hands out); init/fini is checked by kind below;
#  - every fini returns int (0 or a negative errno), never void;
#  - sizing is X_mem_size() (one region) or X_mem_req() (several, struct dvx_mem_req);
#    a public function ending in _size or _req is one of those, or named in the short
#    list below of names that size no caller memory;
#  - input structs are X_cfg; X_attr is the hal's query results only (include/dvx/hal/).
# Prints "check-names: ..." for each breach and exits 1; silent and 0 otherwise.
set -u
top=${1:?usage: check-names.sh SRCTREE}
cd "$top" || exit 1
fail=0
err() { echo "check-names: $*" >&2; fail=1; }
hdrs=$(find include/dvx -name '*.h' -o -name '*.cuh' | sort)
names=$(sed -n 's/.*\b\(dvx_[a-z0-9_]*\)(.*/\1/p' $hdrs | sort -u)
has() { printf '%s\n' "$names" | grep -qx "$1"; }

for n in $names; do
	case $n in
	*_open) has "${n%_open}_close" || err "$n has no ${n%_open}_close" ;;
	*_create) has "${n%_create}_destroy" || err "$n has no ${n%_create}_destroy" ;;
	*_reg) has "${n%_reg}_dereg" || err "$n has no ${n%_reg}_dereg" ;;
	*_alloc) has "${n%_alloc}_free" || err "$n has no ${n%_alloc}_free" ;;
	esac
	case $n in
	*_mem_size|*_mem_req) ;;
	# not sizes of caller memory: a WQE's size in the ring, a mock's failure request
	dvx_mlx5_sq_wqe_size|dvx_ht_mock_fail_req) ;;
	*_size|*_req) err "$n: sizing is X_mem_size() or X_mem_req() (docs/layout.md, Names)" ;;
	esac
done
grep -nE '^[[:space:]]*(static[[:space:]]+inline[[:space:]]+)?void[[:space:]]+dvx_[a-z0-9_]*_fini\(' $hdrs |
while IFS= read -r l; do echo "check-names: ${l%%(*}: a fini returns int" >&2; echo x; done | grep -q x && fail=1
for f in $hdrs; do
	case $f in include/dvx/hal/*) continue ;; esac
	grep -nE '^struct dvx_[a-z0-9_]*_attr[[:space:]]*\{' "$f" | while IFS= read -r l; do
		echo "check-names: $f:${l%%\{*}: input structs are _cfg (_attr: the hal's query results)" >&2
		echo x
	done | grep -q x && fail=1
done
exit $fail
