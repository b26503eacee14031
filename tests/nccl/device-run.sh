#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/nccl/device-run.sh BUILD OUTDIR [MAX_BYTES] - NCCL's collectives through
# libnccl-net-dvx.so on a machine with two GPUs (docs/nccl.md): PyTorch's NCCL (torchrun,
# one process per GPU), P2P and shared memory off so that NCCL uses the network, the
# software NICs of the two processes joined by the wire, over the configurations of the
# sharing pool; then NCCL's own Socket transport over the same sweep for comparison.
# Logs go to OUTDIR; one line per configuration to stdout. Not run yet (no GPU in CI).
set -u
b=$(cd "$1" && pwd) out=$2 max=${3:-268435456}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
plugin="$b/plugins/nccl/libnccl-net-dvx.so"
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())'; } \
	2>&1 | tee "$out/env.txt"
export NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NVLS_ENABLE=0 NCCL_NET_PLUGIN_REF_COUNT=1
export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET
run() {	# NAME, then VAR=VALUE ... for that configuration
	name=$1
	shift
	wire=$(mktemp -d /tmp/dvx-nccl.XXXXXX)
	env "$@" DVX_NET_WIRE="unix:$wire" DVX_NET_STATS="$out/$name.stats.%p.%c.json" \
		timeout 1200 torchrun --nproc-per-node 2 "$here/torch_sweep.py" --max-bytes "$max" \
		> "$out/$name.log" 2>&1
	rc=$?
	rm -rf "$wire"
	loaded=$(grep -o 'Loaded net plugin [^ ]* ([^)]*)' "$out/$name.log" | head -n 1)
	echo "$name: rc=$rc ${loaded:-plugin not loaded} $(grep -c ' GB/s' "$out/$name.log") rows"
}
P="NCCL_NET_PLUGIN=$plugin NCCL_NET=dvx DVX_NET_SIM=1"
run off $P DVX_NET_COMM_NGROUPS=0
for g in 1 2 4; do
	for d in 1 2 4; do
		run "g${g}d${d}q1" $P DVX_NET_COMM_NGROUPS=$g DVX_NET_QP_DEPTH_MULT=$d DVX_NET_QPS_PER_CONN=1
	done
	run "g${g}d1q4" $P DVX_NET_COMM_NGROUPS=$g DVX_NET_QPS_PER_CONN=4
done
run off-2nics $P DVX_NET_SIM=2 DVX_NET_COMM_NGROUPS=0
run g2-2nics $P DVX_NET_SIM=2 DVX_NET_COMM_NGROUPS=2
run socket NCCL_NET=Socket
