// SPDX-License-Identifier: MIT
/*
 * bench/ht-bench.c - the host transport (dvx/ht/) against raw RDMA WRITE in one run,
 * from 8 B to 64 MiB:
 *
 *  - latency: a ping-pong of one message between two ranks, half the round trip: the
 *    zero-copy mode (the chunks of a message WRITE with immediate into the peer's
 *    exported buffer, the receives issued before), the copy-based mode (through the
 *    staging slots and their credits) and the reference, raw WRITE with immediate on
 *    a plain QP pair (a receive posted, the CQ polled: the least a notified one-way
 *    message costs);
 *  - bandwidth: a stream of messages of that size with a window of requests per side
 *    (the transports), or of WQEs (raw WRITE, completions polled at the sender).
 *
 * Messages larger than a chunk go as several chunks (zero-copy: 1 MiB; copy-based: the
 * 64 KiB slot) on one channel; a second table gives 64 MiB over 1, 2 and 4 channels.
 * By default one thread drives both ranks, and each progress call steps the software
 * NIC, so the figures are the CPU cost of the transport and of the model (regression
 * figures, comparable between runs on one machine); --dev runs the same over hardware
 * through the linux hal (one device for both ranks, or two).
 *
 *   ht-bench [--quick] [--dev NAME[,NAME2]] [--help]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dvx/hal.h>
#include <dvx/nic/post.h>

#include "../tests/ht/hworld.h"

#define HB_MAX (64ull << 20)
#define HB_ZC_CHUNK (1ull << 20)
#define HB_CB_SLOT (64u << 10)
#define HB_TMO (600 * HW_SEC)
#define HB_RAW_DEPTH 256u
#define HB_RAW_WIN 16u

static struct {
	const struct dvx_hal *hal;
	int hw;
	int quick;
	char dev[2][64];
} B;

static struct hw W;

/* ---- the reference: raw WRITE on a plain QP pair -------------------------------- */

struct raw {
	struct dvx_umem umem;
	struct dvx_cq cq;
	struct dvx_qp qp;
	uint8_t *ring;
};

static struct raw R[2];

static int raw_up(void)
{
	uint64_t wq = DVX_QP_WQ_BYTES(HB_RAW_DEPTH, HB_RAW_DEPTH, DVX_RQ_STRIDE(1));
	uint64_t cq = DVX_CQ_RING_BYTES(2 * HB_RAW_DEPTH), len = cq + wq + 4096;
	int i, err;

	for (i = 0; i < 2; i++) {
		struct raw *x = &R[i];
		struct dvx_umem_cfg ua;
		struct dvx_qp_cfg qa;

		if (posix_memalign((void **)&x->ring, 4096, len))
			return -ENOMEM;
		memset(x->ring, 0, len);
		memset(&ua, 0, sizeof(ua));
		ua.addr = x->ring;
		ua.len = len;
		ua.dmabuf_fd = -1;
		err = dvx_umem_reg(&W.r[i].nic, &ua, &x->umem);
		if (err)
			return err;
		err = dvx_cq_create(&W.r[i].nic,
				    &(struct dvx_cq_cfg){ .depth = 2 * HB_RAW_DEPTH,
							   .ring_umem = &x->umem,
							   .dbr_umem = &x->umem,
							   .dbr_offset = cq + wq },
				    &x->cq);
		if (err)
			return err;
		/* one CQ for sends and receives; the record after the CQ's */
		qa = (struct dvx_qp_cfg){ .sq_depth = HB_RAW_DEPTH, .rq_depth = HB_RAW_DEPTH,
					   .rq_max_sge = 1, .send_cq = &x->cq,
					   .wq_umem = &x->umem, .wq_offset = cq,
					   .dbr_umem = &x->umem, .dbr_offset = cq + wq + 8 };
		err = dvx_qp_create(&W.r[i].nic, &qa, &x->qp);
		if (err)
			return err;
	}
	{
		struct dvx_qp_connect_cfg ca;

		dvx_qp_connect_cfg_init(&ca);
		ca.access = DVX_ACCESS_REMOTE_WRITE;
		return dvx_qp_connect_pair(&R[0].qp, &R[1].qp, &ca);
	}
}

