// SPDX-License-Identifier: MIT
/*
 * tests/msg/test_msg.c - the messaging layer (dvx/msg/msg.h) between contexts driven
 * from one thread on the software NIC: connect and accept, isend/irecv of every size,
 * several buffers per irecv matched by tag, messages larger than the receive, striping
 * over several QPs, the sharing pool's roles and refcounts, closing in any order, and
 * the invariant checker after every step.
 */
#include <errno.h>

#include "../lib/dvx_test.h"
#include "mworld.h"
#include "../../core/msg/msg_priv.h"	/* white box: flip a context's flags */

#define T_OUT (10 * MW_SEC)

static void fill(uint8_t *p, uint64_t len, uint32_t seed)
{
	mw_fill(p, len, seed);
}

static void verify(const uint8_t *p, uint64_t len, uint32_t seed)
{
	int64_t i = mw_verify(p, len, seed);

	if (i >= 0) {
		fprintf(stderr, "byte %lld: %02x, want %02x\n", (long long)i, p[i],
			mw_pat(seed, (uint64_t)i));
		fail();
	}
}

static void cfg_base(struct dvx_msg_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->max_comms = 32;
	c->max_reqs = 8;
	c->max_recvs = 4;
}

/* one message of @len from rank 0 to rank 1 over @s/@r, checked */
static void one_message(struct mw *w, struct dvx_msg_comm *s, struct dvx_msg_comm *r,
			uint64_t len, uint32_t seed)
{
	uint8_t *src = w->r[0].buf, *dst = w->r[1].buf;
	struct dvx_mr *rm = &w->r[1].mr;
	struct dvx_msg_req *sq, *rq;
	void *bufs[1] = { dst };
	size_t sizes[1] = { len }, got[1] = { 99 }, sent[1] = { 99 };
	uint32_t tags[1] = { 7 };

	fill(src, len, seed);
	memset(dst, 0, len + 1);
	assert_int_equal(mw_irecv(w, r, 1, bufs, sizes, tags, &rm, &rq, T_OUT), 0);
	assert_int_equal(mw_isend(w, s, src, len, 7, &w->r[0].mr, &sq, T_OUT), 0);
	assert_int_equal(mw_wait(w, sq, sent, T_OUT), 0);
	assert_int_equal(mw_wait(w, rq, got, T_OUT), 0);
	assert_int_equal(sent[0], len);
	assert_int_equal(got[0], len);
	verify(dst, len, seed);
	assert_int_equal(dst[len], 0);
	assert_int_equal(mw_check(w), 0);
}

static void test_basic_sizes(void **state)
{
	static const uint64_t sizes[] = { 0, 1, 8, 63, 4096, 65535, 65536, 1u << 20 };
	struct dvx_msg_cfg c;
	struct mw w;
	struct dvx_msg_comm *s, *r;
	struct dvx_msg_stats st;
	uint32_t i;

	(void)state;
	cfg_base(&c);
	assert_int_equal(mw_init(&w, 2, &c, 2u << 20, 0), 0);
	assert_int_equal(mw_pair(&w, 0, 1, 0, &s, &r), 0);
	assert_non_null(s);
	assert_non_null(r);
	assert_int_equal(mw_check(&w), 0);
	dvx_msg_get_stats(&w.r[0].m, &st);
	assert_int_equal(st.sets, 1);
	assert_int_equal(st.shared_sets, 0);
	assert_int_equal(st.privates, 1);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		one_message(&w, s, r, sizes[i], i + 1);
	/* many more than the FIFO has slots: it wraps */
	for (i = 0; i < 40; i++)
		one_message(&w, s, r, 100 + i, 50 + i);
	assert_int_equal(dvx_msg_close(s), 0);
	assert_int_equal(dvx_msg_close(r), 0);
	assert_int_equal(mw_check(&w), 0);
	assert_int_equal(mw_settle(&w), 0);	/* the sender goes once the marker is in */
	dvx_msg_get_stats(&w.r[0].m, &st);
	assert_int_equal(st.sets, 0);
	assert_int_equal(st.comms, 0);
	assert_int_equal(mw_fini(&w), 0);
}

/* what a new user tries: any max_recvs from 1 to 8 (the default depths are rounded up
 * to powers of two), and every refused configuration names its cause in nics[0]'s
 * diagnostic */
static void cfg_refused(struct dvx_msg_cfg *c, const char *what)
{
	struct dvx_mem_req a, b, d;
	const struct dvx_diag *g = &c->nics[0]->hal.diag;

	assert_int_equal(dvx_msg_mem_req(c, &a, &b, &d), -EINVAL);
	assert_int_equal(g->err, -EINVAL);
	assert_int_equal(g->src, DVX_DIAG_ARG);
	assert_string_equal(g->op, "dvx_msg_mem_req");
	if (!strstr(g->msg, what))
		fail_msg("diag \"%s\" does not name \"%s\"", g->msg, what);
	memset(&c->nics[0]->hal.diag, 0, sizeof(*g));
}

