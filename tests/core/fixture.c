// SPDX-License-Identifier: MIT
/*
 * tests/core/fixture.c - see fixture.h.
 */
#include "fixture.h"

struct dvx_mock M;
const struct dvx_hal *HAL;
uint8_t fx_mem[FX_MEM_BYTES] __attribute__((aligned(4096)));
char fx_log_last[512];
unsigned fx_log_count;
int fx_qp_state_answer = -1;
int64_t fx_cq_producer_answer = -1;

static void log_fn(void *arg, int level, const char *msg)
{
	(void)arg;
	(void)level;
	snprintf(fx_log_last, sizeof(fx_log_last), "%s", msg);
	fx_log_count++;
}

struct dvx_log fx_log(void)
{
	struct dvx_log l = { log_fn, NULL, DVX_LOG_DEBUG };

	return l;
}

void fx_mock(int roce)
{
	struct dvx_mock_nic_cfg cfg;

	dvx_mock_init(&M);
	dvx_test_mock_cx7(&cfg, "mlx5_0", "0000:3b:00.0", 0);
	if (!roce) {
		cfg.port[0].link_layer = DVX_LINK_LAYER_IB;
		cfg.port[0].lid = 0x11;
	}
	assert_int_equal(dvx_mock_add_nic(&M, &cfg), 0);
	if (!roce) {
		fx_cap(GENERAL, DVX_MLX5_CAP_PORT_TYPE, DVX_MLX5_PORT_TYPE_IB);
		fx_cap(GENERAL, DVX_MLX5_CAP_ROCE, 0);
		fx_cap_drop(DVX_MLX5_CAP_TYPE_ROCE);
	}
	HAL = dvx_mock_hal(&M);
	fx_mbox_reset();
	fx_qp_state_answer = -1;
	fx_cq_producer_answer = -1;
	fx_log_last[0] = 0;
	fx_log_count = 0;
}

struct dvx_mock_nic_cfg *fx_cfg(void)
{
	return dvx_mock_nic_cfg(&M, 0);
}

static struct dvx_mock_cap *cap_page(unsigned cap_type)
{
	struct dvx_mock_nic_cfg *cfg = fx_cfg();
	unsigned i;

	for (i = 0; i < DVX_MOCK_MAX_CAPS; i++)
		if (cfg->caps[i].valid && cfg->caps[i].op_mod == (cap_type << 1 | 1))
			return &cfg->caps[i];
	return NULL;
}

void fx_cap_set(unsigned cap_type, unsigned byte, unsigned hi, unsigned lo, uint32_t v)
{
	struct dvx_mock_cap *c = cap_page(cap_type);

	assert_non_null(c);
	dvx_mlx5_set(c->page, byte, hi, lo, v);
}

void fx_cap_drop(unsigned cap_type)
{
	struct dvx_mock_cap *c = cap_page(cap_type);

	if (c)
		c->valid = 0;
}

int fx_open_attr(struct dvx_nic *nic, uint8_t uar_pref, uint32_t required, int32_t gid_index)
{
	struct dvx_nic_cfg a;

	memset(&a, 0, sizeof(a));
	a.name = "mlx5_0";
	a.uar_pref = uar_pref;
	a.required = required;
	a.gid_index = gid_index;
	a.flags = gid_index >= 0 ? DVX_NIC_CFG_F_GID_INDEX : 0;
	a.log = fx_log();
	return dvx_nic_open(nic, HAL, &a);
}

int fx_open(struct dvx_nic *nic)
{
	return fx_open_attr(nic, DVX_UAR_PREF_NC, 0, -1);
}

/* ---- mailbox capture ---- */

struct mbox_rec {
	unsigned opcode;
	uint8_t in[DVX_MLX5_CMD_MAX_BYTES];
};
#define FX_MBOX_MAX 256
static struct mbox_rec recs[FX_MBOX_MAX];
static unsigned nrecs;

void fx_mbox_reset(void)
{
	nrecs = 0;
}

static void record(const void *in, size_t inlen)
{
	struct mbox_rec *r;

	if (!in || inlen < 8 || nrecs >= FX_MBOX_MAX)
		return;
	r = &recs[nrecs++];
	memset(r->in, 0, sizeof(r->in));
	memcpy(r->in, in, inlen < sizeof(r->in) ? inlen : sizeof(r->in));
	r->opcode = dvx_mlx5_get(in, DVX_MLX5_HDR_OPCODE);
}

const uint8_t *fx_mbox(unsigned opcode, unsigned nth)
{
	unsigned i;

	for (i = 0; i < nrecs; i++)
		if (recs[i].opcode == opcode && nth-- == 0)
			return recs[i].in;
	return NULL;
}

unsigned fx_mbox_count(unsigned opcode)
{
	unsigned i, n = 0;

	for (i = 0; i < nrecs; i++)
		n += recs[i].opcode == opcode;
	return n;
}

const uint8_t *fx_mbox_last(unsigned opcode)
{
	unsigned n = fx_mbox_count(opcode);

	return n ? fx_mbox(opcode, n - 1) : NULL;
}

int __real_dvx_hal_obj_create(struct dvx_hal_nic *dev, const void *in, size_t inlen, void *out,
			      size_t outlen, struct dvx_hal_obj *obj);
int __wrap_dvx_hal_obj_create(struct dvx_hal_nic *dev, const void *in, size_t inlen, void *out,
			      size_t outlen, struct dvx_hal_obj *obj);
int __real_dvx_hal_obj_modify(struct dvx_hal_nic *dev, struct dvx_hal_obj *obj, const void *in,
			      size_t inlen, void *out, size_t outlen);
int __wrap_dvx_hal_obj_modify(struct dvx_hal_nic *dev, struct dvx_hal_obj *obj, const void *in,
			      size_t inlen, void *out, size_t outlen);
