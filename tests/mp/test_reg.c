// SPDX-License-Identifier: MIT
/*
 * The IB buffer registry (core/mp/reg.c) against the mock hal: host buffers keyed by
 * the caller's range and GPU buffers by their whole allocation; containment hits that
 * take a reference without a hal call; keys and addresses of sub-buffers; dma-buf
 * registration first and the plain path when it fails; relaxed ordering as part of the
 * key; a full table; deregistration in any order, retried after a refusal; two NICs
 * (a refusal on the second unwinds the first); and every hal call of a registration
 * failed in turn (nothing held after an error; a failure the fallback absorbs is fine).
 */
#include "../core/fixture.h"

#include <dvx/gpu/gpu.h>
#include <dvx/mp/reg.h>

static struct dvx_nic nic[2];
static struct dvx_gpu gpu;
static struct dvx_mp_reg reg;
static struct dvx_mp_reg_entry ents[4];
static int gpu_dmabuf = 1;	/* the GPU up() adds can export dma-bufs */

static void up(int nnics, int with_gpu)
{
	struct dvx_mock_nic_cfg cfg;
	struct dvx_hal_gpu_attr ga;
	struct dvx_nic_cfg na;
	struct dvx_nic *ns[2] = { &nic[0], &nic[1] };

	fx_mock(1);
	dvx_test_mock_cx7(&cfg, "mlx5_1", "0000:5e:00.0", 0);
	assert_int_equal(dvx_mock_add_nic(&M, &cfg), 1);
	dvx_mock_gpu_attr_h100(&ga, "0000:19:00.0");
	ga.dmabuf = (uint8_t)gpu_dmabuf;
	assert_int_equal(dvx_mock_add_gpu(&M, &ga), 0);
	memset(nic, 0, sizeof(nic));
	assert_int_equal(fx_open(&nic[0]), 0);
	if (nnics > 1) {
		memset(&na, 0, sizeof(na));
		na.name = "mlx5_1";
		na.gid_index = -1;
		assert_int_equal(dvx_nic_open(&nic[1], HAL, &na), 0);
	}
	if (with_gpu)
		assert_int_equal(dvx_gpu_open(&gpu, HAL, 0, NULL), 0);
	assert_int_equal(dvx_mp_reg_init(&reg, ents, DVX_ARRAY_SIZE(ents), ns, (uint32_t)nnics,
					 with_gpu ? &gpu : NULL), 0);
}

static void down(void)
{
	assert_int_equal(dvx_mp_reg_fini(&reg), 0);
	if (gpu.open)
		assert_int_equal(dvx_gpu_close(&gpu), 0);
	if (nic[1].open)
		assert_int_equal(dvx_nic_close(&nic[1]), 0);
	assert_int_equal(dvx_nic_close(&nic[0]), 0);
	assert_int_equal(dvx_mock_live_total(&M), 0);
}