static void test_cfg_odd_recvs_and_diag(void **state)
{
	static const size_t lens[3] = { 5, 3000, 0 };
	static const uint32_t tags[3] = { 1, 2, 3 };
	struct dvx_msg_cfg c, k;
	struct dvx_mem_req a, b, d;
	struct mw w;
	struct dvx_msg_comm *s, *r;
	struct dvx_msg_req *rq, *sq[3];
	struct dvx_mr *mrs[3];
	struct dvx_msg *m2;
	struct dvx_mr mr2;
	void *bufs[3];
	size_t sizes[3], got[3];
	uint32_t i, n;
	int err;

	(void)state;
	cfg_base(&c);
	c.max_recvs = 3;
	assert_int_equal(mw_init(&w, 2, &c, 1u << 20, 0), 0);
	k = c;
	k.nnics = 1;
	k.nics[0] = &w.r[0].nic;
	for (n = 1; n <= DVX_MSG_MAX_RECVS; n++) {
		k.max_recvs = n;
		assert_int_equal(dvx_msg_mem_req(&k, &a, &b, &d), 0);
	}
	/* a three-buffer irecv over max_recvs 3 */
	assert_int_equal(mw_pair(&w, 0, 1, 0, &s, &r), 0);
	for (i = 0; i < 3; i++) {
		bufs[i] = w.r[1].buf + i * 4096;
		sizes[i] = 4096;
		mrs[i] = &w.r[1].mr;
		fill(w.r[0].buf + i * 4096, lens[i], 40 + i);
	}
	assert_int_equal(mw_irecv(&w, r, 3, bufs, sizes, tags, mrs, &rq, T_OUT), 0);
	for (i = 0; i < 3; i++)
		assert_int_equal(mw_isend(&w, s, w.r[0].buf + i * 4096, lens[i], tags[i],
					  &w.r[0].mr, &sq[i], T_OUT),
				 0);
	for (i = 0; i < 3; i++)
		assert_int_equal(mw_wait(&w, sq[i], NULL, T_OUT), 0);
	assert_int_equal(mw_wait(&w, rq, got, T_OUT), 0);
	for (i = 0; i < 3; i++) {
		assert_int_equal(got[i], lens[i]);
		verify(bufs[i], lens[i], 40 + i);
	}
	assert_int_equal(mw_check(&w), 0);
	/* a live communicator's refused arguments name their cause in its NIC's record */
	{
		void *b4[4] = { bufs[0], bufs[1], bufs[2], bufs[0] };
		size_t z4[4] = { 8, 8, 8, 8 };
		uint32_t t4[4] = { 1, 2, 3, 4 };
		struct dvx_mr *m4[4] = { mrs[0], mrs[1], mrs[2], mrs[0] };
		struct dvx_msg_req *q = NULL;

		assert_int_equal(dvx_msg_irecv(r, 4, b4, z4, t4, m4, &q), -EINVAL);
		assert_non_null(strstr(w.r[1].nic.hal.diag.msg, "n 4"));
		assert_string_equal(w.r[1].nic.hal.diag.op, "dvx_msg_irecv");
		assert_int_equal(dvx_msg_isend(s, w.r[0].buf + w.buf_len - 4, 8, 1, &w.r[0].mr, &q),
				 -EINVAL);
		assert_non_null(strstr(w.r[0].nic.hal.diag.msg, "outside its MR"));
		assert_int_equal(dvx_msg_isend(s, w.r[0].buf, 8, 1, &w.r[1].mr, &q), -EINVAL);
		assert_non_null(strstr(w.r[0].nic.hal.diag.msg, "not live on the communicator's NIC"));
		assert_null(q);
	}

	/* refusals, each with its reason */
	k.max_recvs = 9;
	cfg_refused(&k, "max_recvs 9");
	k.max_recvs = 3;
	k.max_reqs = 48;
	cfg_refused(&k, "max_reqs 48");
	k.max_reqs = 8;
	k.max_pending = 1;
	cfg_refused(&k, "max_pending 1");
	k.max_pending = 0;
	k.sq_depth = 100;
	cfg_refused(&k, "sq_depth 100");
	k.sq_depth = 0;
	k.rq_depth = 65536;
	cfg_refused(&k, "rq_depth 65536");
	k.rq_depth = 4096;
	k.depth_mult = 16;
	cfg_refused(&k, "shared QP's depths");
	k.rq_depth = 0;
	k.depth_mult = 17;
	cfg_refused(&k, "depth_mult 17");
	k.depth_mult = 0;
	k.flags = 1u << 7;
	cfg_refused(&k, "unknown flags 0x80");
	k.flags = 0;
	k.groups = DVX_MSG_MAX_GROUPS + 1;
	cfg_refused(&k, "groups");
	k.groups = 0;
	k.max_comms = DVX_MSG_MAX_COMMS + 1;
	cfg_refused(&k, "max_comms");
	k.max_comms = 0;
	k.nqps = DVX_MSG_MAX_QPS + 1;
	cfg_refused(&k, "nqps");
	k.nqps = 0;
	k.listen_addr.family = 99;
	cfg_refused(&k, "listen_addr");
	k.listen_addr.family = 0;
	assert_int_equal(dvx_msg_mem_req(&k, &a, &b, &d), 0);
	/* init: a region too small, nothing held */
	m2 = calloc(1, sizeof(*m2));
	assert_non_null(m2);
	err = dvx_msg_init(m2, &k, w.r[0].state, 64, w.r[0].fifo, w.r[0].fifo_len,
			   w.r[0].rings, w.r[0].rings_len);
	assert_int_equal(err, -EINVAL);
	assert_int_equal(m2->live, 0);
	assert_string_equal(w.r[0].nic.hal.diag.op, "dvx_msg_init");
	assert_non_null(strstr(w.r[0].nic.hal.diag.msg, "state region"));
	free(m2);
	/* reg_mr on a NIC the context does not have */
	memset(&mr2, 0, sizeof(mr2));
	assert_int_equal(dvx_msg_reg_mr(&w.r[0].m, 1, &(struct dvx_mr_cfg){ .addr = w.r[0].buf,
									       .len = 64 },
					&mr2),
			 -EINVAL);
	assert_non_null(strstr(w.r[0].nic.hal.diag.msg, "nic 1"));
	dvx_msg_close(s);
	dvx_msg_close(r);
	assert_int_equal(mw_fini(&w), 0);
}

/* one irecv of four buffers matched by tag, sent in another order */
static void test_multi_recv_tags(void **state)
{
	static const uint32_t tags[4] = { 10, 11, 12, 13 };
	static const uint32_t order[4] = { 2, 0, 3, 1 };
	static const size_t lens[4] = { 1000, 0, 70000, 33 };
	struct dvx_msg_cfg c;
	struct mw w;
	struct dvx_msg_comm *s, *r;
	struct dvx_msg_req *rq, *sq[4];
	struct dvx_mr *mrs[4];
	void *bufs[4];
	size_t sizes[4], got[4];
	uint32_t i;

	(void)state;
	mw_fifo_only = 1;	/* the FIFO clear-to-send's own behaviour */
	cfg_base(&c);
	assert_int_equal(mw_init(&w, 2, &c, 1u << 20, 0), 0);
	assert_int_equal(mw_pair(&w, 0, 1, 0, &s, &r), 0);
	for (i = 0; i < 4; i++) {
		bufs[i] = w.r[1].buf + i * 131072;
		sizes[i] = 131072;
		mrs[i] = &w.r[1].mr;
		fill(w.r[0].buf + i * 131072, lens[i], 20 + i);
	}
	assert_int_equal(mw_irecv(&w, r, 4, bufs, sizes, tags, mrs, &rq, T_OUT), 0);
	/* a tag the slot does not hold: no request */
	assert_int_equal(mw_isend(&w, s, w.r[0].buf, 8, 99, &w.r[0].mr, &sq[0], MW_SEC / 10),
			 -ETIMEDOUT);
	for (i = 0; i < 4; i++) {
		uint32_t b = order[i];

		assert_int_equal(mw_isend(&w, s, w.r[0].buf + b * 131072, lens[b], tags[b],
					  &w.r[0].mr, &sq[i], T_OUT),
				 0);
	}
	/* the receive is done only when all four have landed; sends complete in any order */
	for (i = 4; i-- > 0;)
		assert_int_equal(mw_wait(&w, sq[i], NULL, T_OUT), 0);
	assert_int_equal(mw_wait(&w, rq, got, T_OUT), 0);
	for (i = 0; i < 4; i++) {
		assert_int_equal(got[i], lens[i]);
		verify(bufs[i], lens[i], 20 + i);
	}
	assert_int_equal(mw_check(&w), 0);
	dvx_msg_close(s);
	dvx_msg_close(r);
	assert_int_equal(mw_fini(&w), 0);
	mw_fifo_only = 0;
}

