// SPDX-License-Identifier: MIT
/*
 * tests/fuzz/lf/sim_wire.c - libFuzzer harness: the wire's frames as another process
 * sends them (hal/sim/wire.c's receive buffer and frame checks, and what it hands to
 * exec.c: requests to the responder half, answers to the requester half;
 * docs/sim-wire.md, "What travels").
 *
 * The world, fresh for every input: a software NIC (dvx_sim_nic_cfg_default(0)) in a
 * fabric with a wire, rank 0 of 2 (max_msg 4 KiB), listening on an abstract UNIX name;
 * the harness joins it as rank 1 (the hello, and rank 0's hello back), then sends the
 * whole input on that connection, as the bytes rank 1 sends, and steps the fabric until
 * it has read them all and no frame came for a few steps. What rank 0 writes back
 * (answers) is thrown away. The wire's sockets are those of its cfg.hal, here the
 * host's table with one listener and one stream connection of the harness's own in
 * this process (below: a socket's rules, no system call) and a virtual clock; the
 * fabric and the wire are initialised again for every input in storage allocated once
 * (the fabric's init clears all of it, the harness the wire's receive buffer), and the
 * software NIC's tables are at their least (frames name no QP that exists, whatever
 * their size). Nothing else lives from one input to the next but the rings' memfd,
 * whose bytes are cleared before each join. (Before, each run made a real listening
 * socket, connection and memfd, and a fabric of the default tables cleared in fresh
 * pages: about 1.3 ms of CPU an input; bench/RESULTS.md.)
 *
 * Every input runs twice: once through the socket, as above, and once through a
 * shared-memory ring of 4 KiB (the join sends a sealed memfd with a ring hello, as a
 * process of this host does; docs/sim-wire.md "The shared-memory ring"): the harness
 * writes the input into rank 1's direction as room allows and publishes it, so rank 0
 * executes frames where they lie in the ring (rx_direct(): the header copied out and
 * checked, the payload taken in place, in two pieces where it wraps the end), and a
 * frame larger than the ring (more than 3976 bytes of payload) streams through the
 * receive buffer. Before each step the harness, as a peer may, rewrites the payload
 * bytes of the frames published and not yet taken (the input's bytes xor a counter):
 * payload is only copied, never decided on, so the counts stay those of the input. The
 * wire cuts through from 1 KiB (cfg.stream_bytes): a WRITE of that size whose header is
 * published before the rest (the ring's room ran out mid-frame) is executed then, and
 * since no frame names a QP that exists it is dropped at once and taken from the ring
 * when whole, without running again; it counts (frames_rx) once it is whole, so one
 * that the input cuts short is never counted, as the rules below do not count it
 * (tests/fuzz/regress/sim-wire/streamed-write-truncated).
 *
 * Checks: the join succeeds and nothing is refused; the frames the input holds are
 * counted by the harness's own reading of the rules (magic "DVXW", version 2, type 1..4,
 * payload at most max_msg and 0 or the length, a WRITE's or SEND's payload its whole
 * length): while they hold, every complete frame is received (frames_rx) and the
 * connection stays up; the first header that breaks them closes the connection
 * (peers_down 1) and no frame after it is received; nothing in this process is touched
 * that the frames do not name (ASan); the ring's memfd is taken and its descriptor
 * closed; at the end the fabric is released without error, its listener and
 * connection closed.
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <dvx/byteorder.h>
#include <dvx/hal/host.h>
#include <dvx/hal/sim.h>

#include "../../../hal/sim/ring.h"
#include "lf.h"

#define MAX_MSG 4096u
#define HDR 120u
#define MAX_INPUT (128u << 10)
#define RING 4096u
#define SHM_LEN 12288u		/* two 256-byte headers and two areas, in pages */
#define STREAM 1024u		/* cut-through from this payload: a WRITE of 1 KiB or more
				 * whose header is in the ring before all of its payload is
				 * executed then (docs/sim-wire.md "Cut-through") */
/* steps without a new frame and without an answer, once rank 0 has all the input, that
 * end a run: nothing is in flight in this process (a frame is held only for room to
 * answer, and answers flowing make the step not quiet); ending too early could only
 * fail the count check, never hide a frame */
#define QUIET 3

