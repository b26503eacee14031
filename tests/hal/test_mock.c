// SPDX-License-Identifier: MIT
/*
 * The mock hal backend: devices, DEVX objects and resources, the call log, the
 * live-resource counters, fault injection (fail-at-N, fail-op, DEVX status), the
 * check hook (with cmocka's check_expected), the clock, and the sockets (real ones
 * underneath, logged, failed on demand, counted while open).
 */
#include <errno.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "../lib/dvx_test.h"

#include <dvx/byteorder.h>
#include <dvx/testing/mock.h>

static struct dvx_mock M;	/* a few hundred KiB: static, not on the stack */

static int setup(void **state)
{
	struct dvx_mock_nic_cfg cfg;
	uint8_t page[DVX_MOCK_CAP_BYTES];

	(void)state;
	dvx_mock_init(&M);
	dvx_mock_nic_cfg_init(&cfg, "mlx5_0", "0000:3b:00.0");
	memset(page, 0, sizeof(page));
	page[0] = 0xc7;				/* a recognisable first byte */
	dvx_mock_nic_cfg_set_cap(&cfg, 0x1, page);	/* general, current */
	cfg.eqn = 9;
	memcpy(cfg.rmac, "\x02\x11\x22\x33\x44\x55", 6);
	assert_int_equal(dvx_mock_add_nic(&M, &cfg), 0);

	dvx_mock_nic_cfg_init(&cfg, "irdma0", "0000:5e:00.0");
	strcpy(cfg.info.driver, "irdma");
	cfg.info.vendor_id = 0x8086;
	cfg.info.is_mlx5 = 0;
	assert_int_equal(dvx_mock_add_nic(&M, &cfg), 1);

	dvx_mock_nic_cfg_init(&cfg, "mlx5_1", "0000:3c:00.0");
	cfg.open_err = -EACCES;
	assert_int_equal(dvx_mock_add_nic(&M, &cfg), 2);
	return 0;
}

static void open0(struct dvx_hal_nic *dev)
{
	memset(dev, 0, sizeof(*dev));
	assert_int_equal(dvx_hal_nic_open(dvx_mock_hal(&M), "mlx5_0", dev), 0);
}

static void test_devices(void **state)
{
	const struct dvx_hal *hal = dvx_mock_hal(&M);
	struct dvx_hal_nic_info info[4];
	struct dvx_hal_nic dev, dev2;
	struct dvx_hal_nic_attr attr;
	struct dvx_hal_port_attr pa;
	struct dvx_hal_gid gid;
	unsigned n = 99;

	(void)state;
	assert_string_equal(hal->name, "mock");
	assert_int_equal(dvx_hal_nic_list(hal, NULL, 0, &n), 0);
	assert_int_equal(n, 3);				/* the count, nothing written */
	assert_int_equal(dvx_hal_nic_list(hal, info, 2, &n), 0);
	assert_int_equal(n, 3);
	assert_string_equal(info[0].name, "mlx5_0");
	assert_string_equal(info[1].driver, "irdma");

	/* by name, by full and by short PCI address */
	open0(&dev);
	assert_string_equal(dev.info.pci, "0000:3b:00.0");
	memset(&dev2, 0, sizeof(dev2));
	assert_int_equal(dvx_hal_nic_open(hal, "3b:00.0", &dev2), 0);
	assert_string_equal(dev2.info.name, "mlx5_0");
	assert_int_equal(dvx_mock_live(&M, DVX_MOCK_RES_DEV), 2);
	assert_int_equal(dvx_hal_nic_close(&dev2), 0);

	/* unknown, not mlx5, refused by the "driver" */
	assert_int_equal(dvx_hal_nic_open(hal, "mlx5_9", &dev2), -ENODEV);
	assert_string_equal(dev2.diag.op, "nic_open");
	assert_int_equal(dvx_hal_nic_open(hal, "irdma0", &dev2), -ENODEV);
	assert_non_null(strstr(dev2.diag.msg, "irdma"));
	assert_int_equal(dvx_hal_nic_open(hal, "mlx5_1", &dev2), -EACCES);
	assert_int_equal(dev2.diag.sys_errno, EACCES);
	assert_non_null(strstr(dev2.diag.msg, "DEVX"));
	assert_int_equal(dvx_mock_live(&M, DVX_MOCK_RES_DEV), 1);

	assert_int_equal(dvx_hal_nic_query(&dev, &attr), 0);
	assert_string_equal(attr.fw_ver, "0.0.0");
	assert_int_equal(dvx_hal_query_port(&dev, 1, &pa), 0);
	assert_int_equal(pa.state, 4);
	assert_int_equal(dvx_hal_query_port(&dev, 2, &pa), -EINVAL);	/* one port */
	/* the default device's link-local GIDs (RoCE v1, v2), then empty entries */
	assert_int_equal(dvx_hal_query_gid(&dev, 1, 0, &gid), 0);
	assert_int_equal(gid.valid, 1);
	assert_int_equal(gid.raw[0], 0xfe);
	assert_int_equal(gid.type, DVX_GID_TYPE_ROCE_V1);
	assert_int_equal(dvx_hal_query_gid(&dev, 1, 1, &gid), 0);
	assert_int_equal(gid.type, DVX_GID_TYPE_ROCE_V2);
	assert_int_equal(dvx_hal_query_gid(&dev, 1, 2, &gid), 0);
	assert_int_equal(gid.valid, 0);
	assert_int_equal(dvx_hal_query_gid(&dev, 1, DVX_MOCK_MAX_GIDS, &gid), -EINVAL);

	assert_int_equal(dvx_hal_nic_close(&dev), 0);
	assert_int_equal(dvx_hal_nic_close(&dev), -EINVAL);		/* priv cleared */
	assert_int_equal(dvx_mock_live_total(&M), 0);
}

