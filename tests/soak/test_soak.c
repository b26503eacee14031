// SPDX-License-Identifier: MIT
/*
 * tests/soak/test_soak.c - a soak run of the P2P transport on the software NIC with
 * random network faults and checksummed data (TESTING.md ring 5).
 *
 * 3 or 4 ranks as threads (tests/lib/p2p_world.h), several lanes per peer. Every round
 * each rank sends 1-4 messages to every peer: a 32-byte header (sender, receiver,
 * round, attempt, index, length, 64-bit hash of the payload) and a payload of 8 B to
 * 256 KiB, with a random operation (put_signal, fenced put_signal, put_counter then
 * signal, put_signal_counter, put then signal) on random channels. Message i raises
 * the receiver's data signal word for the sender by 1 << i, so the word tells exactly
 * which messages landed. Everything is derived from one seed (DVX_SOAK_SEED): the
 * configuration, the plan of every round, the payloads and the faults.
 *
 * One attempt of a round:
 *   rank 0 sets the fault of the ready phase; barrier
 *   ready:  a signal to every peer ("my receive area for you is free"), wait_local
 *   status: allgather of every rank's failed lanes (health records) and errors;
 *           rank 0 clears the fault; barrier; on failure: recover, next attempt
 *   each sender waits for the peer's ready word (== 1) before it puts to it
 *   rank 0 sets the fault of the data phase; barrier
 *   data:   the messages, then every ticket and counter waited for (bounded)
 *   status: as above; on success every receiver finds its data words exactly equal to
 *           the plan's mask, every message verified, every counter word exactly 1
 *           for the counter operations and 0 otherwise; on failure the lanes are
 *           recovered, then every message whose signal bit is set is verified (its
 *           data is in place: same QP before the fetch-add, or the signal was sent
 *           only after the put completed), counters are at most 1, and the round is
 *           redone as the next attempt with fresh payloads.
 *
 * Faults (struct dvx_sim_faults and dvx_sim_set_port(), fabric-wide, for one phase):
 * drop_every 4-32, small drop_count (<= retry_count) and delays must never fail a
 * lane (checked); a large drop_count, a port down or the link down may exhaust the
 * retries of any lane carrying traffic. Failed lanes are agreed over the bootstrap
 * (the union of both ends' reports) and recovered with dvx_p2p_lane_recover() in one
 * global order (i < j, then lane), which both ends of every pair follow.
 *
 * Environment: DVX_SOAK_SEED (default 0x50a4), DVX_SOAK_ROUNDS (default 200),
 * DVX_SOAK_SECONDS and DVX_SOAK_OPS (instead of a number of rounds: run at least this
 * long and until the ranks have posted at least this many operations),
 * DVX_SOAK_RANKS (2-8; default 3 or 4 from the seed), DVX_SOAK_LANES (1-8; default
 * 2-4 from the seed), DVX_SOAK_MSGS (messages per peer and round, 1-64, default 4),
 * DVX_SOAK_MAXLEN (largest payload, 8 B - 256 KiB, the default), DVX_SOAK_STRICT and
 * DVX_SOAK_OVERLAP (both 1 by default; see recover_agreed()), DVX_SOAK_KILL (as
 * processes, 1 by default: the last phase below). `make soak` is the long run: 10^7
 * operations, 8 ranks, 64 messages of <= 4 KiB. As processes (forked with
 * DVX_WORLD_PROCS=1, or under mpirun; 'make check-procs') every rank sets the faults on its
 * own fabric, the port that goes down is its rank's, and the accounting is allgathered
 * and checked in every process (gather()); a timed run's operation count is then rank
 * 0's own. Then one rank, drawn from the seed and never rank 0, dies by SIGKILL: every
 * survivor's lanes to it must fail with retry exhausted, its lanes to the others stay
 * healthy and carry one more round, checked, among the survivors alone (kill_phase();
 * under mpirun the launcher's recovery mode, DVX_MPI_RECOVERY=1). Every wait is bounded;
 * a timeout is a failure (a hang). An operation is a posting call that returned 0 (a
 * put_signal is one; the WQEs the software NIC executed are printed beside).
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../lib/dvx_test.h"
#include "../lib/p2p_world.h"

#define S_MAX_MSGS 64				/* messages per (sender, round): signal bits */
#define S_MIN_LEN 8u
#define S_MAX_LEN (256u << 10)
#define S_HDR 32u
/* one message's area in a slot: header, the largest payload, a gap */
#define S_SPAN(maxlen) (S_HDR + (uint64_t)(maxlen) + 64u)
#define S_SIG_DATA 0u				/* signal word (sender, 0): data bits */
#define S_SIG_READY 1u				/* signal word (receiver, 1): ready */
#define S_MAGIC 0x534f414bu			/* "SOAK" */
#define S_FAULT_TRIES 3				/* attempts of a round that get faults */
#define S_MAX_TRIES 6				/* a round that fails more often: a bug */
#define S_LANE_BITS 8				/* bad-lane mask: bit peer * 8 + lane */
#define T_WAIT (20 * W_SEC)			/* every wait: a generous bound */
#define S_TAG_KILL 0x534bu			/* bootstrap tag: a survivor is past the last
						 * collective (kill_phase()) */
#ifndef S_DROP_MIN
#define S_DROP_MIN 2				/* drop_every range (pick_fault()) */
#define S_DROP_MAX 32
#endif

/* ---- seeded randomness ---- */

