// SPDX-License-Identifier: MIT
/*
 * The sim's control half, driven through the hal wrappers with dvx's own encoders
 * (dvx/mlx5/cmd.h, caps.h): fabric set-up, devices and queries, QUERY_HCA_CAP pages
 * parsed back into the configured caps, CQ and QP create/query/destroy, every legal
 * transition and illegal ones refused with the PRM status, the umem/UAR/PD/MR tables
 * (iova 0, dma-buf), refusals of bad ids, offsets and sizes, NICs with missing caps,
 * the doorbell model (strict: a doorbell starts the QP it names up to its index, each
 * mismatch a fault; a shared UAR's rescues, also of a QP that rescues alone carry past
 * the 16-bit wrap; the loose model; BlueFlame; the 16-bit counter wrap), dvx_sim_step()
 * against the progress thread, and the trace.
 */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>

#include "../../lib/dvx_test.h"
#include "../../lib/sim_trace.h"

#include <dvx/byteorder.h>
#include <dvx/hal/sim.h>
#include <dvx/mlx5/caps.h>
#include <dvx/mlx5/cmd.h>
#include <dvx/mlx5/cqe.h>
#include <dvx/mlx5/sq.h>

static void *storage;
static struct dvx_sim_fabric *fab;
static const struct dvx_hal *hal;

/* one NIC opened, with a PD, a UAR and one 64 KiB umem for rings and DBRs */
#define MEM_LEN 65536u
#define CQ_OFF(i) ((uint64_t)(i) * 4096u)		/* CQ rings: 0 .. 28 KiB */
#define WQ_OFF(i) (32768u + (uint64_t)(i) * 4096u)	/* WQs: 32 .. 60 KiB */
#define DBR_OFF(i) (61440u + (uint64_t)(i) * 8u)	/* DBRs: 60 KiB .. */

struct env {
	struct dvx_hal_nic dev;
	struct dvx_hal_pd pd;
	struct dvx_hal_uar uar;
	struct dvx_hal_umem umem;
	uint8_t *mem;
	uint32_t eqn;
};

static int setup(void **state)
{
	struct dvx_sim_fabric_cfg fc;
	size_t len;

	(void)state;
	dvx_sim_fabric_cfg_default(&fc);
	len = dvx_sim_fabric_mem_size(&fc);
	assert_true(len > 0);
	storage = malloc(len);
	assert_non_null(storage);
	assert_int_equal(dvx_sim_fabric_init(storage, len, &fc, &fab), 0);
	assert_int_equal(dvx_sim_set_reorder(fab, 0, 0), 0);	/* the in-order model's counts */
	hal = dvx_sim_hal(fab);
	assert_non_null(hal);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	assert_int_equal(dvx_sim_fini(fab), 0);
	free(storage);
	storage = NULL;
	return 0;
}

static int add_default(unsigned index)
{
	struct dvx_sim_nic_cfg nc;

	dvx_sim_nic_cfg_default(&nc, index);
	return dvx_sim_add_nic(fab, &nc);
}

static void env_open(struct env *e, const char *name, enum dvx_uar_type type)
{
	struct dvx_hal_umem_req ur;

	memset(e, 0, sizeof(*e));
	assert_int_equal(dvx_hal_nic_open(hal, name, &e->dev), 0);
	assert_int_equal(dvx_hal_pd_alloc(&e->dev, &e->pd), 0);
	assert_int_equal(dvx_hal_uar_alloc(&e->dev, type, &e->uar), 0);
	assert_int_equal(dvx_hal_eqn_query(&e->dev, 0, &e->eqn), 0);
	e->mem = aligned_alloc(4096, MEM_LEN);
	assert_non_null(e->mem);
	memset(e->mem, 0, MEM_LEN);
	memset(&ur, 0, sizeof(ur));
	ur.addr = e->mem;
	ur.len = MEM_LEN;
	ur.access = DVX_ACCESS_LOCAL_WRITE;
	ur.dmabuf_fd = -1;
	ur.pgsz_bitmap = 4096;	/* 4 KiB pages, as dvx registers: rings at any 64 B */
	assert_int_equal(dvx_hal_umem_reg(&e->dev, &ur, &e->umem), 0);
}

static void env_close(struct env *e)
{
	assert_int_equal(dvx_hal_umem_dereg(&e->dev, &e->umem), 0);
	assert_int_equal(dvx_hal_uar_free(&e->dev, &e->uar), 0);
	assert_int_equal(dvx_hal_pd_free(&e->dev, &e->pd), 0);
	assert_int_equal(dvx_hal_nic_close(&e->dev), 0);
	free(e->mem);
}

static void expect_devx(const struct dvx_hal_nic *dev, uint8_t status, uint32_t syndrome)
{
	assert_int_equal(dev->diag.src, DVX_DIAG_DEVX);
	assert_int_equal(dev->diag.status, status);
	assert_int_equal(dev->diag.syndrome, syndrome);
}

static void live_zero(void)
{
	struct dvx_sim_stats st;
	unsigned i;

	assert_int_equal(dvx_sim_get_stats(fab, &st), 0);
	for (i = 0; i < DVX_ARRAY_SIZE(st.live); i++)
		assert_int_equal(st.live[i], 0);
}

/* ---- CQ / QP helpers ------------------------------------------------------------ */

static void cq_attr(const struct env *e, struct dvx_mlx5_cq_cfg *a, uint32_t log, unsigned i)
{
	memset(a, 0, sizeof(*a));
	a->log_cq_size = log;
	a->uar_page = e->uar.page_id;
	a->eqn = e->eqn;
	a->cq_umem_id = e->umem.id;
	a->cq_umem_offset = CQ_OFF(i);
	a->dbr_umem_id = e->umem.id;
	a->dbr_offset = DBR_OFF(32 + i);
	a->cqe_size = 64;
	a->oi = 0;
}

static int cq_make(struct env *e, const struct dvx_mlx5_cq_cfg *a, struct dvx_hal_obj *obj,
		   uint32_t *cqn)
{
	uint8_t in[DVX_MLX5_CREATE_CQ_IN_BYTES], out[DVX_MLX5_CREATE_CQ_OUT_BYTES];
	int rc;

	assert_int_equal(dvx_mlx5_create_cq_in(in, a), 0);
	memset(obj, 0, sizeof(*obj));
	rc = dvx_hal_obj_create(&e->dev, in, sizeof(in), out, sizeof(out), obj);
	if (!rc) {
		assert_int_equal(dvx_mlx5_create_cq_out(out, sizeof(out), cqn), 0);
		obj->id = *cqn;
	}
	return rc;
}

/*
 * create with raw patching of the encoded mailbox: @byte is a mailbox position; a
 * context's field gets there through AT_CQC()/AT_QPC()
 */
#define AT_CQC(f) AT_CQC_(f)
#define AT_CQC_(b, h, l) DVX_MLX5_CREATE_CQ_IN_CQC + (b), h, l
#define AT_QPC(f) AT_QPC_(f)
#define AT_QPC_(b, h, l) DVX_MLX5_CREATE_QP_IN_QPC + (b), h, l

static int cq_make_patched(struct env *e, const struct dvx_mlx5_cq_cfg *a, unsigned byte,
			   unsigned hi, unsigned lo, uint32_t v)
{
	uint8_t in[DVX_MLX5_CREATE_CQ_IN_BYTES], out[DVX_MLX5_CREATE_CQ_OUT_BYTES];
	struct dvx_hal_obj obj;

	assert_int_equal(dvx_mlx5_create_cq_in(in, a), 0);
	dvx_mlx5_set(in, byte, hi, lo, v);
	memset(&obj, 0, sizeof(obj));
	return dvx_hal_obj_create(&e->dev, in, sizeof(in), out, sizeof(out), &obj);
}

static void qp_attr(const struct env *e, struct dvx_mlx5_qp_cfg *a, uint32_t cqn, unsigned i)
{
	memset(a, 0, sizeof(*a));
	a->pdn = e->pd.pdn;
	a->uar_page = e->uar.page_id;
	a->cqn_snd = cqn;
	a->cqn_rcv = cqn;
	a->wq_umem_id = e->umem.id;
	a->dbr_umem_id = e->umem.id;
	a->wq_umem_offset = WQ_OFF(i);
	a->dbr_offset = DBR_OFF(i);
	a->log_sq_size = 6;
	a->rq_type = DVX_MLX5_RQ_TYPE_ZERO;
	a->log_msg_max = 30;
	a->user_index = 0x100 + i;
}

static int qp_make(struct env *e, const struct dvx_mlx5_qp_cfg *a, struct dvx_hal_obj *obj,
		   uint32_t *qpn)
{
	uint8_t in[DVX_MLX5_CREATE_QP_IN_BYTES], out[DVX_MLX5_CREATE_QP_OUT_BYTES];
	int rc;

	assert_int_equal(dvx_mlx5_create_qp_in(in, a), 0);
	memset(obj, 0, sizeof(*obj));
	rc = dvx_hal_obj_create(&e->dev, in, sizeof(in), out, sizeof(out), obj);
	if (!rc) {
		assert_int_equal(dvx_mlx5_create_qp_out(out, sizeof(out), qpn), 0);
		obj->id = *qpn;
	}
	return rc;
}

static int qp_make_patched(struct env *e, const struct dvx_mlx5_qp_cfg *a, unsigned byte,
			   unsigned hi, unsigned lo, uint32_t v)
{
	uint8_t in[DVX_MLX5_CREATE_QP_IN_BYTES], out[DVX_MLX5_CREATE_QP_OUT_BYTES];
	struct dvx_hal_obj obj;

	assert_int_equal(dvx_mlx5_create_qp_in(in, a), 0);
	dvx_mlx5_set(in, byte, hi, lo, v);
	memset(&obj, 0, sizeof(obj));
	return dvx_hal_obj_create(&e->dev, in, sizeof(in), out, sizeof(out), &obj);
}

static int modify(struct env *e, struct dvx_hal_obj *qp, const uint8_t *in, size_t inlen)
{
	uint8_t out[DVX_MLX5_MODIFY_QP_OUT_BYTES];

	return dvx_hal_obj_modify(&e->dev, qp, in, inlen, out, sizeof(out));
}

static int rst2init(struct env *e, struct dvx_hal_obj *qp, uint8_t port, uint8_t atomic_mode)
{
	struct dvx_mlx5_rst2init_cfg a = { .rre = 1, .rwe = 1, .rae = 1,
					    .atomic_mode = atomic_mode,
					    .vhca_port_num = port };
	uint8_t in[DVX_MLX5_MODIFY_QP_IN_BYTES];

	assert_int_equal(dvx_mlx5_rst2init_qp_in(in, qp->id, &a), 0);
	return modify(e, qp, in, sizeof(in));
}

static void roce_rtr_attr(struct dvx_mlx5_init2rtr_cfg *a, uint32_t remote_qpn,
			  const uint8_t gid[16], const uint8_t mac[6])
{
	memset(a, 0, sizeof(*a));
	a->remote_qpn = remote_qpn;
	a->mtu = DVX_MLX5_MTU_4096;
	a->log_msg_max = 30;
	a->min_rnr_nak = 12;
	a->log_rra_max = 4;
	a->path.roce = 1;
	a->path.vhca_port_num = 1;
	a->path.src_addr_index = DVX_SIM_ROCE_GID_V2;
	a->path.hop_limit = 255;
	a->path.udp_sport = 0xc000;
	memcpy(a->path.rgid, gid, 16);
	memcpy(a->path.rmac, mac, 6);
}

static int init2rtr(struct env *e, struct dvx_hal_obj *qp, const struct dvx_mlx5_init2rtr_cfg *a)
{
	uint8_t in[DVX_MLX5_MODIFY_QP_IN_BYTES];

	assert_int_equal(dvx_mlx5_init2rtr_qp_in(in, qp->id, a), 0);
	return modify(e, qp, in, sizeof(in));
}

static int init2rtr_loop(struct env *e, struct dvx_hal_obj *qp)
{
	uint8_t in[DVX_MLX5_MODIFY_QP_IN_BYTES];

	assert_int_equal(dvx_mlx5_init2rtr_loopback_qp_in(in, qp->id, 1, DVX_MLX5_MTU_1024), 0);
	return modify(e, qp, in, sizeof(in));
}

static int rtr2rts(struct env *e, struct dvx_hal_obj *qp, uint8_t log_sra_max)
{
	struct dvx_mlx5_rtr2rts_cfg a = { .retry_count = 7, .rnr_retry = 7, .ack_timeout = 20,
					   .log_sra_max = log_sra_max };
	uint8_t in[DVX_MLX5_MODIFY_QP_IN_BYTES];

	assert_int_equal(dvx_mlx5_rtr2rts_qp_in(in, qp->id, &a), 0);
	return modify(e, qp, in, sizeof(in));
}

static int rts2rts(struct env *e, struct dvx_hal_obj *qp, uint32_t opt, uint8_t retry)
{
	uint8_t in[DVX_MLX5_MODIFY_QP_IN_BYTES];

	memset(in, 0, sizeof(in));
	dvx_mlx5_set(in, 0, 31, 16, 0x505);		/* RTS2RTS_QP (prm 1.1) */
	dvx_mlx5_set(in, DVX_MLX5_MODIFY_QP_IN_QPN, qp->id);
	dvx_mlx5_set(in, DVX_MLX5_MODIFY_QP_IN_OPT_PARAM_MASK, opt);
	dvx_mlx5_set(DVX_MLX5_QPC_IN(in), DVX_MLX5_QPC_RETRY_COUNT, retry);
	return modify(e, qp, in, sizeof(in));
}

static int to_err(struct env *e, struct dvx_hal_obj *qp)
{
	uint8_t in[DVX_MLX5_QP_2ERR_IN_BYTES];

	assert_int_equal(dvx_mlx5_qp_2err_in(in, qp->id), 0);
	return modify(e, qp, in, sizeof(in));
}

static int to_rst(struct env *e, struct dvx_hal_obj *qp)
{
	uint8_t in[DVX_MLX5_QP_2RST_IN_BYTES];

	assert_int_equal(dvx_mlx5_qp_2rst_in(in, qp->id), 0);
	return modify(e, qp, in, sizeof(in));
}

static void qp_query(struct env *e, struct dvx_hal_obj *qp, struct dvx_mlx5_qp_query *q)
{
	uint8_t in[DVX_MLX5_QUERY_QP_IN_BYTES], out[DVX_MLX5_QUERY_QP_OUT_BYTES];

	assert_int_equal(dvx_mlx5_query_qp_in(in, qp->id), 0);
	assert_int_equal(dvx_hal_obj_query(&e->dev, qp, in, sizeof(in), out, sizeof(out)), 0);
	assert_int_equal(dvx_mlx5_query_qp_out(out, sizeof(out), q), 0);
}

