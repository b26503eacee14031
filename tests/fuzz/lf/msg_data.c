// SPDX-License-Identifier: MIT
/*
 * tests/fuzz/lf/msg_data.c - libFuzzer harness: the messaging layer's data path (core/msg/
 * data.c), the bytes a peer writes into this end's memory with its RDMA rights: the
 * clear-to-send entries, close marker and credit word of a send comm's FIFO, and the
 * eager ring of a recv comm (CTS receiver offload, docs/msg.md), as plain WRITEs and
 * as WRITEs with immediate whose immediates it chooses.
 *
 * On the software NIC in one process (tests/msg/mworld.c): A (tested) and B (the peer)
 * connected both ways, each connection with the offload or without (byte 0); then a
 * script of operations: A's irecv (1-2 buffers between guard bands), A's isend, B's
 * honest isend and irecv, B's raw WRITE or WRITE with immediate (any bytes, any
 * immediate, at any offset of A's ring or A's FIFO area, with the keys B was given), and
 * progress with a test of every request of A's. Then everything closes.
 *
 * The world is made once per process (speed: bench/RESULTS.md). The fabric, both NICs
 * and both contexts come up at the first input; then, for each of the four choices of
 * byte 0, the two connections are made (the real handshake, over the hal's sockets) and
 * everything the world is made of is copied aside: the fabric's memory (the software
 * NICs: QPs, CQs, MRs, their rings' state), each context's state, FIFO and ring regions
 * (the library keeps nothing anywhere else: no allocation, no static state), struct mw
 * (the NICs' and contexts' handles, the MRs) and the clock. Before every input the copy
 * of its byte 0 is put back, so every input starts from the same freshly connected
 * pair, whatever the one before it did; what lies outside that memory is the buffers
 * (A's guard areas rewritten, payload never decided on), the contexts' listening
 * sockets (nothing connects after the start: the harness's hal answers their accept()
 * "none pending" without a system call) and the clock: the contexts' hal is the host's
 * with a virtual clock (1 us per reading, 1 ms per settling pass: a close that waits for
 * a broken peer, a WRITE with immediate of B's stalled receiver-not-ready say, ends at
 * its 10 ms deadline within 10 passes; the others finish in one or two). The software
 * NIC's tables, and the contexts' (4 communicators, 2 handshakes), are as small as these
 * objects need: passes and the checker walk them, and they are copied. After the copy
 * is put back the harness checks it took: both contexts' counts (dvx_msg_get_stats())
 * and the software NIC's objects and counters are the copy's, A's invariant checker
 * passes. (Before, every input made and closed its own two connections: about 3 ms of
 * CPU an input, most of it the handshakes' real sockets and closes waiting out their
 * deadline on the real clock.)
 *
 * Checks: A's invariant checker (dvx_msg_check()) after every operation that ran A's
 * code (after one that ran none, what it reads is what it passed before: a_ran below); a
 * request of A's that completes without error reports at most its buffers' sizes; the
 * guard bands around A's buffers never change (A writes only where it posted), checked
 * after every operation; every close finishes (bounded by the contexts' 10 ms timeout,
 * virtual) and A then holds no communicator.
 *
 * Feeds: byte 0 [0] A->B offload, [1] B->A offload; then operations, one byte each
 * (op % 7) with their arguments from the bytes after it.
 */
#include "lf.h"

#include "../../msg/mworld.h"
#include "../../../core/msg/msg_priv.h"	/* white box: B's QPs, the keys it holds */

#define NREQ 8
#define BUF 2048	/* a buffer's largest size */
#define GUARD 64
#define SLOT (BUF + 2 * GUARD)
#define GBYTE 0xa5

static struct mw W;
static int up;

struct areq {
	struct dvx_msg_req *q;
	int n;
	size_t size[2];
};

static struct areq rq[NREQ], sq[NREQ];

/*
 * A step ran A's code: one of A's calls (irecv, isend, test, progress, close; a progress of
 * B's too, which steps the software NIC that writes A's FIFO, rings and buffers). A's
 * checker reads only A's state region (and struct dvx_msg), which nothing but A's calls
 * writes: it is no NIC's memory (dvx_msg_init() registers the FIFO and rings regions,
 * never the state), B's calls write B's regions and doorbells (the software NIC executes
 * nothing before a progress: no thread here), the harness none. After a step that ran
 * none of A's code the checker would read what it passed the step before: it is not run
 * again (the guard bands are checked after every step whatever ran).
 */
static int a_ran = 1;