/* a port's speed from its codes: each speed and width, the extended code, unknowns */
static void test_port_mbps(void **state)
{
	static const struct {
		uint8_t speed, width;
		uint32_t ex, mbps;
	} t[] = {
		{ 1, 1, 0, 2500 },	{ 2, 2, 0, 20000 },	{ 4, 2, 0, 40000 },
		{ 8, 2, 0, 40000 },	{ 16, 2, 0, 56000 },	{ 32, 2, 0, 100000 },
		{ 64, 2, 0, 200000 },	{ 128, 2, 0, 400000 },	{ 128, 16, 0, 200000 },
		{ 64, 4, 0, 400000 },	{ 32, 8, 0, 300000 },	{ 0, 2, 256, 800000 },
		{ 0, 2, 0, 0 },		{ 3, 2, 0, 0 },		{ 128, 3, 0, 0 },
		{ 128, 0, 0, 0 },
	};
	struct dvx_hal_port_attr pa;
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		memset(&pa, 0, sizeof(pa));
		pa.active_speed = t[i].speed;
		pa.active_width = t[i].width;
		pa.active_speed_ex = t[i].ex;
		assert_int_equal(dvx_hal_port_mbps(&pa), t[i].mbps);
	}
	assert_int_equal(dvx_hal_port_mbps(NULL), 0);
}

static void test_query_hca_cap(void **state)
{
	struct dvx_hal_nic dev;
	uint8_t in[16] = { 0 }, out[4112];

	(void)state;
	open0(&dev);
	dvx_put_be32(in, 0x01000000u);	/* QUERY_HCA_CAP */
	dvx_put_be32(in + 4, 0x1);	/* general, current */
	memset(out, 0xee, sizeof(out));
	assert_int_equal(dvx_hal_devx_cmd(&dev, in, sizeof(in), out, sizeof(out)), 0);
	assert_int_equal(out[0], 0);			/* status OK */
	assert_int_equal(out[16], 0xc7);		/* the page at byte 16 */
	assert_int_equal(out[17], 0);

	/* the default device's other pages: the atomic page announces CAS and FA */
	dvx_put_be32(in + 4, 0x7);
	assert_int_equal(dvx_hal_devx_cmd(&dev, in, sizeof(in), out, sizeof(out)), 0);
	assert_int_equal(out[16 + 16 + 3], 0xf);	/* atomic_operations, dw@16 [15:0] */

	/* a page nobody configured: BAD_PARAM, like firmware for an unknown cap type */
	dvx_put_be32(in + 4, 0x11);
	assert_int_equal(dvx_hal_devx_cmd(&dev, in, sizeof(in), out, sizeof(out)), -EREMOTEIO);
	assert_int_equal(out[0], 0x03);
	assert_int_equal(dev.diag.src, DVX_DIAG_DEVX);
	assert_int_equal(dev.diag.status, 0x03);
	assert_int_equal(dev.diag.cmd_opcode, 0x100);
	assert_int_equal(dev.diag.sys_errno, EREMOTEIO);

	/* the log names the mailbox */
	assert_int_equal(dvx_mock_last(&M, DVX_MOCK_OP_DEVX_CMD)->prm_opcode, 0x100);
	assert_int_equal(dvx_mock_last(&M, DVX_MOCK_OP_DEVX_CMD)->prm_op_mod, 0x11);
	assert_int_equal(dvx_mock_last(&M, DVX_MOCK_OP_DEVX_CMD)->inlen, 16);
	assert_int_equal(dvx_mock_last(&M, DVX_MOCK_OP_DEVX_CMD)->outlen, 4112);
	assert_int_equal(dvx_hal_nic_close(&dev), 0);
}

static void test_objects(void **state)
{
	struct dvx_hal_nic dev;
	struct dvx_hal_obj cq, qp, stale;
	const struct dvx_mock_obj *mo;
	uint8_t in[64] = { 0 }, out[64];
	uint32_t cqn, qpn;

	(void)state;
	open0(&dev);
	memset(&cq, 0, sizeof(cq));
	dvx_put_be32(in, 0x04000000u);	/* CREATE_CQ */
	memset(out, 0xff, sizeof(out));
	assert_int_equal(dvx_hal_obj_create(&dev, in, sizeof(in), out, sizeof(out), &cq), 0);
	assert_int_equal(out[0], 0);
	cqn = dvx_get_be32(out + 8) & 0xffffff;
	assert_true(cqn != 0);
	assert_int_equal(cq.cmd_opcode, 0x400);
	cq.id = cqn;

	memset(&qp, 0, sizeof(qp));
	dvx_put_be32(in, 0x05000000u);	/* CREATE_QP */
	assert_int_equal(dvx_hal_obj_create(&dev, in, sizeof(in), out, sizeof(out), &qp), 0);
	qpn = dvx_get_be32(out + 8) & 0xffffff;
	assert_true(qpn != cqn);	/* fresh numbers */
	qp.id = qpn;
	assert_int_equal(dvx_mock_live(&M, DVX_MOCK_RES_OBJ), 2);

	mo = dvx_mock_obj_by_id(&M, qpn);
	assert_non_null(mo);
	assert_int_equal(mo->opcode, 0x500);

	dvx_put_be32(in, 0x05020000u);	/* RST2INIT_QP */
	assert_int_equal(dvx_hal_obj_modify(&dev, &qp, in, sizeof(in), out, sizeof(out)), 0);
	dvx_put_be32(in, 0x05030000u);	/* INIT2RTR_QP */
	assert_int_equal(dvx_hal_obj_modify(&dev, &qp, in, sizeof(in), out, sizeof(out)), 0);
	assert_int_equal(mo->modifies, 2);
	assert_int_equal(mo->last_modify_opcode, 0x503);
	dvx_put_be32(in, 0x050b0000u);	/* QUERY_QP */
	assert_int_equal(dvx_hal_obj_query(&dev, &qp, in, sizeof(in), out, sizeof(out)), 0);
	assert_int_equal(mo->queries, 1);

	/* a handle with the wrong number is not that object */
	stale = qp;
	stale.id = qpn + 1000;
	assert_int_equal(dvx_hal_obj_destroy(&dev, &stale), -EINVAL);

	assert_int_equal(dvx_hal_obj_destroy(&dev, &qp), 0);
	assert_null(qp.priv);
	assert_null(dvx_mock_obj_by_id(&M, qpn));
	/* destroying it again, or an object the mock never made: -EINVAL */
	stale.id = qpn;
	assert_int_equal(dvx_hal_obj_destroy(&dev, &stale), -EINVAL);
	assert_non_null(strstr(dev.diag.msg, "destroyed"));
	assert_int_equal(dvx_hal_obj_destroy(&dev, &qp), -EINVAL);
	assert_int_equal(dvx_hal_obj_modify(&dev, &stale, in, sizeof(in), out, sizeof(out)),
			 -EINVAL);
	assert_int_equal(dvx_hal_obj_destroy(&dev, &cq), 0);
	assert_int_equal(dvx_mock_count(&M, DVX_MOCK_OP_OBJ_DESTROY), 5);
	assert_int_equal(dvx_mock_fails(&M, DVX_MOCK_OP_OBJ_DESTROY), 3);
	assert_int_equal(dvx_hal_nic_close(&dev), 0);
	assert_int_equal(dvx_mock_live_total(&M), 0);
	assert_int_equal(M.closed_with_live, 0);
}

