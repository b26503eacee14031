// SPDX-License-Identifier: MIT
/*
 * tests/msg/test_msg_mock.c - the messaging layer's init paths under fault injection on
 * the mock hal (two ConnectX-7 models, the handshake's sockets through the mock too):
 * dvx_msg_init() of two contexts, then listen, connect and accept until both
 * communicators exist (a second connection joins the first one's shared set, or gets
 * its own QPs), with every hal call failing in turn (dvx_test_sweep()): each run
 * returns an error and leaves nothing live, or absorbs the failure and succeeds; no run
 * may hang (the absorbed ones are the clock, which cannot fail, sock_accept, whose
 * pending connection the next pass takes, and sock_close, which closes anyway). Plus
 * the DEVX commands a connection costs with and without sharing.
 */
#include <errno.h>

#include "../lib/dvx_test.h"

#include <dvx/msg/msg.h>
#include <dvx/mlx5/cmd.h>
#include <dvx/testing/cx7.h>
#include <dvx/testing/sweep.h>

#define LOOP_MAX 20000

static struct dvx_mock mock;

struct side {
	struct dvx_nic nic;
	struct dvx_msg m;
	void *state, *fifo, *rings;
	uint64_t sl, fl, rl;
};

struct ctx {
	struct side s[2];
	struct dvx_msg_cfg cfg;
	int conns;		/* connections the action makes */
	struct dvx_msg_comm *send[2], *recv[2];
	int hung;		/* a run that neither finished nor failed */
};

static struct ctx C;

static void sides_open(void *p)
{
	struct ctx *c = p;
	int i;

	for (i = 0; i < 2; i++) {
		struct dvx_nic_cfg na;
		struct dvx_msg_cfg mc = c->cfg;
		struct dvx_mem_req a, b, d;

		memset(&c->s[i].nic, 0, sizeof(c->s[i].nic));
		memset(&na, 0, sizeof(na));
		na.name = i ? "mlx5_1" : "mlx5_0";
		assert_int_equal(dvx_nic_open(&c->s[i].nic, dvx_mock_hal(&mock), &na), 0);
		mc.nnics = 1;
		mc.nics[0] = &c->s[i].nic;
		mc.hal = dvx_mock_hal(&mock);
		assert_int_equal(dvx_msg_mem_req(&mc, &a, &b, &d), 0);
		if (!c->s[i].state) {
			c->s[i].state = dvx_test_alloc(a.bytes, 0);
			assert_int_equal(posix_memalign(&c->s[i].fifo, 4096, b.bytes), 0);
			assert_int_equal(posix_memalign(&c->s[i].rings, 4096, d.bytes), 0);
			c->s[i].sl = a.bytes;
			c->s[i].fl = b.bytes;
			c->s[i].rl = d.bytes;
		}
	}
}

static void sides_close(void *p)
{
	struct ctx *c = p;
	int i;

	for (i = 0; i < 2; i++)
		assert_int_equal(dvx_nic_close(&c->s[i].nic), 0);
}

static void msg_down(struct ctx *c)
{
	int i;

	for (i = 0; i < 2; i++)
		if (c->s[i].m.live == DVX_LIVE)
			dvx_msg_fini(&c->s[i].m);
	memset(c->send, 0, sizeof(c->send));
	memset(c->recv, 0, sizeof(c->recv));
}

/* init both, then c->conns connections from side 0 to side 1 */
static int action(void *p)
{
	struct ctx *c = p;
	struct dvx_msg_handle h;
	struct dvx_msg_comm *l = NULL;
	int i, k, err = 0;

	for (i = 0; i < 2; i++) {
		struct dvx_msg_cfg mc = c->cfg;

		memset(&c->s[i].m, 0, sizeof(c->s[i].m));
		mc.nnics = 1;
		mc.nics[0] = &c->s[i].nic;
		mc.hal = dvx_mock_hal(&mock);
		err = dvx_msg_init(&c->s[i].m, &mc, c->s[i].state, c->s[i].sl, c->s[i].fifo,
				   c->s[i].fl, c->s[i].rings, c->s[i].rl);
		if (err)
			goto fail;
	}
	for (k = 0; k < c->conns; k++) {
		err = dvx_msg_listen(&c->s[1].m, 0, &h, &l);
		if (err)
			goto fail;
		for (i = 0; !c->send[k] || !c->recv[k]; i++) {
			if (!c->send[k]) {
				err = dvx_msg_connect(&c->s[0].m, 0, 0, &h, &c->send[k]);
				if (err)
					goto fail;
			}
			if (!c->recv[k]) {
				err = dvx_msg_accept(l, &c->recv[k]);
				if (err)
					goto fail;
			}
			if (i == LOOP_MAX) {
				c->hung++;
				err = -ETIMEDOUT;
				goto fail;
			}
		}
		dvx_msg_close(l);
		l = NULL;
	}
	return 0;
fail:
	msg_down(c);	/* the failed call is behind us: these calls succeed */
	return err;
}

static void undo(void *p)
{
	struct ctx *c = p;
	int k;

	for (k = 0; k < c->conns; k++) {
		dvx_msg_close(c->send[k]);
		dvx_msg_close(c->recv[k]);
	}
	msg_down(c);
}

