// SPDX-License-Identifier: MIT
/*
 * tests/fuzz/lf/ht_hs.c - libFuzzer harness: the host transport's handshake (core/ht/),
 * the messages a peer sends over the bootstrap: its HELLO (mode, geometry, keys, QP
 * numbers), READY and FAIL to an IB transport, and the unasked HELLO a per-peer cache
 * answers by making a transport.
 *
 * Public API only (dvx/ht/ib.h, dvx/ht/cache.h, the threads bootstrap) over the software
 * NIC. Rank 0 is tested (NIC 0); rank 1 is the harness, which sends the input's
 * messages from its own bootstrap context (a fresh 2-rank thread group per input).
 *
 * Feeds:
 *   byte 0  [0] copy-based (else zero-copy); [1] 2 channels (else 1); [2] rank 0 is a
 *           cache that answers (else an IB transport made by the harness, peer 1);
 *           [3] an IB transport that connected then recovers channel 0
 *           (dvx_ht_recover(), a short timeout): the messages left after the
 *           handshake's are the peer's side of the recovery (HELLO, ACK, QUIET, READY)
 *   then messages, each [len lo][len hi & 0x3][flags] then len bytes (what the input
 *   lacks is zero): flags [0] on the handshake's tag (else tag 7 of the same space)
 *
 * Checks, per input: the transport's (or cache's transport's) invariant checker after
 * every progress call and after a recovery; a recovery returns 0 only with the channel
 * healthy, else a negative errno; a handshake ends connected, failed with an error that stays, or
 * still waiting for the peer when the input is out, never anything else (-EPROTO for
 * a message that is not a handshake's); fini releases everything: the software NIC
 * holds what it held before the input (dvx_sim_get_stats()). A cache counts an answer
 * only for a transport it made. Nothing is allocated per input.
 *
 * Seeds: 'DVX_FUZZ_WRITE_SEEDS=DIR' runs a real rank 1 (an IB transport, or a cache
 * asking for rank 0) against rank 0 and records what rank 1's bootstrap sent: the
 * layer's own encoder ('scripts/fuzz.sh --seeds').
 *
 * Speed (bench/RESULTS.md): rank 0's waits for a message end at once on a virtual clock
 * (vnow() below: no message can arrive during one), and the software NIC's tables are
 * as small as two transports need (its passes and dvx_sim_get_stats() walk them).
 */
#include <dvx/bootstrap/bootstrap.h>
#include <dvx/ht/cache.h>
#include <dvx/ht/ib.h>
#include <dvx/nic/nic.h>
#include <dvx/hal/sim.h>

#include "lf.h"

#define TAG 0x51u
/* progress calls per input: every message is queued before the first, and a pass takes
 * the next one the handshake's state waits for (HELLO, then READY), so a handshake is
 * decided within a few passes; a failed one is checked once more (it stays failed) */
#define PASSES 6
#define MAX_MSG 512u
#define SLOTS 16	/* the group's unexpected messages: what a script can queue */
#define REC_NS 100000ull	/* a recovery's timeout: the script is all there already */

static struct dvx_sim_fabric *fab;
static struct dvx_nic nic[2];
static void *tg_mem;
static size_t tg_size;
static struct dvx_bootstrap_tgroup *tg;
static struct dvx_bootstrap bs[2];
static struct dvx_ht_ib ib[2];
static struct dvx_ht_cache cache[2];
static void *reg[2][3];
static uint64_t reg_len[3];
static void *creg[2][3];
static uint64_t creg_len[3];

/*
 * Virtual time. One thread plays both ranks and rank 1's messages are all queued before
 * rank 0 looks, so no message can arrive while rank 0 waits for one: a wait can only
 * end in its timeout. The bootstraps' waits end at once and move the clock to their
 * deadline; the NICs' hal (the transport's recovery deadlines) and the bootstraps read
 * that clock, which also moves 1 us per reading so that a loop polling the NIC until a
 * deadline ends. Deterministic, and no sleep of the kernel's.
 */
static uint64_t vclock = 1000000000ull;

static uint64_t vnow(void)
{
	vclock += 1000;
	return vclock;
}

static uint64_t hal_now(const struct dvx_hal *h)
{
	(void)h;
	return vnow();
}