/* a message larger than the receive fails on both ends, and the connection goes on */
static void test_too_big(void **state)
{
	static const uint32_t tags[2] = { 1, 2 };
	struct dvx_msg_cfg c;
	struct mw w;
	struct dvx_msg_comm *s, *r;
	struct dvx_msg_req *rq, *sq;
	struct dvx_mr *mrs[2];
	void *bufs[2];
	size_t sizes[2] = { 100, 4096 }, got[2];

	(void)state;
	mw_fifo_only = 1;	/* the FIFO clear-to-send's own behaviour */
	cfg_base(&c);
	assert_int_equal(mw_init(&w, 2, &c, 1u << 20, 0), 0);
	assert_int_equal(mw_pair(&w, 0, 1, 0, &s, &r), 0);
	bufs[0] = w.r[1].buf;
	bufs[1] = w.r[1].buf + 8192;
	mrs[0] = mrs[1] = &w.r[1].mr;
	memset(w.r[1].buf, 0xee, 8192 + 4096);
	assert_int_equal(mw_irecv(&w, r, 2, bufs, sizes, tags, mrs, &rq, T_OUT), 0);
	fill(w.r[0].buf, 4096, 3);
	/* 101 bytes into the 100-byte buffer: -EMSGSIZE here, nothing written there */
	assert_int_equal(mw_isend(&w, s, w.r[0].buf, 101, 1, &w.r[0].mr, &sq, T_OUT), -EMSGSIZE);
	assert_null(sq);
	assert_int_equal(mw_isend(&w, s, w.r[0].buf, 4096, 2, &w.r[0].mr, &sq, T_OUT), 0);
	assert_int_equal(mw_wait(&w, sq, NULL, T_OUT), 0);
	got[0] = got[1] = 7;
	assert_int_equal(mw_wait(&w, rq, got, T_OUT), -EMSGSIZE);
	assert_int_equal(got[0], 0);
	assert_int_equal(got[1], 4096);
	assert_int_equal(w.r[1].buf[0], 0xee);
	verify(bufs[1], 4096, 3);
	/* the same pair carries the next message */
	one_message(&w, s, r, 100, 9);
	dvx_msg_close(s);
	dvx_msg_close(r);
	assert_int_equal(mw_fini(&w), 0);
	mw_fifo_only = 0;
}

/* buffers of split_bytes and more are striped over every QP of the connection */
static void test_stripes(void **state)
{
	static const uint64_t sizes[] = { 0, 100, 4096, 4097, 5000, 65536 * 3 + 5, 1u << 20 };
	struct dvx_msg_cfg c;
	struct mw w;
	struct dvx_msg_comm *s, *r;
	uint32_t i, nqps;
	int shared;

	(void)state;
	cfg_base(&c);
	c.nqps = 4;
	c.split_bytes = 4096;
	assert_int_equal(mw_init(&w, 2, &c, 2u << 20, 0), 0);
	assert_int_equal(mw_pair(&w, 0, 1, 0, &s, &r), 0);
	assert_int_equal(dvx_msg_comm_info(s, &shared, &nqps, NULL), 0);
	assert_int_equal(nqps, 4);
	assert_int_equal(shared, 0);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		one_message(&w, s, r, sizes[i], 30 + i);
	/* small receives rotate over the QPs */
	for (i = 0; i < 12; i++)
		one_message(&w, s, r, 1 + i, 40 + i);
	dvx_msg_close(r);
	dvx_msg_close(s);
	/* a connect asking for 2 of the 4 gets 2 */
	assert_int_equal(mw_pair(&w, 0, 1, 2, &s, &r), 0);
	assert_int_equal(dvx_msg_comm_info(r, NULL, &nqps, NULL), 0);
	assert_int_equal(nqps, 2);
	one_message(&w, s, r, 1u << 20, 77);
	dvx_msg_close(r);
	dvx_msg_close(s);
	assert_int_equal(mw_fini(&w), 0);
}

