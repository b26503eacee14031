// SPDX-License-Identifier: MIT
/*
 * tests/fuzz/lf/msg_hs.c - libFuzzer harness: the messaging layer's handshake
 * (core/msg/hs.c), the bytes a peer sends on the handshake's socket: the connector's
 * HELLO and READY to an acceptor, the acceptor's REPLY and DONE to a connector.
 *
 * Public API only (dvx/msg/msg.h) over the software NIC. Two contexts live for the whole
 * run, A (tested, NIC 0, sharing on: 2 groups, 2 QPs per connection, the CTS receiver
 * offload asked for: HELLO byte 54, REPLY bytes 22-43) with a listen comm,
 * and B (NIC 1, the honest peer the seeds are recorded from) with one. Their cfg.hal is
 * this file's host table: stream sockets of its own (no OS socket), a virtual clock
 * (each pass costs 1 ms; silence ends at the handshake's 1 s timeout), random bytes from
 * a fixed seed per context.
 *
 * Feeds:
 *   byte 0  [0] A's role: 0 accepts (the input is a connector's bytes), 1 connects to
 *           B's handle (the input is an acceptor's bytes); [1] the stream ends in
 *           end-of-file (else silence until the deadline); [2] connect with 1 QP (else 2)
 *   byte 1  the most bytes one sock_recv gives A (0: all there are)
 *   the rest: the bytes the peer sends, in order.
 *
 * Checks, per input: A's invariant checker passes after every call; a handshake ends
 * (no hang: the virtual deadline) with a communicator or an error, never both; one that
 * gives a communicator is closed, and then A is what it was before the input: the same
 * communicators, handshakes, sets, QPs, CQs, pool entries and ring bytes (dvx_msg_stats),
 * the same objects in the software NIC (dvx_sim_get_stats()), no socket of A's left
 * open but its listener; one that fails is counted (acceptor: stats.refused grows by
 * one; connector: the connect returns the error). The library allocates nothing (the
 * build's check-alloc.sh); the harness allocates only at start.
 *
 * Seeds: 'DVX_FUZZ_WRITE_SEEDS=DIR' runs B for real against A (B connects to A; A
 * connects to B, both roles, 1 and 2 QPs, sharing's NEW and PRIVATE decisions) and
 * records what B sent: handshakes made by the layer's own encoder
 * ('scripts/fuzz.sh --seeds').
 */
#include <dvx/hal/hal.h>
#include <dvx/hal/host.h>
#include <dvx/msg/msg.h>
#include <dvx/nic/nic.h>
#include <dvx/hal/sim.h>

#include "lf.h"

#define NSOCK 16
#define FD_BASE 200
#define SCRIPT (-2)
#define MS 1000000ull
#define TIMEOUT_NS (1000ull * MS)
#define MAX_PASSES 400

enum { S_FREE, S_LISTEN, S_CONN };

struct fsock {
	int state;
	int owner;		/* 0: A, 1: B */
	int peer;		/* socket index, SCRIPT or -1 */
	int peer_closed;
	char path[DVX_HAL_SOCK_PATH_MAX];
	uint8_t rx[8192];	/* paired sockets: bytes not read yet */
	size_t rx_len, rx_off;
	int acceptq[NSOCK];
	int nacc;
};

struct hctx {
	int who;
	uint64_t rng;
};

static struct {
	struct fsock s[NSOCK];
	uint64_t vclock;
	/* fuzzing */
	const uint8_t *script;
	size_t script_len, script_off, chunk;
	int eof, script_sock;
	/* recording: what B sent */
	int record;
	uint8_t rec[16384];
	size_t rec_len;
} net;

static struct hctx hctx[2] = { { 0, 0x1234567887654321ull }, { 1, 0x0f1e2d3c4b5a6978ull } };
static struct dvx_hal hal[2];
static struct dvx_sim_fabric *fab;
static struct dvx_nic nic[2];
static struct dvx_msg ctx[2];
static struct dvx_msg_comm *lcomm[2];
static struct dvx_msg_handle handle[2];

static int who(const struct dvx_hal *h)
{
	return ((const struct hctx *)h->ctx)->who;
}

static struct fsock *sock_of(int fd)
{
	int i = fd - FD_BASE;

	LF_CHECK(i >= 0 && i < NSOCK && net.s[i].state != S_FREE);
	return &net.s[i];
}

