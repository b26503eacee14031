// SPDX-License-Identifier: MIT
/*
 * bench/msg-bench.c - the messaging layer (dvx/msg/msg.h) with and without the QP
 * sharing pool, in one run:
 *
 *  1. message rate (8 B) and bandwidth (64 KiB messages) from rank 0 to rank 1 over
 *     1, 2, 4 ... 64 communicators per peer pair: private QPs (the reference: one QP
 *     set per connection), and the pool with 4 groups at depth multipliers 1 and 4;
 *  2. what a rank holds for 64 communicators to each of 8 peers (a send and a recv
 *     comm per communicator): QPs, CQs, ring memory and state memory, private against
 *     shared, measured on a context that made those connections.
 *
 * Each rank drives its context without ever blocking (posts that find no room are tried
 * again while the rest progresses, as a collective library's proxy thread does). By
 * default one thread drives both ranks and every test() steps the software NIC, so the
 * figures are the CPU cost of the layer and of the model, repeatable on a shared
 * machine; --threads gives each rank its own thread (and the software NIC its progress
 * thread). --dev runs the same over hardware through the linux hal.
 *
 *   msg-bench [--quick] [--msgs N] [--threads] [--dev NAME[,NAME2]] [--help]
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dvx/msg/msg.h>
#include <dvx/hal/sim.h>

#define MB_SEC 1000000000ull
#define MB_TMO (60 * MB_SEC)
#define MB_MAXC 64
#define MB_REQS 16u		/* requests in flight per communicator */
#define MB_BIG (64u << 10)
#define MB_PEERS 8
#define MB_STAR_COMMS 64

struct mb_ctx {
	struct dvx_nic nic;
	struct dvx_msg m;
	void *state, *fifo, *rings;
	uint64_t state_len, fifo_len, rings_len;
	uint8_t *buf;
	uint64_t buf_len;
	struct dvx_mr mr;
};

static struct {
	const struct dvx_hal *hal;
	struct dvx_sim_fabric *fab;
	void *fab_mem;
	int hw;
	int threads;
	char dev[2][64];
	uint64_t msgs;
} B;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * MB_SEC + (uint64_t)ts.tv_nsec;
}

static void *zalloc(uint64_t align, uint64_t len)
{
	void *p = NULL;

	if (posix_memalign(&p, align, len ? len : 64))
		return NULL;
	memset(p, 0, len);
	return p;
}

static int ctx_up(struct mb_ctx *c, const char *dev, const struct dvx_msg_cfg *cfg,
		  uint64_t buf_len)
{
	struct dvx_nic_cfg na;
	struct dvx_msg_cfg mc = *cfg;
	struct dvx_mem_req s, f, g;
	struct dvx_mr_cfg ma;
	int err;

	memset(c, 0, sizeof(*c));
	memset(&na, 0, sizeof(na));
	na.name = dev;
	err = dvx_nic_open(&c->nic, B.hal, &na);
	if (err) {
		fprintf(stderr, "msg-bench: cannot open \"%s\": %s (%d)\n", dev, c->nic.hal.diag.msg,
			err);
		return err;
	}
	mc.nnics = 1;
	mc.nics[0] = &c->nic;
	err = dvx_msg_mem_req(&mc, &s, &f, &g);
	if (err)
		return err;
	c->state_len = s.bytes;
	c->fifo_len = f.bytes;
	c->rings_len = g.bytes;
	c->state = zalloc(64, s.bytes);
	c->fifo = zalloc(4096, f.bytes);
	c->rings = zalloc(4096, g.bytes);
	c->buf_len = buf_len;
	c->buf = zalloc(4096, buf_len);
	if (!c->state || !c->fifo || !c->rings || !c->buf)
		return -ENOMEM;
	err = dvx_msg_init(&c->m, &mc, c->state, s.bytes, c->fifo, f.bytes, c->rings, g.bytes);
	if (err) {
		fprintf(stderr, "msg-bench: dvx_msg_init: %d (%s)\n", err, c->nic.hal.diag.msg);
		return err;
	}
	memset(&ma, 0, sizeof(ma));
	ma.addr = c->buf;
	ma.len = buf_len;
	return dvx_msg_reg_mr(&c->m, 0, &ma, &c->mr);
}