static void raw_down(void)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (R[i].qp.live == DVX_LIVE)
			dvx_qp_destroy(&R[i].qp);
		if (R[i].cq.live == DVX_LIVE)
			dvx_cq_destroy(&R[i].cq);
		if (R[i].umem.live == DVX_LIVE)
			dvx_umem_dereg(&R[i].umem);
		free(R[i].ring);
	}
	memset(R, 0, sizeof(R));
}

/* one completion of rank @i's CQ, stepping the NIC meanwhile: 0, or the error */
static int raw_reap(int i, struct dvx_wc *wc)
{
	uint64_t end = hw_now() + HB_TMO;
	int n;

	for (;;) {
		n = dvx_cq_poll(&R[i].cq, wc);
		if (n > 0)
			return 0;
		if (n < 0)
			return wc->status;
		dvx_hal_nic_progress(&W.r[i].nic.hal);
		if (hw_now() > end)
			return -ETIMEDOUT;
	}
}

/* WRITE with immediate of @size bytes from rank @a's send buffer to @b's receive
 * buffer; the receiver's receive was posted before */
static int raw_one_way(int a, int b, uint64_t size)
{
	struct dvx_wc wc;
	int err;

	err = dvx_qp_post_write_imm(&R[a].qp, 0,
				    &(struct dvx_mlx5_sge){ (uint64_t)(uintptr_t)W.r[a].sbuf,
							    (uint32_t)size, W.r[a].smr.lkey },
				    &(struct dvx_mlx5_raddr){ (uint64_t)(uintptr_t)W.r[b].rbuf,
							      W.r[b].rmr.rkey },
				    0, DVX_POST_SIGNALED);
	if (!err)
		err = raw_reap(b, &wc);	/* the receive: the bytes are there */
	if (!err)
		err = dvx_qp_post_recv(&R[b].qp, 0, 0, 0, 0, 0);
	if (!err)
		err = raw_reap(a, &wc);	/* the sender's completion */
	return err;
}

static int raw_latency(uint64_t size, uint64_t iters, double *us)
{
	uint64_t t0, i;
	int err = 0;

	for (i = 0; i < 2; i++)
		dvx_qp_post_recv(&R[i].qp, 0, 0, 0, 0, 0);
	t0 = hw_now();
	for (i = 0; i < iters && !err; i++) {
		err = raw_one_way(0, 1, size);
		if (!err)
			err = raw_one_way(1, 0, size);
	}
	*us = (double)(hw_now() - t0) / 2e3 / (double)iters;
	/* the two receives still posted go with the QPs */
	return err;
}

static int raw_stream(uint64_t size, uint64_t count, double *mbs)
{
	uint64_t t0, posted = 0, done = 0;
	struct dvx_wc wc;
	int err = 0;

	t0 = hw_now();
	while (done < count && !err) {
		while (posted < count && posted - done < HB_RAW_WIN) {
			err = dvx_qp_post_write(&R[0].qp, 0, (uint64_t)(uintptr_t)W.r[0].sbuf,
						W.r[0].smr.lkey, (uint32_t)size,
						(uint64_t)(uintptr_t)W.r[1].rbuf, W.r[1].rmr.rkey,
						DVX_POST_SIGNALED);
			if (err)
				return err;
			posted++;
		}
		err = raw_reap(0, &wc);
		done++;
	}
	*mbs = (double)(size * count) / ((double)(hw_now() - t0) / 1e9) / 1e6;
	return err;
}

/* ---- the transports --------------------------------------------------------------- */

static struct dvx_ht_rbuf RB[2];	/* [i]: rank i's receive buffer, imported by the other */

static int pair_up(uint32_t mode, uint32_t nch)
{
	struct dvx_ht_ib_cfg c;
	int i, err;

	memset(&c, 0, sizeof(c));
	c.mode = mode;
	c.nchannels = nch;
	c.cb_slot_bytes = HB_CB_SLOT;
	c.rq_depth = 1024;
	err = hw_pair(&W, 0, 1, &c);
	if (!err)
		err = hw_connect(&W, 0, 1, HB_TMO);
	if (err || mode != DVX_HT_ZC)
		return err;
	/* the receive buffers' descriptions, imported once (the ping-pong reuses them) */
	for (i = 0; i < 2 && !err; i++) {
		struct dvx_ht_desc d;

		err = dvx_ht_export(hw_t(&W, i, !i), W.r[i].rbuf, W.buf_len, &W.r[i].rmr, &d);
		if (!err)
			err = dvx_ht_import(hw_t(&W, !i, i), &d, &RB[i]);
	}
	return err;
}