/* ---- the contexts' hal: the host's, with a virtual clock and a quiet accept() ---- */

#define TICK_NS 1000ull		/* a reading of the clock */
#define PASS_NS 1000000ull	/* a settling pass */
#define SETTLE_PASSES 100	/* 100 ms of passes: ten times the close bound */
#define NOBJ 4			/* QPs and CQs per NIC: each context's two connections */

static uint64_t vclock = 1000000000ull;
static int quiet;		/* the world is up: nobody connects any more */
static struct dvx_hal vhal;
static struct dvx_hal_host_ops vhost;
static const struct dvx_hal_host_ops *real_host;

static uint64_t v_now(const struct dvx_hal *h)
{
	(void)h;
	vclock += TICK_NS;
	return vclock;
}

static int v_accept(const struct dvx_hal *h, int lfd, int *fd)
{
	if (!quiet)
		return real_host->sock_accept(h, lfd, fd);
	*fd = -1;
	return -EAGAIN;	/* what the kernel would answer: nothing in this process connects */
}

/* ---- the world, and its copies: one per choice of byte 0 ---- */

struct snap {
	struct mw w;
	uint8_t *fab, *state[2], *fifo[2], *rings[2];
	uint64_t vclock;
	struct dvx_msg_comm *bs, *ar, *as, *br;
	struct dvx_msg_stats st[2];
	struct dvx_sim_stats sim;
};

static struct snap base, snaps[4];
static size_t fab_len;
static uint8_t gpat[GUARD];	/* a guard band as it must stay */

static LF_NO_COV void guards_set(void)
{
	memset(W.r[1].buf, GBYTE, NREQ * 2 * SLOT);
}

/* every guard band still GBYTE: 8 bytes at a time, no call per band (ASan's memcmp()
 * interceptor would be 32 calls per check, after every operation) */
static LF_NO_COV void guards_check(void)
{
	const uint8_t *b = W.r[1].buf;
	uint64_t pat, w, acc = 0;
	int i, j;

	memcpy(&pat, gpat, sizeof(pat));
	for (i = 0; i < NREQ * 2; i++)
		for (j = 0; j < GUARD; j += 8) {
			memcpy(&w, b + i * SLOT + j, sizeof(w));
			acc |= w ^ pat;
			memcpy(&w, b + i * SLOT + GUARD + BUF + j, sizeof(w));
			acc |= w ^ pat;
		}
	LF_CHECK(acc == 0);
}

static void *dup_of(const void *p, size_t len)
{
	void *d = malloc(len);

	LF_CHECK(d != NULL);
	memcpy(d, p, len);
	return d;
}

static void sim_counts(struct dvx_sim_stats *s)
{
	memset(s, 0, sizeof(*s));
	dvx_sim_get_stats(W.fab, s);
}

static void snap_take(struct snap *s, struct dvx_msg_comm *bs, struct dvx_msg_comm *ar,
		      struct dvx_msg_comm *as, struct dvx_msg_comm *br)
{
	int i;

	s->w = W;
	s->fab = dup_of(W.fab_mem, fab_len);
	for (i = 0; i < 2; i++) {
		s->state[i] = dup_of(W.r[i].state, W.r[i].state_len);
		s->fifo[i] = dup_of(W.r[i].fifo, W.r[i].fifo_len);
		s->rings[i] = dup_of(W.r[i].rings, W.r[i].rings_len);
		dvx_msg_get_stats(&W.r[i].m, &s->st[i]);
	}
	s->vclock = vclock;
	s->bs = bs;
	s->ar = ar;
	s->as = as;
	s->br = br;
	sim_counts(&s->sim);
}

static LF_NO_COV void snap_put(const struct snap *s)
{
	int i;

	W = s->w;
	memcpy(W.fab_mem, s->fab, fab_len);
	for (i = 0; i < 2; i++) {
		memcpy(W.r[i].state, s->state[i], W.r[i].state_len);
		memcpy(W.r[i].fifo, s->fifo[i], W.r[i].fifo_len);
		memcpy(W.r[i].rings, s->rings[i], W.r[i].rings_len);
	}
	vclock = s->vclock;
}

