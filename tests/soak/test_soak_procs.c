// SPDX-License-Identifier: MIT
/*
 * tests/soak/test_soak_procs.c - the process soak ('make soak-procs', short in 'make
 * check'; docs/testing.md "The process soak"): three layers on the same NICs at once,
 * ranks as forked processes on the software NIC's wire (tests/lib/p2p_world.c,
 * WORLD_FORK):
 *
 * Every round each rank has a window of win messages (DVX_SOAK_WIN, default 8) in flight
 * to and from every peer in every layer at once:
 *
 *   P2P        win puts, each with a signal, into the window's parts of every peer's
 *              slot for it, on the lanes in turn; once it has checked all of them, the
 *              receiver acks with a second signal (the sender waits for the ack before it
 *              writes the slot again)
 *   messaging  a context per rank with sharing on (1 group), two send and two recv
 *              communicators to every peer (the first makes the shared set, NEW; the
 *              second joins it, JOIN); every round win irecvs from and win isends to each
 *              peer, on the two connections in turn
 *   host transport  an IB transport (zero-copy mode) to every peer; every round win
 *              control messages each way
 *
 * Every message's length and bytes come from (sender, receiver, its number, layer), its
 * number being round * win + its place in the window, and are checked byte by byte at
 * the receiver, with the length the receive reported; signal words are exact ((round +
 * 1) * win after each round, the acks round + 1); at the end every rank's
 * counts of what it sent to and received from each peer, per layer, are gathered and
 * must match pairwise. Faults, the same schedule in every process (each sets its own
 * fabric's, dvx_sim_set_faults()): in every PHASE rounds, a clean half, a quarter with a
 * delay before each WQE, an eighth with every 8th request of each QP dropped (the wire
 * and the local loopback send it again after the retry time-out: the wire's least is
 * RETRY_MS, the QPs' own in the software NIC 4.3 ms) and an eighth with
 * both. Last (unless
 * DVX_SOAK_KILL=0), the highest rank is killed with SIGKILL: each survivor's P2P lane to
 * it fails with -EHOSTUNREACH, an irecv from it fails (its clear-to-send cannot be
 * written), a control message to it fails, all within the waits' bounds, and one more
 * round among the survivors is checked like the others.
 *
 * The link down (between two rounds: in the middle of a short run, in a long one every
 * LINK_ROUNDS rounds' worth of operations of a window of 1, 144 000 with 4 ranks): every layer's queues fail with it, then the P2P lanes and the
 * host transport's channels are recovered and the messaging layer's comms made again
 * (link_phase() says how, and why the messaging layer's are remade).
 *
 * Then (unless DVX_SOAK_REJOIN=0) the killed rank is started again as a new process
 * (world_cfg.restart) and rejoins the messaging layer (soak_rejoin.c): the survivors'
 * wires join its listener, each side connects to the other's handle (left in the run's
 * folder: the new process has no bootstrap), and REJOIN_ROUNDS messages go each way
 * between it and every survivor, every length and byte checked. The other layers do not
 * take it back: the sockets bootstrap marks a peer whose socket ended gone for good
 * (docs/bootstrap.md), so a restarted process cannot enter the group over which the P2P
 * lanes and the host transport exchange their QP numbers, and a P2P lane's recovery
 * reconnects to the QP it knew (dvx_qp_recover()), which a new process does not have.
 *
 *   DVX_SOAK_OPS    operations in all (posted sends and receives of the three layers,
 *                   every rank counted): default 2400 (a few seconds), make soak-procs
 *                   10^7
 *   DVX_SOAK_RANKS  ranks (2 ... 8, default 3; make soak-procs 4)
 *   DVX_SOAK_KILL   0: no rank killed at the end
 *   DVX_SOAK_REJOIN 0: the killed rank is not started again
 *   DVX_SOAK_MAXLEN the longest message (default 8192)
 *   DVX_SOAK_LINK_EVERY  rounds between link downs (0: none)
 *   DVX_SOAK_WIN    messages per peer, layer and round (1 ... 16, default 8)
 *   DVX_SOAK_RETRY_MS  the wire's least retry time-out (default 100)
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "../lib/dvx_test.h"
#include "../lib/p2p_world.h"
#include "soak_rejoin.h"

#include <dvx/ht/ib.h>
#include <dvx/msg/msg.h>

#define T_WAIT (60 * W_SEC)
#define MSG_CLOSE_NS (10 * W_SEC)
#define RETRY_MS 100		/* the wire's least retry time-out (DVX_SOAK_RETRY_MS) */
#define CTRL_MAX 256u
#define HT_TAG 0x5350u
#define ID_TAG 0xfffffu
#define S_TAG_KILL 0x53504b4cu
#define PHASE 8			/* rounds per cycle of faults */
#define NLAYERS 3
#define NCONN 2			/* connections per peer and direction: the second joins */
#define LINK_ROUNDS 2000	/* rounds between link downs in a long run */
#define REJOIN_ROUNDS 32	/* messages each way between the restarted rank and each
				 * survivor */
#define WIN_MAX 16		/* messages per peer, layer and round, at most */
#define WIN_DEFAULT 8
#define P2P_MAX 16384u		/* the longest put */

/* W_CHECK for a function that returns -1 on a failure */
#define S_CHECK(r, cond, ...)                                  \
	do {                                                   \
		if (!(cond)) {                                 \
			wfail((r), __LINE__, -1, __VA_ARGS__); \
			return -1;                             \
		}                                              \
	} while (0)

enum { L_P2P, L_MSG, L_HT };
/* a round's faults (set_faults()) */
enum { F_CLEAN, F_DELAY, F_DROP, F_BOTH, F_NKINDS };
static const char *const fname[F_NKINDS] = { "clean", "delays", "drops", "both" };
static const char *const lname[NLAYERS] = { "P2P", "messaging", "host transport" };

struct soak_cfg {
	uint64_t ops;
	uint64_t maxlen;
	uint32_t win;		/* messages per peer, layer and round */
	int nranks;
	int kill;
	int rejoin;		/* the killed rank started again rejoins the messaging layer */
	uint32_t rounds;
	uint32_t link_every;	/* rounds between two link downs (0: none) */
};

struct sp {
	struct wrank *r;
	const struct soak_cfg *cfg;
	int n, me, victim;
	uint8_t member[W_MAX_RANKS];
	/* messaging */
	struct dvx_msg m;
	void *mst, *mfifo, *mrings;
	uint8_t *mbuf;		/* [n][win] send areas, then [n][win] receive areas, maxlen
				 * each (sbuf(), rbuf()) */
	struct dvx_mr mmr;
	struct dvx_msg_comm *lc;
	struct dvx_msg_comm *snd2[W_MAX_RANKS][NCONN], *rcv2[W_MAX_RANKS][NCONN];
	/* host transport */
	struct dvx_ht_ib ht[W_MAX_RANKS];
	void *hreg[W_MAX_RANKS][3];
	uint8_t hsend[W_MAX_RANKS][WIN_MAX][CTRL_MAX], hrecv[W_MAX_RANKS][WIN_MAX][CTRL_MAX];
	/* what went where: [layer][peer] */
	uint64_t sent[NLAYERS][W_MAX_RANKS], got[NLAYERS][W_MAX_RANKS];
	uint64_t bytes, ops, faults_rounds;
	/* link downs: how many, what failed in them, what came back */
	uint64_t links, link_failed, lanes_recovered, chans_recovered, msg_remade;
	/* wall time: per fault kind of set_faults() (F_*), the link downs, the set-up */
	uint64_t ph_ns[F_NKINDS], ph_rounds[F_NKINDS], link_ns, setup_ns;
	int fkind;		/* this round's */
};