/* ---- the wire's hal: the host's, with one stream connection in this process ----
 *
 * Rank 0's wire makes its sockets through cfg.hal (docs/sim-wire.md): here a table of
 * the harness's whose listening socket and one connection live in this process (no
 * system call), so that what is fuzzed is the wire's reading of the bytes and not the
 * kernel's sockets. The stream keeps a socket's rules: a recv takes what is there up to
 * its room (-EAGAIN when nothing is, 0 at the peer's end), a send to a closed peer
 * fails, the ring's memfd travels with the hello's first byte (recv_fds), a poll says
 * IN for bytes, a connection to accept or the end, OUT always (the harness reads all
 * answers at once). The clock is virtual: 1 us per reading, a sleep adds its time.
 */
#define FD_LISTEN 900
#define FD_CONN 901

static struct {
	int listening, pending, open;	/* the listener; a connection to accept; accepted */
	int wire_closed;		/* rank 0 closed its end */
	const uint8_t *in;		/* what rank 1 sent and rank 0 has not read */
	size_t in_len, in_off;
	int sfd;			/* the memfd to pass with the first byte, or -1 */
	uint8_t back[16];		/* rank 0's hello (answers after it are dropped) */
	size_t back_len;
	uint64_t answered;		/* bytes rank 0 sent, all told */
	uint64_t vclock;
	int fds_closed;			/* received descriptors the wire closed */
} net;

static const struct dvx_hal_host_ops *real_host;
static struct dvx_hal_host_ops nhost;
static struct dvx_hal nhal;

static uint64_t n_now(const struct dvx_hal *h)
{
	(void)h;
	net.vclock += 1000;
	return net.vclock;
}

static int n_sleep(const struct dvx_hal *h, uint64_t ns)
{
	(void)h;
	net.vclock += ns;
	return 0;
}

static int n_listen(const struct dvx_hal *h, const struct dvx_hal_sock_addr *addr, int backlog,
		    int *fd)
{
	(void)h;
	LF_CHECK(addr->family == DVX_HAL_SOCK_ABSTRACT && backlog > 0 && !net.listening);
	net.listening = 1;
	*fd = FD_LISTEN;
	return 0;
}

static int n_name(const struct dvx_hal *h, int fd, struct dvx_hal_sock_addr *addr)
{
	(void)h;
	LF_CHECK(fd == FD_LISTEN);
	memset(addr, 0, sizeof(*addr));
	addr->family = DVX_HAL_SOCK_ABSTRACT;
	snprintf(addr->path, sizeof(addr->path), "dvx-fuzz-wire");
	return 0;
}

static int n_accept(const struct dvx_hal *h, int lfd, int *fd)
{
	(void)h;
	LF_CHECK(lfd == FD_LISTEN && net.listening);
	*fd = -1;
	if (!net.pending)
		return -EAGAIN;
	net.pending = 0;
	net.open = 1;
	*fd = FD_CONN;
	return 0;
}

static int n_recv_fds(const struct dvx_hal *h, int fd, void *buf, size_t len, size_t *got,
		      int *fds, unsigned max, unsigned *nfds)
{
	size_t k = net.in_len - net.in_off;

	(void)h;
	LF_CHECK(fd == FD_CONN && net.open && len > 0);
	*got = 0;
	*nfds = 0;
	if (!k)
		return -EAGAIN;
	if (k > len)
		k = len;
	memcpy(buf, net.in + net.in_off, k);
	net.in_off += k;
	*got = k;
	if (net.sfd >= 0 && fds && max) {
		fds[0] = net.sfd;
		*nfds = 1;
		net.sfd = -1;
	}
	return 0;
}

static int n_recv(const struct dvx_hal *h, int fd, void *buf, size_t len, size_t *got)
{
	unsigned n = 0;

	return n_recv_fds(h, fd, buf, len, got, NULL, 0, &n);
}

static int n_send(const struct dvx_hal *h, int fd, const struct dvx_hal_iov *iov,
		  unsigned iovcnt, size_t *sent)
{
	unsigned i;

	(void)h;
	LF_CHECK(fd == FD_CONN && net.open);
	*sent = 0;
	for (i = 0; i < iovcnt; i++) {
		size_t k = iov[i].len, room = sizeof(net.back) - net.back_len;

		memcpy(net.back + net.back_len, iov[i].base, k < room ? k : room);
		net.back_len += k < room ? k : room;
		*sent += k;
		net.answered += k;
	}
	return 0;
}

