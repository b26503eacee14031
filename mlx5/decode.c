// SPDX-License-Identifier: MIT
/* placeholder, replaced by the decoder */
#include <dvx/mlx5/decode.h>
