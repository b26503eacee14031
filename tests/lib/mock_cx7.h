/* SPDX-License-Identifier: MIT */
/*
 * tests/lib/mock_cx7.h - a realistic ConnectX-7 for the mock hal.
 *
 * The mock (hal layer) takes capability pages as opaque bytes; this builder sits
 * above the hal and writes them with the dvx/mlx5 field setters.
 */
#ifndef DVX_TEST_MOCK_CX7_H
#define DVX_TEST_MOCK_CX7_H

#include <dvx/testing/mock.h>

/* the RoCE v2 IPv4-mapped GID the default device carries at index 3 */
#define DVX_TEST_CX7_IPV4 "192.168.1.10"
#define DVX_TEST_CX7_NETDEV "ens1f0np0"

/**
 * dvx_test_mock_cx7() - fill @cfg with a ConnectX-7 (15b3:1021, mlx5_core, one
 * active RoCE port with link-local and IPv4-mapped GIDs of both RoCE versions) and
 * its current QUERY_HCA_CAP pages: general (cd=1, log_max_qp_sz 15, log_max_cq_sz 22,
 * bf=1 with log_bf_reg_size 9, cqe_version 1, port_type Ethernet, ...), atomic (ops
 * 0xf, sizes 4B|8B, 8-byte endianness mode 1 and supported), RoCE (force-loopback
 * allowed) and general 2 (send_dbr_mode_no_dbr_ext).
 * @cfg:	overwritten
 * @name:	ibdev name
 * @pci:	PCI address
 * @numa_node:	NUMA node of the function
 */
void dvx_test_mock_cx7(struct dvx_mock_nic_cfg *cfg, const char *name, const char *pci,
		       int numa_node);

/**
 * dvx_test_mock_cx7_cap_page() - one of the default pages, for tests that change a
 * field and store it back with dvx_mock_nic_cfg_set_cap().
 * @cap_type:	DVX_MLX5_CAP_TYPE_*
 * @page:	DVX_MOCK_CAP_BYTES bytes, overwritten
 */
void dvx_test_mock_cx7_cap_page(unsigned cap_type, uint8_t *page);

#endif