/* the pool: primaries and secondaries per group, identical routing, any close order */
static void test_sharing_roles(void **state)
{
	struct dvx_msg_cfg c;
	struct mw w;
	struct dvx_msg_comm *s[6], *r[6];
	struct dvx_msg_req *sq[6], *rq[6];
	struct dvx_msg_stats a, b;
	static const int close_order[6] = { 2, 0, 5, 1, 4, 3 };
	uint32_t i;

	(void)state;
	cfg_base(&c);
	c.groups = 2;
	c.depth_mult = 2;
	assert_int_equal(mw_init(&w, 2, &c, 1u << 20, 0), 0);
	for (i = 0; i < 6; i++) {
		int shared;

		assert_int_equal(mw_pair(&w, 0, 1, 0, &s[i], &r[i]), 0);
		assert_int_equal(mw_check(&w), 0);
		assert_int_equal(dvx_msg_comm_info(s[i], &shared, NULL, NULL), 0);
		assert_int_equal(shared, 1);
	}
	dvx_msg_get_stats(&w.r[0].m, &a);
	dvx_msg_get_stats(&w.r[1].m, &b);
	assert_int_equal(a.sets, 2);
	assert_int_equal(b.sets, 2);
	assert_int_equal(a.shared_sets, 2);
	assert_int_equal(a.primaries, 2);
	assert_int_equal(b.primaries, 2);
	assert_int_equal(a.secondaries, 4);
	assert_int_equal(b.secondaries, 4);
	assert_int_equal(a.pool_entries, 2);
	/* every comm posts, the sends go in reverse order; each buffer gets its own bytes */
	for (i = 0; i < 6; i++) {
		void *bufs[1] = { w.r[1].buf + i * 65536 };
		size_t sz[1] = { 65536 };
		uint32_t tag[1] = { i };
		struct dvx_mr *mr = &w.r[1].mr;

		fill(w.r[0].buf + i * 65536, 1000 + i, 60 + i);
		assert_int_equal(mw_irecv(&w, r[i], 1, bufs, sz, tag, &mr, &rq[i], T_OUT), 0);
	}
	for (i = 6; i-- > 0;)
		assert_int_equal(mw_isend(&w, s[i], w.r[0].buf + i * 65536, 1000 + i, i,
					  &w.r[0].mr, &sq[i], T_OUT),
				 0);
	for (i = 0; i < 6; i++) {
		size_t got[1];

		assert_int_equal(mw_wait(&w, rq[5 - i], got, T_OUT), 0);
		assert_int_equal(got[0], 1000 + (5 - i));
		assert_int_equal(mw_wait(&w, sq[i], NULL, T_OUT), 0);
	}
	for (i = 0; i < 6; i++)
		verify(w.r[1].buf + i * 65536, 1000 + i, 60 + i);
	/* close in a mixed order, send side first for some, receive side first for others */
	for (i = 0; i < 6; i++) {
		int k = close_order[i];

		if (i & 1) {
			assert_int_equal(dvx_msg_close(r[k]), 0);
			assert_int_equal(mw_check(&w), 0);
			assert_int_equal(dvx_msg_close(s[k]), 0);
		} else {
			assert_int_equal(dvx_msg_close(s[k]), 0);
			assert_int_equal(mw_check(&w), 0);
			assert_int_equal(dvx_msg_close(r[k]), 0);
		}
		assert_int_equal(mw_check(&w), 0);
		/* the survivors still talk */
		if (i < 5)
			one_message(&w, s[close_order[5]], r[close_order[5]], 64 + i, 90 + i);
	}
	assert_int_equal(mw_settle(&w), 0);
	dvx_msg_get_stats(&w.r[0].m, &a);
	assert_int_equal(a.sets, 0);
	assert_int_equal(a.pool_entries, 0);
	assert_int_equal(a.qps, 0);
	assert_int_equal(mw_fini(&w), 0);
}

/* a secondary with more QP slots than the set has maps them by modulo */
static void test_modulo(void **state)
{
	struct dvx_msg_cfg c;
	struct mw w;
	struct dvx_msg_comm *s[3], *r[3];
	struct dvx_msg_stats a;
	uint32_t nqps, i;

	(void)state;
	cfg_base(&c);
	c.groups = 1;
	c.nqps = 4;
	c.split_bytes = 1024;
	assert_int_equal(mw_init(&w, 2, &c, 2u << 20, 0), 0);
	assert_int_equal(mw_pair(&w, 0, 1, 1, &s[0], &r[0]), 0);	/* primary: 1 QP */
	assert_int_equal(mw_pair(&w, 0, 1, 4, &s[1], &r[1]), 0);	/* 4 slots on it */
	assert_int_equal(mw_pair(&w, 0, 1, 3, &s[2], &r[2]), 0);
	assert_int_equal(dvx_msg_comm_info(s[1], NULL, &nqps, NULL), 0);
	assert_int_equal(nqps, 4);
	dvx_msg_get_stats(&w.r[0].m, &a);
	assert_int_equal(a.sets, 1);
	assert_int_equal(a.qps, 1);
	assert_int_equal(mw_check(&w), 0);
	for (i = 0; i < 3; i++) {
		one_message(&w, s[i], r[i], 100000, 10 + i);	/* striped: slots share the QP */
		one_message(&w, s[i], r[i], 10, 20 + i);
	}
	/* the primary goes; the secondaries keep the QP */
	assert_int_equal(dvx_msg_close(s[0]), 0);
	assert_int_equal(dvx_msg_close(r[0]), 0);
	assert_int_equal(mw_check(&w), 0);
	one_message(&w, s[1], r[1], 5000, 33);
	for (i = 1; i < 3; i++) {
		dvx_msg_close(s[i]);
		dvx_msg_close(r[i]);
	}
	assert_int_equal(mw_fini(&w), 0);
}

/* one end closed its last user of a set while the other still has users: the next
 * connection of that group cannot join, and both ends agree on private QPs */
static void test_stale_set_fallback(void **state)
{
	struct dvx_msg_cfg c;
	struct mw w;
	struct dvx_msg_comm *s[2], *r[2];
	struct dvx_msg_stats a, b;
	int shared;

	(void)state;
	cfg_base(&c);
	c.groups = 1;
	assert_int_equal(mw_init(&w, 2, &c, 1u << 20, 0), 0);
	assert_int_equal(mw_pair(&w, 0, 1, 0, &s[0], &r[0]), 0);
	assert_int_equal(dvx_msg_close(r[0]), 0);	/* B's set is gone, A's is not */
	assert_int_equal(mw_settle(&w), 0);	/* once r[0]'s close marker is out */
	assert_int_equal(mw_pair(&w, 0, 1, 0, &s[1], &r[1]), 0);
	assert_int_equal(dvx_msg_comm_info(s[1], &shared, NULL, NULL), 0);
	assert_int_equal(shared, 0);
	assert_int_equal(dvx_msg_comm_info(r[1], &shared, NULL, NULL), 0);
	assert_int_equal(shared, 0);
	dvx_msg_get_stats(&w.r[0].m, &a);
	dvx_msg_get_stats(&w.r[1].m, &b);
	assert_int_equal(a.fallbacks, 1);
	assert_int_equal(b.fallbacks, 1);
	assert_int_equal(mw_check(&w), 0);
	one_message(&w, s[1], r[1], 3000, 5);
	assert_int_equal(dvx_msg_close(s[0]), 0);
	/* now the key is free on both ends: the next one makes a new shared set */
	dvx_msg_close(s[1]);
	dvx_msg_close(r[1]);
	assert_int_equal(mw_pair(&w, 0, 1, 0, &s[0], &r[0]), 0);
	assert_int_equal(dvx_msg_comm_info(r[0], &shared, NULL, NULL), 0);
	assert_int_equal(shared, 1);
	one_message(&w, s[0], r[0], 3000, 6);
	dvx_msg_close(s[0]);
	dvx_msg_close(r[0]);
	assert_int_equal(mw_fini(&w), 0);
}