static int new_sock(int state, int owner)
{
	int i;

	for (i = 0; i < NSOCK; i++)
		if (net.s[i].state == S_FREE) {
			memset(&net.s[i], 0, sizeof(net.s[i]));
			net.s[i].state = state;
			net.s[i].owner = owner;
			net.s[i].peer = -1;
			return i;
		}
	LF_CHECK(!"out of sockets");
	return -1;
}

/* ---- the host table ---- */

static uint64_t f_now(const struct dvx_hal *h)
{
	(void)h;
	return net.vclock;
}

static int f_sleep(const struct dvx_hal *h, uint64_t ns)
{
	(void)h;
	net.vclock += ns;
	return 0;
}

static int f_random(const struct dvx_hal *h, void *buf, size_t len)
{
	struct hctx *c = h->ctx;
	uint8_t *b = buf;
	size_t i;

	for (i = 0; i < len; i++) {
		c->rng ^= c->rng << 13;
		c->rng ^= c->rng >> 7;
		c->rng ^= c->rng << 17;
		b[i] = (uint8_t)(c->rng >> 24);
	}
	return 0;
}

static int f_listen(const struct dvx_hal *h, const struct dvx_hal_sock_addr *addr, int backlog,
		    int *fd)
{
	int i = new_sock(S_LISTEN, who(h));

	LF_CHECK(addr->family == DVX_HAL_SOCK_UNIX && backlog > 0);
	snprintf(net.s[i].path, sizeof(net.s[i].path), "%s", addr->path);
	*fd = FD_BASE + i;
	return 0;
}

static int find_listener(const char *path)
{
	int l;

	for (l = 0; l < NSOCK; l++)
		if (net.s[l].state == S_LISTEN && !strcmp(net.s[l].path, path))
			return l;
	return -1;
}

static int f_connect(const struct dvx_hal *h, const struct dvx_hal_sock_addr *addr, int *fd)
{
	int l = find_listener(addr->path), i, k;

	*fd = -1;
	if (l < 0)
		return -ECONNREFUSED;
	i = new_sock(S_CONN, who(h));
	if (!net.record) {
		/* A's connect: the input answers */
		LF_CHECK(who(h) == 0 && net.script_sock < 0);
		net.s[i].peer = SCRIPT;
		net.script_sock = i;
	} else {
		k = new_sock(S_CONN, net.s[l].owner);
		net.s[i].peer = k;
		net.s[k].peer = i;
		LF_CHECK(net.s[l].nacc < NSOCK);
		net.s[l].acceptq[net.s[l].nacc++] = k;
	}
	*fd = FD_BASE + i;
	return 0;
}

static int f_error(const struct dvx_hal *h, int fd)
{
	(void)h;
	(void)fd;
	return 0;
}

static int f_accept(const struct dvx_hal *h, int lfd, int *fd)
{
	struct fsock *l = sock_of(lfd);
	int i;

	LF_CHECK(l->state == S_LISTEN && l->owner == who(h));
	*fd = -1;
	if (!l->nacc)
		return -EAGAIN;
	i = l->acceptq[0];
	memmove(l->acceptq, l->acceptq + 1, (size_t)--l->nacc * sizeof(int));
	*fd = FD_BASE + i;
	return 0;
}

static int f_name(const struct dvx_hal *h, int fd, struct dvx_hal_sock_addr *addr)
{
	struct fsock *s = sock_of(fd);

	(void)h;
	memset(addr, 0, sizeof(*addr));
	addr->family = DVX_HAL_SOCK_UNIX;
	snprintf(addr->path, sizeof(addr->path), "%s", s->path);
	return 0;
}

static int f_send(const struct dvx_hal *h, int fd, const struct dvx_hal_iov *iov,
		  unsigned iovcnt, size_t *sent)
{
	struct fsock *s = sock_of(fd), *p;
	unsigned i;

	LF_CHECK(s->state == S_CONN && s->owner == who(h));
	*sent = 0;
	if (s->peer == SCRIPT) {
		for (i = 0; i < iovcnt; i++)
			*sent += iov[i].len;
		return 0;
	}
	if (s->peer < 0 || s->peer_closed)
		return -EPIPE;
	p = &net.s[s->peer];
	for (i = 0; i < iovcnt; i++) {
		LF_CHECK(p->rx_len + iov[i].len <= sizeof(p->rx));
		memcpy(p->rx + p->rx_len, iov[i].base, iov[i].len);
		p->rx_len += iov[i].len;
		if (net.record && s->owner == 1) {
			LF_CHECK(net.rec_len + iov[i].len <= sizeof(net.rec));
			memcpy(net.rec + net.rec_len, iov[i].base, iov[i].len);
			net.rec_len += iov[i].len;
		}
		*sent += iov[i].len;
	}
	return 0;
}