static void test_host(void **state)
{
	struct dvx_p2p_lbuf b, b2;
	const struct dvx_mock_call *c;
	uint8_t *p = fx_mem;

	(void)state;
	up(1, 0);
	assert_int_equal(dvx_mp_reg_add(&reg, p, 4096, DVX_MP_REG_WRITE | DVX_MP_REG_ATOMIC, &b),
			 0);
	c = dvx_mock_last(&M, DVX_MOCK_OP_MR_REG);
	assert_int_equal(c->addr, (uint64_t)(uintptr_t)p);
	assert_int_equal(c->len, 4096);
	assert_int_equal(c->iova, (uint64_t)(uintptr_t)p);	/* the address is the iova */
	/* the rights asked for, no more: no remote read */
	assert_int_equal(c->access, DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_WRITE |
				    DVX_ACCESS_REMOTE_ATOMIC);
	assert_int_equal(c->dmabuf_fd, -1);
	assert_ptr_equal(b.ptr, p);
	assert_int_equal(b.addr, (uint64_t)(uintptr_t)p);
	assert_int_equal(b.lkey[0], ents[0].mr[0].lkey);
	assert_int_equal(b.rkey[0], ents[0].mr[0].rkey);
	assert_int_equal(reg.misses, 1);
	/* inside it: a hit, no hal call; the sub-buffer's own address */
	dvx_mock_reset_log(&M);
	assert_int_equal(dvx_mp_reg_add(&reg, p + 100, 200, 0, &b2), 0);
	assert_int_equal(dvx_mock_calls(&M), 0);
	assert_int_equal(b2.addr, (uint64_t)(uintptr_t)p + 100);
	assert_int_equal(b2.rkey[0], b.rkey[0]);
	assert_int_equal(ents[0].refs, 2);
	assert_int_equal(reg.hits, 1);
	assert_int_equal(dvx_mp_reg_find(&reg, p + 4000, 96, &b2), 0);
	assert_int_equal(dvx_mp_reg_find(&reg, p + 4000, 97, &b2), -ENOENT);
	/* reaching past it: another entry, registered on its own */
	assert_int_equal(dvx_mp_reg_add(&reg, p + 4000, 200, 0, NULL), 0);
	assert_int_equal(reg.live, 2);
	/* the other ordering inside a registered range */
	assert_int_equal(dvx_mp_reg_add(&reg, p + 8, 8, DVX_MP_REG_RELAXED, NULL), -EEXIST);
	/* a subset of its rights is a hit; a right it lacks upgrades it once: a new MR with
	 * the union, the old one kept (its keys are out there); a second upgrade is refused */
	dvx_mock_reset_log(&M);
	assert_int_equal(dvx_mp_reg_add(&reg, p + 8, 8, DVX_MP_REG_ATOMIC, NULL), 0);
	assert_int_equal(dvx_mock_calls(&M), 0);
	assert_int_equal(dvx_mp_reg_del(&reg, p + 8), 0);
	{
		uint32_t old_rkey = ents[0].mr[0].rkey;
		int mrs = dvx_mock_live(&M, DVX_MOCK_RES_MR);

		assert_int_equal(dvx_mp_reg_add(&reg, p + 8, 8, DVX_MP_REG_READ, &b2), 0);
		c = dvx_mock_last(&M, DVX_MOCK_OP_MR_REG);
		assert_int_equal(c->access, DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_WRITE |
					    DVX_ACCESS_REMOTE_READ | DVX_ACCESS_REMOTE_ATOMIC);
		assert_int_equal(dvx_mock_live(&M, DVX_MOCK_RES_MR), mrs + 1);
		assert_int_equal(ents[0].prev[0].rkey, old_rkey);	/* still registered */
		assert_true(ents[0].prev[0].live);
		assert_int_equal(b2.rkey[0], ents[0].mr[0].rkey);	/* the new keys */
		assert_int_equal(reg.upgrades, 1);
		assert_int_equal(dvx_mp_reg_del(&reg, p + 8), 0);
	}
	/* a source: local use only (the entry at p + 4000 above) */
	assert_int_equal(ents[1].flags & (DVX_MP_REG_WRITE | DVX_MP_REG_READ | DVX_MP_REG_ATOMIC), 0);
	assert_int_equal(ents[1].mr[0].access, DVX_ACCESS_LOCAL_WRITE);
	assert_int_equal(ents[1].len, 200);
	/* the source entry at p + 4000: a failed upgrade changes nothing; upgraded once to
	 * WRITE, then READ is refused */
	dvx_mock_fail_op(&M, DVX_MOCK_OP_MR_REG, -ENOMEM);
	assert_int_equal(dvx_mp_reg_add(&reg, p + 4000, 8, DVX_MP_REG_WRITE, NULL), -ENOMEM);
	dvx_mock_fail_op(&M, DVX_MOCK_OP_MR_REG, 0);
	assert_false(ents[1].prev[0].live);
	assert_int_equal(ents[1].mr[0].access, DVX_ACCESS_LOCAL_WRITE);
	assert_int_equal(ents[1].refs, 1);
	assert_int_equal(dvx_mp_reg_add(&reg, p + 4000, 8, DVX_MP_REG_WRITE, NULL), 0);
	assert_int_equal(dvx_mp_reg_add(&reg, p + 4000, 8, DVX_MP_REG_READ, NULL), -EACCES);
	assert_non_null(strstr(reg.diag.msg, "upgraded once"));
	assert_int_equal(dvx_mp_reg_del(&reg, p + 4000), 0);
	/* the last reference deregisters (both entries hold two MRs since their upgrades) */
	assert_int_equal(dvx_mp_reg_del(&reg, p + 100), 0);
	assert_int_equal(dvx_mock_live(&M, DVX_MOCK_RES_MR), 4);
	assert_int_equal(dvx_mp_reg_del(&reg, p), 0);
	assert_int_equal(dvx_mock_live(&M, DVX_MOCK_RES_MR), 2);
	assert_int_equal(dvx_mp_reg_del(&reg, p), -ENOENT);
	assert_int_equal(dvx_mp_reg_find(&reg, p, 8, &b2), -ENOENT);
	/* bad arguments */
	assert_int_equal(dvx_mp_reg_add(&reg, p, 0, 0, NULL), -EINVAL);
	assert_int_equal(dvx_mp_reg_add(&reg, NULL, 8, 0, NULL), -EINVAL);
	assert_int_equal(dvx_mp_reg_add(&reg, p, 8, 0x80, NULL), -EINVAL);
	assert_int_equal(dvx_mp_reg_init(&reg, ents, 0, NULL, 1, NULL), -EINVAL);
	down();		/* fini deregisters what is left */
}