static void test_resources(void **state)
{
	struct dvx_hal_nic dev;
	struct dvx_hal_umem_req ureq;
	struct dvx_hal_umem u1, u2;
	struct dvx_hal_uar uar;
	struct dvx_hal_pd pd;
	struct dvx_hal_mr_req mreq;
	struct dvx_hal_mr mr;
	const struct dvx_mock_call *c;
	uint8_t buf[256], gid[16] = { 0xfe, 0x80 }, mac[6];
	uint32_t eqn = 0;

	(void)state;
	open0(&dev);
	memset(&ureq, 0, sizeof(ureq));
	ureq.addr = buf;
	ureq.len = sizeof(buf);
	ureq.access = DVX_ACCESS_LOCAL_WRITE;
	ureq.dmabuf_fd = -1;
	assert_int_equal(dvx_hal_umem_reg(&dev, &ureq, &u1), 0);
	ureq.dmabuf_fd = 17;
	ureq.dmabuf_offset = 0x2000;
	ureq.pgsz_bitmap = ~0xfffull;
	assert_int_equal(dvx_hal_umem_reg(&dev, &ureq, &u2), 0);
	assert_true(u1.id != u2.id);
	assert_int_equal(u1.via_dmabuf, 0);
	assert_int_equal(u2.via_dmabuf, 1);
	c = dvx_mock_last(&M, DVX_MOCK_OP_UMEM_REG);
	assert_int_equal(c->dmabuf_fd, 17);
	assert_int_equal(c->offset, 0x2000);
	assert_int_equal(c->access, DVX_ACCESS_LOCAL_WRITE);
	assert_int_equal(c->id, u2.id);
	assert_int_equal(c->dev, 0);

	assert_int_equal(dvx_hal_uar_alloc(&dev, DVX_UAR_NC_DEDICATED, &uar), 0);
	assert_int_equal(uar.type, DVX_UAR_NC_DEDICATED);
	assert_ptr_equal((uint8_t *)uar.reg_addr, (uint8_t *)uar.base_addr + 0x800);
	*(volatile uint64_t *)uar.reg_addr = 0x1122334455667788ull;	/* real memory */
	assert_int_equal(dvx_mock_last(&M, DVX_MOCK_OP_UAR_ALLOC)->flags, DVX_UAR_NC_DEDICATED);

	assert_int_equal(dvx_hal_pd_alloc(&dev, &pd), 0);
	assert_true(pd.pdn != 0);
	memset(&mreq, 0, sizeof(mreq));
	mreq.addr = buf;
	mreq.len = 64;
	mreq.iova = 0;
	mreq.access = DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_ATOMIC;
	mreq.dmabuf_fd = -1;
	assert_int_equal(dvx_hal_mr_reg(&dev, &pd, &mreq, &mr), 0);
	assert_int_equal(mr.lkey, mr.rkey);
	c = dvx_mock_last(&M, DVX_MOCK_OP_MR_REG);
	assert_int_equal(c->access, DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_ATOMIC);
	assert_int_equal(c->iova, 0);
	assert_int_equal(c->dmabuf_fd, -1);

	/* a PD with an MR on it cannot go, as with ibv_dealloc_pd */
	assert_int_equal(dvx_hal_pd_free(&dev, &pd), -EBUSY);
	assert_string_equal(dev.diag.op, "pd_free");

	assert_int_equal(dvx_hal_eqn_query(&dev, 3, &eqn), 0);
	assert_int_equal(eqn, 9);
	assert_int_equal(dvx_hal_roce_rmac(&dev, &pd, 1, 3, gid, mac), 0);
	assert_memory_equal(mac, "\x02\x11\x22\x33\x44\x55", 6);
	assert_int_equal(dvx_mock_last(&M, DVX_MOCK_OP_ROCE_RMAC)->index, 3);

	assert_int_equal(dvx_mock_live_total(&M), 6);	/* dev, 2 umems, uar, pd, mr */
	assert_int_equal(dvx_hal_mr_dereg(&dev, &mr), 0);
	assert_int_equal(dvx_hal_mr_dereg(&dev, &mr), -EINVAL);
	assert_int_equal(dvx_hal_pd_free(&dev, &pd), 0);
	assert_int_equal(dvx_hal_uar_free(&dev, &uar), 0);
	assert_int_equal(dvx_hal_uar_free(&dev, &uar), -EINVAL);
	assert_int_equal(dvx_hal_umem_dereg(&dev, &u2), 0);

	/* closing with a umem left: allowed (the kernel reaps it), but counted */
	assert_int_equal(dvx_hal_nic_close(&dev), 0);
	assert_int_equal(M.closed_with_live, 1);
	assert_int_equal(dvx_mock_live(&M, DVX_MOCK_RES_UMEM), 1);
}

