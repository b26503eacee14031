#!/bin/sh
# SPDX-License-Identifier: MIT
#
# main-job.sh [BUILD_DIR] - dvx's main job, run at the end of scripts/setup.sh.
#
# First the tools' self-check: every WQE kind is encoded by dvx-wqe with the driver's
# builders and decoded back by dvx-wqe's decoder (which shares the builders' PRM structs:
# it checks the tools, the layouts are checked against rdma-core and by the software
# NIC in the suite), and dvx-probe reports the mlx5
# devices of this machine (status 3, "no mlx5 device", is the expected answer on a
# machine without one). Then the main job itself: dvx-loop, two ranks on the software
# NIC running every data-path operation (RDMA WRITE/READ, WRITE with immediate,
# SEND/RECV, atomics, the companion counter), each checked byte for byte; the job
# fails when dvx-loop does.
set -u
O=${1:-build}
T="$O/tools"
fail=0

echo "== dvx main job: tool self-check =="
check() {
	kind=$1; shift
	want=$1; shift
	out=$("$T/dvx-wqe" encode "$kind" "$@" | "$T/dvx-wqe" decode 2>&1)
	if printf '%s\n' "$out" | grep -q "$want"; then
		printf '  %-18s ok   (%s)\n' "$kind" "$want"
	else
		printf '  %-18s FAIL (wanted "%s")\n%s\n' "$kind" "$want" "$out"
		fail=1
	fi
}
check write "opcode: RDMA_WRITE" --idx 5 --qpn 0x123 --raddr 0x1000 --rkey 0x5678 --laddr 0x40 --lkey 0x1234 --len 4096
check write-inline "inline_len: 8" --qpn 0x123 --raddr 0x1000 --rkey 0x5678 --data 0011223344556677
check faa "opcode: ATOMIC_FA" --qpn 0x123 --raddr 0x1000 --rkey 0x5678 --add 1 --laddr 0 --lkey 0x99
check masked-cas64 "wqebbs: 2" --qpn 0x123 --raddr 0x1000 --rkey 1 --compare 1 --swap 2 --compare-mask 3 --swap-mask 4 --laddr 0 --lkey 9
check wait "opcode: WAIT" --qpn 0x234 --idx 7 --cqn 0x4a --max-index 5

echo "== dvx-probe =="
"$T/dvx-probe"
rc=$?
case $rc in
0) echo "dvx-probe: mlx5 devices listed above" ;;
3) echo "dvx-probe: no mlx5 device on this machine (expected without a ConnectX NIC)" ;;
*) echo "dvx-probe: failed with status $rc"; fail=1 ;;
esac

if [ $fail -ne 0 ]; then
	echo "== dvx main job: tool self-check FAILED =="
fi

echo "== dvx-loop: two ranks on the software NIC =="
"$T/dvx-loop"
rc=$?
if [ $rc -ne 0 ]; then
	echo "dvx-loop: failed with status $rc"
	fail=1
fi

if [ $fail -ne 0 ]; then
	echo "== dvx main job: FAILED =="
	exit 1
fi
echo "== dvx main job: passed =="