/* a full pool falls back to private QPs, both ends agreeing; with NO_FALLBACK it is
 * -ENOSPC; with no set of either kind left it is -ENOSPC */
static void test_pool_full(void **state)
{
	struct dvx_msg_cfg c;
	struct mw w;
	struct dvx_msg_comm *s[4], *r[4], *x, *y;
	struct dvx_msg_stats a;
	int shared;

	(void)state;
	cfg_base(&c);
	c.groups = 2;
	c.max_shared_sets = 1;
	c.max_private_sets = 1;
	assert_int_equal(mw_init(&w, 2, &c, 1u << 20, 0), 0);
	assert_int_equal(mw_pair(&w, 0, 1, 0, &s[0], &r[0]), 0);	/* group 0: the set */
	assert_int_equal(mw_pair(&w, 0, 1, 0, &s[1], &r[1]), 0);	/* group 1: full */
	assert_int_equal(dvx_msg_comm_info(s[1], &shared, NULL, NULL), 0);
	assert_int_equal(shared, 0);
	assert_int_equal(mw_pair(&w, 0, 1, 0, &s[2], &r[2]), 0);	/* group 0 again: joins */
	assert_int_equal(dvx_msg_comm_info(r[2], &shared, NULL, NULL), 0);
	assert_int_equal(shared, 1);
	/* group 1 once more: no shared set, no private set left */
	assert_int_equal(mw_pair(&w, 0, 1, 0, &x, &y), -ENOSPC);
	assert_int_equal(mw_check(&w), 0);
	dvx_msg_get_stats(&w.r[0].m, &a);
	assert_int_equal(a.fallbacks, 1);
	assert_int_equal(a.secondaries, 1);
	one_message(&w, s[1], r[1], 10, 1);
	one_message(&w, s[2], r[2], 10, 2);
	dvx_msg_close(s[1]);
	dvx_msg_close(r[1]);
	/* NO_FALLBACK: the full pool is an error, not a private set */
	w.r[0].m.st->cfg.flags |= DVX_MSG_F_NO_FALLBACK;
	assert_int_equal(mw_pair(&w, 0, 1, 0, &x, &y), 0);	/* group 0: joins, fine */
	dvx_msg_close(x);
	dvx_msg_close(y);
	assert_int_equal(mw_pair(&w, 0, 1, 0, &x, &y), -ENOSPC);	/* group 1: full */
	assert_int_equal(mw_check(&w), 0);
	dvx_msg_close(s[0]);
	dvx_msg_close(r[0]);
	dvx_msg_close(s[2]);
	dvx_msg_close(r[2]);
	assert_int_equal(mw_fini(&w), 0);
}

/* one context's handshakes: is one of them an acceptor waiting in MSG_HA_DECIDE? */
static int deciding(const struct mw *w, int r)
{
	const struct dvx_msg_state *st = w->r[r].m.st;
	uint32_t i;

	for (i = 0; i < st->cfg.max_pending; i++)
		if (st->hs[i].state == MSG_HA_DECIDE)
			return 1;
	return 0;
}

/*
 * The tie-break: each context has room for one shared set and both connect to each
 * other at once, each proposing NEW with its one set. Without it each end refuses the
 * other's NEW for want of room and both connections fall back. With it the lower context
 * refuses at once, the higher waits (MSG_HA_DECIDE) for that refusal, which frees its
 * set, and takes the lower's NEW: the lower's connection is shared, the higher's
 * private, on both ends. Both interleavings are forced: the lower's HELLO waiting for
 * the higher's first call (the higher waits), and the higher's first (no wait needed).
 */
static void test_pool_tie_break(void **state)
{
	struct dvx_msg_cfg c;
	int order;

	(void)state;
	cfg_base(&c);
	c.groups = 1;
	c.max_shared_sets = 1;
	for (order = 0; order < 2; order++) {
		struct mw w;
		struct dvx_msg_handle h[2];
		struct dvx_msg_comm *l[2], *s[2] = { NULL, NULL }, *r[2] = { NULL, NULL };
		struct dvx_msg_stats a;
		int lo, hi, first, i, shared, rounds = 0;

		assert_int_equal(mw_init(&w, 2, &c, 1u << 20, 0), 0);
		lo = w.r[0].m.st->ctx_id < w.r[1].m.st->ctx_id ? 0 : 1;
		hi = 1 - lo;
		for (i = 0; i < 2; i++)
			assert_int_equal(dvx_msg_listen(&w.r[i].m, 0, &h[i], &l[i]), 0);
		/* s[i]: rank i's send comm to the other; r[i]: rank i's recv comm from it */
		first = order ? hi : lo;
		assert_int_equal(dvx_msg_connect(&w.r[first].m, 0, 0, &h[1 - first], &s[first]),
				 0);
		assert_int_equal(dvx_msg_connect(&w.r[1 - first].m, 0, 0, &h[first],
						 &s[1 - first]), 0);
		if (!order)
			assert_true(deciding(&w, hi));	/* its own NEW is unanswered */
		while (!s[0] || !s[1] || !r[0] || !r[1]) {
			for (i = 0; i < 2; i++) {
				if (!s[i])
					assert_int_equal(dvx_msg_connect(&w.r[i].m, 0, 0, &h[1 - i],
									 &s[i]), 0);
				if (!r[i])
					assert_int_equal(dvx_msg_accept(l[i], &r[i]), 0);
			}
			assert_true(++rounds < 100000);
		}
		assert_false(deciding(&w, hi));
		/* the lower's connection shared on both ends, the higher's private */
		assert_int_equal(dvx_msg_comm_info(s[lo], &shared, NULL, NULL), 0);
		assert_int_equal(shared, 1);
		assert_int_equal(dvx_msg_comm_info(r[hi], &shared, NULL, NULL), 0);
		assert_int_equal(shared, 1);
		assert_int_equal(dvx_msg_comm_info(s[hi], &shared, NULL, NULL), 0);
		assert_int_equal(shared, 0);
		assert_int_equal(dvx_msg_comm_info(r[lo], &shared, NULL, NULL), 0);
		assert_int_equal(shared, 0);
		for (i = 0; i < 2; i++) {
			dvx_msg_get_stats(&w.r[i].m, &a);
			assert_int_equal(a.primaries, 1);
			assert_int_equal(a.fallbacks, 1);
		}
		assert_int_equal(mw_check(&w), 0);
		one_message(&w, s[0], r[1], 3000, 40 + order);	/* shared if rank 0 is lo */
		one_message(&w, s[0], r[1], 100000, 50 + order);
		for (i = 0; i < 2; i++) {
			dvx_msg_close(s[i]);
			dvx_msg_close(r[i]);
			dvx_msg_close(l[i]);
		}
		assert_int_equal(mw_fini(&w), 0);
	}
}