static int n_poll(const struct dvx_hal *h, struct dvx_hal_pollfd *fds, unsigned nfds,
		  uint64_t timeout_ns)
{
	unsigned i;
	int ready = 0;

	for (i = 0; i < nfds; i++) {
		fds[i].revents = 0;
		if (fds[i].fd == FD_LISTEN && net.listening)
			fds[i].revents = (int16_t)(net.pending ? DVX_HAL_POLL_IN & fds[i].events : 0);
		else if (fds[i].fd == FD_CONN && net.open)
			fds[i].revents = (int16_t)(((net.in_off < net.in_len ? DVX_HAL_POLL_IN : 0) |
						    DVX_HAL_POLL_OUT) & fds[i].events);
		else if (fds[i].fd >= 0)
			fds[i].revents = DVX_HAL_POLL_NVAL;
		ready += fds[i].revents != 0;
	}
	if (!ready)
		n_sleep(h, timeout_ns);
	return ready;
}

static int n_close(const struct dvx_hal *h, int fd)
{
	(void)h;
	if (fd == FD_LISTEN) {
		LF_CHECK(net.listening);
		net.listening = 0;
	} else {
		LF_CHECK(fd == FD_CONN && net.open);
		net.open = 0;
		net.wire_closed = 1;
	}
	return 0;
}

static int n_unlink(const struct dvx_hal *h, const struct dvx_hal_sock_addr *addr)
{
	(void)h;
	(void)addr;
	return 0;
}

/* a received descriptor: the harness's one memfd, which stays open for the next join */
static int n_fd_close(const struct dvx_hal *h, int fd)
{
	(void)h;
	(void)fd;
	net.fds_closed++;
	return 0;
}

static void net_hal(void)
{
	real_host = dvx_hal_host()->host;
	nhost = *real_host;
	nhost.now_ns = n_now;
	nhost.sleep_ns = n_sleep;
	nhost.sock_listen = n_listen;
	nhost.sock_name = n_name;
	nhost.sock_accept = n_accept;
	nhost.sock_recv_fds = n_recv_fds;
	nhost.sock_recv = n_recv;
	nhost.sock_send = n_send;
	nhost.sock_poll = n_poll;
	nhost.sock_close = n_close;
	nhost.sock_unlink = n_unlink;
	nhost.fd_close = n_fd_close;
	nhost.sock_connect = NULL;	/* rank 0 joins nobody: -ENOSYS */
	nhost.sock_send_fds = NULL;
	nhost.sock_error = NULL;
	nhal = *dvx_hal_host();
	nhal.host = &nhost;
}

/* ---- the world: made for every input in storage made once ---- */

struct world {
	struct dvx_sim_fabric *fab;
	uint8_t *shm;		/* ring mode: the rings' mapping, else NULL */
	struct sim_ring tx;	/* rank 1 -> rank 0: the input */
	struct sim_ring rx;	/* rank 0 -> rank 1: answers, thrown away */
};

static void *fab_mem, *wire_mem;
static size_t fab_len, wire_len, wire_clear;
static int mfd = -1;		/* the rings' sealed memfd, joined with again and again */
static uint8_t *shm;		/* the harness's mapping of it */