static struct soak_cfg g_cfg;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * W_SEC + (uint64_t)ts.tv_nsec;
}

/* the messaging layer's send area for message @i to @p, and receive area for @i from @p */
static uint8_t *sbuf(const struct sp *s, int p, uint32_t i)
{
	return s->mbuf + ((uint64_t)p * s->cfg->win + i) * s->cfg->maxlen;
}

static uint8_t *rbuf(const struct sp *s, int p, uint32_t i)
{
	return s->mbuf + ((uint64_t)(s->n + p) * s->cfg->win + i) * s->cfg->maxlen;
}

/* a message's length: 0 ... max, from (from, to, message, layer); a message's number is
 * round * win + its place in the round's window */
static uint64_t len_of(int from, int to, uint32_t k, int layer, uint64_t max)
{
	uint64_t x = ((uint64_t)from * 131 + (uint64_t)to * 7919 + (uint64_t)k * 104729 +
		      (uint64_t)layer * 15485863) * 0x9E3779B97F4A7C15ull;

	x ^= x >> 31;
	/* mostly short, now and then the longest; the messaging layer's may be empty, a
	 * put and a control message carry at least a byte */
	x = (x & 15) == 0 ? max : (x >> 8) % (max + 1) / ((x & 3) + 1);
	return x || layer == L_MSG ? x : 1;
}

static void fill(uint8_t *p, int from, int to, uint32_t k, int layer, uint64_t len)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		p[i] = wpat(from, to, k * NLAYERS + (uint32_t)layer, i);
}

/* the first byte that is not the pattern, or -1 */
static int64_t bad_byte(const uint8_t *p, int from, int to, uint32_t k, int layer, uint64_t len)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		if (p[i] != wpat(from, to, k * NLAYERS + (uint32_t)layer, i))
			return (int64_t)i;
	return -1;
}

static void *zalloc(uint64_t len, uint64_t align)
{
	void *p = aligned_alloc(align, (len + align - 1) & ~(align - 1));

	if (p)
		memset(p, 0, len);
	return p;
}

/* ---- set-up ---- */

static void progress_all(struct sp *s)
{
	int p;

	dvx_msg_progress(&s->m);
	for (p = 0; p < s->n; p++)
		if (s->ht[p].live == DVX_LIVE)
			dvx_ht_progress(&s->ht[p].ht);
}

/* msg_up()'s phase open: the layer over caller memory, sharing on, the message MR */
static void msg_open(struct sp *s)
{
	struct wrank *r = s->r;
	struct dvx_msg_cfg c;
	struct dvx_mem_req a, b, d;
	struct dvx_mr_cfg ma;

	memset(&c, 0, sizeof(c));
	c.nnics = 1;
	c.nics[0] = &r->nic;
	/* room for a second generation of comms while the first closes (the link down) */
	c.max_comms = (uint32_t)(2 * (2 * NCONN * s->n + 4));
	c.max_reqs = 4;		/* a comm's part of the window: win / NCONN */
	while (c.max_reqs < s->cfg->win)
		c.max_reqs *= 2;
	c.max_recvs = 1;
	c.groups = 1;		/* sharing on: a peer's first connection makes a set
				 * (NEW), its second joins it (JOIN) */
	c.max_shared_sets = 2 * (uint32_t)s->n;
	c.max_private_sets = 4 * NCONN * (uint32_t)s->n;	/* after a link down */
	/* a handshake's bound and the close deadline: the comms closed at a link down are
	 * done this long after it (their peers' close markers cannot come), well before the
	 * next one (link_phase()) */
	c.timeout_ns = MSG_CLOSE_NS;
	W_OK(r, dvx_msg_mem_req(&c, &a, &b, &d));
	s->mst = zalloc(a.bytes, a.align);
	s->mfifo = zalloc(b.bytes, b.align);
	s->mrings = zalloc(d.bytes, d.align);
	s->mbuf = zalloc(2 * (uint64_t)s->n * s->cfg->win * s->cfg->maxlen + 64, 4096);
	W_CHECK(r, s->mst && s->mfifo && s->mrings && s->mbuf, "out of memory");
	W_OK(r, dvx_msg_init(&s->m, &c, s->mst, a.bytes, s->mfifo, b.bytes, s->mrings, d.bytes));
	memset(&ma, 0, sizeof(ma));
	ma.addr = s->mbuf;
	ma.len = 2 * (uint64_t)s->n * s->cfg->win * s->cfg->maxlen + 64;
	W_OK(r, dvx_msg_reg_mr(&s->m, 0, &ma, &s->mmr));
}

/* msg_up()'s phase connect: NCONN send comms to every peer, as many accepted */
static void msg_connect_all(struct sp *s, struct dvx_msg_comm **acc, int want)
{
	struct wrank *r = s->r;
	struct dvx_msg_handle h, all[W_MAX_RANKS], hc[W_MAX_RANKS][NCONN];
	int nacc = 0, nsnd = 0, p, cn;
	uint64_t end;

	W_OK(r, dvx_msg_listen(&s->m, 0, &h, &s->lc));
	W_OK(r, dvx_bootstrap_allgather(&r->bs, &h, all, sizeof(h), T_WAIT));
	for (p = 0; p < s->n; p++)
		for (cn = 0; cn < NCONN; cn++)
			hc[p][cn] = all[p];	/* a connect keeps its progress in its handle */
	end = now_ns() + T_WAIT;
	while (nsnd < want || nacc < want) {
		W_CHECK(r, now_ns() < end, "connections: %d sends, %d accepted", nsnd, nacc);
		for (p = 0; p < s->n; p++)
			for (cn = 0; cn < NCONN; cn++)
				if (p != s->me && !s->snd2[p][cn]) {
					W_OK(r, dvx_msg_connect(&s->m, 0, 0, &hc[p][cn],
								&s->snd2[p][cn]));
					nsnd += !!s->snd2[p][cn];
				}
		if (nacc < want) {
			W_OK(r, dvx_msg_accept(s->lc, &acc[nacc]));
			nacc += !!acc[nacc];
		}
	}
}

/* msg_up()'s phase identify, sending half: this rank's connection number on each send
 * comm, sent and completed */