static void ctx_down(struct mb_ctx *c)
{
	if (c->mr.live == DVX_LIVE)
		dvx_msg_dereg_mr(&c->m, &c->mr);
	if (c->m.live == DVX_LIVE)
		dvx_msg_fini(&c->m);
	if (c->nic.open == DVX_LIVE)
		dvx_nic_close(&c->nic);
	free(c->state);
	free(c->fifo);
	free(c->rings);
	free(c->buf);
	memset(c, 0, sizeof(*c));
}

/* rank @a connects @n comms to rank @b, one thread driving both */
static int connect_n(struct mb_ctx *a, struct mb_ctx *b, int n, struct dvx_msg_comm **s,
		     struct dvx_msg_comm **r)
{
	static struct dvx_msg_handle h[MB_STAR_COMMS];
	static struct dvx_msg_comm *l[MB_STAR_COMMS];
	uint64_t end = now_ns() + MB_TMO;
	int i, left, err;

	for (i = 0; i < n; i++) {
		s[i] = r[i] = NULL;
		err = dvx_msg_listen(&b->m, 0, &h[i], &l[i]);
		if (err)
			return err;
	}
	do {
		left = 0;
		for (i = 0; i < n; i++) {
			if (!s[i] && (err = dvx_msg_connect(&a->m, 0, 0, &h[i], &s[i])))
				return err;
			if (!r[i] && (err = dvx_msg_accept(l[i], &r[i])))
				return err;
			left += !s[i] || !r[i];
		}
		if (now_ns() > end)
			return -ETIMEDOUT;
	} while (left);
	for (i = 0; i < n; i++)
		dvx_msg_close(l[i]);
	return 0;
}

/* ------------------------------------------------------------------------------
 * 1. rate and bandwidth
 */
struct flow {
	struct mb_ctx *c;
	struct dvx_msg_comm **comm;
	int ncomm;
	int send;
	uint64_t per_comm;
	uint32_t len;
	uint64_t total, fin, moved;
	struct dvx_msg_req *q[MB_MAXC][MB_REQS];
	uint64_t posted[MB_MAXC], done[MB_MAXC];
	int err;
};

/* one pass over every communicator of a flow: post while the window has room, reap in
 * order; 0, or the error that ends the flow */
static int flow_pass(struct flow *f)
{
	int i;

	for (i = 0; i < f->ncomm; i++) {
		while (f->posted[i] < f->per_comm && f->posted[i] - f->done[i] < MB_REQS) {
			struct dvx_msg_req **slot = &f->q[i][f->posted[i] % MB_REQS];
			uint8_t *b = f->c->buf + ((uint64_t)i * MB_REQS + f->posted[i] % MB_REQS) *
						     f->len;
			int err;

			if (f->send) {
				err = dvx_msg_isend(f->comm[i], b, f->len, 1, &f->c->mr, slot);
			} else {
				void *bufs[1] = { b };
				size_t sz[1] = { f->len };
				uint32_t tg[1] = { 1 };
				struct dvx_mr *mr = &f->c->mr;

				err = dvx_msg_irecv(f->comm[i], 1, bufs, sz, tg, &mr, slot);
			}
			if (err)
				return err;
			if (!*slot)
				break;
			f->posted[i]++;
			f->moved++;
		}
		while (f->done[i] < f->posted[i]) {
			int d = 0, err = dvx_msg_test(f->q[i][f->done[i] % MB_REQS], &d, NULL);

			if (err)
				return err;
			if (!d)
				break;
			f->done[i]++;
			f->fin++;
			f->moved++;
		}
	}
	return 0;
}

struct flows {
	struct flow f[2];
	pthread_barrier_t bar;
	uint64_t t0;
};

static void *flow_thread(void *p)
{
	struct flow *f = p;
	uint64_t end = now_ns() + MB_TMO;

	while (f->fin < f->total && !f->err) {
		uint64_t before = f->moved;

		f->err = flow_pass(f);
		/* nothing moved: the core goes to the software NIC's thread */
		if (f->moved == before)
			sched_yield();
		if (now_ns() > end)
			f->err = -ETIMEDOUT;
	}
	return NULL;
}

/* messages of @len over @n comms per pair with @cfg; messages/s and MB/s into *@rate,
 * *@mbs; 0 or an error */