static uint64_t mix(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

struct rng {
	uint64_t s;
};

static struct rng rseed(uint64_t seed, uint64_t what, uint64_t a, uint64_t b, uint64_t c)
{
	struct rng g = { mix(mix(mix(mix(seed) ^ what) ^ a) ^ b) ^ c };

	return g;
}

static uint64_t rnext(struct rng *g)
{
	g->s += 0x9E3779B97F4A7C15ull;
	return mix(g->s);
}

/* uniform in [lo, hi] */
static uint64_t rrange(struct rng *g, uint64_t lo, uint64_t hi)
{
	return lo + rnext(g) % (hi - lo + 1);
}

/* ---- what one round sends ---- */

enum kind {
	K_PUT_SIGNAL,		/* put_signal */
	K_PUT_SIGNAL_FENCE,	/* put_signal, fenced */
	K_PUT_COUNTER_SIGNAL,	/* put_counter; counter and ticket; signal on sig_ch */
	K_PUT_SIGNAL_COUNTER,	/* put_signal_counter */
	K_PUT_THEN_SIGNAL,	/* put; ticket; signal on sig_ch */
	K_NKINDS
};

static const char *const kind_name[K_NKINDS] = {
	"put_signal", "put_signal+fence", "put_counter,signal", "put_signal_counter",
	"put,signal",
};

struct msg {
	uint32_t kind;
	uint32_t ch;
	uint32_t sig_ch;
	uint32_t len;		/* payload bytes after the header */
	uint64_t off;		/* in the slot */
};

struct plan {
	uint32_t n;
	struct msg m[S_MAX_MSGS];
};

struct hdr {
	uint32_t magic;
	uint16_t from;
	uint16_t to;
	uint32_t round;
	uint32_t attempt;
	uint32_t index;
	uint32_t len;
	uint64_t hash;
};

_Static_assert(sizeof(struct hdr) == S_HDR, "header is 32 bytes");

static int has_counter(uint32_t kind)
{
	return kind == K_PUT_COUNTER_SIGNAL || kind == K_PUT_SIGNAL_COUNTER;
}

/* ---- faults ---- */

enum fault {
	F_NONE,
	F_DROP_EVERY,		/* 4..32: retries recover (see pick_fault()) */
	F_DELAY,		/* 1..40 us per WQE */
	F_DROP_DELAY,		/* both */
	F_DROP_FEW,		/* drop_count 1..retry_count: retries recover */
	F_DROP_MANY,		/* drop_count 8..64: may exhaust a lane's retries */
	F_PORT_DOWN,		/* one rank's port down for the phase */
	F_LINK_DOWN,		/* every port down for the phase */
	F_NFAULTS
};

static const char *const fault_name[F_NFAULTS] = {
	"none", "drop_every", "delay", "drop_every+delay", "drop_count<=retries",
	"drop_count>retries", "port_down", "link_down",
};

struct fault_pick {
	uint32_t kind;
	struct dvx_sim_faults f;
	int port_rank;
};

/* the fault of (round, attempt, phase): the same on every rank */
static void pick_fault(uint64_t seed, int nranks, uint32_t round, uint32_t tries, uint32_t phase,
		       struct fault_pick *fp)
{
	struct rng g = rseed(seed, 3, round, tries, phase);
	uint64_t x = rrange(&g, 0, 99);

	memset(fp, 0, sizeof(*fp));
	fp->port_rank = -1;
	if (tries >= S_FAULT_TRIES)
		x = 0;	/* a round ends: later attempts run without faults */
	if (x < 55) {
		fp->kind = F_NONE;
	} else if (x < 67) {
		/*
		 * From 2: the sim drops every n-th request of each QP, so a retry always
		 * gets through and no lane may fail. (It once counted fabric-wide, and two
		 * QPs retrying in step could have the same one dropped every time: seen
		 * with drop_every 2, seeds 9 and 29.)
		 */
		fp->kind = F_DROP_EVERY;
		fp->f.drop_every = (uint32_t)rrange(&g, S_DROP_MIN, S_DROP_MAX);
	} else if (x < 75) {
		fp->kind = F_DELAY;
		fp->f.delay_ns = rrange(&g, 1, 40) * 1000;
	} else if (x < 80) {
		fp->kind = F_DROP_DELAY;
		fp->f.drop_every = (uint32_t)rrange(&g, S_DROP_MIN, S_DROP_MAX);
		fp->f.delay_ns = rrange(&g, 1, 20) * 1000;
	} else if (x < 87) {
		fp->kind = F_DROP_FEW;
		fp->f.drop_count = (uint32_t)rrange(&g, 1, 7);	/* retry_count is 7 */
	} else if (x < 92) {
		fp->kind = F_DROP_MANY;
		fp->f.drop_count = (uint32_t)rrange(&g, 8, 64);
	} else if (x < 97) {
		fp->kind = F_PORT_DOWN;
		fp->port_rank = (int)rrange(&g, 0, (uint64_t)nranks - 1);
	} else {
		fp->kind = F_LINK_DOWN;
		fp->f.link_down = 1;
	}
}

static int fault_benign(uint32_t kind)
{
	return kind <= F_DROP_FEW;
}

/* ---- the run's shared state ---- */

struct rank_stats {
	uint64_t msgs_ok;		/* received and verified in accepted attempts */
	uint64_t msgs_partial;		/* verified from attempts that failed */
	uint64_t bytes;			/* header + payload bytes verified */
	uint64_t sent_ok[W_MAX_RANKS];	/* to peer, in accepted attempts */
	uint64_t recv_ok[W_MAX_RANKS];	/* from peer, in accepted attempts */
	uint64_t by_kind[K_NKINDS];	/* messages sent in accepted attempts */
	uint64_t counters_ok;		/* counter words found exactly 1 */
	uint64_t ctr_moved_failed;	/* counter moved though its put failed */
	uint64_t errors;		/* error returns seen (lane failures) */
	uint64_t err_unreach, err_canceled, err_reset;
	uint64_t ops;			/* posting calls that returned 0 */
	uint64_t recover_calls;		/* lane_recover() calls on agreed-bad lanes */
	uint64_t still_failed;		/* lanes failed again inside their recovery */
	uint64_t expect_rec[W_MAX_RANKS][S_LANE_BITS];
};

struct soak {
	uint64_t seed;
	uint32_t rounds;		/* 0: run by time */
	uint64_t seconds;
	uint64_t min_ops;		/* DVX_SOAK_OPS: with no rounds, run at least this many */
	int strict;			/* DVX_SOAK_STRICT: no second recovery pass */
	int overlap;			/* DVX_SOAK_OVERLAP: no meeting after recovery */
	int victim;			/* as processes: the rank killed at the end, -1 none */
	int nranks;
	uint32_t nlanes;
	uint32_t max_msgs;		/* DVX_SOAK_MSGS: 1 .. S_MAX_MSGS per peer and round */
	uint32_t max_len;		/* DVX_SOAK_MAXLEN: payload bytes, 8 .. S_MAX_LEN */
	uint64_t span;			/* S_SPAN(max_len) */
	uint64_t start_ns;
	uint64_t wqes;			/* WQEs the software NIC executed (rank 0, at the end) */
	/* written by rank 0 */
	uint32_t rounds_done;
	uint64_t attempts;
	uint64_t failed_attempts;
	uint64_t faults[F_NFAULTS];
	uint64_t lanes_failed;		/* agreed-bad lanes (both ends count once) */
	struct rank_stats st[W_MAX_RANKS];
};

/* what each rank contributes to a status allgather */
struct status {
	uint64_t bad;		/* bit peer * 8 + lane: that lane of mine is not OK */
	uint32_t errors;	/* error returns in the phase */
	uint32_t stop;		/* rank 0: the run ends after this round */
};

/* operations posted so far by every rank (rank 0 decides when a timed run ends) */
static uint64_t all_ops(const struct soak *s)
{
	uint64_t n = 0;
	int q;

	for (q = 0; q < s->nranks; q++)
		n += __atomic_load_n(&s->st[q].ops, __ATOMIC_RELAXED);
	return n;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * W_SEC + (uint64_t)ts.tv_nsec;
}

static void make_plan(const struct soak *s, int from, int to, uint32_t round, struct plan *p)
{
	struct rng g = rseed(s->seed, 1, (uint64_t)from, (uint64_t)to, round);
	uint32_t i;

	p->n = (uint32_t)rrange(&g, 1, s->max_msgs);
	for (i = 0; i < p->n; i++) {
		struct msg *m = &p->m[i];
		/* log-uniform 8 B .. max_len */
		uint32_t e = (uint32_t)rrange(&g, 3, 31 - (uint32_t)__builtin_clz(s->max_len));
		uint64_t hi = (1ull << (e + 1)) - 1;

		m->kind = (uint32_t)rrange(&g, 0, K_NKINDS - 1);
		m->ch = (uint32_t)rrange(&g, 0, 4ull * s->nlanes - 1);
		m->sig_ch = (uint32_t)rrange(&g, 0, 4ull * s->nlanes - 1);
		m->len = (uint32_t)rrange(&g, 1ull << e, hi < s->max_len ? hi : s->max_len);
		m->off = (uint64_t)i * s->span;
	}
}

static uint64_t rotl(uint64_t x, unsigned k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t payload_hash(const uint8_t *p, uint32_t len, uint64_t key)
{
	uint64_t h = mix(key ^ len), w;
	uint32_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, 8);
		h = rotl(h ^ (w * 0x87C37B91114253D5ull), 31) * 0x4CF5AD432745937Full;
	}
	if (i < len) {
		w = 0;
		memcpy(&w, p + i, len - i);
		h = rotl(h ^ (w * 0x87C37B91114253D5ull), 31) * 0x4CF5AD432745937Full;
	}
	return mix(h);
}

static uint64_t msg_key(const struct soak *s, int from, int to, uint32_t round, uint32_t attempt,
			uint32_t idx)
{
	return rseed(s->seed, 2, (uint64_t)from << 32 | (uint64_t)to << 16 | idx, round, attempt).s;
}