static void msg_say_who(struct sp *s)
{
	struct wrank *r = s->r;
	int p, cn;

	for (p = 0; p < s->n; p++) {
		for (cn = 0; cn < NCONN && p != s->me; cn++) {
			struct dvx_msg_req *sq = NULL;
			uint8_t *src = sbuf(s, p, 0) + (uint64_t)cn * 4;
			uint32_t id = (uint32_t)(s->me * NCONN + cn);
			uint64_t end = now_ns() + T_WAIT;
			int done = 0;

			memcpy(src, &id, 4);
			while (!sq) {
				W_OK(r, dvx_msg_isend(s->snd2[p][cn], src, 4, ID_TAG, &s->mmr, &sq));
				W_CHECK(r, now_ns() < end, "isend of this rank to %d", p);
				progress_all(s);
			}
			while (!done) {
				W_OK(r, dvx_msg_test(sq, &done, NULL));
				W_CHECK(r, now_ns() < end, "isend of this rank to %d: done", p);
				progress_all(s);
			}
		}
	}
}

/* msg_up()'s phase identify: which peer is at the other end of each recv comm (its
 * first message says), into rcv2[][] */
static void msg_identify(struct sp *s, struct dvx_msg_comm **acc, int nacc)
{
	struct wrank *r = s->r;
	struct dvx_msg_req *q[W_MAX_RANKS * NCONN];
	uint8_t *ids = rbuf(s, 0, 0);
	uint64_t end;
	int i;

	for (i = 0; i < nacc; i++) {
		void *bufs[1] = { ids + (uint64_t)i * 4 };
		size_t sz[1] = { 4 };
		uint32_t tg[1] = { ID_TAG };
		struct dvx_mr *mrs[1] = { &s->mmr };

		q[i] = NULL;
		end = now_ns() + T_WAIT;
		while (!q[i]) {
			W_OK(r, dvx_msg_irecv(acc[i], 1, bufs, sz, tg, mrs, &q[i]));
			W_CHECK(r, now_ns() < end, "irecv of the peer's rank");
			progress_all(s);
		}
	}
	msg_say_who(s);
	if (r->fail_line)
		return;
	for (i = 0; i < nacc; i++) {
		int done = 0;
		uint32_t who;

		end = now_ns() + T_WAIT;
		while (!done) {
			W_OK(r, dvx_msg_test(q[i], &done, NULL));
			W_CHECK(r, now_ns() < end, "the peers' ranks");
			progress_all(s);
		}
		memcpy(&who, ids + (uint64_t)i * 4, 4);
		W_CHECK(r, who < (uint32_t)(s->n * NCONN) && (int)who / NCONN != s->me &&
				   !s->rcv2[who / NCONN][who % NCONN],
			"recv comm %d says it is connection %u", i, who);
		s->rcv2[who / NCONN][who % NCONN] = acc[i];
	}
}

/* the messaging layer, in its phases: open, connect, identify */
static void msg_up(struct sp *s)
{
	struct dvx_msg_comm *acc[W_MAX_RANKS * NCONN];
	int want = NCONN * (s->n - 1);

	msg_open(s);
	if (!s->r->fail_line)
		msg_connect_all(s, acc, want);
	if (!s->r->fail_line)
		msg_identify(s, acc, want);
}

static void ht_up(struct sp *s)
{
	struct wrank *r = s->r;
	struct dvx_ht_ib_cfg c;
	struct dvx_mem_req m[3];
	uint64_t end;
	int p, k, up;

	for (p = 0; p < s->n; p++) {
		if (p == s->me)
			continue;
		memset(&c, 0, sizeof(c));
		c.nic = &r->nic;
		c.bs = &r->bs;
		c.peer = p;
		c.tag = HT_TAG + (uint32_t)(p < s->me ? p * W_MAX_RANKS + s->me :
							s->me * W_MAX_RANKS + p);
		c.mode = DVX_HT_ZC;
		c.sq_depth = 64;
		c.rq_depth = 64;
		c.max_ctrl = CTRL_MAX;
		c.ctrl_slots = s->cfg->win < 8 ? 8 : s->cfg->win;
		W_OK(r, dvx_ht_ib_mem_req(&c, &m[0], &m[1], &m[2]));
		for (k = 0; k < 3; k++) {
			s->hreg[p][k] = zalloc(m[k].bytes, m[k].align);
			W_CHECK(r, s->hreg[p][k], "out of memory");
		}
		W_OK(r, dvx_ht_ib_init(&s->ht[p], &c, s->hreg[p][0], m[0].bytes, s->hreg[p][1],
				       m[1].bytes, s->hreg[p][2], m[2].bytes));
	}
	end = now_ns() + T_WAIT;
	do {
		W_CHECK(r, now_ns() < end, "the host transports' handshakes");
		up = 0;
		for (p = 0; p < s->n; p++)
			if (p != s->me) {
				W_OK(r, dvx_ht_progress(&s->ht[p].ht));
				up += dvx_ht_connected(&s->ht[p].ht);
			}
		dvx_msg_progress(&s->m);
	} while (up < s->n - 1);
}

/* ---- a round ---- */

static void set_faults(struct sp *s, uint32_t k)
{
	struct dvx_sim_faults f;
	uint32_t at = k % PHASE;

	/* per PHASE rounds: clean, a delay before each WQE, drops (each costs the wire's
	 * retry time-out: they are few), both */
	memset(&f, 0, sizeof(f));
	if (at >= PHASE / 2 && at < PHASE * 3 / 4)
		f.delay_ns = 20000;
	if (at >= PHASE * 3 / 4)
		f.drop_every = 8;
	if (at >= PHASE * 7 / 8)
		f.delay_ns = 5000;
	dvx_sim_set_faults(wfab(s->r), (f.delay_ns || f.drop_every) ? &f : NULL);
	s->fkind = f.drop_every ? (f.delay_ns ? F_BOTH : F_DROP) : f.delay_ns ? F_DELAY : F_CLEAN;
	s->faults_rounds += (f.delay_ns || f.drop_every) != 0;
}

/* one round's requests and what has completed of them, per peer and place in the window */
struct rk {
	uint32_t k;
	uint64_t end;
	struct dvx_msg_req *rq[W_MAX_RANKS][WIN_MAX], *sq[W_MAX_RANKS][WIN_MAX];
	struct dvx_ht_req hr[W_MAX_RANKS][WIN_MAX], hs[W_MAX_RANKS][WIN_MAX];
	struct dvx_p2p_ticket tk[W_MAX_RANKS][WIN_MAX];
	int rdone[W_MAX_RANKS][WIN_MAX], sdone[W_MAX_RANKS][WIN_MAX];
	int hrd[W_MAX_RANKS][WIN_MAX], hsd[W_MAX_RANKS][WIN_MAX], sig[W_MAX_RANKS];
	int left[W_MAX_RANKS];	/* operations of the peer not yet complete */
};

static int other(const struct sp *s, int p)
{
	return p != s->me && s->member[p];
}

/* message @i of round @k: its number, and the connection it takes (the two in turn) */
static uint32_t seq_of(const struct sp *s, uint32_t k, uint32_t i)
{
	return k * s->cfg->win + i;
}

static struct dvx_msg_comm *msg_comm(struct dvx_msg_comm *const c[NCONN], uint32_t seq)
{
	return c[seq % NCONN];
}

/* phase receives (first: the messaging layer's clear-to-sends, the control receives),
 * the whole window of each peer */