/*
 * Late completions: a recv comm closed with a buffer announced keeps its slot (its id
 * routes to nobody else) until the message arrives, which is then counted and dropped;
 * a send comm closed with its WRITE in flight likewise until the WRITE completes, and
 * the receiver still gets the message. Slots are reused only after that.
 */
static void test_late_completion(void **state)
{
	struct dvx_msg_cfg c;
	struct mw w;
	struct dvx_msg_comm *sy, *ry, *sx, *rx, *sz, *rz;
	struct dvx_msg_req *rq, *sq;
	struct dvx_msg_stats a, b;
	uint32_t xid, zid;
	void *bufs[1];
	size_t sizes[1] = { 4096 }, got[1];
	uint32_t tags[1] = { 5 };
	struct dvx_mr *mr;
	int k, i;

	(void)state;
	mw_fifo_only = 1;	/* the FIFO clear-to-send's own behaviour */
	cfg_base(&c);
	c.groups = 1;
	c.max_comms = 6;
	assert_int_equal(mw_init(&w, 2, &c, 1u << 20, 0), 0);
	assert_int_equal(mw_pair(&w, 0, 1, 0, &sy, &ry), 0);
	assert_int_equal(mw_pair(&w, 0, 1, 0, &sx, &rx), 0);
	assert_int_equal(dvx_msg_comm_info(rx, NULL, NULL, &xid), 0);
	bufs[0] = w.r[1].buf;
	mr = &w.r[1].mr;
	assert_int_equal(mw_irecv(&w, rx, 1, bufs, sizes, tags, &mr, &rq, T_OUT), 0);
	assert_int_equal(dvx_msg_close(rx), 0);
	assert_int_equal(dvx_msg_test(rq, &k, got), -EINVAL);	/* its requests are gone */
	for (k = 0; k < 50; k++)
		mw_progress(&w);
	/* the buffer is still announced: x's slot stays held, whatever connects meanwhile */
	for (k = 0; k < 6; k++) {
		assert_int_equal(mw_pair(&w, 0, 1, 0, &sz, &rz), 0);
		assert_int_equal(dvx_msg_comm_info(rz, NULL, NULL, &zid), 0);
		assert_true((zid & 2047) != (xid & 2047));
		assert_int_equal(mw_check(&w), 0);
		dvx_msg_close(sz);
		dvx_msg_close(rz);
		for (i = 0; i < 50; i++)
			mw_progress(&w);	/* their closes finish (x's waits for its message) */
	}
	/* A still holds x's CTS: its data goes out, lands, and is counted and dropped */
	fill(w.r[0].buf, 4096, 8);
	assert_int_equal(mw_isend(&w, sx, w.r[0].buf, 4096, 5, &w.r[0].mr, &sq, T_OUT), 0);
	assert_int_equal(mw_wait(&w, sq, NULL, T_OUT), 0);
	for (k = 0; k < 50; k++)
		mw_progress(&w);
	dvx_msg_get_stats(&w.r[1].m, &b);
	assert_int_equal(b.late, 1);	/* the message for the closed comm */
	assert_int_equal(b.comms, 1);	/* only ry: x went once its message was in */
	verify(w.r[1].buf, 4096, 8);	/* as the docs say: an announced buffer is written */
	assert_int_equal(mw_check(&w), 0);
	/* the send side: close with the WRITE in flight */
	bufs[0] = w.r[1].buf + 8192;
	assert_int_equal(mw_irecv(&w, ry, 1, bufs, sizes, tags, &mr, &rq, T_OUT), 0);
	fill(w.r[0].buf, 4096, 9);
	assert_int_equal(mw_isend(&w, sy, w.r[0].buf, 4096, 5, &w.r[0].mr, &sq, T_OUT), 0);
	assert_int_equal(dvx_msg_close(sy), 0);	/* before its completion was polled */
	dvx_msg_get_stats(&w.r[0].m, &a);
	assert_int_equal(a.comms, 2);	/* sx, and sy closing */
	assert_int_equal(a.closing, 1);
	assert_int_equal(mw_wait(&w, rq, got, T_OUT), 0);
	assert_int_equal(got[0], 4096);
	verify(w.r[1].buf + 8192, 4096, 9);
	/* sy waits for its receiver's close (the marker says what it announced) */
	assert_int_equal(dvx_msg_close(ry), 0);
	assert_int_equal(mw_settle(&w), 0);
	dvx_msg_get_stats(&w.r[0].m, &a);
	assert_int_equal(a.comms, 1);
	assert_int_equal(a.late, 1);
	assert_int_equal(mw_check(&w), 0);
	dvx_msg_close(sx);
	assert_int_equal(mw_fini(&w), 0);
	mw_fifo_only = 0;
}

/*
 * A QP that fails fails exactly the communicators mapped onto it: two shared sets (groups
 * 0 and 1) and a private connection; the link goes down while only group 0's set sends;
 * its comms fail on both ends (the receiver learns at its next clear-to-send), the
 * others carry on.
 */