/* header and payload of message @idx into the send area for @to */
static void fill_msg(struct wrank *r, const struct soak *s, int to, uint32_t round,
		     uint32_t attempt, uint32_t idx, const struct msg *m)
{
	uint8_t *base = r->data + wsend_off(r, to) + m->off;
	uint64_t key = msg_key(s, r->rank, to, round, attempt, idx);
	struct rng g = { key };
	struct hdr h;
	uint32_t i;

	for (i = 0; i < m->len; i += 8) {
		uint64_t w = rnext(&g);

		memcpy(base + S_HDR + i, &w, m->len - i < 8 ? m->len - i : 8);
	}
	h.magic = S_MAGIC;
	h.from = (uint16_t)r->rank;
	h.to = (uint16_t)to;
	h.round = round;
	h.attempt = attempt;
	h.index = idx;
	h.len = m->len;
	h.hash = payload_hash(base + S_HDR, m->len, key);
	memcpy(base, &h, sizeof(h));
}

/* 0 when message @idx from @from is in place; else -1 and @why says what differs */
static int check_msg(struct wrank *r, const struct soak *s, int from, uint32_t round,
		     uint32_t attempt, uint32_t idx, const struct msg *m, const char **why)
{
	const uint8_t *base = wrecv(r, from) + m->off;
	struct hdr h;

	memcpy(&h, base, sizeof(h));
	*why = "magic";
	if (h.magic != S_MAGIC)
		return -1;
	*why = "sender/receiver";
	if (h.from != from || h.to != r->rank)
		return -1;
	*why = "round/attempt/index";
	if (h.round != round || h.attempt != attempt || h.index != idx)
		return -1;
	*why = "length";
	if (h.len != m->len)
		return -1;
	*why = "payload hash";
	if (h.hash != payload_hash(base + S_HDR, m->len,
				   msg_key(s, from, r->rank, round, attempt, idx)))
		return -1;
	return 0;
}

/* ---- one rank ---- */

struct ctx {
	struct wrank *r;
	struct soak *s;
	struct rank_stats *st;
	struct status mine;
	struct status all[W_MAX_RANKS];
	struct fault_pick fp;
};

/* an error return of a post or wait: a failed lane (fine), or a hang or a bug */
static int note_err(struct ctx *c, int e, int line, const char *what)
{
	if (e == -EHOSTUNREACH || e == -ECANCELED || e == -ECONNRESET) {
		c->mine.errors++;
		c->st->errors++;
		if (e == -EHOSTUNREACH)
			c->st->err_unreach++;
		else if (e == -ECANCELED)
			c->st->err_canceled++;
		else
			c->st->err_reset++;
		return 0;
	}
	wfail(c->r, line, e, "%s = %d (%s) under fault %s", what, e,
	      e == -ETIMEDOUT ? "a wait ran out: hang" : "unexpected error",
	      fault_name[c->fp.kind]);
	return -1;
}

#define NOTE(c, e, what)                                          \
	do {                                                      \
		if ((e) && note_err((c), (e), __LINE__, (what))) \
			return -1;                                \
	} while (0)

static int lane_bad(struct ctx *c, int peer, uint32_t lane)
{
	struct dvx_p2p_lane_health h;

	if (dvx_p2p_lane_health(&c->r->t, peer, lane, &h))
		return 1;
	return h.state != DVX_P2P_Q_OK || (c->r->t.companions && h.comp_state != DVX_P2P_Q_OK);
}

/* a lane's health record in words (failure messages) */
static const char *lane_str(struct ctx *c, int peer, uint32_t lane, char *buf, size_t len)
{
	struct dvx_p2p_lane_health h;

	if (dvx_p2p_lane_health(&c->r->t, peer, lane, &h))
		return "?";
	snprintf(buf, len,
		 "state %u/%u err %d synd %#x/%#x op %#x qpn %#x wqe %u done %llu inflight %llu/%llu rec %u last %d",
		 h.state, h.comp_state, h.err, h.syndrome, h.vendor_syndrome, h.wqe_opcode, h.qpn,
		 h.wqe_index, (unsigned long long)h.completed, (unsigned long long)h.in_flight,
		 (unsigned long long)h.comp_in_flight, h.recoveries, h.last_err);
	return buf;
}

static void apply_fault(struct ctx *c, uint32_t round, uint32_t tries, uint32_t phase)
{
	struct soak *s = c->s;

	pick_fault(s->seed, s->nranks, round, tries, phase, &c->fp);
	if (c->r->rank == 0)
		s->faults[c->fp.kind]++;
	/* one fabric: rank 0 sets it for all; as processes every rank sets its own, and
	 * the port that goes down is the one of its rank's process */
	if (c->r->rank != 0 && !c->r->w->procs)
		return;
	if (c->fp.kind == F_PORT_DOWN) {
		if (!c->r->w->procs || c->r->rank == c->fp.port_rank)
			dvx_sim_set_port(wfab(c->r), wnic_index(&c->r->w->r[c->fp.port_rank]), 1,
					 0);
	} else if (c->fp.kind != F_NONE) {
		dvx_sim_set_faults(wfab(c->r), &c->fp.f);
	}
}

static void clear_fault(struct ctx *c)
{
	if (c->r->rank != 0 && !c->r->w->procs)
		return;
	dvx_sim_set_faults(wfab(c->r), NULL);
	if (c->fp.kind == F_PORT_DOWN && (!c->r->w->procs || c->r->rank == c->fp.port_rank))
		dvx_sim_set_port(wfab(c->r), wnic_index(&c->r->w->r[c->fp.port_rank]), 1, 1);
}

/*
 * The phase's status: my failed lanes from their health records, allgathered; rank 0
 * clears the fault; a barrier. Return 1 when any rank saw a failure, 0 when none,
 * -1 when the test failed.
 */
static int exchange_status(struct ctx *c, int stop)
{
	struct wrank *r = c->r;
	int n = r->w->cfg.nranks, p, q, any = 0, err;
	uint32_t l;

	c->mine.bad = 0;
	for (p = 0; p < n; p++)
		for (l = 0; l < r->t.nlanes && p != r->rank; l++)
			if (lane_bad(c, p, l))
				c->mine.bad |= 1ull << (p * S_LANE_BITS + l);
	c->mine.stop = (uint32_t)stop;
	if (c->mine.bad && fault_benign(c->fp.kind))
		for (p = 0; p < n; p++)
			for (l = 0; l < r->t.nlanes && p != r->rank; l++)
				if ((c->mine.bad >> (p * S_LANE_BITS + l)) & 1) {
					char b[200];

					fprintf(stderr, "soak: rank %d lane (%d, %u) failed: %s\n",
						r->rank, p, l, lane_str(c, p, l, b, sizeof(b)));
				}
	err = dvx_bootstrap_allgather(&r->bs, &c->mine, c->all, sizeof(c->mine), T_WAIT);
	if (err) {
		wfail(r, __LINE__, err, "status allgather = %d", err);
		return -1;
	}
	clear_fault(c);
	err = dvx_bootstrap_barrier(&r->bs, T_WAIT);
	if (err) {
		wfail(r, __LINE__, err, "barrier after the status = %d", err);
		return -1;
	}
	for (q = 0; q < n; q++) {
		if (c->all[q].errors && !c->all[q].bad) {
			wfail(r, __LINE__, -1, "rank %d saw %u errors but no failed lane (fault %s)",
			      q, c->all[q].errors, fault_name[c->fp.kind]);
			return -1;
		}
		any |= c->all[q].bad != 0;
	}
	if (any && fault_benign(c->fp.kind)) {
		wfail(r, __LINE__, -1, "fault %s (drop_every %u drop_count %u delay %llu) failed lanes",
		      fault_name[c->fp.kind], c->fp.f.drop_every, c->fp.f.drop_count,
		      (unsigned long long)c->fp.f.delay_ns);
		return -1;
	}
	return any;
}