static int rk_recvs(struct sp *s, struct rk *x)
{
	struct wrank *r = s->r;
	uint64_t max = s->cfg->maxlen;
	uint32_t k = x->k, i, q;
	int p, e;

	for (p = 0; p < s->n; p++) {
		if (!other(s, p))
			continue;
		for (i = 0; i < s->cfg->win; i++) {
			void *bufs[1] = { rbuf(s, p, i) };
			size_t sz[1] = { max };
			uint32_t tg[1];
			struct dvx_mr *mrs[1] = { &s->mmr };

			q = seq_of(s, k, i);
			tg[0] = q & 0xffffu;
			while (!x->rq[p][i]) {
				e = dvx_msg_irecv(msg_comm(s->rcv2[p], q), 1, bufs, sz, tg, mrs,
						  &x->rq[p][i]);
				S_CHECK(r, !e, "round %u: irecv %u from %d: %d", k, i, p, e);
				if (!x->rq[p][i])
					progress_all(s);
				S_CHECK(r, now_ns() < x->end, "round %u: irecv %u from %d not taken",
					k, i, p);
			}
			e = dvx_ht_recv_ctrl(&s->ht[p].ht, s->hrecv[p][i], CTRL_MAX, &x->hr[p][i]);
			S_CHECK(r, !e, "round %u: recv_ctrl %u from %d: %d", k, i, p, e);
			s->ops += 2;
		}
		x->left[p] = (int)(4 * s->cfg->win + 1);
	}
	return 0;
}

/* phase puts: P2P (the peer's slot for me is free once its ack of the last round is
 * here: the window's puts go to their own parts of it, on the lanes in turn, each with
 * a signal) and the host transport's control messages */
static int rk_puts(struct sp *s, struct rk *x)
{
	struct wrank *r = s->r;
	uint32_t k = x->k, i, q;
	uint64_t len, off;
	int p, e;

	for (p = 0; p < s->n; p++) {
		if (!other(s, p))
			continue;
		if (k) {
			e = dvx_p2p_wait_signal(&r->t, &r->sig_l, wsig_off(r, p, 1), DVX_CMP_GE, k,
						T_WAIT, NULL);
			S_CHECK(r, !e, "round %u: the ack of %d: %d", k, p, e);
		}
		for (i = 0; i < s->cfg->win; i++) {
			q = seq_of(s, k, i);
			off = (uint64_t)i * P2P_MAX;
			len = len_of(s->me, p, q, L_P2P, P2P_MAX);
			fill(r->data + wsend_off(r, p) + off, s->me, p, q, L_P2P, len);
			e = dvx_p2p_put_signal(&r->t, p, q % r->t.nlanes,
					       &(struct dvx_p2p_xfer){ &r->data_l,
								       wsend_off(r, p) + off,
								       &r->data_r[p],
								       wrecv_off(r, s->me) + off, len },
					       &(struct dvx_p2p_notify){ .sig = &r->sig_r[p],
									 .sigoff = wsig_off(r, s->me, 0),
									 .add = 1 },
					       T_WAIT, &x->tk[p][i]);
			S_CHECK(r, !e, "round %u: put_signal %u to %d (%llu bytes): %d (%s)", k, i,
				p, (unsigned long long)len, e, r->nic.hal.diag.msg);
			s->sent[L_P2P][p]++;
			s->bytes += len;
			s->ops++;
		}
		for (i = 0; i < s->cfg->win; i++) {
			q = seq_of(s, k, i);
			len = len_of(s->me, p, q, L_HT, CTRL_MAX);
			fill(s->hsend[p][i], s->me, p, q, L_HT, len);
			e = dvx_ht_send_ctrl(&s->ht[p].ht, s->hsend[p][i], len, &x->hs[p][i]);
			S_CHECK(r, !e, "round %u: send_ctrl %u to %d: %d", k, i, p, e);
			s->sent[L_HT][p]++;
			s->bytes += len;
			s->ops++;
		}
	}
	return 0;
}

/* phase sends: the messages (a send goes once the receiver's clear-to-send is here) */
static int rk_sends(struct sp *s, struct rk *x)
{
	struct wrank *r = s->r;
	uint64_t max = s->cfg->maxlen, len;
	uint32_t k = x->k, i, q;
	int p, e;

	for (p = 0; p < s->n; p++) {
		if (!other(s, p))
			continue;
		for (i = 0; i < s->cfg->win; i++) {
			uint8_t *src = sbuf(s, p, i);

			q = seq_of(s, k, i);
			len = len_of(s->me, p, q, L_MSG, max);
			fill(src, s->me, p, q, L_MSG, len);
			while (!x->sq[p][i]) {
				e = dvx_msg_isend(msg_comm(s->snd2[p], q), src, len, q & 0xffffu,
						  &s->mmr, &x->sq[p][i]);
				S_CHECK(r, !e, "round %u: isend %u to %d: %d", k, i, p, e);
				if (!x->sq[p][i])
					progress_all(s);
				S_CHECK(r, now_ns() < x->end, "round %u: isend %u to %d not taken",
					k, i, p);
			}
			s->sent[L_MSG][p]++;
			s->bytes += len;
			s->ops++;
		}
	}
	return 0;
}

/* what completed of peer @p's window, each message checked byte for byte as it does */
static int rk_test_peer(struct sp *s, struct rk *x, int p)
{
	struct wrank *r = s->r;
	uint64_t max = s->cfg->maxlen, len, v, want;
	uint32_t k = x->k, i, q;
	int64_t b;
	int e;

	for (i = 0; i < s->cfg->win; i++) {
		size_t got[1] = { 0 };

		q = seq_of(s, k, i);
		if (!x->sdone[p][i]) {
			e = dvx_msg_test(x->sq[p][i], &x->sdone[p][i], NULL);
			S_CHECK(r, !e, "round %u: send %u to %d: %d", k, i, p, e);
			x->left[p] -= x->sdone[p][i];
		}
		if (!x->rdone[p][i]) {
			e = dvx_msg_test(x->rq[p][i], &x->rdone[p][i], got);
			S_CHECK(r, !e, "round %u: receive %u from %d: %d", k, i, p, e);
			if (x->rdone[p][i]) {
				len = len_of(p, s->me, q, L_MSG, max);
				S_CHECK(r, got[0] == len, "round %u: %zu bytes from %d (message %u), "
					"want %llu", k, got[0], p, i, (unsigned long long)len);
				b = bad_byte(rbuf(s, p, i), p, s->me, q, L_MSG, len);
				S_CHECK(r, b < 0, "round %u: message %u from %d: byte %lld", k, i, p,
					(long long)b);
				s->got[L_MSG][p]++;
				x->left[p]--;
			}
		}
		if (!x->hsd[p][i]) {
			e = dvx_ht_test(&x->hs[p][i], &x->hsd[p][i]);
			S_CHECK(r, !e, "round %u: control message %u to %d: %d", k, i, p, e);
			x->left[p] -= x->hsd[p][i];
		}
		if (!x->hrd[p][i]) {
			e = dvx_ht_test(&x->hr[p][i], &x->hrd[p][i]);
			S_CHECK(r, !e, "round %u: control message %u from %d: %d", k, i, p, e);
			if (x->hrd[p][i]) {
				len = len_of(p, s->me, q, L_HT, CTRL_MAX);
				S_CHECK(r, x->hr[p][i].bytes == len,
					"round %u: control message %u of %llu bytes from %d, want "
					"%llu", k, i, (unsigned long long)x->hr[p][i].bytes, p,
					(unsigned long long)len);
				b = bad_byte(s->hrecv[p][i], p, s->me, q, L_HT, len);
				S_CHECK(r, b < 0, "round %u: control message %u from %d: byte %lld",
					k, i, p, (long long)b);
				s->got[L_HT][p]++;
				x->left[p]--;
			}
		}
	}
	/* the window's puts each raise the signal by one after their data */
	want = (uint64_t)(k + 1) * s->cfg->win;
	if (!x->sig[p] && (v = dvx_p2p_read_signal(&r->sig_l, wsig_off(r, p, 0))) >= want) {
		S_CHECK(r, v == want, "round %u: signal from %d is %llu, want %llu", k, p,
			(unsigned long long)v, (unsigned long long)want);
		for (i = 0; i < s->cfg->win; i++) {
			q = seq_of(s, k, i);
			len = len_of(p, s->me, q, L_P2P, P2P_MAX);
			b = bad_byte(wrecv(r, p) + (uint64_t)i * P2P_MAX, p, s->me, q, L_P2P, len);
			S_CHECK(r, b < 0, "round %u: put %u from %d: byte %lld", k, i, p,
				(long long)b);
			s->got[L_P2P][p]++;
		}
		x->sig[p] = 1;
		x->left[p]--;
	}
	return 0;
}