static void test_fault_isolation(void **state)
{
	struct dvx_msg_cfg c;
	struct mw w;
	struct dvx_msg_comm *s[4], *r[4], *ps, *pr;
	struct dvx_msg_req *sq, *rq;
	struct dvx_sim_faults f;
	struct dvx_msg_stats a;
	void *bufs[1] = { NULL };
	size_t sizes[1] = { 1024 };
	uint32_t tags[1] = { 1 };
	struct dvx_mr *mr;
	uint32_t i;
	int err;

	(void)state;
	cfg_base(&c);
	c.groups = 2;
	c.conn.retry_count = 2;
	c.conn.ack_timeout = 10;
	c.conn.rnr_retry = 7;
	c.conn.min_rnr_nak = 12;
	c.conn.hop_limit = 255;
	c.max_private_sets = 4;
	assert_int_equal(mw_init(&w, 2, &c, 1u << 20, 0), 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(mw_pair(&w, 0, 1, 0, &s[i], &r[i]), 0);	/* groups 0,1,0,1 */
	w.r[0].m.st->cfg.groups = 0;	/* the next one is private */
	assert_int_equal(mw_pair(&w, 0, 1, 0, &ps, &pr), 0);
	w.r[0].m.st->cfg.groups = 2;
	/* comm 0 (group 0) has a receive posted; the link goes down; its send fails */
	mr = &w.r[1].mr;
	bufs[0] = w.r[1].buf;
	assert_int_equal(mw_irecv(&w, r[0], 1, bufs, sizes, tags, &mr, &rq, T_OUT), 0);
	for (i = 0; i < 50; i++)
		mw_progress(&w);	/* the clear-to-send lands before the link goes */
	memset(&f, 0, sizeof(f));
	f.link_down = 1;
	dvx_sim_set_faults(w.fab, &f);
	assert_int_equal(mw_isend(&w, s[0], w.r[0].buf, 1024, 1, &w.r[0].mr, &sq, T_OUT), 0);
	err = mw_wait(&w, sq, NULL, T_OUT);
	assert_int_equal(err, -EHOSTUNREACH);
	dvx_sim_set_faults(w.fab, NULL);
	/* comm 2 shares the failed QP: it fails too, without having sent anything */
	assert_int_equal(dvx_msg_isend(s[2], w.r[0].buf, 8, 1, &w.r[0].mr, &sq), -EHOSTUNREACH);
	/* the receiver: its next clear-to-send meets the dead QP; every comm on it fails,
	 * and the receive that was waiting ends with the error */
	bufs[0] = w.r[1].buf + 4096;
	err = mw_irecv(&w, r[2], 1, bufs, sizes, tags, &mr, &rq, T_OUT);
	if (!err) {
		err = mw_wait(&w, rq, NULL, T_OUT);
		assert_true(err == -EHOSTUNREACH || err == -ECANCELED);
	}
	assert_true(dvx_msg_irecv(r[0], 1, bufs, sizes, tags, &mr, &rq) < 0);
	/* group 1 and the private connection are untouched */
	one_message(&w, s[1], r[1], 2000, 1);
	one_message(&w, s[3], r[3], 2000, 2);
	one_message(&w, ps, pr, 2000, 3);
	dvx_msg_get_stats(&w.r[0].m, &a);
	assert_int_equal(a.qp_errors, 1);
	assert_int_equal(mw_check(&w), 0);
	/* a new group-0 connection does not join the failed set */
	{
		struct dvx_msg_comm *ns, *nr;
		int shared;

		assert_int_equal(mw_pair(&w, 0, 1, 0, &ns, &nr), 0);
		assert_int_equal(dvx_msg_comm_info(ns, &shared, NULL, NULL), 0);
		assert_int_equal(shared, 0);
		one_message(&w, ns, nr, 100, 4);
		dvx_msg_close(ns);
		dvx_msg_close(nr);
	}
	for (i = 0; i < 4; i++) {
		dvx_msg_close(s[i]);
		dvx_msg_close(r[i]);
	}
	dvx_msg_close(ps);
	dvx_msg_close(pr);
	assert_int_equal(mw_fini(&w), 0);
}

/* refusals: a handle whose cookie is wrong, a listen comm that is gone, a peer that
 * never answers; a closed comm is refused by every call, a stale request too */
static void test_refusals(void **state)
{
	struct dvx_msg_cfg c;
	struct mw w;
	struct dvx_msg_handle h, bad;
	struct dvx_msg_comm *l, *s = NULL, *r = NULL;
	struct dvx_msg_req *q = NULL;
	struct dvx_msg_stats b;
	uint64_t end;
	int err = 0, done;

	(void)state;
	cfg_base(&c);
	c.timeout_ns = MW_SEC / 5;
	assert_int_equal(mw_init(&w, 2, &c, 1u << 20, 0), 0);
	assert_int_equal(dvx_msg_listen(&w.r[1].m, 0, &h, &l), 0);
	/* the cookie is bytes 16-23 of the handle */
	bad = h;
	bad.wire[16] ^= 1;
	end = mw_now() + T_OUT;
	do {
		err = dvx_msg_connect(&w.r[0].m, 0, 0, &bad, &s);
		dvx_msg_accept(l, &r);
	} while (!err && !s && mw_now() < end);
	assert_int_equal(err, -EACCES);
	assert_null(r);
	dvx_msg_get_stats(&w.r[1].m, &b);
	assert_int_equal(b.refused, 1);
	/* a handle that is not one */
	memset(&bad, 0, sizeof(bad));
	assert_int_equal(dvx_msg_connect(&w.r[0].m, 0, 0, &bad, &s), -EINVAL);
	/* the listen comm closed: refused */
	assert_int_equal(dvx_msg_close(l), 0);
	end = mw_now() + T_OUT;
	do {
		err = dvx_msg_connect(&w.r[0].m, 0, 0, &h, &s);
		mw_progress(&w);
	} while (!err && !s && mw_now() < end);
	assert_int_equal(err, -ECONNREFUSED);
	/* a listener that takes the connection and never answers: the deadline */
	assert_int_equal(dvx_msg_listen(&w.r[1].m, 0, &h, &l), 0);
	end = mw_now() + T_OUT;
	do
		err = dvx_msg_connect(&w.r[0].m, 0, 0, &h, &s);	/* rank 1 never progresses */
	while (!err && !s && mw_now() < end);
	assert_int_equal(err, -ETIMEDOUT);
	/* its half-made handshake on rank 1 times out too, and holds nothing then */
	end = mw_now() + T_OUT;
	do {
		mw_progress(&w);
		dvx_msg_get_stats(&w.r[1].m, &b);
	} while (b.pending && mw_now() < end);
	assert_int_equal(b.pending, 0);
	assert_int_equal(b.sets, 0);
	assert_int_equal(b.comms, 1);	/* the listen comm */
	assert_int_equal(mw_check(&w), 0);
	dvx_msg_close(l);
	/* a connection, closed: its calls are refused; a request tested twice is refused */
	assert_int_equal(mw_pair(&w, 0, 1, 0, &s, &r), 0);
	one_message(&w, s, r, 10, 1);
	{
		void *bufs[1] = { w.r[1].buf };
		size_t sz[1] = { 64 };
		uint32_t tg[1] = { 7 };
		struct dvx_mr *mr = &w.r[1].mr;

		assert_int_equal(mw_irecv(&w, r, 1, bufs, sz, tg, &mr, &q, T_OUT), 0);
		assert_int_equal(mw_isend(&w, s, w.r[0].buf, 64, 7, &w.r[0].mr, &q, T_OUT), 0);
		assert_int_equal(mw_wait(&w, q, NULL, T_OUT), 0);
		assert_int_equal(dvx_msg_test(q, &done, NULL), -EINVAL);	/* freed */
		assert_int_equal(dvx_msg_isend(s, w.r[0].buf, 8, 7, &w.r[1].mr, &q), -EINVAL);
	}
	assert_int_equal(dvx_msg_close(s), 0);
	assert_int_equal(dvx_msg_isend(s, w.r[0].buf, 8, 7, &w.r[0].mr, &q), -EINVAL);
	assert_int_equal(dvx_msg_close(s), -EINVAL);
	assert_int_equal(dvx_msg_close(r), 0);
	assert_int_equal(mw_fini(&w), 0);
}

/* a connection closed while the others on its shared set are busy: they finish */
static void test_close_while_busy(void **state)
{
	struct dvx_msg_cfg c;
	struct mw w;
	struct dvx_msg_comm *s[3], *r[3];
	struct dvx_msg_req *rq[3], *sq[3];
	uint32_t i;

	(void)state;
	cfg_base(&c);
	c.groups = 1;
	assert_int_equal(mw_init(&w, 2, &c, 1u << 20, 0), 0);
	for (i = 0; i < 3; i++)
		assert_int_equal(mw_pair(&w, 0, 1, 0, &s[i], &r[i]), 0);
	for (i = 0; i < 3; i++) {
		void *bufs[1] = { w.r[1].buf + i * 65536 };
		size_t sz[1] = { 65536 };
		uint32_t tg[1] = { 1 };
		struct dvx_mr *mr = &w.r[1].mr;

		fill(w.r[0].buf + i * 65536, 60000, 70 + i);
		assert_int_equal(mw_irecv(&w, r[i], 1, bufs, sz, tg, &mr, &rq[i], T_OUT), 0);
	}
	/* comm 1 goes, both ends, with nothing sent; 0 and 2 send meanwhile */
	assert_int_equal(mw_isend(&w, s[0], w.r[0].buf, 60000, 1, &w.r[0].mr, &sq[0], T_OUT), 0);
	assert_int_equal(dvx_msg_close(r[1]), 0);
	assert_int_equal(dvx_msg_close(s[1]), 0);
	assert_int_equal(mw_check(&w), 0);
	assert_int_equal(mw_isend(&w, s[2], w.r[0].buf + 2 * 65536, 60000, 1, &w.r[0].mr, &sq[2],
				  T_OUT),
			 0);
	for (i = 0; i < 3; i += 2) {
		size_t got[1];

		assert_int_equal(mw_wait(&w, sq[i], NULL, T_OUT), 0);
		assert_int_equal(mw_wait(&w, rq[i], got, T_OUT), 0);
		assert_int_equal(got[0], 60000);
		verify(w.r[1].buf + i * 65536, 60000, 70 + i);
	}
	assert_int_equal(mw_check(&w), 0);
	for (i = 0; i < 3; i += 2) {
		dvx_msg_close(s[i]);
		dvx_msg_close(r[i]);
	}
	assert_int_equal(mw_fini(&w), 0);
}

/* iflush: one READ through the flush QP after a receive; nothing to flush without data */
static void test_flush(void **state)
{
	struct dvx_msg_cfg c;
	struct mw w;
	struct dvx_msg_comm *s, *r;
	struct dvx_msg_req *q;
	void *bufs[2];
	size_t sz[2] = { 0, 4096 };
	struct dvx_mr *mrs[2];
	struct dvx_msg_stats b;
	int i;

	(void)state;
	cfg_base(&c);
	c.flags = DVX_MSG_F_FLUSH;
	assert_int_equal(mw_init(&w, 2, &c, 1u << 20, 0), 0);
	dvx_msg_get_stats(&w.r[1].m, &b);
	assert_int_equal(b.qps, 1);	/* the flush QP (the sim has force-loopback) */
	assert_int_equal(mw_pair(&w, 0, 1, 0, &s, &r), 0);
	one_message(&w, s, r, 4096, 3);
	bufs[0] = w.r[1].buf;
	bufs[1] = w.r[1].buf;
	mrs[0] = mrs[1] = &w.r[1].mr;
	for (i = 0; i < 12; i++) {	/* more than max_reqs: flush requests are reused */
		assert_int_equal(dvx_msg_iflush(r, 2, bufs, sz, mrs, &q), 0);
		assert_non_null(q);
		assert_int_equal(mw_wait(&w, q, NULL, T_OUT), 0);
	}
	assert_int_equal(dvx_msg_iflush(r, 1, bufs, sz, mrs, &q), 0);
	assert_null(q);	/* a size 0: nothing to flush */
	dvx_msg_close(s);
	dvx_msg_close(r);
	assert_int_equal(mw_fini(&w), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic_sizes),
		cmocka_unit_test(test_multi_recv_tags),
		cmocka_unit_test(test_cfg_odd_recvs_and_diag),
		cmocka_unit_test(test_too_big),
		cmocka_unit_test(test_stripes),
		cmocka_unit_test(test_sharing_roles),
		cmocka_unit_test(test_modulo),
		cmocka_unit_test(test_stale_set_fallback),
		cmocka_unit_test(test_pool_full),
		cmocka_unit_test(test_pool_tie_break),
		cmocka_unit_test(test_late_completion),
		cmocka_unit_test(test_fault_isolation),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_close_while_busy),
		cmocka_unit_test(test_flush),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