/* one pass: recover the agreed lanes (the union of both ends' reports of @all) in one
 * global order; return the number of my lanes still failed afterwards, -1 on failure */
static int recover_pass(struct ctx *c, const struct status *all)
{
	struct wrank *r = c->r;
	int n = r->w->cfg.nranks, i, j, p, err, left = 0;
	uint32_t l;

	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			for (l = 0; l < r->t.nlanes; l++) {
				if (!((all[i].bad >> (j * S_LANE_BITS + l)) & 1) &&
				    !((all[j].bad >> (i * S_LANE_BITS + l)) & 1))
					continue;
				if (r->rank == 0)
					c->s->lanes_failed++;
				if (r->rank != i && r->rank != j)
					continue;
				p = r->rank == i ? j : i;
				err = dvx_p2p_lane_recover(&r->t, p, l, T_WAIT);
				if (err == -EAGAIN && !c->s->strict) {
					/* failed again inside the call: the pass after this one */
					c->st->recover_calls++;
					c->st->expect_rec[p][l]++;
					continue;
				}
				if (err) {
					wfail(r, __LINE__, err, "recover (%d, %d, lane %u) = %d", i,
					      j, l, err);
					return -1;
				}
				c->st->recover_calls++;
				c->st->expect_rec[p][l]++;
			}
	for (p = 0; p < n; p++)
		for (l = 0; l < r->t.nlanes && p != r->rank; l++)
			if (lane_bad(c, p, l)) {
				char b[200];

				if (c->s->strict) {
					wfail(r, __LINE__, -1,
					      "lane (%d, %u) still failed after recovery: %s", p, l,
					      lane_str(c, p, l, b, sizeof(b)));
					return -1;
				}
				fprintf(stderr, "soak: rank %d lane (%d, %u) failed again in its "
					"recovery: %s\n", r->rank, p, l, lane_str(c, p, l, b, sizeof(b)));
				c->st->still_failed++;
				left++;
			}
	return left;
}

/*
 * Recover what the last status agreed on. dvx_p2p_lane_recover() returning 0 promises
 * every queue of the lane usable (it decides whether to reset the companion after the
 * lane is quiescent, and looks again before returning), so the default is strict: a
 * lane still failed after a 0 is a failure of the test, and no second pass is made.
 * The default also overlaps: no meeting after recovery, so rank 0 may start the next
 * phase's fault while other ranks are still recovering (the case that once left a
 * companion failed behind a 0: DVX_SOAK_SEED=7 DVX_SOAK_ROUNDS=300). DVX_SOAK_OVERLAP=0
 * brings the meeting back; DVX_SOAK_STRICT=0 as well allows up to 3 passes, every rank
 * saying which of its lanes are still failed.
 */
static int recover_agreed(struct ctx *c)
{
	struct wrank *r = c->r;
	struct status mine, all[W_MAX_RANKS];
	int pass, left, any, q, err, p;
	uint32_t l;

	left = recover_pass(c, c->all);
	if (c->s->overlap)
		return left ? -1 : 0;	/* no meeting: rank 0 may inject while others recover */
	for (pass = 1; left >= 0; pass++) {
		memset(&mine, 0, sizeof(mine));
		for (p = 0; p < r->w->cfg.nranks; p++)
			for (l = 0; l < r->t.nlanes && p != r->rank; l++)
				if (lane_bad(c, p, l))
					mine.bad |= 1ull << (p * S_LANE_BITS + l);
		err = dvx_bootstrap_allgather(&r->bs, &mine, all, sizeof(mine), T_WAIT);
		if (err) {
			wfail(r, __LINE__, err, "allgather after recovery = %d", err);
			return -1;
		}
		for (any = 0, q = 0; q < r->w->cfg.nranks; q++)
			any |= all[q].bad != 0;
		if (!any)
			return 0;
		if (pass >= 3) {
			wfail(r, __LINE__, -1, "lanes still failed after %d recovery passes", pass);
			return -1;
		}
		left = recover_pass(c, all);
	}
	return -1;
}

/* the ready phase: 1 all ready, 0 failed (recovered), -1 test failed */
static int phase_ready(struct ctx *c, uint32_t round, uint32_t tries)
{
	struct wrank *r = c->r;
	int n = r->w->cfg.nranks, p, e, any;
	struct dvx_p2p_ticket tk[W_MAX_RANKS];
	int posted[W_MAX_RANKS] = { 0 };
	struct rng g = rseed(c->s->seed, 4, (uint64_t)r->rank, round, tries);

	memset(&c->mine, 0, sizeof(c->mine));
	apply_fault(c, round, tries, 0);
	e = dvx_bootstrap_barrier(&r->bs, T_WAIT);
	if (e) {
		wfail(r, __LINE__, e, "barrier = %d", e);
		return -1;
	}
	for (p = 0; p < n; p++) {
		if (p == r->rank)
			continue;
		e = dvx_p2p_signal(&r->t, p, (uint32_t)rrange(&g, 0, 4ull * r->t.nlanes - 1),
				   &(struct dvx_p2p_notify){ &r->sig_r[p],
							     wsig_off(r, r->rank, S_SIG_READY), 1,
							     NULL, 0, 0 },
				   T_WAIT, &tk[p]);
		NOTE(c, e, "ready signal");
		posted[p] = !e;
		if (!e)
		__atomic_fetch_add(&c->st->ops, 1, __ATOMIC_RELAXED);
	}
	for (p = 0; p < n; p++)
		if (posted[p]) {
			e = dvx_p2p_wait_local(&r->t, &tk[p], T_WAIT, NULL);
			NOTE(c, e, "wait_local(ready signal)");
		}
	any = exchange_status(c, 0);
	if (any < 0)
		return -1;
	if (any) {
		if (recover_agreed(c))
			return -1;
		/* quiet now: nothing in flight can raise a ready word */
		for (p = 0; p < n; p++)
			dvx_p2p_reset_local_signal(&r->sig_l, wsig_off(r, p, S_SIG_READY));
		return 0;
	}
	/* ready-then-put: every peer's ready word is exactly 1 */
	for (p = 0; p < n; p++) {
		struct dvx_p2p_wait_report rep;
		uint64_t v;

		if (p == r->rank)
			continue;
		e = dvx_p2p_wait_signal(&r->t, &r->sig_l, wsig_off(r, p, S_SIG_READY), DVX_CMP_GE,
					1, T_WAIT, &rep);
		if (e) {
			wfail(r, __LINE__, e, "ready from %d: %d (observed %llu)", p, e,
			      (unsigned long long)rep.observed);
			return -1;
		}
		v = dvx_p2p_read_signal(&r->sig_l, wsig_off(r, p, S_SIG_READY));
		if (v != 1) {
			wfail(r, __LINE__, -1, "ready word from %d is %llu, not 1", p,
			      (unsigned long long)v);
			return -1;
		}
		dvx_p2p_reset_local_signal(&r->sig_l, wsig_off(r, p, S_SIG_READY));
	}
	return 1;
}

struct sent {
	struct plan pl;
	struct dvx_p2p_ticket tk[S_MAX_MSGS];	/* the first post's */
	struct dvx_p2p_ticket tk2[S_MAX_MSGS];	/* the signal of two-step kinds */
	uint8_t posted[S_MAX_MSGS];
	uint8_t posted2[S_MAX_MSGS];
};