/* phase complete: everything of the round, within T_WAIT of its start */
static int rk_complete(struct sp *s, struct rk *x)
{
	int p, left;

	do {
		left = 0;
		for (p = 0; p < s->n; p++) {
			if (!other(s, p) || !x->left[p])
				continue;
			if (rk_test_peer(s, x, p))
				return -1;
			left += x->left[p];
		}
		if (left)
			progress_all(s);
		S_CHECK(s->r, now_ns() < x->end, "round %u: %d operations unfinished", x->k, left);
	} while (left);
	return 0;
}

/* phase ack: my puts are done, and the peers' slots read: ack them */
static int rk_ack(struct sp *s, struct rk *x)
{
	struct wrank *r = s->r;
	uint32_t k = x->k, i;
	int p, e;

	for (p = 0; p < s->n; p++) {
		if (!other(s, p))
			continue;
		for (i = 0; i < s->cfg->win; i++) {
			e = dvx_p2p_wait_local(&r->t, &x->tk[p][i], T_WAIT, NULL);
			S_CHECK(r, !e, "round %u: put %u to %d: %d", k, i, p, e);
		}
		e = dvx_p2p_signal(&r->t, p, 0,
				   &(struct dvx_p2p_notify){ .sig = &r->sig_r[p],
							     .sigoff = wsig_off(r, s->me, 1), .add = 1 },
				   T_WAIT, &x->tk[p][0]);
		S_CHECK(r, !e, "round %u: ack to %d: %d", k, p, e);
		e = dvx_p2p_wait_local(&r->t, &x->tk[p][0], T_WAIT, NULL);
		S_CHECK(r, !e, "round %u: ack to %d done: %d", k, p, e);
		s->ops++;
	}
	return 0;
}

/* round @k among the members: every layer, every byte checked; 0 or the failure. Its
 * phases: receives, puts, sends, complete, ack */
static int round_k(struct sp *s, uint32_t k)
{
	static struct rk xs;	/* a process's, one round at a time */
	struct rk *x = &xs;

	memset(x, 0, sizeof(*x));
	x->k = k;
	x->end = now_ns() + T_WAIT;
	if (rk_recvs(s, x) || rk_puts(s, x) || rk_sends(s, x) || rk_complete(s, x) ||
	    rk_ack(s, x))
		return -1;
	return 0;
}

/* every rank's counts, gathered: what p sent to q is what q got from p */
static int check_counts(struct sp *s)
{
	static uint64_t all[W_MAX_RANKS][2][NLAYERS][W_MAX_RANKS];
	uint64_t mine[2][NLAYERS][W_MAX_RANKS];
	struct wrank *r = s->r;
	int p, q, l, e;

	memcpy(mine[0], s->sent, sizeof(s->sent));
	memcpy(mine[1], s->got, sizeof(s->got));
	e = dvx_bootstrap_allgather(&r->bs, mine, all, sizeof(mine), T_WAIT);
	S_CHECK(r, !e, "gathering the counts: %d", e);
	for (p = 0; p < s->n; p++)
		for (q = 0; q < s->n; q++)
			for (l = 0; l < NLAYERS && p != q; l++)
				S_CHECK(r, all[p][0][l][q] == all[q][1][l][p],
					"%s: rank %d sent %llu to %d, which got %llu", lname[l], p,
					(unsigned long long)all[p][0][l][q], q,
					(unsigned long long)all[q][1][l][p]);
	return 0;
}

/* ---- the link down ---- */

/*
 * The link goes down on every rank's NIC at once (each process sets its own fabric's
 * fault after a barrier: no round is in flight), and every layer's QPs fail with it:
 *   P2P        a put on every lane to every peer fails (retry exhausted)
 *   messaging  an irecv on every recv comm fails (its clear-to-send cannot be written)
 *   host transport  a control message to every peer fails
 * Then the link comes back (a barrier: nobody recovers before everyone's link is up),
 * and each layer comes back as it can: P2P lanes by dvx_p2p_lane_recover() and the host
 * transport's channels by dvx_ht_recover() (both pairwise, in one order every rank
 * agrees on: the pairs (i, j), i < j, in order, each pair's lanes or channels in
 * order); the messaging layer has no recovery of a comm whose QP failed (docs/msg.md,
 * "Failures"), so every comm is closed and a new listen comm, new connections and a new
 * identification are made, as at the start. Every queue must be healthy afterwards (the
 * lanes' health records, the channels' status), and the rounds go on, checked as before.
 */
#define LINK_LANES 8

/* every layer's operations to every peer posted at once (their retries run out side by
 * side), then each must fail: with an error, never a completion, never a hang */