static uint64_t bs_now(struct dvx_bootstrap *b)
{
	(void)b;
	return vnow();
}

static struct dvx_hal vhal;
static struct dvx_hal_host_ops vhost;

/* recording: what rank 1 sent, as the harness's input format */
static struct dvx_bootstrap_ops rec_ops, fast_ops;
static const struct dvx_bootstrap_ops *real_ops;

static int fast_wait(struct dvx_bootstrap *b, struct dvx_bootstrap_req *const *reqs, int n,
		     uint64_t deadline, int all_ranks)
{
	int err;

	if (all_ranks)
		return real_ops->wait(b, reqs, n, deadline, all_ranks);
	err = real_ops->wait(b, reqs, n, 0, 0);	/* what is there, at once */
	if (err == -ETIMEDOUT && deadline > vclock)
		vclock = deadline;
	return err;
}
static int recording;
static uint8_t rec[8192];
static size_t rec_len;

static int rec_post_send(struct dvx_bootstrap *b, struct dvx_bootstrap_req *req, int peer,
			 uint32_t space, uint32_t tag, const void *buf, size_t len)
{
	if (recording && !(space & DVX_BOOTSTRAP_SPACE_INTERNAL)) {
		LF_CHECK(len < 1024 && rec_len + 3 + len <= sizeof(rec));
		rec[rec_len++] = (uint8_t)len;
		rec[rec_len++] = (uint8_t)(len >> 8);
		rec[rec_len++] = tag == TAG || tag == DVX_HT_CACHE_TAG;
		memcpy(rec + rec_len, buf, len);
		rec_len += len;
	}
	return real_ops->post_send(b, req, peer, space, tag, buf, len);
}

static void *zalloc(size_t len, size_t align)
{
	void *p = NULL;

	LF_CHECK(!posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align,
				 (len + align - 1) & ~(align - 1)));
	memset(p, 0, len);
	return p;
}

static void cfg_of(struct dvx_ht_ib_cfg *c, int r, uint8_t flags)
{
	memset(c, 0, sizeof(*c));
	c->nic = &nic[r];
	c->bs = &bs[r];
	c->peer = 1 - r;
	c->tag = TAG;
	c->mode = (flags & 1) ? DVX_HT_CB : DVX_HT_ZC;
	c->nchannels = (flags & 2) ? 2 : 1;
	c->sq_depth = 32;
	c->rq_depth = 32;
	c->max_ctrl = 128;
	c->ctrl_slots = 4;
	c->cb_depth = 4;
	c->cb_slot_bytes = 4096;
}

