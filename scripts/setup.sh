#!/bin/sh
# SPDX-License-Identifier: MIT
#
# setup.sh - the README's first command: on a fresh Debian 12 machine, install what
# dvx needs, configure, build, and run the main job.
#
#   scripts/setup.sh              install packages (apt), make defconfig, make, main job
#   scripts/setup.sh --deps-only  only install the packages (used by .ci/run)
#   O=dir scripts/setup.sh        build in dir instead of build/
#
# Packages: build-essential pkg-config libibverbs-dev libdpdk-dev libcmocka-dev valgrind,
# and clang with libclang-rt-14-dev (libFuzzer and the sanitizer runtimes) for
# 'make fuzz' / 'make fuzz-ci' (the coverage-guided harnesses of tests/fuzz/lf/),
# groff-base for 'make check-man' (the man pages render without warnings) and
# libxml2-utils (xmllint) for scripts/check-junit.sh (the runner's JUnit files), and
# gcc-aarch64-linux-gnu for mlx5-bf-asm-test (the BlueFlame copy compiled for aarch64
# and its instructions checked; skipped with a message without it).
# openmpi-bin libopenmpi-dev for the bootstrap's MPI adapter (CONFIG_DVX_MPI, detected by
# 'make defconfig') and the tests that run as MPI processes (scripts/mpirun.sh).
# sparse for 'make C=1' (the library checked with the dvx_be* types bitwise).
# The CUDA toolkit is used when /usr/local/cuda (or $CUDA_HOME) exists; it is not
# installed here (it is not a Debian package); without it the GPU parts are left out
# and GPU tests report themselves skipped.
set -eu
cd "$(dirname "$0")/.."

pkgs="build-essential pkg-config libibverbs-dev libdpdk-dev libcmocka-dev valgrind"
pkgs="$pkgs clang libclang-rt-14-dev"
pkgs="$pkgs groff-base libxml2-utils gcc-aarch64-linux-gnu"
pkgs="$pkgs openmpi-bin libopenmpi-dev"
pkgs="$pkgs sparse"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "dvx setup: installing:$missing"
	SUDO=""
	[ "$(id -u)" -ne 0 ] && SUDO=sudo
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing
else
	echo "dvx setup: packages present ($pkgs)"
fi
[ "${1:-}" = "--deps-only" ] && exit 0

O=${O:-build}
jobs=$(nproc 2>/dev/null || echo 2)
make O="$O" defconfig
make O="$O" -j"$jobs"
exec scripts/main-job.sh "$O"