static void sweep(uint32_t groups, uint32_t flags, int conns)
{
	struct dvx_test_sweep s = { sides_open, action, undo, sides_close, &C, 0, 5000 };
	struct dvx_test_sweep_report rep;
	int err, i;

	memset(&C, 0, sizeof(C));
	assert_int_equal(dvx_mock_init(&mock), 0);
	assert_true(dvx_test_mock_add_cx7(&mock, "mlx5_0", "0000:03:00.0") >= 0);
	assert_true(dvx_test_mock_add_cx7(&mock, "mlx5_1", "0000:04:00.0") >= 0);
	C.cfg.max_comms = 8;
	C.cfg.max_pending = 4;
	C.cfg.max_reqs = 4;
	C.cfg.max_recvs = 2;
	C.cfg.groups = groups;
	C.cfg.flags = flags;
	C.conns = conns;
	err = dvx_test_sweep(&mock, &s, &rep);
	if (err)
		fail_msg("call %u (ret %d): %s", rep.bad_call, rep.bad_ret, rep.why);
	assert_int_equal(C.hung, 0);
	assert_int_equal(dvx_mock_live_total(&mock), 0);
	print_message("groups %u flags %u, %d connection(s): %u runs, %u failed, %u absorbed\n",
		      groups, flags, conns, rep.runs, rep.failed, rep.absorbed);
	for (i = 0; i < 2; i++) {
		dvx_test_free(C.s[i].state);
		free(C.s[i].fifo);
		free(C.s[i].rings);
	}
}

static void test_sweep_private(void **state)
{
	(void)state;
	sweep(0, 0, 1);
}

static void test_sweep_shared(void **state)
{
	(void)state;
	sweep(1, 0, 2);	/* the second connection joins the first one's set */
}

static void test_sweep_flush(void **state)
{
	(void)state;
	sweep(0, DVX_MSG_F_FLUSH, 1);
}

/* what a connection costs in DEVX commands: a private one makes its CQ and QP and
 * moves the QP to RTS; one that joins a shared set sends no command at all */
static void test_commands(void **state)
{
	int before_cq, before_qp, before_mod, cq, qp, mod;

	(void)state;
	memset(&C, 0, sizeof(C));
	assert_int_equal(dvx_mock_init(&mock), 0);
	assert_true(dvx_test_mock_add_cx7(&mock, "mlx5_0", "0000:03:00.0") >= 0);
	assert_true(dvx_test_mock_add_cx7(&mock, "mlx5_1", "0000:04:00.0") >= 0);
	C.cfg.max_comms = 8;
	C.cfg.max_reqs = 4;
	C.cfg.max_recvs = 2;
	C.cfg.groups = 1;
	C.conns = 1;
	sides_open(&C);
	cq = dvx_mock_capture(&mock, DVX_MLX5_CMD_CREATE_CQ, -1, NULL, 0, NULL, 0);
	qp = dvx_mock_capture(&mock, DVX_MLX5_CMD_CREATE_QP, -1, NULL, 0, NULL, 0);
	mod = dvx_mock_capture(&mock, DVX_MLX5_CMD_RTR2RTS_QP, -1, NULL, 0, NULL, 0);
	assert_true(cq >= 0 && qp >= 0 && mod >= 0);
	assert_int_equal(action(&C), 0);
	before_cq = (int)mock.capture[cq].count;
	before_qp = (int)mock.capture[qp].count;
	before_mod = (int)mock.capture[mod].count;
	assert_int_equal(before_cq, 2);	/* one CQ per end */
	assert_int_equal(before_qp, 2);
	assert_int_equal(before_mod, 2);
	{
		struct dvx_msg_handle h;
		struct dvx_msg_comm *l, *s2 = NULL, *r2 = NULL;
		int i;

		assert_int_equal(dvx_msg_listen(&C.s[1].m, 0, &h, &l), 0);
		for (i = 0; (!s2 || !r2) && i < LOOP_MAX; i++) {
			if (!s2)
				assert_int_equal(dvx_msg_connect(&C.s[0].m, 0, 0, &h, &s2), 0);
			if (!r2)
				assert_int_equal(dvx_msg_accept(l, &r2), 0);
		}
		assert_non_null(s2);
		assert_non_null(r2);
		assert_int_equal((int)mock.capture[cq].count, before_cq);
		assert_int_equal((int)mock.capture[qp].count, before_qp);
		assert_int_equal((int)mock.capture[mod].count, before_mod);
		dvx_msg_close(l);
		dvx_msg_close(s2);
		dvx_msg_close(r2);
	}
	undo(&C);
	sides_close(&C);
	dvx_mock_capture_clear(&mock);
	assert_int_equal(dvx_mock_live_total(&mock), 0);
	dvx_test_free(C.s[0].state);
	dvx_test_free(C.s[1].state);
	free(C.s[0].fifo);
	free(C.s[1].fifo);
	free(C.s[0].rings);
	free(C.s[1].rings);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sweep_private),
		cmocka_unit_test(test_sweep_shared),
		cmocka_unit_test(test_sweep_flush),
		cmocka_unit_test(test_commands),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
