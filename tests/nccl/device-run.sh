#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/nccl/device-run.sh [CONFIG|SET ...] - NCCL's collectives through libnccl-net-dvx.so
# on a machine with two GPUs (docs/nccl.md "Running NCCL with dvx"): PyTorch's NCCL (one
# process per GPU), P2P, shared memory and NVLink multicast off so that NCCL uses the
# network, the software NICs of the two processes joined by the wire, over the
# configurations of the sharing pool; NCCL's own Socket transport over the same sweep for
# comparison. Each result is checked exactly (tests/nccl/torch_sweep.py).
#
# Environment:
#   OUT        where the logs go (default ./nccl-out): env.txt, plugin.txt (what the .so
#              needs), NAME.log and NAME.stats.*.json per configuration, summary.txt
#   BUILD      the build folder holding plugins/nccl/libnccl-net-dvx.so (default build-min
#              if it has one, else build); build it with
#              'make O=build-min minimal_defconfig && make O=build-min plugins' so that
#              the .so needs nothing but libc (no rdma-core on the GPU machine)
#   MAX_BYTES  the sweep's largest message (default 268435456)
#   WIRE       how the two processes' software NICs find each other: ondemand (default:
#              through the handles alone, DVX_NET_WIRE=ondemand) or mesh (a UNIX wire
#              joined at start-up, DVX_NET_WIRE=unix:DIR)
#   PER_RUN_S  time limit of one configuration (default 150: a sweep to 256 MiB is
#              estimated at about a minute with NCCL's start-up; three fit in 10 minutes)
#   SWEEP_ARGS more arguments for torch_sweep.py (e.g. '--colls broadcast,reduce')
#   JOBS       configurations run at once (default 1). More than one shares the two GPUs
#              and the CPUs between them: the results are still checked exactly, but the
#              bandwidth figures are not one configuration's alone (time with JOBS=1)
# Configurations: off, g{1,2,4}d{1,2,4}q1, g{1,2,4}d1q4, off-2nics, g2-2nics, socket;
# NAME-cts is NAME with the CTS receiver offload (DVX_NET_CTS_OFFLOAD=1); NAME-gdr is
# NAME with GPU buffers (DVX_NET_GDR=1 through dvx-copier, NCCL_NET_GDR_LEVEL=SYS,
# NCCL_NET_GDR_READ=1; the plugin must be built with CONFIG_DVX_GPU, which
# minimal_defconfig leaves out: BUILD=a build of gpu_min_defconfig), NAME-gdrt the same
# with the copies in the rank's own process (DVX_NET_GDR_ENGINE=thread).
# Sets: quick (off g2d1q1 g2d1q4 off-2nics socket), pool (the g* ones), cts (off-cts
# g2d1q1-cts g4d4q4-cts off-2nics-cts g2-2nics-cts), gdr (off-gdr g2d1q1-gdr
# off-2nics-gdr), all (default: not the cts or gdr ones).
# One line per configuration on stdout and in $OUT/summary.txt; the exit status is
# non-zero if any configuration failed.
# shellcheck disable=SC2086 # $P and $launch are lists of words
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${OUT:-./nccl-out}
max=${MAX_BYTES:-268435456}
per=${PER_RUN_S:-150}
if [ -z "${BUILD:-}" ]; then
	BUILD="$root/build"
	[ -f "$root/build-min/plugins/nccl/libnccl-net-dvx.so" ] && BUILD="$root/build-min"
fi
plugin=$(cd "$BUILD" && pwd)/plugins/nccl/libnccl-net-dvx.so
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [ ! -f "$plugin" ]; then
	echo "no $plugin: build it first (see the head of $0)" | tee "$out/summary.txt"
	exit 2
fi
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())'
} > "$out/env.txt" 2>&1
cat "$out/env.txt"
# the .so must load here: what it needs, and whether the loader finds it
{ echo "$plugin"; readelf -d "$plugin" | grep NEEDED; ldd "$plugin"; } > "$out/plugin.txt" 2>&1
if grep -q 'not found' "$out/plugin.txt"; then
	cat "$out/plugin.txt"
	echo "the plugin needs a library this machine lacks: build it with minimal_defconfig" |
		tee "$out/summary.txt"
	exit 2
fi
if command -v torchrun > /dev/null 2>&1; then
	launch="torchrun"
else
	launch="python3 -m torch.distributed.run"
