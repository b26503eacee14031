// SPDX-License-Identifier: MIT
/*
 * tests/fuzz/lf/sim_wire.c - libFuzzer harness: the wire's frames as another process
 * sends them (hal/sim/wire.c's receive buffer and frame checks, and what it hands to
 * exec.c: requests to the responder half, answers to the requester half;
 * docs/sim-wire.md, "What travels").
 *
 * The world, fresh for every input: a software NIC (dvx_sim_nic_cfg_default(0)) in a
 * fabric with a wire, rank 0 of 2 (max_msg 4 KiB), listening on an abstract UNIX name of
 * this process; the harness joins it as rank 1 through a socket of its own (the hello,
 * and rank 0's hello back), then writes the whole input into that socket, as the bytes
 * rank 1 sends, and steps the fabric until it has read them all. What rank 0 writes
 * back (answers) is read and thrown away.
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
 * payload is only copied, never decided on, so the counts stay those of the input.
 *
 * Checks: the join succeeds and nothing is refused; the frames the input holds are
 * counted by the harness's own reading of the rules (magic "DVXW", version 2, type 1..4,
 * payload at most max_msg and 0 or the length, a WRITE's or SEND's payload its whole
 * length): while they hold, every complete frame
 * is received (frames_rx) and the connection stays up; the first header that breaks
 * them closes the connection (peers_down 1) and no frame after it is received; nothing
 * in this process is touched that the frames do not name (ASan); at the end the fabric
 * is released without error.
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

struct world {
	void *mem, *wmem;
	struct dvx_sim_fabric *fab;
	struct dvx_hal_sock_addr addr;
	int fd;			/* rank 1: the harness */
	uint8_t *shm;		/* ring mode: the rings' mapping, else NULL */
	struct sim_ring tx;	/* rank 1 -> rank 0: the input */
	struct sim_ring rx;	/* rank 0 -> rank 1: answers, thrown away */
};

static const struct dvx_hal *hal;

