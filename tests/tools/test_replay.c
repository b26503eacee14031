// SPDX-License-Identifier: MIT
/*
 * tools-replay-test: record and replay (dvx/hal/trace.h, tools/replay.c, docs/trace.md).
 *
 * A run of the core objects on the software NIC is recorded through the tracing
 * backend into memory (two NICs, a connected QP pair: WRITE, READ, SEND/RECV,
 * fetch-add, a WRITE with a bad rkey that ends in an error CQE) and replayed on a fresh
 * software NIC: no divergence. Then divergences are planted in copies of the trace and
 * each must be found: a different CQE, a missing one (a doorbell taken out), an extra
 * one (a CQE record taken out), a command the software NIC refuses, a command the
 * trace says the device refused, a cut or foreign trace. The tracer's own rules (its
 * arguments, a sink that fails, a NIC left open, a doorbell naming no QP) and the two
 * programs (dvx-loop --record, dvx-replay and its exit statuses) are checked too; the
 * programs are found in $DVX_TOOLS_DIR, else in ../tools next to this binary.
 */
#include <errno.h>
#include <limits.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/dvx_test.h"
#include "../../tools/replay.h"

#include <dvx/hal.h>
#include <dvx/mlx5/cmd.h>
#include <dvx/nic/cq.h>
#include <dvx/nic/mr.h>
#include <dvx/nic/nic.h>
#include <dvx/nic/post.h>
#include <dvx/nic/qp.h>
#include <dvx/nic/umem.h>
#include <dvx/hal/sim.h>

static const char *argv0;

/* ---- a sink into memory ---- */

struct buf {
	uint8_t *p;
	size_t len, cap;
	int fail_after;		/* > 0: the n-th write from now fails */
};

static int buf_write(void *arg, const void *data, size_t len)
{
	struct buf *b = arg;

	if (b->fail_after > 0 && --b->fail_after == 0)
		return -1;
	if (b->len + len > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 65536;

		while (cap < b->len + len)
			cap *= 2;
		b->p = realloc(b->p, cap);
		assert_non_null(b->p);
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, len);
	b->len += len;
	return 0;
}

/* ---- a traced run of the core objects on the software NIC ---- */

#define MEM_LEN 65536u
#define DATA_LEN 65536u

struct side {
	struct dvx_nic nic;
	struct dvx_umem um;
	struct dvx_mr mr;
	struct dvx_cq cq;
	struct dvx_qp qp;
	uint8_t *mem, *data;
};

static struct dvx_trace T;
static struct buf trace;	/* the recorded run, made once by the group's setup */

static void side_open(const struct dvx_hal *hal, struct side *s, const char *name)
{
	struct dvx_nic_cfg nc;
	struct dvx_umem_cfg ua;
	struct dvx_mr_cfg ma;
	struct dvx_cq_cfg ca;
	struct dvx_qp_cfg qa;

	memset(s, 0, sizeof(*s));
	memset(&nc, 0, sizeof(nc));
	nc.name = name;
	assert_int_equal(dvx_nic_open(&s->nic, hal, &nc), 0);
	s->mem = aligned_alloc(4096, MEM_LEN);
	s->data = aligned_alloc(4096, DATA_LEN);
	assert_non_null(s->mem);
	assert_non_null(s->data);
	memset(s->mem, 0, MEM_LEN);
	memset(s->data, 0x5a, DATA_LEN);
	memset(&ua, 0, sizeof(ua));
	ua.addr = s->mem;
	ua.len = MEM_LEN;
	assert_int_equal(dvx_umem_reg(&s->nic, &ua, &s->um), 0);
	memset(&ma, 0, sizeof(ma));
	ma.addr = s->data;
	ma.len = DATA_LEN;
	ma.access = DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_WRITE | DVX_ACCESS_REMOTE_READ |
		    DVX_ACCESS_REMOTE_ATOMIC;
	assert_int_equal(dvx_mr_reg(&s->nic, &ma, &s->mr), 0);
	memset(&ca, 0, sizeof(ca));
	ca.depth = 64;
	ca.ring_umem = &s->um;
	ca.ring_offset = 0;
	ca.dbr_umem = &s->um;
	ca.dbr_offset = 0xf000;
	assert_int_equal(dvx_cq_create(&s->nic, &ca, &s->cq), 0);
	memset(&qa, 0, sizeof(qa));
	qa.sq_depth = 64;
	qa.rq_depth = 16;
	qa.rq_max_sge = 1;
	qa.send_cq = &s->cq;
	qa.recv_cq = &s->cq;
	qa.wq_umem = &s->um;
	qa.wq_offset = 0x1000;
	qa.dbr_umem = &s->um;
	qa.dbr_offset = 0xf008;
	assert_int_equal(dvx_qp_create(&s->nic, &qa, &s->qp), 0);
}