static void setup(void)
{
	struct dvx_sim_fabric_cfg fc;
	struct dvx_ht_ib_cfg c;
	struct dvx_ht_cache_cfg cc;
	struct dvx_mem_req m[3];
	size_t fsz;
	int i, k;

	dvx_sim_fabric_cfg_default(&fc);
	/* small tables: dvx_sim_get_stats() walks them for every input, and every pass of
	 * the NIC the QPs (a transport holds a CQ and 1-2 QPs per NIC) */
	fc.max_nics = 2;
	fc.max_qps = 4;
	fc.max_cqs = 4;
	fc.max_mrs = 8;
	fc.max_umems = 16;
	fc.max_uars = 4;
	fc.max_pds = 2;
	fc.max_dmabufs = 1;
	fc.max_gpus = 1;
	fc.max_gpu_mems = 1;
	fsz = dvx_sim_fabric_mem_size(&fc);
	LF_CHECK(!dvx_sim_fabric_init(zalloc(fsz, 64), fsz, &fc, &fab));
	vhal = *dvx_sim_hal(fab);
	vhost = *vhal.host;
	vhost.now_ns = hal_now;
	vhal.host = &vhost;
	for (i = 0; i < 2; i++) {
		struct dvx_sim_nic_cfg nc;
		struct dvx_nic_cfg na;
		char name[16];

		dvx_sim_nic_cfg_default(&nc, (unsigned)i);
		LF_CHECK(dvx_sim_add_nic(fab, &nc) >= 0);
		memset(&na, 0, sizeof(na));
		snprintf(name, sizeof(name), "sim_%d", i);
		na.name = name;
		LF_CHECK(!dvx_nic_open(&nic[i], &vhal, &na));
	}
	/* the largest geometry the input can ask for: copy-based, 2 channels */
	cfg_of(&c, 0, 3);
	LF_CHECK(!dvx_ht_ib_mem_req(&c, &m[0], &m[1], &m[2]));
	for (k = 0; k < 3; k++) {
		reg_len[k] = m[k].bytes;
		for (i = 0; i < 2; i++)
			reg[i][k] = zalloc(m[k].bytes, m[k].align);
	}
	tg_size = dvx_bootstrap_tgroup_mem_size(2, SLOTS, MAX_MSG);
	LF_CHECK(tg_size > 0);
	tg_mem = zalloc(tg_size, 64);
	/* the cache's regions are sized by its group: make one group to ask */
	memset(&cc, 0, sizeof(cc));
	{
		struct dvx_bootstrap_tgroup_cfg a = { 2, SLOTS, MAX_MSG, { 0 } };

		LF_CHECK(!dvx_bootstrap_tgroup_init(&tg, &a, tg_mem, tg_size));
		LF_CHECK(!dvx_bootstrap_thread_init(&bs[0], tg, 0));
		cc.bs = &bs[0];
		cc.tmpl = c;
		LF_CHECK(!dvx_ht_cache_mem_req(&cc, &m[0], &m[1], &m[2]));
		dvx_bootstrap_fini(&bs[0]);
		LF_CHECK(!dvx_bootstrap_tgroup_fini(tg));
	}
	for (k = 0; k < 3; k++) {
		creg_len[k] = m[k].bytes;
		for (i = 0; i < 2; i++)
			creg[i][k] = zalloc(m[k].bytes, m[k].align);
	}
}

static void group_up(void)
{
	struct dvx_bootstrap_tgroup_cfg a = { 2, SLOTS, MAX_MSG, { 0 } };
	int i;

	memset(tg_mem, 0, tg_size);
	LF_CHECK(!dvx_bootstrap_tgroup_init(&tg, &a, tg_mem, tg_size));
	for (i = 0; i < 2; i++)
		LF_CHECK(!dvx_bootstrap_thread_init(&bs[i], tg, i));
	real_ops = bs[1].ops;
	fast_ops = *real_ops;
	fast_ops.wait = fast_wait;
	fast_ops.now_ns = bs_now;
	rec_ops = fast_ops;
	rec_ops.post_send = rec_post_send;
	bs[0].ops = &fast_ops;
	bs[1].ops = &rec_ops;
}

static void group_down(void)
{
	bs[0].ops = real_ops;
	bs[1].ops = real_ops;
	dvx_bootstrap_fini(&bs[0]);
	dvx_bootstrap_fini(&bs[1]);
	LF_CHECK(!dvx_bootstrap_tgroup_fini(tg));
	tg = NULL;
}

static int ib_up(int r, uint8_t flags)
{
	struct dvx_ht_ib_cfg c;

	cfg_of(&c, r, flags);
	memset(&ib[r], 0, sizeof(ib[r]));
	return dvx_ht_ib_init(&ib[r], &c, reg[r][0], reg_len[0], reg[r][1], reg_len[1],
			      reg[r][2], reg_len[2]);
}

static int cache_up(int r, uint8_t flags)
{
	struct dvx_ht_cache_cfg cc;

	memset(&cc, 0, sizeof(cc));
	cc.bs = &bs[r];
	cfg_of(&cc.tmpl, r, flags);
	cc.tick_every = 1;
	memset(&cache[r], 0, sizeof(cache[r]));
	return dvx_ht_cache_init(&cache[r], &cc, creg[r][0], creg_len[0], creg[r][1],
				 creg_len[1], creg[r][2], creg_len[2]);
}

static void check_ib(const struct dvx_ht_ib *t)
{
	const char *why = "";

	if (t->live == DVX_LIVE && dvx_ht_ib_check(t, &why)) {
		fprintf(stderr, "ht_hs: invariant: %s\n", why);
		LF_CHECK(!"the transport's invariant checker passes");
	}
}