static unsigned qp_state(struct env *e, struct dvx_hal_obj *qp)
{
	struct dvx_mlx5_qp_query q;

	qp_query(e, qp, &q);
	return q.state;
}

/* a QP connected to itself through force-loopback, in RTS */
static void qp_loop_rts(struct env *e, struct dvx_hal_obj *qp)
{
	assert_int_equal(rst2init(e, qp, 1, DVX_MLX5_ATOMIC_MODE_UP_TO_8B), 0);
	assert_int_equal(init2rtr_loop(e, qp), 0);
	assert_int_equal(rtr2rts(e, qp, 4), 0);
	assert_int_equal(qp_state(e, qp), DVX_MLX5_QP_STATE_RTS);
}

/* ---- fabric ---------------------------------------------------------------------- */

static void test_fabric(void **state)
{
	struct dvx_sim_fabric_cfg fc;
	struct dvx_sim_fabric *f2;
	struct dvx_sim_nic_cfg nc;
	unsigned i;

	(void)state;
	assert_int_equal(dvx_sim_fabric_mem_size(NULL), 0);
	dvx_sim_fabric_cfg_default(&fc);
	fc.max_qps = 0;
	assert_int_equal(dvx_sim_fabric_mem_size(&fc), 0);
	dvx_sim_fabric_cfg_default(&fc);
	assert_int_equal(dvx_sim_fabric_init(storage, 64, &fc, &f2), -EINVAL);

	for (i = 0; i < 4; i++)
		assert_int_equal(add_default(i), (int)i);
	assert_int_equal(add_default(4), -ENOSPC);

	dvx_sim_nic_cfg_default(&nc, 9);
	nc.nports = 3;
	assert_int_equal(dvx_sim_add_nic(fab, &nc), -EINVAL);
	dvx_sim_nic_cfg_default(&nc, 9);
	nc.port[0].active_mtu = 6;
	assert_int_equal(dvx_sim_add_nic(fab, &nc), -EINVAL);
	assert_int_equal(dvx_sim_set_port(fab, 0, 2, 0), -EINVAL);
	assert_int_equal(dvx_sim_set_port(fab, 7, 1, 0), -EINVAL);
	assert_int_equal(dvx_sim_set_port(fab, 0, 1, 1), 0);
}

static void test_duplicate_nic(void **state)
{
	struct dvx_sim_nic_cfg nc;

	(void)state;
	assert_int_equal(add_default(0), 0);
	dvx_sim_nic_cfg_default(&nc, 0);
	assert_int_equal(dvx_sim_add_nic(fab, &nc), -EEXIST);
	dvx_sim_nic_cfg_default(&nc, 1);
	strcpy(nc.pci, "0000:50:00.0");			/* NIC 0's address */
	assert_int_equal(dvx_sim_add_nic(fab, &nc), -EEXIST);
}

/* ---- devices and queries ---------------------------------------------------------- */