static void test_full_and_order(void **state)
{
	uint8_t *p = fx_mem;
	int i;

	(void)state;
	up(1, 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(dvx_mp_reg_add(&reg, p + i * 8192, 4096, 0, NULL), 0);
	assert_int_equal(dvx_mp_reg_add(&reg, p + 5 * 8192, 4096, 0, NULL), -ENOSPC);
	assert_int_equal(reg.diag.err, -ENOSPC);
	/* a hit needs no free entry */
	assert_int_equal(dvx_mp_reg_add(&reg, p + 8192 + 8, 8, 0, NULL), 0);
	/* drop them out of order; a freed entry is used again */
	assert_int_equal(dvx_mp_reg_del(&reg, p + 2 * 8192), 0);
	assert_int_equal(dvx_mp_reg_del(&reg, p), 0);
	assert_int_equal(dvx_mp_reg_add(&reg, p + 5 * 8192, 4096, 0, NULL), 0);
	/* a NIC that refuses to deregister: the entry stays, a second call finishes */
	dvx_mock_fail_op(&M, DVX_MOCK_OP_MR_DEREG, -EIO);
	assert_int_equal(dvx_mp_reg_del(&reg, p + 3 * 8192), -EIO);
	assert_int_equal(reg.live, 3);
	dvx_mock_fail_op(&M, DVX_MOCK_OP_MR_DEREG, 0);
	assert_int_equal(dvx_mp_reg_del(&reg, p + 3 * 8192), 0);
	assert_int_equal(reg.live, 2);
	assert_int_equal(dvx_mp_reg_del(&reg, p + 8192), 0);	/* still referenced */
	assert_int_equal(reg.live, 2);
	assert_int_equal(dvx_mp_reg_del(&reg, p + 8192), 0);
	assert_int_equal(reg.live, 1);
	down();
}

/* the check hook: every MR registration after the first is refused */
static int mr_calls;
static int fail_mr_after_first(void *arg, const struct dvx_mock_call *c)
{
	if (c->op == DVX_MOCK_OP_MR_REG && ++*(int *)arg > 1)
		return -ENOMEM;
	return 0;
}

static void test_gpu(void **state)
{
	struct dvx_gpu_mem m;
	struct dvx_p2p_lbuf b;
	const struct dvx_mock_call *c;
	uint8_t host[64];

	(void)state;
	up(2, 1);
	assert_int_equal(dvx_gpu_mem_alloc(&gpu, 3u << 20, DVX_GPU_MEM_RDMA, &m), 0);
	/* a buffer inside the allocation registers all of it, as a dma-buf on both NICs */
	assert_int_equal(dvx_mp_reg_add(&reg, (void *)(uintptr_t)(m.dptr + 4096), 64, 0, &b), 0);
	assert_int_equal(ents[0].base, m.dptr);
	assert_int_equal(ents[0].len, m.len);
	assert_int_equal(ents[0].flags, DVX_MP_REG_GPU | (DVX_MP_REG_DMABUF << 0) |
					(DVX_MP_REG_DMABUF << 1));
	c = dvx_mock_last(&M, DVX_MOCK_OP_GPU_DMABUF_FD);
	assert_int_equal(c->addr, m.dptr);
	assert_int_equal(c->len, m.len);
	c = dvx_mock_last(&M, DVX_MOCK_OP_MR_REG);
	assert_true(c->dmabuf_fd >= 0);
	assert_int_equal(c->iova, m.dptr);
	assert_int_equal(dvx_mock_count(&M, DVX_MOCK_OP_MR_REG), 2);
	assert_int_equal(dvx_mock_live(&M, DVX_MOCK_RES_FD), 0);	/* the dma-bufs closed */
	assert_int_equal(b.addr, m.dptr + 4096);
	assert_int_equal(b.lkey[1], ents[0].mr[1].lkey);
	/* anywhere else in the allocation: a hit, no call */
	dvx_mock_reset_log(&M);
	assert_int_equal(dvx_mp_reg_add(&reg, (void *)(uintptr_t)(m.dptr + m.len - 8), 8, 0, &b),
			 0);
	assert_int_equal(dvx_mock_calls(&M), 0);
	/* host memory beside it is keyed by its own range, registered plainly */
	assert_int_equal(dvx_mp_reg_add(&reg, host, sizeof(host), 0, NULL), 0);
	assert_int_equal(ents[1].flags, 0);
	assert_int_equal(dvx_mock_last(&M, DVX_MOCK_OP_MR_REG)->dmabuf_fd, -1);
	assert_int_equal(dvx_mp_reg_del(&reg, host), 0);
	assert_int_equal(dvx_mp_reg_del(&reg, (void *)(uintptr_t)m.dptr), 0);
	assert_int_equal(dvx_mp_reg_del(&reg, (void *)(uintptr_t)m.dptr), 0);
	assert_int_equal(reg.live, 0);

	/* the dma-buf path fails on the second NIC: the plain path takes it there */
	dvx_mock_reset_log(&M);
	dvx_mock_fail_at(&M, 6, -EOPNOTSUPP);	/* lookup, fd, reg, close, fd, *reg* */
	assert_int_equal(dvx_mp_reg_add(&reg, (void *)(uintptr_t)m.dptr, 8, 0, NULL), 0);
	dvx_mock_clear_faults(&M);
	assert_int_equal(ents[0].flags, DVX_MP_REG_GPU | (DVX_MP_REG_DMABUF << 0));
	assert_int_equal(dvx_mock_last(&M, DVX_MOCK_OP_MR_REG)->dmabuf_fd, -1);
	assert_int_equal(dvx_mock_live(&M, DVX_MOCK_RES_FD), 0);
	assert_int_equal(dvx_mp_reg_del(&reg, (void *)(uintptr_t)m.dptr), 0);
	/* both paths refused on the second NIC: the first one's MR goes too */
	mr_calls = 0;
	dvx_mock_set_check(&M, fail_mr_after_first, &mr_calls);
	assert_int_equal(dvx_mp_reg_add(&reg, (void *)(uintptr_t)m.dptr, 8, 0, NULL), -ENOMEM);
	dvx_mock_set_check(&M, NULL, NULL);
	assert_int_equal(mr_calls, 3);		/* NIC 0, NIC 1's dma-buf, NIC 1 plain */
	assert_int_equal(reg.live, 0);
	assert_int_equal(dvx_mock_live(&M, DVX_MOCK_RES_MR), 0);
	assert_int_equal(dvx_mock_live(&M, DVX_MOCK_RES_FD), 0);
	assert_int_equal(dvx_gpu_mem_free(&m), 0);
	down();
}

/* ---- every call of a registration failed in turn ---- */

struct sweep_ctx {
	int nnics;
	int gpu;
	struct dvx_gpu_mem m;
	void *ptr;
};

static void sw_setup(void *arg)
{
	struct sweep_ctx *x = arg;

	up(x->nnics, x->gpu);
	if (x->gpu) {
		assert_int_equal(dvx_gpu_mem_alloc(&gpu, 1u << 20, DVX_GPU_MEM_RDMA, &x->m), 0);
		x->ptr = (void *)(uintptr_t)(x->m.dptr + 64);
	} else {
		x->ptr = fx_mem + 64;
	}
}

static int sw_action(void *arg)
{
	struct sweep_ctx *x = arg;
	struct dvx_p2p_lbuf b;
	int err = dvx_mp_reg_add(&reg, x->ptr, 128, 0, &b);

	if (err)
		assert_int_equal(reg.live, 0);
	return err;
}

static void sw_undo(void *arg)
{
	struct sweep_ctx *x = arg;

	assert_int_equal(dvx_mp_reg_del(&reg, x->ptr), 0);
}

static void sw_teardown(void *arg)
{
	struct sweep_ctx *x = arg;

	if (x->gpu)
		assert_int_equal(dvx_gpu_mem_free(&x->m), 0);
	down();
}

static void test_sweep(void **state)
{
	struct sweep_ctx x;
	struct fx_sweep s = { sw_setup, sw_action, sw_undo, sw_teardown, NULL, &x };
	unsigned failed;

	(void)state;
	memset(&x, 0, sizeof(x));
	x.nnics = 2;
	x.gpu = 1;
	failed = fx_sweep_calls(&s);
	/* lookup; per NIC a dma-buf fd, an MR and a close, whose failures the plain path
	 * or close() absorb */
	assert_int_equal(failed, 1);
	gpu_dmabuf = 0;		/* a GPU without dma-bufs: lookup and the plain MRs */
	failed = fx_sweep_calls(&s);
	gpu_dmabuf = 1;
	assert_int_equal(failed, 3);
	x.gpu = 0;
	failed = fx_sweep_calls(&s);
	assert_int_equal(failed, 2);	/* one MR per NIC */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_host),
		cmocka_unit_test(test_full_and_order),
		cmocka_unit_test(test_gpu),
		cmocka_unit_test(test_sweep),
	};

	return cmocka_run_group_tests_name("mp-reg", tests, NULL, NULL);
}