/* the harness as rank 1: the input's messages, on the space of @b */
static void send_script(struct dvx_bootstrap *b, const uint8_t *p, size_t n)
{
	static uint8_t msg[1024];
	struct lf_in in = { p, n };

	while (in.n) {
		uint32_t len = lf_u16(&in) & 0x3ffu, flags = lf_u8(&in);
		int err;

		if (len > MAX_MSG)
			len = MAX_MSG;
		lf_bytes(&in, msg, len);
		err = dvx_bootstrap_send(b, 0, (flags & 1) ? ((b == &bs[1]) ? TAG : DVX_HT_CACHE_TAG) : 7,
					 msg, len, 1000);
		/* the unexpected slots may be full: the rest stays unsent */
		LF_CHECK(!err || err == -ETIMEDOUT || err == -ENOBUFS || err == -EBUSY);
		if (err)
			break;
	}
}

static void run_ib(uint8_t flags, const uint8_t *p, size_t n)
{
	struct dvx_ht *t = &ib[0].ht;
	int i, err = 0, first = 0, failed_passes = 0;

	LF_CHECK(!ib_up(0, flags));
	send_script(&bs[1], p, n);
	for (i = 0; i < PASSES; i++) {
		err = dvx_ht_progress(t);
		check_ib(&ib[0]);
		if (err) {
			LF_CHECK(err < 0);
			if (!first)
				first = err;
			LF_CHECK(err == first);	/* a failed handshake stays failed */
			LF_CHECK(!dvx_ht_connected(t));
			if (++failed_passes == 2)
				break;	/* failed, and still failed one pass later */
		}
		if (dvx_ht_connected(t))
			break;
	}
	if (lf_verbose())
		fprintf(stderr, "ht_hs: ib: %s (%d)\n", dvx_ht_connected(t) ? "connected" : "not",
			err);
	if ((flags & 8) && dvx_ht_connected(t)) {
		err = dvx_ht_recover(t, 0, REC_NS);
		if (lf_verbose())
			fprintf(stderr, "ht_hs: recover: %d, channel %d\n", err, dvx_ht_status(t, 0));
		LF_CHECK(err <= 0);
		LF_CHECK(err || dvx_ht_status(t, 0) == 0);	/* 0 only for a usable channel */
		LF_CHECK(err != -EINVAL);
		check_ib(&ib[0]);
	}
	dvx_ht_ib_fini(&ib[0]);
}

static void run_cache(uint8_t flags, const uint8_t *p, size_t n)
{
	struct dvx_bootstrap dup;
	struct dvx_ht_cache_stats s;
	struct dvx_ht *t;
	int i;

	LF_CHECK(!cache_up(0, flags));
	/* the cache's handshakes run in a duplicate: so do the harness's messages */
	LF_CHECK(!dvx_bootstrap_dup(&bs[1], &dup));
	send_script(&dup, p, n);
	for (i = 0; i < PASSES; i++) {
		LF_CHECK(!dvx_ht_cache_progress(&cache[0]));
		t = dvx_ht_cache_lookup(&cache[0], 1);
		if (t) {
			check_ib((const struct dvx_ht_ib *)(const void *)t);
			if (dvx_ht_connected(t))
				break;
		}
	}
	dvx_ht_cache_get_stats(&cache[0], &s);
	LF_CHECK(s.answered <= 1 && s.live <= 1 && s.asked == 0);
	LF_CHECK(s.live <= s.answered);
	if (lf_verbose())
		fprintf(stderr, "ht_hs: cache: answered %llu, live %u\n",
			(unsigned long long)s.answered, s.live);
	LF_CHECK(!dvx_ht_cache_fini(&cache[0]));
	dvx_bootstrap_fini(&dup);
}

/* the software NIC's objects between inputs (walked once per input) */
static struct dvx_sim_stats base;
static int have_base;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dvx_sim_stats s0, s1;
	uint8_t flags;
	int i;

	if (!size)
		return 0;
	flags = data[0];
	if (!have_base) {
		memset(&base, 0, sizeof(base));
		dvx_sim_get_stats(fab, &base);
		have_base = 1;
	}
	s0 = base;
	group_up();
	if (flags & 4)
		run_cache(flags, data + 1, size - 1);
	else
		run_ib(flags, data + 1, size - 1);
	group_down();
	memset(&s1, 0, sizeof(s1));
	dvx_sim_get_stats(fab, &s1);
	for (i = 0; i < 8; i++)
		LF_CHECK(s1.live[i] == s0.live[i]);	/* everything given back */
	return 0;
}