static void side_close(struct side *s)
{
	assert_int_equal(dvx_qp_destroy(&s->qp), 0);
	assert_int_equal(dvx_cq_destroy(&s->cq), 0);
	assert_int_equal(dvx_mr_dereg(&s->mr), 0);
	assert_int_equal(dvx_umem_dereg(&s->um), 0);
	assert_int_equal(dvx_nic_close(&s->nic), 0);
	free(s->mem);
	free(s->data);
}

/* the next completion on @s's CQ, the NIC progressing between polls (bounded) */
static int wait_wc(struct side *s, struct dvx_wc *wc)
{
	int i, r;

	for (i = 0; i < 100000; i++) {
		r = dvx_cq_poll(&s->cq, wc);
		if (r)
			return r;
		dvx_hal_nic_progress(&s->nic.hal);
	}
	fail_msg("no completion");
	return 0;
}

static void record_run(void)
{
	static struct side a, b;
	struct dvx_sim_fabric_cfg fc;
	struct dvx_sim_nic_cfg nc;
	struct dvx_trace_sink sk;
	struct dvx_sim_fabric *fab;
	struct dvx_qp_conn ca, cb;
	struct dvx_wc wc;
	void *fmem;
	size_t len;
	int i;

	dvx_sim_fabric_cfg_default(&fc);
	len = dvx_sim_fabric_mem_size(&fc);
	fmem = malloc(len);
	assert_non_null(fmem);
	assert_int_equal(dvx_sim_fabric_init(fmem, len, &fc, &fab), 0);
	for (i = 0; i < 2; i++) {
		dvx_sim_nic_cfg_default(&nc, (unsigned)i);
		assert_int_equal(dvx_sim_add_nic(fab, &nc), i);
	}
	memset(&trace, 0, sizeof(trace));
	sk.write = buf_write;
	sk.arg = &trace;
	assert_int_equal(dvx_trace_init(&T, dvx_sim_hal(fab), &sk), 0);
	side_open(dvx_trace_hal(&T), &a, "sim_0");
	side_open(dvx_trace_hal(&T), &b, "sim_1");
	assert_int_equal(dvx_qp_export(&a.qp, &ca), 0);
	assert_int_equal(dvx_qp_export(&b.qp, &cb), 0);
	assert_int_equal(dvx_qp_connect(&a.qp, &cb, NULL), 0);
	assert_int_equal(dvx_qp_connect(&b.qp, &ca, NULL), 0);

	/* WRITE, READ, SEND/RECV, fetch-add */
	assert_int_equal(dvx_qp_post_write(&a.qp, 1, (uintptr_t)a.data, a.mr.lkey, 4096,
					   (uintptr_t)b.data, b.mr.rkey, DVX_POST_SIGNALED), 0);
	assert_int_equal(wait_wc(&a, &wc), 1);
	assert_int_equal(dvx_qp_post_read(&a.qp, 2, (uintptr_t)a.data + 8192, a.mr.lkey, 64,
					  (uintptr_t)b.data, b.mr.rkey, DVX_POST_SIGNALED), 0);
	assert_int_equal(wait_wc(&a, &wc), 1);
	assert_int_equal(dvx_qp_post_recv(&b.qp, 3, (uintptr_t)b.data + 16384, b.mr.lkey, 256,
					  0), 0);
	assert_int_equal(dvx_qp_post_send(&a.qp, 4, (uintptr_t)a.data, a.mr.lkey, 100,
					  DVX_POST_SIGNALED), 0);
	assert_int_equal(wait_wc(&a, &wc), 1);
	assert_int_equal(wait_wc(&b, &wc), 1);
	assert_int_equal(wc.byte_len, 100);
	assert_int_equal(dvx_qp_post_fetch_add(&a.qp, 5, (uintptr_t)b.data + 32768, b.mr.rkey,
					       1, (uintptr_t)a.data + 40960, a.mr.lkey,
					       DVX_POST_SIGNALED), 0);
	assert_int_equal(wait_wc(&a, &wc), 1);
	/* a bad rkey: an error CQE, the QP in error */
	assert_int_equal(dvx_qp_post_write(&a.qp, 6, (uintptr_t)a.data, a.mr.lkey, 8,
					   (uintptr_t)b.data, b.mr.rkey ^ 0x7700,
					   DVX_POST_SIGNALED), 0);
	assert_int_equal(wait_wc(&a, &wc), -EPERM);

	side_close(&b);
	side_close(&a);
	assert_int_equal(dvx_trace_fini(&T), 0);
	assert_true(T.records > 50);
	assert_int_equal(T.lost, 0);
	assert_int_equal(dvx_sim_fini(fab), 0);
	free(fmem);
}