/* the copy took: the counts of the contexts and of the software NIC are the copy's */
static LF_NO_COV void snap_verify(const struct snap *s)
{
	struct dvx_msg_stats st;
	struct dvx_sim_stats sim;
	int i;

	for (i = 0; i < 2; i++) {
		dvx_msg_get_stats(&W.r[i].m, &st);
		LF_CHECK(!memcmp(&st, &s->st[i], sizeof(st)));
		LF_CHECK(st.comms == 2 && !st.closing && !st.pending);
	}
	sim_counts(&sim);
	LF_CHECK(!memcmp(sim.live, s->sim.live, sizeof(sim.live)));
	LF_CHECK(sim.wqes_executed == s->sim.wqes_executed && sim.cqes_written == s->sim.cqes_written);
}

/* progress until no context has a closing communicator: 0, or -ETIMEDOUT */
static int settle(void)
{
	int k;

	for (k = 0; k < SETTLE_PASSES; k++) {
		vclock += PASS_NS;
		mw_progress(&W);
		/* white box: no handshake can be pending (nothing connects), and the count of
		 * closing communicators is what dvx_msg_get_stats() would walk the table for */
		if (!W.r[0].m.st->nclosing && !W.r[1].m.st->nclosing)
			return 0;
	}
	return -ETIMEDOUT;
}

static void world_up(void)
{
	struct dvx_msg_cfg c;
	struct dvx_sim_fabric_cfg fc;
	int f;

	memset(gpat, GBYTE, sizeof(gpat));
	real_host = dvx_hal_host()->host;
	vhal = *dvx_hal_host();
	vhost = *real_host;
	vhost.now_ns = v_now;
	vhost.sock_accept = v_accept;
	vhal.host = &vhost;
	memset(&c, 0, sizeof(c));
	c.hal = &vhal;
	c.max_comms = 4;
	c.max_pending = 2;
	c.max_reqs = 4;
	c.max_recvs = 2;
	c.flags = DVX_MSG_F_CTS_OFFLOAD;
	c.eager_bytes = 256;
	c.timeout_ns = 10000000ull;	/* 10 ms: a close waiting for a broken peer ends soon */
	/* the software NIC's tables as small as two contexts of two connections need: the
	 * copies are of its memory, and its passes walk them */
	dvx_sim_fabric_cfg_default(&fc);
	fc.max_qps = NOBJ;
	fc.max_cqs = NOBJ;
	fc.max_mrs = 4;
	fc.max_umems = 2;
	fc.max_uars = 2;
	fc.max_pds = 2;
	fc.max_dmabufs = 1;
	fc.max_gpus = 0;
	fc.max_gpu_mems = 1;
	fc.reorder_stage = 0;
	mw_fab_cfg = &fc;
	LF_CHECK(!mw_init(&W, 2, &c, 1u << 20, 0));
	mw_fab_cfg = NULL;
	fab_len = W.fab_len;
	snap_take(&base, NULL, NULL, NULL, NULL);	/* no connection yet */
	for (f = 0; f < 4; f++) {
		struct dvx_msg_comm *bs, *ar, *as, *br;

		snap_put(&base);
		/* B -> A, then A -> B, each with the offload when its bit says so (both ends
		 * ask) */
		W.r[0].m.st->cfg.flags = W.r[1].m.st->cfg.flags = (f & 2) ? DVX_MSG_F_CTS_OFFLOAD : 0;
		LF_CHECK(!mw_pair(&W, 0, 1, 0, &bs, &ar));
		W.r[0].m.st->cfg.flags = W.r[1].m.st->cfg.flags = (f & 1) ? DVX_MSG_F_CTS_OFFLOAD : 0;
		LF_CHECK(!mw_pair(&W, 1, 0, 0, &as, &br));
		W.r[0].m.st->cfg.flags = W.r[1].m.st->cfg.flags = DVX_MSG_F_CTS_OFFLOAD;
		/* copied as mw_pair() leaves them, not one pass more: an input's first
		 * progress is the pair's first, as when each input made its own (the
		 * regression inputs need that); the listen comms and handshakes are gone
		 * already (snap_verify() checks it) */
		snap_take(&snaps[f], bs, ar, as, br);
	}
	quiet = 1;
	up = 1;
}

/* test every request of A's once; completed ones are checked and let go */
static void test_all(void)
{
	int i, k, done;

	for (i = 0; i < NREQ; i++)
		for (k = 0; k < 2; k++) {
			struct areq *a = k ? &sq[i] : &rq[i];
			size_t got[DVX_MSG_MAX_RECVS] = { 0 };
			int err, b;

			if (!a->q)
				continue;
			done = 0;
			a_ran = 1;
			err = dvx_msg_test(a->q, &done, got);
			if (!done) {
				LF_CHECK(!err);
				continue;
			}
			for (b = 0; !err && b < a->n; b++)
				LF_CHECK(got[b] <= a->size[b]);
			a->q = NULL;
		}
}