static void world_init(struct world *w, int ring)
{
	struct dvx_sim_wire_cfg wc = { .rank = 0, .nranks = 2, .max_msg = MAX_MSG,
				       .ring_bytes = ring ? RING : 0 };
	struct dvx_sim_fabric_cfg fc;
	struct dvx_sim_nic_cfg nc;
	struct dvx_hal_sock_addr bind;
	struct dvx_hal_pollfd pf;
	uint8_t hello[16], back[16];
	size_t len, got = 0, n;
	int i, mfd = -1;

	memset(w, 0, sizeof(*w));
	dvx_sim_fabric_cfg_default(&fc);
	fc.max_nics = 1;
	len = dvx_sim_fabric_mem_size(&fc);
	w->mem = calloc(1, len);
	LF_CHECK(w->mem != NULL);
	LF_CHECK(dvx_sim_fabric_init(w->mem, len, &fc, &w->fab) == 0);
	dvx_sim_nic_cfg_default(&nc, 0);
	LF_CHECK(dvx_sim_add_nic(w->fab, &nc) == 0);
	len = dvx_sim_wire_mem_size(&wc);
	w->wmem = malloc(len);
	LF_CHECK(w->wmem != NULL);
	LF_CHECK(dvx_sim_wire_init(w->fab, &wc, w->wmem, len) == 0);
	dvx_sim_nic_cfg_default(&nc, 1);
	LF_CHECK(dvx_sim_wire_add_remote_nic(w->fab, 1, &nc) == 0);
	memset(&bind, 0, sizeof(bind));
	bind.family = DVX_HAL_SOCK_ABSTRACT;
	snprintf(bind.path, sizeof(bind.path), "dvx-fuzz-wire-%d", (int)getpid());
	LF_CHECK(dvx_sim_wire_listen(w->fab, &bind, &w->addr) == 0);
	/* join as rank 1: the hello, then rank 0's back (it answers as it steps) */
	LF_CHECK(dvx_hal_sock_connect(hal, &w->addr, &w->fd) == 0);
	dvx_put_be32(hello, 0x44565857u);
	dvx_put_be32(hello + 4, ring ? 0x40000002u : 2);
	dvx_put_be32(hello + 8, 1);
	dvx_put_be32(hello + 12, 2);
	pf.fd = w->fd;
	pf.events = DVX_HAL_POLL_OUT;
	LF_CHECK(dvx_hal_sock_poll(hal, &pf, 1, 1000000000ull) == 1);
	if (ring) {
		/* a sealed memfd of the rings with the hello, as a joiner of this host */
		mfd = memfd_create("dvx-fuzz-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
		LF_CHECK(mfd >= 0 && ftruncate(mfd, SHM_LEN) == 0 &&
			 fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0);
		w->shm = mmap(NULL, SHM_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
		LF_CHECK(w->shm != MAP_FAILED);
		dvx_sim_ring_attach(&w->tx, w->shm, w->shm + 2 * SIM_RING_HDR, RING);
		dvx_sim_ring_attach(&w->rx, w->shm + SIM_RING_HDR, w->shm + 2 * SIM_RING_HDR + RING,
				    RING);
		LF_CHECK(dvx_hal_sock_send_fds(hal, w->fd, hello, sizeof(hello), &mfd, 1, &n) == 0);
		LF_CHECK(n >= 1);
		if (n < sizeof(hello)) {
			struct dvx_hal_iov iov = { hello + n, sizeof(hello) - n };
			size_t m = 0;

			LF_CHECK(dvx_hal_sock_send(hal, w->fd, &iov, 1, &m) == 0 &&
				 n + m == sizeof(hello));
		}
		close(mfd);
	} else {
		struct dvx_hal_iov iov = { hello, sizeof(hello) };

		LF_CHECK(dvx_hal_sock_send(hal, w->fd, &iov, 1, &n) == 0 && n == 16);
	}
	for (i = 0; i < 10000 && got < sizeof(back); i++) {
		dvx_sim_step(w->fab);
		n = 0;
		if (!dvx_hal_sock_recv(hal, w->fd, back + got, sizeof(back) - got, &n))
			got += n;
	}
	LF_CHECK(got == sizeof(back));
	LF_CHECK(dvx_get_be32(back) == 0x44565857u &&
		 dvx_get_be32(back + 4) == (ring ? 0x40000002u : 2) &&
		 dvx_get_be32(back + 8) == 0 && dvx_get_be32(back + 12) == 2);
}

static void world_fini(struct world *w)
{
	dvx_hal_sock_close(hal, w->fd);
	LF_CHECK(dvx_sim_fini(w->fab) == 0);
	if (w->shm)
		munmap(w->shm, SHM_LEN);
	free(w->wmem);
	free(w->mem);
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

static void drain(int fd)
{
	uint8_t sink[4096];
	size_t n;

	while (!dvx_hal_sock_recv(hal, fd, sink, sizeof(sink), &n) && n)
		;
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
static void run(const uint8_t *dp, size_t size, int bad, int ring, struct dvx_sim_wire_stats *st)
{
	struct world w;
	uint64_t last = ~0ull;
	size_t off = 0, n;
	int quiet = 0, i;

	world_init(&w, ring);
	for (i = 0; i < 100000 && quiet < 64; i++) {
		if (off < size && ring) {
			uint64_t room = 0, got;
			uint8_t sink[4096];

			LF_CHECK(dvx_sim_ring_room(&w.tx, &room) == 0);
			n = size - off < room ? size - off : room;
			LF_CHECK(dvx_sim_ring_write(&w.tx, dp + off, n) == 0);
			off += n;
			(void)dvx_sim_ring_publish(&w.tx);
			while (!dvx_sim_ring_read(&w.rx, sink, sizeof(sink), &got) && got)
				;
			scribble(&w, dp, size, off, (uint8_t)i);
		} else if (off < size) {
			struct dvx_hal_iov iov = { dp + off, size - off };

			n = 0;
			if (!dvx_hal_sock_send(hal, w.fd, &iov, 1, &n))
				off += n;
			else if (bad)
				off = size;	/* closed after the bad header: the rest is moot */
		}
		dvx_sim_step(w.fab);
		drain(w.fd);
		LF_CHECK(dvx_sim_wire_get_stats(w.fab, st) == 0);
		if (st->peers_down)
			break;
		if (off == size && st->frames_rx == last)
			quiet++;
		else
			quiet = 0;
		last = st->frames_rx;
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
		run(dp, size, bad, ring, &st);
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
	hal = dvx_hal_host();
	lf_seed_mode(write_seeds);
	return 0;
}