static int group_setup(void **state)
{
	(void)state;
	record_run();
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	free(trace.p);
	return 0;
}

/* ---- walking and editing a trace ---- */

struct rec {
	size_t off;		/* of the record header */
	unsigned type;
	uint32_t len;
	const uint8_t *p;	/* payload */
};

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* the @nth record (from 0) of @type for which @pick says yes; fails when there is none */
static struct rec find_rec(const uint8_t *t, size_t len, unsigned type,
			   int (*pick)(const struct rec *r), unsigned nth)
{
	size_t off = DVX_TRACE_FILE_HDR_BYTES;
	struct rec r;

	while (off + DVX_TRACE_REC_HDR_BYTES <= len) {
		r.off = off;
		r.type = (unsigned)(t[off] | t[off + 1] << 8);
		r.len = le32(t + off + 4);
		r.p = t + off + DVX_TRACE_REC_HDR_BYTES;
		off += DVX_TRACE_REC_HDR_BYTES + r.len;
		if (r.type == type && (!pick || pick(&r)) && nth-- == 0)
			return r;
	}
	fail_msg("no record of type %u", type);
	return r;
}

/* a CALL of obj_create whose mailbox is CREATE_QP / CREATE_CQ */
static int is_create_qp(const struct rec *r)
{
	return r->p[0] == DVX_TRACE_OP_OBJ_CREATE &&
	       dvx_get_be32(r->p + DVX_TRACE_CALL_BYTES) >> 16 == DVX_MLX5_CMD_CREATE_QP;
}

static int is_create_cq(const struct rec *r)
{
	return r->p[0] == DVX_TRACE_OP_OBJ_CREATE &&
	       dvx_get_be32(r->p + DVX_TRACE_CALL_BYTES) >> 16 == DVX_MLX5_CMD_CREATE_CQ;
}

/* a copy of the trace to plant a divergence in */
static uint8_t *copy(size_t *len)
{
	uint8_t *c = malloc(trace.len);

	assert_non_null(c);
	memcpy(c, trace.p, trace.len);
	*len = trace.len;
	return c;
}

/* @c without the record at @r */
static void cut(uint8_t *c, size_t *len, const struct rec *r)
{
	size_t n = DVX_TRACE_REC_HDR_BYTES + r->len;

	memmove(c + r->off, c + r->off + n, *len - r->off - n);
	*len -= n;
}