static void test_fail_at(void **state)
{
	struct dvx_hal_nic dev;
	struct dvx_hal_pd pd1, pd2, pd3;
	const struct dvx_mock_call *c;

	(void)state;
	dvx_mock_reset_log(&M);
	dvx_mock_fail_at(&M, 3, -ENOMEM);	/* open=1, pd=2, pd=3 */
	open0(&dev);
	assert_int_equal(dvx_hal_pd_alloc(&dev, &pd1), 0);
	assert_int_equal(dvx_hal_pd_alloc(&dev, &pd2), -ENOMEM);
	assert_int_equal(dev.diag.err, -ENOMEM);
	assert_string_equal(dev.diag.op, "pd_alloc");
	assert_non_null(strstr(dev.diag.msg, "injected"));
	assert_int_equal(dvx_hal_pd_alloc(&dev, &pd3), 0);	/* only the 3rd call */
	c = dvx_mock_call_at(&M, 3);
	assert_non_null(c);
	assert_int_equal(c->op, DVX_MOCK_OP_PD_ALLOC);
	assert_int_equal(c->ret, -ENOMEM);
	assert_int_equal(c->injected, 1);
	assert_int_equal(dvx_mock_call_at(&M, 2)->injected, 0);
	assert_int_equal(dvx_mock_live(&M, DVX_MOCK_RES_PD), 2);
	assert_int_equal(dvx_mock_calls(&M), 4);
	assert_int_equal(dvx_hal_pd_free(&dev, &pd1), 0);
	assert_int_equal(dvx_hal_pd_free(&dev, &pd3), 0);

	/* fail_at counts every call; one that cannot fail just passes */
	dvx_mock_fail_at(&M, dvx_mock_calls(&M) + 1, -EIO);
	dvx_hal_nic_progress(&dev);
	assert_int_equal(M.progress_calls, 1);
	assert_int_equal(dvx_hal_nic_close(&dev), 0);

	/* an injected failure of a release keeps the resource, like a failed destroy */
	open0(&dev);
	dvx_mock_fail_at(&M, dvx_mock_calls(&M) + 1, -EBUSY);
	assert_int_equal(dvx_hal_nic_close(&dev), -EBUSY);
	assert_int_equal(dvx_mock_live(&M, DVX_MOCK_RES_DEV), 1);
	assert_int_equal(dvx_hal_nic_close(&dev), 0);
	assert_int_equal(dvx_mock_live_total(&M), 0);
}

static void test_fail_op(void **state)
{
	const struct dvx_hal *hal = dvx_mock_hal(&M);
	struct dvx_hal_nic dev;
	struct dvx_hal_uar uar;
	struct dvx_hal_mem mem;
	unsigned n, i;

	(void)state;
	open0(&dev);
	dvx_mock_fail_op(&M, DVX_MOCK_OP_UAR_ALLOC, EOPNOTSUPP);	/* positive is negated */
	for (i = 0; i < 3; i++)
		assert_int_equal(dvx_hal_uar_alloc(&dev, DVX_UAR_BF, &uar), -EOPNOTSUPP);
	assert_int_equal(dvx_mock_fails(&M, DVX_MOCK_OP_UAR_ALLOC), 3);
	dvx_mock_fail_op(&M, DVX_MOCK_OP_UAR_ALLOC, 0);
	assert_int_equal(dvx_hal_uar_alloc(&dev, DVX_UAR_BF, &uar), 0);
	assert_int_equal(dvx_hal_uar_free(&dev, &uar), 0);

	/* host-side ops too */
	dvx_mock_fail_op(&M, DVX_MOCK_OP_MEM_ALLOC, -ENOMEM);
	dvx_mock_fail_op(&M, DVX_MOCK_OP_NIC_LIST, -EIO);
	assert_int_equal(dvx_hal_mem_alloc(hal, 4096, 0, -1, 0, &mem), -ENOMEM);
	assert_int_equal(dvx_hal_nic_list(hal, NULL, 0, &n), -EIO);
	dvx_mock_clear_faults(&M);
	assert_int_equal(dvx_hal_mem_alloc(hal, 4096, 0, -1, DVX_MEM_F_ZERO, &mem), 0);
	assert_int_equal(dvx_mock_live(&M, DVX_MOCK_RES_MEM), 1);
	((volatile uint8_t *)mem.addr)[4095] = 1;	/* real memory */
	assert_int_equal(dvx_hal_mem_free(hal, &mem), 0);
	assert_int_equal(dvx_hal_nic_close(&dev), 0);
	assert_int_equal(dvx_mock_live_total(&M), 0);
}