static void test_devices(void **state)
{
	struct dvx_hal_nic_info info[4];
	struct dvx_hal_nic dev, dev2;
	struct dvx_hal_nic_attr attr;
	struct dvx_hal_port_attr pa;
	struct dvx_sim_nic_cfg nc;
	struct dvx_sim_stats st;
	struct dvx_hal_gid gid;
	unsigned n = 0;

	(void)state;
	assert_string_equal(hal->name, "sim");
	assert_int_equal(add_default(0), 0);
	dvx_sim_nic_cfg_default(&nc, 1);
	nc.port[0].link_layer = DVX_LINK_LAYER_IB;
	assert_int_equal(dvx_sim_add_nic(fab, &nc), 1);
	dvx_sim_nic_cfg_default(&nc, 2);
	nc.devx = 0;
	assert_int_equal(dvx_sim_add_nic(fab, &nc), 2);

	assert_int_equal(dvx_hal_nic_list(hal, NULL, 0, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(dvx_hal_nic_list(hal, info, 4, &n), 0);
	assert_string_equal(info[0].name, "sim_0");
	assert_string_equal(info[1].pci, "0000:51:00.0");
	assert_int_equal(info[0].vendor_id, 0x15b3);
	assert_int_equal(info[0].device_id, 0x1021);
	assert_true(info[2].is_mlx5);
	assert_string_equal(info[0].driver, "mlx5_core");

	memset(&dev, 0, sizeof(dev));
	assert_int_equal(dvx_hal_nic_open(hal, "nope", &dev), -ENODEV);
	assert_int_equal(dvx_hal_nic_open(hal, "sim_2", &dev), -EOPNOTSUPP);
	assert_int_equal(dev.diag.sys_errno, EOPNOTSUPP);
	assert_int_equal(dvx_hal_nic_open(hal, "51:00.0", &dev), 0);	/* short PCI form */
	assert_string_equal(dev.info.name, "sim_1");
	assert_int_equal(dvx_hal_nic_open(hal, "0000:50:00.0", &dev2), 0);
	assert_string_equal(dev2.info.name, "sim_0");

	/* RoCE NIC */
	assert_int_equal(dvx_hal_nic_query(&dev2, &attr), 0);
	assert_string_equal(attr.fw_ver, "28.39.1002");
	assert_int_equal(attr.vendor_part_id, 0x1021);
	assert_int_equal(attr.max_qp, 64);		/* bounded by the fabric */
	assert_int_equal(attr.max_qp_wr, 1u << 15);
	assert_int_equal(attr.max_qp_rd_atom, 16);
	assert_int_equal(attr.phys_port_cnt, 1);
	assert_int_equal(attr.atomic_cap, 1);
	assert_int_equal(dvx_hal_query_port(&dev2, 1, &pa), 0);
	assert_int_equal(pa.state, 4);
	assert_int_equal(pa.link_layer, DVX_LINK_LAYER_ETHERNET);
	assert_int_equal(pa.active_mtu, 5);
	assert_int_equal(pa.gid_tbl_len, DVX_SIM_ROCE_GID_TBL_LEN);
	assert_int_not_equal(dvx_hal_query_port(&dev2, 2, &pa), 0);
	assert_int_equal(dvx_hal_query_gid(&dev2, 1, DVX_SIM_ROCE_GID_V2, &gid), 0);
	dvx_sim_nic_cfg_default(&nc, 0);
	assert_memory_equal(gid.raw, nc.port[0].gid, 16);
	assert_int_equal(gid.type, DVX_GID_TYPE_ROCE_V2);
	assert_true(gid.valid);
	assert_int_equal(dvx_hal_query_gid(&dev2, 1, 0, &gid), 0);
	assert_int_equal(gid.raw[0], 0xfe);
	assert_int_equal(gid.type, DVX_GID_TYPE_ROCE_V1);
	assert_int_equal(dvx_hal_query_gid(&dev2, 1, 4, &gid), -EINVAL);

	/* port down */
	assert_int_equal(dvx_sim_set_port(fab, 0, 1, 0), 0);
	assert_int_equal(dvx_hal_query_port(&dev2, 1, &pa), 0);
	assert_int_equal(pa.state, 1);
	assert_int_equal(dvx_sim_set_port(fab, 0, 1, 1), 0);

	/* IB NIC */
	assert_int_equal(dvx_hal_query_port(&dev, 1, &pa), 0);
	assert_int_equal(pa.link_layer, DVX_LINK_LAYER_IB);
	assert_int_equal(pa.lid, nc.port[0].lid + 2);	/* index 1 */
	assert_int_equal(pa.gid_tbl_len, 1);
	assert_int_equal(dvx_hal_query_gid(&dev, 1, 0, &gid), 0);
	assert_int_equal(gid.type, DVX_GID_TYPE_IB);

	assert_int_equal(dvx_sim_get_stats(fab, &st), 0);
	assert_int_equal(st.live[DVX_SIM_LIVE_OPEN], 2);
	assert_int_equal(dvx_hal_nic_close(&dev), 0);
	assert_int_equal(dvx_hal_nic_close(&dev2), 0);
	live_zero();
}

/* ---- QUERY_HCA_CAP ----------------------------------------------------------------- */

static void query_caps(struct dvx_hal_nic *dev, struct dvx_mlx5_caps *caps)
{
	static const unsigned types[] = { DVX_MLX5_CAP_TYPE_GENERAL, DVX_MLX5_CAP_TYPE_ATOMIC,
					  DVX_MLX5_CAP_TYPE_ROCE, DVX_MLX5_CAP_TYPE_GENERAL_2 };
	static uint8_t out[DVX_MLX5_QUERY_HCA_CAP_OUT_BYTES];
	uint8_t in[DVX_MLX5_QUERY_HCA_CAP_IN_BYTES];
	size_t i;

	memset(caps, 0, sizeof(*caps));
	for (i = 0; i < DVX_ARRAY_SIZE(types); i++) {
		dvx_mlx5_query_hca_cap_in(in, types[i], 1);
		assert_int_equal(dvx_hal_devx_cmd(dev, in, sizeof(in), out, sizeof(out)), 0);
		assert_int_equal(dvx_mlx5_caps_parse(caps, types[i], out, sizeof(out)), 0);
	}
}

static void test_caps(void **state)
{
	uint8_t in[DVX_MLX5_QUERY_HCA_CAP_IN_BYTES], out[DVX_MLX5_QUERY_HCA_CAP_OUT_BYTES];
	struct dvx_sim_nic_cfg nc;
	struct dvx_mlx5_caps c;
	struct dvx_hal_nic dev;

	(void)state;
	assert_int_equal(add_default(0), 0);
	dvx_sim_nic_cfg_default(&nc, 1);
	nc.cd = 0;
	nc.atomic = 0;
	nc.force_loopback = 0;
	nc.cq_oi = 0;
	nc.bf = 0;
	nc.log_max_qp_sz = 8;
	nc.log_max_cq_sz = 10;
	nc.log_max_ra_req_qp = 1;
	nc.log_max_ra_res_qp = 2;
	nc.port[0].link_layer = DVX_LINK_LAYER_IB;
	assert_int_equal(dvx_sim_add_nic(fab, &nc), 1);
	dvx_sim_nic_cfg_default(&nc, 2);
	nc.atomic_be_only = 1;
	assert_int_equal(dvx_sim_add_nic(fab, &nc), 2);

	/* ConnectX-7 like */
	assert_int_equal(dvx_hal_nic_open(hal, "sim_0", &dev), 0);
	query_caps(&dev, &c);
	assert_true(c.general_valid && c.atomic_valid && c.roce_valid && c.general2_valid);
	assert_int_equal(c.log_max_qp_sz, 15);
	assert_int_equal(c.log_max_cq_sz, 22);
	assert_int_equal(c.log_max_msg, 30);
	assert_int_equal(c.port_type, DVX_MLX5_PORT_TYPE_ETH);
	assert_int_equal(c.num_ports, 1);
	assert_int_equal(c.roce, 1);
	assert_int_equal(c.cqe_version, 1);
	assert_int_equal(c.cd, 1);
	assert_int_equal(c.atomic, 1);
	assert_int_equal(c.cq_oi, 1);
	assert_int_equal(c.rc, 1);
	assert_int_equal(c.bf, 1);
	assert_int_equal(c.log_bf_reg_size, DVX_SIM_LOG_BF_REG_SIZE);
	assert_int_equal(c.log_max_ra_req_qp, 4);
	assert_int_equal(c.log_max_ra_res_qp, 4);
	assert_int_equal(c.max_wqe_sz_sq, 1024);
	assert_int_equal(c.hca_cap_2, 1);
	assert_int_equal(c.cqe_compression, 0);
	assert_int_equal(c.atomic_req_8B_endianness_mode, 1);
	assert_int_equal(c.supported_atomic_req_8B_endianness_mode_1, 1);
	assert_int_equal(c.atomic_operations, 0xf);
	assert_int_equal(c.atomic_size_qp, DVX_MLX5_ATOMIC_SIZE_4B | DVX_MLX5_ATOMIC_SIZE_8B);
	assert_int_equal(c.fl_rc_qp_when_roce_enabled, 1);
	assert_int_equal(c.fl_rc_qp_when_roce_disabled, 1);
	assert_int_equal(c.r_roce_min_src_udp_port, 0xc000);
	assert_int_equal(c.send_dbr_mode_no_dbr_ext, 0);

	/* an unknown page (ODP) is BAD_PARAM; a short output BAD_OUTPUT_LEN */
	dvx_mlx5_query_hca_cap_in(in, DVX_MLX5_CAP_TYPE_ODP, 1);
	assert_int_equal(dvx_hal_devx_cmd(&dev, in, sizeof(in), out, sizeof(out)), -EREMOTEIO);
	expect_devx(&dev, 0x03, DVX_SIM_SYND_BAD_OP_MOD);
	assert_int_equal(dev.diag.cmd_opcode, 0x100);
	dvx_mlx5_query_hca_cap_in(in, DVX_MLX5_CAP_TYPE_GENERAL, 1);
	assert_int_equal(dvx_hal_devx_cmd(&dev, in, sizeof(in), out, 64), -EREMOTEIO);
	expect_devx(&dev, 0x51, DVX_SIM_SYND_OUTLEN);
	/* an object command through the general path: the DEVX layer refuses it */
	memset(in, 0, sizeof(in));
	dvx_mlx5_set(in, 0, 31, 16, 0x500);
	assert_int_equal(dvx_hal_devx_cmd(&dev, in, sizeof(in), out, sizeof(out)), -EINVAL);
	/* an opcode the sim does not know */
	dvx_mlx5_set(in, 0, 31, 16, 0x7ff);
	assert_int_equal(dvx_hal_devx_cmd(&dev, in, sizeof(in), out, sizeof(out)), -EREMOTEIO);
	expect_devx(&dev, 0x02, DVX_SIM_SYND_BAD_OPCODE);
	assert_int_equal(dvx_hal_nic_close(&dev), 0);

	/* missing caps */
	assert_int_equal(dvx_hal_nic_open(hal, "sim_1", &dev), 0);
	query_caps(&dev, &c);
	assert_int_equal(c.cd, 0);
	assert_int_equal(c.atomic, 0);
	assert_int_equal(c.atomic_operations, 0);
	assert_int_equal(c.cq_oi, 0);
	assert_int_equal(c.bf, 0);
	assert_int_equal(c.roce, 0);
	assert_int_equal(c.port_type, DVX_MLX5_PORT_TYPE_IB);
	assert_int_equal(c.fl_rc_qp_when_roce_disabled, 0);
	assert_int_equal(c.log_max_qp_sz, 8);
	assert_int_equal(c.log_max_cq_sz, 10);
	assert_int_equal(c.log_max_ra_req_qp, 1);
	assert_int_equal(c.log_max_ra_res_qp, 2);
	assert_int_equal(dvx_hal_nic_close(&dev), 0);

	/* big-endian-only atomics */
	assert_int_equal(dvx_hal_nic_open(hal, "sim_2", &dev), 0);
	query_caps(&dev, &c);
	assert_int_equal(c.atomic, 1);
	assert_int_equal(c.atomic_req_8B_endianness_mode, 0);
	assert_int_equal(c.supported_atomic_req_8B_endianness_mode_1, 0);
	assert_int_equal(dvx_hal_nic_close(&dev), 0);
}

/* ---- CQs ----------------------------------------------------------------------------- */

static void test_cq(void **state)
{
	uint8_t in[DVX_MLX5_QUERY_CQ_IN_BYTES], out[DVX_MLX5_QUERY_CQ_OUT_BYTES];
	struct dvx_mlx5_cq_cfg a;
	struct dvx_mlx5_cq_query q;
	struct dvx_hal_obj cq, cq2;
	struct dvx_sim_nic_cfg nc;
	uint32_t cqn, cqn2;
	struct env e;

	(void)state;
	assert_int_equal(add_default(0), 0);
	dvx_sim_nic_cfg_default(&nc, 1);
	nc.cq_oi = 0;
	nc.log_max_cq = 1;		/* two CQs */
	nc.log_max_cq_sz = 6;
	assert_int_equal(dvx_sim_add_nic(fab, &nc), 1);

	env_open(&e, "sim_0", DVX_UAR_NC_SHARED);
	cq_attr(&e, &a, 6, 0);
	a.oi = 1;
	assert_int_equal(cq_make(&e, &a, &cq, &cqn), 0);
	assert_true(cqn > 0 && cqn <= 0xffffff);
	assert_int_equal(cq.cmd_opcode, 0x400);
	assert_int_equal(dvx_mlx5_query_cq_in(in, cqn), 0);
	assert_int_equal(dvx_hal_obj_query(&e.dev, &cq, in, sizeof(in), out, sizeof(out)), 0);
	assert_int_equal(dvx_mlx5_query_cq_out(out, sizeof(out), &q), 0);
	assert_int_equal(q.log_cq_size, 6);
	assert_int_equal(q.uar_page, e.uar.page_id);
	assert_int_equal(q.c_eqn, e.eqn);
	assert_int_equal(q.oi, 1);
	assert_int_equal(q.status, 0);
	assert_int_equal(q.producer_counter, 0);

	/* refusals, each with its status and syndrome, nothing created */
	cq_attr(&e, &a, 23, 1);				/* above log_max_cq_sz 22 */
	assert_int_equal(cq_make(&e, &a, &cq2, &cqn2), -EREMOTEIO);
	expect_devx(&e.dev, 0x03, DVX_SIM_SYND_LOG_SIZE);
	assert_int_equal(e.dev.diag.cmd_opcode, 0x400);
	assert_null(cq2.priv);
	cq_attr(&e, &a, 6, 1);
	a.uar_page = e.uar.page_id + 1;
	assert_int_equal(cq_make(&e, &a, &cq2, &cqn2), -EREMOTEIO);
	expect_devx(&e.dev, 0x05, DVX_SIM_SYND_BAD_UAR);
	cq_attr(&e, &a, 6, 1);
	a.cq_umem_id = e.umem.id + 1;
	assert_int_equal(cq_make(&e, &a, &cq2, &cqn2), -EREMOTEIO);
	expect_devx(&e.dev, 0x05, DVX_SIM_SYND_BAD_UMEM);
	cq_attr(&e, &a, 6, 1);
	a.dbr_umem_id = 0;
	assert_int_equal(cq_make(&e, &a, &cq2, &cqn2), -EREMOTEIO);
	expect_devx(&e.dev, 0x05, DVX_SIM_SYND_BAD_UMEM);
	cq_attr(&e, &a, 6, 1);
	a.eqn = 3;
	assert_int_equal(cq_make(&e, &a, &cq2, &cqn2), -EREMOTEIO);
	expect_devx(&e.dev, 0x05, DVX_SIM_SYND_BAD_EQ);
	cq_attr(&e, &a, 6, 1);
	a.cq_umem_offset = MEM_LEN - 2048;		/* 4 KiB ring past the end */
	assert_int_equal(cq_make(&e, &a, &cq2, &cqn2), -EREMOTEIO);
	expect_devx(&e.dev, 0x03, DVX_SIM_SYND_UMEM_RANGE);
	cq_attr(&e, &a, 6, 1);
	a.dbr_offset = MEM_LEN;				/* DBR past the end */
	assert_int_equal(cq_make(&e, &a, &cq2, &cqn2), -EREMOTEIO);
	expect_devx(&e.dev, 0x03, DVX_SIM_SYND_UMEM_RANGE);
	cq_attr(&e, &a, 6, 1);				/* misaligned (the encoder refuses it) */
	assert_int_equal(cq_make_patched(&e, &a, 80 + 4, 31, 0, CQ_OFF(1) + 32), -EREMOTEIO);
	expect_devx(&e.dev, 0x03, DVX_SIM_SYND_ALIGN);
	assert_int_equal(cq_make_patched(&e, &a, 72 + 4, 31, 0, DBR_OFF(33) + 4), -EREMOTEIO);
	expect_devx(&e.dev, 0x03, DVX_SIM_SYND_ALIGN);
	assert_int_equal(cq_make_patched(&e, &a, AT_CQC(DVX_MLX5_CQC_CQE_SZ), 1), -EREMOTEIO);
	expect_devx(&e.dev, 0x03, DVX_SIM_SYND_NOT_MODELLED);
	assert_int_equal(cq_make_patched(&e, &a, AT_CQC(DVX_MLX5_CQC_CQE_COMP_EN), 1), -EREMOTEIO);
	expect_devx(&e.dev, 0x03, DVX_SIM_SYND_NO_CAP);
	{	/* a short mailbox */
		uint8_t cin[DVX_MLX5_CREATE_CQ_IN_BYTES], cout[16];

		assert_int_equal(dvx_mlx5_create_cq_in(cin, &a), 0);
		memset(&cq2, 0, sizeof(cq2));
		assert_int_equal(dvx_hal_obj_create(&e.dev, cin, 100, cout, sizeof(cout), &cq2),
				 -EREMOTEIO);
		expect_devx(&e.dev, 0x50, DVX_SIM_SYND_INLEN);
	}

	assert_int_equal(dvx_hal_obj_destroy(&e.dev, &cq), 0);
	assert_null(cq.priv);
	assert_int_equal(dvx_hal_obj_destroy(&e.dev, &cq), -EINVAL);
	env_close(&e);

	/* a NIC without overrun-ignore and with room for two CQs of at most 64 CQEs */
	env_open(&e, "sim_1", DVX_UAR_NC_DEDICATED);
	cq_attr(&e, &a, 6, 0);
	a.oi = 1;
	assert_int_equal(cq_make(&e, &a, &cq, &cqn), -EREMOTEIO);
	expect_devx(&e.dev, 0x03, DVX_SIM_SYND_NO_CAP);
	cq_attr(&e, &a, 7, 0);
	assert_int_equal(cq_make(&e, &a, &cq, &cqn), -EREMOTEIO);
	expect_devx(&e.dev, 0x03, DVX_SIM_SYND_LOG_SIZE);
	cq_attr(&e, &a, 6, 0);
	assert_int_equal(cq_make(&e, &a, &cq, &cqn), 0);
	cq_attr(&e, &a, 0, 1);			/* one CQE: legal */
	assert_int_equal(cq_make(&e, &a, &cq2, &cqn2), 0);
	assert_int_not_equal(cqn, cqn2);
	{
		struct dvx_hal_obj cq3;
		uint32_t cqn3;

		cq_attr(&e, &a, 0, 2);
		assert_int_equal(cq_make(&e, &a, &cq3, &cqn3), -EREMOTEIO);
		expect_devx(&e.dev, 0x08, DVX_SIM_SYND_LIMIT);
	}
	assert_int_equal(dvx_hal_obj_destroy(&e.dev, &cq2), 0);
	assert_int_equal(dvx_hal_obj_destroy(&e.dev, &cq), 0);
	env_close(&e);
	live_zero();
}

/* ---- queues in umems: pages and page offsets (prm 1.5.1) ------------------------- */

/* a umem of @len over @mem (host, @fd < 0) or dma-buf @fd at @off, pages @bitmap */
static void umem_over(struct env *e, void *mem, int fd, uint64_t off, uint64_t len,
		      uint64_t bitmap, struct dvx_hal_umem *um)
{
	struct dvx_hal_umem_req ur;

	memset(&ur, 0, sizeof(ur));
	ur.addr = fd < 0 ? mem : NULL;
	ur.len = len;
	ur.access = DVX_ACCESS_LOCAL_WRITE;
	ur.dmabuf_fd = fd;
	ur.dmabuf_offset = off;
	ur.pgsz_bitmap = bitmap;
	assert_int_equal(dvx_hal_umem_reg(&e->dev, &ur, um), 0);
}

/* the answer to a create: 0 (the object made is destroyed again) or the syndrome of
 * the BAD_PARAM refusal */
static uint32_t made(struct env *e, int rc, struct dvx_hal_obj *obj)
{
	if (rc) {
		assert_int_equal(rc, -EREMOTEIO);
		assert_int_equal(e->dev.diag.status, 0x03);
		return e->dev.diag.syndrome;
	}
	assert_int_equal(dvx_hal_obj_destroy(&e->dev, obj), 0);
	return 0;
}

/* a one-CQE CQ whose ring is at @ring in @um (its record in the env's umem) */
static uint32_t cq_at(struct env *e, const struct dvx_hal_umem *um, uint64_t ring)
{
	struct dvx_mlx5_cq_cfg a;
	struct dvx_hal_obj cq;
	uint32_t cqn;

	cq_attr(e, &a, 0, 7);
	a.cq_umem_id = um->id;
	a.cq_umem_offset = ring;
	return made(e, cq_make(e, &a, &cq, &cqn), &cq);
}

/* a QP of 64 WQEBBs whose work queue starts at @wq in @um */
static uint32_t qp_at(struct env *e, const struct dvx_hal_umem *um, uint32_t cqn, uint64_t wq)
{
	struct dvx_mlx5_qp_cfg a;
	struct dvx_hal_obj qp;
	uint32_t qpn;

	qp_attr(e, &a, cqn, 7);
	a.wq_umem_id = um->id;
	a.wq_umem_offset = wq;
	return made(e, qp_make(e, &a, &qp, &qpn), &qp);
}

#define HUGE (2u << 20)

static void test_umem_pages(void **state)
{
	struct dvx_mlx5_cq_cfg ca;
	struct dvx_mlx5_qp_cfg qa;
	struct dvx_hal_umem um;
	struct dvx_hal_obj cq;
	uint8_t *mem;
	uint32_t cqn;
	struct env e;
	int fd;

	(void)state;
	assert_int_equal(add_default(0), 0);
	env_open(&e, "sim_0", DVX_UAR_NC_DEDICATED);
	cq_attr(&e, &ca, 6, 0);
	assert_int_equal(cq_make(&e, &ca, &cq, &cqn), 0);
	mem = aligned_alloc(HUGE, 2 * HUGE);
	assert_non_null(mem);

	/* host memory in 4 KiB pages (dvx's default bitmap): every 64 B offset works
	 * (one 32 B off is refused as misaligned: test_cq) */
	umem_over(&e, mem, -1, 0, 2 * HUGE, 4096, &um);
	assert_int_equal(cq_at(&e, &um, 64), 0);
	assert_int_equal(cq_at(&e, &um, 4032), 0);
	assert_int_equal(cq_at(&e, &um, 4096 + 64), 0);
	assert_int_equal(cq_at(&e, &um, HUGE + 4096 * 7 + 128), 0);
	assert_int_equal(qp_at(&e, &um, cqn, 4096 * 3 + 64), 0);
	assert_int_equal(dvx_hal_umem_dereg(&e.dev, &um), 0);

	/* huge pages: with 2 MiB allowed, a 2 MiB aligned umem of whole 2 MiB pages gets
	 * them, and a ring must start within the first 4 KiB of a page (6-bit
	 * page_offset in 64 B units) */
	umem_over(&e, mem, -1, 0, 2 * HUGE, HUGE | 4096, &um);
	assert_int_equal(cq_at(&e, &um, 0), 0);
	assert_int_equal(cq_at(&e, &um, 4032), 0);
	assert_int_equal(cq_at(&e, &um, 4096), DVX_SIM_SYND_PAGE_OFFSET);
	assert_int_equal(cq_at(&e, &um, HUGE - 64), DVX_SIM_SYND_PAGE_OFFSET);
	assert_int_equal(cq_at(&e, &um, HUGE), 0);
	assert_int_equal(cq_at(&e, &um, HUGE + 8192), DVX_SIM_SYND_PAGE_OFFSET);
	assert_int_equal(qp_at(&e, &um, cqn, 8192), DVX_SIM_SYND_PAGE_OFFSET);
	assert_int_equal(qp_at(&e, &um, cqn, HUGE + 64), 0);
	assert_int_equal(dvx_hal_umem_dereg(&e.dev, &um), 0);

	/* ... but not when its length or its start is not in whole huge pages: the kernel
	 * halves the page down to the CPU's, and every 64 B offset works again */
	umem_over(&e, mem, -1, 0, 2 * HUGE - 4096, HUGE | 4096, &um);
	assert_int_equal(cq_at(&e, &um, 4096), 0);
	assert_int_equal(dvx_hal_umem_dereg(&e.dev, &um), 0);
	umem_over(&e, mem + 4096, -1, 0, HUGE, ~0xfffull, &um);
	assert_int_equal(cq_at(&e, &um, 8192), 0);
	assert_int_equal(dvx_hal_umem_dereg(&e.dev, &um), 0);

	/* rdma-core's plain registration allows every page size: a 64 KiB aligned
	 * 64 KiB umem is one 64 KiB page ("no umem_offset != 0" is the kernel's rule
	 * for such umems) */
	umem_over(&e, mem, -1, 0, 65536, 0, &um);
	assert_int_equal(cq_at(&e, &um, 64), 0);
	assert_int_equal(cq_at(&e, &um, 4096), DVX_SIM_SYND_PAGE_OFFSET);
	assert_int_equal(dvx_hal_umem_dereg(&e.dev, &um), 0);

	/* GPU memory through a dma-buf, pages of 64 KiB and up allowed (NVSHMEM allows
	 * every size from the CPU page): at dma-buf offset 64 KiB the umem gets 64 KiB
	 * pages */
	assert_int_equal(dvx_sim_dmabuf_export(fab, mem, 2 * HUGE, &fd), 0);
	umem_over(&e, NULL, fd, 65536, 4 * 65536, ~0xffffull, &um);
	assert_int_equal(cq_at(&e, &um, 64), 0);
	assert_int_equal(cq_at(&e, &um, 8192), DVX_SIM_SYND_PAGE_OFFSET);
	assert_int_equal(cq_at(&e, &um, 65536 + 128), 0);
	assert_int_equal(qp_at(&e, &um, cqn, 3 * 65536), 0);
	assert_int_equal(qp_at(&e, &um, cqn, 3 * 65536 + 4096), DVX_SIM_SYND_PAGE_OFFSET);
	assert_int_equal(dvx_hal_umem_dereg(&e.dev, &um), 0);
	/* the same GPU memory in 4 KiB pages (UCX's bitmap): any 64 B offset */
	umem_over(&e, NULL, fd, 65536, 4 * 65536, (64u << 6) * 2 - 1, &um);
	assert_int_equal(cq_at(&e, &um, 8192), 0);
	assert_int_equal(dvx_hal_umem_dereg(&e.dev, &um), 0);
	assert_int_equal(dvx_sim_dmabuf_release(fab, fd), 0);

	/* the contexts' own page fields: with the ring in a umem the firmware takes the
	 * page size from the umem, so log_page_size is not read (NVSHMEM's 4 and DPDK's
	 * log2(page) - 12 are accepted, as hardware accepts them); a page_offset is
	 * refused */
	cq_attr(&e, &ca, 0, 1);
	ca.log_page_size = 4;
	{
		struct dvx_hal_obj cq2;
		uint32_t cqn2;

		assert_int_equal(cq_make(&e, &ca, &cq2, &cqn2), 0);
		assert_int_equal(dvx_hal_obj_destroy(&e.dev, &cq2), 0);
	}
	cq_attr(&e, &ca, 0, 1);
	assert_int_equal(cq_make_patched(&e, &ca, AT_CQC(DVX_MLX5_CQC_PAGE_OFFSET), 1), -EREMOTEIO);
	expect_devx(&e.dev, 0x03, DVX_SIM_SYND_FIELD);
	qp_attr(&e, &qa, cqn, 0);
	{
		uint8_t in[DVX_MLX5_CREATE_QP_IN_BYTES], out[DVX_MLX5_CREATE_QP_OUT_BYTES];
		struct dvx_hal_obj qp;

		assert_int_equal(dvx_mlx5_create_qp_in(in, &qa), 0);
		dvx_mlx5_set(DVX_MLX5_QPC_IN(in), DVX_MLX5_QPC_LOG_PAGE_SIZE, 4);
		memset(&qp, 0, sizeof(qp));
		assert_int_equal(dvx_hal_obj_create(&e.dev, in, sizeof(in), out, sizeof(out),
						    &qp), 0);
		assert_int_equal(dvx_hal_obj_destroy(&e.dev, &qp), 0);
	}
	assert_int_equal(qp_make_patched(&e, &qa, AT_QPC(DVX_MLX5_QPC_PAGE_OFFSET), 1), -EREMOTEIO);
	expect_devx(&e.dev, 0x03, DVX_SIM_SYND_FIELD);

	assert_int_equal(dvx_hal_obj_destroy(&e.dev, &cq), 0);
	free(mem);
	env_close(&e);
}

/* ---- QPs: transitions ----------------------------------------------------------------- */

static void test_qp_transitions(void **state)
{
	struct dvx_mlx5_init2rtr_cfg ra;
	struct dvx_mlx5_qp_cfg qa;
	struct dvx_mlx5_cq_cfg ca;
	struct dvx_mlx5_qp_query q;
	struct dvx_hal_obj cq, qp;
	struct dvx_sim_nic_cfg nc;
	uint32_t cqn, qpn;
	struct env e;

	(void)state;
	assert_int_equal(add_default(0), 0);
	dvx_sim_nic_cfg_default(&nc, 0);
	env_open(&e, "sim_0", DVX_UAR_NC_DEDICATED);
	cq_attr(&e, &ca, 6, 0);
	assert_int_equal(cq_make(&e, &ca, &cq, &cqn), 0);
	qp_attr(&e, &qa, cqn, 0);
	assert_int_equal(qp_make(&e, &qa, &qp, &qpn), 0);
	assert_int_equal(qp.cmd_opcode, 0x500);

	qp_query(&e, &qp, &q);
	assert_int_equal(q.state, DVX_MLX5_QP_STATE_RST);
	assert_int_equal(q.pdn, e.pd.pdn);
	assert_int_equal(q.uar_page, e.uar.page_id);
	assert_int_equal(q.user_index, 0x100);
	assert_int_equal(q.cqn_snd, cqn);
	assert_int_equal(q.log_sq_size, 6);
	assert_int_equal(q.rq_type, DVX_MLX5_RQ_TYPE_ZERO);

	/* from RST only RST2INIT (and 2ERR/2RST) */
	roce_rtr_attr(&ra, qpn, nc.port[0].gid, nc.port[0].mac);
	assert_int_equal(init2rtr(&e, &qp, &ra), -EREMOTEIO);
	expect_devx(&e.dev, 0x10, DVX_SIM_SYND_QP_STATE);
	assert_int_equal(e.dev.diag.cmd_opcode, 0x503);
	assert_int_equal(rtr2rts(&e, &qp, 4), -EREMOTEIO);
	expect_devx(&e.dev, 0x10, DVX_SIM_SYND_QP_STATE);
	assert_int_equal(rts2rts(&e, &qp, 0, 0), -EREMOTEIO);
	expect_devx(&e.dev, 0x10, DVX_SIM_SYND_QP_STATE);
	assert_int_equal(qp_state(&e, &qp), DVX_MLX5_QP_STATE_RST);

	/* RST -> INIT; then INIT refuses RST2INIT and RTR2RTS */
	assert_int_equal(rst2init(&e, &qp, 1, DVX_MLX5_ATOMIC_MODE_UP_TO_8B), 0);
	assert_int_equal(qp_state(&e, &qp), DVX_MLX5_QP_STATE_INIT);
	assert_int_equal(rst2init(&e, &qp, 1, 3), -EREMOTEIO);
	expect_devx(&e.dev, 0x10, DVX_SIM_SYND_QP_STATE);
	assert_int_equal(rtr2rts(&e, &qp, 4), -EREMOTEIO);
	expect_devx(&e.dev, 0x10, DVX_SIM_SYND_QP_STATE);

	/* INIT -> RTR over RoCE to itself; RTR refuses INIT2RTR and RST2INIT */
	assert_int_equal(init2rtr(&e, &qp, &ra), 0);
	assert_int_equal(qp_state(&e, &qp), DVX_MLX5_QP_STATE_RTR);
	assert_int_equal(init2rtr(&e, &qp, &ra), -EREMOTEIO);
	expect_devx(&e.dev, 0x10, DVX_SIM_SYND_QP_STATE);
	assert_int_equal(rst2init(&e, &qp, 1, 3), -EREMOTEIO);

	/* RTR -> RTS; RTS refuses RTR2RTS, takes RTS2RTS */
	assert_int_equal(rtr2rts(&e, &qp, 4), 0);
	qp_query(&e, &qp, &q);
	assert_int_equal(q.state, DVX_MLX5_QP_STATE_RTS);
	assert_int_equal(q.remote_qpn, qpn);
	assert_int_equal(q.mtu, DVX_MLX5_MTU_4096);
	assert_int_equal(q.retry_count, 7);
	assert_int_equal(q.rnr_retry, 7);
	assert_int_equal(q.ack_timeout, 20);
	assert_int_equal(q.vhca_port_num, 1);
	assert_int_equal(rtr2rts(&e, &qp, 4), -EREMOTEIO);
	expect_devx(&e.dev, 0x10, DVX_SIM_SYND_QP_STATE);
	assert_int_equal(rts2rts(&e, &qp, DVX_MLX5_QP_OPTPAR_RETRY_COUNT, 3), 0);
	qp_query(&e, &qp, &q);
	assert_int_equal(q.retry_count, 3);
	assert_int_equal(q.state, DVX_MLX5_QP_STATE_RTS);
	assert_int_equal(rts2rts(&e, &qp, DVX_MLX5_QP_OPTPAR_PRIMARY_ADDR_PATH, 0), -EREMOTEIO);
	expect_devx(&e.dev, 0x03, DVX_SIM_SYND_FIELD);

	/* 2ERR from RTS, ERR refuses RST2INIT, 2RST, then all the way again */
	assert_int_equal(to_err(&e, &qp), 0);
	assert_int_equal(qp_state(&e, &qp), DVX_MLX5_QP_STATE_ERR);
	assert_int_equal(rst2init(&e, &qp, 1, 3), -EREMOTEIO);
	expect_devx(&e.dev, 0x10, DVX_SIM_SYND_QP_STATE);
	assert_int_equal(to_rst(&e, &qp), 0);
	assert_int_equal(qp_state(&e, &qp), DVX_MLX5_QP_STATE_RST);
	qp_loop_rts(&e, &qp);
	/* 2ERR and 2RST from any state, RST and INIT included */
	assert_int_equal(to_rst(&e, &qp), 0);
	assert_int_equal(to_err(&e, &qp), 0);
	assert_int_equal(to_rst(&e, &qp), 0);
	assert_int_equal(rst2init(&e, &qp, 1, 3), 0);
	assert_int_equal(to_err(&e, &qp), 0);
	assert_int_equal(to_rst(&e, &qp), 0);

	/* a modify naming another QP, or a short mailbox */
	{
		uint8_t in[DVX_MLX5_MODIFY_QP_IN_BYTES];
		struct dvx_mlx5_rst2init_cfg ia = { .vhca_port_num = 1 };

		assert_int_equal(dvx_mlx5_rst2init_qp_in(in, qpn ^ 1, &ia), 0);
		assert_int_equal(modify(&e, &qp, in, sizeof(in)), -EINVAL);
		assert_int_equal(dvx_mlx5_rst2init_qp_in(in, qpn, &ia), 0);
		assert_int_equal(modify(&e, &qp, in, 64), -EREMOTEIO);
		expect_devx(&e.dev, 0x50, DVX_SIM_SYND_INLEN);
	}

	/* the CQ cannot go while the QP uses it; the umem neither */
	assert_int_equal(dvx_hal_obj_destroy(&e.dev, &cq), -EREMOTEIO);
	expect_devx(&e.dev, 0x09, DVX_SIM_SYND_CQ_IN_USE);
	assert_int_equal(e.dev.diag.cmd_opcode, 0x401);
	assert_non_null(cq.priv);
	assert_int_equal(dvx_hal_umem_dereg(&e.dev, &e.umem), -EBUSY);
	assert_int_equal(dvx_hal_obj_destroy(&e.dev, &qp), 0);
	/* a destroyed QP's handle is refused */
	assert_int_equal(to_err(&e, &qp), -EINVAL);
	assert_int_equal(dvx_hal_obj_destroy(&e.dev, &cq), 0);
	env_close(&e);
	live_zero();
}

/* ---- QPs: refusals --------------------------------------------------------------------- */

/*
 * qpc.ts_format against the device's timestamp formats (ts_cap reported as
 * sq_ts_format, rq_ts_format and the RoCE page's qp_ts_format): FREE_RUNNING is refused
 * by a real-time-only device, REAL_TIME by a free-running-only one, DEFAULT by neither.
 */
static void test_ts_format(void **state)
{
	static const int ok[3][3] = {
		/* ts_format:  FREE_RUNNING  DEFAULT  REAL_TIME */
		/* cap 0 */ { 1, 1, 0 },
		/* cap 1 */ { 0, 1, 1 },
		/* cap 2 */ { 1, 1, 1 },
	};
	uint8_t in[DVX_MLX5_QUERY_HCA_CAP_IN_BYTES], out[DVX_MLX5_QUERY_HCA_CAP_OUT_BYTES];
	struct dvx_mlx5_qp_cfg qa;
	struct dvx_mlx5_cq_cfg ca;
	struct dvx_mlx5_caps caps;
	struct dvx_sim_nic_cfg nc;
	struct dvx_hal_obj cq, qp;
	uint32_t cqn, qpn;
	unsigned cap, ts;
	struct env e;
	char name[16];

	(void)state;
	for (cap = 0; cap < 3; cap++) {
		dvx_sim_nic_cfg_default(&nc, cap);
		nc.ts_cap = (uint8_t)cap;
		assert_int_equal(dvx_sim_add_nic(fab, &nc), (int)cap);
		snprintf(name, sizeof(name), "sim_%u", cap);
		env_open(&e, name, DVX_UAR_NC_DEDICATED);
		/* the caps say it */
		memset(&caps, 0, sizeof(caps));
		dvx_mlx5_query_hca_cap_in(in, DVX_MLX5_CAP_TYPE_GENERAL, 1);
		assert_int_equal(dvx_hal_devx_cmd(&e.dev, in, sizeof(in), out, sizeof(out)), 0);
		assert_int_equal(dvx_mlx5_caps_parse(&caps, DVX_MLX5_CAP_TYPE_GENERAL, out,
						     sizeof(out)), 0);
		dvx_mlx5_query_hca_cap_in(in, DVX_MLX5_CAP_TYPE_ROCE, 1);
		assert_int_equal(dvx_hal_devx_cmd(&e.dev, in, sizeof(in), out, sizeof(out)), 0);
		assert_int_equal(dvx_mlx5_caps_parse(&caps, DVX_MLX5_CAP_TYPE_ROCE, out,
						     sizeof(out)), 0);
		assert_int_equal(caps.sq_ts_format, cap);
		assert_int_equal(caps.rq_ts_format, cap);
		assert_int_equal(caps.qp_ts_format, cap);
		/* byte-exact, read without the parser: page byte 136's top bits, RoCE byte 3 */
		assert_int_equal(out[16 + 3] & 3, cap);
		cq_attr(&e, &ca, 6, 0);
		assert_int_equal(cq_make(&e, &ca, &cq, &cqn), 0);
		for (ts = 0; ts < 3; ts++) {
			qp_attr(&e, &qa, cqn, 0);
			qa.ts_format = (uint8_t)ts;
			if (ok[cap][ts]) {
				assert_int_equal(qp_make(&e, &qa, &qp, &qpn), 0);
				assert_int_equal(dvx_hal_obj_destroy(&e.dev, &qp), 0);
			} else {
				assert_int_equal(qp_make(&e, &qa, &qp, &qpn), -EREMOTEIO);
				expect_devx(&e.dev, 0x03, DVX_SIM_SYND_NO_CAP);
			}
		}
		assert_int_equal(dvx_hal_obj_destroy(&e.dev, &cq), 0);
		env_close(&e);
	}
	/* a ts_cap the model does not know is refused at configuration */
	dvx_sim_nic_cfg_default(&nc, 3);
	nc.ts_cap = 3;
	assert_int_equal(dvx_sim_add_nic(fab, &nc), -EINVAL);
}

static void test_qp_refusals(void **state)
{
	struct dvx_mlx5_init2rtr_cfg ra;
	struct dvx_mlx5_qp_cfg qa;
	struct dvx_mlx5_cq_cfg ca;
	struct dvx_hal_obj cq, qp;
	struct dvx_sim_nic_cfg nc;
	uint32_t cqn, qpn;
	struct env e;

	(void)state;
	assert_int_equal(add_default(0), 0);
	dvx_sim_nic_cfg_default(&nc, 1);
	nc.cd = 0;
	nc.atomic = 0;
	nc.force_loopback = 0;
	nc.log_max_qp_sz = 4;
	nc.log_max_qp = 1;
	nc.log_max_ra_req_qp = 0;
	nc.log_max_ra_res_qp = 0;
	nc.log_max_msg = 20;
	assert_int_equal(dvx_sim_add_nic(fab, &nc), 1);

	env_open(&e, "sim_0", DVX_UAR_NC_DEDICATED);
	cq_attr(&e, &ca, 6, 0);
	assert_int_equal(cq_make(&e, &ca, &cq, &cqn), 0);

	qp_attr(&e, &qa, cqn, 0);
	qa.pdn = e.pd.pdn + 1;
	assert_int_equal(qp_make(&e, &qa, &qp, &qpn), -EREMOTEIO);
	expect_devx(&e.dev, 0x05, DVX_SIM_SYND_BAD_PD);
	assert_int_equal(e.dev.diag.cmd_opcode, 0x500);
	qp_attr(&e, &qa, cqn, 0);
	qa.uar_page = 0;
	assert_int_equal(qp_make(&e, &qa, &qp, &qpn), -EREMOTEIO);
	expect_devx(&e.dev, 0x05, DVX_SIM_SYND_BAD_UAR);
	qp_attr(&e, &qa, cqn + 1, 0);
	assert_int_equal(qp_make(&e, &qa, &qp, &qpn), -EREMOTEIO);
	expect_devx(&e.dev, 0x05, DVX_SIM_SYND_BAD_CQ);
	qp_attr(&e, &qa, cqn, 0);
	qa.wq_umem_id = 12345;
	assert_int_equal(qp_make(&e, &qa, &qp, &qpn), -EREMOTEIO);
	expect_devx(&e.dev, 0x05, DVX_SIM_SYND_BAD_UMEM);
	qp_attr(&e, &qa, cqn, 0);
	qa.log_sq_size = 10;				/* 64 KiB ring at 32 KiB */
	assert_int_equal(qp_make(&e, &qa, &qp, &qpn), -EREMOTEIO);
	expect_devx(&e.dev, 0x03, DVX_SIM_SYND_UMEM_RANGE);
	qp_attr(&e, &qa, cqn, 0);			/* DBR at 65532: not 8-aligned */
	assert_int_equal(qp_make_patched(&e, &qa, 184 + 4, 31, 0, MEM_LEN - 4), -EREMOTEIO);
	expect_devx(&e.dev, 0x03, DVX_SIM_SYND_ALIGN);
	qp_attr(&e, &qa, cqn, 0);
	assert_int_equal(qp_make_patched(&e, &qa, 256 + 4, 31, 0, WQ_OFF(0) + 16), -EREMOTEIO);
	expect_devx(&e.dev, 0x03, DVX_SIM_SYND_ALIGN);
	assert_int_equal(qp_make_patched(&e, &qa, AT_QPC(DVX_MLX5_QPC_ST), DVX_MLX5_QP_ST_DCI),
			 -EREMOTEIO);
	expect_devx(&e.dev, 0x03, DVX_SIM_SYND_NOT_MODELLED);
	assert_int_equal(qp_make_patched(&e, &qa, AT_QPC(DVX_MLX5_QPC_SEND_DBR_MODE), 1), -EREMOTEIO);
	expect_devx(&e.dev, 0x03, DVX_SIM_SYND_NO_CAP);
	assert_int_equal(qp_make_patched(&e, &qa, AT_QPC(DVX_MLX5_QPC_LOG_MSG_MAX), 31), -EREMOTEIO);
	expect_devx(&e.dev, 0x03, DVX_SIM_SYND_LOG_SIZE);
	qp_attr(&e, &qa, cqn, 0);
	qa.rq_type = DVX_MLX5_RQ_TYPE_SRQ;
	qa.srqn = 5;
	assert_int_equal(qp_make(&e, &qa, &qp, &qpn), -EREMOTEIO);
	expect_devx(&e.dev, 0x05, DVX_SIM_SYND_NOT_MODELLED);
	qp_attr(&e, &qa, cqn, 0);
	qa.rq_type = DVX_MLX5_RQ_TYPE_REGULAR;		/* RQ 16 x 64 B + SQ 4 KiB */
	qa.log_rq_size = 4;
	qa.log_rq_stride = 2;
	qa.cqn_rcv = cqn + 1;
	assert_int_equal(qp_make(&e, &qa, &qp, &qpn), -EREMOTEIO);
	expect_devx(&e.dev, 0x05, DVX_SIM_SYND_BAD_CQ);
	qa.cqn_rcv = cqn;
	qa.log_rq_stride = 6;				/* 1 KiB receive WQEs > max_wqe_sz_rq */
	assert_int_equal(qp_make(&e, &qa, &qp, &qpn), -EREMOTEIO);
	expect_devx(&e.dev, 0x03, DVX_SIM_SYND_LOG_SIZE);
	qa.log_rq_stride = 2;
	assert_int_equal(qp_make(&e, &qa, &qp, &qpn), 0);	/* a regular RQ is fine */
	assert_int_equal(dvx_hal_obj_destroy(&e.dev, &qp), 0);

	/* modify refusals on the CX7-like NIC */
	qp_attr(&e, &qa, cqn, 0);
	assert_int_equal(qp_make(&e, &qa, &qp, &qpn), 0);
	assert_int_equal(rst2init(&e, &qp, 2, 3), -EREMOTEIO);	/* port 2 of a 1-port NIC */
	expect_devx(&e.dev, 0x03, DVX_SIM_SYND_PORT);
	assert_int_equal(rst2init(&e, &qp, 1, DVX_MLX5_ATOMIC_MODE_UP_TO_256B), -EREMOTEIO);
	expect_devx(&e.dev, 0x03, DVX_SIM_SYND_FIELD);
	assert_int_equal(qp_state(&e, &qp), DVX_MLX5_QP_STATE_RST);
	assert_int_equal(rst2init(&e, &qp, 1, 3), 0);
	dvx_sim_nic_cfg_default(&nc, 0);
	roce_rtr_attr(&ra, qpn, nc.port[0].gid, nc.port[0].mac);
	ra.path.src_addr_index = DVX_SIM_ROCE_GID_TBL_LEN;
	assert_int_equal(init2rtr(&e, &qp, &ra), -EREMOTEIO);
	expect_devx(&e.dev, 0x03, DVX_SIM_SYND_PORT);
	roce_rtr_attr(&ra, qpn, nc.port[0].gid, nc.port[0].mac);
	ra.log_rra_max = 5;
	assert_int_equal(init2rtr(&e, &qp, &ra), -EREMOTEIO);
	expect_devx(&e.dev, 0x03, DVX_SIM_SYND_LOG_SIZE);
	{	/* mtu 0 (the encoder refuses it: patch the mailbox) */
		uint8_t in[DVX_MLX5_MODIFY_QP_IN_BYTES];

		roce_rtr_attr(&ra, qpn, nc.port[0].gid, nc.port[0].mac);
		assert_int_equal(dvx_mlx5_init2rtr_qp_in(in, qpn, &ra), 0);
		dvx_mlx5_set(DVX_MLX5_QPC_IN(in), DVX_MLX5_QPC_MTU, 0);
		assert_int_equal(modify(&e, &qp, in, sizeof(in)), -EREMOTEIO);
		expect_devx(&e.dev, 0x03, DVX_SIM_SYND_FIELD);
	}
	assert_int_equal(qp_state(&e, &qp), DVX_MLX5_QP_STATE_INIT);
	assert_int_equal(dvx_hal_obj_destroy(&e.dev, &qp), 0);
	assert_int_equal(dvx_hal_obj_destroy(&e.dev, &cq), 0);
	env_close(&e);

	/* the NIC without cd, atomics, force-loopback, with small sizes and two QPs */
	env_open(&e, "sim_1", DVX_UAR_NC_DEDICATED);
	cq_attr(&e, &ca, 6, 0);
	assert_int_equal(cq_make(&e, &ca, &cq, &cqn), 0);
	qp_attr(&e, &qa, cqn, 0);
	qa.log_sq_size = 5;
	assert_int_equal(qp_make(&e, &qa, &qp, &qpn), -EREMOTEIO);
	expect_devx(&e.dev, 0x03, DVX_SIM_SYND_LOG_SIZE);
	qp_attr(&e, &qa, cqn, 0);
	qa.log_sq_size = 4;
	qa.log_msg_max = 20;
	qa.cd_master = 1;
	assert_int_equal(qp_make(&e, &qa, &qp, &qpn), -EREMOTEIO);
	expect_devx(&e.dev, 0x03, DVX_SIM_SYND_NO_CAP);
	qa.cd_master = 0;
	qa.cd_slave_send = 1;
	assert_int_equal(qp_make(&e, &qa, &qp, &qpn), -EREMOTEIO);
	expect_devx(&e.dev, 0x03, DVX_SIM_SYND_NO_CAP);
	qa.cd_slave_send = 0;
	assert_int_equal(qp_make(&e, &qa, &qp, &qpn), 0);
	{
		struct dvx_hal_obj qp2, qp3;
		uint32_t qpn2, qpn3;

		qa.wq_umem_offset = WQ_OFF(1);
		qa.dbr_offset = DBR_OFF(1);
		assert_int_equal(qp_make(&e, &qa, &qp2, &qpn2), 0);
		qa.wq_umem_offset = WQ_OFF(2);
		qa.dbr_offset = DBR_OFF(2);
		assert_int_equal(qp_make(&e, &qa, &qp3, &qpn3), -EREMOTEIO);	/* log_max_qp 1 */
		expect_devx(&e.dev, 0x08, DVX_SIM_SYND_LIMIT);
		assert_int_equal(dvx_hal_obj_destroy(&e.dev, &qp2), 0);
	}
	assert_int_equal(rst2init(&e, &qp, 1, 3), -EREMOTEIO);		/* no atomics */
	expect_devx(&e.dev, 0x03, DVX_SIM_SYND_NO_CAP);
	assert_int_equal(rst2init(&e, &qp, 1, 0), 0);
	assert_int_equal(init2rtr_loop(&e, &qp), -EREMOTEIO);		/* no force-loopback */
	expect_devx(&e.dev, 0x03, DVX_SIM_SYND_NO_CAP);
	dvx_sim_nic_cfg_default(&nc, 1);
	roce_rtr_attr(&ra, qpn, nc.port[0].gid, nc.port[0].mac);
	ra.log_rra_max = 0;
	ra.log_msg_max = 20;
	assert_int_equal(init2rtr(&e, &qp, &ra), 0);
	assert_int_equal(rtr2rts(&e, &qp, 1), -EREMOTEIO);		/* log_max_ra_req_qp 0 */
	expect_devx(&e.dev, 0x03, DVX_SIM_SYND_LOG_SIZE);
	assert_int_equal(rtr2rts(&e, &qp, 0), 0);
	assert_int_equal(dvx_hal_obj_destroy(&e.dev, &qp), 0);
	assert_int_equal(dvx_hal_obj_destroy(&e.dev, &cq), 0);
	env_close(&e);
	live_zero();
}

/* ---- tables: umem, UAR, PD, MR, dma-buf, EQ, RoCE MAC, PCI ---------------------------- */

static void test_tables(void **state)
{
	struct dvx_hal_uar u1, u2, u3, u4;
	struct dvx_hal_umem_req ur;
	struct dvx_hal_mr_req mrq;
	struct dvx_hal_mr mr, mr0, mrd, bad;
	struct dvx_hal_pci_dev pci[4];
	struct dvx_hal_umem um;
	struct dvx_hal_nic dev1;
	struct dvx_sim_nic_cfg nc;
	struct dvx_sim_stats st;
	uint8_t buf[8192], mac[6];
	uint32_t eqn;
	unsigned n;
	int fd;
	struct env e;

	(void)state;
	assert_int_equal(add_default(0), 0);
	dvx_sim_nic_cfg_default(&nc, 1);
	nc.bf = 0;
	assert_int_equal(dvx_sim_add_nic(fab, &nc), 1);
	env_open(&e, "sim_0", DVX_UAR_NC_DEDICATED);

	/* UARs: the NC page is a singleton, dedicated and BF pages are not */
	assert_int_equal(dvx_hal_uar_alloc(&e.dev, DVX_UAR_NC_SHARED, &u1), 0);
	assert_int_equal(dvx_hal_uar_alloc(&e.dev, DVX_UAR_NC_SHARED, &u2), 0);
	assert_int_equal(u1.page_id, u2.page_id);
	assert_ptr_equal(u1.reg_addr, u2.reg_addr);
	assert_int_equal(dvx_hal_uar_alloc(&e.dev, DVX_UAR_BF, &u3), 0);
	assert_int_equal(u3.type, DVX_UAR_BF);
	assert_ptr_equal((uint8_t *)u3.reg_addr, (uint8_t *)u3.base_addr + DVX_SIM_UAR_REG_OFFSET);
	assert_int_equal((uintptr_t)u3.base_addr & 4095, 0);
	assert_int_not_equal(u3.page_id, u1.page_id);
	assert_int_not_equal(u3.page_id, e.uar.page_id);
	assert_int_equal(dvx_hal_uar_free(&e.dev, &u1), 0);
	assert_int_equal(dvx_hal_uar_alloc(&e.dev, DVX_UAR_NC_SHARED, &u4), 0);
	assert_int_equal(u4.page_id, u2.page_id);	/* still referenced by u2 */
	assert_int_equal(dvx_hal_uar_free(&e.dev, &u2), 0);
	assert_int_equal(dvx_hal_uar_free(&e.dev, &u4), 0);
	assert_int_equal(dvx_hal_uar_free(&e.dev, &u3), 0);
	assert_int_equal(dvx_hal_uar_free(&e.dev, &u3), -EINVAL);
	assert_int_equal(dvx_hal_nic_open(hal, "sim_1", &dev1), 0);
	assert_int_equal(dvx_hal_uar_alloc(&dev1, DVX_UAR_BF, &u1), -EOPNOTSUPP);

	/* EQs */
	assert_int_equal(dvx_hal_eqn_query(&e.dev, DVX_SIM_NUM_EQS - 1, &eqn), 0);
	assert_int_equal(eqn, DVX_SIM_EQN_BASE + DVX_SIM_NUM_EQS - 1);
	assert_int_equal(dvx_hal_eqn_query(&e.dev, DVX_SIM_NUM_EQS, &eqn), -EINVAL);

	/* umems: plain, bad page sizes, from a dma-buf */
	memset(&ur, 0, sizeof(ur));
	ur.addr = buf;
	ur.len = sizeof(buf);
	ur.access = DVX_ACCESS_LOCAL_WRITE;
	ur.dmabuf_fd = -1;
	ur.pgsz_bitmap = 0x800;				/* only 2 KiB pages */
	assert_int_equal(dvx_hal_umem_reg(&e.dev, &ur, &um), -EINVAL);
	ur.pgsz_bitmap = 4096;		/* access bits the kernel's DEVX umem refuses */
	ur.access = DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_ATOMIC;
	assert_int_equal(dvx_hal_umem_reg(&e.dev, &ur, &um), -EINVAL);
	ur.access = DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_RELAXED_ORDERING;
	assert_int_equal(dvx_hal_umem_reg(&e.dev, &ur, &um), -EINVAL);
	ur.access = DVX_ACCESS_REMOTE_WRITE;		/* remote write without local write */
	assert_int_equal(dvx_hal_umem_reg(&e.dev, &ur, &um), -EINVAL);
	ur.access = DVX_ACCESS_LOCAL_WRITE;
	ur.pgsz_bitmap = (64u << 6) * 2 - 1;		/* UCX's: up to 4 KiB */
	assert_int_equal(dvx_hal_umem_reg(&e.dev, &ur, &um), 0);
	assert_int_equal(um.via_dmabuf, 0);
	assert_int_equal(dvx_hal_umem_dereg(&e.dev, &um), 0);
	assert_int_equal(dvx_hal_umem_dereg(&e.dev, &um), -EINVAL);
	assert_int_equal(dvx_sim_dmabuf_export(fab, buf, sizeof(buf), &fd), 0);
	assert_true(fd >= DVX_SIM_DMABUF_FD_BASE);
	ur.pgsz_bitmap = 0;
	ur.addr = NULL;
	ur.dmabuf_fd = fd + 1;
	ur.len = 4096;
	assert_int_equal(dvx_hal_umem_reg(&e.dev, &ur, &um), -EBADF);
	ur.dmabuf_fd = fd;
	ur.dmabuf_offset = 4096;
	ur.len = 8192;					/* past the dma-buf */
	assert_int_equal(dvx_hal_umem_reg(&e.dev, &ur, &um), -EINVAL);
	ur.len = 4096;
	assert_int_equal(dvx_hal_umem_reg(&e.dev, &ur, &um), 0);
	assert_int_equal(um.via_dmabuf, 1);
	assert_int_equal(dvx_sim_dmabuf_release(fab, fd), -EBUSY);

	/* MRs: plain, iova 0, dma-buf, access rules, PD in use */
	memset(&mrq, 0, sizeof(mrq));
	mrq.addr = buf;
	mrq.len = 4096;
	mrq.iova = (uint64_t)(uintptr_t)buf;
	mrq.access = DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_WRITE | DVX_ACCESS_REMOTE_READ |
		     DVX_ACCESS_REMOTE_ATOMIC;
	mrq.dmabuf_fd = -1;
	assert_int_equal(dvx_hal_mr_reg(&e.dev, &e.pd, &mrq, &mr), 0);
	assert_int_not_equal(mr.lkey, 0);
	assert_int_equal(mr.lkey, mr.rkey);
	mrq.iova = 0;					/* the zero-based sink */
	assert_int_equal(dvx_hal_mr_reg(&e.dev, &e.pd, &mrq, &mr0), 0);
	assert_int_equal(mr0.iova, 0);
	assert_int_not_equal(mr0.lkey, mr.lkey);
	mrq.access = DVX_ACCESS_REMOTE_WRITE;		/* without LOCAL_WRITE */
	assert_int_equal(dvx_hal_mr_reg(&e.dev, &e.pd, &mrq, &bad), -EINVAL);
	mrq.access = DVX_ACCESS_LOCAL_WRITE;
	mrq.flags = DVX_MR_DATA_DIRECT;
	assert_int_equal(dvx_hal_mr_reg(&e.dev, &e.pd, &mrq, &bad), -EINVAL);
	mrq.flags = DVX_MR_DMABUF;
	mrq.addr = NULL;
	mrq.dmabuf_fd = fd;
	mrq.dmabuf_offset = 0;
	mrq.iova = 0x1000;
	assert_int_equal(dvx_hal_mr_reg(&e.dev, &e.pd, &mrq, &mrd), 0);
	assert_int_equal(mrd.via_dmabuf, 1);
	mrq.dmabuf_fd = 77;				/* a real-looking fd the sim never made */
	assert_int_equal(dvx_hal_mr_reg(&e.dev, &e.pd, &mrq, &bad), -EBADF);
	assert_int_equal(dvx_hal_mr_reg(&dev1, &e.pd, &mrq, &bad), -EINVAL);	/* other NIC's PD */
	assert_int_equal(dvx_hal_pd_free(&e.dev, &e.pd), -EBUSY);
	assert_int_equal(dvx_sim_get_stats(fab, &st), 0);
	assert_int_equal(st.live[DVX_SIM_LIVE_MR], 3);
	assert_int_equal(st.live[DVX_SIM_LIVE_DMABUF], 1);
	assert_int_equal(dvx_hal_mr_dereg(&e.dev, &mrd), 0);
	assert_int_equal(dvx_hal_umem_dereg(&e.dev, &um), 0);
	assert_int_equal(dvx_sim_dmabuf_release(fab, fd), 0);
	assert_int_equal(dvx_sim_dmabuf_release(fab, fd), -EBADF);
	/* RoCE MAC: the port that owns the GID answers with its MAC */
	assert_int_equal(dvx_hal_roce_rmac(&e.dev, &e.pd, 1, DVX_SIM_ROCE_GID_V2, nc.port[0].gid,
					   mac), 0);
	assert_memory_equal(mac, nc.port[0].mac, 6);
	{
		uint8_t none[16] = { 0x20, 0x01, 0x0d, 0xb8 };

		assert_int_equal(dvx_hal_roce_rmac(&e.dev, &e.pd, 1, 3, none, mac), -EHOSTUNREACH);
	}

	/* PCI list: the sim's NICs */
	assert_int_equal(dvx_hal_pci_list(hal, 0xffff00, 0x020000, pci, 4, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(pci[0].pci, "0000:50:00.0");
	assert_int_equal(pci[1].vendor_id, 0x15b3);

	/* host memory through the shared host code */
	{
		struct dvx_hal_mem m;

		assert_int_equal(dvx_hal_mem_alloc(hal, 4096, 0, -1, 0, &m), 0);
		assert_non_null(m.addr);
		assert_int_equal(dvx_hal_mem_free(hal, &m), 0);
	}

	assert_int_equal(dvx_hal_nic_close(&dev1), 0);
	/* mr and mr0 are still on the PD */
	assert_int_equal(dvx_hal_mr_dereg(&e.dev, &mr), 0);
	assert_int_equal(dvx_hal_mr_dereg(&e.dev, &mr0), 0);
	assert_int_equal(dvx_hal_mr_dereg(&e.dev, &mr0), -EINVAL);
	env_close(&e);
	live_zero();
}

/* ---- doorbells --------------------------------------------------------------------- */

struct qpx {
	struct dvx_hal_obj cq, qp;
	uint32_t cqn, qpn;
	struct dvx_mlx5_sq sq;
	struct dvx_mlx5_sq_ctrs sqc;
	struct dvx_mlx5_cq pcq;
};

/* a loopback RTS QP with its own CQ (64 CQEs, ring CQ_OFF(i)) and SQ (64 WQEBBs) */
static void qpx_make(struct env *e, struct qpx *x, unsigned i, const struct dvx_hal_uar *uar)
{
	struct dvx_mlx5_qp_cfg qa;
	struct dvx_mlx5_cq_cfg ca;

	cq_attr(e, &ca, 6, i);
	dvx_mlx5_cq_ring_init(e->mem + CQ_OFF(i), 6);
	assert_int_equal(cq_make(e, &ca, &x->cq, &x->cqn), 0);
	assert_int_equal(dvx_mlx5_cq_init(&x->pcq, e->mem + CQ_OFF(i), 6,
					  (dvx_be32 *)(void *)(e->mem + DBR_OFF(32 + i)), x->cqn), 0);
	qp_attr(e, &qa, x->cqn, i);
	qa.uar_page = uar->page_id;
	assert_int_equal(qp_make(e, &qa, &x->qp, &x->qpn), 0);
	qp_loop_rts(e, &x->qp);
	assert_int_equal(dvx_mlx5_sq_init(&x->sq, &x->sqc,
					  &(struct dvx_mlx5_sq_cfg){
						  e->mem + WQ_OFF(i), 64, x->qpn, 0,
						  (dvx_be32 *)(void *)(e->mem + DBR_OFF(i)),
						  uar->reg_addr,
						  uar->type == DVX_UAR_BF ? DVX_SIM_BF_HALF : 0,
						  0 }),
			 0);
}

static void qpx_destroy(struct env *e, struct qpx *x)
{
	assert_int_equal(dvx_hal_obj_destroy(&e->dev, &x->qp), 0);
	assert_int_equal(dvx_hal_obj_destroy(&e->dev, &x->cq), 0);
}

/* post @n NOPs, the last one signaled; returns the last index */
static uint32_t post_nops(struct qpx *x, unsigned n)
{
	uint32_t i;
	uint64_t idx = 0;

	for (i = 0; i < n; i++) {
		assert_int_equal(dvx_mlx5_sq_reserve(&x->sq, &x->sqc, 1, DVX_MLX5_SQ_SINGLE, &idx), 0);
		dvx_mlx5_wqe_nop(&x->sq.wq, idx, i + 1 == n ? DVX_MLX5_WQE_CTRL_CQ_UPDATE : 0);
	}
	return idx;
}

/* take one good CQE naming @idx and free the SQ up to it */
static void reap(struct qpx *x, uint32_t idx)
{
	struct dvx_mlx5_cqe_info info = { 0 };

	assert_int_equal(dvx_mlx5_cq_poll_one(&x->pcq, &info), 1);
	assert_int_equal(info.qpn, x->qpn);
	assert_int_equal(info.wqe_counter, (uint16_t)idx);
	assert_true(dvx_mlx5_sq_completed(&x->sq, &x->sqc, info.wqe_counter) > 0);
	dvx_mlx5_cq_update_ci(&x->pcq);
}

static void cq_empty(struct qpx *x)
{
	struct dvx_mlx5_cqe_info info;

	assert_int_equal(dvx_mlx5_cq_poll_one(&x->pcq, &info), 0);
}

/* the doorbell record's SQ counter, and a raw doorbell write, by hand */
static void set_rec(struct qpx *x, uint32_t pi)
{
	__atomic_store_n(&x->sq.dbrec[DVX_MLX5_SND_DBR], dvx_cpu_to_be32(pi & 0xffff),
			 __ATOMIC_RELEASE);
}

static void ring_raw(const struct dvx_hal_uar *u, uint32_t pi, uint32_t qpn)
{
	__atomic_store_n((uint64_t *)u->reg_addr, dvx_mlx5_sq_db_value(pi, qpn), __ATOMIC_RELEASE);
}

/* take the faults: exactly @n, the first of kind @kind naming @qpn with @index */
static void faults_are(int n, uint32_t kind, uint32_t qpn, uint32_t index)
{
	struct dvx_sim_db_fault f;

	assert_int_equal(dvx_sim_db_faults(fab, &f), n);
	assert_int_equal(f.kind, n ? kind : DVX_SIM_DBF_NONE);
	if (n) {
		assert_int_equal(f.qpn, qpn);
		assert_int_equal(f.index, index);
	}
}

/* NIC 0 open with two QPs, A and B, on its default UAR page: one register for both */
static void pair_open(struct env *e, struct qpx *a, struct qpx *b)
{
	assert_int_equal(add_default(0), 0);
	env_open(e, "sim_0", DVX_UAR_NC_DEDICATED);
	qpx_make(e, a, 0, &e->uar);
	qpx_make(e, b, 1, &e->uar);
}

static void pair_close(struct env *e, struct qpx *a, struct qpx *b)
{
	qpx_destroy(e, a);
	qpx_destroy(e, b);
	env_close(e);
	live_zero();
}

/* @na WQEs of A rung, then @nb of B rung on the same register before the sim looks: one
 * step runs both (B by its doorbell, A rescued), their CQEs reaped */
static void ring_both(struct qpx *a, unsigned na, struct qpx *b, unsigned nb)
{
	uint32_t ia, ib;

	ia = post_nops(a, na);
	dvx_mlx5_sq_ring_db(&a->sq, &a->sqc, a->sqc.resv);
	ib = post_nops(b, nb);
	dvx_mlx5_sq_ring_db(&b->sq, &b->sqc, b->sqc.resv);
	assert_int_equal(dvx_sim_step(fab), na + nb);
	reap(a, ia);
	reap(b, ib);
}

/* the fabric's rescues and doorbell faults so far */
static void rescues_are(uint64_t rescued, uint64_t faults)
{
	struct dvx_sim_stats st;

	assert_int_equal(dvx_sim_get_stats(fab, &st), 0);
	assert_int_equal(st.db_rescued, rescued);
	assert_int_equal(st.db_faults, faults);
}

/* the strict model with one register per QP: a doorbell starts the QP it names, up to
 * the index it carries, and nothing else; every mismatch is a fault that starts nothing */
static void test_doorbell_strict(void **state)
{
	struct dvx_hal_uar ub, uc;
	struct dvx_sim_db_fault f;
	struct dvx_mlx5_qp_query q;
	struct dvx_sim_stats st;
	struct qpx a, b, c;
	uint32_t ia, ib;
	struct env e;

	(void)state;
	assert_int_equal(add_default(0), 0);
	env_open(&e, "sim_0", DVX_UAR_NC_DEDICATED);
	assert_int_equal(dvx_hal_uar_alloc(&e.dev, DVX_UAR_NC_DEDICATED, &ub), 0);
	assert_int_equal(dvx_hal_uar_alloc(&e.dev, DVX_UAR_NC_DEDICATED, &uc), 0);
	qpx_make(&e, &a, 0, &e.uar);
	qpx_make(&e, &b, 1, &ub);
	qpx_make(&e, &c, 2, &uc);

	/* nothing rung: nothing runs, even with WQEs in the ring and the record written */
	post_nops(&a, 1);
	assert_int_equal(dvx_sim_step(fab), 0);
	set_rec(&a, 1);
	assert_int_equal(dvx_sim_step(fab), 0);
	cq_empty(&a);

	/* A rings its register, B only writes its record: A runs, B does not */
	ia = post_nops(&a, 2);				/* 3 WQEs in all */
	dvx_mlx5_sq_ring_db(&a.sq, &a.sqc, a.sqc.resv);
	post_nops(&b, 2);
	set_rec(&b, 2);
	assert_int_equal(dvx_sim_step(fab), 3);
	reap(&a, 0);
	reap(&a, ia);
	cq_empty(&b);
	/* B's own doorbell starts it */
	ring_raw(&ub, 2, b.qpn);
	b.sqc.db_pi = 2;
	assert_int_equal(dvx_sim_step(fab), 2);
	reap(&b, 1);

	/* up to the index the doorbell carries, not the record: 3 posted, record at 3,
	 * a doorbell for 1, then one for 3 */
	ib = post_nops(&b, 3);
	set_rec(&b, 5);
	ring_raw(&ub, 3, b.qpn);
	assert_int_equal(dvx_sim_step(fab), 1);
	qp_query(&e, &b.qp, &q);
	assert_int_equal(q.hw_sq_wqebb_counter, 3);
	ring_raw(&ub, 5, b.qpn);
	assert_int_equal(dvx_sim_step(fab), 2);
	reap(&b, ib);
	b.sqc.db_pi = 5;
	/* the same doorbell again: no fault, nothing to run */
	ring_raw(&ub, 5, b.qpn);
	assert_int_equal(dvx_sim_step(fab), 0);
	faults_are(0, 0, 0, 0);
	assert_int_equal(dvx_sim_get_stats(fab, &st), 0);
	assert_int_equal(st.db_rescued, 0);
	assert_int_equal(st.db_faults, 0);

	/* beyond the record: the record says 5, the doorbell 7 (the record store was
	 * missing): a fault, nothing runs; the right doorbell later does */
	ib = post_nops(&b, 2);
	ring_raw(&ub, 7, b.qpn);
	assert_int_equal(dvx_sim_step(fab), 0);
	faults_are(1, DVX_SIM_DBF_BEYOND_DBR, b.qpn, 7);
	set_rec(&b, 7);
	ring_raw(&ub, 7, b.qpn);
	assert_int_equal(dvx_sim_step(fab), 2);
	reap(&b, ib);
	b.sqc.db_pi = 7;

	/* backwards: a doorbell behind the last one */
	ring_raw(&ub, 6, b.qpn);
	assert_int_equal(dvx_sim_step(fab), 0);
	assert_int_equal(dvx_sim_db_faults(fab, &f), 1);
	assert_int_equal(f.kind, DVX_SIM_DBF_BACKWARDS);
	assert_int_equal(f.index, 6);
	assert_int_equal(f.last, 7);
	assert_int_equal(f.record, 7);
	assert_int_equal(f.page_id, ub.page_id);
	assert_int_equal(f.nic, 0);

	/* more than the ring (64 WQEBBs) ahead of what ran, record and doorbell alike */
	set_rec(&b, 7 + 65);
	ring_raw(&ub, 7 + 65, b.qpn);
	assert_int_equal(dvx_sim_step(fab), 0);
	faults_are(1, DVX_SIM_DBF_RANGE, b.qpn, 7 + 65);
	set_rec(&b, 7);

	/* a wrong QPN: B's WQEs rung with C's QPN on B's register (C is bound to another
	 * page), and with a QPN that names nothing: faults, B and C start nothing */
	ib = post_nops(&b, 1);
	set_rec(&b, 8);
	ring_raw(&ub, 8, c.qpn);
	assert_int_equal(dvx_sim_step(fab), 0);
	faults_are(1, DVX_SIM_DBF_QPN, c.qpn, 0);
	ring_raw(&ub, 8, 0xabcdef);
	assert_int_equal(dvx_sim_step(fab), 0);
	assert_int_equal(dvx_sim_db_faults(fab, &f), 1);
	assert_int_equal(f.kind, DVX_SIM_DBF_QPN);
	assert_int_equal(f.raw, dvx_mlx5_sq_db_value(8, 0xabcdef));
	cq_empty(&b);
	cq_empty(&c);
	ring_raw(&ub, 8, b.qpn);
	assert_int_equal(dvx_sim_step(fab), 1);
	reap(&b, ib);
	b.sqc.db_pi = 8;
	assert_int_equal(dvx_sim_get_stats(fab, &st), 0);
	assert_int_equal(st.db_faults, 5);
	assert_int_equal(st.db_stray, 2);
	assert_int_equal(st.db_rescued, 0);

	/* a control segment as the doorbell (rdma-core's convention; a BlueFlame copy
	 * starts the same way): the WQE's own index, covering the WQE */
	ib = post_nops(&b, 1);
	set_rec(&b, 9);
	__atomic_store_n((uint64_t *)ub.reg_addr,
			 *(const uint64_t *)dvx_mlx5_wq_seg(&b.sq.wq, ib, 0), __ATOMIC_RELEASE);
	assert_int_equal(dvx_sim_step(fab), 1);
	reap(&b, ib);
	b.sqc.db_pi = 9;

	/* a QP in RST ignores its doorbell (no fault); a QP in ERR flushes what it names */
	assert_int_equal(to_err(&e, &c.qp), 0);
	post_nops(&c, 1);
	dvx_mlx5_sq_ring_db(&c.sq, &c.sqc, c.sqc.resv);
	dvx_sim_step(fab);
	{
		struct dvx_mlx5_cqe_info info;

		assert_int_equal(dvx_mlx5_cq_poll_one(&c.pcq, &info), -ECANCELED);
		assert_int_equal(info.syndrome, 0x05);	/* WR_FLUSH_ERR */
	}
	faults_are(0, 0, 0, 0);

	qpx_destroy(&e, &a);
	qpx_destroy(&e, &b);
	qpx_destroy(&e, &c);
	assert_int_equal(dvx_hal_uar_free(&e.dev, &ub), 0);
	assert_int_equal(dvx_hal_uar_free(&e.dev, &uc), 0);
	env_close(&e);
	live_zero();
}

/* several QPs on one register: a later doorbell can overwrite an earlier one in the
 * sim's one-word register before the loop reads it (hardware would receive both), so
 * the QPs of that page whose record is ahead are started from it, counted as rescues */
static void test_doorbell_shared_uar(void **state)
{
	struct dvx_sim_stats st;
	struct dvx_mlx5_qp_query q;
	struct qpx a, b;
	uint32_t ia, ib;
	struct env e;

	(void)state;
	pair_open(&e, &a, &b);			/* the companion shares the page */

	/* A rings, then B rings the same register before the sim looks: both run */
	ring_both(&a, 3, &b, 2);
	cq_empty(&a);
	cq_empty(&b);
	assert_int_equal(dvx_sim_get_stats(fab, &st), 0);
	assert_int_equal(st.doorbells, 1);		/* one register write survived */
	assert_int_equal(st.dbr_updates, 2);		/* B by its doorbell, A rescued */
	assert_int_equal(st.db_rescued, 1);

	/* each doorbell seen: no rescue */
	ia = post_nops(&a, 1);
	dvx_mlx5_sq_ring_db(&a.sq, &a.sqc, a.sqc.resv);
	assert_int_equal(dvx_sim_step(fab), 1);
	reap(&a, ia);
	qp_query(&e, &a.qp, &q);
	assert_int_equal(q.hw_sq_wqebb_counter, 4);	/* 3 + 1 */
	assert_int_equal(q.sw_sq_wqebb_counter, 4);
	assert_int_equal(dvx_sim_get_stats(fab, &st), 0);
	assert_int_equal(st.db_rescued, 1);

	/* the limit of the model: on a shared register a record written without its
	 * doorbell is started by the other QP's doorbell all the same (counted) */
	ib = post_nops(&b, 1);
	set_rec(&b, (uint32_t)b.sqc.resv);
	b.sqc.db_pi = b.sqc.resv;
	ia = post_nops(&a, 1);
	dvx_mlx5_sq_ring_db(&a.sq, &a.sqc, a.sqc.resv);
	assert_int_equal(dvx_sim_step(fab), 2);
	reap(&a, ia);
	reap(&b, ib);
	rescues_are(2, 0);

	/* a stray write to the page starts nothing (it names no QP of the page) */
	ib = post_nops(&b, 1);
	set_rec(&b, (uint32_t)b.sqc.resv);
	ring_raw(&e.uar, 1, 0xabcdef);
	assert_int_equal(dvx_sim_step(fab), 0);
	faults_are(1, DVX_SIM_DBF_QPN, 0xabcdef, 0);
	dvx_mlx5_sq_ring_db(&b.sq, &b.sqc, b.sqc.resv);
	assert_int_equal(dvx_sim_step(fab), 1);
	reap(&b, ib);

	pair_close(&e, &a, &b);
}

/*
 * A QP that only ever runs through rescues (the P2P lanes' pattern: every counter
 * operation rings the main QP and then, on the same register, its companion, and a
 * sim that looks late sees only the companion's doorbell) and then rings alone. Its
 * doorbell is right: the rescues stood for doorbells the hardware received, so it must
 * start the QP however far the rescues carried it. The index a doorbell carries is 16
 * bits, so the sim has to place it; placed from the last doorbell seen (which the
 * rescues left behind), a QP rescued for more than 32768 WQEBBs had its doorbell taken
 * for one from the past: a BACKWARDS fault that started nothing, the QP idle with its
 * record ahead and its poster waiting for ever (p2p-bench --procs 2 --iters 1000).
 */
static void test_doorbell_rescued_far(void **state)
{
	struct qpx a, b;
	uint32_t i, ia, ib;
	struct env e;

	(void)state;
	pair_open(&e, &a, &b);			/* the companion shares the page */

	/* 2100 x 32 WQEBBs of A (past two 16-bit wraps), each time rung and then
	 * overwritten by B's doorbell before the sim looks: A runs only by rescue */
	for (i = 0; i < 2100; i++)
		ring_both(&a, 32, &b, 1);
	rescues_are(2100, 0);

	/* A's own doorbell, alone on the register: it runs, no fault */
	ia = post_nops(&a, 32);
	dvx_mlx5_sq_ring_db(&a.sq, &a.sqc, a.sqc.resv);
	assert_int_equal(dvx_sim_step(fab), 32);
	faults_are(0, 0, 0, 0);
	reap(&a, ia);

	/* a doorbell of A still on its way when a rescue read A's newer record (A wrote
	 * record 1, B rang, the sim consumed B's doorbell, A wrote its register for 1 and
	 * its record 2, the sim read A's record): it arrives late and is no fault */
	ia = post_nops(&a, 2);
	set_rec(&a, (uint32_t)a.sqc.resv);
	ib = post_nops(&b, 1);
	dvx_mlx5_sq_ring_db(&b.sq, &b.sqc, b.sqc.resv);
	assert_int_equal(dvx_sim_step(fab), 3);
	reap(&a, ia);
	reap(&b, ib);
	ring_raw(&e.uar, (uint32_t)a.sqc.resv - 1, a.qpn);
	assert_int_equal(dvx_sim_step(fab), 0);
	ring_raw(&e.uar, (uint32_t)a.sqc.resv, a.qpn);
	assert_int_equal(dvx_sim_step(fab), 0);
	a.sqc.db_pi = a.sqc.resv;
	faults_are(0, 0, 0, 0);
	/* and one behind the last doorbell seen is still a fault */
	ring_raw(&e.uar, (uint32_t)a.sqc.resv - 1, a.qpn);
	assert_int_equal(dvx_sim_step(fab), 0);
	faults_are(1, DVX_SIM_DBF_BACKWARDS, a.qpn, (uint16_t)(a.sqc.resv - 1));

	pair_close(&e, &a, &b);
}

/*
 * Doorbells versus commands. A doorbell is a posted MMIO write; a command goes through
 * the command interface after it, so a doorbell written before a DESTROY_QP reaches the
 * NIC before the command does. The interleaving the messaging layer's closes met with
 * the progress thread (about once per 1,000-2,000 runs): A writes its record, B rings
 * the shared register, the sim takes B's doorbell and rescues A (A's work runs and
 * completes), A's own register write lands, its owner sees the completion and destroys
 * A before the sim looked at the register again. The sim used to read that doorbell
 * after the QP was gone: a DBF_QPN fault, and dvx_sim_fini() said -EPROTO. The command
 * takes it first now, as hardware has it; a doorbell written after the destroy still
 * names no QP and is still a fault.
 */
static void test_doorbell_before_destroy(void **state)
{
	struct dvx_sim_stats st;
	struct qpx a, b;
	uint32_t ia, ib, qpn;
	struct env e;

	(void)state;
	pair_open(&e, &a, &b);			/* one register for both */

	ia = post_nops(&a, 2);
	set_rec(&a, (uint32_t)a.sqc.resv);	/* A's record, its register write to come */
	ib = post_nops(&b, 1);
	dvx_mlx5_sq_ring_db(&b.sq, &b.sqc, b.sqc.resv);
	assert_int_equal(dvx_sim_step(fab), 3);	/* B by its doorbell, A rescued */
	reap(&a, ia);
	reap(&b, ib);
	rescues_are(1, 0);
	ring_raw(&e.uar, (uint32_t)a.sqc.resv, a.qpn);	/* A's register write lands */
	a.sqc.db_pi = a.sqc.resv;
	qpn = a.qpn;
	qpx_destroy(&e, &a);			/* before the sim looked again */
	assert_int_equal(dvx_sim_step(fab), 0);
	faults_are(0, 0, 0, 0);
	assert_int_equal(dvx_sim_get_stats(fab, &st), 0);
	assert_int_equal(st.doorbells, 2);	/* B's, and A's taken by the command */
	assert_int_equal(st.db_faults, 0);

	/* the same doorbell written after the destroy names no QP: a fault */
	ring_raw(&e.uar, 2, qpn);
	assert_int_equal(dvx_sim_step(fab), 0);
	faults_are(1, DVX_SIM_DBF_QPN, qpn, 0);

	/* a doorbell before a 2ERR is taken before it: its WQE is flushed by the ERR
	 * (a new A on fresh rings: the old CQ's record still holds its consumer index) */
	qpx_make(&e, &a, 2, &e.uar);
	ia = post_nops(&a, 1);
	dvx_mlx5_sq_ring_db(&a.sq, &a.sqc, a.sqc.resv);
	assert_int_equal(to_err(&e, &a.qp), 0);
	assert_int_equal(dvx_sim_step(fab), 0);
	{
		struct dvx_mlx5_cqe_info info = { 0 };

		assert_int_equal(dvx_mlx5_cq_poll_one(&a.pcq, &info), -ECANCELED);
		assert_int_equal(info.qpn, a.qpn);
		assert_int_equal(info.wqe_counter, (uint16_t)ia);
		assert_int_equal(info.syndrome, DVX_MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
		dvx_mlx5_cq_update_ci(&a.pcq);
	}
	faults_are(0, 0, 0, 0);

	pair_close(&e, &a, &b);
}

/* the loose model (dvx_sim_set_db_mode()): any write to a page re-reads every record of
 * the page; the doorbell's index is not used and a stray write is only counted */
static void test_doorbell_loose(void **state)
{
	struct dvx_sim_stats st;
	struct qpx a, b;
	uint32_t ib;
	struct env e;

	(void)state;
	assert_int_equal(dvx_sim_set_db_mode(fab, 2), -EINVAL);
	assert_int_equal(dvx_sim_set_db_mode(NULL, DVX_SIM_DB_LOOSE), -EINVAL);
	assert_int_equal(dvx_sim_set_db_mode(fab, DVX_SIM_DB_LOOSE), 0);
	pair_open(&e, &a, &b);
	ib = post_nops(&b, 3);
	set_rec(&b, 3);
	ring_raw(&e.uar, 1, 0xabcdef);			/* stray, index 1 */
	assert_int_equal(dvx_sim_step(fab), 3);
	reap(&b, ib);
	assert_int_equal(dvx_sim_get_stats(fab, &st), 0);
	assert_int_equal(st.db_stray, 1);
	assert_int_equal(st.db_faults, 0);
	assert_int_equal(st.db_rescued, 0);
	faults_are(0, 0, 0, 0);
	assert_int_equal(dvx_sim_set_db_mode(fab, DVX_SIM_DB_STRICT), 0);
	pair_close(&e, &a, &b);
}

/* a fault nobody took makes dvx_sim_fini() say so */
static void test_doorbell_fini(void **state)
{
	struct dvx_sim_fabric_cfg fc;
	struct qpx a;
	struct env e;

	(void)state;
	assert_int_equal(add_default(0), 0);
	env_open(&e, "sim_0", DVX_UAR_NC_DEDICATED);
	qpx_make(&e, &a, 0, &e.uar);
	ring_raw(&e.uar, 1, a.qpn);			/* the record still says 0 */
	assert_int_equal(dvx_sim_step(fab), 0);
	qpx_destroy(&e, &a);
	env_close(&e);
	assert_int_equal(dvx_sim_db_faults(NULL, NULL), -EINVAL);
	assert_int_equal(dvx_sim_fini(fab), -EPROTO);
	/* a fresh fabric for the teardown */
	dvx_sim_fabric_cfg_default(&fc);
	assert_int_equal(dvx_sim_fabric_init(storage, dvx_sim_fabric_mem_size(&fc), &fc, &fab), 0);
	assert_int_equal(dvx_sim_set_reorder(fab, 0, 0), 0);	/* the in-order model's counts */
	hal = dvx_sim_hal(fab);
}

/* BlueFlame copies, each QP on a register of its own: the copy's control segment is
 * the doorbell (the WQE's index plus its size), every one seen, no rescue, no fault */
static void test_doorbell_blueflame(void **state)
{
	struct dvx_hal_uar bf, bf2;
	struct dvx_sim_stats st;
	struct qpx a, b;
	uint32_t i, ia0, ia, ib;
	struct env e;

	(void)state;
	assert_int_equal(add_default(0), 0);
	env_open(&e, "sim_0", DVX_UAR_NC_DEDICATED);
	assert_int_equal(dvx_hal_uar_alloc(&e.dev, DVX_UAR_BF, &bf), 0);
	assert_int_equal(dvx_hal_uar_alloc(&e.dev, DVX_UAR_BF, &bf2), 0);
	qpx_make(&e, &a, 0, &bf);
	qpx_make(&e, &b, 1, &bf2);
	/* single-WQE posts go out as BlueFlame copies, alternating halves; two posts of
	 * A land in both halves before the sim looks */
	for (i = 0; i < 4; i++) {
		ia0 = post_nops(&a, 1);
		dvx_mlx5_sq_ring(&a.sq, &a.sqc, ia0);
		ia = post_nops(&a, 1);
		dvx_mlx5_sq_ring(&a.sq, &a.sqc, ia);
		ib = post_nops(&b, 1);
		dvx_mlx5_sq_ring(&b.sq, &b.sqc, ib);
		assert_int_equal(dvx_sim_step(fab), 3);
		reap(&a, ia0);
		reap(&a, ia);
		reap(&b, ib);
	}
	assert_int_equal(dvx_sim_get_stats(fab, &st), 0);
	assert_int_equal(st.doorbells, 12);
	assert_int_equal(st.db_rescued, 0);
	assert_int_equal(st.db_faults, 0);
	/* three doorbells of A before the sim looks: the third overwrote the first in one
	 * half and the second waits in the other; hardware received them in order, so no
	 * fault (read half by half, the third came first and the second was refused as
	 * backwards), and all three WQEs run */
	ia0 = (uint32_t)a.sqc.resv;
	for (i = 0; i < 3; i++) {
		post_nops(&a, 1);
		dvx_mlx5_sq_ring_db(&a.sq, &a.sqc, a.sqc.resv);
	}
	assert_int_equal(dvx_sim_step(fab), 3);
	faults_are(0, 0, 0, 0);
	for (i = 0; i < 3; i++)
		reap(&a, ia0 + i);
	assert_int_equal(dvx_sim_get_stats(fab, &st), 0);
	assert_int_equal(st.doorbells, 14);
	/* a wrong one in the same shape is still caught: 2 after 3 in one half */
	ia = post_nops(&a, 2);
	set_rec(&a, (uint32_t)a.sqc.resv);
	__atomic_store_n((uint64_t *)(void *)((uint8_t *)bf.reg_addr + a.sqc.bf_offset),
			 dvx_mlx5_sq_db_value((uint32_t)a.sqc.resv, a.qpn), __ATOMIC_RELEASE);
	assert_int_equal(dvx_sim_step(fab), 2);
	reap(&a, ia);
	__atomic_store_n((uint64_t *)(void *)((uint8_t *)bf.reg_addr + a.sqc.bf_offset),
			 dvx_mlx5_sq_db_value((uint32_t)a.sqc.resv - 1, a.qpn), __ATOMIC_RELEASE);
	assert_int_equal(dvx_sim_step(fab), 0);
	faults_are(1, DVX_SIM_DBF_BACKWARDS, a.qpn, (uint16_t)(a.sqc.resv - 1));
	a.sqc.db_pi = a.sqc.resv;
	qpx_destroy(&e, &a);
	qpx_destroy(&e, &b);
	assert_int_equal(dvx_hal_uar_free(&e.dev, &bf), 0);
	assert_int_equal(dvx_hal_uar_free(&e.dev, &bf2), 0);
	env_close(&e);
	live_zero();
}

static void test_doorbell_wrap(void **state)
{
	struct dvx_mlx5_qp_query q;
	struct qpx a;
	uint32_t i, idx;
	struct env e;

	(void)state;
	assert_int_equal(add_default(0), 0);
	env_open(&e, "sim_0", DVX_UAR_NC_DEDICATED);
	qpx_make(&e, &a, 0, &e.uar);
	/* 4200 batches of 16: the 16-bit doorbell counter wraps once */
	for (i = 0; i < 4200; i++) {
		idx = post_nops(&a, 16);
		dvx_mlx5_sq_ring_db(&a.sq, &a.sqc, a.sqc.resv);
		assert_int_equal(dvx_sim_step(fab), 16);
		reap(&a, idx);
	}
	qp_query(&e, &a.qp, &q);
	assert_int_equal(q.hw_sq_wqebb_counter, (uint16_t)(4200 * 16));
	qpx_destroy(&e, &a);
	env_close(&e);
}

/* ---- step vs the progress thread; trace ------------------------------------------------ */

/* threads of this process whose timer slack is @ns (/proc/self/task/N/timerslack_ns),
 * or -1 when no thread's can be read */
static int threads_with_slack(unsigned long ns)
{
	struct dirent *d;
	int n = 0, seen = 0;
	DIR *dir = opendir("/proc/self/task");

	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		char path[300];
		unsigned long v;
		FILE *f;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/timerslack_ns", d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%lu", &v) == 1) {
			seen = 1;
			n += v == ns;
		}
		fclose(f);
	}
	closedir(dir);
	return seen ? n : -1;
}

static void test_progress_thread(void **state)
{
	struct dvx_mlx5_cqe_info info = { 0 };
	struct qpx a;
	uint32_t idx, r;
	unsigned round;
	long spins;
	int rc;
	struct env e;

	(void)state;
	assert_int_equal(add_default(0), 0);
	env_open(&e, "sim_0", DVX_UAR_NC_DEDICATED);
	qpx_make(&e, &a, 0, &e.uar);
	dvx_sim_set_idle(fab, 16, 0);
	assert_int_equal(dvx_sim_start(fab), 0);
	assert_int_equal(dvx_sim_start(fab), -EALREADY);
	/* the NIC's thread asked for 1 us of timer slack (this thread keeps Linux's 50) */
	for (round = 0; round < 1000 && threads_with_slack(1000) == 0; round++)
		sched_yield();
	rc = threads_with_slack(1000);
	if (rc < 0)
		print_message("no /proc/self/task/N/timerslack_ns here: the slack is not checked\n");
	else
		assert_true(rc >= 1);
	for (round = 0; round < 50; round++) {
		idx = post_nops(&a, 4);
		/* the doorbell sequence with atomics, so ThreadSanitizer sees the ordering */
		r = a.sqc.resv;
		__atomic_store_n(&a.sq.dbrec[DVX_MLX5_SND_DBR], dvx_cpu_to_be32(r & 0xffff),
				 __ATOMIC_RELEASE);
		__atomic_store_n((uint64_t *)e.uar.reg_addr,
				 a.sq.db_qpn | dvx_mlx5_sq_db_value(r, 0), __ATOMIC_RELEASE);
		a.sqc.db_pi = r;
		/* no dev_progress here: only the thread moves the model */
		for (spins = 0, rc = 0; rc == 0 && spins < 100000000; spins++) {
			struct dvx_mlx5_cqe64 *cqe = dvx_mlx5_cqe_at(a.pcq.buf, 6, a.pcq.ci);
			uint8_t own = __atomic_load_n(&cqe->op_own, __ATOMIC_ACQUIRE);

			if (dvx_mlx5_cqe_sw_owned(own, a.pcq.ci, 6))
				rc = dvx_mlx5_cq_poll_one(&a.pcq, &info);
			else
				sched_yield();
		}
		assert_int_equal(rc, 1);
		assert_int_equal(info.wqe_counter, (uint16_t)idx);
		assert_true(dvx_mlx5_sq_completed(&a.sq, &a.sqc, info.wqe_counter) > 0);
	}
	assert_int_equal(dvx_sim_stop(fab), 0);
	assert_int_equal(dvx_sim_stop(fab), -EALREADY);

	/* the same work stepped by hand, through the hal's dev_progress */
	idx = post_nops(&a, 4);
	dvx_mlx5_sq_ring_db(&a.sq, &a.sqc, a.sqc.resv);
	dvx_hal_nic_progress(&e.dev);
	reap(&a, idx);
	qpx_destroy(&e, &a);
	env_close(&e);
}

static void test_trace(void **state)
{
	struct dvx_test_sim_trace t = { 0 };
	struct qpx a;
	uint32_t idx;
	struct env e;

	(void)state;
	assert_int_equal(add_default(0), 0);
	env_open(&e, "sim_0", DVX_UAR_NC_DEDICATED);
	qpx_make(&e, &a, 0, &e.uar);
	t.out = getenv("DVX_SIM_TRACE") ? stderr : NULL;
	dvx_sim_set_trace(fab, dvx_test_sim_trace_print, &t);
	idx = post_nops(&a, 3);
	dvx_mlx5_sq_ring_db(&a.sq, &a.sqc, a.sqc.resv);
	assert_int_equal(dvx_sim_step(fab), 3);
	reap(&a, idx);
	assert_int_equal(t.wqes, 3);
	assert_int_equal(t.bad, 0);
	assert_int_equal(t.cqes, 1);
	dvx_sim_set_trace(fab, NULL, NULL);
	idx = post_nops(&a, 1);
	dvx_mlx5_sq_ring_db(&a.sq, &a.sqc, a.sqc.resv);
	assert_int_equal(dvx_sim_step(fab), 1);
	reap(&a, idx);
	assert_int_equal(t.wqes, 3);
	qpx_destroy(&e, &a);
	env_close(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fabric, setup, teardown),
		cmocka_unit_test_setup_teardown(test_duplicate_nic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_devices, setup, teardown),
		cmocka_unit_test_setup_teardown(test_caps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cq, setup, teardown),
		cmocka_unit_test_setup_teardown(test_umem_pages, setup, teardown),
		cmocka_unit_test_setup_teardown(test_qp_transitions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ts_format, setup, teardown),
		cmocka_unit_test_setup_teardown(test_qp_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tables, setup, teardown),
		cmocka_unit_test_setup_teardown(test_doorbell_strict, setup, teardown),
		cmocka_unit_test_setup_teardown(test_doorbell_shared_uar, setup, teardown),
		cmocka_unit_test_setup_teardown(test_doorbell_rescued_far, setup, teardown),
		cmocka_unit_test_setup_teardown(test_doorbell_before_destroy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_doorbell_loose, setup, teardown),
		cmocka_unit_test_setup_teardown(test_doorbell_fini, setup, teardown),
		cmocka_unit_test_setup_teardown(test_doorbell_blueflame, setup, teardown),
		cmocka_unit_test_setup_teardown(test_doorbell_wrap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_progress_thread, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trace, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
