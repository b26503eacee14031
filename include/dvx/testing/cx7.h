/* SPDX-License-Identifier: MIT */
/*
 * dvx/testing/cx7.h - a realistic ConnectX-7 for the mock hal, for users' own test
 * suites (libdvx-test.a; docs/testing.md "Testing your code against dvx").
 *
 * The mock (hal layer) takes capability pages as opaque bytes; this builder sits
 * above the hal and writes them with the dvx/mlx5 field setters, so a mock device
 * made with it opens with dvx_nic_open() like the real one.
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

/**
 * dvx_test_mock_add_cx7() - add a ConnectX-7 (dvx_test_mock_cx7(), NUMA node 0) to a
 * mock: the one-call device a test opens with dvx_nic_open(&nic, dvx_mock_hal(m), ...).
 * @m:		an initialised mock
 * @name:	ibdev name, e.g. "mlx5_0"
 * @pci:	PCI address, e.g. "0000:03:00.0"
 *
 * Context: test set-up. Return: the device's index (>= 0) as dvx_mock_add_nic(), or a
 * negative errno (-EINVAL for NULL arguments, -ENOSPC when the mock is full).
 */
int dvx_test_mock_add_cx7(struct dvx_mock *m, const char *name, const char *pci);

#endif