static void world_init(struct world *w, int ring)
{
	struct dvx_sim_wire_cfg wc = { .rank = 0, .nranks = 2, .max_msg = MAX_MSG,
				       .ring_bytes = ring ? RING : 0, .hal = &nhal,
				       .stream_bytes = STREAM };
	/* the NICs' configurations: the defaults of index 0 and 1, made once (they depend
	 * on the index alone) */
	static struct dvx_sim_nic_cfg nc[2];
	struct dvx_sim_fabric_cfg fc;
	struct dvx_hal_sock_addr bind, addr;
	uint8_t hello[16];
	int i;

	memset(w, 0, sizeof(*w));
	/* the software NIC's tables at their least: no QP is ever made (frames name none
	 * that exists, whatever the table's size), and the fabric is cleared per input */
	dvx_sim_fabric_cfg_default(&fc);
	fc.max_nics = 1;
	fc.max_qps = fc.max_cqs = fc.max_mrs = fc.max_umems = 1;
	fc.max_uars = fc.max_pds = fc.max_dmabufs = 1;
	fc.max_gpus = 0;
	fc.max_gpu_mems = 1;
	fc.reorder_stage = 0;
	if (!fab_mem) {
		fab_len = dvx_sim_fabric_mem_size(&fc);
		fab_mem = malloc(fab_len);
		wire_len = dvx_sim_wire_mem_size(&(struct dvx_sim_wire_cfg){
			.rank = 0, .nranks = 2, .max_msg = MAX_MSG, .ring_bytes = RING });
		wire_mem = calloc(1, wire_len);
		LF_CHECK(fab_mem && wire_mem);
		dvx_sim_nic_cfg_default(&nc[0], 0);
		dvx_sim_nic_cfg_default(&nc[1], 1);
		/* all but the send buffer (docs/sim-wire.md: 2 (120 + max_msg) + 1 MiB) */
		wire_clear = wire_len - (2 * (HDR + MAX_MSG) + (1u << 20));
	}
	/* dvx_sim_fabric_init() clears its storage, dvx_sim_wire_init() its tables; the
	 * receive buffer, where an input's bytes land, is cleared here too, so that nothing
	 * of one input is there for the next (the send buffer, last in the wire's memory
	 * and 1 MiB, holds only what rank 0 writes itself, below its own indices) */
	LF_CHECK(dvx_sim_wire_mem_size(&wc) <= wire_len && wire_clear <= wire_len);
	memset(wire_mem, 0, wire_clear);
	LF_CHECK(dvx_sim_fabric_init(fab_mem, fab_len, &fc, &w->fab) == 0);
	LF_CHECK(dvx_sim_add_nic(w->fab, &nc[0]) == 0);
	LF_CHECK(dvx_sim_wire_init(w->fab, &wc, wire_mem, wire_len) == 0);
	LF_CHECK(dvx_sim_wire_add_remote_nic(w->fab, 1, &nc[1]) == 0);
	memset(&bind, 0, sizeof(bind));
	bind.family = DVX_HAL_SOCK_ABSTRACT;
	snprintf(bind.path, sizeof(bind.path), "dvx-fuzz-wire");
	LF_CHECK(dvx_sim_wire_listen(w->fab, &bind, &addr) == 0);
	/* join as rank 1: the hello (with the rings' memfd in ring mode), then rank 0's
	 * hello back (it answers as it steps) */
	dvx_put_be32(hello, 0x44565857u);
	dvx_put_be32(hello + 4, ring ? 0x40000002u : 2);
	dvx_put_be32(hello + 8, 1);
	dvx_put_be32(hello + 12, 2);
	LF_CHECK(net.listening && !net.open && !net.pending);
	net.pending = 1;
	net.wire_closed = 0;
	net.in = hello;
	net.in_len = sizeof(hello);
	net.in_off = 0;
	net.back_len = 0;
	net.fds_closed = 0;
	net.sfd = -1;
	if (ring) {
		/* a fresh ring: the memfd's bytes as a new one's (all zero) */
		memset(shm, 0, SHM_LEN);
		dvx_sim_ring_attach(&w->tx, shm, shm + 2 * SIM_RING_HDR, RING);
		dvx_sim_ring_attach(&w->rx, shm + SIM_RING_HDR, shm + 2 * SIM_RING_HDR + RING,
				    RING);
		w->shm = shm;
		net.sfd = mfd;
	}
	for (i = 0; i < 10000 && net.back_len < sizeof(hello); i++)
		dvx_sim_step(w->fab);
	LF_CHECK(net.in_off == net.in_len && net.sfd < 0);
	LF_CHECK(net.back_len == sizeof(hello));
	LF_CHECK(net.fds_closed == (ring ? 1 : 0));	/* the memfd taken, its descriptor closed */
	LF_CHECK(dvx_get_be32(net.back) == 0x44565857u &&
		 dvx_get_be32(net.back + 4) == (ring ? 0x40000002u : 2) &&
		 dvx_get_be32(net.back + 8) == 0 && dvx_get_be32(net.back + 12) == 2);
	net.in = NULL;
	net.in_len = net.in_off = 0;
}

static void world_fini(struct world *w)
{
	LF_CHECK(dvx_sim_fini(w->fab) == 0);
	/* everything rank 0 opened is closed again */
	LF_CHECK(!net.listening && !net.open && !net.pending);
}