static int f_recv(const struct dvx_hal *h, int fd, void *buf, size_t len, size_t *got)
{
	struct fsock *s = sock_of(fd);
	size_t n;

	LF_CHECK(s->state == S_CONN && s->owner == who(h));
	*got = 0;
	if (s->peer == SCRIPT) {
		n = net.script_len - net.script_off;
		if (!n)
			return net.eof ? 0 : -EAGAIN;
		if (net.chunk && n > net.chunk)
			n = net.chunk;
		if (n > len)
			n = len;
		memcpy(buf, net.script + net.script_off, n);
		net.script_off += n;
		*got = n;
		return 0;
	}
	n = s->rx_len - s->rx_off;
	if (!n)
		return s->peer_closed ? 0 : -EAGAIN;
	if (n > len)
		n = len;
	memcpy(buf, s->rx + s->rx_off, n);
	s->rx_off += n;
	*got = n;
	return 0;
}

static int f_poll(const struct dvx_hal *h, struct dvx_hal_pollfd *fds, unsigned nfds,
		  uint64_t timeout_ns)
{
	unsigned i;

	(void)h;
	(void)timeout_ns;
	for (i = 0; i < nfds; i++)
		fds[i].revents = fds[i].events & DVX_HAL_POLL_OUT;
	return (int)nfds;
}

static int f_close(const struct dvx_hal *h, int fd)
{
	struct fsock *s = sock_of(fd);

	LF_CHECK(s->owner == who(h));
	if (s->peer >= 0)
		net.s[s->peer].peer_closed = 1;
	if (fd - FD_BASE == net.script_sock)
		net.script_sock = -1;
	s->state = S_FREE;
	return 0;
}

static int f_unlink(const struct dvx_hal *h, const struct dvx_hal_sock_addr *addr)
{
	(void)h;
	(void)addr;
	return 0;
}

static const struct dvx_hal_host_ops fake_ops = {
	.now_ns = f_now,
	.sock_listen = f_listen,
	.sock_connect = f_connect,
	.sock_error = f_error,
	.sock_accept = f_accept,
	.sock_name = f_name,
	.sock_send = f_send,
	.sock_recv = f_recv,
	.sock_poll = f_poll,
	.sock_close = f_close,
	.sock_unlink = f_unlink,
	.sleep_ns = f_sleep,
	.random_bytes = f_random,
};

/* ---- set-up, once ---- */

static void *zalloc(size_t len, size_t align)
{
	void *p = NULL;

	LF_CHECK(!posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align,
				 (len + align - 1) & ~(align - 1)));
	memset(p, 0, len);
	return p;
}

static void setup(void)
{
	struct dvx_sim_fabric_cfg fc;
	size_t fsz;
	int i;

	net.script_sock = -1;
	dvx_sim_fabric_cfg_default(&fc);
	fc.max_nics = 2;
	fc.max_qps = 48;	/* each context: 8 sets of 2 QPs at most; dvx_sim_get_stats() */
	fc.max_cqs = 48;	/* walks the tables, for every input */
	fsz = dvx_sim_fabric_mem_size(&fc);
	LF_CHECK(!dvx_sim_fabric_init(zalloc(fsz, 64), fsz, &fc, &fab));
	for (i = 0; i < 2; i++) {
		struct dvx_sim_nic_cfg nc;
		struct dvx_nic_cfg na;
		struct dvx_msg_cfg c;
		struct dvx_mem_req s, f, g;
		char name[16];

		dvx_sim_nic_cfg_default(&nc, (unsigned)i);
		LF_CHECK(dvx_sim_add_nic(fab, &nc) >= 0);
		memset(&na, 0, sizeof(na));
		snprintf(name, sizeof(name), "sim_%d", i);
		na.name = name;
		LF_CHECK(!dvx_nic_open(&nic[i], dvx_sim_hal(fab), &na));
		hal[i].host = &fake_ops;
		hal[i].ctx = &hctx[i];
		hal[i].name = "fuzz";
		memset(&c, 0, sizeof(c));
		c.nnics = 1;
		c.nics[0] = &nic[i];
		c.hal = &hal[i];
		c.listen_addr.family = DVX_HAL_SOCK_UNIX;
		snprintf(c.listen_addr.path, sizeof(c.listen_addr.path), "/dvx-fuzz/msg-%c",
			 'A' + i);
		c.max_comms = 8;
		c.max_pending = 4;
		c.nqps = 2;
		c.max_reqs = 4;
		c.max_recvs = 2;
		c.groups = 2;
		/* both ask for the CTS offload: HELLO's wish, REPLY's ring (docs/msg.md) */
		c.flags = DVX_MSG_F_CTS_OFFLOAD;
		c.eager_bytes = 256;
		c.max_shared_sets = 4;
		c.max_private_sets = 4;
		c.timeout_ns = TIMEOUT_NS;
		LF_CHECK(!dvx_msg_mem_req(&c, &s, &f, &g));
		LF_CHECK(!dvx_msg_init(&ctx[i], &c, zalloc(s.bytes, s.align), s.bytes,
				       zalloc(f.bytes, f.align), f.bytes, zalloc(g.bytes, g.align),
				       g.bytes));
		LF_CHECK(!dvx_msg_listen(&ctx[i], 0, &handle[i], &lcomm[i]));
	}
}