/* ---- seeds: a real rank 1 ---- */

/* a recovery message as docs/ht.md "Wire formats" lays it out (little-endian) */
static void rec_msg(uint8_t kind, uint32_t att, uint32_t echo, uint32_t failed, int32_t err)
{
	uint8_t m[256];
	uint32_t v[5] = { att, echo, failed, (uint32_t)err, 0 };
	int i, k;

	memset(m, 0, sizeof(m));
	m[0] = 0x44; m[1] = 0x56; m[2] = 0x48; m[3] = 0x52;	/* "DVHR" */
	m[4] = 1;
	m[5] = kind;
	for (i = 0; i < 4; i++)
		for (k = 0; k < 4; k++)
			m[8 + 4 * i + k] = (uint8_t)(v[i] >> (8 * k));
	LF_CHECK(rec_len + 3 + sizeof(m) <= sizeof(rec));
	rec[rec_len++] = (uint8_t)sizeof(m);
	rec[rec_len++] = (uint8_t)(sizeof(m) >> 8);
	rec[rec_len++] = 1;
	memcpy(rec + rec_len, m, sizeof(m));
	rec_len += sizeof(m);
}

static void seed_one(const char *name, uint8_t flags)
{
	uint8_t buf[1 + sizeof(rec)];
	struct dvx_ht *a = NULL, *b = NULL;
	int i;

	group_up();
	recording = 1;
	rec_len = 0;
	if (flags & 4) {
		LF_CHECK(!cache_up(0, flags));
		LF_CHECK(!cache_up(1, flags));
		LF_CHECK(!dvx_ht_cache_get(&cache[1], 0, (flags & 1) ? DVX_HT_CB : DVX_HT_ZC, &b));
		for (i = 0; i < 100000 && !(a && dvx_ht_connected(a) && dvx_ht_connected(b)); i++) {
			dvx_ht_cache_progress(&cache[0]);
			dvx_ht_cache_progress(&cache[1]);
			a = dvx_ht_cache_lookup(&cache[0], 1);
		}
	} else {
		LF_CHECK(!ib_up(0, flags));
		LF_CHECK(!ib_up(1, flags));
		a = &ib[0].ht;
		b = &ib[1].ht;
		for (i = 0; i < 100000 && !(dvx_ht_connected(a) && dvx_ht_connected(b)); i++) {
			dvx_ht_progress(a);
			dvx_ht_progress(b);
		}
	}
	LF_CHECK(a && dvx_ht_connected(a) && dvx_ht_connected(b));
	recording = 0;
	if (flags & 8) {
		/* the peer's side of a recovery of channel 0 whose end failed (-EIO): its
		 * ACK of our first attempt, QUIET, READY */
		rec_msg(2, 1, 1, 1, -5);
		rec_msg(3, 1, 1, 0, 0);
		rec_msg(4, 1, 1, 0, 0);
	}
	buf[0] = flags;
	memcpy(buf + 1, rec, rec_len);
	lf_seed(name, buf, 1 + rec_len);
	if (flags & 4) {
		LF_CHECK(!dvx_ht_cache_fini(&cache[0]));
		LF_CHECK(!dvx_ht_cache_fini(&cache[1]));
	} else {
		dvx_ht_ib_fini(&ib[0]);
		dvx_ht_ib_fini(&ib[1]);
	}
	group_down();
}

static void write_seeds(void)
{
	seed_one("ib-zc-1ch", 0);
	seed_one("ib-cb-1ch", 1);
	seed_one("ib-zc-2ch", 2);
	seed_one("ib-cb-2ch", 3);
	seed_one("cache-zc-1ch", 4);
	seed_one("cache-cb-2ch", 7);
	seed_one("ib-zc-1ch-recover", 8);
	seed_one("ib-cb-2ch-recover", 11);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setup();
	lf_seed_mode(write_seeds);
	return 0;
}