/* replay @c, expecting @want; its output must contain @says */
static void expect(const uint8_t *c, size_t len, int want, const char *says)
{
	char *text = NULL;
	size_t tlen = 0;
	FILE *out = open_memstream(&text, &tlen);
	int rc;

	assert_non_null(out);
	rc = replay_run(c, len, 0, out, NULL);
	fclose(out);
	if (rc != want || (says && !strstr(text, says)))
		fail_msg("replay answered %d (want %d), output:\n%s", rc, want, text);
	free(text);
}

/* ---- the tests ---- */

static void test_round_trip(void **state)
{
	struct replay_stats st;
	FILE *out = tmpfile();

	(void)state;
	assert_non_null(out);
	assert_int_equal(replay_run(trace.p, trace.len, 0, out, &st), REPLAY_SAME);
	fclose(out);
	assert_int_equal(st.records, T.records);
	assert_true(st.calls > 30);
	assert_true(st.doorbells >= 5);		/* one per post (signaled, one by one) */
	assert_true(st.wqebbs >= 5);
	assert_int_equal(st.recvs, 1);
	assert_int_equal(st.cqes, 6);		/* 5 on a's CQ (one an error), 1 on b's */
	/* and printed: every record, the WQEs and CQEs decoded, nothing replayed */
	out = tmpfile();
	assert_int_equal(replay_run(trace.p, trace.len, REPLAY_DUMP, out, &st), REPLAY_SAME);
	fclose(out);
	expect(trace.p, trace.len, REPLAY_SAME, NULL);
}

static void test_different_cqe(void **state)
{
	size_t len;
	uint8_t *c = copy(&len);
	struct rec r = find_rec(c, len, DVX_TRACE_REC_CQE, NULL, 0);

	(void)state;
	/* the first CQE (the WRITE's) now says the device read 64 bytes back */
	((uint8_t *)r.p)[8 + 56] = DVX_MLX5_OPCODE_RDMA_READ;	/* sop_drop_qpn opcode */
	expect(c, len, REPLAY_DIVERGED, "different CQE 0");
	free(c);

	/* the error CQE with another syndrome */
	c = copy(&len);
	r = find_rec(c, len, DVX_TRACE_REC_CQE, NULL, 5);
	assert_int_equal(r.p[8 + 55], 0x13);	/* REMOTE_ACCESS_ERR */
	((uint8_t *)r.p)[8 + 55] = 0x05;
	expect(c, len, REPLAY_DIVERGED, "different CQE");
	free(c);
}

/* the trace without its @nth record of @type replays to the divergence @says */
static void without(unsigned type, unsigned nth, const char *says)
{
	size_t len;
	uint8_t *c = copy(&len);
	struct rec r = find_rec(c, len, type, NULL, nth);

	cut(c, &len, &r);
	expect(c, len, REPLAY_DIVERGED, says);
	free(c);
}

static void test_missing_and_extra(void **state)
{
	(void)state;
	/* the first doorbell never rung: its WRITE's CQE never comes */
	without(DVX_TRACE_REC_DOORBELL, 0, "missing completion");
	/* the last CQE never recorded: the software NIC's is one too many */
	without(DVX_TRACE_REC_CQE, 5, "an extra completion");
}

static void test_refused(void **state)
{
	size_t len;
	uint8_t *c = copy(&len);
	struct rec r = find_rec(c, len, DVX_TRACE_REC_CALL, is_create_qp, 0);
	uint8_t *in = (uint8_t *)r.p + DVX_TRACE_CALL_BYTES, *out;

	(void)state;
	/* a QP the device took, with a log_msg_max the software NIC's caps refuse */
	dvx_mlx5_set(DVX_MLX5_QPC_IN(in), DVX_MLX5_QPC_LOG_MSG_MAX, 31);
	expect(c, len, REPLAY_DIVERGED, "CREATE_QP refused by the software NIC: BAD_PARAM");
	free(c);

	/* a CQ the trace says the device refused (BAD_PARAM), which the software NIC takes */
	c = copy(&len);
	r = find_rec(c, len, DVX_TRACE_REC_CALL, is_create_cq, 0);
	out = (uint8_t *)r.p + DVX_TRACE_CALL_BYTES + le32(r.p + 48);
	put_le32((uint8_t *)r.p + 4, (uint32_t)-EREMOTEIO);		/* the call's ret */
	out[0] = 0x03;							/* its status */
	expect(c, len, REPLAY_DIVERGED, "CREATE_CQ accepted by the software NIC; the device "
					"refused it: BAD_PARAM");
	free(c);
}