static void check_a(void)
{
	const char *why = NULL;

	if (a_ran && dvx_msg_check(&W.r[1].m, &why)) {
		fprintf(stderr, "A: %s\n", why);
		LF_CHECK(0);
	}
	a_ran = 0;
	guards_check();
}

/* B's raw WRITE (with immediate when @imm_on) of @len input bytes into A's memory */
static void raw_write(struct dvx_msg_comm *bs, struct dvx_msg_comm *br, struct lf_in *in)
{
	struct dvx_msg_state *st = W.r[0].m.st;
	uint8_t how = lf_u8(in);
	uint32_t len = lf_u16(in) % 320, off = lf_u16(in), imm = lf_u32(in), i;
	struct dvx_msg_comm *via = (how & 2) ? bs : br;
	struct msg_set *x;
	struct dvx_qp *qp;
	uint64_t raddr;
	uint32_t rkey;
	int err;

	if (!via || via->state != MSG_CS_LIVE || via->err || !via->mapped)
		return;
	x = &st->sets[via->set];
	qp = &x->qp[via->map[0]];
	if (via == bs && bs->offload) {	/* A's eager ring */
		raddr = bs->ring_addr + off % (bs->max_reqs * bs->ring_slot);
		rkey = bs->ring_rkey;
	} else if (via == br) {	/* A's send comm's FIFO, marker and credit word */
		raddr = br->rfifo_addr + off % ((br->fifo_depth * br->fifo_recvs + 2) * 32);
		rkey = br->rfifo_rkey;
	} else {
		return;
	}
	if (how & 4)
		imm = (imm & ~0xffffu) | bs->peer_comm;	/* names A's recv comm */
	for (i = 0; i < len; i++)
		W.r[0].buf[(1u << 19) + i] = lf_u8(in);
	if (dvx_mlx5_sq_room(&qp->sq, &qp->sqc) < 1)
		return;
	if (how & 1) {
		/* a WRITE with immediate: it takes one of A's receives (none: the peer's QP
		 * waits, receiver not ready, until its close) */
		err = dvx_qp_post_write_imm(qp, 0,
					    &(struct dvx_mlx5_sge){ (uint64_t)(uintptr_t)(W.r[0].buf +
											  (1u << 19)),
								    len, W.r[0].mr.lkey },
					    &(struct dvx_mlx5_raddr){ raddr, rkey }, imm,
					    DVX_POST_SIGNALED);
	} else {
		err = dvx_qp_post_write(qp, 0, (uint64_t)(uintptr_t)(W.r[0].buf + (1u << 19)),
					W.r[0].mr.lkey, len, raddr, rkey, DVX_POST_SIGNALED);
	}
	if (!err)
		dvx_qp_ring(qp);
}

static void a_irecv(struct dvx_msg_comm *ar, struct lf_in *in)
{
	int i = lf_u8(in) % NREQ, n = 1 + (lf_u8(in) & 1), b;
	void *bufs[2];
	size_t sizes[2];
	uint32_t tags[2];
	struct dvx_mr *mrs[2] = { &W.r[1].mr, &W.r[1].mr };

	if (rq[i].q || ar->state != MSG_CS_LIVE)
		return;
	for (b = 0; b < n; b++) {
		bufs[b] = W.r[1].buf + (i * 2 + b) * SLOT + GUARD;
		sizes[b] = lf_u16(in) % (BUF + 1);
		tags[b] = lf_u8(in) & 3;
		rq[i].size[b] = sizes[b];
	}
	rq[i].n = n;
	a_ran = 1;
	if (dvx_msg_irecv(ar, n, bufs, sizes, tags, mrs, &rq[i].q))
		rq[i].q = NULL;
}

static void a_isend(struct dvx_msg_comm *as, struct lf_in *in)
{
	int i = lf_u8(in) % NREQ;
	size_t size = lf_u16(in) % 4096;
	uint32_t tag = lf_u8(in) & 3;

	if (sq[i].q || as->state != MSG_CS_LIVE)
		return;
	sq[i].n = 1;
	sq[i].size[0] = size;
	a_ran = 1;
	if (dvx_msg_isend(as, W.r[1].buf + (1u << 19), size, tag, &W.r[1].mr, &sq[i].q))
		sq[i].q = NULL;
}