/* frames the rules let through before the first that breaks them; *bad if one does */
static uint64_t count_frames(const uint8_t *p, size_t n, int *bad)
{
	uint64_t frames = 0;
	size_t at = 0;

	*bad = 0;
	while (n - at >= HDR) {
		const uint8_t *b = p + at;
		uint32_t pay = dvx_get_be32(b + 112);
		uint64_t len = dvx_get_be64(b + 40);

		if (dvx_get_be32(b) != 0x44565857u || b[4] != 2 || b[5] < 1 || b[5] > 4 ||
		    pay > MAX_MSG || (pay && pay != len) ||
		    (b[5] == 1 && pay != len &&
		     (b[6] == 0x08 || b[6] == 0x09 || b[6] == 0x0a || b[6] == 0x0b))) {
			*bad = 1;
			break;
		}
		if (n - at < HDR + pay)
			break;
		at += HDR + pay;
		frames++;
	}
	return frames;
}

/* ring mode: rewrite the payload bytes of the frames published and not yet taken by
 * rank 0 (input bytes [*tail, pub) of the stream; @d the input), as a peer may at any
 * time: payload is copied, never decided on */
static void scribble(struct world *w, const uint8_t *d, size_t size, size_t pub, uint8_t k)
{
	uint64_t tail = __atomic_load_n(&w->tx.shm->tail, __ATOMIC_ACQUIRE);
	size_t at = 0;

	/* frame by frame from the input's start, as count_frames() reads it */
	while (size - at >= HDR && at < pub) {
		const uint8_t *b = d + at;
		uint32_t pay = dvx_get_be32(b + 112);
		size_t p, end;

		if (pay > MAX_MSG || size - at - HDR < pay)
			return;
		end = at + HDR + pay;
		for (p = at + HDR; p < end && p < pub; p++)
			if (p >= tail)
				w->tx.data[p & (RING - 1)] = (uint8_t)(d[p] ^ (k | 1));
		at = end;
	}
}

/* feed the input to rank 0 through the socket (@ring 0) or the ring; the stats after */
static void run(const uint8_t *dp, size_t size, int ring, struct dvx_sim_wire_stats *st)
{
	struct world w;
	uint64_t last = ~0ull;
	size_t off = 0, n;
	int quiet = 0, i;
	uint64_t ans = 0, before;

	world_init(&w, ring);
	if (!ring) {
		/* the whole input sent at once: rank 0 reads it as it has room */
		net.in = dp;
		net.in_len = size;
		net.in_off = 0;
		off = size;
	}
	for (i = 0; i < 100000 && quiet < QUIET; i++) {
		if (off < size && ring) {
			uint64_t room = 0;

			LF_CHECK(dvx_sim_ring_room(&w.tx, &room) == 0);
			n = size - off < room ? size - off : room;
			LF_CHECK(dvx_sim_ring_write(&w.tx, dp + off, n) == 0);
			off += n;
			(void)dvx_sim_ring_publish(&w.tx);
			scribble(&w, dp, size, off, (uint8_t)i);
		}
		before = net.answered;
		dvx_sim_step(w.fab);
		if (ring) {
			uint64_t got;
			uint8_t sink[4096];

			while (!dvx_sim_ring_read(&w.rx, sink, sizeof(sink), &got) && got)
				ans += got;
		}
		ans += net.answered - before;
		net.back_len = 0;	/* answers read and thrown away */
		LF_CHECK(dvx_sim_wire_get_stats(w.fab, st) == 0);
		if (st->peers_down)
			break;
		if (off == size && net.in_off == net.in_len && st->frames_rx == last && !ans)
			quiet++;
		else
			quiet = 0;
		last = st->frames_rx;
		ans = 0;
	}
	LF_CHECK(dvx_sim_wire_get_stats(w.fab, st) == 0);
	world_fini(&w);
}

int LLVMFuzzerTestOneInput(const uint8_t *dp, size_t size)
{
	struct dvx_sim_wire_stats st;
	uint64_t want;
	int bad, ring;

	if (size > MAX_INPUT)
		return 0;
	want = count_frames(dp, size, &bad);
	for (ring = 0; ring < 2; ring++) {
		run(dp, size, ring, &st);
		if (lf_verbose())
			fprintf(stderr,
				"sim-wire (%s): %zu bytes, %llu frames%s; received %llu, down %llu\n",
				ring ? "ring" : "socket", size, (unsigned long long)want,
				bad ? " then a bad header" : "", (unsigned long long)st.frames_rx,
				(unsigned long long)st.peers_down);
		LF_CHECK(st.refused == 0);
		LF_CHECK(st.frames_rx == want);
		LF_CHECK(st.peers_down == (uint64_t)bad);
	}
	return 0;
}

