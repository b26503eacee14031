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
 * Checks: the join succeeds and nothing is refused; the frames the input holds are
 * counted by the harness's own reading of the rules (magic "DVXW", version 2, type 1..4,
 * payload at most max_msg and 0 or the length): while they hold, every complete frame
 * is received (frames_rx) and the connection stays up; the first header that breaks
 * them closes the connection (peers_down 1) and no frame after it is received; nothing
 * in this process is touched that the frames do not name (ASan); at the end the fabric
 * is released without error.
 */
#include <unistd.h>

#include <dvx/byteorder.h>
#include <dvx/hal/host.h>
#include <dvx/hal/sim.h>

#include "lf.h"

#define MAX_MSG 4096u
#define HDR 120u
#define MAX_INPUT (128u << 10)

struct world {
	void *mem, *wmem;
	struct dvx_sim_fabric *fab;
	struct dvx_hal_sock_addr addr;
	int fd;			/* rank 1: the harness */
};

static const struct dvx_hal *hal;

static void world_init(struct world *w)
{
	struct dvx_sim_wire_cfg wc = { .rank = 0, .nranks = 2, .max_msg = MAX_MSG };
	struct dvx_sim_fabric_cfg fc;
	struct dvx_sim_nic_cfg nc;
	struct dvx_hal_sock_addr bind;
	struct dvx_hal_pollfd pf;
	uint8_t hello[16], back[16];
	size_t len, got = 0, n;
	int i;

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
	dvx_put_be32(hello + 4, 2);
	dvx_put_be32(hello + 8, 1);
	dvx_put_be32(hello + 12, 2);
	pf.fd = w->fd;
	pf.events = DVX_HAL_POLL_OUT;
	LF_CHECK(dvx_hal_sock_poll(hal, &pf, 1, 1000000000ull) == 1);
	{
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
	LF_CHECK(dvx_get_be32(back) == 0x44565857u && dvx_get_be32(back + 4) == 2 &&
		 dvx_get_be32(back + 8) == 0 && dvx_get_be32(back + 12) == 2);
}

static void world_fini(struct world *w)
{
	dvx_hal_sock_close(hal, w->fd);
	LF_CHECK(dvx_sim_fini(w->fab) == 0);
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
		    pay > MAX_MSG || (pay && pay != len)) {
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

int LLVMFuzzerTestOneInput(const uint8_t *dp, size_t size)
{
	struct dvx_sim_wire_stats st;
	struct world w;
	uint64_t want, last = ~0ull;
	size_t off = 0, n;
	int bad, quiet = 0, i;

	if (size > MAX_INPUT)
		return 0;
	want = count_frames(dp, size, &bad);
	world_init(&w);
	for (i = 0; i < 100000 && quiet < 64; i++) {
		if (off < size) {
			struct dvx_hal_iov iov = { dp + off, size - off };

			n = 0;
			if (!dvx_hal_sock_send(hal, w.fd, &iov, 1, &n))
				off += n;
			else if (bad)
				off = size;	/* closed after the bad header: the rest is moot */
		}
		dvx_sim_step(w.fab);
		drain(w.fd);
		LF_CHECK(dvx_sim_wire_get_stats(w.fab, &st) == 0);
		if (st.peers_down)
			break;
		if (off == size && st.frames_rx == last)
			quiet++;
		else
			quiet = 0;
		last = st.frames_rx;
	}
	LF_CHECK(dvx_sim_wire_get_stats(w.fab, &st) == 0);
	if (lf_verbose())
		fprintf(stderr, "sim-wire: %zu bytes, %llu frames%s; received %llu, down %llu\n",
			size, (unsigned long long)want, bad ? " then a bad header" : "",
			(unsigned long long)st.frames_rx, (unsigned long long)st.peers_down);
	LF_CHECK(st.refused == 0);
	LF_CHECK(st.frames_rx == want);
	LF_CHECK(st.peers_down == (uint64_t)bad);
	world_fini(&w);
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
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	hal = dvx_hal_host();
	lf_seed_mode(write_seeds);
	return 0;
}