static int one_rate(const struct dvx_msg_cfg *cfg, int n, uint32_t len, uint64_t msgs,
		    double *rate, double *mbs, uint32_t *qps)
{
	static struct mb_ctx c[2];
	static struct dvx_msg_comm *s[MB_MAXC], *r[MB_MAXC];
	static struct flows F;
	struct dvx_msg_stats st;
	uint64_t t0, t1, per = (msgs + (uint64_t)n - 1) / (uint64_t)n, buf = (uint64_t)MB_MAXC * MB_REQS * len;
	int i, err;

	for (i = 0; i < 2; i++) {
		err = ctx_up(&c[i], B.dev[i], cfg, buf);
		if (err)
			goto out;
	}
	err = connect_n(&c[0], &c[1], n, s, r);
	if (err)
		goto out;
	dvx_msg_get_stats(&c[0].m, &st);
	*qps = st.qps;
	memset(&F, 0, sizeof(F));
	for (i = 0; i < 2; i++) {
		F.f[i].c = &c[i];
		F.f[i].comm = i ? r : s;
		F.f[i].ncomm = n;
		F.f[i].send = !i;
		F.f[i].per_comm = per;
		F.f[i].total = per * (uint64_t)n;
		F.f[i].len = len;
	}
	t0 = now_ns();
	if (B.threads) {
		pthread_t th[2];

		for (i = 0; i < 2; i++)
			pthread_create(&th[i], NULL, flow_thread, &F.f[i]);
		for (i = 0; i < 2; i++)
			pthread_join(th[i], NULL);
	} else {
		/* one thread drives both ranks; each test() steps the software NIC: the
		 * figure is the CPU cost of the layer and the model, without scheduling */
		uint64_t end = t0 + MB_TMO;

		while ((F.f[0].fin < F.f[0].total || F.f[1].fin < F.f[1].total) && !F.f[0].err &&
		       !F.f[1].err) {
			F.f[1].err = flow_pass(&F.f[1]);
			if (!F.f[1].err)
				F.f[0].err = flow_pass(&F.f[0]);
			if (now_ns() > end)
				F.f[0].err = -ETIMEDOUT;
		}
	}
	t1 = now_ns();
	err = F.f[0].err ? F.f[0].err : F.f[1].err;
	if (!err) {
		double sec = (double)(t1 - t0) / 1e9;

		*rate = (double)(per * (uint64_t)n) / sec;
		*mbs = *rate * len / 1e6;
	}
	for (i = 0; i < n; i++) {
		if (s[i])
			dvx_msg_close(s[i]);
		if (r[i])
			dvx_msg_close(r[i]);
	}
out:
	ctx_down(&c[0]);
	ctx_down(&c[1]);
	return err;
}

static void cfg_rate(struct dvx_msg_cfg *c, uint32_t groups, uint32_t mult)
{
	memset(c, 0, sizeof(*c));
	c->max_comms = 2 * MB_MAXC + 4;
	c->max_pending = 32;
	c->max_reqs = MB_REQS;
	c->max_recvs = 1;
	c->groups = groups;
	c->depth_mult = mult;
	if (groups) {
		c->max_shared_sets = 2 * groups;
		c->max_private_sets = 2;
	} else {
		c->max_private_sets = 2 * MB_MAXC;
	}
}

static int table_rate(void)
{
	static const int ncomm[] = { 1, 2, 4, 8, 16, 32, 64 };
	struct dvx_msg_cfg cp, c1, c4;
	unsigned i;

	cfg_rate(&cp, 0, 1);
	cfg_rate(&c1, 4, 1);
	cfg_rate(&c4, 4, 4);
	printf("\n1. rank 0 -> rank 1, %u requests in flight per communicator, %llu messages per "
	       "row\n   private: a QP set per connection (the reference); shared: 4 groups, "
	       "depth x1 or x4, 1 QP\n\n",
	       MB_REQS, (unsigned long long)B.msgs);
	printf("%6s | %27s | %27s | %10s\n", "", "8 B messages, M/s", "64 KiB messages, MB/s",
	       "QPs rank 0");
	printf("%6s | %8s %8s %8s | %8s %8s %8s | %4s %5s\n", "comms", "private", "shr x1",
	       "shr x4", "private", "shr x1", "shr x4", "priv", "shr");
	for (i = 0; i < sizeof(ncomm) / sizeof(ncomm[0]); i++) {
		double r[3] = { 0 }, b[3] = { 0 }, dummy;
		const struct dvx_msg_cfg *cs[3] = { &cp, &c1, &c4 };
		uint32_t q[3] = { 0 }, qd;
		int k, err;

		for (k = 0; k < 3; k++) {
			err = one_rate(cs[k], ncomm[i], 8, B.msgs, &r[k], &dummy, &q[k]);
			if (!err)
				err = one_rate(cs[k], ncomm[i], MB_BIG, B.msgs / 16 + 64, &dummy,
					       &b[k], &qd);
			if (err) {
				fprintf(stderr, "msg-bench: %d comms, config %d: %d\n", ncomm[i], k,
					err);
				return 1;
			}
		}
		printf("%6d | %8.3f %8.3f %8.3f | %8.1f %8.1f %8.1f | %4u %5u\n", ncomm[i],
		       r[0] / 1e6, r[1] / 1e6, r[2] / 1e6, b[0], b[1], b[2], q[0], q[1]);
		fflush(stdout);
	}
	return 0;
}

