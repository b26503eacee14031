// SPDX-License-Identifier: MIT
/*
 * testing/cx7.c - a ConnectX-7 configuration for the mock hal (libdvx-test.a,
 * dvx/testing/cx7.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include <dvx/mlx5/caps.h>

#include <dvx/testing/cx7.h>

void dvx_test_mock_cx7_cap_page(unsigned cap_type, uint8_t *p)
{
	memset(p, 0, DVX_MOCK_CAP_BYTES);
	switch (cap_type) {
	case DVX_MLX5_CAP_TYPE_GENERAL:
		dvx_mlx5_set(p, DVX_MLX5_CAP_HCA_CAP_2, 1);
		dvx_mlx5_set(p, DVX_MLX5_CAP_LOG_MAX_QP_SZ, 15);
		dvx_mlx5_set(p, DVX_MLX5_CAP_LOG_MAX_QP, 17);
		dvx_mlx5_set(p, DVX_MLX5_CAP_LOG_MAX_CQ_SZ, 22);
		dvx_mlx5_set(p, DVX_MLX5_CAP_RELAXED_ORDERING_WRITE, 1);
		dvx_mlx5_set(p, DVX_MLX5_CAP_RELAXED_ORDERING_READ_PCI_ENABLED, 1);
		dvx_mlx5_set(p, DVX_MLX5_CAP_LOG_MAX_RA_REQ_QP, 4);
		dvx_mlx5_set(p, DVX_MLX5_CAP_LOG_MAX_RA_RES_QP, 4);
		dvx_mlx5_set(p, DVX_MLX5_CAP_PORT_TYPE, DVX_MLX5_PORT_TYPE_ETH);
		dvx_mlx5_set(p, DVX_MLX5_CAP_NUM_PORTS, 1);
		dvx_mlx5_set(p, DVX_MLX5_CAP_LOG_MAX_MSG, 30);
		dvx_mlx5_set(p, DVX_MLX5_CAP_CQE_VERSION, 1);
		dvx_mlx5_set(p, DVX_MLX5_CAP_ROCE, 1);
		dvx_mlx5_set(p, DVX_MLX5_CAP_ATOMIC, 1);
		dvx_mlx5_set(p, DVX_MLX5_CAP_CQ_OI, 1);
		dvx_mlx5_set(p, DVX_MLX5_CAP_CD, 1);
		dvx_mlx5_set(p, DVX_MLX5_CAP_RC, 1);
		dvx_mlx5_set(p, DVX_MLX5_CAP_UAR_4K, 1);
		dvx_mlx5_set(p, DVX_MLX5_CAP_UAR_SZ, 6);
		dvx_mlx5_set(p, DVX_MLX5_CAP_LOG_PG_SZ, 12);
		dvx_mlx5_set(p, DVX_MLX5_CAP_BF, 1);
		dvx_mlx5_set(p, DVX_MLX5_CAP_LOG_BF_REG_SIZE, 9);
		dvx_mlx5_set(p, DVX_MLX5_CAP_MAX_WQE_SZ_SQ, 1024);
		dvx_mlx5_set(p, DVX_MLX5_CAP_MAX_WQE_SZ_RQ, 512);
		dvx_mlx5_set(p, DVX_MLX5_CAP_LOG_MAX_PD, 23);
		dvx_mlx5_set(p, DVX_MLX5_CAP_LOG_MAX_ATOMIC_SIZE_QP, 3);
		dvx_mlx5_set(p, DVX_MLX5_CAP_CQE_COMPRESSION, 1);
		dvx_mlx5_set(p, DVX_MLX5_CAP_WAIT_ON_DATA, 1);
		dvx_mlx5_set(p, DVX_MLX5_CAP_WAIT_ON_TIME, 1);
		break;
	case DVX_MLX5_CAP_TYPE_ATOMIC:
		dvx_mlx5_set(p, DVX_MLX5_CAP_ATOMIC_REQ_8B_ENDIANNESS_MODE, 1);
		dvx_mlx5_set(p, DVX_MLX5_CAP_SUPPORTED_ATOMIC_REQ_8B_ENDIANNESS_MODE_1, 1);
		dvx_mlx5_set(p, DVX_MLX5_CAP_ATOMIC_OPERATIONS,
			     DVX_MLX5_ATOMIC_OPS_CMP_SWAP | DVX_MLX5_ATOMIC_OPS_FETCH_ADD |
				     DVX_MLX5_ATOMIC_OPS_MASKED_CMP_SWAP |
				     DVX_MLX5_ATOMIC_OPS_MASKED_FETCH_ADD);
		dvx_mlx5_set(p, DVX_MLX5_CAP_ATOMIC_SIZE_QP,
			     DVX_MLX5_ATOMIC_SIZE_4B | DVX_MLX5_ATOMIC_SIZE_8B);
		dvx_mlx5_set(p, DVX_MLX5_CAP_ATOMIC_SIZE_DC,
			     DVX_MLX5_ATOMIC_SIZE_4B | DVX_MLX5_ATOMIC_SIZE_8B);
		break;
	case DVX_MLX5_CAP_TYPE_ROCE:
		dvx_mlx5_set(p, DVX_MLX5_CAP_FL_RC_QP_WHEN_ROCE_DISABLED, 1);
		dvx_mlx5_set(p, DVX_MLX5_CAP_FL_RC_QP_WHEN_ROCE_ENABLED, 1);
		dvx_mlx5_set(p, DVX_MLX5_CAP_R_ROCE_MIN_SRC_UDP_PORT, 0xc000);
		dvx_mlx5_set(p, DVX_MLX5_CAP_R_ROCE_MAX_SRC_UDP_PORT, 0xffff);
		break;
	case DVX_MLX5_CAP_TYPE_GENERAL_2:
		dvx_mlx5_set(p, DVX_MLX5_CAP_SEND_DBR_MODE_NO_DBR_EXT, 1);
		break;
	default:
		break;
	}
}

static void link_local(uint8_t gid[16])
{
	static const uint8_t ll[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0,
					0x9e, 0x63, 0xc0, 0xff, 0xfe, 0x00, 0x00, 0x01 };

	memcpy(gid, ll, 16);
}

static void ipv4_mapped(uint8_t gid[16], const char *ip)
{
	memset(gid, 0, 16);
	gid[10] = 0xff;
	gid[11] = 0xff;
	inet_pton(AF_INET, ip, gid + 12);
}

void dvx_test_mock_cx7(struct dvx_mock_nic_cfg *cfg, const char *name, const char *pci,
		       int numa_node)
{
	static const unsigned types[] = { DVX_MLX5_CAP_TYPE_GENERAL, DVX_MLX5_CAP_TYPE_ATOMIC,
					  DVX_MLX5_CAP_TYPE_ROCE, DVX_MLX5_CAP_TYPE_GENERAL_2 };
	static uint8_t page[DVX_MOCK_CAP_BYTES];
	uint8_t gid[16];
	size_t i;

	dvx_mock_nic_cfg_init(cfg, name, pci);
	cfg->info.numa_node = numa_node;
	cfg->info.device_id = 0x1021;
	cfg->info.node_guid = 0x9c63c00300a1b2c4ull;
	strcpy(cfg->info.netdev, DVX_TEST_CX7_NETDEV);

	strcpy(cfg->attr.fw_ver, "28.39.1002");
	cfg->attr.node_guid = cfg->info.node_guid;
	cfg->attr.sys_image_guid = cfg->info.node_guid;
	cfg->attr.max_mr_size = ~0ull;
	cfg->attr.page_size_cap = ~0xfffull;
	cfg->attr.vendor_part_id = 0x1021;
	cfg->attr.hw_ver = 0;
	cfg->attr.max_qp = 1u << 17;
	cfg->attr.max_qp_wr = 1u << 15;
	cfg->attr.max_cq = 1u << 24;
	cfg->attr.max_cqe = (1u << 22) - 1;
	cfg->attr.max_mr = 1u << 24;
	cfg->attr.max_pd = 1u << 24;
	cfg->attr.max_qp_rd_atom = 16;
	cfg->attr.max_qp_init_rd_atom = 16;
	cfg->attr.phys_port_cnt = 1;
	cfg->attr.atomic_cap = 1;

	cfg->port[0].active_width = 2;
	cfg->port[0].active_speed = 128;
	cfg->port[0].gid_tbl_len = 6;
	link_local(gid);
	dvx_mock_nic_cfg_add_gid(cfg, 1, 0, gid, DVX_GID_TYPE_ROCE_V1, DVX_TEST_CX7_NETDEV);
	dvx_mock_nic_cfg_add_gid(cfg, 1, 1, gid, DVX_GID_TYPE_ROCE_V2, DVX_TEST_CX7_NETDEV);
	ipv4_mapped(gid, DVX_TEST_CX7_IPV4);
	dvx_mock_nic_cfg_add_gid(cfg, 1, 2, gid, DVX_GID_TYPE_ROCE_V1, DVX_TEST_CX7_NETDEV);
	dvx_mock_nic_cfg_add_gid(cfg, 1, 3, gid, DVX_GID_TYPE_ROCE_V2, DVX_TEST_CX7_NETDEV);
	/* 4 and 5 are empty entries */

	for (i = 0; i < DVX_ARRAY_SIZE(types); i++) {
		dvx_test_mock_cx7_cap_page(types[i], page);
		dvx_mock_nic_cfg_set_cap(cfg, (uint16_t)(types[i] << 1 | 1), page);
	}
	memcpy(cfg->rmac, "\x02\x00\x00\xc7\x00\x01", 6);
	cfg->eqn = 7;
}

int dvx_test_mock_add_cx7(struct dvx_mock *m, const char *name, const char *pci)
{
	struct dvx_mock_nic_cfg cfg;

	if (!m || !name || !pci)
		return -EINVAL;
	dvx_test_mock_cx7(&cfg, name, pci, 0);
	return dvx_mock_add_nic(m, &cfg);
}