static int post_first(struct ctx *c, int p, uint32_t i, struct sent *sd)
{
	struct wrank *r = c->r;
	const struct msg *m = &sd->pl.m[i];
	uint64_t soff = wsend_off(r, p) + m->off, doff = wrecv_off(r, r->rank) + m->off;
	uint64_t len = S_HDR + m->len, sigoff = wsig_off(r, r->rank, S_SIG_DATA);
	uint64_t ctroff = wsig_off(r, p, i), add = 1ull << i;
	int e = -EINVAL;

	switch (m->kind) {
	case K_PUT_SIGNAL:
	case K_PUT_SIGNAL_FENCE:
		e = dvx_p2p_put_signal(&r->t, p, m->ch,
				       &(struct dvx_p2p_xfer){ &r->data_l, soff, &r->data_r[p],
							       doff, len },
				       &(struct dvx_p2p_notify){
					       &r->sig_r[p], sigoff, add, NULL, 0,
					       m->kind == K_PUT_SIGNAL_FENCE ? DVX_P2P_FENCE : 0 },
				       T_WAIT, &sd->tk[i]);
		break;
	case K_PUT_COUNTER_SIGNAL:
		e = dvx_p2p_put_counter(&r->t, p, m->ch,
					&(struct dvx_p2p_xfer){ &r->data_l, soff, &r->data_r[p],
								doff, len },
					&(struct dvx_p2p_notify){ NULL, 0, 0, &r->ctr_l, ctroff,
								  0 },
					T_WAIT, &sd->tk[i]);
		break;
	case K_PUT_SIGNAL_COUNTER:
		e = dvx_p2p_put_signal_counter(&r->t, p, m->ch,
					       &(struct dvx_p2p_xfer){ &r->data_l, soff,
								       &r->data_r[p], doff, len },
					       &(struct dvx_p2p_notify){ &r->sig_r[p], sigoff, add,
									 &r->ctr_l, ctroff, 0 },
					       T_WAIT, &sd->tk[i]);
		break;
	case K_PUT_THEN_SIGNAL:
		e = dvx_p2p_put(&r->t, p, m->ch,
				&(struct dvx_p2p_xfer){ &r->data_l, soff, &r->data_r[p], doff,
							len },
				T_WAIT, &sd->tk[i]);
		break;
	}
	NOTE(c, e, kind_name[m->kind]);
	sd->posted[i] = !e;
	if (!e)
		__atomic_fetch_add(&c->st->ops, 1, __ATOMIC_RELAXED);
	return 0;
}

/* two-step kinds: once the put is known complete, the signal on another channel */
static int post_second(struct ctx *c, int p, uint32_t i, struct sent *sd)
{
	struct wrank *r = c->r;
	const struct msg *m = &sd->pl.m[i];
	uint64_t ctroff = wsig_off(r, p, i);
	int e;

	if (m->kind == K_PUT_COUNTER_SIGNAL) {
		e = dvx_p2p_wait_counter(&r->t, p, m->ch,
					 &(struct dvx_p2p_notify){ .ctr = &r->ctr_l,
								   .ctroff = ctroff },
					 DVX_CMP_GE, 1, T_WAIT, NULL);
		NOTE(c, e, "wait_counter(put_counter)");
		if (e)
			return 0;
		/* a WAIT is satisfied by a flush too: the ticket says whether the data landed */
		e = dvx_p2p_wait_local(&r->t, &sd->tk[i], T_WAIT, NULL);
		if (e)
			c->st->ctr_moved_failed++;
		NOTE(c, e, "wait_local(put_counter)");
		if (e)
			return 0;
	} else {
		e = dvx_p2p_wait_local(&r->t, &sd->tk[i], T_WAIT, NULL);
		NOTE(c, e, "wait_local(put)");
		if (e)
			return 0;
	}
	e = dvx_p2p_signal(&r->t, p, m->sig_ch,
			   &(struct dvx_p2p_notify){ &r->sig_r[p], wsig_off(r, r->rank, S_SIG_DATA),
						     1ull << i, NULL, 0, 0 },
			   T_WAIT, &sd->tk2[i]);
	NOTE(c, e, "signal after put");
	sd->posted2[i] = !e;
	if (!e)
		__atomic_fetch_add(&c->st->ops, 1, __ATOMIC_RELAXED);
	return 0;
}

static int wait_final(struct ctx *c, int p, uint32_t i, struct sent *sd)
{
	struct wrank *r = c->r;
	const struct msg *m = &sd->pl.m[i];
	int e;

	if (m->kind == K_PUT_COUNTER_SIGNAL || m->kind == K_PUT_THEN_SIGNAL) {
		if (sd->posted2[i]) {
			e = dvx_p2p_wait_local(&r->t, &sd->tk2[i], T_WAIT, NULL);
			NOTE(c, e, "wait_local(signal)");
		}
		return 0;
	}
	if (!sd->posted[i])
		return 0;
	e = dvx_p2p_wait_local(&r->t, &sd->tk[i], T_WAIT, NULL);
	NOTE(c, e, "wait_local(put_signal)");
	if (!e && m->kind == K_PUT_SIGNAL_COUNTER) {
		e = dvx_p2p_wait_counter(&r->t, p, m->ch,
					 &(struct dvx_p2p_notify){ .ctr = &r->ctr_l,
								   .ctroff = wsig_off(r, p, i) },
					 DVX_CMP_GE, 1, T_WAIT, NULL);
		NOTE(c, e, "wait_counter(put_signal_counter)");
	}
	return 0;
}

/* receiver: the data words and messages of (round, attempt) from every sender but
 * @skip (-1: none); @ok: the attempt stood */
static int check_received(struct ctx *c, uint32_t round, uint32_t attempt, int ok, int skip)
{
	struct wrank *r = c->r;
	int n = r->w->cfg.nranks, s;
	uint32_t i;

	for (s = 0; s < n; s++) {
		struct plan pl;
		uint64_t sigoff = wsig_off(r, s, S_SIG_DATA), mask, v;
		const char *why;

		if (s == r->rank || s == skip)
			continue;
		make_plan(c->s, s, r->rank, round, &pl);
		mask = pl.n >= 64 ? ~0ull : (1ull << pl.n) - 1;
		if (ok) {
			struct dvx_p2p_wait_report rep;
			int e = dvx_p2p_wait_signal(&r->t, &r->sig_l, sigoff, DVX_CMP_EQ, mask,
						    T_WAIT, &rep);

			if (e) {
				wfail(r, __LINE__, e,
				      "round %u from %d: data word %llu, want exactly %llu (%d)",
				      round, s, (unsigned long long)rep.observed,
				      (unsigned long long)mask, e);
				return -1;
			}
		}
		v = dvx_p2p_read_signal(&r->sig_l, sigoff);
		if ((ok && v != mask) || (v & ~mask)) {
			wfail(r, __LINE__, -1, "round %u attempt %u from %d: data word %#llx, mask %#llx",
			      round, attempt, s, (unsigned long long)v, (unsigned long long)mask);
			return -1;
		}
		for (i = 0; i < pl.n; i++) {
			uint8_t *h = wrecv(r, s) + pl.m[i].off;

			if (!((v >> i) & 1))
				continue;
			if (check_msg(r, c->s, s, round, attempt, i, &pl.m[i], &why)) {
				wfail(r, __LINE__, -1,
				      "round %u attempt %u message %u (%s, %u B) from %d: %s wrong%s",
				      round, attempt, i, kind_name[pl.m[i].kind], pl.m[i].len, s, why,
				      ok ? "" : " (after recovery)");
				return -1;
			}
			c->st->bytes += S_HDR + pl.m[i].len;
			if (ok)
				c->st->msgs_ok++;
			else
				c->st->msgs_partial++;
			memset(h, 0, S_HDR);	/* a stale message never passes again */
		}
		if (ok)
			c->st->recv_ok[s] += pl.n;
		dvx_p2p_reset_local_signal(&r->sig_l, sigoff);
	}
	return 0;
}

/* sender: counter words exactly 1 per counter operation (at most 1 after a failure),
 * for every peer but @skip (-1: none) */