/* ------------------------------------------------------------------------------
 * 2. what a rank holds for 64 comms x 8 peers
 */
static int star(const struct dvx_msg_cfg *cfg, struct dvx_msg_stats *out, uint64_t *state,
		uint64_t *rings)
{
	static struct mb_ctx c[MB_PEERS + 1];
	static struct dvx_msg_comm *s[MB_PEERS][2][MB_STAR_COMMS], *r[MB_PEERS][2][MB_STAR_COMMS];
	int p, d, i, err = 0;

	memset(s, 0, sizeof(s));
	memset(r, 0, sizeof(r));
	for (p = 0; p <= MB_PEERS && !err; p++) {
		char name[64];

		/* hardware: rank 0 on the first device, the peers on the second */
		if (B.hw)
			snprintf(name, sizeof(name), "%s", B.dev[p ? 1 : 0]);
		else
			snprintf(name, sizeof(name), "sim_%d", p);
		err = ctx_up(&c[p], name, cfg, 4096);
	}
	/* rank 0 and every peer: 64 comms each way */
	for (p = 1; p <= MB_PEERS && !err; p++)
		for (d = 0; d < 2 && !err; d++)
			err = d ? connect_n(&c[p], &c[0], MB_STAR_COMMS, s[p - 1][d], r[p - 1][d]) :
				  connect_n(&c[0], &c[p], MB_STAR_COMMS, s[p - 1][d], r[p - 1][d]);
	if (!err) {
		dvx_msg_get_stats(&c[0].m, out);
		*state = c[0].state_len;
		*rings = c[0].rings_len;
	}
	for (p = 0; p < MB_PEERS; p++)
		for (d = 0; d < 2; d++)
			for (i = 0; i < MB_STAR_COMMS; i++) {
				if (s[p][d][i])
					dvx_msg_close(s[p][d][i]);
				if (r[p][d][i])
					dvx_msg_close(r[p][d][i]);
			}
	for (p = 0; p <= MB_PEERS; p++)
		ctx_down(&c[p]);
	return err;
}

static int table_star(void)
{
	struct dvx_msg_cfg c;
	struct dvx_msg_stats a, b;
	uint64_t sa, sb, ra, rb;
	int err;

	memset(&c, 0, sizeof(c));
	c.max_comms = 2 * MB_PEERS * MB_STAR_COMMS + MB_STAR_COMMS + 8;	/* + listens */
	c.max_pending = 64;
	c.max_reqs = MB_REQS;
	c.max_recvs = 1;
	c.max_private_sets = 2 * MB_PEERS * MB_STAR_COMMS;
	err = star(&c, &a, &sa, &ra);
	if (!err) {
		c.groups = 4;
		c.depth_mult = 4;
		c.max_shared_sets = 2 * MB_PEERS * 4;
		c.max_private_sets = 4;
		err = star(&c, &b, &sb, &rb);
	}
	if (err) {
		fprintf(stderr, "msg-bench: 64 comms x 8 peers: %d\n", err);
		return 1;
	}
	printf("\n2. one rank with 64 communicators to each of 8 peers, each a send and a recv "
	       "comm (1024 comms)\n   shared: 4 groups, depth x4, 1 QP; memory: what the live "
	       "sets use, and the regions sized for the configuration\n\n");
	printf("%-8s %6s %6s %6s %12s %14s %14s\n", "", "QPs", "CQs", "sets", "rings in use",
	       "ring region", "state region");
	printf("%-8s %6u %6u %6u %10.1f MiB %10.1f MiB %10.1f MiB\n", "private", a.qps, a.cqs,
	       a.sets, (double)a.ring_bytes / 1048576.0, (double)ra / 1048576.0,
	       (double)sa / 1048576.0);
	printf("%-8s %6u %6u %6u %10.1f MiB %10.1f MiB %10.1f MiB\n", "shared", b.qps, b.cqs,
	       b.sets, (double)b.ring_bytes / 1048576.0, (double)rb / 1048576.0,
	       (double)sb / 1048576.0);
	return 0;
}