/* ---- per input ---- */

struct snap {
	struct dvx_msg_stats m;
	struct dvx_sim_stats s;
};

static void snap_of(struct snap *x)
{
	memset(x, 0, sizeof(*x));
	dvx_msg_get_stats(&ctx[0], &x->m);
	dvx_sim_get_stats(fab, &x->s);
}

static void check_a(void)
{
	const char *why = "";

	if (dvx_msg_check(&ctx[0], &why)) {
		fprintf(stderr, "msg_hs: invariant: %s\n", why);
		LF_CHECK(!"A's invariant checker passes");
	}
}

/* what A and the software NIC held after the last input (the next one's "before") */
static struct snap last;

static void same_as(const struct snap *a)
{
	struct snap b;
	int i;

	snap_of(&b);
	last = b;
	LF_CHECK(b.m.comms == a->m.comms);
	LF_CHECK(b.m.closing == a->m.closing);
	LF_CHECK(b.m.pending == a->m.pending);
	LF_CHECK(b.m.sets == a->m.sets);
	LF_CHECK(b.m.shared_sets == a->m.shared_sets);
	LF_CHECK(b.m.qps == a->m.qps);
	LF_CHECK(b.m.cqs == a->m.cqs);
	LF_CHECK(b.m.pool_entries == a->m.pool_entries);
	LF_CHECK(b.m.ring_bytes == a->m.ring_bytes);
	for (i = 0; i < 8; i++)
		LF_CHECK(b.s.live[i] == a->s.live[i]);
	for (i = 0; i < NSOCK; i++)
		LF_CHECK(net.s[i].state == S_FREE || net.s[i].state == S_LISTEN ||
			 net.s[i].owner != 0);
}

/* close @c (A's) and run A until it is gone: bounded by the context's timeout */
static void close_a(struct dvx_msg_comm *c, uint32_t comms0)
{
	struct dvx_msg_stats st;
	int i;

	LF_CHECK(!dvx_msg_close(c));
	for (i = 0; i < 64; i++) {
		dvx_msg_progress(&ctx[0]);
		check_a();
		dvx_msg_get_stats(&ctx[0], &st);
		if (st.comms == comms0)
			return;
		net.vclock += TIMEOUT_NS / 8;
	}
	LF_CHECK(!"a closed communicator goes by the context's timeout");
}

static void run_accept(struct snap *s0)
{
	struct dvx_msg_comm *r = NULL;
	struct dvx_msg_stats st;
	int i, k, l = find_listener("/dvx-fuzz/msg-A");

	LF_CHECK(l >= 0);
	k = new_sock(S_CONN, 0);
	net.s[k].peer = SCRIPT;
	net.script_sock = k;
	net.s[l].acceptq[net.s[l].nacc++] = k;
	for (i = 0; i < MAX_PASSES; i++) {
		LF_CHECK(!dvx_msg_accept(lcomm[0], &r));
		check_a();
		dvx_msg_get_stats(&ctx[0], &st);
		if (r || (!st.pending && net.script_sock < 0))
			break;
		net.vclock += MS;
		if (net.script_off == net.script_len || i == MAX_PASSES / 2)
			net.vclock += TIMEOUT_NS;	/* silence: on to the deadline */
	}
	LF_CHECK(r || !st.pending);	/* ended, one way or the other */
	if (lf_verbose())
		fprintf(stderr, "msg_hs: accept: %s after %d passes\n", r ? "a recv comm" : "refused",
			i);
	if (r) {
		close_a(r, s0->m.comms);
	} else {
		dvx_msg_get_stats(&ctx[0], &st);
		LF_CHECK(st.refused == s0->m.refused + 1);	/* refused and counted */
	}
}