static int link_fail_all(struct sp *s, uint64_t end)
{
	struct wrank *r = s->r;
	struct dvx_p2p_ticket tk[W_MAX_RANKS][LINK_LANES];
	int pe[W_MAX_RANKS][LINK_LANES], he[W_MAX_RANKS];
	struct dvx_msg_req *rq[W_MAX_RANKS][NCONN];
	struct dvx_ht_req hs[W_MAX_RANKS];
	uint32_t l;
	int p, cn, e, done, left;

	S_CHECK(r, r->t.nlanes <= LINK_LANES, "%u lanes", r->t.nlanes);
	memset(rq, 0, sizeof(rq));
	memset(hs, 0, sizeof(hs));
	for (p = 0; p < s->n; p++) {
		if (!other(s, p))
			continue;
		for (l = 0; l < r->t.nlanes; l++)
			pe[p][l] = dvx_p2p_put(&r->t, p, l,
					       &(struct dvx_p2p_xfer){ &r->data_l, wsend_off(r, p),
								       &r->data_r[p],
								       wrecv_off(r, s->me), 64 },
					       T_WAIT, &tk[p][l]);
		he[p] = dvx_ht_send_ctrl(&s->ht[p].ht, s->hsend[p][0], 16, &hs[p]);
	}
	/* the irecvs (each writes a clear-to-send); one refused at once is fine: the comm
	 * failed already (the other connection's QP is the same shared set's) */
	do {
		left = 0;
		for (p = 0; p < s->n; p++)
			for (cn = 0; cn < NCONN && other(s, p); cn++) {
				void *bufs[1] = { rbuf(s, p, 0) };
				size_t sz[1] = { 64 };
				uint32_t tg[1] = { 0xfffdu };
				struct dvx_mr *mrs[1] = { &s->mmr };

				if (rq[p][cn])
					continue;
				e = dvx_msg_irecv(s->rcv2[p][cn], 1, bufs, sz, tg, mrs, &rq[p][cn]);
				if (e) {
					S_CHECK(r, e < 0, "link down: irecv from %d: %d", p, e);
					rq[p][cn] = (void *)&rq;	/* failed at once */
				}
				left += !rq[p][cn];
			}
		if (left)
			progress_all(s);
		S_CHECK(r, now_ns() < end, "link down: %d irecvs not taken", left);
	} while (left);
	for (p = 0; p < s->n; p++) {
		if (!other(s, p))
			continue;
		for (l = 0; l < r->t.nlanes; l++) {
			e = pe[p][l] ? pe[p][l] : dvx_p2p_wait_local(&r->t, &tk[p][l], T_WAIT, NULL);
			S_CHECK(r, e < 0 && e != -ETIMEDOUT, "link down: a put to %d on lane %u: %d",
				p, l, e);
			s->link_failed++;
		}
		for (cn = 0; cn < NCONN; cn++) {
			for (e = 0, done = 0; rq[p][cn] != (void *)&rq && !e && !done;) {
				e = dvx_msg_test(rq[p][cn], &done, NULL);
				progress_all(s);
				S_CHECK(r, now_ns() < end, "link down: an irecv from %d neither done "
					"nor failed", p);
			}
			S_CHECK(r, rq[p][cn] == (void *)&rq || e < 0,
				"link down: an irecv from %d (connection %d): %d, done %d", p, cn, e,
				done);
			s->link_failed++;
		}
		e = he[p] ? he[p] : dvx_ht_wait(&hs[p], T_WAIT);
		S_CHECK(r, e < 0 && e != -ETIMEDOUT, "link down: a control message to %d: %d", p,
			e);
		s->link_failed++;
	}
	return 0;
}

/* P2P lanes and host transport channels, pair by pair in the agreed order */
static int link_recover(struct sp *s)
{
	struct wrank *r = s->r;
	struct dvx_p2p_lane_health h;
	uint32_t l, ch, before;
	int p, e;

	for (p = 0; p < s->n; p++) {
		if (!other(s, p))
			continue;
		for (l = 0; l < r->t.nlanes; l++) {
			S_CHECK(r, !dvx_p2p_lane_health(&r->t, p, l, &h), "lane health");
			before = h.recoveries;
			e = dvx_p2p_lane_recover(&r->t, p, l, T_WAIT);
			S_CHECK(r, !e, "link up: dvx_p2p_lane_recover(%d, %u): %d", p, l, e);
			S_CHECK(r, !dvx_p2p_lane_health(&r->t, p, l, &h), "lane health");
			S_CHECK(r, h.state == DVX_P2P_Q_OK &&
					   (!r->t.companions || h.comp_state == DVX_P2P_Q_OK),
				"link up: lane (%d, %u) still failed (state %u/%u, err %d)", p, l,
				h.state, h.comp_state, h.err);
			s->lanes_recovered += h.recoveries != before;
		}
		for (ch = 0; ch < s->ht[p].ht.nchannels; ch++) {
			e = dvx_ht_recover(&s->ht[p].ht, ch, T_WAIT);
			S_CHECK(r, !e, "link up: dvx_ht_recover(%d, %u): %d", p, ch, e);
			S_CHECK(r, !dvx_ht_status(&s->ht[p].ht, (int32_t)ch),
				"link up: channel %u to %d: %d", ch, p,
				dvx_ht_status(&s->ht[p].ht, (int32_t)ch));
			s->chans_recovered++;
		}
	}
	return 0;
}

/*
 * The messaging layer again: every comm closed, then made as at the start. A close of a
 * comm whose QP failed waits for what cannot come (the peer's close marker) until the
 * layer's close deadline (cfg.timeout_ns, docs/msg.md "Closing"), so the old comms
 * finish closing in the background, counted in the layer's refused, and the new ones
 * take other slots and sets (a new connection never joins a set with a failed QP).
 */
static int link_remake_msg(struct sp *s)
{
	struct wrank *r = s->r;
	struct dvx_msg_comm *acc[W_MAX_RANKS * NCONN];
	int p, cn, want = NCONN * (s->n - 1);

	for (p = 0; p < s->n; p++)
		for (cn = 0; cn < NCONN; cn++) {
			if (s->snd2[p][cn])
				dvx_msg_close(s->snd2[p][cn]);
			if (s->rcv2[p][cn])
				dvx_msg_close(s->rcv2[p][cn]);
			s->snd2[p][cn] = s->rcv2[p][cn] = NULL;
		}
	dvx_msg_close(s->lc);
	s->lc = NULL;
	msg_connect_all(s, acc, want);
	if (!r->fail_line)
		msg_identify(s, acc, want);
	if (r->fail_line)
		return -1;
	s->msg_remade += 2 * (uint64_t)want;
	return 0;
}

static int link_phase(struct sp *s, uint32_t k)
{
	struct wrank *r = s->r;
	struct dvx_sim_faults f;
	struct dvx_msg_stats ms;
	uint64_t t00 = now_ns(), t0 = t00, end;

	/* the comms of the last link down finish closing first (at the layer's close
	 * deadline, MSG_CLOSE_NS after they were closed): their slots and sets come back */
	end = t0 + 2 * T_WAIT;
	for (;;) {
		dvx_msg_get_stats(&s->m, &ms);
		if (!ms.closing)
			break;
		S_CHECK(r, now_ns() < end, "link down: %u comms of the last one still closing",
			ms.closing);
		progress_all(s);
		usleep(1000);
	}
	t0 = now_ns();
	end = t0 + T_WAIT;
	dvx_sim_set_faults(wfab(r), NULL);
	S_CHECK(r, !dvx_bootstrap_barrier(&r->bs, T_WAIT), "link down: barrier");
	memset(&f, 0, sizeof(f));
	f.link_down = 1;
	dvx_sim_set_faults(wfab(r), &f);
	S_CHECK(r, !dvx_bootstrap_barrier(&r->bs, T_WAIT), "link down: barrier");
	if (link_fail_all(s, end))
		return -1;
	dvx_sim_set_faults(wfab(r), NULL);
	S_CHECK(r, !dvx_bootstrap_barrier(&r->bs, T_WAIT), "link up: barrier");
	if (link_recover(s) || link_remake_msg(s))
		return -1;
	s->links++;
	s->link_ns += now_ns() - t00;
	printf("soak-procs: rank %d: link down before round %u: every layer's queues failed "
	       "(%llu operations); P2P lanes and host transport channels recovered, "
	       "messaging comms made again, in %.2f s\n", s->me, k,
	       (unsigned long long)s->link_failed, (double)(now_ns() - t0) / 1e9);
	fflush(stdout);
	return 0;
}