static int check_counters(struct ctx *c, const struct sent *sd, int ok, int skip)
{
	struct wrank *r = c->r;
	int n = r->w->cfg.nranks, p;
	uint32_t i;

	for (p = 0; p < n; p++) {
		if (p == r->rank || p == skip)
			continue;
		for (i = 0; i < c->s->max_msgs; i++) {
			uint64_t off = wsig_off(r, p, i);
			uint64_t v = dvx_p2p_read_counter(&r->ctr_l, off), want;

			want = i < sd[p].pl.n && has_counter(sd[p].pl.m[i].kind);
			if ((ok && v != want) || v > want) {
				wfail(r, __LINE__, -1, "counter (peer %d, message %u) is %llu, want %s%llu",
				      p, i, (unsigned long long)v, ok ? "" : "<= ",
				      (unsigned long long)want);
				return -1;
			}
			c->st->counters_ok += ok && want;
			__atomic_store_n(&r->ctr[off / 8], 0, __ATOMIC_RELEASE);
		}
		if (ok) {
			c->st->sent_ok[p] += sd[p].pl.n;
			for (i = 0; i < sd[p].pl.n; i++)
				c->st->by_kind[sd[p].pl.m[i].kind]++;
		}
	}
	return 0;
}

/* the plan of (round, attempt) to every peer but @skip (-1: none), its messages filled */
static void plan_all(struct ctx *c, uint32_t round, uint32_t tries, struct sent *sd, int skip)
{
	struct wrank *r = c->r;
	int n = r->w->cfg.nranks, p;
	uint32_t i;

	memset(sd, 0, sizeof(*sd) * W_MAX_RANKS);
	for (p = 0; p < n; p++) {
		if (p == r->rank || p == skip)
			continue;
		make_plan(c->s, r->rank, p, round, &sd[p].pl);
		for (i = 0; i < sd[p].pl.n; i++)
			fill_msg(r, c->s, p, round, tries, i, &sd[p].pl.m[i]);
	}
}

/* post what @sd plans (a peer left out has an empty plan), then wait for all of it:
 * 0, or -1 when the test failed */
static int send_all(struct ctx *c, struct sent *sd)
{
	struct wrank *r = c->r;
	int n = r->w->cfg.nranks, k, p;
	uint32_t i;

	/* peers in a rotating order, so not everyone hits rank 0 first */
	for (k = 1; k < n; k++) {
		p = (r->rank + k) % n;
		for (i = 0; i < sd[p].pl.n; i++)
			if (post_first(c, p, i, &sd[p]))
				return -1;
	}
	for (k = 1; k < n; k++) {
		p = (r->rank + k) % n;
		for (i = 0; i < sd[p].pl.n; i++) {
			uint32_t kd = sd[p].pl.m[i].kind;

			if ((kd == K_PUT_COUNTER_SIGNAL || kd == K_PUT_THEN_SIGNAL) &&
			    sd[p].posted[i] && post_second(c, p, i, &sd[p]))
				return -1;
		}
	}
	for (k = 1; k < n; k++) {
		p = (r->rank + k) % n;
		for (i = 0; i < sd[p].pl.n; i++)
			if (wait_final(c, p, i, &sd[p]))
				return -1;
	}
	return 0;
}

/* the data phase: 1 the attempt stood, 0 failed (recovered), -1 test failed */
static int phase_data(struct ctx *c, uint32_t round, uint32_t tries, int stop, struct sent *sd)
{
	struct wrank *r = c->r;
	int k, any;

	memset(&c->mine, 0, sizeof(c->mine));
	plan_all(c, round, tries, sd, -1);
	apply_fault(c, round, tries, 1);
	k = dvx_bootstrap_barrier(&r->bs, T_WAIT);
	if (k) {
		wfail(r, __LINE__, k, "barrier = %d", k);
		return -1;
	}
	if (send_all(c, sd))
		return -1;
	any = exchange_status(c, stop);
	if (any < 0)
		return -1;
	if (any && recover_agreed(c))
		return -1;
	/* quiet: everything posted completed or was flushed by a recovery */
	if (check_received(c, round, tries, !any, -1) || check_counters(c, sd, !any, -1))
		return -1;
	return !any;
}

static void gather(struct wrank *r, struct soak *s);

/*
 * The last phase as processes (DVX_SOAK_KILL, on by default there): rank s->victim,
 * drawn from the seed and never rank 0 (it keeps the run's accounting), dies by
 * SIGKILL after the last round and the gather. Every survivor must see each of its
 * lanes to it fail with retry exhausted, within the bounds of its waits (running out
 * of one is a hang), its lanes to the other survivors still healthy, and one more
 * round among the survivors verified message by message, signal word by signal word and
 * counter by counter. After the death only the transport is used: the bootstrap's
 * collectives fail (sockets) or may wait for ever (MPI) with a member gone. The
 * survivors end without the world's closing flush and barrier, each with its own
 * verdict (cfg.victim).
 */
static void kill_phase(struct ctx *c, uint32_t round, struct sent *sd)
{
	struct wrank *r = c->r;
	int n = r->w->cfg.nranks, v = c->s->victim, p, e, others = 0;
	struct dvx_p2p_ticket tk[S_LANE_BITS], done[W_MAX_RANKS];
	struct rank_stats *gathered = c->st, last;
	struct dvx_p2p_lane_health h;
	uint8_t pending[S_LANE_BITS];
	uint32_t l, failed = 0;
	uint64_t t0, dt;
	char b[200];

	r->alone = 1;
	if (r->rank == v) {
		/* a collective that a rank leaves by dying fails on the others: die only
		 * once every survivor is past the last one */
		for (p = 0; p < n; p++)
			if (p != v)
				W_OK(r, dvx_bootstrap_recv(&r->bs, p, S_TAG_KILL, NULL, 0, T_WAIT));
		fflush(NULL);
		kill(getpid(), SIGKILL);
		W_CHECK(r, 0, "SIGKILL did not end rank %d", v);
	}
	W_OK(r, dvx_bootstrap_send(&r->bs, v, S_TAG_KILL, NULL, 0, T_WAIT));
	t0 = now_ns();
	/* its end of the wire closes with it: a put on each lane is lost, sent again,
	 * and fails; the first ones may still find it alive (it dies once every survivor
	 * got this far), so a lane whose put completed gets another */
	memset(pending, 1, sizeof(pending));
	while (failed < r->t.nlanes) {
		W_CHECK(r, now_ns() - t0 < T_WAIT, "the killed rank %d still answers after %llu s",
			v, (unsigned long long)(T_WAIT / W_SEC));
		for (l = 0; l < r->t.nlanes; l++)
			if (pending[l])
				W_OK(r,
				     dvx_p2p_put(&r->t, v, l,
						 &(struct dvx_p2p_xfer){
							 &r->data_l, wsend_off(r, v), &r->data_r[v],
							 wrecv_off(r, r->rank), 64 },
						 T_WAIT, &tk[l]));
		for (l = 0; l < r->t.nlanes; l++) {
			if (!pending[l])
				continue;
			e = dvx_p2p_wait_local(&r->t, &tk[l], T_WAIT, NULL);
			if (!e)
				continue;
			W_CHECK(r, e == -EHOSTUNREACH, "put to the killed rank %d on lane %u: %d%s",
				v, l, e, e == -ETIMEDOUT ? " (a hang)" : "");
			pending[l] = 0;
			failed++;
		}
	}
	dt = now_ns() - t0;
	for (l = 0; l < r->t.nlanes; l++) {
		W_OK(r, dvx_p2p_lane_health(&r->t, v, l, &h));
		W_CHECK(r, h.state == DVX_P2P_Q_FAILED && h.err == -EHOSTUNREACH,
			"lane (%d, %u) to the killed rank: %s", v, l, lane_str(c, v, l, b, sizeof(b)));
	}
	for (p = 0; p < n; p++)
		for (l = 0; l < r->t.nlanes && p != r->rank && p != v; l++)
			W_CHECK(r, !lane_bad(c, p, l), "lane (%d, %u) between survivors: %s", p, l,
				lane_str(c, p, l, b, sizeof(b)));

	/* one more round among the survivors: no fault, no error, every message exact
	 * (counted apart: the accounting all ranks gathered stays as they agreed it) */
	memset(&c->mine, 0, sizeof(c->mine));
	memset(&last, 0, sizeof(last));
	c->st = &last;
	plan_all(c, round, 0, sd, v);
	e = send_all(c, sd) || check_received(c, round, 0, 1, v) || check_counters(c, sd, 1, v);
	c->st = gathered;
	if (e)
		return;
	W_CHECK(r, !c->mine.errors, "%u error returns between survivors", c->mine.errors);

	/* the end: nobody leaves while a survivor still posts to it (its last signals
	 * are here, and mine completed) */
	for (p = 0; p < n; p++)
		if (p != r->rank && p != v)
			W_OK(r,
			     dvx_p2p_signal(&r->t, p, 0,
					    &(struct dvx_p2p_notify){
						    &r->sig_r[p], wsig_off(r, r->rank, S_SIG_READY),
						    1, NULL, 0, 0 },
					    T_WAIT, &done[p]));
	for (p = 0; p < n; p++)
		if (p != r->rank && p != v) {
			W_OK(r, dvx_p2p_wait_local(&r->t, &done[p], T_WAIT, NULL));
			W_OK(r, dvx_p2p_wait_signal(&r->t, &r->sig_l, wsig_off(r, p, S_SIG_READY),
						    DVX_CMP_GE, 1, T_WAIT, NULL));
			others++;
		}
	printf("soak: rank %d: rank %d killed after round %u, its %u lanes to it failed (retry "
	       "exhausted) within %.2f s of this rank letting it die; one more round with the "
	       "%d other survivors: %llu messages verified\n", r->rank, v, round, r->t.nlanes,
	       (double)dt / 1e9, others, (unsigned long long)last.msgs_ok);
	fflush(stdout);
}