/* @reps messages of @size from @a to @b back to back: 0 or the error */
static int ht_move(int a, int b, uint64_t size, uint64_t chunk, uint32_t nch, uint64_t reps)
{
	static struct hw_side tx, rx;
	struct hw_side *s[2] = { &tx, &rx };

	hw_side_init(&tx, hw_t(&W, a, b), 1, W.r[a].sbuf, &W.r[a].smr, size, chunk, nch, 0);
	hw_side_init(&rx, hw_t(&W, b, a), 0, W.r[b].rbuf, &W.r[b].rmr, size, chunk, nch, 0);
	hw_side_repeat(&tx, reps, &RB[b]);
	hw_side_repeat(&rx, reps, &RB[b]);
	return hw_run(s, 2, HB_TMO);
}

static int ht_latency(uint64_t size, uint64_t chunk, uint64_t iters, double *us)
{
	uint64_t t0 = hw_now(), i;
	int err = 0;

	for (i = 0; i < iters && !err; i++) {
		err = ht_move(0, 1, size, chunk, 1, 1);
		if (!err)
			err = ht_move(1, 0, size, chunk, 1, 1);
	}
	*us = (double)(hw_now() - t0) / 2e3 / (double)iters;
	return err;
}

static int ht_stream(uint64_t size, uint64_t chunk, uint32_t nch, uint64_t count, double *mbs)
{
	uint64_t t0 = hw_now();
	int err = ht_move(0, 1, size, chunk, nch, count);

	*mbs = (double)(size * count) / ((double)(hw_now() - t0) / 1e9) / 1e6;
	return err;
}

/* ---- the run ------------------------------------------------------------------------ */

static const char *size_str(uint64_t s, char *b, size_t n)
{
	if (s >= (1u << 20))
		snprintf(b, n, "%llu MiB", (unsigned long long)(s >> 20));
	else if (s >= 1024)
		snprintf(b, n, "%llu KiB", (unsigned long long)(s >> 10));
	else
		snprintf(b, n, "%llu B", (unsigned long long)s);
	return b;
}

/* 8 B, 64 B, ... 16 MiB, then 64 MiB */
static uint64_t next_size(uint64_t size)
{
	return size * 8 > HB_MAX ? HB_MAX : size * 8;
}

static uint64_t iters_for(uint64_t size)
{
	uint64_t n = (B.quick ? 16ull << 20 : 256ull << 20) / size;

	if (n > (B.quick ? 200u : 2000u))
		n = B.quick ? 200u : 2000u;
	return n < 4 ? 4 : n;
}

static uint64_t count_for(uint64_t size)
{
	uint64_t n = (B.quick ? 64ull << 20 : 512ull << 20) / size;

	if (n > (B.quick ? 2000u : 20000u))
		n = B.quick ? 2000u : 20000u;
	return n < 4 ? 4 : n;
}

static int fail(const char *what, int err)
{
	fprintf(stderr, "ht-bench: %s: %d\n", what, err);
	return 1;
}

static int table1(void)
{
	static double lat[3][10], bw[3][10];
	uint64_t size;
	int k, m, err;

	/* the rows, measured mode by mode (one transport pair at a time) */
	for (m = 0; m < 3; m++) {
		if (m < 2)
			err = pair_up(m ? DVX_HT_CB : DVX_HT_ZC, 1);
		else
			err = raw_up();
		if (err)
			return fail(m == 2 ? "raw QPs" : "transport set-up", err);
		for (size = 8, k = 0; size <= HB_MAX; size = next_size(size), k++) {
			uint64_t chunk = m ? HB_CB_SLOT : HB_ZC_CHUNK;

			if (m == 2)
				err = raw_latency(size, iters_for(size), &lat[m][k]);
			else
				err = ht_latency(size, chunk, iters_for(size), &lat[m][k]);
			if (!err)
				err = m == 2 ? raw_stream(size, count_for(size), &bw[m][k]) :
					       ht_stream(size, chunk, 1, count_for(size), &bw[m][k]);
			if (err)
				return fail("measuring", err);
			if (size == HB_MAX)
				break;
		}
		if (m < 2)
			hw_unpair(&W, 0, 1);
		else
			raw_down();
	}
	printf("%-8s  %-32s  %-32s\n", "", "latency, us (one way)", "bandwidth, MB/s");
	printf("%-8s  %10s %10s %10s  %10s %10s %10s\n", "size", "ZC", "CB", "raw WRITE", "ZC",
	       "CB", "raw WRITE");
	for (size = 8, k = 0; size <= HB_MAX; size = next_size(size), k++) {
		char b[32];

		printf("%-8s  %10.2f %10.2f %10.2f  %10.1f %10.1f %10.1f\n", size_str(size, b, sizeof(b)),
		       lat[0][k], lat[1][k], lat[2][k], bw[0][k], bw[1][k], bw[2][k]);
		if (size == HB_MAX)
			break;
	}
	return 0;
}

