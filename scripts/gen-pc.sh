#!/bin/sh
# SPDX-License-Identifier: MIT
#
# gen-pc.sh REQUIRES LIBS VERSION - print dvx.pc for this configuration.
#   REQUIRES: the pkg-config modules libdvx.a needs (libibverbs libmlx5 when built with
#             rdma-core): Requires, not Requires.private - libdvx is only an archive, so
#             every program that links it links them too (a program that calls
#             dvx_hal_linux() needs them even without -static), and 'pkg-config --static'
#             brings their own dependencies along. Not DPDK: it is opt-in
#             (dvx_dpdk_enable()), and a program that opts in links DPDK itself.
#   LIBS:     what else every link needs (-pthread -ldl), in Libs for the same reason
#   VERSION:  the library's version (include/dvx/version.h)
# The prefix is found from where the .pc file lies (${pcfiledir}: the file is installed
# as PREFIX/lib/pkgconfig/dvx.pc), so the installed tree is right for any PREFIX and
# stays right when moved.
#
# gen-pc.sh --test VERSION - print dvx-test.pc: libdvx-test.a (the test helpers users
# link into their own suites: the mock hal, the ConnectX-7 mock model, fault sweeps), on top of dvx.
if [ "$1" = --test ]; then
	cat <<PC
prefix=\${pcfiledir}/../..
exec_prefix=\${prefix}
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: dvx-test
Description: dvx's helpers for users' test suites: the mock hal, the ConnectX-7 mock model, fault sweeps
Version: $2
Requires: dvx
Cflags: -I\${includedir}
Libs: -L\${libdir} -ldvx-test
PC
	exit 0
fi
requires=$1 libs=$2 version=$3
cat <<PC
prefix=\${pcfiledir}/../..
exec_prefix=\${prefix}
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: dvx
Description: user-space mlx5 DEVX RDMA driver with GPU-initiated posting
Version: $version
Cflags: -I\${includedir}
Libs: -L\${libdir} -ldvx $libs
Requires: $requires
PC