static void body_soak(struct wrank *r)
{
	struct soak *s = r->user;
	struct ctx c;
	struct sent sd[W_MAX_RANKS];
	uint32_t round = 0, tries = 0;
	int p, ret;
	uint32_t l;

	memset(&c, 0, sizeof(c));
	c.r = r;
	c.s = s;
	c.st = &s->st[r->rank];
	for (;;) {
		int stop = 0;

		if (s->rounds && round >= s->rounds)
			break;
		if (tries >= S_MAX_TRIES) {
			wfail(r, __LINE__, -1, "round %u failed %u times, the last %u without faults",
			      round, tries, tries - S_FAULT_TRIES);
			return;
		}
		if (r->rank == 0)
			s->attempts++;
		ret = phase_ready(&c, round, tries);
		if (ret < 0)
			return;
		if (ret > 0) {
			if (r->rank == 0 && !s->rounds && now_ns() - s->start_ns >= s->seconds * W_SEC &&
			    all_ops(s) >= s->min_ops)
				stop = 1;
			ret = phase_data(&c, round, tries, stop, sd);
			if (ret < 0)
				return;
		}
		if (ret == 0) {
			if (r->rank == 0)
				s->failed_attempts++;
			tries++;
			continue;
		}
		round++;
		tries = 0;
		if (r->rank == 0)
			s->rounds_done = round;
		if (c.all[0].stop)
			break;
	}
	/* every recovery restarted the lane exactly once on this end */
	for (p = 0; p < r->w->cfg.nranks; p++)
		for (l = 0; l < r->t.nlanes && p != r->rank; l++) {
			struct dvx_p2p_lane_health h;

			W_OK(r, dvx_p2p_lane_health(&r->t, p, l, &h));
			W_CHECK(r, h.state == DVX_P2P_Q_OK && h.recoveries == c.st->expect_rec[p][l],
				"lane (%d, %u): state %u, %u recoveries, %llu agreed", p, l, h.state,
				h.recoveries, (unsigned long long)c.st->expect_rec[p][l]);
		}
	if (r->rank == 0) {
		struct dvx_sim_stats fs;

		if (!dvx_sim_get_stats(wfab(r), &fs))
			s->wqes = fs.wqes_executed;
	}
	if (r->w->procs)
		gather(r, s);
	if (s->victim >= 0 && !r->fail_line)
		kill_phase(&c, round, sd);
}

/* what rank 0 alone writes, for the others when the ranks are processes */
struct rank0 {
	uint32_t rounds_done;
	uint32_t rsvd;
	uint64_t attempts, failed_attempts, lanes_failed, wqes;
	uint64_t faults[F_NFAULTS];
};

/*
 * Ranks as processes (tests/lib/p2p_world.h): every rank's accounting and rank 0's
 * counters to every process, and the cross-rank checks made there (a forked rank's
 * memory goes with it; under MPI each process then prints the summary itself).
 */
static void gather(struct wrank *r, struct soak *s)
{
	static struct rank_stats all[W_MAX_RANKS];
	static struct rank0 all0[W_MAX_RANKS];
	struct rank0 mine;
	uint64_t calls = 0;
	int a, b, n = r->w->cfg.nranks;

	W_OK(r, dvx_bootstrap_allgather(&r->bs, &s->st[r->rank], all, sizeof(all[0]), T_WAIT));
	memcpy(s->st, all, sizeof(all[0]) * (size_t)n);
	memset(&mine, 0, sizeof(mine));
	mine.rounds_done = s->rounds_done;
	mine.attempts = s->attempts;
	mine.failed_attempts = s->failed_attempts;
	mine.lanes_failed = s->lanes_failed;
	mine.wqes = s->wqes;
	memcpy(mine.faults, s->faults, sizeof(mine.faults));
	W_OK(r, dvx_bootstrap_allgather(&r->bs, &mine, all0, sizeof(mine), T_WAIT));
	s->rounds_done = all0[0].rounds_done;
	s->attempts = all0[0].attempts;
	s->failed_attempts = all0[0].failed_attempts;
	s->lanes_failed = all0[0].lanes_failed;
	s->wqes = all0[0].wqes;
	memcpy(s->faults, all0[0].faults, sizeof(s->faults));
	for (a = 0; a < n; a++) {
		calls += s->st[a].recover_calls;
		for (b = 0; b < n; b++)
			W_CHECK(r, a == b || s->st[a].sent_ok[b] == s->st[b].recv_ok[a],
				"rank %d sent %llu to %d, which verified %llu", a,
				(unsigned long long)s->st[a].sent_ok[b], b,
				(unsigned long long)s->st[b].recv_ok[a]);
	}
	W_CHECK(r, calls == 2 * s->lanes_failed, "%llu recoveries for %llu failed lanes",
		(unsigned long long)calls, (unsigned long long)s->lanes_failed);
	if (r->rank == 0)
		printf("soak: %d ranks as processes on the wire: %u rounds, %llu attempts (%llu "
		       "failed), %llu lanes failed and recovered, every message and counter "
		       "checked by its receiver\n", n, s->rounds_done,
		       (unsigned long long)s->attempts, (unsigned long long)s->failed_attempts,
		       (unsigned long long)s->lanes_failed);
}

/* ---- the test ---- */

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *v = getenv(name);
	char *end;
	unsigned long long x;

	if (!v || !*v)
		return def;
	x = strtoull(v, &end, 0);
	return *end ? def : (uint64_t)x;
}