/* ---- the killed rank ---- */

static void kill_phase(struct sp *s, uint32_t k)
{
	struct wrank *r = s->r;
	int v = s->victim, p, e, done = 0;
	struct dvx_p2p_ticket tk;
	struct dvx_msg_req *rq = NULL;
	struct dvx_ht_req hs;
	uint64_t t0, end;
	void *bufs[1] = { rbuf(s, v, 0) };
	size_t sz[1] = { 64 };
	uint32_t tg[1] = { 0xfffeu };
	struct dvx_mr *mrs[1] = { &s->mmr };

	r->alone = 1;
	if (s->me == v) {
		for (p = 0; p < s->n; p++)
			if (p != v)
				W_OK(r, dvx_bootstrap_recv(&r->bs, p, S_TAG_KILL, NULL, 0, T_WAIT));
		fflush(NULL);
		kill(getpid(), SIGKILL);
		W_CHECK(r, 0, "SIGKILL did not end rank %d", v);
	}
	W_OK(r, dvx_bootstrap_send(&r->bs, v, S_TAG_KILL, NULL, 0, T_WAIT));
	t0 = now_ns();
	end = t0 + T_WAIT;
	/* P2P: a put to it fails (retry exhausted), not a hang */
	for (;;) {
		W_OK(r, dvx_p2p_put(&r->t, v, 0,
				    &(struct dvx_p2p_xfer){ &r->data_l, wsend_off(r, v), &r->data_r[v],
							    wrecv_off(r, s->me), 64 },
				    T_WAIT, &tk));
		e = dvx_p2p_wait_local(&r->t, &tk, T_WAIT, NULL);
		if (e)
			break;
		W_CHECK(r, now_ns() < end, "the killed rank %d still takes puts", v);
	}
	W_CHECK(r, e == -EHOSTUNREACH, "a put to the killed rank: %d", e);
	/* messaging: an irecv from it fails, its clear-to-send has nowhere to go */
	while (!rq) {
		W_OK(r, dvx_msg_irecv(s->rcv2[v][0], 1, bufs, sz, tg, mrs, &rq));
		W_CHECK(r, now_ns() < end, "an irecv from the killed rank not taken");
		if (!rq)
			progress_all(s);
	}
	for (e = 0; !e && !done;) {
		e = dvx_msg_test(rq, &done, NULL);
		progress_all(s);
		W_CHECK(r, now_ns() < end, "an irecv from the killed rank neither done nor failed");
	}
	W_CHECK(r, e < 0, "an irecv from the killed rank: %d, done %d", e, done);
	/* the host transport: a control message to it fails */
	memset(&hs, 0, sizeof(hs));
	e = dvx_ht_send_ctrl(&s->ht[v].ht, s->hsend[v][0], 16, &hs);
	if (!e)
		e = dvx_ht_wait(&hs, T_WAIT);
	W_CHECK(r, e < 0 && e != -ETIMEDOUT, "a control message to the killed rank: %d", e);
	/* one more round among the survivors, checked as the others */
	s->member[v] = 0;
	dvx_sim_set_faults(wfab(r), NULL);
	if (round_k(s, k))
		return;
	printf("soak-procs: rank %d: rank %d killed after round %u: P2P, messaging and the host "
	       "transport to it failed within %.2f s; one more round among the survivors checked\n",
	       s->me, v, k, (double)(now_ns() - t0) / 1e9);
	fflush(stdout);
	/* nobody leaves while a survivor still posts to it */
	for (p = 0; p < s->n; p++)
		if (s->member[p] && p != s->me) {
			W_OK(r, dvx_p2p_signal(&r->t, p, 0,
					       &(struct dvx_p2p_notify){ .sig = &r->sig_r[p],
									 .sigoff = wsig_off(r, s->me, 2),
									 .add = 1 },
					       T_WAIT, &tk));
			W_OK(r, dvx_p2p_wait_local(&r->t, &tk, T_WAIT, NULL));
		}
	for (p = 0; p < s->n; p++)
		if (s->member[p] && p != s->me)
			W_OK(r, dvx_p2p_wait_signal(&r->t, &r->sig_l, wsig_off(r, p, 2), DVX_CMP_GE,
						    1, T_WAIT, NULL));
}

/* ---- the body ---- */

/* ---- the killed rank started again ---- */

static void progress_cb(void *arg)
{
	progress_all(arg);
}

/* a survivor's half of the rejoin (soak_rejoin.c): the new process's wire joined, a
 * comm each way made from handles, REJOIN_ROUNDS messages each way checked */
static void rejoin_phase(struct sp *s)
{
	uint64_t ops = 0, bytes = 0;

	soak_rejoin_survivor(s->r, &s->m, s->victim, progress_cb, s, &ops, &bytes);
	if (!s->r->fail_line)
		printf("soak-procs: rank %d: the killed rank %d started again and rejoined the "
		       "messaging layer: %llu messages (%llu bytes) with it checked\n", s->me,
		       s->victim, (unsigned long long)ops, (unsigned long long)bytes);
}

static void teardown(struct sp *s)
{
	int p, k;

	for (p = 0; p < s->n; p++) {
		if (s->ht[p].live == DVX_LIVE)
			dvx_ht_ib_fini(&s->ht[p]);
		for (k = 0; k < 3; k++)
			free(s->hreg[p][k]);
	}
	if (s->m.live == DVX_LIVE) {
		if (s->mmr.live)
			dvx_msg_dereg_mr(&s->m, &s->mmr);
		dvx_msg_fini(&s->m);
	}
	free(s->mst);
	free(s->mfifo);
	free(s->mrings);
	free(s->mbuf);
}

/* where this rank's wall time went: set-up, the rounds of each fault kind, link downs */
static void print_times(const struct sp *s, uint64_t total)
{
	int f;

	printf("soak-procs: rank %d: wall %.1f s: set-up %.2f s", s->me, (double)total / 1e9,
	       (double)s->setup_ns / 1e9);
	for (f = 0; f < F_NKINDS; f++)
		printf(", %s %llu rounds %.1f s (%.2f ms each)", fname[f],
		       (unsigned long long)s->ph_rounds[f], (double)s->ph_ns[f] / 1e9,
		       s->ph_rounds[f] ? (double)s->ph_ns[f] / 1e6 / (double)s->ph_rounds[f] : 0.0);
	printf(", link downs %.2f s\n", (double)s->link_ns / 1e9);
}