static void test_bad_traces(void **state)
{
	size_t len;
	uint8_t *c = copy(&len);

	(void)state;
	expect(c, len - 3, REPLAY_BAD_TRACE, "cut short");
	expect(c, 7, REPLAY_BAD_TRACE, "not a dvx trace");
	c[8] = 2;					/* format version 2 */
	expect(c, len, REPLAY_BAD_TRACE, "version 2");
	c[8] = 1;
	c[0] = 'X';
	expect(c, len, REPLAY_BAD_TRACE, "not a dvx trace");
	free(c);
}

/* the tracer's rules: its arguments, a sink that fails, a NIC left open, a stray doorbell */
static void test_tracer(void **state)
{
	struct dvx_sim_fabric_cfg fc;
	struct dvx_sim_nic_cfg nc;
	struct dvx_sim_fabric *fab;
	struct dvx_sim_db_fault f;
	struct dvx_trace_sink sk;
	struct dvx_hal_nic dev;
	struct dvx_hal_uar uar;
	struct buf b;
	void *fmem;
	size_t len;

	(void)state;
	memset(&b, 0, sizeof(b));
	sk.write = buf_write;
	sk.arg = &b;
	assert_int_equal(dvx_trace_init(NULL, dvx_hal_host(), &sk), -EINVAL);
	assert_int_equal(dvx_trace_init(&T, dvx_hal_host(), &sk), -EINVAL);	/* no NIC table */
	assert_null(dvx_trace_hal(NULL));
	assert_int_equal(dvx_trace_fini(NULL), -EINVAL);

	dvx_sim_fabric_cfg_default(&fc);
	len = dvx_sim_fabric_mem_size(&fc);
	fmem = malloc(len);
	assert_non_null(fmem);
	assert_int_equal(dvx_sim_fabric_init(fmem, len, &fc, &fab), 0);
	dvx_sim_nic_cfg_default(&nc, 0);
	assert_int_equal(dvx_sim_add_nic(fab, &nc), 0);

	b.fail_after = 1;					/* the header is lost */
	assert_int_equal(dvx_trace_init(&T, dvx_sim_hal(fab), &sk), -EIO);

	b.fail_after = 0;
	assert_int_equal(dvx_trace_init(&T, dvx_sim_hal(fab), &sk), 0);
	memset(&dev, 0, sizeof(dev));
	assert_int_equal(dvx_hal_nic_open(dvx_trace_hal(&T), "sim_9", &dev), -ENODEV);
	assert_int_equal(dvx_hal_nic_open(dvx_trace_hal(&T), "sim_0", &dev), 0);
	assert_string_equal(dev.info.name, "sim_0");
	assert_int_equal(dvx_trace_fini(&T), -EBUSY);		/* the NIC is open */

	/* a doorbell naming no QP: counted, recorded, passed on (the sim faults it) */
	assert_int_equal(dvx_hal_uar_alloc(&dev, DVX_UAR_NC_DEDICATED, &uar), 0);
	assert_ptr_equal(uar.base_addr, T.uar[0].shadow);	/* the tracer's page */
	__atomic_store_n((uint64_t *)uar.reg_addr, 0x1234000000abcd00ull, __ATOMIC_RELEASE);
	dvx_hal_nic_progress(&dev);
	assert_int_equal(T.unknown_db, 1);
	assert_int_equal(dvx_sim_db_faults(fab, &f), 1);
	assert_int_equal(f.kind, DVX_SIM_DBF_QPN);

	/* a sink that fails from now on: the trace is incomplete, fini says so */
	b.fail_after = 1;
	assert_int_equal(dvx_hal_uar_free(&dev, &uar), 0);
	assert_int_equal(dvx_hal_nic_close(&dev), 0);
	assert_true(T.lost >= 1);
	assert_int_equal(dvx_trace_fini(&T), -EIO);
	assert_int_equal(dvx_sim_fini(fab), 0);
	free(fmem);
	free(b.p);
}

