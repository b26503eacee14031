#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-install.sh OBJTREE - what a user of the installed tree does, checked: install
# into a scratch prefix (DESTDIR), then build the installed examples out of tree
# against the installed headers and .pc files and run them: open-sim.c and
# rdma-write.c once with shared dependencies and once fully static (gcc -static,
# pkg-config --static); p2p-threads.c (the P2P transport, two ranks as threads);
# p2p-procs.c (the same between two processes on the software NIC's wire);
# msg-threads.c (host messaging with the QP sharing pool, two ranks as threads);
# mock-test.c (a user's cmocka suite against the mock, through
# dvx-test.pc and libdvx-test.a); ht-mock-test.c (a user's cmocka suite of code
# written against the host transport's interface, on its mock in libdvx-test.a); gpu-post.c with its kernel gpu-post.cu when CUDA is
# configured and nvcc exists (run; no GPU: exit 77, counted as skipped); then move the installed tree and build again (the .pc
# files find their prefix from where they lie). Ends with one line: OK or what failed.
set -eu
cd "$(dirname "$0")/.."
obj=${1:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
make -s O="$obj" install DESTDIR="$tmp/root" PREFIX=/opt/dvx >/dev/null
pcdir="$tmp/root/opt/dvx/lib/pkgconfig"
[ -f "$pcdir/dvx.pc" ] || { echo "check-install: no dvx.pc installed"; exit 1; }
# the test library comes with the mock (CONFIG_DVX_MOCK), the examples' fabric with the
# software NIC (CONFIG_DVX_SIM): what this configuration lacks is left out, and said
cfg="$obj/.config"
has() { grep -q "^$1=y" "$cfg"; }
if has CONFIG_DVX_MOCK; then
	[ -f "$pcdir/dvx-test.pc" ] || { echo "check-install: no dvx-test.pc installed"; exit 1; }
fi
ex="$tmp/root/opt/dvx/share/doc/dvx/examples"
[ -f "$ex/rdma-write.c" ] || { echo "check-install: the examples are not installed"; exit 1; }
cc=${CC:-cc}
build() {	# build NAME SOURCE PCDIR MODULE [--static] [extra libs]
	name=$1 src=$2 dir=$3 mod=$4 static=${5:-} extra=${6:-}
	# shellcheck disable=SC2046,SC2086
	$cc ${static:+-static} -o "$tmp/$name" "$src" \
		$(PKG_CONFIG_PATH="$dir" pkg-config ${static} --cflags --libs $mod) $extra \
		> "$tmp/$name.log" 2>&1 || { cat "$tmp/$name.log"; echo "check-install: $name did not link"; exit 1; }
	"$tmp/$name" > "$tmp/$name.out" 2>&1 || { cat "$tmp/$name.out"; echo "check-install: $name failed"; exit 1; }
}
if ! has CONFIG_DVX_SIM; then
	echo "check-install: OK (installed; the examples need the software NIC, which this configuration leaves out)"
	exit 0
fi
build open-sim-shared "$ex/open-sim.c" "$pcdir" dvx
build open-sim-static "$ex/open-sim.c" "$pcdir" dvx --static
build rdma-write-shared "$ex/rdma-write.c" "$pcdir" dvx
build rdma-write-static "$ex/rdma-write.c" "$pcdir" dvx --static
for b in open-sim-static rdma-write-static; do
	if command -v readelf >/dev/null && readelf -d "$tmp/$b" 2>/dev/null | grep -q NEEDED; then
		echo "check-install: the static $b needs shared libraries"; exit 1
	fi
done
build p2p-threads "$ex/p2p-threads.c" "$pcdir" dvx
build p2p-procs "$ex/p2p-procs.c" "$pcdir" dvx
build msg-threads "$ex/msg-threads.c" "$pcdir" dvx
mock="mock-test against libdvx-test.a"
if has CONFIG_DVX_MOCK; then
	build mock-test "$ex/mock-test.c" "$pcdir" dvx-test "" "-lcmocka"
	build ht-mock-test "$ex/ht-mock-test.c" "$pcdir" dvx-test "" "-lcmocka"
	mock="$mock and ht-mock-test against its host transport mock"
else
	mock="no mock-test (CONFIG_DVX_MOCK=n: no libdvx-test.a)"
fi
# the GPU example (examples/gpu-post.c and .cu): built when this configuration has CUDA
# and nvcc exists; run, where exit status 77 (no GPU here) counts as run and skipped
gpu="no gpu-post (CONFIG_DVX_GPU=n)"
nvcc=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
if has CONFIG_DVX_GPU && [ -x "$nvcc" ]; then
	# shellcheck disable=SC2046
	"$nvcc" -fatbin -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
		$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags dvx) "$ex/gpu-post.cu" \
		-o "$tmp/gpu-post.fatbin" > "$tmp/gpu-post-nvcc.log" 2>&1 ||
		{ cat "$tmp/gpu-post-nvcc.log"; echo "check-install: gpu-post.cu did not compile"; exit 1; }
	# shellcheck disable=SC2046
	$cc -o "$tmp/gpu-post" "$ex/gpu-post.c" $(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs dvx) \
		> "$tmp/gpu-post.log" 2>&1 || { cat "$tmp/gpu-post.log"; echo "check-install: gpu-post did not link"; exit 1; }
	set +e
	"$tmp/gpu-post" "$tmp/gpu-post.fatbin" > "$tmp/gpu-post.out" 2>&1
	grc=$?
	set -e
	case $grc in
	0) gpu="gpu-post run on the GPU" ;;
	77) gpu="gpu-post built (no GPU here: skipped)" ;;
	*) cat "$tmp/gpu-post.out"; echo "check-install: gpu-post failed ($grc)"; exit 1 ;;
	esac
fi
mv "$tmp/root/opt/dvx" "$tmp/moved"
build open-sim-moved "$tmp/moved/share/doc/dvx/examples/open-sim.c" "$tmp/moved/lib/pkgconfig" dvx
if has CONFIG_DVX_MOCK; then
	build mock-test-moved "$tmp/moved/share/doc/dvx/examples/mock-test.c" "$tmp/moved/lib/pkgconfig" dvx-test "" "-lcmocka"
fi
echo "check-install: OK (installed tree at a scratch prefix and moved; examples built out of tree and run: open-sim and rdma-write shared and fully static, p2p-threads, p2p-procs, msg-threads, $mock, $gpu: $(cat "$tmp/rdma-write-static.out"))"
