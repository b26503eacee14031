#!/bin/sh
# SPDX-License-Identifier: MIT
#
# bench/nvl-nvshmem.sh [OUT [args]] - build and run bench/nvl-nvshmem.cu (dvx's NVLink
# device API beside NVSHMEM in one program) where NVSHMEM is found: $NVSHMEM_HOME, or
# the nvidia-nvshmem Python wheel of python3. Elsewhere it says so and exits 77: NVSHMEM
# is never a dependency of the library, its tests or the default build. OUT: where the
# binary goes (default build/bench). Multicast stays off (NVSHMEM_DISABLE_NVLS=1).
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$src/build/bench}
[ $# -gt 0 ] && shift
H=${NVSHMEM_HOME:-$(python3 -c "import nvidia.nvshmem as m; print(list(m.__path__)[0])" 2>/dev/null)}
if [ -z "$H" ] || [ ! -f "$H/include/nvshmem.h" ]; then
	echo "nvl-nvshmem: no NVSHMEM (set NVSHMEM_HOME or install the nvidia-nvshmem wheel): skipped"
	exit 77
fi
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
HOSTLIB=$(ls "$H"/lib/libnvshmem_host.so* 2>/dev/null | head -1)
mkdir -p "$out"
"$NVCC" -O3 -std=c++17 -rdc=true -arch=sm_90 -I"$src/include" -I"$H/include" \
	"$src/bench/nvl-nvshmem.cu" -o "$out/nvl-nvshmem" "$H/lib/libnvshmem_device.a" \
	-Xlinker "$HOSTLIB" -Xlinker -rpath="$H/lib" || exit 1
export LD_LIBRARY_PATH="$H/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME=lo NVSHMEM_REMOTE_TRANSPORT=none
export NVSHMEM_SYMMETRIC_SIZE=${NVSHMEM_SYMMETRIC_SIZE:-1073741824}
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
exec "$out/nvl-nvshmem" "$@"