int __real_dvx_hal_obj_query(struct dvx_hal_nic *dev, struct dvx_hal_obj *obj, const void *in,
			     size_t inlen, void *out, size_t outlen);
int __wrap_dvx_hal_obj_query(struct dvx_hal_nic *dev, struct dvx_hal_obj *obj, const void *in,
			     size_t inlen, void *out, size_t outlen);

int __wrap_dvx_hal_obj_create(struct dvx_hal_nic *dev, const void *in, size_t inlen, void *out,
			      size_t outlen, struct dvx_hal_obj *obj)
{
	record(in, inlen);
	return __real_dvx_hal_obj_create(dev, in, inlen, out, outlen, obj);
}

int __wrap_dvx_hal_obj_modify(struct dvx_hal_nic *dev, struct dvx_hal_obj *obj, const void *in,
			      size_t inlen, void *out, size_t outlen)
{
	record(in, inlen);
	return __real_dvx_hal_obj_modify(dev, obj, in, inlen, out, outlen);
}

int __wrap_dvx_hal_obj_query(struct dvx_hal_nic *dev, struct dvx_hal_obj *obj, const void *in,
			     size_t inlen, void *out, size_t outlen)
{
	int err;

	record(in, inlen);
	err = __real_dvx_hal_obj_query(dev, obj, in, inlen, out, outlen);
	if (err)
		return err;
	if (dvx_mlx5_get(in, DVX_MLX5_HDR_OPCODE) == DVX_MLX5_CMD_QUERY_QP &&
	    fx_qp_state_answer >= 0)
		dvx_mlx5_set(DVX_MLX5_QPC_IN((uint8_t *)out), DVX_MLX5_QPC_STATE,
			     (uint32_t)fx_qp_state_answer);
	if (dvx_mlx5_get(in, DVX_MLX5_HDR_OPCODE) == DVX_MLX5_CMD_QUERY_CQ &&
	    fx_cq_producer_answer >= 0)
		dvx_mlx5_set(DVX_MLX5_CQC_IN((uint8_t *)out), DVX_MLX5_CQC_PRODUCER_COUNTER,
			     (uint32_t)fx_cq_producer_answer);
	return 0;
}

/* ---- objects ---- */

void fx_umem(struct dvx_nic *nic, struct dvx_umem *u, uint64_t off, uint64_t len)
{
	struct dvx_umem_cfg a;

	memset(&a, 0, sizeof(a));
	a.addr = fx_mem + off;
	a.len = len;
	a.dmabuf_fd = -1;
	assert_int_equal(dvx_umem_reg(nic, &a, u), 0);
}

void fx_cq_attr(struct dvx_cq_cfg *a, struct dvx_umem *u, uint64_t ring_off, uint64_t dbr_off,
		uint32_t depth)
{
	memset(a, 0, sizeof(*a));
	a->depth = depth;
	a->ring_umem = u;
	a->ring_offset = ring_off;
	a->dbr_umem = u;
	a->dbr_offset = dbr_off;
}

void fx_qp_attr(struct dvx_qp_cfg *a, struct dvx_cq *cq, struct dvx_umem *u, uint64_t wq_off,
		uint64_t dbr_off)
{
	memset(a, 0, sizeof(*a));
	a->sq_depth = 64;
	a->max_inline = 28;
	a->send_cq = cq;
	a->wq_umem = u;
	a->wq_offset = wq_off;
	a->dbr_umem = u;
	a->dbr_offset = dbr_off;
}

/* ---- fault sweeps ---- */

unsigned fx_sweep_calls(const struct fx_sweep *s)
{
	unsigned n, failed = 0;
	int base, err;

	for (n = 1; n < 200; n++) {
		s->setup(s->ctx);
		base = dvx_mock_live_total(&M);
		dvx_mock_reset_log(&M);
		dvx_mock_fail_at(&M, n, -EIO);
		err = s->action(s->ctx);
		dvx_mock_clear_faults(&M);
		if (err == 0) {
			unsigned calls = dvx_mock_calls(&M);

			s->undo(s->ctx);
			s->teardown(s->ctx);
			assert_int_equal(dvx_mock_live_total(&M), 0);
			if (calls < n)
				return failed;
			continue;	/* the failure was absorbed (a fallback) */
		}
		if (err > 0)
			fail_msg("action returned %d for a fault at call %u", err, n);
		failed++;
		if (dvx_mock_live_total(&M) != base)
			fail_msg("fault at call %u: %d resources held after the error, %d before",
				 n, dvx_mock_live_total(&M), base);
		if (s->after_fail)
			s->after_fail(s->ctx, err);
		s->teardown(s->ctx);
		assert_int_equal(dvx_mock_live_total(&M), 0);
		assert_int_equal(M.closed_with_live, 0);
	}
	fail_msg("sweep did not end");
	return failed;
}

int fx_sweep_devx(const struct fx_sweep *s, unsigned opcode)
{
	int base, err;

	s->setup(s->ctx);
	base = dvx_mock_live_total(&M);
	assert_int_equal(dvx_mock_fail_devx(&M, -1, (uint16_t)opcode, -1, 0x03, 0xc0ffee,
					    0), 0);
	err = s->action(s->ctx);
	dvx_mock_clear_faults(&M);
	if (err == 0) {
		s->undo(s->ctx);
		s->teardown(s->ctx);
		fail_msg("a BAD_PARAM answer to opcode 0x%x did not fail the action", opcode);
	}
	assert_int_equal(dvx_mock_live_total(&M), base);
	if (s->after_fail)
		s->after_fail(s->ctx, err);
	s->teardown(s->ctx);
	assert_int_equal(dvx_mock_live_total(&M), 0);
	return err;
}