static int fabric_up(int nics, uint32_t qps)
{
	struct dvx_sim_fabric_cfg fc;
	size_t fsz;
	int i;

	if (B.hw)
		return 0;
	dvx_sim_fabric_cfg_default(&fc);
	fc.max_nics = (uint32_t)nics;
	fc.max_qps = qps;
	fc.max_cqs = qps;
	fc.max_mrs = 16;
	fc.max_umems = 16;
	fsz = dvx_sim_fabric_mem_size(&fc);
	B.fab_mem = calloc(1, fsz);
	if (!B.fab_mem || dvx_sim_fabric_init(B.fab_mem, fsz, &fc, &B.fab))
		return 1;
	for (i = 0; i < nics; i++) {
		struct dvx_sim_nic_cfg nc;

		dvx_sim_nic_cfg_default(&nc, (unsigned)i);
		if (dvx_sim_add_nic(B.fab, &nc) < 0)
			return 1;
	}
	B.hal = dvx_sim_hal(B.fab);
	return 0;
}

static void fabric_down(void)
{
	if (B.fab)
		dvx_sim_fini(B.fab);
	free(B.fab_mem);
	B.fab = NULL;
	B.fab_mem = NULL;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: msg-bench [--quick] [--msgs N] [--threads] [--dev NAME[,NAME2]] [--help]\n"
		"  message rate and bandwidth of the messaging layer over 1..64 communicators\n"
		"  per peer pair, private QPs against the sharing pool, and what a rank holds for\n"
		"  64 communicators x 8 peers\n"
		"  --quick     fewer messages\n"
		"  --msgs N    8-byte messages per row (default 200000)\n"
		"  --threads   each rank on its own thread (default: one thread drives both,\n"
		"              stepping the software NIC: repeatable figures)\n"
		"  --dev NAME  hardware through the linux hal (rank 1 on NAME2 if given)\n");
}

int main(int argc, char **argv)
{
	int i, rc;

	B.msgs = 200000;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick")) {
			B.msgs = 20000;
		} else if (!strcmp(argv[i], "--threads")) {
			B.threads = 1;
		} else if (!strcmp(argv[i], "--msgs") && i + 1 < argc) {
			B.msgs = strtoull(argv[++i], NULL, 0);
			if (B.msgs < 64 || B.msgs > 1000000000ull) {
				fprintf(stderr, "msg-bench: --msgs wants 64 .. 1e9\n");
				return 2;
			}
		} else if (!strcmp(argv[i], "--dev") && i + 1 < argc) {
			const char *s = argv[++i], *comma = strchr(s, ',');

			B.hw = 1;
			if (comma) {
				snprintf(B.dev[0], sizeof(B.dev[0]), "%.*s", (int)(comma - s), s);
				snprintf(B.dev[1], sizeof(B.dev[1]), "%s", comma + 1);
			} else {
				snprintf(B.dev[0], sizeof(B.dev[0]), "%s", s);
				snprintf(B.dev[1], sizeof(B.dev[1]), "%s", s);
			}
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (B.hw) {
		B.hal = dvx_hal_linux();
		if (!B.hal) {
			fprintf(stderr, "msg-bench: --dev: this build has no linux hal "
				"(CONFIG_DVX_RDMA=n)\n");
			return 2;
		}
		printf("msg-bench: %s / %s through the linux hal\n", B.dev[0], B.dev[1]);
	} else {
		printf("msg-bench: the software NIC\n");
		snprintf(B.dev[0], sizeof(B.dev[0]), "sim_0");
		snprintf(B.dev[1], sizeof(B.dev[1]), "sim_1");
	}
	/* a fabric sized for each table: every step of the software NIC looks at every QP
	 * slot of its fabric */
	rc = fabric_up(MB_PEERS + 1, 2 * MB_PEERS * MB_STAR_COMMS + 16);
	if (!rc)
		rc = table_star();
	fabric_down();
	if (!rc)
		rc = fabric_up(2, 2 * MB_MAXC + 16);
	if (!rc) {
		if (B.fab && B.threads && dvx_sim_start(B.fab))
			rc = 1;
		if (!rc)
			rc = table_rate();
		if (B.fab && B.threads)
			dvx_sim_stop(B.fab);
	}
	fabric_down();
	return rc;
}