/* the soak's parameters from the environment (docs/testing.md), checked */
static void soak_params(struct soak *s, struct rng *g)
{
	s->seed = env_u64("DVX_SOAK_SEED", 0x50a4);
	s->seconds = env_u64("DVX_SOAK_SECONDS", 0);
	s->overlap = env_u64("DVX_SOAK_OVERLAP", 1) != 0;
	s->strict = s->overlap || env_u64("DVX_SOAK_STRICT", 1) != 0;
	s->max_msgs = (uint32_t)env_u64("DVX_SOAK_MSGS", 4);
	s->max_len = (uint32_t)env_u64("DVX_SOAK_MAXLEN", S_MAX_LEN);
	assert_true(s->max_msgs >= 1 && s->max_msgs <= S_MAX_MSGS);
	assert_true(s->max_len >= S_MIN_LEN && s->max_len <= S_MAX_LEN);
	s->span = S_SPAN(s->max_len);
	s->min_ops = env_u64("DVX_SOAK_OPS", 0);
	s->rounds = (uint32_t)env_u64("DVX_SOAK_ROUNDS", s->seconds || s->min_ops ? 0 : 200);
	*g = rseed(s->seed, 0, 0, 0, 0);
	s->nranks = (int)env_u64("DVX_SOAK_RANKS", rrange(g, 3, 4));
	s->nlanes = (uint32_t)env_u64("DVX_SOAK_LANES", rrange(g, 2, 4));
	assert_true(s->nranks >= 2 && s->nranks <= W_MAX_RANKS);
	assert_true(s->nlanes >= 1 && s->nlanes <= S_LANE_BITS);
}

/* the world the seed draws: depths, companions, progress, the victim of a process run */
static void soak_world(struct soak *s, struct rng *g, struct world_cfg *wc)
{
	world_cfg_default(wc);
	wc->nranks = s->nranks;
	wc->slot_bytes = s->max_msgs * s->span;
	/* counter words (peer, message); signal words: data (slot 0) and ready (slot 1) */
	wc->nslots = s->max_msgs > S_SIG_READY ? s->max_msgs : S_SIG_READY + 1;
	wc->qps_per_nic = s->nlanes;
	wc->sq_depth = 32u << rrange(g, 0, 3);		/* 32 .. 256: rings wrap */
	wc->comp_depth = 8u << rrange(g, 0, 2);		/* 8 .. 32 */
	wc->local_pair = (uint32_t)rrange(g, 0, 3) == 0;	/* partner companions */
	wc->no_loopback = wc->local_pair;
	wc->progress_thread = rrange(g, 0, 3) != 0;	/* else the ranks step the sim */
	/* as processes: a lost request costs this; a port or link down exhausts 8 of them */
	wc->wire_retry_ns = 100 * W_MS;
	s->victim = -1;
	if (world_mode(wc) != WORLD_THREADS && env_u64("DVX_SOAK_KILL", 1)) {
		struct rng gk = rseed(s->seed, 5, 0, 0, 0);

		s->victim = (int)rrange(&gk, 1, (uint64_t)s->nranks - 1);
		wc->victim = s->victim + 1;
	}
	printf("soak: seed %#llx, %d ranks, %u lanes per peer, sq %u, companion %u%s%s, "
	       "%s, up to %u messages of %u B per peer and round, %s %llu",
	       (unsigned long long)s->seed, s->nranks, s->nlanes, wc->sq_depth, wc->comp_depth,
	       wc->local_pair ? ", partner companions" : "",
	       wc->progress_thread ? "" : ", stepped sim",
	       s->overlap ? "strict, overlapping" : s->strict ? "strict" : "second passes allowed",
	       s->max_msgs, s->max_len, s->rounds ? "rounds" : s->min_ops ? "operations" : "seconds",
	       (unsigned long long)(s->rounds ? s->rounds : s->min_ops ? s->min_ops : s->seconds));
	if (s->victim >= 0)
		printf(", then rank %d killed", s->victim);
	printf("\n");
	fflush(stdout);
}

/* the ranks' accounts summed: what was sent in accepted attempts is what was received
 * and verified; then the report */
static void soak_report(struct soak *s, uint64_t t0)
{
	uint64_t msgs = 0, partial = 0, bytes = 0, errs = 0, ctrs = 0, moved = 0, calls = 0;
	uint64_t again = 0, ops = 0, unreach = 0, canceled = 0, reset = 0, kinds[K_NKINDS] = { 0 };
	double secs;
	int a, b, k;

	for (a = 0; a < s->nranks; a++) {
		struct rank_stats *st = &s->st[a];

		for (b = 0; b < s->nranks; b++)
			if (a != b && s->st[a].sent_ok[b] != s->st[b].recv_ok[a]) {
				printf("soak: rank %d sent %llu to %d, which verified %llu\n", a,
				       (unsigned long long)s->st[a].sent_ok[b], b,
				       (unsigned long long)s->st[b].recv_ok[a]);
				fail();
			}
		msgs += st->msgs_ok;
		partial += st->msgs_partial;
		bytes += st->bytes;
		errs += st->errors;
		unreach += st->err_unreach;
		canceled += st->err_canceled;
		reset += st->err_reset;
		ctrs += st->counters_ok;
		moved += st->ctr_moved_failed;
		calls += st->recover_calls;
		ops += st->ops;
		again += st->still_failed;
		for (k = 0; k < K_NKINDS; k++)
			kinds[k] += st->by_kind[k];
	}
	assert_int_equal(calls, 2 * s->lanes_failed);
	secs = (double)(now_ns() - t0) / 1e9;
	printf("soak: %u rounds in %.1f s, %llu attempts (%llu failed)\n", s->rounds_done, secs,
	       (unsigned long long)s->attempts, (unsigned long long)s->failed_attempts);
	printf("soak: %llu operations posted (%.0f/s), %llu WQEs executed by the software NIC\n",
	       (unsigned long long)ops, secs > 0 ? (double)ops / secs : 0.0,
	       (unsigned long long)s->wqes);
	printf("soak: %llu messages verified (+%llu from failed attempts), %.1f MiB, %llu counters exact\n",
	       (unsigned long long)msgs, (unsigned long long)partial, (double)bytes / 1048576.0,
	       (unsigned long long)ctrs);
	printf("soak: by kind:");
	for (k = 0; k < K_NKINDS; k++)
		printf(" %s %llu", kind_name[k], (unsigned long long)kinds[k]);
	printf("\nsoak: faults:");
	for (k = 1; k < F_NFAULTS; k++)
		printf(" %s %llu", fault_name[k], (unsigned long long)s->faults[k]);
	printf(" (phases without: %llu)\n", (unsigned long long)s->faults[F_NONE]);
	printf("soak: %llu lanes failed and recovered; %llu error returns (%llu retry exhausted, "
	       "%llu flushed, %llu reset); %llu counters moved for a failed put\n",
	       (unsigned long long)s->lanes_failed, (unsigned long long)errs,
	       (unsigned long long)unreach, (unsigned long long)canceled,
	       (unsigned long long)reset, (unsigned long long)moved);
	printf("soak: %llu lane ends failed again inside their recovery (recovered by a second pass)\n",
	       (unsigned long long)again);
}

/* the soak, in its phases: parameters, world, run, report (threads; processes report
 * their own, gather()) */
static void test_soak(void **state)
{
	struct soak *s = calloc(1, sizeof(*s));
	struct world_cfg wc;
	struct rng g;
	uint64_t t0;

	(void)state;
	assert_non_null(s);
	soak_params(s, &g);
	soak_world(s, &g, &wc);
	t0 = now_ns();
	s->start_ns = t0;
	assert_int_equal(world_run(&wc, body_soak, s), 0);
	if (world_mode(&wc) != WORLD_FORK)
		soak_report(s, t0);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_soak),
	};

	/* a killed rank's sockets are closed under its peers' feet */
	signal(SIGPIPE, SIG_IGN);
	/* under MPI with a rank killed: out without MPI_Finalize() (p2p_world.h) */
	world_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