static void test_fail_devx(void **state)
{
	struct dvx_hal_nic dev;
	struct dvx_hal_obj qp;
	uint8_t in[32] = { 0 }, out[4112];

	(void)state;
	open0(&dev);
	/* the next CREATE_QP exceeds a limit: status 0x08 and a syndrome in the mailbox */
	assert_int_equal(dvx_mock_fail_devx(&M, 0, 0x500, -1, 0x08, 0x00018af6u, 1), 0);
	dvx_put_be32(in, 0x05000000u);
	memset(&qp, 0, sizeof(qp));
	assert_int_equal(dvx_hal_obj_create(&dev, in, sizeof(in), out, 64, &qp), -EREMOTEIO);
	assert_int_equal(out[0], 0x08);
	assert_int_equal(dvx_get_be32(out + 4), 0x00018af6u);
	assert_int_equal(dev.diag.src, DVX_DIAG_DEVX);
	assert_int_equal(dev.diag.status, 0x08);
	assert_int_equal(dev.diag.syndrome, 0x00018af6u);
	assert_int_equal(dev.diag.cmd_opcode, 0x500);
	assert_string_equal(dev.diag.op, "obj_create");
	assert_int_equal(dvx_mock_live(&M, DVX_MOCK_RES_OBJ), 0);	/* nothing created */
	assert_int_equal(dvx_mock_last(&M, DVX_MOCK_OP_OBJ_CREATE)->injected, 1);
	/* count was 1: the next one goes through */
	assert_int_equal(dvx_hal_obj_create(&dev, in, sizeof(in), out, 64, &qp), 0);

	/* a modify failing with BAD_QP_STATE, every time, any device */
	assert_int_equal(dvx_mock_fail_devx(&M, -1, 0x503, -1, 0x10, 0xabcd, 0), 0);
	dvx_put_be32(in, 0x05030000u);
	assert_int_equal(dvx_hal_obj_modify(&dev, &qp, in, sizeof(in), out, 64), -EREMOTEIO);
	assert_int_equal(dvx_hal_obj_modify(&dev, &qp, in, sizeof(in), out, 64), -EREMOTEIO);
	assert_int_equal(dev.diag.status, 0x10);
	assert_non_null(strstr(dev.diag.msg, "status 0x10"));

	/* QUERY_HCA_CAP of one op_mod only */
	assert_int_equal(dvx_mock_fail_devx(&M, 0, 0x100, 0x1, 0x05, 0x77, 0), 0);
	dvx_put_be32(in, 0x01000000u);
	dvx_put_be32(in + 4, 0x1);
	assert_int_equal(dvx_hal_devx_cmd(&dev, in, 16, out, sizeof(out)), -EREMOTEIO);
	assert_int_equal(dev.diag.syndrome, 0x77);
	/* a fault with status 0 would be no fault */
	assert_int_equal(dvx_mock_fail_devx(&M, 0, 0x100, 0x1, 0, 0, 0), -EINVAL);
	dvx_mock_clear_faults(&M);
	assert_int_equal(dvx_hal_devx_cmd(&dev, in, 16, out, sizeof(out)), 0);

	assert_int_equal(dvx_hal_obj_destroy(&dev, &qp), 0);
	assert_int_equal(dvx_hal_nic_close(&dev), 0);
	assert_int_equal(dvx_mock_live_total(&M), 0);
}

/* ---- the check hook, with cmocka's expectations ---- */

static int check_mr(void *arg, const struct dvx_mock_call *c)
{
	(void)arg;
	if (c->op != DVX_MOCK_OP_MR_REG)
		return 0;
	check_expected(c->access);
	check_expected(c->iova);
	check_expected(c->len);
	return mock_type(int);
}

static void test_check_hook(void **state)
{
	struct dvx_hal_nic dev;
	struct dvx_hal_pd pd;
	struct dvx_hal_mr_req req;
	struct dvx_hal_mr mr;
	uint8_t sink[8];

	(void)state;
	open0(&dev);
	assert_int_equal(dvx_hal_pd_alloc(&dev, &pd), 0);
	dvx_mock_set_check(&M, check_mr, NULL);

	memset(&req, 0, sizeof(req));
	req.addr = sink;
	req.len = sizeof(sink);
	req.iova = 0;		/* a zero-based sink MR */
	req.access = DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_WRITE | DVX_ACCESS_REMOTE_READ |
		     DVX_ACCESS_REMOTE_ATOMIC;
	req.dmabuf_fd = -1;
	expect_value(check_mr, c->access, req.access);
	expect_value(check_mr, c->iova, 0);
	expect_value(check_mr, c->len, 8);
	will_return(check_mr, 0);
	assert_int_equal(dvx_hal_mr_reg(&dev, &pd, &req, &mr), 0);
	assert_int_equal(dvx_hal_mr_dereg(&dev, &mr), 0);

	/* the hook can also fail the call */
	expect_value(check_mr, c->access, req.access);
	expect_value(check_mr, c->iova, 0);
	expect_value(check_mr, c->len, 8);
	will_return(check_mr, -EFAULT);
	assert_int_equal(dvx_hal_mr_reg(&dev, &pd, &req, &mr), -EFAULT);
	assert_int_equal(dvx_mock_last(&M, DVX_MOCK_OP_MR_REG)->injected, 1);
	assert_int_equal(dvx_mock_live(&M, DVX_MOCK_RES_MR), 0);

	dvx_mock_set_check(&M, NULL, NULL);
	assert_int_equal(dvx_hal_pd_free(&dev, &pd), 0);
	assert_int_equal(dvx_hal_nic_close(&dev), 0);
}