/* 64 MiB over 1, 2 and 4 channels, both modes */
static int table2(void)
{
	uint32_t nch;
	int m, err;

	printf("\n%-8s  %10s %10s   (64 MiB messages, MB/s)\n", "channels", "ZC", "CB");
	for (nch = 1; nch <= 4; nch *= 2) {
		double bw[2];

		for (m = 0; m < 2; m++) {
			err = pair_up(m ? DVX_HT_CB : DVX_HT_ZC, nch);
			if (!err)
				err = ht_stream(HB_MAX, m ? HB_CB_SLOT : HB_ZC_CHUNK, nch,
						B.quick ? 2 : 8, &bw[m]);
			hw_unpair(&W, 0, 1);
			if (err)
				return fail("channels", err);
		}
		printf("%-8u  %10.1f %10.1f\n", nch, bw[0], bw[1]);
	}
	return 0;
}

static int usage(FILE *f)
{
	fprintf(f,
		"usage: ht-bench [--quick] [--dev NAME[,NAME2]] [--help]\n"
		"  the host transport's zero-copy and copy-based modes against raw RDMA WRITE,\n"
		"  latency and bandwidth from 8 B to 64 MiB, two ranks driven by one thread\n"
		"  --quick     fewer iterations\n"
		"  --dev NAME  hardware through the linux hal: one mlx5 device used by both ranks\n"
		"              (NAME,NAME2: one each); default: the software NIC\n");
	return 0;
}

int main(int argc, char **argv)
{
	const char *devs[2];
	int i, err, rc;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--help") || !strcmp(a, "-h"))
			return usage(stdout);
		if (!strcmp(a, "--quick")) {
			B.quick = 1;
			continue;
		}
		/* --dev NAME, or NAME,NAME2: rank 1 takes the second when there is one */
		if (strcmp(a, "--dev") || i + 1 == argc ||
		    sscanf(argv[++i], "%63[^,],%63s", B.dev[0], B.dev[1]) < 1)
			return usage(stderr) + 2;
		if (!B.dev[1][0])
			memcpy(B.dev[1], B.dev[0], sizeof(B.dev[1]));
		B.hw = 1;
	}
	B.hal = B.hw ? dvx_hal_linux() : NULL;
	if (B.hw && !B.hal) {
		fprintf(stderr, "ht-bench: no linux hal in this build (rdma-core was not found: "
			"CONFIG_DVX_RDMA=n), so no --dev\n");
		return 2;
	}
	devs[0] = B.dev[0];
	devs[1] = B.dev[1];
	err = hw_init_hal(&W, 2, HB_MAX, B.hal, B.hw ? devs : NULL);
	if (err) {
		fprintf(stderr, "ht-bench: set-up: %d (%s)\n", err, W.r[0].nic.hal.diag.msg);
		hw_fini(&W);
		return 1;
	}
	hw_fill(W.r[0].sbuf, HB_MAX, 1);
	hw_fill(W.r[1].sbuf, HB_MAX, 2);
	if (B.hw)
		printf("ht-bench: %s / %s through the linux hal, one thread drives both ranks\n",
		       B.dev[0], B.dev[1]);
	else
		printf("ht-bench: the software NIC, one thread drives both ranks and steps it\n");
	printf("ZC chunks of 1 MiB, CB 8 slots of 64 KiB per channel; windows of %u requests "
	       "(raw: %u WQEs)%s\n\n", HW_WIN, HB_RAW_WIN, B.quick ? "; --quick" : "");
	rc = table1();
	if (!rc)
		rc = table2();
	err = hw_fini(&W);
	if (err && !rc)
		rc = fail("teardown", err);
	return rc;
}