static void body(struct wrank *r)
{
	struct sp *s = calloc(1, sizeof(*s));
	struct dvx_msg_stats ms;
	uint64_t t0 = now_ns(), t1;
	uint32_t k;
	int p;

	W_CHECK(r, s, "out of memory");
	s->r = r;
	s->cfg = &g_cfg;
	s->n = r->w->cfg.nranks;
	s->me = r->rank;
	s->victim = g_cfg.kill ? s->n - 1 : -1;
	for (p = 0; p < s->n; p++)
		s->member[p] = 1;
	msg_up(s);
	if (!r->fail_line)
		ht_up(s);
	s->setup_ns = now_ns() - t0;
	for (k = 0; !r->fail_line && k < g_cfg.rounds; k++) {
		if (g_cfg.link_every && k && k % g_cfg.link_every == 0 && link_phase(s, k))
			break;
		set_faults(s, k);
		t1 = now_ns();
		if (round_k(s, k))
			break;
		s->ph_ns[s->fkind] += now_ns() - t1;
		s->ph_rounds[s->fkind]++;
	}
	dvx_sim_set_faults(wfab(r), NULL);
	if (!r->fail_line && !check_counts(s)) {
		dvx_msg_get_stats(&s->m, &ms);
		printf("soak-procs: rank %d: %u rounds (%llu with faults), %llu operations, %llu "
		       "bytes checked; messaging: %llu shared set(s) made, %llu joined, %llu "
		       "private; %llu link down(s): %llu operations failed, %llu P2P lanes and "
		       "%llu channels recovered, %llu comms made again\n", s->me, k,
		       (unsigned long long)s->faults_rounds, (unsigned long long)s->ops,
		       (unsigned long long)s->bytes, (unsigned long long)ms.primaries,
		       (unsigned long long)ms.secondaries, (unsigned long long)ms.privates,
		       (unsigned long long)s->links, (unsigned long long)s->link_failed,
		       (unsigned long long)s->lanes_recovered,
		       (unsigned long long)s->chans_recovered, (unsigned long long)s->msg_remade);
		print_times(s, now_ns() - t0);
		{
			struct dvx_sim_stats ss;

			memset(&ss, 0, sizeof(ss));
			dvx_sim_get_stats(wfab(r), &ss);
			if (ss.ro_shuffled)	/* DVX_SIM_REORDER: what this rank's NIC reordered */
				printf("soak-procs: rank %d: reorder: %llu shuffled passes, %llu "
				       "messages placed in part (%llu tail first), %llu early "
				       "gathers, %llu fenced\n", s->me,
				       (unsigned long long)ss.ro_shuffled,
				       (unsigned long long)ss.ro_splits,
				       (unsigned long long)ss.ro_tail_first,
				       (unsigned long long)ss.ro_early,
				       (unsigned long long)ss.ro_fenced);
		}
		fflush(stdout);
		if (s->victim >= 0)
			kill_phase(s, k);
		if (s->victim >= 0 && g_cfg.rejoin && !r->fail_line)
			rejoin_phase(s);
	}
	if (!r->alone && !r->fail_line) {
		/* the comms close with everyone still there */
		for (p = 0; p < s->n; p++)
			for (k = 0; k < NCONN; k++) {
				if (s->snd2[p][k])
					dvx_msg_close(s->snd2[p][k]);
				if (s->rcv2[p][k])
					dvx_msg_close(s->rcv2[p][k]);
			}
		dvx_msg_close(s->lc);
		W_OK(r, dvx_bootstrap_barrier(&r->bs, T_WAIT));
		for (k = 0; k < 1000; k++) {
			dvx_msg_get_stats(&s->m, &ms);
			if (!ms.comms)
				break;
			dvx_msg_progress(&s->m);
			usleep(1000);
		}
	}
	teardown(s);
	free(s);
}

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : def;
}

static void test_soak_procs(void **state)
{
	struct world_cfg c;
	uint64_t per_round;
	uint32_t lr;

	(void)state;
	g_cfg.nranks = (int)env_u64("DVX_SOAK_RANKS", 3);
	if (g_cfg.nranks < 2 || g_cfg.nranks > W_MAX_RANKS)
		g_cfg.nranks = 3;
	g_cfg.ops = env_u64("DVX_SOAK_OPS", 2400);
	g_cfg.maxlen = env_u64("DVX_SOAK_MAXLEN", 8192);
	g_cfg.kill = (int)env_u64("DVX_SOAK_KILL", 1);
	g_cfg.rejoin = g_cfg.kill && env_u64("DVX_SOAK_REJOIN", 1);
	soak_rejoin_setup(REJOIN_ROUNDS, g_cfg.maxlen);
	g_cfg.win = (uint32_t)env_u64("DVX_SOAK_WIN", WIN_DEFAULT);
	if (g_cfg.win < 1 || g_cfg.win > WIN_MAX)
		g_cfg.win = WIN_DEFAULT;
	/* per rank and peer a round posts win each of irecvs, control receives, puts,
	 * control messages and isends, and an ack */
	per_round = (uint64_t)g_cfg.nranks * (uint64_t)(g_cfg.nranks - 1) * (5 * g_cfg.win + 1);
	g_cfg.rounds = (uint32_t)((g_cfg.ops + per_round - 1) / per_round);
	/* a link down in the middle of a short run; in a long one every LINK_ROUNDS rounds
	 * of one message per peer and layer (as many operations between two) */
	lr = LINK_ROUNDS * 6 / (5 * g_cfg.win + 1);
	g_cfg.link_every = (uint32_t)env_u64("DVX_SOAK_LINK_EVERY",
					     g_cfg.rounds < 2 * lr ? g_cfg.rounds / 2 + 1 : lr);
	printf("soak-procs: %d ranks as processes on the wire, %u rounds of %u messages per "
	       "peer and layer (%llu operations), messages up to %llu bytes, faults in cycles "
	       "of %d rounds, the link down every %u rounds%s\n", g_cfg.nranks, g_cfg.rounds,
	       g_cfg.win, (unsigned long long)(g_cfg.rounds * per_round),
	       (unsigned long long)g_cfg.maxlen, PHASE, g_cfg.link_every,
	       g_cfg.rejoin ? ", then the last rank killed and started again" :
	       g_cfg.kill ? ", then the last rank killed" : "");
	fflush(stdout);
	world_cfg_default(&c);
	c.nranks = g_cfg.nranks;
	c.procs = WORLD_FORK;
	c.slot_bytes = (uint64_t)g_cfg.win * P2P_MAX;	/* a put's part each */
	c.nslots = 4;
	c.qps_per_nic = 2;
	c.wire_retry_ns = env_u64("DVX_SOAK_RETRY_MS", RETRY_MS) * W_MS;
	/* and the comms made again, and those with the restarted rank */
	c.extra_objs = (uint32_t)(16 * g_cfg.nranks + 32);
	if (g_cfg.kill)
		c.victim = g_cfg.nranks;	/* the last rank, + 1 */
	if (g_cfg.rejoin)
		c.restart = soak_rejoin_restarted;
	assert_int_equal(world_run(&c, body, NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_soak_procs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