/* B as an honest peer: an isend to A, an irecv from A (whose requests it drops) */
static void b_honest(struct dvx_msg_comm *bs, struct dvx_msg_comm *br, struct lf_in *in)
{
	struct dvx_msg_req *q = NULL;
	size_t size = lf_u16(in) % 4096;
	uint32_t tag = lf_u8(in) & 3;
	void *buf = W.r[0].buf + (1u << 18);
	struct dvx_mr *mr = &W.r[0].mr;

	if (lf_u8(in) & 1) {
		if (bs->state == MSG_CS_LIVE)
			dvx_msg_isend(bs, W.r[0].buf, size, tag, &W.r[0].mr, &q);
	} else if (br->state == MSG_CS_LIVE) {
		dvx_msg_irecv(br, 1, &buf, &size, &tag, &mr, &q);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lf_in in = { data, size };
	struct dvx_msg_comm *bs, *ar, *as, *br;
	const struct snap *s;
	struct dvx_msg_stats st;
	int ops = 0;

	if (!up)
		world_up();
	/* the pair connected as byte 0 says, whatever the input before did */
	s = &snaps[lf_u8(&in) & 3];
	snap_put(s);
	snap_verify(s);
	bs = s->bs;
	ar = s->ar;
	as = s->as;
	br = s->br;
	memset(rq, 0, sizeof(rq));
	memset(sq, 0, sizeof(sq));
	guards_set();
	a_ran = 1;	/* the copy put back: checked whatever the input before left */
	check_a();
	while (in.n && ops++ < 64) {
		switch (lf_u8(&in) % 7) {
		case 0:
			a_irecv(ar, &in);
			break;
		case 1:
			a_isend(as, &in);
			break;
		case 2:
			b_honest(bs, br, &in);
			break;
		case 3:
		case 4:
			raw_write(bs, br, &in);
			break;
		default: {
			int k = 1 + (lf_u8(&in) & 3);

			a_ran = 1;
			while (k--)
				mw_progress(&W);
			test_all();
			break;
		}
		}
		check_a();
	}
	a_ran = 1;
	mw_progress(&W);
	test_all();
	check_a();
	dvx_msg_close(ar);
	dvx_msg_close(as);
	dvx_msg_close(bs);
	dvx_msg_close(br);
	LF_CHECK(!settle());
	a_ran = 1;
	check_a();
	dvx_msg_get_stats(&W.r[1].m, &st);
	LF_CHECK(st.comms == 0);
	dvx_msg_get_stats(&W.r[0].m, &st);
	LF_CHECK(st.comms == 0);
	return 0;
}

/* ---- seeds: scripts of honest traffic both ways, with and without the offload ---- */

static void write_seeds(void)
{
	static const uint8_t honest[] = {
		3,			/* offload both ways */
		0, 0, 0, 100, 0, 1,	/* A irecv slot 0, 1 buffer of 100, tag 1 */
		2, 50, 0, 1, 1,		/* B isend 50 B tag 1 */
		5, 3,			/* progress, test */
		2, 100, 0, 2, 0,	/* B irecv 100 tag 2 */
		1, 1, 80, 0, 2,		/* A isend 80 tag 2 */
		5, 3, 5, 3,
		0, 2, 1, 0, 1, 1, 8, 0, 2,	/* A irecv slot 2, 2 buffers */
		2, 0, 2, 1, 1,		/* B isend 512 tag 1 (rendezvous past 256) */
		5, 3, 5, 3,
	};
	static const uint8_t raw[] = {
		3,
		0, 0, 0, 1, 3,		/* A irecv 256 tag 3 */
		3, 7, 16, 0, 0, 0, 0, 0, 0, 0,	/* B raw WRITE_IMM into the ring */
		1, 0, 0, 0, 3, 0, 0, 0, 16, 0, 0, 0, 0, 0, 0, 0,
		5, 3,
		4, 0, 32, 0, 0, 0, 0, 0, 0, 0,	/* B raw WRITE into A's FIFO */
		0x53, 0x43, 0x4c, 0x44, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		1, 0, 64, 0, 1,		/* A isend 64 tag 1 */
		5, 3,
	};
	uint8_t fifo[sizeof(honest)];

	lf_seed("honest-offload", honest, sizeof(honest));
	memcpy(fifo, honest, sizeof(honest));
	fifo[0] = 0;
	lf_seed("honest-fifo", fifo, sizeof(fifo));
	lf_seed("raw-offload", raw, sizeof(raw));
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	lf_seed_mode(write_seeds);
	return 0;
}