/* ---- the programs ---- */

static char tools[PATH_MAX];

static int find_tools(void)
{
	return dvx_test_tools_dir(argv0, tools, sizeof(tools));
}

/* run "@prog @args" through the shell: its exit status; stdout and stderr in @out */
static int run(const char *prog, const char *args, char *out, size_t n)
{
	char cmd[3 * PATH_MAX];
	FILE *p;
	size_t got;
	int st;

	snprintf(cmd, sizeof(cmd), "'%s/%s' %s 2>&1", tools, prog, args);
	p = popen(cmd, "r");
	assert_non_null(p);
	got = fread(out, 1, n - 1, p);
	out[got] = '\0';
	st = pclose(p);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

/* run, and say what the program printed when its exit status is not @want */
static void runs(const char *prog, const char *args, int want, char *out, size_t n)
{
	int rc = run(prog, args, out, n);

	if (rc != want)
		fail_msg("%s %s: exit %d, %d wanted; it printed:\n%s", prog, args, rc, want, out);
}

static void test_programs(void **state)
{
	static char out[1 << 20];
	char path[PATH_MAX], args[PATH_MAX + 64], bin[PATH_MAX + 16];
	const char *tmp = getenv("TMPDIR");
	int fd;

	(void)state;
	if (find_tools()) {
		print_message("cannot locate the tools directory; set DVX_TOOLS_DIR\n");
		skip();
	}
	snprintf(bin, sizeof(bin), "%.*s/dvx-replay", PATH_MAX - 16, tools);
	if (access(bin, X_OK)) {
		print_message("%s not built ('make tools', or set DVX_TOOLS_DIR)\n", bin);
		skip();
	}
	snprintf(path, sizeof(path), "%s/dvx-replay-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);

	/* the CI round trip: a traced dvx-loop run on the software NIC, replayed */
	snprintf(args, sizeof(args), "--iters 5 --record '%s'", path);
	runs("dvx-loop", args, 0, out, sizeof(out));
	snprintf(args, sizeof(args), "'%s'", path);
	runs("dvx-replay", args, 0, out, sizeof(out));
	assert_non_null(strstr(out, ": no divergence"));
	snprintf(args, sizeof(args), "--dump '%s'", path);
	runs("dvx-replay", args, 0, out, sizeof(out));
	assert_non_null(strstr(out, "obj_create ret 0"));
	assert_non_null(strstr(out, "CREATE_QP"));
	assert_non_null(strstr(out, "opcode: RDMA_WRITE"));	/* a WQE, decoded */
	assert_non_null(strstr(out, "cqe cqn"));
	snprintf(args, sizeof(args), "- < '%s'", path);		/* standard input */
	runs("dvx-replay", args, 0, out, sizeof(out));

	/* the exit statuses of docs/tools.md */
	runs("dvx-replay", "--version", 0, out, sizeof(out));
	assert_non_null(strstr(out, "dvx-replay (dvx) "));
	runs("dvx-replay", "--help", 0, out, sizeof(out));
	assert_non_null(strstr(out, "--dump"));
	runs("dvx-replay", "", 2, out, sizeof(out));
	runs("dvx-replay", "--frobnicate x", 2, out, sizeof(out));
	runs("dvx-replay", "a b", 2, out, sizeof(out));
	runs("dvx-replay", "/nonexistent/dvx-trace", 1, out, sizeof(out));
	runs("dvx-replay", "/dev/null", 1, out, sizeof(out));
	assert_non_null(strstr(out, "not a dvx trace"));
	runs("dvx-loop", "--record", 2, out, sizeof(out));
	unlink(path);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_different_cqe),
		cmocka_unit_test(test_missing_and_extra),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_bad_traces),
		cmocka_unit_test(test_tracer),
		cmocka_unit_test(test_programs),
	};

	(void)argc;
	argv0 = argv[0];
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