fi
export NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NVLS_ENABLE=0 NCCL_NET_PLUGIN_REF_COUNT=1
export NCCL_DEBUG=${NCCL_DEBUG:-INFO} NCCL_DEBUG_SUBSYS=${NCCL_DEBUG_SUBSYS:-INIT,NET}
P="NCCL_NET_PLUGIN=$plugin NCCL_NET=dvx DVX_NET_SIM=1"
failed=0
: > "$out/summary.txt"

jobs=${JOBS:-1}
nrun=0

run1() {	# PORT NAME, then VAR=VALUE ... for that configuration
	port=$1
	name=$2
	shift 2
	wire=$(mktemp -d /tmp/dvx-nccl.XXXXXX)
	w=ondemand
	[ "${WIRE:-ondemand}" = mesh ] && w="unix:$wire"
	env "$@" DVX_NET_WIRE="$w" DVX_NET_STATS="$out/$name.stats.%p.%c.json" \
		timeout "$per" $launch --nproc-per-node 2 --master-port "$port" \
		"$here/torch_sweep.py" --max-bytes "$max" ${SWEEP_ARGS:-} > "$out/$name.log" 2>&1
	rc=$?
	rm -rf "$wire"
	loaded=$(grep -m 1 -io 'loaded net plugin [^ ]*[^)]*)\?' "$out/$name.log")
	wrong=$(grep -m 1 'wrong at' "$out/$name.log")
	line="$name: rc=$rc ${loaded:-plugin not seen loaded} $(grep -c ' GB/s' "$out/$name.log") rows${wrong:+ $wrong}"
	echo "$line" | tee -a "$out/summary.txt"
}

run() {	# NAME, then VAR=VALUE ...: at most $jobs at once
	nrun=$((nrun + 1))
	run1 $((29500 + nrun)) "$@" &
	[ $((nrun % jobs)) = 0 ] && wait
	return 0
}

one() {
	# NAME-cts: the configuration with the CTS receiver offload (DVX_NET_CTS_OFFLOAD=1)
	X=DVX_NET_CTS_OFFLOAD=0
	c=$1
	case $c in
	*-cts) c=${c%-cts}; X=DVX_NET_CTS_OFFLOAD=1 ;;
	*-gdr) c=${c%-gdr}
		X="DVX_NET_GDR=1 NCCL_NET_GDR_LEVEL=SYS NCCL_NET_GDR_READ=1 DVX_NET_GDR_TRACE=4" ;;
	*-gdrt) c=${c%-gdrt}
		X="DVX_NET_GDR=1 DVX_NET_GDR_ENGINE=thread NCCL_NET_GDR_LEVEL=SYS NCCL_NET_GDR_READ=1" ;;
	esac
	case $c in
	off) run "$1" $P $X DVX_NET_COMM_NGROUPS=0 ;;
	off-2nics) run "$1" $P $X DVX_NET_SIM=2 DVX_NET_COMM_NGROUPS=0 ;;
	g2-2nics) run "$1" $P $X DVX_NET_SIM=2 DVX_NET_COMM_NGROUPS=2 ;;
	socket) run socket NCCL_NET=Socket ;;
	g[124]d[124]q[14])
		g=${c#g}; g=${g%%d*}; d=${c#*d}; d=${d%%q*}; q=${c#*q}
		run "$1" $P $X DVX_NET_COMM_NGROUPS="$g" DVX_NET_QP_DEPTH_MULT="$d" \
			DVX_NET_QPS_PER_CONN="$q" ;;
	*) echo "$1: no such configuration" | tee -a "$out/summary.txt"; failed=1 ;;
	esac
}

pool="g1d1q1 g1d2q1 g1d4q1 g1d1q4 g2d1q1 g2d2q1 g2d4q1 g2d1q4 g4d1q1 g4d2q1 g4d4q1 g4d1q4"
[ $# -gt 0 ] || set -- all
for a in "$@"; do
	case $a in
	quick) for c in off g2d1q1 g2d1q4 off-2nics socket; do one "$c"; done ;;
	cts) for c in off-cts g2d1q1-cts g4d4q4-cts off-2nics-cts g2-2nics-cts; do one "$c"; done ;;
	gdr) for c in off-gdr g2d1q1-gdr off-2nics-gdr; do one "$c"; done ;;
	pool) for c in $pool; do one "$c"; done ;;
	all) for c in off $pool off-2nics g2-2nics socket; do one "$c"; done ;;
	*) one "$a" ;;
	esac
done
wait
grep -qv ': rc=0 ' "$out/summary.txt" && failed=1
exit $failed