/* ---- seeds: frames laid out as docs/sim-wire.md's table has them ---- */

static size_t frame(uint8_t *b, uint8_t type, uint8_t opcode, uint32_t dqpn, uint32_t psn,
		    uint64_t raddr, uint32_t rkey, uint64_t len, uint32_t payload)
{
	memset(b, 0, HDR);
	dvx_put_be32(b, 0x44565857u);
	b[4] = 2;
	b[5] = type;
	b[6] = opcode;
	b[11] = 2;		/* RoCE */
	dvx_put_be32(b + 16, dqpn);
	dvx_put_be32(b + 20, 0x100);
	dvx_put_be32(b + 24, psn);
	dvx_put_be32(b + 28, rkey);
	dvx_put_be64(b + 32, raddr);
	dvx_put_be64(b + 40, len);
	dvx_put_be32(b + 112, payload);
	dvx_put_be32(b + 116, psn);
	memset(b + HDR, 0xab, payload);
	return HDR + payload;
}

static void write_seeds(void)
{
	static uint8_t buf[8 * (HDR + MAX_MSG)];
	size_t n;

	/* a WRITE of 8 bytes, a READ, a fetch-add, a SEND of 4 KiB, to QP 0x100 */
	n = frame(buf, 1, 0x08, 0x100, 5, 0x1000, 0x1234, 8, 8);
	lf_seed("write-8", buf, n);
	n += frame(buf + n, 1, 0x10, 0x100, 6, 0x1000, 0x1234, 64, 0);
	n += frame(buf + n, 1, 0x12, 0x100, 7, 0x1000, 0x1234, 8, 0);
	n += frame(buf + n, 1, 0x0a, 0x100, 8, 0, 0, MAX_MSG, MAX_MSG);
	lf_seed("four-requests", buf, n);
	/* answers: an ACK, an ACK with a READ's data, an RNR NAK, a NAK */
	n = frame(buf, 2, 0x08, 0x100, 5, 0, 0, 0, 0);
	n += frame(buf + n, 2, 0x10, 0x100, 6, 0, 0, 64, 64);
	n += frame(buf + n, 3, 0x0a, 0x100, 7, 0, 0, 0, 0);
	n += frame(buf + n, 4, 0x08, 0x100, 8, 0, 0, 0, 0);
	lf_seed("answers", buf, n);
	/* a frame cut short, and one whose payload breaks the rules after a good one */
	n = frame(buf, 1, 0x08, 0x100, 5, 0x1000, 0x1234, 8, 8);
	lf_seed("cut", buf, n - 3);
	n += frame(buf + n, 1, 0x08, 0x100, 6, 0x1000, 0x1234, 16, 8);
	lf_seed("payload-not-length", buf, n);
	/* through the 4 KiB ring: WRITEs of 2000 bytes (the second wraps its end), then a
	 * WRITE that says 8 bytes and carries none (refused: a WRITE carries its message) */
	n = frame(buf, 1, 0x08, 0x100, 5, 0x1000, 0x1234, 2000, 2000);
	n += frame(buf + n, 1, 0x08, 0x100, 6, 0x1000, 0x1234, 2000, 2000);
	n += frame(buf + n, 1, 0x08, 0x100, 7, 0x1000, 0x1234, 2000, 2000);
	lf_seed("ring-wrap", buf, n);
	n += frame(buf + n, 1, 0x08, 0x100, 8, 0x1000, 0x1234, 8, 0);
	lf_seed("write-without-its-payload", buf, n);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	net_hal();
	lf_seed_mode(write_seeds);
	/* the rings' sealed memfd, as a joiner of this host makes it: made once (a join
	 * takes it again, its bytes cleared) */
	mfd = memfd_create("dvx-fuzz-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	LF_CHECK(mfd >= 0 && ftruncate(mfd, SHM_LEN) == 0 &&
		 fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0);
	shm = mmap(NULL, SHM_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	LF_CHECK(shm != MAP_FAILED);
	return 0;
}
