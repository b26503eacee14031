#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-fields.sh SRCTREE - a PRM field of a context (DVX_MLX5_CQC_*, _QPC_*, _ADS_*:
# positions relative to the context, dvx/mlx5/cmd.h and docs/prm.md 0) is read or written
# only through a pointer to that context: a variable named cqc, qpc or ads, or
# DVX_MLX5_<CTX>_IN(mailbox). A mailbox pointer given with a context's field compiles
# and touches the wrong bytes (the header's status, say), so the build refuses it in
# every C and CUDA file of the tree. Prints "check-fields: FILE:LINE: ..." for each and
# exits 1; silent and 0 otherwise.
set -u
top=${1:?usage: check-fields.sh SRCTREE}
cd "$top" || exit 1
srcs=$(find . -path ./build -prune -o -path './build-*' -prune -o -path ./.git -prune -o \
	\( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) -print | sort)
# shellcheck disable=SC2086
bad=$(grep -nE 'dvx_mlx5_(get|set)(64)?\([^,]*,[[:space:]]*DVX_MLX5_(CQC|QPC|ADS)_' $srcs |
	grep -vE 'dvx_mlx5_(get|set)(64)?\([[:space:]]*(cqc|qpc|ads|DVX_MLX5_(CQC|QPC|ADS)_IN\([^,]*\)),')
[ -z "$bad" ] && exit 0
printf '%s\n' "$bad" | while IFS= read -r l; do
	f=${l%%:*}
	r=${l#*:}
	echo "check-fields: $f:${r%%:*}: a context's field through a pointer to that context" \
		"(cqc, qpc, ads or DVX_MLX5_<CTX>_IN(), dvx/mlx5/cmd.h)" >&2
done
exit 1
