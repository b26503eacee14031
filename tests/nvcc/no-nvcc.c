// SPDX-License-Identifier: MIT
/* Stands in for nvcc-headers-test when dvx was configured without CUDA. */
#include <stdio.h>

int main(void)
{
	printf("nvcc not found when configured: install the CUDA toolkit (/usr/local/cuda or CUDA_HOME) "
	       "and run 'make defconfig check' to compile the mlx5 headers as CUDA\n");
	return 77;
}