static void run_connect(struct snap *s0, uint32_t nqps)
{
	struct dvx_msg_handle h = handle[1];
	struct dvx_msg_comm *s = NULL;
	int i, err = 0;

	for (i = 0; i < MAX_PASSES; i++) {
		err = dvx_msg_connect(&ctx[0], 0, nqps, &h, &s);
		check_a();
		if (err || s)
			break;
		net.vclock += MS;
		if (net.script_off == net.script_len || i == MAX_PASSES / 2)
			net.vclock += TIMEOUT_NS;	/* silence: on to the deadline */
	}
	LF_CHECK(!!err != !!s);	/* a communicator or an error, never both, never neither */
	if (lf_verbose())
		fprintf(stderr, "msg_hs: connect: %d after %d passes\n", err, i);
	if (s)
		close_a(s, s0->m.comms);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct snap s0;
	uint8_t flags;

	if (size < 2)
		return 0;
	flags = data[0];
	net.chunk = data[1];
	net.eof = !!(flags & 2);
	net.script = data + 2;
	net.script_len = size - 2;
	net.script_off = 0;
	s0 = last;	/* one walk of the tables per input */
	if (flags & 1)
		run_connect(&s0, (flags & 4) ? 1 : 2);
	else
		run_accept(&s0);
	LF_CHECK(net.script_sock < 0);
	same_as(&s0);
	return 0;
}

/* ---- seeds: B against A for real ---- */

static void settle(struct dvx_msg_comm *a, struct dvx_msg_comm *b)
{
	int i;

	if (a)
		LF_CHECK(!dvx_msg_close(a));
	if (b)
		LF_CHECK(!dvx_msg_close(b));
	for (i = 0; i < 200; i++) {
		struct dvx_msg_stats x, y;

		dvx_msg_progress(&ctx[0]);
		dvx_msg_progress(&ctx[1]);
		dvx_msg_get_stats(&ctx[0], &x);
		dvx_msg_get_stats(&ctx[1], &y);
		if (x.comms == 1 && y.comms == 1)
			return;
		net.vclock += MS;
	}
	LF_CHECK(!"seed: both ends settle");
}

static void seed_one(const char *name, int a_connects, uint32_t nqps)
{
	struct dvx_msg_comm *sa = NULL, *sb = NULL;
	struct dvx_msg_handle h = handle[a_connects ? 1 : 0];
	uint8_t buf[2 + sizeof(net.rec)];
	int i, err;

	net.rec_len = 0;
	for (i = 0; i < 1000 && !(sa && sb); i++) {
		if (a_connects) {
			if (!sa) {
				err = dvx_msg_connect(&ctx[0], 0, nqps, &h, &sa);
				LF_CHECK(!err);
			}
			if (!sb)
				LF_CHECK(!dvx_msg_accept(lcomm[1], &sb));
		} else {
			if (!sb) {
				err = dvx_msg_connect(&ctx[1], 0, nqps, &h, &sb);
				LF_CHECK(!err);
			}
			if (!sa)
				LF_CHECK(!dvx_msg_accept(lcomm[0], &sa));
		}
		net.vclock += MS;
	}
	LF_CHECK(sa && sb);
	buf[0] = (uint8_t)((a_connects ? 1 : 0) | 2 | (nqps == 1 ? 4 : 0));
	buf[1] = 0;
	memcpy(buf + 2, net.rec, net.rec_len);
	lf_seed(name, buf, 2 + net.rec_len);
	settle(sa, sb);
}

static void write_seeds(void)
{
	net.record = 1;
	seed_one("accept-2qp", 0, 2);
	seed_one("accept-1qp", 0, 1);
	seed_one("connect-2qp", 1, 2);
	seed_one("connect-1qp", 1, 1);
	net.record = 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setup();
	lf_seed_mode(write_seeds);
	snap_of(&last);
	return 0;
}
