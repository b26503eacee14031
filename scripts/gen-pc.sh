#!/bin/sh
# SPDX-License-Identifier: MIT
# Prints dvx.pc for PREFIX with the private link flags of this configuration.
prefix=$1 libs=$2
cat <<PC
prefix=$prefix
exec_prefix=\${prefix}
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: dvx
Description: user-space mlx5 DEVX RDMA driver with GPU-initiated posting
Version: 0.1.0
Cflags: -I\${includedir}
Libs: -L\${libdir} -ldvx
Libs.private: $libs
PC