static void test_clock_and_log(void **state)
{
	const struct dvx_hal *hal = dvx_mock_hal(&M);
	struct dvx_hal_limits lim;
	struct dvx_hal_pci_dev pci, out[4];
	unsigned i, n;

	(void)state;
	M.now_ns = 1000;
	M.now_step = 10;
	assert_int_equal(dvx_hal_now_ns(hal), 1000);
	assert_int_equal(dvx_hal_now_ns(hal), 1010);
	assert_int_equal(dvx_hal_now_ns(hal), 1020);
	assert_int_equal(dvx_mock_count(&M, DVX_MOCK_OP_NOW_NS), 3);

	assert_int_equal(dvx_hal_limits(hal, &lim), 0);
	assert_true(lim.memlock_cur == UINT64_MAX);
	M.limits.memlock_cur = 8u << 20;
	assert_int_equal(dvx_hal_limits(hal, &lim), 0);
	assert_int_equal(lim.memlock_cur, 8u << 20);

	memset(&pci, 0, sizeof(pci));
	strcpy(pci.pci, "0000:04:00.0");
	pci.vendor_id = 0x10de;
	pci.class_code = 0x030200;
	assert_int_equal(dvx_mock_add_pci(&M, &pci), 0);
	strcpy(pci.pci, "0000:03:00.0");
	pci.vendor_id = 0x15b3;
	pci.class_code = 0x020000;
	assert_int_equal(dvx_mock_add_pci(&M, &pci), 0);
	assert_int_equal(dvx_hal_pci_list(hal, 0xff0000, 0x030000, out, 4, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(out[0].pci, "0000:04:00.0");
	assert_int_equal(dvx_hal_pci_list(hal, 0, 0, NULL, 0, &n), 0);
	assert_int_equal(n, 2);

	/* the ring keeps the last DVX_MOCK_LOG_MAX calls; counters keep counting */
	dvx_mock_reset_log(&M);
	for (i = 0; i < DVX_MOCK_LOG_MAX + 10; i++)
		dvx_hal_now_ns(hal);
	assert_int_equal(dvx_mock_calls(&M), DVX_MOCK_LOG_MAX + 10);
	assert_int_equal(dvx_mock_count(&M, DVX_MOCK_OP_NOW_NS), DVX_MOCK_LOG_MAX + 10);
	assert_null(dvx_mock_call_at(&M, 10));
	assert_non_null(dvx_mock_call_at(&M, 11));
	assert_int_equal(dvx_mock_find(&M, DVX_MOCK_OP_NOW_NS, 0)->seq, 11);
	assert_null(dvx_mock_find(&M, DVX_MOCK_OP_NIC_OPEN, 0));
	assert_string_equal(dvx_mock_op_name(DVX_MOCK_OP_OBJ_CREATE), "obj_create");
	assert_string_equal(dvx_mock_op_name((enum dvx_mock_op)999), "?");
	assert_string_equal(dvx_mock_res_name(DVX_MOCK_RES_MR), "mr");
}

/* ---- sockets ---- */

/* @fd is still open (the mock left it alone) */
static int fcntl_ok(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

static int refuse_send(void *arg, const struct dvx_mock_call *c)
{
	(void)arg;
	return c->op == DVX_MOCK_OP_SOCK_SEND && c->len == 3 ? EPIPE : 0;
}

static void test_sockets(void **state)
{
	const struct dvx_hal *hal = dvx_mock_hal(&M);
	struct dvx_hal_sock_addr a, got;
	struct dvx_hal_pollfd p[2];
	const struct dvx_mock_call *c;
	char dir[] = "/tmp/dvx-mock-XXXXXX", buf[8];
	struct dvx_hal_iov iov = { .base = "abc", .len = 3 };
	struct timespec t0, t1;
	int lfd, cfd, sfd, other, foreign[2];
	uint32_t seq;
	size_t n;

	(void)state;
	assert_non_null(mkdtemp(dir));
	memset(&a, 0, sizeof(a));
	a.family = DVX_HAL_SOCK_UNIX;
	snprintf(a.path, sizeof(a.path), "%s/s", dir);
	dvx_mock_reset_log(&M);

	/* real sockets underneath; each call logged; open ones counted */
	assert_int_equal(dvx_hal_sock_listen(hal, &a, 2, &lfd), 0);
	c = dvx_mock_last(&M, DVX_MOCK_OP_SOCK_LISTEN);
	assert_non_null(c);
	assert_int_equal(c->fd, lfd);
	assert_int_equal(c->flags, DVX_HAL_SOCK_UNIX);
	assert_int_equal(c->len, 2);
	assert_string_equal(c->name, a.path);
	assert_int_equal(dvx_mock_live(&M, DVX_MOCK_RES_SOCK), 1);
	assert_int_equal(dvx_hal_sock_connect(hal, &a, &cfd), 0);
	p[0].fd = lfd;
	p[0].events = DVX_HAL_POLL_IN;
	p[1].fd = -1;
	p[1].events = 0;
	assert_int_equal(dvx_hal_sock_poll(hal, p, 2, 2000000000ull), 1);
	c = dvx_mock_last(&M, DVX_MOCK_OP_SOCK_POLL);
	assert_int_equal(c->len, 2);
	assert_int_equal(c->fd, lfd);
	assert_int_equal(c->timeout_ns, 2000000000ull);
	assert_int_equal(c->moved, 1);
	assert_int_equal(dvx_hal_sock_accept(hal, lfd, &sfd), 0);
	c = dvx_mock_last(&M, DVX_MOCK_OP_SOCK_ACCEPT);
	assert_int_equal(c->fd, lfd);
	assert_int_equal(c->id, (uint32_t)sfd);
	assert_int_equal(dvx_mock_live(&M, DVX_MOCK_RES_SOCK), 3);
	assert_int_equal(dvx_hal_sock_error(hal, cfd), 0);
	assert_int_equal(dvx_hal_sock_name(hal, lfd, &got), 0);
	assert_string_equal(got.path, a.path);
	assert_int_equal(dvx_hal_sock_send(hal, cfd, &iov, 1, &n), 0);
	assert_int_equal(n, 3);
	c = dvx_mock_last(&M, DVX_MOCK_OP_SOCK_SEND);
	assert_int_equal(c->len, 3);
	assert_int_equal(c->moved, 3);
	assert_int_equal(c->index, 1);
	p[0].fd = sfd;
	assert_int_equal(dvx_hal_sock_poll(hal, p, 1, 2000000000ull), 1);
	assert_int_equal(dvx_hal_sock_recv(hal, sfd, buf, sizeof(buf), &n), 0);
	assert_int_equal(n, 3);
	assert_memory_equal(buf, "abc", 3);
	assert_int_equal(dvx_mock_last(&M, DVX_MOCK_OP_SOCK_RECV)->moved, 3);

	/* faults: the n-th call, every call of an op, the hook; nothing reaches the OS */
	seq = dvx_mock_calls(&M);
	dvx_mock_fail_at(&M, seq + 1, -EIO);
	assert_int_equal(dvx_hal_sock_recv(hal, sfd, buf, sizeof(buf), &n), -EIO);
	assert_int_equal(dvx_mock_call_at(&M, seq + 1)->injected, 1);
	assert_int_equal(dvx_hal_sock_recv(hal, sfd, buf, sizeof(buf), &n), -EAGAIN);
	dvx_mock_fail_op(&M, DVX_MOCK_OP_SOCK_CONNECT, -ECONNREFUSED);
	other = 77;
	assert_int_equal(dvx_hal_sock_connect(hal, &a, &other), -ECONNREFUSED);
	assert_int_equal(other, -1);
	dvx_mock_fail_op(&M, DVX_MOCK_OP_SOCK_CONNECT, 0);
	dvx_mock_set_check(&M, refuse_send, NULL);
	assert_int_equal(dvx_hal_sock_send(hal, cfd, &iov, 1, &n), -EPIPE);
	assert_int_equal(n, 0);
	dvx_mock_set_check(&M, NULL, NULL);
	assert_int_equal(dvx_mock_live(&M, DVX_MOCK_RES_SOCK), 3);

	/* a descriptor the mock did not open is refused, never touched */
	assert_int_equal(pipe(foreign), 0);
	assert_int_equal(dvx_hal_sock_close(hal, foreign[0]), -EBADF);
	assert_int_equal(dvx_hal_sock_send(hal, foreign[1], &iov, 1, &n), -EBADF);
	p[0].fd = foreign[0];
	assert_int_equal(dvx_hal_sock_poll(hal, p, 1, 0), -EBADF);
	assert_int_equal(fcntl_ok(foreign[0]), 1);
	close(foreign[0]);
	close(foreign[1]);

	/* a failed close still closes: the socket is gone whatever close says */
	dvx_mock_fail_at(&M, dvx_mock_calls(&M) + 1, -EIO);
	assert_int_equal(dvx_hal_sock_close(hal, sfd), -EIO);
	assert_int_equal(dvx_mock_live(&M, DVX_MOCK_RES_SOCK), 2);
	assert_int_equal(dvx_hal_sock_close(hal, sfd), -EBADF);
	assert_int_equal(dvx_hal_sock_close(hal, cfd), 0);
	assert_int_equal(dvx_hal_sock_close(hal, lfd), 0);
	assert_int_equal(dvx_mock_live_total(&M), 0);
	dvx_mock_fail_op(&M, DVX_MOCK_OP_SOCK_UNLINK, -EACCES);
	assert_int_equal(dvx_hal_sock_unlink(hal, &a), -EACCES);
	assert_int_equal(access(a.path, F_OK), 0);	/* still there */
	dvx_mock_clear_faults(&M);
	assert_int_equal(dvx_hal_sock_unlink(hal, &a), 0);
	assert_int_equal(dvx_mock_last(&M, DVX_MOCK_OP_SOCK_UNLINK)->flags, DVX_HAL_SOCK_UNIX);
	assert_int_equal(rmdir(dir), 0);

	/* sleep: the mock's clock moves at once; on the real clock it really sleeps */
	M.now_ns = 100;
	M.now_step = 0;
	assert_int_equal(dvx_hal_sleep_ns(hal, 5000000000ull), 0);
	assert_int_equal(dvx_hal_now_ns(hal), 5000000100ull);
	assert_int_equal(dvx_mock_last(&M, DVX_MOCK_OP_SLEEP)->timeout_ns, 5000000000ull);
	M.now_real = 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_true(dvx_hal_now_ns(hal) >= (uint64_t)t0.tv_sec * 1000000000ull);
	assert_int_equal(dvx_hal_sleep_ns(hal, 10000000), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_true((t1.tv_sec - t0.tv_sec) * 1000000000ll + (t1.tv_nsec - t0.tv_nsec) >=
		    10000000);
	dvx_mock_fail_op(&M, DVX_MOCK_OP_SLEEP, -EINTR);
	assert_int_equal(dvx_hal_sleep_ns(hal, 1), -EINTR);
	assert_string_equal(dvx_mock_op_name(DVX_MOCK_OP_SOCK_LISTEN), "sock_listen");
	assert_string_equal(dvx_mock_op_name(DVX_MOCK_OP_SLEEP), "sleep");
	assert_string_equal(dvx_mock_res_name(DVX_MOCK_RES_SOCK), "sock");
}

static void test_fds(void **state)
{
	const struct dvx_hal *hal = dvx_mock_hal(&M);
	struct dvx_hal_sock_addr a;
	struct dvx_hal_host_ident id;
	struct dvx_hal_sock_cred cr;
	struct dvx_hal_pollfd p;
	const struct dvx_mock_call *c;
	int lfd, cfd, sfd, mfd, got[2];
	unsigned n;
	size_t len;
	char b;

	(void)state;
	/* who we are: what the mock was told (its own host, this process) */
	assert_int_equal(dvx_hal_host_ident(hal, &id), 0);
	assert_string_equal(id.hostname, "mock");
	assert_int_equal(id.pid, getpid());
	M.ident.boot_id[0] = 1;
	assert_int_equal(dvx_hal_host_ident(hal, &id), 0);
	assert_int_equal(id.boot_id[0], 1);
	dvx_mock_fail_op(&M, DVX_MOCK_OP_HOST_IDENT, -EIO);
	assert_int_equal(dvx_hal_host_ident(hal, &id), -EIO);
	dvx_mock_fail_op(&M, DVX_MOCK_OP_HOST_IDENT, 0);

	/* random bytes: the kernel's, logged with their length, failable */
	{
		uint8_t r1[32], r2[32];

		memset(r1, 0, sizeof(r1));
		memset(r2, 0, sizeof(r2));
		assert_int_equal(dvx_hal_random_bytes(hal, r1, sizeof(r1)), 0);
		assert_int_equal(dvx_hal_random_bytes(hal, r2, sizeof(r2)), 0);
		assert_true(memcmp(r1, r2, sizeof(r1)) != 0);
		assert_int_equal(dvx_mock_count(&M, DVX_MOCK_OP_RANDOM_BYTES), 2);
		assert_int_equal(dvx_mock_last(&M, DVX_MOCK_OP_RANDOM_BYTES)->len, 32);
		dvx_mock_fail_op(&M, DVX_MOCK_OP_RANDOM_BYTES, -ENOSYS);
		assert_int_equal(dvx_hal_random_bytes(hal, r1, 8), -ENOSYS);
		dvx_mock_fail_op(&M, DVX_MOCK_OP_RANDOM_BYTES, 0);
		assert_string_equal(dvx_mock_op_name(DVX_MOCK_OP_RANDOM_BYTES), "random_bytes");
	}

	memset(&a, 0, sizeof(a));
	a.family = DVX_HAL_SOCK_ABSTRACT;
	snprintf(a.path, sizeof(a.path), "dvx-mock-%d", (int)getpid());
	assert_int_equal(dvx_hal_sock_listen(hal, &a, 2, &lfd), 0);
	assert_string_equal(dvx_mock_last(&M, DVX_MOCK_OP_SOCK_LISTEN)->name, a.path);
	assert_int_equal(dvx_hal_sock_connect(hal, &a, &cfd), 0);
	p.fd = lfd;
	p.events = DVX_HAL_POLL_IN;
	assert_int_equal(dvx_hal_sock_poll(hal, &p, 1, 2000000000ull), 1);
	assert_int_equal(dvx_hal_sock_accept(hal, lfd, &sfd), 0);
	assert_int_equal(dvx_hal_sock_cred(hal, sfd, &cr), 0);
	assert_int_equal(cr.pid, getpid());
	assert_int_equal(dvx_mock_last(&M, DVX_MOCK_OP_SOCK_CRED)->id, (uint32_t)getpid());

	/* a descriptor passed: the received one is counted until fd_close */
	mfd = memfd_create("dvx-mock-test", MFD_CLOEXEC);
	assert_true(mfd >= 0);
	assert_int_equal(dvx_hal_sock_send_fds(hal, cfd, "x", 1, &mfd, 1, &len), 0);
	c = dvx_mock_last(&M, DVX_MOCK_OP_SOCK_SEND_FDS);
	assert_int_equal(c->index, 1);
	assert_int_equal(c->dmabuf_fd, mfd);
	assert_int_equal(c->moved, 1);
	p.fd = sfd;
	assert_int_equal(dvx_hal_sock_poll(hal, &p, 1, 2000000000ull), 1);
	assert_int_equal(dvx_hal_sock_recv_fds(hal, sfd, &b, 1, &len, got, 2, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(dvx_mock_live(&M, DVX_MOCK_RES_FD), 1);
	assert_int_equal(dvx_mock_last(&M, DVX_MOCK_OP_SOCK_RECV_FDS)->index, 1);
	/* a failed close still closes (as close() does) */
	dvx_mock_fail_op(&M, DVX_MOCK_OP_FD_CLOSE, -EINTR);
	assert_int_equal(dvx_hal_fd_close(hal, got[0]), -EINTR);
	dvx_mock_fail_op(&M, DVX_MOCK_OP_FD_CLOSE, 0);
	assert_int_equal(dvx_mock_live(&M, DVX_MOCK_RES_FD), 0);
	assert_int_equal(dvx_hal_fd_close(hal, got[0]), -EBADF);	/* not the mock's now */
	assert_int_equal(dvx_hal_fd_close(hal, mfd), -EBADF);		/* never the mock's */

	/* injected failures; sockets the mock did not open are refused */
	dvx_mock_fail_op(&M, DVX_MOCK_OP_SOCK_SEND_FDS, -EPIPE);
	assert_int_equal(dvx_hal_sock_send_fds(hal, cfd, "x", 1, &mfd, 1, &len), -EPIPE);
	dvx_mock_fail_op(&M, DVX_MOCK_OP_SOCK_SEND_FDS, 0);
	assert_int_equal(dvx_hal_sock_send_fds(hal, mfd, "x", 1, &mfd, 1, &len), -EBADF);
	assert_int_equal(dvx_hal_sock_recv_fds(hal, mfd, &b, 1, &len, got, 2, &n), -EBADF);
	assert_int_equal(dvx_hal_sock_cred(hal, mfd, &cr), -EBADF);
	close(mfd);
	assert_int_equal(dvx_hal_sock_close(hal, cfd), 0);
	assert_int_equal(dvx_hal_sock_close(hal, sfd), 0);
	assert_int_equal(dvx_hal_sock_close(hal, lfd), 0);
	assert_int_equal(dvx_mock_live_total(&M), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_devices, setup),
		cmocka_unit_test(test_port_mbps),
		cmocka_unit_test_setup(test_query_hca_cap, setup),
		cmocka_unit_test_setup(test_objects, setup),
		cmocka_unit_test_setup(test_resources, setup),
		cmocka_unit_test_setup(test_fail_at, setup),
		cmocka_unit_test_setup(test_fail_op, setup),
		cmocka_unit_test_setup(test_fail_devx, setup),
		cmocka_unit_test_setup(test_check_hook, setup),
		cmocka_unit_test_setup(test_clock_and_log, setup),
		cmocka_unit_test_setup(test_sockets, setup),
		cmocka_unit_test_setup(test_fds, setup),
	};

	return cmocka_run_group_tests_name("hal-mock", tests, NULL, NULL);
}
